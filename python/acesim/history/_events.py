"""The generic event log: one event per line, as JSON lines or CSV.

JSON lines (``.jsonl``, ``.json``, ``.ndjson`` or anything else): one JSON
object per line. CSV (``.csv``): a header naming some of the keys below
(``time`` and ``kind`` required), one event per row, empty cells for absent
keys, ``nodes`` as a Slurm host list (``gpu[001-004]``). Blank lines are
skipped; unknown keys are ignored.

Other names: a key (a CSV column, or a JSON key) may also be given by one of
its aliases (:data:`EVENT_ALIASES`, used only when the key itself is absent;
keys and aliases are matched without regard to case): ``timestamp``, ``ts``, ``datetime`` or
``date`` for ``time``; ``event``, ``type`` or ``event_type`` for ``kind``;
``host``, ``hostname`` or ``node_name`` for ``node``; ``hosts``,
``hostnames`` or ``nodelist`` for ``nodes``; ``job_id``, ``jobid`` for
``job``.

A log of failures only: a log whose events carry no ``kind`` at all (no such
column, no such key on any line) but name their node (``time,node`` rows) is
read as ``node_failure`` events, one per row.

Every problem with the columns (or, in JSON lines, with a line's ``time``
and ``kind``) is reported in one error naming each missing column, what it
holds and its other names.

Keys:

``time`` (every event)
    seconds (a number, integer or fractional, from any origin: epoch
    seconds or hours into the log), or an ISO 8601 time read by
    :meth:`datetime.datetime.fromisoformat` (``2024-01-02T03:04:05[.ffffff]``,
    with a zone as ``Z`` or ``+02:00``, or without one: UTC). One or the other
    in a file; a log whose ISO times mix zoned and naive ones is refused,
    naming the first line that differs.
``kind`` (every event)
    ``job_submit``, ``job_start``, ``job_stop``, ``job_failure``,
    ``checkpoint``, ``node_failure``, ``node_down``, ``node_up``,
    ``log_start``, ``log_end``.
``job``
    the job's name (a string or an integer): every ``job_*`` event and
    ``checkpoint``.
``nodes`` / ``node``
    node names (a list, or a Slurm host list string; ``node`` for one):
    the nodes of a ``job_start``; the nodes a ``job_failure`` or
    ``node_failure`` hit; the node of ``node_down`` / ``node_up``; every node
    of the fleet on ``log_start``.
``gpus``
    the job's GPUs (``job_submit`` or ``job_start``).
``cause``
    the failure's cause, a name (``job_failure``, ``node_failure``,
    ``node_down``).
``failure`` (``job_failure``, ``node_failure``, optional)
    an identifier (string or integer) shared by the records of one failure
    that hit several jobs or nodes (one record per job): they count as one
    failure, and must carry the same time. Records without it are separate
    failures.
``origin`` (``job_failure``, ``node_failure``, optional)
    the node where a failure that hit several nodes arose (a switch or a
    rack taking its neighbours down; with one record per job it hit, they
    all name the same origin). The other nodes, and the jobs that did not
    hold the origin, were hit by a failure from elsewhere: it interrupts
    them but is not one of their own failures (``History.intervals`` does
    not end their samples). Without it every node listed failed.
``state``
    how a run ended (``job_stop``): ``COMPLETED``, ``FAILED``,
    ``NODE_FAIL``, ``PREEMPTED``, ``TIMEOUT``, ``CANCELLED``, ``REQUEUED``,
    ``OUT_OF_MEMORY``, ``BOOT_FAIL``, ``DEADLINE``.
``reason``
    why a node left service (``node_down``): ``failure`` (the default) or
    ``maintenance`` / ``drain`` / ``other``.
``requeued`` (``job_stop``, optional)
    true when the job went back to the queue after this run: if it has not
    started again when the log ends, it is still waiting then. Without it
    a job's record ends with its last run.
``setup`` (``job_start``, optional)
    seconds from the start until the job computed (init + checkpoint load).
``duration``, ``progress``, ``taken`` (``checkpoint``, optional)
    seconds the job was blocked writing it; the work it holds (seconds of
    computation); when the state it holds was taken, for a checkpoint
    persisted in the background after a snapshot (default: its ``time``).
    ``progress`` on ``job_stop`` is the work the job keeps (what an
    interrupted run rolls back to): a checkpoint holding more did not
    survive the interruption (a local copy lost with its node).

Meaning: a run is a ``job_start`` until its ``job_stop`` (or the end of
the log: still running). A ``job_failure`` is the fault itself; the run
stops when it is detected (``job_stop`` with a failure state). A
``job_stop`` with a failure state and no ``job_failure`` is a failure at the
stop. A ``checkpoint`` is at the time it became durable. A
``node_failure`` is a failure of a node that ran no job (or that the job
survived). A ``node_down`` with reason ``failure`` and no failure event for
that node at that time is a failure of the node. ``log_start`` /
``log_end`` give the observed window (default: the first and last event);
a ``log_start`` listing the fleet's nodes also declares that node_down /
node_up are recorded for them (nodes that never went down were in service
throughout).

Example::

    {"time": 0, "kind": "log_start", "nodes": "node[000-007]"}
    {"time": 0, "kind": "job_submit", "job": "7", "gpus": 16}
    {"time": 60, "kind": "job_start", "job": "7", "nodes": ["node003", "node004"], "setup": 105}
    {"time": 3765, "kind": "checkpoint", "job": "7", "duration": 30, "progress": 3600}
    {"time": 5000, "kind": "job_failure", "job": "7", "nodes": ["node004"], "cause": "GPU"}
    {"time": 5000, "kind": "node_down", "node": "node004", "cause": "GPU"}
    {"time": 5060, "kind": "job_stop", "job": "7", "state": "NODE_FAIL"}
    {"time": 5060, "kind": "job_start", "job": "7", "nodes": "node[003,005]"}
    {"time": 9000, "kind": "node_up", "node": "node004"}
    {"time": 90000, "kind": "job_stop", "job": "7", "state": "COMPLETED"}
    {"time": 90000, "kind": "log_end"}
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import _atomic
from ._errors import HistoryFormatError
from ._io import PathArg, canonical_header, check_path, csv_rows, missing_columns, read_lines
from ._model import DEFAULT_FAILURE_STATES, History, RunState, TableBuilder, posix_origin
from ._nodelist import MAX_TOTAL_NODES, NodeListError, compress_nodelist, expand_nodelist
from ._result import cause_namer, node_namer, result_log
from ._times import MAX_SECONDS, parse_time, parse_timestamp, to_posix

__all__ = ["EVENT_ALIASES", "EVENT_FIELDS", "EVENT_KINDS", "read_events", "write_events"]

#: The event kinds of the generic log.
EVENT_KINDS = (
    "job_submit",
    "job_start",
    "job_stop",
    "job_failure",
    "checkpoint",
    "node_failure",
    "node_down",
    "node_up",
    "log_start",
    "log_end",
)

#: The columns of the CSV form, in the order write_events writes them.
EVENT_FIELDS = (
    "time",
    "kind",
    "job",
    "nodes",
    "gpus",
    "cause",
    "state",
    "reason",
    "setup",
    "duration",
    "progress",
    "taken",
    "failure",
    "origin",
    "requeued",
)

#: Other names accepted for a key (a CSV column or a JSON key) when the key
#: itself is absent; matched without regard to case.
EVENT_ALIASES: dict[str, tuple[str, ...]] = {
    "time": ("timestamp", "ts", "datetime", "date"),
    "kind": ("event", "type", "event_type"),
    "node": ("host", "hostname", "node_name"),
    "nodes": ("hosts", "hostnames", "nodelist"),
    "job": ("job_id", "jobid"),
}

#: Every key by its aliases (none for most): any key is matched without
#: regard to case.
_NAMES = {key: EVENT_ALIASES.get(key, ()) for key in (*EVENT_FIELDS, "node")}

#: What the required keys hold, for the error that names them missing.
_EXPECTS = {
    "time": "seconds, or ISO 8601 times such as 2024-01-02T03:04:05Z",
    "kind": "one of " + ", ".join(EVENT_KINDS) + "; a log of only time and node columns "
    "is read as node_failure events",
}

_STOP_STATES = {s.name: s for s in RunState if s != RunState.RUNNING}
_REASONS = ("failure", "maintenance", "drain", "other")


class _Reader:
    def __init__(self, path: PathArg, csv_form: bool) -> None:
        self.path = path
        self.csv = csv_form
        self.iso: bool | None = None
        self.zoned: tuple[bool, int] | None = None  # of the first ISO time, and its line
        self.total_nodes = 0
        self.failure_ids: dict[str, tuple[int, float]] = {}

    def err(self, line: int, field: str | None, reason: str) -> HistoryFormatError:
        return HistoryFormatError(self.path, line, field, reason)

    def time(self, line: int, value: Any) -> float:
        if isinstance(value, str) and not self.csv:
            iso = True
        elif isinstance(value, str):
            try:
                float(value)
                iso = False
            except ValueError:
                iso = True
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise self.err(line, "time", f"{value!r} is not a time")
        else:
            iso = False
        if self.iso is None:
            self.iso = iso
        elif self.iso != iso:
            raise self.err(line, "time", "the log mixes ISO times and numbers")
        if iso:
            try:
                seconds, zoned = parse_time(str(value).strip())
            except ValueError as exc:
                raise self.err(line, "time", str(exc)) from None
            if self.zoned is None:
                self.zoned = (zoned, line)
            elif self.zoned[0] != zoned:
                first = "with a zone" if self.zoned[0] else "without a zone"
                raise self.err(
                    line,
                    "time",
                    f"{value!r} {'has' if zoned else 'has no'} zone, but the time on line "
                    f"{self.zoned[1]} is {first}: a log's times are all zoned (Z, +02:00) "
                    "or all naive (UTC)",
                )
            return seconds
        return self.number(line, "time", value, minimum=-MAX_SECONDS)

    def number(self, line: int, field: str, value: Any, *, minimum: float = 0.0) -> float:
        if isinstance(value, str) and self.csv:
            try:
                x = float(value)
            except ValueError:
                raise self.err(line, field, f"{value!r} is not a number") from None
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise self.err(line, field, f"{value!r} is not a number")
        else:
            try:
                x = float(value)
            except OverflowError:
                raise self.err(line, field, "number too large") from None
        if not math.isfinite(x) or x < minimum or abs(x) > MAX_SECONDS:
            raise self.err(line, field, f"{value!r} is out of range")
        return x

    def count(self, line: int, field: str, value: Any) -> int:
        x = self.number(line, field, value)
        if x != int(x) or x > 2**31 - 1:
            raise self.err(line, field, f"{value!r} is not a whole number")
        return int(x)

    def name(self, line: int, field: str, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.err(line, field, f"{value!r} is not a name")
        text = str(value).strip()
        if not text or len(text) > 256 or not text.isprintable():
            raise self.err(
                line, field, f"{text[:40]!r} is not a name (empty, overlong or unprintable)"
            )
        return text

    def nodes(self, line: int, event: dict[str, Any]) -> list[str] | None:
        if "nodes" in event:
            field, value = "nodes", event["nodes"]
        elif "node" in event:
            field, value = "node", event["node"]
        else:
            return None
        if isinstance(value, str):
            try:
                names = expand_nodelist(value.strip())
            except NodeListError as exc:
                raise self.err(line, field, f"garbled node list {value!r}: {exc}") from None
        elif isinstance(value, list):
            names = [self.name(line, field, v) for v in value]
        else:
            raise self.err(line, field, f"{value!r} is not a list of node names")
        if len(set(names)) != len(names):
            raise self.err(line, field, "a node appears twice")
        self.total_nodes += len(names)
        if self.total_nodes > MAX_TOTAL_NODES:
            raise self.err(line, field, f"more than {MAX_TOTAL_NODES} node names in the file")
        return names

    def failure_event(self, line: int, event: dict[str, Any], t: float, b: TableBuilder) -> int:
        """The event number of a failure record: shared by records with the
        same ``failure`` id."""
        if "failure" not in event:
            return b.event()
        key = self.name(line, "failure", event["failure"])
        if key in self.failure_ids:
            ev, t0 = self.failure_ids[key]
            if t0 != t:
                raise self.err(line, "failure", f"failure {key} was at another time")
            return ev
        ev = b.event()
        self.failure_ids[key] = (ev, t)
        return ev

    def origin(self, line: int, event: dict[str, Any]) -> str | None:
        if "origin" not in event:
            return None
        return self.name(line, "origin", event["origin"])

    def events(self) -> list[tuple[int, dict[str, Any]]]:
        out: list[tuple[int, dict[str, Any]]] = []
        if self.csv:

            def required(header: list[str]) -> tuple[str, ...]:
                if "kind" not in header and ("node" in header or "nodes" in header):
                    return ("time",)  # a log of failures only
                return ("time", "kind")

            _, rows = csv_rows(self.path, required, aliases=_NAMES, expects=_EXPECTS)
            for number, row in rows:
                out.append((number, {k: v.strip() for k, v in row.items() if v.strip()}))
            if not out:
                raise HistoryFormatError(self.path, None, None, "no events after the header")
            return out
        for number, text in read_lines(self.path):
            try:
                event = json.loads(text)
            except (ValueError, RecursionError) as exc:
                reason = getattr(exc, "msg", None) or type(exc).__name__
                raise self.err(number, None, f"not a JSON object: {reason}") from None
            if not isinstance(event, dict):
                raise self.err(number, None, "not a JSON object")
            keys = canonical_header(list(event), _NAMES)
            out.append((number, dict(zip(keys, event.values(), strict=True))))
        return out


def _format(path: PathArg, fmt: str | None) -> bool:
    if fmt is None:
        return Path(path).suffix.lower() == ".csv"
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"format must be 'jsonl', 'csv' or None, got {fmt!r}")
    return fmt == "csv"


def read_events(
    path: PathArg,
    *,
    format: str | None = None,
    origin: _dt.datetime | str | None = None,
    failure_states: Iterable[str] = DEFAULT_FAILURE_STATES,
) -> History:
    """Read a generic event log (see this module's documentation for the
    format) into a :class:`History`.

    ``format``: ``"jsonl"`` or ``"csv"`` (default: from the suffix, ``.csv``
    for CSV). ``origin``: with ISO times, the time that becomes 0 (default:
    the earliest); numeric times are kept as they are. ``failure_states``:
    the job_stop states that are failures.

    Raises :class:`HistoryFormatError` (a ValueError) naming the file, line
    and field for: an empty file, a line that is not a JSON object or CSV
    row, a missing or unknown kind, a bad time or number, a job event
    without its job, a start while the job runs, a stop, failure or
    checkpoint outside a run, an unknown stop state, a run that stops in a
    non-failure state after a job_failure, a node that goes down twice,
    events after log_end, a garbled node list.
    """
    check_path("path", path)
    states = {s.upper() for s in failure_states}
    for s in states:
        if s not in RunState.__members__:
            raise ValueError(f"failure_states: {s!r} is not a RunState name")
    failure_codes = {RunState[s] for s in states}
    reader = _Reader(path, _format(path, format))
    raw = reader.events()
    timed: list[tuple[float, int, int, dict[str, Any]]] = []
    failures_only = all("kind" not in e for _, e in raw) and any(
        "node" in e or "nodes" in e for _, e in raw
    )
    for seq, (number, event) in enumerate(raw):
        if failures_only:
            event["kind"] = "node_failure"
        missing = [key for key in ("time", "kind") if key not in event]
        if missing:
            raise reader.err(
                number, missing[0], missing_columns(missing, _EXPECTS, EVENT_ALIASES, noun="key")
            )
        kind = event["kind"]
        if not isinstance(kind, str) or kind not in EVENT_KINDS:
            raise reader.err(
                number, "kind", f"unknown event kind {kind!r} (one of {', '.join(EVENT_KINDS)})"
            )
        timed.append((reader.time(number, event["time"]), seq, number, event))
    timed.sort(key=lambda item: (item[0], item[1]))
    origin_s: float | None
    if reader.iso:
        if origin is None:
            origin_s = timed[0][0]
        elif isinstance(origin, _dt.datetime):
            origin_s = to_posix(origin)
        else:
            origin_s = parse_timestamp(str(origin))
    else:
        if origin is not None:
            raise ValueError("origin applies to logs with ISO times; this one has numbers")
        origin_s = None
    shift = origin_s or 0.0

    b = TableBuilder()
    span_start: float | None = None
    span_end: float | None = None
    census = False
    # per job: the open run (its row index), its fault and whether it failed
    open_run: dict[int, int] = {}
    runs: list[list[Any]] = []
    attempts: dict[int, int] = {}
    run_failed: dict[int, bool] = {}
    run_lines: list[int] = []
    node_down: dict[int, int] = {}  # node -> open spell index
    node_seen: set[int] = set()
    failure_at: set[tuple[int, float]] = set()  # (node, time) of recorded failures
    setups: list[bool] = []
    durations: list[bool] = []
    last_time = -math.inf
    for t_abs, _, number, event in timed:
        t = t_abs - shift
        kind = event["kind"]
        if span_end is not None and kind != "log_end":
            raise reader.err(number, "time", "event after log_end")
        last_time = max(last_time, t)
        if kind == "log_start":
            if span_start is not None:
                raise reader.err(number, "kind", "a second log_start")
            if timed[0][0] - shift < t:
                raise reader.err(number, "time", "log_start after other events")
            span_start = t
            names = reader.nodes(number, event)
            if names is not None:
                census = True
                for n in names:
                    b.node(n)
            continue
        if kind == "log_end":
            if span_end is not None:
                raise reader.err(number, "kind", "a second log_end")
            span_end = t
            continue
        if kind in ("node_down", "node_up", "node_failure"):
            names = reader.nodes(number, event)
            if not names:
                raise reader.err(number, "nodes", f"{kind} needs its node")
            cause = event.get("cause")
            cause_id = b.cause(None if cause is None else reader.name(number, "cause", cause))
            if kind == "node_failure":
                origin = reader.origin(number, event)
                ev = reader.failure_event(number, event, t, b)
                for n in names:
                    node = b.node(n)
                    b.failures.append((ev, t, -1, -1, node, cause_id, 0, origin in (None, n)))
                    failure_at.add((node, t))
                continue
            if len(names) != 1:
                raise reader.err(number, "node", f"{kind} takes one node")
            node = b.node(names[0])
            if kind == "node_down":
                reason = event.get("reason", "failure")
                if reason not in _REASONS:
                    raise reader.err(number, "reason", f"unknown reason {reason!r}")
                if node in node_down:
                    raise reader.err(number, "node", f"{names[0]} goes down while it is down")
                failed = reason == "failure"
                node_down[node] = len(b.spells)
                b.spells.append((node, t, math.inf, cause_id, failed))
                if failed and (node, t) not in failure_at:
                    ev = b.event()
                    b.failures.append((ev, t, -1, -1, node, cause_id, 0, True))
                    failure_at.add((node, t))
            else:
                if node in node_down:
                    i = node_down.pop(node)
                    n0, down, _, c0, f0 = b.spells[i]
                    b.spells[i] = (n0, down, t, c0, f0)
                elif node in node_seen:
                    raise reader.err(number, "node", f"{names[0]} comes up while it is up")
                else:
                    # down since before the log began
                    b.spells.append((node, -math.inf, t, -1, False))
            node_seen.add(node)
            continue
        # job events
        if "job" not in event:
            raise reader.err(number, "job", f"{kind} needs its job")
        j = b.job(reader.name(number, "job", event["job"]))
        if "gpus" in event and kind in ("job_submit", "job_start"):
            b.job_gpus[j] = reader.count(number, "gpus", event["gpus"])
        if kind == "job_submit":
            if math.isfinite(b.job_submit[j]):
                raise reader.err(number, "job", f"job {b.job_names[j]} submitted twice")
            b.job_submit[j] = t
            b.job_waiting[j] = j not in attempts
            continue
        run = open_run.get(j)
        if kind == "job_start":
            b.job_waiting[j] = False
            if run is not None:
                raise reader.err(
                    number,
                    "job",
                    f"job {b.job_names[j]} starts while its run from line {run_lines[run]} runs",
                )
            names = reader.nodes(number, event) or []
            setup = math.nan
            if "setup" in event:
                setup = reader.number(number, "setup", event["setup"])
            setups.append(math.isfinite(setup))
            run = len(runs)
            attempt = attempts.get(j, 0)
            attempts[j] = attempt + 1
            for n in names:
                b.run_nodes.append((run, b.node(n)))
            runs.append(
                [
                    run,
                    j,
                    attempt,
                    math.nan,
                    t,
                    math.nan,
                    int(RunState.RUNNING),
                    b.job_gpus[j],
                    len(names) if names else -1,
                    math.nan,
                    setup,
                    math.nan,
                ]
            )
            run_lines.append(number)
            open_run[j] = run
            run_failed[run] = False
            continue
        if run is None:
            raise reader.err(number, "job", f"{kind} of job {b.job_names[j]} outside a run")
        row = runs[run]
        if kind == "checkpoint":
            duration = progress = math.nan
            if "duration" in event:
                duration = reader.number(number, "duration", event["duration"])
            if "progress" in event:
                progress = reader.number(number, "progress", event["progress"])
            taken = t
            if "taken" in event:
                taken = reader.time(number, event["taken"]) - shift
                if taken > t or taken < row[4]:
                    raise reader.err(
                        number, "taken", "not between the run's start and the checkpoint"
                    )
            durations.append(math.isfinite(duration))
            b.checkpoints.append((j, run, t, duration, progress, taken))
        elif kind == "job_failure":
            names = reader.nodes(number, event) or []
            cause = event.get("cause")
            cause_id = b.cause(None if cause is None else reader.name(number, "cause", cause))
            origin = reader.origin(number, event)
            ev = reader.failure_event(number, event, t, b)
            if not names:
                b.failures.append((ev, t, j, run, -1, cause_id, 0, True))
            for n in names:
                node = b.node(n)
                b.failures.append((ev, t, j, run, node, cause_id, 0, origin in (None, n)))
                failure_at.add((node, t))
            if not run_failed[run]:
                row[9] = t
            run_failed[run] = True
        else:  # job_stop
            state_text = event.get("state")
            if not isinstance(state_text, str) or state_text.upper() not in _STOP_STATES:
                raise reader.err(number, "state", f"unknown stop state {state_text!r}")
            state = _STOP_STATES[state_text.upper()]
            if run_failed[run] and state not in failure_codes:
                raise reader.err(number, "state", f"the run stops {state.name} after a job_failure")
            if state in failure_codes and not run_failed[run]:
                ev = b.event()
                b.failures.append((ev, t, j, run, -1, b.cause(state.name), 0, True))
                run_failed[run] = True
            row[5] = t
            row[6] = int(state)
            if "progress" in event:
                row[11] = reader.number(number, "progress", event["progress"])
            del open_run[j]
            requeued = event.get("requeued", False)
            if not isinstance(requeued, bool):
                if reader.csv and str(requeued).lower() in ("true", "false"):
                    requeued = str(requeued).lower() == "true"
                else:
                    raise reader.err(number, "requeued", f"{requeued!r} is not true or false")
            b.job_waiting[j] = requeued
    lo = span_start if span_start is not None else timed[0][0] - shift
    hi = span_end if span_end is not None else last_time
    for row in runs:
        if not math.isfinite(row[5]):
            row[5] = hi
    b.spells = [(n, max(d, lo) if d == -math.inf else d, u, c, f) for n, d, u, c, f in b.spells]
    runs_as_tuples = [tuple(r) for r in runs]
    b.runs = runs_as_tuples
    knows = []
    failed_runs = [r for r in runs_as_tuples if run_failed.get(int(r[0]), False)]
    if all(math.isfinite(r[9]) for r in failed_runs):
        knows.append("fault_times")
    if setups and all(setups):
        knows.append("setup")
    if b.checkpoints:
        knows.append("checkpoints")
        if all(durations):
            knows.append("checkpoint_durations")
    if census or b.spells:
        knows.append("node_spells")
    if census:
        knows.append("node_census")
    return b.history(
        source=str(path),
        format="events",
        span=(lo, hi),
        origin=posix_origin(origin_s),
        knows=knows,
    )


def write_events(
    res: Any,
    path: PathArg,
    replica: int = 0,
    *,
    node_names: Any = None,
    nodes: int | None = None,
    causes: Sequence[Any] | None = None,
    epoch: _dt.datetime | None = None,
    format: str | None = None,
) -> None:
    """Write replica ``replica`` of a simulation run with
    ``record_events=True`` as a generic event log (JSON lines, or CSV for a
    ``.csv`` path or ``format="csv"``), readable by :func:`read_events`.

    It holds: ``log_start`` with every node, each job's submit, every run's
    start (its nodes, GPUs and setup: init + load), durable checkpoints
    (blocking duration and progress; for an asynchronous one when its
    snapshot was taken, and no duration: the job's stall is more than the
    snapshot), each failure at its fault time
    (``job_failure`` with the nodes of the job it hit, ``node_failure`` for
    the nodes no interrupted job held), nodes leaving service (reason
    ``failure`` with the cause, or ``maintenance``) and returning, each run's
    stop at detection, preemption, time limit, maintenance or completion
    (states as :func:`write_sacct` writes them; none for a run still going at
    the horizon), and ``log_end``. Times are seconds (exact) unless
    ``epoch`` is a datetime, then ISO times from it. Node ``i`` is
    ``node_names[i]`` (default ``node000``...); ``causes`` (the Cause list
    given to simulate, or names) names the causes (default ``cause0``...).
    """
    check_path("path", path)
    csv_form = _format(path, format)
    log = result_log(res, replica, nodes)
    node = node_namer(log.nodes, node_names)
    cause = cause_namer(causes)
    base = None if epoch is None else to_posix(epoch)

    def stamp(t: float) -> Any:
        if base is None:
            return float(t)
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=base + t)).isoformat()

    # (time, priority, sequence, record): failures, then job events in
    # simulation order, then nodes leaving and returning at the same time
    records: list[tuple[float, int, int, dict[str, Any]]] = []
    seq = 0

    def add(t: float, priority: int, record: dict[str, Any]) -> None:
        nonlocal seq
        records.append((t, priority, seq, {"time": stamp(t), **record}))
        seq += 1

    add(log.span[0], 0, {"kind": "log_start", "nodes": [node(i) for i in range(log.nodes)]})
    for j, submit, gpus in log.jobs:
        add(submit, 2, {"kind": "job_submit", "job": str(j), "gpus": gpus})
    # the nodes each failure hit through the jobs it interrupted; the rest get
    # a node_failure record
    hit_nodes: dict[int, set[int]] = {}
    for ev, hits in log.job_hits.items():
        for _, hit in hits:
            hit_nodes.setdefault(ev, set()).update(hit)
    rest_nodes = {
        ev: [n for n in f.nodes if n not in hit_nodes.get(ev, set())]
        for ev, f in log.failures.items()
    }

    def identify(record: dict[str, Any], f: Any) -> dict[str, Any]:
        """Records of one failure share its id; a failure of several nodes names its origin."""
        records_of = len(log.job_hits.get(f.event, [])) + (1 if rest_nodes[f.event] else 0)
        if records_of > 1:
            record["failure"] = f.event
        if f.origin >= 0 and len(f.nodes) > 1:
            record["origin"] = node(f.origin)
        return record

    last_run = {run.job: run for run in sorted(log.runs, key=lambda r: r.start)}
    for run in sorted(log.runs, key=lambda r: (r.start, r.job)):
        start: dict[str, Any] = {
            "kind": "job_start",
            "job": str(run.job),
            "nodes": [node(n) for n in run.nodes],
        }
        if run.setup is not None:
            start["setup"] = run.setup
        add(run.start, 2, start)
        for t, duration, progress, taken in run.checkpoints:
            record: dict[str, Any] = {"kind": "checkpoint", "job": str(run.job)}
            if math.isfinite(duration):
                record["duration"] = duration
            if math.isfinite(progress):
                record["progress"] = progress
            if math.isfinite(taken) and taken != t:
                record["taken"] = stamp(taken)
            add(t, 2, record)
        for ev in run.failure_events:
            f = log.failures[ev]
            for j, hit in log.job_hits.get(ev, []):
                if j != run.job:
                    continue
                record = {
                    "kind": "job_failure",
                    "job": str(run.job),
                    "nodes": [node(n) for n in hit],
                    "cause": cause(f.cause),
                }
                add(f.time, 2, identify(record, f))
        if run.end is not None:
            stop: dict[str, Any] = {
                "kind": "job_stop",
                "job": str(run.job),
                "state": run.state.name,
            }
            if math.isfinite(run.progress):
                stop["progress"] = run.progress
            if run.state != RunState.COMPLETED and (
                run is not last_run[run.job] or run.job in log.waiting
            ):
                stop["requeued"] = True  # it ran again, or waits in the queue at the end
            add(run.end, 2, stop)
    for ev, f in sorted(log.failures.items()):
        if rest_nodes[ev]:
            record = {
                "kind": "node_failure",
                "nodes": [node(n) for n in rest_nodes[ev]],
                "cause": cause(f.cause),
            }
            add(f.time, 1, identify(record, f))
    for n, down, up, c, failed in log.spells:
        record = {
            "kind": "node_down",
            "node": node(n),
            "reason": "failure" if failed else "maintenance",
        }
        if failed:
            record["cause"] = cause(c)
        add(down, 3, record)
        if up is not None:
            add(up, 4, {"kind": "node_up", "node": node(n)})
    add(log.span[1], 9, {"kind": "log_end"})
    records.sort(key=lambda r: (r[0], r[1], r[2]))
    if csv_form:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(EVENT_FIELDS)
        for _, _, _, rec in records:
            row = []
            for key in EVENT_FIELDS:
                value = rec.get(key)
                if key == "nodes" and value is None and "node" in rec:
                    value = [rec["node"]]
                if key == "nodes" and isinstance(value, list):
                    value = compress_nodelist(value) if value else ""
                if isinstance(value, bool):
                    value = "true" if value else "false"
                row.append(
                    ""
                    if value is None
                    else (repr(value) if isinstance(value, float) else str(value))
                )
            writer.writerow(row)
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(rec, allow_nan=False) + "\n" for _, _, _, rec in records)
    _atomic.replace_file(path, text)
