"""A validator for the subset of JSON Schema (draft 2020-12) that the
protocol's schema uses, so that the conformance tests need no dependency.
A keyword outside the subset is an error (the schema must stay within it);
where the ``jsonschema`` package is installed the tests check the schema
and the replies with it as well."""

from __future__ import annotations

import math
import re
from typing import Any

#: Keywords that only annotate.
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment", "default"}
KEYWORDS = {
    "$ref",
    "anyOf",
    "oneOf",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
}


class SchemaError(AssertionError):
    """An instance that does not match (its message gives the path)."""


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise SchemaError(f"unknown type {name!r}")


def _equal(a: Any, b: Any) -> bool:
    """JSON equality (1 == 1.0, but true != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b) and (isinstance(a, int | float) == isinstance(b, int | float))


class Validator:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolve(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#/"):
            raise SchemaError(f"only local references are supported, got {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node  # type: ignore[no-any-return]

    def validate(self, value: Any, schema: dict[str, Any] | str, path: str = "$") -> None:
        if isinstance(schema, str):
            schema = self.resolve(schema)
        errors = self.errors(value, schema, path)
        if errors:
            raise SchemaError("; ".join(errors[:5]))

    def errors(self, value: Any, schema: Any, path: str) -> list[str]:
        if schema is True:
            return []
        if schema is False:
            return [f"{path}: not allowed"]
        unknown = set(schema) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise SchemaError(f"keywords outside the subset: {sorted(unknown)}")
        out: list[str] = []
        if "$ref" in schema:
            out += self.errors(value, self.resolve(schema["$ref"]), path)
        if "anyOf" in schema:
            branches = [self.errors(value, s, path) for s in schema["anyOf"]]
            if all(branches):
                best = min(branches, key=len)
                out.append(f"{path}: matches none of anyOf ({'; '.join(best[:2])})")
        if "oneOf" in schema:
            branches = [self.errors(value, s, path) for s in schema["oneOf"]]
            matched = sum(1 for b in branches if not b)
            if matched != 1:
                best = min(branches, key=len)
                out.append(
                    f"{path}: matches {matched} of oneOf"
                    + (f" ({'; '.join(best[:2])})" if matched == 0 else "")
                )
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_is_type(value, n) for n in names):
                out.append(f"{path}: {value!r:.60} is not of type {names}")
                return out
        if "const" in schema and not _equal(value, schema["const"]):
            out.append(f"{path}: {value!r:.60} is not {schema['const']!r}")
        if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
            out.append(f"{path}: {value!r:.60} is not one of {schema['enum']}")
        if isinstance(value, dict):
            props = schema.get("properties", {})
            for key in schema.get("required", ()):
                if key not in value:
                    out.append(f"{path}: {key!r} is required")
            extra = schema.get("additionalProperties", True)
            for key, item in value.items():
                if key in props:
                    out += self.errors(item, props[key], f"{path}.{key}")
                else:
                    out += self.errors(item, extra, f"{path}.{key}")
                if "propertyNames" in schema:
                    out += self.errors(key, schema["propertyNames"], f"{path}[name {key!r}]")
        if isinstance(value, list):
            if "items" in schema:
                for k, item in enumerate(value):
                    out += self.errors(item, schema["items"], f"{path}[{k}]")
            if len(value) < schema.get("minItems", 0):
                out.append(f"{path}: fewer than {schema['minItems']} items")
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append(f"{path}: more than {schema['maxItems']} items")
            if schema.get("uniqueItems") and any(
                _equal(a, b) for i, a in enumerate(value) for b in value[i + 1 :]
            ):
                out.append(f"{path}: items are not unique")
        if isinstance(value, int | float) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(f"{path}: {value} < {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                out.append(f"{path}: {value} > {schema['maximum']}")
            if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
                out.append(f"{path}: {value} <= {schema['exclusiveMinimum']}")
            if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
                out.append(f"{path}: {value} >= {schema['exclusiveMaximum']}")
        if isinstance(value, str) and "pattern" in schema:
            # ECMA-262's $ is the end of the string; Python's also matches before a final newline.
            pattern = schema["pattern"]
            pattern = pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern
            if re.search(pattern, value) is None:
                out.append(f"{path}: {value!r:.60} does not match {schema['pattern']!r}")
        return out
