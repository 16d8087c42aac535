// What happens after a failure is detected: the recovery policy's decision
// carried out (restart in place, hot/free/cold spares, WAIT_REPAIR,
// PREEMPT_LOWER with deferred victims, REQUEUE), placement (built-in or the
// outside callback, every choice checked), re-placement delays, jobs that
// retirement left unplaceable, and the scheduler's host (dispatch).
#pragma once

#include <algorithm>
#include <cstdint>

#include "replica_state.hpp"

namespace acesim {

/// What a recovery decided that the engine carries out.
struct Recovery {
    enum Kind : std::uint8_t {
        Decided,  ///< carried out already (a resume, a wait for repair, an outside scheduler's report)
        Restart,  ///< a restart in place (on the nodes it holds)
        Requeue,  ///< back to the queue (its nodes released)
        Shrink,   ///< an elastic job goes on with the nodes it holds
        Wait,     ///< it waits for nodes
    };
    Kind kind;
    bool lost_nodes = false;  ///< Shrink: it lost nodes since it last ran (it reconfigures)
};

class RecoveryActions {
public:
    /// The state it reads, and the engine that sequences it.
    RecoveryActions(const SimulationInput& in, const Plans& plans, std::uint32_t replica,
                    const ReplicaDraws& draws, const EventKernel& kernel, NodePool& pool,
                    Scheduler& scheduler, RecoveryPolicy& policy, Ledger& ledger, JobStates& jobs,
                    Reservation& reservation, std::vector<Levels>& levels, OutsideScheduler& outside,
                    JobDraws& job_draws, const JobDue& due, KernelRequests& requests, ReplicaEngine& engine)
        : in_(in),
          plans_(plans),
          replica_(replica),
          draws_(draws),
          kernel_(kernel),
          pool_(pool),
          scheduler_(scheduler),
          policy_(policy),
          ledger_(ledger),
          jobs_(jobs),
          reservation_(reservation),
          levels_(levels),
          outside_(outside),
          job_draws_(job_draws),
          due_(due),
          requests_(requests),
          engine_(engine) {
        for (const JobPlan& p : plans_.jobs) widest_ = std::max(widest_, p.nodes);
    }

    // --- the scheduler's host (see Scheduler::dispatch) ----------------------
    std::uint32_t reserved(std::uint32_t j) const { return pool_.reserved(j); }
    std::uint32_t acquiring(std::uint32_t j) const { return pool_.acquiring(j); }
    bool place(std::uint32_t j, bool recovering);
    /// A recovering job that has its nodes resumes (after its re-placement
    /// delay); a job from the queue starts.
    void start(std::uint32_t j, double t);
    bool capacity_left() const { return !pool_.enabled() || pool_.capacity_left(); }
    void reserve(std::uint32_t head, double t) { reservation_.begin(head, t, pool_); }
    std::int64_t next_backfill() { return reservation_.next(pool_); }
    void backfilled(std::uint32_t j) { reservation_.started(j, pool_); }
    void unreserve() { reservation_.finish(); }
    void dispatch(double t) {
        if (!outside_.enabled) scheduler_.dispatch(t, *this);  // else the outside scheduler's
    }

    /// Job j's fault was detected at t: the policy decides. What it decided
    /// is carried out here (Decided), or by the engine: a restart in place, a
    /// requeue (its nodes released), a shrink, a wait for nodes (then waiting()).
    Recovery recover(std::uint32_t j, double t);
    /// Job j waits for nodes after its recovery (JobTransitions::wait_for_nodes):
    /// it preempts lower-priority jobs when its policy says so (unless it
    /// can never be placed), then the scheduler runs.
    void waiting(std::uint32_t j, double t);
    /// An outside scheduler decides: job j's failure detected at t is reported.
    void report_failure(std::uint32_t j, double t);
    /// After a deferred preemption fell through: the preemptor looks again.
    void retry_preemption(std::int32_t by, double t);
    void preempt_lower(std::uint32_t j, double t);
    void preempt(std::uint32_t v, std::uint32_t by, double t);
    /// Victim v is preempted at t (its run rolled back, its nodes released, queued
    /// again); its lost work and restart are `by`'s churn (by >= 0).
    void release_victim(std::uint32_t v, std::int32_t by, double t);
    /// The place callback's choice: 1 placed, 0 declined (built-in choice),
    /// -1 not enough nodes available now.
    int place_outside(std::uint32_t j, bool recovering);
    bool take_for_recovery(std::uint32_t j);
    void resume(std::uint32_t j, double t);
    // unplaceable jobs (retirement left too few nodes)
    bool give_up_if_unplaceable(std::uint32_t j, double t);
    void give_up_unplaceable(double t);
    void abandon(std::uint32_t j, double t);

private:
    /// EASY: drops the candidates a start of job j from the queue would take from the head.
    void keep_candidates(std::uint32_t j);

    PlacementCandidates candidates_;
    std::uint32_t widest_ = 0;  ///< the most nodes any job needs
    const SimulationInput& in_;
    const Plans& plans_;
    std::uint32_t replica_;
    const ReplicaDraws& draws_;
    const EventKernel& kernel_;
    NodePool& pool_;
    Scheduler& scheduler_;
    RecoveryPolicy& policy_;
    Ledger& ledger_;
    JobStates& jobs_;
    Reservation& reservation_;
    std::vector<Levels>& levels_;
    OutsideScheduler& outside_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
    ReplicaEngine& engine_;
};

}  // namespace acesim
