"""Step overhead of an outside scheduler: ``FleetModel.advance`` per event
and the JSON-lines protocol (``acesim serve --stdio``) per request, against
``simulate``'s per-event cost, measured side by side in one run.

Scenario (tests/embedding_scheduler.py): 32 nodes of 8 GPUs, 2 hot spares,
Weibull(0.7) node failures (scale 20 days), LogNormal repairs, 10% lemon
nodes, exponential job-level failures (mean 10 days), three causes,
quarantine (2 failures in 7 days: 3 days out), checkpoint events reported.
A stream of jobs (1 to 8 nodes, 3 hours to 2 days of work, four always
queued) is driven for 10,000 scheduler steps by a small Python scheduler
(restart failed jobs on survivors and free nodes, priority then FIFO,
a preemption every 25 steps, advance by an hour or to the next event).

- FleetModel: the loop on ``ace.FleetModel`` in this process; the time in
  its ``advance`` calls per engine event (the fleet row's ``events``, as
  ``simulate`` counts them) and per reported event.
- FleetModel with state queries: the same loop reading ``node_states()``,
  ``down_nodes()``, ``running()``, ``waiting()`` and ``queued()`` after
  every ``advance``: its ``advance`` time per engine event (the queries must
  not make ``advance`` slower) and the queries' own time per step.
- Protocol: the same loop through ``acesim serve --stdio`` in a
  subprocess; the round trip per request (written, answered, read with a
  blocking read and parsed), and the server's own share of it (the same
  request lines answered by ``acesim.serve.Server`` in this process).
- simulate: the jobs the loop submitted, at the times it submitted them, on
  the same fleet under the built-in scheduler; wall time per event of the
  fleet rows (``events`` summed over replicas), one thread.

Rounds interleave the three (best of the rounds each). Run:
``python -m pytest bench/test_bench_embedding.py -q``; the figures are in
the terminal summary and ``benchmark.extra_info``; the test asserts
correctness only (the protocol's run is FleetModel's, the rows add up),
never time.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from acesim import serve
from acesim.simulation import BUCKETS
from conftest import report
from embedding_scheduler import Client, Direct, Remote, job_object, run_scheduler, scenario_objects

STEPS = 10_000
REPLICAS = 50
ROUNDS = 3


def simulate_jobs(res: ace.SimulationResult) -> list[ace.Job]:
    """The jobs of a driven run, each submitted when the loop submitted it."""
    jobs = []
    for k, submit in enumerate(res.jobs["submit"]):
        j = job_object(k)
        jobs.append(
            ace.Job(
                j.gpus,
                j.work,
                j.checkpoint_interval,
                init=j.init,
                save=j.save,
                load=j.load,
                submit=float(submit),
                priority=j.priority,
                name=j.name,
                persist=j.persist,
                tiers=j.tiers,
            )
        )
    return jobs


def check_rows(rows: np.ndarray) -> None:
    total = sum(rows[b].astype(np.float64) for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)


def same_tables(a: ace.SimulationResult, b: dict[str, Any]) -> None:
    """The protocol's rows are FleetModel's, field for field."""
    decode = {"Infinity": np.inf, "-Infinity": -np.inf, "NaN": np.nan}
    for name in ("jobs", "fleet", "trace"):
        table = getattr(a, name)
        rows = b[name]
        assert len(rows) == len(table), name
        for field in table.dtype.names:
            if field == "pad_":
                continue
            values = np.array(
                [decode.get(r[field], r[field]) for r in rows], dtype=table[field].dtype
            )
            assert values.tobytes() == table[field].tobytes(), (name, field)


class Querying(Direct):
    """Direct, reading the state a scheduler reads after every advance
    (outside the advance time); ``query_seconds`` adds that up."""

    def __init__(self) -> None:
        super().__init__()
        self.query_seconds = 0.0

    def advance(self, until: float) -> Any:
        events = super().advance(until)
        t0 = time.perf_counter()
        m = self.model
        m.node_states(), m.down_nodes(), m.running(), m.waiting(), m.queued()
        self.query_seconds += time.perf_counter() - t0
        return events


def test_embedding_step_overhead(benchmark: Any) -> None:
    logs: dict[str, list[float]] = {
        "fleet_model": [],
        "fleet_model_queried": [],
        "queries": [],
        "fleet_model_reported": [],
        "protocol": [],
        "server": [],
        "simulate": [],
    }
    last: dict[str, Any] = {}

    def round_() -> None:
        direct = Direct()
        t0 = time.perf_counter()
        direct_log = run_scheduler(direct, STEPS)
        loop_seconds = time.perf_counter() - t0
        res = direct.model.result()
        engine_events = int(res.fleet["events"].sum())
        reported = sum(len(step) for step in direct_log)
        logs["fleet_model"].append(direct.advance_seconds / engine_events)
        logs["fleet_model_reported"].append(direct.advance_seconds / reported)

        queried = Querying()
        assert run_scheduler(queried, STEPS) == direct_log
        logs["fleet_model_queried"].append(queried.advance_seconds / engine_events)
        logs["queries"].append(queried.query_seconds / STEPS)

        client = Client(threaded=False, record=True)
        try:
            remote = Remote(client)
            remote_log = run_scheduler(remote, STEPS)
            logs["protocol"].append(remote.request_seconds / remote.requests)
            assert remote_log == direct_log
            tables = client.ok("result", model=remote.model)
            assert client.close() == (0, "")
        finally:
            client.kill()
        # The server's own work per request: the same lines answered in process.
        assert client.record is not None
        lines = client.record[:-1]  # (not the result)
        server = serve.Server()
        t0 = time.perf_counter()
        replies = [serve._dumps(server.reply(line)) for line, _ in lines]
        logs["server"].append((time.perf_counter() - t0) / len(lines))
        assert replies == [reply for _, reply in lines]

        kwargs = scenario_objects()
        jobs = simulate_jobs(res)
        t0 = time.perf_counter()
        sim = ace.simulate(
            jobs,
            failures=kwargs["failures"],
            fleet=kwargs["fleet"],
            policy=kwargs["policy"],
            causes=kwargs["causes"],
            replicas=REPLICAS,
            seed=kwargs["seed"],
            threads=1,
        )
        sim_seconds = time.perf_counter() - t0
        sim_events = int(sim.fleet["events"].sum())
        logs["simulate"].append(sim_seconds / sim_events)
        last.update(
            res=res,
            tables=tables,
            sim=sim,
            engine_events=engine_events,
            reported=reported,
            loop_seconds=loop_seconds,
            requests=remote.requests,
            sim_events=sim_events,
            jobs=len(jobs),
        )

    benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)

    res, sim = last["res"], last["sim"]
    same_tables(res, last["tables"])
    check_rows(res.jobs)
    check_rows(sim.jobs)
    assert res.jobs["completed"].sum() > 100 and res.jobs["failures"].sum() > 0
    assert sim.jobs["completed"].mean() > 0.5

    sim_event = min(logs["simulate"])
    advance_event = min(logs["fleet_model"])
    per_request = min(logs["protocol"])
    server_side = min(logs["server"])
    per_reported = min(logs["fleet_model_reported"])
    advance_queried = min(logs["fleet_model_queried"])
    queries = min(logs["queries"])
    info = {
        "simulate_us_per_event": sim_event * 1e6,
        "fleet_model_advance_us_per_event": advance_event * 1e6,
        "fleet_model_advance_us_per_reported_event": per_reported * 1e6,
        "fleet_model_advance_with_queries_us_per_event": advance_queried * 1e6,
        "state_queries_us_per_step": queries * 1e6,
        "fleet_model_loop_us_per_step": last["loop_seconds"] / STEPS * 1e6,
        "protocol_us_per_request": per_request * 1e6,
        "server_us_per_request": server_side * 1e6,
        "advance_ratio": advance_event / sim_event,
        "protocol_ratio": per_request / sim_event,
        "steps": STEPS,
        "engine_events": last["engine_events"],
        "reported_events": last["reported"],
        "requests": last["requests"],
        "simulate_events": last["sim_events"],
        "simulate_replicas": REPLICAS,
        "jobs": last["jobs"],
        "rounds": ROUNDS,
    }
    benchmark.extra_info.update(info)
    line = (
        f"embedding, {STEPS} scheduler steps, {last['jobs']} jobs, one core: simulate "
        f"{sim_event * 1e6:.3f} us/event ({last['sim_events']} events, {REPLICAS} replicas); "
        f"FleetModel.advance {advance_event * 1e6:.3f} us per engine event "
        f"({advance_event / sim_event:.1f}x simulate; {per_reported * 1e6:.2f} us per reported "
        f"event, {last['engine_events']} engine / {last['reported']} reported events; "
        f"{advance_queried * 1e6:.3f} us per engine event with the five state queries read "
        f"after every advance, which cost {queries * 1e6:.1f} us a step); "
        f"protocol {per_request * 1e6:.1f} us per request round trip "
        f"({per_request / sim_event:.0f}x simulate's event; {last['requests']} requests), "
        f"of which the server's own work {server_side * 1e6:.1f} us"
    )
    report(line)
