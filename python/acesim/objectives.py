"""What a search optimizes: one number per replica of a simulation, and its
mean over replicas.

:class:`Objective` names the quantity (the fleet's ETTR, one job's ETTR, the
GPU-hours lost, or a :class:`Cost`) and reads it from a
:class:`~acesim.SimulationResult`, one value per replica, in replica order.
:func:`evaluate` runs a :class:`~acesim.Scenario` with some of its keys
replaced (dotted paths, as :meth:`Scenario.with_values` takes them) on a
given range of replicas, so that every candidate of a search sees the same
failure draws (common random numbers: replica ``r`` of seed ``s`` draws the
same numbers whatever else differs).

>>> import numpy as np
>>> import acesim as ace
>>> from acesim.objectives import Objective, evaluate
>>> s = ace.Scenario.from_dict({
...     "jobs": [{"gpus": 8, "work": "10h", "checkpoint_interval": "1h"}],
...     "failures": "none",
... })
>>> ettr = evaluate(s, Objective.resolve("ettr"), {"jobs[0].checkpoint_interval": "2h"},
...                 seed=0, replicas=2)
>>> # 10 h of work in 10 h + init (2 min) + load (1 min) + 5 saves (1 min)
>>> bool(np.allclose(ettr, 36000 / (36000 + 180 + 300)))
True
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from .distributions import Distribution
from .errors import NoProgressError
from .fleet import Cause, Fleet
from .job import Job
from .policy import Policy
from .scenario import RUN_KEYS, Scenario, cause_spec, fleet_spec, law_spec
from .simulation import SimulationResult, simulate

__all__ = ["OBJECTIVES", "Cost", "Objective", "as_scenario", "evaluate", "with_values"]

#: The objectives by name.
OBJECTIVES: tuple[str, ...] = ("ettr", "gpu_hours_lost", "cost")


@dataclass(frozen=True)
class Cost:
    """Prices for ``objective="cost"``: the cost of one replica is the sum,
    over the terms, of the price times a column of the result's ``fleet``
    table (one row per replica):

    ============================  ===============================  ==========================
    term                          fleet column                     what it counts
    ============================  ===============================  ==========================
    ``gpu_hour``                  ``gpu_hours``                    GPU-hours the jobs held
                                                                   (GPUs x wall)
    ``lost_gpu_hour``             ``gpu_hours_lost``               GPU-hours held but not
                                                                   kept as progress
    ``spare_node_hour``           ``spare_idle_node_hours``        node-hours in the hot-spare
                                                                   pool, idle
    ``repair``                    ``node_failures``                node failures (each sends
                                                                   a node to repair)
    ``down_node_hour``            ``down_node_hours``              node-hours out of service
    ============================  ===============================  ==========================

    Prices are in any currency (the same for every term), finite and >= 0;
    a term left at 0 costs nothing. A cost is minimized.

    >>> import acesim as ace
    >>> ace.Cost(gpu_hour=2.0, repair=500.0).terms()
    {'gpu_hours': 2.0, 'node_failures': 500.0}
    """

    gpu_hour: float = 0.0
    lost_gpu_hour: float = 0.0
    spare_node_hour: float = 0.0
    repair: float = 0.0
    down_node_hour: float = 0.0

    #: each term's fleet column
    COLUMNS: ClassVar[dict[str, str]] = {
        "gpu_hour": "gpu_hours",
        "lost_gpu_hour": "gpu_hours_lost",
        "spare_node_hour": "spare_idle_node_hours",
        "repair": "node_failures",
        "down_node_hour": "down_node_hours",
    }

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
                raise TypeError(f"Cost {f.name} must be a number, got {type(value).__name__}")
            x = float(value)
            if not math.isfinite(x) or x < 0.0:
                raise ValueError(f"Cost {f.name} must be finite and >= 0, got {x!r}")
            object.__setattr__(self, f.name, x)
        if not any(getattr(self, f.name) for f in dataclasses.fields(self)):
            raise ValueError("Cost must price at least one term (every price is 0)")

    def terms(self) -> dict[str, float]:
        """The priced terms: fleet column to price (the zero ones left out)."""
        return {
            self.COLUMNS[f.name]: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name)
        }

    def per_replica(self, result: SimulationResult) -> npt.NDArray[np.float64]:
        """The cost of each replica of ``result``, in replica order."""
        fleet = result.fleet[np.argsort(result.fleet["replica"], kind="stable")]
        out = np.zeros(fleet.shape[0], dtype=np.float64)
        for column, price in self.terms().items():
            out += price * fleet[column].astype(np.float64)
        return out

    def to_dict(self) -> dict[str, float]:
        """The prices by term (every term)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class Objective:
    """A per-replica quantity and whether larger is better; build one with
    :meth:`resolve`.

    - ``"ettr"``: the fleet's ETTR of each replica (the ``fleet`` table's
      ``ettr``: kept GPU-hours over held GPU-hours), or with ``job`` that
      job's ETTR (the ``jobs`` table's ``ettr``); maximized.
    - ``"gpu_hours_lost"``: GPU-hours lost (``fleet.gpu_hours_lost``, or the
      job's ``jobs.gpu_hours_lost``); minimized.
    - ``"cost"``: :meth:`Cost.per_replica`; fleet-wide (no ``job``);
      minimized.

    ``job``: a job's index, or its name (:attr:`SimulationResult.job_names`),
    looked up in each result.
    """

    kind: str
    job: int | str | None = None
    cost: Cost | None = None

    @classmethod
    def resolve(cls, objective: Any = "ettr", *, job: Any = None, cost: Any = None) -> Objective:
        """The objective named ``objective`` (one of :data:`OBJECTIVES`, or
        an :class:`Objective` as it is), checked."""
        if isinstance(objective, Objective):
            if job is not None or cost is not None:
                raise ValueError("give job and cost in the Objective, not beside it")
            return objective
        if not isinstance(objective, str) or objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}; got {objective!r}")
        if job is not None:
            if isinstance(job, bool | np.bool_) or not isinstance(job, numbers.Integral | str):
                raise TypeError(
                    f"job must be a job index, a job name or None, got {type(job).__name__}"
                )
            if isinstance(job, numbers.Integral):
                if int(job) < 0:
                    raise ValueError(f"job must be >= 0, got {int(job)}")
                job = int(job)
            elif not job:
                raise ValueError("job must not be an empty name")
        if objective == "cost":
            if cost is None:
                raise ValueError('objective="cost" needs cost=acesim.Cost(...)')
            if not isinstance(cost, Cost):
                raise TypeError(f"cost must be an acesim.Cost, got {type(cost).__name__}")
            if job is not None:
                raise ValueError('objective="cost" is fleet-wide: leave job=None')
        elif cost is not None:
            raise ValueError(f'cost is for objective="cost", not {objective!r}')
        return cls(objective, job, cost)

    @property
    def name(self) -> str:
        """``"ettr"``, ``"ettr of job 'flagship'"``, ``"gpu_hours_lost"``, ``"cost"``."""
        if self.job is None:
            return self.kind
        return f"{self.kind} of job {self.job!r}"

    @property
    def unit(self) -> str:
        """``""`` (ETTR is a fraction), ``"GPU-hours"`` or ``"cost"``."""
        return {"ettr": "", "gpu_hours_lost": "GPU-hours", "cost": "cost"}[self.kind]

    @property
    def maximize(self) -> bool:
        """True for ETTR, False for the others."""
        return self.kind == "ettr"

    def job_index(self, result: SimulationResult) -> int | None:
        """The job's index in ``result`` (None for the fleet)."""
        if self.job is None:
            return None
        n_jobs = len(result.job_names) if result.job_names else int(result.jobs["job"].max()) + 1
        if isinstance(self.job, int):
            if self.job >= n_jobs:
                raise ValueError(
                    f"job must be in 0..{n_jobs - 1} (the scenario has {n_jobs} jobs), "
                    f"got {self.job}"
                )
            return self.job
        found = [i for i, name in enumerate(result.job_names) if name == self.job]
        if len(found) != 1:
            names = sorted({n for n in result.job_names if n is not None})
            how = "no job is" if not found else f"{len(found)} jobs are"
            raise ValueError(
                f"job: {how} named {self.job!r}; the names are {', '.join(names) or 'none'}"
            )
        return found[0]

    def per_replica(self, result: SimulationResult) -> npt.NDArray[np.float64]:
        """One value per replica of ``result``, in replica order."""
        if not isinstance(result, SimulationResult):
            raise TypeError(f"result must be a SimulationResult, got {type(result).__name__}")
        if self.kind == "cost":
            assert self.cost is not None
            return self.cost.per_replica(result)
        j = self.job_index(result)
        if j is None:
            rows = result.fleet[np.argsort(result.fleet["replica"], kind="stable")]
        else:
            rows = result.jobs[result.jobs["job"] == j]
            rows = rows[np.argsort(rows["replica"], kind="stable")]
        return np.asarray(rows[self.kind], dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """``{"objective": ..., "job": ..., "cost": {...}}`` (JSON data)."""
        return {
            "objective": self.kind,
            "job": self.job,
            "cost": None if self.cost is None else self.cost.to_dict(),
        }


def as_scenario(base: Any, name: str = "base") -> Scenario:
    """``base`` as a :class:`~acesim.Scenario`: a scenario as it is, or a
    dict of :func:`acesim.simulate` keywords (``jobs``, ``failures``,
    ``fleet``, ``policy``, ``causes`` and the ``[run]`` keys) written as the
    scenario's tables, so that dotted paths (``fleet.spares``) reach into
    them. A keyword with no table (a Python ``on_failure``, a NodeTrace, a
    JobArray) is a TypeError naming it: write such a scenario as a file."""
    if isinstance(base, Scenario):
        return base
    if not isinstance(base, Mapping):
        raise TypeError(
            f"{name} must be an acesim.Scenario or a dict of simulate keyword arguments, "
            f"got {type(base).__name__}"
        )
    spec: dict[str, Any] = {}
    run: dict[str, Any] = {}
    for key, value in base.items():
        where = f"{name}[{key!r}]"
        if key == "jobs":
            jobs = [value] if isinstance(value, Job) else value
            if not isinstance(jobs, list | tuple) or not all(isinstance(j, Job) for j in jobs):
                raise TypeError(f"{where} must be a Job or a list of Jobs")
            spec["jobs"] = [_job_spec(j, f"{where}[{i}]") for i, j in enumerate(jobs)]
        elif key == "failures":
            if value is None:
                pass  # simulate's default, which the scenario leaves as it is
            elif isinstance(value, Distribution):
                spec["failures"] = _law(value, where)
            else:
                raise TypeError(f"{where} must be a Distribution or None (one law per job: "
                                "give each Job its own in a scenario file)")  # fmt: skip
        elif key == "fleet":
            if value is not None:
                if not isinstance(value, Fleet):
                    raise TypeError(f"{where} must be an acesim.Fleet")
                try:
                    spec["fleet"] = fleet_spec(value)
                except TypeError as exc:
                    raise TypeError(f"{where}: {exc}") from None
        elif key == "policy":
            if value is not None:
                spec["policy"] = _policy_spec(value, where)
        elif key == "causes":
            if value is not None:
                if isinstance(value, Cause) or not all(isinstance(c, Cause) for c in value):
                    raise TypeError(f"{where} must be a list of acesim.Cause")
                spec["causes"] = [cause_spec(c) for c in value]
        elif key in RUN_KEYS and key not in ("name", "description"):
            if value is not None:
                run[key] = value
        else:
            raise TypeError(f"{name}: {key!r} is not a simulate keyword a scenario holds")
    if "jobs" not in spec:
        raise ValueError(f"{name} must have jobs")
    if run:
        spec["run"] = run
    return Scenario.from_dict(spec)


def _law(law: Any, where: str) -> Any:
    try:
        return law_spec(law)
    except TypeError as exc:
        raise TypeError(f"{where}: {exc}") from None


def _job_spec(job: Job, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gpus": job.gpus,
        "work": job.work,
        "checkpoint_interval": job.checkpoint_interval,
        "init": _law(job.init, where),
        "save": _law(job.save, where),
        "load": _law(job.load, where),
        "submit": job.submit,
        "priority": job.priority,
    }
    if job.name is not None:
        out["name"] = job.name
    if job.time_limit is not None:
        out["time_limit"] = job.time_limit
    if job.persist is not None:
        out["persist"] = _law(job.persist, where)
    if job.tiers:
        out["tiers"] = [
            {
                "interval": t.interval,
                "save": _law(t.save, where),
                "load": _law(t.load, where),
                "replication": t.replication,
            }
            for t in job.tiers
        ]
    if job.min_gpus is not None and job.min_gpus != job.gpus:
        out["min_gpus"] = job.min_gpus
        out["reconfigure"] = _law(job.reconfigure, where)
        out["scaling"] = job.scaling
    if job.checkpoint_bytes is not None:
        out["checkpoint_bytes"] = job.checkpoint_bytes
    return out


def _policy_spec(policy: Any, where: str) -> dict[str, Any]:
    if not isinstance(policy, Policy):
        raise TypeError(f"{where} must be an acesim.Policy")
    if policy.on_failure is not None or policy.place is not None:
        raise TypeError(
            f"{where}: a Python on_failure or place has no scenario table; write the "
            "scenario as a file naming it (on_failure = 'module:function')"
        )
    out: dict[str, Any] = {
        "replacement": policy.replacement.name.lower(),
        "preemption": policy.preemption.name.lower(),
        "backfill": policy.backfill,
        "preemption_grace": policy.preemption_grace,
    }
    if policy.replacement_delay is not None:
        out["replacement_delay"] = _law(policy.replacement_delay, where)
    q = policy.quarantine
    if q is not None:
        out["quarantine"] = {"failures": q.failures, "window": q.window, "duration": q.duration}
    return out


def with_values(scenario: Scenario, values: Mapping[str, Any]) -> Scenario:
    """``scenario`` with the values at dotted paths replaced
    (:meth:`Scenario.with_values`, checked again: an unknown path is a
    :class:`~acesim.ScenarioError` with a did-you-mean)."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be an acesim.Scenario, got {type(scenario).__name__}")
    return scenario.with_values(values) if values else scenario


def evaluate(
    scenario: Scenario,
    objective: Objective,
    values: Mapping[str, Any] | None = None,
    *,
    seed: int,
    replicas: int,
    first_replica: int = 0,
    threads: int | None = None,
) -> npt.NDArray[np.float64]:
    """The objective's value on each replica of ``scenario`` with
    ``values`` set (see :func:`with_values`), in replica order: replicas
    ``first_replica`` to ``first_replica + replicas - 1`` of ``seed``. The
    scenario's own ``[run]`` replicas, seed and first replica are replaced;
    candidates evaluated on the same range share their failure draws."""
    if not isinstance(objective, Objective):
        raise TypeError(f"objective must be an Objective, got {type(objective).__name__}")
    candidate = with_values(scenario, values or {})
    kwargs = candidate.simulate_kwargs()
    kwargs.update(seed=seed, replicas=replicas, first_replica=first_replica)
    if threads is not None:
        kwargs["threads"] = threads
    try:
        result = simulate(**kwargs)
    except NoProgressError:
        raise  # the run's, not a key's
    except (TypeError, ValueError) as exc:
        raise candidate.simulate_error(exc) from None
    return objective.per_replica(result)
