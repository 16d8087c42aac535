"""The job lifecycle as modern training runs it, by hand: asynchronous
checkpoints (a blocking snapshot, then a background persist), checkpoint
tiers that survive only some failures, and slow (gray) failures.

Every scenario is small enough to work out on paper: one job (or a few on a
three-node fleet), constant laws, failures placed exactly with ``Replay``
(held seconds of a job-level law) or ``NodeTrace``. The derivation of each
expected figure is written beside it. Every run checks the accounting
identity (the buckets add up to wall) with the engine's invariant checks on.
"""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest
from hand_cases import HOUR, MINUTE, ZERO, assert_accounting, run, trace_fleet
from pytest import approx

C = ace.Constant

# EventKind codes (cpp/include/acesim/records.hpp).
START, CHECKPOINT_BEGIN, CHECKPOINT_END, PREEMPTED, DURABLE = 1, 3, 4, 9, 14

FIELDS = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "failures",
    "checkpoints",
    "lost_checkpoints",
    "tier_restores",
)


def row(res: ace.SimulationResult, j: int = 0) -> dict[str, float]:
    r = res.jobs[j]
    return {f: float(r[f]) for f in FIELDS}


def times(res: ace.SimulationResult, job: int, kind: int) -> list[float]:
    ev = res.events
    return [float(t) for t in ev["time"][(ev["job"] == job) & (ev["kind"] == kind)]]


def one_job(**kwargs: object) -> ace.Job:
    """One node, work 1,200 s, a durable checkpoint every 600 s (save 10 s,
    load 20 s), no init."""
    args: dict[str, object] = {"init": ZERO, "save": C(10.0), "load": C(20.0)}
    args.update(kwargs)
    return ace.Job(8, 1200.0, 600.0, **args)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# 1. Asynchronous checkpoints
# --------------------------------------------------------------------------


def test_async_without_failures_overlaps_the_persist_with_compute() -> None:
    """Load 0-20, compute 20-620, snapshot 620-630, persist 630-730 under
    compute 630-1230, final snapshot 1230-1240, its persist 1240-1340 (the
    job waits: done at 1,340). Stalls: 10 + 10 + the final wait 100 = 120."""
    res = run([one_job(persist=C(100.0))], failures=None, record_events=True)
    assert row(res) == {
        "wall": 1340.0,
        "productive": 1200.0,
        "wasted": 0.0,
        "ckpt_stall": 120.0,
        "overhead": 20.0,
        "detection": 0.0,
        "failures": 0.0,
        "checkpoints": 2.0,
        "lost_checkpoints": 0.0,
        "tier_restores": 0.0,
    }
    assert times(res, 0, DURABLE) == [730.0, 1340.0]
    assert times(res, 0, CHECKPOINT_END) == [630.0, 1240.0]


def test_persist_longer_than_the_interval_makes_the_next_checkpoint_wait() -> None:
    """Interval 300 s, persist 500 s, work 900. Load 0-20; compute 20-320;
    snapshot 320-330, persist 330-830. Compute 330-630 reaches the next
    boundary while the persist runs: the job waits 630-830 (a stall), then
    snapshots 830-840 (persist 840-1340); compute 840-1140; waits 1140-1340;
    final snapshot 1340-1350; waits for its persist 1350-1850: done.
    Stalls: 3 snapshots x 10 + waits 200 + 200 + 500 = 930."""
    job = ace.Job(8, 900.0, 300.0, init=ZERO, save=C(10.0), load=C(20.0), persist=C(500.0))
    res = run([job], failures=None, record_events=True)
    r = row(res)
    assert r["wall"] == 1850.0
    assert r["ckpt_stall"] == 930.0
    assert r["productive"] == 900.0
    assert r["checkpoints"] == 3.0
    assert times(res, 0, DURABLE) == [830.0, 1340.0, 1850.0]
    assert times(res, 0, CHECKPOINT_BEGIN) == [320.0, 830.0, 1340.0]


def test_failure_during_the_persist_rolls_back_to_the_previous_durable_checkpoint() -> None:
    """Failure at 700 s held (wall 700): the snapshot at progress 600 is still
    persisting (630-730), so the job rolls back to 0. Wasted: the snapshot's
    segment 600 + compute since it 630-700 = 670; one checkpoint lost in
    flight. Restart 700-720, compute 720-1320, snapshot 1320-1330 (persist
    under compute 1330-1930), final snapshot 1930-1940, persist 1940-2040.
    Stalls: the lost snapshot's 10 (it completed) + 10 + 10 + 100 = 130."""
    res = run([one_job(persist=C(100.0))], failures=ace.Replay([700.0]))
    assert row(res) == {
        "wall": 2040.0,
        "productive": 1200.0,
        "wasted": 670.0,
        "ckpt_stall": 130.0,
        "overhead": 40.0,
        "detection": 0.0,
        "failures": 1.0,
        "checkpoints": 2.0,
        "lost_checkpoints": 1.0,
        "tier_restores": 0.0,
    }


def test_failure_after_the_persist_keeps_the_checkpoint() -> None:
    """Failure at 800 s: the checkpoint at 600 became durable at 730; the job
    loses only the compute since its snapshot (630-800: 170 s of progress).
    Restart 800-820 from 600, compute 820-1420, final snapshot 1420-1430,
    persist 1430-1530. Stalls 10 + 10 + 100 = 120."""
    res = run([one_job(persist=C(100.0))], failures=ace.Replay([800.0]))
    r = row(res)
    assert r["wasted"] == 170.0
    assert r["lost_checkpoints"] == 0.0
    assert r["wall"] == 1530.0
    assert r["ckpt_stall"] == 120.0


def test_failure_while_waiting_for_the_final_persist() -> None:
    """Failure at 1,300 s: the final snapshot (progress 1,200) ended at 1,240
    and persists until 1,340. The job rolls back to 600 (durable at 730):
    wasted 600 (segment) + the wait cut off 1240-1300 (60) = 660, and the
    lost checkpoint. Restart 1300-1320, compute 1320-1920, snapshot 1920-1930,
    persist 1930-2030: done at 2,030."""
    res = run([one_job(persist=C(100.0))], failures=ace.Replay([1300.0]))
    r = row(res)
    assert r["wasted"] == 660.0
    assert r["lost_checkpoints"] == 1.0
    assert r["wall"] == 2030.0
    # Stalls completed: 10 (first snapshot) + 10 (final, lost) + 10 + 100.
    assert r["ckpt_stall"] == 130.0


