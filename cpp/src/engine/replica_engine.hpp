// The engine of one replica: it pops events from the kernel and routes them
// to its parts (JobTransitions: a job's lifecycle; FailureRouting: failures,
// node returns, maintenance; RecoveryActions: the recovery policy carried
// out, placement and the scheduler's host; CheckpointWrites: writes,
// persists and storage transfers; ElasticResize: elastic jobs' shrinks and
// grows), then checks the invariants.
// Only the engine runs the loop; the parts share the replica's state.
#pragma once

#include <cstdint>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/simulator.hpp"
#include "checkpoint_writes.hpp"
#include "elastic_resize.hpp"
#include "failure_routing.hpp"
#include "job_transitions.hpp"
#include "recovery_actions.hpp"
#include "replica_state.hpp"

namespace acesim {

class ReplicaEngine : private ReplicaState {
public:
    ReplicaEngine(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views,
                  std::uint32_t replica, std::uint64_t max_events, JobRecord* rows, SimulationOutput& out);
    ReplicaEngine(const ReplicaEngine&) = delete;
    ReplicaEngine& operator=(const ReplicaEngine&) = delete;

    /// Runs the replica to the horizon (or until every job is done) and writes its rows.
    void run();

private:
    void check_invariants() const;

    JobTransitions lifecycle_;
    FailureRouting failures_;
    RecoveryActions recovery_;
    CheckpointWrites checkpoints_;
    ElasticResize elastic_;
};

}  // namespace acesim
