"""The JSON-lines protocol (``acesim serve --stdio``), driven from a subprocess.

1. The schema: shipped in the installed package, a valid draft 2020-12
   schema within the subset tests/schema_subset.py checks, naming what the
   server knows; every reply of these tests is validated against it.
2. Every request type, the documented example exchange (reply for reply),
   several models, end of input and shutdown.
3. Malformed requests: each gets an error reply naming the field (never a
   crash or a hang) and the server goes on answering; the schema rejects
   the structural ones.
4. One model, two drivers: a 10,000-step scheduler loop through the
   protocol and the same loop on FleetModel give identical events, job
   rows, fleet rows and traces; every law family and fleet feature the
   protocol describes builds the model the Python objects describe.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import serve
from acesim.fleet_model import EVENT_KINDS
from acesim.units import DURATION_PATTERN, parse_duration
from embedding_scheduler import (
    DAY,
    HOUR,
    MINUTE,
    Client,
    Direct,
    Remote,
    run_scheduler,
    server_command,
)
from schema_subset import Validator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = serve.schema()
VALIDATOR = Validator(SCHEMA)

try:
    import jsonschema  # type: ignore[import-untyped, unused-ignore]
except ImportError:  # pragma: no cover - depends on the environment
    jsonschema = None


def _jsonschema_for(name: str) -> Any:
    """A jsonschema validator of ``#/$defs/<name>`` (None without jsonschema)."""
    if jsonschema is None:
        return None
    root = {k: v for k, v in SCHEMA.items() if k != "anyOf"}
    return jsonschema.Draft202012Validator({**root, "$ref": f"#/$defs/{name}"})


JS_REPLY = _jsonschema_for("reply")
JS_REQUEST = _jsonschema_for("request")


def check(request: dict[str, Any] | None, reply: dict[str, Any]) -> None:
    """Every reply matches the schema, an ok reply's result matches its
    request type's result schema, and a request that succeeded matches the
    request schema."""
    VALIDATOR.validate(reply, "#/$defs/reply")
    if JS_REPLY is not None:
        JS_REPLY.validate(reply)
    if request is not None and reply["ok"]:
        VALIDATOR.validate(reply["result"], f"#/$defs/result_{request['type']}")
        VALIDATOR.validate(request, "#/$defs/request")
        if JS_REQUEST is not None:
            JS_REQUEST.validate(request)
    if not reply["ok"] and reply["error"]["field"] is not None:
        assert reply["error"]["message"].startswith(reply["error"]["field"]), reply


class Sampled:
    """:func:`check` on every ``every``-th reply, and every ok reply's result
    against its request type's result schema (the full check of 20,000
    replies would take longer than the run)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.seen = 0

    def __call__(self, request: dict[str, Any] | None, reply: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen % self.every == 0:
            check(request, reply)
        elif request is not None and reply["ok"]:
            VALIDATOR.validate(reply["result"], f"#/$defs/result_{request['type']}")


@pytest.fixture(scope="module")
def server() -> Iterator[Client]:
    client = Client(check=check)
    yield client
    rc, err = client.close()
    assert (rc, err) == (0, "")


def small_fleet() -> dict[str, Any]:
    return {"nodes": 4, "repair": "1h", "node_failures": {"gaps": {"0": [5000]}}}


def small_job(**fields: Any) -> dict[str, Any]:
    return {"gpus": 16, "work": "8h", "checkpoint_interval": "1h", "init": 0, **fields}


# --------------------------------------------------------------------------
# 1. The schema
# --------------------------------------------------------------------------


def test_the_schema_ships_in_the_installed_package() -> None:
    installed = resources.files("acesim").joinpath(serve.SCHEMA_FILE)
    assert installed.is_file()
    source = ROOT / "python" / "acesim" / serve.SCHEMA_FILE
    assert installed.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(SCHEMA)
    out = subprocess.run(
        [*server_command()[:-1], "--schema"], capture_output=True, text=True, check=True
    )
    assert out.stdout == source.read_text(encoding="utf-8")


def test_the_schema_stays_within_the_checked_subset() -> None:
    """Every keyword of the schema is one the subset validator knows."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            VALIDATOR.errors(None, node, "$")  # raises on a keyword outside the subset
            for key, value in node.items():
                if key in ("properties", "$defs"):
                    for sub in value.values():
                        walk(sub)
                elif key not in ("const", "enum", "required"):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(SCHEMA)


def test_the_schema_names_what_the_server_knows() -> None:
    defs = SCHEMA["$defs"]
    requests = [ref["$ref"].removeprefix("#/$defs/request_") for ref in defs["request"]["oneOf"]]
    assert tuple(requests) == serve.REQUESTS
    for name in serve.REQUESTS:
        assert f"result_{name}" in defs
    laws = [b["properties"]["law"]["const"] for b in defs["law"]["anyOf"][1:]]
    assert tuple(laws) == tuple(serve.LAWS)
    for branch, (_, fields, required) in zip(
        defs["law"]["anyOf"][1:], serve.LAWS.values(), strict=True
    ):
        assert set(branch["properties"]) == {"law", *fields}
        assert set(branch["required"]) == {"law", *required}
    assert tuple(defs["event"]["properties"]["kind"]["enum"]) == EVENT_KINDS
    assert tuple(defs["error"]["properties"]["type"]["enum"]) == serve.ERROR_TYPES
    assert set(defs["job"]["properties"]) == set(serve.JOB_FIELDS)
    assert set(defs["fleet"]["properties"]) == {"nodes", "node_failures", *serve.FLEET_FIELDS}
    assert set(defs["cause"]["properties"]) == set(serve.CAUSE_FIELDS)
    tables = defs["request_result"]["properties"]["tables"]["anyOf"][0]["items"]["enum"]
    assert tuple(tables) == serve.TABLES


