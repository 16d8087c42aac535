"""``simulate``: run the job lifecycle over replicas and return numpy
structured arrays (one row per replica x job, one per replica for the fleet,
one per failure in the trace)."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import math
import operator
import os
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from . import _core
from ._core_input import CoreModel, core_model
from ._validation import boolean, check_replica_ids, finite, integer, real, seconds
from .analytic import meta_scale_model
from .distributions import Distribution, Never, scipy_to_law
from .errors import NoProgressError
from .fleet import Cause, Fleet, _cause_list
from .job import RULE_CODES, CheckpointTier, Job, JobArray
from .policy import Policy

if TYPE_CHECKING:
    from .stats import Estimate

__all__ = [
    "PURPOSES",
    "STREAM_VERSION",
    "BatchResult",
    "JobStatus",
    "SimulationResult",
    "batch_simulate",
    "job_stream",
    "simulate",
]

#: Random-stream purposes of a job (:ref:`model-random-streams`): draw ``i`` of
#: ``job_stream(j, purpose)`` in replica ``r`` is what the simulator uses.
#: The version of the random streams: the draws every (seed, replica, entity,
#: purpose) gives. Recorded traces and results replay to the same numbers
#: under the same version; a change that alters any draw bumps it (and the
#: CHANGELOG says so). Every result's provenance carries it.
STREAM_VERSION = 1

PURPOSES = {
    "failure": 0,
    "init": 1,
    "save": 2,
    "load": 3,
    "blame": 4,
    "cause": 5,
    "detect": 6,
    "repair": 7,
    "replace": 10,
    "persist": 11,
    "tier_save": 12,
    "tier_load": 13,
    "reconfigure": 14,
}
_JOB_KIND = 1

#: The most jobs one simulation (or FleetModel result) holds.
MAX_JOBS = 2**24

JobsArg = Job | Sequence[Job] | JobArray | Any


def job_stream(job: int, purpose: str) -> int:
    """The stream id that job number ``job`` draws ``purpose`` from; pass it
    to ``Distribution.sample(stream=..., replica=..., gpus=job.gpus)`` to get
    exactly the simulator's draws."""
    if purpose not in PURPOSES:
        raise ValueError(f"purpose must be one of {sorted(PURPOSES)}, got {purpose!r}")
    return int(
        _core.stream_id(_JOB_KIND, integer("job", job, maximum=MAX_JOBS - 1), PURPOSES[purpose])
    )


class JobStatus(enum.IntEnum):
    """Where a job stands at the end of a run: the ``status`` column of
    ``res.jobs``.

    An unplaceable job's row is closed at the moment it became unplaceable,
    as a row is at the horizon: ``end`` is that moment, ``wall`` is finite,
    the time it waited is in ``queue_wait`` (before its first start) or
    ``recovery_wait``, its progress is its last checkpoint, and the buckets
    add up to ``wall``. The run does not wait for it: it ends when every
    other job is done (or at the horizon).
    """

    #: finished (``completed`` is true)
    DONE = 0
    #: holds its nodes at the horizon (starting, computing, writing a
    #: checkpoint, or in detection after a fault)
    RUNNING = 1
    #: waiting at the horizon: in the queue, or waiting for nodes after a
    #: failure or a preemption
    QUEUED = 2
    #: submitted after the horizon: never ran (``wall`` 0, ``ettr`` NaN: no
    #: time to share; rollups such as :meth:`SimulationResult.pooled_ettr`
    #: and ``summary`` add nothing for it)
    NOT_SUBMITTED = 3
    #: can never start again: retirement (``Quarantine(duration=math.inf)``)
    #: left fewer nodes than it needs (not counting the hot spares for a
    #: start from the queue); its row is closed then
    UNPLACEABLE = 4


class EventKind(enum.IntEnum):
    """What happened: the ``kind`` column of ``res.events`` (with
    ``record_events=True``)."""

    #: the job was submitted
    SUBMIT = 0
    #: a start began (init + load); ``res.placements`` has its nodes
    START_BEGIN = 1
    #: compute toward the next checkpoint began
    COMPUTE_BEGIN = 2
    #: a checkpoint write (or an asynchronous snapshot) began
    CHECKPOINT_BEGIN = 3
    #: the write (or snapshot) ended
    CHECKPOINT_END = 4
    #: a fault struck the job
    FAILURE = 5
    #: the fault was detected
    DETECTED = 6
    #: the job finished
    DONE = 7
    #: the run's horizon closed the row
    HORIZON = 8
    #: the job was preempted; ``other`` is the job whose recovery took its nodes
    PREEMPTED = 9
    #: the job waits for nodes after a failure
    WAITING = 10
    #: the job was stopped for planned maintenance
    MAINTENANCE = 11
    #: the job can never start again (retirement); its row closed
    UNPLACEABLE = 12
    #: a run stopped at its time limit (queued again)
    TIME_LIMIT = 13
    #: an asynchronous checkpoint's persist ended: it is durable
    CHECKPOINT_DURABLE = 14
    #: an elastic job went on with fewer nodes
    SHRINK = 15
    #: an elastic job took its nodes back
    GROW = 16


class FailureSource(enum.IntEnum):
    """Which failure process fired: the ``source`` column of ``res.trace``."""

    #: the job-level failure law (``failures=``), blamed on one of the job's nodes
    JOB = 0
    #: a node's own failure process (``Fleet(node_failures=...)``)
    NODE = 1


class NodeEventKind(enum.IntEnum):
    """The ``kind`` column of ``res.node_events``: every change of a node's
    state the engine decides. A quarantine's row follows the ``DOWN`` row of
    the same failure event (``event``, ``cause``); its ``until`` column says
    when the quarantine ends (``inf`` for a retirement; NaN on other rows).
    A result saved before quarantines were recorded has no ``until`` column
    and no quarantine rows."""

    #: out of service after a failure (under repair, quarantined, or both)
    DOWN = 0
    #: back in service
    UP = 1
    #: drained for planned maintenance
    MAINTENANCE = 2
    #: quarantined until ``until`` (the node left service: its DOWN row)
    QUARANTINED = 3
    #: quarantined for good (``Quarantine(duration=math.inf)``): never back
    RETIRED = 4


def quarantines_recorded(node_events: npt.NDArray[Any] | None) -> bool:
    """Whether a ``node_events`` table records quarantines and retirements
    (its rows of kinds ``QUARANTINED`` and ``RETIRED``, with their ``until``
    column): False for one saved before they were recorded, or none."""
    return node_events is not None and "until" in (node_events.dtype.names or ())


TableName = Literal["jobs", "fleet", "trace", "events", "placements", "node_events"]

#: The tables of a :class:`SimulationResult`.
TABLES: tuple[TableName, ...] = ("jobs", "fleet", "trace", "events", "placements", "node_events")

#: Per table, the columns holding codes of an enum (decoded by to_pandas).
_CODED: dict[str, dict[str, type[enum.IntEnum]]] = {
    "jobs": {"status": JobStatus},
    "fleet": {},
    "trace": {"source": FailureSource},
    "events": {"kind": EventKind},
    "placements": {},
    "node_events": {"kind": NodeEventKind},
}


#: The time buckets of a job row, in the order results show them; they add
#: up to the row's ``wall`` exactly (``narrow``: elastic jobs only).
BUCKETS = (
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "queue_wait",
    "recovery_wait",
    "narrow",
)


