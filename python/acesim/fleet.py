"""The fleet: nodes with their own failure processes, repair, hot spares,
lemon nodes, and the taxonomy of failure causes.

>>> import acesim as ace
>>> fleet = ace.Fleet(64, spares=2, repair=ace.Exponential(ace.HOUR),
...                   node_failures=ace.Exponential(150 * ace.DAY))
>>> fleet.gpus
512
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._validation import finite, integer
from .distributions import Constant, Distribution, Exponential, Replay, as_distribution
from .repair import Repair
from .units import HOUR, MINUTE

__all__ = ["LLAMA3_CAUSES", "LLAMA3_INTERRUPTIONS", "Cause", "Fleet", "NodeTrace"]


@dataclass(frozen=True, init=False)
class Cause:
    """A failure cause: its ``share`` of failures, the ``detect`` latency from
    fault to detection (a crash is seen at once, a hang when the watchdog
    fires), whether the node goes to repair (``node_down``), and how many
    nodes one event takes (``nodes``: an aligned block, e.g. a switch or a
    rack; correlated failures)."""

    name: str
    share: float
    detect: Distribution
    node_down: bool
    nodes: int

    def __init__(
        self,
        name: str,
        share: float,
        detect: Distribution | float = 0.0,
        node_down: bool = True,
        nodes: int = 1,
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
    """A recorded node-failure trace (``res.trace`` of a fleet run) replayed
    as the fleet's node failure process: every node fails at exactly the
    recorded times. ``model`` is the law that produced the trace; the
    simulator reads only its mean (for each job's MTBF, the Young/Daly
    intervals and the analytic fields). Without it the mean of the recorded
    gaps stands in. With the same seed and the model, a run is reproduced
    bit for bit."""

    def __init__(
        self,
        trace: npt.NDArray[Any],
        nodes: int,
        replica: int = 0,
        model: Distribution | None = None,
    ) -> None:
        if not isinstance(trace, np.ndarray) or trace.dtype.names is None:
            raise TypeError("trace must be the structured array res.trace")
        for name in ("replica", "event", "origin", "source", "inter_failure"):
            if name not in trace.dtype.names:
                raise ValueError(f"trace lacks the field {name!r}")
        self.nodes = integer("nodes", nodes, minimum=1)
        self.replica = integer("replica", replica, minimum=0)
        rows = trace[(trace["replica"] == self.replica) & (trace["source"] == 1)]
        # One row per event (an event that hits several jobs has several rows).
        _, first = np.unique(rows["event"], return_index=True)
        rows = rows[np.sort(first)]
        self.laws: list[Distribution | None] = []
        for n in range(self.nodes):
            gaps = rows["inter_failure"][rows["origin"] == n]
            # After the recorded failures the node never fails again.
            self.laws.append(Replay(gaps) if gaps.size else None)
        if model is not None and not isinstance(model, Distribution):
            raise TypeError(f"model must be a Distribution or None, got {type(model).__name__}")
        if model is None:
            gaps = rows["inter_failure"]
            model = Exponential(float(gaps.mean())) if gaps.size and gaps.mean() > 0 else None
        self.model: Distribution | None = model

    @classmethod
    def from_gaps(
        cls,
        gaps: dict[int, Sequence[float]],
        nodes: int,
        model: Distribution | None = None,
    ) -> NodeTrace:
        """Failures placed by hand: ``gaps[n]`` lists node ``n``'s successive
        inter-failure draws in wall-clock seconds (the first from t = 0);
        nodes not named never fail. For small scenarios whose answer is
        worked out by hand.

        >>> trace = NodeTrace.from_gaps({0: [3600.0], 2: [60.0, 7200.0]}, nodes=3)
        >>> [law is None for law in trace.laws]
        [False, True, False]
        """
        nodes_ = integer("nodes", nodes, minimum=1)
        if not isinstance(gaps, dict):
            raise TypeError(f"gaps must be a dict of node -> gaps, got {type(gaps).__name__}")
        rows: list[tuple[int, int, int, int, float]] = []
        for node, node_gaps in gaps.items():
            n = integer("gaps node", node, minimum=0, maximum=nodes_ - 1)
            for gap in np.atleast_1d(np.asarray(node_gaps, dtype=np.float64)):
                if not gap >= 0:
                    raise ValueError(f"gaps[{n}] must be >= 0, got {gap!r}")
                rows.append((0, len(rows), n, 1, float(gap)))
        trace = np.array(
            rows,
            dtype=[
                ("replica", "<u4"),
                ("event", "<u4"),
                ("origin", "<i4"),
                ("source", "<u4"),
                ("inter_failure", "<f8"),
            ],
        )
        return cls(trace, nodes_, model=model)


@dataclass(frozen=True, init=False)
class Fleet:
    """``nodes`` nodes of ``gpus_per_node`` GPUs. ``spares`` healthy nodes are
    held back as hot spares for re-placement. ``repair`` is the repair-time
    law of a failed node (a lemon stays a lemon), or a :class:`Repair`
    pipeline of stages with escalation, fix and misdiagnosis
    probabilities. ``node_failures`` is each node's inter-failure law
    in wall-clock time (a renewal process per node, busy or idle), or a
    :class:`NodeTrace`; a ``lemon_fraction`` of the nodes fail
    ``lemon_factor`` times as often."""

    nodes: int
    gpus_per_node: int
    spares: int
    repair: Distribution | Repair
    node_failures: Distribution | NodeTrace | None
    lemon_fraction: float
    lemon_factor: float

    def __init__(
        self,
        nodes: int,
        gpus_per_node: int = 8,
        spares: int = 0,
        repair: Distribution | Repair | float | None = None,
        node_failures: Distribution | NodeTrace | None = None,
        lemon_fraction: float = 0.0,
        lemon_factor: float = 1.0,
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
    if isinstance(causes, Cause):
        return [causes]
    if isinstance(causes, str | bytes) or not isinstance(causes, Sequence | tuple):
        raise TypeError(f"causes must be a sequence of Cause, got {type(causes).__name__}")
    out = list(causes)
    if not out:
        raise ValueError("causes must not be empty (pass None for no taxonomy)")
    for i, c in enumerate(out):
        if not isinstance(c, Cause):
            raise TypeError(f"causes[{i}] must be a Cause, got {type(c).__name__}")
    if sum(c.share for c in out) <= 0:
        raise ValueError("causes: shares must not all be zero")
    return out
