"""Scenario files: everything :func:`acesim.simulate` takes, written in TOML.

>>> import acesim as ace
>>> s = ace.Scenario.from_dict({
...     "run": {"replicas": 50, "seed": 1},
...     "jobs": [{"gpus": 1024, "work": "2d", "checkpoint_interval": "1h"}],
...     "failures": {"law": "exponential", "mean": "8h"},
... })
>>> res = s.run()
>>> res.replicas, bool(0.8 < res.pooled_ettr() < 1.0)
(50, True)

``load_scenario(path)`` reads a file, :meth:`Scenario.from_dict` a dict of
the same shape; :meth:`Scenario.simulate_kwargs` gives the ``simulate``
arguments, :meth:`Scenario.run` runs them, :meth:`Scenario.to_dict` gives the
scenario back as plain TOML types (what a saved result carries as its
provenance) and :func:`dump_scenario` writes it as TOML. On the command line:
``acesim run x.toml``, ``acesim sweep grid.toml``, ``acesim compare a.toml
b.toml`` (see ``acesim --help``).

The format
==========

A complete example (every table and key is optional except where said;
what a key means is what the same ``simulate``, :class:`~acesim.Job`,
:class:`~acesim.Fleet`, ... parameter means)::

    [run]
    name = "flagship"                  # labels only
    description = "1,024 GPUs on a tight fleet"
    replicas = 200                     # simulate's replicas (default 1)
    seed = 0                           # default 0
    horizon = "30d"                    # a duration, or "inf" (the default)
    threads = 4                        # default: every core
    record_events = false              # the event log (events, placements, node_events)
    # also: gpus_per_node (without a fleet), max_events, max_stalled_failures,
    # check_invariants, first_replica

    [[jobs]]                           # one table per job (or a [workload], not both)
    name = "flagship"
    gpus = 1024                        # required
    work = "7d"                        # required: seconds of compute
    checkpoint_interval = "daly"       # required: a duration, "young", "daly" or "adaptive"
    init = "5min"                      # laws (see below); Job's defaults when left out
    save = {law = "lognormal", mu = 4.0, sigma = 0.3}
    load = "2min"
    persist = "3min"                   # asynchronous checkpoints: the background write
    priority = 1
    submit = "0s"
    time_limit = "7d"
    min_gpus = 512                     # elastic: with reconfigure and scaling
    reconfigure = "2min"
    scaling = 1.0
    checkpoint_bytes = 1.0e12          # for a fleet with storage_bandwidth
    failures = {law = "weibull", shape = 0.7, scale = "8h"}   # this job's own law

    [[jobs.tiers]]                     # checkpoint tiers of the job above
    interval = "10min"
    save = "5s"
    load = "1min"
    replication = 1

    [[jobs]]
    name = "small"
    count = 64                         # 64 such jobs (named small-0 .. small-63)
    submit_every = "3h"                # the k-th is submitted at submit + k x 3 h
    gpus = 16
    work = "12h"
    checkpoint_interval = "1h"

    [failures]                         # the job-level law of every job without its own
    law = "exponential"                # ("none": no job-level failures at all)
    mean = "8h"

    [fleet]                            # without it: replacements always available
    nodes = 136                        # required
    gpus_per_node = 8
    spares = 2
    cold_spares = 2
    cold_spare_delay = "30min"
    lend_spares = false
    lemon_fraction = 0.05
    lemon_factor = 20.0
    node_start = "stationary"          # or "fresh"
    node_clock = "wall"                # or "busy"
    storage_bandwidth = 2.0e10         # bytes per second
    node_failures = {law = "exponential", mean = "150d"}
    # or a recorded trace: {node_events = "trace.csv", model = {...}, format = "csv"}
    rate_windows = [{start = "20d", end = "35d", factor = 2.0}]     # end may be "inf"
    maintenance = [{start = "10d", duration = "4h", nodes = "all"}]  # or [0, 1, 5], "0-15"

    [fleet.repair]                     # a law (repair = "1h"), or a pipeline:
    misdiagnosis = 0.05
    stages = [
        {duration = "10min", escalate = 0.3, fix = 0.2},
        {duration = {law = "exponential", mean = "8h"}, escalate = 0.1, fix = 0.9},
        {duration = "5d", fix = 1.0},
    ]

    [[causes]]                         # or: causes = "llama3" (acesim.LLAMA3_CAUSES)
    name = "GPU"
    share = 0.6                        # required with name
    detect = "1min"
    node_down = true
    nodes = 1
    scope = "node"                     # or "process"
    slowdown = 0.0                     # in [0, 1): a slow (gray) failure

    [policy]
    replacement = "spares"             # spares, wait_repair, preempt_lower, requeue
    preemption = "checkpoint_aware"    # or immediate
    preemption_grace = "10min"
    replacement_delay = "5min"         # a law
    backfill = "easy"                  # or greedy
    on_failure = "mypolicies:on_failure"   # package.module:function (or a CompiledPolicy)
    place = "mypolicies:place"
    quarantine = {failures = 2, window = "7d", duration = "30d"}   # duration may be "inf"

A ``[workload]`` table instead of ``[[jobs]]`` names a generator of
:mod:`acesim.workloads` and its arguments (durations and laws as anywhere)::

    [workload]
    generator = "meta_like"
    days = 7
    gpus = 16384
    seed = 0
    checkpoint_interval = "1h"

**Durations** are numbers of seconds or strings with units
(:func:`acesim.units.parse_duration`: ``"45s"``, ``"30min"``, ``"7.9h"``,
``"2d"``, ``"1h30min"``, ``"1h 30min"``; units in any case, each at most
once, the largest first); ``"inf"`` (or TOML's ``inf``) where "never" makes
sense (``horizon``, a rate window's ``end``, a quarantine's ``window`` and
``duration``).

**Laws** (wherever a Distribution is taken: failures, init, save, load,
persist, reconfigure, repair, detect, node_failures, cold_spare_delay,
replacement_delay, a tier's save and load) are a duration (a
:class:`~acesim.Constant`) or a table naming the law and its constructor's
parameters (durations where they are times):

- ``{law = "constant", value = "1min"}``, ``{law = "exponential", mean = "8h"}``
- ``{law = "weibull", shape = 0.7, scale = "8h"}``, ``{law = "gamma", shape = 2.0, scale = "4h"}``
- ``{law = "lognormal", mu = 8.0, sigma = 1.0}`` (of log seconds)
- ``{law = "mixture", components = [{weight = 0.9, law = "exponential", mean = "5d"},
  {weight = 0.1, law = "exponential", mean = "20min"}]}``: each component is a
  law table with its ``weight``
- ``{law = "scale_aware", base = {...}, ref_gpus = 18688, exponent = 1.0}``
- ``{law = "empirical", csv = "gaps.csv", column = "inter_failure_s"}``, or
  ``samples = [...]``; with a csv: ``where = {kind = "checkpoint_load"}`` keeps
  the rows whose columns hold those values, ``skip_missing = true`` (default)
  skips empty cells; ``column`` may be a 0-based index (default 0)
- ``{law = "block_bootstrap", csv = "gaps.csv", column = "...", block = 20}``
  (or ``sequence = [...]``), ``{law = "replay", times = [...]}`` (or a csv)
- ``{law = "meta_scale", mttf_1024 = "7.9h", exponent = 1.0}``
  (:func:`acesim.meta_scale_model`), ``{law = "node_rate",
  failures_per_node_day = 6.5e-3, gpus_per_node = 8}``
  (:func:`acesim.node_rate_model`), ``{law = "gang", base = {...}, units = 1024}``
  (:func:`acesim.gang`)
- ``{law = "never"}`` (:class:`acesim.Never`): a failure law that never
  fires, where a failure law is (``failures``, a job's ``failures``,
  ``node_failures``, a trace's ``model``); ``node_failures = {law = "never"}``
  switches failures off
- ``{history = "sacct.txt", by = "node", family = "weibull"}``: a history file
  (sacct ``--parsable2``, an event log, or a file of ``../shared/data``, read
  as ``acesim fit`` reads it) fitted by :meth:`acesim.history.History.fit`;
  its best law (or ``family``'s); ``by``: ``"job"``, ``"node"``, ``"cause"``
  (with ``cause = "..."``) or ``"system"``.

**Paths** (``csv``, ``history``, ``node_events``) are relative to the file
that names them (the scenario, or a sweep file for its axes' values).
``on_failure`` / ``place`` name Python code, which runs: **run scenarios you
trust**. A module beside the scenario file (``mypolicies.py``, or a package
``mypolicies/``) is loaded from that file, under a name of its own: two
scenarios with different ``mypolicies.py`` each get their own, nothing is
added to ``sys.path``, and the callback is named by (file, SHA-256,
attribute) in provenance and pickles (a process that loads it again refuses
a file that changed since). Its folder is not put on ``sys.path``: code in
several files is a package beside the scenario (``mypolicies/__init__.py``,
``on_failure = "mypolicies.rules:decide"``, relative imports inside). Any
other module is imported as usual.

**Failures**: without ``failures`` the scenario leaves ``simulate``'s default
(:func:`acesim.meta_scale_model` without node-level failures, none with
them). Jobs with their own ``failures`` make it one law per job: the job's,
else the scenario's, else that default. ``"none"`` (for the scenario or a
job): no job-level failures.

A ``[sensitivity]`` table holds what ``acesim sensitivity`` varies
(:mod:`acesim.sensitivity.spec`); running the scenario ignores it.

**Jobs**: a scenario without ``[[jobs]]`` or ``[workload]`` (a fitted model,
as ``acesim fit --scenario`` writes) loads, dumps and serves as a sweep's
base; running it (:meth:`Scenario.simulate_kwargs`, :meth:`Scenario.run`)
raises a :class:`ScenarioError` saying jobs are missing.

Errors
======

Every problem is a :class:`ScenarioError` (a ``ValueError``) naming the file,
the key as a dotted path (``jobs[2].work``) and its line:
``flagship.toml:14: jobs[2].work: work must be > 0, got -3600.0``. That
covers invalid TOML, unknown keys (with a did-you-mean), wrong types, bad
units, missing files and the library's own validation (re-raised with the
key the message names).
"""

