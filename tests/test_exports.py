"""Exports of a run's node failures (``acesim.exports``): node-event CSV /
JSON lines and Batsim external events read from the run's event log, the
readers back to a ``NodeTrace``; a recorded schedule replayed through a
``FleetModel``.

What is asserted:

- Hand cases (constant laws, failures placed with ``NodeTrace.from_gaps``):
  every exported row, derived by hand in the test's docstring, in all three
  formats; a node is out of service from the fault on (detection included)
  until its repair, quarantine and any maintenance window that began
  meanwhile are over. Blocks, quarantine, maintenance, retirement,
  job-level failures, misdiagnosis, a zero-length stretch, and the one gap
  of the logs (a block member left in service whose job was already hit).
- The export agrees with the engine's own draws on random runs: each
  origin row's ``time - inter_failure`` (when its process restarted) is the
  latest of the node's returns and of its own process's failures that left
  it in service.
- Round trips: export, read, replay gives the same trace rows and job rows
  bit for bit (and the same export) where ``NodeTrace(res.trace)`` itself
  replays bit for bit; the reader builds the same NodeTrace as
  ``NodeTrace(res.trace)`` whatever the run; Batsim events replay the same
  failure times (a recorded failure still ahead when its node left service
  for another reason fires after the node returns).
- Batsim files follow the documented structure: one JSON object per line
  with exactly ``type``, ``resources`` (canonical interval set) and
  ``timestamp``, sorted as Batsim sorts them, each machine alternating
  unavailable / available.
- Bad input gets named errors (``ExportError``, ``NodeEventFormatError``,
  ``TypeError``, ``ValueError``) that name what is wrong; a result without
  the event log is refused with a message saying to record it.
- The schedule replay: hand cases (two jobs on 4 nodes, one node failure:
  the failed job restarts on its nodes once they are back; a start on busy
  nodes waits, first come first served; later rows answer the
  interruptions in order; ``submit="job"`` counts the queue wait), every
  input shape, and simulate's built-in scheduler's own log replayed:
  byte-identical rows (jobs, trace, node events, placements) under SPARES
  and WAIT_REPAIR with causes, maintenance, quarantine, horizons and
  replicas; the first starts alone give WAIT_REPAIR's rows while it moves
  no job; what cannot match (preemptions; the queue wait when jobs are
  submitted at their first start) is shown. Malformed rows get a
  ``ScheduleError`` naming the row; a replay that cannot go on is named.
"""

from __future__ import annotations

import csv
import dataclasses
import doctest
import io
import json
import math
import re
from collections.abc import Sequence
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import exports as ex
from acesim.simulation import BUCKETS

HOUR, DAY = ace.HOUR, ace.DAY
ZERO = ace.Constant(0.0)
NAN = math.nan
INF = math.inf


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Field by field, bit for bit."""
    names = a.dtype.names or ()
    if names != b.dtype.names or a.shape != b.shape:
        return False
    return all(a[n].tobytes() == b[n].tobytes() for n in names)


def job(nodes: int, work: float = 100 * HOUR, **kwargs: Any) -> ace.Job:
    for law in ("init", "save", "load"):
        kwargs.setdefault(law, ZERO)
    return ace.Job(8 * nodes, work, HOUR, **kwargs)


def gaps_fleet(nodes: int, gaps: dict[int, Sequence[float]], **kwargs: Any) -> ace.Fleet:
    kwargs.setdefault("repair", HOUR)
    return ace.Fleet(nodes, node_failures=ace.NodeTrace.from_gaps(gaps, nodes=nodes), **kwargs)


def run(*args: Any, **kwargs: Any) -> ace.SimulationResult:
    kwargs["record_events"] = True
    return ace.simulate(*args, **kwargs)


def log_of(res: ace.SimulationResult) -> np.ndarray:
    assert res.node_events is not None
    return res.node_events


def rows(a: np.ndarray) -> list[tuple[Any, ...]]:
    """Structured rows as tuples, NaN as None (NaN != NaN)."""
    out = []
    for r in a:
        out.append(
            tuple(
                None if isinstance(v, float) and math.isnan(v) else v
                for v in (x.item() if hasattr(x, "item") else x for x in r)
            )
        )
    return out


def batsim(text: str) -> list[tuple[float, str, str]]:
    return [(e["timestamp"], e["type"], e["resources"]) for e in map(json.loads, text.splitlines())]


# --------------------------------------------------------------------------
# Hand cases
# --------------------------------------------------------------------------


def case_plain() -> tuple[ace.SimulationResult, ace.Fleet]:
    fleet = gaps_fleet(4, {0: [2 * HOUR, 3 * HOUR], 2: [4.5 * HOUR]})
    res = run(job(2), fleet=fleet, horizon=8 * HOUR, seed=3)
    return res, fleet


def test_plain_failures_hand_rows() -> None:
    """4 nodes, repair 1 h, no causes (every failure sends its node to
    repair, detection 0). Node 0 gaps 2 h, 3 h: fails at 2 h, back at 3 h,
    its next gap counts from its return: fails at 6 h, back at 7 h. Node 2
    fails at 4.5 h, back at 5.5 h.

    rows (time, node, event, origin, source, cause, down, up,
    inter_failure): (2 h, 0, 0, 0, 1, -1, 1, 3 h, 2 h), (4.5 h, 2, 1, 2, 1,
    -1, 1, 5.5 h, 4.5 h), (6 h, 0, 2, 0, 1, -1, 1, 7 h, 3 h)."""
    res, _ = case_plain()
    expected = [
        (7200.0, 0, 0, 0, 1, -1, True, 10800.0, 7200.0),
        (16200.0, 2, 1, 2, 1, -1, True, 19800.0, 16200.0),
        (21600.0, 0, 2, 0, 1, -1, True, 25200.0, 10800.0),
    ]
    assert rows(ex.node_failures(res)) == expected
    assert ex.to_node_events(res) == (
        "time,node,event,origin,source,cause,down,up,inter_failure\n"
        "7200.0,0,0,0,1,-1,1,10800.0,7200.0\n"
        "16200.0,2,1,2,1,-1,1,19800.0,16200.0\n"
        "21600.0,0,2,0,1,-1,1,25200.0,10800.0\n"
    )
    lines = [json.loads(x) for x in ex.to_node_events(res, format="jsonl").splitlines()]
    assert lines[0] == {
        "time": 7200.0,
        "node": 0,
        "event": 0,
        "origin": 0,
        "source": 1,
        "cause": -1,
        "down": True,
        "up": 10800.0,
        "inter_failure": 7200.0,
    }
    assert [(x["time"], x["node"], x["up"]) for x in lines] == [
        (7200.0, 0, 10800.0),
        (16200.0, 2, 19800.0),
        (21600.0, 0, 25200.0),
    ]
    assert ex.to_batsim_events(res) == (
        '{"type": "machine_unavailable", "resources": "0", "timestamp": 7200.0}\n'
        '{"type": "machine_available", "resources": "0", "timestamp": 10800.0}\n'
        '{"type": "machine_unavailable", "resources": "2", "timestamp": 16200.0}\n'
        '{"type": "machine_available", "resources": "2", "timestamp": 19800.0}\n'
        '{"type": "machine_unavailable", "resources": "0", "timestamp": 21600.0}\n'
        '{"type": "machine_available", "resources": "0", "timestamp": 25200.0}\n'
    )
    assert rows(ex.node_spells(res)) == [
        (0, 7200.0, 10800.0, "failure", 0),
        (2, 16200.0, 19800.0, "failure", 1),
        (0, 21600.0, 25200.0, "failure", 2),
    ]
    assert res.fleet["down_node_hours"][0] == 3.0
    # The event numbers are the trace's.
    assert sorted(set(res.trace["event"].tolist())) == [0, 1, 2]


def case_blocks() -> tuple[ace.SimulationResult, ace.Fleet, list[ace.Cause]]:
    causes = [ace.Cause("switch", 1.0, detect=ace.Constant(600.0), nodes=2)]
    fleet = gaps_fleet(4, {1: [2 * HOUR], 3: [2.5 * HOUR], 0: [5 * HOUR, 1 * HOUR]})
    res = run(job(2), fleet=fleet, horizon=8 * HOUR, causes=causes, seed=1)
    return res, fleet, causes


def test_block_failures_with_detection_hand_rows() -> None:
    """4 nodes, repair 1 h, one cause: a 2-node block, detected after 10
    min, node to repair. Nodes leave service at the fault; they return after
    detection + repair (70 min). The job (2 nodes) runs on 2-3 first.

    - 2 h: node 1 fires; block {0, 1} (idle); both back at 3 h 10
      (11400 s). Node 0's pending 5 h draw is dropped with its process; it
      restarts at its return with its next gap, 1 h.
    - 2.5 h: node 3 fires; block {2, 3}, the job's nodes; back at 3 h 40
      (13200 s). The trace has one row for the job (on node 2), none for
      node 3: the event log has both.
    - 4 h 10 (15000 s): node 0 fires; block {0, 1} (node 1 is back in
      service); back at 5 h 20 (19200 s).

    Only the origin's row carries the draw (node 1: 2 h; node 3: 2.5 h;
    node 0: 1 h). Batsim: the blocks leave and return together."""
    res, _, _ = case_blocks()
    expected = [
        (7200.0, 0, 0, 1, 1, 0, True, 11400.0, None),
        (7200.0, 1, 0, 1, 1, 0, True, 11400.0, 7200.0),
        (9000.0, 2, 1, 3, 1, 0, True, 13200.0, None),
        (9000.0, 3, 1, 3, 1, 0, True, 13200.0, 9000.0),
        (15000.0, 0, 2, 0, 1, 0, True, 19200.0, 3600.0),
        (15000.0, 1, 2, 0, 1, 0, True, 19200.0, None),
    ]
    assert rows(ex.node_failures(res)) == expected
    assert sorted(res.trace["node"][res.trace["event"] == 1].tolist()) == [2]
    text = ex.to_node_events(res)
    assert text.splitlines()[1] == "7200.0,0,0,1,1,0,1,11400.0,"
    assert batsim(ex.to_batsim_events(res)) == [
        (7200.0, "machine_unavailable", "0-1"),
        (9000.0, "machine_unavailable", "2-3"),
        (11400.0, "machine_available", "0-1"),
        (13200.0, "machine_available", "2-3"),
        (15000.0, "machine_unavailable", "0-1"),
        (19200.0, "machine_available", "0-1"),
    ]
    assert res.fleet["node_failures"][0] == 6 == len(expected)


def test_block_member_left_in_service_is_the_logs_gap() -> None:
    """A 4-node block cause that takes no node to repair; the job runs on
    all 4 nodes; node 2 fires at 2 h. Every node of the block is struck
    (the rollup counts 4), but the trace has one row (the job, on node 0,
    the first of the block) and the event log none (no node left service):
    the export has node 0 (from the trace) and node 2 (the origin, with the
    draw); nodes 1 and 3 are in neither log."""
    causes = [ace.Cause("software", 1.0, detect=0.0, node_down=False, nodes=4)]
    res = run(job(4), fleet=gaps_fleet(4, {2: [2 * HOUR]}), causes=causes, horizon=8 * HOUR)
    assert rows(ex.node_failures(res)) == [
        (7200.0, 0, 0, 2, 1, 0, False, None, None),
        (7200.0, 2, 0, 2, 1, 0, False, None, 7200.0),
    ]
    assert res.fleet["node_failures"][0] == 4
    assert ex.to_batsim_events(res) == ""


def case_quarantine() -> tuple[ace.SimulationResult, ace.Fleet, list[ace.Cause], ace.Policy]:
    causes = [ace.Cause("software", 1.0, detect=0.0, node_down=False)]
    policy = ace.Policy(quarantine=ace.Quarantine(failures=2, window=DAY, duration=2 * HOUR))
    fleet = gaps_fleet(2, {0: [HOUR, HOUR, HOUR]})
    res = run(job(1), fleet=fleet, policy=policy, causes=causes, horizon=8 * HOUR, seed=2)
    return res, fleet, causes, policy


def test_quarantine_of_a_node_left_in_service_hand_rows() -> None:
    """2 nodes; the only cause leaves the node in service; quarantine after
    2 failures in a day, for 2 h. Node 0 gaps 1 h, 1 h, 1 h: fails at 1 h
    and stays (its next gap counts from the failure), fails at 2 h: second
    failure in the window, quarantined until 4 h (down, no repair). Back at
    4 h it fails at 5 h (the quarantine cleared its count) and stays.

    CSV: ``down`` 0 with an empty ``up`` for the failures that left it in
    service; the quarantine's row has ``up`` 4 h."""
    res, _, _, _ = case_quarantine()
    expected = [
        (3600.0, 0, 0, 0, 1, 0, False, None, 3600.0),
        (7200.0, 0, 1, 0, 1, 0, True, 14400.0, 3600.0),
        (18000.0, 0, 2, 0, 1, 0, False, None, 3600.0),
    ]
    assert rows(ex.node_failures(res)) == expected
    assert ex.to_node_events(res).splitlines()[1:] == [
        "3600.0,0,0,0,1,0,0,,3600.0",
        "7200.0,0,1,0,1,0,1,14400.0,3600.0",
        "18000.0,0,2,0,1,0,0,,3600.0",
    ]
    first = json.loads(ex.to_node_events(res, format="jsonl").splitlines()[0])
    assert first["down"] is False and first["up"] is None
    assert batsim(ex.to_batsim_events(res)) == [
        (7200.0, "machine_unavailable", "0"),
        (14400.0, "machine_available", "0"),
    ]
    assert res.fleet["quarantines"][0] == 1
    assert res.fleet["quarantined_node_hours"][0] == 2.0