class _Provenance:
    """What a result says of what produced it (:attr:`provenance`); the
    result classes hold ``_origin``: the producer's arguments (objects,
    described lazily) or their description already (``described``)."""

    _origin: Mapping[str, Any] | None
    seed: int
    replicas: int

    _BASE = ("acesim_version", "format", "stream_version", "seed", "replicas", "job_names")

    @property
    def provenance(self) -> dict[str, Any]:
        """What produced this result, as JSON data (see
        :mod:`acesim.provenance`): ``acesim_version``, ``format``, ``seed``,
        ``replicas``, ``job_names`` and, for a ``simulate`` result,
        ``arguments`` (every argument but ``threads``, which never changes
        the numbers; :func:`acesim.provenance.reproduce` runs them again;
        ``batch_arguments`` for :func:`batch_simulate`, less ``device``;
        ``fleet_model`` and ``calls`` for a :class:`FleetModel`'s), plus
        whatever the producer added (a scenario file's ``scenario``)."""
        from . import __version__
        from .provenance import FORMAT, describe

        origin = dict(self._origin or {})
        described = origin.pop("described", False)
        out: dict[str, Any] = {
            "acesim_version": __version__,
            "format": FORMAT,
            "stream_version": STREAM_VERSION,
            "seed": int(self.seed),
            "replicas": int(self.replicas),
            "job_names": list(getattr(self, "job_names", ())),
        }
        for key, value in origin.items():
            out[key] = value if described else describe(value)
        return out

    def _described_origin(self) -> dict[str, Any]:
        """The producer's part of :attr:`provenance`, described."""
        current = self.provenance
        for key in self._BASE:
            current.pop(key)
        return current

    def with_provenance(self: _R, **extra: Any) -> _R:
        """This result with more provenance beside what it has: JSON data
        (dicts with string keys, lists, strings, numbers, booleans, None; a
        non-finite float is written as Python's ``json`` writes it), kept as
        given, e.g. ``scenario=`` the scenario file's tables."""
        import json

        for key, value in extra.items():
            if key in self._BASE or key in ("arguments", "batch_arguments"):
                raise ValueError(f"with_provenance: {key!r} is the result's own")
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"with_provenance: {key} must be JSON data ({exc})") from None
        current = self._described_origin()
        current.update(extra)
        return dataclasses.replace(self, _origin={**current, "described": True})  # type: ignore[type-var]

    def __reduce__(self) -> Any:
        # The arguments travel described (a compiled policy cannot be pickled).
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        state["_origin"] = {**self._described_origin(), "described": True}
        return (_rebuild_result, (type(self), state))


_R = TypeVar("_R", bound=_Provenance)


class Row(dict[str, Any]):
    """One row of a result table, by field name (a dict of plain Python
    numbers), that prints as ``Row(replica=0, job=1, gpus=16, ...)``
    rather than as a bare tuple."""

    def __init__(self, record: Any) -> None:
        names = record.dtype.names or ()
        super().__init__((name, record[name].item()) for name in names)

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


