"""Asynchronous checkpoints before planned maintenance (issue 26, item 1),
by hand.

A job drained for a maintenance window writes an extra checkpoint timed to
be durable at the window: with an asynchronous ``persist`` it starts at the
window minus the mean save and the mean persist, and computes while the
persist runs (that compute is lost at the stop). A persist that cannot
finish by the window is lost: the job drains from its last durable
checkpoint (``lost_checkpoints``). The result is continuous in ``persist``:
as it goes to 0 the row goes to the synchronous one.

The job of the issue throughout: one node, work 1,000 s, a checkpoint every
250 s of progress, init 10 s, save 5 s, load 7 s (a start is 17 s), no
failures; node 0 is in maintenance from 600 s to 700 s. Every run checks the
engine's invariants and the accounting identity (``hand_cases.run``).
"""

from __future__ import annotations

import acesim as ace
import numpy as np
import pytest
from hand_cases import HOUR, run, trace_fleet
from pytest import approx

C = ace.Constant

# EventKind codes (cpp/include/acesim/records.hpp).
CHECKPOINT_BEGIN, CHECKPOINT_END, PREEMPTED, MAINTENANCE, TIME_LIMIT, DURABLE = 3, 4, 9, 11, 13, 14

FIELDS = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "recovery_wait",
    "checkpoints",
    "lost_checkpoints",
    "planned_interruptions",
)


def issue_job(persist: ace.Distribution | None, work: float = 1000.0, **kwargs: object) -> ace.Job:
    """The issue's job: 8 GPUs, work 1,000 s, interval 250 s, init 10 s,
    save 5 s, load 7 s, the given persist law (None: synchronous)."""
    return ace.Job(
        8,
        work=work,
        checkpoint_interval=250.0,
        init=C(10.0),
        save=C(5.0),
        load=C(7.0),
        persist=persist,
        **kwargs,  # type: ignore[arg-type]
    )


def window(nodes: int = 1, node: int = 0) -> ace.Fleet:
    """``nodes`` nodes; ``node`` is in maintenance from 600 s to 700 s."""
    return ace.Fleet(nodes, maintenance=[(600.0, 100.0, (node,))])


def row(res: ace.SimulationResult, j: int = 0) -> dict[str, float]:
    r = res.jobs[j]
    return {f: float(r[f]) for f in FIELDS}


def times(res: ace.SimulationResult, kind: int, job: int = 0) -> list[float]:
    ev = res.events
    return [float(t) for t in ev["time"][(ev["job"] == job) & (ev["kind"] == kind)]]


def drained(persist: ace.Distribution | None, **kwargs: object) -> ace.SimulationResult:
    return run([issue_job(persist, **kwargs)], fleet=window(), failures=None, record_events=True)


def test_synchronous_drain_checkpoint_ends_at_the_window() -> None:
    """Start 0-17; compute 17-267 (progress 250), write 267-272; compute
    272-522 (500), write 522-527; compute from 527. The drain checkpoint
    starts at 600 - 5 = 595 (progress 500 + 68 = 568) and ends at 600: the
    stop loses nothing. Back at 700: start 700-717, compute to 818 (the
    interval counts from the drain checkpoint) 717-967, write 967-972,
    compute the last 182 s 972-1154, final write 1154-1159.

    Wall 1,159 = productive 1,000 + writes 5 x 5 + starts 2 x 17 + the
    window's wait 100; wasted 0."""
    res = drained(None)
    assert row(res) == {
        "wall": 1159.0,
        "productive": 1000.0,
        "wasted": 0.0,
        "ckpt_stall": 25.0,
        "overhead": 34.0,
        "recovery_wait": 100.0,
        "checkpoints": 5.0,
        "lost_checkpoints": 0.0,
        "planned_interruptions": 1.0,
    }
    assert times(res, CHECKPOINT_BEGIN) == [267.0, 522.0, 595.0, 967.0, 1154.0]


