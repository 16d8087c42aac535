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
[...]}`` (exact, whatever its size); an enum member as ``{"enum":
"acesim.policy.Replacement", "name": "SPARES"}`` (its module path); an
acesim model object (every distribution, ``Job``, ``JobArray``,
``CheckpointTier``, ``Cause``, ``NodeTrace``, ``Fleet``, ``Repair``,
``RepairStage``, ``Quarantine``, ``Policy``) as ``{"call":
"acesim.distributions.Weibull", "args": [...]}``: the constructor (or the
rebuilding function) and arguments that :mod:`copy` and :mod:`pickle` use,
from its public parameters; a class of acesim as ``{"type": path}``; a
module-level
Python function (a policy's ``on_failure``) as ``{"function":
"module:qualname"}``. What has no such form (a
:class:`~acesim.CompiledPolicy`, a lambda, a user subclass without
``__reduce__``) is ``{"unserialisable": repr}``, and :func:`rebuild` refuses
it with a message naming it.

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

from . import _pickle  # noqa: F401  (registers the model objects' reducers)

__all__ = ["describe", "rebuild", "reproduce"]

#: The version of this encoding (results carry it as ``format``).
FORMAT = 1


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_enum(value: Any) -> bool:
    # Python enums, and pybind11's (acesim.IntervalRule), which are not enum.Enum.
    return isinstance(value, enum.Enum) or (
        hasattr(type(value), "__members__") and isinstance(getattr(value, "name", None), str)
    )


def _resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def describe(value: Any) -> Any:
    """``value`` (simulate's arguments, or any part of them) as JSON data."""
    if value is None or isinstance(value, bool | str):
        return value
    if _is_enum(value):
        return {"enum": _qualified(type(value)), "name": value.name}
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
    if isinstance(value, type) and value.__module__.startswith("acesim."):
        return {"type": _qualified(value)}
    reducer = copyreg.dispatch_table.get(type(value))
    if reducer is not None and type(value).__module__.startswith("acesim."):
        try:
            reduced: Any = reducer(value)
        except TypeError:
            return {"unserialisable": repr(value)}
        build, args = reduced
        return {"call": _qualified(build), "args": [describe(a) for a in args]}
    if isinstance(value, types.FunctionType) and "<" not in value.__qualname__:
        return {"function": f"{value.__module__}:{value.__qualname__}"}
    return {"unserialisable": repr(value)}


def rebuild(data: Any) -> Any:
    """The objects :func:`describe` encoded, built again (validated again by
    their constructors). Raises ``ValueError`` for what was not serialisable."""
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [rebuild(v) for v in data]
    if not isinstance(data, Mapping) or len(data) == 0:
        raise ValueError(f"provenance: cannot rebuild {data!r}")
    if "float" in data:
        return float(data["float"])
    if "tuple" in data:
        return tuple(rebuild(v) for v in data["tuple"])
    if "dict" in data:
        return {k: rebuild(v) for k, v in data["dict"].items()}
    if "ndarray" in data:
        raw = base64.b64decode(data["ndarray"])
        return np.frombuffer(raw, dtype=np.dtype(data["dtype"])).reshape(data["shape"]).copy()
    if "enum" in data:
        return _resolve(data["enum"]).__members__[data["name"]]
    if "call" in data or "type" in data:
        path = data.get("call", data.get("type"))
        if not isinstance(path, str) or not path.startswith("acesim."):
            raise ValueError(f"provenance: {path!r} is not an acesim model object")
        target = _resolve(path)
        if "type" in data:
            return target
        return target(*[rebuild(a) for a in data["args"]])
    if "function" in data:
        module, _, name = data["function"].partition(":")
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    if "unserialisable" in data:
        raise ValueError(
            f"provenance: {data['unserialisable']} was not serialisable (a compiled policy, a "
            "lambda or a class without a public constructor form); pass it again by hand"
        )
    raise ValueError(f"provenance: cannot rebuild {data!r}")


def reproduce(provenance: Mapping[str, Any], **overrides: Any) -> Any:
    """Runs :func:`acesim.simulate` (or :func:`acesim.batch_simulate`, for
    a batch result) again with a result's provenance (``overrides`` replace
    arguments, e.g. ``replicas``)."""
    from .simulation import batch_simulate, simulate

    run: Any = simulate
    key = "arguments"
    if "batch_arguments" in provenance:
        run, key = batch_simulate, "batch_arguments"
    if key not in provenance:
        raise ValueError(
            "provenance: no 'arguments' (this result was not made by simulate or batch_simulate)"
        )
    kwargs = rebuild(provenance[key])
    if not isinstance(kwargs, dict):
        raise ValueError("provenance: 'arguments' must describe a dict of simulate arguments")
    kwargs.update(overrides)
    return run(**kwargs)