def test_zero_persist_is_the_synchronous_model_bit_for_bit() -> None:
    """persist=Constant(0) takes the level transitions and gives exactly the
    synchronous rows (every field), on a fleet with preemption and causes."""
    causes = [ace.Cause("crash", 3, detect=C(60.0)), ace.Cause("hang", 1, detect=C(600.0))]
    fleet = ace.Fleet(
        12,
        spares=1,
        repair=ace.Exponential(2 * HOUR),
        node_failures=ace.Exponential(20 * 24 * HOUR),
    )
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=10 * MINUTE,
    )

    def jobs(persist: ace.Distribution | None) -> list[ace.Job]:
        return [
            ace.Job(
                8 * n,
                2 * 24 * HOUR,
                40 * MINUTE,
                save=ace.LogNormal(3.0, 0.4),
                persist=persist,
                priority=p,
                submit=s,
            )
            for n, p, s in ((4, 1, 0.0), (3, 0, 600.0), (4, 0, 1200.0), (2, 2, 5000.0))
        ]

    kwargs = dict(
        failures=ace.Weibull(0.8, 30 * HOUR),
        fleet=fleet,
        policy=policy,
        causes=causes,
        replicas=4,
        seed=11,
        record_events=True,
    )
    sync = ace.simulate(jobs(None), check_invariants=True, **kwargs)
    zero = ace.simulate(jobs(C(0.0)), check_invariants=True, **kwargs)
    assert sync.jobs["failures"].sum() > 0 and sync.fleet["preemptions"].sum() > 0
    for f in sync.jobs.dtype.names:
        np.testing.assert_array_equal(zero.jobs[f], sync.jobs[f], err_msg=f)
    for f in sync.fleet.dtype.names:
        np.testing.assert_array_equal(zero.fleet[f], sync.fleet[f], err_msg=f)
    np.testing.assert_array_equal(zero.trace, sync.trace)
    # The event log differs only by the CheckpointDurable rows (at each checkpoint's end).
    np.testing.assert_array_equal(zero.events[zero.events["kind"] != DURABLE], sync.events)


# --------------------------------------------------------------------------
# 2. Checkpoint tiers and failure scopes
# --------------------------------------------------------------------------

TIER = ace.CheckpointTier(200.0, save=C(2.0), load=C(5.0))


def tiered(**kwargs: object) -> ace.Job:
    """Durable every 600 s (save 30, load 50), a tier every 200 s (save 2,
    load 5); work 1,200, no init."""
    args: dict[str, object] = {"init": ZERO, "save": C(30.0), "load": C(50.0), "tiers": [TIER]}
    args.update(kwargs)
    return ace.Job(8, 1200.0, 600.0, **args)  # type: ignore[arg-type]


def test_tiers_without_failures() -> None:
    """Load 0-50; tier writes at progress 200 and 400 (2 s each), the
    durable at 600 (30 s: the tier's boundary coincides, the durable wins),
    tiers at 800 and 1000, the durable at 1,200. Wall 50 + 1,200 + 4 x 2 + 2 x 30."""
    res = run([tiered()], failures=None, record_events=True)
    r = row(res)
    assert r["wall"] == 50.0 + 1200.0 + 8.0 + 60.0
    assert r["ckpt_stall"] == 68.0
    assert r["checkpoints"] == 6.0
    assert times(res, 0, CHECKPOINT_BEGIN) == [250.0, 452.0, 654.0, 884.0, 1086.0, 1288.0]


def test_a_process_failure_restores_from_the_tier() -> None:
    """Failure at 520 s (compute since 454 at progress 400): a process
    failure keeps the tier's checkpoint at 400: wasted 66; the restart loads
    the tier (5 s): 520-525, then 200 s of compute to the durable at 600
    (725-755), tiers at 800 (955-957) and 1,000 (1157-1159), the durable at
    1,200 (1359-1389)."""
    cause = [ace.Cause("software", 1, node_down=False)]  # process scope by default
    res = run([tiered()], failures=ace.Replay([520.0]), causes=cause)
    assert row(res) == {
        "wall": 1389.0,
        "productive": 1200.0,
        "wasted": 66.0,
        "ckpt_stall": 68.0,
        "overhead": 55.0,
        "detection": 0.0,
        "failures": 1.0,
        "checkpoints": 6.0,
        "lost_checkpoints": 0.0,
        "tier_restores": 1.0,
    }


def test_a_node_failure_destroys_an_unreplicated_tier() -> None:
    """The same failure taking the node: the tier (replication 1) is lost;
    the job rolls back to its initial state: wasted = the 400 s the tier had
    kept + the 66 s since = 466; it reloads the durable (50 s): 520-570, then
    the whole run again: 570 + 1,200 + 68 = 1,838."""
    res = run([tiered()], failures=ace.Replay([520.0]), causes=[ace.Cause("gpu", 1)])
    r = row(res)
    assert r["wasted"] == 466.0
    assert r["tier_restores"] == 0.0
    assert r["overhead"] == 100.0
    assert r["wall"] == 1838.0
    assert r["productive"] == 1200.0


def test_scope_overrides_node_down() -> None:
    """scope="process" on a cause whose node goes to repair (a bad NIC that
    kills the processes but whose host restarts them in place is the other
    way round): the tier survives as for a software failure."""
    cause = [ace.Cause("nic", 1, node_down=True, scope="process")]
    res = run([tiered()], failures=ace.Replay([520.0]), causes=cause)
    assert row(res)["wasted"] == 66.0
    assert row(res)["tier_restores"] == 1.0


def replicated_job(replication: int) -> ace.Job:
    """Two nodes; durable every 2 h (save 60 s, load 10 min), a tier every
    20 min (save 5 s, load 30 s) with copies on ``replication`` nodes."""
    tier = ace.CheckpointTier(20 * MINUTE, save=C(5.0), load=C(30.0), replication=replication)
    return ace.Job(
        16, 4 * HOUR, 2 * HOUR, init=ZERO, save=C(60.0), load=C(10 * MINUTE), tiers=[tier]
    )


