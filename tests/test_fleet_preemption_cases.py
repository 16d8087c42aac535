"""Preemption worked out by hand (DESIGN.md section 6; issue 7, section 2,
items 1, 3 and 12).

Small fleets of 8-GPU nodes, node failures placed exactly with
``NodeTrace.from_gaps`` (no job-level failures), constant laws everywhere, so
every figure below follows from the schedule written beside it. The policy is
always ``PREEMPT_LOWER``:

- IMMEDIATE takes victims lowest priority first, then most recently started;
- CHECKPOINT_AWARE takes them least lost work first, and with a grace defers
  a victim (keeps it running until its checkpoint is written) when that write
  would end within the grace;
- the preemptor is charged the churn: each victim's lost compute plus its
  next restart overhead, in GPU-hours; the victim is requeued and restarts.

Where the engine used to give another figure, a comment quotes it
("before the fix").

Shared schedule: the high-priority job (job 0, 16 GPUs, two nodes) has no
init, load or save time and checkpoints every hour of compute, so from t = 0
its checkpoints fall on whole hours. Every low-priority job (8 GPUs, one
node) starts with init 4 min + load 2 min = 6 min (``RESTART``) and computes
from ``submit + 6 min``. Which free node the scheduler hands out first is not
what these tests are about: :func:`placement` finds the nodes each job holds
before the first failure, and the failures are placed on those nodes.
"""

from __future__ import annotations

import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import HOUR, MINUTE, assert_accounting, placement, trace_fleet

GPUS = 8  # every low-priority job: one whole node
RESTART = 6 * MINUTE  # init + load of a low-priority job
GRACE = 10 * MINUTE

# EventKind codes (cpp/include/acesim/records.hpp).
START, CHECKPOINT_END, PREEMPTED = 1, 4, 9

IMMEDIATE = ace.Preemption.IMMEDIATE
CHECKPOINT_AWARE = ace.Preemption.CHECKPOINT_AWARE


def high(work: float, priority: int = 1) -> ace.Job:
    """Job 0: two nodes, no overheads, a checkpoint every hour of compute."""
    zero = ace.Constant(0.0)
    return ace.Job(16, work, HOUR, init=zero, load=zero, save=zero, submit=0.0, priority=priority)


def low(
    work: float, interval: float, *, submit: float = 0.0, priority: int = 0, save: float = 0.0
) -> ace.Job:
    """A one-node job with a 6-minute restart (init 4 min + load 2 min)."""
    return ace.Job(
        GPUS,
        work,
        interval,
        init=ace.Constant(4 * MINUTE),
        load=ace.Constant(2 * MINUTE),
        save=ace.Constant(save),
        submit=submit,
        priority=priority,
    )


def run(
    jobs: list[ace.Job], fleet_: ace.Fleet, preemption: ace.Preemption, grace: float = 0.0
) -> ace.SimulationResult:
    """One replica under PREEMPT_LOWER with the bookkeeping checks on and the
    event log; asserts the accounting identity and that churn is charged to
    job 0 only (nothing else ever preempts)."""
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER, preemption=preemption, preemption_grace=grace
    )
    res = ace.simulate(
        jobs,
        fleet=fleet_,
        policy=policy,
        record_events=True,
        check_invariants=True,
        threads=1,
    )
    rows = res.jobs
    assert rows.size == len(jobs)
    assert_accounting(rows, atol=1e-9)
    assert np.all(rows["completed"])
    assert np.all(rows["churn_gpu_hours"][1:] == 0.0)
    assert res.fleet["churn_gpu_hours"][0] == pytest.approx(
        rows["churn_gpu_hours"].sum(), rel=1e-12
    )
    assert res.fleet["preemptions"][0] == rows["preemptions"].sum()
    assert rows["preemptions"][0] == 0  # nothing outranks job 0
    return res


def times(res: ace.SimulationResult, job: int, kind: int) -> list[float]:
    ev = res.events
    return [float(t) for t in ev["time"][(ev["job"] == job) & (ev["kind"] == kind)]]


