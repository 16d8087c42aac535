"""A run that cannot make progress stops early and says why (issue 25, item 4).

``simulate(..., max_stalled_failures=N)``: a job interrupted N times in a
row without a new durable checkpoint raises :class:`acesim.NoProgressError`
(a ``ValueError``) naming the job and the count, on every path that runs
jobs: the event-heap engine (with a fleet, or fleet-less with the event
log), the single-job kernel (fleet-less simulate), ``batch_simulate`` and
``FleetModel``; the CLI exits 2 with the message and no traceback.

The hopeless scenario of the issue: a 4-node fleet whose nodes fail every
hour (a constant law) and take an hour to repair, and one 8-GPU, 6-hour job
with hourly checkpoints: a node that comes back fails an hour later, and
the job needs its start plus an hour of compute plus a write on one node,
so it never keeps a checkpoint. Before the limit it ran 24-30 s, reached
3.1 GB and ended with a traceback at 33,554,432 failures.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import acesim as ace
import pytest
from acesim.scenario import load_scenario
from hand_cases import HOUR

ZERO = ace.Constant(0.0)


def hopeless_fleet() -> ace.Fleet:
    return ace.Fleet(4, node_failures=ace.Constant(HOUR), repair=ace.Constant(HOUR))


def hopeless_job() -> ace.Job:
    return ace.Job(8, work=6 * HOUR, checkpoint_interval=HOUR, name="llm")


def stalled_job() -> ace.Job:
    """Fleet-less: job-level failures every 1,800 held seconds (Constant),
    no start cost, so failure k strikes at exactly k * 1,800 s, and the job
    never computes the 3,600 s its first checkpoint needs."""
    return ace.Job(8, work=6 * HOUR, checkpoint_interval=HOUR, init=ZERO, save=60.0, load=ZERO)


JOB_FAILURES = ace.Constant(1800.0)


@pytest.mark.parametrize("record_events", [False, True], ids=["kernel", "event-heap"])
def test_stops_at_exactly_the_limit_without_a_fleet(record_events: bool) -> None:
    """Failure k at k * 1,800 s (see stalled_job), none of them after a new
    checkpoint: with max_stalled_failures=50 the 50th, at 90,000 s, stops
    the run. A horizon of 89,999 s ends it one failure short: 49 failures,
    no error; a horizon of 90,000 s (events at the horizon run) reaches the
    50th: NoProgressError naming job 0 and 50. The single-job kernel and
    the event heap (the event log forces it) agree."""
    job = stalled_job()
    res = ace.simulate(
        job,
        JOB_FAILURES,
        horizon=89_999.0,
        max_stalled_failures=50,
        record_events=record_events,
    )
    assert int(res.jobs["failures"][0]) == 49
    assert float(res.jobs["productive"][0]) == pytest.approx(89_999.0 - 49 * 1800.0)
    assert not bool(res.jobs["completed"][0])
    with pytest.raises(ace.NoProgressError, match=r"job 0 was interrupted 50 times") as info:
        ace.simulate(
            job,
            JOB_FAILURES,
            horizon=90_000.0,
            max_stalled_failures=50,
            record_events=record_events,
        )
    assert (info.value.job, info.value.count, info.value.replica) == (0, 50, 0)
    assert isinstance(info.value, ValueError)


def test_the_default_limit_is_ten_thousand() -> None:
    """The same job without a horizon: the 10,000th failure (at 1.8e7 s)
    stops it; one second earlier, 9,999 failures and no error."""
    job = stalled_job()
    res = ace.simulate(job, JOB_FAILURES, horizon=10_000 * 1800.0 - 1.0)
    assert int(res.jobs["failures"][0]) == 9_999
    with pytest.raises(ace.NoProgressError, match=r"interrupted 10000 times in a row") as info:
        ace.simulate(job, JOB_FAILURES)
    assert info.value.count == 10_000


def test_batch_simulate_stops_the_same_way() -> None:
    """batch_simulate runs the same kernel: point 1 (the stalled job) stops
    at its 50th failure, point 0 (a job that never fails) would finish; the
    error names point 1."""
    never = ace.Job(8, work=HOUR, checkpoint_interval=HOUR, init=ZERO, save=ZERO, load=ZERO)
    laws = [ace.Constant(10 * HOUR), JOB_FAILURES]
    with pytest.raises(ace.NoProgressError, match=r"job 1 was interrupted 50 times") as info:
        ace.batch_simulate([never, stalled_job()], laws, replicas=3, max_stalled_failures=50)
    assert (info.value.job, info.value.count) == (1, 50)
    ok = ace.batch_simulate(
        [stalled_job()], JOB_FAILURES, horizon=89_999.0, max_stalled_failures=50
    )
    assert ok.jobs["failures"].tolist() == [49]


def test_a_new_durable_checkpoint_starts_a_new_count() -> None:
    """Job-level failures every 5,000 held seconds; no start cost, 60 s
    writes, hourly checkpoints: after each restart the job computes 3,600 s
    and keeps a checkpoint 3,660 s in, before the failure at 5,000 s. Its
    six checkpoints (21,600 s of work) take five failures (at 5,000, 10,000,
    ..., 25,000 s; the last checkpoint ends at 25,000 + 3,660 = 28,660 s),
    each the first since a new checkpoint: max_stalled_failures=2 lets it
    finish; 1 stops it at its first failure."""
    job = stalled_job()
    law = ace.Constant(5000.0)
    res = ace.simulate(job, law, max_stalled_failures=2)
    assert bool(res.jobs["completed"][0])
    assert int(res.jobs["failures"][0]) == 5
    assert float(res.jobs["wall"][0]) == pytest.approx(28_660.0)
    with pytest.raises(ace.NoProgressError, match=r"interrupted 1 times"):
        ace.simulate(job, law, max_stalled_failures=1)


def test_fleet_engine_stops_at_exactly_the_limit() -> None:
    """A one-node fleet whose node fails at 2,400 s, 4,800 s, ... (placed
    with NodeTrace.from_times) and is repaired in 600 s: the job restarts
    600 s after each failure and computes 1,800 s before the next, never
    the 3,600 s its first checkpoint needs. The 50th failure (120,000 s)
    stops the run; a horizon of 119,999 s leaves it at 49."""
    times = [2400.0 * k for k in range(1, 61)]
    fleet = ace.Fleet(
        1,
        repair=ace.Constant(600.0),
        node_failures=ace.NodeTrace.from_times({0: times}, nodes=1),
    )
    job = stalled_job()
    res = ace.simulate(job, fleet=fleet, horizon=119_999.0, max_stalled_failures=50)
    assert int(res.jobs["failures"][0]) == 49
    with pytest.raises(ace.NoProgressError, match=r"job 0 was interrupted 50 times") as info:
        ace.simulate(job, fleet=fleet, horizon=120_000.0, max_stalled_failures=50)
    assert (info.value.job, info.value.count) == (0, 50)


def test_the_hopeless_fleet_stops_naming_the_job() -> None:
    """The issue's scenario: stopped with the named error at 50 and at the
    default, the job named by its name."""
    for limit in (50, 10_000):
        with pytest.raises(ace.NoProgressError) as info:
            ace.simulate(hopeless_job(), fleet=hopeless_fleet(), max_stalled_failures=limit)
        assert f"job 0 ('llm') was interrupted {limit} times in a row" in str(info.value)
        assert (info.value.job, info.value.count) == (0, limit)
    with pytest.raises(ace.NoProgressError, match="interrupted 10000 times"):
        ace.simulate(hopeless_job(), fleet=hopeless_fleet())


def test_fleet_model_applies_the_same_rule() -> None:
    """FleetModel runs the same engine: the scheduler restarts the job on
    node 0 after each failure of the one-node fleet above; the advance in
    which its 5th failure is detected raises."""
    times = [2400.0 * k for k in range(1, 61)]
    fleet = ace.Fleet(
        1,
        repair=ace.Constant(600.0),
        node_failures=ace.NodeTrace.from_times({0: times}, nodes=1),
    )
    model = ace.FleetModel(fleet, max_stalled_failures=5)
    jid = model.submit(stalled_job())
    model.start(jid, [0])
    failures = 0
    with pytest.raises(ace.NoProgressError, match=r"job 0 was interrupted 5 times") as info:
        for _ in range(100):
            for event in model.advance(200_000.0):
                if event.kind == "job_failed":
                    failures += 1
                if event.kind == "node_up":
                    model.start(jid, [0])
    assert failures == 4
    assert info.value.count == 5


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-1, ValueError), (2**32, ValueError), (1.5, TypeError), (True, TypeError),
     ("10", TypeError), (None, TypeError)],
)  # fmt: skip
def test_max_stalled_failures_is_checked(value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_stalled_failures"):
        ace.simulate(stalled_job(), JOB_FAILURES, max_stalled_failures=value)  # type: ignore[arg-type]
    with pytest.raises(error, match="max_stalled_failures"):
        ace.batch_simulate(stalled_job(), JOB_FAILURES, max_stalled_failures=value)  # type: ignore[arg-type]
    with pytest.raises(error, match="max_stalled_failures"):
        ace.FleetModel(hopeless_fleet(), max_stalled_failures=value)  # type: ignore[arg-type]


SCENARIO = """
[run]
name = "hopeless"

