"""The ``[sensitivity]`` table of a scenario file, which ``acesim
sensitivity SCENARIO.toml`` reads (running the scenario ignores it)::

    [sensitivity]
    method = "morris"                 # or "sobol"
    objective = "ettr"                # or "gpu_hours_lost", "cost"
    job = "flagship"                  # optional: that job's objective
    cost = {gpu_hour = 2.0, repair = 500.0}   # objective = "cost": acesim.Cost's prices
    seed = 0                          # every run's seed, and the design's
    replicas = 20                     # per run (default: [run].replicas)
    trajectories = 10                 # Morris
    grid = 4                          # Morris: levels of a continuous factor's grid
    samples = 64                      # Sobol: base rows
    ci = 0.95
    bootstrap = 1000

    [sensitivity.factors]             # quote the paths: they hold dots and brackets
    "fleet.node_failures.mean" = {low = "1d", high = "8d", log = true}
    "fleet.spares" = {low = 0, high = 3}
    "jobs[0].checkpoint_interval" = ["30min", "1h", "2h"]
    "policy.replacement" = ["spares", "wait_repair"]

Every problem is a :class:`~acesim.ScenarioError` naming the file, the key
and its line; the factors' own checks are those of
:func:`acesim.sensitivity.factors.parse_factors`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..objectives import OBJECTIVES, Cost
from ..scenario import Scenario, _Checks
from .factors import CATEGORICAL_KEYS

__all__ = ["SPEC_KEYS", "SensitivitySpec", "parse_factor_text", "read_spec"]

#: The keys of a ``[sensitivity]`` table.
SPEC_KEYS = (
    "method",
    "objective",
    "job",
    "cost",
    "seed",
    "replicas",
    "trajectories",
    "grid",
    "samples",
    "ci",
    "bootstrap",
    "factors",
)
_METHODS = ("morris", "sobol")
_RANGE_KEYS = ("low", "high", "log", "points")
_INTEGERS = ("seed", "replicas", "trajectories", "grid", "samples", "bootstrap")


@dataclass(frozen=True)
class SensitivitySpec:
    """A scenario without its ``[sensitivity]`` table (``base``), the
    factors and the keyword arguments of :func:`acesim.sensitivity`."""

    base: Scenario
    factors: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)


def _flatten(checks: _Checks, value: Any, prefix: tuple[str, ...]) -> dict[str, Any]:
    """The factors of a table, dotted keys flattened (``a.b = {...}`` in
    TOML nests ``b`` in ``a``): a table of range keys is a range."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        path = (*prefix, key)
        if isinstance(item, dict) and not (set(item) <= set(_RANGE_KEYS) and item):
            out.update(_flatten(checks, item, path))
        elif isinstance(item, dict | list):
            out[".".join(path)] = item
        else:
            raise checks.error(
                ("sensitivity", "factors", *path),
                "a factor is a range {low = ..., high = ..., log = false} or an array of "
                f"levels, got {type(item).__name__}",
            )
    return out


def read_spec(scenario: Scenario) -> SensitivitySpec:
    """The ``[sensitivity]`` table of ``scenario`` (empty when it has none)."""
    checks = _Checks()
    checks.places = scenario._places
    doc = scenario.to_dict()
    raw = doc.get("sensitivity", {})
    at: tuple[str | int, ...] = ("sensitivity",)
    table = checks.table(at, raw, SPEC_KEYS)
    options: dict[str, Any] = {}
    if "method" in table:
        options["method"] = checks.choice((*at, "method"), table["method"], _METHODS)
    if "objective" in table:
        options["objective"] = checks.choice((*at, "objective"), table["objective"], OBJECTIVES)
    if "job" in table:
        job = table["job"]
        if isinstance(job, bool) or not isinstance(job, int | str):
            raise checks.error((*at, "job"), "must be a job's index or name")
        options["job"] = job
    if "cost" in table:
        prices = checks.table((*at, "cost"), table["cost"], tuple(Cost.COLUMNS))
        options["cost"] = checks.call((*at, "cost"), Cost, **prices)
    for key in _INTEGERS:
        if key in table:
            options[key] = checks.integer((*at, key), table[key])
    if "ci" in table:
        options["ci"] = checks.number((*at, "ci"), table["ci"])
    factors: dict[str, Any] = {}
    if "factors" in table:
        value = table["factors"]
        if not isinstance(value, dict):
            raise checks.error((*at, "factors"), "must be a table of factors (path = range)")
        factors = _flatten(checks, value, ())
    base = scenario.with_values({"sensitivity": None}) if "sensitivity" in doc else scenario
    return SensitivitySpec(base, factors, options)


def _scalar(text: str) -> Any:
    """A command-line value as TOML would type it: an integer, a number,
    true / false, else the text (a duration, a name)."""
    word = text.strip()
    if word.lower() in ("true", "false"):
        return word.lower() == "true"
    try:
        return int(word)
    except ValueError:
        pass
    try:
        number = float(word)
    except ValueError:
        return word
    return number if math.isfinite(number) else word


def parse_factor_text(text: str) -> tuple[str, Any]:
    """``--factor`` text: ``PATH=LOW..HIGH`` (a range), ``PATH=log:LOW..HIGH``
    (a range uniform in the logarithm) or ``PATH=A,B,C`` (levels); a
    ValueError saying which form is expected otherwise."""
    path, sep, spec = text.partition("=")
    path, spec = path.strip(), spec.strip()
    if not sep or not path or not spec:
        raise ValueError(
            f"--factor must be PATH=LOW..HIGH, PATH=log:LOW..HIGH or PATH=A,B,C, got {text!r}"
        )
    log = spec.lower().startswith("log:")
    if log:
        spec = spec[4:].strip()
    if ".." in spec:
        low, _, high = spec.partition("..")
        if not low.strip() or not high.strip():
            raise ValueError(f"--factor {path}: a range is LOW..HIGH, got {spec!r}")
        return path, {"low": _scalar(low), "high": _scalar(high), "log": log}
    if log:
        raise ValueError(f"--factor {path}: log: goes with a range LOW..HIGH, got {spec!r}")
    levels = [_scalar(v) for v in spec.split(",") if v.strip()]
    if len(levels) < 2:
        key = path.rsplit(".", 1)[-1]
        hint = " (a categorical key)" if key in CATEGORICAL_KEYS else ""
        raise ValueError(
            f"--factor {path}{hint}: give a range LOW..HIGH or at least two levels A,B, "
            f"got {spec!r}"
        )
    return path, levels