@pytest.mark.parametrize(
    "text",
    ["30min", "7.9h", "2d", "1h30min", "90", "90 s", " 1.5 h ", "1e3s", ".5d", "2w", "3ms",
     "1H", "30 mins!", "", "abc", "-5min", "5 parsecs", "1h 2", "1h30", "inf", "NaN", "3 3",
     "30min\n", "٣h", "6H", "1h 30min", "1h 1h", "30min 1h", "1m 30min", "1 Hour 30 MIN",
     "young", "2w1d", "1ms5s"],
)  # fmt: skip
def test_the_duration_pattern_is_what_the_server_parses(text: str) -> None:
    pattern = SCHEMA["$defs"]["duration"]["anyOf"][1]["pattern"]
    try:
        parse_duration(text)
        parsed = True
    except ValueError:
        parsed = False
    matched = VALIDATOR.errors(text, {"type": "string", "pattern": pattern}, "$") == []
    assert parsed == matched, text


def test_the_duration_pattern_is_the_parsers_own() -> None:
    """One grammar: the schema's pattern is the regular expression the parser uses."""
    assert SCHEMA["$defs"]["duration"]["anyOf"][1]["pattern"] == DURATION_PATTERN


def test_durations_in_any_case_each_unit_once_largest_first() -> None:
    """6H = 6 * 3600; 1h 30min = 3600 + 1800; "30min 1h" and "1h 1h" are refused
    with the rule; "young" is an interval rule, not a duration."""
    assert parse_duration("6H") == 21600.0
    assert parse_duration("1h 30min") == parse_duration("1h30min") == 5400.0
    assert parse_duration("1 Hour 30 MIN") == 5400.0
    for bad in ("30min 1h", "1h 1h", "1m 30min"):
        with pytest.raises(ValueError, match="each unit at most once and the largest first"):
            parse_duration(bad, "work")
    for rule in ("young", "DALY", " Young "):
        with pytest.raises(ValueError, match="is an interval rule"):
            parse_duration(rule, "work")


def test_durations_with_units() -> None:
    assert parse_duration("1h30min") == 5400.0
    assert parse_duration("7.9h") == pytest.approx(7.9 * HOUR)
    assert parse_duration("30min") == 30 * MINUTE
    assert parse_duration("2d") == 2 * DAY
    assert parse_duration(" 90 s ") == parse_duration("90") == parse_duration(90) == 90.0
    for bad in ("", "2 days ago", "-1h", "1h30", "inf", "1h 1h", "30min 1h", "young", "DALY"):
        with pytest.raises(ValueError, match="work must be"):
            parse_duration(bad, "work")
    with pytest.raises(TypeError):
        parse_duration(True)


# --------------------------------------------------------------------------
# 2. Every request type
# --------------------------------------------------------------------------


def test_hello(server: Client) -> None:
    result = server.ok("hello")
    assert result["protocol"] == serve.PROTOCOL
    assert result["acesim"] == ace.__version__
    assert result["requests"] == list(serve.REQUESTS)
    assert result["event_kinds"] == list(EVENT_KINDS)
    assert server.ok("hello", protocol=1)["protocol"] == 1
    assert server.ok("schema")["schema"] == SCHEMA


