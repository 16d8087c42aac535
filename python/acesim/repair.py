"""Repair as a pipeline: stages a failed node goes through (automatic
remediation, then manual repair, then a vendor RMA, ...), each with its
duration law, a probability of escalating to the next stage and a
probability that the node comes back healthy; and misdiagnosis, where the
node sent to repair is not the one that failed.

>>> import acesim as ace
>>> repair = ace.Repair(
...     [
...         ace.RepairStage(ace.Constant(10 * ace.MINUTE), escalate=0.3, fix=0.2),
...         ace.RepairStage(ace.Exponential(8 * ace.HOUR), escalate=0.1, fix=0.9),
...         ace.RepairStage(ace.Constant(5 * ace.DAY), fix=1.0),
...     ],
...     misdiagnosis=0.05,
... )
>>> round(repair.mean() / ace.HOUR, 3)  # 1/6 + 0.3 * 8 + 0.3 * 0.1 * 120
6.167
>>> fleet = ace.Fleet(64, repair=repair, node_failures=ace.Exponential(30 * ace.DAY))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._validation import finite, sequence_of
from .distributions import Distribution, as_distribution

__all__ = ["Repair", "RepairStage"]


def _probability(name: str, value: float) -> float:
    p = finite(name, value)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    return p


@dataclass(frozen=True, init=False)
class RepairStage:
    """One stage of a :class:`Repair` pipeline: it lasts a draw of
    ``duration`` (a law, or seconds); afterwards the node escalates to the
    next stage with probability ``escalate``, otherwise it leaves the
    pipeline, and then with probability ``fix`` it returns healthy (a lemon
    node is cured: it fails at the normal rate from then on); otherwise it
    returns as it was (a lemon stays a lemon). The defaults, a stage that
    never escalates and never cures, repair like a plain law."""

    duration: Distribution
    escalate: float
    fix: float

    def __init__(
        self, duration: Distribution | float, escalate: float = 0.0, fix: float = 0.0
    ) -> None:
        object.__setattr__(self, "duration", as_distribution("duration", duration))
        object.__setattr__(self, "escalate", _probability("escalate", escalate))
        object.__setattr__(self, "fix", _probability("fix", fix))


@dataclass(frozen=True, init=False)
class Repair:
    """A repair pipeline, for ``Fleet(repair=...)`` beside a plain law.

    A node sent to repair is out of service for the detection latency of its
    failure, then goes through ``stages`` from the first: after stage ``k``
    it escalates to stage ``k + 1`` with that stage's ``escalate``
    probability (the last stage cannot escalate), and when it leaves the
    pipeline its last stage's ``fix`` probability decides whether it returns
    healthy. Its downtime per repair is the sum of the stages it went
    through; the mean is ``sum_k E[d_k] * prod_{i<k} p_i`` (:meth:`mean`).
    The whole walk is drawn when the node goes down (a node under repair
    cannot fail, and nothing changes its repair), so a failure policy's
    ``repair_remaining`` is the drawn total, as with a plain law.

    ``misdiagnosis``: with this probability the node sent to repair after a
    failure that interrupted a job is another node of that job, drawn
    uniformly among the job's other nodes still in service (outside the
    failure's block of nodes); the healthy node goes to repair (and may be
    cured, if it was a lemon) and the faulty one stays in service, its
    failure process going on (a lemon keeps failing). Pulling the healthy
    node interrupts every job on it. A failure of an idle node, of a
    one-node job, or of a cause that takes no node to repair
    (``Cause(node_down=False)``) is never misdiagnosed. Quarantine counts
    the failure against the node diagnosed.

    Random streams (:ref:`model-random-streams`): stage durations come from the node's
    repair stream, one draw per stage gone through (a plain law: one per
    repair, so ``Repair([RepairStage(law)])`` gives exactly the results of
    ``repair=law``); the escalation and fix uniforms of the node's ``k``-th
    repair from draw ``k`` of its repair-outcome stream (one block per
    stage), so a node's ``k``-th repair has the same stages and outcome
    under every policy; misdiagnosis decisions from the faulty node's
    repair-outcome stream too, in its own blocks. Only failures that can be
    misdiagnosed draw one, so with ``misdiagnosis > 0`` which node is
    repaired depends on placement (a policy-dependent setting, like
    quarantine).
    """

    stages: tuple[RepairStage, ...]
    misdiagnosis: float

    def __init__(
        self, stages: Sequence[RepairStage] | RepairStage, misdiagnosis: float = 0.0
    ) -> None:
        out = tuple(sequence_of("stages", stages, RepairStage))
        if out[-1].escalate != 0.0:
            raise ValueError(
                f"stages[{len(out) - 1}].escalate must be 0: the last stage cannot escalate, "
                f"got {out[-1].escalate!r}"
            )
        object.__setattr__(self, "stages", out)
        object.__setattr__(self, "misdiagnosis", _probability("misdiagnosis", misdiagnosis))

    def mean(self) -> float:
        """Mean downtime of one repair after detection, in seconds:
        ``sum_k E[d_k] * prod_{i<k} escalate_i``."""
        total, reach = 0.0, 1.0
        for stage in self.stages:
            total += reach * stage.duration.mean()
            reach *= stage.escalate
        return total

    def cure_probability(self) -> float:
        """Probability that one repair returns a lemon healthy:
        ``sum_k prod_{i<k} escalate_i * (1 - escalate_k) * fix_k``."""
        total, reach = 0.0, 1.0
        for stage in self.stages:
            total += reach * (1.0 - stage.escalate) * stage.fix
            reach *= stage.escalate
        return total
