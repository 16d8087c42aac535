"""Independent reference model of shared checkpoint storage: K one-node jobs
on a small fleet whose checkpoint transfers share one storage bandwidth
(no code shared with acesim; it does not import it).

A plain discrete-event model (the next event found by a scan of every
timed quantity) written from the semantics of ``Fleet(storage_bandwidth=B)``
and ``Job(checkpoint_bytes=S)``: the job lifecycle (synchronous or
asynchronous durable checkpoints), job-level or node-level failures, hot
spares, and the storage as a processor-sharing server.

Storage
-------
* ``bandwidth`` B bytes/s (``None``: no storage, every transfer is free).
  A job with ``checkpoint_bytes`` S (``None``: the job never uses the
  storage) moves S bytes at the end of the fixed part of each of: every
  start (init + load drawn per start, the first start too: the load's
  transfer), every synchronous durable write (``save`` then the transfer)
  and every asynchronous persist (``persist`` then the transfer).
* All transfers in flight share B equally: with n in flight each moves at
  B / n. Modelled by a virtual clock V(t), dV/dt = B / n(t) (the bytes any
  one transfer in flight has moved since V = 0): a transfer that begins at
  V0 ends when V reaches V0 + S. A transfer cut off (its job failed) leaves
  at once, and the others' share grows from that instant.
* Contention: a transfer that ends adds (its duration - S / B) to its job's
  ``contention`` (never below 0); one cut off adds nothing.

Fleet
-----
* ``nodes`` nodes (default K + ``spares``); the last ``spares`` start as hot
  spares, the others free. A job is submitted at its ``submit`` time and
  takes a free node (never a spare) when one is free, in submission order
  (equal submissions: by index), else it waits in the queue (``queue_wait``).
  A start takes the free node with the lowest id; a re-placement the spare
  with the lowest id, then the free node with the lowest id.
* A node that becomes available (its job done, its repair over) refills the
  hot spares while they are short, else is free; then jobs waiting for a
  replacement are served first, then the queue, each in submission order
  (equal submissions: by index).

Failures
--------
* Job level (``job_failures``: one law for every job, or one per job: a law,
  a sequence of gaps replayed draw by draw (``inf`` after the last), or
  ``None``): a renewal process in held seconds, its clock running while the
  job holds its node and runs (start, compute, writes, snapshot, waits for a
  persist), paused in detection and while waiting; the first gap is drawn
  at t = 0 and a new one at each failure.
* Node level (``node_failures``: a law, or a dict ``{node: [wall times]}``):
  every node in service fails by a renewal process in wall-clock time, busy
  or idle, fresh at t = 0; a node out of service cannot fail and draws a
  fresh gap when it returns. A failure of the node a running job holds is a
  failure of that job. The two sources are not combined in one run.
* Each failure has a cause drawn by share (``causes``: (share, detect law,
  node_down)); its detection draw D is the job's ``detection`` (D = 0: none).
  A node failure, or a job-level failure whose cause has ``node_down``,
  sends the node to repair: back in service at t_fault + D + R (R a draw of
  ``repair``). After detection a job whose node is down takes a replacement
  (or waits for one: ``recovery_wait``); a job-level failure without
  ``node_down`` restarts on its own node at once.

Job lifecycle
-------------
* Start: init + load (fixed), then the load's transfer: all ``overhead``
  (a start cut off too).
* Synchronous (``persist`` None): compute toward the boundary b = min(c +
  interval, work) (c the last durable checkpoint); the write (save's fixed
  part, then the transfer) is a ``ckpt_stall``; at its end c = b; the job is
  done at the write at ``work``.
* Asynchronous (``persist`` a law): the next boundary is the last snapshot +
  interval, capped at work. At a boundary, a persist still in flight makes
  the job wait for it (``ckpt_stall``); then a snapshot (``save``, a stall,
  no transfer); at its end the persist's fixed part is drawn and runs in the
  background, then its transfer; the checkpoint is durable when the
  transfer ends. After the snapshot at ``work`` the job waits for its persist
  (a stall) and is done when it is durable.
* A failure cuts off what the job does: it rolls back to its last durable
  checkpoint; the progress since it (an in-flight persist's snapshot segment
  included) and a write, snapshot or wait cut off are ``wasted``; an
  in-flight persist is lost (``lost_checkpoints``); its transfer, if any,
  is cut off.
* Ties at one instant: persist ends (fixed part or transfer), then phase
  ends (timed or transfer), then job-level failures, then node returns, then
  node failures; then by job (node) index.
* Buckets: wall (from submit to done) = productive + wasted + ckpt_stall +
  overhead + detection + queue_wait + recovery_wait (asserted).
  ``checkpoints`` counts checkpoints when they become durable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BUCKETS",
    "FIELDS",
    "Cause",
    "Law",
    "Spec",
    "run_replicas",
    "simulate",
]

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
)
FIELDS: tuple[str, ...] = (
    "wall",
    *BUCKETS,
    "contention",
    "failures",
    "checkpoints",
    "lost_checkpoints",
)

INF = math.inf


@dataclass(frozen=True)
class Spec:
    """One job of one node (``gpus`` GPUs)."""

    work: float
    interval: float
    init: Law = 0.0
    save: Law = 0.0
    load: Law = 0.0
    persist: Law | None = None
    checkpoint_bytes: float | None = None
    submit: float = 0.0
    gpus: int = 8


@dataclass(frozen=True)
class Cause:
    share: float = 1.0
    detect: Law = 0.0
    node_down: bool = True


def _draw(law: Law, rng: np.random.Generator) -> float:
    return float(law(rng)) if callable(law) else float(law)


class _Replay:
    """Successive gaps, then inf."""

    def __init__(self, gaps: Sequence[float]) -> None:
        self.gaps = list(gaps)
        self.k = 0

    def __call__(self, rng: np.random.Generator) -> float:
        if self.k >= len(self.gaps):
            return INF
        self.k += 1
        return float(self.gaps[self.k - 1])


# --- the storage as a processor-sharing server ------------------------------


class _Storage:
    def __init__(self, bandwidth: float) -> None:
        self.b = bandwidth
        self.v = 0.0  # virtual clock: bytes moved by any one transfer in flight
        self.vt = 0.0  # when v was last brought up to date
        self.active: dict[int, tuple[float, float, float]] = {}  # job -> (target, start, bytes)

    def _sync(self, t: float) -> None:
        if self.active:
            self.v += (t - self.vt) * self.b / len(self.active)
        self.vt = t

    def begin(self, j: int, size: float, t: float) -> None:
        self._sync(t)
        self.active[j] = (self.v + size, t, size)

    def end(self, j: int, t: float, finished: bool) -> float:
        """Removes j's transfer; returns its contention (0 when cut off)."""
        self._sync(t)
        _target, start, size = self.active.pop(j)
        if not finished:
            return 0.0
        return max(0.0, (t - start) - size / self.b)

    def next_end(self) -> tuple[float, int]:
        """(time, job) of the first transfer to end if nothing changes."""
        if not self.active:
            return INF, -1
        j = min(self.active, key=lambda k: (self.active[k][0], k))
        n = len(self.active)
        return self.vt + (self.active[j][0] - self.v) * n / self.b, j