def test_every_request_type() -> None:
    """A walk through every request type, results checked against
    FleetModel's own answers on the same model."""
    client = Client(check=check)
    used = set()

    def ok(kind: str, **fields: Any) -> Any:
        used.add(kind)
        return client.ok(kind, **fields)

    try:
        ok("hello")
        ok("schema")
        m = ok("create", fleet=small_fleet(), checkpoints=True, check_invariants=True)["model"]
        fleet = ace.Fleet(
            4, repair=ace.Constant(HOUR), node_failures=ace.NodeTrace.from_gaps({0: [5000.0]}, 4)
        )
        model = ace.FleetModel(fleet, checkpoints=True, check_invariants=True)
        job = ace.Job(16, 8 * HOUR, HOUR, init=0.0, save=60.0, load=60.0)
        assert ok("submit", model=m, job=small_job(save="1min", load=60))["job"] == model.submit(
            job
        )
        assert ok("free_nodes", model=m)["nodes"] == model.free_nodes() == [0, 1, 2, 3]
        ok("start", model=m, job=0, nodes=[0, 1])
        model.start(0, [0, 1])
        assert ok("nodes_of", model=m, job=0)["nodes"] == model.nodes_of(0) == [0, 1]
        assert ok("peek", model=m)["time"] == model.peek() == 60.0
        assert ok("now", model=m)["now"] == model.now == 0.0
        while True:
            events = ok("advance", model=m, until="6h")
            mine = model.advance(6 * HOUR)
            assert [
                (e["time"], e["kind"], e["job"], tuple(e["nodes"]), e["cause"], e["fault_time"])
                for e in events["events"]
            ] == [(e.time, e.kind, e.job, e.nodes, e.cause, e.fault_time) for e in mine]
            assert events["now"] == model.now
            if any(e["kind"] == "job_failed" for e in events["events"]):
                break
        # Node 0 is under repair, job 0 waits on its survivor, node 1.
        assert ok("node_states", model=m)["states"] == ["down", "busy", "free", "free"]
        assert [ace.NodeState(s).name.lower() for s in model.node_states()] == [
            "down", "busy", "free", "free"
        ]  # fmt: skip
        assert ok("down_nodes", model=m)["nodes"] == model.down_nodes() == [0]
        assert ok("waiting", model=m)["jobs"] == model.waiting() == [0]
        assert ok("running", model=m)["jobs"] == model.running() == []
        assert ok("queued", model=m)["jobs"] == model.queued() == []
        ok("stop", model=m, job=0)  # back to the queue, its survivor released
        model.stop(0)
        assert ok("nodes_of", model=m, job=0)["nodes"] == [] == model.nodes_of(0)
        ok("start", model=m, job=0, nodes=[1, 2])
        model.start(0, [1, 2])
        other = ok("submit", model=m, job=small_job(gpus=8, priority=-1))["job"]
        model.submit(ace.Job(8, 8 * HOUR, HOUR, init=0.0, priority=-1))
        ok("start", model=m, job=other, nodes=[3])
        model.start(other, [3])
        ok("advance", model=m, until=5400)
        model.advance(5400.0)
        assert ok("state", model=m, job=other)["state"] == model.state(other) == "computing"
        ok("stop", model=m, job=other, for_job=0)
        model.stop(other, for_job=0)
        assert ok("state", model=m, job=other)["state"] == model.state(other) == "queued"
        # An elastic job, run narrow and given its nodes back.
        elastic = small_job(gpus=8, min_gpus=8, reconfigure="30s")
        e = ok("submit", model=m, job=elastic)["job"]
        model.submit(ace.Job(8, 8 * HOUR, HOUR, init=0.0, min_gpus=8, reconfigure=30.0))
        ok("start", model=m, job=e, nodes=[3])
        model.start(e, [3])
        ok("advance", model=m, until=5500)
        model.advance(5500.0)
        ok("resize", model=m, job=e, nodes=[3])  # (already on all it needs: a reconfiguration)
        model.resize(e, [3])
        assert ok("state", model=m, job=e)["state"] == model.state(e) == "reconfiguring"
        fork = ok("copy", model=m)["model"]
        assert fork != m
        ok("advance", model=fork, until="Infinity")
        assert ok("now", model=m)["now"] == model.now  # the original did not move
        everything = ok("result", model=m, tables=list(serve.TABLES))
        res = model.result()
        for name in ("jobs", "fleet", "trace", "events", "placements"):
            assert len(everything[name]) == len(getattr(res, name)), name
            assert_same_table(everything[name], getattr(res, name))
        assert everything["jobs"][other]["preemptions"] == 1
        assert everything["summary"]["ettr"] == res.summary()["ettr"]
        assert set(ok("result", model=m)) == set(serve.DEFAULT_TABLES)
        assert ok("hello")["models"] == [m, fork]
        assert ok("close", model=fork) == {}
        assert ok("hello")["models"] == [m]
        # Arrivals and a requeue: node 0 fails at 5,000 s under job 0 (on
        # [0, 1]); job 1 arrives at 1 h and waits in the queue.
        arrivals = ok("create", fleet=small_fleet())["model"]
        ok("add_jobs", model=arrivals, jobs=[small_job(), small_job(gpus=8, submit="1h")])
        first = ok("advance", model=arrivals, until="Infinity")["events"]
        assert [(e["time"], e["kind"], e["job"]) for e in first] == [(0.0, "job_submitted", 0)]
        ok("start", model=arrivals, job=0, nodes=[0, 1])
        second = ok("advance", model=arrivals, until="Infinity")["events"]
        assert [(e["time"], e["kind"], e["job"]) for e in second] == [(3600.0, "job_submitted", 1)]
        third = ok("advance", model=arrivals, until="Infinity")["events"]
        assert [(e["kind"], e["held"]) for e in third] == [
            ("node_down", []),
            ("job_failed", [0, 1]),
        ]
        ok("requeue", model=arrivals, job=0)
        assert ok("queued", model=arrivals)["jobs"] == [0, 1]
        assert ok("free_nodes", model=arrivals)["nodes"] == [1, 2, 3]
        refused = client.call("requeue", model=arrivals, job=0)
        assert (refused["ok"], refused["error"]["field"]) == (False, "job")
        ok("close", model=arrivals)
        assert ok("shutdown") == {}
        assert client.close() == (0, "")
    finally:
        client.kill()
    assert used == set(serve.REQUESTS)


