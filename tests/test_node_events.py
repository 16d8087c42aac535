"""``res.node_events`` records every node state change the engine decides:
out of service after a failure (``DOWN``), back (``UP``), drained for
maintenance (``MAINTENANCE``), quarantined (``QUARANTINED``, with the
quarantine's end in ``until``) and retired (``RETIRED``, ``until`` inf).

Hand cases: 3 nodes, failures placed with ``NodeTrace.from_times``,
constant repairs; the rows are worked out in each docstring. A quarantine's
row follows the ``DOWN`` row of the same failure event (same node, time,
event and cause).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import exports
from acesim.history._result import result_log

K = ace.NodeEventKind
NONE = 0xFFFFFFFF  # the event column of rows that follow no failure


def rows(res: ace.SimulationResult, replica: int = 0) -> list[tuple[Any, ...]]:
    """(node, kind, event, cause, time, until) of one replica, in order;
    ``until`` None where it is NaN."""
    assert res.node_events is not None
    out = []
    for r in res.node_events[res.node_events["replica"] == replica]:
        until = float(r["until"])
        out.append(
            (
                int(r["node"]),
                K(int(r["kind"])),
                int(r["event"]),
                int(r["cause"]),
                float(r["time"]),
                None if math.isnan(until) else until,
            )
        )
    return out


def three_nodes(failures: dict[int, list[float]], **kwargs: Any) -> ace.Fleet:
    return ace.Fleet(
        3,
        repair=ace.Constant(3600.0),
        node_failures=ace.NodeTrace.from_times(failures, nodes=3),
        **kwargs,
    )


JOB = ace.Job(
    24,
    work=20 * ace.HOUR,
    checkpoint_interval=ace.HOUR,
    init=ace.Constant(60.0),
    save=ace.Constant(30.0),
    load=ace.Constant(60.0),
)


@pytest.fixture(scope="module")
def quarantined() -> ace.SimulationResult:
    policy = ace.Policy(
        replacement=ace.Replacement.WAIT_REPAIR, quarantine=ace.Quarantine(2, ace.DAY, 7200.0)
    )
    fleet = three_nodes({0: [5000.0], 1: [9000.0, 30000.0]}, maintenance=[(50000.0, 2000.0, [2])])
    return ace.simulate(JOB, fleet=fleet, policy=policy, replicas=1, seed=5, record_events=True)


def test_a_quarantine_by_hand(quarantined: ace.SimulationResult) -> None:
    """Quarantine(2 failures within a day, for 7,200 s), repairs 3,600 s,
    one job on all three nodes (it runs to 93,920 s, past every row).

    - node 0 fails at 5,000 (event 0): down, back at 8,600;
    - node 1 fails at 9,000 (event 1): down, back at 12,600;
    - node 1 fails again at 30,000 (event 2), 21,000 s after its first
      failure (within the day): its second failure in the window, so it is
      quarantined until 30,000 + 7,200 = 37,200; its repair would end at
      33,600, inside the quarantine: back at 37,200;
    - node 2 is drained for maintenance at 50,000 for 2,000 s: back at 52,000.
    """
    assert rows(quarantined) == [
        (0, K.DOWN, 0, -1, 5000.0, None),
        (0, K.UP, NONE, -1, 8600.0, None),
        (1, K.DOWN, 1, -1, 9000.0, None),
        (1, K.UP, NONE, -1, 12600.0, None),
        (1, K.DOWN, 2, -1, 30000.0, None),
        (1, K.QUARANTINED, 2, -1, 30000.0, 37200.0),
        (1, K.UP, NONE, -1, 37200.0, None),
        (2, K.MAINTENANCE, NONE, -1, 50000.0, None),
        (2, K.UP, NONE, -1, 52000.0, None),
    ]
    f = quarantined.fleet[0]
    assert (f["quarantines"], f["retired_nodes"]) == (1, 0)
    assert f["quarantined_node_hours"] == 2.0  # 30,000 .. 37,200


def test_a_retirement_by_hand() -> None:
    """Quarantine(2 failures within a day, for good), repairs 3,600 s, one
    8-GPU job; node 0 fails at 5,000 (event 0: down, back at 8,600) and at
    9,000 (event 1): its second failure within the day retires it. Its DOWN
    row, then its RETIRED row (``until`` inf), and no UP row ever. Retired
    from 9,000 to the end of the run (the job's end)."""
    policy = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, math.inf))
    job = ace.Job(8, work=5 * ace.HOUR, checkpoint_interval=ace.HOUR)
    res = ace.simulate(
        job,
        fleet=three_nodes({0: [5000.0, 9000.0]}),
        policy=policy,
        replicas=1,
        seed=5,
        record_events=True,
    )
    assert rows(res) == [
        (0, K.DOWN, 0, -1, 5000.0, None),
        (0, K.UP, NONE, -1, 8600.0, None),
        (0, K.DOWN, 1, -1, 9000.0, None),
        (0, K.RETIRED, 1, -1, 9000.0, math.inf),
    ]
    f = res.fleet[0]
    assert (f["quarantines"], f["retired_nodes"]) == (1, 1)
    end = float(res.jobs["end"][0])
    assert end > 9000.0
    assert f["quarantined_node_hours"] == pytest.approx((end - 9000.0) / ace.HOUR)


