"""The node pool and its failure processes, against figures worked out by
hand (issue 7, section 2, items 2, 4, 5, 6 and 8), plus the behaviour that
is already right and must stay so: SPARES takes a hot spare, WAIT_REPAIR
waits exactly the repair time, REQUEUE queues again in priority order, and
quarantine removes a node after k failures within its window.

Semantics asserted (DESIGN.md section 4):

- Fleet node-hour figures (``down_node_hours``, ``quarantined_node_hours``)
  stop at the end of the simulated span: the horizon, or the end of the last
  job when that comes first (``res.fleet["makespan"]``).
- WAIT_REPAIR waits only for nodes under repair; a quarantined node is
  replaced like under SPARES (a free node or a hot spare).
- A node out of service (under repair or quarantined) has no failure
  process; when it returns its process restarts with a fresh draw counted
  from the return time (as good as new). With ``NodeTrace.from_gaps`` each
  gap after the first is measured from the node's return to service. A
  node's down time is detection latency + repair.
- Job-level and node-level failures are independent: a node-level failure
  does not redraw the job's pending job-level failure, whose held-time clock
  keeps its remaining time (paused while the job holds no hardware).
- A trace row names a job (``job >= 0``) only when the failure interrupted
  it (counted in its ``failures``); a strike on a job that is not running
  (in detection, waiting or queued) writes ``job = -1``, like an idle node.

Hand cases use constant laws only (init, save and load explicitly zero),
failures placed with ``NodeTrace.from_gaps`` and ``Replay``, and times that
never tie with a checkpoint. Every run checks the engine's invariants and the
accounting identity of every job row. Where the engine used to give another
figure, a comment quotes it ("Before the fix").
"""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest
from hand_cases import DAY, HOUR, MINUTE, ZERO, job, rows_of, run, trace_fleet

#: A cause seen after 6 minutes (0.1 h): the node goes to repair.
SIX_MINUTES = [ace.Cause("crash", 1.0, detect=ace.Constant(6 * MINUTE))]


# --------------------------------------------------------------------------
# Behaviour that was already right (pinned)
# --------------------------------------------------------------------------


def test_spares_takes_the_hot_spare() -> None:
    """Two nodes, node 1 a hot spare; a 1-node job (10 h of work) runs on
    node 0, which fails at 2.5 h. SPARES moves the job to the spare at once."""
    fleet = trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1)
    res = run(job(1, 10 * HOUR), fleet=fleet, policy=ace.Policy(replacement="SPARES"))
    r = res.jobs[0]
    assert r["failures"] == 1
    assert res.fleet["spare_uses"][0] == 1
    assert r["recovery_wait"] == 0.0  # the spare is there at 2.5 h
    assert r["wasted"] == pytest.approx(0.5 * HOUR, rel=1e-12)  # 2.5 h - checkpoint at 2 h
    # Restart at 2.5 h from 2 h of progress: 8 h more.
    assert r["end"] == pytest.approx(10.5 * HOUR, rel=1e-12)
    assert r["productive"] == pytest.approx(10 * HOUR, rel=1e-12)
    # Node 0 under repair from 2.5 h to 3.5 h.
    assert res.fleet["down_node_hours"][0] == pytest.approx(1.0, rel=1e-12)
    assert rows_of(res.trace, "job", "node", "time") == [(0, 0, 2.5 * HOUR)]


def test_wait_repair_waits_exactly_the_repair() -> None:
    """Node 0 under the job fails at 2.5 h; the fault is seen after 0.1 h and
    the node is repaired in 1 h. WAIT_REPAIR waits for it although the hot
    spare (node 1) sits idle: recovery wait = the repair, 1 h."""
    fleet = trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1)
    res = run(
        job(1, 10 * HOUR),
        fleet=fleet,
        causes=SIX_MINUTES,
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
    )
    r = res.jobs[0]
    assert r["failures"] == 1
    assert res.fleet["spare_uses"][0] == 0
    assert r["detection"] == pytest.approx(0.1 * HOUR, rel=1e-12)  # 2.5 h -> 2.6 h
    assert r["recovery_wait"] == pytest.approx(HOUR, rel=1e-12)  # 2.6 h -> 3.6 h
    assert r["wasted"] == pytest.approx(0.5 * HOUR, rel=1e-12)
    # Restart at 3.6 h with 8 h of work left.
    assert r["end"] == pytest.approx(11.6 * HOUR, rel=1e-12)
    # Down time = detection + repair = 1.1 h (the run lasts to 11.6 h).
    assert res.fleet["down_node_hours"][0] == pytest.approx(1.1, rel=1e-12)