@pytest.mark.parametrize("replication, wasted, restores", [(1, 3000.0 + 300.0, 0), (2, 300.0, 1)])
def test_replication_survives_a_single_node_loss(
    replication: int, wasted: float, restores: int
) -> None:
    """A fleet of two nodes plus a hot spare; one of the job's nodes fails at
    wall 4,465 s: load 0-600, tier writes at progress 1,200, 2,400 (ends at
    600 + 2,400 + 2 x 5 = 3,010), 3,600 (ends 4,215); at 4,465 the job is
    250 s past it... (see below). With replication 1 the tier is lost with
    the node: back to the initial state, everything since is wasted; with
    replication 2 the copy on the other node survives: only the compute since
    the last tier write is lost."""
    # Timeline: compute 600-1800 (to 1,200), write 1800-1805, compute
    # 1805-3005 (to 2,400), write 3005-3010, compute 3010-4210 (to 3,600),
    # write 4210-4215, compute from 4,215 at progress 3,600. Fail at 4,515:
    # 300 s past the last tier checkpoint. Replication 1: wasted 3,600 + 300.
    fail_at = 4515.0
    fleet = trace_fleet(3, {0: [fail_at]}, repair=10 * HOUR, spares=1)
    res = run([replicated_job(replication)], fleet=fleet, record_events=True)
    r = row(res)
    assert r["failures"] == 1.0
    assert r["tier_restores"] == restores
    expected = 3600.0 + 300.0 if replication == 1 else 300.0
    assert r["wasted"] == expected
    # The restart loads the tier (30 s) or the durable (10 min).
    starts = times(res, 0, START)
    assert starts == [0.0, fail_at]
    assert r["overhead"] == 600.0 + (30.0 if replication == 2 else 600.0)


def test_a_two_node_failure_exceeds_replication_two() -> None:
    """A cause that takes an aligned block of two nodes (a switch) takes both
    of the job's nodes: replication 2 does not survive it."""
    fail_at = 4515.0
    fleet = trace_fleet(4, {0: [fail_at]}, repair=10 * HOUR, spares=2)
    causes = [ace.Cause("switch", 1, nodes=2)]
    res = run([replicated_job(2)], fleet=fleet, causes=causes)
    placed = res.trace["node"].tolist()
    if sorted(placed) == [0, 1] or len(placed) >= 1:
        r = row(res)
        assert r["tier_restores"] == 0.0
        assert r["wasted"] == 3600.0 + 300.0


def test_preemption_keeps_only_the_durable_checkpoint() -> None:
    """A time-limit stop moves the job off its nodes: only the durable
    checkpoint follows it. Limit 640 s per run: load 0-50, tiers at 200
    (250-252) and 400 (452-454), compute to 640 (progress 586): stopped.
    Back to the durable (the initial state): wasted 400 + 186 = 586."""
    res = run([tiered(time_limit=640.0)], failures=None, horizon=641.0)
    r = row(res)
    assert r["wasted"] == 586.0
    assert r["tier_restores"] == 0.0


# --------------------------------------------------------------------------
# CHECKPOINT_AWARE preemption waits for the durable checkpoint
# --------------------------------------------------------------------------


def high() -> ace.Job:
    """Job 0: two nodes, no overheads, a checkpoint every hour (priority 1)."""
    return ace.Job(16, 4 * HOUR, HOUR, init=ZERO, load=ZERO, save=ZERO, priority=1)


def low(persist: float | None) -> ace.Job:
    """Job 1: one node, restart 6 min, a checkpoint every 2 h with a 4 min
    snapshot, persisted in ``persist`` seconds (None: synchronous)."""
    return ace.Job(
        8,
        4 * HOUR,
        2 * HOUR,
        init=C(4 * MINUTE),
        load=C(2 * MINUTE),
        save=C(4 * MINUTE),
        persist=None if persist is None else C(persist),
    )


@pytest.mark.parametrize(
    "persist, fail_at, released, lost",
    [
        # Synchronous: the victim (boundary at 7,560 s) is deferred and goes at
        # the end of its write, 7,800 s, losing nothing.
        pytest.param(None, 7260.0, 7800.0, 0.0, id="sync"),
        # Asynchronous, persist 60 s: the snapshot ends at 7,800 but the
        # checkpoint is durable only at 7,860: the victim goes then, losing
        # the 60 s it computed since its snapshot. (The estimate: 300 s to the
        # boundary + 240 s snapshot + 60 s persist = 600 s, within the grace.)
        pytest.param(60.0, 7260.0, 7860.0, 60.0, id="async-fits"),
        # During the snapshot (7,560-7,800), 100 s of it left + 60 s persist:
        # deferred to 7,860 as well.
        pytest.param(60.0, 7700.0, 7860.0, 60.0, id="async-in-snapshot"),
        # Persist 3 min: 300 + 240 + 180 = 720 s > the 10 min grace: the
        # victim goes at once and loses its 6,900 s of compute.
        pytest.param(180.0, 7260.0, 7260.0, 6900.0, id="async-overruns"),
    ],
)
def test_checkpoint_aware_grace_waits_for_the_persist(
    persist: float | None, fail_at: float, released: float, lost: float
) -> None:
    """Three nodes: job 0 on two, job 1 on the third. One of job 0's nodes
    fails at ``fail_at`` (repair 2 h); PREEMPT_LOWER with CHECKPOINT_AWARE
    and a 10-minute grace."""
    jobs = [high(), low(persist)]
    probe = ace.simulate(
        jobs, fleet=trace_fleet(3, {0: [fail_at]}, repair=2 * HOUR), horizon=fail_at + 1
    )
    node = 0 if probe.trace["job"][0] == 0 else 2
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=10 * MINUTE,
    )
    res = run(
        jobs,
        fleet=trace_fleet(3, {node: [fail_at]}, repair=2 * HOUR),
        policy=policy,
        record_events=True,
    )
    rows = res.jobs
    assert times(res, 1, PREEMPTED) == [released]
    assert rows[0]["recovery_wait"] == approx(released - fail_at)
    assert rows[1]["wasted"] == approx(lost)
    if persist is not None and lost < 1000.0:
        # Released exactly when its checkpoint became durable.
        assert times(res, 1, DURABLE)[0] == released
        pre = res.events[(res.events["job"] == 1) & (res.events["kind"] == PREEMPTED)]
        assert pre["progress"][0] == 2 * HOUR