def test_a_failure_that_leaves_the_node_in_service_can_quarantine_it() -> None:
    """Every failure's cause leaves the node in service (``node_down=False``):
    node 0's first failure at 5,000 takes it nowhere (no row); its second at
    9,000 quarantines it (2 within a day) until 9,000 + 7,200 = 16,200: a DOWN
    row (the node leaves service), its QUARANTINED row (cause 0), and UP at
    16,200. The exports see one stretch out of service, 9,000 .. 16,200, and
    so does the history log."""
    policy = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, 7200.0))
    job = ace.Job(8, work=5 * ace.HOUR, checkpoint_interval=ace.HOUR)
    res = ace.simulate(
        job,
        fleet=three_nodes({0: [5000.0, 9000.0]}),
        policy=policy,
        causes=[ace.Cause("soft", 1.0, node_down=False)],
        replicas=1,
        seed=5,
        record_events=True,
    )
    assert rows(res) == [
        (0, K.DOWN, 1, 0, 9000.0, None),
        (0, K.QUARANTINED, 1, 0, 9000.0, 16200.0),
        (0, K.UP, NONE, -1, 16200.0, None),
    ]
    spells = exports.node_spells(res)
    assert [(s["node"], s["start"], s["end"], s["event"]) for s in spells] == [
        (0, 9000.0, 16200.0, 1)
    ]
    failures = exports.node_failures(res)
    assert [(f["event"], bool(f["down"]), float(f["up"])) for f in failures][1] == (
        1,
        True,
        16200.0,
    )
    assert result_log(res).spells == [(0, 9000.0, 16200.0, 0, True)]


def test_the_exports_read_the_quarantine_rows(quarantined: ace.SimulationResult) -> None:
    """Node 1's stretch from its quarantine at 30,000 ends at its UP row,
    37,200 (the quarantine row does not end or open a stretch); the history
    log has the same stretch."""
    text = exports.to_node_events(quarantined)
    assert "30000.0,1,2,1,1,-1,1,37200.0," in text
    spells = [
        (int(s["node"]), float(s["start"]), float(s["end"]))
        for s in exports.node_spells(quarantined)
    ]
    assert (1, 30000.0, 37200.0) in spells and len(spells) == 4
    assert (1, 30000.0, 37200.0, -1, True) in result_log(quarantined).spells


def test_a_quarantine_row_without_its_down_row_is_refused(
    quarantined: ace.SimulationResult,
) -> None:
    assert quarantined.node_events is not None
    table = quarantined.node_events
    keep = ~((table["kind"] == K.DOWN) & (table["event"] == 2))
    broken = dataclasses.replace(quarantined, node_events=table[keep])
    with pytest.raises(
        exports.ExportError, match=r"node 1 is quarantined at t=30000\.0 after failure event 2"
    ):
        exports.node_spells(broken)


def test_quarantine_rows_are_the_cores_counts_over_many_seeds() -> None:
    """Lemons, block causes (some leaving nodes in service), misdiagnosed
    repairs, maintenance, and quarantines for a while and for good: per
    replica, the QUARANTINED and RETIRED rows are the fleet's quarantines,
    the RETIRED rows its retired nodes; each follows the DOWN row of its
    node and failure event at the same time, and ``until`` is the time plus
    the quarantine's duration."""
    seen = np.zeros(2, dtype=np.int64)
    for seed, duration in enumerate([6 * ace.HOUR, math.inf, 0.0, ace.DAY]):
        fleet = ace.Fleet(
            12,
            spares=1,
            repair=ace.Repair(
                [ace.RepairStage(ace.LogNormal(8.0, 1.0), escalate=0.0, fix=0.9)],
                misdiagnosis=0.2,
            ),
            node_failures=ace.Exponential(2 * ace.DAY),
            maintenance=[(ace.DAY, 2 * ace.HOUR, [0, 1, 2])],
            lemon_fraction=0.25,
            lemon_factor=10.0,
        )
        jobs = [ace.Job(48, work=3 * ace.DAY, checkpoint_interval=ace.HOUR)]
        jobs += [ace.Job(8, work=6 * ace.HOUR, checkpoint_interval=ace.HOUR) for _ in range(6)]
        policy = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, duration))
        res = ace.simulate(
            jobs,
            fleet=fleet,
            policy=policy,
            causes=ace.LLAMA3_CAUSES,
            replicas=4,
            seed=seed,
            horizon=10 * ace.DAY,
            record_events=True,
        )
        assert res.node_events is not None
        for f in res.fleet:
            mine = res.node_events[res.node_events["replica"] == f["replica"]]
            q = np.flatnonzero(np.isin(mine["kind"], [K.QUARANTINED, K.RETIRED]))
            assert q.size == f["quarantines"]
            assert np.count_nonzero(mine["kind"] == K.RETIRED) == f["retired_nodes"]
            for i in q:
                row = mine[i]
                before = mine[:i]
                down = before[
                    (before["kind"] == K.DOWN)
                    & (before["node"] == row["node"])
                    & (before["event"] == row["event"])
                ]
                assert down.size == 1 and down["time"][0] == row["time"]
                assert down["cause"][0] == row["cause"]
                assert row["until"] == row["time"] + duration
                assert (row["kind"] == K.RETIRED) == math.isinf(duration)
            other = mine[~np.isin(mine["kind"], [K.QUARANTINED, K.RETIRED])]
            assert np.all(np.isnan(other["until"]))
            seen += (q.size, np.count_nonzero(mine["kind"] == K.RETIRED))
    assert np.all(seen > 0), seen  # quarantines and retirements both occur
