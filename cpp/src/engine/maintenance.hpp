// Planned maintenance known in advance (Fleet(maintenance=[(start,
// duration, nodes), ...])): the window starts the kernel plans, the nodes
// each start drains, and where each node stands in its own windows. The
// node pool takes drained nodes out of service; the engine stops the jobs
// on them.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "acesim/simulator.hpp"

namespace acesim {

class MaintenanceCalendar {
public:
    /// A node a window start drains, with the end of its window.
    struct Drain {
        std::uint32_t node;
        double until;
    };

    explicit MaintenanceCalendar(const FleetSpec& fleet);

    bool empty() const { return times_.empty(); }
    /// Distinct window start times, ascending (the kernel's planned events).
    const std::vector<double>& times() const { return times_; }
    /// The nodes whose windows start at times()[k].
    const std::vector<Drain>& at(std::size_t k) const { return drains_[k]; }
    /// Node n enters its next window.
    void begin(std::uint32_t n) { ++next_[n]; }
    /// The earliest window start not yet begun on any of `nodes` (inf: none).
    template <class Nodes>
    double next_start(const Nodes& nodes) const {
        double first = std::numeric_limits<double>::infinity();
        for (std::uint32_t n : nodes) {
            const std::vector<double>& starts = starts_[n];
            if (next_[n] < starts.size() && starts[next_[n]] < first) first = starts[next_[n]];
        }
        return first;
    }
    /// Node-hours of the windows up to `end` (the end of the simulated span).
    double node_hours(double end) const;
    /// Throws std::logic_error when node n's begun windows are not exactly
    /// those that started by `now`.
    void check(std::uint32_t n, double now) const;

private:
    const FleetSpec& fleet_;
    std::vector<double> times_;
    std::vector<std::vector<Drain>> drains_;
    std::vector<std::vector<double>> starts_;  ///< per node: its window starts, ascending
    std::vector<std::uint32_t> next_;          ///< per node: its first window not yet begun
};

}  // namespace acesim
