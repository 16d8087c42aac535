"""``acesim tune``: :func:`acesim.tune` on the command line.

A tune file is a sweep file (``base`` and ``[axes]``, see
:class:`acesim.scenario.ScenarioGrid`) with a ``[tune]`` table of
:func:`acesim.tune`'s options::

    base = "flagship.toml"
    [axes]
    "fleet.spares" = [0, 1, 2, 3, 4]
    [tune]
    job = "flagship"
    subject_to = "ettr >= 0.9"
    minimize = "fleet.spares"
    indifference = 0.01          # in the measure's units
    confidence = 0.95
    seed = 0
    # objective = "cost", cost = {gpu_hour = 2.5, spare_node_hour = 20.0}

or a scenario file with the space on the command line (``--vary
fleet.spares=0,1,2,3``). Every value of the file is data: the measures and
options are looked up in allow-lists.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import tomllib

from . import _atomic
from .objectives import Cost
from .scenario import Scenario, ScenarioError, dump_scenario, load_scenario, load_sweep, parse_key
from .search import TuneResult, tune

#: The keys of a ``[tune]`` table.
TUNE_KEYS = (
    "objective",
    "job",
    "subject_to",
    "minimize",
    "confidence",
    "indifference",
    "seed",
    "first_stage",
    "cost",
)


def add_parser(add: Any) -> None:
    """The ``tune`` subcommand's arguments; ``add(name, **kwargs)`` makes a
    subcommand's parser (with its examples as the epilog)."""
    t = add(
        "tune",
        help="find the best policy of a space with a statistical guarantee (acesim.tune)",
        description="Select the best candidate of a space of dotted paths (a tune file's "
        "[axes], or --vary) for an objective, by Kim and Nelson's fully sequential "
        "procedure on common random numbers; with --subject-to and --minimize, the "
        "smallest value that keeps a bound (capacity planning).",
    )
    t.add_argument("file", help="a tune file (base, [axes], [tune]) or a scenario file")
    t.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="PATH=VALUES",
        help="a path of the space and its comma-separated values (fleet.spares=0,1,2)",
    )
    t.add_argument(
        "--objective",
        choices=("ettr", "gpu_hours_lost", "cost"),
        default=None,
        help="what to optimize (default ettr; cost needs a [tune] cost table)",
    )
    t.add_argument("--job", default=None, help="a job's name or index (its ETTR)")
    t.add_argument("--subject-to", default=None, metavar="'ettr >= 0.9'", help="a bound to keep")
    t.add_argument(
        "--minimize", default=None, metavar="PATH", help="with --subject-to: the path to minimize"
    )
    t.add_argument("--confidence", type=float, default=None, help="default 0.95")
    t.add_argument(
        "--indifference",
        type=float,
        default=None,
        help="the difference not worth telling apart, in the objective's units "
        "(default 0.002 for ETTR; required for the others)",
    )
    t.add_argument("--seed", type=int, default=None, help="default 0")
    t.add_argument("--threads", type=int, default=None, help="default: every core")
    t.add_argument(
        "--scenario", metavar="OUT.toml", help="write the chosen candidate as a scenario file"
    )
    t.add_argument(
        "--out", metavar="FILE", help="write the candidate table (.npz .json .csv .parquet)"
    )
    t.add_argument(
        "--no-progress", action="store_true", help="no progress bar (shown only on a terminal)"
    )


def _value(text: str) -> Any:
    """One ``--vary`` value as a TOML value (a number, a boolean), else the
    text as a string (a duration, a name)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def _vary(items: list[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for item in items:
        path, sep, values = item.partition("=")
        if not sep or not values.strip():
            raise ValueError(f"--vary {item!r}: write PATH=VALUE,VALUE,...")
        parse_key(path.strip())
        out[path.strip()] = [_value(v) for v in values.split(",")]
    return out


def _options(table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ScenarioError("must be a table", file=where, key="tune")
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key not in TUNE_KEYS:
            raise ScenarioError(
                f"unknown key {key!r} in tune; the keys are {', '.join(TUNE_KEYS)}",
                file=where,
                key=f"tune.{key}",
            )
        if key == "cost":
            if not isinstance(value, dict):
                raise ScenarioError("must be a table of prices", file=where, key="tune.cost")
            names = tuple(Cost.COLUMNS)
            for term in value:
                if term not in names:
                    raise ScenarioError(
                        f"unknown price {term!r}; the prices are {', '.join(names)}",
                        file=where,
                        key=f"tune.cost.{term}",
                    )
            try:
                value = Cost(**value)
            except (TypeError, ValueError) as exc:
                raise ScenarioError(str(exc), file=where, key="tune.cost") from None
        out[key] = value
    return out


def _space_of(grid: Any) -> dict[str, list[Any]]:
    """Each axis of a sweep file and its values, in order."""
    space: dict[str, list[Any]] = {}
    for axis in grid.axes:
        seen: list[Any] = []
        for point in grid.points:
            value = point.values[axis]
            if not any(repr(value) == repr(s) for s in seen):
                seen.append(value)
        space[axis] = seen
    return space


def run_tune(args: argparse.Namespace, progress: bool) -> int:
    """``acesim tune FILE``: print the table and the statement; write the
    chosen scenario (``--scenario``) and the table (``--out``)."""
    outputs = [("--scenario", args.scenario), ("--out", args.out)]
    _atomic.check_outputs([(o, p) for o, p in outputs if p is not None], [args.file])
    with open(args.file, "rb") as handle:
        try:
            doc = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"invalid TOML: {exc}", file=args.file) from None
    options: dict[str, Any] = {}
    base: Scenario
    space: dict[str, list[Any]] = {}
    if "base" in doc:
        grid = load_sweep(args.file)
        base = grid.base
        space = _space_of(grid)
        options = _options(doc.get("tune", {}), args.file)
    else:
        base = load_scenario(args.file)
    space.update(_vary(args.vary))
    if not space:
        raise ValueError(f"{args.file}: no space: give a tune file with [axes], or --vary")
    for key in ("objective", "job", "subject_to", "minimize", "confidence", "indifference",
                "seed"):  # fmt: skip
        value = getattr(args, key)
        if value is not None:
            options[key] = int(value) if key == "job" and value.isdigit() else value
    if args.threads is not None:
        options["threads"] = args.threads
    result = tune(base, space, progress=progress, **options)
    _print(result)
    if args.scenario is not None:
        chosen = result.scenario()
        header = f"Chosen by acesim tune {Path(args.file).name}: " + ", ".join(
            f"{k} = {v}" for k, v in (result.best or {}).items()
        )
        dump_scenario(chosen, args.scenario, header=header)
        print(f"\nscenario of the chosen candidate written to {args.scenario}")
    if args.out is not None:
        result.save(args.out)
        print(f"candidate table written to {args.out}")
    return 0


def _print(result: TuneResult) -> None:
    print(result)
    if result.best is not None and result.estimate is not None:
        e = result.estimate
        print(
            f"\nchosen: {', '.join(f'{k} = {v}' for k, v in result.best.items())}; "
            f"{result.objective.name} on fresh replicas {e.value:.5g} [{e.low:.5g}, {e.high:.5g}]"
        )
    print(f"replicas spent: {result.replicas:,}")
