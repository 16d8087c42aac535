"""Provenance: what produced a result, in a form that reproduces it.

Every :class:`acesim.SimulationResult` carries ``res.provenance``: the acesim
version, the seed, the replicas and the :func:`acesim.simulate` arguments as
plain JSON data (:func:`describe`). :func:`rebuild` turns that data back into
the same objects and :func:`reproduce` runs them again: a row of a result can
be recomputed from the result alone, on another machine, with the same
numbers.

The encoding: JSON scalars as themselves (non-finite floats as
``{"float": "inf" | "-inf" | "nan"}``); lists as lists; a tuple as
``{"tuple": [...]}``; a dict with string keys as ``{"dict": {...}}``; a
numpy array as ``{"ndarray": <base64 of its bytes>, "dtype": ..., "shape":
[...]}`` (exact, whatever its size); a public enum member as ``{"enum":
"acesim.Replacement", "name": "SPARES"}``; a value object (every
distribution, ``Job``, ``JobArray``, ``CheckpointTier``, ``Cause``,
``Fleet``, ``Repair``, ``RepairStage``, ``Quarantine``, ``Policy``) as
``{"call": "acesim.Weibull", "kwargs": {"shape": ..., "scale": ...}}``: its
public name and its constructor's keywords (a ``NodeTrace``, which has no
constructor taking its content, as ``{"call": "acesim.NodeTrace", "state":
{...}}``); a user callable (a policy's ``on_failure``) as ``{"function":
"module:qualname"}``, one from a module beside a scenario with its
``"file"`` and ``"sha256"`` too. What has no such form (a
:class:`~acesim.CompiledPolicy`, a lambda, a user subclass without
``__reduce__``) is ``{"unserialisable": repr}``, and :func:`rebuild` refuses
it with a message naming it.

**Names are data, never code.** :func:`rebuild` looks every ``"call"`` and
``"enum"`` name up in one table (:data:`VALUE_CLASSES`, :data:`ENUMS`) and
imports nothing; a name not in it is refused with
:class:`~acesim.UntrustedNameError` naming it. A ``"function"`` (user code)
is resolved only when the caller passes ``trust=True``: a results file or
a provenance dict from someone else runs nothing unless told to. Files
written before the names were public (``acesim.distributions.Exponential``
with positional ``args``, ``acesim._pickle._rebuild_by_keywords`` with
``{"type": "acesim.fleet.Fleet"}``, enums as ``acesim.policy.Replacement``)
are read through a fixed translation table (:data:`BEFORE_PUBLIC_NAMES`) to
the same objects.

>>> import acesim as ace
>>> res = ace.simulate(ace.Job(64, ace.DAY, ace.HOUR), ace.Weibull(0.7, 8 * ace.HOUR),
...                    replicas=4, seed=3)
>>> res.provenance["seed"], res.provenance["replicas"]
(3, 4)
>>> again = reproduce(res.provenance)
>>> again.jobs.tobytes() == res.jobs.tobytes()
True
"""

from __future__ import annotations

import base64
import copyreg
import enum
import importlib
import math
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _pickle
from ._beside import BesideCallable, folder_of, load_beside
from ._pickle import ENUMS, PARAMETERS, VALUE_CLASSES
from .errors import UntrustedNameError

__all__ = [
    "BEFORE_PUBLIC_NAMES",
    "ENCODED",
    "ENUMS",
    "VALUE_CLASSES",
    "check",
    "describe",
    "rebuild",
    "reproduce",
]

#: The version of this encoding (results carry it as ``format``): 2 names
#: objects by their public names; 1 by module paths (still read).
FORMAT = 2

