"""The core's invariants in a debug build: compile the extension with
ACESIM_DEBUG_INVARIANTS=ON (every run checks that no node is in two places,
GPUs add up, events never run backwards and accounting adds up after every
event) and run fleet scenarios with every policy through it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCENARIOS = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])   # the debug-built package
    import acesim as ace
    assert ace._core.__file__.startswith(sys.argv[1]), ace._core.__file__
    fleet = ace.Fleet(24, spares=2, repair=ace.Exponential(6 * ace.HOUR),
                      node_failures=ace.Exponential(5 * ace.DAY),
                      lemon_fraction=0.1, lemon_factor=10.0)
    jobs = [ace.Job(64, work=4 * ace.DAY, checkpoint_interval="daly", priority=2)]
    jobs += [ace.Job(g, work=ace.DAY, checkpoint_interval=ace.HOUR, submit=i * ace.HOUR,
                     priority=i % 2) for i, g in enumerate([8, 16, 4, 2, 32, 8, 1, 24] * 3)]
    runs = 0
    for replacement in ace.Replacement:
        for preemption, grace in ((ace.Preemption.IMMEDIATE, 0.0),
                                  (ace.Preemption.CHECKPOINT_AWARE, 1800.0)):
            for quarantine in (None, ace.Quarantine(2, 3 * ace.DAY, 5 * ace.DAY)):
                policy = ace.Policy(replacement, preemption, quarantine, preemption_grace=grace)
                res = ace.simulate(jobs, fleet=fleet, policy=policy, causes=ace.LLAMA3_CAUSES,
                                   replicas=4, seed=runs, horizon=20 * ace.DAY)
                assert res.fleet["events"].min() > 0
                runs += 1
    # Busy clocks, rate windows and maintenance (their state is checked too).
    for clock in ("wall", "busy"):
        day = ace.DAY
        featured = ace.Fleet(24, spares=2, repair=ace.Exponential(6 * ace.HOUR),
                             node_failures=ace.Exponential(5 * day), node_clock=clock,
                             rate_windows=[(day, 3 * day, 4.0), (2 * day, 9 * day, 0.5)],
                             maintenance=[(0.5 * day, 8 * ace.HOUR, range(12)),
                                          (2 * day, 4 * ace.HOUR, "all")])
        for replacement in ace.Replacement:
            res = ace.simulate(jobs, fleet=featured, policy=ace.Policy(replacement),
                               causes=ace.LLAMA3_CAUSES, replicas=2, seed=runs, horizon=20 * day)
            assert res.fleet["planned_interruptions"].min() > 0
            runs += 1
    # A repair pipeline with misdiagnosis, and retirement (unplaceable jobs).
    stages = [ace.RepairStage(ace.Exponential(600.0), escalate=0.5, fix=0.3),
              ace.RepairStage(ace.Constant(ace.DAY), fix=1.0)]
    pipeline = ace.Fleet(24, spares=2, repair=ace.Repair(stages, misdiagnosis=0.3),
                         node_failures=ace.Exponential(2 * ace.DAY),
                         lemon_fraction=0.2, lemon_factor=10.0)
    for replacement in ace.Replacement:
        policy = ace.Policy(replacement, quarantine=ace.Quarantine(2, 3 * ace.DAY, float("inf")))
        res = ace.simulate(jobs, fleet=pipeline, policy=policy, causes=ace.LLAMA3_CAUSES,
                           replicas=4, seed=runs, horizon=20 * ace.DAY)
        assert res.fleet["retired_nodes"].min() > 0
        runs += 1
    # Cold spares and the re-placement delay, with a busy clock, maintenance,
    # the pipeline and retirement.
    cold = ace.Fleet(24, spares=2, cold_spares=4, cold_spare_delay=ace.Exponential(2 * ace.HOUR),
                     repair=ace.Repair(stages, misdiagnosis=0.3),
                     node_failures=ace.Exponential(2 * ace.DAY), node_clock="busy",
                     maintenance=[(2 * ace.DAY, 4 * ace.HOUR, range(16, 22))])
    uses = 0
    for replacement in ace.Replacement:
        policy = ace.Policy(replacement, quarantine=ace.Quarantine(2, 3 * ace.DAY, float("inf")),
                            replacement_delay=ace.Exponential(900.0))
        res = ace.simulate(jobs, fleet=cold, policy=policy, causes=ace.LLAMA3_CAUSES,
                           replicas=4, seed=runs, horizon=20 * ace.DAY)
        uses += int(res.fleet["cold_spare_uses"].sum())
        runs += 1
    assert uses > 0
    # Lent spares, time limits, both backfills; then EASY over cold spares,
    # maintenance, the repair pipeline and retirement.
    lent = ace.Fleet(24, spares=2, repair=ace.Exponential(6 * ace.HOUR),
                     node_failures=ace.Exponential(5 * ace.DAY), lend_spares=True)
    limited = [ace.Job(j.gpus, j.work, j.checkpoint_interval, submit=j.submit,
                       priority=j.priority, time_limit=(i % 3 + 1) * 6 * ace.HOUR)
               for i, j in enumerate(jobs)]
    for backfill in ("easy", "greedy"):
        res = ace.simulate(limited, fleet=lent, policy=ace.Policy(backfill=backfill),
                           causes=ace.LLAMA3_CAUSES, replicas=4, seed=runs, horizon=20 * ace.DAY)
        assert res.jobs["timeouts"].sum() > 0
        runs += 1
    policy = ace.Policy(ace.Replacement.WAIT_REPAIR,
                        quarantine=ace.Quarantine(2, 3 * ace.DAY, float("inf")),
                        replacement_delay=ace.Exponential(900.0), backfill="easy")
    res = ace.simulate(limited, fleet=cold, policy=policy, causes=ace.LLAMA3_CAUSES,
                       replicas=4, seed=runs, horizon=20 * ace.DAY)
    assert res.jobs["timeouts"].sum() > 0
    runs += 1
    # The lifecycle's checkpoint levels, elastic jobs, slow failures and
    # shared storage, under every policy.
    tier = ace.CheckpointTier(10 * ace.MINUTE, save=2.0, load=20.0, replication=2)
    modern = [ace.Job(j.gpus, j.work, j.checkpoint_interval, submit=j.submit, priority=j.priority,
                      persist=ace.Exponential(300.0) if i % 2 else None,
                      tiers=[tier] if j.gpus >= 16 else (),
                      min_gpus=8 if j.gpus >= 16 and i % 3 else None, reconfigure=60.0,
                      checkpoint_bytes=2e10 if i % 4 == 0 else None)
              for i, j in enumerate(jobs)]
    causes = list(ace.LLAMA3_CAUSES) + [ace.Cause("slow", 40.0, detect=ace.Exponential(1800.0),
                                                   slowdown=0.5)]
    shared = ace.Fleet(24, spares=1, repair=ace.Exponential(6 * ace.HOUR),
                       node_failures=ace.Exponential(5 * ace.DAY), storage_bandwidth=5e9,
                       maintenance=[(2 * ace.DAY, 4 * ace.HOUR, range(6))])
    for replacement in ace.Replacement:
        res = ace.simulate(modern, fleet=shared, policy=ace.Policy(replacement,
                           preemption=ace.Preemption.CHECKPOINT_AWARE, preemption_grace=1800.0),
                           causes=causes, replicas=4, seed=runs, horizon=20 * ace.DAY)
        assert res.jobs["tier_restores"].sum() > 0 and res.jobs["contention"].sum() > 0
        runs += 1
    print("ok", runs)
    """
)


@pytest.mark.slow  # a second build of the whole core: run by .ci/slow
def test_debug_build_checks_every_run(tmp_path: Path) -> None:
    pybind11 = pytest.importorskip("pybind11")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    build = tmp_path / "build"
    configure = [
        cmake,
        "-S",
        str(ROOT),
        "-B",
        str(build),
        f"-DPython_EXECUTABLE={sys.executable}",
        f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
        "-DACESIM_CUDA=OFF",
        "-DACESIM_DEBUG_INVARIANTS=ON",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    subprocess.run(configure, check=True, capture_output=True)
    subprocess.run(
        [cmake, "--build", str(build), "-j", str(os.cpu_count() or 2)],
        check=True,
        capture_output=True,
    )
    # A package whose _core is the debug build: the Python files plus that module.
    package = tmp_path / "pkg" / "acesim"
    shutil.copytree(
        ROOT / "python" / "acesim",
        package,
        ignore=shutil.ignore_patterns("_core*.so", "__pycache__"),
    )
    for module in build.glob("_core*"):
        if module.suffix in (".so", ".pyd"):
            shutil.copy(module, package)
    out = subprocess.run(
        [sys.executable, "-c", SCENARIOS, str(package.parent)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["ok", "39"]
