"""Readers of the public failure histories kept in ``../shared/data``
(see its README for sources, licences and caveats; the files are read in
place, never copied into acesim).

Each reader takes the file's path and returns a :class:`History` (or, for
the AcmeTrace summary, a table): timelines where the file has one (failure
times, node down times), preset :class:`Intervals` where it gives samples
(lifetimes, gaps), :class:`acesim.Cause` shares where it gives causes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._errors import HistoryFormatError
from ._io import PathArg, check_path, count, csv_rows, number
from ._model import History, Intervals, RunState, TableBuilder, _make_intervals, posix_origin
from ._nodelist import MAX_NODES
from ._times import parse_timestamp

__all__ = [
    "ACME_DTYPE",
    "SHARED_DATA",
    "read_acme_states",
    "read_bamboo_lifetimes",
    "read_bamboo_preemptions",
    "read_lanl_nodes",
    "read_lanl_systems",
    "read_llama3_causes",
    "read_philly",
    "read_shared",
    "read_titan_interfailure",
    "read_titan_lifetimes",
]

_Row = tuple[float, bool, int, float, float, int, int, bool]


def _stamp(path: PathArg, line: int, field: str, text: str) -> float:
    try:
        return parse_timestamp(text.strip())
    except ValueError as exc:
        raise HistoryFormatError(path, line, field, str(exc)) from None


def _flag(path: PathArg, line: int, field: str, text: str) -> bool:
    t = text.strip()
    if t not in ("0", "1"):
        raise HistoryFormatError(path, line, field, f"{text!r} is not 0 or 1")
    return t == "1"


def _competing(base: Intervals, causes: list[int], labels: list[str]) -> Intervals:
    """Cause-specific samples: each base sample once per cause, failed only
    for the cause that ended it (``causes[i]``; -1 censored, -2 unknown)."""
    codes = sorted({c for c in causes if c >= 0})
    groups = [(c, labels[c]) for c in codes]
    if any(c == -2 for c in causes):
        groups.append((-2, "unknown"))
    cause_arr = np.asarray(causes, np.int64)
    n = len(base)
    parts = [
        (cause_arr != code, np.full(n, g, np.int32), np.where(cause_arr == code, base.event, -1))
        for g, (code, _) in enumerate(groups)
    ]
    if not parts:
        return _make_intervals("cause", base.clock, [], [])
    k = len(parts)
    return Intervals(
        by="cause",
        clock=base.clock,
        samples=np.tile(base.samples, k),
        censored=np.concatenate([p[0] for p in parts]),
        group=np.concatenate([p[1] for p in parts]),
        labels=tuple(name for _, name in groups),
        start=np.tile(base.start, k),
        end=np.tile(base.end, k),
        event=np.concatenate([p[2] for p in parts]).astype(np.int32),
        gpus=np.tile(base.gpus, k),
        truncated=np.tile(base.truncated, k),
        partial=base.partial,
        note="cause-specific (competing risks)" + (f"; {base.note}" if base.note else ""),
        unattributed=base.unattributed,
    )


def read_titan_lifetimes(path: PathArg, *, batch: str | None = None) -> History:
    """Titan's GPU lifetimes (``titan_gpu_lifetimes.csv``: ``gpu_sn, batch,
    service_time_s, failed, failure_mode, n_install_periods``): one unit per
    GPU, its service time, censored when it was still running at the end
    (``failed`` 0). ``intervals("node")`` gives them (clock ``in_service``;
    the unit is a GPU), ``intervals("cause")`` the same per failure mode
    (DBE, OTB) as competing risks, ``causes()`` the mode counts. ``batch``:
    ``"old"`` or ``"new"`` keeps one batch (the old one wears out: censored
    Weibull shape about 2.6)."""
    from ..fleet import Cause

    _, rows = csv_rows(path, ("gpu_sn", "batch", "service_time_s", "failed", "failure_mode"))
    labels: list[str] = []
    samples: list[_Row] = []
    causes: list[int] = []
    modes: list[str] = []
    batches: list[str] = []
    for line, row in rows:
        b = row["batch"].strip()
        if batch is not None and b != batch:
            continue
        t = number(path, line, "service_time_s", row["service_time_s"])
        failed = _flag(path, line, "failed", row["failed"])
        mode = row["failure_mode"].strip().upper()
        if not failed and mode:
            raise HistoryFormatError(
                path, line, "failure_mode", "a failure mode on a GPU that did not fail"
            )
        code = -1
        if failed:
            if not mode:
                code = -2
            else:
                if mode not in modes:
                    modes.append(mode)
                code = modes.index(mode)
        g = len(labels)
        labels.append(row["gpu_sn"].strip())
        batches.append(b)
        samples.append((t, not failed, g, math.nan, math.nan, g if failed else -1, -1, False))
        causes.append(code)
    if not labels:
        raise HistoryFormatError(path, None, "batch", f"no GPU of batch {batch!r}")
    base = _make_intervals("node", "in_service", samples, labels)
    counts = {m: causes.count(i) for i, m in enumerate(modes)}
    return History(
        source=str(path),
        format="titan_lifetimes",
        node_names=labels,
        preset={"node": base, "cause": _competing(base, causes, modes)},
        preset_causes=tuple(Cause(m, counts[m]) for m in modes),
        meta={"batch": np.array(batches), "unit": "GPU"},
    )


def read_titan_interfailure(path: PathArg) -> History:
    """Titan's GPU failures in time (``titan_gpu_interfailure_s.csv``:
    ``event_time, event_type, inter_failure_s``): the fleet-wide failure
    times with their type (DBE, OTB) as cause. ``intervals("system")`` gives
    the gaps (timestamps are when a GPU was pulled, so events batch within
    seconds; its rate changes strongly over the years)."""
    _, rows = csv_rows(path, ("event_time", "event_type"))
    b = TableBuilder()
    prev = -math.inf
    times: list[float] = []
    for line, row in rows:
        t = _stamp(path, line, "event_time", row["event_time"])
        if t < prev:
            raise HistoryFormatError(path, line, "event_time", "earlier than the line before")
        prev = t
        cause = row["event_type"].strip().upper() or None
        times.append(t)
        b.failures.append((b.event(), t, -1, -1, -1, b.cause(cause), 0, True))
    if not times:
        raise HistoryFormatError(path, None, None, "no events after the header")
    origin = times[0]
    b.failures = [(e, t - origin, *rest) for e, t, *rest in b.failures]
    return b.history(
        source=str(path),
        format="titan_interfailure",
        span=(0.0, times[-1] - origin),
        origin=posix_origin(origin),
    )


def read_lanl_systems(path: PathArg, *, system: int | str | None = None) -> History:
    """LANL's failure records (``lanl_system_interfailure_s.csv``: ``system,
    nodes, procs, prob_started, node, cause, downtime_min,
    inter_failure_s``): each failure with its node, cause and downtime.
    Nodes are ``SYSTEM:NODE`` (every node of each system, from ``nodes``:
    the ones that never failed count too); each failure takes its node out
    for its downtime, so ``intervals("node")`` measures time in service,
    ``intervals("system")`` gives the gaps per system, ``causes()`` the
    cause counts. ``system`` keeps one system. Each system's window runs
    from its first to its last failure."""
    _, rows = csv_rows(path, ("system", "nodes", "prob_started", "node", "cause", "downtime_min"))
    b = TableBuilder()
    systems: list[str] = []
    sizes: dict[str, int] = {}
    spans: dict[int, list[float]] = {}
    node_system: list[int] = []
    records: list[tuple[int, float, int, int, float, int]] = []
    want = None if system is None else str(system)
    for line, row in rows:
        sys_name = str(count(path, line, "system", row["system"]))
        if want is not None and sys_name != want:
            continue
        size = count(path, line, "nodes", row["nodes"])
        if size > MAX_NODES:
            raise HistoryFormatError(path, line, "nodes", f"more than {MAX_NODES} nodes")
        if sizes.setdefault(sys_name, size) != size:
            raise HistoryFormatError(path, line, "nodes", f"system {sys_name} changes size")
        if sys_name not in systems:
            systems.append(sys_name)
            for n in range(size):
                b.node(f"{sys_name}:{n}")
                node_system.append(len(systems) - 1)
        s = systems.index(sys_name)
        node = count(path, line, "node", row["node"])
        if node >= size:
            raise HistoryFormatError(path, line, "node", f"node {node} of a {size}-node system")
        t = _stamp(path, line, "prob_started", row["prob_started"])
        down = number(path, line, "downtime_min", row["downtime_min"]) * 60.0
        cause = row["cause"].strip() or None
        records.append((s, t, b.node(f"{sys_name}:{node}"), b.cause(cause), down, line))
        span = spans.setdefault(s, [t, t])
        span[0], span[1] = min(span[0], t), max(span[1], t)
    if not records:
        raise HistoryFormatError(path, None, "system", f"no failures of system {system!r}")
    origin = min(t for _, t, *_ in records)
    by_node: dict[int, list[tuple[float, float, int]]] = {}
    for s, t, node, cause_id, length, _ in sorted(records, key=lambda r: (r[1], r[5])):
        b.failures.append((b.event(), t - origin, -1, -1, node, cause_id, s, True))
        by_node.setdefault(node, []).append((t - origin, t - origin + length, cause_id))
    for node, spells in by_node.items():
        # overlapping downtimes (a failure recorded while the node was down) merge
        merged: list[tuple[float, float, int]] = []
        for down, up, cause_id in sorted(spells):
            if merged and down <= merged[-1][1]:
                d0, u0, c0 = merged[-1]
                merged[-1] = (d0, max(u0, up), c0)
            else:
                merged.append((down, up, cause_id))
        for down, up, cause_id in merged:
            b.spells.append((node, down, up, cause_id, True))
    system_spans = [(spans[s][0] - origin, spans[s][1] - origin) for s in range(len(systems))]
    return b.history(
        source=str(path),
        format="lanl_systems",
        system_names=systems,
        node_systems=node_system,
        system_spans=system_spans,
        span=(min(a for a, _ in system_spans), max(e for _, e in system_spans)),
        origin=posix_origin(origin),
        knows=("node_spells", "node_census"),
    )


def read_lanl_nodes(path: PathArg) -> History:
    """LANL system 20's gaps between failures of the same node
    (``lanl_sys20_node_interfailure_s.csv``: ``node, prob_started,
    inter_failure_s``): ``intervals("node")`` gives them (wall clock, all
    uncensored: the file has no time from a node's last failure to the end,
    so it is ``partial``; zero gaps are records of one incident)."""
    _, rows = csv_rows(path, ("node", "prob_started", "inter_failure_s"))
    labels: list[str] = []
    index: dict[str, int] = {}
    samples: list[_Row] = []
    stamps: list[float] = []
    for line, row in rows:
        name = f"20:{count(path, line, 'node', row['node'])}"
        g = index.setdefault(name, len(labels))
        if g == len(labels):
            labels.append(name)
        t = _stamp(path, line, "prob_started", row["prob_started"])
        gap = number(path, line, "inter_failure_s", row["inter_failure_s"])
        samples.append((gap, False, g, t - gap, t, len(samples), -1, False))
        stamps.append(t)
    if not samples:
        raise HistoryFormatError(path, None, None, "no gaps after the header")
    origin = min(s[3] for s in samples)
    shifted = [
        (s, c, g, a - origin, e - origin, ev, gp, tr) for s, c, g, a, e, ev, gp, tr in samples
    ]
    note = "gaps between failures only: no censored time after each node's last failure"
    base = _make_intervals("node", "wall", shifted, labels, partial=True, note=note)
    return History(
        source=str(path),
        format="lanl_nodes",
        node_names=labels,
        preset={"node": base},
        origin=posix_origin(origin),
        span=(0.0, max(stamps) - origin),
    )


def read_philly(path: PathArg, *, passed: PathArg | None = None) -> History:
    """Microsoft Philly's interrupted training attempts
    (``philly_interrupted_attempt_runtime_s.csv``: ``job_id, num_gpus,
    size_class, attempt, attempt_runtime_s, restart_gap_s``) with the jobs
    that finally passed (``passed``, default ``philly_pass_jobs_ge2gpu.csv``
    beside it when it exists: ``job_id, submitted_time, num_gpus,
    n_attempts, wall_s, sum_attempt_s, ...``).

    With the passed jobs the history is a timeline: each job's runs follow
    one another from its ``submitted_time`` (its first start: the files give
    no queue wait), each interrupted attempt a ``FAILED`` run followed by its
    restart gap, the final attempt a ``COMPLETED`` run of the job's total
    attempt time less its interrupted attempts (``wall_s`` is checked to be
    the attempts plus the gaps). The files name no nodes and record no
    checkpoints: the reader takes each interrupted attempt's time as lost (a
    restart from scratch, so ``measured()`` gives ``kept`` and ``lost``) and
    its failures as job-level, struck when their run stopped (``to_model`` leaves nodes in service);
    ``intervals("job")`` gives each run's length, censored for the final
    one. Without the passed jobs only the interrupted attempts are known:
    preset samples, ``partial``. Only jobs that finally passed are in these
    files."""
    if passed is not None:
        check_path("passed", passed)
    _, rows = csv_rows(path, ("job_id", "num_gpus", "attempt", "attempt_runtime_s"))
    has_gap: bool | None = None
    labels: list[str] = []
    index: dict[str, int] = {}
    samples: list[_Row] = []
    attempts: dict[int, list[tuple[float, float]]] = {}
    for line, row in rows:
        name = row["job_id"].strip()
        if not name:
            raise HistoryFormatError(path, line, "job_id", "empty")
        g = index.setdefault(name, len(labels))
        if g == len(labels):
            labels.append(name)
        gpus = count(path, line, "num_gpus", row["num_gpus"])
        attempt = count(path, line, "attempt", row["attempt"])
        if attempt != len(attempts.get(g, [])) + 1:
            raise HistoryFormatError(
                path, line, "attempt", f"{attempt} does not follow the job's attempts so far"
            )
        runtime = number(path, line, "attempt_runtime_s", row["attempt_runtime_s"])
        if has_gap is None:
            has_gap = "restart_gap_s" in row
        gap = number(path, line, "restart_gap_s", row["restart_gap_s"]) if has_gap else math.nan
        attempts.setdefault(g, []).append((runtime, gap))
        samples.append((runtime, False, g, math.nan, math.nan, len(samples), gpus, False))
    if passed is None:
        candidate = Path(path).with_name("philly_pass_jobs_ge2gpu.csv")
        passed = candidate if candidate.exists() else None
    if passed is None:
        note = "only jobs that finally passed; without the passed jobs there is no censored sample"
        base = _make_intervals("job", "held", samples, labels, partial=True, note=note)
        return History(source=str(path), format="philly", job_names=labels, preset={"job": base})
    if not has_gap and attempts:
        raise HistoryFormatError(path, 1, "restart_gap_s", "missing: the timeline needs the gaps")
    _, prow = csv_rows(
        passed,
        ("job_id", "submitted_time", "num_gpus", "n_attempts", "wall_s", "sum_attempt_s"),
        "passed",
    )
    b = TableBuilder()
    seen: set[str] = set()
    lo, hi = math.inf, -math.inf
    for line, row in prow:
        name = row["job_id"].strip()
        if not name:
            raise HistoryFormatError(passed, line, "job_id", "empty")
        if name in seen:
            raise HistoryFormatError(passed, line, "job_id", f"{name!r} is listed twice")
        seen.add(name)
        submitted = _stamp(passed, line, "submitted_time", row["submitted_time"])
        gpus = count(passed, line, "num_gpus", row["num_gpus"])
        n_attempts = count(passed, line, "n_attempts", row["n_attempts"])
        wall = number(passed, line, "wall_s", row["wall_s"])
        total = number(passed, line, "sum_attempt_s", row["sum_attempt_s"])
        before = attempts.get(index.get(name, -1), [])
        if n_attempts != len(before) + 1:
            raise HistoryFormatError(
                passed,
                line,
                "n_attempts",
                f"{n_attempts} attempts, but {len(before)} interrupted ones are recorded",
            )
        final = total - math.fsum(r for r, _ in before)
        if final < 0:
            raise HistoryFormatError(
                passed, line, "sum_attempt_s", "less than the interrupted attempts' run time"
            )
        gaps = math.fsum(gap for _, gap in before)
        if abs(wall - total - gaps) > 1e-6 * max(wall, 1.0):
            raise HistoryFormatError(
                passed,
                line,
                "wall_s",
                f"{wall!r} is not the attempts' {total!r} s plus the restart gaps' {gaps!r} s",
            )
        j = b.job(name)
        b.job_gpus[j] = gpus
        t = submitted
        lo = min(lo, t)
        for k, (runtime, gap) in enumerate([*before, (final, 0.0)]):
            end = t + runtime
            failed = k < len(before)
            state = RunState.FAILED if failed else RunState.COMPLETED
            run_id = len(b.runs)
            progress = 0.0 if failed else math.nan
            b.runs.append(
                (run_id, j, k, math.nan, t, end, int(state), gpus, -1, math.nan, math.nan, progress)
            )
            if failed:
                b.failures.append((b.event(), end, j, run_id, -1, -1, 0, True))
            t = end + gap
        hi = max(hi, t)
    if not seen:
        raise HistoryFormatError(passed, 1, None, "no jobs")
    for name in labels:
        if name not in seen:
            raise HistoryFormatError(path, 1, "job_id", f"{name!r} is not among the passed jobs")
    b.runs = [(*r[:4], r[4] - lo, r[5] - lo, *r[6:]) for r in b.runs]
    b.failures = [(e, t - lo, *rest) for e, t, *rest in b.failures]
    return b.history(
        source=str(path),
        format="philly",
        span=(0.0, hi - lo),
        origin=posix_origin(lo),
        knows=["checkpoints"],
        meta={"passed": str(passed)},
    )


def read_bamboo_lifetimes(path: PathArg, *, trace: str | None = None) -> History:
    """AWS spot instances' lifetimes from Bamboo
    (``bamboo_aws_spot_instance_lifetimes.csv``: ``trace, node, add_s,
    remove_s, lifetime_s, preempted``): one unit per instance, from its
    start to its preemption, censored when it was not preempted.
    ``intervals("node")`` gives them; ``trace`` keeps one trace (p3, g4dn)."""
    from ..fleet import Cause

    _, rows = csv_rows(path, ("trace", "node", "add_s", "remove_s", "lifetime_s", "preempted"))
    labels: list[str] = []
    samples: list[_Row] = []
    for line, row in rows:
        tr = row["trace"].strip()
        if trace is not None and tr != trace:
            continue
        add = number(path, line, "add_s", row["add_s"])
        life = number(path, line, "lifetime_s", row["lifetime_s"])
        preempted = _flag(path, line, "preempted", row["preempted"])
        if row["remove_s"].strip() or preempted:
            # a censored instance has no removal: it ran to the end of the trace
            remove = number(path, line, "remove_s", row["remove_s"])
            if remove < add:
                raise HistoryFormatError(path, line, "remove_s", "before add_s")
            if abs((remove - add) - life) > 1.0:
                raise HistoryFormatError(path, line, "lifetime_s", "is not remove_s - add_s")
        else:
            remove = add + life
        g = len(labels)
        labels.append(f"{tr}/{row['node'].strip()}")
        samples.append((life, not preempted, g, add, remove, g if preempted else -1, -1, add <= 0))
    if not labels:
        raise HistoryFormatError(path, None, "trace", f"no instance of trace {trace!r}")
    base = _make_intervals("node", "in_service", samples, labels)
    failures = int(np.count_nonzero(~base.censored))
    return History(
        source=str(path),
        format="bamboo_lifetimes",
        node_names=labels,
        preset={
            "node": base,
            "cause": _competing(
                base, [-1 if c else 0 for c in base.censored.tolist()], ["spot preemption"]
            ),
        },
        preset_causes=(Cause("spot preemption", failures),),
        meta={"unit": "spot instance"},
    )


def read_bamboo_preemptions(path: PathArg) -> History:
    """AWS spot preemption events from Bamboo
    (``bamboo_aws_{p3,g4dn}_preemption_events.csv``: ``t_s, n_preempted,
    gap_s``; the 64-node trace has ``time`` instead of ``t_s``): fleet-wide
    events, each taking ``n_preempted`` instances at once (their names are
    not recorded). ``intervals("system")`` gives the gaps;
    ``meta["instances"]`` how many each event took."""
    header, rows = csv_rows(path, ("n_preempted",))
    column = "t_s" if "t_s" in header else "time"
    if column not in header:
        raise HistoryFormatError(path, 1, "t_s", "missing column (t_s or time)")
    b = TableBuilder()
    times: list[float] = []
    sizes: list[int] = []
    for line, row in rows:
        if column == "t_s":
            t = number(path, line, "t_s", row["t_s"])
        else:
            t = _stamp(path, line, "time", row["time"])
        if times and t < times[-1]:
            raise HistoryFormatError(path, line, column, "earlier than the line before")
        n = count(path, line, "n_preempted", row["n_preempted"])
        times.append(t)
        sizes.append(n)
        b.failures.append((b.event(), t, -1, -1, -1, b.cause("spot preemption"), 0, True))
    if not times:
        raise HistoryFormatError(path, None, None, "no events after the header")
    origin = times[0] if column == "time" else 0.0
    b.failures = [(e, t - origin, *rest) for e, t, *rest in b.failures]
    return b.history(
        source=str(path),
        format="bamboo_preemptions",
        span=(min(0.0, times[0] - origin), times[-1] - origin),
        origin=posix_origin(origin) if column == "time" else None,
        meta={"instances": np.array(sizes, np.int64)},
    )


def read_llama3_causes(path: PathArg) -> History:
    """Llama 3 405B pre-training's interruptions by root cause
    (``llama3_interruptions.csv``: ``component, category, count``; Table 5
    of the Llama 3 paper): ``causes()`` gives them as :class:`acesim.Cause`
    with the counts as shares and the detection and repair assumptions of
    :data:`acesim.LLAMA3_CAUSES` (equal to it for the published table);
    ``meta`` holds the run's size (16,384 GPUs, 54 days, 419 unexpected
    and 47 planned interruptions). No timeline: no intervals."""
    from ..fleet import _llama3_cause

    _, rows = csv_rows(path, ("component", "category", "count"))
    causes = []
    total = 0
    for line, row in rows:
        component = row["component"].strip()
        if not component:
            raise HistoryFormatError(path, line, "component", "empty")
        n = count(path, line, "count", row["count"])
        total += n
        causes.append(_llama3_cause(component, row["category"].strip(), n))
    if not causes:
        raise HistoryFormatError(path, None, None, "no causes after the header")
    return History(
        source=str(path),
        format="llama3_causes",
        cause_names=[c.name for c in causes],
        preset_causes=causes,
        meta={"gpus": 16384, "days": 54, "interruptions": total, "planned_interruptions": 47},
    )


#: One row per cluster of the AcmeTrace summary: job counts and sizes,
#: run times (seconds), and final-state shares by job count and by GPU time
#: (NaN where the source has none).
ACME_DTYPE = np.dtype(
    [
        ("cluster", "U32"),
        ("gpu_jobs", "<i8"),
        ("mean_gpus", "<f8"),
        ("median_gpus", "<f8"),
        ("max_gpus", "<f8"),
        ("mean_run_time", "<f8"),
        ("median_run_time", "<f8"),
        ("max_run_time", "<f8"),
        ("completed", "<f8"),
        ("cancelled", "<f8"),
        ("failed", "<f8"),
        ("completed_gpu_time", "<f8"),
        ("cancelled_gpu_time", "<f8"),
        ("failed_gpu_time", "<f8"),
    ]
)

_ACME_COLUMNS = (
    ("gpu_job_num", "gpu_jobs"),
    ("avg_gpu_num", "mean_gpus"),
    ("med_gpu_num", "median_gpus"),
    ("max_gpu", "max_gpus"),
    ("avg_run_time_gpu", "mean_run_time"),
    ("med_run_time_gpu", "median_run_time"),
    ("max_run_time_gpu", "max_run_time"),
    ("complete_rate_gpu", "completed"),
    ("cancel_rate_gpu", "cancelled"),
    ("fail_rate_gpu", "failed"),
    ("complete_rate_gpu_time", "completed_gpu_time"),
    ("cancel_rate_gpu_time", "cancelled_gpu_time"),
    ("fail_rate_gpu_time", "failed_gpu_time"),
)


def read_acme_states(path: PathArg) -> npt.NDArray[Any]:
    """AcmeTrace's per-cluster job final states
    (``acme_cluster_job_state_summary.csv``): a structured array
    (:data:`ACME_DTYPE`), the shares of GPU jobs (and of GPU time) that
    completed, were cancelled or failed: the same split as
    ``History.measured().totals["gpu_hours_by_state"]``, for comparison.
    A summary, not a timeline: it is not a History."""
    _, rows = csv_rows(path, ("cluster", *(c for c, _ in _ACME_COLUMNS)))
    out = []
    for line, row in rows:
        rec: list[Any] = [row["cluster"].strip()]
        for column, field in _ACME_COLUMNS:
            text = row[column].strip()
            if field == "gpu_jobs":
                rec.append(count(path, line, column, text))
            elif not text:
                rec.append(math.nan)
            else:
                value = number(path, line, column, text)
                if field in ("completed", "cancelled", "failed") or field.endswith("_gpu_time"):
                    if value > 1.0:
                        raise HistoryFormatError(path, line, column, "a share above 1")
                rec.append(value)
        out.append(tuple(rec))
    if not out:
        raise HistoryFormatError(path, None, None, "no clusters after the header")
    return np.array(out, ACME_DTYPE)


#: The failure histories of ``../shared/data``: name -> (file, reader).
SHARED_DATA: dict[str, tuple[str, Callable[[PathArg], Any]]] = {
    "titan_lifetimes": ("titan_gpu_lifetimes.csv", read_titan_lifetimes),
    "titan_interfailure": ("titan_gpu_interfailure_s.csv", read_titan_interfailure),
    "lanl_systems": ("lanl_system_interfailure_s.csv", read_lanl_systems),
    "lanl_nodes": ("lanl_sys20_node_interfailure_s.csv", read_lanl_nodes),
    "philly": ("philly_interrupted_attempt_runtime_s.csv", read_philly),
    "bamboo_lifetimes": ("bamboo_aws_spot_instance_lifetimes.csv", read_bamboo_lifetimes),
    "bamboo_p3_preemptions": ("bamboo_aws_p3_preemption_events.csv", read_bamboo_preemptions),
    "bamboo_g4dn_preemptions": ("bamboo_aws_g4dn_preemption_events.csv", read_bamboo_preemptions),
    "bamboo_64node_preemptions": (
        "bamboo_aws_64node_20210726_preemption_events.csv",
        read_bamboo_preemptions,
    ),
    "llama3_causes": ("llama3_interruptions.csv", read_llama3_causes),
    "acme_states": ("acme_cluster_job_state_summary.csv", read_acme_states),
}


def read_shared(name: str, directory: PathArg) -> Any:
    """Read the shared history ``name`` (a key of :data:`SHARED_DATA`) from
    ``directory`` (the ``shared/data`` folder)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (a key of SHARED_DATA), got {type(name).__name__}")
    if name not in SHARED_DATA:
        raise ValueError(f"name must be one of {sorted(SHARED_DATA)}, got {name!r}")
    filename, reader = SHARED_DATA[name]
    return reader(Path(check_path("directory", directory)) / filename)
