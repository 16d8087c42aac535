// A job's lifecycle as events drive it: phase ends, checkpoints, starts,
// completion, interruption and its accounting, the job-level failure clock
// and the drain checkpoints of planned maintenance. The arithmetic itself is
// lifecycle.hpp's (shared with the batch path); this part adds the draws,
// the event log and the scheduling of each job's next event.
#pragma once

#include <cstdint>

#include "replica_state.hpp"

namespace acesim {

class JobTransitions : public ReplicaParts {
public:
    using ReplicaParts::ReplicaParts;

    /// Job j's event is due: a job-level failure or the end of its phase.
    void handle_job(std::uint32_t j);
    void on_phase_end(std::uint32_t j, double t);
    void end_checkpoint(std::uint32_t j, double t);
    /// With checkpoint levels: the write in progress ends (a tier's, or the
    /// durable's snapshot or synchronous write).
    void end_leveled_write(std::uint32_t j, double t);
    /// The background persist of j's last snapshot ends at t: it is durable.
    void end_persist(std::uint32_t j, double t);
    /// j's final checkpoint is durable at t: it is done.
    void finish_at_checkpoint(std::uint32_t j, double t);
    /// j's checkpoint became durable at t: a preemption deferred to it
    /// happens now. `at_boundary`: at the end of a write (nothing is lost);
    /// else in the middle of the run. Returns true when j was preempted.
    bool preempt_if_deferred(std::uint32_t j, double t, bool at_boundary);
    /// The wall time of j's next timed transition (its phase end; with
    /// checkpoint levels also its persist's end and a slow failure's detection).
    double phase_due(std::uint32_t j) const;
    /// With checkpoint levels: compute reaches its boundary at t.
    void reach_leveled_boundary(std::uint32_t j, double t);
    /// With checkpoint levels: the boundary's write begins at t.
    void begin_leveled_write(std::uint32_t j,
                             double t);  /// j is no longer in a slow failure (found, stopped or done).
    void end_slow_failure(std::uint32_t j);
    /// An elastic job stops running narrow (it failed, stopped or finished):
    /// it waits no more for its missing nodes; a stop (`keep_claims` false)
    /// also drops its claims on nodes under repair and cold spares on their way.
    void end_narrow(std::uint32_t j, bool keep_claims);
    /// Shared storage: j's durable checkpoints move bytes through it.
    bool uses_storage(std::uint32_t j) const {
        return storage_.enabled() && in_.jobs[j].checkpoint_bytes > 0.0;
    }
    /// j's transfer (1: its phase's, 2: its persist's) begins at t.
    void begin_transfer(std::uint32_t j, double t, std::uint32_t kind);
    /// j's transfer ends at t (or is cut off: `finished` false).
    void end_transfer(std::uint32_t j, double t, bool finished);
    /// The transfers in flight end when the storage's share says: their jobs' events move.
    void reschedule_transfers();
    /// Shared storage: the fixed part of j's phase ended at t; true when its
    /// transfer begins now (the phase goes on until it ends).
    bool phase_transfer_begins(
        std::uint32_t j, double t);  /// A start (init + load) begins at t; `reconfigure`: an elastic job's
    /// shrink adds its reconfiguration to the start.
    void begin_start(std::uint32_t j, double t, double reconfigure = 0.0);
    /// EASY: a run of job j begins at t (its estimated end).
    [[gnu::noinline]] void note_start(std::uint32_t j, double t);
    void begin_compute(std::uint32_t j, double t);
    /// Planned maintenance ahead on j's nodes: end its segment early so that
    /// an extra checkpoint's write ends by the window's start.
    void plan_drain_checkpoint(std::uint32_t j, double t);
    void complete(std::uint32_t j, double t);
    /// Job j's run reached its time limit at t: stopped and queued again.
    void stop_at_time_limit(std::uint32_t j, double t);
    /// Ends the current phase early (failure or preemption); returns the
    /// compute it rolls back. With checkpoint levels it rolls back to the
    /// newest checkpoint that survives the loss of `lost_nodes` of the job's
    /// nodes (kAllNodes: a stop, only the durable checkpoint survives).
    double interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes = kAllNodes);
    void charge_restart_churn(std::uint32_t j, double overhead);
    void schedule_job(std::uint32_t j);
    void enqueue(std::uint32_t j, double t);
    void wait_for_nodes(std::uint32_t j, double t);
    void log(std::uint32_t j, EventKind kind, double t) { ledger_.log(j, kind, t, jobs_[j].life.committed); }
    void renew_failure_clock(std::uint32_t j);
    double draw_job(std::uint32_t j, Purpose purpose, std::uint32_t dist);
    /// The estimated length of a run of job j started now (the EASY estimate).
    [[gnu::noinline]] double run_estimate(std::uint32_t j) const;
    /// Job j holds no node any more.
    void release_nodes(std::uint32_t j);
};

}  // namespace acesim
