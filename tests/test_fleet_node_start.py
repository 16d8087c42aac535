"""Node failure processes start in their stationary state (issue 7, item 7).

A renewal process observed from a random moment has, at every time, the
rate 1 / mean: so E[failures of one node in [0, T]] = T / mean exactly when
its first gap is drawn from the forward-recurrence law. A process started
fresh at t = 0 with a decreasing hazard (Weibull shape < 1) fails far more
often early on. Repairs take no time here, so each node is a plain renewal
process and the closed form is exact.
"""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest

DAY = 86400.0
NODES = 256
WEEK = 7 * DAY


def first_week_failures(law: ace.Distribution, node_start: str, seed: int = 31) -> np.ndarray:
    fleet = ace.Fleet(NODES, repair=ace.Constant(0.0), node_failures=law, node_start=node_start)
    # One small job that outlives the week: the run ends at the horizon.
    job = ace.Job(8, work=30 * DAY, checkpoint_interval=DAY)
    res = ace.simulate([job], fleet=fleet, replicas=24, seed=seed, horizon=WEEK, threads=2)
    return res.fleet["node_failures"].astype(float)


def z_against(counts: np.ndarray, expected: float) -> float:
    return (counts.mean() - expected) / (counts.std(ddof=1) / math.sqrt(counts.size))


@pytest.mark.parametrize(
    "law",
    [ace.Weibull(0.5, 5 * DAY), ace.Exponential(10 * DAY), ace.LogNormal(13.0, 1.2)],
    ids=["weibull0.5", "exponential", "lognormal"],
)
def test_stationary_start_fails_at_the_nominal_rate(law: ace.Distribution) -> None:
    expected = NODES * WEEK / law.mean()  # 179.2 for a 10-day mean
    counts = first_week_failures(law, "stationary")
    assert abs(z_against(counts, expected)) < 4, (counts.mean(), expected)


def test_fresh_start_overstates_early_failures_of_a_bursty_law() -> None:
    """Weibull(0.5) with a 10-day mean: the nominal first-week count is
    179.2 per replica; started fresh, every node's hazard is high at t = 0
    (observed: 409.3 per replica, 2.3x)."""
    law = ace.Weibull(0.5, 5 * DAY)
    nominal = NODES * WEEK / law.mean()
    fresh = first_week_failures(law, "fresh")
    stationary = first_week_failures(law, "stationary")
    assert z_against(fresh, nominal) > 20
    assert fresh.mean() > 1.8 * stationary.mean()


def test_exponential_start_is_the_same_law_either_way() -> None:
    law = ace.Exponential(10 * DAY)
    expected = NODES * WEEK / law.mean()
    for start in ("fresh", "stationary"):
        assert abs(z_against(first_week_failures(law, start), expected)) < 4


def test_a_replayed_trace_ignores_node_start() -> None:
    trace = ace.NodeTrace.from_times({0: [3600.0, 7200.0]}, nodes=2)
    rows = {}
    for start in ("fresh", "stationary"):
        fleet = ace.Fleet(2, repair=ace.Constant(60.0), node_failures=trace, node_start=start)
        res = ace.simulate([ace.Job(8, work=DAY, checkpoint_interval=3600.0)], fleet=fleet)
        rows[start] = res.trace["time"].tolist()
    assert rows["fresh"] == rows["stationary"] == [3600.0, 7200.0]


@pytest.mark.parametrize("bad", ["warm", "", 1, None])
def test_node_start_is_validated(bad: object) -> None:
    with pytest.raises((ValueError, TypeError), match="node_start"):
        ace.Fleet(4, node_start=bad)  # type: ignore[arg-type]


def test_stationary_start_of_a_constant_law_by_hand() -> None:
    """Constant(10 h) node failures, repairs that take no time: each node's
    first failure is at u * 10 h for a uniform u (the forward recurrence of
    a constant gap), then exactly every 10 h. Fresh: every node at 10 h, 20 h."""
    gap = 10 * 3600.0
    job = ace.Job(8, work=2 * DAY, checkpoint_interval=DAY)
    for start in ("stationary", "fresh"):
        fleet = ace.Fleet(
            4, repair=ace.Constant(0.0), node_failures=ace.Constant(gap), node_start=start
        )
        res = ace.simulate([job], fleet=fleet, horizon=35 * 3600.0, seed=3)
        for n in range(4):
            times = np.sort(res.trace["time"][res.trace["origin"] == n])
            first = times[0]
            assert 0.0 < first <= gap
            if start == "fresh":
                assert first == gap
            np.testing.assert_allclose(np.diff(times), gap, rtol=1e-12)
            # The trace reports the draw: the first gap, then the law's value.
            rows = res.trace[res.trace["origin"] == n]
            drawn = np.unique(rows["inter_failure"][np.argsort(rows["time"])][1:])
            assert drawn.tolist() in ([gap], [])
    firsts = {
        float(t)
        for t in ace.simulate(
            [job],
            fleet=ace.Fleet(
                64,
                repair=ace.Constant(0.0),
                node_failures=ace.Constant(gap),
                node_start="stationary",
            ),
            horizon=gap,
            seed=3,
        ).trace["time"]
    }
    assert len(firsts) > 60  # the nodes' first failures are spread, not all at 10 h
