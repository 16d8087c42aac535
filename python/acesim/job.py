"""A training job: its size, its work and its checkpoint/restart costs."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._validation import (
    check_seconds,
    finite,
    integer,
    non_negative,
    seconds,
    sequence_of,
)
from .distributions import Distribution, as_distribution
from .units import MINUTE

__all__ = ["INTERVAL_RULES", "CheckpointTier", "Job", "JobArray"]

#: Checkpoint tiers a job may have besides its durable checkpoint (the core's kMaxTiers).
MAX_TIERS = 4

#: Rules accepted as ``checkpoint_interval`` besides a number of seconds, and
#: their codes in the core (one source: the compiled IntervalRule enum).
RULE_CODES: dict[str, int] = {
    "young": int(_core.IntervalRule.YOUNG),
    "daly": int(_core.IntervalRule.DALY),
    "adaptive": int(_core.IntervalRule.ADAPTIVE),
}
INTERVAL_RULES = tuple(RULE_CODES)


def interval_rule(text: str) -> str | None:
    """The interval rule ``text`` names (``"young"``, ``"daly"``,
    ``"adaptive"``, in any case, blanks around it ignored), else None: the
    one reading of a rule that every entry point shares (a rule is never a
    duration)."""
    rule = text.strip().lower()
    return rule if rule in RULE_CODES else None


def _rule(checkpoint_interval: str) -> str:
    """A rule name, checked and lower-cased."""
    rule = interval_rule(checkpoint_interval)
    if rule is None:
        raise ValueError(
            f"checkpoint_interval must be seconds or one of {INTERVAL_RULES}, "
            f"got {checkpoint_interval!r}"
        )
    return rule


IntervalRule = Literal["young", "daly", "adaptive"]


class CheckpointTier:
    """A fast checkpoint level beside a job's durable checkpoint: a
    synchronous write of ``save`` seconds (a stall) every ``interval``
    seconds of progress, loaded in ``load`` seconds by a restart from it
    (e.g. an in-memory copy every 5 minutes, a node-local one every 30).

    ``replication`` is how many of the job's nodes hold a copy: the tier
    survives a failure that takes fewer than ``replication`` of the job's
    nodes (``1``: process failures only, see :class:`acesim.Cause`'s
    ``scope``); the durable checkpoint survives everything. A failure rolls
    the job back to the newest checkpoint that survives it. A preemption,
    a time-limit stop or a planned maintenance stop moves the job off its
    nodes: only the durable checkpoint follows it.

    >>> import acesim as ace
    >>> ace.CheckpointTier(5 * ace.MINUTE, save=2.0, load=10.0)
    CheckpointTier(interval=300, save=Constant(value=2.0), load=Constant(value=10.0), replication=1)
    """

    __slots__ = ("interval", "load", "replication", "save")

    def __init__(
        self,
        interval: float,
        save: Distribution | float,
        load: Distribution | float,
        replication: int = 1,
    ) -> None:
        self.interval: float = seconds("interval", interval, positive=True)
        self.save: Distribution = as_distribution("save", save)
        self.load: Distribution = as_distribution("load", load)
        self.replication: int = integer("replication", replication, minimum=1, maximum=2**24)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckpointTier):
            return NotImplemented
        return (self.interval, self.save, self.load, self.replication) == (
            other.interval,
            other.save,
            other.load,
            other.replication,
        )

    def __hash__(self) -> int:
        return hash((self.interval, self.replication))

    def __repr__(self) -> str:
        return (
            f"CheckpointTier(interval={self.interval:g}, save={self.save!r}, "
            f"load={self.load!r}, replication={self.replication})"
        )


def _tiers(tiers: Any, interval: float | str) -> tuple[CheckpointTier, ...]:
    """A job's tiers, checked: at most MAX_TIERS, none longer than a numeric
    durable interval (a rule's interval is checked by the core)."""
    if tiers is None or (isinstance(tiers, tuple | list) and not tiers):
        return ()
    out = tuple(sequence_of("tiers", tiers, CheckpointTier))
    if len(out) > MAX_TIERS:
        raise ValueError(f"tiers: at most {MAX_TIERS} checkpoint tiers, got {len(out)}")
    if not isinstance(interval, str):
        for k, tier in enumerate(out):
            if tier.interval > interval:
                raise ValueError(
                    f"tiers[{k}].interval ({tier.interval:g} s) must not exceed the durable "
                    f"checkpoint_interval ({interval:g} s)"
                )
    return out


def _elastic(
    min_gpus: Any, reconfigure: Any, scaling: Any, gpus: int
) -> tuple[int | None, Distribution, float]:
    """An elastic job's settings, checked (``gpus``: the smallest job's)."""
    minimum: int | None = None
    if min_gpus is not None:
        minimum = integer("min_gpus", min_gpus, minimum=1, maximum=2**32 - 1)
        if minimum > gpus:
            raise ValueError(f"min_gpus ({minimum}) must not exceed gpus ({gpus})")
    scale = finite("scaling", scaling)
    if scale < 0:
        raise ValueError(f"scaling must be >= 0, got {scale!r}")
    return minimum, as_distribution("reconfigure", reconfigure), scale


class Job:
    """A job of ``gpus`` GPUs that must do ``work`` seconds of compute.

    ``checkpoint_interval`` is seconds of compute between checkpoints, or
    ``"young"`` / ``"daly"``: the optimum for the failure model's mean at this
    job's size and the mean ``save`` latency; or ``"adaptive"``: Young's
    interval for an online MTBF estimate, updated at every (re)start.
    ``init`` (scheduling, container and driver init, data staging), ``save``
    and ``load`` are distributions (or numbers of seconds), drawn per event.
    Every start, the first included, costs init + load.

    ``persist`` (a distribution, or ``None``) makes checkpoints asynchronous
    (PyTorch DCP, Megatron): ``save`` is then the blocking snapshot (a stall)
    and ``persist`` the background write, during which compute goes on. A
    checkpoint is durable only when its persist ends; a failure before that
    rolls back to the previous durable one (its snapshot's segment counts as
    ``wasted``, the row's ``lost_checkpoints`` counts it). At most one
    persist is in flight: a checkpoint due while the previous persist still
    runs waits for it (a stall, ``ckpt_stall``), and the job is done when its
    final checkpoint is durable. ``persist=0`` is the synchronous model.

    ``tiers`` are faster checkpoint levels beside the durable one (see
    :class:`CheckpointTier`): a restart from a tier loads with the tier's
    ``load``; the row's ``tier_restores`` counts those restarts. Every
    interval is in seconds of progress.

    ``min_gpus`` makes the job elastic (TorchElastic, Oobleck): when a
    failure takes nodes and no replacement is at hand (under every
    replacement policy, on a :class:`acesim.Fleet`), a job that still holds
    at least ``min_gpus`` GPUs goes on with them instead of waiting: it
    restarts at once on what it holds, at a progress rate of (GPUs held /
    ``gpus``) ** ``scaling``, and grows back once all its missing nodes are
    at hand again (it waits for them ahead of queued jobs of lower
    priority; a failure while narrow is a failure as any other). Each
    shrink and each grow costs ``reconfigure`` (``overhead``); the throughput
    lost to running narrow is the row's ``narrow`` bucket. Checkpoint
    intervals stay in seconds of progress, so running narrow stretches them
    in wall-clock. ``min_gpus`` must not exceed ``gpus`` and, for a job that
    spans nodes, must be a multiple of a node's GPUs (checked by
    :func:`acesim.simulate`, which knows ``gpus_per_node``).

    ``checkpoint_bytes`` (or ``None``): the size of the durable checkpoint,
    for a fleet with ``storage_bandwidth`` (see :class:`acesim.Fleet`):
    concurrent writes and loads share it, and the ``save`` / ``persist`` /
    ``load`` laws are then the fixed part of each.

    ``time_limit`` (seconds, or ``None`` for none) caps each run: a run is
    stopped that long after it started (init + load included) and the job
    is queued again to restart from its last checkpoint, like a preemption
    without a preemptor (Meta's RSC caps jobs at 7 days). What the run did
    since that checkpoint counts as ``wasted`` (a start cut off as
    ``overhead``), the wait for the restart as ``recovery_wait``, and each
    stop in the row's ``timeouts`` (not in ``preemptions``). It is also the
    run's estimate for EASY backfill (see :class:`acesim.Policy`). A limit
    shorter than a start plus one checkpoint interval and write never lets
    the job progress: give such a run a horizon.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=7 * ace.DAY, checkpoint_interval="young",
    ...               save=ace.Constant(60.0), load=ace.Constant(120.0))
    >>> job.gpus
    1024
    """

    __slots__ = (
        "checkpoint_bytes",
        "checkpoint_interval",
        "gpus",
        "init",
        "load",
        "min_gpus",
        "name",
        "persist",
        "priority",
        "reconfigure",
        "save",
        "scaling",
        "submit",
        "tiers",
        "time_limit",
        "work",
    )

    def __init__(
        self,
        gpus: int,
        work: float,
        checkpoint_interval: float | IntervalRule,
        init: Distribution | float = 2 * MINUTE,
        save: Distribution | float = 1 * MINUTE,
        load: Distribution | float = 1 * MINUTE,
        submit: float = 0.0,
        priority: int = 0,
        name: str | None = None,
        time_limit: float | None = None,
        persist: Distribution | float | None = None,
        tiers: Any = (),
        min_gpus: int | None = None,
        reconfigure: Distribution | float = 0.0,
        scaling: float = 1.0,
        checkpoint_bytes: float | None = None,
    ) -> None:
        self.gpus: int = integer("gpus", gpus, minimum=1, maximum=2**32 - 1)
        self.work: float = seconds("work", work, positive=True)
        self.checkpoint_interval: float | IntervalRule
        if isinstance(checkpoint_interval, str):
            self.checkpoint_interval = _rule(checkpoint_interval)  # type: ignore[assignment]
        else:
            self.checkpoint_interval = seconds(
                "checkpoint_interval", checkpoint_interval, positive=True
            )
        self.init: Distribution = as_distribution("init", init)
        self.save: Distribution = as_distribution("save", save)
        self.load: Distribution = as_distribution("load", load)
        self.submit: float = seconds("submit", submit)
        self.priority: int = integer("priority", priority, minimum=-(2**31), maximum=2**31 - 1)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {type(name).__name__}")
        self.name: str | None = name
        self.time_limit: float | None = (
            None if time_limit is None else seconds("time_limit", time_limit, positive=True)
        )
        self.persist: Distribution | None = (
            None if persist is None else as_distribution("persist", persist)
        )
        self.tiers: tuple[CheckpointTier, ...] = _tiers(tiers, self.checkpoint_interval)
        self.min_gpus, self.reconfigure, self.scaling = _elastic(
            min_gpus, reconfigure, scaling, self.gpus
        )
        self.checkpoint_bytes: float | None = (
            None if checkpoint_bytes is None else non_negative("checkpoint_bytes", checkpoint_bytes)
        )

    def with_interval(self, checkpoint_interval: float | IntervalRule) -> Job:
        """A copy with another checkpoint interval (everything else equal)."""
        return Job(
            self.gpus,
            self.work,
            checkpoint_interval,
            self.init,
            self.save,
            self.load,
            self.submit,
            self.priority,
            self.name,
            self.time_limit,
            self.persist,
            self.tiers,
            self.min_gpus,
            self.reconfigure,
            self.scaling,
            self.checkpoint_bytes,
        )

    def __repr__(self) -> str:
        interval = (
            self.checkpoint_interval
            if isinstance(self.checkpoint_interval, str)
            else f"{self.checkpoint_interval:g}"
        )
        label = f", name={self.name!r}" if self.name else ""
        if self.time_limit is not None:
            label += f", time_limit={self.time_limit:g}"
        if self.persist is not None:
            label += f", persist={self.persist!r}"
        if self.tiers:
            label += f", tiers={list(self.tiers)!r}"
        if self.min_gpus is not None:
            label += (
                f", min_gpus={self.min_gpus}, reconfigure={self.reconfigure!r}, "
                f"scaling={self.scaling:g}"
            )
        if self.checkpoint_bytes is not None:
            label += f", checkpoint_bytes={self.checkpoint_bytes:g}"
        return (
            f"Job(gpus={self.gpus}, work={self.work:g}, checkpoint_interval={interval!s}, "
            f"init={self.init!r}, save={self.save!r}, load={self.load!r}, "
            f"submit={self.submit:g}, priority={self.priority}{label})"
        )


def _time_limits(values: Any, n: int) -> npt.NDArray[np.float64] | None:
    """Per-job time limits (> 0; inf: none), or None for no limit at all."""
    if values is None:
        return None
    if isinstance(values, str | bytes):
        raise TypeError(f"time_limit must be numbers or None, got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"time_limit must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size != n):
        raise ValueError(f"time_limit must be one number or {n} values")
    out = np.ascontiguousarray(np.broadcast_to(arr.astype(np.float64), (n,)))
    if np.isnan(out).any() or (out <= 0).any():
        raise ValueError("time_limit must be > 0 (inf: no limit for that job)")
    return out


def _column(
    name: str,
    values: Any,
    n: int | None,
    dtype: type,
    *,
    bound: Literal["positive", "non_negative", "any"] = "non_negative",
) -> npt.NDArray[Any]:
    if isinstance(values, str | bytes) or values is None:
        raise TypeError(f"{name} must be numbers, got {type(values).__name__}")
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional")
    if n is not None and arr.ndim == 1 and arr.size != n:
        raise ValueError(f"{name} has {arr.size} values, expected {n}")
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    if bound == "positive" and (arr <= 0).any():
        raise ValueError(f"{name} must be > 0")
    if bound == "non_negative" and (arr < 0).any():
        raise ValueError(f"{name} must be >= 0")
    if np.issubdtype(np.dtype(dtype), np.integer):
        if np.issubdtype(arr.dtype, np.floating) and (arr != np.round(arr)).any():
            raise ValueError(f"{name} must hold integers")
        info = np.iinfo(dtype)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise ValueError(f"{name} must be in [{info.min}, {info.max}]")
    if arr.ndim == 0:
        return np.full(1 if n is None else n, arr, dtype=dtype)
    out: npt.NDArray[Any] = np.ascontiguousarray(arr, dtype=dtype)
    return out


class JobArray:
    """Many jobs as columns: the fast path for large workloads (a month of a
    100K-GPU fleet is over a million jobs). ``gpus``, ``work``, ``submit``,
    ``priority`` and ``checkpoint_interval`` are arrays (or scalars for
    all); ``checkpoint_interval`` may also be a rule name for every job.
    ``init``, ``save`` and ``load`` are shared by all jobs. ``time_limit``
    (see :class:`Job`) is ``None``, one number for all jobs, or one per job
    (``inf``: no limit for that job). ``persist``, ``tiers`` and the elastic
    settings ``min_gpus``, ``reconfigure`` and ``scaling``, and
    ``checkpoint_bytes`` (see :class:`Job`) are shared by all jobs.
    A simulation reads the columns where they are, without a copy (13.8M
    jobs take 660 MB less): change them between calls, never during one
    (from another thread).

    >>> import acesim as ace
    >>> jobs = ace.JobArray(gpus=[8, 64], work=[ace.HOUR, ace.DAY],
    ...                     checkpoint_interval=30 * ace.MINUTE)
    >>> len(jobs)
    2
    """

    def __init__(
        self,
        gpus: npt.ArrayLike,
        work: npt.ArrayLike,
        checkpoint_interval: npt.ArrayLike | IntervalRule,
        submit: npt.ArrayLike = 0.0,
        priority: npt.ArrayLike = 0,
        init: Distribution | float = 2 * MINUTE,
        save: Distribution | float = 1 * MINUTE,
        load: Distribution | float = 1 * MINUTE,
        time_limit: npt.ArrayLike | None = None,
        persist: Distribution | float | None = None,
        tiers: Any = (),
        min_gpus: int | None = None,
        reconfigure: Distribution | float = 0.0,
        scaling: float = 1.0,
        checkpoint_bytes: float | None = None,
    ) -> None:
        if np.ndim(gpus) != 1:
            raise ValueError("gpus must be a one-dimensional array (one entry per job)")
        self.gpus = _column("gpus", gpus, None, np.uint32, bound="positive")
        n = self.gpus.size
        if n == 0:
            raise ValueError("gpus must not be empty")
        self.work = _column("work", work, n, np.float64, bound="positive")
        self.rule = np.zeros(n, np.uint32)
        if isinstance(checkpoint_interval, str):
            self.rule[:] = RULE_CODES[_rule(checkpoint_interval)]
            self.checkpoint_interval = np.zeros(n, np.float64)
        else:
            self.checkpoint_interval = _column(
                "checkpoint_interval", checkpoint_interval, n, np.float64, bound="positive"
            )
        self.submit = _column("submit", submit, n, np.float64)
        for name in ("work", "checkpoint_interval", "submit"):
            check_seconds(name, getattr(self, name))
        self.priority = _column("priority", priority, n, np.int32, bound="any")
        self.init: Distribution = as_distribution("init", init)
        self.save: Distribution = as_distribution("save", save)
        self.load: Distribution = as_distribution("load", load)
        self.time_limit: npt.NDArray[np.float64] | None = _time_limits(time_limit, n)
        if self.time_limit is not None:
            check_seconds("time_limit", self.time_limit[np.isfinite(self.time_limit)])
        self.persist: Distribution | None = (
            None if persist is None else as_distribution("persist", persist)
        )
        shortest = (
            "rule"
            if isinstance(checkpoint_interval, str)
            else float(self.checkpoint_interval.min())
        )
        self.tiers: tuple[CheckpointTier, ...] = _tiers(tiers, shortest)
        self.min_gpus, self.reconfigure, self.scaling = _elastic(
            min_gpus, reconfigure, scaling, int(self.gpus.min())
        )
        self.checkpoint_bytes: float | None = (
            None if checkpoint_bytes is None else non_negative("checkpoint_bytes", checkpoint_bytes)
        )

    def __len__(self) -> int:
        return int(self.gpus.size)

    @classmethod
    def from_records(
        cls,
        records: Any,
        *,
        init: Distribution | float = 2 * MINUTE,
        save: Distribution | float = 1 * MINUTE,
        load: Distribution | float = 1 * MINUTE,
    ) -> JobArray:
        """From a numpy structured array or a pandas DataFrame with columns
        ``gpus``, ``work``, ``checkpoint_interval`` and optionally ``submit``,
        ``priority`` and ``time_limit``."""
        if hasattr(records, "to_records") and hasattr(records, "columns"):
            names = list(records.columns)
            get = records.__getitem__
        elif isinstance(records, np.ndarray) and records.dtype.names is not None:
            names = list(records.dtype.names)
            get = records.__getitem__
        else:
            raise TypeError("records must be a numpy structured array or a pandas DataFrame")
        for required in ("gpus", "work", "checkpoint_interval"):
            if required not in names:
                raise ValueError(f"records lack the column {required!r}")
        return cls(
            np.asarray(get("gpus")),
            np.asarray(get("work")),
            np.asarray(get("checkpoint_interval")),
            submit=np.asarray(get("submit")) if "submit" in names else 0.0,
            priority=np.asarray(get("priority")) if "priority" in names else 0,
            init=init,
            save=save,
            load=load,
            time_limit=np.asarray(get("time_limit")) if "time_limit" in names else None,
        )

    def __repr__(self) -> str:
        return (
            f"JobArray({len(self)} jobs, {int(self.gpus.sum())} GPUs in all, "
            f"save={self.save!r}, load={self.load!r}, init={self.init!r})"
        )