# --------------------------------------------------------------------------
# 4. Slow (gray) failures
# --------------------------------------------------------------------------


def slow_job() -> ace.Job:
    """Work 1,000 s, a checkpoint every 500 s (save 10 s), no init or load."""
    return ace.Job(8, 1000.0, 500.0, init=ZERO, save=C(10.0), load=ZERO)


def test_slowdown_zero_is_fail_stop() -> None:
    """Fault at 300 s, detected 100 s later: rolled back to 0 (wasted 300),
    detection 100; restart at 400: 1,000 + 2 x 10 later. Wall 1,420."""
    cause = [ace.Cause("hang", 1, detect=C(100.0))]
    r = row(run([slow_job()], failures=ace.Replay([300.0]), causes=cause))
    assert (r["wall"], r["wasted"], r["detection"]) == (1420.0, 300.0, 100.0)


def test_slow_failure_progresses_at_its_rate_until_detection() -> None:
    """slowdown 0.5, detected 100 s after the fault at 300 s: 50 s of
    progress (300 -> 350) and 50 s of detection, then rolled back to 0:
    wasted 350. Restart at 400, done at 1,420."""
    cause = [ace.Cause("slow", 1, detect=C(100.0), slowdown=0.5)]
    r = row(run([slow_job()], failures=ace.Replay([300.0]), causes=cause))
    assert (r["wall"], r["wasted"], r["detection"], r["productive"]) == (
        1420.0,
        350.0,
        50.0,
        1000.0,
    )


def test_a_checkpoint_inside_the_slow_window_is_kept() -> None:
    """slowdown 0.5, detected 600 s after the fault at 300: from 300 the
    remaining 200 s of progress to the boundary take 400 s (detection 200);
    the checkpoint at 500 is written 700-710 and kept; then 190 s at half
    speed (95 of progress, 95 of detection) until 900, when the failure is
    found: back to 500, wasted 95. Restart at 900: 500 + 10 later, 1,410.
    Detection 200 + 95 = 295."""
    cause = [ace.Cause("slow", 1, detect=C(600.0), slowdown=0.5)]
    res = run([slow_job()], failures=ace.Replay([300.0]), causes=cause, record_events=True)
    r = row(res)
    assert r == {
        "wall": 1410.0,
        "productive": 1000.0,
        "wasted": 95.0,
        "ckpt_stall": 20.0,
        "overhead": 0.0,
        "detection": 295.0,
        "failures": 1.0,
        "checkpoints": 2.0,
        "lost_checkpoints": 0.0,
        "tier_restores": 0.0,
    }
    assert times(res, 0, CHECKPOINT_END) == [710.0, 1410.0]


def test_a_slow_job_can_finish_before_detection() -> None:
    """Fault at 800 (progress 790 after the first checkpoint 500-510... the
    job is at progress 790), slowdown 0.9, detection in an hour: the last
    210 s of progress take 233.3 s; done at 1,043.3 + 10 without a restart."""
    cause = [ace.Cause("slow", 1, detect=C(HOUR), slowdown=0.9)]
    r = row(run([slow_job()], failures=ace.Replay([800.0]), causes=cause))
    assert r["wall"] == approx(800.0 + 210.0 / 0.9 + 10.0)
    assert r["detection"] == approx(210.0 / 0.9 * 0.1)
    assert r["wasted"] == 0.0
    assert r["failures"] == 1.0


def test_slow_failure_on_a_fleet() -> None:
    """Two-node job on three nodes; a node-level slow failure at 300 s
    (slowdown 0.5, detected after 600 s) behaves as on its own: the node goes
    to repair at detection's end and the job restarts on the spare."""
    fleet = trace_fleet(3, {0: [300.0]}, repair=10 * HOUR, spares=1)
    cause = [ace.Cause("slow", 1, detect=C(600.0), slowdown=0.5)]
    job = ace.Job(16, 1000.0, 500.0, init=ZERO, save=C(10.0), load=ZERO)
    res = run([job], fleet=fleet, causes=cause)
    r = row(res)
    assert (r["wall"], r["wasted"], r["detection"]) == (1410.0, 95.0, 295.0)
    assert res.fleet["spare_uses"][0] == 1


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="persist must be >= 0"):
        one_job(persist=-1.0)
    with pytest.raises(TypeError, match="persist"):
        one_job(persist="fast")
    with pytest.raises(ValueError, match=r"tiers\[0\]\.interval .* must not exceed"):
        ace.Job(8, HOUR, 600.0, tiers=[ace.CheckpointTier(700.0, 1.0, 1.0)])
    with pytest.raises(TypeError, match=r"tiers\[0\] must be a CheckpointTier"):
        ace.Job(8, HOUR, 600.0, tiers=[(300.0, 1.0, 1.0)])
    with pytest.raises(ValueError, match="at most 4"):
        ace.Job(8, HOUR, 600.0, tiers=[ace.CheckpointTier(300.0, 1.0, 1.0)] * 5)
    with pytest.raises(ValueError, match="replication must be >= 1"):
        ace.CheckpointTier(300.0, 1.0, 1.0, replication=0)
    with pytest.raises(ValueError, match="interval must be"):
        ace.CheckpointTier(-1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"replication must be between 1 and the job's 2 nodes"):
        ace.simulate(
            [ace.Job(16, HOUR, 600.0, tiers=[ace.CheckpointTier(300.0, 1.0, 1.0, replication=3)])]
        )
    with pytest.raises(ValueError, match=r"tiers\[0\]\.interval .* must not exceed the durable"):
        # A rule's interval (Young's, about 20 min here) is checked by the core.
        ace.simulate(
            [ace.Job(1024, ace.DAY, "young", tiers=[ace.CheckpointTier(10 * HOUR, 1.0, 1.0)])]
        )
    with pytest.raises(ValueError, match=r"slowdown must be in \[0, 1\)"):
        ace.Cause("x", 1.0, slowdown=1.0)
    with pytest.raises(ValueError, match=r"slowdown must be in \[0, 1\)"):
        ace.Cause("x", 1.0, slowdown=-0.1)
    with pytest.raises(ValueError, match="scope must be one of"):
        ace.Cause("x", 1.0, scope="rack")
    with pytest.raises(ValueError, match="slow failures"):
        ace.batch_simulate([one_job()], causes=[ace.Cause("x", 1.0, detect=60.0, slowdown=0.5)])


