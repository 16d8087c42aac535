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
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from . import _atomic
from ._vocabulary import model_schema

__all__ = ["MESSAGES_FILE", "SCHEMA_FILE", "generate", "main", "text"]

MESSAGES_FILE = "_protocol_messages.json"
SCHEMA_FILE = "protocol.schema.json"
_MODEL = "@model"


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
