"""Routine checkpoints applied ahead of the clock (issue 13, item 2).

In a fleet run, a computing job's checkpoint begins and ends are applied
when its compute phase begins, up to its completion, its next job-level
failure or the horizon, instead of one heap event each (with checkpoint
levels: persist ends, tier writes and waits for a persist as well; an
elastic job steps its own); when a failure or a preemption stops the job
earlier, it is brought back to that moment (``JobTransitions::catch_up``).
The event log turns this off (every transition is then logged as its own
event), so a run with ``record_events=True`` is the step-by-step reference:
its tables must be the same bytes, ``fleet.events`` included (every
checkpoint still counts), all but ``fleet.heap_events`` (the events the heap
delivered: the work done).

The hand-worked cases put a node failure, or a preemption, at the exact
instant a checkpoint write or a persist ends: the kernel's order at equal
times decides whether it is kept (the fleet's events come first, then jobs
by index).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import (
    HOUR,
    MINUTE,
    ZERO,
    assert_accounting,
    job,
    model_bytes,
    placement,
    trace_fleet,
)

SAVE = ace.Constant(60.0)


def both(jobs: Any, **kw: Any) -> ace.SimulationResult:
    """The run ahead of the clock and the step-by-step one (event log on):
    the same jobs, fleet and trace tables, byte for byte, but for the
    events the heap delivered (``heap_events``: fewer ahead, and all of
    ``events`` step by step)."""
    kw.setdefault("threads", 1)
    ahead = ace.simulate(jobs, check_invariants=True, **kw)
    stepped = ace.simulate(jobs, record_events=True, **kw)
    for table in ("jobs", "fleet", "trace"):
        a, s = getattr(ahead, table), getattr(stepped, table)
        assert model_bytes(a) == model_bytes(s), table
    assert np.array_equal(stepped.fleet["heap_events"], stepped.fleet["events"])
    assert np.all(ahead.fleet["heap_events"] <= ahead.fleet["events"])
    assert_accounting(ahead.jobs)
    return ahead


# --------------------------------------------------------------------------
# Hand-worked: a node failure at a checkpoint's end
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fail_at, wasted, committed_before",
    [
        # At 7,320 s the second write ends and its node fails: the fleet's
        # event comes first, the write is cut off. Lost: the segment's
        # 3,600 s of compute and 60 s of write, 3,660 s; 3,600 s committed.
        pytest.param(7320.0, 3660.0, 3600.0, id="at-the-write-end"),
        # Half a second later the checkpoint is kept (7,200 s committed)
        # and only 0.5 s of the next segment is lost.
        pytest.param(7320.5, 0.5, 7200.0, id="just-after"),
    ],
)
def test_a_node_failure_at_a_write_end(
    fail_at: float, wasted: float, committed_before: float
) -> None:
    """One 8-GPU job, 3 h of work, a 1 h interval, 60 s writes, no init or
    load, on one node of two, which fails once. Schedule: compute [0, 3600),
    write [3600, 3660), compute [3660, 7260), write [7260, 7320), ... The job
    is seen at once, restarts on the other node at the failure and computes the rest:
    10,800 - committed_before seconds, with one 60 s write per hour of it."""
    jobs = [job(1, 3 * HOUR, save=SAVE)]
    node = placement(jobs, 2, 100.0)[0][0]
    res = both(jobs, fleet=trace_fleet(2, {node: [fail_at]}, repair=HOUR))
    row = res.jobs[0]
    assert res.trace["job"].tolist() == [0]
    assert row["failures"] == 1
    assert row["wasted"] == pytest.approx(wasted, abs=1e-9)
    left = 3 * HOUR - committed_before
    writes = left / HOUR
    assert row["end"] == pytest.approx(fail_at + left + writes * 60.0, abs=1e-9)
    assert row["productive"] == 3 * HOUR
    # Every write that ended was kept: 1 before the failure when it was cut
    # off, 2 when it was not, then one per hour after it.
    assert row["checkpoints"] == committed_before / HOUR + writes
    assert row["ckpt_stall"] == pytest.approx(60.0 * row["checkpoints"], abs=1e-9)


@pytest.mark.parametrize(
    "first_failure, wasted, end",
    [
        # The job's own failure at its first write's end (3,660 s of held
        # time): within one job the phase end comes first, so the checkpoint
        # is kept and nothing is lost; restarted at once from 3,600 s it
        # computes the last hour and writes it: done at 3,660 + 3,600 + 60.
        pytest.param(3660.0, 0.0, 7320.0, id="at-the-write-end"),
        # Half a second earlier the write is cut off: its segment's 3,600 s
        # and 59.5 s of write are lost, and the 2 h and two writes come after.
        pytest.param(3659.5, 3659.5, 3659.5 + 7320.0, id="just-before"),
    ],
)
def test_a_job_level_failure_at_a_write_end(
    first_failure: float, wasted: float, end: float
) -> None:
    """A job-level failure bounds the stretch run ahead: one 8-GPU job, 2 h
    of work, 1 h interval, 60 s writes, no init or load, on one node of two;
    its failures are replayed (the first at ``first_failure`` held seconds,
    the next never within the run). It is seen at once and restarts at once."""
    jobs = [job(1, 2 * HOUR, save=SAVE)]
    res = both(jobs, failures=ace.Replay([first_failure, 1e9]), fleet=trace_fleet(2, {}))
    row = res.jobs[0]
    assert res.trace["time"].tolist() == [first_failure]
    assert row["failures"] == 1 and row["restarts"] == 1
    assert row["wasted"] == pytest.approx(wasted, abs=1e-9)
    assert row["end"] == pytest.approx(end, abs=1e-9)
    assert row["checkpoints"] == 2
    assert row["productive"] == 2 * HOUR


def test_events_count_every_checkpoint() -> None:
    """fleet.events counts each checkpoint's begin and end whether or not
    the heap saw them. One job, 5 h of work, 1 h interval, never failing:
    its submission, its start's end, 5 computes ending with a write, and 5
    write ends (the last is its completion): 12 events."""
    res = both([job(1, 5 * HOUR, save=SAVE)], fleet=trace_fleet(1, {}))
    assert res.jobs["checkpoints"][0] == 5
    assert res.fleet["events"][0] == 12
    # The heap saw three: the submission, the start's end (its compute
    # begins there and runs ahead to the last write) and that write's end.
    assert res.fleet["heap_events"][0] == 3


def test_a_horizon_inside_the_stretch() -> None:
    """The horizon at 7,300 s falls in the second write (7,260-7,320 s): the
    row closes there as step by step, with one checkpoint kept and the run
    cut, not failed: both segments' compute is productive (7,200 s, the
    progress), and the first write and 40 s of the second are stall."""
    res = both([job(1, 5 * HOUR, save=SAVE)], fleet=trace_fleet(1, {}), horizon=7300.0)
    row = res.jobs[0]
    assert row["checkpoints"] == 1
    assert row["productive"] == 7200.0
    assert row["progress"] == 7200.0
    assert row["ckpt_stall"] == 100.0
    assert row["wall"] == 7300.0
    assert not row["completed"]


@pytest.mark.parametrize("fail_at", [4260.0, 4260.5], ids=["at-the-persist-end", "just-after"])
def test_a_node_failure_at_a_persist_end(fail_at: float) -> None:
    """Asynchronous checkpoints: a 60 s snapshot, then a 600 s persist in
    the background. One 8-GPU job, 2 h of work, 1 h interval, no init or
    load, on one node of two, which fails once. Schedule: compute [0, 3600),
    snapshot [3600, 3660), compute from 3660 while the persist runs to 4260.

    At 4,260 s exactly the failure comes first: the persist is cut off (a
    lost checkpoint), the job rolls back to the start and loses 3,600 +
    600 s; restarted at once on the other node it computes 2 h again, with a
    snapshot at 1 h and its final snapshot and persist: done at 4,260 +
    3,600 + 60 + 3,600 + 60 + 600 = 12,180 s. Half a second later the
    checkpoint is durable and 600.5 s are lost; from 3,600 s committed it is
    done at 4,260.5 + 3,600 + 60 + 600 = 8,520.5 s."""
    jobs = [job(1, 2 * HOUR, save=SAVE, persist=ace.Constant(600.0))]
    node = placement(jobs, 2, 100.0)[0][0]
    res = both(jobs, fleet=trace_fleet(2, {node: [fail_at]}, repair=HOUR))
    row = res.jobs[0]
    assert row["failures"] == 1
    assert row["productive"] == 2 * HOUR
    if fail_at == 4260.0:
        assert row["lost_checkpoints"] == 1
        assert row["wasted"] == pytest.approx(4200.0, abs=1e-9)
        assert row["end"] == pytest.approx(12180.0, abs=1e-9)
    else:
        assert row["lost_checkpoints"] == 0
        assert row["wasted"] == pytest.approx(600.5, abs=1e-9)
        assert row["end"] == pytest.approx(8520.5, abs=1e-9)


# --------------------------------------------------------------------------
# Hand-worked: a preemption at a checkpoint's end (jobs at equal times)
# --------------------------------------------------------------------------


def preemption_at_a_write_end(victim_first: bool) -> ace.SimulationResult:
    """Two nodes. The low-priority job (8 GPUs, 1 h interval, 60 s writes,
    from t = 0 on one node) and the high-priority job (8 GPUs, init 0, on the
    other node) whose node fails at 3,000 s; the high job's detection is
    660 s, so it recovers at 3,660 s, the instant the low job's first write
    ends, and preempts it (no free node: the failed one is in repair for a
    day). Which of the two comes first at 3,660 s is their index order."""
    low = job(1, 4 * HOUR, save=SAVE, priority=0)
    high = job(1, 2 * HOUR, save=ZERO, priority=5)
    jobs = [low, high] if victim_first else [high, low]
    detection = ace.Cause("hang", 1.0, detect=ace.Constant(660.0))
    node = placement(jobs, 2, 100.0)[1 if victim_first else 0][0]  # the high job's
    fleet = trace_fleet(2, {node: [3000.0]}, repair=ace.Constant(ace.DAY))
    policy = ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER)
    return both(jobs, fleet=fleet, policy=policy, causes=[detection])


@pytest.mark.parametrize(
    "victim_first", [True, False], ids=["victim-index-lower", "victim-index-higher"]
)
def test_a_preemption_at_a_write_end(victim_first: bool) -> None:
    """With the victim's index lower, its write's end at 3,660 s comes
    first: the checkpoint is kept (3,600 s) and nothing is lost. With it
    higher, the preemption comes first and cuts the write off: 3,600 s of
    compute and 60 s of write are lost. Either way the high job restarts at
    3,660 s on the victim's node, computes its 7,200 s (it had nothing
    committed at 3,000 s; its writes take no time) and is done at 10,860 s;
    the victim restarts there on that node and computes what is left, with
    one 60 s write an hour: 10,800 + 180 s, or 14,400 + 240 s."""
    res = preemption_at_a_write_end(victim_first)
    v = res.jobs[0 if victim_first else 1]
    h = res.jobs[1 if victim_first else 0]
    assert h["detection"] == 660.0
    assert h["wasted"] == 3000.0
    assert h["end"] == 10860.0
    assert v["preemptions"] == 1
    assert v["recovery_wait"] == 10860.0 - 3660.0
    if victim_first:
        assert v["wasted"] == 0.0
        assert v["checkpoints"] == 4
        assert v["end"] == 10860.0 + 10800.0 + 180.0
    else:
        assert v["wasted"] == 3660.0
        assert v["checkpoints"] == 4
        assert v["end"] == 10860.0 + 14400.0 + 240.0
    assert v["productive"] == 4 * HOUR


# --------------------------------------------------------------------------
# The event bound and refused draws
# --------------------------------------------------------------------------


def test_the_event_bound_is_judged_on_what_happened() -> None:
    """A run of E events passes with max_events=E and stops with the bound's
    error at E - 1, though checkpoints applied ahead are counted before
    they happen: a job is stopped by a node failure in the middle of a
    stretch, and the writes it would have made after it are not counted."""
    jobs = [job(1, 10 * HOUR, save=SAVE), job(1, 10 * HOUR, save=SAVE, submit=600.0)]
    fleet = trace_fleet(3, {0: [5000.0, 20000.0], 1: [9000.0]}, repair=HOUR)
    res = both(jobs, fleet=fleet)
    events = int(res.fleet["events"][0])
    assert events > 40
    again = ace.simulate(jobs, fleet=fleet, max_events=events, threads=1)
    assert again.jobs.tobytes() == res.jobs.tobytes()
    for record in (False, True):
        with pytest.raises(RuntimeError, match="max_events"):
            ace.simulate(jobs, fleet=fleet, max_events=events - 1, record_events=record, threads=1)


def test_a_save_law_that_runs_out() -> None:
    """A Replay of two writes: a job that needs a third raises the same
    error as step by step; one stopped by the horizon before its third
    compute ends does not raise, though it would be drawn ahead."""
    saves = ace.Replay([60.0, 90.0])
    jobs = [job(1, 5 * HOUR, save=saves)]
    errors = []
    for record in (False, True):
        with pytest.raises(ValueError) as err:
            ace.simulate(jobs, fleet=trace_fleet(1, {}), record_events=record, threads=1)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    # The third compute ends at 3 x 3,600 + 150 = 10,950 s.
    res = both(jobs, fleet=trace_fleet(1, {}), horizon=10000.0)
    assert res.jobs["checkpoints"][0] == 2
    # A node failure before that instant: the job restarts and needs more.
    with pytest.raises(ValueError):
        ace.simulate(jobs, fleet=trace_fleet(2, {0: [8000.0]}), threads=1)


# --------------------------------------------------------------------------
# Random fleets, with ties on purpose
# --------------------------------------------------------------------------


def random_case(
    seed: int,
    levels: bool = False,
    short: bool = False,
    limits: bool = False,
    slow: bool = False,
    maintenance: bool = False,
) -> dict[str, Any]:
    """A small fleet whose times fall on whole minutes (constant laws,
    node failures on minute marks), so that failures, write ends,
    recoveries and submissions meet at equal times. With ``levels``, jobs
    may persist their checkpoints in the background and keep faster tiers,
    some may be elastic, and failures may take several nodes (which tiers
    survive). With ``short``, intervals of 1 to 4 minutes: stretches run
    past their look-ahead bounds. With ``limits``, some jobs have a time
    limit. With ``slow``, most failures are slow (gray): the job runs on at
    a reduced rate until their detection. With ``maintenance``, planned
    windows on some nodes (jobs checkpoint ahead of them)."""
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(2, 7))
    jobs = []
    for _ in range(int(rng.integers(1, 7))):
        width = int(rng.integers(1, max(2, nodes // 2 + 1)))
        interval = float(rng.integers(1, 5)) * (MINUTE if short else 15 * MINUTE)
        extra: dict[str, Any] = {}
        if limits and rng.random() < 0.6:
            # (long enough for a start and a checkpoint: the job progresses)
            extra["time_limit"] = float(rng.integers(2, 8)) * interval + 45 * MINUTE
        if levels and rng.random() < 0.7:
            extra["persist"] = ace.Constant(float(rng.integers(0, 30)) * MINUTE)
        if levels and width > 1 and rng.random() < 0.3:
            extra["min_gpus"] = 8  # elastic: it steps its checkpoints, the others run ahead
        if levels and rng.random() < 0.5:
            extra["tiers"] = [
                ace.CheckpointTier(
                    interval / float(rng.integers(1, 4)),
                    save=ace.Constant(float(rng.integers(0, 2)) * MINUTE),
                    load=ace.Constant(float(rng.integers(0, 3)) * MINUTE),
                    replication=int(rng.integers(1, width + 1)),
                )
            ]
        jobs.append(
            job(
                width,
                float(rng.integers(1, 12)) * 30 * MINUTE,
                interval,
                save=ace.Constant(float(rng.integers(0, 4)) * MINUTE),
                init=ace.Constant(float(rng.integers(0, 3)) * MINUTE),
                load=ace.Constant(float(rng.integers(0, 2)) * MINUTE),
                submit=float(rng.integers(0, 8)) * 15 * MINUTE,
                priority=int(rng.integers(0, 3)),
                **extra,
            )
        )
    gaps = {
        n: [float(g) * MINUTE for g in rng.integers(10, 240, size=int(rng.integers(0, 4)))]
        for n in range(nodes)
    }
    replacement = [
        ace.Replacement.SPARES,
        ace.Replacement.WAIT_REPAIR,
        ace.Replacement.PREEMPT_LOWER,
        ace.Replacement.REQUEUE,
    ][int(rng.integers(0, 4))]
    windows = []
    start = 0.0
    for _ in range(int(rng.integers(1, 4)) if maintenance else 0):
        start += float(rng.integers(1, 20)) * 15 * MINUTE
        duration = float(rng.integers(1, 8)) * 15 * MINUTE
        some = rng.integers(0, nodes, size=int(rng.integers(1, nodes + 1)))
        windows.append((start, duration, sorted({int(n) for n in some})))
        start += duration
    kw: dict[str, Any] = {
        "fleet": trace_fleet(
            nodes,
            gaps,
            repair=ace.Constant(float(rng.integers(1, 6)) * 15 * MINUTE),
            spares=int(rng.integers(0, 2)),
            **({"maintenance": windows} if windows else {}),
        ),
        "policy": ace.Policy(replacement=replacement),
    }
    if rng.random() < 0.5:
        kw["failures"] = ace.Exponential(float(rng.integers(2, 20)) * HOUR)
        kw["replicas"] = 3
    if slow:
        kw["causes"] = [
            ace.Cause(
                "gray",
                0.6,
                detect=ace.Constant(float(rng.integers(1, 40)) * MINUTE),
                slowdown=float(rng.integers(1, 4)) / 4,
            ),
            ace.Cause("process", 0.4, detect=ace.Constant(float(rng.integers(0, 3)) * MINUTE)),
        ]
        kw.setdefault("failures", ace.Exponential(float(rng.integers(1, 6)) * HOUR))
    elif levels and rng.random() < 0.5:
        kw["causes"] = [
            ace.Cause("process", 0.5, detect=ace.Constant(float(rng.integers(0, 3)) * MINUTE)),
            ace.Cause("block", 0.5, nodes=2),
        ]
    if rng.random() < 0.3:
        kw["horizon"] = float(rng.integers(4, 40)) * 15 * MINUTE
    return {"jobs": jobs, **kw}


@pytest.mark.parametrize("seed", range(120))
def test_random_fleets_run_ahead_as_step_by_step(seed: int) -> None:
    case = random_case(seed)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("seed", range(120))
def test_random_fleets_with_checkpoint_levels(seed: int) -> None:
    case = random_case(seed, levels=True)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("levels", [False, True], ids=["plain", "levels"])
@pytest.mark.parametrize("seed", range(40))
def test_random_fleets_with_short_intervals(seed: int, levels: bool) -> None:
    """Checkpoints every few minutes: stretches continue past their bounds
    and failures, preemptions and the horizon meet continuations."""
    case = random_case(1000 + seed, levels=levels, short=True)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
@pytest.mark.parametrize("seed", range(40))
def test_random_fleets_with_time_limits(seed: int, short: bool) -> None:
    """A time limit bounds a stretch like a job-level failure: at equal
    times the phase's end comes first, then the limit."""
    case = random_case(2000 + seed, short=short, limits=True)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
