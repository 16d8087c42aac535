"""A plain-Python model of the 12-gpu-goodput-mtbi lab's simulation.

The lab (github.com/inigogonzalezgarcia/12-gpu-goodput-mtbi, MIT) simulates
interruptions of one 1,024-GPU training job on a node pool with a plain
Python loop (standard library only) that writes an event log, one event per
checkpoint start and end included, and measures goodput from it. This
module is an independent model written from the lab's documentation
(``README.md``, ``docs/assumptions.md``, ``docs/definitions.md``,
``docs/event-log.md``, ``docs/results.md`` and ``scenarios/*.json``; no
code of the lab's): the baseline of ``bench/test_bench_goodput_mtbi.py``.
Times in seconds.

Semantics (from the lab's documentation):

* One job of 128 nodes x 8 GPUs holds its nodes for the whole period (28
  days); the other nodes of the pool are spares. Node groups give each node
  its MTBF (the firmware scenario: 100 nodes at 3,000 h, 32 at 600 h); the
  job starts on a uniform random choice of 128 of them (the lab's choice is
  not documented).
* Interruptions are Poisson: each node of the job at its own rate 1 / MTBF,
  and the job itself at 1 / 40 h (job-level: software crashes, storage
  stalls). Only while the job runs (computes or writes a checkpoint):
  spares and nodes under repair do not fail, faults during detection or
  restart are ignored.
* The job computes for the checkpoint interval, then blocks for the
  checkpoint write (``checkpoint_start`` .. ``checkpoint_end``); a
  checkpoint keeps everything computed before it. The interval is fixed or
  Daly's (computed from the nominal MTBI, 14.8 h).
* An interruption draws its cause from the shares of its source (node or
  job causes): the compute since the last checkpoint is lost (and the write
  in progress); the job is down for the cause's detection time; a cause
  with ``node_down`` sends the node to repair (exponential, mean 48 h) and
  the job takes a healthy spare, or waits for the first node back from
  repair; then the restart (20 min) and training resumes from the last
  checkpoint.
* Work in flight at the end counts as productive. Goodput = productive /
  the period.

The seven published scenarios and their published mean goodputs (20 seeds,
``docs/results.md``) are :data:`SCENARIOS` and :data:`PUBLISHED_GOODPUT`;
``python bench/goodput_mtbi_reference.py`` prints this model's mean over the
same seeds (1-20; the random streams are not the lab's) beside them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

__all__ = [
    "BASELINE",
    "PUBLISHED_GOODPUT",
    "SCENARIOS",
    "Cause",
    "Scenario",
    "daly_interval",
    "run",
]

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0


@dataclass(frozen=True)
class Cause:
    name: str
    share: float
    detect: float  # seconds
    node_down: bool


@dataclass(frozen=True)
class Scenario:
    name: str
    node_groups: tuple[tuple[int, float], ...] = ((132, 3000 * HOUR),)  # (count, MTBF)
    job_nodes: int = 128
    gpus_per_node: int = 8
    job_mtbi: float = 40 * HOUR
    node_causes: tuple[Cause, ...] = field(default_factory=tuple)
    job_causes: tuple[Cause, ...] = field(default_factory=tuple)
    checkpoint: float = 5 * MINUTE
    interval: float | None = 30 * MINUTE  # None: Daly's
    restart: float = 20 * MINUTE
    repair: float = 48 * HOUR
    days: float = 28

    @property
    def nominal_mtbi(self) -> float:
        """The job's MTBI on the first group's nodes: 1 / (N / MTBF + 1 / J)."""
        mtbf = self.node_groups[0][1]
        return 1.0 / (self.job_nodes / mtbf + 1.0 / self.job_mtbi)

    @property
    def checkpoint_interval(self) -> float:
        if self.interval is not None:
            return self.interval
        return daly_interval(self.checkpoint, self.nominal_mtbi)


def daly_interval(c: float, m: float) -> float:
    """Daly's higher-order interval (compute between checkpoints)."""
    if c >= 2 * m:
        return m
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def _causes(hang: float) -> tuple[tuple[Cause, ...], tuple[Cause, ...]]:
    node = (
        Cause("gpu_xid79", 0.25, 3 * MINUTE, True),
        Cause("gpu_memory", 0.20, 3 * MINUTE, True),
        Cause("fabric_link", 0.15, hang, True),
        Cause("host", 0.10, 5 * MINUTE, True),
        Cause("collective_hang", 0.30, hang, False),
    )
    job = (
        Cause("software_crash", 0.6, 1 * MINUTE, False),
        Cause("storage_stall", 0.4, hang, False),
    )
    return node, job


_SLOW_NODE, _SLOW_JOB = _causes(30 * MINUTE)
_FAST_NODE, _FAST_JOB = _causes(5 * MINUTE)
BASELINE = Scenario("baseline", node_causes=_SLOW_NODE, job_causes=_SLOW_JOB)

