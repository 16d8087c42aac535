"""Saves that a crash cannot tear, and files that say when they contradict
themselves (``acesim.results_io`` format version 2, the atomic-write
helper ``acesim._atomic``)."""

from __future__ import annotations

import json
from pathlib import Path

import acesim as ace
import pytest
from acesim import results_io
from acesim.simulation import TABLES

HOUR, DAY = 3600.0, 86400.0
FORMATS = (".npz", ".parquet", ".csv", ".json")
DATA = Path(__file__).parent / "data"


def needs(suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")


def v1_result() -> ace.SimulationResult:
    """The run the version-1 fixtures under ``tests/data/results_v1`` hold
    (saved by acesim 0.1 with ``save_result(res, "r" + suffix)``): 4 nodes,
    2 jobs, 2 replicas, the event log on."""
    fleet = ace.Fleet(
        4, spares=1, repair=ace.Constant(2 * HOUR), node_failures=ace.Exponential(DAY)
    )
    jobs = [ace.Job(8, 12 * HOUR, HOUR, name="a"), ace.Job(8, 6 * HOUR, HOUR, name="b")]
    return ace.simulate(jobs, fleet=fleet, replicas=2, seed=7, record_events=True, horizon=2 * DAY)


def assert_same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    assert (a.seed, a.replicas, a.job_names) == (b.seed, b.replicas, b.job_names)
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype, name
            assert x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("suffix", FORMATS)
def test_version_1_files_still_load(suffix: str) -> None:
    """Files written before format version 2 (the tables at fixed sibling
    names, no sizes or hashes) load as they were written: every table's
    dtype and bytes equal a fresh run of the same arguments."""
    needs(suffix)
    path = DATA / "results_v1" / f"r{suffix}"
    if suffix == ".csv":
        meta = json.loads((DATA / "results_v1" / "r.provenance.json").read_text())
        assert meta["format_version"] == 1
    back = results_io.load_result(path)
    assert_same(back, v1_result())
    prov = results_io.load_provenance(path)
    assert prov is not None and prov["seed"] == 7 and prov["job_names"] == ["a", "b"]
