"""Cold spares (``Fleet(cold_spares=, cold_spare_delay=)``) and the
re-placement cost (``Policy(replacement_delay=)``), issue 7 section 3,
against figures worked out by hand, closed forms and a small independent
SimPy model.

Semantics asserted (see the docstrings of ``ace.Fleet`` and ``ace.Policy``):

- Cold spares are counted in ``nodes``: the last ``spares`` nodes are hot
  spares, the ``cold_spares`` before them cold spares; jobs use the first
  ``nodes - spares - cold_spares``. A cold spare never serves a start from
  the queue.
- A recovering job takes, all or nothing, hot spares, then free nodes, then
  cold spares (before any victim under PREEMPT_LOWER). A cold spare is in
  acquisition for a draw of ``cold_spare_delay`` (the node's own stream); the
  job waits (``recovery_wait``) until every node is there. Any number of
  cold spares may be in acquisition at once.
- A node that becomes available during the acquisition (a repaired node, a
  node freed by another job) is taken instead; the acquisition that would
  end last is cancelled and its node is an idle cold spare again. A cold
  spare that fails during its acquisition cancels it too.
- A cold spare is borrowed: once released (its job ends or moves, or it
  returns from repair) it goes back to the cold reserve.
- ``res.fleet["cold_spare_uses"]`` counts completed acquisitions.
- ``replacement_delay`` is paid once per re-placement (a recovery that takes
  at least one node the job did not hold), when the job has all its nodes,
  before init + load; it counts as ``recovery_wait``. Not paid for a restart
  in place, under WAIT_REPAIR when the job gets its own node back, or by a
  start from the queue.

Hand cases use constant laws (init, save and load explicitly zero unless
said), failures placed with ``NodeTrace.from_gaps`` or ``Replay``, and times
that never tie with a checkpoint. Every run checks the engine's invariants
and the accounting identity of every job row.
"""

from __future__ import annotations

import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
import simpy
from hand_cases import DAY, HOUR, MINUTE, job, run, trace_fleet


def events_of(res: ace.SimulationResult, j: int = 0) -> list[tuple[str, float]]:
    """Job j's event log as (kind name, time)."""
    kinds = getattr(ace, "EventKind", ace._core.EventKind)
    ev = res.events[res.events["job"] == j]
    return [(kinds(int(k)).name, float(t)) for k, t in zip(ev["kind"], ev["time"], strict=True)]


def h(x: float) -> Any:
    """``x`` hours, compared to 1e-12 relative."""
    return pytest.approx(x * HOUR, rel=1e-12, abs=1e-9)


# --------------------------------------------------------------------------
# Cold spares: hand cases
# --------------------------------------------------------------------------


def test_a_cold_spare_makes_the_job_wait_exactly_its_delay() -> None:
    """Two nodes: node 0 runs a 1-node job (10 h of work, hourly checkpoints),
    node 1 is a cold spare (30 min to acquire). Node 0 fails at 2.5 h (10 h
    repair). No hot spare, no free node: the job acquires node 1 and waits
    30 min, restarts at 3.0 h from 2 h of progress and ends at 11.0 h."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2, {0: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        record_events=True,
    )
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 1 and r["restarts"] == 1
    assert r["recovery_wait"] == h(0.5)  # the acquisition delay
    assert r["wasted"] == h(0.5)  # 2.5 h - checkpoint at 2 h
    assert r["end"] == h(11.0)
    assert r["productive"] == h(10.0)
    assert f["cold_spare_uses"] == 1 and f["spare_uses"] == 0
    # Node 0 under repair from 2.5 h to the end of the run at 11 h.
    assert f["down_node_hours"] == pytest.approx(8.5, rel=1e-12)
    ev = events_of(res)
    assert ("WAITING", 2.5 * HOUR) in ev
    starts = [t for k, t in ev if k == "START_BEGIN"]
    assert starts == [0.0, pytest.approx(3.0 * HOUR, rel=1e-12)]


def test_cold_spares_never_serve_a_start_from_the_queue() -> None:
    """Three nodes, node 2 a cold spare, no failures. A and B (1 node, 4 h)
    take nodes 0 and 1; C (1 node, 1 h) queues although node 2 sits idle,
    and starts at 4 h when A and B end."""
    jobs = [job(1, 4 * HOUR), job(1, 4 * HOUR), job(1, HOUR)]
    res = run(jobs, fleet=trace_fleet(3, {}, repair=HOUR, cold_spares=1, cold_spare_delay=MINUTE))
    c = res.jobs[2]
    assert c["queue_wait"] == h(4.0)
    assert c["end"] == h(5.0)
    assert res.fleet["cold_spare_uses"][0] == 0


def test_a_hot_spare_is_preferred_over_a_cold_one() -> None:
    """Three nodes: node 0 runs the job, node 1 is a cold spare, node 2 a hot
    spare. Node 0 fails at 2.5 h: the job takes the hot spare at once (no
    wait, no acquisition) and ends at 10.5 h."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            3,
            {0: [2.5 * HOUR]},
            repair=10 * HOUR,
            spares=1,
            cold_spares=1,
            cold_spare_delay=30 * MINUTE,
        ),
    )
    r, f = res.jobs[0], res.fleet[0]
    assert r["recovery_wait"] == 0.0
    assert r["end"] == h(10.5)
    assert f["spare_uses"] == 1 and f["cold_spare_uses"] == 0