#: The names provenance written before format 2 used (module paths), each
#: with its public name. A fixed table: nothing else is translated.
BEFORE_PUBLIC_NAMES: dict[str, str] = {
    **{
        f"acesim.distributions.{n}": f"acesim.{n}"
        for n in (
            "Constant",
            "Exponential",
            "Weibull",
            "LogNormal",
            "Gamma",
            "Mixture",
            "Empirical",
            "BlockBootstrap",
            "Replay",
            "ScaleAware",
        )
    },
    "acesim.job.Job": "acesim.Job",
    "acesim.job.JobArray": "acesim.JobArray",
    "acesim.job.CheckpointTier": "acesim.CheckpointTier",
    "acesim.fleet.Cause": "acesim.Cause",
    "acesim.fleet.Fleet": "acesim.Fleet",
    "acesim.fleet.NodeTrace": "acesim.NodeTrace",
    "acesim.repair.Repair": "acesim.Repair",
    "acesim.repair.RepairStage": "acesim.RepairStage",
    "acesim.policy.Quarantine": "acesim.Quarantine",
    "acesim.policy.Policy": "acesim.Policy",
    "acesim.policy.Replacement": "acesim.Replacement",
    "acesim.policy.Preemption": "acesim.Preemption",
    "acesim.simulation.EventKind": "acesim.EventKind",
    "acesim.simulation.FailureSource": "acesim.FailureSource",
    "acesim.simulation.JobStatus": "acesim.JobStatus",
    "acesim.simulation.NodeEventKind": "acesim.NodeEventKind",
}

#: The two rebuilding functions format 1 named (the only functions it did).
_BY_KEYWORDS = "acesim._pickle._rebuild_by_keywords"
_NODE_TRACE = "acesim._pickle._rebuild_node_trace"

#: The keys of the encoded forms, each form's first key.
_FORMS = ("float", "tuple", "dict", "ndarray", "enum", "call", "type", "function", "unserialisable")


def _is_enum(value: Any) -> bool:
    # Python enums, and pybind11's, which are not enum.Enum.
    return isinstance(value, enum.Enum) or (
        hasattr(type(value), "__members__") and isinstance(getattr(value, "name", None), str)
    )


def _public(name: Any, table: Mapping[str, Any], what: str) -> str:
    """``name`` (today's, or format 1's through :data:`BEFORE_PUBLIC_NAMES`)
    as a key of ``table``; refuses any other name."""
    if isinstance(name, str):
        public = BEFORE_PUBLIC_NAMES.get(name, name)
        if public in table:
            return public
    raise UntrustedNameError(
        f"provenance: refused the name {name!r}: it is not {what} (names in provenance are "
        "looked up in acesim.provenance's table of value classes and enums, never imported; "
        "no switch changes that)",
        name=str(name),
    )


def _callable_name(data: Mapping[str, Any]) -> str:
    name = data.get("function")
    if not isinstance(name, str) or name.count(":") != 1 or not all(name.split(":")):
        raise ValueError(f"provenance: a function must be named 'module:qualname', got {name!r}")
    for key in ("file", "sha256"):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"provenance: {name}'s {key} must be a string")
    return name


