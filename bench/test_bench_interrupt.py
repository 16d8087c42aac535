"""Ctrl-C latency of every long call, with one and two threads: a child
process (tests/interrupt_child.py) starts the call, receives SIGINT 0.3,
0.9 or 1.5 s in (during set-up, early and late in the run), and prints when
``KeyboardInterrupt`` reached it; the latency is that
moment less the moment the signal was sent (one clock, ``time.monotonic``,
shared by both processes). The single-job ``simulate`` runs 5,000,000
replicas (the figure the hardening issue measured at 24 s to Ctrl-C).

Run: ``python -m pytest bench/test_bench_interrupt.py -q``; the figures are in
the terminal summary and ``benchmark.extra_info``. Goal: under 100 ms for
every call, thread count and moment (the worst of the three is asserted)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from conftest import report
from interrupt_child import CHILD

pytest.importorskip("pytest_benchmark")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CALLS = ["simulate", "fleet", "batch", "sample", "stationary", "sweep"]
GOAL_S = 0.100


DELAYS_S = (0.3, 0.9, 1.5)


def latency(what: str, threads: int, delay: float) -> float:
    """Seconds from SIGINT to the child's KeyboardInterrupt."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, what, str(threads), "2.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(delay)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 0, err
    lines = out.split("\n")
    assert lines[0].startswith("interrupted "), out
    assert lines[1] == "usable 3", out
    return float(lines[0].split()[1]) - sent


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("what", CALLS)
def test_ctrl_c_latency(benchmark: Any, what: str, threads: int) -> None:
    tries = benchmark.pedantic(
        lambda: [latency(what, threads, delay) for delay in DELAYS_S], rounds=1
    )
    worst = max(tries)
    benchmark.extra_info.update(latency_ms=[round(t * 1000, 1) for t in tries])
    moments = ", ".join(f"{d} s: {t * 1000:.0f}" for d, t in zip(DELAYS_S, tries, strict=True))
    report(
        f"Ctrl-C {what}, {threads} thread(s): worst {worst * 1000:.0f} ms "
        f"(at {moments} ms; goal < 100 ms)"
    )
    assert worst < GOAL_S, f"{what} with {threads} threads: {worst * 1000:.0f} ms"
