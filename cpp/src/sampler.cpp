#include "acesim/sampler.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

// x86-64 kernels (AVX2, AVX-512) chosen at run time; elsewhere, or with
// -DACESIM_X86_DISPATCH=0, only the portable kernel is built.
#if !defined(ACESIM_X86_DISPATCH)
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ACESIM_X86_DISPATCH 1
#else
#define ACESIM_X86_DISPATCH 0
#endif
#endif
#if ACESIM_X86_DISPATCH
#include <immintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ACESIM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ACESIM_ALWAYS_INLINE inline
#endif

namespace acesim {

unsigned resolve_threads(unsigned threads, std::uint64_t work_items, std::uint64_t min_items_per_thread) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t useful =
        std::max<std::uint64_t>(1, work_items / std::max<std::uint64_t>(1, min_items_per_thread));
    return static_cast<unsigned>(std::min<std::uint64_t>(threads, useful));
}

namespace {

// The batch path for leaf laws (and ScaleAware chains over them) computes a
// pass of draws stage by stage: the Philox blocks of every draw of the pass,
// then each transform as one loop over the pass. The loops vectorize, and
// every stage calls the same functions as draw() (uniform_open, the leaf
// functions of distributions.hpp, acesim::pm), whose operations are all
// correctly rounded IEEE operations, so the draws are the same doubles as
// draw()'s, bit for bit (tests/test_random.py checks every law).

/// Draws per pass: a pass's scratch (PassBuffers, 13 KiB) stays in L1.
constexpr std::uint32_t kPass = 256;

/// A leaf law as the batch path evaluates it.
struct Leaf {
    DistKind kind;
    double factor;          ///< product of the ScaleAware factors above the leaf, as draw() forms it
    double p0;              ///< Exponential: mean; Weibull: 1 / shape; LogNormal: mu; Constant: value
    double p1;              ///< Weibull: scale; LogNormal: sigma
    const double* data;     ///< Empirical samples
    std::uint64_t samples;  ///< Empirical sample count
};

/// Whether draws of `dist` at `gpus` are a leaf law times a constant factor,
/// and that leaf.
bool batch_leaf(const DistributionView& dist, double gpus, Leaf& leaf) {
    std::uint32_t index = dist.root;
    double factor = 1.0;
    for (;;) {
        const DistNode& node = dist.nodes[index];
        if (node.kind != DistKind::ScaleAware) break;
        factor *= pm::pow_pos(node.p0 / gpus, node.p1);  // the same product as draw()'s
        index = dist.links[node.a];
    }
    const DistNode& node = dist.nodes[index];
    leaf = Leaf{node.kind, factor, node.p0, node.p1, dist.data + node.a, node.b};
    switch (node.kind) {
        case DistKind::Weibull:
            leaf.p0 = 1.0 / node.p0;
            return true;
        case DistKind::Constant:
        case DistKind::Exponential:
        case DistKind::LogNormal:
        case DistKind::Empirical:
            return true;
        default:
            return false;
    }
}

/// Philox words of sub-block `sub` of draws index[0 .. count): lo[j] and
/// hi[j] are lo64 and hi64 of draw index[j]'s block. The portable form; the
/// compiler vectorizes it where it can.
void philox_pass_portable(const Stream& s, std::uint32_t sub, const std::uint32_t* __restrict index,
                          std::uint32_t count, std::uint64_t* __restrict lo, std::uint64_t* __restrict hi) {
    for (std::uint32_t j = 0; j < count; ++j) {
        const Block b = s.block(index[j], sub);
        lo[j] = lo64(b);
        hi[j] = hi64(b);
    }
}

/// Scratch of one pass.
struct PassBuffers {
    std::uint32_t index[kPass];  ///< draw index of each lane
    std::uint64_t lo[kPass];     ///< Philox words of each lane's block
    std::uint64_t hi[kPass];
    double z[kPass];               ///< LogNormal: the standard normal of each draw
    double s[kPass];               ///< LogNormal: polar candidates' u^2 + v^2
    double retry_z[kPass];         ///< LogNormal: normals of the lanes being retried
    std::uint32_t pending[kPass];  ///< LogNormal: lanes whose candidates were all rejected so far
    std::uint32_t retry_index[kPass];
};

/// Standard normals of the pass's draws, as detail::standard_normal computes
/// them: the polar method's first attempt (sub-block 0, already in b.lo/b.hi)
/// for every lane at once, then further attempts (sub-blocks 1, 2, ...) for
/// the lanes still rejected (about one in five, then one in twenty-five...),
/// gathered so that those loops vectorize too.
template <class Philox>
ACESIM_ALWAYS_INLINE void standard_normals(const Stream& st, std::uint32_t count, PassBuffers& b,
                                           Philox philox) {
    for (std::uint32_t j = 0; j < count; ++j) {
        const detail::PolarCandidate c = detail::polar_candidate(b.lo[j], b.hi[j]);
        b.z[j] = detail::polar_normal(c.u, c.s);  // garbage where rejected; replaced below
        b.s[j] = c.s;
    }
    std::uint32_t pending = 0;
    for (std::uint32_t j = 0; j < count; ++j)
        if (!detail::polar_accepts(b.s[j])) b.pending[pending++] = j;
    for (std::uint32_t attempt = 1; pending > 0 && attempt < kMaxNormalAttempts; ++attempt) {
        for (std::uint32_t r = 0; r < pending; ++r) b.retry_index[r] = b.index[b.pending[r]];
        philox(st, attempt, b.retry_index, pending, b.lo, b.hi);
        for (std::uint32_t r = 0; r < pending; ++r) {
            const detail::PolarCandidate c = detail::polar_candidate(b.lo[r], b.hi[r]);
            b.retry_z[r] = detail::polar_normal(c.u, c.s);
            b.s[r] = c.s;
        }
        std::uint32_t still = 0;
        for (std::uint32_t r = 0; r < pending; ++r) {
            if (detail::polar_accepts(b.s[r]))
                b.z[b.pending[r]] = b.retry_z[r];
            else
                b.pending[still++] = b.pending[r];
        }
        pending = still;
    }
    for (std::uint32_t r = 0; r < pending; ++r) b.z[b.pending[r]] = 0.0;  // as standard_normal gives up
}

/// Draws index[0 .. count) of a leaf into out, once their sub-block 0
/// Philox words are in b.lo/b.hi.
template <class Philox>
ACESIM_ALWAYS_INLINE void leaf_pass(const Leaf& leaf, const Stream& st, std::uint32_t count, PassBuffers& b,
                                    double* __restrict out, Philox philox) {
    const double factor = leaf.factor;
    switch (leaf.kind) {
        case DistKind::Exponential: {
            const double mean = leaf.p0;
            for (std::uint32_t j = 0; j < count; ++j)
                out[j] = factor * detail::exponential_value(mean, b.lo[j]);
            return;
        }
        case DistKind::Weibull: {
            const double inv_shape = leaf.p0, scale = leaf.p1;
            for (std::uint32_t j = 0; j < count; ++j)
                out[j] = factor * detail::weibull_value(inv_shape, scale, b.lo[j]);
            return;
        }
        case DistKind::LogNormal: {
            standard_normals(st, count, b, philox);
            const double mu = leaf.p0, sigma = leaf.p1;
            for (std::uint32_t j = 0; j < count; ++j)
                out[j] = factor * detail::lognormal_value(mu, sigma, b.z[j]);
            return;
        }
        case DistKind::Empirical:
            for (std::uint32_t j = 0; j < count; ++j)
                out[j] = factor * leaf.data[bounded_index(b.lo[j], leaf.samples)];
            return;
        default:  // Constant draws nothing (see leaf_draws)
            return;
    }
}

/// Draws first .. first + count - 1 of a leaf into out, pass by pass.
template <class Philox>
ACESIM_ALWAYS_INLINE void leaf_draws(const Leaf& leaf, const Stream& st, std::uint32_t first,
                                     std::uint64_t count, double* out, Philox philox) {
    if (leaf.kind == DistKind::Constant) {  // nothing to draw
        for (std::uint64_t i = 0; i < count; ++i) out[i] = leaf.factor * leaf.p0;
        return;
    }
    PassBuffers b;
    for (std::uint64_t done = 0; done < count; done += kPass) {
        const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kPass, count - done));
        const std::uint32_t at = first + static_cast<std::uint32_t>(done);
        for (std::uint32_t j = 0; j < n; ++j) b.index[j] = at + j;  // wraps like draw()'s uint32 index
        philox(st, 0, b.index, n, b.lo, b.hi);
        leaf_pass(leaf, st, n, b, out + done, philox);
    }
}