def test_maintenance_extends_a_repair_and_is_exported_as_unavailability() -> None:
    """3 nodes, repair 1 h; node 1 fails at 2.5 h (repair until 3.5 h); a
    window on node 1 from 3 h to 4 h keeps it out until 4 h: ``up`` 4 h,
    one stretch (9000 to 14400 s). A window on node 2 from 5 h to 6 h is a
    stretch out of service of its own (reason maintenance, event -1; no
    failure row)."""
    fleet = gaps_fleet(
        3, {1: [2.5 * HOUR]}, maintenance=[(3 * HOUR, HOUR, [1]), (5 * HOUR, HOUR, [2])]
    )
    res = run(job(1), fleet=fleet, horizon=8 * HOUR)
    assert rows(ex.node_failures(res)) == [(9000.0, 1, 0, 1, 1, -1, True, 14400.0, 9000.0)]
    assert rows(ex.node_spells(res)) == [
        (1, 9000.0, 14400.0, "failure", 0),
        (2, 18000.0, 21600.0, "maintenance", -1),
    ]
    assert batsim(ex.to_batsim_events(res)) == [
        (9000.0, "machine_unavailable", "1"),
        (14400.0, "machine_available", "1"),
        (18000.0, "machine_unavailable", "2"),
        (21600.0, "machine_available", "2"),
    ]


def test_retired_node_never_comes_back() -> None:
    """Quarantine after 1 failure, for ever: node 0 fails at 1 h, goes to
    repair (until 2 h) and is retired: ``up`` is inf (empty / null in the
    files) and Batsim never makes it available again."""
    policy = ace.Policy(quarantine=ace.Quarantine(failures=1, window=DAY, duration=math.inf))
    res = run(job(1, work=4 * HOUR), fleet=gaps_fleet(3, {0: [HOUR]}), policy=policy)
    assert res.fleet["retired_nodes"][0] == 1
    assert rows(ex.node_failures(res)) == [(3600.0, 0, 0, 0, 1, -1, True, INF, 3600.0)]
    assert ex.to_node_events(res).splitlines()[1] == "3600.0,0,0,0,1,-1,1,,3600.0"
    line = json.loads(ex.to_node_events(res, format="jsonl"))
    assert line["down"] is True and line["up"] is None
    assert rows(ex.node_spells(res)) == [(0, 3600.0, INF, "failure", 0)]
    assert batsim(ex.to_batsim_events(res)) == [(3600.0, "machine_unavailable", "0")]


def test_a_repair_past_the_end_of_the_run_has_no_return() -> None:
    """Repair 10 h; node 0 fails at 1 h; the job (on other nodes after the
    failure) ends before the node is back: the log stops with the run, so
    ``up`` is inf and Batsim has no available event."""
    fleet = gaps_fleet(3, {0: [HOUR]}, repair=10 * HOUR)
    res = run(job(1, work=3 * HOUR), fleet=fleet)
    assert float(res.fleet["makespan"][0]) < 11 * HOUR
    assert rows(ex.node_failures(res)) == [(3600.0, 0, 0, 0, 1, -1, True, INF, 3600.0)]
    assert batsim(ex.to_batsim_events(res)) == [(3600.0, "machine_unavailable", "0")]


def test_job_level_failure_row_and_the_reader_skips_it() -> None:
    """No node failure process; the job's own law fails it once after 2 h
    held (Replay): the failure is blamed on its node (node 0, the only one)
    and sends it to repair until 3 h. The row has origin -1, source 0
    and no draw. Reading the file back skips it (the job-level law draws it
    again in a replay): the trace read has no failure."""
    fleet = ace.Fleet(1, repair=HOUR)
    res = run(job(1, work=5 * HOUR), failures=ace.Replay([2 * HOUR]), fleet=fleet, horizon=8 * HOUR)
    assert rows(ex.node_failures(res)) == [(7200.0, 0, 0, -1, 0, -1, True, 10800.0, None)]
    text = ex.to_node_events(res)
    assert text.splitlines()[1] == "7200.0,0,0,-1,0,-1,1,10800.0,"
    trace = ex.read_node_events(io.StringIO(text), 1, format="csv")
    assert trace.laws == [None]


def test_misdiagnosis_takes_out_the_node_pulled() -> None:
    """Misdiagnosis 1: the built-in scheduler runs the 2-node job on
    [3, 2]; node 3 fires at 2 h; the node pulled for repair is the job's
    other node, 2 (out until 3 h); node 3 stays in service. Rows: node 2
    down (no draw: not the origin), node 3 left in service with the draw."""
    fleet = gaps_fleet(4, {3: [2 * HOUR]}, repair=ace.Repair([ace.RepairStage(HOUR)], 1.0))
    res = run(job(2), fleet=fleet, horizon=8 * HOUR)
    assert res.placements is not None and res.placements["node"][:2].tolist() == [3, 2]
    assert rows(ex.node_failures(res)) == [
        (7200.0, 2, 0, 3, 1, -1, True, 10800.0, None),
        (7200.0, 3, 0, 3, 1, -1, False, None, 7200.0),
    ]
    assert batsim(ex.to_batsim_events(res)) == [
        (7200.0, "machine_unavailable", "2"),
        (10800.0, "machine_available", "2"),
    ]


