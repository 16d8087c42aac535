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
from ._vocabulary import LAW_CLASSES, RECORDS, Declaration
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

#: The constructor parameters each reducer passes, in order: a model
#: class's declared fields (:mod:`acesim._vocabulary`), and JobArray's
#: columns. A reducer refuses to run when the class's constructor has other
#: parameters (someone added one): silently dropping it would rebuild a
#: different object.
PARAMETERS: dict[type, tuple[str, ...]] = {
    **{cls: tuple(f.parameter for f in d.fields) for cls, d in LAW_CLASSES.items()},
    Job: tuple(f.parameter for f in RECORDS["job"].fields),
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

#: The declaration of each class rebuilt from its declared fields.
_DECLARED: dict[type, Declaration] = {
    **LAW_CLASSES,
    **{d.cls: d for d in RECORDS.values() if d.cls is not None},
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


def _by_fields(obj: Any) -> Reduced:
    """``cls(*values)``: a law or a job rebuilt from its declared fields'
    values, read back from the attributes the declaration names."""
    cls = type(obj)
    return _call(cls, *(getattr(obj, f.attribute) for f in _DECLARED[cls].fields))


def _compiled_sampler(d: Any) -> Reduced:
    raise TypeError(
        "a compiled acesim sampler (acesim._core.Distribution) cannot be pickled: pickle the "
        "acesim.Distribution that owns it instead. The built-in distributions pickle once "
        "acesim is imported; a Distribution subclass must define __reduce__ to rebuild "
        "itself from its parameters"
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
    """``type(obj)(**{field: obj.field for every declared field})``: for
    the frozen config classes, whose attributes are their parameters."""
    cls = type(obj)
    kwargs = {f.parameter: getattr(obj, f.attribute) for f in _DECLARED[cls].fields}
    return _rebuild_by_keywords, (cls, kwargs)


for _cls in LAW_CLASSES:
    copyreg.pickle(_cls, _by_fields)
copyreg.pickle(_core.Distribution, _compiled_sampler)
copyreg.pickle(Job, _by_fields)
copyreg.pickle(JobArray, _job_array)
copyreg.pickle(NodeTrace, _node_trace)
for _cls in (Cause, CheckpointTier, Fleet, Quarantine, Policy, RepairStage, Repair):
    copyreg.pickle(_cls, _by_attributes)
