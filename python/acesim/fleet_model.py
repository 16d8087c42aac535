"""The fleet model driven step by step by an outside scheduler.

:class:`FleetModel` is what a scheduler's test suite embeds: the scheduler
submits jobs, places them on nodes it chooses, preempts and re-places them;
the model runs the node pool, the failure processes (node- and job-level,
with their causes and detection latencies), quarantine, the job lifecycle
(starts, checkpoints, rollbacks) and the accounting, and reports what needs a
decision. It never changes the scheduler's decisions. Its numbers are the
event-heap engine's: replaying the built-in scheduler's decisions through it
gives the rows :func:`acesim.simulate` gives.
"""

from __future__ import annotations

import dataclasses
import enum
import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._core_input import core_model
from ._validation import integer, real, seconds
from .analytic import meta_scale_model
from .distributions import Distribution, scipy_to_law
from .fleet import Cause, Fleet, _cause_list
from .job import RULE_CODES, Job
from .policy import Policy
from .simulation import (
    DEFAULT_MAX_STALLED_FAILURES,
    SimulationResult,
    _check_cause_widths,
    _DistributionTable,
    _horizon,
    _max_stalled_failures,
    _naming_stalled_jobs,
    _tier_spec,
)

__all__ = ["EVENT_KINDS", "Event", "FleetModel", "NodeState"]

EventKindName = Literal[
    "node_down", "node_up", "job_failed", "job_done", "checkpoint", "job_submitted"
]

JobStateName = Literal[
    "queued", "starting", "computing", "writing", "failing", "waiting", "done", "reconfiguring"
]

#: What :meth:`FleetModel.state` says, in the core's order.
JOB_STATES: tuple[JobStateName, ...] = (
    "queued",
    "starting",
    "computing",
    "writing",
    "failing",
    "waiting",
    "done",
    "reconfiguring",
)

#: What :meth:`FleetModel.advance` reports, in the core's order (the last,
#: ``job_submitted``, is the model's own: a job of :meth:`FleetModel.add_jobs`
#: arrived).
EVENT_KINDS: tuple[EventKindName, ...] = (
    "node_down",
    "node_up",
    "job_failed",
    "job_done",
    "checkpoint",
    "job_submitted",
)


class NodeState(enum.IntEnum):
    """What a node is now, as :meth:`FleetModel.node_states` reports it (the
    core's codes)."""

    #: In service, holding no job, outside the hot-spare pool.
    FREE = 0
    #: In service, holding a job (all of its GPUs or some).
    BUSY = 1
    #: Out of service: under repair (its fault detected or not) or in maintenance.
    DOWN = 2
    #: Out of service: quarantined (it returns when the quarantine ends).
    QUARANTINED = 3
    #: In service and free, in the fleet's hot-spare pool (:meth:`FleetModel.spare_nodes`).
    SPARE = 4
    #: Quarantined for good (``Quarantine(duration=math.inf)``): it never returns.
    RETIRED = 5


@dataclass(frozen=True)
class Event:
    """Something the model reports to the scheduler.

    ``kind``: ``"node_down"`` (``nodes`` left service: failed, quarantined or
    drained for maintenance; ``job`` is the job a job-level failure was
    blamed on, else ``None``), ``"node_up"`` (``nodes`` are back),
    ``"job_failed"`` (reported when the fault is detected, ``fault_time``
    being when it struck; ``nodes`` are the nodes the job lost, and it still
    holds its other nodes, see :meth:`FleetModel.nodes_of`; a planned
    maintenance stop is reported the same way, with ``cause`` ``None``),
    ``"job_done"`` (``nodes``: the nodes it held when it finished, released
    now), and ``"checkpoint"`` (when the model was asked for
    them: a checkpoint is kept, ``durable`` (a synchronous write's end, an
    asynchronous persist's end) or a tier's (``durable`` False), at
    ``progress``; an asynchronous snapshot is reported when its persist
    ends), and ``"job_submitted"`` (a job given to
    :meth:`FleetModel.add_jobs` arrived and is queued; ``job`` is the id it
    got). ``cause`` indexes the model's causes (``None``: none). For
    ``job_failed``, ``progress`` is the progress the job rolled back to.
    ``held`` (``job_done`` and ``job_failed``): every node the job held at
    that moment, in its order (for ``job_failed`` the lost ones included:
    its survivors are ``held`` less ``nodes``); ``()`` for the other kinds.
    Every event of one instant comes in one :meth:`FleetModel.advance` call.
    """

    time: float
    kind: EventKindName
    job: int | None
    nodes: tuple[int, ...]
    cause: int | None
    fault_time: float | None = None
    progress: float | None = None
    durable: bool | None = None
    held: tuple[int, ...] = ()


