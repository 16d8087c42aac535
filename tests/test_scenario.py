"""Scenario files (``acesim.scenario``): scenarios worked out by hand, every
feature of the format against the same ``simulate`` call written in Python
(all six tables equal byte for byte), the dump / load round trip, and
errors that name the file, the key and the line."""

from __future__ import annotations

import math
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
import scenario_callbacks
from acesim import history
from acesim.scenario import (
    WORKLOADS,
    ScenarioGrid,
    law_spec,
    load_sweep,
    read_history_file,
)
from acesim.simulation import TABLES

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is absent")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def assert_same(a: ace.SimulationResult, b: ace.SimulationResult) -> None:
    """Every table of both results equal: dtype, shape and bytes."""
    assert (a.seed, a.replicas) == (b.seed, b.replicas)
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is None:
            continue
        assert x.dtype == y.dtype, name
        assert x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


def row(res: ace.SimulationResult, j: int = 0) -> dict[str, float]:
    fields = ("wall", "productive", "wasted", "ckpt_stall", "overhead", "detection", "failures")
    r = res.jobs[j]
    return {f: float(r[f]) for f in fields}


# --------------------------------------------------------------------------
# Worked out by hand
# --------------------------------------------------------------------------

HAND = """\
[run]
name = "hand"
replicas = 3
seed = 1

[[jobs]]
gpus = 8
work = "3h"
checkpoint_interval = "1h"
init = 0
save = "1min"
load = "2min"

[failures]
law = "constant"
value = 5000
"""


def test_constant_failures_by_hand(tmp_path: Path) -> None:
    """A failure every 5,000 s the job holds hardware (renewed at each
    failure). Load 0-120, compute 120-3720, save 3720-3780, compute until the
    failure at 5000: 1,220 s lost. The same 5,000 s cycle again (load
    5000-5120, compute to 8720, save to 8780, lost 8780-10000), then load
    10000-10120, compute 10120-13720, final save 13720-13780: done.
    Wall 13,780 = productive 10,800 + wasted 2 x 1,220 + stalls 3 x 60 +
    overhead 3 x 120."""
    res = ace.load_scenario(write(tmp_path, "hand.toml", HAND)).run()
    for r in range(3):
        assert row(res, r) == {
            "wall": 13780.0,
            "productive": 10800.0,
            "wasted": 2440.0,
            "ckpt_stall": 180.0,
            "overhead": 360.0,
            "detection": 0.0,
            "failures": 2.0,
        }
    assert res.pooled_ettr() == 10800.0 / 13780.0
    s = res.summary()
    assert s["wasted"] == 2440.0 / 13780.0
    assert s["failures_per_replica"] == 2.0
    assert res.jobs["checkpoints"].tolist() == [3, 3, 3]


def test_a_recorded_node_failure_and_a_hot_spare_by_hand(tmp_path: Path) -> None:
    """Two nodes, the second a hot spare; node 0 fails at 2,000 s (a recorded
    trace). Load 0-120, compute to 1920, save to 1980, compute 1980-2000 is
    lost; the spare takes over at once: load 2000-2120, compute to 3920, final
    save to 3980. Node 0 stays under repair (1 h) to the end: 1,980 s."""
    (tmp_path / "trace.csv").write_text("time,node\n2000,0\n")
    path = write(
        tmp_path,
        "fleet.toml",
        """\
        [run]
        replicas = 2
        record_events = true
        [[jobs]]
        gpus = 8
        work = "1h"
        checkpoint_interval = "30min"
        init = 0
        save = "1min"
        load = "2min"
        [fleet]
        nodes = 2
        spares = 1
        repair = "1h"
        node_failures = {node_events = "trace.csv"}
        """,
    )
    res = ace.load_scenario(path).run()
    for r in range(2):
        assert row(res, r) == {
            "wall": 3980.0,
            "productive": 3600.0,
            "wasted": 20.0,
            "ckpt_stall": 120.0,
            "overhead": 240.0,
            "detection": 0.0,
            "failures": 1.0,
        }
    assert res.fleet["spare_uses"].tolist() == [1, 1]
    assert res.fleet["down_node_hours"].tolist() == [1980.0 / HOUR] * 2
    assert res.placements is not None
    assert [(int(p["node"]), float(p["time"])) for p in res.placements[:2]] == [
        (0, 0.0),
        (1, 2000.0),
    ]


# --------------------------------------------------------------------------
# Every feature: the TOML and the Python call give the same results
# --------------------------------------------------------------------------


def run_both(tmp_path: Path, text: str, python: dict[str, Any]) -> ace.Scenario:
    scenario = ace.load_scenario(write(tmp_path, "s.toml", text))
    assert_same(scenario.run(), ace.simulate(**python))
    return scenario


def test_laws(tmp_path: Path) -> None:
    (tmp_path / "gaps.csv").write_text(
        "kind,seconds\nsave,30\nload,50\nsave,40\nsave,\nload,70\nsave,35.5\n"
    )
    text = """\
    [run]
    replicas = 40
    seed = 3
    [[jobs]]
    gpus = 512
    work = "2d"
    checkpoint_interval = "1h"
    init = {law = "gamma", shape = 2.0, scale = "1min"}
    save = {law = "empirical", csv = "gaps.csv", column = "seconds", where = {kind = "save"}}
    load = {law = "block_bootstrap", csv = "gaps.csv", column = 1, block = 2}
    persist = {law = "lognormal", mu = 4.0, sigma = 0.5}
    [[jobs]]
    gpus = 64
    work = "1d"
    checkpoint_interval = "young"
    init = "30s"
    save = {law = "exponential", mean = "45s"}
    load = {law = "weibull", shape = 1.5, scale = 90}
    failures = {law = "mixture", components = [
        {weight = 0.9, law = "exponential", mean = "5d"},
        {weight = 0.1, law = "weibull", shape = 0.6, scale = "20min"},
    ]}
    [[jobs]]
    gpus = 1024
    work = "12h"
    checkpoint_interval = "daly"
    failures = {law = "gang", base = {law = "weibull", shape = 2.0, scale = "300d"}, units = 1024}
    [[jobs]]
    gpus = 8
    work = "6h"
    checkpoint_interval = "adaptive"
    failures = {law = "replay", times = [3600, "2h", inf]}
    [[jobs]]
    gpus = 16
    work = "6h"
    checkpoint_interval = 1800
    save = {law = "constant", value = 12.5}
    failures = "none"
    [[jobs]]
    gpus = 32
    work = "1d"
    checkpoint_interval = "1h"
    failures = {law = "node_rate", failures_per_node_day = 6.5e-3, gpus_per_node = 8}

    [failures]
    law = "scale_aware"
    base = {law = "empirical", samples = ["8h", "4h", 36000]}
    ref_gpus = 1024
    exponent = 0.9
    """
    jobs = [
        ace.Job(
            512,
            2 * DAY,
            HOUR,
            init=ace.Gamma(2.0, MINUTE),
            save=ace.Empirical([30.0, 40.0, 35.5]),
            load=ace.BlockBootstrap([30.0, 50.0, 40.0, 70.0, 35.5], 2),
            persist=ace.LogNormal(4.0, 0.5),
        ),
        ace.Job(
            64,
            DAY,
            "young",
            init=30.0,
            save=ace.Exponential(45.0),
            load=ace.Weibull(1.5, 90.0),
        ),
        ace.Job(1024, 12 * HOUR, "daly"),
        ace.Job(8, 6 * HOUR, "adaptive"),
        ace.Job(16, 6 * HOUR, 1800.0, save=ace.Constant(12.5)),
        ace.Job(32, DAY, HOUR),
    ]
    scenario_law = ace.ScaleAware(
        ace.Empirical([8 * HOUR, 4 * HOUR, 36000.0]), ref_gpus=1024, exponent=0.9
    )
    failures = [
        scenario_law,
        ace.Mixture([(0.9, ace.Exponential(5 * DAY)), (0.1, ace.Weibull(0.6, 20 * MINUTE))]),
        ace.gang(ace.Weibull(2.0, 300 * DAY), 1024),
        ace.Replay([3600.0, 7200.0, math.inf]),
        None,
        ace.node_rate_model(6.5e-3, gpus_per_node=8),
    ]
    run_both(tmp_path, text, {"jobs": jobs, "failures": failures, "replicas": 40, "seed": 3})