@pytest.mark.parametrize("seed", range(40))
def test_random_fleets_with_slow_failures(seed: int, short: bool) -> None:
    """A slow failure catches its job up and changes its rate; its
    detection bounds the stretches run at that rate (the phase's end at
    its instant comes first)."""
    case = random_case(4000 + seed, levels=seed % 2 == 0, short=short, slow=True)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("levels", [False, True], ids=["plain", "levels"])
@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
@pytest.mark.parametrize("seed", range(30))
def test_random_fleets_with_maintenance(seed: int, short: bool, levels: bool) -> None:
    """Planned windows: a drain checkpoint is planned in a stretch as at a
    compute's begin (its write, and persist, step through the heap), and a
    window's start stops the jobs on its nodes."""
    case = random_case(5000 + seed, levels=levels, short=short, maintenance=True)
    jobs = case.pop("jobs")
    both(jobs, seed=seed, **case)


@pytest.mark.parametrize("levels", [False, True], ids=["plain", "levels"])
@pytest.mark.parametrize("seed", range(40))
def test_random_jobs_without_a_fleet(seed: int, levels: bool) -> None:
    """Several jobs and no node pool (``fleet=None``): only job-level
    failures, the horizon and time limits stop them, and those bound the
    stretches."""
    case = random_case(3000 + seed, levels=levels, short=seed % 2 == 0, limits=seed % 3 == 0)
    jobs = [j for j in case.pop("jobs") if j.min_gpus is None or j.min_gpus == j.gpus]
    case.pop("fleet")
    case.pop("policy")
    case.setdefault("failures", ace.Exponential(3 * HOUR))
    if len(jobs) < 2:
        jobs = [*jobs, job(1, 3 * HOUR, interval=2 * MINUTE, save=SAVE)]
    both(jobs, seed=seed, **case)