@dataclass(frozen=True)
class SimulationResult(_Provenance):
    """Results of :func:`simulate`.

    ``jobs``: one row per replica x job (fields ``replica job gpus wall
    productive wasted ckpt_stall overhead detection queue_wait recovery_wait
    narrow failures preemptions checkpoints ettr gpu_hours_lost churn_gpu_hours
    completed status timeouts`` and more; ``status`` is a :class:`JobStatus`);
    ``fleet``: one row per replica (with ``retired_nodes`` and
    ``spare_idle_node_hours``, the node-hours spent in the hot-spare pool up
    to the end of the simulated span); ``trace``: every
    failure (``replica time job node cause inter_failure``); ``events``: the
    event log when ``record_events`` was on (else empty), whose ``other``
    names, for a preemption, the job whose recovery took the nodes;
    ``placements``: with the event log, one row per node of every start
    (``replica job node time``, in the job's node order); ``node_events``:
    with the event log, one row per node leaving or returning to service,
    and one per quarantine and retirement (``replica node kind event cause
    time until``; ``kind`` a :class:`NodeEventKind`: 0 out after failure
    event ``event`` of ``trace``, under repair or quarantined; 1 back; 2
    drained for maintenance; 3 quarantined until ``until``; 4 retired).
    """

    jobs: npt.NDArray[Any]
    fleet: npt.NDArray[Any]
    trace: npt.NDArray[Any]
    events: npt.NDArray[Any]
    seed: int
    replicas: int
    placements: npt.NDArray[Any] | None = None
    node_events: npt.NDArray[Any] | None = None
    #: each job's ``Job.name`` (None where it has none), by job number
    job_names: tuple[str | None, ...] = ()
    #: what produced the result: ``simulate``'s arguments (objects, described
    #: lazily by :attr:`provenance`), or their description already
    _origin: Mapping[str, Any] | None = dataclass_field(default=None, repr=False, compare=False)

    @classmethod
    def _from_tables(
        cls,
        raw: dict[str, Any],
        seed: int,
        replicas: int,
        *,
        arguments: Mapping[str, Any] | None = None,
        job_names: Sequence[str | None] = (),
        origin: Mapping[str, Any] | None = None,
    ) -> SimulationResult:
        """From the core's tables by name (a run's, or a closed FleetModel's).
        ``origin`` (read-only, shared by the results of equal calls) stands
        for ``{"arguments": arguments}``.

        Every field is set at once, as the frozen dataclass's ``__init__``
        would set them one by one (a third of a small call's Python time)."""
        if origin is None and arguments is not None:
            origin = {"arguments": arguments}
        result = object.__new__(cls)
        object.__setattr__(
            result,
            "__dict__",
            {
                "jobs": raw["jobs"],
                "fleet": raw["fleet"],
                "trace": raw["trace"],
                "events": raw["events"],
                "seed": seed,
                "replicas": replicas,
                "placements": raw["placements"],
                "node_events": raw["node_events"],
                "job_names": tuple(job_names),
                "_origin": origin,
            },
        )
        return result

    def save(self, path: str | os.PathLike[str], provenance: dict[str, Any] | None = None) -> None:
        """Write the result to ``path`` (``.npz``, ``.parquet``, ``.csv`` or
        ``.json``): :func:`acesim.results_io.save_result`."""
        from .results_io import save_result

        save_result(self, path, provenance)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SimulationResult:
        """A result :meth:`save` wrote: :func:`acesim.results_io.load_result`."""
        from .results_io import load_result

        return load_result(path)

    def __repr__(self) -> str:
        """A summary: its jobs, replicas and seed, the pooled ETTR, failures
        per replica, the share completed and its tables' sizes (the arrays
        themselves are the attributes)."""
        jobs = self.jobs
        n_jobs = int(np.unique(jobs["job"]).size) if jobs.size else 0
        replicas = max(self.replicas, 1)
        tables = ", ".join(
            f"{name} {len(table)}"
            for name in ("jobs", "fleet", "trace", "events", "placements", "node_events")
            if (table := getattr(self, name)) is not None and len(table)
        )
        completed = float(np.mean(jobs["completed"])) if jobs.size else math.nan
        return (
            f"SimulationResult({n_jobs} job{'s' if n_jobs != 1 else ''}, {self.replicas} "
            f"replica{'s' if self.replicas != 1 else ''}, seed {self.seed}: "
            f"ETTR {self.pooled_ettr():.4f}, "
            f"{float(np.sum(jobs['failures'])) / replicas:.2f} failures/replica, "
            f"completed {completed:.1%}; rows: {tables or 'none'})"
        )

    def row(self, job: int = 0, replica: int = 0) -> Row:
        """One row of :attr:`jobs` (job ``job`` of replica ``replica``) as a
        :class:`Row`, a dict by field name that prints with the names; a
        ValueError when there is no such row."""
        job = integer("job", job, minimum=0)
        replica = integer("replica", replica, minimum=0)
        found = self.jobs[(self.jobs["job"] == job) & (self.jobs["replica"] == replica)]
        if not found.size:
            raise ValueError(f"no row for job {job} in replica {replica}")
        return Row(found[0])

    def pooled_ettr(self, job: int | None = None) -> float:
        """Total productive time / total wall over replicas (for one job, or all
        jobs GPU-weighted). For completed jobs this is work / mean wall. Rows
        of jobs that never ran (``NOT_SUBMITTED``: no wall-clock) add
        nothing; NaN, without a warning, when nothing ran at all. A
        ValueError for a ``job`` not in the result (a TypeError for one that
        is not an integer), as for :meth:`ettr`."""
        from .stats import _job_index

        j = _job_index(self, job)
        rows = self.jobs if j is None else self.jobs[self.jobs["job"] == j]
        g = rows["gpus"].astype(np.float64)
        wall = float(np.sum(g * rows["wall"]))
        return float(np.sum(g * rows["productive"]) / wall) if wall > 0 else math.nan

    def ettr(self, job: int | None = None, ci: float = 0.95) -> Estimate:
        """The pooled ETTR with a two-sided confidence interval: a named
        tuple ``(value, low, high)`` (:class:`acesim.Estimate`).

        ``value`` is :meth:`pooled_ettr`: total productive / total wall over
        replicas, GPU-hour weighted over jobs (sum gpus x productive / sum
        gpus x wall), or of job number ``job`` alone. The interval treats the
        replicas as the independent units (a replica's jobs are summed
        first): ratio estimator, delta method, ``SE = sqrt(sum_r (P_r -
        value W_r)^2 / (n (n - 1))) / mean(W_r)`` over the ``n`` replicas'
        GPU-weighted productive ``P_r`` and wall ``W_r``, ``t`` the Student t
        quantile with ``n - 1`` degrees of freedom at ``(1 + ci) / 2``, and
        the interval ``value ± t x SE`` corrected for the skewness of the
        replicas (Hall's transformation: failures skew the wall-clock, and
        the symmetric interval's lower end is too high too often), clipped
        to [0, 1].
        Of one replica: ``(value, nan, nan)`` and a
        :class:`acesim.SingleReplicaWarning`. A ValueError for ``ci``
        outside (0, 1) or a ``job`` not in the result; see
        :mod:`acesim.stats`.

        >>> import acesim as ace
        >>> job = ace.Job(1024, work=2 * ace.DAY, checkpoint_interval=ace.HOUR)
        >>> value, low, high = ace.simulate(job, replicas=100, seed=1).ettr()
        >>> bool(low < value < high)
        True
        """
        from .stats import _ettr

        return _ettr(self, job, ci, stacklevel=3)

    def summary(self) -> dict[str, float]:
        """Pooled ETTR and where the GPU-hours went (fractions of wall),
        with the standard error of the per-replica fleet ETTR."""
        j = self.jobs
        g = j["gpus"].astype(np.float64)
        wall = float(np.sum(g * j["wall"]))
        out: dict[str, float] = {"ettr": self.pooled_ettr()}
        for field in BUCKETS:
            out[field] = float(np.sum(g * j[field]) / wall) if wall > 0 else math.nan
        fe = self.fleet["ettr"]
        fe = fe[np.isfinite(fe)]  # replicas where something ran
        out["ettr_stderr"] = (
            float(np.std(fe, ddof=1) / math.sqrt(fe.size)) if fe.size > 1 else math.nan
        )
        out["failures_per_replica"] = float(np.mean(self.fleet["failures"]))
        out["completed"] = float(np.mean(j["completed"]))
        out["gpu_hours_lost_per_replica"] = float(np.mean(self.fleet["gpu_hours_lost"]))
        return out

    def goodput(self) -> dict[str, float]:
        """GPU-hours per replica (the mean over replicas) by
        ml-goodput-measurement's goodput and badput names
        (:data:`acesim.history.GOODPUT_NAMES`: the same mapping a fleet's
        history is measured with): ``productive`` is ``GoodputType.TOTAL``;
        ``wasted`` and ``detection`` are
        ``BadputType.WASTED_PROGRESS_FROM_DISRUPTION``; ``recovery_wait``
        ``INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION``; ``ckpt_stall``
        ``UNPRODUCTIVE_CHECKPOINT_SAVE_TIME``; ``overhead`` the sum of the
        initialization, preparation, startup and restore types. Buckets with
        no such name keep theirs: ``queue_wait`` (scheduling, not runtime)
        and ``narrow`` (an elastic job's lost throughput)."""
        from .history import GOODPUT_NAMES

        g = self.jobs["gpus"].astype(np.float64)
        replicas = max(self.replicas, 1)
        out: dict[str, float] = {}
        for bucket in BUCKETS:
            name = GOODPUT_NAMES.get(bucket) or bucket
            hours = float(np.sum(g * self.jobs[bucket])) / 3600.0 / replicas
            out[name] = out.get(name, 0.0) + hours
        return out

    def to_pandas(self, table: TableName = "jobs") -> Any:
        """One of the result's tables as a pandas DataFrame (needs the
        ``pandas`` extra): ``"jobs"``, ``"fleet"``, ``"trace"``, ``"events"``,
        ``"placements"`` or ``"node_events"``. Integer codes are decoded to
        their names as categoricals (``status``: :class:`JobStatus`; an
        event's ``kind``: :class:`EventKind`; a trace's ``source``:
        :class:`FailureSource`; a node event's ``kind``:
        :class:`NodeEventKind`) and, when the jobs have names, a ``name``
        column follows ``job``. The numpy arrays
        keep the codes (replays and :class:`~acesim.NodeTrace` read them)."""
        if table not in TABLES:
            raise ValueError(f"table must be one of {TABLES}, got {table!r}")
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError('to_pandas needs pandas: pip install "acesim[pandas]"') from exc
        array = getattr(self, table)
        if array is None:
            raise ValueError(f"the result has no {table} table (run with record_events=True)")
        frame = pd.DataFrame({n: np.asarray(array[n]) for n in array.dtype.names or ()})
        codes: dict[str, type[enum.IntEnum]] = _CODED[table]
        for column, kind in codes.items():
            if column in frame:
                labels = [m.name for m in kind]
                values = pd.Categorical.from_codes(
                    [labels.index(kind(int(v)).name) for v in frame[column]], categories=labels
                )
                frame[column] = values
        if "job" in frame and any(n is not None for n in self.job_names):
            labels = sorted({n for n in self.job_names if n is not None})
            known = len(self.job_names)
            names = [self.job_names[j] if 0 <= j < known else None for j in frame["job"].tolist()]
            frame.insert(
                frame.columns.get_loc("job") + 1, "name", pd.Categorical(names, categories=labels)
            )
        return frame


def _job_input(jobs: Any) -> list[Job] | JobArray:
    if isinstance(jobs, Job):
        return [jobs]
    if isinstance(jobs, JobArray):
        if len(jobs) > MAX_JOBS:
            raise ValueError("jobs: at most 2**24 jobs per simulation")
        return jobs
    if isinstance(jobs, list | tuple):  # the common case, before the slower checks
        out = list(jobs)
    elif isinstance(jobs, np.ndarray) and jobs.dtype.names is not None:
        return JobArray.from_records(jobs)
    elif hasattr(jobs, "to_records") and hasattr(jobs, "columns"):  # a pandas DataFrame
        return JobArray.from_records(jobs)
    elif isinstance(jobs, str | bytes) or not isinstance(jobs, Iterable):
        raise TypeError(
            f"jobs must be a Job, a sequence of Job or a JobArray, got {type(jobs).__name__}"
        )
    else:
        out = list(jobs)
    if not out:
        raise ValueError("jobs must not be empty")
    for i, job in enumerate(out):
        if not isinstance(job, Job):
            raise TypeError(f"jobs[{i}] must be a Job, got {type(job).__name__}")
    if len(out) > MAX_JOBS:
        raise ValueError("jobs: at most 2**24 jobs per simulation")
    return out


def _run_options(
    replicas: Any, seed: Any, first_replica: Any, horizon: Any
) -> tuple[int, int, int, float]:
    """Replica count, seed, first replica id and horizon, validated."""
    n_replicas = integer("replicas", replicas, minimum=1, maximum=2**32 - 1)
    seed_ = integer("seed", seed, minimum=0, maximum=2**64 - 1)
    first = integer("first_replica", first_replica, minimum=0, maximum=2**32 - 1)
    check_replica_ids(first, n_replicas)
    return n_replicas, seed_, first, _horizon(horizon)


