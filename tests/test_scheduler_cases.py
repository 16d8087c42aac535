"""The built-in scheduler against figures worked out by hand (issue 7, section
2 items 10 and 11, section 3 "Job time limits"): EASY backfill, the greedy
option, job time limits and lent hot spares; then an independent plain-Python
model of both backfills compared job by job on random workloads.

Semantics asserted (``ace.Policy`` and ``ace.Job`` docstrings):

- EASY (the default): the first queued job that does not fit (the head)
  gets a reservation: the shadow time S, when enough nodes will be free for
  it by the estimated ends of the running jobs, and the extra nodes free at
  S beyond its need. A later job starts only if it fits now and its own
  estimated end is <= S, or it takes only extra nodes (which it uses up).
  A job smaller than a node is judged on the node it would take.
- Greedy: any queued job that fits starts; a queued job that does not fit
  holds back every job of lower priority (not of its own).
- Under both, a recovering job that does not fit holds back every queued
  job of lower priority.
- The estimate of a run is its start plus the job's time limit when it has
  one, else plus mean init + load + the work left since the last checkpoint
  + a mean save per checkpoint still ahead. With constant laws and no
  failures it is exact.
- A time limit stops a run that long after its start (init + load
  included); the job is queued again and restarts from its last checkpoint.
  The compute since it is ``wasted``, the wait ``recovery_wait``, each stop
  is counted in ``timeouts``.
- ``Fleet(lend_spares=True)``: a start from the queue may take hot spares
  when the free nodes alone do not suffice; the spare pool refills first as
  nodes come free.

Hand cases use constant laws (init, save and load zero unless given), no
failures unless placed by hand, and times that never tie unless a tie is the
point. Every run checks the engine's invariants and the accounting identity
of every row.
"""

from __future__ import annotations

import copy
import heapq
import math
import pickle
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import DAY, HOUR, MINUTE, ZERO, run


def job(nodes: float, work: float, interval: float | None = None, **kwargs: Any) -> ace.Job:
    """A job of ``nodes`` nodes (8 GPUs each; a fraction for a job smaller than
    a node) with zero init, save and load unless given; one checkpoint at
    the end unless ``interval`` is given."""
    kwargs.setdefault("init", ZERO)
    kwargs.setdefault("save", ZERO)
    kwargs.setdefault("load", ZERO)
    return ace.Job(int(8 * nodes), work, interval or work, **kwargs)


def fleet(nodes: int, **kwargs: Any) -> ace.Fleet:
    """A fleet whose nodes never fail (a node-level model with no failures,
    so no job-level failures either)."""
    return ace.Fleet(nodes, node_failures=ace.NodeTrace.from_gaps({}, nodes=nodes), **kwargs)


def assert_same_rows(a: np.ndarray, b: np.ndarray) -> None:
    """Field by field (NaN equal to NaN)."""
    assert a.dtype.names == b.dtype.names and a.shape == b.shape
    for name in a.dtype.names or ():
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def starts(res: ace.SimulationResult) -> list[float]:
    """Each job's first start: submit + queue_wait."""
    return [float(s + w) for s, w in zip(res.jobs["submit"], res.jobs["queue_wait"], strict=True)]


#: Event codes of the event log.
START_BEGIN = 1
TIME_LIMIT = 13

EASY = ace.Policy(backfill="easy")
GREEDY = ace.Policy(backfill="greedy")


# --------------------------------------------------------------------------
# EASY backfill and the greedy option
# --------------------------------------------------------------------------


def test_jobs_listed_out_of_submission_order_start_in_submission_order() -> None:
    """One node. Jobs listed as C (submitted at 2 h), A (at 0), D (at 2 h)
    and B (at 1 h), of 3 h, 1 h, 1 h and 2 h of work: the queue serves them
    by submission time, ties by list position. A runs 0-1 h; B, waiting
    since 1 h, runs 1-3 h; C (listed before D, both at 2 h) runs 3-6 h; D
    runs 6-7 h. The same rows, reordered, come from the list sorted by
    submission, whose arrivals are the identity."""
    listed = [
        job(1, 3 * HOUR, submit=2 * HOUR), job(1, HOUR), job(1, HOUR, submit=2 * HOUR),
        job(1, 2 * HOUR, submit=HOUR),
    ]  # fmt: skip
    res = run(listed, fleet=fleet(1))
    assert res.jobs["end"].tolist() == [6 * HOUR, HOUR, 7 * HOUR, 3 * HOUR]
    assert res.jobs["queue_wait"].tolist() == [HOUR, 0.0, 4 * HOUR, 0.0]
    order = [1, 3, 0, 2]
    ordered = run([listed[k] for k in order], fleet=fleet(1))
    for name in ("end", "queue_wait", "wall", "submit"):
        assert ordered.jobs[name].tolist() == res.jobs[name][order].tolist(), name


def starvation_workload() -> list[ace.Job]:
    """Two nodes. A (1 node, 10 h) starts at 0. W (2 nodes, 5 h) comes at 1 h
    and does not fit. Forty 1-node jobs of 2 h come at 1 h + 1 s, + 2 s, ..."""
    jobs = [job(1, 10 * HOUR), job(2, 5 * HOUR, submit=HOUR)]
    jobs += [job(1, 2 * HOUR, submit=HOUR + i) for i in range(1, 41)]
    return jobs


