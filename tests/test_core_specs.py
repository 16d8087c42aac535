"""The boundary to the compiled core speaks in named fields: the fleet,
policy and causes cross as the bound spec classes (``_core.FleetSpec``,
``_core.PolicySpec``, ``_core.CauseSpec``, ...), built by one builder
(``acesim._core_input.core_model``) for simulate, batch_simulate and
FleetModel; the bindings are one file per concept; ``_core.pyi`` types
every bound spec field."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import _core
from acesim._core_input import core_model
from acesim.simulation import _DistributionTable

ROOT = Path(__file__).resolve().parents[1]
BINDINGS = ROOT / "cpp" / "bindings"
HOUR = 3600.0

#: The bound spec classes and their fields, as _core.pyi declares them.
SPECS = ("FleetSpec", "PolicySpec", "QuarantineSpec", "CauseSpec", "CheckpointTierSpec",
         "RateWindow", "MaintenanceWindow", "RepairStageSpec", "JobColumns",
         "JobOptionColumns", "ModelEvent")  # fmt: skip


def test_the_builder_gives_every_fleet_field_by_name() -> None:
    """A fleet with every feature, and its FleetSpec field by field. The
    table indexes laws in the order the builder meets them: repair stages'
    durations come after the node laws and the gaps a replayed node reports
    (repair itself is -1: a pipeline)."""
    trace = ace.NodeTrace.from_times({0: [100.0, 250.0], 1: [400.0]}, nodes=3)
    stage1, stage2 = ace.Constant(60.0), ace.Constant(600.0)
    delay = ace.Constant(30.0)
    fleet = ace.Fleet(
        3, spares=1, node_failures=trace, lemon_fraction=0.5, lemon_factor=2.0,
        node_start="fresh", node_clock="busy", rate_windows=[(0.0, HOUR, 2.0)],
        maintenance=[(HOUR, 600.0, [2])],
        repair=ace.Repair([ace.RepairStage(stage1, escalate=0.25, fix=0.5),
                           ace.RepairStage(stage2)], misdiagnosis=0.125),
        cold_spares=1, cold_spare_delay=delay, lend_spares=True, storage_bandwidth=1e9,
    )  # fmt: skip
    table = _DistributionTable()
    spec = core_model(table.index, fleet, None, []).fleet
    assert isinstance(spec, _core.FleetSpec)
    laws = table.compiled
    assert (spec.nodes, spec.spares, spec.cold_spares) == (3, 1, 1)
    assert spec.repair == -1  # a pipeline replaces the single law
    assert spec.node_failures == 0  # the trace's model
    assert spec.node_failure_laws == [1, 2, -1]  # one law per node (node 2: never fails)
    assert spec.node_failure_times is True
    assert spec.node_failure_reported == [3, 4, -1]  # the gaps each one reports
    assert (spec.lemon_fraction, spec.lemon_factor) == (0.5, 2.0)
    assert spec.stationary_start is False
    assert spec.node_clock == _core.NodeClock.BUSY
    assert [(w.start, w.end, w.factor) for w in spec.rate_windows] == [(0.0, HOUR, 2.0)]
    assert [(m.start, m.duration, m.nodes) for m in spec.maintenance] == [(HOUR, 600.0, [2])]
    stages = [(s.duration, s.escalate, s.fix) for s in spec.repair_stages]
    assert stages == [(5, 0.25, 0.5), (6, 0.0, 0.0)]
    assert spec.misdiagnosis == 0.125
    assert spec.cold_spare_delay == 7
    assert (spec.lend_spares, spec.storage_bandwidth) == (True, 1e9)
    assert len(laws) == 8


def test_the_builder_gives_every_policy_and_cause_field_by_name() -> None:
    """A policy's enums, quarantine, callbacks and delay law, and a cause's
    fields, as the core's named fields."""

    def decide(view: Any) -> None:
        return None

    def place(view: Any, free: Any) -> None:
        return None

    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER, preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=120.0, quarantine=ace.Quarantine(failures=2, window=HOUR,
                                                          duration=math.inf),
        on_failure=decide, place=place, replacement_delay=ace.Constant(5.0), backfill="greedy",
    )  # fmt: skip
    cause = ace.Cause("gpu", share=0.25, detect=ace.Constant(10.0), node_down=False, nodes=2,
                      slowdown=0.5)  # fmt: skip
    table = _DistributionTable()
    model = core_model(table.index, None, policy, [cause])
    p = model.policy
    assert p is not None and model.fleet is None
    assert p.replacement == _core.Replacement.PREEMPT_LOWER
    assert p.preemption == _core.Preemption.CHECKPOINT_AWARE
    assert p.preemption_grace == 120.0
    q = p.quarantine
    assert (q.enabled, q.failures, q.window, q.duration) == (True, 2, HOUR, math.inf)
    assert p.on_failure is decide  # the callable itself, wrapped only in the core
    assert callable(p.place) and p.place is not place  # the bool-refusing wrapper
    assert (p.compiled, p.compiled_user_data) == (0, 0)
    assert p.replacement_delay == 0 and p.backfill == _core.Backfill.GREEDY
    (c,) = model.causes
    assert (c.share, c.detect, c.node_down, c.nodes, c.node_scope, c.slowdown) == (
        0.25, 1, False, 2, False, 0.5,
    )  # fmt: skip
    assert _core.PolicySpec().quarantine.enabled is False