# --- the model --------------------------------------------------------------

# phases
PENDING, QUEUED, START, START_X, COMPUTE, SAVE, SAVE_X, SNAP, PWAIT, DETECT, WAIT, DONE = range(12)
_TIMED = (PENDING, START, COMPUTE, SAVE, SNAP, DETECT)
_RUNNING = (START, START_X, COMPUTE, SAVE, SAVE_X, SNAP, PWAIT)
# node states
_JOB, _SPARE, _FREE, _DOWN = range(4)


class _Job:
    def __init__(self, j: int, spec: Spec, fail_law: Law | None, rng: np.random.Generator) -> None:
        self.j = j
        self.spec = spec
        self.phase = PENDING
        self.phase_start = 0.0
        self.phase_end = spec.submit
        self.node = -1
        self.started = False
        self.start_begin = 0.0
        self.write_begin = 0.0
        self.durable = 0.0  # progress of the last durable checkpoint
        self.last_snap = 0.0  # progress of the last snapshot (async)
        self.p0 = 0.0  # progress when the compute began
        self.t0 = 0.0
        self.boundary = 0.0
        self.persist = 0  # 0 none, 1 fixed part, 2 transfer
        self.persist_end = INF  # the fixed part's end
        self.persist_snap = 0.0
        self.fail_law = fail_law
        self.held = 0.0
        self.hold_since: float | None = None
        self.threshold = INF if fail_law is None else _draw(fail_law, rng)
        self.rec = dict.fromkeys(FIELDS, 0.0)
        self.durable_times: list[float] = []


