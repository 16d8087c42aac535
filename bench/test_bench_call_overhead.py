"""The Python wrapper's fixed cost per ``simulate`` call: a one-replica run
of one 1,024-GPU, 2-day job (Weibull(0.7) failures every 8 hours), timed
through ``acesim.simulate`` and through the compiled call it makes with the
same, already converted, arguments, side by side (best of five rounds of
2,000 calls each). The wrapper's share is the difference. The rows must be
the same bytes. Run: ``python -m pytest bench/test_bench_call_overhead.py
-q``; the figures are in the terminal summary."""

from __future__ import annotations

import time
from typing import Any

import acesim as ace
import numpy as np
from acesim import _core, simulation
from conftest import report

CALLS = 2_000
ROUNDS = 5


def test_wrapper_cost_per_call(benchmark: Any) -> None:
    job = ace.Job(1024, 2 * ace.DAY, ace.HOUR)
    law = ace.Weibull(0.7, 8 * ace.HOUR)
    captured: dict[str, Any] = {}
    real = _core.simulate

    def capture(*args: Any, **kwargs: Any) -> Any:
        captured.update(args=args, kwargs=kwargs)
        return real(*args, **kwargs)

    simulation._core.simulate = capture  # type: ignore[attr-defined]
    try:
        res = ace.simulate(job, law, seed=1, threads=1)
    finally:
        simulation._core.simulate = real  # type: ignore[attr-defined]
    args, kwargs = captured["args"], captured["kwargs"]
    raw = real(*args, **kwargs)
    assert np.asarray(raw["jobs"]).tobytes() == res.jobs.tobytes()

    def whole() -> float:
        start = time.perf_counter()
        for _ in range(CALLS):
            ace.simulate(job, law, seed=1, threads=1)
        return (time.perf_counter() - start) / CALLS

    def core() -> float:
        start = time.perf_counter()
        for _ in range(CALLS):
            real(*args, **kwargs)
        return (time.perf_counter() - start) / CALLS

    wholes, cores = [], []
    for _ in range(ROUNDS):
        wholes.append(whole())
        cores.append(core())
    total, inner = min(wholes), min(cores)
    wrapper = total - inner
    benchmark.extra_info.update(call_us=total * 1e6, core_us=inner * 1e6, wrapper_us=wrapper * 1e6)
    benchmark.pedantic(lambda: None, rounds=1)
    report(
        f"simulate call, 1 job x 1 replica: {total * 1e6:.1f} us, of which the compiled call "
        f"{inner * 1e6:.1f} us and the Python wrapper {wrapper * 1e6:.1f} us "
        f"({wrapper / total:.0%} of the call)"
    )
    assert wrapper > 0.0
