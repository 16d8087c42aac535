"""The core's input, built once for :func:`acesim.simulate`,
:func:`acesim.batch_simulate` and :class:`acesim.FleetModel`: the fleet,
policy and causes as the core's bound spec classes (``_core.FleetSpec``,
``_core.PolicySpec``, ``_core.CauseSpec``, each by named field), the laws
they name as indices into one table of compiled distributions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from . import _core
from .compiled import CompiledPolicy
from .fleet import Cause, Fleet, NodeTrace
from .policy import BACKFILL_CODES, Policy, _placement
from .repair import Repair

#: A law's index in the run's table of compiled distributions (-1: None).
Index = Callable[[Any], int]

_NODE_CLOCKS = {"wall": _core.NodeClock.WALL, "busy": _core.NodeClock.BUSY}


class CoreModel(NamedTuple):
    """What the core runs besides the jobs: its fleet (None: replacements
    always available), policy (None: the defaults) and causes."""

    fleet: _core.FleetSpec | None
    policy: _core.PolicySpec | None
    causes: list[_core.CauseSpec]


def core_model(
    index: Index, fleet: Fleet | None, policy: Policy | None, causes: Sequence[Cause]
) -> CoreModel:
    """The core's fleet, policy and causes, their laws by ``index``."""
    return CoreModel(
        None if fleet is None else fleet_spec(fleet, index),
        None if policy is None else policy_spec(policy, index),
        [cause_spec(c, index) for c in causes],
    )


def cause_spec(cause: Cause, index: Index) -> _core.CauseSpec:
    """The core's spec of one cause."""
    return _core.CauseSpec(
        share=cause.share,
        detect=index(cause.detect),
        node_down=cause.node_down,
        nodes=cause.nodes,
        node_scope=cause.scope == "node",
        slowdown=cause.slowdown,
    )


def fleet_spec(fleet: Fleet, index: Index) -> _core.FleetSpec:
    """The core's spec of ``fleet``."""
    node_failures = fleet.node_failures
    trace = node_failures if isinstance(node_failures, NodeTrace) else None
    # A replayed trace drives the process; its model's mean feeds each
    # job's MTBF (and the lemon draws stay, though a trace is not rescaled).
    single = trace.model if trace is not None else node_failures
    exact = trace is not None and trace.exact_times
    repair = fleet.repair
    pipeline = repair if isinstance(repair, Repair) else None
    return _core.FleetSpec(
        nodes=fleet.nodes,
        spares=fleet.spares,
        repair=-1 if pipeline is not None else index(repair),
        node_failures=index(single),
        node_failure_laws=[] if trace is None else [index(law) for law in trace.laws],
        lemon_fraction=fleet.lemon_fraction,
        lemon_factor=fleet.lemon_factor,
        lend_spares=fleet.lend_spares,
        storage_bandwidth=fleet.storage_bandwidth or 0.0,
        stationary_start=fleet.node_start == "stationary",
        node_failure_times=exact,
        node_failure_reported=[index(law) for law in trace.reported] if exact and trace else [],
        node_clock=_NODE_CLOCKS[fleet.node_clock],
        rate_windows=[
            _core.RateWindow(start=start, end=end, factor=factor)
            for start, end, factor in fleet.rate_windows
        ],
        maintenance=[
            _core.MaintenanceWindow(start=start, duration=duration, nodes=list(nodes))
            for start, duration, nodes in fleet.maintenance
        ],
        repair_stages=[]
        if pipeline is None
        else [
            _core.RepairStageSpec(duration=index(s.duration), escalate=s.escalate, fix=s.fix)
            for s in pipeline.stages
        ],
        misdiagnosis=0.0 if pipeline is None else pipeline.misdiagnosis,
        cold_spares=fleet.cold_spares,
        cold_spare_delay=index(fleet.cold_spare_delay),
    )


def policy_spec(policy: Policy, index: Index) -> _core.PolicySpec:
    """The core's spec of ``policy``: its callbacks as they are (a compiled
    decision by address), its laws by ``index``."""
    q = policy.quarantine
    fn = policy.on_failure
    compiled = fn if isinstance(fn, CompiledPolicy) else None
    python = None if fn is None or isinstance(fn, CompiledPolicy) else fn
    return _core.PolicySpec(
        replacement=_core.Replacement(int(policy.replacement)),
        preemption=_core.Preemption(int(policy.preemption)),
        preemption_grace=policy.preemption_grace,
        quarantine=_core.QuarantineSpec()
        if q is None
        else _core.QuarantineSpec(
            enabled=True, failures=q.failures, window=q.window, duration=q.duration
        ),
        on_failure=python,
        compiled=0 if compiled is None else compiled.address,
        compiled_user_data=0 if compiled is None else compiled.user_data,
        place=None if policy.place is None else _placement(policy.place),
        replacement_delay=index(policy.replacement_delay),
        backfill=_core.Backfill(BACKFILL_CODES[policy.backfill]),
    )
