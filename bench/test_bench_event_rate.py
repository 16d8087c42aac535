"""Fleet event rate versus a bare C++ binary-heap loop (bench/native/bare_heap.cpp):
the same number of events, as many live heap entries as nodes, one
exponential draw per event. The bare loop is compiled here with the system
C++ compiler at -O2; the bench is skipped without one. The target is at
least one third of the bare rate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acesim as ace
from conftest import bare_heap_seconds, report, timed

NODES = 16_384
DAYS = 30


def test_fleet_event_rate_vs_bare_heap(benchmark: Any, bare_heap: Path) -> None:
    jobs = ace.workloads.meta_like(DAYS, NODES * 8, seed=0)
    fleet = ace.Fleet(
        NODES,
        8,
        spares=64,
        repair=ace.Exponential(4 * ace.HOUR),
        node_failures=ace.Exponential(ace.DAY / 6.5e-3),
    )
    log: list[float] = []
    month = timed(
        lambda: ace.simulate(jobs, fleet=fleet, horizon=DAYS * ace.DAY, seed=1, threads=1), log
    )
    res = benchmark.pedantic(month, rounds=2, iterations=1)
    events = int(res.fleet["events"][0])
    fleet_rate = events / min(log)
    bare = events / bare_heap_seconds(bare_heap, NODES, events)
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
