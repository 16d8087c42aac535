"""Designs and estimators of global sensitivity analysis, on numpy alone.

A model with ``k`` inputs is sampled at the points a design gives, in
*design coordinates*: a continuous factor's coordinate is its place in its
range, in ``[0, 1]``; a discrete factor's (a list of levels) is its level's
index ``0 .. m - 1``. The caller maps coordinates to values, runs the model
and hands the outputs back in the design's point order.

**Morris** (Morris 1991; mu* after Campolongo, Cariboni and Saltelli 2007):
``trajectories`` one-at-a-time paths through the factor space, each moving
every factor once, in a random order. A continuous factor moves between two
levels ``delta = p / (2 (p - 1))`` apart on a grid of ``p`` levels (the
start drawn uniformly among the moves that stay on the grid, the direction
a coin), so every grid level is visited equally often. A discrete factor
moves between two distinct levels drawn uniformly (so each level is visited
equally often too). The elementary effect of a move is the change in the
output divided by the change in the factor as a fraction of its range: for
a continuous factor ``dy / (+-delta)``, for an ordered discrete factor (an
integer range) ``dy / (dindex / (m - 1))``, and for a categorical factor
``dy`` itself, signed by the direction of the level index (its sign carries
no meaning; mu* and sigma do). Every effect is thus the output's change
across the factor's whole range when the model is linear in it. mu* is the
mean absolute effect (the screening measure), mu the mean effect and sigma
their standard deviation (non-linearity or interactions).

**Sobol** (Saltelli et al. 2010, "Variance based sensitivity analysis of
model output"): two independent ``n x k`` matrices ``A`` and ``B`` of
uniform coordinates and, for each factor ``i``, ``AB_i``: ``A`` with column
``i`` from ``B``; ``n (k + 2)`` runs. With ``V`` the variance of the outputs
of ``A`` and ``B`` together and ``f0`` their mean: first-order index
``S_i = mean((f(B) - f0) (f(AB_i) - f(A))) / V`` (Saltelli 2010, with
``f(B)`` centred: the same expectation, as ``f(AB_i) - f(A)`` has mean 0,
and a variance that does not grow with ``f0`` squared) and total index
``ST_i = mean((f(A) - f(AB_i))^2) / (2 V)`` (Jansen 1999). A discrete
factor of ``m`` levels takes level ``floor(m u)`` of its uniform ``u``: a
discrete uniform level, and its indices are those of that discrete uniform
input.

Every index has a percentile bootstrap interval: trajectories (Morris) or
rows of ``A``, ``B`` and every ``AB_i`` together (Sobol) resampled with
replacement; ``ST_i - S_i`` (the share of variance from interactions of
factor ``i``) has its own.

>>> import numpy as np
>>> from acesim.sensitivity.designs import morris_design, morris_indices
>>> d = morris_design([None, None], trajectories=8, seed=1)
>>> y = 3.0 * d.points[:, 0] - 1.0 * d.points[:, 1]
>>> m = morris_indices(d, y)
>>> [round(float(v), 12) for v in m.mu_star.value], [round(float(v), 12) for v in m.sigma.value]
([3.0, 1.0], [0.0, 0.0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "Interval",
    "MorrisDesign",
    "MorrisIndices",
    "SobolDesign",
    "SobolIndices",
    "morris_design",
    "morris_indices",
    "saltelli_design",
    "sobol_indices",
    "unit_to_level",
]

FloatArray = npt.NDArray[np.float64]

#: A factor's kind in a design: ``None`` continuous, else its number of
#: levels; a negative count marks a categorical (unordered) factor.
Levels = int | None


class Interval(NamedTuple):
    """An index estimate (one value per factor) and its bootstrap interval."""

    value: FloatArray
    low: FloatArray
    high: FloatArray


#: Purposes of the random streams keyed by one seed: a design and the
#: bootstrap of its indices never share draws, whatever seeds they are given.
_DESIGN, _BOOTSTRAP = 0, 1


def _generator(seed: int | np.random.Generator, purpose: int) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 or a numpy Generator, got {seed!r}")
    return np.random.Generator(np.random.Philox(np.random.SeedSequence([int(seed), purpose])))


def _check_levels(levels: Sequence[Levels]) -> list[Levels]:
    out: list[Levels] = []
    for i, m in enumerate(levels):
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or abs(m) < 2):
            raise ValueError(f"levels[{i}] must be None or a level count (at least 2), got {m!r}")
        out.append(m)
    if not out:
        raise ValueError("a design needs at least one factor")
    return out


def unit_to_level(u: npt.ArrayLike, count: int) -> npt.NDArray[np.int64]:
    """The level ``floor(count u)`` (at most ``count - 1``) of uniform
    coordinates ``u``: each of ``count`` levels with probability 1/count."""
    arr = np.asarray(u, dtype=np.float64)
    return np.minimum(np.floor(arr * count), count - 1).astype(np.int64)


def _percentile(boot: FloatArray, ci: float) -> tuple[FloatArray, FloatArray]:
    tail = 50.0 * (1.0 - ci)
    low = np.percentile(boot, tail, axis=0)
    high = np.percentile(boot, 100.0 - tail, axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def _check_ci(ci: float, bootstrap: int) -> None:
    if not isinstance(ci, float | int) or isinstance(ci, bool) or not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci!r}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 10:
        raise ValueError(f"bootstrap must be an integer >= 10, got {bootstrap!r}")


# ---------------------------------------------------------------------------
# Morris
# ---------------------------------------------------------------------------


class MorrisDesign(NamedTuple):
    """``points``: ``trajectories x (k + 1)`` points (rows; trajectory ``t``
    is rows ``t (k + 1) .. t (k + 1) + k``); ``moved[t, s]``: the factor
    step ``s`` of trajectory ``t`` moves; ``step[t, s]``: that move as a
    fraction of the factor's range (see the module docs)."""

    points: FloatArray
    moved: npt.NDArray[np.int64]
    step: FloatArray
    levels: tuple[Levels, ...]
    grid: int

    @property
    def trajectories(self) -> int:
        return int(self.moved.shape[0])


