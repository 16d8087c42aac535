#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "acesim/distribution_table.hpp"
#include "acesim/portable_math.hpp"

namespace acesim {
namespace {

void require(bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
}

void require_finite_positive(double value, const char* name) {
    require(std::isfinite(value) && value > 0.0,
            std::string(name) + " must be a finite number > 0, got " + std::to_string(value));
}

void require_durations(const std::vector<double>& values, const char* name, bool allow_inf) {
    require(!values.empty(), std::string(name) + " must not be empty");
    require(values.size() <= std::numeric_limits<std::uint32_t>::max(),
            std::string(name) + " has more than 2^32 - 1 values");
    for (double v : values) {
        require(!std::isnan(v) && v >= 0.0 && (allow_inf || std::isfinite(v)),
                std::string(name) + " must hold finite durations >= 0 (found " + std::to_string(v) + ")");
    }
}

}  // namespace

Distribution Distribution::leaf(DistKind kind, double p0, double p1) {
    Distribution d;
    d.nodes_.push_back({kind, 0, 0, p0, p1});
    return d;
}

Distribution Distribution::with_data(DistKind kind, const std::vector<double>& values, double p0,
                                     bool running_sums) {
    Distribution d;
    d.data_ = values;
    if (running_sums) {
        // data[b, 2b): the running sums the forward-recurrence draw searches.
        double sum = 0.0;
        for (double v : values) d.data_.push_back(sum += v);
    }
    d.links_.assign(d.data_.size(), 0u);
    d.nodes_.push_back({kind, 0, static_cast<std::uint32_t>(values.size()), p0, 0.0});
    return d;
}

Distribution Distribution::constant(double value) {
    require(std::isfinite(value) && value >= 0.0,
            "value must be a finite duration >= 0, got " + std::to_string(value));
    return leaf(DistKind::Constant, value, 0.0);
}

Distribution Distribution::exponential(double mean) {
    require_finite_positive(mean, "mean");
    return leaf(DistKind::Exponential, mean, 0.0);
}

Distribution Distribution::weibull(double shape, double scale) {
    require_finite_positive(shape, "shape");
    require_finite_positive(scale, "scale");
    require(std::isfinite(scale * std::tgamma(1.0 + 1.0 / shape)),
            "shape is too small: the mean scale * Gamma(1 + 1/shape) overflows");
    // The mean rides in the table: the device has no portable tgamma, and the
    // forward-recurrence draw weighs Mixture components by their means.
    Distribution d = leaf(DistKind::Weibull, shape, scale);
    d.data_.push_back(scale * std::tgamma(1.0 + 1.0 / shape));
    d.links_.push_back(0u);
    d.nodes_[0].b = 1;
    return d;
}

Distribution Distribution::lognormal(double mu, double sigma) {
    require(std::isfinite(mu), "mu must be finite, got " + std::to_string(mu));
    require_finite_positive(sigma, "sigma");
    require(std::isfinite(std::exp(mu + 0.5 * sigma * sigma)),
            "mu and sigma are too large: the mean exp(mu + sigma^2 / 2) overflows");
    return leaf(DistKind::LogNormal, mu, sigma);
}

Distribution Distribution::gamma(double shape, double scale) {
    require_finite_positive(shape, "shape");
    require_finite_positive(scale, "scale");
    require(std::isfinite(shape * scale), "shape * scale (the mean) overflows");
    return leaf(DistKind::Gamma, shape, scale);
}

Distribution Distribution::empirical(const std::vector<double>& samples) {
    require_durations(samples, "samples", false);
    return with_data(DistKind::Empirical, samples, 0.0, true);
}

Distribution Distribution::block_bootstrap(const std::vector<double>& sequence, std::uint32_t block) {
    require_durations(sequence, "sequence", false);
    require(block >= 1, "block must be >= 1");
    require(block <= sequence.size(),
            "block must not exceed the length of sequence (" + std::to_string(sequence.size()) + ")");
    return with_data(DistKind::BlockBootstrap, sequence, static_cast<double>(block), true);
}

Distribution Distribution::replay(const std::vector<double>& times) {
    require_durations(times, "times", true);
    return with_data(DistKind::Replay, times, 0.0, false);
}

std::uint32_t Distribution::append(const Distribution& other) {
    // data_ and links_ always have the same length, so one offset `a` indexes
    // a node's payload in both.
    const auto node_offset = static_cast<std::uint32_t>(nodes_.size());
    const auto payload_offset = static_cast<std::uint32_t>(data_.size());
    for (DistNode n : other.nodes_) {
        n.a += payload_offset;
        nodes_.push_back(n);
    }
    data_.insert(data_.end(), other.data_.begin(), other.data_.end());
    for (std::uint32_t l : other.links_) links_.push_back(l + node_offset);
    return other.root_ + node_offset;
}

Distribution Distribution::mixture(const std::vector<double>& weights,
                                   const std::vector<Distribution>& components) {
    require(!components.empty(), "components must not be empty");
    require(weights.size() == components.size(), "weights and components must have the same length");
    double largest = 0.0;
    for (double w : weights) {
        require(std::isfinite(w) && w >= 0.0, "weights must be finite and >= 0, got " + std::to_string(w));
        largest = std::max(largest, w);
    }
    require(largest > 0.0, "weights must not all be zero");
    // Normalise by the largest weight first so the total cannot overflow.
    double total = 0.0;
    for (double w : weights) total += w / largest;
    Distribution d;
    std::vector<std::uint32_t> roots;
    for (const Distribution& c : components) roots.push_back(d.append(c));
    // Mixture payload: cumulative weights in data, children in links.
    const auto offset = static_cast<std::uint32_t>(d.data_.size());
    double cumulative = 0.0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        cumulative += weights[i] / largest;
        d.data_.push_back(i + 1 == weights.size() ? 1.0 : cumulative / total);
        d.links_.push_back(roots[i]);
    }
    d.root_ = static_cast<std::uint32_t>(d.nodes_.size());
    d.nodes_.push_back({DistKind::Mixture, offset, static_cast<std::uint32_t>(weights.size()), 0.0, 0.0});
    return d;
}