def test_new_config_pickles() -> None:
    import pickle

    job = tiered(persist=ace.Exponential(30.0))
    back = pickle.loads(pickle.dumps(job))
    assert repr(back.tiers) == repr(job.tiers) and repr(back.persist) == repr(job.persist)
    cause = ace.Cause("x", 1.0, scope="process", slowdown=0.25)
    assert repr(pickle.loads(pickle.dumps(cause))) == repr(cause)
    arr = ace.JobArray([8, 16], [HOUR, HOUR], 600.0, persist=30.0, tiers=[TIER])
    back_arr = pickle.loads(pickle.dumps(arr))
    assert repr(back_arr.tiers) == repr(arr.tiers)


def test_job_array_shares_persist_and_tiers() -> None:
    """A JobArray's persist and tiers apply to every job: the rows equal
    those of the same Jobs one by one."""
    arr = ace.JobArray(
        [8, 8],
        [1200.0, 1200.0],
        600.0,
        init=ZERO,
        save=C(30.0),
        load=C(50.0),
        persist=C(40.0),
        tiers=[TIER],
    )
    one = [tiered(persist=C(40.0)), tiered(persist=C(40.0))]
    a = ace.simulate(arr, failures=ace.Exponential(900.0), replicas=3, seed=2)
    b = ace.simulate(one, failures=ace.Exponential(900.0), replicas=3, seed=2)
    for f in a.jobs.dtype.names:
        np.testing.assert_array_equal(a.jobs[f], b.jobs[f], err_msg=f)
    assert_accounting(a.jobs)


# --------------------------------------------------------------------------
# 3. The batch path: rows bit-identical to the event heap
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "job, causes",
    [
        (
            ace.Job(
                64,
                2 * ace.DAY,
                1800.0,
                save=ace.LogNormal(3.0, 0.5),
                persist=ace.Exponential(300.0),
            ),
            None,
        ),
        (
            ace.Job(
                64,
                2 * ace.DAY,
                1800.0,
                save=C(60.0),
                tiers=[
                    ace.CheckpointTier(300.0, C(3.0), C(10.0), 2),
                    ace.CheckpointTier(600.0, ace.Gamma(2.0, 5.0), C(40.0)),
                ],
            ),
            [
                ace.Cause("sw", 2, node_down=False),
                ace.Cause("gpu", 1),
                ace.Cause("switch", 1, nodes=4, detect=C(60.0)),
            ],
        ),
        (
            ace.Job(
                64,
                2 * ace.DAY,
                "young",
                save=C(60.0),
                persist=ace.Weibull(1.5, 200.0),
                tiers=[ace.CheckpointTier(120.0, C(3.0), C(10.0))],
            ),
            [
                ace.Cause("sw", 1, node_down=False, detect=ace.Exponential(30.0)),
                ace.Cause("gpu", 1),
            ],
        ),
    ],
    ids=["async", "tiers", "both"],
)
def test_batch_rows_equal_the_event_heap(job: ace.Job, causes: list[ace.Cause] | None) -> None:
    law = ace.Weibull(0.7, 5 * HOUR)
    b = ace.batch_simulate([job], law, replicas=300, seed=3, causes=causes)
    s = ace.simulate([job], failures=law, replicas=300, seed=3, causes=causes)
    assert s.jobs["failures"].sum() > 100
    for f in s.jobs.dtype.names:
        if f != "job":
            np.testing.assert_array_equal(b.jobs[f], s.jobs[f], err_msg=f)
    assert_accounting(b.jobs)


def test_batch_horizon_close_out_matches() -> None:
    """Cut off mid-run (persists in flight, tier checkpoints not yet durable):
    the horizon's close-out is the same on both paths."""
    job = ace.Job(
        64,
        10 * ace.DAY,
        HOUR,
        save=C(30.0),
        persist=C(600.0),
        tiers=[ace.CheckpointTier(600.0, C(2.0), C(5.0))],
    )
    law = ace.Exponential(3 * HOUR)
    for horizon in (1000.0, 3630.0 + 120.0, 2 * ace.DAY + 17.0):
        b = ace.batch_simulate([job], law, replicas=50, seed=1, horizon=horizon)
        s = ace.simulate([job], failures=law, replicas=50, seed=1, horizon=horizon)
        for f in s.jobs.dtype.names:
            if f != "job":
                np.testing.assert_array_equal(b.jobs[f], s.jobs[f], err_msg=f)
        assert_accounting(s.jobs)
        assert not math.isnan(s.jobs["progress"].sum())


# --------------------------------------------------------------------------
# 3. Elastic jobs
# --------------------------------------------------------------------------


def elastic(min_gpus: int | None = 16, scaling: float = 1.0) -> ace.Job:
    """Four nodes (32 GPUs), work 4 h, a checkpoint every 1,800 s (save 10,
    load 60, no init); elastic down to ``min_gpus`` with a 30 s reconfiguration."""
    return ace.Job(
        32,
        4 * HOUR,
        1800.0,
        init=ZERO,
        save=C(10.0),
        load=C(60.0),
        min_gpus=min_gpus,
        reconfigure=C(30.0),
        scaling=scaling,
    )


def four_nodes(gaps: dict[int, list[float]], repair: float = 2000.0, spares: int = 0) -> ace.Fleet:
    return trace_fleet(4 + spares, gaps, repair=repair, spares=spares)


ELASTIC_FIELDS = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "recovery_wait",
    "narrow",
)


