"""A failure of a very wide job: each job-level failure sends its blamed
node to repair and the job takes a hot spare in its place (a node given
back, a node taken), so the cost per failure shows whether a node change
grows with the job's width.

- wide: a 131,072-GPU job (16,384 nodes) on 16,448 nodes (64 hot spares);
- narrow: a 1,024-GPU job (128 nodes) on 192 nodes (64 hot spares);

both with exponential job-level failures (mean 14 minutes), checkpoints
every 5 minutes (the default 2-min init, 1-min save and load), 7 days of
work, 4-hour exponential repairs; one replica, one thread, best of ROUNDS
(CPU time), side by side. The cost per failure is the run's time, less
that of the same run without failures (the fleet's setup and the job's
placement, which grow with the width), over its failures; the wide /
narrow ratio is near 1 when a node change is O(1).

Run: ``python -m pytest bench/test_bench_wide_job.py -q``; the figures are
in the terminal summary and ``benchmark.extra_info``; the test asserts
correctness only (each job completes, every failure takes a spare or waits,
the rows add up), never time.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from conftest import report

ROUNDS = 3
SPARES = 64
JOB_MTTF = 14 * ace.MINUTE


def _run(nodes: int, law: ace.Distribution) -> tuple[float, ace.SimulationResult]:
    """Best CPU time of ROUNDS runs of the job of `nodes` nodes, and its result."""
    job = ace.Job(8 * nodes, 7 * ace.DAY, 5 * ace.MINUTE)
    fleet = ace.Fleet(nodes + SPARES, spares=SPARES, repair=ace.Exponential(4 * ace.HOUR))
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        res = ace.simulate(job, law, fleet=fleet, seed=1, threads=1)
        best = min(best, time.process_time() - start)
    return best, res


def _check(res: ace.SimulationResult) -> int:
    row = res.jobs[0]
    assert row["completed"] and row["productive"] == 7 * ace.DAY
    parts = sum(
        row[f]
        for f in (
            "productive",
            "wasted",
            "ckpt_stall",
            "overhead",
            "detection",
            "queue_wait",
            "recovery_wait",
        )
    )
    np.testing.assert_allclose(parts, row["wall"], rtol=1e-9)
    failures = int(row["failures"])
    assert failures > 500  # about a failure every 14 minutes of a run of days
    assert len(res.trace) == failures
    return failures


def test_cost_per_failure_of_a_wide_job(benchmark: Any) -> None:
    failing, never = ace.Exponential(JOB_MTTF), ace.Constant(1000 * ace.DAY)
    wide_s, wide = _run(16_384, failing)
    wide_setup_s, quiet = _run(16_384, never)
    narrow_s, narrow = _run(128, failing)
    narrow_setup_s, _ = _run(128, never)
    benchmark.pedantic(lambda: None, rounds=1)
    assert quiet.jobs["failures"][0] == 0
    wide_failures, narrow_failures = _check(wide), _check(narrow)
    wide_us = (wide_s - wide_setup_s) / wide_failures * 1e6
    narrow_us = (narrow_s - narrow_setup_s) / narrow_failures * 1e6
    benchmark.extra_info.update(
        wide_us_per_failure=wide_us,
        narrow_us_per_failure=narrow_us,
        wide_failures=wide_failures,
        narrow_failures=narrow_failures,
        wide_over_narrow=wide_us / narrow_us,
    )
    report(
        f"wide job, a failure (a node to repair, a spare taken): 16,384 nodes "
        f"{wide_us:.2f} us ({wide_failures:,} failures in {wide_s * 1e3:.1f} ms, "
        f"{wide_setup_s * 1e3:.1f} ms without them), "
        f"128 nodes {narrow_us:.2f} us ({narrow_failures:,} failures); "
        f"wide / narrow {wide_us / narrow_us:.2f}"
    )
