"""Pickling support for the model objects (for process-based executors).

The Python classes hold compiled samplers (``_compiled``, pybind11 objects)
that cannot be pickled. Importing this module registers :mod:`copyreg`
reducers that rebuild each object from its public constructor arguments
instead, so the compiled sampler is rebuilt (and the parameters validated
again) on the receiving side. The draws of a rebuilt distribution are
identical to the original's. :mod:`copy` uses the same table, so
``copy.deepcopy`` works too.

Covered: every built-in :class:`~acesim.Distribution`, :class:`~acesim.Job`,
:class:`~acesim.JobArray`, :class:`~acesim.Cause`, :class:`~acesim.NodeTrace`,
:class:`~acesim.Fleet`, :class:`~acesim.Repair`, :class:`~acesim.RepairStage`,
:class:`~acesim.Quarantine` and :class:`~acesim.Policy`.
A Python ``on_failure`` callable of a policy pickles by reference (a
module-level function) with :mod:`pickle`; a :class:`~acesim.CompiledPolicy`
refuses to pickle (a function address means nothing in another process).
A user subclass of a distribution must define ``__reduce__`` itself.

Pickles name public objects only: the classes of :data:`VALUE_CLASSES` and
the enums of :data:`ENUMS` report ``__module__ == "acesim"``, and the two
rebuilding functions the reducers return are attributes of ``acesim``
(``acesim._rebuild_by_keywords``, ``acesim._rebuild_node_trace``), so a
pickle survives a module being moved inside the package. A callback from a
module beside a scenario pickles as (file, SHA-256, attribute)
(:class:`acesim._beside.BesideCallable`).
"""

from __future__ import annotations

import copyreg
import enum
import inspect
from typing import Any

from . import _core
from .distributions import (
    BlockBootstrap,
    Constant,
    Empirical,
    Exponential,
    Gamma,
    LogNormal,
    Mixture,
    Never,
    Replay,
    ScaleAware,
    Weibull,
)
from .fleet import Cause, Fleet, NodeTrace
from .fleet_model import NodeState
from .job import RULE_CODES, CheckpointTier, Job, JobArray
from .policy import Policy, Preemption, Quarantine, Replacement
from .repair import Repair, RepairStage
from .simulation import EventKind, FailureSource, JobStatus, NodeEventKind

__all__ = ["ENUMS", "VALUE_CLASSES"]

#: The value classes, by public name: the only classes a provenance dict
#: names (:func:`acesim.provenance.rebuild` looks every name up here and
#: imports nothing). No function, no class that holds code
#: (:class:`~acesim.CompiledPolicy` takes a raw address) or reads or writes a
#: file (:class:`~acesim.FleetModel`, :class:`~acesim.Scenario`).
VALUE_CLASSES: dict[str, type] = {
    "acesim.Constant": Constant,
    "acesim.Exponential": Exponential,
    "acesim.Weibull": Weibull,
    "acesim.LogNormal": LogNormal,
    "acesim.Gamma": Gamma,
    "acesim.Mixture": Mixture,
    "acesim.Never": Never,
    "acesim.Empirical": Empirical,
    "acesim.BlockBootstrap": BlockBootstrap,
    "acesim.Replay": Replay,
    "acesim.ScaleAware": ScaleAware,
    "acesim.Job": Job,
    "acesim.JobArray": JobArray,
    "acesim.CheckpointTier": CheckpointTier,
    "acesim.Cause": Cause,
    "acesim.NodeTrace": NodeTrace,
    "acesim.Fleet": Fleet,
    "acesim.Repair": Repair,
    "acesim.RepairStage": RepairStage,
    "acesim.Quarantine": Quarantine,
    "acesim.Policy": Policy,
}

#: The public enums, by public name.
ENUMS: dict[str, type[enum.Enum]] = {
    "acesim.Replacement": Replacement,
    "acesim.Preemption": Preemption,
    "acesim.EventKind": EventKind,
    "acesim.FailureSource": FailureSource,
    "acesim.JobStatus": JobStatus,
    "acesim.NodeEventKind": NodeEventKind,
    "acesim.NodeState": NodeState,
}

#: Where each class of the tables is defined (its ``__module__`` before it
#: was set to ``"acesim"``): for tools that read the source (the docs build).
DEFINED_IN: dict[type, str] = {}

for _name, _cls in [*VALUE_CLASSES.items(), *ENUMS.items()]:
    assert _name == f"acesim.{_cls.__qualname__}", _name
    DEFINED_IN[_cls] = _cls.__module__
    _cls.__module__ = "acesim"

Reduced = tuple[Any, tuple[Any, ...]]

_RULE_NAMES = {code: name for name, code in RULE_CODES.items()}