def describe(value: Any) -> Any:
    """``value`` (simulate's arguments, or any part of them) as JSON data."""
    if value is None or isinstance(value, bool | str):
        return value
    if _is_enum(value):
        cls = type(value)
        if ENUMS.get(f"acesim.{cls.__qualname__}") is cls:
            return {"enum": f"acesim.{cls.__qualname__}", "name": value.name}
        return {"unserialisable": repr(value)}
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float | np.floating):
        x = float(value)
        if math.isfinite(x):
            return x
        return {"float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {
            "ndarray": base64.b64encode(data.tobytes()).decode("ascii"),
            "dtype": data.dtype.str,
            "shape": list(data.shape),
        }
    if isinstance(value, list):
        return [describe(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [describe(v) for v in value]}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {"dict": {k: describe(v) for k, v in value.items()}}
        return {"unserialisable": repr(value)}
    if isinstance(value, type):
        if VALUE_CLASSES.get(f"acesim.{value.__qualname__}") is value:
            return {"type": f"acesim.{value.__qualname__}"}
        return {"unserialisable": repr(value)}
    if isinstance(value, BesideCallable):
        return {"function": value.name, "file": value.file, "sha256": value.sha256}
    if type(value) in copyreg.dispatch_table:
        try:
            form = _pickle.constructor_form(value)
        except TypeError:
            return {"unserialisable": repr(value)}
        if form is not None:
            name, how, values = form
            return {"call": name, how: {k: describe(v) for k, v in values.items()}}
    if isinstance(value, types.FunctionType) and "<" not in value.__qualname__:
        return {"function": f"{value.__module__}:{value.__qualname__}"}
    return {"unserialisable": repr(value)}


def _form(data: Mapping[str, Any]) -> str:
    for key in _FORMS:
        if key in data:
            return key
    raise ValueError(f"provenance: cannot rebuild {dict(data)!r}")


def _keywords(data: Any, what: str, trust: bool) -> dict[str, Any]:
    """A ``kwargs`` / ``state`` mapping of described values, rebuilt."""
    if isinstance(data, Mapping) and set(data) == {"dict"}:  # format 1 wrote it encoded
        data = data["dict"]
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise ValueError(f"provenance: {what} must be a mapping of parameter names")
    return {k: rebuild(v, trust=trust) for k, v in data.items()}


def _named(target: Any) -> Any:
    """The class format 1's ``_rebuild_by_keywords`` was given: the name in
    its ``{"type": ...}`` (or whatever else stands there, to be refused by
    name)."""
    if isinstance(target, Mapping):
        for key in ("type", "function", "call", "enum"):
            if key in target:
                return target[key]
    return target


def _call(data: Mapping[str, Any], trust: bool) -> Any:
    name = data["call"]
    args = data.get("args")
    if name == _BY_KEYWORDS:  # format 1: [{"type": old name}, {"dict": kwargs}]
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[0], Mapping):
            raise ValueError(
                f"provenance: {name} must have args [{{'type': ...}}, {{'dict': ...}}]"
            )
        public = _public(_named(args[0]), VALUE_CLASSES, "an acesim value class")
        return _pickle.construct(public, "kwargs", _keywords(args[1], public, trust))
    if name == _NODE_TRACE:  # format 1: [{"dict": state}]
        if not isinstance(args, list) or len(args) != 1:
            raise ValueError(f"provenance: {name} must have args [{{'dict': ...}}]")
        return _pickle.construct("acesim.NodeTrace", "state", _keywords(args[0], name, trust))
    public = _public(name, VALUE_CLASSES, "an acesim value class")
    if args is not None:  # format 1: positional, in the reducer's order
        cls = VALUE_CLASSES[public]
        names = PARAMETERS.get(cls, ())
        if not isinstance(args, list) or not names or len(args) > len(names):
            raise ValueError(f"provenance: {public} cannot be rebuilt from args {args!r}")
        values = dict(zip(names, [rebuild(a, trust=trust) for a in args], strict=False))
        return _pickle.construct(public, "kwargs", values)
    how = "state" if "state" in data else "kwargs"
    return _pickle.construct(public, how, _keywords(data.get(how, {}), public, trust))


def _function(data: Mapping[str, Any], trust: bool) -> Any:
    name = _callable_name(data)
    where = f" (from {data['file']})" if "file" in data else ""
    if not trust:
        raise UntrustedNameError(
            f"provenance: refused to resolve the user callable {name!r}{where}: it is code named "
            "by the data; pass trust=True (to acesim.provenance.reproduce or rebuild) only for "
            "provenance you trust",
            name=name,
        )
    module, _, attr = name.partition(":")
    if "file" in data:
        file = data["file"]
        return load_beside(folder_of(module, file), module, attr, file, data.get("sha256") or None)
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def rebuild(data: Any, *, trust: bool = False) -> Any:
    """The objects :func:`describe` encoded, built again (validated again by
    their constructors). Every class and enum name is looked up in
    :data:`VALUE_CLASSES` / :data:`ENUMS` (nothing is imported); a user
    callable (``{"function": ...}``) is resolved only with ``trust=True``,
    else :class:`~acesim.UntrustedNameError` names it. Raises
    ``ValueError`` for what was not serialisable or is malformed."""
    if not isinstance(trust, bool):
        raise TypeError(f"trust must be a bool, got {type(trust).__name__}")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [rebuild(v, trust=trust) for v in data]
    if not isinstance(data, Mapping) or len(data) == 0:
        raise ValueError(f"provenance: cannot rebuild {data!r}")
    form = _form(data)
    try:
        return _rebuild_form(form, data, trust)
    except (KeyError, TypeError, AttributeError) as exc:  # malformed: say so, as a ValueError
        raise ValueError(f"provenance: cannot rebuild a {form!r} entry: {exc!r}") from None