def test_requeue_queues_again_in_priority_order() -> None:
    """Two nodes. A (2 nodes, 10 h, priority 0) runs from 0; B (2 nodes, 3 h,
    priority 5) is submitted at 1 h and queues. Node 1 fails at 2.5 h and is
    repaired at 3.5 h. A releases everything and queues again; when node 1
    is back B goes first (3.5 h -> 6.5 h), then A restarts at 6.5 h from its
    2 h checkpoint and ends at 14.5 h."""
    fleet = trace_fleet(2, {1: [2.5 * HOUR]}, repair=HOUR)
    jobs = [job(2, 10 * HOUR), job(2, 3 * HOUR, submit=HOUR, priority=5)]
    res = run(jobs, fleet=fleet, policy=ace.Policy(replacement=ace.Replacement.REQUEUE))
    a, b = res.jobs
    assert a["failures"] == 1 and a["restarts"] == 1
    assert a["wasted"] == pytest.approx(0.5 * HOUR, rel=1e-12)
    assert a["queue_wait"] == 0.0
    assert a["recovery_wait"] == pytest.approx(4 * HOUR, rel=1e-12)  # 2.5 h -> 6.5 h
    assert a["end"] == pytest.approx(14.5 * HOUR, rel=1e-12)
    assert b["failures"] == 0
    assert b["queue_wait"] == pytest.approx(2.5 * HOUR, rel=1e-12)  # 1 h -> 3.5 h
    assert b["end"] == pytest.approx(6.5 * HOUR, rel=1e-12)
    assert np.all(res.jobs["completed"])


def test_quarantine_after_k_failures_in_the_window() -> None:
    """A 2-node job on both nodes; node 0 fails at 1.5 h, 6.2 h and 8.3 h
    (repairs take no time, so the gaps mean the same whether counted from the
    failure or the return). Quarantine: 2 failures within 4 h take a node out
    for 100 h. 1.5 h -> 6.2 h is 4.7 h apart (no quarantine); 6.2 h -> 8.3 h
    is 2.1 h (quarantine at 8.3 h). The job then cannot run again before the
    12 h horizon."""
    fleet = trace_fleet(2, {0: [1.5 * HOUR, 4.7 * HOUR, 2.1 * HOUR]}, repair=0.0)
    policy = ace.Policy(
        replacement=ace.Replacement.SPARES,
        quarantine=ace.Quarantine(failures=2, window=4 * HOUR, duration=100 * HOUR),
    )
    res = run(job(2, 1e3 * HOUR), fleet=fleet, policy=policy, horizon=12 * HOUR)
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 3
    assert f["node_failures"] == 3
    assert f["quarantines"] == 1
    assert f["quarantined_nodes"] == 1
    # Lost: 0.5 h (1.5 - 1), 0.7 h (6.2 - 5.5), 0.1 h (8.3 - 8.2).
    assert r["wasted"] == pytest.approx(1.3 * HOUR, rel=1e-12)
    # Committed at 8.2 h: 1 h + 4 h + 2 h.
    assert r["productive"] == pytest.approx(7 * HOUR, rel=1e-12)
    # Waiting for the quarantined node from 8.3 h to the horizon.
    assert r["recovery_wait"] == pytest.approx(3.7 * HOUR, rel=1e-12)
    assert f["makespan"] == pytest.approx(12 * HOUR, rel=1e-12)
    assert f["quarantined_node_hours"] == pytest.approx(3.7, rel=1e-12)
    assert f["down_node_hours"] == 0.0


