"""History.to_model's defaults and a back-test of a Slurm log: a log without
spells out of service gives no cause that takes a node down, so no repair
law is drawn and the back-test restarts jobs after the recorded gaps; a
family that cannot be fitted is reported as failed and the others ranked."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import history
from acesim.cli import main
from acesim.history import _analysis

HOUR = 3600.0
DAY = 86400.0
EPOCH = dt.datetime(2024, 1, 1)


def _stamp(seconds: float) -> str:
    return (EPOCH + dt.timedelta(seconds=int(seconds))).isoformat()


def _elapsed(seconds: float) -> str:
    d, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def _slurm_log(
    path: Path, *, jobs: int, mean: float, gap: int, days: float, seed: int
) -> list[int]:
    """A Slurm accounting log (``sacct --parsable2`` with
    :data:`history.SACCT_FIELDS`) of ``jobs`` 8-GPU jobs, one per node, from
    the start of the record to its end (``days``): each run lasts an
    Exponential(``mean``) draw in whole seconds, ends NODE_FAIL on its node,
    and the job starts again on that node ``gap`` seconds later; the last
    run is still RUNNING at the end. Returns each job's failure count."""
    rng = np.random.default_rng(seed)
    end = int(days * DAY)
    tres = "billing=8,cpu=64,gres/gpu=8,node=1"
    lines = ["|".join(history.SACCT_FIELDS)]
    failures = []
    for j in range(jobs):
        node, t, submit, count = f"gpu{j + 1:03d}", 0, 0, 0
        while True:
            life = max(1, round(float(rng.exponential(mean))))
            job = [str(100 + j), "train"]
            if t + life >= end:
                run = ["RUNNING", _stamp(submit), _stamp(t), "Unknown", _elapsed(end - t)]
                lines.append("|".join([*job, *run, "1", node, "", tres]))
                break
            run = ["NODE_FAIL", _stamp(submit), _stamp(t), _stamp(t + life), _elapsed(life)]
            lines.append("|".join([*job, *run, "1", node, node, tres]))
            count += 1
            submit, t = t + life, t + life + gap
        failures.append(count)
    path.write_text("\n".join(lines) + "\n")
    return failures


def _defaults(model: Any) -> dict[str, str]:
    """``model.defaults`` with each value by its repr (laws compare by it)."""
    return {k: repr(v) for k, v in model.defaults.items()}


def _waits_are_the_recorded_gaps(bt: Any) -> None:
    """Every simulated restart waited 120 s x 8 GPUs, and a failure with no
    restart (the end of the record came first) waited less: each replica's
    recovery_wait, in those units, is between its restarts and failures."""
    waits = bt.simulated["recovery_wait"] / (120 * 8 / HOUR)
    assert np.all(bt.simulated["restarts"] - 1e-9 <= waits), waits
    assert np.all(waits <= bt.simulated["failures"] + 1e-9), waits