# --------------------------------------------------------------------------
# Hand-worked: stretches longer than the look-ahead bound
# --------------------------------------------------------------------------
#
# A stretch applies at most its look-ahead bound of transitions (16 at a
# compute phase's begin, doubling with each continuation up to 256); the
# job's heap entry at the next transition continues it. One 8-GPU job, 400
# minutes of work, a 60 s interval, no init or load: 400 computes and 400
# writes, the transitions of its stretches.

MINUTES = 400


ONE_SECOND = ace.Constant(1.0)


def one_minute_job(save: ace.Distribution = ONE_SECOND, **kw: Any) -> ace.Job:
    return job(1, MINUTES * MINUTE, interval=MINUTE, save=save, **kw)


def two_nodes(fail_at: float | None = None) -> tuple[list[ace.Job], ace.Fleet]:
    """The job on one node of two; that node fails once at ``fail_at``."""
    jobs = [one_minute_job()]
    node = placement(jobs, 2, 10.0)[0][0]
    times: dict[int, Sequence[float]] = {} if fail_at is None else {node: [fail_at]}
    fleet = ace.Fleet(
        2, repair=ace.Constant(HOUR), node_failures=ace.NodeTrace.from_times(times, nodes=2)
    )
    return jobs, fleet


def test_a_long_stretch_continues_past_its_bound() -> None:
    """Never failing, the job's 799 routine transitions (every compute's end
    and every write's end but the last, its completion) are applied in
    stretches of 16, 32, 64, 128, 256 and 256 transitions (752 in all), each
    capped, then the last 47: six continuations. The heap delivers its
    submission, its start's end, the six continuations and its last write's
    end: 9 entries, of 802 events (the continuations are none of them). It
    ends at 400 x 61 s."""
    jobs, fleet = two_nodes()
    res = both(jobs, fleet=fleet)
    row = res.jobs[0]
    assert row["checkpoints"] == MINUTES
    assert row["end"] == MINUTES * 61.0
    assert res.fleet["events"][0] == 2 + 2 * MINUTES
    assert res.fleet["heap_events"][0] == 9


