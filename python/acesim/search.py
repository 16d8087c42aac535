"""What should I set? A search over a policy space with a statistical
guarantee: :func:`tune`.

Every candidate (one value per dotted path of the space) runs on the same
replicas of the same seed (common random numbers), so candidates are
compared replica by replica, and the variance of their differences, far
smaller than that of independent runs, decides how many replicas each
needs.

**Selection** (Kim and Nelson's fully sequential procedure KN, 2001): with
``k`` candidates, ``n0`` first-stage replicas each (``first_stage``),
confidence ``1 - alpha`` and indifference ``delta``:

1. ``eta = ((2 alpha / (k - 1)) ** (-2 / (n0 - 1)) - 1) / 2`` and
   ``h2 = 2 eta (n0 - 1)``; ``S2[i, l]``: the sample variance of the
   first-stage differences ``X_i - X_l`` (paired, replica by replica).
2. At stage ``r`` (``r = n0, n0 + 1, ...``), with ``W[i, l] = max(0,
   delta / (2 r) (h2 S2[i, l] / delta**2 - r))``, candidate ``i`` is
   eliminated when its mean over ``r`` replicas is below ``mean_l - W[i,
   l]`` for some surviving ``l`` (for an objective to minimize, above
   ``mean_l + W[i, l]``).
3. Stop when one candidate is left, or when every ``W`` is 0 (``r`` past
   ``h2 S2 / delta**2``): the best mean then wins (ties: the first in
   the space's order).

With probability at least ``1 - alpha`` the chosen candidate's true mean is
within ``delta`` of the best candidate's (KN's guarantee holds for normal
per-replica values, asymptotically otherwise; common random numbers are
allowed). Replicas are run in batches; each candidate's count is the stage
at which the procedure dropped it, and the extra replicas a batch ran past
that stage are counted apart (``simulated``).

**Capacity planning** (``subject_to="ettr >= 0.9"``, ``minimize="fleet.spares"``):
first a feasibility check on every candidate (Andradottir and Kim's
fully sequential check, 2010): with ``q' = q - delta / 2``, ``eps = delta /
2``, per-candidate error ``beta``, ``h2 = 2 eta (n0 - 1)`` with ``eta =
((2 beta) ** (-2 / (n0 - 1)) - 1) / 2`` and ``S2`` the first-stage
variance, the sum ``D(r) = sum_j (Y_j - q')`` declares the candidate
feasible once ``D >= R(r)`` and infeasible once ``D <= -R(r)``, with ``R(r)
= max(0, h2 S2 / (2 eps) - eps r / 2)``. A candidate whose true mean
meets the bound is declared feasible, and one whose mean misses it by
``delta`` or more infeasible, each with probability at least ``1 - beta``.
The candidates are checked from the smallest ``minimize`` value up, and
those above the smallest value found feasible are never run further.
Then, among the feasible candidates at that smallest value (there are
several when the space has other paths), KN selects on the constraint's
measure, on fresh replicas. The error is split by Bonferroni: ``beta =
alpha / k`` when no selection is needed, else ``beta = alpha / (2 k)`` and
KN at ``alpha / 2``. **Joint guarantee**: with probability at least
``confidence``, the chosen value is no larger than the smallest value whose
true mean meets the bound, the chosen candidate's true mean misses the
bound by less than ``delta``, and among the candidates at that value
declared feasible its mean is within ``delta`` of the best.

>>> import acesim as ace
>>> base = {"jobs": [ace.Job(16, work=ace.DAY, checkpoint_interval=ace.HOUR)],
...         "failures": ace.Exponential(12 * ace.HOUR)}
>>> r = ace.tune(base, {"jobs[0].checkpoint_interval": [600, 1800, 3600, 4 * 3600]},
...              indifference=0.005, seed=1)
>>> r.best
{'jobs[0].checkpoint_interval': 1800}
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._toml import format_path
from .errors import UntrustedNameError
from .objectives import OBJECTIVES, Cost, Objective, as_scenario, evaluate
from .plot import _new_figure
from .results_io import ResultFileError, load_tables, save_tables
from .scenario import Scenario, _plain, parse_key
from .stats import Estimate, t_quantile
from .sweep import _Progress, progress_bar

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Range", "TuneResult", "load_tune", "tune"]

#: The ETTR objectives' default indifference.
ETTR_INDIFFERENCE = 0.002
#: The most candidates a space may make.
MAX_CANDIDATES = 10_000
#: The most replicas one candidate may take (a safety stop; the result then
#: says the guarantee was not reached).
MAX_REPLICAS = 1_000_000
_KIND = "acesim-tune"
_CONSTRAINT = re.compile(
    r"\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=)\s*(?P<bound>[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)\s*"
)


@dataclass(frozen=True)
class Range:
    """``points`` values from ``low`` to ``high``, evenly spaced (``log``:
    geometrically); integers when ``low`` and ``high`` are both integers
    (rounded, repeats dropped). A range is discretized to its points before
    the selection: to refine, tune again on a narrower range with another
    seed (fresh replicas)."""

    low: float
    high: float
    log: bool = False
    points: int = 9

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"Range {name} must be a number, got {type(value).__name__}")
            if not math.isfinite(float(value)):
                raise ValueError(f"Range {name} must be finite, got {value!r}")
        if not isinstance(self.log, bool):
            raise TypeError(f"Range log must be a bool, got {type(self.log).__name__}")
        if isinstance(self.points, bool) or not isinstance(self.points, numbers.Integral):
            raise TypeError(f"Range points must be an integer, got {type(self.points).__name__}")
        if not 2 <= int(self.points) <= MAX_CANDIDATES:
            raise ValueError(f"Range points must be in 2 .. {MAX_CANDIDATES}, got {self.points}")
        if not self.low < self.high:
            raise ValueError(f"Range low must be below high, got {self.low!r} .. {self.high!r}")
        if self.log and self.low <= 0:
            raise ValueError(f"a log Range needs low > 0, got {self.low!r}")

    def values(self) -> list[Any]:
        """The points, in increasing order."""
        make = np.geomspace if self.log else np.linspace
        grid = make(float(self.low), float(self.high), int(self.points))
        if isinstance(self.low, numbers.Integral) and isinstance(self.high, numbers.Integral):
            return sorted({round(float(x)) for x in grid})
        return [float(x) for x in grid]


@dataclass(frozen=True)
class _Constraint:
    metric: str
    op: str
    bound: float

    def text(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"


@dataclass
class TuneResult:
    """What :func:`tune` found.

    ``best``: the chosen candidate, path to value (None when no candidate
    is feasible); ``estimate``: its objective (an :class:`acesim.Estimate`:
    value, low, high at ``confidence``) on fresh replicas, disjoint from the
    ones that chose it (None when nothing was chosen); ``table``: every
    candidate (a numpy structured array: ``candidate``, one column per path
    with its value, ``estimate``, ``low``, ``high`` (a t interval on the
    candidate's own replicas), ``replicas`` (the procedure's count),
    ``simulated`` (replicas run, batches included), ``eliminated`` (the
    stage at which it was dropped; -1: never), ``feasible`` (1, 0, or -1:
    not checked), ``chosen``); ``statement``: the probability statement.
    """

    best: dict[str, Any] | None
    estimate: Estimate | None
    table: npt.NDArray[Any] = field(repr=False)
    statement: str
    objective: Objective
    paths: tuple[str, ...]
    values: list[dict[str, Any]] = field(repr=False)
    confidence: float = 0.95
    indifference: float = ETTR_INDIFFERENCE
    seed: int = 0
    subject_to: str | None = None
    minimize: str | None = None
    base_spec: dict[str, Any] = field(default_factory=dict, repr=False)
    _base: Scenario | None = field(default=None, repr=False, compare=False)

    @property
    def chosen(self) -> int | None:
        """The chosen candidate's row in :attr:`table` (None: none)."""
        rows = np.flatnonzero(self.table["chosen"])
        return int(rows[0]) if rows.size else None

    @property
    def replicas(self) -> int:
        """Replicas the procedure spent, over every candidate."""
        return int(self.table["replicas"].sum())

    def scenario(self, *, trust: bool = False) -> Scenario:
        """The base scenario with the chosen values: a scenario
        ``acesim run`` runs as is (:func:`acesim.dump_scenario` writes it).
        A result read from a file names any Python code of its base
        (``on_failure``, ``place``) as data: ``trust=True`` loads it."""
        if self.best is None:
            raise ValueError("no candidate was chosen (none is feasible): there is no scenario")
        base = self._base
        if base is None:
            named = [
                key for key in ("on_failure", "place") if key in self.base_spec.get("policy", {})
            ]
            if named and not trust:
                raise UntrustedNameError(
                    f"the saved base scenario names Python code (policy.{named[0]}); "
                    "pass trust=True to load it"
                )
            base = Scenario.from_dict(self.base_spec)
        return base.with_values(self.best)

    def figure(self) -> Figure:
        """Each candidate's estimate and interval, the chosen one marked
        (needs matplotlib)."""
        fig = _new_figure(7.5, 4.0)
        ax = fig.add_subplot()
        t = self.table
        x = np.arange(t.shape[0])
        dropped = (t["eliminated"] >= 0) | (t["feasible"] == 0)
        for mask, colour, label in (
            (dropped, "#9A9A9A", "eliminated or infeasible"),
            (~dropped & ~t["chosen"], "#2F6DB5", "not eliminated"),
            (t["chosen"], "#C4302B", "chosen"),
        ):
            if mask.any():
                ax.errorbar(
                    x[mask],
                    t["estimate"][mask],
                    yerr=[
                        t["estimate"][mask] - t["low"][mask],
                        t["high"][mask] - t["estimate"][mask],
                    ],
                    fmt="o",
                    color=colour,
                    label=label,
                    capsize=3,
                )
        if self.subject_to is not None:
            bound = _parse_constraint(self.subject_to).bound
            ax.axhline(bound, color="#555555", linestyle="--", linewidth=1, label=self.subject_to)
        ax.set_xticks(x, [_label(v) for v in self.values], rotation=30, ha="right", fontsize=8)
        unit = f" ({self.objective.unit})" if self.objective.unit else ""
        ax.set_ylabel(f"{self.objective.name}{unit}")
        ax.set_title(self._short(), fontsize=9)
        ax.legend(fontsize=8)
        return fig

    def _short(self) -> str:
        if self.best is None:
            return "no candidate is feasible"
        return f"chosen: {_label(self.best)}"

    def save(self, path: str | os.PathLike[str]) -> list[Path]:
        """Write the table and what it needs to be read back
        (:func:`load_tune`) in any layout of :func:`acesim.results_io.save_tables`
        (``.npz``, ``.json``, ``.csv``, ``.parquet``), atomically."""
        from . import __version__

        meta = {
            "tune": {
                "paths": list(self.paths),
                "values": [[_plain(v[p], p) for p in self.paths] for v in self.values],
                "objective": self.objective.to_dict(),
                "confidence": self.confidence,
                "indifference": self.indifference,
                "seed": self.seed,
                "subject_to": self.subject_to,
                "minimize": self.minimize,
                "statement": self.statement,
                "estimate": None if self.estimate is None else list(self.estimate),
            },
            "provenance": {"acesim_version": __version__, "base": self.base_spec},
        }
        return save_tables(path, {"candidates": self.table}, meta, kind=_KIND)

    def __str__(self) -> str:
        lines = [self.statement, ""]
        widths = [max(len(p), *(len(_label(v[p])) for v in self.values)) for p in self.paths]
        head = "".join(f"{p:<{w + 2}}" for p, w in zip(self.paths, widths, strict=True))
        lines.append(f"{'#':>4}  {head}{'estimate':>10}  {'interval':<22}{'replicas':>9}  status")
        for row, v in zip(self.table, self.values, strict=True):
            cells = "".join(
                f"{_label(v[p]):<{w + 2}}" for p, w in zip(self.paths, widths, strict=True)
            )
            if row["chosen"]:
                status = "<- chosen"
            elif row["eliminated"] >= 0:
                status = f"eliminated at {row['eliminated']}"
            elif row["feasible"] == 0:
                status = "infeasible"
            elif row["feasible"] == 1:
                status = "feasible"
            elif row["replicas"] == 0:
                status = "not run"
            else:
                status = ""
            interval = f"[{row['low']:.5g}, {row['high']:.5g}]"
            lines.append(
                f"{row['candidate']:>4}  {cells}{row['estimate']:10.5g}  {interval:<22}"
                f"{row['replicas']:>9}  {status}"
            )
        return "\n".join(lines)


