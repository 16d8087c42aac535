"""Independent SimPy reference model of the single-job fail-stop lifecycle.

This module is deliberately written the way users build such models today
(a SimPy job process plus a failure process that interrupts it), with no
code shared with acesim. It validates acesim's C++ simulator and serves as
the baseline of the benchmark comparisons.

Semantics (DESIGN.md section 4, single job, ``fleet=None``):

* The job is submitted at t=0 and starts at once: no queue, replacements
  always available, no detection delay.
* Every start (the first too) costs init + load, each drawn fresh per start.
  The time counts as ``overhead``, a start cut off by a failure included.
* Job-level failures form a renewal process in wall-clock time (the job
  holds hardware all the time): X1 is drawn at t=0 and a fresh X right after
  each failure, so failure k strikes at X1 + ... + Xk.
* After a start the job computes at 1 s of progress per s. Checkpoint
  boundaries fall every ``checkpoint_interval`` seconds of progress (the last
  segment may be shorter). At each boundary a save is written (synchronous
  stall, drawn per save). A completed save commits the segment: its compute
  goes to ``productive``, the save to ``ckpt_stall``, ``checkpoints`` += 1.
  The job is done when the save at progress == work completes.
* A failure rolls progress back to the last completed checkpoint: compute
  since that checkpoint and a partial save go to ``wasted``, a partial start
  to ``overhead``; ``failures`` += 1; the job restarts at once.
* At the horizon an unfinished job's compute since its last checkpoint counts
  as ``productive``, a save in progress as ``ckpt_stall`` and a start in
  progress as ``overhead``.
* ``wall == productive + wasted + ckpt_stall + overhead`` (asserted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import simpy

__all__ = [
    "FIELDS",
    "Draw",
    "Sampler",
    "run_replicas",
    "segment_lengths",
    "simulate_job",
]

Draw = Callable[[], float]
"""A zero-argument callable returning a duration in seconds."""

Sampler = Callable[[np.random.Generator], float]
"""A callable drawing one duration in seconds from the generator it is given."""

FIELDS: tuple[str, ...] = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "failures",
    "checkpoints",
    "completed",
    "ettr",
)
"""The keys of :func:`simulate_job`'s result, in order (also the dtype of
:func:`run_replicas`)."""

_REL_TOL = 1e-6
_START, _COMPUTE, _SAVE = "start", "compute", "save"


def segment_lengths(work: float, checkpoint_interval: float) -> list[float]:
    """Compute lengths between checkpoints: full intervals, the last shorter.

    A trailing remainder below 1e-9 relative to the interval is dropped, so
    ``work = 3 * interval`` gives three segments despite rounding.
    """
    if not (work > 0 and math.isfinite(work)):
        raise ValueError(f"work must be positive and finite, got {work!r}")
    if not (checkpoint_interval > 0):
        raise ValueError(f"checkpoint_interval must be positive, got {checkpoint_interval!r}")
    n = max(1, math.ceil(work / checkpoint_interval - 1e-9))
    full = [float(checkpoint_interval)] * (n - 1)
    return [*full, float(work) - checkpoint_interval * (n - 1)]


class _Job:
    """State and accounting of one job; ``run`` is its SimPy process."""

    def __init__(
        self,
        env: simpy.Environment,
        segments: list[float],
        draw_init: Draw,
        draw_load: Draw,
        draw_save: Draw,
    ) -> None:
        self.env = env
        self.segments = segments
        self.draw_init = draw_init
        self.draw_load = draw_load
        self.draw_save = draw_save
        # position: index of the next segment to commit
        self.next_segment = 0
        # current phase and when it began
        self.phase = _START
        self.phase_start = 0.0
        # compute finished since the last checkpoint (a segment awaiting its save)
        self.uncommitted = 0.0
        # accounting
        self.productive = 0.0
        self.wasted = 0.0
        self.ckpt_stall = 0.0
        self.overhead = 0.0
        self.failures = 0
        self.checkpoints = 0
        self.done_at: float | None = None

    def _enter(self, phase: str) -> None:
        self.phase = phase
        self.phase_start = self.env.now

    def _elapsed(self) -> float:
        return self.env.now - self.phase_start

    def run(self) -> Generator[simpy.Event, Any, None]:
        env = self.env
        while self.next_segment < len(self.segments):
            try:
                # START: init then load, both fresh per start
                self._enter(_START)
                yield env.timeout(self.draw_init())
                yield env.timeout(self.draw_load())
                self.overhead += self._elapsed()
                # COMPUTE / CHECKPOINT, segment by segment
                while self.next_segment < len(self.segments):
                    segment = self.segments[self.next_segment]
                    self._enter(_COMPUTE)
                    yield env.timeout(segment)
                    self.uncommitted = segment
                    self._enter(_SAVE)
                    yield env.timeout(self.draw_save())
                    # the save completed: commit the segment
                    self.productive += self.uncommitted
                    self.ckpt_stall += self._elapsed()
                    self.uncommitted = 0.0
                    self.checkpoints += 1
                    self.next_segment += 1
            except simpy.Interrupt:
                # fail-stop: roll back to the last completed checkpoint
                self.failures += 1
                if self.phase == _START:
                    self.overhead += self._elapsed()
                else:
                    self.wasted += self.uncommitted + self._elapsed()
                self.uncommitted = 0.0
                # loop around: restart at once
        self.done_at = env.now

    def close_at_horizon(self) -> None:
        """Account the phase in progress when the horizon cuts the run."""
        if self.phase == _START:
            self.overhead += self._elapsed()
        elif self.phase == _COMPUTE:
            self.productive += self.uncommitted + self._elapsed()
        else:
            self.productive += self.uncommitted
            self.ckpt_stall += self._elapsed()
        self.uncommitted = 0.0


def _failures(
    env: simpy.Environment, job: simpy.Process, draw_failure: Draw
) -> Generator[simpy.Event, Any, None]:
    """Renewal failure process: interrupts the job at X1, X1+X2, ..."""
    while True:
        yield env.timeout(draw_failure())
        if not job.is_alive:
            return
        job.interrupt("failure")


def simulate_job(
    work: float,
    checkpoint_interval: float,
    draw_failure: Draw,
    draw_init: Draw,
    draw_save: Draw,
    draw_load: Draw,
    horizon: float = math.inf,
) -> dict[str, float]:
    """Simulate one job from submission (t=0) to done or the horizon.

    Each ``draw_*`` is a zero-argument callable returning a duration in
    seconds (bind the RNG in the caller); ``draw_failure`` may return
    ``math.inf`` for "no further failure". Returns a dict with the keys of
    :data:`FIELDS`; ``failures``, ``checkpoints`` and ``completed`` are
    floats (``completed`` is 1.0 or 0.0).
    """
    if not (horizon > 0):
        raise ValueError(f"horizon must be positive, got {horizon!r}")
    segments = segment_lengths(work, checkpoint_interval)

    env = simpy.Environment()
    job = _Job(env, segments, draw_init, draw_load, draw_save)
    job_process = env.process(job.run())
    env.process(_failures(env, job_process, draw_failure))

    if math.isinf(horizon):
        env.run(until=job_process)
    else:
        env.run(until=horizon)

    completed = job.done_at is not None and job.done_at <= horizon
    if completed:
        assert job.done_at is not None
        wall = job.done_at
    else:
        wall = float(env.now)
        job.close_at_horizon()

    total = job.productive + job.wasted + job.ckpt_stall + job.overhead
    assert math.isclose(wall, total, rel_tol=_REL_TOL, abs_tol=1e-9), (
        f"accounting identity broken: wall={wall!r} != sum={total!r}"
    )
    return {
        "wall": wall,
        "productive": job.productive,
        "wasted": job.wasted,
        "ckpt_stall": job.ckpt_stall,
        "overhead": job.overhead,
        "failures": float(job.failures),
        "checkpoints": float(job.checkpoints),
        "completed": 1.0 if completed else 0.0,
        "ettr": job.productive / wall if wall > 0 else 0.0,
    }


def _bind(sampler: Sampler, rng: np.random.Generator) -> Draw:
    return lambda: float(sampler(rng))


def run_replicas(
    n: int,
    work: float,
    interval: float,
    failure_sampler: Sampler,
    init_sampler: Sampler,
    save_sampler: Sampler,
    load_sampler: Sampler,
    seed: int,
    horizon: float = math.inf,
) -> np.ndarray:
    """Run ``n`` independent replicas of :func:`simulate_job`.

    Each sampler is ``sampler(rng) -> float``. Replica ``i`` draws each
    purpose (failure, init, save, load) from its own generator seeded with
    ``(seed, i, purpose)``, so results do not depend on draw order.
    Returns a structured array (float64 fields named as :data:`FIELDS`),
    one row per replica.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n!r}")
    out = np.zeros(n, dtype=[(name, np.float64) for name in FIELDS])
    samplers = (failure_sampler, init_sampler, save_sampler, load_sampler)
    for i in range(n):
        draw_failure, draw_init, draw_save, draw_load = (
            _bind(sampler, np.random.default_rng([seed, i, purpose]))
            for purpose, sampler in enumerate(samplers)
        )
        row = simulate_job(work, interval, draw_failure, draw_init, draw_save, draw_load, horizon)
        out[i] = tuple(row[name] for name in FIELDS)
    return out