def churn(lost: float, gpus: int = GPUS) -> float:
    """GPU-hours a victim costs: its lost compute plus its next restart."""
    return gpus * (lost + RESTART) / HOUR


def approx(x: float) -> Any:
    return pytest.approx(x, rel=1e-12, abs=1e-9)


def assert_requeued_and_restarted(
    res: ace.SimulationResult, v: int, preempted_at: float, restarted_at: float
) -> None:
    """Victim v: one preemption at ``preempted_at``, back in the queue, and
    one restart at ``restarted_at`` (the wait in between is recovery wait)."""
    row = res.jobs[v]
    assert row["preemptions"] == 1
    assert row["restarts"] == 1
    assert row["failures"] == 0
    assert times(res, v, PREEMPTED) == [preempted_at]
    assert times(res, v, START) == [row["submit"], restarted_at]
    assert row["recovery_wait"] == approx(restarted_at - preempted_at)
    assert row["overhead"] == approx(2 * RESTART)


# --------------------------------------------------------------------------
# Victim choice (behaviour that was already right, pinned)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preemption, victim, lost, committed",
    [
        # IMMEDIATE: jobs 1 and 3 share the lowest priority 0; job 3 started
        # later (600 s vs 0 s). Job 2 started last of all but has priority 1.
        # Job 3 computes from 960 s with a 3 h interval (first boundary 11,760 s):
        # at 9,000 s it loses 9,000 - 960 = 8,040 s and has nothing committed.
        pytest.param(IMMEDIATE, 3, 9000.0 - 960.0, 0.0, id="immediate"),
        # CHECKPOINT_AWARE: least lost work whatever the priority. Lost at
        # 9,000 s: job 1 (from 360 s, 2 h interval, checkpoint at 7,560 s)
        # 1,440 s; job 2 (from 1,260 s, 1 h interval, checkpoints at 4,860 and
        # 8,460 s) 540 s; job 3 8,040 s. Job 2 goes, with 7,200 s committed.
        pytest.param(CHECKPOINT_AWARE, 2, 9000.0 - 8460.0, 7200.0, id="checkpoint-aware"),
    ],
)
def test_victim_choice(
    preemption: ace.Preemption, victim: int, lost: float, committed: float
) -> None:
    """Five nodes, all busy: job 0 on two, job 1 (from t = 0), job 3 (from
    600 s) and job 2 (from 900 s) on one each. One of job 0's nodes fails at
    9,000 s and is repaired in an hour; job 0 needs one node and takes it from
    one victim, which waits in the queue for the repaired node."""
    jobs = [
        high(4 * HOUR, priority=5),
        low(6 * HOUR, 2 * HOUR),
        low(6 * HOUR, HOUR, submit=900.0, priority=1),
        low(6 * HOUR, 3 * HOUR, submit=600.0),
    ]
    held = placement(jobs, 5, 9000.0)
    assert [len(h) for h in held] == [2, 1, 1, 1]  # no node free
    res = run(jobs, trace_fleet(5, {held[0][0]: [9000.0]}, repair=HOUR), preemption)
    rows = res.jobs
    assert res.fleet["preemptions"][0] == 1
    # Job 0 restarts at once on the victim's node: committed 7,200 s, lost
    # 1,800 s, 7,200 s of work left, done at 9,000 + 7,200 = 16,200 s.
    assert times(res, 0, START) == [0.0, 9000.0]
    assert rows[0]["recovery_wait"] == 0.0
    assert rows[0]["wasted"] == approx(1800.0)
    assert rows[0]["end"] == approx(16200.0)
    assert rows[0]["churn_gpu_hours"] == approx(churn(lost))  # 18.67 or 2.0 GPU-h
    # The victim restarts on the failed node when it is back (12,600 s) and computes
    # its remaining work from 12,600 + 360 = 12,960 s.
    assert_requeued_and_restarted(res, victim, 9000.0, 12600.0)
    v = rows[victim]
    assert v["wasted"] == approx(lost)
    assert v["productive"] == approx(6 * HOUR)
    assert v["end"] == approx(12960.0 + 6 * HOUR - committed)
    # The others run undisturbed: end = submit + 360 s + 6 h of compute.
    for j, submit in ((1, 0.0), (2, 900.0), (3, 600.0)):
        if j != victim:
            assert rows[j]["preemptions"] == 0
            assert rows[j]["wasted"] == 0.0
            assert rows[j]["end"] == approx(submit + RESTART + 6 * HOUR)


