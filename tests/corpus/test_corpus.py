"""The behaviour corpus: files written by the code as it was when they were
recorded, replayed against the code as it is (see ``README.md`` beside this
file). Each test is one entry, named in its test id, so a failure says which
entry moved.

- ``results/``: one result per results format (npz, csv, json, parquet), of
  a small fleet scenario (three jobs, spares, a staged repair, quarantine,
  causes, the event log), with its provenance. The old file loads into the
  result the code computes now (every table, dtype and bytes); the result
  re-written now has the same metadata (provenance included, table files'
  sizes and SHA-256) but for its creation time and, in the CSV and Parquet
  layouts, the names of its table files (8 hex digits of each save's own).
  And a result ``acesim run --out`` wrote, with the scenario file in its
  provenance.
- ``pickles/``: a pickle of every public model object (and of the results
  and the scenario), each loading into an object equal to the one made now.
- ``scenarios/``: ``dump_scenario`` of every scenario in ``examples/``,
  byte-equal.
- ``stdout/``: the standard output of ``acesim run`` on every example (the
  sweep and tune files through their own commands), ``acesim compare``,
  ``acesim sensitivity``, ``acesim demo``, ``acesim interval`` and
  ``acesim fit``, byte-equal after two normalisations: the paths of this
  checkout, of ``../shared/data`` and of the test's temporary folder are
  written as ``<root>``, ``<data>`` and ``<tmp>``; the demo's last line,
  the seconds it took, as ``done in <seconds> s``. No other command here
  prints a clock time or a measured duration.

The ``acesim serve --stdio`` transcripts and the ``FleetModel`` streams are
in ``tests/data`` and replayed by ``tests/test_recorded_streams.py``; the
recorded fleet hashes by ``tests/test_recorded_results.py``: they are part
of the corpus (``test_the_corpus_lists_the_recorded_streams`` checks they
are there).

Only public names and the command line are used, so the corpus outlives a
move of the modules inside the package. Regenerate with

    ACESIM_RECORD=1 python -m pytest tests/corpus

which rewrites every entry that moved and warns ``corpus entry moved:
<entry>`` for each; the commit names those entries and says why.
"""

from __future__ import annotations

import enum
import inspect
import io
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import DAY, HOUR, MINUTE
from acesim.provenance import describe

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parents[1]
EXAMPLES = ROOT / "examples"
DATA = ROOT.parent / "shared" / "data"
TESTS_DATA = ROOT / "tests" / "data"
RECORDING = os.environ.get("ACESIM_RECORD") == "1"

RESULTS = CORPUS / "results"
PICKLES = CORPUS / "pickles"
SCENARIOS = CORPUS / "scenarios"
STDOUT = CORPUS / "stdout"
INPUTS = CORPUS / "inputs"

TABLES = ("jobs", "fleet", "trace", "events", "placements", "node_events")


# ---------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------