def test_zero_length_stretch_is_not_a_batsim_event() -> None:
    """Repair 0 and no detection: node 0 leaves and returns at 1 h. The
    node events say so (``up`` = ``time``); Batsim gets nothing (at equal
    timestamps it would make the machine available first, then unavailable
    for good)."""
    res = run(job(1), fleet=gaps_fleet(2, {0: [HOUR]}, repair=0.0), horizon=3 * HOUR)
    assert rows(ex.node_failures(res)) == [(3600.0, 0, 0, 0, 1, -1, True, 3600.0, 3600.0)]
    assert ex.to_batsim_events(res) == ""


def test_replica_and_first_replica() -> None:
    """``replica`` is the trace's replica number (first_replica + r)."""
    fleet = gaps_fleet(4, {0: [2 * HOUR, 3 * HOUR], 2: [4.5 * HOUR]})
    res = run(job(2), fleet=fleet, horizon=8 * HOUR, replicas=2, first_replica=5)
    for r in (5, 6):
        assert [x[0] for x in rows(ex.node_failures(res, replica=r))] == [7200.0, 16200.0, 21600.0]
    with pytest.raises(ValueError, match=r"replica 0 is not in the results \(replicas 5..6\)"):
        ex.node_failures(res)


def test_a_fleet_models_result_exports_the_same_rows() -> None:
    """The FleetModel of ``FleetModel``'s docstring, driven by hand (the
    job on [0, 1], restarted on [1, 2] after node 0's failure at 5000 s),
    gives its result's event log: node 0 out at 5000 s, back at 8600 s."""
    fleet = gaps_fleet(4, {0: [5000.0]})
    model = ace.FleetModel(fleet)
    j = model.submit(job(2, work=4 * HOUR))
    model.start(j, [0, 1])
    model.advance(6000.0)
    model.advance(6000.0)
    model.start(j, [1, 2])
    model.advance(10 * HOUR)
    res = model.result()
    assert rows(ex.node_failures(res)) == [(5000.0, 0, 0, 0, 1, -1, True, 8600.0, 5000.0)]
    assert batsim(ex.to_batsim_events(res)) == [
        (5000.0, "machine_unavailable", "0"),
        (8600.0, "machine_available", "0"),
    ]


# --------------------------------------------------------------------------
# The export against the engine's own draws
# --------------------------------------------------------------------------

CAUSES = [
    ace.Cause("gpu", 5, detect=ace.Exponential(120.0)),
    ace.Cause("software", 3, detect=10.0, node_down=False),
    ace.Cause("switch", 1, detect=ace.Exponential(600.0), nodes=4),
    ace.Cause("gray", 1, detect=ace.Exponential(900.0), slowdown=0.5),
]
PIPELINE = ace.Repair(
    [
        ace.RepairStage(ace.Constant(600.0), escalate=0.4, fix=0.2),
        ace.RepairStage(ace.Exponential(8 * HOUR), escalate=0.3, fix=0.9),
        ace.RepairStage(ace.Constant(3 * DAY), fix=1.0),
    ],
    misdiagnosis=0.2,
)


def random_jobs() -> list[ace.Job]:
    return [
        ace.Job(8 * n, w * HOUR, HOUR, submit=s * HOUR, priority=p)
        for n, w, s, p in [(4, 200, 0, 0), (2, 100, 5, 1), (1, 50, 10, 0), (3, 150, 0, 2)]
    ]


@pytest.mark.parametrize(
    ("repair", "quarantine", "maintenance", "job_failures"),
    [
        (ace.Exponential(4 * HOUR), None, (), None),
        (
            ace.LogNormal(8.0, 1.0),
            ace.Quarantine(2, 2 * DAY, 3 * DAY),
            (),
            ace.Exponential(3 * DAY),
        ),
        (PIPELINE, ace.Quarantine(3, 5 * DAY, math.inf), [(2 * DAY, 6 * HOUR, range(4))], None),
        (PIPELINE, None, [(DAY, 2 * HOUR, [9, 10])], ace.Exponential(2 * DAY)),
    ],
)
def test_returns_agree_with_the_engines_restart_times(
    repair: Any, quarantine: Any, maintenance: Any, job_failures: Any
) -> None:
    """A node's failure process restarts at its return to service (or at a
    failure of its own process that left it in service; a block failure or a
    job-level failure that leaves it in service does not restart it), and
    the trace's ``inter_failure`` is counted from there (wall clock):
    ``time - inter_failure`` of each origin row must be the latest such
    moment the export gives for that node before the failure. This checks
    every ``up`` that a later failure follows against the trace's draws.
    The rows name every struck node but the logs' gap (block members left
    in service): with no such cause, as many rows as the rollup's
    ``node_failures`` plus the nodes misdiagnosis pulled; retired nodes are
    never back."""
    fleet = ace.Fleet(
        16,
        spares=2,
        repair=repair,
        node_failures=ace.Weibull(0.7, 3 * DAY),
        maintenance=maintenance,
        lemon_fraction=0.1,
        lemon_factor=5.0,
    )
    policy = ace.Policy(replacement=ace.Replacement.WAIT_REPAIR, quarantine=quarantine)
    checked = 0
    for seed in range(3):
        res = run(
            random_jobs(),
            failures=job_failures,
            fleet=fleet,
            policy=policy,
            causes=CAUSES,
            replicas=2,
            seed=seed,
            horizon=20 * DAY,
        )
        for r in (0, 1):
            f = ex.node_failures(res, replica=r)
            s = ex.node_spells(res, replica=r)
            assert f.size <= res.fleet["node_failures"][r] + f["down"].sum()
            assert np.isinf(s["end"]).sum() >= res.fleet["retired_nodes"][r]
            own = f[(f["source"] == 1) & (f["node"] == f["origin"])]
            for row in own:
                n = row["node"]
                stayed = own["time"][(own["node"] == n) & ~own["down"]]
                moments = np.concatenate([[0.0], stayed, s["end"][s["node"] == n]])
                latest = moments[moments < row["time"]].max()
                restart = row["time"] - row["inter_failure"]
                assert restart == pytest.approx(latest, rel=1e-12, abs=1e-6)
                checked += 1
    assert checked > 100


# --------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_round_trip_hand_cases(fmt: str, tmp_path: Any) -> None:
    """Export, read back, replay with the same jobs and seed: the same trace
    rows and job rows bit for bit, and the same export."""
    res, fleet = case_plain()
    path = tmp_path / f"events.{fmt}"
    ex.to_node_events(res, format=fmt, path=path)
    model = fleet.node_failures.model  # type: ignore[union-attr]
    trace = ex.read_node_events(path, 4, model=model)
    replay = ace.Fleet(4, repair=HOUR, node_failures=trace)
    again = run(job(2), fleet=replay, horizon=8 * HOUR, seed=3)
    assert same(res.trace, again.trace) and same(res.jobs, again.jobs)
    assert same(log_of(res), log_of(again))
    assert ex.to_node_events(again, format=fmt) == path.read_text()

    res, fleet, causes, policy = case_quarantine()
    text = ex.to_node_events(res, format=fmt)
    model = fleet.node_failures.model  # type: ignore[union-attr]
    trace = ex.read_node_events(io.StringIO(text), 2, model=model, format=fmt)
    replay = ace.Fleet(2, repair=HOUR, node_failures=trace)
    again = run(job(1), fleet=replay, policy=policy, causes=causes, horizon=8 * HOUR, seed=2)
    assert same(res.trace, again.trace) and same(res.jobs, again.jobs)
    assert ex.to_node_events(again, format=fmt) == text


@pytest.mark.parametrize("seed", range(4))
def test_round_trip_random_runs(seed: int) -> None:
    """Random laws, causes that repair or leave the node in service,
    quarantine: the export replays bit for bit (trace, jobs, node events),
    through both formats."""
    law = ace.Weibull(0.8, 2 * DAY)
    causes = [
        ace.Cause("gpu", 3, detect=ace.Exponential(300.0)),
        ace.Cause("software", 2, detect=ace.Exponential(30.0), node_down=False),
    ]
    policy = ace.Policy(quarantine=ace.Quarantine(2, DAY, 2 * DAY))

    def fleet(failures: Any) -> ace.Fleet:
        return ace.Fleet(12, spares=1, repair=ace.Exponential(3 * HOUR), node_failures=failures)

    res = run(random_jobs(), fleet=fleet(law), policy=policy, causes=causes, seed=seed, replicas=2)
    assert res.trace.size > 20
    for fmt in ("csv", "jsonl"):
        for r in (0, 1):
            text = ex.to_node_events(res, replica=r, format=fmt)
            trace = ex.read_node_events(io.StringIO(text), 12, model=law, format=fmt)
            again = run(
                random_jobs(),
                fleet=fleet(trace),
                policy=policy,
                causes=causes,
                seed=seed,
                replicas=1,
                first_replica=r,
            )
            assert same(res.trace[res.trace["replica"] == r], again.trace)
            assert same(res.jobs[res.jobs["replica"] == r], again.jobs)
            mine = log_of(res)
            assert same(mine[mine["replica"] == r], log_of(again))


