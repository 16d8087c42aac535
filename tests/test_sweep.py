"""Sweeps (DESIGN.md section 7): ``acesim.sweep`` over scenarios, locally and
on executors (threads, processes, Dask), with results identical bit for bit
to local ``simulate`` calls; the ``grid`` helper; input checks; pickling of
the model objects (``acesim._pickle``)."""

from __future__ import annotations

import copy
import ctypes
import inspect
import io
import multiprocessing
import pickle
import re
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.sweep import Sweep, SweepResult, grid, sweep
from workers import worker_path

#: A real function of a loaded image (a CompiledPolicy needs code).
LIBC_ABS = ctypes.cast(ctypes.CDLL(None).abs, ctypes.c_void_p).value or 0

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
ARRAYS = ("jobs", "fleet", "trace", "events", "placements", "node_events")


def on_failure_requeue_big(view: Any) -> ace.Replacement | None:
    """A module-level Python policy (pickles by reference)."""
    return ace.Replacement.REQUEUE if view.gpus >= 64 else None


def scenarios() -> list[dict[str, Any]]:
    """A few small, varied scenarios: one job, several jobs with causes, a
    fleet with node failures and a policy, rules and composite laws."""
    big = ace.Job(
        1024,
        work=2 * DAY,
        checkpoint_interval=HOUR,
        save=ace.LogNormal(3.5, 0.5),
        load=ace.Exponential(120.0),
        init=ace.Gamma(2.0, 60.0),
    )
    small = ace.Job(64, work=DAY, checkpoint_interval="young", save=30.0, name="small")
    jobs = ace.JobArray(
        gpus=[8, 16, 32, 64],
        work=[HOUR, 6 * HOUR, DAY, 2 * DAY],
        checkpoint_interval=30 * MINUTE,
        submit=[0.0, 0.0, HOUR, 2 * HOUR],
        priority=[0, 1, 0, 2],
    )
    fleet = ace.Fleet(
        16,
        spares=2,
        repair=ace.Exponential(4 * HOUR),
        node_failures=ace.Weibull(0.8, 20 * DAY),
        lemon_fraction=0.1,
        lemon_factor=5.0,
    )
    policy = ace.Policy(
        replacement=ace.Replacement.SPARES,
        quarantine=ace.Quarantine(failures=2, window=3 * DAY, duration=DAY),
        on_failure=on_failure_requeue_big,
    )
    mixture = ace.Mixture([(0.9, ace.Exponential(5 * DAY)), (0.1, ace.Weibull(0.6, 20 * MINUTE))])
    return [
        {"jobs": big, "failures": ace.Weibull(0.7, 8 * HOUR), "replicas": 23, "seed": 3,
         "record_events": True},
        {"jobs": [big, small], "failures": ace.ScaleAware(mixture, 1024), "replicas": 17,
         "seed": 5, "causes": ace.LLAMA3_CAUSES},
        {"jobs": jobs, "fleet": fleet, "policy": policy, "failures": None, "replicas": 11,
         "seed": 7, "horizon": 5 * DAY, "record_events": True},
        {"jobs": small.with_interval("adaptive"), "failures": ace.Exponential(6 * HOUR),
         "replicas": 9, "seed": 11, "first_replica": 4},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def cases() -> tuple[list[dict[str, Any]], list[ace.SimulationResult]]:
    todo = scenarios()
    return todo, [ace.simulate(**s) for s in todo]


def assert_same(got: list[SweepResult], todo: list[dict[str, Any]], want: list[Any]) -> None:
    assert len(got) == len(want)
    for i, (item, ref) in enumerate(zip(got, want, strict=True)):
        assert isinstance(item, SweepResult)
        assert item.scenario == todo[i]
        res = item.result
        assert isinstance(res, ace.SimulationResult)
        assert (res.seed, res.replicas) == (ref.seed, ref.replicas)
        for name in ARRAYS:
            a, b = getattr(res, name), getattr(ref, name)
            assert a.dtype == b.dtype, (i, name)
            assert a.shape == b.shape, (i, name)
            assert a.tobytes() == b.tobytes(), (i, name)


# --------------------------------------------------------------------------
# Identical results on every executor and chunking
# --------------------------------------------------------------------------


CHUNKS = (None, 1, 4, 10, 1000)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_local(cases: Any, chunk: int | None) -> None:
    todo, want = cases
    assert_same(sweep(todo, chunk_replicas=chunk), todo, want)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_threads(cases: Any, chunk: int | None) -> None:
    todo, want = cases
    with ThreadPoolExecutor(2) as pool:
        assert_same(sweep(todo, pool, chunk_replicas=chunk), todo, want)


@pytest.fixture(scope="module")
def process_pool() -> Iterator[ProcessPoolExecutor]:
    spawn = multiprocessing.get_context("spawn")
    with worker_path(), ProcessPoolExecutor(2, mp_context=spawn) as pool:
        yield pool


@pytest.mark.parametrize("chunk", (None, 1, 10))
def test_processes(cases: Any, process_pool: ProcessPoolExecutor, chunk: int | None) -> None:
    todo, want = cases
    assert_same(sweep(todo, process_pool, chunk_replicas=chunk), todo, want)


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[Executor]:
    distributed = pytest.importorskip("distributed")
    with (
        worker_path(),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client.get_executor()


@pytest.mark.parametrize("chunk", (None, 1, 10))
def test_dask(cases: Any, dask_executor: Executor, chunk: int | None) -> None:
    todo, want = cases
    assert_same(sweep(todo, dask_executor, chunk_replicas=chunk), todo, want)


def test_dask_worker_count(dask_executor: Executor) -> None:
    todo = [{"jobs": ace.Job(8, HOUR, 10 * MINUTE), "replicas": 16}]
    recorder = Recording(dask_executor)
    sweep(todo, recorder)
    # 2 workers: about 4 x 2 tasks.
    assert recorder.replicas == [2] * 8


def test_generator_of_scenarios(cases: Any) -> None:
    _, want = cases
    fresh = scenarios()
    assert_same(sweep(s for s in fresh), fresh, want)


def test_empty() -> None:
    assert sweep([]) == []
    with ThreadPoolExecutor(1) as pool:
        assert sweep([], pool) == []


# --------------------------------------------------------------------------
# Chunking
# --------------------------------------------------------------------------


class Recording(Executor):
    """Runs each task at once (or on ``inner``) and records its replicas."""

    def __init__(self, inner: Executor | None = None, workers: int | None = None) -> None:
        self.inner = inner
        self.replicas: list[int] = []
        self.firsts: list[int] = []
        self.threads: list[Any] = []
        if workers is not None:
            self._max_workers = workers
        elif inner is not None:
            self._client = getattr(inner, "_client", None)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        (task,) = args
        self.replicas.append(task.get("replicas", 1))
        self.firsts.append(task.get("first_replica", 0))
        self.threads.append(task.get("threads"))
        if self.inner is not None:
            return self.inner.submit(fn, *args, **kwargs)
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def small_scenarios(*replicas: int) -> list[dict[str, Any]]:
    job = ace.Job(8, work=6 * HOUR, checkpoint_interval=HOUR)
    return [{"jobs": job, "replicas": r, "failures": ace.Exponential(HOUR)} for r in replicas]


def test_default_chunks_without_worker_count() -> None:
    rec = Recording()
    todo = small_scenarios(10, 3)
    got = sweep(todo, rec)
    assert rec.replicas == [10, 3]  # one task per scenario
    assert rec.threads == [1, 1]  # the executor gives the parallelism
    assert_same(got, todo, [ace.simulate(**s) for s in todo])


def test_default_chunks_from_worker_count() -> None:
    rec = Recording(workers=2)
    todo = small_scenarios(10, 6)
    got = sweep(todo, rec)
    # 16 replicas over 4 x 2 tasks: chunks of 2.
    assert rec.replicas == [2] * 8
    assert rec.firsts == [0, 2, 4, 6, 8, 0, 2, 4]
    assert_same(got, todo, [ace.simulate(**s) for s in todo])


def test_many_scenarios_one_task_each() -> None:
    rec = Recording(workers=1)
    sweep(small_scenarios(*([3] * 6)), rec)
    assert rec.replicas == [3] * 6


def test_thread_pool_worker_count() -> None:
    with ThreadPoolExecutor(3) as pool:
        rec = Recording(pool, workers=pool._max_workers)
        sweep(small_scenarios(24), rec)
    assert rec.replicas == [2] * 12


def test_explicit_chunks_and_threads_kept() -> None:
    rec = Recording(workers=8)
    todo = [{**s, "threads": 2, "first_replica": 5} for s in small_scenarios(7)]
    got = sweep(todo, rec, chunk_replicas=3)
    assert rec.replicas == [3, 3, 1]
    assert rec.firsts == [5, 8, 11]
    assert rec.threads == [2, 2, 2]
    assert_same(got, todo, [ace.simulate(**s) for s in todo])


def test_sweep_is_callable_with_grid() -> None:
    assert isinstance(sweep, Sweep)
    assert sweep.grid is grid
    assert Sweep.grid is grid


# --------------------------------------------------------------------------
# grid
# --------------------------------------------------------------------------


def test_grid_product() -> None:
    job = ace.Job(1024, work=7 * DAY, checkpoint_interval=HOUR)
    laws = [ace.Exponential(h * HOUR) for h in (3, 6, 12)]
    out = grid({"jobs": job, "replicas": 1000, "seed": 9}, failures=laws, seed=[0, 1])
    assert len(out) == 6
    assert [(s["failures"], s["seed"]) for s in out] == [(f, s) for f in laws for s in (0, 1)]
    assert all(s["jobs"] is job and s["replicas"] == 1000 for s in out)
    assert len({id(s) for s in out}) == 6  # separate dicts


def test_grid_runs() -> None:
    job = ace.Job(64, work=DAY, checkpoint_interval=HOUR)
    todo = grid({"jobs": job, "replicas": 5}, failures=[ace.Exponential(HOUR)], seed=range(3))
    got = sweep(todo, chunk_replicas=2)
    assert_same(got, todo, [ace.simulate(**s) for s in todo])


def test_grid_without_axes() -> None:
    job = ace.Job(8, work=DAY, checkpoint_interval=HOUR)
    assert grid({"jobs": job}) == [{"jobs": job}]


def test_grid_errors() -> None:
    job = ace.Job(8, work=DAY, checkpoint_interval=HOUR)
    with pytest.raises(ValueError, match=r"unknown simulate argument 'seeds'.*'seed'"):
        grid({"jobs": job}, seeds=[1, 2])
    with pytest.raises(ValueError, match=r"grid base: unknown simulate argument 'replica'"):
        grid({"jobs": job, "replica": 3})
    with pytest.raises(TypeError, match=r"grid axis 'seed' must be a sequence"):
        grid({"jobs": job}, seed=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"grid axis 'jobs'"):
        grid({}, jobs="job")
    with pytest.raises(ValueError, match=r"grid axis 'seed' must not be empty"):
        grid({"jobs": job}, seed=[])
    with pytest.raises(TypeError, match=r"base must be a dict"):
        grid([("jobs", job)])  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------


def job() -> ace.Job:
    return ace.Job(8, work=DAY, checkpoint_interval=HOUR)


@pytest.mark.parametrize(
    ("bad", "kind", "match"),
    [
        ({"jobs": None}, TypeError, r"scenarios\[1\]: jobs must be a Job"),
        ({"jobs": "x", "replica": 3}, ValueError,
         r"scenarios\[1\]: unknown simulate argument 'replica' \(did you mean 'replicas'\?\)"),
        ({"jobs": [], "seed": 1}, ValueError, r"scenarios\[1\]: jobs must not be empty"),
        ({"jobs": [1]}, TypeError, r"scenarios\[1\]: jobs\[0\] must be a Job"),
        ({"replicas": 0}, ValueError, r"scenarios\[1\]: replicas must be >= 1"),
        ({"replicas": "3"}, TypeError, r"scenarios\[1\]: replicas must be an integer"),
        ({"replicas": 3.0}, TypeError, r"scenarios\[1\]: replicas must be an integer"),
        ({"first_replica": -1}, ValueError, r"scenarios\[1\]: first_replica must be >= 0"),
        ({"first_replica": 2**32 - 1, "replicas": 2}, ValueError,
         r"scenarios\[1\]: first_replica \+ replicas"),
        ({"seed": -1}, ValueError, r"scenarios\[1\]: seed must be >= 0"),
        ({"failures": 3600.0}, TypeError, r"scenarios\[1\]: failures must be a Distribution"),
        ({"fleet": 16}, TypeError, r"scenarios\[1\]: fleet must be a Fleet"),
        ({"policy": "spares"}, TypeError, r"scenarios\[1\]: policy must be a Policy"),
        ({"horizon": 0.0}, ValueError, r"scenarios\[1\]: horizon must be > 0"),
        ({"horizon": "1"}, TypeError, r"scenarios\[1\]: horizon must be a real number"),
        ({"record_events": 1}, TypeError, r"scenarios\[1\]: record_events must be a bool"),
        ({"threads": 0}, ValueError, r"scenarios\[1\]: threads must be >= 1"),
        ({"max_events": 0}, ValueError, r"scenarios\[1\]: max_events must be >= 1"),
        ({"gpus_per_node": 0}, ValueError, r"scenarios\[1\]: gpus_per_node must be >= 1"),
        ({1: 2}, TypeError, r"scenarios\[1\]: keys must be simulate argument names"),
    ],
)  # fmt: skip
def test_invalid_scenario(bad: dict[Any, Any], kind: type[Exception], match: str) -> None:
    todo = [{"jobs": job()}, {"jobs": job(), **bad}]
    with pytest.raises(kind, match=match):
        sweep(todo)
    with ThreadPoolExecutor(1) as pool, pytest.raises(kind, match=match):
        sweep(todo, pool)


def test_invalid_arguments() -> None:
    ok = [{"jobs": job()}]
    with pytest.raises(TypeError, match=r"scenarios must be a list of dicts \(wrap"):
        sweep({"jobs": job()})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"scenarios must be a list of dicts"):
        sweep(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"scenarios\[0\] must be a dict"):
        sweep([job()])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"scenarios\[1\]: 'jobs' is required"):
        sweep([*ok, {"replicas": 3}])
    with pytest.raises(ValueError, match=r"chunk_replicas must be >= 1"):
        sweep(ok, chunk_replicas=0)
    with pytest.raises(TypeError, match=r"chunk_replicas must be an integer"):
        sweep(ok, chunk_replicas=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"executor must be a concurrent.futures.Executor"):
        sweep(ok, "threads")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"progress must be a bool"):
        sweep(ok, progress="yes")  # type: ignore[arg-type]


