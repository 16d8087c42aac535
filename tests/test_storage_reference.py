"""Shared checkpoint storage (``Fleet(storage_bandwidth=B)``,
``Job(checkpoint_bytes=S)``) against the independent reference model
(tests/storage_reference.py, which shares no code with acesim).

1. Hand-worked timelines (two or three one-node jobs, constant laws,
   staggered submissions so that transfers overlap only in part): the
   derivation is written beside each case; the reference and acesim must
   both reproduce every figure exactly (wall, ckpt_stall, overhead,
   contention, wasted, detection, recovery_wait, failures, lost checkpoints,
   the times checkpoints became durable, the fleet's contention GPU-hours).
2. A deterministic sweep of small random timelines with constant laws and
   replayed failures: reference and acesim agree to 1e-9.
3. Statistical scenarios with non-exponential laws (LogNormal saves,
   persists, loads and repairs, Weibull job-level failures, Gamma inits):
   synchronous writes with many jobs writing at once, asynchronous persists,
   node-level failures with hot spares. The means of acesim and of the
   reference (each replica's mean over its jobs) agree within ``Z`` combined
   standard errors.
4. Sanity: one job alone never sees contention; bandwidth -> infinity is
   the model without storage (on both models).

Constants: B = 100 MB/s and S = 1 GB unless said otherwise, so a transfer
alone takes 10 s; two at once move 0.5 GB per 10 s each.

Measured agreement (``/work/main/.venv/bin/python -m pytest
tests/test_storage_reference.py -q``, about 8 s on one core): every hand
case exact on both models; the sweep's 40 timelines (22 with a node
failure, 47 asynchronous jobs) within 1e-9, and 1,200 more checked the same
way while writing it, none off. Statistical scenarios (contention 1.1 %,
17.6 % and 1.5 % of wall), largest |z| of the nine compared means: S1
(sync_many_writers) 0.85, S2 (async_persists) 2.53 (ckpt_stall; 0.14 and
0.51 in two runs of 4,000 reference and 40,000 acesim replicas), S3
(node_failures) 1.10; contention within 1.91.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import storage_reference as ref

MINUTE, HOUR = 60.0, 3600.0
GB = 1e9
B = 1e8  # 100 MB/s
Z = 3.0

# EventKind codes (cpp/include/acesim/records.hpp).
CHECKPOINT_END, DURABLE = 4, 14

#: the fields a hand case pins
HAND_FIELDS = (
    "wall",
    "ckpt_stall",
    "overhead",
    "contention",
    "wasted",
    "detection",
    "recovery_wait",
    "failures",
    "lost_checkpoints",
)
#: the fields the statistical scenarios compare
COMPARED = (
    "wall",
    "ckpt_stall",
    "overhead",
    "wasted",
    "contention",
    "detection",
    "recovery_wait",
    "failures",
    "lost_checkpoints",
)


# --- one description, two models --------------------------------------------


@dataclass(frozen=True)
class Law:
    """A law on both sides: the acesim distribution and a sampler."""

    dist: ace.Distribution
    draw: Callable[[np.random.Generator], float]


def lognormal(mu: float, sigma: float) -> Law:
    return Law(ace.LogNormal(mu, sigma), lambda g: g.lognormal(mu, sigma))


def weibull(shape: float, scale: float) -> Law:
    return Law(ace.Weibull(shape, scale), lambda g: scale * g.weibull(shape))


def exponential(mean: float) -> Law:
    return Law(ace.Exponential(mean), lambda g: g.exponential(mean))


def gamma(shape: float, scale: float) -> Law:
    return Law(ace.Gamma(shape, scale), lambda g: g.gamma(shape, scale))


def _ace(x: Law | float) -> ace.Distribution:
    return x.dist if isinstance(x, Law) else ace.Constant(float(x))


def _ref(x: Law | float) -> ref.Law:
    return x.draw if isinstance(x, Law) else float(x)


LAWS = ("init", "save", "load", "persist")


@dataclass(frozen=True)
class Case:
    """K one-node jobs (``jobs``: Spec keywords, laws as numbers or
    :class:`Law`) on K + ``spares`` nodes.

    ``job_failures``: one law for every job, or per job a tuple of gaps in
    held seconds (replayed) or None. ``node_failures``: a law for every node,
    or ``{job: (wall time,)}``: the node job holds at that time fails (its
    first node; the reference places the jobs in submission order on nodes
    0, 1, ...; acesim's node is found by a probe run). ``causes``:
    (share, detect, node_down) triples."""

    jobs: tuple[dict[str, Any], ...]
    bandwidth: float | None = B
    spares: int = 0
    repair: Law | float = HOUR
    job_failures: Law | tuple[tuple[float, ...] | None, ...] | None = None
    node_failures: Law | Mapping[int, tuple[float, ...]] | None = None
    causes: tuple[tuple[float, Law | float, bool], ...] = ((1.0, 0.0, True),)
    node_start: str = "fresh"


def job(**kwargs: Any) -> dict[str, Any]:
    """Work 1,200 s, a checkpoint every 600 s, save's fixed part 5 s,
    1 GB through the storage, no init or load."""
    spec: dict[str, Any] = {
        "work": 1200.0,
        "interval": 600.0,
        "save": 5.0,
        "checkpoint_bytes": GB,
    }
    spec.update(kwargs)
    return spec


def reference_kwargs(case: Case) -> dict[str, Any]:
    specs = []
    for spec in case.jobs:
        spec = dict(spec)
        for name in LAWS:
            if spec.get(name) is not None:
                spec[name] = _ref(spec[name])
        specs.append(ref.Spec(**spec))
    job_failures: Any = case.job_failures
    if isinstance(job_failures, Law):
        job_failures = job_failures.draw
    node_failures: Any = case.node_failures
    if isinstance(node_failures, Law):
        node_failures = node_failures.draw
    elif node_failures is not None:
        order = sorted(range(len(specs)), key=lambda k: (specs[k].submit, k))
        node_failures = {order.index(j): times for j, times in node_failures.items()}
    return {
        "specs": specs,
        "bandwidth": case.bandwidth,
        "spares": case.spares,
        "repair": _ref(case.repair),
        "job_failures": job_failures,
        "node_failures": node_failures,
        "causes": [ref.Cause(share, _ref(detect), down) for share, detect, down in case.causes],
    }


def on_reference(case: Case, seed: int = 0) -> tuple[list[dict[str, float]], list[list[float]]]:
    return ref.simulate(rng=np.random.default_rng(seed), **reference_kwargs(case))


def reference_replicas(case: Case, replicas: int, seed: int) -> np.ndarray:
    """(replicas, jobs, fields) of the reference, fields as in ref.FIELDS."""
    return ref.run_replicas(replicas, seed, **reference_kwargs(case))


def acesim_jobs(case: Case) -> list[ace.Job]:
    out = []
    for spec in case.jobs:
        spec = dict(spec)
        work, interval = spec.pop("work"), spec.pop("interval")
        for name in ("init", "save", "load"):
            spec[name] = _ace(spec.get(name, 0.0))
        if spec.get("persist") is not None:
            spec["persist"] = _ace(spec["persist"])
        out.append(ace.Job(8, work, interval, **spec))
    return out


def on_acesim(
    case: Case,
    replicas: int = 1,
    seed: int = 0,
    node_of: Mapping[int, int] | None = None,
    **kwargs: Any,
) -> ace.SimulationResult:
    """``node_of``: the acesim node each job in ``case.node_failures`` holds
    (else :func:`probe_nodes` finds it)."""
    k = len(case.jobs)
    nodes = k + case.spares
    failures: Any
    if case.job_failures is None:
        failures = [None] * k if case.node_failures is None else None
    elif isinstance(case.job_failures, Law):
        failures = case.job_failures.dist
    else:
        failures = [ace.Replay(list(g)) if g else None for g in case.job_failures]
    node_failures: Any = None
    if isinstance(case.node_failures, Law):
        node_failures = case.node_failures.dist
    elif case.node_failures is not None:
        if node_of is None:
            node_of = probe_nodes(case)
        node_failures = ace.NodeTrace.from_times(
            {node_of[j]: list(times) for j, times in case.node_failures.items()}, nodes=nodes
        )
    fleet = ace.Fleet(
        nodes,
        spares=case.spares,
        repair=_ace(case.repair),
        node_failures=node_failures,
        storage_bandwidth=case.bandwidth,
        node_start=case.node_start,
    )
    causes = [
        ace.Cause(f"cause{i}", share, detect=_ace(detect), node_down=down)
        for i, (share, detect, down) in enumerate(case.causes)
    ]
    kwargs.setdefault("threads", 1)
    return ace.simulate(
        acesim_jobs(case),
        failures=failures,
        fleet=fleet,
        causes=causes,
        replicas=replicas,
        seed=seed,
        check_invariants=True,
        **kwargs,
    )


def probe_nodes(case: Case) -> dict[int, int]:
    """The acesim node each job of ``case.node_failures`` holds at its
    failure time: one run per node with that node failing then (the
    placement before it does not depend on the failure). A job that holds
    no node then is left out."""
    assert isinstance(case.node_failures, Mapping)
    out = {}
    for j, times in case.node_failures.items():
        for m in range(len(case.jobs) + case.spares):
            probe = Case(
                case.jobs,
                case.bandwidth,
                case.spares,
                case.repair,
                None,
                {j: (times[0],)},
                case.causes,
                case.node_start,
            )
            res = on_acesim(probe, node_of={j: m})
            if res.trace.size and int(res.trace["job"][0]) == j:
                out[j] = m
                break
    return out


def durable_times(res: ace.SimulationResult, case: Case, j: int) -> list[float]:
    ev = res.events
    kind = DURABLE if case.jobs[j].get("persist") is not None else CHECKPOINT_END
    return [float(t) for t in ev["time"][(ev["job"] == j) & (ev["kind"] == kind)]]


def row_of(res: ace.SimulationResult, j: int) -> dict[str, float]:
    r = res.jobs[j]
    return {f: float(r[f]) for f in HAND_FIELDS}


# --------------------------------------------------------------------------
# 1. Hand-worked timelines
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Hand:
    case: Case
    rows: tuple[dict[str, float], ...]  # per job, HAND_FIELDS not given are 0
    durable: tuple[tuple[float, ...], ...]

    def expected(self, j: int) -> dict[str, float]:
        return {f: float(self.rows[j].get(f, 0.0)) for f in HAND_FIELDS}


def three_staggered() -> Hand:
    """Submitted at 0, 3 and 7 s, synchronous.
    Loads: 0-3 job 0 alone (0.3 GB); 3-7 two (job 0 at 0.5, job 1 at 0.2);
    from 7 three at 1/3 GB per 10 s: job 0 ends at 7 + 15 = 22; then two:
    job 1 (0.7 moved) ends at 22 + 6 = 28; job 2 (0.8 moved) alone at 30.
    Overheads 22, 25, 23; contention 12, 15, 13.
    First writes: computes end at 622, 628, 630, transfers begin at 627, 633,
    635. Job 0 alone 627-633 (0.6), two 633-635 (0.7; job 1 0.1), three:
    0.3 left ends at 644 (stall 22, contention 7). Two: job 1 (0.4 moved)
    ends at 656 (stall 28, contention 13), job 2 (0.9 moved) at 657 (stall
    27, contention 12).
    Final writes: job 0 1249-1259 alone; job 1 from 1261, alone to 1262
    (0.1), shared: ends at 1280; job 2 from 1262 ends at 1281 (contention
    9 each; stalls 15, 24, 24).
    Walls 1259, 1280 - 3 = 1277, 1281 - 7 = 1274."""
    return Hand(
        Case((job(), job(submit=3.0), job(submit=7.0))),
        (
            {"wall": 1259.0, "ckpt_stall": 37.0, "overhead": 22.0, "contention": 19.0},
            {"wall": 1277.0, "ckpt_stall": 52.0, "overhead": 25.0, "contention": 37.0},
            {"wall": 1274.0, "ckpt_stall": 51.0, "overhead": 23.0, "contention": 34.0},
        ),
        ((644.0, 1259.0), (656.0, 1280.0), (657.0, 1281.0)),
    )


def persist_beside_a_write() -> Hand:
    """Job 0 asynchronous (snapshot 5 s, persist's fixed part 10 s), job 1
    synchronous, submitted at 4 s.
    Loads: job 0 alone 0-4 (0.4), shared: ends at 16; job 1 (0.6 moved)
    alone at 20. Overheads 16, 16; contention 6, 6.
    Job 0: compute 16-616, snapshot 616-621, persist fixed 621-631, its
    transfer from 631. Job 1: compute 20-620, fixed 620-625, transfer alone
    625-631 (0.6), shared: ends at 639 (stall 19, contention 4); job 0's
    (0.4 moved) alone: durable at 645 (contention 4), under compute
    621-1221. Final snapshot 1221-1226, persist fixed to 1236, transfer
    alone to 1244 (0.8), shared with job 1's (fixed 1239-1244): durable at
    1248 (contention 2), the job waits 1226-1248; job 1's write ends at 1256
    (contention 2). Job 0: stalls 5 + 5 + 22 = 32, wall 1248. Job 1:
    stalls 19 + 17 = 36, wall 1256 - 4 = 1252."""
    return Hand(
        Case((job(persist=10.0), job(submit=4.0))),
        (
            {"wall": 1248.0, "ckpt_stall": 32.0, "overhead": 16.0, "contention": 12.0},
            {"wall": 1252.0, "ckpt_stall": 36.0, "overhead": 16.0, "contention": 12.0},
        ),
        ((645.0, 1248.0), (639.0, 1256.0)),
    )


def write_cut_off() -> Hand:
    """Jobs at 0 and 2 s; job 1 fails at 627 s held (wall 629), a crash
    found in 20 s that leaves its node up (it restarts on it).
    Loads: job 0 ends at 18, job 1 at 20 (overheads 18, 18; contention
    8, 8). Writes: job 0 transfers from 623, alone to 625 (0.2), shared with
    job 1's from 625 until the failure at 629 (job 0 0.4, job 1 0.2): job 1's
    is cut off, job 0's 0.6 left go alone: ends at 635 (stall 17,
    contention 2). Job 1: wasted 600 + the write's 9 s; detection 629-649;
    load 649-659 alone; compute 659-1259; writes 1264-1274 and 1879-1889
    alone. Job 0's final write 1240-1250, alone."""
    return Hand(
        Case(
            (job(), job(submit=2.0)),
            job_failures=(None, (627.0,)),
            causes=((1.0, 20.0, False),),
        ),
        (
            {"wall": 1250.0, "ckpt_stall": 32.0, "overhead": 18.0, "contention": 10.0},
            {
                "wall": 1887.0,
                "ckpt_stall": 30.0,
                "overhead": 28.0,
                "contention": 8.0,
                "wasted": 609.0,
                "detection": 20.0,
                "failures": 1.0,
            },
        ),
        ((635.0, 1250.0), (1274.0, 1889.0)),
    )


def cut_off_after_sharing() -> Hand:
    """B = 120 MB/s, S = 1.2 GB (10 s alone; a third of B each is 40 MB/s);
    jobs at 0, 2 and 4 s. Loads (in tenths of S): job 0 alone 0-2 (2), two
    2-4 (job 0 3, job 1 1), three: job 0 ends at 4 + 21 = 25; two: job 1
    (8) at 29; job 2 (9) at 30. Overheads 25, 27, 26; contention 15, 17, 16.
    First writes: transfers from 630, 634, 635; job 0 alone to 634 (4), two
    to 635 (4.5; job 1 0.5), three. Job 2 fails at 646 s held (wall 650)
    after 15 s in the storage, longer than alone: cut off, it adds nothing.
    Then two: job 0 (9.5) ends at 651, job 1 (6) at 655 (stalls 26,
    contention 11 each). Job 2: wasted 600 + 20; detection 650-670; load
    670-680 alone; writes 1285-1295 and 1900-1910 alone. Final writes of
    jobs 0 and 1 from 1256 and 1260: 1272 and 1276 (contention 6 each)."""
    big = 1.2 * GB
    return Hand(
        Case(
            (
                job(checkpoint_bytes=big),
                job(submit=2.0, checkpoint_bytes=big),
                job(submit=4.0, checkpoint_bytes=big),
            ),
            bandwidth=1.2e8,
            job_failures=(None, None, (646.0,)),
            causes=((1.0, 20.0, False),),
        ),
        (
            {"wall": 1272.0, "ckpt_stall": 47.0, "overhead": 25.0, "contention": 32.0},
            {"wall": 1274.0, "ckpt_stall": 47.0, "overhead": 27.0, "contention": 34.0},
            {
                "wall": 1906.0,
                "ckpt_stall": 30.0,
                "overhead": 36.0,
                "contention": 16.0,
                "wasted": 620.0,
                "detection": 20.0,
                "failures": 1.0,
            },
        ),
        ((651.0, 1272.0), (655.0, 1276.0), (1295.0, 1910.0)),
    )


def persist_cut_off() -> Hand:
    """As persist_beside_a_write, but job 0 fails at 635 s (held = wall)
    with its persist's transfer in flight (0.2 moved; job 1's write 0.8):
    the checkpoint is lost, job 1's write alone ends at 637 (stall 17,
    contention 2). Job 0: wasted = progress 614 (the lost snapshot's
    segment and 14 s since); the fault is found at 665, its node goes to
    repair, it takes the hot spare: load 665-675 alone, compute 675-1275,
    snapshot 1275-1280, persist 1280-1290 + transfer 1290-1300 (durable),
    final snapshot 1880-1885, persist 1885-1895 + 1895-1905: durable, done.
    Stalls 5 (the lost snapshot) + 5 + 5 + 20. Job 1: final write
    1237-1252 alone."""
    return Hand(
        Case(
            (job(persist=10.0), job(submit=4.0)),
            spares=1,
            job_failures=((635.0,), None),
            causes=((1.0, 30.0, True),),
        ),
        (
            {
                "wall": 1905.0,
                "ckpt_stall": 35.0,
                "overhead": 26.0,
                "contention": 6.0,
                "wasted": 614.0,
                "detection": 30.0,
                "failures": 1.0,
                "lost_checkpoints": 1.0,
            },
            {"wall": 1248.0, "ckpt_stall": 32.0, "overhead": 16.0, "contention": 8.0},
        ),
        ((1300.0, 1905.0), (637.0, 1252.0)),
    )


def node_failure_in_a_load() -> Hand:
    """As three_staggered, but job 1's node fails at 5 s (found in 10 s)
    during the loads (job 0 0.4 moved, job 1 0.1): job 1's load is cut off
    (2 s of overhead), job 0 alone 5-7 (0.6), shared with job 2 from 7:
    ends at 15 (contention 5). Job 1 takes the hot spare at 15: its load
    and job 2's (0.4 moved) share: job 2 ends at 27 (contention 10), job 1
    (0.6 moved) alone at 31 (overhead 2 + 16, contention 6).
    First writes: job 0 620-630 alone; job 2 from 632, alone to 636 (0.4),
    then with job 1's: ends at 648; job 1's at 652 (6 s of contention each,
    stalls 21). Final writes: job 0 1235-1245 alone; job 2 from 1253 with
    job 1's from 1257: 1269 and 1273 (6 each, stalls 21)."""
    return Hand(
        Case(
            (job(), job(submit=3.0), job(submit=7.0)),
            spares=1,
            node_failures={1: (5.0,)},
            causes=((1.0, 10.0, True),),
        ),
        (
            {"wall": 1245.0, "ckpt_stall": 30.0, "overhead": 15.0, "contention": 5.0},
            {
                "wall": 1270.0,
                "ckpt_stall": 42.0,
                "overhead": 18.0,
                "contention": 18.0,
                "detection": 10.0,
                "failures": 1.0,
            },
            {"wall": 1262.0, "ckpt_stall": 42.0, "overhead": 20.0, "contention": 22.0},
        ),
        ((630.0, 1245.0), (652.0, 1273.0), (648.0, 1269.0)),
    )


def mixed_jobs() -> Hand:
    """Job 0 has no checkpoint_bytes (no transfers: 1,200 + 2 x 5 s); job 1
    asynchronous with persist 0 (the transfer right after the snapshot);
    job 2 at 6 s, synchronous, 0.5 GB (5 s alone).
    Loads: job 1 alone 0-6 (0.6), shared: ends at 14 (contention 4); job 2
    (0.4 of 0.5 moved) alone at 15 (contention 4).
    Job 1: snapshot 614-619, transfer alone 619-620 (0.1), shared with job
    2's (fixed 615-620): job 2's ends at 630 (stall 15, contention 5); job
    1's (0.6 moved) alone at 634 (durable; contention 5). Final snapshot
    1219-1224, transfer 1224-1234 alone (the job waits: done at 1234).
    Job 2's final write 1230-1240 alone."""
    return Hand(
        Case(
            (
                job(checkpoint_bytes=None),
                job(persist=0.0),
                job(submit=6.0, checkpoint_bytes=0.5 * GB),
            )
        ),
        (
            {"wall": 1210.0, "ckpt_stall": 10.0},
            {"wall": 1234.0, "ckpt_stall": 20.0, "overhead": 14.0, "contention": 9.0},
            {"wall": 1234.0, "ckpt_stall": 25.0, "overhead": 9.0, "contention": 9.0},
        ),
        ((605.0, 1210.0), (634.0, 1234.0), (630.0, 1240.0)),
    )


def waits_for_its_node() -> Hand:
    """Jobs at 0 and 2 s, no spare; job 0 fails at 300 s (held = wall),
    found in 10 s; its node goes to repair (317 s) and is back at 627: the
    job waits 310-627 (recovery_wait 317). Wasted 300 - 18 = 282. Its load
    from 627 shares with job 1's write (from 625, 0.2 moved): job 1's ends
    at 643 (stall 23, contention 8), job 0's at 645 (contention 8).
    Writes: job 1 from 1248, alone to 1250 (0.2), job 0's from 1250:
    1266 and 1268 (8 each; stalls 23). Job 0's final write 1873-1883 alone."""
    return Hand(
        Case(
            (job(), job(submit=2.0)),
            repair=317.0,
            job_failures=((300.0,), None),
            causes=((1.0, 10.0, True),),
        ),
        (
            {
                "wall": 1883.0,
                "ckpt_stall": 38.0,
                "overhead": 36.0,
                "contention": 24.0,
                "wasted": 282.0,
                "detection": 10.0,
                "recovery_wait": 317.0,
                "failures": 1.0,
            },
            {"wall": 1264.0, "ckpt_stall": 46.0, "overhead": 18.0, "contention": 24.0},
        ),
        ((1268.0, 1883.0), (643.0, 1266.0)),
    )


HANDS = {
    f.__name__: f
    for f in (
        three_staggered,
        persist_beside_a_write,
        write_cut_off,
        cut_off_after_sharing,
        persist_cut_off,
        node_failure_in_a_load,
        mixed_jobs,
        waits_for_its_node,
    )
}


@pytest.mark.parametrize("name", HANDS)
def test_hand_timeline_on_the_reference(name: str) -> None:
    hand = HANDS[name]()
    rows, durable = on_reference(hand.case)
    for j, row in enumerate(rows):
        assert {f: row[f] for f in HAND_FIELDS} == hand.expected(j), f"job {j}"
        assert tuple(durable[j]) == hand.durable[j], f"job {j}"


@pytest.mark.parametrize("name", HANDS)
def test_hand_timeline_on_acesim(name: str) -> None:
    hand = HANDS[name]()
    res = on_acesim(hand.case, record_events=True)
    for j in range(len(hand.case.jobs)):
        assert row_of(res, j) == hand.expected(j), f"job {j}"
        assert tuple(durable_times(res, hand.case, j)) == hand.durable[j], f"job {j}"
    gpu_seconds = sum(8 * hand.expected(j)["contention"] for j in range(len(hand.rows)))
    assert res.fleet["contention_gpu_hours"][0] == pytest.approx(gpu_seconds / HOUR, rel=1e-12)


# --------------------------------------------------------------------------
# 2. Small random timelines, constant laws, replayed failures
# --------------------------------------------------------------------------


def random_timeline(rng: np.random.Generator) -> Case:
    """Two to four jobs, each synchronous or asynchronous (persist's fixed
    part 0 to 400 s), most with 0.5-2 GB; job-level failures replayed
    (gaps in held seconds), or one node failure, with 0-2 spares."""
    k = int(rng.integers(2, 5))
    jobs = []
    for _ in range(k):
        spec: dict[str, Any] = {
            "work": float(rng.choice([600.0, 1200.0, 1800.0])),
            "interval": float(rng.choice([200.0, 300.0, 600.0])),
            "init": float(rng.choice([0.0, 5.0, 12.0])),
            "save": float(rng.choice([0.0, 5.0, 8.0])),
            "load": float(rng.choice([0.0, 3.0])),
            "submit": float(rng.integers(0, 40)),
            "checkpoint_bytes": None,
        }
        if rng.random() < 0.4:
            spec["persist"] = float(rng.choice([0.0, 10.0, 25.0, 400.0]))
        if rng.random() < 0.85:
            spec["checkpoint_bytes"] = float(rng.choice([0.5, 1.0, 2.0])) * GB
        jobs.append(spec)
    spares = int(rng.integers(0, 3))
    repair = float(rng.choice([50.0, 300.0]))
    detect = float(rng.choice([0.0, 20.0, 50.0]))
    if rng.random() < 0.5:
        gaps = tuple(
            tuple(float(x) for x in np.sort(rng.uniform(1, 900, size=rng.integers(0, 3))))
            if rng.random() < 0.7
            else None
            for _ in range(k)
        )
        causes = ((1.0, detect, bool(rng.random() < 0.5)),)
        return Case(tuple(jobs), spares=spares, repair=repair, job_failures=gaps, causes=causes)
    # one node failure, late enough that every job holds its node by then
    at = float(rng.uniform(50, 1500))
    return Case(
        tuple(jobs),
        spares=spares,
        repair=repair,
        node_failures={int(rng.integers(0, k)): (at,)},
        causes=((1.0, detect, True),),
    )


def test_random_timelines_agree() -> None:
    rng = np.random.default_rng(20240611)
    compared = 0
    while compared < 40:
        case = random_timeline(rng)
        node_of = None
        if case.node_failures is not None:
            node_of = probe_nodes(case)
            if len(node_of) < len(case.node_failures):
                continue  # the job was done by then: the node failed idle
        rows, _ = on_reference(case)
        res = on_acesim(case, node_of=node_of)
        compared += 1
        i = compared
        for j, row in enumerate(rows):
            got = res.jobs[j]
            for f in (*HAND_FIELDS, "queue_wait", "checkpoints"):
                assert math.isclose(row[f], float(got[f]), rel_tol=1e-9, abs_tol=1e-7), (
                    i,
                    j,
                    f,
                    row[f],
                    float(got[f]),
                    case,
                )


# --------------------------------------------------------------------------
# 3. Statistical scenarios
# --------------------------------------------------------------------------


def compare_means(case: Case, ref_replicas: int, ace_replicas: int, seed: int) -> dict[str, float]:
    """z of each compared mean (each replica's mean over its jobs)."""
    k = len(case.jobs)
    mine = reference_replicas(case, ref_replicas, seed)
    res = on_acesim(case, replicas=ace_replicas, seed=seed, threads=1)
    out = {}
    for f in COMPARED:
        x = mine[:, :, ref.FIELDS.index(f)].mean(axis=1)
        y = np.asarray(res.jobs[f], dtype=float).reshape(ace_replicas, k).mean(axis=1)
        se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
        if se == 0.0:
            assert x.mean() == y.mean(), f
            out[f] = 0.0
        else:
            out[f] = (x.mean() - y.mean()) / se
    return out


#: S1: ten synchronous jobs submitted within 9 s, checkpoints every 30 min
#: (all write at once until failures spread them): 60 GB at 2 GB/s (30 s
#: alone); LogNormal saves and loads, Gamma inits; Weibull(0.7) job-level
#: failures, 60 % crashes found after a LogNormal delay that leave the node
#: up, 40 % node faults (found in 60 s, LogNormal repair; 2 hot spares).
SYNC_MANY_WRITERS = Case(
    tuple(
        {
            "work": 8 * HOUR,
            "interval": 30 * MINUTE,
            "init": gamma(2.0, 30.0),
            "save": lognormal(math.log(20.0), 0.5),
            "load": lognormal(math.log(30.0), 0.4),
            "checkpoint_bytes": 60 * GB,
            "submit": float(k),
        }
        for k in range(10)
    ),
    bandwidth=2 * GB,
    spares=2,
    repair=lognormal(math.log(30 * MINUTE), 0.6),
    job_failures=weibull(0.7, 3 * HOUR),
    causes=((0.6, lognormal(math.log(120.0), 0.8), False), (0.4, 60.0, True)),
)

#: S2: four asynchronous jobs (LogNormal snapshot and persist fixed part,
#: 100 GB at 0.5 GB/s: 200 s alone, so persists overlap, make the next
#: checkpoint wait and are often lost) beside one synchronous job of 50 GB;
#: Weibull(0.6) job-level failures.
ASYNC_PERSISTS = Case(
    (
        *(
            {
                "work": 6 * HOUR,
                "interval": 20 * MINUTE,
                "init": 60.0,
                "save": lognormal(math.log(10.0), 0.3),
                "load": lognormal(math.log(20.0), 0.5),
                "persist": lognormal(math.log(60.0), 0.5),
                "checkpoint_bytes": 100 * GB,
                "submit": 5.0 * k,
            }
            for k in range(4)
        ),
        {
            "work": 6 * HOUR,
            "interval": 30 * MINUTE,
            "init": 60.0,
            "save": lognormal(math.log(30.0), 0.5),
            "load": 20.0,
            "checkpoint_bytes": 50 * GB,
            "submit": 30.0,
        },
    ),
    bandwidth=0.5 * GB,
    spares=1,
    job_failures=weibull(0.6, 4 * HOUR),
    causes=((1.0, lognormal(math.log(90.0), 0.7), False),),
)

#: S3: eight synchronous jobs on 8 + 3 nodes with node-level failures
#: (exponential, 12 h a node: which node a job gets then does not matter),
#: two causes (found in 60 s, or after a LogNormal delay), LogNormal
#: repairs; 80 GB at 2 GB/s (40 s alone).
NODE_FAILURES = Case(
    tuple(
        {
            "work": 10 * HOUR,
            "interval": 40 * MINUTE,
            "init": lognormal(math.log(60.0), 0.5),
            "save": lognormal(math.log(15.0), 0.6),
            "load": lognormal(math.log(30.0), 0.5),
            "checkpoint_bytes": 80 * GB,
            "submit": 2.0 * k,
        }
        for k in range(8)
    ),
    bandwidth=2 * GB,
    spares=3,
    repair=lognormal(math.log(2 * HOUR), 0.5),
    node_failures=exponential(12 * HOUR),
    causes=((0.7, 60.0, True), (0.3, lognormal(math.log(300.0), 0.8), True)),
)

SCENARIOS = {
    "sync_many_writers": (SYNC_MANY_WRITERS, 400, 4000, 11),
    "async_persists": (ASYNC_PERSISTS, 600, 6000, 12),
    "node_failures": (NODE_FAILURES, 500, 5000, 13),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_statistics_agree(name: str) -> None:
    case, ref_replicas, ace_replicas, seed = SCENARIOS[name]
    z = compare_means(case, ref_replicas, ace_replicas, seed)
    assert max(abs(v) for v in z.values()) < Z, z


# --------------------------------------------------------------------------
# 4. Sanity
# --------------------------------------------------------------------------


def test_one_job_alone_sees_no_contention() -> None:
    case = Case(
        (
            {
                "work": 4 * HOUR,
                "interval": 20 * MINUTE,
                "init": gamma(2.0, 30.0),
                "save": lognormal(math.log(20.0), 0.5),
                "load": lognormal(math.log(30.0), 0.4),
                "persist": lognormal(math.log(30.0), 0.5),
                "checkpoint_bytes": 30 * GB,
            },
        ),
        bandwidth=GB,
        spares=1,
        repair=600.0,
        job_failures=weibull(0.7, HOUR),
        causes=((0.5, 30.0, False), (0.5, 60.0, True)),
    )
    mine = reference_replicas(case, 100, 3)
    assert np.all(np.abs(mine[:, :, ref.FIELDS.index("contention")]) <= 1e-9)
    assert mine[:, :, ref.FIELDS.index("failures")].sum() > 0
    res = on_acesim(case, replicas=500, seed=3)
    assert np.all(np.abs(res.jobs["contention"]) <= 1e-9)
    assert res.jobs["failures"].sum() > 0
    # ... and each transfer takes S / B: the overhead is init + load + 30 s per start
    assert np.all(res.jobs["overhead"] >= 30.0 * (res.jobs["restarts"] + 1) - 1e-6)


def test_unbounded_bandwidth_is_the_model_without_storage() -> None:
    """B = 1e30: a transfer takes 1e-20 s; every figure matches the run
    without storage (the draws are the same on both sides)."""
    for case in (SYNC_MANY_WRITERS, ASYNC_PERSISTS):
        fast = replace(case, bandwidth=1e30)
        none = replace(case, bandwidth=None)
        a = reference_replicas(fast, 20, 5)
        b = reference_replicas(none, 20, 5)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
        x = on_acesim(fast, replicas=200, seed=5)
        y = on_acesim(none, replicas=200, seed=5)
        for f in (*COMPARED, "productive", "checkpoints"):
            np.testing.assert_allclose(x.jobs[f], y.jobs[f], rtol=1e-9, atol=1e-9, err_msg=f)
        assert np.all(y.jobs["contention"] == 0.0)