[fleet]
nodes = 4
node_failures = "1h"
repair = "1h"

[[jobs]]
name = "llm"
gpus = 8
work = "6h"
checkpoint_interval = "1h"
"""


def test_cli_exits_2_with_the_message(tmp_path: Path) -> None:
    """``acesim run`` on the hopeless scenario: exit 2, the message, no
    traceback; ``[run] max_stalled_failures`` is the simulate option."""
    for limit, count in (("", 10_000), ("max_stalled_failures = 50", 50)):
        path = tmp_path / f"hopeless{count}.toml"
        path.write_text(SCENARIO.replace('name = "hopeless"', f'name = "hopeless"\n{limit}'))
        done = subprocess.run(
            [sys.executable, "-m", "acesim", "run", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert f"job 0 ('llm') was interrupted {count} times in a row" in done.stderr
        assert "Traceback" not in done.stderr


def test_scenario_refuses_a_bad_limit(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SCENARIO.replace('name = "hopeless"', "max_stalled_failures = 0"))
    with pytest.raises(ValueError, match=r"run\.max_stalled_failures.*>= 1"):
        load_scenario(path)


PEAK = textwrap.dedent(
    """
    import resource, sys
    import acesim as ace
    def peak_kb():
        # VmHWM is this process's own peak; ru_maxrss would also count the
        # parent's pages at fork (Linux keeps that high-water mark across exec).
        try:
            with open("/proc/self/status") as status:
                return int([l for l in status if l.startswith("VmHWM:")][0].split()[1])
        except (OSError, IndexError):
            scale = 1024 if sys.platform == "darwin" else 1  # macOS reports bytes
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // scale
    H = ace.HOUR
    fleet = ace.Fleet(4, node_failures=ace.Constant(H), repair=ace.Constant(H))
    job = ace.Job(8, work=6 * H, checkpoint_interval=H, name="llm")
    try:
        ace.simulate(job, fleet=fleet)
    except ace.NoProgressError as exc:
        print(exc.count)
    print(peak_kb())
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="resource is POSIX")
def test_the_hopeless_fleet_stays_small() -> None:
    """Peak memory of the hopeless scenario at the default limit, in a
    fresh process (VmHWM, kilobytes): under 500 MB (3.1 GB
    before the limit)."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK], capture_output=True, text=True, timeout=120, check=True
    )
    count, peak_kb = (int(x) for x in done.stdout.split())
    assert count == 10_000
    assert peak_kb < 500 * 1024


INTERRUPTED = textwrap.dedent(
    """
    import signal, sys
    import acesim as ace
    signal.signal(signal.SIGINT, signal.default_int_handler)
    H = ace.HOUR
    fleet = ace.Fleet(4, node_failures=ace.Constant(H), repair=ace.Constant(H))
    job = ace.Job(8, work=6 * H, checkpoint_interval=H)
    print("ready", flush=True)
    try:
        if sys.argv[1] == "fleet":
            ace.simulate(job, fleet=fleet, max_stalled_failures=2**32 - 1)
        else:
            stalled = ace.Job(8, 6 * H, H, init=0.0, save=60.0, load=0.0)
            ace.simulate(stalled, ace.Constant(H / 2), max_stalled_failures=2**32 - 1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print("usable", ace.simulate(ace.Job(8, H, H / 6), replicas=3).jobs.size, flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("path", ["fleet", "kernel"])
def test_ctrl_c_stops_a_hopeless_run(path: str) -> None:
    """With the limit lifted the run would go on to the failure cap (tens of
    seconds): a call this small by size runs on the calling thread, and
    its polls still let Python's Ctrl-C handler run. SIGINT half a second
    in gives KeyboardInterrupt, and acesim stays usable (the latency is
    measured in bench/test_bench_no_progress.py)."""
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out.split("\n")[:2] == ["interrupted", "usable 3"], out + err