# --------------------------------------------------------------------------
# Item 2: node-hours stop at the end of the simulated span
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "horizon, end",
    [
        pytest.param(math.inf, 5 * HOUR, id="last-job-end"),
        pytest.param(4 * HOUR, 4 * HOUR, id="horizon"),
    ],
)
def test_node_hours_stop_at_the_end_of_the_run(horizon: float, end: float) -> None:
    """The idle hot spare (node 1) fails at 2 h: a 10 h repair and a 30-day
    quarantine (one failure suffices). A 1-node job of 5 h runs on node 0.
    The span ends at 5 h (the job's end) or at a 4 h horizon: both figures
    count end - 2 h node-hours."""
    fleet = trace_fleet(2, {1: [2 * HOUR]}, repair=10 * HOUR, spares=1)
    policy = ace.Policy(quarantine=ace.Quarantine(failures=1, window=DAY, duration=30 * DAY))
    res = run(job(1, 5 * HOUR), fleet=fleet, policy=policy, horizon=horizon)
    f = res.fleet[0]
    assert rows_of(res.trace, "job", "node", "time") == [(-1, 1, 2 * HOUR)]
    assert res.jobs[0]["failures"] == 0
    assert f["quarantines"] == 1
    assert f["makespan"] == pytest.approx(end, rel=1e-12)
    span = (end - 2 * HOUR) / HOUR  # 3 h (job end) or 2 h (horizon)
    # Before the fix, ending at the job's end: 720 quarantined and 10 down node-hours.
    assert f["quarantined_node_hours"] == pytest.approx(span, rel=1e-12)
    assert f["down_node_hours"] == pytest.approx(span, rel=1e-12)


# --------------------------------------------------------------------------
# Item 4: WAIT_REPAIR replaces a quarantined node
# --------------------------------------------------------------------------


def test_wait_repair_replaces_a_quarantined_node() -> None:
    """Node 0 under a 1-node job (10 h of work) fails at 2.5 h: a 1 h repair
    and, at its first failure, a 30-day quarantine. The node is out for the
    quarantine, not for a repair, so WAIT_REPAIR takes the idle hot spare at
    once, like SPARES: restart at 2.5 h from 2 h of progress, end 10.5 h."""
    fleet = trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1)
    policy = ace.Policy(
        replacement=ace.Replacement.WAIT_REPAIR,
        quarantine=ace.Quarantine(failures=1, window=DAY, duration=30 * DAY),
    )
    res = run(job(1, 10 * HOUR), fleet=fleet, policy=policy)
    r = res.jobs[0]
    assert r["failures"] == 1
    assert res.fleet["quarantines"][0] == 1
    # Before the fix: 720 h of recovery wait, end 730.5 h, ETTR 10 / 730.5 = 0.0137,
    # no spare used.
    assert r["recovery_wait"] == 0.0
    assert res.fleet["spare_uses"][0] == 1
    assert r["end"] == pytest.approx(10.5 * HOUR, rel=1e-12)
    assert r["ettr"] == pytest.approx(10 / 10.5, rel=1e-12)


# --------------------------------------------------------------------------
# Item 5: no failure process while out of service; fresh draw at return
# --------------------------------------------------------------------------


