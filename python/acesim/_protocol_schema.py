"""The protocol's JSON Schema, generated: ``python -m acesim._protocol_schema``.

``protocol.schema.json`` (shipped beside :mod:`acesim.serve`) is written by
this module, never by hand: the model's values (durations, laws, fleet,
causes, policy, jobs) come from the declarations of
:mod:`acesim._vocabulary`, and the protocol's messages (requests, results,
replies) from ``_protocol_messages.json``, in which each model definition
stands as ``"@model"``. ``tests/test_protocol_schema.py`` checks that the
shipped file is what this module generates.

``python -m acesim._protocol_schema`` rewrites the shipped file;
``--check`` exits 1 (naming the first line that differs) when it is stale.
"""

from __future__ import annotations

import json
import math
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from . import _atomic
from ._vocabulary import LAWS, RECORDS, Declaration, Field
from .job import INTERVAL_RULES
from .units import DURATION_PATTERN, DURATION_UNITS, _any_case

__all__ = ["MESSAGES_FILE", "SCHEMA_FILE", "generate", "main", "model_schema", "text"]

MESSAGES_FILE = "_protocol_messages.json"
SCHEMA_FILE = "protocol.schema.json"
_MODEL = "@model"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


#: The records the schema names in ``$defs`` (the others are written inline).
_NAMED = {"tier": "tier", "quarantine": "quarantine"}


def _bounds(f: Field, out: dict[str, Any]) -> dict[str, Any]:
    if f.low is not None:
        out["exclusiveMinimum" if f.low_open else "minimum"] = _plain(f.low)
    if f.high is not None:
        out["exclusiveMaximum" if f.high_open else "maximum"] = _plain(f.high)
    return out


