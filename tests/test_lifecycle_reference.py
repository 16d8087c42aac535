"""The lifecycle reference model (tests/lifecycle_reference.py): asynchronous
checkpoints, checkpoint tiers with failure scope, slow failures.

1. Hand-worked timelines: the reference reproduces each one exactly.
2. The reference's own sanity: persist 0 is the synchronous model, a tier
   that never writes changes nothing, a vanishing slowdown is plain
   detection, the synchronous model agrees with the SimPy reference.
3. Closed forms under exponential failures with constant costs, derived
   below (asynchronous single level; two levels with failure scope), against
   the reference's Monte Carlo.
4. acesim against all of the above: the same hand-worked timelines (failure
   times replayed), statistical comparisons with the reference on
   non-exponential laws, and the closed forms. These need the lifecycle
   features in acesim and skip until the core has them
   (``ace.CheckpointTier``).

The reference shares no code with acesim; both draw their own random
numbers, so comparisons are of means within ``Z`` combined standard errors.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lifecycle_reference import FIELDS, Cause, Lifecycle, Tier, run_replicas, simulate_one
from paired_laws import ZERO, Law, const, exp_, gamma, lognormal, weibull

MINUTE, HOUR = 60.0, 3600.0
Z = 3.0
CLOSED_FORM_RTOL = 0.005

#: the lifecycle features are in the core (until then the acesim tests skip)
HAS_LIFECYCLE = hasattr(ace, "CheckpointTier")
needs_lifecycle = pytest.mark.skipif(not HAS_LIFECYCLE, reason="lifecycle features not built")

#: fields compared between models
COMPARED = (
    "wall",
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "failures",
    "checkpoints",
)
BUCKETS = ("productive", "wasted", "ckpt_stall", "overhead", "detection")


# --- one description, two models --------------------------------------------


@dataclass(frozen=True)
class TierSpec:
    interval: float
    save: Law
    load: Law
    replication: int = 1


@dataclass(frozen=True)
class CauseSpec:
    share: float
    detect: Law | None = None
    scope: str = "node"
    nodes: int = 1
    slowdown: float = 0.0


@dataclass(frozen=True)
class Scenario:
    """One job with replacements always available, for both models."""

    work: float
    interval: float
    failures: Law
    init: Law = ZERO
    save: Law = ZERO
    load: Law = ZERO
    persist: Law | None = None
    tiers: tuple[TierSpec, ...] = ()
    causes: tuple[CauseSpec, ...] | None = None
    nodes: int = 1

    # -- the reference
    def lifecycle(self) -> Lifecycle:
        return Lifecycle(
            self.work,
            self.interval,
            init=self.init.sampler,
            save=self.save.sampler,
            load=self.load.sampler,
            persist=None if self.persist is None else self.persist.sampler,
            tiers=tuple(
                Tier(t.interval, t.save.sampler, t.load.sampler, t.replication) for t in self.tiers
            ),
            nodes=self.nodes,
        )

    def ref_causes(self) -> list[Cause] | None:
        if self.causes is None:
            return None
        return [
            Cause(
                c.share,
                None if c.detect is None else c.detect.sampler,
                c.scope,
                c.nodes,
                c.slowdown,
            )
            for c in self.causes
        ]

    def reference(self, n: int, seed: int) -> np.ndarray:
        return run_replicas(n, self.lifecycle(), self.failures.sampler, self.ref_causes(), seed)

    # -- acesim (planned API of the lifecycle features)
    def ace_job(self) -> Any:
        kwargs: dict[str, Any] = dict(
            init=self.init.ace(), save=self.save.ace(), load=self.load.ace()
        )
        if self.persist is not None:
            kwargs["persist"] = self.persist.ace()
        if self.tiers:
            kwargs["tiers"] = [
                ace.CheckpointTier(
                    t.interval, t.save.ace(), t.load.ace(), replication=t.replication
                )
                for t in self.tiers
            ]
        return ace.Job(8 * self.nodes, self.work, self.interval, **kwargs)

    def ace_causes(self) -> list[Any] | None:
        if self.causes is None:
            return None
        out = []
        for i, c in enumerate(self.causes):
            kwargs: dict[str, Any] = dict(
                detect=0.0 if c.detect is None else c.detect.ace(),
                node_down=c.scope == "node",
                nodes=c.nodes,
                scope=c.scope,
            )
            if c.slowdown:
                kwargs["slowdown"] = c.slowdown
            out.append(ace.Cause(f"cause{i}", c.share, **kwargs))
        return out

    def acesim(self, n: int, seed: int, failures: Any = None) -> np.ndarray:
        res = ace.simulate(
            [self.ace_job()],
            failures=self.failures.ace() if failures is None else failures,
            causes=self.ace_causes(),
            replicas=n,
            seed=seed,
            threads=2,
        )
        rows = res.jobs
        for name in ("queue_wait", "recovery_wait"):
            assert np.all(rows[name] == 0.0), name
        total = sum(rows[b] for b in BUCKETS)
        np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)
        return rows


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def compare(
    a: np.ndarray,
    b: np.ndarray,
    fields: Sequence[str] = COMPARED,
    names: tuple[str, str] = ("acesim", "reference"),
) -> dict[str, tuple[float, float, float, float]]:
    """Per field: (mean a, mean b, combined SE, z); asserts |z| < Z. A field
    constant in both samples (e.g. productive == work) must agree to 1e-9."""
    out = {}
    problems = []
    for name in fields:
        ma, sa = _mean_se(a[name])
        mb, sb = _mean_se(b[name])
        se = math.hypot(sa, sb)
        if se <= 1e-12 * max(abs(ma), abs(mb), 1.0):
            ok = math.isclose(ma, mb, rel_tol=1e-9, abs_tol=1e-9)
            z = 0.0 if ok else math.inf
        else:
            z = (ma - mb) / se
        out[name] = (ma, mb, se, z)
        print(f"{name:12s} {names[0]} {ma:12.6g}  {names[1]} {mb:12.6g}  SE {se:9.3g}  z {z:+.2f}")
        if not abs(z) < Z:
            problems.append(
                f"{name}: {names[0]} {ma:.6g} vs {names[1]} {mb:.6g}, SE {se:.3g}, z {z:+.2f}"
            )
    assert not problems, "; ".join(problems)
    return out


def _replay(values: Sequence[float]) -> Callable[[np.random.Generator], float]:
    """The reference's failure sampler replaying ``values`` draw by draw,
    then ``inf`` (as ``ace.Replay``)."""
    it = iter(values)
    return lambda g: next(it, math.inf)


def _identity(rows: np.ndarray) -> None:
    total = sum(rows[b] for b in BUCKETS)
    np.testing.assert_allclose(total, rows["wall"], rtol=1e-9, atol=1e-6)
    for b in BUCKETS:
        assert np.all(rows[b] >= 0.0), b


# --- 1. hand-worked timelines -------------------------------------------------
# Times in seconds; "held t" is the job-level failure clock (held seconds),
# replayed draw by draw: the first draw at t=0, the next at each failure.

# (a) asynchronous: work 100, interval 30 (segments 30, 30, 30, 10), init 2,
# load 3, snapshot 1. Persist 12 (< interval), no failure:
#   start 0-5 | compute 5-35, snap 35-36, persist 36-48 (30 durable at 48)
#   | compute 36-66, snap 66-67, persist 67-79 | compute 67-97, snap 97-98,
#   persist 98-110 | compute 98-108 (progress 100), wait 108-110 for the
#   persist of 90, snap 110-111, final persist 111-123: DONE at 123.
#   ckpt_stall = 4 snaps + 2 wait + 12 final = 18.
ASYNC = dict(work=100.0, interval=30.0, init=const(2.0), load=const(3.0), save=const(1.0))

HAND_CASES: dict[str, tuple[Scenario, list[float], dict[str, float]]] = {
    "sync-two-failures": (
        # the synchronous baseline (the SimPy reference's case): failures at
        # held 20 and 40 lose 15 and 4 s of compute
        Scenario(failures=const(0.0), **ASYNC),  # type: ignore[arg-type]
        [20.0, 40.0],
        dict(
            wall=138, wasted=19, ckpt_stall=4, overhead=15, detection=0, failures=2, checkpoints=4
        ),
    ),
    "async-no-failure": (
        Scenario(failures=const(0.0), persist=const(12.0), **ASYNC),  # type: ignore[arg-type]
        [],
        dict(wall=123, wasted=0, ckpt_stall=18, overhead=5, detection=0, failures=0, checkpoints=4),
    ),
    "async-persist-lost": (
        # held 40: progress 34, the persist of 30 (36-48) is in flight: lost,
        # roll back to 0 (34 wasted; the completed snapshot stays ckpt_stall);
        # restart 40-45, then the 118 s after the first start: 163
        Scenario(failures=const(0.0), persist=const(12.0), **ASYNC),  # type: ignore[arg-type]
        [40.0],
        dict(
            wall=163, wasted=34, ckpt_stall=19, overhead=10, detection=0, failures=1, checkpoints=4
        ),
    ),
    "async-persist-done": (
        # held 50: 30 is durable (48), progress 44: 14 wasted; restart 50-55;
        # compute 55-85, snap 85-86 (persist 86-98), compute 86-116, snap
        # 116-117 (persist 117-129), compute 117-127, wait 127-129, snap
        # 129-130, final persist 130-142
        Scenario(failures=const(0.0), persist=const(12.0), **ASYNC),  # type: ignore[arg-type]
        [50.0],
        dict(
            wall=142, wasted=14, ckpt_stall=18, overhead=10, detection=0, failures=1, checkpoints=4
        ),
    ),
    "async-final-persist-cut": (
        # held 115 in the final persist (111-123): 90 is durable; 10 of
        # compute and 4 of the final wait wasted; restart 115-120, compute
        # 120-130, snap 130-131, persist 131-143
        Scenario(failures=const(0.0), persist=const(12.0), **ASYNC),  # type: ignore[arg-type]
        [115.0],
        dict(
            wall=143, wasted=14, ckpt_stall=19, overhead=10, detection=0, failures=1, checkpoints=4
        ),
    ),
    "async-long-persist": (
        # persist 40 > interval: every boundary waits 10 for the persist
        # (66-76, 107-117); the last segment waits 30 (128-158); final persist
        # 159-199. ckpt_stall = 4 snaps + 10 + 10 + 30 + 40 = 94
        Scenario(failures=const(0.0), persist=const(40.0), **ASYNC),  # type: ignore[arg-type]
        [],
        dict(wall=199, wasted=0, ckpt_stall=94, overhead=5, detection=0, failures=0, checkpoints=4),
    ),
    "async-wait-cut": (
        # held 70 in the wait 66-76 for the persist of 30: lost; 60 of compute
        # and 4 of waiting wasted; restart 70-75, then 194 s: 269
        Scenario(failures=const(0.0), persist=const(40.0), **ASYNC),  # type: ignore[arg-type]
        [70.0],
        dict(
            wall=269, wasted=64, ckpt_stall=95, overhead=10, detection=0, failures=1, checkpoints=4
        ),
    ),
}

# (b) tiers: work 120, durable interval 60 (save 4, load 6), init 1; one tier
# every 20 (save 1, load 2); the job has 2 nodes. No failure:
#   start 0-7 | 7-27, tier 27-28 | 28-48, tier 48-49 | 49-69, durable 69-73
#   | 73-93, tier 93-94 | 94-114, tier 114-115 | 115-135, durable 135-139.
#   (at 60 and 120 both levels are due: the durable writes.)
TIERED = dict(
    work=120.0,
    interval=60.0,
    init=const(1.0),
    save=const(4.0),
    load=const(6.0),
    nodes=2,
)
TIER1 = (TierSpec(20.0, const(1.0), const(2.0), 1),)
TIER2 = (TierSpec(20.0, const(1.0), const(2.0), 2),)
PROCESS = (CauseSpec(1.0, scope="process"),)
NODE1 = (CauseSpec(1.0, scope="node", nodes=1),)
NODE2 = (CauseSpec(1.0, scope="node", nodes=2),)
NODE8 = (CauseSpec(1.0, scope="node", nodes=8),)

# held 40: progress 32 (tier at 20)
#  process scope: roll back to the tier (12 wasted), restart init + tier load
#    40-43, compute to 40 (43-63), tier 63-64, to 60 (64-84), durable 84-88,
#    then 88 + 66 = 154
#  node scope taking >= replication nodes: the tier is lost, roll back to 0
#    (32 wasted), restart init + job load 40-47, then 47 + 132 = 179 (the
#    tier write at 20 completed: ckpt_stall 13, checkpoints 7)
_T_PROC = dict(
    wall=154, wasted=12, ckpt_stall=12, overhead=10, detection=0, failures=1, checkpoints=6
)
_T_NODE = dict(
    wall=179, wasted=32, ckpt_stall=13, overhead=14, detection=0, failures=1, checkpoints=7
)

HAND_CASES.update(
    {
        "tier-no-failure": (
            Scenario(failures=const(0.0), tiers=TIER1, **TIERED),  # type: ignore[arg-type]
            [],
            dict(
                wall=139,
                wasted=0,
                ckpt_stall=12,
                overhead=7,
                detection=0,
                failures=0,
                checkpoints=6,
            ),
        ),
        "tier-process": (
            Scenario(failures=const(0.0), tiers=TIER1, causes=PROCESS, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_PROC,
        ),
        "tier-node": (
            Scenario(failures=const(0.0), tiers=TIER1, causes=NODE1, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_NODE,
        ),
        "tier-no-causes-node-m1": (
            # no causes: node scope, m = 1 >= replication 1
            Scenario(failures=const(0.0), tiers=TIER1, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_NODE,
        ),
        "tier-replicated-survives-one-node": (
            # replication 2, m = 1 < 2: the tier survives
            Scenario(failures=const(0.0), tiers=TIER2, causes=NODE1, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_PROC,
        ),
        "tier-replicated-lost-two-nodes": (
            Scenario(failures=const(0.0), tiers=TIER2, causes=NODE2, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_NODE,
        ),
        "tier-replicated-lost-m-capped": (
            # a cause taking 8 nodes takes m = min(8, 2) = 2 of the job's
            Scenario(failures=const(0.0), tiers=TIER2, causes=NODE8, **TIERED),  # type: ignore[arg-type]
            [40.0],
            _T_NODE,
        ),
        "tier-durable-newer": (
            # held 80: progress 67, the durable (60) is newer than the tier
            # (40): roll back to it with the job's load: restart 80-87, then
            # 87-107, tier 107-108, 108-128, tier 128-129, 129-149, durable
            # 149-153
            Scenario(failures=const(0.0), tiers=TIER1, causes=PROCESS, **TIERED),  # type: ignore[arg-type]
            [80.0],
            dict(
                wall=153,
                wasted=7,
                ckpt_stall=12,
                overhead=14,
                detection=0,
                failures=1,
                checkpoints=6,
            ),
        ),
        "tier-async-durable-behind": (
            # durable with persist 30: snap 69-73, persist 73-103; a tier write
            # at 80 (93-94) does not wait for it. Held 100, process scope:
            # progress 86, the persist is lost (durable 0), roll back to the
            # tier at 80 (6 wasted); the durable's next (0 + 60) is behind 80:
            # restart 100-103, durable snapshot at 80 at once 103-107 (persist
            # 107-137), compute 107-127, tier 127-128, compute 128-148, final
            # snap 148-152, persist 152-182. ckpt_stall: 4 tier writes + 3
            # snaps (12) + final 30 = 46
            Scenario(
                failures=const(0.0),
                tiers=TIER1,
                causes=PROCESS,
                persist=const(30.0),
                **TIERED,  # type: ignore[arg-type]
            ),
            [100.0],
            dict(
                wall=182,
                wasted=6,
                ckpt_stall=46,
                overhead=10,
                detection=0,
                failures=1,
                checkpoints=6,
            ),
        ),
    }
)

# (c) slow failures: the synchronous case of (a) (no persist: no-failure wall
# 109, the last save 108-109), one cause (node scope).


def _slow(f: float, detect: float, scope: str = "node") -> tuple[CauseSpec, ...]:
    return (CauseSpec(1.0, detect=const(detect), scope=scope, slowdown=f),)


HAND_CASES.update(
    {
        "slow-compute": (
            # held 20, progress 15: 20-30 at rate 0.5 (progress 20, detection
            # 5); at 30 detected: roll back to 0 (20 wasted), restart 30-35,
            # then 104 s: 139
            Scenario(failures=const(0.0), causes=_slow(0.5, 10.0), **ASYNC),  # type: ignore[arg-type]
            [20.0],
            dict(
                wall=139,
                wasted=20,
                ckpt_stall=4,
                overhead=10,
                detection=5,
                failures=1,
                checkpoints=4,
            ),
        ),
        "slow-checkpoint-in-window": (
            # held 30, progress 25: window 30-50; progress 30 at 40 (detection
            # 5), save 40-41 kept, 41-50 at rate 0.5 (4.5 progress, detection
            # 4.5); at 50 roll back to 30 (4.5 wasted), restart 50-55, 73 s
            Scenario(failures=const(0.0), causes=_slow(0.5, 20.0), **ASYNC),  # type: ignore[arg-type]
            [30.0],
            dict(
                wall=128,
                wasted=4.5,
                ckpt_stall=4,
                overhead=10,
                detection=9.5,
                failures=1,
                checkpoints=4,
            ),
        ),
        "fail-stop-detection": (
            # f = 0: handled at the fault (held 30: 25 wasted), detection
            # 30-50, restart 50-55, 104 s
            Scenario(failures=const(0.0), causes=_slow(0.0, 20.0), **ASYNC),  # type: ignore[arg-type]
            [30.0],
            dict(
                wall=159,
                wasted=25,
                ckpt_stall=4,
                overhead=10,
                detection=20,
                failures=1,
                checkpoints=4,
            ),
        ),
        "slow-done-in-window": (
            # held 100, progress 92: at rate 0.5 progress 100 at 116 (detection
            # 8), last save 116-117: DONE inside the window, no rollback (the
            # fault struck: it counts in failures)
            Scenario(failures=const(0.0), causes=_slow(0.5, 50.0), **ASYNC),  # type: ignore[arg-type]
            [100.0],
            dict(
                wall=117, wasted=0, ckpt_stall=4, overhead=5, detection=8, failures=1, checkpoints=4
            ),
        ),
        "slow-in-start": (
            # held 3, in the first start (0-5): the start goes on; 5-13 at rate
            # 0.5 (progress 4, detection 4); at 13 roll back to 0, restart
            # 13-18, 104 s
            Scenario(failures=const(0.0), causes=_slow(0.5, 10.0), **ASYNC),  # type: ignore[arg-type]
            [3.0],
            dict(
                wall=122,
                wasted=4,
                ckpt_stall=4,
                overhead=10,
                detection=4,
                failures=1,
                checkpoints=4,
            ),
        ),
        "slow-clock-stops-in-window": (
            # held 20: window 20-30, handled at 30 (20 wasted), restart 30-35;
            # the next draw 8 is held time from then: held 38 = t 38 (progress
            # 3); window 38-48 (progress 8, detection 5); restart 48-53, 104 s
            Scenario(failures=const(0.0), causes=_slow(0.5, 10.0), **ASYNC),  # type: ignore[arg-type]
            [20.0, 8.0],
            dict(
                wall=157,
                wasted=28,
                ckpt_stall=4,
                overhead=15,
                detection=10,
                failures=2,
                checkpoints=4,
            ),
        ),
        "slow-tier-process": (
            # tiers of (b), process scope, f 0.5, detect 10: held 40 (progress
            # 32), 40-50 at rate 0.5 (progress 37, detection 5); roll back to
            # the tier at 20 (17 wasted), restart 50-53, then 111 s as in
            # tier-process
            Scenario(
                failures=const(0.0), tiers=TIER1, causes=_slow(0.5, 10.0, "process"), **TIERED
            ),  # type: ignore[arg-type]
            [40.0],
            dict(
                wall=164,
                wasted=17,
                ckpt_stall=12,
                overhead=10,
                detection=5,
                failures=1,
                checkpoints=6,
            ),
        ),
        "slow-persist-ends-in-window": (
            # persist 12 of (a); held 40 (progress 34, persist of 30 until 48):
            # window 40-50, the persist ends at 48 (30 durable), progress 39
            # at 50 (detection 5); roll back to 30 (9 wasted), restart 50-55,
            # then as in async-persist-done: 142
            Scenario(
                failures=const(0.0),
                persist=const(12.0),
                causes=_slow(0.5, 10.0),
                **ASYNC,  # type: ignore[arg-type]
            ),
            [40.0],
            dict(
                wall=142,
                wasted=9,
                ckpt_stall=18,
                overhead=10,
                detection=5,
                failures=1,
                checkpoints=4,
            ),
        ),
    }
)


def _check_hand(row: Any, scenario: Scenario, expected: dict[str, float]) -> None:
    for key, value in expected.items():
        assert float(row[key]) == pytest.approx(value, abs=1e-9), key
    assert float(row["productive"]) == pytest.approx(scenario.work)
    total = sum(float(row[b]) for b in BUCKETS)
    assert total == pytest.approx(float(row["wall"]))


@pytest.mark.parametrize("case", list(HAND_CASES))
def test_hand_timeline_reference(case: str) -> None:
    scenario, failures, expected = HAND_CASES[case]
    values = simulate_one(
        scenario.lifecycle(), _replay(failures), scenario.ref_causes(), np.random.default_rng(0)
    )
    _check_hand(dict(zip(FIELDS, values, strict=True)), scenario, expected)


@needs_lifecycle
@pytest.mark.parametrize("case", list(HAND_CASES))
def test_hand_timeline_acesim(case: str) -> None:
    scenario, failures, expected = HAND_CASES[case]
    rows = scenario.acesim(
        1, seed=0, failures=ace.Replay(failures) if failures else ace.Replay([math.inf])
    )
    _check_hand(rows[0], scenario, expected)
    assert bool(rows[0]["completed"])


# --- 2. the reference's own sanity ---------------------------------------------

#: a lifecycle with random costs and Weibull failures, used by the sanity checks
_SANITY = dict(
    work=8 * HOUR,
    interval=HOUR,
    failures=weibull(0.7, 3 * HOUR),
    init=gamma(2.0, MINUTE),
    save=lognormal(math.log(40.0), 0.5),
    load=lognormal(math.log(90.0), 0.4),
)


def test_persist_zero_is_the_synchronous_model() -> None:
    """p == 0: durable at the snapshot's end. Same streams: identical rows."""
    sync = Scenario(**_SANITY).reference(500, seed=11)  # type: ignore[arg-type]
    zero = Scenario(persist=const(0.0), **_SANITY).reference(500, seed=11)  # type: ignore[arg-type]
    np.testing.assert_array_equal(sync, zero)
    assert sync["failures"].mean() > 1.0


