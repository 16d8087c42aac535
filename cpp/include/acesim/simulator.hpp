// The front door of the event-heap simulator of the job lifecycle (DESIGN
// section 4) on an optional fleet of nodes with recovery policies (section
// 6): simulate() and simulate_batch(). The input's types are in
// simulation_input.hpp and specs.hpp, the result's in simulation_output.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "acesim/cancel.hpp"
#include "acesim/errors.hpp"
#include "acesim/simulation_input.hpp"
#include "acesim/simulation_output.hpp"
#include "acesim/specs.hpp"

namespace acesim {

/// Validates `input` (throws std::invalid_argument naming the field) and
/// runs every replica. Replicas are independent, so they spread over threads
/// and the result is identical for any thread count. An exception thrown by
/// a callback propagates unchanged (from the lowest failing replica).
SimulationOutput simulate(const SimulationInput& input);

/// Batch Monte Carlo of the single-job model: every job of `input` (fleet
/// disabled, no policy) is a grid point simulated alone (its streams are
/// those of job 0), for every replica, without an event heap, on CPU
/// threads (or, with `cuda`, one CUDA thread per run: same code, same streams;
/// float results within the ulp bound of the device's math). Rows are
/// ordered by job then replica and equal, bit for bit,
/// the rows simulate() gives for that job alone with the same seed.
SimulationOutput simulate_batch(const SimulationInput& input, bool cuda = false);

/// Job j's mean time to failure under the input's failure models.
double job_mtbf(const SimulationInput& input, std::size_t j);

}  // namespace acesim
