// Time-varying node failure intensity (Fleet(rate_windows=...)): every node's
// failure rate is multiplied by a piecewise-constant factor of wall-clock
// time. Implemented exactly, by a change of time: a node's renewal process
// runs on "intensity time", the integral of the factor over the wall time it
// runs, so a gap g drawn from the node's law is reached at the wall time
// where that integral, counted from when the process (re)started, equals g.
// Overlapping windows multiply; a factor of 0 stops the clock (no failures
// in the window). With no windows the factor is 1 and reach(t, g) is t + g
// exactly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace acesim {

class Intensity {
public:
    /// The factor is `factor` on wall-clock [start, end) (end may be inf).
    struct Window {
        double start;
        double end;
        double factor;
    };

    Intensity() = default;
    explicit Intensity(const std::vector<Window>& windows) {
        for (const Window& w : windows) {
            at_.push_back(w.start);
            if (w.end < kInf) at_.push_back(w.end);
        }
        std::sort(at_.begin(), at_.end());
        at_.erase(std::unique(at_.begin(), at_.end()), at_.end());
        factor_.assign(at_.size(), 1.0);
        // Piece k is [at_[k], at_[k + 1]); a window covers it when it covers its start.
        for (std::size_t k = 0; k < at_.size(); ++k)
            for (const Window& w : windows)
                if (w.start <= at_[k] && at_[k] < w.end) factor_[k] *= w.factor;
    }

    /// No window: the factor is 1 everywhere.
    bool constant() const { return at_.empty(); }

    /// The factor at wall time t.
    double factor(double t) const {
        const std::size_t k = piece(t);
        return k == 0 ? 1.0 : factor_[k - 1];
    }

    /// Intensity time between wall times `from` and `to` (from <= to): the
    /// integral of the factor.
    double integral(double from, double to) const {
        if (at_.empty()) return to - from;
        double sum = 0.0;
        double t = from;
        for (std::size_t k = piece(from); t < to; ++k) {
            const double end = std::min(k < at_.size() ? at_[k] : kInf, to);
            const double f = k == 0 ? 1.0 : factor_[k - 1];
            if (f > 0.0) sum += (end - t) * f;
            t = end;
        }
        return sum;
    }

    /// The wall time at which `gap` seconds of intensity time have elapsed
    /// since wall time `from`: the first t >= from with integral(from, t) =
    /// gap (inf when the factor is 0 from some point on and the gap is not
    /// reached, or the gap is inf).
    double reach(double from, double gap) const {
        if (at_.empty()) return from + gap;
        if (!(gap > 0.0)) return from;
        double left = gap;
        double t = from;
        for (std::size_t k = piece(from);; ++k) {
            const double end = k < at_.size() ? at_[k] : kInf;
            const double f = k == 0 ? 1.0 : factor_[k - 1];
            if (f > 0.0) {
                if (end == kInf) return t + left / f;
                const double capacity = (end - t) * f;
                if (left <= capacity) return std::min(t + left / f, end);
                left -= capacity;
            } else if (end == kInf) {
                return kInf;
            }
            t = end;
        }
    }

private:
    static constexpr double kInf = std::numeric_limits<double>::infinity();

    /// Breakpoints at or before t: t lies in piece [at_[k - 1], at_[k]).
    std::size_t piece(double t) const {
        return static_cast<std::size_t>(std::upper_bound(at_.begin(), at_.end(), t) - at_.begin());
    }

    std::vector<double> at_;      ///< breakpoints, ascending
    std::vector<double> factor_;  ///< factor_[k] on [at_[k], at_[k + 1]) (1 before at_[0])
};

}  // namespace acesim