def test_async_drain_checkpoint_is_durable_at_the_window() -> None:
    """persist 1 s. Start 0-17; compute 17-267, snapshot 267-272 (persist
    272-273); compute 272-522, snapshot 522-527 (persist 527-528); compute
    from 527. The drain checkpoint starts at 600 - 5 - 1 = 594 (progress
    500 + 67 = 567): snapshot 594-599, persist 599-600: durable at the
    window. The job computes 599-600 meanwhile: that second is lost at the
    stop (wasted 1). Back at 700: start 700-717, compute to 817 717-967,
    snapshot 967-972 (persist 972-973), compute the last 183 s 972-1155,
    final snapshot 1155-1160, its persist 1160-1161: done.

    Wall 1,161 = 1,159 + 2 x 1; ckpt_stall 5 x 5 + the final persist 1 = 26;
    nothing lost in flight."""
    res = drained(C(1.0))
    assert row(res) == {
        "wall": 1161.0,
        "productive": 1000.0,
        "wasted": 1.0,
        "ckpt_stall": 26.0,
        "overhead": 34.0,
        "recovery_wait": 100.0,
        "checkpoints": 5.0,
        "lost_checkpoints": 0.0,
        "planned_interruptions": 1.0,
    }
    assert times(res, CHECKPOINT_BEGIN) == [267.0, 522.0, 594.0, 967.0, 1155.0]
    assert times(res, DURABLE) == [273.0, 528.0, 600.0, 973.0, 1161.0]
    assert times(res, MAINTENANCE) == [600.0]


@pytest.mark.parametrize("p", [1.0, 0.1, 0.01])
def test_async_drain_costs_two_persists(p: float) -> None:
    """persist p (small: the drain checkpoint falls after the checkpoint at
    500, as for p = 1 above). The drain snapshot starts p earlier than the
    synchronous write, at 595 - p (progress 568 - p), and is durable at 600;
    the p seconds computed meanwhile are lost (wasted p). After the window
    the job has p more to compute, and waits p for its final persist: wall
    1,159 + 2p (to rounding: p is not a binary fraction)."""
    r = row(drained(C(p)))
    assert r["wall"] == approx(1159.0 + 2 * p, abs=1e-9)
    assert r["wasted"] == approx(p, abs=1e-9)
    assert r["wasted"] <= p + 1e-9
    assert r["ckpt_stall"] == approx(25.0 + p, abs=1e-9)
    assert (r["productive"], r["checkpoints"], r["lost_checkpoints"]) == (1000.0, 5.0, 0.0)


def test_async_drain_is_continuous_in_persist() -> None:
    """As persist goes to 0 the row goes to the synchronous one (wall 1,159,
    wasted 0): wall - 1,159 is 2p and wasted p for every small p, down to
    1e-12 s (no jump at 0: before the fix 1e-9 s gave 1,227)."""
    sync = row(drained(None))
    ps = [1.0, 0.5, 0.1, 0.01, 1e-3, 1e-6, 1e-9, 1e-12]
    walls = []
    for p in ps:
        r = row(drained(C(p)))
        assert r["wall"] - sync["wall"] == approx(2 * p, abs=1e-9), p
        assert 0.0 <= r["wasted"] <= p + 1e-9, p
        assert r["lost_checkpoints"] == 0.0, p
        walls.append(r["wall"])
    assert walls == sorted(walls, reverse=True)
    assert walls[-1] == approx(sync["wall"], abs=1e-9)


def test_a_persist_of_100_s_fits_before_the_window() -> None:
    """persist 100 s: the drain checkpoint starts at 600 - 5 - 100 = 495,
    inside the compute 272-522 (the checkpoint at 250 persisted 272-372).
    Snapshot 495-500 (progress 250 + 223 = 473), persist 500-600: durable at
    the window; compute 500-600 is lost (wasted 100). Back at 700: start
    700-717, compute to 723 717-967, snapshot 967-972 (persist 972-1072);
    compute to 973 972-1222, snapshot 1222-1227 (persist 1227-1327); the
    last 27 s 1227-1254, then wait for that persist 1254-1327 (73 s);
    final snapshot 1327-1332, persist 1332-1432: done.

    Wall 1,432 = 1,000 + wasted 100 + stalls (5 x 5 + 73 + 100 = 198) +
    starts 34 + the window 100. (Before: no durable checkpoint at the
    window, wall 1,582, wasted 323, a lost checkpoint.)"""
    res = drained(C(100.0))
    assert row(res) == {
        "wall": 1432.0,
        "productive": 1000.0,
        "wasted": 100.0,
        "ckpt_stall": 198.0,
        "overhead": 34.0,
        "recovery_wait": 100.0,
        "checkpoints": 5.0,
        "lost_checkpoints": 0.0,
        "planned_interruptions": 1.0,
    }
    assert times(res, CHECKPOINT_BEGIN) == [267.0, 495.0, 967.0, 1222.0, 1327.0]
    assert times(res, DURABLE) == [372.0, 600.0, 1072.0, 1327.0, 1432.0]


