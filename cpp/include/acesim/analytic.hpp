// Closed forms of checkpoint/restart under exponential failures (DESIGN
// section 8). Header-only so the simulator, the bindings and device code
// share one implementation.
#pragma once

#include <cmath>
#include <limits>

#include "acesim/hd.hpp"

namespace acesim {

/// Young (1974): sqrt(2 C M).
ACESIM_HD double young_interval(double checkpoint_cost, double mtbf) {
    return std::sqrt(2.0 * checkpoint_cost * mtbf);
}

/// Daly (2006): sqrt(2CM) (1 + sqrt(C/(2M))/3 + C/(18M)) - C for C < 2M, else M.
ACESIM_HD double daly_interval(double checkpoint_cost, double mtbf) {
    const double c = checkpoint_cost, m = mtbf;
    if (c >= 2.0 * m) return m;
    return std::sqrt(2.0 * c * m) * (1.0 + std::sqrt(c / (2.0 * m)) / 3.0 + c / (18.0 * m)) - c;
}

/// Number of checkpoint segments of `work` at `interval` (the last may be shorter).
ACESIM_HD double segment_count(double work, double interval) {
    double n = std::ceil(work / interval);
    if (n < 1.0) n = 1.0;
    if ((n - 1.0) * interval >= work && n > 1.0) n -= 1.0;
    return n;
}

/// Expected wall-clock of a job under exponential failures of mean `mtbf`
/// striking at any time the job holds hardware; every start costs R:
/// (e^(lR) - 1)/l + sum over segments s of e^(lR)(e^(l(s + C)) - 1)/l.
ACESIM_HD double expected_wall_exponential(double mtbf, double work, double interval, double checkpoint_cost,
                                           double restart_cost) {
    const double l = 1.0 / mtbf;
    if (!(l > 0.0)) {  // no failures: one start, every segment and write once
        return restart_cost + work + segment_count(work, interval) * checkpoint_cost;
    }
    const double restart = std::exp(l * restart_cost);
    const double n = segment_count(work, interval);
    const double last = work - (n - 1.0) * interval;
    const double full = (n - 1.0) * restart * std::expm1(l * (interval + checkpoint_cost)) / l;
    const double tail = restart * std::expm1(l * (last + checkpoint_cost)) / l;
    return std::expm1(l * restart_cost) / l + full + tail;
}

/// work / expected_wall_exponential(...).
ACESIM_HD double expected_ettr_exponential(double mtbf, double work, double interval, double checkpoint_cost,
                                           double restart_cost) {
    return work / expected_wall_exponential(mtbf, work, interval, checkpoint_cost, restart_cost);
}

/// Meta's first-order estimate (RSC paper):
/// E[ETTR] ~ (1 - N r_f (u0 + dt/2)) / (1 + w/dt), N nodes, r_f per node-second.
ACESIM_HD double meta_expected_ettr(double nodes, double failures_per_node_second, double restart_overhead,
                                    double interval, double checkpoint_write) {
    return (1.0 - nodes * failures_per_node_second * (restart_overhead + interval / 2.0)) /
           (1.0 + checkpoint_write / interval);
}

}  // namespace acesim
