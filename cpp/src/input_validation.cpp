#include "input_validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "acesim/analytic.hpp"
#include "acesim/checkpoint_levels.hpp"
#include "acesim/philox.hpp"
#include "engine/require.hpp"

namespace acesim {

using detail::require;
using detail::require_that;
namespace {

/// The shortest mean time between failures a failure law may have (seconds).
constexpr double kShortestMeanBetweenFailures = 1e-3;

/// A number of seconds as %g prints it (1e-300, not 0.000000).
std::string format_seconds(double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", x);
    return buffer;
}

std::string job_field(std::size_t j, const char* field) { return "jobs[" + std::to_string(j) + "]." + field; }

/// A latency law: a valid index whose mean is finite and >= 0.
void require_latency(const SimulationInput& in, std::uint32_t law, std::size_t j, const char* field) {
    require_that(law < in.distributions.size(),
                 [&] { return job_field(j, field) + ": bad distribution index"; });
    const double mean = in.distributions[law].mean(static_cast<double>(in.jobs[j].gpus));
    require_that(std::isfinite(mean) && mean >= 0.0,
                 [&] { return job_field(j, field) + " must have a finite mean >= 0"; });
}

/// A job's persist law and checkpoint tiers.
void validate_levels(const SimulationInput& in, std::size_t j) {
    const JobSpec& job = in.jobs[j];
    const JobOptions& s = in.options(j);
    if (s.persist != kNoDistribution) require_latency(in, s.persist, j, "persist");
    require_that(std::isfinite(s.checkpoint_bytes) && s.checkpoint_bytes >= 0.0,
                 [&] { return job_field(j, "checkpoint_bytes") + " must be finite and >= 0"; });
    if (s.min_gpus > 0) {
        require_that(s.min_gpus <= job.gpus, [&] {
            return job_field(j, "min_gpus") + " (" + std::to_string(s.min_gpus) + ") must not exceed gpus (" +
                   std::to_string(job.gpus) + ")";
        });
        require_that(job.gpus <= in.gpus_per_node || s.min_gpus % in.gpus_per_node == 0, [&] {
            return job_field(j, "min_gpus") + " must be a multiple of a node's " +
                   std::to_string(in.gpus_per_node) + " GPUs (the job spans nodes)";
        });
        if (s.reconfigure != kNoDistribution) require_latency(in, s.reconfigure, j, "reconfigure");
        require_that(std::isfinite(s.scaling) && s.scaling >= 0.0,
                     [&] { return job_field(j, "scaling") + " must be finite and >= 0"; });
    }
    if (s.tier_count == 0) return;
    require_that(s.tier_count <= kMaxTiers, [&] {
        return job_field(j, "tiers") + ": at most " + std::to_string(kMaxTiers) + " checkpoint tiers";
    });
    require_that(static_cast<std::uint64_t>(s.tier_first) + s.tier_count <= in.tiers.size(),
                 [&] { return job_field(j, "tiers") + ": bad tier index"; });
    const std::uint64_t nodes =
        (static_cast<std::uint64_t>(job.gpus) + in.gpus_per_node - 1) / in.gpus_per_node;
    for (std::uint32_t k = 0; k < s.tier_count; ++k) {
        const CheckpointTierSpec& tier = in.tiers[s.tier_first + k];
        const std::string name = "tiers[" + std::to_string(k) + "]";
        require_that(std::isfinite(tier.interval) && tier.interval > 0.0,
                     [&] { return job_field(j, name.c_str()) + ".interval must be finite and > 0"; });
        require_latency(in, tier.save, j, (name + ".save").c_str());
        require_latency(in, tier.load, j, (name + ".load").c_str());
        require_that(tier.replication >= 1 && tier.replication <= nodes, [&] {
            return job_field(j, name.c_str()) + ".replication must be between 1 and the job's " +
                   std::to_string(nodes) + " nodes";
        });
    }
}

}  // namespace

void validate_job(const SimulationInput& in, std::size_t j) {
    const std::size_t nd = in.distributions.size();
    const FleetSpec& f = in.fleet;
    const std::uint64_t usable_nodes = f.enabled ? f.nodes - f.spares - f.cold_spares : 0;
    const JobSpec& s = in.jobs[j];
    require_that(s.gpus >= 1, [&] { return job_field(j, "gpus") + " must be >= 1"; });
    require_that(std::isfinite(s.work) && s.work > 0.0,
                 [&] { return job_field(j, "work") + " must be finite and > 0"; });
    require_that(std::isfinite(s.submit) && s.submit >= 0.0,
                 [&] { return job_field(j, "submit") + " must be finite and >= 0"; });
    require_that(in.time_limits.empty() || in.time_limits[j] > 0.0,
                 [&] { return job_field(j, "time_limit") + " must be > 0 (inf for none)"; });
    if (s.rule == IntervalRule::Fixed) {
        require_that(std::isfinite(s.checkpoint_interval) && s.checkpoint_interval > 0.0,
                     [&] { return job_field(j, "checkpoint_interval") + " must be finite and > 0"; });
    }
    require_that(s.init < nd && s.save < nd && s.load < nd,
                 [&] { return job_field(j, "init/save/load") + ": bad distribution index"; });
    validate_levels(in, j);
    if (f.enabled) {
        const std::uint64_t need =
            (static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) / in.gpus_per_node;
        require_that(need <= usable_nodes, [&] {
            return job_field(j, "gpus") + " needs " + std::to_string(need) + " nodes; the fleet has " +
                   std::to_string(usable_nodes) + " besides its spares (hot and cold)";
        });
    }
}

void validate(const SimulationInput& in) {
    require(!in.jobs.empty(), "jobs must not be empty");
    validate_setup(in);
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        if (j % kPollJobs == 0) throw_if_cancelled(in.cancel);
        validate_job(in, j);
    }
}