def _horizon(horizon: Any) -> float:
    """A run's horizon, validated: seconds > 0, at most MAX_SECONDS, or
    ``math.inf`` for none (simulate's, batch_simulate's and FleetModel's)."""
    horizon_ = real("horizon", horizon)
    if math.isnan(horizon_) or horizon_ <= 0:
        raise ValueError(f"horizon must be > 0 (math.inf for none), got {horizon_!r}")
    if math.isfinite(horizon_):
        seconds("horizon", horizon_)
    return horizon_


@functools.cache
def _default_failures() -> Distribution:
    """The default job-level law (:func:`acesim.meta_scale_model`), built
    once: a law is a value, and building it cost a fifth of a small call."""
    return meta_scale_model()


def _python_backed(policy: Policy | None) -> bool:
    """The policy's on_failure is a CompiledPolicy around a ctypes callback
    of a Python function (see _python_callback_errors)."""
    if policy is None or policy.on_failure is None:
        return False
    from .compiled import CompiledPolicy

    on_failure = policy.on_failure
    objects = getattr(getattr(on_failure, "keepalive", None), "_objects", None) or {}
    return isinstance(on_failure, CompiledPolicy) and any(
        type(o).__name__ == "CThunkObject" for o in objects.values()
    )


def _python_callback_errors(policy: Policy | None) -> contextlib.AbstractContextManager[None]:
    """A CompiledPolicy made from a ctypes callback around a Python function:
    an exception in it cannot reach the simulator (ctypes prints it and
    returns an arbitrary value, 0 or SPARES on most builds), so the run's
    decisions would be garbage. Such exceptions are caught (sys.unraisablehook) and the
    call raises instead of returning its numbers. Any other policy: nothing
    to guard (a null context, cheaper than a generator's)."""
    return _callback_error_guard() if _python_backed(policy) else _NO_GUARD


_NO_GUARD = contextlib.nullcontext()


@contextlib.contextmanager
def _callback_error_guard() -> Iterator[None]:
    """_python_callback_errors's guard."""
    caught: list[Any] = []

    def error() -> ValueError:
        first = caught[0]
        return ValueError(
            f"policy.on_failure: the Python function behind the ctypes callback raised "
            f"{type(first.exc_value).__name__}: {first.exc_value} ({len(caught)} time(s)); "
            "ctypes cannot pass it to the simulator and returns an arbitrary decision instead "
            "(0, SPARES, on most builds), so the results are not returned. Pass the Python "
            "function itself as Policy(on_failure=...) to have its exceptions propagate"
        )

    previous = sys.unraisablehook
    sys.unraisablehook = caught.append
    try:
        yield
    except Exception:
        # The core refused the arbitrary decision: the Python error is the cause.
        if caught:
            raise error() from caught[0].exc_value
        raise
    finally:
        sys.unraisablehook = previous
    if caught:
        raise error() from caught[0].exc_value


def _check_policy_without_fleet(policy: Policy) -> None:
    """Without a fleet every replacement is at hand: of a policy only its
    replacement_delay is used. Anything else it sets would be ignored."""
    default = Policy()
    unused = [
        name
        for name in ("replacement", "preemption", "quarantine", "on_failure", "place",
                     "preemption_grace", "backfill")
        if getattr(policy, name) != getattr(default, name)
    ]  # fmt: skip
    if unused:
        raise ValueError(
            f"policy: without a fleet only its replacement_delay is used (every replacement "
            f"is at hand at once); its {', '.join(unused)} would never be used: pass "
            "fleet=ace.Fleet(...) to give it nodes to decide about"
        )


def _check_cause_widths(causes: Sequence[Any], fleet: Fleet | None) -> None:
    """A cause that takes more nodes than the fleet has would silently take
    them all."""
    if fleet is None:
        return
    for k, c in enumerate(causes):
        if c.nodes > fleet.nodes:
            raise ValueError(
                f"causes[{k}].nodes: cause {c.name!r} takes {c.nodes} nodes, more than the "
                f"fleet's {fleet.nodes}"
            )


@functools.cache
def _memory_bytes() -> float:
    """This machine's physical memory (inf when it cannot tell); asked once
    (a sysconf call each time cost more than a small simulation)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return math.inf


def _check_result_size(replicas: int, jobs: int, *, per_replica: bool = True) -> None:
    """Refuses a run whose result rows alone cannot fit in memory (instead of
    a std::bad_alloc from the core)."""
    need = replicas * (jobs * _core.JOB_ROW_BYTES + (_core.REPLICA_BYTES if per_replica else 0))
    have = _memory_bytes()
    if need > have:
        raise ValueError(
            f"replicas: {replicas:,} replicas of {jobs:,} job(s) need about "
            f"{need / 2**30:,.1f} GiB for their result rows alone, more than this machine's "
            f"{have / 2**30:,.1f} GiB; run fewer, or in chunks (first_replica=..., or "
            "acesim.sweep with chunk_replicas)"
        )


def _threads(threads: Any) -> int:
    """None: one thread per core."""
    if threads is None:
        return _cores()
    return integer("threads", threads, minimum=1, maximum=4096)


@functools.cache
def _cores() -> int:
    """The machine's cores, asked once."""
    return os.cpu_count() or 1


class _DistributionTable(dict[Any, int]):
    """Jobs share distribution objects: each distinct one (by identity: laws
    do not compare by value) is compiled once. ``table[law]`` (or
    ``table.index(law)``) is its index in ``compiled``, -1 for None; a law
    seen before is a plain dict hit. The table holds on to every law it
    indexed (a law converted on the way in, from scipy, would otherwise be
    freed and its id reused).

    ``by_value=True`` (a table that lives as long as a FleetModel, which
    every submitted job's new law objects would otherwise grow without end)
    keys laws by value instead: equal laws (the same compiled table,
    ``_core.Distribution.value_key``) share one index, and the table holds
    on to the first of them only."""

    __slots__ = ("_by_value", "compiled")

    def __init__(self, by_value: bool = False) -> None:
        self[None] = -1
        self.compiled: list[Any] = []
        self._by_value: dict[bytes, int] | None = {} if by_value else None

    @property
    def index(self) -> Callable[[Distribution | None], int]:
        """The index of a law (the bound lookup: no Python frame on a hit)."""
        return self.__getitem__ if self._by_value is None else self._value_index

    def copy(self) -> _DistributionTable:
        """Another table with the same laws at the same indices."""
        out = _DistributionTable(self._by_value is not None)
        dict.update(out, self)
        out.compiled = list(self.compiled)
        if self._by_value is not None:
            out._by_value = dict(self._by_value)
        return out

    def __missing__(self, dist: Distribution) -> int:
        if isinstance(dist, Never):  # no law: the failure process is absent
            self[dist] = -1
            return -1
        found = self[dist] = len(self.compiled)
        self.compiled.append(dist._compiled)
        return found

    def _value_index(self, dist: Distribution | None) -> int:
        """The index of a law by value (``by_value=True``); -1 for None and
        for :class:`Never` (no law), as by identity."""
        if dist is None or isinstance(dist, Never):
            return -1
        compiled = dist._compiled
        by_value: dict[bytes, int] = self._by_value  # type: ignore[assignment]
        key = compiled.value_key
        found = by_value.get(key)
        if found is None:
            found = by_value[key] = len(self.compiled)
            self.compiled.append(compiled)
        return found


#: The last call's fleet, policy and causes, their core specs and the table
#: that indexes their laws (_model_table).
_LAST_MODEL: list[tuple[Any, ...]] = []