void leaf_draws_portable(const Leaf& leaf, const Stream& s, std::uint32_t first, std::uint64_t count,
                         double* out) {
    leaf_draws(leaf, s, first, count, out, philox_pass_portable);
}

#if ACESIM_X86_DISPATCH
// x86-64: Philox with explicit 32x32->64 multiplies (vpmuludq), which
// compilers do not find on their own, and the transforms compiled for AVX2
// and AVX-512. The FP results are the same: no FMA contraction
// (-ffp-contract=off holds for every target) and IEEE operations only.

/// As philox_pass_portable, 8 draws at a time in two interleaved groups of
/// four 64-bit lanes; each lane holds one 32-bit Philox word in its low
/// half (the high half may carry garbage, which vpmuludq ignores).
__attribute__((target("avx2"))) void philox_pass_avx2(const Stream& s, std::uint32_t sub,
                                                      const std::uint32_t* __restrict index,
                                                      std::uint32_t count, std::uint64_t* __restrict lo,
                                                      std::uint64_t* __restrict hi) {
    const __m256i low32 = _mm256_set1_epi64x(0xffffffffll);
    const __m256i m0 = _mm256_set1_epi64x(detail::kPhiloxM0);
    const __m256i m1 = _mm256_set1_epi64x(detail::kPhiloxM1);
    __m256i k0[10], k1[10];
    Key key = s.key;
    for (int round = 0; round < 10; ++round) {
        k0[round] = _mm256_set1_epi64x(key.v[0]);
        k1[round] = _mm256_set1_epi64x(key.v[1]);
        key.v[0] += detail::kPhiloxW0;
        key.v[1] += detail::kPhiloxW1;
    }
    const __m256i c0 = _mm256_set1_epi64x(sub);
    const __m256i c2 = _mm256_set1_epi64x(s.stream);
    const __m256i c3 = _mm256_set1_epi64x(s.replica);
    std::uint32_t j = 0;
    for (; j + 8 <= count; j += 8) {
        __m256i a0 = c0, a2 = c2, a3 = c3;
        __m256i b0 = c0, b2 = c2, b3 = c3;
        __m256i a1 = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(index + j)));
        __m256i b1 = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(index + j + 4)));
        for (int round = 0; round < 10; ++round) {
            const __m256i pa0 = _mm256_mul_epu32(a0, m0), pa1 = _mm256_mul_epu32(a2, m1);
            const __m256i pb0 = _mm256_mul_epu32(b0, m0), pb1 = _mm256_mul_epu32(b2, m1);
            a0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa1, 32), a1), k0[round]);
            a2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa0, 32), a3), k1[round]);
            a1 = pa1;
            a3 = pa0;
            b0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb1, 32), b1), k0[round]);
            b2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb0, 32), b3), k1[round]);
            b1 = pb1;
            b3 = pb0;
        }
        // lo64 = (word0 mod 2^32) | word1 << 32; hi64 likewise from words 2, 3.
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + j),
                            _mm256_or_si256(_mm256_and_si256(a0, low32), _mm256_slli_epi64(a1, 32)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + j + 4),
                            _mm256_or_si256(_mm256_and_si256(b0, low32), _mm256_slli_epi64(b1, 32)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + j),
                            _mm256_or_si256(_mm256_and_si256(a2, low32), _mm256_slli_epi64(a3, 32)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + j + 4),
                            _mm256_or_si256(_mm256_and_si256(b2, low32), _mm256_slli_epi64(b3, 32)));
    }
    for (; j < count; ++j) {
        const Block b = s.block(index[j], sub);
        lo[j] = lo64(b);
        hi[j] = hi64(b);
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_epi32() (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// As philox_pass_avx2, 16 draws at a time in 512-bit registers.
__attribute__((target("avx512f"))) void philox_pass_avx512(const Stream& s, std::uint32_t sub,
                                                           const std::uint32_t* __restrict index,
                                                           std::uint32_t count, std::uint64_t* __restrict lo,
                                                           std::uint64_t* __restrict hi) {
    const __m512i low32 = _mm512_set1_epi64(0xffffffffll);
    const __m512i m0 = _mm512_set1_epi64(detail::kPhiloxM0);
    const __m512i m1 = _mm512_set1_epi64(detail::kPhiloxM1);
    __m512i k0[10], k1[10];
    Key key = s.key;
    for (int round = 0; round < 10; ++round) {
        k0[round] = _mm512_set1_epi64(key.v[0]);
        k1[round] = _mm512_set1_epi64(key.v[1]);
        key.v[0] += detail::kPhiloxW0;
        key.v[1] += detail::kPhiloxW1;
    }
    const __m512i c0 = _mm512_set1_epi64(sub);
    const __m512i c2 = _mm512_set1_epi64(s.stream);
    const __m512i c3 = _mm512_set1_epi64(s.replica);
    std::uint32_t j = 0;
    for (; j + 16 <= count; j += 16) {
        __m512i a0 = c0, a2 = c2, a3 = c3;
        __m512i b0 = c0, b2 = c2, b3 = c3;
        __m512i a1 = _mm512_maskz_cvtepu32_epi64(
            0xff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + j)));
        __m512i b1 = _mm512_maskz_cvtepu32_epi64(
            0xff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + j + 8)));
        for (int round = 0; round < 10; ++round) {
            const __m512i pa0 = _mm512_mul_epu32(a0, m0), pa1 = _mm512_mul_epu32(a2, m1);
            const __m512i pb0 = _mm512_mul_epu32(b0, m0), pb1 = _mm512_mul_epu32(b2, m1);
            a0 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(pa1, 32), a1), k0[round]);
            a2 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(pa0, 32), a3), k1[round]);
            a1 = pa1;
            a3 = pa0;
            b0 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(pb1, 32), b1), k0[round]);
            b2 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(pb0, 32), b3), k1[round]);
            b1 = pb1;
            b3 = pb0;
        }
        _mm512_storeu_si512(lo + j, _mm512_or_si512(_mm512_and_si512(a0, low32), _mm512_slli_epi64(a1, 32)));
        _mm512_storeu_si512(lo + j + 8,
                            _mm512_or_si512(_mm512_and_si512(b0, low32), _mm512_slli_epi64(b1, 32)));
        _mm512_storeu_si512(hi + j, _mm512_or_si512(_mm512_and_si512(a2, low32), _mm512_slli_epi64(a3, 32)));
        _mm512_storeu_si512(hi + j + 8,
                            _mm512_or_si512(_mm512_and_si512(b2, low32), _mm512_slli_epi64(b3, 32)));
    }
    for (; j < count; ++j) {
        const Block b = s.block(index[j], sub);
        lo[j] = lo64(b);
        hi[j] = hi64(b);
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2"))) void leaf_draws_avx2(const Leaf& leaf, const Stream& s, std::uint32_t first,
                                                     std::uint64_t count, double* out) {
    leaf_draws(leaf, s, first, count, out, philox_pass_avx2);
}

