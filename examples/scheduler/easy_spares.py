"""A scheduler written against :class:`acesim.FleetModel`: EASY backfill
with hot spares.

The scheduler owns every decision; the model owns time, the nodes, the
failures and the accounting.

- **Queue**: by priority (high first), then submission, then job id.
- **EASY backfill**: the first queued job that does not fit (the head) gets
  a reservation: the time enough nodes will be free, from the estimated
  ends of the running jobs. A later job starts only if it fits now and does
  not delay the head: it is estimated to end by then, or it uses only nodes
  the head will not need.
- **Hot spares**: ``spares`` free nodes are held back for re-placements
  (queued jobs never take them) and refilled first as nodes come free.
- **Failures**: a failed job keeps its surviving nodes and takes spares
  first, then free nodes, for the ones it lost; if there are not enough it
  waits, holding its survivors, until repairs (or other jobs' ends) give it
  nodes. Waiting jobs are served before the queue, and one that waits holds
  back every queued job of lower priority.

Estimates: a job's run is its remaining work plus the mean init and load
and the mean save of each checkpoint still to write; its progress is the
checkpoints the model reported (build the model with ``checkpoints=True``;
without them every run is estimated from the start of the work). Jobs take
whole nodes and checkpoint synchronously at a fixed interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

import acesim as ace

__all__ = ["EasySpares", "How", "Start", "run"]

How = Literal["queue", "backfill", "replace"]


@dataclass(frozen=True)
class Start:
    """One start the scheduler made: from the queue in its order
    (``"queue"``), from the queue behind the head (``"backfill"``), or a
    re-placement after a failure (``"replace"``)."""

    time: float
    job: int
    nodes: tuple[int, ...]
    how: How


@dataclass
class _Job:
    spec: ace.Job
    submit: float
    nodes: int  # whole nodes it needs
    kept: float = 0.0  # progress checkpointed, as reported
    end: float = math.inf  # estimated end while it runs


class EasySpares:
    """EASY backfill with ``spares`` hot spares (default: the fleet's) on
    ``model``. Call :meth:`submit` for new jobs, :meth:`handle` with every
    event, and :meth:`schedule` once the events of the current time are in."""

    def __init__(self, model: ace.FleetModel, spares: int | None = None) -> None:
        self.model = model
        fleet = model.fleet
        self.gpus_per_node = fleet.gpus_per_node
        self.spare_count = fleet.spares if spares is None else spares
        if not 0 <= self.spare_count < fleet.nodes:
            raise ValueError(f"spares must be in 0..{fleet.nodes - 1}, got {self.spare_count}")
        self.spares: list[int] = []  # free nodes held back for re-placements
        self.jobs: dict[int, _Job] = {}
        self.queue: list[int] = []  # waiting for a first start (or a restart)
        self.waiting: list[int] = []  # failed, waiting for nodes, holding survivors
        self.running: set[int] = set()
        self.done: set[int] = set()
        self.starts: list[Start] = []  # every start, in order

    # --- what the driver calls --------------------------------------------------

    def submit(self, job: ace.Job) -> int:
        """Submits ``job`` to the model now and queues it; returns its id."""
        nodes, rest = divmod(job.gpus, self.gpus_per_node)
        if rest:
            raise ValueError(f"jobs take whole nodes: {job.gpus} GPUs on {self.gpus_per_node}")
        if nodes > self.model.fleet.nodes - self.spare_count:
            raise ValueError(f"a job of {nodes} nodes never fits beside {self.spare_count} spares")
        j = self.model.submit(job)
        self.jobs[j] = _Job(job, self.model.now, nodes)
        self.queue.append(j)
        return j

    def handle(self, event: ace.Event) -> None:
        """Takes note of one event (decisions wait for :meth:`schedule`)."""
        j = event.job
        if event.kind == "checkpoint" and j is not None:
            job = self.jobs[j]
            interval = job.spec.checkpoint_interval
            if not isinstance(interval, str):
                job.kept = min(job.spec.work, job.kept + interval)
        elif event.kind == "job_failed" and j is not None:
            self.running.discard(j)
            self.waiting.append(j)
        elif event.kind == "job_done" and j is not None:
            self.running.discard(j)
            self.done.add(j)
        # node_down / node_up: schedule() reads the free nodes from the model.

    def schedule(self) -> None:
        """Refills the spares, re-places failed jobs, then starts the queue
        with EASY backfill."""
        free = self._refill_spares()
        blocked = -math.inf  # queued jobs below this priority wait
        for j in sorted(self.waiting, key=self._order):
            held = self.model.nodes_of(j)
            missing = self.jobs[j].nodes - len(held)
            if missing <= len(self.spares) + len(free):
                take = self.spares[:missing]
                self.spares = self.spares[len(take) :]
                take += free[: missing - len(take)]
                free = [n for n in free if n not in take]
                self.waiting.remove(j)
                self._start(j, held + take, "replace")
            else:
                blocked = max(blocked, self.jobs[j].spec.priority)
        queue = sorted(self.queue, key=self._order)
        for k, j in enumerate(queue):
            job = self.jobs[j]
            if job.spec.priority < blocked:
                return
            if job.nodes <= len(free):
                self._start(j, free[: job.nodes], "queue")
                free = free[job.nodes :]
                continue
            self._backfill(queue[k + 1 :], job.nodes, free, blocked)
            return

    # --- EASY backfill ----------------------------------------------------------

    def reservation(self, nodes: int, free: int) -> tuple[float, int]:
        """When ``nodes`` nodes will be free for the head (``free`` are free
        now), from the running jobs' estimated ends, and how many nodes will
        be left over then. Nodes that come free refill the spares and go to
        waiting jobs first, as :meth:`schedule` hands them out."""
        claimed = self.spare_count - len(self.spares)
        claimed += sum(self.jobs[j].nodes - len(self.model.nodes_of(j)) for j in self.waiting)
        available = free - claimed  # < nodes: the head does not fit now
        for end, j in sorted((self.jobs[j].end, j) for j in self.running):
            available += self.jobs[j].nodes
            if available >= nodes:
                return end, available - nodes
        return math.inf, 0  # not before a repair or a waiting job's end

    def _backfill(self, behind: Sequence[int], nodes: int, free: list[int], blocked: float) -> None:
        shadow, extra = self.reservation(nodes, len(free))
        for j in behind:
            job = self.jobs[j]
            if job.spec.priority < blocked:
                return
            if job.nodes > len(free):
                continue
            ends_in_time = self.model.now + self.estimate(job) <= shadow
            if ends_in_time or job.nodes <= extra:
                if not ends_in_time:
                    extra -= job.nodes
                self._start(j, free[: job.nodes], "backfill")
                free = free[job.nodes :]

    def estimate(self, job: _Job) -> float:
        """The estimated length of a run of ``job`` from now: its remaining
        work, the mean init and load, the mean save of each checkpoint left."""
        remaining = job.spec.work - job.kept
        interval = job.spec.checkpoint_interval
        checkpoints = 0 if isinstance(interval, str) else math.ceil(remaining / interval)
        spec = job.spec
        return remaining + spec.init.mean() + spec.load.mean() + checkpoints * spec.save.mean()

    # --- helpers ----------------------------------------------------------------

    def _order(self, j: int) -> tuple[int, float, int]:
        return (-self.jobs[j].spec.priority, self.jobs[j].submit, j)

    def _refill_spares(self) -> list[int]:
        """Drops spares that left service, refills them from the free nodes
        (the highest ids), and returns the other free nodes (lowest first)."""
        free = self.model.free_nodes()
        in_service = set(free)
        self.spares = [n for n in self.spares if n in in_service]
        others = [n for n in free if n not in self.spares]
        while len(self.spares) < self.spare_count and others:
            self.spares.append(others.pop())
        return others

    def _start(self, j: int, nodes: list[int], how: How) -> None:
        self.model.start(j, nodes)
        job = self.jobs[j]
        job.end = self.model.now + self.estimate(job)
        if j in self.queue:
            self.queue.remove(j)
        self.running.add(j)
        self.starts.append(Start(self.model.now, j, tuple(nodes), how))


def run(
    model: ace.FleetModel,
    jobs: Sequence[ace.Job],
    until: float = math.inf,
    scheduler: EasySpares | None = None,
) -> ace.SimulationResult:
    """Drives ``model`` with :class:`EasySpares` (or ``scheduler``): submits
    each job at its ``submit`` time (``jobs`` in submission order, so job ids
    are their positions), takes in the events of each ``advance`` (every
    event of one instant) before deciding, and stops once every job is
    done, at ``until``, or when nothing more can happen. Returns the
    model's result."""
    if any(b.submit < a.submit for a, b in pairwise(jobs)):
        raise ValueError("jobs must be in submission order")
    sched = scheduler if scheduler is not None else EasySpares(model)
    pending = list(jobs)
    while True:
        while pending and pending[0].submit <= model.now:
            sched.submit(pending.pop(0))
        sched.schedule()
        if (not pending and len(sched.done) == len(jobs)) or model.now >= until:
            break
        target = min(until, pending[0].submit if pending else math.inf)
        if model.peek() == math.inf and target == math.inf:
            break  # no event will come: what is left waits forever
        events = model.advance(target)  # every event of one instant
        if not events and model.now < target:
            break  # the model's horizon
        for event in events:
            sched.handle(event)
    return model.result()
