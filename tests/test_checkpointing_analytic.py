"""Asynchronous checkpoint expectations under exponential
failures (acesim.checkpointing): the degenerate cases against the
synchronous closed form, the no-failure sums by hand, and the exact
expectations against independent Monte Carlo event loops written here
from the lifecycle semantics (not from the derivations)."""

from __future__ import annotations

import math
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.checkpointing import (
    async_checkpoint_cost,
    async_optimal_interval,
    expected_wall_async_exponential,
)

MC_RTOL = 0.005  # the brief's bound; each estimate's standard error is printed


def _boundaries(work: float, interval: float) -> np.ndarray:
    """Checkpoint boundaries: every interval of progress, then the work."""
    out = []
    b = interval
    while b < work * (1.0 - 1e-12):
        out.append(b)
        b += interval
    out.append(work)
    return np.asarray(out)


# --------------------------------------------------------------------------- Monte Carlo

RESTART, COMPUTE, SNAP, WAIT, DONE = range(5)


def mc_async(
    mtbf: float,
    work: float,
    interval: float,
    save: float,
    persist: float,
    restart: float,
    *,
    replicas: int,
    seed: int,
) -> tuple[float, float]:
    """Mean wall-clock and its standard error, one event per replica per
    step: a failure clock of held time (renewed at each failure), the job's
    activity (restart, compute, snapshot, wait) and at most one persist in
    flight beside it."""
    rng = np.random.default_rng(seed)
    bounds = np.concatenate([[0.0], _boundaries(work, interval)])
    n = bounds.size - 1
    t = np.zeros(replicas)
    ttf = rng.exponential(mtbf, replicas)
    phase = np.full(replicas, RESTART)
    rem = np.full(replicas, restart)
    durable = np.zeros(replicas, dtype=np.int64)  # index of the last durable checkpoint
    target = np.zeros(replicas, dtype=np.int64)  # boundary computed towards / snapshotted
    pr = np.full(replicas, np.inf)  # persist remaining (inf: none in flight)
    pj = np.zeros(replicas, dtype=np.int64)  # boundary being persisted
    while True:
        a = np.flatnonzero(phase != DONE)
        if a.size == 0:
            break
        ph = phase[a]
        act = np.where(ph == WAIT, np.inf, rem[a])
        clocks = np.stack([ttf[a], pr[a], act])
        which = np.argmin(clocks, axis=0)  # ties: failure, then persist, then activity
        dt = clocks[which, np.arange(a.size)]
        t[a] += dt
        ttf[a] -= dt
        pr[a] -= dt
        rem[a] -= dt
        # failures: back to the durable checkpoint, the persist is lost
        f = a[which == 0]
        phase[f] = RESTART
        rem[f] = restart
        pr[f] = np.inf
        ttf[f] = rng.exponential(mtbf, f.size)
        # persist ends: durable; a waiting job snapshots (or is done)
        p = a[which == 1]
        durable[p] = pj[p]
        pr[p] = np.inf
        waiting = p[phase[p] == WAIT]
        final = waiting[pj[waiting] == n]
        phase[final] = DONE
        go = waiting[pj[waiting] != n]
        phase[go] = SNAP
        rem[go] = save
        # activity ends
        e = a[which == 2]
        ph = phase[e]
        r = e[ph == RESTART]
        target[r] = durable[r] + 1
        phase[r] = COMPUTE
        rem[r] = bounds[target[r]] - bounds[durable[r]]
        c = e[ph == COMPUTE]
        busy = np.isfinite(pr[c])
        phase[c[busy]] = WAIT
        phase[c[~busy]] = SNAP
        rem[c[~busy]] = save
        s = e[ph == SNAP]
        pr[s] = persist
        pj[s] = target[s]
        last = s[target[s] == n]
        phase[last] = WAIT
        more = s[target[s] != n]
        phase[more] = COMPUTE
        rem[more] = bounds[target[more] + 1] - bounds[target[more]]
        target[more] += 1
    return float(t.mean()), float(t.std(ddof=1) / math.sqrt(replicas))


def _raises_naming(exc: Any, name: str, fn: Any, /, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert name in str(info.value), f"{name!r} not named in: {info.value}"


# --------------------------------------------------------------------------- async cost


def test_async_checkpoint_cost_values_and_broadcast():
    assert async_checkpoint_cost(30.0, 0.0, 600.0) == 30.0
    assert async_checkpoint_cost(30.0, 600.0, 600.0) == 30.0
    assert async_checkpoint_cost(30.0, 900.0, 600.0) == 330.0
    out = async_checkpoint_cost(30.0, np.array([100.0, 700.0, 1000.0]), [[500.0], [600.0]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 3)
    np.testing.assert_array_equal(out, [[30.0, 230.0, 530.0], [30.0, 130.0, 430.0]])
    assert isinstance(async_checkpoint_cost(1, 2, 3), float)


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        (dict(save=-1.0), ValueError, "save"),
        (dict(save=math.nan), ValueError, "save"),
        (dict(save="1"), TypeError, "save"),
        (dict(persist=-1.0), ValueError, "persist"),
        (dict(persist=math.inf), ValueError, "persist"),
        (dict(persist=None), TypeError, "persist"),
        (dict(checkpoint_interval=0.0), ValueError, "checkpoint_interval"),
        (dict(checkpoint_interval=True), TypeError, "checkpoint_interval"),
    ],
)
def test_async_checkpoint_cost_rejects(kwargs, exc, name):
    args = dict(save=30.0, persist=100.0, checkpoint_interval=600.0) | kwargs
    _raises_naming(exc, name, async_checkpoint_cost, **args)


