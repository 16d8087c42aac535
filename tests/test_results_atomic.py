"""Saves that a crash cannot tear, and files that say when they contradict
themselves (``acesim.results_io`` format version 2, the atomic-write
helper ``acesim._atomic``)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import acesim as ace
import atomic_child
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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker forks a child per step")
def test_a_save_killed_at_any_step_loses_nothing(tmp_path: Path) -> None:
    """In every format, a save of a new result (3 replicas, seed 2) over an
    old one (2 replicas, seed 1) killed with SIGKILL at its k-th write,
    fsync, replace, link or remove, for every k up to the first past its
    last step: the file then loads, without an error, as the old result or
    as the new one, bit for bit, never a mix. Both occur in every format
    (the kill points span the step that makes the new one current), and the
    save that runs to the end gives the new one."""
    suffixes = [s for s in FORMATS if s != ".parquet" or importlib.util.find_spec("pyarrow")]
    worker = Path(__file__).with_name("atomic_child.py")
    proc = subprocess.run(
        [sys.executable, str(worker), str(tmp_path), *suffixes],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).parent,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout.splitlines()[-1])
    old, new = atomic_child.results()
    for suffix in suffixes:
        seen = []
        for k, how in runs[suffix]:
            back = results_io.load_result(tmp_path / suffix.lstrip(".") / str(k) / f"x{suffix}")
            which = "new" if back.replicas == 3 else "old"
            assert_same(back, new if which == "new" else old)
            seen.append((how, which))
        assert seen[-1] == ("done", "new"), suffix
        killed = {which for how, which in seen if how == "killed"}
        assert killed == {"old", "new"}, (suffix, seen)
        assert len(seen) >= 4, (suffix, seen)
