"""Sweeps: run many :func:`acesim.simulate` scenarios, locally or on any
:class:`concurrent.futures.Executor` (a thread or process pool, or Dask's
``Client.get_executor()``), with results identical, bit for bit, to running
each scenario in one local ``simulate`` call (:ref:`model-determinism`).

A scenario is a dict of ``simulate`` keyword arguments; :func:`grid` builds
the cartesian product of some of them. Each scenario's replicas may be split
into chunks run as separate tasks: replica ``r`` draws from random streams
keyed by ``(seed, first_replica + r)``, so chunks run with ``first_replica``
offsets and concatenated in replica order give exactly the rows of the whole.

>>> import acesim as ace
>>> from acesim.sweep import grid, sweep
>>> job = ace.Job(512, work=ace.DAY, checkpoint_interval=ace.HOUR)
>>> scenarios = grid({"jobs": job, "replicas": 20},
...                  failures=[ace.Exponential(h * ace.HOUR) for h in (6, 24)], seed=[0, 1])
>>> len(scenarios)
4
>>> results = sweep(scenarios, chunk_replicas=8)
>>> [round(r.scenario["failures"].mean() / ace.HOUR) for r in results]
[6, 6, 24, 24]
>>> whole = ace.simulate(**scenarios[3])
>>> results[3].result.jobs.tobytes() == whole.jobs.tobytes()
True
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import itertools
import math
import os
import pickle
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import Any, NamedTuple, TextIO

import numpy as np
import numpy.typing as npt

from . import _pickle  # noqa: F401  (registers the reducers process executors need)
from ._validation import check_replica_ids, integer
from .simulation import SimulationResult, simulate

__all__ = ["Sweep", "SweepResult", "grid", "sweep"]

#: The keyword arguments ``simulate`` accepts (a scenario's keys).
SIMULATE_ARGUMENTS: tuple[str, ...] = tuple(inspect.signature(simulate).parameters)

#: Tasks per worker when the executor tells its worker count and
#: ``chunk_replicas`` is not given: enough to even out unequal scenarios.
TASKS_PER_WORKER = 4

_MAX_REPLICA = 2**32


class SweepResult(NamedTuple):
    """One scenario of a sweep: the ``scenario`` (a copy of its dict of
    ``simulate`` arguments, as given) and its :class:`SimulationResult`."""

    scenario: dict[str, Any]
    result: SimulationResult


def grid(base: Mapping[str, Any], /, **axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Scenarios for :func:`sweep`: the cartesian product of the ``axes``, each
    merged into a copy of ``base`` (an axis replaces a ``base`` key of the
    same name). Every key is a ``simulate`` argument; each axis is a sequence
    of alternative values. The first axis varies slowest, the last fastest.

    >>> import acesim as ace
    >>> from acesim.sweep import grid
    >>> job = ace.Job(1024, work=7 * ace.DAY, checkpoint_interval=ace.HOUR)
    >>> s = grid({"jobs": job, "replicas": 1000},
    ...          failures=[ace.Exponential(h * ace.HOUR) for h in (3, 6, 12)], seed=[0, 1])
    >>> [(round(x["failures"].mean() / ace.HOUR), x["seed"]) for x in s]
    [(3, 0), (3, 1), (6, 0), (6, 1), (12, 0), (12, 1)]

    To sweep jobs, give alternatives: ``jobs=[job_a, job_b]`` is two
    scenarios of one job each; ``jobs=[[a, b], [c, d]]`` two of two jobs.
    """
    if not isinstance(base, Mapping):
        raise TypeError(
            f"base must be a dict of simulate keyword arguments, got {type(base).__name__}"
        )
    for key in base:
        try:
            _check_key(key)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"grid base: {exc}") from None
    values: list[list[Any]] = []
    for key, axis in axes.items():
        _check_key(key)
        if isinstance(axis, str | bytes | Mapping) or not isinstance(axis, Iterable):
            raise TypeError(
                f"grid axis {key!r} must be a sequence of alternative values, "
                f"got {type(axis).__name__} (wrap a single value in a list)"
            )
        alternatives = list(axis)
        if not alternatives:
            raise ValueError(f"grid axis {key!r} must not be empty")
        values.append(alternatives)
    names = list(axes)
    return [
        {**base, **dict(zip(names, combo, strict=True))} for combo in itertools.product(*values)
    ]


