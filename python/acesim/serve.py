"""The language-neutral protocol: ``acesim serve --stdio``.

A scheduler written in any language drives :class:`acesim.FleetModel`
through a subprocess: it writes one JSON object per line on the server's
standard input (a request) and reads one JSON object per line from its
standard output (the reply), request by request, in the request-reply style
of Batsim. The protocol is described on the documentation's protocol page
(:doc:`/protocol`) and, as a JSON Schema (draft 2020-12), in
``protocol.schema.json`` shipped beside this module (:func:`schema`, or
``acesim serve --schema``).

- A request is ``{"id": <integer or string>, "type": <request type>, ...}``
  (its other fields are the request type's); the reply echoes the id:
  ``{"id": ..., "ok": true, "result": {...}}`` or ``{"id": ..., "ok":
  false, "error": {"type": ..., "message": ..., "field": ...}}``, ``field``
  naming the request's field at fault (``"job.tiers[0].save.scale"``).
- Every line gets exactly one reply, in order; an error reply never ends
  the server. End of input ends it cleanly (exit status 0), as does a
  ``shutdown`` request. A line longer than :data:`MAX_LINE_BYTES` (16 MiB)
  is dropped unread and answered with one ``ParseError``.
- Durations are numbers of seconds or strings with a unit (``"30min"``,
  ``"7.9h"``, ``"2d"``; see :func:`acesim.units.parse_duration`); a number
  that may be infinite is written ``"Infinity"`` (and in replies
  ``"-Infinity"``, ``"NaN"``), as in the protobuf JSON mapping.
- Models are numbered from 1; several live in one server (``create``,
  ``copy``) until ``close``.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, BinaryIO

import numpy.typing as npt

from . import __version__
from ._vocabulary import FILE_KEYS, RECORDS, Declaration, Field
from ._vocabulary import LAWS as VOCABULARY_LAWS
from .distributions import (
    Constant,
    Distribution,
    _did_you_mean,
)
from .fleet import LLAMA3_CAUSES, Cause, Fleet, NodeTrace
from .fleet_model import EVENT_KINDS, Event, FleetModel, NodeState
from .job import INTERVAL_RULES, interval_rule
from .repair import Repair
from .simulation import SimulationResult
from .units import DURATION_UNITS, parse_duration

__all__ = [
    "ERROR_TYPES",
    "LAWS",
    "MAX_LINE_BYTES",
    "PROTOCOL",
    "REQUESTS",
    "TABLES",
    "ProtocolError",
    "Server",
    "main",
    "schema",
    "schema_text",
    "serve",
]

#: The protocol's version (``hello`` reports it; a change that breaks a
#: client raises it).
PROTOCOL = 1

#: The request types, in the order the documentation gives them.
REQUESTS: tuple[str, ...] = (
    "hello",
    "schema",
    "create",
    "submit",
    "add_jobs",
    "start",
    "stop",
    "requeue",
    "resize",
    "advance",
    "peek",
    "now",
    "free_nodes",
    "nodes_of",
    "state",
    "node_states",
    "down_nodes",
    "running",
    "waiting",
    "queued",
    "copy",
    "result",
    "close",
    "shutdown",
)

#: What an error reply's ``type`` may be: the line is not JSON
#: (``ParseError``); it is not a request, its type is unknown, or a field is
#: missing, unknown or given twice (``RequestError``); a field has the wrong JSON type
#: (``TypeError``); a value is out of range or refused by the model in its
#: state, an unknown model id included (``ValueError``); anything else, a
#: bug (``InternalError``).
ERROR_TYPES: tuple[str, ...] = (
    "ParseError",
    "RequestError",
    "TypeError",
    "ValueError",
    "InternalError",
)

#: Tables ``result`` can return; ``summary`` is :meth:`SimulationResult.summary`.
TABLES: tuple[str, ...] = ("jobs", "fleet", "trace", "events", "placements", "summary")
DEFAULT_TABLES: tuple[str, ...] = ("jobs", "fleet", "trace")

SCHEMA_FILE = "protocol.schema.json"
#: The longest request line the server reads (bytes, its newline included):
#: a longer line is dropped unread and answered with one ParseError.
MAX_LINE_BYTES = 16 << 20
INFINITY = "Infinity"

Reader = Callable[[Any, str], Any]
_ABSENT: Any = object()


class ProtocolError(Exception):
    """A request that gets an error reply: ``kind`` (one of
    :data:`ERROR_TYPES`), ``message`` and ``field`` (the field at fault,
    ``None`` when the line itself is)."""

    def __init__(self, kind: str, message: str, field: str | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.field = field


def schema_text() -> str:
    """The text of the protocol's JSON Schema file, as shipped in the package."""
    return resources.files("acesim").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The protocol's JSON Schema (draft 2020-12), as shipped in the package."""
    out: dict[str, Any] = json.loads(schema_text())
    return out


