"""Objectives: one value per replica, read from the result tables, checked
against runs worked out by hand (constant laws, failures placed by hand)."""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest
from acesim.objectives import Cost, Objective, evaluate, with_values

HOUR = 3600.0

# One job of 8 GPUs: 10 h of work, a checkpoint every hour; init, save and
# load 1 min each. Without failures: wall = init + load + 10 h + 10 saves
# = 60 + 60 + 36000 + 600 = 36720 s.
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
# One failure 5400 s after the start: the job started at 0, was at 3720 s
# after the first hour of compute, saved until 3780, and loses the 1620 s
# computed since. Restart (init + load 120 s), then 9 h and 9 saves:
# wall = 5400 + 120 + 32400 + 540 = 38460 s.
ONE_FAILURE = {"failures": {"law": "replay", "times": [5400]}}


def scenario(**extra: object) -> ace.Scenario:
    return ace.Scenario.from_dict({**BASE, **extra})


def job() -> ace.Job:
    return ace.Job(8, work=10 * HOUR, checkpoint_interval=HOUR, init=60.0, save=60.0, load=60.0)


def test_ettr_without_failures() -> None:
    values = evaluate(scenario(), Objective.resolve("ettr"), seed=0, replicas=3)
    np.testing.assert_allclose(values, [36000 / 36720] * 3, rtol=1e-12)


def test_job_ettr_by_name_and_index_after_one_failure() -> None:
    for key in ("flagship", 0):
        objective = Objective.resolve("ettr", job=key)
        values = evaluate(scenario(), objective, ONE_FAILURE, seed=4, replicas=2)
        np.testing.assert_allclose(values, [36000 / 38460] * 2, rtol=1e-12)
    assert Objective.resolve("ettr", job="flagship").name == "ettr of job 'flagship'"


def test_gpu_hours_lost() -> None:
    objective = Objective.resolve("gpu_hours_lost")
    assert not objective.maximize and objective.unit == "GPU-hours"
    # 8 GPUs x (wall - work) / 3600.
    np.testing.assert_allclose(
        evaluate(scenario(), objective, seed=0, replicas=1), [8 * 720 / 3600], rtol=1e-12
    )
    np.testing.assert_allclose(
        evaluate(scenario(), objective, ONE_FAILURE, seed=0, replicas=1),
        [8 * 2460 / 3600],
        rtol=1e-12,
    )


def test_cost_of_gpu_hours_and_lost_gpu_hours() -> None:
    cost = Cost(gpu_hour=2.0, lost_gpu_hour=10.0)
    objective = Objective.resolve("cost", cost=cost)
    assert not objective.maximize
    # 8 x 36720 / 3600 = 81.6 GPU-hours held, 1.6 lost.
    np.testing.assert_allclose(
        evaluate(scenario(), objective, seed=0, replicas=2), [2 * 81.6 + 10 * 1.6] * 2
    )


@pytest.mark.parametrize(
    ("node", "spare_idle", "gpu_hours"),
    [
        # The hot spare (node 1) fails at 5400 s and is repaired in 1 h:
        # idle for the 36720 s run less that hour; the job never notices.
        (1, (36720 - 3600) / 3600, 81.6),
        # The job's node fails: the spare is idle until 5400 s, takes over;
        # node 0, back at 9000 s, is the spare until the end at 38460 s.
        (0, (5400 + 38460 - 9000) / 3600, 8 * 38460 / 3600),
    ],
)
def test_cost_of_spares_and_repairs(node: int, spare_idle: float, gpu_hours: float) -> None:
    fleet = ace.Fleet(
        2,
        spares=1,
        repair=ace.Constant(HOUR),
        node_failures=ace.NodeTrace.from_times({node: [5400.0]}, nodes=2),
    )
    res = ace.simulate([job()], failures=None, fleet=fleet, replicas=2)
    cost = Cost(spare_node_hour=3.0, repair=100.0, down_node_hour=7.0, gpu_hour=0.5)
    expected = 3.0 * spare_idle + 100.0 * 1 + 7.0 * 1.0 + 0.5 * gpu_hours
    np.testing.assert_allclose(cost.per_replica(res), [expected] * 2, rtol=1e-12)
    assert cost.terms() == {
        "gpu_hours": 0.5,
        "spare_idle_node_hours": 3.0,
        "node_failures": 100.0,
        "down_node_hours": 7.0,
    }