class _Model:
    def __init__(
        self,
        specs: Sequence[Spec],
        bandwidth: float | None,
        nodes: int | None,
        spares: int,
        repair: Law,
        job_failures: Law | Sequence[Law | Sequence[float] | None] | None,
        node_failures: Law | Mapping[int, Sequence[float]] | None,
        causes: Sequence[Cause],
        rng: np.random.Generator,
    ) -> None:
        if job_failures is not None and node_failures is not None:
            raise ValueError("job-level and node-level failures are not combined")
        self.rng = rng
        self.specs = list(specs)
        k = len(self.specs)
        self.storage = None if bandwidth is None else _Storage(bandwidth)
        self.repair = repair
        self.causes = list(causes)
        total = sum(c.share for c in self.causes)
        self.cause_p = [c.share / total for c in self.causes]
        # job-level laws
        if job_failures is None or callable(job_failures) or isinstance(job_failures, int | float):
            laws: list[Law | None] = [job_failures] * k  # type: ignore[list-item]
        else:
            laws = []
            for law in job_failures:
                if law is None or callable(law) or isinstance(law, int | float):
                    laws.append(law)  # type: ignore[arg-type]
                else:
                    laws.append(_Replay(law))  # type: ignore[arg-type]
        self.jobs = [_Job(j, s, laws[j], rng) for j, s in enumerate(self.specs)]
        # nodes
        n = k + spares if nodes is None else nodes
        self.spares = spares
        self.node_state = [_FREE] * (n - spares) + [_SPARE] * spares
        self.node_job = [-1] * n
        self.node_back = [INF] * n
        self.node_law: Law | None = None
        self.node_script: list[list[float]] | None = None
        if node_failures is None:
            self.node_fail = [INF] * n
        elif isinstance(node_failures, Mapping):
            self.node_script = [sorted(node_failures.get(m, ())) for m in range(n)]
            self.node_fail = [s[0] if s else INF for s in self.node_script]
        else:
            self.node_law = node_failures
            self.node_fail = [_draw(node_failures, rng) for _ in range(n)]
        self.waiting: list[int] = []  # jobs waiting for a replacement
        self.queue: list[int] = []

    # --- helpers ------------------------------------------------------------

    def uses_storage(self, job: _Job) -> bool:
        return self.storage is not None and job.spec.checkpoint_bytes is not None

    def hold(self, job: _Job, t: float) -> None:
        job.hold_since = t

    def unhold(self, job: _Job, t: float) -> None:
        if job.hold_since is not None:
            job.held += t - job.hold_since
            job.hold_since = None

    def fail_time(self, job: _Job) -> float:
        if job.hold_since is None or job.threshold == INF:
            return INF
        return job.hold_since + (job.threshold - job.held)

    def cause(self) -> Cause:
        if len(self.causes) == 1:
            return self.causes[0]
        return self.causes[int(self.rng.choice(len(self.causes), p=self.cause_p))]

    # --- the event loop -----------------------------------------------------

    def run(self) -> None:
        on_kind = (
            self.on_persist_end,
            self.on_phase_end,
            self.on_job_failure,
            self.on_node_back,
            self.on_node_failure,
        )
        while any(job.phase != DONE for job in self.jobs):
            # (time, priority, index, is a transfer end)
            best: tuple[float, int, int, bool] = (INF, 9, -1, False)
            for job in self.jobs:
                j = job.j
                if job.phase in _TIMED and (job.phase_end, 1, j) < best[:3]:
                    best = (job.phase_end, 1, j, False)
                if job.persist == 1 and (job.persist_end, 0, j) < best[:3]:
                    best = (job.persist_end, 0, j, False)
                tf = self.fail_time(job)
                if (tf, 2, j) < best[:3]:
                    best = (tf, 2, j, False)
            if self.storage is not None:
                tx, j = self.storage.next_end()
                # a transfer's end is its job's persist end (0) or phase end (1)
                cand = (tx, 0 if j >= 0 and self.jobs[j].persist == 2 else 1, j)
                if cand < best[:3]:
                    best = (*cand, True)
            for m in range(len(self.node_state)):
                if (self.node_back[m], 3, m) < best[:3]:
                    best = (self.node_back[m], 3, m, False)
                if (self.node_fail[m], 4, m) < best[:3]:
                    best = (self.node_fail[m], 4, m, False)
            t, kind, who, transfer = best
            assert t < INF, "no event left while jobs are not done"
            if transfer:
                self.on_transfer_end(self.jobs[who], t)
            elif kind <= 2:
                on_kind[kind](self.jobs[who], t)  # type: ignore[operator]
            else:
                on_kind[kind](who, t)  # type: ignore[operator]

    # --- placement ----------------------------------------------------------

    def repool(self, m: int, t: float) -> None:
        spare_count = sum(1 for s in self.node_state if s == _SPARE)
        self.node_state[m] = _SPARE if spare_count < self.spares else _FREE
        self.node_job[m] = -1

    def first_node(self, state: int) -> int:
        for m, s in enumerate(self.node_state):
            if s == state:
                return m
        return -1

    def attach(self, job: _Job, m: int) -> None:
        self.node_state[m] = _JOB
        self.node_job[m] = job.j
        job.node = m

    def dispatch(self, t: float) -> None:
        while self.waiting:
            m = self.first_node(_SPARE)
            if m < 0:
                m = self.first_node(_FREE)
            if m < 0:
                break
            self.waiting.sort(key=lambda k: (self.jobs[k].spec.submit, k))
            job = self.jobs[self.waiting.pop(0)]
            self.attach(job, m)
            self.begin_start(job, t)
        while self.queue:
            m = self.first_node(_FREE)
            if m < 0:
                break
            job = self.jobs[self.queue.pop(0)]
            self.attach(job, m)
            self.begin_start(job, t)

    # --- lifecycle ----------------------------------------------------------

    def begin_start(self, job: _Job, t: float) -> None:
        if not job.started:
            job.started = True
            job.rec["queue_wait"] += t - job.phase_start
        else:
            job.rec["recovery_wait"] += t - job.phase_start
        fixed = _draw(job.spec.init, self.rng) + _draw(job.spec.load, self.rng)
        job.phase = START
        job.start_begin = t
        job.phase_start = t
        job.phase_end = t + fixed
        self.hold(job, t)

    def begin_compute(self, job: _Job, t: float) -> None:
        spec = job.spec
        start = job.last_snap if spec.persist is not None else job.durable
        job.boundary = min(start + spec.interval, spec.work)
        job.p0 = start
        job.t0 = t
        job.phase = COMPUTE
        job.phase_start = t
        job.phase_end = t + (job.boundary - start)

    def begin_write(self, job: _Job, t: float) -> None:
        """The boundary's write: synchronous, or the asynchronous snapshot."""
        job.phase = SAVE if job.spec.persist is None else SNAP
        job.write_begin = t
        job.phase_start = t
        job.phase_end = t + _draw(job.spec.save, self.rng)

    def begin_transfer(self, job: _Job, t: float) -> None:
        assert self.storage is not None and job.spec.checkpoint_bytes is not None
        self.storage.begin(job.j, job.spec.checkpoint_bytes, t)

    def end_transfer(self, job: _Job, t: float, finished: bool) -> None:
        assert self.storage is not None
        job.rec["contention"] += self.storage.end(job.j, t, finished)

    def on_phase_end(self, job: _Job, t: float) -> None:
        p = job.phase
        if p == PENDING:
            job.phase = QUEUED
            job.phase_start = t
            self.queue.append(job.j)
            self.dispatch(t)
        elif p == START:
            if self.uses_storage(job):
                job.phase = START_X
                self.begin_transfer(job, t)
            else:
                self.end_start(job, t)
        elif p == COMPUTE:
            if job.spec.persist is not None and job.persist != 0:
                job.phase = PWAIT
                job.phase_start = t
            else:
                self.begin_write(job, t)
        elif p == SAVE:
            if self.uses_storage(job):
                job.phase = SAVE_X
                self.begin_transfer(job, t)
            else:
                self.end_write(job, t)
        elif p == SNAP:
            self.end_snapshot(job, t)
        elif p == DETECT:
            job.rec["detection"] += t - job.phase_start
            job.phase = WAIT
            job.phase_start = t
            if job.node >= 0:
                self.begin_start(job, t)  # restarts on its own node
            else:
                self.waiting.append(job.j)
                self.dispatch(t)
        else:  # pragma: no cover
            raise AssertionError(p)

    def on_transfer_end(self, job: _Job, t: float) -> None:
        self.end_transfer(job, t, True)
        if job.persist == 2:
            self.persist_done(job, t)
        elif job.phase == START_X:
            self.end_start(job, t)
        elif job.phase == SAVE_X:
            self.end_write(job, t)
        else:  # pragma: no cover
            raise AssertionError(job.phase)

    def end_start(self, job: _Job, t: float) -> None:
        job.rec["overhead"] += t - job.start_begin
        self.begin_compute(job, t)

    def end_write(self, job: _Job, t: float) -> None:
        job.rec["ckpt_stall"] += t - job.write_begin
        job.durable = job.boundary
        job.rec["checkpoints"] += 1
        job.durable_times.append(t)
        if job.durable >= job.spec.work:
            self.finish(job, t)
        else:
            self.begin_compute(job, t)

    def end_snapshot(self, job: _Job, t: float) -> None:
        job.rec["ckpt_stall"] += t - job.write_begin
        job.last_snap = job.boundary
        job.persist_snap = job.boundary
        job.persist = 1
        job.persist_end = t + _draw(job.spec.persist, self.rng)  # type: ignore[arg-type]
        if job.boundary >= job.spec.work:
            job.phase = PWAIT
            job.phase_start = t
        else:
            self.begin_compute(job, t)

    def on_persist_end(self, job: _Job, t: float) -> None:
        """The persist's fixed part is over."""
        job.persist_end = INF
        if self.uses_storage(job):
            job.persist = 2
            self.begin_transfer(job, t)
        else:
            self.persist_done(job, t)

    def persist_done(self, job: _Job, t: float) -> None:
        job.persist = 0
        job.persist_end = INF
        job.durable = job.persist_snap
        job.rec["checkpoints"] += 1
        job.durable_times.append(t)
        if job.phase == PWAIT:
            job.rec["ckpt_stall"] += t - job.phase_start
            if job.durable >= job.spec.work:
                self.finish(job, t)
            else:
                self.begin_write(job, t)  # the snapshot it waited to take

    def finish(self, job: _Job, t: float) -> None:
        self.unhold(job, t)
        job.phase = DONE
        job.rec["productive"] = job.spec.work
        job.rec["wall"] = t - job.spec.submit
        total = sum(job.rec[b] for b in BUCKETS)
        assert abs(total - job.rec["wall"]) <= 1e-6 * max(1.0, job.rec["wall"]), (job.j, job.rec)
        m = job.node
        job.node = -1
        self.repool(m, t)
        self.dispatch(t)

    # --- failures -----------------------------------------------------------

    def interrupt(self, job: _Job, t: float) -> None:
        """Cuts off what the running job does and rolls it back."""
        p = job.phase
        rec = job.rec
        if p in (START, START_X):
            rec["overhead"] += t - job.start_begin
        elif p == COMPUTE:
            rec["wasted"] += job.p0 + (t - job.t0) - job.durable
        elif p in (SAVE, SAVE_X, SNAP):
            rec["wasted"] += job.boundary - job.durable + (t - job.write_begin)
        elif p == PWAIT:
            rec["wasted"] += job.boundary - job.durable + (t - job.phase_start)
        else:  # pragma: no cover
            raise AssertionError(p)
        if p in (START_X, SAVE_X):
            self.end_transfer(job, t, False)
        if job.persist != 0:
            if job.persist == 2:
                self.end_transfer(job, t, False)
            job.persist = 0
            job.persist_end = INF
            rec["lost_checkpoints"] += 1
        job.last_snap = job.durable
        self.unhold(job, t)
        rec["failures"] += 1

    def detect(self, job: _Job, t: float, delay: float) -> None:
        job.phase = DETECT
        job.phase_start = t
        job.phase_end = t + delay

    def node_down(self, m: int, t: float, delay: float) -> None:
        self.node_state[m] = _DOWN
        self.node_job[m] = -1
        self.node_fail[m] = INF
        self.node_back[m] = t + delay + _draw(self.repair, self.rng)

    def on_job_failure(self, job: _Job, t: float) -> None:
        self.interrupt(job, t)
        job.threshold = job.held + _draw(job.fail_law, self.rng)  # type: ignore[arg-type]
        cause = self.cause()
        delay = _draw(cause.detect, self.rng)
        if cause.node_down:
            self.node_down(job.node, t, delay)
            job.node = -1
        self.detect(job, t, delay)

    def on_node_failure(self, m: int, t: float) -> None:
        cause = self.cause()
        delay = _draw(cause.detect, self.rng)
        j = self.node_job[m]
        if self.node_state[m] == _JOB and self.jobs[j].phase in _RUNNING:
            job = self.jobs[j]
            self.interrupt(job, t)
            job.node = -1
            self.detect(job, t, delay)
        elif self.node_state[m] == _JOB:  # pragma: no cover
            raise AssertionError("a node failure under a job that is not running")
        self.node_down(m, t, delay)

    def on_node_back(self, m: int, t: float) -> None:
        self.node_back[m] = INF
        if self.node_law is not None:
            self.node_fail[m] = t + _draw(self.node_law, self.rng)
        elif self.node_script is not None:
            later = [x for x in self.node_script[m] if x > t]
            self.node_fail[m] = later[0] if later else INF
        self.repool(m, t)
        self.dispatch(t)


