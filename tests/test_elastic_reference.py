"""Elastic jobs (lifecycle spec section 3) against an independent reference
model (tests/elastic_reference.py; it shares no code with acesim).

(a) Hand-worked timelines on the reference: scripted node failures, constant
    laws, 2 to 4 nodes of 8 GPUs; each derivation is written beside it.
(b) The same timelines through acesim (``NodeTrace.from_gaps``, a fresh
    fleet, SPARES): every bucket equal.
(c) Statistical scenarios (Weibull node failures, LogNormal and Gamma
    repairs, random job laws, two causes): acesim's means against the
    reference's within ``Z`` combined standard errors.

The elastic cases of (b) and (c) skip until the core has elastic jobs
(``min_gpus`` in ``ace.Job``'s signature). The non-elastic baseline (the job
waits holding its nodes) runs against acesim now, in (b) and (c) alike: it
checks the reference's fleet (node processes, repair after detection, spare
pools, waits) on which the elastic cases stand.

Measured (reference 3,000 replicas, seed 2024; acesim 4,000, seed 77; the
fields of ``COMPARED``): largest |z| 1.2 (weibull-lognormal-spare, narrow),
1.2 (exp-gamma-scaling-0.8, ckpt_stall), 1.5 (weibull-wearout-two-causes,
overhead), 0.8 and 1.4 for the two baselines; over two more seed pairs every
|z| stayed below 2.5. Mean walls: 236,279 s vs 236,942 s, 161,409 vs
161,472, 214,577 vs 214,696; baselines 276,846 vs 278,122 and 252,734 vs
252,419. The hand cases agree exactly.

Which node acesim hands out first is not specified. The scripted failures
name nodes by role: "job k" is the k-th node (ascending) the job holds at
t = 0, found by probe runs (:func:`placement`), "idle k" the k-th of the
others. A case only fails a node taken later when the choice is forced (one
candidate) or symmetric.

Shared constants of the hand cases (unless a case says otherwise): init
100 s, load 50 s (a start: 150 s), save 60 s, reconfigure 30 s, detection
20 s, checkpoint interval 3,600 s, work 14,400 s (four checkpoints at
3,600, 7,200, 10,800, 14,400). The first run: start 0-150, compute
150-3,750, save 3,750-3,810 (c = 3,600), compute from 3,810. A node that
fails at t is back at t + 20 (detection) + repair.
"""

from __future__ import annotations

import inspect
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elastic_reference import BUCKETS, run_replicas, simulate
from paired_laws import Law, const

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
Z = 3.0

needs_elastic = pytest.mark.skipif(
    "min_gpus" not in inspect.signature(ace.Job).parameters, reason="elastic jobs not built"
)


# --- one description, two models --------------------------------------------


# The hand cases' constants (module level: a dataclass default is one object).
INIT, LOAD, SAVE = Law("const", 100.0), Law("const", 50.0), Law("const", 60.0)
RECONFIGURE, DETECT, REPAIR = Law("const", 30.0), Law("const", 20.0), Law("const", 2000.0)


