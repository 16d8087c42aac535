"""Closed forms for asynchronous and two-level checkpoints under exponential
failures (the lifecycle semantics of asynchronous persist and multi-level
tiers), extending :mod:`acesim.analytic`'s Young/Daly expectations.

Failures strike at rate l = 1/mtbf whenever the job holds hardware (starts,
compute, checkpoint writes, persist waits); every start, the first included,
costs its restart time and is itself vulnerable. Durations are seconds.
Nothing here needs the compiled core.

>>> round(async_checkpoint_cost(30.0, 900.0, 600.0), 6)
330.0
>>> w = expected_wall_async_exponential(3600.0, 7200.0, 600.0, 30.0, 0.0, 120.0)
>>> sync = expected_wall_two_level_exponential(3600.0, 7200.0, 600.0, 5.0, 10.0,
...                                            600.0, 30.0, 120.0)
>>> abs(w - sync) < 1e-9 * w
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._validation import finite, number_array, positive, real

__all__ = [
    "TwoLevelIntervals",
    "async_checkpoint_cost",
    "async_optimal_interval",
    "expected_wall_async_exponential",
    "expected_wall_two_level_exponential",
    "two_level_optimal_intervals",
]

Number = float | npt.NDArray[np.float64]
Array = npt.NDArray[np.float64]

#: Relative tolerance of "durable_interval is a multiple of tier_interval"
#: (the lifecycle's tolerance for coinciding boundaries).
_MULTIPLE_RTOL = 1e-9


# --------------------------------------------------------------------------- validation


_array = number_array


def _broadcast(**arrays: Array) -> list[Array]:
    """The arrays broadcast together, or a ValueError naming their shapes."""
    try:
        return [np.asarray(a) for a in np.broadcast_arrays(*arrays.values())]
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"arguments do not broadcast together: {shapes}") from None


def _out(x: Any) -> Number:
    return float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=np.float64)


def _scalar_mtbf(mtbf: Any) -> float:
    """A scalar mtbf > 0; inf (no failures) allowed."""
    m = real("mtbf", mtbf)
    if math.isnan(m) or m <= 0.0:
        raise ValueError(f"mtbf must be > 0, got {m!r}")
    return m


def _non_negative(name: str, value: Any) -> float:
    x = finite(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return x


# --------------------------------------------------------------------------- building blocks


def _segments(work: Array, interval: Array) -> tuple[Array, Array]:
    """Segment count of ``work`` at ``interval`` (the last may be shorter) and
    the last segment's length, as the core's ``segment_count``."""
    n = np.maximum(np.ceil(work / interval), 1.0)
    n = np.where((n > 1.0) & ((n - 1.0) * interval >= work), n - 1.0, n)
    return n, work - (n - 1.0) * interval


def _attempt(rate: Array, first: Array, retry: Array) -> Array:
    """Expected time to get through a stretch whose first attempt lasts
    ``first`` and whose every retry after a failure lasts ``retry`` (the
    restart included), failures at ``rate``: (1 - e^(-l first)) e^(l retry) / l.

    A failure in the first attempt (probability 1 - e^(-l first)) costs the
    expected time of a fresh run of ``retry`` seconds, (e^(l retry) - 1)/l;
    the time spent in the first attempt is E[min(X, first)] =
    (1 - e^(-l first))/l; the two add up to the expression."""
    return -np.expm1(-rate * first) * np.exp(rate * retry) / rate


# --------------------------------------------------------------------------- asynchronous


def async_checkpoint_cost(save: Number, persist: Number, checkpoint_interval: Number) -> Number:
    """Effective blocking cost of one asynchronous checkpoint in steady state:
    the snapshot plus the wait for the previous persist when it outlasts the
    interval, ``save + max(0, persist - checkpoint_interval)``.

    >>> async_checkpoint_cost([30.0, 30.0], [300.0, 900.0], 600.0).tolist()
    [30.0, 330.0]
    """
    s, p, t = _broadcast(
        save=_array("save", save, allow_zero=True),
        persist=_array("persist", persist, allow_zero=True),
        checkpoint_interval=_array("checkpoint_interval", checkpoint_interval),
    )
    return _out(s + np.maximum(0.0, p - t))


def expected_wall_async_exponential(
    mtbf: Number,
    work: Number,
    checkpoint_interval: Number,
    save: Number,
    persist: Number,
    restart_cost: Number,
) -> Number:
    """Expected wall-clock of a job with asynchronous checkpoints under
    exponential failures (rate l = 1/mtbf while the job holds hardware), every
    start costing R = ``restart_cost``; snapshot S = ``save``, persist
    P = ``persist``, interval tau; exact under the lifecycle semantics
    (durable when the persist ends, at most one persist in flight, done when
    the final persist ends).

    Segments s_1 .. s_n of ``work`` at tau (the last may be shorter)::

        E[wall] = sum over k of (1 - e^(-l y_k)) e^(l z_k) / l
        y_1 = z_1 = R + s_1 + S + P
        y_k = S + max(s_k, P),  z_k = R + s_k + S + P      (k >= 2)

    With P = 0 this is the synchronous
    (e^(lR) - 1)/l + sum_k e^(lR)(e^(l(s_k + S)) - 1)/l, and with no failures
    R + work + n S + P + sum_(k >= 2) max(0, P - s_k).

    Derivation (renewal over durable points). Let "cycle k" run from the
    moment checkpoint k - 1 becomes durable to the moment checkpoint k does.
    Between those moments a failure always rolls back to checkpoint k - 1
    (checkpoint k is not durable yet; nothing older matters), and the job
    then restarts with no persist in flight, so every retry of cycle k is the
    same deterministic stretch: restart R, compute s_k, snapshot S, persist P
    (the persist ends P after the snapshot: either the job is still computing
    segment k + 1 then, or it waits for it at the next boundary), z_k in all.
    The first attempt starts when checkpoint k - 1 turns durable, P seconds
    after its snapshot: by then min(P, s_k) of segment k is already computed
    (the job waits at the boundary when P > s_k), so what is left is
    s_k - min(P, s_k) + S + P = S + max(s_k, P) = y_k. Cycle 1 starts with
    the first start (no persist in flight): y_1 = z_1. Failures are
    memoryless, so each cycle costs :func:`_attempt`'s
    (1 - e^(-l y_k)) e^(l z_k)/l whatever happened before, and the cycles add
    up. The final checkpoint's cycle ends when its persist ends (DONE).
    """
    m, w, t, s, p, r = _broadcast(
        mtbf=_array("mtbf", mtbf, allow_inf=True),
        work=_array("work", work),
        checkpoint_interval=_array("checkpoint_interval", checkpoint_interval),
        save=_array("save", save, allow_zero=True),
        persist=_array("persist", persist, allow_zero=True),
        restart_cost=_array("restart_cost", restart_cost, allow_zero=True),
    )
    return _out(_async_wall(m, w, t, s, p, r))


def _async_wall(m: Array, w: Array, t: Array, s: Array, p: Array, r: Array) -> Array:
    n, last = _segments(w, t)
    first = np.where(n > 1.0, t, last)
    free = r + w + n * s + p + (n - 2.0).clip(0.0) * np.maximum(0.0, p - t)
    free = free + np.where(n > 1.0, np.maximum(0.0, p - last), 0.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        rate = 1.0 / m
        start = r + first + s + p
        head = np.expm1(rate * start) / rate
        middle = (n - 2.0).clip(0.0) * _attempt(rate, s + np.maximum(t, p), r + t + s + p)
        tail = np.where(n > 1.0, _attempt(rate, s + np.maximum(last, p), r + last + s + p), 0.0)
        wall = head + middle + tail
    # NaN only comes from overflowing terms (the expectation is beyond a float)
    return np.where(rate > 0.0, np.where(np.isnan(wall), np.inf, wall), free)


def _log_rate_ratio(x: Array) -> Array:
    """log((1 - e^(-x)) / x), x > 0, with a small absolute error for small x
    (the series -x/2 + x^2/24 - x^4/2880 + x^6/181440 below 0.05)."""
    x2 = x * x
    series = -x / 2.0 + x2 / 24.0 - x2 * x2 / 2880.0 + x2 * x2 * x2 / 181440.0
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log(-np.expm1(-x) / x)
    return np.where(x < 0.05, series, direct)


def _async_steady_log_ratio(rate: float, tau: Array, save: float, persist: float) -> Array:
    """log(E[wall] / work) for a very long work, without the common factor
    e^(l R): the log of (1 - e^(-l y)) e^(l(tau + S + P)) / (l tau),
    y = S + max(tau, P), written l(tau + S + P) + log((1 - e^(-l y))/(l y))
    + log1p((y - tau)/tau) so that its absolute error stays far below the
    waste (the optimum is located to well under 1e-6 even when the waste is
    tiny)."""
    y = save + np.maximum(tau, persist)
    excess = save + np.maximum(0.0, persist - tau)  # y - tau, without cancellation
    return rate * (tau + save + persist) + _log_rate_ratio(rate * y) + np.log1p(excess / tau)


def async_optimal_interval(
    save: float,
    persist: float,
    mtbf: float,
    restart_cost: float = 0.0,
    work: float | None = None,
) -> float:
    """The checkpoint interval minimising the expected waste (1 - ETTR) of an
    asynchronous checkpoint under exponential failures, found numerically on
    :func:`expected_wall_async_exponential` (scalar).

    ``work=None``: a very long job, i.e. the exact limit of E[wall]/work per
    cycle, (1 - e^(-l(S + max(tau, P)))) e^(l(R + tau + S + P)) / (l tau).
    Otherwise the finite ``work`` (segment effects included; the result is
    at most ``work``).

    First-order closed form (S, P << M = mtbf)::

        tau* ~ max(P, sqrt(2 S M))

    i.e. Young with the snapshot as the effective cost: for tau >= P the
    effective cost :func:`async_checkpoint_cost` is S and the persist only
    adds P to the exposure (a failure loses about P + (tau + S)/2 on
    average), a constant that does not move the optimum; for tau < P the waits make the
    effective cost S + P - tau, which falls faster than the exposure grows.
    Exactly, in the long-work limit: tau* = max(min(P, M), M (1 + W0(-e^(-1 - S/M))))
    (W0 the principal Lambert W; the second term is the synchronous optimum
    for cost S; its expansion is sqrt(2 S M) - 2 S/3 + ...).

    ``restart_cost`` never moves the optimum (every cycle's term carries the
    same factor e^(l R)); it is accepted for symmetry with the wall-clock
    formula. No failures (mtbf = inf): ``work`` (one checkpoint), or inf
    without work. Where the expected wall-clock of ``work`` overflows a float
    at every interval, the long-work optimum capped at ``work``. ``save``
    and ``persist`` must not both be 0 (the waste would keep falling as the
    interval shrinks).
    """
    s = _non_negative("save", save)
    p = _non_negative("persist", persist)
    m = _scalar_mtbf(mtbf)
    r = _non_negative("restart_cost", restart_cost)
    w = None if work is None else positive("work", work)
    if s == 0.0 and p == 0.0:
        raise ValueError(
            "save and persist must not both be 0: the waste keeps falling as the "
            "interval shrinks, there is no optimal interval"
        )
    if math.isinf(m):
        return math.inf if w is None else w
    rate = 1.0 / m
    if w is None:
        # the optimum lies in (0, M]; search well beyond on both sides
        return _minimise_log(
            lambda tau: _async_steady_log_ratio(rate, tau, s, p),
            lo=m * 1e-12,
            hi=4.0 * m,
        )

    s_, p_, r_ = np.asarray(s), np.asarray(p), np.asarray(r)

    def wall(tau: Array) -> Array:
        return _async_wall(np.asarray(m), np.asarray(w), tau, s_, p_, r_)

    steady = async_optimal_interval(s, p, m)
    return _minimise_finite_work(wall, w, min(steady, w))


def _minimise_log(fn: Any, lo: float, hi: float, points: int = 1201) -> float:
    """argmin of ``fn`` (vectorised) over [lo, hi]: a geometric grid, then a
    golden-section search between the best point's neighbours."""
    grid = np.geomspace(lo, hi, points)
    values = fn(grid)
    i = int(np.nanargmin(values))
    a = math.log(grid[max(i - 1, 0)])
    b = math.log(grid[min(i + 1, points - 1)])
    x = _golden(lambda u: fn(np.exp(u)), np.asarray(a), np.asarray(b))
    best = float(np.exp(x))
    return best if float(fn(np.asarray(best))) <= float(values[i]) else float(grid[i])


