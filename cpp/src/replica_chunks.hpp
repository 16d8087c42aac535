// The parallel run of a simulate() call's replicas: chunks of replicas over
// threads, their tables cut into segments and joined in replica order.
#pragma once

#include <cstdint>
#include <functional>

#include "acesim/records.hpp"
#include "acesim/simulation_input.hpp"
#include "acesim/simulation_output.hpp"

namespace acesim {

/// Runs one replica: its job rows into `rows` (the run's jobs, in place),
/// its other rows appended to `out`.
using ReplicaRun = std::function<void(std::uint32_t replica, JobRecord* rows, SimulationOutput& out)>;

/// Runs replicas first_replica + [0, in.replicas) with `run` on in.threads
/// threads and returns their rows in replica order: the same output for any
/// thread count. Polls in.cancel between replicas. An exception of a
/// replica propagates (the lowest failing replica's), once every thread
/// stopped.
SimulationOutput run_replicas(const SimulationInput& in, const ReplicaRun& run);

}  // namespace acesim