@dataclass(frozen=True)
class Case:
    """One elastic (``min_gpus`` set) or plain job of ``nodes`` nodes on a
    fleet of ``fleet_nodes`` (default nodes + spares), for both models.
    ``gaps`` (scripted) maps a role ("job k" / "idle k") to that node's
    gaps; else ``node_failures`` is a law."""

    nodes: int
    work: float = 4 * HOUR
    interval: float = HOUR
    spares: int = 0
    fleet_nodes: int | None = None
    init: Law = INIT
    load: Law = LOAD
    save: Law = SAVE
    reconfigure: Law = RECONFIGURE
    detect: Law = DETECT
    causes: tuple[tuple[float, Law], ...] | None = None
    repair: Law = REPAIR
    min_gpus: int | None = None
    scaling: float = 1.0
    gaps: dict[str, list[float]] = field(default_factory=dict)
    node_failures: Law | None = None

    @property
    def fleet_size(self) -> int:
        return self.nodes + self.spares if self.fleet_nodes is None else self.fleet_nodes

    @property
    def elastic(self) -> bool:
        return self.min_gpus is not None

    # -- the reference: the job holds nodes 0 .. nodes-1 at t = 0
    def reference_params(self) -> dict[str, Any]:
        if self.node_failures is not None:
            failures: Any = self.node_failures.sampler
        else:
            job = list(range(self.nodes))
            idle = list(range(self.nodes, self.fleet_size))
            failures = {_node(role, job, idle): g for role, g in self.gaps.items()}
        return dict(
            nodes=self.nodes,
            work=self.work,
            interval=self.interval,
            spares=self.spares,
            fleet_nodes=self.fleet_size,
            init=self.init.sampler,
            load=self.load.sampler,
            save=self.save.sampler,
            reconfigure=self.reconfigure.sampler,
            detect=self.detect.sampler,
            causes=None if self.causes is None else [(s, d.sampler) for s, d in self.causes],
            repair=self.repair.sampler,
            node_failures=failures,
            min_gpus=self.min_gpus,
            scaling=self.scaling,
        )

    def reference_one(self) -> dict[str, float]:
        return simulate(np.random.default_rng(0), **self.reference_params())

    def reference(self, replicas: int, seed: int) -> dict[str, np.ndarray]:
        return run_replicas(replicas, seed, **self.reference_params())

    # -- acesim (planned elastic API; a plain job passes none of its keywords)
    def ace_job(self) -> Any:
        kwargs: dict[str, Any] = dict(
            init=self.init.ace(), save=self.save.ace(), load=self.load.ace()
        )
        if self.elastic:
            kwargs.update(
                min_gpus=self.min_gpus, reconfigure=self.reconfigure.ace(), scaling=self.scaling
            )
        return ace.Job(8 * self.nodes, self.work, self.interval, **kwargs)

    def ace_causes(self) -> list[Any]:
        if self.causes is None:
            return [ace.Cause("node", 1.0, detect=self.detect.ace())]
        return [ace.Cause(f"cause{k}", s, detect=d.ace()) for k, (s, d) in enumerate(self.causes)]

    def ace_fleet(self, node_failures: Any) -> Any:
        return ace.Fleet(
            self.fleet_size,
            spares=self.spares,
            repair=self.repair.ace(),
            node_failures=node_failures,
            node_start="fresh",
        )

    def acesim(self, replicas: int = 1, seed: int = 0) -> np.ndarray:
        if self.node_failures is not None:
            failures: Any = self.node_failures.ace()
        else:
            job = placement(self)
            idle = sorted(set(range(self.fleet_size)) - set(job))
            gaps = {_node(role, job, idle): g for role, g in self.gaps.items()}
            failures = ace.NodeTrace.from_gaps(gaps, nodes=self.fleet_size)
        res = ace.simulate(
            [self.ace_job()],
            failures=None,
            fleet=self.ace_fleet(failures),
            causes=self.ace_causes(),
            replicas=replicas,
            seed=seed,
            threads=1,
            check_invariants=True,
        )
        return res.jobs


def _node(role: str, job: list[int], idle: list[int]) -> int:
    kind, k = role.split()
    return (job if kind == "job" else idle)[int(k)]


def placement(case: Case) -> list[int]:
    """The nodes (ascending) acesim's job holds at t = 0: probe runs fail one
    node at 1 s and read whether the failure hit the job."""
    held = []
    for n in range(case.fleet_size):
        probe = ace.simulate(
            [replace(case, min_gpus=None).ace_job()],
            fleet=case.ace_fleet(ace.NodeTrace.from_gaps({n: [1.0]}, nodes=case.fleet_size)),
            causes=case.ace_causes(),
            horizon=2.0,
            threads=1,
            check_invariants=True,
        )
        hit = probe.trace["job"][probe.trace["time"] == 1.0]
        if np.any(hit >= 0):
            held.append(n)
    assert len(held) == case.nodes
    return held