def test_reader_builds_the_trace_of_the_results() -> None:
    """Whatever the run (blocks, job-level failures, maintenance), the file
    read back is the NodeTrace that ``NodeTrace(res.trace)`` builds: the
    same failure times and reported draws per node (block members and
    job-level rows are skipped, only each node's own process is replayed)."""
    law = ace.Exponential(3 * DAY)
    fleet = ace.Fleet(
        16,
        spares=1,
        repair=ace.Exponential(2 * HOUR),
        node_failures=law,
        maintenance=[(2 * DAY, 4 * HOUR, range(8))],
    )
    res = run(random_jobs(), failures=ace.Exponential(2 * DAY), fleet=fleet, causes=CAUSES, seed=4)
    direct = ace.NodeTrace(res.trace, 16, model=law)
    for fmt in ("csv", "jsonl"):
        text = ex.to_node_events(res, format=fmt)
        read = ex.read_node_events(io.StringIO(text), 16, model=law, format=fmt)
        assert read.model is law and read.exact_times
        for a, b in ((direct.laws, read.laws), (direct.reported, read.reported)):
            assert [None if x is None else x.times.tolist() for x in a] == [  # type: ignore[attr-defined]
                None if x is None else x.times.tolist()  # type: ignore[attr-defined]
                for x in b
            ]


def test_round_trip_with_block_failures() -> None:
    """The block hand case: node 0's own failure at 15000 s was recorded
    while its process was stopped by node 1's block failure (2 h to 3 h
    10); the replay should fire it at 15000 s as recorded."""
    res, fleet, causes = case_blocks()
    text = ex.to_node_events(res)
    model = fleet.node_failures.model  # type: ignore[union-attr]
    replay = ace.Fleet(
        4, repair=HOUR, node_failures=ex.read_node_events(io.StringIO(text), 4, model=model)
    )
    again = run(job(2), fleet=replay, horizon=8 * HOUR, causes=causes, seed=1)
    assert same(res.trace, again.trace)


def test_batsim_round_trip_replays_the_failure_times(tmp_path: Any) -> None:
    """Batsim events carry times only: replaying them gives the same
    failures (times, nodes, jobs hit) and the same job rows; the reported
    ``inter_failure`` becomes the gap between a node's failure times."""
    res, fleet = case_plain()
    path = tmp_path / "failures.events"
    ex.to_batsim_events(res, path=path)
    model = fleet.node_failures.model  # type: ignore[union-attr]
    trace = ex.read_batsim_events(path, 4, model=model)
    again = run(job(2), fleet=ace.Fleet(4, repair=HOUR, node_failures=trace), horizon=8 * HOUR)
    for name in ("replica", "event", "job", "node", "origin", "cause", "source", "time"):
        assert np.array_equal(res.trace[name], again.trace[name]), name
    assert again.trace["inter_failure"].tolist() == [7200.0, 16200.0, 14400.0]
    assert same(res.jobs, again.jobs)
    assert ex.to_batsim_events(again) == path.read_text()


# --------------------------------------------------------------------------
# Batsim's documented structure
# --------------------------------------------------------------------------

INTERVAL = re.compile(r"(\d+)(?:-(\d+))?")


def assert_batsim_file(text: str, nodes: int) -> None:
    """One JSON object per line, no header; exactly type, resources and
    timestamp; a known type; resources a canonical interval set (disjoint,
    maximal, ascending, ``a`` for one id); timestamp a number >= 0; sorted
    by timestamp, available before unavailable at equal timestamps; each
    machine alternates unavailable / available, starting unavailable."""
    assert text == "" or text.endswith("\n")
    last: tuple[float, int] = (-1.0, 0)
    up = [True] * nodes
    for line in text.splitlines():
        event = json.loads(line)
        assert isinstance(event, dict) and set(event) == {"type", "resources", "timestamp"}
        assert event["type"] in ("machine_unavailable", "machine_available")
        t = event["timestamp"]
        assert isinstance(t, float | int) and not isinstance(t, bool) and t >= 0
        key = (t, 0 if event["type"] == "machine_available" else 1)
        assert key > last
        last = key
        ids: list[int] = []
        previous_end = -2
        for part in event["resources"].split(" "):
            m = INTERVAL.fullmatch(part)
            assert m, event["resources"]
            a = int(m[1])
            b = int(m[2]) if m[2] is not None else a
            assert a > previous_end + 1 and (m[2] is None or b > a), event["resources"]
            previous_end = b
            ids.extend(range(a, b + 1))
        for n in ids:
            assert 0 <= n < nodes
            becomes_up = event["type"] == "machine_available"
            assert up[n] != becomes_up, (n, t)
            up[n] = becomes_up


def test_interval_sets_are_canonical() -> None:
    assert ex._interval_set([7, 0, 1, 2, 3]) == "0-3 7"
    assert ex._interval_set([1, 2, 3, 5, 7]) == "1-3 5 7"
    assert ex._interval_set([4]) == "4"
    assert ex._interval_set([3, 3, 4]) == "3-4"
    assert ex._parse_interval_set("x", "0-3 7") == [0, 1, 2, 3, 7]


@pytest.mark.parametrize("seed", range(3))
def test_batsim_files_follow_the_documented_structure(seed: int) -> None:
    """Random runs with blocks, misdiagnosis, quarantine, retirement and
    maintenance."""
    fleet = ace.Fleet(
        16,
        repair=PIPELINE,
        node_failures=ace.Weibull(0.7, 2 * DAY),
        maintenance=[(DAY, 6 * HOUR, range(4)), (3 * DAY, HOUR, "all")],
    )
    policy = ace.Policy(quarantine=ace.Quarantine(3, 3 * DAY, math.inf))
    res = run(random_jobs(), fleet=fleet, policy=policy, causes=CAUSES, seed=seed, horizon=15 * DAY)
    text = ex.to_batsim_events(res)
    assert len(text.splitlines()) > 10
    assert_batsim_file(text, 16)
    # Every stretch out of service is one unavailable event per node, and
    # one available event unless the node is not back by the end.
    spells = ex.node_spells(res)
    spells = spells[spells["end"] > spells["start"]]
    assert set(spells["reason"].tolist()) == {"failure", "maintenance"}
    events = [json.loads(x) for x in text.splitlines()]
    count = {k: 0 for k in ex.BATSIM_EVENT_TYPES}
    for e in events:
        count[e["type"]] += len(ex._parse_interval_set("", e["resources"]))
    assert count["machine_unavailable"] == spells.size
    assert count["machine_available"] == np.isfinite(spells["end"]).sum()


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_a_result_without_the_event_log_is_refused() -> None:
    fleet = gaps_fleet(4, {0: [2 * HOUR]})
    res = ace.simulate(job(2), fleet=fleet, horizon=8 * HOUR)
    for export in (ex.node_failures, ex.node_spells, ex.to_node_events, ex.to_batsim_events):
        with pytest.raises(ex.ExportError, match=r"no event log.*record_events=True"):
            export(res)
    assert issubclass(ex.ExportError, ValueError)
    # A run without a fleet has no node pool.
    res = run(job(2, work=4 * HOUR), failures=ace.Exponential(HOUR))
    with pytest.raises(ex.ExportError, match="without a fleet"):
        ex.to_batsim_events(res)


def test_export_errors_name_what_is_wrong() -> None:
    res, _ = case_plain()
    with pytest.raises(TypeError, match="res must be a SimulationResult"):
        ex.to_node_events(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="format must be one of"):
        ex.to_node_events(res, format="xml")
    with pytest.raises(TypeError, match="replica must be an integer"):
        ex.node_failures(res, replica=0.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path must be"):
        ex.to_node_events(res, path=3)  # type: ignore[arg-type]
    # Logs that disagree (not one run's): named.
    log = log_of(res).copy()
    log["event"][0] = 7
    with pytest.raises(ex.ExportError, match=r"after failure event 7, which res\.trace lacks"):
        ex.node_failures(dataclasses.replace(res, node_events=log))
    log = log_of(res).copy()
    log["time"][0] = 1.0
    with pytest.raises(ex.ExportError, match=r"which res\.trace dates at t=7200\.0"):
        ex.node_failures(dataclasses.replace(res, node_events=log))
    with pytest.raises(ex.ExportError, match=r"back in service at t=10800\.0 but never left"):
        ex.node_failures(dataclasses.replace(res, node_events=log_of(res)[1:]))
    trace = res.trace.copy()
    trace = np.concatenate([trace, trace[:1]])
    trace["origin"][-1] = 3
    with pytest.raises(ex.ExportError, match="rows of failure event 0 disagree"):
        ex.node_failures(dataclasses.replace(res, trace=trace))


HEADER = "time,node,event,origin,source,cause,down,up,inter_failure\n"


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("node,when\n0,1.0\n", "csv", "line 1: the header lacks the column 'time'"),
        ("time\n1.0\n", "csv", "the header lacks the column 'node'"),
        ("time,node\nsoon,0\n", "csv", "line 2: time must be a number, got 'soon'"),
        ("time,node\n-1.0,0\n", "csv", "line 2: time must be >= 0"),
        ("time,node\ninf,0\n", "csv", "time must be finite"),
        ("time,node\nnan,0\n", "csv", "time must be finite"),
        ("time,node\n1.0,4\n", "csv", r"node must be in \[0, 3\], got '4'"),
        ("time,node\n1.0,1.5\n", "csv", "node must be an integer, got '1.5'"),
        ("time,node\n1.0,0,7\n", "csv", "line 2: more cells than the header has columns"),
        ("time,node,origin\n1.0,0,x\n", "csv", "origin must be an integer"),
        (HEADER + "1.0,0,0,0,1,-1,1,,-5\n", "csv", "inter_failure must be >= 0"),
        ("time,node,inter_failure\n1.0,0,1.0\n2.0,1,\n", "csv", "inter_failure: give it on every"),
        ('{"time": 1.0}\n', "jsonl", "line 1: no 'node' field"),
        ('{"time": 1.0, "node": 0}\n[1]\n', "jsonl", "line 2: each line must be a JSON object"),
        ('{"time": 1.0, "node": 0\n', "jsonl", "line 1: not JSON"),
        ('{"time": "1.0", "node": 0}\n', "jsonl", "time must be a number, got '1.0'"),
        ('{"time": 1.0, "node": true}\n', "jsonl", "node must be an integer, got True"),
        ('{"time": 1.0, "node": 0.0}\n', "jsonl", "node must be an integer, got 0.0"),
        ('{"time": null, "node": 0}\n', "jsonl", "time must be a number, got None"),
    ],
)
def test_node_event_reader_errors(text: str, fmt: str, message: str) -> None:
    with pytest.raises(ex.NodeEventFormatError, match=message):
        ex.read_node_events(io.StringIO(text), 4, format=fmt)