def test_a_slurm_log_back_test_draws_the_recorded_restart_gaps(tmp_path: Path) -> None:
    """Four 8-GPU jobs on their own nodes for 30 days, each run ending in a
    NODE_FAIL after an Exponential(6 h) of holding its node, every restart
    120 s after the failure (seed 1: 482 failures, so 482 gaps). sacct
    records no spell out of service, so no cause of the model takes a node
    down: no repair law is drawn (the fleet's default Exponential(1 h) is
    listed in ``.defaults``), and the replay restarts each interrupted job
    after a resampled recorded gap, 120 s every time.

    Measured recovery_wait: 482 gaps x 120 s x 8 GPUs / 3600 = 128.53
    GPU-h. Each replica waits 120 s x 8 GPUs per restart, so its
    recovery_wait is its restarts x 0.2667 GPU-h (and less than 120 s more
    for a job that failed within 120 s of the record's end); the fitted
    model's failures give 20 replicas whose 90% band covers 128.53 (20 of
    20 generated logs of seeds 1-20 covered). Before, the NODE_FAIL cause
    sent nodes to the default 1-hour repairs: [3,069, 3,532] GPU-h."""
    path = tmp_path / "sacct.txt"
    failures = _slurm_log(path, jobs=4, mean=6 * HOUR, gap=120, days=30, seed=1)
    span = (EPOCH.isoformat(), (EPOCH + dt.timedelta(days=30)).isoformat())
    h = history.read_sacct(path, span=span)
    gaps = history.restart_gaps(h)
    assert gaps.size == sum(failures) == 482 and np.all(gaps == 120.0)
    model = h.to_model()
    assert isinstance(model, dict) and model["failures"] is not None
    assert [(c.name, c.node_down) for c in model["causes"]] == [("NODE_FAIL", False)]
    assert _defaults(model) == {
        "fleet.repair": "Exponential(mean=3600.0)",
        "fleet.node_start": "'stationary'",
        "causes[0].detect": "Constant(value=0.0)",
    }
    bt = h.backtest(model, replicas=20, seed=0)
    rows = {str(r["bucket"]): r for r in bt.table}
    measured = 482 * 120 * 8 / HOUR
    assert rows["recovery_wait"]["measured"] == pytest.approx(measured, rel=1e-12)
    assert rows["recovery_wait"]["covered"] and rows["failures"]["covered"]
    _waits_are_the_recorded_gaps(bt)
    # the default model is the same
    default = h.backtest(replicas=20, seed=0)
    np.testing.assert_array_equal(default.table, bt.table)


def _event_log(path: Path, *, spells: bool) -> None:
    """Job a (8 GPUs) on two nodes, by hand. A GPU fault at 3,000 s on n0
    (detected at 3,060 s), the job again at 3,060 s on n1; a fault at
    8,060 s on n1 (detected at 8,120 s), the job again at 8,120 s on n0,
    done at 20,000 s. With ``spells``: n0 out of service 3,000-4,800 s, n1
    8,060-11,660 s."""
    events: list[dict[str, Any]] = [
        {"time": 0, "kind": "log_start", "nodes": "n[0-1]"},
        {"time": 0, "kind": "job_submit", "job": "a", "gpus": 8},
        {"time": 0, "kind": "job_start", "job": "a", "nodes": ["n0"]},
        {"time": 3000, "kind": "job_failure", "job": "a", "nodes": ["n0"], "cause": "GPU"},
        {"time": 3000, "kind": "node_down", "node": "n0", "cause": "GPU"},
        {"time": 3060, "kind": "job_stop", "job": "a", "state": "NODE_FAIL"},
        {"time": 3060, "kind": "job_start", "job": "a", "nodes": ["n1"]},
        {"time": 4800, "kind": "node_up", "node": "n0"},
        {"time": 8060, "kind": "job_failure", "job": "a", "nodes": ["n1"], "cause": "GPU"},
        {"time": 8060, "kind": "node_down", "node": "n1", "cause": "GPU"},
        {"time": 8120, "kind": "job_stop", "job": "a", "state": "NODE_FAIL"},
        {"time": 8120, "kind": "job_start", "job": "a", "nodes": ["n0"]},
        {"time": 11660, "kind": "node_up", "node": "n1"},
        {"time": 20000, "kind": "job_stop", "job": "a", "state": "COMPLETED"},
        {"time": 20000, "kind": "log_end"},
    ]
    if not spells:
        events = [e for e in events if e["kind"] not in ("node_down", "node_up", "log_start")]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.mark.parametrize("spells", [True, False], ids=["spells", "no-spells"])
