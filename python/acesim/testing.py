"""Assertions for test suites that are honest about Monte Carlo noise.

Each assertion passes only when a one-sided confidence bound clears the
threshold, so a pass is evidence, not luck: with ``confidence=0.95`` a
claim that is false by any margin passes in at most about 5% of seeds. The
estimators are those of :mod:`acesim.stats` (replicas are the independent
units; pooled GPU-weighted ratios; delta-method standard errors; Student t
quantiles with ``replicas - 1`` degrees of freedom). A failure raises
AssertionError naming the estimate, its bound, the seed and the replicas,
and how to replay the run. One replica cannot bound anything: a
ValueError asks for more.

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
from .stats import METRICS, _check_pairing, _job_index, _level, _metric, _paired, _ratio, _span
from .stats import t_quantile as _t_quantile

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


def _needs_replicas(n: int, what: str) -> None:
    if n < 2:
        raise ValueError(
            f"{what} needs at least 2 replicas for a confidence bound (the spread between "
            f"replicas is unknown from {n}); run with more replicas"
        )


def assert_ettr_at_least(
    result: SimulationResult,
    value: float,
    confidence: float = 0.95,
    job: int | None = None,
) -> None:
    """Assert that the ETTR is at least ``value``, at one-sided ``confidence``.

    Passes when the lower confidence bound ``R - t x SE`` is >= ``value``,
    with ``R`` the pooled ETTR (of job ``job``, or GPU-hour weighted over
    every job), ``SE`` its ratio-estimator standard error over replicas and
    ``t`` the ``confidence`` quantile of Student's t with ``replicas - 1``
    degrees of freedom (the bound is the ``low`` end of
    ``result.ettr(job, ci=2 * confidence - 1)`` for ``confidence > 0.5``). If the true ETTR is below
    ``value``, this passes with probability at most about ``1 -
    confidence``.
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
    bound = r.value - _t_quantile(level, r.n - 1) * r.se
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
    ValueError otherwise). With ``D = metric(a) - metric(b)``, its paired
    ratio-estimator standard error ``SE`` and ``t`` the ``confidence``
    quantile of Student's t with ``replicas - 1`` degrees of freedom, it
    passes when ``D - t x SE >= -margin`` (``metric(a) >= metric(b) -
    margin``), or with ``higher_is_better=False`` (waits, losses) when ``D +
    t x SE <= margin``. If ``a`` is in truth worse by more than ``margin``,
    this passes with probability at most about ``1 - confidence``.

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
    p = _paired(a, b, field)
    _needs_replicas(p.n, "assert_not_worse")
    d = p.a - p.b  # metric(a) - metric(b)
    h = _t_quantile(level, p.n - 1) * p.se
    if higher_is_better:
        bound = d - h
        if bound >= -slack:
            return
        claim = f"{metric}(a) >= {metric}(b) - {slack:.6g}"
        side = f"lower {_pct(level)} confidence bound {bound:+.6f} < {-slack:+.6g}"
    else:
        bound = d + h
        if bound <= slack:
            return
        claim = f"{metric}(a) <= {metric}(b) + {slack:.6g}"
        side = f"upper {_pct(level)} confidence bound {bound:+.6f} > {slack:+.6g}"
    raise AssertionError(
        f"{claim} is not shown at {_pct(level)} confidence (paired over replicas): "
        f"{metric}(a) = {p.a:.6f}, {metric}(b) = {p.b:.6f}, a - b = {d:+.6f}, one-sided {side} "
        f"(standard error {p.se:.3g}); {_replay(a)} for both"
    )


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def _result_arg(name: str, value: Any) -> SimulationResult:
    if not isinstance(value, SimulationResult):
        raise TypeError(f"{name} must be a SimulationResult, got {type(value).__name__}")
    return value
