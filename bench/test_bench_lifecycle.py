"""Cost per replica of the lifecycle features against the synchronous model,
on the same scenario, measured side by side in one run.

Scenario: a 1,024-GPU job with 3 days of work, hourly durable checkpoints,
LogNormal init (mean 3 min), save (1 min) and load (2 min); Weibull(0.7)
job-level failures at the MTTF of the Meta scale model at 1,024 GPUs
(``ace.meta_scale_model()``: 7.9 h); two causes, a node-scope hardware one
(detected in 5 min on average) and a process-scope software one (1 min).

Variants: synchronous (the baseline), asynchronous persist (LogNormal, mean
5 min), two-level (an in-memory tier every 10 min: save 5 s, load 20 s,
surviving process failures), both, and slow failures (the hardware cause at
half speed until detection; the batch path rejects it). Every variant runs on
the batch path (``batch_simulate``) where supported and through ``simulate``
(the single-job kernel, or the event heap for slow failures), one thread,
the variants interleaved round by round so that each ratio to the
synchronous baseline comes from the same stretch of the run (best of the rounds per variant).

An elastic variant (``Job(min_gpus=...)``, on a fleet of exactly the job's
nodes, no spares) runs against the same non-elastic job when the core has
elastic jobs; it is skipped otherwise.

Run: ``python -m pytest bench/test_bench_lifecycle.py -q``. The figures are
printed in the terminal summary and stored in ``benchmark.extra_info``; the
tests assert correctness only (rows complete, exact accounting), never time.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from acesim.simulation import BUCKETS
from conftest import report

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
GPUS, WORK, INTERVAL = 1024, 3 * DAY, HOUR
GPUS_PER_NODE = 8
SHAPE = 0.7
MTTF = ace.meta_scale_model().mean(GPUS)  # 7.9 h at 1,024 GPUs
SCALE = MTTF / math.gamma(1 + 1 / SHAPE)  # Weibull mean = scale * Gamma(1 + 1/k)
SLOWDOWN = 0.5

REPLICAS = 10_000  # per variant and path
FLEET_REPLICAS = 2_000
ROUNDS = 3
SEED = 11


def lognormal(mean: float, sigma: float = 0.5) -> ace.LogNormal:
    """LogNormal of the given mean (``mu`` and ``sigma`` of the underlying normal)."""
    return ace.LogNormal(math.log(mean) - sigma**2 / 2, sigma)


def failures() -> ace.Weibull:
    return ace.Weibull(SHAPE, SCALE)


def causes(slowdown: float = 0.0) -> list[ace.Cause]:
    return [
        ace.Cause(
            "hardware", 0.6, detect=lognormal(5 * MINUTE, 0.8), node_down=True, slowdown=slowdown
        ),
        ace.Cause("software", 0.4, detect=lognormal(1 * MINUTE, 0.8), node_down=False),
    ]


def job(*, persist: bool = False, tier: bool = False, **elastic: Any) -> ace.Job:
    return ace.Job(
        GPUS,
        WORK,
        INTERVAL,
        init=lognormal(3 * MINUTE),
        save=lognormal(1 * MINUTE),
        load=lognormal(2 * MINUTE),
        persist=lognormal(5 * MINUTE) if persist else None,
        tiers=[ace.CheckpointTier(10 * MINUTE, save=lognormal(5.0), load=lognormal(20.0))]
        if tier
        else (),
        **elastic,
    )


#: name -> (job, causes); the first is the baseline.
VARIANTS: dict[str, tuple[ace.Job, list[ace.Cause]]] = {
    "synchronous": (job(), causes()),
    "async persist": (job(persist=True), causes()),
    "two-level": (job(tier=True), causes()),
    "async + two-level": (job(persist=True, tier=True), causes()),
    "slow failures": (job(), causes(SLOWDOWN)),
}
BASELINE = "synchronous"
BATCH_VARIANTS = [name for name in VARIANTS if name != "slow failures"]


def _batch(name: str) -> np.ndarray:
    j, c = VARIANTS[name]
    return ace.batch_simulate(
        [j], failures(), replicas=REPLICAS, seed=SEED, causes=c, threads=1
    ).jobs


def _heap(name: str) -> np.ndarray:
    j, c = VARIANTS[name]
    return ace.simulate(
        j, failures=failures(), replicas=REPLICAS, seed=SEED, causes=c, threads=1
    ).jobs


def check(rows: np.ndarray, replicas: int) -> None:
    """Rows complete, the buckets sum to the wall clock, every completed
    replica has exactly its work as productive time."""
    assert rows.size == replicas
    assert rows["completed"].all()
    total = sum(rows[b].astype(np.float64) for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(rows["productive"], WORK, rtol=1e-9)
    for b in BUCKETS:
        assert (rows[b] >= 0).all(), b


def interleaved(
    runs: dict[str, Callable[[], np.ndarray]],
) -> Callable[[], tuple[dict[str, np.ndarray], dict[str, list[float]]]]:
    """One round: every variant once, in order; each call's duration is
    appended to its log (so timings exist even under ``--benchmark-disable``)."""
    logs: dict[str, list[float]] = {name: [] for name in runs}
    rows: dict[str, np.ndarray] = {}

    def round_() -> tuple[dict[str, np.ndarray], dict[str, list[float]]]:
        for name, fn in runs.items():
            t0 = time.perf_counter()
            rows[name] = fn()
            logs[name].append(time.perf_counter() - t0)
        return rows, logs

    return round_


def report_variants(
    benchmark: Any,
    path: str,
    rows: dict[str, np.ndarray],
    logs: dict[str, list[float]],
    replicas: int,
    baseline: str,
) -> None:
    """Per-replica cost of each variant (best round) and its ratio to the
    baseline, into extra_info and the terminal summary."""
    base = min(logs[baseline]) / replicas
    parts = []
    for name, log in logs.items():
        per_replica = min(log) / replicas
        ratio = per_replica / base
        r = rows[name]
        key = name.replace(" + ", "_").replace(" ", "_").replace("-", "_")
        benchmark.extra_info[f"{key}_us_per_replica"] = per_replica * 1e6
        benchmark.extra_info[f"{key}_ratio"] = ratio
        benchmark.extra_info[f"{key}_pooled_ettr"] = WORK / float(r["wall"].mean())
        benchmark.extra_info[f"{key}_failures_per_replica"] = float(r["failures"].mean())
        parts.append(f"{name} {per_replica * 1e6:.2f} us ({ratio:.2f}x)")
    benchmark.extra_info.update(replicas=replicas, rounds=len(logs[baseline]))
    line = f"lifecycle, {path}, {replicas} replicas, one core, per replica: " + ", ".join(parts)
    report(line)


@pytest.fixture(scope="module")
def batch_rows() -> dict[str, np.ndarray]:
    """The batch path's rows of the last round, shared with the event-heap test."""
    return {}


