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
    Weibull = 2,         ///< p0 = shape, p1 = scale
    LogNormal = 3,       ///< p0 = mu, p1 = sigma (of the underlying normal)
    Gamma = 4,           ///< p0 = shape, p1 = scale
    Mixture = 5,         ///< data[a, a+b) cumulative weights, links[a, a+b) children
    Empirical = 6,       ///< data[a, a+b) samples, resampled i.i.d.
    BlockBootstrap = 7,  ///< data[a, a+b) ordered history, p0 = block length
    Replay = 8,          ///< data[a, a+b) exact sequence; +inf after its end
    ScaleAware = 9,      ///< links[a] = base; p0 = ref_gpus, p1 = exponent
};

/// One node of a distribution tree.
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

}  // namespace acesim
