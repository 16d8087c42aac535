"""Progress on every long call: ``simulate``, ``batch_simulate``,
``optimal_interval`` and ``History.backtest`` take ``progress=``, and the
command line's long commands show it unless ``--no-progress``. A bar is
drawn on a terminal (a pseudo terminal here) and never in a pipe; asking
for it never changes a result (the replicas run in chunks, joined)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import acesim as ace
import numpy as np
import pytest
from acesim import history
from acesim.simulation import TABLES

#: The pseudo-terminal tests need POSIX (pty, termios).
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="pseudo terminals are POSIX")

HOUR, DAY = 3600.0, 86400.0
ROOT = str(Path(ace.__file__).resolve().parents[1])


def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_simulate_with_progress_is_the_same_result() -> None:
    """Chunks of 4 replicas (threads=1) joined in replica order: every table
    identical, byte for byte, the event log included."""
    fleet = ace.Fleet(6, spares=1, repair=ace.Constant(1800.0))
    jobs = [ace.Job(16, 2 * DAY, HOUR, name="a"), ace.Job(24, DAY, 2 * HOUR, name="b")]
    kw = dict(failures=ace.Exponential(12 * HOUR), fleet=fleet, replicas=37, seed=5, threads=1)
    plain = ace.simulate(jobs, **kw, record_events=True)
    shown = ace.simulate(jobs, **kw, record_events=True, progress=True)
    assert shown.replicas == plain.replicas == 37
    for table in TABLES:
        assert same(getattr(plain, table), getattr(shown, table)), table
    assert shown.summary() == plain.summary()
    with pytest.raises(TypeError, match="progress must be a bool"):
        ace.simulate(jobs, **kw, progress="yes")  # type: ignore[arg-type]


def test_batch_and_optimal_interval_with_progress_are_the_same() -> None:
    grid = [ace.Job(512, DAY, tau * HOUR) for tau in (0.5, 1.0, 2.0)]
    kw = dict(failures=ace.Exponential(10 * HOUR), replicas=30, seed=2, threads=1)
    a = ace.batch_simulate(grid, **kw)
    b = ace.batch_simulate(grid, **kw, progress=True)
    assert same(a.jobs, b.jobs) and (a.points, a.replicas) == (b.points, b.replicas)
    c = ace.batch_simulate(grid, **kw, target_se=0.05, progress=True)
    assert same(c.jobs, ace.batch_simulate(grid, **kw, target_se=0.05).jobs)
    job = ace.Job(512, DAY, "young")
    best = ace.optimal_interval(job, ace.Exponential(10 * HOUR), replicas=20, seed=1)
    again = ace.optimal_interval(
        job, ace.Exponential(10 * HOUR), replicas=20, seed=1, progress=True
    )
    assert (again.interval, again.ettr) == (best.interval, best.ettr)
    assert again.plausible == best.plausible
    assert np.array_equal(again.ettrs, best.ettrs)


@pytest.fixture
def sacct(tmp_path: Path) -> Path:
    fleet = ace.Fleet(16, spares=1, repair=ace.Constant(600.0))
    jobs = [ace.Job(32, 2 * DAY, HOUR, submit=k * 600.0) for k in range(3)]
    res = ace.simulate(
        jobs, failures=ace.Exponential(6 * HOUR), fleet=fleet, seed=4, record_events=True
    )
    path = tmp_path / "sacct.txt"
    history.write_sacct(res, path)
    return path


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, *filter(None, [env.get("PYTHONPATH")])])
    return env


def on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """Run ``argv`` with its stderr on a pseudo terminal: the exit status
    and what the terminal showed."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24 x 100
    try:
        child = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL, env=_env()
        )
    finally:
        os.close(slave)
    shown = b""
    try:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            shown += data
    finally:
        os.close(master)
    return child.wait(timeout=120), shown.decode("utf-8", "replace")


def in_a_pipe(argv: list[str]) -> tuple[int, str]:
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=120)
    return done.returncode, done.stderr


CALLS = textwrap.dedent(
    """
    import sys
    import acesim as ace
    from acesim import history
    job = ace.Job(64, ace.DAY, ace.HOUR)
    ace.simulate(job, ace.Exponential(6 * ace.HOUR), replicas=16, threads=1, progress=True)
    h = history.read_sacct(sys.argv[1])
    h.backtest(replicas=3, progress=True)
    """
)


@posix_only
def test_progress_on_a_terminal_and_nothing_in_a_pipe(sacct: Path) -> None:
    argv = [sys.executable, "-c", CALLS, str(sacct)]
    code, shown = on_a_terminal(argv)
    assert code == 0, shown
    assert "simulate" in shown and "16/16" in shown
    assert "backtest" in shown and "3/3" in shown
    assert in_a_pipe(argv) == (0, "")


@posix_only
def test_fit_backtest_shows_progress_on_a_terminal(sacct: Path) -> None:
    argv = [sys.executable, "-m", "acesim", "fit", str(sacct), "--by", "job", "--backtest", "3"]
    code, shown = on_a_terminal(argv)
    assert code == 0, shown
    assert "backtest" in shown and "3/3" in shown
    code, shown = on_a_terminal([*argv, "--no-progress"])
    assert (code, shown) == (0, "")
    assert in_a_pipe(argv) == (0, "")


@posix_only
def test_demo_shows_progress_on_a_terminal() -> None:
    argv = [sys.executable, "-m", "acesim", "demo", "--replicas", "60"]
    code, shown = on_a_terminal(argv)
    assert code == 0, shown
    assert "simulate" in shown and "60/60" in shown  # the first run
    assert "optimal_interval" in shown and "600/600" in shown  # 3 passes of 200
    assert on_a_terminal([*argv, "--no-progress"]) == (0, "")
