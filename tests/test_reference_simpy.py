"""acesim against the independent SimPy reference model (tests/simpy_reference.py).

Both implement the single-job lifecycle of DESIGN.md section 4 with
``fleet=None`` (no queue, no detection delay, replacements always available)
but draw their random numbers independently: acesim from its own
distributions (Philox streams), the reference from numpy generators. So the
comparison is statistical: the means of each model's per-replica results
must agree within 3 combined standard errors.
"""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("simpy")

import acesim as ace
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simpy_reference import run_replicas

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"

Sampler = Callable[[np.random.Generator], float]

ACESIM_REPLICAS = 40_000
SIMPY_REPLICAS = 4_000
Z = 3.0


@dataclass(frozen=True)
class Scenario:
    """One lifecycle, described twice: for acesim and for the reference."""

    work: float
    interval: float
    failures: ace.Distribution  # acesim only
    failure_sampler: Sampler  # reference only (numpy draws)
    horizon: float = math.inf


# init, save and load are random too, each drawn from its own family in both
# models: Gamma init, LogNormal save and load.
INIT_SHAPE, INIT_SCALE = 2.0, 1 * MINUTE
SAVE_MU, SAVE_SIGMA = math.log(45.0), 0.6
LOAD_MU, LOAD_SIGMA = math.log(90.0), 0.4


def _acesim(s: Scenario, seed: int) -> np.ndarray:
    job = ace.Job(
        1024,
        s.work,
        s.interval,
        init=ace.Gamma(INIT_SHAPE, INIT_SCALE),
        save=ace.LogNormal(SAVE_MU, SAVE_SIGMA),
        load=ace.LogNormal(LOAD_MU, LOAD_SIGMA),
    )
    res = ace.simulate(
        job, failures=s.failures, replicas=ACESIM_REPLICAS, seed=seed, horizon=s.horizon, threads=2
    )
    rows = res.jobs
    # fleet=None and no causes: nothing is queued, detected or waited for
    for field in ("detection", "queue_wait", "recovery_wait"):
        assert np.all(rows[field] == 0.0), field
    return rows