def test_meta_scale_law_and_the_default(tmp_path: Path) -> None:
    job = ace.Job(2048, 2 * DAY, "daly")
    text = """\
    [run]
    replicas = 30
    [[jobs]]
    gpus = 2048
    work = "2d"
    checkpoint_interval = "daly"
    [failures]
    law = "meta_scale"
    mttf_1024 = "5h"
    exponent = 1.2
    """
    law = ace.meta_scale_model(5 * HOUR, exponent=1.2)
    run_both(tmp_path, text, {"jobs": job, "failures": law, "replicas": 30})
    # without [failures]: simulate's default, the same call without failures
    bare = (
        "[run]\nreplicas = 30\n[[jobs]]\ngpus = 2048\nwork = '2d'\ncheckpoint_interval = 'daly'\n"
    )
    s = run_both(tmp_path, bare, {"jobs": job, "replicas": 30})
    assert "failures" not in s.simulate_kwargs()


def test_a_job_of_its_own_law_keeps_the_default_for_the_others(tmp_path: Path) -> None:
    """One job with its own law: the others keep simulate's default
    (meta_scale_model without node failures)."""
    text = """\
    [run]
    replicas = 20
    [[jobs]]
    gpus = 1024
    work = "1d"
    checkpoint_interval = "1h"
    [[jobs]]
    gpus = 512
    work = "1d"
    checkpoint_interval = "1h"
    failures = "6h"
    """
    jobs = [ace.Job(1024, DAY, HOUR), ace.Job(512, DAY, HOUR)]
    both = [ace.meta_scale_model(), ace.Constant(6 * HOUR)]
    run_both(tmp_path, text, {"jobs": jobs, "failures": both, "replicas": 20})


def test_jobs_count_tiers_elastic_and_storage(tmp_path: Path) -> None:
    text = """\
    [run]
    replicas = 12
    seed = 9
    horizon = "20d"
    threads = 2
    record_events = true
    check_invariants = true

    [[jobs]]
    name = "flagship"
    gpus = 256
    work = "4d"
    checkpoint_interval = "2h"
    priority = 2
    time_limit = "3d"
    checkpoint_bytes = 5e11
    [[jobs.tiers]]
    interval = "15min"
    save = "5s"
    load = "1min"
    [[jobs.tiers]]
    interval = "1h"
    save = "20s"
    load = "2min"
    replication = 2

    [[jobs]]
    name = "elastic"
    gpus = 128
    min_gpus = 64
    reconfigure = "2min"
    scaling = 0.9
    work = "2d"
    checkpoint_interval = "1h"
    persist = "3min"

    [[jobs]]
    name = "small"
    count = 5
    submit = "1h"
    submit_every = "6h"
    gpus = 16
    work = "12h"
    checkpoint_interval = "1h"

    [failures]
    law = "weibull"
    shape = 0.8
    scale = "2d"

    [fleet]
    nodes = 64
    spares = 2
    storage_bandwidth = 2e10
    repair = "4h"
    """
    tiers = [
        ace.CheckpointTier(15 * MINUTE, save=5.0, load=60.0),
        ace.CheckpointTier(HOUR, save=20.0, load=120.0, replication=2),
    ]
    jobs = [
        ace.Job(
            256,
            4 * DAY,
            2 * HOUR,
            priority=2,
            time_limit=3 * DAY,
            checkpoint_bytes=5e11,
            tiers=tiers,
            name="flagship",
        ),
        ace.Job(
            128,
            2 * DAY,
            HOUR,
            min_gpus=64,
            reconfigure=120.0,
            scaling=0.9,
            persist=180.0,
            name="elastic",
        ),
    ]
    jobs += [
        ace.Job(16, 12 * HOUR, HOUR, submit=HOUR + k * 6 * HOUR, name=f"small-{k}")
        for k in range(5)
    ]
    fleet = ace.Fleet(64, spares=2, storage_bandwidth=2e10, repair=4 * HOUR)
    s = run_both(
        tmp_path,
        text,
        {
            "jobs": jobs,
            "failures": ace.Weibull(0.8, 2 * DAY),
            "fleet": fleet,
            "replicas": 12,
            "seed": 9,
            "horizon": 20 * DAY,
            "threads": 2,
            "record_events": True,
            "check_invariants": True,
        },
    )
    assert s.job_labels == [("flagship", 1), ("elastic", 1), ("small", 5)]
    assert [j.name for j in s.simulate_kwargs()["jobs"]][2:] == [f"small-{k}" for k in range(5)]


