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

class CheckpointWrites : public ReplicaParts {
public:
    using ReplicaParts::ReplicaParts;

    /// The write in progress ends at t (after its transfer, if any).
    void end_checkpoint(std::uint32_t j, double t);
    /// With checkpoint levels: compute reaches its boundary at t.
    void reach_leveled_boundary(std::uint32_t j, double t);
    /// With checkpoint levels: the boundary's write begins at t.
    void begin_leveled_write(std::uint32_t j, double t);
    /// The background persist of j's last snapshot ends at t (its fixed
    /// part, then its transfer): the checkpoint is durable.
    void end_persist(std::uint32_t j, double t);

    /// Shared storage: j's durable checkpoints move bytes through it.
    bool uses_storage(std::uint32_t j) const {
        return storage_.enabled() && in_.options(j).checkpoint_bytes > 0.0;
    }
    /// Shared storage: the fixed part of j's phase (a durable write, a load)
    /// ended at t; true when its transfer begins now (the phase goes on
    /// until it ends).
    bool phase_transfer_begins(std::uint32_t j, double t);
    /// j's transfer ends at t (or is cut off: `finished` false).
    void end_transfer(std::uint32_t j, double t, bool finished);

private:
    /// With checkpoint levels: the write in progress ends (a tier's, or the
    /// durable's snapshot or synchronous write).
    void end_leveled_write(std::uint32_t j, double t);
    /// j's final checkpoint is durable at t: it is done.
    void finish_at_checkpoint(std::uint32_t j, double t);
    /// j's checkpoint became durable at t: a preemption deferred to it
    /// happens now. `at_boundary`: at the end of a write (nothing is lost);
    /// else in the middle of the run. Returns true when j was preempted.
    bool preempt_if_deferred(std::uint32_t j, double t, bool at_boundary);
    /// j's transfer (1: its phase's, 2: its persist's) begins at t.
    void begin_transfer(std::uint32_t j, double t, std::uint32_t kind);
    /// The transfers in flight end when the storage's shares say: their jobs' events move.
    void reschedule_transfers();
};

}  // namespace acesim
