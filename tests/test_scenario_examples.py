"""Every scenario in ``examples/`` runs from the command line as its header
says (``python -m acesim run examples/x.toml``, a sweep file with ``acesim
sweep``, the pair with ``acesim compare``) and prints a sane table. The
examples that read ``../shared/data`` skip when it is absent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import acesim as ace
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = ROOT.parent / "shared" / "data"
TOMLS = sorted(EXAMPLES.glob("*.toml"))
#: replicas for the runs here: enough for an interval, small enough to be quick
SMALL = "12"


def is_sweep(path: Path) -> bool:
    return re.search(r"^\[axes\]", path.read_text(), re.M) is not None


def needs_data(path: Path) -> bool:
    return "shared/data" in path.read_text()


def acesim(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(ace.__file__).resolve().parents[1]), env.get("PYTHONPATH")) if p
    )
    env.pop("CI", None)
    return subprocess.run(
        [sys.executable, "-m", "acesim", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=300,
    )


def skip_without_data(path: Path) -> None:
    if needs_data(path) and not DATA.is_dir():
        pytest.skip(f"{path.name} reads ../shared/data, which is absent")


def test_the_examples_cover_every_feature() -> None:
    """The format's features each appear in some example."""
    text = "\n".join(p.read_text() for p in TOMLS)
    for feature in (
        'law = "empirical"',  # a job on a recorded history
        "spares",
        "quarantine",
        "[fleet.repair]",
        "[[causes]]",
        "persist",  # asynchronous checkpoints
        "[[jobs.tiers]]",  # multi-level checkpoints
        "min_gpus",  # elastic
        "slowdown",  # slow failures
        "[workload]",
        "history =",  # a history-fitted law
        "[axes]",  # a sweep file
        "on_failure",
        "maintenance",
        "rate_windows",
        "cold_spares",
        'law = "scale_aware"',
        "count =",
    ):
        assert feature in text, feature
    assert any(is_sweep(p) for p in TOMLS)
    assert {"compare_sync.toml", "compare_async.toml"} <= {p.name for p in TOMLS}


@pytest.mark.parametrize("path", [p for p in TOMLS if not is_sweep(p)], ids=lambda p: p.name)
def test_run_every_example(path: Path) -> None:
    skip_without_data(path)
    done = acesim("run", str(path.relative_to(ROOT)), "--replicas", SMALL)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    m = re.search(r"^ETTR ([0-9.]+)  95% CI \[([0-9.]+), ([0-9.]+)\]$", out, re.M)
    assert m is not None, out
    value, low, high = (float(x) for x in m.groups())
    assert 0.0 < value <= 1.0 and low <= value <= high
    shares = [float(x) for x in re.findall(r"^   [a-z_]+ +([0-9.]+)% +[0-9,.]+$", out, re.M)]
    *buckets, wall = shares
    assert wall == 100.0 and sum(buckets) == pytest.approx(100.0, abs=0.06)
    assert re.search(r"^failures/replica [0-9.]+; GPU-hours lost/replica [0-9,.]+;", out, re.M)
    assert f"{SMALL} replicas" in out
    scenario = ace.load_scenario(path)
    assert scenario.description is None or scenario.description in out


@pytest.mark.parametrize("path", [p for p in TOMLS if is_sweep(p)], ids=lambda p: p.name)
def test_sweep_every_sweep_example(path: Path) -> None:
    skip_without_data(path)
    done = acesim("sweep", str(path.relative_to(ROOT)), "--replicas", SMALL)
    assert done.returncode == 0, done.stderr
    # each point's row; the best marked *, the points not told from it ~
    rows = re.findall(r"^ [ *~] +\d+  .* ([0-9.]+)  \[([0-9.]+), ([0-9.]+)\] ", done.stdout, re.M)
    grid = ace.scenario.load_sweep(path)
    assert len(rows) == len(grid.points) > 1
    assert re.search(r"^\* best: point \d+ \(", done.stdout, re.M)
    for value, low, high in rows:
        assert 0.0 < float(value) <= 1.0 and float(low) <= float(value) <= float(high)


def test_compare_the_pair() -> None:
    done = acesim(
        "compare", "examples/compare_sync.toml", "examples/compare_async.toml", "--replicas", "40"
    )
    assert done.returncode == 0, done.stderr
    assert "significant: b has the higher ETTR" in done.stdout