def test_greedy_starves_the_wide_job() -> None:
    """Greedy: every small job that fits starts, so W waits until both nodes
    are free at once. The free node runs smalls from 1 h + 1 s: 5 of them by
    10 h (starts 1 h+1s, 3 h+1s, ..., 9 h+1s). From 10 h, when A ends, both
    nodes take the other 35 in turn: the k-th starts at 10 h + k h (+ 1 s on
    the second node), k = 0..34; the last starts at 44 h on the first node
    and ends at 46 h, the second node's last ends at 45 h + 1 s. W starts at
    46 h: a wait of 45 h (issue 7, item 10: 42.7 h in its own scenario)."""
    res = run(starvation_workload(), fleet=fleet(2), policy=GREEDY)
    w = res.jobs[1]
    assert w["queue_wait"] == pytest.approx(45 * HOUR, rel=1e-12)
    assert w["end"] == pytest.approx(51 * HOUR, rel=1e-12)
    assert res.fleet["makespan"][0] == pytest.approx(51 * HOUR, rel=1e-12)


def test_easy_reserves_for_the_wide_job() -> None:
    """EASY: at 1 h W is the head; its shadow time is A's end, 10 h (then
    both nodes are free), with no extra node. A small job starts on the free
    node only if it ends by 10 h: those starting at 1 h+1s, 3 h+1s, 5 h+1s
    and 7 h+1s do; at 9 h+1s the next would end at 11 h+1s and waits. At
    10 h W starts (a wait of 9 h) and ends at 15 h; the other 36 smalls run
    two at a time from 15 h, the last ending at 15 h + 18 x 2 h = 51 h."""
    res = run(starvation_workload(), fleet=fleet(2), policy=EASY)
    w = res.jobs[1]
    assert w["queue_wait"] == pytest.approx(9 * HOUR, rel=1e-12)
    assert w["end"] == pytest.approx(15 * HOUR, rel=1e-12)
    s = starts(res)
    for i, expected in enumerate([1, 3, 5, 7]):
        assert s[2 + i] == pytest.approx(expected * HOUR + 1, rel=1e-12)
    # The fifth small (submitted at 1 h + 5 s) would have delayed W: it
    # starts when W is done.
    assert s[6] == pytest.approx(15 * HOUR, rel=1e-12)
    assert res.fleet["makespan"][0] == pytest.approx(51 * HOUR, rel=1e-12)
    # EASY is the default.
    default = run(starvation_workload(), fleet=fleet(2))
    assert_same_rows(default.jobs, res.jobs)


def test_backfill_that_ends_by_the_shadow_time_starts() -> None:
    """Four nodes. A (2 nodes, 10 h) at 0; W (4 nodes, 1 h) at 1 h: the head,
    shadow time 10 h, no extra node. B (1 node, 8 h) at 2 h ends exactly at
    10 h: it may start (ends <= S). C (1 node, 8 h + 1 s) at 2 h + 1 s would
    end 2 s after S: it waits though a node is free. At 10 h A and B end and
    W starts; C starts when W ends at 11 h."""
    jobs = [
        job(2, 10 * HOUR),
        job(4, HOUR, submit=HOUR),
        job(1, 8 * HOUR, submit=2 * HOUR),
        job(1, 8 * HOUR + 1, submit=2 * HOUR + 1),
    ]
    res = run(jobs, fleet=fleet(4), policy=EASY)
    assert starts(res) == pytest.approx([0.0, 10 * HOUR, 2 * HOUR, 11 * HOUR], rel=1e-12)
    # Greedy starts C at once and W waits for it: 10 h + 2 s.
    greedy = run(jobs, fleet=fleet(4), policy=GREEDY)
    assert starts(greedy) == pytest.approx([0.0, 10 * HOUR + 2, 2 * HOUR, 2 * HOUR + 1], rel=1e-12)


def test_backfill_on_extra_nodes() -> None:
    """Five nodes. A (2 nodes, 10 h) at 0; W (4 nodes, 1 h) at 1 h: 3 nodes
    free now, 5 at 10 h: shadow time 10 h, one extra node. C (1 node, 20 h)
    at 2 h ends after S but takes the extra node: it starts. D (1 node,
    20 h) at 3 h would take a node W needs: it waits. At 10 h W starts on
    the 4 free nodes; D starts when W ends at 11 h."""
    jobs = [
        job(2, 10 * HOUR),
        job(4, HOUR, submit=HOUR),
        job(1, 20 * HOUR, submit=2 * HOUR),
        job(1, 20 * HOUR, submit=3 * HOUR),
    ]
    res = run(jobs, fleet=fleet(5), policy=EASY)
    assert starts(res) == pytest.approx([0.0, 10 * HOUR, 2 * HOUR, 11 * HOUR], rel=1e-12)


def test_smaller_jobs_are_judged_on_their_node() -> None:
    """Three nodes. A (2 nodes, 5 h) at 0 takes two nodes; P (4 GPUs, 20 h)
    at 1 s half fills the third. W (3 nodes) at 1 h is the head: it needs
    all three nodes whole, the third only when P ends: shadow time 20 h +
    1 s. C (4 GPUs, 10 h) at 2 h fits beside P and ends before: it starts.
    W starts when P ends."""
    jobs = [
        job(2, 5 * HOUR),
        job(0.5, 20 * HOUR, submit=1.0),
        job(3, HOUR, submit=HOUR),
        job(0.5, 10 * HOUR, submit=2 * HOUR),
    ]
    res = run(jobs, fleet=fleet(3), policy=EASY)
    assert starts(res) == pytest.approx([0.0, 1.0, 20 * HOUR + 1, 2 * HOUR], rel=1e-12)


