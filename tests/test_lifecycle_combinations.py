"""Every lifecycle feature at once, on fleets under every policy: random
but seeded scenarios (asynchronous persists, tiers, elastic jobs, slow and
multi-node causes, shared storage, maintenance, quarantine, time limits,
cold spares, both backfills) run with the engine's invariant checks on.
What must hold whatever the mix: the buckets add up to wall on every row;
a finished job's productive time is its work; the fleet rollup is the sum
of its rows; and the numbers do not depend on the thread count."""

from __future__ import annotations

import math

import acesim as ace
import numpy as np
import pytest
from hand_cases import BUCKETS, HOUR, MINUTE, assert_accounting

C = ace.Constant


def scenario(seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(6, 14))
    tier = ace.CheckpointTier(
        float(rng.choice([5, 10, 20])) * MINUTE,
        save=ace.LogNormal(1.0, 0.3),
        load=C(20.0),
        replication=int(rng.integers(1, 3)),
    )
    jobs = []
    for _ in range(int(rng.integers(3, 7))):
        width = int(rng.integers(1, 4))
        kwargs: dict[str, object] = {
            "save": ace.LogNormal(3.0, 0.4),
            "load": C(60.0),
            "init": C(30.0),
            "priority": int(rng.integers(0, 3)),
            "submit": float(rng.uniform(0, 2 * HOUR)),
        }
        if rng.random() < 0.5:
            kwargs["persist"] = ace.Exponential(float(rng.uniform(60, 900)))
        if rng.random() < 0.5 and width >= tier.replication:
            kwargs["tiers"] = [tier]
        if rng.random() < 0.5 and width > 1:
            kwargs["min_gpus"] = 8 * int(rng.integers(1, width))
            kwargs["reconfigure"] = C(45.0)
            kwargs["scaling"] = float(rng.uniform(0.5, 1.5))
        if rng.random() < 0.4:
            kwargs["checkpoint_bytes"] = float(rng.uniform(1e9, 5e10))
        if rng.random() < 0.2:
            kwargs["time_limit"] = float(rng.uniform(6, 24)) * HOUR
        jobs.append(ace.Job(8 * width, float(rng.uniform(4, 20)) * HOUR, 40 * MINUTE, **kwargs))  # type: ignore[arg-type]
    causes = [
        ace.Cause("crash", 3.0, detect=C(60.0)),
        ace.Cause("software", 2.0, detect=C(10.0), node_down=False),
        ace.Cause(
            "slow", 1.0, detect=ace.Exponential(20 * MINUTE), slowdown=float(rng.uniform(0.2, 0.9))
        ),
        ace.Cause("switch", 0.5, detect=C(120.0), nodes=2),
    ]
    fleet = ace.Fleet(
        nodes,
        spares=int(rng.integers(0, 2)),
        repair=ace.LogNormal(math.log(2 * HOUR), 0.7),
        node_failures=ace.Weibull(0.8, float(rng.uniform(2, 8)) * ace.DAY),
        cold_spares=int(rng.integers(0, 2)),
        cold_spare_delay=C(20 * MINUTE),
        maintenance=[(6 * HOUR, HOUR, [0, 1])],
        storage_bandwidth=float(rng.choice([2e9, 2e10])),
    )
    replacement = list(ace.Replacement)[int(rng.integers(0, 4))]
    preemption = list(ace.Preemption)[int(rng.integers(0, 2))]
    policy = ace.Policy(
        replacement=replacement,
        preemption=preemption,
        preemption_grace=10 * MINUTE,
        quarantine=ace.Quarantine(2, ace.DAY, 4 * HOUR) if rng.random() < 0.5 else None,
        backfill="easy" if rng.random() < 0.5 else "greedy",
    )
    return {
        "jobs": jobs,
        "failures": ace.Weibull(0.7, 30 * HOUR),
        "fleet": fleet,
        "policy": policy,
        "causes": causes,
        "replicas": 4,
        "seed": seed,
        "horizon": 6 * ace.DAY,
    }


@pytest.mark.parametrize("seed", range(24))
def test_every_feature_at_once_keeps_the_books(seed: int) -> None:
    kwargs = scenario(seed)
    res = ace.simulate(check_invariants=True, threads=1, **kwargs)  # type: ignore[arg-type]
    rows = res.jobs
    assert_accounting(rows, atol=1e-6)
    jobs = kwargs["jobs"]
    work = np.array([j.work for j in jobs])[rows["job"]]  # type: ignore[union-attr]
    done = rows["completed"]
    np.testing.assert_allclose(rows["productive"][done], work[done], rtol=1e-9)
    for f in res.fleet:
        mine = rows[rows["replica"] == f["replica"]]
        g = mine["gpus"].astype(np.float64)
        for b in BUCKETS:
            assert f[f"{b}_gpu_hours"] == pytest.approx(
                float(np.sum(g * mine[b])) / HOUR, rel=1e-9, abs=1e-9
            )
        assert f["failures"] == mine["failures"].sum()
    again = ace.simulate(threads=2, **kwargs)  # type: ignore[arg-type]
    assert again.jobs.tobytes() == rows.tobytes()
    assert again.fleet.tobytes() == res.fleet.tobytes()


def test_the_mix_exercises_every_feature() -> None:
    """Across the seeds, every feature does something (else the checks
    above would hold vacuously)."""
    seen = dict.fromkeys(
        ("lost", "tier", "narrow", "contention", "slow", "preempted", "timeouts"), 0.0
    )
    for seed in range(24):
        res = ace.simulate(**scenario(seed))  # type: ignore[arg-type]
        j = res.jobs
        seen["lost"] += j["lost_checkpoints"].sum()
        seen["tier"] += j["tier_restores"].sum()
        seen["narrow"] += j["narrow"].sum()
        seen["contention"] += j["contention"].sum()
        seen["slow"] += j["detection"].sum()
        seen["preempted"] += j["preemptions"].sum()
        seen["timeouts"] += j["timeouts"].sum()
    assert all(v > 0 for v in seen.values()), seen