def test_errors_while_running_name_the_scenario() -> None:
    # simulate's own check (not repeated up front) fails inside the task.
    todo: list[dict[str, Any]] = [{"jobs": job()}, {"jobs": job(), "causes": [1]}]
    match = r"scenarios\[1\]: causes\[0\] must be a Cause"
    with pytest.raises(TypeError, match=match):
        sweep(todo)
    with ThreadPoolExecutor(2) as pool, pytest.raises(TypeError, match=match):
        sweep(todo, pool)


def raising_policy(view: Any) -> None:
    raise RuntimeError("policy failed")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes")
def test_policy_exception_gets_a_note() -> None:
    fleet = ace.Fleet(4, node_failures=ace.Exponential(HOUR))
    todo = [
        {"jobs": job(), "fleet": fleet, "replicas": 2},
        {"jobs": job(), "fleet": fleet, "policy": ace.Policy(on_failure=raising_policy)},
    ]
    for pool in (None, ThreadPoolExecutor(2)):
        with pytest.raises(RuntimeError, match="policy failed") as info:
            sweep(todo, pool)
        assert "raised by scenarios[1]" in getattr(info.value, "__notes__", [])
        if pool is not None:
            pool.shutdown()


def test_unpicklable_policy_for_processes() -> None:
    fleet = ace.Fleet(4, node_failures=ace.Exponential(HOUR))
    todo = [
        {"jobs": job(), "fleet": fleet},
        {"jobs": job(), "fleet": fleet, "policy": ace.Policy(on_failure=lambda v: None)},
    ]
    # Checked before any worker starts.
    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(TypeError, match=r"scenarios\[1\]: policy cannot be sent.*module-level"):
            sweep(todo, pool)
        compiled = ace.CompiledPolicy(LIBC_ABS)
        todo[1]["policy"] = ace.Policy(on_failure=compiled)
        with pytest.raises(
            TypeError, match=r"scenarios\[1\]: policy cannot be sent.*CompiledPolicy"
        ):
            sweep(todo, pool)


