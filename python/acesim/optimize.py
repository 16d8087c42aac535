"""The checkpoint interval that maximizes simulated ETTR for any failure
model. Young and Daly assume exponential failures; bursty histories
(Weibull shape < 1, block-bootstrapped logs) can move the optimum."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ._validation import described, integer, positive, real_array
from .analytic import daly_interval, meta_scale_model, young_interval
from .distributions import Distribution, scipy_to_law
from .fleet import Fleet
from .job import Job
from .policy import Policy
from .simulation import BatchResult, _join_rounds, batch_simulate, simulate
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
    fleet: Fleet | None = None,
    policy: Policy | None = None,
    others: Sequence[Job] = (),
    horizon: float = math.inf,
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

    On a fleet (``fleet``, ``policy``, ``others``, ``horizon``: as
    :func:`acesim.simulate` takes them) every candidate is a whole
    :func:`acesim.simulate` run of ``[job with the interval, *others]``: the
    other jobs run as given, node failures, spares, repairs, quarantines and
    preemptions as the fleet and policy say, and the objective is ``job``'s
    own pooled ETTR (its productive time over its wall, summed over
    replicas). ``failures=None`` is then ``simulate``'s default (no
    job-level failures when the fleet has a node-level law). Every candidate
    runs on the same seed and replicas (common random numbers), the winner
    on fresh replicas, as without a fleet; ``plausible`` is then paired on
    the job's ETTR (candidates whose ETTR is within two standard errors of
    the winner's, replica by replica) rather than on its wall, which a
    horizon may cut. Young's and Daly's intervals (the grid's centre) use
    the job-level law's mean, else the MTBF of the job's nodes under the
    fleet's node law. ``progress``: the work done on stderr when it is a
    terminal outside CI (:func:`acesim.sweep.progress_bar`): replicas pass
    after pass (the grid, the finer grid, the fresh replicas) without a
    fleet, each pass in chunks of replicas, joined (the same result with or
    without it); whole-fleet runs, one per candidate, on a fleet.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=ace.DAY, checkpoint_interval="young")
    >>> best = ace.optimal_interval(job, replicas=200, seed=3)
    >>> best.plausible[0] <= best.interval <= best.plausible[1]
    True
    """
    if not isinstance(job, Job):
        raise TypeError(f"job must be a Job, got {type(job).__name__}")
    if fleet is not None and not isinstance(fleet, Fleet):
        raise TypeError(f"fleet must be an acesim.Fleet or None, got {type(fleet).__name__}")
    if policy is not None and not isinstance(policy, Policy):
        raise TypeError(f"policy must be an acesim.Policy or None, got {type(policy).__name__}")
    if isinstance(others, Job) or not isinstance(others, Sequence):
        raise TypeError(f"others must be a sequence of Jobs, got {type(others).__name__}")
    for i, other in enumerate(others):
        if not isinstance(other, Job):
            raise TypeError(f"others[{i}] must be a Job, got {type(other).__name__}")
    if not isinstance(progress, bool | np.bool_):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    on_fleet = fleet is not None or policy is not None or bool(others) or horizon != math.inf
    if on_fleet:
        return _on_fleet(
            job, failures, fleet=fleet, policy=policy, others=list(others), horizon=horizon,
            intervals=intervals, replicas=replicas, seed=seed, threads=threads,
            refine=refine, causes=causes, progress=bool(progress),
        )  # fmt: skip
    model = meta_scale_model() if failures is None else scipy_to_law("failures", failures)
    if not isinstance(model, Distribution):
        raise TypeError(f"failures must be a Distribution or None, got {type(model).__name__}")
    n = integer("replicas", replicas, minimum=2, maximum=2**31)
    mtbf = model.mean(job.gpus)
    save = job.save.mean(job.gpus)
    young, daly, grid = _grid(job, save, mtbf, intervals)

    chunked = progress_flag(progress)
    passes = 3 if refine and grid.size >= 3 else 2
    bar = progress_bar(chunked, passes * n, desc="optimal_interval", unit="replica")

    def run(candidates: npt.NDArray[np.float64], first: int = 0) -> BatchResult:
        # One batch: every candidate is a grid point on the same failure
        # draws (common random numbers), replicas first .. first + n - 1;
        # with progress, in chunks of replicas, joined (the same result).
        grid_jobs = [job.with_interval(float(tau)) for tau in candidates]
        if not chunked:
            return batch_simulate(
                grid_jobs, model, replicas=n, seed=seed, threads=threads,
                first_replica=first, causes=causes,
            )  # fmt: skip
        parts: list[BatchResult] = []
        chunk = max(math.ceil(n / 10), 1)
        for offset in range(0, n, chunk):
            size = min(chunk, n - offset)
            part = batch_simulate(
                grid_jobs, model, replicas=size, seed=seed, threads=threads,
                first_replica=first + offset, causes=causes,
            )  # fmt: skip
            parts.append(part)
            if bar is not None:
                bar.update(size)
        return cast(BatchResult, _join_rounds(parts))

    def run_walls(candidates: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(run(candidates).field("wall"), dtype=np.float64)

    def pooled(walls: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
        # Pooled ETTR (work / mean wall) per row, its delta-method error and
        # the linearized values it comes from.
        mean_wall = walls.mean(axis=1)
        ettrs = job.work / mean_wall
        influence = _influence(np.full(walls.shape, job.work), walls, ettrs)
        return ettrs, ettrs * walls.std(axis=1, ddof=1) / math.sqrt(n) / mean_wall, influence

    try:
        walls = run_walls(grid)
        if refine and grid.size >= 3:
            fine = _finer(grid, int(np.argmin(walls.mean(axis=1))))
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
    finally:
        if bar is not None:
            bar.close()
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


def _grid(
    job: Job, save: float, mtbf: float, intervals: Any
) -> tuple[float, float, npt.NDArray[np.float64]]:
    """Young's and Daly's intervals and the candidate grid: ``intervals``
    checked, or 25 points from 1/8 to 8 times Young's."""
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
    return young, daly, grid


def _finer(grid: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.float64]:
    """The second pass: a finer grid between point ``k``'s neighbours, less
    the points that repeat a grid point up to rounding."""
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    fine = np.geomspace(lo, hi, 11)
    out: npt.NDArray[np.float64] = fine[
        np.min(np.abs(fine[:, None] / grid[None, :] - 1.0), axis=1) > 1e-9
    ]
    return out


def _job_mtbf(job: Job, failures: Any, fleet: Fleet | None) -> float:
    """The MTBF that centres the grid on a fleet: the job-level law's, else
    the job's nodes' under the fleet's node law."""
    if failures is not None:
        law = scipy_to_law("failures", failures)
        if isinstance(law, Distribution):
            return law.mean(job.gpus)
        return math.inf
    if fleet is None or fleet.node_failures is None:
        return meta_scale_model().mean(job.gpus)
    nodes = math.ceil(job.gpus / fleet.gpus_per_node)
    return fleet.node_mttf() / nodes


def _on_fleet(
    job: Job,
    failures: Any,
    *,
    fleet: Fleet | None,
    policy: Policy | None,
    others: list[Job],
    horizon: float,
    intervals: Any,
    replicas: int,
    seed: int,
    threads: int | None,
    refine: bool,
    causes: Any,
    progress: bool,
) -> OptimalInterval:
    n = integer("replicas", replicas, minimum=2, maximum=2**31)
    young, daly, grid = _grid(
        job, job.save.mean(job.gpus), _job_mtbf(job, failures, fleet), intervals
    )
    runs = grid.size + (11 if refine and grid.size >= 3 else 0) + 1
    bar = progress_bar(progress, runs, desc="optimal_interval", unit="run")

    def run(tau: float, first: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        # Replicas first .. first + n - 1 of one whole-fleet run: the same
        # failure draws for every candidate (common random numbers).
        res = simulate(
            [job.with_interval(float(tau)), *others], failures, fleet, policy,
            replicas=n, seed=seed, horizon=horizon, threads=threads,
            first_replica=first, causes=causes,
        )  # fmt: skip
        rows = res.jobs[res.jobs["job"] == 0]
        rows = rows[np.argsort(rows["replica"], kind="stable")]
        if not np.any(rows["wall"] > 0.0):
            raise ValueError(
                f"job never ran before the horizon ({horizon:g} s) in replicas "
                f"{first}..{first + n - 1} at interval {float(tau):g} s: its ETTR is "
                "undefined; give a later horizon or make room for it on the fleet"
            )
        if bar is not None:
            bar.update()
        return (
            np.asarray(rows["productive"], dtype=np.float64),
            np.asarray(rows["wall"], dtype=np.float64),
        )

    def pooled(
        kept: npt.NDArray[np.float64], walls: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        ettrs = kept.sum(axis=-1) / walls.sum(axis=-1)
        influence = _influence(kept, walls, ettrs)
        stderrs = np.sqrt(np.sum(influence**2, axis=-1) / (n * (n - 1)))
        return ettrs, stderrs, influence

    try:
        found = [run(tau, 0) for tau in grid]
        kept = np.array([k for k, _ in found])
        walls = np.array([w for _, w in found])
        if refine and grid.size >= 3:
            fine = _finer(grid, int(np.argmax(pooled(kept, walls)[0])))
            if bar is not None:
                bar.total = grid.size + fine.size + 1
                if bar.bar is not None:
                    bar.bar.total = bar.total
            if fine.size:
                more = [run(tau, 0) for tau in fine]
                grid = np.concatenate([grid, fine])
                kept = np.concatenate([kept, np.array([k for k, _ in more])])
                walls = np.concatenate([walls, np.array([w for _, w in more])])
                order = np.argsort(grid)
                grid, kept, walls = grid[order], kept[order], walls[order]
        ettrs, stderrs, influences = pooled(kept, walls)
        best = int(np.argmax(ettrs))
        # Paired on the job's ETTR: the difference to the winner and its
        # standard error from the difference of the linearized values.
        gap = ettrs[best] - ettrs
        diff = influences - influences[best]
        gap_se = np.sqrt(np.sum(diff**2, axis=1) / (n * (n - 1)))
        band = grid[gap <= 2.0 * gap_se]
        fresh_kept, fresh_walls = run(float(grid[best]), n)
    finally:
        if bar is not None:
            bar.close()
    fresh_ettr, fresh_se, fresh_influence = pooled(fresh_kept[None, :], fresh_walls[None, :])
    return OptimalInterval(
        interval=float(grid[best]),
        ettr=float(fresh_ettr[0]),
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