def exchange() -> list[tuple[str, str]]:
    """The (request, reply) lines of the documented example exchange."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    block = re.search(r"## A full example exchange.*?```text\n(.*?)```", text, flags=re.S)
    assert block is not None
    lines = block[1].splitlines()
    assert all(line[:2] in ("> ", "< ") for line in lines)
    assert [line[0] for line in lines] == [">", "<"] * (len(lines) // 2)
    return [(a[2:], b[2:]) for a, b in zip(lines[::2], lines[1::2], strict=True)]


def test_the_documented_exchange_is_what_the_server_says() -> None:
    pairs = exchange()
    kinds = {json.loads(request)["type"] for request, _ in pairs}
    assert len(kinds) >= 12
    client = Client(check=check)
    try:
        for request, expected in pairs:
            got = client.send(request.encode()).decode().rstrip("\n")
            assert got == expected, request
            check(json.loads(request), json.loads(got))
        assert client.close() == (0, "")  # the exchange ends with shutdown
    finally:
        client.kill()


def test_the_readme_links_the_protocol() -> None:
    text = (ROOT / "README.md").read_text()
    assert "## Driving acesim from another language" in text
    assert "docs/protocol.md" in text


def test_end_of_input_ends_the_server_cleanly() -> None:
    lines = b'{"id":1,"type":"hello"}\nnot json\n{"id":2,"type":"now","model":1}'
    out = subprocess.run(server_command(), input=lines, capture_output=True, timeout=60)
    assert (out.returncode, out.stderr) == (0, b"")
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["id"], r["ok"]) for r in replies] == [(1, True), (None, False), (2, False)]
    # the last line had no newline: it was answered all the same
    out = subprocess.run(server_command(), input=b"", capture_output=True, timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


def test_shutdown_ends_the_server_after_its_reply() -> None:
    lines = b'{"id":1,"type":"shutdown"}\n{"id":2,"type":"hello"}\n'
    out = subprocess.run(server_command(), input=lines, capture_output=True, timeout=60)
    assert (out.returncode, out.stderr) == (0, b"")
    assert out.stdout == b'{"id":1,"ok":true,"result":{}}\n'


def test_python_dash_m_acesim_serves_too() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acesim", "serve", "--stdio"],
        input=b'{"id":"a","type":"hello"}\n',
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert json.loads(out.stdout)["result"]["protocol"] == serve.PROTOCOL


def test_serve_needs_a_transport() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acesim", "serve"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "--stdio" in out.stderr


def test_several_models_live_side_by_side(server: Client) -> None:
    a = server.ok("create", fleet=small_fleet())["model"]
    b = server.ok("create", fleet=small_fleet(), seed=3)["model"]
    for m in (a, b):
        server.ok("submit", model=m, job=small_job())
        server.ok("start", model=m, job=0, nodes=[0, 1])
    fork = server.ok("copy", model=a)["model"]
    assert len({a, b, fork}) == 3
    first = server.ok("advance", model=a, until="1d")
    assert server.ok("advance", model=fork, until="1d") == first  # the same future
    server.ok("submit", model=fork, job=small_job(gpus=8))
    assert server.call("nodes_of", model=a, job=1)["ok"] is False  # a has one job
    assert server.ok("now", model=b)["now"] == 0.0
    with_job = server.ok("result", model=a, tables=["jobs"])["jobs"]
    assert len(with_job) == 1
    for m in (a, b, fork):
        server.ok("close", model=m)
    assert server.call("now", model=a)["error"]["field"] == "model"


def test_a_result_before_any_job_names_the_model(server: Client) -> None:
    m = server.ok("create", fleet=small_fleet())["model"]
    error = server.call("result", model=m)["error"]
    assert (error["type"], error["field"]) == ("ValueError", "model")
    server.ok("close", model=m)


def test_peek_says_infinity_when_nothing_is_ahead(server: Client) -> None:
    never = {"law": "replay", "times": ["Infinity"]}  # no failure, ever
    m = server.ok("create", fleet={"nodes": 2}, failures=never)["model"]
    assert server.ok("peek", model=m)["time"] == "Infinity"
    server.ok("submit", model=m, job=small_job(gpus=8, work="1h", save=0, load=0))
    server.ok("start", model=m, job=0, nodes=[0])
    assert server.ok("advance", model=m, until="Infinity")["events"][0]["kind"] == "job_done"
    assert server.ok("peek", model=m)["time"] == "Infinity"
    # Nothing is ahead: the clock stays at the last event, the job's end at
    # 1 h (save and load 0; it never becomes infinite).
    assert server.ok("advance", model=m, until="Infinity") == {"events": [], "now": 3600.0}
    assert server.ok("now", model=m)["now"] == 3600.0
    rows = server.ok("result", model=m, tables=["jobs", "summary"])
    assert rows["jobs"][0]["mtbf"] == "Infinity"
    assert rows["jobs"][0]["young_interval"] == "NaN"
    assert rows["summary"]["ettr_stderr"] == "NaN"  # one replica
    server.ok("close", model=m)


# --------------------------------------------------------------------------
# 3. Malformed requests
# --------------------------------------------------------------------------

M = "{M}"  # the model of the malformed cases (a job 0 running on nodes 0 and 1, job 1 queued)
DROP: Any = object()  # a field left out


def R(kind: str, **fields: Any) -> str:
    """A request line of id 1 (``model=M``: the cases' model)."""
    return json.dumps({"id": 1, "type": kind, **fields}).replace(f'"{M}"', M)


def job(**fields: Any) -> dict[str, Any]:
    """A valid job with ``fields`` changed (``DROP``: left out)."""
    out = {"gpus": 8, "work": "1h", "checkpoint_interval": "1h", **fields}
    return {k: v for k, v in out.items() if v is not DROP}


def fleet4(**fields: Any) -> dict[str, Any]:
    return {"nodes": 4, **fields}


#: (line, error type, field, the schema rejects it: True / False (only the
#: server can tell) / None (not a JSON object), the reply's id)
MALFORMED: list[tuple[str, str, str | None, bool | None, Any]] = [
    ("not json", "ParseError", None, None, None),
    ("", "ParseError", None, None, None),
    ("   ", "ParseError", None, None, None),
    ('{"id": 1, "type": "hello"', "ParseError", None, None, None),
    ("[1, 2]", "RequestError", None, None, None),
    ('"hello"', "RequestError", None, None, None),
    ("null", "RequestError", None, None, None),
    ('{"type": "hello"}', "RequestError", "id", True, None),
    ('{"id": [1], "type": "hello"}', "TypeError", "id", True, None),
    ('{"id": true, "type": "hello"}', "TypeError", "id", True, None),
    ('{"id": null, "type": "hello"}', "TypeError", "id", True, None),
    ('{"id": 1}', "RequestError", "type", True, 1),
    (R("fly"), "RequestError", "type", True, 1),
    ('{"id": 1, "type": 5}', "TypeError", "type", True, 1),
    (R("hello", extra=1), "RequestError", "extra", True, 1),
    ('{"id": 1, "type": "hello", "id": 2}', "RequestError", "id", None, None),
    (R("hello", protocol=2), "ValueError", "protocol", False, 1),
    (R("shutdown", now=1), "RequestError", "now", True, 1),
    (R("now"), "RequestError", "model", True, 1),
    (R("now", model=999), "ValueError", "model", False, 1),
    (R("now", model="1"), "TypeError", "model", True, 1),
    (R("now", model=1.5), "TypeError", "model", True, 1),
    (R("close", model=999), "ValueError", "model", False, 1),
    (R("advance", model=M), "RequestError", "until", True, 1),
    (R("advance", model=M, until=-5), "ValueError", "until", True, 1),
    (R("advance", model=M, until="soon"), "ValueError", "until", True, 1),
    (R("advance", model=M, until=None), "TypeError", "until", True, 1),
    (R("advance", model=M, until=10), "ValueError", "until", False, 1),
    ('{"id": 1, "type": "advance", "model": {M}, "until": NaN}', "ParseError", None, None, None),
    ('{"id": 1, "type": "advance", "model": {M}, "until": 1e999}', "ParseError", None, None, None),
    (
        '{"id": 1, "type": "advance", "model": {M}, "until": -Infinity}',
        "ParseError",
        None,
        None,
        None,
    ),
    (R("start", model=M, job=1, nodes=[2, 2]), "ValueError", "nodes[1]", False, 1),
    (R("start", model=M, job=1, nodes=[2, 99]), "ValueError", "nodes[1]", False, 1),
    (R("start", model=M, job=1, nodes=[2, 1]), "ValueError", "nodes[1]", False, 1),
    (R("start", model=M, job=1, nodes=[2]), "ValueError", "nodes", False, 1),
    (R("start", model=M, job=1, nodes=[2, -3]), "ValueError", "nodes[1]", True, 1),
    (R("start", model=M, job=1, nodes="all"), "TypeError", "nodes", True, 1),
    (R("start", model=M, job=1, nodes=[2, "3"]), "TypeError", "nodes[1]", True, 1),
    (R("start", model=M, job=0, nodes=[2, 3]), "ValueError", "job", False, 1),
    (R("start", model=M, job=99, nodes=[2, 3]), "ValueError", "job", False, 1),
    (R("start", model=M, nodes=[2, 3]), "RequestError", "job", True, 1),
    (R("stop", model=M, job=1), "ValueError", "job", False, 1),
    (R("stop", model=M, job=0, for_job=99), "ValueError", "for_job", False, 1),
    (R("stop", model=M, job=0, for_job="1"), "TypeError", "for_job", True, 1),
    (R("nodes_of", model=M, job=-1), "ValueError", "job", True, 1),
    (R("submit", model=M), "RequestError", "job", True, 1),
    (R("submit", model=M, job=[8]), "TypeError", "job", True, 1),
    (R("submit", model=M, job=job(gpus=DROP)), "RequestError", "job.gpus", True, 1),
    (R("submit", model=M, job=job(gpus="8")), "TypeError", "job.gpus", True, 1),
    (R("submit", model=M, job=job(gpus=0)), "ValueError", "job.gpus", True, 1),
    (R("submit", model=M, job=job(gpus=8.5)), "TypeError", "job.gpus", True, 1),
    (R("submit", model=M, job=job(gpus=1000)), "ValueError", "job.gpus", False, 1),
    (R("submit", model=M, job=job(work="3 parsecs")), "ValueError", "job.work", True, 1),
    (R("submit", model=M, job=job(work=0)), "ValueError", "job.work", False, 1),
    (
        R("submit", model=M, job=job(checkpoint_interval="often")),
        "ValueError",
        "job.checkpoint_interval",
        True,
        1,
    ),
    (
        R("submit", model=M, job=job(save={"law": "weibull", "shape": 0.5})),
        "RequestError",
        "job.save.scale",
        True,
        1,
    ),
    (R("submit", model=M, job=job(save={"law": "pareto"})), "ValueError", "job.save.law", True, 1),
    (
        R("submit", model=M, job=job(save={"law": "weibull", "shape": -1, "scale": 1})),
        "ValueError",
        "job.save.shape",
        True,
        1,
    ),
    (R("submit", model=M, job=job(save={"shape": 1})), "RequestError", "job.save.law", True, 1),
    (R("submit", model=M, job=job(init=[1, 2])), "TypeError", "job.init", True, 1),
    (
        R(
            "submit",
            model=M,
            job=job(load={"law": "mixture", "components": [{"weight": -1, "law": 5}]}),
        ),
        "ValueError",
        "job.load.components[0]",
        True,
        1,
    ),
    (
        R("submit", model=M, job=job(load={"law": "empirical", "samples": []})),
        "ValueError",
        "job.load.samples",
        True,
        1,
    ),
    (
        R("submit", model=M, job=job(tiers=[{"interval": "2h", "save": 5, "load": 5}])),
        "ValueError",
        "job.tiers[0].interval",
        False,
        1,
    ),
    (
        R("submit", model=M, job=job(tiers=[{"interval": "5min", "save": 5}])),
        "RequestError",
        "job.tiers[0].load",
        True,
        1,
    ),
    (R("submit", model=M, job=job(time_limit="1d")), "RequestError", "job.time_limit", True, 1),
    (R("submit", model=M, job=job(colour="red")), "RequestError", "job.colour", True, 1),
    (
        R(
            "submit",
            model=M,
            job={"gpus": 16, "work": "1h", "checkpoint_interval": "1h", "min_gpus": 12},
        ),
        "ValueError",
        "job.min_gpus",
        False,
        1,
    ),
    (R("create"), "RequestError", "fleet", True, 1),
    (R("create", fleet={"nodes": 0}), "ValueError", "fleet.nodes", True, 1),
    (R("create", fleet=fleet4(spares=4)), "ValueError", "fleet.spares", False, 1),
    (
        R("create", fleet=fleet4(cold_spares=1, cold_spare_delay=60)),
        "ValueError",
        "fleet.cold_spares",
        True,
        1,
    ),
    (R("create", fleet=fleet4(node_clock="cpu")), "ValueError", "fleet.node_clock", True, 1),
    (
        R("create", fleet=fleet4(node_failures={"times": {"x": [1]}})),
        "ValueError",
        "fleet.node_failures.times.x",
        True,
        1,
    ),
    (
        R("create", fleet=fleet4(node_failures={"times": {"7": [1]}})),
        "ValueError",
        "fleet.node_failures.times",
        False,
        1,
    ),
    (
        R("create", fleet=fleet4(maintenance=[{"start": 0, "duration": 0, "nodes": "all"}])),
        "ValueError",
        "fleet.maintenance[0]",
        False,
        1,
    ),
    (
        R("create", fleet=fleet4(repair={"stages": [{"duration": 60, "fix": 2}]})),
        "ValueError",
        "fleet.repair.stages[0].fix",
        True,
        1,
    ),
    (
        R("create", fleet=fleet4(), policy={"replacement": "spares"}),
        "RequestError",
        "policy.replacement",
        True,
        1,
    ),
    (
        R("create", fleet=fleet4(), policy={"quarantine": {"failures": 0}}),
        "ValueError",
        "policy.quarantine.failures",
        True,
        1,
    ),
    (R("create", fleet=fleet4(), horizon=0), "ValueError", "horizon", False, 1),
    (R("create", fleet=fleet4(), seed=-1), "ValueError", "seed", True, 1),
    (R("create", fleet=fleet4(), causes=[]), "ValueError", "causes", True, 1),
    (R("create", fleet=fleet4(), causes="llama4"), "ValueError", "causes", True, 1),
    (
        R("create", fleet=fleet4(), causes=[{"name": "x", "share": 1, "scope": "rack"}]),
        "ValueError",
        "causes[0].scope",
        True,
        1,
    ),
    (R("create", fleet=fleet4(), checkpoints="yes"), "TypeError", "checkpoints", True, 1),
    (R("result", model=M, tables=["jobs", "jobs"]), "ValueError", "tables[1]", True, 1),
    (R("result", model=M, tables=["nope"]), "ValueError", "tables[0]", True, 1),
    (R("result", model=M, tables="jobs"), "TypeError", "tables", True, 1),
]


@pytest.fixture(scope="module")
def malformed_model(server: Client) -> int:
    m: int = server.ok("create", fleet={"nodes": 4})["model"]
    server.ok("submit", model=m, job=small_job())
    server.ok("submit", model=m, job=small_job())
    server.ok("start", model=m, job=0, nodes=[0, 1])
    server.ok("advance", model=m, until=100)
    return m


def test_there_are_enough_malformed_cases() -> None:
    assert len(MALFORMED) >= 30
    kinds = {case[1] for case in MALFORMED}
    assert kinds == {"ParseError", "RequestError", "TypeError", "ValueError"}


@pytest.mark.parametrize(("line", "kind", "field", "schema_rejects", "rid"), MALFORMED)
def test_a_malformed_request_gets_an_error_naming_the_field(
    server: Client,
    malformed_model: int,
    line: str,
    kind: str,
    field: str | None,
    schema_rejects: bool | None,
    rid: Any,
) -> None:
    m = malformed_model
    line = line.replace(M, str(m))
    before = (server.ok("now", model=m), server.ok("free_nodes", model=m))
    reply = server.reply(line.encode())
    assert reply["ok"] is False, reply
    assert reply["id"] == rid
    error = reply["error"]
    assert (error["type"], error["field"]) == (kind, field), error
    if field is not None:
        assert error["message"].startswith(field), error
    # The server goes on, and the model did not change.
    assert (server.ok("now", model=m), server.ok("free_nodes", model=m)) == before
    assert server.ok("hello")["protocol"] == serve.PROTOCOL
    if schema_rejects is not None:
        request = json.loads(line)
        with_id = {**request, "id": request.get("id", 1)} if field != "id" else request
        rejected = VALIDATOR.errors(with_id, SCHEMA["$defs"]["request"], "$") != []
        assert rejected == schema_rejects, VALIDATOR.errors(
            with_id, SCHEMA["$defs"]["request"], "$"
        )
        if JS_REQUEST is not None:
            assert (not JS_REQUEST.is_valid(with_id)) == schema_rejects


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe{}\n",
        b'{"id": 1, "type": "hel\xc3"}\n',
        b"[" * 100_000 + b"\n",
        b'{"id": 1, "type": "now", "model": 1' + b"0" * 5000 + b"}\n",
        b"\x00\n",
    ],
)
def test_bytes_that_are_not_json_get_a_parse_error(server: Client, raw: bytes) -> None:
    reply = server.reply(raw)
    assert (reply["id"], reply["ok"], reply["error"]["type"]) == (None, False, "ParseError")
    assert server.ok("hello")["protocol"] == serve.PROTOCOL


