"""``History``: a fleet's recorded past as normalized tables, what happened
(``measured``) and the inter-failure samples (``intervals``)."""

from __future__ import annotations

import datetime as _dt
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._times import from_posix

if TYPE_CHECKING:
    from ..fleet import Cause
    from ._analysis import FittedModel

__all__ = [
    "BUCKET_SOURCES",
    "CHECKPOINT_DTYPE",
    "FAILURE_DTYPE",
    "GOODPUT_NAMES",
    "INTERVAL_KINDS",
    "JOB_DTYPE",
    "RUN_DTYPE",
    "RUN_NODE_DTYPE",
    "SPELL_DTYPE",
    "History",
    "Intervals",
    "Measured",
    "RunState",
]


class RunState(enum.IntEnum):
    """How a run (one start of a job, until it lets its nodes go) ended: the
    ``state`` column of ``History.runs``. The names are Slurm's job states."""

    #: finished its work
    COMPLETED = 0
    #: a failure that left the nodes in service (Slurm: non-zero exit)
    FAILED = 1
    #: a failure that took one of its nodes out of service
    NODE_FAIL = 2
    #: stopped to give its nodes to another job
    PREEMPTED = 3
    #: stopped at its time limit
    TIMEOUT = 4
    #: cancelled by a user or an administrator
    CANCELLED = 5
    #: put back in the queue without a failure (e.g. planned maintenance)
    REQUEUED = 6
    #: still holding its nodes when the record ends (open)
    RUNNING = 7
    #: killed for exceeding its memory
    OUT_OF_MEMORY = 8
    #: could not be launched on its nodes
    BOOT_FAIL = 9
    #: stopped at its deadline
    DEADLINE = 10


#: The run end states read as failures unless a reader is told otherwise.
DEFAULT_FAILURE_STATES = ("FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL")

#: One row per job (``job`` indexes ``History.job_names``); ``submit`` NaN
#: when unknown, ``gpus`` -1 when unknown; ``waiting``: the record ends with
#: the job in the queue (never started, or requeued after its last run).
JOB_DTYPE = np.dtype([("job", "<i4"), ("submit", "<f8"), ("gpus", "<i4"), ("waiting", "?")])

#: One row per run, ordered by job then start. ``attempt``: 0 for a job's
#: first run; ``end``: when it let its nodes go (the end of the record for an
#: open run); ``fault``: the time of the failure that ended it (NaN when it
#: did not fail or the source does not say); ``setup``: seconds from its
#: start until it computed (init + checkpoint load; NaN unknown); ``nodes``:
#: node count (-1 unknown), the names are in ``run_nodes``; ``progress``:
#: the work committed when it stopped (for an interrupted run, what the job
#: rolls back to; NaN unknown).
RUN_DTYPE = np.dtype(
    [
        ("run", "<i4"),
        ("job", "<i4"),
        ("attempt", "<i4"),
        ("submit", "<f8"),
        ("start", "<f8"),
        ("end", "<f8"),
        ("state", "u1"),
        ("gpus", "<i4"),
        ("nodes", "<i4"),
        ("fault", "<f8"),
        ("setup", "<f8"),
        ("progress", "<f8"),
    ]
)

#: One row per node of a run, in the order the source lists them.
RUN_NODE_DTYPE = np.dtype([("run", "<i4"), ("node", "<i4")])

#: One row per node hit by a failure (rows of one failure share ``event``);
#: ``job`` and ``run`` -1 for an idle node, ``node`` -1 when the source does
#: not say which node, ``cause`` -1 unknown; ``system`` indexes
#: ``History.system_names`` (one system unless a source has several);
#: ``origin`` False for a node (and its job) hit by a failure that arose
#: elsewhere (a correlated failure of several nodes; True for every row when
#: the source does not say).
FAILURE_DTYPE = np.dtype(
    [
        ("event", "<i4"),
        ("time", "<f8"),
        ("job", "<i4"),
        ("run", "<i4"),
        ("node", "<i4"),
        ("cause", "<i4"),
        ("system", "<i4"),
        ("origin", "?"),
    ]
)

#: One row per stretch a node spent out of service: ``down`` and ``up``
#: (inf when still out at the end); ``failure``: a failure took it out
#: (else maintenance or a drain); ``cause`` -1 unknown.
SPELL_DTYPE = np.dtype(
    [("node", "<i4"), ("down", "<f8"), ("up", "<f8"), ("cause", "<i4"), ("failure", "?")]
)

#: One row per durable checkpoint: ``time`` when it became durable;
#: ``duration`` the seconds the job was blocked writing it and ``progress``
#: the work it holds (seconds of computation), NaN when unknown; ``taken``
#: when the state it holds was taken (earlier than ``time`` for an
#: asynchronous checkpoint: a snapshot persisted in the background; NaN:
#: at ``time``).
CHECKPOINT_DTYPE = np.dtype(
    [
        ("job", "<i4"),
        ("run", "<i4"),
        ("time", "<f8"),
        ("duration", "<f8"),
        ("progress", "<f8"),
        ("taken", "<f8"),
    ]
)

#: The groupings :meth:`History.intervals` knows.
INTERVAL_KINDS = ("job", "node", "cause", "system")

_FAMILIES = ("exponential", "weibull", "lognormal", "gamma")

#: Each measured bucket of :meth:`History.measured` and the
#: ml-goodput-measurement name it corresponds to (its ``GoodputType`` /
#: ``BadputType`` enums; None: outside its elapsed time). Its
#: WASTED_PROGRESS_FROM_DISRUPTION covers the work lost since the last
#: checkpoint and the disruption until the restart, so acesim's ``wasted``
#: and ``detection`` both map to it (``lost`` is their sum, and more: see
#: :class:`Measured`); its start-up types (TPU_INITIALIZATION,
#: TRAINING_PREP, PROGRAM_STARTUP) and UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME
#: together are acesim's ``overhead`` (init + load), which acesim does not
#: split. ``queue_wait`` is before the job's first start: scheduling, not
#: runtime goodput.
GOODPUT_NAMES: dict[str, str | None] = {
    "productive": "GoodputType.TOTAL",
    "overhead": (
        "BadputType.TPU_INITIALIZATION + TRAINING_PREP + PROGRAM_STARTUP"
        " + UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME"
    ),
    "ckpt_stall": "BadputType.UNPRODUCTIVE_CHECKPOINT_SAVE_TIME",
    "wasted": "BadputType.WASTED_PROGRESS_FROM_DISRUPTION",
    "detection": "BadputType.WASTED_PROGRESS_FROM_DISRUPTION",
    "lost": "BadputType.WASTED_PROGRESS_FROM_DISRUPTION",
    "recovery_wait": "BadputType.INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION",
    "queue_wait": None,
}