void validate_setup(const SimulationInput& in) {
    require(in.time_limits.empty() || in.time_limits.size() == in.jobs.size(), "time_limit: one per job");
    require(in.job_options.empty() || in.job_options.size() == in.jobs.size(), "job options: one per job");
    require_that(in.jobs.size() <= kMaxEntityId + 1ull, [] {
        return "jobs: at most " + std::to_string(kMaxEntityId + 1ull) + " jobs per simulation";
    });
    require(in.replicas >= 1, "replicas must be >= 1");
    require(static_cast<std::uint64_t>(in.first_replica) + in.replicas <= 0xFFFFFFFFull,
            "replicas: replica ids must fit in 32 bits");
    require(in.gpus_per_node >= 1, "gpus_per_node must be >= 1");
    require(in.max_stalled_failures >= 1, "max_stalled_failures must be >= 1");
    require(!std::isnan(in.horizon) && in.horizon > 0.0, "horizon must be > 0 (math.inf for none)");
    const std::size_t nd = in.distributions.size();
    require(in.job_failure_laws.empty() || in.job_failure_laws.size() == in.jobs.size(),
            "failures: one law per job");
    auto check_law = [&](std::uint32_t law) {
        require(law == kNoDistribution || law < nd, "failures: bad distribution index");
        if (law == kNoDistribution) return;
        // A law whose draws are all zero never lets time advance, and one far
        // below a millisecond (1e-300 s) only after billions of failures: no
        // fleet fails that often, so it is a mistake of units (times are in
        // seconds). (ScaleAware factors are positive: the sign of the mean
        // does not depend on size; the floor is checked at one GPU.)
        const double mean = in.distributions[law].mean(1.0);
        require_that(mean > 0.0,
                     [&] { return "failures must have a mean > 0 (got " + std::to_string(mean) + ")"; });
        require_that(mean >= kShortestMeanBetweenFailures, [&] {
            return "failures must have a mean of at least 1 ms (got " + format_seconds(mean) +
                   " s; times are in seconds)";
        });
    };
    check_law(in.job_failures);
    for (std::uint32_t law : in.job_failure_laws) check_law(law);
    double share = 0.0;
    for (std::size_t c = 0; c < in.causes.size(); ++c) {
        const CauseSpec& cause = in.causes[c];
        const auto field = [c](const char* what) { return "causes[" + std::to_string(c) + "]." + what; };
        require_that(std::isfinite(cause.share) && cause.share >= 0.0,
                     [&] { return field("share must be >= 0"); });
        require(cause.detect == kNoDistribution || cause.detect < nd, "causes: bad distribution index");
        require_that(cause.nodes >= 1, [&] { return field("nodes must be >= 1"); });
        require_that(cause.slowdown >= 0.0 && cause.slowdown < 1.0,
                     [&] { return field("slowdown must be in [0, 1)"); });
        share += cause.share;
    }
    require(in.causes.empty() || share > 0.0, "causes: shares must not all be zero");
    const FleetSpec& f = in.fleet;
    if (f.enabled) {
        require(f.nodes >= 1, "fleet.nodes must be >= 1");
        require(f.nodes <= kMaxEntityId + 1u, "fleet.nodes: at most 2^24 nodes");
        require(f.spares < f.nodes, "fleet.spares must be smaller than fleet.nodes");
        require(f.repair == kNoDistribution || f.repair < nd, "fleet.repair: bad distribution index");
        require(f.node_failures == kNoDistribution || f.node_failures < nd,
                "fleet.node_failures: bad distribution index");
        require(f.node_failure_laws.empty() || f.node_failure_laws.size() == f.nodes,
                "fleet.node_failures: one law per node");
        require(!f.node_failure_times ||
                    (f.node_failure_reported.size() == f.nodes && f.node_failure_laws.size() == f.nodes),
                "fleet.node_failures: a replayed trace needs its times and draws for every node");
        for (std::uint32_t law : f.node_failure_reported)
            require(law == kNoDistribution || law < nd, "fleet.node_failures: bad distribution index");
        for (std::uint32_t law : f.node_failure_laws)
            require(law == kNoDistribution || law < nd, "fleet.node_failures: bad distribution index");
        if (f.node_failures != kNoDistribution) {
            const double mean = in.distributions[f.node_failures].mean(1.0);
            require(mean > 0.0, "fleet.node_failures must have a mean > 0");
            require_that(mean >= kShortestMeanBetweenFailures, [&] {
                return "fleet.node_failures must have a mean of at least 1 ms (got " + format_seconds(mean) +
                       " s; times are in seconds)";
            });
        }
        require(std::isfinite(f.lemon_fraction) && f.lemon_fraction >= 0.0 && f.lemon_fraction <= 1.0,
                "fleet.lemon_fraction must be in [0, 1]");
        require(std::isfinite(f.lemon_factor) && f.lemon_factor > 0.0, "fleet.lemon_factor must be > 0");
        require(f.node_clock == NodeClock::Wall || f.node_clock == NodeClock::Busy,
                "fleet.node_clock must be 'wall' or 'busy'");
        for (std::size_t k = 0; k < f.rate_windows.size(); ++k) {
            const RateWindow& w = f.rate_windows[k];
            const auto name = [k] { return "fleet.rate_windows[" + std::to_string(k) + "]"; };
            require_that(std::isfinite(w.start) && w.start >= 0.0,
                         [&] { return name() + ": start must be finite and >= 0"; });
            require_that(!std::isnan(w.end) && w.end > w.start,
                         [&] { return name() + ": end must be > start (math.inf for none)"; });
            require_that(std::isfinite(w.factor) && w.factor >= 0.0,
                         [&] { return name() + ": factor must be finite and >= 0"; });
        }
        // Per node: its windows' (start, end), to reject overlaps.
        std::vector<std::vector<std::pair<double, double>>> spans(f.maintenance.empty() ? 0 : f.nodes);
        for (std::size_t k = 0; k < f.maintenance.size(); ++k) {
            const MaintenanceWindow& w = f.maintenance[k];
            const auto name = [k] { return "fleet.maintenance[" + std::to_string(k) + "]"; };
            require_that(std::isfinite(w.start) && w.start >= 0.0,
                         [&] { return name() + ": start must be finite and >= 0"; });
            require_that(std::isfinite(w.duration) && w.duration > 0.0,
                         [&] { return name() + ": duration must be finite and > 0"; });
            require_that(!w.nodes.empty(), [&] { return name() + ": nodes must not be empty"; });
            for (std::uint32_t n : w.nodes) {
                require_that(n < f.nodes,
                             [&] { return name() + ": node " + std::to_string(n) + " is not in the fleet"; });
                spans[n].emplace_back(w.start, w.start + w.duration);
            }
        }
        for (std::size_t n = 0; n < spans.size(); ++n) {
            auto& node = spans[n];
            std::sort(node.begin(), node.end());
            for (std::size_t k = 1; k < node.size(); ++k)
                require_that(node[k].first >= node[k - 1].second, [&] {
                    return "fleet.maintenance: windows of node " + std::to_string(n) +
                           " overlap (or list it twice)";
                });
        }
        for (std::size_t s = 0; s < f.repair_stages.size(); ++s) {
            const RepairStageSpec& stage = f.repair_stages[s];
            const auto name = [s] { return "fleet.repair.stages[" + std::to_string(s) + "]"; };
            require_that(stage.duration < nd, [&] { return name() + ".duration: bad distribution index"; });
            require_that(stage.escalate >= 0.0 && stage.escalate <= 1.0,
                         [&] { return name() + ".escalate must be in [0, 1]"; });
            require_that(stage.fix >= 0.0 && stage.fix <= 1.0,
                         [&] { return name() + ".fix must be in [0, 1]"; });
            require_that(s + 1 < f.repair_stages.size() || stage.escalate == 0.0,
                         [&] { return name() + ".escalate must be 0: the last stage cannot escalate"; });
        }
        require(f.misdiagnosis >= 0.0 && f.misdiagnosis <= 1.0,
                "fleet.repair.misdiagnosis must be in [0, 1]");
        require(static_cast<std::uint64_t>(f.spares) + f.cold_spares < f.nodes,
                "fleet.cold_spares: spares + cold_spares must be smaller than fleet.nodes");
        require(f.cold_spare_delay == kNoDistribution || f.cold_spare_delay < nd,
                "fleet.cold_spare_delay: bad distribution index");
        require(f.cold_spares == 0 || f.cold_spare_delay != kNoDistribution,
                "fleet.cold_spare_delay is required when fleet.cold_spares > 0");
        require(std::isfinite(f.storage_bandwidth) && f.storage_bandwidth >= 0.0,
                "fleet.storage_bandwidth must be finite and > 0 (None for none)");
        if (f.cold_spare_delay != kNoDistribution) {
            const double mean = in.distributions[f.cold_spare_delay].mean(in.gpus_per_node);
            require(std::isfinite(mean) && mean >= 0.0,
                    "fleet.cold_spare_delay must have a finite mean >= 0");
        }
    }
    const QuarantineSpec& q = in.policy.quarantine;
    if (q.enabled) {
        require(q.failures >= 1, "quarantine.failures must be >= 1");
        require(!std::isnan(q.window) && q.window >= 0.0, "quarantine.window must be >= 0");
        require(!std::isnan(q.duration) && q.duration >= 0.0,
                "quarantine.duration must be >= 0 (math.inf: retire for good)");
    }
    require(std::isfinite(in.policy.preemption_grace) && in.policy.preemption_grace >= 0.0,
            "policy.preemption_grace must be finite and >= 0");
    const std::uint32_t delay = in.policy.replacement_delay;
    require(delay == kNoDistribution || delay < nd, "policy.replacement_delay: bad distribution index");
    if (delay != kNoDistribution) {
        const double mean = in.distributions[delay].mean(1.0);
        require(std::isfinite(mean) && mean >= 0.0, "policy.replacement_delay must have a finite mean >= 0");
    }
}

