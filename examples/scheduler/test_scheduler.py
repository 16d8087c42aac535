"""Tests of the EASY-with-spares scheduler (easy_spares.py), the way a
scheduler's own test suite uses acesim's pytest plugin: the ``fleet_model``
factory and ``acesim_seed`` fixtures, the ``recorded_trace`` regression
files and the assertions of :mod:`acesim.testing`.

1. Hand cases: a few nodes, failures placed at exact times, constant
   laws; every start and every figure worked out by hand.
2. Statistics over replicas: the wide job's ETTR against the closed form,
   and the fleet's ETTR against acesim's built-in scheduler (the same
   policy) on the same failures.
3. A regression test on a recorded failure trace.

Run with ``python -m pytest examples/scheduler``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.pytest_plugin import TraceRecorder
from acesim.testing import assert_ettr_at_least, assert_not_worse
from easy_spares import EasySpares, Start, run

HOUR, DAY = ace.HOUR, ace.DAY
FleetModelFactory = Callable[..., ace.FleetModel]


def job(nodes: int, hours: float, **kwargs: Any) -> ace.Job:
    """A job of whole 8-GPU nodes: ``hours`` of work, a checkpoint every
    hour (save 60 s), load 60 s, no init."""
    return ace.Job(
        8 * nodes,
        hours * HOUR,
        HOUR,
        init=ace.Constant(0.0),
        save=ace.Constant(60.0),
        load=ace.Constant(60.0),
        **kwargs,
    )


def fleet(nodes: int, spares: int, failures: dict[int, Sequence[float]]) -> ace.Fleet:
    """``failures[n]``: the times node ``n`` fails; each repair takes 1 h."""
    trace = ace.NodeTrace.from_times(failures, nodes=nodes)
    return ace.Fleet(nodes, spares=spares, repair=ace.Constant(HOUR), node_failures=trace)


def drive(
    fleet_model: FleetModelFactory, f: ace.Fleet, jobs: list[ace.Job]
) -> tuple[EasySpares, ace.SimulationResult]:
    sched = EasySpares(fleet_model(f, checkpoints=True, check_invariants=True))
    return sched, run(sched.model, jobs, scheduler=sched)


# --------------------------------------------------------------------------
# 1. Hand cases
# --------------------------------------------------------------------------


def test_a_failed_job_is_re_placed_on_a_spare_at_once(fleet_model: FleetModelFactory) -> None:
    """Four nodes, node 3 the spare. A (2 nodes, 4 h) starts on [0, 1], B
    (1 node, 8 h) on [2]. Node 0 fails at 5,000 s: A has computed 1,280 s
    since its checkpoint at 3,720 (wasted) and restarts at once on [1, 3]
    (load 60 s, then 3 h of work and 3 checkpoints): done at 5,060 + 3 x
    3,660 = 16,040. Node 0, back at 8,600, becomes the spare."""
    sched, res = drive(fleet_model, fleet(4, 1, {0: [5000.0]}), [job(2, 4), job(1, 8)])
    assert sched.starts == [
        Start(0.0, 0, (0, 1), "queue"),
        Start(0.0, 1, (2,), "queue"),
        Start(5000.0, 0, (1, 3), "replace"),
    ]
    a, b = res.jobs
    assert (a["wall"], a["wasted"], a["recovery_wait"], a["failures"]) == (16040.0, 1280.0, 0.0, 1)
    assert (b["wall"], b["failures"]) == (60.0 + 8 * 3660.0, 0)
    assert sched.spares == [0]


def test_backfill_starts_a_small_job_without_delaying_the_head(
    fleet_model: FleetModelFactory,
) -> None:
    """Four nodes, no spares, four jobs at 0 in this order: A (3 nodes, 2 h)
    starts; B (4 nodes, 1 h) is the head, reserved for A's estimated end,
    60 + 2 x 3,660 = 7,380 s. C (1 node, 1 h, estimated 3,720 s) ends before
    then: backfilled at 0 on the free node. D (1 node, 3 h) would not end by
    7,380 and the head needs every node: it waits (a greedy scheduler would
    start it at 3,720, when C ends, and push B back to 14,760). B starts at
    7,380, exactly when A ends, and D after B, at 7,380 + 3,720 = 11,100."""
    jobs = [job(3, 2), job(4, 1), job(1, 1), job(1, 3)]
    sched, res = drive(fleet_model, fleet(4, 0, {}), jobs)
    assert sched.starts == [
        Start(0.0, 0, (0, 1, 2), "queue"),
        Start(0.0, 2, (3,), "backfill"),
        Start(7380.0, 1, (0, 1, 2, 3), "queue"),
        Start(11100.0, 3, (0,), "queue"),
    ]
    assert res.jobs["wall"][0] == 7380.0
    assert list(res.jobs["queue_wait"]) == [0.0, 7380.0, 0.0, 11100.0]


def test_a_job_waits_for_a_repair_when_no_spare_is_left(fleet_model: FleetModelFactory) -> None:
    """As in the first case, but node 1 fails too, at 6,000 s: A (now on
    [1, 3]) loses 940 s more and keeps node 3; the spare is used, node 2 is
    B's, node 0 is in repair: A waits. Node 0 is back at 8,600 and A takes
    it (recovery wait 2,600 s): done at 8,660 + 3 x 3,660 = 19,640. C (1 node,
    1 h, submitted at 7,000) finds no node: node 0 goes to A first, node 1
    (back at 9,600) refills the spare, which a queued job never takes, so C
    starts when A ends, on node 0."""
    jobs = [job(2, 4), job(1, 8), job(1, 1, submit=7000.0)]
    sched, res = drive(fleet_model, fleet(4, 1, {0: [5000.0], 1: [6000.0]}), jobs)
    assert sched.starts == [
        Start(0.0, 0, (0, 1), "queue"),
        Start(0.0, 1, (2,), "queue"),
        Start(5000.0, 0, (1, 3), "replace"),
        Start(8600.0, 0, (3, 0), "replace"),
        Start(19640.0, 2, (0,), "queue"),
    ]
    a = res.jobs[0]
    assert (a["wall"], a["wasted"], a["recovery_wait"]) == (19640.0, 2220.0, 2600.0)
    assert a["failures"] == 2
    assert res.jobs["queue_wait"][2] == 19640.0 - 7000.0
    assert sched.spares == [1]


def test_bad_jobs_are_refused(fleet_model: FleetModelFactory) -> None:
    sched = EasySpares(fleet_model(fleet(4, 1, {})))
    with pytest.raises(ValueError, match="whole nodes"):
        sched.submit(ace.Job(4, HOUR, HOUR))
    with pytest.raises(ValueError, match="never fits beside 1 spares"):
        sched.submit(job(4, 1))
    with pytest.raises(ValueError, match="submission order"):
        run(sched.model, [job(1, 1, submit=HOUR), job(1, 1)])


# --------------------------------------------------------------------------
# 2. Statistics over replicas
# --------------------------------------------------------------------------

# A 20-node fleet with 2 hot spares; node failures every 4 days per node,
# repairs of 6 h on average. A wide 12-node job of high priority and a stream
# of 30 small jobs, one every 4 h: the queue is busy and backfill matters.
NODE_LAW = ace.Exponential(4 * DAY)
SIZES, HOURS = [2, 4, 1, 6, 3, 2, 1, 4], [6, 12, 4, 10, 8, 6, 3]
JOBS = [ace.Job(8 * 12, 2 * DAY, HOUR, priority=1, name="wide")] + [
    ace.Job(8 * SIZES[i % 8], HOURS[i % 7] * HOUR, HOUR, submit=i * 4 * HOUR) for i in range(30)
]
REPAIR = ace.Exponential(6 * HOUR)
REPLICAS = 100


def scenario(repair: ace.Distribution = REPAIR) -> ace.Fleet:
    return ace.Fleet(20, spares=2, repair=repair, node_failures=NODE_LAW)


def replicas(fleet_model: FleetModelFactory, n: int) -> ace.SimulationResult:
    """``n`` independent runs of the scheduler, replica ids 0..n-1 of this
    test's seed, gathered into one result (the rows of each run keep their
    replica id), as ``ace.simulate(..., replicas=n)`` would give them."""
    runs = [run(fleet_model(scenario(), replica=r, checkpoints=True), JOBS) for r in range(n)]
    return ace.SimulationResult(
        jobs=np.concatenate([r.jobs for r in runs]),
        fleet=np.concatenate([r.fleet for r in runs]),
        trace=np.concatenate([r.trace for r in runs]),
        events=np.concatenate([r.events for r in runs]),
        seed=runs[0].seed,
        replicas=n,
    )


def test_the_wide_job_loses_little_beyond_its_failures(fleet_model: FleetModelFactory) -> None:
    """The wide job has the highest priority: it starts at once and is
    re-placed on a spare after most failures, so its ETTR is close to the
    closed form for its checkpoint cadence under exponential failures at its
    12 nodes' rate (``expected_ettr`` in its rows: 0.916, which leaves out
    waits for nodes). The claim, at 95% confidence over the replicas: it
    gives up at most 3 ETTR points to those waits. (Its true loss is under
    1 point; a claim of 2 points would fail for about one seed in a hundred
    or two at 100 replicas, for want of replicas, not of a better
    scheduler.)"""
    res = replicas(fleet_model, REPLICAS)
    expected = float(res.jobs["expected_ettr"][res.jobs["job"] == 0][0])
    assert_ettr_at_least(res, expected - 0.03, job=0)


def test_as_good_as_the_built_in_scheduler_on_the_same_failures(
    fleet_model: FleetModelFactory, acesim_seed: int
) -> None:
    """The scheduler implements the policy of acesim's built-in scheduler
    under ``Replacement.SPARES`` with EASY backfill, so on the same failures
    the two should give the same fleet ETTR. What makes them comparable:

    - Common random numbers: replica r of both, with the same seed, sees the
      same node failures (node failures in wall-clock time, no quarantine,
      no job-level failures, constant init / save / load), so the ETTR
      difference is paired replica by replica.
    - The same rules: the queue by priority and submission, spares held
      back and refilled first, failed jobs served first, spares then free
      nodes, a waiting job holding back lower priorities.
    - What still differs, and is why the margin is not zero: the nodes each
      picks (so a node failure may hit another job), and the estimates behind
      EASY's reservation (the built-in knows each job's progress and counts
      nodes coming back from repair; this one counts checkpoints reported).

    The claim is equivalence within 2 ETTR points: not worse by more than
    0.02, and not better by more than 0.02 either (a scheduler suddenly much
    better than the policy it implements has an accounting bug), each at 95%
    confidence (two one-sided tests)."""
    mine = replicas(fleet_model, REPLICAS)
    built_in = ace.simulate(
        JOBS,
        fleet=scenario(),
        policy=ace.Policy(replacement=ace.Replacement.SPARES, backfill="easy"),
        replicas=REPLICAS,
        seed=acesim_seed,
    )
    # The same failures: identical node failures before either run ends.
    end = np.minimum(mine.fleet["makespan"], built_in.fleet["makespan"])
    for r in range(REPLICAS):
        a, b = (t[(t["replica"] == r) & (t["time"] < end[r])] for t in (mine.trace, built_in.trace))
        assert sorted(zip(a["node"], a["time"], strict=True)) == sorted(
            zip(b["node"], b["time"], strict=True)
        )
    assert_not_worse(mine, built_in, margin=0.02)
    assert_not_worse(built_in, mine, margin=0.02)


# --------------------------------------------------------------------------
# 3. Regression on a recorded failure trace
# --------------------------------------------------------------------------


def test_regression_on_recorded_failures(
    fleet_model: FleetModelFactory, recorded_trace: TraceRecorder, acesim_seed: int
) -> None:
    """The scheduler on one recorded month of the scenario's node failures
    (``acesim_traces/test_scheduler.test_regression_on_recorded_failures.4528c4ea.npz``,
    recorded from a built-in run on the first run). With the failures fixed
    and every other law constant, the run is the same for any seed: the
    figures below pin the scheduler's behaviour. Re-record with
    ``--acesim-record`` and update them only when a change is meant."""
    repair = ace.Constant(6 * HOUR)
    trace = recorded_trace(
        lambda: ace.simulate(JOBS, fleet=scenario(repair), seed=acesim_seed),
        nodes=20,
        model=NODE_LAW,
    )
    f = ace.Fleet(20, spares=2, repair=repair, node_failures=trace)
    sched = EasySpares(fleet_model(f, checkpoints=True, check_invariants=True))
    res = run(sched.model, JOBS, scheduler=sched)
    assert bool(np.all(res.jobs["completed"]))
    hours = res.jobs["gpus"] / 8 / HOUR  # node-hours per second of a job's wall
    starts = Counter(s.how for s in sched.starts)
    figures = {
        **{how: starts[how] for how in ("queue", "backfill", "replace")},
        "failures": int(res.jobs["failures"].sum()),
        "queue_wait node-h": round(float(np.sum(hours * res.jobs["queue_wait"])), 6),
        "recovery_wait node-h": round(float(np.sum(hours * res.jobs["recovery_wait"])), 6),
        "makespan": float(res.fleet["makespan"][0]),
        "ettr": round(res.pooled_ettr(), 6),
    }
    assert figures == EXPECTED


EXPECTED = {
    "queue": 26,
    "backfill": 5,
    "replace": 9,
    "failures": 9,
    "queue_wait node-h": 337.740637,
    "recovery_wait node-h": 0.0,
    "makespan": 461700.0,
    "ettr": 0.743331,
}