def _reference(s: Scenario, seed: int) -> np.ndarray:
    return run_replicas(
        SIMPY_REPLICAS,
        s.work,
        s.interval,
        failure_sampler=s.failure_sampler,
        init_sampler=lambda g: float(g.gamma(INIT_SHAPE, INIT_SCALE)),
        save_sampler=lambda g: float(g.lognormal(SAVE_MU, SAVE_SIGMA)),
        load_sampler=lambda g: float(g.lognormal(LOAD_MU, LOAD_SIGMA)),
        seed=seed,
        horizon=s.horizon,
    )


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _compare(a: np.ndarray, b: np.ndarray, fields: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    """Per field: (acesim mean, reference mean, combined SE, z); asserts |z| < Z."""
    out: dict[str, tuple[float, ...]] = {}
    problems = []
    for field in fields:
        ma, sa = _mean_se(a[field])
        mb, sb = _mean_se(b[field])
        se = math.hypot(sa, sb)
        z = (ma - mb) / se if se > 0 else (0.0 if ma == mb else math.inf)
        out[field] = (ma, mb, se, z)
        if not abs(z) < Z:
            problems.append(
                f"{field}: acesim {ma:.6g} vs SimPy {mb:.6g}, combined SE {se:.3g}, z {z:+.2f}"
            )
    for f, v in out.items():
        print(f"{f:12s} acesim {v[0]:12.6g}  SimPy {v[1]:12.6g}  SE {v[2]:9.3g}  z {v[3]:+.2f}")
    assert not problems, "; ".join(problems)
    return out


def _check(s: Scenario, seed: int) -> dict[str, tuple[float, ...]]:
    a, b = _acesim(s, seed), _reference(s, seed)
    assert a["failures"].mean() > 2.0  # the scenario exercises failures
    fields = ("wall", "failures", "wasted", "overhead", "ckpt_stall")
    if not math.isinf(s.horizon):
        # (without a horizon productive == work in every replica: checked exactly below)
        fields += ("productive",)
    out = _compare(a, b, fields)
    # the comparison has power: the combined SE is well under 1% of the mean wall
    assert out["wall"][2] < 0.01 * out["wall"][1]
    if math.isinf(s.horizon):
        assert a["completed"].all() and np.all(b["completed"] == 1.0)
        np.testing.assert_allclose(a["productive"], s.work, rtol=1e-9)
        np.testing.assert_allclose(b["productive"], s.work, rtol=1e-9)
        # both models agree on the number of checkpoints exactly
        np.testing.assert_array_equal(a["checkpoints"], b["checkpoints"][0])
        assert np.all(b["checkpoints"] == b["checkpoints"][0])
        # pooled ETTR (work / mean wall), with its delta-method SE
        ea, eb = s.work / out["wall"][0], s.work / out["wall"][1]
        se = ea * out["wall"][2] / out["wall"][0]
        assert abs(ea - eb) < Z * se
    return out


# (a) Weibull shape 0.5: decreasing hazard, bursts of failures
WEIBULL_SHAPE, WEIBULL_SCALE = 0.5, 3 * HOUR  # mean 6 h


def test_weibull_half() -> None:
    s = Scenario(
        work=DAY,
        interval=HOUR,
        failures=ace.Weibull(WEIBULL_SHAPE, WEIBULL_SCALE),
        failure_sampler=lambda g: WEIBULL_SCALE * float(g.weibull(WEIBULL_SHAPE)),
    )
    _check(s, seed=101)


def test_weibull_half_with_horizon() -> None:
    s = Scenario(
        work=DAY,
        interval=HOUR,
        failures=ace.Weibull(WEIBULL_SHAPE, WEIBULL_SCALE),
        failure_sampler=lambda g: WEIBULL_SCALE * float(g.weibull(WEIBULL_SHAPE)),
        horizon=30 * HOUR,
    )
    out = _check(s, seed=102)
    assert out["wall"][0] < 30 * HOUR
    a, b = _acesim(s, 103), _reference(s, 103)
    _compare(a, b, ("completed",))
    assert 0.05 < a["completed"].mean() < 0.95


# (b) bimodal: mostly long quiet runs, sometimes a failure within minutes
LONG, SHORT, P_LONG = 12 * HOUR, 10 * MINUTE, 0.9


def _bimodal_sampler(g: np.random.Generator) -> float:
    return float(g.exponential(LONG if g.random() < P_LONG else SHORT))


def test_bimodal_mixture() -> None:
    s = Scenario(
        work=2 * DAY,
        interval=2 * HOUR,
        failures=ace.Mixture(
            [(P_LONG, ace.Exponential(LONG)), (1 - P_LONG, ace.Exponential(SHORT))]
        ),
        failure_sampler=_bimodal_sampler,
    )
    _check(s, seed=202)


# (c) a real failure history, resampled i.i.d.


def _history(name: str, column: str) -> np.ndarray:
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(
            f"shared failure data not found: {path} (the ../shared/data folder is "
            f"only present next to the project checkout)"
        )
    with path.open(newline="") as f:
        values = [row[column] for row in csv.DictReader(f)]
    return np.array([float(v) for v in values if v.strip() != ""])


@pytest.mark.parametrize(
    ("name", "column", "work", "interval"),
    [
        ("titan_gpu_interfailure_s.csv", "inter_failure_s", 2 * DAY, HOUR),
        ("lanl_system_interfailure_s.csv", "inter_failure_s", 3 * DAY, 2 * HOUR),
    ],
    ids=["titan", "lanl"],
)
def test_empirical_history(name: str, column: str, work: float, interval: float) -> None:
    data = _history(name, column)
    assert data.size > 1000 and np.all(data >= 0)
    s = Scenario(
        work=work,
        interval=interval,
        failures=ace.Empirical.from_csv(DATA_DIR / name, column=column),
        failure_sampler=lambda g: float(data[g.integers(data.size)]),
    )
    np.testing.assert_array_equal(np.sort(s.failures.samples), np.sort(data))  # type: ignore[attr-defined]
    _check(s, seed=303)


def test_compare_detects_a_real_difference() -> None:
    """The comparison is not vacuous: a 10% shorter failure mean for acesim
    only is detected."""
    s = Scenario(
        work=DAY,
        interval=HOUR,
        failures=ace.Weibull(WEIBULL_SHAPE, 0.9 * WEIBULL_SCALE),
        failure_sampler=lambda g: WEIBULL_SCALE * float(g.weibull(WEIBULL_SHAPE)),
    )
    with pytest.raises(AssertionError, match="wall"):
        _compare(_acesim(s, 404), _reference(s, 404), ("wall",))