def erow(res: ace.SimulationResult) -> tuple[float, ...]:
    return tuple(float(res.jobs[0][f]) for f in ELASTIC_FIELDS)


def split(res: ace.SimulationResult, job: int = 0) -> tuple[float, float, float]:
    """The row's overhead split: (init, load, reconfigure)."""
    row = res.jobs[job]
    return (float(row["init"]), float(row["load"]), float(row["reconfigure"]))


# Node 0 fails at 1,000 s (the job's first segment, progress 940: all
# wasted) and is back at 3,000 s. The elastic job restarts at once on three
# nodes: load 60 + reconfigure 30 (1000-1090), then computes at 3/4 speed:
# by 3,000 s, 1,910 s give 1,432.5 of progress and 477.5 s of `narrow`. It
# grows: 30 s of reconfiguration (3000-3030), the remaining 367.5 s to the
# first boundary (3,397.5), then 7 more segments and 8 saves in all: done at
# 3,397.5 + 10 + 7 x 1,810 = 16,077.5. Overhead 60 + 90 + 30 = 180.
SHRINK_AND_GROW = (16077.5, 14400.0, 940.0, 80.0, 180.0, 0.0, 477.5)


def test_elastic_job_shrinks_and_grows_back() -> None:
    res = run([elastic()], fleet=four_nodes({0: [1000.0]}), record_events=True)
    assert erow(res) == SHRINK_AND_GROW
    # Overhead 180: loads 60 + 60, reconfigurations 30 (restart) + 30 (grow).
    assert split(res) == (0.0, 120.0, 60.0)
    assert times(res, 0, 15) == [1000.0]  # Shrink
    assert times(res, 0, 16) == [3000.0]  # Grow
    assert res.fleet["narrow_gpu_hours"][0] == approx(32 * 477.5 / HOUR)


def test_the_same_job_not_elastic_waits() -> None:
    """Not elastic (or elastic only down to all its GPUs): it waits 2,000 s
    for the repair holding three nodes, then restarts (load 60): 17,540."""
    for job in (elastic(None), elastic(32)):
        res = run([job], fleet=four_nodes({0: [1000.0]}))
        assert erow(res) == (17540.0, 14400.0, 940.0, 80.0, 120.0, 2000.0, 0.0)
        assert split(res) == (0.0, 120.0, 0.0)


def test_a_replacement_at_hand_restarts_whole() -> None:
    """With a hot spare the job restarts whole on it (no shrink): load
    1000-1060, then 8 segments and saves: 1,060 + 14,400 + 80."""
    res = run([elastic()], fleet=four_nodes({0: [1000.0]}, spares=1))
    assert erow(res) == (15540.0, 14400.0, 940.0, 80.0, 120.0, 0.0, 0.0)


@pytest.mark.parametrize("replacement", list(ace.Replacement), ids=lambda r: r.name)
def test_elastic_under_every_replacement_policy(replacement: ace.Replacement) -> None:
    """No replacement at hand: SPARES, WAIT_REPAIR (it keeps its claim on the
    node under repair and grows when it returns), PREEMPT_LOWER (nothing to
    preempt) and REQUEUE (not requeued: it can go on) all shrink alike."""
    policy = ace.Policy(replacement=replacement)
    res = run([elastic()], fleet=four_nodes({0: [1000.0]}), policy=policy)
    assert erow(res) == SHRINK_AND_GROW


def test_nodes_back_during_a_write_grow_at_the_next_compute() -> None:
    """Repair 2,495 s: the node returns at 3,495 s, while the narrow job
    writes its first checkpoint (the boundary at 1,090 + 1,800 / 0.75 =
    3,490, save 3490-3500). It reconfigures when the write ends (3500-3530),
    then runs whole: 3,530 + 7 x 1,810 = 16,200. Narrow 2,400 x 1/4 = 600."""
    res = run([elastic()], fleet=four_nodes({0: [1000.0]}, repair=2495.0), record_events=True)
    assert erow(res) == (16200.0, 14400.0, 940.0, 80.0, 180.0, 0.0, 600.0)
    assert split(res) == (0.0, 120.0, 60.0)
    assert times(res, 0, 16) == [3500.0]


def test_a_failure_while_narrow_shrinks_further_and_growth_waits_for_all_nodes() -> None:
    """Node 1 fails too, at 2,000 s (back at 4,000): the narrow job (910 s
    at 3/4 since 1,090: 682.5 of progress, all wasted, 227.5 s narrow) goes
    on with two nodes, still >= 16 GPUs: restart 2000-2090 at half speed.
    Node 0 is back at 3,000 s but one node is not enough to be whole: it
    grows only at 4,000 s (1,910 s at 1/2: 955 progress, 955 narrow).
    Reconfigure 4000-4030, then 845 s to the first boundary (4,875), and 7
    more segments: 4,885 + 7 x 1,810 = 17,555."""
    res = run([elastic()], fleet=four_nodes({0: [1000.0], 1: [2000.0]}), record_events=True)
    assert erow(res) == (17555.0, 14400.0, 940.0 + 682.5, 80.0, 270.0, 0.0, 227.5 + 955.0)
    # Three loads of 60, reconfigurations 30 + 30 (restarts) + 30 (grow).
    assert split(res) == (0.0, 180.0, 90.0)
    assert times(res, 0, 15) == [1000.0, 2000.0]
    assert times(res, 0, 16) == [4000.0]


def test_scaling_sets_the_narrow_rate() -> None:
    """scaling 2: three of four nodes run at (3/4)^2 = 0.5625. From 1,090 to
    3,000: 1,910 x 0.5625 = 1,074.375 of progress, 835.625 s narrow."""
    res = run([elastic(scaling=2.0)], fleet=four_nodes({0: [1000.0]}))
    narrow = 1910.0 * (1.0 - 0.5625)
    assert res.jobs[0]["narrow"] == approx(narrow, rel=1e-12)
    # The first boundary: (1,800 - 1,074.375) s after 3,030.
    assert res.jobs[0]["wall"] == approx(3030.0 + (1800.0 - 1910.0 * 0.5625) + 10.0 + 7 * 1810.0)