def test_node_event_reader_accepts_a_schedulers_own_log(tmp_path: Any) -> None:
    """Only time and node are needed; blank lines are skipped; rows need
    not be in order; the format follows the suffix, else the first
    character; other columns are ignored."""
    path = tmp_path / "slurm-node-failures.csv"
    path.write_text("node,time,reason\n2,7200,GPU XID 79\n\n0,3600.5,NIC\n2,1800,ECC\n")
    trace = ex.read_node_events(path, 3)
    assert [None if x is None else x.times.tolist() for x in trace.laws] == [  # type: ignore[attr-defined]
        [3600.5],
        None,
        [1800.0, 7200.0],
    ]
    jsonl = tmp_path / "log"
    jsonl.write_text('{"node": 1, "time": 60}\n\n{"node": 1, "time": 30.0, "why": "x"}\n')
    trace = ex.read_node_events(jsonl, 2)
    assert trace.laws[1].times.tolist() == [30.0, 60.0]  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="format must be one of"):
        ex.read_node_events(path, 3, format="tsv")
    with pytest.raises(TypeError, match="path must be"):
        ex.read_node_events(3, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be a Distribution"):
        ex.read_node_events(path, 3, model=5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nodes must be >= 1"):
        ex.read_node_events(path, 0)
    # An export of another run reads too (its extra columns are ignored).
    res, _ = case_plain()
    text = ex.to_node_events(res)
    assert next(iter(csv.DictReader(io.StringIO(text))))["up"] == "10800.0"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"resources": "0", "timestamp": 1}', "no 'type' field"),
        ('{"type": "machine_unavailable", "timestamp": 1}', "no 'resources' field"),
        ('{"type": "machine_unavailable", "resources": "0"}', "no 'timestamp' field"),
        ('{"type": "machine_failure", "resources": "0", "timestamp": 1}', "type must be one of"),
        ('{"type": "machine_available", "resources": 0, "timestamp": 1}', "must be a string"),
        ('{"type": "machine_available", "resources": "3-1", "timestamp": 1}', "ends before"),
        ('{"type": "machine_available", "resources": "a", "timestamp": 1}', "'a' is not"),
        ('{"type": "machine_available", "resources": "1-2-3", "timestamp": 1}', "is not 'a-b'"),
        ('{"type": "machine_available", "resources": "0  1", "timestamp": 1}', "single spaces"),
        ('{"type": "machine_available", "resources": "", "timestamp": 1}', "single spaces"),
        ('{"type": "machine_available", "resources": "0", "timestamp": -1}', "must be >= 0"),
        ('{"type": "machine_available", "resources": "0", "timestamp": "1"}', "must be a number"),
        ('{"type": "machine_unavailable", "resources": "0-4", "timestamp": 1}', "machine 4 is"),
        ('["machine_unavailable"]', "each line must be a JSON object"),
        ("machine_unavailable 0 1", "not JSON"),
    ],
)
def test_batsim_reader_errors(line: str, message: str) -> None:
    text = '{"type": "machine_unavailable", "resources": "1", "timestamp": 0}\n' + line + "\n"
    with pytest.raises(ex.NodeEventFormatError, match="line 2: .*" + message):
        ex.read_batsim_events(io.StringIO(text), 4)


def test_batsim_reader_reads_the_documented_example() -> None:
    """Batsim's own example file (events/test_events_4hosts.txt): unordered
    timestamps would be sorted; each unavailable machine fails then."""
    text = (
        '{"type": "machine_unavailable", "resources": "0", "timestamp" : 0}\n'
        '{"type": "machine_available", "resources": "0", "timestamp" : 10}\n'
        '{"type": "machine_unavailable", "resources": "0-1 3", "timestamp" : 20}\n'
        '{"type": "machine_available", "resources": "0 1", "timestamp" : 250}\n'
        '{"type": "machine_available", "resources": "3", "timestamp" : 300}\n'
    )
    trace = ex.read_batsim_events(io.StringIO(text), 4)
    assert [None if x is None else x.times.tolist() for x in trace.laws] == [  # type: ignore[attr-defined]
        [0.0, 20.0],
        [20.0],
        None,
        [20.0],
    ]


