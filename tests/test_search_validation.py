"""``ace.tune`` where the truth is known: the single-job interval for GPU-hours
lost (the closed form under exponential failures), a small fleet grid for
the fleet's ETTR (brute force with many replicas), and the fewest spares
that keep a flagship's ETTR (brute force). The slow versions (``.ci/slow``)
run 200 fixed seeds each and require the choice to be correct on at least
184 (the nominal 95% less two standard errors), and compare the replicas
spent with Rinott's two-stage procedure for the same guarantee; the quick
versions run a few seeds."""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from typing import Any

import acesim as ace
import numpy as np
import numpy.typing as npt
import pytest
from acesim.objectives import Objective, evaluate

SLOW = os.environ.get("ACESIM_SLOW_PROPERTIES") == "1"
#: The brute-force seed: disjoint from every tuning seed here.
TRUTH_SEED = 1_000_003
FIRST_STAGE = 20

# -- A: one job, GPU-hours lost, exponential failures ------------------------
# 8 GPUs, 12 h of work, failures every 6 h, saves of 5 min, init and load of
# 1 min each. E[GPU-hours lost] = 8 (E[wall] - work) / 3600 is linear in the
# expected wall, whose closed form is acesim.expected_wall_exponential.
WORK, MTBF, SAVE, RESTART = 12 * 3600.0, 6 * 3600.0, 300.0, 120.0
INTERVALS = [900, 1800, 2700, 3600, 5400, 7200, 10800]
INTERVAL_BASE = ace.Scenario.from_dict(
    {
        "jobs": [{"gpus": 8, "work": WORK, "checkpoint_interval": 3600, "init": 60,
                  "save": SAVE, "load": 60}],
        "failures": {"law": "exponential", "mean": MTBF},
    }
)  # fmt: skip

# -- B: a small fleet, the fleet's ETTR ----------------------------------------
FLEET_BASE = ace.Scenario.from_dict(
    {
        "jobs": [
            {"name": "flagship", "gpus": 16, "work": "2d", "checkpoint_interval": "1h",
             "save": "5min"},
            {"name": "other", "gpus": 16, "work": "1d", "checkpoint_interval": "1h"},
        ],
        "fleet": {"nodes": 5, "spares": 1, "repair": "4h",
                  "node_failures": {"law": "exponential", "mean": "2d"}},
    }
)  # fmt: skip
FLEET_SPACE = {
    "jobs[0].checkpoint_interval": ["1h", "2h", "3h", "4h"],
    "policy.replacement": ["spares", "wait_repair"],
}

# -- C: capacity: the fewest spares for the flagship's ETTR ----------------------
SPARES_BASE = ace.Scenario.from_dict(
    {
        "jobs": [
            {"name": "flagship", "gpus": 16, "work": "1d", "checkpoint_interval": "1h",
             "priority": 1},
            {"name": "small", "count": 30, "gpus": 8, "work": "6h",
             "checkpoint_interval": "1h"},
        ],
        "fleet": {"nodes": 6, "spares": 0, "repair": "1d",
                  "node_failures": {"law": "exponential", "mean": "3d"}},
        "policy": {"replacement": "spares"},
    }
)  # fmt: skip


@dataclass
class Outcome:
    correct: int
    seeds: int
    replicas: int
    rinott: int

    def text(self, name: str) -> str:
        text = (
            f"{name}: correct on {self.correct}/{self.seeds} seeds; replicas spent "
            f"{self.replicas / self.seeds:,.0f} per seed"
        )
        if self.rinott:
            text += (
                f", Rinott's two-stage procedure {self.rinott / self.seeds:,.0f} "
                f"({self.replicas / self.rinott:.2f}x)"
            )
        return text


@functools.cache
def rinott_constant(k: int, n0: int, confidence: float) -> float:
    """Rinott's h: the solution of E_Y[ E_X[Phi(h / sqrt((n0 - 1)(1/X + 1/Y)))]^(k-1) ]
    = confidence, X and Y chi-square with n0 - 1 degrees of freedom
    (quadrature on 400 chi-square quantiles, by simulation with a fixed seed)."""
    draws = np.sort(np.random.default_rng(7).chisquare(n0 - 1, 400_000))
    q = draws[((np.arange(400) + 0.5) / 400 * draws.size).astype(np.int64)]
    inv = 1.0 / q
    scale = np.sqrt((n0 - 1) * (inv[:, None] + inv[None, :]))  # [x, y]
    erf = np.vectorize(math.erf)

    def coverage(h: float) -> float:
        inner = (0.5 * (1.0 + erf(h / scale / math.sqrt(2.0)))).mean(axis=0)
        return float(np.mean(inner ** (k - 1)))

    lo, hi = 0.0, 20.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if coverage(mid) < confidence else (lo, mid)
    return (lo + hi) / 2


def rinott_replicas(
    base: ace.Scenario, space: dict[str, list[Any]], objective: Objective, seed: int,
    delta: float, h: float,
) -> int:  # fmt: skip
    """Rinott's total: each candidate max(n0, ceil((h S_i / delta)^2)) with
    S_i its first-stage standard deviation (the same first stage KN ran)."""
    import itertools

    paths = list(space)
    total = 0
    for combo in itertools.product(*space.values()):
        values = evaluate(base, objective, dict(zip(paths, combo, strict=True)), seed=seed,
                          replicas=FIRST_STAGE)  # fmt: skip
        s = float(values.std(ddof=1))
        total += max(FIRST_STAGE, math.ceil((h * s / delta) ** 2))
    return total


