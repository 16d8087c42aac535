"""A result prints as a summary, and a row of its tables with its field
names (``repr`` of a :class:`SimulationResult`, :meth:`SimulationResult.row`)."""

from __future__ import annotations

import acesim as ace
import pytest

HOUR = 3600.0


def hand_result() -> ace.SimulationResult:
    """A 3-hour job, hourly 1-minute saves, a 2-minute load, failures every
    20000 s: it never fails; wall 120 + 3 x (3600 + 60) = 11100 s."""
    job = ace.Job(8, 3 * HOUR, HOUR, init=0.0, save=60.0, load=120.0, name="hand")
    return ace.simulate(job, ace.Constant(20000.0), replicas=2, seed=1)


def test_repr_is_a_summary() -> None:
    res = hand_result()
    assert repr(res) == (
        f"SimulationResult(1 job, 2 replicas, seed 1: ETTR {10800 / 11100:.4f}, "
        "0.00 failures/replica, completed 100.0%; rows: jobs 2, fleet 2)"
    )


def test_a_row_prints_with_its_field_names() -> None:
    res = hand_result()
    row = res.row(0, replica=1)
    assert (row["replica"], row["job"], row["gpus"], row["failures"]) == (1, 0, 8, 0)
    assert (row["wall"], row["productive"], row["checkpoints"]) == (11100.0, 10800.0, 3)
    assert repr(row).startswith("Row(replica=1, job=0, gpus=8, failures=0, ")
    assert "wall=11100.0" in repr(row) and "completed=True" in repr(row)
    with pytest.raises(ValueError, match="no row for job 1 in replica 0"):
        res.row(1)
    with pytest.raises(ValueError, match="replica"):
        res.row(0, replica=-1)
