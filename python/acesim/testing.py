"""Assertions for test suites that are honest about Monte Carlo noise.

Each assertion passes only when a one-sided confidence bound clears the
threshold, so a pass is evidence, not luck: with ``confidence=0.95`` a
claim that is false by any margin passes in at most about 5% of seeds. The
estimators are those of :mod:`acesim.stats` (replicas are the independent
units; pooled GPU-weighted ratios; delta-method standard errors; Student t
quantiles with ``replicas - 1`` degrees of freedom, corrected for the
skewness of the replicas), and each bound is an end of the interval
:meth:`~acesim.SimulationResult.ettr` or :func:`acesim.compare` reports. A
failure raises AssertionError naming the estimate, its bound, the seed and
the replicas, and how to replay the run. Below
:data:`acesim.stats.MIN_REPLICAS` (10) replicas the bound does not hold its
level (the skewness of so few cannot be estimated): a
:class:`~acesim.TooFewReplicasError` (a ValueError) asks for more.

>>> import acesim as ace
>>> from acesim.testing import assert_ettr_at_least, assert_not_worse
>>> job = ace.Job(1024, work=2 * ace.DAY, checkpoint_interval=ace.HOUR)
>>> res = ace.simulate(job, replicas=200, seed=5)
>>> assert_ettr_at_least(res, 0.85)
>>> daly = ace.simulate(ace.Job(1024, work=2 * ace.DAY, checkpoint_interval="daly"),
...                     replicas=200, seed=5)
>>> assert_not_worse(daly, res)  # Daly's interval: at least as good, paired
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import non_negative, real
from .simulation import SimulationResult
from .stats import (
    METRICS,
    _check_pairing,
    _difference_interval,
    _ettr_interval,
    _job_index,
    _level,
    _metric,
    _needs_replicas,
    _paired,
    _ratio,
    _span,
)

__all__ = ["assert_ettr_at_least", "assert_not_worse"]


def _replay(result: SimulationResult) -> str:
    """Where the result came from and how to run it again."""
    ids = np.unique(result.jobs["replica"])
    first = int(ids.min()) if ids.size else 0
    extra = f", first_replica={first}" if first else ""
    return (
        f"seed {result.seed}, {result.replicas} replicas (replica ids {_span(ids)}); replay with "
        f"ace.simulate(..., seed={result.seed}, replicas={result.replicas}{extra})"
    )


def assert_ettr_at_least(
    result: SimulationResult,
    value: float,
    confidence: float = 0.95,
    job: int | None = None,
) -> None:
    """Assert that the ETTR is at least ``value``, at one-sided ``confidence``.

    Passes when the one-sided lower confidence bound of the pooled ETTR
    ``R`` (of job ``job``, or GPU-hour weighted over every job) is >=
    ``value``: ``R - SE x h^-1(t)`` with ``SE`` its ratio-estimator standard
    error over replicas, ``t`` the ``confidence`` quantile of Student's t
    with ``replicas - 1`` degrees of freedom and ``h`` the skewness
    correction of :mod:`acesim.stats`, clipped to [0, 1] (the bound is the
    ``low`` end of ``result.ettr(job, ci=2 * confidence - 1)`` for
    ``confidence > 0.5``). If the true ETTR is below ``value``, this passes
    with probability at most about ``1 - confidence``. Fewer than
    :data:`acesim.stats.MIN_REPLICAS` (10) replicas raise
    :class:`~acesim.TooFewReplicasError`.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not these
    res = _result_arg("result", result)
    threshold = real("value", value)
    if math.isnan(threshold):
        raise ValueError("value must not be NaN")
    level = _level("confidence", confidence)
    j = _job_index(res, job)
    r = _ratio(res, "productive", j)
    _needs_replicas(r.n, "assert_ettr_at_least")
    bound = float(_ettr_interval(r.value, r.influence, level, two_sided=False)[0])
    if bound >= threshold:
        return
    of = "ETTR" if j is None else f"ETTR of job {j}"
    raise AssertionError(
        f"{of} is not shown to be >= {threshold:.6g} at {_pct(level)} confidence: estimate "
        f"{r.value:.6f}, one-sided lower {_pct(level)} confidence bound {bound:.6f} < "
        f"{threshold:.6g} (standard error {r.se:.3g}); {_replay(res)}"
    )


def assert_not_worse(
    result_a: SimulationResult,
    result_b: SimulationResult,
    metric: str = "ettr",
    margin: float = 0.0,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> None:
    """Assert that ``result_a`` is not worse than ``result_b`` by more than
    ``margin`` in ``metric``, paired over replicas, at one-sided
    ``confidence`` (a non-inferiority test).

    ``metric`` is ``"ettr"`` or a time bucket (``productive wasted
    ckpt_stall overhead detection queue_wait recovery_wait narrow``) as a
    pooled share of the GPU-hours, as in :func:`acesim.compare`. Both results
    must come from the same seed and replicas (common random numbers; a
    ValueError otherwise). With ``D = metric(a) - metric(b)`` and its
    one-sided ``confidence`` bounds (paired ratio-estimator standard error,
    Student's t with ``replicas - 1`` degrees of freedom, the skewness
    correction of :mod:`acesim.stats`; the ends of ``compare(b, a,
    ci=2 * confidence - 1)``'s interval), it passes when the lower bound is
    >= ``-margin`` (``metric(a) >= metric(b) - margin``), or with
    ``higher_is_better=False`` (waits, losses) when the upper bound is <=
    ``margin``. If ``a`` is in truth worse by more than ``margin``, this
    passes with probability at most about ``1 - confidence``. Fewer than
    :data:`acesim.stats.MIN_REPLICAS` (10) replicas raise
    :class:`~acesim.TooFewReplicasError`.

    A pass needs evidence: with ``margin=0`` it asks that ``a`` be shown at
    least as good as ``b``, which two policies that are truly equal only
    manage by chance unless their runs are identical (then ``D`` and ``SE``
    are 0 and it passes). Give the margin you would accept.
    """
    __tracebackhide__ = True
    a = _result_arg("result_a", result_a)
    b = _result_arg("result_b", result_b)
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    field = _metric(metric)
    slack = non_negative("margin", margin)
    level = _level("confidence", confidence)
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(f"higher_is_better must be a bool, got {type(higher_is_better).__name__}")
    _check_pairing(a, b)
    p = _paired(b, a, field)  # p.diff = metric(a) - metric(b), paired
    _needs_replicas(p.n, "assert_not_worse")
    d = p.diff
    low, high = (float(x) for x in _difference_interval(d, p.influence, level, two_sided=False))
    if higher_is_better:
        bound = low
        if bound >= -slack:
            return
        claim = f"{metric}(a) >= {metric}(b) - {slack:.6g}"
        side = f"lower {_pct(level)} confidence bound {bound:+.6f} < {-slack:+.6g}"
    else:
        bound = high
        if bound <= slack:
            return
        claim = f"{metric}(a) <= {metric}(b) + {slack:.6g}"
        side = f"upper {_pct(level)} confidence bound {bound:+.6f} > {slack:+.6g}"
    raise AssertionError(
        f"{claim} is not shown at {_pct(level)} confidence (paired over replicas): "
        f"{metric}(a) = {p.b:.6f}, {metric}(b) = {p.a:.6f}, a - b = {d:+.6f}, one-sided {side} "
        f"(standard error {p.se:.3g}); {_replay(a)} for both"
    )


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def _result_arg(name: str, value: Any) -> SimulationResult:
    if not isinstance(value, SimulationResult):
        raise TypeError(f"{name} must be a SimulationResult, got {type(value).__name__}")
    return value