def simulate(
    specs: Sequence[Spec],
    *,
    bandwidth: float | None = None,
    nodes: int | None = None,
    spares: int = 0,
    repair: Law = 3600.0,
    job_failures: Law | Sequence[Law | Sequence[float] | None] | None = None,
    node_failures: Law | Mapping[int, Sequence[float]] | None = None,
    causes: Sequence[Cause] = (Cause(),),
    rng: np.random.Generator | None = None,
) -> tuple[list[dict[str, float]], list[list[float]]]:
    """One run: per job, its row (:data:`FIELDS`) and the times its
    checkpoints became durable."""
    model = _Model(
        specs,
        bandwidth,
        nodes,
        spares,
        repair,
        job_failures,
        node_failures,
        causes,
        np.random.default_rng(0) if rng is None else rng,
    )
    model.run()
    return [job.rec for job in model.jobs], [job.durable_times for job in model.jobs]


def run_replicas(replicas: int, seed: int, **kwargs: object) -> np.ndarray:
    """``replicas`` independent runs: an array (replicas, jobs, len(FIELDS))."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(replicas):
        rows, _durable = simulate(rng=rng, **kwargs)  # type: ignore[arg-type]
        out.append([[row[f] for f in FIELDS] for row in rows])
    return np.asarray(out, dtype=float)