def _record(path: Path, data: bytes) -> None:
    """Write one corpus file (atomically), warning when its bytes moved."""
    old = path.read_bytes() if path.is_file() else None
    if old is not None and old != data:
        warnings.warn(f"corpus entry moved: {path.relative_to(CORPUS)}", stacklevel=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _recorded(path: Path) -> bytes:
    if not path.is_file():
        pytest.fail(
            f"corpus entry {path.relative_to(CORPUS)} is missing: "
            "ACESIM_RECORD=1 python -m pytest tests/corpus"
        )
    return path.read_bytes()


# ---------------------------------------------------------------------------
# Results, one per format
# ---------------------------------------------------------------------------


def fleet_scenario() -> ace.SimulationResult:
    """Three jobs (one submitted later, one of higher priority) on nine
    nodes with two spares, Weibull node failures under two causes, a
    two-stage repair, quarantine, and the event log."""
    jobs = [
        ace.Job(
            32, 2 * DAY, HOUR, name="pretrain", save=ace.Constant(60.0), load=ace.Exponential(120.0)
        ),
        ace.Job(16, DAY, 2 * HOUR, name="finetune", submit=6 * HOUR, priority=1),
        ace.Job(8, 12 * HOUR, HOUR, name="eval", submit=12 * HOUR),
    ]
    fleet = ace.Fleet(
        9,
        spares=2,
        repair=ace.Repair(
            [ace.RepairStage(ace.Exponential(HOUR), escalate=0.3), ace.RepairStage(DAY)]
        ),
        node_failures=ace.Weibull(0.8, 3 * DAY),
    )
    policy = ace.Policy(ace.Replacement.SPARES, quarantine=ace.Quarantine(2, 3 * DAY, 2 * DAY))
    causes = [
        ace.Cause("hardware", 0.6, detect=ace.Constant(300.0)),
        ace.Cause("software", 0.4, node_down=False),
    ]
    return ace.simulate(
        jobs,
        fleet=fleet,
        policy=policy,
        causes=causes,
        replicas=3,
        seed=29,
        horizon=10 * DAY,
        record_events=True,
    )


RESULT_FORMATS = ("npz", "csv", "json", "parquet")


def _metadata(path: Path) -> dict[str, Any]:
    """The metadata a result file holds, read as the format documents it
    (acesim's own reader is what is under test)."""
    if path.suffix == ".npz":
        with np.load(path) as npz:
            meta: dict[str, Any] = json.loads(str(npz["acesim"]))
    elif path.suffix == ".json":
        meta = {k: v for k, v in json.loads(path.read_text()).items() if k != "records"}
    elif path.suffix == ".csv":
        meta = json.loads(path.with_name(path.stem + ".provenance.json").read_text())
    else:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        meta = json.loads(pq.read_schema(path).metadata[b"acesim"])
    return meta


def _comparable(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata less what each save makes its own: the time of writing
    and the names of the table files (their sizes and hashes stay)."""
    out: dict[str, Any] = json.loads(json.dumps(meta))
    out["provenance"].pop("created")
    for entry in (out.get("files") or {}).values():
        entry.pop("file")
    return out


def _result_files(fmt: str, where: Path) -> list[Path]:
    main = where / f"result.{fmt}"
    return sorted(p for p in where.iterdir() if p.name.startswith("result.") and p != main)


def _assert_same_tables(got: ace.SimulationResult, want: ace.SimulationResult, what: str) -> None:
    assert (got.seed, got.replicas, got.job_names) == (want.seed, want.replicas, want.job_names)
    for name in TABLES:
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), f"{what}: table {name}"
        if a is not None:
            assert a.dtype == b.dtype, f"{what}: table {name} dtype"
            assert a.tobytes() == b.tobytes(), f"{what}: table {name} rows"


def _same_files(new: Path, old: Path) -> bool:
    """Whether two saves of a result hold the same tables and metadata
    (but for the time of writing and the table files' names)."""
    try:
        _assert_same_tables(ace.SimulationResult.load(new), ace.SimulationResult.load(old), "")
    except (AssertionError, ValueError, OSError):
        return False
    return _comparable(_metadata(new)) == _comparable(_metadata(old))


def _record_result(res: ace.SimulationResult, path: Path, scratch: Path) -> None:
    """Save ``res`` at ``path`` unless the file there already holds it (a
    save's bytes differ each time by its creation time), warning when it
    moved. A file of an older format version is kept, as a load fixture, in
    ``results/v<version>/<format>/``."""
    scratch.mkdir(parents=True)
    res.save(scratch / path.name)
    if path.is_file() and _same_files(scratch / path.name, path):
        return
    if path.is_file():
        warnings.warn(f"corpus entry moved: {path.relative_to(CORPUS)}", stacklevel=2)
        old = _metadata(path)["format_version"]
        if old != _metadata(scratch / path.name)["format_version"]:
            keep = RESULTS / f"v{old}" / path.parent.name
            if not keep.exists():
                keep.parent.mkdir(exist_ok=True)
                path.parent.rename(keep)
    if path.parent.is_dir():
        shutil.rmtree(path.parent)
    path.parent.mkdir(parents=True)
    res.save(path)


@pytest.fixture(scope="module")
def fleet_result() -> ace.SimulationResult:
    return fleet_scenario()


@pytest.mark.parametrize("fmt", RESULT_FORMATS)
def test_result_files_load_and_rewrite_equal(
    fmt: str, fleet_result: ace.SimulationResult, tmp_path: Path
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    where = RESULTS / fmt
    if RECORDING:
        _record_result(fleet_result, where / f"result.{fmt}", tmp_path / "recording")
    old_file = where / f"result.{fmt}"
    _recorded(old_file)

    # The old file loads into the result computed now.
    loaded = ace.SimulationResult.load(old_file)
    _assert_same_tables(loaded, fleet_result, f"results/{fmt}")
    provenance = dict(loaded.provenance)
    assert "created" in provenance
    provenance.pop("created")
    assert provenance == fleet_result.provenance
    # ... and that provenance still rebuilds the run.
    again = ace.provenance.reproduce(loaded.provenance)
    _assert_same_tables(again, fleet_result, f"results/{fmt} reproduced")

    # Re-written now: the same metadata and tables as the old file.
    fleet_result.save(tmp_path / f"result.{fmt}")
    new_meta, old_meta = _metadata(tmp_path / f"result.{fmt}"), _metadata(old_file)
    assert _comparable(new_meta) == _comparable(old_meta)
    _assert_same_tables(ace.SimulationResult.load(tmp_path / f"result.{fmt}"), loaded, fmt)
    if fmt == "json":  # one document: the records too, but for the time of writing
        new_doc = json.loads((tmp_path / "result.json").read_text())
        old_doc = json.loads(old_file.read_text())
        for doc in (new_doc, old_doc):
            doc["provenance"].pop("created")
        assert new_doc == old_doc
    if fmt in ("csv", "parquet"):  # the same table files, by size and hash
        assert len(_result_files(fmt, tmp_path)) == len(_result_files(fmt, where))


#: A result ``acesim run --out`` wrote: its provenance holds the scenario file.
CLI_RESULT = RESULTS / "cli" / "run.npz"
CLI_RUN = ["run", "examples/causes.toml", "--replicas", "3", "--no-progress"]


def _cli_comparable(meta: dict[str, Any]) -> dict[str, Any]:
    """:func:`_comparable`, with the scenario file's path from the checkout."""
    out = _comparable(meta)
    source = out["provenance"].get("source")
    if isinstance(source, str):
        out["provenance"]["source"] = re.sub(r"^.*/(examples/[^/]+)$", r"<root>/\1", source)
    return out


def test_a_result_the_command_line_wrote_loads_and_rewrites_equal(tmp_path: Path) -> None:
    done = _acesim([*CLI_RUN, "--out", "<tmp>/run.npz"], tmp_path)
    assert done.returncode == 0, done.stderr
    new = tmp_path / "run.npz"
    if RECORDING:
        if CLI_RESULT.is_file():
            if _cli_comparable(_metadata(new)) != _cli_comparable(_metadata(CLI_RESULT)):
                warnings.warn(f"corpus entry moved: {CLI_RESULT.relative_to(CORPUS)}", stacklevel=1)
                _record(CLI_RESULT, new.read_bytes())
        else:
            _record(CLI_RESULT, new.read_bytes())
    _recorded(CLI_RESULT)
    _assert_same_tables(
        ace.SimulationResult.load(CLI_RESULT), ace.SimulationResult.load(new), "results/cli"
    )
    assert _cli_comparable(_metadata(new)) == _cli_comparable(_metadata(CLI_RESULT))


def test_results_of_older_formats_still_load(fleet_result: ace.SimulationResult) -> None:
    """A result file of an older format version (kept when the format moved
    on) loads, and every column it shares with today's result holds the
    same values."""
    for old_file in sorted(RESULTS.glob("v*/*/result.*")):
        if old_file.name != f"result.{old_file.parent.name}":
            continue  # a table file beside a CSV or Parquet result
        if old_file.suffix == ".parquet":
            pytest.importorskip("pyarrow")
        loaded = ace.SimulationResult.load(old_file)
        what = str(old_file.relative_to(CORPUS))
        assert (loaded.seed, loaded.replicas) == (fleet_result.seed, fleet_result.replicas), what
        for name in TABLES:
            a, b = getattr(loaded, name), getattr(fleet_result, name)
            if a is None:
                continue
            assert b is not None and len(a) == len(b), f"{what}: table {name}"
            for field in set(a.dtype.names or ()) & set(b.dtype.names or ()):
                if not field.startswith("pad_"):
                    assert np.array_equal(
                        a[field], b[field], equal_nan=a[field].dtype.kind == "f"
                    ), f"{what}: {name}.{field}"


# ---------------------------------------------------------------------------
# Pickles of every public model object
# ---------------------------------------------------------------------------


def _trace() -> ace.NodeTrace:
    return ace.NodeTrace.from_times({0: [HOUR, 5 * HOUR], 2: [3 * HOUR]}, 4)


def _scenario() -> ace.Scenario:
    return ace.Scenario.from_dict(
        {
            "run": {"name": "corpus", "replicas": 3, "seed": 4, "horizon": "10d"},
            "jobs": [{"name": "a", "gpus": 16, "work": "2d", "checkpoint_interval": "1h"}],
            "fleet": {
                "nodes": 4,
                "spares": 1,
                "repair": "2h",
                "node_failures": {"law": "weibull", "shape": 0.7, "scale": "5d"},
            },
            "causes": [
                {"name": "hw", "share": 0.7, "detect": "5min"},
                {"name": "sw", "share": 0.3, "node_down": False},
            ],
            "policy": {"replacement": "spares"},
        }
    )


def _small_result(interval: float = HOUR) -> ace.SimulationResult:
    return ace.simulate(
        ace.Job(16, DAY, interval, name="a"),
        ace.Exponential(DAY),
        replicas=3,
        seed=7,
        horizon=5 * DAY,
    )


def _comparison() -> ace.Comparison:
    return ace.compare(_small_result(), _small_result(2 * HOUR))


#: Every public class with a pickle in the corpus: what to make now (the
#: object the old pickle must equal). Laws, jobs, fleet, repair, policy,
#: causes, enums, the cost model, and the results a user keeps.
PICKLED: dict[str, Callable[[], Any]] = {
    "Constant": lambda: ace.Constant(90.0),
    "Exponential": lambda: ace.Exponential(7.9 * HOUR),
    "Weibull": lambda: ace.Weibull(0.7, 20 * DAY),
    "LogNormal": lambda: ace.LogNormal(8.0, 1.5),
    "Gamma": lambda: ace.Gamma(0.5, 3 * DAY),
    "Mixture": lambda: ace.Mixture([(0.9, ace.Exponential(DAY)), (0.1, ace.Constant(HOUR))]),
    "Never": lambda: ace.Never(),
    "Empirical": lambda: ace.Empirical([30.0, 45.0, 60.0, 240.0]),
    "BlockBootstrap": lambda: ace.BlockBootstrap([10.0, 20.0, 15.0, 80.0, 5.0, 40.0], 2),
    "Replay": lambda: ace.Replay([HOUR, 3 * HOUR, 4 * HOUR]),
    "ScaleAware": lambda: ace.ScaleAware(ace.Exponential(7.9 * HOUR), 1024, 1.0),
    "Job": lambda: ace.Job(
        64,
        3 * DAY,
        "young",
        init=ace.Constant(300.0),
        save=ace.LogNormal(4.0, 0.3),
        load=60.0,
        submit=HOUR,
        priority=2,
        name="pretrain",
        time_limit=10 * DAY,
        persist=ace.Exponential(120.0),
        tiers=[ace.CheckpointTier(30 * MINUTE, 5.0, 10.0, replication=2)],
        min_gpus=32,
        reconfigure=ace.Constant(90.0),
        scaling=0.9,
        checkpoint_bytes=2e11,
    ),
    "JobArray": lambda: ace.JobArray(
        [8, 16, 32],
        [HOUR, 2 * HOUR, DAY],
        [600.0, 1200.0, 1800.0],
        submit=[0.0, 60.0, 120.0],
        priority=[0, 1, 0],
        save=ace.Constant(30.0),
        time_limit=[2 * HOUR, 4 * HOUR, 2 * DAY],
    ),
    "CheckpointTier": lambda: ace.CheckpointTier(20 * MINUTE, ace.Constant(4.0), 8.0, 2),
    "Cause": lambda: ace.Cause(
        "nvlink", 0.2, detect=ace.Exponential(300.0), nodes=2, scope="process", slowdown=0.0
    ),
    "NodeTrace": _trace,
    "Fleet": lambda: ace.Fleet(
        12,
        gpus_per_node=4,
        spares=2,
        repair=ace.Repair(
            [ace.RepairStage(ace.Exponential(HOUR), escalate=0.2, fix=0.5), ace.RepairStage(DAY)],
            misdiagnosis=0.05,
        ),
        node_failures=ace.Weibull(0.8, 30 * DAY),
        lemon_fraction=0.1,
        lemon_factor=5.0,
        node_start="fresh",
        rate_windows=[(0.0, DAY, 2.0)],
        maintenance=[(2 * DAY, 3 * HOUR, [0, 1])],
        cold_spares=1,
        cold_spare_delay=ace.Constant(HOUR),
        lend_spares=True,
    ),
    "Repair": lambda: ace.Repair(
        [ace.RepairStage(ace.Constant(600.0), escalate=0.4), ace.RepairStage(ace.Gamma(2.0, HOUR))],
        misdiagnosis=0.1,
    ),
    "RepairStage": lambda: ace.RepairStage(ace.Weibull(1.5, HOUR), escalate=0.25, fix=0.5),
    "Quarantine": lambda: ace.Quarantine(2, 3 * DAY, 2 * DAY),
    "Policy": lambda: ace.Policy(
        ace.Replacement.REQUEUE,
        ace.Preemption.CHECKPOINT_AWARE,
        quarantine=ace.Quarantine(3, 7 * DAY, DAY),
        preemption_grace=120.0,
        replacement_delay=ace.Exponential(600.0),
        backfill="greedy",
    ),
    "Cost": lambda: ace.Cost(gpu_hour=2.5, lost_gpu_hour=1.0, spare_node_hour=4.0, repair=300.0),
    "Replacement": lambda: ace.Replacement.WAIT_REPAIR,
    "Preemption": lambda: ace.Preemption.CHECKPOINT_AWARE,
    "EventKind": lambda: list(ace.EventKind),
    "FailureSource": lambda: list(ace.FailureSource),
    "JobStatus": lambda: list(ace.JobStatus),
    "NodeEventKind": lambda: list(ace.NodeEventKind),
    "NodeState": lambda: list(ace.NodeState),
    "Scenario": _scenario,
    "SimulationResult": _small_result,
    "Estimate": lambda: _small_result().ettr(),
    "Comparison": _comparison,
    "Difference": lambda: _comparison()["ettr"],
    "TwoLevelIntervals": lambda: ace.two_level_optimal_intervals(
        8 * HOUR, 5.0, 10.0, 120.0, 240.0, 0.8
    ),
}

#: The pickled classes that are not model values (their pickles may name the
#: module that defines them).
NOT_MODEL_VALUES = {
    "Scenario",
    "SimulationResult",
    "Estimate",
    "Comparison",
    "Difference",
    "TwoLevelIntervals",
    "Cost",
}

#: The public classes without a pickle in the corpus, and why.
NOT_PICKLED = {
    "Distribution": "the abstract base of the laws (each law is pickled)",
    "CompiledPolicy": "refuses to pickle: a function address means nothing elsewhere",
    "FleetModel": "a live engine, driven step by step, not a value",
    "Event": "an event a FleetModel hands its scheduler, not kept",
    "FailureView": "a view into the engine during a policy callback",
    "PlacementView": "a view into the engine during a placement callback",
    "BatchResult": "the batch path's result (its tables are SimulationResult's)",
    "OptimalInterval": "optimal_interval's answer (1000 replicas a point by default)",
    "SweepResult": "a (scenario, SimulationResult) pair",
    "TuneResult": "tune's answer: a search, seconds to make",
    "SensitivityResult": "sensitivity's answer: a design, seconds to make",
    "NoProgressError": "an exception",
    "ReentrantCallError": "an exception",
    "ScenarioError": "an exception",
    "TooFewReplicasError": "an exception",
    "UntrustedNameError": "an exception",
    "SingleReplicaWarning": "a warning",
}


def _same(got: Any, want: Any) -> bool:
    """Equal objects: the same class, and the same description (the
    provenance vocabulary: every constructor argument) or, where a class has
    no description, the same value."""
    if type(got) is not type(want):
        return False
    if isinstance(want, list):
        return len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want, strict=True))
    if isinstance(want, enum.Enum):
        return bool(got is want)
    if isinstance(want, ace.SimulationResult):
        _assert_same_tables(got, want, "pickled SimulationResult")
        return bool(got.provenance == want.provenance)
    described = describe(want)
    if "unserialisable" not in described:
        return bool(describe(got) == described)
    return bool(got == want)


class _Names(pickle.Unpickler):
    """An unpickler that notes the global names a pickle refers to."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.names: set[str] = set()

    def find_class(self, module: str, name: str) -> Any:
        self.names.add(f"{module}.{name}")
        return super().find_class(module, name)


def test_every_public_class_is_pickled_or_listed_out() -> None:
    classes = {n for n in ace.__all__ if inspect.isclass(getattr(ace, n))}
    assert not set(PICKLED) & set(NOT_PICKLED)
    assert classes == set(PICKLED) | set(NOT_PICKLED)
    assert sorted(p.stem for p in PICKLES.glob("*.pickle")) == sorted(PICKLED) or RECORDING


@pytest.mark.parametrize("name", sorted(PICKLED))
def test_pickles_made_before_load_into_equal_objects(name: str) -> None:
    path = PICKLES / f"{name}.pickle"
    made = PICKLED[name]()
    if RECORDING:
        _record(path, pickle.dumps(made, protocol=4))
    unpickler = _Names(_recorded(path))
    back = unpickler.load()
    assert _same(back, made), f"pickles/{name}.pickle"


def test_model_pickles_name_only_public_objects() -> None:
    """A model object's pickle names acesim's public objects (and numpy's,
    Python's), never a module inside the package: it survives a move."""
    for name in sorted(set(PICKLED) - NOT_MODEL_VALUES):
        unpickler = _Names(_recorded(PICKLES / f"{name}.pickle"))
        unpickler.load()
        inside = {n for n in unpickler.names if n.startswith("acesim.") and n.count(".") > 1}
        assert not inside, f"pickles/{name}.pickle names {sorted(inside)}"


# ---------------------------------------------------------------------------
# Examples: dump_scenario, and the command line's standard output
# ---------------------------------------------------------------------------


def _kind(path: Path) -> str:
    text = path.read_text()
    if re.search(r"^\[tune\]", text, re.M):
        return "tune"
    if re.search(r"^\[axes\]", text, re.M):
        return "sweep"
    return "run"


EXAMPLE_TOMLS = sorted(EXAMPLES.glob("*.toml"))


def _needs_data(*paths: Path) -> bool:
    return any("shared/data" in p.read_text() for p in paths if p.suffix == ".toml")


def _skip_without_data(needs: bool) -> None:
    if needs and not DATA.is_dir():
        if RECORDING:
            pytest.fail(f"recording needs {DATA}")
        pytest.skip("reads ../shared/data, which is absent")


def _normalised(text: str, tmp: Path | None = None) -> str:
    """Paths made neutral: this checkout, the shared data, the temporary
    folder; a quoted relative path (as ``dump_scenario`` writes one, from the
    file it writes) that leads into the data or the checkout is written from
    ``<data>`` or ``<root>``."""
    if tmp is not None:

        def neutral(match: re.Match[str]) -> str:
            target = (tmp / match.group(1)).resolve()
            for base, name in ((DATA.resolve(), "<data>"), (ROOT, "<root>")):
                if target.is_relative_to(base):
                    return f'"{name}/{target.relative_to(base).as_posix()}"'
            return match.group(0)

        text = re.sub(r'"((?:\.\./)+[^"]*)"', neutral, text)
    pairs = [(str(DATA.resolve()), "<data>"), (str(DATA), "<data>"), (str(ROOT), "<root>")]
    if tmp is not None:
        pairs.insert(0, (str(tmp.resolve()), "<tmp>"))
        pairs.insert(1, (str(tmp), "<tmp>"))
    for old, new in pairs:
        text = text.replace(old, new)
    # The one measured duration: the demo's last line.
    return re.sub(r"^done in [0-9.]+ s$", "done in <seconds> s", text, flags=re.M)


@pytest.mark.parametrize("example", [p.name for p in EXAMPLE_TOMLS if _kind(p) == "run"])
def test_dump_scenario_of_every_example(example: str, tmp_path: Path) -> None:
    source = EXAMPLES / example
    _skip_without_data(_needs_data(source))
    ace.dump_scenario(ace.load_scenario(source), tmp_path / example)
    text = _normalised((tmp_path / example).read_text(), tmp_path)
    path = SCENARIOS / example
    if RECORDING:
        _record(path, text.encode())
    assert text == _recorded(path).decode(), f"scenarios/{example}"


def _own_log() -> bytes:
    """A small cluster log (``timestamp,node``): 6 nodes failing at Weibull
    (shape 0.8, scale 10 d) gaps over 60 days."""
    import datetime as dt

    rng = np.random.default_rng(29)
    start = dt.datetime(2025, 1, 6, tzinfo=dt.timezone.utc)
    rows = []
    for node in range(6):
        t = 0.0
        while True:
            t += 10 * DAY * float(rng.weibull(0.8))
            if t > 60 * DAY:
                break
            stamp = (start + dt.timedelta(seconds=round(t))).strftime("%Y-%m-%dT%H:%M:%SZ")
            rows.append((stamp, f"gpu-{node:03d}"))
    rows.sort()
    return ("timestamp,node\n" + "".join(f"{t},{n}\n" for t, n in rows)).encode()


def _commands() -> dict[str, list[str]]:
    """Each stdout entry: its command line (run from the checkout's root)."""
    out: dict[str, list[str]] = {}
    for path in EXAMPLE_TOMLS:
        kind = _kind(path)
        out[f"{kind}-{path.stem}"] = [kind, f"examples/{path.name}", "--no-progress"]
    out["compare-sync-async"] = [
        "compare",
        "examples/compare_sync.toml",
        "examples/compare_async.toml",
        "--no-progress",
    ]
    out["sensitivity-sensitivity"] = ["sensitivity", "examples/sensitivity.toml", "--no-progress"]
    out["demo"] = ["demo", "--replicas", "300", "--no-progress"]
    out["interval"] = ["interval", "3.5min", "7.9h"]
    out["interval-work-restart"] = ["interval", "90", "6h", "--work", "7d", "--restart", "5min"]
    out["fit-lanl-sys20"] = ["fit", "../shared/data/lanl_sys20_node_interfailure_s.csv"]
    out["fit-titan-lifetimes"] = ["fit", "../shared/data/titan_gpu_lifetimes.csv"]
    out["fit-lanl-systems-by-cause"] = [
        "fit",
        "../shared/data/lanl_system_interfailure_s.csv",
        "--by",
        "cause",
        "--cause",
        "Hardware",
    ]
    out["fit-own-log"] = ["fit", "tests/corpus/inputs/own_log.csv"]
    out["fit-own-log-scenario"] = [
        "fit",
        "tests/corpus/inputs/own_log.csv",
        "--scenario",
        "<tmp>/model.toml",
        "--nodes",
        "64",
        "--job-gpus",
        "256",
        "--job-work",
        "7d",
        "--replicas",
        "20",
    ]
    return out


COMMANDS = _commands()


def _acesim(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(ace.__file__).resolve().parents[1]), env.get("PYTHONPATH")) if p
    )
    env.pop("CI", None)
    env["COLUMNS"] = "100"
    args = [a.replace("<tmp>", str(tmp)) for a in args]
    return subprocess.run(
        [sys.executable, "-m", "acesim", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("entry", sorted(COMMANDS))
def test_command_stdout_is_byte_equal(entry: str, tmp_path: Path) -> None:
    args = COMMANDS[entry]
    files = [ROOT / a for a in args if a.startswith("examples/")]
    _skip_without_data(_needs_data(*files) or any("shared/data" in a for a in args))
    if entry.startswith("fit-own-log"):
        if RECORDING:
            _record(INPUTS / "own_log.csv", _own_log())
        _recorded(INPUTS / "own_log.csv")
    done = _acesim(args, tmp_path)
    assert done.returncode == 0, f"stdout/{entry}.txt: exit {done.returncode}: {done.stderr}"
    text = _normalised(done.stdout, tmp_path)
    if entry == "fit-own-log-scenario":  # the scenario it wrote, after its stdout
        text += "--- <tmp>/model.toml\n" + _normalised((tmp_path / "model.toml").read_text())
    path = STDOUT / f"{entry}.txt"
    if RECORDING:
        _record(path, text.encode())
    assert text == _recorded(path).decode(), f"stdout/{entry}.txt"


def test_every_example_has_its_entries() -> None:
    """A new example is recorded (dump and stdout), or this fails."""
    runs = {p.stem for p in EXAMPLE_TOMLS if _kind(p) == "run"}
    if DATA.is_dir():
        assert {p.stem for p in SCENARIOS.glob("*.toml")} == runs
    assert {
        p.stem.split("-", 1)[1]
        for p in STDOUT.glob("*.txt")
        if p.stem.startswith(("run-", "sweep-", "tune-"))
    } == {p.stem for p in EXAMPLE_TOMLS}
    assert {p.stem for p in STDOUT.glob("*.txt")} == set(COMMANDS)


def test_the_corpus_lists_the_recorded_streams() -> None:
    """The transcripts and streams replayed elsewhere are where the corpus
    says they are."""
    for name in (
        "transcripts/stepping.jsonl",
        "transcripts/requests.jsonl",
        "recorded_streams.json",
        "recorded_results.json",
    ):
        assert (TESTS_DATA / name).stat().st_size > 0, name
    readme = (CORPUS / "README.md").read_text()
    for name in ("test_recorded_streams.py", "test_recorded_results.py", "transcripts"):
        assert name in readme, name


def test_the_corpus_is_small() -> None:
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    assert total < 2_000_000
