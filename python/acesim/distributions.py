"""Duration distributions: how inter-failure times, checkpoint save/load
latencies, init and repair times are drawn.

Each class validates its parameters at construction and compiles to a C++
sampler. Draws come from counter-based Philox streams: draw ``i`` of stream
``stream`` of replica ``replica`` under ``seed`` is a pure function of those
four numbers, the same on every thread count and device.

Every law also evaluates: ``cdf(x)``, ``sf(x)`` (``1 - cdf``, computed
directly so that the upper tail keeps its precision), ``pdf(x)`` where it has
a density and ``ppf(q)`` (its quantile), elementwise over numbers or numpy
arrays, in numpy only. Frozen scipy distributions (``expon``,
``weibull_min``, ``lognorm``, ``gamma`` with ``loc=0``) are accepted wherever
a law is, and converted exactly (:func:`from_scipy`).

>>> import acesim as ace
>>> ace.Exponential(3600.0).mean()
3600.0
>>> x = ace.Weibull(shape=0.5, scale=1000.0).sample(4, seed=1)
>>> x.shape
(4,)
>>> round(ace.Exponential(3600.0).cdf(3600.0), 6)
0.632121
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from . import _core, _special
from ._validation import (
    NO_SUCH_FILE,
    boolean,
    described,
    durations,
    finite,
    input_file_problem,
    integer,
    positive,
    real,
    real_array,
    repeated_column,
    seconds,
)

__all__ = [
    "BlockBootstrap",
    "Constant",
    "Distribution",
    "Empirical",
    "Exponential",
    "Gamma",
    "LogNormal",
    "Mixture",
    "Never",
    "Replay",
    "ScaleAware",
    "as_distribution",
    "from_scipy",
]

_MAX_DRAWS = 2**32
_DEVICES = ("cpu", "cuda")

FloatArray = npt.NDArray[np.float64]


class Distribution:
    """Base class: a law for a duration in seconds."""

    _compiled: Any

    def mean(self, gpus: float | None = None) -> float:
        """Expected value in seconds (for a job of ``gpus`` GPUs; only
        :class:`ScaleAware` depends on it)."""
        return float(self._compiled.mean(self._gpus(gpus)))

    def forward_recurrence_mean(self, gpus: float | None = None) -> float:
        """Mean of the stationary first gap, ``E[X^2] / (2 E[X])`` in seconds:
        the expected wait for the next event seen from a random time of a
        renewal process with this law (the draws of
        ``sample(stationary=True)``). Equal to the mean for an exponential,
        half the value for a constant, larger than the mean for a law more
        variable than the exponential (Weibull shape < 1). 0 for a law with
        all of its mass at 0; ``mean()`` for a law holding a :class:`Replay`
        (replays stay exact); ``inf`` where ``E[X^2]`` overflows (never for
        :class:`Empirical` and :class:`BlockBootstrap`, whose moments are
        taken again on scaled values when their sums overflow: the value is
        at most half the largest sample).

        >>> import acesim as ace
        >>> ace.Weibull(shape=0.5, scale=1.0).forward_recurrence_mean()
        6.0
        """
        return float(self._compiled.forward_recurrence_mean(self._gpus(gpus)))

    def sample(
        self,
        n: int,
        seed: int = 0,
        stream: int = 0,
        device: str = "cpu",
        *,
        replica: int = 0,
        first: int = 0,
        gpus: float | None = None,
        threads: int | None = None,
        stationary: bool = False,
    ) -> npt.NDArray[np.float64]:
        """Draws ``first .. first + n - 1`` of a stream as a float64 array.

        ``device="cuda"`` computes the same draws on the GPU (see
        :func:`acesim.cuda_available`). ``threads=None`` uses every core; the
        numbers never depend on it.

        ``stationary=True`` draws the equilibrium forward-recurrence law
        instead (density ``sf(x) / mean``, mean
        :meth:`forward_recurrence_mean`): the first gap of a renewal process
        already in its stationary state, as a fleet's node failure processes
        are when the run begins. Draw ``i`` is a pure function of (seed,
        stream, replica, i) with counters of its own, independent of the
        plain draw ``i``. A law holding a :class:`Replay` gives its plain
        draws (replays stay exact). CPU only.
        """
        boolean("stationary", stationary)
        count = integer("n", n, minimum=0, maximum=_MAX_DRAWS)
        seed_ = integer("seed", seed, minimum=0, maximum=2**64 - 1)
        stream_ = integer("stream", stream, minimum=0, maximum=2**32 - 1)
        replica_ = integer("replica", replica, minimum=0, maximum=2**32 - 1)
        first_ = integer("first", first, minimum=0, maximum=_MAX_DRAWS - 1)
        if first_ + count > _MAX_DRAWS:
            raise ValueError("n: first + n must not exceed 2**32 draws per stream")
        threads_ = 0 if threads is None else integer("threads", threads, minimum=1, maximum=4096)
        if not isinstance(device, str) or device not in _DEVICES:
            raise ValueError(f"device must be one of {_DEVICES}, got {device!r}")
        if stationary and device != "cpu":
            raise ValueError(f"device must be 'cpu' when stationary=True, got {device!r}")
        sampler = _core.sample_forward_recurrence if stationary else _core.sample
        out: npt.NDArray[np.float64] = sampler(
            self._compiled,
            count,
            seed_,
            stream_,
            replica_,
            first_,
            self._gpus(gpus),
            threads_,
            device,
        )
        return out

    @overload
    def cdf(self, x: float, gpus: float | None = None) -> float: ...
    @overload
    def cdf(self, x: npt.ArrayLike, gpus: float | None = None) -> FloatArray: ...
    def cdf(self, x: npt.ArrayLike, gpus: float | None = None) -> float | FloatArray:
        """``P(X <= x)``, elementwise (a float for a number, an array of the
        same shape for an array), for a job of ``gpus`` GPUs (only
        :class:`ScaleAware` depends on it; the same default as :meth:`mean`).

        Right-continuous: where the law has an atom (:class:`Constant`; the
        samples of :class:`Empirical`, :class:`BlockBootstrap` and
        :class:`Replay`, whose cdf is the empirical one, ``#{samples <= x} /
        n``) it takes its upper value there. 0 below 0.

        >>> import acesim as ace
        >>> ace.Empirical([1.0, 2.0, 2.0, 5.0]).cdf([0.5, 2.0, 4.0])
        array([0.  , 0.75, 0.75])
        """
        return self._evaluate("x", x, gpus, self._cdf)

    @overload
    def sf(self, x: float, gpus: float | None = None) -> float: ...
    @overload
    def sf(self, x: npt.ArrayLike, gpus: float | None = None) -> FloatArray: ...
    def sf(self, x: npt.ArrayLike, gpus: float | None = None) -> float | FloatArray:
        """Survival ``P(X > x) = 1 - cdf(x)``, computed directly, so that it
        keeps its relative precision far in the upper tail. Same conventions
        as :meth:`cdf`."""
        return self._evaluate("x", x, gpus, self._sf)

    @overload
    def pdf(self, x: float, gpus: float | None = None) -> float: ...
    @overload
    def pdf(self, x: npt.ArrayLike, gpus: float | None = None) -> FloatArray: ...
    def pdf(self, x: npt.ArrayLike, gpus: float | None = None) -> float | FloatArray:
        """Density at ``x`` (per second). Only laws with a density have one:
        :class:`Exponential`, :class:`Weibull`, :class:`LogNormal`,
        :class:`Gamma`, and a :class:`Mixture` or :class:`ScaleAware` of
        those. The others (:class:`Constant`, :class:`Empirical`,
        :class:`BlockBootstrap`, :class:`Replay`, or a law holding one) raise
        ``TypeError`` naming the law. At 0 a Weibull or gamma of shape below
        1 has an infinite density."""
        return self._evaluate("x", x, gpus, self._pdf)

    @overload
    def ppf(self, q: float, gpus: float | None = None) -> float: ...
    @overload
    def ppf(self, q: npt.ArrayLike, gpus: float | None = None) -> FloatArray: ...
    def ppf(self, q: npt.ArrayLike, gpus: float | None = None) -> float | FloatArray:
        """Quantile: the smallest ``x`` with ``cdf(x) >= q``, for ``q`` in
        [0, 1]; ``ppf(0)`` is the lowest point of the support (0 for the
        continuous laws), ``ppf(1)`` the highest (``inf`` for them).

        Closed forms for :class:`Exponential`, :class:`Weibull`,
        :class:`LogNormal` (to a few ulps), and for the resampling laws the
        sample quantile (a sample value: the ``ceil(q n)``-th smallest); a
        :class:`ScaleAware` scales its base's. :class:`Gamma` and
        :class:`Mixture` have none: their quantile is found by bisection on
        ``cdf`` (``sf`` above the median), to the last double, at the cost of
        about 63 evaluations.
        """
        qs, scalar = _points("q", q)
        if ((qs < 0.0) | (qs > 1.0)).any():
            raise ValueError("q must be in [0, 1]")
        g = self._gpus(gpus)
        flat = qs.ravel()
        out = self._quantile(flat, 1.0 - flat, g)
        lo, hi = self._support(g)
        out = np.where(flat == 0.0, lo, np.where(flat == 1.0, hi, out))
        return float(out[0]) if scalar else out.reshape(qs.shape)

    # Each law implements these on 1-D float64 arrays, at a resolved ``gpus``.

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise TypeError(f"{type(self).__name__} has no cdf")  # pragma: no cover

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise TypeError(f"{type(self).__name__} has no sf")  # pragma: no cover

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise TypeError(f"{type(self).__name__} has no density")

    def _support(self, gpus: float) -> tuple[float, float]:
        """Lowest and highest points of the support."""
        return 0.0, math.inf

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        """Smallest ``x`` with ``cdf(x) >= p``, given ``p`` and ``pc = 1 - p``
        (each as precise as the caller has it): the condition is tested on
        ``cdf`` up to the median and as ``sf(x) <= pc`` above it. By default a
        bisection on the doubles (``_special.bisect``); ``pc == 0`` gives the
        top of the support."""
        lower = p <= 0.5

        def accept(x: FloatArray, which: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
            ok = np.empty(x.shape, dtype=np.bool_)
            low = lower[which]
            if low.any():
                ok[low] = self._cdf(x[low], gpus) >= p[which][low]
            high = ~low
            if high.any():
                ok[high] = self._sf(x[high], gpus) <= pc[which][high]
            return ok

        lo, hi = self._support(gpus)
        out = np.maximum(_special.bisect(accept, p.size), lo)
        return np.where(pc == 0.0, hi, out)

    def _evaluate(
        self,
        name: str,
        x: npt.ArrayLike,
        gpus: float | None,
        f: Callable[[FloatArray, float], FloatArray],
    ) -> float | FloatArray:
        xs, scalar = _points(name, x)
        g = self._gpus(gpus)
        out = f(xs.ravel(), g)
        return float(out[0]) if scalar else out.reshape(xs.shape)

    def _gpus(self, gpus: float | None) -> float:
        return 1.0 if gpus is None else positive("gpus", gpus)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self) -> str:
        return ""


def _points(name: str, x: Any) -> tuple[FloatArray, bool]:
    """``x`` as a float64 array (and whether it was a single number)."""
    found = real_array(name, x)
    if found is None:
        raise TypeError(f"{name} must be a number or an array of numbers, got {type(x).__name__}")
    arr = np.asarray(found, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return arr, arr.ndim == 0


def _no_density(law: Distribution, why: str) -> TypeError:
    return TypeError(f"{type(law).__name__} has no density: {why}; use cdf or sf")


class Constant(Distribution):
    """Always ``value`` seconds."""

    def __init__(self, value: float) -> None:
        self.value = finite("value", value)
        if self.value < 0:
            raise ValueError(f"value must be >= 0, got {self.value!r}")
        self._compiled = _core.Distribution.constant(self.value)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return (x >= self.value).astype(np.float64)

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return (x < self.value).astype(np.float64)

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise _no_density(self, f"all of its mass is at {self.value!r}")

    def _support(self, gpus: float) -> tuple[float, float]:
        return self.value, self.value

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        return np.full(p.shape, self.value)

    def _repr_args(self) -> str:
        return f"value={self.value!r}"


class Never(Distribution):
    """A failure law that never fires: failures switched off.

    Accepted where a failure law is (``failures=`` of :func:`acesim.simulate`
    and :class:`acesim.FleetModel`, one job's law in a per-job list,
    ``Fleet(node_failures=...)``, a :class:`~acesim.NodeTrace`'s ``model``),
    in Python, in scenario files (``{law = "never"}``) and in the protocol
    (``{"law": "never"}``). It is not a duration: a save, load, repair or
    detection that never ends is refused (``TypeError`` naming the field),
    and so is a :class:`Mixture` or :class:`ScaleAware` holding it.

    ``Fleet(nodes, node_failures=ace.Never())`` is a fleet without failures:
    with a node-level law the job-level default is none, so nothing fails
    (``Fleet(node_failures=None)`` keeps its meaning: no node-level law, and
    :func:`acesim.simulate` then draws job-level failures from
    :func:`acesim.meta_scale_model`). The core runs it as no law at all
    (the failure clock is never started), so a run with ``Never`` is the run
    with that failure process absent.

    Its mean is ``inf``; every draw is ``inf``; ``cdf`` is 0, ``sf`` 1, no
    density. The analytic columns of a job that sees no failure law report
    what they report for any job without failures: ``mtbf``,
    ``young_interval`` and ``daly_interval`` are ``inf`` and a ``"young"``
    or ``"daly"`` interval is the whole work (one final checkpoint).

    >>> import acesim as ace
    >>> ace.Never().mean()
    inf
    """

    def __init__(self) -> None:
        # No compiled law: the run's table of laws gives it no index (-1,
        # "none"), which every failure process of the core reads as absent.
        self._compiled = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Never)

    def __hash__(self) -> int:
        return hash(Never)

    def mean(self, gpus: float | None = None) -> float:
        self._gpus(gpus)
        return math.inf

    def forward_recurrence_mean(self, gpus: float | None = None) -> float:
        self._gpus(gpus)
        return math.inf

    def sample(
        self,
        n: int,
        seed: int = 0,
        stream: int = 0,
        device: str = "cpu",
        *,
        replica: int = 0,
        first: int = 0,
        gpus: float | None = None,
        threads: int | None = None,
        stationary: bool = False,
    ) -> npt.NDArray[np.float64]:
        """``n`` draws, each ``inf`` (the arguments are checked as for any law)."""
        boolean("stationary", stationary)
        count = integer("n", n, minimum=0, maximum=_MAX_DRAWS)
        integer("seed", seed, minimum=0, maximum=2**64 - 1)
        integer("stream", stream, minimum=0, maximum=2**32 - 1)
        integer("replica", replica, minimum=0, maximum=2**32 - 1)
        integer("first", first, minimum=0, maximum=_MAX_DRAWS - 1)
        if threads is not None:
            integer("threads", threads, minimum=1, maximum=4096)
        if not isinstance(device, str) or device not in _DEVICES:
            raise ValueError(f"device must be one of {_DEVICES}, got {device!r}")
        self._gpus(gpus)
        return np.full(count, math.inf)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return np.zeros(x.shape)

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return np.ones(x.shape)

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise _no_density(self, "it never fires")

    def _support(self, gpus: float) -> tuple[float, float]:
        return math.inf, math.inf

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        return np.full(p.shape, math.inf)


def _not_never(name: str, law: Distribution) -> Distribution:
    """``law``, unless it is :class:`Never` (which is no duration)."""
    if isinstance(law, Never):
        raise TypeError(
            f"{name}: Never() is a failure law (failures switched off), not a duration; "
            "it is accepted only where a failure law is"
        )
    return law


class Exponential(Distribution):
    """Memoryless, with the given ``mean``."""

    def __init__(self, mean: float) -> None:
        self.mean_value = positive("mean", mean)
        self._compiled = _core.Distribution.exponential(self.mean_value)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return -np.expm1(-np.maximum(x, 0.0) / self.mean_value)

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return np.exp(-np.maximum(x, 0.0) / self.mean_value)

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        m = self.mean_value
        return np.where(x >= 0.0, np.exp(-np.maximum(x, 0.0) / m) / m, 0.0)

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        return self.mean_value * _unit_exponential_quantile(p, pc)

    def _repr_args(self) -> str:
        return f"mean={self.mean_value!r}"


class Weibull(Distribution):
    """Weibull(shape k, scale lambda). k < 1: decreasing hazard (bursty);
    k = 1: exponential; k > 1: wear-out. Mean lambda * Gamma(1 + 1/k)."""

    def __init__(self, shape: float, scale: float) -> None:
        self.shape = positive("shape", shape)
        self.scale = positive("scale", scale)
        self._compiled = _core.Distribution.weibull(self.shape, self.scale)

    def _hazard_integral(self, x: FloatArray) -> FloatArray:
        """``(x / scale) ** shape``, 0 below 0 (``inf`` where it overflows)."""
        with np.errstate(over="ignore"):
            return (np.maximum(x, 0.0) / self.scale) ** self.shape

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return -np.expm1(-self._hazard_integral(x))

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return np.exp(-self._hazard_integral(x))

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        k, lam = self.shape, self.scale
        at_zero = math.inf if k < 1.0 else 1.0 / lam if k == 1.0 else 0.0
        pos = (x > 0.0) & (x < math.inf)
        z = np.where(pos, x, 1.0) / lam
        with np.errstate(over="ignore"):
            inner = np.exp(math.log(k / lam) + (k - 1.0) * np.log(z) - z**k)
        return np.where(pos, inner, np.where(x == 0.0, at_zero, 0.0))

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        with np.errstate(over="ignore"):
            return self.scale * _unit_exponential_quantile(p, pc) ** (1.0 / self.shape)

    def _repr_args(self) -> str:
        return f"shape={self.shape!r}, scale={self.scale!r}"


class LogNormal(Distribution):
    """exp(N(mu, sigma^2)); ``mu`` and ``sigma`` are of the underlying normal."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu = finite("mu", mu)
        self.sigma = positive("sigma", sigma)
        self._compiled = _core.Distribution.lognormal(self.mu, self.sigma)

    def _standardised(self, x: FloatArray) -> FloatArray:
        """``(log x - mu) / sigma``, ``-inf`` at and below 0."""
        with np.errstate(divide="ignore"):
            return (np.log(np.maximum(x, 0.0)) - self.mu) / self.sigma

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return _special.ndtr(self._standardised(x))

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return _special.ndtr(-self._standardised(x))

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        pos = (x > 0.0) & (x < math.inf)
        xp = np.where(pos, x, 1.0)
        z = (np.log(xp) - self.mu) / self.sigma
        inner = np.exp(-0.5 * z * z) / (xp * self.sigma * math.sqrt(2.0 * math.pi))
        return np.where(pos, inner, 0.0)

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        with np.errstate(over="ignore"):
            return np.exp(self.mu + self.sigma * _special.ndtri(p, pc))

    def _repr_args(self) -> str:
        return f"mu={self.mu!r}, sigma={self.sigma!r}"


class Gamma(Distribution):
    """Gamma(shape k, scale theta); mean k * theta."""

    def __init__(self, shape: float, scale: float) -> None:
        self.shape = positive("shape", shape)
        self.scale = positive("scale", scale)
        self._compiled = _core.Distribution.gamma(self.shape, self.scale)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return _special.gamma_pq(self.shape, np.maximum(x, 0.0) / self.scale)[0]

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return _special.gamma_pq(self.shape, np.maximum(x, 0.0) / self.scale)[1]

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        a, theta = self.shape, self.scale
        at_zero = math.inf if a < 1.0 else 1.0 / theta if a == 1.0 else 0.0
        pos = (x > 0.0) & (x < math.inf)
        y = np.where(pos, x, 1.0) / theta
        inner = np.exp((a - 1.0) * np.log(y) - y - math.lgamma(a)) / theta
        return np.where(pos, inner, np.where(x == 0.0, at_zero, 0.0))

    def _repr_args(self) -> str:
        return f"shape={self.shape!r}, scale={self.scale!r}"


class Mixture(Distribution):
    """A weighted mixture: each draw picks a component with probability
    proportional to its weight, then draws from it.

    >>> import acesim as ace
    >>> bimodal = ace.Mixture([(0.9, ace.Exponential(5 * ace.DAY)),
    ...                        (0.1, ace.Exponential(20 * ace.MINUTE))])
    >>> round(bimodal.mean() / ace.DAY, 3)
    4.501
    """

    def __init__(self, components: Iterable[tuple[float, Distribution]]) -> None:
        if isinstance(components, str | bytes) or not isinstance(components, Iterable):
            raise TypeError("components must be a sequence of (weight, Distribution) pairs")
        pairs = list(components)
        if not pairs:
            raise ValueError("components must not be empty")
        weights: list[float] = []
        dists: list[Distribution] = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise TypeError(f"components[{i}] must be a (weight, Distribution) pair")
            weight, dist = pair
            dist = scipy_to_law(f"components[{i}]", dist)
            w = finite(f"components[{i}] weight", weight)
            if w < 0:
                raise ValueError(f"components[{i}] weight must be >= 0, got {w!r}")
            if not isinstance(dist, Distribution):
                raise TypeError(
                    f"components[{i}] must hold a Distribution, got {type(dist).__name__}"
                )
            _not_never(f"components[{i}]", dist)
            weights.append(w)
            dists.append(dist)
        if sum(weights) <= 0:
            raise ValueError("components: weights must not all be zero")
        self.components: list[tuple[float, Distribution]] = list(zip(weights, dists, strict=True))
        self._compiled = _core.Distribution.mixture(weights, [d._compiled for d in dists])

    @cached_property
    def _drawn(self) -> list[tuple[int, float, Distribution]]:
        """(index, normalised weight, law) of the components that can be drawn."""
        total = sum(w for w, _ in self.components)
        return [(i, w / total, d) for i, (w, d) in enumerate(self.components) if w > 0.0]

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        out = np.zeros(x.shape)
        for _, w, d in self._drawn:
            out += w * d._cdf(x, gpus)
        return np.minimum(out, 1.0)

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        out = np.zeros(x.shape)
        for _, w, d in self._drawn:
            out += w * d._sf(x, gpus)
        return np.minimum(out, 1.0)

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        out = np.zeros(x.shape)
        for i, w, d in self._drawn:
            try:
                out += w * d._pdf(x, gpus)
            except TypeError:
                raise _no_density(self, f"components[{i}] ({d!r}) has none") from None
        return out

    def _support(self, gpus: float) -> tuple[float, float]:
        ends = [d._support(gpus) for _, _, d in self._drawn]
        return min(lo for lo, _ in ends), max(hi for _, hi in ends)

    def _repr_args(self) -> str:
        return repr(self.components)


class _SampleLaw(Distribution):
    """The law of a uniformly picked value of a recorded sample: its
    empirical cdf ``#{values <= x} / n`` (right-continuous) and sample
    quantile. Discrete, so no density."""

    _why_discrete = "it is discrete (its cdf steps at each of its values)"

    def _values(self) -> FloatArray:
        raise NotImplementedError  # pragma: no cover

    # The core sums the values as they are, so that a sum beyond the largest
    # double is inf (and then E[X^2] / (2 E[X]) NaN) though the values are
    # finite. Only then are the moments taken again here, on the values
    # scaled by the largest: the result is the core's whenever it is finite.

    def mean(self, gpus: float | None = None) -> float:
        m = super().mean(gpus)
        if math.isinf(m):
            v = self._values()
            if np.isfinite(v).all():
                top = float(v.max())
                return float(np.mean(v / top)) * top
        return m

    def forward_recurrence_mean(self, gpus: float | None = None) -> float:
        r = super().forward_recurrence_mean(gpus)
        if math.isfinite(r):
            return r
        v = self._values()
        if not np.isfinite(v).all():
            return r
        top = float(v.max())
        y = v / top
        return float(np.mean(y * y) / (2.0 * np.mean(y))) * top

    @cached_property
    def _sorted(self) -> FloatArray:
        return np.sort(self._values())

    def _count_at_most(self, x: FloatArray) -> FloatArray:
        return np.searchsorted(self._sorted, x, side="right").astype(np.float64)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        n = float(self._sorted.size)
        return self._count_at_most(x) / n

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        n = float(self._sorted.size)
        return (n - self._count_at_most(x)) / n

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        raise _no_density(self, self._why_discrete)

    def _support(self, gpus: float) -> tuple[float, float]:
        return float(self._sorted[0]), float(self._sorted[-1])

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        # The k-th smallest value, k the least with k / n >= p, in the same
        # float division as _cdf: ppf(q) is the least value whose computed
        # cdf reaches q, so ppf(cdf(v)) == v for every value v. (p alone
        # decides: it is known to far better than the 1 / n between steps.)
        n = self._sorted.size
        nf = float(n)
        k = np.clip(np.ceil(p * nf), 1, n).astype(np.int64)
        k = np.where((k > 1) & ((k - 1) / nf >= p), k - 1, k)
        k = np.where((k < n) & (k / nf < p), k + 1, k)
        out: FloatArray = self._sorted[k - 1]
        return out


class Empirical(_SampleLaw):
    """Historical samples, resampled i.i.d. per event (a fleet's own history).

    Its ``cdf`` is the samples' empirical cdf (``#{samples <= x} / n``,
    right-continuous: it takes its upper value at each sample), ``ppf`` the
    sample quantile, and it has no density."""

    def __init__(self, samples: npt.ArrayLike) -> None:
        self.samples = durations("samples", samples)
        self._compiled = _core.Distribution.empirical(self.samples)

    def _values(self) -> FloatArray:
        return self.samples

    @classmethod
    def from_csv(
        cls, path: str | os.PathLike[str], column: str | int = 0, *, skip_missing: bool = True
    ) -> Empirical:
        """Samples from one column of a UTF-8 CSV file with a header row (by
        name or index; a byte-order mark is skipped). Empty cells are skipped
        when ``skip_missing`` (a bool). A cell that is not a finite number
        >= 0 is a ValueError naming the column and the line."""
        values = _read_csv_column(path, column, skip_missing=skip_missing, allow_inf=False)
        return cls(values)

    @classmethod
    def from_failure_times(cls, timestamps: npt.ArrayLike) -> Empirical:
        """Inter-failure times: differences of the sorted failure timestamps
        (seconds). Needs at least two timestamps."""
        t = _finite_array("timestamps", timestamps)
        if t.size < 2:
            raise ValueError("timestamps must hold at least two failure times")
        return cls(np.diff(np.sort(t)))

    def _repr_args(self) -> str:
        return f"<{self.samples.size} samples, mean {self.samples.mean():.6g}>"


class BlockBootstrap(_SampleLaw):
    """Resamples contiguous runs of ``block`` draws from an ordered history
    (circular block bootstrap): keeps bursts such as "healthy for days, then a
    failure every twenty minutes". Draw ``i`` of a stream belongs to block
    ``i // block``, whose start is drawn uniformly.

    Each draw, on its own, is a uniformly picked value of the sequence, so
    ``cdf``, ``sf`` and ``ppf`` are the sequence's empirical ones (as for
    :class:`Empirical`; the blocks tie successive draws together, not the
    law of one)."""

    def __init__(self, sequence: npt.ArrayLike, block: int) -> None:
        self.sequence = durations("sequence", sequence)
        self.block = integer("block", block, minimum=1, maximum=self.sequence.size)
        self._compiled = _core.Distribution.block_bootstrap(self.sequence, self.block)

    def _values(self) -> FloatArray:
        return self.sequence

    def _repr_args(self) -> str:
        return f"<{self.sequence.size} values>, block={self.block}"


class Replay(_SampleLaw):
    """An exact recorded sequence, replayed draw by draw: draw ``i`` is
    ``times[i]``; after the last one every draw is ``inf`` (no more events).
    Feed a run's ``trace.inter_failure`` back to reproduce it.

    Its draws are not random, so it has no law of its own: ``cdf``, ``sf``
    and ``ppf`` describe the recorded times (their empirical cdf, ``inf``
    entries included; the ``inf`` draws after the end are not counted)."""

    _why_discrete = "it replays an exact sequence (its cdf steps at each recorded time)"

    def __init__(self, times: npt.ArrayLike) -> None:
        self.times = durations("times", times, allow_inf=True)
        self._compiled = _core.Distribution.replay(self.times)

    def _values(self) -> FloatArray:
        return self.times

    def forward_recurrence_mean(self, gpus: float | None = None) -> float:
        return self.mean(gpus)  # the draws are the plain ones

    def _repr_args(self) -> str:
        return f"<{self.times.size} times>"


class ScaleAware(Distribution):
    """Draws of ``base`` scaled by ``(ref_gpus / gpus) ** exponent`` for a job
    of ``gpus`` GPUs: with exponent 1 the failure rate grows linearly with
    the job's size.

    It keeps the base law's shape and scales its mean. That is exact for an
    exponential base, and an empirical model for a law measured at the size
    of the job; for a per-unit (per-GPU, per-node) law that is not
    exponential it matches neither of the two regimes in which a gang of
    ``n`` units fails:

    - **fresh units** (new hardware, all starting at age 0): the gang's first
      failure is the minimum of ``n`` lifetimes, survival ``sf(t) ** n``,
      :func:`acesim.gang`. For a Weibull of shape ``k`` the shape stays ``k``
      but the scale shrinks as ``n ** (-1 / k)``, not ``1 / n``: a wear-out
      law (``k > 1``) gives a gang far more time before its first failure
      than ``mean / n``, a bursty one (``k < 1``) far less.
    - **steady state** (units of all ages, each failed unit replaced): the
      gang sees the superposition of its units' renewal processes, with rate
      ``n / mean`` whatever the law (the mean ``mean / n`` that exponent 1
      gives), but with gaps close to exponential for a large gang
      (Palm-Khintchine), not of the base's shape, unless failures are
      correlated or the fleet is not stationary. A :class:`~acesim.Fleet` with
      ``node_failures=law`` models it exactly: one renewal process per node,
      in its stationary state by default.
    """

    def __init__(self, base: Distribution, ref_gpus: float, exponent: float = 1.0) -> None:
        base = scipy_to_law("base", base)
        if not isinstance(base, Distribution):
            raise TypeError(f"base must be a Distribution, got {type(base).__name__}")
        self.base = _not_never("base", base)
        self.ref_gpus = positive("ref_gpus", ref_gpus)
        self.exponent = finite("exponent", exponent)
        self._compiled = _core.Distribution.scale_aware(
            base._compiled, self.ref_gpus, self.exponent
        )

    def _gpus(self, gpus: float | None) -> float:
        return self.ref_gpus if gpus is None else positive("gpus", gpus)

    def _factor(self, gpus: float) -> float:
        """What a draw of the base is multiplied by at ``gpus``."""
        return float((self.ref_gpus / gpus) ** self.exponent)

    def _cdf(self, x: FloatArray, gpus: float) -> FloatArray:
        return self.base._cdf(x / self._factor(gpus), gpus)

    def _sf(self, x: FloatArray, gpus: float) -> FloatArray:
        return self.base._sf(x / self._factor(gpus), gpus)

    def _pdf(self, x: FloatArray, gpus: float) -> FloatArray:
        c = self._factor(gpus)
        try:
            return self.base._pdf(x / c, gpus) / c
        except TypeError:
            raise _no_density(self, f"its base {self.base!r} has none") from None

    def _support(self, gpus: float) -> tuple[float, float]:
        c = self._factor(gpus)
        lo, hi = self.base._support(gpus)
        return c * lo, c * hi

    def _quantile(self, p: FloatArray, pc: FloatArray, gpus: float) -> FloatArray:
        return self._factor(gpus) * self.base._quantile(p, pc, gpus)

    def _repr_args(self) -> str:
        return f"{self.base!r}, ref_gpus={self.ref_gpus!r}, exponent={self.exponent!r}"


def _unit_exponential_quantile(p: FloatArray, pc: FloatArray) -> FloatArray:
    """``-log(1 - p)``, from ``p`` up to the median and from ``pc`` above it."""
    with np.errstate(divide="ignore"):
        return np.where(p <= 0.5, -np.log1p(-np.minimum(p, 0.5)), -np.log(np.maximum(pc, 0.0)))


#: The scipy.stats families :func:`from_scipy` converts, with their acesim law.
SCIPY_FAMILIES = {
    "expon": "Exponential(mean=scale)",
    "weibull_min": "Weibull(shape=c, scale=scale)",
    "lognorm": "LogNormal(mu=log(scale), sigma=s)",
    "gamma": "Gamma(shape=a, scale=scale)",
}
_ACCEPTED = (
    "frozen scipy.stats distributions expon(scale), weibull_min(c, scale), "
    "lognorm(s, scale) and gamma(a, scale), with loc=0"
)


def _is_scipy_object(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") or ""
    return module == "scipy" or module.startswith("scipy.")


def from_scipy(frozen: Any, name: str = "law") -> Distribution:
    """The acesim law of a frozen scipy.stats distribution, converted exactly:

    =============================  ======================================
    scipy                          acesim
    =============================  ======================================
    ``expon(scale=m)``             ``Exponential(mean=m)``
    ``weibull_min(c, scale=s)``    ``Weibull(shape=c, scale=s)``
    ``lognorm(s, scale=e)``        ``LogNormal(mu=log(e), sigma=s)``
    ``gamma(a, scale=t)``          ``Gamma(shape=a, scale=t)``
    =============================  ======================================

    (the parameters are the same numbers; lognorm's ``mu`` is ``log(scale)``,
    rounded once), so its draws are those of the acesim law written by hand.
    ``loc`` must be 0 (acesim's laws start at 0); any other family, or a
    distribution that is not frozen, is rejected with a ``TypeError`` or
    ``ValueError`` naming what is accepted. scipy is imported only here, for
    an object that is already scipy's.

    >>> from scipy import stats  # doctest: +SKIP
    >>> from_scipy(stats.weibull_min(2.9, scale=2.2e8))  # doctest: +SKIP
    Weibull(shape=2.9, scale=220000000.0)
    """
    if not _is_scipy_object(frozen):
        raise TypeError(f"{name} must be one of the {_ACCEPTED}, got {type(frozen).__name__}")
    from scipy import stats

    family = getattr(frozen, "dist", None)
    args = getattr(frozen, "args", None)
    kwds = getattr(frozen, "kwds", None)
    if (
        not isinstance(family, stats.rv_continuous)
        or not isinstance(args, tuple)
        or not isinstance(kwds, dict)
    ):
        raise TypeError(f"{name} must be one of the {_ACCEPTED}, got {type(frozen).__name__}")
    family_name = str(family.name)
    if family_name not in SCIPY_FAMILIES:
        raise ValueError(
            f"{name}: scipy.stats.{family_name} has no acesim law; accepted are the {_ACCEPTED}"
        )
    # scipy checked the parameters' names and count when it froze the law:
    # positional ones are the shapes, then loc, then scale.
    shapes = [part.strip() for part in family.shapes.split(",")] if family.shapes else []
    given: dict[str, Any] = dict(zip([*shapes, "loc", "scale"], args, strict=False))
    given.update(kwds)
    where = f"{name}: scipy.stats.{family_name}"
    try:
        loc = finite(f"{where} loc", given.get("loc", 0.0))
        if loc != 0.0:
            raise ValueError(f"{where} must have loc=0 (acesim's laws start at 0), got {loc!r}")
        scale = positive(f"{where} scale", given.get("scale", 1.0))
        if family_name == "expon":
            return Exponential(scale)
        if family_name == "weibull_min":
            return Weibull(shape=positive(f"{where} c", given["c"]), scale=scale)
        if family_name == "lognorm":
            return LogNormal(mu=math.log(scale), sigma=positive(f"{where} s", given["s"]))
        return Gamma(shape=positive(f"{where} a", given["a"]), scale=scale)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(where):
            raise
        raise type(exc)(f"{where}: {exc}") from None


def scipy_to_law(name: str, value: Any) -> Any:
    """``value`` converted by :func:`from_scipy` when it is a scipy object,
    else ``value`` itself (for the places that accept a law or something
    else, and check it afterwards)."""
    return from_scipy(value, name) if _is_scipy_object(value) else value


def iter_laws(law: Distribution) -> Iterator[Distribution]:
    """``law`` and every law inside it (Mixture components, ScaleAware bases)."""
    yield law
    if isinstance(law, Mixture):
        for _, component in law.components:
            yield from iter_laws(component)
    elif isinstance(law, ScaleAware):
        yield from iter_laws(law.base)


def as_distribution(name: str, value: Any) -> Distribution:
    """A Distribution as is; a frozen scipy distribution converted
    (:func:`from_scipy`); a plain number of seconds as :class:`Constant`."""
    if isinstance(value, Distribution):
        return _not_never(name, value)
    if _is_scipy_object(value):
        return from_scipy(value, name)
    try:
        real(name, value)
    except TypeError:
        raise TypeError(
            f"{name} must be a Distribution, a frozen scipy distribution ({_ACCEPTED}) "
            f"or a number of seconds, got {type(value).__name__}"
        ) from None
    return Constant(seconds(name, value))


def _finite_array(name: str, values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """A non-empty 1-D float64 array of finite numbers (any sign)."""
    if isinstance(values, str | bytes) or values is None:
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    arr = real_array(name, values)
    if arr is None:
        raise TypeError(f"{name} must hold real numbers{described(values)}")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if out.ndim != 1 or out.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional sequence")
    if not np.isfinite(out).all():
        raise ValueError(f"{name} must be finite")
    return out


def _did_you_mean(word: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _read_csv_column(
    path: str | os.PathLike[str],
    column: str | int,
    *,
    skip_missing: bool,
    where: Mapping[str, str] | None = None,
    allow_inf: bool = True,
) -> list[float]:
    """The durations (numbers >= 0; ``inf`` only with ``allow_inf``) of one
    column of a UTF-8 CSV file with a header (a byte-order mark is skipped),
    only the rows whose ``where`` columns hold those values; a ValueError
    names the file, or the column and the line."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a path, got {type(path).__name__}")
    if not isinstance(column, str | int) or isinstance(column, bool):
        raise TypeError(f"column must be a column name or index, got {type(column).__name__}")
    skip_missing = boolean("skip_missing", skip_missing)
    where = dict(where or {})
    problem = input_file_problem(path)
    if problem is not None and problem != NO_SUCH_FILE:
        raise ValueError(f"path: {os.fspath(path)!r} {problem}, not a CSV file")
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"path: {os.fspath(path)!r} is not UTF-8 text (line {line})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"path: {os.fspath(path)!r} is empty") from None
        twice = repeated_column(header)
        if twice is not None:
            raise ValueError(
                f"path: {os.fspath(path)!r}: the header names column {twice!r} twice (line 1)"
            )
        if isinstance(column, str):
            if column not in header:
                raise ValueError(
                    f"no column {column!r}{_did_you_mean(column, header)}; columns: {header}"
                )
            index = header.index(column)
        else:
            if not 0 <= column < len(header):
                raise ValueError(f"column index {column} out of range for {len(header)} columns")
            index = column
        filters = []
        for name, wanted in where.items():
            if name not in header:
                raise ValueError(f"where: no column {name!r}{_did_you_mean(name, header)}")
            filters.append((header.index(name), wanted))
        values: list[float] = []
        for row in reader:
            line_no = reader.line_num
            if not row:  # a blank line: no value
                if skip_missing or filters:
                    continue
                raise ValueError(f"column {column!r}: empty cell on line {line_no}")
            if len(row) != len(header):
                raise ValueError(
                    f"path: {os.fspath(path)!r}: line {line_no} has {len(row)} cells, "
                    f"the header {len(header)}"
                )
            if any(row[i] != wanted for i, wanted in filters):
                continue
            cell = row[index].strip()
            if cell == "":
                if skip_missing:
                    continue
                raise ValueError(f"column {column!r}: empty cell on line {line_no}")
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if math.isnan(value):
                raise ValueError(f"column {column!r}: not a number on line {line_no}: {cell!r}")
            if value < 0.0:
                raise ValueError(
                    f"column {column!r}: a negative duration on line {line_no}: {cell!r} "
                    "(samples are durations >= 0)"
                )
            if not allow_inf and math.isinf(value):
                raise ValueError(
                    f"column {column!r}: not a finite number on line {line_no}: {cell!r}"
                )
            values.append(value)
        if not values:
            raise ValueError(
                f"column {column!r} holds no values" + (f" where {where}" if where else "")
            )
    except csv.Error as exc:
        raise ValueError(
            f"path: {os.fspath(path)!r} is not a readable CSV file (line {reader.line_num}): {exc}"
        ) from None
    return values