Distribution Distribution::scale_aware(const Distribution& base, double ref_gpus, double exponent) {
    require_finite_positive(ref_gpus, "ref_gpus");
    require(std::isfinite(exponent), "exponent must be finite, got " + std::to_string(exponent));
    Distribution d;
    const std::uint32_t base_root = d.append(base);
    const auto offset = static_cast<std::uint32_t>(d.links_.size());
    d.links_.push_back(base_root);
    d.data_.push_back(0.0);  // data and links stay the same length
    d.root_ = static_cast<std::uint32_t>(d.nodes_.size());
    d.nodes_.push_back({DistKind::ScaleAware, offset, 1, ref_gpus, exponent});
    return d;
}

double Distribution::mean(double gpus) const { return mean_of(root_, gpus); }

double Distribution::mean_of(std::uint32_t index, double gpus) const {
    const DistNode& n = nodes_[index];
    switch (n.kind) {
        case DistKind::Constant:
        case DistKind::Exponential:
            return n.p0;
        case DistKind::Weibull:
            return n.p1 * std::tgamma(1.0 + 1.0 / n.p0);
        case DistKind::LogNormal:
            return pm::exp(n.p0 + 0.5 * n.p1 * n.p1);
        case DistKind::Gamma:
            return n.p0 * n.p1;
        case DistKind::Mixture: {
            double total = 0.0, previous = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k) {
                const double w = data_[n.a + k] - previous;
                previous = data_[n.a + k];
                if (w > 0.0) total += w * mean_of(links_[n.a + k], gpus);
            }
            return total;
        }
        case DistKind::Empirical:
        case DistKind::BlockBootstrap:
        case DistKind::Replay: {
            double total = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k) total += data_[n.a + k];
            return total / n.b;
        }
        case DistKind::ScaleAware:
            // The same factor the samplers apply (portable: identical everywhere).
            return pm::pow_pos(n.p0 / gpus, n.p1) * mean_of(links_[n.a], gpus);
    }
    return std::numeric_limits<double>::quiet_NaN();
}

bool Distribution::has_replay() const {
    for (const DistNode& n : nodes_)
        if (n.kind == DistKind::Replay) return true;
    return false;
}

double Distribution::second_moment_of(std::uint32_t index, double gpus) const {
    const DistNode& n = nodes_[index];
    switch (n.kind) {
        case DistKind::Constant:
            return n.p0 * n.p0;
        case DistKind::Exponential:
            return 2.0 * n.p0 * n.p0;
        case DistKind::Weibull:
            return n.p1 * n.p1 * std::tgamma(1.0 + 2.0 / n.p0);
        case DistKind::LogNormal:
            return std::exp(2.0 * n.p0 + 2.0 * n.p1 * n.p1);
        case DistKind::Gamma:
            return n.p0 * (n.p0 + 1.0) * n.p1 * n.p1;
        case DistKind::Mixture: {
            double total = 0.0, previous = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k) {
                const double w = data_[n.a + k] - previous;
                previous = data_[n.a + k];
                if (w > 0.0) total += w * second_moment_of(links_[n.a + k], gpus);
            }
            return total;
        }
        case DistKind::Empirical:
        case DistKind::BlockBootstrap:
        case DistKind::Replay: {
            double total = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k) total += data_[n.a + k] * data_[n.a + k];
            return total / n.b;
        }
        case DistKind::ScaleAware: {
            const double f = pm::pow_pos(n.p0 / gpus, n.p1);
            return f * f * second_moment_of(links_[n.a], gpus);
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

double Distribution::forward_recurrence_mean(double gpus) const {
    if (has_replay()) return mean(gpus);  // the draws are the plain ones
    const double m = mean(gpus);
    if (!(m > 0.0)) return 0.0;  // all of the mass at 0
    return second_moment_of(root_, gpus) / (2.0 * m);
}

bool Distribution::scale_dependent() const {
    for (const DistNode& n : nodes_)
        if (n.kind == DistKind::ScaleAware) return true;
    return false;
}

}  // namespace acesim