@pytest.mark.parametrize(
    "fail_at, wasted, kept",
    [
        # Mid-compute, far past the first bounds: 300 writes ended by
        # 18,300 s; 30 s of the 301st segment are lost.
        pytest.param(300 * 61.0 + 30.0, 30.0, 300, id="mid-compute"),
        # Mid-write: the 300th write (18,299-18,300 s) is cut off half a
        # second in; its segment's 60 s and the 0.5 s are lost.
        pytest.param(300 * 61.0 - 0.5, 60.5, 299, id="mid-write"),
        # At the first continuation: the first stretch's 16 transitions end
        # with the 8th write (488 s); the 9th compute's end at 548 s is the
        # continuation's entry, and the fleet's event at that instant comes
        # first: the segment's 60 s are lost.
        pytest.param(9 * 61.0 - 1.0, 60.0, 8, id="at-a-continuation"),
    ],
)
def test_a_node_failure_past_the_bound(fail_at: float, wasted: float, kept: int) -> None:
    """The node fails once at ``fail_at``; the job restarts at once on the
    other node from its ``kept`` checkpoints (kept minutes of work) and
    computes the rest, one 61 s cycle a minute: it ends at fail_at +
    (400 - kept) x 61 s, with 400 writes in all and all 400 minutes
    productive."""
    jobs, fleet = two_nodes(fail_at)
    row = both(jobs, fleet=fleet).jobs[0]
    assert row["failures"] == 1
    assert row["wasted"] == pytest.approx(wasted, abs=1e-9)
    assert row["end"] == pytest.approx(fail_at + (MINUTES - kept) * 61.0, abs=1e-9)
    assert row["checkpoints"] == MINUTES
    assert row["productive"] == MINUTES * MINUTE
    assert row["ckpt_stall"] == pytest.approx(MINUTES * 1.0, abs=1e-9)


