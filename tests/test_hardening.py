"""Odd but legal input: results are the same as for the ordinary input."""

from __future__ import annotations

import math
import pickle
import struct
from typing import Any

import acesim as ace
import numpy as np
import numpy.typing as npt
import pytest


def unaligned(values: npt.ArrayLike, dtype: type) -> npt.NDArray[np.generic]:
    """``values`` in a buffer one byte off its natural alignment."""
    data = np.ascontiguousarray(values, dtype)
    raw = np.zeros(data.nbytes + 1, np.uint8)
    raw[1:] = np.frombuffer(data.tobytes(), np.uint8)
    out = np.frombuffer(raw.data, dtype=dtype, count=data.size, offset=1)
    assert not out.flags.aligned
    return out


def test_job_columns_from_unaligned_buffers() -> None:
    """A JobArray on unaligned (and offset-view) columns, as buffers arrive
    unpickled on a Dask worker, gives the rows of the aligned one."""
    n = 7
    gpus = np.array([8, 16, 8, 32, 8, 64, 8], np.uint32)
    work = np.linspace(3600.0, 9 * 3600.0, n)
    interval = np.full(n, 900.0)
    submit = np.arange(n) * 60.0
    aligned = ace.JobArray(gpus=gpus, work=work, checkpoint_interval=interval, submit=submit)
    odd = ace.JobArray(
        gpus=unaligned(gpus, np.uint32),
        work=unaligned(work, np.float64),
        checkpoint_interval=unaligned(interval, np.float64),
        submit=unaligned(submit, np.float64),
    )
    law = ace.Weibull(0.8, 2 * 3600.0)
    a = ace.simulate(aligned, law, replicas=5, seed=2)
    b = ace.simulate(odd, law, replicas=5, seed=2)
    assert a.jobs.tobytes() == b.jobs.tobytes()
    c = ace.simulate(pickle.loads(pickle.dumps(odd)), law, replicas=5, seed=2)
    assert a.jobs.tobytes() == c.jobs.tobytes()
    fleet = ace.Fleet(32, node_failures=ace.Exponential(50 * 3600.0), repair=3600.0)
    d = ace.simulate(aligned, fleet=fleet, replicas=2, seed=1)
    e = ace.simulate(odd, fleet=fleet, replicas=2, seed=1)
    assert d.jobs.tobytes() == e.jobs.tobytes()


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: ace.Job(8, 3600.0, 600.0, submit=1e17), "submit"),
        (lambda: ace.Job(8, 3600.0, 600.0, submit=1e20), "submit"),
        (lambda: ace.Job(8, 2e12, 600.0), "work"),
        (lambda: ace.Job(8, 3600.0, 5e12), "checkpoint_interval"),
        (lambda: ace.Job(8, 3600.0, 600.0, time_limit=1e13), "time_limit"),
        (lambda: ace.JobArray(gpus=[8, 8], work=[3600.0, 1e13], checkpoint_interval=600.0), "work"),
        (lambda: ace.JobArray(gpus=[8], work=[3600.0], checkpoint_interval=600.0, submit=[1e15]),
         "submit"),
        (lambda: ace.simulate(ace.Job(8, 3600.0, 600.0), horizon=1e13), "horizon"),
        (lambda: ace.Fleet(2, maintenance=[(1e13, 3600.0, "all")]), "maintenance"),
        (lambda: ace.Fleet(2, maintenance=[(0.0, 1e13, "all")]), "maintenance"),
        (lambda: ace.FleetModel(ace.Fleet(2)).advance(1e13), "until"),
        (lambda: ace.FleetModel(ace.Fleet(2), horizon=1e13), "horizon"),
    ],
)  # fmt: skip
def test_far_times_are_refused_naming_the_parameter(build: Any, name: str) -> None:
    """Times beyond 1e12 s (31,700 years) lose the precision the accounting
    needs: Job(8, 3600, 600, submit=1e17) reported productive 3632 for a
    work of 3600. They are refused, naming the parameter."""
    with pytest.raises(ValueError, match=rf"{name}.*at most 1e\+12 s"):
        build()