from __future__ import annotations

import copy
import datetime as _dt
import importlib
import inspect
import itertools
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from . import _atomic, _toml
from ._beside import beside_file, load_beside
from ._toml import KeyPath, Locator, format_path
from ._validation import MAX_SECONDS, NO_SUCH_FILE, input_file_problem
from ._vocabulary import LAW_CLASSES, RECORDS, Declaration, Field, law_fields
from ._vocabulary import LAWS as VOCABULARY_LAWS
from ._vocabulary import WORKLOADS as VOCABULARY_WORKLOADS
from .analytic import meta_scale_model
from .compiled import CompiledPolicy
from .distributions import (
    BlockBootstrap,
    Constant,
    Distribution,
    Empirical,
    Mixture,
    Replay,
    _read_csv_column,
)
from .distributions import _did_you_mean as _suggest
from .errors import NoProgressError
from .fleet import LLAMA3_CAUSES, Cause, Fleet
from .job import INTERVAL_RULES, Job, JobArray, interval_rule
from .policy import Policy
from .repair import Repair
from .simulation import (
    MAX_JOBS,
    SimulationResult,
    _max_stalled_failures,
    _run_options,
    _threads,
    simulate,
)
from .units import parse_duration

__all__ = [
    "LAWS",
    "RUN_KEYS",
    "GridPoint",
    "Scenario",
    "ScenarioError",
    "ScenarioGrid",
    "dump_scenario",
    "law_spec",
    "load_scenario",
    "load_sweep",
]

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class ScenarioError(ValueError):
    """A problem in a scenario (or sweep) file: ``file``, ``line`` and
    ``key`` (a dotted path such as ``jobs[2].work``) say where, each None
    when unknown; ``reason`` says what. ``str()`` is one line:
    ``file:line: key: reason``."""

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        self.reason = " ".join(str(reason).split())
        self.file = file
        self.key = key or None
        self.line = line
        super().__init__(self._text())

    def _text(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [p for p in (where, self.key) if p]
        return ": ".join([*parts, self.reason])

    def __reduce__(self) -> Any:
        return (_rebuild_error, (self.reason, self.file, self.key, self.line))


def _rebuild_error(reason: str, file: str | None, key: str | None, line: int | None) -> Any:
    return ScenarioError(reason, file=file, key=key, line=line)


# ---------------------------------------------------------------------------
# Where values come from
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """A document values come from: its name in messages, the lines of its
    keys, the folder its relative paths start from, and where the values
    sit in it (``prefix``: ``("base",)`` for a sweep's inline base)."""

    name: str | None
    locator: Locator | None
    folder: Path
    prefix: KeyPath = ()


@dataclass(frozen=True)
class _Override:
    """Values set at ``target`` (a path in the scenario) that came from
    ``source`` at ``at`` (a path in that document)."""

    target: KeyPath
    source: _Source
    at: KeyPath


class _Places:
    """Maps a path of the scenario to the file, line and key to report."""

    def __init__(self, root: _Source, overrides: Sequence[_Override] = ()) -> None:
        self.root = root
        self.overrides = tuple(overrides)

    def origin(self, path: KeyPath) -> tuple[_Source, KeyPath]:
        best: _Override | None = None
        for o in self.overrides:
            if path[: len(o.target)] == o.target and (
                best is None or len(o.target) >= len(best.target)
            ):
                best = o
        if best is not None:
            return best.source, best.at + path[len(best.target) :]
        at = self.root.prefix + path
        if path and (self.root.locator is None or at not in self.root.locator.lines):
            # A table the root does not have, made by a value set below it.
            for o in self.overrides:
                if o.target[: len(path)] == path:
                    return o.source, o.at
        return self.root, at

    def error(self, path: KeyPath, reason: str) -> ScenarioError:
        source, at = self.origin(path)
        line = source.locator.line(at) if source.locator is not None else None
        return ScenarioError(reason, file=source.name, key=format_path(at), line=line)

    def folder(self, path: KeyPath) -> Path:
        return self.origin(path)[0].folder


# ---------------------------------------------------------------------------
# Value checks
# ---------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, _dt.date | _dt.time):
        return "a date or time"
    return type(value).__name__


_INF_WORDS = ("inf", "infinity", "never")

#: A library message's leading parameter: ``min_gpus (600) must ...``,
#: ``rate_windows[0]: end ...``, ``tiers[1].interval ...``.
_LEADING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_]*)*)")
_PART = re.compile(r"\[(\d+)\]|\.([A-Za-z_][A-Za-z0-9_]*)")


def _message_path(message: str) -> KeyPath:
    """The key path a library message starts with (empty when none)."""
    m = _LEADING.match(message)
    if m is None:
        return ()
    parts: list[str | int] = [m.group(1)]
    for index, name in _PART.findall(m.group(2)):
        parts.append(int(index) if index else name)
    return tuple(parts)


_T = TypeVar("_T")