def test_two_lost_nodes_take_the_hot_spare_and_acquire_a_cold_one() -> None:
    """Four nodes: a 2-node job on nodes 0 and 1, node 2 cold, node 3 hot. A
    switch failure (a 2-node block) takes nodes 0 and 1 at 2.5 h. The job
    takes the hot spare at once and acquires the cold spare: it waits the
    30 min acquisition, restarts at 3.0 h and ends at 11.0 h."""
    res = run(
        job(2, 10 * HOUR),
        fleet=trace_fleet(
            4,
            {0: [2.5 * HOUR]},
            repair=10 * HOUR,
            spares=1,
            cold_spares=1,
            cold_spare_delay=30 * MINUTE,
        ),
        causes=[ace.Cause("switch", 1.0, nodes=2)],
    )
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 1
    assert f["node_failures"] == 2
    assert r["recovery_wait"] == h(0.5)
    assert r["end"] == h(11.0)
    assert f["spare_uses"] == 1 and f["cold_spare_uses"] == 1


def test_two_cold_spares_are_acquired_at_once() -> None:
    """Four nodes: a 2-node job on nodes 0 and 1, nodes 2 and 3 cold spares
    (30 min each). The 2-node block fails at 2.5 h: both acquisitions run at
    once, so the job waits 30 min, not 60, and ends at 11.0 h."""
    res = run(
        job(2, 10 * HOUR),
        fleet=trace_fleet(
            4, {0: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=2, cold_spare_delay=30 * MINUTE
        ),
        causes=[ace.Cause("switch", 1.0, nodes=2)],
    )
    r, f = res.jobs[0], res.fleet[0]
    assert r["recovery_wait"] == h(0.5)
    assert r["end"] == h(11.0)
    assert f["cold_spare_uses"] == 2


def test_a_repair_back_before_the_acquisition_ends_is_taken_instead() -> None:
    """Two nodes, node 1 a cold spare with a 2 h acquisition. Node 0 fails at
    2.5 h; its first repair takes 0.5 h, its second 10 h (a Replay law on its
    repair stream).

    - 2.5 h: the job acquires node 1 (due at 4.5 h). Node 0 is back at 3.0 h:
      the job takes it and the acquisition is cancelled (no use counted);
      restart at 3.0 h from 2 h of progress. Wait 0.5 h.
    - Node 0's next gap (counted from its return) is 3.25 h: it fails at
      6.25 h, 0.25 h after the 5 h checkpoint (at 6.0 h). Node 1 is an idle
      cold spare again, so the job acquires it: due at 8.25 h, before node 0
      is back (16.25 h). Restart at 8.25 h from 5 h: end 13.25 h. Wait 2 h.
    """
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2,
            {0: [2.5 * HOUR, 3.25 * HOUR]},
            repair=ace.Replay([0.5 * HOUR, 10 * HOUR]),
            cold_spares=1,
            cold_spare_delay=2 * HOUR,
        ),
        record_events=True,
    )
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 2
    assert r["wasted"] == h(0.5 + 0.25)
    assert r["recovery_wait"] == h(0.5 + 2.0)
    assert r["end"] == h(13.25)
    assert f["cold_spare_uses"] == 1  # the first acquisition was cancelled
    starts = [t for k, t in events_of(res) if k == "START_BEGIN"]
    assert starts == [0.0, pytest.approx(3.0 * HOUR), pytest.approx(8.25 * HOUR)]


