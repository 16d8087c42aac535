"""Overhead of a Python failure policy over the built-in enum path: the same
fleet, failures and decisions (the callable returns the built-in choice), so
the difference in time per decision is the cost of calling into Python
(taking the GIL, building the read-only view, converting the answer).
Target: at most 1 microsecond per call."""

from __future__ import annotations

from typing import Any

import acesim as ace
import numpy as np
from conftest import report

FLEET = ace.Fleet(
    64, spares=8, repair=ace.Exponential(ace.HOUR), node_failures=ace.Exponential(2 * ace.DAY)
)
JOBS = [ace.Job(64, work=30 * ace.DAY, checkpoint_interval=ace.HOUR) for _ in range(6)]
RUN = dict(fleet=FLEET, replicas=40, seed=3, threads=1)


def spares(view: Any) -> ace.Replacement:
    return ace.Replacement.SPARES


def timed(policy: ace.Policy, rounds: int = 5) -> tuple[float, ace.SimulationResult]:
    import time

    best = float("inf")
    res = None
    for _ in range(rounds):
        start = time.perf_counter()
        res = ace.simulate(JOBS, policy=policy, **RUN)
        best = min(best, time.perf_counter() - start)
    assert res is not None
    return best, res


def test_python_policy_overhead(benchmark: Any) -> None:
    builtin_s, builtin = timed(ace.Policy(replacement=ace.Replacement.SPARES))
    res = benchmark.pedantic(
        ace.simulate,
        args=(JOBS,),
        kwargs=dict(policy=ace.Policy(on_failure=spares), **RUN),
        rounds=5,
        iterations=1,
    )
    python_s = benchmark.stats.stats.min
    # Same decisions, same results.
    for name in builtin.jobs.dtype.names or ():
        np.testing.assert_array_equal(builtin.jobs[name], res.jobs[name])
    calls = int(res.fleet["failures"].sum())
    per_call = (python_s - builtin_s) / calls
    benchmark.extra_info.update(
        calls=calls, builtin_s=builtin_s, python_s=python_s, overhead_us_per_call=per_call * 1e6
    )
    report(
        f"python policy: {calls:,} decisions, {python_s:.3f} s vs built-in {builtin_s:.3f} s: "
        f"{per_call * 1e6:.2f} us per call over the enum path (target 1 us)"
    )
    assert calls > 1000
