"""Slurm accounting as ``sacct --parsable2`` prints it: reader and writer.

Ask Slurm for one line per run of every job, with the fields the reader
uses::

    sacct --allusers --duplicates --allocations --parsable2 \\
          --starttime 2024-01-01 --endtime 2024-02-01 \\
          --format JobID,JobName,State,Submit,Start,End,Elapsed,NNodes,NodeList,FailedNode,AllocTRES

``--duplicates`` keeps every run of a requeued job (without it Slurm shows
only the last one), ``--allocations`` leaves out the job steps (the reader
skips step lines such as ``123.batch``, ``123.extern`` and ``123.0``
anyway). Required: JobID, State, Start and End; the others add what they
say. ``FailedNode`` (Slurm 23.02 and later) says which node of a NODE_FAIL
run failed; without it a failed multi-node run's node is unknown.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .. import _atomic
from .._validation import finite, integer, repeated_column
from ._errors import HistoryFormatError
from ._io import PathArg, check_path, count, read_lines
from ._model import (
    CHECKPOINT_DTYPE,
    DEFAULT_FAILURE_STATES,
    History,
    RunState,
    TableBuilder,
    posix_origin,
)
from ._nodelist import MAX_TOTAL_NODES, NodeListError, compress_nodelist, expand_nodelist
from ._result import DEFAULT_EPOCH, node_namer, result_log
from ._times import format_duration, format_timestamp, parse_duration, parse_timestamp, to_posix

__all__ = ["SACCT_FIELDS", "SLURM_STATES", "read_sacct", "write_sacct"]

#: The fields write_sacct writes, in order (also a good --format for sacct).
SACCT_FIELDS = (
    "JobID",
    "JobName",
    "State",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "NNodes",
    "NodeList",
    "FailedNode",
    "AllocTRES",
)

_REQUIRED = ("JobID", "State", "Start", "End")

#: Slurm job states (long and short names) and the RunState each reads as;
#: None: the job has not started (its line holds no run).
SLURM_STATES: dict[str, RunState | None] = {
    "COMPLETED": RunState.COMPLETED,
    "CD": RunState.COMPLETED,
    "FAILED": RunState.FAILED,
    "F": RunState.FAILED,
    "NODE_FAIL": RunState.NODE_FAIL,
    "NF": RunState.NODE_FAIL,
    "PREEMPTED": RunState.PREEMPTED,
    "PR": RunState.PREEMPTED,
    "TIMEOUT": RunState.TIMEOUT,
    "TO": RunState.TIMEOUT,
    "DEADLINE": RunState.DEADLINE,
    "DL": RunState.DEADLINE,
    "CANCELLED": RunState.CANCELLED,
    "CA": RunState.CANCELLED,
    "REVOKED": RunState.CANCELLED,
    "RV": RunState.CANCELLED,
    "REQUEUED": RunState.REQUEUED,
    "RQ": RunState.REQUEUED,
    "REQUEUE_HOLD": RunState.REQUEUED,
    "RH": RunState.REQUEUED,
    "REQUEUE_FED": RunState.REQUEUED,
    "RF": RunState.REQUEUED,
    "SPECIAL_EXIT": RunState.REQUEUED,
    "SE": RunState.REQUEUED,
    "OUT_OF_MEMORY": RunState.OUT_OF_MEMORY,
    "OOM": RunState.OUT_OF_MEMORY,
    "BOOT_FAIL": RunState.BOOT_FAIL,
    "BF": RunState.BOOT_FAIL,
    "RUNNING": RunState.RUNNING,
    "R": RunState.RUNNING,
    "SUSPENDED": RunState.RUNNING,
    "S": RunState.RUNNING,
    "STOPPED": RunState.RUNNING,
    "ST": RunState.RUNNING,
    "COMPLETING": RunState.RUNNING,
    "CG": RunState.RUNNING,
    "CONFIGURING": RunState.RUNNING,
    "CF": RunState.RUNNING,
    "RESIZING": RunState.RUNNING,
    "RS": RunState.RUNNING,
    "SIGNALING": RunState.RUNNING,
    "SI": RunState.RUNNING,
    "STAGE_OUT": RunState.RUNNING,
    "SO": RunState.RUNNING,
    "PENDING": None,
    "PD": None,
    "RESV_DEL_HOLD": None,
    "RD": None,
}

_JOBID = re.compile(r"(\d+)(?:_(\d+|\[[0-9,\-%]*\]))?(?:\+(\d+))?(?:\.([A-Za-z0-9_]+))?", re.ASCII)
_NO_NODES = frozenset({"", "None assigned", "(null)", "None", "Unknown"})
_NO_TIME = frozenset({"", "Unknown", "None", "N/A"})


def _state(path: PathArg, line: int, text: str) -> RunState | None:
    word = text.strip().split(" ", 1)[0].rstrip("+")  # "CANCELLED by 123", "CANCELLED+"
    if word.upper() not in SLURM_STATES:
        raise HistoryFormatError(path, line, "State", f"unknown job state {text!r}")
    return SLURM_STATES[word.upper()]


def _time(path: PathArg, line: int, name: str, text: str) -> float | None:
    t = text.strip()
    if t in _NO_TIME:
        return None
    try:
        return parse_timestamp(t)
    except ValueError as exc:
        raise HistoryFormatError(path, line, name, str(exc)) from None


def _gpus_from_tres(path: PathArg, line: int, name: str, text: str) -> int | None:
    """GPUs in an AllocTRES string (``billing=8,cpu=8,gres/gpu=8,node=1``):
    ``gres/gpu`` or else the sum of typed ``gres/gpu:TYPE`` entries; 0 when the
    allocation has no GPU; None for an empty field."""
    t = text.strip()
    if not t:
        return None
    plain: int | None = None
    typed = 0
    for item in t.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HistoryFormatError(path, line, name, f"{item!r} is not KEY=VALUE")
        if key == "gres/gpu" or key.startswith("gres/gpu:"):
            n = count(path, line, name, value)
            if key == "gres/gpu":
                plain = n
            else:
                typed += n
    return plain if plain is not None else typed


def _nodes(path: PathArg, line: int, name: str, text: str) -> list[str]:
    t = text.strip()
    if t in _NO_NODES:
        return []
    try:
        return expand_nodelist(t)
    except NodeListError as exc:
        raise HistoryFormatError(path, line, name, f"garbled node list {text!r}: {exc}") from None


def _origin_seconds(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return to_posix(value)
    if isinstance(value, str):
        try:
            return parse_timestamp(value)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    raise TypeError(
        f"{name} must be a datetime, an ISO time string or None, got {type(value).__name__}"
    )


def _span_seconds(span: Any) -> tuple[float | None, float | None]:
    """``span`` as POSIX seconds (None: the file's own bound)."""
    if span is None:
        return None, None
    if isinstance(span, str | bytes) or not isinstance(span, Sequence) or len(span) != 2:
        raise TypeError(
            "span must be a (start, end) pair of datetimes, ISO time strings or None, "
            f"got {type(span).__name__}"
        )
    lo = _origin_seconds(span[0], "span[0]")
    hi = _origin_seconds(span[1], "span[1]")
    if lo is not None and hi is not None and hi < lo:
        raise ValueError("span ends before it starts")
    return lo, hi


def _columns(columns: Any) -> list[str]:
    """The field names of ``--noheader`` output, in order."""
    if isinstance(columns, str | bytes):
        raise TypeError(
            "columns must be a sequence of field names in the order of sacct's --format, "
            "such as ['JobID', 'State', 'Start', 'End'], not a string "
            "(split one with 'JobID,State,Start,End'.split(','))"
        )
    try:
        names = list(columns)
    except TypeError:
        raise TypeError(
            f"columns must be a sequence of field names, got {type(columns).__name__}"
        ) from None
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"columns[{i}] must be a str, got {type(name).__name__}")
    return names


