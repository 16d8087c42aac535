"""The scenario commands: ``acesim run``, ``acesim sweep``, ``acesim compare``
and ``acesim fit --scenario``; their tables, output files, progress bar, and
a one-line error with a non-zero exit for every bad input."""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import acesim as ace
import pytest
from acesim import history, results_io
from acesim.cli import main
from acesim.simulation import TABLES
from workers import worker_path

HOUR, DAY = 3600.0, 86400.0


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def assert_same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    assert (a.seed, a.replicas) == (b.seed, b.replicas)
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name


def code_of(argv: list[str]) -> int:
    """main's exit status, also for argparse's own exits."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


HAND = """\
[run]
name = "hand"
replicas = 3
seed = 1

[[jobs]]
gpus = 8
work = "3h"
checkpoint_interval = "1h"
init = 0
save = "1min"
load = "2min"

[failures]
law = "constant"
value = 5000
"""

FLEET = """\
causes = "llama3"
[run]
replicas = 6
seed = 2
record_events = true

[[jobs]]
name = "wide"
gpus = 64
work = "2d"
checkpoint_interval = "1h"
[[jobs]]
name = "small"
count = 3
gpus = 8
work = "12h"
checkpoint_interval = "1h"
submit_every = "2h"

[fleet]
nodes = 12
spares = 1
repair = "2h"
node_failures = {law = "weibull", shape = 0.8, scale = "10d"}
"""


def fleet_python(**run: Any) -> dict[str, Any]:
    jobs = [ace.Job(64, 2 * DAY, HOUR, name="wide")]
    jobs += [ace.Job(8, 12 * HOUR, HOUR, submit=k * 2 * HOUR, name=f"small-{k}") for k in range(3)]
    fleet = ace.Fleet(12, spares=1, repair=2 * HOUR, node_failures=ace.Weibull(0.8, 10 * DAY))
    kwargs = {
        "jobs": jobs,
        "fleet": fleet,
        "causes": ace.LLAMA3_CAUSES,
        "replicas": 6,
        "seed": 2,
        "record_events": True,
    }
    return {**kwargs, **run}


# --------------------------------------------------------------------------
# acesim run
# --------------------------------------------------------------------------


def test_run_prints_the_hand_computed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/test_scenario.py works the run out: wall 13,780 s of which
    productive 10,800, wasted 2,440, stalls 180, overhead 360; 8 GPUs."""
    path = write(tmp_path, "hand.toml", HAND)
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"run: {path} (hand)" in out
    assert "1 job, 3 replicas, seed 1, horizon none" in out
    assert "ETTR 0.7837  95% CI [0.7837, 0.7837]" in out  # every replica the same
    gpu_hours = {"productive": 10800, "wasted": 2440, "ckpt_stall": 180, "overhead": 360}
    for bucket, seconds in gpu_hours.items():
        share = f"{seconds / 13780:.2%}"
        hours = f"{8 * seconds / 3600:,.2f}"
        assert re.search(rf"^   {bucket} +{re.escape(share)} +{re.escape(hours)}$", out, re.M), (
            bucket
        )
    assert re.search(r"^   wall +100\.00% +30\.62$", out, re.M)
    lost = 8 * (13780 - 10800) / 3600
    assert f"failures/replica 2.00; GPU-hours lost/replica {lost:,.2f}; completed 100.0%" in out
    assert "narrow" not in out  # no elastic job: the bucket is left out


def test_run_per_job_table_and_every_output_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "fleet.toml", FLEET)
    want = ace.simulate(**fleet_python())
    for suffix in (".npz", ".csv", ".json", ".parquet"):
        if suffix == ".parquet":
            pytest.importorskip("pyarrow")
        out = tmp_path / f"res{suffix}"
        assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 0
        text = capsys.readouterr().out
        back = results_io.load_result(out)
        assert_same(back, want)
        prov = results_io.load_provenance(out)
        assert prov is not None and prov["scenario"] == ace.load_scenario(path).to_dict()
        assert prov["source"] == str(path.resolve())
        assert f"results written to {out}" in text
    # the per-[[jobs]] table: "small" pools its 3 jobs
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith("   ")}
    assert rows["wide"][1:3] == ["1", "64"] and rows["small"][1:3] == ["3", "8"]
    value, low, high = ace.simulate(**fleet_python()).ettr(job=0)
    assert rows["wide"][3] == f"{value:.4f}"
    assert " ".join(rows["wide"][4:6]) == f"[{low:.4f}, {high:.4f}]"


