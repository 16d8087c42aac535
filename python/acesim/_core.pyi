"""Type stubs of the compiled core (internal; use the acesim package)."""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

class DistKind:
    Constant: DistKind
    Exponential: DistKind
    Weibull: DistKind
    LogNormal: DistKind
    Gamma: DistKind
    Mixture: DistKind
    Empirical: DistKind
    BlockBootstrap: DistKind
    Replay: DistKind
    ScaleAware: DistKind

class Distribution:
    @staticmethod
    def constant(value: float) -> Distribution: ...
    @staticmethod
    def exponential(mean: float) -> Distribution: ...
    @staticmethod
    def weibull(shape: float, scale: float) -> Distribution: ...
    @staticmethod
    def lognormal(mu: float, sigma: float) -> Distribution: ...
    @staticmethod
    def gamma(shape: float, scale: float) -> Distribution: ...
    @staticmethod
    def mixture(weights: list[float], components: list[Distribution]) -> Distribution: ...
    @staticmethod
    def empirical(samples: npt.NDArray[np.float64]) -> Distribution: ...
    @staticmethod
    def block_bootstrap(sequence: npt.NDArray[np.float64], block: int) -> Distribution: ...
    @staticmethod
    def replay(times: npt.NDArray[np.float64]) -> Distribution: ...
    @staticmethod
    def scale_aware(base: Distribution, ref_gpus: float, exponent: float) -> Distribution: ...
    def mean(self, gpus: float) -> float: ...
    def forward_recurrence_mean(self, gpus: float) -> float: ...
    @property
    def has_replay(self) -> bool: ...
    @property
    def kind(self) -> DistKind: ...
    @property
    def value_key(self) -> bytes: ...
    @property
    def scale_dependent(self) -> bool: ...
    @property
    def node_count(self) -> int: ...

def sample(
    dist: Distribution,
    count: int,
    seed: int,
    stream: int,
    replica: int,
    first: int,
    gpus: float,
    threads: int,
    device: str,
) -> npt.NDArray[np.float64]: ...
def sample_forward_recurrence(
    dist: Distribution,
    count: int,
    seed: int,
    stream: int,
    replica: int,
    first: int,
    gpus: float,
    threads: int,
    device: str,
) -> npt.NDArray[np.float64]: ...
def philox4x32_10(counter: list[int], key: list[int]) -> list[int]: ...
def uniform_open(bits: int) -> float: ...
def stream_id(kind: int, entity: int, purpose: int) -> int: ...
def cuda_available() -> bool: ...
def cuda_built() -> bool: ...

class IntervalRule:
    def __int__(self) -> int: ...
    FIXED: IntervalRule
    YOUNG: IntervalRule
    DALY: IntervalRule
    ADAPTIVE: IntervalRule

class FailureView:
    """What a failure policy sees of one failure (read-only)."""

    time: float
    fault_time: float
    progress: float
    work: float
    lost_work: float
    repair_remaining: float
    replica: int
    job: int
    gpus: int
    priority: int
    failures: int
    cause: int
    nodes_held: int
    nodes_needed: int
    free_nodes: int
    spare_nodes: int
    down_nodes: int
    quarantined_nodes: int
    preemptible_nodes: int

class PlacementView:
    """What a placement callback sees of one start."""

    time: float
    replica: int
    job: int
    gpus: int
    priority: int
    nodes_needed: int
    gpus_per_node: int
    recovering: bool
    node_failures: npt.NDArray[np.uint32]
    since_failure: npt.NDArray[np.float64]

class EventKind:
    SUBMIT: EventKind
    START_BEGIN: EventKind
    COMPUTE_BEGIN: EventKind
    CHECKPOINT_BEGIN: EventKind
    CHECKPOINT_END: EventKind
    FAILURE: EventKind
    DETECTED: EventKind
    DONE: EventKind
    HORIZON: EventKind
    PREEMPTED: EventKind
    WAITING: EventKind
    MAINTENANCE: EventKind
    UNPLACEABLE: EventKind
    TIME_LIMIT: EventKind
    CHECKPOINT_DURABLE: EventKind
    SHRINK: EventKind
    GROW: EventKind

class JobStatus:
    def __int__(self) -> int: ...
    DONE: JobStatus
    RUNNING: JobStatus
    QUEUED: JobStatus
    NOT_SUBMITTED: JobStatus
    UNPLACEABLE: JobStatus

MAX_NESTING: int

class Replacement:
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    SPARES: Replacement
    WAIT_REPAIR: Replacement
    PREEMPT_LOWER: Replacement
    REQUEUE: Replacement

class Preemption:
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    IMMEDIATE: Preemption
    CHECKPOINT_AWARE: Preemption

class Backfill:
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    EASY: Backfill
    GREEDY: Backfill

class NodeClock:
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    WALL: NodeClock
    BUSY: NodeClock

# The specs a run takes, by named field (a law field: an index into the
# run's distributions, -1: none). Their keyword constructors set any of
# their fields; the others keep the core's defaults.

