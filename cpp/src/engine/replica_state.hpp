// The state of one replica: the input, the random streams, the event
// kernel, the node pool, the scheduler, the recovery policy, the ledger and
// every job's state, with the services each owns. The engine's parts
// (JobTransitions, FailureRouting, RecoveryActions, CheckpointWrites,
// ElasticResize) are each given the state they read; they never hold one
// another: they return outcomes that ReplicaEngine, which alone runs the
// event loop and schedules the kernel, carries out.
#pragma once

#include <algorithm>
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

/// Shared storage: job j's durable checkpoints move bytes through it.
inline bool uses_storage(const StorageChannel& storage, const SimulationInput& in, std::uint32_t j) {
    return storage.enabled() && in.options(j).checkpoint_bytes > 0.0;
}

/// An outside scheduler's nodes for job j: those it holds and is not given
/// are released (into `released`, in its order); the rest are taken, in order.
inline void hold_exactly(NodePool& pool, std::uint32_t j, const std::vector<std::uint32_t>& nodes,
                         std::vector<std::uint32_t>& released) {
    released.clear();
    for (std::uint32_t n : pool.nodes_of(j))
        if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) released.push_back(n);
    for (std::uint32_t n : released) pool.detach(j, n);
    const NodeList kept = pool.nodes_of(j);
    std::vector<std::uint32_t> taken;
    for (std::uint32_t n : nodes)
        if (std::find(kept.begin(), kept.end(), n) == kept.end()) taken.push_back(n);
    for (std::uint32_t n : taken) pool.take_chosen(j, n);
}

/// A drain checkpoint's step (its write, then its persist) that would end
/// at `end`, after its planned end `due`, ends at `due` instead when the
/// checkpoint is on time (`on_time`) and the step's draw takes no longer
/// than its mean: it ends as planned whatever the rounding. A late or long
/// step ends when it ends (JobTransitions::plan_drain_checkpoint).
inline bool ends_as_planned(double end, double due, bool on_time, double drawn, double mean) {
    return on_time && drawn <= mean && due < end;
}

/// Elastic job j, `failing` of its nodes about to be detached, would hold
/// at least its min_gpus (it may go on with them: ElasticResize::shrink).
inline bool can_shrink(const SimulationInput& in, const Plans& plans, const NodePool& pool, std::uint32_t j,
                       std::size_t failing) {
    const std::uint32_t min_gpus = in.options(j).min_gpus;
    if (min_gpus == 0) return false;
    const std::size_t held = pool.nodes_of(j).size() - failing;
    return held > 0 && held * plans.jobs[j].gpus_per_node >= min_gpus;
}

/// The engine that sequences the parts (FailureRouting and RecoveryActions
/// hold it for what they raise in the middle of a transition; no part holds
/// another).
class ReplicaEngine;

}  // namespace acesim
