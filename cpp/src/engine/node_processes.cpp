#include "node_processes.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

NodeProcesses::NodeProcesses(const FleetSpec& fleet, std::uint32_t gpus_per_node)
    : fleet_(fleet), gpn_(gpus_per_node) {
    if (!fleet.enabled) return;
    busy_clock_ = fleet.node_clock == NodeClock::Busy;
    if (!fleet.rate_windows.empty()) {
        std::vector<Intensity::Window> windows;
        for (const RateWindow& w : fleet.rate_windows) windows.push_back({w.start, w.end, w.factor});
        intensity_ = Intensity(windows);
    }
}

double NodeProcesses::gap(std::uint32_t n, bool lemon, const ReplicaDraws& draws, DrawCounters& counters,
                          bool first) const {
    const std::uint32_t law =
        fleet_.node_failure_laws.empty() ? fleet_.node_failures : fleet_.node_failure_laws[n];
    if (law == kNoDistribution) return kInf;
    const double gpus = static_cast<double>(gpn_);
    // Per-node laws (a replayed trace) are taken as they are, from t = 0.
    const bool replayed = !fleet_.node_failure_laws.empty();
    const double x =
        first && fleet_.stationary_start && !replayed
            ? draws.forward_recurrence(EntityKind::Node, n, Purpose::Failure, law, counters, gpus)
            : draws.law(EntityKind::Node, n, Purpose::Failure, law, counters, gpus);
    return lemon && !replayed ? x / fleet_.lemon_factor : x;
}

void NodeProcesses::start(std::uint32_t n, double t, bool busy, bool lemon, const ReplicaDraws& draws,
                          DrawCounters& counters, bool first) {
    NodeProcess& p = procs_[n];
    if (!fleet_.node_failure_times) {
        p.fail_draw = gap(n, lemon, draws, counters, first);
        arm(n, t, p.fail_draw, busy);
        return;
    }
    // Recorded times: the next one at or after t; those that fell while the
    // node was out of service are skipped, and one still ahead when it left
    // service is kept.
    const std::uint32_t times = fleet_.node_failure_laws[n];
    const std::uint32_t reported = fleet_.node_failure_reported[n];
    const double gpus = static_cast<double>(gpn_);
    p.next_failure = kInf;
    p.fail_draw = kInf;
    if (times == kNoDistribution) return;
    while (!(p.recorded >= t)) {  // none drawn (NaN), or it fell while the node was out
        p.recorded = draws.law(EntityKind::Node, n, Purpose::Failure, times, counters, gpus);
        p.recorded_draw = reported == kNoDistribution ? kInf
                                                      : draws.recorded(EntityKind::Node, n, Purpose::Repair,
                                                                       reported, p.replayed, gpus);
    }
    p.next_failure = p.recorded;
    p.fail_draw = p.recorded_draw;
}

bool NodeProcesses::busy_changed(std::uint32_t n, bool busy, double now) {
    if (fleet_.node_failure_times) return false;  // a replayed trace fails at its recorded times
    NodeProcess& p = procs_[n];
    if (!busy) {
        // Idle: the process pauses with what is left of its gap.
        p.fail_left = std::max(0.0, p.fail_left - intensity_.integral(p.clock_since, now));
        p.clock_since = now;
        p.next_failure = kNever;
    } else {
        arm(n, now, p.fail_left, busy);  // busy again: it resumes where it paused
    }
    return true;
}

void NodeProcesses::check(std::uint32_t n, bool in_service, bool busy, double now) const {
    const NodeProcess& p = procs_[n];
    // The failure process runs exactly while it should, toward its gap
    // (a replayed trace runs to its recorded times instead).
    const double expected = fleet_.node_failure_times      ? p.next_failure
                            : clock_runs(in_service, busy) ? intensity_.reach(p.clock_since, p.fail_left)
                                                           : kNever;
    if (p.next_failure != expected && !(std::isnan(expected) && std::isnan(p.next_failure)))
        throw std::logic_error("invariant: node " + std::to_string(n) + " failure process out of step");
    if (!(p.fail_left >= 0.0) || p.clock_since > now)
        throw std::logic_error("invariant: node " + std::to_string(n) + " failure clock");
}

}  // namespace acesim
