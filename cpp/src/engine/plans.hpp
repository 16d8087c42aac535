// Per-job quantities computed once per simulate() call and shared by every
// replica (and by the event-heap and batch paths).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "acesim/checkpoint_levels.hpp"
#include "acesim/simulator.hpp"

namespace acesim {

/// Quantities shared by every job of one size and one set of laws (most
/// jobs of a large workload share a handful of these).
struct JobProfile {
    double mtbf;       ///< mean time to failure for the job's size
    double save_mean;  ///< mean checkpoint write
    double restart;    ///< mean init + load
    double young;
    double daly;
};

/// Per-job quantities that do not change between replicas.
struct JobPlan {
    double interval;              ///< the starting interval
    std::uint32_t nodes;          ///< nodes the job occupies (1 for jobs smaller than a node)
    std::uint32_t gpus_per_node;  ///< GPUs it uses on each of them
    std::uint32_t profile;        ///< index into the JobProfile table
};

/// Plans for every job and the profiles they share.
struct Plans {
    std::vector<JobPlan> jobs;
    std::vector<JobProfile> profiles;
    /// Per job, when some job checkpoints asynchronously or in tiers or a
    /// cause is a slow failure (else empty: the synchronous transitions).
    std::vector<LevelPlan> levels;
    /// Job indices in submission order (ties by index), shared by every
    /// replica: the event kernel releases submissions from it.
    std::vector<std::uint32_t> arrivals;
    /// The lowest job priority (INT32_MAX without jobs): a job of that
    /// priority can preempt nothing, which a policy's view knows without a scan.
    std::int32_t lowest_priority = std::numeric_limits<std::int32_t>::max();
    const JobProfile& of(std::size_t j) const { return profiles[jobs[j].profile]; }
};

/// Some job needs the checkpoint-level transitions (checkpoint_levels.hpp).
bool uses_levels(const SimulationInput& in);

/// Seconds job j's checkpoint takes alone on the shared storage (0: none).
double storage_transfer(const SimulationInput& in, std::size_t j);

/// Resolves every job's interval rule and groups jobs by profile (throws
/// std::invalid_argument naming the job when a rule gives no interval).
Plans make_plans(const SimulationInput& in);

/// Throws std::invalid_argument naming the first invalid field of `in`.
void validate(const SimulationInput& in);
/// validate() without the jobs: the fleet, the policy, the causes and the
/// run's options (a FleetModel before any job is submitted).
void validate_setup(const SimulationInput& in);
/// The same for job j alone (a job submitted to a FleetModel).
void validate_job(const SimulationInput& in, std::size_t j);
/// Job j's plan (with its levels), appended: a job submitted to a FleetModel.
void add_plan(Plans& plans, const SimulationInput& in, std::size_t j);

}  // namespace acesim
