"""acesim.sensitivity on small simulations whose answers are known without
the code: a dominant factor, an additive two-factor model whose variance
decomposition is computed by brute force (a full factorial with many
replicas per point), a built-in interaction, exact ETTRs without failures,
and the result's files and figures."""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.objectives import Objective, evaluate
from acesim.results_io import ResultFileError

SLOW = os.environ.get("ACESIM_SLOW_PROPERTIES") == "1"
slow = pytest.mark.skipif(not SLOW, reason="set ACESIM_SLOW_PROPERTIES=1")

# -- (a) one dominant factor ----------------------------------------------------

DOMINANT: dict[str, Any] = {
    "run": {"replicas": 4},
    "jobs": [
        {
            "gpus": 32,
            "work": "1d",
            "checkpoint_interval": "1h",
            "init": "5min",
            "save": "1min",
            "load": "1min",
        }
    ],
    "fleet": {"nodes": 4, "repair": "2h", "node_failures": {"law": "exponential", "mean": "2d"}},
}
#: node MTBF over a range of 8x against the start-up time over 5 percent
DOMINANT_FACTORS = {
    "fleet.node_failures.mean": {"low": "1d", "high": "8d", "log": True},
    "jobs[0].init.mean": {"low": "5min", "high": "5.25min"},
}


def _dominant_wins(method: str, seeds: range, **kw: Any) -> int:
    base = ace.Scenario.from_dict(DOMINANT)
    wins = 0
    for seed in seeds:
        s = ace.sensitivity(base, DOMINANT_FACTORS, method=method, seed=seed, **kw)
        wins += s.ranking[0] == "fleet.node_failures.mean"
    return wins


@pytest.mark.parametrize("method", ["morris", "sobol"])
def test_the_dominant_factor_ranks_first(method: str) -> None:
    assert _dominant_wins(method, range(2), trajectories=6, samples=16) == 2


@slow
@pytest.mark.slow
@pytest.mark.parametrize("method", ["morris", "sobol"])
def test_the_dominant_factor_ranks_first_on_19_of_20_seeds(method: str) -> None:
    wins = _dominant_wins(method, range(100, 120), trajectories=10, samples=64, replicas=8)
    assert wins >= 19, wins


# -- (b) an additive model, its variance decomposition by brute force ------------

_JOB = {
    "gpus": 8,
    "work": "12h",
    "checkpoint_interval": "1h",
    "save": "2min",
    "load": "1min",
    "init": "1min",
    "failures": {"law": "exponential", "mean": "6h"},
}
#: Two independent jobs (no fleet): the fleet's GPU-hours lost is the sum of
#: the jobs', job 0's depends on its interval only and job 1's on its init
#: only, so the objective is additive in the two factors.
ADDITIVE: dict[str, Any] = {
    "run": {"replicas": 2000},
    "jobs": [{"name": "a", **_JOB}, {"name": "b", **_JOB}],
}
ADDITIVE_FACTORS = {
    "jobs[0].checkpoint_interval": ["10min", "1h", "3h"],
    "jobs[1].init": ["1min", "10min", "30min"],
}


def _brute_force(base: ace.Scenario, factors: dict[str, list[str]], objective: str) -> Any:
    """The mean objective on the full factorial (40,000 replicas a cell, a
    seed of its own) and the shares of variance of the discrete uniform
    levels: first-order of each factor and the rest (interactions)."""
    (p1, l1), (p2, l2) = factors.items()
    goal = Objective.resolve(objective)
    cells = np.array(
        [
            [evaluate(base, goal, {p1: a, p2: b}, seed=9999, replicas=40_000).mean() for b in l2]
            for a in l1
        ]
    )
    total = cells.var()
    first = np.array([cells.mean(axis=1).var(), cells.mean(axis=0).var()]) / total
    return first, 1.0 - first.sum()


@pytest.fixture(scope="module")
def additive_truth() -> Any:
    return _brute_force(ace.Scenario.from_dict(ADDITIVE), ADDITIVE_FACTORS, "gpu_hours_lost")


