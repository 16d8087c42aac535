"""A run that cannot make progress (issue 25, item 4): how fast it stops, how
much memory it takes, and how fast Ctrl-C stops it when its limit is lifted.

The scenario: a 4-node fleet whose nodes fail every hour (``Constant``) and
take an hour to repair; one 8-GPU, 6-hour job with hourly checkpoints never
keeps a checkpoint. Before ``max_stalled_failures`` it ran 24-30 s, reached
3.1 GB and ended with a traceback at 33,554,432 failures; Ctrl-C took 17-60 s.

- wall time and peak memory (``VmHWM``) of ``simulate`` on it at the
  default limit (10,000), in a fresh process: goal under 5 s;
- Ctrl-C latency with the limit lifted (``max_stalled_failures=2**32 - 1``:
  it would run on to the failure cap), on the fleet engine and, fleet-less
  (job-level failures every half hour), on the single-job kernel: SIGINT
  0.3, 0.9 and 1.5 s in, the latency from the signal to the child's
  ``KeyboardInterrupt`` (one clock, ``time.monotonic``): goal under 0.2 s
  for the issue's scenario (the fleet; asserted). The kernel's figure is
  reported only: with the limit lifted its one replica holds millions of
  trace rows by then, and a growth of that table (a copy of hundreds of
  megabytes) is not interruptible.

Run: ``python -m pytest bench/test_bench_no_progress.py -q``; the figures are
in the terminal summary and ``benchmark.extra_info``."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from conftest import report

pytest.importorskip("pytest_benchmark")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and resource")

WALL_GOAL_S = 5.0
CTRL_C_GOAL_S = 0.2
DELAYS_S = (0.3, 0.9, 1.5)

SETUP = """
import resource, signal, sys, time
import acesim as ace
signal.signal(signal.SIGINT, signal.default_int_handler)
H = ace.HOUR
fleet = ace.Fleet(4, node_failures=ace.Constant(H), repair=ace.Constant(H))
job = ace.Job(8, work=6 * H, checkpoint_interval=H, name="llm")


def peak_kb():
    # VmHWM is this process's own peak; ru_maxrss would also count the
    # parent's pages at fork (Linux keeps that high-water mark across exec).
    try:
        with open("/proc/self/status") as status:
            return int([l for l in status if l.startswith("VmHWM:")][0].split()[1])
    except (OSError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

WALL = SETUP + textwrap.dedent(
    """
    start = time.perf_counter()
    try:
        ace.simulate(job, fleet=fleet)
    except ace.NoProgressError as exc:
        count = exc.count
    wall = time.perf_counter() - start
    print(count, wall, peak_kb())
    """
)

CTRL_C = SETUP + textwrap.dedent(
    """
    lifted = 2**32 - 1
    print("ready", flush=True)
    try:
        if sys.argv[1] == "fleet":
            ace.simulate(job, fleet=fleet, max_stalled_failures=lifted)
        else:
            stalled = ace.Job(8, 6 * H, H, init=0.0, save=60.0, load=0.0)
            ace.simulate(stalled, ace.Constant(H / 2), max_stalled_failures=lifted)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic():.6f}", flush=True)
    """
)


def test_no_progress_stops_fast(benchmark: Any) -> None:
    def run() -> tuple[int, float, float]:
        done = subprocess.run(
            [sys.executable, "-c", WALL], capture_output=True, text=True, timeout=300, check=True
        )
        count, wall, peak_kb = done.stdout.split()
        return int(count), float(wall), int(peak_kb) / 1024

    count, wall, peak_mb = benchmark.pedantic(run, rounds=1)
    benchmark.extra_info.update(wall_s=wall, peak_mb=peak_mb, failures=count)
    report(
        f"no-progress fleet (4 nodes, 1 h failures and repairs, a 6 h job): stopped at "
        f"{count:,} failures in a row after {wall * 1000:.0f} ms, peak {peak_mb:.0f} MB "
        f"(goal < 5 s; before: 24-30 s, 3.1 GB)"
    )
    assert count == 10_000
    assert wall < WALL_GOAL_S


def _latency(what: str, delay: float) -> float:
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C, what],
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
    assert out.startswith("interrupted "), out + err
    return float(out.split()[1]) - sent


@pytest.mark.parametrize("what", ["fleet", "kernel"])
def test_no_progress_ctrl_c_latency(benchmark: Any, what: str) -> None:
    tries = benchmark.pedantic(lambda: [_latency(what, d) for d in DELAYS_S], rounds=1)
    worst = max(tries)
    benchmark.extra_info.update(latency_ms=[round(t * 1000, 1) for t in tries])
    moments = ", ".join(f"{d} s: {t * 1000:.0f}" for d, t in zip(DELAYS_S, tries, strict=True))
    report(
        f"Ctrl-C in the no-progress run, limit lifted ({what}): worst {worst * 1000:.0f} ms "
        f"(at {moments} ms; goal < 200 ms; before: 17-60 s)"
    )
    if what == "fleet":
        assert worst < CTRL_C_GOAL_S
