"""acesim against the SimPy reference model (tests/simpy_reference.py): the
same single-job scenario and the same replicas, timed on one core each.

Scenario: a 1,024-GPU job with 2 days of work, hourly checkpoints, init
2 min, save 1 min, load 1 min (constant), Weibull(0.5) job-level failures of
mean 7.9 h (Meta's MTTF at 1,024 GPUs, with bursts).

Run: ``PYTHONPATH=python python -m pytest bench -q``. The per-replica time
ratio (SimPy / acesim) is printed in the terminal summary and stored in
``benchmark.extra_info``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("simpy")
pytest.importorskip("pytest_benchmark")

import acesim as ace
from conftest import against_simpy, report, timed
from simpy_reference import run_replicas

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
GPUS, WORK, INTERVAL = 1024, 2 * DAY, HOUR
INIT, SAVE, LOAD = 2 * MINUTE, 1 * MINUTE, 1 * MINUTE
SHAPE = 0.5
MEAN = 7.9 * HOUR
SCALE = MEAN / math.gamma(1 + 1 / SHAPE)  # Weibull mean = scale * Gamma(1 + 1/k)

REPLICAS = 400  # both models, for the like-for-like timing
THROUGHPUT_REPLICAS = 100_000  # acesim alone: per-replica cost without fixed overheads
SEED = 7


def _job() -> ace.Job:
    return ace.Job(GPUS, WORK, INTERVAL, init=INIT, save=SAVE, load=LOAD)


def _acesim(replicas: int, seed: int = SEED) -> np.ndarray:
    res = ace.simulate(
        _job(), failures=ace.Weibull(SHAPE, SCALE), replicas=replicas, seed=seed, threads=1
    )
    return res.jobs


def _simpy(replicas: int, seed: int = SEED) -> np.ndarray:
    return run_replicas(
        replicas,
        WORK,
        INTERVAL,
        failure_sampler=lambda g: SCALE * float(g.weibull(SHAPE)),
        init_sampler=lambda g: INIT,
        save_sampler=lambda g: SAVE,
        load_sampler=lambda g: LOAD,
        seed=seed,
    )


@pytest.fixture(scope="module")
def simpy_run() -> tuple[np.ndarray, float]:
    """The SimPy reference on REPLICAS replicas: rows and the best of two
    wall-clock timings per replica."""
    log: list[float] = []
    rows = None
    for _ in range(2):
        rows = timed(lambda: _simpy(REPLICAS), log)()
    assert rows is not None
    return rows, min(log) / REPLICAS


def _pooled(rows: np.ndarray) -> tuple[float, float]:
    """Pooled ETTR (work / mean wall) and its delta-method standard error."""
    wall = rows["wall"].astype(np.float64)
    mean = float(wall.mean())
    se = float(wall.std(ddof=1) / math.sqrt(wall.size))
    ettr = WORK / mean
    return ettr, ettr * se / mean


def _agree(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    ea, sa = _pooled(a)
    eb, sb = _pooled(b)
    se = math.hypot(sa, sb)
    assert abs(ea - eb) < 3 * se, f"pooled ETTR acesim {ea:.5f} vs SimPy {eb:.5f} (SE {se:.5f})"
    return ea, eb, se


def _compare(
    benchmark: Any,
    what: str,
    rows: np.ndarray,
    log: list[float],
    replicas: int,
    simpy_run: tuple[np.ndarray, float],
) -> float:
    """Checks that acesim's rows agree with SimPy's, records the per-replica
    time ratio in extra_info and the summary, and returns it."""
    simpy_rows, simpy_per_replica = simpy_run
    assert rows["completed"].all()
    ettr_a, ettr_s, se = _agree(rows, simpy_rows)  # statistically the same model
    acesim_per_replica, ratio = against_simpy(
        benchmark, log, replicas, simpy_per_replica, rows, simpy_rows
    )
    benchmark.extra_info.update(
        pooled_ettr_acesim=ettr_a, pooled_ettr_simpy=ettr_s, pooled_ettr_combined_se=se
    )
    line = (
        f"{what}, {replicas} replicas, one core: acesim {acesim_per_replica * 1e6:.3f} "
        f"us/replica vs SimPy {simpy_per_replica * 1e3:.3f} ms/replica: ratio {ratio:.0f}x "
        f"(target >= 1000x); pooled ETTR acesim {ettr_a:.4f} vs SimPy {ettr_s:.4f} "
        f"(combined SE {se:.4f})"
    )
    report(line)
    return ratio


def test_same_replicas(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """Like for like: acesim and SimPy on the same scenario and replica count."""
    log: list[float] = []
    rows = benchmark(timed(lambda: _acesim(REPLICAS), log))
    assert rows.size == REPLICAS
    assert np.all(simpy_run[0]["completed"] == 1.0)
    _compare(benchmark, "simulate (call overhead included)", rows, log, REPLICAS, simpy_run)


def test_throughput(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """acesim's per-replica cost on a large batch (fixed call overheads
    amortized), against the SimPy per-replica cost of the same scenario."""
    log: list[float] = []
    rows = benchmark.pedantic(
        timed(lambda: _acesim(THROUGHPUT_REPLICAS, seed=SEED + 1), log), rounds=3, iterations=1
    )
    _compare(benchmark, "simulate", rows, log, THROUGHPUT_REPLICAS, simpy_run)


def test_batch_throughput(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """The single-job model through the batch Monte Carlo path (no event heap),
    one thread, against the SimPy per-replica cost of the same scenario."""
    log: list[float] = []

    def batch() -> np.ndarray:
        res = ace.batch_simulate(
            [_job()],
            ace.Weibull(SHAPE, SCALE),
            replicas=THROUGHPUT_REPLICAS,
            seed=SEED + 1,
            threads=1,
        )
        return res.jobs

    rows = benchmark.pedantic(timed(batch, log), rounds=3, iterations=1)
    # The batch path is the event-heap path, bit for bit.
    assert rows.tobytes() == _acesim(THROUGHPUT_REPLICAS, seed=SEED + 1).tobytes()
    _compare(benchmark, "batch Monte Carlo", rows, log, THROUGHPUT_REPLICAS, simpy_run)