class QuarantineSpec:
    enabled: bool
    failures: int
    window: float
    duration: float
    def __init__(
        self,
        *,
        enabled: bool = ...,
        failures: int = ...,
        window: float = ...,
        duration: float = ...,
    ) -> None: ...

class PolicySpec:
    replacement: Replacement
    preemption: Preemption
    preemption_grace: float
    quarantine: QuarantineSpec
    on_failure: Callable[[FailureView], Any] | None
    place: Callable[[PlacementView, npt.NDArray[np.uint32]], Any] | None
    compiled: int
    compiled_user_data: int
    replacement_delay: int
    backfill: Backfill
    def __init__(
        self,
        *,
        replacement: Replacement = ...,
        preemption: Preemption = ...,
        preemption_grace: float = ...,
        quarantine: QuarantineSpec = ...,
        on_failure: Callable[[FailureView], Any] | None = ...,
        place: Callable[[PlacementView, npt.NDArray[np.uint32]], Any] | None = ...,
        compiled: int = ...,
        compiled_user_data: int = ...,
        replacement_delay: int = ...,
        backfill: Backfill = ...,
    ) -> None: ...

class CauseSpec:
    share: float
    detect: int
    node_down: bool
    nodes: int
    node_scope: bool
    slowdown: float
    def __init__(
        self,
        *,
        share: float = ...,
        detect: int = ...,
        node_down: bool = ...,
        nodes: int = ...,
        node_scope: bool = ...,
        slowdown: float = ...,
    ) -> None: ...

class CheckpointTierSpec:
    interval: float
    save: int
    load: int
    replication: int
    def __init__(
        self, *, interval: float = ..., save: int = ..., load: int = ..., replication: int = ...
    ) -> None: ...

class RateWindow:
    start: float
    end: float
    factor: float
    def __init__(self, *, start: float = ..., end: float = ..., factor: float = ...) -> None: ...

class MaintenanceWindow:
    start: float
    duration: float
    nodes: list[int]
    def __init__(
        self, *, start: float = ..., duration: float = ..., nodes: list[int] = ...
    ) -> None: ...

class RepairStageSpec:
    duration: int
    escalate: float
    fix: float
    def __init__(self, *, duration: int = ..., escalate: float = ..., fix: float = ...) -> None: ...

class FleetSpec:
    nodes: int
    spares: int
    repair: int
    node_failures: int
    node_failure_laws: list[int]
    lemon_fraction: float
    lemon_factor: float
    stationary_start: bool
    node_failure_times: bool
    node_failure_reported: list[int]
    node_clock: NodeClock
    rate_windows: list[RateWindow]
    maintenance: list[MaintenanceWindow]
    repair_stages: list[RepairStageSpec]
    misdiagnosis: float
    cold_spares: int
    cold_spare_delay: int
    lend_spares: bool
    storage_bandwidth: float
    def __init__(
        self,
        *,
        nodes: int = ...,
        spares: int = ...,
        repair: int = ...,
        node_failures: int = ...,
        node_failure_laws: list[int] = ...,
        lemon_fraction: float = ...,
        lemon_factor: float = ...,
        stationary_start: bool = ...,
        node_failure_times: bool = ...,
        node_failure_reported: list[int] = ...,
        node_clock: NodeClock = ...,
        rate_windows: list[RateWindow] = ...,
        maintenance: list[MaintenanceWindow] = ...,
        repair_stages: list[RepairStageSpec] = ...,
        misdiagnosis: float = ...,
        cold_spares: int = ...,
        cold_spare_delay: int = ...,
        lend_spares: bool = ...,
        storage_bandwidth: float = ...,
    ) -> None: ...

class JobColumns:
    """A JobArray's columns by name (init, save, load: a shared index or a column)."""

    gpus: npt.NDArray[Any] | None
    work: npt.NDArray[Any] | None
    checkpoint_interval: npt.NDArray[Any] | None
    rule: npt.NDArray[Any] | None
    init: npt.NDArray[Any] | int | None
    save: npt.NDArray[Any] | int | None
    load: npt.NDArray[Any] | int | None
    submit: npt.NDArray[Any] | None
    priority: npt.NDArray[Any] | None
    def __init__(
        self,
        *,
        gpus: npt.NDArray[Any] = ...,
        work: npt.NDArray[Any] = ...,
        checkpoint_interval: npt.NDArray[Any] = ...,
        rule: npt.NDArray[Any] = ...,
        init: npt.NDArray[Any] | int = ...,
        save: npt.NDArray[Any] | int = ...,
        load: npt.NDArray[Any] | int = ...,
        submit: npt.NDArray[Any] = ...,
        priority: npt.NDArray[Any] = ...,
    ) -> None: ...

