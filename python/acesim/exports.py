"""Failure traces in the formats schedulers already read, and back.

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
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from ._validation import integer
from .distributions import Distribution
from .fleet import NodeTrace
from .simulation import SimulationResult

__all__ = [
    "BATSIM_EVENT_TYPES",
    "NODE_EVENT_FIELDS",
    "NODE_FAILURE_DTYPE",
    "NODE_SPELL_DTYPE",
    "ExportError",
    "NodeEventFormatError",
    "node_failures",
    "node_spells",
    "read_batsim_events",
    "read_node_events",
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

_FORMATS = ("csv", "jsonl")
_OUT, _BACK, _DRAINED = 0, 1, 2  # NodeEventRecord kinds (records.hpp)
_START_BEGIN = 1  # EventKind::StartBegin


class ExportError(ValueError):
    """The result cannot be exported: it has no event log (run with
    ``record_events=True``), it was run without a fleet (no node pool), or
    its ``trace`` and ``node_events`` disagree (the message says where)."""


class NodeEventFormatError(ValueError):
    """A node-event or Batsim events file that does not follow its format;
    the message names the line and the field."""


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
        nodes = set(ev.nodes) | {m for (f, m) in spell_of if f == e}
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
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
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
    for column in needed:
        if column not in header:
            raise NodeEventFormatError(f"{name} line 1: the header lacks the column {column!r}")
    for record in reader:
        where = f"{name} line {reader.line_num}"
        if None in record:
            raise NodeEventFormatError(f"{where}: more cells than the header has columns")
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