def _additive(seed: int) -> ace.SensitivityResult:
    base = ace.Scenario.from_dict(ADDITIVE)
    return ace.sensitivity(
        base, ADDITIVE_FACTORS, objective="gpu_hours_lost", method="sobol", samples=256, seed=seed
    )


def test_brute_force_decomposition_is_additive(additive_truth: Any) -> None:
    first, rest = additive_truth
    assert abs(rest) < 1e-9  # no interaction, to rounding
    assert 0.2 < first[0] < 0.8 and 0.2 < first[1] < 0.8  # both matter


def test_additive_first_order_agrees_with_brute_force(additive_truth: Any) -> None:
    first, _ = additive_truth
    s = _additive(0)
    idx = s.indices
    assert s.runs == 9  # the 3 x 3 distinct points run once each
    assert np.all(idx["first_low"] <= first) and np.all(first <= idx["first_high"])
    assert np.all(idx["interaction_low"] <= 0.0) and np.all(0.0 <= idx["interaction_high"])


@slow
@pytest.mark.slow
def test_additive_intervals_cover_on_most_seeds(additive_truth: Any) -> None:
    first, _ = additive_truth
    covered = zero = 0
    for seed in range(100, 120):
        idx = _additive(seed).indices
        covered += int(np.sum((idx["first_low"] <= first) & (first <= idx["first_high"])))
        zero += int(np.sum((idx["interaction_low"] <= 0.0) & (0.0 <= idx["interaction_high"])))
    # 40 intervals of nominal 95%: at least 34 (95% less about 2 standard errors)
    assert covered >= 34 and zero >= 34, (covered, zero)


# -- an interaction built in ------------------------------------------------------

#: ETTR of one job: the interval's cost of rework grows with the failure rate
#: (interval / (2 MTBF)) and its cost of saves does not: a long interval is
#: good with rare failures and bad with frequent ones.
INTERACTION: dict[str, Any] = {
    "run": {"replicas": 100},
    "jobs": [
        {
            "gpus": 8,
            "work": "12h",
            "checkpoint_interval": "1h",
            "save": "5min",
            "load": "1min",
            "init": "1min",
        }
    ],
    "failures": {"law": "exponential", "mean": "6h"},
}
INTERACTION_FACTORS = {
    "failures.mean": ["2h", "16h"],
    "jobs[0].checkpoint_interval": ["10min", "4h"],
}


def test_an_interaction_shows_total_above_first_order() -> None:
    base = ace.Scenario.from_dict(INTERACTION)
    first, rest = _brute_force(base, INTERACTION_FACTORS, "ettr")
    assert rest > 0.3  # the brute-force decomposition has the interaction
    s = ace.sensitivity(base, INTERACTION_FACTORS, method="sobol", samples=128, seed=0)
    # ST - S has its own interval (paired over the same rows): above zero
    for row in s.indices:
        assert row["interaction_low"] > 0.0, row
    # the interval's first-order share is near zero; its total is not
    row = s.indices[s.indices["factor"] == "jobs[0].checkpoint_interval"][0]
    assert first[1] < 0.05
    assert row["total_low"] > row["first_high"], row


# -- exact values without failures ----------------------------------------------

NO_FAILURES: dict[str, Any] = {
    "run": {"replicas": 2},
    "jobs": [
        {
            "gpus": 8,
            "work": "10h",
            "checkpoint_interval": "1h",
            "init": "1min",
            "save": "1min",
            "load": "1min",
        }
    ],
    "failures": "none",
}


