// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; the Random123 family that cuRAND also uses) and the stream layout of
// acesim.
//
// A draw is a pure function of (seed, replica, stream, index): the seed is the
// key, and (sub, index, stream, replica) is the counter. Nothing depends on
// launch geometry, thread count or how a batch is split.
#pragma once

#include <cstdint>

#include "acesim/hd.hpp"
#include "acesim/portable_math.hpp"

namespace acesim {

/// 128-bit Philox counter or output block.
struct Block {
    std::uint32_t v[4];
};

/// 64-bit Philox key.
struct Key {
    std::uint32_t v[2];
};

namespace detail {
constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

ACESIM_HD void mulhilo32(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
    const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
    hi = static_cast<std::uint32_t>(p >> 32);
    lo = static_cast<std::uint32_t>(p);
}

ACESIM_HD Block philox_round(Block c, Key k) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo32(kPhiloxM0, c.v[0], hi0, lo0);
    mulhilo32(kPhiloxM1, c.v[2], hi1, lo1);
    Block out;
    out.v[0] = hi1 ^ c.v[1] ^ k.v[0];
    out.v[1] = lo1;
    out.v[2] = hi0 ^ c.v[3] ^ k.v[1];
    out.v[3] = lo0;
    return out;
}
}  // namespace detail

/// Philox4x32 with 10 rounds: the bijection of `counter` under `key`.
ACESIM_HD Block philox4x32_10(Block counter, Key key) {
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            key.v[0] += detail::kPhiloxW0;
            key.v[1] += detail::kPhiloxW1;
        }
        counter = detail::philox_round(counter, key);
    }
    return counter;
}

/// The 64-bit seed as a Philox key.
ACESIM_HD Key key_from_seed(std::uint64_t seed) {
    Key k;
    k.v[0] = static_cast<std::uint32_t>(seed);
    k.v[1] = static_cast<std::uint32_t>(seed >> 32);
    return k;
}

/// Exact uniform in (0, 1): 52 random bits, centred in their cell, so never 0
/// or 1 and `log(u)`, `log(1 - u)` are always finite. The value is
/// ((bits >> 12) + 0.5) * 2^-52, formed without an integer to double
/// conversion (AVX2 has none for 64-bit integers, so this form vectorizes):
/// the double with bits 0x433 | m is 2^52 + m, and subtracting 2^52 - 1/2
/// leaves m + 1/2 exactly.
ACESIM_HD double uniform_open(std::uint64_t bits) {
    const double two52_plus_m = pm::from_bits(0x4330000000000000ull | (bits >> 12));
    return (two52_plus_m - 4503599627370495.5) * 2.220446049250313080847263336181640625e-16;
}

/// Unbiased-enough index in [0, n) from 64 random bits (multiply-high; the
/// bias is below n / 2^64).
ACESIM_HD std::uint64_t bounded_index(std::uint64_t bits, std::uint64_t n) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(bits, n);
#else
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * n) >> 64);
#endif
}

/// One random stream of one replica: the n-th draw of the stream uses the
/// counters (sub, n, stream, replica) for sub = 0, 1, 2, ... as it needs.
struct Stream {
    Key key;
    std::uint32_t stream;
    std::uint32_t replica;

    /// 128 random bits for sub-block `sub` of draw `index`.
    ACESIM_HD Block block(std::uint32_t index, std::uint32_t sub) const {
        Block c;
        c.v[0] = sub;
        c.v[1] = index;
        c.v[2] = stream;
        c.v[3] = replica;
        return philox4x32_10(c, key);
    }
};

ACESIM_HD std::uint64_t lo64(const Block& b) {
    return static_cast<std::uint64_t>(b.v[0]) | (static_cast<std::uint64_t>(b.v[1]) << 32);
}
ACESIM_HD std::uint64_t hi64(const Block& b) {
    return static_cast<std::uint64_t>(b.v[2]) | (static_cast<std::uint64_t>(b.v[3]) << 32);
}

/// Stream identifiers: entity kind (4 bits) | entity id (24 bits) | purpose (4 bits).
/// Two runs that differ only in policy address every entity's draws the same way.
enum class EntityKind : std::uint32_t { Sampler = 0, Job = 1, Node = 2, Fleet = 3 };

enum class Purpose : std::uint32_t {
    Failure = 0,  ///< inter-failure times
    Init = 1,     ///< scheduling barrier, container/driver init, data staging
    Save = 2,     ///< checkpoint save latency
    Load = 3,     ///< checkpoint load latency
    Blame = 4,    ///< which node a job-level failure is blamed on
    Cause = 5,    ///< which cause a failure has
    Detect = 6,   ///< detection latency
    Repair = 7,   ///< node repair time
    Lemon = 8,    ///< whether a node is a lemon (one draw per node)
    /// Repair-pipeline decisions of a node (escalation, fix, misdiagnosis):
    /// sub-block 0 of draw d is its d-th misdiagnosis decision, sub-block
    /// 1 + s of draw k is stage s of its k-th pipeline repair (see repair.hpp).
    RepairOutcome = 9,
    Replace = 10,      ///< re-placement delays: a cold spare's acquisition (node), host selection (job)
    Persist = 11,      ///< background persist of an asynchronous checkpoint
    TierSave = 12,     ///< checkpoint tier writes (every tier of the job, in event order)
    TierLoad = 13,     ///< loads from a checkpoint tier
    Reconfigure = 14,  ///< an elastic job's reconfiguration at each shrink and grow
};

constexpr std::uint32_t kMaxEntityId = (1u << 24) - 1;

ACESIM_HD std::uint32_t stream_id(EntityKind kind, std::uint32_t entity, Purpose purpose) {
    return (static_cast<std::uint32_t>(kind) << 28) | ((entity & kMaxEntityId) << 4) |
           static_cast<std::uint32_t>(purpose);
}

}  // namespace acesim
