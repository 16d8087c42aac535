"""Independent SimPy model of one gang job on a small fleet whose nodes fail
and are repaired (no code shared with acesim's core).

Semantics (DESIGN.md sections 4 and 6, node-level failures only):

* ``nodes`` nodes, each failing after an exponential time of mean ``mtbf``
  while it is in service, busy or idle; a failed node is repaired for a
  constant ``repair`` and returns as good as new (a fresh draw). A node out
  of service cannot fail.
* One job of ``width`` nodes is submitted at t = 0 and starts on free nodes.
  Every start costs ``restart`` (init + load). Compute runs at 1 s of
  progress per s; after every ``interval`` of progress (the last segment may
  be shorter) a checkpoint write of ``save`` commits it. A failure of one of
  its nodes rolls back to the last checkpoint (no detection latency).
* Re-placement ``spares``: the job takes any node in service and idle at
  once, or waits for the first one to come back. ``wait_repair``: it waits
  for its failed node(s) to return (a node it holds that fails while it
  waits is waited for too).
* Buckets: productive, wasted (rolled-back compute and cut-off writes),
  ckpt_stall, overhead (starts, cut-off ones included), recovery_wait; they
  add up to wall.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import simpy


def simulate(
    rng: np.random.Generator,
    *,
    nodes: int,
    width: int,
    mtbf: float,
    repair: float,
    work: float,
    interval: float,
    save: float,
    restart: float,
    policy: str,
) -> dict[str, float]:
    env = simpy.Environment()
    in_service = [True] * nodes
    held: set[int] = set()
    waiting_for: set[int] = set()
    out = dict(productive=0.0, wasted=0.0, ckpt_stall=0.0, overhead=0.0, recovery_wait=0.0)
    state: dict[str, Any] = {"failures": 0, "running": False}
    returned = [env.event()]  # fires whenever a node returns to service

    def idle_nodes() -> list[int]:
        return [n for n in range(nodes) if in_service[n] and n not in held]

    def node(n: int) -> Generator[Any, Any, None]:
        while True:
            yield env.timeout(rng.exponential(mtbf))
            in_service[n] = False
            if n in held:
                if state["running"]:
                    job_proc.interrupt(n)  # the job decides what to do with it
                elif policy == "wait_repair":
                    waiting_for.add(n)  # it was waiting while holding this node
                else:
                    held.discard(n)  # it needs another one
            yield env.timeout(repair)
            in_service[n] = True
            event, returned[0] = returned[0], env.event()
            event.succeed(n)

    def acquire(count: int) -> Generator[Any, Any, None]:
        while len(held) < count:
            free = idle_nodes()
            if free:
                held.add(free[0])
                continue
            yield returned[0]

    def job() -> Generator[Any, Any, None]:
        committed = 0.0
        yield from acquire(width)
        while True:
            state["running"] = True
            phase, start = "start", env.now
            try:
                yield env.timeout(restart)
                out["overhead"] += restart
                while committed < work:
                    segment = min(interval, work - committed)
                    phase, start = "compute", env.now
                    yield env.timeout(segment)
                    phase, start = "save", env.now
                    yield env.timeout(save)
                    out["productive"] += segment
                    out["ckpt_stall"] += save
                    committed += segment
                return
            except simpy.Interrupt as failure:
                state["running"] = False
                state["failures"] += 1
                elapsed = env.now - start
                if phase == "start":
                    out["overhead"] += elapsed
                elif phase == "compute":
                    out["wasted"] += elapsed
                else:
                    out["wasted"] += segment + elapsed
                lost = failure.cause
                t0 = env.now
                if policy == "spares":
                    held.discard(lost)
                    yield from acquire(width)
                else:
                    waiting_for.add(lost)
                    while any(not in_service[n] for n in waiting_for):
                        yield returned[0]
                    waiting_for.clear()
                out["recovery_wait"] += env.now - t0

    job_proc = env.process(job())
    for n in range(nodes):
        env.process(node(n))
    env.run(until=job_proc)
    res = dict(out)
    res["wall"] = env.now
    res["failures"] = float(state["failures"])
    return res