def test_every_point_runs_the_values_it_names() -> None:
    # Without failures: wall = init + load + 10 saves + 10 h of work, so
    # ETTR = 36000 / (36000 + init + 60 + 10 save), exactly.
    base = ace.Scenario.from_dict(NO_FAILURES)
    s = ace.sensitivity(
        base,
        {"jobs[0].init.mean": {"low": "1min", "high": "10min"}, "jobs[0].save": [30.0, 90.0]},
        trajectories=5,
        seed=3,
    )
    pts = s.points
    init = 60.0 + pts["jobs[0].init.mean"] * 540.0
    save = np.where(pts["jobs[0].save"] == 0, 30.0, 90.0)
    assert pts["value"] == pytest.approx(36000.0 / (36000.0 + init + 60.0 + 10 * save), rel=1e-12)
    assert s.runs == len({(a, b) for a, b in zip(init, save, strict=True)})
    # the Morris effect of the save time is the ETTR change from 30 s to 90 s
    # at the other factor's value: 10 saves of 60 s more
    row = s.indices[s.indices["factor"] == "jobs[0].save"][0]
    lo = 36000.0 / (36000.0 + init + 60.0 + 10 * 30.0)
    hi = 36000.0 / (36000.0 + init + 60.0 + 10 * 90.0)
    assert float(np.min(lo - hi)) <= row["mu_star"] <= float(np.max(lo - hi))


def test_an_inert_factor_has_no_effect() -> None:
    base = ace.Scenario.from_dict(NO_FAILURES)
    s = ace.sensitivity(
        base,
        {
            "jobs[0].init.mean": {"low": "1min", "high": "10min"},
            "jobs[0].priority": {"low": 0, "high": 3},
        },
        trajectories=4,
    )
    row = s.indices[s.indices["factor"] == "jobs[0].priority"][0]
    assert row["mu_star"] == 0.0 and row["mu_star_high"] == 0.0
    assert s.ranking[0] == "jobs[0].init.mean"


def test_common_random_numbers_each_point_is_the_seeds_run() -> None:
    base = ace.Scenario.from_dict(DOMINANT)
    s = ace.sensitivity(base, DOMINANT_FACTORS, method="sobol", samples=4, seed=7)
    row = s.points[3]
    mean = 86400.0 * 8.0 ** row["fleet.node_failures.mean"]
    init = 300.0 * (1.0 + 0.05 * row["jobs[0].init.mean"])
    law = base.law_at("fleet.node_failures")
    assert law is not None
    values = {
        "fleet.node_failures": {"law": "exponential", "mean": mean},
        "jobs[0].init": {"law": "constant", "value": init},
    }
    again = evaluate(base, Objective.resolve("ettr"), values, seed=7, replicas=4)
    assert row["value"] == pytest.approx(float(np.mean(again)), rel=1e-9)


def test_objectives_cost_and_job() -> None:
    base = ace.Scenario.from_dict(ADDITIVE)
    lost = ace.sensitivity(base, ADDITIVE_FACTORS, objective="gpu_hours_lost", trajectories=4)
    priced = ace.sensitivity(
        base, ADDITIVE_FACTORS, objective="cost", cost=ace.Cost(lost_gpu_hour=2.0), trajectories=4
    )
    assert priced.points["value"] == pytest.approx(2.0 * lost.points["value"])
    assert priced.ranking == lost.ranking
    job_b = ace.sensitivity(base, ADDITIVE_FACTORS, job="b", trajectories=4)
    row = job_b.indices[job_b.indices["factor"] == "jobs[0].checkpoint_interval"][0]
    assert row["mu_star"] == 0.0  # job a's interval never touches job b
    assert job_b.objective == "ettr of job 'b'"


# -- files, figures, errors ----------------------------------------------------


@pytest.fixture(scope="module")
def small() -> ace.SensitivityResult:
    base = ace.Scenario.from_dict(DOMINANT)
    return ace.sensitivity(base, DOMINANT_FACTORS, method="sobol", samples=8, seed=1)


@pytest.mark.parametrize("suffix", [".npz", ".json", ".csv"])
def test_save_and_load(small: ace.SensitivityResult, tmp_path: Any, suffix: str) -> None:
    path = tmp_path / f"s{suffix}"
    small.save(path)
    back = ace.SensitivityResult.load(path)
    assert back.ranking == small.ranking and back.method == "sobol"
    for name in small.indices.dtype.names or ():
        if name == "factor":
            assert list(back.indices[name]) == list(small.indices[name])
        else:
            assert np.array_equal(back.indices[name], small.indices[name])
    assert np.array_equal(back.points["value"], small.points["value"])
    assert (back.runs, back.seed, back.replicas) == (small.runs, 1, 4)


