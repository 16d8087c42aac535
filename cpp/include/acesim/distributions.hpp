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

namespace detail {
constexpr double kTwoPi = 6.283185307179586476925286766559;

/// Standard normal from one 128-bit block (Box-Muller, cosine branch).
ACESIM_HD double normal_from_block(const Block& blk) {
    const double u1 = uniform_open(lo64(blk));
    const double u2 = uniform_open(hi64(blk));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

/// Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 by boosting with
/// U^(1/shape). Each attempt reads its own sub-blocks.
ACESIM_HD double gamma_unit(double shape, const Stream& s, std::uint32_t n, std::uint32_t& sub) {
    double boost = 1.0;
    if (shape < 1.0) {
        const double u = uniform_open(lo64(s.block(n, sub++)));
        boost = std::pow(u, 1.0 / shape);
        shape += 1.0;
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (std::uint32_t attempt = 0; attempt < kMaxGammaAttempts; ++attempt) {
        const Block blk = s.block(n, sub++);
        const double x = normal_from_block(blk);
        double v = 1.0 + c * x;
        if (v <= 0.0) continue;
        v = v * v * v;
        const double u = uniform_open(lo64(s.block(n, sub++)));
        if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * boost;
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
                return factor * (-node.p0 * std::log(uniform_open(lo64(s.block(n, sub)))));
            case DistKind::Weibull: {
                const double e = -std::log(uniform_open(lo64(s.block(n, sub))));
                return factor * (node.p1 * std::pow(e, 1.0 / node.p0));
            }
            case DistKind::LogNormal:
                return factor * std::exp(node.p0 + node.p1 * detail::normal_from_block(s.block(n, sub)));
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
                factor *= std::pow(node.p0 / gpus, node.p1);
                node_index = dist.links[node.a];
                continue;
        }
        return NAN;  // unknown kind: a corrupted table
    }
}

}  // namespace acesim