# --------------------------------------------------------------------------
# Reading JSON values
# --------------------------------------------------------------------------


def _join(path: str, key: str) -> str:
    if not path:
        return key
    return path + key if key.startswith("[") else f"{path}.{key}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _type_error(path: str, expected: str, value: Any) -> ProtocolError:
    return ProtocolError("TypeError", f"{path} must be {expected}, got {_json_type(value)}", path)


def _value_error(path: str, message: str) -> ProtocolError:
    return ProtocolError("ValueError", f"{path} {message}", path)


def _integer(value: Any, path: str) -> int:
    """A JSON integer (a number with no fraction, e.g. 2.0, counts, as in JSON Schema)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(path, "an integer", value)
    if isinstance(value, float):
        if not value.is_integer():
            raise _type_error(path, "an integer", value)
        return int(value)
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(path, "a number", value)
    try:
        return float(value)
    except OverflowError:
        raise _value_error(path, "is too large for a double") from None


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _type_error(path, "a boolean", value)
    return value


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _type_error(path, "a string", value)
    return value


def _duration(value: Any, path: str, *, infinite: bool = False) -> float:
    """Seconds: a number >= 0 or a string with a unit; ``"Infinity"`` too
    where ``infinite``."""
    expected = 'a duration (seconds, or a string such as "30min"' + (
        ', or "Infinity")' if infinite else ")"
    )
    if isinstance(value, str):
        if infinite and value == INFINITY:
            return math.inf
        try:
            return parse_duration(value, path)
        except ValueError as exc:
            raise ProtocolError("ValueError", str(exc), path) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(path, expected, value)
    x = _number(value, path)
    if x < 0:
        raise _value_error(path, f"must be >= 0 seconds, got {value!r}")
    return x


_infinite_duration = functools.partial(_duration, infinite=True)


def _array(read: Reader) -> Reader:
    def read_array(value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise _type_error(path, "an array", value)
        return [read(item, f"{path}[{k}]") for k, item in enumerate(value)]

    return read_array


class _Fields:
    """The fields of a JSON object, read one by one; :meth:`finish` refuses
    the ones not read (unknown fields)."""

    def __init__(self, value: Any, path: str, refused: dict[str, str] | None = None) -> None:
        if not isinstance(value, dict):
            raise _type_error(path, "an object", value)
        self.value: dict[str, Any] = value
        self.path = path
        self.known: list[str] = []
        self.refused = refused or {}

    def required(self, key: str, read: Reader) -> Any:
        self.known.append(key)
        path = _join(self.path, key)
        if key not in self.value:
            raise ProtocolError("RequestError", f"{path} is required", path)
        return read(self.value[key], path)

    def optional(self, key: str, read: Reader, default: Any = None) -> Any:
        """The field read, or ``default`` when it is absent or null."""
        self.known.append(key)
        value = self.value.get(key)
        return default if value is None else read(value, _join(self.path, key))

    def take(self, spec: dict[str, Reader], required: Sequence[str] = ()) -> dict[str, Any]:
        """The fields of ``spec`` that are given (``required`` ones must be)."""
        out = {}
        for key, read in spec.items():
            value = (
                self.required(key, read) if key in required else self.optional(key, read, _ABSENT)
            )
            if value is not _ABSENT:
                out[key] = value
        return out

    def finish(self) -> None:
        for key in self.value:
            if key in self.known:
                continue
            path = _join(self.path, key)
            if key in self.refused:
                raise ProtocolError("RequestError", f"{path}: {self.refused[key]}", path)
            fields = ", ".join(self.known) or "none"
            hint = _did_you_mean(key, self.known)
            raise ProtocolError(
                "RequestError", f"{path} is not a field here{hint} (the fields: {fields})", path
            )


_TOKEN = re.compile(r"([A-Za-z_]\w*)(?:\[\d+\])*(?:\.[A-Za-z_]\w*(?:\[\d+\])*)*")


def _named(
    exc: Exception, path: str, keys: Sequence[str], fallback: str | None = None
) -> ProtocolError:
    """An exception of a constructor called with ``keys`` (the fields of the
    object at ``path``) as an error naming the field its message starts with
    (acesim's messages do), else ``fallback`` (or ``path``)."""
    kind = "TypeError" if isinstance(exc, TypeError) else "ValueError"
    message = str(exc)
    m = _TOKEN.match(message)
    if m is not None and m.group(1) in keys:
        field = _join(path, m.group(0))
        return ProtocolError(kind, field + message[m.end() :], field)
    field = fallback if fallback is not None else path
    return ProtocolError(kind, f"{field}: {message}" if field else message, field or None)


def _build(
    path: str, keys: Sequence[str], make: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    try:
        return make(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        raise _named(exc, path, keys) from None


# --------------------------------------------------------------------------
# Laws, fleets, causes, policies, jobs
# --------------------------------------------------------------------------


def _reader(f: Field) -> Reader:
    """How the protocol reads a field of kind ``f.kind`` (one reader per kind)."""
    kind = f.kind
    if kind in _KIND_READERS:
        return _KIND_READERS[kind]
    if kind == "record":
        return _record(RECORDS[f.of])
    if kind == "records":
        return _array(_record(RECORDS[f.of]))
    raise ValueError(f"{f.name}: the protocol has no reader for kind {kind!r}")  # node_failures


def _record(d: Declaration, accept: tuple[str, ...] = ()) -> Reader:
    """The reader of a record of declaration ``d``: its fields the protocol
    takes (``accept``: refused ones it takes here), the refused ones refused
    with their reason, then the constructor called."""
    spec = _spec(d, accept)
    refused = {f.name: f.refused for f in d.fields if f.refused and f.name not in accept}

    def read(value: Any, path: str) -> Any:
        f = _Fields(value, path, refused)
        kwargs = f.take(spec, d.required)
        f.finish()
        return _build(path, tuple(spec), d.build, **d.kwargs(kwargs))

    return read


def _spec(
    d: Declaration, accept: tuple[str, ...] = (), skip: tuple[str, ...] = ()
) -> dict[str, Reader]:
    """The readers of the fields of ``d`` the protocol takes."""
    return {
        f.name: _reader(f)
        for f in d.fields
        if (not f.refused or f.name in accept) and f.name not in skip
    }


def _law_maker(d: Declaration) -> Callable[..., Distribution]:
    def make(**kwargs: Any) -> Distribution:
        law: Distribution = d.build(**d.kwargs(kwargs))
        return law

    make.__name__ = d.name
    return make


#: Law families: name -> (constructor, fields, required fields), from
#: :data:`acesim._vocabulary.LAWS`.
LAWS: dict[str, tuple[Callable[..., Distribution], dict[str, Reader], tuple[str, ...]]] = {}


def _law(value: Any, path: str) -> Distribution:
    """A law: seconds or a duration string (a constant), or ``{"law": family, ...}``."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return Constant(_duration(value, path))
    if not isinstance(value, dict):
        raise _type_error(
            path, 'a law (seconds, a duration such as "30min", or {"law": ...})', value
        )
    for key in FILE_KEYS:
        if key in value:
            where = _join(path, key)
            raise ProtocolError("RequestError", f"{where}: {FILE_KEYS[key]}", where)
    f = _Fields(value, path)
    family = f.required("law", _string)
    if family not in LAWS:
        raise _value_error(
            _join(path, "law"),
            f"must be one of {', '.join(LAWS)}, got {family!r}{_did_you_mean(family, tuple(LAWS))}",
        )
    make, spec, required = LAWS[family]
    kwargs = f.take(spec, required)
    f.finish()
    law: Distribution = _build(path, tuple(spec), make, **kwargs)
    return law


def _repair(value: Any, path: str) -> Distribution | Repair:
    """A repair law, or a pipeline ``{"stages": [...], "misdiagnosis": p}``."""
    if isinstance(value, dict) and "law" not in value and "stages" in value:
        repair: Repair = _record(RECORDS["pipeline"])(value, path)
        return repair
    return _law(value, path)


_NODE_ID = re.compile(r"0|[1-9][0-9]*")


def _node_series(value: Any, path: str) -> dict[int, list[float]]:
    if not isinstance(value, dict):
        raise _type_error(path, 'an object of node id -> durations ({"0": [3600]})', value)
    out = {}
    for key, series in value.items():
        sub = _join(path, key)
        if not _NODE_ID.fullmatch(key):
            raise _value_error(sub, "is not a node id (a decimal integer >= 0)")
        out[int(key)] = _array(_duration)(series, sub)
    return out


def _node_failures(value: Any, path: str, nodes: int) -> Distribution | NodeTrace:
    """A law, or a trace ``{"times": {node: [...]}}`` / ``{"gaps": {...}}``."""
    if isinstance(value, dict) and "law" not in value and ("times" in value or "gaps" in value):
        f = _Fields(value, path)
        if "times" in value and "gaps" in value:
            raise ProtocolError(
                "RequestError",
                f"{_join(path, 'gaps')}: give times or gaps, not both",
                path + ".gaps",
            )
        kind = "times" if "times" in value else "gaps"
        series = f.required(kind, _node_series)
        model = f.optional("model", _law)
        f.finish()
        make = NodeTrace.from_times if kind == "times" else NodeTrace.from_gaps
        trace: NodeTrace = _build(path, (kind, "model"), make, series, nodes, model=model)
        return trace
    return _law(value, path)


def _nodes_or_all(value: Any, path: str) -> Any:
    if value == "all":
        return "all"
    if not isinstance(value, list):
        raise _type_error(path, 'an array of node ids or "all"', value)
    return _array(_integer)(value, path)


def _interval(value: Any, path: str) -> float | str:
    rule = interval_rule(value) if isinstance(value, str) else None
    if rule is not None:
        return rule
    if isinstance(value, str):
        try:
            return parse_duration(value, path)
        except ValueError as exc:
            raise ProtocolError(
                "ValueError", f"{exc}; or one of {', '.join(INTERVAL_RULES)} (any case)", path
            ) from None
    return _duration(value, path)


#: The reader of each kind of field (:data:`acesim._vocabulary.KINDS`; a
#: record's is made from its declaration; ``enum`` and ``code`` fields are
#: the outside scheduler's or name code, and the protocol refuses them).
_KIND_READERS: dict[str, Reader] = {
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "string": _string,
    "choice": _string,
    "duration": _duration,
    "duration_inf": _infinite_duration,
    "durations": _array(_duration),
    "durations_inf": _array(_infinite_duration),
    "interval": _interval,
    "law": _law,
    "repair": _repair,
    "node_set": _nodes_or_all,
}

LAWS.update((name, (_law_maker(d), _spec(d), d.required)) for name, d in VOCABULARY_LAWS.items())

FLEET_FIELDS: dict[str, Reader] = _spec(RECORDS["fleet"], skip=("nodes", "node_failures"))


def _fleet(value: Any, path: str) -> Fleet:
    f = _Fields(value, path)
    nodes = f.required("nodes", _integer)
    if nodes < 1:
        raise _value_error(_join(path, "nodes"), f"must be >= 1, got {nodes}")
    kwargs = f.take(FLEET_FIELDS)
    failures = f.optional("node_failures", lambda v, p: _node_failures(v, p, nodes))
    f.finish()
    keys = ("nodes", "node_failures", *FLEET_FIELDS)
    fleet: Fleet = _build(path, keys, Fleet, nodes, node_failures=failures, **kwargs)
    return fleet


CAUSE_FIELDS: dict[str, Reader] = _spec(RECORDS["cause"])
_cause = _record(RECORDS["cause"])


def _causes(value: Any, path: str) -> Sequence[Cause]:
    """An array of causes, or ``"llama3"`` (:data:`acesim.LLAMA3_CAUSES`)."""
    if value == "llama3":
        return LLAMA3_CAUSES
    if isinstance(value, str):
        raise _value_error(path, f'must be an array of causes or "llama3", got {value!r}')
    if not isinstance(value, list):
        raise _type_error(path, 'an array of causes or "llama3"', value)
    causes: list[Cause] = _array(_cause)(value, path)
    return causes


_policy = _record(RECORDS["policy"])

JOB_FIELDS: dict[str, Reader] = _spec(RECORDS["job"])
JOB_REFUSED = {f.name: f.refused for f in RECORDS["job"].fields if f.refused}
_job = _record(RECORDS["job"])

#: add_jobs's job: a job's fields and the time it arrives.
ARRIVING_JOB_FIELDS: dict[str, Reader] = {**JOB_FIELDS, "submit": _duration}
_arriving_job = _record(RECORDS["job"], accept=("submit",))


# --------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------


def _num(x: float) -> float | str:
    """A float for JSON: non-finite values as the protobuf JSON mapping writes them."""
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "NaN"
    return INFINITY if x > 0 else "-Infinity"


def _event(e: Event) -> dict[str, Any]:
    return {
        "time": e.time,
        "kind": e.kind,
        "job": e.job,
        "nodes": list(e.nodes),
        "cause": e.cause,
        "fault_time": e.fault_time,
        "progress": e.progress,
        "durable": e.durable,
        "held": list(e.held),
    }


def _rows(table: npt.NDArray[Any]) -> list[dict[str, Any]]:
    """A structured array as a list of objects."""
    names = list(table.dtype.names or ())
    columns = []
    for name in names:
        column = table[name]
        values = column.tolist()
        if column.dtype.kind == "f":
            values = [v if math.isfinite(v) else _num(v) for v in values]
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _tables(res: SimulationResult, tables: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in tables:
        if name == "summary":
            out[name] = {k: _num(v) for k, v in res.summary().items()}
        else:
            out[name] = _rows(getattr(res, name))
    return out


def _table_names(value: Any, path: str) -> list[str]:
    names: list[str] = _array(_string)(value, path)
    for k, name in enumerate(names):
        if name not in TABLES:
            raise _value_error(f"{path}[{k}]", f"must be one of {', '.join(TABLES)}, got {name!r}")
        if name in names[:k]:
            raise _value_error(f"{path}[{k}]", f"names {name!r} twice")
    return names


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


def _request_id(value: Any) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _type_error("id", "an integer or a string", value)
    return value


def _model_error(
    exc: Exception, op: str, keys: Sequence[str], fallback: str, nodes: Sequence[int] = ()
) -> ProtocolError:
    """A FleetModel error of request ``op`` as an error naming its field:
    ``job`` / ``for_job`` / ``until`` / ``nodes[k]`` (the node a message
    names), else ``fallback``."""
    kind = "TypeError" if isinstance(exc, TypeError) else "ValueError"
    message = str(exc)
    body = message[len(op) + 2 :] if message.startswith(op + ": ") else message
    m = _TOKEN.match(body)
    word = m.group(1) if m is not None else ""
    if m is not None and m.group(1) in keys and m.group(1) != "job":
        field = m.group(0)  # nodes[1], for_job, until
    elif word == "node" and "nodes" in keys:
        n = re.match(r"node (\d+)", body)
        where = [k for k, x in enumerate(nodes) if n is not None and x == int(n.group(1))]
        if " given twice" in body:
            where = where[1:]  # the second mention is the fault
        field = f"nodes[{where[0]}]" if where else "nodes"
    elif word == "job" and "job" in keys:
        field = "nodes" if " needs " in body and "nodes" in keys else "job"
    else:
        field = fallback
    return ProtocolError(kind, body if body.startswith(field) else f"{field}: {body}", field)


class Server:
    """The protocol's state: the models by id. :meth:`reply` answers one
    request line (it never raises); :attr:`done` is set by ``shutdown``."""

    def __init__(self) -> None:
        self.models: dict[int, FleetModel] = {}
        self.done = False
        self._next_model = 1
        self._handlers: dict[str, Callable[[_Fields], dict[str, Any]]] = {
            name: getattr(self, f"_{name}") for name in REQUESTS
        }

    # --- lines ------------------------------------------------------------

    def reply(self, line: bytes | str) -> dict[str, Any]:
        """The reply to one request line."""
        rid: int | str | None = None
        try:
            request, twice = _parse(line)
            if not isinstance(request, dict):
                raise ProtocolError(
                    "RequestError",
                    f"a request must be a JSON object, got {_json_type(request)}",
                    None,
                )
            if "id" not in request:
                raise ProtocolError("RequestError", "id is required", "id")
            if twice != "id":
                rid = _request_id(request["id"])
            if twice is not None:
                raise ProtocolError("RequestError", f"{twice} is given twice", twice)
            f = _Fields(request, "")
            f.known.append("id")
            kind = f.required("type", _string)
            handler = self._handlers.get(kind)
            if handler is None:
                raise ProtocolError(
                    "RequestError",
                    f"type {kind!r} is not a request type (the types: {', '.join(REQUESTS)})",
                    "type",
                )
            return {"id": rid, "ok": True, "result": handler(f)}
        except ProtocolError as exc:
            error = {"type": exc.kind, "message": exc.message, "field": exc.field}
        except Exception as exc:  # a bug: answered, and the server goes on
            error = {
                "type": "InternalError",
                "message": f"{type(exc).__name__}: {exc}",
                "field": None,
            }
        return {"id": rid, "ok": False, "error": error}

    # --- requests -----------------------------------------------------------

    def _model(self, f: _Fields) -> tuple[int, FleetModel]:
        mid = f.required("model", _integer)
        model = self.models.get(mid)
        if model is None:
            raise _value_error("model", f"{mid} does not exist (never created, or closed)")
        return mid, model

    def _add(self, model: FleetModel) -> dict[str, Any]:
        mid = self._next_model
        self._next_model += 1
        self.models[mid] = model
        return {"model": mid}

    def _hello(self, f: _Fields) -> dict[str, Any]:
        protocol = f.optional("protocol", _integer)
        f.finish()
        if protocol is not None and protocol != PROTOCOL:
            raise _value_error(
                "protocol", f"{protocol} is not spoken here (this server: {PROTOCOL})"
            )
        return {
            "protocol": PROTOCOL,
            "acesim": __version__,
            "requests": list(REQUESTS),
            "event_kinds": list(EVENT_KINDS),
            "laws": list(LAWS),
            "interval_rules": list(INTERVAL_RULES),
            "duration_units": list(DURATION_UNITS),
            "tables": list(TABLES),
            "error_types": list(ERROR_TYPES),
            "models": sorted(self.models),
        }

    def _schema(self, f: _Fields) -> dict[str, Any]:
        f.finish()
        return {"schema": schema()}

    def _create(self, f: _Fields) -> dict[str, Any]:
        fleet = f.required("fleet", _fleet)
        failures = f.optional("failures", _law)
        causes = f.optional("causes", _causes)
        policy = f.optional("policy", _policy)
        seed = f.optional("seed", _integer, 0)
        replica = f.optional("replica", _integer, 0)
        horizon = f.optional("horizon", _infinite_duration, math.inf)
        checkpoints = f.optional("checkpoints", _boolean, False)
        check_invariants = f.optional("check_invariants", _boolean, False)
        max_events = f.optional("max_events", _integer)
        f.finish()
        keys = ("fleet", "failures", "causes", "policy", "seed", "replica", "horizon", "max_events")
        try:
            model = FleetModel(
                fleet,
                failures,
                causes,
                policy,
                seed=seed,
                replica=replica,
                horizon=horizon,
                checkpoints=checkpoints,
                check_invariants=check_invariants,
                max_events=max_events,
            )
        except (ValueError, TypeError) as exc:
            raise _named(exc, "", keys, fallback="fleet") from None
        return self._add(model)

    def _submit(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _job)
        f.finish()
        try:
            jid = model.submit(job)
        except (ValueError, TypeError) as exc:
            message = re.sub(r"^(?:submit: )?jobs\[\d+\]\.", "", str(exc))
            raise _named(type(exc)(message), "job", tuple(JOB_FIELDS)) from None
        return {"job": jid, "nodes_needed": model.nodes_needed(jid)}

    def _add_jobs(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        jobs = f.required("jobs", _array(_arriving_job))
        f.finish()
        try:
            model.add_jobs(jobs)
        except (ValueError, TypeError) as exc:
            raise _named(exc, "", ("jobs",), fallback="jobs") from None
        return {}

    def _requeue(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        f.finish()
        try:
            model.requeue(job)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "requeue", ("job",), "job") from None
        return {}

    def _start(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        nodes = f.required("nodes", _array(_integer))
        f.finish()
        try:
            model.start(job, nodes)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "start", ("job", "nodes"), "job", nodes) from None
        return {}

    def _stop(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        for_job = f.optional("for_job", _integer)
        f.finish()
        try:
            model.stop(job, for_job)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "stop", ("job", "for_job"), "job") from None
        return {}

    def _resize(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        nodes = f.required("nodes", _array(_integer))
        f.finish()
        try:
            model.resize(job, nodes)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "resize", ("job", "nodes"), "job", nodes) from None
        return {}

    def _state(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        f.finish()
        try:
            state = model.state(job)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "state", ("job",), "job") from None
        return {"state": state}

    def _advance(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        until = f.required("until", _infinite_duration)
        whole_instant = f.optional("whole_instant", _boolean, True)
        f.finish()
        try:
            events = model.advance(until, whole_instant=whole_instant)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "advance", ("until",), "until") from None
        return {"events": [_event(e) for e in events], "now": _num(model.now)}

    def _peek(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"time": _num(model.peek())}

    def _now(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"now": _num(model.now)}

    def _free_nodes(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"nodes": model.free_nodes()}

    def _nodes_of(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        job = f.required("job", _integer)
        f.finish()
        try:
            nodes = model.nodes_of(job)
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "nodes_of", ("job",), "job") from None
        return {"nodes": nodes}

    def _node_states(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"states": [NodeState(int(s)).name.lower() for s in model.node_states()]}

    def _down_nodes(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"nodes": model.down_nodes()}

    def _running(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"jobs": model.running()}

    def _waiting(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"jobs": model.waiting()}

    def _queued(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return {"jobs": model.queued()}

    def _copy(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        f.finish()
        return self._add(model.copy())

    def _result(self, f: _Fields) -> dict[str, Any]:
        _, model = self._model(f)
        tables = f.optional("tables", _table_names, list(DEFAULT_TABLES))
        f.finish()
        try:
            res = model.result()
        except (ValueError, TypeError) as exc:
            raise _model_error(exc, "result", (), "model") from None
        return _tables(res, tables)

    def _close(self, f: _Fields) -> dict[str, Any]:
        mid, _ = self._model(f)
        f.finish()
        del self.models[mid]
        return {}

    def _shutdown(self, f: _Fields) -> dict[str, Any]:
        f.finish()
        self.done = True
        return {}


class _Twice(dict[str, Any]):
    """A JSON object that gives a key twice (``twice``: the first such key)."""

    twice: str


def _objects(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a :class:`_Twice` when a key is given twice (refused
    once the request id is known, with the key's full path)."""
    out: dict[str, Any] = {}
    twice = None
    for key, value in pairs:
        if key in out and twice is None:
            twice = key
        out[key] = value
    if twice is None:
        return out
    marked = _Twice(out)
    marked.twice = twice
    return marked


def _given_twice(request: Any) -> str | None:
    """The full field path (``job.tiers[0].save``) of the first key that an
    object of ``request`` gives twice, else None."""
    stack: list[tuple[str, Any]] = [("", request)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Twice):
            return _join(path, value.twice)
        if isinstance(value, dict):
            stack.extend((_join(path, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{path}[{k}]", v) for k, v in reversed(list(enumerate(value))))
    return None


def _finite(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ProtocolError("ParseError", f"number {text} is out of range for a double", None)
    return x


def _no_constant(text: str) -> Any:
    raise ProtocolError(
        "ParseError", f'not JSON: {text} (write a number that may be infinite as "Infinity")', None
    )


def _parse(line: bytes | str) -> tuple[Any, str | None]:
    """The request in ``line`` and the path of a key it gives twice (or None)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError("ParseError", f"not UTF-8: {exc}", None) from None
    text = line.strip(" \t\r\n")
    if not text:
        raise ProtocolError("ParseError", "an empty line (a request is one JSON object)", None)
    twice: list[bool] = []

    def objects(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = _objects(pairs)
        if isinstance(out, _Twice):
            twice.append(True)
        return out

    try:
        request = json.loads(
            text, object_pairs_hook=objects, parse_float=_finite, parse_constant=_no_constant
        )
        return request, _given_twice(request) if twice else None
    except ProtocolError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("ParseError", f"not JSON: {exc}", None) from None


def _too_long() -> dict[str, Any]:
    message = (
        f"a request line longer than {MAX_LINE_BYTES:,} bytes (the protocol's limit) "
        "was dropped unread"
    )
    return {
        "id": None,
        "ok": False,
        "error": {"type": "ParseError", "message": message, "field": None},
    }


def _dumps(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answers every line of ``stdin`` on ``stdout`` (one reply per line,
    flushed) until end of input or a ``shutdown`` request; returns 0."""
    server = Server()
    while not server.done:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            break
        if len(line) > MAX_LINE_BYTES:
            # Over the limit: the rest of the line is read in bounded pieces and
            # dropped, and the line gets one error reply; the server goes on.
            while line and not line.endswith(b"\n"):
                line = stdin.readline(1 << 16)
            reply = _too_long()
        else:
            reply = server.reply(line)
        try:
            data = _dumps(reply)
        except (TypeError, ValueError) as exc:  # a bug in a reply: still one line back
            data = _dumps(
                {
                    "id": reply.get("id"),
                    "ok": False,
                    "error": {"type": "InternalError", "message": str(exc), "field": None},
                }
            )
        stdout.write(data)
        stdout.flush()
    return 0


def main() -> int:
    """``acesim serve --stdio``: serves standard input and output. Anything
    else the process would print goes to standard error, so that standard
    output carries replies only."""
    stdin, stdout, saved = sys.stdin.buffer, sys.stdout.buffer, sys.stdout
    sys.stdout = sys.stderr
    try:
        return serve(stdin, stdout)
    except BrokenPipeError:  # the client went away
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout = saved
