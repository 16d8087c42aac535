"""Helpers shared by the hand-computed test files (test_fleet_node_cases,
test_repair_cases, test_cold_spares_cases, test_fleet_preemption_cases,
test_node_clock_cases) and by test_fleet.

Imported as a plain module (``from hand_cases import ...``): pytest puts
``tests/`` on ``sys.path`` for the test files there, as for ``workers`` and
``fleet_reference``.

What each helper checks:

- :func:`assert_accounting`: a job table has rows; on every row the time
  buckets (acesim's ``BUCKETS``) add up to ``wall`` (to ``rtol``/``atol``); no
  bucket is negative.
- :func:`model_bytes`: a table's named fields as bytes, without padding and
  without the columns that measure the engine's work (``heap_events``), for
  comparing runs, copies and runs on different paths.
- :func:`assert_fleet_totals`: each replica's fleet row counts exactly the
  planned interruptions and the failures of that replica's job rows.
- :func:`run`: ``ace.simulate`` with ``check_invariants=True`` (one thread
  unless given), then :func:`assert_accounting` on the job rows, and
  :func:`assert_fleet_totals` when asked (``fleet_totals=True``).

The builders check nothing: :func:`job` (a whole-node job, init, save and
load zero unless given), :func:`trace_fleet` (a fleet whose nodes fail only
at given gaps), :func:`rows_of` (trace rows as plain tuples) and
:func:`placement` (the nodes each job holds at a moment, found by probes).
"""

from __future__ import annotations

from typing import Any

import acesim as ace
import numpy as np
from acesim.simulation import BUCKETS

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0

#: Columns that measure the engine's work, not the model: they differ between
#: paths that give the same results (the event log on or off, the single-job
#: kernel or the event heap, invariant checks).
WORK_COLUMNS = ("heap_events",)


def model_bytes(table: np.ndarray) -> bytes:
    """The table's named fields, field by field, without its
    :data:`WORK_COLUMNS`: what two runs of the same model must share, on any
    path. (Not its padding: numpy leaves a copy's padding bytes
    uninitialized, the core's are zero; a view of some fields gives those.)"""
    names = [
        n for n in table.dtype.names or () if n not in WORK_COLUMNS and not n.startswith("pad")
    ]
    return b"".join(np.ascontiguousarray(table[n]).tobytes() for n in names)


ZERO = ace.Constant(0.0)


def assert_accounting(rows: np.ndarray, *, rtol: float = 1e-12, atol: float = 1e-6) -> None:
    """The job table is not empty; on every row the buckets sum to ``wall``
    (``np.testing.assert_allclose`` with ``rtol``/``atol``); no bucket is
    negative."""
    assert rows.size > 0
    total = sum(rows[b] for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=rtol, atol=atol)
    for b in BUCKETS:
        assert np.all(rows[b] >= 0.0), b


def assert_fleet_totals(res: ace.SimulationResult) -> None:
    """Each replica's fleet row counts exactly the planned interruptions and
    the failures of that replica's job rows."""
    rows = res.jobs
    for f in res.fleet:
        mine = rows[rows["replica"] == f["replica"]]
        assert f["planned_interruptions"] == mine["planned_interruptions"].sum()
        assert f["failures"] == mine["failures"].sum()


def run(jobs: Any, *, fleet_totals: bool = False, **kwargs: Any) -> ace.SimulationResult:
    """``ace.simulate`` with the invariant checks on (``threads=1`` unless
    given), then :func:`assert_accounting` on the job rows, and with
    ``fleet_totals`` :func:`assert_fleet_totals` too."""
    kwargs.setdefault("threads", 1)
    res = ace.simulate(jobs, check_invariants=True, **kwargs)
    assert_accounting(res.jobs)
    if fleet_totals:
        assert_fleet_totals(res)
    return res


def job(nodes: int, work: float, interval: float = HOUR, **kwargs: Any) -> ace.Job:
    """A whole-node job (8 GPUs a node); init, save and load zero unless
    given."""
    for law in ("init", "save", "load"):
        kwargs.setdefault(law, ZERO)
    return ace.Job(8 * nodes, work, interval, **kwargs)


def trace_fleet(
    nodes: int,
    gaps: dict[int, list[float]],
    repair: float | ace.Distribution | ace.Repair = HOUR,
    spares: int = 0,
    **kwargs: Any,
) -> ace.Fleet:
    """A fleet whose nodes fail at the given gaps (node -> gaps) only.
    ``repair`` is seconds (a constant repair), a distribution or a repair
    pipeline; other keywords go to ``ace.Fleet``."""
    return ace.Fleet(
        nodes,
        spares=spares,
        repair=repair,
        node_failures=ace.NodeTrace.from_gaps(gaps, nodes=nodes),
        **kwargs,
    )


def rows_of(trace: np.ndarray, *fields: str) -> list[tuple[Any, ...]]:
    """The given fields of each trace row, as plain Python tuples."""
    return [tuple(r[f].item() for f in fields) for r in trace]


def placement(jobs: list[ace.Job], nodes: int, at: float, spares: int = 0) -> list[list[int]]:
    """The nodes each job holds just before ``at`` (no failure happens
    earlier), found by probe runs that fail one node at ``at`` and read which
    job the failure hit (an idle node or hot spare hits none)."""
    held: list[list[int]] = [[] for _ in jobs]
    for n in range(nodes):
        probe = ace.simulate(
            jobs,
            fleet=trace_fleet(nodes, {n: [at]}, repair=HOUR, spares=spares),
            horizon=at + 1.0,
            check_invariants=True,
            threads=1,
        )
        for j in probe.trace["job"][probe.trace["time"] == at]:
            if j >= 0:
                held[int(j)].append(n)
    return held
