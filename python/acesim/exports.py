"""Failure traces in the formats schedulers already read, and back; a
recorded schedule replayed through the model.

Exports read a run's own event log: ``res.node_events`` (every node leaving
or returning to service, recorded by the engine when the run was made with
``record_events=True``; a :class:`acesim.FleetModel`'s ``result()`` always
has it) and ``res.trace`` (each failure event's time, origin, source, cause
and inter-failure draw). Nothing is re-derived: the times written are the
engine's. A result without the event log is refused with
:class:`ExportError` (a ``ValueError``) saying to run with
``record_events=True``.

Node events (:func:`to_node_events`, CSV or JSON lines): one row per node a
failure event struck, or took out of service, in event order then node
order::

    time,node,event,origin,source,cause,down,up,inter_failure
    7200.0,0,0,0,1,-1,1,10800.0,7200.0
    16200.0,2,1,2,1,-1,1,19800.0,16200.0

    {"time": 7200.0, "node": 0, "event": 0, "origin": 0, "source": 1,
     "cause": -1, "down": true, "up": 10800.0, "inter_failure": 7200.0}

(one object per line in the file). The columns:

- ``time``: wall-clock time of the fault, in seconds; ``event``: the
  failure event's number, ``res.trace["event"]`` (rows of one event share
  it); ``origin``: the node whose failure process fired, ``-1`` for a
  job-level failure (the job's own law fired; it is blamed on one of the
  job's nodes); ``source``: 1 node-level, 0 job-level; ``cause``: index
  into the run's causes, ``-1`` when none were given.
- ``node``: a node of the event: the origin, every node the trace names for
  the event, and every node the event took out of service (a block failure,
  ``Cause(nodes=k)``, takes out every node of the block that was in service;
  a misdiagnosed repair takes out the node pulled, and the struck node has a
  row with ``down`` false). One gap: a node of a block that the event struck
  but left in service (``Cause(node_down=False)``), that is not the origin,
  and whose jobs the event had already interrupted on another node of the
  block, is in neither log and has no row.
- ``down``: whether the event took the node out of service (sent to repair,
  or quarantined, or both); ``up``: when it was back in service (the end of
  the stretch that began then: a repair, a quarantine, and any maintenance
  window that began meanwhile). ``up`` is empty / null when ``down`` is
  false, and when the node was not back by the end of the run (retired for
  good, ``Quarantine(duration=math.inf)``, or still out when the run
  ended: the log stops there).
- ``inter_failure``: the draw that fired, on the origin's row only (seconds
  of the node's clock since its process restarted); empty / null on the
  other rows of the event and for job-level failures.

:func:`node_failures` gives the same rows as a structured array
(:data:`NODE_FAILURE_DTYPE`; ``up`` NaN when not down, ``inf`` when not
back); :func:`node_spells` gives every stretch a node spent out of service
(:data:`NODE_SPELL_DTYPE`), planned maintenance included.

Batsim external events (:func:`to_batsim_events`): the stretches out of
service as the times the machines become unavailable and available again,
in the JSON-lines format of Batsim's ``--events`` files::

    {"type": "machine_unavailable", "resources": "0", "timestamp": 7200.0}
    {"type": "machine_available", "resources": "0", "timestamp": 10800.0}

The readers (:func:`read_node_events`, :func:`read_batsim_events`) turn a
file in either format, written here or by a scheduler from its own failure
log, into a :class:`acesim.NodeTrace` that replays the failures at their
recorded times; the model then draws its own causes, detection latencies
and repairs (a file's ``up`` and ``machine_available`` times are not
replayed).

:func:`replay_schedule` runs a schedule an outside scheduler logged (rows
``job, nodes, start[, end]``) through an :class:`acesim.FleetModel`, to ask
what the model's failures would have cost it; its docstring gives the
rules.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import math
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import numpy as np
import numpy.typing as npt

from . import _atomic
from ._validation import NO_SUCH_FILE, input_file_problem, integer, repeated_column
from .distributions import Distribution, as_distribution, scipy_to_law
from .fleet import Fleet, NodeTrace
from .fleet_model import FleetModel
from .job import Job
from .policy import Policy
from .simulation import SimulationResult, job_stream

__all__ = [
    "BATSIM_EVENT_TYPES",
    "NODE_EVENT_FIELDS",
    "NODE_FAILURE_DTYPE",
    "NODE_SPELL_DTYPE",
    "SCHEDULE_FIELDS",
    "ExportError",
    "NodeEventFormatError",
    "ScheduleError",
    "node_failures",
    "node_spells",
    "read_batsim_events",
    "read_node_events",
    "replay_schedule",
    "schedule_order",
    "to_batsim_events",
    "to_node_events",
]

#: One row per node of a failure event (see the module docstring for what
#: each field means). ``up`` is NaN when the event left the node in service
#: and ``inf`` when the node was not back by the end of the run.
NODE_FAILURE_DTYPE = np.dtype(
    [
        ("time", "f8"),
        ("node", "i4"),
        ("event", "u4"),
        ("origin", "i4"),
        ("source", "u4"),
        ("cause", "i4"),
        ("down", "?"),
        ("up", "f8"),
        ("inter_failure", "f8"),
    ]
)

#: One row per stretch a node spent out of service: from ``start`` (when it
#: left) to ``end`` (when it returned; ``inf`` when it was not back by the
#: end of the run). ``reason`` is what took it out: ``"failure"`` (a repair
#: or a quarantine, or both; ``event`` is the failure event) or
#: ``"maintenance"`` (a planned window; ``event`` is -1). A window that
#: begins while the node is out only makes the stretch longer.
NODE_SPELL_DTYPE = np.dtype(
    [("node", "i4"), ("start", "f8"), ("end", "f8"), ("reason", "U11"), ("event", "i8")]
)

#: The node-event columns, in the order :func:`to_node_events` writes them.
NODE_EVENT_FIELDS: tuple[str, ...] = NODE_FAILURE_DTYPE.names or ()

#: Batsim's external event types, in the order Batsim handles them at equal
#: timestamps (its ``EventType`` enum: available first).
BATSIM_EVENT_TYPES = ("machine_available", "machine_unavailable")

#: The columns of a recorded schedule (``end`` optional).
SCHEDULE_FIELDS = ("job", "nodes", "start", "end")

_FORMATS = ("csv", "jsonl")
_OUT, _BACK, _DRAINED, _QUARANTINED, _RETIRED = 0, 1, 2, 3, 4  # NodeEventKind (records.hpp)
_START_BEGIN = 1  # EventKind::StartBegin


class ExportError(ValueError):
    """The result cannot be exported: it has no event log (run with
    ``record_events=True``), it was run without a fleet (no node pool), or
    its ``trace`` and ``node_events`` disagree (the message says where)."""


class NodeEventFormatError(ValueError):
    """A node-event or Batsim events file that does not follow its format;
    the message names the line and the field."""


class ScheduleError(ValueError):
    """A recorded schedule that cannot be replayed: a malformed row (the
    message names the row and the field), a row the model refuses (a node
    count that does not fit the job, ...), or a replay that cannot go on
    (jobs waiting for nodes that other waiting jobs hold)."""


# --------------------------------------------------------------------------
# The node timeline, from the event log
# --------------------------------------------------------------------------


@dataclass
class _Timeline:
    failures: npt.NDArray[Any]
    spells: npt.NDArray[Any]


def _replica_log(res: Any, replica: Any) -> tuple[Any, Any]:
    """The trace and node-event rows of one replica, after the checks that
    the result has them."""
    for name in ("trace", "fleet", "events", "node_events"):
        if not hasattr(res, name):
            raise TypeError(
                "res must be a SimulationResult (from acesim.simulate or "
                f"FleetModel.result()), got {type(res).__name__}"
            )
    r = integer("replica", replica, minimum=0, maximum=2**32 - 1)
    have = sorted(int(x) for x in res.fleet["replica"])
    if r not in have:
        raise ValueError(
            f"replica {r} is not in the results (replicas {have[0]}..{have[-1]})"
            if have
            else f"replica {r} is not in the results (they have no replicas)"
        )
    if res.node_events is None or res.events.size == 0:
        raise ExportError(
            "res has no event log: the node events are recorded only when the run is made "
            "with record_events=True (simulate(..., record_events=True))"
        )
    starts = res.events["kind"] == _START_BEGIN
    if np.any(starts) and (res.placements is None or res.placements.size == 0):
        raise ExportError(
            "res was run without a fleet: there is no node pool to export (its trace's "
            "nodes are job-local); run with fleet=acesim.Fleet(...)"
        )
    trace = res.trace[res.trace["replica"] == r]
    log = res.node_events[res.node_events["replica"] == r]
    return trace, log


@dataclass
class _FailureEvent:
    time: float
    origin: int
    source: int
    cause: int
    drawn: float
    nodes: set[int] = field(default_factory=set)


def _failure_events(trace: Any) -> dict[int, _FailureEvent]:
    """The trace's failure events (its rows grouped by event number)."""
    out: dict[int, _FailureEvent] = {}
    for row in trace:
        e = int(row["event"])
        values = (
            float(row["time"]),
            int(row["origin"]),
            int(row["source"]),
            int(row["cause"]),
        )
        known = out.get(e)
        if known is None:
            known = out[e] = _FailureEvent(*values, drawn=float(row["inter_failure"]))
        elif (known.time, known.origin, known.source, known.cause) != values:
            raise ExportError(
                f"res.trace: the rows of failure event {e} disagree on its time, origin, "
                "source or cause"
            )
        node = int(row["node"])
        if node < 0:
            raise ExportError(f"res.trace: failure event {e} names node {node}")
        known.nodes.add(node)
    return out


