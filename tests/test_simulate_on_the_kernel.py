"""``simulate`` without a fleet runs each job on the single-job kernel (the
batch path's code, no event heap) unless something needs the heap: the event
log, invariant checks, time limits, slow failures or a re-placement delay.
Its tables must be the event heap's, bit for bit. ``check_invariants=True``
runs the same call on the event heap (the checks change no number:
tests/test_properties.py), so each case here runs both and compares every
table, byte for byte, on scenarios chosen for what the kernel path adds: the
failure trace (the blamed node, the event numbers, jobs failing at the same
instant), the fleet rollup (events counted, makespan without the jobs
submitted after the horizon) and the errors that only the heap names."""

from __future__ import annotations

from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import model_bytes

C = ace.Constant
HOUR = 3600.0


def both(jobs: Any, **kw: Any) -> tuple[ace.SimulationResult, ace.SimulationResult]:
    kernel = ace.simulate(jobs, **kw)
    heap = ace.simulate(jobs, check_invariants=True, **kw)
    for table in ("jobs", "fleet", "trace"):
        a, b = getattr(kernel, table), getattr(heap, table)
        assert a.dtype == b.dtype and model_bytes(a) == model_bytes(b), (table, a, b)
    # (the kernel path delivers no event through the heap)
    assert np.all(kernel.fleet["heap_events"] == 0)
    return kernel, heap


def test_jobs_failing_at_the_same_instant_are_traced_in_job_order() -> None:
    # Four jobs, a failure every 3000 s of held time and no overheads: the
    # first failures are all at 3000 s, numbered 0..3 in job order (equal
    # times: jobs by index), then 6000 s.
    jobs = [ace.Job(8, 20000.0, 1000.0, init=0.0, save=0.0, load=0.0) for _ in range(4)]
    res, _ = both(jobs, failures=C(3000.0), replicas=2, seed=1)
    first = res.trace[res.trace["replica"] == 0][:8]
    assert first["time"].tolist() == [3000.0] * 4 + [6000.0] * 4
    assert first["job"].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert first["event"].tolist() == list(range(8))
    assert (first["origin"] == -1).all() and (first["source"] == 0).all()
    assert (first["inter_failure"] == 3000.0).all()


def test_the_blamed_node_is_the_heaps() -> None:
    # A 64-node job: the trace names one of its nodes per failure, drawn
    # from the job's blame stream.
    res, _ = both(
        ace.Job(512, 3 * 86400.0, HOUR),
        failures=ace.Weibull(0.7, 6 * HOUR),
        causes=ace.LLAMA3_CAUSES,
        replicas=20,
        seed=3,
    )
    assert len(res.trace) > 100
    assert res.trace["node"].min() >= 0 and res.trace["node"].max() < 64
    assert len(np.unique(res.trace["node"])) > 30


def test_the_rollup_leaves_out_jobs_submitted_after_the_horizon() -> None:
    # Job 1 is submitted after the horizon: its row is NOT_SUBMITTED, it
    # counts no event and the makespan is job 0's end.
    jobs = [
        ace.Job(8, 2 * HOUR, HOUR, init=60.0, save=30.0, load=30.0),
        ace.Job(8, HOUR, HOUR, submit=50 * HOUR),
    ]
    res, _ = both(jobs, failures=C(10 * HOUR), horizon=20 * HOUR)
    assert res.jobs["status"].tolist() == [ace.JobStatus.DONE, ace.JobStatus.NOT_SUBMITTED]
    f = res.fleet[0]
    # A 90 s start (init 60 s + load 30 s), two 1 h computes, two 30 s
    # writes: 7350 s.
    assert f["makespan"] == 7350.0
    # The submission, the start's end, two compute ends, two write ends.
    assert f["events"] == 6
    assert f["jobs"] == 2 and f["jobs_completed"] == 1


