"""Independent reference model of one job's lifecycle with asynchronous
checkpoints, multi-level checkpoint tiers and slow (gray) failures.

A plain discrete-event model in Python, written from the lifecycle semantics
(synchronous baseline, section 1 asynchronous persist, section 2 tiers and
failure scope, section 4 slowdown) with no code shared with acesim. It models
ONE job with replacements always available: the job starts at t = 0 at once
and restarts at once after each detected failure (no fleet, no queue, no
recovery wait). There is no horizon: every replica runs to DONE.

Semantics, as implemented here:

* Every start (the first too) is init + load, both drawn per start. The load
  is the job's ``load`` after a rollback to the durable checkpoint or to
  progress 0, the tier's ``load`` after a rollback to a tier. A start counts
  as ``overhead`` (a start cut off by a failure too).
* Levels: the durable checkpoint (the job's checkpoint_interval, save, load,
  persist) is level 0, the most durable; then the tiers by replication
  descending, ties in list order. Each level has a next boundary ``next_L``
  (initially its interval). The job checkpoints at b = min next_L, capped at
  work; the level written is the most durable level whose next equals b
  (relative tolerance 1e-9, b then snaps to that level's next); the
  checkpoint at work is always the durable one. After level L writes at x
  (the durable: at its snapshot's end), every level at most as durable as L
  sets next = x + its interval.
* A tier write is a synchronous stall of its ``save``. The durable write is a
  snapshot (a stall of ``save``); with ``persist`` a persist of p seconds
  (drawn at the snapshot's end) then runs in the background while the job
  goes on, and the checkpoint is durable at its end (p == 0: at once, the
  synchronous model). At most one persist in flight: a job reaching a
  *durable* boundary while the previous persist runs waits for it (a stall),
  then snapshots; tier boundaries do not wait. After the final snapshot (at
  work) the job waits for its persist and is DONE at its end.
* Job-level failures: a renewal process in held seconds (the clock runs while
  the job holds hardware: start, compute, writes, waits; not in detection and
  not in a slow window). A new inter-failure time is drawn at each failure.
* Each failure has a cause drawn by share (no causes: node scope, m = 1, no
  detection, no slowdown). Scope "process": m = 0; "node": m = min(cause
  nodes, job nodes). A tier with replication r survives iff m < r; the
  durable checkpoint always survives; a persist in flight is lost.
* A failure rolls progress back to the newest surviving checkpoint (largest
  progress; on a tie the most durable level), the lost progress and any cut
  off write/wait count as ``wasted``; tiers that did not survive lose their
  checkpoint. Next boundaries after a rollback to r from level L: every level
  at most as durable as L sets next = r + interval, more durable tiers keep
  theirs, and the durable's next is (last durable checkpoint) + its interval;
  if that is <= r the job snapshots the durable right after the restart.
* Slowdown f = 0: the failure is handled at the fault; then detection (the
  cause's detect draw D, 0 if none) counts as ``detection``; then restart.
  f > 0: from the fault for D seconds the lifecycle keeps running (starts,
  writes, waits and persists at their normal speed, compute at progress rate
  f); of the compute time in that window share f is progress and share 1 - f
  is ``detection``; checkpoints completed in it are kept; no other failure
  strikes in it. At its end the failure is handled (rollback, restart at
  once). A job that reaches DONE in the window is done (no rollback); the
  fault still counts in ``failures`` (it struck: a trace row in acesim).
* Buckets: ``productive`` = kept progress (= work at DONE), ``wasted``,
  ``ckpt_stall`` (completed snapshots, tier writes, persist waits),
  ``overhead``, ``detection``; ``wall == sum`` (asserted).
  ``checkpoints`` counts checkpoints that became kept: durable checkpoints
  when they became durable plus completed tier writes (``tier_checkpoints``
  counts the latter alone); ``failures`` counts faults that struck the job.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from reference_draws import drawer

__all__ = [
    "FIELDS",
    "Cause",
    "Lifecycle",
    "Sampler",
    "Tier",
    "run_replicas",
    "simulate_one",
]

Sampler = Callable[[np.random.Generator], float]
"""A callable drawing one duration in seconds from the generator it is given."""

Law = Sampler | float
"""A sampler, or a plain number for a constant (drawn without the generator)."""

FIELDS: tuple[str, ...] = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "failures",
    "checkpoints",
    "completed",
    "tier_checkpoints",
)
"""The fields of one replica's result (float64), in order."""