def test_a_cold_spare_that_fails_during_its_acquisition() -> None:
    """Two nodes, node 1 cold (2 h to acquire), 10 h repairs. Node 0 fails at
    2.5 h and the job acquires node 1 (due 4.5 h); node 1 fails at 3.5 h: the
    acquisition is cancelled and node 1 goes to repair (an idle node's trace
    row, job -1). The job waits for the first node back: node 0 at 12.5 h
    (a free node: no acquisition). Restart from 2 h of progress: end 20.5 h.
    Node 1 is back at 13.5 h, in the cold reserve."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2,
            {0: [2.5 * HOUR], 1: [3.5 * HOUR]},
            repair=10 * HOUR,
            cold_spares=1,
            cold_spare_delay=2 * HOUR,
        ),
    )
    r, f = res.jobs[0], res.fleet[0]
    assert [(int(t["job"]), int(t["node"])) for t in res.trace] == [(0, 0), (-1, 1)]
    assert r["failures"] == 1
    assert r["recovery_wait"] == h(10.0)  # 2.5 h -> 12.5 h
    assert r["end"] == h(20.5)
    assert f["cold_spare_uses"] == 0
    # Node 0: 2.5 h -> 12.5 h; node 1: 3.5 h -> 13.5 h.
    assert f["down_node_hours"] == pytest.approx(20.0, rel=1e-12)


def test_a_used_cold_spare_goes_back_to_the_cold_reserve() -> None:
    """Three nodes: A (1 node, 10 h) on node 1, B (1 node, 3 h) on node 0,
    node 2 cold (30 min). Node 1 fails at 2.5 h (10 h repair) while B still
    runs: A acquires node 2 and restarts at 3.0 h (ends 11.0 h, releasing
    it). B ends at 3 h. At 12 h C and D (1 node, 1 h each) arrive: C takes
    node 0; node 2 is back in the cold reserve (not a free node), so D waits
    for node 1's return at 12.5 h."""
    jobs = [
        job(1, 10 * HOUR),
        job(1, 3 * HOUR),
        job(1, HOUR, submit=12 * HOUR),
        job(1, HOUR, submit=12 * HOUR),
    ]
    res = run(
        jobs,
        fleet=trace_fleet(
            3, {1: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
    )
    a, b, c, d = res.jobs
    assert a["recovery_wait"] == h(0.5) and a["end"] == h(11.0)
    assert b["end"] == h(3.0)
    assert c["queue_wait"] == 0.0 and c["end"] == h(13.0)
    assert d["queue_wait"] == h(0.5) and d["end"] == h(13.5)
    assert res.fleet["cold_spare_uses"][0] == 1


def test_preempt_lower_acquires_a_cold_spare_before_preempting() -> None:
    """Three nodes, node 2 cold (30 min). H (1 node, priority 5, 10 h) and L
    (1 node, priority 0, 12 h) start at 0; the scheduler gives H node 1 and L
    node 0. Node 1 fails at 2.5 h. Under PREEMPT_LOWER H acquires the cold
    spare rather than preempt L: it waits 30 min and L is never preempted.
    Without the cold spare (a 2-node fleet) H preempts L at 2.5 h."""
    jobs = [job(1, 10 * HOUR, priority=5), job(1, 12 * HOUR)]
    policy = ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER)
    res = run(
        jobs,
        fleet=trace_fleet(
            3, {1: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        policy=policy,
    )
    hi, lo = res.jobs
    assert hi["failures"] == 1 and hi["recovery_wait"] == h(0.5) and hi["end"] == h(11.0)
    assert lo["preemptions"] == 0 and lo["end"] == h(12.0)
    assert hi["churn_gpu_hours"] == 0.0
    assert res.fleet["cold_spare_uses"][0] == 1
    hot = run(jobs, fleet=trace_fleet(2, {1: [2.5 * HOUR]}, repair=10 * HOUR), policy=policy)
    assert hot.jobs["preemptions"][1] == 1
    assert hot.jobs["recovery_wait"][0] == 0.0


def test_wait_repair_replaces_a_quarantined_node_with_a_cold_spare() -> None:
    """WAIT_REPAIR waits only for a node under repair; a quarantined node is
    replaced like under SPARES, here by the cold spare: node 0 fails at
    2.5 h and is quarantined at once (30 days); the job acquires node 1 and
    waits its 30 min."""
    policy = ace.Policy(
        replacement=ace.Replacement.WAIT_REPAIR,
        quarantine=ace.Quarantine(failures=1, window=DAY, duration=30 * DAY),
    )
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2, {0: [2.5 * HOUR]}, repair=HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        policy=policy,
    )
    r = res.jobs[0]
    assert r["recovery_wait"] == h(0.5)
    assert r["end"] == h(11.0)
    assert res.fleet["cold_spare_uses"][0] == 1


# --------------------------------------------------------------------------
# Cold spares with the node clocks, maintenance and retirement
# --------------------------------------------------------------------------


def test_retirement_counts_cold_spares_for_recovering_jobs_only() -> None:
    """Three nodes, node 2 cold (30 min); a node retires at its first
    failure. A (2 nodes, 10 h) runs on nodes 0 and 1; B (2 nodes) waits in
    the queue. Node 0 fails at 2.5 h and retires: the fleet's own nodes
    left (node 1) can never hold B, which is closed then (queue wait 2.5 h);
    A, recovering, may take the cold spare: it waits 30 min and restarts at
    3.0 h from 2 h of progress, ending at 11.0 h."""
    f = ace.Fleet(
        3,
        repair=ace.Constant(10 * HOUR),
        node_failures=ace.NodeTrace.from_gaps({0: [2.5 * HOUR]}, nodes=3),
        cold_spares=1,
        cold_spare_delay=30 * MINUTE,
    )
    res = run(
        [job(2, 10 * HOUR), job(2, HOUR)],
        fleet=f,
        policy=ace.Policy(quarantine=ace.Quarantine(1, DAY, math.inf)),
    )
    a, b = res.jobs
    assert a["status"] == int(ace.JobStatus.DONE)
    assert a["recovery_wait"] == h(0.5)
    assert a["wasted"] == h(0.5)
    assert a["end"] == h(11.0)
    assert b["status"] == int(ace.JobStatus.UNPLACEABLE)
    assert b["queue_wait"] == h(2.5)
    assert b["wall"] == h(2.5)
    assert res.fleet["retired_nodes"][0] == 1
    assert res.fleet["cold_spare_uses"][0] == 1


def test_a_busy_clock_pauses_an_idle_cold_spare_and_its_acquisition() -> None:
    """node_clock="busy", two nodes, node 1 cold (30 min), 10 h repairs. Node
    0 fails after 2.5 h busy; node 1's first gap is 1.25 h of busy time. The
    job acquires node 1 at 2.5 h; its clock runs only from its arrival at
    3.0 h (not while idle, nor in acquisition): it fails at 4.25 h, 3 h of
    progress kept (the 4.0 h checkpoint), 0.25 h lost. The job waits for
    node 0 (back at 12.5 h), restarts then with 7 h left and ends at 19.5 h."""
    f = ace.Fleet(
        2,
        repair=ace.Constant(10 * HOUR),
        node_failures=ace.NodeTrace.from_gaps({0: [2.5 * HOUR], 1: [1.25 * HOUR]}, nodes=2),
        cold_spares=1,
        cold_spare_delay=30 * MINUTE,
        node_clock="busy",
    )
    res = run(job(1, 10 * HOUR), fleet=f)
    r = res.jobs[0]
    assert [(int(t["node"]), float(t["time"])) for t in res.trace] == [(0, h(2.5)), (1, h(4.25))]
    assert r["failures"] == 2
    assert r["wasted"] == h(0.75)
    assert r["recovery_wait"] == h(0.5 + 8.25)
    assert r["end"] == h(19.5)
    assert res.fleet["cold_spare_uses"][0] == 1


def test_maintenance_of_a_cold_spare_in_acquisition_cancels_it() -> None:
    """Two nodes, node 1 cold (1 h), 10 h repairs, a maintenance window on
    node 1 from 3 h to 5 h. Node 0 fails at 2.5 h: the job acquires node 1
    (due 3.5 h); the window drains it at 3 h, which cancels the acquisition.
    Node 1 is back in the cold reserve at 5 h and acquired again (due 6 h):
    restart at 6 h from 2 h of progress, end at 14 h; one use counted."""
    f = ace.Fleet(
        2,
        repair=ace.Constant(10 * HOUR),
        node_failures=ace.NodeTrace.from_gaps({0: [2.5 * HOUR]}, nodes=2),
        cold_spares=1,
        cold_spare_delay=HOUR,
        maintenance=[(3 * HOUR, 2 * HOUR, [1])],
    )
    res = run(job(1, 10 * HOUR), fleet=f, record_events=True)
    r = res.jobs[0]
    assert r["planned_interruptions"] == 0
    assert r["recovery_wait"] == h(3.5)
    assert r["wasted"] == h(0.5)
    assert r["end"] == h(14.0)
    starts = [(k, t) for k, t in events_of(res) if k in ("START_BEGIN", "WAITING", "DONE")]
    assert starts == [
        ("START_BEGIN", 0.0),
        ("WAITING", h(2.5)),
        ("START_BEGIN", h(6.0)),
        ("DONE", h(14.0)),
    ]
    assert res.fleet["cold_spare_uses"][0] == 1
    assert res.fleet["maintenance_node_hours"][0] == pytest.approx(2.0)


def test_a_planned_stop_pays_the_replacement_delay() -> None:
    """Two nodes that never fail, a 20 min re-placement delay, a window on
    node 1 from 2.5 h to 7.5 h. The job (on node 1, the scheduler's last
    free node; hourly checkpoints, zero writes) writes its drain checkpoint
    at 2.5 h, is stopped then and recovers on the free node 0: a
    re-placement, so it waits 20 min and ends at 2.5 + 1/3 + 7.5 h."""
    f = ace.Fleet(
        2,
        node_failures=ace.NodeTrace.from_gaps({0: [100 * DAY]}, nodes=2),
        maintenance=[(2.5 * HOUR, 5 * HOUR, [1])],
    )
    res = run(job(1, 10 * HOUR), fleet=f, policy=ace.Policy(replacement_delay=20 * MINUTE))
    r = res.jobs[0]
    assert r["planned_interruptions"] == 1
    assert r["wasted"] == 0.0
    assert r["recovery_wait"] == h(1 / 3)
    assert r["end"] == h(2.5 + 1 / 3 + 7.5)


# --------------------------------------------------------------------------
# Cold spares: statistical checks against closed forms
# --------------------------------------------------------------------------


def test_exponential_delay_mean_wait_is_the_mean_delay() -> None:
    """The first hand case with an exponential delay of mean d = 30 min and a
    repair too long to matter: the wait is one draw of the delay, so
    E[wait] = d, P(wait > d) = 1/e and the median is d ln 2."""
    d, n = 30 * MINUTE, 4000
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2,
            {0: [2.5 * HOUR]},
            repair=1000 * HOUR,
            cold_spares=1,
            cold_spare_delay=ace.Exponential(d),
        ),
        replicas=n,
        seed=7,
        threads=2,
    )
    wait = res.jobs["recovery_wait"]
    se = d / math.sqrt(n)
    assert abs(wait.mean() - d) < 4 * se, (wait.mean(), d)
    assert abs(np.mean(wait > d) - math.exp(-1)) < 4 * math.sqrt(0.25 / n)
    assert abs(np.median(wait) - d * math.log(2)) < 0.06 * d
    assert np.all(res.fleet["cold_spare_uses"] == 1)
    # Each replica's wait is its draw: the rest of the row follows exactly.
    np.testing.assert_allclose(res.jobs["end"], 10.5 * HOUR + wait, rtol=1e-12)


