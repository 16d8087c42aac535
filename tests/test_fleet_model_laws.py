"""A FleetModel keeps one copy of each law, by value: every submitted job
brings new law objects (a number given for ``save`` becomes a new
``Constant``), and a model that kept each object would grow its law table,
and the cost of a submit, with every submission before it."""

from __future__ import annotations

import acesim as ace
import numpy as np
from hand_cases import HOUR, ZERO, assert_accounting, trace_fleet

C = ace.Constant


def _run(jobs: list[ace.Job]) -> tuple[int, ace.SimulationResult]:
    """Node 0 fails at 5,000 s (repair 1 h). Job 0 (two nodes, 4 h) starts
    at 0 on [0, 1]: load 0-60, compute 60-3,660, checkpoint 3,660-3,720;
    at 5,000 it has 1,280 s since its checkpoint (wasted). Restarted on
    [1, 3] at 5,000: load 60 s, then 3 h of work and 3 checkpoints: done at
    5,060 + 3 x 3,660 = 16,040. Job 1 (one node, 1 h) on [2]: load 0-60,
    compute 60-3,660, its last checkpoint 3,660-3,720: done at 3,720."""
    model = ace.FleetModel(trace_fleet(4, {0: [5000.0]}, repair=HOUR), check_invariants=True)
    own = len(model._table.compiled)  # the fleet's laws
    a, b = (model.submit(job) for job in jobs)
    model.start(a, [0, 1])
    model.start(b, [2])
    while events := model.advance(20_000.0):
        for event in events:
            if event.kind == "job_failed":
                assert (event.job, event.time) == (a, 5000.0)
                model.start(a, [1, 3])
    return len(model._table.compiled) - own, model.result()


def test_equal_laws_are_shared_and_the_rows_are_those_of_shared_objects() -> None:
    distinct = [
        ace.Job(16, 4 * HOUR, HOUR, init=C(0.0), save=C(60.0), load=60.0),
        ace.Job(8, HOUR, HOUR, init=0.0, save=60.0, load=C(60.0)),
    ]
    save = C(60.0)
    shared = [
        ace.Job(16, 4 * HOUR, HOUR, init=ZERO, save=save, load=save),
        ace.Job(8, HOUR, HOUR, init=ZERO, save=save, load=save),
    ]
    added, res = _run(distinct)
    assert added == 2  # 0 s and 60 s, for six law objects
    _, same = _run(shared)
    assert res.jobs.tobytes() == same.jobs.tobytes()
    a, b = res.jobs
    assert (a["end"], a["wasted"], a["overhead"], a["failures"]) == (16_040.0, 1280.0, 120.0, 1)
    assert (b["end"], b["failures"]) == (3720.0, 0)
    assert_accounting(res.jobs)


def test_laws_that_differ_in_family_or_value_are_not_shared() -> None:
    model = ace.FleetModel(trace_fleet(2, {}, repair=HOUR))
    own = len(model._table.compiled)
    laws = [C(60.0), C(61.0), ace.Exponential(60.0), ace.Weibull(1.0, 60.0), C(60.0)]
    for law in laws:
        model.submit(ace.Job(8, HOUR, HOUR, init=law, save=law, load=law))
    keys = [law._compiled.value_key for law in laws]
    assert len(set(keys)) == 4 and keys[0] == keys[4]
    assert len(model._table.compiled) == own + 4
    first = np.array([model._table.index(law) for law in laws]) - own
    assert first.tolist() == [0, 1, 2, 3, 0]


def test_never_is_no_law_by_value_too() -> None:
    # The model's law table keeps laws by value; Never() has no compiled form
    # and is the core's "no law", as in simulate. One node, no node failures
    # in its trace; the job (no init, no load) computes 0-3,600 and writes
    # its final checkpoint 3,600-3,660: done at 3,660, nothing failed.
    model = ace.FleetModel(trace_fleet(1, {}, repair=HOUR), failures=ace.Never())
    j = model.submit(ace.Job(8, HOUR, HOUR, init=ZERO, save=C(60.0), load=ZERO))
    model.start(j, [0])
    events = []
    while batch := model.advance(10 * HOUR):
        events += batch
    assert [(e.kind, e.time) for e in events] == [("job_done", 3660.0)]
    row = model.result().jobs[0]
    assert (row["end"], row["failures"]) == (3660.0, 0)
