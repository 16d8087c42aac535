"""Independent SimPy model of AIReSim's standard scenario.

AIReSim (github.com/karthikp-ubc/airesim, MIT) is a SimPy simulator of one
large AI training job on a cluster whose servers fail and are repaired. This
module is a small model of its standard scenario written from AIReSim's
documented semantics (no code shared with AIReSim or with acesim); it is the
baseline of ``bench/test_bench_airesim.py``. AIReSim works in minutes, this
model in seconds.

AIReSim files read (the semantics below are taken from them):
``airesim/params.py`` and ``config.yaml`` (the defaults, "the AIReSim paper,
Table 1"), ``airesim/simulator.py`` (the main loop), ``airesim/coordinator.py``
(failure sampling), ``airesim/server.py`` (bad servers, cure on repair),
``airesim/scheduler.py`` and ``airesim/scheduling_policies.py`` (host
selection, warm standbys), ``airesim/pool.py`` (working and spare pools),
``airesim/repairs.py`` and ``airesim/policies.py`` (the repair pipeline and
its escalation), ``airesim/stats.py`` (what a run reports),
``tests/test_repair_escalation_policy.py``, ``CHANGELOG.md`` and
``docs/SIMULATION_REPORT.md``.

The standard scenario (:data:`STANDARD`):

* Cluster: 4,360 servers, 4,160 in the working pool and 200 in a spare pool
  (servers running preemptible background work). ``int(4360 * 0.15) = 654``
  servers, placed at random, are *bad*.
* Job: 4,096 servers plus 16 warm standbys (servers assigned to the job,
  idle, ready to swap in); 256 days of compute (``job_length``). There is no
  checkpoint interval: a failure loses no progress. Every failure costs the
  job a fixed recovery time (reloading its checkpoint) instead.
* Failures: only the 4,096 active servers fail, and only while the job
  computes (never during a recovery, a host selection or a wait for
  servers). A good server fails at rate 0.01 per day (exponential, MTBF 100
  days); a bad one at 6 times that (its random rate plus a systematic rate 5
  times the random rate). The first failure among the active servers is
  drawn from the exponential law of their summed rate and the failing server
  in proportion to its rate (AIReSim's aggregated sampling, coordinator.py);
  this model keeps the counts of good and bad active servers and draws the
  same law in O(1).
* A failure: the failed server leaves the working pool for repair at once;
  the job pays ``recovery_time`` = 20 min; then the first warm standby
  replaces it (no other cost). With no standby left then (a server repaired
  during the recovery may have refilled them), the job goes through *host
  selection*: if the working pool (every server in it not under repair,
  the job's own included) holds at least 4,096 servers, a uniform random
  sample of 4,096 + 16 of them (fewer standbys if fewer are there) becomes
  the new assignment, at ``host_selection_time`` = 3 min. Otherwise
  servers are pulled from the spare pool one at a time, each after
  ``preemption_wait_time`` = 20 min, until the working pool holds 4,112 (a
  pulled server stays in the working pool for good); with the spare pool
  empty the job stalls until a repair returns a server. The first start
  is a host selection too (3 min).
* Repair (the paper's model, restored as AIReSim's default on 2026-09-21 per
  CHANGELOG.md): automated repair lasting Exp(mean 120 min); then, with
  probability 0.80 and independently of its (silent) outcome, escalation to
  manual repair lasting Exp(mean 2 days), which fixes the server with
  probability 0.80; an unescalated automated repair fixes it with
  probability 0.60. A fixed bad server becomes good; an unfixed one comes
  back as it was. Every repaired server returns to the working pool, and to
  the warm standbys if fewer than 16 are left. No server is ever retired
  (``NeverRemove``); every failure is diagnosed, on the right server.
* Reported per replication: ``wall`` (AIReSim's ``total_training_time``),
  ``compute`` (``total_compute_time``, always the 256 days), ``recovery``,
  ``host_selection`` and ``preemption_wait`` (``total_wait_time``), the
  counts of failures (and how many were systematic), host selections,
  preemptions, stalls and manual repairs, and ``ettr`` = compute / wall
  (AIReSim's ``effective_training_ratio``). ``wall = compute + recovery +
  host_selection + preemption_wait`` plus the time spent stalled, which
  AIReSim does not report (the standard scenario never stalls).

Check against AIReSim: CHANGELOG.md gives a mean training time of 9,872.90 h
over AIReSim's replications with seeds 42-71 under these semantics;
``python bench/airesim_reference.py`` runs this model on the same number of
replications (30, seeds 42-71; the random streams are not AIReSim's) and
prints 9,874.2 +- 5.4 h (standard error), with 42.3 host selections and 12.2
preemptions per run (AIReSim's report from before the escalation change,
which used these semantics: 42.9 and about 14).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import simpy

__all__ = [
    "DTYPE",
    "FIELDS",
    "ONE_JOB",
    "STANDARD",
    "Scenario",
    "run_replications",
    "simulate_replication",
]

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0


@dataclass(frozen=True)
class Scenario:
    """AIReSim's parameters (``airesim/params.py``), in seconds and per second."""

    job_servers: int = 4096  # job_size
    warm_standbys: int = 16  # warm_standbys
    working_pool: int = 4160  # working_pool_size
    spare_pool: int = 200  # spare_pool_size
    work: float = 256 * DAY  # job_length
    random_rate: float = 0.01 / DAY  # random_failure_rate, per server
    systematic_multiplier: float = 5.0  # systematic_failure_rate_multiplier
    bad_fraction: float = 0.15  # systematic_failure_fraction
    recovery: float = 20 * MINUTE  # recovery_time
    host_selection: float = 3 * MINUTE  # host_selection_time
    preemption_wait: float = 20 * MINUTE  # preemption_wait_time
    auto_repair_mean: float = 120 * MINUTE  # auto_repair_time
    manual_repair_mean: float = 2 * DAY  # manual_repair_time
    escalate: float = 0.80  # prob_auto_to_manual
    auto_repair_fail: float = 0.40  # auto_repair_fail_prob
    manual_repair_fail: float = 0.20  # manual_repair_fail_prob

    @property
    def bad_servers(self) -> int:
        """Bad servers at the start (AIReSim truncates)."""
        return int((self.working_pool + self.spare_pool) * self.bad_fraction)

    @property
    def cure_probability(self) -> float:
        """Probability that one repair fixes a bad server."""
        return self.escalate * (1.0 - self.manual_repair_fail) + (1.0 - self.escalate) * (
            1.0 - self.auto_repair_fail
        )


