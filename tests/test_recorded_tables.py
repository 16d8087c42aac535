"""Recorded tables: the 45 scenarios of test_recorded_results, value by value.

The hashes of test_recorded_results prove a change moved nothing, bit for
bit. A change of the engine's arithmetic that is meant to move numbers only
by rounding (the order of additions) re-records those hashes; these tables,
recorded before it, bound what it may move:

- every float field within 1e-12 x that row's ``wall`` of the recorded value
  for job rows, within 1e-12 x the run's span (its fleet row's
  ``makespan``) for fleet, trace and event rows;
- every count, index, flag and status equal;
- the accounting identity (the time buckets add up to ``wall``) as exact as
  it was recorded: a row whose buckets summed to ``wall`` exactly still does,
  and every row's sum is within 1e-12 x ``wall`` of it.

Columns that measure the engine's work (``heap_events``) are not results and
are not compared. Recorded (one compressed ``.npz`` per scenario under
``tests/data/recorded_tables/``) with

    ACESIM_RECORD=1 python -m pytest tests/test_recorded_tables.py
"""

from __future__ import annotations

import os
from pathlib import Path

import acesim as ace
import numpy as np
import pytest
from acesim.simulation import BUCKETS
from hand_cases import WORK_COLUMNS
from test_recorded_results import SCENARIOS

FOLDER = Path(__file__).with_name("data") / "recorded_tables"
TABLES = ("jobs", "fleet", "trace", "events")
REL = 1e-12


def _tables(res: ace.SimulationResult) -> dict[str, np.ndarray]:
    out = {}
    for table in TABLES:
        array = getattr(res, table)
        if array is None or not len(array):
            continue
        names = [
            n for n in array.dtype.names or () if n not in WORK_COLUMNS and not n.startswith("pad")
        ]
        # Packed: only the named fields, no padding bytes.
        packed = np.empty(len(array), dtype=[(n, array.dtype[n]) for n in names])
        for n in names:
            packed[n] = array[n]
        out[table] = packed
    return out


def _span(fleet: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """Each row's run span: its replica's fleet makespan."""
    by_replica = dict(zip(fleet["replica"].tolist(), fleet["makespan"].tolist(), strict=True))
    return np.array([by_replica[int(r)] for r in replicas], dtype=float)


def _bucket_sum(rows: np.ndarray) -> np.ndarray:
    return sum(rows[b] for b in BUCKETS)  # type: ignore[return-value]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_recorded_tables(name: str) -> None:
    got = _tables(ace.simulate(**SCENARIOS[name]))
    path = FOLDER / f"{name}.npz"
    if os.environ.get("ACESIM_RECORD"):
        FOLDER.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **got)  # type: ignore[arg-type]
        pytest.skip(f"recorded {name} to {path}")
    with np.load(path, allow_pickle=False) as stored:
        expected = {k: stored[k] for k in stored.files}
    assert sorted(got) == sorted(expected)
    fleet = expected["fleet"]  # (every run has fleet rows, the single-job path's too)
    for table, want in expected.items():
        have = got[table]
        assert have.dtype.names == want.dtype.names, table
        assert len(have) == len(want), table
        if table == "jobs":
            scale = np.abs(want["wall"])
        else:
            scale = _span(fleet, want["replica"])
        for field in want.dtype.names or ():
            a, b = have[field], want[field]
            if a.dtype.kind == "f":
                both_inf = np.isinf(b) & (a == b)
                err = np.where(both_inf, 0.0, np.abs(a - b))
                bad = ~(err <= REL * scale)
                assert not bad.any(), (
                    f"{table}.{field}: rows {np.flatnonzero(bad)[:5].tolist()} moved "
                    f"by {err[bad][:5].tolist()}"
                )
            else:
                assert np.array_equal(a, b), f"{table}.{field}"
    jobs, want_jobs = got["jobs"], expected["jobs"]
    exact = _bucket_sum(want_jobs) == want_jobs["wall"]
    assert np.array_equal(_bucket_sum(jobs)[exact], jobs["wall"][exact])
    assert np.all(np.abs(_bucket_sum(jobs) - jobs["wall"]) <= REL * jobs["wall"])