def test_a_job_level_failure_past_the_bound() -> None:
    """The job's own failure at 18,330 s of held time (mid-compute, 30 s
    into the 301st segment), its next never: the stretch is bounded by it
    and continued up to it. Restarted at once from 300 minutes, it ends at
    18,330 + 100 x 61 = 24,430 s, 30 s lost."""
    jobs, fleet = two_nodes()
    res = both(jobs, fleet=fleet, failures=ace.Replay([18330.0, 1e9]))
    row = res.jobs[0]
    assert row["failures"] == 1 and row["restarts"] == 1
    assert row["wasted"] == pytest.approx(30.0, abs=1e-9)
    assert row["end"] == pytest.approx(24430.0, abs=1e-9)
    assert row["checkpoints"] == MINUTES


def test_writes_that_take_no_time_past_the_bound() -> None:
    """save = Constant(0): each write ends at its compute's end (two
    transitions at one instant). The node fails at 300 x 60 + 30 s: 300
    minutes kept, 30 s lost, done at 18,030 + 100 x 60 = 24,030 s."""
    jobs = [one_minute_job(save=ZERO)]
    node = placement(jobs, 2, 10.0)[0][0]
    fleet = ace.Fleet(
        2,
        repair=ace.Constant(HOUR),
        node_failures=ace.NodeTrace.from_times({node: [18030.0]}, nodes=2),
    )
    row = both(jobs, fleet=fleet).jobs[0]
    assert row["wasted"] == pytest.approx(30.0, abs=1e-9)
    assert row["end"] == pytest.approx(24030.0, abs=1e-9)
    assert row["checkpoints"] == MINUTES