def test_fleet_causes_and_policy(tmp_path: Path) -> None:
    text = """\
    [run]
    replicas = 10
    seed = 4
    horizon = "30d"

    [[jobs]]
    gpus = 256
    work = "10d"
    checkpoint_interval = "daly"
    priority = 1
    [[jobs]]
    count = 8
    gpus = 16
    work = "1d"
    checkpoint_interval = "2h"
    submit_every = "12h"

    [fleet]
    nodes = 48
    gpus_per_node = 8
    spares = 2
    cold_spares = 2
    cold_spare_delay = {law = "exponential", mean = "30min"}
    lend_spares = true
    lemon_fraction = 0.1
    lemon_factor = 10.0
    node_start = "fresh"
    node_clock = "busy"
    node_failures = {law = "weibull", shape = 0.7, scale = "60d"}
    rate_windows = [
        {start = "5d", end = "10d", factor = 3.0},
        {start = "20d", end = "inf", factor = 0.5},
    ]
    maintenance = [
        {start = "3d", duration = "4h", nodes = "0-7"},
        {start = "12d", duration = "2h", nodes = [8, 9]},
        {start = "25d", duration = "1h", nodes = "all"},
    ]
    [fleet.repair]
    misdiagnosis = 0.05
    stages = [
        {duration = "10min", escalate = 0.3, fix = 0.2},
        {duration = {law = "exponential", mean = "8h"}, escalate = 0.1, fix = 0.9},
        {duration = "5d", fix = 1.0},
    ]

    [[causes]]
    name = "GPU"
    share = 0.6
    detect = "1min"
    [[causes]]
    name = "hang"
    share = 0.3
    detect = "10min"
    node_down = false
    [[causes]]
    name = "switch"
    share = 0.1
    nodes = 4
    scope = "node"
    slowdown = 0.5
    detect = {law = "exponential", mean = "20min"}

    [policy]
    replacement = "preempt_lower"
    preemption = "checkpoint_aware"
    preemption_grace = "10min"
    replacement_delay = {law = "exponential", mean = "5min"}
    backfill = "greedy"
    on_failure = "scenario_callbacks:requeue_wide"
    quarantine = {failures = 2, window = "7d", duration = "inf"}
    """
    jobs = [ace.Job(256, 10 * DAY, "daly", priority=1)]
    jobs += [ace.Job(16, DAY, 2 * HOUR, submit=k * 12 * HOUR) for k in range(8)]
    repair = ace.Repair(
        [
            ace.RepairStage(10 * MINUTE, escalate=0.3, fix=0.2),
            ace.RepairStage(ace.Exponential(8 * HOUR), escalate=0.1, fix=0.9),
            ace.RepairStage(5 * DAY, fix=1.0),
        ],
        misdiagnosis=0.05,
    )
    fleet = ace.Fleet(
        48,
        gpus_per_node=8,
        spares=2,
        cold_spares=2,
        cold_spare_delay=ace.Exponential(30 * MINUTE),
        lend_spares=True,
        lemon_fraction=0.1,
        lemon_factor=10.0,
        node_start="fresh",
        node_clock="busy",
        node_failures=ace.Weibull(0.7, 60 * DAY),
        rate_windows=[(5 * DAY, 10 * DAY, 3.0), (20 * DAY, math.inf, 0.5)],
        maintenance=[
            (3 * DAY, 4 * HOUR, range(8)),
            (12 * DAY, 2 * HOUR, [8, 9]),
            (25 * DAY, HOUR, "all"),
        ],
        repair=repair,
    )
    causes = [
        ace.Cause("GPU", 0.6, detect=60.0),
        ace.Cause("hang", 0.3, detect=600.0, node_down=False),
        ace.Cause(
            "switch", 0.1, nodes=4, scope="node", slowdown=0.5, detect=ace.Exponential(1200.0)
        ),
    ]
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=600.0,
        replacement_delay=ace.Exponential(300.0),
        backfill="greedy",
        on_failure=scenario_callbacks.requeue_wide,
        quarantine=ace.Quarantine(2, 7 * DAY, math.inf),
    )
    s = run_both(
        tmp_path,
        text,
        {
            "jobs": jobs,
            "fleet": fleet,
            "causes": causes,
            "policy": policy,
            "replicas": 10,
            "seed": 4,
            "horizon": 30 * DAY,
        },
    )
    assert s.simulate_kwargs()["policy"].on_failure is scenario_callbacks.requeue_wide


def test_llama3_causes_and_a_callback_beside_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "my_policies_beside.py").write_text(
        "import acesim as ace\n\n\ndef wait(view):\n    return ace.Replacement.WAIT_REPAIR\n"
    )
    text = """\
    [run]
    replicas = 8
    [[jobs]]
    gpus = 64
    work = "3d"
    checkpoint_interval = "1h"
    [fleet]
    nodes = 10
    spares = 1
    node_failures = "20d"
    causes = "llama3"
    [policy]
    on_failure = "my_policies_beside:wait"
    """
    # causes is a top-level key: written after [fleet] it belongs to the fleet table
    with pytest.raises(ace.ScenarioError, match=r"s\.toml:11: fleet\.causes: unknown key"):
        ace.load_scenario(write(tmp_path, "s.toml", text))
    text = text.replace('    causes = "llama3"\n', "").replace(
        "[run]\n", 'causes = "llama3"\n    [run]\n'
    )
    s = ace.load_scenario(write(tmp_path, "s.toml", text))
    # Loaded from its file under a name of its own: not importable as itself.
    assert "my_policies_beside" not in sys.modules
    namespace: dict[str, Any] = {}
    exec((tmp_path / "my_policies_beside.py").read_text(), namespace)

    fleet = ace.Fleet(10, spares=1, node_failures=ace.Constant(20 * DAY))
    python = {
        "jobs": ace.Job(64, 3 * DAY, HOUR),
        "fleet": fleet,
        "causes": ace.LLAMA3_CAUSES,
        "policy": ace.Policy(on_failure=namespace["wait"]),
        "replicas": 8,
    }
    assert_same(s.run(), ace.simulate(**python))


def test_workload(tmp_path: Path) -> None:
    text = """\
    [run]
    replicas = 2
    horizon = "2d"
    [workload]
    generator = "meta_like"
    days = 1
    gpus = 512
    seed = 5
    utilization = 0.7
    checkpoint_interval = "30min"
    runtime_sigma = 1.2
    init = "1min"
    save = {law = "exponential", mean = "30s"}
    load = 45
    [fleet]
    nodes = 70
    node_failures = {law = "exponential", mean = "100d"}
    """
    jobs = ace.workloads.meta_like(
        days=1,
        gpus=512,
        seed=5,
        utilization=0.7,
        checkpoint_interval=30 * MINUTE,
        runtime_sigma=1.2,
        init=60.0,
        save=ace.Exponential(30.0),
        load=45.0,
    )
    fleet = ace.Fleet(70, node_failures=ace.Exponential(100 * DAY))
    s = run_both(tmp_path, text, {"jobs": jobs, "fleet": fleet, "replicas": 2, "horizon": 2 * DAY})
    assert s.job_labels == []


