"""The fleet: nodes with their own failure processes, repair, hot spares,
lemon nodes, and the taxonomy of failure causes.

>>> import acesim as ace
>>> fleet = ace.Fleet(64, spares=2, repair=ace.Exponential(ace.HOUR),
...                   node_failures=ace.Exponential(150 * ace.DAY))
>>> fleet.gpus
512
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._validation import (
    finite,
    integer,
    positive,
    real,
    real_array,
    seconds,
    sequence_of,
    triple,
    windows_of,
)
from .distributions import (
    Constant,
    Distribution,
    Exponential,
    Replay,
    as_distribution,
    scipy_to_law,
)
from .repair import Repair
from .units import HOUR, MINUTE

__all__ = ["LLAMA3_CAUSES", "LLAMA3_INTERRUPTIONS", "Cause", "Fleet", "NodeTrace"]


#: What a failure destroys (Cause's ``scope``).
CAUSE_SCOPES = ("process", "node")


@dataclass(frozen=True, init=False)
class Cause:
    """A failure cause: its ``share`` of failures, the ``detect`` latency from
    fault to detection (a crash is seen at once, a hang when the watchdog
    fires), whether the node goes to repair (``node_down``), and how many
    nodes one event takes (``nodes``: an aligned block, e.g. a switch or a
    rack; correlated failures).

    ``scope`` says what the failure destroys: ``"process"`` (the job's
    processes die, its nodes are fine: every :class:`~acesim.CheckpointTier`
    survives) or ``"node"`` (it takes the job's nodes in its block: a tier
    survives only if it has copies on more nodes than that). The default
    follows ``node_down``: ``"node"`` when the node goes to repair, else
    ``"process"``.

    ``slowdown`` in [0, 1) makes it a slow (gray) failure: from the fault
    until its detection (``detect``) the job keeps running at that share of
    its speed (checkpoints included); that share of the time is progress,
    the rest counts as ``detection``; at detection it is handled as a
    failure (rolled back to the newest checkpoint that survives it). ``0``
    (the default): no progress until detection (fail-stop)."""

    name: str
    share: float
    detect: Distribution
    node_down: bool
    nodes: int
    scope: str
    slowdown: float

    def __init__(
        self,
        name: str,
        share: float,
        detect: Distribution | float = 0.0,
        node_down: bool = True,
        nodes: int = 1,
        scope: str | None = None,
        slowdown: float = 0.0,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        share_ = finite("share", share)
        if share_ < 0:
            raise ValueError(f"share must be >= 0, got {share_!r}")
        if not isinstance(node_down, bool | np.bool_):
            raise TypeError(f"node_down must be a bool, got {type(node_down).__name__}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "share", share_)
        object.__setattr__(self, "detect", as_distribution("detect", detect))
        object.__setattr__(self, "node_down", bool(node_down))
        object.__setattr__(self, "nodes", integer("nodes", nodes, minimum=1, maximum=2**24))
        if scope is None:
            scope = "node" if node_down else "process"
        if scope not in CAUSE_SCOPES:
            raise ValueError(f"scope must be one of {CAUSE_SCOPES} or None, got {scope!r}")
        object.__setattr__(self, "scope", scope)
        slow = finite("slowdown", slowdown)
        if not 0.0 <= slow < 1.0:
            raise ValueError(f"slowdown must be in [0, 1), got {slow!r}")
        object.__setattr__(self, "slowdown", slow)


#: Llama 3 405B pre-training, 54 days on 16,384 H100 GPUs: root causes of the
#: 419 unexpected interruptions (Table 5 of "The Llama 3 Herd of Models",
#: arXiv:2407.21783), as (component, category, count). The paper's
#: percentage column does not add up; the counts do.
LLAMA3_INTERRUPTIONS: tuple[tuple[str, str, int], ...] = (
    ("Faulty GPU", "GPU", 148),
    ("GPU HBM3 Memory", "GPU", 72),
    ("Software Bug", "Dependency", 54),
    ("Network Switch/Cable", "Network", 35),
    ("Host Maintenance", "Unplanned Maintenance", 32),
    ("GPU SRAM Memory", "GPU", 19),
    ("GPU System Processor", "GPU", 17),
    ("NIC", "Host", 7),
    ("NCCL Watchdog Timeouts", "Unknown", 7),
    ("Silent Data Corruption", "GPU", 6),
    ("GPU Thermal Interface + Sensor", "GPU", 6),
    ("SSD", "Host", 3),
    ("Power Supply", "Host", 3),
    ("Server Chassis", "Host", 2),
    ("IO Expansion Board", "Host", 2),
    ("Dependency", "Dependency", 2),
    ("CPU", "Host", 2),
    ("System Memory", "Host", 2),
)

# Detection latencies and repair behaviour are modelling assumptions (the
# table gives counts only): hardware faults that crash the process are seen
# within about a minute; hangs only when the collective watchdog fires
# (10 minutes, PyTorch's default NCCL timeout); silent data corruption is
# found late (an hour); software faults restart in place (no node repair).
_CRASH = Constant(1 * MINUTE)
_HANG = Constant(10 * MINUTE)
_SOFTWARE = Constant(10.0)
_SILENT = Constant(1 * HOUR)


def _llama3_cause(component: str, category: str, count: int) -> Cause:
    if category == "Dependency":
        return Cause(component, count, detect=_SOFTWARE, node_down=False)
    if component == "NCCL Watchdog Timeouts":
        return Cause(component, count, detect=_HANG, node_down=False)
    if component == "Network Switch/Cable":
        return Cause(component, count, detect=_HANG, node_down=True)
    if component == "Silent Data Corruption":
        return Cause(component, count, detect=_SILENT, node_down=True)
    if component == "Host Maintenance":
        return Cause(component, count, detect=Constant(0.0), node_down=True)
    return Cause(component, count, detect=_CRASH, node_down=True)


#: :class:`Cause` objects with Llama 3's Table 5 counts as shares.
LLAMA3_CAUSES: tuple[Cause, ...] = tuple(_llama3_cause(*row) for row in LLAMA3_INTERRUPTIONS)


class NodeTrace:
    """A node-failure trace replayed as the fleet's node failure process.

    ``NodeTrace(res.trace, nodes)`` replays a recorded run: every node fails
    at exactly the recorded wall-clock times (a recorded failure that falls
    while the node is out of service under another policy is skipped: a node
    out of service cannot fail). ``model`` is the law that produced the
    trace; the simulator reads only its mean (for each job's MTBF, the
    Young/Daly intervals and the analytic fields). Without it the mean of
    the recorded gaps stands in. With the same seed and the model, a run is
    reproduced bit for bit.

    :meth:`from_times` places failures at given times; :meth:`from_gaps`
    gives each node's successive inter-failure draws instead (each from the
    moment its process restarts: t = 0, then its return to service).
    """

    #: Per node: its failure times (``exact_times``) or its inter-failure
    #: draws, as a Replay; None: the node never fails.
    laws: list[Distribution | None]
    #: True: the laws hold absolute failure times; False: inter-failure draws.
    exact_times: bool
    #: With exact times: the inter-failure values each failure reports in
    #: the trace (the recorded draws; by default the gaps between the times).
    reported: list[Distribution | None]

    def __init__(
        self,
        trace: npt.NDArray[Any],
        nodes: int,
        replica: int = 0,
        model: Distribution | None = None,
    ) -> None:
        if not isinstance(trace, np.ndarray) or trace.dtype.names is None:
            raise TypeError("trace must be the structured array res.trace")
        for name in ("replica", "event", "origin", "source", "time"):
            if name not in trace.dtype.names:
                raise ValueError(f"trace lacks the field {name!r}")
        nodes_ = integer("nodes", nodes, minimum=1)
        self.replica = integer("replica", replica, minimum=0)
        rows = trace[(trace["replica"] == self.replica) & (trace["source"] == 1)]
        # One row per event (an event that hits several jobs has several rows).
        _, first = np.unique(rows["event"], return_index=True)
        rows = rows[np.sort(first)]
        times = {n: rows["time"][rows["origin"] == n] for n in range(nodes_)}
        draws = {n: rows["inter_failure"][rows["origin"] == n] for n in range(nodes_)}
        self._set(nodes_, times, model, exact_times=True, draws=draws)

    def _set(
        self,
        nodes: int,
        series: dict[int, npt.NDArray[np.float64]],
        model: Distribution | None,
        exact_times: bool,
        draws: dict[int, npt.NDArray[np.float64]] | None = None,
    ) -> None:
        self.nodes = nodes
        self.exact_times = exact_times
        self.laws = []
        self.reported = []
        gaps_all = []
        for n in range(nodes):
            values = np.asarray(series.get(n, ()), dtype=np.float64)
            with np.errstate(invalid="ignore"):
                gaps = np.diff(values, prepend=0.0) if exact_times else values
            # A time at inf: the node fails no more (inf - inf is a gap of inf).
            gaps = np.where(np.isnan(gaps), math.inf, gaps)
            if draws is not None:
                gaps = np.asarray(draws.get(n, ()), dtype=np.float64)
            gaps_all.append(gaps)
            # After the last one the node never fails again.
            self.laws.append(Replay(values) if values.size else None)
            self.reported.append(Replay(gaps) if exact_times and gaps.size else None)
        model = scipy_to_law("model", model)
        if model is not None and not isinstance(model, Distribution):
            raise TypeError(f"model must be a Distribution or None, got {type(model).__name__}")
        if model is None:
            gaps = np.concatenate(gaps_all) if gaps_all else np.empty(0)
            gaps = gaps[np.isfinite(gaps)]  # an inf gap: a node that fails no more
            model = Exponential(float(gaps.mean())) if gaps.size and gaps.mean() > 0 else None
        self.model: Distribution | None = model

    @classmethod
    def _by_node(
        cls, what: str, values: dict[int, Sequence[float]], nodes: int
    ) -> tuple[int, dict[int, npt.NDArray[np.float64]]]:
        nodes_ = integer("nodes", nodes, minimum=1)
        if not isinstance(values, dict):
            raise TypeError(f"{what} must be a dict of node -> {what}, got {type(values).__name__}")
        out = {}
        for node, node_values in values.items():
            n = integer(f"{what} node", node, minimum=0, maximum=nodes_ - 1)
            found = real_array(f"{what}[{n}]", node_values)
            arr = None if found is None else np.atleast_1d(np.asarray(found, dtype=np.float64))
            if arr is None or arr.ndim != 1 or not np.all(arr >= 0) or np.any(np.isnan(arr)):
                raise ValueError(f"{what}[{n}] must be a sequence of numbers >= 0")
            out[n] = arr
        return nodes_, out

    @classmethod
    def from_times(
        cls,
        times: dict[int, Sequence[float]],
        nodes: int,
        model: Distribution | None = None,
    ) -> NodeTrace:
        """Failures placed by hand at wall-clock times: ``times[n]`` lists
        node ``n``'s failure times (ascending; ``math.inf``: no failure
        from there on); nodes not named never fail. The default ``model`` is
        exponential with the mean of the finite gaps between the times.

        >>> trace = NodeTrace.from_times({1: [3600.0, 9000.0]}, nodes=2)
        >>> [law is None for law in trace.laws]
        [True, False]
        """
        nodes_, series = cls._by_node("times", times, nodes)
        for n, t in series.items():
            with np.errstate(invalid="ignore"):  # inf - inf: two times at inf, ascending
                descending = np.any(np.diff(t) < 0)
            if descending:
                raise ValueError(f"times[{n}] must be ascending")
        trace = cls.__new__(cls)
        trace.replica = 0
        trace._set(nodes_, series, model, exact_times=True)
        return trace

    @classmethod
    def from_gaps(
        cls,
        gaps: dict[int, Sequence[float]],
        nodes: int,
        model: Distribution | None = None,
    ) -> NodeTrace:
        """Failures placed by hand as draws: ``gaps[n]`` lists node ``n``'s
        successive inter-failure draws in wall-clock seconds, the first from
        t = 0 and each next from the node's return to service (a node out of
        service has no failure process); nodes not named never fail.

        >>> trace = NodeTrace.from_gaps({0: [3600.0], 2: [60.0, 7200.0]}, nodes=3)
        >>> [law is None for law in trace.laws]
        [False, True, False]
        """
        nodes_, series = cls._by_node("gaps", gaps, nodes)
        trace = cls.__new__(cls)
        trace.replica = 0
        trace._set(nodes_, series, model, exact_times=False)
        return trace


#: The clocks a node failure process may run on (``Fleet(node_clock=...)``).
NODE_CLOCKS = ("wall", "busy")


def _window_start(name: str, value: Any) -> float:
    start = finite(f"{name} start", value)
    if start < 0:
        raise ValueError(f"{name}: start must be >= 0, got {start!r}")
    return seconds(f"{name} start", start)


def _rate_windows(windows: Any) -> tuple[tuple[float, float, float], ...]:
    out = []
    for k, window in enumerate(windows_of("rate_windows", windows, "(start, end, factor)")):
        name = f"rate_windows[{k}]"
        start, end_, factor_ = triple(name, window, "(start, end, factor)")
        start = _window_start(name, start)
        end = real(f"{name} end", end_)
        if math.isnan(end) or not end > start:
            raise ValueError(f"{name}: end must be > start (math.inf for none), got {end!r}")
        factor = finite(f"{name} factor", factor_)
        if factor < 0:
            raise ValueError(f"{name}: factor must be >= 0, got {factor!r}")
        out.append((start, end, factor))
    return tuple(out)


def _maintenance(windows: Any, nodes: int) -> tuple[tuple[float, float, tuple[int, ...]], ...]:
    out = []
    spans: dict[int, list[tuple[float, float]]] = {}
    for k, window in enumerate(windows_of("maintenance", windows, "(start, duration, nodes)")):
        name = f"maintenance[{k}]"
        start_, duration_, which = triple(name, window, "(start, duration, nodes)")
        start = _window_start(name, start_)
        duration = finite(f"{name} duration", duration_)
        if duration <= 0:
            raise ValueError(f"{name}: duration must be > 0, got {duration!r}")
        seconds(f"{name} duration", duration)
        if isinstance(which, str) and which == "all":
            ids = tuple(range(nodes))
        elif isinstance(which, numbers.Integral) or isinstance(which, str | bytes):
            raise TypeError(
                f"{name}: nodes must be a sequence of node ids or 'all' (for one node pass "
                f"[{which!r}], for the first n nodes range(n)), got {type(which).__name__}"
            )
        else:
            try:
                items = (
                    list(np.asarray(which).ravel())
                    if isinstance(which, np.ndarray)
                    else list(which)
                )
            except TypeError:
                raise TypeError(
                    f"{name}: nodes must be a sequence of node ids or 'all', "
                    f"got {type(which).__name__}"
                ) from None
            ids = tuple(integer(f"{name} node", n, minimum=0, maximum=nodes - 1) for n in items)
            if not ids:
                raise ValueError(f"{name}: nodes must not be empty")
        for n in ids:
            spans.setdefault(n, []).append((start, start + duration))
        out.append((start, duration, ids))
    for n, node_spans in spans.items():
        node_spans.sort()
        for (_, end), (start, _) in itertools.pairwise(node_spans):
            if start < end:
                raise ValueError(
                    f"maintenance: windows of node {n} overlap (or list it twice); "
                    "merge them into one window"
                )
    return tuple(out)


@dataclass(frozen=True, init=False)
class Fleet:
    """``nodes`` nodes of ``gpus_per_node`` GPUs. ``spares`` healthy nodes are
    held back as hot spares for re-placement. ``repair`` is the repair-time
    law of a failed node (a lemon stays a lemon), or a :class:`Repair`
    pipeline of stages with escalation, fix and misdiagnosis
    probabilities. ``node_failures`` is each node's inter-failure law
    in wall-clock time (a renewal process per node, busy or idle), or a
    :class:`NodeTrace`; a ``lemon_fraction`` of the nodes fail
    ``lemon_factor`` times as often.

    Node failure processes (:ref:`model-failures`):

    - A node out of service (under repair, quarantined) has no failure
      process; when it returns its process restarts with a fresh draw from
      the return time (repaired as good as new).
    - ``node_start="stationary"`` (the default): a fleet is not brand new at
      t = 0, so each node's first gap is drawn from the forward-recurrence
      (equilibrium) law of its inter-failure law, density sf(x) / mean; later
      gaps from the law itself. With a bursty law (Weibull shape < 1) a
      ``"fresh"`` start instead makes every node's hazard high at t = 0 and
      the first days see far more failures than the nominal rate.
      A :class:`NodeTrace` or a ``Replay`` law always replays exactly.
    - Common random numbers: every node draws the same sequence from its
      streams under every policy. Its failure times are the same wall-clock
      trace under every policy except where decisions change when it is out
      of service: quarantine, and the repairs that job-level failures blamed
      on it start (which depend on placement).

    ``node_clock`` says what drives a node's failure process: ``"wall"``
    (the default: wall-clock time, busy or idle) or ``"busy"`` (only while
    at least one job is placed on the node, whatever its phase: starting,
    computing, writing a checkpoint, in detection after a fault, or waiting
    for the rest of its nodes; the remaining time is paused while the node
    is idle and resumes when a job is placed on it). With ``"busy"`` a
    node's failure times depend on placement, so two policies no longer see
    the same wall-clock trace (the draws stay the same).

    ``rate_windows`` is a sequence of ``(start, end, factor)``: every node's
    failure rate is multiplied by ``factor`` over wall-clock ``[start,
    end)`` (``end`` may be ``math.inf``; a firmware regression from day 20
    to 35, infant mortality of a new rack). Exact by a change of time: a gap
    ``g`` drawn from the law is reached when the integral of the factor over
    the time the process runs (wall time, or busy time with
    ``node_clock="busy"``) since it (re)started equals ``g``. Overlapping
    windows multiply; ``factor=0`` means no failures in the window.
    Checkpoint rules (Young, Daly) and the row's ``mtbf`` use the nominal
    rate. A :class:`NodeTrace` of a recorded run replays its failure times
    as recorded, whatever the clock and windows.

    ``maintenance`` is a sequence of ``(start, duration, nodes)``: planned
    drains known in advance; ``nodes`` is a sequence of node ids (for the
    first n nodes pass ``range(n)``) or ``"all"``; a node's windows must not
    overlap. At ``start`` the nodes leave service for ``duration`` (no
    failures meanwhile, like repair; a node already out returns at the
    later of the two). A job placed on a drained node that is computing at
    ``start - S - P`` (``S`` its mean checkpoint write, ``P`` its mean
    ``persist``, 0 for synchronous checkpoints) ends its segment there and
    writes an extra checkpoint, which is durable by ``start`` when its write
    and its persist take no longer than their means (an asynchronous job
    computes while it persists); a regular checkpoint that ends by ``start``
    runs as usual. At ``start`` the job is stopped: compute since its last
    durable checkpoint (or a write still running, or a persist still in
    flight: a lost checkpoint) is lost. It counts a
    ``planned_interruptions`` (not a failure, no trace row) and recovers at
    once under the re-placement policy as after a failure (WAIT_REPAIR
    waits for the node's return; an ``on_failure`` callback is asked, with
    ``cause`` -1). Drained nodes stay open to placement until ``start``.
    ``maintenance_node_hours`` in the fleet rollup is the windows'
    node-hours up to the end of the simulated span (a node repaired during
    its window counts in both figures).

    Cold spares: ``cold_spares`` nodes are a second reserve, reachable only
    after an acquisition delay (borrowed from a lower tier, or provisioned)
    drawn from ``cold_spare_delay`` (a Distribution or seconds; required when
    ``cold_spares > 0``). They are counted in ``nodes``: the last ``spares``
    nodes start as hot spares and the ``cold_spares`` before them are the
    cold spares, so jobs can use ``nodes - spares - cold_spares`` nodes. A
    cold spare never serves a start from the queue. Like a hot spare it is a
    node of the fleet with its own failure process (with
    ``node_clock="busy"`` it runs only while a job is placed on the node:
    not while the cold spare is idle or in acquisition), its repairs,
    quarantine and maintenance windows.

    - A recovering job takes, all or nothing, hot spares first, then free
      nodes, then cold spares, and only then (PREEMPT_LOWER) victims' nodes.
      Each cold spare it takes is in acquisition for a draw of
      ``cold_spare_delay`` from that node's own stream (a purpose of its
      own: no other draw moves); the job keeps its other nodes and waits
      (``recovery_wait``) until every one has arrived. Any number of cold
      spares may be in acquisition at once.
    - A node that becomes available during the acquisition (a repaired node
      back, a node freed by another job, a hot spare refilled) is taken
      instead: the acquisition that would end last is cancelled and its node
      is an idle cold spare again (no use counted).
    - A cold spare that fails (or is quarantined, or drained for
      maintenance) during its acquisition leaves service; the acquisition is
      cancelled and the job looks for another node.
    - A cold spare is borrowed: once its job releases it (the job ends or
      moves on) or it returns from repair, it goes back to the cold reserve,
      never to the hot spares or the free pool, and the fleet's own nodes
      never become cold. (Hot spares are a count: any whole free node refills
      them.) While borrowed it is an ordinary node (GPUs a smaller job leaves
      free on it may serve other jobs).
    - Retirement: a job in the queue can never use the cold spares, a
      recovering job can; a job is closed as unplaceable when the nodes left
      that it may use are too few.
    - ``res.fleet["cold_spare_uses"]`` counts completed acquisitions.

    ``lend_spares``: with ``False`` (default) hot spares serve only
    re-placements after a failure, never a start from the queue, so a job
    may wait in the queue while spares sit idle. With ``True`` a start from
    the queue may take hot spares when the free nodes alone do not suffice
    (free nodes first, spares for the rest; counted in ``spare_uses``).
    Either way the spare pool refills first as nodes come free.

    ``storage_bandwidth`` (bytes per second, or ``None``): shared checkpoint
    storage. The durable checkpoint transfers of jobs with
    ``checkpoint_bytes`` (see :class:`acesim.Job`) share it equally while
    they overlap: a synchronous write, an asynchronous persist or a load from
    the durable checkpoint takes its law's draw (the fixed part) and then the
    transfer of the job's bytes at its share, so a save takes longer when
    many jobs write at once. ``res.jobs["contention"]`` and
    ``res.fleet["contention_gpu_hours"]`` report the time transfers took
    beyond their time alone on the storage.
    """

    nodes: int
    gpus_per_node: int
    spares: int
    repair: Distribution | Repair
    node_failures: Distribution | NodeTrace | None
    lemon_fraction: float
    lemon_factor: float
    node_start: str
    node_clock: str
    rate_windows: tuple[tuple[float, float, float], ...]
    maintenance: tuple[tuple[float, float, tuple[int, ...]], ...]
    cold_spares: int
    cold_spare_delay: Distribution | None
    lend_spares: bool
    storage_bandwidth: float | None

    def __init__(
        self,
        nodes: int,
        gpus_per_node: int = 8,
        spares: int = 0,
        repair: Distribution | Repair | float | None = None,
        node_failures: Distribution | NodeTrace | None = None,
        lemon_fraction: float = 0.0,
        lemon_factor: float = 1.0,
        node_start: str = "stationary",
        node_clock: str = "wall",
        rate_windows: Sequence[tuple[float, float, float]] = (),
        maintenance: Sequence[tuple[float, float, Any]] = (),
        cold_spares: int = 0,
        cold_spare_delay: Distribution | float | None = None,
        lend_spares: bool = False,
        storage_bandwidth: float | None = None,
    ) -> None:
        nodes_ = integer("nodes", nodes, minimum=1, maximum=2**24)
        object.__setattr__(self, "nodes", nodes_)
        object.__setattr__(
            self, "gpus_per_node", integer("gpus_per_node", gpus_per_node, minimum=1, maximum=2**16)
        )
        object.__setattr__(self, "spares", integer("spares", spares, minimum=0, maximum=nodes_ - 1))
        object.__setattr__(
            self,
            "repair",
            Exponential(HOUR)
            if repair is None
            else repair
            if isinstance(repair, Repair)
            else as_distribution("repair", repair),
        )
        node_failures = scipy_to_law("node_failures", node_failures)
        if isinstance(node_failures, NodeTrace):
            if node_failures.nodes != nodes_:
                raise ValueError(
                    f"node_failures: the trace has {node_failures.nodes} nodes, the fleet {nodes_}"
                )
        elif node_failures is not None and not isinstance(node_failures, Distribution):
            raise TypeError(
                "node_failures must be a Distribution, a NodeTrace or None, got "
                f"{type(node_failures).__name__}"
            )
        elif node_failures is not None and not node_failures.mean() > 0:
            raise ValueError("node_failures must have a mean > 0")
        object.__setattr__(self, "node_failures", node_failures)
        fraction = finite("lemon_fraction", lemon_fraction)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"lemon_fraction must be in [0, 1], got {fraction!r}")
        factor = finite("lemon_factor", lemon_factor)
        if factor <= 0:
            raise ValueError(f"lemon_factor must be > 0, got {factor!r}")
        object.__setattr__(self, "lemon_fraction", fraction)
        object.__setattr__(self, "lemon_factor", factor)
        if not isinstance(node_start, str):
            raise TypeError(f"node_start must be a string, got {type(node_start).__name__}")
        if node_start not in ("stationary", "fresh"):
            raise ValueError(f"node_start must be 'stationary' or 'fresh', got {node_start!r}")
        object.__setattr__(self, "node_start", node_start)
        if not isinstance(node_clock, str):
            raise TypeError(f"node_clock must be a string, got {type(node_clock).__name__}")
        if node_clock not in NODE_CLOCKS:
            raise ValueError(f"node_clock must be 'wall' or 'busy', got {node_clock!r}")
        object.__setattr__(self, "node_clock", node_clock)
        object.__setattr__(self, "rate_windows", _rate_windows(rate_windows))
        object.__setattr__(self, "maintenance", _maintenance(maintenance, nodes_))
        cold = integer("cold_spares", cold_spares, minimum=0, maximum=nodes_ - 1)
        if self.spares + cold >= nodes_:
            raise ValueError(
                "cold_spares: spares + cold_spares must be smaller than nodes "
                f"({self.spares} + {cold} >= {nodes_})"
            )
        delay = (
            None
            if cold_spare_delay is None
            else as_distribution("cold_spare_delay", cold_spare_delay)
        )
        if cold > 0 and delay is None:
            raise ValueError("cold_spare_delay is required when cold_spares > 0")
        if delay is not None and not 0.0 <= delay.mean() < math.inf:
            raise ValueError(f"cold_spare_delay must have a finite mean >= 0, got {delay.mean()!r}")
        object.__setattr__(self, "cold_spares", cold)
        object.__setattr__(self, "cold_spare_delay", delay)
        if not isinstance(lend_spares, bool | np.bool_):
            raise TypeError(f"lend_spares must be a bool, got {type(lend_spares).__name__}")
        object.__setattr__(self, "lend_spares", bool(lend_spares))
        object.__setattr__(
            self,
            "storage_bandwidth",
            None if storage_bandwidth is None else positive("storage_bandwidth", storage_bandwidth),
        )

    @property
    def gpus(self) -> int:
        """GPUs in the fleet, spares included."""
        return self.nodes * self.gpus_per_node

    def node_mttf(self) -> float:
        """Mean time between failures of one (non-lemon) node, in seconds."""
        if isinstance(self.node_failures, Distribution):
            return self.node_failures.mean()
        return float("inf")


def _cause_list(causes: Any) -> list[Cause]:
    if causes is None:
        return []
    out = sequence_of("causes", causes, Cause, empty=" (pass None for no taxonomy)")
    total = sum(c.share for c in out)
    if not math.isfinite(total):
        raise ValueError("causes: the shares add up beyond a float; scale them down")
    if total <= 0:
        raise ValueError("causes: shares must not all be zero")
    return out
