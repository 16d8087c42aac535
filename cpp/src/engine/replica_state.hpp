// The state of one replica that the engine's parts share: the input, the
// random streams, the event kernel, the node pool, the scheduler, the
// recovery policy, the ledger and every job's state. The parts
// (JobTransitions, FailureRouting, RecoveryActions, CheckpointWrites,
// ElasticResize) each see it through
// ReplicaParts and call one another through it; only ReplicaEngine runs the
// event loop.
#pragma once

#include <cstdint>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/fleet_model.hpp"
#include "acesim/simulator.hpp"
#include "draws.hpp"
#include "job_state.hpp"
#include "job_states.hpp"
#include "kernel.hpp"
#include "ledger.hpp"
#include "node_pool.hpp"
#include "plans.hpp"
#include "recovery_policy.hpp"
#include "reservation.hpp"
#include "scheduler.hpp"
#include "storage.hpp"

namespace acesim {

/// An outside scheduler's run: it places, preempts and re-places jobs itself;
/// the model reports what needs a decision instead of deciding.
struct OutsideScheduler {
    bool enabled = false;
    bool report_checkpoints = false;
    std::vector<ModelEvent> outbox;
    void report(ModelEvent e) { outbox.push_back(std::move(e)); }
    /// When the outside scheduler asked for them: job j keeps a checkpoint
    /// at `progress` at t (durable, or a tier's).
    void report_checkpoint(std::uint32_t j, double t, double progress, bool durable) {
        if (report_checkpoints)
            report({t, t, ModelEvent::Checkpoint, static_cast<std::int32_t>(j), -1, {}, progress, durable});
    }
};

struct ReplicaState {
    ReplicaState(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views,
                 std::uint32_t replica, std::uint64_t max_events, JobRecord* rows, SimulationOutput& out);

    const SimulationInput& in_;
    const Plans& plans_;
    std::uint32_t replica_;
    JobRecord* rows_;
    const bool checking_;  ///< check the bookkeeping after every event
    ReplicaDraws draws_;
    EventKernel kernel_;
    NodePool pool_;
    Scheduler scheduler_;
    RecoveryPolicy policy_;
    Ledger ledger_;
    JobStates jobs_;
    std::size_t jobs_done_ = 0;     ///< done, or closed as unplaceable
    Reservation reservation_;       ///< EASY backfill (enabled under it, with a fleet)
    const bool limits_;             ///< some job has a time limit (else none is looked at)
    std::vector<double> limit_at_;  ///< with limits_: each running run's time limit (wall time; inf: none)
    /// Per job when Plans::levels is set (asynchronous or tiered checkpoints,
    /// slow failures); else empty and the synchronous transitions run.
    std::vector<Levels> levels_;
    StorageChannel storage_;    ///< shared checkpoint storage (enabled with a fleet's storage_bandwidth)
    OutsideScheduler outside_;  ///< FleetModel: decisions come from outside
    JobDraws job_draws_;        ///< the draws of the jobs' own laws
    JobDue due_;                ///< when each job's next event is
    KernelRequests requests_;   ///< what the parts ask of the kernel (served by the engine)
    /// Routine checkpoint transitions are applied ahead of the clock
    /// (JobTransitions::run_ahead); set by ReplicaEngine::run where nothing
    /// else reads a running job's progress between its own events.
    bool run_ahead_ = false;
    DueEvent current_{};  ///< the event being handled
};

class JobTransitions;
class FailureRouting;
class RecoveryActions;
class CheckpointWrites;
class ElasticResize;

/// What each part of the engine works with: the replica's state (by
/// reference, under the same names) and the other parts.
struct ReplicaParts {
    explicit ReplicaParts(ReplicaState& s)
        : in_(s.in_),
          plans_(s.plans_),
          replica_(s.replica_),
          checking_(s.checking_),
          draws_(s.draws_),
          kernel_(s.kernel_),
          pool_(s.pool_),
          scheduler_(s.scheduler_),
          policy_(s.policy_),
          ledger_(s.ledger_),
          jobs_(s.jobs_),
          jobs_done_(s.jobs_done_),
          reservation_(s.reservation_),
          limits_(s.limits_),
          limit_at_(s.limit_at_),
          levels_(s.levels_),
          storage_(s.storage_),
          outside_(s.outside_),
          job_draws_(s.job_draws_),
          due_(s.due_),
          requests_(s.requests_),
          run_ahead_(s.run_ahead_),
          current_(s.current_) {}

    void wire(JobTransitions* lifecycle, FailureRouting* failures, RecoveryActions* recovery,
              CheckpointWrites* checkpoints, ElasticResize* elastic) {
        lifecycle_ = lifecycle;
        failures_ = failures;
        recovery_ = recovery;
        checkpoints_ = checkpoints;
        elastic_ = elastic;
    }

    const SimulationInput& in_;
    const Plans& plans_;
    const std::uint32_t replica_;
    const bool checking_;
    ReplicaDraws& draws_;
    EventKernel& kernel_;
    NodePool& pool_;
    Scheduler& scheduler_;
    RecoveryPolicy& policy_;
    Ledger& ledger_;
    JobStates& jobs_;
    std::size_t& jobs_done_;
    Reservation& reservation_;
    const bool limits_;
    std::vector<double>& limit_at_;
    std::vector<Levels>& levels_;
    StorageChannel& storage_;
    OutsideScheduler& outside_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
    const bool& run_ahead_;
    const DueEvent& current_;
    JobTransitions* lifecycle_ = nullptr;
    FailureRouting* failures_ = nullptr;
    RecoveryActions* recovery_ = nullptr;
    CheckpointWrites* checkpoints_ = nullptr;
    ElasticResize* elastic_ = nullptr;
};

}  // namespace acesim