def _model_table(
    fleet: Fleet | None, policy: Policy | None, causes: Any, cause_list: list[Cause]
) -> tuple[_DistributionTable, CoreModel]:
    """The core's fleet, policy and causes, and a new table of laws that
    holds theirs (first, at the indices their specs name). Fleets, policies
    and causes are frozen values: a call with the same objects as the last
    (causes None or a tuple) reuses their specs, which cost most of a small
    call's Python time to build."""
    last = _LAST_MODEL[0] if _LAST_MODEL else None
    if last is not None and last[0] is fleet and last[1] is policy and last[2] is causes:
        return last[3].copy(), last[4]
    table = _DistributionTable()
    model = core_model(table.index, fleet, policy, cause_list)
    if causes is None or isinstance(causes, tuple):
        _LAST_MODEL[:] = [(fleet, policy, causes, table.copy(), model)]
    return table, model


def _failure_laws(
    failures: Any, jobs: list[Job] | JobArray, index: Callable[[Distribution | None], int]
) -> int | list[int]:
    """One law for every job (an index), or one per job (a list)."""
    if not isinstance(failures, Distribution):
        failures = scipy_to_law("failures", failures)
    if failures is None or isinstance(failures, Distribution):
        return index(failures)
    if isinstance(failures, str | bytes) or not isinstance(failures, Sequence):
        raise TypeError(
            "failures must be a Distribution, a sequence of Distribution (one per job) or None, "
            f"got {type(failures).__name__}"
        )
    laws = [scipy_to_law(f"failures[{i}]", law) for i, law in enumerate(failures)]
    if len(laws) != len(jobs):
        raise ValueError(f"failures has {len(laws)} laws for {len(jobs)} jobs")
    for i, law in enumerate(laws):
        if law is not None and not isinstance(law, Distribution):
            raise TypeError(
                f"failures[{i}] must be a Distribution or None, got {type(law).__name__}"
            )
    return [index(law) for law in laws]


#: A core JobSpec as Python's struct module packs it (work,
#: checkpoint_interval, submit, gpus, rule, init, save, load, priority).
_JOB_SPEC = struct.Struct(_core.JOB_SPEC_FORMAT)


class _CoreJobs(NamedTuple):
    """The jobs as the core reads them."""

    #: A list of Job objects packed one core JobSpec after another, or a
    #: JobArray's columns (read in place by the core; its init, save and
    #: load laws are one index each, shared by every job).
    specs: bytes | _core.JobColumns
    #: One time limit per job (inf: none), or None when no job has one.
    time_limits: npt.NDArray[np.float64] | None
    #: Whether a job has asynchronous or tiered checkpoints, is elastic or
    #: has a checkpoint size (see _checkpoint_levels).
    leveled: bool
    names: tuple[str | None, ...]


def _core_jobs(job_list: list[Job] | JobArray, index: Any) -> _CoreJobs:
    """One pass over the jobs: their specs, their laws' indices (by
    ``index``, in job order: init, save, load) and what else they have."""
    if isinstance(job_list, JobArray):
        n = len(job_list)
        columns = _core.JobColumns(
            gpus=job_list.gpus,
            work=job_list.work,
            checkpoint_interval=job_list.checkpoint_interval,
            rule=job_list.rule,
            init=index(job_list.init),  # one law for every job: an index, not a column
            save=index(job_list.save),
            load=index(job_list.load),
            submit=job_list.submit,
            priority=job_list.priority,
        )
        return _CoreJobs(columns, job_list.time_limit, _has_levels(job_list), (None,) * n)
    pack = _JOB_SPEC.pack
    rows: list[bytes] = []
    names: list[str | None] = []
    limited = leveled = False
    for j, job in enumerate(job_list):
        interval = job.checkpoint_interval
        rule = 0
        if isinstance(interval, str):
            rule = RULE_CODES[interval]
            interval = 0.0
        try:
            rows.append(
                pack(job.work, interval, job.submit, job.gpus, rule, index(job.init),
                     index(job.save), index(job.load), job.priority)
            )  # fmt: skip
        except struct.error as e:  # a field set after construction, past its checks
            kind = TypeError if "not a" in str(e) else ValueError
            raise kind(f"jobs[{j}] has a field the simulator cannot take: {e}") from None
        names.append(job.name)
        limited = limited or job.time_limit is not None
        leveled = leveled or _has_levels(job)
    limits = None
    if limited:
        limits = np.array(
            [math.inf if job.time_limit is None else job.time_limit for job in job_list],
            np.float64,
        )
    return _CoreJobs(b"".join(rows), limits, leveled, tuple(names))


def _has_levels(job: Job | JobArray) -> bool:
    """Whether the core needs ``job``'s checkpoint levels (_checkpoint_levels)."""
    return (
        job.persist is not None
        or bool(job.tiers)
        or job.min_gpus is not None
        or job.checkpoint_bytes is not None
    )


def _checkpoint_levels(job_list: list[Job] | JobArray, index: Any) -> _core.JobOptionColumns:
    """The core's asynchronous / tiered checkpoint and elastic columns, for
    jobs that have them (_CoreJobs.leveled)."""
    shared = isinstance(job_list, JobArray)
    jobs_: list[Any] = [job_list] if isinstance(job_list, JobArray) else list(job_list)
    n = len(job_list)
    persist = np.full(n, -1, np.int64)
    first = np.zeros(n, np.uint32)
    count = np.zeros(n, np.uint32)
    min_gpus = np.zeros(n, np.uint32)
    reconfigure = np.full(n, -1, np.int64)
    scaling = np.ones(n, np.float64)
    checkpoint_bytes = np.zeros(n, np.float64)
    tiers: list[_core.CheckpointTierSpec] = []
    seen: dict[tuple[CheckpointTier, ...], int] = {}
    for j, job in enumerate(jobs_):
        if job.persist is not None:
            persist[j] = index(job.persist)
        if job.tiers:
            if job.tiers not in seen:  # jobs with the same tiers share their rows
                seen[job.tiers] = len(tiers)
                tiers.extend(_tier_spec(t, index) for t in job.tiers)
            first[j] = seen[job.tiers]
            count[j] = len(job.tiers)
        if job.min_gpus is not None:
            min_gpus[j] = job.min_gpus
            reconfigure[j] = index(job.reconfigure)
            scaling[j] = job.scaling
        if job.checkpoint_bytes is not None:
            checkpoint_bytes[j] = job.checkpoint_bytes
    if shared:
        for column in (persist, first, count, min_gpus, reconfigure, scaling, checkpoint_bytes):
            column[:] = column[0]
    return _core.JobOptionColumns(
        persist=persist,
        tier_first=first,
        tier_count=count,
        tiers=tiers,
        min_gpus=min_gpus,
        reconfigure=reconfigure,
        scaling=scaling,
        checkpoint_bytes=checkpoint_bytes,
    )


def _tier_spec(tier: CheckpointTier, index: Any) -> _core.CheckpointTierSpec:
    """The core's spec of one checkpoint tier."""
    return _core.CheckpointTierSpec(
        interval=tier.interval, save=index(tier.save), load=index(tier.load),
        replication=tier.replication,
    )  # fmt: skip


#: A job interrupted this many times in a row without a new durable
#: checkpoint stops a run with NoProgressError (``max_stalled_failures``).
DEFAULT_MAX_STALLED_FAILURES = 10_000


def _max_stalled_failures(value: Any) -> int:
    """``max_stalled_failures``, checked: a positive int."""
    return integer("max_stalled_failures", value, minimum=1, maximum=2**32 - 1)


def _named_stall(
    exc: NoProgressError, names: Sequence[str | None] | None
) -> NoProgressError | None:
    """A NoProgressError from the core names a job by its index: the same
    error with the job's name added, where it has one (None: it has none)."""
    job = getattr(exc, "job", None)
    known = names is not None and isinstance(job, int) and job < len(names)
    name = names[job] if known and names is not None and isinstance(job, int) else None
    if name is None:
        return None
    named = NoProgressError(str(exc).replace(f"job {job} ", f"job {job} ({name!r}) ", 1))
    for key in ("job", "count", "replica"):
        setattr(named, key, getattr(exc, key, None))
    return named