def test_run_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "fleet.toml", FLEET)
    out = tmp_path / "o.npz"
    argv = ["run", str(path), "--replicas", "4", "--seed", "9", "--threads", "1"]
    argv += ["--horizon", "1.5d", "--out", str(out)]
    assert main(argv) == 0
    assert "4 replicas, seed 9, horizon 1.5 d" in capsys.readouterr().out
    want = ace.simulate(**fleet_python(replicas=4, seed=9, threads=1, horizon=1.5 * DAY))
    assert_same(results_io.load_result(out), want)
    prov = results_io.load_provenance(out)
    assert prov is not None
    assert (
        prov["scenario"]["run"]["replicas"] == 4 and prov["scenario"]["run"]["horizon"] == 1.5 * DAY
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def use_terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """stderr a terminal, CI unset (a progress bar is drawn). Called in the
    test itself: capsys puts its own stderr back when the test starts."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain text line
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    return err


def test_run_progress_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In chunks on a terminal (first_replica offsets joined as sweep joins
    them): the same result as one simulate call, every table included."""
    path = write(tmp_path, "fleet.toml", FLEET)
    out = tmp_path / "p.npz"
    terminal = use_terminal(monkeypatch)
    assert main(["run", str(path), "--replicas", "40", "--threads", "1", "--out", str(out)]) == 0
    err = terminal.getvalue()
    assert "\rrun: 1/10 chunks (10%) in" in err and "left" in err
    assert "run: 10/10 chunks (100%)" in err
    assert_same(results_io.load_result(out), ace.simulate(**fleet_python(replicas=40, threads=1)))
    capsys.readouterr()


def test_no_progress_bar_off_a_terminal_in_ci_or_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "hand.toml", HAND)
    terminal = use_terminal(monkeypatch)
    assert main(["run", str(path), "--no-progress"]) == 0
    assert terminal.getvalue() == ""
    monkeypatch.setenv("CI", "true")
    assert main(["run", str(path)]) == 0
    assert terminal.getvalue() == ""
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    assert main(["run", str(path)]) == 0
    assert sys.stderr.getvalue() == ""  # type: ignore[attr-defined]
    capsys.readouterr()


