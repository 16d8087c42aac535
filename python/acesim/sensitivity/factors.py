"""The factors of a sensitivity analysis: a scenario's dotted paths, each
with a range or a list of levels, and the values a design point gives them.

A factor is one of:

- a **continuous range**: ``{"low": 2.0, "high": 16.0, "log": False}`` (or
  any object with ``low``, ``high`` and ``log`` attributes, such as
  ``acesim.search.Range``; its ``points`` is not used). Durations may be
  written with units (``"2d"``). With ``log=True`` the factor is uniform in
  the logarithm (both bounds > 0). On a key that holds a count
  (:data:`INTEGER_KEYS`: ``fleet.spares``, ``policy.quarantine.failures``,
  ...) the bounds must be integers and the factor takes each integer from
  ``low`` to ``high`` with equal probability (an ordered discrete factor).
- a **list of levels** (at least two, all different): a categorical factor
  whose value is one of the levels with equal probability
  (``["spares", "wait_repair"]``, ``["30min", "1h", "2h"]``, or tables).
  Keys that only take names or switches (:data:`CATEGORICAL_KEYS`:
  ``policy.replacement``, ``fleet.node_clock``, ...) take only levels.

``PATH.mean`` where ``PATH`` holds a law (``fleet.node_failures.mean``,
``fleet.repair.mean``, ``jobs[0].init.mean``, ``causes[2].detect.mean``)
rescales that law to the factor's value as its mean, keeping its shape:
every draw is multiplied by ``value / law.mean()`` (an exponential's mean,
a Weibull's or gamma's scale, a lognormal's ``mu`` by ``log`` of the ratio,
each mixture component, the samples of an empirical law, a scale-aware
law's base). Any law with a finite mean rescales; for a scale-aware law the
mean is the one at its ``ref_gpus``. A repair pipeline's stage durations
scale together, so its mean (:meth:`acesim.Repair.mean`) is the value and
its escalation and fix probabilities stay.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._toml import format_path
from ..distributions import (
    BlockBootstrap,
    Constant,
    Distribution,
    Empirical,
    Exponential,
    Gamma,
    LogNormal,
    Mixture,
    Replay,
    ScaleAware,
    Weibull,
)
from ..repair import Repair, RepairStage
from ..scenario import Scenario, ScenarioError, cause_spec, law_spec, parse_key
from ..units import parse_duration

__all__ = [
    "CATEGORICAL_KEYS",
    "INTEGER_KEYS",
    "Factor",
    "named_causes_as_tables",
    "parse_factors",
    "scaled_law",
]

#: Keys that hold a count: a range on one is an ordered discrete factor.
INTEGER_KEYS = frozenset(
    (
        "spares",
        "cold_spares",
        "nodes",
        "gpus",
        "gpus_per_node",
        "failures",
        "priority",
        "count",
        "min_gpus",
        "replication",
        "replicas",
    )
)

#: Keys that hold a name or a switch: they take a list of levels only.
CATEGORICAL_KEYS = frozenset(
    (
        "replacement",
        "preemption",
        "backfill",
        "node_start",
        "node_clock",
        "scope",
        "node_down",
        "lend_spares",
        "on_failure",
        "place",
        "law",
        "causes",
    )
)


@dataclass(frozen=True)
class Factor:
    """One factor: ``path`` as given; ``target``, the scenario key its value
    is written to (for ``PATH.mean``, ``PATH`` itself, with the rescaled law);
    a range (``low``, ``high``, ``log``; ``integer`` for a count) or
    ``levels``."""

    path: str
    target: tuple[str | int, ...]
    low: float = math.nan
    high: float = math.nan
    log: bool = False
    integer: bool = False
    levels: tuple[Any, ...] = ()
    base_law: Distribution | Repair | None = None

    @property
    def categorical(self) -> bool:
        return bool(self.levels)

    @property
    def design_levels(self) -> int | None:
        """Its kind in a design: None (continuous), ``m`` (an ordered count
        of ``m`` values) or ``-m`` (``m`` categorical levels)."""
        if self.levels:
            return -len(self.levels)
        if self.integer:
            return int(self.high - self.low) + 1
        return None

    def value(self, coordinate: float) -> Any:
        """The factor's value at a design coordinate: a place in ``[0, 1]``
        for a continuous range, a level's index otherwise."""
        if self.levels:
            return self.levels[int(coordinate)]
        if self.integer:
            return int(self.low) + int(coordinate)
        if self.log:
            return math.exp(
                math.log(self.low) + coordinate * (math.log(self.high) - math.log(self.low))
            )
        return self.low + coordinate * (self.high - self.low)

    def setting(self, value: Any) -> tuple[tuple[str | int, ...], Any]:
        """The scenario key and TOML value that give the factor ``value``."""
        if self.base_law is None:
            return self.target, value
        ratio = float(value) / _mean(self.base_law)
        return self.target, law_spec(scaled_law(self.base_law, ratio))

    def describe(self) -> str:
        if self.levels:
            return ", ".join(str(v) for v in self.levels)
        text = f"{self.low:g}..{self.high:g}"
        return text + " (log)" if self.log else text


