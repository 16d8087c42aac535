"""Asynchronous and two-level checkpoint expectations under exponential
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
    TwoLevelIntervals,
    async_checkpoint_cost,
    async_optimal_interval,
    expected_wall_async_exponential,
    expected_wall_two_level_exponential,
    two_level_optimal_intervals,
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


def mc_two_level(
    mtbf: float,
    work: float,
    tier_interval: float,
    tier_save: float,
    tier_load: float,
    k: int,
    durable_save: float,
    durable_load: float,
    init: float,
    survive: float,
    *,
    replicas: int,
    seed: int,
) -> tuple[float, float]:
    """Mean wall-clock and its standard error: synchronous writes, the
    durable at every k-th boundary and at the end, a failure survived by the
    tier with probability ``survive`` (roll back to the newest checkpoint)
    and otherwise losing the tier (roll back to the durable)."""
    rng = np.random.default_rng(seed)
    bounds = np.concatenate([[0.0], _boundaries(work, tier_interval)])
    n = bounds.size - 1
    idx = np.arange(n + 1)
    is_durable = (idx % k == 0) | (idx == n)
    run = np.zeros(n + 1)  # run[j]: segment j and its write
    run[1:] = np.diff(bounds) + np.where(is_durable[1:], durable_save, tier_save)
    t = np.zeros(replicas)
    ttf = rng.exponential(mtbf, replicas)
    phase = np.full(replicas, RESTART)
    rem = np.full(replicas, init + durable_load)
    j = np.zeros(replicas, dtype=np.int64)  # progress: index of the checkpoint it is at
    dj = np.zeros(replicas, dtype=np.int64)  # last durable
    tj = np.full(replicas, -1, dtype=np.int64)  # tier checkpoint (-1: none)
    while True:
        a = np.flatnonzero(phase != DONE)
        if a.size == 0:
            break
        fail = ttf[a] < rem[a]
        dt = np.where(fail, ttf[a], rem[a])
        t[a] += dt
        ttf[a] -= dt
        rem[a] -= dt
        f = a[fail]
        process = rng.random(f.size) < survive
        tj[f[~process]] = -1
        back = np.maximum(tj[f], dj[f])
        from_tier = back > dj[f]
        j[f] = back
        phase[f] = RESTART
        rem[f] = init + np.where(from_tier, tier_load, durable_load)
        ttf[f] = rng.exponential(mtbf, f.size)
        e = a[~fail]
        ph = phase[e]
        r = e[ph == RESTART]
        phase[r] = COMPUTE  # a segment and its write
        rem[r] = run[j[r] + 1]
        c = e[ph == COMPUTE]
        j[c] += 1
        d = c[is_durable[j[c]]]
        dj[d] = j[d]
        tier = c[~is_durable[j[c]]]
        tj[tier] = j[tier]
        phase[c[j[c] == n]] = DONE
        more = c[j[c] != n]
        rem[more] = run[j[more] + 1]
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
    assert np.all(grid[0] < walls)  # the same without the restart cost
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


# --------------------------------------------------------------------------- two levels

TWO = dict(
    mtbf=3600.0,
    work=20130.0,
    tier_interval=300.0,
    tier_save=5.0,
    tier_load=20.0,
    durable_interval=1500.0,
    durable_save=60.0,
    durable_load=120.0,
    init=60.0,
    survive=0.7,
)


@pytest.mark.parametrize("survive", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("work", [450.0, 20130.0, 1e5])
def test_two_level_with_the_durable_only_is_the_synchronous_formula(survive, work):
    args = TWO | dict(work=work, tier_interval=1500.0, survive=survive)
    sync = ace.expected_wall_exponential(3600.0, work, 1500.0, 60.0, 60.0 + 120.0)
    assert expected_wall_two_level_exponential(**args) == pytest.approx(sync, rel=1e-12)


def test_two_level_all_survivable_with_equal_costs_is_synchronous_at_the_tier():
    args = TWO | dict(tier_save=60.0, tier_load=120.0, survive=1.0)
    sync = ace.expected_wall_exponential(3600.0, 20130.0, 300.0, 60.0, 60.0 + 120.0)
    assert expected_wall_two_level_exponential(**args) == pytest.approx(sync, rel=1e-12)


def test_two_level_without_failures_by_hand():
    # 20130 at 300: 68 segments (67 full + 30); durable at 5, 10, .., 65 and 68
    wall = expected_wall_two_level_exponential(**(TWO | dict(mtbf=math.inf)))
    assert wall == pytest.approx(60.0 + 120.0 + 20130.0 + 54 * 5.0 + 14 * 60.0)


def test_two_level_survival_helps_and_broadcasts():
    q = np.linspace(0.0, 1.0, 6)
    walls = expected_wall_two_level_exponential(**(TWO | dict(survive=q)))
    assert isinstance(walls, np.ndarray) and walls.shape == (6,)
    assert np.all(np.diff(walls) < 0)
    one = expected_wall_two_level_exponential(**(TWO | dict(survive=0.6)))
    assert walls[3] == pytest.approx(one, rel=1e-15)
    grid = expected_wall_two_level_exponential(
        **(TWO | dict(tier_interval=[[300.0], [500.0]], durable_interval=[[1500.0], [2500.0]]))
    )
    assert grid.shape == (2, 1)


@pytest.mark.parametrize(
    "case",
    [
        dict(),  # partial last period and a short last segment
        dict(work=18000.0, survive=0.9, tier_load=0.0, init=0.0),  # whole periods
        dict(mtbf=1200.0, work=6000.0, durable_interval=300.0 * 7, survive=0.5),
    ],
)
def test_two_level_matches_monte_carlo(case):
    args = TWO | case
    exact = expected_wall_two_level_exponential(**args)
    k = round(args["durable_interval"] / args["tier_interval"])
    mean, se = mc_two_level(
        args["mtbf"],
        args["work"],
        args["tier_interval"],
        args["tier_save"],
        args["tier_load"],
        k,
        args["durable_save"],
        args["durable_load"],
        args["init"],
        args["survive"],
        replicas=100_000,
        seed=7,
    )
    print(f"two-level exact {exact:.2f} MC {mean:.2f} +- {se:.2f} rel {(mean / exact - 1):+.5f}")
    assert abs(mean / exact - 1.0) < MC_RTOL
    assert abs(mean - exact) < 4.0 * se + 1e-9 * exact


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        (dict(durable_interval=1000.0), ValueError, "multiple"),
        (dict(durable_interval=200.0), ValueError, "durable_interval"),
        (dict(survive=1.5), ValueError, "survive"),
        (dict(survive=-0.1), ValueError, "survive"),
        (dict(survive="0.5"), TypeError, "survive"),
        (dict(mtbf=0.0), ValueError, "mtbf"),
        (dict(work=math.inf), ValueError, "work"),
        (dict(tier_interval=0.0), ValueError, "tier_interval"),
        (dict(tier_save=-1.0), ValueError, "tier_save"),
        (dict(tier_load=math.nan), ValueError, "tier_load"),
        (dict(durable_save=None), TypeError, "durable_save"),
        (dict(durable_load=math.inf), ValueError, "durable_load"),
        (dict(init=[1.0, -1.0]), ValueError, "init"),
        (dict(tier_interval=[1.0, 2.0], init=[1.0, 2.0, 3.0]), ValueError, "broadcast"),
    ],
)
def test_two_level_rejects(kwargs, exc, name):
    _raises_naming(exc, name, expected_wall_two_level_exponential, **(TWO | kwargs))


def test_two_level_multiple_tolerance():
    ok = expected_wall_two_level_exponential(
        **(TWO | dict(tier_interval=0.1, durable_interval=0.3))
    )
    assert math.isfinite(ok)


# --------------------------------------------------------------------------- two-level optimum


def _single_level_waste(mtbf: float, interval: float, save: float, restart: float) -> float:
    """1 - ETTR of a very long synchronous job (the per-segment limit)."""
    rate = 1.0 / mtbf
    ratio = math.exp(rate * restart) * math.expm1(rate * (interval + save)) / (rate * interval)
    return 1.0 - 1.0 / ratio


def test_two_level_optimum_beats_single_level_young():
    mtbf, c1, r1, c2, r2, init = 3600.0, 2.0, 5.0, 60.0, 120.0, 30.0
    best = two_level_optimal_intervals(mtbf, c1, r1, c2, r2, 0.8, init=init)
    assert isinstance(best, TwoLevelIntervals)
    assert best.k > 1 and best.durable_interval == pytest.approx(best.k * best.tier_interval)
    young = _single_level_waste(mtbf, ace.young_interval(c2, mtbf), c2, init + r2)
    print(f"two-level {best} vs Young waste {young:.4f}")
    assert best.expected_waste < young - 0.05
    # the figure is the long-work limit of the wall-clock formula
    work = best.durable_interval * 20_000
    wall = expected_wall_two_level_exponential(
        mtbf, work, best.tier_interval, c1, r1, best.durable_interval, c2, r2, init, 0.8
    )
    assert 1.0 - work / wall == pytest.approx(best.expected_waste, rel=1e-3)
    # no (tau, k) on a grid does better; first order in the neighbourhood
    taus = np.geomspace(20.0, 2000.0, 400)
    for k in range(1, 40):
        ratio = expected_wall_two_level_exponential(
            mtbf, k * taus * 10_000, taus, c1, r1, k * taus, c2, r2, init, 0.8
        ) / (k * taus * 10_000)
        assert np.min(1.0 - 1.0 / ratio) >= best.expected_waste - 1e-4
    assert best.tier_interval == pytest.approx(math.sqrt(2 * c1 * mtbf / 0.8), rel=0.3)
    assert best.durable_interval == pytest.approx(math.sqrt(2 * (c2 - c1) * mtbf / 0.2), rel=0.3)


def test_two_level_optimum_without_survival_is_single_level():
    mtbf, c2, r2, init = 3600.0, 60.0, 120.0, 30.0
    best = two_level_optimal_intervals(mtbf, 2.0, 5.0, c2, r2, 0.0, init=init)
    assert best.k == 1
    single = async_optimal_interval(c2, 0.0, mtbf)  # the synchronous optimum
    assert best.durable_interval == pytest.approx(single, rel=1e-4)
    assert best.expected_waste == pytest.approx(
        _single_level_waste(mtbf, single, c2, init + r2), rel=1e-9
    )
    # and a small survival share stays close to it
    near = two_level_optimal_intervals(mtbf, 2.0, 5.0, c2, r2, 0.02, init=init)
    assert near.expected_waste <= best.expected_waste
    assert near.expected_waste == pytest.approx(best.expected_waste, rel=0.05)


def test_two_level_optimum_with_a_large_k():
    best = two_level_optimal_intervals(86_400.0, 0.01, 0.0, 600.0, 600.0, 0.999)
    assert best.k > 256
    for k in (best.k - 1, best.k + 1):
        tau = best.tier_interval * best.k / k
        for scale in (0.9, 1.0, 1.1):
            work = k * tau * scale * 1e6
            wall = expected_wall_two_level_exponential(
                86_400.0,
                work,
                tau * scale,
                0.01,
                0.0,
                k * tau * scale,
                600.0,
                600.0,
                0.0,
                0.999,
            )
            assert 1.0 - work / wall >= best.expected_waste * (1.0 - 1e-3)


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        (dict(mtbf=math.inf), ValueError, "mtbf"),
        (dict(mtbf=-1.0), ValueError, "mtbf"),
        (dict(tier_save=0.0), ValueError, "tier_save"),
        (dict(tier_load=-1.0), ValueError, "tier_load"),
        (dict(durable_save="60"), TypeError, "durable_save"),
        (dict(durable_load=math.nan), ValueError, "durable_load"),
        (dict(survive=1.0), ValueError, "survive"),
        (dict(survive=-0.5), ValueError, "survive"),
        (dict(init=None), TypeError, "init"),
    ],
)
def test_two_level_optimum_rejects(kwargs, exc, name):
    args = (
        dict(
            mtbf=3600.0,
            tier_save=2.0,
            tier_load=5.0,
            durable_save=60.0,
            durable_load=120.0,
            survive=0.5,
        )
        | kwargs
    )
    _raises_naming(exc, name, two_level_optimal_intervals, **args)


def test_extremes_overflow_to_inf_not_nan():
    with np.errstate(all="raise"):
        assert expected_wall_async_exponential(1.0, 1e6, 600.0, 30.0, 900.0, 120.0) == math.inf
        for q in (0.0, 0.5, 1.0):
            wall = expected_wall_two_level_exponential(
                1.0, 1e6, 600.0, 30.0, 9.0, 1200.0, 60.0, 60.0, 1.0, q
            )
            assert wall > 1e300  # (q = 1: 833 periods of about e^(61 + 630), finite)
        # the long-work optimum is computed in logs: no overflow
        assert async_optimal_interval(30.0, 0.0, 1e-3) == pytest.approx(1e-3, rel=1e-4)
        assert async_optimal_interval(30.0, 10.0, 1e-3, work=100.0) == pytest.approx(1e-3, rel=1e-4)
    _raises_naming(ValueError, "overflows", two_level_optimal_intervals, 10.0, 1.0, 0, 1e4, 10, 0.5)


def test_two_level_result_is_frozen():
    best = two_level_optimal_intervals(3600.0, 2.0, 5.0, 60.0, 120.0, 0.5)
    with pytest.raises(AttributeError):
        best.k = 3  # type: ignore[misc]
