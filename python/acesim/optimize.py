"""The checkpoint interval that maximizes simulated ETTR for any failure
model. Young and Daly assume exponential failures; bursty histories
(Weibull shape < 1, block-bootstrapped logs) can move the optimum."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ._validation import described, integer, positive, real_array
from .analytic import daly_interval, meta_scale_model, young_interval
from .distributions import Distribution, scipy_to_law
from .job import Job
from .simulation import BatchResult, _join_rounds, batch_simulate
from .stats import _influence
from .sweep import progress_bar, progress_flag

__all__ = ["OptimalInterval", "optimal_interval"]


@dataclass(frozen=True)
class OptimalInterval:
    """Result of :func:`optimal_interval`.

    Two disjoint sets of replicas (same ``seed``), ``replicas`` each:

    * **Selection** replicas ``0 .. replicas - 1``: every candidate interval
      (the grid, and the refinement) runs on these same failure draws (common
      random numbers). ``intervals``, ``ettrs`` and ``stderrs`` are the
      figures on them; ``interval`` is the grid point with the best pooled
      ETTR (work / mean wall), and ``selection_ettr`` (``ettrs`` at the
      winner) is its in-sample figure. Because the winner is the best of
      many noisy estimates on the same draws, ``selection_ettr`` is biased
      upwards (optimistic), the more so with few replicas or a small
      :class:`~acesim.Empirical` sample.
    * **Fresh** replicas ``replicas .. 2 * replicas - 1``: the winner alone is
      run again on these, and ``ettr`` and ``ettr_stderr`` are its pooled ETTR
      and standard error there: an unbiased estimate of the chosen interval's
      ETTR (``ettr`` is exactly ``batch_simulate([job.with_interval(interval)],
      failures, replicas=replicas, seed=seed, first_replica=replicas)``'s
      pooled ETTR).

    ``plausible`` is paired on the selection replicas: the range of intervals
    whose wall-clock difference to the winner, replica by replica, is within
    two standard errors: the optimum's confidence band.

    ``influences`` (one row per interval, one column per selection replica)
    and ``fresh_influence`` (per fresh replica) are the linearized values
    ``(work - ETTR x wall_r) / mean(wall)`` that ``stderrs`` and
    ``ettr_stderr`` come from; :func:`acesim.plot.interval_curve_data`
    makes its intervals from them as :meth:`SimulationResult.ettr` does.
    """

    interval: float
    ettr: float
    ettr_stderr: float
    plausible: tuple[float, float]
    intervals: npt.NDArray[np.float64]
    ettrs: npt.NDArray[np.float64]
    stderrs: npt.NDArray[np.float64]
    young: float
    daly: float
    replicas: int
    selection_ettr: float
    influences: npt.NDArray[np.float64] = field(repr=False, compare=False)
    fresh_influence: npt.NDArray[np.float64] = field(repr=False, compare=False)


def optimal_interval(
    job: Job,
    failures: Distribution | None = None,
    *,
    intervals: Sequence[float] | npt.ArrayLike | None = None,
    replicas: int = 1000,
    seed: int = 0,
    threads: int | None = None,
    refine: bool = True,
    causes: Any = None,
    progress: bool = False,
) -> OptimalInterval:
    """Simulate ``job`` at each candidate interval and return the best.

    ``intervals`` defaults to 25 points spaced geometrically from 1/8 to 8
    times Young's interval (capped at the job's work); with ``refine`` a
    second, finer grid between the best point's neighbours follows. The
    choice is made on replicas ``0 .. replicas - 1`` and the winner's ``ettr``
    is then measured on the fresh replicas ``replicas .. 2 * replicas - 1``
    (see :class:`OptimalInterval`), so ``2 * replicas`` replicas are used.

    ``causes`` (see :func:`acesim.simulate`) give the failures their causes:
    detection latencies, and the scopes that decide which of a job's
    checkpoint ``tiers`` survive (without causes every failure takes a node,
    so a tier with one copy never does). The search is over the durable
    ``checkpoint_interval``; tiers and an asynchronous ``persist`` stay as
    the job has them.

    ``progress``: the replicas done, pass after pass (the grid, the finer
    grid, the fresh replicas), on stderr when it is a terminal outside CI
    (:func:`acesim.sweep.progress_bar`); each pass runs in chunks of
    replicas, joined: the same result with or without it.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=ace.DAY, checkpoint_interval="young")
    >>> best = ace.optimal_interval(job, replicas=200, seed=3)
    >>> best.plausible[0] <= best.interval <= best.plausible[1]
    True
    """
    if not isinstance(job, Job):
        raise TypeError(f"job must be a Job, got {type(job).__name__}")
    model = meta_scale_model() if failures is None else scipy_to_law("failures", failures)
    if not isinstance(model, Distribution):
        raise TypeError(f"failures must be a Distribution or None, got {type(model).__name__}")
    n = integer("replicas", replicas, minimum=2, maximum=2**31)
    mtbf = model.mean(job.gpus)
    save = job.save.mean(job.gpus)
    young = float(young_interval(save, mtbf)) if math.isfinite(mtbf) else job.work
    daly = float(daly_interval(save, mtbf)) if math.isfinite(mtbf) else job.work
    if intervals is None:
        centre = young if young > 0 else job.work
        grid = np.geomspace(centre / 8.0, centre * 8.0, 25)
        # A durable interval is never shorter than a tier's.
        floor = max((t.interval for t in job.tiers), default=0.0)
        grid = np.unique(np.clip(grid, floor, job.work))
    else:
        found = real_array("intervals", intervals)
        if found is None:
            raise TypeError(f"intervals must be a sequence of numbers{described(intervals)}")
        grid = np.asarray(found, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0:
            raise ValueError("intervals must be a non-empty one-dimensional sequence")
        for i, tau in enumerate(grid):
            positive(f"intervals[{i}]", float(tau))

    chunked = progress_flag(progress)
    passes = 3 if refine and grid.size >= 3 else 2
    bar = progress_bar(chunked, passes * n, desc="optimal_interval", unit="replica")

    def run(candidates: npt.NDArray[np.float64], first: int = 0) -> BatchResult:
        # One batch: every candidate is a grid point on the same failure
        # draws (common random numbers), replicas first .. first + n - 1.
        grid_jobs = [job.with_interval(float(tau)) for tau in candidates]
        if not chunked:
            return batch_simulate(
                grid_jobs,
                model,
                replicas=n,
                seed=seed,
                threads=threads,
                first_replica=first,
                causes=causes,
            )
        parts: list[BatchResult] = []
        chunk = max(math.ceil(n / 10), 1)
        for offset in range(0, n, chunk):
            size = min(chunk, n - offset)
            parts.append(
                batch_simulate(
                    grid_jobs,
                    model,
                    replicas=size,
                    seed=seed,
                    threads=threads,
                    first_replica=first + offset,
                    causes=causes,
                )
            )
            if bar is not None:
                bar.update(size)
        return cast(BatchResult, _join_rounds(parts))

    try:
        return _search(job, grid, n, run, refine, young, daly, bar)
    finally:
        if bar is not None:
            bar.close()


def _search(
    job: Job,
    grid: npt.NDArray[np.float64],
    n: int,
    run: Callable[..., BatchResult],
    refine: bool,
    young: float,
    daly: float,
    bar: Any,
) -> OptimalInterval:
    """:func:`optimal_interval`'s passes: the grid, a finer grid around its
    best point, the winner on fresh replicas."""

    def run_walls(candidates: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(run(candidates).field("wall"), dtype=np.float64)

    def pooled(walls: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
        # Pooled ETTR (work / mean wall) per row, its delta-method error and
        # the linearized values it comes from.
        mean_wall = walls.mean(axis=1)
        ettrs = job.work / mean_wall
        influence = _influence(np.full(walls.shape, job.work), walls, ettrs)
        return ettrs, ettrs * walls.std(axis=1, ddof=1) / math.sqrt(n) / mean_wall, influence

    walls = run_walls(grid)
    if refine and grid.size >= 3:
        # Second pass: a finer grid between the best point's neighbours.
        k = int(np.argmin(walls.mean(axis=1)))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        fine = np.geomspace(lo, hi, 11)
        # Drop points that repeat a grid point up to rounding.
        fine = fine[np.min(np.abs(fine[:, None] / grid[None, :] - 1.0), axis=1) > 1e-9]
        if fine.size:
            grid = np.concatenate([grid, fine])
            walls = np.concatenate([walls, run_walls(fine)])
            order = np.argsort(grid)
            grid, walls = grid[order], walls[order]
        elif bar is not None:
            bar.update(n)  # no finer pass: count it done
    ettrs, stderrs, influences = pooled(walls)
    best = int(np.argmin(walls.mean(axis=1)))
    # Common random numbers: every candidate saw the same failure draws, so
    # compare each with the best replica by replica.
    diff = walls - walls[best]
    diff_se = diff.std(axis=1, ddof=1) / math.sqrt(n)
    plausible = diff.mean(axis=1) <= 2.0 * diff_se
    band = grid[plausible]
    # The winner is the best of many noisy estimates on the selection
    # replicas, so its in-sample ETTR is optimistic: measure it again on
    # fresh replicas n .. 2n - 1, disjoint from those that chose it.
    fresh = run(grid[best : best + 1], first=n)
    _, fresh_se, fresh_influence = pooled(np.asarray(fresh.field("wall"), dtype=np.float64))
    return OptimalInterval(
        interval=float(grid[best]),
        ettr=float(fresh.pooled_ettr()[0]),
        ettr_stderr=float(fresh_se[0]),
        plausible=(float(band.min()), float(band.max())),
        intervals=grid,
        ettrs=ettrs,
        stderrs=stderrs,
        young=young,
        daly=daly,
        replicas=n,
        selection_ettr=float(ettrs[best]),
        influences=influences,
        fresh_influence=fresh_influence[0],
    )