def test_to_model_lists_the_values_it_filled_from_defaults(tmp_path: Path, spells: bool) -> None:
    """The hand log of :func:`_event_log`, fitted by job with the
    exponential family: held time 3,000 + 5,000 + 11,880 s (censored) over
    2 failures, mean 9,940 s; 2 nodes of 8 GPUs (its runs: 8 GPUs on one
    node); detection 60 s both times (Constant(60), from the log).

    With the spells out of service: repair Exponential((1,800 + 3,600) / 2
    = 2,700 s) and the GPU cause takes its node down; the only default is
    the fleet's stationary start. Without them: the cause leaves nodes in
    service and the repair law is the fleet's default Exponential(3,600 s),
    listed with the start."""
    path = tmp_path / "log.jsonl"
    _event_log(path, spells=spells)
    model = history.read_events(path).to_model(by="job", family="exponential")
    assert repr(model["failures"]) == "Exponential(mean=9940.0)"
    fleet = model["fleet"]
    assert (fleet.nodes, fleet.gpus_per_node, fleet.node_failures) == (2, 8, None)
    (cause,) = model["causes"]
    assert (cause.name, repr(cause.detect)) == ("GPU", "Constant(value=60.0)")
    if spells:
        assert repr(fleet.repair) == "Exponential(mean=2700.0)" and cause.node_down
        assert _defaults(model) == {"fleet.node_start": "'stationary'"}
    else:
        assert repr(fleet.repair) == "Exponential(mean=3600.0)" and not cause.node_down
        assert _defaults(model) == {
            "fleet.repair": "Exponential(mean=3600.0)",
            "fleet.node_start": "'stationary'",
        }
    # still the simulate keyword dict
    assert set(model) == {"failures", "fleet", "causes"}
    res = ace.simulate(ace.Job(8, work=DAY, checkpoint_interval=HOUR), seed=1, **model)
    assert res.jobs["failures"].sum() > 0


def test_to_model_of_a_source_without_nodes_lists_the_fleet_size(tmp_path: Path) -> None:
    """Philly names no nodes and no GPUs per node: the fleet's 1 node of 8
    GPUs are defaults, with its repair, start and the cause's detection
    (attempts of 100 s and 50 s failed, 20 s and 30 s restart gaps)."""
    attempts = tmp_path / "philly_interrupted_attempt_runtime_s.csv"
    attempts.write_text(
        "job_id,num_gpus,size_class,attempt,attempt_runtime_s,restart_gap_s\n"
        "a,8,5-8,1,100,20\n"
        "a,8,5-8,2,50,30\n"
    )
    (tmp_path / "philly_pass_jobs_ge2gpu.csv").write_text(
        "job_id,submitted_time,num_gpus,size_class,n_attempts,wall_s,sum_attempt_s,final_status\n"
        "a,2017-10-01 00:00:00,8,5-8,3,1200,1150,Pass\n"
    )
    model = history.read_philly(attempts).to_model()
    assert [c.node_down for c in model["causes"]] == [False]
    names = [c.name for c in model["causes"]]
    assert _defaults(model) == {
        "fleet.nodes": "1",
        "fleet.gpus_per_node": "8",
        "fleet.repair": "Exponential(mean=3600.0)",
        "fleet.node_start": "'stationary'",
        "causes[0].detect": "Constant(value=0.0)",
    }, names


def test_a_node_level_model_without_spells_takes_no_node_down(tmp_path: Path) -> None:
    """By node, the fitted law is each node's: without spells its failures
    leave their node in service too (the causes say so), so the back-test
    still draws the recorded restart gaps (120 s x 8 GPUs per restart)."""
    path = tmp_path / "sacct.txt"
    _slurm_log(path, jobs=3, mean=6 * HOUR, gap=120, days=10, seed=2)
    h = history.read_sacct(path)
    model = h.to_model(by="node", family="exponential")
    assert model["fleet"].node_failures is not None
    assert not any(c.node_down for c in model["causes"])
    bt = h.backtest(model, replicas=4, seed=0)
    assert np.all(bt.simulated["restarts"] > 0)
    _waits_are_the_recorded_gaps(bt)


# ---------------------------------------------------------------------------
# a family that cannot be fitted