def _fleet_nodes(nodes: Any) -> list[str] | None:
    """The fleet's node names from ``nodes`` (names or a Slurm host list)."""
    if nodes is None:
        return None
    if isinstance(nodes, str):
        try:
            return expand_nodelist(nodes)
        except NodeListError as exc:
            raise NodeListError(f"nodes: {exc}") from None
    if isinstance(nodes, bytes) or not isinstance(nodes, Iterable):
        raise TypeError(
            "nodes must be a Slurm host list string or an iterable of node names, "
            f"got {type(nodes).__name__}"
        )
    names = list(nodes)
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"nodes[{i}] must be a node name (a str), got {type(name).__name__}")
    return names


#: What ``checkpoints`` holds once checked: a History, an event log's path,
#: or (job name, time) pairs (a time in seconds from the origin, or a datetime).
_Checkpoints = History | PathArg | list[tuple[str, float | _dt.datetime]]


def _checkpoint_source(checkpoints: Any) -> _Checkpoints | None:
    """``checkpoints`` checked: TypeError/ValueError naming it when it is not
    a History, an event log's path or (job name, time) pairs."""
    if checkpoints is None or isinstance(checkpoints, History):
        return checkpoints
    if isinstance(checkpoints, str) or hasattr(checkpoints, "__fspath__"):
        return check_path("checkpoints", checkpoints)
    shape = "a History, an event log's path or (job name, time) pairs"
    if isinstance(checkpoints, bytes) or not isinstance(checkpoints, Iterable):
        raise TypeError(f"checkpoints must be {shape}, got {type(checkpoints).__name__}")
    pairs: list[tuple[str, float | _dt.datetime]] = []
    for i, item in enumerate(checkpoints):
        if isinstance(item, str | bytes):
            raise TypeError(f"checkpoints[{i}] must be a (job name, time) pair, got {item!r}")
        try:
            name, t = item
        except (TypeError, ValueError):
            raise TypeError(
                f"checkpoints[{i}] must be a (job name, time) pair, got {type(item).__name__}"
            ) from None
        if isinstance(t, _dt.datetime):
            pairs.append((str(name), t))
            continue
        if isinstance(t, str):
            try:
                seconds = float(t)
            except ValueError:
                raise ValueError(
                    f"checkpoints[{i}]: time {t!r} is neither seconds from the origin "
                    "nor a datetime"
                ) from None
            seconds = finite(f"checkpoints[{i}] time", seconds)
        else:
            try:
                seconds = finite(f"checkpoints[{i}] time", t)
            except TypeError:
                raise TypeError(
                    f"checkpoints[{i}]: the time must be seconds from the origin or a "
                    f"datetime, got {type(t).__name__}"
                ) from None
        pairs.append((str(name), seconds))
    return pairs