def test_times_up_to_the_limit_keep_the_accounting() -> None:
    """At the limit's scale the clock still resolves well under a
    millisecond: a job submitted at 1e11 s computes its work."""
    res = ace.simulate(ace.Job(8, 3600.0, 600.0, submit=1e11), ace.Exponential(1e4), replicas=5)
    assert np.allclose(res.jobs["productive"], 3600.0, atol=1e-3)
    assert np.all(res.jobs["completed"])
    assert ace.Job(8, 1e12, 600.0).work == 1e12


def test_nothing_ran_gives_nan_without_a_warning() -> None:
    """A job submitted after the horizon never runs: its rows say
    NOT_SUBMITTED with wall 0 and ettr NaN, and the rollups give NaN
    quietly (no RuntimeWarning) instead of dividing by zero."""
    import warnings

    late = ace.Job(8, 3600.0, 600.0, submit=5000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ace.simulate(late, ace.Exponential(1e5), horizon=1000.0, replicas=3)
        assert res.jobs["status"].tolist() == [ace.JobStatus.NOT_SUBMITTED] * 3
        assert np.all(res.jobs["wall"] == 0) and np.all(np.isnan(res.jobs["ettr"]))
        assert np.isnan(res.pooled_ettr())
        summary = res.summary()
        assert np.isnan(summary["ettr"]) and np.isnan(summary["ettr_stderr"])
        assert np.isnan(res.ettr().value)
        both = ace.simulate(
            [late, ace.Job(8, 600.0, 600.0)], ace.Exponential(1e5), horizon=1000.0, replicas=3
        )
        # The job that ran is the whole rollup.
        assert (
            both.pooled_ettr()
            == ace.simulate(
                ace.Job(8, 600.0, 600.0), ace.Exponential(1e5), horizon=1000.0, replicas=3
            ).pooled_ettr()
        )
        batch = ace.batch_simulate([late], ace.Exponential(1e5), horizon=1000.0, replicas=2)
        assert np.isnan(batch.pooled_ettr()[0])


def test_a_result_too_large_for_memory_is_refused_before_it_starts() -> None:
    """replicas=10**9 used to end in MemoryError (std::bad_alloc) after a long
    wait; the rows' size is estimated first and the error names replicas
    and the estimate."""
    job = ace.Job(8, 3600.0, 600.0)
    with pytest.raises(ValueError, match=r"replicas: 1,000,000,000 replicas .* GiB"):
        ace.simulate(job, replicas=10**9)
    with pytest.raises(ValueError, match=r"replicas: .* of 1,000 job\(s\)"):
        ace.batch_simulate([job] * 1000, replicas=10**9 // 1000 * 100)


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (
            lambda: ace.simulate(
                ace.Job(8, 36000.0, 600.0),
                ace.Exponential(3600.0),
                causes=[ace.Cause("x", 1.0, detect=ace.Replay([10.0]))],
            ),
            "the detection law of job 0 has no draw 1",
        ),
        (
            lambda: ace.simulate(
                ace.Job(8, 36000.0, 600.0),
                fleet=ace.Fleet(
                    2, repair=ace.Replay([60.0]), node_failures=ace.Exponential(3600.0)
                ),
            ),
            "the repair law of node 1 has no draw 1",
        ),
        (
            lambda: ace.simulate(ace.Job(8, 36000.0, 600.0, save=ace.Replay([5.0, 6.0]))),
            "the save law of job 0 has no draw 2",
        ),
        (
            lambda: ace.simulate(
                ace.Job(8, 36000.0, 600.0, init=ace.Replay([5.0])), ace.Exponential(3600.0)
            ),
            "the init law of job 0 has no draw 1",
        ),
    ],
    ids=["detect", "repair", "save", "init"],
)
def test_a_replay_that_runs_out_names_its_role(run: Any, message: str) -> None:
    """A Replay used as a duration law that runs out of values gave wall=inf
    (detection, repair) or blamed the failure law; the error names the
    law's role and entity."""
    with pytest.raises(ValueError, match=message):
        run()


#: The run options of a direct call of the compiled simulate (by keyword).
RUN_OPTIONS: dict[str, Any] = dict(
    gpus_per_node=8, replicas=1, first_replica=0, seed=1, horizon=math.inf,
    record_events=False, check_invariants=False, threads=1, max_events=0,
)  # fmt: skip

