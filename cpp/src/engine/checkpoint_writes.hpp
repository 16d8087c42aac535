// Checkpoint writes as events drive them: the end of a synchronous write;
// with checkpoint levels (asynchronous persists, tiers) a boundary reached,
// a tier's or the durable's write, a persist's end; a preemption deferred to
// a victim's durable checkpoint; and the transfers of durable checkpoints
// (writes, persists, loads) through the shared storage. The arithmetic is
// checkpoint_levels.hpp's, shared with the batch path.
#pragma once

#include <cstdint>

#include "replica_state.hpp"

namespace acesim {

/// What the end of a write or of a persist leaves for the engine to do.
struct WriteOutcome {
    enum Kind : std::uint8_t {
        Handled,  ///< nothing: carried out here (its next event asked)
        Compute,  ///< it computes next (JobTransitions::begin_compute)
        Done,     ///< its final checkpoint is durable: it is done
        Preempt,  ///< a preemption deferred to this checkpoint: `by` preempts it now
    };
    WriteOutcome(Kind k, std::uint32_t preemptor = 0) : kind(k), by(preemptor) {}  // NOLINT: a Kind converts
    Kind kind;
    std::uint32_t by;  ///< Preempt: the job that preempts it
};

class CheckpointWrites {
public:
    /// The state it reads.
    CheckpointWrites(const SimulationInput& in, const Plans& plans, const Scheduler& scheduler,
                     Ledger& ledger, JobStates& jobs, std::vector<Levels>& levels, StorageChannel& storage,
                     OutsideScheduler& outside, JobDraws& job_draws, const JobDue& due,
                     KernelRequests& requests)
        : in_(in),
          plans_(plans),
          scheduler_(scheduler),
          ledger_(ledger),
          jobs_(jobs),
          levels_(levels),
          storage_(storage),
          outside_(outside),
          job_draws_(job_draws),
          due_(due),
          requests_(requests) {}

    /// The write in progress ends at t (after its transfer, if any).
    [[nodiscard]] WriteOutcome end_checkpoint(std::uint32_t j, double t);
    /// With checkpoint levels: compute reaches its boundary at t.
    void reach_leveled_boundary(std::uint32_t j, double t);
    /// With checkpoint levels: the boundary's write begins at t.
    void begin_leveled_write(std::uint32_t j, double t);
    /// The background persist of j's last snapshot ends at t (its fixed
    /// part, then its transfer): the checkpoint is durable.
    [[nodiscard]] WriteOutcome end_persist(std::uint32_t j, double t);

    /// Shared storage: the fixed part of j's phase (a durable write, a load)
    /// ended at t; true when its transfer begins now (the phase goes on
    /// until it ends).
    bool phase_transfer_begins(std::uint32_t j, double t);
    /// j's transfer ends at t (or is cut off: `finished` false).
    void end_transfer(std::uint32_t j, double t, bool finished);

private:
    /// With checkpoint levels: the write in progress ends (a tier's, or the
    /// durable's snapshot or synchronous write).
    WriteOutcome end_leveled_write(std::uint32_t j, double t);
    /// j's checkpoint became durable at t: a preemption deferred to it
    /// happens now (the engine carries it out). `at_boundary`: at the end of
    /// a write (nothing is lost); else in the middle of the run. Returns the
    /// preemptor, or -1 when j is not preempted.
    std::int32_t preempt_if_deferred(std::uint32_t j, double t, bool at_boundary);
    /// j's transfer (1: its phase's, 2: its persist's) begins at t.
    void begin_transfer(std::uint32_t j, double t, std::uint32_t kind);
    /// The transfers in flight end when the storage's shares say: their jobs' events move.
    void reschedule_transfers();
    const SimulationInput& in_;
    const Plans& plans_;
    const Scheduler& scheduler_;
    Ledger& ledger_;
    JobStates& jobs_;
    std::vector<Levels>& levels_;
    StorageChannel& storage_;
    OutsideScheduler& outside_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
};

}  // namespace acesim
