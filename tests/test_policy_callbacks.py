"""Python failure policies (DESIGN.md section 6): ``Policy(on_failure=f)``
with ``f`` a Python callable that receives a read-only view of the situation
at each failure and returns a :class:`acesim.Replacement` (or ``None`` for
the policy's built-in choice).

Every run checks the engine's invariants and the accounting identity.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import BUCKETS, DAY, HOUR, MINUTE
from numpy.lib import recfunctions as rfn

VIEW_FIELDS = (
    "time",
    "fault_time",
    "progress",
    "work",
    "lost_work",
    "repair_remaining",
    "replica",
    "job",
    "gpus",
    "priority",
    "failures",
    "cause",
    "nodes_held",
    "nodes_needed",
    "free_nodes",
    "spare_nodes",
    "down_nodes",
    "quarantined_nodes",
    "preemptible_nodes",
)

FLEET = ace.Fleet(
    12, spares=2, repair=ace.Exponential(4 * HOUR), node_failures=ace.Exponential(5 * DAY)
)

#: Constant detection latencies, so time - fault_time is known per cause.
CAUSES = [
    ace.Cause("crash", 0.7, detect=ace.Constant(MINUTE)),
    ace.Cause("hang", 0.2, detect=ace.Constant(10 * MINUTE)),
    ace.Cause("software", 0.1, detect=ace.Constant(10.0), node_down=False),
]

JOBS = [
    ace.Job(32, work=5 * DAY, checkpoint_interval=HOUR, priority=2),
    ace.Job(24, work=4 * DAY, checkpoint_interval=2 * HOUR, priority=1),
    ace.Job(16, work=4 * DAY, checkpoint_interval=30 * MINUTE, submit=HOUR),
    ace.Job(8, work=3 * DAY, checkpoint_interval=HOUR, submit=2 * HOUR),
]


def assert_identity(rows: np.ndarray) -> None:
    total = sum(rows[b] for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)
    for b in BUCKETS:
        assert np.all(rows[b] >= 0.0), b


def run(policy: ace.Policy, **kwargs: Any) -> ace.SimulationResult:
    args: dict[str, Any] = dict(
        fleet=FLEET, causes=CAUSES, replicas=4, seed=1101, threads=1, check_invariants=True
    )
    args.update(kwargs)
    res = ace.simulate(JOBS, policy=policy, **args)
    assert_identity(res.jobs)
    return res


def same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    assert a.jobs.tobytes() == b.jobs.tobytes()
    assert a.fleet.tobytes() == b.fleet.tobytes()
    assert a.trace.tobytes() == b.trace.tobytes()


def by_view(view: Any) -> ace.Replacement:
    """A deterministic policy that depends on the view only."""
    if view.nodes_needed == 0:
        return ace.Replacement.SPARES
    if view.repair_remaining < 2 * HOUR:
        return ace.Replacement.WAIT_REPAIR
    if view.spare_nodes >= view.nodes_needed:
        return ace.Replacement.SPARES
    if view.preemptible_nodes >= view.nodes_needed:
        return ace.Replacement.PREEMPT_LOWER
    return ace.Replacement.REQUEUE


# --------------------------------------------------------------------------
# The view
# --------------------------------------------------------------------------


def test_view_has_the_documented_fields() -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []

    def policy(view: Any) -> None:
        seen.append((view, {name: getattr(view, name) for name in VIEW_FIELDS}))
        return None

    res = run(ace.Policy(on_failure=policy))
    assert len(seen) >= 20
    # No detection runs into the horizon (there is none): every failure
    # reaches its recovery decision exactly once.
    assert len(seen) == int(res.jobs["failures"].sum())
    nodes_of = [math.ceil(job.gpus / 8) for job in JOBS]
    calls = np.zeros((4, len(JOBS)), np.int64)
    for view, fields in seen:
        j = fields["job"]
        job = JOBS[j]
        assert fields["replica"] in range(4)
        calls[fields["replica"], j] += 1
        assert fields["gpus"] == job.gpus
        assert fields["priority"] == job.priority
        assert fields["work"] == job.work
        assert 0.0 <= fields["progress"] < job.work
        # progress is the last checkpoint: a multiple of the interval.
        assert fields["progress"] / job.checkpoint_interval == pytest.approx(
            round(fields["progress"] / job.checkpoint_interval), abs=1e-9
        )
        assert fields["lost_work"] >= 0.0
        assert fields["cause"] in range(len(CAUSES))
        assert fields["time"] - fields["fault_time"] == pytest.approx(
            CAUSES[fields["cause"]].detect.mean()
        )
        # Counts this failure: the job's failures so far.
        assert fields["failures"] == calls[fields["replica"], j]
        assert fields["nodes_held"] + fields["nodes_needed"] == nodes_of[j]
        if CAUSES[fields["cause"]].node_down:
            assert fields["nodes_needed"] >= 1
        assert (fields["repair_remaining"] > 0.0) == (fields["nodes_needed"] > 0)
        assert 0 <= fields["spare_nodes"] <= FLEET.spares
        assert 0 <= fields["free_nodes"] <= FLEET.nodes
        assert fields["down_nodes"] >= 1 or fields["nodes_needed"] == 0
        assert fields["down_nodes"] + fields["quarantined_nodes"] <= FLEET.nodes
        assert fields["quarantined_nodes"] == 0
        assert 0 <= fields["preemptible_nodes"] <= FLEET.nodes
        if job.priority == 0:
            assert fields["preemptible_nodes"] == 0  # nobody ranks below
        # The view is a snapshot: still readable, unchanged, after the call.
        assert {name: getattr(view, name) for name in VIEW_FIELDS} == fields
        # Read-only.
        with pytest.raises(AttributeError):
            view.job = 0
    np.testing.assert_array_equal(calls.ravel(), res.jobs["failures"])


def test_view_is_exported_as_a_type() -> None:
    captured: list[Any] = []

    def policy(view: Any) -> None:
        captured.append(view)

    run(ace.Policy(on_failure=policy), replicas=1)
    assert captured
    assert type(captured[0]).__name__ == "FailureView"
    for name in VIEW_FIELDS:
        assert hasattr(captured[0], name)


# --------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("replacement", list(ace.Replacement), ids=lambda r: r.name)
def test_callable_returning_a_builtin_equals_the_builtin(replacement: ace.Replacement) -> None:
    builtin = run(ace.Policy(replacement=replacement))
    # The callable decides for a policy whose own replacement differs.
    other = ace.Replacement((int(replacement) + 1) % 4)
    custom = run(ace.Policy(replacement=other, on_failure=lambda view: replacement))
    same(custom, builtin)
    # Returning None means the policy's replacement.
    deferring = run(ace.Policy(replacement=replacement, on_failure=lambda view: None))
    same(deferring, builtin)
    # A plain int is accepted too.
    as_int = run(ace.Policy(replacement=other, on_failure=lambda view: int(replacement)))
    same(as_int, builtin)


def test_always_spares_equals_the_default_policy() -> None:
    builtin = run(ace.Policy(replacement=ace.Replacement.SPARES))
    custom = run(ace.Policy(on_failure=lambda view: ace.Replacement.SPARES))
    same(custom, builtin)
    assert builtin.fleet["failures"].sum() > 0


def test_decisions_change_the_run() -> None:
    """A view-dependent policy is not any single built-in (it mixes them)."""
    custom = run(ace.Policy(on_failure=by_view))
    builtins = [run(ace.Policy(replacement=r)) for r in ace.Replacement]
    for b in builtins:
        assert custom.jobs.tobytes() != b.jobs.tobytes()


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def boom_on_third_call() -> Any:
    calls = [0]
    lock = threading.Lock()

    def raising_policy(view: Any) -> Any:
        with lock:
            calls[0] += 1
            n = calls[0]
        if n == 3:
            raise KeyError("boom")
        return by_view(view)

    return raising_policy


@pytest.mark.parametrize("threads, replicas", [(1, 4), (2, 4)])
def test_exception_propagates_with_its_traceback(threads: int, replicas: int) -> None:
    reference = run(ace.Policy(on_failure=by_view), threads=threads, replicas=replicas)
    with pytest.raises(KeyError, match="boom") as excinfo:
        run(ace.Policy(on_failure=boom_on_third_call()), threads=threads, replicas=replicas)
    names = [entry.name for entry in excinfo.traceback]
    assert "raising_policy" in names
    assert names[-1] == "raising_policy"  # raised there, not re-raised elsewhere
    # The next run works and gives the same result as before.
    again = run(ace.Policy(on_failure=by_view), threads=threads, replicas=replicas)
    same(again, reference)


def test_exception_from_one_replica_propagates() -> None:
    def policy(view: Any) -> Any:
        if view.replica == 2:
            raise ZeroDivisionError("replica 2")
        return None

    with pytest.raises(ZeroDivisionError, match="replica 2"):
        run(ace.Policy(on_failure=policy), threads=2, replicas=4)
    # Replicas 0, 1 and 3 alone are fine.
    for r in (0, 1, 3):
        run(ace.Policy(on_failure=policy), replicas=1, first_replica=r)


@pytest.mark.parametrize(
    "value, error",
    [
        (7, ValueError),
        (4, ValueError),
        (-2, ValueError),
        ("x", TypeError),
        ("SPARES", TypeError),
        (1.0, TypeError),
        (True, TypeError),
        ([0], TypeError),
        (2**40, ValueError),
    ],
)
def test_bad_return_value_raises(value: Any, error: Any) -> None:
    reference = run(ace.Policy())
    calls = [0]

    def policy(view: Any) -> Any:
        calls[0] += 1
        return value if calls[0] >= 2 else None  # fails on a later call

    with pytest.raises(error) as excinfo:
        run(ace.Policy(on_failure=policy))
    assert "on_failure" in str(excinfo.value)
    same(run(ace.Policy()), reference)


# --------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------


def test_threads_do_not_change_results() -> None:
    one = run(ace.Policy(on_failure=by_view), threads=1, replicas=4)
    two = run(ace.Policy(on_failure=by_view), threads=2, replicas=4)
    same(two, one)
    # And each replica equals a run of it alone.
    for r in range(4):
        alone = run(ace.Policy(on_failure=by_view), replicas=1, first_replica=r)
        # (A masked copy leaves padding bytes uninitialized: compare fields only.)
        mine = one.jobs[one.jobs["replica"] == r]
        assert rfn.repack_fields(alone.jobs).tobytes() == rfn.repack_fields(mine).tobytes()


# --------------------------------------------------------------------------
# Placement callback: an outside scheduler chooses the nodes
# --------------------------------------------------------------------------

PLACE_FLEET = ace.Fleet(16, repair=ace.Constant(3600.0), node_failures=ace.Exponential(5 * ace.DAY))
PLACE_JOBS = [
    ace.Job(g, work=ace.DAY, checkpoint_interval=ace.HOUR, submit=i * ace.HOUR)
    for i, g in enumerate([16, 32, 4, 2, 16, 8, 64, 1, 3, 16, 24, 40])
]


def test_placement_none_is_the_builtin_choice() -> None:
    builtin = ace.simulate(PLACE_JOBS, fleet=PLACE_FLEET, replicas=3, seed=4, check_invariants=True)
    deferred = ace.simulate(
        PLACE_JOBS,
        fleet=PLACE_FLEET,
        policy=ace.Policy(place=lambda view, free: None),
        replicas=3,
        seed=4,
        check_invariants=True,
    )
    assert builtin.jobs.tobytes() == deferred.jobs.tobytes()


def test_placement_chooses_the_nodes() -> None:
    seen: list[tuple[int, int, int, np.ndarray]] = []

    def highest_ids(view: Any, free: np.ndarray) -> list[int]:
        seen.append((view.recovering, view.gpus, view.nodes_needed, free.copy()))
        return [int(n) for n in free[-view.nodes_needed :]]

    res = ace.simulate(
        PLACE_JOBS,
        fleet=PLACE_FLEET,
        policy=ace.Policy(place=highest_ids),
        replicas=2,
        seed=4,
        check_invariants=True,
    )
    assert res.jobs["completed"].all()
    assert len(seen) >= len(PLACE_JOBS)
    for recovering, gpus, needed, free in seen:
        full = 1 if gpus < 8 else -(-gpus // 8)
        # A start from the queue places the whole job; a re-placement the nodes it lost.
        assert needed == full if not recovering else 1 <= needed <= full
        assert free.dtype == np.uint32
        assert np.all(np.diff(free.astype(np.int64)) > 0)  # ascending, no repeats
        assert free.size >= needed
        assert np.all(free < PLACE_FLEET.nodes)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ([999], ValueError),  # not a free node
        ([0, 0], ValueError),  # twice, or the wrong count
        ([], ValueError),  # too few
        ("x", TypeError),
        (3.5, TypeError),
    ],
)
def test_placement_bad_answers(answer: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        ace.simulate(
            PLACE_JOBS, fleet=PLACE_FLEET, policy=ace.Policy(place=lambda v, f: answer), seed=1
        )


def test_placement_exception_propagates() -> None:
    def broken(view: Any, free: np.ndarray) -> None:
        raise RuntimeError("scheduler down")

    with pytest.raises(RuntimeError, match="scheduler down"):
        ace.simulate(PLACE_JOBS, fleet=PLACE_FLEET, policy=ace.Policy(place=broken), seed=1)
    with pytest.raises(TypeError, match="place"):
        ace.Policy(place=42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Re-placement order and the placement callback on re-placements (issue 7.9)
# --------------------------------------------------------------------------

ZERO = ace.Constant(0.0)
HOUR_ = 3600.0


def _spare_scenario(policy: ace.Policy) -> ace.SimulationResult:
    """Three nodes: node 0 free, nodes 1 and 2 hot spares. A 1-node job of
    10 h runs on node 0 (a checkpoint every 30 min of compute). Spare 2
    fails at 1 h (idle; repaired in 1 h, it rejoins the spare pool at 2 h).
    Node 0 fails at 3.2 h: the job takes a spare. Node 0 is back at 4.2 h
    and refills the spare pool. Node 1 fails at 5.3 h."""
    fleet = ace.Fleet(
        3,
        spares=2,
        repair=ace.Constant(HOUR_),
        node_failures=ace.NodeTrace.from_times(
            {2: [1 * HOUR_], 0: [3.2 * HOUR_], 1: [5.3 * HOUR_]}, nodes=3
        ),
    )
    job = ace.Job(8, 10 * HOUR_, HOUR_ / 2, init=ZERO, save=ZERO, load=ZERO)
    return ace.simulate([job], fleet=fleet, policy=policy, check_invariants=True)


def test_replacement_takes_the_spare_healthy_longest() -> None:
    """At 3.2 h spare 1 has never failed and spare 2 failed 2.2 h ago: the
    job takes spare 1 (before the fix it took spare 2, the last one back),
    so node 1's failure at 5.3 h hits it again. Then spares 2 (last failure
    at 1 h) and 0 (at 3.2 h): it takes spare 2."""
    res = _spare_scenario(ace.Policy())
    rows = [(int(r["job"]), int(r["node"]), float(r["time"])) for r in res.trace]
    assert rows == [(-1, 2, 1 * HOUR_), (0, 0, 3.2 * HOUR_), (0, 1, 5.3 * HOUR_)]
    r = res.jobs[0]
    assert r["failures"] == 2
    assert res.fleet["spare_uses"][0] == 2
    # Lost: 3.2 h - 3.0 h and 5.3 h - 5.2 h (progress 5.0 h committed at 5.2 h).
    assert r["wasted"] == pytest.approx(0.3 * HOUR_, rel=1e-12)
    assert r["recovery_wait"] == 0.0
    assert r["end"] == pytest.approx(10.3 * HOUR_, rel=1e-12)


def test_placement_callback_sees_every_start_with_node_history() -> None:
    calls: list[tuple[float, bool, list[int], list[int], list[float]]] = []

    def first_candidate(view: Any, free: np.ndarray) -> list[int]:
        calls.append(
            (
                view.time,
                bool(view.recovering),
                free.tolist(),
                view.node_failures.tolist(),
                view.since_failure.tolist(),
            )
        )
        return [int(free[0])]

    res = _spare_scenario(ace.Policy(place=first_candidate))
    inf = float("inf")
    assert calls == [
        # From the queue at t = 0: the free node only, never the spares.
        (0.0, False, [0], [0], [inf]),
        # Re-placement at 3.2 h: the spares, with what was observed of them.
        (3.2 * HOUR_, True, [1, 2], [0, 1], [inf, pytest.approx(2.2 * HOUR_)]),
        # At 5.3 h: node 0 (back at 4.2 h, now a spare) and spare 2.
        (
            5.3 * HOUR_,
            True,
            [0, 2],
            [1, 1],
            [pytest.approx(2.1 * HOUR_), pytest.approx(4.3 * HOUR_)],
        ),
    ]
    assert res.jobs["failures"][0] == 2
    assert res.jobs["completed"][0]


# --- Re-entrant callbacks (issue 25, item 5) ---------------------------------
# A callback may start simulations of its own (a look-ahead): the outermost
# simulation is at depth 1, one started from its callback at depth 2, up to
# 8; the 9th raises ReentrantCallError (a RuntimeError) at once. A chain of
# 100 used to overflow the C stack (SIGSEGV) before Python's recursion limit;
# it stops at the 9th with the named error (also under .ci/sanitize).

#: Two nodes, one a hot spare; node 0 fails once, at 600 s: each run asks
#: its on_failure callback exactly once, then finishes on the spare.
NESTED_FLEET = ace.Fleet(
    2,
    spares=1,
    repair=ace.Constant(HOUR),
    node_failures=ace.NodeTrace.from_times({0: [600.0]}, nodes=2),
)
NESTED_JOB = ace.Job(8, work=HOUR, checkpoint_interval=HOUR, init=0.0, save=0.0, load=0.0)


def _nested(depth: int, target: int, reached: list[int], threads: int = 1) -> ace.SimulationResult:
    """Simulation number ``depth`` of a chain whose callbacks each start the
    next, up to number ``target``."""
    reached.append(depth)

    def look_ahead(view: Any) -> None:
        if depth < target:
            _nested(depth + 1, target, reached, threads)

    return ace.simulate(
        NESTED_JOB, fleet=NESTED_FLEET, policy=ace.Policy(on_failure=look_ahead), threads=threads
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_callbacks_nest_simulations_eight_deep(threads: int) -> None:
    """Eight nested simulations run; each finishes its job after its one
    failure (on the spare: wall = work, 600 s lost and redone)."""
    reached: list[int] = []
    res = _nested(1, 8, reached, threads)
    assert reached == list(range(1, 9))
    assert res.jobs["failures"].tolist() == [1]
    assert bool(res.jobs["completed"][0])
    assert float(res.jobs["wasted"][0]) == 600.0
    assert ace._core.MAX_NESTING == 8


@pytest.mark.parametrize("target", [9, 100])
def test_a_ninth_nested_simulation_is_refused(target: int) -> None:
    """The 9th simulation of the chain raises ReentrantCallError, which
    travels out through every callback to the outermost call; no 10th is
    started; acesim goes on working after."""
    reached: list[int] = []
    with pytest.raises(ace.ReentrantCallError, match=r"simulate called from a policy callback "
                       r"nested 9 deep.*up to 8 deep") as info:  # fmt: skip
        _nested(1, target, reached)
    assert isinstance(info.value, RuntimeError)
    assert reached == list(range(1, 10))
    assert ace.simulate(NESTED_JOB, fleet=NESTED_FLEET).jobs["failures"].tolist() == [1]


@pytest.mark.parametrize(("start", "what"), [("FleetModel", "FleetModel"),
                                             ("batch", "batch_simulate")])  # fmt: skip
def test_look_ahead_models_count_toward_the_limit(start: str, what: str) -> None:
    """A FleetModel or batch_simulate started from the callback of the 7th
    simulation is the 8th level: it runs; from the 8th's callback, the 9th:
    refused."""

    def make() -> None:
        if start == "FleetModel":
            model = ace.FleetModel(NESTED_FLEET)
            jid = model.submit(NESTED_JOB)
            model.start(jid, [0])
            # (the whole instant: the node's failure and its job's)
            assert [e.kind for e in model.advance(HOUR)] == ["node_down", "job_failed"]
        else:
            assert ace.batch_simulate(NESTED_JOB, ace.Constant(10 * HOUR)).jobs.size == 1

    def chain(depth: int, last: int) -> ace.SimulationResult:
        def look_ahead(view: Any) -> None:
            if depth < last:
                chain(depth + 1, last)
            else:
                make()

        return ace.simulate(
            NESTED_JOB, fleet=NESTED_FLEET, policy=ace.Policy(on_failure=look_ahead)
        )

    assert chain(1, 7).jobs["failures"].tolist() == [1]
    with pytest.raises(
        ace.ReentrantCallError, match=f"{what} called from a policy callback nested 9"
    ):
        chain(1, 8)


def test_placement_callbacks_nest_the_same_way() -> None:
    """A place callback's nested simulations count as on_failure's do."""
    reached: list[int] = []

    def chain(depth: int) -> ace.SimulationResult:
        reached.append(depth)

        def place(view: Any, free: np.ndarray) -> None:
            if not view.recovering:
                chain(depth + 1)

        return ace.simulate(NESTED_JOB, fleet=NESTED_FLEET, policy=ace.Policy(place=place))

    with pytest.raises(ace.ReentrantCallError, match="nested 9 deep"):
        chain(1)
    assert reached == list(range(1, 10))
