"""acesim against a SimPy model of AIReSim's standard scenario
(bench/airesim_reference.py, whose docstring gives AIReSim's semantics and
the AIReSim files they come from): the same scenario and the same number of
replications, each timed on one core.

Scenario (AIReSim's defaults, airesim/params.py and config.yaml): one job of
4,096 servers with 16 warm standbys, on a working pool of 4,160 servers and
a spare pool of 200 (20 min to pull one in); 256 days of compute; active
servers fail at 0.01 a day while the job computes, and 15% of all servers
are bad and fail 6 times as often; every failure costs a 20-minute recovery
and loses no progress; the failed server goes to automated repair (Exp,
mean 2 h), escalated with probability 0.8 to manual repair (Exp, mean 2
days), which cures a bad server with probability 0.8 (0.6 unescalated); a
3-minute host selection when the standbys run out. Headline metric: the
mean wall time to finish the work (AIReSim's ``total_training_time``; the
SimPy model gives 9,874 h) and the pooled ETTR, work / mean wall.

Mapping onto acesim (seconds throughout):

- Fleet model: ``Fleet(4360, spares=16, cold_spares=200,
  cold_spare_delay=20 min, repair=Repair([RepairStage(Exp(2 h),
  escalate=0.8, fix=0.6), RepairStage(Exp(2 d), fix=0.8)]))`` under
  ``Replacement.SPARES``: the warm standbys are the hot spares, the 48
  servers of working-pool headroom the free nodes (4,360 - 16 - 200 = 4,144
  = 4,096 + 48), the spare pool the cold spares. The job holds 4,096 nodes
  of 8 GPUs (AIReSim counts servers; the GPU count changes nothing here).
  Single-job model: the same job and failures without a fleet (replacements
  always at hand).
- Failures are job-level (``failures=Exponential(...)``; each is blamed on
  a uniformly drawn node of the job, which goes to repair), because
  acesim's job-level failure clock runs only while the job holds hardware
  and stops in detection, as AIReSim's servers fail only while the job
  computes. AIReSim's 20-minute recovery is the failure's detection latency
  (``Cause(detect=...)``): nothing fails during it, as in AIReSim.
- No lost progress: acesim rolls a failure back to the last checkpoint, so
  the job checkpoints every t = 10 min of progress at no cost, and two
  closed forms undo the rollback in the mean. With a failure rate r per
  second of computing (rework included), the progress between two failures
  is t times a geometric count of mean 1 / (e^(r t) - 1); that is AIReSim's
  1 / R (R: AIReSim's failures per second of progress) for r = ln(1 + R t)
  / t, so with that rate the job fails as often per second of progress as in
  AIReSim (acesim's MTBF 1 / r is 2,267 s, AIReSim's 1 / R 1,980 s). The
  rework per failure is then 1 / r - 1 / R = 287 s, and the detection
  latency is 20 min less that, 913 s: a failure costs 20 min on average.
- Bad servers: R = 4,096 x 0.01 a day plus AIReSim's expected systematic
  failures per second of progress. A bad server that runs fails until a
  repair cures it (probability c = 0.8 x 0.8 + 0.2 x 0.6 = 0.76 a repair):
  1 / c failures on average, 5/6 of them systematic (its random ones are in
  the 4,096 x 0.01 a day already). Practically every bad server of the
  working pool (654 x 4,160 / 4,360 = 624 expected) runs and is cured
  within the run (a cure takes about 22 days of compute on average), so a
  run has 624 x (5/6) / 0.76 = 684 systematic failures (the SimPy model: 689
  +- 3.5, the ~2 more from bad spare-pool servers pulled in). acesim spreads
  them evenly over the run; in AIReSim they come early, while bad servers
  are many. acesim's lemon nodes (``lemon_fraction=0.15`` and the repair
  pipeline's ``fix``, which cures them) would model bad servers directly,
  but a node's failure clock keeps running while its job recovers (the job
  holds its nodes), and a lemon that fails then goes to repair at no cost
  to the job. A trial of that mapping (checkpoints every minute, 50
  replications) had about 320 of its ~740 lemon failures a run strike during
  a recovery and a mean wall time 85 h (0.9%) below the SimPy model's.

Where the two models still differ:

- Host selection and the spare pool: acesim re-places a failed node from
  the hot spares, then the free nodes, at no cost, and takes a cold spare
  (20 min; several may be on their way at once; back to the cold reserve
  after its repair) only when both are used up: about 1.2 h of
  ``recovery_wait`` a run. AIReSim keeps only its 16 standbys, pays 3 min
  for a host selection when they run out (42 a run, 2.1 h) and, when the
  working pool is then short, 20 min for each spare-pool server it pulls in,
  one after the other, until 4,112 are available (12 a run, 4.1 h; those
  servers stay). The single-job model has no pool at all: it is compared
  with the SimPy model's wall time less its host selections and waits for
  servers.
- In acesim the failed node's repair starts after the detection latency, 15
  min later than in AIReSim: nodes stay out of service 0.6% longer.
- The expected count of systematic failures leaves out the bad servers
  pulled in from the spare pool (about 2 failures, 0.7 h).
- Spread: the progress between failures is a geometric multiple of 10 min
  in acesim (exponential in AIReSim), and its systematic failures are
  Poisson rather than set by AIReSim's 654 bad servers, so acesim's wall
  time varies more from run to run (SD about 40 h, the SimPy model's about
  27 h). Each model's standard error is its own.

Expected difference of the mean wall time, acesim less SimPy: about -7 h
(0.07%) for the fleet model, -2 h for the single-job model (against the
wall time less the pool's waits). The check allows 3 combined standard
errors: about 19 h on 60 replications a side, 11 h with acesim on 1,000.

Speed: the fleet model's time goes into its failures, about 3.8 us each
with the job on 4,096 nodes (1 us on 256: each recovery looks at every node
of the job); the single-job model's, about 0.1 us a failure (1.0-1.5 ms a
replication), includes the failure trace (a row a failure, 0.5 GB for the
1,000-replication run). The SimPy model does O(1) work per failure, where
AIReSim's coordinator lists the rates of the 4,096 active servers at every
failure: it is, if anything, a faster baseline than AIReSim itself (not
measured here).

Run: ``python -m pytest bench/test_bench_airesim.py -q -s`` (about 20 s on
two cores). The per-replication time ratios (SimPy / acesim) and both
models' mean wall times are printed in the terminal summary and stored in
``benchmark.extra_info``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("simpy")
pytest.importorskip("pytest_benchmark")

import acesim as ace
from airesim_reference import STANDARD, run_replications
from conftest import against_simpy, report, timed

SC = STANDARD
GPUS_PER_NODE = 8
INTERVAL = 10 * ace.MINUTE  # zero-cost checkpoints, every 10 min of progress

#: AIReSim's expected systematic failures per run (see the module docstring).
BAD_IN_WORKING_POOL = SC.bad_servers * SC.working_pool / (SC.working_pool + SC.spare_pool)
SYSTEMATIC = (
    BAD_IN_WORKING_POOL
    / SC.cure_probability
    * SC.systematic_multiplier
    / (1.0 + SC.systematic_multiplier)
)
#: AIReSim's failures per second of progress.
RATE = SC.job_servers * SC.random_rate + SYSTEMATIC / SC.work
#: acesim's job-level MTBF (per second holding hardware) with as many
#: failures per second of progress under checkpoints every INTERVAL.
MTBF = INTERVAL / math.log1p(RATE * INTERVAL)
#: Mean rework per failure, and the detection latency that makes a failure
#: cost AIReSim's recovery time on average.
REWORK = MTBF - 1.0 / RATE
DETECT = SC.recovery - REWORK
CAUSES = (ace.Cause("server failure", 1.0, detect=ace.Constant(DETECT), node_down=True),)

REPLICAS = 60  # both models, for the like-for-like timing (SimPy: two timed halves)
THROUGHPUT_REPLICAS = 1_000  # acesim alone, single-job model (a 0.5 GB failure trace)
SEED = 7
SCENARIO = "AIReSim scenario (4,096-server job, 4,160 + 200 servers, 256 days, no lost progress)"


def _job() -> ace.Job:
    return ace.Job(
        SC.job_servers * GPUS_PER_NODE,
        SC.work,
        INTERVAL,
        init=0.0,
        save=0.0,
        load=0.0,
        name="training",
    )


def _fleet() -> ace.Fleet:
    return ace.Fleet(
        SC.working_pool + SC.spare_pool,
        GPUS_PER_NODE,
        spares=SC.warm_standbys,
        cold_spares=SC.spare_pool,
        cold_spare_delay=ace.Constant(SC.preemption_wait),
        repair=ace.Repair(
            [
                ace.RepairStage(
                    ace.Exponential(SC.auto_repair_mean),
                    escalate=SC.escalate,
                    fix=1.0 - SC.auto_repair_fail,
                ),
                ace.RepairStage(
                    ace.Exponential(SC.manual_repair_mean), fix=1.0 - SC.manual_repair_fail
                ),
            ]
        ),
    )


def _acesim(replicas: int, fleet: bool, seed: int = SEED) -> np.ndarray:
    res = ace.simulate(
        _job(),
        failures=ace.Exponential(MTBF),
        fleet=_fleet() if fleet else None,
        policy=ace.Policy(replacement=ace.Replacement.SPARES) if fleet else None,
        causes=CAUSES,
        replicas=replicas,
        seed=seed,
        threads=1,
    )
    return res.jobs


@pytest.fixture(scope="module")
def simpy_run() -> tuple[np.ndarray, float]:
    """The SimPy model on REPLICAS replications (seeds SEED, SEED + 1, ...),
    run as two timed halves: the rows and the faster half's time per
    replication."""
    half = REPLICAS // 2
    log: list[float] = []
    parts = [
        timed(lambda s=start: run_replications(half, seed=s), log)()
        for start in (SEED, SEED + half)
    ]
    return np.concatenate(parts), min(log) / half


def _mean_se(seconds: np.ndarray) -> tuple[float, float]:
    """Mean and standard error, in hours."""
    hours = np.asarray(seconds, dtype=np.float64) / ace.HOUR
    return float(hours.mean()), float(hours.std(ddof=1) / math.sqrt(hours.size))


def _compare(
    benchmark: Any,
    what: str,
    rows: np.ndarray,
    log: list[float],
    replicas: int,
    simpy_run: tuple[np.ndarray, float],
    pool: bool,
) -> float:
    """Checks that acesim's mean wall time agrees with the SimPy model's
    (less its host selections and waits for servers when acesim has no
    pool), records the per-replication time ratio and returns it."""
    simpy_rows, simpy_per_replication = simpy_run
    assert rows.size == replicas
    assert rows["completed"].all()
    np.testing.assert_allclose(rows["productive"], SC.work, rtol=1e-9)
    simpy_wall = simpy_rows["wall"]
    if not pool:
        simpy_wall = simpy_wall - simpy_rows["host_selection"] - simpy_rows["preemption_wait"]
    wall_a, se_a = _mean_se(rows["wall"])
    wall_s, se_s = _mean_se(simpy_wall)
    se = math.hypot(se_a, se_s)
    assert abs(wall_a - wall_s) < 3 * se, (
        f"mean wall acesim {wall_a:.1f} h vs SimPy {wall_s:.1f} h (combined SE {se:.1f} h)"
    )
    ettr_a = SC.work / ace.HOUR / wall_a
    ettr_s = SC.work / ace.HOUR / wall_s
    acesim_per_replication, ratio = against_simpy(
        benchmark, log, replicas, simpy_per_replication, rows, simpy_rows
    )
    benchmark.extra_info.update(
        simpy_replicas=int(simpy_rows.size),
        mean_wall_h_acesim=wall_a,
        mean_wall_h_simpy=wall_s,
        mean_wall_combined_se_h=se,
        pooled_ettr_acesim=ettr_a,
        pooled_ettr_simpy=ettr_s,
        recovery_wait_h_acesim=float(rows["recovery_wait"].mean() / ace.HOUR),
        wall_sd_h_acesim=se_a * math.sqrt(rows.size),
        wall_sd_h_simpy=se_s * math.sqrt(simpy_rows.size),
    )
    less = "" if pool else " (SimPy less its pool waits)"
    line = (
        f"{SCENARIO}, {what}, {replicas:,} replications, one core: acesim "
        f"{acesim_per_replication * 1e6:,.0f} us/replication vs SimPy model "
        f"{simpy_per_replication * 1e3:.1f} ms/replication: ratio {ratio:.1f}x (target >= 100x); "
        f"mean wall acesim {wall_a:,.1f} +- {se_a:.1f} h vs SimPy {wall_s:,.1f} +- {se_s:.1f} h"
        f"{less}, ETTR {ettr_a:.4f} vs {ettr_s:.4f}"
    )
    report(line)
    return ratio


def test_fleet_same_replications(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """Like for like: the fleet model (spares, cold spares, the repair
    pipeline) on the SimPy model's replica count."""
    log: list[float] = []
    rows = benchmark.pedantic(
        timed(lambda: _acesim(REPLICAS, fleet=True), log), rounds=2, iterations=1
    )
    _compare(benchmark, "fleet model", rows, log, REPLICAS, simpy_run, pool=True)


def test_single_job_same_replications(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """The single-job model (no fleet: replacements always at hand) on the
    SimPy model's replica count, call overhead included."""
    log: list[float] = []
    rows = benchmark.pedantic(
        timed(lambda: _acesim(REPLICAS, fleet=False), log), rounds=5, iterations=1
    )
    _compare(benchmark, "single-job model", rows, log, REPLICAS, simpy_run, pool=False)


def test_single_job_throughput(benchmark: Any, simpy_run: tuple[np.ndarray, float]) -> None:
    """acesim's single-job model on a large batch (fixed call costs
    amortized), against the SimPy model's per-replication cost."""
    log: list[float] = []
    rows = benchmark.pedantic(
        timed(lambda: _acesim(THROUGHPUT_REPLICAS, fleet=False, seed=SEED + 1), log),
        rounds=2,
        iterations=1,
    )
    _compare(benchmark, "single-job model", rows, log, THROUGHPUT_REPLICAS, simpy_run, pool=False)