#: AIReSim's defaults (``Params()``, ``config.yaml``).
STANDARD = Scenario()

#: A one-job scenario in AIReSim's terms (``bench/test_bench_airesim_one_job.py``):
#: 128 servers and 4 warm standbys on a working pool of exactly those 132
#: servers, no spare pool, no bad servers, AIReSim's random failure rate
#: (exponential, 0.01 a day a server), one repair stage of Exp(mean 48 h)
#: that always fixes, 28 days of compute. With the standbys used up and
#: fewer than 128 servers out of repair, the job waits, as AIReSim's does,
#: until the whole working pool (132) is back (AIReSim's docs/ARCHITECTURE.md:
#: its stall loop waits on repairs until the working pool holds
#: ``total_servers_needed``, the job's servers and its standbys).
ONE_JOB = Scenario(
    job_servers=128,
    warm_standbys=4,
    working_pool=132,
    spare_pool=0,
    work=28 * DAY,
    bad_fraction=0.0,
    auto_repair_mean=48 * HOUR,
    escalate=0.0,
    auto_repair_fail=0.0,
)

#: The fields of a replication's row, in order (the dtype of :func:`run_replications`).
FIELDS: tuple[str, ...] = (
    "wall",
    "compute",
    "recovery",
    "host_selection",
    "preemption_wait",
    "failures",
    "systematic_failures",
    "host_selections",
    "preemptions",
    "stalls",
    "manual_repairs",
    "ettr",
)
DTYPE = np.dtype([(name, np.float64) for name in FIELDS])


class _Members:
    """A set of server ids with O(1) add, remove and uniform choice."""

    __slots__ = ("items", "pos")

    def __init__(self, size: int) -> None:
        self.items: list[int] = []
        self.pos = [-1] * size

    def add(self, s: int) -> None:
        self.pos[s] = len(self.items)
        self.items.append(s)

    def remove(self, s: int) -> None:
        k = self.pos[s]
        last = self.items.pop()
        if last != s:
            self.items[k] = last
            self.pos[last] = k
        self.pos[s] = -1

    def clear(self) -> None:
        for s in self.items:
            self.pos[s] = -1
        self.items.clear()

    def __len__(self) -> int:
        return len(self.items)