def test_churn_reaches_a_preemptor_that_has_finished() -> None:
    """The victim's restart ends after its preemptor finished: the restart
    overhead is still the preemptor's churn, in its row (the engine gives up
    a job's state when it ends, and the row is the output's by then).

    The schedule of test_victim_choice (IMMEDIATE, victim job 3), with job 0
    short: 9,900 s of work. At 9,000 s it has 7,200 s committed and loses
    1,800 s; it restarts at once on job 3's node and is done at 9,000 +
    2,700 = 11,700 s. Job 3 then restarts on one of job 0's nodes at 11,700 s;
    its restart ends at 12,060 s, after job 0 ended. Churn: 8 GPUs x (8,040 s
    lost + 360 s restart) = 18.67 GPU-h."""
    jobs = [
        high(9900.0, priority=5),
        low(6 * HOUR, 2 * HOUR),
        low(6 * HOUR, HOUR, submit=900.0, priority=1),
        low(6 * HOUR, 3 * HOUR, submit=600.0),
    ]
    held = placement(jobs, 5, 9000.0)
    assert [len(h) for h in held] == [2, 1, 1, 1]
    res = run(jobs, trace_fleet(5, {held[0][0]: [9000.0]}, repair=HOUR), IMMEDIATE)
    rows = res.jobs
    assert rows[0]["end"] == approx(11700.0)
    assert rows[0]["wasted"] == approx(1800.0)
    assert_requeued_and_restarted(res, 3, 9000.0, 11700.0)
    assert rows[0]["churn_gpu_hours"] == approx(churn(9000.0 - 960.0))
    assert rows[0]["churn_gpu_hours"] == approx(8 * 8400.0 / HOUR)


# --------------------------------------------------------------------------
# Item 1: nodes already free count against the victims needed
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preemption, victim, other, lost, victim_end, other_end",
    [
        # IMMEDIATE: both victims have priority 0, job 2 started later (1,800 s).
        # It computes from 2,160 s (2 h interval, boundary 9,360 s): loses
        # 6,840 s with nothing committed; restarted at 12,600 s it computes 4 h
        # from 12,960 s to 27,360 s. Job 1 keeps running: 360 s + 6 h = 21,960 s.
        pytest.param(IMMEDIATE, 2, 1, 6840.0, 27360.0, 21960.0, id="immediate"),
        # CHECKPOINT_AWARE: job 1 (checkpoint at 7,560 s) loses 1,440 s, job 2
        # 6,840 s: job 1 goes. Restarted at 12,600 s it computes the 4 h left
        # (6 h - 2 h committed) from 12,960 s to 27,360 s. Job 2 keeps running:
        # 1,800 + 360 s + 4 h = 16,560 s.
        pytest.param(CHECKPOINT_AWARE, 1, 2, 1440.0, 27360.0, 16560.0, id="checkpoint-aware"),
    ],
)
def test_preempt_lower_counts_free_nodes(
    preemption: ace.Preemption,
    victim: int,
    other: int,
    lost: float,
    victim_end: float,
    other_end: float,
) -> None:
    """Five nodes: job 0 on two, job 1 (from t = 0) and job 2 (from 1,800 s)
    on one each, one node free. Both of job 0's nodes fail at 9,000 s (repair
    1 h). Job 0 needs two nodes, one is free: one victim is enough, and job 0
    restarts at once on the free node plus the victim's node."""
    jobs = [high(4 * HOUR), low(6 * HOUR, 2 * HOUR), low(4 * HOUR, 2 * HOUR, submit=1800.0)]
    held = placement(jobs, 5, 9000.0)
    assert [len(h) for h in held] == [2, 1, 1]  # one node free
    res = run(jobs, trace_fleet(5, {n: [9000.0] for n in held[0]}, repair=HOUR), preemption)
    rows = res.jobs
    # Before the fix: 2 preemptions (both low jobs).
    assert res.fleet["preemptions"][0] == 1
    assert rows[other]["preemptions"] == 0
    # Job 0: back at once, committed 7,200 s, done at 9,000 + 7,200 = 16,200 s.
    assert times(res, 0, START) == [0.0, 9000.0]
    assert rows[0]["recovery_wait"] == 0.0
    assert rows[0]["end"] == approx(16200.0)
    # IMMEDIATE: 8 x (6,840 + 360) / 3,600 = 16.0 GPU-h; CHECKPOINT_AWARE:
    # 8 x (1,440 + 360) / 3,600 = 4.0 GPU-h. Before the fix both give 20.0: the second
    # victim's loss and restart (8 x (1,440 + 360) or 8 x (6,840 + 360)) on top.
    assert rows[0]["churn_gpu_hours"] == approx(churn(lost))
    # The victim waits in the queue for a repaired node (12,600 s).
    assert_requeued_and_restarted(res, victim, 9000.0, 12600.0)
    assert rows[victim]["wasted"] == approx(lost)
    assert rows[victim]["end"] == approx(victim_end)
    assert rows[other]["wasted"] == 0.0
    assert rows[other]["end"] == approx(other_end)  # before the fix it is preempted too


