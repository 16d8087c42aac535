"""Recorded results: fleet scenarios under every policy, hashed field by field.

A restructuring of the engine must leave every number unchanged; these hashes
prove it. A change that is meant to move numbers (a fix) regenerates them with

    ACESIM_RECORD=1 python -m pytest tests/test_recorded_results.py

and says in its commit which scenarios moved and why.

Columns added to a table after its hashes were recorded are left out of
that table's hash and hashed on their own (``jobs_added`` ...), so adding a
column proves the old ones unchanged. Columns that measure the engine's work
(``heap_events``) are not results and are not hashed.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import os
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from hand_cases import WORK_COLUMNS

RECORD = Path(__file__).with_name("data") / "recorded_results.json"

#: Columns added after the first hashes were recorded, per table.
ADDED = {
    "jobs": (
        "status",
        "planned_interruptions",
        "timeouts",
        "lost_checkpoints",
        "tier_restores",
        "narrow",
        "contention",
        "init",
        "load",
        "reconfigure",
    ),
    "fleet": (
        "retired_nodes",
        "spare_idle_node_hours",
        "planned_interruptions",
        "maintenance_node_hours",
        "cold_spare_uses",
        "timeouts",
        "narrow_gpu_hours",
        "contention_gpu_hours",
        "init_gpu_hours",
        "load_gpu_hours",
        "reconfigure_gpu_hours",
    ),
    "events": ("other",),
}


def _digest(
    array: np.ndarray, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = ()
) -> str:
    h = hashlib.sha256()
    for name in array.dtype.names or ():
        if name.startswith("pad") or name in skip or (only is not None and name not in only):
            continue
        h.update(name.encode())
        h.update(np.ascontiguousarray(array[name]).tobytes())
    return h.hexdigest()[:24]


def _fleet(lemons: bool) -> ace.Fleet:
    return ace.Fleet(
        24,
        spares=2,
        repair=ace.Exponential(6 * ace.HOUR),
        node_failures=ace.Exponential(5 * ace.DAY),
        lemon_fraction=0.1 if lemons else 0.0,
        lemon_factor=10.0,
    )


def _jobs() -> list[ace.Job]:
    jobs = [ace.Job(64, work=4 * ace.DAY, checkpoint_interval="daly", priority=2)]
    jobs += [
        ace.Job(
            g,
            work=ace.DAY,
            checkpoint_interval=ace.HOUR,
            save=ace.Exponential(120.0),
            init=ace.Constant(300.0),
            load=ace.Exponential(60.0),
            submit=i * ace.HOUR,
            priority=i % 2,
        )
        for i, g in enumerate([8, 16, 4, 2, 32, 8, 1, 24] * 3)
    ]
    return jobs


def _scenarios() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    quarantines = {"noq": None, "q": ace.Quarantine(2, 3 * ace.DAY, 5 * ace.DAY)}
    preemptions = {
        "imm": (ace.Preemption.IMMEDIATE, 0.0),
        "ckpt": (ace.Preemption.CHECKPOINT_AWARE, 0.0),
        "grace": (ace.Preemption.CHECKPOINT_AWARE, 1800.0),
    }
    for replacement in ace.Replacement:
        for pname, (preemption, grace) in preemptions.items():
            for qname, quarantine in quarantines.items():
                name = f"{replacement.name.lower()}-{pname}-{qname}"
                out[name] = dict(
                    jobs=_jobs(),
                    fleet=_fleet(lemons=qname == "q"),
                    policy=ace.Policy(replacement, preemption, quarantine, preemption_grace=grace),
                    causes=ace.LLAMA3_CAUSES,
                    replicas=3,
                    seed=11,
                    horizon=20 * ace.DAY,
                    record_events=True,
                )
    # A tight fleet: no spares, a high-priority job and whole-node victims.
    tight = ace.Fleet(
        8, repair=ace.Exponential(2 * ace.DAY), node_failures=ace.Exponential(20 * ace.DAY)
    )
    victims = [
        ace.Job(
            8,
            work=10 * ace.DAY,
            checkpoint_interval=2 * ace.HOUR,
            save=ace.Constant(600.0),
            submit=60.0 * i,
        )
        for i in range(4)
    ]
    for pname, (preemption, grace) in preemptions.items():
        out[f"tight-{pname}"] = dict(
            jobs=[
                ace.Job(32, work=20 * ace.DAY, checkpoint_interval="young", priority=10),
                *victims,
            ],
            fleet=tight,
            policy=ace.Policy(ace.Replacement.PREEMPT_LOWER, preemption, preemption_grace=grace),
            causes=ace.LLAMA3_CAUSES,
            replicas=4,
            seed=404,
            horizon=40 * ace.DAY,
            record_events=True,
        )
    # Job-level and node-level failures superposed, no causes, no horizon.
    out["superposed"] = dict(
        jobs=_jobs()[:9],
        failures=ace.Weibull(0.7, 2 * ace.DAY),
        fleet=_fleet(lemons=False),
        replicas=3,
        seed=5,
    )

    # Custom decisions: a Python failure policy and a placement callback.
    def on_failure(view: Any) -> ace.Replacement | None:
        if view.priority >= 2:
            return ace.Replacement.PREEMPT_LOWER
        return ace.Replacement.WAIT_REPAIR if view.repair_remaining < 3 * ace.HOUR else None

    def place(view: Any, free: Any) -> list[int]:
        return [int(n) for n in list(free)[-view.nodes_needed :]]

    out["callbacks"] = dict(
        jobs=_jobs(),
        fleet=_fleet(lemons=True),
        policy=ace.Policy(on_failure=on_failure, place=place),
        causes=ace.LLAMA3_CAUSES,
        replicas=2,
        seed=3,
        horizon=20 * ace.DAY,
    )
    # A replayed node trace under WAIT_REPAIR.
    first = ace.simulate(
        _jobs(), fleet=_fleet(lemons=False), replicas=1, seed=9, horizon=10 * ace.DAY
    )
    out["replay"] = dict(
        jobs=_jobs(),
        fleet=ace.Fleet(
            24,
            spares=2,
            repair=ace.Constant(4 * ace.HOUR),
            node_failures=ace.NodeTrace(first.trace, nodes=24),
        ),
        policy=ace.Policy(ace.Replacement.WAIT_REPAIR),
        replicas=1,
        seed=9,
        horizon=10 * ace.DAY,
    )
    # A repair pipeline with misdiagnosis, and retirement (unplaceable jobs).
    stages = [
        ace.RepairStage(ace.Exponential(20 * ace.MINUTE), escalate=0.4, fix=0.3),
        ace.RepairStage(ace.LogNormal(10.0, 0.6), escalate=0.2, fix=0.9),
        ace.RepairStage(ace.Constant(3 * ace.DAY), fix=1.0),
    ]
    out["pipeline"] = dict(
        jobs=_jobs(),
        fleet=ace.Fleet(
            24,
            spares=2,
            repair=ace.Repair(stages, misdiagnosis=0.2),
            node_failures=ace.Exponential(5 * ace.DAY),
            lemon_fraction=0.1,
            lemon_factor=10.0,
        ),
        policy=ace.Policy(quarantine=ace.Quarantine(2, 3 * ace.DAY, math.inf)),
        causes=ace.LLAMA3_CAUSES,
        replicas=3,
        seed=13,
        horizon=20 * ace.DAY,
        record_events=True,
    )
    # Single-job paths (no fleet): event heap and batch.
    out["single"] = dict(
        jobs=[
            ace.Job(
                1024,
                work=3 * ace.DAY,
                checkpoint_interval="young",
                save=ace.LogNormal(4.0, 0.5),
                load=ace.Exponential(120.0),
            )
        ],
        failures=ace.Weibull(0.5, 6 * ace.HOUR),
        causes=ace.LLAMA3_CAUSES,
        replicas=50,
        seed=2,
    )
    # Node clocks, rate windows, maintenance, cold spares and a re-placement
    # delay together, under every replacement policy.
    for replacement in ace.Replacement:
        for clock in ("wall", "busy"):
            out[f"features-{replacement.name.lower()}-{clock}"] = dict(
                jobs=_jobs(),
                fleet=ace.Fleet(
                    24,
                    spares=2,
                    cold_spares=2,
                    cold_spare_delay=ace.Exponential(ace.HOUR),
                    repair=ace.Exponential(6 * ace.HOUR),
                    node_failures=ace.Weibull(0.7, 3 * ace.DAY),
                    node_clock=clock,
                    rate_windows=[(ace.DAY, 3 * ace.DAY, 4.0), (2 * ace.DAY, 9 * ace.DAY, 0.5)],
                    maintenance=[
                        (0.5 * ace.DAY, 8 * ace.HOUR, range(12)),
                        (2 * ace.DAY, 4 * ace.HOUR, "all"),
                    ],
                ),
                policy=ace.Policy(
                    replacement,
                    ace.Preemption.CHECKPOINT_AWARE,
                    ace.Quarantine(2, 3 * ace.DAY, 5 * ace.DAY),
                    preemption_grace=1800.0,
                    replacement_delay=ace.Constant(300.0),
                ),
                causes=ace.LLAMA3_CAUSES,
                replicas=3,
                seed=21,
                horizon=20 * ace.DAY,
                record_events=True,
            )
    # Greedy backfill, kept as an option: these hashes were those of the same
    # scenarios when greedy was the default (before EASY).
    for name in ("spares-imm-noq", "wait_repair-grace-q", "requeue-ckpt-q", "callbacks", "replay"):
        p = out[name].get("policy") or ace.Policy()
        kwargs = {k: getattr(p, k) for k in inspect.signature(ace.Policy).parameters}
        out[f"greedy-{name}"] = dict(
            out[name], policy=ace.Policy(**{**kwargs, "backfill": "greedy"})
        )
    return out


def _hashes(name: str, kwargs: dict[str, Any]) -> dict[str, str]:
    res = ace.simulate(**kwargs)
    got = {}
    for table in ("jobs", "fleet", "trace", "events"):
        array = getattr(res, table)
        if table == "events" and (array is None or not len(array)):
            continue
        added = ADDED.get(table, ())
        got[table] = _digest(array, skip=added + WORK_COLUMNS)
        if added:
            got[f"{table}_added"] = _digest(array, only=added)
    return got


SCENARIOS = _scenarios()


def test_recorded_results() -> None:
    got = {name: _hashes(name, kwargs) for name, kwargs in SCENARIOS.items()}
    if os.environ.get("ACESIM_RECORD"):
        RECORD.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"recorded {len(got)} scenarios to {RECORD}")
    expected = json.loads(RECORD.read_text())
    assert sorted(got) == sorted(expected)
    changed = {k: (expected[k], got[k]) for k in got if got[k] != expected[k]}
    assert not changed, f"{len(changed)} scenarios changed: {sorted(changed)}"