class JobOptionColumns:
    """Per-job checkpoint levels and elastic options by name (one value per job)."""

    persist: npt.NDArray[np.int64] | None
    tier_first: npt.NDArray[np.uint32] | None
    tier_count: npt.NDArray[np.uint32] | None
    tiers: list[CheckpointTierSpec]
    min_gpus: npt.NDArray[np.uint32] | None
    reconfigure: npt.NDArray[np.int64] | None
    scaling: npt.NDArray[np.float64] | None
    checkpoint_bytes: npt.NDArray[np.float64] | None
    def __init__(
        self,
        *,
        persist: npt.NDArray[np.int64] = ...,
        tier_first: npt.NDArray[np.uint32] = ...,
        tier_count: npt.NDArray[np.uint32] = ...,
        tiers: list[CheckpointTierSpec] = ...,
        min_gpus: npt.NDArray[np.uint32] = ...,
        reconfigure: npt.NDArray[np.int64] = ...,
        scaling: npt.NDArray[np.float64] = ...,
        checkpoint_bytes: npt.NDArray[np.float64] = ...,
    ) -> None: ...

def simulate(
    distributions: list[Distribution],
    jobs: bytes | JobColumns,
    job_failures: int | list[int],
    causes: list[CauseSpec],
    fleet: FleetSpec | None,
    policy: PolicySpec | None,
    *,
    gpus_per_node: int,
    replicas: int,
    first_replica: int,
    seed: int,
    horizon: float,
    record_events: bool,
    check_invariants: bool,
    threads: int,
    max_events: int,
    time_limit: npt.NDArray[np.float64] | None = None,
    job_options: JobOptionColumns | None = None,
    max_stalled_failures: int = 10_000,
) -> dict[str, npt.NDArray[Any]]: ...
def young_interval(checkpoint_cost: Any, mtbf: Any) -> Any: ...
def daly_interval(checkpoint_cost: Any, mtbf: Any) -> Any: ...
def expected_wall_exponential(
    mtbf: Any, work: Any, checkpoint_interval: Any, checkpoint_cost: Any, restart_cost: Any
) -> Any: ...
def expected_ettr_exponential(
    mtbf: Any, work: Any, checkpoint_interval: Any, checkpoint_cost: Any, restart_cost: Any
) -> Any: ...
def meta_expected_ettr(
    nodes: Any,
    failures_per_node_second: Any,
    restart_overhead: Any,
    checkpoint_interval: Any,
    checkpoint_write: Any,
) -> Any: ...
def simulate_batch(
    distributions: list[Distribution],
    jobs: bytes | JobColumns,
    job_failures: int | list[int],
    causes: list[CauseSpec],
    *,
    gpus_per_node: int,
    replicas: int,
    first_replica: int,
    seed: int,
    horizon: float,
    threads: int,
    max_events: int,
    device: str,
    job_options: JobOptionColumns | None = None,
    max_stalled_failures: int = 10_000,
) -> npt.NDArray[Any]: ...

class ModelEvent:
    """Something the model reports to the scheduler (read-only)."""

    time: float
    kind: int
    job: int
    cause: int
    fault_time: float
    nodes: list[int]
    progress: float
    durable: bool
    held: list[int]

class FleetModel:
    def __init__(
        self,
        distributions: list[Distribution],
        fleet: FleetSpec | None,
        causes: list[CauseSpec],
        job_failures: int,
        policy: PolicySpec | None,
        *,
        gpus_per_node: int,
        seed: int,
        replica: int,
        horizon: float,
        max_events: int,
        check_invariants: bool,
        record_events: bool,
        report_checkpoints: bool,
        max_stalled_failures: int = 10_000,
    ) -> None: ...
    def add_distribution(self, distribution: Distribution) -> int: ...
    def submit(
        self,
        *,
        gpus: int,
        work: float,
        checkpoint_interval: float,
        rule: int,
        init: int,
        save: int,
        load: int,
        priority: int,
        persist: int,
        tiers: list[CheckpointTierSpec],
        min_gpus: int,
        reconfigure: int,
        scaling: float,
        checkpoint_bytes: float,
    ) -> int: ...
    def start(self, job: int, nodes: list[int]) -> None: ...
    def can_start(self, job: int, nodes: list[int]) -> bool: ...
    def stop(self, job: int, for_job: int) -> None: ...
    def resize(self, job: int, nodes: list[int]) -> None: ...
    def advance(self, until: float, whole_instant: bool = True) -> list[ModelEvent]: ...
    @property
    def now(self) -> float: ...
    def peek(self) -> float: ...
    @property
    def jobs(self) -> int: ...
    @property
    def nodes(self) -> int: ...
    def free_nodes(self) -> list[int]: ...
    def spare_nodes(self) -> list[int]: ...
    def state(self, job: int) -> int: ...
    def nodes_of(self, job: int) -> list[int]: ...
    def node_states(self) -> npt.NDArray[np.uint8]: ...
    def down_nodes(self) -> list[int]: ...
    def running(self) -> list[int]: ...
    def waiting(self) -> list[int]: ...
    def queued(self) -> list[int]: ...
    def job_nodes(self, job: int) -> int: ...
    @property
    def logged(self) -> int: ...
    def events_since(self, first: int) -> npt.NDArray[Any]: ...
    def close(self) -> dict[str, npt.NDArray[Any]]: ...

JOB_ROW_BYTES: int
JOB_SPEC_FORMAT: str
REPLICA_BYTES: int