class FleetModel:
    """The model of a fleet driven by an outside scheduler.

    ``fleet``, ``failures`` (the job-level inter-failure law; ``None``: the
    scale-aware default when the fleet has no node-level failures, else
    none), ``causes``, ``seed``, ``replica`` (the replica id: the model draws
    what replica ``replica`` of :func:`acesim.simulate` draws) and
    ``horizon`` mean what they mean for :func:`acesim.simulate`. Of a
    ``policy`` only what belongs to the model applies: its ``quarantine``
    (placement, re-placement, preemption and backfill are the scheduler's;
    a policy with callbacks or a re-placement delay is refused). Cold spares
    are the built-in scheduler's and are refused too. ``checkpoints``: also
    report ``"checkpoint"`` events. ``max_stalled_failures`` applies as in
    :func:`acesim.simulate` (the same engine, the same rule): the
    :meth:`advance` in which a job's failure is the ``max_stalled_failures``-th
    in a row without a new durable checkpoint raises
    :class:`acesim.NoProgressError`, the model standing at that failure. A
    FleetModel runs no Python callback (the decisions are the scheduler's),
    so nothing of its own can call back into it while it runs; one started
    from a policy callback of :func:`acesim.simulate` (a look-ahead) counts
    toward the nesting limit (8 deep) and past it raises
    :class:`acesim.ReentrantCallError`.

    The scheduler's side:

    - :meth:`submit` a :class:`acesim.Job` now (returns its id; it is
      queued), or :meth:`add_jobs` to have each submitted at its
      ``Job.submit`` (a ``"job_submitted"`` event then);
    - :meth:`start` a queued job, or one waiting after a failure, on the
      nodes it chooses (all of them: survivors left out are released);
    - :meth:`stop` a running job (accounted as a preemption, its churn
      charged to ``for_job``), or :meth:`requeue` a failed one (back to the
      queue, its nodes released);
    - :meth:`resize` an elastic job (shrink it, or give its nodes back);
    - :meth:`advance` the clock to a time, or to the next instant at which
      something needs a decision, whichever is first (every event of that
      instant in one list); :meth:`peek` at the next event's time;
    - read the state: :meth:`node_states` (an array of :class:`NodeState`),
      :meth:`free_nodes`, :meth:`spare_nodes`, :meth:`down_nodes`,
      :meth:`running`, :meth:`waiting`, :meth:`queued`, :meth:`state`,
      :meth:`nodes_of`, :meth:`nodes_needed`.

    Errors, not silent fixes: a start on a busy, failed or quarantined node,
    a start of a running job, time going backwards, a job that does not fit.

    >>> import acesim as ace
    >>> fleet = ace.Fleet(4, repair=ace.Constant(3600.0),
    ...                   node_failures=ace.NodeTrace.from_gaps({0: [5000.0]}, nodes=4))
    >>> model = ace.FleetModel(fleet)
    >>> job = model.submit(ace.Job(16, work=8 * 3600.0, checkpoint_interval=3600.0))
    >>> model.start(job, [0, 1])
    >>> [e.kind for e in model.advance(10_000.0)]
    ['node_down', 'job_failed']
    """

    def __init__(
        self,
        fleet: Fleet,
        failures: Distribution | None = None,
        causes: Any = None,
        policy: Policy | None = None,
        seed: int = 0,
        replica: int = 0,
        horizon: float = math.inf,
        *,
        checkpoints: bool = False,
        check_invariants: bool = False,
        max_events: int | None = None,
        max_stalled_failures: int = DEFAULT_MAX_STALLED_FAILURES,
    ) -> None:
        if not isinstance(fleet, Fleet):
            raise TypeError(f"fleet must be a Fleet, got {type(fleet).__name__}")
        failures = scipy_to_law("failures", failures)
        if failures is not None and not isinstance(failures, Distribution):
            raise TypeError(
                f"failures must be a Distribution or None, got {type(failures).__name__}"
            )
        if policy is not None and not isinstance(policy, Policy):
            raise TypeError(f"policy must be a Policy or None, got {type(policy).__name__}")
        if policy is not None and (policy.on_failure is not None or policy.place is not None):
            raise ValueError(
                "policy: a FleetModel takes only what belongs to the model (quarantine); "
                "on_failure and place are the outside scheduler's decisions"
            )
        if policy is not None and policy.replacement_delay is not None:
            raise ValueError("policy.replacement_delay: re-placement is the outside scheduler's")
        for name, flag in (("checkpoints", checkpoints), ("check_invariants", check_invariants)):
            if not isinstance(flag, bool | np.bool_):
                raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
        checkpoints, check_invariants = bool(checkpoints), bool(check_invariants)
        seed_ = integer("seed", seed, minimum=0, maximum=2**64 - 1)
        replica_ = integer("replica", replica, minimum=0, maximum=2**32 - 2)
        horizon_ = _horizon(horizon)
        max_stalled = _max_stalled_failures(max_stalled_failures)
        self._args: dict[str, Any] = dict(
            fleet=fleet,
            failures=failures,
            causes=causes,
            policy=policy,
            seed=seed_,
            replica=replica_,
            horizon=horizon_,
            checkpoints=checkpoints,
            check_invariants=check_invariants,
            max_events=max_events,
        )
        if max_stalled != DEFAULT_MAX_STALLED_FAILURES:
            self._args["max_stalled_failures"] = max_stalled
        self._causes: list[Cause] = _cause_list(causes)
        _check_cause_widths(self._causes, fleet)
        law = failures
        if law is None and fleet.node_failures is None:
            law = meta_scale_model()
        self._table = _DistributionTable(by_value=True)  # submits add no law twice
        index = self._table.index
        quarantine = Policy(quarantine=policy.quarantine) if policy is not None else None
        model = core_model(index, fleet, quarantine, self._causes)
        failure_index = index(law)
        events_cap = (
            0 if max_events is None else integer("max_events", max_events, minimum=1, maximum=2**63)
        )
        self._core = _core.FleetModel(
            list(self._table.compiled),
            model.fleet,
            model.causes,
            failure_index,
            model.policy,
            gpus_per_node=fleet.gpus_per_node,
            seed=seed_,
            replica=replica_,
            horizon=horizon_,
            max_events=events_cap,
            check_invariants=check_invariants,
            record_events=True,
            report_checkpoints=checkpoints,
            max_stalled_failures=max_stalled,
        )
        self._sent = len(self._table.compiled)  # distributions the core has
        self._fleet = fleet
        self._jobs: list[Job] = []
        self._log: list[tuple[str, tuple[Any, ...]]] = []
        # add_jobs's jobs not submitted yet: (arrival, order given, job).
        self._arrivals: list[tuple[float, int, Job]] = []
        self._given = 0

    # --- the scheduler's side ---------------------------------------------------

    @property
    def now(self) -> float:
        """The model's clock (seconds)."""
        return float(self._core.now)

    @property
    def fleet(self) -> Fleet:
        return self._fleet

    def submit(self, job: Job) -> int:
        """Submits ``job`` now (its ``submit`` is ignored: the model's clock
        is its submission); returns its id. It waits in the queue for
        :meth:`start`."""
        if not isinstance(job, Job):
            raise TypeError(f"job must be a Job, got {type(job).__name__}")
        if job.time_limit is not None:
            raise ValueError(
                "job.time_limit: a run's limit is the outside scheduler's to enforce (stop the job)"
            )
        index = self._table.index
        rule = (
            0
            if not isinstance(job.checkpoint_interval, str)
            else RULE_CODES[job.checkpoint_interval]
        )
        interval = (
            0.0 if isinstance(job.checkpoint_interval, str) else float(job.checkpoint_interval)
        )
        # Every law indexed before the new ones are sent to the core.
        init, save, load, persist = (index(job.init), index(job.save), index(job.load),
                                     index(job.persist))  # fmt: skip
        tiers = [_tier_spec(t, index) for t in job.tiers]
        reconfigure = index(job.reconfigure) if job.min_gpus is not None else -1
        for compiled in self._table.compiled[self._sent :]:
            self._core.add_distribution(compiled)
        self._sent = len(self._table.compiled)
        jid = int(
            self._core.submit(
                gpus=job.gpus,
                work=job.work,
                checkpoint_interval=interval,
                rule=rule,
                init=init,
                save=save,
                load=load,
                priority=job.priority,
                persist=persist,
                tiers=tiers,
                min_gpus=job.min_gpus or 0,
                reconfigure=reconfigure,
                scaling=job.scaling,
                checkpoint_bytes=job.checkpoint_bytes or 0.0,
            )
        )
        self._jobs.append(job)
        self._log.append(("submit", (job,)))
        return jid

    def add_jobs(self, jobs: Iterable[Job]) -> None:
        """Submits each of ``jobs`` at its ``Job.submit`` time (now for a
        time already past): :meth:`advance` stops at that instant and
        reports a ``"job_submitted"`` event for it (after the instant's other
        events), its ``job`` the id the job got then (ids are given in
        submission order, :meth:`submit`'s included; jobs arriving at one
        time in the order given). Jobs arriving after the horizon never
        arrive. Every job is checked now, as :meth:`submit` checks it;
        nothing is added when one is refused."""
        if isinstance(jobs, Job) or not isinstance(jobs, Iterable):
            raise TypeError(f"jobs must be a sequence of Job, got {type(jobs).__name__}")
        given = list(jobs)
        capacity = self._fleet.nodes * self._fleet.gpus_per_node
        for k, job in enumerate(given):
            if not isinstance(job, Job):
                raise TypeError(f"jobs[{k}] must be a Job, got {type(job).__name__}")
            if job.time_limit is not None:
                raise ValueError(
                    f"jobs[{k}].time_limit: a run's limit is the outside scheduler's to enforce "
                    "(stop the job)"
                )
            if job.gpus > capacity:
                raise ValueError(
                    f"jobs[{k}].gpus: {job.gpus} GPUs do not fit in the fleet ({capacity} GPUs)"
                )
        now = self.now
        for job in given:
            heapq.heappush(self._arrivals, (max(float(job.submit), now), self._given, job))
            self._given += 1
        self._log.append(("add_jobs", (tuple(given),)))

    def _next_arrival(self) -> float:
        """When the next job of :meth:`add_jobs` arrives (inf: none before the horizon)."""
        if not self._arrivals or self._arrivals[0][0] > self._args["horizon"]:
            return math.inf
        return self._arrivals[0][0]

    def _arrive(self, t: float) -> list[Event]:
        """Submits the jobs arriving at ``t`` (the clock), as events."""
        out = []
        while self._arrivals and self._arrivals[0][0] <= t:
            _, _, job = heapq.heappop(self._arrivals)
            jid = self.submit(job)
            self._log.pop()  # (add_jobs is logged; a copy submits it again as it advances)
            out.append(Event(time=t, kind="job_submitted", job=jid, nodes=(), cause=None))
        return out

    def start(self, job: int, nodes: Sequence[int]) -> None:
        """Starts ``job`` (queued, or waiting after a failure) on ``nodes``,
        in that order (a job-level failure blames a node by its place in the
        list). A failed job keeps the survivors it is given again; those left
        out are released."""
        jid = self._job_id("job", job)
        if isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
            raise TypeError(f"nodes must be a sequence of node ids, got {type(nodes).__name__}")
        ids = [integer(f"nodes[{k}]", n, minimum=0, maximum=2**32 - 1) for k, n in enumerate(nodes)]
        self._core.start(jid, ids)
        self._log.append(("start", (jid, tuple(ids))))

    def can_start(self, job: int, nodes: Sequence[int]) -> bool:
        """Whether :meth:`start` would accept ``job`` on ``nodes`` now: False
        while one of them is busy (another job holds it or GPUs of it) or
        out of service; raises what :meth:`start` raises for a request that
        never can be (the job not queued or waiting, the wrong node count, a
        node that does not exist or is given twice). Changes nothing."""
        jid = self._job_id("job", job)
        if isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
            raise TypeError(f"nodes must be a sequence of node ids, got {type(nodes).__name__}")
        ids = [integer(f"nodes[{k}]", n, minimum=0, maximum=2**32 - 1) for k, n in enumerate(nodes)]
        return bool(self._core.can_start(jid, ids))

    def stop(self, job: int, for_job: int | None = None) -> None:
        """Stops a running ``job`` (a preemption: what it did since its last
        durable checkpoint is lost; that and its next restart are
        ``for_job``'s churn when given) or sends a job waiting after a
        failure back to the queue (its nodes released). Either way it is
        queued again for :meth:`start`."""
        jid = self._job_id("job", job)
        by = -1 if for_job is None else self._job_id("for_job", for_job)
        self._core.stop(jid, by)
        self._log.append(("stop", (jid, by)))

    def requeue(self, job: int) -> None:
        """Sends ``job``, waiting after a failure, back to the queue: the
        nodes it kept are released (nothing more is lost; its wait so far
        counts as ``recovery_wait``). Only a job waiting after a failure can
        be requeued; :meth:`stop` preempts a running one."""
        jid = self._job_id("job", job)
        state = self.state(jid)
        if state != "waiting":
            raise ValueError(
                f"job: job {jid} is {state}; only a job waiting after a failure can be requeued "
                "(stop preempts a running job)"
            )
        self._core.stop(jid, -1)
        self._log.append(("stop", (jid, -1)))

    def resize(self, job: int, nodes: Sequence[int]) -> None:
        """Runs elastic ``job`` (``Job(min_gpus=...)``) on ``nodes``: as many
        as it needs or fewer, down to its ``min_gpus``. While it computes, it
        pauses for its ``reconfigure`` and goes on at the new width (rate
        (nodes / needed) ** ``scaling``, the rest ``narrow``); after a failure
        it restarts on them (init + load + reconfigure). Nodes it held and is
        not given are released."""
        jid = self._job_id("job", job)
        if isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
            raise TypeError(f"nodes must be a sequence of node ids, got {type(nodes).__name__}")
        ids = [integer(f"nodes[{k}]", n, minimum=0, maximum=2**32 - 1) for k, n in enumerate(nodes)]
        self._core.resize(jid, ids)
        self._log.append(("resize", (jid, tuple(ids))))

    def advance(self, until: float, *, whole_instant: bool = True) -> list[Event]:
        """Runs the model to ``until`` (events at ``until`` included) or to
        the next instant at which something needs a decision, whichever is
        first, and returns what it reports: every event of that instant, in
        one list, in the engine's order (a node's failure before the job
        failure it causes; events of one time in the order they were
        scheduled), so a scheduler that decides once after each call
        decides on everything that happened then. An empty list means the
        clock reached ``until``, or the horizon; with ``until`` infinite and
        nothing left to happen, the clock stays. After a call that reported
        something, ``peek() > now`` unless a decision since scheduled
        something for now.

        ``whole_instant=False`` stops right after the first event that
        reports something (with what it reported; ``peek() == now`` then
        says more are due now): for a driver that decides between events of
        one instant, as the built-in scheduler does (replaying its decisions
        needs it)."""
        t = real("until", until)
        t = math.inf if t == math.inf else seconds("until", t)
        if not isinstance(whole_instant, bool | np.bool_):
            raise TypeError(f"whole_instant must be a bool, got {type(whole_instant).__name__}")
        whole = bool(whole_instant)
        arrival = self._next_arrival()
        with _naming_stalled_jobs([job.name for job in self._jobs]):
            raw = self._core.advance(min(t, arrival), whole)
        self._log.append(("advance", (t, whole)))
        out = []
        for e in raw:
            name = EVENT_KINDS[e.kind]
            out.append(
                Event(
                    time=float(e.time),
                    kind=name,
                    job=None if e.job < 0 else int(e.job),
                    nodes=tuple(int(n) for n in e.nodes),
                    cause=None if e.cause < 0 else int(e.cause),
                    fault_time=float(e.fault_time) if name == "job_failed" else None,
                    progress=float(e.progress) if name in ("job_failed", "checkpoint") else None,
                    durable=bool(e.durable) if name == "checkpoint" else None,
                    held=tuple(int(n) for n in e.held),
                )
            )
        # Arrivals of this instant, once the model has nothing else due then.
        if arrival <= t and arrival == self.now and float(self._core.peek()) > arrival:
            out += self._arrive(arrival)
        return out

    def peek(self) -> float:
        """The time of the next event, an arrival of :meth:`add_jobs`
        included (``math.inf``: none before the horizon)."""
        t = min(float(self._core.peek()), self._next_arrival())
        return math.inf if t > self._args["horizon"] else t

    def free_nodes(self) -> list[int]:
        """Nodes in service that hold no job (hot spares included)."""
        return [int(n) for n in self._core.free_nodes()]

    def spare_nodes(self) -> list[int]:
        """The free nodes the fleet's hot-spare pool holds now: the
        ``spares`` highest-numbered free nodes at first, refilled first by
        nodes that come free (as the built-in scheduler keeps it). The
        rollup's ``spare_uses`` and ``spare_idle_node_hours`` count this pool:
        a start on one of these nodes is a spare use."""
        return [int(n) for n in self._core.spare_nodes()]

    def state(self, job: int) -> JobStateName:
        """Where ``job`` stands: ``"queued"``, ``"starting"`` (init + load),
        ``"computing"``, ``"writing"`` (a checkpoint, or waiting for a
        persist), ``"failing"`` (its fault is not detected yet, or it runs
        slow until then: it can be neither stopped nor resized),
        ``"waiting"`` (after a failure, for :meth:`start` or :meth:`stop`),
        ``"done"`` or ``"reconfiguring"`` (an elastic resize)."""
        return JOB_STATES[self._core.state(self._job_id("job", job))]

    def nodes_of(self, job: int) -> list[int]:
        """The nodes ``job`` holds, in its order; once it is done, the nodes
        it held when it finished (its last placement; it holds none)."""
        return [int(n) for n in self._core.nodes_of(self._job_id("job", job))]

    def nodes_needed(self, job: int) -> int:
        """How many nodes ``job`` runs on: its GPUs over the fleet's
        ``gpus_per_node``, rounded up (a job smaller than a node takes one);
        an elastic job's full width."""
        return int(self._core.job_nodes(self._job_id("job", job)))

    def node_states(self) -> npt.NDArray[np.uint8]:
        """What each node is now, indexed by node id: an array of
        :class:`NodeState` codes (``uint8``; compare with the enum,
        ``states == ace.NodeState.DOWN``). One pass over the fleet."""
        return np.asarray(self._core.node_states(), dtype=np.uint8)

    def down_nodes(self) -> list[int]:
        """The nodes out of service now, ascending: under repair, in
        maintenance, quarantined or retired (:meth:`node_states` says
        which). Costs what it returns, not the fleet's size."""
        return [int(n) for n in self._core.down_nodes()]

    def running(self) -> list[int]:
        """The jobs running now, ascending: started and holding their nodes
        (``"starting"``, ``"computing"``, ``"writing"``, ``"failing"``,
        ``"reconfiguring"``). Jobs waiting after a failure are
        :meth:`waiting`'s. Costs the started jobs not done."""
        return [int(j) for j in self._core.running()]

    def waiting(self) -> list[int]:
        """The jobs waiting after a failure for :meth:`start`,
        :meth:`requeue` or :meth:`stop`, ascending."""
        return [int(j) for j in self._core.waiting()]

    def queued(self) -> list[int]:
        """The queued jobs in queue order: priority (high first), then
        submission, then id. Costs what it returns."""
        return [int(j) for j in self._core.queued()]

    @property
    def jobs(self) -> list[Job]:
        """The jobs submitted so far (ids are their positions)."""
        return list(self._jobs)

    def copy(self) -> FleetModel:
        """An independent model in the same state (the same calls replayed:
        the model is deterministic), for a scheduler that looks ahead."""
        fork = FleetModel(**self._args)
        for name, args in self._log:
            if name == "submit":
                fork.submit(*args)
            elif name == "add_jobs":
                fork.add_jobs(args[0])
            elif name == "start":
                fork.start(args[0], list(args[1]))
            elif name == "stop":
                fork.stop(args[0], None if args[1] < 0 else args[1])
            elif name == "resize":
                fork.resize(args[0], list(args[1]))
            else:
                fork.advance(args[0], whole_instant=args[1])
        return fork

    def result(self) -> SimulationResult:
        """The results so far, as :func:`acesim.simulate` gives them (``.jobs``,
        ``.fleet``, ``.trace``, ``.events``, ``.placements``,
        ``.node_events``): unfinished jobs are closed at the model's clock.
        The model goes on unchanged: the results come from a fork (the calls
        so far replayed), so this costs about as much as the run did. Its
        ``provenance`` holds the model's arguments (``fleet_model``) and
        the calls so far (``calls``: name and arguments, in order)."""
        if not self._jobs:
            raise ValueError("result: no job was submitted")
        result = SimulationResult._from_tables(
            self.copy()._core.close(),
            self._args["seed"],
            1,
            job_names=[job.name for job in self._jobs],
        )
        # Provenance: the model's arguments and the calls that drove it
        # (replaying them gives this result again).
        return dataclasses.replace(
            result, _origin={"fleet_model": dict(self._args), "calls": list(self._log)}
        )

    def _job_id(self, name: str, job: Any) -> int:
        jid = integer(name, job, minimum=0)  # the type first
        if not self._jobs:
            raise ValueError(f"{name}: no job was submitted yet")
        return integer(name, jid, minimum=0, maximum=len(self._jobs) - 1)