def test_smaller_job_on_a_node_the_head_does_not_need() -> None:
    """Three nodes. A (2 nodes, 5 h) at 0; P (4 GPUs, 20 h) at 1 s on the
    third node. W (2 nodes) at 1 h is the head: A's two nodes free at 5 h:
    shadow time 5 h, no extra node (P's node is not whole before 20 h). C
    (4 GPUs, 10 h) at 2 h ends after S, but on P's node, which W does not
    count on: it starts."""
    jobs = [
        job(2, 5 * HOUR),
        job(0.5, 20 * HOUR, submit=1.0),
        job(2, HOUR, submit=HOUR),
        job(0.5, 10 * HOUR, submit=2 * HOUR),
    ]
    res = run(jobs, fleet=fleet(3), policy=EASY)
    assert starts(res) == pytest.approx([0.0, 1.0, 5 * HOUR, 2 * HOUR], rel=1e-12)


def test_smaller_job_on_a_node_the_head_needs() -> None:
    """As above but Q (4 GPUs) on the third node ends at 4 h + 1 s, and W
    needs 3 nodes: at 5 h all three are whole: shadow time 5 h, no extra
    node. C (4 GPUs, 10 h) at 2 h would take Q's node, which W counts on at
    5 h: it waits. D (4 GPUs, 2 h - 10 s) at 2 h + 1 s ends before S: it
    starts on that node. W starts at 5 h and ends at 6 h; then C starts."""
    jobs = [
        job(2, 5 * HOUR),
        job(0.5, 4 * HOUR, submit=1.0),
        job(3, HOUR, submit=HOUR),
        job(0.5, 10 * HOUR, submit=2 * HOUR),
        job(0.5, 2 * HOUR - 10, submit=2 * HOUR + 1),
    ]
    res = run(jobs, fleet=fleet(3), policy=EASY)
    assert starts(res) == pytest.approx([0.0, 1.0, 5 * HOUR, 6 * HOUR, 2 * HOUR + 1], rel=1e-12)


def test_a_placement_callback_is_offered_only_nodes_that_keep_the_reservation() -> None:
    """Four nodes. A (2 nodes, 5 h) at 0; P (6 GPUs, 20 h) at 1 s on node 1;
    Q (4 GPUs, until 4 h + 2 s) at 2 s on node 0. W (3 nodes) at 1 h: A's
    nodes and node 0 are whole at 5 h: shadow time 5 h, no extra node; node
    1 is not counted (P holds it until 20 h). C (2 GPUs, 10 h) at 2 h may
    start on node 1 (the built-in best fit), not on node 0 (W needs it).
    A callback that takes the lowest node id for C (and leaves the other
    jobs to the built-in choice) is offered node 1 only; W starts at 5 h.
    With ``None`` for every job the rows are the built-in ones."""
    jobs = [
        job(2, 5 * HOUR),
        job(0.75, 20 * HOUR, submit=1.0),
        job(0.5, 4 * HOUR, submit=2.0),
        job(3, HOUR, submit=HOUR),
        job(0.25, 10 * HOUR, submit=2 * HOUR),
    ]
    offered: dict[int, list[int]] = {}

    def lowest(view: Any, free: np.ndarray) -> list[int] | None:
        if view.job != 4:
            return None
        offered[view.job] = [int(n) for n in free]
        return [int(n) for n in free[: view.nodes_needed]]

    res = run(jobs, fleet=fleet(4), policy=ace.Policy(place=lowest))
    assert offered[4] == [1]
    assert starts(res) == pytest.approx([0.0, 1.0, 2.0, 5 * HOUR, 2 * HOUR], rel=1e-12)
    builtin = run(jobs, fleet=fleet(4))
    none = run(jobs, fleet=fleet(4), policy=ace.Policy(place=lambda view, free: None))
    assert starts(builtin) == starts(res)
    assert_same_rows(builtin.jobs, none.jobs)
    # Greedy offers both free nodes; the callback's choice (node 0) then
    # delays W until C ends.
    offered.clear()
    greedy = run(jobs, fleet=fleet(4), policy=ace.Policy(place=lowest, backfill="greedy"))
    assert offered[4] == [0, 1]
    assert starts(greedy)[3] == pytest.approx(12 * HOUR, rel=1e-12)


def test_greedy_holds_back_lower_priority_easy_backfills_it() -> None:
    """Two nodes. A (1 node, 10 h) at 0; W (2 nodes, priority 1) at 1 h does
    not fit; L (1 node, 2 h, priority 0) at 2 h. Greedy holds L back behind
    the blocked W: W starts at 10 h, L at 15 h. EASY starts L at once: it
    ends at 4 h, before W's shadow time (10 h)."""
    jobs = [
        job(1, 10 * HOUR),
        job(2, 5 * HOUR, submit=HOUR, priority=1),
        job(1, 2 * HOUR, submit=2 * HOUR),
    ]
    greedy = run(jobs, fleet=fleet(2), policy=GREEDY)
    assert starts(greedy) == pytest.approx([0.0, 10 * HOUR, 15 * HOUR], rel=1e-12)
    easy = run(jobs, fleet=fleet(2), policy=EASY)
    assert starts(easy) == pytest.approx([0.0, 10 * HOUR, 2 * HOUR], rel=1e-12)


