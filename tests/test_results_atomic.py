"""Saves that a crash cannot tear, and files that say when they contradict
themselves (``acesim.results_io`` format version 2, the atomic-write
helper ``acesim._atomic``)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import io
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import acesim as ace
import acesim.cli
import atomic_child
import numpy as np
import pytest
from acesim import _atomic, results_io
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
    fresh = v1_result()
    # node_events as written then: without the quarantine rows' ``until``
    # column (this run has no quarantine, so the rows are the same)
    assert back.node_events is not None and fresh.node_events is not None
    old = back.node_events.dtype.names or ()
    assert "until" not in old and not fresh.fleet["quarantines"].any()
    for column in old:
        assert back.node_events[column].tobytes() == fresh.node_events[column].tobytes(), column
    assert_same(
        dataclasses.replace(back, node_events=None), dataclasses.replace(fresh, node_events=None)
    )
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


# --------------------------------------------------------------------------- contradictions


def small_result() -> ace.SimulationResult:
    """2 jobs of 8 GPUs whose first failure (a constant 10 days) comes after
    both end: 3 replicas, every row's ``wall`` positive."""
    jobs = [ace.Job(8, 2 * HOUR, HOUR, name="a"), ace.Job(8, HOUR, HOUR, name="b")]
    return ace.simulate(jobs, failures=ace.Constant(10 * DAY), replicas=3, seed=4)


def save_as(path: Path, res: ace.SimulationResult, **tables: object) -> None:
    """``res`` written with some tables (or the header's ``replicas``,
    ``seed``) replaced: a file whose parts contradict each other."""
    header = {
        "seed": tables.pop("seed", res.seed),
        "replicas": tables.pop("replicas", res.replicas),
    }
    data = {name: tables.get(name, getattr(res, name)) for name in TABLES}
    header["provenance"] = {"job_names": list(res.job_names)}
    results_io.save_tables(path, data, header, kind="acesim-result")


@pytest.mark.parametrize("suffix", FORMATS)
def test_tables_that_contradict_each_other_are_refused_naming_the_field(
    tmp_path: Path, suffix: str
) -> None:
    """Hand-made contradictions, each refused on load with the field named:
    a job's ettr of 1.5 (or NaN) where its wall is 2 h; a fleet ettr of -0.1
    where its gpu_hours are positive; the header's replicas 4 against a
    fleet table of 3 rows; 5 job rows for 3 replicas; 3 replicas x 2 job
    names against 3 job rows. The untouched result loads, and an ettr of
    NaN where the wall is 0 (a job that never ran) is accepted."""
    needs(suffix)
    res = small_result()
    assert res.jobs.shape == (6,) and bool(np.all(res.jobs["wall"] > 0))
    path = tmp_path / f"x{suffix}"
    save_as(path, res)
    assert_same(results_io.load_result(path), res)

    def refused(match: str, **tables: object) -> None:
        save_as(path, res, **tables)
        with pytest.raises(results_io.ResultFileError, match=match):
            results_io.load_result(path)

    jobs = res.jobs.copy()
    jobs["wall"][1], jobs["ettr"][1] = 7200.0, 1.5
    refused(r"jobs\.ettr is 1\.5 in row 1, where jobs\.wall is 7200\.0", jobs=jobs)
    jobs["ettr"][1] = np.nan
    refused(r"jobs\.ettr is nan in row 1", jobs=jobs)
    fleet = res.fleet.copy()
    fleet["ettr"][2] = -0.1
    refused(r"fleet\.ettr is -0\.1 in row 2, where fleet\.gpu_hours is", fleet=fleet)
    refused(r"replicas is 4 in the header, but the fleet table has 3 rows", replicas=4)
    refused(r"the jobs table has 5 rows, not a whole number per replica", jobs=res.jobs[:5])
    refused(r"jobs table has 3 rows, but replicas is 3 and provenance\.job_names names 2",
            jobs=res.jobs[::2])  # fmt: skip
    refused(r"replicas is 0 in the header, not an integer >= 1", replicas=0)
    idle = res.jobs.copy()
    idle["wall"][3], idle["ettr"][3] = 0.0, np.nan
    save_as(path, res, jobs=idle)
    assert math.isnan(results_io.load_result(path).jobs["ettr"][3])