#: What each bucket of :meth:`History.measured` needs from the source.
BUCKET_SOURCES: dict[str, str] = {
    "held": "runs (start and end): every source with runs",
    "queue_wait": "the job's submit time (sacct Submit, event log job_submit)",
    "recovery_wait": "runs: the gaps between a job's runs",
    "kept": "checkpoint times (event log checkpoint events, or read_sacct(checkpoints=...))",
    "lost": "checkpoint times, as kept",
    "detection": "fault times (event log job_failure); sacct records only the run's end",
    "overhead": "each start's setup time (event log job_start 'setup')",
    "ckpt_stall": "each checkpoint's blocking duration (event log checkpoint 'duration')",
    "wasted": "checkpoint times and durations, fault times and setup times",
    "productive": "everything above: held less wasted, detection, overhead and ckpt_stall",
}

_FAILURE_STATE_CODES = frozenset(int(RunState[s]) for s in DEFAULT_FAILURE_STATES)

MEASURED_DTYPE = np.dtype(
    [
        ("job", "<i4"),
        ("gpus", "<i4"),
        ("submit", "<f8"),
        ("start", "<f8"),
        ("end", "<f8"),
        ("wall", "<f8"),
        ("held", "<f8"),
        ("queue_wait", "<f8"),
        ("recovery_wait", "<f8"),
        ("kept", "<f8"),
        ("lost", "<f8"),
        ("productive", "<f8"),
        ("wasted", "<f8"),
        ("ckpt_stall", "<f8"),
        ("overhead", "<f8"),
        ("detection", "<f8"),
        ("runs", "<i4"),
        ("restarts", "<i4"),
        ("failures", "<i4"),
        ("preemptions", "<i4"),
        ("timeouts", "<i4"),
        ("requeues", "<i4"),
        ("cancellations", "<i4"),
        ("checkpoints", "<i4"),
        ("completed", "?"),
        ("open", "?"),
    ]
)

_TIME_BUCKETS = (
    "wall",
    "held",
    "queue_wait",
    "recovery_wait",
    "kept",
    "lost",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
)
_COUNTS = (
    "runs",
    "restarts",
    "failures",
    "preemptions",
    "timeouts",
    "requeues",
    "cancellations",
    "checkpoints",
)