class Sweep:
    """Run every scenario and return one :class:`SweepResult` (``scenario``,
    ``result``) per scenario, in scenario order:
    ``acesim.sweep(scenarios, executor=None, *, chunk_replicas=None, progress=False)``.

    ``scenarios``: dicts of :func:`acesim.simulate` keyword arguments (each
    with ``"jobs"``), for example from :func:`grid` (also reachable as
    ``acesim.sweep.grid``). Before anything runs, the keys, ``replicas`` and
    ``first_replica`` are checked; ``simulate`` checks the other values when
    the task runs. Either way a TypeError or ValueError names the scenario
    (``scenarios[3]: seed must be >= 0``); other errors raised while a
    scenario runs carry a note naming it.

    ``executor``: ``None`` runs the scenarios here, one after the other (each
    ``simulate`` call uses its ``threads``, by default every core). Otherwise
    any :class:`concurrent.futures.Executor`: ``ThreadPoolExecutor``,
    ``ProcessPoolExecutor``, or a Dask cluster's ``Client.get_executor()``.
    The executor provides the parallelism, so a task whose scenario does not
    set ``"threads"`` runs with ``threads=1``. Everything a scenario holds
    must pickle for a process-based executor; the acesim model objects do
    (see :mod:`acesim._pickle`), a Python ``on_failure`` policy must be a
    module-level function (Dask's cloudpickle also sends lambdas), and a
    :class:`acesim.CompiledPolicy` never pickles (use a thread executor).
    A ``ProcessPoolExecutor``'s scenarios are test-pickled first so that the
    error names the scenario and key.

    ``chunk_replicas``: the most replicas per task; each scenario's replicas
    are split into chunks run with ``first_replica`` offsets and joined in
    replica order. ``None``: with an executor whose worker count is known
    (thread and process pools, Dask), chunks of about equal size making about
    ``4 x workers`` tasks in all (one task per scenario when there are more
    scenarios than that); otherwise, and locally, one task per scenario. The
    results never depend on the chunking or the executor: every array is
    identical, byte for byte, to the one a single local
    ``simulate(**scenario)`` call returns. Each task is sent its scenario's
    whole ``jobs``: for a huge ``JobArray`` prefer few large chunks.

    ``progress``: show the tasks done on stderr (with ``tqdm`` when it is
    installed, else a plain text line) when stderr is a terminal and the
    environment variable ``CI`` is not set: nothing in a pipe, a log file or
    CI (see :func:`progress_bar`).
    """

    #: :func:`grid`, so that ``acesim.sweep.grid`` works on the function too.
    grid = staticmethod(grid)

    def __call__(
        self,
        scenarios: Iterable[Mapping[str, Any]],
        executor: Executor | None = None,
        *,
        chunk_replicas: int | None = None,
        progress: bool = False,
    ) -> list[SweepResult]:
        """Run the scenarios (see :class:`Sweep`)."""
        return _sweep(scenarios, executor, chunk_replicas=chunk_replicas, progress=progress)

    def __repr__(self) -> str:
        return "<acesim.sweep>"


#: The sweep function (an instance of :class:`Sweep`, which carries ``grid``).
sweep = Sweep()


def _sweep(
    scenarios: Iterable[Mapping[str, Any]],
    executor: Executor | None,
    *,
    chunk_replicas: int | None,
    progress: bool,
    label: tuple[str, str] = ("sweep", "task"),
) -> list[SweepResult]:
    given = _scenario_list(scenarios)
    if chunk_replicas is not None:
        chunk_replicas = integer("chunk_replicas", chunk_replicas, minimum=1)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(
            f"executor must be a concurrent.futures.Executor or None, got {type(executor).__name__}"
        )
    progress = progress_flag(progress)
    todo = given if executor is None else [{"threads": 1, **kwargs} for kwargs in given]
    if isinstance(executor, ProcessPoolExecutor):
        _check_picklable(todo)

    replicas = [int(kwargs.get("replicas", 1)) for kwargs in todo]
    if chunk_replicas is None:
        chunk_replicas = _default_chunk(replicas, _worker_count(executor))
    tasks: list[tuple[int, dict[str, Any]]] = []
    for i, kwargs in enumerate(todo):
        first = int(kwargs.get("first_replica", 0))
        for offset in range(0, replicas[i], chunk_replicas):
            n = min(chunk_replicas, replicas[i] - offset)
            if n == replicas[i]:
                tasks.append((i, kwargs))
            else:
                tasks.append((i, {**kwargs, "first_replica": first + offset, "replicas": n}))

    bar = progress_bar(progress, len(tasks), desc=label[0], unit=label[1])
    try:
        if executor is None:
            parts = [_local(i, kwargs, bar) for i, kwargs in tasks]
        else:
            parts = _remote(executor, tasks, bar)
    finally:
        if bar is not None:
            bar.close()

    chunks: list[list[SimulationResult]] = [[] for _ in todo]
    for (i, _), part in zip(tasks, parts, strict=True):
        chunks[i].append(part)
    return [
        SweepResult(dict(scenario), _join(found))
        for scenario, found in zip(given, chunks, strict=True)
    ]


# ---------------------------------------------------------------------------
# Running the tasks
# ---------------------------------------------------------------------------


