"""A month of a 100K-GPU fleet: 16,384 nodes x 8 GPUs, a Meta-like workload
scaled to the fleet (about 1.7M jobs), node failures at Meta RSC-1's rate
(6.5 per 1000 node-days), full per-job accounting.

Time comes from pytest-benchmark; peak memory from a fresh process (its
maximum resident set size, results included). Both are printed in the
terminal summary and stored in ``benchmark.extra_info``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import acesim as ace
import numpy as np
import pytest
from conftest import REPORT

NODES = 16_384
GPUS_PER_NODE = 8
DAYS = 30
RSC1_FAILURES_PER_NODE_DAY = 6.5e-3


def fleet() -> ace.Fleet:
    return ace.Fleet(
        NODES,
        GPUS_PER_NODE,
        spares=64,
        repair=ace.Exponential(4 * ace.HOUR),
        node_failures=ace.Exponential(ace.DAY / RSC1_FAILURES_PER_NODE_DAY),
    )


@pytest.fixture(scope="module")
def workload() -> ace.JobArray:
    return ace.workloads.meta_like(DAYS, NODES * GPUS_PER_NODE, seed=0)


def check(res: ace.SimulationResult, jobs: ace.JobArray) -> None:
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
    assert fleet_row["jobs_completed"] > 0.99 * len(jobs)
    # Node failures at the RSC-1 rate: NODES * rate * DAYS events, Poisson.
    expected = NODES * RSC1_FAILURES_PER_NODE_DAY * DAYS
    assert abs(fleet_row["node_failures"] - expected) < 5 * np.sqrt(expected)


def test_fleet_month(benchmark: Any, workload: ace.JobArray) -> None:
    res = benchmark.pedantic(
        ace.simulate,
        args=(workload,),
        kwargs=dict(fleet=fleet(), horizon=DAYS * ace.DAY, seed=1, threads=1),
        rounds=2,
        iterations=1,
    )
    check(res, workload)
    events = int(res.fleet["events"][0])
    heap = int(res.fleet["heap_events"][0])
    # Routine checkpoints run ahead of the clock: most events skip the heap.
    assert heap < events
    seconds = benchmark.stats.stats.min
    peak = peak_rss_mb()
    benchmark.extra_info.update(
        jobs=len(workload),
        events=events,
        heap_events=heap,
        events_per_second=events / seconds,
        peak_rss_mb=peak,
    )
    REPORT.append(
        f"fleet month: {NODES} nodes x {GPUS_PER_NODE} GPUs, {DAYS} days, {len(workload):,} jobs, "
        f"{events:,} events ({heap:,} through the heap): {seconds:.2f} s per replica "
        f"({events / seconds / 1e6:.2f} M events/s), "
        f"peak RSS {peak:.0f} MB in a fresh process (targets: 1.2 s, 500 MB)"
    )


def peak_rss_mb() -> float:
    """Peak resident memory of a fresh process that builds the workload and
    runs the month once."""
    script = textwrap.dedent(
        f"""
        import json, resource
        import acesim as ace
        jobs = ace.workloads.meta_like({DAYS}, {NODES * GPUS_PER_NODE}, seed=0)
        fleet = ace.Fleet({NODES}, {GPUS_PER_NODE}, spares=64,
                          repair=ace.Exponential(4 * ace.HOUR),
                          node_failures=ace.Exponential(ace.DAY / {RSC1_FAILURES_PER_NODE_DAY}))
        res = ace.simulate(jobs, fleet=fleet, horizon={DAYS} * ace.DAY, seed=1, threads=1)
        # VmHWM is this process's own peak; ru_maxrss would also count the
        # parent's pages copied at fork (Linux keeps that high-water mark
        # across exec).
        try:
            with open("/proc/self/status") as status:
                hwm = [l for l in status if l.startswith("VmHWM:")][0]
            peak = int(hwm.split()[1]) / 1024
        except (OSError, IndexError):
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(peak))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def test_fleet_month_greedy_backfill(benchmark: Any, workload: ace.JobArray) -> None:
    """The same month under greedy backfill (the default is EASY): the cost
    of the reservation, side by side."""
    res = benchmark.pedantic(
        ace.simulate,
        args=(workload,),
        kwargs=dict(
            fleet=fleet(),
            policy=ace.Policy(backfill="greedy"),
            horizon=DAYS * ace.DAY,
            seed=1,
            threads=1,
        ),
        rounds=2,
        iterations=1,
    )
    check(res, workload)
    seconds = benchmark.stats.stats.min
    REPORT.append(f"fleet month, greedy backfill: {seconds:.2f} s per replica")


MILLION_NODES = 131_072  # 1,048,576 GPUs
MILLION_SPARES = 512


def test_fleet_month_million_gpus(benchmark: Any) -> None:
    """The same month at 1,048,576 GPUs: 131,072 nodes, about 13.8M
    Meta-like jobs, 512 hot spares. One replica in a fresh process: the
    simulate call's time and the process's peak memory, results included
    (targets: 12 s and 4 GB)."""
    script = textwrap.dedent(
        f"""
        import json, time
        import acesim as ace
        jobs = ace.workloads.meta_like({DAYS}, {MILLION_NODES * GPUS_PER_NODE}, seed=0)
        fleet = ace.Fleet({MILLION_NODES}, {GPUS_PER_NODE}, spares={MILLION_SPARES},
                          repair=ace.Exponential(4 * ace.HOUR),
                          node_failures=ace.Exponential(ace.DAY / {RSC1_FAILURES_PER_NODE_DAY}))
        start = time.perf_counter()
        res = ace.simulate(jobs, fleet=fleet, horizon={DAYS} * ace.DAY, seed=1, threads=1)
        seconds = time.perf_counter() - start
        with open("/proc/self/status") as status:
            hwm = [l for l in status if l.startswith("VmHWM:")][0]
        f = res.fleet[0]
        j = res.jobs
        total = sum(j[b] for b in ("productive", "wasted", "ckpt_stall", "overhead",
                                   "detection", "queue_wait", "recovery_wait"))
        print(json.dumps(dict(
            jobs=len(jobs), seconds=seconds, peak_mb=int(hwm.split()[1]) / 1024,
            events=int(f["events"]), heap_events=int(f["heap_events"]), ettr=float(f["ettr"]),
            completed=int(f["jobs_completed"]), node_failures=int(f["node_failures"]),
            worst_gap=float(abs(total - j["wall"]).max()))))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["jobs"] > 13_000_000
    assert 0.8 < r["ettr"] < 1.0
    assert r["completed"] > 0.99 * r["jobs"]
    assert r["worst_gap"] < 1e-3  # every row's buckets add up to its wall
    assert r["heap_events"] < r["events"]
    expected = MILLION_NODES * RSC1_FAILURES_PER_NODE_DAY * DAYS
    assert abs(r["node_failures"] - expected) < 5 * np.sqrt(expected)
    benchmark.extra_info.update(r)
    benchmark.pedantic(lambda: None, rounds=1)
    REPORT.append(
        f"fleet month at 1,048,576 GPUs: {MILLION_NODES} nodes, {r['jobs']:,} jobs, "
        f"{r['events']:,} events ({r['heap_events']:,} through the heap): "
        f"{r['seconds']:.1f} s, peak RSS {r['peak_mb']:.0f} MB in a fresh process "
        f"(targets: 12 s, 4 GB)"
    )
