"""Saves killed at every step (``ACESIM_TEST_KILL_AT``), for
tests/test_results_atomic.py. Run as ``python atomic_child.py ROOT SUFFIX...``.

For each format and each ``k`` = 1, 2, ..., a forked child saves the old
result to ``ROOT/<format>/<k>/x<suffix>`` and then the new one over it with
the kill switch at ``k``; the parent records whether the child was killed,
and stops at the first ``k`` past the save's last step. Prints one JSON object: by suffix,
the list of ``[k, "killed" | "done"]``. The test process loads each folder
afterwards."""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from pathlib import Path

import acesim as ace
from acesim import _atomic, results_io

#: More steps than any save takes: a loop that gets here is a bug.
LIMIT = 500


def results() -> tuple[ace.SimulationResult, ace.SimulationResult]:
    """The old result (2 replicas) and the new one (3 replicas, another
    seed): every table differs in rows or values, so a mix cannot load."""
    fleet = ace.Fleet(
        4, spares=1, repair=ace.Constant(2 * ace.HOUR), node_failures=ace.Exponential(ace.DAY)
    )
    jobs = [ace.Job(8, 12 * ace.HOUR, ace.HOUR, name="a"), ace.Job(8, 6 * ace.HOUR, ace.HOUR)]
    run = dict(jobs=jobs, fleet=fleet, record_events=True, horizon=2 * ace.DAY, threads=1)
    return ace.simulate(**run, replicas=2, seed=1), ace.simulate(**run, replicas=3, seed=2)


def child(
    folder: Path, suffix: str, k: int, old: ace.SimulationResult, new: ace.SimulationResult
) -> None:
    try:
        results_io.save_result(old, folder / f"x{suffix}")
        os.environ[_atomic.KILL_AT] = str(k)
        _atomic._steps = 0
        results_io.save_result(new, folder / f"x{suffix}")
    except BaseException:
        traceback.print_exc()
        os._exit(3)
    os._exit(0)


def main() -> None:
    root = Path(sys.argv[1])
    (root / "warm-up").mkdir(parents=True)
    old, new = results()
    for suffix in sys.argv[2:]:
        # one save here first: every child starts with pyarrow imported and
        # its first-use set-up done (Arrow's thread pools are fork-safe)
        results_io.save_result(old, root / "warm-up" / f"x{suffix}")
    out: dict[str, list[list[object]]] = {}
    for suffix in sys.argv[2:]:
        runs: list[list[object]] = []
        for k in range(1, LIMIT):
            folder = root / suffix.lstrip(".") / str(k)
            folder.mkdir(parents=True)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                child(folder, suffix, k, old, new)
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
                runs.append([k, "killed"])
                continue
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                raise SystemExit(f"{suffix} k={k}: the child failed (status {status})")
            runs.append([k, "done"])
            break
        out[suffix] = runs
    print(json.dumps(out))


if __name__ == "__main__":
    main()