def test_a_node_failure_mid_persist_past_the_bound() -> None:
    """Asynchronous checkpoints: a 1 s snapshot, then a 30 s persist while
    the next segment computes (three transitions a minute: a compute's end,
    a snapshot's end, a persist's end). The 300th snapshot ends at 18,300 s
    and its persist would end at 18,330 s; the node fails at 18,310 s, mid
    persist: that checkpoint is lost and the job rolls back to the 299th
    (durable), losing the 300th segment's 60 s and the 10 s computed since
    the snapshot. Restarted at once, it computes 101 minutes, the last one
    with its snapshot and persist: done at 18,310 + 101 x 61 + 30 =
    24,501 s."""
    jobs = [one_minute_job(persist=ace.Constant(30.0))]
    node = placement(jobs, 2, 10.0)[0][0]
    fleet = ace.Fleet(
        2,
        repair=ace.Constant(HOUR),
        node_failures=ace.NodeTrace.from_times({node: [18310.0]}, nodes=2),
    )
    row = both(jobs, fleet=fleet).jobs[0]
    assert row["lost_checkpoints"] == 1
    assert row["wasted"] == pytest.approx(70.0, abs=1e-9)
    assert row["end"] == pytest.approx(24501.0, abs=1e-9)
    assert row["productive"] == MINUTES * MINUTE