def test_a_stop_while_narrow_drops_its_claims() -> None:
    """Under WAIT_REPAIR, a narrow job that reaches its time limit gives up
    its claim on the node under repair (the invariants check the claims) and
    waits in the queue for four free nodes. Limit 1,500 s a run, interval
    900: the first checkpoint is written 960-970, so the failure at 1,000
    wastes 30 s. The shrink's run starts at 1,000 (load 60 + reconfigure 30),
    its boundary at 1,090 + 900 / 0.75 = 2,290 (save 2290-2300), then 200 s
    at 3/4 until the limit at 2,500 (150 of progress wasted). Narrow: (1,200 +
    200) / 4 = 350. Node 0 is back at 3,000: the job starts whole then
    (recovery wait 500)."""
    job = ace.Job(
        32,
        4 * HOUR,
        900.0,
        init=ZERO,
        save=C(10.0),
        load=C(60.0),
        min_gpus=16,
        reconfigure=C(30.0),
        time_limit=1500.0,
    )
    res = run(
        [job],
        fleet=four_nodes({0: [1000.0]}),
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
        record_events=True,
        horizon=3100.0,
    )
    r = res.jobs[0]
    assert times(res, 0, 13) == [2500.0]  # TimeLimit
    assert times(res, 0, START) == [0.0, 1000.0, 3000.0]
    assert r["narrow"] == approx(350.0)
    assert r["recovery_wait"] == approx(500.0)
    assert r["wasted"] == approx(30.0 + 150.0)


def test_elastic_bad_input() -> None:
    with pytest.raises(ValueError, match=r"min_gpus \(64\) must not exceed gpus \(32\)"):
        ace.Job(32, HOUR, 600.0, min_gpus=64)
    with pytest.raises(ValueError, match="min_gpus must be >= 1"):
        ace.Job(32, HOUR, 600.0, min_gpus=0)
    with pytest.raises(ValueError, match="scaling must be >= 0"):
        ace.Job(32, HOUR, 600.0, min_gpus=16, scaling=-1.0)
    with pytest.raises(ValueError, match="reconfigure must be >= 0"):
        ace.Job(32, HOUR, 600.0, min_gpus=16, reconfigure=-5.0)
    with pytest.raises(ValueError, match=r"min_gpus must be a multiple of a node's 8 GPUs"):
        ace.simulate([ace.Job(32, HOUR, 600.0, min_gpus=12)], fleet=ace.Fleet(4))


# --------------------------------------------------------------------------
# 5. Shared checkpoint storage
# --------------------------------------------------------------------------

GB = 1e9


def storage_job(**kwargs: object) -> ace.Job:
    """One node, work 1,200 s, a checkpoint every 600 s: save's fixed part
    5 s, then 1 GB through the storage (10 s alone at 100 MB/s)."""
    args: dict[str, object] = {"init": ZERO, "save": C(5.0), "load": ZERO, "checkpoint_bytes": GB}
    args.update(kwargs)
    return ace.Job(8, 1200.0, 600.0, **args)  # type: ignore[arg-type]


def test_a_transfer_alone_takes_bytes_over_bandwidth() -> None:
    """The first start loads 1 GB (10 s), each write is 5 + 10 s: wall
    10 + 1,200 + 2 x 15 = 1,240; no contention."""
    res = run([storage_job()], fleet=ace.Fleet(1, storage_bandwidth=1e8))
    r = res.jobs[0]
    assert (r["wall"], r["overhead"], r["ckpt_stall"], r["contention"]) == (1240.0, 10.0, 30.0, 0.0)


def test_concurrent_transfers_share_the_bandwidth() -> None:
    """Two such jobs in step: their loads share the storage (20 s each), so
    do their writes (5 + 20 s each): wall 20 + 1,200 + 2 x 25 = 1,270, and
    each transfer took 10 s longer than alone: 30 s of contention each,
    2 x 8 GPUs x 30 s = 0.1333 GPU-h for the fleet."""
    res = run([storage_job(), storage_job()], fleet=ace.Fleet(2, storage_bandwidth=1e8))
    for r in res.jobs:
        assert (r["wall"], r["overhead"], r["ckpt_stall"], r["contention"]) == (
            1270.0,
            20.0,
            50.0,
            30.0,
        )
    assert res.fleet["contention_gpu_hours"][0] == approx(2 * 8 * 30.0 / HOUR)


def test_a_transfer_cut_off_frees_its_share() -> None:
    """Both jobs write from 625 s (loads 0-20, compute 20-620, fixed 5 s).
    At 630 s one job's node fails (found 100 s later): its transfer is cut
    off (each has moved 0.25 GB). The other's remaining 0.75 GB now go at
    the full 100 MB/s: 7.5 s, its write ends at 637.5 (stall 17.5; 2.5 s of
    contention here, after 10 s in the shared load)."""
    jobs = [storage_job(), storage_job()]
    fleet = trace_fleet(3, {0: [630.0]}, repair=HOUR, spares=1, storage_bandwidth=1e8)
    causes = [ace.Cause("crash", 1.0, detect=C(100.0))]
    res = run(jobs, fleet=fleet, causes=causes, record_events=True)
    hit = int(res.trace["job"][0])
    other = 1 - hit
    assert times(res, other, CHECKPOINT_END)[0] == 637.5
    assert res.jobs[other]["contention"] == approx(10.0 + 2.5 + 0.0)
    assert res.jobs[hit]["failures"] == 1


def test_an_asynchronous_persist_moves_the_bytes_in_the_background() -> None:
    """The load's transfer 0-10 s; compute 10-610, snapshot 610-615 (no
    transfer: the persist moves the bytes), persist's fixed part 20 s then
    the 1 GB transfer (10 s): durable at 645 while compute goes on; the
    final snapshot 1215-1220, durable at 1,250 (the job waits for it)."""
    res = run(
        [storage_job(persist=C(20.0))],
        fleet=ace.Fleet(1, storage_bandwidth=1e8),
        record_events=True,
    )
    assert times(res, 0, DURABLE) == [645.0, 1250.0]
    r = res.jobs[0]
    assert (r["wall"], r["ckpt_stall"], r["contention"]) == (1250.0, 5.0 + 5.0 + 30.0, 0.0)