def _mean(law: Distribution | Repair) -> float:
    return float(law.mean())


def scaled_law(law: Distribution | Repair, ratio: float) -> Distribution | Repair:
    """``law`` with every draw multiplied by ``ratio`` (> 0): the same shape,
    the mean times ``ratio``. A TypeError for a law it cannot rescale."""
    if not ratio > 0 or not math.isfinite(ratio):
        raise ValueError(f"ratio must be finite and > 0, got {ratio!r}")
    if isinstance(law, Repair):
        stages = [
            RepairStage(_law(scaled_law(s.duration, ratio)), escalate=s.escalate, fix=s.fix)
            for s in law.stages
        ]
        return Repair(stages, misdiagnosis=law.misdiagnosis)
    if isinstance(law, Constant):
        return Constant(law.value * ratio)
    if isinstance(law, Exponential):
        return Exponential(law.mean_value * ratio)
    if isinstance(law, Weibull):
        return Weibull(law.shape, law.scale * ratio)
    if isinstance(law, Gamma):
        return Gamma(law.shape, law.scale * ratio)
    if isinstance(law, LogNormal):
        return LogNormal(law.mu + math.log(ratio), law.sigma)
    if isinstance(law, Mixture):
        return Mixture([(w, _law(scaled_law(d, ratio))) for w, d in law.components])
    if isinstance(law, Empirical):
        return Empirical(law.samples * ratio)
    if isinstance(law, BlockBootstrap):
        return BlockBootstrap(law.sequence * ratio, law.block)
    if isinstance(law, Replay):
        return Replay(law.times * ratio)
    if isinstance(law, ScaleAware):
        return ScaleAware(_law(scaled_law(law.base, ratio)), law.ref_gpus, law.exponent)
    raise TypeError(f"a {type(law).__name__} cannot be rescaled to a mean")


def _law(value: Distribution | Repair) -> Distribution:
    assert isinstance(value, Distribution)
    return value


# ---------------------------------------------------------------------------
# Reading and checking the factors
# ---------------------------------------------------------------------------


def _bound(path: str, name: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"factors[{path!r}]: {name}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"factors[{path!r}]: {name} must be a number or a duration, got {type(value).__name__}"
        )
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"factors[{path!r}]: {name} must be finite, got {value!r}")
    return x


def _range_parts(path: str, spec: Any) -> tuple[Any, Any, bool] | None:
    """(low, high, log) of a range spec, None for a list of levels."""
    if isinstance(spec, Mapping):
        unknown = sorted(set(spec) - {"low", "high", "log", "points"})
        if unknown or "low" not in spec or "high" not in spec:
            raise ValueError(
                f"factors[{path!r}]: a range is a table with low, high and optionally log, "
                f"got the keys {', '.join(map(str, spec))}"
            )
        log = spec.get("log", False)
        return spec["low"], spec["high"], log
    if all(hasattr(spec, name) for name in ("low", "high", "log")):
        return spec.low, spec.high, spec.log
    if isinstance(spec, list | tuple):
        return None
    raise TypeError(
        f"factors[{path!r}] must be a range (a table with low, high, log, or acesim.search."
        f"Range) or a list of levels, got {type(spec).__name__}"
    )