def test_preempt_lower_counts_hot_spares() -> None:
    """Five nodes, one of them a hot spare: job 0 on two, job 1 (from t = 0)
    and job 2 (from 1,800 s) on one each, no other node free. Both of job 0's
    nodes fail at 9,000 s (repair 1 h). A recovering job may take the spare,
    so one victim is enough: job 2 (IMMEDIATE, priority 0, started last)."""
    jobs = [high(4 * HOUR), low(6 * HOUR, 2 * HOUR), low(4 * HOUR, 2 * HOUR, submit=1800.0)]
    held = placement(jobs, 5, 9000.0, spares=1)
    assert [len(h) for h in held] == [2, 1, 1]  # the fifth node is the spare
    failures = {n: [9000.0] for n in held[0]}
    res = run(jobs, trace_fleet(5, failures, repair=HOUR, spares=1), IMMEDIATE)
    rows = res.jobs
    assert res.fleet["preemptions"][0] == 1  # before the fix 2
    assert res.fleet["spare_uses"][0] == 1
    # Job 0 restarts at once on the spare and job 2's node.
    assert times(res, 0, START) == [0.0, 9000.0]
    assert rows[0]["recovery_wait"] == 0.0
    assert rows[0]["end"] == approx(16200.0)
    # 8 x (6,840 + 360) / 3,600 = 16.0 GPU-h (before the fix 20.0: job 1's 1,440 s lost
    # and its restart, 4.0 GPU-h, on top).
    assert rows[0]["churn_gpu_hours"] == approx(16.0)
    # Job 2 waits for a repaired node (12,600 s), then computes 4 h.
    assert_requeued_and_restarted(res, 2, 9000.0, 12600.0)
    assert rows[2]["wasted"] == approx(6840.0)
    assert rows[2]["end"] == approx(27360.0)
    # Job 1 runs undisturbed: 360 s + 6 h (before the fix it is preempted and then
    # waits for a repair, its node having refilled the spare pool).
    assert rows[1]["preemptions"] == 0
    assert rows[1]["end"] == approx(21960.0)


