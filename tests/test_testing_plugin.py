"""The pytest plugin (entry point ``pytest11``): its fixtures here, through
the plugin that the installed acesim registers, and in a throwaway project
that only imports acesim, run by pytest in a subprocess."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import pytest_plugin
from acesim.pytest_plugin import TraceRecorder, stable_seed

DAY, HOUR = ace.DAY, ace.HOUR
LAW = ace.Exponential(3 * DAY)


def fleet(node_failures: Any) -> ace.Fleet:
    return ace.Fleet(8, spares=1, repair=ace.Exponential(6 * HOUR), node_failures=node_failures)


JOBS = [ace.Job(32, 3 * DAY, HOUR), ace.Job(16, 2 * DAY, HOUR, submit=HOUR)]


def run(node_failures: Any, seed: int, replicas: int = 1) -> ace.SimulationResult:
    return ace.simulate(JOBS, fleet=fleet(node_failures), replicas=replicas, seed=seed, threads=1)


# ----------------------------------------------------------------- seeds


def test_the_plugin_is_registered_through_the_entry_point(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.get_plugin("acesim") is pytest_plugin
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "acesim"]
    assert ep.value == "acesim.pytest_plugin"


def test_stable_seed_is_the_sha256_of_the_node_id() -> None:
    nodeid = "tests/test_x.py::test_y[3]"
    digest = hashlib.sha256(nodeid.encode()).digest()
    assert stable_seed(nodeid) == int.from_bytes(digest[:4], "little")
    assert stable_seed(nodeid) == stable_seed(nodeid) != stable_seed(nodeid + " ")
    assert 0 <= stable_seed("") < 2**32


def test_acesim_seed_is_this_tests_stable_seed(
    acesim_seed: int, request: pytest.FixtureRequest
) -> None:
    option = request.config.getoption("acesim_seed")
    expected = option if option is not None else stable_seed(request.node.nodeid)
    assert acesim_seed == expected


# ------------------------------------------------------------ fleet_model


def test_fleet_model_builds_a_model_with_the_tests_seed(fleet_model: Any, acesim_seed: int) -> None:
    f = fleet(LAW)
    model = fleet_model(f, failures=LAW, policy=ace.Policy(quarantine=ace.Quarantine(2, DAY, DAY)))
    assert isinstance(model, ace.FleetModel)
    assert model._args["seed"] == acesim_seed and model._args["replica"] == 0
    # The same seed, the same draws: a model built by hand with it agrees.
    twin = ace.FleetModel(f, failures=LAW, seed=acesim_seed)
    for m in (model, twin):
        jid = m.submit(ace.Job(8, DAY, 3600.0))
        m.start(jid, [0])
    assert model.advance(10 * DAY) == twin.advance(10 * DAY)
    other = fleet_model(f, causes=ace.LLAMA3_CAUSES, replica=3, horizon=DAY)
    assert other._args["replica"] == 3 and other._args["horizon"] == DAY
    with pytest.raises(TypeError, match="takes its seed from acesim_seed"):
        fleet_model(f, seed=1)


# --------------------------------------------------------- recorded_trace


def test_recorded_trace_records_once_then_replays(tmp_path: Path) -> None:
    first = run(LAW, seed=21)
    assert first.trace.size > 3
    recorder = TraceRecorder(tmp_path / "acesim_traces", "test_mod.py::test_x", record=False)
    trace = recorder(first, nodes=8, model=LAW)
    # the readable id, then the first 8 hex digits of sha256(b"test_mod.py::test_x")
    path = tmp_path / "acesim_traces" / f"test_mod.test_x.{sha8('test_mod.py::test_x')}.npz"
    assert recorder.paths == [path] and path.is_file()
    # the replay reproduces the recorded run bit for bit (same seed, the law given)
    again = run(trace, seed=21)
    for name in first.jobs.dtype.names:
        np.testing.assert_array_equal(again.jobs[name], first.jobs[name], err_msg=name)

    # the file: documented keys, no pickles
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == ["acesim_version", "format", "nodes", "trace", "version"]
        assert data["trace"].dtype == first.trace.dtype
        np.testing.assert_array_equal(data["trace"], first.trace)
        assert int(data["nodes"]) == 8 and int(data["version"]) == 1
        assert str(data["format"]) == "acesim-trace"
        assert str(data["acesim_version"]) == ace.__version__

    # a later run reads the file: the source is not used
    def must_not_run() -> Any:
        raise AssertionError("the source was used although a recording exists")

    later = TraceRecorder(tmp_path / "acesim_traces", "test_mod.py::test_x", record=False)
    replayed = run(later(must_not_run, nodes=8, model=LAW), seed=21)
    np.testing.assert_array_equal(replayed.jobs, first.jobs)

    # --acesim-record: the source is called and the file replaced
    other = run(LAW, seed=22)
    rerecord = TraceRecorder(tmp_path / "acesim_traces", "test_mod.py::test_x", record=True)
    rerecord(lambda: other, nodes=8)
    with np.load(path, allow_pickle=False) as data:
        np.testing.assert_array_equal(data["trace"], other.trace)


def test_recorded_trace_names_and_sources(tmp_path: Path) -> None:
    res = run(LAW, seed=3, replicas=2)
    recorder = TraceRecorder(tmp_path, "t", record=False)
    recorder(res.trace, nodes=8)  # the structured array itself
    recorder(lambda: res.trace, nodes=8, replica=1)  # a callable returning it
    recorder(res, nodes=8, name="by name/with [odd] chars")
    recorder(res, nodes=8)
    h, n = sha8("t"), sha8("by name/with [odd] chars")
    assert [p.name for p in recorder.paths] == [
        f"t.{h}.npz",
        f"t-2.{h}.npz",
        f"by_name_with__odd__chars.{n}.npz",
        f"t-3.{h}.npz",
    ]
    assert recorder.path() == tmp_path / f"t-4.{h}.npz"
    with pytest.raises(TypeError, match="source must be a SimulationResult"):
        recorder([1.0, 2.0], nodes=8)
    with pytest.raises(TypeError, match="nodes must be an integer"):
        recorder(res, nodes=8.0)  # type: ignore[arg-type]


def sha8(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def test_recorded_trace_file_names_are_injective(tmp_path: Path) -> None:
    """Test ids that read alike once made file-safe (``a x``, ``a?x``,
    ``a_x``: all ``a_x``) get three files: each test replays its own
    trace. Each file name is the readable form and the hash of the id."""
    ids = ["t.py::test[a x]", "t.py::test[a?x]", "t.py::test[a_x]"]
    paths = [TraceRecorder(tmp_path, i, record=False).path() for i in ids]
    assert [p.name for p in paths] == [f"t.test_a_x_.{sha8(i)}.npz" for i in ids]
    assert len(set(paths)) == 3
    one, two = run(LAW, seed=1), run(LAW, seed=2)
    assert not np.array_equal(one.trace["time"], two.trace["time"])
    TraceRecorder(tmp_path, ids[0], record=False)(one, nodes=8)
    TraceRecorder(tmp_path, ids[1], record=False)(two, nodes=8)  # records its own
    with np.load(paths[0]) as a, np.load(paths[1]) as b:
        np.testing.assert_array_equal(a["trace"], one.trace)
        np.testing.assert_array_equal(b["trace"], two.trace)


def test_a_truncated_trace_file_is_a_named_error(tmp_path: Path) -> None:
    """A recording cut short (half its bytes) is a ValueError naming the
    file and the way out, not a raw ``BadZipFile``."""
    recorder = TraceRecorder(tmp_path, "t.py::test", record=False)
    recorder(run(LAW, seed=3), nodes=8)
    path = recorder.paths[0]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"not a readable trace file.*--acesim-record") as info:
        TraceRecorder(tmp_path, "t.py::test", record=False)(run(LAW, seed=3), nodes=8)
    assert path.name in str(info.value)


def test_recorded_trace_refuses_a_file_it_cannot_trust(tmp_path: Path) -> None:
    res = run(LAW, seed=3)
    TraceRecorder(tmp_path, "t", record=False)(res, nodes=8)
    with pytest.raises(
        ValueError, match=r"recorded for 8 nodes, the test asks for 9.*--acesim-record"
    ):
        TraceRecorder(tmp_path, "t", record=False)(res, nodes=9)
    path = TraceRecorder(tmp_path, "t", record=False).path()
    np.savez(path, trace=res.trace)
    with pytest.raises(ValueError, match="not an acesim trace file"):
        TraceRecorder(tmp_path, "t", record=False)(res, nodes=8)
    np.savez(
        path,
        trace=res.trace,
        nodes=np.int64(8),
        format=np.str_("acesim-trace"),
        version=np.int64(2),
    )
    with pytest.raises(ValueError, match="format version 2; this acesim reads 1"):
        TraceRecorder(tmp_path, "t", record=False)(res, nodes=8)


# ------------------------------------------------- in a throwaway project

PROJECT_TEST = """
import os
from pathlib import Path