@pytest.mark.parametrize("threads", [1, 2])
def test_every_lifecycle_feature_on_both_paths(threads: int) -> None:
    jobs = [
        ace.Job(1024, 2 * 86400.0, "young", persist=ace.Exponential(300.0)),
        ace.Job(64, 86400.0, "adaptive", tiers=[ace.CheckpointTier(600.0, save=5.0, load=2.0)]),
        ace.Job(8, 12 * HOUR, 1800.0, save=ace.LogNormal(3.0, 0.5), submit=HOUR),
        ace.Job(16, 6 * HOUR, "daly", submit=40 * HOUR),
    ]
    laws = [ace.Weibull(0.7, 8 * HOUR), ace.Exponential(5 * HOUR), None, ace.Exponential(HOUR)]
    for horizon in (None, 30 * HOUR):
        kw: dict[str, Any] = dict(failures=laws, causes=ace.LLAMA3_CAUSES, replicas=7, seed=5)
        if horizon is not None:
            kw["horizon"] = horizon
        res, _ = both(jobs, threads=threads, **kw)
        assert res.fleet.size == 7


def test_replica_splits_and_first_replica() -> None:
    job = ace.Job(1024, 86400.0, HOUR)
    whole = ace.simulate(job, failures=ace.Weibull(0.5, 8 * HOUR), replicas=6, seed=2)
    tail, _ = both(job, failures=ace.Weibull(0.5, 8 * HOUR), replicas=3, first_replica=3, seed=2)
    assert tail.jobs.tobytes() == whole.jobs[3:].tobytes()
    assert model_bytes(tail.fleet) == model_bytes(whole.fleet[3:])


def test_a_run_that_needs_too_many_events_names_the_replica() -> None:
    # Each of the two jobs alone stays under max_events; together they pass
    # it, and the replica's limit is the heap's (events of all its jobs).
    jobs = [ace.Job(8, 10 * HOUR, HOUR, init=0.0, save=0.0, load=0.0)] * 2
    alone = ace.simulate(jobs[0], failures=None).fleet["events"][0]
    with pytest.raises(RuntimeError, match=r"max_events=30 in replica 0"):
        ace.simulate(jobs, failures=None, max_events=30)
    assert alone < 30 < 2 * alone


def test_a_law_that_runs_out_is_named_by_the_heap() -> None:
    job = ace.Job(8, 10 * HOUR, HOUR, save=ace.Replay([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"the save law of job 0 has no draw 2"):
        ace.simulate(job, failures=ace.Exponential(100 * HOUR))


def test_what_needs_the_heap_still_runs_there() -> None:
    # The event log, time limits, slow failures and a re-placement delay
    # run on the event heap; their rows are still complete.
    job = ace.Job(64, 86400.0, HOUR)
    logged = ace.simulate(job, failures=ace.Exponential(5 * HOUR), record_events=True, seed=1)
    plain = ace.simulate(job, failures=ace.Exponential(5 * HOUR), seed=1)
    assert logged.jobs.tobytes() == plain.jobs.tobytes()
    assert logged.trace.tobytes() == plain.trace.tobytes()
    assert model_bytes(logged.fleet) == model_bytes(plain.fleet)
    assert len(logged.events) > 0
    limited = ace.simulate(
        ace.Job(64, 86400.0, HOUR, time_limit=6 * HOUR), failures=ace.Exponential(5 * HOUR)
    )
    assert limited.jobs["timeouts"][0] > 0


@pytest.mark.parametrize("jobs", [1, 2], ids=["alone", "two jobs"])
def test_a_hopeless_run_stops_with_the_heaps_error(jobs: int) -> None:
    # Failures every 50 s of held time against 100 s checkpoints: no
    # progress. A job alone raises at once (the kernel's limit is the
    # heap's); two jobs rerun the replica on the heap. Same message.
    kw: dict[str, Any] = dict(failures=C(50.0), max_events=10_000, replicas=3, first_replica=4)
    job = [ace.Job(8, 1e6, 100.0, init=0.0, save=0.0, load=0.0)] * jobs
    with pytest.raises(RuntimeError) as kernel:
        ace.simulate(job, **kw)
    with pytest.raises(RuntimeError) as heap:
        ace.simulate(job, check_invariants=True, **kw)
    assert str(kernel.value) == str(heap.value)
    assert "max_events=10000 in replica 4" in str(kernel.value)