# --- (a) hand-worked timelines ------------------------------------------------

E = dict(min_gpus=8)  # elastic: any one node is enough


def want(
    wall: float,
    wasted: float,
    overhead: float,
    detection: float,
    narrow: float,
    wait: float,
    failures: int,
) -> dict[str, float]:
    """A hand case's figures: want(wall, wasted, overhead, detection,
    narrow, recovery_wait, failures); productive = work, ckpt_stall = 60 s
    per checkpoint, queue_wait 0 and completed in every case."""
    return dict(
        wall=wall,
        wasted=wasted,
        overhead=overhead,
        detection=detection,
        narrow=narrow,
        recovery_wait=wait,
        failures=failures,
    )


HAND: dict[str, tuple[Case, dict[str, float]]] = {
    # Two nodes, no spare. Job node 0 fails at 5,000 (back at 5,000 + 20 +
    # 2,000 = 7,020). Lost: compute 3,810-5,000 = 1,190 (wasted). Detection
    # 5,000-5,020. Nothing at hand: shrink onto one node (8 >= 8), start
    # init + load + reconfigure = 180: 5,020-5,200; compute at rate 1/2 from
    # c = 3,600. At 7,020 node 0 is back: growth during compute. 1,820 s of
    # compute gave 910 progress (kept) and 910 narrow. Reconfigure pause
    # 7,020-7,050 (overhead), then full rate: 7,200 - 4,510 = 2,690 left to
    # the boundary: 7,050-9,740, save -9,800; compute -13,400, save -13,460;
    # compute -17,060, save -17,120 (DONE). Overhead 150 + 180 + 30.
    "shrink-grow-while-computing": (
        Case(2, gaps={"job 0": [5000.0]}, **E),
        want(17120.0, 1190.0, 360.0, 20.0, 910.0, 0.0, 1),
    ),
    # The same without elasticity: it waits holding node 1 from 5,020 to
    # 7,020 (recovery_wait 2,000), restarts 7,020-7,170, then three
    # segments of 3,660: DONE at 7,170 + 3 * 3,660 = 18,150.
    "baseline-waits": (
        Case(2, gaps={"job 0": [5000.0]}),
        want(18150.0, 1190.0, 300.0, 20.0, 0.0, 2000.0, 1),
    ),
    # Repair 7,410: node 0 is back at 5,000 + 20 + 7,410 = 12,430. Narrow
    # from 5,200 at rate 1/2: 3,600 progress to the boundary 7,200 take
    # 7,200 s: 5,200-12,400 (narrow 3,600), save 12,400-12,460. Node 0 comes
    # back inside the write: taken, the pause comes at the write's end:
    # reconfigure 12,460-12,490, compute -16,090, save -16,150, compute
    # -19,750, save -19,810.
    "grow-during-a-write": (
        Case(2, repair=const(7410.0), gaps={"job 0": [5000.0]}, **E),
        want(19810.0, 1190.0, 360.0, 20.0, 3600.0, 0.0, 1),
    ),
    # As the last case, but node 0's next gap (from its return at 12,430)
    # is 10 s: the node taken for the growth fails at 12,440, inside the
    # write, before the pause: a failure of the job (it holds the node).
    # Lost: the write so far (40) and the segment's 3,600 progress (its
    # 3,600 narrow stays narrow). Detection -12,460 (node 0 back at
    # 12,440 + 20 + 7,410 = 19,870); shrink again: start 12,460-12,640,
    # narrow from c = 3,600: 7,200 s to the boundary, -19,840 (narrow
    # 3,600), save -19,900; node 0 back at 19,870 inside it: reconfigure
    # 19,900-19,930; compute -23,530, save -23,590; compute -27,190, save
    # -27,250. Overhead 150 + 180 + 180 + 30.
    "grown-node-fails-before-the-pause": (
        Case(2, repair=const(7410.0), gaps={"job 0": [5000.0, 10.0]}, **E),
        want(27250.0, 4830.0, 540.0, 40.0, 7200.0, 0.0, 2),
    ),
    # Repair 80: node 0 is back at 5,100, inside the narrow start
    # (5,020-5,200). Taken at once, the pause after the start: reconfigure
    # 5,200-5,230, then full rate from c = 3,600: three segments of 3,660 to
    # 16,210. No narrow compute at all; overhead 150 + 180 + 30.
    "grow-during-the-narrow-start": (
        Case(2, repair=const(80.0), gaps={"job 0": [5000.0]}, **E),
        want(16210.0, 1190.0, 360.0, 20.0, 0.0, 0.0, 1),
    ),
    # Repair 3,000. Node 0 fails at 5,000 (back 8,020); narrow on node 1
    # from 5,200. Node 1 fails at 6,000: 800 s of narrow compute lost (400
    # progress wasted, 400 narrow). Detection -6,020. It holds no node (0 <
    # 8): waits as a plain job for both; node 0 is back at 8,020 (one of
    # two: it waits on), node 1 at 9,020: restart 9,020-9,170 (full width,
    # no reconfigure), three segments of 3,660: 20,150. Recovery wait 3,000.
    "narrow-failure-below-min-waits": (
        Case(2, repair=const(3000.0), gaps={"job 0": [5000.0], "job 1": [6000.0]}, **E),
        want(20150.0, 1590.0, 480.0, 40.0, 400.0, 3000.0, 2),
    ),
    # Two nodes and one hot spare, repair 10,000, scaling 2, work 10,800.
    # Job node 0 fails at 2,000: compute 150-2,000 lost (1,850). Detection
    # -2,020; the spare is at hand: full restart (init + load only)
    # 2,020-2,170. Job node 1 fails at 3,000: 830 lost; detection -3,020;
    # no spare left (node 0 is back only at 12,020): shrink onto the former
    # spare, rate (1/2) ** 2 = 1/4, start 3,020-3,200. At 12,020 node 0 is
    # back (it refills the spare pool; the job takes it): 8,820 s of narrow
    # compute gave 2,205 progress and 6,615 narrow. Reconfigure
    # 12,020-12,050; 3,600 - 2,205 = 1,395 left: -13,445, save -13,505
    # (c = 3,600); compute -17,105, save -17,165; compute -20,765, save
    # -20,825. Overhead 150 + 150 + 180 + 30.
    "spare-then-shrink-scaling-2": (
        Case(
            2,
            spares=1,
            work=3 * HOUR,
            repair=const(10000.0),
            scaling=2.0,
            gaps={"job 0": [2000.0], "job 1": [3000.0]},
            **E,
        ),
        want(20825.0, 2680.0, 510.0, 40.0, 6615.0, 0.0, 2),
    ),
    # The same fleet without elasticity: the spare serves the first failure;
    # after the second it waits holding the former spare from 3,020 until
    # node 0 is back at 12,020 (9,000), restarts 12,020-12,170 from c = 0:
    # three segments of 3,660: 23,150.
    "baseline-spare-then-wait": (
        Case(
            2,
            spares=1,
            work=3 * HOUR,
            repair=const(10000.0),
            gaps={"job 0": [2000.0], "job 1": [3000.0]},
        ),
        want(23150.0, 2680.0, 450.0, 40.0, 0.0, 9000.0, 2),
    ),
    # As the first case, but node 0's next gap (from its return at 7,020)
    # is 10 s: it fails at 7,030, inside the growth pause (7,020-7,050). The
    # pause cut off (10) is overhead; the 910 progress of the narrow stretch
    # is rolled back (wasted; its 910 narrow stays narrow). Detection
    # -7,050 (node 0 back at 9,050); shrink again: start 7,050-7,230, narrow
    # from c = 3,600; at 9,050 node 0 is back: 1,820 s gave 910 progress,
    # 910 narrow; pause -9,080; 2,690 left: -11,770, save -11,830; compute
    # -15,430, save -15,490; compute -19,090, save -19,150.
    # Overhead 150 + 180 + 10 + 180 + 30.
    "failure-in-the-growth-pause": (
        Case(2, gaps={"job 0": [5000.0, 10.0]}, **E),
        want(19150.0, 2100.0, 550.0, 40.0, 1820.0, 0.0, 2),
    ),
    # Two job nodes, two idle nodes, no spare, repair 5,000. The idle nodes
    # fail at 900 and 905 (back at 5,920 and 5,925). Job node 0 fails at
    # 5,000 (back 10,020): nothing at hand, shrink: start 5,020-5,200,
    # narrow. Job node 1 fails at 5,910: 710 s of narrow compute (355
    # wasted, 355 narrow). Detection -5,930; meanwhile both idle nodes came
    # back (no growth in detection). At 5,930 the job holds nothing and both
    # missing nodes are at hand: full restart (init + load, no reconfigure)
    # 5,930-6,080 from c = 3,600: three segments of 3,660: 17,060.
    "narrow-failure-full-replacement-at-hand": (
        Case(
            2,
            fleet_nodes=4,
            repair=const(5000.0),
            gaps={"idle 0": [900.0], "idle 1": [905.0], "job 0": [5000.0], "job 1": [5910.0]},
            **E,
        ),
        want(17060.0, 1545.0, 480.0, 40.0, 355.0, 0.0, 2),
    ),
    # Plain job, two nodes. Job node 0 fails at 5,000 (back 7,020). It waits
    # holding node 1, which fails at 6,000 while it waits (back 8,020): no
    # second failure, it now waits for both. Restart at 8,020-8,170 from
    # c = 3,600: three segments of 3,660: 19,150. Recovery wait 3,000.
    "baseline-held-node-fails-while-waiting": (
        Case(2, gaps={"job 0": [5000.0], "job 1": [6000.0]}),
        want(19150.0, 1190.0, 300.0, 20.0, 0.0, 3000.0, 1),
    ),
    # Three nodes, min_gpus 16, no spare, repair 2,000. Job node 0 fails at
    # 5,000 (back 7,020): shrink onto two nodes (16 >= 16), rate 2/3, start
    # 5,020-5,200. Job node 1 fails at 5,500: 300 s gave 200 progress
    # (wasted) and 100 narrow. Detection -5,520 (node 1 back at 7,520). One
    # node left (8 < 16): it waits. At 7,020 node 0 is back: two nodes would
    # make 16 GPUs, but a waiting job takes all its missing nodes or none; at
    # 7,520 both: full restart 7,520-7,670 from c = 3,600, three segments of
    # 3,660: 18,650. Recovery wait 2,000.
    "below-min-waits-for-all-missing-nodes": (
        Case(3, min_gpus=16, gaps={"job 0": [5000.0], "job 1": [5500.0]}),
        want(18650.0, 1390.0, 480.0, 40.0, 100.0, 2000.0, 2),
    ),
    # Four nodes, min_gpus 24, scaling 1, repair 20,000 (nothing is back
    # before the end). Job node 0 fails at 5,000: shrink onto three nodes
    # (24 >= 24), rate 3/4, start 5,020-5,200; from c = 3,600 the 3,600 to
    # the boundary take 4,800 s: 5,200-10,000 (narrow 1,200), save -10,060;
    # again -14,860 (narrow 1,200), save -14,920; -19,720, save -19,780.
    # Narrow 3 * 1,200. No growth, no recovery wait.
    "stays-narrow-to-the-end": (
        Case(4, min_gpus=24, repair=const(20000.0), gaps={"job 0": [5000.0]}),
        want(19780.0, 1190.0, 330.0, 20.0, 3600.0, 0.0, 1),
    ),
    # The same with repair 14,730: node 0 is back at 5,020 + 14,730 =
    # 19,750, inside the final write (19,720-19,780). The job takes it but
    # is DONE at 19,780: no reconfigure pause, the same figures.
    "grows-during-the-final-write": (
        Case(4, min_gpus=24, repair=const(14730.0), gaps={"job 0": [5000.0]}),
        want(19780.0, 1190.0, 330.0, 20.0, 3600.0, 0.0, 1),
    ),
}