def test_every_workload_argument_has_a_kind() -> None:
    """Each generator's table names exactly its parameters (one added to
    the generator must be given a kind here)."""
    import inspect

    for name, kinds in WORKLOADS.items():
        assert set(kinds) == set(inspect.signature(getattr(ace.workloads, name)).parameters)


def test_run_options(tmp_path: Path) -> None:
    text = """\
    [run]
    replicas = 5
    seed = 18446744073709551615
    first_replica = 100
    gpus_per_node = 4
    max_events = 100000
    [[jobs]]
    gpus = 16
    work = "1d"
    checkpoint_interval = "1h"
    failures = "5h"
    """
    run_both(
        tmp_path,
        text,
        {
            "jobs": ace.Job(16, DAY, HOUR),
            "failures": [ace.Constant(5 * HOUR)],
            "replicas": 5,
            "seed": 2**64 - 1,
            "first_replica": 100,
            "gpus_per_node": 4,
            "max_events": 100000,
        },
    )


def test_a_history_fitted_law(tmp_path: Path) -> None:
    """{history = ...}: the file read as acesim fit reads it, its best law
    (or the family asked for)."""
    fleet = ace.Fleet(16, spares=1, repair=ace.Constant(600.0))
    jobs = [ace.Job(32, 3 * DAY, HOUR, submit=k * 600.0) for k in range(4)]
    recorded = ace.simulate(
        jobs, failures=ace.Weibull(0.7, 6 * HOUR), fleet=fleet, seed=4, record_events=True
    )
    history.write_sacct(recorded, tmp_path / "sacct.txt")
    fitted = read_history_file(tmp_path / "sacct.txt").fit(by="job")
    text = """\
    [run]
    replicas = 30
    [[jobs]]
    gpus = 256
    work = "2d"
    checkpoint_interval = "1h"
    [failures]
    history = "sacct.txt"
    by = "job"
    """
    job = ace.Job(256, 2 * DAY, HOUR)
    run_both(tmp_path, text, {"jobs": job, "failures": fitted.law, "replicas": 30})
    gamma = text + 'family = "gamma"\n'
    run_both(tmp_path, gamma, {"jobs": job, "failures": fitted["gamma"].law, "replicas": 30})


@needs_data
def test_a_shared_history_as_node_failures(tmp_path: Path) -> None:
    """LANL system 20's node gaps fitted by node: Weibull, shape near 0.49."""
    path = DATA / "lanl_sys20_node_interfailure_s.csv"
    text = f"""\
    [run]
    replicas = 4
    horizon = "30d"
    [[jobs]]
    gpus = 512
    work = "7d"
    checkpoint_interval = "daly"
    [fleet]
    nodes = 80
    spares = 4
    node_failures = {{history = "{path}", by = "node"}}
    """
    s = ace.load_scenario(write(tmp_path, "s.toml", text))
    law = s.simulate_kwargs()["fleet"].node_failures
    assert isinstance(law, ace.Weibull) and 0.46 < law.shape < 0.51
    fleet = ace.Fleet(80, spares=4, node_failures=read_history_file(path).fit(by="node").law)
    python = {"jobs": ace.Job(512, 7 * DAY, "daly"), "fleet": fleet}
    assert_same(s.run(), ace.simulate(**python, replicas=4, horizon=30 * DAY))


@needs_data
def test_a_shared_csv_relative_to_the_scenario(tmp_path: Path) -> None:
    """Titan's system-wide gaps (18,688 GPUs) scaled to a 1,024-GPU job."""
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    import os

    rel = os.path.relpath(DATA / "titan_gpu_interfailure_s.csv", folder)
    text = f"""\
    [run]
    replicas = 10
    [[jobs]]
    gpus = 1024
    work = "3d"
    checkpoint_interval = "1h"
    [failures]
    law = "scale_aware"
    ref_gpus = 18688
    base = {{law = "empirical", csv = "{rel}", column = "inter_failure_s"}}
    """
    s = ace.load_scenario(write(folder, "titan.toml", text))
    base = ace.Empirical.from_csv(DATA / "titan_gpu_interfailure_s.csv", "inter_failure_s")
    python = {
        "jobs": ace.Job(1024, 3 * DAY, HOUR),
        "failures": ace.ScaleAware(base, ref_gpus=18688),
        "replicas": 10,
    }
    assert_same(s.run(), ace.simulate(**python))
    assert s.files() == {"failures.base.csv": (DATA / "titan_gpu_interfailure_s.csv").resolve()}


def test_the_documented_example_is_a_scenario(tmp_path: Path) -> None:
    """The module docstring's complete example loads and runs (its policy
    module swapped for this folder's)."""
    doc = ace.scenario.__doc__ or ""
    start = doc.index("what a key means is what the same")
    block = doc[doc.index("::\n", start) + 3 : doc.index("A ``[workload]`` table")]
    text = textwrap.dedent(block)
    text = text.replace("mypolicies:on_failure", "scenario_callbacks:requeue_wide")
    text = text.replace("mypolicies:place", "scenario_callbacks:builtin_placement")
    s = ace.load_scenario(write(tmp_path, "doc.toml", text))
    assert [label for label, _ in s.job_labels] == ["flagship", "small"]
    assert len(s.simulate_kwargs()["jobs"]) == 65
    res = s.run(replicas=2, horizon=5 * DAY)
    assert res.replicas == 2 and res.jobs.shape == (130,)
    workload = doc[doc.index("    [workload]") : doc.index("**Durations**")]
    w = ace.Scenario.from_dict(tomllib_loads(textwrap.dedent(workload)))
    assert len(w.simulate_kwargs()["jobs"]) > 40000


def tomllib_loads(text: str) -> dict[str, Any]:
    from acesim import _toml

    return _toml.loads(text)


# --------------------------------------------------------------------------
# The API around it
# --------------------------------------------------------------------------


def test_from_dict_and_to_dict(tmp_path: Path) -> None:
    d = {
        "run": {"replicas": 20, "seed": 2},
        "jobs": [{"gpus": 64, "work": "1d", "checkpoint_interval": "young", "save": 30}],
        "failures": {"law": "exponential", "mean": "6h"},
    }
    s = ace.Scenario.from_dict(d)
    assert s.to_dict() == d
    assert s.to_dict() is not s.to_dict()
    assert (s.replicas, s.seed, s.name, s.source) == (20, 2, None, None)
    assert_same(
        s.run(),
        ace.simulate(
            ace.Job(64, DAY, "young", save=30.0),
            ace.Exponential(6 * HOUR),
            replicas=20,
            seed=2,
        ),
    )
    assert repr(s) == "Scenario(name=None, jobs=1, replicas=20)"
    with pytest.raises(TypeError, match="load_scenario"):
        ace.Scenario()


