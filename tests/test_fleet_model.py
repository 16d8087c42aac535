"""The model driven by an outside scheduler (FleetModel).

1. Hand cases: a few nodes, failures placed exactly, constant laws; the
   events the model reports and the rows it keeps, worked out by hand.
2. One model, two drivers: the built-in scheduler's decisions, read from
   simulate's event log (the nodes of every start, the job each preemption
   served), replayed through FleetModel give byte-identical job rows and
   failure traces, under every replacement and preemption policy, with and
   without causes, quarantine and lemons.
3. Bad calls get named errors.
"""

from __future__ import annotations

import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import HOUR, ZERO, assert_accounting, trace_fleet

C = ace.Constant


def job(nodes: int, work: float = 4 * HOUR, **kwargs: Any) -> ace.Job:
    """A whole-node job, a checkpoint every hour, save 60 s, load 60 s, no init."""
    args: dict[str, Any] = {"init": ZERO, "save": C(60.0), "load": C(60.0)}
    args.update(kwargs)
    return ace.Job(8 * nodes, work, HOUR, **args)


# --------------------------------------------------------------------------
# 1. Hand cases
# --------------------------------------------------------------------------


def test_a_failure_is_reported_and_the_scheduler_replaces_the_node() -> None:
    """Node 0 fails at 5,000 s (repair 1 h). The two-node job started at 0
    on [0, 1]: load 0-60, compute 60-3660, checkpoint 3660-3720, compute
    from 3,720; at 5,000 it has 1,280 s since its checkpoint (wasted). The
    model reports node_down, then job_failed (seen at once), in one batch;
    the job held [0, 1] and holds node 1. The scheduler restarts it on
    [1, 2] at 5,000: load 60, then 3 h of work and 3 checkpoints: done at
    5,060 + 3 x 3,660 = 16,040, on [1, 2]."""
    fleet = trace_fleet(4, {0: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, check_invariants=True)
    j = model.submit(job(2))
    assert model.free_nodes() == [0, 1, 2, 3]
    model.start(j, [0, 1])
    batch = model.advance(20_000.0)
    assert [(e.kind, e.job, e.time, e.fault_time, e.nodes, e.held) for e in batch] == [
        ("node_down", None, 5000.0, None, (0,), ()),
        ("job_failed", j, 5000.0, 5000.0, (0,), (0, 1)),
    ]
    assert model.peek() > model.now
    assert model.nodes_of(j) == [1]
    model.start(j, [1, 2])
    assert model.nodes_of(j) == [1, 2]
    up = model.advance(20_000.0)
    assert [(e.kind, e.time, e.nodes) for e in up] == [("node_up", 8600.0, (0,))]
    done = model.advance(20_000.0)
    assert [(e.kind, e.job, e.time, e.nodes, e.held) for e in done] == [
        ("job_done", j, 16040.0, (1, 2), (1, 2))
    ]
    assert model.nodes_of(j) == [1, 2]  # its last placement
    assert model.free_nodes() == [0, 1, 2, 3]
    assert model.advance(20_000.0) == [] and model.now == 20_000.0
    r = model.result().jobs[0]
    assert (r["wall"], r["wasted"], r["overhead"], r["recovery_wait"], r["failures"]) == (
        16040.0,
        1280.0,
        120.0,
        0.0,
        1,
    )
    assert_accounting(model.result().jobs)


def test_jobs_submitted_after_a_start_leave_its_nodes_as_they_were() -> None:
    """Each job's held nodes are a slice of one array that grows as jobs are
    submitted. Job a starts on [0, 1] at 0; b, c and d (one node each) are
    submitted after it and b starts on [2]. Node 1 fails at 5,000 s: a
    (checkpoint written at 3,720) loses 1,280 s and keeps node 0; b keeps
    node 2. a restarts on [0, 3] at 5,000: load 60, then 3 h and 3
    checkpoints, done at 5,060 + 3 x 3,660 = 16,040; b, untouched, is done
    at 60 + 4 x 3,660 = 14,700."""
    fleet = trace_fleet(5, {1: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, check_invariants=True)
    a = model.submit(job(2))
    model.start(a, [0, 1])
    b, c, d = (model.submit(job(1)) for _ in range(3))
    model.start(b, [2])
    assert (model.nodes_of(a), model.nodes_of(b), model.nodes_of(c)) == ([0, 1], [2], [])
    batch = model.advance(20_000.0)  # node 1's failure and a's, one instant
    assert [(e.kind, e.job, e.time, e.nodes) for e in batch] == [
        ("node_down", None, 5000.0, (1,)),
        ("job_failed", a, 5000.0, (1,)),
    ]
    assert (model.nodes_of(a), model.nodes_of(b)) == ([0], [2])
    model.start(a, [0, 3])
    assert model.nodes_of(a) == [0, 3]
    ends: dict[int, float] = {}
    for _ in range(10):  # advance returns at each reported event
        ends.update((e.job, e.time) for e in model.advance(20_000.0) if e.kind == "job_done")
    assert ends == {a: 16040.0, b: 14700.0}
    rows = model.result().jobs
    assert (rows[a]["wasted"], rows[a]["failures"], rows[b]["failures"]) == (1280.0, 1, 0)
    assert model.state(d) == "queued"
    assert_accounting(rows)


def test_a_detection_latency_reports_the_failure_at_its_detection() -> None:
    """A 10-minute detection: job_failed at 5,600 with fault_time 5,000; the
    job's detection bucket is 600 s."""
    fleet = trace_fleet(3, {0: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, causes=[ace.Cause("hang", 1.0, detect=C(600.0))])
    j = model.submit(job(2))
    model.start(j, [0, 1])
    assert model.advance(1e9)[0].kind == "node_down"
    (failed,) = model.advance(1e9)
    assert (failed.kind, failed.time, failed.fault_time, failed.cause) == (
        "job_failed",
        5600.0,
        5000.0,
        0,
    )
    model.start(j, [1, 2])
    while model.advance(1e9)[0].kind != "job_done":
        pass
    r = model.result().jobs[0]
    assert r["detection"] == 600.0
    assert r["wall"] == 5600.0 + 60.0 + 3 * 3660.0


def test_waiting_counts_as_recovery_wait_and_stop_requeues() -> None:
    """The scheduler waits for the repair (node 0 back at 8,600) before
    restarting on [0, 1]: recovery_wait 3,600. A second job, preempted by the
    scheduler at 9,000 for the first, loses its compute since its start
    (9,000 - 8,600 - 60 = 340) and that is job 0's churn."""
    fleet = trace_fleet(4, {0: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, check_invariants=True)
    a = model.submit(job(2))
    model.start(a, [0, 1])
    model.advance(1e9)  # node_down and job_failed
    (up,) = model.advance(1e9)
    assert up.kind == "node_up" and up.time == 8600.0
    model.start(a, [0, 1])
    b = model.submit(job(2, priority=-1))
    model.start(b, [2, 3])
    assert model.advance(9000.0) == [] and model.now == 9000.0
    model.stop(b, for_job=a)
    rows = model.result().jobs
    assert rows[a]["recovery_wait"] == 3600.0
    assert rows[b]["preemptions"] == 1
    assert rows[b]["wasted"] == 340.0
    assert rows[a]["churn_gpu_hours"] == pytest.approx(16 * 340.0 / HOUR)
    assert model.nodes_of(b) == [] and model.free_nodes() == [2, 3]


def test_copy_is_an_independent_fork() -> None:
    fleet = ace.Fleet(8, repair=ace.Exponential(HOUR), node_failures=ace.Exponential(2 * ace.DAY))
    model = ace.FleetModel(fleet, seed=3)
    j = model.submit(job(4, work=ace.DAY))
    model.start(j, [0, 1, 2, 3])
    model.advance(6 * HOUR)
    fork = model.copy()
    assert fork.now == model.now and fork.nodes_of(j) == model.nodes_of(j)
    a = model.advance(ace.DAY)
    b = fork.advance(ace.DAY)
    assert a == b  # the same future, drawn again
    fork.submit(job(1))
    assert len(model.jobs) == 1 and len(fork.jobs) == 2


def test_checkpoint_events_when_asked() -> None:
    model = ace.FleetModel(ace.Fleet(2), checkpoints=True)
    j = model.submit(job(1, work=2 * HOUR))
    model.start(j, [0])
    kinds = []
    while True:
        evs = model.advance(1e9)
        kinds += [(e.kind, e.time) for e in evs]
        if not evs or evs[-1].kind == "job_done":
            break
    assert kinds == [("checkpoint", 3720.0), ("checkpoint", 7380.0), ("job_done", 7380.0)]


# --------------------------------------------------------------------------
# 3. Bad calls
# --------------------------------------------------------------------------


def test_bad_calls_get_named_errors() -> None:
    fleet = trace_fleet(4, {0: [100.0]}, repair=HOUR)
    model = ace.FleetModel(fleet)
    with pytest.raises(ValueError, match="no job was submitted"):
        model.start(0, [0])
    j = model.submit(job(2))
    with pytest.raises(ValueError, match="needs 2 node"):
        model.start(j, [0])
    with pytest.raises(ValueError, match="node 9 does not exist"):
        model.start(j, [0, 9])
    with pytest.raises(ValueError, match="given twice"):
        model.start(j, [1, 1])
    model.start(j, [0, 1])
    with pytest.raises(ValueError, match="is running"):
        model.start(j, [2, 3])
    k = model.submit(job(2))
    with pytest.raises(ValueError, match="node 1 is busy"):
        model.start(k, [1, 2])
    with pytest.raises(ValueError, match="only a running job or one waiting"):
        model.stop(k)
    model.advance(1e9)  # node 0 down
    with pytest.raises(ValueError, match="node 0 is out of service"):
        model.start(k, [0, 2])
    with pytest.raises(ValueError, match="cannot go backwards"):
        model.advance(10.0)
    with pytest.raises(ValueError, match="job must be"):
        model.stop(7)
    with pytest.raises(TypeError, match="job must be a Job"):
        model.submit("job")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time_limit"):
        model.submit(job(1, time_limit=HOUR))
    with pytest.raises(ValueError, match=r"gpus needs 9 nodes"):
        model.submit(job(9))
    with pytest.raises(ValueError, match="cold spares"):
        ace.FleetModel(ace.Fleet(4, cold_spares=1, cold_spare_delay=60.0))
    with pytest.raises(ValueError, match="on_failure"):
        ace.FleetModel(fleet, policy=ace.Policy(on_failure=lambda v: None))
    with pytest.raises(TypeError, match="fleet must be a Fleet"):
        ace.FleetModel(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# 2. One model, two drivers
# --------------------------------------------------------------------------


def replay_built_in(
    kwargs: dict[str, Any], replica: int
) -> tuple[ace.SimulationResult, ace.SimulationResult]:
    """simulate's run of `kwargs` and the same decisions replayed through a
    FleetModel (replica `replica`): every submission, start (on the logged
    nodes, in order), preemption (for the logged job) and REQUEUE release at
    the point of the event log where the built-in scheduler made it."""
    res = ace.simulate(record_events=True, **kwargs)
    ev = res.events[res.events["replica"] == replica]
    placements = res.placements[res.placements["replica"] == replica]
    starts: dict[tuple[int, float], list[int]] = {}
    for row in placements:
        starts.setdefault((int(row["job"]), float(row["time"])), []).append(int(row["node"]))
    policy = kwargs.get("policy") or ace.Policy()
    model = ace.FleetModel(
        kwargs["fleet"],
        kwargs.get("failures"),
        kwargs.get("causes"),
        ace.Policy(quarantine=policy.quarantine),
        seed=kwargs.get("seed", 0),
        replica=replica,
        horizon=kwargs.get("horizon", math.inf),
        checkpoints=True,
        check_invariants=True,
    )
    jobs = kwargs["jobs"]
    requeue = policy.replacement == ace.Replacement.REQUEUE
    p = q = 0  # rows of simulate's log matched; rows of the model's log read

    def key(row: Any) -> tuple[int, int, float]:
        return int(row["job"]), int(row["kind"]), float(row["time"])

    def skip_waiting() -> None:
        nonlocal p
        while p < len(ev) and int(ev[p]["kind"]) == 10:  # logged by the built-in recovery only
            p += 1

    def step(t: float) -> list[ace.Event]:
        nonlocal p, q
        # The built-in scheduler decides between events of one instant.
        events = model.advance(t, whole_instant=False)
        if requeue:
            for e in events:
                if e.kind == "job_failed":
                    model.stop(e.job)
        consume()
        return events

    def consume() -> None:
        nonlocal p, q
        for row in model._core.events_since(q):
            q += 1
            skip_waiting()
            if p < len(ev) and key(row) == key(ev[p]):
                p += 1
            elif int(row["kind"]) != 2:  # (a compute the built-in preempted before it began)
                raise AssertionError(
                    f"model row {key(row)} where simulate has {ev[p] if p < len(ev) else None}"
                )

    def reach(t: float) -> None:
        while model.peek() < t:
            step(t)
        if model.now < t:
            step(t)

    def ready(j: int, nodes: list[int]) -> bool:
        free = set(model.free_nodes()) | set(model.nodes_of(j))
        return all(n in free for n in nodes)

    while True:
        skip_waiting()
        if p == len(ev):
            break
        row = ev[p]
        kind, j, t = int(row["kind"]), int(row["job"]), float(row["time"])
        if kind == 0:
            reach(t)
            skip_waiting()
            if key(ev[p]) == (j, 0, t):
                model.submit(jobs[j])
        elif kind == 1:
            nodes = starts[(j, t)]
            while model.peek() < t:
                step(t)
            while not ready(j, nodes) and model.peek() <= t:
                step(t)
            if model.now < t:
                step(t)
            skip_waiting()
            if key(ev[p]) == (j, 1, t):
                model.start(j, nodes)
        elif kind == 9:
            reach(t)
            skip_waiting()
            if key(ev[p]) == (j, 9, t):
                other = int(row["other"])
                model.stop(j, None if other < 0 else other)
        else:
            before = q
            events = step(t)
            if not events and q == before:
                raise AssertionError(f"the model does not reach simulate's row {p}: {row}")
        consume()
    return res, model.result()


def scenario(
    replacement: ace.Replacement,
    preemption: ace.Preemption,
    *,
    causes: bool,
    quarantine: bool,
    lemons: bool,
) -> dict[str, Any]:
    fleet = ace.Fleet(
        24,
        spares=2,
        repair=ace.Exponential(6 * HOUR),
        node_failures=ace.Exponential(5 * ace.DAY),
        lemon_fraction=0.1 if lemons else 0.0,
        lemon_factor=10.0,
    )
    jobs = [ace.Job(64, work=4 * ace.DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(g, work=ace.DAY, checkpoint_interval=HOUR, submit=i * HOUR, priority=i % 2)
        for i, g in enumerate([8, 16, 32, 8, 24, 8, 16, 32] * 2)
    ]
    grace = 1800.0 if preemption == ace.Preemption.CHECKPOINT_AWARE else 0.0
    policy = ace.Policy(
        replacement,
        preemption,
        ace.Quarantine(2, 3 * ace.DAY, 2 * ace.DAY) if quarantine else None,
        preemption_grace=grace,
    )
    return dict(
        jobs=jobs,
        fleet=fleet,
        policy=policy,
        causes=ace.LLAMA3_CAUSES if causes else None,
        replicas=2,
        seed=5,
    )


@pytest.mark.parametrize("replacement", list(ace.Replacement), ids=lambda r: r.name)
@pytest.mark.parametrize("preemption", list(ace.Preemption), ids=lambda p: p.name)
@pytest.mark.parametrize(
    "causes, quarantine, lemons", [(True, True, True), (False, False, False), (True, False, True)]
)
def test_replaying_the_built_in_scheduler_gives_the_same_rows(
    replacement: ace.Replacement,
    preemption: ace.Preemption,
    causes: bool,
    quarantine: bool,
    lemons: bool,
) -> None:
    kwargs = scenario(replacement, preemption, causes=causes, quarantine=quarantine, lemons=lemons)
    for replica in range(2):
        res, replayed = replay_built_in(kwargs, replica)
        # Byte for byte, field by field (padding bytes aside).
        mine = res.jobs[res.jobs["replica"] == replica]
        trace = res.trace[res.trace["replica"] == replica]
        for table, got in ((mine, replayed.jobs), (trace, replayed.trace)):
            assert len(table) == len(got)
            for f in table.dtype.names:
                if not f.startswith("pad"):
                    want = np.ascontiguousarray(table[f]).tobytes()
                    assert want == np.ascontiguousarray(got[f]).tobytes(), f
        # the node events too, quarantines and retirements included
        assert res.node_events is not None and replayed.node_events is not None
        logged = res.node_events[res.node_events["replica"] == replica]
        assert len(logged) == len(replayed.node_events)
        for f in ("node", "kind", "event", "cause", "time", "until"):
            assert np.array_equal(logged[f], replayed.node_events[f], equal_nan=True), f
        assert replayed.jobs["failures"].sum() > 0
    if replacement == ace.Replacement.PREEMPT_LOWER:
        assert res.jobs["preemptions"].sum() > 0


def test_resize_runs_an_elastic_job_narrow_and_back() -> None:
    """A four-node elastic job (down to 16 GPUs, reconfigure 30 s) computes
    from 60 s. At 1,000 s the scheduler shrinks it to [0, 1]: a 30 s pause,
    then half speed; at 3,000 s it gives the nodes back: a 30 s pause, full
    speed. Progress by 3,000: 940 + (3,000 - 1,030) / 2 = 1,925 (1,970 s at
    half speed: 985 s narrow); the first boundary (3,600) at 3,030 + 1,675 =
    4,705, saved at 4,765; then 3 more segments: 4,765 + 3 x 3,660 = 15,745."""
    model = ace.FleetModel(ace.Fleet(4), check_invariants=True)
    j = model.submit(job(4, min_gpus=16, reconfigure=C(30.0)))
    model.start(j, [0, 1, 2, 3])
    model.advance(1000.0)
    model.resize(j, [0, 1])
    assert model.nodes_of(j) == [0, 1] and model.free_nodes() == [2, 3]
    model.advance(3000.0)
    model.resize(j, [0, 1, 2, 3])
    (done,) = model.advance(1e9)
    assert (done.kind, done.time) == ("job_done", 15745.0)
    r = model.result().jobs[0]
    assert (r["narrow"], r["overhead"], r["wall"]) == (985.0, 60.0 + 60.0, 15745.0)
    assert_accounting(model.result().jobs)
    with pytest.raises(ValueError, match="not elastic"):
        plain = model.submit(job(2))
        model.resize(plain, [0])


def test_state_says_where_a_job_stands() -> None:
    """The scheduler can tell when a stop or a resize is possible."""
    fleet = trace_fleet(3, {0: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, causes=[ace.Cause("hang", 1.0, detect=C(600.0))])
    j = model.submit(job(2))
    assert model.state(j) == "queued"
    model.start(j, [0, 1])
    assert model.state(j) == "starting"
    model.advance(100.0)
    assert model.state(j) == "computing"
    model.advance(3670.0)
    assert model.state(j) == "writing"
    model.advance(1e9)  # node 0 down at 5,000: the fault is seen at 5,600
    assert model.state(j) == "failing"
    with pytest.raises(ValueError, match="not detected yet"):
        model.stop(j)
    model.advance(1e9)  # job_failed
    assert model.state(j) == "waiting"
    model.start(j, [1, 2])
    while model.state(j) != "done":
        model.advance(1e9)


def test_stop_after_a_failure_requeues_and_releases_the_survivors() -> None:
    """Node 0 fails at 5,000 s; the scheduler sends the failed job back to
    the queue (its survivor, node 1, released: free again, and with
    Fleet(spares=1) the pool refills with it first) and starts it on [2, 3]
    at 6,000: recovery_wait 1,000 (not a preemption), wasted 1,280, done at
    6,060 + 3 x 3,660 = 17,040."""
    fleet = trace_fleet(5, {0: [5000.0]}, repair=HOUR, spares=1)
    model = ace.FleetModel(fleet, check_invariants=True)
    assert model.spare_nodes() == [4]
    j = model.submit(job(2))
    model.start(j, [0, 1])
    model.advance(1e9)  # node_down and job_failed
    model.stop(j)
    assert model.state(j) == "queued" and model.nodes_of(j) == []
    assert model.free_nodes() == [1, 2, 3, 4]
    model.advance(6000.0)
    model.start(j, [2, 3])
    while model.state(j) != "done":
        model.advance(1e9)
    r = model.result().jobs[0]
    assert (r["recovery_wait"], r["wasted"], r["preemptions"], r["restarts"], r["end"]) == (
        1000.0,
        1280.0,
        0,
        1,
        17040.0,
    )


def test_can_start_answers_without_changing_anything() -> None:
    """Two one-node jobs on two nodes; node 0 fails at 10 s (repair 100 s).
    can_start says whether start would be accepted: node 0 free, then held by
    job a (busy for b), then out of service (down at 10 s, back at 110 s);
    a request that never can be (a missing node, a running job, the wrong
    count) raises start's error. The answers change nothing: the result
    equals a run without them."""

    def run(ask: bool) -> Any:
        fleet = ace.Fleet(
            2, repair=100.0, node_failures=ace.NodeTrace.from_gaps({0: [10.0]}, nodes=2)
        )
        m = ace.FleetModel(fleet, horizon=1e4)
        job = ace.Job(8, 1000.0, 500.0, init=0.0, save=0.0, load=0.0)
        a, b = m.submit(job), m.submit(job)
        if ask:
            assert m.can_start(a, [0]) and m.can_start(a, [1])
        m.start(a, [0])
        if ask:
            assert not m.can_start(b, [0]) and m.can_start(b, [1])
            with pytest.raises(ValueError, match="node 5 does not exist"):
                m.can_start(b, [5])
            with pytest.raises(ValueError, match="is running"):
                m.can_start(a, [1])
            with pytest.raises(ValueError, match="needs 1 node"):
                m.can_start(b, [0, 1])
            with pytest.raises(TypeError, match="nodes must be"):
                m.can_start(b, "0")  # type: ignore[arg-type]
        events = m.advance(50.0)
        assert [e.kind for e in events] == ["node_down", "job_failed"] and events[1].job == a
        if ask:
            assert not m.can_start(a, [0]) and m.can_start(a, [1])
        m.advance(120.0)
        if ask:
            assert m.can_start(a, [0])
        m.start(a, [0])
        m.start(b, [1])
        m.advance(1e4)
        return m.result()

    asked, plain = run(True), run(False)
    assert asked.jobs.tobytes() == plain.jobs.tobytes()
    assert float(asked.jobs["recovery_wait"][0]) == 110.0 - 10.0


# --------------------------------------------------------------------------
# Never: failures switched off, in every entry point
# --------------------------------------------------------------------------

#: A two-node job of 4 h, a checkpoint each hour (save 60 s), load 60 s, no
#: init, with nothing failing: load 0-60, then four hours of compute each
#: followed by a 60 s write: 60 + 4 x 3,600 + 4 x 60 = 14,700 s.
UNFAILED_WALL = 60.0 + 4 * HOUR + 4 * 60.0


def test_never_switches_failures_off_in_simulate() -> None:
    never = ace.Never()
    runs = {
        "job-level": ace.simulate([job(2)], failures=never, replicas=5),
        "node-level": ace.simulate(
            [job(2)], fleet=ace.Fleet(4, node_failures=never, lemon_fraction=0.5), replicas=5
        ),
        "both": ace.simulate(
            [job(2)], failures=never, fleet=ace.Fleet(4, node_failures=never), replicas=5
        ),
        "per-job": ace.simulate([job(2), job(1)], failures=[never, never], replicas=5),
        "fresh": ace.simulate(
            [job(2)], fleet=ace.Fleet(4, node_failures=never, node_start="fresh"), replicas=5
        ),
    }
    for name, res in runs.items():
        assert (res.jobs["failures"] == 0).all(), name
        assert (res.jobs["wall"][res.jobs["job"] == 0] == UNFAILED_WALL).all(), name
        assert len(res.trace) == 0, name
        # The analytic columns of a job without failures.
        for column in ("mtbf", "young_interval", "daly_interval"):
            assert (res.jobs[column] == math.inf).all(), (name, column)


def test_node_failures_none_keeps_its_meaning() -> None:
    """``Fleet(node_failures=None)``: no node-level law, so simulate draws
    job-level failures from the scale-aware default."""
    res = ace.simulate([job(2)], fleet=ace.Fleet(4, node_failures=None))
    assert res.jobs["mtbf"][0] == ace.mttf(ace.meta_scale_model(), 16)


def test_never_in_the_fleet_model() -> None:
    model = ace.FleetModel(ace.Fleet(3, node_failures=ace.Never()), failures=ace.Never())
    a = model.submit(job(2))
    model.start(a, [0, 1])
    events = model.advance(math.inf)
    assert [(e.time, e.kind, e.job) for e in events] == [(UNFAILED_WALL, "job_done", a)]
    assert model.peek() == math.inf
    assert model.result().jobs["failures"][0] == 0


# --------------------------------------------------------------------------
# One batch per instant: a driver that decides after every advance
# --------------------------------------------------------------------------


def _easy_spares() -> Any:
    import importlib
    import sys
    from pathlib import Path

    folder = str(Path(__file__).resolve().parents[1] / "examples" / "scheduler")
    sys.path.insert(0, folder)
    try:
        return importlib.import_module("easy_spares")
    finally:
        sys.path.remove(folder)


def _same_instant_workload() -> tuple[ace.Fleet, list[ace.Job]]:
    """Twelve nodes (two spares, repair 1 h). Nodes fail in groups at the
    same times (0, 3 and 6 at 20,000 s; 1, 4, 7 and 9 at 50,000 s; 2 and 5
    at 80,000 s), and whole-hour jobs with constant laws, submitted in
    groups at the same times, end together: many instants hold several
    events (failures, their jobs' failures, ends and returns)."""
    trace = ace.NodeTrace.from_times(
        {0: [20_000.0], 3: [20_000.0], 6: [20_000.0], 1: [50_000.0], 4: [50_000.0],
         7: [50_000.0], 9: [50_000.0], 2: [80_000.0], 5: [80_000.0]},
        nodes=12,
    )  # fmt: skip
    fleet = ace.Fleet(12, spares=2, repair=C(HOUR), node_failures=trace)
    jobs = []
    for k in range(36):
        jobs.append(
            ace.Job(
                8 * (1 + k % 3),
                (2 + k % 4) * HOUR,
                HOUR,
                init=ZERO,
                save=C(60.0),
                load=C(60.0),
                submit=(k // 6) * 4 * HOUR,
                priority=int(k % 5 == 0),
            )
        )
    return fleet, jobs


def _gathering_run(easy: Any, model: ace.FleetModel, jobs: list[ace.Job]) -> Any:
    """The example's driver as it was: it gathers an instant with a peek loop."""
    sched = easy.EasySpares(model)
    pending = list(jobs)
    while True:
        while pending and pending[0].submit <= model.now:
            sched.submit(pending.pop(0))
        sched.schedule()
        if not pending and len(sched.done) == len(jobs):
            break
        target = pending[0].submit if pending else math.inf
        if model.peek() == math.inf and target == math.inf:
            break
        events = model.advance(target, whole_instant=False)
        while events and model.peek() <= model.now:
            events += model.advance(model.now, whole_instant=False)
        for event in events:
            sched.handle(event)
    return sched


def test_a_driver_deciding_after_every_advance_gets_the_gathered_schedule() -> None:
    """The worked example's scheduler, driven by its own run() (one decision
    after every advance, no peek loop), makes exactly the starts (time,
    job, nodes, how) and gets exactly the rows that the driver gathering
    each instant with peek() gets; deciding after each single report
    instead (whole_instant=False, no gathering) changes the schedule."""
    easy = _easy_spares()
    fleet, jobs = _same_instant_workload()
    gathered = _gathering_run(easy, ace.FleetModel(fleet, checkpoints=True), jobs)
    batches: list[list[ace.Event]] = []

    class Counting(ace.FleetModel):
        def advance(self, until: float, *, whole_instant: bool = True) -> list[ace.Event]:
            events = super().advance(until, whole_instant=whole_instant)
            batches.append(events)
            return events

    model = Counting(fleet, checkpoints=True, check_invariants=True)
    sched = easy.EasySpares(model)
    res = easy.run(model, jobs, scheduler=sched)
    # The workload has many instants with several events, each one batch.
    assert sum(len(b) >= 2 for b in batches) >= 10
    assert all(len({e.time for e in b}) <= 1 for b in batches)
    assert sched.starts == gathered.starts
    assert len(sched.starts) >= len(jobs)
    assert res.jobs.tobytes() == gathered.model.result().jobs.tobytes()
    assert res.placements.tobytes() == gathered.model.result().placements.tobytes()

    class OneReport(ace.FleetModel):
        def advance(self, until: float, *, whole_instant: bool = True) -> list[ace.Event]:
            return super().advance(until, whole_instant=False)

    partial = easy.EasySpares(OneReport(fleet, checkpoints=True))
    easy.run(partial.model, jobs, scheduler=partial)
    assert partial.starts != sched.starts


# --------------------------------------------------------------------------
# The state a scheduler reads
# --------------------------------------------------------------------------


def test_node_states_and_job_lists_follow_the_hand_worked_run() -> None:
    """Six nodes, one hot spare (the highest free node: 5), repair 1 h,
    quarantine after 2 failures within a day, for 10 h. Node 0 fails at
    1,000 and 9,000 s, node 3 at 9,000 s. Jobs: a (2 nodes) on [0, 1], b (1
    node) on [2], c (3 nodes) and d (1 node, priority 1) queued.

    - 1,000: node 0 down, a fails (held [0, 1], lost [0]) and waits on 1;
    - the scheduler restarts a on [1, 3]; node 0 is back at 4,600;
    - 9,000: node 0 fails again (quarantined), node 3 fails (a fails:
      held [1, 3], lost [3]); a is sent back to the queue, d starts on the
      spare, 5 (load 60, one hour, save 60: done at 12,720); node 3 is
      back at 12,600 and refills the spare pool (one spare: node 5, free
      again after d, is a plain free node)."""
    S = ace.NodeState
    FREE, BUSY, DOWN, QUAR, SPARE = S.FREE, S.BUSY, S.DOWN, S.QUARANTINED, S.SPARE
    trace = ace.NodeTrace.from_times({0: [1000.0, 9000.0], 3: [9000.0]}, nodes=6)
    fleet = ace.Fleet(6, spares=1, repair=C(HOUR), node_failures=trace)
    quarantine = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, 10 * HOUR))
    model = ace.FleetModel(fleet, policy=quarantine, check_invariants=True)
    a = model.submit(job(2, work=10 * HOUR))
    b = model.submit(job(1, work=10 * HOUR))
    c = model.submit(job(3, work=10 * HOUR))
    d = model.submit(job(1, work=HOUR, priority=1))
    assert [model.nodes_needed(j) for j in (a, b, c, d)] == [2, 1, 3, 1]
    model.start(a, [0, 1])
    model.start(b, [2])

    def seen() -> tuple[list[ace.NodeState], list[int], list[int], list[int], list[int]]:
        states = model.node_states()
        assert states.dtype == np.uint8 and states.shape == (6,)
        return ([S(s) for s in states], model.running(), model.waiting(), model.queued(),
                model.down_nodes())  # fmt: skip

    assert seen() == ([BUSY, BUSY, BUSY, FREE, FREE, SPARE], [a, b], [], [d, c], [])
    batch = model.advance(20_000.0)
    assert [(e.time, e.kind, e.nodes, e.held) for e in batch] == [
        (1000.0, "node_down", (0,), ()),
        (1000.0, "job_failed", (0,), (0, 1)),
    ]
    assert seen() == ([DOWN, BUSY, BUSY, FREE, FREE, SPARE], [b], [a], [d, c], [0])
    model.start(a, [1, 3])
    assert [(e.time, e.kind) for e in model.advance(20_000.0)] == [(4600.0, "node_up")]
    assert seen() == ([FREE, BUSY, BUSY, BUSY, FREE, SPARE], [a, b], [], [d, c], [])
    batch = model.advance(20_000.0)
    assert [(e.time, e.kind, e.job, e.nodes, e.held) for e in batch] == [
        (9000.0, "node_down", None, (0,), ()),
        (9000.0, "node_down", None, (3,), ()),
        (9000.0, "job_failed", a, (3,), (1, 3)),
    ]
    assert seen() == ([QUAR, BUSY, BUSY, DOWN, FREE, SPARE], [b], [a], [d, c], [0, 3])
    model.stop(a)  # back to the queue: by priority, then submission
    assert (model.queued(), model.waiting(), model.nodes_of(a)) == ([d, a, c], [], [])
    model.start(d, [5])
    assert model.running() == [b, d] and model.queued() == [a, c]
    assert [(e.time, e.kind) for e in model.advance(20_000.0)] == [(12600.0, "node_up")]
    assert [(e.time, e.kind, e.job, e.nodes) for e in model.advance(20_000.0)] == [
        (12720.0, "job_done", d, (5,))
    ]
    assert model.state(d) == "done" and model.nodes_of(d) == [5]  # its last placement
    assert seen() == ([QUAR, FREE, BUSY, SPARE, FREE, FREE], [b], [], [a, c], [0])


def test_a_retired_node_and_a_partial_node() -> None:
    """Quarantine for good after one failure: node 1, failing at 100 s, is
    retired. A 4-GPU job on node 0 (of 8 GPUs) makes it busy; it needs one
    node."""
    trace = ace.NodeTrace.from_times({1: [100.0]}, nodes=3)
    retire = ace.Policy(quarantine=ace.Quarantine(1, ace.DAY, math.inf))
    model = ace.FleetModel(ace.Fleet(3, node_failures=trace), policy=retire)
    small = model.submit(ace.Job(4, HOUR, HOUR, init=ZERO, save=ZERO, load=ZERO))
    assert model.nodes_needed(small) == 1
    model.start(small, [0])
    model.advance(200.0)
    S = ace.NodeState
    assert [S(s) for s in model.node_states()] == [S.BUSY, S.RETIRED, S.FREE]
    assert model.down_nodes() == [1]


# --------------------------------------------------------------------------
# Arrivals and requeue
# --------------------------------------------------------------------------


def test_add_jobs_submits_each_job_at_its_submit_time() -> None:
    """Four one-node jobs of 1 h (load 60 s, a 60 s save: 3,720 s a run)
    arrive at 0, 3,600 and twice at 7,200 s on four nodes; node 0 fails at
    7,200 s too. Each arrival is a job_submitted event at its time (the two
    at 7,200 in the order given, after node 0's failure, in one batch); the
    scheduler starts each on the lowest free node. Ends: 3,720, 7,320 (on
    node 1: node 0 is busy until 3,720), and 10,920 for both late jobs (on
    nodes 2 and 3: 0 is down, 1 busy). Rows: submit at the arrival, no
    queue wait."""
    trace = ace.NodeTrace.from_times({0: [7200.0]}, nodes=4)
    model = ace.FleetModel(ace.Fleet(4, repair=C(HOUR), node_failures=trace))
    model.add_jobs([job(1, work=HOUR, submit=s) for s in (0.0, 3600.0, 7200.0, 7200.0)])
    assert model.peek() == 0.0 and model.jobs == []
    log = []
    while model.peek() < math.inf:
        events = model.advance(math.inf)
        log.append([(e.time, e.kind, e.job) for e in events])
        for e in events:
            if e.kind == "job_submitted":
                model.start(e.job, model.free_nodes()[:1])
    assert log == [
        [(0.0, "job_submitted", 0)],
        [(3600.0, "job_submitted", 1)],
        [(3720.0, "job_done", 0)],
        [(7200.0, "node_down", None), (7200.0, "job_submitted", 2), (7200.0, "job_submitted", 3)],
        [(7320.0, "job_done", 1)],
        [(10800.0, "node_up", None)],
        [(10920.0, "job_done", 2), (10920.0, "job_done", 3)],
    ]
    rows = model.result().jobs
    assert list(rows["submit"]) == [0.0, 3600.0, 7200.0, 7200.0]
    assert list(rows["queue_wait"]) == [0.0] * 4
    assert [model.nodes_of(j) for j in range(4)] == [[0], [1], [2], [3]]
    # A copy replays the arrivals.
    assert len(model.copy().jobs) == 4


def test_add_jobs_beside_submit_and_a_past_time() -> None:
    """A job whose submit time has passed arrives now (at the next advance);
    ids follow the order of submission, submit's included; a job arriving
    after the horizon never arrives."""
    model = ace.FleetModel(ace.Fleet(2), horizon=5000.0)
    model.advance(1000.0)
    model.add_jobs([job(1, submit=500.0), job(1, submit=9000.0)])
    direct = model.submit(job(1))
    assert direct == 0
    events = model.advance(2000.0)
    assert [(e.time, e.kind, e.job) for e in events] == [(1000.0, "job_submitted", 1)]
    assert model.peek() == math.inf  # the other arrives after the horizon
    assert model.result().jobs["submit"][1] == 1000.0


def test_requeue_gives_a_failed_jobs_nodes_back() -> None:
    """Node 0 fails at 5,000 s under a two-node job on [0, 1]: requeue
    releases node 1 and queues the job (no preemption, its wait counted as
    recovery_wait from 5,000 to its restart at 6,000 on [2, 3]: 1,000 s).
    requeue refuses a job that is not waiting after a failure."""
    fleet = trace_fleet(4, {0: [5000.0]}, repair=HOUR)
    model = ace.FleetModel(fleet, check_invariants=True)
    j = model.submit(job(2))
    with pytest.raises(ValueError, match="job 0 is queued; only a job waiting"):
        model.requeue(j)
    model.start(j, [0, 1])
    with pytest.raises(ValueError, match="stop preempts"):
        model.requeue(j)
    model.advance(1e9)
    model.requeue(j)
    assert (model.state(j), model.nodes_of(j), model.queued()) == ("queued", [], [j])
    assert model.free_nodes() == [1, 2, 3]
    model.advance(6000.0)
    model.start(j, [2, 3])
    r = model.result().jobs[0]
    assert (r["recovery_wait"], r["preemptions"], r["wasted"]) == (1000.0, 0, 1280.0)