def expected(case: Case, values: dict[str, float]) -> dict[str, float]:
    out = dict(values)
    out["productive"] = case.work
    out["ckpt_stall"] = 60.0 * math.ceil(case.work / case.interval)
    out["queue_wait"] = 0.0
    out["completed"] = 1
    return out


def approx(x: float) -> Any:
    return pytest.approx(x, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("name", list(HAND))
def test_hand_timeline_reference(name: str) -> None:
    case, values = HAND[name]
    got = case.reference_one()
    for k, v in expected(case, values).items():
        assert got[k] == approx(v), (k, got[k], v)
    assert sum(got[b] for b in BUCKETS) == approx(got["wall"])


def _hand_param(name: str) -> Any:
    case, _ = HAND[name]
    return pytest.param(name, marks=needs_elastic) if case.elastic else name


@pytest.mark.parametrize("name", [_hand_param(n) for n in HAND])
def test_hand_timeline_acesim(name: str) -> None:
    case, values = HAND[name]
    rows = case.acesim()
    assert rows.size == 1
    row = rows[0]
    for k, v in expected(case, values).items():
        if k == "narrow" and "narrow" not in rows.dtype.names:
            assert v == 0.0  # a baseline case against a core without the bucket
            continue
        assert float(row[k]) == approx(v), (k, float(row[k]), v)
    buckets = [b for b in BUCKETS if b in rows.dtype.names]
    assert sum(float(row[b]) for b in buckets) == approx(float(row["wall"]))


# --- (c) statistical scenarios --------------------------------------------------

# Weibull node failures with a decreasing hazard (bursty), LogNormal repair
# (mean 6 h), a hot spare, any three nodes of four enough.
WEIBULL_LOGNORMAL = Case(
    4,
    work=2 * DAY,
    interval=2 * HOUR,
    spares=1,
    init=const(600.0),
    load=const(300.0),
    save=const(120.0),
    reconfigure=const(180.0),
    detect=const(60.0),
    repair=Law("lognormal", math.log(6 * HOUR) - 0.5, 1.0),
    node_failures=Law("weibull", 0.7, DAY),
    min_gpus=16,
)

# Exponential node failures, Gamma repair, an extra free node, random job
# laws (LogNormal init, Gamma save and load, Exponential reconfigure and
# detection), sublinear scaling 0.8, any one node of three enough.
EXP_GAMMA = Case(
    3,
    work=1.5 * DAY,
    interval=HOUR,
    fleet_nodes=4,
    init=Law("lognormal", math.log(300.0), 0.5),
    load=Law("gamma", 2.0, 60.0),
    save=Law("gamma", 4.0, 15.0),
    reconfigure=Law("exp", 240.0),
    detect=Law("exp", 300.0),
    repair=Law("gamma", 2.0, 4 * HOUR),
    node_failures=Law("exp", DAY),
    min_gpus=8,
    scaling=0.8,
)

# Weibull with an increasing hazard (wear-out), LogNormal repair, two causes
# (crashes seen in 30 s, hangs after a 10 min watchdog), four nodes of which
# three must stay, superlinear scaling 1.2.
WEIBULL_CAUSES = Case(
    4,
    work=2 * DAY,
    interval=90 * MINUTE,
    init=const(420.0),
    load=Law("lognormal", math.log(120.0), 0.3),
    save=const(90.0),
    reconfigure=Law("lognormal", math.log(150.0), 0.4),
    causes=((0.7, const(30.0)), (0.3, const(600.0))),
    repair=Law("lognormal", math.log(4 * HOUR) - 0.32, 0.8),
    node_failures=Law("weibull", 1.5, 2 * DAY),
    min_gpus=24,
    scaling=1.2,
)

STATISTICAL: dict[str, Case] = {
    "weibull-lognormal-spare": WEIBULL_LOGNORMAL,
    "exp-gamma-scaling-0.8": EXP_GAMMA,
    "weibull-wearout-two-causes": WEIBULL_CAUSES,
    # The plain baselines of two of them (the reference's fleet and waits).
    "baseline-weibull-lognormal-spare": replace(WEIBULL_LOGNORMAL, min_gpus=None),
    "baseline-weibull-wearout-two-causes": replace(WEIBULL_CAUSES, min_gpus=None),
}

COMPARED = (
    "wall",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "recovery_wait",
    "narrow",
    "failures",
)
REF_REPLICAS, ACE_REPLICAS = 3000, 4000


def _compare(field: str, a: np.ndarray, b: np.ndarray) -> float:
    """z of the difference of means (a: acesim, b: reference); a field
    without spread in both (a constant) must agree to rounding."""
    a, b = a.astype(float), b.astype(float)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    scale = max(abs(a.mean()), abs(b.mean()), 1.0)
    if se <= 1e-9 * scale:
        assert a.mean() == pytest.approx(b.mean(), rel=1e-9, abs=1e-6), field
        return 0.0
    return (a.mean() - b.mean()) / se


def test_statistical_scenarios_exercise_elasticity() -> None:
    """The elastic scenarios shrink and grow often, and lose narrow time;
    their baselines wait. (Reference only.)"""
    for name, case in STATISTICAL.items():
        ref = case.reference(400, seed=1)
        if case.elastic:
            assert ref["shrinks"].mean() > 0.5, name
            assert ref["grows"].mean() > 0.3, name
            assert ref["narrow"].mean() > 0.01 * ref["wall"].mean(), name
        else:
            assert ref["recovery_wait"].mean() > 0.01 * ref["wall"].mean(), name
            assert np.all(ref["narrow"] == 0.0), name


def test_elastic_beats_waiting_in_the_reference() -> None:
    """Common sense: with slow repairs and no spare, shrinking finishes
    sooner on average than waiting (one replica set, paired seeds are not
    needed at these sizes)."""
    slow = replace(EXP_GAMMA, repair=Law("gamma", 2.0, 6 * HOUR), fleet_nodes=3)
    elastic = slow.reference(800, seed=5)
    plain = replace(slow, min_gpus=None).reference(800, seed=5)
    assert elastic["wall"].mean() < plain["wall"].mean()
    assert np.all(elastic["recovery_wait"] <= elastic["wall"])


def _stat_param(name: str) -> Any:
    return pytest.param(name, marks=needs_elastic) if STATISTICAL[name].elastic else name


@pytest.mark.parametrize("name", [_stat_param(n) for n in STATISTICAL])
def test_acesim_matches_reference(name: str) -> None:
    case = STATISTICAL[name]
    ref = case.reference(REF_REPLICAS, seed=2024)
    ours = case.acesim(ACE_REPLICAS, seed=77)
    assert np.all(ours["completed"])
    report = {}
    for f in COMPARED:
        if f not in ours.dtype.names:
            assert f == "narrow" and not case.elastic
            continue
        z = _compare(f, ours[f], ref[f])
        report[f] = (float(ours[f].mean()), float(ref[f].mean()), round(z, 2))
    bad = {f: v for f, v in report.items() if abs(v[2]) > Z}
    assert not bad, (name, bad, report)
