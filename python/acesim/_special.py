"""Special functions for the laws' cdf, sf and quantiles, in numpy only
(acesim does not require scipy; the tests compare these with it).

* ``ndtr(z)``: the standard normal cdf, from :func:`math.erfc` (full double
  precision, in both tails: ``ndtr(-z)`` is the upper tail of ``z``);
* ``ndtri(p, pc)``: its inverse, from whichever of ``p`` and its complement
  ``pc = 1 - p`` is smaller (so that both tails keep their relative
  precision): Acklam's rational approximation (relative error below 1.2e-9)
  refined by two Halley steps on :func:`math.erfc`;
* ``gamma_pq(a, x)``: the regularized incomplete gamma functions ``P(a, x)``
  and ``Q(a, x) = 1 - P(a, x)``, by the series of ``P`` for ``x < a + 1`` and
  the continued fraction of ``Q`` (modified Lentz) otherwise, each summed to
  double precision, so the smaller of the two keeps its relative precision
  (Numerical Recipes, 3rd ed., section 6.2);
* ``bisect(accept, n)``: the smallest double ``x >= 0`` at which a monotone
  condition holds, by bisection on the bit patterns of non-negative doubles
  (which are ordered as the values are): at most 63 steps, exact to the
  last double, for any law (the quantile of a law without a closed form).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_EPS = 2.0**-53
_TINY = 1e-300

_erfc = np.frompyfunc(math.erfc, 1, 1)


def erfc(x: FloatArray) -> FloatArray:
    """Complementary error function, elementwise (``math.erfc``)."""
    return np.asarray(_erfc(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def ndtr(z: FloatArray) -> FloatArray:
    """Standard normal cdf ``Phi(z)``; ``ndtr(-z)`` is the upper tail, as precise."""
    return 0.5 * erfc(-z / _SQRT2)


# Acklam's coefficients (central region, then tails).
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549671010229583e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (
    7.784695709041462e-03,
    3.224671290700398e-01,
    2.445134137142996e00,
    3.754408661907416e00,
)
_P_LOW = 0.02425


def _ndtri_lower(p: FloatArray) -> FloatArray:
    """``Phi^-1(p)`` for ``p`` in (0, 0.5], negative or 0."""
    out = np.empty_like(p)
    tail = p < _P_LOW
    if np.any(tail):
        q = np.sqrt(-2.0 * np.log(p[tail]))
        c, d = _C, _D
        num = ((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]
        den = (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0
        out[tail] = num / den
    mid = ~tail
    if np.any(mid):
        q = p[mid] - 0.5
        r = q * q
        a, b = _A, _B
        num = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
        den = ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0
        out[mid] = num / den
    # Halley steps on e = Phi(x) - p, with e / phi(x) formed in log space
    # (phi(x) underflows before p does).
    for _ in range(2):
        ratio = ndtr(out) / p - 1.0
        u = ratio * np.exp(np.log(p) + 0.5 * out * out + _LOG_SQRT_2PI)
        out = out - u / (1.0 + 0.5 * out * u)
    return np.minimum(out, 0.0)


def ndtri(p: FloatArray, pc: FloatArray) -> FloatArray:
    """``z`` with ``Phi(z) = p``, given ``p`` and ``pc = 1 - p`` (each computed
    as precisely as the caller can); ``-inf`` at ``p = 0``, ``inf`` at ``pc = 0``."""
    p = np.asarray(p, dtype=np.float64)
    pc = np.asarray(pc, dtype=np.float64)
    out = np.empty(np.broadcast(p, pc).shape)
    lower = p <= 0.5
    upper = ~lower
    for mask, v, sign in ((lower, p, 1.0), (upper, pc, -1.0)):
        if not np.any(mask):
            continue
        vv = np.broadcast_to(v, out.shape)[mask]
        z = np.full(vv.shape, -np.inf)
        positive = vv > 0.0
        if np.any(positive):
            z[positive] = _ndtri_lower(vv[positive])
        out[mask] = sign * z
    return out


def _max_terms(a: float) -> int:
    # Both expansions need O(sqrt(a)) terms near x = a (the terms decay as
    # exp(-n^2 / 2a)); this leaves a wide margin.
    return 64 + 24 * math.ceil(math.sqrt(a))


def gamma_pq(a: float, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(P(a, x), Q(a, x))`` for ``a > 0`` and ``x >= 0`` (``inf`` allowed)."""
    x = np.asarray(x, dtype=np.float64)
    p = np.zeros(x.shape)
    q = np.ones(x.shape)
    infinite = np.isinf(x)
    p[infinite] = 1.0
    q[infinite] = 0.0
    finite_pos = (x > 0.0) & ~infinite
    lg = math.lgamma(a)
    terms = _max_terms(a)

    ser = finite_pos & (x < a + 1.0)
    if np.any(ser):
        xs = x[ser]
        log_front = a * np.log(xs) - xs - lg - math.log(a)
        term = np.full(xs.shape, 1.0)
        total = term.copy()
        active = np.ones(xs.shape, dtype=np.bool_)
        denominator = a
        for _ in range(terms):
            denominator += 1.0
            term[active] *= xs[active] / denominator
            total[active] += term[active]
            active &= term > total * _EPS
            if not np.any(active):
                break
        ps = np.exp(log_front) * total
        p[ser] = ps
        q[ser] = 1.0 - ps

    cf = finite_pos & (x >= a + 1.0)
    if np.any(cf):
        xc = x[cf]
        log_front = a * np.log(xc) - xc - lg
        b = xc + 1.0 - a
        c = np.full(xc.shape, 1.0 / _TINY)
        d = 1.0 / b
        h = d.copy()
        active = np.ones(xc.shape, dtype=np.bool_)
        for i in range(1, terms + 1):
            an = -i * (i - a)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < _TINY, _TINY, d)
            c = b + an / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            d = 1.0 / d
            delta = d * c
            h = np.where(active, h * delta, h)
            active &= np.abs(delta - 1.0) > _EPS
            if not np.any(active):
                break
        qs = np.exp(log_front) * h
        q[cf] = qs
        p[cf] = 1.0 - qs
    return p, q


_INF_BITS = np.float64(np.inf).view(np.int64)


def bisect(accept: Callable[[FloatArray, BoolArray], BoolArray], n: int) -> FloatArray:
    """For ``n`` monotone conditions (false below some point, true from it
    on), the smallest double ``x >= 0`` at which each holds (``inf`` if only
    there). ``accept(x, which)`` evaluates the conditions selected by the
    mask ``which`` at ``x`` (an array of the selected size)."""
    everyone = np.ones(n, dtype=np.bool_)
    lo = np.zeros(n, dtype=np.int64)  # bits of 0.0: the condition fails there (checked)
    hi = np.full(n, _INF_BITS, dtype=np.int64)
    at_zero = accept(np.zeros(n), everyone)
    out_at_zero = at_zero.copy()
    active = ~at_zero
    while np.any(active):
        mid = lo[active] + (hi[active] - lo[active]) // 2
        ok = accept(mid.view(np.float64), active)
        lo_a, hi_a = lo[active], hi[active]
        hi_a = np.where(ok, mid, hi_a)
        lo_a = np.where(ok, lo_a, mid)
        lo[active], hi[active] = lo_a, hi_a
        active &= hi - lo > 1
    out = hi.view(np.float64).copy()
    out[out_at_zero] = 0.0
    return out