def read_sacct(
    path: PathArg,
    *,
    columns: Sequence[str] | None = None,
    origin: _dt.datetime | str | None = None,
    span: tuple[Any, Any] | None = None,
    nodes: Iterable[str] | str | None = None,
    gpus_per_node: int | None = None,
    failure_states: Iterable[str] = DEFAULT_FAILURE_STATES,
    checkpoints: Any = None,
) -> History:
    """Read ``sacct --parsable2`` output (``|``-separated, a header line; a
    trailing ``|`` as ``--parsable`` writes is accepted) into a
    :class:`History`.

    Each line with a Start is a run of its job (JobID ``123``, an array task
    ``123_4``, a heterogeneous component ``123+1``); lines of the same JobID
    are successive runs (``--duplicates``); step lines (``123.batch``,
    ``123.0``) are skipped; a PENDING line holds no run: the job waits in
    the queue at the end of the record (never started, or requeued after its
    runs), which counts in its queue or recovery wait; a job cancelled in
    the queue has no run. ``State`` may carry
    Slurm's suffixes (``CANCELLED by 123``); runs that end in one of
    ``failure_states`` are failures (cause: the state's name) at their End
    (sacct does not record the fault itself). A run still RUNNING has End
    ``Unknown``: it ends at Start + Elapsed when that field is there, else at
    the end of the record.

    ``columns``: the field names of a file printed with ``--noheader``, in
    the order of its ``--format``, as a sequence of strings (``SACCT_FIELDS``
    for a file printed with it); a single string is refused (TypeError), as
    it could be the comma-separated ``--format`` argument or a ``|``-joined
    header line: split it (``"JobID,State,Start,End".split(",")``).
    ``origin``: the time that becomes 0 (default: the earliest time in the
    file); times are Slurm's local wall clock, read without a time zone.
    ``span``: the observed window ``(start, end)`` (datetimes or ISO
    strings; default: the earliest and latest time in the file).
    ``nodes``: every node of the fleet (names or a Slurm host list), so the
    ones that never ran a job count too. GPUs come from ``AllocTRES``
    (``gres/gpu=N``), else an ``NGPUS`` column, else ``gpus_per_node`` x
    ``NNodes``, else they are unknown. ``checkpoints``: checkpoint times to
    split each run into kept and lost work: an event log path, a History
    (its checkpoint table, by job name), or (job name, time) pairs with
    times as datetimes or seconds from the origin.

    Raises TypeError or ValueError naming the argument for a bad argument:
    ``path`` not a str or os.PathLike, ``span`` not a (start, end) pair, a
    time of ``origin`` or ``span`` that is not a datetime or ISO time,
    ``nodes`` neither a host list nor node names, ``gpus_per_node`` not an
    integer >= 1, ``checkpoints`` none of the forms above.

    Raises :class:`HistoryFormatError` (a ValueError) naming the file, line
    and field for: an empty file, a missing header or required column, a
    line with the wrong number of fields, an unknown state, a bad time, an
    End before its Start or a Start before its Submit, a missing End for a
    finished run, a garbled node list or one whose length differs from
    NNodes, a FailedNode that is not one of the run's nodes, runs of one
    job that overlap.
    """
    check_path("path", path)
    names_given = None if columns is None else _columns(columns)
    origin_arg = _origin_seconds(origin, "origin")
    span_s = _span_seconds(span)
    fleet_nodes = _fleet_nodes(nodes)
    gpn = None if gpus_per_node is None else integer("gpus_per_node", gpus_per_node, minimum=1)
    ckpt_source = _checkpoint_source(checkpoints)
    states = {s.upper() for s in failure_states}
    for s in states:
        if s not in RunState.__members__:
            raise ValueError(f"failure_states: {s!r} is not a RunState name")
    failure_codes = {RunState[s] for s in states}
    lines = read_lines(path)
    if names_given is None:
        header_line, header_text = lines[0]
        header = [h.strip() for h in header_text.split("|")]
        if header and header[-1] == "":
            header = header[:-1]
        body = lines[1:]
        if "jobid" not in {h.lower() for h in header}:
            raise HistoryFormatError(
                path,
                header_line,
                "JobID",
                "no header line naming the fields (pass columns=... for --noheader output)",
            )
    else:
        header_line = 0
        header = names_given
        body = lines
    lower = {h.lower(): i for i, h in enumerate(header)}
    twice = repeated_column([h.lower() for h in header])
    if twice is not None:
        raise HistoryFormatError(
            path, header_line or None, header[lower[twice]], "the header names this field twice"
        )
    for name in _REQUIRED:
        if name.lower() not in lower:
            raise HistoryFormatError(
                path,
                header_line or None,
                name,
                f"missing field (the header has {'|'.join(header)})",
            )

    def get(fields: list[str], name: str) -> str | None:
        i = lower.get(name.lower())
        return None if i is None else fields[i]

    # (key, line, submit, start, end, state, nodes, nnodes, failed node, gpus)
    parsed: list[
        tuple[
            str,
            int,
            float | None,
            float,
            float | None,
            RunState,
            list[str],
            int | None,
            str | None,
            int | None,
        ]
    ] = []
    pending: list[tuple[str, int, float | None]] = []
    times: list[float] = []
    total_nodes = 0
    seen: list[tuple[int, str]] = []  # (line, job id) in file order
    for number, text in body:
        fields = text.split("|")
        if len(fields) == len(header) + 1 and fields[-1] == "":
            fields = fields[:-1]
        if len(fields) != len(header):
            raise HistoryFormatError(
                path, number, None, f"{len(fields)} fields, the header has {len(header)}"
            )
        raw_id = (get(fields, "JobID") or "").strip()
        m = _JOBID.fullmatch(raw_id)
        if m is None:
            raise HistoryFormatError(path, number, "JobID", f"{raw_id!r} is not a Slurm job id")
        if m.group(4) is not None:
            continue  # a job step
        key = raw_id
        seen.append((number, key))
        state = _state(path, number, get(fields, "State") or "")
        submit_text = get(fields, "Submit")
        submit = None if submit_text is None else _time(path, number, "Submit", submit_text)
        start = _time(path, number, "Start", get(fields, "Start") or "")
        end = _time(path, number, "End", get(fields, "End") or "")
        for t in (submit, start, end):
            if t is not None:
                times.append(t)
        if state is None or start is None:
            if (
                state is not None
                and state not in (RunState.CANCELLED, RunState.RUNNING)
                and end is not None
            ):
                raise HistoryFormatError(
                    path, number, "Start", f"a run that ended {state.name} has no Start"
                )
            pending.append((key, number, submit))
            continue
        if submit is not None and start < submit:
            raise HistoryFormatError(path, number, "Start", "Start is before Submit")
        if end is None:
            if state != RunState.RUNNING:
                raise HistoryFormatError(
                    path, number, "End", f"End is unknown for a run that ended {state.name}"
                )
            raw = get(fields, "ElapsedRaw")
            elapsed_text = get(fields, "Elapsed")
            if raw is not None and raw.strip():
                end = start + count(path, number, "ElapsedRaw", raw)
            elif elapsed_text is not None and elapsed_text.strip() not in _NO_TIME:
                try:
                    end = start + parse_duration(elapsed_text.strip())
                except ValueError as exc:
                    raise HistoryFormatError(path, number, "Elapsed", str(exc)) from None
            if end is not None:
                times.append(end)
        elif end < start:
            raise HistoryFormatError(path, number, "End", "End is before Start")
        nnodes_text = get(fields, "NNodes")
        nnodes = None
        if nnodes_text is not None and nnodes_text.strip():
            nnodes = count(path, number, "NNodes", nnodes_text)
        node_list_text = get(fields, "NodeList")
        node_list = (
            [] if node_list_text is None else _nodes(path, number, "NodeList", node_list_text)
        )
        if len(set(node_list)) != len(node_list):
            raise HistoryFormatError(path, number, "NodeList", "a node appears twice")
        total_nodes += len(node_list)
        if total_nodes > MAX_TOTAL_NODES:
            raise HistoryFormatError(
                path, number, "NodeList", f"more than {MAX_TOTAL_NODES} run nodes in the file"
            )
        if node_list and nnodes is not None and nnodes != len(node_list):
            raise HistoryFormatError(
                path,
                number,
                "NodeList",
                f"{len(node_list)} nodes, NNodes says {nnodes}",
            )
        if nnodes is None and node_list:
            nnodes = len(node_list)
        failed_text = get(fields, "FailedNode")
        failed: str | None = None
        if failed_text is not None and failed_text.strip() not in _NO_NODES:
            names = _nodes(path, number, "FailedNode", failed_text)
            if len(names) != 1:
                raise HistoryFormatError(path, number, "FailedNode", "more than one node")
            failed = names[0]
            if node_list and failed not in node_list:
                raise HistoryFormatError(
                    path, number, "FailedNode", f"{failed!r} is not one of the run's nodes"
                )
        gpus: int | None = None
        tres = get(fields, "AllocTRES")
        if tres is not None:
            gpus = _gpus_from_tres(path, number, "AllocTRES", tres)
        if gpus is None:
            ngpus = get(fields, "NGPUS")
            if ngpus is not None and ngpus.strip():
                gpus = count(path, number, "NGPUS", ngpus)
        if gpus is None and gpn is not None and nnodes is not None:
            gpus = gpn * nnodes
        parsed.append((key, number, submit, start, end, state, node_list, nnodes, failed, gpus))

    if not parsed and not pending:
        raise HistoryFormatError(path, None, None, "no job lines (only steps or a header)")
    origin_s = origin_arg
    if origin_s is None:
        origin_s = min(times) if times else 0.0
    lo = span_s[0] if span_s[0] is not None else (min(times) if times else origin_s)
    hi = span_s[1] if span_s[1] is not None else (max(times) if times else origin_s)
    if hi < lo:
        raise ValueError("span ends before it starts")

    b = TableBuilder()
    if fleet_nodes is not None:
        for n in fleet_nodes:
            b.node(n)
    order = sorted(range(len(parsed)), key=lambda i: (parsed[i][0], parsed[i][3], parsed[i][1]))
    by_key: dict[str, list[int]] = {}
    for i in order:
        by_key.setdefault(parsed[i][0], []).append(i)
    index = {key: i for i, key in enumerate(dict.fromkeys(k for _, k in sorted(seen)))}
    first_seen = list(index)
    for key in first_seen:
        b.job(key)
    for key, _, submit in pending:
        j = b.job(key)
        b.job_waiting[j] = True  # a PENDING line: in the queue at the end
        if key in by_key:
            continue
        if submit is not None:
            b.job_submit[j] = submit - origin_s
    run_id = 0
    for key in sorted(by_key, key=lambda k: index[k]):
        j = b.job(key)
        prev_end: float | None = None
        prev_line = 0
        for attempt, i in enumerate(by_key[key]):
            _, number, submit, start, end, state, node_list, nnodes, failed, gpus = parsed[i]
            if prev_end is not None and start < prev_end:
                raise HistoryFormatError(
                    path,
                    number,
                    "Start",
                    f"this run of job {key} starts before its run on line {prev_line} ended",
                )
            if attempt == 0:
                if submit is not None:
                    b.job_submit[j] = submit - origin_s
                b.job_gpus[j] = -1 if gpus is None else gpus
            stop = (hi if end is None else end) - origin_s
            if stop < start - origin_s:
                raise HistoryFormatError(
                    path, number, "Start", "the run starts after the span ends"
                )
            node_ids = [b.node(name) for name in node_list]
            for node_id in node_ids:
                b.run_nodes.append((run_id, node_id))
            b.runs.append(
                (
                    run_id,
                    j,
                    attempt,
                    math.nan if submit is None else submit - origin_s,
                    start - origin_s,
                    stop,
                    int(state),
                    -1 if gpus is None else gpus,
                    -1 if nnodes is None else nnodes,
                    math.nan,
                    math.nan,
                    math.nan,
                )
            )
            if state in failure_codes:
                ev = b.event()
                cause = b.cause(state.name)
                if failed is not None:
                    hit = [b.node(failed)]
                elif len(node_ids) == 1:
                    hit = node_ids
                else:
                    hit = [-1]
                for node_id in hit:
                    b.failures.append((ev, stop, j, run_id, node_id, cause, 0, True))
            prev_end, prev_line = (hi if end is None else end), number
            run_id += 1
    knows = ["failed_nodes"] if lower.get("failednode") is not None else []
    if fleet_nodes is not None:
        knows.append("node_census")
    history = b.history(
        source=str(path),
        format="sacct",
        span=(lo - origin_s, hi - origin_s),
        origin=posix_origin(origin_s),
        knows=knows,
    )
    if ckpt_source is not None:
        history = _with_checkpoints(history, ckpt_source, origin_s)
    return history


