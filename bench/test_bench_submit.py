"""``FleetModel.submit`` is linear in the submissions: 100,000 distinct
``Job`` objects (made beforehand, each with its own law objects: the
numbers given for init, save and load become new ``Constant`` laws), in
4 batches of 25,000 on one model, against the same ``Job`` object
submitted as often on another model, the batches interleaved. A model
that kept every law object grew its law table, and the cost of a submit,
with every submission before it.

Run: ``python -m pytest bench/test_bench_submit.py -q``; the figures are in
the terminal summary and ``benchmark.extra_info``; the test asserts
correctness only (ids, the law table, the jobs run), never time.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from conftest import report

BATCH = 25_000
BATCHES = 4


def _fleet() -> ace.Fleet:
    return ace.Fleet(16, spares=1, repair=ace.HOUR, node_failures=ace.Exponential(30 * ace.DAY))


def test_submit_cost_does_not_grow(benchmark: Any) -> None:
    jobs = [ace.Job(8, ace.HOUR, 600.0) for _ in range(BATCH * BATCHES)]
    same = ace.Job(8, ace.HOUR, 600.0)
    distinct_model = ace.FleetModel(_fleet(), seed=1)
    same_model = ace.FleetModel(_fleet(), seed=1)
    own = len(distinct_model._table.compiled)
    distinct_s: list[float] = []
    same_s: list[float] = []
    ids: list[int] = []
    for b in range(BATCHES):
        start = time.perf_counter()
        ids.extend(distinct_model.submit(job) for job in jobs[b * BATCH : (b + 1) * BATCH])
        distinct_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(BATCH):
            same_model.submit(same)
        same_s.append(time.perf_counter() - start)
    benchmark.pedantic(lambda: None, rounds=1)

    assert ids == list(range(BATCH * BATCHES))
    # One entry for the jobs' init (2 min) and one for save and load (1 min).
    assert len(distinct_model._table.compiled) == own + 2
    # The last job submitted runs as any other: a node, an hour, 6 checkpoints.
    last = ids[-1]
    distinct_model.start(last, [0])
    while distinct_model.advance(2 * ace.HOUR):
        pass
    row = distinct_model.result().jobs[last]
    assert row["completed"] and row["productive"] == ace.HOUR

    growth = distinct_s[-1] / distinct_s[0]
    benchmark.extra_info.update(
        distinct_batch_s=distinct_s,
        same_batch_s=same_s,
        distinct_total_s=sum(distinct_s),
        same_total_s=sum(same_s),
        last_over_first=growth,
    )
    report(
        f"FleetModel.submit, {BATCHES} x {BATCH:,} distinct Job objects: "
        + ", ".join(f"{s:.3f}" for s in distinct_s)
        + f" s ({sum(distinct_s):.2f} s in all, last batch / first {growth:.2f}); "
        f"the same Job object: {sum(same_s):.2f} s in all "
        f"(distinct / same {sum(distinct_s) / sum(same_s):.2f})"
    )