def test_load_refuses_a_tampered_method(small: ace.SensitivityResult, tmp_path: Any) -> None:
    path = tmp_path / "s.json"
    small.save(path)
    doc = json.loads(path.read_text())
    doc["sensitivity"]["method"] = "os.system"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultFileError, match="method must be one of"):
        ace.SensitivityResult.load(path)


def test_figure_data_orders_by_rank(small: ace.SensitivityResult) -> None:
    from acesim import plot

    data = plot.sensitivity_data(small)
    assert data.factors == small.ranking and data.measures == ("first", "total")
    assert np.all(data.low <= data.value + 1e-12) and np.all(data.value <= data.high + 1e-12)
    assert "bootstrap interval" in data.caption
    pytest.importorskip("matplotlib")
    fig = small.figure()
    assert len(fig.axes) == 1 and len(fig.axes[0].get_yticklabels()) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"method": "fast"}, ValueError, "method must be one of"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
        ({"trajectories": 1}, ValueError, "trajectories"),
        ({"method": "sobol", "samples": 1}, ValueError, "samples"),
        ({"replicas": 0}, ValueError, "replicas must be >= 1"),
        ({"objective": "speed"}, ValueError, "objective must be one of"),
        ({"objective": "cost"}, ValueError, "needs cost"),
        ({"progress": "yes"}, TypeError, "progress"),
        ({"ci": 1.5}, ValueError, "ci"),
    ],
)
def test_bad_arguments_are_named(kwargs: Any, error: type[Exception], message: str) -> None:
    base = ace.Scenario.from_dict(NO_FAILURES)
    factors = {"jobs[0].save": [30.0, 90.0]}
    with pytest.raises(error, match=message):
        ace.sensitivity(base, factors, **kwargs)


def test_base_must_be_a_scenario() -> None:
    with pytest.raises(TypeError, match="base must be"):
        ace.sensitivity([1, 2], {"jobs[0].save": [30.0, 90.0]})


def test_simulate_keywords_and_a_search_range() -> None:
    # the same model as NO_FAILURES, given as simulate keywords
    job = ace.Job(8, 10 * ace.HOUR, ace.HOUR, init=60.0, save=60.0, load=60.0)
    s = ace.sensitivity(
        {"jobs": job, "failures": ace.Exponential(1e12), "replicas": 2},  # no failure in 10 h
        {"jobs[0].save": ace.search.Range(30.0, 90.0)},
        trajectories=2,
    )
    save = 30.0 + 60.0 * s.points["jobs[0].save"]
    assert s.points["value"] == pytest.approx(36000.0 / (36000.0 + 120.0 + 10 * save))


def test_progress_counts_the_runs_on_stderr(capsys: Any, monkeypatch: Any) -> None:
    # Progress is drawn only on a terminal outside CI: stand one in; a pipe
    # (capsys) shows nothing.
    base = ace.Scenario.from_dict(NO_FAILURES)
    ace.sensitivity(base, {"jobs[0].save": [30.0, 90.0]}, trajectories=2, progress=True)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(
        importlib.import_module("acesim.sweep"), "on_terminal", lambda stream=None: True
    )
    base = ace.Scenario.from_dict(NO_FAILURES)
    s = ace.sensitivity(base, {"jobs[0].save": [30.0, 90.0]}, trajectories=2, progress=True)
    err = capsys.readouterr().err
    assert "sensitivity" in err and f"{s.runs}/{s.runs}" in err


def test_an_undefined_objective_names_the_point() -> None:
    # the horizon ends before the second job is submitted: its ETTR is undefined
    base = ace.Scenario.from_dict(
        {
            "run": {"replicas": 2, "horizon": "1h"},
            "jobs": [
                {"gpus": 8, "work": "1d", "checkpoint_interval": "1h"},
                {"name": "late", "gpus": 8, "work": "1d", "checkpoint_interval": "1h",
                 "submit": "2h"},
            ],
        }
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"undefined at the point jobs\[0\].save"):
        ace.sensitivity(base, {"jobs[0].save": [30.0, 90.0]}, job="late", trajectories=2)
