// The failure process of every node: the next failure on the node's own
// clock (wall-clock or busy time, under the fleet's rate windows), the draw
// in force, the stationary first gap, and a replayed trace's recorded
// times. The node pool says when a node is in service and busy; this room
// says when it fails.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "acesim/simulator.hpp"
#include "draws.hpp"
#include "intensity.hpp"

namespace acesim {

/// One node's failure process.
struct NodeProcess {
    double next_failure = std::numeric_limits<double>::infinity();  ///< wall time (inf: none)
    double fail_draw = std::numeric_limits<double>::infinity();     ///< the gap in force
    /// Intensity seconds left to the next failure, counted from
    /// `clock_since` (its last renewal, resumption or pause). While the
    /// clock runs, next_failure is the wall time they are used up at.
    double fail_left = std::numeric_limits<double>::infinity();
    double clock_since = 0.0;
    DrawCounters replayed =
        {};  ///< replayed times: the reported draws' own counters (a Replay needs no randomness)
    /// Replayed times: the recorded time drawn and not fired yet (NaN: none),
    /// kept while the node is out of service, and its reported draw.
    double recorded = std::numeric_limits<double>::quiet_NaN();
    double recorded_draw = std::numeric_limits<double>::infinity();
};

class NodeProcesses {
public:
    NodeProcesses(const FleetSpec& fleet, std::uint32_t gpus_per_node);

    void resize(std::uint32_t nodes) { procs_.resize(nodes); }
    bool busy_clock() const { return busy_clock_; }
    double next_failure(std::uint32_t n) const { return procs_[n].next_failure; }

    /// Node n's process (re)starts or renews at t (in service; `busy`: a job
    /// is placed on it): draws its next gap (`first`: the one from t = 0,
    /// stationary unless the fleet says fresh), or for a replayed trace its
    /// next recorded time at or after t. `counters`: the node's draws.
    void start(std::uint32_t n, double t, bool busy, bool lemon, const ReplicaDraws& draws,
               DrawCounters& counters, bool first);
    /// The process fires: returns the draw that fired; it waits for start()
    /// (the failure may take the node out of service).
    double fire(std::uint32_t n) {
        procs_[n].next_failure = kNever;
        procs_[n].recorded = std::numeric_limits<double>::quiet_NaN();  // (a replayed time is used up)
        return procs_[n].fail_draw;
    }
    /// The node left service: no failure process until it returns.
    void stop(std::uint32_t n) { procs_[n].next_failure = kNever; }
    /// Busy clock: node n, in service, went idle (the process pauses with
    /// what is left of its gap) or busy (it resumes) at `now`. False when
    /// nothing changed (a replayed trace fails at its recorded times).
    bool busy_changed(std::uint32_t n, bool busy, double now);
    /// Throws std::logic_error when node n's process is out of step.
    void check(std::uint32_t n, bool in_service, bool busy, double now) const;

private:
    static constexpr double kNever = std::numeric_limits<double>::infinity();
    double gap(std::uint32_t n, bool lemon, const ReplicaDraws& draws, DrawCounters& counters,
               bool first) const;
    bool clock_runs(bool in_service, bool busy) const { return in_service && (!busy_clock_ || busy); }
    /// The process (re)starts or resumes at t with `left` intensity seconds to its failure.
    void arm(std::uint32_t n, double t, double left, bool busy) {
        NodeProcess& p = procs_[n];
        p.fail_left = left;
        p.clock_since = t;
        p.next_failure = clock_runs(true, busy) ? intensity_.reach(t, left) : kNever;
    }

    const FleetSpec& fleet_;
    std::uint32_t gpn_;
    Intensity intensity_;
    bool busy_clock_ = false;
    std::vector<NodeProcess> procs_;
};

}  // namespace acesim