@contextlib.contextmanager
def _naming_stalled_jobs(names: Sequence[str | None] | None) -> Iterator[None]:
    """_named_stall around a block."""
    try:
        yield
    except NoProgressError as exc:
        named = _named_stall(exc, names)
        if named is None:
            raise
        raise named from None


#: Every field of a Job, read at once (a tuple; laws compare by identity).
_JOB_FIELDS_ONLY = operator.attrgetter(*Job.__slots__)


def _job_fields(job: Job) -> tuple[Any, ...]:
    """A Job's fields and their types: ``gpus = 8.0`` set on a Job after a
    call is not that call's ``8`` (it is checked again, and refused)."""
    fields = _JOB_FIELDS_ONLY(job)
    return (*fields, *map(type, fields))


#: The most jobs of a call whose input is kept for the next (_fingerprint):
#: a small call's conversion is most of its Python time, a large one's is not.
_KEPT_JOBS = 64


def _fingerprint(jobs: Any) -> tuple[Any, ...] | None:
    """The fields of ``jobs`` (a Job, or a list or tuple of at most
    _KEPT_JOBS Job objects), as ``simulate`` converts them; None for other
    inputs (a JobArray's columns are arrays, which can change in place
    unseen)."""
    if type(jobs) is Job:
        return (_job_fields(jobs),)
    if (type(jobs) is list or type(jobs) is tuple) and len(jobs) <= _KEPT_JOBS:
        if all(type(job) is Job for job in jobs):
            return tuple(map(_job_fields, jobs))
    return None


class _Ready(NamedTuple):
    """``simulate``'s input as the core takes it, and the arguments it was
    made from (_last_input)."""

    jobs: Any
    failures_arg: Any
    fleet: Fleet | None
    policy: Policy | None
    causes: Any
    fingerprint: tuple[Any, ...] | None
    failures: Any  # the job-level law(s), the default one put in
    job_count: int
    compiled: list[Any]
    failure_index: int | list[int]
    core_jobs: _CoreJobs
    model: CoreModel
    options: _core.JobOptionColumns | None


#: The last call's _Ready, when its input can be recognized (_last_input).
_LAST_INPUT: list[_Ready] = []


def _remember(ready: _Ready) -> _Ready:
    """Keeps ``ready`` for the next call when it can be recognized: jobs that
    are Job objects, a single law or None for ``failures`` (a list of laws
    can change in place unseen) and causes None or a tuple."""
    failures = ready.failures_arg
    if (
        ready.fingerprint is not None
        and (failures is None or isinstance(failures, Distribution))
        and (ready.causes is None or isinstance(ready.causes, tuple))
    ):
        _LAST_INPUT[:] = [ready]
    return ready


def _last_input(jobs: Any, failures: Any, fleet: Any, policy: Any, causes: Any) -> _Ready | None:
    """The last call's converted input when this call's is the same: the same
    objects (fleets, policies, causes and laws are frozen values) and jobs
    whose every field is the one converted then (Job objects can be
    changed). A repeated small call then costs its argument checks only."""
    if not _LAST_INPUT:
        return None
    last = _LAST_INPUT[0]
    if (
        last.jobs is jobs
        and last.failures_arg is failures
        and last.fleet is fleet
        and last.policy is policy
        and last.causes is causes
        and _fingerprint(jobs) == last.fingerprint
    ):
        return last
    return None


def simulate(
    jobs: JobsArg,
    failures: Distribution | Sequence[Distribution | None] | None = None,
    fleet: Fleet | None = None,
    policy: Policy | None = None,
    replicas: int = 1,
    seed: int = 0,
    horizon: float = math.inf,
    record_events: bool = False,
    threads: int | None = None,
    *,
    causes: Any = None,
    gpus_per_node: int = 8,
    first_replica: int = 0,
    max_events: int | None = None,
    check_invariants: bool = False,
    target_se: float | None = None,
    max_stalled_failures: int = DEFAULT_MAX_STALLED_FAILURES,
    progress: bool = False,
) -> SimulationResult:
    """Simulate the fail-stop/checkpoint lifecycle of ``jobs``.

    ``failures`` is the job-level inter-failure law (drawn per job for its
    size, renewed after each failure, its clock running while the job holds
    hardware), or a sequence with one law per job. ``None`` means
    :func:`acesim.meta_scale_model` when the fleet has no node-level failure
    model, and no job-level failures when it has one. With ``fleet=None``
    replacements are always available and jobs are independent; with a
    :class:`Fleet`, jobs compete for its nodes, node failures hit every job
    on the node, and ``policy`` decides the recovery.
    ``causes`` (e.g. :data:`acesim.LLAMA3_CAUSES`) gives each failure a cause
    with its detection latency, whether the node goes to repair and how many
    nodes it takes.

    Replica ``r`` uses random streams keyed by ``(seed, first_replica + r)``, so
    results are identical for any ``threads`` (``None``: every core) and any
    split of replicas across calls, and node failures are the same under every
    policy. ``check_invariants`` verifies the fleet's bookkeeping after every
    event (slow; for tests).

    Without a fleet each job runs on the single-job kernel (the code of
    :func:`batch_simulate`, no event heap) unless the call needs the event
    heap: ``record_events``, ``check_invariants``, a job's ``time_limit``, a
    cause's ``slowdown`` or a policy's ``replacement_delay``. Every table,
    the failure trace and fleet rollup included, is the same bits either
    way.

    ``target_se`` runs replicas until the standard error of the pooled ETTR
    (:meth:`SimulationResult.ettr`'s) is at most ``target_se``, ``replicas``
    being then the most it runs: 32 first (fewer if ``replicas`` is
    smaller), then as many again each round (64, 128, ...). The result is
    exactly the first N replicas of a run of N replicas with the same seed,
    and its provenance records N.

    ``max_stalled_failures``: a job interrupted that many times in a row
    without a new durable checkpoint cannot make progress under the model
    (its failures come faster than a checkpoint interval plus its start and
    write): the run stops with :class:`acesim.NoProgressError` naming the
    job and the count, as it does at the failure cap (2**25 failures in a
    replica), instead of running on for minutes and gigabytes.

    ``progress``: the replicas run in chunks (about 20, ``first_replica``
    offsets joined in replica order: the same result, table for table) and
    the replicas done are shown on stderr when it is a terminal outside CI
    (:func:`acesim.sweep.progress_bar`; with ``tqdm`` when installed).

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=2 * ace.DAY, checkpoint_interval=ace.HOUR)
    >>> res = ace.simulate(job, replicas=100, seed=1)
    >>> bool(0.8 < res.pooled_ettr() < 1.0)
    True
    """
    if target_se is not None or _progress_flag(progress):
        arguments = dict(jobs=jobs, failures=failures, fleet=fleet, policy=policy, seed=seed,
                         horizon=horizon, record_events=record_events, threads=threads,
                         causes=causes, gpus_per_node=gpus_per_node, max_events=max_events,
                         check_invariants=check_invariants,
                         max_stalled_failures=max_stalled_failures)  # fmt: skip
        result: SimulationResult
        if target_se is not None:
            result = _until_precise(
                simulate, arguments, replicas, first_replica, target_se, progress, "simulate"
            )
        else:
            result = _in_chunks(simulate, arguments, replicas, first_replica, "simulate")
        return result
    given = (replicas, seed, first_replica, horizon, record_events, check_invariants, threads,
             gpus_per_node, max_events, max_stalled_failures)  # fmt: skip
    # The same call as the last (_prepare_call): the same objects, the same
    # run options of the same types, and jobs whose fields are the same.
    call = _LAST_CALL[0] if _LAST_CALL else None
    if (
        call is None
        or call.jobs is not jobs
        or call.failures is not failures
        or call.fleet is not fleet
        or call.policy is not policy
        or call.causes is not causes
        or call.given != given
        or call.types != tuple(map(type, given))
        or call.fingerprint != _fingerprint(jobs)
    ):
        ready = _last_input(jobs, failures, fleet, policy, causes)
        call = _prepare_call(ready, jobs, failures, fleet, policy, causes, given)
    try:
        if policy is None or not _python_backed(policy):  # nothing to guard
            raw = _core.simulate(*call.args, **call.options)
        else:
            with _callback_error_guard():
                raw = _core.simulate(*call.args, **call.options)
    except NoProgressError as exc:
        named = _named_stall(exc, call.names)
        if named is None:
            raise
        raise named from None
    # The core's new dict of tables becomes the result's attributes.
    attributes: dict[str, Any] = raw
    attributes["seed"] = call.seed
    attributes["replicas"] = call.replicas
    attributes["job_names"] = call.names
    attributes["_origin"] = call.origin
    result = object.__new__(SimulationResult)
    object.__setattr__(result, "__dict__", attributes)
    return result


