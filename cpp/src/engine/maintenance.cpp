#include "maintenance.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace acesim {

MaintenanceCalendar::MaintenanceCalendar(const FleetSpec& fleet) : fleet_(fleet) {
    if (!fleet.enabled || fleet.maintenance.empty()) return;
    // Windows grouped by start time (in input order within a group).
    for (const MaintenanceWindow& w : fleet.maintenance) times_.push_back(w.start);
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    drains_.resize(times_.size());
    starts_.resize(fleet.nodes);
    next_.assign(fleet.nodes, 0);
    for (const MaintenanceWindow& w : fleet.maintenance) {
        const auto k = static_cast<std::size_t>(std::lower_bound(times_.begin(), times_.end(), w.start) -
                                                times_.begin());
        for (std::uint32_t n : w.nodes) {
            drains_[k].push_back({n, w.start + w.duration});
            starts_[n].push_back(w.start);
        }
    }
    for (auto& starts : starts_) std::sort(starts.begin(), starts.end());
}

double MaintenanceCalendar::node_hours(double end) const {
    // Planned windows are known in advance: each counts its span cut at the end.
    double hours = 0.0;
    for (const MaintenanceWindow& w : fleet_.maintenance) {
        if (!(w.start < end)) continue;
        const double span = std::min(w.start + w.duration, end) - w.start;
        hours += static_cast<double>(w.nodes.size()) * span / 3600.0;
    }
    return hours;
}

void MaintenanceCalendar::check(std::uint32_t n, double now) const {
    if (starts_.empty()) return;
    const std::vector<double>& starts = starts_[n];
    const std::uint32_t k = next_[n];
    if (k > starts.size() || (k > 0 && starts[k - 1] > now) || (k < starts.size() && starts[k] < now))
        throw std::logic_error("invariant: node " + std::to_string(n) + " maintenance out of step");
}

}  // namespace acesim