def _rebuild_form(form: str, data: Mapping[str, Any], trust: bool) -> Any:
    if form == "float":
        if data["float"] not in ("inf", "-inf", "nan"):
            raise ValueError(f"provenance: a float must be inf, -inf or nan, got {data['float']!r}")
        return float(data["float"])
    if form == "tuple":
        return tuple(rebuild(v, trust=trust) for v in data["tuple"])
    if form == "dict":
        return _keywords(data["dict"], "a dict", trust)
    if form == "ndarray":
        dtype = np.dtype(data["dtype"])
        if dtype.hasobject:
            raise ValueError("provenance: an ndarray of Python objects is not data")
        raw = base64.b64decode(data["ndarray"])
        return np.frombuffer(raw, dtype=dtype).reshape(data["shape"]).copy()
    if form == "enum":
        cls = ENUMS[_public(data["enum"], ENUMS, "a public acesim enum")]
        name = data.get("name")
        if not isinstance(name, str) or name not in cls.__members__:
            raise ValueError(f"provenance: {cls.__qualname__} has no member {name!r}")
        return cls.__members__[name]
    if form == "call":
        return _call(data, trust)
    if form == "type":
        return VALUE_CLASSES[_public(data["type"], VALUE_CLASSES, "an acesim value class")]
    if form == "function":
        return _function(data, trust)
    raise ValueError(
        f"provenance: {data['unserialisable']} was not serialisable (a compiled policy, a "
        "lambda or a class without a public constructor form); pass it again by hand"
    )


#: The entries of a provenance dict that hold encoded objects.
ENCODED = ("arguments", "batch_arguments", "fleet_model", "calls")


def check(provenance: Mapping[str, Any]) -> None:
    """Checks, building nothing, that every name in a provenance dict's
    encoded entries (:data:`ENCODED`) is in the tables or is a well-formed
    user callable name (left unresolved): what
    :func:`acesim.results_io.load_result` runs on a file's provenance.
    Raises :class:`~acesim.UntrustedNameError` naming the first name
    refused."""
    if not isinstance(provenance, Mapping):
        raise TypeError(f"provenance must be a dict, got {type(provenance).__name__}")
    for key in ENCODED:
        if key in provenance:
            _check(provenance[key])


def _check(data: Any) -> None:
    if isinstance(data, list):
        for v in data:
            _check(v)
        return
    if not isinstance(data, Mapping) or not data:
        return
    form = next((key for key in _FORMS if key in data), None)
    inner: list[Any] = []
    if form == "tuple":
        inner = [data["tuple"]]
    elif form == "dict" and isinstance(data["dict"], Mapping):
        inner = list(data["dict"].values())
    elif form == "enum":
        _public(data["enum"], ENUMS, "a public acesim enum")
    elif form == "type":
        _public(data["type"], VALUE_CLASSES, "an acesim value class")
    elif form == "function":
        _callable_name(data)
    elif form == "call":
        name, args = data["call"], data.get("args")
        if name == _BY_KEYWORDS and isinstance(args, list) and args:
            _public(_named(args[0]), VALUE_CLASSES, "an acesim value class")
            args = args[1:]
        elif name != _NODE_TRACE:
            _public(name, VALUE_CLASSES, "an acesim value class")
        inner = [args]
        for how in ("kwargs", "state"):
            values = data.get(how)
            if isinstance(values, Mapping):
                inner.extend(values.values())
    for v in inner:
        _check(v)


def reproduce(provenance: Mapping[str, Any], *, trust: bool = False, **overrides: Any) -> Any:
    """Runs :func:`acesim.simulate` (or :func:`acesim.batch_simulate`, for
    a batch result) again with a result's provenance (``overrides`` replace
    arguments, e.g. ``replicas``). A user callable it names (a policy
    callback) is resolved only with ``trust=True`` (see :func:`rebuild`)."""
    from .simulation import batch_simulate, simulate

    run: Any = simulate
    key = "arguments"
    if "batch_arguments" in provenance:
        run, key = batch_simulate, "batch_arguments"
    if key not in provenance:
        raise ValueError(
            "provenance: no 'arguments' (this result was not made by simulate or batch_simulate)"
        )
    kwargs = rebuild(provenance[key], trust=trust)
    if not isinstance(kwargs, dict):
        raise ValueError("provenance: 'arguments' must describe a dict of simulate arguments")
    kwargs.update(overrides)
    return run(**kwargs)