def _timeline(res: Any, replica: Any) -> _Timeline:
    trace, log = _replica_log(res, replica)
    events = _failure_events(trace)
    spells: list[list[Any]] = []
    open_spell: dict[int, int] = {}  # node -> its stretch out of service, while out
    spell_of: dict[tuple[int, int], int] = {}  # (event, node) -> the stretch it began or joined
    for row in log:
        n, kind, t = int(row["node"]), int(row["kind"]), float(row["time"])
        if kind in (_OUT, _DRAINED):
            e = int(row["event"]) if kind == _OUT else -1
            if kind == _OUT:
                known = events.get(e)
                if known is None or known.time != t:
                    raise ExportError(
                        f"res.node_events: node {n} left service at t={t!r} after failure "
                        f"event {e}, which res.trace "
                        + ("lacks" if known is None else "dates")
                        + ("" if known is None else f" at t={known.time!r}")
                    )
            if n not in open_spell:
                open_spell[n] = len(spells)
                spells.append([n, t, math.inf, "failure" if kind == _OUT else "maintenance", e])
            if kind == _OUT:
                spell_of[(e, n)] = open_spell[n]
                events[e].nodes.add(n)
        elif kind in (_QUARANTINED, _RETIRED):
            # the failure event's DOWN row took the node out: the stretch is its
            e = int(row["event"])
            if n not in open_spell or spell_of.get((e, n)) != open_spell[n]:
                raise ExportError(
                    f"res.node_events: node {n} is quarantined at t={t!r} after failure event "
                    f"{e}, which did not take it out of service"
                )
        elif kind == _BACK:
            if n not in open_spell:
                raise ExportError(
                    f"res.node_events: node {n} is back in service at t={t!r} but never left"
                )
            spells[open_spell.pop(n)][2] = t
        else:
            raise ExportError(f"res.node_events: unknown kind {kind} (node {n}, t={t!r})")
    failures: list[tuple[Any, ...]] = []
    for e in sorted(events):
        ev = events[e]
        nodes = set(ev.nodes)  # the trace's and the event log's
        if ev.source == 1:
            nodes.add(ev.origin)
        for m in sorted(nodes):
            k = spell_of.get((e, m))
            up = math.nan if k is None else float(spells[k][2])
            mine = ev.source == 1 and m == ev.origin
            failures.append(
                (
                    ev.time,
                    m,
                    e,
                    ev.origin,
                    ev.source,
                    ev.cause,
                    k is not None,
                    up,
                    ev.drawn if mine else math.nan,
                )
            )
    fail_arr = np.array(failures, dtype=NODE_FAILURE_DTYPE)
    spell_arr = np.array([tuple(s) for s in spells], dtype=NODE_SPELL_DTYPE)
    order = np.lexsort((spell_arr["node"], spell_arr["start"]))
    return _Timeline(fail_arr, spell_arr[order])