def morris_design(
    levels: Sequence[Levels],
    trajectories: int,
    *,
    grid: int = 4,
    seed: int | np.random.Generator = 0,
) -> MorrisDesign:
    """A Morris design of ``trajectories`` paths for factors of the given
    kinds (``None``: continuous on a ``grid``-level grid; ``m``: ``m``
    ordered levels; ``-m``: ``m`` categorical levels)."""
    kinds = _check_levels(levels)
    if isinstance(trajectories, bool) or not isinstance(trajectories, int) or trajectories < 2:
        raise ValueError(f"trajectories must be an integer >= 2, got {trajectories!r}")
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 2 or grid % 2:
        raise ValueError(f"grid must be an even integer >= 2, got {grid!r}")
    rng = _generator(seed, _DESIGN)
    k = len(kinds)
    delta = grid / (2.0 * (grid - 1))
    points = np.empty((trajectories, k + 1, k), dtype=np.float64)
    moved = np.empty((trajectories, k), dtype=np.int64)
    step = np.empty((trajectories, k), dtype=np.float64)
    for t in range(trajectories):
        start = np.empty(k)
        end = np.empty(k)
        for i, m in enumerate(kinds):
            if m is None:
                lo = float(rng.integers(0, grid // 2)) / (grid - 1)
                a, b = lo, lo + delta
            else:
                pair = rng.choice(abs(m), size=2, replace=False)
                a, b = float(pair[0]), float(pair[1])
            if rng.random() < 0.5:
                a, b = b, a
            start[i], end[i] = a, b
        order = rng.permutation(k)
        x = start.copy()
        points[t, 0] = x
        for s, i in enumerate(order):
            x[i] = end[i]
            points[t, s + 1] = x
            m = kinds[i]
            change = end[i] - start[i]
            if m is None:
                step[t, s] = change
            elif m > 0:
                step[t, s] = change / (m - 1)
            else:
                step[t, s] = math.copysign(1.0, change)
        moved[t] = order
    return MorrisDesign(points.reshape(-1, k), moved, step, tuple(kinds), grid)


class MorrisIndices(NamedTuple):
    """Per factor: ``mu_star`` (mean absolute elementary effect), ``mu``
    (mean effect) and ``sigma`` (standard deviation of the effects), each
    with its bootstrap interval; ``effects[t, i]``: factor ``i``'s effect
    in trajectory ``t``."""

    mu_star: Interval
    mu: Interval
    sigma: Interval
    effects: FloatArray


def _morris_stats(effects: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """mu*, mu and sigma over the trajectory axis (-2) of ``effects``."""
    mu_star = np.mean(np.abs(effects), axis=-2)
    mu = np.mean(effects, axis=-2)
    sigma = np.std(effects, axis=-2, ddof=1)
    return mu_star, mu, sigma


def morris_indices(
    design: MorrisDesign,
    outputs: npt.ArrayLike,
    *,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int | np.random.Generator = 0,
) -> MorrisIndices:
    """Elementary effects of ``outputs`` (one per design point, in order)
    and their summaries with percentile bootstrap intervals over
    trajectories."""
    _check_ci(ci, bootstrap)
    y = np.asarray(outputs, dtype=np.float64).reshape(-1)
    r, k = design.moved.shape
    if y.shape[0] != r * (k + 1):
        raise ValueError(
            f"outputs must hold {r * (k + 1)} values (one per point), got {y.shape[0]}"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError("outputs must be finite")
    paths = y.reshape(r, k + 1)
    rows = np.arange(r)[:, None]
    effects = np.empty((r, k), dtype=np.float64)
    effects[rows, design.moved] = np.diff(paths, axis=1) / design.step
    value = _morris_stats(effects)
    rng = _generator(seed, _BOOTSTRAP)
    picks = rng.integers(0, r, size=(bootstrap, r))
    boot = _morris_stats(effects[picks])
    bounds = [_percentile(b, ci) for b in boot]
    mu_star, mu, sigma = (Interval(v, lo, hi) for v, (lo, hi) in zip(value, bounds, strict=True))
    return MorrisIndices(mu_star, mu, sigma, effects)


# ---------------------------------------------------------------------------
# Sobol (Saltelli sampling; Saltelli 2010 and Jansen estimators)
# ---------------------------------------------------------------------------


class SobolDesign(NamedTuple):
    """``points``: ``A`` (rows ``0 .. n - 1``), ``B`` (``n .. 2n - 1``),
    then ``AB_i`` for each factor ``i`` (``(2 + i) n .. (3 + i) n - 1``), as
    uniform coordinates in ``[0, 1)``; :meth:`coordinates` maps discrete
    factors to level indices."""

    points: FloatArray
    n: int
    levels: tuple[Levels, ...]

    def coordinates(self) -> FloatArray:
        """The points with each discrete factor's uniform coordinate
        replaced by its level index (:func:`unit_to_level`)."""
        out = self.points.copy()
        for i, m in enumerate(self.levels):
            if m is not None:
                out[:, i] = unit_to_level(out[:, i], abs(m))
        return out


def saltelli_design(
    levels: Sequence[Levels], n: int, *, seed: int | np.random.Generator = 0
) -> SobolDesign:
    """The Saltelli sampling matrices for ``n`` base rows."""
    kinds = _check_levels(levels)
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    rng = _generator(seed, _DESIGN)
    k = len(kinds)
    a = rng.random((n, k))
    b = rng.random((n, k))
    blocks = [a, b]
    for i in range(k):
        ab = a.copy()
        ab[:, i] = b[:, i]
        blocks.append(ab)
    return SobolDesign(np.concatenate(blocks), n, tuple(kinds))


class SobolIndices(NamedTuple):
    """Per factor: ``first`` (S_i), ``total`` (ST_i) and ``interaction``
    (ST_i - S_i), each with its bootstrap interval; ``variance``: the
    outputs' variance over ``A`` and ``B``."""

    first: Interval
    total: Interval
    interaction: Interval
    variance: float


def _sobol_stats(ya: FloatArray, yb: FloatArray, yab: FloatArray) -> tuple[FloatArray, FloatArray]:
    """S and ST for rows on the last axis; ``yab`` has the factors on axis -2."""
    both = np.concatenate([ya, yb], axis=-1)
    variance = np.var(both, axis=-1, ddof=1)[..., None]
    # f(B) centred on the outputs' mean: E[f(AB_i) - f(A)] = 0, so the
    # expectation stays and the variance no longer grows with the mean's square
    centred = yb - np.mean(both, axis=-1, keepdims=True)
    first_num = np.mean(centred[..., None, :] * (yab - ya[..., None, :]), axis=-1)
    total_num = 0.5 * np.mean((ya[..., None, :] - yab) ** 2, axis=-1)
    zero = variance <= 0.0
    safe = np.where(zero, 1.0, variance)
    first = np.where(zero, 0.0, first_num / safe)
    total = np.where(zero, 0.0, total_num / safe)
    return first, total


def sobol_indices(
    design: SobolDesign,
    outputs: npt.ArrayLike,
    *,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int | np.random.Generator = 0,
) -> SobolIndices:
    """First-order and total indices of ``outputs`` (one per design point,
    in order) with percentile bootstrap intervals over rows. A constant
    output has every index 0 (no factor moves it)."""
    _check_ci(ci, bootstrap)
    y = np.asarray(outputs, dtype=np.float64).reshape(-1)
    n, k = design.n, len(design.levels)
    if y.shape[0] != n * (k + 2):
        raise ValueError(
            f"outputs must hold {n * (k + 2)} values (one per point), got {y.shape[0]}"
        )
    if not np.all(np.isfinite(y)):
        raise ValueError("outputs must be finite")
    blocks = y.reshape(k + 2, n)
    ya, yb, yab = blocks[0], blocks[1], blocks[2:]
    first, total = _sobol_stats(ya, yb, yab)
    rng = _generator(seed, _BOOTSTRAP)
    picks = rng.integers(0, n, size=(bootstrap, n))
    boot_first, boot_total = _sobol_stats(ya[picks], yb[picks], yab[:, picks].transpose(1, 0, 2))
    intervals = []
    for value, boot in (
        (first, boot_first),
        (total, boot_total),
        (total - first, boot_total - boot_first),
    ):
        low, high = _percentile(boot, ci)
        intervals.append(Interval(np.asarray(value, dtype=np.float64), low, high))
    variance = float(np.var(np.concatenate([ya, yb]), ddof=1))
    return SobolIndices(intervals[0], intervals[1], intervals[2], variance)
