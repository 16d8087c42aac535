"""A small outside scheduler driving acesim's model, either through
:class:`acesim.FleetModel` or through the JSON-lines protocol (``acesim
serve --stdio`` in a subprocess): the same decisions from the same events.
Shared by tests/test_serve.py and bench/test_bench_embedding.py.

The scenario is written twice by hand, once as the protocol's JSON and once
as Python objects, so that a run through the protocol and a run through
FleetModel agree only if the protocol builds the model the Python objects
describe.
"""

from __future__ import annotations

import json
import math
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import acesim as ace

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


def server_command() -> list[str]:
    """``acesim serve --stdio``: the console script of this interpreter's
    environment where it is installed, else ``python -m acesim``."""
    script = Path(sys.executable).parent / "acesim"
    if script.is_file():
        return [str(script), "serve", "--stdio"]
    found = shutil.which("acesim")
    if found is not None and Path(found).parent == Path(sys.executable).parent:
        return [found, "serve", "--stdio"]
    return [sys.executable, "-m", "acesim", "serve", "--stdio"]


def _strict(text: str) -> Any:
    raise ValueError(f"the server wrote a non-JSON constant {text}")


class Client:
    """The server in a subprocess. :meth:`send` writes one line and returns
    the reply line (failing after ``timeout`` seconds: a hang is an error;
    ``threaded=False`` reads it blocking, without that guard, as a client
    in another language would; ``record`` keeps every (line, reply));
    :meth:`call` sends a request and returns the parsed reply; ``check`` is
    called with (the request, or None for a raw line; the reply) for every
    reply parsed."""

    def __init__(
        self,
        command: list[str] | None = None,
        timeout: float = 60.0,
        check: Callable[[dict[str, Any] | None, dict[str, Any]], None] | None = None,
        *,
        threaded: bool = True,
        record: bool = False,
    ) -> None:
        self.proc = subprocess.Popen(
            command or server_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.timeout = timeout
        self.check = check
        self.threaded = threaded
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        if threaded:
            threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.requests = 0
        self.record: list[tuple[bytes, bytes]] | None = [] if record else None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: bytes) -> bytes:
        assert self.proc.stdin is not None
        line = line if line.endswith(b"\n") else line + b"\n"
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        reply: bytes | None
        if self.threaded:
            try:
                reply = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no reply within {self.timeout} s to {line[:200]!r}"
                ) from None
        else:  # a blocking read, as a client in another language would do it
            assert self.proc.stdout is not None
            reply = self.proc.stdout.readline() or None
        if reply is None:
            raise AssertionError(f"the server ended on {line[:200]!r}: {self.stderr()}")
        self.requests += 1
        if self.record is not None:
            self.record.append((line, reply))
        return reply

    def reply(self, line: bytes, request: dict[str, Any] | None = None) -> dict[str, Any]:
        """The parsed reply to a raw line (checked when ``check`` is set)."""
        raw = self.send(line)
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1, raw
        reply: dict[str, Any] = json.loads(raw, parse_constant=_strict)
        if self.check is not None:
            self.check(request, reply)
        return reply

    def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        request = {"id": self.next_id, "type": kind, **fields}
        reply = self.reply(json.dumps(request, allow_nan=False).encode(), request)
        assert reply["id"] == self.next_id, (request, reply)
        return reply

    def ok(self, kind: str, **fields: Any) -> Any:
        """The result of a request that must succeed."""
        reply = self.call(kind, **fields)
        assert reply["ok"] is True, (kind, fields, reply)
        return reply["result"]

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def close(self, timeout: float = 30.0) -> tuple[int, str]:
        """Ends input and waits: (exit status, standard error)."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        rc = self.proc.wait(timeout=timeout)
        return rc, self.stderr()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------
# The scenario, twice
# --------------------------------------------------------------------------

#: The protocol's ``create`` fields.
SCENARIO_JSON: dict[str, Any] = {
    "fleet": {
        "nodes": 32,
        "gpus_per_node": 8,
        "spares": 2,
        "repair": {"law": "lognormal", "mu": 8.0, "sigma": 1.0},
        "node_failures": {"law": "weibull", "shape": 0.7, "scale": "20d"},
        "lemon_fraction": 0.1,
        "lemon_factor": 10,
    },
    "failures": {"law": "exponential", "mean": "10d"},
    "causes": [
        {"name": "hardware", "share": 0.6, "detect": "1min", "node_down": True},
        {
            "name": "switch",
            "share": 0.15,
            "detect": {"law": "constant", "value": "10min"},
            "node_down": True,
            "nodes": 2,
        },
        {"name": "software", "share": 0.25, "detect": 10, "node_down": False},
    ],
    "policy": {"quarantine": {"failures": 2, "window": "7d", "duration": "3d"}},
    "seed": 7,
    "checkpoints": True,
}


def scenario_objects() -> dict[str, Any]:
    """The same scenario as FleetModel's arguments."""
    return dict(
        fleet=ace.Fleet(
            32,
            8,
            spares=2,
            repair=ace.LogNormal(8.0, 1.0),
            node_failures=ace.Weibull(0.7, 20 * DAY),
            lemon_fraction=0.1,
            lemon_factor=10.0,
        ),
        failures=ace.Exponential(10 * DAY),
        causes=[
            ace.Cause("hardware", 0.6, detect=ace.Constant(60.0), node_down=True),
            ace.Cause("switch", 0.15, detect=ace.Constant(600.0), node_down=True, nodes=2),
            ace.Cause("software", 0.25, detect=10.0, node_down=False),
        ],
        policy=ace.Policy(quarantine=ace.Quarantine(2, 7 * DAY, 3 * DAY)),
        seed=7,
        checkpoints=True,
    )