__attribute__((target("avx512f"))) void leaf_draws_avx512(const Leaf& leaf, const Stream& s,
                                                          std::uint32_t first, std::uint64_t count,
                                                          double* out) {
    leaf_draws(leaf, s, first, count, out, philox_pass_avx512);
}
#endif

using LeafDraws = void (*)(const Leaf&, const Stream&, std::uint32_t, std::uint64_t, double*);

/// The leaf batch kernel for this CPU, or nullptr for draw() on every draw.
/// ACESIM_CPU_SAMPLER (read once) caps the choice, for tests and for
/// measuring: "draw", "portable", "avx2" or "avx512"; a level the CPU lacks
/// falls back to the best one below it.
LeafDraws select_leaf_draws() {
    const char* env = std::getenv("ACESIM_CPU_SAMPLER");
    const std::string cap = env ? env : "";
    if (cap == "draw") return nullptr;
#if ACESIM_X86_DISPATCH
    if (cap != "portable") {
        if (cap != "avx2" && __builtin_cpu_supports("avx512f")) return leaf_draws_avx512;
        if (__builtin_cpu_supports("avx2")) return leaf_draws_avx2;
    }
#endif
    return leaf_draws_portable;
}

}  // namespace

void draw_range(const DistributionView& dist, const Stream& stream, std::uint32_t first, std::uint64_t count,
                double gpus, double* out) {
    static const LeafDraws leaf_draws_here = select_leaf_draws();
    Leaf leaf;
    if (leaf_draws_here && batch_leaf(dist, gpus, leaf)) {
        leaf_draws_here(leaf, stream, first, count, out);
        return;
    }
    for (std::uint64_t i = 0; i < count; ++i)
        out[i] = draw(dist, stream, static_cast<std::uint32_t>(first + i), gpus);
}