def truth(base: ace.Scenario, space: dict[str, list[Any]], objective: Objective,
          replicas: int) -> dict[tuple[Any, ...], npt.NDArray[np.float64]]:  # fmt: skip
    """Brute force: every candidate's values on ``replicas`` replicas of
    TRUTH_SEED (common random numbers: paired across candidates)."""
    import itertools

    paths = list(space)
    return {
        combo: evaluate(
            base,
            objective,
            dict(zip(paths, combo, strict=True)),
            seed=TRUTH_SEED,
            replicas=replicas,
        )
        for combo in itertools.product(*space.values())
    }


def paired_se(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    return float((a - b).std(ddof=1) / math.sqrt(a.size))


def check_interval(seeds: range) -> Outcome:
    objective = Objective.resolve("gpu_hours_lost")
    delta = 1.0
    grid = np.array(INTERVALS, dtype=float)
    lost = 8 * (ace.expected_wall_exponential(MTBF, WORK, grid, SAVE, RESTART) - WORK) / 3600
    best = float(lost.min())
    # The setup: no candidate within 0.2 GPU-hours of the indifference edge.
    assert not np.any(np.abs(lost - best - delta) < 0.2)
    acceptable = {int(t) for t, v in zip(INTERVALS, lost, strict=True) if v <= best + delta}
    assert acceptable == {2700, 3600}
    h = rinott_constant(len(INTERVALS), FIRST_STAGE, 0.95)
    out = Outcome(0, 0, 0, 0)
    space = {"jobs[0].checkpoint_interval": INTERVALS}
    for seed in seeds:
        r = ace.tune(INTERVAL_BASE, space, objective="gpu_hours_lost", indifference=delta,
                     seed=seed)  # fmt: skip
        assert r.best is not None
        out.correct += r.best["jobs[0].checkpoint_interval"] in acceptable
        out.seeds += 1
        out.replicas += r.replicas
        out.rinott += rinott_replicas(INTERVAL_BASE, space, objective, seed, delta, h)
    return out


def check_fleet(seeds: range, replicas: int) -> Outcome:
    objective = Objective.resolve("ettr")
    delta = 0.008
    values = truth(FLEET_BASE, FLEET_SPACE, objective, replicas)
    top = max(values, key=lambda c: float(values[c].mean()))
    best = float(values[top].mean())
    # The setup: no candidate's gap to the best within 4 paired standard
    # errors of the indifference edge (so the brute force classifies each).
    for c, v in values.items():
        if c != top:
            assert abs(best - float(v.mean()) - delta) > 4 * paired_se(values[top], v), c
    acceptable = {c for c, v in values.items() if float(v.mean()) >= best - delta}
    assert len(acceptable) == 2
    h = rinott_constant(8, FIRST_STAGE, 0.95)
    out = Outcome(0, 0, 0, 0)
    for seed in seeds:
        r = ace.tune(FLEET_BASE, FLEET_SPACE, indifference=delta, seed=seed)
        assert r.best is not None
        out.correct += tuple(r.best[p] for p in FLEET_SPACE) in acceptable
        out.seeds += 1
        out.replicas += r.replicas
        out.rinott += rinott_replicas(FLEET_BASE, FLEET_SPACE, objective, seed, delta, h)
    return out


def check_capacity(seeds: range, replicas: int) -> Outcome:
    objective = Objective.resolve("ettr", job="flagship")
    delta, bound = 0.01, 0.95
    space = {"fleet.spares": [0, 1, 2, 3]}
    values = truth(SPARES_BASE, space, objective, replicas)
    means = {c: (float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)))
             for c, v in values.items()}  # fmt: skip
    for m, se in means.values():  # the setup: every mean clear of both edges
        assert abs(m - bound) > 4 * se and abs(m - (bound - delta)) > 4 * se
    feasible = sorted(c[0] for c, (m, _) in means.items() if m >= bound)
    smallest = feasible[0]
    # Correct: no more than the smallest feasible, and within delta of the bound.
    correct = {c[0] for c, (m, _) in means.items() if c[0] <= smallest and m >= bound - delta}
    assert correct == {1}
    out = Outcome(0, 0, 0, 0)
    for seed in seeds:
        r = ace.tune(SPARES_BASE, space, job="flagship", subject_to=f"ettr >= {bound}",
                     minimize="fleet.spares", indifference=delta, seed=seed)  # fmt: skip
        out.correct += r.best is not None and r.best["fleet.spares"] in correct
        out.seeds += 1
        out.replicas += r.replicas
    return out


def test_rinott_constant_against_the_tables() -> None:
    # Bechhofer, Santner and Goldsman (1995), Table 6.1 / Rinott (1978):
    # k = 2, n0 = 20, P* = 0.95: h = 2.453 (two candidates: h / sqrt(2)
    # is t's 0.95 quantile in the limit).
    assert rinott_constant(2, 20, 0.95) == pytest.approx(2.45, abs=0.03)


def test_a_few_seeds() -> None:
    """The quick version: a few seeds of each case."""
    a = check_interval(range(3))
    b = check_fleet(range(3), replicas=4000)
    c = check_capacity(range(3), replicas=4000)
    assert a.correct == 3 and b.correct == 3 and c.correct == 3
    print("\n" + "\n".join(o.text(n) for n, o in (("interval", a), ("fleet", b))))


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="set ACESIM_SLOW_PROPERTIES=1")
@pytest.mark.parametrize("case", ["interval", "fleet", "capacity"])
def test_correct_on_184_of_200_seeds(case: str) -> None:
    seeds = range(200)
    if case == "interval":
        out = check_interval(seeds)
    elif case == "fleet":
        out = check_fleet(seeds, replicas=20_000)
    else:
        out = check_capacity(seeds, replicas=20_000)
    print("\n" + out.text(case))
    assert out.correct >= 184, out.text(case)
    if case != "capacity":
        assert out.replicas < out.rinott, out.text(case)
