"""Precision-driven runs: ``target_se`` runs rounds of replicas (32, then
doubling the total) until the pooled ETTR's standard error is at most the
target; the result is exactly a fixed-replica run of the replicas it ran."""

from __future__ import annotations

import acesim as ace
import numpy as np
import pytest
from acesim.stats import _ratio, _ratio_se

JOB = ace.Job(1024, 2 * ace.DAY, ace.HOUR)
LAW = ace.Weibull(0.7, 8 * ace.HOUR)


def test_simulate_stops_at_the_first_round_that_is_precise_enough() -> None:
    target = 0.002
    res = ace.simulate(JOB, LAW, replicas=100_000, seed=3, target_se=target)
    assert res.replicas in (32, 64, 128, 256, 512, 1024, 2048, 4096)
    full = ace.simulate(JOB, LAW, replicas=res.replicas, seed=3)
    assert res.jobs.tobytes() == full.jobs.tobytes()
    assert res.fleet.tobytes() == full.fleet.tobytes()
    assert res.trace.tobytes() == full.trace.tobytes()
    # Precise enough now, and not one round earlier.
    assert _ratio(res, "productive", None).se <= target
    half = ace.simulate(JOB, LAW, replicas=res.replicas // 2, seed=3)
    assert _ratio(half, "productive", None).se > target
    # The provenance records the replicas that ran: rebuilding reproduces it.
    assert res.provenance["arguments"]["dict"]["replicas"] == res.replicas
    again = ace.provenance.reproduce(res.provenance)
    assert again.jobs.tobytes() == res.jobs.tobytes()


def test_replicas_is_the_cap_and_first_replica_is_kept() -> None:
    res = ace.simulate(JOB, LAW, replicas=40, seed=1, first_replica=7, target_se=1e-9)
    assert res.replicas == 40
    assert res.jobs["replica"].tolist() == list(range(7, 47))
    full = ace.simulate(JOB, LAW, replicas=40, seed=1, first_replica=7)
    assert res.jobs.tobytes() == full.jobs.tobytes()
    # A cap below the first round runs it all at once.
    small = ace.simulate(JOB, LAW, replicas=5, seed=1, target_se=1.0)
    assert small.replicas == 5


def test_a_fleet_run_rounds_the_same_way() -> None:
    fleet = ace.Fleet(8, node_failures=ace.Exponential(5 * ace.DAY), repair=ace.HOUR)
    jobs = [ace.Job(16, ace.DAY, ace.HOUR), ace.Job(32, 2 * ace.DAY, ace.HOUR)]
    res = ace.simulate(jobs, fleet=fleet, replicas=500, seed=2, target_se=0.01, threads=2)
    full = ace.simulate(jobs, fleet=fleet, replicas=res.replicas, seed=2, threads=1)
    assert res.jobs.tobytes() == full.jobs.tobytes()
    assert res.fleet.tobytes() == full.fleet.tobytes()


def test_batch_stops_when_every_point_is_precise_enough() -> None:
    grid = [ace.Job(1024, 2 * ace.DAY, tau * ace.HOUR) for tau in (0.5, 1, 4)]
    target = 0.003
    res = ace.batch_simulate(grid, LAW, replicas=50_000, seed=5, target_se=target)
    full = ace.batch_simulate(grid, LAW, replicas=res.replicas, seed=5)
    assert res.jobs.tobytes() == full.jobs.tobytes()
    se = _ratio_se(res.field("productive"), res.field("wall"))
    assert np.all(se <= target)
    half = ace.batch_simulate(grid, LAW, replicas=res.replicas // 2, seed=5)
    assert np.any(_ratio_se(half.field("productive"), half.field("wall")) > target)


def test_the_batch_standard_error_is_the_result_methods() -> None:
    """_ratio_se over a point's replicas is ettr()'s standard error of that
    job simulated alone (the same delta method)."""
    res = ace.simulate(JOB, LAW, replicas=64, seed=9)
    one = _ratio(res, "productive", None).se
    rows = res.jobs
    batch = _ratio_se(
        (rows["gpus"] * rows["productive"])[None, :], (rows["gpus"] * rows["wall"])[None, :]
    )
    assert batch[0] == pytest.approx(one, rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_target_se_is_validated(bad: float) -> None:
    with pytest.raises(ValueError, match="target_se"):
        ace.simulate(JOB, LAW, replicas=10, target_se=bad)
    with pytest.raises(ValueError, match="target_se"):
        ace.batch_simulate(JOB, LAW, replicas=10, target_se=bad)
    with pytest.raises(TypeError, match="target_se"):
        ace.simulate(JOB, LAW, replicas=10, target_se="0.1")  # type: ignore[arg-type]