def test_async_checkpoint_cost_shape_mismatch():
    _raises_naming(ValueError, "broadcast", async_checkpoint_cost, [1.0, 2.0], [1.0, 2.0, 3.0], 1.0)


# --------------------------------------------------------------------------- async wall


@pytest.mark.parametrize("work", [450.0, 600.0, 1000.0, 20130.0, 1e5])
@pytest.mark.parametrize("interval", [137.0, 600.0, 5000.0])
def test_async_wall_without_persist_is_the_synchronous_formula(work, interval):
    ours = expected_wall_async_exponential(3600.0, work, interval, 45.0, 0.0, 120.0)
    sync = ace.expected_wall_exponential(3600.0, work, interval, 45.0, 120.0)
    assert ours == pytest.approx(sync, rel=1e-12)


def test_async_wall_without_failures_by_hand():
    # 20130 at 600: 33 full segments + 330; waits of 900 - 600 at boundaries
    # 2..33 and 900 - 330 at the last, then the final persist
    wall = expected_wall_async_exponential(math.inf, 20130.0, 600.0, 30.0, 900.0, 120.0)
    assert wall == pytest.approx(120.0 + 20130.0 + 34 * 30.0 + 32 * 300.0 + 570.0 + 900.0)
    # one segment: start, compute, snapshot, persist
    assert expected_wall_async_exponential(math.inf, 500.0, 600.0, 30.0, 900.0, 120.0) == (
        120.0 + 500.0 + 30.0 + 900.0
    )
    # the huge-mtbf limit joins it
    near = expected_wall_async_exponential(1e15, 20130.0, 600.0, 30.0, 900.0, 120.0)
    assert near == pytest.approx(wall, rel=1e-8)


def test_async_wall_grows_with_the_persist_and_broadcasts():
    persist = np.array([0.0, 100.0, 300.0, 600.0, 900.0, 2000.0])
    walls = expected_wall_async_exponential(3600.0, 20000.0, 600.0, 30.0, persist, 120.0)
    assert isinstance(walls, np.ndarray) and walls.shape == persist.shape
    assert np.all(np.diff(walls) > 0)
    grid = expected_wall_async_exponential([[3600.0], [7200.0]], 20000.0, 600.0, 30.0, persist, 0)
    assert grid.shape == (2, 6)
    np.testing.assert_allclose(grid[0], walls - 0.0, rtol=0.05)  # restart changes little
    scalar = expected_wall_async_exponential(7200.0, 20000.0, 600.0, 30.0, 900.0, 0.0)
    assert grid[1, 4] == scalar


@pytest.mark.parametrize(
    ("mtbf", "work", "interval", "save", "persist", "restart"),
    [
        (3600.0, 20130.0, 600.0, 30.0, 250.0, 120.0),  # the persist hides behind compute
        (3600.0, 20130.0, 600.0, 30.0, 900.0, 120.0),  # the persist outlasts the interval
        (1800.0, 5000.0, 1200.0, 60.0, 1200.0, 300.0),  # persist == interval, short mtbf
    ],
)
def test_async_wall_matches_monte_carlo(mtbf, work, interval, save, persist, restart):
    exact = expected_wall_async_exponential(mtbf, work, interval, save, persist, restart)
    mean, se = mc_async(
        mtbf, work, interval, save, persist, restart, replicas=100_000, seed=20240611
    )
    print(f"async exact {exact:.2f} MC {mean:.2f} +- {se:.2f} rel {(mean / exact - 1):+.5f}")
    assert abs(mean / exact - 1.0) < MC_RTOL
    assert abs(mean - exact) < 4.0 * se + 1e-9 * exact


_ASYNC_OK = dict(
    mtbf=3600.0, work=1e5, checkpoint_interval=600.0, save=30.0, persist=100.0, restart_cost=120.0
)


