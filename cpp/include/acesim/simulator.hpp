// The event-heap simulator of the job lifecycle (DESIGN section 4).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "acesim/distribution_table.hpp"
#include "acesim/records.hpp"

namespace acesim {

/// How a job's checkpoint interval is chosen.
enum class IntervalRule : std::uint32_t {
    Fixed = 0,  ///< JobSpec::checkpoint_interval seconds of compute
    Young = 1,  ///< sqrt(2 C M) with C the mean save, M the failure mean for the job's size
    Daly = 2,   ///< Daly's higher-order interval
};

/// A job as the core sees it; distributions are indices into
/// SimulationInput::distributions (shared by many jobs).
struct JobSpec {
    std::uint32_t gpus = 8;
    double work = 0.0;                 ///< seconds of productive compute
    double checkpoint_interval = 0.0;  ///< seconds of compute between checkpoints (Fixed)
    IntervalRule rule = IntervalRule::Fixed;
    std::uint32_t init = 0;  ///< distribution index
    std::uint32_t save = 0;
    std::uint32_t load = 0;
    double submit = 0.0;
    std::int32_t priority = 0;
};

constexpr std::uint32_t kNoDistribution = std::numeric_limits<std::uint32_t>::max();

/// Everything one simulate() call needs.
struct SimulationInput {
    std::vector<Distribution> distributions;
    std::vector<JobSpec> jobs;
    std::uint32_t job_failures = kNoDistribution;  ///< job-level inter-failure law, or none
    std::uint32_t gpus_per_node = 8;
    std::uint32_t replicas = 1;
    std::uint32_t first_replica = 0;  ///< replica ids first_replica + r
    std::uint64_t seed = 0;
    double horizon = std::numeric_limits<double>::infinity();
    bool record_events = false;
    unsigned threads = 1;          ///< 0: one per hardware core
    std::uint64_t max_events = 0;  ///< per replica; 0: kDefaultMaxEvents
};

/// A run that processes more events than this in one replica stops with an
/// error instead of hanging (a job that can never finish needs a horizon).
constexpr std::uint64_t kDefaultMaxEvents = 1ull << 30;

/// Results of all replicas, rows ordered by replica then job (trace and
/// events by replica then time).
struct SimulationOutput {
    std::vector<JobRecord> jobs;
    std::vector<FleetRecord> fleet;
    std::vector<TraceRecord> trace;
    std::vector<EventRecord> events;
};

/// Validates `input` (throws std::invalid_argument naming the field) and
/// runs every replica. Replicas are independent, so they spread over threads
/// and the result is identical for any thread count.
SimulationOutput simulate(const SimulationInput& input);

/// The interval a job uses after resolving its rule against the failure law.
double resolve_interval(const SimulationInput& input, const JobSpec& job);

}  // namespace acesim