def test_a_family_that_cannot_be_fitted_is_reported_and_the_others_ranked() -> None:
    """Two failures at 1 s and 1e40 s. The log-normal fit is mu = sigma =
    (ln 1 + ln 1e40) / 2 = 20 ln 10 = 46.05, whose mean exp(mu + sigma^2 / 2)
    = exp(1,106) is beyond a float (exp(709.8)): it cannot be represented,
    so the family is reported as failed. The exponential mean is (1 + 1e40)
    / 2 = 5e39; it, the Weibull and the gamma fits are ranked by AIC."""
    fits, dropped, failed = _analysis.fit_samples([1.0, 1e40])
    assert dropped == 0
    assert list(failed) == ["lognormal"]
    assert "lognormal law can represent" in failed["lognormal"]
    assert "mu=46.05170185988" in failed["lognormal"]
    assert {f.family for f in fits} == {"exponential", "weibull", "gamma"}
    assert [f.aic for f in fits] == sorted(f.aic for f in fits)
    assert fits[0].delta_aic == 0.0
    exponential = next(f for f in fits if f.family == "exponential")
    assert exponential.params == {"mean": 5e39}
    # only when every family fails is it an error, naming each reason
    with pytest.raises(ValueError, match=r"no family could be fitted.*lognormal: samples: "):
        _analysis.fit_samples([1.0, 1e40], families=("lognormal",))


def _equal_failures_log(path: Path) -> None:
    """Job 7 fails after exactly 1 h of each of its three runs (restarting
    10 min later), then runs 30 min more and completes."""
    lines, t = ["JobID|State|Start|End|NNodes|NodeList"], 0
    for state, held in [("FAILED", 3600), ("FAILED", 3600), ("FAILED", 3600), ("COMPLETED", 1800)]:
        lines.append(f"7|{state}|{_stamp(t)}|{_stamp(t + held)}|1|n1")
        t += held + 600
    path.write_text("\n".join(lines) + "\n")


def test_history_fit_reports_the_families_that_failed(tmp_path: Path) -> None:
    """Job samples 3,600 s three times and 1,800 s censored: every failure
    at one time and nothing above it, so the Weibull, log-normal and gamma
    likelihoods grow without bound (no MLE): each is reported as failed with
    that reason; the exponential mean is (3 x 3,600 + 1,800) / 3 = 4,200 s."""
    path = tmp_path / "sacct.txt"
    _equal_failures_log(path)
    fit = history.read_sacct(path).fit(by="job")
    assert [f.family for f in fit] == ["exponential"]
    assert fit.best.params == {"mean": 4200.0}
    assert list(fit.failed) == ["weibull", "lognormal", "gamma"]
    for family, reason in fit.failed.items():
        assert reason.startswith("samples: the ") and "MLE does not exist" in reason, family
    with pytest.raises(KeyError, match="'gamma' could not be fitted: samples: the gamma MLE"):
        fit["gamma"]
    table = fit.table().splitlines()
    assert table[2].startswith("| exponential | mean = 1.167 h")
    assert table[3:] == [f"| {f} | failed: {r} | | | | |" for f, r in fit.failed.items()]
    assert "failed: weibull, lognormal, gamma" in repr(fit)
    # a model of a family that failed is refused, naming it
    with pytest.raises(ValueError, match="family: 'weibull' could not be fitted"):
        history.read_sacct(path).to_model(by="job", family="weibull")


def test_acesim_fit_ranks_the_families_that_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``acesim fit`` on the log of equal failures: exit 0, the exponential
    fit ranked, the three others printed as failed with their reasons."""
    path = tmp_path / "sacct.txt"
    _equal_failures_log(path)
    assert main(["fit", str(path), "--by", "job"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| exponential | mean = 1.167 h")
    assert [r.split(" | ")[0:2] for r in rows[2:5]] == [
        ["| weibull", "failed: samples: the Weibull MLE does not exist when all observed "
         "failure times are equal and no sample lies above them"],
        ["| lognormal", "failed: samples: the log-normal MLE does not exist when all observed "
         "failure times are equal and no sample lies above them"],
        ["| gamma", "failed: samples: the gamma MLE does not exist when all observed "
         "failure times are equal and no sample lies above them"],
    ]  # fmt: skip