# --------------------------------------------------------------------------
# Item 3: the grace covers the whole checkpoint write
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "save, fail_at, wait, lost",
    [
        # Computing, boundary 5 min away (7,560 s), then a 1 h write: it would
        # end 65 min after the failure, past the 10 min grace, so the victim
        # goes at once and loses 7,260 - 360 = 6,900 s.
        # Before the fix: deferred, job 0 waits 65 min (3,900 s) and the victim loses 0.
        pytest.param(60 * MINUTE, 7260.0, 0.0, 6900.0, id="computing-long-write"),
        # Computing, boundary 5 min away, a 4 min write: it ends 9 min after
        # the failure (within the grace), so the victim is deferred and goes at
        # the end of its write (7,800 s) losing nothing.
        pytest.param(4 * MINUTE, 7260.0, 9 * MINUTE, 0.0, id="computing-write-fits"),
        # Computing, boundary 8 min away, a 4 min write: it would end 12 min
        # after the failure, so the victim goes at once: 7,080 - 360 = 6,720 s.
        # Before the fix: deferred (8 min <= 10 min), job 0 waits 12 min (720 s), loss 0.
        pytest.param(4 * MINUTE, 7080.0, 0.0, 6720.0, id="computing-write-overruns"),
        # Writing (7,560 s to 11,160 s), 5 min of the write left: deferred,
        # job 0 waits 5 min; nothing is lost.
        pytest.param(60 * MINUTE, 10860.0, 5 * MINUTE, 0.0, id="writing-rest-fits"),
        # Writing, 30 min of the write left: preempted at once; it loses the
        # segment's 7,200 s of compute and the 1,800 s written so far.
        pytest.param(60 * MINUTE, 9360.0, 0.0, 7200.0 + 1800.0, id="writing-rest-overruns"),
    ],
)
def test_checkpoint_aware_grace_covers_the_write(
    save: float, fail_at: float, wait: float, lost: float
) -> None:
    """Three nodes: job 0 on two, job 1 on the third (computes from 360 s,
    2 h interval: first boundary at 7,560 s, then its write). One of job 0's
    nodes fails at ``fail_at`` (repair 2 h). CHECKPOINT_AWARE with a 10-minute
    grace: job 1 is deferred only if its write would end within the grace."""
    jobs = [high(4 * HOUR), low(4 * HOUR, 2 * HOUR, save=save)]
    held = placement(jobs, 3, fail_at)
    assert [len(h) for h in held] == [2, 1]
    res = run(
        jobs, trace_fleet(3, {held[0][0]: [fail_at]}, repair=2 * HOUR), CHECKPOINT_AWARE, GRACE
    )
    rows = res.jobs
    released = fail_at + wait
    # Job 0 restarts when the victim is released; until then it waits holding
    # its other node. Its checkpoints fall on whole hours, so it loses fail_at mod 1 h.
    assert rows[0]["recovery_wait"] == approx(wait)
    assert times(res, 0, START) == [0.0, released]
    assert rows[0]["wasted"] == approx(fail_at - HOUR * math.floor(fail_at / HOUR))
    assert rows[0]["end"] == approx(released + 4 * HOUR - math.floor(fail_at / HOUR) * HOUR)
    # One victim, preempted at release; its lost compute plus its 6 min
    # restart are job 0's churn (e.g. 8 x (6,900 + 360) / 3,600 = 16.13 GPU-h
    # for the 1 h write, before the fix 0.8 GPU-h: the restart only).
    assert res.fleet["preemptions"][0] == 1
    assert times(res, 1, PREEMPTED) == [released]
    assert rows[1]["wasted"] == approx(lost)
    assert rows[0]["churn_gpu_hours"] == approx(churn(lost))
    if lost == 0.0:
        # Deferred: released when its checkpoint (the 2 h segment) is written.
        assert times(res, 1, CHECKPOINT_END)[0] == released
        pre = res.events[(res.events["job"] == 1) & (res.events["kind"] == PREEMPTED)]
        assert pre["progress"][0] == 2 * HOUR
    # The victim is requeued and restarts later.
    starts = times(res, 1, START)
    assert len(starts) == 2 and starts[1] > released
    assert rows[1]["restarts"] == 1


# --------------------------------------------------------------------------
# Item 12: a cancelled deferred preemption is retried at once
# --------------------------------------------------------------------------


