"""Validate the SimPy reference model (tests/simpy_reference.py) on its own.

Against hand-worked timelines, the accounting identity, the horizon rules and
the closed form of DESIGN.md section 8 for exponential failures with constant
init/load/save. The closed form is re-implemented here, independently of both
the reference model and acesim.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

pytest.importorskip("simpy")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simpy_reference import FIELDS, run_replicas, simulate_job

MINUTE = 60.0
HOUR = 3600.0


def _const(value: float) -> Callable[[], float]:
    return lambda: value


def _sequence(values: Iterable[float]) -> Callable[[], float]:
    """Replays ``values`` draw by draw, then ``inf`` (no further failure)."""
    it = iter(values)
    return lambda: next(it, math.inf)


def _closed_form_wall(
    rate: float, work: float, interval: float, save: float, restart: float
) -> float:
    """E[wall] = (e^(lR) - 1)/l + sum_s e^(lR) (e^(l(s+C)) - 1)/l."""
    segments = []
    left = work
    while left > interval * (1 + 1e-12):
        segments.append(interval)
        left -= interval
    segments.append(left)
    first_start = math.expm1(rate * restart) / rate
    per_segment = (
        math.exp(rate * restart) * math.expm1(rate * (s + save)) / rate for s in segments
    )
    return first_start + sum(per_segment)


def _identity_holds(row: dict[str, float] | np.void) -> bool:
    total = row["productive"] + row["wasted"] + row["ckpt_stall"] + row["overhead"]
    return math.isclose(float(row["wall"]), float(total), rel_tol=1e-6, abs_tol=1e-9)


# --- hand-worked timelines ---------------------------------------------------
# work 100 s, interval 30 s (segments 30, 30, 30, 10), init 2 s, load 3 s,
# save 1 s. Without failures: start 0-5, then (30 compute + 1 save) x 3,
# then 10 + 1: done at 5 + 100 + 4 = 109.

W, TAU, INIT, LOAD, SAVE = 100.0, 30.0, 2.0, 3.0, 1.0


def _timeline(failures: Iterable[float], horizon: float = math.inf) -> dict[str, float]:
    return simulate_job(
        W,
        TAU,
        _sequence(failures),
        _const(INIT),
        _const(SAVE),
        _const(LOAD),
        horizon=horizon,
    )


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        pytest.param(
            [],
            dict(
                wall=109,
                productive=100,
                wasted=0,
                ckpt_stall=4,
                overhead=5,
                failures=0,
                checkpoints=4,
            ),
            id="no-failure",
        ),
        pytest.param(
            # t=20 in compute (15 s lost); restart 20-25; ckpt at 55-56;
            # t=60 in compute (4 s lost); restart 60-65; 3 more segments
            # from progress 30: 65 + 30+1 + 30+1 + 10+1 = 138
            [20.0, 40.0],
            dict(
                wall=138,
                productive=100,
                wasted=19,
                ckpt_stall=4,
                overhead=15,
                failures=2,
                checkpoints=4,
            ),
            id="compute-failures",
        ),
        pytest.param(
            # t=35.5 half-way through the first save: 30 + 0.5 wasted
            [35.5],
            dict(
                wall=144.5,
                productive=100,
                wasted=30.5,
                ckpt_stall=4,
                overhead=10,
                failures=1,
                checkpoints=4,
            ),
            id="save-failure",
        ),
        pytest.param(
            # t=2 during the first start: 2 s more overhead, nothing wasted
            [2.0],
            dict(
                wall=111,
                productive=100,
                wasted=0,
                ckpt_stall=4,
                overhead=7,
                failures=1,
                checkpoints=4,
            ),
            id="start-failure",
        ),
        pytest.param(
            # failures at t=4 and t=8 (both in starts), then clean
            [4.0, 4.0],
            dict(
                wall=117,
                productive=100,
                wasted=0,
                ckpt_stall=4,
                overhead=13,
                failures=2,
                checkpoints=4,
            ),
            id="repeated-start-failures",
        ),
        pytest.param(
            # t=108.5 in the last save: the last 10 s + 0.5 s lost
            [108.5],
            dict(
                wall=108.5 + 5 + 11,
                productive=100,
                wasted=10.5,
                ckpt_stall=4,
                overhead=10,
                failures=1,
                checkpoints=4,
            ),
            id="last-save-failure",
        ),
    ],
)
def test_timeline(failures: list[float], expected: dict[str, float]) -> None:
    row = _timeline(failures)
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), key
    assert row["completed"] == 1.0
    assert row["ettr"] == pytest.approx(100 / expected["wall"])
    assert _identity_holds(row)


@pytest.mark.parametrize(
    ("horizon", "failures", "expected"),
    [
        pytest.param(
            3.0,
            [],
            dict(productive=0, ckpt_stall=0, overhead=3, wasted=0, checkpoints=0),
            id="in-start",
        ),
        pytest.param(
            # 30 compute in the save's segment counts as productive
            35.5,
            [],
            dict(productive=30, ckpt_stall=0.5, overhead=5, wasted=0, checkpoints=0),
            id="in-save",
        ),
        pytest.param(
            # ckpt at 35-36, then 14 s of uncommitted compute: productive
            50.0,
            [],
            dict(productive=44, ckpt_stall=1, overhead=5, wasted=0, checkpoints=1),
            id="in-compute",
        ),
        pytest.param(
            # failure at 20 (15 wasted), restart 20-25, 25 s of compute
            50.0,
            [20.0],
            dict(productive=25, ckpt_stall=0, overhead=10, wasted=15, checkpoints=0),
            id="after-failure",
        ),
    ],
)
def test_horizon_timeline(
    horizon: float, failures: list[float], expected: dict[str, float]
) -> None:
    row = _timeline(failures, horizon=horizon)
    assert row["wall"] == pytest.approx(horizon)
    assert row["completed"] == 0.0
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), key
    assert row["ettr"] == pytest.approx(expected["productive"] / horizon)
    assert _identity_holds(row)


def test_horizon_after_completion_does_not_extend_wall() -> None:
    row = _timeline([20.0, 40.0], horizon=1000.0)
    assert row["completed"] == 1.0
    assert row["wall"] == pytest.approx(138.0)


# --- random lifecycles: identity, horizon consistency --------------------------


def _weibull(shape: float, scale: float) -> Callable[[np.random.Generator], float]:
    return lambda g: scale * float(g.weibull(shape))


def _lognormal(mu: float, sigma: float) -> Callable[[np.random.Generator], float]:
    return lambda g: float(g.lognormal(mu, sigma))


def _gamma(shape: float, scale: float) -> Callable[[np.random.Generator], float]:
    return lambda g: float(g.gamma(shape, scale))


_BURSTY_WORK = 12 * HOUR
_BURSTY_INTERVAL = 40 * MINUTE


def _bursty(n: int, seed: int, horizon: float = math.inf) -> np.ndarray:
    """Weibull(0.6) failures (decreasing hazard), gamma init, lognormal I/O."""
    return run_replicas(
        n,
        _BURSTY_WORK,
        _BURSTY_INTERVAL,
        failure_sampler=_weibull(0.6, 3 * HOUR),
        init_sampler=_gamma(2.0, 2 * MINUTE),
        save_sampler=_lognormal(math.log(45.0), 0.8),
        load_sampler=_lognormal(math.log(90.0), 0.5),
        seed=seed,
        horizon=horizon,
    )


def test_identity_and_invariants_random() -> None:
    rows = _bursty(400, seed=7)
    assert rows.dtype.names == FIELDS
    n_segments = math.ceil(_BURSTY_WORK / _BURSTY_INTERVAL)
    for row in rows:
        assert _identity_holds(row)
    assert np.all(rows["completed"] == 1.0)
    np.testing.assert_allclose(rows["productive"], _BURSTY_WORK, rtol=1e-9)
    np.testing.assert_array_equal(rows["checkpoints"], n_segments)
    np.testing.assert_allclose(rows["ettr"], rows["productive"] / rows["wall"])
    assert rows["failures"].mean() > 1.0  # the case exercises failures
    assert np.all(rows["wasted"][rows["failures"] == 0] == 0.0)


def test_horizon_random_consistent_with_unbounded_run() -> None:
    horizon = 14 * HOUR
    full = _bursty(300, seed=11)
    cut = _bursty(300, seed=11, horizon=horizon)
    for row in cut:
        assert _identity_holds(row)
    done = full["wall"] < horizon
    assert 0 < done.sum() < len(full)  # both kinds of replica occur
    # same streams: a replica that finished before the horizon is unchanged
    for name in FIELDS:
        np.testing.assert_allclose(cut[name][done], full[name][done], rtol=1e-12)
    # the others are cut at the horizon, with no more events than the full run
    np.testing.assert_allclose(cut["wall"][~done], horizon)
    assert np.all(cut["completed"][~done] == 0.0)
    # (a replica cut in its last save has productive == work, not completed)
    assert np.all(cut["productive"][~done] <= _BURSTY_WORK * (1 + 1e-12))
    assert np.any(cut["productive"][~done] < _BURSTY_WORK)
    assert np.all(cut["failures"][~done] <= full["failures"][~done])
    assert np.all(cut["checkpoints"][~done] <= full["checkpoints"][~done])


def test_run_replicas_reproducible() -> None:
    a = _bursty(50, seed=3)
    b = _bursty(50, seed=3)
    c = _bursty(50, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a["wall"], c["wall"])


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="work"):
        simulate_job(0.0, 1.0, _const(1.0), _const(0.0), _const(0.0), _const(0.0))
    with pytest.raises(ValueError, match="checkpoint_interval"):
        simulate_job(1.0, 0.0, _const(1.0), _const(0.0), _const(0.0), _const(0.0))
    with pytest.raises(ValueError, match="horizon"):
        simulate_job(1.0, 1.0, _const(1.0), _const(0.0), _const(0.0), _const(0.0), horizon=0.0)


# --- closed form (DESIGN.md section 8) ----------------------------------------


def test_closed_form_without_failures() -> None:
    # l -> 0: R + W + (number of segments) * C
    expected = 5.0 + 100.0 + 4 * 1.0
    assert _closed_form_wall(1e-12, W, TAU, SAVE, INIT + LOAD) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("mtbf", "work", "interval", "restart", "save", "replicas"),
    [
        # moderate: 10 h of work, hourly checkpoints, MTBF 5 h
        pytest.param(5 * HOUR, 10 * HOUR, HOUR, 3 * MINUTE, MINUTE, 12_000, id="moderate"),
        # frequent failures, cheap checkpoints
        pytest.param(HOUR, 4 * HOUR, 20 * MINUTE, 10 * MINUTE, 2 * MINUTE, 12_000, id="frequent"),
        # last segment shorter (7.5 h = 3 x 2 h + 1.5 h)
        pytest.param(
            3 * HOUR, 7.5 * HOUR, 2 * HOUR, 5 * MINUTE, 5 * MINUTE, 12_000, id="short-last-segment"
        ),
        # restarts long relative to the MTBF: failures during starts matter
        pytest.param(
            40 * MINUTE, 2 * HOUR, 30 * MINUTE, 20 * MINUTE, MINUTE, 12_000, id="long-restart"
        ),
    ],
)
def test_pooled_ettr_matches_closed_form(
    mtbf: float,
    work: float,
    interval: float,
    restart: float,
    save: float,
    replicas: int,
) -> None:
    init, load = 0.4 * restart, 0.6 * restart
    rows = run_replicas(
        replicas,
        work,
        interval,
        failure_sampler=lambda g: float(g.exponential(mtbf)),
        init_sampler=lambda g: init,
        save_sampler=lambda g: save,
        load_sampler=lambda g: load,
        seed=2024,
    )
    assert np.all(rows["completed"] == 1.0)
    expected_wall = _closed_form_wall(1.0 / mtbf, work, interval, save, restart)
    expected_ettr = work / expected_wall

    mean_wall = float(rows["wall"].mean())
    se_wall = float(rows["wall"].std(ddof=1)) / math.sqrt(replicas)
    pooled_ettr = work / mean_wall
    se_ettr = pooled_ettr * se_wall / mean_wall  # delta method
    deviation = abs(pooled_ettr - expected_ettr)
    assert deviation <= max(3 * se_ettr, 0.01 * expected_ettr), (
        f"pooled ETTR {pooled_ettr:.5f} vs closed form {expected_ettr:.5f} "
        f"(SE {se_ettr:.5f}, mean wall {mean_wall:.1f} vs {expected_wall:.1f})"
    )
    # failures are a Poisson process and wall a stopping time, so by optional
    # stopping E[failures] = E[wall] / MTBF exactly
    mean_failures = float(rows["failures"].mean())
    se_failures = float(rows["failures"].std(ddof=1)) / math.sqrt(replicas)
    expected_failures = expected_wall / mtbf
    assert abs(mean_failures - expected_failures) <= max(3 * se_failures, 0.01 * expected_failures)