@dataclass(slots=True, eq=False)
class _Call:
    """A ``simulate`` call as the core takes it (_prepare_call). Slots: a
    repeated call reads a dozen of its attributes."""

    jobs: Any  # the call's input (_Ready's, beside the call for a quick check)
    failures: Any
    fleet: Fleet | None
    policy: Policy | None
    causes: Any
    ready: _Ready
    given: tuple[Any, ...]  # the run options as given
    types: tuple[type, ...]  # and their types
    args: tuple[Any, ...]  # _core.simulate's positional arguments
    options: dict[str, Any]  # and its keywords
    seed: int
    replicas: int
    origin: Mapping[str, Any]  # the results' provenance: {"arguments": ...}, read-only
    fingerprint: tuple[Any, ...] | None  # the jobs' fields (_fingerprint)
    names: tuple[str | None, ...]  # the jobs' names


#: The last call (_prepare_call): a call with the same input (_last_input)
#: and the same run options, of the same types, is the same call.
_LAST_CALL: list[_Call] = []


def _prepare_call(
    ready: _Ready | None,
    jobs: Any,
    failures: Any,
    fleet: Any,
    policy: Any,
    causes: Any,
    given: tuple[Any, ...],
) -> _Call:
    """``simulate``'s arguments checked and converted (the input too, unless
    ``ready`` has it already), in the order simulate checks them."""
    (replicas, seed, first_replica, horizon, record_events, check_invariants, threads,
     gpus_per_node, max_events, max_stalled_failures) = given  # fmt: skip
    if ready is None:
        job_list = _job_input(jobs)
        if fleet is not None and not isinstance(fleet, Fleet):
            raise TypeError(f"fleet must be a Fleet or None, got {type(fleet).__name__}")
        if policy is not None and not isinstance(policy, Policy):
            raise TypeError(f"policy must be a Policy or None, got {type(policy).__name__}")
        cause_list = _cause_list(causes)
        if policy is not None and fleet is None:
            _check_policy_without_fleet(policy)
        _check_cause_widths(cause_list, fleet)
        node_level = fleet is not None and fleet.node_failures is not None
        laws = _default_failures() if failures is None and not node_level else failures
        job_count = len(job_list)
    else:
        laws = ready.failures
        job_count = ready.job_count
    n_replicas, seed_, first, horizon_ = _run_options(replicas, seed, first_replica, horizon)
    _check_result_size(n_replicas, job_count)
    record_events = boolean("record_events", record_events)
    check_invariants = boolean("check_invariants", check_invariants)
    threads_ = _threads(threads)
    per_node = integer("gpus_per_node", gpus_per_node, minimum=1, maximum=2**16)
    if fleet is not None:
        per_node = fleet.gpus_per_node
    max_events_ = (
        0 if max_events is None else integer("max_events", max_events, minimum=1, maximum=2**63)
    )
    max_stalled = _max_stalled_failures(max_stalled_failures)
    if ready is None:
        table, model = _model_table(fleet, policy, causes, cause_list)
        index = table.index
        failure_index = _failure_laws(laws, job_list, index)
        core_jobs = _core_jobs(job_list, index)
        levels = _checkpoint_levels(job_list, index) if core_jobs.leveled else None
        ready = _remember(
            _Ready(jobs, failures, fleet, policy, causes, _fingerprint(jobs), laws, job_count,
                   table.compiled, failure_index, core_jobs, model, levels)
        )  # fmt: skip
    model = ready.model
    args = (ready.compiled, ready.core_jobs.specs, ready.failure_index, model.causes, model.fleet,
            model.policy)  # fmt: skip
    options = {
        "gpus_per_node": per_node,
        "replicas": n_replicas,
        "first_replica": first,
        "seed": seed_,
        "horizon": horizon_,
        "record_events": record_events,
        "check_invariants": check_invariants,
        "threads": threads_,
        "max_events": max_events_,
        "time_limit": ready.core_jobs.time_limits,
        "job_options": ready.options,
        "max_stalled_failures": max_stalled,
    }
    arguments = {
        "jobs": jobs,
        "failures": laws,
        "fleet": fleet,
        "policy": policy,
        "replicas": n_replicas,
        "seed": seed_,
        "horizon": horizon_,
        "record_events": record_events,
        "causes": causes,
        "gpus_per_node": per_node,
        "first_replica": first,
        "max_events": max_events,
        "check_invariants": check_invariants,
    }
    if max_stalled != DEFAULT_MAX_STALLED_FAILURES:
        arguments["max_stalled_failures"] = max_stalled
    origin = MappingProxyType({"arguments": MappingProxyType(arguments)})
    call = _Call(jobs, failures, fleet, policy, causes, ready, given, tuple(map(type, given)),
                 args, options, seed_, n_replicas, origin, ready.fingerprint,
                 ready.core_jobs.names)  # fmt: skip
    if _LAST_INPUT and _LAST_INPUT[0] is ready:  # a call that can be recognized
        _LAST_CALL[:] = [call]
    return call


#: Replicas of the first round of a precision-driven run (``target_se``).
FIRST_ROUND = 32


def _progress_flag(progress: Any) -> bool:
    from .sweep import progress_flag

    return progress_flag(progress)


def _in_chunks(
    run: Any, arguments: dict[str, Any], replicas: Any, first_replica: Any, desc: str
) -> Any:
    """``run`` (simulate or batch_simulate) over chunks of the replicas
    (about 20, none under 4 replicas per thread), ``first_replica`` offsets
    joined in replica order: the result of one call, with the replicas done
    shown on stderr on a terminal (:func:`acesim.sweep.progress_bar`)."""
    from .sweep import progress_bar

    cap, _, first, _ = _run_options(replicas, 0, first_replica, 1.0)
    threads = arguments.get("threads")
    per = 4 * (threads if isinstance(threads, int) and threads > 0 else os.cpu_count() or 1)
    chunk = max(math.ceil(cap / 20), per)
    bar = progress_bar(True, cap, desc=desc, unit="replica")
    parts: list[Any] = []
    try:
        for offset in range(0, cap, chunk):
            size = min(chunk, cap - offset)
            parts.append(run(**arguments, replicas=size, first_replica=first + offset))
            if bar is not None:
                bar.update(size)
    finally:
        if bar is not None:
            bar.close()
    return _join_rounds(parts)


def _until_precise(
    run: Any,
    arguments: dict[str, Any],
    replicas: Any,
    first_replica: Any,
    target_se: Any,
    progress: bool = False,
    desc: str = "simulate",
) -> Any:
    """``run`` (simulate or batch_simulate) in rounds of replicas until the
    pooled ETTR's standard error (every point's, for a batch) is at most
    ``target_se`` or ``replicas`` ran: FIRST_ROUND, then doubling the total.
    Rounds continue the replica ids, so the result is that of one run of as
    many replicas. ``progress``: the replicas done, out of the most it may
    run, on stderr on a terminal."""
    from .sweep import progress_bar

    target = finite("target_se", target_se)
    if target <= 0:
        raise ValueError(f"target_se must be > 0, got {target!r}")
    cap, _, first, _ = _run_options(replicas, 0, first_replica, 1.0)
    parts: list[Any] = []
    done = 0
    size = min(cap, FIRST_ROUND)
    bar = progress_bar(_progress_flag(progress), cap, desc=desc, unit="replica")
    try:
        while True:
            parts.append(run(**arguments, replicas=size, first_replica=first + done))
            done += size
            if bar is not None:
                bar.update(size)
            joined = _join_rounds(parts)
            se = _precision(joined)
            if done >= cap or (done >= 2 and bool(np.all(se <= target))):
                return joined
            size = min(cap - done, done)
    finally:
        if bar is not None:
            bar.close()


