"""A training job: its size, its work and its checkpoint/restart costs."""

from __future__ import annotations

from typing import Literal

from ._validation import integer, non_negative, positive
from .distributions import Distribution, as_distribution
from .units import MINUTE

__all__ = ["INTERVAL_RULES", "Job"]

#: Rules accepted as ``checkpoint_interval`` besides a number of seconds.
INTERVAL_RULES = ("young", "daly", "adaptive")

IntervalRule = Literal["young", "daly", "adaptive"]


class Job:
    """A job of ``gpus`` GPUs that must do ``work`` seconds of compute.

    ``checkpoint_interval`` is seconds of compute between checkpoints, or
    ``"young"`` / ``"daly"``: the optimum for the failure model's mean at this
    job's size and the mean ``save`` latency; or ``"adaptive"``: Young's
    interval for an online MTBF estimate, updated at every (re)start.
    ``init`` (scheduling, container and driver init, data staging), ``save``
    and ``load`` are distributions
    (or numbers of seconds), drawn per event. Every start, the first
    included, costs init + load.

    >>> import acesim as ace
    >>> job = ace.Job(1024, work=7 * ace.DAY, checkpoint_interval="young",
    ...               save=ace.Constant(60.0), load=ace.Constant(120.0))
    >>> job.gpus
    1024
    """

    __slots__ = (
        "checkpoint_interval",
        "gpus",
        "init",
        "load",
        "name",
        "priority",
        "save",
        "submit",
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
    ) -> None:
        self.gpus: int = integer("gpus", gpus, minimum=1, maximum=2**32 - 1)
        self.work: float = positive("work", work)
        self.checkpoint_interval: float | IntervalRule
        if isinstance(checkpoint_interval, str):
            rule = checkpoint_interval.lower()
            if rule not in INTERVAL_RULES:
                raise ValueError(
                    f"checkpoint_interval must be seconds or one of {INTERVAL_RULES}, "
                    f"got {checkpoint_interval!r}"
                )
            self.checkpoint_interval = rule  # type: ignore[assignment]
        else:
            self.checkpoint_interval = positive("checkpoint_interval", checkpoint_interval)
        self.init: Distribution = as_distribution("init", init)
        self.save: Distribution = as_distribution("save", save)
        self.load: Distribution = as_distribution("load", load)
        self.submit: float = non_negative("submit", submit)
        self.priority: int = integer("priority", priority, minimum=-(2**31), maximum=2**31 - 1)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {type(name).__name__}")
        self.name: str | None = name

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
        )

    def __repr__(self) -> str:
        interval = (
            self.checkpoint_interval
            if isinstance(self.checkpoint_interval, str)
            else f"{self.checkpoint_interval:g}"
        )
        label = f", name={self.name!r}" if self.name else ""
        return (
            f"Job(gpus={self.gpus}, work={self.work:g}, checkpoint_interval={interval!s}, "
            f"init={self.init!r}, save={self.save!r}, load={self.load!r}, "
            f"submit={self.submit:g}, priority={self.priority}{label})"
        )