def test_a_truncated_npz_is_a_named_error(tmp_path: Path) -> None:
    """Half an .npz (a copy cut short) is a ResultFileError naming the file
    and saying it may be truncated, never a raw ``BadZipFile``; so is an
    archive whose entry is damaged."""
    path = tmp_path / "x.npz"
    results_io.save_result(small_result(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        results_io.ResultFileError, match=r"x\.npz: not a readable \.npz file \(truncated"
    ):
        results_io.load_result(path)
    with pytest.raises(results_io.ResultFileError, match=r"x\.npz: not a readable"):
        results_io.load_provenance(path)


def test_a_listed_file_outside_the_folder_is_refused(tmp_path: Path) -> None:
    """The metadata names table files beside it only: ``../x`` or an
    absolute path is refused, naming the field, and nothing is read."""
    results_io.save_result(small_result(), tmp_path / "x.csv")
    meta_file = tmp_path / "x.provenance.json"
    meta = json.loads(meta_file.read_text())
    for bad in ("../x.jobs.csv", "/etc/passwd", ".hidden"):
        meta["files"]["fleet"]["file"] = bad
        meta_file.write_text(json.dumps(meta))
        with pytest.raises(results_io.ResultFileError, match=r"files\.fleet\.file must be a file"):
            results_io.load_result(tmp_path / "x.csv")


# --------------------------------------------------------------------------- outputs vs inputs

SCENARIO = """\
[run]
replicas = 2
seed = 1
[[jobs]]
gpus = 16
work = "6h"
checkpoint_interval = "1h"
[failures]
law = "empirical"
csv = "gaps.csv"
column = "inter_failure_s"
"""


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = acesim.cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_an_output_that_is_an_input_exits_2_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report x.npz -o x.npz``, ``report r.csv -o`` its metadata file or
    a table file it lists,
    ``fit h.jsonl --scenario h.jsonl``, ``run s.toml --out`` the CSV the
    scenario reads (also spelled another way), ``sweep`` onto it: exit 2,
    the option named, every file byte for byte as it was, nothing run."""
    monkeypatch.chdir(tmp_path)
    Path("gaps.csv").write_text("inter_failure_s\n3600\n7200\n20000\n")
    Path("s.toml").write_text(SCENARIO)
    Path("w.toml").write_text('base = "s.toml"\n[axes]\n"jobs[0].gpus" = [8, 16]\n')
    Path("h.jsonl").write_text('{"time": 0, "kind": "log_start"}\n')
    assert cli("run", "s.toml", "--out", "x.npz")[0] == 0
    assert cli("run", "s.toml", "--out", "r.csv")[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    Path("sub").mkdir()
    jobs = json.loads(Path("r.provenance.json").read_text())["files"]["jobs"]["file"]
    for argv, option in [
        (("report", "r.csv", "-o", jobs), f"-o {jobs}"),
        (("report", "x.npz", "-o", "x.npz"), "-o x.npz"),
        (("report", "x.npz", "r.csv", "-o", "r.provenance.json"), "-o r.provenance.json"),
        (("fit", "h.jsonl", "--scenario", "h.jsonl"), "--scenario h.jsonl"),
        (("run", "s.toml", "--out", "gaps.csv"), "--out gaps.csv"),
        (("run", "s.toml", "--out", "sub/../gaps.csv"), "--out sub/../gaps.csv"),
        (("sweep", "w.toml", "--out", "gaps.csv"), "--out gaps.csv"),
    ]:
        code, out, err = cli(*argv)
        assert code == 2, (argv, err)
        assert f"acesim: error: {option}" in err and "a file this command reads" in err
        assert "ETTR" not in out  # nothing ran
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_a_save_killed_in_a_real_command_keeps_the_previous_result(tmp_path: Path) -> None:
    """``acesim run --out r.csv`` killed by the switch at its 3rd step (the
    2nd table's first write) over an earlier save: the process dies by
    SIGKILL, and r.csv still loads as the earlier result."""
    (tmp_path / "gaps.csv").write_text("inter_failure_s\n3600\n7200\n20000\n")
    (tmp_path / "s.toml").write_text(SCENARIO)
    first = subprocess.run(
        [sys.executable, "-m", "acesim", "run", "s.toml", "--out", "r.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    before = results_io.load_result(tmp_path / "r.csv")
    env = {**os.environ, _atomic.KILL_AT: "3"}
    killed = subprocess.run(
        [sys.executable, "-m", "acesim", "run", "s.toml", "--out", "r.csv", "--seed", "9"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert_same(results_io.load_result(tmp_path / "r.csv"), before)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_save_removes_only_the_tables_the_old_metadata_listed(
    tmp_path: Path, suffix: str
) -> None:
    """A second save removes the first one's table files, and only those:
    a file the old metadata was edited to list (``keep.txt``), a file named
    like another table's, and a version-1 result's siblings of another stem
    stay. Over a version-1 result, its fixed-name siblings go."""
    needs(suffix)
    path = tmp_path / f"x{suffix}"
    first = results_io.save_result(small_result(), path)
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    other = tmp_path / f"y.fleet{suffix}"
    other.write_text("another result's")
    if suffix == ".csv":
        meta_file = tmp_path / "x.provenance.json"
        meta = json.loads(meta_file.read_text())
        meta["files"]["trace"] = {"file": "keep.txt", "bytes": 4, "sha256": "0" * 64}
        meta["files"]["events"] = {"file": other.name, "bytes": 1, "sha256": "0" * 64}
        meta_file.write_text(json.dumps(meta))
    second = results_io.save_result(small_result(), path)
    assert keep.read_text() == "mine" and other.is_file()
    tables = [f for f in first if f.name.count(".") == 3]
    assert tables and not any(f.exists() for f in tables)
    assert all(f.is_file() for f in second)
    # over version 1: its siblings (x.fleet.csv ...) removed, the rest kept
    for f in (DATA / "results_v1").glob(f"r*{suffix}"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    if suffix == ".csv":
        (tmp_path / "r.provenance.json").write_bytes(
            (DATA / "results_v1" / "r.provenance.json").read_bytes()
        )
    results_io.save_result(small_result(), tmp_path / f"r{suffix}")
    assert not (tmp_path / f"r.fleet{suffix}").exists()
    assert not (tmp_path / f"r.trace{suffix}").exists()
    assert keep.is_file() and other.is_file()
    assert_same(results_io.load_result(tmp_path / f"r{suffix}"), small_result())


# --------------------------------------------------------------------------- every writer


def test_every_writer_goes_through_the_atomic_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file acesim writes is put in place by ``_atomic.replace_file``
    (a temporary file beside it, fsynced, renamed; ``x.csv`` by
    ``_atomic.link_or_copy``, a link renamed the same way), in order: the
    results in every format (the CSV and Parquet metadata files; their
    tables are new files of ``_atomic.write_new``), the exports and history
    writers, a recorded trace, ``run --out``, ``sweep --results`` and
    ``--out``, ``report -o``, ``fit --scenario`` (``dump_scenario``) and
    ``demo --plot``. No temporary file is left behind."""
    pytest.importorskip("matplotlib")
    from acesim import history
    from acesim.exports import to_batsim_events, to_node_events
    from acesim.pytest_plugin import TraceRecorder

    replaced: list[str] = []
    real = _atomic.replace_file

    def spy(path: object, data: object) -> Path:
        replaced.append(Path(os.fspath(path)).name)  # type: ignore[call-overload]
        return real(path, data)  # type: ignore[arg-type]

    real_link = _atomic.link_or_copy

    def spy_link(source: Path, target: Path) -> None:
        replaced.append(target.name)
        real_link(source, target)

    monkeypatch.setattr(_atomic, "replace_file", spy)
    monkeypatch.setattr(_atomic, "link_or_copy", spy_link)
    monkeypatch.chdir(tmp_path)
    res = v1_result()
    for suffix in FORMATS:
        if suffix != ".parquet" or importlib.util.find_spec("pyarrow"):
            results_io.save_result(res, f"r{suffix}")
    to_node_events(res, path="n.csv")
    to_batsim_events(res, path="b.json")
    busy = ace.simulate(  # failures enough for a fit
        ace.Job(8, 4 * DAY, HOUR),
        fleet=ace.Fleet(4, repair=ace.Constant(HOUR), node_failures=ace.Exponential(8 * HOUR)),
        record_events=True,
        seed=1,
    )
    history.write_events(busy, "e.jsonl")
    history.write_sacct(busy, "s.txt")
    TraceRecorder(tmp_path, "t.py::test", record=False)(res, nodes=4)
    Path("gaps.csv").write_text("inter_failure_s\n3600\n7200\n20000\n")
    Path("s.toml").write_text(SCENARIO)
    Path("w.toml").write_text('base = "s.toml"\n[axes]\n"jobs[0].gpus" = [8, 16]\n')
    Path("points").mkdir()
    assert cli("run", "s.toml", "--out", "o.npz")[0] == 0
    assert cli("sweep", "w.toml", "--out", "g.csv", "--results", "points")[0] == 0
    assert cli("report", "o.npz", "-o", "report.html")[0] == 0
    assert cli("fit", "e.jsonl", "--scenario", "fitted.toml")[0] == 0
    assert cli("demo", "--replicas", "20", "--plot", "demo.png")[0] == 0
    parquet = ["r.parquet"] if "r.parquet" in replaced else []
    assert (
        replaced
        == [
            "r.npz",
            *parquet,
            "r.provenance.json",
            "r.csv",  # a hard link to the listed jobs table (link_or_copy)
            "r.json",
            "n.csv",
            "b.json",
            "e.jsonl",
            "s.txt",
            f"t.test.{hashlib.sha256(b't.py::test').hexdigest()[:8]}.npz",
            "o.npz",
            "point-0.npz",
            "point-1.npz",
            "g.provenance.json",
            "g.csv",
            "report.html",
            "fitted.toml",
            "demo.png",
        ]
    )
    left = [p.name for p in tmp_path.rglob(".*")]
    assert left == []


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    """A save over an existing file keeps that file's permission bits
    (0o640 stays 0o640); a new file gets the usual ones (0o666 less the
    umask), not a temporary file's 0o600."""
    path = tmp_path / "x.json"
    results_io.save_result(small_result(), path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    results_io.save_result(small_result(), path)
    assert path.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_renamed_result_still_loads(tmp_path: Path, suffix: str) -> None:
    """A result renamed by hand (``x.parquet`` to ``y.parquet``; ``x.csv``
    and ``x.provenance.json`` to ``y.*``) loads: its metadata lists its
    tables by their file names. A save onto ``y`` then leaves the listed
    ``x.*`` tables alone (not of its own names) and writes its own."""
    needs(suffix)
    res = small_result()
    files = results_io.save_result(res, tmp_path / f"x{suffix}")
    for f in files:
        if f.name in (f"x{suffix}", "x.provenance.json"):
            f.rename(f.with_name("y" + f.name[1:]))
    assert_same(results_io.load_result(tmp_path / f"y{suffix}"), res)
    tables = [f for f in files if f.name.count(".") == 3]
    results_io.save_result(res, tmp_path / f"y{suffix}")
    assert all(f.is_file() for f in tables)
    assert_same(results_io.load_result(tmp_path / f"y{suffix}"), res)
