"""The checkpoint interval that maximizes simulated ETTR for any failure
model. Young and Daly assume exponential failures; bursty histories
(Weibull shape < 1, block-bootstrapped logs) can move the optimum."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._validation import integer, positive
from .analytic import daly_interval, meta_scale_model, young_interval
from .distributions import Distribution
from .job import Job
from .simulation import batch_simulate

__all__ = ["OptimalInterval", "optimal_interval"]


@dataclass(frozen=True)
class OptimalInterval:
    """Result of :func:`optimal_interval`.

    ``interval`` maximizes pooled ETTR (work / mean wall) over the grid
    ``intervals``; ``ettr`` and ``ettr_stderr`` are its estimate. Every
    candidate was run on the same failure draws (common random numbers), so
    ``plausible`` is the range of intervals whose paired wall-clock difference
    to the best is within two standard errors: the optimum's confidence band.
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


def optimal_interval(
    job: Job,
    failures: Distribution | None = None,
    *,
    intervals: Sequence[float] | npt.ArrayLike | None = None,
    replicas: int = 1000,
    seed: int = 0,
    threads: int | None = None,
    refine: bool = True,
) -> OptimalInterval:
    """Simulate ``job`` at each candidate interval and return the best.

    ``intervals`` defaults to 25 points spaced geometrically from 1/8 to 8
    times Young's interval (capped at the job's work); with ``refine`` a
    second, finer grid between the best point's neighbours follows.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=ace.DAY, checkpoint_interval="young")
    >>> best = ace.optimal_interval(job, replicas=200, seed=3)
    >>> best.plausible[0] <= best.interval <= best.plausible[1]
    True
    """
    if not isinstance(job, Job):
        raise TypeError(f"job must be a Job, got {type(job).__name__}")
    model = meta_scale_model() if failures is None else failures
    if not isinstance(model, Distribution):
        raise TypeError(f"failures must be a Distribution or None, got {type(model).__name__}")
    n = integer("replicas", replicas, minimum=2)
    mtbf = model.mean(job.gpus)
    save = job.save.mean(job.gpus)
    young = float(young_interval(save, mtbf)) if math.isfinite(mtbf) else job.work
    daly = float(daly_interval(save, mtbf)) if math.isfinite(mtbf) else job.work
    if intervals is None:
        centre = young if young > 0 else job.work
        grid = np.geomspace(centre / 8.0, centre * 8.0, 25)
        grid = np.unique(np.minimum(grid, job.work))
    else:
        grid = np.asarray(intervals, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0:
            raise ValueError("intervals must be a non-empty one-dimensional sequence")
        for i, tau in enumerate(grid):
            positive(f"intervals[{i}]", float(tau))

    def run(candidates: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        # One batch: every candidate is a grid point on the same failure
        # draws (common random numbers).
        grid_jobs = [job.with_interval(float(tau)) for tau in candidates]
        res = batch_simulate(grid_jobs, model, replicas=n, seed=seed, threads=threads)
        return np.asarray(res.field("wall"), dtype=np.float64)

    walls = run(grid)
    if refine and grid.size >= 3:
        # Second pass: a finer grid between the best point's neighbours.
        k = int(np.argmin(walls.mean(axis=1)))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        fine = np.geomspace(lo, hi, 11)
        # Drop points that repeat a grid point up to rounding.
        fine = fine[np.min(np.abs(fine[:, None] / grid[None, :] - 1.0), axis=1) > 1e-9]
        if fine.size:
            grid = np.concatenate([grid, fine])
            walls = np.concatenate([walls, run(fine)])
            order = np.argsort(grid)
            grid, walls = grid[order], walls[order]
    mean_wall = walls.mean(axis=1)
    ettrs = job.work / mean_wall
    stderrs = ettrs * walls.std(axis=1, ddof=1) / math.sqrt(n) / mean_wall
    best = int(np.argmin(mean_wall))
    # Common random numbers: every candidate saw the same failure draws, so
    # compare each with the best replica by replica.
    diff = walls - walls[best]
    diff_se = diff.std(axis=1, ddof=1) / math.sqrt(n)
    plausible = diff.mean(axis=1) <= 2.0 * diff_se
    band = grid[plausible]
    return OptimalInterval(
        interval=float(grid[best]),
        ettr=float(ettrs[best]),
        ettr_stderr=float(stderrs[best]),
        plausible=(float(band.min()), float(band.max())),
        intervals=grid,
        ettrs=ettrs,
        stderrs=stderrs,
        young=young,
        daly=daly,
        replicas=n,
    )