def node_failures(res: SimulationResult, *, replica: int = 0) -> npt.NDArray[Any]:
    """One replica's failure events, node by node, as a structured array of
    :data:`NODE_FAILURE_DTYPE`, in event order then node order: which nodes
    each event struck or took out of service, and when they were back (see
    the module docstring). ``res`` must have the event log
    (``record_events=True``); ``replica`` is the trace's replica number.

    >>> import acesim as ace
    >>> fleet = ace.Fleet(2, repair=ace.HOUR,
    ...                   node_failures=ace.NodeTrace.from_gaps({0: [2 * ace.HOUR]}, nodes=2))
    >>> res = ace.simulate(ace.Job(8, 5 * ace.HOUR, ace.HOUR), fleet=fleet,
    ...                    horizon=4 * ace.HOUR, record_events=True)
    >>> row = node_failures(res)[0]
    >>> float(row["time"]), int(row["node"]), bool(row["down"]), float(row["up"])
    (7200.0, 0, True, 10800.0)
    """
    return _timeline(res, replica).failures


def node_spells(res: SimulationResult, *, replica: int = 0) -> npt.NDArray[Any]:
    """One replica's stretches out of service as a structured array of
    :data:`NODE_SPELL_DTYPE` (node, start, end, reason, event), ordered by
    start then node: repairs and quarantines (``"failure"``) and planned
    maintenance windows (``"maintenance"``), as the event log recorded them
    (``end`` is ``inf`` for a node not back by the end of the run). Same
    arguments and errors as :func:`node_failures`."""
    return _timeline(res, replica).spells


# --------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------


def _write(text: str, path: str | os.PathLike[str] | None) -> str:
    if path is not None:
        if not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"path must be a str, an os.PathLike or None, got {type(path).__name__}"
            )
        _atomic.replace_file(path, text)
    return text


