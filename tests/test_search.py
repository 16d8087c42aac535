"""ace.tune: selection and capacity planning on cases whose truth is worked
out by hand (no failures: every replica the same, so the procedure must
decide on its first stage), the checks at the boundary, and the table's
round trip through a file."""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest
from acesim.search import Range, kn_constant, load_tune

# A job of 8 GPUs: 10 h of work, init, save and load 1 min each, no
# failures. With a checkpoint every tau hours it saves 10 / tau times:
# wall = 36000 + 120 + 60 x 10 / tau.
BASE = {
    "jobs": [
        {
            "name": "flagship",
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
PATH = "jobs[0].checkpoint_interval"


def ettr(saves: int) -> float:
    return 36000 / (36000 + 120 + 60 * saves)


def scenario() -> ace.Scenario:
    return ace.Scenario.from_dict(BASE)


def test_without_noise_the_first_stage_decides() -> None:
    r = ace.tune(scenario(), {PATH: ["1h", "2h", "5h"]}, seed=3)
    assert r.best == {PATH: "5h"}
    # Every replica gives the same value: the paired variances are 0, so
    # KN stops at the first stage (20 replicas each) with the best mean.
    assert r.table["replicas"].tolist() == [20, 20, 20]
    assert r.table["eliminated"].tolist() == [20, 20, -1]
    np.testing.assert_allclose(r.table["estimate"], [ettr(10), ettr(5), ettr(2)], rtol=1e-12)
    assert r.estimate is not None
    assert r.estimate.value == pytest.approx(ettr(2), rel=1e-12)
    assert r.table["chosen"].tolist() == [False, False, True]
    assert "within 0.002 of the best of the 3 candidates" in r.statement
    assert r.scenario().to_dict()["jobs"][0]["checkpoint_interval"] == "5h"


def test_minimizing_gpu_hours_lost_needs_an_indifference() -> None:
    with pytest.raises(ValueError, match="indifference is required"):
        ace.tune(scenario(), {PATH: ["1h", "2h"]}, objective="gpu_hours_lost")
    r = ace.tune(scenario(), {PATH: ["1h", "2h"]}, objective="gpu_hours_lost", indifference=0.1)
    # 8 GPUs x (120 + 60 x saves) / 3600: 1.6 and 0.9333 GPU-hours.
    assert r.best == {PATH: "2h"}
    np.testing.assert_allclose(r.table["estimate"], [1.6, 8 * 420 / 3600], rtol=1e-12)


def test_capacity_the_smallest_value_that_keeps_the_bound() -> None:
    # The longest saving less often; the smallest interval with ETTR >=
    # 0.985: 1 h gives 0.98039 (infeasible), 2 h 0.98847, 5 h 0.99338.
    r = ace.tune(
        scenario(),
        {PATH: [3600, 7200, 18000]},
        subject_to="ettr >= 0.985",
        minimize=PATH,
        seed=0,
    )
    assert r.best == {PATH: 7200}
    assert r.table["feasible"].tolist()[:2] == [0, 1]
    assert "no larger than the smallest value" in r.statement
    assert r.subject_to == "ettr >= 0.985"


def test_capacity_with_no_feasible_candidate() -> None:
    r = ace.tune(scenario(), {PATH: [3600, 7200]}, subject_to="ettr >= 0.999", minimize=PATH)
    assert r.best is None and r.estimate is None
    assert r.table["feasible"].tolist() == [0, 0]
    assert "No candidate was found feasible" in r.statement
    with pytest.raises(ValueError, match="no candidate was chosen"):
        r.scenario()


#: A flagship of 16 GPUs (priority 1) among 30 small jobs that keep every
#: free node busy, nodes failing every 3 days, repairs taking a day: a spare
#: is what replaces a failed flagship node at once. The flagship's ETTR by
#: spares, from 4,000 replicas of another seed (tests/test_search_slow.py
#: establishes them with more): 0: 0.905, 1: 0.956, 2: 0.964, 3: 0.965.
SPARES_BASE = {
    "jobs": [
        {"name": "flagship", "gpus": 16, "work": "1d", "checkpoint_interval": "1h",
         "priority": 1},
        {"name": "small", "count": 30, "gpus": 8, "work": "6h", "checkpoint_interval": "1h"},
    ],
    "fleet": {
        "nodes": 6,
        "spares": 0,
        "repair": "1d",
        "node_failures": {"law": "exponential", "mean": "3d"},
    },
    "policy": {"replacement": "spares"},
}  # fmt: skip


def test_capacity_on_spares_picks_the_fewest_that_do() -> None:
    # ETTR >= 0.95 within 0.01: the only correct answer is 1 spare (0 spares
    # is below 0.94; 1 is the smallest at 0.95 or more).
    s = ace.Scenario.from_dict(SPARES_BASE)
    for seed in (0, 1, 2):
        r = ace.tune(
            s,
            {"fleet.spares": [0, 1, 2, 3]},
            job="flagship",
            subject_to="ettr >= 0.95",
            minimize="fleet.spares",
            indifference=0.01,
            seed=seed,
        )
        assert r.best == {"fleet.spares": 1}, (seed, str(r))
        assert r.table["feasible"][0] == 0
        # Candidates above the one found feasible are dropped unrun past
        # the first stage.
        assert r.table["replicas"][3] <= r.table["replicas"][1]


def test_an_objective_undefined_on_a_replica_is_named() -> None:
    # A job submitted after the horizon never runs: its ETTR is NaN.
    s = scenario().with_values({"jobs[0].submit": "2d", "run.horizon": "1d"})
    with pytest.raises(ValueError, match=r"not defined on replica 0 of candidate"):
        ace.tune(s, {PATH: ["1h", "2h"]}, job=0)


def test_ranges_and_products() -> None:
    assert Range(0, 8, points=9).values() == list(range(9))
    assert Range(0, 3, points=9).values() == [0, 1, 2, 3]
    np.testing.assert_allclose(Range(600.0, 6000.0, log=True, points=3).values(),
                               [600.0, 600 * math.sqrt(10), 6000.0])  # fmt: skip
    r = ace.tune(
        scenario(),
        {PATH: Range(3600.0, 18000.0, points=3), "jobs[0].save": ["1min", "2min"]},
        seed=0,
    )
    assert r.table.shape == (6,)
    assert r.best == {PATH: 18000.0, "jobs[0].save": "1min"}


def test_simulate_keywords_as_base() -> None:
    job = ace.Job(8, work=36000.0, checkpoint_interval=3600.0, init=60.0, save=60.0, load=60.0)
    r = ace.tune({"jobs": [job], "failures": None, "fleet": ace.Fleet(2)}, {PATH: [3600, 7200]})
    assert r.best == {PATH: 7200}


def test_save_and_load(tmp_path: object) -> None:
    r = ace.tune(scenario(), {PATH: ["1h", "2h"]}, seed=5)
    for suffix in (".npz", ".json", ".csv"):
        path = tmp_path / f"t{suffix}"  # type: ignore[operator]
        r.save(path)
        back = load_tune(path)
        assert back.best == r.best
        assert back.table.tobytes() == r.table.tobytes()
        assert back.statement == r.statement
        assert back.scenario() == r.scenario()
        assert back.estimate == r.estimate


def test_loaded_base_with_code_needs_trust(tmp_path: object) -> None:
    r = ace.tune(scenario(), {PATH: ["1h", "2h"]})
    path = tmp_path / "t.json"  # type: ignore[operator]
    r.save(path)
    back = load_tune(path)
    back.base_spec["policy"] = {"on_failure": "os:system"}
    with pytest.raises(ace.UntrustedNameError, match="trust=True"):
        back.scenario()


def test_figure_marks_the_chosen_candidate() -> None:
    pytest.importorskip("matplotlib")
    r = ace.tune(scenario(), {PATH: ["1h", "2h", "5h"]})
    fig = r.figure()
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "chosen" in labels


def test_kn_constant_against_its_formula() -> None:
    # eta = ((2 alpha / (k - 1)) ** (-2 / (n0 - 1)) - 1) / 2, h2 = 2 eta (n0 - 1).
    eta = ((2 * 0.05 / 4) ** (-2 / 19) - 1) / 2
    assert kn_constant(5, 20, 0.05) == pytest.approx(2 * eta * 19, rel=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"space": {}}, ValueError, "space must not be empty"),
        ({"space": []}, TypeError, "space must map"),
        ({"space": {PATH: []}}, ValueError, "must not be empty"),
        ({"space": {PATH: "1h"}}, TypeError, "list of values"),
        ({"space": {PATH: ["1h", "1h"]}}, ValueError, "repeats"),
        ({"space": {"jobs[0].checkpoint_intervl": ["1h"]}}, ace.ScenarioError, "did you mean"),
        ({"space": {"fleet.spars": [1]}}, ace.ScenarioError, "did you mean 'spares'"),
        ({"space": {"jobs[0]": [1], PATH: [1]}}, ValueError, "overlap"),
        ({"space": {"jobs..x": [1]}}, ValueError, "dotted path"),
        ({"confidence": 1.0}, ValueError, "confidence must be in"),
        ({"confidence": "high"}, TypeError, "confidence"),
        ({"indifference": 0.0}, ValueError, "indifference"),
        ({"indifference": math.nan}, ValueError, "indifference"),
        ({"objective": "speed"}, ValueError, "objective must be one of"),
        ({"objective": "cost"}, ValueError, "cost="),
        ({"subject_to": "ettr >= 0.9"}, ValueError, "go together"),
        ({"subject_to": "ettr > 0.9", "minimize": PATH}, ValueError, "subject_to must read"),
        ({"subject_to": "speed >= 1", "minimize": PATH}, ValueError, "unknown measure"),
        ({"subject_to": "ettr >= 0.9", "minimize": "fleet.spares"}, ValueError, "not a path"),
        ({"subject_to": 0.9, "minimize": PATH}, TypeError, "subject_to"),
        ({"seed": -1}, ValueError, "seed"),
        ({"first_stage": 5}, ValueError, "first_stage"),
        ({"progress": 1}, TypeError, "progress"),
        ({"base": 3}, TypeError, "base must be"),
        ({"base": {"jobs": [1]}}, TypeError, "Job"),
    ],
)
def test_checks(kwargs: dict[str, object], error: type, message: str) -> None:
    args: dict[str, object] = {"base": scenario(), "space": {PATH: ["1h", "2h"]}}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        ace.tune(args.pop("base"), args.pop("space"), **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"low": 1, "high": 1}, ValueError),
        ({"low": 0, "high": 1, "log": True}, ValueError),
        ({"low": 0, "high": 1, "points": 1}, ValueError),
        ({"low": "0", "high": 1}, TypeError),
        ({"low": 0, "high": math.inf}, ValueError),
    ],
)
def test_range_checks(kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error, match="Range"):
        Range(**kwargs)  # type: ignore[arg-type]