def test_replicas_come_back_in_replica_order_and_share_draws() -> None:
    # Common random numbers: replicas 3..5 of a range are replicas 3..5 of a
    # longer one, whatever the candidate.
    s = scenario(failures={"law": "exponential", "mean": "6h"})
    objective = Objective.resolve("ettr")
    whole = evaluate(s, objective, seed=9, replicas=6)
    part = evaluate(s, objective, seed=9, replicas=3, first_replica=3)
    np.testing.assert_array_equal(whole[3:], part)
    assert len(set(whole.tolist())) > 1


def test_with_values_names_unknown_paths() -> None:
    with pytest.raises(ace.ScenarioError, match=r"did you mean 'checkpoint_interval'"):
        with_values(scenario(), {"jobs[0].checkpoint_intervl": "2h"})
    with pytest.raises(ace.ScenarioError, match=r"did you mean 'policy'"):
        with_values(scenario(), {"polcy.replacement": "spares"})
    assert with_values(scenario(), {}) == scenario()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"objective": "ettrr"}, ValueError, "objective must be one of"),
        ({"objective": "cost"}, ValueError, "needs cost="),
        ({"objective": "cost", "cost": {"gpu_hour": 1}}, TypeError, "cost must be an acesim.Cost"),
        ({"objective": "ettr", "cost": Cost(gpu_hour=1)}, ValueError, 'for objective="cost"'),
        ({"objective": "cost", "cost": Cost(gpu_hour=1), "job": 0}, ValueError, "fleet-wide"),
        ({"objective": "ettr", "job": -1}, ValueError, "job must be >= 0"),
        ({"objective": "ettr", "job": 1.5}, TypeError, "job must be"),
        ({"objective": "ettr", "job": True}, TypeError, "job must be"),
    ],
)
def test_objective_checks(kwargs: dict[str, object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Objective.resolve(**kwargs)


def test_unknown_job_in_a_result() -> None:
    with pytest.raises(ValueError, match=r"no job is named 'x'; the names are flagship"):
        evaluate(scenario(), Objective.resolve("ettr", job="x"), seed=0, replicas=1)
    with pytest.raises(ValueError, match=r"job must be in 0\.\.0"):
        evaluate(scenario(), Objective.resolve("ettr", job=2), seed=0, replicas=1)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"gpu_hour": -1.0}, ValueError),
        ({"gpu_hour": math.inf}, ValueError),
        ({"repair": "5"}, TypeError),
        ({}, ValueError),
    ],
)
def test_cost_checks(kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error, match="Cost"):
        Cost(**kwargs)  # type: ignore[arg-type]


def test_simulate_keywords_as_a_scenario_run_the_same() -> None:
    from acesim.objectives import as_scenario

    fleet = ace.Fleet(5, spares=1, repair=ace.Constant(4 * HOUR),
                      node_failures=ace.Exponential(2 * 86400.0))  # fmt: skip
    policy = ace.Policy(quarantine=ace.Quarantine(2, 86400.0, 86400.0))
    jobs = [
        ace.Job(16, work=86400.0, checkpoint_interval="young", save=300.0, name="a",
                min_gpus=8, reconfigure=60.0),
        ace.Job(8, work=36000.0, checkpoint_interval=HOUR, priority=2),
    ]  # fmt: skip
    s = as_scenario({"jobs": jobs, "fleet": fleet, "policy": policy, "replicas": 20, "seed": 3})
    assert s.to_dict()["fleet"]["spares"] == 1
    direct = ace.simulate(jobs, None, fleet, policy, replicas=20, seed=3)
    assert s.run().jobs.tobytes() == direct.jobs.tobytes()


def test_simulate_keywords_without_a_table_are_named() -> None:
    from acesim.objectives import as_scenario

    def decide(view: object) -> None:
        return None

    with pytest.raises(TypeError, match=r"base\['policy'\]: a Python on_failure"):
        as_scenario({"jobs": [job()], "policy": ace.Policy(on_failure=decide)})
    with pytest.raises(TypeError, match=r"base: 'executor' is not a simulate keyword"):
        as_scenario({"jobs": [job()], "executor": None})
    with pytest.raises(ValueError, match="base must have jobs"):
        as_scenario({"replicas": 3})
