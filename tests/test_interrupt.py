"""Ctrl-C stops every long call: a child process runs one, receives SIGINT
after it started, raises KeyboardInterrupt promptly and stays usable (it
runs another simulation afterwards)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import acesim as ace

    what, threads = sys.argv[1], int(sys.argv[2])

    def long_call():
        # Each takes over five seconds when not interrupted, and holds at
        # most about 2 GB.
        if what == "simulate":
            job = ace.Job(1024, 7 * ace.DAY, ace.HOUR)
            return ace.simulate(job, replicas=2_000_000, threads=threads)
        if what == "fleet":
            fleet = ace.Fleet(16384, node_failures=ace.Weibull(0.8, 30 * ace.DAY),
                              repair=4 * ace.HOUR, spares=16)
            jobs = ace.workloads.meta_like(30, 16384 * 8, seed=1)
            return ace.simulate(jobs, fleet=fleet, horizon=30 * ace.DAY, threads=threads)
        if what == "batch":
            jobs = [ace.Job(1024, 28 * ace.DAY, t) for t in np.linspace(600, 7200, 50)]
            return ace.batch_simulate(jobs, replicas=100_000, threads=threads)
        if what == "sample":
            return ace.Gamma(0.7, 10.0).sample(200_000_000, threads=threads)
        if what == "stationary":
            return ace.Weibull(0.7, 10.0).sample(150_000_000, stationary=True, threads=threads)
        if what == "sweep":
            job = ace.Job(1024, 7 * ace.DAY, ace.HOUR)
            return ace.sweep([{"jobs": job, "replicas": 500_000, "threads": threads}] * 8)
        raise SystemExit(f"unknown call {what}")

    print("ready", flush=True)
    try:
        long_call()
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic():.6f}", flush=True)
    res = ace.simulate(ace.Job(8, 3600.0, 600.0), replicas=3)
    print("usable", res.jobs.size, flush=True)
    """
)

CALLS = [
    ("simulate", 1),
    ("simulate", 2),
    ("fleet", 1),
    ("batch", 2),
    ("sample", 2),
    ("stationary", 1),
    ("sweep", 1),
]


@pytest.mark.parametrize(("what", "threads"), CALLS, ids=[f"{w}-{t}" for w, t in CALLS])
def test_ctrl_c_stops_a_long_call(what: str, threads: int) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, what, str(threads)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the call
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, err
    lines = out.split("\n")
    assert lines[0].startswith("interrupted "), out
    assert lines[1] == "usable 3", out
    # Promptly: the call polls every few hundred events, per replica and per
    # block of draws (measured 15-140 ms); far below the call's own length.
    assert float(lines[0].split()[1]) - sent < 2.0