def _precision(result: Any) -> npt.NDArray[np.float64]:
    """The standard error that ``target_se`` bounds: the pooled ETTR's, of the
    whole result or of each point of a batch."""
    from .stats import _ratio

    if isinstance(result, BatchResult):
        from .stats import _ratio_se

        g = result.field("gpus").astype(np.float64)
        return _ratio_se(g * result.field("productive"), g * result.field("wall"))
    return np.array([_ratio(result, "productive", None).se])


def _join_rounds(parts: list[Any]) -> Any:
    """Rounds of one precision-driven run as one result."""
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], BatchResult):
        from .sweep import _concat

        # Rows are point-major: each point's replicas, round after round.
        points = parts[0].points
        per_point = [_concat([p.rows(k) for p in parts]) for k in range(points)]
        replicas = sum(p.replicas for p in parts)
        origin = parts[0]._described_origin()
        if "arguments" in origin:
            origin["arguments"]["dict"]["replicas"] = replicas
        return dataclasses.replace(
            parts[0],
            jobs=_concat(per_point),
            replicas=replicas,
            _origin={**origin, "described": True},
        )
    from .sweep import _join

    return _join(parts)


def _rebuild_result(cls: type[Any], state: dict[str, Any]) -> Any:
    return cls(**state)


@dataclass(frozen=True)
class BatchResult(_Provenance):
    """Results of :func:`batch_simulate`: ``jobs`` has one row per grid point
    x replica, ordered by point (field ``job``) then replica."""

    jobs: npt.NDArray[Any]
    points: int
    replicas: int
    seed: int
    _origin: Mapping[str, Any] | None = dataclass_field(default=None, repr=False, compare=False)

    def rows(self, point: int) -> npt.NDArray[Any]:
        """The rows of one grid point (``replicas`` rows)."""
        p = integer("point", point, maximum=self.points - 1)
        return self.jobs[p * self.replicas : (p + 1) * self.replicas]

    def field(self, name: str) -> npt.NDArray[Any]:
        """A field as a (points, replicas) array."""
        return np.asarray(self.jobs[name]).reshape(self.points, self.replicas)

    def pooled_ettr(self) -> npt.NDArray[np.float64]:
        """Per point: total productive / total wall over replicas (NaN,
        without a warning, for a point where nothing ran)."""
        wall = self.field("wall").sum(axis=1)
        productive = self.field("productive").sum(axis=1)
        out = np.full(wall.shape, math.nan)
        np.divide(productive, wall, out=out, where=wall > 0)
        return out


def batch_simulate(
    jobs: JobsArg,
    failures: Distribution | Sequence[Distribution | None] | None = None,
    *,
    replicas: int = 1,
    seed: int = 0,
    horizon: float = math.inf,
    causes: Any = None,
    threads: int | None = None,
    first_replica: int = 0,
    gpus_per_node: int = 8,
    max_events: int | None = None,
    device: str = "cpu",
    target_se: float | None = None,
    max_stalled_failures: int = DEFAULT_MAX_STALLED_FAILURES,
    progress: bool = False,
) -> BatchResult:
    """Batch Monte Carlo of the single-job model over a grid of jobs.

    Every job (with its failure law: ``failures`` may give one per job) is
    a grid point simulated *alone*, with replacements always available, for
    ``replicas`` replicas, without an event heap, spread over CPU threads.
    Each point uses the random streams of a job simulated alone, so the
    points share common random numbers, and the rows of point ``p`` are bit
    for bit those of ``simulate(jobs[p], failures[p], replicas=..., seed=...)``.
    This is what interval sweeps and :func:`acesim.optimal_interval` run on.
    ``device="cuda"`` runs one CUDA thread per (point, replica) with the same
    code and streams (see :func:`acesim.cuda_available`). ``target_se``:
    rounds of replicas as in :func:`simulate`, until every point's pooled
    ETTR has at most that standard error (every point runs the same
    replicas). ``max_stalled_failures`` and ``progress``: as in
    :func:`simulate` (the same result with or without progress).

    >>> import acesim as ace
    >>> grid = [ace.Job(512, work=ace.DAY, checkpoint_interval=tau * ace.MINUTE)
    ...         for tau in (15, 30, 60)]
    >>> res = ace.batch_simulate(grid, replicas=500, seed=2)
    >>> res.pooled_ettr().shape
    (3,)
    """
    if target_se is not None or _progress_flag(progress):
        arguments = dict(jobs=jobs, failures=failures, seed=seed, horizon=horizon, causes=causes,
                         threads=threads, gpus_per_node=gpus_per_node, max_events=max_events,
                         device=device, max_stalled_failures=max_stalled_failures)  # fmt: skip
        batch: BatchResult
        if target_se is not None:
            batch = _until_precise(
                batch_simulate, arguments, replicas, first_replica, target_se, progress, "batch"
            )
        else:
            batch = _in_chunks(batch_simulate, arguments, replicas, first_replica, "batch")
        return batch
    job_list = _job_input(jobs)
    cause_list = _cause_list(causes)
    if failures is None:
        failures = _default_failures()
    n_replicas, seed_, first, horizon_ = _run_options(replicas, seed, first_replica, horizon)
    _check_result_size(n_replicas, len(job_list), per_replica=False)
    threads_ = _threads(threads)
    per_node = integer("gpus_per_node", gpus_per_node, minimum=1, maximum=2**16)
    max_events_ = (
        0 if max_events is None else integer("max_events", max_events, minimum=1, maximum=2**63)
    )
    max_stalled = _max_stalled_failures(max_stalled_failures)
    if not isinstance(device, str) or device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    table = _DistributionTable()
    failure_index = _failure_laws(failures, job_list, table.index)
    core_jobs = _core_jobs(job_list, table.index)
    limits = core_jobs.time_limits
    if limits is not None and np.isfinite(limits).any():
        raise ValueError(
            "time_limit: batch_simulate runs the single-job model without a queue; "
            "use simulate for jobs with a time limit"
        )
    n_points = len(job_list)
    if n_points * n_replicas > 2**31:
        raise ValueError("jobs x replicas must not exceed 2**31 rows")
    model = core_model(table.index, None, None, cause_list)
    with _naming_stalled_jobs(core_jobs.names):
        rows = _core.simulate_batch(
            table.compiled,
            core_jobs.specs,
            failure_index,
            model.causes,
            gpus_per_node=per_node,
            replicas=n_replicas,
            first_replica=first,
            seed=seed_,
            horizon=horizon_,
            threads=threads_,
            max_events=max_events_,
            device=device,
            job_options=_checkpoint_levels(job_list, table.index) if core_jobs.leveled else None,
            max_stalled_failures=max_stalled,
        )
    arguments = {
        "jobs": jobs,
        "failures": failures,
        "replicas": n_replicas,
        "seed": seed_,
        "horizon": horizon_,
        "causes": causes,
        "first_replica": first,
        "gpus_per_node": per_node,
        "max_events": max_events,
    }
    if max_stalled != DEFAULT_MAX_STALLED_FAILURES:
        arguments["max_stalled_failures"] = max_stalled
    return BatchResult(
        jobs=rows,
        points=n_points,
        replicas=n_replicas,
        seed=seed_,
        _origin={"batch_arguments": arguments},
    )
