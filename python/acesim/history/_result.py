"""The runs, failures and node spells of one replica of a simulation result,
as the writers lay them out."""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..simulation import EventKind, FailureSource, JobStatus, NodeEventKind, SimulationResult
from ._model import RunState

__all__ = ["ResultLog", "node_namer", "result_log"]

_SUBMIT = EventKind.SUBMIT
_START = EventKind.START_BEGIN
_COMPUTE = EventKind.COMPUTE_BEGIN
_CKPT_BEGIN = EventKind.CHECKPOINT_BEGIN
_CKPT_END = EventKind.CHECKPOINT_END
_FAILURE = EventKind.FAILURE
_DETECTED = EventKind.DETECTED
_DONE = EventKind.DONE
_HORIZON = EventKind.HORIZON
_PREEMPTED = EventKind.PREEMPTED
_MAINTENANCE = EventKind.MAINTENANCE
_TIME_LIMIT = EventKind.TIME_LIMIT
_DURABLE = EventKind.CHECKPOINT_DURABLE
_GROW = EventKind.GROW

#: 2024-01-01T00:00:00, where the writers put a simulation's time 0.
DEFAULT_EPOCH = _dt.datetime(2024, 1, 1)


@dataclass
class LoggedFailure:
    """One failure event: when, its cause, the nodes it hit."""

    event: int
    time: float
    cause: int
    source: int
    nodes: list[int]
    origin: int = -1  # the node where it arose (-1: unknown)


@dataclass
class LoggedRun:
    job: int
    start: float
    nodes: list[int]
    end: float | None = None  # None: still running at the end of the record
    state: RunState = RunState.RUNNING
    setup: float | None = None
    fault: float | None = None
    failure_events: list[int] = field(default_factory=list)
    failed_nodes: list[int] = field(default_factory=list)
    cause: int = -1
    progress: float = math.nan
    # (durable time, blocking seconds, progress, time its state was taken)
    checkpoints: list[tuple[float, float, float, float]] = field(default_factory=list)


@dataclass
class ResultLog:
    """What a scheduler and the node monitoring would have logged for a run."""

    jobs: list[tuple[int, float, int]]  # (job, submit, gpus), in job order
    runs: list[LoggedRun]
    failures: dict[int, LoggedFailure]
    job_hits: dict[int, list[tuple[int, list[int]]]]  # event -> [(job, its nodes hit)]
    # (node, down, up or None, cause, failure) per stretch out of service
    spells: list[tuple[int, float, float | None, int, bool]]
    nodes: int
    span: tuple[float, float]
    waiting: set[int] = field(default_factory=set)  # jobs in the queue at the end


def node_namer(nodes: int, node_names: Any) -> Callable[[int], str]:
    """Node index -> name: ``node_names`` is None (``node000``...), a
    sequence of names, or a callable."""
    if node_names is None:
        width = max(3, len(str(max(nodes - 1, 0))))
        return lambda i: f"node{i:0{width}d}"
    if callable(node_names):
        fn: Callable[[int], str] = node_names
        return lambda i: str(fn(i))
    names = [str(n) for n in node_names]
    if len(names) < nodes:
        raise ValueError(f"node_names has {len(names)} names for {nodes} nodes")
    if len(set(names)) != len(names):
        raise ValueError("node_names must be distinct")
    return lambda i: names[i]


def cause_namer(causes: Sequence[Any] | None) -> Callable[[int], str | None]:
    """Cause index -> name (None for -1): from Cause objects or names."""
    names: list[str] | None = None
    if causes is not None:
        names = [c if isinstance(c, str) else str(c.name) for c in causes]

    def name(i: int) -> str | None:
        if i < 0:
            return None
        if names is not None and i < len(names):
            return names[i]
        return f"cause{i}"

    return name


def _rows(table: Any, replica: int) -> Any:
    if table is None or table.size == 0:
        return table
    return table[table["replica"] == replica]