void validate_batch(const SimulationInput& in) {
    require(!in.fleet.enabled, "batch: the single-job model has no fleet");
    require(!in.policy.on_failure && in.policy.compiled == nullptr,
            "batch: the single-job model has no policy");
    for (double limit : in.time_limits)
        require(!std::isfinite(limit), "batch: time_limit needs the event-heap simulator (simulate)");
    for (const CauseSpec& c : in.causes)
        require(c.slowdown == 0.0,
                "batch: slow failures (a cause's slowdown) need the event-heap simulator (simulate)");
}

void validate_interval(const SimulationInput& in, std::size_t j, const JobProfile& profile) {
    const JobSpec& job = in.jobs[j];
    if (job.rule != IntervalRule::Fixed && std::isfinite(profile.mtbf)) {
        require(profile.save_mean > 0.0,
                "checkpoint_interval: the 'young', 'daly' and 'adaptive' rules need a save latency with mean "
                "> 0");
        const double interval = job.rule == IntervalRule::Daly ? profile.daly : profile.young;
        require_that(std::isfinite(interval) && interval > 0.0, [&] {
            return "checkpoint_interval: the rule gave no usable interval (" + std::to_string(interval) + ")";
        });
    }
    require_that(segment_count(job.work, starting_interval(job, profile)) < 4294967295.0,
                 [&] { return job_field(j, "checkpoint_interval") + " gives more than 2^32 checkpoints"; });
}

void validate_tier_intervals(const SimulationInput& in, std::size_t j, double interval) {
    const JobOptions& s = in.options(j);
    for (std::uint32_t k = 0; k < s.tier_count; ++k) {
        const CheckpointTierSpec& t = in.tiers[s.tier_first + k];
        require_that(t.interval <= interval, [&] {
            return job_field(j, ("tiers[" + std::to_string(k) + "].interval").c_str()) + " (" +
                   std::to_string(t.interval) + " s) must not exceed the durable checkpoint_interval (" +
                   std::to_string(interval) + " s)";
        });
    }
}

}  // namespace acesim