def _plain(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def _interval_schema() -> dict[str, Any]:
    rules = "|".join(_any_case(r) for r in INTERVAL_RULES)
    names = ", ".join(INTERVAL_RULES[:-1]) + f" or {INTERVAL_RULES[-1]}"
    return {
        "anyOf": [
            _ref("duration"),
            {
                "type": "string",
                "pattern": f"^[ \\t]*(?:{rules})[ \\t]*$",
                "description": f"an interval rule: {names} (any case)",
            },
        ]
    }


def _value_schema(f: Field) -> dict[str, Any]:
    """The schema of a field's value (null not included)."""
    if f.wire is not None:
        return dict(f.wire)
    kind = f.kind
    if kind in ("integer", "number"):
        return _bounds(f, {"type": kind})
    if kind in ("boolean", "string"):
        return {"type": kind}
    if kind == "choice":
        return {"enum": list(f.choices)}
    if kind == "enum":
        return {"enum": [m.name.lower() for m in f.enum]}
    if kind == "duration":
        return _ref("duration")
    if kind == "duration_inf":
        return _ref("duration_or_infinity")
    if kind in ("durations", "durations_inf"):
        each = "duration" if kind == "durations" else "duration_or_infinity"
        return {"type": "array", "items": _ref(each), "minItems": 1}
    if kind == "interval":
        return _interval_schema()
    if kind in ("law", "repair", "node_failures"):
        return _ref(kind)
    if kind == "record":
        return _ref(_NAMED[f.of]) if f.of in _NAMED else _record_schema(RECORDS[f.of])
    if kind == "records":
        item = _ref(_NAMED[f.of]) if f.of in _NAMED else _record_schema(RECORDS[f.of])
        out: dict[str, Any] = {"type": "array", "items": item}
        if f.min_items:
            out["minItems"] = f.min_items
        if f.max_items is not None:
            out["maxItems"] = f.max_items
        return out
    if kind == "node_set":
        ids = {"type": "integer", "minimum": 0, "description": "a node id, 0 .. nodes - 1"}
        return {"anyOf": [{"type": "array", "items": ids, "minItems": 1}, {"const": "all"}]}
    raise ValueError(f"{f.name}: the protocol has no schema for kind {kind!r}")


def _field_schema(f: Field, defaults: dict[str, Any]) -> dict[str, Any]:
    """A field's schema, with its documentation, unit and default (the
    constructor's, where JSON writes it) as annotations; null where the
    field may be left out."""
    value = _value_schema(f)
    head: dict[str, Any] = {}
    if f.doc:
        head["description"] = f"{f.doc} [{f.unit}]" if f.unit else f.doc
    default = defaults.get(f.name)
    plain = isinstance(default, bool | str) or (
        isinstance(default, int | float) and math.isfinite(default)
    )
    if plain and f.wire is None:
        head["default"] = default
    return {**head, **(value if f.required else {"anyOf": [value, {"type": "null"}]})}


def _record_schema(
    d: Declaration,
    *,
    description: str | None = None,
    accept: tuple[str, ...] = (),
    head: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The schema of a record: its fields the protocol takes (``accept``:
    refused ones it takes here, required or not as the protocol's readers
    read them)."""
    props: dict[str, Any] = dict(head or {})
    required = list(head or {})
    defaults = d.defaults()
    for f in d.fields:
        if f.refused and f.name not in accept:
            continue
        props[f.name] = _field_schema(f, defaults)
        if f.required:
            required.append(f.name)
    out: dict[str, Any] = {}
    if description is not None:
        out["description"] = description
    out.update(
        {"type": "object", "properties": props, "required": required,
         "additionalProperties": False}
    )  # fmt: skip
    return out


def _law_schema() -> dict[str, Any]:
    branches = [_ref("duration")]
    for name, d in LAWS.items():
        branches.append(_record_schema(d, description=d.doc, head={"law": {"const": name}}))
    return {
        "description": "A probability law of a duration: a number of seconds or a duration "
        'string (a constant), or an object naming its family in "law".',
        "anyOf": branches,
    }


def _trace_schema(kind: str) -> dict[str, Any]:
    series = {
        "type": "object",
        "description": "node id (a decimal string) -> its durations",
        "propertyNames": {"pattern": "^(0|[1-9][0-9]*)$"},
        "additionalProperties": {"type": "array", "items": _ref("duration")},
    }
    return {
        "type": "object",
        "properties": {kind: series, "model": {"anyOf": [_ref("law"), {"type": "null"}]}},
        "required": [kind],
        "additionalProperties": False,
    }


def _duration_description() -> str:
    return (
        "A duration: a number of seconds >= 0, or a string of numbers with units (s, min, "
        "h, d, w; also ms, sec, m, hr, hour(s), day(s), week(s); any case), each unit at "
        'most once and the largest first: "30min", "7.9h", "2d", "1h30min", "1h 30min", '
        '"6H" (not "30min 1h" nor "1h 1h"). A bare number in a string is seconds.'
    )


def model_schema() -> dict[str, dict[str, Any]]:
    """The protocol's ``$defs`` of the model's values, generated from the
    declarations: durations, laws, repair, node failures, fleet, causes,
    quarantine, policy, tiers and jobs."""
    assert set(DURATION_UNITS) >= {"s", "min", "h", "d", "w"}
    job = RECORDS["job"]
    return {
        "duration": {
            "description": _duration_description(),
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "pattern": DURATION_PATTERN},
            ],
        },
        "infinity": {"const": "Infinity", "description": "positive infinity (no limit)"},
        "duration_or_infinity": {"anyOf": [_ref("duration"), _ref("infinity")]},
        "law": _law_schema(),
        "repair": {
            "description": "A repair law, or a pipeline of stages (acesim.Repair).",
            "anyOf": [_ref("law"), _record_schema(RECORDS["pipeline"])],
        },
        "node_failures": {
            "description": "Each node's inter-failure law, or a trace: failures at given "
            'wall-clock times per node ("times") or given draws per node ("gaps", the first '
            'from t = 0, each next from the node\'s return); "model": the law the trace '
            "stands for (its mean).",
            "anyOf": [_ref("law"), _trace_schema("times"), _trace_schema("gaps")],
        },
        "fleet": _record_schema(
            RECORDS["fleet"],
            description="acesim.Fleet (cold spares are the built-in scheduler's: refused "
            "by the model)",
        ),
        "cause": _record_schema(RECORDS["cause"], description="acesim.Cause"),
        "causes": {
            "description": 'Failure causes, or "llama3" (acesim.LLAMA3_CAUSES).',
            "anyOf": [
                {"type": "array", "items": _ref("cause"), "minItems": 1},
                {"const": "llama3"},
            ],
        },
        "quarantine": _record_schema(RECORDS["quarantine"], description=RECORDS["quarantine"].doc),
        "policy": _record_schema(RECORDS["policy"], description=RECORDS["policy"].doc),
        "tier": _record_schema(RECORDS["tier"], description="acesim.CheckpointTier"),
        "job": _record_schema(
            job,
            description="acesim.Job, submitted at the model's clock (no submit, no time_limit)",
        ),
        "arriving_job": _record_schema(
            job,
            description="acesim.Job with the time it arrives (submit: now when left out or "
            "past), for add_jobs (no time_limit)",
            accept=("submit",),
        ),
    }


def generate() -> dict[str, Any]:
    """The protocol's schema: the messages' template with the model's
    definitions filled in."""
    raw = resources.files("acesim").joinpath(MESSAGES_FILE).read_text(encoding="utf-8")
    template: dict[str, Any] = json.loads(raw)
    model = model_schema()
    defs: dict[str, Any] = {}
    for name, value in template["$defs"].items():
        if value == _MODEL:
            if name not in model:
                raise ValueError(f"{MESSAGES_FILE}: {name!r} is not a model definition")
            defs[name] = model.pop(name)
        else:
            defs[name] = value
    if model:
        raise ValueError(f"{MESSAGES_FILE}: no place for the model's {sorted(model)}")
    template["$defs"] = defs
    return template


def text() -> str:
    """The schema file's text (two-space indents, a final newline)."""
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: python -m acesim._protocol_schema [--check]", file=sys.stderr)
        return 2
    target = Path(__file__).with_name(SCHEMA_FILE)
    new = text()
    if args == ["--check"]:
        old = target.read_text(encoding="utf-8")
        if old == new:
            return 0
        for k, (a, b) in enumerate(zip(old.splitlines(), new.splitlines(), strict=False)):
            if a != b:
                print(f"{target}:{k + 1}: stale (run python -m acesim._protocol_schema)")
                break
        else:
            print(f"{target}: stale (run python -m acesim._protocol_schema)")
        return 1
    _atomic.replace_file(target, new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
