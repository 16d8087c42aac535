"""The model vocabulary, declared once: every model class's fields.

Each model class the entry points build (the laws, :class:`~acesim.Job`,
:class:`~acesim.CheckpointTier`, :class:`~acesim.Cause`,
:class:`~acesim.Fleet`, :class:`~acesim.Repair`,
:class:`~acesim.RepairStage`, :class:`~acesim.Quarantine`,
:class:`~acesim.Policy`, and the records a fleet holds: rate windows,
maintenance windows, a mixture's components) has one
:class:`Declaration` here: its fields, each with its name, kind, unit,
bounds and one line of documentation; a field's default is read from the
class's constructor (:meth:`Declaration.defaults`), never written twice.

The readers and writers walk these declarations: the scenario files'
reader and writer (:mod:`acesim.scenario`), the JSON protocol's reader
(:mod:`acesim.serve`), pickling and provenance (:mod:`acesim._pickle`), and
the protocol's JSON Schema (:mod:`acesim._protocol_schema` generates
``protocol.schema.json`` from them).

What an entry point refuses is declared here too: a field that names code
(a Python callable, a compiled policy) or a file comes only from scenario
files and Python, never from the protocol (:attr:`Field.refused`), and the
protocol leaves scheduling to its client.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import workloads
from .analytic import meta_scale_model, node_rate_model
from .distributions import (
    BlockBootstrap,
    Constant,
    Distribution,
    Empirical,
    Exponential,
    Gamma,
    LogNormal,
    Mixture,
    Never,
    Replay,
    ScaleAware,
    Weibull,
    _did_you_mean,
)
from .fleet import CAUSE_SCOPES, NODE_CLOCKS, Cause, Fleet
from .job import MAX_TIERS, CheckpointTier, Job
from .policy import BACKFILLS, Policy, Preemption, Quarantine, Replacement
from .regimes import gang
from .repair import Repair, RepairStage

__all__ = [
    "FILE_KEYS",
    "KINDS",
    "LAWS",
    "LAW_CLASSES",
    "RECORDS",
    "WORKLOADS",
    "Declaration",
    "Field",
    "field_at",
    "law_fields",
]

#: The kinds of value a field holds, each read and checked the same way by
#: every entry point:
#:
#: - ``integer``, ``number``, ``boolean``, ``string``; ``choice`` (one of
#:   :attr:`Field.choices`); ``enum`` (a member of an enum, by its name in
#:   lower case);
#: - ``duration``: seconds, or a string with any unit of
#:   :data:`acesim.units.DURATION_UNITS`; ``duration_inf``: also infinite;
#:   ``durations`` and ``durations_inf``: a non-empty array of them;
#: - ``interval``: a duration or an interval rule (``young``, ...);
#: - ``law``: a law (a duration for a constant, or a law table);
#:   ``repair``: a law or a repair pipeline; ``node_failures``: a law or a
#:   per-node trace;
#: - ``record``: one record of :attr:`Field.of`; ``records``: an array of
#:   them; ``node_set``: node ids or ``"all"``;
#: - ``code``: a Python callable or a compiled policy (named by
#:   ``"module:function"`` in a scenario file; never in the protocol).
KINDS = (
    "integer",
    "number",
    "boolean",
    "string",
    "choice",
    "enum",
    "duration",
    "duration_inf",
    "durations",
    "durations_inf",
    "interval",
    "law",
    "repair",
    "node_failures",
    "record",
    "records",
    "node_set",
    "code",
)

_CODE = (
    "names code (a Python callable or a compiled policy): code is named only in scenario "
    "files and Python, never in the protocol"
)
_SCHEDULER = (
    "placement, re-placement, preemption and backfill are the outside scheduler's "
    "(of a policy only quarantine belongs to the model)"
)


_FILE = (
    "names a file: files are read only from scenario files and Python, never by the "
    "protocol (send the values instead)"
)

#: The keys that name a file where a law is (a sample law's ``csv``, a
#: fitted law's ``history``, a trace's ``node_events``): scenario files take
#: them, the protocol refuses them, with the reason.
FILE_KEYS: dict[str, str] = {
    "csv": _FILE + ": an empirical, block_bootstrap or replay law's samples",
    "history": _FILE + ": a law fitted to a history (fit it, then send the law)",
    "node_events": _FILE + ": a node trace (send its times or gaps)",
}


@dataclass(frozen=True)
class Field:
    """One field of a model class: its key, kind (one of :data:`KINDS`),
    unit, bounds and documentation."""

    name: str
    kind: str
    doc: str = ""
    #: ``"s"`` for the duration and law kinds; else what a number counts
    unit: str = ""
    required: bool = False
    #: the constructor's parameter, when it is not ``name``
    param: str = ""
    #: the attribute that holds the value, when it is not ``name``
    attr: str = ""
    low: float | None = None
    low_open: bool = False
    high: float | None = None
    high_open: bool = False
    choices: tuple[str, ...] = ()
    enum: Any = None
    #: a record's declaration (a key of :data:`RECORDS`)
    of: str = ""
    min_items: int = 0
    max_items: int | None = None
    #: why the protocol refuses the field ("" where it takes it)
    refused: str = ""
    #: the protocol's schema of the field, where it narrows the model's
    wire: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind.startswith("duration") or self.kind in ("law", "repair", "node_failures"):
            object.__setattr__(self, "unit", "s")

    @property
    def parameter(self) -> str:
        return self.param or self.name

    @property
    def attribute(self) -> str:
        return self.attr or self.name


@dataclass(frozen=True)
class Declaration:
    """A model class's fields, in its constructor's order."""

    name: str
    build: Callable[..., Any]
    fields: tuple[Field, ...]
    doc: str = ""
    #: the class the build returns (for a law built by a function: None)
    cls: type | None = None
    keys: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(f.name for f in self.fields))

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    def defaults(self) -> dict[str, Any]:
        """Each optional field's default, as the constructor declares it."""
        params = inspect.signature(self.build).parameters
        out = {}
        for f in self.fields:
            p = params.get(f.parameter)
            if p is not None and p.default is not inspect.Parameter.empty:
                out[f.name] = p.default
        return out

    def kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` (by key) as the constructor's keywords."""
        return {self.field(k).parameter: v for k, v in values.items()}

    def values(self, obj: Any) -> dict[str, Any]:
        """The fields' values read back from ``obj`` (by key)."""
        return {f.name: getattr(obj, f.attribute) for f in self.fields}


def _num(name: str, doc: str = "", **kw: Any) -> Field:
    return Field(name, "number", doc, **kw)


def _int(name: str, doc: str = "", **kw: Any) -> Field:
    return Field(name, "integer", doc, **kw)


def _dur(name: str, doc: str = "", **kw: Any) -> Field:
    return Field(name, "duration", doc, **kw)


def _law(name: str, doc: str = "", **kw: Any) -> Field:
    return Field(name, "law", doc, **kw)


_POSITIVE = {"low": 0.0, "low_open": True}
_PROBABILITY = {"low": 0.0, "high": 1.0}

# --------------------------------------------------------------------------
# Laws
# --------------------------------------------------------------------------

#: Every law family, by the name a law table's ``law`` key gives, in the
#: order the documentation lists them.
LAWS: dict[str, Declaration] = {
    d.name: d
    for d in (
        Declaration(
            "constant",
            Constant,
            (_dur("value", "the one value", required=True),),
            "always value",
            Constant,
        ),
        Declaration(
            "exponential",
            Exponential,
            (_dur("mean", "the mean", required=True, attr="mean_value"),),
            "memoryless",
            Exponential,
        ),
        Declaration(
            "weibull",
            Weibull,
            (
                _num("shape", "the shape k", required=True, **_POSITIVE),
                _dur("scale", "the scale", required=True),
            ),
            "Weibull(shape, scale); mean scale * Gamma(1 + 1/shape)",
            Weibull,
        ),
        Declaration(
            "lognormal",
            LogNormal,
            (
                _num("mu", "the log-scale mean (log seconds)", required=True),
                _num("sigma", "the log-scale deviation", required=True, **_POSITIVE),
            ),
            "exp(N(mu, sigma^2)) seconds",
            LogNormal,
        ),
        Declaration(
            "gamma",
            Gamma,
            (
                _num("shape", "the shape k", required=True, **_POSITIVE),
                _dur("scale", "the scale", required=True),
            ),
            "Gamma(shape, scale); mean shape * scale",
            Gamma,
        ),
        Declaration(
            "mixture",
            Mixture,
            (
                Field(
                    "components",
                    "records",
                    "weighted laws",
                    required=True,
                    of="component",
                    min_items=1,
                ),
            ),
            "each draw picks a component with probability proportional to its weight",
            Mixture,
        ),
        Declaration(
            "empirical",
            Empirical,
            (Field("samples", "durations", "the values resampled", required=True),),
            "resampled i.i.d. per draw",
            Empirical,
        ),
        Declaration(
            "block_bootstrap",
            BlockBootstrap,
            (
                Field("sequence", "durations", "the ordered history", required=True),
                _int("block", "the block length", required=True, low=1),
            ),
            "circular block bootstrap of an ordered history",
            BlockBootstrap,
        ),
        Declaration(
            "replay",
            Replay,
            (Field("times", "durations_inf", "the draws, in order", required=True),),
            "draw i is times[i]; then Infinity",
            Replay,
        ),
        Declaration(
            "scale_aware",
            ScaleAware,
            (
                _law("base", "the law at ref_gpus", required=True),
                _num(
                    "ref_gpus", "the size base stands for", unit="GPUs", required=True, **_POSITIVE
                ),
                _num("exponent", "how draws scale with the job's size"),
            ),
            "draws of base scaled by (ref_gpus / gpus) ** exponent (default 1)",
            ScaleAware,
        ),
        Declaration(
            "meta_scale",
            meta_scale_model,
            (
                _dur("mttf_1024", "the mean time to failure at 1,024 GPUs"),
                _num("exponent", "how the mean scales with the job's size"),
            ),
            "acesim.meta_scale_model(): exponential, MTTF 7.9 h at 1,024 GPUs, scaled as 1/GPUs",
        ),
        Declaration(
            "node_rate",
            node_rate_model,
            (
                _num(
                    "failures_per_node_day",
                    "failures per node per day",
                    unit="1/node/day",
                    required=True,
                    **_POSITIVE,
                ),
                _int("gpus_per_node", "GPUs per node", unit="GPUs", low=1),
            ),
            "acesim.node_rate_model(): MTTF = 1 / (nodes x rate)",
        ),
        Declaration(
            "gang",
            gang,
            (
                _law("base", "each unit's lifetime law", required=True, param="law"),
                _int("units", "how many fresh units fail first together", required=True, low=1),
            ),
            "acesim.gang(): the first failure of units fresh units, each of law base "
            "(the minimum of units draws)",
        ),
        Declaration(
            "never",
            Never,
            (),
            "acesim.Never(): a failure law that never fires (failures switched off); only "
            "where a failure law is (failures, node_failures, a trace's model)",
            Never,
        ),
    )
}

#: The law families a law object is written back as, by class (the
#: families built by a function, ``meta_scale``, ``node_rate`` and ``gang``,
#: are written as the law they return).
LAW_CLASSES: dict[type, Declaration] = {d.cls: d for d in LAWS.values() if d.cls is not None}


def law_fields(name: str) -> tuple[str, ...]:
    """The keys of law family ``name`` (``law`` not included)."""
    return LAWS[name].keys


# --------------------------------------------------------------------------
# Model classes and records
# --------------------------------------------------------------------------


def _rate_window(start: float, end: float, factor: float) -> tuple[float, float, float]:
    return start, end, factor


def _maintenance_window(start: float, duration: float, nodes: Any) -> tuple[float, float, Any]:
    return start, duration, nodes


def _component(weight: float, law: Distribution) -> tuple[float, Distribution]:
    return weight, law


_STAGE = Declaration(
    "stage",
    RepairStage,
    (
        _law("duration", "how long the stage takes", required=True),
        _num("escalate", "the chance the stage escalates to the next", **_PROBABILITY),
        _num("fix", "the chance the stage fixes the node for good", **_PROBABILITY),
    ),
    "acesim.RepairStage",
    RepairStage,
)

#: The model classes and records, by the name the schema gives them.
RECORDS: dict[str, Declaration] = {
    d.name: d
    for d in (
        Declaration(
            "component",
            _component,
            (
                _num("weight", "the component's weight", required=True, low=0.0),
                _law("law", "the component's law", required=True),
            ),
            "a mixture's component",
        ),
        _STAGE,
        Declaration(
            "pipeline",
            Repair,
            (
                Field(
                    "stages",
                    "records",
                    "the stages, in order",
                    required=True,
                    of="stage",
                    min_items=1,
                ),
                _num("misdiagnosis", "the chance a repair misses the fault", **_PROBABILITY),
            ),
            "acesim.Repair",
            Repair,
        ),
        Declaration(
            "rate_window",
            _rate_window,
            (
                _dur("start", "when the window opens", required=True),
                Field("end", "duration_inf", "when it closes", required=True),
                _num("factor", "the failure-rate factor inside", required=True, low=0.0),
            ),
            "a window of a changed failure rate",
        ),
        Declaration(
            "maintenance_window",
            _maintenance_window,
            (
                _dur("start", "when the window opens", required=True),
                _dur("duration", "how long the nodes are down", required=True),
                Field("nodes", "node_set", "the nodes taken down", required=True),
            ),
            "a maintenance window",
        ),
        Declaration(
            "fleet",
            Fleet,
            (
                _int("nodes", "nodes in the fleet", unit="nodes", required=True, low=1),
                _int("gpus_per_node", "GPUs per node", unit="GPUs", low=1),
                _int("spares", "hot spare nodes", unit="nodes", low=0),
                Field("repair", "repair", "a failed node's repair law or pipeline"),
                Field("node_failures", "node_failures", "each node's inter-failure law"),
                _num("lemon_fraction", "the fraction of nodes that are lemons", **_PROBABILITY),
                _num("lemon_factor", "a lemon's failure-rate factor", **_POSITIVE),
                Field(
                    "node_start",
                    "choice",
                    "the nodes' age at t = 0",
                    choices=("stationary", "fresh"),
                ),
                Field("node_clock", "choice", "what ages a node", choices=NODE_CLOCKS),
                Field(
                    "rate_windows", "records", "windows of a changed failure rate", of="rate_window"
                ),
                Field("maintenance", "records", "maintenance windows", of="maintenance_window"),
                _int("cold_spares", "cold spare nodes", unit="nodes", low=0, wire={"const": 0}),
                _law("cold_spare_delay", "how long a cold spare takes to join"),
                Field("lend_spares", "boolean", "whether idle spares run jobs"),
                _num(
                    "storage_bandwidth",
                    "the checkpoint store's bandwidth",
                    unit="bytes/s",
                    **_POSITIVE,
                ),
            ),
            "acesim.Fleet",
            Fleet,
        ),
        Declaration(
            "cause",
            Cause,
            (
                Field("name", "string", "the cause's name", required=True),
                _num("share", "its share of failures", required=True, low=0.0),
                _law("detect", "the latency from fault to detection"),
                Field("node_down", "boolean", "whether the node goes to repair"),
                _int("nodes", "nodes one event takes", unit="nodes", low=1),
                Field("scope", "choice", "what the failure destroys", choices=CAUSE_SCOPES),
                _num(
                    "slowdown",
                    "the throughput lost while it lasts",
                    low=0.0,
                    high=1.0,
                    high_open=True,
                ),
            ),
            "acesim.Cause",
            Cause,
        ),
        Declaration(
            "quarantine",
            Quarantine,
            (
                _int("failures", "failures that quarantine a node", low=1),
                Field("window", "duration_inf", "the window they are counted in"),
                Field("duration", "duration_inf", "how long a node stays out (inf: retired)"),
            ),
            'acesim.Quarantine (duration "Infinity" retires the node)',
            Quarantine,
        ),
        Declaration(
            "policy",
            Policy,
            (
                Field(
                    "replacement",
                    "enum",
                    "how a failed job's nodes are replaced",
                    enum=Replacement,
                    refused=_SCHEDULER,
                ),
                Field(
                    "preemption",
                    "enum",
                    "how a higher priority takes nodes",
                    enum=Preemption,
                    refused=_SCHEDULER,
                ),
                Field("quarantine", "record", "when a failing node is set aside", of="quarantine"),
                Field(
                    "on_failure",
                    "code",
                    "a callback deciding after each failure",
                    refused=_CODE + "; " + _SCHEDULER,
                ),
                _dur("preemption_grace", "the notice a preempted job gets", refused=_SCHEDULER),
                Field(
                    "place", "code", "a callback placing jobs", refused=_CODE + "; " + _SCHEDULER
                ),
                _law("replacement_delay", "how long a replacement takes", refused=_SCHEDULER),
                Field(
                    "backfill",
                    "choice",
                    "the queue's backfill",
                    choices=BACKFILLS,
                    refused=_SCHEDULER,
                ),
            ),
            "Of a policy only quarantine belongs to the model; placement, re-placement, "
            "preemption and backfill are the outside scheduler's.",
            Policy,
        ),
        Declaration(
            "tier",
            CheckpointTier,
            (
                _dur("interval", "the tier's checkpoint interval", required=True),
                _law("save", "a save's duration", required=True),
                _law("load", "a load's duration", required=True),
                _int("replication", "copies kept", low=1),
            ),
            "acesim.CheckpointTier",
            CheckpointTier,
        ),
        Declaration(
            "job",
            Job,
            (
                _int("gpus", "GPUs the job runs on", unit="GPUs", required=True, low=1),
                _dur("work", "the job's work (failure-free run time)", required=True),
                Field(
                    "checkpoint_interval",
                    "interval",
                    "seconds between checkpoints, or a rule",
                    unit="s",
                    required=True,
                ),
                _law("init", "a (re)start's duration"),
                _law("save", "a checkpoint's save duration"),
                _law("load", "a checkpoint's load duration"),
                _dur(
                    "submit",
                    "when the job is submitted",
                    refused="a job is submitted at the model's clock (submit it then)",
                ),
                _int("priority", "the job's priority"),
                Field("name", "string", "the job's name"),
                _dur(
                    "time_limit",
                    "the longest a run may last",
                    refused="a run's limit is the outside scheduler's to enforce (stop the job)",
                ),
                _law("persist", "the background persist of a checkpoint"),
                Field("tiers", "records", "checkpoint tiers", of="tier", max_items=MAX_TIERS),
                _int("min_gpus", "the fewest GPUs it shrinks to", unit="GPUs", low=1),
                _law("reconfigure", "a resize's duration"),
                _num("scaling", "the throughput exponent of its size", low=0.0),
                _num("checkpoint_bytes", "a checkpoint's size", unit="bytes", low=0.0),
            ),
            "acesim.Job",
            Job,
        ),
    )
}

#: The workload generators a scenario's ``[workload]`` table names (by
#: ``generator``), each with its arguments (:mod:`acesim.workloads`).
WORKLOADS: dict[str, Declaration] = {
    "meta_like": Declaration(
        "meta_like",
        workloads.meta_like,
        (
            _num("days", "how many days of arrivals", unit="days", required=True),
            _int("gpus", "the cluster's GPUs", unit="GPUs", required=True, low=1),
            _int("seed", "the generator's seed", low=0),
            _num("utilization", "the GPUs' share the load offers", high=1.0, **_POSITIVE),
            _dur("checkpoint_interval", "every job's checkpoint interval", **_POSITIVE),
            _num("runtime_sigma", "the log-normal spread of run times", **_POSITIVE),
            _law("init", "a (re)start's duration"),
            _law("save", "a checkpoint's save duration"),
            _law("load", "a checkpoint's load duration"),
        ),
        "a Meta-like mix of job sizes and lengths",
    )
}

# Every model class's declaration covers its constructor's parameters.
for _decl in (*LAWS.values(), *RECORDS.values(), *WORKLOADS.values()):
    if _decl.cls is not None or _decl.name in WORKLOADS:
        _params = tuple(inspect.signature(_decl.build).parameters)
        _declared = tuple(f.parameter for f in _decl.fields)
        assert _params == _declared, (_decl.name, _params, _declared)


# --------------------------------------------------------------------------
# Dotted key paths
# --------------------------------------------------------------------------

#: A scenario's tables that hold model records: key -> (record, an array of them).
_TABLES = {"fleet": ("fleet", False), "jobs": ("job", True), "causes": ("cause", True),
           "policy": ("policy", False)}  # fmt: skip


def _law_parameter(name: str) -> Field:
    """The law parameter called ``name`` (a family's fields of one name share
    their kind and unit)."""
    for d in LAWS.values():
        for f in d.fields:
            if f.name == name:
                return f
    names = sorted({f.name for d in LAWS.values() for f in d.fields})
    raise KeyError(f"no law has a parameter {name!r}{_did_you_mean(name, names)}")


def field_at(path: Sequence[str | int]) -> Field:
    """The declared field a key path names, as :func:`acesim.scenario.parse_key`
    reads it (``("fleet", "spares")``, ``("jobs", 0, "checkpoint_interval")``,
    ``("fleet", "repair", "stages", 0, "fix")``, ``("fleet", "node_failures",
    "scale")``): its kind, unit and bounds. A KeyError names the first part no
    declaration has, with a did-you-mean."""
    parts = list(path)
    if not parts or parts[0] not in _TABLES:
        head = parts[0] if parts else ""
        raise KeyError(
            f"{head!r} is not a table of model records{_did_you_mean(str(head), list(_TABLES))}"
            f" (the tables: {', '.join(_TABLES)})"
        )
    name, many = _TABLES[str(parts.pop(0))]
    record: Declaration | None = RECORDS[name]
    found: Field | None = None
    if many and not (parts and isinstance(parts.pop(0), int)):
        raise KeyError(f"{name}: give the index of one ({path[0]}[0])")
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            if found is None or found.kind != "records":
                raise KeyError(f"[{part}]: only an array of records takes an index")
            continue
        if record is None:  # below a law: a parameter of its family
            assert found is not None
            if found.kind == "repair" and part in RECORDS["pipeline"].keys:
                record = RECORDS["pipeline"]
            else:
                found = _law_parameter(part)
                record = None if found.kind in ("law", "repair", "node_failures") else record
                continue
        if part not in record.keys:
            raise KeyError(f"{record.name} has no field {part!r}{_did_you_mean(part, record.keys)}")
        found = record.field(part)
        record = RECORDS[found.of] if found.kind in ("record", "records") else None
        if record is None and found.kind not in ("law", "repair", "node_failures") and parts:
            raise KeyError(f"{found.name} ({found.kind}) has no fields")
    if found is None:
        raise KeyError(f"{path!r} names a table, not a field")
    return found