def test_a_huge_integer_is_an_error_not_a_crash(server: Client) -> None:
    reply = server.call("create", fleet={"nodes": 4}, seed=2**70)
    assert (reply["error"]["type"], reply["error"]["field"]) == ("ValueError", "seed")
    reply = server.call("create", fleet={"nodes": 4, "repair": 10**400})
    assert (reply["error"]["type"], reply["error"]["field"]) == ("ValueError", "fleet.repair")


# --------------------------------------------------------------------------
# 4. One model, two drivers
# --------------------------------------------------------------------------


def assert_same_table(rows: list[dict[str, Any]], table: np.ndarray) -> None:
    """Rows from the protocol, rebuilt as the structured array, are the
    table field for field, bit for bit."""
    names = [n for n in table.dtype.names or () if n != "pad_"]
    assert all(list(row) == names for row in rows)

    def decode(v: Any) -> Any:
        return {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}.get(v, v)

    rebuilt = np.zeros(len(rows), dtype=table.dtype)
    for name in names:
        rebuilt[name] = [decode(row[name]) for row in rows]
        assert rebuilt[name].tobytes() == table[name].tobytes(), name


STEPS = 10_000


def test_10000_steps_through_the_protocol_are_fleet_model_s() -> None:
    direct = Direct()
    direct_log = run_scheduler(direct, STEPS)
    client = Client(check=Sampled(every=50))
    try:
        remote = Remote(client)
        remote_log = run_scheduler(remote, STEPS)
        assert remote_log == direct_log
        res = direct.model.result()
        tables = client.ok(
            "result", model=remote.model, tables=["jobs", "fleet", "trace", "events"]
        )
        for name in ("jobs", "fleet", "trace", "events"):
            assert_same_table(tables[name], getattr(res, name))
        assert client.close() == (0, "")
    finally:
        client.kill()
    # The run exercised what a scheduler meets.
    events = [e for step in direct_log for e in step]
    kinds = {e[1] for e in events}
    assert kinds == set(EVENT_KINDS) - {"job_submitted"}  # (it submits each job itself)
    jobs = res.jobs
    assert jobs["completed"].sum() > 100
    assert jobs["failures"].sum() > 20
    assert jobs["preemptions"].sum() > 10
    assert jobs["recovery_wait"].sum() > 0
    assert jobs["tier_restores"].sum() + jobs["lost_checkpoints"].sum() > 0
    assert res.fleet["quarantines"].sum() > 0
    assert len(np.unique(res.trace["cause"])) == 3
    assert remote.requests > 2 * STEPS