def test_trace_gaps_count_from_the_return_to_service() -> None:
    """One node, one 1-node job of 20 h (checkpoints hourly). Node gaps
    2.5 h, 3.25 h; repairs 10 h. First failure at 2.5 h (2 h committed, 0.5 h
    lost); the node is back at 12.5 h and its next gap counts from there:
    second failure at 15.75 h (5 h committed at 15.5 h, 0.25 h lost), back at
    25.75 h; the remaining 15 h end the job at 40.75 h."""
    fleet = trace_fleet(1, {0: [2.5 * HOUR, 3.25 * HOUR]}, repair=10 * HOUR)
    res = run(job(1, 20 * HOUR), fleet=fleet)
    r, f = res.jobs[0], res.fleet[0]
    # Before the fix: the second failure strikes the node in repair at 5.75 h (its row
    # has job -1), the repair runs on to 15.75 h, the job fails once, waits
    # 13.25 h and ends at 33.75 h; 13.25 down node-hours.
    assert rows_of(res.trace, "job", "node", "time", "inter_failure") == [
        (0, 0, 2.5 * HOUR, 2.5 * HOUR),
        (0, 0, 15.75 * HOUR, 3.25 * HOUR),
    ]
    assert r["failures"] == 2
    assert f["node_failures"] == 2
    assert r["wasted"] == pytest.approx(0.75 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(20 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(40.75 * HOUR, rel=1e-12)
    assert f["down_node_hours"] == pytest.approx(20.0, rel=1e-12)


def test_constant_failures_and_repairs_closed_form() -> None:
    """One node failing 1 h after each return, repaired in 10 h: cycles of
    exactly 11 h. Over 11 N hours the node fails N times and is down 10 N
    hours, whatever the first gap in (0, 1 h] (fresh or stationary start:
    the N-th repair ends by 11 N). The job on it fails N times and waits
    out each repair."""
    n = 100
    fleet = ace.Fleet(1, repair=ace.Constant(10 * HOUR), node_failures=ace.Constant(HOUR))
    res = run(job(1, 1e6 * HOUR, interval=0.4 * HOUR), fleet=fleet, horizon=11 * n * HOUR)
    r, f = res.jobs[0], res.fleet[0]
    # Before the fix: 1,100 node failures (every hour, repairs or not), 1,099 down
    # node-hours; the job fails once and never runs again.
    assert f["node_failures"] == n
    assert f["down_node_hours"] == pytest.approx(10.0 * n, rel=1e-12)
    assert r["failures"] == n
    assert r["recovery_wait"] == pytest.approx(10 * n * HOUR, rel=1e-12)
    assert np.count_nonzero(res.trace["job"] == 0) == n


def test_exponential_failures_and_repairs_renewal_rate() -> None:
    """Eight nodes, Exponential(1 h) up-times and Exponential(10 h) repairs
    over T = 2000 h (a 1-node job keeps the run going to the horizon). Each
    node alternates up (mean M = 1 h) and down (mean R = 10 h), starting up:
    E[failures] = T / (M + R) + R^2 / (M + R)^2 = 181.82 + 0.83 and
    E[down hours] = T R / (M + R) - M R^2 / (M + R)^2 = 1818.18 - 0.83 per
    node (the second terms: the transient from starting up; a start in the
    stationary up/down state would drop them, well within the tolerance).

    Tolerances: 4 standard errors of the mean over 8 nodes x 4 replicas.
    The alternating renewal count has variance T (sM^2 + sR^2) / (M + R)^3
    = 2000 x 101 / 1331 = 151.8 per node (sd 12.3; se 2.18 over 32 nodes);
    the down time T (M^2 sR^2 + R^2 sM^2) / (M + R)^3 = 300.5 h^2 (sd 17.3 h;
    se 3.06 h)."""
    m, rep, t = 1.0, 10.0, 2000.0
    nodes, replicas = 8, 4
    fleet = ace.Fleet(
        nodes, repair=ace.Exponential(rep * HOUR), node_failures=ace.Exponential(m * HOUR)
    )
    res = run(job(1, 1e6 * HOUR), fleet=fleet, horizon=t * HOUR, replicas=replicas, seed=7105)
    assert np.all(res.fleet["makespan"] == t * HOUR)
    count = res.fleet["node_failures"].sum() / (nodes * replicas)
    down = res.fleet["down_node_hours"].sum() / (nodes * replicas)
    expected_count = t / (m + rep) + rep**2 / (m + rep) ** 2
    expected_down = t * rep / (m + rep) - m * rep**2 / (m + rep) ** 2
    se_count = math.sqrt(t * (m**2 + rep**2) / (m + rep) ** 3 / (nodes * replicas))
    se_down = math.sqrt(t * 2 * m**2 * rep**2 / (m + rep) ** 3 / (nodes * replicas))
    # Before the fix: 1,995 failures and 1,998.6 down hours per node (it fails every
    # hour whether up or down, and every failure restarts the repair).
    assert abs(count - expected_count) < 4 * se_count, (count, expected_count)
    assert abs(down - expected_down) < 4 * se_down, (down, expected_down)


# --------------------------------------------------------------------------
# Item 6: job-level and node-level sources are independent
# --------------------------------------------------------------------------


def test_node_failure_keeps_the_pending_job_level_failure() -> None:
    """One node, a 1-node job of 20 h; job-level law Replay([5 h]) (held
    time), node 0 fails at 2.5 h, repairs 1 h, WAIT_REPAIR. The node failure
    leaves 2.5 h of held time to the job-level failure; the clock pauses
    while the job waits (2.5 h -> 3.5 h), so the job-level failure comes at
    3.5 + 2.5 = 6 h (4 h committed at 5.5 h, 0.5 h lost). Its blamed node is
    repaired by 7 h; the remaining 16 h end the job at 23 h."""
    fleet = trace_fleet(1, {0: [2.5 * HOUR]}, repair=HOUR)
    res = run(
        job(1, 20 * HOUR),
        failures=ace.Replay([5 * HOUR]),
        fleet=fleet,
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
    )
    r = res.jobs[0]
    # Before the fix: the node failure draws the job's next job-level gap (none left),
    # so the job fails once and ends at 21.5 h.
    assert rows_of(res.trace, "job", "source", "time", "inter_failure") == [
        (0, 1, 2.5 * HOUR, 2.5 * HOUR),
        (0, 0, 6 * HOUR, 5 * HOUR),
    ]
    assert r["failures"] == 2
    assert r["wasted"] == pytest.approx(1.0 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(2 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(23 * HOUR, rel=1e-12)


def test_superposed_failure_count_is_the_sum_of_the_rates() -> None:
    """A 4-node job with 4 hot spares and 10-minute repairs (never short of
    a node, no detection latency: it holds hardware the whole 200 days).
    Job-level law Weibull(shape 2) of mean Mj = 1 day (not memoryless, so a
    redraw at each node failure would change its count); nodes fail as
    Exponential(4 days), 1 per day for the job. Expected per source over the
    held time H: H / Mj job-level (a renewal count; its start-up bias
    (CV^2 - 1) / 2 = -0.36 per replica is negligible) and 4 H / Mn
    node-level, about 1,600 each over 8 replicas.

    Tolerances, 4 standard errors: job-level renewal count variance
    H CV^2 / Mj (CV^2 = 4 / pi - 1 = 0.273; sd about 21), node-level
    Poisson (sd 40), the total their sum in quadrature."""
    mj, mn, nodes = DAY, 4 * DAY, 4
    shape = 2.0
    scale = mj / math.gamma(1 + 1 / shape)
    cv2 = math.gamma(1 + 2 / shape) / math.gamma(1 + 1 / shape) ** 2 - 1
    fleet = ace.Fleet(
        nodes + 4,
        spares=4,
        repair=ace.Constant(10 * MINUTE),
        node_failures=ace.Exponential(mn),
    )
    res = run(
        job(nodes, 1e6 * DAY),
        failures=ace.Weibull(shape, scale),
        fleet=fleet,
        horizon=200 * DAY,
        replicas=8,
        seed=7106,
        threads=2,
    )
    rows = res.jobs
    assert np.all(rows["recovery_wait"] == 0.0) and np.all(rows["detection"] == 0.0)
    held = float(np.sum(rows["wall"] - rows["recovery_wait"] - rows["detection"]))
    trace = res.trace[res.trace["job"] >= 0]
    job_level = np.count_nonzero(trace["source"] == 0)
    node_level = np.count_nonzero(trace["source"] == 1)
    assert job_level + node_level == rows["failures"].sum()
    e_job, e_node = held / mj, nodes * held / mn
    sd_job, sd_node = math.sqrt(e_job * cv2), math.sqrt(e_node)
    # Before the fix: 1,132 job-level failures against 1,600 (the pending draw is
    # renewed by every node failure); node-level 1,640, as expected.
    assert abs(node_level - e_node) < 4 * sd_node, (node_level, e_node)
    assert abs(job_level - e_job) < 4 * sd_job, (job_level, e_job)
    total = job_level + node_level
    assert abs(total - (e_job + e_node)) < 4 * math.hypot(sd_job, sd_node)


# --------------------------------------------------------------------------
# Item 8: trace rows and failure counts agree
# --------------------------------------------------------------------------


def test_strike_during_detection_is_not_the_jobs_failure() -> None:
    """A 2-node job on both nodes; node 0 fails at 2.5 h, seen at 2.6 h;
    node 1 fails at 2.55 h, while the job is still detecting: that strike
    does not interrupt the job (it is not running) and its row has job -1.
    Both nodes back after detection + 1 h repair (3.6 h, 3.65 h): restart at
    3.65 h from 2 h of progress, end at 11.65 h."""
    fleet = trace_fleet(2, {0: [2.5 * HOUR], 1: [2.55 * HOUR]}, repair=HOUR)
    res = run(job(2, 10 * HOUR), fleet=fleet, causes=SIX_MINUTES)
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 1
    assert f["node_failures"] == 2
    assert r["detection"] == pytest.approx(0.1 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(1.05 * HOUR, rel=1e-12)  # 2.6 h -> 3.65 h
    assert r["end"] == pytest.approx(11.65 * HOUR, rel=1e-12)
    assert f["down_node_hours"] == pytest.approx(2.2, rel=1e-12)
    # Before the fix the second row names job 0: 2 rows for 1 counted failure.
    assert rows_of(res.trace, "event", "job", "node", "time") == [
        (0, 0, 0, 2.5 * HOUR),
        (1, -1, 1, 2.55 * HOUR),
    ]
    assert np.count_nonzero(res.trace["job"] == 0) == r["failures"]


def mixed_jobs() -> list[ace.Job]:
    return [
        ace.Job(32, work=10 * DAY, checkpoint_interval=HOUR, priority=2),
        ace.Job(24, work=8 * DAY, checkpoint_interval=2 * HOUR, priority=1),
        ace.Job(16, work=6 * DAY, checkpoint_interval=30 * MINUTE, submit=HOUR),
        ace.Job(4, work=3 * DAY, checkpoint_interval=HOUR, submit=2 * HOUR),
        ace.Job(8, work=12 * DAY, checkpoint_interval=HOUR, submit=DAY),
        ace.Job(40, work=5 * DAY, checkpoint_interval=HOUR, submit=3 * DAY, priority=3),
    ]


@pytest.mark.parametrize("replacement", list(ace.Replacement), ids=lambda p: p.name)
def test_trace_rows_match_failure_counts(replacement: ace.Replacement) -> None:
    """A 16-node fleet (1 spare) with node failures once a day per node,
    4-hour repairs, job-level failures too, and the Llama 3 causes (hangs
    seen after 10 minutes, silent corruption after an hour): per replica and
    job, the trace rows naming a job are exactly its counted failures. Before the fix
    every policy writes extra rows (of about 1,060 failures over 8 replicas:
    56 under SPARES, 513 under WAIT_REPAIR, 8 under PREEMPT_LOWER, 9 under
    REQUEUE), from strikes during detection and on nodes a waiting job
    holds."""
    fleet = ace.Fleet(
        16, spares=1, repair=ace.Exponential(4 * HOUR), node_failures=ace.Exponential(DAY)
    )
    replicas = 8
    res = run(
        mixed_jobs(),
        failures=ace.Exponential(10 * DAY),
        fleet=fleet,
        causes=ace.LLAMA3_CAUSES,
        policy=ace.Policy(replacement=replacement),
        replicas=replicas,
        seed=7108,
        horizon=30 * DAY,
        threads=2,
    )
    jobs = len(mixed_jobs())
    assert res.jobs["failures"].sum() > 400  # about 470: enough strikes in detection and waits
    assert np.any(res.trace["source"] == 0) and np.any(res.trace["source"] == 1)
    for r in range(replicas):
        t = res.trace[(res.trace["replica"] == r) & (res.trace["job"] >= 0)]
        rows = res.jobs[res.jobs["replica"] == r]
        per_job = np.bincount(t["job"], minlength=jobs)
        np.testing.assert_array_equal(per_job, rows["failures"], err_msg=f"replica {r}")
        assert res.fleet["failures"][r] == rows["failures"].sum()


def test_a_node_left_in_service_keeps_failing() -> None:
    """A cause that leaves the node in service (``node_down=False``, a
    software fault) renews the node's process at once: one node failing
    every 10 h (constant gaps) fails 19 times in 199 h, whatever the cause.
    With ``node_down=True`` and 1 h repairs the cycle is 11 h: 18 failures.
    Before the fix: one failure, then never again (the process waited for a
    return to service that never came)."""
    for down, count in ((False, 19), (True, 18)):
        fleet = ace.Fleet(
            1,
            repair=ace.Constant(HOUR),
            node_failures=ace.Constant(10 * HOUR),
            node_start="fresh",
        )
        res = run(
            job(1, 1e3 * HOUR),
            fleet=fleet,
            causes=[ace.Cause("fault", 1.0, node_down=down)],
            horizon=199 * HOUR,
        )
        assert res.fleet["node_failures"][0] == count, down
        assert res.jobs["failures"][0] == count, down


def test_a_replayed_failure_pending_over_a_maintenance_window_still_fires() -> None:
    """A recorded failure of node 0 at 5 h, and a maintenance window 1-2 h on
    it: the node is back in service at 2 h, so the recorded failure (still
    ahead) strikes at 5 h; one that fell inside the window would be skipped."""
    hour = 3600.0
    for recorded, fires in (([5 * hour], [5 * hour]), ([1.5 * hour, 5 * hour], [5 * hour])):
        fleet = ace.Fleet(
            2,
            node_failures=ace.NodeTrace.from_times({0: recorded}, 2),
            maintenance=[(hour, hour, [0])],
            repair=ace.Constant(hour),
        )
        res = ace.simulate([ace.Job(8, 10 * hour, hour)], fleet=fleet, check_invariants=True)
        assert res.trace["time"][res.trace["node"] == 0].tolist() == fires


def test_rows_of_a_job_done_and_of_one_never_submitted() -> None:
    """The engine holds a job's state only while it is live: its row is
    written to the output when it ends, and a job submitted after the
    horizon is opened only to be closed. Two nodes, horizon 8,000 s. Job 0
    (2 h of work, 1 h interval, 60 s writes, no init or load) is done at
    7,200 + 2 x 60 = 7,320 s with two checkpoints, progress 7,200 s and its
    interval; job 1, submitted at 10,000 s, closes NOT_SUBMITTED with wall 0
    at its submission time and its planned interval. The fleet's makespan
    leaves job 1 out: 7,320 s."""
    jobs = [job(1, 2 * HOUR, save=ace.Constant(60.0)), job(1, HOUR, submit=10000.0)]
    res = run(jobs, fleet=trace_fleet(2, {}), horizon=8000.0)
    done, late = res.jobs
    assert done["status"] == int(ace.JobStatus.DONE) and done["completed"]
    assert (done["end"], done["wall"], done["checkpoints"]) == (7320.0, 7320.0, 2)
    assert (done["progress"], done["checkpoint_interval"]) == (7200.0, HOUR)
    assert (done["productive"], done["ckpt_stall"]) == (7200.0, 120.0)
    assert late["status"] == int(ace.JobStatus.NOT_SUBMITTED) and not late["completed"]
    assert (late["submit"], late["end"], late["wall"]) == (10000.0, 10000.0, 0.0)
    assert (late["progress"], late["checkpoint_interval"]) == (0.0, HOUR)
    f = res.fleet[0]
    assert (f["jobs"], f["jobs_completed"], f["makespan"], f["checkpoints"]) == (2, 1, 7320.0, 2)


def test_a_node_holding_more_jobs_than_it_keeps_inline() -> None:
    """Two nodes of 16 GPUs and twenty 1-GPU jobs (10 h of work, hourly
    checkpoints): jobs 0-15 fill node 1, jobs 16-19 go to node 0 (a node
    lists up to 8 jobs in itself, more in a vector). Node 1 fails at 2.5 h
    and WAIT_REPAIR waits the 1 h repair: each of its 16 jobs loses the
    0.5 h since its 2 h checkpoint, waits 1 h and ends at 10 + 0.5 + 1 =
    11.5 h; the four on node 0 end at 10 h. The failure hits the 16 in job
    order, and all 16 return to node 1."""
    jobs = [ace.Job(1, 10 * HOUR, HOUR, init=ZERO, save=ZERO, load=ZERO) for _ in range(20)]
    fleet = trace_fleet(2, {1: [2.5 * HOUR]}, repair=HOUR, gpus_per_node=16)
    res = run(
        jobs,
        fleet=fleet,
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
        record_events=True,
    )
    rows = res.jobs
    hit, spared = rows[:16], rows[16:]
    assert rows_of(res.trace, "job", "node", "time") == [(j, 1, 2.5 * HOUR) for j in range(16)]
    assert np.all(hit["end"] == 11.5 * HOUR) and np.all(hit["failures"] == 1)
    assert np.all(hit["wasted"] == 0.5 * HOUR) and np.all(hit["recovery_wait"] == HOUR)
    assert np.all(spared["end"] == 10 * HOUR) and np.all(spared["failures"] == 0)
    restarts = res.placements[res.placements["time"] == 3.5 * HOUR]
    assert sorted(restarts["job"].tolist()) == list(range(16))
    assert set(restarts["node"].tolist()) == {1}


def test_a_large_job_keeps_its_node_order_through_spare_swaps() -> None:
    """A 130-node job (10 h of work, hourly checkpoints) on 133 nodes with 3
    hot spares holds nodes 129, 128, ..., 0 in that order. SPARES swaps out
    node 29 at 2.5 h (position 100, in the list's second block of 64), node
    0 at 4.25 h (position 128, past the whole blocks) and node 9 at 6.75 h
    (position 119 once node 29 is out). Each failed node leaves the list,
    the others keep their order, and the spare (130, 131, 132) joins at the
    end. The job loses 0.5 h (2.5 h, checkpoint at 2 h), 0.75 h (4.25 h,
    checkpoint at 3.5 h) and 0.5 h (6.75 h, checkpoint at 6.25 h): 1.75 h
    wasted, done at 11.75 h."""
    fleet = trace_fleet(
        133, {29: [2.5 * HOUR], 0: [4.25 * HOUR], 9: [6.75 * HOUR]}, repair=10 * HOUR, spares=3
    )
    res = run(
        [job(130, 10 * HOUR)],
        fleet=fleet,
        policy=ace.Policy(replacement=ace.Replacement.SPARES),
        record_events=True,
    )
    order = list(range(129, -1, -1))
    expected = {0.0: order}
    for at, failed, spare in ((2.5, 29, 130), (4.25, 0, 131), (6.75, 9, 132)):
        order = [n for n in order if n != failed] + [spare]
        expected[at * HOUR] = order
    starts = res.placements
    assert {t: starts[starts["time"] == t]["node"].tolist() for t in expected} == expected
    assert len(starts) == 4 * 130
    assert rows_of(res.trace, "job", "node", "time") == [
        (0, 29, 2.5 * HOUR),
        (0, 0, 4.25 * HOUR),
        (0, 9, 6.75 * HOUR),
    ]
    row = res.jobs[0]
    assert row["end"] == 11.75 * HOUR and row["wasted"] == 1.75 * HOUR
    assert row["failures"] == 3 and row["checkpoints"] == 10


def test_a_job_that_holds_no_node_gives_its_slots_to_the_next_job() -> None:
    """Two nodes, WAIT_REPAIR. A (1 node, 4 h, hourly checkpoints) takes
    node 1; node 1 fails at 1.5 h and is back at 2.5 h. A, holding no node
    while it waits, gives its slice of held-node slots back; B (1 node, 1 h,
    submitted at 1.75 h) starts on node 0 with that slice. A resumes on
    node 1 at 2.5 h with a new one while B still holds its own; B ends at
    2.75 h and C (1 node, 1 h, submitted at 3 h) takes node 0 and B's
    slice. A loses 0.5 h (since its 1 h checkpoint) and waits 1 h: done at
    5.5 h; B at 2.75 h, C at 4 h. Each start lists the node it took."""
    fleet = trace_fleet(2, {1: [1.5 * HOUR]}, repair=HOUR)
    jobs = [job(1, 4 * HOUR), job(1, HOUR, submit=1.75 * HOUR), job(1, HOUR, submit=3 * HOUR)]
    res = run(
        jobs,
        fleet=fleet,
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
        record_events=True,
    )
    assert rows_of(res.placements, "job", "node", "time") == [
        (0, 1, 0.0),
        (1, 0, 1.75 * HOUR),
        (0, 1, 2.5 * HOUR),
        (2, 0, 3 * HOUR),
    ]
    assert res.jobs["end"].tolist() == [5.5 * HOUR, 2.75 * HOUR, 4 * HOUR]
    assert res.jobs["wasted"].tolist() == [0.5 * HOUR, 0.0, 0.0]
    assert res.jobs["recovery_wait"].tolist() == [HOUR, 0.0, 0.0]


def test_slices_wider_than_a_default_chunk_of_slots() -> None:
    """Slices are 2^16 slots per chunk unless the fleet is wider, and a
    slice never straddles two chunks. On 70,001 nodes, A and B (70,000
    nodes, 1 h each) run one after the other (B reuses A's slice) while C
    (1 node, 3 h) runs on the node left over from 0 h: A ends at 1 h, B at
    2 h after waiting 1 h, C at 3 h."""
    fleet = ace.Fleet(70_001, node_failures=ace.NodeTrace.from_gaps({}, nodes=70_001))
    jobs = [job(70_000, HOUR), job(70_000, HOUR), job(1, 3 * HOUR)]
    res = ace.simulate(jobs, fleet=fleet, threads=1)
    assert res.jobs["end"].tolist() == [HOUR, 2 * HOUR, 3 * HOUR]
    assert res.jobs["queue_wait"].tolist() == [0.0, HOUR, 0.0]
