// Portable elementary functions: one implementation of log, exp and a pow for
// positive bases, shared by the CPU core and the CUDA kernels, so that a draw
// is the same double on every IEEE-754 platform.
//
// libm's log/exp may differ in the last ulp between glibc, macOS and CUDA.
// These are fdlibm's algorithms (Sun Microsystems, 1993: e_log.c, e_exp.c; the
// same as Java's StrictMath), written with +, -, *, / and bit casts only. Those
// operations are correctly rounded everywhere, so the results are bit-identical
// as long as nothing is contracted into fused multiply-adds and there is no
// fast math and no x87 excess precision: the build uses -ffp-contract=off on
// the host and --fmad=false on the device. Subnormals must not be flushed to
// zero (no FTZ/DAZ), which is the default on both.
//
// Each function computes all of its paths and selects among them (no
// data-dependent control flow), so a loop over an array of arguments
// vectorizes, and the vectorized results are the same doubles as the scalar
// ones (tests/test_random.py, tests/test_portable_math.py).
#pragma once

#include <cstdint>
#include <cstring>

#include "acesim/hd.hpp"

namespace acesim {
namespace pm {

/// The IEEE-754 bits of x.
ACESIM_HD std::uint64_t to_bits(double x) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

/// The double whose IEEE-754 bits are `bits`.
ACESIM_HD double from_bits(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

namespace detail {
// fdlibm's constants; each decimal is the exact double of the hex word beside
// it (tests/test_portable_math.py checks them).
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 3fe62e42 fee00000
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 3dea39ef 35793c76
constexpr double kTwo54 = 1.80143985094819840000e+16;  // 43500000 00000000
constexpr double kLg1 = 6.666666666666735130e-01;      // 3FE55555 55555593
constexpr double kLg2 = 3.999999999940941908e-01;      // 3FD99999 9997FA04
constexpr double kLg3 = 2.857142874366239149e-01;      // 3FD24924 94229359
constexpr double kLg4 = 2.222219843214978396e-01;      // 3FCC71C5 1D8E78AF
constexpr double kLg5 = 1.818357216161805012e-01;      // 3FC74664 96CB03DE
constexpr double kLg6 = 1.531383769920937332e-01;      // 3FC39A09 D078C69F
constexpr double kLg7 = 1.479819860511658591e-01;      // 3FC2F112 DF3E5244

constexpr double kExpOverflow = 7.09782712893383973096e+02;    // 40862E42 FEFA39EF
constexpr double kExpUnderflow = -7.45133219101941108420e+02;  // c0874910 D52D3051
constexpr double kInvLn2 = 1.44269504088896338700e+00;         // 3ff71547 652b82fe
constexpr double kP1 = 1.66666666666666019037e-01;             // 3FC55555 5555553E
constexpr double kP2 = -2.77777777770155933842e-03;            // BF66C16C 16BEBD93
constexpr double kP3 = 6.61375632143793436117e-05;             // 3F11566A AF25DE2C
constexpr double kP4 = -1.65339022054652515390e-06;            // BEBBBD41 C5D26BF1
constexpr double kP5 = 4.13813679705723846039e-08;             // 3E663769 72BEA4D0
constexpr double kTwoM1000 = 9.33263618503218878990e-302;      // 01700000 00000000

constexpr std::uint64_t kPosInf = 0x7ff0000000000000ull;
constexpr std::uint64_t kNegInf = 0xfff0000000000000ull;
constexpr std::uint64_t kQuietNaN = 0x7ff8000000000000ull;

/// c ? a : b through bit masks: compilers may turn ?: into a branch, which
/// mispredicts in scalar code where c is data-dependent; bit operations stay
/// branch-free there, and vectorize.
ACESIM_HD double select(bool c, double a, double b) {
    const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(c);
    return from_bits((to_bits(a) & mask) | (to_bits(b) & ~mask));
}

// Conversions between doubles and integers below 2^31 in magnitude through
// the 2^52 + 2^51 trick: exact, and they vectorize where conversions between
// doubles and 64-bit integers do not (x86 before AVX-512).
constexpr double kRoundMagic = 6755399441055744.0;                // 2^52 + 2^51: ulp 1
constexpr std::uint64_t kRoundMagicBits = 0x4338000000000000ull;  // its bits

/// (double)k, for |k| < 2^31.
ACESIM_HD double small_int_to_double(std::int64_t k) {
    return from_bits(kRoundMagicBits + static_cast<std::uint64_t>(k)) - kRoundMagic;
}

/// k for a double holding an integer k, |k| < 2^31.
ACESIM_HD std::int64_t small_double_to_int(double k) {
    return static_cast<std::int64_t>(to_bits(k + kRoundMagic) - kRoundMagicBits);
}

/// floor(a) for 0 <= a < 2^51, exactly: a rounded to an integer by the
/// 2^52 + 2^51 trick, minus one where that rounded up. Branch-free and
/// vectorizable (a conversion to int would not vectorize without AVX-512).
ACESIM_HD double floor_non_negative(double a) {
    const double nearest = (a + kRoundMagic) - kRoundMagic;
    return nearest - select(nearest > a, 1.0, 0.0);
}

/// fdlibm's log of a positive normal finite x, plus k_bias ln2 (the scaling of
/// a subnormal argument). x is reduced to 2^k (1 + f) with 1 + f in
/// [sqrt(2)/2, sqrt(2)) by exponent bit manipulation; log(1 + f) =
/// f - f^2/2 + s (f^2/2 + R(s^2)) with s = f/(2+f) and R the Lg1..Lg7
/// polynomial; k ln2 is added as k ln2_hi (exact) plus k ln2_lo.
ACESIM_HD double log_reduced(double x, std::int64_t k_bias) {
    const std::uint64_t bits = to_bits(x);
    const std::int64_t hx_full = static_cast<std::int64_t>((bits >> 32) & 0x7fffffff);
    const std::int64_t hx = hx_full & 0x000fffff;  // top 20 bits of the mantissa
    // i = 0x100000 when the mantissa is >= sqrt(2): then use x/2 and k + 1.
    const std::int64_t i = (hx + 0x95f64) & 0x100000;
    const std::int64_t k = (hx_full >> 20) - 1023 + (i >> 20) + k_bias;
    const double reduced =
        from_bits((static_cast<std::uint64_t>(hx | (i ^ 0x3ff00000)) << 32) | (bits & 0xffffffffull));
    const double f = reduced - 1.0;
    const double dk = small_int_to_double(k);

    // |f| < 2^-20: a short series.
    const double r_small_series = f * f * (0.5 - 0.33333333333333333 * f);
    const double r_small = dk * kLn2Hi - ((r_small_series - dk * kLn2Lo) - f);

    // Otherwise the Lg polynomial in s = f / (2 + f).
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double w = z * z;
    const double t1 = w * (kLg2 + w * (kLg4 + w * kLg6));
    const double t2 = z * (kLg1 + w * (kLg3 + w * (kLg5 + w * kLg7)));
    const double R = t2 + t1;
    const double hfsq = 0.5 * f * f;
    const double r_mid = dk * kLn2Hi - ((hfsq - (s * (hfsq + R) + dk * kLn2Lo)) - f);
    const double r_edge = dk * kLn2Hi - ((s * (f - R) - dk * kLn2Lo) - f);

    // fdlibm's path choice (its k == 0 forms are the same doubles as these
    // with dk = 0). Every select tests one comparison, which keeps the
    // function vectorizable.
    const bool small = ((2 + hx) & 0x000fffff) < 3;          // |f| < 2^-20
    const bool mid = ((hx - 0x6147a) | (0x6b851 - hx)) > 0;  // 0x6147a <= hx <= 0x6b851
    const double r = mid ? r_mid : r_edge;
    return small ? r_small : r;
}
}  // namespace detail

/// Natural logarithm: fdlibm's __ieee754_log, error below 1 ulp.
/// log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN.
ACESIM_HD double log(double x) {
    using namespace detail;
    // Subnormals: scale into the normal range first, as fdlibm does.
    const bool subnormal = x < 2.2250738585072014e-308;  // also true for 0 and x < 0
    const double xs = x * (subnormal ? kTwo54 : 1.0);
    double r = log_reduced(xs, subnormal ? -54 : 0);

    // Special values last, so that the arithmetic above stays branch-free.
    double special = x + x;  // +inf -> +inf, NaN -> NaN
    special = (x < 0.0) ? from_bits(kQuietNaN) : special;
    special = (x == 0.0) ? from_bits(kNegInf) : special;  // +-0 -> -inf
    r = (x < from_bits(kPosInf)) ? r : special;
    r = (x > 0.0) ? r : special;
    return r;
}

/// log(x) for a positive normal finite x (2^-1022 <= x < inf), without the
/// special-value handling: the same double as log(x) there, a little
/// cheaper. For arguments known to be in range (uniforms, their logs).
ACESIM_HD double log_positive_normal(double x) { return detail::log_reduced(x, 0); }

/// Exponential: fdlibm's __ieee754_exp, error below 1 ulp. x = k ln2 + r with
/// |r| <= ln2/2 (r carried as hi - lo); exp(r) = 1 + 2r / (2 - R'(r)) with the
/// P1..P5 polynomial; the result is scaled by 2^k through its exponent bits.
/// exp(x > 709.78...) = +inf, exp(x < -745.13...) = +0, NaN -> NaN.
ACESIM_HD double exp(double x) {
    using namespace detail;
    const double abs_x = from_bits(to_bits(x) & 0x7fffffffffffffffull);

    // Argument reduction: k = 0 for |x| <= ln2/2, else x / ln2 rounded half
    // away from zero. fdlibm tests the high word of |x| (hx > 0x3fd62e42),
    // which is this test on the double; its separate k = +-1 branch for
    // |x| < 1.5 ln2 (hx < 0x3FF0A2B2) gives the same k, hi and lo as the
    // general one (floor(|x| / ln2 + 1/2) is 1 on that whole range).
    // fdlibm's (int)(x / ln2 +- 1/2) is sign(x) floor(|x| / ln2 + 1/2), the
    // same double (IEEE rounding is symmetric), computed here without a
    // conversion to int; k is carried as a double (exact). Out-of-range and
    // NaN arguments compute garbage (never undefined behaviour: no
    // conversions) that the selects at the end replace.
    const bool beyond_half_ln2 = abs_x > from_bits(0x3fd62e42ffffffffull);
    const double k_abs = detail::floor_non_negative(kInvLn2 * abs_x + 0.5);
    const double k_far = select(x < 0.0, -k_abs, k_abs);
    const double t = select(beyond_half_ln2, k_far, 0.0);
    const double hi = x - t * kLn2Hi;  // exact: t * ln2_hi has 21 trailing zero bits
    const double lo = t * kLn2Lo;
    const double r = hi - lo;

    const double rr = r * r;
    const double c = r - rr * (kP1 + rr * (kP2 + rr * (kP3 + rr * (kP4 + rr * kP5))));
    // fdlibm's k == 0 form, 1 - ((r c) / (c - 2) - r), is this double with
    // hi = r and lo = 0.
    const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);

    // y * 2^k by adding k to the exponent; below 2^-1021 in two steps so that
    // subnormal results round once.
    const bool normal_result = t >= -1021.0;
    const std::int64_t shift = detail::small_double_to_int(normal_result ? t : t + 1000.0);
    const double scaled = from_bits(to_bits(y) + (static_cast<std::uint64_t>(shift) << 52));
    double result = scaled * (normal_result ? 1.0 : kTwoM1000);

    result = (abs_x < 3.7252902984619140625e-09) ? 1.0 + x : result;  // |x| < 2^-28
    result = (x > kExpOverflow) ? from_bits(kPosInf) : result;
    result = (x < kExpUnderflow) ? 0.0 : result;
    result = (x != x) ? x + x : result;
    return result;
}

/// x^y for x > 0 (and y finite), as exp(y log(x)); y == 1 gives x exactly.
///
/// Error bound: log and exp are each within 1 ulp, and y * log(x) rounds once;
/// exp turns the absolute error of y log(x) into a relative one, so
///     |pow_pos(x, y) / x^y - 1| < (1 + 1.5 |y ln x|) 2^-52
/// (plus second-order terms), i.e. at most 2 + 3 |y ln x| ulp: a few ulp for
/// moderate exponents, more where x^y is far from 1 (tests/test_portable_math.py
/// measures at most 0.67 of this bound, e.g. ~1000 ulp at |y ln x| ~ 700,
/// against long double). Not for x <= 0: log gives -inf or NaN there.
ACESIM_HD double pow_pos(double x, double y) {
    const double p = pm::exp(y * pm::log(x));
    return y == 1.0 ? x : p;
}

/// pow_pos(x, y) for a positive normal finite x: the same double, a little
/// cheaper (log_positive_normal).
ACESIM_HD double pow_positive_normal(double x, double y) {
    const double p = pm::exp(y * pm::log_positive_normal(x));
    return y == 1.0 ? x : p;
}

}  // namespace pm
}  // namespace acesim
