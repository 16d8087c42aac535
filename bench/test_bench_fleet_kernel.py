"""One job on a fleet against the single-job kernel (issue 28), measured side
by side in one run, one thread.

Same job, same failure rate: on the fleet the job's failures are node-level
(each node fails on its own exponential clock, of mean ``nodes x MTTF``, so
the job's nodes together fail at the job MTTF; the failed node goes to
repair, a hot spare replaces it), in the kernel they are job-level
(``failures=Exponential(MTTF)``, replacements always at hand). Both pay
acesim's default init (2 min) and load (1 min) at every start. The repair
(exponential, mean 4 h) is short enough that the spares never run out in
practice, so the two models give the same ETTR up to sampling error (the
fleet's spares fail too, which the job does not see).

- 1,024 GPUs: 128 nodes of 8 GPUs on a fleet of 132 (4 spares), 28 days of
  work, checkpoints every 60 s with a 1-s save, job MTTF 7.9 h (Meta's at
  1,024 GPUs, ``ace.META_MTTF_1024_GPUS``).
- The same with a zero-cost save (``save=Constant(0)``).
- 131,072 GPUs: 16,384 nodes on a fleet of 16,448 (64 spares), 7 days of
  work, checkpoints every 5 min with a 1-s save, job MTTF 14 min.
- The same 1,024-GPU fleet job at 7 and 56 days of work: its cost per
  logical event (``res.fleet["events"]``) at each length, and their ratio.

Targets (issue 28): the fleet at most 3x the kernel per replica on both
scenarios; the cost per logical event at 56 days at most 1.5x that at 7
days. The tests assert correctness (rows complete, exact accounting, ETTR of
fleet and kernel within sampling error, logical events proportional to the
work) and print the ratios; they never fail on time.

Run: ``PYTHONPATH=python python -m pytest bench/test_bench_fleet_kernel.py -q -s``
(``ACESIM_BENCH_QUICK=1`` for fewer replicas).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

import acesim as ace
from acesim.simulation import BUCKETS
from conftest import report, scaled

GPUS_PER_NODE = 8
REPAIR = ace.Exponential(4 * ace.HOUR)
SEED = 5
ROUNDS = 2


@dataclass(frozen=True)
class Case:
    name: str
    gpus: int
    spares: int
    work: float
    interval: float
    mttf: float
    fleet_replicas: int
    kernel_replicas: int
    save: float = 1.0

    @property
    def job_nodes(self) -> int:
        return self.gpus // GPUS_PER_NODE

    def job(self) -> ace.Job:
        return ace.Job(self.gpus, self.work, self.interval, save=ace.Constant(self.save))

    def fleet(self) -> ace.Fleet:
        return ace.Fleet(
            self.job_nodes + self.spares,
            GPUS_PER_NODE,
            spares=self.spares,
            repair=REPAIR,
            node_failures=ace.Exponential(self.job_nodes * self.mttf),
        )

    def on_fleet(self, replicas: int | None = None) -> ace.SimulationResult:
        return ace.simulate(
            self.job(),
            fleet=self.fleet(),
            replicas=replicas or self.fleet_replicas,
            seed=SEED,
            threads=1,
        )

    def on_kernel(self) -> ace.SimulationResult:
        return ace.simulate(
            self.job(),
            failures=ace.Exponential(self.mttf),
            replicas=self.kernel_replicas,
            seed=SEED,
            threads=1,
        )


SMALL = Case(
    "1,024-GPU job on 132 nodes (4 spares), 60-s checkpoints, 1-s save, 28 days",
    gpus=1024,
    spares=4,
    work=28 * ace.DAY,
    interval=60.0,
    mttf=ace.META_MTTF_1024_GPUS,
    fleet_replicas=scaled(100, 10),
    kernel_replicas=scaled(2000, 200),
)
WIDE = Case(
    "131,072-GPU job on 16,448 nodes (64 spares), 14-min MTTF, 5-min checkpoints, 7 days",
    gpus=131_072,
    spares=64,
    work=7 * ace.DAY,
    interval=5 * ace.MINUTE,
    mttf=14 * ace.MINUTE,
    fleet_replicas=scaled(10, 2),
    kernel_replicas=scaled(1000, 100),
)

#: The 1,024-GPU job with a zero-cost save (issue 28: the slowest case today).
SMALL_FREE_SAVE = Case(
    **{
        **SMALL.__dict__,
        "name": "1,024-GPU job on 132 nodes (4 spares), 60-s checkpoints, zero-cost save, 28 days",
        "save": 0.0,
    }
)


def check(rows: np.ndarray, work: float) -> None:
    """Every replica completes its work, and the buckets sum to the wall clock."""
    assert rows["completed"].all()
    np.testing.assert_allclose(rows["productive"], work, rtol=1e-9)
    total = sum(rows[b].astype(np.float64) for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)


def pooled(rows: np.ndarray, work: float) -> tuple[float, float]:
    """Pooled ETTR (work / mean wall) and its delta-method standard error."""
    wall = rows["wall"].astype(np.float64)
    mean = float(wall.mean())
    se = float(wall.std(ddof=1) / math.sqrt(wall.size))
    ettr = work / mean
    return ettr, ettr * se / mean


def interleaved(
    runs: dict[str, Callable[[], ace.SimulationResult]],
) -> tuple[Callable[[], dict[str, ace.SimulationResult]], dict[str, list[float]]]:
    """One round runs every entry once, in order, logging each call's time."""
    logs: dict[str, list[float]] = {name: [] for name in runs}
    out: dict[str, ace.SimulationResult] = {}

    def round_() -> dict[str, ace.SimulationResult]:
        for name, fn in runs.items():
            t0 = time.perf_counter()
            out[name] = fn()
            logs[name].append(time.perf_counter() - t0)
        return out

    return round_, logs