#: The constructor parameters each reducer passes, in order. A reducer
#: refuses to run when the class's constructor has other parameters (someone
#: added one): silently dropping it would rebuild a different object.
PARAMETERS: dict[type, tuple[str, ...]] = {
    Constant: ("value",),
    Exponential: ("mean",),
    Weibull: ("shape", "scale"),
    LogNormal: ("mu", "sigma"),
    Gamma: ("shape", "scale"),
    Mixture: ("components",),
    Never: (),
    Empirical: ("samples",),
    BlockBootstrap: ("sequence", "block"),
    Replay: ("times",),
    ScaleAware: ("base", "ref_gpus", "exponent"),
    Job: (
        "gpus",
        "work",
        "checkpoint_interval",
        "init",
        "save",
        "load",
        "submit",
        "priority",
        "name",
        "time_limit",
        "persist",
        "tiers",
        "min_gpus",
        "reconfigure",
        "scaling",
        "checkpoint_bytes",
    ),
    JobArray: (
        "gpus",
        "work",
        "checkpoint_interval",
        "submit",
        "priority",
        "init",
        "save",
        "load",
        "time_limit",
        "persist",
        "tiers",
        "min_gpus",
        "reconfigure",
        "scaling",
        "checkpoint_bytes",
    ),
}

_checked: set[type] = set()


def _call(cls: type, *args: Any) -> Reduced:
    """``cls(*args)`` as a reduce value, after checking that ``args`` are
    still all of ``cls``'s constructor parameters."""
    if cls not in _checked:
        actual = tuple(inspect.signature(cls).parameters)
        if actual != PARAMETERS[cls]:
            raise TypeError(
                f"cannot pickle {cls.__name__}: its constructor takes {actual}, but "
                f"acesim/_pickle.py rebuilds it from {PARAMETERS[cls]}; update its reducer"
            )
        _checked.add(cls)
    return cls, args


def _constant(d: Constant) -> Reduced:
    return _call(Constant, d.value)


def _exponential(d: Exponential) -> Reduced:
    return _call(Exponential, d.mean_value)


def _weibull(d: Weibull) -> Reduced:
    return _call(Weibull, d.shape, d.scale)


def _lognormal(d: LogNormal) -> Reduced:
    return _call(LogNormal, d.mu, d.sigma)


def _gamma(d: Gamma) -> Reduced:
    return _call(Gamma, d.shape, d.scale)


def _mixture(d: Mixture) -> Reduced:
    return _call(Mixture, [(w, c) for w, c in d.components])


def _never(d: Never) -> Reduced:
    return _call(Never)


def _empirical(d: Empirical) -> Reduced:
    return _call(Empirical, d.samples)


def _block_bootstrap(d: BlockBootstrap) -> Reduced:
    return _call(BlockBootstrap, d.sequence, d.block)


def _replay(d: Replay) -> Reduced:
    return _call(Replay, d.times)


def _scale_aware(d: ScaleAware) -> Reduced:
    return _call(ScaleAware, d.base, d.ref_gpus, d.exponent)


def _compiled_sampler(d: Any) -> Reduced:
    raise TypeError(
        "a compiled acesim sampler (acesim._core.Distribution) cannot be pickled: pickle the "
        "acesim.Distribution that owns it instead. The built-in distributions pickle once "
        "acesim is imported; a Distribution subclass must define __reduce__ to rebuild "
        "itself from its parameters"
    )


def _job(j: Job) -> Reduced:
    return _call(
        Job,
        j.gpus,
        j.work,
        j.checkpoint_interval,
        j.init,
        j.save,
        j.load,
        j.submit,
        j.priority,
        j.name,
        j.time_limit,
        j.persist,
        j.tiers,
        j.min_gpus,
        j.reconfigure,
        j.scaling,
        j.checkpoint_bytes,
    )


def _job_array(a: JobArray) -> Reduced:
    # A rule name applies to every job; otherwise every job has its interval.
    code = int(a.rule[0]) if a.rule.size else 0
    interval: Any = _RULE_NAMES[code] if code else a.checkpoint_interval
    return _call(
        JobArray,
        a.gpus,
        a.work,
        interval,
        a.submit,
        a.priority,
        a.init,
        a.save,
        a.load,
        a.time_limit,
        a.persist,
        a.tiers,
        a.min_gpus,
        a.reconfigure,
        a.scaling,
        a.checkpoint_bytes,
    )


def _node_trace(t: NodeTrace) -> Reduced:
    # Its constructor needs the whole trace: restore the attributes instead
    # (the Replay laws in them pickle through their own reducer).
    return _rebuild_node_trace, (dict(vars(t)),)


def _rebuild_node_trace(state: dict[str, Any]) -> NodeTrace:
    trace = NodeTrace.__new__(NodeTrace)
    vars(trace).update(state)
    return trace


def _rebuild_by_keywords(cls: type, kwargs: dict[str, Any]) -> Any:
    return cls(**kwargs)


# Pickles name them as attributes of acesim (where acesim/__init__.py puts them).
_rebuild_node_trace.__module__ = "acesim"
_rebuild_by_keywords.__module__ = "acesim"


