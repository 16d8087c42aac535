#include "plans.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "acesim/analytic.hpp"
#include "input_validation.hpp"

namespace acesim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A job's levels, most durable tier first (replication descending, then as given).
LevelPlan level_plan(const SimulationInput& in, std::size_t j, double interval) {
    const JobOptions& s = in.options(j);
    LevelPlan p{};
    p.persist = s.persist;
    p.persist_mean = s.persist == kNoDistribution
                         ? 0.0
                         : in.distributions[s.persist].mean(in.jobs[j].gpus) + storage_transfer(in, j);
    p.tiers = s.tier_count;
    validate_tier_intervals(in, j, interval);
    for (std::uint32_t k = 0; k < s.tier_count; ++k) {
        const CheckpointTierSpec& t = in.tiers[s.tier_first + k];
        p.tier[k] = TierPlan{t.interval, t.save, t.load, t.replication, 0u};
    }
    std::stable_sort(p.tier, p.tier + p.tiers,
                     [](const TierPlan& a, const TierPlan& b) { return a.replication > b.replication; });
    return p;
}

}  // namespace

bool uses_levels(const SimulationInput& in) {
    for (const JobOptions& s : in.job_options)
        if (s.persist != kNoDistribution || s.tier_count > 0 || s.min_gpus > 0 ||
            (s.checkpoint_bytes > 0.0 && in.fleet.enabled && in.fleet.storage_bandwidth > 0.0))
            return true;
    for (const CauseSpec& c : in.causes)
        if (c.slowdown > 0.0) return true;
    return false;
}

double storage_transfer(const SimulationInput& in, std::size_t j) {
    const double bytes = in.options(j).checkpoint_bytes;
    const double bandwidth = in.fleet.enabled ? in.fleet.storage_bandwidth : 0.0;
    return bytes > 0.0 && bandwidth > 0.0 ? bytes / bandwidth : 0.0;
}

double job_mtbf(const SimulationInput& in, std::size_t j) {
    const JobSpec& job = in.jobs[j];
    const double gpus = job.gpus;
    double rate = 0.0;
    const std::uint32_t law = job_failure_law(in, j);
    if (law != kNoDistribution) rate += 1.0 / in.distributions[law].mean(gpus);
    if (in.fleet.enabled && in.fleet.node_failures != kNoDistribution) {
        const double nodes = std::ceil(gpus / in.gpus_per_node);
        const double lemon = 1.0 + in.fleet.lemon_fraction * (in.fleet.lemon_factor - 1.0);
        rate += nodes * lemon / in.distributions[in.fleet.node_failures].mean(in.gpus_per_node);
    }
    return rate > 0.0 ? 1.0 / rate : kInf;
}

namespace {

JobProfile profile_of(const SimulationInput& in, std::size_t j) {
    const JobSpec& s = in.jobs[j];
    const double gpus = s.gpus;
    JobProfile p{};
    p.mtbf = job_mtbf(in, j);
    p.save_mean = in.distributions[s.save].mean(gpus);
    p.restart = in.distributions[s.init].mean(gpus) + in.distributions[s.load].mean(gpus);
    // Shared storage: a synchronous durable write and a load from the durable
    // also move the checkpoint's bytes (at least their time alone on it).
    const double transfer = storage_transfer(in, j);
    if (transfer > 0.0) {
        if (in.options(j).persist == kNoDistribution) p.save_mean += transfer;
        p.restart += transfer;
    }
    p.young = young_interval(p.save_mean, p.mtbf);
    p.daly = daly_interval(p.save_mean, p.mtbf);
    return p;
}

struct ProfileKey {
    std::uint32_t gpus, save, init, load, law;
    double transfer;  ///< a shared storage's transfer of its checkpoint (0: none)
    bool operator==(const ProfileKey& o) const {
        return gpus == o.gpus && save == o.save && init == o.init && load == o.load && law == o.law &&
               transfer == o.transfer;
    }
};
struct ProfileKeyHash {
    std::size_t operator()(const ProfileKey& k) const {
        std::uint64_t h = k.gpus;
        for (std::uint32_t v : {k.save, k.init, k.load, k.law}) h = h * 0x9E3779B97F4A7C15ull + v;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

}  // namespace

void add_plan(Plans& plans, const SimulationInput& in, std::size_t j) {
    const JobSpec& s = in.jobs[j];
    plans.profiles.push_back(profile_of(in, j));
    JobPlan p{};
    p.profile = static_cast<std::uint32_t>(plans.profiles.size() - 1);
    validate_interval(in, j, plans.profiles[p.profile]);
    const double interval = starting_interval(s, plans.profiles[p.profile]);
    p.nodes = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) /
                                         in.gpus_per_node);
    p.gpus_per_node = s.gpus < in.gpus_per_node ? s.gpus : in.gpus_per_node;
    plans.jobs.push_back(p);
    plans.lowest_priority = std::min(plans.lowest_priority, in.jobs[j].priority);
    plans.levels.push_back(level_plan(in, j, interval));
}

Plans make_plans(const SimulationInput& in) {
    Plans plans;
    resize_interruptibly(plans.jobs, in.jobs.size(), in.cancel);
    std::unordered_map<ProfileKey, std::uint32_t, ProfileKeyHash> index;
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        if (j % kPollJobs == 0) throw_if_cancelled(in.cancel);
        const JobSpec& s = in.jobs[j];
        plans.lowest_priority = std::min(plans.lowest_priority, s.priority);
        const ProfileKey key{s.gpus, s.save, s.init, s.load, job_failure_law(in, j), storage_transfer(in, j)};
        auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(plans.profiles.size()));
        if (inserted) plans.profiles.push_back(profile_of(in, j));
        JobPlan& p = plans.jobs[j];
        p.profile = it->second;
        validate_interval(in, j, plans.profiles[p.profile]);
        p.nodes = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) /
                                             in.gpus_per_node);
        p.gpus_per_node = s.gpus < in.gpus_per_node ? s.gpus : in.gpus_per_node;
    }
    // Submission order: most workloads arrive sorted, which one pass tells.
    const auto n = static_cast<std::uint32_t>(in.jobs.size());
    std::uint32_t j = 1;
    while (j < n && !(in.jobs[j].submit < in.jobs[j - 1].submit)) ++j;
    if (j >= n) {
        plans.arrivals = Arrivals(n);
    } else {
        std::vector<std::uint32_t> order;
        resize_interruptibly(order, n, in.cancel);
        for (std::uint32_t k = 0; k < n; ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return in.jobs[a].submit < in.jobs[b].submit;
        });
        plans.arrivals = Arrivals(std::move(order));
    }
    if (uses_levels(in)) {
        plans.levels.resize(in.jobs.size());
        for (std::size_t j = 0; j < in.jobs.size(); ++j)
            plans.levels[j] = level_plan(in, j, plans.interval(in.jobs, j));
    }
    return plans;
}

}  // namespace acesim