def law_kinds() -> list[tuple[Any, ace.Distribution]]:
    """Every law family as JSON and as the Python object it stands for."""
    return [
        (90, ace.Constant(90.0)),
        ("1.5min", ace.Constant(90.0)),
        ({"law": "constant", "value": "2min"}, ace.Constant(120.0)),
        ({"law": "exponential", "mean": "1min"}, ace.Exponential(60.0)),
        ({"law": "weibull", "shape": 1.5, "scale": 30}, ace.Weibull(1.5, 30.0)),
        ({"law": "lognormal", "mu": 3.0, "sigma": 0.5}, ace.LogNormal(3.0, 0.5)),
        ({"law": "gamma", "shape": 2, "scale": "20s"}, ace.Gamma(2.0, 20.0)),
        (
            {
                "law": "mixture",
                "components": [{"weight": 0.9, "law": 30}, {"weight": 0.1, "law": "5min"}],
            },
            ace.Mixture([(0.9, ace.Constant(30.0)), (0.1, ace.Constant(300.0))]),
        ),
        ({"law": "empirical", "samples": [10, "20s", 45.5]}, ace.Empirical([10.0, 20.0, 45.5])),
        (
            {"law": "block_bootstrap", "sequence": [5, 50, 500, 5], "block": 2},
            ace.BlockBootstrap([5.0, 50.0, 500.0, 5.0], 2),
        ),
        ({"law": "replay", "times": [30, "1min", 90]}, ace.Replay([30.0, 60.0, 90.0])),
        (
            {"law": "scale_aware", "base": {"law": "exponential", "mean": 40}, "ref_gpus": 8},
            ace.ScaleAware(ace.Exponential(40.0), 8.0),
        ),
    ]