def simulate_replication(scenario: Scenario = STANDARD, seed: int = 0) -> dict[str, float]:
    """One replication of ``scenario``: its row as a dict (keys :data:`FIELDS`)."""
    sc = scenario
    rng = random.Random(seed)
    env = simpy.Environment()
    total = sc.working_pool + sc.spare_pool
    ids = list(range(total))
    rng.shuffle(ids)
    bad = [False] * total
    for s in rng.sample(range(total), sc.bad_servers):
        bad[s] = True
    working = set(ids[: sc.working_pool])  # not under repair: active, standby or idle
    spare = deque(ids[sc.working_pool :])
    active_bad, active_good = _Members(total), _Members(total)
    standbys: deque[int] = deque()
    good_rate = sc.random_rate
    bad_rate = sc.random_rate * (1.0 + sc.systematic_multiplier)
    systematic_share = sc.systematic_multiplier / (1.0 + sc.systematic_multiplier)
    row = dict.fromkeys(FIELDS, 0.0)
    stalled: list[simpy.Event] = []  # the event a stalled job waits on

    def activate(s: int) -> None:
        (active_bad if bad[s] else active_good).add(s)

    def host_selection() -> bool:
        pool = list(working)
        if len(pool) < sc.job_servers:
            return False
        chosen = rng.sample(pool, min(sc.job_servers + sc.warm_standbys, len(pool)))
        active_bad.clear()
        active_good.clear()
        for s in chosen[: sc.job_servers]:
            activate(s)
        standbys.clear()
        standbys.extend(chosen[sc.job_servers :])
        row["host_selections"] += 1
        return True

    def repair(s: int) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(rng.expovariate(1.0 / sc.auto_repair_mean))
        if rng.random() < sc.escalate:  # decided before (and apart from) the outcome
            row["manual_repairs"] += 1
            yield env.timeout(rng.expovariate(1.0 / sc.manual_repair_mean))
            fixed = rng.random() >= sc.manual_repair_fail
        else:
            fixed = rng.random() >= sc.auto_repair_fail
        if fixed:
            bad[s] = False
        working.add(s)
        if len(standbys) < sc.warm_standbys:
            standbys.append(s)
        if stalled and not stalled[0].triggered:
            stalled[0].succeed()

    def job() -> Generator[simpy.Event, Any, None]:
        remaining = sc.work
        while remaining > 0:
            if not host_selection():
                while len(working) < sc.job_servers + sc.warm_standbys:
                    if spare:
                        yield env.timeout(sc.preemption_wait)
                        row["preemption_wait"] += sc.preemption_wait
                        working.add(spare.popleft())
                        row["preemptions"] += 1
                    else:
                        row["stalls"] += 1
                        stalled.append(env.event())
                        yield stalled[0]
                        stalled.clear()
                if not host_selection():
                    raise AssertionError("host selection failed with enough servers")
            yield env.timeout(sc.host_selection)
            row["host_selection"] += sc.host_selection
            while True:  # compute until a failure, then swap in a standby
                n_bad = len(active_bad)
                rate_bad = n_bad * bad_rate
                rate = rate_bad + len(active_good) * good_rate
                ttf = rng.expovariate(rate)
                if ttf >= remaining:
                    yield env.timeout(remaining)
                    remaining = 0.0
                    break
                yield env.timeout(ttf)
                remaining -= ttf
                if rng.random() * rate < rate_bad:
                    s = active_bad.items[int(rng.random() * n_bad)]
                    active_bad.remove(s)
                    if rng.random() < systematic_share:
                        row["systematic_failures"] += 1
                else:
                    s = active_good.items[int(rng.random() * len(active_good))]
                    active_good.remove(s)
                row["failures"] += 1
                working.discard(s)
                env.process(repair(s))
                yield env.timeout(sc.recovery)
                row["recovery"] += sc.recovery
                if not standbys:
                    break  # to host selection
                activate(standbys.popleft())
        row["wall"] = env.now

    env.process(job())
    env.run()  # ends when the job is done and every repair has finished
    row["compute"] = sc.work
    row["ettr"] = sc.work / row["wall"]
    return row


def run_replications(n: int, seed: int = 0, scenario: Scenario = STANDARD) -> npt.NDArray[np.void]:
    """``n`` replications with seeds ``seed``, ``seed + 1``, ... (AIReSim's
    convention): one row each, fields :data:`FIELDS`, times in seconds."""
    rows = np.empty(n, DTYPE)
    for i in range(n):
        row = simulate_replication(scenario, seed + i)
        rows[i] = tuple(row[name] for name in FIELDS)
    return rows


def main() -> None:
    """Runs AIReSim's 30 replications (seeds 42-71) of the standard scenario
    and prints each field's mean and standard error."""
    n = 30
    rows = run_replications(n, seed=42)
    times = {"wall", "compute", "recovery", "host_selection", "preemption_wait"}
    for name in FIELDS:
        scale, unit = (HOUR, "h") if name in times else (1.0, "")
        values = rows[name] / scale
        se = float(values.std(ddof=1)) / math.sqrt(n)
        print(f"{name:<20}{float(values.mean()):>12,.3f} +- {se:.3f} {unit}")


if __name__ == "__main__":
    main()
