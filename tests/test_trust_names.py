"""Names read from a file are data, never code: provenance names objects by
their public names and rebuilds them from one table, imports nothing, and
resolves a user callable only with ``trust=True``; pickles name public
objects; a callback beside a scenario is named by (file, SHA-256,
attribute), so two same-named modules never meet."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import acesim as ace
import acesim.cli
import pytest
from acesim.provenance import (
    BEFORE_PUBLIC_NAMES,
    ENUMS,
    VALUE_CLASSES,
    check,
    describe,
    rebuild,
    reproduce,
)
from acesim.results_io import load_result, save_result

HOUR = 3600.0
DAY = 86400.0
BEFORE = Path(__file__).parent / "data" / "before_trust"


# ------------------------------------------------------------------ the table


def test_the_table_of_value_classes_is_exactly_this() -> None:
    """No function, no CompiledPolicy, FleetModel or Scenario, nothing that
    reads or writes a file: the distributions, the job, fleet, repair and
    policy configuration classes, NodeTrace, and the public enums."""
    assert VALUE_CLASSES == {
        "acesim.Constant": ace.Constant,
        "acesim.Exponential": ace.Exponential,
        "acesim.Weibull": ace.Weibull,
        "acesim.LogNormal": ace.LogNormal,
        "acesim.Gamma": ace.Gamma,
        "acesim.Mixture": ace.Mixture,
        "acesim.Empirical": ace.Empirical,
        "acesim.BlockBootstrap": ace.BlockBootstrap,
        "acesim.Replay": ace.Replay,
        "acesim.ScaleAware": ace.ScaleAware,
        "acesim.Never": ace.Never,
        "acesim.Job": ace.Job,
        "acesim.JobArray": ace.JobArray,
        "acesim.CheckpointTier": ace.CheckpointTier,
        "acesim.Cause": ace.Cause,
        "acesim.NodeTrace": ace.NodeTrace,
        "acesim.Fleet": ace.Fleet,
        "acesim.Repair": ace.Repair,
        "acesim.RepairStage": ace.RepairStage,
        "acesim.Quarantine": ace.Quarantine,
        "acesim.Policy": ace.Policy,
    }
    assert ENUMS == {
        "acesim.Replacement": ace.Replacement,
        "acesim.Preemption": ace.Preemption,
        "acesim.EventKind": ace.EventKind,
        "acesim.FailureSource": ace.FailureSource,
        "acesim.JobStatus": ace.JobStatus,
        "acesim.NodeEventKind": ace.NodeEventKind,
        "acesim.NodeState": ace.NodeState,
    }
    for table in (VALUE_CLASSES, ENUMS):
        for name, obj in table.items():
            assert isinstance(obj, type) and getattr(ace, name.removeprefix("acesim.")) is obj
    # The translation of format 1's module paths leads into the tables only.
    assert set(BEFORE_PUBLIC_NAMES.values()) <= set(VALUE_CLASSES) | set(ENUMS)


def test_provenance_names_objects_by_public_name() -> None:
    fleet = ace.Fleet(
        4, repair=ace.Repair([ace.RepairStage(600.0)]), node_failures=ace.Constant(HOUR)
    )
    assert describe(ace.Exponential(2.5)) == {"call": "acesim.Exponential", "kwargs": {"mean": 2.5}}
    assert describe(ace.Replacement.SPARES) == {"enum": "acesim.Replacement", "name": "SPARES"}
    text = json.dumps(describe(fleet))
    assert '"call": "acesim.Fleet", "kwargs": {"nodes": 4' in text
    assert "_pickle" not in text and "acesim.fleet" not in text and "acesim.repair" not in text
    assert repr(rebuild(json.loads(text))) == repr(fleet)


# ------------------------------------------------------- results from before


def _digest(res: Any, tables: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for t in tables:
        h.update(getattr(res, t).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("name", ["fleet.npz", "laws.json"])
def test_results_written_before_still_load_and_reproduce(name: str) -> None:
    """Files saved by acesim 0.1.0 (module paths, _rebuild_by_keywords) load
    and run again to the same tables."""
    res = load_result(BEFORE / name)
    again = reproduce(res.provenance)
    for table in ("jobs", "fleet", "trace", "events"):
        assert getattr(again, table).tobytes() == getattr(res, table).tobytes(), table


def test_provenance_dicts_written_before_reproduce() -> None:
    """Each case's provenance (format 1) runs again to the tables whose
    SHA-256 was recorded when it was written; the one naming a policy
    callback needs trust=True and names the callback without it.
    (trace_callback's SHA-256 was recorded again when checkpoints began to
    run ahead in bounded stretches: its fleet row's heap_events went from 11
    to 12; every other field of its tables is byte-identical to the build
    before, fcf03f0.)"""
    cases = json.loads((BEFORE / "provenance.json").read_text())
    assert set(cases) == {"fleet", "laws", "array", "trace_callback", "batch"}
    for name, case in cases.items():
        prov = case["provenance"]
        assert prov["format"] == 1
        check(prov)
        if name == "trace_callback":
            with pytest.raises(ace.UntrustedNameError, match="scenario_callbacks:requeue_wide"):
                reproduce(prov)
            res = reproduce(prov, trust=True)
        else:
            res = reproduce(prov)
        tables = ("jobs",) if name == "batch" else ("jobs", "fleet", "trace", "events")
        assert _digest(res, tables) == case["sha256"], name


# -------------------------------------------------------------- tampered data


def _marker_module(folder: Path) -> tuple[Path, Path]:
    """A module that, when imported, creates a marker file."""
    marker = folder / "ran.marker"
    (folder / "evil_marker_mod.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nimport enum\nclass E(enum.Enum):\n    X = 1\n"
        "def decide(view):\n    return None\n"
    )
    (folder / "evil.toml").write_text(
        '[[jobs]]\ngpus = 8\nwork = "1h"\ncheckpoint_interval = "10min"\n'
        '[fleet]\nnodes = 2\n[policy]\non_failure = "evil_marker_mod:decide"\n'
    )
    return marker, folder / "evil_marker_mod.py"


def _attacks(folder: Path) -> dict[str, tuple[Any, str]]:
    """Encoded objects whose rebuild by the code before this check would run
    ``touch MARKER`` (or import a module that creates it), with the name to
    be refused."""
    marker = folder / "ran.marker"
    command = {"dict": {"args": f"touch {marker}", "shell": True}}
    evil = str(folder / "evil.toml")
    by_keywords = "acesim._pickle._rebuild_by_keywords"
    return {
        # "function": the private rebuilder called subprocess.run(**kwargs).
        "function": (
            {"call": by_keywords, "args": [{"function": "subprocess:run"}, command]},
            "subprocess:run",
        ),
        # "type": the private rebuilder called any acesim.* attribute with kwargs
        # (here load_scenario, whose scenario's beside module runs) ...
        "type": (
            {
                "call": by_keywords,
                "args": [{"type": "acesim.load_scenario"}, {"dict": {"path": evil}}],
            },
            "acesim.load_scenario",
        ),
        # ... and, were the prefix check gone, subprocess.Popen(**kwargs).
        "type-subprocess": (
            {"call": by_keywords, "args": [{"type": "subprocess.Popen"}, command]},
            "subprocess.Popen",
        ),
        # "enum": the module named was imported.
        "enum": ({"enum": "evil_marker_mod.E", "name": "X"}, "evil_marker_mod.E"),
        # "call": a public function that loads a scenario, whose beside module runs.
        "call": (
            {"call": "acesim.load_scenario", "args": [evil]},
            "acesim.load_scenario",
        ),
        # a private acesim.* callable that loads and runs a file.
        "private": (
            {
                "call": "acesim._beside.load_beside",
                "args": [str(folder), "evil_marker_mod", "E", str(folder / "evil_marker_mod.py")],
            },
            "acesim._beside.load_beside",
        ),
    }


def _tampered(base: dict[str, Any], attack: Any) -> dict[str, Any]:
    """``base`` (a fleet run's provenance) with its fleet replaced by ``attack``."""
    prov = json.loads(json.dumps(base))
    prov["arguments"]["dict"]["fleet"] = attack
    return prov


@pytest.fixture(scope="module")
def fleet_run() -> Any:
    fleet = ace.Fleet(3, spares=1, repair=HOUR, node_failures=ace.Constant(5 * HOUR))
    return ace.simulate(ace.Job(16, DAY, HOUR), fleet=fleet, replicas=1, record_events=True)


@pytest.mark.parametrize("form", ["function", "type", "type-subprocess", "enum", "call", "private"])
def test_tampered_provenance_is_refused_and_nothing_runs(
    form: str, fleet_run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rebuild, reproduce (with or without trust), load_result and
    ``acesim report`` refuse each attack naming the refused name; the marker
    file the command would create does not exist and the module that would
    create it was not imported."""
    monkeypatch.syspath_prepend(str(tmp_path))  # the enum attack's module is importable
    marker, _ = _marker_module(tmp_path)
    attack, name = _attacks(tmp_path)[form]
    prov = _tampered(fleet_run.provenance, attack)
    for trust in (False, True):
        with pytest.raises(ace.UntrustedNameError, match=repr(name).replace(".", r"\.")) as info:
            reproduce(prov, trust=trust)
        assert info.value.name == name
        with pytest.raises(ace.UntrustedNameError, match=name.replace(".", r"\.")):
            rebuild(attack, trust=trust)
    with pytest.raises(ace.UntrustedNameError, match=name.replace(".", r"\.")):
        check(prov)
    for suffix in (".npz", ".json"):
        path = tmp_path / f"tampered{suffix}"
        save_result(fleet_run, path, provenance=prov)
        with pytest.raises(ace.UntrustedNameError, match=name.replace(".", r"\.")) as refused:
            load_result(path)
        assert refused.value.name == name and str(path) in str(refused.value)
        out = subprocess.run(
            [sys.executable, "-m", "acesim", "report", str(path), "-o", str(tmp_path / "r.html")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 2, out.stderr
        assert name in out.stderr and "Traceback" not in out.stderr
        assert not (tmp_path / "r.html").exists()
    assert not marker.exists()
    assert "evil_marker_mod" not in sys.modules


def test_a_callback_named_by_a_file_is_loaded_but_never_resolved_without_trust(
    fleet_run: Any, tmp_path: Path
) -> None:
    """A policy whose on_failure is ``subprocess:run``: the file loads (a
    user callable is a legitimate name), reproduce without trust refuses
    naming it, the report's fleet timeline never needs the policy (its
    quarantines are the node events), and the report shows the name; nothing
    ran."""
    marker = tmp_path / "ran.marker"
    policy = {"call": "acesim.Policy", "kwargs": {"on_failure": {"function": "subprocess:run"}}}
    prov = json.loads(json.dumps(fleet_run.provenance))
    prov["arguments"]["dict"]["policy"] = policy
    path = tmp_path / "callback.npz"
    save_result(fleet_run, path, provenance=prov)
    res = load_result(path)
    with pytest.raises(ace.UntrustedNameError, match=r"'subprocess:run'.*trust=True"):
        reproduce(res.provenance)
    data = ace.plot.fleet_timeline_data(res)  # needs the fleet only, never the policy
    assert "subprocess:run" not in data.caption
    # a fleet naming a callable is not rebuilt either: the nodes are the record's
    prov["arguments"]["dict"]["fleet"] = {"function": "subprocess:run"}
    save_result(fleet_run, tmp_path / "fleet.npz", provenance=prov)
    data = ace.plot.fleet_timeline_data(load_result(tmp_path / "fleet.npz"))
    assert "fleet was not rebuilt" in data.caption and "'subprocess:run'" in data.caption
    code = acesim.cli.main(["report", str(path), "-o", str(tmp_path / "r.html")])
    assert code == 0
    html = (tmp_path / "r.html").read_text()
    assert "subprocess:run" in html  # the provenance shows it
    assert not marker.exists()


def test_rebuild_refuses_malformed_entries_by_name() -> None:
    with pytest.raises(ValueError, match="'evil'"):
        rebuild({"call": "acesim.Constant", "kwargs": {"value": 1.0, "evil": 2}})
    with pytest.raises(ValueError, match="ndarray of Python objects"):
        rebuild({"ndarray": "", "dtype": "|O", "shape": [0]})
    with pytest.raises(ValueError, match="NodeTrace's state"):
        rebuild({"call": "acesim.NodeTrace", "state": {"laws": [], "__class__": 1}})
    with pytest.raises(ValueError, match="no member 'NOPE'"):
        rebuild({"enum": "acesim.Replacement", "name": "NOPE"})
    with pytest.raises(TypeError, match="trust"):
        rebuild(1.0, trust="yes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- pickles


def _globals(data: bytes) -> set[str]:
    """The module of every global a pickle names (as unpickling finds them)."""
    found: set[str] = set()

    class Recorder(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            found.add(module)
            return super().find_class(module, name)

    Recorder(io.BytesIO(data)).load()
    return found


def test_pickles_name_public_objects_only() -> None:
    """Every value class and public enum reports __module__ == "acesim" and
    a pickle of them names the module acesim only (so moving a module
    inside the package breaks no pickle)."""
    for obj in [*VALUE_CLASSES.values(), *ENUMS.values()]:
        assert obj.__module__ == "acesim", obj
    trace = ace.NodeTrace.from_times({0: [HOUR]}, nodes=2)
    values = [
        ace.Fleet(2, repair=ace.Repair([ace.RepairStage(60.0)]), node_failures=trace),
        ace.Policy(quarantine=ace.Quarantine(2, DAY, HOUR), replacement=ace.Replacement.SPARES),
        ace.Job(8, DAY, HOUR, tiers=[ace.CheckpointTier(600.0, 5.0, 20.0)]),
        ace.JobArray(gpus=[8], work=[DAY], checkpoint_interval=[HOUR]),
        ace.Mixture([(1.0, ace.Weibull(0.7, HOUR))]),
        ace.Cause("gpu", 1.0),
        ace.Preemption.CHECKPOINT_AWARE,
    ]
    for v in values:
        data = pickle.dumps(v)
        assert {m for m in _globals(data) if not m.startswith("numpy")} == {"acesim"}, v
        assert describe(pickle.loads(data)) == describe(v)


# ------------------------------------------------ callbacks beside a scenario

SCENARIO = """\
[run]
replicas = 4
seed = 1
[[jobs]]
gpus = 16
work = "1d"
checkpoint_interval = "1h"
[fleet]
nodes = 3
spares = 1
node_failures = "10h"
repair = "5h"
[policy]
on_failure = "mypolicies:decide"
"""


def _beside(folder: Path, replacement: str) -> Path:
    folder.mkdir()
    (folder / "mypolicies.py").write_text(
        f"import acesim as ace\n\n\ndef decide(view):\n    return ace.Replacement.{replacement}\n"
    )
    path = folder / "s.toml"
    path.write_text(SCENARIO)
    return path


def test_compare_uses_each_scenarios_own_beside_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two scenarios whose same-named mypolicies.py differ (wait for repair
    against take a spare): compare prints each one's own ETTR, the ones each
    gives run alone, and they differ (one module used twice would print the
    same twice)."""
    a = _beside(tmp_path / "a", "WAIT_REPAIR")
    b = _beside(tmp_path / "b", "SPARES")
    assert acesim.cli.main(["compare", str(a), str(b)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("ettr "))
    shown = [float(x) for x in row.split()[1:3]]
    alone = [ace.load_scenario(p).run().ettr().value for p in (a, b)]
    assert shown == [round(x, 4) for x in alone]
    assert shown[0] != shown[1]
    policies = [ace.load_scenario(p).simulate_kwargs()["policy"].on_failure for p in (a, b)]
    assert policies[0].sha256 != policies[1].sha256
    assert (policies[0].file, policies[1].file) == (
        str((tmp_path / "a" / "mypolicies.py").resolve()),
        str((tmp_path / "b" / "mypolicies.py").resolve()),
    )
    assert "mypolicies" not in sys.modules


def test_a_beside_callback_is_described_and_pickled_by_file_and_hash(tmp_path: Path) -> None:
    path = _beside(tmp_path / "a", "WAIT_REPAIR")
    source = (tmp_path / "a" / "mypolicies.py").read_bytes()
    s = ace.load_scenario(path)
    res = s.run()
    fn = res.provenance["arguments"]["dict"]["policy"]["kwargs"]["on_failure"]
    assert fn == {
        "function": "mypolicies:decide",
        "file": str((tmp_path / "a" / "mypolicies.py").resolve()),
        "sha256": hashlib.sha256(source).hexdigest(),
    }
    with pytest.raises(ace.UntrustedNameError, match=r"'mypolicies:decide' \(from "):
        reproduce(res.provenance)
    assert reproduce(res.provenance, trust=True).jobs.tobytes() == res.jobs.tobytes()
    back = pickle.loads(pickle.dumps(s.simulate_kwargs()["policy"]))
    assert back.on_failure == s.simulate_kwargs()["policy"].on_failure


def test_a_process_refuses_a_beside_module_that_changed(tmp_path: Path) -> None:
    """A fresh process (as a pool's worker) that unpickles the callback after
    its file changed refuses with UntrustedNameError naming the file."""
    path = _beside(tmp_path / "a", "WAIT_REPAIR")
    data = pickle.dumps(ace.load_scenario(path).simulate_kwargs()["policy"])
    load = "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); print('loaded')"
    ok = subprocess.run([sys.executable, "-c", load], input=data, capture_output=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout == b"loaded\n", ok.stderr
    module = tmp_path / "a" / "mypolicies.py"
    module.write_text(module.read_text().replace("WAIT_REPAIR", "SPARES"))
    bad = subprocess.run([sys.executable, "-c", load], input=data, capture_output=True, timeout=60)
    err = bad.stderr.decode()
    assert bad.returncode == 1
    assert "UntrustedNameError" in err and str(module.resolve()) in err and "changed" in err


def test_sweep_on_processes_runs_a_beside_callback(tmp_path: Path) -> None:
    """``acesim sweep --processes 2`` over a base whose policy is a beside
    module's: the same grid as the sweep run in this process."""
    _beside(tmp_path / "a", "WAIT_REPAIR")
    base = textwrap.indent(SCENARIO, "")
    sweep = (
        base.replace("[run]", "[base.run]")
        .replace("[[jobs]]", "[[base.jobs]]")
        .replace("[fleet]", "[base.fleet]")
        .replace("[policy]", "[base.policy]")
        + '[axes]\n"fleet.repair" = ["5h", "1h"]\n'
    )
    path = tmp_path / "a" / "sweep.toml"
    path.write_text(sweep)
    for out, extra in (("two.csv", ["--processes", "2"]), ("one.csv", [])):
        assert acesim.cli.main(["sweep", str(path), "--out", str(tmp_path / out), *extra]) == 0
    two, one = ((tmp_path / f).read_text() for f in ("two.csv", "one.csv"))
    assert two == one and two.count("\n") == 3


def test_run_help_says_to_run_scenarios_you_trust(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        acesim.cli.main(["run", "--help"])
    assert "run scenarios you trust" in " ".join(capsys.readouterr().out.split())
    assert "run scenarios you trust" in " ".join((ace.scenario.__doc__ or "").split())


def test_a_beside_package_with_relative_imports(tmp_path: Path) -> None:
    """``mypk.pol:decide`` from a package beside the scenario (pol.py imports
    from .util): loaded under a name of its own, named by pol.py's file and
    hash, and a fresh process unpickles it and calls it (WAIT_REPAIR = 1)."""
    pkg = tmp_path / "mypk"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("import acesim as ace\nWAIT = ace.Replacement.WAIT_REPAIR\n")
    (pkg / "pol.py").write_text("from .util import WAIT\n\n\ndef decide(view):\n    return WAIT\n")
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace("mypolicies:decide", "mypk.pol:decide"))
    fn = ace.load_scenario(path).simulate_kwargs()["policy"].on_failure
    assert (fn.name, fn.file) == ("mypk.pol:decide", str((pkg / "pol.py").resolve()))
    assert fn(None) is ace.Replacement.WAIT_REPAIR
    call = "import pickle, sys; print(int(pickle.loads(sys.stdin.buffer.read())(None)))"
    out = subprocess.run(
        [sys.executable, "-c", call], input=pickle.dumps(fn), capture_output=True, timeout=60
    )
    assert out.stdout == b"1\n", out.stderr
    assert "mypk" not in sys.modules