@pytest.mark.parametrize("backfill", ["easy", "greedy"])
def test_a_recovering_job_holds_back_lower_priority(backfill: str) -> None:
    """Three nodes. R (2 nodes, priority 1, 20 h) on two of them; X (4 GPUs,
    20 h) half fills the third. R's first node fails at 1 h (seen at once,
    repair 5 h): R waits for a whole node. L (4 GPUs, priority 0) at 2 h
    would fit beside X but is held back by the blocked R, under both
    backfills, until R restarts when its node returns at 6 h."""
    jobs = [
        job(2, 20 * HOUR, priority=1),
        job(0.5, 20 * HOUR, submit=1.0),
        job(0.5, HOUR, submit=2 * HOUR),
    ]
    # R takes the last two nodes of the free pool (2 and 1); X takes node 0.
    nodes = ace.Fleet(
        3,
        repair=ace.Constant(5 * HOUR),
        node_failures=ace.NodeTrace.from_gaps({2: [HOUR]}, nodes=3),
    )
    res = run(jobs, fleet=nodes, policy=ace.Policy(backfill=backfill))
    assert res.jobs["failures"][0] == 1
    assert res.jobs["recovery_wait"][0] == pytest.approx(5 * HOUR, rel=1e-12)
    assert res.jobs["queue_wait"][2] == pytest.approx(4 * HOUR, rel=1e-12)


def test_a_requeued_job_is_backfilled_on_its_new_estimate() -> None:
    """Four nodes, REQUEUE. A (2 nodes, 10 h) takes nodes 3 and 2 at 0; C
    (1 node, 8 h, hourly checkpoints) node 1. W (3 nodes, 1 h, priority 1)
    comes at 1 h and waits: the head, shadow time 10 h (A's end). Node 1
    fails at 6.5 h for 100 h: C loses 0.5 h and is queued again, now with
    2 h of work left, an estimated end of 8.5 h <= 10 h. So it backfills on
    node 0 at once and ends at 8.5 h; its first stay in the queue (an
    estimate of 8 h, which would end past the shadow time) no longer
    counts. W starts at 10 h on the three nodes in service and ends at
    11 h."""
    trace = ace.NodeTrace.from_gaps({1: [6.5 * HOUR]}, nodes=4)
    jobs = [job(2, 10 * HOUR), job(1, 8 * HOUR, HOUR), job(3, HOUR, submit=HOUR, priority=1)]
    res = run(
        jobs,
        fleet=ace.Fleet(4, node_failures=trace, repair=100 * HOUR),
        policy=ace.Policy(replacement="REQUEUE"),
        record_events=True,
    )
    assert [(int(j), int(n), float(t)) for j, n, t in res.placements[["job", "node", "time"]]] == [
        (0, 3, 0.0), (0, 2, 0.0), (1, 1, 0.0), (1, 0, 6.5 * HOUR),
        (2, 3, 10 * HOUR), (2, 2, 10 * HOUR), (2, 0, 10 * HOUR),
    ]  # fmt: skip
    assert res.jobs["end"].tolist() == [10 * HOUR, 8.5 * HOUR, 11 * HOUR]
    assert res.jobs["wasted"].tolist() == [0.0, 0.5 * HOUR, 0.0]
    assert res.jobs["recovery_wait"].tolist() == [0.0, 0.0, 0.0]
    assert res.jobs["queue_wait"].tolist() == [0.0, 0.0, 9 * HOUR]
    assert (res.jobs["failures"].tolist(), res.jobs["restarts"].tolist()) == ([0, 1, 0], [0, 1, 0])


def test_the_reservation_counts_a_node_back_from_repair() -> None:
    """Two nodes; A (1 node, 20 h) runs on node 1 from 0; node 0, idle,
    fails at 30 min and is under repair for 10 h (back at 10.5 h). W (2
    nodes) at 1 h needs node 0 back and A done: shadow time 20 h (without
    the return it would have none, and B and C would both start). B (1
    node, 5 h) at 11 h fits on the returned node and ends at 16 h, before
    20 h: it starts. C (1 node, 10 h) at 16.5 h would end after 20 h: it
    waits for W."""
    jobs = [
        job(1, 20 * HOUR),
        job(2, HOUR, submit=HOUR),
        job(1, 5 * HOUR, submit=11 * HOUR),
        job(1, 10 * HOUR, submit=16.5 * HOUR),
    ]
    nodes = ace.Fleet(
        2,
        repair=ace.Constant(10 * HOUR),
        node_failures=ace.NodeTrace.from_gaps({0: [0.5 * HOUR]}, nodes=2),
    )
    res = run(jobs, fleet=nodes)
    assert starts(res) == pytest.approx([0.0, 20 * HOUR, 11 * HOUR, 21 * HOUR], rel=1e-12)


def test_the_reservation_counts_a_node_back_from_quarantine() -> None:
    """Two nodes, node 1 in quarantine for 100 days after two failures at 1 s
    and 2 s (a zero repair brings it back after the first; gaps count from
    its return). W (2 nodes) at 1 h needs node 1: its return is the only
    release that helps, at 100 days + 2 s: W's shadow time. B (1 node, 5 h)
    at 2 h ends well before and starts on node 0 at once."""
    jobs = [job(2, HOUR, submit=HOUR), job(1, 5 * HOUR, submit=2 * HOUR)]
    nodes = ace.Fleet(
        2,
        repair=ZERO,
        node_failures=ace.NodeTrace.from_gaps({1: [1.0, 1.0]}, nodes=2),
    )
    policy = ace.Policy(quarantine=ace.Quarantine(2, HOUR, 100 * DAY))
    res = run(jobs, fleet=nodes, policy=policy)
    assert starts(res)[1] == pytest.approx(2 * HOUR, rel=1e-12)
    assert starts(res)[0] == pytest.approx(100 * DAY + 2.0, rel=1e-12)


