"""Results to files and back (``acesim.results_io``): every format gives
back arrays equal to ``simulate``'s, dtype and bytes, with the provenance."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import results_io
from acesim.provenance import reproduce
from acesim.simulation import TABLES

HOUR, DAY = 3600.0, 86400.0
FORMATS = (".npz", ".parquet", ".csv", ".json")


def needs(suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")


def assert_same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    assert (a.seed, a.replicas) == (b.seed, b.replicas)
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype, name
            assert x.tobytes() == y.tobytes(), name


@pytest.fixture(scope="module")
def results() -> dict[str, ace.SimulationResult]:
    fleet = ace.Fleet(
        12, spares=1, repair=ace.Exponential(2 * HOUR), node_failures=ace.Weibull(0.7, 10 * DAY)
    )
    jobs = [ace.Job(32, 2 * DAY, HOUR, name="a"), ace.Job(16, DAY, "daly", submit=HOUR)]
    return {
        "alone": ace.simulate(ace.Job(1024, DAY, HOUR), replicas=7, seed=5),
        "fleet": ace.simulate(
            jobs,
            fleet=fleet,
            causes=ace.LLAMA3_CAUSES,
            replicas=6,
            seed=2**64 - 1,
            record_events=True,
            horizon=5 * DAY,
        ),
    }


@pytest.mark.parametrize("suffix", FORMATS)
@pytest.mark.parametrize("case", ["alone", "fleet"])
def test_round_trip(
    tmp_path: Path, results: dict[str, ace.SimulationResult], suffix: str, case: str
) -> None:
    needs(suffix)
    res = results[case]
    path = tmp_path / f"x{suffix}"
    files = results_io.save_result(res, path, provenance={"note": "by hand", "n": [1, 2]})
    assert files[0] == path and all(f.is_file() for f in files)
    back = results_io.load_result(path)
    assert_same(back, res)
    assert results_io.load_provenance(path) == {"note": "by hand", "n": [1, 2]}
    # the method forms
    res.save(tmp_path / f"y{suffix}")
    assert_same(ace.SimulationResult.load(tmp_path / f"y{suffix}"), res)


def test_layouts(tmp_path: Path, results: dict[str, ace.SimulationResult]) -> None:
    res = results["fleet"]
    csv = results_io.save_result(res, tmp_path / "r.csv")
    side = json.loads((tmp_path / "r.provenance.json").read_text())
    token = side["files"]["jobs"]["file"].split(".")[2]
    assert [f.name for f in csv] == [
        "r.csv",
        f"r.jobs.{token}.csv",
        f"r.fleet.{token}.csv",
        f"r.trace.{token}.csv",
        f"r.events.{token}.csv",
        f"r.placements.{token}.csv",
        f"r.node_events.{token}.csv",
        "r.provenance.json",
    ]
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(f.name for f in csv)
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / f"r.jobs.{token}.csv").read_bytes()
    header = (tmp_path / "r.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["replica", "job", "gpus"]
    assert (tmp_path / f"r.trace.{token}.csv").read_text().splitlines()[0].split(",") == [
        "replica",
        "event",
        "job",
        "node",
        "origin",
        "cause",
        "source",
        "time",
        "inter_failure",
    ]  # fmt: skip  (no padding field)
    assert side["format"] == "acesim-result" and side["main"] == "jobs"
    assert side["format_version"] == 2
    assert side["tables"]["trace"]["rows"] == res.trace.shape[0]
    assert side["provenance"]["acesim_version"] == ace.__version__
    # a result without failures: empty tables are not written beside it
    alone = results["alone"]
    files = [f.name for f in results_io.save_result(alone, tmp_path / "a.csv")]
    assert [f.split(".")[1] for f in files] == ["csv", "jobs", "fleet", "trace", "provenance"]
    # a second save lists new files and removes the ones the first listed
    again = [f.name for f in results_io.save_result(alone, tmp_path / "a.csv")]
    assert set(again).isdisjoint(files[1:4])
    assert not any((tmp_path / f).exists() for f in files[1:4])
    results_io.save_result(alone, tmp_path / "a.json")
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["records"]["jobs"][0]["replica"] == 0 and doc["records"]["events"] == []
    assert doc["seed"] == 5 and doc["replicas"] == 7


def test_floats_integers_and_missing_tables_survive(tmp_path: Path) -> None:
    """The text formats keep every float bit (both NaNs, infinities,
    subnormals, the shortest repr), the largest integers, and a result
    without the event-log tables."""
    base = ace.simulate(ace.Job(8, HOUR, 600.0), replicas=6, seed=1)
    jobs, fleet = copy(base.jobs), copy(base.fleet)
    jobs["mtbf"] = [math.inf, -math.inf, math.nan, -math.nan, 5e-324, 0.1]
    jobs["expected_ettr"] = [1 / 3, -0.0, 1e308, 2.0**-1074, 123456789.123456789, -1.5]
    jobs["submit"][0] = np.frombuffer(np.uint64(0x7FF8000000000000).tobytes(), np.float64)[0]
    fleet["events"] = [2**64 - 1, 0, 1, 2, 3, 4]
    res = dataclasses.replace(base, jobs=jobs, fleet=fleet, placements=None, node_events=None)
    assert np.signbit(res.jobs["mtbf"][3]) and not np.signbit(res.jobs["mtbf"][2])
    for suffix in FORMATS:
        if suffix == ".parquet" and not _has_pyarrow():
            continue
        path = tmp_path / f"f{suffix}"
        results_io.save_result(res, path)
        back = results_io.load_result(path)
        assert_same(back, res)
        assert back.placements is None and back.node_events is None
    text = (tmp_path / "f.json").read_text()
    json.loads(text, parse_constant=_refuse)  # strict JSON: no NaN or Infinity tokens
    assert '"-nan"' in text and '"inf"' in text


def copy(array: np.ndarray) -> np.ndarray:
    """A copy with the padding bytes zero, as the simulator writes them
    (``ndarray.copy`` copies a structured array field by field and leaves
    them undefined)."""
    out = np.zeros(array.shape, array.dtype)  # zeroed memory (zeros_like fills field by field)
    for name in array.dtype.names or ():
        out[name] = array[name]
    assert out.tobytes() == array.tobytes()
    return out


def _refuse(token: str) -> Any:
    raise AssertionError(f"non-standard JSON token {token}")


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def test_default_provenance_is_the_results_and_reproduces_it(tmp_path: Path) -> None:
    res = ace.simulate(ace.Job(8, HOUR, 600.0, name="j"), replicas=2, seed=3)
    for suffix in (".json", ".npz", ".csv"):
        results_io.save_result(res, tmp_path / f"p{suffix}")
        prov = results_io.load_provenance(tmp_path / f"p{suffix}")
        assert prov is not None
        assert set(prov) == set(res.provenance) | {"created"}
        assert (prov["seed"], prov["replicas"]) == (3, 2)
        back = results_io.load_result(tmp_path / f"p{suffix}")
        assert back.job_names == ("j",)
        assert {k: v for k, v in back.provenance.items() if k != "created"} == res.provenance
        again = reproduce(back.provenance)
        assert again.jobs.tobytes() == res.jobs.tobytes()


def test_scenario_provenance(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        "[run]\nreplicas = 3\n[[jobs]]\ngpus = 8\nwork = '2h'\ncheckpoint_interval = 600\n"
    )
    s = ace.load_scenario(path)
    res = s.run()
    results_io.save_result(res, tmp_path / "s.npz", provenance=s.provenance(res))
    prov = results_io.load_provenance(tmp_path / "s.npz")
    assert prov is not None
    assert prov["scenario"] == s.to_dict() and prov["source"] == str(path.resolve())
    assert ace.Scenario.from_dict(prov["scenario"]).run().jobs.tobytes() == res.jobs.tobytes()


def test_generic_tables(tmp_path: Path) -> None:
    table = np.zeros(3, [("point", np.int64), ("axis", "U8"), ("ok", np.bool_), ("x", np.float32)])
    table["point"] = [0, 1, -(2**63)]
    table["axis"] = ["young", "1h", "é"]
    table["ok"] = [True, False, True]
    table["x"] = [0.1, np.nan, np.inf]
    for suffix in FORMATS:
        if suffix == ".parquet" and not _has_pyarrow():
            continue
        path = tmp_path / f"g{suffix}"
        results_io.save_tables(path, {"points": table}, {"provenance": {"a": 1}}, kind="k")
        tables, meta = results_io.load_tables(path, kind="k")
        assert tables["points"] is not None
        assert tables["points"].dtype == table.dtype
        assert tables["points"].tobytes() == table.tobytes()
        assert meta["provenance"] == {"a": 1}
        with pytest.raises(results_io.ResultFileError, match="holds 'k', not 'acesim-result'"):
            results_io.load_result(path)


def test_errors(tmp_path: Path, results: dict[str, ace.SimulationResult]) -> None:
    res = results["fleet"]
    with pytest.raises(ValueError, match=r"the format comes from the suffix.*got '\.txt'"):
        results_io.save_result(res, tmp_path / "x.txt")
    with pytest.raises(TypeError, match="res must be a SimulationResult"):
        results_io.save_result(res.jobs, tmp_path / "x.npz")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="no such file"):
        results_io.load_result(tmp_path / "nope.npz")
    (tmp_path / "plain.json").write_text("[1, 2]")
    with pytest.raises(results_io.ResultFileError, match="is not a file acesim wrote"):
        results_io.load_result(tmp_path / "plain.json")
    (tmp_path / "plain.csv").write_text("a,b\n1,2\n")
    with pytest.raises(results_io.ResultFileError, match=r"no plain\.provenance\.json beside it"):
        results_io.load_result(tmp_path / "plain.csv")
    # a listed table changed since the save (x.csv is a hard link to the listed jobs file)
    results_io.save_result(res, tmp_path / "r.csv")
    other = results["alone"]
    results_io.save_result(other, tmp_path / "s.csv")
    (tmp_path / "s.csv").write_bytes((tmp_path / "r.csv").read_bytes())
    with pytest.raises(results_io.ResultFileError, match=r"s\.jobs\.\w+\.csv has \d+ bytes, the"):
        results_io.load_result(tmp_path / "s.csv")
    # a cell that is not a number (size and hash made to match: the parser still refuses it)
    results_io.save_result(other, tmp_path / "t.csv")
    meta_file = tmp_path / "t.provenance.json"
    meta = json.loads(meta_file.read_text())
    listed = tmp_path / meta["files"]["jobs"]["file"]
    data = listed.read_text().replace("\n0,0,1024,", "\nzero,0,1024,", 1).encode()
    listed.write_bytes(data)
    meta["files"]["jobs"].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(results_io.ResultFileError, match=r"t\.csv: jobs: column 'replica'"):
        results_io.load_result(tmp_path / "t.csv")


def test_parquet_siblings_and_missing_pyarrow(
    tmp_path: Path, results: dict[str, ace.SimulationResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    res = results["fleet"]
    files = results_io.save_result(res, tmp_path / "x.parquet")
    assert [f.name.split(".")[:2] for f in files][:3] == [
        ["x", "parquet"],
        ["x", "fleet"],
        ["x", "trace"],
    ]
    import pyarrow.parquet as pq

    meta = json.loads(pq.read_schema(tmp_path / "x.parquet").metadata[b"acesim"])
    assert meta["provenance"]["seed"] == 2**64 - 1
    with pytest.raises(results_io.ResultFileError, match="is the trace table of a saved result"):
        results_io.load_result(files[2])

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r'pip install "acesim\[parquet\]"'):
        results_io.save_result(res, tmp_path / "y.parquet")
    with pytest.raises(ImportError, match=r'pip install "acesim\[parquet\]"'):
        results_io.load_result(tmp_path / "x.parquet")