import acesim as ace
from acesim.testing import assert_ettr_at_least, assert_not_worse

JOB = ace.Job(64, ace.DAY, ace.HOUR)
LAW = ace.Exponential(4 * ace.HOUR)
NODE_LAW = ace.Exponential(3 * ace.DAY)
JOBS = [ace.Job(32, 3 * ace.DAY, ace.HOUR), ace.Job(16, 2 * ace.DAY, ace.HOUR)]


def fleet(node_failures):
    return ace.Fleet(8, spares=1, repair=ace.Exponential(6 * ace.HOUR), node_failures=node_failures)


def test_honest_assertions_pass(acesim_seed):
    res = ace.simulate(JOB, failures=LAW, replicas=50, seed=acesim_seed)
    assert_ettr_at_least(res, 0.5)
    daly = ace.simulate(
        ace.Job(64, ace.DAY, "daly"), failures=LAW, replicas=50, seed=acesim_seed
    )
    assert_not_worse(daly, res, margin=0.05)
    assert_not_worse(res, res, metric="wasted", higher_is_better=False)


def test_deliberately_failing(acesim_seed):
    res = ace.simulate(JOB, failures=LAW, replicas=20, seed=acesim_seed)
    assert_ettr_at_least(res, 0.999)


def test_seed_unused():
    assert 1 + 1 == 2


