"""Workload generators: realistic fleet loads for benchmarks and studies.

:func:`meta_like` builds a job mix shaped after the published figures of
Meta's RSC clusters (Kokolis et al., "Revisiting Reliability in Large-Scale
Machine Learning Research Clusters", HPCA 2025):

- RSC-1 has about 16K GPUs and sees about 7.2K job submissions a day
  (RSC-2: 8K GPUs, 4.4K a day); mean utilization 83-85%;
- most jobs are small (1-8 GPUs); jobs of 4K GPUs and more are under 1% of
  jobs but about 12% of GPU time;
- jobs live at most 7 days.

The size classes' job shares and GPU-time shares below are chosen to match
those figures; the rest of the shape (log-normal run lengths) is an
assumption, documented here so results can be read against it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validation import MAX_SECONDS, integer, positive
from .distributions import Distribution
from .job import JobArray
from .simulation import MAX_JOBS
from .units import DAY, HOUR, MINUTE

__all__ = ["META_SIZE_CLASSES", "meta_like", "offered_load"]

#: (GPUs, share of jobs, share of GPU time): most jobs are small, the few
#: 4K-GPU jobs (0.1% of jobs) hold 12% of GPU time. Shares sum to 1.
META_SIZE_CLASSES: tuple[tuple[int, float, float], ...] = (
    (1, 0.380, 0.010),
    (2, 0.100, 0.008),
    (4, 0.120, 0.020),
    (8, 0.250, 0.110),
    (16, 0.050, 0.050),
    (32, 0.040, 0.080),
    (64, 0.030, 0.110),
    (128, 0.0150, 0.120),
    (256, 0.0080, 0.120),
    (512, 0.0040, 0.110),
    (1024, 0.0020, 0.080),
    (2048, 0.0010, 0.060),
    (4096, 0.0010, 0.120),
)

#: RSC-1: submissions per day per GPU of the cluster (7.2K a day on 16K GPUs).
META_SUBMISSIONS_PER_GPU_DAY = 7200.0 / 16384.0
#: Mean utilization of the RSC clusters.
META_UTILIZATION = 0.84
#: Longest job lifetime on RSC.
META_MAX_RUNTIME = 7 * DAY


def meta_like(
    days: float,
    gpus: int,
    seed: int = 0,
    *,
    utilization: float = META_UTILIZATION,
    checkpoint_interval: float = HOUR,
    runtime_sigma: float = 1.5,
    init: Distribution | float = 2 * MINUTE,
    save: Distribution | float = 1 * MINUTE,
    load: Distribution | float = 1 * MINUTE,
) -> JobArray:
    """A Meta-like job mix for a cluster of ``gpus`` GPUs over ``days`` days.

    Submissions arrive as a Poisson process at RSC-1's rate scaled to the
    cluster (about 7.2K a day per 16K GPUs); each job's size is drawn from
    :data:`META_SIZE_CLASSES`, its work (seconds of compute) from a
    log-normal whose mean puts the offered load at ``utilization`` of the
    cluster with the class's share of GPU time, capped at 7 days. Jobs larger
    than the cluster are left out. Numbers come from numpy's Philox seeded
    with ``seed``: the same seed gives the same workload.

    >>> import acesim as ace
    >>> jobs = ace.workloads.meta_like(days=1, gpus=16384, seed=0)
    >>> 6000 < len(jobs) < 8500
    True
    """
    days_ = positive("days", days)
    cluster = integer("gpus", gpus, minimum=1, maximum=2**31)
    seed_ = integer("seed", seed, minimum=0)
    util = positive("utilization", utilization)
    if util > 1.0:
        raise ValueError(f"utilization must be in (0, 1] (a share of the GPUs), got {util!r}")
    sigma = positive("runtime_sigma", runtime_sigma)
    interval = positive("checkpoint_interval", checkpoint_interval)

    classes = [c for c in META_SIZE_CLASSES if c[0] <= cluster]
    sizes = np.array([c[0] for c in classes], dtype=np.float64)
    job_share = np.array([c[1] for c in classes])
    time_share = np.array([c[2] for c in classes])
    job_share /= job_share.sum()
    time_share /= time_share.sum()

    rate = META_SUBMISSIONS_PER_GPU_DAY * cluster  # submissions a day
    # Refuse a span that cannot be simulated before allocating its jobs.
    _check_job_count("days", rate * days_, days_, cluster)
    if days_ * DAY > MAX_SECONDS:
        raise ValueError(
            f"days must be at most {MAX_SECONDS / DAY:,.0f} (the {MAX_SECONDS:g} s limit on "
            f"times), got {days_!r}"
        )
    rng = np.random.Generator(np.random.Philox(seed_))
    n = int(rng.poisson(rate * days_))
    n = max(n, 1)
    _check_job_count("days", n, days_, cluster)
    submit = np.sort(rng.uniform(0.0, days_ * DAY, n))
    cls = rng.choice(len(classes), size=n, p=job_share)
    # Mean run length per class so that class GPU-time = share x offered load.
    offered_gpu_seconds_per_day = util * cluster * DAY
    mean_work = time_share * offered_gpu_seconds_per_day / (sizes * job_share * rate)
    # Log-normal with that mean: mu = ln(mean) - sigma^2 / 2.
    mu = np.log(mean_work) - 0.5 * sigma * sigma
    work = np.exp(mu[cls] + sigma * rng.standard_normal(n))
    work = np.clip(work, 60.0, META_MAX_RUNTIME)
    job_gpus = sizes[cls].astype(np.uint32)
    return JobArray(
        gpus=job_gpus,
        work=work,
        checkpoint_interval=np.minimum(interval, work),
        submit=submit,
        init=init,
        save=save,
        load=load,
    )


def _check_job_count(name: str, count: float, days: float, gpus: int) -> None:
    """A ValueError naming ``name`` when ``count`` jobs (an estimate or a
    draw) are more than one simulation holds."""
    if count > MAX_JOBS:
        raise ValueError(
            f"{name}: {days:g} days on {gpus:,} GPUs make about {count:,.0f} jobs, more than "
            f"the {MAX_JOBS:,} (2**24) one simulation holds; use fewer days or GPUs"
        )


def offered_load(jobs: JobArray, gpus: int, days: float) -> float:
    """GPU-time the jobs ask for, as a fraction of ``gpus`` x ``days``."""
    if not isinstance(jobs, JobArray):
        raise TypeError(f"jobs must be a JobArray, got {type(jobs).__name__}")
    gpus = integer("gpus", gpus, minimum=1)
    days = positive("days", days)
    demand: npt.NDArray[np.float64] = jobs.gpus.astype(np.float64) * jobs.work
    return float(demand.sum() / (gpus * days * DAY))