def _with_checkpoints(history: History, checkpoints: _Checkpoints, origin_s: float) -> History:
    """The history with checkpoint rows added, each in the run of its job that
    holds its time (within a second, sacct's resolution; checkpoints outside
    every run are dropped)."""
    import numpy as np

    from ._events import read_events

    pairs: list[tuple[str, float, float]] = []  # (job, durable time, state taken)
    src: History | None
    if isinstance(checkpoints, History):
        src = checkpoints
    elif isinstance(checkpoints, list):
        src = None
        for name, when in checkpoints:
            t = to_posix(when) - origin_s if isinstance(when, _dt.datetime) else when
            pairs.append((name, t, t))
    else:
        src = read_events(checkpoints)
    if src is not None:
        shift = 0.0
        if src.origin is not None:
            shift = to_posix(src.origin) - origin_s
        for j, t, k in zip(
            src.checkpoints["job"].tolist(),
            src.checkpoints["time"].tolist(),
            src.checkpoints["taken"].tolist(),
            strict=True,
        ):
            taken = float(k) if math.isfinite(k) else float(t)
            pairs.append((src.job_names[int(j)], float(t) + shift, taken + shift))
    index = {name: j for j, name in enumerate(history.job_names)}
    runs = history.runs
    runs_of: dict[int, list[tuple[float, float, int]]] = {}
    for r in runs:
        runs_of.setdefault(int(r["job"]), []).append(
            (float(r["start"]), float(r["end"]), int(r["run"]))
        )
    for spans in runs_of.values():
        spans.sort()
    rows = []
    for name, t, taken in pairs:
        j = index.get(name)
        if j is None:
            continue
        # sacct keeps whole seconds: a checkpoint up to a second outside a run is in it
        spans = runs_of.get(j, [])
        i = bisect.bisect_right(spans, (t, math.inf, 0))
        near = [spans[k] for k in (i - 2, i - 1, i) if 0 <= k < len(spans)]
        near = [sp for sp in near if sp[0] - 1.0 <= t <= sp[1] + 1.0]
        if not near:
            continue
        # a run that holds it (one that ends at it before one that starts at it)
        best = min(near, key=lambda sp: (not sp[0] < t <= sp[1], not sp[0] <= t <= sp[1]))
        t = min(max(t, best[0]), best[1])
        taken = min(max(taken, best[0]), t)
        rows.append((j, best[2], t, math.nan, math.nan, taken))
    table = np.array(sorted(rows, key=lambda r: (r[0], r[2])), CHECKPOINT_DTYPE)
    return History(
        source=history.source,
        format=history.format,
        job_names=history.job_names,
        node_names=history.node_names,
        cause_names=history.cause_names,
        jobs=history.jobs,
        runs=history.runs,
        run_nodes=history.run_nodes,
        failures=history.failures,
        node_spells=history.node_spells,
        checkpoints=table,
        span=history.span,
        origin=history.origin,
        knows=(*history.knows, "checkpoints"),
    )


