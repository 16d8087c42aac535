"""Ctrl-C stops every long call: a child process runs one, receives SIGINT
after it started, raises KeyboardInterrupt promptly and stays usable (it
runs another simulation afterwards)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from interrupt_child import CHILD

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

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
    assert lines[0].startswith("interrupted "), (out, err)  # stderr: a swallowed interrupt?
    assert lines[1] == "usable 3", out
    # Promptly: the call polls every few hundred events, per replica and per
    # block of draws (measured 15-140 ms); far below the call's own length.
    assert float(lines[0].split()[1]) - sent < 2.0