#: The lab's seven scenarios (scenarios/01-07), each one change from the baseline.
SCENARIOS: dict[str, Scenario] = {
    "baseline": BASELINE,
    "daly-interval": replace(BASELINE, name="daly-interval", interval=None),
    "async-checkpoint": replace(
        BASELINE, name="async-checkpoint", checkpoint=0.5 * MINUTE, interval=None
    ),
    "fast-hang-detection": replace(
        BASELINE, name="fast-hang-detection", node_causes=_FAST_NODE, job_causes=_FAST_JOB
    ),
    "no-spares": replace(BASELINE, name="no-spares", node_groups=((128, 3000 * HOUR),)),
    "firmware-regression": replace(
        BASELINE,
        name="firmware-regression",
        node_groups=((100, 3000 * HOUR), (32, 600 * HOUR)),
    ),
    "combined": replace(
        BASELINE,
        name="combined",
        node_causes=_FAST_NODE,
        job_causes=_FAST_JOB,
        checkpoint=0.5 * MINUTE,
        interval=None,
        node_groups=((136, 3000 * HOUR),),
    ),
}

#: Mean goodput over the lab's 20 seeds (docs/results.md).
PUBLISHED_GOODPUT: dict[str, float] = {
    "baseline": 0.796,
    "daly-interval": 0.851,
    "async-checkpoint": 0.917,
    "fast-hang-detection": 0.806,
    "no-spares": 0.361,
    "firmware-regression": 0.735,
    "combined": 0.940,
}


def _pick(rng: random.Random, causes: tuple[Cause, ...]) -> Cause:
    u = rng.random() * sum(c.share for c in causes)
    for c in causes:
        u -= c.share
        if u < 0:
            return c
    return causes[-1]


def run(sc: Scenario, seed: int) -> dict[str, float]:
    """One run of ``sc``: the time in each category (seconds), the
    interruption count, the event count and the goodput."""
    rng = random.Random(seed)
    end = sc.days * DAY
    rates = [1.0 / mtbf for count, mtbf in sc.node_groups for _ in range(count)]
    nodes = list(range(len(rates)))
    job = rng.sample(nodes, sc.job_nodes)
    in_job = set(job)
    spares = [n for n in nodes if n not in in_job]
    repairs: list[tuple[float, int]] = []  # (back at, node), unsorted
    job_rate = 1.0 / sc.job_mtbi
    interval, write = sc.checkpoint_interval, sc.checkpoint
    events: list[tuple[float, str, str]] = [(0.0, "start", "")]
    spent = dict.fromkeys(
        ("productive", "checkpoint", "lost", "detection", "waiting", "restart"), 0.0
    )
    interruptions = 0
    t = 0.0

    def return_repaired(now: float) -> None:
        for item in [r for r in repairs if r[0] <= now]:
            repairs.remove(item)
            spares.append(item[1])

    while t < end:
        node_rate = sum(rates[n] for n in job)
        fault = t + rng.expovariate(node_rate + job_rate)
        # Compute and checkpoint until the fault or the end.
        since_ckpt = 0.0  # compute since the last checkpoint
        while True:
            stop = min(fault, end)
            if t + interval >= stop:  # the fault or the end comes mid-compute
                since_ckpt += stop - t
                t = stop
                in_write = 0.0
                break
            t += interval
            since_ckpt += interval
            events.append((t, "checkpoint_start", ""))
            if t + write >= stop:  # mid-write
                in_write = stop - t
                t = stop
                break
            t += write
            events.append((t, "checkpoint_end", ""))
            spent["productive"] += since_ckpt
            spent["checkpoint"] += write
            since_ckpt = 0.0
        if t >= end and fault >= end:
            spent["productive"] += since_ckpt  # in flight at the end
            spent["checkpoint"] += in_write
            break
        # An interruption: its source in proportion to the rates, then its cause.
        interruptions += 1
        if rng.random() * (node_rate + job_rate) < node_rate:
            u = rng.random() * node_rate
            node = job[-1]
            for n in job:
                u -= rates[n]
                if u < 0:
                    node = n
                    break
            cause = _pick(rng, sc.node_causes)
        else:
            node, cause = -1, _pick(rng, sc.job_causes)
        events.append((t, "interrupt", cause.name))
        spent["lost"] += since_ckpt + in_write
        down = min(cause.detect, end - t)
        spent["detection"] += down
        t += down
        events.append((t, "detected", ""))
        if cause.node_down and node >= 0 and t < end:
            job.remove(node)
            repairs.append((t - down + rng.expovariate(1.0 / sc.repair), node))
            return_repaired(t)
            if not spares:  # wait for the first node back from repair
                back = min(repairs)[0]
                wait = min(back, end) - t
                spent["waiting"] += wait
                t += wait
                return_repaired(t)
            if spares:
                job.append(spares.pop(0))
        events.append((t, "nodes_ready", ""))
        restart = min(sc.restart, max(end - t, 0.0))
        spent["restart"] += restart
        t += restart
        events.append((t, "running", ""))
    events.append((end, "end", ""))
    row = dict(spent)
    row["interruptions"] = float(interruptions)
    row["events"] = float(len(events))
    row["goodput"] = spent["productive"] / end
    return row


def main() -> None:
    """Runs the lab's 20 seeds (1-20) of each scenario and prints the mean
    goodput beside the published one."""
    for name, sc in SCENARIOS.items():
        goodput = [run(sc, seed)["goodput"] for seed in range(1, 21)]
        mean = sum(goodput) / len(goodput)
        print(f"{name:<22}{mean:>8.1%}   published {PUBLISHED_GOODPUT[name]:.1%}")


if __name__ == "__main__":
    main()