def test_lifecycle_batch(benchmark: Any, batch_rows: dict[str, np.ndarray]) -> None:
    """Synchronous, async persist, two-level and both on ``batch_simulate``."""
    round_ = interleaved({name: (lambda n=name: _batch(n)) for name in BATCH_VARIANTS})
    rows, logs = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    for name in BATCH_VARIANTS:
        check(rows[name], REPLICAS)
    # The tier is exercised: some process failures restart from it.
    assert rows["two-level"]["tier_restores"].sum() > 0
    assert rows["synchronous"]["tier_restores"].sum() == 0
    batch_rows.update(rows)
    report_variants(benchmark, "batch Monte Carlo", rows, logs, REPLICAS, BASELINE)


def test_lifecycle_event_heap(benchmark: Any, batch_rows: dict[str, np.ndarray]) -> None:
    """All variants through ``simulate``, slow failures (the event heap) included."""
    round_ = interleaved({name: (lambda n=name: _heap(n)) for name in VARIANTS})
    rows, logs = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    for name in VARIANTS:
        check(rows[name], REPLICAS)
    assert rows["two-level"]["tier_restores"].sum() > 0
    # The slowdown is exercised: the same draws give other rows than fail-stop.
    assert rows["slow failures"].tobytes() != rows[BASELINE].tobytes()
    # The batch path gives simulate's rows, bit for bit, where it applies.
    for name in BATCH_VARIANTS:
        other = batch_rows[name] if name in batch_rows else _batch(name)
        assert other.tobytes() == rows[name].tobytes(), name
    report_variants(benchmark, "simulate", rows, logs, REPLICAS, BASELINE)