REL_TOL = 1e-9
"""Relative tolerance of boundary coincidences (levels sharing a boundary)."""

_INF = math.inf
# phases
_START, _COMPUTE, _WRITE, _WAIT, _FINAL, _DONE = range(6)


@dataclass(frozen=True)
class Tier:
    """A fast checkpoint level: a synchronous ``save`` every ``interval``
    seconds of progress, its own ``load``, surviving failures that take
    fewer than ``replication`` of the job's nodes."""

    interval: float
    save: Law
    load: Law
    replication: int = 1


@dataclass(frozen=True)
class Cause:
    """A failure cause: ``share``, ``detect`` latency (None: 0), ``scope``
    ("process" or "node"), ``nodes`` taken (node scope), ``slowdown`` f."""

    share: float
    detect: Law | None = None
    scope: str = "node"
    nodes: int = 1
    slowdown: float = 0.0

    def __post_init__(self) -> None:
        if self.scope not in ("process", "node"):
            raise ValueError(f"scope must be 'process' or 'node', got {self.scope!r}")
        if not (0.0 <= self.slowdown < 1.0):
            raise ValueError(f"slowdown must be in [0, 1), got {self.slowdown!r}")
        if self.share < 0 or self.nodes < 1:
            raise ValueError("share must be >= 0 and nodes >= 1")


@dataclass(frozen=True)
class Lifecycle:
    """One job: ``work`` seconds of progress, the durable level
    (``checkpoint_interval``, ``save``, ``load``, ``persist`` or None for a
    synchronous save), ``init`` per start, ``tiers`` and the job's ``nodes``."""

    work: float
    checkpoint_interval: float
    init: Law = 0.0
    save: Law = 0.0
    load: Law = 0.0
    persist: Law | None = None
    tiers: Sequence[Tier] = field(default_factory=tuple)
    nodes: int = 1

    def __post_init__(self) -> None:
        if not (self.work > 0 and math.isfinite(self.work)):
            raise ValueError(f"work must be positive and finite, got {self.work!r}")
        if not (self.checkpoint_interval > 0):
            raise ValueError("checkpoint_interval must be positive")
        for t in self.tiers:
            if not (0 < t.interval <= self.checkpoint_interval * (1 + REL_TOL)):
                raise ValueError("a tier's interval must be in (0, checkpoint_interval]")
            if int(t.replication) != t.replication or t.replication < 1:
                raise ValueError("a tier's replication must be an integer >= 1")
        if self.nodes < 1:
            raise ValueError("nodes must be >= 1")