def test_a_save_law_that_runs_out_past_the_bound() -> None:
    """A Replay of 30 one-second writes: the 31st write's draw is refused in
    the third stretch (transitions 49 to 112); the run raises the same error
    as step by step. With the horizon at 30 x 61 + 30 s, before the 31st
    compute's end, it does not raise and keeps 30 checkpoints."""
    jobs = [one_minute_job(save=ace.Replay([1.0] * 30))]
    errors = []
    for record in (False, True):
        with pytest.raises(ValueError) as err:
            ace.simulate(jobs, fleet=trace_fleet(1, {}), record_events=record, threads=1)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    res = both(jobs, fleet=trace_fleet(1, {}), horizon=30 * 61.0 + 30.0)
    assert res.jobs["checkpoints"][0] == 30


def test_a_time_limit_past_the_bound() -> None:
    """A 18,330 s time limit, mid-compute (30 s into the 301st segment):
    the run stops there with 300 minutes kept and 30 s lost, the job is
    queued again and restarts at once on its free node; its second run
    (100 cycles, 6,100 s) is within the limit: done at 24,430 s."""
    jobs = [one_minute_job(time_limit=18330.0)]
    row = both(jobs, fleet=trace_fleet(1, {})).jobs[0]
    assert row["timeouts"] == 1 and row["failures"] == 0
    assert row["wasted"] == pytest.approx(30.0, abs=1e-9)
    assert row["end"] == pytest.approx(24430.0, abs=1e-9)
    assert row["checkpoints"] == MINUTES


def test_jobs_without_a_fleet_past_the_bound() -> None:
    """Two such jobs and no node pool, each failing once at 18,330 s of held
    time (a replayed law: each job's own copy): each restarts at once from
    300 minutes and ends at 24,430 s with 30 s lost. Their stretches run
    ahead (the engine runs them: ``check_invariants``): per job, the 600
    transitions up to the failure come in stretches of 16, 32, 64, 128, 256
    (five capped) and 104; after the restart the 199 routine transitions
    in stretches of 16, 32, 64 (capped) and 87. The heap delivers, per job,
    its submission, its start's end, five continuations, its failure, its
    restart's start end, three continuations and its last write's end: 13
    entries; of 2 + 600 + 1 + 1 + 200 = 804 events."""
    jobs = [one_minute_job(), one_minute_job()]
    res = both(jobs, failures=ace.Replay([18330.0, 1e9]))
    for row in res.jobs:
        assert row["failures"] == 1
        assert row["wasted"] == pytest.approx(30.0, abs=1e-9)
        assert row["end"] == pytest.approx(24430.0, abs=1e-9)
        assert row["checkpoints"] == MINUTES
    assert res.fleet["events"][0] == 2 * 804
    assert res.fleet["heap_events"][0] == 2 * 13