def test_a_repair_racing_the_acquisition() -> None:
    """Repair R = 30 min against an exponential acquisition of mean d = 30 min:
    the job takes whichever node is there first, so wait = min(D, R),
    E[wait] = d (1 - exp(-R / d)) = 1137.8 s, and with probability
    exp(-R / d) the repaired node wins (wait exactly R, the acquisition
    cancelled, no cold spare use)."""
    d, big_r, n = 30 * MINUTE, 30 * MINUTE, 4000
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2, {0: [2.5 * HOUR]}, repair=big_r, cold_spares=1, cold_spare_delay=ace.Exponential(d)
        ),
        replicas=n,
        seed=3,
        threads=2,
    )
    wait = res.jobs["recovery_wait"]
    expected = d * (1 - math.exp(-big_r / d))
    assert abs(wait.mean() - expected) < 4 * d / math.sqrt(n), (wait.mean(), expected)
    won = np.isclose(wait, big_r, rtol=1e-12)
    assert abs(won.mean() - math.exp(-big_r / d)) < 4 * math.sqrt(0.25 / n)
    assert np.all(wait <= big_r * (1 + 1e-12))
    np.testing.assert_array_equal(res.fleet["cold_spare_uses"], np.where(won, 0, 1))


# --------------------------------------------------------------------------
# An independent SimPy model: node failures on both nodes, repairs, a cold
# spare, many failures per run
# --------------------------------------------------------------------------


