// The front door: validates the input, makes the plans every replica
// shares, and hands the replicas to the path that runs them (the event
// heap, or the single-job kernel where nothing needs the heap).
#include "acesim/simulator.hpp"

#include <optional>
#include <vector>

#include "engine/plans.hpp"
#include "engine/replica_engine.hpp"
#include "input_validation.hpp"
#include "replica_chunks.hpp"
#include "single_job_path.hpp"

namespace acesim {

namespace {

std::vector<DistributionView> make_views(const SimulationInput& in) {
    std::vector<DistributionView> views;
    views.reserve(in.distributions.size());
    for (const Distribution& d : in.distributions) views.push_back(d.view());
    return views;
}

}  // namespace

SimulationOutput simulate(const SimulationInput& in) {
    validate(in);
    const std::uint64_t max_events = in.event_limit();
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    std::optional<SingleJobPath> kernel;
    if (runs_on_single_job_kernel(in)) kernel.emplace(in, plans, views);
    return run_replicas(in, [&](std::uint32_t replica, JobRecord* rows, SimulationOutput& out) {
        if (kernel && kernel->run_replica(replica, max_events, rows, out)) return;
        ReplicaEngine run(in, plans, views, replica, max_events, rows, out);
        run.run();
    });
}

SimulationOutput simulate_batch(const SimulationInput& in, bool cuda) {
    validate(in);
    validate_batch(in);
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    return SingleJobPath(in, plans, views).run_batch(in.event_limit(), cuda);
}

}  // namespace acesim