def test_a_slow_failure_past_the_bound() -> None:
    """A slow (gray) failure at 18,330 s of held time, at half rate, found
    600 s later (18,930 s); two jobs without a fleet, 1 s and 2 s writes.

    Job 0 (61 s cycles): the 301st segment began at 18,300 s; its last 30 s
    of compute take 60 s at half rate (write end 18,391 s), then 121 s
    cycles: the 305th write ends at 18,875 s and at 18,930 s it has computed
    55 s (27.5 s of progress) of the 306th. Found, it rolls back to 305
    minutes and restarts at once: 95 x 61 s more, done at 24,725 s. Half of
    its 60 + 4 x 120 + 55 = 595 s of slow compute is detection (297.5 s),
    the lost progress wasted (27.5 s).

    Job 1 (62 s cycles): the 296th segment began at 18,290 s, 40 s done at
    the fault; its last 20 s take 40 s (write end 18,372 s), then 122 s
    cycles to the 300th write at 18,860 s, and 70 s (35 s of progress) of
    the 301st by 18,930 s: done at 18,930 + 100 x 62 = 25,130 s; detection
    (40 + 480 + 70) / 2 = 295 s, 35 s wasted."""
    gray = [ace.Cause("gray", 1.0, detect=ace.Constant(600.0), slowdown=0.5)]
    jobs = [one_minute_job(), one_minute_job(save=ace.Constant(2.0))]
    res = both(jobs, failures=ace.Replay([18330.0, 1e9]), causes=gray)
    rows = res.jobs
    assert rows["failures"].tolist() == [1, 1]
    assert rows["end"].tolist() == [24725.0, 25130.0]
    assert rows["detection"].tolist() == [297.5, 295.0]
    assert rows["wasted"].tolist() == [27.5, 35.0]
    assert rows["checkpoints"].tolist() == [MINUTES, MINUTES]
    assert rows["productive"].tolist() == [MINUTES * MINUTE] * 2


def test_a_preemption_past_the_bound() -> None:
    """Two nodes. The low-priority job (index 0, 400 one-minute segments, 1 s
    writes) runs from 0 on one; the high-priority job (8 GPUs, 6 h of work,
    1 h interval, writes of no time) on the other, whose node fails at
    17,000 s (4 h committed, 2,600 s lost) and stays in repair for a day.
    Its detection takes 1,330 s: at 18,330 s it preempts the low job, 30 s
    into its 301st segment (300 minutes kept, 30 s lost), computes its last
    2 h there and is done at 25,530 s; the low job waits 7,200 s, then
    computes its last 100 minutes: done at 25,530 + 100 x 61 = 31,630 s."""
    low = one_minute_job(priority=0)
    high = job(1, 6 * HOUR, save=ZERO, priority=5)
    jobs = [low, high]
    node = placement(jobs, 2, 100.0)[1][0]  # the high job's
    fleet = ace.Fleet(
        2,
        repair=ace.Constant(ace.DAY),
        node_failures=ace.NodeTrace.from_times({node: [17000.0]}, nodes=2),
    )
    hang = ace.Cause("hang", 1.0, detect=ace.Constant(1330.0))
    policy = ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER)
    res = both(jobs, fleet=fleet, policy=policy, causes=[hang])
    v, h = res.jobs[0], res.jobs[1]
    assert h["wasted"] == 2600.0 and h["end"] == 25530.0
    assert v["preemptions"] == 1
    assert v["wasted"] == pytest.approx(30.0, abs=1e-9)
    assert v["recovery_wait"] == 25530.0 - 18330.0
    assert v["end"] == pytest.approx(31630.0, abs=1e-9)
    assert v["checkpoints"] == MINUTES


def test_a_drain_checkpoint_past_the_bound() -> None:
    """A maintenance window on the job's node at 18,360 s (an hour), the
    other node free. Its drain point is the start less the mean write,
    18,359 s, inside the 301st segment (18,300-18,360 s) that a stretch
    begins: that compute is cut there (18,059 s committed at its write's
    end), and the drain checkpoint's write ends at 18,360 s, before the
    window's start at that instant. Stopped with nothing lost, the job
    restarts at once on the other node and computes its last 5,941 s: 99
    one-minute cycles and a last second with its write, done at 18,360 +
    6,039 + 2 = 24,401 s, with 401 checkpoints."""
    jobs = [one_minute_job()]
    node = placement(jobs, 2, 10.0)[0][0]
    fleet = ace.Fleet(
        2,
        repair=ace.Constant(HOUR),
        node_failures=ace.NodeTrace.from_times({}, nodes=2),
        maintenance=[(18360.0, HOUR, [node])],
    )
    row = both(jobs, fleet=fleet).jobs[0]
    assert row["planned_interruptions"] == 1
    assert row["wasted"] == 0.0
    assert row["checkpoints"] == MINUTES + 1
    assert row["end"] == pytest.approx(24401.0, abs=1e-9)
    assert row["productive"] == MINUTES * MINUTE
