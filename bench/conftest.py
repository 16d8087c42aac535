"""Benchmarks: put tests/ on sys.path (for the SimPy reference model) and
print the measured speed-ups at the end of the run."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

#: Lines the benchmarks want shown in the terminal summary (even under -q).
REPORT: list[str] = []


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
