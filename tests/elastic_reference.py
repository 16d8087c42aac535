"""Independent reference model of ONE elastic job on a small fleet whose nodes
fail and are repaired (no code shared with acesim; it does not import it).

A plain discrete-event model (a heap of timed events) written from the
lifecycle semantics (synchronous baseline; section 3 "Elastic jobs") and
DESIGN.md sections 4 and 6 (fleet, node-level failures, hot spares, the
SPARES re-placement policy). There is no job-level failure process and no
horizon: every replica runs to DONE.

Fleet
-----
* ``fleet_nodes`` nodes (default ``nodes + spares``) of ``gpus_per_node``
  GPUs. Every node has its own renewal failure process in wall-clock time,
  busy or idle, fresh at t = 0 (its first gap drawn from the law itself). A
  node out of service (under repair) has no failure process; at its return
  a fresh gap is drawn from the return time. ``node_failures`` is a law, or
  a scripted dict ``{node: [gap, ...]}`` of each node's successive gaps
  (the first from t = 0, each next from its return to service; a node not
  named, or past its last gap, never fails again).
* Every node failure sends the node to repair (node_down). One cause is
  drawn by share per failure event (``causes``: (share, detect law) pairs;
  else one cause with ``detect``); its detection draw D is the job's
  detection when the failure hits the job, and the node is back in service
  at t_fault + D + R (R a draw of ``repair``): the repair begins when the
  fault is found, for an idle node too.
* Pools: the last ``spares`` nodes start as hot spares, the other nodes not
  taken by the job are free. Hot spares are a count: a node that comes back
  from repair refills the spare pool while it holds fewer than ``spares``
  nodes, else it is free. A recovering (or growing) job takes hot spares
  first, then free nodes; within a pool the healthiest first (the node whose
  last failure is oldest; never failed first; ties by lowest id). This
  choice only shapes statistics under non-exponential laws; the hand
  timelines never depend on it.

Job lifecycle (synchronous checkpoints)
----------------------------------------
* ``nodes`` nodes (N) wide, submitted at t = 0, starts at once on free nodes
  (never on hot spares). Every start costs init + load (``overhead``).
  Compute runs toward the next boundary min(c + interval, work) (c the last
  checkpoint); a synchronous write of ``save`` commits it (``ckpt_stall``);
  the checkpoint at ``work`` ends the job.
* A failure of a node the job holds, while it holds hardware (start,
  compute, write, reconfigure pause), rolls back to c: the progress since c
  and any write cut off are ``wasted``; a start or reconfigure pause cut off
  is ``overhead``. Then detection D (``detection``, the job holds its
  nodes). A node the job holds that fails during detection or while the
  job waits goes to repair; it is not another failure of the job.
* At the end of detection (replacement policy SPARES), with h nodes still
  held (in service) and N - h missing:
  - all N - h replacements at hand (hot spares + free nodes): it takes
    them and restarts at full width (init + load);
  - else, elastic (``min_gpus`` not None) and h * gpus_per_node >=
    min_gpus: it restarts at once on its h nodes, narrow (a shrink): the
    start costs init + load + one ``reconfigure`` draw (``overhead``);
  - else it waits holding its nodes (``recovery_wait``) until all the
    missing nodes are at hand (all or nothing: an elastic job below
    min_gpus does not start narrow when only part of them comes back), then
    takes them and restarts at full width (init + load). This is also the
    non-elastic job (``min_gpus`` None) after every failure.
* Narrow on h of N nodes: compute advances progress at rate r = (h/N) **
  scaling; a compute stretch of e seconds gives r*e progress (productive
  if kept, wasted if rolled back) and (1 - r)*e of ``narrow`` (narrow
  whether or not the progress is kept). Writes take their normal time.
* Growth: while the narrow job holds hardware (start, compute, write),
  as soon as all its missing nodes are at hand it takes them. Computing: it
  pauses for one ``reconfigure`` draw (``overhead``, no progress, no
  rollback), then computes at full rate. Starting or writing: the
  reconfigure pause comes when that phase ends, before the next compute
  (none after the final checkpoint). A node taken this way is held (a
  failure of it is a failure of the job); a failure before the pause
  cancels it. No growth during detection: recovery is decided at its end.
* Buckets: wall = productive + wasted + ckpt_stall + overhead + detection
  + queue_wait + recovery_wait + narrow (asserted; queue_wait is always 0
  here). ``failures`` counts failures that hit the job; ``shrinks`` narrow
  starts, ``grows`` growths, ``checkpoints`` completed writes.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from reference_draws import drawer

__all__ = ["BUCKETS", "FIELDS", "Law", "run_replicas", "simulate"]

Law = Callable[[np.random.Generator], float] | float
"""A sampler (called with the generator) or a plain number for a constant."""

BUCKETS: tuple[str, ...] = (
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "queue_wait",
    "recovery_wait",
    "narrow",
)
"""The time buckets; they add up to ``wall``."""

FIELDS: tuple[str, ...] = (
    "wall",
    *BUCKETS,
    "failures",
    "completed",
    "shrinks",
    "grows",
    "checkpoints",
)
"""The fields of one replica's result, in order."""

