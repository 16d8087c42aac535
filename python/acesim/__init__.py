"""acesim: failure, checkpoint and recovery-policy simulation for large GPU
training fleets.

Durations are float64 seconds everywhere (:data:`MINUTE`, :data:`HOUR`,
:data:`DAY` help). Results are numpy structured arrays.
"""

from __future__ import annotations

from . import _core, exports, fit, history, plot, provenance, report, search, workloads
from . import _pickle as _pickle  # registers the pickle reducers
from ._beside import _load_beside as _load_beside  # pickles name these as acesim.*
from ._pickle import _rebuild_by_keywords as _rebuild_by_keywords
from ._pickle import _rebuild_node_trace as _rebuild_node_trace
from .analytic import (
    META_MTTF_1024_GPUS,
    daly_interval,
    expected_ettr_exponential,
    expected_wall_exponential,
    meta_expected_ettr,
    meta_scale_model,
    mttf,
    node_rate_model,
    young_interval,
)
from .checkpointing import (
    TwoLevelIntervals,
    async_checkpoint_cost,
    async_optimal_interval,
    expected_wall_async_exponential,
    expected_wall_two_level_exponential,
    two_level_optimal_intervals,
)
from .compiled import CompiledPolicy, get_include
from .distributions import (
    BlockBootstrap,
    Constant,
    Distribution,
    Empirical,
    Exponential,
    Gamma,
    LogNormal,
    Mixture,
    Never,
    Replay,
    ScaleAware,
    Weibull,
    from_scipy,
)
from .errors import NoProgressError, ReentrantCallError, TooFewReplicasError, UntrustedNameError
from .fleet import LLAMA3_CAUSES, LLAMA3_INTERRUPTIONS, Cause, Fleet, NodeTrace
from .fleet_model import Event, FleetModel, NodeState
from .job import CheckpointTier, IntervalRule, Job, JobArray
from .objectives import Cost
from .optimize import OptimalInterval, optimal_interval
from .policy import FailureView, PlacementView, Policy, Preemption, Quarantine, Replacement
from .regimes import gang
from .repair import Repair, RepairStage
from .scenario import Scenario, ScenarioError, dump_scenario, load_scenario
from .search import TuneResult, tune
from .sensitivity import SensitivityResult, sensitivity
from .simulation import (
    PURPOSES,
    STREAM_VERSION,
    BatchResult,
    EventKind,
    FailureSource,
    JobStatus,
    NodeEventKind,
    SimulationResult,
    batch_simulate,
    job_stream,
    simulate,
)
from .stats import Comparison, Difference, Estimate, SingleReplicaWarning, compare
from .sweep import SweepResult, sweep
from .units import DAY, HOUR, MINUTE, SECOND

__version__ = "0.1.0"


def cuda_available() -> bool:
    """Whether this build has the CUDA samplers and a CUDA device is usable."""
    return bool(_core.cuda_available())


def cuda_built() -> bool:
    """Whether this build includes the CUDA samplers (a device may still be absent)."""
    return bool(_core.cuda_built())


__all__ = [
    "DAY",
    "HOUR",
    "LLAMA3_CAUSES",
    "LLAMA3_INTERRUPTIONS",
    "META_MTTF_1024_GPUS",
    "MINUTE",
    "PURPOSES",
    "SECOND",
    "STREAM_VERSION",
    "BatchResult",
    "BlockBootstrap",
    "Cause",
    "CheckpointTier",
    "Comparison",
    "CompiledPolicy",
    "Constant",
    "Cost",
    "Difference",
    "Distribution",
    "Empirical",
    "Estimate",
    "Event",
    "EventKind",
    "Exponential",
    "FailureSource",
    "FailureView",
    "Fleet",
    "FleetModel",
    "Gamma",
    "IntervalRule",
    "Job",
    "JobArray",
    "JobStatus",
    "LogNormal",
    "Mixture",
    "Never",
    "NoProgressError",
    "NodeEventKind",
    "NodeState",
    "NodeTrace",
    "OptimalInterval",
    "PlacementView",
    "Policy",
    "Preemption",
    "Quarantine",
    "ReentrantCallError",
    "Repair",
    "RepairStage",
    "Replacement",
    "Replay",
    "ScaleAware",
    "Scenario",
    "ScenarioError",
    "SensitivityResult",
    "SimulationResult",
    "SingleReplicaWarning",
    "SweepResult",
    "TooFewReplicasError",
    "TuneResult",
    "TwoLevelIntervals",
    "UntrustedNameError",
    "Weibull",
    "async_checkpoint_cost",
    "async_optimal_interval",
    "batch_simulate",
    "compare",
    "cuda_available",
    "cuda_built",
    "daly_interval",
    "dump_scenario",
    "expected_ettr_exponential",
    "expected_wall_async_exponential",
    "expected_wall_exponential",
    "expected_wall_two_level_exponential",
    "exports",
    "fit",
    "from_scipy",
    "gang",
    "get_include",
    "history",
    "job_stream",
    "load_scenario",
    "meta_expected_ettr",
    "meta_scale_model",
    "mttf",
    "node_rate_model",
    "optimal_interval",
    "plot",
    "provenance",
    "report",
    "search",
    "sensitivity",
    "simulate",
    "sweep",
    "tune",
    "two_level_optimal_intervals",
    "workloads",
    "young_interval",
]
