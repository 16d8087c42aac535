#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/distribution_table.hpp"
#include "acesim/portable_math.hpp"
#include "engine/require.hpp"

namespace acesim {

using detail::require;
using detail::require_that;
namespace {

void require_finite_positive(double value, const char* name) {
    require_that(std::isfinite(value) && value > 0.0, [&] {
        return std::string(name) + " must be a finite number > 0, got " + std::to_string(value);
    });
}

void require_durations(const std::vector<double>& values, const char* name, bool allow_inf) {
    require_that(!values.empty(), [&] { return std::string(name) + " must not be empty"; });
    require_that(values.size() <= std::numeric_limits<std::uint32_t>::max(),
                 [&] { return std::string(name) + " has more than 2^32 - 1 values"; });
    for (double v : values) {
        require_that(!std::isnan(v) && v >= 0.0 && (allow_inf || std::isfinite(v)), [&] {
            return std::string(name) + " must hold finite durations >= 0 (found " + std::to_string(v) + ")";
        });
    }
}

}  // namespace

Distribution Distribution::leaf(DistKind kind, double p0, double p1) {
    Distribution d;
    d.lazy_->table.nodes.push_back({kind, 0, 0, p0, p1});
    return d;
}

Distribution Distribution::with_data(DistKind kind, const std::vector<double>& values, double p0,
                                     bool running_sums) {
    Distribution d;
    Table& t = d.lazy_->table;
    t.data = values;
    if (running_sums) {
        // data[b, 2b): the running sums the forward-recurrence draw searches.
        double sum = 0.0;
        for (double v : values) t.data.push_back(sum += v);
    }
    t.links.assign(t.data.size(), 0u);
    t.nodes.push_back({kind, 0, static_cast<std::uint32_t>(values.size()), p0, 0.0});
    return d;
}

Distribution Distribution::composite(DistNode node, std::vector<double> payload,
                                     std::vector<Distribution> children) {
    Distribution d;
    d.composite_ =
        std::make_shared<const Composite>(Composite{node, std::move(payload), std::move(children)});
    return d;
}

const Distribution::Table& Distribution::table() const {
    if (composite_) std::call_once(lazy_->once, [this] { lay_out(lazy_->table); });
    return lazy_->table;
}

void Distribution::lay_out(Table& out) const {
    // Post-order over the composites, without recursion (a chain of nested
    // Mixtures may be deeper than a thread's stack allows): a leaf's table is
    // appended whole; a composite's payload and node follow its children's
    // tables.
    struct Frame {
        const Distribution* d;
        std::size_t next = 0;
        std::vector<std::uint32_t> roots;
    };
    auto append = [&out](const Table& t) {
        const auto node_offset = static_cast<std::uint32_t>(out.nodes.size());
        const auto payload_offset = static_cast<std::uint32_t>(out.data.size());
        for (DistNode n : t.nodes) {
            n.a += payload_offset;
            out.nodes.push_back(n);
        }
        out.data.insert(out.data.end(), t.data.begin(), t.data.end());
        for (std::uint32_t l : t.links) out.links.push_back(l + node_offset);
        return t.root + node_offset;
    };
    std::vector<Frame> stack;
    stack.push_back({this});
    std::uint32_t root = 0;
    while (!stack.empty()) {
        Frame& f = stack.back();
        const Composite& c = *f.d->composite_;
        if (f.next < c.children.size()) {
            const Distribution& child = c.children[f.next++];
            if (!child.composite_) {
                f.roots.push_back(append(child.lazy_->table));
            } else {
                stack.push_back({&child});
            }
            continue;
        }
        const auto offset = static_cast<std::uint32_t>(out.data.size());
        out.data.insert(out.data.end(), c.payload.begin(), c.payload.end());
        out.links.insert(out.links.end(), f.roots.begin(), f.roots.end());
        DistNode node = c.node;
        node.a = offset;
        root = static_cast<std::uint32_t>(out.nodes.size());
        out.nodes.push_back(node);
        stack.pop_back();
        if (!stack.empty()) stack.back().roots.push_back(root);
    }
    out.root = root;
}

Distribution Distribution::constant(double value) {
    require_that(std::isfinite(value) && value >= 0.0,
                 [&] { return "value must be a finite duration >= 0, got " + std::to_string(value); });
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
    Table& t = d.lazy_->table;
    t.data.push_back(scale * std::tgamma(1.0 + 1.0 / shape));
    t.links.push_back(0u);
    t.nodes[0].b = 1;
    return d;
}

Distribution Distribution::lognormal(double mu, double sigma) {
    require_that(std::isfinite(mu), [&] { return "mu must be finite, got " + std::to_string(mu); });
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
    require_that(block <= sequence.size(), [&] {
        return "block must not exceed the length of sequence (" + std::to_string(sequence.size()) + ")";
    });
    return with_data(DistKind::BlockBootstrap, sequence, static_cast<double>(block), true);
}

Distribution Distribution::replay(const std::vector<double>& times) {
    require_durations(times, "times", true);
    return with_data(DistKind::Replay, times, 0.0, false);
}

Distribution Distribution::mixture(const std::vector<double>& weights,
                                   const std::vector<Distribution>& components) {
    require(!components.empty(), "components must not be empty");
    require(weights.size() == components.size(), "weights and components must have the same length");
    double largest = 0.0;
    for (double w : weights) {
        require_that(std::isfinite(w) && w >= 0.0,
                     [&] { return "weights must be finite and >= 0, got " + std::to_string(w); });
        largest = std::max(largest, w);
    }
    require(largest > 0.0, "weights must not all be zero");
    // Normalise by the largest weight first so the total cannot overflow.
    double total = 0.0;
    for (double w : weights) total += w / largest;
    // Mixture payload: cumulative weights in data, children in links.
    std::vector<double> cumulative_weights;
    double cumulative = 0.0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        cumulative += weights[i] / largest;
        cumulative_weights.push_back(i + 1 == weights.size() ? 1.0 : cumulative / total);
    }
    return composite({DistKind::Mixture, 0, static_cast<std::uint32_t>(weights.size()), 0.0, 0.0},
                     std::move(cumulative_weights), components);
}