def _run_task(kwargs: dict[str, Any]) -> SimulationResult:
    """One task: a ``simulate`` call (module level, so it pickles by name)."""
    return simulate(**kwargs)


def _local(index: int, kwargs: dict[str, Any], bar: _Progress | None) -> SimulationResult:
    try:
        out = _run_task(kwargs)
    except Exception as exc:
        error = _in_scenario(index, exc)
        if error is exc:
            raise
        raise error from exc
    if bar is not None:
        bar.update()
    return out


def _remote(
    executor: Executor, tasks: list[tuple[int, dict[str, Any]]], bar: _Progress | None
) -> list[SimulationResult]:
    futures: list[Future[SimulationResult]] = []
    try:
        for _, kwargs in tasks:
            futures.append(executor.submit(_run_task, kwargs))
        scenario_of = {f: i for f, (i, _) in zip(futures, tasks, strict=False)}
        pending: set[Future[SimulationResult]] = set(futures)
        while pending:
            done, pending = wait_futures(pending, return_when=FIRST_COMPLETED)
            for future in done:
                exc = future.exception()
                if exc is not None:
                    error = _in_scenario(scenario_of[future], exc)
                    if error is exc:
                        raise exc
                    raise error from exc
                if bar is not None:
                    bar.update()
        return [f.result() for f in futures]
    except BaseException:
        for future in futures:
            future.cancel()
        raise


def _in_scenario(index: int, exc: BaseException) -> BaseException:
    """``exc`` naming the scenario it came from: a plain TypeError or
    ValueError is re-made with the prefix; anything else gets a note."""
    prefix = f"scenarios[{index}]"
    if type(exc) in (TypeError, ValueError) and not str(exc).startswith(prefix):
        return type(exc)(f"{prefix}: {exc}")
    if sys.version_info >= (3, 11):
        exc.add_note(f"raised by {prefix}")
    return exc


def _worker_count(executor: Executor | None) -> int | None:
    """Workers of a thread or process pool, or worker threads of a Dask
    client's executor; None when unknown."""
    if executor is None:
        return None
    count = getattr(executor, "_max_workers", None)
    if isinstance(count, int) and count > 0:
        return count
    client = getattr(executor, "_client", None)
    nthreads = getattr(client, "nthreads", None)
    if callable(nthreads):
        try:
            total = sum(int(n) for n in nthreads().values())
        except Exception:  # not a Dask client after all, or no scheduler
            return None
        return total if total > 0 else None
    return None


def _default_chunk(replicas: Sequence[int], workers: int | None) -> int:
    largest = max(replicas, default=1)
    if workers is None:
        return largest
    per_task = math.ceil(sum(replicas) / (TASKS_PER_WORKER * workers))
    return max(1, min(largest, per_task))


def _join(parts: list[SimulationResult]) -> SimulationResult:
    """Chunks of one scenario, in replica order, as one result (with the
    provenance of the whole: the first chunk's arguments, all its replicas)."""
    if len(parts) == 1:
        return parts[0]
    replicas = sum(p.replicas for p in parts)
    origin = parts[0]._described_origin()
    if "arguments" in origin:
        origin["arguments"]["dict"]["replicas"] = replicas
    return dataclasses.replace(
        parts[0],
        jobs=_concat([p.jobs for p in parts]),
        fleet=_concat([p.fleet for p in parts]),
        trace=_concat([p.trace for p in parts]),
        events=_concat([p.events for p in parts]),
        placements=_concat_optional([p.placements for p in parts]),
        node_events=_concat_optional([p.node_events for p in parts]),
        replicas=replicas,
        _origin={**origin, "described": True},
    )


def _concat_optional(arrays: list[npt.NDArray[Any] | None]) -> npt.NDArray[Any] | None:
    """The event-log tables a result may lack (None in every chunk: None)."""
    present = [a for a in arrays if a is not None]
    if not present:
        return None
    if len(present) != len(arrays):
        raise RuntimeError("chunks disagree on whether the result has the event log")
    return _concat(present)


