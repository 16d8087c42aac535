"""Repair pipelines, misdiagnosis, permanent retirement and job status,
against figures worked out by hand (issue 7, section 3), plus statistical
checks against closed forms.

Semantics asserted (see ``acesim.Repair``, ``acesim.Quarantine`` and
``acesim.JobStatus``):

- A node sent to repair is out for the detection latency, then for the sum
  of the stages it goes through: from the first, stage k escalates to k + 1
  with probability ``escalate`` (the last cannot); when it leaves after a
  stage, that stage's ``fix`` decides whether a lemon returns cured.
  ``Repair([RepairStage(law)])`` is exactly ``repair=law``.
- Misdiagnosis: with probability m the node sent to repair is another node
  of the interrupted job (uniformly among its other nodes in service); the
  faulty node stays in service and its failure process goes on.
- A node that a failure leaves in service (a cause with ``node_down=False``,
  or the faulty node of a misdiagnosed failure) keeps its renewal process:
  its next gap counts from the failure.
- ``Quarantine(duration=math.inf)`` retires a node for good
  (``retired_nodes``). A job that can never start again (more nodes than are
  not retired; a start from the queue cannot use the hot spares) is closed
  at that moment with status UNPLACEABLE: ``end`` is that moment, the wait is
  in ``queue_wait`` / ``recovery_wait``, and the run does not wait for it.
- ``spare_idle_node_hours``: node-hours spent in the hot-spare pool, from
  t = 0 to the end of the simulated span.

Hand cases use constant laws only (init, save and load explicitly zero),
failures placed with ``NodeTrace.from_gaps``, and times that never tie with
a checkpoint. Every run checks the engine's invariants and the accounting
identity of every job row.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import DAY, HOUR, MINUTE, job, run, trace_fleet


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Field by field, bit for bit (padding bytes between fields are not
    part of a row)."""
    names = a.dtype.names or ()
    if names != b.dtype.names or a.shape != b.shape:
        return False
    return all(a[n].tobytes() == b[n].tobytes() for n in names)


# --------------------------------------------------------------------------
# A node left in service keeps failing
# --------------------------------------------------------------------------


