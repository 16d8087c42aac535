"""``acesim sensitivity``: the example runs (few points here, fully in the
slow suite), ``--factor`` forms, ``--out`` and ``acesim report`` of it, and
named errors."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import acesim as ace
import pytest
from acesim.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sensitivity.toml"
SLOW = os.environ.get("ACESIM_SLOW_PROPERTIES") == "1"

TINY = """
[run]
replicas = 2
[[jobs]]
gpus = 8
work = "10h"
checkpoint_interval = "1h"
init = "1min"
save = "1min"
load = "1min"
[failures]
law = "exponential"
mean = "5h"
"""


def _ranking(out: str) -> list[str]:
    m = re.search(r"^ranking: (.*)$", out, re.M)
    assert m is not None, out
    return m.group(1).split(", ")


def test_the_example_runs_with_few_points_and_reports(tmp_path: Path, capsys: Any) -> None:
    out_file = tmp_path / "s.npz"
    code = main(
        [
            *("sensitivity", str(EXAMPLE), "--trajectories", "2", "--replicas", "2"),
            *("--out", str(out_file), "--no-progress"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    spec = ace.load_scenario(EXAMPLE).to_dict()["sensitivity"]["factors"]
    assert sorted(_ranking(out)) == sorted(spec)
    assert "Morris elementary effects of ettr" in out and "2 replicas" in out
    saved = ace.SensitivityResult.load(out_file)
    assert list(saved.ranking) == _ranking(out) and saved.replicas == 2
    pytest.importorskip("matplotlib")
    html = tmp_path / "r.html"
    assert main(["report", str(out_file), "-o", str(html)]) == 0
    text = html.read_text()
    assert text.count("<img") == 1 and "<script" not in text
    assert "fleet.node_failures.mean" in text and "Ranked by mu_star" in text


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="set ACESIM_SLOW_PROPERTIES=1")
def test_the_example_runs_in_full_and_its_sobol_step(capsys: Any) -> None:
    assert main(["sensitivity", str(EXAMPLE), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert len(_ranking(out)) == 6 and "runs of 20 replicas" in out
    code = main(
        [
            *("sensitivity", str(EXAMPLE), "--method", "sobol", "--samples", "64"),
            *("--no-progress", "--factor", "fleet.node_failures.mean=log:5d..40d"),
            *("--factor", "jobs[0].checkpoint_interval=15min,30min,1h,2h"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "Sobol indices of ettr" in out
    assert _ranking(out)[0] == "fleet.node_failures.mean"


def test_factor_options_replace_the_table(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    code = main(
        [
            *("sensitivity", str(path), "--method", "sobol", "--samples", "8", "--no-progress"),
            *("--factor", "failures.mean=log:1h..20h", "--factor", "jobs[0].save=30,90"),
            *("--objective", "gpu_hours_lost", "--seed", "4"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert sorted(_ranking(out)) == ["failures.mean", "jobs[0].save"]
    assert "Sobol indices of gpu_hours_lost" in out and "seed 4" in out


@pytest.mark.parametrize(
    ("extra", "table", "message"),
    [
        ([], "", "no factors"),
        (["--factor", "fleet.spares"], "", "--factor must be PATH=LOW..HIGH"),
        (["--factor", "jobs[0].save=30"], "", "at least two levels"),
        (["--factor", "jobs[0].sav=30,90"], "", "did you mean 'save'"),
        (["--factor", "jobs[0].save=log:30,90"], "", "log: goes with a range"),
        ([], '[sensitivity]\nmethod = "fast"\n', "tiny.toml:15: sensitivity.method"),
        ([], "[sensitivity]\nsamples = 10\nsampels = 3\n", "did you mean 'samples'"),
        ([], "[sensitivity]\nfactors = 3\n", "must be a table of factors"),
        ([], '[sensitivity.factors]\n"jobs[0].save" = 30\n', "a factor is a range"),
    ],
)
def test_bad_input_is_named(
    tmp_path: Path, capsys: Any, extra: list[str], table: str, message: str
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY + table)
    assert main(["sensitivity", str(path), "--no-progress", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err, err


def test_the_table_is_read(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(
        TINY
        + "[sensitivity]\nmethod = 'morris'\ntrajectories = 3\nseed = 2\n"
        + "[sensitivity.factors]\n\"jobs[0].init.mean\" = {low = '1min', high = '5min'}\n"
        + "failures.mean = {low = '2h', high = '10h', log = true}\n"  # a dotted bare key
    )
    assert main(["sensitivity", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert sorted(_ranking(out)) == ["failures.mean", "jobs[0].init.mean"]
    assert "seed 2" in out
    # acesim run ignores the table
    assert main(["run", str(path)]) == 0


def test_ci_from_the_table_unless_given(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(
        TINY
        + "[sensitivity]\nmethod = 'morris'\ntrajectories = 2\nci = 0.8\n"
        + "[sensitivity.factors]\n\"jobs[0].init.mean\" = {low = '1min', high = '5min'}\n"
    )
    out_file = tmp_path / "s.npz"
    assert main(["sensitivity", str(path), "--no-progress", "--out", str(out_file)]) == 0
    assert ace.SensitivityResult.load(out_file).ci == 0.8
    out_file.unlink()
    assert (
        main(["sensitivity", str(path), "--no-progress", "--ci", "0.9", "--out", str(out_file)])
        == 0
    )
    assert ace.SensitivityResult.load(out_file).ci == 0.9
    capsys.readouterr()