_JOB = (8, 36000.0, 600.0)
_FAILS = ace.Exponential(3600.0)
_RUN_OUT = [
    (dict(save=ace.Replay([5.0, 6.0])), {}, "the save law of job 0 has no draw 2"),
    (dict(init=ace.Replay([5.0])), {}, "the init law of job 0 has no draw 1"),
    (dict(load=ace.Replay([5.0])), {}, "the load law of job 0 has no draw 1"),
    (
        {},
        dict(causes=[ace.Cause("x", 1.0, detect=ace.Replay([10.0]))]),
        "the detection law of job 0",
    ),
    (dict(persist=ace.Replay([30.0])), {}, "the persist law of job 0 has no draw 1"),
    (
        dict(tiers=[ace.CheckpointTier(300.0, save=ace.Replay([2.0]), load=1.0)]),
        {},
        "the tier save law of job 0 has no draw 1",
    ),
    (
        dict(tiers=[ace.CheckpointTier(300.0, save=2.0, load=ace.Replay([1.0]))]),
        dict(causes=[ace.Cause("soft", 1.0, node_down=False)]),
        "the tier load law of job 0 has no draw 1",
    ),
]


@pytest.mark.parametrize("path", ["simulate", "batch_simulate"])
@pytest.mark.parametrize(
    ("job_args", "run_args", "message"),
    _RUN_OUT,
    ids=["save", "init", "load", "detect", "persist", "tier-save", "tier-load"],
)
def test_both_paths_name_a_replay_that_runs_out(
    path: str, job_args: dict[str, Any], run_args: dict[str, Any], message: str
) -> None:
    """The event heap and the batch path (which gave wall=inf for a
    detection law, and blamed the failure law for the others) raise the same
    error, naming the law's role, its job and the missing draw. The batch
    path, whose kernels cannot throw, hands the replica to the event heap
    for the message."""
    job = ace.Job(*_JOB, **job_args)
    run = getattr(ace, path)
    if path == "simulate":  # the second of two jobs
        message = message.replace("job 0", "job 1")
    with pytest.raises(ValueError, match=message):
        run([ace.Job(8, 3600.0, 600.0), job] if path == "simulate" else [job], _FAILS,
            replicas=3, seed=4, **run_args)  # fmt: skip