# --------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain text line
    monkeypatch.delenv("CI", raising=False)
    todo = small_scenarios(3, 2)
    sweep(todo, progress=True)  # stderr is a pipe here: nothing
    assert capsys.readouterr().err == ""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    sweep(todo, progress=True)
    err = terminal.getvalue()
    assert "\rsweep: 1/2 tasks (50%)" in err
    assert "\rsweep: 2/2 tasks (100%)" in err
    # an estimate of the time left while tasks remain, none at the end
    assert re.search(r"sweep: 1/2 tasks \(50%\) in [0-9.]+ s, about [0-9]+ s left", err)
    assert re.search(r"sweep: 2/2 tasks \(100%\) in [0-9.]+ s {3}\n$", err)
    with ThreadPoolExecutor(2) as pool:
        sweep(todo, pool, chunk_replicas=1, progress=True)
    assert "sweep: 5/5 tasks (100%)" in terminal.getvalue()
    monkeypatch.setenv("CI", "true")  # never in CI
    before = terminal.getvalue()
    sweep(todo, progress=True)
    assert terminal.getvalue() == before


def test_progress_time_left() -> None:
    from acesim.sweep import _eta

    assert [_eta(x) for x in (0.4, 42.0, 200.0, 3900.0)] == [
        "0 s",
        "42 s",
        "3 min 20 s",
        "1 h 05 min",
    ]