def test_docstring_examples() -> None:
    failed, tried = doctest.testmod(ex, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


# --------------------------------------------------------------------------
# A recorded schedule replayed through the model
# --------------------------------------------------------------------------


def sjob(nodes: int, work: float) -> ace.Job:
    """A whole-node job, a checkpoint every hour, save 60 s, load 60 s, no init."""
    return ace.Job(
        8 * nodes, work, HOUR, init=ZERO, save=ace.Constant(60.0), load=ace.Constant(60.0)
    )


def two_jobs() -> list[ace.Job]:
    return [sjob(2, 2.5 * HOUR), sjob(2, 1.5 * HOUR)]


def node_1_fails() -> ace.Fleet:
    """4 nodes; node 1 fails at 1.5 h (5400 s); repair 1 h."""
    return gaps_fleet(4, {1: [1.5 * HOUR]})


def row_of(res: ace.SimulationResult, j: int) -> dict[str, float]:
    r = res.jobs[res.jobs["job"] == j][0]
    out = {b: float(r[b]) for b in (*BUCKETS, "submit", "end", "wall")}
    assert sum(out[b] for b in BUCKETS) == pytest.approx(out["wall"], abs=1e-9)
    return out


def starts(res: ace.SimulationResult) -> list[tuple[int, float, list[int]]]:
    """The placements as (job, time, nodes), one per start."""
    assert res.placements is not None
    out: list[tuple[int, float, list[int]]] = []
    for p in res.placements:
        j, t, n = int(p["job"]), float(p["time"]), int(p["node"])
        if out and out[-1][:2] == (j, t):
            out[-1][2].append(n)
        else:
            out.append((j, t, [n]))
    return out


def hours(**buckets: float) -> dict[str, float]:
    return {b: buckets.get(b, 0.0) for b in BUCKETS}


def test_schedule_hand_case_a_failed_job_restarts_on_its_nodes() -> None:
    """Two 2-node jobs on 4 nodes; node 1 fails at 5400 s (repair 1 h).

    Every run ends with a checkpoint when the work is done (the model's
    rule). A (2.5 h of work) on [0, 1] from 0: load 0-60, compute 60-3660,
    checkpoint 3660-3720, compute from 3720; node 1 fails at 5400: 1680 s
    wasted. The schedule has no later row for A: it waits for node 1
    (recovery_wait 3600 s, holding node 0) and restarts on [0, 1] at 9000:
    load 9000-9060, compute 9060-12660, checkpoint 12660-12720, the last
    half hour 12720-14520 and the checkpoint at the end, to 14580.
    productive 9000, wasted 1680, ckpt_stall 180, overhead 120,
    recovery_wait 3600: wall 14580.

    B (1.5 h) on [2, 3] from 1800 (``end`` logged, not used): submitted then,
    load 1800-1860, compute 1860-5460, checkpoint 5460-5520, compute to
    7320, checkpoint to 7380. productive 5400, ckpt_stall 120, overhead 60:
    wall 5580."""
    schedule = [(0, [0, 1], 0.0, 3 * HOUR), (1, [2, 3], 1800.0, 2 * HOUR)]
    res = ex.replay_schedule(schedule, two_jobs(), node_1_fails())
    a, b = row_of(res, 0), row_of(res, 1)
    assert {k: a[k] for k in BUCKETS} == hours(
        productive=9000.0, wasted=1680.0, ckpt_stall=180.0, overhead=120.0, recovery_wait=3600.0
    )
    assert (a["submit"], a["end"], a["wall"]) == (0.0, 14580.0, 14580.0)
    assert {k: b[k] for k in BUCKETS} == hours(productive=5400.0, ckpt_stall=120.0, overhead=60.0)
    assert (b["submit"], b["end"], b["wall"]) == (1800.0, 7380.0, 5580.0)
    assert res.jobs["failures"].tolist() == [1, 0]
    assert res.jobs["restarts"].tolist() == [1, 0]
    assert starts(res) == [(0, 0.0, [0, 1]), (1, 1800.0, [2, 3]), (0, 9000.0, [0, 1])]
    assert rows(res.trace[["job", "node", "time"]]) == [(0, 1, 5400.0)]
    # The replay's result has the event log: it exports.
    assert rows(ex.node_failures(res)) == [(5400.0, 1, 0, 1, 1, -1, True, 9000.0, 5400.0)]


def test_schedule_hand_case_a_start_on_busy_nodes_waits() -> None:
    """B is logged on [1, 2] at 1800 s, while A holds node 1: it waits.
    Node 1 fails at 5400 (A holds node 0 and waits for node 1); at 9000
    node 1 is back and both starts are due: B's since 1800, A's since
    5400: first come, first served, B starts on [1, 2] (queue_wait 7200)
    and ends at 9000 + 5580 = 14580; A, waiting for node 1 again, restarts
    on [0, 1] at 14580 (recovery_wait 14580 - 5400 = 9180) and ends at
    14580 + 60 + 3600 + 60 + 1800 + 60 = 20160."""
    schedule = [(0, [0, 1], 0.0), (1, [1, 2], 1800.0)]
    res = ex.replay_schedule(schedule, two_jobs(), node_1_fails())
    a, b = row_of(res, 0), row_of(res, 1)
    assert {k: a[k] for k in BUCKETS} == hours(
        productive=9000.0, wasted=1680.0, ckpt_stall=180.0, overhead=120.0, recovery_wait=9180.0
    )
    assert a["end"] == 20160.0
    assert {k: b[k] for k in BUCKETS} == hours(
        productive=5400.0, ckpt_stall=120.0, overhead=60.0, queue_wait=7200.0
    )
    assert (b["submit"], b["end"]) == (1800.0, 14580.0)
    assert starts(res) == [(0, 0.0, [0, 1]), (1, 9000.0, [1, 2]), (0, 14580.0, [0, 1])]


def test_schedule_later_rows_answer_the_interruptions() -> None:
    """A alone, node 1 failing at 5400 s.

    - A second row at 7200 on [2, 3]: A restarts there at 7200
      (recovery_wait 1800; node 0 released then) and ends at 7200 + 60 +
      3600 + 60 + 1800 + 60 = 12780.
    - A second row at 3600, before the model's failure: it answers that
      failure, reported at 5400: A restarts on [2, 3] at once and ends at
      5400 + 5580 = 10980 (recovery_wait 0). A third row is unused (no
      second interruption)."""
    jobs = two_jobs()
    res = ex.replay_schedule([(0, [0, 1], 0.0), (0, [2, 3], 7200.0)], jobs, node_1_fails())
    a = row_of(res, 0)
    assert (a["recovery_wait"], a["wasted"], a["end"]) == (1800.0, 1680.0, 12780.0)
    assert starts(res) == [(0, 0.0, [0, 1]), (0, 7200.0, [2, 3])]
    assert res.jobs.size == 1  # job 1 has no row (submitted at its first start: never)
    schedule = [(0, [0, 1], 0.0), (0, "2-3", 3600.0), (0, [0, 1], 20000.0)]
    res = ex.replay_schedule(schedule, jobs, node_1_fails())
    a = row_of(res, 0)
    assert (a["recovery_wait"], a["wasted"], a["end"]) == (0.0, 1680.0, 10980.0)
    assert starts(res) == [(0, 0.0, [0, 1]), (0, 5400.0, [2, 3])]


def test_schedule_submitted_at_job_submit_counts_the_queue_wait() -> None:
    """``submit="job"``: A's Job.submit is 600 s, its first start 1800 s:
    queue_wait 1200. Load 1800-1860, compute from 1860; node 1 fails at
    5400, before the first checkpoint (due at 5460): 3540 s wasted. Back at
    9000 (recovery_wait 3600): load to 9060, 1 h, checkpoint, 1 h,
    checkpoint, the last half hour and its checkpoint: ends at 9060 + 3600 +
    60 + 3600 + 60 + 1800 + 60 = 18240. A job of ``jobs`` with no row is submitted at its
    Job.submit and waits in the queue to the end."""
    jobs = [
        ace.Job(
            16,
            2.5 * HOUR,
            HOUR,
            init=ZERO,
            save=ace.Constant(60.0),
            load=ace.Constant(60.0),
            submit=600.0,
        ),
        ace.Job(8, HOUR, HOUR, submit=900.0),
    ]
    schedule = [(0, [0, 1], 1800.0)]
    res = ex.replay_schedule(schedule, jobs, node_1_fails(), submit="job")
    a = row_of(res, 0)
    assert {k: a[k] for k in BUCKETS} == hours(
        productive=9000.0,
        wasted=3540.0,
        ckpt_stall=180.0,
        overhead=120.0,
        queue_wait=1200.0,
        recovery_wait=3600.0,
    )
    assert (a["submit"], a["end"]) == (600.0, 18240.0)
    assert res.jobs["status"].tolist() == [ace.JobStatus.DONE, ace.JobStatus.QUEUED]
    assert row_of(res, 1)["queue_wait"] == 18240.0 - 900.0
    assert ex.schedule_order(schedule, jobs, node_1_fails(), submit="job") == [0, 1]
    assert ex.schedule_order(schedule, jobs, node_1_fails()) == [0]


def test_schedule_inputs_in_every_shape_give_the_same_replay(tmp_path: Any) -> None:
    """Tuples, dicts, a numpy structured array (nodes as strings or
    lists; a NaN end is no end), a CSV file (interval-set nodes, job keys
    of a mapping, an empty end), a JSON-lines file: the same replay."""
    fleet, jobs = node_1_fails(), two_jobs()
    expected = ex.replay_schedule([(0, [0, 1], 0.0), (1, [2, 3], 1800.0)], jobs, fleet).jobs
    dicts = [
        {"job": 0, "nodes": [0, 1], "start": 0.0, "end": 3 * HOUR},
        {"start": 1800, "nodes": (2, 3), "job": 1},
    ]
    strings = np.array(
        [(0, "0-1", 0.0, 3 * HOUR), (1, "2 3", 1800.0, NAN)],
        dtype=[("job", "i8"), ("nodes", "U8"), ("start", "f8"), ("end", "f8")],
    )
    lists = np.empty(2, dtype=[("job", "i8"), ("nodes", "O"), ("start", "f8")])
    lists[0] = (0, [0, 1], 0.0)
    lists[1] = (1, [2, 3], 1800.0)
    path = tmp_path / "schedule.csv"
    path.write_text("job,nodes,start,end\ntrain,0-1,0,10800\n\neval,2-3,1800.0,\n")
    named = {"train": jobs[0], "eval": jobs[1]}
    jsonl = tmp_path / "schedule.jsonl"
    jsonl.write_text(
        '{"job": "train", "nodes": [0, 1], "start": 0}\n'
        '{"job": "eval", "nodes": "2-3", "start": 1800, "end": null}\n'
    )
    cases: list[tuple[Any, Any]] = [
        (dicts, jobs),
        (strings, jobs),
        (lists, jobs),
        (path, named),
        (str(jsonl), named),
    ]
    for schedule, given in cases:
        assert same(ex.replay_schedule(schedule, given, fleet).jobs, expected)
    # A CSV cell "1" finds the integer key 1 of a mapping.
    path.write_text("job,nodes,start\n0,0-1,0\n1,2-3,1800\n")
    assert same(ex.replay_schedule(path, dict(enumerate(jobs)), fleet).jobs, expected)
    assert ex.schedule_order(path, dict(enumerate(jobs)), fleet) == [0, 1]


def built_in(replacement: ace.Replacement, quarantine: bool) -> dict[str, Any]:
    """A 24-node fleet with 2 hot spares, exponential node failures and
    repairs, LLAMA3 causes (detection latencies, blocks), a maintenance
    window; one 64-GPU job and 16 smaller ones submitted an hour apart."""
    fleet = ace.Fleet(
        24,
        spares=2,
        repair=ace.Exponential(6 * HOUR),
        node_failures=ace.Exponential(5 * DAY),
        maintenance=[(2 * DAY, 4 * HOUR, range(6))],
    )
    jobs = [ace.Job(64, work=4 * DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(g, work=DAY, checkpoint_interval=HOUR, submit=(i + 1) * HOUR, priority=i % 2)
        for i, g in enumerate([8, 16, 32, 8, 24, 8, 16, 32] * 2)
    ]
    policy = ace.Policy(
        replacement=replacement,
        quarantine=ace.Quarantine(2, DAY, 2 * DAY) if quarantine else None,
    )
    return {"jobs": jobs, "fleet": fleet, "causes": ace.LLAMA3_CAUSES, "policy": policy}


def logged_schedule(
    res: ace.SimulationResult, replica: int, first_only: bool = False
) -> list[tuple[int, list[int], float]]:
    """The schedule the built-in scheduler ran, as an outside scheduler
    logs it: one row per start (its StartBegin), with the start's nodes in
    order (res.placements; one start's rows are consecutive, a job's node
    count apart when it starts twice at one time)."""
    assert res.placements is not None
    need = {int(r["job"]): -(-int(r["gpus"]) // 8) for r in res.jobs}
    out: list[tuple[int, list[int], float]] = []
    for p in res.placements[res.placements["replica"] == replica]:
        j, t, n = int(p["job"]), float(p["time"]), int(p["node"])
        if out and out[-1][0] == j and out[-1][2] == t and len(out[-1][1]) < need[j]:
            out[-1][1].append(n)
        else:
            out.append((j, [n], t))
    ev = res.events[res.events["replica"] == replica]
    assert len(out) == int((ev["kind"] == 1).sum())  # one row per StartBegin
    if first_only:
        seen: set[int] = set()
        out = [r for r in out if not (r[0] in seen or seen.add(r[0]))]  # type: ignore[func-returns-value]
    return out


def replay_of(
    res: ace.SimulationResult, kw: dict[str, Any], replica: int, seed: int, **options: Any
) -> ace.SimulationResult:
    return ex.replay_schedule(
        logged_schedule(res, replica, options.pop("first_only", False)),
        kw["jobs"],
        kw["fleet"],
        causes=kw["causes"],
        policy=ace.Policy(quarantine=kw["policy"].quarantine),
        seed=seed,
        replica=replica,
        **options,
    )


def of_replica(a: Any, r: int) -> Any:
    return a[a["replica"] == r]


@pytest.mark.parametrize("replacement", [ace.Replacement.SPARES, ace.Replacement.WAIT_REPAIR])
@pytest.mark.parametrize("quarantine", [False, True])
@pytest.mark.parametrize("seed", range(2))
def test_schedule_replays_the_built_in_schedulers_log(
    replacement: ace.Replacement, quarantine: bool, seed: int
) -> None:
    """simulate's built-in scheduler logs every start (res.events StartBegin
    rows, res.placements' nodes). That log replayed with
    ``submit="job"`` (each job submitted at its Job.submit, the submits
    ascending so the model numbers the jobs as simulate does) gives
    byte-identical job rows, failure traces, node events and placements, on
    both replicas, horizon or none: row k of a job is the built-in's answer
    to its k-th interruption (failures, maintenance stops), taken at the
    same moment on the same nodes in the same order; a job queued at the
    horizon (no row) waits in the model's queue too."""
    for horizon in (math.inf, 3 * DAY):
        kw = built_in(replacement, quarantine)
        res = run(seed=seed, replicas=2, horizon=horizon, **kw)
        assert not np.any(res.events["kind"] == 9)  # no preemption in these runs
        assert res.fleet["failures"].min() > 5
        for r in (0, 1):
            again = replay_of(res, kw, r, seed, horizon=horizon, submit="job")
            assert same(of_replica(res.jobs, r), again.jobs)
            assert same(of_replica(res.trace, r), again.trace)
            assert same(of_replica(log_of(res), r), log_of(again))
            assert again.placements is not None
            assert same(of_replica(res.placements, r), again.placements)


@pytest.mark.parametrize("seed", range(3))
def test_schedule_of_first_starts_is_wait_repair(seed: int) -> None:
    """Only each job's first start: the replay restarts a failed job on
    the same nodes once they are back, which is what the built-in
    WAIT_REPAIR does while it never moves a job elsewhere: the same job
    rows, trace and node events (job-level failures left out: they blame a
    node by its place in the job's list, and WAIT_REPAIR puts a repaired
    node back at the end of the list while the replay keeps the last
    run's order). With quarantine WAIT_REPAIR does move jobs (it does not
    wait for a quarantined node), and the first starts alone cannot say
    where: the replay differs."""
    kw = built_in(ace.Replacement.WAIT_REPAIR, quarantine=False)
    res = run(seed=seed, **kw)
    again = replay_of(res, kw, 0, seed, submit="job", first_only=True)
    assert same(res.jobs, again.jobs) and same(res.trace, again.trace)
    assert same(log_of(res), log_of(again))
    assert int(res.jobs["restarts"].sum()) > 5

    kw = built_in(ace.Replacement.WAIT_REPAIR, quarantine=True)
    res = run(seed=seed, **kw)
    runs: dict[int, list[set[int]]] = {}
    for j, nodes, _ in logged_schedule(res, 0):
        runs.setdefault(j, []).append(set(nodes))
    assert any(r != rs[0] for rs in runs.values() for r in rs[1:])  # a job moved
    again = replay_of(res, kw, 0, seed, submit="job", first_only=True)
    assert not same(res.jobs, again.jobs)


def test_schedule_submitted_at_first_starts_drops_the_queue_wait() -> None:
    """The default: each job submitted at its first start. The jobs are
    numbered by first start (schedule_order); each row is the built-in's
    but for the time it queued: queue_wait 0, submit later and wall
    shorter by the built-in's queue_wait; every other bucket and count
    the same, and the same failures hit the same jobs."""
    kw = built_in(ace.Replacement.SPARES, quarantine=False)
    res = run(seed=1, **kw)
    schedule = logged_schedule(res, 0)
    again = replay_of(res, kw, 0, 1)
    order = ex.schedule_order(schedule, kw["jobs"], kw["fleet"])
    assert sorted(order) == list(range(17)) and order != list(range(17))
    waited = res.jobs["queue_wait"]
    assert np.count_nonzero(waited) > 3
    mine = again.jobs[np.argsort(order)]  # back in simulate's numbering
    assert np.all(mine["queue_wait"] == 0.0)
    assert np.array_equal(mine["submit"], res.jobs["submit"] + waited)
    assert np.allclose(mine["wall"], res.jobs["wall"] - waited, rtol=0, atol=1e-6)
    for name in (*BUCKETS[:5], "recovery_wait", "end", "failures", "restarts", "checkpoints"):
        assert np.array_equal(mine[name], res.jobs[name]), name
    relabel = np.array(order)
    assert np.array_equal(
        relabel[again.trace["job"][again.trace["job"] >= 0]],
        res.trace["job"][res.trace["job"] >= 0],
    )


def test_schedule_cannot_replay_a_preemption() -> None:
    """PREEMPT_LOWER's preemptions are stops the schedule does not hold
    (a row says where a run started, not that another job cut it short):
    where the built-in preempted, the victim keeps running in the replay
    and the preemptor's start waits for it; the replay never preempts. Where
    it did not, the replay is the built-in's, byte for byte."""
    kw = built_in(ace.Replacement.PREEMPT_LOWER, quarantine=False)
    seen = set()
    for seed in range(4):
        res = run(seed=seed, **kw)
        again = replay_of(res, kw, 0, seed, submit="job")
        assert not np.any(again.events["kind"] == 9)
        preempted = bool(np.any(res.events["kind"] == 9))
        assert same(res.jobs, again.jobs) is not preempted
        seen.add(preempted)
    assert seen == {False, True}


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ([(0, [0, 1])], r"schedule row 0: a row is \(job, nodes, start\)"),
        ([(0, [0, 1], 0.0), 5], "schedule row 1: a row must be a tuple or a dict, got int"),
        ([{"job": 0, "nodes": [0, 1]}], "schedule row 0: no 'start' field"),
        ([(0, [0, 9], 0.0)], "node 9 is outside the fleet's 4 nodes"),
        ([(0, [0, 0], 0.0)], "nodes names a node twice"),
        ([(0, [], 0.0)], "nodes is empty"),
        ([(0, [0, 1.5], 0.0)], "nodes must be node ids"),
        ([(0, [0, True], 0.0)], "nodes must be node ids"),
        ([(0, "0-a", 0.0)], "schedule row 0: nodes: '0-a' is not 'a-b'"),
        ([(0, "1-0", 0.0)], "ends before it starts"),
        ([(0, 7, 0.0)], "nodes must be a sequence of node ids or an interval-set"),
        ([(0, [0, 1], -1.0)], "start must be >= 0"),
        ([(0, [0, 1], NAN)], "start must be finite"),
        ([(0, [0, 1], "soon")], "start must be a number"),
        ([(0, [0, 1], 10.0, 5.0)], r"end \(5.0\) is before start \(10.0\)"),
        ([(0, [0, 1], 10.0, "late")], "end must be a number"),
        ([(3, [0, 1], 0.0)], r"job 3 is not in jobs \(2 jobs\)"),
        ([("x", [0, 1], 0.0)], "job must be an index into jobs"),
        ([(True, [0, 1], 0.0)], "job must be an index into jobs"),
        ([], "schedule: no rows"),
        ([(0, [0], 0.0)], r"schedule row 0 \(job 0\): start: job 0 needs 2 node\(s\), got 1"),
        ([(0, [0, 1], 0.0), (0, [2], 100 * HOUR)], r"schedule row 1 \(job 0\): .*needs 2"),
    ],
)
def test_schedule_errors_name_the_row(schedule: Any, message: str) -> None:
    with pytest.raises(ex.ScheduleError, match=message):
        ex.replay_schedule(schedule, two_jobs(), node_1_fails())


def test_schedule_errors(tmp_path: Any) -> None:
    fleet, jobs = node_1_fails(), two_jobs()
    path = tmp_path / "s.csv"
    path.write_text("job,start\n0,0\n")
    with pytest.raises(ex.ScheduleError, match="line 1: the header lacks the column 'nodes'"):
        ex.replay_schedule(path, jobs, fleet)
    path.write_text("job,nodes,start\n0,0-1,soon\n")
    with pytest.raises(ex.ScheduleError, match=r"s\.csv line 2: start must be a number"):
        ex.replay_schedule(path, jobs, fleet)
    with pytest.raises(ex.ScheduleError, match="the array lacks the field 'start'"):
        ex.replay_schedule(np.zeros(1, dtype=[("job", "i8"), ("nodes", "O")]), jobs, fleet)
    with pytest.raises(TypeError, match="must be a structured array"):
        ex.replay_schedule(np.zeros(3), jobs, fleet)
    with pytest.raises(ex.ScheduleError, match="job 'c' is not a key of jobs"):
        ex.replay_schedule([("c", [0, 1], 0.0)], {"a": jobs[0]}, fleet)
    with pytest.raises(TypeError, match="schedule must be a sequence of rows"):
        ex.replay_schedule(5, jobs, fleet)
    with pytest.raises(TypeError, match=r"jobs must be a sequence of acesim\.Job"):
        ex.replay_schedule([(0, [0, 1], 0.0)], 5, fleet)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"jobs\[1\] must be an acesim\.Job"):
        ex.replay_schedule([(0, [0, 1], 0.0)], [jobs[0], "j"], fleet)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="fleet must be a Fleet"):
        ex.replay_schedule([(0, [0, 1], 0.0)], jobs, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="submit must be one of"):
        ex.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, submit="now")  # type: ignore[arg-type]
    late = [ace.Job(16, HOUR, HOUR, submit=HOUR)]
    with pytest.raises(ex.ScheduleError, match=r"starts at 0\.0, before its Job\.submit"):
        ex.replay_schedule([(0, [0, 1], 0.0)], late, fleet, submit="job")
    with pytest.raises(ex.ScheduleError, match=r"job 0: .*needs 5 nodes"):
        ex.replay_schedule([(0, [0, 1, 2, 3], 0.0)], [ace.Job(40, HOUR, HOUR)], fleet)
    with pytest.raises(ex.ScheduleError, match="no job starts before the horizon"):
        ex.replay_schedule([(0, [0, 1], 2 * HOUR)], jobs, fleet, horizon=HOUR)
    retire = ace.Policy(quarantine=ace.Quarantine(1, DAY, math.inf))
    with pytest.raises(ValueError, match="pass a finite horizon"):
        ex.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, policy=retire)
    assert (
        ex.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, policy=retire, horizon=DAY).jobs.size
        == 1
    )
    assert issubclass(ex.ScheduleError, ValueError)


