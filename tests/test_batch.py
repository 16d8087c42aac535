"""Batch Monte Carlo of the single-job model equals the event-heap path bit
for bit on the same seeds, for every distribution kind, interval rule,
cause taxonomy and horizon."""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest

FAILURE_LAWS = [
    ace.Weibull(0.5, 3 * ace.HOUR),
    ace.Exponential(2 * ace.HOUR),
    ace.Mixture([(0.9, ace.Exponential(10 * ace.HOUR)), (0.1, ace.Exponential(600.0))]),
    ace.Empirical(np.random.default_rng(0).exponential(3600.0, 50)),
    ace.BlockBootstrap(np.random.default_rng(1).exponential(3600.0, 64), block=8),
    ace.Gamma(0.7, 4000.0),
    ace.LogNormal(8.0, 1.2),
    ace.ScaleAware(ace.Exponential(40 * ace.HOUR), ref_gpus=128),
]
SAVES = [ace.Constant(60.0), ace.Gamma(2.0, 30.0), ace.LogNormal(3.0, 1.0)]
RULES: list[float | str] = [ace.HOUR, "young", "daly", "adaptive", 1234.5]


def scenario(k: int) -> tuple[ace.Job, ace.Distribution, object, float]:
    rng = np.random.default_rng(100 + k)
    job = ace.Job(
        int(rng.integers(1, 4096)),
        work=float(rng.uniform(0.5, 3.0)) * ace.DAY,
        checkpoint_interval=RULES[k % len(RULES)],  # type: ignore[arg-type]
        init=ace.Exponential(120.0),
        save=SAVES[k % len(SAVES)],
        load=ace.Constant(90.0),
        submit=float(rng.uniform(0.0, 100.0)),
    )
    causes = ace.LLAMA3_CAUSES if k % 2 else None
    horizon = 1.5 * ace.DAY if k % 3 == 0 else math.inf
    return job, FAILURE_LAWS[k % len(FAILURE_LAWS)], causes, horizon


@pytest.mark.parametrize("k", range(24))
def test_batch_equals_event_heap(k: int) -> None:
    job, failures, causes, horizon = scenario(k)
    heap = ace.simulate(
        job, failures, replicas=40, seed=k, causes=causes, horizon=horizon, threads=1
    )
    batch = ace.batch_simulate(
        [job], failures, replicas=40, seed=k, causes=causes, horizon=horizon, threads=2
    )
    assert heap.jobs.dtype == batch.jobs.dtype
    for name in heap.jobs.dtype.names or ():
        np.testing.assert_array_equal(heap.jobs[name], batch.jobs[name], err_msg=name)


def test_grid_points_are_jobs_simulated_alone() -> None:
    jobs = [ace.Job(256, work=ace.DAY, checkpoint_interval=t * ace.MINUTE) for t in (10, 30, 90)]
    laws = [ace.Exponential(5 * ace.HOUR), ace.Weibull(0.6, 4 * ace.HOUR), ace.Exponential(ace.DAY)]
    batch = ace.batch_simulate(jobs, laws, replicas=64, seed=5, first_replica=7)
    assert batch.field("wall").shape == (3, 64)
    for p, (job, law) in enumerate(zip(jobs, laws, strict=True)):
        alone = ace.simulate(job, law, replicas=64, seed=5, first_replica=7).jobs
        rows = batch.rows(p)
        assert (rows["job"] == p).all()
        for name in alone.dtype.names or ():
            if name != "job":
                np.testing.assert_array_equal(alone[name], rows[name], err_msg=name)


def test_points_share_the_failure_stream() -> None:
    # Every grid point reads the same failure stream (common random numbers):
    # with no restart cost the first failure strikes at the first draw of
    # job 0's failure stream, whatever the interval.
    law = ace.Exponential(3 * ace.HOUR)
    jobs = [
        ace.Job(512, work=2 * ace.DAY, checkpoint_interval=t * ace.MINUTE, init=0.0, load=0.0)
        for t in (20, 40, 80)
    ]
    batch = ace.batch_simulate(jobs, law, replicas=200, seed=9)
    first = np.array(
        [
            law.sample(1, seed=9, stream=ace.job_stream(0, "failure"), replica=r)[0]
            for r in range(200)
        ]
    )
    hit = first < 2 * ace.DAY  # the first failure comes before any interval could finish
    for p in range(3):
        assert (batch.field("failures")[p][hit] >= 1).all()
        assert (batch.field("failures")[p][~hit] >= 0).all()
    np.testing.assert_array_equal(batch.field("failures")[0] > 0, batch.field("failures")[1] > 0)


def test_thread_count_does_not_change_results() -> None:
    job, failures, causes, horizon = scenario(3)
    grid = [job, job.with_interval(600.0)]
    one = ace.batch_simulate(
        grid, failures, replicas=300, seed=1, threads=1, causes=causes, horizon=horizon
    )
    two = ace.batch_simulate(
        grid, failures, replicas=300, seed=1, threads=2, causes=causes, horizon=horizon
    )
    assert one.jobs.tobytes() == two.jobs.tobytes()


def test_batch_validates() -> None:
    job = ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0)
    with pytest.raises(ValueError, match="failures"):
        ace.batch_simulate([job, job], [ace.Exponential(1.0)], replicas=2)
    with pytest.raises(TypeError, match="failures"):
        ace.batch_simulate([job], "weibull", replicas=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="replicas"):
        ace.batch_simulate([job], replicas=0)
    with pytest.raises(ValueError, match="point"):
        ace.batch_simulate([job], replicas=2).rows(3)


@pytest.mark.gpu
def test_cuda_batch_matches_cpu() -> None:
    if not ace.cuda_available():
        pytest.skip("no usable CUDA device")
    job, failures, causes, horizon = scenario(5)
    grid = [job, job.with_interval(900.0)]
    cpu = ace.batch_simulate(grid, failures, replicas=500, seed=3, causes=causes, horizon=horizon)
    gpu = ace.batch_simulate(
        grid, failures, replicas=500, seed=3, causes=causes, horizon=horizon, device="cuda"
    )
    # Integer fields are exact; float fields within the device's math ulp bound.
    for name in ("failures", "checkpoints", "restarts", "completed", "job", "replica"):
        np.testing.assert_array_equal(cpu.jobs[name], gpu.jobs[name], err_msg=name)
    np.testing.assert_allclose(cpu.jobs["wall"], gpu.jobs["wall"], rtol=1e-12)


def test_cuda_batch_without_device_is_a_clear_error() -> None:
    if ace.cuda_available():
        pytest.skip("a CUDA device is available")
    job = ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0)
    with pytest.raises(RuntimeError, match="CUDA"):
        ace.batch_simulate([job], replicas=2, device="cuda")
    with pytest.raises(ValueError, match="device"):
        ace.batch_simulate([job], replicas=2, device="tpu")