def test_run_overrides_go_through_the_scenario() -> None:
    s = ace.Scenario.from_dict(
        {"jobs": [{"gpus": 8, "work": "6h", "checkpoint_interval": "1h"}], "failures": "2h"}
    )
    res = s.run(replicas=7, seed=3, horizon=4 * HOUR)
    want = ace.simulate(ace.Job(8, 6 * HOUR, HOUR), ace.Constant(2 * HOUR), replicas=7, seed=3,
                        horizon=4 * HOUR)  # fmt: skip
    assert_same(res, want)
    other = s.run(replicas=7, failures=ace.Exponential(HOUR))
    assert_same(other, ace.simulate(ace.Job(8, 6 * HOUR, HOUR), ace.Exponential(HOUR), replicas=7))
    with pytest.raises(TypeError, match=r"unexpected argument 'replica' \(did you mean 'replicas'"):
        s.run(replica=3)
    with pytest.raises(ace.ScenarioError, match=r"^run\(\): run\.replicas: replicas must be >= 1"):
        s.run(replicas=0)


def test_with_values() -> None:
    s = ace.Scenario.from_dict(
        {"jobs": [{"gpus": 8, "work": "6h", "checkpoint_interval": "1h"}], "failures": "2h"}
    )
    t = s.with_values({"jobs[0].checkpoint_interval": "30min", "run.seed": 5, "failures": None})
    assert t.to_dict() == {
        "jobs": [{"gpus": 8, "work": "6h", "checkpoint_interval": "30min"}],
        "run": {"seed": 5},
    }
    assert s.to_dict()["jobs"][0]["checkpoint_interval"] == "1h"
    with pytest.raises(ace.ScenarioError, match=r"jobs\[3\]: there is no element 3"):
        s.with_values({"jobs[3].work": "1h"})
    with pytest.raises(ace.ScenarioError, match=r"^here: failures\.mean: .* is not a table"):
        s.with_values({"failures.mean": "1h"}, origin="here")
    with pytest.raises(ace.ScenarioError, match=r"^run\.seed: a scenario holds TOML values"):
        s.with_values({"run.seed": object()})
    # numpy scalars and tuples become TOML values
    u = s.with_values({"run.replicas": np.int64(3), "jobs[0].tiers": ()})
    assert u.to_dict()["run"] == {"replicas": 3} and u.to_dict()["jobs"][0]["tiers"] == []


def test_provenance() -> None:
    s = ace.Scenario.from_dict(
        {"run": {"replicas": 4}, "jobs": [{"gpus": 8, "work": "6h", "checkpoint_interval": 600}]}
    )
    res = s.run()
    p = s.provenance(res)
    assert set(p) == set(res.provenance) | {"created"}
    assert {"arguments", "scenario", "source"} <= set(p)
    assert (p["acesim_version"], p["seed"], p["replicas"]) == (ace.__version__, 0, 4)
    assert p["scenario"] == s.to_dict() and p["source"] is None
    assert p["created"].endswith("+00:00")
    # The result itself says which scenario made it, and reproduces.
    assert res.provenance["scenario"] == s.to_dict()
    again = ace.provenance.reproduce(res.provenance)
    assert again.jobs.tobytes() == res.jobs.tobytes()
    assert ace.Scenario.from_dict(res.provenance["scenario"]).run().jobs.tobytes() == (
        res.jobs.tobytes()
    )


def test_a_scenario_without_jobs_loads_but_does_not_run(tmp_path: Path) -> None:
    path = write(tmp_path, "model.toml", "[fleet]\nnodes = 8\nnode_failures = '30d'\n")
    s = ace.load_scenario(path)
    assert not s.has_jobs
    with pytest.raises(ace.ScenarioError, match=r"model\.toml: no jobs: add \[\[jobs\]\]"):
        s.simulate_kwargs()
    with pytest.raises(ace.ScenarioError, match="no jobs"):
        s.run()
    ok = s.with_values({"jobs": [{"gpus": 16, "work": "1d", "checkpoint_interval": "1h"}]})
    assert ok.has_jobs and ok.run(replicas=2).replicas == 2


# --------------------------------------------------------------------------
# Round trip
# --------------------------------------------------------------------------


def test_dump_then_load_gives_an_equal_scenario(tmp_path: Path) -> None:
    (tmp_path / "gaps.csv").write_text("x\n100\n200\n400\n")
    text = """\
    # a comment dropped by the round trip
    [run]
    name = "round trip"
    replicas = 6
    horizon = inf
    [[jobs]]
    gpus = 16
    work = "1d"
    checkpoint_interval = "daly"
    save = {law = "empirical", csv = "gaps.csv"}
    [[jobs.tiers]]
    interval = "10min"
    save = 2
    load = 10
    [fleet]
    nodes = 4
    rate_windows = [{start = 0, end = "inf", factor = 2.0}]
    node_failures = {law = "mixture", components = [{weight = 1, law = "exponential", mean = "9d"}]}
    [fleet.repair]
    stages = [{duration = "1h", escalate = 0.5}, {duration = "1d"}]
    [policy]
    quarantine = {failures = 1, window = "inf"}
    """
    original = ace.load_scenario(write(tmp_path, "s.toml", text))
    same_folder = tmp_path / "copy.toml"
    ace.dump_scenario(original, same_folder)
    again = ace.load_scenario(same_folder)
    assert again == original and again.to_dict() == original.to_dict()
    assert_same(again.run(), original.run())
    # elsewhere: the csv is written relative to the new file
    (tmp_path / "deep" / "er").mkdir(parents=True)
    moved = tmp_path / "deep" / "er" / "moved.toml"
    ace.dump_scenario(original, moved, header="moved")
    assert moved.read_text().startswith("# moved\n")
    back = ace.load_scenario(moved)
    assert back == original
    assert back.to_dict()["jobs"][0]["save"]["csv"] == "../../gaps.csv"
    assert_same(back.run(), original.run())
    assert back != ace.load_scenario(write(tmp_path, "other.toml", text.replace("= 6", "= 7")))


def test_dump_a_dict(tmp_path: Path) -> None:
    d = {"jobs": [{"gpus": 8, "work": 3600.5, "checkpoint_interval": "young"}], "failures": "1h"}
    ace.dump_scenario(d, tmp_path / "d.toml")
    assert ace.load_scenario(tmp_path / "d.toml").to_dict() == d
    with pytest.raises(ace.ScenarioError, match=r"jobs\[0\]\.wrk: unknown key"):
        ace.dump_scenario({"jobs": [{"wrk": 1}]}, tmp_path / "e.toml")
    assert not (tmp_path / "e.toml").exists()