def test_schedule_that_deadlocks_is_named() -> None:
    """A on [0, 1] and B on [2, 3]; nodes 1 and 3 fail at 1.5 h. The
    schedule restarts A on [2, 0] and B on [0, 2]: each needs a node the
    other, waiting, holds. No job runs, no needed node is out of service:
    the replay cannot go on."""
    fleet = gaps_fleet(4, {1: [1.5 * HOUR], 3: [1.5 * HOUR]})
    schedule = [
        (0, [0, 1], 0.0),
        (1, [2, 3], 0.0),
        (0, [2, 0], HOUR),
        (1, [0, 2], HOUR),
    ]
    with pytest.raises(
        ex.ScheduleError, match=r"stuck at t=5400.0: job 0 waits for nodes \[2, 0\]"
    ):
        ex.replay_schedule(schedule, two_jobs(), fleet)


def test_schedule_waiting_for_a_retired_node_ends_at_the_horizon() -> None:
    """Node 1 is retired at its failure (1.5 h); A, with no later row,
    waits for it to the horizon (8 h): its row is closed there, QUEUED,
    recovery_wait 8 h - 1.5 h."""
    retire = ace.Policy(quarantine=ace.Quarantine(1, DAY, math.inf))
    res = ex.replay_schedule(
        [(0, [0, 1], 0.0)], two_jobs(), node_1_fails(), policy=retire, horizon=8 * HOUR
    )
    a = row_of(res, 0)
    assert res.jobs["status"].tolist() == [ace.JobStatus.QUEUED]
    assert (a["end"], a["recovery_wait"]) == (8 * HOUR, 6.5 * HOUR)