def simpy_cold_spare_run(
    rng: np.random.Generator, mtbf: float, repair: float, delay: float, work: float, tau: float
) -> tuple[float, float, int, int]:
    """One run of a 1-node job on a 2-node fleet: node 0 a fleet node, node 1
    a cold spare. Each node fails after Exp(mtbf) in service, busy or idle,
    and is repaired in ``repair``. After a failure the job takes node 0 when
    it is up (it is free: the job is the only one), else acquires node 1 when
    it is up (Exp(delay)); node 0 returning first wins the race, node 1
    failing cancels the acquisition; with both down it waits for the first
    back. Returns (wall, recovery_wait, failures, cold spare uses)."""
    env = simpy.Environment()
    up = [True, True]
    down_ev = [env.event(), env.event()]
    up_ev = [env.event(), env.event()]

    def node(n: int) -> Any:
        while True:
            yield env.timeout(rng.exponential(mtbf))
            up[n] = False
            ev, down_ev[n] = down_ev[n], env.event()
            ev.succeed()
            yield env.timeout(repair)
            up[n] = True
            ev, up_ev[n] = up_ev[n], env.event()
            ev.succeed()

    out: dict[str, float] = {"wait": 0.0, "failures": 0, "uses": 0}

    def recover() -> Any:
        while True:
            if up[0]:
                return 0
            if up[1]:
                acquired = env.timeout(rng.exponential(delay))
                fired = yield acquired | down_ev[1] | up_ev[0]
                if up_ev[0] in fired:
                    return 0
                if acquired in fired:
                    out["uses"] += 1
                    return 1
                continue  # node 1 failed: acquisition cancelled
            yield up_ev[0] | up_ev[1]

    def job() -> Any:
        on, committed = 0, 0.0
        while committed < work:
            segment = min(tau, work - committed)
            done = env.timeout(segment)
            fired = yield done | down_ev[on]
            if done in fired:
                committed += segment
                continue
            out["failures"] += 1
            t = env.now
            on = yield from recover()
            out["wait"] += env.now - t

    env.process(node(0))
    env.process(node(1))
    proc = env.process(job())
    env.run(until=proc)
    return env.now, out["wait"], int(out["failures"]), int(out["uses"])


def test_cold_spare_fleet_against_a_simpy_model() -> None:
    """Node MTBF 15 h on both nodes (wall clock, idle too), repair 3 h, cold
    delay Exp(3 h), 40 h of work in 1 h segments: mean wall, recovery wait,
    failures and cold-spare uses agree with the SimPy model within 4
    standard errors. (The delay is as long as a repair, so races are
    frequent: a model in which a repaired node does not cancel the
    acquisition is 8 to 17 standard errors away.)"""
    mtbf, repair, delay, work = 15 * HOUR, 3 * HOUR, 3 * HOUR, 40 * HOUR
    n = 3000
    res = run(
        job(1, work),
        fleet=ace.Fleet(
            2,
            repair=ace.Constant(repair),
            node_failures=ace.Exponential(mtbf),
            cold_spares=1,
            cold_spare_delay=ace.Exponential(delay),
        ),
        replicas=n,
        seed=21,
        threads=2,
    )
    rng = np.random.default_rng(2024)
    ref = np.array([simpy_cold_spare_run(rng, mtbf, repair, delay, work, HOUR) for _ in range(n)])
    got = np.column_stack(
        [
            res.jobs["wall"],
            res.jobs["recovery_wait"],
            res.jobs["failures"],
            res.fleet["cold_spare_uses"],
        ]
    )
    for k, name in enumerate(("wall", "recovery_wait", "failures", "cold_spare_uses")):
        a, b = got[:, k], ref[:, k]
        se = math.sqrt(a.var() / n + b.var() / n)
        assert abs(a.mean() - b.mean()) < 4 * se, (name, a.mean(), b.mean(), se)
    # The scenario exercises every branch: waits, acquisitions, races.
    assert got[:, 3].mean() > 0.5 and (got[:, 1] > 0).mean() > 0.5


# --------------------------------------------------------------------------
# Re-placement cost
# --------------------------------------------------------------------------

REPLACE = ace.Constant(0.2 * HOUR)


def test_replacement_delay_under_spares_is_separate_from_init_and_load() -> None:
    """Two nodes, node 1 a hot spare; init 0.1 h per start. Node 0 fails at
    2.5 h. Timeline: init 0 -> 0.1 h, checkpoints at 1.1 h and 2.1 h, failure
    at 2.5 h (0.4 h lost); the job takes the spare, pays the 0.2 h
    re-placement delay (recovery wait) then init again (2.7 -> 2.8 h) and
    computes the 8 h left: end 10.8 h."""
    res = run(
        job(1, 10 * HOUR, init=ace.Constant(0.1 * HOUR)),
        fleet=trace_fleet(2, {0: [2.5 * HOUR]}, repair=10 * HOUR, spares=1),
        policy=ace.Policy(replacement_delay=REPLACE),
        record_events=True,
    )
    r = res.jobs[0]
    assert r["recovery_wait"] == h(0.2)
    assert r["overhead"] == h(0.2)  # two inits
    assert r["wasted"] == h(0.4)
    assert r["end"] == h(10.8)
    starts = [t for k, t in events_of(res) if k == "START_BEGIN"]
    assert starts == [0.0, pytest.approx(2.7 * HOUR, rel=1e-12)]