class _Checks:
    """The type checks every table builder uses; each error names the key."""

    places: _Places

    def error(self, path: KeyPath, reason: str) -> ScenarioError:
        return self.places.error(path, reason)

    def table(
        self,
        path: KeyPath,
        value: Any,
        allowed: Sequence[str],
        required: Sequence[str] = (),
        what: str = "",
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"must be a table, got {_kind(value)}")
        for key in value:
            if key not in allowed:
                where = f" in {format_path(path)}" if path else ""
                raise self.error(
                    (*path, key),
                    f"unknown key {key!r}{where}{_suggest(key, allowed)}; "
                    f"the keys are {', '.join(allowed)}",
                )
        for key in required:
            if key not in value:
                need = f" ({what} needs {', '.join(required)})" if what else ""
                raise self.error((*path, key), f"missing key {key!r}{need}")
        return value

    def array(self, path: KeyPath, value: Any, of_tables: bool = False) -> list[Any]:
        if not isinstance(value, list):
            shape = "an array of tables" if of_tables else "an array"
            raise self.error(path, f"must be {shape}, got {_kind(value)}")
        if of_tables:
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    raise self.error((*path, i), f"must be a table, got {_kind(item)}")
        return value

    def integer(self, path: KeyPath, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"must be an integer, got {_kind(value)}")
        return value

    def number(self, path: KeyPath, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"must be a number, got {_kind(value)}")
        return float(value)

    def boolean(self, path: KeyPath, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"must be true or false, got {_kind(value)}")
        return value

    def string(self, path: KeyPath, value: Any) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be a string, got {_kind(value)}")
        return value

    def choice(self, path: KeyPath, value: Any, options: Sequence[str]) -> str:
        text = self.string(path, value)
        if text not in options:
            raise self.error(
                path, f"must be one of {', '.join(options)}; got {text!r}{_suggest(text, options)}"
            )
        return text

    def duration(self, path: KeyPath, value: Any, allow_inf: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.error(
                path,
                "must be a duration (a number of seconds or a string such as '30min'), "
                f"got {_kind(value)}",
            )
        if allow_inf and (
            (isinstance(value, float) and value == math.inf)
            or (isinstance(value, str) and value.strip().lower() in _INF_WORDS)
        ):
            return math.inf
        names = [p for p in path if isinstance(p, str)]
        try:
            return parse_duration(value, names[-1] if names else "duration")
        except ValueError as exc:
            hint = " ('inf' for none)" if allow_inf else ""
            raise self.error(path, f"{exc}{hint}") from None

    def call(self, path: KeyPath, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)``, its TypeError or ValueError re-raised at
        the key its message names (a key of ``kwargs``), else at ``path``."""
        try:
            return fn(*args, **kwargs)
        except ScenarioError:
            raise
        except (TypeError, ValueError) as exc:
            message = str(exc)
            named = _message_path(message)
            where = path
            if named and (named[0] in kwargs or named[0] in _parameters(fn)):
                where = (*path, *named)
            raise self.error(where, message) from None


def _parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The parameter names of ``fn`` (none when it has no signature)."""
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


# ---------------------------------------------------------------------------
# Laws
# ---------------------------------------------------------------------------

#: The law names a law table's ``law`` key takes (the families of
#: :data:`acesim._vocabulary.LAWS`).
LAWS = tuple(VOCABULARY_LAWS)

_HISTORY_KEYS = ("history", "by", "family", "cause")
_HISTORY_BY = ("job", "node", "cause", "system")
_FAMILIES = ("exponential", "weibull", "lognormal", "gamma")
_SAMPLE_KEYS = ("csv", "column", "where", "skip_missing")

_HISTORIES: dict[tuple[str, int, int], Any] = {}
_FITS: dict[tuple[Any, ...], Any] = {}
_CACHE = 16


def read_history_file(path: str | os.PathLike[str]) -> Any:
    """A history file by what it holds: a shared-data file by its name, a
    sacct ``--parsable2`` file by its header, else an event log (the reader
    ``acesim fit`` uses)."""
    from . import history

    file = Path(path)
    problem = input_file_problem(file)
    if problem == NO_SUCH_FILE:
        raise ValueError(f"file: {os.fspath(path)} does not exist")
    if problem is not None:
        raise ValueError(f"file: {os.fspath(path)} {problem}, not a history file")
    for name, (filename, _) in history.SHARED_DATA.items():
        if file.name == filename:
            return history.read_shared(name, file.parent)
    with file.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    if "|" in first and "JobID" in first:
        return history.read_sacct(file)
    return history.read_events(file)


def _cached(cache: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    if key not in cache:
        if len(cache) >= _CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = make()
    return cache[key]


class _Builder(_Checks):
    """Builds the ``simulate`` arguments of a scenario's tables, checking
    every value; records the files it read (``paths``)."""

    def __init__(self, places: _Places) -> None:
        self.places = places
        self.paths: dict[KeyPath, Path] = {}

    # -- files ----------------------------------------------------------------

    def file(self, path: KeyPath, value: Any) -> Path:
        text = self.string(path, value)
        folder = self.places.folder(path)
        resolved = (folder / Path(text).expanduser()).resolve()
        problem = input_file_problem(resolved)
        if problem == NO_SUCH_FILE:
            raise self.error(path, f"no such file: {resolved}")
        if problem is not None:
            raise self.error(path, f"{resolved} {problem}, not a file")
        self.paths[path] = resolved
        return resolved

    # -- laws -----------------------------------------------------------------

    def law(self, path: KeyPath, value: Any) -> Distribution:
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            try:
                return Constant(self.duration(path, value))
            except ScenarioError as exc:
                raise ScenarioError(
                    exc.reason + " (a law is a duration, for a constant, or a table such as "
                    "{law = 'exponential', mean = '8h'})",
                    file=exc.file,
                    key=exc.key,
                    line=exc.line,
                ) from None
        if not isinstance(value, dict):
            raise self.error(
                path,
                "must be a law: a duration or a table such as {law = 'exponential', "
                f"mean = '8h'}}, got {_kind(value)}",
            )
        if "history" in value:
            return self._history(path, value)
        if "law" not in value:
            raise self.error(
                path,
                f"a law table needs law = one of {', '.join(LAWS)} "
                "(or history = 'file' for a fitted one)",
            )
        name = self.choice((*path, "law"), value["law"], LAWS)
        build: Callable[[KeyPath, dict[str, Any]], Distribution] | None = getattr(
            self, f"_law_{name}", None
        )
        if build is None:  # a law table of its declared keys
            return self._declared_law(path, value, VOCABULARY_LAWS[name])
        return build(path, value)

    def _keys(self, path: KeyPath, value: dict[str, Any], *keys: str, required: int = 0) -> None:
        """Only ``law`` and ``keys``; the first ``required`` of them needed."""
        what = f"law = {value.get('law')!r}" if "law" in value else ""
        self.table(path, value, ("law", *keys), keys[:required], what=what)

    def _declared_law(self, path: KeyPath, v: dict[str, Any], d: Declaration) -> Distribution:
        """A law table of family ``d``: its declared keys, each read by its kind."""
        self.table(path, v, ("law", *d.keys), d.required, what=f"law = {v.get('law')!r}")
        kwargs = {f.parameter: self.field((*path, f.name), f, v[f.name]) for f in d.fields
                  if f.name in v}  # fmt: skip
        law: Distribution = self.call(path, d.build, **kwargs)
        return law

    def field(self, path: KeyPath, f: Field, value: Any) -> Any:
        """The value of field ``f`` at ``path``, read and checked by its kind."""
        kind = f.kind
        if kind == "integer":
            return self.integer(path, value)
        if kind == "number":
            return self.number(path, value)
        if kind == "boolean":
            return self.boolean(path, value)
        if kind == "string":
            return self.string(path, value)
        if kind == "choice":
            return self.choice(path, value, f.choices)
        if kind == "enum":
            names = tuple(m.name.lower() for m in f.enum)
            return f.enum[self.choice(path, value, names).upper()]
        if kind in ("duration", "duration_inf"):
            return self.duration(path, value, allow_inf=kind == "duration_inf")
        if kind == "law":
            return self.law(path, value)
        if kind == "record":
            return self.record(path, RECORDS[f.of], value)
        if kind == "records":
            items = self.array(path, value, of_tables=True)
            if f.min_items and not items:
                raise self.error(path, "must not be empty")
            return [self.record((*path, i), RECORDS[f.of], x) for i, x in enumerate(items)]
        if kind == "code":
            return self._import(path, value)
        reader = getattr(self, f"_{kind}", None)
        if reader is None:
            raise self.error(path, f"a scenario file has no {kind} value here")
        return reader(path, value)

    def _import(self, path: KeyPath, value: Any) -> Any:
        """A callable named ``"module:function"`` (a scenario's tables name code)."""
        raise self.error(path, "names code, which only a scenario's tables take")

    def record(self, path: KeyPath, d: Declaration, value: Any, **given: Any) -> Any:
        """A record of declaration ``d`` (a table of its keys), built;
        ``given``: fields already read (by key)."""
        table = self.table(path, value, d.keys, d.required, what=_WHAT.get(d.name, ""))
        kwargs = {k: given[k] for k in given}
        for f in d.fields:
            if f.name in table and f.name not in given:
                kwargs[f.name] = self.field((*path, f.name), f, table[f.name])
        return self.call(path, d.build, **d.kwargs(kwargs))

    def _law_mixture(self, path: KeyPath, v: dict[str, Any]) -> Distribution:
        self._keys(path, v, *law_fields("mixture"), required=1)
        where = (*path, "components")
        items = self.array(where, v["components"], of_tables=True)
        if not items:
            raise self.error(where, "must not be empty")
        pairs: list[tuple[float, Distribution]] = []
        for i, item in enumerate(items):
            at = (*where, i)
            if "weight" not in item:
                raise self.error(at, "missing key 'weight' (each component is a law with a weight)")
            weight = self.number((*at, "weight"), item["weight"])
            rest = {k: x for k, x in item.items() if k != "weight"}
            pairs.append((weight, self.law(at, rest)))
        return self.call(path, Mixture, components=pairs)

    def _values(self, path: KeyPath, v: dict[str, Any], inline: str, inf: bool) -> list[float]:
        """A sample law's values: ``inline`` (an array of durations) or a csv column."""
        if (inline in v) == ("csv" in v):
            raise self.error(path, f"give either {inline} = [...] or csv = 'file' (not both)")
        if inline in v:
            where = (*path, inline)
            items = self.array(where, v[inline])
            if not items:
                raise self.error(where, "must not be empty")
            return [self.duration((*where, i), x, allow_inf=inf) for i, x in enumerate(items)]
        for key in ("column", "where", "skip_missing"):
            if key in v and "csv" not in v:
                raise self.error((*path, key), f"{key} goes with csv = 'file'")
        file = self.file((*path, "csv"), v["csv"])
        column: str | int = 0
        if "column" in v:
            c = v["column"]
            if isinstance(c, bool) or not isinstance(c, str | int):
                raise self.error((*path, "column"), f"must be a name or an index, got {_kind(c)}")
            column = c
        where_: dict[str, str] = {}
        if "where" in v:
            table = v["where"]
            if not isinstance(table, dict):
                raise self.error((*path, "where"), f"must be a table, got {_kind(table)}")
            for k, x in table.items():
                if isinstance(x, dict | list):
                    raise self.error((*path, "where", k), f"must be a value, got {_kind(x)}")
                where_[k] = _cell_text(x)
        skip = True
        if "skip_missing" in v:
            skip = self.boolean((*path, "skip_missing"), v["skip_missing"])
        try:
            return _csv_column(file, column, where_, skip)
        except ValueError as exc:
            raise self.error((*path, "csv"), f"{file.name}: {exc}") from None

    def _law_empirical(self, path: KeyPath, v: dict[str, Any]) -> Distribution:
        self._keys(path, v, *law_fields("empirical"), *_SAMPLE_KEYS)
        samples = self._values(path, v, "samples", inf=False)
        return self.call(path, Empirical, samples=samples)

    def _law_block_bootstrap(self, path: KeyPath, v: dict[str, Any]) -> Distribution:
        # the sequence inline or from a csv file; the block length always
        keys = ("law", *law_fields("block_bootstrap"), *_SAMPLE_KEYS)
        self.table(path, v, keys, ("block",), what="law = 'block_bootstrap'")
        sequence = self._values(path, v, "sequence", inf=False)
        block = self.integer((*path, "block"), v["block"])
        return self.call(path, BlockBootstrap, sequence=sequence, block=block)

    def _law_replay(self, path: KeyPath, v: dict[str, Any]) -> Distribution:
        self._keys(path, v, *law_fields("replay"), *_SAMPLE_KEYS)
        times = self._values(path, v, "times", inf=True)
        return self.call(path, Replay, times=times)

    def _history(self, path: KeyPath, v: dict[str, Any]) -> Distribution:
        self.table(path, v, _HISTORY_KEYS, ("history",))
        file = self.file((*path, "history"), v["history"])
        by = self.choice((*path, "by"), v["by"], _HISTORY_BY) if "by" in v else None
        family = self.choice((*path, "family"), v["family"], _FAMILIES) if "family" in v else None
        cause = self.string((*path, "cause"), v["cause"]) if "cause" in v else None
        stat = file.stat()
        key = (str(file), stat.st_mtime_ns, stat.st_size)
        try:
            h = _cached(_HISTORIES, key, lambda: read_history_file(file))
        except (TypeError, ValueError) as exc:
            raise self.error((*path, "history"), str(exc)) from None
        if not hasattr(h, "fit"):
            raise self.error((*path, "history"), f"{file.name} is a summary, not a history")

        def fit() -> Any:
            return h.fit(by=by, cause=cause) if cause is not None else h.fit(by=by)

        try:
            fitted = _cached(_FITS, (*key, by, cause), fit)
        except (TypeError, ValueError) as exc:
            raise self.error((*path, "by" if "by" in v else "history"), str(exc)) from None
        if family is None:
            law: Distribution = fitted.law
            return law
        try:
            chosen: Distribution = fitted[family].law
        except KeyError as exc:
            raise self.error((*path, "family"), str(exc.args[0])) from None
        return chosen


def _cell_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _csv_column(
    path: Path, column: str | int, where: Mapping[str, str], skip_missing: bool
) -> list[float]:
    """The numbers of one column of a CSV file (the reader of
    :meth:`acesim.Empirical.from_csv`, with its ``where`` filter)."""
    return _read_csv_column(path, column, skip_missing=skip_missing, where=where)


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

#: The keys of ``[run]``: labels, then ``simulate``'s run options.
RUN_KEYS = (
    "name",
    "description",
    "replicas",
    "seed",
    "horizon",
    "threads",
    "record_events",
    "gpus_per_node",
    "max_events",
    "check_invariants",
    "first_replica",
    "max_stalled_failures",
)
#: ``sensitivity``: the table ``acesim sensitivity`` reads (the others ignore it).
_TOP_KEYS = ("run", "jobs", "workload", "failures", "fleet", "causes", "policy", "sensitivity")
#: A [[jobs]] table's keys: a Job's declared fields, then how many copies
#: (``count``, submitted ``submit_every`` apart) and their own failure law.
_JOB_KEYS = (*RECORDS["job"].keys, "count", "submit_every", "failures")
_JOB_LAWS = tuple(f.name for f in RECORDS["job"].fields if f.kind == "law")
#: The keys whose value is a law (or, for ``repair``, a pipeline).
_LAW_KEYS = frozenset(
    (
        "failures",
        *(
            f.name
            for d in RECORDS.values()
            if d.name != "component"
            for f in d.fields
            if f.kind in ("law", "repair", "node_failures")
        ),
    )
)
#: What a record is called where a key it needs is missing.
_WHAT = {
    "job": "a [[jobs]] table",
    "tier": "a tier",
    "fleet": "a [fleet]",
    "stage": "a stage",
    "rate_window": "a rate window",
    "maintenance_window": "a window",
    "cause": "a [[causes]] table",
}
_CAUSE_SETS: dict[str, tuple[Cause, ...]] = {"llama3": LLAMA3_CAUSES}

#: Per generator of :mod:`acesim.workloads`, the kind of each argument
#: (from :data:`acesim._vocabulary.WORKLOADS`).
WORKLOADS: dict[str, dict[str, str]] = {
    name: {f.name: f.kind for f in d.fields} for name, d in VOCABULARY_WORKLOADS.items()
}


@dataclass
class _Built:
    """What a scenario's tables build to."""

    kwargs: dict[str, Any]
    jobs: list[Job] | JobArray | None
    #: per [[jobs]] table: its label and how many jobs it made
    entries: list[tuple[str, int]]
    paths: dict[KeyPath, Path]


class _ScenarioBuilder(_Builder):
    def build(self, spec: Any) -> _Built:
        doc = self.table((), spec, _TOP_KEYS)
        kwargs: dict[str, Any] = {}
        if "run" in doc:
            kwargs.update(self._run(("run",), doc["run"]))
        if "jobs" in doc and "workload" in doc:
            raise self.error(("workload",), "give either [[jobs]] tables or a [workload], not both")
        jobs: list[Job] | JobArray | None = None
        entries: list[tuple[str, int]] = []
        own_failures: list[Distribution | str | None] = []
        if "jobs" in doc:
            jobs, entries, own_failures = self._jobs(("jobs",), doc["jobs"])
        elif "workload" in doc:
            jobs = self._workload(("workload",), doc["workload"])
        fleet = self._fleet(("fleet",), doc["fleet"]) if "fleet" in doc else None
        if fleet is not None:
            kwargs["fleet"] = fleet
        if "causes" in doc:
            kwargs["causes"] = self._causes(("causes",), doc["causes"])
        if "policy" in doc:
            kwargs["policy"] = self._policy(("policy",), doc["policy"])
        failures = (
            self._failures(("failures",), doc["failures"]) if "failures" in doc else "default"
        )
        if jobs is not None:
            laws = self._failure_laws(failures, own_failures, len(jobs), fleet)
            if laws is not None:
                kwargs["failures"] = laws
        elif failures != "default":
            kwargs["failures"] = None if failures == "none" else failures
        return _Built(kwargs, jobs, entries, self.paths)

    # -- [run] ----------------------------------------------------------------

    def _run(self, path: KeyPath, value: Any) -> dict[str, Any]:
        run = self.table(path, value, RUN_KEYS)
        out: dict[str, Any] = {}
        for key in ("name", "description"):
            if key in run:
                self.string((*path, key), run[key])
        integers = ("replicas", "seed", "threads", "gpus_per_node", "max_events", "first_replica")
        for key in (*integers, "max_stalled_failures"):
            if key in run:
                out[key] = self.integer((*path, key), run[key])
        for key in ("record_events", "check_invariants"):
            if key in run:
                out[key] = self.boolean((*path, key), run[key])
        if "horizon" in run:
            out["horizon"] = self.duration((*path, "horizon"), run["horizon"], allow_inf=True)
        # The library's own checks, now rather than when the scenario runs.
        self.call(
            path,
            _run_options,
            replicas=out.get("replicas", 1),
            seed=out.get("seed", 0),
            first_replica=out.get("first_replica", 0),
            horizon=out.get("horizon", math.inf),
        )
        if "threads" in out:
            self.call(path, _threads, threads=out["threads"])
        if "gpus_per_node" in out and not 1 <= out["gpus_per_node"] <= 2**16:
            raise self.error((*path, "gpus_per_node"), "gpus_per_node must be in 1 .. 65536")
        if "max_events" in out and out["max_events"] < 1:
            raise self.error((*path, "max_events"), "max_events must be >= 1")
        if "max_stalled_failures" in out:
            self.call((*path, "max_stalled_failures"), _max_stalled_failures,
                      value=out["max_stalled_failures"])  # fmt: skip
        return out

    # -- jobs -----------------------------------------------------------------

    def _jobs(
        self, path: KeyPath, value: Any
    ) -> tuple[list[Job], list[tuple[str, int]], list[Distribution | str | None]]:
        if isinstance(value, dict):
            raise self.error(path, "must be an array of tables ([[jobs]]), got a table ([jobs])")
        items = self.array(path, value, of_tables=True)
        if not items:
            raise self.error(path, "must not be empty")
        jobs: list[Job] = []
        entries: list[tuple[str, int]] = []
        failures: list[Distribution | str | None] = []
        for i, item in enumerate(items):
            made, label, law = self._job((*path, i), item, i, MAX_JOBS - len(jobs))
            jobs.extend(made)
            entries.append((label, len(made)))
            failures.extend([law] * len(made))
        return jobs, entries, failures

    def _job(
        self, path: KeyPath, value: dict[str, Any], index: int, room: int = MAX_JOBS
    ) -> tuple[list[Job], str, Distribution | str | None]:
        """The jobs of one [[jobs]] table; ``room``: how many more jobs the
        scenario may hold (simulate's limit less the tables before)."""
        declared = RECORDS["job"]
        job = self.table(path, value, _JOB_KEYS, declared.required, what=_WHAT["job"])
        kwargs: dict[str, Any] = {
            f.parameter: self.field((*path, f.name), f, job[f.name])
            for f in declared.fields
            if f.name in job
        }
        name: str | None = kwargs.get("name")
        count = 1
        if "count" in job:
            count = self.integer((*path, "count"), job["count"])
            if count < 1:
                raise self.error((*path, "count"), f"count must be >= 1, got {count}")
            if count > room:
                before = f" with the {MAX_JOBS - room:,} before it" if room < MAX_JOBS else ""
                raise self.error(
                    (*path, "count"),
                    f"count must be at most {room:,}: a simulation holds at most "
                    f"{MAX_JOBS:,} (2**24) jobs{before}, got {count:,}",
                )
        every = (
            self.duration((*path, "submit_every"), job["submit_every"])
            if "submit_every" in job
            else 0.0
        )
        law: Distribution | str | None = "inherit"
        if "failures" in job:
            law = self._failures((*path, "failures"), job["failures"])
        first: Job = self.call(path, Job, **kwargs)
        made = [first]
        last = first.submit + (count - 1) * every
        if count > 1 and last > MAX_SECONDS:
            raise self.error(
                (*path, "submit_every"),
                f"the last of the {count:,} jobs would be submitted at {last:g} s, beyond "
                f"the {MAX_SECONDS:g} s limit on times; use a smaller submit_every or count",
            )
        if count > 1:
            made = []
            for k in range(count):
                copy_ = {**kwargs, "submit": first.submit + k * every}
                if name is not None:
                    copy_["name"] = f"{name}-{k}"
                made.append(Job(**copy_))
        label = name if name is not None else f"jobs[{index}]"
        return made, label, law

    def _interval(self, path: KeyPath, value: Any) -> float | str:
        rule = interval_rule(value) if isinstance(value, str) else None
        if rule is not None:
            return rule
        try:
            return self.duration(path, value)
        except ScenarioError as exc:
            raise ScenarioError(
                f"{exc.reason}, or one of {', '.join(INTERVAL_RULES)}",
                file=exc.file,
                key=exc.key,
                line=exc.line,
            ) from None

    def _workload(self, path: KeyPath, value: Any) -> JobArray:
        if not isinstance(value, dict):
            raise self.error(path, f"must be a table, got {_kind(value)}")
        if "generator" not in value:
            raise self.error(
                (*path, "generator"),
                f"missing key 'generator' (one of {', '.join(WORKLOADS)})",
            )
        name = self.choice((*path, "generator"), value["generator"], tuple(WORKLOADS))
        declared = VOCABULARY_WORKLOADS[name]
        table = self.table(path, value, ("generator", *declared.keys))
        kwargs = {
            f.parameter: self.field((*path, f.name), f, table[f.name])
            for f in declared.fields
            if f.name in table
        }
        jobs: JobArray = self.call(path, declared.build, **kwargs)
        return jobs

    # -- failures -------------------------------------------------------------

    def _failures(self, path: KeyPath, value: Any) -> Distribution | str:
        if isinstance(value, str) and value.strip().lower() == "none":
            return "none"
        return self.law(path, value)

    def _failure_laws(
        self,
        scenario: Distribution | str,
        own: list[Distribution | str | None],
        n_jobs: int,
        fleet: Fleet | None,
    ) -> Any:
        """The ``failures`` argument: one law, one per job, or None (leave
        simulate's default)."""
        if not any(isinstance(law, Distribution) or law == "none" for law in own):
            if scenario == "default":
                return None
            if scenario == "none":
                return [None] * n_jobs
            return scenario
        # simulate's default, for the jobs without a law of their own
        node_level = fleet is not None and fleet.node_failures is not None
        default: Distribution | None = None if node_level else meta_scale_model()
        inherited: Distribution | None = (
            default if scenario == "default" else None if scenario == "none" else scenario  # type: ignore[assignment]
        )
        out: list[Distribution | None] = []
        for law in own:
            if isinstance(law, Distribution):
                out.append(law)
            elif law == "none":
                out.append(None)
            else:
                out.append(inherited)
        return out

    # -- [fleet] --------------------------------------------------------------

    def _fleet(self, path: KeyPath, value: Any) -> Fleet:
        d = RECORDS["fleet"]
        fleet = self.table(path, value, d.keys, d.required, what=_WHAT["fleet"])
        nodes = self.integer((*path, "nodes"), fleet["nodes"])
        given: dict[str, Any] = {"nodes": nodes}
        if "node_failures" in fleet:
            given["node_failures"] = self._node_failures(
                (*path, "node_failures"), fleet["node_failures"], nodes
            )
        built: Fleet = self.record(path, d, fleet, **given)
        return built

    def _repair(self, path: KeyPath, value: Any) -> Distribution | Repair:
        if not (isinstance(value, dict) and "stages" in value):
            return self.law(path, value)
        repair: Repair = self.record(path, RECORDS["pipeline"], value)
        return repair

    def _node_failures(self, path: KeyPath, value: Any, nodes: int) -> Any:
        if not (isinstance(value, dict) and "node_events" in value):
            return self.law(path, value)
        from .exports import read_node_events

        table = self.table(path, value, ("node_events", "model", "format"))
        file = self.file((*path, "node_events"), table["node_events"])
        model = self.law((*path, "model"), table["model"]) if "model" in table else None
        fmt = (
            self.choice((*path, "format"), table["format"], ("csv", "jsonl"))
            if "format" in table
            else None
        )
        try:
            return read_node_events(file, nodes, model=model, format=fmt)
        except (TypeError, ValueError) as exc:
            raise self.error((*path, "node_events"), str(exc)) from None

    def _node_set(self, path: KeyPath, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text == "all":
                return "all"
            m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", text)
            if m is None:
                raise self.error(
                    path, f"must be 'all', an array of node ids or a range 'a-b', got {value!r}"
                )
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise self.error(path, f"the range {value!r} is empty")
            return list(range(lo, hi + 1))
        items = self.array(path, value)
        return [self.integer((*path, k), x) for k, x in enumerate(items)]

    # -- causes, policy -------------------------------------------------------

    def _causes(self, path: KeyPath, value: Any) -> Sequence[Cause]:
        if isinstance(value, str):
            name = self.choice(path, value, tuple(_CAUSE_SETS))
            return _CAUSE_SETS[name]
        items = self.array(path, value, of_tables=True)
        if not items:
            raise self.error(path, "must not be empty (leave causes out for none)")
        out = [self.record((*path, i), RECORDS["cause"], item) for i, item in enumerate(items)]
        total = sum(c.share for c in out)
        if total <= 0:
            raise self.error(path, "causes: shares must not all be zero")
        return out

    def _policy(self, path: KeyPath, value: Any) -> Policy:
        policy: Policy = self.record(path, RECORDS["policy"], value)
        return policy

    def _import(self, path: KeyPath, value: Any) -> Any:
        text = self.string(path, value)
        module_name, sep, attr = text.partition(":")
        if not sep or not module_name.strip() or not attr.strip():
            raise self.error(path, f"must be 'package.module:function', got {text!r}")
        module_name, attr = module_name.strip(), attr.strip()
        folder = self.places.folder(path).resolve()
        file = beside_file(folder, module_name)
        obj: Any
        if file is not None:
            # Beside the scenario: loaded from its file, named by path and SHA-256.
            try:
                found = load_beside(os.fspath(folder), module_name, attr, os.fspath(file))
            except AttributeError:
                raise self.error(path, f"{module_name!r} has no {attr!r}") from None
            except Exception as exc:
                raise self.error(path, f"cannot import {module_name!r}: {exc}") from None
            obj = found._target if isinstance(found._target, CompiledPolicy) else found
            target = found._target
        else:
            try:
                obj = importlib.import_module(module_name)
            except Exception as exc:
                raise self.error(path, f"cannot import {module_name!r}: {exc}") from None
            for part in attr.split("."):
                try:
                    obj = getattr(obj, part)
                except AttributeError:
                    raise self.error(path, f"{module_name!r} has no {attr!r}") from None
            target = obj
        if not (callable(target) or isinstance(target, CompiledPolicy)):
            raise self.error(path, f"{text!r} is not callable (got {type(target).__name__})")
        return obj


# ---------------------------------------------------------------------------
# Paths inside a scenario's dict
# ---------------------------------------------------------------------------

_AXIS = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)((?:\s*\[\s*\d+\s*\])*)\s*")


def parse_key(text: str) -> KeyPath:
    """``"jobs[0].checkpoint_interval"`` as ``("jobs", 0, "checkpoint_interval")``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a key must be a dotted path such as 'jobs[0].work', got {text!r}")
    out: list[str | int] = []
    for segment in text.split("."):
        m = _AXIS.fullmatch(segment)
        if m is None:
            raise ValueError(f"a key must be a dotted path such as 'jobs[0].work', got {text!r}")
        out.append(m.group(1))
        out.extend(int(i) for i in re.findall(r"\d+", m.group(2)))
    return tuple(out)


def _key_path(key: Any) -> KeyPath:
    """A key of :meth:`Scenario.with_values`: a dotted path or a tuple of
    table keys (str) and array indices (int)."""
    if isinstance(key, str):
        return parse_key(key)
    if isinstance(key, tuple) and all(
        isinstance(part, str) or (isinstance(part, int) and not isinstance(part, bool))
        for part in key
    ):
        return key
    raise TypeError(
        "a key must be a dotted path such as 'jobs[0].work' or a tuple of table keys "
        f"and indices, got {key!r}"
    )


def _set(doc: dict[str, Any], path: KeyPath, value: Any) -> None:
    """Set (or, for None, remove) ``path`` in ``doc``, making tables on the
    way; a ValueError names what is in the way."""
    node: Any = doc
    for k, part in enumerate(path[:-1]):
        nxt = path[k + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise ValueError(
                    f"{format_path(path[: k + 1])}: there is no element {part} "
                    f"(the array has {size})"
                )
            node = node[part]
            continue
        if not isinstance(node, dict):
            raise ValueError(f"{format_path(path[:k])} is not a table")
        if part not in node:
            if isinstance(nxt, int):
                raise ValueError(f"{format_path(path[: k + 1])}: there is no such array")
            node[part] = {}
        node = node[part]
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not 0 <= last < len(node):
            raise ValueError(f"{format_path(path)}: there is no such element")
        node[last] = value
        return
    if not isinstance(node, dict):
        raise ValueError(f"{format_path(path[:-1])} is not a table (it is {_kind(node)})")
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value


def _plain(value: Any, where: str) -> Any:
    """``value`` as plain TOML types (numpy scalars and tuples converted)."""
    if hasattr(value, "item") and not isinstance(value, dict | list | str):
        value = value.item()
    if isinstance(value, bool | int | float | str | _dt.date | _dt.time):
        return value  # TOML's types (no key takes a date: the checks say so)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    prefix = f"{where}: " if where else ""
    raise TypeError(
        f"{prefix}a scenario holds TOML values (tables, arrays, strings, numbers, booleans), "
        f"got {type(value).__name__}"
    )


# ---------------------------------------------------------------------------
# Scenario
# ---------------------------------------------------------------------------


def _source(path: Path | None, locator: Locator | None = None, prefix: KeyPath = ()) -> _Source:
    if path is None:
        return _Source(None, locator, Path.cwd(), prefix)
    return _Source(os.fspath(path), locator, path.resolve().parent, prefix)


class Scenario:
    """A validated scenario: its tables as plain TOML values
    (:meth:`to_dict`) and the ``simulate`` arguments they build
    (:meth:`simulate_kwargs`). Build one with :func:`load_scenario` or
    :meth:`from_dict`; see :mod:`acesim.scenario` for the format.

    Two scenarios are equal when their tables are, with the files they name
    resolved (the same model written in two places)."""

    __slots__ = ("_built", "_places", "_spec", "source")

    _spec: dict[str, Any]
    _places: _Places
    _built: _Built
    #: the file it was read from (None for a dict)
    source: Path | None

    def __init__(self) -> None:
        raise TypeError("use acesim.load_scenario(path) or Scenario.from_dict(d)")

    @classmethod
    def _make(cls, spec: Any, places: _Places, source: Path | None) -> Scenario:
        self = object.__new__(cls)
        if not isinstance(spec, Mapping):
            raise places.error((), f"a scenario is a table (a dict), got {_kind(spec)}")
        try:
            plain = _plain(spec, "scenario")
        except TypeError as exc:
            raise places.error((), str(exc)) from None
        self._spec = plain
        self._places = places
        self.source = source
        self._built = _ScenarioBuilder(places).build(plain)
        return self

    @classmethod
    def from_dict(
        cls, d: Mapping[str, Any], source: str | os.PathLike[str] | None = None
    ) -> Scenario:
        """A scenario from a dict shaped like the TOML file (the tables as
        dicts, ``[[jobs]]`` as a list of dicts, values as TOML would give
        them). ``source``: the file it stands for (named in errors; relative
        paths start from its folder), default none (paths from the current
        directory)."""
        path = None if source is None else Path(source)
        return cls._make(d, _Places(_source(path)), path)

    # -- views ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The scenario's tables as plain TOML values (a deep copy), as
        written (durations as given, paths relative to :attr:`source`)."""
        return copy.deepcopy(self._spec)

    @property
    def name(self) -> str | None:
        """``[run].name``."""
        value = self._spec.get("run", {}).get("name")
        return value if isinstance(value, str) else None

    @property
    def description(self) -> str | None:
        """``[run].description``."""
        value = self._spec.get("run", {}).get("description")
        return value if isinstance(value, str) else None

    @property
    def replicas(self) -> int:
        """The replicas it runs (``simulate``'s default 1 when not given)."""
        return int(self._built.kwargs.get("replicas", 1))

    @property
    def seed(self) -> int:
        """The seed it runs with (default 0)."""
        return int(self._built.kwargs.get("seed", 0))

    @property
    def has_jobs(self) -> bool:
        """Whether it has ``[[jobs]]`` or a ``[workload]`` (it can run)."""
        return self._built.jobs is not None

    @property
    def job_labels(self) -> list[tuple[str, int]]:
        """Per ``[[jobs]]`` table, its label (its name, else ``jobs[i]``) and
        how many jobs it makes, in job order (empty for a workload)."""
        return list(self._built.entries)

    def files(self) -> dict[str, Path]:
        """The files it reads, by key (``failures.csv``), resolved."""
        return {format_path(k): v for k, v in self._built.paths.items()}

    def simulate_kwargs(self) -> dict[str, Any]:
        """The :func:`acesim.simulate` keyword arguments (a new dict; the
        model objects are shared between calls). A ScenarioError for a
        scenario without jobs."""
        if self._built.jobs is None:
            raise self._places.error(
                (),
                "no jobs: add [[jobs]] tables (gpus, work, checkpoint_interval) or a "
                "[workload] table to run this scenario",
            )
        jobs = self._built.jobs
        kwargs = {"jobs": list(jobs) if isinstance(jobs, list) else jobs, **self._built.kwargs}
        if isinstance(kwargs.get("failures"), list):
            kwargs["failures"] = list(kwargs["failures"])
        return kwargs

    def law_at(self, key: Any) -> Distribution | Repair | None:
        """The law (or repair pipeline) the value at ``key`` builds
        (``"fleet.repair"``, ``"jobs[0].init"``, ``"causes[1].detect"``); for
        a key left out, the default law the built object uses there (a
        fleet's repair, a job's init); None when the key is not a law's key
        or has no law. The law's own errors as a ScenarioError at the key."""
        path = _key_path(key)
        names = [part for part in path if isinstance(part, str)]
        if not names or names[-1] not in _LAW_KEYS:
            return None
        value: Any = self._spec
        for part in path:
            if isinstance(part, int):
                if not isinstance(value, list) or not 0 <= part < len(value):
                    return self._default_law(path)
            elif not isinstance(value, dict) or part not in value:
                return self._default_law(path)
            value = value[part]
        builder = _ScenarioBuilder(self._places)
        if names[-1] == "repair":
            return builder._repair(path, value)
        return builder.law(path, value)

    def _default_law(self, path: KeyPath) -> Distribution | Repair | None:
        """The law the built objects hold at ``path`` (a key left out)."""
        kwargs = self._built.kwargs
        first, start = [], 0
        jobs = self._built.jobs
        for _, count in self._built.entries:
            first.append(jobs[start] if isinstance(jobs, list) else None)
            start += count
        node: Any = {
            "fleet": kwargs.get("fleet"),
            "policy": kwargs.get("policy"),
            "causes": kwargs.get("causes"),
            "jobs": first,
        }
        for k, part in enumerate(path):
            if isinstance(part, int):
                if not isinstance(node, list | tuple) or not 0 <= part < len(node):
                    return None
                node = node[part]
            elif k == 0:
                node = node.get(part)
            elif part in ("repair", "node_failures", "cold_spare_delay", "replacement_delay",
                          "detect", *_JOB_LAWS):  # fmt: skip
                node = getattr(node, part, None)
            else:
                return None
        return node if isinstance(node, Distribution | Repair) else None

    def with_values(self, values: Mapping[Any, Any], *, origin: str | None = None) -> Scenario:
        """A copy with the values at the given keys (dotted paths such as
        ``"run.replicas"`` or ``"jobs[0].checkpoint_interval"``, or key
        tuples) replaced (``None`` removes a key), validated again. Errors
        in those values name ``origin`` (default: this scenario's file)."""
        source = None if origin is None else _Source(origin, None, Path.cwd())
        if not isinstance(values, Mapping):
            raise TypeError(f"values must be a mapping of keys to values, got {_kind(values)}")
        todo = []
        for key, value in values.items():
            path = _key_path(key)
            todo.append((path, value, None if source is None else _Override(path, source, path)))
        return self._with(todo)

    def _with(self, todo: Sequence[tuple[KeyPath, Any, _Override | None]]) -> Scenario:
        spec = copy.deepcopy(self._spec)
        overrides = list(self._places.overrides)
        for path, value, override in todo:
            if override is not None:
                overrides = [o for o in overrides if o.target[: len(path)] != path]
                overrides.append(override)
            places = _Places(self._places.root, overrides)
            if not path:
                raise places.error((), "an empty key")
            try:
                _set(spec, path, None if value is None else _plain(value, ""))
            except (TypeError, ValueError) as exc:
                raise places.error(path, str(exc)) from None
        return Scenario._make(spec, _Places(self._places.root, overrides), self.source)

    def run(self, **overrides: Any) -> SimulationResult:
        """``simulate(**self.simulate_kwargs())``. ``overrides`` replace
        simulate arguments: ``[run]`` ones (``replicas``, ``seed``,
        ``horizon``, ...) through :meth:`with_values` (checked, and part of
        :meth:`to_dict`), the others (``jobs``, ``fleet``, ...) as given."""
        from .sweep import SIMULATE_ARGUMENTS

        run_keys: dict[KeyPath, Any] = {}
        objects: dict[str, Any] = {}
        for key, value in overrides.items():
            if key not in SIMULATE_ARGUMENTS:
                raise TypeError(
                    f"run() got an unexpected argument {key!r}{_suggest(key, SIMULATE_ARGUMENTS)}"
                )
            if key in RUN_KEYS:
                run_keys[("run", key)] = value
            else:
                objects[key] = value
        scenario = self.with_values(run_keys, origin="run()") if run_keys else self
        kwargs = {**scenario.simulate_kwargs(), **objects}
        try:
            res = simulate(**kwargs)
        except NoProgressError:
            raise  # the run's, not a key's
        except (TypeError, ValueError) as exc:
            raise scenario.simulate_error(exc) from None
        if objects:
            return res  # the scenario file no longer describes the run
        return res.with_provenance(scenario=scenario.to_dict(), source=scenario._source_name())

    def simulate_error(self, exc: BaseException) -> ScenarioError:
        """A TypeError or ValueError of ``simulate`` on this scenario as a
        ScenarioError at the key it names (``jobs[3].min_gpus ...`` names
        the ``[[jobs]]`` table that made job 3)."""
        message = str(exc)
        if isinstance(exc, ScenarioError):
            return exc
        named = _message_path(message)
        path: KeyPath = ()
        if len(named) >= 2 and named[0] == "jobs" and isinstance(named[1], int):
            table = self._job_table(named[1])
            if table is not None:
                path = ("jobs", table, *named[2:])
            elif "workload" in self._spec:
                path = ("workload",)
        elif named and named[0] in ("fleet", "policy", "causes", "failures"):
            path = named
        elif named and named[0] in RUN_KEYS:
            path = ("run", named[0])
        return self._places.error(path, message)

    def _job_table(self, job: int) -> int | None:
        start = 0
        for i, (_, count) in enumerate(self._built.entries):
            if start <= job < start + count:
                return i
            start += count
        return None

    def provenance(self, result: SimulationResult | None = None) -> dict[str, Any]:
        """What a saved result carries: the result's own
        :attr:`~acesim.SimulationResult.provenance` (its version, seed,
        replicas and ``simulate`` arguments; without a result, the version
        and the scenario's seed and replicas) with ``scenario``
        (:meth:`to_dict`), ``source`` (the file, resolved; None for a dict)
        and ``created`` (UTC, ISO 8601)."""
        from . import __version__

        created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        mine = {"scenario": self.to_dict(), "source": self._source_name(), "created": created}
        if result is not None:
            # The result's own (its simulate arguments) with the scenario.
            return {**result.provenance, **mine}
        return {"acesim_version": __version__, "seed": self.seed, "replicas": self.replicas, **mine}

    def _source_name(self) -> str | None:
        return None if self.source is None else str(self.source.resolve())

    # -- comparisons ----------------------------------------------------------

    def _resolved(self) -> dict[str, Any]:
        spec = copy.deepcopy(self._spec)
        for path, file in self._built.paths.items():
            _set(spec, path, str(file))
        return spec

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self._resolved() == other._resolved()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        n = len(self._built.jobs) if self._built.jobs is not None else 0
        where = f", source={os.fspath(self.source)!r}" if self.source is not None else ""
        return f"Scenario(name={self.name!r}, jobs={n}, replicas={self.replicas}{where})"


def _read_text(path: Path, what: str) -> str:
    problem = input_file_problem(path)
    if problem is not None and problem != NO_SUCH_FILE:
        raise ScenarioError(f"{problem}, not a {what} file", file=os.fspath(path))
    try:
        # utf-8-sig: a byte-order mark (as some editors save) is not text
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ScenarioError(f"no such {what} file", file=os.fspath(path)) from None
    except IsADirectoryError:
        raise ScenarioError(f"is a directory, not a {what} file", file=os.fspath(path)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"not UTF-8 text: {exc}", file=os.fspath(path)) from None
    except OSError as exc:
        raise ScenarioError(f"cannot read: {exc.strerror or exc}", file=os.fspath(path)) from None


_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
#: tomllib's messages for a key or table defined twice (they do not name it).
_TOML_TWICE = re.compile(r"Cannot (overwrite a value|declare .* twice)")


def _parse(path: Path, what: str) -> tuple[dict[str, Any], Locator]:
    text = _read_text(path, what)
    try:
        doc = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        message = str(exc)
        m = _TOML_AT.search(message)
        line = None
        if m is not None:
            line = int(m.group(1))
            message = message[: m.start()]
            key = Locator(text).declared.get(line) if _TOML_TWICE.match(message) else None
            if key is not None:  # tomllib does not say which
                message = f"{format_path(key)} is defined twice (a key or table is given once)"
            message = f"{message} (column {m.group(2)})"
        raise ScenarioError(f"invalid TOML: {message}", file=os.fspath(path), line=line) from None
    return doc, Locator(text)


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read and check the scenario file at ``path`` (see
    :mod:`acesim.scenario`); a :class:`ScenarioError` names the file, key
    and line of any problem."""
    file = Path(path)
    doc, locator = _parse(file, "scenario")
    return Scenario._make(doc, _Places(_source(file, locator)), file)


def dump_scenario(
    scenario: Scenario | Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    header: str | None = None,
    comments: Mapping[str, str] | None = None,
) -> None:
    """Write a scenario (or a dict, checked as :meth:`Scenario.from_dict`
    checks it, its paths relative to the current directory) to ``path`` as
    TOML, after ``header`` as comment lines; ``comments``: comment lines
    above a key, by its dotted path (``"fleet.repair"``). The files it names are written
    relative to the new file's folder, so ``load_scenario(path)`` gives an
    equal scenario."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario.from_dict(scenario)
    target = Path(path)
    spec = scenario.to_dict()
    folder = target.resolve().parent
    for key, file in scenario._built.paths.items():
        try:
            _set(spec, key, os.path.relpath(file, folder))
        except ValueError:  # another drive
            _set(spec, key, str(file))
    _atomic.replace_file(target, _toml.dumps(spec, header=header, comments=comments))


# ---------------------------------------------------------------------------
# From model objects to TOML values
# ---------------------------------------------------------------------------


def law_spec(law: Distribution | Repair) -> Any:
    """A law (or a repair pipeline) as the TOML value that builds it again:
    a law table with its parameters (times in seconds), the inverse of the
    format's law tables. A TypeError for a law with no table (a user's
    subclass)."""
    if isinstance(law, Repair):
        return _record_spec(RECORDS["pipeline"], law)
    for cls in type(law).__mro__:
        if cls in LAW_CLASSES:
            declared = LAW_CLASSES[cls]
            return {"law": declared.name, **_record_spec(declared, law)}
    raise TypeError(f"{type(law).__name__} has no scenario law table")


def _value_spec(f: Field, value: Any) -> Any:
    """A declared field's value as TOML (laws as tables, arrays as lists)."""
    if f.kind in ("law", "repair", "node_failures"):
        return law_spec(value)
    if f.kind in ("durations", "durations_inf"):
        return [float(x) for x in value]
    if f.kind == "node_set":
        return list(value)
    if f.of == "component":  # a mixture's component: its law's table with its weight
        return [{"weight": w, **law_spec(law)} for w, law in value]
    if f.kind == "records":
        return [_record_spec(RECORDS[f.of], item) for item in value]
    return value


def _record_spec(d: Declaration, obj: Any, keep: Sequence[str] | None = None) -> dict[str, Any]:
    """A declared object (or a record's tuple) as a TOML table: every field,
    or (``keep`` given) the required ones, those in ``keep`` and those that
    differ from the constructor's default."""
    values = dict(zip(d.keys, obj, strict=True)) if isinstance(obj, tuple) else d.values(obj)
    defaults = d.defaults() if keep is not None else {}
    out = {}
    for f in d.fields:
        value = values[f.name]
        if keep is not None and not (f.required or f.name in keep):
            if f.name in defaults and _same(value, defaults[f.name]):
                continue
        out[f.name] = _value_spec(f, value)
    return out


def _same(value: Any, default: Any) -> bool:
    if default is None or value is None:
        return value is default
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def fleet_spec(fleet: Fleet) -> dict[str, Any]:
    """A :class:`~acesim.Fleet` as a ``[fleet]`` table (the keys that differ
    from Fleet's defaults; a NodeTrace has no table: TypeError)."""
    if fleet.node_failures is not None and not isinstance(fleet.node_failures, Distribution):
        raise TypeError("fleet.node_failures: a NodeTrace has no scenario table")
    return _record_spec(RECORDS["fleet"], fleet, keep=("gpus_per_node", "repair"))


def cause_spec(cause: Cause) -> dict[str, Any]:
    """A :class:`~acesim.Cause` as a ``[[causes]]`` table."""
    return _record_spec(RECORDS["cause"], cause)


# ---------------------------------------------------------------------------
# Sweep files
# ---------------------------------------------------------------------------

_SWEEP_KEYS = ("base", "axes", "name", "description", "chunk_replicas", "tune")


@dataclass(frozen=True)
class GridPoint:
    """One point of a :class:`ScenarioGrid`: the axes' values (by the axis
    key as written) and the scenario they make."""

    values: dict[str, Any]
    scenario: Scenario


@dataclass(frozen=True)
class _Axis:
    key: str
    target: KeyPath
    at: KeyPath
    values: list[Any]


@dataclass(frozen=True)
class ScenarioGrid:
    """A sweep file: a ``base`` scenario and ``[axes]`` of dotted keys with
    alternative values; :attr:`points` is their cartesian product (the first
    axis varies slowest), each a scenario of its own::

        base = "flagship.toml"          # or an inline [base] with the scenario's tables
        name = "interval x MTBF"
        chunk_replicas = 100            # optional: replicas per task
        [axes]
        "jobs[0].checkpoint_interval" = ["young", "daly", "30min", "1h"]
        failures.mean = ["4h", "8h", "16h"]

    A dotted bare key (``failures.mean = [...]``) and a quoted one
    (``"failures.mean" = [...]``) are the same axis; values are TOML values
    of the key (a law table for ``failures``, a duration for ``work``...),
    relative paths in them start from the sweep file.
    """

    base: Scenario
    axes: tuple[str, ...]
    points: tuple[GridPoint, ...]
    spec: dict[str, Any] = field(repr=False)
    source: Path | None = None

    @property
    def name(self) -> str | None:
        value = self.spec.get("name")
        return value if isinstance(value, str) else None

    @property
    def chunk_replicas(self) -> int | None:
        value = self.spec.get("chunk_replicas")
        return value if isinstance(value, int) else None

    def to_dict(self) -> dict[str, Any]:
        """The sweep file's tables as plain TOML values."""
        return copy.deepcopy(self.spec)

    def with_values(self, values: Mapping[str, Any], *, origin: str) -> ScenarioGrid:
        """The grid with ``values`` (dotted keys) set in every point."""
        points = tuple(
            GridPoint(p.values, p.scenario.with_values(values, origin=origin)) for p in self.points
        )
        return ScenarioGrid(self.base, self.axes, points, self.spec, self.source)

    def run(
        self, executor: Any = None, *, chunk_replicas: int | None = None, progress: bool = False
    ) -> list[Any]:
        """Every point through :func:`acesim.sweep.sweep` (one
        :class:`~acesim.sweep.SweepResult` per point, in point order)."""
        from .sweep import sweep

        chunk = self.chunk_replicas if chunk_replicas is None else chunk_replicas
        kwargs = [p.scenario.simulate_kwargs() for p in self.points]
        return sweep(kwargs, executor, chunk_replicas=chunk, progress=progress)


def _axes(
    checks: _Checks, value: Any, prefix: KeyPath, raw: KeyPath
) -> Iterator[tuple[str, KeyPath, KeyPath, list[Any]]]:
    """(key as written, target path, path in the file, values) of each axis."""
    table = value
    for key, item in table.items():
        at = (*raw, key)
        try:
            parts = parse_key(key)
        except ValueError as exc:
            raise checks.error(at, str(exc)) from None
        target = (*prefix, *parts)
        if isinstance(item, dict):
            yield from _axes(checks, item, target, at)
            continue
        if not isinstance(item, list):
            raise checks.error(
                at,
                "an axis is an array of alternative values (wrap a single value in [ ]), "
                f"got {_kind(item)}",
            )
        if not item:
            raise checks.error(at, "an axis must not be empty")
        yield format_path(target), target, at, item


def load_sweep(path: str | os.PathLike[str]) -> ScenarioGrid:
    """Read a sweep file (see :class:`ScenarioGrid`) and build every point;
    a :class:`ScenarioError` names the file, key and line of any problem
    (an axis value that does not fit its key: the sweep file's line)."""
    file = Path(path)
    doc, locator = _parse(file, "sweep")
    root = _source(file, locator)
    checks = _Checks()
    checks.places = _Places(root)
    if "base" not in doc and any(key in _TOP_KEYS for key in doc):
        raise checks.error(
            (),
            "a scenario, not a sweep file: a sweep file names a base scenario "
            "(base = 'x.toml', or [base] tables) and [axes] of values (acesim run runs a scenario)",
        )
    checks.table((), doc, _SWEEP_KEYS, ("base", "axes"), what="a sweep file")
    for key in ("name", "description"):
        if key in doc:
            checks.string((key,), doc[key])
    if "chunk_replicas" in doc:
        n = checks.integer(("chunk_replicas",), doc["chunk_replicas"])
        if n < 1:
            raise checks.error(("chunk_replicas",), f"chunk_replicas must be >= 1, got {n}")
    base_value = doc["base"]
    if isinstance(base_value, str):
        base_file = (root.folder / base_value).resolve()
        problem = input_file_problem(base_file)
        if problem == NO_SUCH_FILE:
            raise checks.error(("base",), f"no such file: {base_file}")
        if problem is not None:
            raise checks.error(("base",), f"{base_file} {problem}, not a scenario file")
        base = load_scenario(base_file)
    elif isinstance(base_value, dict):
        base = Scenario._make(base_value, _Places(_source(file, locator, ("base",))), file)
    else:
        raise checks.error(("base",), f"must be a file name or a table, got {_kind(base_value)}")
    axes_value = doc["axes"]
    if not isinstance(axes_value, dict) or not axes_value:
        raise checks.error(("axes",), "must be a table of axes (key = [values, ...])")
    axes = [_Axis(k, t, a, v) for k, t, a, v in _axes(checks, axes_value, (), ("axes",))]
    seen: dict[KeyPath, str] = {}
    for axis in axes:
        for other, name in seen.items():
            short, long = sorted((axis.target, other), key=len)
            if long[: len(short)] == short:
                raise checks.error(axis.at, f"the axes {name!r} and {axis.key!r} overlap")
        seen[axis.target] = axis.key
    points = []
    for combo in itertools.product(*[list(enumerate(a.values)) for a in axes]):
        todo = [
            (axis.target, value, _Override(axis.target, root, (*axis.at, i)))
            for axis, (i, value) in zip(axes, combo, strict=True)
        ]
        scenario = base._with(todo)
        points.append(
            GridPoint({a.key: v for a, (_, v) in zip(axes, combo, strict=True)}, scenario)
        )
    return ScenarioGrid(base, tuple(a.key for a in axes), tuple(points), doc, file)
