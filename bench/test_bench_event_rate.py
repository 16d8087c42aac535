"""Fleet event rate versus a bare C++ binary-heap loop (bench/native/bare_heap.cpp):
the same number of events, as many live heap entries as nodes, one
exponential draw per event. The bare loop is compiled here with the system
C++ compiler at -O2; the bench is skipped without one. The target is at
least one third of the bare rate."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import acesim as ace
import pytest
from conftest import report

NODES = 16_384
DAYS = 30
SOURCE = Path(__file__).parent / "native" / "bare_heap.cpp"


@pytest.fixture(scope="module")
def bare_heap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the bare heap loop")
    exe = tmp_path_factory.mktemp("bare") / "bare_heap"
    subprocess.run([compiler, "-O2", "-std=c++17", str(SOURCE), "-o", str(exe)], check=True)
    return exe


def bare_rate(exe: Path, events: int) -> float:
    out = subprocess.run(
        [str(exe), str(NODES), str(events), "1"], capture_output=True, text=True, check=True
    )
    n, seconds, _ = out.stdout.split()
    return int(n) / float(seconds)


def test_fleet_event_rate_vs_bare_heap(benchmark: Any, bare_heap: Path) -> None:
    jobs = ace.workloads.meta_like(DAYS, NODES * 8, seed=0)
    fleet = ace.Fleet(
        NODES,
        8,
        spares=64,
        repair=ace.Exponential(4 * ace.HOUR),
        node_failures=ace.Exponential(ace.DAY / 6.5e-3),
    )
    res = benchmark.pedantic(
        ace.simulate,
        args=(jobs,),
        kwargs=dict(fleet=fleet, horizon=DAYS * ace.DAY, seed=1, threads=1),
        rounds=2,
        iterations=1,
    )
    events = int(res.fleet["events"][0])
    fleet_rate = events / benchmark.stats.stats.min
    bare = max(bare_rate(bare_heap, events) for _ in range(3))
    ratio = fleet_rate / bare
    benchmark.extra_info.update(
        events=events,
        fleet_events_per_s=fleet_rate,
        bare_events_per_s=bare,
        ratio=ratio,
        bare_seconds=events / bare,
    )
    report(
        f"event rate: fleet {fleet_rate / 1e6:.2f} M events/s (whole simulate call, accounting "
        f"and results included) vs bare heap loop {bare / 1e6:.2f} M events/s "
        f"({events / bare:.2f} s for the same {events:,} events): {ratio:.2f} of the bare rate "
        f"(target 0.33)"
    )
    assert res.fleet["jobs_completed"][0] > 0.99 * len(jobs)