@pytest.mark.parametrize(
    "law",
    [
        ace.Constant(3.0),
        ace.Exponential(7.5),
        ace.Weibull(0.7, 100.0),
        ace.Gamma(2.0, 3.0),
        ace.LogNormal(1.0, 0.5),
        ace.Mixture([(1.0, ace.Exponential(5.0)), (3.0, ace.Constant(1.0))]),
        ace.ScaleAware(ace.Weibull(0.5, 10.0), 1024, 0.8),
        ace.Empirical([1.0, 2.5]),
        ace.BlockBootstrap([1.0, 2.0, 3.0], 2),
        ace.Replay([1.0, math.inf]),
    ],
    ids=lambda law: type(law).__name__,
)
def test_law_spec_builds_the_same_law(law: ace.Distribution) -> None:
    """A law written by law_spec draws exactly what the law draws."""
    s = ace.Scenario.from_dict(
        {"jobs": [{"gpus": 8, "work": 600, "checkpoint_interval": 60}], "failures": law_spec(law)}
    )
    built = s.simulate_kwargs()["failures"]
    assert type(built) is type(law) and repr(built) == repr(law)
    np.testing.assert_array_equal(built.sample(50, seed=3), law.sample(50, seed=3))


# --------------------------------------------------------------------------
# Errors name the file, the key and the line
# --------------------------------------------------------------------------

GOOD = """\
[run]
replicas = 2

[[jobs]]
gpus = 8
work = "6h"
checkpoint_interval = "1h"

[[jobs]]
gpus = 16
work = "1d"
checkpoint_interval = "1h"
"""


def edit(old: str, new: str, nth: int = 1) -> str:
    """GOOD with the ``nth`` occurrence of ``old`` replaced by ``new``."""
    parts = GOOD.split(old)
    assert len(parts) > nth, old
    return old.join(parts[:nth]) + new + old.join(parts[nth:])


BAD: list[tuple[str, str, str | None, int | None, str]] = [
    # (case, text, key, line, message regex)
    ("toml", GOOD + "oops\n", None, 13, r"invalid TOML: .* \(column \d+\)"),
    ("toml-value", edit('work = "1d"', "work = 1d"), None, 11, "invalid TOML"),
    (
        "unknown",
        edit('work = "1d"', 'wrok = "1d"'),
        "jobs[1].wrok",
        11,
        r"unknown key 'wrok' in jobs\[1\] \(did you mean 'work'\?\)",
    ),
    ("unknown-top", GOOD + "[flet]\nnodes = 2\n", "flet", 13, r"did you mean 'fleet'"),
    (
        "missing",
        edit('work = "1d"\n', ""),
        "jobs[1].work",
        9,
        r"missing key 'work' \(a \[\[jobs\]\] table needs gpus, work, checkpoint_interval\)",
    ),
    (
        "type-int",
        edit("gpus = 16", 'gpus = "16"'),
        "jobs[1].gpus",
        10,
        r"must be an integer, got a string \('16'\)",
    ),
    (
        "type-float",
        edit("gpus = 16", "gpus = 16.0"),
        "jobs[1].gpus",
        10,
        "must be an integer, got a float",
    ),
    (
        "type-bool",
        GOOD.replace("[run]\n", "[run]\nrecord_events = 1\n"),
        "run.record_events",
        2,
        "must be true or false, got an integer",
    ),
    (
        "unit",
        edit('work = "1d"', 'work = "1 fortnight"'),
        "jobs[1].work",
        11,
        r"work must be a number of seconds or numbers with units .*'1 fortnight'",
    ),
    (
        "negative",
        edit('work = "6h"', "work = -5"),
        "jobs[0].work",
        6,
        "work must be a finite number of seconds >= 0",
    ),
    (
        "zero-work",
        edit('work = "6h"', "work = 0"),
        "jobs[0].work",
        6,
        r"work must be > 0, got 0\.0",
    ),
    (
        "interval",
        edit('checkpoint_interval = "1h"', 'checkpoint_interval = "yuong"'),
        "jobs[0].checkpoint_interval",
        7,
        r"or one of young, daly, adaptive",
    ),
    (
        "replicas",
        GOOD.replace("replicas = 2", "replicas = 0"),
        "run.replicas",
        2,
        "replicas must be >= 1, got 0",
    ),
    (
        "horizon",
        GOOD.replace("replicas = 2", 'horizon = "never ever"'),
        "run.horizon",
        2,
        r"horizon must be .*\('inf' for none\)",
    ),
    ("jobs-table", "[jobs]\ngpus = 8\n", "jobs", 1, r"must be an array of tables \(\[\[jobs\]\]\)"),
    (
        "law-name",
        GOOD + '[failures]\nlaw = "weibul"\nshape = 1\nscale = 2\n',
        "failures.law",
        14,
        r"did you mean 'weibull'\?",
    ),
    (
        "law-missing",
        GOOD + '[failures]\nlaw = "weibull"\nshape = 1\n',
        "failures.scale",
        13,
        r"missing key 'scale' \(law = 'weibull' needs shape, scale\)",
    ),
    ("law-table", GOOD + "[failures]\nmean = 3\n", "failures", 13, "a law table needs law ="),
    (
        "law-range",
        GOOD + '[failures]\nlaw = "weibull"\nshape = -1\nscale = 2\n',
        "failures.shape",
        15,
        r"shape must be > 0, got -1\.0",
    ),
    (
        "law-key",
        edit('work = "6h"', 'work = "6h"\nsave = {law = "exponential", men = 3}'),
        "jobs[0].save.men",
        7,
        r"unknown key 'men' in jobs\[0\]\.save \(did you mean 'mean'\?\)",
    ),
    (
        "law-type",
        edit('work = "6h"', 'work = "6h"\nsave = [1, 2]'),
        "jobs[0].save",
        7,
        "must be a law: a duration or a table",
    ),
    (
        "mixture",
        GOOD + '[failures]\nlaw = "mixture"\ncomponents = [\n  {law = "constant", value = 1},\n]\n',
        "failures.components[0]",
        16,
        "missing key 'weight'",
    ),
    (
        "csv-missing",
        GOOD + '[failures]\nlaw = "empirical"\ncsv = "nope.csv"\n',
        "failures.csv",
        15,
        r"no such file: .*nope\.csv",
    ),
    (
        "csv-column",
        GOOD + '[failures]\nlaw = "empirical"\ncsv = "gaps.csv"\ncolumn = "gap"\n',
        "failures.csv",
        15,
        r"gaps\.csv: no column 'gap' \(did you mean 'gaps'\?\)",
    ),
    (
        "history-missing",
        GOOD + '[failures]\nhistory = "sacct.txt"\n',
        "failures.history",
        14,
        "no such file",
    ),
    (
        "tier",
        edit(
            'checkpoint_interval = "1h"',
            'checkpoint_interval = "1h"\ntiers = [{interval = "2h", save = 1, load = 1}]',
        ),
        "jobs[0].tiers[0].interval",
        8,
        r"must not exceed the durable checkpoint_interval",
    ),
    (
        "elastic",
        edit("gpus = 16", "gpus = 16\nmin_gpus = 32"),
        "jobs[1].min_gpus",
        11,
        r"min_gpus \(32\) must not exceed gpus \(16\)",
    ),
    ("count", edit("gpus = 16", "gpus = 16\ncount = 0"), "jobs[1].count", 11, "count must be >= 1"),
    (
        "fleet-range",
        GOOD + "[fleet]\nnodes = 4\nspares = 4\n",
        "fleet.spares",
        15,
        "spares must be <= 3, got 4",
    ),
    (
        "fleet-required",
        GOOD + "[fleet]\ncold_spares = 1\nnodes = 4\n",
        "fleet.cold_spare_delay",
        13,
        "cold_spare_delay is required when cold_spares > 0",
    ),
    (
        "fleet-choice",
        GOOD + '[fleet]\nnodes = 4\nnode_clock = "Busy"\n',
        "fleet.node_clock",
        15,
        r"must be one of wall, busy; got 'Busy' \(did you mean 'busy'\?\)",
    ),
    (
        "window",
        GOOD + "[fleet]\nnodes = 4\nrate_windows = [\n {start = 5, end = 5, factor = 1},\n]\n",
        "fleet.rate_windows[0]",
        16,
        "end must be > start",
    ),
    (
        "maintenance",
        GOOD + '[fleet]\nnodes = 4\nmaintenance = [{start = 0, duration = 1, nodes = "4-9"}]\n',
        "fleet.maintenance[0]",
        15,
        r"maintenance\[0\] node must be <= 3",
    ),
    (
        "repair",
        GOOD + "[fleet]\nnodes = 4\n[fleet.repair]\nstages = [{duration = 1, escalate = 0.5}]\n",
        "fleet.repair.stages[0].escalate",
        16,
        r"the last stage cannot escalate",
    ),
    (
        "causes",
        GOOD + '[[causes]]\nname = "x"\nshare = 1\nscope = "rack"\n',
        "causes[0].scope",
        16,
        r"must be one of process, node; got 'rack'",
    ),
    ("causes-set", 'causes = "llama2"\n' + GOOD, "causes", 1, r"did you mean 'llama3'\?"),
    (
        "policy",
        GOOD + '[policy]\nreplacement = "wait-repair"\n',
        "policy.replacement",
        14,
        r"did you mean 'wait_repair'\?",
    ),
    (
        "import",
        GOOD + '[policy]\non_failure = "no_such_module_x:f"\n',
        "policy.on_failure",
        14,
        r"cannot import 'no_such_module_x'",
    ),
    (
        "import-attr",
        GOOD + '[policy]\non_failure = "scenario_callbacks:nope"\n',
        "policy.on_failure",
        14,
        r"'scenario_callbacks' has no 'nope'",
    ),
    (
        "import-callable",
        GOOD + '[policy]\non_failure = "scenario_callbacks:NOT_CALLABLE"\n',
        "policy.on_failure",
        14,
        r"is not callable \(got int\)",
    ),
    (
        "import-form",
        GOOD + '[policy]\non_failure = "scenario_callbacks.requeue_wide"\n',
        "policy.on_failure",
        14,
        r"must be 'package\.module:function'",
    ),
    (
        "quarantine",
        GOOD + "[policy]\nquarantine = {failures = 0}\n",
        "policy.quarantine.failures",
        14,
        "failures must be >= 1, got 0",
    ),
    (
        "both",
        GOOD + '[workload]\ngenerator = "meta_like"\n',
        "workload",
        13,
        r"either \[\[jobs\]\] tables or a \[workload\]",
    ),
    (
        "workload",
        '[workload]\ngenerator = "meta_like"\ndays = 1\ngpu = 8\n',
        "workload.gpu",
        4,
        r"did you mean 'gpus'\?",
    ),
    (
        "date",
        GOOD.replace("replicas = 2", "seed = 2024-01-01"),
        "run.seed",
        2,
        "must be an integer, got a date or time",
    ),
]