def test_python_m_acesim_run(tmp_path: Path) -> None:
    path = write(tmp_path, "hand.toml", HAND)
    done = subprocess.run(
        [sys.executable, "-m", "acesim", "run", str(path)],
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    assert "ETTR 0.7837" in done.stdout and done.stderr == ""


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(ace.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    return env


# --------------------------------------------------------------------------
# acesim sweep
# --------------------------------------------------------------------------

SWEEP = """\
name = "tiny grid"
chunk_replicas = 3
[base.run]
replicas = 7
seed = 4
record_events = true
[[base.jobs]]
gpus = 64
work = "1d"
checkpoint_interval = "1h"
[base.fleet]
nodes = 10
spares = 1
node_failures = {law = "exponential", mean = "20d"}
[axes]
"jobs[0].checkpoint_interval" = ["young", "30min"]
fleet.node_failures.mean = ["5d", "20d"]
"""


def sweep_point(interval: str | float, mean: float) -> dict[str, Any]:
    fleet = ace.Fleet(10, spares=1, node_failures=ace.Exponential(mean))
    return {
        "jobs": ace.Job(64, DAY, interval),  # type: ignore[arg-type]
        "fleet": fleet,
        "replicas": 7,
        "seed": 4,
        "record_events": True,
    }


POINTS = [("young", 5 * DAY), ("young", 20 * DAY), (1800.0, 5 * DAY), (1800.0, 20 * DAY)]


def test_sweep_table_and_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "grid.toml", SWEEP)
    (tmp_path / "local").mkdir()
    out = tmp_path / "grid.json"
    argv = ["sweep", str(path), "--out", str(out), "--results", str(tmp_path / "local")]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "sweep: " in text and "(tiny grid), 4 points, base the inline [base]" in text
    want = [ace.simulate(**sweep_point(*p)) for p in POINTS]
    lines = [line for line in text.splitlines() if re.match(r"^ [ *~] +\d+  ", line)]
    assert len(lines) == 4
    best = max(range(4), key=lambda k: want[k].pooled_ettr())
    for k, (line, res) in enumerate(zip(lines, want, strict=True)):
        value = res.pooled_ettr()
        interval = "30min"
        if k < 2:  # young resolves to its interval in that point's run
            resolved = float(res.jobs["checkpoint_interval"][0])
            assert (res.jobs["checkpoint_interval"] == resolved).all()
            interval = f"young ({resolved / 60:.3g} min)"
        assert line[1] == ("*" if k == best else line[1])
        cells = line[3:].split("  ")
        cells = [c.strip() for c in cells if c.strip()]
        assert cells[:4] == [str(k), interval, ["5d", "20d"][k % 2], f"{value:.4f}"]
        assert_same(results_io.load_result(tmp_path / "local" / f"point-{k}.npz"), res)
    assert [line[1] for line in lines].count("*") == 1
    assert f"* best: point {best} (" in text
    assert "~ plausible (not significantly below it, paired 95% intervals)" in text
    tables, meta = results_io.load_tables(out, kind="acesim-sweep")
    grid = tables["points"]
    assert grid is not None
    assert grid["jobs[0].checkpoint_interval"].tolist() == ["young", "young", "30min", "30min"]
    assert grid["fleet.node_failures.mean"].tolist() == ["5d", "20d", "5d", "20d"]
    assert grid["ettr"].tolist() == [r.pooled_ettr() for r in want]
    assert grid["ettr_low"].tolist() == [r.ettr().low for r in want]
    assert grid["failures_per_replica"].tolist() == [
        r.summary()["failures_per_replica"] for r in want
    ]
    assert grid["result"].tolist() == [f"point-{k}.npz" for k in range(4)]
    assert meta["provenance"]["sweep"]["axes"]["fleet"]["node_failures"]["mean"] == ["5d", "20d"]


def test_sweep_shows_what_young_resolved_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base job at Young's interval, swept over the failures' spacing:
    each point's column says sqrt(2 x 60 s x MTBF), 774.6 s (12.9 min) at
    5000 s and 1549.2 s (25.8 min) at 20000 s."""
    base = HAND.replace('checkpoint_interval = "1h"', 'checkpoint_interval = "young"')
    write(tmp_path, "hand.toml", base)
    path = write(
        tmp_path, "s.toml", 'base = "hand.toml"\n[axes]\n"failures.value" = [5000, 20000]\n'
    )
    assert main(["sweep", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.match(r"^ +# +failures\.value +jobs\[0\] young +ETTR", lines[3])
    assert re.match(r"^ [ *~] +0  5000 +12\.9 min ", lines[4])
    assert re.match(r"^ [ *~] +1  20000 +25\.8 min ", lines[5])


@pytest.fixture(scope="module")
def dask_address() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_sweep_results_are_byte_identical_on_every_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str, request: Any
) -> None:
    path = write(tmp_path, "grid.toml", SWEEP)
    local, other = tmp_path / "local", tmp_path / "other"
    local.mkdir()
    other.mkdir()
    assert main(["sweep", str(path), "--results", str(local)]) == 0
    where = (
        ["--processes", "2"]
        if executor == "processes"
        else ["--dask", request.getfixturevalue("dask_address")]
    )
    with worker_path():
        assert main(["sweep", str(path), "--results", str(other), *where]) == 0
    out = capsys.readouterr().out
    assert out.count("95% CI") == 2  # two tables
    for k in range(4):
        a = results_io.load_result(local / f"point-{k}.npz")
        b = results_io.load_result(other / f"point-{k}.npz")
        assert_same(a, b)
        assert (local / f"point-{k}.npz").stat().st_size > 0


def test_sweep_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "grid.toml", SWEEP.replace('"30min"]', '"30 lightyears"]'))
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'acesim: error: {path}:16: axes."jobs[0].checkpoint_interval"[1]: ')
    assert err.count("\n") == 1
    ok = write(tmp_path, "ok.toml", SWEEP)
    assert code_of(["sweep", str(ok), "--processes", "2", "--dask", "tcp://x:1"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["sweep", str(ok), "--dask", "tcp://127.0.0.1:9", "--dask-timeout", "1"]) == 2
    assert "--dask: cannot reach the scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err
    assert main(["sweep", str(ok), "--results", str(tmp_path / "nope")]) == 2
    assert "--results" in capsys.readouterr().err


# --------------------------------------------------------------------------
# acesim compare
# --------------------------------------------------------------------------

SYNC = """\
[run]
replicas = 60
seed = 11
[[jobs]]
gpus = 1024
work = "2d"
checkpoint_interval = "30min"
save = "3.5min"
"""
ASYNC = SYNC.replace('save = "3.5min"', 'save = "30s"\npersist = "3min"')


def test_compare_a_pair_with_a_known_sign(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An asynchronous checkpoint stalls 30 s where the synchronous one
    stalls 3.5 min: on the same failures its ETTR is higher."""
    a = write(tmp_path, "sync.toml", SYNC)
    b = write(tmp_path, "async.toml", ASYNC)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    res_a = ace.load_scenario(a).run()
    res_b = ace.load_scenario(b).run()
    d = ace.compare(res_a, res_b)["ettr"]
    assert d.low > 0
    assert str(ace.compare(res_a, res_b)) in out
    assert out.rstrip().endswith(
        f"ETTR b - a = {d.diff:+.4f}, 95% interval [{d.low:+.4f}, {d.high:+.4f}]: "
        "significant: b has the higher ETTR"
    )
    assert main(["compare", str(b), str(a), "--ci", "0.9"]) == 0
    assert "significant: a has the higher ETTR" in capsys.readouterr().out


def test_compare_refuses_unpaired_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path, "sync.toml", SYNC)
    b = write(tmp_path, "async.toml", ASYNC.replace("seed = 11", "seed = 12"))
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "differ in seed (11 vs 12): a paired comparison needs common random numbers" in err
    assert "pass --seed and --replicas" in err
    c = write(tmp_path, "c.toml", ASYNC.replace("seed = 11", "seed = 12").replace("= 60", "= 9"))
    assert main(["compare", str(a), str(c), "--seed", "3"]) == 2
    assert "differ in replicas (60 vs 9)" in capsys.readouterr().err
    assert main(["compare", str(a), str(c), "--seed", "3", "--replicas", "20"]) == 0
    assert "20 replicas each, seed 3" in capsys.readouterr().out