def test_node_left_in_service_keeps_its_failure_process() -> None:
    """One node with gaps 1.5 h, 2.25 h, 2.5 h and a cause that leaves it in
    service (seen at once, restart in place). The failures come at 1.5 h,
    3.75 h and 6.25 h (each gap from the previous failure). A 10 h job with
    hourly checkpoints loses 0.5 h (1.5 - 1), 0.25 h (3.75 - 3.5) and 0.5 h
    (6.25 - 5.75), and ends at 6.25 + (10 - 5) = 11.25 h.
    Before the fix the process stopped after its first failure: 1 failure,
    end at 10.5 h."""
    fleet = trace_fleet(1, {0: [1.5 * HOUR, 2.25 * HOUR, 2.5 * HOUR]})
    causes = [ace.Cause("software", 1.0, node_down=False)]
    res = run(job(1, 10 * HOUR), fleet=fleet, causes=causes)
    r = res.jobs[0]
    assert list(res.trace["time"] / HOUR) == [1.5, 3.75, 6.25]
    assert r["failures"] == 3
    assert r["wasted"] == pytest.approx(1.25 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(11.25 * HOUR, rel=1e-12)
    assert res.fleet["down_node_hours"][0] == 0.0


# --------------------------------------------------------------------------
# Repair pipelines: hand cases
# --------------------------------------------------------------------------

#: Node processes start fresh where the fleet offers the choice (the hand
#: cases with a failure law place the first failure at its first gap).
FRESH: dict[str, Any] = (
    {"node_start": "fresh"} if "node_start" in inspect.signature(ace.Fleet).parameters else {}
)


def pipeline(*escalate: float, fix: float = 0.0, misdiagnosis: float = 0.0) -> ace.Repair:
    """Stages of 1 h, 2 h and 4 h with the given escalation probabilities
    (the last stage never escalates)."""
    durations = (HOUR, 2 * HOUR, 4 * HOUR)
    stages = [
        ace.RepairStage(ace.Constant(d), escalate=p, fix=fix)
        for d, p in zip(durations, (*escalate, 0.0), strict=True)
    ]
    return ace.Repair(stages, misdiagnosis=misdiagnosis)


@pytest.mark.parametrize(
    ("escalate", "down"),
    [
        ((0.0, 0.0), 1.0),  # stage 1 only
        ((1.0, 0.0), 3.0),  # 1 h + 2 h
        ((1.0, 1.0), 7.0),  # 1 h + 2 h + 4 h
        ((0.0, 1.0), 1.0),  # stage 1 does not escalate: stage 2's p is never used
    ],
)
def test_pipeline_downtime_is_the_stages_gone_through(
    escalate: tuple[float, float], down: float
) -> None:
    """One node fails at 2.5 h under a 10 h job (hourly checkpoints); the
    job waits for it (no other node). It is down for the stages it goes
    through, ``down`` hours, so the job waits ``down`` h and restarts from
    its 2 h checkpoint: end = 2.5 + down + 8 h."""
    fleet = trace_fleet(1, {0: [2.5 * HOUR]}, repair=pipeline(*escalate))
    res = run(job(1, 10 * HOUR), fleet=fleet)
    r = res.jobs[0]
    assert r["recovery_wait"] == pytest.approx(down * HOUR, rel=1e-12)
    assert r["wasted"] == pytest.approx(0.5 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx((10.5 + down) * HOUR, rel=1e-12)
    assert res.fleet["down_node_hours"][0] == pytest.approx(down, rel=1e-12)


def test_pipeline_downtime_adds_detection() -> None:
    """The fault is seen after 6 minutes; the node is out for detection +
    1 h + 2 h = 3.1 h, from 2.5 h to 5.6 h. The job (alone on the only node)
    is in detection 0.1 h, then waits 3 h, then needs 8 h more: end 13.6 h."""
    causes = [ace.Cause("crash", 1.0, detect=ace.Constant(6 * MINUTE))]
    fleet = trace_fleet(1, {0: [2.5 * HOUR]}, repair=pipeline(1.0, 0.0))
    res = run(job(1, 10 * HOUR), fleet=fleet, causes=causes)
    r = res.jobs[0]
    assert r["detection"] == pytest.approx(0.1 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(3 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(13.6 * HOUR, rel=1e-12)
    assert res.fleet["down_node_hours"][0] == pytest.approx(3.1, rel=1e-12)


def test_one_stage_pipeline_is_the_plain_law() -> None:
    """``Repair([RepairStage(law)])`` (never escalates, never cures) gives
    exactly the results of ``repair=law``: the same draws from the same
    streams, lemons included."""
    jobs = [
        ace.Job(g, work=DAY, checkpoint_interval=HOUR, save=ace.Exponential(60.0), submit=i * HOUR)
        for i, g in enumerate([8, 16, 24, 8, 4, 32])
    ]
    law = ace.LogNormal(9.0, 1.0)
    kwargs: dict[str, Any] = dict(
        causes=ace.LLAMA3_CAUSES,
        policy=ace.Policy(quarantine=ace.Quarantine(2, 2 * DAY, 3 * DAY)),
        replicas=3,
        seed=8,
        horizon=10 * DAY,
    )
    results = []
    for repair in (law, ace.Repair([ace.RepairStage(law)])):
        fleet = ace.Fleet(
            12,
            spares=1,
            repair=repair,
            node_failures=ace.Exponential(2 * DAY),
            lemon_fraction=0.25,
            lemon_factor=5.0,
        )
        results.append(run(jobs, fleet=fleet, **kwargs))
    plain, staged = results
    for table in ("jobs", "fleet", "trace"):
        assert same(getattr(plain, table), getattr(staged, table)), table


@pytest.mark.parametrize(
    ("stages", "times"),
    [
        # fix = 0: a lemon stays a lemon; a failure every 2 h of service + 1 h repair
        ([ace.RepairStage(HOUR, fix=0.0)], [2, 5, 8, 11, 14, 17, 20, 23]),
        # fix = 1: cured at its first return (3 h), then 8 h gaps
        ([ace.RepairStage(HOUR, fix=1.0)], [2, 11, 20]),
        # the fix of the stage it leaves from decides: stage 2 (fix 0), after 2 h
        (
            [ace.RepairStage(HOUR, escalate=1.0, fix=1.0), ace.RepairStage(HOUR)],
            [2, 6, 10, 14, 18, 22],
        ),
        # it leaves after stage 1 (fix 1): cured
        ([ace.RepairStage(HOUR, escalate=0.0, fix=1.0), ace.RepairStage(HOUR)], [2, 11, 20]),
    ],
)
def test_fix_cures_a_lemon(stages: list[ace.RepairStage], times: list[float]) -> None:
    """One lemon node (lemon_fraction 1, factor 4): constant gaps of 8 h / 4
    = 2 h while a lemon, 8 h once cured; repair stages of 1 h; horizon 24 h.
    A gap counts from the node's return to service."""
    fleet = ace.Fleet(
        1,
        repair=ace.Repair(stages),
        node_failures=ace.Constant(8 * HOUR),
        lemon_fraction=1.0,
        lemon_factor=4.0,
        **FRESH,
    )
    res = run(job(1, 100 * HOUR, interval=0.3 * HOUR), fleet=fleet, horizon=24 * HOUR)
    assert list(res.trace["time"] / HOUR) == pytest.approx(times, rel=1e-12)
    assert res.fleet["node_failures"][0] == len(times)


# --------------------------------------------------------------------------
# Misdiagnosis: hand cases
# --------------------------------------------------------------------------


def misdiagnosed(m: float) -> ace.SimulationResult:
    """Three nodes, node 2 a hot spare; a 2-node job (10 h, hourly
    checkpoints) on nodes 0 and 1. Node 0 is the faulty one (a lemon: it
    fails 2.5 h in and again 1.75 h after that, as long as it is in
    service). Repairs take 10 h; misdiagnosis probability m."""
    repair = ace.Repair([ace.RepairStage(ace.Constant(10 * HOUR))], misdiagnosis=m)
    fleet = trace_fleet(3, {0: [2.5 * HOUR, 1.75 * HOUR]}, repair=repair, spares=1)
    return run(job(2, 10 * HOUR), fleet=fleet)


def test_misdiagnosis_repairs_the_healthy_node() -> None:
    """m = 1. At 2.5 h node 0 fails (0.5 h lost, 2 h kept); node 1, the
    job's other node, goes to repair (until 12.5 h) and node 0 stays in
    service. The job takes the spare (node 2) at once: nodes 0 and 2.
    Node 0, still faulty, fails again 1.75 h later, at 4.25 h (0.75 h lost
    since the 3.5 h checkpoint, 3 h kept): now node 2 goes to repair (until
    14.25 h). No node is free: the job waits until node 1 returns at
    12.5 h, then needs 7 h more: end 19.5 h, recovery wait 8.25 h.
    Down node-hours 10 + 10. Hot-spare node-hours: node 2 from 0 to 2.5 h,
    node 1 for no time at 12.5 h, node 2 again from 14.25 h to 19.5 h:
    2.5 + 5.25 = 7.75."""
    res = misdiagnosed(1.0)
    r = res.jobs[0]
    # Both failures are node 0's, and both interrupted the job on node 0.
    assert [(round(t / HOUR, 6), j, n) for t, j, n in res.trace[["time", "job", "node"]]] == [
        (2.5, 0, 0),
        (4.25, 0, 0),
    ]
    assert r["failures"] == 2
    assert r["wasted"] == pytest.approx(1.25 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(8.25 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(19.5 * HOUR, rel=1e-12)
    f = res.fleet[0]
    assert f["spare_uses"] == 2
    assert f["down_node_hours"] == pytest.approx(20.0, rel=1e-12)
    assert f["spare_idle_node_hours"] == pytest.approx(7.75, rel=1e-12)


def test_right_diagnosis_repairs_the_faulty_node() -> None:
    """m = 0, the same failures. Node 0 goes to repair at 2.5 h (until
    12.5 h) and the job moves to nodes 1 and 2, finishing at 2.5 + 8 =
    10.5 h; node 0's second gap would count from its return, past the end.
    Down node-hours 8 (cut at 10.5 h); spare idle 2.5."""
    res = misdiagnosed(0.0)
    r = res.jobs[0]
    assert r["failures"] == 1
    assert r["end"] == pytest.approx(10.5 * HOUR, rel=1e-12)
    assert res.fleet["down_node_hours"][0] == pytest.approx(8.0, rel=1e-12)
    assert res.fleet["spare_idle_node_hours"][0] == pytest.approx(2.5, rel=1e-12)


def test_a_one_node_job_or_an_idle_node_is_never_misdiagnosed() -> None:
    """m = 1, two nodes, 1 h repairs; a 1-node job (10 h) starts on node 1
    (the scheduler takes the last free node). Idle node 0 fails at 1 h and
    goes to repair itself (back at 2 h). Node 1 fails under the job at
    2.5 h: the job has no other node, so node 1 goes to repair (back at
    3.5 h) and the job moves to node 0 at once, ending at 2.5 + 8 = 10.5 h.
    Node 1's next gap (0.5 h) counts from its return: it fails, idle, at
    4 h (had it stayed in service it would have failed at 3 h under no
    job). Down node-hours 1 + 1 + 1."""
    repair = ace.Repair([ace.RepairStage(ace.Constant(HOUR))], misdiagnosis=1.0)
    fleet = trace_fleet(2, {0: [HOUR], 1: [2.5 * HOUR, 0.5 * HOUR]}, repair=repair)
    res = run(job(1, 10 * HOUR), fleet=fleet)
    assert [(round(t / HOUR, 6), j, n) for t, j, n in res.trace[["time", "job", "node"]]] == [
        (1.0, -1, 0),
        (2.5, 0, 1),
        (4.0, -1, 1),
    ]
    r = res.jobs[0]
    assert r["recovery_wait"] == 0.0
    assert r["end"] == pytest.approx(10.5 * HOUR, rel=1e-12)
    assert res.fleet["down_node_hours"][0] == pytest.approx(3.0, rel=1e-12)


def test_quarantine_counts_the_diagnosed_node() -> None:
    """The m = 1 case under Quarantine(failures=1): each failure is held
    against the node diagnosed, so node 1 (at 2.5 h) and node 2 (at
    4.25 h) are quarantined, while faulty node 0 never is."""
    repair = ace.Repair([ace.RepairStage(ace.Constant(10 * HOUR))], misdiagnosis=1.0)
    fleet = trace_fleet(3, {0: [2.5 * HOUR, 1.75 * HOUR]}, repair=repair, spares=1)
    quarantine = ace.Quarantine(failures=1, window=DAY, duration=100 * HOUR)
    res = run(job(2, 10 * HOUR), fleet=fleet, policy=ace.Policy(quarantine=quarantine))
    f = res.fleet[0]
    assert f["quarantines"] == 2
    assert f["quarantined_nodes"] == 2
    # Node 0 stayed in the job throughout: both failures hit it on node 0.
    assert list(res.trace["node"]) == [0, 0]


# --------------------------------------------------------------------------
# Retirement and job status: hand cases
# --------------------------------------------------------------------------

RETIRE = ace.Policy(quarantine=ace.Quarantine(failures=1, window=DAY, duration=math.inf))


def test_retirement_leaves_a_recovering_job_unplaceable() -> None:
    """Three nodes; every failure retires its node (quarantine after 1
    failure, for good). A 2-node job (10 h) starts on nodes 2 and 1. Node 1
    fails at 2.5 h (0.5 h lost) and is retired; the job moves to node 0 at
    once. Node 2 fails at 5.25 h (restart at 2.5 h from 2 h, checkpoints at
    3.5 h and 4.5 h: 0.75 h lost, 4 h kept) and is retired: one node is
    left for a 2-node job. The row is closed at 5.25 h: wall 5.25 h =
    4 h productive + 1.25 h wasted; status UNPLACEABLE; the run ends there.
    Quarantined node-hours 2.75 + 0; down node-hours 1 (node 1's repair,
    2.5 h to 3.5 h) + 0."""
    fleet = trace_fleet(3, {1: [2.5 * HOUR], 2: [5.25 * HOUR]}, repair=HOUR)
    res = run(job(2, 10 * HOUR), fleet=fleet, policy=RETIRE, record_events=True)
    r = res.jobs[0]
    assert r["status"] == ace.JobStatus.UNPLACEABLE
    assert not r["completed"]
    assert r["failures"] == 2
    assert r["end"] == pytest.approx(5.25 * HOUR, rel=1e-12)
    assert r["wall"] == pytest.approx(5.25 * HOUR, rel=1e-12)
    assert r["productive"] == pytest.approx(4 * HOUR, rel=1e-12)
    assert r["progress"] == pytest.approx(4 * HOUR, rel=1e-12)
    assert r["wasted"] == pytest.approx(1.25 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == 0.0
    f = res.fleet[0]
    assert f["retired_nodes"] == 2
    assert f["makespan"] == pytest.approx(5.25 * HOUR, rel=1e-12)
    assert f["quarantined_node_hours"] == pytest.approx(2.75, rel=1e-12)
    assert f["down_node_hours"] == pytest.approx(1.0, rel=1e-12)
    assert res.events["kind"][-1] == int(ace._core.EventKind.UNPLACEABLE)


def test_every_status_in_one_scenario() -> None:
    """Four nodes, every failure retires its node; horizon 6 h.

    - job 0 (1 node, 2 h, priority 2) starts on node 3 and is DONE at 2 h;
    - job 1 (1 node, 100 h, priority 2) starts on node 2: RUNNING at 6 h;
    - job 2 (3 nodes, priority 1) does not fit on nodes 0 and 1 and blocks
      the lower priority; idle node 0 fails at 1 h and node 1 at 1.5 h,
      both retired: two nodes are left for a 3-node job, UNPLACEABLE, its
      row closed at 1.5 h (queue wait 1.5 h);
    - job 3 (1 node, 5 h) starts on node 3 when job 0 ends (queue wait
      2 h): RUNNING at 6 h with 4 h done;
    - job 4 (1 node) waits behind it: QUEUED, queue wait 6 h;
    - job 5, submitted at 8 h: NOT_SUBMITTED (row closed at its submission).
    """
    jobs = [
        job(1, 2 * HOUR, priority=2),
        job(1, 100 * HOUR, priority=2),
        job(3, 50 * HOUR, priority=1),
        job(1, 5 * HOUR),
        job(1, HOUR),
        job(1, HOUR, submit=8 * HOUR),
    ]
    fleet = trace_fleet(4, {0: [HOUR], 1: [1.5 * HOUR]}, repair=HOUR)
    # Greedy backfill: job 2 holds back the lower priority (EASY would start
    # job 4 at once, as it ends by job 2's shadow time, 2 h).
    greedy = ace.Policy(quarantine=RETIRE.quarantine, backfill="greedy")
    res = run(jobs, fleet=fleet, policy=greedy, horizon=6 * HOUR)
    s = ace.JobStatus
    rows = res.jobs
    assert list(rows["status"]) == [
        s.DONE,
        s.RUNNING,
        s.UNPLACEABLE,
        s.RUNNING,
        s.QUEUED,
        s.NOT_SUBMITTED,
    ]
    assert list(rows["completed"]) == [True, False, False, False, False, False]
    assert list(rows["end"] / HOUR) == pytest.approx([2, 6, 1.5, 6, 6, 8], rel=1e-12)
    assert list(rows["wall"] / HOUR) == pytest.approx([2, 6, 1.5, 6, 6, 0], rel=1e-12)
    assert list(rows["queue_wait"] / HOUR) == pytest.approx([0, 0, 1.5, 2, 6, 0], rel=1e-12)
    assert list(rows["productive"] / HOUR) == pytest.approx([2, 6, 0, 4, 0, 0], rel=1e-12)
    assert res.fleet["retired_nodes"][0] == 2


def test_retirement_counts_the_spares_out_of_a_start_from_the_queue() -> None:
    """Four nodes, node 3 a hot spare. Idle node 0 fails at 1 h and is
    retired: three nodes are left, but a start from the queue never takes
    the spare (the spare pool is refilled first), so a 3-node job submitted
    at 5 h can never start: closed at its submission, wall 0 (ETTR NaN).
    The spare idled from 0 to the end of the span, 5 h."""
    fleet = trace_fleet(4, {0: [HOUR]}, repair=HOUR, spares=1)
    res = run(job(3, 10 * HOUR, submit=5 * HOUR), fleet=fleet, policy=RETIRE)
    r = res.jobs[0]
    assert r["status"] == ace.JobStatus.UNPLACEABLE
    assert r["end"] == pytest.approx(5 * HOUR, rel=1e-12)
    assert r["wall"] == 0.0
    assert math.isnan(r["ettr"])
    f = res.fleet[0]
    assert f["retired_nodes"] == 1
    assert f["spare_idle_node_hours"] == pytest.approx(5.0, rel=1e-12)


def test_retired_node_never_returns_and_its_hours_stop_at_the_end() -> None:
    """Two nodes, one 1-node job (10 h) on node 1; node 1 fails at 2.5 h and
    is retired; the job moves to node 0 and ends at 10.5 h. The retired
    node is quarantined from 2.5 h to the end of the span: 8 h."""
    fleet = trace_fleet(2, {1: [2.5 * HOUR]}, repair=HOUR)
    res = run(job(1, 10 * HOUR), fleet=fleet, policy=RETIRE)
    assert res.jobs["status"][0] == ace.JobStatus.DONE
    assert res.jobs["end"][0] == pytest.approx(10.5 * HOUR, rel=1e-12)
    f = res.fleet[0]
    assert f["retired_nodes"] == 1
    assert f["quarantined_nodes"] == 1
    assert f["quarantined_node_hours"] == pytest.approx(8.0, rel=1e-12)


def test_retirement_without_a_horizon_never_hangs() -> None:
    """Node failures go on forever and every failure retires its node: a
    4-node fleet loses nodes until the 2-node jobs cannot run. Without a
    horizon the run still ends (the unplaceable rows are closed) and every
    wall is finite."""
    fleet = ace.Fleet(4, repair=ace.Constant(HOUR), node_failures=ace.Exponential(2 * DAY), **FRESH)
    jobs = [job(2, 20 * DAY, submit=i * HOUR) for i in range(3)]
    res = run(jobs, fleet=fleet, policy=RETIRE, replicas=20, seed=4)
    assert np.all(np.isfinite(res.jobs["wall"]))
    assert set(res.jobs["status"]) <= {ace.JobStatus.DONE, ace.JobStatus.UNPLACEABLE}
    assert np.any(res.jobs["status"] == ace.JobStatus.UNPLACEABLE)
    # A replica ends when its last job is done or closed.
    for f in res.fleet:
        mine = res.jobs[res.jobs["replica"] == f["replica"]]
        assert f["makespan"] == pytest.approx(mine["end"].max(), rel=1e-12)
        if np.any(mine["status"] == ace.JobStatus.UNPLACEABLE):
            assert f["retired_nodes"] >= 3  # fewer than 2 nodes left


def test_spare_idle_node_hours() -> None:
    """Two nodes, node 1 a hot spare; the 1-node job on node 0 fails at
    2.5 h and takes the spare; node 0 returns at 3.5 h and becomes the
    spare until the job ends at 10.5 h: 2.5 + 7 = 9.5 spare node-hours.
    With a 5 h horizon instead: 2.5 + 1.5 = 4."""
    fleet = trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1)
    res = run(job(1, 10 * HOUR), fleet=fleet)
    assert res.fleet["spare_idle_node_hours"][0] == pytest.approx(9.5, rel=1e-12)
    res = run(job(1, 10 * HOUR), fleet=fleet, horizon=5 * HOUR)
    assert res.fleet["spare_idle_node_hours"][0] == pytest.approx(4.0, rel=1e-12)
    # No spares: none.
    res = run(job(1, 10 * HOUR), fleet=trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR))
    assert res.fleet["spare_idle_node_hours"][0] == 0.0


# --------------------------------------------------------------------------
# Statistical checks against closed forms
# --------------------------------------------------------------------------


def test_pipeline_mean_downtime_matches_the_closed_form() -> None:
    """Mean downtime per failure of a 3-stage pipeline, sum_k E[d_k] *
    prod_{i<k} p_i = 0.5 + 0.4 * 4 + 0.4 * 0.25 * 24 = 4.5 h, measured as
    down node-hours per node failure over about 40,000 failures per replica
    (20 nodes, Exponential(10 h) failures, 2,000 cycles each; the cut at the
    horizon is below 0.1 %). The downtime fraction of a node is the
    alternating-renewal form E[D] / (M + E[D])."""
    stages = [
        ace.RepairStage(ace.Exponential(0.5 * HOUR), escalate=0.4),
        ace.RepairStage(ace.Constant(4 * HOUR), escalate=0.25),
        ace.RepairStage(ace.Exponential(24 * HOUR)),
    ]
    repair = ace.Repair(stages)
    expected = 0.5 + 0.4 * 4.0 + 0.4 * 0.25 * 24.0
    assert repair.mean() / HOUR == pytest.approx(expected, rel=1e-12)
    mttf, nodes, replicas = 10 * HOUR, 20, 8
    horizon = 2000 * (mttf + expected * HOUR)
    fleet = ace.Fleet(nodes, repair=repair, node_failures=ace.Exponential(mttf))
    res = ace.simulate(
        job(1, 1e12, interval=100 * HOUR),
        fleet=fleet,
        horizon=horizon,
        replicas=replicas,
        seed=7,
        threads=2,
    )
    per_failure = res.fleet["down_node_hours"] / res.fleet["node_failures"]
    mean = float(per_failure.mean())
    se = float(per_failure.std(ddof=1) / math.sqrt(replicas))
    assert abs(mean - expected) < 4 * se + 1e-3 * expected, (mean, se, expected)
    assert mean == pytest.approx(expected, rel=0.02)
    fraction = res.fleet["down_node_hours"] / (nodes * horizon / HOUR)
    assert float(fraction.mean()) == pytest.approx(expected / (10.0 + expected), rel=0.02)


@pytest.mark.parametrize("fix", [0.0, 0.1, 0.5, 1.0])
def test_cured_lemons_fail_at_the_normal_rate(fix: float) -> None:
    """Every node a lemon (5 x the rate: mean gap 2 h instead of 10 h),
    1 h repairs, each curing with probability ``fix``; horizon T = 300 h.
    With fix = 0 a node is a renewal process of cycle 2 h + 1 h: E[N] =
    m(T + 1) ~ (T + 1) / 3 + E[C^2] / (2 * 3^2) - 1. With fix = q it fails
    1/q times as a lemon (3/q hours on average), then as a normal node from
    its return: E[N] ~ 1/q + (T + 1 - 3/q) / 11 + E[C^2] / (2 * 11^2) - 1
    (exponential gaps: E[C^2] = 2 M^2 + 2 M R + R^2)."""
    lemon_mean, normal_mean, repair, horizon = 2.0, 10.0, 1.0, 300.0

    def renewal_offset(m: float) -> float:
        mu = m + repair
        return (2 * m * m + 2 * m * repair + repair * repair) / (2 * mu * mu) - 1.0

    if fix == 0.0:
        expected = (horizon + repair) / (lemon_mean + repair) + renewal_offset(lemon_mean)
    else:
        lemon_time = (lemon_mean + repair) / fix
        expected = (
            1.0 / fix
            + (horizon + repair - lemon_time) / (normal_mean + repair)
            + renewal_offset(normal_mean)
        )
    nodes, replicas = 50, 8
    fleet = ace.Fleet(
        nodes,
        repair=ace.Repair([ace.RepairStage(ace.Constant(repair * HOUR), fix=fix)]),
        node_failures=ace.Exponential(normal_mean * HOUR),
        lemon_fraction=1.0,
        lemon_factor=normal_mean / lemon_mean,
    )
    res = ace.simulate(
        job(1, 1e12, interval=100 * HOUR),
        fleet=fleet,
        horizon=horizon * HOUR,
        replicas=replicas,
        seed=12,
        threads=2,
    )
    per_node = res.fleet["node_failures"] / nodes
    mean = float(per_node.mean())
    se = float(per_node.std(ddof=1) / math.sqrt(replicas))
    assert abs(mean - expected) < 4 * se + 0.01 * expected, (mean, se, expected)


def test_misdiagnosis_probability() -> None:
    """Three nodes, one 2-node job under REQUEUE, Exponential(10 h) node
    failures, 1 h repairs, misdiagnosis 0.3. At each failure under the job
    the job releases its nodes and starts again from the queue at once; the
    placement callback then sees the free nodes in service. The faulty node
    (the trace row's node) is among them exactly when the failure was
    misdiagnosed (it stayed in service, its partner went to repair). Among
    those failures the share is m (binomial, 4 standard errors)."""
    m = 0.3
    seen: dict[float, list[int]] = {}

    def place(view: Any, free: Any) -> list[int]:
        seen.setdefault(view.time, [int(n) for n in free])
        return [int(n) for n in list(free)[: view.nodes_needed]]

    fleet = ace.Fleet(
        3,
        repair=ace.Repair([ace.RepairStage(ace.Constant(HOUR))], misdiagnosis=m),
        node_failures=ace.Exponential(10 * HOUR),
    )
    policy = ace.Policy(replacement=ace.Replacement.REQUEUE, place=place)
    res = run(job(2, 1e12, interval=100 * HOUR), fleet=fleet, policy=policy, horizon=2e4 * HOUR)
    hits = res.trace[res.trace["job"] >= 0]
    judged = [(n, seen[t]) for t, n in hits[["time", "node"]] if len(seen.get(t, [])) == 2]
    wrong = sum(int(n) in free for n, free in judged)
    k = len(judged)
    assert k > 1000
    share = wrong / k
    assert abs(share - m) < 4 * math.sqrt(m * (1 - m) / k), (share, k)


# --------------------------------------------------------------------------
# Determinism and common random numbers
# --------------------------------------------------------------------------


def _pipeline_scenario(**overrides: Any) -> dict[str, Any]:
    stages = [
        ace.RepairStage(ace.Exponential(20 * MINUTE), escalate=0.5, fix=0.3),
        ace.RepairStage(ace.LogNormal(10.0, 0.5), escalate=0.2, fix=0.9),
        ace.RepairStage(ace.Constant(3 * DAY), fix=1.0),
    ]
    kwargs: dict[str, Any] = dict(
        jobs=[
            ace.Job(g, work=2 * DAY, checkpoint_interval=HOUR, submit=i * HOUR, priority=i % 3)
            for i, g in enumerate([16, 8, 24, 4, 32, 8, 16])
        ],
        fleet=ace.Fleet(
            10,
            spares=1,
            repair=ace.Repair(stages, misdiagnosis=0.2),
            node_failures=ace.Exponential(3 * DAY),
            lemon_fraction=0.3,
            lemon_factor=6.0,
        ),
        policy=ace.Policy(quarantine=ace.Quarantine(2, 2 * DAY, math.inf)),
        causes=ace.LLAMA3_CAUSES,
        replicas=6,
        seed=21,
        horizon=5 * DAY,
    )
    kwargs.update(overrides)
    return kwargs


def test_pipeline_results_do_not_depend_on_threads_or_replica_split() -> None:
    whole = run(**_pipeline_scenario(threads=1))
    threaded = run(**_pipeline_scenario(threads=3))
    first = run(**_pipeline_scenario(replicas=2, threads=1))
    rest = run(**_pipeline_scenario(replicas=4, first_replica=2, threads=2))
    for table in ("jobs", "fleet", "trace"):
        a = getattr(whole, table)
        assert same(a, getattr(threaded, table)), table
        assert same(a, np.concatenate([getattr(first, table), getattr(rest, table)])), table
    assert len(set(whole.jobs["status"])) >= 3  # some done, running, queued, unplaceable


def test_pipeline_keeps_node_failure_times_common_across_policies() -> None:
    """Without misdiagnosis or quarantine, a node's failures and repairs
    (stages and outcomes included) are the same under every re-placement
    policy: the trace's node failures coincide."""
    base = _pipeline_scenario(policy=None)
    fleet = base["fleet"]
    fleet = ace.Fleet(
        fleet.nodes,
        spares=fleet.spares,
        repair=ace.Repair(list(fleet.repair.stages)),
        node_failures=fleet.node_failures,
        lemon_fraction=fleet.lemon_fraction,
        lemon_factor=fleet.lemon_factor,
    )
    results = [
        run(**{**base, "fleet": fleet, "policy": ace.Policy(replacement=replacement)})
        for replacement in ace.Replacement
    ]
    # Runs end when their jobs do: compare up to the earliest end.
    end = np.min([res.fleet["makespan"] for res in results], axis=0)
    traces = []
    for res in results:
        t = res.trace[(res.trace["source"] == 1) & (res.trace["time"] < end[res.trace["replica"]])]
        _, first = np.unique(np.stack([t["replica"], t["event"]]), axis=1, return_index=True)
        t = t[np.sort(first)]
        traces.append(sorted(zip(t["replica"], t["origin"], t["time"], strict=True)))
    assert all(t == traces[0] for t in traces[1:])
    assert len(traces[0]) > 50


def test_batch_rows_carry_the_status() -> None:
    """The single-job batch path and the event heap give the same rows,
    status included: DONE, or RUNNING at a horizon that cuts the run."""
    jobs = [ace.Job(64, work=DAY, checkpoint_interval=HOUR, save=ace.Constant(60.0))]
    for horizon in (math.inf, 6 * HOUR):
        heap = ace.simulate(jobs, replicas=20, seed=3, horizon=horizon)
        batch = ace.batch_simulate(jobs, replicas=20, seed=3, horizon=horizon)
        assert heap.jobs["status"].tobytes() == batch.jobs["status"].tobytes()
    assert set(heap.jobs["status"]) == {ace.JobStatus.RUNNING}


def test_job_status_matches_the_core() -> None:
    for status in ace.JobStatus:
        assert int(getattr(ace._core.JobStatus, status.name)) == status.value
    assert "JobStatus" in ace.__all__
    assert "Repair" in ace.__all__ and "RepairStage" in ace.__all__


def test_pipeline_pickles() -> None:
    import pickle

    repair = ace.Repair(
        [ace.RepairStage(ace.Exponential(HOUR), escalate=0.5, fix=0.25), ace.RepairStage(DAY)],
        misdiagnosis=0.1,
    )
    fleet = ace.Fleet(4, repair=repair, node_failures=ace.Exponential(DAY))
    again = pickle.loads(pickle.dumps(fleet))
    assert isinstance(again.repair, ace.Repair)
    assert again.repair.misdiagnosis == 0.1
    assert [s.escalate for s in again.repair.stages] == [0.5, 0.0]
    assert again.repair.mean() == repair.mean()
    a = run(job(2, DAY), fleet=fleet, replicas=3, seed=1)
    b = run(job(2, DAY), fleet=again, replicas=3, seed=1)
    assert same(a.jobs, b.jobs)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["escalate", "fix"])
@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf])
def test_stage_probabilities_are_validated(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        ace.RepairStage(HOUR, **{field: value})


def test_stage_arguments_are_typed() -> None:
    with pytest.raises(TypeError, match="escalate"):
        ace.RepairStage(HOUR, escalate="0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="duration"):
        ace.RepairStage("1h")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duration"):
        ace.RepairStage(-1.0)


def test_pipeline_is_validated() -> None:
    stage = ace.RepairStage(HOUR)
    with pytest.raises(ValueError, match="stages must not be empty"):
        ace.Repair([])
    with pytest.raises(TypeError, match=r"stages\[1\]"):
        ace.Repair([stage, ace.Exponential(HOUR)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="stages"):
        ace.Repair(ace.Exponential(HOUR))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="last stage cannot escalate"):
        ace.Repair([stage, ace.RepairStage(HOUR, escalate=0.5)])
    for bad in (-0.5, 1.01, math.nan):
        with pytest.raises(ValueError, match="misdiagnosis"):
            ace.Repair([stage], misdiagnosis=bad)
    with pytest.raises(TypeError, match="misdiagnosis"):
        ace.Repair([stage], misdiagnosis=None)  # type: ignore[arg-type]
    assert ace.Repair(stage).stages == (stage,)  # one stage alone is accepted


def test_fleet_repair_is_validated() -> None:
    with pytest.raises(TypeError, match="repair"):
        ace.Fleet(4, repair="pipeline")  # type: ignore[arg-type]
    fleet = ace.Fleet(4, repair=ace.Repair([ace.RepairStage(HOUR)]))
    assert isinstance(fleet.repair, ace.Repair)


def test_core_validates_the_pipeline() -> None:
    """Values that slip past the Python constructors are refused by the core,
    naming the field."""
    cases = [
        ("escalate", 2.0, r"stages\[0\]\.escalate"),
        ("fix", -1.0, r"stages\[1\]\.fix"),
    ]
    for field, value, message in cases:
        stages = [ace.RepairStage(HOUR, escalate=0.5), ace.RepairStage(HOUR)]
        index = 0 if field == "escalate" else 1
        object.__setattr__(stages[index], field, value)
        repair = ace.Repair([ace.RepairStage(HOUR, escalate=0.5), ace.RepairStage(HOUR)])
        object.__setattr__(repair, "stages", tuple(stages))
        with pytest.raises(ValueError, match=message):
            ace.simulate(job(1, HOUR), fleet=ace.Fleet(2, repair=repair))
    repair = ace.Repair([ace.RepairStage(HOUR)])
    object.__setattr__(repair, "stages", (ace.RepairStage(HOUR, escalate=0.5),))
    with pytest.raises(ValueError, match="last stage cannot escalate"):
        ace.simulate(job(1, HOUR), fleet=ace.Fleet(2, repair=repair))
    repair = ace.Repair([ace.RepairStage(HOUR)])
    object.__setattr__(repair, "misdiagnosis", 1.5)
    with pytest.raises(ValueError, match="misdiagnosis"):
        ace.simulate(job(1, HOUR), fleet=ace.Fleet(2, repair=repair))


def test_quarantine_duration_may_be_infinite() -> None:
    assert ace.Quarantine(2, DAY, math.inf).duration == math.inf
    assert ace.Quarantine(2, DAY, float("inf")).duration == math.inf
    with pytest.raises(ValueError, match="duration"):
        ace.Quarantine(2, DAY, math.nan)
    with pytest.raises(ValueError, match="duration"):
        ace.Quarantine(2, DAY, -1.0)
    with pytest.raises(ValueError, match="duration"):
        ace.Quarantine(2, DAY, -math.inf)
    # The default is unchanged: a week.
    assert ace.Quarantine().duration == 7 * DAY
    # The core refuses NaN too.
    q = ace.Quarantine(2, DAY, DAY)
    object.__setattr__(q, "duration", math.nan)
    with pytest.raises(ValueError, match=r"quarantine\.duration"):
        ace.simulate(job(1, HOUR), fleet=ace.Fleet(2), policy=ace.Policy(quarantine=q))