def test_a_replay_of_failures_that_runs_out_means_no_more_failures() -> None:
    """As a failure law, a Replay's end is the end of the failures."""
    res = ace.simulate(ace.Job(8, 36000.0, 3600.0, init=0.0, save=0.0, load=0.0),
                       ace.Replay([1000.0]))  # fmt: skip
    assert int(res.jobs["failures"][0]) == 1 and bool(res.jobs["completed"][0])


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (
            lambda: ace.simulate(
                ace.Job(8, 3600.0, 600.0),
                policy=ace.Policy(quarantine=ace.Quarantine(), on_failure=lambda v: None),
            ),
            r"policy: without a fleet only its replacement_delay is used .* its quarantine, "
            r"on_failure would never be used",
        ),
        (
            lambda: ace.simulate(
                ace.Job(8, 3600.0, 600.0),
                fleet=ace.Fleet(8),
                causes=[ace.Cause("rack", 1.0, nodes=64)],
            ),
            r"causes\[0\]\.nodes: cause 'rack' takes 64 nodes, more than the fleet's 8",
        ),
        (
            lambda: ace.FleetModel(ace.Fleet(8), causes=[ace.Cause("rack", 1.0, nodes=9)]),
            r"causes\[0\]\.nodes",
        ),
        (
            lambda: ace.workloads.meta_like(1.0, 1024, utilization=2.0),
            r"utilization must be in \(0, 1\]",
        ),
        (
            lambda: ace.simulate(
                ace.Job(8, 3600.0, 600.0),
                causes=[ace.Cause("a", 1e308), ace.Cause("b", 1e308)],
            ),
            r"causes: the shares add up beyond a float",
        ),
    ],
    ids=["policy-without-fleet", "cause-wider-than-fleet", "fleet-model-cause", "utilization",
         "shares-overflow"],
)  # fmt: skip
def test_inputs_once_accepted_silently_are_refused(run: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run()


def test_a_completed_jobs_productive_time_is_its_work_exactly() -> None:
    """The kept segments of a completed job add up to its work but for
    rounding (up to 2e-13 relative before); a completed row's productive is
    now exactly the work, on the event heap and in the batch path alike,
    with checkpoints, elastic jobs, asynchronous persists and causes."""
    law = ace.Weibull(0.6, 900.0)
    single = ace.simulate(ace.Job(8, 3600.123, 7.77), law, replicas=200)
    assert np.all(single.jobs["productive"] == 3600.123)
    batch = ace.batch_simulate([ace.Job(8, 3600.123, 7.77)], law, replicas=200)
    assert batch.jobs.tobytes() == single.jobs.tobytes()
    fleet = ace.Fleet(12, repair=ace.Exponential(7200.0), node_failures=ace.Weibull(0.7, 72000.0))
    jobs = [
        ace.Job(32, 2 * ace.DAY, 3571.3),
        ace.Job(32, 2 * ace.DAY, 3600.0, min_gpus=16, reconfigure=60.0),
        ace.Job(16, ace.DAY, 1234.5, persist=ace.Exponential(100.0)),
    ]
    res = ace.simulate(jobs, fleet=fleet, replicas=30, seed=3, causes=ace.LLAMA3_CAUSES)
    done = res.jobs[res.jobs["completed"]]
    assert done.size > 60
    work = np.array([jobs[j].work for j in done["job"]])
    assert np.array_equal(done["productive"], work)


def _raises(view: Any, user: Any) -> int:
    raise RuntimeError("boom")


def test_a_ctypes_policy_whose_python_body_raises_is_an_error() -> None:
    """A ctypes callback around a Python function that raises returned 0
    (SPARES) to the simulator at every failure: the run's numbers were the
    wrong policy's. The call now raises, naming the exception."""
    from acesim.compiled import FailurePolicyFn

    callback = FailurePolicyFn(_raises)
    policy = ace.Policy(on_failure=ace.CompiledPolicy.from_ctypes(callback))
    fleet = ace.Fleet(4, spares=1, repair=3600.0, node_failures=ace.Exponential(20000.0))
    with pytest.raises(ValueError, match=r"raised RuntimeError: boom \(\d+ time\(s\)\)") as info:
        ace.simulate(ace.Job(16, ace.DAY, 3600.0), fleet=fleet, policy=policy, threads=1)
    assert isinstance(info.value.__cause__, RuntimeError)
    # A well-behaved one still runs.
    fine = FailurePolicyFn(lambda view, user: 1)
    res = ace.simulate(
        ace.Job(16, ace.DAY, 3600.0),
        fleet=fleet,
        policy=ace.Policy(on_failure=ace.CompiledPolicy.from_ctypes(fine)),
        threads=1,
    )
    assert res.jobs["failures"][0] > 0


def test_deeply_nested_mixtures_build_in_one_pass() -> None:
    """A chain of 20,000 nested Mixtures builds (each level holds its children
    by reference; the table is laid out once, without recursion), with the
    closed-form mean and the table a flat build gives: one node per leaf and
    per Mixture."""
    levels = 20_000
    law: ace.Distribution = ace.Exponential(3600.0)
    for _ in range(levels):
        law = ace.Mixture([(1.0, law), (1.0, ace.Exponential(7200.0))])
    # mean_n = 7200 - 3600 / 2^n: 7200 to the last bit long before 20,000 levels.
    assert law.mean() == 7200.0
    assert law._compiled.node_count == 2 * levels + 1
    draws = law.sample(1000, seed=3)
    assert np.isfinite(draws).all() and (draws >= 0).all()
    res = ace.simulate(ace.Job(8, 36_000.0, 600.0), law, replicas=20, seed=1)
    assert (res.jobs["completed"]).all()


def test_a_shared_component_is_laid_out_at_each_use() -> None:
    """One law used twice in a Mixture, and again on its own: each use draws
    as the law itself does, and using it in a Mixture leaves it unchanged."""
    inner = ace.Mixture([(1.0, ace.Constant(10.0)), (1.0, ace.Constant(20.0))])
    before = inner.sample(50, seed=5).tolist()
    outer = ace.Mixture([(1.0, inner), (1.0, inner)])
    assert outer._compiled.node_count == 7
    assert set(outer.sample(200, seed=5).tolist()) == {10.0, 20.0}
    assert inner.sample(50, seed=5).tolist() == before
    assert outer.mean() == inner.mean() == 15.0


def test_a_run_whose_clock_passes_1e13_s_names_the_fleet_state() -> None:
    """Two nodes, each failure quarantining its node for 1e11 s: a job on
    both nodes waits out quarantine after quarantine. It completed at
    1.6e17 s (where a double resolves 32 s, coarser than its checkpoints),
    or ran 33M failures to an error blaming the failure law; the clock now
    stops at 1e13 s with the fleet's state."""
    fleet = ace.Fleet(2, node_failures=ace.Exponential(3600.0), repair=60.0)
    policy = ace.Policy(quarantine=ace.Quarantine(failures=1, window=1e9, duration=1e11))
    job = ace.Job(16, 30 * ace.DAY, 600.0)
    with pytest.raises(
        RuntimeError,
        match=r"simulated clock passed 1e13 s .* in replica 0 with 1 of 1 jobs unfinished; at "
        r"that moment 1 of 2 nodes were quarantined and 1 under repair\. .* set a finite horizon",
    ):
        ace.simulate(job, fleet=fleet, policy=policy, horizon=math.inf)
    # A horizon measures a window of the same run.
    res = ace.simulate(job, fleet=fleet, policy=policy, horizon=ace.DAY * 365)
    assert not res.jobs["completed"][0] and res.jobs["wall"][0] == ace.DAY * 365


@pytest.mark.parametrize("path", ["simulate", "batch_simulate"])
def test_a_single_job_past_1e13_s_stops_on_both_paths(path: str) -> None:
    """A failure each hour, each detected 1e11 s later: the job cannot
    finish before 1e13 s; both paths stop with the error (naming the
    replica and the job)."""
    job = ace.Job(8, 30 * ace.DAY, 600.0)
    causes = [ace.Cause("slow to see", 1.0, detect=ace.Constant(1e11))]
    with pytest.raises(RuntimeError, match=r"simulated clock passed 1e13 s .* in replica 0 with"):
        getattr(ace, path)(job, ace.Constant(3600.0), causes=causes, replicas=2, seed=1)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [("gpus", 2.5, TypeError), ("gpus", 2**32, ValueError), ("priority", 2**31, ValueError),
     ("work", "1 h", TypeError)],
)  # fmt: skip
def test_a_job_field_set_after_construction_is_refused_naming_the_job(
    field: str, value: Any, error: type[Exception]
) -> None:
    """A Job's fields are checked when it is built; one set afterwards past
    those checks is refused by the packing of the core's job specs, naming
    the job (a numpy column used to take gpus=2.5 as 2 GPUs)."""
    jobs = [ace.Job(8, 3600.0, 600.0), ace.Job(8, 3600.0, 600.0)]
    setattr(jobs[1], field, value)
    with pytest.raises(error, match=r"jobs\[1\] has a field the simulator cannot take"):
        ace.simulate(jobs)