def test_run_set_overrides_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--set PATH=VALUE as a sweep's axes name a key: with failures every
    20000 s the 3-hour job never fails: 120 s of load, three hours of
    compute, three 1-minute saves (the last ends the job): ETTR 10800/11100."""
    path = write(tmp_path, "hand.toml", HAND)
    argv = ["run", str(path), "--set", "failures.value=20000", "--set", "run.replicas=2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 job, 2 replicas, seed 1" in out
    assert f"ETTR {10800 / 11100:.4f}" in out
    assert "failures/replica 0.00" in out
    # a value that is not TOML is its text, a duration here: two 90-minute
    # segments and two saves after the load
    argv += ["--set", "jobs[0].checkpoint_interval=90min"]
    assert main(argv) == 0
    assert f"ETTR {10800 / 11040:.4f}" in capsys.readouterr().out
    for bad, said in [
        ("nope", "--set nope: expected PATH=VALUE"),
        ("jobs[0]..work=1", "--set jobs[0]..work=1: a key must be a dotted path"),
        ("jobs[0].gpus=x", "command line: jobs[0].gpus:"),
        ("jobs[3].gpus=8", "jobs[3]"),
    ]:
        assert main(["run", str(path), "--set", bad]) == 2
        assert said in capsys.readouterr().err


def test_help_pages_end_with_examples_and_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    from acesim.cli import EXAMPLES, SCENARIO_DOCS

    for command, examples in EXAMPLES.items():
        assert code_of([command, "--help"]) == 0
        page = capsys.readouterr().out
        tail = page[page.index("\nexamples:\n") :]
        for example in examples:
            assert f"\n  {example}\n" in tail, (command, example)
        assert page.rstrip().endswith(f"the scenario file format: {SCENARIO_DOCS}")


def test_bare_acesim_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: acesim")
    assert "acesim COMMAND --help" in err


# --------------------------------------------------------------------------
# acesim fit --scenario
# --------------------------------------------------------------------------


@pytest.fixture
def sacct(tmp_path: Path) -> Path:
    fleet = ace.Fleet(16, spares=1, repair=ace.Constant(600.0))
    jobs = [ace.Job(32, 3 * DAY, HOUR, submit=k * 600.0) for k in range(4)]
    res = ace.simulate(
        jobs, failures=ace.Exponential(6 * HOUR), fleet=fleet, seed=4, record_events=True
    )
    path = tmp_path / "sacct.txt"
    history.write_sacct(res, path)
    return path


def test_fit_writes_the_fitted_model(
    tmp_path: Path, sacct: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "model.toml"
    assert main(["fit", str(sacct), "--by", "job", "--scenario", str(out)]) == 0
    assert f"fitted model written to {out} (no jobs: add them)" in capsys.readouterr().out
    text = out.read_text()
    assert text.startswith(f"# acesim {ace.__version__} fit of {sacct}; durations in seconds.")
    model = history.read_sacct(sacct).to_model(by="job")
    scenario = ace.load_scenario(out)
    assert not scenario.has_jobs
    kw = scenario._built.kwargs
    assert repr(kw["failures"]) == repr(model["failures"])
    assert repr(kw["fleet"]) == repr(model["fleet"])
    assert [repr(c) for c in kw["causes"]] == [repr(c) for c in model["causes"]]
    assert main(["run", str(out)]) == 2
    assert "no jobs: add [[jobs]] tables" in capsys.readouterr().err
    # with a job: it runs, as simulate does with to_model's arguments
    out2 = tmp_path / "with_job.toml"
    argv = ["fit", str(sacct), "--by", "job", "--scenario", str(out2)]
    argv += ["--job-gpus", "64", "--job-work", "2d", "--family", "weibull"]
    assert main(argv) == 0
    capsys.readouterr()
    model = history.read_sacct(sacct).to_model(by="job", family="weibull")
    res = ace.load_scenario(out2).run(replicas=5)
    assert_same(res, ace.simulate(ace.Job(64, 2 * DAY, "daly", name="job"), **model, replicas=5))


def test_fit_scenario_errors(
    tmp_path: Path, sacct: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "m.toml")
    assert main(["fit", str(sacct), "--by", "system", "--scenario", out]) == 2
    assert "fitted by node or by job, not by 'system'" in capsys.readouterr().err
    assert main(["fit", str(sacct), "--scenario", out, "--job-gpus", "8"]) == 2
    assert "--job-gpus and --job-work go together" in capsys.readouterr().err
    assert main(["fit", str(sacct), "--family", "gamma"]) == 2
    assert "go with --scenario" in capsys.readouterr().err
    assert (
        code_of(["fit", str(sacct), "--scenario", out, "--job-gpus", "8", "--job-work", "2x"]) == 2
    )
    assert "--job-work must be a number of seconds" in capsys.readouterr().err


NODE_LOG = """\
timestamp,node
2024-01-01T00:00:00Z,n1
2024-01-01T01:00:00Z,n2
2024-01-01T02:30:00Z,n1
2024-01-01T05:00:00Z,n2
2024-01-01T06:00:00Z,n1
"""


def test_fit_scenario_needs_a_fleet_the_job_fits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log names 2 nodes of (a default) 8 GPUs: a 64-GPU job never fits
    them, so fit refuses and writes nothing, until --nodes gives the
    fleet's size; every value the log did not give is marked."""
    log = write(tmp_path, "log.csv", NODE_LOG)
    out = tmp_path / "model.toml"
    argv = ["fit", str(log), "--scenario", str(out), "--job-gpus", "64", "--job-work", "2d"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "has 2 nodes of 8 GPUs (16 GPUs, the nodes the log names)" in err
    assert "--nodes N" in err and not out.exists()
    assert main([*argv, "--nodes", "16", "--replicas", "7"]) == 0
    printed = capsys.readouterr().out
    assert "values not from the log (marked in the file):" in printed
    assert '   fleet.repair = {law = "exponential", mean = 3600.0}: a default' in printed
    assert "   fleet.nodes = 16: from --nodes (the log names 2 nodes)" in printed
    assert "run.replicas" not in printed  # given
    lines = out.read_text().splitlines()
    above: dict[str, str] = {}  # each key's first line: the line above it
    for k in range(len(lines) - 1):
        above.setdefault(lines[k + 1].split(" = ")[0], lines[k])
    assert above["repair"] == '# {law = "exponential", mean = 3600.0}: a default, not from the log'
    assert above["gpus_per_node"] == "# 8: a default, not from the log"
    assert above["node_start"] == '# "stationary": a default, not from the log'
    assert above["detect"] == '# {law = "constant", value = 0.0}: a default, not from the log'
    assert above["nodes"] == "# 16: from --nodes (the log names 2 nodes)"
    assert "node_failures" not in above or not above["node_failures"].startswith("#")
    scenario = ace.load_scenario(out)
    assert scenario.replicas == 7
    assert scenario._built.kwargs["fleet"].nodes == 16
    assert scenario.run(replicas=2).replicas == 2
    # without --replicas the file says fit's default, marked
    assert main(["fit", str(log), "--scenario", str(out)]) == 0
    assert "   run.replicas = 100: acesim fit's default (--replicas N)" in capsys.readouterr().out
    assert ace.load_scenario(out).replicas == 100
    assert main(["fit", str(log), "--nodes", "4"]) == 2
    assert "go with --scenario" in capsys.readouterr().err


# --------------------------------------------------------------------------
# Every bad input: a non-zero exit and one line naming the problem
# --------------------------------------------------------------------------

GOOD = "[run]\nreplicas = 2\n[[jobs]]\ngpus = 8\nwork = '6h'\ncheckpoint_interval = '1h'\n"
PROBLEMS = {
    # name: (scenario text, what the message names)
    "bad TOML": (GOOD + "[jobs\n", r"bad\.toml:7: invalid TOML"),
    "bad unit": (GOOD.replace("'6h'", "'6 hrz'"), r"bad\.toml:5: jobs\[0\]\.work: work must be"),
    "unknown key": (GOOD + "[policy]\nbackfil = 'easy'\n",
                    r"bad\.toml:8: policy\.backfil: unknown key .*did you mean 'backfill'"),
    "wrong type": (GOOD.replace("gpus = 8", "gpus = [8]"),
                   r"bad\.toml:4: jobs\[0\]\.gpus: must be an integer, got an array"),
    "out of range": (GOOD.replace("replicas = 2", "replicas = -1"),
                     r"bad\.toml:2: run\.replicas: replicas must be >= 1, got -1"),
    "missing csv": (GOOD + "[failures]\nlaw = 'empirical'\ncsv = 'gone.csv'\n",
                    r"bad\.toml:9: failures\.csv: no such file: .*gone\.csv"),
    "no jobs": ("[fleet]\nnodes = 3\n", r"bad\.toml: no jobs: add \[\[jobs\]\]"),
}  # fmt: skip


def commands(path: Path, other: Path) -> dict[str, list[str]]:
    sweep = path.with_name("sweep.toml")
    sweep.write_text(f'base = "{path.name}"\n[axes]\n"run.seed" = [1, 2]\n')
    return {
        "run": ["run", str(path)],
        "sweep": ["sweep", str(sweep)],
        "compare a": ["compare", str(path), str(other)],
        "compare b": ["compare", str(other), str(path)],
    }


@pytest.mark.parametrize("problem", list(PROBLEMS))
@pytest.mark.parametrize("command", ["run", "sweep", "compare a", "compare b"])
def test_bad_inputs_exit_non_zero_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str, command: str
) -> None:
    text, message = PROBLEMS[problem]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    other = write(tmp_path, "good.toml", GOOD)
    argv = commands(path, other)[command]
    assert code_of(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("acesim: error: ")
    assert re.search(message, captured.err), captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "{tmp}/missing.toml"], r"missing\.toml: no such scenario file"),
        (["sweep", "{tmp}/missing.toml"], r"missing\.toml: no such sweep file"),
        (["compare", "{tmp}/missing.toml", "{tmp}/missing.toml"], "no such scenario file"),
        (["fit", "{tmp}/missing.csv"], r"missing\.csv does not exist"),
        (["run", "{good}", "--replicas", "many"], r"argument --replicas: invalid int value"),
        (["run", "{good}", "--horizon", "30 parsecs"], r"--horizon must be a number of seconds"),
        (["run", "{good}", "--ci", "95"], r"argument --ci: must be in \(0, 1\)"),
        (["run", "{good}", "--out", "{tmp}/x.xlsx"], r"--out .*one of \.npz, \.parquet"),
        (["run", "{good}", "--out", "{tmp}/no/dir/x.npz"], r"no such folder"),
        (["run", "{good}", "--threads", "0"], r"command line: run\.threads: threads must be >= 1"),
        (["run"], r"the following arguments are required: scenario"),
        (["sweep", "{good}"], r"good\.toml: a scenario, not a sweep file"),
        (["report", "{tmp}/missing.npz"], r"missing\.npz"),
        (["report", "{good}"], r"good\.toml"),
        (["report", "{tmp}/garbage.npz"], r"garbage\.npz"),
        (["report"], r"the following arguments are required: RESULTS"),
        (["demo", "--replicas", "0"], r"replicas"),
        (["interval", "60", "-5"], r"mtbf"),
    ],
)
def test_bad_command_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    good = write(tmp_path, "good.toml", GOOD)
    (tmp_path / "garbage.npz").write_bytes(b"not a zip archive")
    argv = [a.format(tmp=tmp_path, good=good) for a in argv]
    assert code_of(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert re.search(message, err), err


def test_processes_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "good.toml", GOOD)
    sweep = write(tmp_path, "s.toml", 'base = "good.toml"\n[axes]\n"run.seed" = [1]\n')
    assert main(["sweep", str(sweep), "--processes", "0"]) == 2
    assert "--processes must be >= 1, got 0" in capsys.readouterr().err