def _number(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else float(x)


def _node_event_values(row: Any) -> dict[str, Any]:
    return {
        "time": float(row["time"]),
        "node": int(row["node"]),
        "event": int(row["event"]),
        "origin": int(row["origin"]),
        "source": int(row["source"]),
        "cause": int(row["cause"]),
        "down": bool(row["down"]),
        "up": _number(float(row["up"])),
        "inter_failure": _number(float(row["inter_failure"])),
    }


def to_node_events(
    res: SimulationResult,
    *,
    replica: int = 0,
    format: str = "csv",
    path: str | os.PathLike[str] | None = None,
) -> str:
    """One replica's failure events as node events: ``format="csv"`` (a
    header, then one row per node of each event; floats written exactly,
    empty cells for no value, ``down`` as 1 / 0) or ``"jsonl"`` (one JSON
    object per line, ``null`` for no value, ``down`` a boolean). The columns
    are :data:`NODE_EVENT_FIELDS`; the module docstring says what each row
    means. Returns the text; with ``path``, also writes it there.
    :func:`read_node_events` reads it back.

    Arguments and errors as :func:`node_failures`.

    >>> import acesim as ace
    >>> fleet = ace.Fleet(2, repair=ace.HOUR,
    ...                   node_failures=ace.NodeTrace.from_gaps({0: [2 * ace.HOUR]}, nodes=2))
    >>> res = ace.simulate(ace.Job(8, 5 * ace.HOUR, ace.HOUR), fleet=fleet,
    ...                    horizon=4 * ace.HOUR, record_events=True)
    >>> print(to_node_events(res), end="")
    time,node,event,origin,source,cause,down,up,inter_failure
    7200.0,0,0,0,1,-1,1,10800.0,7200.0
    """
    if format not in _FORMATS:
        raise ValueError(f"format must be one of {_FORMATS}, got {format!r}")
    rows = node_failures(res, replica=replica)
    if format == "jsonl":
        lines = [json.dumps(_node_event_values(row)) for row in rows]
        return _write("".join(line + "\n" for line in lines), path)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(NODE_EVENT_FIELDS)
    for row in rows:
        values = _node_event_values(row)
        cells = []
        for name in NODE_EVENT_FIELDS:
            v = values[name]
            cells.append("" if v is None else int(v) if isinstance(v, bool) else repr(v))
        writer.writerow(cells)
    return _write(out.getvalue(), path)


def _interval_set(ids: Iterable[int]) -> str:
    """Batsim's canonical interval-set string: disjoint maximal closed
    intervals in ascending order, ``a-b`` or ``a`` for one id, separated by
    spaces."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(set(ids)):
        if run and i == run[-1] + 1:
            run[-1] = i
            continue
        if run:
            parts.append(f"{run[0]}" if run[0] == run[1] else f"{run[0]}-{run[1]}")
        run = [i, i]
    if run:
        parts.append(f"{run[0]}" if run[0] == run[1] else f"{run[0]}-{run[1]}")
    return " ".join(parts)


def to_batsim_events(
    res: SimulationResult,
    *,
    replica: int = 0,
    path: str | os.PathLike[str] | None = None,
) -> str:
    """One replica's node availability as Batsim external events: a
    ``machine_unavailable`` event when nodes leave service, a
    ``machine_available`` event when they return, node ``n`` as Batsim
    machine ``n``, timestamps in seconds.

    The format is Batsim's external events file (``batsim --events FILE``),
    as its documentation gives it: one JSON object per line, each with
    ``type`` (``"machine_unavailable"`` or ``"machine_available"``),
    ``resources`` (the machines, an interval-set string such as
    ``"0-3 7"``) and ``timestamp`` (a number >= 0); there is no header line.
    Sources: https://batsim.readthedocs.io/en/latest/input-events.html and
    https://batsim.readthedocs.io/en/latest/interval-set.html (Batsim's
    ``src/events.cpp`` reads each non-empty line this way and orders events
    at equal timestamps ``machine_available`` first). Batsim's newer
    releases (the ``main`` documentation, "External Events") keep only
    ``generic`` events; these two types are those of the versions that
    document them.

    Every stretch out of service the event log recorded is written
    (:func:`node_spells`: repairs, quarantines and planned maintenance), as
    its start and, when the node was back by the end of the run, its end: a
    node retired for good, or still out when the run ended, is never made
    available again. Machines that change at the same timestamp share one
    event (canonical interval set); events are sorted by timestamp,
    ``machine_available`` first at equal timestamps, as Batsim orders them.
    A stretch of zero length (detection and repair both 0) is left out: at
    equal timestamps Batsim would make the machine available before it
    becomes unavailable.

    Arguments and errors as :func:`node_failures`; returns the text and,
    with ``path``, also writes it there. :func:`read_batsim_events` reads it
    back.

    >>> import acesim as ace
    >>> fleet = ace.Fleet(2, repair=ace.HOUR,
    ...                   node_failures=ace.NodeTrace.from_gaps({0: [2 * ace.HOUR]}, nodes=2))
    >>> res = ace.simulate(ace.Job(8, 5 * ace.HOUR, ace.HOUR), fleet=fleet,
    ...                    horizon=4 * ace.HOUR, record_events=True)
    >>> print(to_batsim_events(res), end="")
    {"type": "machine_unavailable", "resources": "0", "timestamp": 7200.0}
    {"type": "machine_available", "resources": "0", "timestamp": 10800.0}
    """
    spells = node_spells(res, replica=replica)
    changes: dict[tuple[float, int], list[int]] = {}
    for spell in spells:
        start, end, node = float(spell["start"]), float(spell["end"]), int(spell["node"])
        if end == start:
            continue
        changes.setdefault((start, 1), []).append(node)
        if math.isfinite(end):
            changes.setdefault((end, 0), []).append(node)
    lines = [
        json.dumps(
            {"type": BATSIM_EVENT_TYPES[kind], "resources": _interval_set(ids), "timestamp": t}
        )
        for (t, kind), ids in sorted(changes.items())
    ]
    return _write("".join(line + "\n" for line in lines), path)


# --------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------


def _read_text(path: Any) -> tuple[str, str]:
    """The text and a name for messages, from a path or an open text file."""
    if isinstance(path, str | os.PathLike):
        problem = input_file_problem(path)
        if problem is not None and problem != NO_SUCH_FILE:
            raise ValueError(f"path: {os.fspath(path)!r} {problem}, not a file")
        with open(path, encoding="utf-8", newline="") as f:
            return f.read(), os.fspath(path)
    if hasattr(path, "read"):
        text = path.read()
        if not isinstance(text, str):
            raise TypeError("path: an open file must be opened in text mode")
        return text, str(getattr(path, "name", "<file>"))
    raise TypeError(
        f"path must be a str, an os.PathLike or an open text file, got {type(path).__name__}"
    )


def _field_number(
    where: str, name: str, value: Any, text: bool, *, minimum: float | None = 0.0
) -> float:
    """A finite number >= ``minimum``: a JSON number, or (``text``: a CSV
    cell) its decimal text."""
    if text and isinstance(value, str):
        try:
            x = float(value)
        except ValueError:
            raise NodeEventFormatError(f"{where}: {name} must be a number, got {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise NodeEventFormatError(f"{where}: {name} must be a number, got {value!r}")
    else:
        x = float(value)
    if not math.isfinite(x):
        raise NodeEventFormatError(f"{where}: {name} must be finite, got {value!r}")
    if minimum is not None and x < minimum:
        raise NodeEventFormatError(f"{where}: {name} must be >= {minimum:g}, got {value!r}")
    return x


def _field_int(where: str, name: str, value: Any, text: bool, low: int, high: int) -> int:
    """An integer in [low, high]: a JSON integer, or (``text``) its decimal text."""
    if text and isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            raise NodeEventFormatError(
                f"{where}: {name} must be an integer, got {value!r}"
            ) from None
    elif isinstance(value, bool) or not isinstance(value, int):
        raise NodeEventFormatError(f"{where}: {name} must be an integer, got {value!r}")
    else:
        n = value
    if not low <= n <= high:
        raise NodeEventFormatError(f"{where}: {name} must be in [{low}, {high}], got {value!r}")
    return n


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def _node_event_records(
    text: str, name: str, format: str, needed: tuple[str, ...] = ("time", "node")
) -> Iterator[tuple[str, dict[str, Any]]]:
    if format == "jsonl":
        for k, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{name} line {k}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise NodeEventFormatError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise NodeEventFormatError(f"{where}: each line must be a JSON object")
            yield where, obj
        return
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    twice = repeated_column(header)
    if twice is not None:
        raise NodeEventFormatError(f"{name} line 1: the header names column {twice!r} twice")
    for column in needed:
        if column not in header:
            raise NodeEventFormatError(f"{name} line 1: the header lacks the column {column!r}")
    for record in reader:
        where = f"{name} line {reader.line_num}"
        if None in record:
            raise NodeEventFormatError(f"{where}: more cells than the header has columns")
        if any(value is None for value in record.values()):
            raise NodeEventFormatError(f"{where}: fewer cells than the header has columns")
        yield where, dict(record)


def _guess_format(text: str, name: str) -> str:
    lower = name.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    first = text.lstrip()[:1]
    return "jsonl" if first == "{" else "csv"


def _trace_of(
    failures: list[tuple[float, int, float | None]], nodes: int, model: Distribution | None
) -> NodeTrace:
    """A NodeTrace replaying (time, node, inter_failure) failures: with the
    draws when every failure has one (bit for bit, as NodeTrace(res.trace)),
    else from the times alone."""
    failures.sort(key=lambda f: f[0])  # stable: file order at equal times
    with_draws = [f[2] is not None for f in failures]
    if failures and all(with_draws):
        rows = np.zeros(
            len(failures),
            dtype=[
                ("replica", "u4"),
                ("event", "u4"),
                ("origin", "i4"),
                ("source", "u4"),
                ("time", "f8"),
                ("inter_failure", "f8"),
            ],
        )
        rows["event"] = np.arange(len(failures))
        rows["origin"] = [f[1] for f in failures]
        rows["source"] = 1
        rows["time"] = [f[0] for f in failures]
        rows["inter_failure"] = [f[2] for f in failures]
        return NodeTrace(rows, nodes, model=model)
    if any(with_draws):
        raise NodeEventFormatError(
            "inter_failure: give it on every replayed row or on none (rows without it are "
            "replayed from their times alone)"
        )
    by_node: dict[int, list[float]] = {}
    for t, n, _ in failures:
        by_node.setdefault(n, []).append(t)
    return NodeTrace.from_times({n: ts for n, ts in by_node.items()}, nodes, model=model)


def _model(model: Any) -> Distribution | None:
    model = scipy_to_law("model", model)
    if model is not None and not isinstance(model, Distribution):
        raise TypeError(f"model must be a Distribution or None, got {type(model).__name__}")
    return model


def read_node_events(
    path: str | os.PathLike[str] | IO[str],
    nodes: int,
    model: Distribution | None = None,
    format: str | None = None,
) -> NodeTrace:
    """A node-event file (CSV or JSON lines, as :func:`to_node_events`
    writes it, or a scheduler's own failure log in that shape) as a
    :class:`acesim.NodeTrace` of ``nodes`` nodes, to replay with
    ``Fleet(nodes, node_failures=trace)``.

    Required per row: ``time`` (seconds >= 0) and ``node`` (0 ..
    ``nodes - 1``); every row is a failure of that node's own failure
    process at that time. Optional: ``origin``; a row whose origin is given
    and is not its node (another node's block failure struck it, or a
    job-level failure was blamed on it, ``-1``) is skipped, since replaying
    the origin's failure with the same causes strikes it again, and the
    job-level law draws the job-level failures again. ``inter_failure``,
    given on every replayed row, is reported in the replayed trace as
    recorded (with the same seed, jobs and ``model``, a run exported here is
    reproduced bit for bit); without it, the gaps between a node's times
    are. Other columns (``down``, ``repair_end``, ``up``, ``cause``, ...)
    are ignored: the model draws its own causes and repairs. A failure that
    falls while the node is out of service in the replay is skipped (see
    :class:`acesim.NodeTrace`).

    ``model``: the law that produced the failures (its mean feeds each
    job's MTBF and the Young/Daly intervals; default the mean recorded
    gap). ``format``: ``"csv"`` or ``"jsonl"``; by default from the file's
    suffix (``.csv``; ``.jsonl``, ``.ndjson``, ``.json``), else from its
    first character. :class:`NodeEventFormatError` names the line and field
    of a malformed row.
    """
    nodes_ = integer("nodes", nodes, minimum=1, maximum=2**24)
    model_ = _model(model)
    text, name = _read_text(path)
    if format is None:
        format = _guess_format(text, name)
    if format not in _FORMATS:
        raise ValueError(f"format must be one of {_FORMATS} or None, got {format!r}")
    failures: list[tuple[float, int, float | None]] = []
    for where, record in _node_event_records(text, name, format):
        for needed in ("time", "node"):
            if needed not in record:
                raise NodeEventFormatError(f"{where}: no {needed!r} field")
        text_cells = format == "csv"
        t = _field_number(where, "time", record["time"], text_cells)
        n = _field_int(where, "node", record["node"], text_cells, 0, nodes_ - 1)
        origin = record.get("origin")
        if not _blank(origin):
            if _field_int(where, "origin", origin, text_cells, -1, 2**31 - 1) != n:
                continue
        draw = record.get("inter_failure")
        failures.append(
            (
                t,
                n,
                None if _blank(draw) else _field_number(where, "inter_failure", draw, text_cells),
            )
        )
    return _trace_of(failures, nodes_, model_)


def _parse_interval_set(where: str, value: Any) -> list[int]:
    """The machine ids of a Batsim interval-set string ("0-3 7")."""
    if not isinstance(value, str):
        raise NodeEventFormatError(f"{where}: resources must be a string, got {value!r}")
    ids: list[int] = []
    parts = value.split(" ")
    if not value or any(p == "" for p in parts):
        raise NodeEventFormatError(
            f"{where}: resources must be intervals 'a-b' or 'a' separated by single spaces, "
            f"got {value!r}"
        )
    for part in parts:
        bounds = part.split("-")
        if len(bounds) > 2 or not all(b.isdigit() and b.isascii() for b in bounds):
            raise NodeEventFormatError(f"{where}: resources: {part!r} is not 'a-b' or 'a'")
        a, b = int(bounds[0]), int(bounds[-1])
        if b < a:
            raise NodeEventFormatError(
                f"{where}: resources: interval {part!r} ends before it starts"
            )
        ids.extend(range(a, b + 1))
    return ids


def read_batsim_events(
    path: str | os.PathLike[str] | IO[str],
    nodes: int,
    model: Distribution | None = None,
) -> NodeTrace:
    """A Batsim external events file (the format :func:`to_batsim_events`
    writes, one JSON object per line with ``type``, ``resources`` and
    ``timestamp``) as a :class:`acesim.NodeTrace`: each machine of each
    ``machine_unavailable`` event fails at its timestamp (machine ``n`` as
    node ``n``, ``nodes`` nodes in all). ``machine_available`` events are
    checked and otherwise ignored: the model draws its own repairs. Events
    need not be in order (Batsim sorts them too); extra fields are allowed.
    A planned unavailability in the file reads as a failure too.

    ``model`` as in :func:`read_node_events`.
    :class:`NodeEventFormatError` names the line and field of a malformed
    event (a missing or mistyped field, an unknown type, a bad interval set,
    a negative timestamp, a machine outside the fleet)."""
    nodes_ = integer("nodes", nodes, minimum=1, maximum=2**24)
    model_ = _model(model)
    text, name = _read_text(path)
    failures: list[tuple[float, int, float | None]] = []
    for where, obj in _node_event_records(text, name, "jsonl"):
        for needed in ("type", "resources", "timestamp"):
            if needed not in obj:
                raise NodeEventFormatError(f"{where}: no {needed!r} field")
        kind = obj["type"]
        if kind not in BATSIM_EVENT_TYPES:
            raise NodeEventFormatError(
                f"{where}: type must be one of {BATSIM_EVENT_TYPES}, got {kind!r}"
            )
        t = _field_number(where, "timestamp", obj["timestamp"], False)
        for m in _parse_interval_set(where, obj["resources"]):
            if m >= nodes_:
                raise NodeEventFormatError(
                    f"{where}: resources: machine {m} is outside the {nodes_} nodes"
                )
            if kind == "machine_unavailable":
                failures.append((t, m, None))
    return _trace_of(failures, nodes_, model_)


# --------------------------------------------------------------------------
# A recorded schedule replayed through the model
# --------------------------------------------------------------------------


@dataclass
class _Run:
    row: int  # the row's place in the schedule (0-based)
    key: Any  # the job, as the schedule names it, resolved against `jobs`
    nodes: tuple[int, ...]
    start: float


@dataclass
class _Request:
    ready: float  # not before this time
    nodes: tuple[int, ...] | None  # None: its survivors and any free nodes (restart="free")
    row: int
    seq: int


@dataclass
class _Planned:
    key: Any
    job: Job
    runs: list[_Run]
    submit_at: float
    id: int = -1
    used: int = 0  # rows used so far
    delays: int = 0  # restart delays drawn so far
    last: tuple[int, ...] = ()
    request: _Request | None = None


def _schedule_records(schedule: Any) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(where, record, text cells) for each row of the schedule."""
    if isinstance(schedule, str | os.PathLike):
        text, name = _read_text(schedule)
        fmt = _guess_format(text, name)
        for where, record in _node_event_records(text, name, fmt, needed=("job", "nodes", "start")):
            yield where, record, fmt == "csv"
        return
    if isinstance(schedule, np.ndarray):
        names = schedule.dtype.names
        if names is None:
            raise TypeError("schedule: a numpy array must be a structured array")
        for needed in ("job", "nodes", "start"):
            if needed not in names:
                raise ScheduleError(f"schedule: the array lacks the field {needed!r}")
        for k, row in enumerate(schedule):
            record = {n: row[n] for n in names}
            for n, v in record.items():
                record[n] = v.tolist() if isinstance(v, np.generic | np.ndarray) else v
            yield f"schedule row {k}", record, False
        return
    if isinstance(schedule, bytes) or not isinstance(schedule, Iterable):
        raise TypeError(
            "schedule must be a sequence of rows (tuples or dicts), a numpy structured array "
            f"or the path of a CSV / JSON-lines file, got {type(schedule).__name__}"
        )
    for k, row in enumerate(schedule):
        where = f"schedule row {k}"
        if isinstance(row, Mapping):
            yield where, dict(row), False
        elif isinstance(row, tuple | list):
            if len(row) not in (3, 4):
                raise ScheduleError(
                    f"{where}: a row is (job, nodes, start) or (job, nodes, start, end), "
                    f"got {len(row)} values"
                )
            yield where, dict(zip(SCHEDULE_FIELDS, row, strict=False)), False
        else:
            raise ScheduleError(
                f"{where}: a row must be a tuple or a dict, got {type(row).__name__}"
            )


def _schedule_nodes(where: str, value: Any, nodes: int) -> tuple[int, ...]:
    """A row's nodes, in order: a sequence of node ids or an interval-set
    string ("0-3 7", expanded in the order written)."""
    if isinstance(value, str):
        try:
            ids = _parse_interval_set(where, value)
        except NodeEventFormatError as e:
            raise ScheduleError(str(e).replace("resources", "nodes", 1)) from None
    elif isinstance(value, Sequence | np.ndarray) and not isinstance(value, bytes):
        ids = []
        for n in value:
            if isinstance(n, bool | np.bool_) or not isinstance(n, numbers.Integral):
                raise ScheduleError(f"{where}: nodes must be node ids (integers), got {n!r}")
            ids.append(int(n))
    else:
        raise ScheduleError(
            f"{where}: nodes must be a sequence of node ids or an interval-set string "
            f"('0-3 7'), got {value!r}"
        )
    if not ids:
        raise ScheduleError(f"{where}: nodes is empty")
    for n in ids:
        if not 0 <= n < nodes:
            raise ScheduleError(f"{where}: node {n} is outside the fleet's {nodes} nodes")
    if len(set(ids)) != len(ids):
        raise ScheduleError(f"{where}: nodes names a node twice ({value!r})")
    return tuple(ids)


def _job_key(where: str, value: Any, jobs: Sequence[Job] | Mapping[Any, Job]) -> Any:
    """The schedule's job resolved against ``jobs``: an index into a
    sequence, or a key of a mapping (a CSV cell "3" also finds the key 3)."""
    if isinstance(jobs, Mapping):
        try:
            if value in jobs:
                return value
        except TypeError:
            raise ScheduleError(f"{where}: job {value!r} cannot be a key of jobs") from None
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            if int(value) in jobs:
                return int(value)
        raise ScheduleError(f"{where}: job {value!r} is not a key of jobs")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ScheduleError(f"{where}: job must be an index into jobs (an integer), got {value!r}")
    if not 0 <= int(value) < len(jobs):
        raise ScheduleError(f"{where}: job {int(value)} is not in jobs ({len(jobs)} jobs)")
    return int(value)


def _jobs_arg(jobs: Any) -> Sequence[Job] | Mapping[Any, Job]:
    if isinstance(jobs, Mapping):
        items = list(jobs.items())
    elif isinstance(jobs, Sequence) and not isinstance(jobs, str | bytes):
        items = list(enumerate(jobs))
    else:
        raise TypeError(
            "jobs must be a sequence of acesim.Job (the schedule's job is an index) or a "
            f"mapping of the schedule's job ids to acesim.Job, got {type(jobs).__name__}"
        )
    for k, job in items:
        if not isinstance(job, Job):
            raise TypeError(f"jobs[{k!r}] must be an acesim.Job, got {type(job).__name__}")
    return jobs  # type: ignore[no-any-return]


_SUBMITS = ("start", "job")


def _plan(
    schedule: Any, jobs: Any, nodes: int, submit: str
) -> tuple[list[_Planned], Sequence[Job] | Mapping[Any, Job]]:
    jobs_ = _jobs_arg(jobs)
    if submit not in _SUBMITS:
        raise ValueError(f"submit must be one of {_SUBMITS}, got {submit!r}")
    runs: dict[Any, list[_Run]] = {}
    try:
        records = list(_schedule_records(schedule))
    except NodeEventFormatError as e:
        raise ScheduleError(str(e)) from None
    for k, (where, record, text) in enumerate(records):
        for needed in ("job", "nodes", "start"):
            if needed not in record:
                raise ScheduleError(f"{where}: no {needed!r} field")
        key = _job_key(where, record["job"], jobs_)
        ids = _schedule_nodes(where, record["nodes"], nodes)
        try:
            start = _field_number(where, "start", record["start"], text)
            end = record.get("end")
            if isinstance(end, float) and math.isnan(end):
                end = None  # (a numpy array's missing end)
            if not _blank(end) and _field_number(where, "end", end, text) < start:
                raise ScheduleError(f"{where}: end ({end!r}) is before start ({start!r})")
        except NodeEventFormatError as e:
            raise ScheduleError(str(e)) from None
        runs.setdefault(key, []).append(_Run(k, key, ids, start))
    if not runs:
        raise ScheduleError("schedule: no rows")
    if submit == "start":
        planned = []
        for key, mine in runs.items():
            mine.sort(key=lambda r: (r.start, r.row))
            planned.append(_Planned(key, jobs_[key], mine, mine[0].start))
        planned.sort(key=lambda p: (p.submit_at, p.runs[0].row))
        return planned, jobs_
    # submit="job": every job of `jobs`, in its order, at its Job.submit.
    keys = list(jobs_.keys()) if isinstance(jobs_, Mapping) else list(range(len(jobs_)))
    planned = []
    for key in keys:
        job = jobs_[key]
        mine = sorted(runs.get(key, []), key=lambda r: (r.start, r.row))
        at = float(job.submit)
        if mine and at > mine[0].start:
            raise ScheduleError(
                f"schedule row {mine[0].row}: job {key!r} starts at {mine[0].start!r}, before "
                f"its Job.submit ({at!r}; submit='job' submits each job then)"
            )
        planned.append(_Planned(key, job, mine, at))
    planned.sort(key=lambda p: p.submit_at)  # (stable: ties in the order of jobs)
    return planned, jobs_


def schedule_order(
    schedule: Any,
    jobs: Sequence[Job] | Mapping[Any, Job],
    fleet: Fleet,
    *,
    submit: Literal["start", "job"] = "start",
) -> list[Any]:
    """The schedule's jobs in the order :func:`replay_schedule` submits
    them: element ``i`` is the schedule's job (an index into ``jobs``, or
    its key) that is job ``i`` of the replay's result (``res.jobs["job"]``,
    ``res.trace["job"]``, ...); with ``submit="job"`` every job of ``jobs``
    is listed, and one submitted after the replay ended has no row.
    Arguments as :func:`replay_schedule`."""
    if not isinstance(fleet, Fleet):
        raise TypeError(f"fleet must be a Fleet, got {type(fleet).__name__}")
    planned, _ = _plan(schedule, jobs, fleet.nodes, submit)
    return [p.key for p in planned]


# What FleetModel.start says when the nodes are not free now: the start waits.


def replay_schedule(
    schedule: Any,
    jobs: Sequence[Job] | Mapping[Any, Job],
    fleet: Fleet,
    failures: Distribution | None = None,
    causes: Any = None,
    policy: Policy | None = None,
    seed: int = 0,
    replica: int = 0,
    horizon: float = math.inf,
    *,
    submit: Literal["start", "job"] = "start",
    restart: Literal["recorded", "free"] = "recorded",
    restart_delay: Distribution | float | None = None,
) -> SimulationResult:
    """What the model's failures would have cost a recorded schedule.

    ``schedule``: the runs an outside scheduler logged, one row per run:
    ``job`` (an index into ``jobs``, or a key of ``jobs`` when it is a
    mapping), ``nodes`` (node ids in the job's order: a sequence, or an
    interval-set string ``"0-3 7"`` read in the order written), ``start``
    (seconds) and optionally ``end``. Rows are tuples ``(job, nodes, start[,
    end])``, dicts with those keys, a numpy structured array with those
    fields, or the path of a CSV file with those columns (a ``.jsonl`` /
    ``.ndjson`` / ``.json`` path: one JSON object per line). ``fleet``,
    ``failures``, ``causes``, ``policy``, ``seed``, ``replica`` and
    ``horizon`` are an :class:`acesim.FleetModel`'s (of ``policy`` only the
    quarantine applies).

    The replay drives a FleetModel by these rules:

    - A job is submitted at its first row's start and started on the first
      row's nodes then. With ``submit="job"`` every job of ``jobs`` is
      submitted at its ``Job.submit`` instead (which must not be after its
      first start), so its wait in the queue counts, and a job the
      schedule never starts waits in the queue (if it is submitted before
      the replay ends).
    - Row ``k`` (``k >= 1``, by start) of a job answers the job's ``k``-th
      interruption in the model (a failure, or a stop for planned
      maintenance): the job restarts on that row's nodes at that row's
      start, or when the interruption is reported if that is later. The
      rows say how the scheduler reacted; the model says when the job was
      interrupted.
    - When a job is interrupted and has no row left, it restarts on the
      nodes of its last run, in the same order, as soon as they are all
      back in service (the failed nodes repaired; it keeps its surviving
      nodes meanwhile).
    - A start whose nodes are busy (another job holds them) or out of
      service in the model waits until the model accepts it, retried after
      every event; waiting starts go first come, first served (by the time
      they became due, then row order), and a waiting start holds no node
      back from another.
    - ``end`` is informational (checked to be >= ``start``): the model
      decides when a job ends. Rows left when a job completes are unused.
      Nothing is preempted.
    - ``restart="free"``: only each job's first row is used; an interrupted
      job restarts at once on its surviving nodes and the free nodes it
      still needs (waiting until enough are free), chosen as the built-in
      re-placement chooses them: the node longest since it last failed or
      left service (one never seen doing either first), then the lowest
      id. The model's
      failures are not the recorded ones, so this is the replay a back-test
      wants: the recorded restarts answered failures the model does not
      draw. ``restart_delay`` (a law or seconds; only with ``"free"``) is
      the scheduler's time to restart an interrupted job, counted from when
      the interruption is reported (the job's ``k``-th delay is draw ``k``
      of its ``"replace"`` stream, :func:`acesim.job_stream`; the model's
      own random numbers are untouched); the job waits for it in
      ``recovery_wait``.

    The replay ends when every job the schedule starts is done, at the
    horizon, or when the model has nothing left to do; it returns the
    model's :class:`acesim.SimulationResult` (with the event log). Job
    ``i`` of the result is the ``i``-th job submitted (by first start, ties
    in schedule order; with ``submit="job"``, by ``Job.submit``, ties in the
    order of ``jobs``): :func:`schedule_order` lists them. The model
    numbers jobs in that order, and a job's own random draws (job-level
    failures, random init / save / load laws) follow its number. A job
    submitted at or after the horizon (or after the replay ended) has no
    row.

    Raises :class:`ScheduleError` for a malformed row (named), a row the
    model refuses (a node count that does not fit the job, a job that does
    not fit the fleet), and a replay that cannot go on: no job running, no
    start possible and none of the waiting starts' nodes out of service
    (jobs waiting for nodes that other waiting jobs hold). With a policy
    that retires nodes (``Quarantine(duration=math.inf)``) a finite
    ``horizon`` is required: a start waiting for a retired node would wait
    for ever.

    A two-node job on nodes 0 and 1; node 0 fails at 1.5 h (half an hour
    after the last checkpoint) and is repaired in an hour; the job restarts
    on the same nodes at 2.5 h and ends 3 h later:

    >>> import acesim as ace
    >>> fleet = ace.Fleet(4, repair=ace.HOUR,
    ...                   node_failures=ace.NodeTrace.from_gaps({0: [1.5 * ace.HOUR]}, nodes=4))
    >>> jobs = [ace.Job(16, 4 * ace.HOUR, ace.HOUR, init=0.0, save=0.0, load=0.0)]
    >>> res = replay_schedule([(0, [0, 1], 0.0)], jobs, fleet)
    >>> [float(res.jobs[b][0]) for b in ("end", "wasted", "recovery_wait")]
    [19800.0, 1800.0, 3600.0]
    """
    if restart not in ("recorded", "free"):
        raise ValueError(f"restart must be 'recorded' or 'free', got {restart!r}")
    delay_law = None
    if restart_delay is not None:
        if restart != "free":
            raise ValueError("restart_delay: only with restart='free' (the rows give the restarts)")
        delay_law = as_distribution("restart_delay", restart_delay)
        if not delay_law.mean() >= 0.0 or math.isinf(delay_law.mean()):
            raise ValueError(
                f"restart_delay must have a finite mean >= 0, got {delay_law.mean()!r}"
            )
    model = FleetModel(fleet, failures, causes, policy, seed=seed, replica=replica, horizon=horizon)
    end = float(horizon)  # (FleetModel checked it)
    quarantine = policy.quarantine if policy is not None else None
    if quarantine is not None and math.isinf(quarantine.duration) and math.isinf(end):
        raise ValueError(
            "horizon: the policy retires nodes (Quarantine(duration=math.inf)); a start "
            "waiting for a retired node would wait for ever: pass a finite horizon"
        )
    planned, _ = _plan(schedule, jobs, fleet.nodes, submit)
    if min(p.runs[0].start for p in planned if p.runs) >= end:
        raise ScheduleError(f"schedule: no job starts before the horizon ({end!r})")
    by_id: dict[int, _Planned] = {}
    down: set[int] = set()  # nodes out of service, as the model reported them
    last_failure: dict[int, float] = {}  # node -> its last failure the model reported
    later: list[tuple[float, int, int, _Planned]] = []  # heap: starts not due yet
    due: list[_Planned] = []  # starts due, waiting for the model to accept them
    unfinished = sum(1 for p in planned if p.runs)  # jobs the schedule starts, not done
    running = 0
    seq = 0
    k = 0  # next job to submit

    def request(p: _Planned, ready: float, nodes: tuple[int, ...] | None, row: int) -> None:
        nonlocal seq
        p.request = _Request(ready, nodes, row, seq)
        heapq.heappush(later, (ready, row, seq, p))
        seq += 1

    def try_start(p: _Planned) -> bool:
        nonlocal running
        r = p.request
        assert r is not None
        nodes = list(r.nodes) if r.nodes is not None else free_set(p)
        if nodes is None:
            return False
        try:
            if not model.can_start(p.id, nodes):
                return False
            model.start(p.id, nodes)
        except ValueError as e:
            raise ScheduleError(f"schedule row {r.row} (job {p.key!r}): {e}") from None
        running += 1
        p.last = tuple(nodes)
        p.request = None
        due.remove(p)
        return True

    def free_set(p: _Planned) -> list[int] | None:
        # Its survivors, then the free nodes it still needs, healthy longest
        # first (earliest last failure or exit from service, never first;
        # then lowest id), as the built-in re-placement chooses them.
        held = model.nodes_of(p.id)
        need = len(p.last) - len(held)
        free = [n for n in model.free_nodes() if n not in held]
        free.sort(key=lambda n: (last_failure.get(n, -math.inf), n))
        return held + free[:need] if len(free) >= need else None

    def order(p: _Planned) -> tuple[float, int, int]:
        r = p.request
        assert r is not None
        return (r.ready, r.row, r.seq)

    def start_due(now: float) -> None:
        while later and later[0][0] <= now:
            due.append(heapq.heappop(later)[3])
        due.sort(key=order)
        # After a start (which may release a restarted job's survivors), from the top.
        while any(try_start(p) for p in list(due)):
            pass

    while True:
        now = model.now
        while k < len(planned) and planned[k].submit_at <= now and planned[k].submit_at < end:
            p = planned[k]
            try:
                p.id = model.submit(p.job)
            except ValueError as e:
                raise ScheduleError(f"job {p.key!r}: {e}") from None
            by_id[p.id] = p
            if p.runs:
                first = p.runs[0]
                p.used = 1
                request(p, first.start, first.nodes, first.row)
            k += 1
        start_due(now)
        if unfinished == 0 or now >= end:
            break
        until = min(
            later[0][0] if later else math.inf,
            planned[k].submit_at if k < len(planned) else math.inf,
            end,
        )
        if math.isinf(until):
            waiting = [(p.key, p.request) for p in due if p.request is not None]
            if (
                waiting
                and running == 0
                and all(r.nodes is not None and not down.intersection(r.nodes) for _, r in waiting)
            ):
                raise ScheduleError(
                    f"the replay is stuck at t={now!r}: "
                    + "; ".join(
                        f"job {key!r} waits for nodes {list(r.nodes or ())}" for key, r in waiting
                    )
                    + ", held by jobs that wait too"
                )
            if math.isinf(model.peek()):
                break  # nothing left to happen: the waiting starts never get their nodes
        for event in model.advance(until):
            if event.kind == "node_down":
                down.update(event.nodes)
                for n in event.nodes:
                    last_failure[n] = event.time
            elif event.kind == "node_up":
                down.difference_update(event.nodes)
            elif event.kind == "job_done":
                running -= 1
                unfinished -= 1
            elif event.kind == "job_failed" and event.job is not None:
                if event.fault_time is not None:
                    for n in event.nodes:
                        last_failure[n] = max(last_failure.get(n, -math.inf), event.fault_time)
                p = by_id[event.job]
                running -= 1
                if restart == "free":
                    wait = 0.0
                    if delay_law is not None:
                        wait = float(
                            delay_law.sample(
                                1,
                                seed,
                                job_stream(event.job, "replace"),
                                replica=replica,
                                first=p.delays,
                                gpus=p.job.gpus,
                            )[0]
                        )
                        p.delays += 1
                    request(p, event.time + wait, None, p.runs[-1].row)
                elif p.used < len(p.runs):
                    run = p.runs[p.used]
                    p.used += 1
                    request(p, max(run.start, event.time), run.nodes, run.row)
                else:
                    request(p, event.time, p.last, p.runs[-1].row)
    return model.result()
