"""Recorded event streams and protocol transcripts: what the 45 recorded
fleet hashes (``test_recorded_results.py``) do not cover.

- ``FleetModel`` event streams: every event, in order, that an outside
  scheduler receives, for the embedding tests' stepping scheduler
  (``embedding_scheduler.run_scheduler``: submits, restarts, requeues,
  preemptions) and for the worked example's EASY-with-spares scheduler
  (``examples/scheduler/easy_spares.py``), with the rows of their results.
- ``acesim serve --stdio`` transcripts: every request line and the exact
  reply bytes of a session driven by the stepping scheduler, and of a
  session that walks the other request types.

A restructuring of the engine or of the Python layers must replay all of
them exactly. A change that is meant to move them regenerates the file with

    ACESIM_RECORD=1 python -m pytest tests/test_recorded_streams.py

and names in its commit which entry moved and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from embedding_scheduler import Client, Direct, Remote, run_scheduler, scenario_objects

RECORD = Path(__file__).with_name("data") / "recorded_streams.json"
TRANSCRIPTS = Path(__file__).with_name("data") / "transcripts"
RECORDING = os.environ.get("ACESIM_RECORD") == "1"

#: Steps of the stepping scheduler (an hour each).
STEPS = 600

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scheduler"


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


def _tables_digest(res: ace.SimulationResult) -> dict[str, str]:
    out = {}
    for name in ("jobs", "fleet", "trace", "events"):
        table = getattr(res, name)
        if table is None:
            continue
        out[name] = hashlib.sha256(np.ascontiguousarray(table).tobytes()).hexdigest()
    return out


def _stepping_stream() -> dict[str, Any]:
    direct = Direct()
    log = run_scheduler(direct, STEPS)
    events = [e for step in log for e in step]
    return {
        "events": len(events),
        "stream": _digest(log),
        "kinds": sorted({e[1] for e in events}),
        "tables": _tables_digest(direct.model.result()),
    }


def _easy_spares_stream() -> dict[str, Any]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from easy_spares import EasySpares, run
    finally:
        sys.path.remove(str(EXAMPLES))
    model = ace.FleetModel(**scenario_objects())
    rng = np.random.default_rng(11)
    jobs = []
    t = 0.0
    for k in range(120):
        t += float(rng.exponential(2 * ace.HOUR))
        nodes = int(rng.choice([1, 1, 2, 4, 8]))
        jobs.append(
            ace.Job(
                8 * nodes,
                float(rng.uniform(2, 30)) * ace.HOUR,
                ace.HOUR,
                init=ace.Constant(120.0),
                save=ace.Constant(30.0),
                load=ace.Constant(60.0),
                submit=t,
                priority=int(k % 4 == 0),
                name=f"job-{k}",
            )
        )
    events: list[tuple[Any, ...]] = []

    class Recording(EasySpares):
        def handle(self, event: ace.Event) -> None:
            events.append((event.time, event.kind, event.job, event.nodes, event.cause))
            super().handle(event)

    sched = Recording(model)
    res = run(model, jobs, scheduler=sched)
    starts = [(s.time, s.job, s.nodes, s.how) for s in sched.starts]
    return {
        "events": len(events),
        "stream": _digest(events),
        "starts": len(starts),
        "starts_digest": _digest(starts),
        "tables": _tables_digest(res),
    }


def _stepping_transcript() -> list[tuple[bytes, bytes]]:
    client = Client(record=True)
    try:
        remote = Remote(client)
        run_scheduler(remote, 120)
        client.ok("result", model=remote.model, tables=["jobs", "fleet", "trace", "events"])
        assert client.close() == (0, "")
    finally:
        client.kill()
    assert client.record is not None
    return client.record


def _requests_transcript() -> list[tuple[bytes, bytes]]:
    """A session over the other request types, on a tiny hand-placed fleet."""
    client = Client(record=True)
    try:
        client.call("hello")
        model = client.ok(
            "create",
            fleet={
                "nodes": 3,
                "gpus_per_node": 8,
                "repair": {"law": "constant", "value": "1h"},
                "node_failures": {"law": "exponential", "mean": "2d"},
            },
            seed=5,
            checkpoints=True,
        )["model"]
        job = {"gpus": 16, "work": "10h", "checkpoint_interval": "1h", "save": 30, "load": 60}
        a = client.ok("submit", model=model, job=job)["job"]
        b = client.ok("submit", model=model, job={**job, "gpus": 8, "work": "3h"})["job"]
        client.call("peek", model=model)
        client.call("free_nodes", model=model)
        client.call("start", model=model, job=a, nodes=[0, 1])
        client.call("start", model=model, job=b, nodes=[2])
        client.call("nodes_of", model=model, job=a)
        client.call("advance", model=model, until="5h")
        client.call("stop", model=model, job=b)
        client.call("advance", model=model, until="1d")
        client.call("free_nodes", model=model)
        client.call("peek", model=model)
        client.call("now", model=model)
        client.call("state", model=model, job=a)
        client.call("advance", model=model, until="30d")
        client.call("result", model=model, tables=["jobs", "fleet", "trace", "events"])
        # Arrivals, a failure batch, the state queries and a requeue, on a
        # fleet whose nodes 0 and 1 fail together at 2 h.
        other = client.ok(
            "create",
            fleet={"nodes": 4, "spares": 1, "repair": "1h",
                   "node_failures": {"times": {"0": [7200], "1": [7200]}}},
            failures={"law": "never"},
        )["model"]  # fmt: skip
        client.call("add_jobs", model=other, jobs=[
            {**job, "work": "3h", "submit": 0}, {**job, "gpus": 8, "work": "1h", "submit": "1h"},
            {**job, "gpus": 8, "work": "1h", "submit": "2h"}])  # fmt: skip
        client.call("advance", model=other, until="Infinity")
        client.call("start", model=other, job=0, nodes=[0, 1])
        client.call("queued", model=other)
        client.call("advance", model=other, until="Infinity")
        client.call("start", model=other, job=1, nodes=[2])
        client.call("advance", model=other, until="Infinity")
        client.call("node_states", model=other)
        client.call("down_nodes", model=other)
        client.call("waiting", model=other)
        client.call("running", model=other)
        client.call("requeue", model=other, job=0)
        client.call("queued", model=other)
        client.call("advance", model=other, until="Infinity", whole_instant=False)
        client.call("result", model=other, tables=["jobs"])
        assert client.close() == (0, "")
    finally:
        client.kill()
    assert client.record is not None
    return client.record


TRANSCRIPT_MAKERS = {"stepping": _stepping_transcript, "requests": _requests_transcript}


def _write_transcript(path: Path, record: list[tuple[bytes, bytes]]) -> None:
    lines = [
        json.dumps({"request": line.decode().rstrip("\n"), "reply": reply.decode().rstrip("\n")})
        for line, reply in record
    ]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


def _read_transcript(path: Path) -> list[tuple[str, str]]:
    pairs = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        pairs.append((entry["request"], entry["reply"]))
    return pairs


STREAMS = {"stepping": _stepping_stream, "easy_spares": _easy_spares_stream}


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    if RECORDING:
        data = {name: make() for name, make in STREAMS.items()}
        RECORD.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        TRANSCRIPTS.mkdir(exist_ok=True)
        for name, make_transcript in TRANSCRIPT_MAKERS.items():
            _write_transcript(TRANSCRIPTS / f"{name}.jsonl", make_transcript())
    loaded: dict[str, Any] = json.loads(RECORD.read_text())
    return loaded


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_fleet_model_streams_replay_exactly(recorded: dict[str, Any], name: str) -> None:
    assert STREAMS[name]() == recorded[name]


def test_the_streams_cover_every_event_kind_a_scheduler_handles(
    recorded: dict[str, Any],
) -> None:
    kinds = set(recorded["stepping"]["kinds"])
    assert {"job_done", "job_failed", "node_down", "node_up", "checkpoint"} <= kinds
    assert recorded["easy_spares"]["starts"] >= 120


@pytest.mark.parametrize("name", sorted(TRANSCRIPT_MAKERS))
def test_serve_transcripts_replay_reply_for_reply(recorded: dict[str, Any], name: str) -> None:
    pairs = _read_transcript(TRANSCRIPTS / f"{name}.jsonl")
    assert len(pairs) > 10
    client = Client()
    try:
        for k, (request, reply) in enumerate(pairs):
            got = client.send(request.encode()).decode().rstrip("\n")
            assert got == reply, f"{name} transcript, request {k}: {request[:200]}"
        assert client.close() == (0, "")
    finally:
        client.kill()


def test_the_transcripts_cover_the_request_types() -> None:
    kinds = set()
    for name in TRANSCRIPT_MAKERS:
        for request, reply in _read_transcript(TRANSCRIPTS / f"{name}.jsonl"):
            assert json.loads(reply)["ok"] is True, (request, reply)
            kinds.add(json.loads(request)["type"])
    assert kinds >= {
        "hello",
        "create",
        "submit",
        "add_jobs",
        "requeue",
        "node_states",
        "down_nodes",
        "running",
        "waiting",
        "queued",
        "start",
        "stop",
        "advance",
        "peek",
        "now",
        "free_nodes",
        "nodes_of",
        "state",
        "result",
    }