@pytest.mark.parametrize(
    "case", [SMALL, SMALL_FREE_SAVE, WIDE], ids=["1k-gpus", "1k-gpus-free-save", "131k-gpus"]
)
def test_fleet_vs_kernel(benchmark: Any, case: Case) -> None:
    round_, logs = interleaved({"fleet": case.on_fleet, "kernel": case.on_kernel})
    res = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    fleet_rows, kernel_rows = res["fleet"].jobs, res["kernel"].jobs
    check(fleet_rows, case.work)
    check(kernel_rows, case.work)
    # The spares all but suffice: waits for nodes are a negligible share.
    assert float(fleet_rows["recovery_wait"].sum()) < 1e-4 * float(fleet_rows["wall"].sum())
    ettr_f, se_f = pooled(fleet_rows, case.work)
    ettr_k, se_k = pooled(kernel_rows, case.work)
    se = math.hypot(se_f, se_k)
    assert abs(ettr_f - ettr_k) < 4 * se, f"ETTR fleet {ettr_f:.4f} vs kernel {ettr_k:.4f}"
    # Failures per replica: the same rate (Poisson counts, 5 standard errors).
    fail_f = fleet_rows["failures"].astype(np.float64)
    fail_k = kernel_rows["failures"].astype(np.float64)
    fail_se = math.hypot(
        fail_f.std(ddof=1) / math.sqrt(fail_f.size), fail_k.std(ddof=1) / math.sqrt(fail_k.size)
    )
    assert abs(fail_f.mean() - fail_k.mean()) < 5 * fail_se
    fleet_ms = min(logs["fleet"]) / case.fleet_replicas * 1e3
    kernel_ms = min(logs["kernel"]) / case.kernel_replicas * 1e3
    ratio = fleet_ms / kernel_ms
    benchmark.extra_info.update(
        fleet_ms_per_replica=fleet_ms,
        kernel_ms_per_replica=kernel_ms,
        ratio_fleet_over_kernel=ratio,
        fleet_replicas=case.fleet_replicas,
        kernel_replicas=case.kernel_replicas,
        pooled_ettr_fleet=ettr_f,
        pooled_ettr_kernel=ettr_k,
        failures_per_replica_fleet=float(fail_f.mean()),
        failures_per_replica_kernel=float(fail_k.mean()),
        fleet_events_per_replica=float(res["fleet"].fleet["events"].mean()),
        fleet_heap_events_per_replica=float(res["fleet"].fleet["heap_events"].mean()),
    )
    report(
        f"fleet vs kernel, {case.name}: fleet {fleet_ms:.3f} ms/replica ({case.fleet_replicas} "
        f"replicas) vs kernel {kernel_ms:.4f} ms/replica ({case.kernel_replicas}): ratio "
        f"{ratio:.1f}x (target <= 3x); ETTR fleet {ettr_f:.4f} vs kernel {ettr_k:.4f} "
        f"(combined SE {se:.4f}); {fail_f.mean():.1f} vs {fail_k.mean():.1f} failures/replica"
    )


def test_cost_per_event_by_length(benchmark: Any) -> None:
    """The 1,024-GPU fleet job at 7 and at 56 days of work: ns per logical event."""
    short = Case(**{**SMALL.__dict__, "work": 7 * ace.DAY, "fleet_replicas": scaled(200, 20)})
    long = Case(**{**SMALL.__dict__, "work": 56 * ace.DAY, "fleet_replicas": scaled(25, 4)})
    round_, logs = interleaved({"7 days": short.on_fleet, "56 days": long.on_fleet})
    res = benchmark.pedantic(round_, rounds=ROUNDS, iterations=1)
    check(res["7 days"].jobs, short.work)
    check(res["56 days"].jobs, long.work)
    events = {name: int(r.fleet["events"].sum()) for name, r in res.items()}
    per_replica = {
        "7 days": events["7 days"] / short.fleet_replicas,
        "56 days": events["56 days"] / long.fleet_replicas,
    }
    # Logical events are mostly checkpoints, one a 61 s of compute: eight
    # times the work, eight times the events (failures and rework add a
    # share that is the same at both lengths, up to sampling error).
    assert 7.6 < per_replica["56 days"] / per_replica["7 days"] < 8.4
    ns = {name: min(logs[name]) / events[name] * 1e9 for name in res}
    ratio = ns["56 days"] / ns["7 days"]
    benchmark.extra_info.update(
        ns_per_event_7_days=ns["7 days"],
        ns_per_event_56_days=ns["56 days"],
        ratio_56_over_7=ratio,
        events_per_replica_7_days=per_replica["7 days"],
        events_per_replica_56_days=per_replica["56 days"],
    )
    report(
        f"fleet job cost per logical event, 1,024 GPUs, 60-s checkpoints: 7 days "
        f"{ns['7 days']:.1f} ns ({per_replica['7 days']:,.0f} events/replica, "
        f"{short.fleet_replicas} replicas), 56 days {ns['56 days']:.1f} ns "
        f"({per_replica['56 days']:,.0f} events/replica, {long.fleet_replicas} replicas): "
        f"ratio {ratio:.2f} (target <= 1.5)"
    )