@pytest.mark.parametrize("param", sorted(_ASYNC_OK))
@pytest.mark.parametrize(
    ("value", "exc"),
    [
        (math.nan, ValueError),
        (-1.0, ValueError),
        ("1", TypeError),
        (None, TypeError),
        (True, TypeError),
        ([1.0, math.nan], ValueError),
    ],
)
def test_async_wall_rejects(param, value, exc):
    _raises_naming(exc, param, expected_wall_async_exponential, **(_ASYNC_OK | {param: value}))


@pytest.mark.parametrize("param", ["work", "checkpoint_interval"])
def test_async_wall_rejects_zero(param):
    _raises_naming(ValueError, param, expected_wall_async_exponential, **(_ASYNC_OK | {param: 0.0}))


@pytest.mark.parametrize(
    "param", ["work", "checkpoint_interval", "save", "persist", "restart_cost"]
)
def test_async_wall_rejects_inf(param):
    kwargs = _ASYNC_OK | {param: math.inf}
    _raises_naming(ValueError, param, expected_wall_async_exponential, **kwargs)


# --------------------------------------------------------------------------- async optimum


def _lambert_optimum(save: float, persist: float, mtbf: float) -> float:
    """The exact long-work optimum: max(min(P, M), M (1 + W0(-e^(-1 - S/M))))."""
    from scipy.special import lambertw

    sync = mtbf * (1.0 + float(lambertw(-math.exp(-1.0 - save / mtbf)).real))
    return max(min(persist, mtbf), sync)


@pytest.mark.parametrize(
    ("save", "persist", "mtbf"),
    [
        (30.0, 0.0, 3600.0),
        (30.0, 300.0, 3600.0),
        (30.0, 600.0, 3600.0),
        (5.0, 10.0, 1e5),
        (600.0, 60.0, 3600.0),
        (30.0, 5000.0, 3600.0),
        (0.0, 120.0, 3600.0),
    ],
)
def test_async_optimum_is_the_exact_long_work_optimum(save, persist, mtbf):
    tau = async_optimal_interval(save, persist, mtbf)
    assert isinstance(tau, float)
    assert tau == pytest.approx(_lambert_optimum(save, persist, mtbf), rel=1e-6)
    assert async_optimal_interval(save, persist, mtbf, restart_cost=900.0) == pytest.approx(
        tau, rel=1e-6
    )


@pytest.mark.parametrize("ratio", [1e-5, 1e-4, 1e-3])
@pytest.mark.parametrize("persist_share", [0.0, 0.5, 2.0])
def test_async_optimum_first_order_for_small_costs(ratio, persist_share):
    mtbf = 10_000.0
    save = ratio * mtbf
    young = math.sqrt(2.0 * save * mtbf)
    persist = persist_share * young
    first_order = max(persist, young)
    tau = async_optimal_interval(save, persist, mtbf)
    assert tau == pytest.approx(first_order, rel=2.0 * math.sqrt(ratio))
    if persist_share == 0.0:  # and it is Young's
        assert tau == pytest.approx(ace.young_interval(save, mtbf), rel=2.0 * math.sqrt(ratio))


def test_async_optimum_for_a_finite_work_minimises_the_wall():
    args = dict(save=30.0, persist=200.0, mtbf=3600.0, restart_cost=120.0)
    for work in (900.0, 5000.0, 20130.0):
        tau = async_optimal_interval(**args, work=work)
        assert 0.0 < tau <= work

        def wall(x: Any, work: float = work) -> Any:
            return expected_wall_async_exponential(
                args["mtbf"], work, x, args["save"], args["persist"], args["restart_cost"]
            )

        scan = np.concatenate([np.geomspace(10.0, work, 4000), work / np.arange(1, 200)])
        assert wall(tau) <= float(np.min(wall(scan))) * (1.0 + 1e-12)
    # a long work comes back to the long-work optimum
    long = async_optimal_interval(**args, work=3e7)
    assert long == pytest.approx(async_optimal_interval(30.0, 200.0, 3600.0), rel=1e-3)


def test_async_optimum_without_failures():
    assert async_optimal_interval(30.0, 100.0, math.inf) == math.inf
    assert async_optimal_interval(30.0, 100.0, math.inf, work=5000.0) == 5000.0


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        (dict(save=-1.0), ValueError, "save"),
        (dict(save=[30.0]), TypeError, "save"),
        (dict(persist=math.nan), ValueError, "persist"),
        (dict(persist="0"), TypeError, "persist"),
        (dict(mtbf=0.0), ValueError, "mtbf"),
        (dict(mtbf=None), TypeError, "mtbf"),
        (dict(restart_cost=-1.0), ValueError, "restart_cost"),
        (dict(work=0.0), ValueError, "work"),
        (dict(work=math.inf), ValueError, "work"),
        (dict(save=0.0, persist=0.0), ValueError, "save and persist"),
    ],
)
def test_async_optimum_rejects(kwargs, exc, name):
    args = dict(save=30.0, persist=100.0, mtbf=3600.0) | kwargs
    _raises_naming(exc, name, async_optimal_interval, **args)
