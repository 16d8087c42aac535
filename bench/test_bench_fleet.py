"""A month of a 131K-GPU fleet: 16,384 nodes x 8 GPUs, a Meta-like workload
scaled to the fleet (about 1.7M jobs), node failures at Meta RSC-1's rate
(6.5 per 1000 node-days), full per-job accounting; and the same month at
1,048,576 GPUs (131,072 nodes, about 13.8M jobs).

Time comes from pytest-benchmark, side by side with the bare binary-heap
loop (bench/native/bare_heap.cpp, as many live entries as nodes) for the
same count of logical events; peak memory from a fresh process (its
maximum resident set size, results included), which also times the 1M-GPU
month. Both are printed in the terminal summary and stored in
``benchmark.extra_info``. Targets (issue 28): the 131K-GPU month at most
0.7x the bare loop's time and 500 MB; the 1M-GPU month at most 12 s and
4 GB. ``ACESIM_BENCH_QUICK=1`` simulates 3 days instead of 30.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from conftest import bare_heap_seconds, report, scaled, timed

NODES = 16_384
SPARES = 64
MILLION_NODES = 131_072  # 1,048,576 GPUs
MILLION_SPARES = 512
GPUS_PER_NODE = 8
DAYS = scaled(30, 3)
RSC1_FAILURES_PER_NODE_DAY = 6.5e-3


def fleet(nodes: int = NODES, spares: int = SPARES) -> ace.Fleet:
    return ace.Fleet(
        nodes,
        GPUS_PER_NODE,
        spares=spares,
        repair=ace.Exponential(4 * ace.HOUR),
        node_failures=ace.Exponential(ace.DAY / RSC1_FAILURES_PER_NODE_DAY),
    )


def workload_of(nodes: int) -> ace.JobArray:
    return ace.workloads.meta_like(DAYS, nodes * GPUS_PER_NODE, seed=0)


@pytest.fixture(scope="module")
def workload() -> ace.JobArray:
    return workload_of(NODES)


def check(res: ace.SimulationResult, jobs: ace.JobArray, nodes: int = NODES) -> None:
    j = res.jobs
    total = sum(
        j[f]
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
    np.testing.assert_allclose(total, j["wall"], rtol=1e-9, atol=1e-6)
    done = j["completed"]
    np.testing.assert_allclose(j["productive"][done], jobs.work[done], rtol=1e-9)
    fleet_row = res.fleet[0]
    assert 0.8 < fleet_row["ettr"] < 1.0
    # Jobs still running at the horizon: under 1% of a month's, more of 3 days'.
    assert fleet_row["jobs_completed"] > (0.99 if DAYS >= 30 else 0.95) * len(jobs)
    # Node failures at the RSC-1 rate: nodes * rate * DAYS events, Poisson.
    expected = nodes * RSC1_FAILURES_PER_NODE_DAY * DAYS
    assert abs(fleet_row["node_failures"] - expected) < 5 * np.sqrt(expected)
    # Routine checkpoints run ahead of the clock: most events skip the heap.
    assert fleet_row["heap_events"] < fleet_row["events"]


def fresh_run(nodes: int, spares: int) -> dict[str, Any]:
    """The month on `nodes` nodes in a fresh process, checked (check): the
    simulate call's seconds, the process's peak memory in MB (results
    included), its job count and its fleet row's event counts."""
    script = textwrap.dedent(
        f"""
        import json, resource, sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import acesim as ace
        from test_bench_fleet import DAYS, check, fleet, workload_of
        jobs = workload_of({nodes})
        start = time.perf_counter()
        res = ace.simulate(jobs, fleet=fleet({nodes}, {spares}), horizon=DAYS * ace.DAY, seed=1,
                           threads=1)
        seconds = time.perf_counter() - start
        check(res, jobs, {nodes})
        # VmHWM is this process's own peak; ru_maxrss would also count the
        # parent's pages copied at fork (Linux keeps that high-water mark
        # across exec).
        try:
            with open("/proc/self/status") as status:
                hwm = [l for l in status if l.startswith("VmHWM:")][0]
            peak = int(hwm.split()[1]) / 1024
        except (OSError, IndexError):
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        f = res.fleet[0]
        print(json.dumps(dict(seconds=seconds, peak_mb=peak, jobs=len(jobs),
                              events=int(f["events"]), heap_events=int(f["heap_events"]))))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_fleet_month(benchmark: Any, workload: ace.JobArray, bare_heap: Path) -> None:
    log: list[float] = []
    month = timed(
        lambda: ace.simulate(workload, fleet=fleet(), horizon=DAYS * ace.DAY, seed=1, threads=1),
        log,
    )
    res = benchmark.pedantic(month, rounds=2, iterations=1)
    check(res, workload)
    events = int(res.fleet["events"][0])
    heap = int(res.fleet["heap_events"][0])
    seconds = min(log)
    bare = bare_heap_seconds(bare_heap, NODES, events)
    ratio = seconds / bare
    peak = fresh_run(NODES, SPARES)["peak_mb"]
    benchmark.extra_info.update(
        jobs=len(workload),
        events=events,
        heap_events=heap,
        events_per_second=events / seconds,
        bare_heap_seconds=bare,
        ratio_over_bare_heap=ratio,
        peak_rss_mb=peak,
    )
    report(
        f"fleet month: {NODES} nodes x {GPUS_PER_NODE} GPUs, {DAYS} days, {len(workload):,} jobs, "
        f"{events:,} events ({heap:,} through the heap): {seconds:.2f} s per replica "
        f"({events / seconds / 1e6:.2f} M events/s) vs the bare heap loop {bare:.2f} s for the "
        f"same events: ratio {ratio:.2f}x (target <= 0.7x); "
        f"peak RSS {peak:.0f} MB in a fresh process (target <= 500 MB)"
    )


def test_fleet_month_greedy_backfill(benchmark: Any, workload: ace.JobArray) -> None:
    """The same month under greedy backfill (the default is EASY): the cost
    of the reservation, side by side."""
    log: list[float] = []
    month = timed(
        lambda: ace.simulate(
            workload,
            fleet=fleet(),
            policy=ace.Policy(backfill="greedy"),
            horizon=DAYS * ace.DAY,
            seed=1,
            threads=1,
        ),
        log,
    )
    res = benchmark.pedantic(month, rounds=2, iterations=1)
    check(res, workload)
    seconds = min(log)
    report(f"fleet month, greedy backfill: {seconds:.2f} s per replica")


def test_fleet_month_million_gpus(benchmark: Any) -> None:
    """The same month at 1,048,576 GPUs: 131,072 nodes, about 13.8M
    Meta-like jobs, 512 hot spares. One replica in a fresh process, checked
    as the 131K-GPU month: the simulate call's time and the process's peak
    memory, results included (targets: 12 s and 4 GB)."""
    r = fresh_run(MILLION_NODES, MILLION_SPARES)
    assert r["jobs"] > 13_000_000 * DAYS / 30
    benchmark.extra_info.update(r)
    benchmark.pedantic(lambda: None, rounds=1)
    report(
        f"fleet month at 1,048,576 GPUs: {MILLION_NODES} nodes, {r['jobs']:,} jobs, "
        f"{r['events']:,} events ({r['heap_events']:,} through the heap): "
        f"{r['seconds']:.1f} s, peak RSS {r['peak_mb']:.0f} MB in a fresh process "
        f"(targets: <= 12 s, <= 4 GB)"
    )
