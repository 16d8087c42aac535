"""Confidence intervals over replicas: the pooled ETTR of a result and the
paired differences between two results run with common random numbers.

The method, for every statistic here:

* **The unit is the replica.** Replicas are independent (each has its own
  random streams); the jobs of one replica are not (they share the fleet and
  its failures), so a replica's jobs are summed before anything is estimated.
* **Pooled ratios.** Each statistic is a ratio of totals over replicas: the
  ETTR is ``R = sum_r P_r / sum_r W_r`` with ``P_r = sum_j gpus_j x
  productive_rj`` and ``W_r = sum_j gpus_j x wall_rj`` (GPU-hour weighted
  over jobs; one job's rows with ``job=...``), which is exactly
  :meth:`SimulationResult.pooled_ettr`. A time bucket's share is the same
  ratio with the bucket in place of ``productive`` (the shares of
  :meth:`SimulationResult.summary`; ``productive``'s share is the ETTR).
* **Ratio estimator (delta method).** With ``n`` replicas, ``d_r = P_r - R
  W_r`` and ``W̄`` the mean of ``W_r``, the standard error is
  ``sqrt(sum_r d_r^2 / (n (n - 1))) / W̄`` (first-order Taylor expansion of
  the ratio; its bias is O(1/n)).
* **Intervals** correct the Student t interval ``R ± t x SE`` for skewness
  (Hall's transformation, Hall 1992, J. R. Statist. Soc. B 54: 221-228).
  A replica's wall-clock is skewed to the right (failures only add time), so
  the pooled ETTR and the studentized ``(R - rho) / SE`` are skewed, and the
  symmetric interval's lower bound is too high too often: at a claim equal
  to the truth its one-sided 95% bound passed 6-8% of the time, not 5%.
  With the linearized values ``x_r`` (``d_r / W̄``, or ``u_r`` below), their
  sample skewness ``g = m3 / m2^(3/2)`` (``m_k`` the mean of ``(x_r -
  mean(x))^k``), ``a = g / (3 sqrt(n))`` and ``b = g / (6 sqrt(n))``, the
  statistic ``T = (R - rho) / SE`` is mapped through the monotone ``h(T) = T
  + a T^2 + a^2 T^3 / 3 + b`` (Edgeworth: ``h(T)`` is Student-like to second
  order), so the ``p``-level bounds are ``R - SE x h^-1(q)`` with ``q = ±``
  the Student t quantile with ``n - 1`` degrees of freedom at ``p``, and
  ``h^-1(y) = 3 (y - b) / (c^2 + c + 1)``, ``c = cbrt(1 + 3 a (y - b))``
  (exact; for ``g = 0`` it is the t interval). ETTR intervals are clipped to
  [0, 1] and intervals of differences of shares to [-1, 1].
* **Coverage, measured** against the closed form under exponential
  failures (``tests/test_stats.py``; ``.ci/slow`` runs 6,000 seeds a case).
  For a 2-day job with a 4-hour MTBF (30-minute checkpoints) the one-sided
  95% bound of the ETTR passes a claim equal to the truth 5.4%, 5.2% and
  4.9% of the time at 10, 20 and 30 replicas (60,000, 60,000 and 30,000
  seeds; the symmetric interval: 6.0%, 5.9%, 5.5%), but 5.5-7% at 3 or 5
  replicas, where the skewness cannot be estimated, so
  :mod:`acesim.testing` refuses fewer than :data:`MIN_REPLICAS` replicas
  with a :class:`~acesim.TooFewReplicasError`. Walls more skewed than that
  (a job that fails only a few times a run) need more replicas for the 5%:
  5.9% at 10 and 5.1% at 30 replicas for a 1-day job with an 8-hour MTBF
  (symmetric: 7.4%, 6.4%). The two-sided 95% intervals held 94.6-95.2%.
  No interval holds where the replicas are nearly all alike (most without
  a failure): a bound can only use the spread the replicas show.
* **Paired differences** (:func:`compare`) of two results run with the same
  seed and replicas (common random numbers: replica ``r`` of both sees the
  same failure draws) use the per-replica difference of the linearized
  values ``u_r = d^b_r / W̄^b - d^a_r / W̄^a``: ``SE = sqrt(sum_r u_r^2 / (n
  (n - 1)))``, and the same skewness-corrected interval with ``x_r = u_r``
  (a difference can be negative: no log scale). The shared randomness
  cancels in ``u_r``, which is why a paired comparison is much tighter than
  two separate intervals.
* **One replica** gives a value but no interval: the spread between
  replicas is unknown. The interval is then ``(value, nan, nan)`` and a
  :class:`SingleReplicaWarning` says so.
"""

