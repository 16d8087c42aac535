"""The fixed cost of a ``simulate`` call, split into the Python wrapper and
the compiled call it makes: each call is timed through ``acesim.simulate``
and through ``_core.simulate`` with the same, already converted, arguments,
side by side (best of five rounds). The wrapper's share is the difference;
the rows must be the same bytes.

- a one-replica run of one 1,024-GPU, 2-day job (Weibull(0.7) failures
  every 8 hours): the single-job kernel;
- a one-replica run of the kind a scheduler's test suite makes: 3 one-node
  jobs on a 4-node fleet with a hot spare, one node failure placed by a
  ``NodeTrace``, SPARES (the event-heap engine, its setup included);
- 2,000 replicas of that fleet with exponential node failures, per replica
  (the engine's setup is paid once a replica).

Run: ``python -m pytest bench/test_bench_call_overhead.py -q``; the figures
are in the terminal summary."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import acesim as ace
import numpy as np
from acesim import _core, simulation
from conftest import report

ROUNDS = 5
ZERO = ace.Constant(0.0)


def _core_call(call: Callable[[], ace.SimulationResult]) -> Callable[[], Any]:
    """The compiled call `call` makes, with its arguments converted once;
    checked to give the same job rows."""
    captured: dict[str, Any] = {}
    real = _core.simulate

    def capture(*args: Any, **kwargs: Any) -> Any:
        captured.update(args=args, kwargs=kwargs)
        return real(*args, **kwargs)

    simulation._core.simulate = capture  # type: ignore[attr-defined]
    try:
        res = call()
    finally:
        simulation._core.simulate = real  # type: ignore[attr-defined]
    args, kwargs = captured["args"], captured["kwargs"]
    assert np.asarray(real(*args, **kwargs)["jobs"]).tobytes() == res.jobs.tobytes()
    return lambda: real(*args, **kwargs)


def _per_call(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _split(call: Callable[[], ace.SimulationResult], calls: int) -> tuple[float, float]:
    """(whole call, compiled call) in seconds: best of ROUNDS, alternating."""
    core = _core_call(call)
    wholes, cores = [], []
    for _ in range(ROUNDS):
        wholes.append(_per_call(call, calls))
        cores.append(_per_call(core, calls))
    return min(wholes), min(cores)


def _report(benchmark: Any, what: str, total: float, inner: float) -> None:
    wrapper = total - inner
    benchmark.extra_info.update(call_us=total * 1e6, core_us=inner * 1e6, wrapper_us=wrapper * 1e6)
    benchmark.pedantic(lambda: None, rounds=1)
    report(
        f"simulate call, {what}: {total * 1e6:.1f} us, of which the compiled call "
        f"{inner * 1e6:.1f} us and the Python wrapper {wrapper * 1e6:.1f} us "
        f"({wrapper / total:.0%} of the call)"
    )
    assert wrapper > 0.0


def _small_fleet_jobs() -> list[ace.Job]:
    return [ace.Job(8, 10 * ace.HOUR, ace.HOUR, init=ZERO, save=ZERO, load=ZERO) for _ in range(3)]


def test_wrapper_cost_per_call(benchmark: Any) -> None:
    job = ace.Job(1024, 2 * ace.DAY, ace.HOUR)
    law = ace.Weibull(0.7, 8 * ace.HOUR)
    total, inner = _split(lambda: ace.simulate(job, law, seed=1, threads=1), 2_000)
    _report(benchmark, "1 job x 1 replica", total, inner)


def test_small_fleet_call(benchmark: Any) -> None:
    jobs = _small_fleet_jobs()
    trace = ace.NodeTrace.from_gaps({0: [2.5 * ace.HOUR]}, nodes=4)
    fleet = ace.Fleet(4, spares=1, repair=ace.HOUR, node_failures=trace)
    policy = ace.Policy(replacement="SPARES")
    call = lambda: ace.simulate(jobs, fleet=fleet, policy=policy, threads=1)  # noqa: E731
    res = call()
    # Job 2, on node 0, loses the 0.5 h since its 2 h checkpoint and moves
    # to the hot spare at once: it ends at 10.5 h, the others at 10 h.
    assert res.jobs["failures"].tolist() == [0, 0, 1]
    assert res.jobs["end"].tolist() == [10 * ace.HOUR, 10 * ace.HOUR, 10.5 * ace.HOUR]
    total, inner = _split(call, 1_000)
    _report(benchmark, "4-node fleet, 3 jobs x 1 replica", total, inner)


def test_small_fleet_replicas(benchmark: Any) -> None:
    jobs = _small_fleet_jobs()
    fleet = ace.Fleet(4, spares=1, repair=ace.HOUR, node_failures=ace.Exponential(ace.DAY))
    replicas = 2_000
    res = benchmark.pedantic(
        ace.simulate,
        args=(jobs,),
        kwargs=dict(fleet=fleet, replicas=replicas, seed=1, threads=1),
        rounds=3,
    )
    assert len(res.fleet) == replicas and res.jobs["completed"].all()
    per_replica = benchmark.stats.stats.min / replicas
    benchmark.extra_info.update(us_per_replica=per_replica * 1e6)
    report(
        f"small fleet, 2,000 replicas of 3 jobs on 4 nodes: {per_replica * 1e6:.2f} us per replica"
    )