def _golden(fn: Any, a: Array, b: Array, iterations: int = 90) -> Array:
    """Golden-section search for a minimum of ``fn`` on [a, b], elementwise
    over arrays of brackets (``fn`` vectorised)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a = np.asarray(a, dtype=np.float64).copy()
    b = np.asarray(b, dtype=np.float64).copy()
    c = b - g * (b - a)
    d = a + g * (b - a)
    fc, fd = fn(c), fn(d)
    for _ in range(iterations):
        left = fc <= fd  # minimum in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - g * (b - a), d)
        d_new = np.where(left, c, a + g * (b - a))
        f_new = fn(np.where(left, c_new, d_new))
        fc, fd = np.where(left, f_new, fd), np.where(left, fc, f_new)
        c, d = c_new, d_new
    return np.where(fc <= fd, c, d)


def _minimise_finite_work(wall: Any, work: float, guess: float) -> float:
    """argmin over (0, work] of ``wall`` (vectorised over intervals): the
    equal-segment intervals work/m around ``guess``, a geometric grid and a
    golden-section refinement around the best of them."""
    m0 = work / guess
    first, last = max(1.0, math.floor(m0 / 3.0)), math.ceil(3.0 * m0) + 1.0
    if last - first < 200_000:
        ms = np.arange(first, last + 1.0)
    else:
        ms = np.unique(np.round(np.geomspace(first, last, 200_000)))
    candidates = np.unique(np.concatenate([work / ms, np.geomspace(guess / 30.0, work, 1201)]))
    candidates = candidates[candidates <= work]
    values = wall(candidates)
    if not np.isfinite(values).any():  # beyond a float everywhere
        return guess
    i = int(np.nanargmin(values))
    best, fbest = float(candidates[i]), float(values[i])
    a = math.log(candidates[max(i - 1, 0)])
    b = math.log(candidates[min(i + 1, candidates.size - 1)])
    x = float(np.exp(_golden(lambda u: wall(np.exp(u)), np.asarray(a), np.asarray(b))))
    if float(wall(np.asarray([x]))[0]) < fbest:
        best = x
    return min(best, work)


# --------------------------------------------------------------------------- two levels


def _period(
    rate: Array,
    segments: Array,
    tier_run: Array,
    durable_run: Array,
    tier_restart: Array,
    durable_restart: Array,
    survive: Array,
) -> Array:
    """Expected time from "durable checkpoint just written" to "next durable
    checkpoint written" for a durable period of ``segments`` segments: the
    first ``segments - 1`` take ``tier_run`` (compute + tier save), the last
    ``durable_run`` (compute + durable save). Exact; see
    :func:`expected_wall_two_level_exponential` for the chain solved here."""
    q = survive
    e_r = np.exp(-rate * tier_restart)
    h = (1.0 - q) + q * e_r  # 1 - q (1 - e^(-l rho1))
    # last segment (ends with the durable write): alpha_(J-1), delta_(J-1)
    den2 = (1.0 - q) + q * e_r * np.exp(-rate * durable_run)
    p2 = -np.expm1(-rate * durable_run)
    alpha_last = p2 / (rate * den2)
    log_delta_last = np.log(h) - rate * durable_run - np.log(den2)
    # the J - 2 middle tier segments: alpha_i = c + g alpha_(i+1), delta_i = g delta_(i+1)
    n = np.maximum(segments - 2.0, 0.0)
    p1 = -np.expm1(-rate * tier_run)
    den1 = (1.0 - q) + q * e_r * np.exp(-rate * tier_run)
    one_minus_g = (1.0 - q) * p1 / den1
    log_g = np.log1p(-one_minus_g)
    gn = np.exp(n * log_g)
    series = np.where(one_minus_g > 0.0, -np.expm1(n * log_g) / one_minus_g, n)  # sum g^j, j < n
    alpha_1 = p1 / (rate * den1) * series + gn * alpha_last
    log_delta_1 = n * log_g + log_delta_last
    # state 0 (at the durable): every failure goes back to it
    alpha_0 = np.where(segments > 1.0, p1 / rate + (1.0 - p1) * alpha_1, p2 / rate)
    log_delta_0 = np.where(segments > 1.0, -rate * tier_run + log_delta_1, -rate * durable_run)
    restart = np.expm1(rate * durable_restart) / rate
    # T0 = (alpha_0 + beta_0 restart) / delta_0,  beta_0 = 1 - delta_0
    return (alpha_0 - np.expm1(log_delta_0) * restart) * np.exp(-log_delta_0)


def expected_wall_two_level_exponential(
    mtbf: Number,
    work: Number,
    tier_interval: Number,
    tier_save: Number,
    tier_load: Number,
    durable_interval: Number,
    durable_save: Number,
    durable_load: Number,
    init: Number = 0.0,
    survive: Number = 0.0,
) -> Number:
    """Expected wall-clock of a job with a fast tier and a durable checkpoint
    under exponential failures (rate l = 1/mtbf while the job holds hardware);
    exact under the lifecycle semantics.

    Every ``tier_interval`` of progress the job writes a checkpoint
    synchronously: the durable one (``durable_save``) at multiples of
    ``durable_interval`` (which must be a multiple k of ``tier_interval``)
    and at the end of the work, the tier (``tier_save``) elsewhere. A failure
    is survived by the tier with probability ``survive`` = q (the
    process-scope share of failures): the job rolls back to its newest
    checkpoint (tier or durable); otherwise (node scope) the tier's
    checkpoint is lost and the job rolls back to the last durable one. Each
    start costs ``init`` plus the load of the level it rolls back to
    (``tier_load``, or ``durable_load`` for the durable and the first start)
    and is itself vulnerable. The default q = 0 is the simulator's default
    without causes (node-scope failures, m = 1, the tier never survives).

    With k = 1 (or q = 0 and no tier writes, i.e. tier_interval =
    durable_interval) this is the synchronous single-level
    (e^(lR) - 1)/l + sum_s e^(lR)(e^(l(s + C)) - 1)/l, R = init +
    durable_load, C = durable_save. No failures: init + durable_load + work
    + (tier writes) tier_save + (durable writes) durable_save.

    Derivation. Once a durable checkpoint is written nothing before it
    matters, so E[wall] = (e^(l rho0) - 1)/l (the first start) + the sum,
    over durable periods, of the expected time T_0 from one durable write to
    the next (rho0 = init + durable_load, rho1 = init + tier_load). In a
    period of J segments let T_i be the expected time to its end from "the
    i-th checkpoint of the period just written" and U_i from "a restart
    towards it begins"; a stretch of a seconds (a segment and its write, or
    a restart) fails with probability p = 1 - e^(-la) after E[min(X, a)] =
    p/l on average. Then, with U_0 the restart to the period's durable::

        T_i = p_i/l + (1 - p_i) T_(i+1) + p_i (q U_i + (1 - q) U_0),  T_J = 0
        U_i = r/l + (1 - r) T_i + r (q U_i + (1 - q) U_0),   r = 1 - e^(-l rho1)
        T_0 = p_0/l + (1 - p_0) T_1 + p_0 U_0,  U_0 = T_0 + (e^(l rho0) - 1)/l

    (p_i for segment i + 1). Eliminating U_i (i >= 1) gives
    T_i = (p_i/l + h (1 - p_i) T_(i+1) + p_i (1 - q) U_0) / d_i with
    h = 1 - q r and d_i = (1 - q) + q (1 - r)(1 - p_i). Writing
    T_i = alpha_i + (1 - delta_i) U_0, the recursions are affine with
    constant coefficients over the period's tier segments (geometric sums,
    closed form); delta_i is a product of positive factors (no
    cancellation) and U_0 = (alpha_0 + (e^(l rho0) - 1)/l) / delta_0. The
    last period may have fewer segments and a shorter last one.
    """
    arrays = _broadcast(
        mtbf=_array("mtbf", mtbf, allow_inf=True),
        work=_array("work", work),
        tier_interval=_array("tier_interval", tier_interval),
        tier_save=_array("tier_save", tier_save, allow_zero=True),
        tier_load=_array("tier_load", tier_load, allow_zero=True),
        durable_interval=_array("durable_interval", durable_interval),
        durable_save=_array("durable_save", durable_save, allow_zero=True),
        durable_load=_array("durable_load", durable_load, allow_zero=True),
        init=_array("init", init, allow_zero=True),
        survive=_array("survive", survive, allow_zero=True),
    )
    m, w, t1, c1, r1, t2, c2, r2, i0, q = arrays
    if (q > 1.0).any():
        raise ValueError("survive must be in [0, 1]")
    k = _multiple(t1, t2)
    return _out(_two_level_wall(m, w, t1, c1, r1, k, c2, r2, i0, q))


def _multiple(tier_interval: Array, durable_interval: Array) -> Array:
    ratio = durable_interval / tier_interval
    k = np.round(ratio)
    if (k < 1.0).any() or (np.abs(ratio - k) > _MULTIPLE_RTOL * ratio).any():
        raise ValueError("durable_interval must be a positive integer multiple of tier_interval")
    return k


def _two_level_wall(
    m: Array,
    w: Array,
    t1: Array,
    c1: Array,
    r1: Array,
    k: Array,
    c2: Array,
    r2: Array,
    i0: Array,
    q: Array,
) -> Array:
    n, last = _segments(w, t1)
    periods = np.ceil(n / k)
    j_last = n - (periods - 1.0) * k
    free = i0 + r2 + w + (n - periods) * c1 + periods * c2
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        rate = 1.0 / m
        rho1, rho0 = i0 + r1, i0 + r2
        full = _period(rate, k, t1 + c1, t1 + c2, rho1, rho0, q)
        tail = _period(rate, j_last, t1 + c1, last + c2, rho1, rho0, q)
        wall = np.expm1(rate * rho0) / rate + (periods - 1.0) * full + tail
    # NaN only comes from overflowing terms (the expectation is beyond a float)
    return np.where(rate > 0.0, np.where(np.isnan(wall), np.inf, wall), free)


@dataclass(frozen=True)
class TwoLevelIntervals:
    """Result of :func:`two_level_optimal_intervals`: the tier interval, the
    durable interval (``k`` times the tier interval) and the expected waste
    (1 - ETTR) of a very long job at those intervals."""

    tier_interval: float
    durable_interval: float
    k: int
    expected_waste: float


def _two_level_steady(
    rate: float,
    tau: Array,
    k: Array,
    c1: float,
    rho1: float,
    c2: float,
    rho0: float,
    q: float,
) -> Array:
    """E[wall]/work of a very long job: one period's T_0 / (k tau)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        rates, restarts = np.asarray(rate), (np.asarray(rho1), np.asarray(rho0))
        t0 = _period(rates, k, tau + c1, tau + c2, *restarts, np.asarray(q))
        ratio = t0 / (k * tau)
    return np.where(np.isnan(ratio), np.inf, ratio)


