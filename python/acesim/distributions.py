"""Duration distributions: how inter-failure times, checkpoint save/load
latencies, init and repair times are drawn.

Each class validates its parameters at construction and compiles to a C++
sampler. Draws come from counter-based Philox streams: draw ``i`` of stream
``stream`` of replica ``replica`` under ``seed`` is a pure function of those
four numbers, the same on every thread count and device.

>>> import acesim as ace
>>> ace.Exponential(3600.0).mean()
3600.0
>>> x = ace.Weibull(shape=0.5, scale=1000.0).sample(4, seed=1)
>>> x.shape
(4,)
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._validation import durations, finite, integer, positive, real

__all__ = [
    "BlockBootstrap",
    "Constant",
    "Distribution",
    "Empirical",
    "Exponential",
    "Gamma",
    "LogNormal",
    "Mixture",
    "Replay",
    "ScaleAware",
    "as_distribution",
]

_MAX_DRAWS = 2**32
_DEVICES = ("cpu", "cuda")


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
        (replays stay exact); ``inf`` where ``E[X^2]`` overflows.

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
        if not isinstance(stationary, bool | np.bool_):
            raise TypeError(f"stationary must be a bool, got {type(stationary).__name__}")
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

    def _gpus(self, gpus: float | None) -> float:
        return 1.0 if gpus is None else positive("gpus", gpus)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self) -> str:
        return ""


class Constant(Distribution):
    """Always ``value`` seconds."""

    def __init__(self, value: float) -> None:
        self.value = finite("value", value)
        if self.value < 0:
            raise ValueError(f"value must be >= 0, got {self.value!r}")
        self._compiled = _core.Distribution.constant(self.value)

    def _repr_args(self) -> str:
        return f"value={self.value!r}"


class Exponential(Distribution):
    """Memoryless, with the given ``mean``."""

    def __init__(self, mean: float) -> None:
        self.mean_value = positive("mean", mean)
        self._compiled = _core.Distribution.exponential(self.mean_value)

    def _repr_args(self) -> str:
        return f"mean={self.mean_value!r}"


class Weibull(Distribution):
    """Weibull(shape k, scale lambda). k < 1: decreasing hazard (bursty);
    k = 1: exponential; k > 1: wear-out. Mean lambda * Gamma(1 + 1/k)."""

    def __init__(self, shape: float, scale: float) -> None:
        self.shape = positive("shape", shape)
        self.scale = positive("scale", scale)
        self._compiled = _core.Distribution.weibull(self.shape, self.scale)

    def _repr_args(self) -> str:
        return f"shape={self.shape!r}, scale={self.scale!r}"


class LogNormal(Distribution):
    """exp(N(mu, sigma^2)); ``mu`` and ``sigma`` are of the underlying normal."""

    def __init__(self, mu: float, sigma: float) -> None:
        self.mu = finite("mu", mu)
        self.sigma = positive("sigma", sigma)
        self._compiled = _core.Distribution.lognormal(self.mu, self.sigma)

    def _repr_args(self) -> str:
        return f"mu={self.mu!r}, sigma={self.sigma!r}"


class Gamma(Distribution):
    """Gamma(shape k, scale theta); mean k * theta."""

    def __init__(self, shape: float, scale: float) -> None:
        self.shape = positive("shape", shape)
        self.scale = positive("scale", scale)
        self._compiled = _core.Distribution.gamma(self.shape, self.scale)

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
            w = finite(f"components[{i}] weight", weight)
            if w < 0:
                raise ValueError(f"components[{i}] weight must be >= 0, got {w!r}")
            if not isinstance(dist, Distribution):
                raise TypeError(
                    f"components[{i}] must hold a Distribution, got {type(dist).__name__}"
                )
            weights.append(w)
            dists.append(dist)
        if sum(weights) <= 0:
            raise ValueError("components: weights must not all be zero")
        self.components: list[tuple[float, Distribution]] = list(zip(weights, dists, strict=True))
        self._compiled = _core.Distribution.mixture(weights, [d._compiled for d in dists])

    def _repr_args(self) -> str:
        return repr(self.components)


class Empirical(Distribution):
    """Historical samples, resampled i.i.d. per event (a fleet's own history)."""

    def __init__(self, samples: npt.ArrayLike) -> None:
        self.samples = durations("samples", samples)
        self._compiled = _core.Distribution.empirical(self.samples)

    @classmethod
    def from_csv(
        cls, path: str | os.PathLike[str], column: str | int = 0, *, skip_missing: bool = True
    ) -> Empirical:
        """Samples from one column of a CSV file with a header row (by name or
        index). Empty cells are skipped when ``skip_missing``."""
        values = _read_csv_column(path, column, skip_missing=skip_missing)
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


class BlockBootstrap(Distribution):
    """Resamples contiguous runs of ``block`` draws from an ordered history
    (circular block bootstrap): keeps bursts such as "healthy for days, then a
    failure every twenty minutes". Draw ``i`` of a stream belongs to block
    ``i // block``, whose start is drawn uniformly."""

    def __init__(self, sequence: npt.ArrayLike, block: int) -> None:
        self.sequence = durations("sequence", sequence)
        self.block = integer("block", block, minimum=1, maximum=self.sequence.size)
        self._compiled = _core.Distribution.block_bootstrap(self.sequence, self.block)

    def _repr_args(self) -> str:
        return f"<{self.sequence.size} values>, block={self.block}"


class Replay(Distribution):
    """An exact recorded sequence, replayed draw by draw: draw ``i`` is
    ``times[i]``; after the last one every draw is ``inf`` (no more events).
    Feed a run's ``trace.inter_failure`` back to reproduce it."""

    def __init__(self, times: npt.ArrayLike) -> None:
        self.times = durations("times", times, allow_inf=True)
        self._compiled = _core.Distribution.replay(self.times)

    def _repr_args(self) -> str:
        return f"<{self.times.size} times>"


class ScaleAware(Distribution):
    """Draws of ``base`` scaled by ``(ref_gpus / gpus) ** exponent`` for a job
    of ``gpus`` GPUs: with exponent 1 the failure rate grows linearly with
    the job's size."""

    def __init__(self, base: Distribution, ref_gpus: float, exponent: float = 1.0) -> None:
        if not isinstance(base, Distribution):
            raise TypeError(f"base must be a Distribution, got {type(base).__name__}")
        self.base = base
        self.ref_gpus = positive("ref_gpus", ref_gpus)
        self.exponent = finite("exponent", exponent)
        self._compiled = _core.Distribution.scale_aware(
            base._compiled, self.ref_gpus, self.exponent
        )

    def _gpus(self, gpus: float | None) -> float:
        return self.ref_gpus if gpus is None else positive("gpus", gpus)

    def _repr_args(self) -> str:
        return f"{self.base!r}, ref_gpus={self.ref_gpus!r}, exponent={self.exponent!r}"


def as_distribution(name: str, value: Distribution | float) -> Distribution:
    """A Distribution as is; a plain number of seconds as :class:`Constant`."""
    if isinstance(value, Distribution):
        return value
    try:
        real(name, value)
    except TypeError:
        raise TypeError(
            f"{name} must be a Distribution or a number of seconds, got {type(value).__name__}"
        ) from None
    x = finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be >= 0 seconds, got {x!r}")
    return Constant(x)


def _finite_array(name: str, values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """A non-empty 1-D float64 array of finite numbers (any sign)."""
    if isinstance(values, str | bytes) or values is None:
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must hold real numbers")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if out.ndim != 1 or out.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional sequence")
    if not np.isfinite(out).all():
        raise ValueError(f"{name} must be finite")
    return out


def _read_csv_column(
    path: str | os.PathLike[str], column: str | int, *, skip_missing: bool
) -> list[float]:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a path, got {type(path).__name__}")
    if not isinstance(column, str | int) or isinstance(column, bool):
        raise TypeError(f"column must be a column name or index, got {type(column).__name__}")
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"path: {os.fspath(path)!r} is empty") from None
        if isinstance(column, str):
            if column not in header:
                raise ValueError(f"column {column!r} not in {header}")
            index = header.index(column)
        else:
            if not 0 <= column < len(header):
                raise ValueError(f"column index {column} out of range for {len(header)} columns")
            index = column
        values: list[float] = []
        for line_no, row in enumerate(reader, start=2):
            cell = row[index].strip() if index < len(row) else ""
            if cell == "":
                if skip_missing:
                    continue
                raise ValueError(f"column {column!r}: empty cell on line {line_no}")
            try:
                values.append(float(cell))
            except ValueError:
                raise ValueError(
                    f"column {column!r}: not a number on line {line_no}: {cell!r}"
                ) from None
    if not values:
        raise ValueError(f"column {column!r} holds no values")
    return values