def test_every_law_family_reads_as_its_python_law() -> None:
    """The JSON of each family and its Python object draw the same numbers."""
    extra = [
        ({"law": "replay", "times": ["1h", "Infinity"]}, ace.Replay([HOUR, math.inf])),
        ({"law": "meta_scale"}, ace.meta_scale_model()),
        (
            {"law": "meta_scale", "mttf_1024": "5h", "exponent": 0.9},
            ace.meta_scale_model(5 * HOUR, 0.9),
        ),
        ({"law": "node_rate", "failures_per_node_day": 6.5e-3}, ace.node_rate_model(6.5e-3)),
        ({"law": "never"}, ace.Never()),
        # the first failure of 4 units with 40 s exponential lifetimes: 10 s exponential
        (
            {"law": "gang", "base": {"law": "exponential", "mean": "40s"}, "units": 4},
            ace.Exponential(10.0),
        ),
        (
            {
                "law": "scale_aware",
                "base": {"law": "weibull", "shape": 0.7, "scale": "2d"},
                "ref_gpus": 1024,
                "exponent": 0.5,
            },
            ace.ScaleAware(ace.Weibull(0.7, 2 * DAY), 1024.0, 0.5),
        ),
    ]
    families = set()
    for spec, law in law_kinds() + extra:
        got = serve._law(spec, "law")
        assert type(got) is type(law), spec
        for gpus in (8.0, 1024.0):
            a = got.sample(64, seed=5, gpus=gpus)
            assert a.tobytes() == law.sample(64, seed=5, gpus=gpus).tobytes(), spec
        if isinstance(spec, dict):
            families.add(spec["law"])
    assert families == set(serve.LAWS)


INTERVALS_JSON = ("1h", "young", "daly", "adaptive")
INTERVALS: tuple[Any, ...] = (HOUR, "young", "daly", "adaptive")