def test_replacement_delay_under_preempt_lower() -> None:
    """Two nodes: H (priority 5, 10 h) on node 1, L (12 h) on node 0. Node 1
    fails at 2.5 h: H preempts L (0.5 h of L's work lost: churn 4 GPU-h),
    takes node 0 and pays the 0.2 h delay: H restarts at 2.7 h, ends 10.7 h.
    L restarts from the queue when H ends (no re-placement delay for a start
    from the queue): recovery wait 8.2 h, end 10.7 + 10 = 20.7 h."""
    jobs = [job(1, 10 * HOUR, priority=5), job(1, 12 * HOUR)]
    res = run(
        jobs,
        fleet=trace_fleet(2, {1: [2.5 * HOUR]}, repair=10 * HOUR),
        policy=ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER, replacement_delay=REPLACE),
    )
    hi, lo = res.jobs
    assert hi["recovery_wait"] == h(0.2) and hi["end"] == h(10.7)
    assert hi["churn_gpu_hours"] == pytest.approx(8 * 0.5, rel=1e-12)
    assert lo["preemptions"] == 1
    assert lo["wasted"] == h(0.5)
    assert lo["recovery_wait"] == h(8.2)
    assert lo["end"] == h(20.7)


def test_no_replacement_delay_when_wait_repair_gets_its_own_node_back() -> None:
    """WAIT_REPAIR: node 0 fails at 2.5 h, back at 3.5 h; the job waits for
    it (1 h) and restarts on it: no re-placement, no delay. End 11.5 h."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1),
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR, replacement_delay=REPLACE),
    )
    r = res.jobs[0]
    assert r["recovery_wait"] == h(1.0)
    assert r["end"] == h(11.5)


def test_no_replacement_delay_for_a_restart_in_place() -> None:
    """A software fault (node_down=False) restarts the job on its own node:
    no re-placement, no delay."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(2, {0: [2.5 * HOUR]}, repair=HOUR, spares=1),
        causes=[ace.Cause("software", 1.0, node_down=False)],
        policy=ace.Policy(replacement_delay=REPLACE),
    )
    r = res.jobs[0]
    assert r["failures"] == 1
    assert r["recovery_wait"] == 0.0
    assert r["end"] == h(10.5)