def write_sacct(
    res: Any,
    path: PathArg,
    replica: int = 0,
    *,
    node_names: Any = None,
    nodes: int | None = None,
    epoch: _dt.datetime = DEFAULT_EPOCH,
) -> None:
    """Write what Slurm would have recorded for replica ``replica`` of a
    simulation run with ``record_events=True``, as ``sacct --parsable2
    --duplicates --allocations --format`` :data:`SACCT_FIELDS` prints it.

    One line per run of a job (JobID: the job number; the runs of a job
    share it). A run ends at a failure (NODE_FAIL when the failure took one
    of its nodes out of service, naming it in FailedNode; else FAILED), at
    a preemption (PREEMPTED), at its time limit (TIMEOUT), at a planned
    maintenance stop (REQUEUED), or when the job is done (COMPLETED); a
    run still going at the horizon is RUNNING with End ``Unknown``; a job
    in the queue at the horizon (never started, or requeued) has a last
    PENDING line. A
    failed run ends when the failure is detected, as Slurm sees it. Submit
    is the job's submission for its first run and the previous run's end
    for the others (Slurm resets it at a requeue). Times are whole seconds
    from ``epoch`` (simulation time 0); node ``i`` is ``node_names[i]`` (a
    sequence or a callable; default ``node000``...); ``nodes``: the
    fleet's size when some nodes never appear in the result. sacct records
    no cause: :func:`write_events` keeps them.
    """
    check_path("path", path)
    log = result_log(res, replica, nodes)
    name = node_namer(log.nodes, node_names)
    base = to_posix(epoch)
    out = ["|".join(SACCT_FIELDS)]
    submits = {j: s for j, s, _ in log.jobs}
    gpus = {j: g for j, _, g in log.jobs}
    prev_end: dict[int, float] = {}
    for run in sorted(log.runs, key=lambda r: (r.job, r.start)):
        j = run.job
        submit = prev_end.get(j, submits.get(j, run.start))
        node_list = compress_nodelist(name(n) for n in run.nodes) if run.nodes else "None assigned"
        failed = ""
        if run.state == RunState.NODE_FAIL and run.failed_nodes:
            failed = name(run.failed_nodes[0])
        g = gpus.get(j, -1)
        end = run.end
        elapsed = (end if end is not None else log.span[1]) - run.start
        fields = [
            str(j),
            f"job{j}",
            run.state.name,
            format_timestamp(base + submit),
            format_timestamp(base + run.start),
            "Unknown" if end is None else format_timestamp(base + end),
            format_duration(elapsed),
            str(len(run.nodes)),
            node_list,
            failed,
            f"billing={max(g, 0)},gres/gpu={max(g, 0)},node={len(run.nodes)}",
        ]
        out.append("|".join(fields))
        if end is not None:
            prev_end[j] = end
    for j, submit, _ in log.jobs:
        if j in log.waiting:
            # in the queue when the record ends: never started, or requeued
            fields = [
                str(j),
                f"job{j}",
                "PENDING",
                format_timestamp(base + prev_end.get(j, submit)),
                "Unknown",
                "Unknown",
                "00:00:00",
                "",
                "None assigned",
                "",
                "",
            ]
            out.append("|".join(fields))
    _atomic.replace_file(path, "\n".join(out) + "\n")