void sample_cpu(const Distribution& dist, const SampleRequest& request, double* out, std::uint64_t count,
                unsigned threads, const CancelFlag* cancel) {
    const DistributionView view = dist.view();
    const Stream stream{key_from_seed(request.seed), request.stream, request.replica};
    // Below this many draws a thread costs more than it saves.
    constexpr std::uint64_t kMinDrawsPerThread = 4096;
    // Blocks of draws between polls of the cancel flag (the same draws
    // either way: each is a pure function of its index).
    constexpr std::uint64_t kBlock = 1u << 16;  // at most ~7 ms of the slowest law
    parallel_for(
        count, threads, kMinDrawsPerThread,
        [&](std::uint64_t begin, std::uint64_t end) {
            for (std::uint64_t at = begin; at < end; at += kBlock) {
                if (cancel_requested(cancel)) return;
                const std::uint64_t n = end - at < kBlock ? end - at : kBlock;
                draw_range(view, stream, static_cast<std::uint32_t>(request.first + at), n, request.gpus,
                           out + at);
            }
        },
        cancel);
    throw_if_cancelled(cancel);
}

void philox_blocks(std::uint64_t seed, std::uint32_t replica, std::uint32_t stream, std::uint32_t first,
                   std::uint32_t* out, std::uint64_t count) {
    const Stream s{key_from_seed(seed), stream, replica};
    for (std::uint64_t i = 0; i < count; ++i) {
        const Block b = s.block(static_cast<std::uint32_t>(first + i), 0);
        for (int w = 0; w < 4; ++w) out[4 * i + w] = b.v[w];
    }
}

}  // namespace acesim