def test_replacement_delay_after_a_cold_spare_is_sequential() -> None:
    """The cold spare first (30 min to acquire), then the 0.2 h re-placement
    delay: wait 0.7 h, end 11.2 h."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2, {0: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        policy=ace.Policy(replacement_delay=REPLACE),
    )
    r = res.jobs[0]
    assert r["recovery_wait"] == h(0.7)
    assert r["end"] == h(11.2)


def test_a_node_lost_during_the_replacement_delay() -> None:
    """Three nodes, node 2 a hot spare, a 1 h re-placement delay; the job
    starts on node 1 (the scheduler takes the last free node). Node 1 fails
    at 2.5 h: the job takes the hot spare and starts its delay (due 3.5 h).
    The spare fails at 3.0 h: the delay is void, the job takes the free
    node 0 at once and pays a fresh 1 h delay: restart 4.0 h, end 12.0 h,
    recovery wait 1.5 h."""
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(3, {1: [2.5 * HOUR], 2: [3.0 * HOUR]}, repair=10 * HOUR, spares=1),
        policy=ace.Policy(replacement_delay=HOUR),
    )
    r = res.jobs[0]
    assert [(int(t["job"]), int(t["node"])) for t in res.trace] == [(0, 1), (-1, 2)]
    assert r["failures"] == 1
    assert r["recovery_wait"] == h(1.5)
    assert r["end"] == h(12.0)
    assert res.fleet["spare_uses"][0] == 1


def test_replacement_delay_without_a_fleet() -> None:
    """fleet=None: replacements are always available, so every recovery from
    a fault that takes its node down is a re-placement. A Replay failure at
    2.5 h of held time: wait 0.2 h, end 10.7 h; with a software cause
    (node_down=False) no delay."""
    failures = ace.Replay([2.5 * HOUR, math.inf])
    policy = ace.Policy(replacement_delay=REPLACE)
    r = run(job(1, 10 * HOUR), failures=failures, policy=policy).jobs[0]
    assert r["failures"] == 1
    assert r["recovery_wait"] == h(0.2)
    assert r["end"] == h(10.7)
    soft = run(
        job(1, 10 * HOUR),
        failures=failures,
        policy=policy,
        causes=[ace.Cause("software", 1.0, node_down=False)],
    ).jobs[0]
    assert soft["recovery_wait"] == 0.0
    assert soft["end"] == h(10.5)


def test_exponential_replacement_delay_mean() -> None:
    """With a hot spare always there, the wait is one draw of the delay:
    E[wait] = its mean (10 min)."""
    d, n = 10 * MINUTE, 4000
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(2, {0: [2.5 * HOUR]}, repair=10 * HOUR, spares=1),
        policy=ace.Policy(replacement_delay=ace.Exponential(d)),
        replicas=n,
        seed=5,
        threads=2,
    )
    wait = res.jobs["recovery_wait"]
    assert abs(wait.mean() - d) < 4 * d / math.sqrt(n)
    assert wait.min() > 0.0


# --------------------------------------------------------------------------
# Defaults, common random numbers, determinism, invariants under load
# --------------------------------------------------------------------------


def _load() -> dict[str, Any]:
    jobs = [ace.Job(32, work=3 * DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(
            g,
            work=DAY,
            checkpoint_interval=HOUR,
            save=ace.Exponential(120.0),
            init=ace.Constant(300.0),
            load=ace.Exponential(60.0),
            submit=i * HOUR,
            priority=i % 2,
        )
        for i, g in enumerate([8, 16, 4, 2, 24, 8, 1] * 2)
    ]
    return dict(jobs=jobs, causes=ace.LLAMA3_CAUSES, horizon=15 * DAY, seed=8)


def _fleet(cold: int = 0, spares: int = 2, **kwargs: Any) -> ace.Fleet:
    return ace.Fleet(
        16,
        spares=spares,
        repair=ace.Exponential(6 * HOUR),
        node_failures=ace.Exponential(3 * DAY),
        cold_spares=cold,
        **kwargs,
    )


def _same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    for table in ("jobs", "fleet", "trace"):
        x, y = getattr(a, table), getattr(b, table)
        assert x.dtype == y.dtype
        for name in x.dtype.names or ():
            if not name.startswith("pad"):
                np.testing.assert_array_equal(x[name], y[name], err_msg=f"{table}.{name}")


def test_unused_settings_change_nothing() -> None:
    """A cold-spare delay without cold spares, and a zero re-placement delay
    (drawn from its own stream, so no other draw moves), give the same rows,
    bit for bit, as neither."""
    base = ace.simulate(fleet=_fleet(), replicas=3, **_load())
    same = ace.simulate(
        fleet=_fleet(cold_spare_delay=ace.Exponential(HOUR)),
        policy=ace.Policy(replacement_delay=ace.Constant(0.0)),
        replicas=3,
        **_load(),
    )
    _same(base, same)
    assert np.all(base.fleet["cold_spare_uses"] == 0)


def test_node_failure_times_do_not_depend_on_cold_spares() -> None:
    """Common random numbers: the node-level failure trace (which node fails
    when, and the draw) is the same with two hot spares as with three cold
    spares and a re-placement delay (no quarantine and no job-level
    failures: nothing ties failures to decisions)."""

    a = ace.simulate(fleet=_fleet(), replicas=3, **_load())
    b = ace.simulate(
        fleet=_fleet(cold=3, spares=0, cold_spare_delay=ace.Exponential(HOUR)),
        policy=ace.Policy(replacement_delay=ace.Exponential(600.0)),
        replicas=3,
        **_load(),
    )
    # Both runs cover the span that the shorter one simulates.
    end = np.minimum(a.fleet["makespan"], b.fleet["makespan"])

    def node_events(res: ace.SimulationResult) -> set[tuple[int, int, float, float]]:
        t = res.trace[res.trace["source"] == 1]
        t = t[t["time"] < end[t["replica"]]]
        cols = (t["replica"], t["origin"], t["time"], t["inter_failure"])
        return {(int(r), int(o), float(x), float(d)) for r, o, x, d in zip(*cols, strict=True)}

    assert len(node_events(a)) > 30
    assert node_events(a) == node_events(b)
    assert b.fleet["cold_spare_uses"].sum() > 0


@pytest.mark.parametrize("replacement", list(ace.Replacement))
def test_invariants_and_determinism_under_load(replacement: ace.Replacement) -> None:
    """Every policy with cold spares and a re-placement delay: the invariant
    checks pass after every event, the identity holds on every row, and the
    rows do not depend on the thread count or the replica split."""
    kwargs: dict[str, Any] = dict(
        fleet=_fleet(cold=3, cold_spare_delay=ace.Exponential(HOUR)),
        policy=ace.Policy(
            replacement=replacement,
            preemption=ace.Preemption.CHECKPOINT_AWARE,
            preemption_grace=1800.0,
            quarantine=ace.Quarantine(2, 2 * DAY, 3 * DAY),
            replacement_delay=ace.Exponential(600.0),
        ),
        **_load(),
    )
    one = run(replicas=4, threads=1, **kwargs)
    two = run(replicas=4, threads=2, **kwargs)
    _same(one, two)
    split = [run(replicas=2, first_replica=f, **kwargs) for f in (0, 2)]
    np.testing.assert_array_equal(np.concatenate([s.jobs["end"] for s in split]), one.jobs["end"])
    np.testing.assert_array_equal(
        np.concatenate([s.fleet["cold_spare_uses"] for s in split]), one.fleet["cold_spare_uses"]
    )
    if replacement in (ace.Replacement.SPARES, ace.Replacement.PREEMPT_LOWER):
        assert one.fleet["cold_spare_uses"].sum() > 0


# --------------------------------------------------------------------------
# Validation at the boundary
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        (dict(cold_spares=-1, cold_spare_delay=60.0), ValueError, "cold_spares"),
        (dict(cold_spares=1.5, cold_spare_delay=60.0), TypeError, "cold_spares"),
        (dict(cold_spares=True, cold_spare_delay=60.0), TypeError, "cold_spares"),
        (dict(cold_spares=4, cold_spare_delay=60.0), ValueError, "cold_spares"),
        (dict(spares=2, cold_spares=2, cold_spare_delay=60.0), ValueError, "cold_spares"),
        (dict(spares=3, cold_spares=1, cold_spare_delay=60.0), ValueError, "cold_spares"),
        (dict(cold_spares=1), ValueError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay="5min"), TypeError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay=[60.0]), TypeError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay=ace.Exponential), TypeError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay=-1.0), ValueError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay=math.inf), ValueError, "cold_spare_delay"),
        (dict(cold_spares=1, cold_spare_delay=math.nan), ValueError, "cold_spare_delay"),
    ],
)
def test_fleet_rejects(kwargs: dict[str, Any], exc: type[Exception], name: str) -> None:
    with pytest.raises(exc, match=name):
        ace.Fleet(4, **kwargs)


@pytest.mark.parametrize(
    ("value", "exc"),
    [
        ("10min", TypeError),
        ([60.0], TypeError),
        (ace.Constant, TypeError),
        (True, TypeError),
        (-1.0, ValueError),
        (math.inf, ValueError),
        (math.nan, ValueError),
    ],
)
def test_policy_rejects_replacement_delay(value: Any, exc: type[Exception]) -> None:
    with pytest.raises(exc, match="replacement_delay"):
        ace.Policy(replacement_delay=value)


def test_cold_spares_are_not_usable_by_jobs() -> None:
    """Jobs use at most nodes - spares - cold_spares nodes."""
    f = ace.Fleet(4, spares=1, cold_spares=1, cold_spare_delay=60.0)
    ace.simulate(ace.Job(16, HOUR, HOUR), fleet=f, failures=ace.Exponential(DAY))
    with pytest.raises(ValueError, match="spares"):
        ace.simulate(ace.Job(24, HOUR, HOUR), fleet=f, failures=ace.Exponential(DAY))


def test_core_rejects_cold_spares_without_a_delay() -> None:
    """The core checks the same rules on its own input."""
    from acesim import _core

    def call(nodes: int, spares: int, cold_spares: int, cold_spare_delay: int) -> None:
        law = ace.Constant(60.0)
        fleet_spec = _core.FleetSpec(
            nodes=nodes, spares=spares, cold_spares=cold_spares, cold_spare_delay=cold_spare_delay
        )
        _core.simulate(
            [law._compiled],
            _core.JobColumns(
                gpus=np.array([8], np.uint32),
                work=np.array([HOUR]),
                checkpoint_interval=np.array([HOUR]),
                rule=np.array([0], np.uint32),
                init=np.array([0], np.uint32),
                save=np.array([0], np.uint32),
                load=np.array([0], np.uint32),
                submit=np.array([0.0]),
                priority=np.array([0], np.int32),
            ),
            -1,
            [],
            fleet_spec,
            None,
            gpus_per_node=8,
            replicas=1,
            first_replica=0,
            seed=0,
            horizon=math.inf,
            record_events=False,
            check_invariants=False,
            threads=1,
            max_events=0,
        )

    with pytest.raises(ValueError, match="cold_spare_delay"):
        call(4, 0, 1, -1)
    with pytest.raises(ValueError, match="cold_spares"):
        call(4, 2, 2, 0)
    with pytest.raises(ValueError, match="cold_spare_delay"):
        call(4, 0, 1, 7)
    call(4, 0, 1, 0)


def test_new_settings_pickle() -> None:
    import pickle

    f = ace.Fleet(4, spares=1, cold_spares=2, cold_spare_delay=ace.Exponential(60.0))
    p = ace.Policy(replacement_delay=ace.Constant(30.0))
    f2, p2 = pickle.loads(pickle.dumps((f, p)))
    assert f2.cold_spares == 2 and f2.cold_spare_delay.mean() == 60.0
    assert p2.replacement_delay.mean() == 30.0


def test_the_place_callback_never_sees_a_cold_spare() -> None:
    """Three nodes, node 2 cold; a place callback that lets the built-in
    choose records what it is offered. A (10 h) gets node 1, B (1 h) node 0.
    After B ends, node 1 fails at 2.5 h: A is offered node 0 only and takes
    it at once. On a 2-node fleet (node 1 cold) the recovery offers nothing
    (the callback is not called) and the built-in acquires the cold spare."""
    offers: list[tuple[bool, list[int]]] = []

    def place(view: Any, free: Any) -> None:
        offers.append((bool(view.recovering), [int(n) for n in free]))
        return None

    policy = ace.Policy(place=place)
    res = run(
        [job(1, 10 * HOUR), job(1, HOUR)],
        fleet=trace_fleet(
            3, {1: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        policy=policy,
    )
    assert offers == [(False, [0, 1]), (False, [0]), (True, [0])]
    assert res.jobs["recovery_wait"][0] == 0.0
    assert res.fleet["cold_spare_uses"][0] == 0
    offers.clear()
    res = run(
        job(1, 10 * HOUR),
        fleet=trace_fleet(
            2, {0: [2.5 * HOUR]}, repair=10 * HOUR, cold_spares=1, cold_spare_delay=30 * MINUTE
        ),
        policy=policy,
    )
    assert offers == [(False, [0])]
    assert res.jobs["recovery_wait"][0] == h(0.5)
    assert res.fleet["cold_spare_uses"][0] == 1