# --------------------------------------------------------------------------
# Time limits
# --------------------------------------------------------------------------


def limited_jobs() -> list[ace.Job]:
    """L: 1 node, 4 h of work, interval 2 h, init 6 min + load 9 min (a
    start of 15 min = 0.25 h), save 3 min (0.05 h), time limit 3 h. Q: 1
    node, 1 h, priority 1, submitted at 1 h."""
    return [
        job(
            1,
            4 * HOUR,
            2 * HOUR,
            init=ace.Constant(6 * MINUTE),
            load=ace.Constant(9 * MINUTE),
            save=ace.Constant(3 * MINUTE),
            time_limit=3 * HOUR,
        ),
        job(1, HOUR, submit=HOUR, priority=1),
    ]


def test_time_limit_requeues_from_the_last_checkpoint() -> None:
    """One node. Run 1 of L: start 0 - 0.25 h, compute to 2.25 h, write to
    2.30 h (checkpoint at 2 h of work), compute again; the limit stops it at
    3 h: 0.70 h of compute rolled back. Q (priority 1, waiting since 1 h)
    takes the node at 3 h and ends at 4 h. Run 2 of L at 4 h: start to
    4.25 h, compute 2 h to 6.25 h, write to 6.30 h: done, before its limit
    at 7 h.

    L: productive 4 h, wasted 0.70 h, overhead 2 x 0.25 h, ckpt_stall 2 x
    0.05 h, recovery_wait 1 h (3 h - 4 h), wall 6.30 h; one timeout, one
    restart, no preemption. Q: queue_wait 2 h."""
    res = run(limited_jobs(), fleet=fleet(1), record_events=True)
    r = res.jobs[0]
    assert r["end"] == pytest.approx(6.30 * HOUR, rel=1e-12)
    assert r["productive"] == pytest.approx(4 * HOUR, rel=1e-12)
    assert r["wasted"] == pytest.approx(0.70 * HOUR, rel=1e-12)
    assert r["overhead"] == pytest.approx(0.50 * HOUR, rel=1e-12)
    assert r["ckpt_stall"] == pytest.approx(0.10 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(HOUR, rel=1e-12)
    assert r["queue_wait"] == 0.0
    assert (r["timeouts"], r["restarts"], r["preemptions"], r["checkpoints"]) == (1, 1, 0, 2)
    assert r["completed"]
    q = res.jobs[1]
    assert q["queue_wait"] == pytest.approx(2 * HOUR, rel=1e-12)
    assert res.fleet["timeouts"][0] == 1
    stops = res.events[res.events["kind"] == TIME_LIMIT]
    assert stops["job"].tolist() == [0]
    assert stops["time"].tolist() == pytest.approx([3 * HOUR], rel=1e-12)


def test_time_limit_without_a_fleet_restarts_at_once() -> None:
    """No fleet: replacements are always there, so L restarts at 3 h: run 2
    writes its first checkpoint at 3.25 + 2 + 0.05 = 5.30 h (4 h of work)
    and ends, before its limit at 6 h. No recovery wait."""
    res = run(limited_jobs()[0], failures=ace.Exponential(1e15))
    r = res.jobs[0]
    assert r["end"] == pytest.approx(5.30 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == 0.0
    assert r["wasted"] == pytest.approx(0.70 * HOUR, rel=1e-12)
    assert r["timeouts"] == 1


def test_time_limit_shorter_than_a_start() -> None:
    """A start of 2 h under a 1 h limit never ends: each run is cut off
    during its start (overhead) at 1, 2, 3 and 4 h; the horizon at 4.5 h
    finds the fifth start. Nothing is done or lost but time."""
    j = job(1, HOUR, init=ace.Constant(2 * HOUR), time_limit=HOUR)
    res = run(j, fleet=fleet(1), horizon=4.5 * HOUR)
    r = res.jobs[0]
    assert (r["timeouts"], r["restarts"], r["checkpoints"]) == (4, 4, 0)
    assert r["overhead"] == pytest.approx(4.5 * HOUR, rel=1e-12)
    assert r["productive"] == 0.0 and r["wasted"] == 0.0
    assert not r["completed"]


def test_time_limit_is_the_backfill_estimate() -> None:
    """As in test_backfill_that_ends_by_the_shadow_time_starts (shadow time
    10 h, no extra node), C has 20 h of work but a 7 h limit: it is
    estimated to end at 2 h + 7 h = 9 h and starts; its limit stops it at
    9 h, before W starts at 10 h (A ends). C starts again when W ends."""
    jobs = [
        job(2, 10 * HOUR),
        job(4, HOUR, submit=HOUR),
        job(1, 20 * HOUR, 2 * HOUR, submit=2 * HOUR, time_limit=7 * HOUR),
    ]
    res = run(jobs, fleet=fleet(4))
    assert starts(res) == pytest.approx([0.0, 10 * HOUR, 2 * HOUR], rel=1e-12)
    c = res.jobs[2]
    # Run 1: 6 h of work kept (checkpoints at 4, 6, 8 h), 1 h lost; it waits
    # 9 h - 11 h; then 14 h of work in runs of 7 h: 11 h - 18 h (6 h kept,
    # 1 h lost), 18 h - 25 h (6 h kept, 1 h lost), 25 h - 27 h.
    assert c["timeouts"] == 3
    assert c["wasted"] == pytest.approx(3 * HOUR, rel=1e-12)
    assert c["recovery_wait"] == pytest.approx(2 * HOUR, rel=1e-12)
    assert c["end"] == pytest.approx(27 * HOUR, rel=1e-12)


# --------------------------------------------------------------------------
# Lent hot spares
# --------------------------------------------------------------------------


def spare_jobs() -> list[ace.Job]:
    """Three nodes, one a hot spare. A (2 nodes, 5 h) at 0 takes the two
    free nodes. B (1 node, 2 h) at 1 h; C (2 nodes, 1 h) at 2 h."""
    return [job(2, 5 * HOUR), job(1, 2 * HOUR, submit=HOUR), job(2, HOUR, submit=2 * HOUR)]


def test_spares_are_not_lent_by_default() -> None:
    """B waits for A although the spare is idle. At 5 h A's nodes come free
    (the spare pool is full: both are free nodes); B, first in the queue,
    starts; C does not fit beside it and waits until B ends at 7 h. No spare
    use."""
    res = run(spare_jobs(), fleet=fleet(3, spares=1))
    assert starts(res) == pytest.approx([0.0, 5 * HOUR, 7 * HOUR], rel=1e-12)
    assert res.fleet["spare_uses"][0] == 0


def test_lent_spares_serve_the_queue() -> None:
    """With lend_spares B takes the idle spare at 1 h (no wait) and ends at
    3 h; its node refills the spare pool. C at 2 h: no free node, the spare
    is lent to B: it waits. At 3 h the spare is back: C needs 2 nodes, there
    is 1 (the spare): it waits for A. At 5 h A's nodes come free: C takes
    them (free nodes first) and ends at 6 h. One spare use."""
    res = run(spare_jobs(), fleet=fleet(3, spares=1, lend_spares=True))
    assert starts(res) == pytest.approx([0.0, HOUR, 5 * HOUR], rel=1e-12)
    assert res.jobs["queue_wait"][1] == 0.0
    assert res.fleet["spare_uses"][0] == 1


def test_lent_spares_complete_a_start() -> None:
    """Three nodes, one a spare, lent. A (1 node, 5 h) at 0; W (2 nodes) at
    1 h takes the free node and the spare at once (free nodes first, the
    spare for the rest). Without lending W waits for A: 4 h."""
    jobs = [job(1, 5 * HOUR), job(2, HOUR, submit=HOUR)]
    lent = run(jobs, fleet=fleet(3, spares=1, lend_spares=True))
    assert lent.jobs["queue_wait"][1] == 0.0
    assert lent.fleet["spare_uses"][0] == 1
    kept = run(jobs, fleet=fleet(3, spares=1))
    assert kept.jobs["queue_wait"][1] == pytest.approx(4 * HOUR, rel=1e-12)
    assert kept.fleet["spare_uses"][0] == 0


def test_a_lent_spare_refills_for_a_recovery() -> None:
    """Three nodes, one a spare, lent. A (1 node, 2 h) at 0 on a free node;
    B (2 nodes, 10 h) at 1 s takes the other free node and the spare. A ends
    at 2 h: its node refills the spare pool. B's first node fails at 3 h:
    SPARES moves B to the refilled spare at once."""
    jobs = [job(1, 2 * HOUR), job(2, 10 * HOUR, submit=1.0)]
    nodes = ace.Fleet(
        3,
        spares=1,
        lend_spares=True,
        repair=ace.Constant(HOUR),
        node_failures=ace.NodeTrace.from_gaps({0: [3 * HOUR]}, nodes=3),
    )
    res = run(jobs, fleet=nodes)
    b = res.jobs[1]
    assert b["failures"] == 1
    assert b["recovery_wait"] == 0.0
    assert res.fleet["spare_uses"][0] == 2  # lent at 1 s, then the re-placement


# --------------------------------------------------------------------------
# An independent model of both backfills (plain Python, no acesim code)
# --------------------------------------------------------------------------


def segments(work: float, interval: float) -> int:
    n = max(math.ceil(work / interval), 1)
    if n > 1 and (n - 1) * interval >= work:
        n -= 1
    return n


def run_end(t: float, work: float, interval: float, init: float, load: float, save: float) -> float:
    """The end of a run started at t, phase by phase (the same floating-point
    sums as the engine)."""
    t = t + (init + load)
    committed = 0.0
    while committed < work:
        boundary = committed + interval if committed + interval < work else work
        t = t + (boundary - committed)
        t = t + save
        committed = boundary
    return t


def reference(
    jobs: list[dict[str, Any]], nodes: int, spares: int, lend: bool, backfill: str
) -> list[float]:
    """Start times of whole-node jobs on a fleet without failures, by the
    documented rules: queue order (priority, submission, index); EASY gives
    the first job that does not fit a reservation from the running jobs'
    estimated ends; greedy holds back lower priorities behind it; freed
    nodes refill the spare pool first; lent spares serve what free nodes
    cannot."""
    n = len(jobs)
    state = {"free": nodes - spares, "spare": spares}
    start: list[float] = [math.nan] * n
    est: dict[int, float] = {}
    queue: list[int] = []
    done: list[tuple[float, int, int]] = []
    seq = 0

    def estimate(j: int) -> float:
        s = jobs[j]
        return float(
            (s["init"] + s["load"]) + s["work"] + segments(s["work"], s["interval"]) * s["save"]
        )

    def usable() -> int:
        return state["free"] + (state["spare"] if lend else 0)

    def reservation(head: int) -> tuple[float, int]:
        need = jobs[head]["nodes"]
        avail = usable()
        deficit = 0 if lend else spares - state["spare"]
        shadow = None
        for e, j in sorted((e, j) for j, e in est.items()):
            if shadow is not None and e != shadow:
                break
            for _ in range(jobs[j]["nodes"]):
                if deficit > 0:
                    deficit -= 1
                else:
                    avail += 1
            if shadow is None and avail >= need:
                shadow = e
        return (math.inf, 0) if shadow is None else (shadow, avail - need)

    def dispatch(t: float) -> None:
        nonlocal seq
        head = None
        blocked = -math.inf
        shadow, extra = math.inf, 0
        for j in sorted(queue, key=lambda j: (-jobs[j]["priority"], jobs[j]["submit"], j)):
            k = jobs[j]["nodes"]
            if jobs[j]["priority"] < blocked:
                break
            fits = k <= usable()
            if head is not None:
                if not fits:
                    continue
                if t + estimate(j) > shadow:
                    if k > extra:
                        continue
                    extra -= k
            elif not fits:
                if backfill == "easy":
                    head = j
                    shadow, extra = reservation(j)
                else:
                    blocked = max(blocked, jobs[j]["priority"])
                continue
            taken = min(state["free"], k)
            state["free"] -= taken
            state["spare"] -= k - taken
            queue.remove(j)
            start[j] = t
            s = jobs[j]
            est[j] = t + estimate(j)
            end = run_end(t, s["work"], s["interval"], s["init"], s["load"], s["save"])
            heapq.heappush(done, (end, seq, j))
            seq += 1

    arrivals = sorted(range(n), key=lambda j: (jobs[j]["submit"], j))
    a = 0
    while a < n or done:
        if a < n and (not done or jobs[arrivals[a]]["submit"] <= done[0][0]):
            j = arrivals[a]
            a += 1
            queue.append(j)
            dispatch(jobs[j]["submit"])
        else:
            t, _, j = heapq.heappop(done)
            del est[j]
            for _ in range(jobs[j]["nodes"]):
                if state["spare"] < spares:
                    state["spare"] += 1
                else:
                    state["free"] += 1
            dispatch(t)
    return start


def random_workload(rng: np.random.Generator, n: int, widest: int) -> list[dict[str, Any]]:
    return [
        dict(
            nodes=int(rng.integers(1, widest + 1)),
            work=float(rng.uniform(0.3, 8.0) * HOUR),
            interval=float(rng.choice([0.5, 1.0, 2.0]) * HOUR),
            init=120.0,
            load=60.0,
            save=float(rng.choice([30.0, 90.0])),
            submit=float(rng.uniform(0.0, 30.0 * HOUR)),
            priority=int(rng.integers(0, 2)),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("seed", range(12))
def test_backfill_matches_an_independent_model(seed: int) -> None:
    """Random workloads of 60 whole-node jobs (1 to 8 nodes, two priorities,
    constant laws, so every estimate is exact) on 6 to 19 nodes with 0 to 2
    hot spares, lent or not: every job's first start equals the reference's,
    to the bit, under EASY and under greedy. The two backfills differ on
    most jobs of these loaded queues."""
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(6, 20))
    spares = int(rng.integers(0, 3))
    lend = bool(rng.integers(0, 2))
    spec = random_workload(rng, 60, min(nodes - spares, 8))
    jobs = [
        ace.Job(
            8 * s["nodes"],
            s["work"],
            s["interval"],
            init=ace.Constant(s["init"]),
            load=ace.Constant(s["load"]),
            save=ace.Constant(s["save"]),
            submit=s["submit"],
            priority=s["priority"],
        )
        for s in spec
    ]
    got = {}
    for backfill in ("easy", "greedy"):
        res = run(
            jobs,
            fleet=fleet(nodes, spares=spares, lend_spares=lend),
            policy=ace.Policy(backfill=backfill),
            record_events=True,
        )
        ev = res.events[res.events["kind"] == START_BEGIN]
        first: dict[int, float] = {}
        for e in ev:
            first.setdefault(int(e["job"]), float(e["time"]))
        got[backfill] = [first[j] for j in range(len(jobs))]
        assert got[backfill] == reference(spec, nodes, spares, lend, backfill), backfill
    assert sum(a != b for a, b in zip(got["easy"], got["greedy"], strict=True)) > 10


# --------------------------------------------------------------------------
# Determinism and the fleet figure
# --------------------------------------------------------------------------


def test_easy_is_deterministic_across_threads_and_splits() -> None:
    """Failures, sub-node jobs, a queue: the same rows for 1 or 3 threads and
    for replicas run in one call or split in two."""
    jobs = [ace.Job(64, work=2 * DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(g, work=12 * HOUR, checkpoint_interval=HOUR, submit=i * HOUR, priority=i % 2)
        for i, g in enumerate([8, 16, 4, 2, 32, 8, 1, 24] * 3)
    ]
    nodes = ace.Fleet(
        16,
        spares=2,
        lend_spares=True,
        repair=ace.Exponential(6 * HOUR),
        node_failures=ace.Exponential(3 * DAY),
    )
    kw: dict[str, Any] = dict(fleet=nodes, causes=ace.LLAMA3_CAUSES, seed=7, horizon=10 * DAY)
    one = ace.simulate(jobs, replicas=4, threads=1, check_invariants=True, **kw)
    many = ace.simulate(jobs, replicas=4, threads=3, **kw)
    a = ace.simulate(jobs, replicas=2, threads=1, **kw)
    b = ace.simulate(jobs, replicas=2, first_replica=2, threads=1, **kw)
    assert_same_rows(one.jobs, many.jobs)
    assert_same_rows(one.jobs, np.concatenate([a.jobs, b.jobs]))
    assert_same_rows(one.fleet, np.concatenate([a.fleet, b.fleet]))
    assert int(one.fleet["failures"].sum()) > 0 and float(one.jobs["queue_wait"].max()) > 0


# --------------------------------------------------------------------------
# Validation and pickling
# --------------------------------------------------------------------------


def test_backfill_validation() -> None:
    with pytest.raises(ValueError, match="backfill"):
        ace.Policy(backfill="fifo")
    with pytest.raises(TypeError, match="backfill"):
        ace.Policy(backfill=1)  # type: ignore[arg-type]
    assert ace.Policy(backfill="GREEDY").backfill == "greedy"
    assert ace.Policy().backfill == "easy"


def test_lend_spares_validation() -> None:
    with pytest.raises(TypeError, match="lend_spares"):
        ace.Fleet(4, lend_spares=1)  # type: ignore[arg-type]
    assert ace.Fleet(4).lend_spares is False


@pytest.mark.parametrize("bad", [0.0, -HOUR, math.nan, math.inf])
def test_time_limit_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="time_limit"):
        job(1, HOUR, time_limit=bad)


def test_time_limit_types() -> None:
    with pytest.raises(TypeError, match="time_limit"):
        job(1, HOUR, time_limit="1h")
    assert job(1, HOUR).time_limit is None
    assert job(1, HOUR, time_limit=2 * HOUR).with_interval(HOUR / 2).time_limit == 2 * HOUR


def test_job_array_time_limits() -> None:
    arr = ace.JobArray(gpus=[8, 8], work=[HOUR, HOUR], checkpoint_interval=HOUR, time_limit=DAY)
    assert arr.time_limit is not None and arr.time_limit.tolist() == [DAY, DAY]
    arr = ace.JobArray([8, 8], [HOUR, HOUR], HOUR, time_limit=[DAY, math.inf])
    assert arr.time_limit is not None and arr.time_limit.tolist() == [DAY, math.inf]
    assert ace.JobArray([8], [HOUR], HOUR).time_limit is None
    for bad in ([DAY], [0.0, DAY], [math.nan, DAY]):
        with pytest.raises(ValueError, match="time_limit"):
            ace.JobArray([8, 8], [HOUR, HOUR], HOUR, time_limit=bad)
    with pytest.raises(TypeError, match="time_limit"):
        ace.JobArray([8, 8], [HOUR, HOUR], HOUR, time_limit="1d")


def test_job_array_time_limits_run() -> None:
    """The columns path gives the same rows as the Job path."""
    laws: dict[str, Any] = dict(
        init=ace.Constant(6 * MINUTE), load=ace.Constant(9 * MINUTE), save=ace.Constant(3 * MINUTE)
    )
    jobs = [
        ace.Job(8, 4 * HOUR, 2 * HOUR, time_limit=3 * HOUR, **laws),
        ace.Job(8, HOUR, HOUR, submit=HOUR, priority=1, **laws),
    ]
    arr = ace.JobArray(
        gpus=[8, 8],
        work=[4 * HOUR, HOUR],
        checkpoint_interval=[2 * HOUR, HOUR],
        submit=[0.0, HOUR],
        priority=[0, 1],
        init=ace.Constant(6 * MINUTE),
        load=ace.Constant(9 * MINUTE),
        save=ace.Constant(3 * MINUTE),
        time_limit=[3 * HOUR, math.inf],
    )
    a = run(jobs, fleet=fleet(1))
    b = run(arr, fleet=fleet(1))
    assert b.jobs["timeouts"].tolist() == [1, 0]
    assert_same_rows(a.jobs, b.jobs)


def test_core_validates_time_limit_and_backfill() -> None:
    """The core checks what Python passes it (the Python checks bypassed)."""
    bad = job(1, HOUR)
    bad.time_limit = 0.0
    with pytest.raises(ValueError, match=r"jobs\[1\]\.time_limit must be > 0"):
        ace.simulate([job(1, HOUR), bad], fleet=fleet(1))
    from acesim import _core

    # The bound enum takes any integer; the spec's field refuses it.
    with pytest.raises(ValueError, match=r"PolicySpec\.backfill: unknown value 7"):
        _core.PolicySpec(backfill=_core.Backfill(7))
    spec = _core.PolicySpec()
    with pytest.raises(ValueError, match=r"PolicySpec\.backfill: unknown value 2"):
        spec.backfill = _core.Backfill(2)
    assert spec.backfill == _core.Backfill.EASY


def test_batch_simulate_refuses_time_limits() -> None:
    with pytest.raises(ValueError, match="time_limit"):
        ace.batch_simulate([job(1, HOUR, time_limit=2 * HOUR)])


def test_new_parameters_pickle() -> None:
    objs = [
        job(1, HOUR, time_limit=2 * HOUR),
        ace.JobArray([8], [HOUR], HOUR, time_limit=[DAY]),
        ace.Fleet(4, spares=1, lend_spares=True),
        ace.Policy(backfill="greedy"),
    ]
    for obj in objs:
        for clone in (pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj)):
            assert type(clone) is type(obj)
    assert pickle.loads(pickle.dumps(objs[0])).time_limit == 2 * HOUR
    assert pickle.loads(pickle.dumps(objs[2])).lend_spares is True
    assert pickle.loads(pickle.dumps(objs[3])).backfill == "greedy"