HAS_ELASTIC = "min_gpus" in inspect.signature(ace.Job).parameters


@pytest.mark.skipif(not HAS_ELASTIC, reason="the core has no elastic jobs (Job(min_gpus=...))")
def test_elastic_fleet(benchmark: Any) -> None:
    """An elastic job (shrinks to 3/4 of its nodes instead of waiting for a
    repair) against the same non-elastic job, on a fleet of exactly the job's
    nodes, no spares, Weibull(0.7) node failures giving the job the same MTTF."""
    nodes = GPUS // GPUS_PER_NODE
    node_law = ace.Weibull(SHAPE, nodes * SCALE)  # the job's nodes together: MTTF
    fleet = ace.Fleet(nodes, GPUS_PER_NODE, repair=lognormal(4 * HOUR, 0.8), node_failures=node_law)
    jobs = {
        "non-elastic": job(),
        "elastic": job(min_gpus=3 * GPUS // 4, reconfigure=lognormal(2 * MINUTE), scaling=1.0),
    }

    def run(j: ace.Job) -> np.ndarray:
        return ace.simulate(j, fleet=fleet, replicas=FLEET_REPLICAS, seed=SEED, threads=1).jobs

    round_ = interleaved({name: (lambda j=j: run(j)) for name, j in jobs.items()})
    rows, logs = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    for r in rows.values():
        check(r, FLEET_REPLICAS)
    assert rows["elastic"].tobytes() != rows["non-elastic"].tobytes()
    report_variants(benchmark, "fleet event heap", rows, logs, FLEET_REPLICAS, "non-elastic")


def test_shared_storage(benchmark: Any) -> None:
    """Eight one-node-wide 64-GPU jobs on one fleet writing 20 GB durable
    checkpoints: without shared storage (the save law alone) against a
    shared 10 GB/s storage (the save law as the fixed part, then the
    transfer at each writer's share), same failures."""
    nodes = 8 * 8
    fleet_plain = ace.Fleet(nodes, GPUS_PER_NODE, repair=lognormal(4 * HOUR, 0.8))
    fleet_shared = ace.Fleet(
        nodes, GPUS_PER_NODE, repair=lognormal(4 * HOUR, 0.8), storage_bandwidth=10e9
    )
    law = ace.Weibull(SHAPE, 8 * SCALE)
    jobs = [
        ace.Job(64, WORK, HOUR, save=lognormal(20.0), load=lognormal(30.0), checkpoint_bytes=20e9)
        for _ in range(8)
    ]
    runs = {"synchronous": fleet_plain, "shared storage": fleet_shared}

    def run(f: ace.Fleet) -> np.ndarray:
        return ace.simulate(
            jobs, failures=law, fleet=f, replicas=FLEET_REPLICAS // 4, seed=SEED, threads=1
        ).jobs

    round_ = interleaved({name: (lambda f=f: run(f)) for name, f in runs.items()})
    rows, logs = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    for r in rows.values():
        check(r, FLEET_REPLICAS // 4 * len(jobs))
    assert rows["shared storage"]["contention"].sum() > 0.0
    assert rows["synchronous"]["contention"].sum() == 0.0
    report_variants(
        benchmark, "fleet event heap, 8 jobs", rows, logs, FLEET_REPLICAS // 4, "synchronous"
    )
