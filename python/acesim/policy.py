"""Recovery policies: what a job does after a failure (re-placement), how
it takes nodes from others (preemption), and lemon-node quarantine. Built-in
enums, a Python callable, or a compiled callback.

>>> import acesim as ace
>>> policy = ace.Policy(replacement=ace.Replacement.SPARES,
...                     quarantine=ace.Quarantine(failures=3, window=7 * ace.DAY,
...                                               duration=14 * ace.DAY))
>>> policy.replacement.name
'SPARES'
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from ._validation import finite, integer, seconds
from .compiled import CompiledPolicy
from .distributions import Distribution, as_distribution
from .units import DAY

__all__ = [
    "BACKFILLS",
    "FailureView",
    "PlacementView",
    "Policy",
    "Preemption",
    "Quarantine",
    "Replacement",
]

#: Backfill modes of the built-in scheduler and their codes in the core.
BACKFILL_CODES: dict[str, int] = {"easy": 0, "greedy": 1}
BACKFILLS = tuple(BACKFILL_CODES)


class Replacement(enum.IntEnum):
    """Re-placement after a failure."""

    #: take a hot spare (then any free node); wait if there is none
    SPARES = 0
    #: wait for the failed node to be repaired (the job keeps its other nodes)
    WAIT_REPAIR = 1
    #: take nodes from running lower-priority jobs (neighbour churn)
    PREEMPT_LOWER = 2
    #: release every node and queue again
    REQUEUE = 3


class Preemption(enum.IntEnum):
    """How PREEMPT_LOWER picks and takes its victims."""

    #: lowest priority first, most recently started first; preempt at once
    IMMEDIATE = 0
    #: the victims that lose least first; with a grace time, wait for a
    #: victim's next checkpoint when it comes within the grace
    CHECKPOINT_AWARE = 1


@dataclass(frozen=True, init=False)
class Quarantine:
    """A node with ``failures`` failures within ``window`` seconds is removed
    from service for ``duration`` seconds (lemon-node handling).

    ``duration=math.inf`` retires the node for good: it never returns
    (``res.fleet["retired_nodes"]``; its quarantined node-hours run to the
    end of the simulated span). A job that retirement leaves with fewer
    nodes than it needs can never start again: its row is closed then with
    ``status`` :attr:`acesim.JobStatus.UNPLACEABLE` (never a hang or an
    infinite wall).

    >>> import math
    >>> Quarantine(failures=2, window=DAY, duration=math.inf).duration
    inf
    """

    failures: int
    window: float
    duration: float

    def __init__(
        self, failures: int = 3, window: float = 7 * DAY, duration: float = 7 * DAY
    ) -> None:
        object.__setattr__(
            self, "failures", integer("failures", failures, minimum=1, maximum=2**31)
        )
        w = float("inf") if window == float("inf") else seconds("window", window)
        object.__setattr__(self, "window", w)
        d = float("inf") if duration == float("inf") else seconds("duration", duration)
        object.__setattr__(self, "duration", d)


#: What a Python failure policy receives: a read-only view with the fields of
#: the C ABI's ``acesim_failure_view`` (time, fault_time, progress, work,
#: lost_work, repair_remaining, replica, job, gpus, priority, failures, cause,
#: nodes_held, nodes_needed, free_nodes, spare_nodes, down_nodes,
#: quarantined_nodes, preemptible_nodes).
FailureView = _core.FailureView

FailurePolicy = Callable[[FailureView], "Replacement | int | None"]

#: What a placement callback receives: a view (time, replica, job, gpus,
#: priority, nodes_needed, gpus_per_node, recovering, and ``node_failures`` /
#: ``since_failure``: numpy arrays aligned with the candidates giving the
#: failures observed on each node and the seconds since its last one, inf if
#: none) and the ascending ids of the candidate nodes; it returns
#: ``nodes_needed`` of them, or ``None`` to let the built-in scheduler choose.
PlacementView = _core.PlacementView
PlacementPolicy = Callable[[PlacementView, Any], "Sequence[int] | None"]


@dataclass(frozen=True, init=False)
class Policy:
    """The economic response to failure.

    ``on_failure`` (optional) decides per failure: a Python callable taking a
    :data:`FailureView` and returning a :class:`Replacement` (or ``None`` for
    ``replacement``), or a :class:`acesim.CompiledPolicy` called without the
    GIL. Exceptions raised by a Python policy propagate to the caller of
    :func:`acesim.simulate` with their traceback.

    ``place`` (optional) lets an outside scheduler choose the nodes of every
    start: from the queue (candidates: the free nodes that fit) and after a
    failure (``view.recovering``; candidates: the free nodes that fit and the
    hot spares). It is called with a :data:`PlacementView`, which carries each
    candidate's observed history (``node_failures``, ``since_failure``; never
    the hidden lemon flag), and the ascending candidate ids, and returns the
    node ids to use (or ``None`` for the built-in choice); an invalid choice
    raises ``ValueError``. The built-in re-placement takes hot spares first,
    then free nodes, each time the node healthy longest (earliest last
    failure, then the lowest id); a start from the queue takes the free nodes
    as they come (best fit for a job smaller than a node). Cold spares
    (``Fleet(cold_spares=...)``) are never candidates: when the nodes
    available now are not enough, the built-in choice acquires them.

    ``replacement_delay`` (optional; a Distribution or seconds) is a
    host-selection / rescheduling delay paid once per re-placement, separate
    from init + load. A re-placement is a recovery after a failure (or a
    planned maintenance stop) that takes at least one node the job did not
    hold: a hot spare, a free node, a cold spare or a preempted victim's
    node. The delay is drawn from the job's own
    stream once the job has all its nodes, and runs before init + load, the
    job holding its nodes (idle) meanwhile; it counts as ``recovery_wait``,
    so the accounting identity is unchanged. It is not paid for a restart in
    place (no node went down), under WAIT_REPAIR when the job gets its own
    node back, nor by a start from the queue (a first start, REQUEUE, a
    preempted victim: ``init`` is where scheduling latency lives). A node
    taken from the free pool is a new placement even when it is the job's own
    node back. If a node the job holds goes down during the delay, the job
    waits for nodes again and pays a fresh delay once it has them. Without a
    fleet (replacements always available) every recovery from a fault that
    takes its node down pays it.

    ``backfill`` is how the built-in scheduler fills the queue behind a job
    that does not fit (the queue's order is priority, then submission):

    - ``"easy"`` (default; EASY backfill, Lifka 1995, Mu'alem and Feitelson 2001):
      the first queued job that does not fit (the *head*) gets a
      reservation: the earliest time (the *shadow time*) enough nodes will be
      free for it, from the estimated ends of the jobs holding nodes and the
      scheduled returns of nodes under repair, in quarantine or in
      maintenance. A later job of any priority starts only if it fits now
      and either its own estimated end is no later than the shadow time, or
      it takes only nodes the head will not need then (the *extra* nodes,
      which it uses up). Only the head is protected; the reservation is
      recomputed at every dispatch, so failures and wrong estimates move it.
      A head that cannot fit even once every known release has happened
      (retired nodes never return) gets no reservation.
    - ``"greedy"`` (the scheduler before EASY): any queued job that fits
      starts, but a queued job that does not fit holds back every job of
      lower priority; within its own priority level it can starve (a wide
      job behind a stream of small ones).

    Under both, recovering jobs are served first, and one that does not fit
    holds back every queued job of lower priority. The estimated end of a
    run is its start plus the job's ``time_limit`` when it has one, else plus
    the mean init + load, the work left since its last checkpoint and a mean
    ``save`` for each checkpoint still ahead. Estimates are not moved when a
    run overruns its own (the shadow time may then be in the past: no job
    ends before it). A job that holds nodes after a failure (or a planned
    maintenance stop) is estimated as restarting at its fault. Jobs smaller
    than a node are placed by GPU: a backfilled job takes a node from the
    head only if it leaves the node with too few free GPUs for the head at
    the shadow time, and it is judged on the node the built-in placement
    would give it. A ``place`` callback changes no decision: for a start
    from the queue it is offered only the free nodes that keep the head's
    reservation (and ``None`` takes the built-in choice); re-placements
    after a failure are not restricted. Cold spares never serve the queue
    and count for no reservation.
    """

    replacement: Replacement
    preemption: Preemption
    quarantine: Quarantine | None
    on_failure: FailurePolicy | CompiledPolicy | None
    preemption_grace: float
    place: PlacementPolicy | None
    replacement_delay: Distribution | None
    backfill: str

    def __init__(
        self,
        replacement: Replacement = Replacement.SPARES,
        preemption: Preemption = Preemption.IMMEDIATE,
        quarantine: Quarantine | None = None,
        on_failure: FailurePolicy | CompiledPolicy | None = None,
        preemption_grace: float = 0.0,
        place: PlacementPolicy | None = None,
        replacement_delay: Distribution | float | None = None,
        backfill: str = "easy",
    ) -> None:
        object.__setattr__(self, "replacement", _enum("replacement", Replacement, replacement))
        object.__setattr__(self, "preemption", _enum("preemption", Preemption, preemption))
        if quarantine is not None and not isinstance(quarantine, Quarantine):
            raise TypeError(
                f"quarantine must be a Quarantine or None, got {type(quarantine).__name__}"
            )
        object.__setattr__(self, "quarantine", quarantine)
        if on_failure is not None and not (
            isinstance(on_failure, CompiledPolicy) or callable(on_failure)
        ):
            raise TypeError(
                "on_failure must be a callable, a CompiledPolicy or None, got "
                f"{type(on_failure).__name__}"
            )
        object.__setattr__(self, "on_failure", on_failure)
        object.__setattr__(self, "preemption_grace", finite("preemption_grace", preemption_grace))
        if self.preemption_grace < 0:
            raise ValueError(f"preemption_grace must be >= 0, got {self.preemption_grace!r}")
        if place is not None and not callable(place):
            raise TypeError(f"place must be a callable or None, got {type(place).__name__}")
        object.__setattr__(self, "place", place)
        delay = (
            None
            if replacement_delay is None
            else as_distribution("replacement_delay", replacement_delay)
        )
        if delay is not None and not 0.0 <= delay.mean() < math.inf:
            raise ValueError(
                f"replacement_delay must have a finite mean >= 0, got {delay.mean()!r}"
            )
        object.__setattr__(self, "replacement_delay", delay)
        if not isinstance(backfill, str):
            raise TypeError(f"backfill must be one of {BACKFILLS}, got {type(backfill).__name__}")
        if backfill.lower() not in BACKFILL_CODES:
            raise ValueError(f"backfill must be one of {BACKFILLS}, got {backfill!r}")
        object.__setattr__(self, "backfill", backfill.lower())


def _placement(fn: PlacementPolicy) -> Callable[[PlacementView, Any], Any]:
    """``fn`` as the core calls it: node ids that are bools are refused
    (the core would take True and False as nodes 1 and 0)."""

    def place(view: PlacementView, candidates: Any) -> Any:
        nodes = fn(view, candidates)
        if nodes is None or isinstance(nodes, str | bytes):
            return nodes  # None: the built-in choice; a string: the core refuses it
        if isinstance(nodes, np.ndarray):
            if nodes.dtype == np.bool_:
                raise TypeError("place must return node ids, got an array of bools")
            return nodes
        if not isinstance(nodes, Iterable):
            return nodes  # the core refuses it
        ids = list(nodes)
        for k, n in enumerate(ids):
            if isinstance(n, bool | np.bool_):
                raise TypeError(f"place must return node ids, got a bool at [{k}]: {n!r}")
        return ids

    return place


def _enum(name: str, kind: type[enum.IntEnum], value: Any) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, enum.Enum):
        raise TypeError(
            f"{name} must be a {kind.__name__}, got {type(value).__name__}.{value.name}"
        )
    if isinstance(value, str):
        try:
            return kind[value.upper()]
        except KeyError:
            raise ValueError(
                f"{name} must be one of {[m.name for m in kind]}, got {value!r}"
            ) from None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
        try:
            return kind(int(value))
        except ValueError:
            raise ValueError(
                f"{name} must be one of {[m.name for m in kind]}, got {value!r}"
            ) from None
    raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