def constructor_form(obj: Any) -> tuple[str, str, dict[str, Any]] | None:
    """``(public name, "kwargs" | "state", values)`` of a value object: its
    class's name in :data:`VALUE_CLASSES` and the constructor keywords its
    reducer passes (a :class:`~acesim.NodeTrace`: its attribute state);
    None for anything else."""
    cls = type(obj)
    if VALUE_CLASSES.get(f"acesim.{cls.__qualname__}") is not cls:
        return None
    reduced: Any = copyreg.dispatch_table[cls](obj)
    build, args = reduced
    if build is _rebuild_node_trace:
        return f"acesim.{cls.__qualname__}", "state", dict(args[0])
    if build is _rebuild_by_keywords:
        return f"acesim.{cls.__qualname__}", "kwargs", dict(args[1])
    return f"acesim.{cls.__qualname__}", "kwargs", dict(zip(PARAMETERS[cls], args, strict=True))


#: A NodeTrace's attributes (its state), each with the types it may hold.
_TRACE_STATE = ("replica", "nodes", "exact_times", "laws", "reported", "model")


def construct(name: str, how: str, values: dict[str, Any]) -> Any:
    """The value object :func:`constructor_form` described, built by its
    constructor (which validates ``values`` again); ``name`` must be in
    :data:`VALUE_CLASSES` (the caller looked it up)."""
    cls = VALUE_CLASSES[name]
    if cls is NodeTrace:
        if how != "state":
            raise ValueError(f"provenance: {name} is rebuilt from its 'state'")
        return _node_trace_from_state(values)
    if how != "kwargs":
        raise ValueError(f"provenance: {name} is rebuilt from its 'kwargs'")
    allowed = tuple(inspect.signature(cls).parameters)
    for key in values:
        if key not in allowed:
            raise ValueError(f"provenance: {name} has no parameter {key!r} (it takes {allowed})")
    return cls(**values)


def _node_trace_from_state(state: dict[str, Any]) -> NodeTrace:
    """A NodeTrace from its attributes, each checked (it has no constructor
    taking them)."""
    if set(state) - set(_TRACE_STATE) or "laws" not in state:
        raise ValueError(
            f"provenance: acesim.NodeTrace's state must have the keys {_TRACE_STATE}, "
            f"got {sorted(state)}"
        )
    laws, reported = state.get("laws"), state.get("reported", [])
    for key, seq in (("laws", laws), ("reported", reported)):
        if not isinstance(seq, list) or not all(v is None or isinstance(v, Replay) for v in seq):
            raise ValueError(
                f"provenance: acesim.NodeTrace's {key} must be a list of Replay or None"
            )
    model = state.get("model")
    if model is not None and not isinstance(model, tuple(VALUE_CLASSES[n] for n in _LAWS)):
        raise ValueError("provenance: acesim.NodeTrace's model must be a distribution or None")
    for key in ("replica", "nodes"):
        if key in state and (not isinstance(state[key], int) or isinstance(state[key], bool)):
            raise ValueError(f"provenance: acesim.NodeTrace's {key} must be an integer")
    if not isinstance(state.get("exact_times", True), bool):
        raise ValueError("provenance: acesim.NodeTrace's exact_times must be a bool")
    return _rebuild_node_trace(state)


#: The distribution classes' names in :data:`VALUE_CLASSES`.
_LAWS = tuple(n for n, c in VALUE_CLASSES.items() if c in PARAMETERS and c not in (Job, JobArray))


def _by_attributes(obj: Any) -> Reduced:
    """``type(obj)(**{p: obj.p for every constructor parameter p})``: for
    the frozen config classes, whose attributes are their parameters."""
    cls = type(obj)
    kwargs = {name: getattr(obj, name) for name in inspect.signature(cls).parameters}
    return _rebuild_by_keywords, (cls, kwargs)


copyreg.pickle(Constant, _constant)
copyreg.pickle(Exponential, _exponential)
copyreg.pickle(Weibull, _weibull)
copyreg.pickle(LogNormal, _lognormal)
copyreg.pickle(Gamma, _gamma)
copyreg.pickle(Mixture, _mixture)
copyreg.pickle(Never, _never)
copyreg.pickle(Empirical, _empirical)
copyreg.pickle(BlockBootstrap, _block_bootstrap)
copyreg.pickle(Replay, _replay)
copyreg.pickle(ScaleAware, _scale_aware)
copyreg.pickle(_core.Distribution, _compiled_sampler)
copyreg.pickle(Job, _job)
copyreg.pickle(JobArray, _job_array)
copyreg.pickle(Cause, _by_attributes)
copyreg.pickle(CheckpointTier, _by_attributes)
copyreg.pickle(NodeTrace, _node_trace)
copyreg.pickle(Fleet, _by_attributes)
copyreg.pickle(Quarantine, _by_attributes)
copyreg.pickle(Policy, _by_attributes)
copyreg.pickle(RepairStage, _by_attributes)
copyreg.pickle(Repair, _by_attributes)
