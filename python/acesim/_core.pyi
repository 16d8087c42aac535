"""Type stubs of the compiled core (internal; use the acesim package)."""

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

def simulate(
    distributions: list[Distribution],
    jobs: bytes | tuple[npt.NDArray[Any] | int, ...],
    job_failures: int | list[int],
    causes: list[tuple[float, int, bool, int, bool, float]],
    fleet: dict[str, Any] | None,
    policy: tuple[Any, ...] | None,
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
    checkpoint_levels: tuple[Any, ...] | None = None,
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
    jobs: bytes | tuple[npt.NDArray[Any] | int, ...],
    job_failures: int | list[int],
    causes: list[tuple[float, int, bool, int, bool, float]],
    gpus_per_node: int,
    replicas: int,
    first_replica: int,
    seed: int,
    horizon: float,
    threads: int,
    max_events: int,
    device: str,
    checkpoint_levels: tuple[Any, ...] | None = None,
    max_stalled_failures: int = 10_000,
) -> npt.NDArray[Any]: ...

class FleetModel:
    def __init__(
        self,
        distributions: list[Distribution],
        fleet: dict[str, Any] | None,
        causes: list[tuple[float, int, bool, int, bool, float]],
        job_failures: int,
        policy: tuple[Any, ...] | None,
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
        gpus: int,
        work: float,
        checkpoint_interval: float,
        rule: int,
        init: int,
        save: int,
        load: int,
        priority: int,
        persist: int,
        tiers: list[tuple[float, int, int, int]],
        min_gpus: int,
        reconfigure: int,
        scaling: float,
        checkpoint_bytes: float,
    ) -> int: ...
    def start(self, job: int, nodes: list[int]) -> None: ...
    def can_start(self, job: int, nodes: list[int]) -> bool: ...
    def stop(self, job: int, for_job: int) -> None: ...
    def resize(self, job: int, nodes: list[int]) -> None: ...
    def advance(
        self, until: float
    ) -> list[tuple[float, int, int, int, float, list[int], float, bool]]: ...
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
    @property
    def logged(self) -> int: ...
    def events_since(self, first: int) -> npt.NDArray[Any]: ...
    def close(self) -> dict[str, npt.NDArray[Any]]: ...

JOB_ROW_BYTES: int
JOB_SPEC_FORMAT: str
REPLICA_BYTES: int