def _label(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_label(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _parse_constraint(text: Any) -> _Constraint:
    if not isinstance(text, str):
        raise TypeError(
            f"subject_to must be a string such as 'ettr >= 0.9', got {type(text).__name__}"
        )
    m = _CONSTRAINT.fullmatch(text)
    if m is None:
        raise ValueError(
            f"subject_to must read 'MEASURE >= NUMBER' or 'MEASURE <= NUMBER', got {text!r}"
        )
    metric = m.group("metric")
    if metric not in OBJECTIVES:
        raise ValueError(
            f"subject_to: unknown measure {metric!r}; the measures are {', '.join(OBJECTIVES)}"
        )
    bound = float(m.group("bound"))
    return _Constraint(metric, m.group("op"), bound)


def _space(space: Any) -> tuple[tuple[str, ...], list[list[Any]]]:
    if not isinstance(space, Mapping):
        raise TypeError(
            f"space must map dotted paths to lists of values or Ranges, got {type(space).__name__}"
        )
    if not space:
        raise ValueError("space must not be empty")
    paths: list[str] = []
    axes: list[list[Any]] = []
    targets: dict[tuple[Any, ...], str] = {}
    for key, item in space.items():
        if not isinstance(key, str):
            raise TypeError(f"space keys must be dotted paths (strings), got {key!r}")
        try:
            target = parse_key(key)
        except ValueError as exc:
            raise ValueError(f"space: {exc}") from None
        for other, name in targets.items():
            short, long = sorted((target, other), key=len)
            if long[: len(short)] == short:
                raise ValueError(f"space: the paths {name!r} and {key!r} overlap")
        targets[target] = key
        if isinstance(item, Range):
            values = item.values()
        elif isinstance(item, list | tuple):
            values = list(item)
        else:
            raise TypeError(
                f"space[{key!r}] must be a list of values or an acesim.search.Range, "
                f"got {type(item).__name__}"
            )
        if not values:
            raise ValueError(f"space[{key!r}] must not be empty")
        plain = []
        for i, value in enumerate(values):
            try:
                plain.append(_plain(value, f"space[{key!r}][{i}]"))
            except TypeError as exc:
                raise TypeError(str(exc)) from None
        if len({repr(v) for v in plain}) != len(plain):
            raise ValueError(f"space[{key!r}] repeats a value")
        paths.append(format_path(target))
        axes.append(plain)
    count = math.prod(len(a) for a in axes)
    if count > MAX_CANDIDATES:
        raise ValueError(f"space makes {count:,} candidates, more than {MAX_CANDIDATES:,}")
    return tuple(paths), axes


def _level(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"confidence must be a number in (0, 1), got {type(confidence).__name__}")
    x = float(confidence)
    if not 0.0 < x < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {x!r}")
    return x


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__}")
    x = float(value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be finite and > 0, got {x!r}")
    return x


# ---------------------------------------------------------------------------
# The procedures
# ---------------------------------------------------------------------------

Sampler = Callable[[list[int], int, int], npt.NDArray[np.float64]]


def kn_constant(k: int, n0: int, alpha: float) -> float:
    """KN's ``h2 = 2 eta (n0 - 1)`` for ``k`` candidates, ``n0`` first-stage
    replicas and error ``alpha``."""
    if k < 2:
        return 0.0
    eta = 0.5 * (float(2.0 * alpha / (k - 1)) ** (-2.0 / (n0 - 1)) - 1.0)
    return float(2.0 * eta * (n0 - 1))


def fcp_constant(n0: int, beta: float) -> float:
    """The feasibility check's ``h2`` for per-candidate error ``beta``."""
    eta = 0.5 * (float(2.0 * beta) ** (-2.0 / (n0 - 1)) - 1.0)
    return float(2.0 * eta * (n0 - 1))


def _batch(r: int, n0: int, bound: float) -> int:
    """Replicas to add at stage ``r``: about a quarter more (at least half
    the first stage), never past the stage where the procedure must stop."""
    room = max(1, math.ceil(bound) - r) if math.isfinite(bound) else MAX_REPLICAS
    return max(1, min(max(n0 // 2, r // 4), room, MAX_REPLICAS - r))


@dataclass
class _Run:
    """What a procedure did to each candidate it ran: its values (raw) up
    to the stage it was decided or dropped at, that stage, and the replicas
    run for it (batches included)."""

    values: dict[int, npt.NDArray[np.float64]] = field(default_factory=dict)
    dropped: dict[int, int] = field(default_factory=dict)
    simulated: dict[int, int] = field(default_factory=dict)
    feasible: dict[int, bool] = field(default_factory=dict)
    reached: bool = True
    last: int = 0  # one past the last replica run


def _kn(
    sample: Sampler,
    candidates: list[int],
    *,
    n0: int,
    alpha: float,
    delta: float,
    sign: float,
    first: int,
    progress: _Progress | None,
) -> tuple[int, _Run]:
    """KN (see the module) on ``candidates`` from replica ``first``; ``sign``
    +1 to maximize, -1 to minimize. Returns the winner and what was run."""
    out = _Run()
    k = len(candidates)
    raw = sample(candidates, first, n0)
    if progress is not None:
        progress.update(k * n0)
    y = [sign * raw[i] for i in range(k)]
    out.simulated = dict.fromkeys(candidates, n0)
    out.dropped = dict.fromkeys(candidates, -1)
    stage = dict.fromkeys(range(k), n0)
    alive = list(range(k))
    r = n0
    if k > 1:
        h2 = kn_constant(k, n0, alpha)
        first_stage = np.array(y)
        s2 = (first_stage[:, None, :] - first_stage[None, :, :]).var(axis=2, ddof=1)
        sums = first_stage.sum(axis=1)

        def eliminate() -> None:
            nonlocal alive
            idx = np.array(alive)
            means = sums[idx] / r
            w = np.maximum(0.0, delta / (2.0 * r) * (h2 * s2[np.ix_(idx, idx)] / delta**2 - r))
            beaten = (means[:, None] < means[None, :] - w).any(axis=1)
            for j in np.flatnonzero(beaten):
                out.dropped[candidates[alive[j]]] = r
                stage[alive[j]] = r
            alive = [a for a, b in zip(alive, beaten, strict=True) if not b]

        while True:
            eliminate()
            if len(alive) == 1:
                break
            idx = np.array(alive)
            bound = float((h2 * s2[np.ix_(idx, idx)]).max()) / delta**2
            if r >= bound:
                break  # every W is 0: the best mean wins
            if r >= MAX_REPLICAS:
                out.reached = False
                break
            b = _batch(r, n0, bound)
            more = sign * sample([candidates[a] for a in alive], first + r, b)
            if progress is not None:
                progress.update(len(alive) * b)
            for j, a in enumerate(alive):
                y[a] = np.concatenate([y[a], more[j]])
                out.simulated[candidates[a]] += b
            # Stages r + 1 .. r + b, one at a time (the last at the loop's top).
            for step in range(b):
                r += 1
                for a in alive:
                    sums[a] += y[a][r - 1]
                    stage[a] = r
                if step < b - 1:
                    eliminate()
                    if len(alive) == 1:
                        break
            if len(alive) == 1:
                break
        means = np.array([sums[a] / r for a in alive])
        best = alive[int(np.argmax(means))]  # ties: the first in order
    else:
        best = 0
    for a in range(k):
        out.values[candidates[a]] = sign * y[a][: stage[a]]
    out.last = first + max(out.simulated.values())
    return candidates[best], out


def _feasibility(
    sample: Sampler,
    candidates: list[int],
    order: Callable[[int], Any],
    *,
    n0: int,
    beta: float,
    delta: float,
    sign: float,
    bound: float,
    first: int,
    progress: _Progress | None,
) -> _Run:
    """The feasibility check (see the module) of ``candidates`` against
    ``sign * mean >= sign * bound``; those whose ``order`` is above the
    smallest found feasible stop being run."""
    out = _Run()
    h2 = fcp_constant(n0, beta)
    eps = delta / 2.0
    centre = sign * bound - eps
    raw = sample(candidates, first, n0)
    if progress is not None:
        progress.update(len(candidates) * n0)
    y = {c: sign * raw[i] for i, c in enumerate(candidates)}
    s2 = {c: float(y[c].var(ddof=1)) for c in candidates}
    total = {c: float(np.sum(y[c] - centre)) for c in candidates}
    out.simulated = dict.fromkeys(candidates, n0)
    out.dropped = dict.fromkeys(candidates, -1)
    stage = dict.fromkeys(candidates, n0)
    r = n0
    undecided = list(candidates)

    def decide() -> list[int]:
        still = []
        for c in undecided:
            reach = max(0.0, h2 * s2[c] / (2.0 * eps) - eps * r / 2.0)
            if total[c] >= reach:
                out.feasible[c] = True
            elif total[c] <= -reach:
                out.feasible[c] = False
            else:
                still.append(c)
                continue
            stage[c] = r
        smallest = min((order(c) for c, ok in out.feasible.items() if ok), default=None)
        return [c for c in still if smallest is None or order(c) <= smallest]

    while True:
        undecided = decide()
        if not undecided:
            break
        if r >= MAX_REPLICAS:
            out.reached = False
            break
        reach = max(h2 * s2[c] / eps**2 for c in undecided)
        b = _batch(r, n0, reach)
        more = sign * sample(undecided, first + r, b)
        if progress is not None:
            progress.update(len(undecided) * b)
        for j, c in enumerate(undecided):
            y[c] = np.concatenate([y[c], more[j]])
            out.simulated[c] += b
        for step in range(b):
            r += 1
            for c in undecided:
                total[c] += float(y[c][r - 1] - centre)
                stage[c] = r
            if step < b - 1:
                undecided = decide()
                if not undecided:
                    break
        if not undecided:
            break
    for c in candidates:
        out.values[c] = sign * y[c][: stage[c]]
    out.last = first + max(out.simulated.values())
    return out


def _interval(values: npt.NDArray[np.float64], level: float) -> tuple[float, float, float]:
    n = values.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if n < 2:
        return mean, math.nan, math.nan
    half = t_quantile(0.5 + level / 2.0, n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


# ---------------------------------------------------------------------------
# tune
# ---------------------------------------------------------------------------


def tune(
    base: Any,
    space: Mapping[str, Any],
    *,
    objective: Any = "ettr",
    job: Any = None,
    subject_to: str | None = None,
    minimize: str | None = None,
    cost: Any = None,
    confidence: float = 0.95,
    indifference: float | None = None,
    seed: int = 0,
    first_stage: int = 20,
    threads: int | None = None,
    progress: bool = False,
) -> TuneResult:
    """The best candidate of ``space`` for ``objective``, with a guarantee
    (see :mod:`acesim.search` for the procedures).

    ``base``: a :class:`~acesim.Scenario`, or a dict of
    :func:`acesim.simulate` keywords (:func:`acesim.objectives.as_scenario`);
    its ``[run]`` replicas and seed are not used: the procedure decides the
    replicas, ``seed`` the draws. ``space``: dotted paths
    (``jobs[0].checkpoint_interval``, ``fleet.spares``,
    ``policy.replacement``, ``policy.quarantine.failures``,
    ``policy.preemption_grace``) to lists of values, as a scenario file
    writes them, or :class:`Range`; the candidates are their cartesian
    product (the first path varies slowest). An unknown path is a
    :class:`~acesim.ScenarioError` with a did-you-mean.

    ``objective``: the mean over replicas of a per-replica quantity
    (:class:`acesim.objectives.Objective`): ``"ettr"`` (the fleet's, or
    ``job``'s: a name or an index), ``"gpu_hours_lost"``, or ``"cost"``
    with ``cost=acesim.Cost(...)``. ``indifference``: the difference not
    worth telling apart, in the objective's units; 0.002 by default for
    ETTR, required for the others. ``confidence``: the probability the
    guarantee holds. ``first_stage``: replicas each candidate runs before
    any is dropped (at least 10).

    ``subject_to`` (``"ettr >= 0.9"``, ``"cost <= 5e4"``: a measure of
    :data:`acesim.objectives.OBJECTIVES`, for ``job`` where it applies) with
    ``minimize`` (a path of ``space`` with numbers): the smallest value that
    keeps the measure within the bound, ``indifference`` then in the
    measure's units; ``objective`` must then be the measure's (or left at
    ``"ettr"`` when the measure is ETTR).

    ``progress``: show the replicas run on stderr.
    """
    scenario = as_scenario(base)
    paths, axes = _space(space)
    level = _level(confidence)
    alpha = 1.0 - level
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in 0 .. 2**64 - 1, got {seed!r}")
    if isinstance(first_stage, bool) or not isinstance(first_stage, numbers.Integral):
        raise TypeError(f"first_stage must be an integer, got {type(first_stage).__name__}")
    n0 = int(first_stage)
    if not 10 <= n0 <= 100_000:
        raise ValueError(f"first_stage must be in 10 .. 100000, got {n0}")
    if not isinstance(progress, bool | np.bool_):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    constraint = None
    if (subject_to is None) != (minimize is None):
        raise ValueError("subject_to and minimize go together (the fewest X that keep Y >= q)")
    if subject_to is not None:
        constraint = _parse_constraint(subject_to)
        if not isinstance(minimize, str):
            raise TypeError(f"minimize must be a dotted path, got {type(minimize).__name__}")
        try:
            wanted = format_path(parse_key(minimize))
        except ValueError as exc:
            raise ValueError(f"minimize: {exc}") from None
        if wanted not in paths:
            raise ValueError(f"minimize: {minimize!r} is not a path of space ({', '.join(paths)})")
        minimize = wanted
        numbers_only = axes[paths.index(minimize)]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers_only):
            raise TypeError(f"minimize: the values of {minimize!r} must be numbers")
        if objective not in ("ettr", constraint.metric):
            raise ValueError(
                f"with subject_to the selection is on {constraint.metric!r}: "
                f"leave objective at its default or give {constraint.metric!r}"
            )
        objective = constraint.metric
    target = Objective.resolve(objective, job=job, cost=cost)
    if indifference is None:
        if target.kind != "ettr":
            raise ValueError(
                f"indifference is required for objective {target.kind!r} "
                f"(in {target.unit}: the difference not worth telling apart)"
            )
        delta = ETTR_INDIFFERENCE
    else:
        delta = _positive("indifference", indifference)

    combos = [dict(zip(paths, combo, strict=True)) for combo in itertools.product(*axes)]
    candidates = [scenario.with_values(v) for v in combos]
    k = len(candidates)

    def sample(which: list[int], first: int, count: int) -> npt.NDArray[np.float64]:
        out = np.array(
            [
                evaluate(
                    candidates[c],
                    target,
                    seed=int(seed),
                    replicas=count,
                    first_replica=first,
                    threads=threads,
                )
                for c in which
            ]
        )
        bad = ~np.isfinite(out)
        if bad.any():
            row, col = (int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{target.name} is not defined on replica {first + col} of candidate "
                f"{_label(combos[which[row]])} (a job that never ran before the horizon?): "
                "choose an objective every replica has"
            )
        return out

    bar = progress_bar(progress, k * n0, desc="tune", unit="replica")
    runs: list[_Run] = []
    feasible: dict[int, bool] = {}
    try:
        if constraint is None:
            sign = 1.0 if target.maximize else -1.0
            best, run = _kn(
                sample, list(range(k)), n0=n0, alpha=alpha, delta=delta, sign=sign,
                first=0, progress=bar,
            )  # fmt: skip
            runs.append(run)
            chosen: int | None = best
            reached = run.reached
            statement = (
                f"With probability at least {level:.4g}, the chosen candidate's mean "
                f"{target.name} is within {delta:g}{_unit(target)} of the best of the {k} "
                "candidates (Kim-Nelson fully sequential selection, common random numbers)."
            )
        else:
            assert minimize is not None
            sign = 1.0 if constraint.op == ">=" else -1.0
            key = paths.index(minimize)

            def order(c: int) -> Any:
                return combos[c][paths[key]]

            ordered = sorted(range(k), key=lambda c: (order(c), c))
            groups = len({order(c) for c in ordered}) < k
            beta = alpha / (2 * k) if groups else alpha / k
            run = _feasibility(
                sample, ordered, order, n0=n0, beta=beta, delta=delta, sign=sign,
                bound=constraint.bound, first=0, progress=bar,
            )  # fmt: skip
            runs.append(run)
            feasible = run.feasible
            reached = run.reached
            ok = [c for c in ordered if feasible.get(c)]
            chosen = None
            if ok:
                smallest = min(order(c) for c in ok)
                ties = [c for c in ok if order(c) == smallest]
                chosen = ties[0]
                if len(ties) > 1:
                    chosen, more = _kn(
                        sample, ties, n0=n0, alpha=alpha / 2, delta=delta, sign=sign,
                        first=run.last, progress=bar,
                    )  # fmt: skip
                    runs.append(more)
                    reached = reached and more.reached
            ties_text = (
                f", then Kim-Nelson selection among ties at error {alpha / 2:.3g}" if groups else ""
            )
            worst = constraint.bound - delta if sign > 0 else constraint.bound + delta
            statement = (
                f"With probability at least {level:.4g}: the chosen {minimize} is no larger "
                f"than the smallest value whose true mean {target.name} is "
                f"{constraint.op} {constraint.bound:g}, and its true mean {target.name} is "
                f"{constraint.op} {worst:g} (feasibility check at error {beta:.3g} per "
                f"candidate{ties_text}, common random numbers)."
            )
            if chosen is None:
                statement += " No candidate was found feasible."
        fresh = None
        if chosen is not None:
            # The chosen candidate again, on replicas none of the procedure ran.
            last = max(r.last for r in runs)
            n_fresh = max(n0, max(len(r.values.get(chosen, ())) for r in runs))
            values = sample([chosen], last, n_fresh)[0]
            if bar is not None:
                bar.update(n_fresh)
            fresh = Estimate(*_interval(values, level))
    finally:
        if bar is not None:
            bar.close()
    if not reached:
        statement += (
            f" The cap of {MAX_REPLICAS:,} replicas per candidate stopped the procedure "
            "before it ended: the guarantee does not hold."
        )

    table = _table(paths, axes, combos, runs, feasible, chosen, level)
    return TuneResult(
        best=None if chosen is None else dict(combos[chosen]),
        estimate=fresh,
        table=table,
        statement=statement,
        objective=target,
        paths=paths,
        values=combos,
        confidence=level,
        indifference=delta,
        seed=int(seed),
        subject_to=None if constraint is None else constraint.text(),
        minimize=minimize,
        base_spec=scenario.to_dict(),
        _base=scenario,
    )


def _unit(objective: Objective) -> str:
    return f" {objective.unit}" if objective.unit else ""


def _column(values: list[Any]) -> npt.NDArray[Any]:
    """A path's values as a column: numbers as numbers, else their text."""
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, np.int64)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return np.array(values, np.float64)
    return np.array([_label(v) for v in values], dtype=np.str_)


def _table(
    paths: tuple[str, ...],
    axes: list[list[Any]],
    combos: list[dict[str, Any]],
    runs: list[_Run],
    feasible: dict[int, bool],
    chosen: int | None,
    level: float,
) -> npt.NDArray[Any]:
    k = len(combos)
    columns: dict[str, npt.NDArray[Any]] = {"candidate": np.arange(k, dtype=np.int64)}
    for p in paths:
        columns[p] = _column([c[p] for c in combos])
    est = np.full((k, 3), math.nan)
    replicas = np.zeros(k, np.int64)
    simulated = np.zeros(k, np.int64)
    eliminated = np.full(k, -1, np.int64)
    for c in range(k):
        values = [r.values[c] for r in runs if c in r.values]
        if values:
            pooled = np.concatenate(values)
            est[c] = _interval(pooled, level)
            replicas[c] = pooled.size
        simulated[c] = sum(r.simulated.get(c, 0) for r in runs)
        dropped = [r.dropped[c] for r in runs if r.dropped.get(c, -1) >= 0]
        if dropped:
            eliminated[c] = dropped[-1]
    columns["estimate"] = est[:, 0]
    columns["low"] = est[:, 1]
    columns["high"] = est[:, 2]
    columns["replicas"] = replicas
    columns["simulated"] = simulated
    columns["eliminated"] = eliminated
    columns["feasible"] = np.array(
        [-1 if c not in feasible else int(feasible[c]) for c in range(k)], np.int8
    )
    columns["chosen"] = np.asarray(np.arange(k) == (-1 if chosen is None else chosen))
    table = np.zeros(k, [(name, col.dtype) for name, col in columns.items()])
    for name, col in columns.items():
        table[name] = col
    return table


def load_tune(path: str | os.PathLike[str]) -> TuneResult:
    """A :class:`TuneResult` :meth:`TuneResult.save` wrote. Its base
    scenario is kept as data: :meth:`TuneResult.scenario` loads any Python
    code it names only with ``trust=True``."""
    tables, meta = load_tables(path, kind=_KIND)
    table = tables.get("candidates")
    info = meta.get("tune")
    prov = meta.get("provenance")
    where = os.fspath(path)
    if table is None or not isinstance(info, dict) or not isinstance(prov, dict):
        raise ResultFileError(f"{where}: not a tune table (no candidates or no tune metadata)")
    try:
        paths = tuple(str(p) for p in info["paths"])
        values = [dict(zip(paths, row, strict=True)) for row in info["values"]]
        got = info["objective"]
        cost = got.get("cost")
        target = Objective.resolve(
            got["objective"], job=got.get("job"), cost=None if cost is None else Cost(**cost)
        )
        estimate = info.get("estimate")
        base = prov.get("base")
        if not isinstance(base, dict):
            raise TypeError("provenance.base is not a table")
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultFileError(f"{where}: unreadable tune metadata: {exc}") from None
    if len(values) != table.shape[0]:
        raise ResultFileError(f"{where}: {len(values)} candidates, the table has {table.shape[0]}")
    rows = np.flatnonzero(table["chosen"])
    return TuneResult(
        best=None if not rows.size else dict(values[int(rows[0])]),
        estimate=None if estimate is None else Estimate(*(float(x) for x in estimate)),
        table=table,
        statement=str(info.get("statement", "")),
        objective=target,
        paths=paths,
        values=values,
        confidence=float(info.get("confidence", 0.95)),
        indifference=float(info.get("indifference", ETTR_INDIFFERENCE)),
        seed=int(info.get("seed", 0)),
        subject_to=info.get("subject_to"),
        minimize=info.get("minimize"),
        base_spec=base,
    )
