"""``acesim tune``: the example's chosen scenario runs as is with ``acesim
run``, its ``--out`` table loads and ``acesim report`` marks the chosen
candidate; a ``[tune]`` table is data, checked against its allow-list."""

from __future__ import annotations

import re
from pathlib import Path

import acesim as ace
import pytest
from acesim.cli import main
from acesim.search import load_tune

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tune.toml"


def test_tune_the_example_then_run_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    best = tmp_path / "best.toml"
    table = tmp_path / "t.npz"
    assert main(["tune", str(EXAMPLE), "--scenario", str(best), "--out", str(table),
                 "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert re.search(r"^ +1  1 +[0-9.]+ +\[[0-9., ]+\] +\d+  <- chosen$", out, re.M), out
    assert "With probability at least 0.95" in out
    # The chosen policy as a scenario file that acesim run runs as it is.
    scenario = ace.load_scenario(best)
    assert scenario.to_dict()["fleet"]["spares"] == 1
    assert main(["run", str(best), "--replicas", "8", "--no-progress"]) == 0
    assert "ETTR" in capsys.readouterr().out
    result = load_tune(table)
    assert result.best == {"fleet.spares": 1}
    assert result.table["chosen"].tolist() == [False, True, False, False]
    pytest.importorskip("matplotlib")
    page = tmp_path / "t.html"
    assert main(["report", str(table), "-o", str(page)]) == 0
    text = page.read_text()
    chosen = re.findall(r'<tr class="chosen"><td class="num">(\d+)</td><td>([^<]*)</td>', text)
    assert chosen == [("1", "1")]
    assert '<img src="data:image/png;base64,' in text
    assert "<script" not in text


def test_vary_a_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.toml"
    path.write_text(
        '[[jobs]]\ngpus = 8\nwork = "10h"\ncheckpoint_interval = "1h"\n'
        'init = "1min"\nsave = "1min"\nload = "1min"\nfailures = "none"\n'
    )
    code = main(["tune", str(path), "--vary", "jobs[0].checkpoint_interval=1h,2h,5h",
                 "--no-progress"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    # No failures: the fewest saves win (5 h).
    assert re.search(r"^ +2  5h .*<- chosen$", out, re.M), out


@pytest.mark.parametrize(
    ("tune_table", "message"),
    [
        ('objectiv = "ettr"', "unknown key 'objectiv' in tune"),
        ('objective = "cost"\ncost = {gpu_hours = 1.0}', "unknown price 'gpu_hours'"),
        ('objective = "cost"\ncost = {gpu_hour = -1.0}', "gpu_hour must be finite and >= 0"),
        ('subject_to = "ettr >= __import__(1)"\nminimize = "fleet.spares"', "subject_to"),
        ("confidence = 2", "confidence must be in"),
    ],
)
def test_tune_table_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tune_table: str, message: str
) -> None:
    text = EXAMPLE.read_text()
    head = text[: text.index("[tune]")]
    path = tmp_path / "t.toml"
    path.write_text(head + "[tune]\n" + tune_table + "\n")
    assert main(["tune", str(path), "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_no_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.toml"
    path.write_text('[[jobs]]\ngpus = 8\nwork = "10h"\ncheckpoint_interval = "1h"\n')
    assert main(["tune", str(path)]) == 2
    assert "no space" in capsys.readouterr().err
    assert main(["tune", str(path), "--vary", "jobs[0].checkpoint_intervl=1h,2h"]) == 2
    assert "did you mean 'checkpoint_interval'" in capsys.readouterr().err