def _empty(dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    return np.zeros(0, dtype)


def _table(name: str, value: Any, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    if value is None:
        return _empty(dtype)
    arr = np.asarray(value)
    if arr.dtype.names is None or not set(dtype.names or ()) <= set(arr.dtype.names):
        raise ValueError(f"{name} must be a structured array with the fields {dtype.names}")
    out = np.zeros(arr.shape[0], dtype)
    for f in dtype.names or ():
        out[f] = arr[f]
    return out


@dataclass(frozen=True)
class Intervals:
    """Inter-failure samples with right-censoring, from :meth:`History.intervals`.

    ``samples[i]`` is a duration in seconds; ``censored[i]`` is True when it
    ended without a failure (observation stopped: a job's last run
    completed, a node still up at the end of the record), so it is a lower
    bound, to enter a fit through the survival function
    (:mod:`acesim.fit`). ``group[i]`` indexes ``labels`` (the job, node,
    cause or system it belongs to); ``start`` / ``end`` are the wall-clock
    times its exposure began and ended (NaN when the source has no
    timeline); ``event`` the failure event that ended it (-1: censored);
    ``gpus`` the job's size for job samples (-1 otherwise or unknown);
    ``truncated`` marks samples whose exposure began when the record began
    (the unit's age then is unknown: a left-truncated sample).

    ``partial`` says the source cannot see every failure of this kind, with
    ``note`` saying why (node samples from job accounting miss the failures
    of idle nodes); ``unattributed`` counts failures left out because the
    source does not say which unit they hit. ``clock`` says what the
    samples measure: ``"held"`` (time a job held its nodes), ``"in_service"``
    (time a node was in service), ``"wall"`` (wall-clock gaps).
    """

    by: str
    clock: str
    samples: npt.NDArray[np.float64]
    censored: npt.NDArray[np.bool_]
    group: npt.NDArray[np.int32]
    labels: tuple[str, ...]
    start: npt.NDArray[np.float64]
    end: npt.NDArray[np.float64]
    event: npt.NDArray[np.int32]
    gpus: npt.NDArray[np.int32]
    truncated: npt.NDArray[np.bool_]
    partial: bool = False
    note: str = ""
    unattributed: int = 0

    def __len__(self) -> int:
        return int(self.samples.shape[0])

    @property
    def failures(self) -> int:
        """Samples that ended in a failure (not censored)."""
        return int(np.count_nonzero(~self.censored))

    @property
    def exposure(self) -> float:
        """Total seconds of exposure (failed and censored samples)."""
        return float(np.sum(self.samples))

    def select(self, mask: npt.ArrayLike) -> Intervals:
        """The samples where ``mask`` is True (same labels and notes):
        ``mask`` holds one boolean per sample."""
        try:
            m = np.asarray(mask)
        except Exception as exc:  # ragged or otherwise unconvertible
            raise TypeError("mask must be an array of booleans, one per sample") from exc
        n = len(self)
        if m.shape != (n,):
            raise ValueError(f"mask must hold one boolean per sample ({n}), got shape {m.shape}")
        if m.dtype != np.bool_:
            if m.size:
                raise TypeError(f"mask must be an array of booleans, got dtype {m.dtype}")
            m = m.astype(bool)
        return Intervals(
            by=self.by,
            clock=self.clock,
            samples=self.samples[m],
            censored=self.censored[m],
            group=self.group[m],
            labels=self.labels,
            start=self.start[m],
            end=self.end[m],
            event=self.event[m],
            gpus=self.gpus[m],
            truncated=self.truncated[m],
            partial=self.partial,
            note=self.note,
            unattributed=self.unattributed,
        )

    def of(self, label: str) -> Intervals:
        """The samples of one group, by its label."""
        if label not in self.labels:
            raise KeyError(f"no group {label!r} in these intervals")
        return self.select(self.group == self.labels.index(label))

    def groups(self) -> dict[str, Intervals]:
        """The samples of each group that has some, by label."""
        present = np.unique(self.group)
        return {self.labels[int(g)]: self.select(self.group == g) for g in present}

    def __repr__(self) -> str:
        extra = f", partial: {self.note}" if self.partial else ""
        return (
            f"Intervals(by={self.by!r}, clock={self.clock!r}, {len(self)} samples, "
            f"{self.failures} failures, {len(self) - self.failures} censored{extra})"
        )


def _make_intervals(
    by: str,
    clock: str,
    rows: list[tuple[float, bool, int, float, float, int, int, bool]],
    labels: Sequence[str],
    *,
    partial: bool = False,
    note: str = "",
    unattributed: int = 0,
) -> Intervals:
    """Intervals from (sample, censored, group, start, end, event, gpus, truncated) rows."""
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * 8
    return Intervals(
        by=by,
        clock=clock,
        samples=np.asarray(cols[0], np.float64).reshape(n),
        censored=np.asarray(cols[1], np.bool_).reshape(n),
        group=np.asarray(cols[2], np.int32).reshape(n),
        labels=tuple(labels),
        start=np.asarray(cols[3], np.float64).reshape(n),
        end=np.asarray(cols[4], np.float64).reshape(n),
        event=np.asarray(cols[5], np.int32).reshape(n),
        gpus=np.asarray(cols[6], np.int32).reshape(n),
        truncated=np.asarray(cols[7], np.bool_).reshape(n),
        partial=partial,
        note=note,
        unattributed=unattributed,
    )


@dataclass(frozen=True)
class Measured:
    """What happened, from :meth:`History.measured`.

    ``jobs``: one row per job (fields ``job gpus submit start end wall held
    queue_wait recovery_wait kept lost productive wasted ckpt_stall overhead
    detection runs restarts failures preemptions timeouts requeues
    cancellations checkpoints completed open``); times in seconds, NaN where
    the source cannot tell. ``held`` is the time the job held nodes (the sum
    of its runs); ``wall`` runs from its submission (its first start when the
    submission is unknown) to the end of its last run, or to the end of the
    record for a job still waiting then (its ``recovery_wait`` or
    ``queue_wait`` runs to the end too; ``end`` is then the record's end); ``wall = queue_wait +
    held + recovery_wait`` and, where they are known, ``held = productive +
    wasted + ckpt_stall + overhead + detection`` and ``held = kept + lost``.

    ``kept`` is the held time up to the state of each interrupted run's
    newest durable checkpoint (when it was taken; all of a completed or
    still-running run); ``lost`` the rest:
    everything an interrupted run did after its last checkpoint (the
    recomputed work, the detection latency and, for a run that failed before
    its first checkpoint, its setup). ``wasted`` is only the computation
    after the last checkpoint (or after the setup); the writes of checkpoints
    that did not survive are ``ckpt_stall``. With the event log's stop
    ``progress``, a checkpoint holding more work than the run rolls back to
    did not survive (a local copy lost with its node), and a run that rolls
    back past the state it started from loses work an earlier run kept: it
    moves from kept to lost and from productive to wasted.

    ``totals``: GPU-hours of each bucket (``<bucket>_gpu_hours``, over jobs
    of known size), the counts summed, ``jobs``, and ``gpu_hours_by_state``
    (GPU-hours held by runs, by how the run ended). ``available``: the
    buckets this source gives (see :data:`BUCKET_SOURCES`); the others are
    NaN. :meth:`goodput` maps them to ml-goodput-measurement's names.
    """

    jobs: npt.NDArray[Any]
    totals: dict[str, Any]
    available: tuple[str, ...]
    source: str

    def goodput(self) -> dict[str, float]:
        """GPU-hours by ml-goodput-measurement name (:data:`GOODPUT_NAMES`),
        for the buckets this source gives. Held time the source cannot split
        is under ``"unsplit"``; ``lost`` stands in for ``wasted`` and
        ``detection`` when only checkpoints are known."""
        t = self.totals
        out: dict[str, float] = {}

        def add(name: str | None, bucket: str) -> None:
            if name is None:
                return
            out[name] = out.get(name, 0.0) + float(t[f"{bucket}_gpu_hours"])

        have = set(self.available)
        split = {"productive", "wasted", "ckpt_stall", "overhead", "detection"}
        if split <= have:
            for b in sorted(split):
                add(GOODPUT_NAMES[b], b)
        elif {"kept", "lost"} <= have:
            add(GOODPUT_NAMES["lost"], "lost")
            out["unsplit"] = float(t["kept_gpu_hours"])
        else:
            out["unsplit"] = float(t["held_gpu_hours"])
        if "recovery_wait" in have:
            add(GOODPUT_NAMES["recovery_wait"], "recovery_wait")
        return out


class History:
    """A fleet's recorded past as normalized tables (numpy structured arrays).

    Readers build it: :func:`acesim.history.read_sacct`,
    :func:`acesim.history.read_events` and the readers of the public
    histories in ``../shared/data``. Its tables (empty where the source has
    none; dtypes in this module):

    - ``jobs`` (:data:`JOB_DTYPE`) and ``job_names``;
    - ``runs`` (:data:`RUN_DTYPE`): one row per run (a start until the job
      lets its nodes go), with its :class:`RunState`, and ``run_nodes``
      (:data:`RUN_NODE_DTYPE`) naming its nodes (``node_names``);
    - ``failures`` (:data:`FAILURE_DTYPE`): one row per node hit by a
      failure, with the job it interrupted and its cause (``cause_names``);
    - ``node_spells`` (:data:`SPELL_DTYPE`): when nodes were out of service;
    - ``checkpoints`` (:data:`CHECKPOINT_DTYPE`);
    - ``span``: the observed window ``(start, end)`` in seconds.

    Times are seconds from ``origin`` (a naive datetime; None when the source
    gave relative times). ``knows`` says what the source recorded beyond
    runs and failures: ``"fault_times"`` (when each failure struck, not only
    when its run stopped), ``"setup"`` (each start's init + load),
    ``"checkpoints"`` and ``"checkpoint_durations"``, ``"node_spells"``
    (when nodes left and returned to service), ``"node_census"`` (every
    node of the fleet, not only those that ran jobs), ``"failed_nodes"``
    (which node a NODE_FAIL run lost). ``node_systems`` and
    ``system_spans`` place nodes in systems with their own windows (LANL).
    Sources that give samples rather than a timeline (e.g. Titan's GPU
    lifetimes) carry them as preset :class:`Intervals`.

    Methods built on these tables: :meth:`measured`, :meth:`intervals`,
    :meth:`causes`. Fitting (``fit``), ``burstiness``, ``lemons``,
    ``to_model`` and ``backtest`` read the same tables: ``fit`` and
    ``burstiness`` take :meth:`intervals` (censored samples through
    :mod:`acesim.fit`, ``start`` for the order of gaps), ``lemons`` the
    ``by="node"`` intervals (failures and exposure per node), ``to_model``
    adds :meth:`causes` and the fleet size (``node_names``,
    ``"node_census"``), and ``backtest`` replays ``runs`` / ``run_nodes``
    (start, stop and nodes of every run) and compares with
    :meth:`measured`.
    """

    def __init__(
        self,
        *,
        source: str,
        format: str,
        job_names: Sequence[str] = (),
        node_names: Sequence[str] = (),
        cause_names: Sequence[str] = (),
        system_names: Sequence[str] = ("fleet",),
        jobs: Any = None,
        runs: Any = None,
        run_nodes: Any = None,
        failures: Any = None,
        node_spells: Any = None,
        checkpoints: Any = None,
        span: tuple[float, float] = (math.nan, math.nan),
        origin: _dt.datetime | None = None,
        knows: Sequence[str] = (),
        preset: Mapping[str, Intervals] | None = None,
        preset_causes: Sequence[Cause] | None = None,
        node_systems: Sequence[int] | None = None,
        system_spans: Sequence[tuple[float, float]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.source = str(source)
        self.format = str(format)
        self.job_names = tuple(job_names)
        self.node_names = tuple(node_names)
        self.cause_names = tuple(cause_names)
        self.system_names = tuple(system_names)
        self.jobs = _table("jobs", jobs, JOB_DTYPE)
        self.runs = _table("runs", runs, RUN_DTYPE)
        self.run_nodes = _table("run_nodes", run_nodes, RUN_NODE_DTYPE)
        self.failures = _table("failures", failures, FAILURE_DTYPE)
        self.node_spells = _table("node_spells", node_spells, SPELL_DTYPE)
        self.checkpoints = _table("checkpoints", checkpoints, CHECKPOINT_DTYPE)
        self.span = (float(span[0]), float(span[1]))
        self.origin = origin
        self.knows = frozenset(knows)
        self._preset = dict(preset or {})
        self._preset_causes = None if preset_causes is None else tuple(preset_causes)
        self.meta: dict[str, Any] = dict(meta or {})
        #: per node, the system it belongs to (index into system_names)
        self.node_systems = np.zeros(len(self.node_names), np.int32)
        if node_systems is not None:
            self.node_systems = np.asarray(node_systems, np.int32).reshape(len(self.node_names))
        #: per system, its observed window (default: ``span`` for each)
        self.system_spans: tuple[tuple[float, float], ...] = tuple(
            (float(a), float(b)) for a, b in (system_spans or [self.span] * len(self.system_names))
        )
        if len(self.system_spans) != len(self.system_names):
            raise ValueError("system_spans needs one (start, end) per system")

    # ------------------------------------------------------------------
    # small views

    def __repr__(self) -> str:
        parts = [f"{self.format} from {self.source!r}"]
        if self.runs.size:
            parts.append(f"{len(self.job_names)} jobs, {self.runs.size} runs")
        if self.node_names:
            parts.append(f"{len(self.node_names)} nodes")
        events = np.unique(self.failures["event"]).size
        if events:
            parts.append(f"{events} failures")
        if self._preset:
            parts.append("samples: " + ", ".join(sorted(self._preset)))
        return f"History({'; '.join(parts)})"

    def time(self, seconds: float) -> _dt.datetime | float:
        """The datetime of a time in seconds (the seconds when there is no origin)."""
        if self.origin is None:
            return seconds
        return self.origin + _dt.timedelta(seconds=seconds)

    def nodes_of(self, run: int) -> list[str]:
        """The node names of run number ``run``."""
        rows = self.run_nodes[self.run_nodes["run"] == run]
        return [self.node_names[int(n)] for n in rows["node"]]

    @property
    def available_intervals(self) -> tuple[str, ...]:
        """The ``by`` values :meth:`intervals` can give for this history."""
        out: list[str] = []
        for by in INTERVAL_KINDS:
            if by in self._preset or self._can(by):
                out.append(by)
        return tuple(out)

    def _can(self, by: str) -> bool:
        has_failures = self.failures.size > 0
        if by == "job":
            return self.runs.size > 0
        if by == "node":
            return bool(self.node_names) and (
                self.runs.size > 0 or has_failures or self.node_spells.size > 0
            )
        if by == "system":
            return has_failures and all(math.isfinite(a) for a, _ in self.system_spans)
        if by == "cause":
            return any(b in self._preset or self._can(b) for b in ("job", "node", "system"))
        return False

    def _failure_times(self) -> dict[int, float]:
        """Event id -> time."""
        out: dict[int, float] = {}
        for ev, t in zip(
            self.failures["event"].tolist(), self.failures["time"].tolist(), strict=True
        ):
            out.setdefault(int(ev), float(t))
        return out

    def _event_cause(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for ev, c in zip(
            self.failures["event"].tolist(), self.failures["cause"].tolist(), strict=True
        ):
            if int(ev) not in out or out[int(ev)] < 0:
                out[int(ev)] = int(c)
        return out

    def _run_failure_event(self, own: bool = False) -> dict[int, int]:
        """Run -> the first failure event that hit it (``own``: that arose on
        one of its nodes, not elsewhere)."""
        out: dict[int, int] = {}
        f = self.failures
        order = np.argsort(f["time"], kind="stable")
        for i in order.tolist():
            r = int(f["run"][i])
            if r >= 0 and r not in out and (not own or bool(f["origin"][i])):
                out[r] = int(f["event"][i])
        return out

    # ------------------------------------------------------------------
    # causes

    def causes(self) -> tuple[Cause, ...]:
        """Each recorded cause as an :class:`acesim.Cause` whose share is its
        number of failures (failures of no recorded cause are left out;
        detection latency 0 and node repair unless the source says more)."""
        from ..fleet import Cause

        if self._preset_causes is not None:
            return self._preset_causes
        counts = self.cause_counts()
        return tuple(Cause(name, count) for name, count in counts.items() if name != "unknown")

    def cause_counts(self) -> dict[str, int]:
        """Failures (events) per cause name (``"unknown"`` for none)."""
        if self._preset_causes is not None:
            return {c.name: round(c.share) for c in self._preset_causes}
        counts: dict[str, int] = {}
        for _, c in sorted(self._event_cause().items()):
            name = self.cause_names[c] if c >= 0 else "unknown"
            counts[name] = counts.get(name, 0) + 1
        return counts

    # ------------------------------------------------------------------
    # intervals

    def intervals(self, by: str = "job") -> Intervals:
        """Inter-failure samples with right-censoring flags.

        ``by="job"``: the time each job held its nodes between failures,
        summed over its runs since the last failure (a preemption, a time
        limit or a requeue does not renew it; the clock stops at a fault and
        starts again at the next start, as simulate's job-level law does),
        censored when the job's last run ended without failing (completed,
        cancelled, still running at the end). From sacct the fault time is
        unknown, so a sample runs to the run's end (detection latency
        included).

        ``by="node"``: with node spells (an event log's node_down / node_up),
        the time each node was in service from its return to service (or
        the start of the record, ``truncated``; or a failure that left it in
        service) to its next failure, censored at a drain and at the end.
        From job accounting (sacct) only failures that hit a job are seen
        and repair times are unknown: the samples are wall-clock gaps
        between a node's failures, ``partial`` is True and ``note`` says so;
        a failure whose node is not recorded (NODE_FAIL without FailedNode
        on a multi-node run) is counted in ``unattributed``.

        ``by="cause"``: cause-specific samples for competing risks: for each
        cause (``"unknown"`` for failures of none), the job samples (node
        samples without runs, system ones without nodes) with the failures
        of every other cause counted as censoring.

        ``by="system"``: wall-clock gaps between successive failures of the
        whole fleet (per system when a source has several), the first from
        the start of the record (``truncated``), the last censored at its
        end.
        """
        if by not in INTERVAL_KINDS:
            raise ValueError(f"by must be one of {INTERVAL_KINDS}, got {by!r}")
        if by in self._preset:
            return self._preset[by]
        if not self._can(by):
            have = ", ".join(self.available_intervals) or "none"
            raise ValueError(
                f"intervals(by={by!r}): this {self.format} history does not have what it "
                f"needs (available: {have})"
            )
        if by == "job":
            return self._job_intervals()
        if by == "node":
            return self._node_intervals()
        if by == "system":
            return self._system_intervals()
        return self._cause_intervals()

    def _job_intervals(self) -> Intervals:
        runs = self.runs
        fail_event = self._run_failure_event()
        own_event = self._run_failure_event(own=True)
        ev_time = self._failure_times()
        span0 = self.span[0]
        rows: list[tuple[float, bool, int, float, float, int, int, bool]] = []
        order = np.lexsort((runs["start"], runs["job"]))
        by_job: dict[int, list[int]] = {}
        for i in order.tolist():
            by_job.setdefault(int(runs["job"][i]), []).append(i)
        for job, idx in by_job.items():
            acc = 0.0
            first: float | None = None
            gpus = -1
            truncated = False
            for i in idx:
                r = runs[i]
                start, end = float(r["start"]), float(r["end"])
                run_id = int(r["run"])
                if first is None:
                    first = start
                    gpus = int(r["gpus"])
                    truncated = start < span0
                ev = fail_event.get(run_id, -1)
                if ev >= 0:
                    fault = float(r["fault"])
                    stop = fault if math.isfinite(fault) else min(end, ev_time.get(ev, end))
                    stop = min(max(stop, start), end)
                    acc += stop - start
                    own = own_event.get(run_id, -1)
                    if own >= 0:
                        rows.append((acc, False, job, first, stop, own, gpus, truncated))
                        acc, first = 0.0, None
                    # a failure that arose elsewhere interrupts the run but not
                    # the job's own failure process: its clock goes on
                else:
                    acc += end - start
            if first is not None and acc > 0.0:
                last_end = float(runs[idx[-1]]["end"])
                rows.append((acc, True, job, first, last_end, -1, gpus, truncated))
        return _make_intervals("job", "held", rows, self.job_names)

    def _node_intervals(self) -> Intervals:
        f = self.failures
        unattributed = int(np.unique(f["event"][f["node"] < 0]).size)
        if "node_spells" in self.knows:
            return self._node_intervals_spells(unattributed)
        rows: list[tuple[float, bool, int, float, float, int, int, bool]] = []
        known = f[(f["node"] >= 0) & f["origin"]]
        for node in range(len(self.node_names)):
            span0, span1 = self.system_spans[int(self.node_systems[node])]
            mine = known[known["node"] == node]
            order = np.argsort(mine["time"], kind="stable")
            prev = span0
            truncated = True
            seen: set[int] = set()
            for i in order.tolist():
                ev = int(mine["event"][i])
                if ev in seen:
                    continue
                seen.add(ev)
                t = float(mine["time"][i])
                if not (truncated and t - prev <= 0.0):
                    rows.append((t - prev, False, node, prev, t, ev, -1, truncated))
                prev, truncated = t, False
            if span1 - prev > 0.0:
                rows.append((span1 - prev, True, node, prev, span1, -1, -1, truncated))
        note = (
            "from job accounting: failures of idle nodes are not recorded and repair "
            "times are unknown, so these are wall-clock gaps between the failures that hit "
            "jobs (the first from the start of the record)"
        )
        if "node_census" not in self.knows:
            note += "; nodes that never ran a job are missing"
        return _make_intervals(
            "node",
            "wall",
            rows,
            self.node_names,
            partial=True,
            note=note,
            unattributed=unattributed,
        )

    def _node_intervals_spells(self, unattributed: int) -> Intervals:
        f = self.failures
        s = self.node_spells
        rows: list[tuple[float, bool, int, float, float, int, int, bool]] = []
        skipped = 0
        for node in range(len(self.node_names)):
            span0, span1 = self.system_spans[int(self.node_systems[node])]
            # (time, order, kind, payload): failures before a spell starting at the same time
            timeline: list[tuple[float, int, str, int]] = []
            mine = f[(f["node"] == node) & f["origin"]]
            seen: set[int] = set()
            for ev, t in zip(mine["event"].tolist(), mine["time"].tolist(), strict=True):
                if int(ev) not in seen:
                    seen.add(int(ev))
                    timeline.append((float(t), 0, "fail", int(ev)))
            down_at_start = False
            for d, u in zip(
                s["down"][s["node"] == node].tolist(),
                s["up"][s["node"] == node].tolist(),
                strict=True,
            ):
                if d <= span0:
                    down_at_start = True
                else:
                    timeline.append((float(d), 1, "down", 0))
                if math.isfinite(u):
                    timeline.append((float(u), 2, "up", 0))
            timeline.sort()
            in_service = not down_at_start
            since = span0
            truncated = True
            for t, _, kind, ev in timeline:
                if kind == "fail":
                    if not in_service:
                        skipped += 1
                        continue
                    if not (truncated and t - since <= 0.0):
                        rows.append((t - since, False, node, since, t, ev, -1, truncated))
                    since, truncated = t, False
                elif kind == "down":
                    if in_service and t - since > 0.0:
                        # a drain: a failure at this very time came first and reset `since`
                        rows.append((t - since, True, node, since, t, -1, -1, truncated))
                    in_service = False
                else:
                    if not in_service:
                        in_service, since, truncated = True, t, False
            if in_service and span1 - since > 0.0:
                rows.append((span1 - since, True, node, since, span1, -1, -1, truncated))
        note = ""
        if skipped:
            note = f"{skipped} failures recorded while their node was out of service left out"
        return _make_intervals(
            "node",
            "in_service",
            rows,
            self.node_names,
            partial=False,
            note=note,
            unattributed=unattributed,
        )

    def _system_intervals(self) -> Intervals:
        f = self.failures
        rows: list[tuple[float, bool, int, float, float, int, int, bool]] = []
        for system in range(len(self.system_names)):
            span0, span1 = self.system_spans[system]
            mine = f[f["system"] == system]
            if mine.size == 0:
                continue
            events: dict[int, float] = {}
            for ev, t in zip(mine["event"].tolist(), mine["time"].tolist(), strict=True):
                events.setdefault(int(ev), float(t))
            ordered = sorted(events.items(), key=lambda item: (item[1], item[0]))
            prev, truncated = span0, True
            for ev, t in ordered:
                if not (truncated and t - prev <= 0.0):
                    rows.append((t - prev, False, system, prev, t, ev, -1, truncated))
                prev, truncated = t, False
            if span1 - prev > 0.0:
                rows.append((span1 - prev, True, system, prev, span1, -1, -1, truncated))
        return _make_intervals("system", "wall", rows, self.system_names)

    def _cause_intervals(self) -> Intervals:
        base_by = next(b for b in ("job", "node", "system") if b in self._preset or self._can(b))
        base = self.intervals(base_by)
        ev_cause = self._event_cause()
        labels = list(self.cause_names)
        sample_cause = np.array(
            [
                ev_cause.get(int(e), -1) if not c else -2
                for e, c in zip(base.event.tolist(), base.censored.tolist(), strict=True)
            ],
            np.int64,
        )
        present = sorted({int(c) for c in sample_cause.tolist() if c >= 0})
        groups: list[tuple[int, str]] = [(c, labels[c]) for c in present]
        if np.any(sample_cause == -1):
            groups.append((-1, "unknown"))
        n = len(base)
        out_labels = [name for _, name in groups]
        parts = []
        for g, (code, _) in enumerate(groups):
            parts.append(
                Intervals(
                    by="cause",
                    clock=base.clock,
                    samples=base.samples,
                    censored=sample_cause != code,
                    group=np.full(n, g, np.int32),
                    labels=tuple(out_labels),
                    start=base.start,
                    end=base.end,
                    event=np.where(sample_cause == code, base.event, -1).astype(np.int32),
                    gpus=base.gpus,
                    truncated=base.truncated,
                )
            )
        if not parts:
            return _make_intervals("cause", base.clock, [], [])
        return Intervals(
            by="cause",
            clock=base.clock,
            samples=np.concatenate([p.samples for p in parts]),
            censored=np.concatenate([p.censored for p in parts]),
            group=np.concatenate([p.group for p in parts]),
            labels=tuple(out_labels),
            start=np.concatenate([p.start for p in parts]),
            end=np.concatenate([p.end for p in parts]),
            event=np.concatenate([p.event for p in parts]),
            gpus=np.concatenate([p.gpus for p in parts]),
            truncated=np.concatenate([p.truncated for p in parts]),
            partial=base.partial,
            note=(
                f"cause-specific, on the {base_by} samples"
                + (f"; {base.note}" if base.note else "")
            ),
            unattributed=base.unattributed,
        )

    # ------------------------------------------------------------------
    # measured

    def measured(self) -> Measured:
        """What actually happened, per job and rolled up: a :class:`Measured`.

        From sacct: each job's runs, restarts, failures, preemptions,
        timeouts, its queue wait (Submit to first Start), recovery waits
        (between runs), the time it held nodes and GPU-hours by end state;
        with checkpoint times (``read_sacct(checkpoints=...)``) also the held
        time kept vs lost since the last checkpoint. From an event log:
        the same, plus detection (fault to stop) when job_failure events
        give the fault, overhead when job_start gives ``setup``, checkpoint
        stalls when checkpoint events give ``duration``, and with all three
        the full split into productive, wasted, ckpt_stall, overhead and
        detection (acesim's job buckets). The rest is NaN:
        :data:`BUCKET_SOURCES` says what each bucket needs.

        A log cannot see two things simulate models: a slow (gray) failure's
        degraded progress between the fault and the stop is all
        ``detection`` here (simulate counts the slowed work as progress,
        then waste), and an elastic job's narrow running has no bucket (its
        runs on fewer nodes are held time).
        """
        if self.runs.size == 0 and self.jobs.size == 0:
            raise ValueError(f"measured(): this {self.format} history has no jobs")
        runs = self.runs
        fail_event = self._run_failure_event()
        has_ckpt = self.checkpoints.size > 0 or "checkpoints" in self.knows
        know_fault = "fault_times" in self.knows
        know_setup = "setup" in self.knows
        know_dur = "checkpoint_durations" in self.knows
        span1 = self.span[1]
        # per run: (durable time, blocking seconds, when its state was taken, progress)
        ck_by_run: dict[int, list[tuple[float, float, float, float]]] = {}
        for r, t, d, k, p in zip(
            self.checkpoints["run"].tolist(),
            self.checkpoints["time"].tolist(),
            self.checkpoints["duration"].tolist(),
            self.checkpoints["taken"].tolist(),
            self.checkpoints["progress"].tolist(),
            strict=True,
        ):
            taken = float(k) if math.isfinite(k) else float(t)
            ck_by_run.setdefault(int(r), []).append((float(t), float(d), taken, float(p)))
        out = np.zeros(self.jobs.size, MEASURED_DTYPE)
        for name in _TIME_BUCKETS:
            out[name] = np.nan
        by_job: dict[int, list[int]] = {}
        for i in np.lexsort((runs["start"], runs["job"])).tolist():
            by_job.setdefault(int(runs["job"][i]), []).append(i)
        state_hours: dict[str, float] = {}
        for j in range(self.jobs.size):
            row = out[j]
            row["job"] = j
            row["gpus"] = self.jobs["gpus"][j]
            submit = float(self.jobs["submit"][j])
            row["submit"] = submit
            idx = by_job.get(j, [])
            if not idx:
                row["queue_wait"] = span1 - submit
                row["wall"] = span1 - submit
                # Never started: every other time bucket is 0.
                for b in _TIME_BUCKETS[3:]:
                    row[b] = 0.0
                row["held"] = 0.0
                continue
            sums = dict.fromkeys(
                (
                    "held",
                    "recovery",
                    "kept",
                    "lost",
                    "productive",
                    "wasted",
                    "ckpt_stall",
                    "overhead",
                    "detection",
                ),
                0.0,
            )
            prev_end: float | None = None
            restored = 0.0  # the work the current run started from
            counts = dict.fromkeys(_COUNTS, 0)
            for i in idx:
                r = runs[i]
                start, end = float(r["start"]), float(r["end"])
                state = RunState(int(r["state"]))
                gpus = int(r["gpus"])
                held = end - start
                sums["held"] += held
                if gpus >= 0:
                    state_hours[state.name] = state_hours.get(state.name, 0.0) + gpus * held / 3600
                if prev_end is not None:
                    sums["recovery"] += start - prev_end
                prev_end = end
                counts["runs"] += 1
                failed = int(r["run"]) in fail_event
                counts["failures"] += int(failed)
                counts["preemptions"] += int(state == RunState.PREEMPTED)
                counts["timeouts"] += int(state in (RunState.TIMEOUT, RunState.DEADLINE))
                counts["requeues"] += int(state == RunState.REQUEUED)
                counts["cancellations"] += int(state == RunState.CANCELLED)
                cks = sorted(ck_by_run.get(int(r["run"]), []))
                counts["checkpoints"] += len(cks)
                fault = float(r["fault"])
                if failed:
                    detection = end - fault if math.isfinite(fault) else math.nan
                    stop = fault if math.isfinite(fault) else end
                else:
                    detection, stop = 0.0, end
                interrupted = state not in (RunState.COMPLETED, RunState.RUNNING)
                # the newest checkpoint durable by the stop: the state it holds is
                # kept; one holding more work than the run's stop says it rolls
                # back to did not survive (a local copy lost with its node)
                rolled_back = float(r["progress"])
                kept_cks = [
                    c
                    for c in cks
                    if c[0] <= stop
                    and not (math.isfinite(rolled_back) and c[3] > rolled_back * (1 + 1e-12))
                ]
                last_ck = max(c[2] for c in kept_cks) if kept_cks else None
                if interrupted:
                    kept = (last_ck - start) if last_ck is not None else 0.0
                else:
                    kept = held
                sums["kept"] += kept
                sums["lost"] += held - kept
                setup = float(r["setup"])
                overhead = min(setup, stop - start) if math.isfinite(setup) else math.nan
                stall = math.fsum(c[1] for c in cks) if cks else 0.0
                if interrupted:
                    committed = max(last_ck if last_ck is not None else start, start + overhead)
                    # after the committed state: recomputed work, and the writes of
                    # checkpoints that did not survive (checkpoint stalls, not waste)
                    after = math.fsum(c[1] for c in cks if committed < c[0] <= stop)
                    wasted = max(0.0, stop - committed - after)
                else:
                    wasted = 0.0
                sums["detection"] += detection
                sums["overhead"] += overhead
                sums["ckpt_stall"] += stall
                sums["wasted"] += wasted
                sums["productive"] += held - wasted - detection - overhead - stall
                if interrupted and math.isfinite(rolled_back):
                    if rolled_back < restored:
                        # it rolled back past the state it started from (that
                        # checkpoint was lost with a node): work an earlier run
                        # kept is lost now
                        again = restored - rolled_back
                        sums["wasted"] += again
                        sums["productive"] -= again
                        sums["kept"] -= again
                        sums["lost"] += again
                    restored = rolled_back
                elif math.isfinite(rolled_back):
                    restored = rolled_back
            first = runs[idx[0]]
            last = runs[idx[-1]]
            row["start"] = float(first["start"])
            end = float(last["end"])
            if bool(self.jobs["waiting"][j]) and span1 > end:
                # requeued after its last run and still waiting when the record ends
                sums["recovery"] += span1 - end
                end = span1
            row["held"] = sums["held"]
            row["recovery_wait"] = sums["recovery"]
            row["queue_wait"] = float(first["start"]) - submit
            base = submit if math.isfinite(submit) else float(first["start"])
            row["wall"] = end - base
            if has_ckpt:
                row["kept"] = sums["kept"]
                row["lost"] = sums["lost"]
            row["detection"] = (
                sums["detection"] if (know_fault or counts["failures"] == 0) else math.nan
            )
            if know_setup:
                row["overhead"] = sums["overhead"]
            if know_dur or (has_ckpt and counts["checkpoints"] == 0):
                row["ckpt_stall"] = sums["ckpt_stall"]
            if has_ckpt and know_setup and know_dur:
                # without every checkpoint's blocking time (asynchronous ones:
                # a snapshot's stall whose persist a failure cut off) the time
                # after the last checkpoint is not all recomputed work
                row["wasted"] = sums["wasted"]
                if math.isfinite(float(row["detection"])):
                    row["productive"] = sums["productive"]
            for name, value in counts.items():
                row[name] = value
            row["restarts"] = counts["runs"] - 1
            row["end"] = end
            row["completed"] = RunState(int(last["state"])) == RunState.COMPLETED
            row["open"] = RunState(int(last["state"])) == RunState.RUNNING
        available = tuple(
            b for b in _TIME_BUCKETS if out.size and bool(np.all(np.isfinite(out[b])))
        )
        totals: dict[str, Any] = {"jobs": int(out.size)}
        known = out["gpus"] >= 0
        g = out["gpus"][known].astype(np.float64)
        for b in _TIME_BUCKETS:
            totals[f"{b}_gpu_hours"] = float(np.sum(g * out[b][known]) / 3600)
        for c in _COUNTS:
            totals[c] = int(np.sum(out[c]))
        totals["completed"] = int(np.sum(out["completed"]))
        totals["gpu_hours_by_state"] = state_hours
        return Measured(jobs=out, totals=totals, available=available, source=self.source)

    # ------------------------------------------------------------------
    # analysis (acesim.history._analysis)

    def fit(
        self,
        by: Any = None,
        families: Sequence[str] = _FAMILIES,
        *,
        cause: str | None = None,
        level: float = 0.95,
        truncated: bool = False,
    ) -> Any:
        """Censored maximum-likelihood fits of :meth:`intervals`, ranked by
        AIC: a :class:`~acesim.history.Fit` (``.best``, ``.law``, ``[family]``
        a :class:`~acesim.history.FamilyFit` with its parameters and their
        ``level`` confidence intervals, log-likelihood, AIC and a censored
        Kolmogorov-Smirnov statistic; ``.table()``). A family that cannot
        be fitted to the samples (no maximum-likelihood estimate, or a law
        beyond a float) is in ``.failed`` with the reason and the others are
        ranked; a ValueError only when none can be.

        ``by``: ``"job"``, ``"node"``, ``"cause"`` or ``"system"`` (default:
        node samples when the history has complete ones, else job, else
        system), or an :class:`Intervals` already selected; ``families``:
        among ``"exponential"``, ``"weibull"``, ``"lognormal"``, ``"gamma"``;
        ``cause``: with ``by="cause"``, the cause whose failures are fitted
        (the others censor its samples). ``truncated``: whether to keep the
        left-truncated samples, those whose exposure began when the record
        began (a node already in service then: its first gap is a
        forward-recurrence time, longer than a gap under a decreasing
        hazard, and keeping it biases the scale upward); keep them only
        when the units were new at the start of the record."""
        from . import _analysis

        return _analysis.fit_history(
            self, by, families, cause=cause, level=level, truncated=truncated
        )

    def burstiness(self, by: str | None = None, max_lag: int = 50) -> Any:
        """How bursty the failures are: a :class:`~acesim.history.Burstiness`
        with the coefficient of variation of the gaps, the autocorrelation
        of successive gaps up to ``max_lag``, and a suggested
        :class:`~acesim.BlockBootstrap` block (``.law``). ``by`` as in
        :meth:`intervals` (default: system-wide gaps when the history has
        them)."""
        from . import _analysis

        return _analysis.burstiness(self, by, max_lag=max_lag)

    def lemons(self, alpha: float = 0.01) -> Any:
        """Per-node over-dispersion against a common rate: a
        :class:`~acesim.history.Lemons` with each node's failures and
        exposure, the dispersion test and the nodes it flags at level
        ``alpha``."""
        from . import _analysis

        return _analysis.lemons(self, alpha)

    def to_model(self, by: str | None = None, family: str | None = None) -> FittedModel:
        """``simulate`` keyword arguments (failures, fleet, causes) from the
        fits: the best family of :meth:`fit` (or ``family``) ``by`` node (as
        the fleet's ``node_failures``) or job (as ``failures``), the fleet's
        size, a repair law from the nodes' recorded spells out of service
        after a failure (exponential at their mean), and :meth:`causes` with
        the detection latency the source records. A history without such
        spells (sacct records none; a source that names no nodes) gives
        causes that leave nodes in service: no failure of the model sends a
        node to repair, so its repair law (the fleet's default) is never
        drawn, and :meth:`backtest` restarts a job after the recorded
        gaps. The fleet's node processes start in their stationary state (a
        record cannot say whether its nodes were new): for a record that
        starts with new nodes, replace the fleet with
        ``dataclasses.replace(model["fleet"], node_start="fresh")``.

        The result is a dict (index it, pass it as ``**model``) whose
        ``.defaults`` holds the values filled from a default rather than
        the history, by key path: ``"fleet.nodes"`` and
        ``"fleet.gpus_per_node"`` (where the history does not say them),
        ``"fleet.repair"`` (no spell that ended), ``"fleet.node_start"``
        (always), ``"causes[k].detect"`` (no fault times recorded) and
        ``"causes"`` (None: no cause named, simulate's default)."""
        from . import _analysis

        return _analysis.to_model(self, by, family)

    def backtest(
        self,
        model: Any = None,
        replicas: int = 20,
        *,
        level: float = 0.9,
        seed: int = 0,
        checkpoint_interval: float = 3600.0,
        restart_delay: Any = "measured",
        progress: bool = False,
    ) -> Any:
        """The recorded schedule replayed with the model's failures: a
        :class:`~acesim.history.Backtest` comparing each measured bucket
        with its distribution over ``replicas`` replays.

        ``model``: ``simulate`` keyword arguments (default
        :meth:`to_model`). Each replica replays the runs' first starts and
        nodes (:func:`acesim.replay_schedule` with ``restart="free"``: the
        model's failures are not the recorded ones, so an interrupted job
        restarts at once on its surviving and the lowest free nodes) with the
        recorded jobs (see :func:`acesim.history.recorded_jobs`; a job
        without checkpoints in a source that records them restarts from
        scratch; ``checkpoint_interval`` where the source says nothing).
        ``restart_delay``: the scheduler's time to restart an interrupted
        job; ``"measured"`` resamples the history's own (the end of each
        failed run to the job's next start) when no failure of the model
        takes a node out of service (then nothing in the model delays a
        restart), else None (the model's repairs make the waits).

        The buckets are those the source gives (GPU-hours), with the
        ``failures`` and ``restarts`` counts; where it cannot split the held
        time (no fault or setup times) ``kept`` and ``lost`` instead, the
        simulated ``lost`` being ``wasted + detection`` (exact when the jobs'
        init and load are 0).

        ``replicas`` is an integer >= 1, ``level`` in (0, 1],
        ``checkpoint_interval`` seconds > 0; a bad argument raises a
        TypeError or ValueError naming it. ``progress``: the replays done on
        stderr when it is a terminal outside CI
        (:func:`acesim.sweep.progress_bar`)."""
        from . import _analysis

        return _analysis.backtest(
            self,
            model,
            replicas,
            level=level,
            seed=seed,
            checkpoint_interval=checkpoint_interval,
            restart_delay=restart_delay,
            progress=progress,
        )


def posix_origin(origin: float | None) -> _dt.datetime | None:
    """The naive datetime of an origin in POSIX seconds (None stays None)."""
    return None if origin is None else from_posix(origin)


@dataclass
class TableBuilder:
    """Accumulates rows for a History (readers share it)."""

    job_names: list[str] = field(default_factory=list)
    job_index: dict[str, int] = field(default_factory=dict)
    job_submit: list[float] = field(default_factory=list)
    job_gpus: list[int] = field(default_factory=list)
    job_waiting: list[bool] = field(default_factory=list)
    node_names: list[str] = field(default_factory=list)
    node_index: dict[str, int] = field(default_factory=dict)
    cause_names: list[str] = field(default_factory=list)
    cause_index: dict[str, int] = field(default_factory=dict)
    runs: list[tuple[Any, ...]] = field(default_factory=list)
    run_nodes: list[tuple[int, int]] = field(default_factory=list)
    failures: list[tuple[Any, ...]] = field(default_factory=list)
    spells: list[tuple[Any, ...]] = field(default_factory=list)
    checkpoints: list[tuple[Any, ...]] = field(default_factory=list)
    next_event: int = 0

    def job(self, name: str) -> int:
        j = self.job_index.get(name)
        if j is None:
            j = len(self.job_names)
            self.job_index[name] = j
            self.job_names.append(name)
            self.job_submit.append(math.nan)
            self.job_gpus.append(-1)
            self.job_waiting.append(False)
        return j

    def node(self, name: str) -> int:
        n = self.node_index.get(name)
        if n is None:
            n = len(self.node_names)
            self.node_index[name] = n
            self.node_names.append(name)
        return n

    def cause(self, name: str | None) -> int:
        if name is None:
            return -1
        c = self.cause_index.get(name)
        if c is None:
            c = len(self.cause_names)
            self.cause_index[name] = c
            self.cause_names.append(name)
        return c

    def event(self) -> int:
        e = self.next_event
        self.next_event += 1
        return e

    def history(self, **kwargs: Any) -> History:
        """The History of these tables (``kwargs``: its other arguments)."""
        tables = self.arrays()
        kwargs.setdefault("system_names", ("fleet",))
        return History(
            job_names=self.job_names,
            node_names=self.node_names,
            cause_names=self.cause_names,
            jobs=tables["jobs"],
            runs=tables["runs"],
            run_nodes=tables["run_nodes"],
            failures=tables["failures"],
            node_spells=tables["node_spells"],
            checkpoints=tables["checkpoints"],
            **kwargs,
        )

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        jobs = np.zeros(len(self.job_names), JOB_DTYPE)
        jobs["job"] = np.arange(len(self.job_names))
        jobs["submit"] = self.job_submit
        jobs["gpus"] = self.job_gpus
        jobs["waiting"] = self.job_waiting
        return {
            "jobs": jobs,
            "runs": np.array(self.runs, RUN_DTYPE) if self.runs else _empty(RUN_DTYPE),
            "run_nodes": np.array(self.run_nodes, RUN_NODE_DTYPE)
            if self.run_nodes
            else _empty(RUN_NODE_DTYPE),
            "failures": np.array(self.failures, FAILURE_DTYPE)
            if self.failures
            else _empty(FAILURE_DTYPE),
            "node_spells": np.array(self.spells, SPELL_DTYPE)
            if self.spells
            else _empty(SPELL_DTYPE),
            "checkpoints": np.array(self.checkpoints, CHECKPOINT_DTYPE)
            if self.checkpoints
            else _empty(CHECKPOINT_DTYPE),
        }


def is_failure_state(state: RunState) -> bool:
    """Whether a run end state reads as a failure by default."""
    return int(state) in _FAILURE_STATE_CODES