def test_the_core_refuses_malformed_job_specs() -> None:
    """The compiled call takes packed job specs (whole 48-byte rows, laid
    out as the core's JobSpec) or a tuple of the 9 columns, and names
    anything else."""
    from acesim import _core

    def run(jobs: Any) -> Any:
        return _core.simulate(
            [ace.Constant(60.0)._compiled], jobs, -1, [], None, None, **RUN_OPTIONS
        )

    spec = struct.Struct(_core.JOB_SPEC_FORMAT)
    assert spec.size == 48
    # work 3,600 s, interval 600 s, submit 0, 8 GPUs, a fixed interval, all
    # three laws 60 s, no failures: 60 + 60 s to start, 6 writes of 60 s.
    row = run(spec.pack(3600.0, 600.0, 0.0, 8, 0, 0, 0, 0, 0))["jobs"]
    assert row["gpus"].tolist() == [8]
    assert row["checkpoint_interval"].tolist() == [600.0]
    assert row["wall"].tolist() == [3600.0 + 120.0 + 6 * 60.0]
    with pytest.raises(ValueError, match="whole number of 48-byte rows"):
        run(spec.pack(3600.0, 600.0, 0.0, 8, 0, 0, 0, 0, 0)[:47])
    with pytest.raises(ValueError, match="unknown interval rule"):
        run(spec.pack(3600.0, 600.0, 0.0, 8, 7, 0, 0, 0, 0))
    with pytest.raises(TypeError, match="packed specs"):
        run([3600.0])
    with pytest.raises(TypeError, match=r"packed specs \(bytes\) or a JobColumns"):
        run((np.array([8], np.uint32),))
    with pytest.raises(ValueError, match=r"jobs\.work: no column given"):
        run(_core.JobColumns(gpus=np.array([8], np.uint32)))