def test_cancelled_deferred_preemption_is_retried_at_once() -> None:
    """Four nodes: job 0 on two, job 1 and job 2 on one each (both priority
    0, from t = 0). CHECKPOINT_AWARE, grace 10 min, repairs 2 h. One of job
    0's nodes fails at 7,260 s: job 1 (boundary at 7,560 s, 4 min write: done
    9 min later) is deferred; job 2 (boundary at 11,160 s) is not. Job 1's
    node fails at 7,400 s, before its checkpoint: the deferral is cancelled
    and job 0 must look again at once, preempting job 2 at 7,400 s."""
    jobs = [
        high(3 * HOUR),
        low(4 * HOUR, 2 * HOUR, save=4 * MINUTE),
        low(4 * HOUR, 3 * HOUR),
    ]
    held = placement(jobs, 4, 7260.0)
    assert [len(h) for h in held] == [2, 1, 1]
    failures = {held[0][0]: [7260.0], held[1][0]: [7400.0]}
    res = run(jobs, trace_fleet(4, failures, repair=2 * HOUR), CHECKPOINT_AWARE, GRACE)
    rows = res.jobs
    # Job 0 waits 7,400 - 7,260 = 140 s (before the fix 7,200 s: until its failed node
    # is repaired at 14,460 s), then computes the 3,600 s left after its 7,200 s
    # checkpoint: done at 11,000 s (before the fix 18,060 s).
    assert rows[0]["recovery_wait"] == approx(140.0)
    assert times(res, 0, START) == [0.0, 7400.0]
    assert rows[0]["wasted"] == approx(60.0)
    assert rows[0]["end"] == approx(11000.0)
    # Job 1 failed, never preempted.
    assert rows[1]["preemptions"] == 0
    assert rows[1]["failures"] == 1
    assert rows[1]["wasted"] == approx(7400.0 - 360.0)
    # Job 2 is the victim: loses 7,400 - 360 = 7,040 s; it restarts when job 0
    # finishes (11,000 s). Churn 8 x (7,040 + 360) / 3,600 = 16.44 GPU-h
    # (before the fix 0: job 2 is never preempted).
    assert res.fleet["preemptions"][0] == 1
    assert rows[0]["churn_gpu_hours"] == approx(churn(7040.0))
    assert_requeued_and_restarted(res, 2, 7400.0, 11000.0)
    assert rows[2]["wasted"] == approx(7040.0)
    # Job 1 (recovering, waiting for a node) restarts then too, on the other
    # node job 0 frees.
    assert times(res, 1, START) == [0.0, 11000.0]


def test_deferred_victim_finishing_releases_its_node() -> None:
    """Three nodes: job 0 on two, job 1 on the third with 2 h of work (its
    final checkpoint: boundary 7,560 s, 4 min write, done at 7,800 s). One of
    job 0's nodes fails at 7,260 s; job 1 is deferred (its write ends 9 min later,
    within the 10 min grace) and finishes instead of being preempted: job 0
    takes its node at 7,800 s, nobody is preempted, no churn."""
    jobs = [high(4 * HOUR), low(2 * HOUR, 2 * HOUR, save=4 * MINUTE)]
    held = placement(jobs, 3, 7260.0)
    assert [len(h) for h in held] == [2, 1]
    res = run(
        jobs, trace_fleet(3, {held[0][0]: [7260.0]}, repair=2 * HOUR), CHECKPOINT_AWARE, GRACE
    )
    rows = res.jobs
    assert res.fleet["preemptions"][0] == 0
    assert rows[1]["end"] == approx(7800.0)
    assert rows[1]["wasted"] == 0.0
    # Job 0 waits 7,800 - 7,260 = 540 s, then computes the 2 h left after its
    # checkpoint at 7,200 s (it loses 60 s): done at 7,800 + 7,200 = 15,000 s.
    assert rows[0]["recovery_wait"] == approx(540.0)
    assert times(res, 0, START) == [0.0, 7800.0]
    assert rows[0]["wasted"] == approx(60.0)
    assert rows[0]["end"] == approx(7800.0 + 2 * HOUR)
    assert rows[0]["churn_gpu_hours"] == 0.0