def test_a_run_from_hand_built_specs_is_the_public_run() -> None:
    """One 8-GPU job of 3,600 s work, a 600 s interval and 60 s laws on one
    node, no failures: 60 s init + 60 s load and 6 writes of 60 s, wall
    4,080 s, by the compiled call on hand-built specs as by simulate."""
    law, never = ace.Constant(60.0), ace.Constant(1e12)  # no failure within the run
    columns = _core.JobColumns(
        gpus=np.array([8], np.uint32), work=np.array([3600.0]),
        checkpoint_interval=np.array([600.0]), rule=np.zeros(1, np.uint32), init=0, save=0,
        load=0, submit=np.zeros(1), priority=np.zeros(1, np.int32),
    )  # fmt: skip
    raw = _core.simulate(
        [law._compiled, never._compiled], columns, 1, [_core.CauseSpec()], _core.FleetSpec(nodes=1),
        _core.PolicySpec(), gpus_per_node=8, replicas=1, first_replica=0, seed=3,
        horizon=math.inf, record_events=False, check_invariants=True, threads=1, max_events=0,
    )  # fmt: skip
    assert raw["jobs"]["wall"].tolist() == [4080.0]
    public = ace.simulate(
        ace.Job(8, 3600.0, 600.0, init=law, save=law, load=law),
        failures=never,
        fleet=ace.Fleet(1),
        policy=ace.Policy(),
        causes=[ace.Cause("any", 1.0)],
        seed=3,
        check_invariants=True,
    )
    assert public.jobs.tobytes() == raw["jobs"].tobytes()


def test_a_spec_keeps_its_fields_and_refuses_unknown_ones() -> None:
    spec = _core.FleetSpec(nodes=4, repair=2)
    spec.spares = 1
    assert (spec.nodes, spec.spares, spec.repair, spec.node_failures) == (4, 1, 2, -1)
    with pytest.raises(TypeError, match=r"FleetSpec\.spare: no such field"):
        _core.FleetSpec(spare=1)
    with pytest.raises(ValueError, match=r"RepairStageSpec\.duration: a law index or -1"):
        _core.RepairStageSpec(duration=-3)
    with pytest.raises(TypeError, match=r"PolicySpec\.place: expected a callable or None, got str"):
        _core.PolicySpec(place="first")


def test_the_stubs_type_every_bound_spec_field() -> None:
    """_core.pyi declares each spec class with exactly the fields the
    compiled module binds."""
    stubs = ast.parse((ROOT / "python" / "acesim" / "_core.pyi").read_text())
    declared = {
        node.name: {
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
        for node in stubs.body
        if isinstance(node, ast.ClassDef)
    }
    for name in SPECS:
        cls = getattr(_core, name)
        bound = {n for n in dir(cls) if isinstance(getattr(cls, n, None), property)}
        assert declared[name] == bound, name


def test_bindings_are_one_file_per_concept_and_read_no_spec_by_position() -> None:
    """module.cpp only calls the register_* functions; no binding reads a
    spec from a tuple or a dict."""
    module = (BINDINGS / "module.cpp").read_text()
    called = set(re.findall(r"acesim::bindings::(register_\w+)\(m\)", module))
    files = {p.stem for p in BINDINGS.glob("register_*.cpp")}
    assert files == called
    for path in BINDINGS.glob("*.cpp"):
        text = path.read_text()
        for pattern in ("cast<py::tuple>", "cast<py::dict>", "std::tuple<"):
            assert pattern not in text, f"{path.name}: {pattern}"