# job phases
_START, _COMPUTE, _WRITE, _RECONF, _DETECT, _WAIT, _DONE = range(7)
_HOLDING = (_START, _COMPUTE, _WRITE, _RECONF)
# event kinds
_NODE_FAIL, _NODE_BACK, _JOB = range(3)
# node pools
_JOB_POOL, _SPARE, _FREE, _DOWN = range(4)


def simulate(
    rng: np.random.Generator,
    *,
    nodes: int,
    work: float,
    interval: float,
    node_failures: Law | Mapping[int, Sequence[float]],
    repair: Law,
    spares: int = 0,
    fleet_nodes: int | None = None,
    gpus_per_node: int = 8,
    init: Law = 0.0,
    save: Law = 0.0,
    load: Law = 0.0,
    detect: Law | None = None,
    causes: Sequence[tuple[float, Law | None]] | None = None,
    min_gpus: int | None = None,
    reconfigure: Law = 0.0,
    scaling: float = 1.0,
    max_events: int = 10_000_000,
) -> dict[str, float]:
    """One replica from t = 0 to DONE; returns :data:`FIELDS` as a dict."""
    N = int(nodes)
    F = N + int(spares) if fleet_nodes is None else int(fleet_nodes)
    S = int(spares)
    if N < 1 or S < 0 or F < N + S:
        raise ValueError("need nodes >= 1, spares >= 0 and fleet_nodes >= nodes + spares")
    if not (work > 0 and math.isfinite(work) and interval > 0):
        raise ValueError("work and interval must be positive (work finite)")
    if min_gpus is not None and not (0 < min_gpus):
        raise ValueError("min_gpus must be positive or None")
    elastic = min_gpus is not None

    d_init, d_save, d_load = drawer(init, rng), drawer(save, rng), drawer(load, rng)
    d_reconf, d_repair = drawer(reconfigure, rng), drawer(repair, rng)
    if causes:
        shares = np.array([float(s) for s, _ in causes])
        if np.any(shares < 0) or shares.sum() <= 0:
            raise ValueError("cause shares must be >= 0 with a positive sum")
        cum = np.cumsum(shares / shares.sum())
        d_detects = [drawer(d, rng) for _, d in causes]

        def d_detect() -> float:
            k = min(int(np.searchsorted(cum, rng.random(), side="right")), len(d_detects) - 1)
            return d_detects[k]()
    else:
        d_detect = drawer(detect, rng)

    scripted = isinstance(node_failures, Mapping)
    if scripted:
        gaps = {int(n): [float(g) for g in v] for n, v in node_failures.items()}  # type: ignore[union-attr]
        gap_index = [0] * F
        d_gap = None
    else:
        d_gap = drawer(node_failures, rng)  # type: ignore[arg-type]

    def next_gap(n: int) -> float:
        if not scripted:
            return d_gap()  # type: ignore[misc]
        seq = gaps.get(n, ())
        k = gap_index[n]
        if k >= len(seq):
            return math.inf
        gap_index[n] = k + 1
        return seq[k]

    heap: list[tuple[float, int, int, int]] = []
    seq_no = 0

    def push(t: float, kind: int, arg: int) -> None:
        nonlocal seq_no
        if t < math.inf:
            heapq.heappush(heap, (t, seq_no, kind, arg))
            seq_no += 1

    # ---- nodes
    pool = [_FREE] * F
    last_failure = [-math.inf] * F
    for n in range(F - S, F):
        pool[n] = _SPARE
    spare_count = S
    free_count = F - S
    for n in range(F):
        push(next_gap(n), _NODE_FAIL, n)

    def healthiest(p: int) -> int:
        best = -1
        for n in range(F):
            if pool[n] == p and (best < 0 or last_failure[n] < last_failure[best]):
                best = n
        return best

    def take(k: int) -> None:
        nonlocal spare_count, free_count
        for _ in range(k):
            if spare_count > 0:
                n = healthiest(_SPARE)
                spare_count -= 1
            else:
                n = healthiest(_FREE)
                free_count -= 1
            pool[n] = _JOB_POOL
            held.add(n)

    # ---- job state
    out = dict.fromkeys(FIELDS, 0.0)
    held: set[int] = set()
    configured = N  # the width it computes at
    phase = _START
    phase_start = 0.0
    version = 0  # invalidates a scheduled phase end
    committed = 0.0  # progress of the last checkpoint
    seg = 0.0  # progress since it (not yet kept)
    boundary = min(interval, work)
    rate = 1.0
    shrink_start = False

    def schedule(t_end: float) -> None:
        push(t_end, _JOB, version)

    def begin(ph: int, t: float, duration: float) -> None:
        nonlocal phase, phase_start, version
        version += 1
        phase, phase_start = ph, t
        schedule(t + duration)

    def begin_compute(t: float) -> None:
        nonlocal rate
        rate = (configured / N) ** scaling
        begin(_COMPUTE, t, (boundary - committed - seg) / rate)

    def begin_start(t: float, shrink: bool) -> None:
        nonlocal configured, shrink_start, boundary
        configured = len(held)
        shrink_start = shrink
        boundary = min(committed + interval, work)
        duration = d_init() + d_load()
        if shrink:
            out["shrinks"] += 1
            duration += d_reconf()
        begin(_START, t, duration)

    def after_phase(t: float) -> None:
        """Start, write or reconfigure pause done: pause for a growth taken
        meanwhile, else compute."""
        nonlocal configured
        if len(held) > configured:  # grew during the phase
            configured = len(held)
            begin(_RECONF, t, d_reconf())
        else:
            begin_compute(t)

    def recover(t: float) -> None:
        nonlocal phase, phase_start, version
        missing = N - len(held)
        if missing <= spare_count + free_count:
            take(missing)
            begin_start(t, shrink=False)
        elif elastic and len(held) * gpus_per_node >= min_gpus:  # type: ignore[operator]
            begin_start(t, shrink=True)
        else:
            version += 1
            phase, phase_start = _WAIT, t

    def job_phase_end(t: float) -> None:
        nonlocal phase, phase_start, version, committed, seg, boundary
        elapsed = t - phase_start
        if phase == _START:
            out["overhead"] += elapsed
            after_phase(t)
        elif phase == _RECONF:
            out["overhead"] += elapsed
            begin_compute(t)
        elif phase == _COMPUTE:
            if rate != 1.0:
                out["narrow"] += elapsed - (boundary - committed - seg)
            seg = boundary - committed
            begin(_WRITE, t, d_save())
        elif phase == _WRITE:
            out["ckpt_stall"] += elapsed
            out["checkpoints"] += 1
            out["productive"] += seg
            committed, seg = boundary, 0.0
            if committed >= work:
                version += 1
                phase = _DONE
                return
            boundary = min(committed + interval, work)
            after_phase(t)
        elif phase == _DETECT:
            out["detection"] += elapsed
            recover(t)
        else:  # pragma: no cover
            raise AssertionError(phase)

    def job_fails(t: float, d: float) -> None:
        nonlocal phase, phase_start, version, seg
        elapsed = t - phase_start
        out["failures"] += 1
        if phase == _START or phase == _RECONF:
            out["overhead"] += elapsed
        elif phase == _COMPUTE:
            progress = rate * elapsed
            if rate != 1.0:
                out["narrow"] += elapsed - progress
            out["wasted"] += progress
        else:  # _WRITE
            out["wasted"] += elapsed
        out["wasted"] += seg
        seg = 0.0
        begin(_DETECT, t, d)

    def maybe_resume(t: float) -> None:
        """A node came back: a waiting job restarts, a narrow one grows."""
        nonlocal seg, configured
        missing = N - len(held)
        if missing == 0 or missing > spare_count + free_count:
            return
        if phase == _WAIT:
            out["recovery_wait"] += t - phase_start
            take(missing)
            begin_start(t, shrink=False)
        elif phase in _HOLDING:
            take(missing)
            out["grows"] += 1
            if phase == _COMPUTE:
                elapsed = t - phase_start
                progress = rate * elapsed
                out["narrow"] += elapsed - progress
                seg += progress
                configured = N
                begin(_RECONF, t, d_reconf())
            # start or write: the pause comes at its end (after_phase)

    # ---- first start: N free nodes at t = 0
    for _ in range(N):
        n = healthiest(_FREE)
        pool[n] = _JOB_POOL
        free_count -= 1
        held.add(n)
    begin_start(0.0, shrink=False)

    events = 0
    t = 0.0
    while phase != _DONE:
        if not heap:
            raise RuntimeError("no event left before the job is done")
        events += 1
        if events > max_events:
            raise RuntimeError("max_events exceeded")
        t, _, kind, arg = heapq.heappop(heap)
        if kind == _JOB:
            if arg == version:
                job_phase_end(t)
        elif kind == _NODE_FAIL:
            n = arg
            d = d_detect()
            back = t + d + d_repair()
            last_failure[n] = t
            if pool[n] == _SPARE:
                spare_count -= 1
            elif pool[n] == _FREE:
                free_count -= 1
            was_held = pool[n] == _JOB_POOL
            pool[n] = _DOWN
            push(back, _NODE_BACK, n)
            if was_held:
                held.discard(n)
                if phase in _HOLDING:
                    job_fails(t, d)  # detection ends at t + d (an event, even for d = 0)
                # in detection or waiting: the node is lost, no new failure
        else:  # _NODE_BACK
            n = arg
            if spare_count < S:
                pool[n] = _SPARE
                spare_count += 1
            else:
                pool[n] = _FREE
                free_count += 1
            push(t + next_gap(n), _NODE_FAIL, n)
            maybe_resume(t)

    out["wall"] = t
    out["completed"] = 1.0
    total = sum(out[b] for b in BUCKETS)
    assert math.isclose(total, t, rel_tol=1e-9, abs_tol=1e-6), (total, t, out)
    assert math.isclose(out["productive"], work, rel_tol=1e-9), (out["productive"], work)
    for b in BUCKETS:
        assert out[b] >= -1e-9 * max(1.0, t), (b, out[b])
    return out


def run_replicas(replicas: int, seed: int, **params: object) -> dict[str, np.ndarray]:
    """``replicas`` independent runs (one generator seeded with ``seed``);
    returns each field of :data:`FIELDS` as a float64 array."""
    rng = np.random.default_rng(seed)
    rows = [simulate(rng, **params) for _ in range(replicas)]  # type: ignore[arg-type]
    return {f: np.array([r[f] for r in rows], dtype=np.float64) for f in FIELDS}