def test_a_tier_that_never_writes_changes_nothing() -> None:
    """Without tiers, and with a tier whose boundaries are always the
    durable's (the durable writes there): identical rows."""
    plain = Scenario(persist=exp_(10 * MINUTE), **_SANITY).reference(500, seed=12)  # type: ignore[arg-type]
    shadow = Scenario(
        persist=exp_(10 * MINUTE),
        tiers=(TierSpec(HOUR, lognormal(0.0, 1.0), const(1.0)),),
        **_SANITY,  # type: ignore[arg-type]
    ).reference(500, seed=12)
    np.testing.assert_array_equal(plain, shadow)
    assert np.all(shadow["tier_checkpoints"] == 0.0)


def test_a_free_tier_lost_at_every_failure_is_the_synchronous_model() -> None:
    """A tier with zero save that every failure loses (no causes: node scope,
    m = 1 = replication) only splits the compute: the same walls, with the
    tier's writes counted as checkpoints."""
    plain = Scenario(**_SANITY).reference(500, seed=13)  # type: ignore[arg-type]
    tiered = Scenario(tiers=(TierSpec(20 * MINUTE, const(0.0), const(1.0)),), **_SANITY).reference(  # type: ignore[arg-type]
        500, seed=13
    )
    for name in ("wall", "wasted", "ckpt_stall", "overhead", "failures"):
        np.testing.assert_allclose(tiered[name], plain[name], rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(
        tiered["checkpoints"], plain["checkpoints"] + tiered["tier_checkpoints"]
    )
    assert tiered["tier_checkpoints"].min() >= 16  # 2 per hour at least, no repeats counted


def test_vanishing_slowdown_is_plain_detection() -> None:
    """f -> 0 with instantaneous writes and starts: the window makes no
    progress, so the run is the fail-stop run with detection D (same draws)."""
    base = dict(work=6 * HOUR, interval=HOUR, failures=exp_(2 * HOUR), nodes=4)
    rows = {}
    for f in (0.0, 1e-12):
        causes = (
            CauseSpec(0.6, detect=exp_(10 * MINUTE), scope="node", slowdown=f),
            CauseSpec(0.4, detect=None, scope="process"),
        )
        rows[f] = Scenario(causes=causes, **base).reference(500, seed=14)  # type: ignore[arg-type]
    for name in ("wall", "wasted", "detection", "failures", "checkpoints"):
        np.testing.assert_allclose(rows[1e-12][name], rows[0.0][name], rtol=1e-6, atol=1e-6)
    assert rows[0.0]["detection"].mean() > 0.0


def test_slowdown_zero_is_the_default() -> None:
    with_f = (CauseSpec(1.0, detect=exp_(5 * MINUTE), slowdown=0.0),)
    without = (CauseSpec(1.0, detect=exp_(5 * MINUTE)),)
    a = Scenario(causes=with_f, **_SANITY).reference(300, seed=15)  # type: ignore[arg-type]
    b = Scenario(causes=without, **_SANITY).reference(300, seed=15)  # type: ignore[arg-type]
    np.testing.assert_array_equal(a, b)


def test_synchronous_model_agrees_with_the_simpy_reference() -> None:
    """persist None, no tiers, no causes: the SimPy reference's lifecycle."""
    pytest.importorskip("simpy")
    from simpy_reference import run_replicas as simpy_replicas

    s = Scenario(**_SANITY)  # type: ignore[arg-type]
    mine = s.reference(4000, seed=16)
    theirs = simpy_replicas(
        4000,
        s.work,
        s.interval,
        failure_sampler=s.failures.sampler,
        init_sampler=s.init.sampler,
        save_sampler=s.save.sampler,
        load_sampler=s.load.sampler,
        seed=16,
    )
    compare(
        mine,
        theirs,
        ("wall", "wasted", "ckpt_stall", "overhead", "failures", "checkpoints"),
        ("lifecycle", "simpy"),
    )


def test_identity_on_random_lifecycles() -> None:
    """Every feature at once, random laws: buckets add up, nothing negative."""
    s = Scenario(
        work=6 * HOUR,
        interval=HOUR,
        failures=weibull(0.6, 2 * HOUR),
        init=gamma(2.0, MINUTE),
        save=lognormal(math.log(60.0), 0.6),
        load=lognormal(math.log(120.0), 0.4),
        persist=lognormal(math.log(20 * MINUTE), 1.0),
        tiers=(
            TierSpec(10 * MINUTE, lognormal(math.log(5.0), 0.5), const(30.0), 1),
            TierSpec(30 * MINUTE, lognormal(math.log(15.0), 0.5), const(60.0), 2),
        ),
        causes=(
            CauseSpec(0.4, detect=None, scope="process"),
            CauseSpec(0.3, detect=exp_(5 * MINUTE), scope="node", nodes=1, slowdown=0.3),
            CauseSpec(0.3, detect=const(2 * MINUTE), scope="node", nodes=4),
        ),
        nodes=8,
    )
    rows = s.reference(400, seed=17)
    _identity(rows)
    np.testing.assert_allclose(rows["productive"], s.work)
    assert rows["failures"].mean() > 2.0
    assert rows["detection"].mean() > 0.0
    assert rows["tier_checkpoints"].mean() > 30.0


# --- 3. closed forms: exponential failures, constant costs, no detection -------
#
# Tool: a stretch of x held seconds that must run without a failure (Poisson
# failures of rate lam) and that, on a failure, is retried from scratch:
#   an attempt lasts min(X, x), E[min(X, x)] = (1 - e^{-lam x}) / lam, and
#   succeeds with probability e^{-lam x}; so the expected time to get through
#   it, retries included, is
#       T(x) = E[min(X, x)] / P(success) = (e^{lam x} - 1) / lam.
# A stretch whose first attempt is of length a but whose retries are of
# length b (a retry starts with a restart and replays more) takes
#       E = (1 - e^{-lam a}) / lam + (1 - e^{-lam a}) T(b)
#         = (1 - e^{-lam a}) e^{lam b} / lam.
# Failures strike at rate lam all the time (no detection), so by Wald's
# identity E[failures] = lam E[wall] in every case below.


def closed_form_async(lam: float, n: int, tau: float, s: float, p: float, restart: float) -> float:
    """E[wall] of the asynchronous single-level lifecycle.

    work = n * tau, snapshot s, persist p, restart R = init + load (every
    start, the first too; a start is vulnerable), the final checkpoint done
    when its persist ends.

    Let A_j be the instant checkpoint j becomes durable (the end of its
    persist). The state at A_j is the same for every j < n:
      * p <= tau: the job is p seconds into the compute of segment j + 1;
      * p > tau: it is at boundary j + 1, having waited p - tau for the
        persist, about to snapshot.
    From A_j, reaching A_{j+1} without a failure takes
      * p <= tau: (tau - p) compute + s snapshot + p (compute of the next
        segment, or the final wait): a = tau + s;
      * p > tau: s snapshot + p (tau compute + p - tau wait, or the final
        wait): a = s + p;
    i.e. a = s + max(tau, p). A failure before A_{j+1} rolls back to j
    (checkpoint j + 1 is not durable yet); the retry is restart R, compute
    tau, snapshot s, persist p: b = R + tau + s + p. From t = 0 (progress 0,
    the initial state is durable) the first stretch is b as well (the first
    start is a restart). So
        E[wall] = T(b) + (n - 1) (1 - e^{-lam a}) e^{lam b} / lam,
        a = s + max(tau, p),  b = R + tau + s + p.
    p = 0 gives the synchronous form e^{lam R}-weighted (T(R) + n e^{lam R}
    (e^{lam (tau + s)} - 1) / lam), see test_closed_form_async_p0_is_sync.
    """
    a = s + max(tau, p)
    b = restart + tau + s + p
    return math.expm1(lam * b) / lam + (n - 1) * (-math.expm1(-lam * a)) * math.exp(lam * b) / lam


def closed_form_sync(lam: float, n: int, tau: float, s: float, restart: float) -> float:
    """The synchronous lifecycle (DESIGN.md section 8): T(R) + n e^{lam R}
    (e^{lam (tau + s)} - 1) / lam."""
    return (
        math.expm1(lam * restart) / lam
        + n * math.exp(lam * restart) * math.expm1(lam * (tau + s)) / lam
    )


def closed_form_two_level(
    lam: float,
    periods: int,
    k: int,
    tau1: float,
    s1: float,
    s2: float,
    r1: float,
    r2: float,
    q: float,
) -> float:
    """E[wall] with one tier (interval tau1, save s1, restart r1 = init + L1,
    replication 1) and the synchronous durable (interval tau2 = k tau1, save
    s2, restart r2 = init + L2); work = periods * tau2, k >= 2. A failure is
    process scope with probability q (the tier survives) and node scope
    otherwise (only the durable survives).

    A durable period (from a durable checkpoint d to the next) is k segments
    of tau1 compute: segments 1..k-1 end with a tier write (c = tau1 + s1),
    segment k with the durable write (c_k = tau1 + s2; at d + tau2 both levels
    are due, the durable writes). Positions: P_0 just after the durable
    write at d, P_j just after tier write j (j = 1..k-1). A failure rolls
    back to the newest surviving checkpoint:
      * from P_0's segment: the durable d whatever the scope (the tier's
        newest checkpoint, if any, is older than d): restart r2;
      * from P_j's segment (j >= 1): process (q): the tier's j, restart r1;
        node (1 - q): the tier is lost, d, restart r2;
      * in a restart from tier j: process: the tier's j again (r1); node: d
        (r2); in a restart from d: d again (r2).
    With e(x) = e^{-lam x}, g(x) = (1 - e(x)) / lam, let V_j be the expected
    time from P_j to the period's end, U_0 from "restart from d", U_j from
    "restart from tier j" (V_k = 0):
        U_0 = g(r2) + (1 - e(r2)) U_0 + e(r2) V_0
        U_j = g(r1) + (1 - e(r1)) (q U_j + (1 - q) U_0) + e(r1) V_j
        V_0 = g(c_1) + (1 - e(c_1)) U_0 + e(c_1) V_1
        V_j = g(c_{j+1}) + (1 - e(c_{j+1})) (q U_j + (1 - q) U_0) + e(c_{j+1}) V_{j+1}
    (an attempt of length x lasts min(X, x) on average g(x)). The first
    gives U_0 - V_0 = D = (e^{lam r2} - 1) / lam. With Z_j = U_0 - V_j
    (Z_0 = D, Z_k = U_0) and H_j = U_0 - U_j, the U_j equation gives
        H_j = (e1 Z_j - g1) / alpha,  e1 = e(r1), g1 = g(r1),
        alpha = 1 - q (1 - e1),
    the V_0 equation Z_1 = e^{lam c_1} D + (e^{lam c_1} - 1) / lam, and the
    V_j equation, H_j substituted, the forward recursion (j = 1..k-1,
    c = c_{j+1}, ec = e(c), gc = g(c))
        Z_{j+1} = (beta Z_j + alpha gc + q (1 - ec) g1) / (alpha ec),
        beta = 1 - q + q e1 ec = 1 - q (1 - e^{-lam (r1 + c)}).
    Every period starts at P_0 except the first, which starts with a start
    from d (the initial state, the job's load): one period from a start
    takes U_0 = Z_k, from P_0 V_0 = Z_k - D, so
        E[wall] = U_0 + (periods - 1) V_0 = periods Z_k - (periods - 1) D.
    Checks: q = 0 gives T(r2 + sum c) per period from a start (every failure
    replays the period); q = 1 gives the synchronous per-segment cost
    e^{lam r1} (e^{lam c} - 1) / lam for the tier segments (Z grows by it).
    """
    if k < 2:
        raise ValueError("k >= 2 (k = 1: no tier write)")

    def e(x: float) -> float:
        return math.exp(-lam * x)

    def g(x: float) -> float:
        return -math.expm1(-lam * x) / lam

    d = math.expm1(lam * r2) / lam
    e1, g1 = e(r1), g(r1)
    alpha = 1.0 - q * (1.0 - e1)
    c1 = tau1 + s1
    z = math.exp(lam * c1) * d + math.expm1(lam * c1) / lam  # Z_1
    for j in range(1, k):
        c = tau1 + (s1 if j + 1 < k else s2)
        ec, gc = e(c), g(c)
        beta = 1.0 - q + q * e1 * ec
        z = (beta * z + alpha * gc + q * (1.0 - ec) * g1) / (alpha * ec)
    return periods * z - (periods - 1) * d


def _two_level_linear_system(
    lam: float,
    periods: int,
    k: int,
    tau1: float,
    s1: float,
    s2: float,
    r1: float,
    r2: float,
    q: float,
) -> float:
    """The same expectation by solving the 2k equations above numerically
    (unknowns V_0..V_{k-1}, U_0..U_{k-1}; U_0 is the 'restart from d')."""

    def e(x: float) -> float:
        return math.exp(-lam * x)

    def g(x: float) -> float:
        return -math.expm1(-lam * x) / lam

    n = 2 * k
    a = np.zeros((n, n))
    rhs = np.zeros(n)
    v = list(range(k))
    u = list(range(k, 2 * k))
    for j in range(k):
        c = tau1 + (s1 if j + 1 < k else s2)
        fail = 1.0 - e(c)
        a[v[j], v[j]] = 1.0
        rhs[v[j]] = g(c)
        if j == 0:
            a[v[j], u[0]] -= fail
        else:
            a[v[j], u[j]] -= q * fail
            a[v[j], u[0]] -= (1.0 - q) * fail
        if j + 1 < k:
            a[v[j], v[j + 1]] -= e(c)
    a[u[0], u[0]] = e(r2)
    a[u[0], v[0]] = -e(r2)
    rhs[u[0]] = g(r2)
    for j in range(1, k):
        a[u[j], u[j]] = 1.0 - q * (1.0 - e(r1))
        a[u[j], u[0]] = -(1.0 - q) * (1.0 - e(r1))
        a[u[j], v[j]] = -e(r1)
        rhs[u[j]] = g(r1)
    x = np.linalg.solve(a, rhs)
    return float(x[u[0]] + (periods - 1) * x[v[0]])


@dataclass(frozen=True)
class AsyncCase:
    lam: float
    n: int
    tau: float
    s: float
    p: float
    init: float
    load: float

    def closed_form(self) -> float:
        return closed_form_async(self.lam, self.n, self.tau, self.s, self.p, self.init + self.load)

    def scenario(self) -> Scenario:
        return Scenario(
            work=self.n * self.tau,
            interval=self.tau,
            failures=exp_(1.0 / self.lam),
            init=const(self.init),
            save=const(self.s),
            load=const(self.load),
            persist=const(self.p),
        )


@dataclass(frozen=True)
class TwoLevelCase:
    lam: float
    periods: int
    k: int
    tau1: float
    s1: float
    s2: float
    l1: float
    l2: float
    init: float
    q: float
    nodes: int = 4

    def closed_form(self) -> float:
        return closed_form_two_level(
            self.lam,
            self.periods,
            self.k,
            self.tau1,
            self.s1,
            self.s2,
            self.init + self.l1,
            self.init + self.l2,
            self.q,
        )

    def scenario(self) -> Scenario:
        return Scenario(
            work=self.periods * self.k * self.tau1,
            interval=self.k * self.tau1,
            failures=exp_(1.0 / self.lam),
            init=const(self.init),
            save=const(self.s2),
            load=const(self.l2),
            tiers=(TierSpec(self.tau1, const(self.s1), const(self.l1), 1),),
            causes=(
                CauseSpec(self.q, scope="process"),
                CauseSpec(1.0 - self.q, scope="node", nodes=1),
            ),
            nodes=self.nodes,
        )


ASYNC_CASES = {
    "short-persist": AsyncCase(
        1 / (6 * HOUR), 6, HOUR, 2 * MINUTE, 10 * MINUTE, 3 * MINUTE, 5 * MINUTE
    ),
    "long-persist": AsyncCase(
        1 / (6 * HOUR), 6, HOUR, 2 * MINUTE, 1.5 * HOUR, 3 * MINUTE, 5 * MINUTE
    ),
}
TWO_LEVEL_CASES = {
    "mostly-node": TwoLevelCase(
        1 / (4 * HOUR), 3, 3, 20 * MINUTE, 30.0, 4 * MINUTE, MINUTE, 6 * MINUTE, 2 * MINUTE, 0.3
    ),
    "mostly-process": TwoLevelCase(
        1 / (4 * HOUR), 3, 3, 20 * MINUTE, 30.0, 4 * MINUTE, MINUTE, 6 * MINUTE, 2 * MINUTE, 0.8
    ),
    "four-tiers-a-period": TwoLevelCase(
        1 / (3 * HOUR), 2, 4, 15 * MINUTE, 20.0, 5 * MINUTE, 40.0, 8 * MINUTE, MINUTE, 0.6
    ),
}


def _check_closed_form(rows: np.ndarray, expected: float, lam: float, label: str) -> None:
    mean, se = _mean_se(rows["wall"])
    z = (mean - expected) / se
    rel = mean / expected - 1.0
    print(f"{label}: mean wall {mean:.6g} closed form {expected:.6g} rel {rel:+.2e} z {z:+.2f}")
    assert abs(z) < Z, (mean, expected, se)
    assert abs(rel) < CLOSED_FORM_RTOL, (mean, expected)
    # Wald: E[failures] = lam E[wall]
    fm, fse = _mean_se(rows["failures"])
    assert abs(fm - lam * expected) < Z * fse, (fm, lam * expected, fse)


def test_closed_form_async_p0_is_sync() -> None:
    for lam, n, tau, s, r in [
        (1 / 3600.0, 5, 1800.0, 60.0, 200.0),
        (1 / 86400.0, 24, 3600.0, 30.0, 600.0),
    ]:
        assert closed_form_async(lam, n, tau, s, 0.0, r) == pytest.approx(
            closed_form_sync(lam, n, tau, s, r), rel=1e-12
        )


def test_closed_form_two_level_limits() -> None:
    lam, m, k, tau1, s1, s2, r1, r2 = 1 / 7200.0, 3, 4, 600.0, 10.0, 90.0, 40.0, 300.0
    # the recursion solves the linear system
    for q in (0.0, 0.25, 0.7, 1.0):
        assert closed_form_two_level(lam, m, k, tau1, s1, s2, r1, r2, q) == pytest.approx(
            _two_level_linear_system(lam, m, k, tau1, s1, s2, r1, r2, q), rel=1e-10
        )
    # q = 0: every failure replays the period from its durable checkpoint
    period = (k - 1) * (tau1 + s1) + tau1 + s2
    d = math.expm1(lam * r2) / lam
    per_start = math.expm1(lam * (r2 + period)) / lam
    assert closed_form_two_level(lam, m, k, tau1, s1, s2, r1, r2, 0.0) == pytest.approx(
        m * per_start - (m - 1) * d, rel=1e-12
    )
    # zero tier write and r1 == r2, q = 1: the synchronous model with interval tau1
    assert closed_form_two_level(lam, m, k, tau1, 0.0, 0.0, r2, r2, 1.0) == pytest.approx(
        closed_form_sync(lam, m * k, tau1, 0.0, r2), rel=1e-12
    )


@pytest.mark.parametrize("case", list(ASYNC_CASES))
def test_reference_closed_form_async(case: str) -> None:
    c = ASYNC_CASES[case]
    rows = c.scenario().reference(20_000, seed=21)
    _check_closed_form(rows, c.closed_form(), c.lam, f"async {case}")


@pytest.mark.parametrize("case", list(TWO_LEVEL_CASES))
def test_reference_closed_form_two_level(case: str) -> None:
    c = TWO_LEVEL_CASES[case]
    rows = c.scenario().reference(20_000, seed=22)
    _check_closed_form(rows, c.closed_form(), c.lam, f"two-level {case}")


# --- 4. acesim against the reference and the closed forms ----------------------

ACESIM_REPLICAS = 20_000
REFERENCE_REPLICAS = 4_000

_GAMMA_INIT = gamma(2.0, MINUTE)
_LN_SAVE = lognormal(math.log(30.0), 0.5)
_LN_LOAD = lognormal(math.log(90.0), 0.4)

ASYNC_SCENARIOS = {
    # Weibull failures (decreasing hazard), persists mostly shorter than the interval
    "weibull-short-persist": Scenario(
        work=10 * HOUR,
        interval=HOUR,
        failures=weibull(0.7, 4 * HOUR),
        init=_GAMMA_INIT,
        save=_LN_SAVE,
        load=_LN_LOAD,
        persist=lognormal(math.log(10 * MINUTE), 0.5),
    ),
    # exponential persists often longer than the interval (waits), with
    # detection: crashes (node) and hangs (process, a 10-minute watchdog)
    "long-persist-with-detection": Scenario(
        work=8 * HOUR,
        interval=30 * MINUTE,
        failures=exp_(2 * HOUR),
        init=const(MINUTE),
        save=const(20.0),
        load=gamma(3.0, 30.0),
        persist=exp_(40 * MINUTE),
        causes=(
            CauseSpec(0.7, detect=None, scope="node"),
            CauseSpec(0.3, detect=const(10 * MINUTE), scope="process"),
        ),
        nodes=4,
    ),
    # log-normal failures, Weibull snapshots, gamma persists
    "lognormal-failures": Scenario(
        work=12 * HOUR,
        interval=2 * HOUR,
        failures=lognormal(math.log(3 * HOUR), 1.0),
        init=const(2 * MINUTE),
        save=weibull(2.0, MINUTE),
        load=lognormal(math.log(60.0), 0.3),
        persist=gamma(2.0, 15 * MINUTE),
    ),
}

TIER_SCENARIOS = {
    # one local tier; processes die (tier survives) or a node is lost
    "one-tier-scoped": Scenario(
        work=8 * HOUR,
        interval=2 * HOUR,
        failures=weibull(0.8, 2 * HOUR),
        init=_GAMMA_INIT,
        save=lognormal(math.log(5 * MINUTE), 0.3),
        load=const(10 * MINUTE),
        tiers=(
            TierSpec(
                20 * MINUTE, lognormal(math.log(15.0), 0.5), lognormal(math.log(60.0), 0.3), 1
            ),
        ),
        causes=(
            CauseSpec(0.6, detect=None, scope="process"),
            CauseSpec(0.4, detect=exp_(3 * MINUTE), scope="node", nodes=1),
        ),
        nodes=16,
    ),
    # two tiers (local, and replicated on 2 nodes) and an asynchronous
    # durable; a rack failure takes 4 nodes (all the job's)
    "two-tiers-async-durable": Scenario(
        work=8 * HOUR,
        interval=2 * HOUR,
        failures=gamma(0.7, 2 * HOUR),
        init=const(MINUTE),
        save=const(MINUTE),
        load=const(8 * MINUTE),
        persist=lognormal(math.log(20 * MINUTE), 0.5),
        tiers=(
            TierSpec(10 * MINUTE, const(5.0), const(30.0), 1),
            TierSpec(30 * MINUTE, lognormal(math.log(20.0), 0.4), const(90.0), 2),
        ),
        causes=(
            CauseSpec(0.5, detect=None, scope="process"),
            CauseSpec(0.3, detect=exp_(MINUTE), scope="node", nodes=1),
            CauseSpec(0.2, detect=const(2 * MINUTE), scope="node", nodes=4),
        ),
        nodes=4,
    ),
    # no causes: node scope, m = 1: the local tier is lost, the replicated one survives
    "no-causes-replicated": Scenario(
        work=6 * HOUR,
        interval=HOUR,
        failures=lognormal(math.log(90 * MINUTE), 0.8),
        init=_GAMMA_INIT,
        save=_LN_SAVE,
        load=_LN_LOAD,
        tiers=(
            TierSpec(15 * MINUTE, const(3.0), const(20.0), 1),
            TierSpec(30 * MINUTE, const(10.0), const(45.0), 2),
        ),
        nodes=2,
    ),
}

SLOW_SCENARIOS = {
    # gray failures at half speed until a watchdog (exponential) fires
    "gray-sync": Scenario(
        work=8 * HOUR,
        interval=HOUR,
        failures=weibull(0.7, 3 * HOUR),
        init=_GAMMA_INIT,
        save=_LN_SAVE,
        load=_LN_LOAD,
        causes=(
            CauseSpec(0.6, detect=None, scope="node"),
            CauseSpec(0.4, detect=exp_(20 * MINUTE), scope="node", nodes=1, slowdown=0.5),
        ),
        nodes=8,
    ),
    # slow process-scope failures with tiers and an asynchronous durable
    "slow-tiers-async": Scenario(
        work=8 * HOUR,
        interval=2 * HOUR,
        failures=exp_(90 * MINUTE),
        init=const(MINUTE),
        save=const(MINUTE),
        load=const(5 * MINUTE),
        persist=exp_(15 * MINUTE),
        tiers=(TierSpec(20 * MINUTE, const(10.0), const(40.0), 1),),
        causes=(
            CauseSpec(
                0.5, detect=lognormal(math.log(10 * MINUTE), 0.5), scope="process", slowdown=0.2
            ),
            CauseSpec(0.5, detect=None, scope="node", nodes=1),
        ),
        nodes=4,
    ),
    # long windows at 80% speed: jobs often finish inside one
    "done-in-window": Scenario(
        work=3 * HOUR,
        interval=30 * MINUTE,
        failures=exp_(4 * HOUR),
        init=const(MINUTE),
        save=const(30.0),
        load=const(2 * MINUTE),
        causes=(CauseSpec(1.0, detect=const(HOUR), scope="node", slowdown=0.8),),
    ),
}

ALL_SCENARIOS = {
    **{f"async-{k}": v for k, v in ASYNC_SCENARIOS.items()},
    **{f"tiers-{k}": v for k, v in TIER_SCENARIOS.items()},
    **{f"slow-{k}": v for k, v in SLOW_SCENARIOS.items()},
}


def test_scenarios_exercise_their_features() -> None:
    """The reference side of the comparisons (small samples): failures
    happen, tiers write, persists wait, slow windows run."""
    for name, s in ALL_SCENARIOS.items():
        rows = s.reference(200, seed=31)
        _identity(rows)
        assert rows["failures"].mean() > 0.3, name
        if s.tiers:
            assert rows["tier_checkpoints"].mean() > 5.0, name
        if any(c.slowdown or c.detect for c in s.causes or ()):
            assert rows["detection"].mean() > 0.0, name


@needs_lifecycle
@pytest.mark.parametrize("name", list(ALL_SCENARIOS))
def test_acesim_matches_reference(name: str) -> None:
    s = ALL_SCENARIOS[name]
    a = s.acesim(ACESIM_REPLICAS, seed=41)
    b = s.reference(REFERENCE_REPLICAS, seed=41)
    assert a["completed"].all()
    np.testing.assert_allclose(a["productive"], s.work, rtol=1e-9)
    out = compare(a, b)
    # the comparison has power: the combined SE is well under 1% of the mean wall
    assert out["wall"][2] < 0.01 * out["wall"][1]


@needs_lifecycle
@pytest.mark.parametrize("case", list(ASYNC_CASES))
def test_acesim_closed_form_async(case: str) -> None:
    c = ASYNC_CASES[case]
    rows = c.scenario().acesim(ACESIM_REPLICAS, seed=51)
    _check_closed_form(rows, c.closed_form(), c.lam, f"acesim async {case}")


@needs_lifecycle
@pytest.mark.parametrize("case", list(TWO_LEVEL_CASES))
def test_acesim_closed_form_two_level(case: str) -> None:
    c = TWO_LEVEL_CASES[case]
    rows = c.scenario().acesim(ACESIM_REPLICAS, seed=52)
    _check_closed_form(rows, c.closed_form(), c.lam, f"acesim two-level {case}")