def test_a_job_arrays_shared_laws_reach_the_core_as_one_index_each() -> None:
    """A JobArray's init, save and load laws are one index each in the
    core's columns (a column of one index repeated cost 4 bytes a job); the
    core takes either form, with the same rows, and refuses an index that
    names no law."""
    from acesim import _core

    def run(init: Any, save: Any, load: Any) -> Any:
        columns = _core.JobColumns(
            gpus=np.array([8, 16], np.uint32), work=np.array([3600.0, 7200.0]),
            checkpoint_interval=np.array([600.0, 600.0]), rule=np.zeros(2, np.uint32),
            init=init, save=save, load=load, submit=np.zeros(2), priority=np.zeros(2, np.int32),
        )  # fmt: skip
        laws = [ace.Constant(60.0)._compiled, ace.Constant(30.0)._compiled]
        return _core.simulate(laws, columns, -1, [], None, None, **RUN_OPTIONS)["jobs"]

    shared = run(0, 1, 0)
    # 60 s init + 60 s load, then 6 and 12 writes of 30 s.
    assert shared["wall"].tolist() == [3600.0 + 120.0 + 6 * 30.0, 7200.0 + 120.0 + 12 * 30.0]
    columns = run(np.zeros(2, np.uint32), np.ones(2, np.uint32), np.zeros(2, np.uint32))
    assert shared.tobytes() == columns.tobytes()
    with pytest.raises(ValueError, match="save"):
        run(0, 2, 0)
    with pytest.raises(ValueError, match=r"jobs\.save: a law index, got -1"):
        run(0, -1, 0)


def test_job_columns_in_another_dtype_are_read_from_the_converted_copy_for_the_whole_run() -> None:
    """The core reads a JobArray's columns in place; a column in another
    dtype (int64 GPUs, float32 work, int64 priorities) is converted once and
    that copy is held by the call for the whole run, the fleet's included,
    where the scheduler reads the jobs' fields at every dispatch (no
    reference to the copy is left in Python, so a copy freed early would be
    read after free)."""
    from acesim import _core

    laws = [ace.Constant(60.0)._compiled, ace.Constant(30.0)._compiled]
    fleet = _core.FleetSpec(nodes=1)

    def run(gpus_dtype: Any, work_dtype: Any, priority_dtype: Any) -> Any:
        return _core.simulate(
            laws,
            _core.JobColumns(
                gpus=np.array([8, 8], gpus_dtype), work=np.array([3600.0, 7200.0], work_dtype),
                checkpoint_interval=np.array([600.0, 600.0]), rule=np.zeros(2, np.uint32),
                init=0, save=1, load=0, submit=np.zeros(2),
                priority=np.array([0, 0], priority_dtype),
            ),
            -1, [], fleet, None, **RUN_OPTIONS,
        )["jobs"]  # fmt: skip

    native = run(np.uint32, np.float64, np.int32)
    # One node: job 0 runs 3,600 s of work, 60 s init, 60 s load and 6
    # writes of 30 s, 3,900 s; job 1 waits for it and then runs 7,200 s,
    # 120 s and 12 writes, ending at 3,900 + 7,680 s.
    assert native["end"].tolist() == [3900.0, 3900.0 + 7680.0]
    assert native["queue_wait"].tolist() == [0.0, 3900.0]
    converted = run(np.int64, np.float32, np.int64)
    assert converted.tobytes() == native.tobytes()
