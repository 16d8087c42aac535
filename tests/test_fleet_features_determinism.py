"""Determinism of the fleet features (node clocks, rate windows, maintenance,
repair pipelines with misdiagnosis, retirement, cold spares, re-placement
delays): the same rows for any thread count, any replica split, and in
worker processes (every model object pickles)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import acesim as ace
import numpy as np
import pytest
from workers import worker_path

DAY, HOUR = ace.DAY, ace.HOUR


def scenario(replacement: ace.Replacement, clock: str) -> dict[str, Any]:
    jobs = [ace.Job(64, work=4 * DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(
            g,
            work=DAY,
            checkpoint_interval=HOUR,
            save=ace.Exponential(120.0),
            submit=i * HOUR,
            priority=i % 2,
        )
        for i, g in enumerate([8, 16, 4, 2, 32, 8, 1, 24] * 2)
    ]
    stages = [
        ace.RepairStage(ace.Exponential(600.0), escalate=0.5, fix=0.3),
        ace.RepairStage(ace.Constant(DAY), fix=1.0),
    ]
    fleet = ace.Fleet(
        24,
        spares=2,
        cold_spares=2,
        cold_spare_delay=ace.Exponential(HOUR),
        repair=ace.Repair(stages, misdiagnosis=0.2),
        node_failures=ace.Weibull(0.7, 3 * DAY),
        lemon_fraction=0.1,
        lemon_factor=10.0,
        node_clock=clock,
        rate_windows=[(DAY, 3 * DAY, 4.0)],
        maintenance=[(0.5 * DAY, 8 * HOUR, range(12))],
    )
    policy = ace.Policy(
        replacement,
        ace.Preemption.CHECKPOINT_AWARE,
        ace.Quarantine(2, 3 * DAY, float("inf")),
        preemption_grace=1800.0,
        replacement_delay=ace.Exponential(300.0),
    )
    return dict(
        jobs=jobs,
        fleet=fleet,
        policy=policy,
        causes=ace.LLAMA3_CAUSES,
        replicas=6,
        seed=77,
        horizon=15 * DAY,
    )


CASES = [(r, c) for r in ace.Replacement for c in ("wall", "busy")]


def same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    for table in ("jobs", "fleet", "trace"):
        x, y = getattr(a, table), getattr(b, table)
        for name in x.dtype.names:
            np.testing.assert_array_equal(x[name], y[name], err_msg=f"{table}.{name}")


@pytest.mark.parametrize(("replacement", "clock"), CASES)
def test_threads_and_replica_splits(replacement: ace.Replacement, clock: str) -> None:
    kw = scenario(replacement, clock)
    one = ace.simulate(**kw, threads=1, check_invariants=True)
    assert one.fleet["failures"].sum() > 0
    same(one, ace.simulate(**kw, threads=2))
    parts = ace.sweep([kw], chunk_replicas=2)[0].result
    same(one, parts)


def test_worker_processes() -> None:
    todo = [scenario(r, c) for r, c in CASES[:4]]
    want = [ace.simulate(**kw) for kw in todo]
    spawn = multiprocessing.get_context("spawn")
    with worker_path(), ProcessPoolExecutor(2, mp_context=spawn) as pool:
        got = ace.sweep(todo, pool, chunk_replicas=3)
    for g, w in zip(got, want, strict=True):
        same(g.result, w)
