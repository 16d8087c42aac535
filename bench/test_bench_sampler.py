"""The CPU batch sampler against numpy on one core: ``Distribution.sample(n,
threads=1)`` against ``numpy.random.Generator(Philox(seed))`` for 10^7
exponential and Weibull draws.

Both sides allocate their output array in the timed call. numpy's
exponential is a ziggurat (no log) and its weibull is exponential ** (1/k);
acesim computes -mean log(u) and scale exp(log(E) / k) with its portable
(bit-reproducible) log and exp, vectorized where the CPU allows.

Run: ``PYTHONPATH=python python -m pytest bench/test_bench_sampler.py -q``.
The ns per draw and the ratio (acesim / numpy; below 1: acesim is faster)
are printed in the terminal summary and stored in ``benchmark.extra_info``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from conftest import report, timed

N = 10_000_000
ROUNDS = 5
SEED = 12345
MEAN = 3600.0
SHAPE, SCALE = 0.7, 1000.0

LAWS: dict[str, tuple[ace.Distribution, Callable[[np.random.Generator], np.ndarray], float]] = {
    "exponential": (ace.Exponential(MEAN), lambda g: g.exponential(MEAN, N), MEAN),
    "weibull": (
        ace.Weibull(SHAPE, SCALE),
        lambda g: SCALE * g.weibull(SHAPE, N),
        SCALE * math.gamma(1 + 1 / SHAPE),
    ),
}


def _numpy_best(draw: Callable[[np.random.Generator], np.ndarray]) -> tuple[np.ndarray, float]:
    log: list[float] = []
    out = None
    for _ in range(ROUNDS):
        out = timed(lambda: draw(np.random.Generator(np.random.Philox(SEED))), log)()
    assert out is not None
    return out, min(log)


def _agree(a: np.ndarray, b: np.ndarray, mean: float) -> None:
    """Both samples have the law's mean, and each other's."""
    se_a = a.std(ddof=1) / math.sqrt(a.size)
    se_b = b.std(ddof=1) / math.sqrt(b.size)
    assert abs(a.mean() - mean) < 5 * se_a, (a.mean(), mean, se_a)
    assert abs(b.mean() - mean) < 5 * se_b, (b.mean(), mean, se_b)
    assert abs(a.mean() - b.mean()) < 5 * math.hypot(se_a, se_b)


@pytest.mark.parametrize("law", sorted(LAWS))
def test_sample_vs_numpy(benchmark: Any, law: str) -> None:
    dist, numpy_draw, mean = LAWS[law]
    numpy_out, numpy_s = _numpy_best(numpy_draw)
    log: list[float] = []
    out = benchmark.pedantic(
        timed(lambda: dist.sample(N, seed=SEED, threads=1), log), rounds=ROUNDS, iterations=1
    )
    acesim_s = min(log)
    assert out.shape == (N,) and out.dtype == np.float64
    assert np.all(np.isfinite(out)) and np.all(out > 0)
    _agree(out, numpy_out, mean)
    ratio = acesim_s / numpy_s
    benchmark.extra_info.update(
        draws=N,
        acesim_ns_per_draw=acesim_s / N * 1e9,
        numpy_ns_per_draw=numpy_s / N * 1e9,
        ratio_acesim_over_numpy=ratio,
    )
    report(
        f"sampler {law}: acesim {acesim_s / N * 1e9:.2f} ns/draw, numpy Generator(Philox) "
        f"{numpy_s / N * 1e9:.2f} ns/draw on one core: ratio {ratio:.2f} (acesim / numpy)"
    )
