"""Which knobs matter: a global sensitivity analysis of a scenario's
objective over its dotted parameter paths.

:func:`sensitivity` varies the ``factors`` (see
:mod:`acesim.sensitivity.factors` for ranges, levels and ``PATH.mean``)
over a design (:mod:`acesim.sensitivity.designs`), runs the scenario at
every point of it with the same seed and replicas (common random numbers:
two points differ only by their factors' values), reads the objective of
:mod:`acesim.objectives` (the mean over replicas of the fleet's or a job's
ETTR, the GPU-hours lost, or a :class:`~acesim.Cost`) and estimates each
factor's influence with a bootstrap interval.

- ``method="morris"``: elementary effects (mu*, mu, sigma) from
  ``trajectories`` one-at-a-time paths: ``trajectories x (k + 1)`` runs for
  ``k`` factors, for screening many factors cheaply. Ranked by mu*.
- ``method="sobol"``: first-order and total indices (Saltelli 2010 and
  Jansen estimators) from ``samples x (k + 2)`` runs, for the few factors
  that survive screening. Ranked by the total index.

The indices are those of the objective as a function of the factors at the
scenario's seed and replicas (the replica noise is fixed, as common random
numbers fix it): more replicas make that function closer to the mean
response. Points with the same factor values (a discrete factor's levels
repeat) run once.

>>> import acesim as ace
>>> base = ace.Scenario.from_dict({
...     "run": {"replicas": 4},
...     "jobs": [{"gpus": 8, "work": "12h", "checkpoint_interval": "1h", "init": "5min"}],
...     "failures": {"law": "exponential", "mean": "6h"},
... })
>>> s = ace.sensitivity(base, {"failures.mean": {"low": "2h", "high": "16h"},
...                            "jobs[0].init.mean": {"low": "4min", "high": "6min"}},
...                     trajectories=4, seed=1)
>>> s.ranking
('failures.mean', 'jobs[0].init.mean')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._toml import format_path
from ..objectives import Cost, Objective, as_scenario, evaluate
from ..plot import sensitivity_figure
from ..results_io import ResultFileError, load_tables, save_tables
from ..scenario import Scenario
from ..sweep import progress_bar
from .designs import (
    morris_design,
    morris_indices,
    saltelli_design,
    sobol_indices,
)
from .factors import Factor, named_causes_as_tables, parse_factors

__all__ = ["METHODS", "SensitivityResult", "load_sensitivity", "sensitivity"]

#: The methods :func:`sensitivity` offers.
METHODS = ("morris", "sobol")

#: The indices table's measures by method (each with ``_low`` and ``_high``).
MEASURES = {"morris": ("mu_star", "mu", "sigma"), "sobol": ("first", "total", "interaction")}

#: What ranks the factors, by method.
RANKED_BY = {"morris": "mu_star", "sobol": "total"}

_KIND = "acesim-sensitivity"


@dataclass(frozen=True, eq=False)
class SensitivityResult:
    """What :func:`sensitivity` found.

    ``indices``: a numpy structured array, one row per factor in the order
    given: ``factor`` (its path), ``rank`` (1: most influential), and each
    measure of the method with its interval (``mu_star``, ``mu_star_low``,
    ``mu_star_high``, ``mu``, ``sigma``, ... for Morris; ``first``,
    ``total``, ``interaction`` (total - first) and their bounds for Sobol).
    ``points``: the design's points, one row each: ``point``, each factor's
    design coordinate (a place in [0, 1] for a range, a level's index
    otherwise) under its path, and the objective's ``value`` there.
    ``ranges``: each factor's range or levels, as text.
    """

    method: str
    objective: str
    indices: npt.NDArray[Any]
    points: npt.NDArray[Any]
    ranges: tuple[str, ...]
    ci: float
    seed: int
    replicas: int
    runs: int
    provenance: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def factors(self) -> tuple[str, ...]:
        """The factors' paths, in the order given."""
        return tuple(str(f) for f in self.indices["factor"])

    @property
    def ranking(self) -> tuple[str, ...]:
        """The factors' paths, most influential first (by mu* for Morris, by
        the total index for Sobol)."""
        order = np.argsort(self.indices["rank"], kind="stable")
        return tuple(str(self.indices["factor"][i]) for i in order)

    @property
    def ranked_by(self) -> str:
        return RANKED_BY[self.method]

    def table(self) -> str:
        """The indices as text, most influential first."""
        pct = f"{100 * self.ci:g}%"
        measures = MEASURES[self.method]
        width = max(len("factor"), *(len(f) for f in self.factors))
        head = f"{'rank':>4}  {'factor':<{width}}" + "".join(
            f"  {m:>9}  {pct + ' CI':<19}" for m in measures
        )
        lines = [head]
        for path in self.ranking:
            row = self.indices[self.indices["factor"] == path][0]
            cells = "".join(
                f"  {row[m]:9.4g}  [{row[m + '_low']:8.4g}, {row[m + '_high']:8.4g}]"
                for m in measures
            )
            lines.append(f"{int(row['rank']):>4}  {path:<{width}}{cells}")
        return "\n".join(lines)

    def __str__(self) -> str:
        what = "Morris elementary effects" if self.method == "morris" else "Sobol indices"
        return (
            f"{what} of {self.objective}: {len(self.factors)} factors, {self.runs} runs of "
            f"{self.replicas} replicas, seed {self.seed} (common random numbers)\n" + self.table()
        )

    def figure(self, **kwargs: Any) -> Any:
        """The tornado of mu* (Morris) or the bars of the first-order and
        total indices (Sobol), with their intervals
        (:func:`acesim.plot.sensitivity_figure`; needs matplotlib)."""
        return sensitivity_figure(self, **kwargs)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the indices and points (``.npz``, ``.json``, ``.csv`` or
        ``.parquet``, atomically; :func:`acesim.results_io.save_tables`)."""
        meta = {
            "sensitivity": {
                "method": self.method,
                "objective": self.objective,
                "ranges": list(self.ranges),
                "ci": self.ci,
                "seed": self.seed,
                "replicas": self.replicas,
                "runs": self.runs,
            },
            "provenance": self.provenance,
        }
        save_tables(path, {"indices": self.indices, "points": self.points}, meta, kind=_KIND)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SensitivityResult:
        """Read a file :meth:`save` wrote (see :func:`load_sensitivity`)."""
        return load_sensitivity(path)


def load_sensitivity(path: str | os.PathLike[str]) -> SensitivityResult:
    """A :class:`SensitivityResult` from a file :meth:`SensitivityResult.save`
    (or ``acesim sensitivity --out``) wrote; a ResultFileError names what
    does not fit (the method must be one of :data:`METHODS` and the tables
    must have its columns)."""
    tables, meta = load_tables(path, kind=_KIND)
    where = os.fspath(path)
    info = meta.get("sensitivity")
    if not isinstance(info, dict):
        raise ResultFileError(f"{where}: the metadata lacks its sensitivity entry")
    method = info.get("method")
    if method not in METHODS:
        raise ResultFileError(
            f"{where}: method must be one of {', '.join(METHODS)}, got {method!r}"
        )
    indices, points = tables.get("indices"), tables.get("points")
    if indices is None or points is None:
        raise ResultFileError(f"{where}: the indices or points table is missing")
    want = {"factor", "rank"} | {
        f"{m}{end}" for m in MEASURES[method] for end in ("", "_low", "_high")
    }
    missing = sorted(want - set(indices.dtype.names or ()))
    if missing:
        raise ResultFileError(f"{where}: the indices table lacks {', '.join(missing)}")
    try:
        ranges = tuple(str(r) for r in info["ranges"])
        result = SensitivityResult(
            method=str(method),
            objective=str(info["objective"]),
            indices=indices,
            points=points,
            ranges=ranges,
            ci=float(info["ci"]),
            seed=int(info["seed"]),
            replicas=int(info["replicas"]),
            runs=int(info["runs"]),
            provenance=dict(meta.get("provenance") or {}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultFileError(f"{where}: the sensitivity entry is damaged: {exc}") from None
    if len(ranges) != indices.shape[0]:
        raise ResultFileError(f"{where}: {len(ranges)} ranges for {indices.shape[0]} factors")
    return result


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def sensitivity(
    base: Any,
    factors: Mapping[str, Any],
    *,
    objective: str | Objective = "ettr",
    job: int | str | None = None,
    cost: Cost | None = None,
    method: str = "morris",
    seed: int = 0,
    progress: bool = False,
    trajectories: int = 10,
    grid: int = 4,
    samples: int = 64,
    replicas: int | None = None,
    ci: float = 0.95,
    bootstrap: int = 1000,
    threads: int | None = None,
) -> SensitivityResult:
    """Which of ``factors`` move ``objective`` on ``base``, and how much.

    ``base``: a :class:`~acesim.Scenario`, or a dict of
    :func:`acesim.simulate` keywords (:func:`acesim.objectives.as_scenario`
    writes it as a scenario's tables). ``factors``: dotted paths to ranges or levels
    (:mod:`acesim.sensitivity.factors`). ``objective``, ``job``, ``cost``:
    as :class:`acesim.objectives.Objective` takes them (``"ettr"``,
    ``"gpu_hours_lost"``, ``"cost"``; a job's index or name). ``method``:
    ``"morris"`` (``trajectories`` paths on a ``grid``-level grid) or
    ``"sobol"`` (``samples`` base rows). ``seed``: the seed of every run
    (common random numbers) and of the design and bootstrap (their own
    streams). ``replicas``: per run (default: the scenario's). ``ci``,
    ``bootstrap``: the intervals' level and resamples. ``progress``: runs
    done on stderr.
    """
    scenario = as_scenario(base)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    goal = Objective.resolve(objective, job=job, cost=cost)
    seed = _count("seed", seed, 0)
    reps = scenario.replicas if replicas is None else _count("replicas", replicas, 1)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    if isinstance(factors, Mapping):
        scenario = named_causes_as_tables(scenario, factors)
    found = parse_factors(scenario, factors)
    kinds = [f.design_levels for f in found]
    if method == "morris":
        morris = morris_design(kinds, _count("trajectories", trajectories, 2), grid=grid, seed=seed)
        coordinates = morris.points
    else:
        sobol = saltelli_design(kinds, _count("samples", samples, 2), seed=seed)
        coordinates = sobol.coordinates()
    values = _run(scenario, found, coordinates, goal, seed, reps, threads, progress)
    if method == "morris":
        m = morris_indices(morris, values.outputs, ci=ci, bootstrap=bootstrap, seed=seed)
        measured = {"mu_star": m.mu_star, "mu": m.mu, "sigma": m.sigma}
    else:
        s = sobol_indices(sobol, values.outputs, ci=ci, bootstrap=bootstrap, seed=seed)
        measured = {"first": s.first, "total": s.total, "interaction": s.interaction}
    indices = _indices_table(found, measured, RANKED_BY[method])
    return SensitivityResult(
        method=method,
        objective=goal.name,
        indices=indices,
        points=_points_table(found, coordinates, values.outputs),
        ranges=tuple(f.describe() for f in found),
        ci=float(ci),
        seed=seed,
        replicas=reps,
        runs=values.runs,
        provenance={
            "scenario": scenario.to_dict(),
            "objective": goal.to_dict(),
            "factors": {f.path: f.describe() for f in found},
            "method": method,
            "design": {"trajectories": trajectories, "grid": grid}
            if method == "morris"
            else {"samples": samples},
        },
    )


@dataclass(frozen=True)
class _Outputs:
    outputs: npt.NDArray[np.float64]
    runs: int


def _run(
    scenario: Scenario,
    factors: list[Factor],
    coordinates: npt.NDArray[np.float64],
    objective: Objective,
    seed: int,
    replicas: int,
    threads: int | None,
    progress: bool,
) -> _Outputs:
    """The objective's mean over replicas at every design point; a point
    seen before is not run again."""
    keys = [tuple(float(x) for x in row) for row in coordinates]
    distinct = list(dict.fromkeys(keys))
    bar = progress_bar(progress, len(distinct), desc="sensitivity", unit="run")
    found: dict[tuple[float, ...], float] = {}
    try:
        for key in distinct:
            values: dict[str, Any] = {}
            for f, x in zip(factors, key, strict=True):
                target, setting = f.setting(f.value(x))
                values[format_path(target)] = setting
            per_replica = evaluate(
                scenario, objective, values, seed=seed, replicas=replicas, threads=threads
            )
            value = float(np.mean(per_replica))
            if not np.isfinite(value):
                shown = ", ".join(f"{k} = {v!r}" for k, v in values.items())
                raise ValueError(
                    f"the objective is undefined at the point {shown} (a job that never ran?); "
                    "narrow the factors' ranges or pick another objective"
                )
            found[key] = value
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    outputs = np.array([found[k] for k in keys], dtype=np.float64)
    return _Outputs(outputs, len(distinct))


def _indices_table(
    factors: list[Factor], measured: Mapping[str, Any], ranked_by: str
) -> npt.NDArray[Any]:
    width = max(len(f.path) for f in factors)
    fields: list[tuple[str, Any]] = [("factor", f"U{width}"), ("rank", np.int64)]
    for name in measured:
        fields += [(name, np.float64), (f"{name}_low", np.float64), (f"{name}_high", np.float64)]
    table = np.zeros(len(factors), dtype=fields)
    table["factor"] = [f.path for f in factors]
    for name, interval in measured.items():
        table[name] = interval.value
        table[f"{name}_low"] = interval.low
        table[f"{name}_high"] = interval.high
    order = np.argsort(-table[ranked_by], kind="stable")
    table["rank"][order] = np.arange(1, len(factors) + 1)
    return table


def _points_table(
    factors: list[Factor], coordinates: npt.NDArray[np.float64], outputs: npt.NDArray[np.float64]
) -> npt.NDArray[Any]:
    fields: list[tuple[str, Any]] = [("point", np.int64)]
    fields += [(f.path, np.float64) for f in factors]
    fields.append(("value", np.float64))
    table = np.zeros(len(outputs), dtype=fields)
    table["point"] = np.arange(len(outputs))
    for i, f in enumerate(factors):
        table[f.path] = coordinates[:, i]
    table["value"] = outputs
    return table