@pytest.mark.parametrize(("case", "text", "key", "line", "message"), BAD, ids=[b[0] for b in BAD])
def test_errors_name_the_file_key_and_line(
    tmp_path: Path, case: str, text: str, key: str | None, line: int | None, message: str
) -> None:
    (tmp_path / "gaps.csv").write_text("gaps\n1\n2\n")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ace.ScenarioError) as info:
        ace.load_scenario(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.file, err.key, err.line) == (str(path), key, line), str(err)
    assert re.search(message, err.reason), err.reason
    head = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err) == head + (f"{key}: " if key else "") + err.reason
    assert "\n" not in str(err)


def test_errors_when_the_scenario_runs(tmp_path: Path) -> None:
    """simulate's own checks (they need the fleet and the jobs together):
    the key of the [[jobs]] table that made the job."""
    text = GOOD + '\n[[jobs]]\ncount = 2\ngpus = 12\nmin_gpus = 4\nwork = "1d"\n'
    text += 'checkpoint_interval = "1h"\n[fleet]\nnodes = 4\n'
    path = tmp_path / "late.toml"
    path.write_text(text)
    s = ace.load_scenario(path)
    with pytest.raises(ace.ScenarioError) as info:
        s.run()
    assert info.value.key == "jobs[2].min_gpus" and info.value.line == 17
    assert "must be a multiple of a node's 8 GPUs" in info.value.reason


def test_a_file_that_is_not_there_or_not_text(tmp_path: Path) -> None:
    with pytest.raises(ace.ScenarioError, match=r"nope\.toml: no such scenario file$"):
        ace.load_scenario(tmp_path / "nope.toml")
    with pytest.raises(ace.ScenarioError, match="is a directory"):
        ace.load_scenario(tmp_path)
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ace.ScenarioError, match="not UTF-8"):
        ace.load_scenario(tmp_path / "bin.toml")


def test_scenario_errors_pickle() -> None:
    import pickle

    err = ace.ScenarioError("bad", file="x.toml", key="jobs[0].work", line=3)
    back = pickle.loads(pickle.dumps(err))
    assert (back.file, back.key, back.line, str(back)) == ("x.toml", "jobs[0].work", 3, str(err))


# --------------------------------------------------------------------------
# Sweep files
# --------------------------------------------------------------------------


