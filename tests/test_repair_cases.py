"""Repair pipelines, misdiagnosis, permanent retirement and job status,
against figures worked out by hand (issue 7, section 3), plus statistical
checks against closed forms.

Semantics asserted (see ``acesim.Repair`` and ``acesim.Quarantine``):

- A node that a failure leaves in service (a cause with ``node_down=False``,
  or the faulty node of a misdiagnosed failure) keeps its renewal process:
  its next gap counts from the failure.

Hand cases use constant laws only (init, save and load explicitly zero),
failures placed with ``NodeTrace.from_gaps``, and times that never tie with
a checkpoint. Every run checks the engine's invariants and the accounting
identity of every job row.
"""

from __future__ import annotations

from typing import Any

import acesim as ace
import numpy as np
import pytest

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0

BUCKETS = (
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "queue_wait",
    "recovery_wait",
)

ZERO = ace.Constant(0.0)


def run(jobs: Any, **kwargs: Any) -> ace.SimulationResult:
    """``ace.simulate`` with the invariant checks on, then the accounting
    identity and non-negative buckets on every job row."""
    kwargs.setdefault("threads", 1)
    res = ace.simulate(jobs, check_invariants=True, **kwargs)
    rows = res.jobs
    assert rows.size > 0
    total = sum(rows[b] for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-12, atol=1e-6)
    for b in BUCKETS:
        assert np.all(rows[b] >= 0.0), b
    return res


def job(nodes: int, work: float, interval: float = HOUR, **kwargs: Any) -> ace.Job:
    """A whole-node job with zero init, save and load."""
    return ace.Job(8 * nodes, work, interval, init=ZERO, save=ZERO, load=ZERO, **kwargs)


def trace_fleet(
    nodes: int, gaps: dict[int, list[float]], repair: Any = HOUR, spares: int = 0
) -> ace.Fleet:
    """A fleet whose nodes fail at the given gaps (node -> gaps) only."""
    return ace.Fleet(
        nodes,
        spares=spares,
        repair=ace.Constant(repair) if isinstance(repair, float | int) else repair,
        node_failures=ace.NodeTrace.from_gaps(gaps, nodes=nodes),
    )


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