def _concat(arrays: list[npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """Concatenate structured arrays byte for byte. ``np.concatenate`` copies
    field by field and leaves the padding bytes between fields uninitialized;
    joining the raw bytes keeps them as the simulator wrote them."""
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dtype:
            raise RuntimeError(f"chunks returned different dtypes: {dtype} and {a.dtype}")
    raw = np.concatenate([np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays])
    out: npt.NDArray[Any] = raw.view(dtype)
    return out


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _check_key(key: Any) -> None:
    if not isinstance(key, str):
        raise TypeError(f"keys must be simulate argument names (strings), got {key!r}")
    if key not in SIMULATE_ARGUMENTS:
        close = difflib.get_close_matches(key, SIMULATE_ARGUMENTS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown simulate argument {key!r}{hint}; "
            f"simulate takes {', '.join(SIMULATE_ARGUMENTS)}"
        )


def _scenario_list(scenarios: Any) -> list[dict[str, Any]]:
    if isinstance(scenarios, Mapping):
        raise TypeError("scenarios must be a list of dicts (wrap a single scenario in a list)")
    if isinstance(scenarios, str | bytes) or not isinstance(scenarios, Iterable):
        raise TypeError(
            "scenarios must be a list of dicts of simulate arguments, got "
            f"{type(scenarios).__name__}"
        )
    out: list[dict[str, Any]] = []
    for i, scenario in enumerate(scenarios):
        if not isinstance(scenario, Mapping):
            raise TypeError(
                f"scenarios[{i}] must be a dict of simulate keyword arguments, "
                f"got {type(scenario).__name__}"
            )
        kwargs = dict(scenario)
        try:
            _check_scenario(kwargs)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"scenarios[{i}]: {exc}") from None
        out.append(kwargs)
    return out


def _check_scenario(kwargs: dict[str, Any]) -> None:
    """The checks a sweep needs before it plans its tasks. Every other value
    is checked by ``simulate`` when the task runs (its error then names the
    scenario too), so a sweep accepts exactly what ``simulate`` accepts."""
    for key in kwargs:
        _check_key(key)
    if "jobs" not in kwargs:
        raise ValueError("'jobs' is required")
    replicas = integer("replicas", kwargs.get("replicas", 1), minimum=1, maximum=_MAX_REPLICA - 1)
    first = integer("first_replica", kwargs.get("first_replica", 0), maximum=_MAX_REPLICA - 1)
    check_replica_ids(first, replicas)


def _check_picklable(todo: list[dict[str, Any]]) -> None:
    """Name the scenario and key of whatever a process executor could not send."""
    seen: set[int] = set()
    for i, kwargs in enumerate(todo):
        for key, value in kwargs.items():
            if id(value) in seen:
                continue
            try:
                pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                hint = ""
                if key == "policy":
                    hint = (
                        " (a Python on_failure must be a module-level function; a "
                        "CompiledPolicy runs with a thread executor only)"
                    )
                raise TypeError(
                    f"scenarios[{i}]: {key} cannot be sent to a process executor: {exc}{hint}"
                ) from exc
            seen.add(id(value))


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------


#: Set (to anything) in CI: progress is never drawn there.
_CI = "CI"


def on_terminal(stream: Any = None) -> bool:
    """Whether progress may be drawn on ``stream`` (default stderr): it is a
    terminal and the environment variable ``CI`` is not set."""
    if _CI in os.environ:
        return False
    isatty = getattr(sys.stderr if stream is None else stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


def progress_flag(progress: Any) -> bool:
    """``progress`` as a bool; a TypeError naming it otherwise."""
    if not isinstance(progress, bool | np.bool_):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    return bool(progress)


def progress_bar(progress: bool, total: int, *, desc: str, unit: str) -> _Progress | None:
    r"""The progress of every long call (``sweep``, ``simulate``,
    ``batch_simulate``, ``optimal_interval``, ``History.backtest`` and the
    command line's long commands): a :class:`_Progress` of ``total``
    ``unit``\ s on stderr when ``progress`` is asked and stderr is a
    terminal outside CI (:func:`on_terminal`), else None (nothing drawn)."""
    if not progress or not on_terminal():
        return None
    return _Progress(total, desc=desc, unit=unit)


class _Progress:
    """Tasks done, on stderr: a tqdm bar when tqdm is installed, else a text
    line (rewritten in place on a terminal, every 10% otherwise)."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        desc: str = "sweep",
        unit: str = "task",
    ) -> None:
        self.total = total
        self.done = 0
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()
        self.desc = desc
        self.unit = unit
        self.bar: Any = None
        try:
            tqdm = importlib.import_module("tqdm").tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self.bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream)
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = -1

    def update(self, n: int = 1) -> None:
        """``n`` more done."""
        self.done += n
        if self.done > self.total:  # a search that learns its length as it goes
            self.total = self.done
            if self.bar is not None:
                self.bar.total = self.total
        if self.bar is not None:
            self.bar.update(n)
            return
        tenth = 10 * self.done // max(self.total, 1)
        if self.tty:
            self.stream.write("\r" + self._line())
        elif tenth != self._shown or self.done == self.total:
            self.stream.write(self._line() + "\n")
        self._shown = tenth
        self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.start
        share = self.done / self.total if self.total else 1.0
        line = (
            f"{self.desc}: {self.done}/{self.total} {self.unit}s ({share:.0%}) in {elapsed:.1f} s"
        )
        if 0 < self.done < self.total:
            eta = elapsed / self.done * (self.total - self.done)
            line += f", about {_eta(eta)} left"
        return line + ("   " if self.tty else "")


def _eta(seconds: float) -> str:
    """``42 s``, ``3 min 20 s``, ``1 h 05 min``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
