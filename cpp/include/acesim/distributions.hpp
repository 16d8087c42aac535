// Duration distributions as a flat, pointer-free table that both the host
// core and the CUDA kernels walk with the same code.
//
// A distribution is a small tree (a Mixture of Weibulls, a ScaleAware
// Empirical, ...) stored as nodes; numeric payloads (samples, weights) sit in
// one double array and child links in one index array.
#pragma once

#include <cmath>
#include <cstdint>

#include "acesim/hd.hpp"
#include "acesim/philox.hpp"
#include "acesim/portable_math.hpp"

namespace acesim {

/// The laws a duration can follow (DESIGN section 3).
enum class DistKind : std::uint32_t {
    Constant = 0,        ///< p0 = value
    Exponential = 1,     ///< p0 = mean
    Weibull = 2,         ///< p0 = shape, p1 = scale; data[a] = mean (host tgamma: not portable)
    LogNormal = 3,       ///< p0 = mu, p1 = sigma (of the underlying normal)
    Gamma = 4,           ///< p0 = shape, p1 = scale
    Mixture = 5,         ///< data[a, a+b) cumulative weights, links[a, a+b) children
    Empirical = 6,       ///< data[a, a+b) samples, resampled i.i.d.; data[a+b, a+2b) running sums
    BlockBootstrap = 7,  ///< data[a, a+b) ordered history, p0 = block length; data[a+b, a+2b) running sums
    Replay = 8,          ///< data[a, a+b) exact sequence; +inf after its end
    ScaleAware = 9,      ///< links[a] = base; p0 = ref_gpus, p1 = exponent
};

/// One node of a distribution tree. A table holds one tree in post-order:
/// every subtree is the contiguous range of nodes ending at its root, and a
/// node's children come before it (Distribution's constructors keep this).
struct DistNode {
    DistKind kind;
    std::uint32_t a;  ///< offset into data / links
    std::uint32_t b;  ///< count in data / links
    double p0;
    double p1;
};

/// Non-owning view of a distribution table (host or device memory).
struct DistributionView {
    const DistNode* nodes;
    const double* data;
    const std::uint32_t* links;
    std::uint32_t root;
};

/// Sub-block offset reserved for per-block draws of BlockBootstrap, so they
/// never share counters with per-draw sub-blocks.
constexpr std::uint32_t kBlockSubBase = 0x80000000u;
/// Sub-block offset of draw_forward_recurrence: its counters never meet
/// draw()'s (sub-blocks from 0) or BlockBootstrap's (from kBlockSubBase), so
/// the forward-recurrence draw n is independent of the plain draw n.
constexpr std::uint32_t kForwardSubBase = 0x40000000u;
/// Marsaglia-Tsang accepts with probability above 0.95; this bound is never
/// reached in practice and only guarantees termination.
constexpr std::uint32_t kMaxGammaAttempts = 4096;
/// The polar method accepts with probability pi/4; 64 rejections in a row
/// have probability below 1e-42, so this bound only guarantees termination.
constexpr std::uint32_t kMaxNormalAttempts = 64;

namespace detail {
/// One attempt of Marsaglia's polar method, from one 128-bit block: u and v
/// uniform on (-1, 1) (exact, and never 0), s = u^2 + v^2.
struct PolarCandidate {
    double u;
    double s;
};

ACESIM_HD PolarCandidate polar_candidate(std::uint64_t lo, std::uint64_t hi) {
    const double u = 2.0 * uniform_open(lo) - 1.0;
    const double v = 2.0 * uniform_open(hi) - 1.0;
    return {u, u * u + v * v};
}

/// Whether a polar candidate lies inside the unit disc (and is not its centre).
ACESIM_HD bool polar_accepts(double s) { return s > 0.0 && s < 1.0; }

/// The standard normal of an accepted candidate: u sqrt(-2 ln(s) / s).
/// (s is in (0, 1) and at least 2^-104 there, so normal.)
ACESIM_HD double polar_normal(double u, double s) {
    return u * std::sqrt(-2.0 * pm::log_positive_normal(s) / s);
}

/// Standard normal by Marsaglia's polar method (no trigonometry, so no libm
/// differences). Each attempt reads the next sub-block, `sub`, `sub` + 1, ...;
/// `sub` ends past the last block read, so the draw stays a pure function of
/// (stream, n).
ACESIM_HD double standard_normal(const Stream& s, std::uint32_t n, std::uint32_t& sub) {
    for (std::uint32_t attempt = 0; attempt < kMaxNormalAttempts; ++attempt) {
        const Block blk = s.block(n, sub++);
        const PolarCandidate c = polar_candidate(lo64(blk), hi64(blk));
        if (polar_accepts(c.s)) return polar_normal(c.u, c.s);
    }
    return 0.0;  // unreachable in practice; keeps the draw finite
}

/// Exponential(mean) from 64 random bits. The batch sampler calls the same
/// leaf functions, so its draws are the same doubles as draw()'s. (Uniforms
/// lie in [2^-53, 1), so their logs need no special-value handling.)
ACESIM_HD double exponential_value(double mean, std::uint64_t bits) {
    return -mean * pm::log_positive_normal(uniform_open(bits));
}

/// Weibull(1 / inv_shape, scale) from 64 random bits, by inversion: scale E^(1/shape)
/// with E a unit exponential (at least 2^-53 ln 2, so normal).
ACESIM_HD double weibull_value(double inv_shape, double scale, std::uint64_t bits) {
    const double e = -pm::log_positive_normal(uniform_open(bits));
    return scale * pm::pow_positive_normal(e, inv_shape);
}

/// LogNormal(mu, sigma) from a standard normal z.
ACESIM_HD double lognormal_value(double mu, double sigma, double z) { return pm::exp(mu + sigma * z); }

/// Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 by boosting with
/// U^(1/shape). Each attempt reads its own sub-blocks.
ACESIM_HD double gamma_unit(double shape, const Stream& s, std::uint32_t n, std::uint32_t& sub) {
    double boost = 1.0;
    if (shape < 1.0) {
        const double u = uniform_open(lo64(s.block(n, sub++)));
        boost = pm::pow_pos(u, 1.0 / shape);
        shape += 1.0;
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (std::uint32_t attempt = 0; attempt < kMaxGammaAttempts; ++attempt) {
        const double x = standard_normal(s, n, sub);
        double v = 1.0 + c * x;
        if (v <= 0.0) continue;
        v = v * v * v;
        const double u = uniform_open(lo64(s.block(n, sub++)));
        if (pm::log_positive_normal(u) < 0.5 * x * x + d - d * v + d * pm::log(v)) return d * v * boost;
    }
    return d * boost;  // unreachable in practice; keeps the draw finite
}
}  // namespace detail

/// The n-th draw of `s` from `dist`, for a job of `gpus` GPUs (only
/// ScaleAware reads it). A pure function of (dist, s, n, gpus).
ACESIM_HD double draw(const DistributionView& dist, const Stream& s, std::uint32_t n, double gpus) {
    std::uint32_t node_index = dist.root;
    std::uint32_t sub = 0;
    double factor = 1.0;
    for (;;) {
        const DistNode& node = dist.nodes[node_index];
        switch (node.kind) {
            case DistKind::Constant:
                return factor * node.p0;
            case DistKind::Exponential:
                return factor * detail::exponential_value(node.p0, lo64(s.block(n, sub)));
            case DistKind::Weibull:
                return factor * detail::weibull_value(1.0 / node.p0, node.p1, lo64(s.block(n, sub)));
            case DistKind::LogNormal:
                return factor * detail::lognormal_value(node.p0, node.p1, detail::standard_normal(s, n, sub));
            case DistKind::Gamma:
                return factor * (node.p1 * detail::gamma_unit(node.p0, s, n, sub));
            case DistKind::Mixture: {
                const double u = uniform_open(lo64(s.block(n, sub++)));
                std::uint32_t k = 0;
                while (k + 1 < node.b && u >= dist.data[node.a + k]) ++k;
                node_index = dist.links[node.a + k];
                continue;
            }
            case DistKind::Empirical: {
                const std::uint64_t i = bounded_index(lo64(s.block(n, sub)), node.b);
                return factor * dist.data[node.a + i];
            }
            case DistKind::BlockBootstrap: {
                // Circular block bootstrap: block j of the stream starts at a
                // uniformly drawn position and runs `block` draws in order.
                const std::uint32_t block = static_cast<std::uint32_t>(node.p0);
                const std::uint32_t j = n / block;
                const std::uint32_t offset = n % block;
                const std::uint64_t start = bounded_index(lo64(s.block(j, kBlockSubBase + sub)), node.b);
                return factor * dist.data[node.a + (start + offset) % node.b];
            }
            case DistKind::Replay:
                return n < node.b ? factor * dist.data[node.a + n] : INFINITY;
            case DistKind::ScaleAware:
                factor *= pm::pow_pos(node.p0 / gpus, node.p1);
                node_index = dist.links[node.a];
                continue;
        }
        return NAN;  // unknown kind: a corrupted table
    }
}

/// Draws of the equilibrium forward-recurrence law of `dist` (the first gap
/// of a renewal process observed from a random time, long after its start):
/// density sf(x) / mean, mean E[X^2] / (2 E[X]), sampled as U L with U
/// uniform on (0, 1) and L length-biased (density x f(x) / mean). By kind:
///
///   Exponential(m)     Exponential(m) itself (memoryless), no U
///   Constant(c)        U c
///   Weibull(k, lam)    U lam G^(1/k), G ~ Gamma(1 + 1/k, 1)
///   Gamma(a, th)       U th Gamma(a + 1, 1)
///   LogNormal(mu, s)   U LogNormal(mu + s^2, s)
///   Mixture            component i with probability w_i m_i / sum_j w_j m_j
///                      (m_i its mean at `gpus`), then its length-biased law
///   Empirical          sample i with probability x_i / sum_j x_j, times U
///   BlockBootstrap     as Empirical over its sequence (blocks play no part)
///   ScaleAware         the base's draw times the factor draw() applies
///   Replay             a tree holding a Replay anywhere returns draw(): a
///                      replay stays exact, with no equilibrium
///
/// A law whose mass is all at 0 (a mean of 0) gives 0.
///
/// Counters: only (kForwardSubBase + j, n, stream, replica), j = 0, 1, ...
/// Sub-block kForwardSubBase holds U (its lo64); the walk down the tree then
/// reads kForwardSubBase + 1, + 2, ... in turn, as draw() reads 0, 1, ...:
/// one sub-block (lo64) per Mixture pick and per Empirical/BlockBootstrap
/// pick, then the leaf's sampler (Exponential: lo64 of one; Gamma and
/// Weibull: Marsaglia-Tsang's attempts; LogNormal: the polar method's). A
/// pure function of (dist, s, n, gpus), the same double on the host and the
/// device (portable math only, no recursion).
namespace detail {
/// Whether a node has children (Mixture, ScaleAware).
ACESIM_HD bool is_inner(DistKind kind) { return kind == DistKind::Mixture || kind == DistKind::ScaleAware; }

/// First node of the subtree rooted at `root` (the leftmost leaf: the table
/// is in post-order).
ACESIM_HD std::uint32_t subtree_first(const DistributionView& d, std::uint32_t root) {
    std::uint32_t i = root;
    while (is_inner(d.nodes[i].kind)) i = d.links[d.nodes[i].a];
    return i;
}

/// Whether the subtree rooted at `root` holds a Replay.
ACESIM_HD bool subtree_has_replay(const DistributionView& d, std::uint32_t root) {
    for (std::uint32_t i = subtree_first(d, root); i <= root; ++i)
        if (d.nodes[i].kind == DistKind::Replay) return true;
    return false;
}

/// Weight of child k of a Mixture node (its cumulative weights differenced).
ACESIM_HD double mixture_weight(const DistributionView& d, const DistNode& m, std::uint32_t k) {
    return d.data[m.a + k] - (k == 0 ? 0.0 : d.data[m.a + k - 1]);
}

/// Mean of a leaf (not Replay), from its parameters or the stored payload.
ACESIM_HD double leaf_mean(const DistributionView& d, const DistNode& node) {
    switch (node.kind) {
        case DistKind::Constant:
        case DistKind::Exponential:
            return node.p0;
        case DistKind::Weibull:
            return d.data[node.a];
        case DistKind::LogNormal:
            return pm::exp(node.p0 + 0.5 * node.p1 * node.p1);
        case DistKind::Gamma:
            return node.p0 * node.p1;
        case DistKind::Empirical:
        case DistKind::BlockBootstrap:
            return d.data[node.a + 2 * node.b - 1] / static_cast<double>(node.b);
        default:
            return NAN;
    }
}

/// Mean at `gpus` of the subtree rooted at `root` (holding no Replay): the
/// sum over its leaves of the leaf's mean times the weights and ScaleAware
/// factors on the path down to it. Each path is walked from `root` (the
/// child holding leaf l is the first whose root is >= l), so there is no
/// recursion and no stack.
ACESIM_HD double subtree_mean(const DistributionView& d, std::uint32_t root, double gpus) {
    double total = 0.0;
    for (std::uint32_t leaf = subtree_first(d, root); leaf <= root; ++leaf) {
        if (is_inner(d.nodes[leaf].kind)) continue;
        double coefficient = 1.0;
        std::uint32_t i = root;
        while (i != leaf) {
            const DistNode& node = d.nodes[i];
            if (node.kind == DistKind::ScaleAware) {
                coefficient *= pm::pow_pos(node.p0 / gpus, node.p1);
                i = d.links[node.a];
            } else {  // Mixture
                std::uint32_t k = 0;
                while (k + 1 < node.b && d.links[node.a + k] < leaf) ++k;
                coefficient *= mixture_weight(d, node, k);
                i = d.links[node.a + k];
            }
        }
        if (coefficient > 0.0) total += coefficient * leaf_mean(d, d.nodes[leaf]);
    }
    return total;
}

/// Child of Mixture node `m` picked with probability w_k m_k / sum_j w_j m_j,
/// from a uniform u; m.b (none) when every w_k m_k is 0. Two passes over the
/// children (the total, then the cumulative sum up to u total) compute the
/// same doubles, so the pick needs no storage.
ACESIM_HD std::uint32_t length_biased_child(const DistributionView& d, const DistNode& m, double gpus,
                                            double u) {
    double total = 0.0;
    for (std::uint32_t k = 0; k < m.b; ++k) {
        const double w = mixture_weight(d, m, k);
        if (w > 0.0) total += w * subtree_mean(d, d.links[m.a + k], gpus);
    }
    if (!(total > 0.0)) return m.b;
    const double target = u * total;
    double cumulative = 0.0;
    std::uint32_t chosen = m.b;
    for (std::uint32_t k = 0; k < m.b; ++k) {
        const double w = mixture_weight(d, m, k);
        if (!(w > 0.0)) continue;
        const double c = w * subtree_mean(d, d.links[m.a + k], gpus);
        if (!(c > 0.0)) continue;
        cumulative += c;
        chosen = k;
        if (target < cumulative) break;
    }
    return chosen;
}

/// Sample of an Empirical/BlockBootstrap node picked with probability
/// x_i / sum_j x_j, from a uniform u: the first i whose running sum exceeds
/// u sum (binary search); -1 when every sample is 0.
ACESIM_HD double length_biased_sample(const DistributionView& d, const DistNode& node, double u) {
    const double* sums = d.data + node.a + node.b;
    const double total = sums[node.b - 1];
    if (!(total > 0.0)) return -1.0;
    const double target = u * total;  // < total: u <= 1 - 2^-53
    std::uint32_t lo = 0, hi = node.b - 1;
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (sums[mid] > target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return d.data[node.a + lo];
}

/// U of forward-recurrence draw n: sub-block kForwardSubBase, read only by
/// the kinds that need it.
ACESIM_HD double forward_multiplier(const Stream& s, std::uint32_t n) {
    return uniform_open(lo64(s.block(n, kForwardSubBase)));
}
}  // namespace detail

/// The n-th draw of `s` from the forward-recurrence law of `dist` (see the
/// table above), for a job of `gpus` GPUs. A pure function of (dist, s, n, gpus).
ACESIM_HD double draw_forward_recurrence(const DistributionView& dist, const Stream& s, std::uint32_t n,
                                         double gpus) {
    if (detail::subtree_has_replay(dist, dist.root)) return draw(dist, s, n, gpus);
    std::uint32_t node_index = dist.root;
    std::uint32_t sub = kForwardSubBase + 1;
    double factor = 1.0;
    for (;;) {
        const DistNode& node = dist.nodes[node_index];
        switch (node.kind) {
            case DistKind::Constant:
                return factor * (detail::forward_multiplier(s, n) * node.p0);
            case DistKind::Exponential:
                return factor * detail::exponential_value(node.p0, lo64(s.block(n, sub)));
            case DistKind::Weibull: {
                const double inv_shape = 1.0 / node.p0;
                const double g = detail::gamma_unit(1.0 + inv_shape, s, n, sub);
                return factor * (detail::forward_multiplier(s, n) * (node.p1 * pm::pow_pos(g, inv_shape)));
            }
            case DistKind::LogNormal: {
                const double z = detail::standard_normal(s, n, sub);
                return factor * (detail::forward_multiplier(s, n) *
                                 detail::lognormal_value(node.p0 + node.p1 * node.p1, node.p1, z));
            }
            case DistKind::Gamma:
                return factor * (detail::forward_multiplier(s, n) *
                                 (node.p1 * detail::gamma_unit(node.p0 + 1.0, s, n, sub)));
            case DistKind::Mixture: {
                const double u = uniform_open(lo64(s.block(n, sub++)));
                const std::uint32_t k = detail::length_biased_child(dist, node, gpus, u);
                if (k == node.b) return 0.0;  // all of its mass at 0
                node_index = dist.links[node.a + k];
                continue;
            }
            case DistKind::Empirical:
            case DistKind::BlockBootstrap: {
                const double u = uniform_open(lo64(s.block(n, sub++)));
                const double x = detail::length_biased_sample(dist, node, u);
                if (x < 0.0) return 0.0;  // every sample is 0
                return factor * (detail::forward_multiplier(s, n) * x);
            }
            case DistKind::Replay:
                return draw(dist, s, n, gpus);  // not reached: handled above
            case DistKind::ScaleAware:
                factor *= pm::pow_pos(node.p0 / gpus, node.p1);
                node_index = dist.links[node.a];
                continue;
        }
        return NAN;  // unknown kind: a corrupted table
    }
}

}  // namespace acesim
