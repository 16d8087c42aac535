"""Benchmarks: put tests/ on sys.path (for the SimPy reference model) and
print the measured speed-ups at the end of the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The benches run in one process whatever ``-n`` the test configuration
    adds: they measure time side by side, and pytest-benchmark and the
    summary below work only in the main process."""
    if hasattr(config.option, "numprocesses"):
        config.option.numprocesses = 0


#: ``ACESIM_BENCH_QUICK=1``: the benches that honour it run reduced
#: scenarios (fewer replicas, shorter or smaller runs) for a quick look; the
#: figures they print are then not the reference figures.
QUICK = os.environ.get("ACESIM_BENCH_QUICK", "") not in ("", "0")


def scaled(full: int, quick: int) -> int:
    """``full`` normally, ``quick`` under ``ACESIM_BENCH_QUICK=1``."""
    return quick if QUICK else full


#: Lines the benchmarks want shown in the terminal summary (even under -q).
REPORT: list[str] = []


def against_simpy(
    benchmark: Any,
    log: list[float],
    replicas: int,
    simpy_per_replica: float,
    acesim_rows: Any,
    simpy_rows: Any,
    must_be_faster: bool = True,
) -> tuple[float, float]:
    """acesim's time per replica (its best round in ``log``, of ``replicas``
    each) and its ratio to a SimPy model's, recorded in ``extra_info`` with
    both models' failures per replica; acesim must be the faster unless
    ``must_be_faster`` is false (a target not met yet: reported, not failed)."""
    acesim_per_replica = min(log) / replicas
    ratio = simpy_per_replica / acesim_per_replica
    benchmark.extra_info.update(
        replicas=replicas,
        acesim_s_per_replica=acesim_per_replica,
        simpy_s_per_replica=simpy_per_replica,
        ratio_simpy_over_acesim=ratio,
        failures_per_replica_acesim=float(acesim_rows["failures"].mean()),
        failures_per_replica_simpy=float(simpy_rows["failures"].mean()),
    )
    if must_be_faster:
        assert ratio > 1.0
    return acesim_per_replica, ratio


@pytest.fixture(scope="session")
def bare_heap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bare binary-heap loop (bench/native/bare_heap.cpp), compiled with
    the system C++ compiler at -O2; the bench is skipped without one."""
    compiler = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the bare heap loop")
    exe = tmp_path_factory.mktemp("bare") / "bare_heap"
    source = Path(__file__).parent / "native" / "bare_heap.cpp"
    subprocess.run([compiler, "-O2", "-std=c++17", str(source), "-o", str(exe)], check=True)
    return exe


def bare_heap_seconds(exe: Path, entries: int, events: int) -> float:
    """The bare loop's best time of three for ``events`` events on ``entries``
    live heap entries."""
    best = float("inf")
    for seed in (1, 2, 3):
        out = subprocess.run(
            [str(exe), str(entries), str(events), str(seed)],
            capture_output=True,
            text=True,
            check=True,
        )
        n, seconds, _ = out.stdout.split()
        assert int(n) == events
        best = min(best, float(seconds))
    return best


def report(line: str) -> None:
    """A bench's figures: printed now (seen under ``-s``) and in the
    terminal summary at the end of the run."""
    print(line)
    REPORT.append(line)


def timed(fn: Callable[[], Any], log: list[float]) -> Callable[[], Any]:
    """``fn`` that appends its own duration to ``log`` (so timings exist
    even under ``--benchmark-disable``)."""

    def run() -> Any:
        t0 = time.perf_counter()
        out = fn()
        log.append(time.perf_counter() - t0)
        return out

    return run


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("acesim benchmarks")
        for line in REPORT:
            terminalreporter.write_line(line)