def test_a_sweep_file(tmp_path: Path) -> None:
    write(tmp_path, "base.toml", GOOD + '[failures]\nlaw = "exponential"\nmean = "8h"\n')
    path = write(
        tmp_path,
        "grid.toml",
        """\
        base = "base.toml"
        name = "interval x mtbf"
        chunk_replicas = 1
        [axes]
        "jobs[0].checkpoint_interval" = ["young", "30min"]
        failures.mean = ["4h", "8h", 36000]
        """,
    )
    grid = load_sweep(path)
    assert isinstance(grid, ScenarioGrid)
    assert grid.axes == ("jobs[0].checkpoint_interval", "failures.mean")
    assert grid.name == "interval x mtbf" and grid.chunk_replicas == 1
    assert [tuple(p.values.values()) for p in grid.points] == [
        ("young", "4h"), ("young", "8h"), ("young", 36000),
        ("30min", "4h"), ("30min", "8h"), ("30min", 36000),
    ]  # fmt: skip
    results = grid.run()
    for point, item in zip(grid.points, results, strict=True):
        assert_same(item.result, point.scenario.run())
    kw = grid.points[4].scenario.simulate_kwargs()
    assert kw["jobs"][0].checkpoint_interval == 1800.0
    assert kw["failures"].mean() == 8 * HOUR


def test_an_inline_base_and_errors_in_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "gaps.csv").write_text("x\n10\n20\n")
    text = """\
    [base.run]
    replicas = 3
    [[base.jobs]]
    gpus = 8
    work = "6h"
    checkpoint_interval = "1h"
    [axes]
    jobs.0 = [1]
    """
    path = write(tmp_path, "g.toml", text)
    with pytest.raises(ace.ScenarioError, match=r"g\.toml:8: axes\.jobs\.0: a key must be"):
        load_sweep(path)
    good_axes = """\
    [axes]
    "jobs[0].save" = [30, {law = "empirical", csv = "gaps.csv"}]
    """
    path = write(tmp_path, "g.toml", text.split("[axes]")[0] + textwrap.dedent(good_axes))
    grid = load_sweep(path)
    assert grid.points[1].scenario.simulate_kwargs()["jobs"][0].save.samples.tolist() == [10, 20]
    cases = [
        ('"jobs[0].save" = [30, {law = "exponential", men = 3}]', 'axes."jobs[0].save"[1].men', 8,
         r"did you mean 'mean'\?"),
        ('"jobs[0].work" = ["1h", "2 lightyears"]', 'axes."jobs[0].work"[1]', 8, "work must be"),
        ('"jobs[1].work" = ["1h"]', 'axes."jobs[1].work"[0]', 8, "there is no element 1"),
        ("failures.meen = [1]", "axes.failures.meen[0]", 8, "a law table needs law"),
        ('"run.replicas" = []', 'axes."run.replicas"', 8, "an axis must not be empty"),
        ('"run.replicas" = 3', 'axes."run.replicas"', 8, "an axis is an array"),
        ('"run" = [{}]\n"run.seed" = [1]', 'axes."run.seed"', 9, "overlap"),
        ('"jobs[0].save" = [{law = "empirical", csv = "nope.csv"}]',
         'axes."jobs[0].save"[0].csv', 8, "no such file"),
    ]  # fmt: skip
    for axis, key, line, message in cases:
        path = write(tmp_path, "g.toml", text.replace("jobs.0 = [1]", axis))
        with pytest.raises(ace.ScenarioError) as info:
            load_sweep(path)
        assert (info.value.key, info.value.line) == (key, line), str(info.value)
        assert re.search(message, info.value.reason), info.value.reason
    for body, key, message in [
        ("[axes]\nx = [1]\n", "base", "missing key 'base'"),
        ('base = "nope.toml"\n[axes]\nx = [1]\n', "base", "no such file"),
        ("base = 3\n[axes]\nx = [1]\n", "base", "must be a file name or a table"),
        ('base = "ok.toml"\naxes = {}\n', "axes", "must be a table of axes"),
        ('base = "ok.toml"\nbase2 = 1\n[axes]\nx = [1]\n', "base2", "did you mean 'base'"),
        ('base = "ok.toml"\n[axes]\nx = [1]\n', "axes.x[0]", "unknown key 'x'"),
    ]:
        write(tmp_path, "ok.toml", GOOD)
        path = write(tmp_path, "h.toml", body)
        with pytest.raises(ace.ScenarioError) as info:
            load_sweep(path)
        assert info.value.key == key and message in info.value.reason, str(info.value)


def test_never_switches_failures_off_in_a_scenario(tmp_path: Path) -> None:
    """``{law = "never"}`` where a failure law is: the fleet's, the
    scenario's and a job's; nothing fails (a 2 h job, a checkpoint each hour,
    save 60 s, load 60 s, no init: 60 + 2 x 3,660 = 7,380 s)."""
    text = """\
    [run]
    replicas = 3
    [[jobs]]
    gpus = 16
    work = "2h"
    checkpoint_interval = "1h"
    init = 0
    save = 60
    load = 60
    failures = {law = "never"}
    [[jobs]]
    gpus = 8
    work = "2h"
    checkpoint_interval = "1h"
    init = 0
    save = 60
    load = 60
    [failures]
    law = "never"
    [fleet]
    nodes = 4
    node_failures = {law = "never"}
    """
    never = ace.Never()
    jobs = [ace.Job(g, 2 * 3600.0, 3600.0, init=0.0, save=60.0, load=60.0) for g in (16, 8)]
    scenario = run_both(
        tmp_path,
        text,
        {"jobs": jobs, "failures": [never, never], "replicas": 3,
         "fleet": ace.Fleet(4, node_failures=never)},
    )  # fmt: skip
    res = scenario.run()
    assert (res.jobs["failures"] == 0).all()
    assert (res.jobs["wall"] == 60.0 + 2 * 3660.0).all()
    assert scenario.to_dict()["fleet"]["node_failures"] == {"law": "never"}


def test_never_is_no_duration_in_a_scenario(tmp_path: Path) -> None:
    text = """\
    [[jobs]]
    gpus = 8
    work = "2h"
    checkpoint_interval = "1h"
    save = {law = "never"}
    """
    with pytest.raises(ace.ScenarioError, match=r"jobs\[0\]\.save: .*Never\(\) is a failure law"):
        ace.load_scenario(write(tmp_path, "s.toml", text))
    with pytest.raises(ace.ScenarioError, match=r"unknown key"):
        ace.load_scenario(
            write(tmp_path, "t.toml", text.replace('{law = "never"}', '{law = "never", mean = 1}'))
        )
