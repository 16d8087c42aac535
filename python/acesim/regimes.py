"""From one unit's failure law to a gang's: the fresh gang and the steady state.

A job of ``n`` units (GPUs, nodes) fails when any of them does. Given the law
of one unit's lifetime, what the job sees depends on the units' ages:

**Fresh gang** (new hardware, every unit at age 0): the first failure is the
minimum of ``n`` independent lifetimes, with survival ``sf(t) ** n``;
:func:`gang` returns that law. For a Weibull of shape ``k`` it is a Weibull of
the same shape and ``n ** (1 / k)`` times smaller scale: with wear-out
(``k > 1``) a fresh gang waits far longer than ``mean / n`` for its first
failure, with a bursty law (``k < 1``) far less.

**Steady state** (units of all ages, each failed unit replaced by a new
one): the gang sees the superposition of its units' renewal processes. Its
failure rate is ``n / mean`` whatever the law (so its mean time between
failures is ``mean / n``), and for a large gang the gaps are close to
exponential (Palm-Khintchine), unless failures are correlated or the fleet
is not stationary. A :class:`~acesim.Fleet` with ``node_failures=law``
models this exactly: one renewal process per node, started in its stationary
state by default (``node_start="stationary"``).

:class:`~acesim.ScaleAware` (the base law's shape, its mean divided by the
job's size) matches neither regime unless the per-unit law is exponential,
where all three agree. (For a Weibull of shape ``k``, ``ScaleAware(law,
ref_gpus=1, exponent=1 / k)`` is the fresh gang of every size.)

>>> import acesim as ace
>>> ace.gang(ace.Weibull(shape=2.0, scale=100.0), 4)
Weibull(shape=2.0, scale=50.0)
>>> ace.gang(ace.Exponential(3600.0), 4)
Exponential(mean=900.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import integer
from .distributions import (
    Constant,
    Distribution,
    Empirical,
    Exponential,
    Gamma,
    Mixture,
    Never,
    Replay,
    ScaleAware,
    Weibull,
    iter_laws,
    scipy_to_law,
)

__all__ = ["GANG_POINTS", "gang"]

#: How many quantiles :func:`gang` tabulates for a law without a closed form.
GANG_POINTS = 65_536


def gang(law: Any, units: int, *, points: int = GANG_POINTS) -> Distribution:
    """The law of the first failure of ``units`` fresh units whose lifetimes
    are independent draws of ``law``: the minimum of ``units`` draws, with
    survival ``law.sf(t) ** units`` (see the module's notes for the
    steady-state regime, which this is not).

    What it returns, by law:

    - ``units == 1``: ``law`` itself;
    - ``Exponential(m)``: ``Exponential(m / units)`` (exact);
    - ``Weibull(k, s)``: ``Weibull(k, s / units ** (1 / k))`` (exact);
    - ``Gamma(1, s)`` (an exponential): ``Gamma(1, s / units)`` (exact);
    - ``Constant(c)``: itself (exact);
    - ``Never()``: itself (units that never fail never fail together);
    - ``ScaleAware(base, ref_gpus, exponent)``: ``ScaleAware(gang(base),
      ref_gpus, exponent)`` (exact: scaling commutes with the minimum);
    - any other law (``LogNormal``, ``Gamma``, ``Mixture``, ``Empirical``,
      ``BlockBootstrap``, and a ``ScaleAware`` of one): an
      :class:`~acesim.Empirical` of the ``points`` quantiles of the exact law
      at probabilities ``(j + 1/2) / points``, ``j = 0 .. points - 1``
      (found from ``law``'s quantile at ``1 - (1 - q) ** (1 / units)``, with
      both tails kept to full precision). Its cdf is within ``1 / (2
      points)`` of the exact one everywhere (7.6e-6 at the default 65,536
      points): that is its Kolmogorov-Smirnov distance to the exact law
      (attained at every point for a continuous law). Its mean is the
      midpoint rule on the exact quantile function, whose error grows with
      the weight of the upper tail beyond the last point. For an
      ``Empirical`` or ``BlockBootstrap`` base the points are sample values:
      the law of the smallest of ``units`` resampled values, each value's
      probability rounded to the grid. Draws cost what an ``Empirical``'s do
      (one uniform index).

    ``law`` may be a frozen scipy distribution (:func:`~acesim.from_scipy`).
    A :class:`~acesim.Replay` has no law to take the minimum of (its draws
    are a fixed sequence) and a :class:`~acesim.Mixture` holding a
    ``ScaleAware`` depends on the job's size below its root: both raise.

    >>> import acesim as ace
    >>> g = ace.gang(ace.LogNormal(mu=10.0, sigma=1.0), 1024)
    >>> type(g).__name__, g.samples.size
    ('Empirical', 65536)
    """
    law = scipy_to_law("law", law)
    if not isinstance(law, Distribution):
        raise TypeError(f"law must be a Distribution, got {type(law).__name__}")
    n = integer("units", units, minimum=1, maximum=2**63 - 1)
    m = integer("points", points, minimum=2, maximum=2**24)
    for inner in iter_laws(law):
        if isinstance(inner, Replay):
            raise TypeError(
                "law: a Replay is an exact recorded sequence, not a law of independent "
                "lifetimes; gang needs a law (an Empirical of the recorded times, for one)"
            )
    if n == 1:
        return law
    return _gang(law, n, m)


def _gang(law: Distribution, n: int, m: int) -> Distribution:
    if isinstance(law, Exponential):
        return Exponential(law.mean_value / n)
    if isinstance(law, Weibull):
        return Weibull(shape=law.shape, scale=law.scale / float(n) ** (1.0 / law.shape))
    if isinstance(law, Gamma) and law.shape == 1.0:
        return Gamma(shape=1.0, scale=law.scale / n)
    if isinstance(law, Constant | Never):
        return law
    if isinstance(law, ScaleAware):
        return ScaleAware(_gang(law.base, n, m), law.ref_gpus, law.exponent)
    if isinstance(law, Mixture) and any(isinstance(d, ScaleAware) for d in iter_laws(law)):
        raise ValueError(
            "law: a Mixture holding a ScaleAware depends on the job's size below its root, "
            "so its gang has no single law; take the gang of each component's law instead"
        )
    return Empirical(_minimum_quantiles(law, n, m))


def _minimum_quantiles(law: Distribution, n: int, m: int) -> Any:
    """The quantiles of the minimum of ``n`` draws of ``law`` at ``(j + 1/2) / m``.

    The minimum's cdf reaches ``q`` where ``law.sf(x) = (1 - q) ** (1 / n)``:
    that survival (``pc``) and its complement (``p``) are both computed from
    ``log(1 - q) / n`` (``1 - q = (m - j - 1/2) / m`` exactly), so neither
    loses precision when ``n`` is large (``p`` tiny) or ``q`` near 1.
    """
    j = np.arange(m, dtype=np.float64)
    log_survival = np.log((m - j - 0.5) / m) / float(n)
    pc = np.exp(log_survival)
    p = -np.expm1(log_survival)
    return law._quantile(p, pc, 1.0)