def test_every_law_and_fleet_feature_builds_what_python_builds() -> None:
    """Jobs with every law family, a fleet with a repair pipeline, rate and
    maintenance windows, a busy clock, shared storage and causes with
    slowdowns: the protocol's model and FleetModel's, driven alike, agree."""
    fleet_json = {
        "nodes": 12,
        "spares": 1,
        "repair": {
            "stages": [
                {"duration": "10min", "escalate": 0.3, "fix": 0.2},
                {"duration": "8h", "fix": 1},
            ],
            "misdiagnosis": 0.05,
        },
        "node_failures": {"law": "weibull", "shape": 0.8, "scale": "3d"},
        "lemon_fraction": 0.2,
        "lemon_factor": 5,
        "node_start": "fresh",
        "node_clock": "busy",
        "rate_windows": [{"start": "1d", "end": "Infinity", "factor": 2}],
        "maintenance": [{"start": "2d", "duration": "4h", "nodes": [0, 1]}],
        "lend_spares": True,
        "storage_bandwidth": 2e9,
    }
    fleet = ace.Fleet(
        12,
        spares=1,
        repair=ace.Repair(
            [ace.RepairStage(600.0, escalate=0.3, fix=0.2), ace.RepairStage(8 * HOUR, fix=1.0)],
            misdiagnosis=0.05,
        ),
        node_failures=ace.Weibull(0.8, 3 * DAY),
        lemon_fraction=0.2,
        lemon_factor=5.0,
        node_start="fresh",
        node_clock="busy",
        rate_windows=[(DAY, math.inf, 2.0)],
        maintenance=[(2 * DAY, 4 * HOUR, [0, 1])],
        lend_spares=True,
        storage_bandwidth=2e9,
    )
    causes_json = [
        {
            "name": "gpu",
            "share": 3,
            "detect": {"law": "exponential", "mean": "2min"},
            "slowdown": 0.5,
        },
        {"name": "nccl", "share": 1, "detect": "10min", "node_down": False, "scope": "process"},
    ]
    causes = [
        ace.Cause("gpu", 3.0, detect=ace.Exponential(120.0), slowdown=0.5),
        ace.Cause("nccl", 1.0, detect=600.0, node_down=False, scope="process"),
    ]
    jobs_json: list[dict[str, Any]] = []
    jobs: list[ace.Job] = []
    for k, (law_json, law) in enumerate(law_kinds()):
        if isinstance(law, ace.Replay):
            # A Replay of durations must not run out (an error naming it): as
            # many values as the job can draw in its day.
            times = [30.0, 60.0, 90.0] * 400
            law_json, law = {"law": "replay", "times": times}, ace.Replay(times)
        jobs_json.append(
            {
                "gpus": 8 * (1 + k % 2),
                "work": "1d",
                "checkpoint_interval": INTERVALS_JSON[k % 4],
                "init": law_json,
                "save": law_json,
                "load": law_json,
                "persist": law_json if k % 3 == 0 else None,
                "checkpoint_bytes": 1e10,
                "priority": k,
            }
        )
        jobs.append(
            ace.Job(
                8 * (1 + k % 2),
                DAY,
                INTERVALS[k % 4],
                init=law,
                save=law,
                load=law,
                persist=law if k % 3 == 0 else None,
                checkpoint_bytes=1e10,
                priority=k,
            )
        )
    jobs_json.append(
        {
            "gpus": 32,
            "work": "12h",
            "checkpoint_interval": 1800,
            "min_gpus": 16,
            "reconfigure": "2min",
            "scaling": 0.9,
            "tiers": [{"interval": "5min", "save": 2, "load": 10, "replication": 2}],
        }
    )
    jobs.append(
        ace.Job(
            32,
            12 * HOUR,
            1800.0,
            min_gpus=16,
            reconfigure=120.0,
            scaling=0.9,
            tiers=[ace.CheckpointTier(300.0, 2.0, 10.0, replication=2)],
        )
    )
    create_json = {
        "fleet": fleet_json,
        "failures": {"law": "node_rate", "failures_per_node_day": 0.05},
        "causes": causes_json,
        "policy": {"quarantine": {"failures": 2, "window": "Infinity", "duration": "Infinity"}},
        "seed": 2**63,
        "replica": 3,
        "horizon": "20d",
        "checkpoints": True,
        "check_invariants": True,
    }
    model = ace.FleetModel(
        fleet,
        ace.node_rate_model(0.05),
        causes,
        ace.Policy(quarantine=ace.Quarantine(2, math.inf, math.inf)),
        seed=2**63,
        replica=3,
        horizon=20 * DAY,
        checkpoints=True,
        check_invariants=True,
    )
    client = Client(check=Sampled(every=10))
    try:
        m = client.ok("create", **create_json)["model"]
        for spec, job in zip(jobs_json, jobs, strict=True):
            assert client.ok("submit", model=m, job=spec)["job"] == model.submit(job)
        waiting = set(range(len(jobs)))  # queued, or waiting after a failure
        steps = 0
        while model.peek() < math.inf and steps < 2000:
            free = model.free_nodes()
            assert client.ok("free_nodes", model=m)["nodes"] == free
            for j in sorted(waiting):
                held = model.nodes_of(j)
                assert client.ok("nodes_of", model=m, job=j)["nodes"] == held
                need = max(1, jobs[j].gpus // 8) - len(held)
                if need <= len(free):
                    client.ok("start", model=m, job=j, nodes=held + free[:need])
                    model.start(j, held + free[:need])
                    free = free[need:]
                    waiting.discard(j)
            got = client.ok("advance", model=m, until=model.now + 6 * HOUR)
            events = model.advance(model.now + 6 * HOUR)
            assert [(e["time"], e["kind"], e["job"], e["cause"]) for e in got["events"]] == [
                (e.time, e.kind, e.job, e.cause) for e in events
            ]
            waiting |= {e.job for e in events if e.kind == "job_failed" and e.job is not None}
            steps += 1
        res = model.result()
        tables = client.ok("result", model=m, tables=["jobs", "fleet", "trace", "placements"])
        for name in ("jobs", "fleet", "trace", "placements"):
            assert_same_table(tables[name], getattr(res, name))
        # The features are exercised: failures, a maintenance stop, shared
        # storage contention, restores from the tier, retired nodes.
        for field in ("failures", "planned_interruptions", "contention", "tier_restores"):
            assert res.jobs[field].sum() > 0, field
        assert res.fleet["retired_nodes"].sum() > 0
        assert client.close() == (0, "")
    finally:
        client.kill()


def test_a_node_trace_and_the_llama3_causes(server: Client) -> None:
    m = server.ok(
        "create",
        fleet={
            "nodes": 3,
            "node_failures": {
                "times": {"1": ["1h", "5h"]},
                "model": {"law": "exponential", "mean": "2d"},
            },
        },
        causes="llama3",
        failures={"law": "meta_scale", "mttf_1024": "7.9h"},
    )["model"]
    model = ace.FleetModel(
        ace.Fleet(
            3,
            node_failures=ace.NodeTrace.from_times(
                {1: [HOUR, 5 * HOUR]}, 3, ace.Exponential(2 * DAY)
            ),
        ),
        ace.meta_scale_model(7.9 * HOUR),
        ace.LLAMA3_CAUSES,
    )
    job = {
        "gpus": 16,
        "work": "10h",
        "checkpoint_interval": "daly",
        "save": {"law": "gamma", "shape": 2, "scale": 30},
    }
    server.ok("submit", model=m, job=job)
    model.submit(ace.Job(16, 10 * HOUR, "daly", save=ace.Gamma(2.0, 30.0)))
    server.ok("start", model=m, job=0, nodes=[0, 1])
    model.start(0, [0, 1])
    for _ in range(6):
        got = server.ok("advance", model=m, until="1d")["events"]
        assert [(e["time"], e["kind"], e["cause"]) for e in got] == [
            (e.time, e.kind, e.cause) for e in model.advance(DAY)
        ]
    rows = server.ok("result", model=m, tables=["trace"])["trace"]
    assert_same_table(rows, model.result().trace)
    server.ok("close", model=m)


def test_never_switches_failures_off_over_the_protocol(server: Client) -> None:
    """``{"law": "never"}`` as the node-level and the job-level law: the
    job runs its hand-worked course (load 60 s, 8 x (3,600 s + a 60 s
    write)) and nothing else happens."""
    m = server.ok(
        "create",
        fleet={"nodes": 3, "node_failures": {"law": "never"}},
        failures={"law": "never"},
    )["model"]
    j = server.ok("submit", model=m, job=small_job(save=60, load=60))["job"]
    server.ok("start", model=m, job=j, nodes=[0, 1])
    events = server.ok("advance", model=m, until="Infinity")["events"]
    assert [(e["time"], e["kind"]) for e in events] == [(60.0 + 8 * 3660.0, "job_done")]
    assert server.ok("peek", model=m)["time"] == "Infinity"
    refused = server.call("submit", model=m, job=small_job(save={"law": "never"}))
    assert refused["ok"] is False
    assert refused["error"]["field"] == "job.save"
    server.ok("close", model=m)
