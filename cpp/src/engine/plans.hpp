// Per-job quantities computed once per simulate() call and shared by every
// replica (and by the event-heap and batch paths).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
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

/// The starting interval of a job under its rule, for its profile: its
/// own for a fixed interval, else Young's or Daly's for its profile (its
/// work when it never fails), at most its work. make_plans refuses a job
/// for which it is not usable.
inline double starting_interval(const JobSpec& job, const JobProfile& profile) {
    if (job.rule == IntervalRule::Fixed) return job.checkpoint_interval;
    if (!std::isfinite(profile.mtbf)) return job.work;  // no failures: one checkpoint at the end
    return std::min(job.rule == IntervalRule::Daly ? profile.daly : profile.young, job.work);
}

/// Per-job quantities that do not change between replicas (12 bytes a job:
/// the starting interval is its spec's or its profile's, starting_interval).
struct JobPlan {
    std::uint32_t nodes;          ///< nodes the job occupies (1 for jobs smaller than a node)
    std::uint32_t gpus_per_node;  ///< GPUs it uses on each of them
    std::uint32_t profile;        ///< index into the JobProfile table
};

/// Job indices in submission order (ties by index). Most workloads arrive
/// sorted: their order is the identity and is held as a count alone (a
/// column of 4 bytes a job otherwise: 55 MB for 13.8M jobs).
class Arrivals {
public:
    Arrivals() = default;
    /// n jobs in index order.
    explicit Arrivals(std::size_t n) : count_(n) {}
    /// Jobs in the given order.
    explicit Arrivals(std::vector<std::uint32_t> order) : order_(std::move(order)), count_(order_.size()) {}
    std::size_t size() const { return count_; }
    std::uint32_t operator[](std::size_t i) const {
        return order_.empty() ? static_cast<std::uint32_t>(i) : order_[i];
    }

private:
    std::vector<std::uint32_t> order_;  ///< empty: the identity
    std::size_t count_ = 0;
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
    Arrivals arrivals;
    /// The lowest job priority (INT32_MAX without jobs): a job of that
    /// priority can preempt nothing, which a policy's view knows without a scan.
    std::int32_t lowest_priority = std::numeric_limits<std::int32_t>::max();
    const JobProfile& of(std::size_t j) const { return profiles[jobs[j].profile]; }
    /// Job j's starting interval (`specs`: the run's jobs).
    double interval(const JobTable& specs, std::size_t j) const { return starting_interval(specs[j], of(j)); }
};

/// Some job needs the checkpoint-level transitions (checkpoint_levels.hpp).
bool uses_levels(const SimulationInput& in);

/// Seconds job j's checkpoint takes alone on the shared storage (0: none).
double storage_transfer(const SimulationInput& in, std::size_t j);

/// Resolves every job's interval rule and groups jobs by profile (throws
/// std::invalid_argument naming the job when a rule gives no interval:
/// validate_interval, input_validation.hpp).
Plans make_plans(const SimulationInput& in);

/// Job j's plan (with its levels), appended: a job submitted to a FleetModel.
void add_plan(Plans& plans, const SimulationInput& in, std::size_t j);

}  // namespace acesim