def test_a_persist_in_flight_at_the_window_is_lost() -> None:
    """Persist draws 50, 150, 100, 100, 100 (mean 100: the drain checkpoint
    is planned as above, at 495). The checkpoint at 250 persists 272-322.
    The drain snapshot 495-500 (progress 473) draws 150: its persist would
    end at 650, after the window. At 600 it is in flight: lost, and the job
    drains from its last durable checkpoint, 250: wasted 223 (473 - 250) +
    compute 500-600 (100) = 323. Back at 700: start 700-717, compute to
    500 717-967, snapshot 967-972 (persist 972-1072), compute to 750
    972-1222, snapshot 1222-1227 (persist 1227-1327), compute to 1,000
    1227-1477, final snapshot 1477-1482, persist 1482-1582: done.

    Wall 1,582 = 1,000 + 323 + stalls (5 x 5 + 100) + 34 + 100."""
    res = drained(ace.Replay([50.0, 150.0, 100.0, 100.0, 100.0]))
    assert row(res) == {
        "wall": 1582.0,
        "productive": 1000.0,
        "wasted": 323.0,
        "ckpt_stall": 125.0,
        "overhead": 34.0,
        "recovery_wait": 100.0,
        "checkpoints": 4.0,
        "lost_checkpoints": 1.0,
        "planned_interruptions": 1.0,
    }
    assert times(res, CHECKPOINT_END) == [272.0, 500.0, 972.0, 1227.0, 1482.0]
    assert times(res, DURABLE) == [322.0, 1072.0, 1327.0, 1582.0]


def test_a_drain_snapshot_delayed_by_a_persist_is_not_shortened() -> None:
    """persist 300 s, longer than the interval. The drain checkpoint is due at
    600 - 5 - 300 = 295 (progress 273), but the checkpoint at 250 persists
    272-572: the job waits 295-572, then snapshots 572-577 (its full 5 s:
    late, it is not cut to end on time) and persists from 577, past the
    window: lost at 600. The job drains from 250: wasted 23 (273 - 250) +
    compute 577-600 (23) = 46. Back at 700: start 700-717, compute to 500
    717-967, snapshot 967-972 (persist 972-1272), compute to 750 972-1222,
    wait 1222-1272, snapshot 1272-1277 (persist 1277-1577), compute to
    1,000 1277-1527, wait 1527-1577, final snapshot 1577-1582, persist
    1582-1882: done.

    Stalls: 5 snapshots x 5 + waits 277 + 50 + 50 + the final persist 300 =
    702. Wall 1,882 = 1,000 + 46 + 702 + 34 + 100."""
    res = drained(C(300.0))
    assert row(res) == {
        "wall": 1882.0,
        "productive": 1000.0,
        "wasted": 46.0,
        "ckpt_stall": 702.0,
        "overhead": 34.0,
        "recovery_wait": 100.0,
        "checkpoints": 4.0,
        "lost_checkpoints": 1.0,
        "planned_interruptions": 1.0,
    }
    assert times(res, CHECKPOINT_BEGIN)[:2] == [267.0, 572.0]
    assert times(res, CHECKPOINT_END)[:2] == [272.0, 577.0]


def test_async_drain_checkpoint_times_its_transfer_too() -> None:
    """Shared storage at 100 MB/s, 1 GB per checkpoint: a persist is its
    fixed 10 s then 10 s alone on the storage (mean 20); every start loads
    1 GB (init 10 + load 7 + 10 s: 27 s). Start 0-27; compute 27-277,
    snapshot 277-282, persist 282-302; compute 282-532, snapshot 532-537,
    persist 537-557; compute from 537. The drain checkpoint starts at 600 -
    5 - 20 = 575 (progress 538): snapshot 575-580, the persist's fixed part
    580-590, its transfer 590-600: durable at the window; compute 580-600
    is lost (20). Back at 700: start 700-727, compute to 788 727-977,
    snapshot 977-982 (persist 982-1002), the last 212 s 982-1194, final
    snapshot 1194-1199, persist 1199-1219: done.

    Wall 1,219 = 1,000 + wasted 20 + stalls (5 x 5 + 20) + starts 2 x 27 +
    the window 100; no contention (one transfer at a time)."""
    job = issue_job(C(10.0), checkpoint_bytes=1e9)
    fleet = ace.Fleet(1, storage_bandwidth=1e8, maintenance=[(600.0, 100.0, (0,))])
    res = run([job], fleet=fleet, failures=None, record_events=True)
    assert row(res) == {
        "wall": 1219.0,
        "productive": 1000.0,
        "wasted": 20.0,
        "ckpt_stall": 45.0,
        "overhead": 54.0,
        "recovery_wait": 100.0,
        "checkpoints": 5.0,
        "lost_checkpoints": 0.0,
        "planned_interruptions": 1.0,
    }
    assert float(res.jobs[0]["contention"]) == 0.0
    assert times(res, CHECKPOINT_BEGIN) == [277.0, 532.0, 575.0, 977.0, 1194.0]
    assert times(res, DURABLE) == [302.0, 557.0, 600.0, 1002.0, 1219.0]