def test_help_lists_the_scenario_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert code_of(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("run", "sweep", "compare", "report", "fit", "demo"):
        assert re.search(rf"^    {command} +\S", out, re.M), command
    assert code_of(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--replicas", "--seed", "--threads", "--horizon", "--out", "--no-progress"):
        assert option in out


def test_report_of_saved_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``acesim run --out`` then ``acesim report``: one HTML page naming both
    results, with a figure per section and the comparison of the two."""
    pytest.importorskip("matplotlib")
    good = write(tmp_path, "good.toml", GOOD)
    other = write(tmp_path, "other.toml", GOOD.replace("'1h'", "'30min'"))
    arrow = importlib.util.find_spec("pyarrow") is not None
    files = [str(tmp_path / "a.npz"), str(tmp_path / ("b.parquet" if arrow else "b.json"))]
    for scenario, out in zip((good, other), files, strict=True):
        assert main(["run", str(scenario), "--out", out, "--no-progress"]) == 0
    page = tmp_path / "r.html"
    assert main(["report", *files, "-o", str(page), "--title", "two intervals"]) == 0
    assert f"report written to {page}" in capsys.readouterr().out
    html = page.read_text(encoding="utf-8")
    assert "two intervals" in html and html.count("data:image/png;base64,") >= 3
    assert 'id="comparison"' in html and "acesim_version" in html