NODES = (1, 2, 4, 1, 8, 2, 1, 4)
WORK_JSON = ("6h", "12h", "1d", "3h", "2d")
WORK = (6 * HOUR, 12 * HOUR, DAY, 3 * HOUR, 2 * DAY)
INTERVAL_JSON: tuple[Any, ...] = ("1h", "young", "30min", "daly", 5400)
INTERVAL: tuple[Any, ...] = (HOUR, "young", 30 * MINUTE, "daly", 5400.0)


def gpus_of(k: int) -> int:
    return 4 if k % 11 == 5 else 8 * NODES[k % len(NODES)]


def nodes_of_job(k: int) -> int:
    return max(1, gpus_of(k) // 8)


def priority_of(k: int) -> int:
    return 1 if k % 3 == 0 else 0


def job_json(k: int) -> dict[str, Any]:
    """Job ``k`` of the stream, as the protocol's JSON."""
    job: dict[str, Any] = {
        "gpus": gpus_of(k),
        "work": WORK_JSON[k % len(WORK_JSON)],
        "checkpoint_interval": INTERVAL_JSON[k % len(INTERVAL_JSON)],
        "init": "2min",
        "save": {"law": "lognormal", "mu": 3.5, "sigma": 0.5},
        "load": 60,
        "priority": priority_of(k),
        "name": f"job-{k}",
    }
    if k % 7 == 3:
        job["persist"] = {"law": "exponential", "mean": "3min"}
    if k % 9 == 4 and not isinstance(INTERVAL[k % len(INTERVAL)], str):
        job["tiers"] = [{"interval": "10min", "save": 5, "load": {"law": "constant", "value": 20}}]
    return job


def job_object(k: int) -> ace.Job:
    """Job ``k`` of the stream, as an acesim.Job."""
    interval = INTERVAL[k % len(INTERVAL)]
    tiers = (
        [ace.CheckpointTier(10 * MINUTE, save=5.0, load=ace.Constant(20.0))]
        if k % 9 == 4 and not isinstance(interval, str)
        else ()
    )
    return ace.Job(
        gpus_of(k),
        WORK[k % len(WORK)],
        interval,
        init=ace.Constant(2 * MINUTE),
        save=ace.LogNormal(3.5, 0.5),
        load=ace.Constant(60.0),
        priority=priority_of(k),
        name=f"job-{k}",
        persist=ace.Exponential(3 * MINUTE) if k % 7 == 3 else None,
        tiers=tiers,
    )


# --------------------------------------------------------------------------
# Two drivers, one scheduler
# --------------------------------------------------------------------------

#: An event as a plain tuple: (time, kind, job, nodes, cause, fault_time).
EventTuple = tuple[float, str, "int | None", tuple[int, ...], "int | None", "float | None"]


class Driver(Protocol):
    def submit(self, k: int) -> int: ...
    def start(self, job: int, nodes: list[int]) -> None: ...
    def stop(self, job: int, for_job: int | None = None) -> None: ...
    def preempt(self, job: int, for_job: int) -> bool: ...
    def advance(self, until: float) -> list[EventTuple]: ...
    def free_nodes(self) -> list[int]: ...
    def nodes_of(self, job: int) -> list[int]: ...
    def now(self) -> float: ...


class Direct:
    """FleetModel in this process; ``advance_seconds`` adds up the time
    spent in its ``advance`` calls."""

    def __init__(self, **overrides: Any) -> None:
        self.model = ace.FleetModel(**{**scenario_objects(), **overrides})
        self.advance_seconds = 0.0
        self.advance_calls = 0

    def submit(self, k: int) -> int:
        return self.model.submit(job_object(k))

    def start(self, job: int, nodes: list[int]) -> None:
        self.model.start(job, nodes)

    def stop(self, job: int, for_job: int | None = None) -> None:
        self.model.stop(job, for_job)

    def preempt(self, job: int, for_job: int) -> bool:
        """A stop that the model may refuse (a job failing, its fault not
        yet detected, cannot be stopped, and nothing tells the scheduler)."""
        try:
            self.model.stop(job, for_job)
        except ValueError:
            return False
        return True

    def advance(self, until: float) -> list[EventTuple]:
        t0 = time.perf_counter()
        events = self.model.advance(until)
        self.advance_seconds += time.perf_counter() - t0
        self.advance_calls += 1
        return [(e.time, e.kind, e.job, e.nodes, e.cause, e.fault_time) for e in events]

    def free_nodes(self) -> list[int]:
        return self.model.free_nodes()

    def nodes_of(self, job: int) -> list[int]:
        return self.model.nodes_of(job)

    def now(self) -> float:
        return self.model.now


class Remote:
    """The same model through the protocol; ``request_seconds`` adds up the
    round trips (request written to reply read and parsed)."""

    def __init__(self, client: Client, **overrides: Any) -> None:
        self.client = client
        self.request_seconds = 0.0
        self.requests = 0
        self.model = self._ok("create", **{**SCENARIO_JSON, **overrides})["model"]
        self._now = 0.0

    def _call(self, kind: str, **fields: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        reply = self.client.call(kind, **fields)
        self.request_seconds += time.perf_counter() - t0
        self.requests += 1
        return reply

    def _ok(self, kind: str, **fields: Any) -> Any:
        reply = self._call(kind, **fields)
        assert reply["ok"] is True, (kind, fields, reply)
        return reply["result"]

    def submit(self, k: int) -> int:
        jid: int = self._ok("submit", model=self.model, job=job_json(k))["job"]
        return jid

    def start(self, job: int, nodes: list[int]) -> None:
        self._ok("start", model=self.model, job=job, nodes=nodes)

    def stop(self, job: int, for_job: int | None = None) -> None:
        self._ok("stop", model=self.model, job=job, for_job=for_job)

    def preempt(self, job: int, for_job: int) -> bool:
        reply = self._call("stop", model=self.model, job=job, for_job=for_job)
        if not reply["ok"]:
            assert (reply["error"]["type"], reply["error"]["field"]) == ("ValueError", "job"), reply
        return bool(reply["ok"])

    def advance(self, until: float) -> list[EventTuple]:
        result = self._ok("advance", model=self.model, until=until)
        self._now = math.inf if result["now"] == "Infinity" else result["now"]
        return [
            (e["time"], e["kind"], e["job"], tuple(e["nodes"]), e["cause"], e["fault_time"])
            for e in result["events"]
        ]

    def free_nodes(self) -> list[int]:
        nodes: list[int] = self._ok("free_nodes", model=self.model)["nodes"]
        return nodes

    def nodes_of(self, job: int) -> list[int]:
        nodes: list[int] = self._ok("nodes_of", model=self.model, job=job)["nodes"]
        return nodes

    def now(self) -> float:
        return self._now


def run_scheduler(driver: Driver, steps: int, step: float = HOUR) -> list[list[EventTuple]]:
    """``steps`` scheduler steps; each submits jobs (four always queued),
    restarts failed jobs on their survivors and free nodes (or requeues
    them after three steps without nodes), starts queued jobs by priority
    then submission on the lowest free nodes, preempts a low-priority job
    for a blocked high-priority one every 25 steps, then advances by
    ``step`` (or to the next event). Returns each step's events."""
    queued: list[int] = []
    waiting: dict[int, int] = {}  # failed job -> step it failed
    running: dict[int, int] = {}  # job -> step it started
    need: dict[int, int] = {}
    priority: dict[int, int] = {}
    log: list[list[EventTuple]] = []
    k = 0
    for s in range(steps):
        while len(queued) < 4:
            jid = driver.submit(k)
            need[jid], priority[jid] = nodes_of_job(k), priority_of(k)
            queued.append(jid)
            k += 1
        free = driver.free_nodes()
        for jid in sorted(waiting):
            held = driver.nodes_of(jid)
            missing = need[jid] - len(held)
            if missing <= len(free):
                driver.start(jid, held + free[:missing])
                free = free[missing:]
                running[jid] = s
                del waiting[jid]
            elif s - waiting[jid] >= 3:
                driver.stop(jid)
                del waiting[jid]
                queued.append(jid)
                free = driver.free_nodes()
        for jid in sorted(queued, key=lambda j: (-priority[j], j)):
            n = need[jid]
            if n > len(free) and priority[jid] > 0 and s % 25 == 0:
                victims = [v for v in running if priority[v] == 0]
                if victims:
                    victim = max(victims, key=lambda v: (running[v], v))
                    if driver.preempt(victim, for_job=jid):
                        del running[victim]
                        queued.append(victim)
                        free = driver.free_nodes()
            if n <= len(free):
                driver.start(jid, free[:n])
                free = free[n:]
                queued.remove(jid)
                running[jid] = s
        events = driver.advance(driver.now() + step)
        for _, kind, job, _, _, _ in events:
            if kind == "job_failed" and job is not None:
                running.pop(job, None)
                waiting[job] = s
            elif kind == "job_done" and job is not None:
                running.pop(job, None)
        log.append(events)
    return log