def test_recorded(recorded_trace, acesim_seed):
    produced = []

    def produce():
        produced.append(acesim_seed)
        return ace.simulate(JOBS, fleet=fleet(NODE_LAW), replicas=2, seed=acesim_seed)

    trace = recorded_trace(produce, nodes=8, model=NODE_LAW)
    res = ace.simulate(JOBS, fleet=fleet(trace), seed=0)
    digest = ",".join(f"{t:.17g}" for t in res.trace["time"])
    Path(os.environ["DIGEST_FILE"]).write_text(f"{len(produced)} {digest}")
    assert res.trace.size > 0


def test_fleet_model(fleet_model):
    model = fleet_model(fleet(NODE_LAW))
    job = model.submit(ace.Job(16, ace.DAY, ace.HOUR))
    model.start(job, model.free_nodes()[:2])
    while model.advance(10 * ace.DAY):
        pass
    assert model.now == 10 * ace.DAY
"""


def run_project(project: Path, *args: str, digest: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["DIGEST_FILE"] = str(digest)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def outcome(output: str, test: str) -> str:
    for line in output.splitlines():
        if line.startswith(f"test_sched.py::{test} "):
            return line.split()[1]
    raise AssertionError(f"no outcome for {test} in:\n{output}")


def test_the_plugin_in_a_throwaway_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")  # the project's root
    (project / "test_sched.py").write_text(textwrap.dedent(PROJECT_TEST))
    digest = tmp_path / "digest.txt"
    recording = (
        project
        / "acesim_traces"
        / f"test_sched.test_recorded.{sha8('test_sched.py::test_recorded')}.npz"
    )

    first = run_project(project, "-v", digest=digest)
    out = first.stdout + first.stderr
    assert first.returncode == 1, out  # one test fails, on purpose
    assert "acesim: seeds from a stable hash of each test id" in out
    assert outcome(out, "test_honest_assertions_pass") == "PASSED", out
    assert outcome(out, "test_seed_unused") == "PASSED", out
    assert outcome(out, "test_recorded") == "PASSED", out
    assert outcome(out, "test_fleet_model") == "PASSED", out
    assert outcome(out, "test_deliberately_failing") == "FAILED", out

    # the failure names the seed: in the assertion and in the report section
    seed = stable_seed("test_sched.py::test_deliberately_failing")
    assert f"acesim seed: {seed}" in out
    assert f"--acesim-seed {seed}" in out
    assert f"ace.simulate(..., seed={seed}, replicas=20)" in out
    assert out.count("acesim seed:") == 2  # the section's title and its first line: one failure

    # the recording: made on the first run, from that test's seed
    assert recording.is_file()
    produced, recorded_digest = digest.read_text().split(" ", 1)
    assert produced == "1"
    stored = recording.read_bytes()

    # replaying the failing test with its seed fails the same way
    again = run_project(
        project,
        "test_sched.py::test_deliberately_failing",
        "--acesim-seed",
        str(seed),
        digest=digest,
    )
    out_again = again.stdout + again.stderr
    assert again.returncode == 1, out_again
    assert f"acesim: seeds from --acesim-seed {seed}" in out_again
    assert f"acesim seed: {seed}" in out_again

    # a later run with another seed replays the recorded failures, file untouched
    later = run_project(project, "-k", "recorded", "--acesim-seed", "99", digest=digest)
    assert later.returncode == 0, later.stdout + later.stderr
    assert digest.read_text() == f"0 {recorded_digest}"
    assert recording.read_bytes() == stored

    # --acesim-record records anew (from seed 99: other failures)
    rerecord = run_project(
        project, "-k", "recorded", "--acesim-seed", "99", "--acesim-record", digest=digest
    )
    assert rerecord.returncode == 0, rerecord.stdout + rerecord.stderr
    produced, new_digest = digest.read_text().split(" ", 1)
    assert produced == "1" and new_digest != recorded_digest
    assert recording.read_bytes() != stored

    # a seed out of range is a usage error, before any test runs
    bad = run_project(project, "--acesim-seed", "-1", digest=digest)
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "--acesim-seed must be in 0 .. 2**64 - 1, got -1" in bad.stderr


QUOTED_TEST = """
import pytest


@pytest.mark.parametrize("x", ["it's $HOME; a x"])
def test_odd_id(acesim_seed, x):
    assert False
"""


def test_the_replay_command_is_shell_quoted(tmp_path: Path) -> None:
    """A failing test whose id holds a quote, a space, ``$`` and ``;``:
    the report's replay line, split as a shell splits it, gives back
    exactly ``python -m pytest <its id> --acesim-seed <its seed>``."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_q.py").write_text(textwrap.dedent(QUOTED_TEST))
    proc = run_project(project, digest=tmp_path / "digest.txt")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    nodeid = "test_q.py::test_odd_id[it's $HOME; a x]"
    seed = stable_seed(nodeid)
    lines = [line for line in out.splitlines() if line.startswith("replay: ")]
    assert len(lines) == 1, out
    argv = shlex.split(lines[0][len("replay: ") :])
    assert argv == ["python", "-m", "pytest", nodeid, "--acesim-seed", str(seed)]
