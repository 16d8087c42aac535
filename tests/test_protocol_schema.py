"""The protocol's JSON Schema is generated from the model's declarations.

``protocol.schema.json`` is what :mod:`acesim._protocol_schema` writes:
the model's definitions from :mod:`acesim._vocabulary`, the messages from
``_protocol_messages.json``. The recorded transcripts' requests and replies
match the generated schema, and its model definitions name exactly the
fields the protocol's reader takes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acesim import _protocol_schema, _vocabulary, serve
from schema_subset import Validator

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"
GENERATED = _protocol_schema.generate()


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = (ROOT / "python" / "acesim" / serve.SCHEMA_FILE).read_text(encoding="utf-8")
    assert shipped == _protocol_schema.text()
    assert serve.schema() == GENERATED
    assert _protocol_schema.main(["--check"]) == 0


def test_the_template_leaves_every_model_definition_to_the_declarations() -> None:
    raw = (ROOT / "python" / "acesim" / _protocol_schema.MESSAGES_FILE).read_text()
    template = json.loads(raw)
    placed = [name for name, value in template["$defs"].items() if value == "@model"]
    assert sorted(placed) == sorted(_protocol_schema.model_schema())
    assert "law" in placed and "job" in placed and "fleet" in placed


def test_every_law_family_is_in_the_schema_with_its_declared_fields() -> None:
    branches = GENERATED["$defs"]["law"]["anyOf"][1:]
    assert [b["properties"]["law"]["const"] for b in branches] == list(_vocabulary.LAWS)
    gang = branches[list(_vocabulary.LAWS).index("gang")]
    units = gang["properties"]["units"]
    assert (units["type"], units["minimum"]) == ("integer", 1)
    assert units["description"] == _vocabulary.LAWS["gang"].field("units").doc
    assert gang["required"] == ["law", "base", "units"]


def test_fields_carry_their_documentation_unit_and_default() -> None:
    """The annotations come from the declarations and the constructors."""
    job = GENERATED["$defs"]["job"]["properties"]
    assert job["init"]["default"] == 120.0  # Job(init=120.0)
    assert job["init"]["description"].endswith("[s]")
    fleet = GENERATED["$defs"]["fleet"]["properties"]
    assert fleet["gpus_per_node"]["default"] == 8
    assert fleet["storage_bandwidth"]["description"].endswith("[bytes/s]")
    assert "default" not in fleet["cold_spares"]  # the protocol narrows it to 0


def test_refused_fields_are_not_in_the_schema() -> None:
    defs = GENERATED["$defs"]
    assert set(defs["policy"]["properties"]) == {"quarantine"}
    assert "submit" not in defs["job"]["properties"]
    assert "time_limit" not in defs["job"]["properties"]
    assert "submit" in defs["arriving_job"]["properties"]
    assert "time_limit" not in defs["arriving_job"]["properties"]


def _pairs(name: str) -> list[tuple[Any, Any]]:
    out = []
    for line in (TRANSCRIPTS / f"{name}.jsonl").read_text().splitlines():
        entry = json.loads(line)
        out.append((json.loads(entry["request"]), json.loads(entry["reply"])))
    return out


@pytest.mark.parametrize("name", ["requests", "stepping"])
def test_every_recorded_exchange_matches_the_generated_schema(name: str) -> None:
    validator = Validator(GENERATED)
    pairs = _pairs(name)
    assert pairs
    for request, reply in pairs:
        validator.validate(reply, "#/$defs/reply")
        if reply["ok"]:
            validator.validate(request, "#/$defs/request")
            validator.validate(reply["result"], f"#/$defs/result_{request['type']}")


def test_a_gang_law_validates_and_a_file_does_not() -> None:
    validator = Validator(GENERATED)
    ok = {"law": "gang", "base": {"law": "weibull", "shape": 0.7, "scale": "2d"}, "units": 8}
    assert validator.errors(ok, {"$ref": "#/$defs/law"}, "$") == []
    for bad in (
        {"law": "gang", "base": "1h"},
        {"law": "gang", "base": "1h", "units": 0},
        {"law": "empirical", "csv": "x.csv"},
        {"history": "h.csv"},
    ):
        assert validator.errors(bad, {"$ref": "#/$defs/law"}, "$") != [], bad