from __future__ import annotations

import functools
import math
import numbers
import statistics
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .errors import TooFewReplicasError
from .simulation import BUCKETS

if TYPE_CHECKING:
    from .simulation import SimulationResult

__all__ = [
    "METRICS",
    "MIN_REPLICAS",
    "Comparison",
    "Difference",
    "Estimate",
    "SingleReplicaWarning",
    "compare",
]

#: What :func:`compare` reports and :func:`acesim.testing.assert_not_worse`
#: checks: the pooled ETTR, then every time bucket as a share of the
#: GPU-hours (``productive``'s share is the ETTR again).
METRICS = ("ettr", *BUCKETS)

#: The fewest replicas :mod:`acesim.testing` bounds a claim with: below it
#: the one-sided 95% bound of the pooled ETTR passed a claim equal to the
#: truth more often than its 5% (module docstring); an assertion asked of
#: fewer raises :class:`~acesim.TooFewReplicasError`.
MIN_REPLICAS = 10


class SingleReplicaWarning(RuntimeWarning):
    """A statistic asked of one replica: it has a value but no interval."""


class Estimate(NamedTuple):
    """A pooled estimate with its two-sided confidence interval."""

    value: float
    low: float
    high: float


class Difference(NamedTuple):
    """One metric of :func:`compare`: its pooled values in ``a`` and ``b``,
    the difference ``b - a`` and its two-sided confidence interval."""

    metric: str
    a: float
    b: float
    diff: float
    low: float
    high: float

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 0 (the difference is resolved)."""
        return bool(self.low > 0.0 or self.high < 0.0)


# ---------------------------------------------------------------- quantiles


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 5000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """The regularized incomplete beta function I_x(a, b), given ``y = 1 - x``
    computed without cancellation."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def _t_sf(t: float, df: int) -> float:
    """P(T > t) for t >= 0, T Student t with ``df`` degrees of freedom."""
    s = df + t * t
    return 0.5 * _betainc(0.5 * df, 0.5, df / s, t * t / s)


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    Numpy only: for ``df < 1000`` the root of the t survival function
    (the regularized incomplete beta function by its continued fraction) by
    bisection to full precision; from 1000 on, the Cornish-Fisher expansion
    about the normal quantile to 1/df^4 (Abramowitz & Stegun 26.7.5), whose
    error there is far below 1e-12 for the confidence levels in use.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df >= 1000:
        z = statistics.NormalDist().inv_cdf(p)
        z2 = z * z
        g1 = (z2 + 1.0) * z / 4.0
        g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
        g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
        g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
        n = float(df)
        return z + g1 / n + g2 / n**2 + g3 / n**3 + g4 / n**4
    tail = 1.0 - p
    lo, hi = 0.0, 1.0
    while _t_sf(hi, df) > tail:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# --------------------------------------------------------------- validation