# --------------------------------------------------------------------------
# The drain checkpoint with other features that stop a run
# --------------------------------------------------------------------------


def test_a_time_limit_during_the_drain_persist_loses_it() -> None:
    """Work 600, persist 100 s, a time limit of 550 s. Run 1 (0-550): start
    0-17, compute 17-267, snapshot 267-272 (persist 272-372), the drain
    checkpoint at 495 (progress 473): snapshot 495-500, persist 500-600. The
    limit stops the run at 550 with that persist in flight: lost, back to
    250 (wasted 223 + compute 500-550 = 273). Run 2 starts at once (550-567;
    the node is free until 600): its drain point 495 is past, so no drain
    checkpoint; the window stops it at 600 (compute 567-600 lost: 33). Run 3
    at 700 (limit 1,250): start 700-717, compute to 500 717-967, snapshot
    967-972 (persist 972-1072), the last 100 s 972-1072, final snapshot
    1072-1077 (the persist ended at 1072 first), persist 1077-1177: done.

    Wall 1,177 = 600 + wasted 306 + stalls (4 x 5 + 100) + starts 3 x 17 +
    the window 100."""
    job = issue_job(C(100.0), work=600.0, time_limit=550.0)
    res = run([job], fleet=window(), failures=None, record_events=True)
    r = res.jobs[0]
    assert row(res) == {
        "wall": 1177.0,
        "productive": 600.0,
        "wasted": 306.0,
        "ckpt_stall": 120.0,
        "overhead": 51.0,
        "recovery_wait": 100.0,
        "checkpoints": 3.0,
        "lost_checkpoints": 1.0,
        "planned_interruptions": 1.0,
    }
    assert (r["timeouts"], r["restarts"]) == (1, 2)
    assert times(res, TIME_LIMIT) == [550.0]
    assert times(res, CHECKPOINT_BEGIN) == [267.0, 495.0, 967.0, 1072.0]
    assert times(res, DURABLE) == [372.0, 1072.0, 1177.0]


@pytest.mark.parametrize(("grace", "released"), [(150.0, 600.0), (149.0, 450.0)])
def test_checkpoint_aware_grace_counts_the_drain_checkpoint(grace: float, released: float) -> None:
    """Three nodes. The low-priority job V (the issue's job on two nodes,
    persist 100 s) runs on nodes 0 and 1; node 1 is in maintenance from 600.
    The high-priority job H (one node, work 3,000 s) runs on node 2, which
    fails at 450 (repaired in 2 h); H preempts V under CHECKPOINT_AWARE.

    At 450 V computes toward its drain checkpoint (due at 495, progress
    473; its checkpoint at 250 became durable at 372): it releases its nodes
    when that checkpoint is durable, 45 + 5 + 100 = 150 s later, at 600
    (not 177 s, counting to its regular boundary at 500). A grace of 150 s
    waits: V is preempted at 600 losing only its compute 500-600 (100 s),
    H starts at 600 on node 0 and ends at 600 + 17 + 3,000 + 5 = 3,622. A
    grace of 149 s does not: V is preempted at once, losing 428 - 250 =
    178 s; H restarts at 450 and ends at 3,472."""
    V = ace.Job(16, 1000.0, 250.0, init=C(10.0), save=C(5.0), load=C(7.0), persist=C(100.0))
    H = ace.Job(8, 3000.0, 3000.0, init=C(10.0), save=C(5.0), load=C(7.0), priority=1)
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=grace,
    )
    fleet = trace_fleet(3, {2: [450.0]}, repair=2 * HOUR, maintenance=[(600.0, 100.0, (1,))])
    res = run([H, V], fleet=fleet, policy=policy, failures=None, record_events=True)
    assert times(res, PREEMPTED, job=1) == [released]
    h, v = res.jobs[0], res.jobs[1]
    assert h["end"] == released + 17.0 + 3000.0 + 5.0
    assert h["recovery_wait"] == released - 450.0
    assert v["wasted"] == (100.0 if released == 600.0 else 178.0)
    assert v["lost_checkpoints"] == 0
    assert v["planned_interruptions"] == 0  # it left node 1 before the window
    assert np.all(res.trace["job"] == 0)  # the failure hit H