def test_storage_bad_input() -> None:
    with pytest.raises(ValueError, match="storage_bandwidth must be"):
        ace.Fleet(2, storage_bandwidth=0.0)
    with pytest.raises(ValueError, match="checkpoint_bytes must be >= 0"):
        storage_job(checkpoint_bytes=-1.0)


def test_optimal_interval_searches_the_durable_interval_of_a_tiered_job() -> None:
    """With tiers the grid never goes below the longest tier interval, and
    causes reach the batch runs: with every failure process-scope the tier
    survives them all, so the durable checkpoint is needed only at the end
    (the best interval is the longest on the grid); with node-scope failures
    the tier never helps and the durable optimum is near Young's."""
    tier = ace.CheckpointTier(10 * MINUTE, save=C(2.0), load=C(10.0))
    job = ace.Job(1024, 2 * ace.DAY, HOUR, save=C(120.0), tiers=[tier])
    law = ace.Exponential(8 * HOUR)
    process = ace.optimal_interval(
        job, law, replicas=200, seed=1, causes=[ace.Cause("sw", 1.0, node_down=False)]
    )
    node = ace.optimal_interval(job, law, replicas=200, seed=1, causes=[ace.Cause("hw", 1.0)])
    assert process.intervals.min() >= tier.interval and node.intervals.min() >= tier.interval
    assert process.interval > 4 * node.interval
    young = float(ace.young_interval(120.0, 8 * HOUR))
    assert node.plausible[0] <= young <= node.plausible[1]


def test_a_drain_checkpoint_times_its_transfer_too() -> None:
    """Maintenance drains node 0 at 300 s. The write's mean is its fixed 5 s
    plus 10 s alone on the storage, so the drain checkpoint starts at 285
    (progress 275, after the 10 s load), its fixed part ends at 290 and its
    transfer at 300: nothing is lost. The job restarts on the spare at 300
    (load 10 s), writes at progress 875 (the interval counts from the drain
    checkpoint: 910-925) and at 1,200 (1,250-1,265)."""
    job = storage_job()
    fleet = ace.Fleet(2, spares=1, storage_bandwidth=1e8, maintenance=[(300.0, 100.0, (0,))])
    res = run([job], failures=None, fleet=fleet, record_events=True)
    r = res.jobs[0]
    assert (r["wall"], r["wasted"], r["checkpoints"], r["planned_interruptions"]) == (
        1265.0,
        0.0,
        3,
        1,
    )
    assert times(res, 0, CHECKPOINT_END) == [300.0, 925.0, 1265.0]


def test_interval_rules_count_the_transfer() -> None:
    """Young's interval takes the write's whole mean: the fixed 5 s plus
    1,000 s alone on the storage: sqrt(2 x 1,005 x 14,400) = 5,379.96 s (not
    the 379 s of the fixed part alone); the row's expected ETTR too."""
    job = ace.Job(8, 10 * HOUR, "young", save=C(5.0), init=ZERO, load=ZERO, checkpoint_bytes=1e11)
    law = ace.Exponential(4 * HOUR)
    res = ace.simulate([job], failures=law, fleet=ace.Fleet(1, storage_bandwidth=1e8))
    r = res.jobs[0]
    assert r["checkpoint_interval"] == pytest.approx(math.sqrt(2 * 1005.0 * 4 * HOUR), rel=1e-12)
    expected = ace.expected_ettr_exponential(
        4 * HOUR, 10 * HOUR, r["checkpoint_interval"], 1005.0, 1000.0
    )
    assert r["expected_ettr"] == pytest.approx(expected, rel=1e-12)


def test_overhead_splits_into_init_and_load_even_when_a_start_is_cut_off() -> None:
    """No fleet, init 100, load 50, one checkpoint at the end (save 0). The
    first job-level failure strikes 120 s into the first start (20 s into
    its load): init 100 + load 20 charged. The job restarts at once: init
    100 + load 50 (120-270), computes 1,000 s: done at 1,270. Overhead 270 =
    init 200 + load 70; reconfigure 0."""
    job = ace.Job(8, 1000.0, 1000.0, init=C(100.0), save=ZERO, load=C(50.0))
    res = ace.simulate(job, failures=ace.Replay([120.0, 1e12]))
    row = res.jobs[0]
    assert (float(row["wall"]), float(row["overhead"]), float(row["productive"])) == (
        1270.0,
        270.0,
        1000.0,
    )
    assert split(res) == (200.0, 70.0, 0.0)
    assert res.fleet["init_gpu_hours"][0] == 8 * 200.0 / HOUR
    assert res.fleet["load_gpu_hours"][0] == 8 * 70.0 / HOUR


def test_overhead_is_init_plus_load_plus_reconfigure_everywhere() -> None:
    """Over random laws, a fleet with failures and repairs, elastic and
    multi-level jobs: every row's overhead is its init + load + reconfigure
    (to rounding), each non-negative."""
    fleet = ace.Fleet(
        12, repair=ace.Exponential(2 * HOUR), node_failures=ace.Weibull(0.7, 20 * HOUR)
    )
    jobs = [
        ace.Job(32, 2 * ace.DAY, HOUR, init=ace.Exponential(200.0), load=ace.Exponential(90.0)),
        ace.Job(32, 2 * ace.DAY, HOUR, min_gpus=16, reconfigure=ace.Exponential(60.0)),
        ace.Job(16, ace.DAY, HOUR, tiers=[ace.CheckpointTier(600.0, 5.0, 20.0, replication=2)]),
    ]
    res = ace.simulate(jobs, fleet=fleet, replicas=20, seed=3, horizon=5 * ace.DAY)
    j = res.jobs
    parts = j["init"] + j["load"] + j["reconfigure"]
    assert np.all(j["init"] >= 0) and np.all(j["load"] >= 0) and np.all(j["reconfigure"] >= 0)
    assert np.allclose(parts, j["overhead"], rtol=1e-12, atol=1e-6)
    assert np.all(j["reconfigure"][j["job"] != 1] == 0.0)
    assert j["reconfigure"][j["job"] == 1].sum() > 0