def _level(name: str, value: Any) -> float:
    """A probability strictly between 0 and 1."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1), got {type(value).__name__}")
    x = float(value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {x!r}")
    return x


def _job_index(result: SimulationResult, job: Any) -> int | None:
    if job is None:
        return None
    if isinstance(job, bool | np.bool_) or not isinstance(job, numbers.Integral):
        raise TypeError(f"job must be an integer job index or None, got {type(job).__name__}")
    n_jobs = int(result.jobs["job"].max()) + 1 if result.jobs.size else 0
    j = int(job)
    if not 0 <= j < n_jobs:
        raise ValueError(f"job must be in 0..{n_jobs - 1} (the result has {n_jobs} jobs), got {j}")
    return j


def _metric(metric: Any) -> str:
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    return "productive" if metric == "ettr" else metric


def _result(name: str, value: Any) -> SimulationResult:
    from .simulation import SimulationResult

    if not isinstance(value, SimulationResult):
        raise TypeError(f"{name} must be a SimulationResult, got {type(value).__name__}")
    return value


def _warn_one_replica(what: str, stacklevel: int) -> None:
    """``stacklevel`` as the caller would give it to warnings.warn."""
    warnings.warn(
        f"{what} of one replica has no confidence interval (the spread between replicas is "
        "unknown): low and high are nan; run with replicas >= 2",
        SingleReplicaWarning,
        stacklevel=stacklevel + 1,
    )


# ------------------------------------------------------------- estimators


@dataclass(frozen=True)
class _Ratio:
    """A pooled ratio over replicas: its value, its delta-method standard
    error (nan for one replica) and the per-replica linearized values."""

    value: float
    se: float
    n: int
    influence: npt.NDArray[np.float64]
    replica_ids: npt.NDArray[Any]


def _ratio(result: SimulationResult, field: str, job: int | None) -> _Ratio:
    """The pooled share sum(gpus x field) / sum(gpus x wall) over replicas."""
    rows = result.jobs if job is None else result.jobs[result.jobs["job"] == job]
    g = rows["gpus"].astype(np.float64)
    num_rows = g * rows[field]
    den_rows = g * rows["wall"]
    total_den = float(np.sum(den_rows))
    # The value exactly as pooled_ettr() / summary() compute it.
    value = float(np.sum(num_rows) / total_den) if total_den > 0 else math.nan
    ids, inverse = np.unique(rows["replica"], return_inverse=True)
    n = int(ids.size)
    num = np.bincount(inverse, weights=num_rows, minlength=n)
    den = np.bincount(inverse, weights=den_rows, minlength=n)
    influence = _influence(num, den, value)
    se = math.sqrt(float(np.sum(influence**2)) / (n * (n - 1))) if n > 1 else math.nan
    return _Ratio(value, se, n, influence, ids)


def _influence(num: npt.NDArray[Any], den: npt.NDArray[Any], value: Any) -> npt.NDArray[np.float64]:
    """The delta method's linearized values of a pooled ratio ``value`` from
    per-replica numerators and denominators along the last axis (NaN where
    the ratio or the mean denominator is not defined)."""
    mean_den = np.mean(den, axis=-1, keepdims=True) if den.shape[-1] else np.full(den.shape, np.nan)
    value = np.asarray(value, dtype=np.float64)[..., None] if np.ndim(value) else value
    ok = np.isfinite(value) & (mean_den > 0)
    out = np.full(np.broadcast_shapes(num.shape, np.shape(mean_den)), math.nan)
    np.divide(num - value * den, mean_den, out=out, where=ok)
    return out


def _ratio_se(
    num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Per row of (points, replicas) arrays: the delta-method standard error
    of sum(num) / sum(den) over the replicas (NaN below two replicas)."""
    n = num.shape[-1]
    total = np.sum(den, axis=-1)
    value = np.full(total.shape, math.nan)
    np.divide(np.sum(num, axis=-1), total, out=value, where=total > 0)
    if n < 2:
        return np.full(value.shape, math.nan)
    influence = _influence(num, den, value)
    out: npt.NDArray[np.float64] = np.sqrt(np.sum(influence**2, axis=-1) / (n * (n - 1)))
    return out