def test_progress_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    monkeypatch.delenv("CI", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    sweep(small_scenarios(3, 2), progress=True)
    assert "2/2" in terminal.getvalue()


# --------------------------------------------------------------------------
# Pickling (acesim._pickle)
# --------------------------------------------------------------------------


def roundtrip(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


DISTRIBUTIONS: list[ace.Distribution] = [
    ace.Constant(42.0),
    ace.Exponential(3 * HOUR),
    ace.Weibull(0.7, 2 * HOUR),
    ace.LogNormal(3.0, 0.8),
    ace.Gamma(2.5, 100.0),
    ace.Mixture([(0.8, ace.Exponential(DAY)), (0.2, ace.Weibull(0.5, 10 * MINUTE))]),
    ace.Empirical([5.0, 60.0, 3600.0, 7.5, 0.0]),
    ace.BlockBootstrap([1.0, 2.0, 3.0, 4.0, 50.0, 60.0], block=3),
    ace.Replay([10.0, 20.0, np.inf]),
    ace.ScaleAware(ace.Weibull(0.8, DAY), ref_gpus=1024, exponent=0.9),
    ace.ScaleAware(
        ace.Mixture([(1.0, ace.Gamma(2.0, HOUR)), (3.0, ace.Empirical([1.0, 2.0]))]), 64
    ),
]


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: type(d).__name__)
def test_distribution_roundtrip(dist: ace.Distribution) -> None:
    for other in (roundtrip(dist), copy.deepcopy(dist)):
        assert type(other) is type(dist)
        assert repr(other) == repr(dist)
        assert other.mean(512) == dist.mean(512)
        for gpus in (None, 8.0, 4096.0):
            a = dist.sample(2000, seed=7, stream=3, replica=2, first=11, gpus=gpus, threads=1)
            b = other.sample(2000, seed=7, stream=3, replica=2, first=11, gpus=gpus, threads=1)
            assert a.tobytes() == b.tobytes()


def test_shared_distribution_stays_shared() -> None:
    law = ace.Exponential(HOUR)
    a, b = roundtrip([law, law])
    assert a is b


class MyExponential(ace.Exponential):
    """A subclass without a reducer of its own."""


def test_compiled_sampler_refuses() -> None:
    with pytest.raises(TypeError, match="compiled acesim sampler"):
        pickle.dumps(ace.Exponential(HOUR)._compiled)
    with pytest.raises(TypeError, match="must define __reduce__"):
        pickle.dumps(MyExponential(HOUR))


def test_reducer_refuses_a_changed_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    from acesim import _pickle

    monkeypatch.setitem(_pickle.PARAMETERS, ace.Weibull, ("shape",))
    monkeypatch.setattr(_pickle, "_checked", set())
    with pytest.raises(TypeError, match=r"cannot pickle Weibull.*update its reducer"):
        pickle.dumps(ace.Weibull(1.0, 2.0))


def test_reducers_match_constructors() -> None:
    from acesim import _pickle

    for cls, names in _pickle.PARAMETERS.items():
        assert tuple(inspect.signature(cls).parameters) == names, cls.__name__


def slots(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in type(obj).__slots__}


def test_job_roundtrip() -> None:
    for original in (
        ace.Job(1024, 7 * DAY, "young", init=ace.Gamma(2.0, 60.0), save=ace.Constant(30.0),
                load=ace.Exponential(90.0), submit=HOUR, priority=-3, name="pretrain"),
        ace.Job(8, HOUR, 600.0),
    ):  # fmt: skip
        other = roundtrip(original)
        assert type(other) is ace.Job
        assert repr(other) == repr(original)
        for name, value in slots(original).items():
            if isinstance(value, ace.Distribution):
                assert repr(getattr(other, name)) == repr(value)
            else:
                assert getattr(other, name) == value


def test_job_array_roundtrip() -> None:
    for interval in ("daly", [600.0, 1200.0, 1800.0]):
        original = ace.JobArray(
            gpus=[8, 64, 512],
            work=[HOUR, DAY, 3 * DAY],
            checkpoint_interval=interval,
            submit=[0.0, 10.0, 20.0],
            priority=[1, -2, 3],
            save=ace.LogNormal(3.0, 0.5),
        )
        other = roundtrip(original)
        assert sorted(vars(other)) == sorted(vars(original))
        for name, value in vars(original).items():
            if isinstance(value, np.ndarray):
                assert getattr(other, name).dtype == value.dtype
                assert getattr(other, name).tobytes() == value.tobytes(), name
            else:
                assert repr(getattr(other, name)) == repr(value)


def test_fleet_policy_cause_roundtrip() -> None:
    fleet = ace.Fleet(32, 4, spares=3, repair=ace.LogNormal(9.0, 1.0),
                      node_failures=ace.Exponential(30 * DAY), lemon_fraction=0.05,
                      lemon_factor=8.0)  # fmt: skip
    quarantine = ace.Quarantine(failures=3, window=np.inf, duration=2 * DAY)
    policy = ace.Policy(ace.Replacement.PREEMPT_LOWER, ace.Preemption.CHECKPOINT_AWARE,
                        quarantine, on_failure_requeue_big, preemption_grace=600.0)  # fmt: skip
    for obj in (fleet, quarantine, policy, ace.LLAMA3_CAUSES, ace.Cause("x", 2.0, 30.0, False, 4)):
        other = roundtrip(obj)
        assert repr(other) == repr(obj)
    assert roundtrip(policy).on_failure is on_failure_requeue_big
    assert roundtrip(quarantine) == quarantine


def test_roundtrip_simulates_identically() -> None:
    todo = scenarios()
    for s in todo:
        a = ace.simulate(**s)
        b = ace.simulate(**roundtrip(s))
        for name in ARRAYS:
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()


def test_node_trace_roundtrip() -> None:
    fleet = ace.Fleet(8, node_failures=ace.Exponential(2 * DAY))
    jobs = [ace.Job(16, work=3 * DAY, checkpoint_interval=HOUR)]
    res = ace.simulate(jobs, fleet=fleet, seed=4, horizon=4 * DAY)
    replay = ace.Fleet(8, node_failures=ace.NodeTrace(res.trace, 8))
    other = roundtrip(replay)
    assert isinstance(other.node_failures, ace.NodeTrace)
    assert sorted(vars(other.node_failures)) == sorted(vars(replay.node_failures))
    assert [repr(x) for x in other.node_failures.laws] == [
        repr(x) for x in replay.node_failures.laws
    ]
    a = ace.simulate(jobs, fleet=replay, seed=4, horizon=4 * DAY)
    b = ace.simulate(jobs, fleet=other, seed=4, horizon=4 * DAY)
    for name in ARRAYS:
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes()


def test_compiled_policy_refuses() -> None:
    policy = ace.Policy(on_failure=ace.CompiledPolicy(LIBC_ABS))
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(policy)
