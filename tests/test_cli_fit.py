"""``acesim fit FILE``: the ranked fits of a history file and what happened."""

from __future__ import annotations

from pathlib import Path

import acesim as ace
import pytest
from acesim import history
from acesim.cli import main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_fit_a_sacct_file_of_a_simulated_fleet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job-level Exponential(6 h) run written as Slurm would log it: the
    exponential family is among the fits and the measured buckets print."""
    fleet = ace.Fleet(16, spares=1, repair=ace.Constant(600.0))
    jobs = [ace.Job(32, 3 * ace.DAY, ace.HOUR, submit=k * 600.0) for k in range(4)]
    res = ace.simulate(
        jobs, failures=ace.Exponential(6 * ace.HOUR), fleet=fleet, seed=4, record_events=True
    )
    path = tmp_path / "sacct.txt"
    history.write_sacct(res, path)
    assert main(["fit", str(path), "--by", "job"]) == 0
    out = capsys.readouterr().out
    assert "| exponential |" in out and "| weibull |" in out
    assert "What happened" in out and "queue_wait" in out


@pytest.mark.skipif(
    not (DATA / "lanl_sys20_node_interfailure_s.csv").exists(), reason="../shared/data is absent"
)
def test_fit_a_shared_history(capsys: pytest.CaptureFixture[str]) -> None:
    """LANL system 20's per-node gaps: Weibull ranks first with a shape near
    the data README's 0.49."""
    assert main(["fit", str(DATA / "lanl_sys20_node_interfailure_s.csv")]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| weibull | shape = 0.4")


def test_fit_errors_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", str(tmp_path / "missing.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("JobID|State\n1|EXPLODED\n")
    assert main(["fit", str(bad)]) == 2
    assert "acesim: error:" in capsys.readouterr().err