def two_level_optimal_intervals(
    mtbf: float,
    tier_save: float,
    tier_load: float,
    durable_save: float,
    durable_load: float,
    survive: float,
    init: float = 0.0,
) -> TwoLevelIntervals:
    """The tier interval tau and the integer k (durable interval k tau)
    minimising the expected waste of :func:`expected_wall_two_level_exponential`
    for a very long job (its exact limit: one durable period's expected time
    over its k tau of work), numerically: for every k a golden-section
    search over tau, then the best k (all k up to 256, a geometric set
    beyond, refined to the integer).

    First order (all costs << mtbf M), each level Young-like on the failures
    it must absorb: with c1, c2 the saves and T = k tau,
    waste ~ c1/tau + (c2 - c1)/T + l (q tau + (1 - q) T)/2 + const, minimised
    near tau ~ sqrt(2 c1 M / q) and T ~ sqrt(2 (c2 - c1) M / (1 - q)) (k = T/tau
    rounded; k = 1 when T < tau, i.e. the tier does not pay).

    ``survive`` must be < 1 (with every failure survivable the durable
    interval grows without bound) and the save costs > 0.
    """
    m = positive("mtbf", mtbf)
    c1 = positive("tier_save", tier_save)
    r1 = _non_negative("tier_load", tier_load)
    c2 = positive("durable_save", durable_save)
    r2 = _non_negative("durable_load", durable_load)
    q = _non_negative("survive", survive)
    if q >= 1.0:
        raise ValueError(f"survive must be in [0, 1), got {q!r}")
    i0 = _non_negative("init", init)
    rate = 1.0 / m
    rho1, rho0 = i0 + r1, i0 + r2

    def best_tau(ks: Array) -> tuple[Array, Array]:
        lo = np.full(ks.shape, math.log(m * 1e-9))
        hi = np.full(ks.shape, math.log(m * 4.0))

        def fn(u: Array) -> Array:
            return _two_level_steady(rate, np.exp(u), ks, c1, rho1, c2, rho0, q)

        # a coarse scan first (the golden search then works on a bracket)
        grid = np.linspace(lo[0], hi[0], 241)
        values = np.stack([fn(np.full(ks.shape, g)) for g in grid])
        i = np.argmin(values, axis=0)
        a = grid[np.maximum(i - 1, 0)]
        b = grid[np.minimum(i + 1, grid.size - 1)]
        u = _golden(fn, a, b)
        return np.exp(u), fn(u)

    ks = np.unique(np.concatenate([np.arange(1.0, 257.0), np.round(np.geomspace(256, 2**30, 241))]))
    taus, values = best_tau(ks)
    i = int(np.argmin(values))
    if ks[i] > 256.0:  # refine between the geometric neighbours
        lo_k, hi_k = ks[i - 1], ks[min(i + 1, ks.size - 1)]
        while hi_k - lo_k > 64.0:  # ternary search on integers
            k1 = np.floor(lo_k + (hi_k - lo_k) / 3.0)
            k2 = np.ceil(hi_k - (hi_k - lo_k) / 3.0)
            _, v = best_tau(np.asarray([k1, k2]))
            if v[0] <= v[1]:
                hi_k = k2
            else:
                lo_k = k1
        ks = np.arange(lo_k, hi_k + 1.0)
        taus, values = best_tau(ks)
        i = int(np.argmin(values))
    if not math.isfinite(float(values[i])):
        raise ValueError(
            "the expected wall-clock overflows a float at every interval: mtbf is far "
            "too short for these costs"
        )
    k = int(ks[i])
    tau = float(taus[i])
    return TwoLevelIntervals(
        tier_interval=tau,
        durable_interval=tau * k,
        k=k,
        expected_waste=1.0 - 1.0 / float(values[i]),
    )
