"""A user's own cluster log, end to end from the command line, with no
file edited by hand: a ``timestamp,node`` log with ``Z`` times (each row a
node failure) is fitted into a scenario for a job larger than the nodes the
log names (``--nodes``), which runs, sweeps and makes a report."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import acesim as ace
import numpy as np
import pytest
from acesim.cli import main

START = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
DAY = 86400.0


def made_up_log(path: Path) -> int:
    """12 nodes failing at Weibull(shape 0.8, scale 20 d) gaps over 90
    days, written as a cluster's log would be; the number of rows."""
    rng = np.random.default_rng(7)
    rows = []
    for node in range(12):
        t = 0.0
        while True:
            t += 20 * DAY * rng.weibull(0.8)
            if t > 90 * DAY:
                break
            stamp = (START + dt.timedelta(seconds=round(t))).strftime("%Y-%m-%dT%H:%M:%SZ")
            rows.append((stamp, f"gpu-{node:03d}"))
    rows.sort()
    path.write_text("timestamp,node\n" + "".join(f"{t},{n}\n" for t, n in rows))
    return len(rows)


def test_a_users_log_from_fit_to_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    log = tmp_path / "cluster.csv"
    rows = made_up_log(log)
    model = tmp_path / "model.toml"

    # fit: 12 nodes of 8 GPUs cannot hold a 256-GPU job: refused until --nodes
    fit = ["fit", str(log), "--by", "node", "--scenario", str(model)]
    fit += ["--job-gpus", "256", "--job-work", "2d", "--replicas", "8"]
    assert main(fit) == 2
    assert "--nodes N" in capsys.readouterr().err and not model.exists()
    assert main([*fit, "--nodes", "64"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"samples: (\d+) node intervals \(wall clock\), (\d+) failures", out)
    assert m is not None, out
    assert int(m[2]) <= rows  # the failures fitted: those after a node's first one
    assert "fleet.nodes = 64: from --nodes (the log names 12 nodes)" in out
    assert "fleet.repair = " in out  # a default, said so
    scenario = ace.load_scenario(model)
    assert scenario.replicas == 8 and scenario._built.kwargs["fleet"].nodes == 64

    # run it as written, then with a value changed on the command line
    results = tmp_path / "results.npz"
    assert main(["run", str(model), "--record-events", "--out", str(results)]) == 0
    out = capsys.readouterr().out
    assert "1 job, 8 replicas" in out and "ETTR" in out
    assert main(["run", str(model), "--set", "jobs[0].checkpoint_interval=30min"]) == 0
    capsys.readouterr()

    # sweep the interval over it
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        'base = "model.toml"\n[axes]\n"jobs[0].checkpoint_interval" = ["30min", "2h", "daly"]\n'
    )
    grid = tmp_path / "grid.csv"
    assert main(["sweep", str(sweep), "--out", str(grid)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"daly \([0-9.]+ (min|h)\)", out)  # what daly resolved to
    assert "* best: point " in out
    assert grid.exists()

    # the report names the scenario, and says what is absent and why
    report = tmp_path / "report.html"
    assert main(["report", str(results), "-o", str(report)]) == 0
    text = report.read_text()
    assert "fitted: cluster.csv" in text  # the scenario's name
    assert "No interval curve" in text
    # with the sweep's grid: the interval curve, its best point named
    assert main(["report", str(results), "-o", str(report), "--interval", str(grid)]) == 0
    text = report.read_text()
    assert "No interval curve" not in text and "Checkpoint interval (sweep)" in text  # alt
    assert re.search(r"the best point \((30min|2h|daly), ETTR [0-9.]+\)", text)
    # a log without repairs: the fitted failures leave nodes in service
    assert "No fleet timeline" in text and "in this run none does" in text
