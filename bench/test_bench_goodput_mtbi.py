"""acesim against the 12-gpu-goodput-mtbi lab's plain-Python loop on the lab's
seven published scenarios (bench/goodput_mtbi_reference.py, written from
the lab's documentation), per run, one core each (issue 28).

Mapping onto acesim: a 1,024-GPU job (128 nodes) on a fleet of the
scenario's nodes, the rest hot spares, repairs Exp(mean 48 h), 28 days as
the horizon (work in flight at the end counts as productive, as in the
lab); the job's checkpoint interval and blocking write as the scenario's
(Daly's interval computed as the lab does, from the nominal MTBI), the
restart as ``init``, no separate load. The lab's interruptions (each job
node at 1 / MTBF, the job at 1 / 40 h, only while the job runs) are
acesim's job-level failures at the summed rate (for the firmware scenario,
the job's expected share of the 600-h nodes), their causes one list: the
node causes' shares times the node share of the rate, the job causes' times
the job share, each with its detection time and ``node_down``.

Checks: the Python model's mean goodput over its seeds lies within 3
standard errors of a 20-seed mean (the lab's) plus one point of the lab's
published figure (docs/results.md), and acesim's mean ETTR within 4
combined standard errors plus one point of the Python model's (acesim
charges the restart at the first start too, and its job-level clock runs
through the restart; the firmware scenario draws the job's nodes in the
lab's model and uses their expected mix in acesim's).

Target (issue 28): acesim at least 300x the lab's loop on every scenario.
The test asserts correctness and prints the ratios; it never fails on time.

Run: ``PYTHONPATH=python python -m pytest bench/test_bench_goodput_mtbi.py -q -s``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from conftest import report, scaled
from goodput_mtbi_reference import PUBLISHED_GOODPUT, SCENARIOS, Scenario, run

PYTHON_SEEDS = scaled(100, 20)  # seeds 1..N, as the lab's (it publishes 20)
REPLICAS = scaled(1000, 100)
SEED = 1


def acesim_inputs(sc: Scenario) -> dict[str, Any]:
    """simulate's arguments for the lab's scenario (see the module docstring)."""
    total = sum(count for count, _ in sc.node_groups)
    node_rate = sum(count / mtbf for count, mtbf in sc.node_groups) * sc.job_nodes / total
    job_rate = 1.0 / sc.job_mtbi
    rate = node_rate + job_rate
    causes = [
        ace.Cause(c.name, c.share * node_rate / rate, detect=c.detect, node_down=c.node_down)
        for c in sc.node_causes
    ] + [
        ace.Cause(c.name, c.share * job_rate / rate, detect=c.detect, node_down=False)
        for c in sc.job_causes
    ]
    horizon = sc.days * ace.DAY
    return dict(
        jobs=ace.Job(
            sc.job_nodes * sc.gpus_per_node,
            horizon,
            sc.checkpoint_interval,
            init=sc.restart,
            save=sc.checkpoint,
            load=0.0,
        ),
        failures=ace.Exponential(1.0 / rate),
        fleet=ace.Fleet(
            total,
            sc.gpus_per_node,
            spares=total - sc.job_nodes,
            repair=ace.Exponential(sc.repair),
        ),
        causes=causes,
        horizon=horizon,
    )


def _python(sc: Scenario) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    goodput = np.array([run(sc, seed)["goodput"] for seed in range(1, PYTHON_SEEDS + 1)])
    return goodput, (time.perf_counter() - t0) / PYTHON_SEEDS


def _acesim(inputs: dict[str, Any]) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    res = ace.simulate(**inputs, replicas=REPLICAS, seed=SEED, threads=1)
    return res.jobs["ettr"].astype(np.float64), (time.perf_counter() - t0) / REPLICAS


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_goodput_mtbi_scenario(benchmark: Any, name: str) -> None:
    sc = SCENARIOS[name]
    inputs = acesim_inputs(sc)
    timings: dict[str, list[float]] = {"python": [], "acesim": []}
    out: dict[str, np.ndarray] = {}

    def round_() -> None:  # both models, side by side
        out["python"], seconds = _python(sc)
        timings["python"].append(seconds)
        out["acesim"], seconds = _acesim(inputs)
        timings["acesim"].append(seconds)

    benchmark.pedantic(round_, rounds=2, iterations=1)
    python, acesim = out["python"], out["acesim"]
    mean_p = float(python.mean())
    se_p = float(python.std(ddof=1) / math.sqrt(python.size))
    se_20 = float(python.std(ddof=1) / math.sqrt(20))
    published = PUBLISHED_GOODPUT[name]
    assert abs(mean_p - published) < 3 * se_20 + 0.01, (name, mean_p, published)
    mean_a = float(acesim.mean())
    se_a = float(acesim.std(ddof=1) / math.sqrt(acesim.size))
    assert abs(mean_a - mean_p) < 4 * math.hypot(se_a, se_p) + 0.01, (name, mean_a, mean_p)
    python_us = min(timings["python"]) * 1e6
    acesim_us = min(timings["acesim"]) * 1e6
    ratio = python_us / acesim_us
    benchmark.extra_info.update(
        python_us_per_run=python_us,
        acesim_us_per_replica=acesim_us,
        ratio_python_over_acesim=ratio,
        goodput_python=mean_p,
        goodput_acesim=mean_a,
        goodput_published=published,
    )
    report(
        f"12-gpu-goodput-mtbi {name}: acesim {acesim_us:.1f} us/replica ({REPLICAS}) vs the "
        f"plain-Python loop {python_us:.0f} us/run ({PYTHON_SEEDS} seeds): ratio {ratio:.1f}x "
        f"(target >= 300x); goodput acesim {mean_a:.4f} vs Python model {mean_p:.4f} vs "
        f"published {published:.3f}"
    )
