// A job's lifecycle as events drive it: phase ends, checkpoints, starts,
// completion, interruption and its accounting, the job-level failure clock
// and the drain checkpoints of planned maintenance. The arithmetic itself is
// lifecycle.hpp's and checkpoint_levels.hpp's (shared with the batch path);
// this part adds the draws, the event log and each job's next event (asked
// of the kernel through KernelRequests). Checkpoint writes are
// CheckpointWrites'; elastic resizing is ElasticResize's; the engine routes
// a job's event here or to them (ReplicaEngine::handle_job).
#pragma once

#include <cstdint>

#include "replica_state.hpp"

namespace acesim {

class JobTransitions {
public:
    /// The state it reads.
    JobTransitions(const SimulationInput& in, const Plans& plans, EventKernel& kernel, NodePool& pool,
                   Scheduler& scheduler, Ledger& ledger, JobStates& jobs, Reservation& reservation,
                   bool limits, std::vector<double>& limit_at, std::vector<Levels>& levels,
                   const StorageChannel& storage, OutsideScheduler& outside, JobDraws& job_draws,
                   const JobDue& due, KernelRequests& requests, const bool& run_ahead,
                   const DueEvent& current)
        : in_(in),
          plans_(plans),
          kernel_(kernel),
          pool_(pool),
          scheduler_(scheduler),
          ledger_(ledger),
          jobs_(jobs),
          reservation_(reservation),
          limits_(limits),
          limit_at_(limit_at),
          levels_(levels),
          storage_(storage),
          outside_(outside),
          job_draws_(job_draws),
          due_(due),
          requests_(requests),
          run_ahead_(run_ahead),
          current_(current) {}