def test_restart_free_restarts_on_the_nodes_the_model_has_free() -> None:
    """restart="free": node 0 fails at 1.5 h (repair 1 h); the job restarts
    at once on its survivor 1 and the lowest free node, 2 (not waiting for
    node 0): recovery_wait 0, the 1,800 s since the last checkpoint wasted,
    done 1.5 h + 3 h later."""
    fleet = ace.Fleet(
        4, repair=ace.HOUR, node_failures=ace.NodeTrace.from_gaps({0: [1.5 * ace.HOUR]}, nodes=4)
    )
    jobs = [ace.Job(16, 4 * ace.HOUR, ace.HOUR, init=0.0, save=0.0, load=0.0)]
    res = ace.exports.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, restart="free")
    assert [float(res.jobs[b][0]) for b in ("end", "wasted", "recovery_wait")] == [
        16200.0,
        1800.0,
        0.0,
    ]
    assert res.placements["node"].tolist() == [0, 1, 1, 2]
    with pytest.raises(ValueError, match="restart must be"):
        ace.exports.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, restart="any")  # type: ignore[arg-type]


def test_restart_free_waits_the_schedulers_restart_delay() -> None:
    """restart="free" with a restart delay of 10 min: node 0 fails at 1.5 h
    (repair 1 h, so the job restarts on survivor 1 and free node 2); the job
    waits 600 s in recovery_wait before it restarts, and is done 600 s later
    than without the delay (16,200 + 600 s); the 1,800 s since the last
    checkpoint are wasted."""
    fleet = ace.Fleet(
        4, repair=ace.HOUR, node_failures=ace.NodeTrace.from_gaps({0: [1.5 * ace.HOUR]}, nodes=4)
    )
    jobs = [ace.Job(16, 4 * ace.HOUR, ace.HOUR, init=0.0, save=0.0, load=0.0)]
    res = ace.exports.replay_schedule(
        [(0, [0, 1], 0.0)], jobs, fleet, restart="free", restart_delay=600.0
    )
    assert [float(res.jobs[b][0]) for b in ("end", "wasted", "recovery_wait")] == [
        16800.0,
        1800.0,
        600.0,
    ]
    assert res.placements["time"].tolist() == [0.0, 0.0, 6000.0, 6000.0]


def test_restart_delay_is_the_jobs_replace_stream() -> None:
    """Each restart delay is the next draw of the job's "replace" stream:
    with job-level failures every 2 h of compute (work 5 h: two failures)
    and an exponential delay, the job's recovery_wait is exactly draws 0
    and 1 of that stream, whatever the seed's other draws."""
    fleet = ace.Fleet(2)
    jobs = [ace.Job(8, 5 * ace.HOUR, ace.HOUR, init=0.0, save=0.0, load=0.0)]
    law = ace.Exponential(300.0)
    res = ace.exports.replay_schedule(
        [(0, [0], 0.0)],
        jobs,
        fleet,
        ace.Constant(2 * ace.HOUR),
        [ace.Cause("crash", 1.0, node_down=False)],
        seed=7,
        replica=3,
        restart="free",
        restart_delay=law,
    )
    draws = law.sample(2, 7, ace.job_stream(0, "replace"), replica=3, gpus=8)
    assert int(res.jobs["failures"][0]) == 2
    assert float(res.jobs["recovery_wait"][0]) == pytest.approx(float(draws.sum()), abs=1e-9)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"restart_delay": 60.0}, "only with restart='free'"),
        ({"restart": "free", "restart_delay": -1.0}, "restart_delay"),
        ({"restart": "free", "restart_delay": "soon"}, "restart_delay"),
    ],
)
def test_restart_delay_is_checked(kw: dict[str, Any], match: str) -> None:
    jobs = [ace.Job(8, ace.HOUR, ace.HOUR)]
    with pytest.raises((ValueError, TypeError), match=match):
        ace.exports.replay_schedule([(0, [0], 0.0)], jobs, ace.Fleet(2), **kw)


def test_restart_free_takes_the_node_longest_since_its_last_failure() -> None:
    """Four nodes; the job (4 h of work, a checkpoint every hour, no
    overheads) runs on 0 and 1. Idle node 2 fails at 0.5 h (back at 1.5 h);
    node 0 fails at 2.5 h. Then 2 and 3 are free: the restart takes 3, never
    seen failing, as the built-in re-placement would, not the lower 2. The
    0.5 h since the 2 h checkpoint is wasted; done at 2.5 + 2 = 4.5 h."""
    fleet = ace.Fleet(
        4,
        repair=ace.HOUR,
        node_failures=ace.NodeTrace.from_times({2: [0.5 * ace.HOUR], 0: [2.5 * ace.HOUR]}, nodes=4),
    )
    jobs = [ace.Job(16, 4 * ace.HOUR, ace.HOUR, init=0.0, save=0.0, load=0.0)]
    res = ace.exports.replay_schedule([(0, [0, 1], 0.0)], jobs, fleet, restart="free")
    assert res.placements["node"].tolist() == [0, 1, 1, 3]
    assert res.placements["time"].tolist() == [0.0, 0.0, 2.5 * ace.HOUR, 2.5 * ace.HOUR]
    assert [float(res.jobs[b][0]) for b in ("end", "wasted", "recovery_wait")] == [
        4.5 * ace.HOUR,
        0.5 * ace.HOUR,
        0.0,
    ]
