"""Factors of a sensitivity analysis: ranges, counts, levels and PATH.mean
rescaling, checked against values worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.scenario import ScenarioError
from acesim.sensitivity.factors import parse_factors, scaled_law

BASE: dict[str, Any] = {
    "run": {"replicas": 2},
    "jobs": [{"gpus": 16, "work": "1d", "checkpoint_interval": "1h", "init": "5min"}],
    "fleet": {
        "nodes": 4,
        "spares": 1,
        "repair": {
            "stages": [
                {"duration": "1h", "escalate": 0.5, "fix": 0.5},
                {"duration": {"law": "exponential", "mean": "5h"}, "fix": 1.0},
            ]
        },
        "node_failures": {"law": "weibull", "shape": 0.7, "scale": "10d"},
    },
    "causes": [{"name": "hang", "share": 1.0, "detect": "2min"}],
}


@pytest.fixture(scope="module")
def base() -> ace.Scenario:
    return ace.Scenario.from_dict(BASE)


def test_continuous_ranges_map_the_unit_interval(base: ace.Scenario) -> None:
    lin, log = parse_factors(
        base,
        {
            "jobs[0].checkpoint_interval": {"low": "30min", "high": "2h"},
            "jobs[0].work": {"low": 1000.0, "high": 100000.0, "log": True},
        },
    )
    assert lin.design_levels is None and lin.value(0.0) == 1800.0 and lin.value(1.0) == 7200.0
    assert lin.value(0.5) == 4500.0
    assert log.value(0.5) == pytest.approx(10000.0)  # the geometric mean
    assert lin.setting(4500.0) == (("jobs", 0, "checkpoint_interval"), 4500.0)


def test_a_count_is_an_ordered_discrete_factor(base: ace.Scenario) -> None:
    (spares,) = parse_factors(base, {"fleet.spares": {"low": 0, "high": 2}})
    assert spares.integer and spares.design_levels == 3
    assert [spares.value(i) for i in range(3)] == [0, 1, 2]


def test_levels_are_categorical(base: ace.Scenario) -> None:
    (rep,) = parse_factors(base, {"policy.replacement": ["spares", "wait_repair", "requeue"]})
    assert rep.categorical and rep.design_levels == -3
    assert rep.value(2) == "requeue"
    assert rep.setting("requeue") == (("policy", "replacement"), "requeue")


def test_mean_rescales_a_weibull_keeping_its_shape(base: ace.Scenario) -> None:
    (f,) = parse_factors(base, {"fleet.node_failures.mean": {"low": "2d", "high": "16d"}})
    key, table = f.setting(4 * ace.DAY)
    assert key == ("fleet", "node_failures")
    assert table["law"] == "weibull" and table["shape"] == 0.7
    # Weibull mean = scale * Gamma(1 + 1/k): the scale that gives 4 days
    assert table["scale"] == pytest.approx(4 * ace.DAY / math.gamma(1 + 1 / 0.7))
    scenario = base.with_values({key: table})
    assert scenario.law_at("fleet.node_failures").mean() == pytest.approx(4 * ace.DAY)


def test_mean_scales_a_repair_pipelines_stages_together(base: ace.Scenario) -> None:
    # stage 1 always runs (1 h); stage 2 (mean 5 h) after an escalation (0.5):
    # mean 1 + 0.5 * 5 = 3.5 h; to 7 h every stage doubles
    (f,) = parse_factors(base, {"fleet.repair.mean": {"low": "1h", "high": "10h"}})
    assert base.law_at("fleet.repair").mean() == pytest.approx(3.5 * ace.HOUR)
    _, table = f.setting(7 * ace.HOUR)
    first, second = table["stages"]
    assert first["duration"] == {"law": "constant", "value": 2 * ace.HOUR}
    assert second["duration"] == {"law": "exponential", "mean": pytest.approx(10 * ace.HOUR)}
    assert (first["escalate"], first["fix"], second["fix"]) == (0.5, 0.5, 1.0)


@pytest.mark.parametrize(
    "law",
    [
        ace.Constant(10.0),
        ace.Exponential(10.0),
        ace.Weibull(1.5, 10.0),
        ace.Gamma(2.0, 5.0),
        ace.LogNormal(2.0, 0.5),
        ace.Mixture([(0.9, ace.Exponential(5.0)), (0.1, ace.Constant(100.0))]),
        ace.Empirical([1.0, 2.0, 6.0]),
        ace.BlockBootstrap([1.0, 2.0, 6.0, 3.0], 2),
        ace.Replay([1.0, 2.0, 6.0]),
        ace.ScaleAware(ace.Exponential(100.0), ref_gpus=64),
    ],
)
def test_scaled_law_multiplies_every_draw(law: Any) -> None:
    scaled = scaled_law(law, 3.0)
    assert type(scaled) is type(law)
    assert scaled.mean() == pytest.approx(3.0 * law.mean())
    x = np.array([0.5, 5.0, 20.0, 300.0])
    assert scaled.cdf(3.0 * x) == pytest.approx(law.cdf(x))


@pytest.mark.parametrize(
    ("factors", "error", "message"),
    [
        ({"fleet.spars": {"low": 0, "high": 2}}, ScenarioError, "did you mean 'spares'"),
        ({"jobs[0].checkpont_interval": ["1h", "2h"]}, ScenarioError, "checkpoint_interval"),
        ({"fleet.spares": {"low": 2, "high": 2}}, ValueError, "is empty"),
        ({"jobs[0].work": {"low": "2d", "high": "1d"}}, ValueError, "is empty"),
        ({"policy.replacement": {"low": 0, "high": 1}}, ValueError, "categorical"),
        ({"fleet.node_clock": {"low": 0, "high": 1}}, ValueError, "categorical"),
        ({"failures.mean": {"low": 1, "high": 2}}, ValueError, "holds no law"),
        ({"jobs[0].work.mean": {"low": 1, "high": 2}}, ValueError, "holds no law"),
        ({"fleet.spares": {"low": 0.5, "high": 2}}, TypeError, "must be an integer"),
        ({"fleet.spares": [1]}, ValueError, "at least 2"),
        ({"fleet.spares": [1, 1]}, ValueError, "given twice"),
        ({"jobs[0].work": {"low": 0.0, "high": 10.0, "log": True}}, ValueError, "low > 0"),
        ({"jobs[0].work": {"low": 1.0, "high": 10.0, "log": "yes"}}, TypeError, "log"),
        ({"jobs[0].work": {"low": 1.0}}, ValueError, "low, high"),
        ({"jobs[0].work": 5.0}, TypeError, "a range"),
        ({"jobs[0].work": {"low": "soon", "high": "1d"}}, ValueError, "low"),
        ({"fleet.spares": {"low": 0, "high": 9}}, ScenarioError, "spares"),
        ({"fleet.node_failures.mean": {"low": -1.0, "high": 5.0}}, ValueError, "mean"),
        ({"fleet.repair": ["1h", "2h"], "fleet.repair.mean": ["1h", "2h"]}, ValueError, "same"),
        ({}, ValueError, "at least one"),
        ({"": [1, 2]}, ValueError, "dotted path"),
    ],
)
def test_bad_factors_are_named(
    base: ace.Scenario, factors: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        parse_factors(base, factors)


def test_mean_of_a_law_left_out_rescales_the_default() -> None:
    # no repair and no init written: the fleet's default repair (exponential,
    # 1 h) and the job's default init (constant) are what rescale
    base = ace.Scenario.from_dict(
        {"jobs": [{"gpus": 8, "work": "1d", "checkpoint_interval": "1h"}], "fleet": {"nodes": 2}}
    )
    repair, init = parse_factors(
        base,
        {"fleet.repair.mean": {"low": "1h", "high": "4h"}, "jobs[0].init.mean": [60.0, 600.0]},
    )
    assert repair.setting(2 * ace.HOUR) == (
        ("fleet", "repair"),
        {"law": "exponential", "mean": pytest.approx(2 * ace.HOUR)},
    )
    assert init.setting(600.0) == (("jobs", 0, "init"), {"law": "constant", "value": 600.0})


def test_a_named_cause_set_is_written_out_for_a_cause_factor() -> None:
    from acesim.sensitivity.factors import named_causes_as_tables

    base = ace.Scenario.from_dict(
        {
            "run": {"replicas": 3},
            "jobs": [{"gpus": 64, "work": "1d", "checkpoint_interval": "1h"}],
            "fleet": {"nodes": 8, "node_failures": {"law": "exponential", "mean": "5d"}},
            "causes": "llama3",
        }
    )
    factors = {"causes[0].detect.mean": {"low": 10.0, "high": 100.0}}
    tables = named_causes_as_tables(base, factors)
    assert isinstance(tables.to_dict()["causes"], list)
    assert len(tables.to_dict()["causes"]) == len(ace.LLAMA3_CAUSES)
    # the same causes: the same run, byte for byte
    assert tables.run().jobs.tobytes() == base.run().jobs.tobytes()
    (f,) = parse_factors(tables, factors)
    assert f.target == ("causes", 0, "detect")
    assert named_causes_as_tables(base, {"fleet.spares": [0, 1]}) is base