def _hall_inverse(y: float, a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> Any:
    """The inverse of Hall's ``h(t) = t + a t^2 + a^2 t^3 / 3 + b`` at ``y``:
    ``h(t) = ((1 + a t)^3 - 1) / (3 a) + b``, so ``t = (c - 1) / a`` with ``c
    = cbrt(1 + 3 a (y - b))``, written ``3 (y - b) / (c^2 + c + 1)`` (the
    same number, as ``c^3 - 1 = (c - 1)(c^2 + c + 1)``) so that ``a = 0``
    needs no special case and a small ``a`` loses no digits."""
    z = y - b
    c = np.cbrt(1.0 + 3.0 * a * z)
    return 3.0 * z / (c * c + c + 1.0)


def _interval(
    value: Any, influence: npt.NDArray[np.float64], level: float, two_sided: bool
) -> tuple[Any, Any]:
    """The skewness-corrected t bounds ``(low, high)`` of a pooled estimate
    ``value`` from its per-replica linearized values ``influence`` (replicas
    along the last axis; each leading index is one estimate): two-sided at
    ``level``, or each a one-sided ``level`` bound. NaN below two replicas;
    zero width where the replicas agree (module docstring)."""
    x = np.asarray(influence, dtype=np.float64)
    n = x.shape[-1]
    v = np.asarray(value, dtype=np.float64)
    if n < 2:
        return np.full(v.shape, math.nan), np.full(v.shape, math.nan)
    se = np.sqrt(np.sum(x * x, axis=-1) / (n * (n - 1)))
    c = x - np.mean(x, axis=-1, keepdims=True)
    m2 = np.mean(c * c, axis=-1)
    m3 = np.mean(c * c * c, axis=-1)
    skew = np.zeros(np.shape(m2))
    np.divide(m3, m2**1.5, out=skew, where=m2 > 0)
    a = skew / (3.0 * math.sqrt(n))
    b = skew / (6.0 * math.sqrt(n))
    q = t_quantile(0.5 * (1.0 + level) if two_sided else level, n - 1)
    low = v - se * _hall_inverse(q, a, b)
    high = v - se * _hall_inverse(-q, a, b)
    return low, high


def _ettr_interval(value: Any, influence: Any, level: float, two_sided: bool) -> tuple[Any, Any]:
    """:func:`_interval` of an ETTR (or any share of the GPU-hours), clipped
    to [0, 1]."""
    low, high = _interval(value, influence, level, two_sided)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _difference_interval(
    diff: Any, influence: Any, level: float, two_sided: bool
) -> tuple[Any, Any]:
    """:func:`_interval` of a difference of two shares, clipped to [-1, 1]."""
    low, high = _interval(diff, influence, level, two_sided)
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def _needs_replicas(n: int, what: str) -> None:
    """Refuse a one-sided bound from fewer than :data:`MIN_REPLICAS` replicas."""
    if n < MIN_REPLICAS:
        raise TooFewReplicasError(
            f"{what} needs at least {MIN_REPLICAS} replicas (acesim.stats.MIN_REPLICAS) for a "
            f"confidence bound that holds its level, got {n}: the spread between so few "
            "replicas, and its skew, is not known well enough; run with more replicas"
        )


def _ettr(result: SimulationResult, job: Any, ci: Any, stacklevel: int) -> Estimate:
    """:meth:`SimulationResult.ettr`; ``stacklevel`` is what warnings.warn would
    be given here for the warning to point at the user's line."""
    level = _level("ci", ci)
    r = _ratio(result, "productive", _job_index(result, job))
    if r.n < 2:
        _warn_one_replica("ettr()", stacklevel)
    low, high = _ettr_interval(r.value, r.influence, level, two_sided=True)
    return Estimate(r.value, float(low), float(high))


@dataclass(frozen=True)
class _Paired:
    """A metric in two results paired by replica: values, b - a, its SE and
    the per-replica linearized differences ``u_r``."""

    a: float
    b: float
    diff: float
    se: float
    n: int
    influence: npt.NDArray[np.float64]


def _check_pairing(res_a: SimulationResult, res_b: SimulationResult) -> None:
    if res_a.seed != res_b.seed or res_a.replicas != res_b.replicas:
        raise ValueError(
            "paired differences need common random numbers: both results from the same seed "
            f"and replicas (res_a: seed={res_a.seed}, replicas={res_a.replicas}; res_b: "
            f"seed={res_b.seed}, replicas={res_b.replicas})"
        )
    ids_a = np.unique(res_a.jobs["replica"])
    ids_b = np.unique(res_b.jobs["replica"])
    if not np.array_equal(ids_a, ids_b):
        raise ValueError(
            "paired differences need the same replicas in both results (the same "
            f"first_replica): res_a has replicas {_span(ids_a)}, res_b {_span(ids_b)}"
        )


def _span(ids: npt.NDArray[Any]) -> str:
    if ids.size == 0:
        return "none"
    lo, hi = int(ids.min()), int(ids.max())
    return f"{lo}..{hi}" if ids.size == hi - lo + 1 else f"{ids.size} ids in {lo}..{hi}"


def _paired(res_a: SimulationResult, res_b: SimulationResult, field: str) -> _Paired:
    ra = _ratio(res_a, field, None)
    rb = _ratio(res_b, field, None)
    n = ra.n
    u = rb.influence - ra.influence
    se = math.sqrt(float(np.sum(u**2)) / (n * (n - 1))) if n > 1 else math.nan
    return _Paired(ra.value, rb.value, rb.value - ra.value, se, n, u)


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` returns: per metric the pooled values in ``a``
    and ``b``, ``b - a`` and its paired interval at level ``ci``.

    ``comparison["ettr"]`` is one :class:`Difference`; iterating gives them
    all in :data:`METRICS` order; ``str()`` is a table.
    """

    seed: int
    replicas: int
    ci: float
    differences: tuple[Difference, ...]

    def __getitem__(self, metric: str) -> Difference:
        for d in self.differences:
            if d.metric == metric:
                return d
        raise KeyError(f"no metric {metric!r}; the metrics are {', '.join(METRICS)}")

    def __iter__(self) -> Iterator[Difference]:
        return iter(self.differences)

    def __len__(self) -> int:
        return len(self.differences)

    def __str__(self) -> str:
        pct = f"{100 * self.ci:g}%"
        lines = [
            f"b - a, paired over {self.replicas} replicas (seed {self.seed}); {pct} intervals; "
            "buckets are shares of GPU-hours; * the interval excludes 0",
            f"{'metric':<14}{'a':>10}{'b':>10}{'b - a':>11}   {pct + ' interval':<24}",
        ]
        for d in self.differences:
            interval = f"[{d.low:+.4f}, {d.high:+.4f}]"
            mark = " *" if d.significant else ""
            lines.append(
                f"{d.metric:<14}{d.a:>10.4f}{d.b:>10.4f}{d.diff:>+11.4f}   {interval:<24}{mark}"
            )
        return "\n".join(lines)


def compare(res_a: SimulationResult, res_b: SimulationResult, ci: float = 0.95) -> Comparison:
    """Paired differences ``b - a`` of the pooled ETTR and of every time
    bucket's share of the GPU-hours, with two-sided ``ci`` intervals.

    Both results must come from the same seed and replicas (common random
    numbers; a ValueError otherwise): replica ``r`` of ``res_a`` is paired
    with replica ``r`` of ``res_b``. Each metric is a pooled ratio (total
    GPU-weighted bucket / total GPU-weighted wall over replicas, the shares
    of :meth:`SimulationResult.summary`; ``ettr`` is ``productive``'s share);
    the interval is the skewness-corrected t interval of the module
    docstring around ``diff`` with the paired ratio-estimator standard
    error, clipped to [-1, 1]. One replica gives the
    differences with nan intervals and a :class:`SingleReplicaWarning`.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=ace.DAY, checkpoint_interval=ace.HOUR)
    >>> a = ace.simulate(job, replicas=50, seed=3)
    >>> b = ace.simulate(ace.Job(1024, work=ace.DAY, checkpoint_interval="daly"),
    ...                  replicas=50, seed=3)
    >>> c = ace.compare(a, b)
    >>> d = c["ettr"]
    >>> bool(d.low <= d.diff <= d.high)
    True
    """
    a = _result("res_a", res_a)
    b = _result("res_b", res_b)
    level = _level("ci", ci)
    _check_pairing(a, b)
    n = int(np.unique(a.jobs["replica"]).size)
    if n < 2:
        _warn_one_replica("compare()", 2)
    out = []
    for metric in METRICS:
        p = _paired(a, b, _metric(metric))
        low, high = _difference_interval(p.diff, p.influence, level, two_sided=True)
        out.append(Difference(metric, p.a, p.b, p.diff, float(low), float(high)))
    return Comparison(seed=a.seed, replicas=a.replicas, ci=level, differences=tuple(out))