def simulate_one(
    job: Lifecycle,
    failure: Law,
    causes: Sequence[Cause] | None,
    rng: np.random.Generator,
    max_events: int = 10_000_000,
) -> tuple[float, ...]:
    """Run one replica from t = 0 to DONE; returns the values of :data:`FIELDS`.

    ``failure`` draws job-level inter-failure times in held seconds (it may
    return ``inf``: no further failure). All draws come from ``rng``.
    """
    work = job.work
    # ---- levels: 0 = durable, then tiers by replication descending (stable)
    tiers = sorted(job.tiers, key=lambda t: -t.replication)
    nlev = 1 + len(tiers)
    interval = [float(job.checkpoint_interval)] + [float(t.interval) for t in tiers]
    replication = [_INF] + [float(t.replication) for t in tiers]
    draw_write = [drawer(job.save, rng)] + [drawer(t.save, rng) for t in tiers]
    draw_load = [drawer(job.load, rng)] + [drawer(t.load, rng) for t in tiers]
    draw_init = drawer(job.init, rng)
    draw_persist = None if job.persist is None else drawer(job.persist, rng)
    draw_failure = drawer(failure, rng)

    # ---- causes: (cumulative share, m, slowdown, detect drawer)
    cause_table: list[tuple[float, int, float, Callable[[], float]]] = []
    if causes:
        total_share = float(sum(c.share for c in causes))
        if not total_share > 0:
            raise ValueError("the causes' shares must not all be zero")
        acc = 0.0
        for c in causes:
            acc += c.share / total_share
            m = 0 if c.scope == "process" else min(int(c.nodes), int(job.nodes))
            cause_table.append((acc, m, float(c.slowdown), drawer(c.detect, rng)))
    else:
        cause_table.append((1.0, 1, 0.0, lambda: 0.0))
    single_cause = len(cause_table) == 1

    # ---- state
    ckpt: list[float | None] = [0.0] + [None] * len(tiers)  # ckpt[0]: last durable
    nxt = list(interval)
    t = 0.0
    P = 0.0
    productive = wasted = ckpt_stall = overhead = detection = 0.0
    failures = checkpoints = tier_ckpts = 0
    persist_end = _INF
    persist_pos = 0.0
    window_end = _INF  # end of a slow window (its detection)
    window_m = 0
    rate = 1.0
    to_fail = draw_failure()
    # phase: START (phase_left), COMPUTE (toward b, written level blev),
    # WRITE (level wlev at wpos, phase_left), WAIT (for the persist, then the
    # durable snapshot at wpos), FINAL (the last persist), DONE
    phase = _START
    phase_left = draw_init() + draw_load[0]()
    phase_elapsed = 0.0
    b = 0.0
    blev = 0
    wlev = 0
    wpos = 0.0

    def boundary() -> tuple[float, int]:
        """The next boundary and the level written there."""
        lo = min(nxt)
        if lo >= work * (1.0 - REL_TOL):
            return work, 0
        for lev in range(nlev):
            if abs(nxt[lev] - lo) <= REL_TOL * max(abs(lo), 1.0):
                return nxt[lev], lev
        raise AssertionError("unreachable")

    events = 0
    while phase != _DONE:
        events += 1
        if events > max_events:
            raise RuntimeError("max_events exceeded")

        # ---- the next event: the earliest; at the same instant the persist's
        # end first, then the phase's end, then a detection, then a fault
        if phase == _COMPUTE:
            dt_phase = (b - P) / rate
        elif phase == _START or phase == _WRITE:
            dt_phase = phase_left
        else:  # WAIT / FINAL end with the persist
            dt_phase = _INF
        dt_pe = persist_end - t
        dt_det = window_end - t
        dt = min(dt_pe, dt_phase, dt_det, to_fail)
        if dt == dt_pe:
            event = 0
        elif dt == dt_phase:
            event = 1
        elif dt == dt_det:
            event = 2
        else:
            event = 3
        if dt < 0.0:  # rounding of t + dt
            dt = 0.0

        # ---- advance to it
        t += dt
        if window_end == _INF:
            to_fail -= dt
        if phase == _COMPUTE:
            P += rate * dt
            if rate != 1.0:
                detection += (1.0 - rate) * dt
        else:
            phase_elapsed += dt
            if phase == _START or phase == _WRITE:
                phase_left -= dt

        arrive = False  # set: choose the next boundary and go toward it
        if event == 0:
            # the persist ends: the snapshot at persist_pos is durable
            persist_end = _INF
            ckpt[0] = persist_pos
            checkpoints += 1
            if phase == _WAIT:
                ckpt_stall += phase_elapsed
                phase, phase_left, phase_elapsed, wlev = _WRITE, draw_write[0](), 0.0, 0
            elif phase == _FINAL:
                ckpt_stall += phase_elapsed
                phase = _DONE
        elif event == 1 and phase == _START:
            overhead += phase_elapsed
            arrive = True
        elif event == 1 and phase == _COMPUTE:
            # at the boundary b: write level blev (the durable waits for a
            # persist in flight)
            P = wpos = b
            if blev == 0 and persist_end != _INF:
                phase, phase_elapsed = _WAIT, 0.0
            else:
                phase, phase_left, phase_elapsed, wlev = _WRITE, draw_write[blev](), 0.0, blev
        elif event == 1:
            # a write completes at progress x
            ckpt_stall += phase_elapsed
            x = wpos
            if wlev == 0:
                for lev in range(nlev):
                    nxt[lev] = x + interval[lev]
                p = 0.0 if draw_persist is None else draw_persist()
                if p > 0.0:
                    persist_end, persist_pos = t + p, x
                else:
                    ckpt[0] = x
                    checkpoints += 1
                if x >= work:
                    phase, phase_elapsed = (_FINAL if persist_end != _INF else _DONE), 0.0
                else:
                    arrive = True
            else:
                ckpt[wlev] = x
                checkpoints += 1
                tier_ckpts += 1
                for lev in range(wlev, nlev):
                    nxt[lev] = x + interval[lev]
                arrive = True
        else:
            if event == 2:
                # the slow window ends: its failure is detected now
                m = window_m
                window_end, rate = _INF, 1.0
                detect_now = 0.0
            else:
                # a fault: draw its cause
                if single_cause:
                    _, m, f, draw_detect = cause_table[0]
                else:
                    u = rng.random()
                    pick = len(cause_table) - 1
                    for i, row in enumerate(cause_table):
                        if u < row[0]:
                            pick = i
                            break
                    _, m, f, draw_detect = cause_table[pick]
                d = draw_detect()
                if f > 0.0:
                    # slow: the lifecycle goes on at progress rate f until detection
                    window_end, window_m, rate = t + d, m, f
                    to_fail = _INF
                    failures += 1  # it struck now (even if the job is done before detection)
                    continue
                detect_now = d

            # ---- handle the failure (m nodes taken), then restart at once
            if event != 2:
                failures += 1  # (a slow failure was counted when it struck)
            if phase == _START:
                overhead += phase_elapsed
            elif phase != _COMPUTE:
                wasted += phase_elapsed  # a write or a wait cut off
            persist_end = _INF  # a persist in flight is lost
            r, lev_r = ckpt[0], 0
            assert r is not None
            for lev in range(1, nlev):
                c = ckpt[lev]
                if c is None:
                    continue
                if m < replication[lev]:
                    if c > r:  # newest; on a tie the more durable level stays
                        r, lev_r = c, lev
                else:
                    ckpt[lev] = None  # the tier did not survive
            wasted += P - r
            P = r
            for lev in range(max(lev_r, 1), nlev):
                nxt[lev] = r + interval[lev]
            nxt[0] = ckpt[0] + interval[0]  # type: ignore[operator]
            t += detect_now
            detection += detect_now
            to_fail = draw_failure()
            phase, phase_left, phase_elapsed = _START, draw_init() + draw_load[lev_r](), 0.0

        if arrive:
            b, blev = boundary()
            if b <= P:
                # a boundary at or behind the progress (the durable's after a
                # rollback past it): write at the current progress at once
                wpos = P
                if blev == 0 and persist_end != _INF:
                    phase, phase_elapsed = _WAIT, 0.0
                else:
                    phase, phase_left, phase_elapsed, wlev = (
                        _WRITE,
                        draw_write[blev](),
                        0.0,
                        blev,
                    )
            else:
                phase, phase_elapsed = _COMPUTE, 0.0

    productive = P
    wall = t
    total = productive + wasted + ckpt_stall + overhead + detection
    assert math.isclose(wall, total, rel_tol=1e-9, abs_tol=1e-6), (
        f"accounting identity broken: wall={wall!r} != sum={total!r}"
    )
    assert math.isclose(productive, work, rel_tol=1e-12, abs_tol=1e-9)
    return (
        wall,
        productive,
        wasted,
        ckpt_stall,
        overhead,
        detection,
        float(failures),
        float(checkpoints),
        1.0,
        float(tier_ckpts),
    )


def run_replicas(
    n: int,
    job: Lifecycle,
    failure: Law,
    causes: Sequence[Cause] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """``n`` independent replicas of :func:`simulate_one`; replica ``i`` draws
    from its own generator ``np.random.default_rng([seed, i])``. Returns a
    structured array (float64 fields named as :data:`FIELDS`)."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n!r}")
    out = np.zeros(n, dtype=[(name, np.float64) for name in FIELDS])
    for i in range(n):
        out[i] = simulate_one(job, failure, causes, np.random.default_rng([seed, i]))
    return out