    // --- the end of a job's phase (the engine routes it: ReplicaEngine::phase_end)
    /// Its submission is due at t: it is queued.
    void submit(std::uint32_t j, double t);
    /// Its start (init + load) ends at t: it computes. Returns true when it
    /// must first take its nodes back (begin_compute).
    bool end_start(std::uint32_t j, double t);
    /// Its compute ends at t (synchronous checkpoints): its write begins.
    void begin_checkpoint(std::uint32_t j, double t);
    /// Its fault is detected at t (or its planned stop takes effect).
    void end_detection(std::uint32_t j, double t);
    /// Its re-placement delay ends at t: it starts.
    void end_replacement_delay(std::uint32_t j, double t);
    /// Its reconfiguration onto all its nodes ends at t: it computes again.
    void end_reconfiguration(std::uint32_t j, double t);
    /// j is no longer in a slow failure (found, stopped or done).
    void end_slow_failure(std::uint32_t j);
    /// A start (init + load) begins at t; `reconfigure`: an elastic job's
    /// shrink adds its reconfiguration to the start.
    void begin_start(std::uint32_t j, double t, double reconfigure = 0.0);
    /// EASY: a run of job j begins at t (its estimated end).
    [[gnu::noinline]] void note_start(std::uint32_t j, double t);
    /// Returns true when an elastic job's nodes came back during a start or
    /// a write: it takes them first (ElasticResize::take_nodes_back), and
    /// nothing else is done.
    [[nodiscard]] bool begin_compute(std::uint32_t j, double t);
    /// Planned maintenance ahead on j's nodes: end its segment early so that
    /// an extra checkpoint is durable by the window's start (its write, and
    /// with an asynchronous persist its persist, of the mean).
    void plan_drain_checkpoint(std::uint32_t j, double t);
    /// Job j is done at t (its nodes released; the engine dispatches them;
    /// an elastic job ended its narrow run first: ElasticResize::end_narrow).
    void complete(std::uint32_t j, double t);
    /// Job j's run reached its time limit at t and was interrupted
    /// (ReplicaEngine::interrupt): it is queued again (the engine then asks
    /// whether it can ever be placed, and dispatches).
    void stop_at_time_limit(std::uint32_t j, double t);
    /// Ends the current phase early (failure or preemption); returns the
    /// compute it rolls back. With checkpoint levels it rolls back to the
    /// newest checkpoint that survives the loss of `lost_nodes` of the job's
    /// nodes (kAllNodes: a stop, only the durable checkpoint survives).
    /// The engine sequences it (ReplicaEngine::interrupt): a storage
    /// transfer in flight is cut off before, a narrow run ended after.
    double interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes = kAllNodes);
    void charge_restart_churn(std::uint32_t j, double overhead);
    /// Job j begins a compute phase (synchronous checkpoints): its routine
    /// transitions (each compute end and its write's begin, each write's
    /// end and the next compute's begin) are applied now, up to its
    /// completion's write end, its next job-level failure, the horizon, a
    /// refused save draw or the stretch's look-ahead bound, and its next
    /// event is scheduled after them. What they did is undone by catch_up
    /// when something stops the job earlier; results are those of stepping
    /// them one by one.
    ///
    /// The look-ahead bound keeps a job's cost linear in its checkpoints.
    /// Without it, every (re)start applied all the job's remaining
    /// checkpoints (to its end when it has no job-level failures) and every
    /// node failure or preemption, which that bound does not know, restored
    /// the stretch's start and applied everything up to now again: failures
    /// x remaining checkpoints. A stretch now applies at most `look_ahead`
    /// transitions; when that is what stopped it, the job's heap entry at
    /// the next transition's time continues the stretch (RunAhead::resumes:
    /// the engine calls resume, it is not a logical event and counts in
    /// heap_events only) from the state applied so far, never restored. The
    /// bound is kFirstLookAhead at a compute phase's begin and doubles with
    /// each continuation up to kLastLookAhead: a stop k transitions after
    /// the compute phase's begin finds at most min(k + kFirstLookAhead,
    /// kLastLookAhead) applied in the current stretch, which catch_up
    /// discards and redoes up to now (O(k) whatever the job's width or
    /// failure rate, and a bounded share of a long run's work), and a long
    /// stretch costs one heap entry per kLastLookAhead transitions. The transitions, their draws and
    /// their arithmetic are the same, in the same order: every result is
    /// bit for bit that of the unbounded run-ahead and of stepping; only
    /// heap_events moves. (A held node's next failure, known ahead, was not
    /// used as the bound: preemptions, repairs and other jobs' recoveries
    /// stop a job too, and it costs a pass over the job's nodes per start.)
    void run_ahead(std::uint32_t j);
    /// Job j's entry that continues its stretch is due (RunAhead::resumes):
    /// the stretch goes on from the state applied so far with twice the
    /// look-ahead.
    void resume(std::uint32_t j);
    /// Job j's state at the current event (transitions applied ahead of it
    /// are taken back; a no-op when none are).
    void catch_up(std::uint32_t j);
    /// A stretch's first look-ahead bound, in transitions (a compute and a
    /// write are two).
    static constexpr std::uint16_t kFirstLookAhead = 16;
    /// The largest: one heap entry per this many transitions of a long stretch.
    static constexpr std::uint16_t kLastLookAhead = 256;
    void enqueue(std::uint32_t j, double t);
    void wait_for_nodes(std::uint32_t j, double t);

private:
    /// Applies j's routine transitions due before `bound` (or at it, when
    /// `at_bound`), at most `most` of them; returns how many. `capped` is
    /// set when `most` stopped it (the next one is due by the bound).
    std::uint32_t apply_routine(std::uint32_t j, double bound, bool at_bound, std::uint32_t most,
                                bool& capped);
    /// The same with checkpoint levels: a persist's end, a compute's end at
    /// a boundary of any level (and its write's begin, or a wait for the
    /// persist in flight), a write's end and the next compute's begin.
    std::uint32_t apply_leveled_routine(std::uint32_t j, double bound, bool at_bound, std::uint32_t most,
                                        bool& capped);
    /// A stretch from j's current state with the look-ahead bound in its RunAhead.
    void stretch(std::uint32_t j);
    /// Where j's drain checkpoint for its nodes' next maintenance window
    /// begins (due_.drain_point; -inf without planned maintenance): a
    /// compute phase begun before it that contains it is cut there
    /// (plan_drain_checkpoint), in a stretch as step by step.
    double drain_point(std::uint32_t j) const;
    /// Keeps what apply_routine changes in j's RunAhead (a stretch begins),
    /// or with `restore` puts it back (catch_up).
    void stretch_start(std::uint32_t j, bool restore);
    /// The latest a routine transition of j may be applied ahead (included).
    double routine_bound(std::uint32_t j) const;
    const SimulationInput& in_;
    const Plans& plans_;
    EventKernel& kernel_;
    NodePool& pool_;
    Scheduler& scheduler_;
    Ledger& ledger_;
    JobStates& jobs_;
    Reservation& reservation_;
    bool limits_;
    std::vector<double>& limit_at_;
    std::vector<Levels>& levels_;
    const StorageChannel& storage_;
    OutsideScheduler& outside_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
    const bool& run_ahead_;
    const DueEvent& current_;
};

}  // namespace acesim