Distribution Distribution::scale_aware(const Distribution& base, double ref_gpus, double exponent) {
    require_finite_positive(ref_gpus, "ref_gpus");
    require_that(std::isfinite(exponent),
                 [&] { return "exponent must be finite, got " + std::to_string(exponent); });
    // One link (the base) and a 0 beside it: data and links stay the same length.
    return composite({DistKind::ScaleAware, 0, 1, ref_gpus, exponent}, {0.0}, {base});
}

double Distribution::mean(double gpus) const { return moment(1, gpus); }

namespace {

/// E[X] (order 1) or E[X^2] (order 2) of a leaf node.
double leaf_moment(const std::vector<double>& data, const DistNode& n, int order) {
    const bool first = order == 1;
    switch (n.kind) {
        case DistKind::Constant:
            return first ? n.p0 : n.p0 * n.p0;
        case DistKind::Exponential:
            return first ? n.p0 : 2.0 * n.p0 * n.p0;
        case DistKind::Weibull:
            return first ? n.p1 * std::tgamma(1.0 + 1.0 / n.p0) : n.p1 * n.p1 * std::tgamma(1.0 + 2.0 / n.p0);
        case DistKind::LogNormal:
            return first ? pm::exp(n.p0 + 0.5 * n.p1 * n.p1) : std::exp(2.0 * n.p0 + 2.0 * n.p1 * n.p1);
        case DistKind::Gamma:
            return first ? n.p0 * n.p1 : n.p0 * (n.p0 + 1.0) * n.p1 * n.p1;
        case DistKind::Empirical:
        case DistKind::BlockBootstrap:
        case DistKind::Replay: {
            double total = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k)
                total += first ? data[n.a + k] : data[n.a + k] * data[n.a + k];
            return total / n.b;
        }
        default:
            return std::numeric_limits<double>::quiet_NaN();
    }
}

}  // namespace

double Distribution::moment(int order, double gpus) const {
    // One pass over the post-order table (children before their parent), so
    // a chain of 20,000 nested Mixtures needs no recursion and no stack.
    const Table& t = table();
    if (t.nodes.size() == 1) return leaf_moment(t.data, t.nodes[0], order);
    std::vector<double> m(t.nodes.size(), 0.0);
    for (std::uint32_t i = 0; i <= t.root; ++i) {
        const DistNode& n = t.nodes[i];
        if (n.kind == DistKind::Mixture) {
            double total = 0.0, previous = 0.0;
            for (std::uint32_t k = 0; k < n.b; ++k) {
                const double w = t.data[n.a + k] - previous;
                previous = t.data[n.a + k];
                if (w > 0.0) total += w * m[t.links[n.a + k]];
            }
            m[i] = total;
        } else if (n.kind == DistKind::ScaleAware) {
            // The same factor the samplers apply (portable: identical everywhere).
            const double f = pm::pow_pos(n.p0 / gpus, n.p1);
            m[i] = (order == 1 ? f : f * f) * m[t.links[n.a]];
        } else {
            m[i] = leaf_moment(t.data, n, order);
        }
    }
    return m[t.root];
}

bool Distribution::has_replay() const {
    for (const DistNode& n : nodes())
        if (n.kind == DistKind::Replay) return true;
    return false;
}

double Distribution::forward_recurrence_mean(double gpus) const {
    if (has_replay()) return mean(gpus);  // the draws are the plain ones
    const double m = mean(gpus);
    if (!(m > 0.0)) return 0.0;  // all of the mass at 0
    return moment(2, gpus) / (2.0 * m);
}

std::string Distribution::value_key() const {
    const Table& t = table();
    std::string key;
    key.reserve(sizeof(std::uint32_t) + t.nodes.size() * 32 + t.data.size() * 12);
    const auto put = [&key](const auto& value) {
        key.append(reinterpret_cast<const char*>(&value), sizeof(value));
    };
    // Field by field: a DistNode's padding bytes are not part of the law.
    put(t.root);
    put(static_cast<std::uint64_t>(t.nodes.size()));
    for (const DistNode& n : t.nodes) {
        put(static_cast<std::uint32_t>(n.kind));
        put(n.a);
        put(n.b);
        put(n.p0);
        put(n.p1);
    }
    put(static_cast<std::uint64_t>(t.data.size()));
    for (double x : t.data) put(x);
    for (std::uint32_t x : t.links) put(x);
    return key;
}

bool Distribution::scale_dependent() const {
    for (const DistNode& n : nodes())
        if (n.kind == DistKind::ScaleAware) return true;
    return false;
}

}  // namespace acesim