def _factor(base: Scenario, path: str, spec: Any) -> Factor:
    if not isinstance(path, str):
        raise TypeError(f"factors: keys must be dotted paths (strings), got {path!r}")
    try:
        parts = parse_key(path)
    except ValueError as exc:
        raise ValueError(f"factors: {exc}") from None
    names = [p for p in parts if isinstance(p, str)]
    target: tuple[str | int, ...] = parts
    base_law = None
    if len(parts) >= 2 and parts[-1] == "mean":
        base_law = base.law_at(parts[:-1])
        if base_law is None:
            raise ValueError(
                f"factors[{path!r}]: {format_path(parts[:-1])} holds no law to rescale "
                "(PATH.mean rescales a law written at PATH: a failures, repair, init, save, "
                "load, detect, ... key)"
            )
        mean = _mean(base_law)
        if not (math.isfinite(mean) and mean > 0):
            raise ValueError(
                f"factors[{path!r}]: the law at {format_path(parts[:-1])} has no finite "
                f"mean > 0 ({mean!r}) to rescale"
            )
        target = parts[:-1]
    parsed = _range_parts(path, spec)
    if parsed is None:
        levels = tuple(spec)
        if len(levels) < 2:
            raise ValueError(
                f"factors[{path!r}]: a list of levels needs at least 2, got {len(levels)}"
            )
        for i, a in enumerate(levels):
            if any(a == b for b in levels[:i]):
                raise ValueError(f"factors[{path!r}]: the level {a!r} is given twice")
        if base_law is not None:
            levels = tuple(_bound(path, f"levels[{i}]", v) for i, v in enumerate(levels))
            if min(levels) <= 0:
                raise ValueError(f"factors[{path!r}]: a mean must be > 0")
        factor = Factor(path, target, levels=levels, base_law=base_law)
        _try(base, factor, list(levels))
        return factor
    key = names[-1] if names else ""
    if key in CATEGORICAL_KEYS and base_law is None:
        raise ValueError(
            f"factors[{path!r}]: {key} is categorical: give a list of levels "
            f"(such as [{_example_levels(key)}]), not a range"
        )
    raw_low, raw_high, log = parsed
    if not isinstance(log, bool):
        raise TypeError(f"factors[{path!r}]: log must be a bool, got {type(log).__name__}")
    low, high = _bound(path, "low", raw_low), _bound(path, "high", raw_high)
    if not low < high:
        raise ValueError(
            f"factors[{path!r}]: the range {low:g}..{high:g} is empty (low must be < high)"
        )
    integer = key in INTEGER_KEYS and base_law is None
    if integer:
        for name, raw in (("low", raw_low), ("high", raw_high)):
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise TypeError(
                    f"factors[{path!r}]: {key} is a count: {name} must be an integer, got {raw!r}"
                )
        if log:
            raise ValueError(f"factors[{path!r}]: {key} is a count: log ranges are continuous")
    if log and low <= 0:
        raise ValueError(f"factors[{path!r}]: a log range needs low > 0, got {low:g}")
    if base_law is not None and low <= 0:
        raise ValueError(f"factors[{path!r}]: a mean must be > 0, got low = {low:g}")
    factor = Factor(path, target, low=low, high=high, log=log, integer=integer, base_law=base_law)
    values = [int(low), int(high)] if integer else [low, high]
    _try(base, factor, values)
    return factor


_EXAMPLES = {
    "replacement": "'spares', 'wait_repair'",
    "preemption": "'immediate', 'checkpoint_aware'",
    "backfill": "'easy', 'greedy'",
    "node_start": "'stationary', 'fresh'",
    "node_clock": "'wall', 'busy'",
    "scope": "'process', 'node'",
}


def _example_levels(key: str) -> str:
    return _EXAMPLES.get(key, "true, false")


def _try(base: Scenario, factor: Factor, values: Sequence[Any]) -> None:
    """Build the scenario at each value: the scenario's own checks name a
    key that does not exist (with a did-you-mean) or a value it refuses."""
    for value in values:
        key, setting = factor.setting(value)
        try:
            base.with_values({key: setting}, origin=f"factors[{factor.path!r}]")
        except ScenarioError:
            raise  # it names the factor (its origin) and the key
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"factors[{factor.path!r}] = {value!r}: {exc}") from None


def named_causes_as_tables(base: Scenario, factors: Mapping[str, Any]) -> Scenario:
    """``base`` with a named cause set (``causes = "llama3"``) written out as
    ``[[causes]]`` tables when a factor reaches into ``causes[i]``, so that
    ``causes[2].detect.mean`` has a table to change (the same causes)."""
    doc = base.to_dict()
    named = isinstance(doc.get("causes"), str)
    if not named or not any(isinstance(p, str) and p.startswith("causes[") for p in factors):
        return base
    causes = base.simulate_kwargs().get("causes") or ()
    return base.with_values({"causes": [cause_spec(c) for c in causes]})


def parse_factors(base: Scenario, factors: Mapping[str, Any]) -> list[Factor]:
    """The factors of ``factors`` (path to a range or levels), each checked
    against ``base``; a ValueError or TypeError names the factor."""
    if not isinstance(factors, Mapping):
        raise TypeError(
            "factors must be a dict of dotted paths to ranges or levels, "
            f"got {type(factors).__name__}"
        )
    if not factors:
        raise ValueError("factors must name at least one factor")
    out = [_factor(base, path, spec) for path, spec in factors.items()]
    seen: dict[tuple[str | int, ...], str] = {}
    for f in out:
        for other, name in seen.items():
            short, long = sorted((f.target, other), key=len)
            if long[: len(short)] == short:
                raise ValueError(f"factors: {name!r} and {f.path!r} set the same key")
        seen[f.target] = f.path
    return out