def result_log(res: Any, replica: int = 0, nodes: int | None = None) -> ResultLog:
    """Lay out replica ``replica`` of a SimulationResult run with
    ``record_events=True``."""
    if not isinstance(res, SimulationResult):
        raise TypeError(f"res must be a SimulationResult, got {type(res).__name__}")
    if res.events.size == 0 or res.placements is None or res.node_events is None:
        raise ValueError("res has no event log: simulate with record_events=True")
    if not 0 <= int(replica) < 2**32:
        raise ValueError(f"replica must be a replica of res, got {replica!r}")
    events = _rows(res.events, replica)
    if events.size == 0:
        raise ValueError(f"res has no events for replica {replica}")
    if np.any(events["kind"] == _GROW):
        raise ValueError(
            "an elastic job grew back onto more nodes: the event log does not say which "
            "nodes it took, so this run cannot be written as runs on named nodes"
        )
    jobs_rows = _rows(res.jobs, replica)
    trace = _rows(res.trace, replica)
    placements = _rows(res.placements, replica)
    node_events = _rows(res.node_events, replica)

    # every start's nodes, in the job's order: consecutive rows of one (job, time)
    starts: dict[tuple[int, float], list[list[int]]] = {}
    prev_key: tuple[int, float] | None = None
    for j, n, t in zip(
        placements["job"].tolist(),
        placements["node"].tolist(),
        placements["time"].tolist(),
        strict=True,
    ):
        key = (int(j), float(t))
        if key != prev_key:
            starts.setdefault(key, []).append([])
            prev_key = key
        starts[key][-1].append(int(n))

    failures: dict[int, LoggedFailure] = {}
    trace_by_job_time: dict[tuple[int, float], list[int]] = {}
    for ev, j, n, o, c, s, t in zip(
        trace["event"].tolist(),
        trace["job"].tolist(),
        trace["node"].tolist(),
        trace["origin"].tolist(),
        trace["cause"].tolist(),
        trace["source"].tolist(),
        trace["time"].tolist(),
        strict=True,
    ):
        if int(ev) not in failures:
            # a node-level failure arose on its origin node; a job-level one on
            # the blamed node of its first row (the job whose law fired)
            origin = int(o) if int(s) == FailureSource.NODE else int(n)
            failures[int(ev)] = LoggedFailure(int(ev), float(t), int(c), int(s), [], origin)
        f = failures[int(ev)]
        for node in (f.origin, int(n)):
            if node >= 0 and node not in f.nodes:
                f.nodes.append(node)
        if int(j) >= 0:
            trace_by_job_time.setdefault((int(j), float(t)), []).append(int(ev))
    went_down: dict[int, set[int]] = {}
    spells: list[tuple[int, float, float | None, int, bool]] = []
    open_spell: dict[int, int] = {}
    for n, k, ev, c, t in zip(
        node_events["node"].tolist(),
        node_events["kind"].tolist(),
        node_events["event"].tolist(),
        node_events["cause"].tolist(),
        node_events["time"].tolist(),
        strict=True,
    ):
        if k in (NodeEventKind.DOWN, NodeEventKind.MAINTENANCE):
            if k == NodeEventKind.DOWN and int(ev) in failures:
                went_down.setdefault(int(ev), set()).add(int(n))
                if int(n) not in failures[int(ev)].nodes:
                    failures[int(ev)].nodes.append(int(n))
            if int(n) not in open_spell:
                open_spell[int(n)] = len(spells)
                down = k == NodeEventKind.DOWN
                spells.append((int(n), float(t), None, int(c) if down else -1, down))
        elif k == NodeEventKind.UP and int(n) in open_spell:  # a quarantine row leaves it out
            i = open_spell.pop(int(n))
            node, down, _, cause, failed = spells[i]
            spells[i] = (node, down, float(t), cause, failed)

    submits: dict[int, float] = {}
    runs: list[LoggedRun] = []
    current: dict[int, LoggedRun] = {}
    last_ckpt_begin: dict[int, list[float]] = {}
    durable_jobs = {int(j) for j in events["job"][events["kind"] == _DURABLE].tolist()}
    pending_snapshots: dict[int, list[tuple[float, float]]] = {}  # (taken, progress)
    job_hits: dict[int, list[tuple[int, list[int]]]] = {}
    span_end = float(events["time"].max())
    for j, k, t, p in zip(
        events["job"].tolist(),
        events["kind"].tolist(),
        events["time"].tolist(),
        events["progress"].tolist(),
        strict=True,
    ):
        j, k, t = int(j), int(k), float(t)
        run = current.get(j)
        if k == _SUBMIT:
            submits[j] = t
        elif k == _START:
            groups = starts.get((j, t), [])
            node_list = groups.pop(0) if groups else []
            run = LoggedRun(job=j, start=t, nodes=node_list)
            runs.append(run)
            current[j] = run
        elif run is None:
            continue
        elif k == _COMPUTE:
            if run.setup is None:
                run.setup = t - run.start
        elif k == _CKPT_BEGIN:
            last_ckpt_begin.setdefault(j, []).append(t)
        elif k == _CKPT_END:
            begins = last_ckpt_begin.get(j, [])
            duration = t - begins.pop() if begins else math.nan
            if j in durable_jobs:
                # an asynchronous snapshot: durable when its persist ends; the
                # job's blocking time is more than the snapshot (it also waits
                # for a persist in flight), so it is left unknown
                pending_snapshots.setdefault(j, []).append((t, float(p)))
            else:
                run.checkpoints.append((t, duration, float(p), t))
        elif k == _DURABLE:
            snaps = pending_snapshots.get(j, [])
            taken, _ = snaps.pop(0) if snaps else (math.nan, math.nan)
            run.checkpoints.append((t, math.nan, float(p), taken))
        elif k == _FAILURE:
            evs = trace_by_job_time.get((j, t), [])
            if run.fault is None:
                run.fault = t
            for ev in evs:
                if ev in run.failure_events:
                    continue
                run.failure_events.append(ev)
                f = failures[ev]
                hit = [n for n in f.nodes if n in run.nodes] or f.nodes[:1]
                job_hits.setdefault(ev, []).append((j, hit))
                for n in hit:
                    if n not in run.failed_nodes:
                        run.failed_nodes.append(n)
                if run.cause < 0:
                    run.cause = f.cause
        elif k in (_DETECTED, _PREEMPTED, _TIME_LIMIT, _MAINTENANCE, _DONE, _HORIZON):
            if run.setup is None:
                run.setup = (run.fault if run.fault is not None else t) - run.start
            run.progress = float(p)
            if k == _HORIZON:
                span_end = max(span_end, t)
                current.pop(j)
                continue
            run.end = t
            if k == _DETECTED:
                lost: set[int] = set().union(
                    *(went_down.get(ev, set()) for ev in run.failure_events)
                )
                run.state = RunState.NODE_FAIL if lost & set(run.nodes) else RunState.FAILED
            elif k == _PREEMPTED:
                run.state = RunState.PREEMPTED
            elif k == _TIME_LIMIT:
                run.state = RunState.TIMEOUT
            elif k == _MAINTENANCE:
                run.state = RunState.REQUEUED
            else:
                run.state = RunState.COMPLETED
            current.pop(j)
            pending_snapshots.pop(j, None)
            last_ckpt_begin.pop(j, None)
    span_start = float(events["time"].min())
    # an unfinished job's row ends at the horizon, even when no event falls there
    unfinished = jobs_rows["end"][~jobs_rows["completed"]]
    if unfinished.size:
        span_end = max(span_end, float(unfinished.max()))
    n_nodes = 0
    for table, name in ((placements, "node"), (node_events, "node"), (trace, "node")):
        if table is not None and table.size:
            n_nodes = max(n_nodes, int(table[name].max()) + 1)
    if nodes is not None:
        if int(nodes) < n_nodes:
            raise ValueError(f"nodes={nodes}, but the result names node {n_nodes - 1}")
        n_nodes = int(nodes)
    gpus = {
        int(j): int(g)
        for j, g in zip(jobs_rows["job"].tolist(), jobs_rows["gpus"].tolist(), strict=True)
    }
    jobs = [(j, submits[j], gpus.get(j, -1)) for j in sorted(submits)]
    # QUEUED at the horizon: never started, or waiting for nodes again
    waiting = {
        int(j)
        for j, status in zip(jobs_rows["job"].tolist(), jobs_rows["status"].tolist(), strict=True)
        if int(status) == JobStatus.QUEUED and int(j) in submits
    }
    return ResultLog(
        jobs=jobs,
        runs=runs,
        failures=failures,
        job_hits=job_hits,
        spells=spells,
        nodes=n_nodes,
        span=(min(span_start, 0.0), span_end),
        waiting=waiting,
    )
