"""Closed forms: Young/Daly intervals, expected ETTR under exponential
failures, Meta's first-order estimate and the scale-aware failure models.

All functions broadcast over numpy arrays; durations are seconds.

>>> import acesim as ace
>>> round(ace.mttf(ace.meta_scale_model(), 1024) / ace.HOUR, 2)
7.9
>>> round(ace.mttf(ace.node_rate_model(6.5e-3), 16384) / ace.HOUR, 2)
1.8
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from ._validation import integer, number_array, positive
from .distributions import Distribution, Exponential, ScaleAware, scipy_to_law
from .units import DAY, HOUR

__all__ = [
    "META_MTTF_1024_GPUS",
    "daly_interval",
    "expected_ettr_exponential",
    "expected_wall_exponential",
    "meta_expected_ettr",
    "meta_scale_model",
    "mttf",
    "node_rate_model",
    "young_interval",
]

#: Meta RSC (HPCA 2025): mean time to failure of a 1,024-GPU job.
META_MTTF_1024_GPUS: float = 7.9 * HOUR

Number = float | npt.NDArray[np.float64]


def _array(name: str, value: Any, *, allow_inf: bool = False, allow_zero: bool = False) -> Any:
    arr = number_array(name, value, allow_inf=allow_inf, allow_zero=allow_zero)
    return float(arr) if arr.ndim == 0 else arr


def _out(x: Any) -> Number:
    return float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=np.float64)


def _call(fn: Any, **arguments: Any) -> Number:
    """Calls a vectorized core function after checking that the arguments
    broadcast together (a ValueError naming them, not pybind11's error)."""
    try:
        np.broadcast_shapes(*(np.shape(v) for v in arguments.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arguments.items())
        raise ValueError(f"arguments do not broadcast together: {shapes}") from None
    return _out(fn(*arguments.values()))


def young_interval(checkpoint_cost: Number, mtbf: Number) -> Number:
    """Young (1974): tau* = sqrt(2 C M)."""
    c = _array("checkpoint_cost", checkpoint_cost, allow_zero=True)
    m = _array("mtbf", mtbf, allow_inf=True)
    return _call(_core.young_interval, checkpoint_cost=c, mtbf=m)


def daly_interval(checkpoint_cost: Number, mtbf: Number) -> Number:
    """Daly (2006): sqrt(2CM) (1 + sqrt(C/(2M))/3 + C/(18M)) - C for C < 2M, else M."""
    c = _array("checkpoint_cost", checkpoint_cost, allow_zero=True)
    m = _array("mtbf", mtbf, allow_inf=True)
    return _call(_core.daly_interval, checkpoint_cost=c, mtbf=m)


def expected_wall_exponential(
    mtbf: Number,
    work: Number,
    checkpoint_interval: Number,
    checkpoint_cost: Number,
    restart_cost: Number,
) -> Number:
    """Expected wall-clock of a job under exponential failures (rate l = 1/mtbf)
    that strike whenever it holds hardware, every start costing R:
    (e^(lR) - 1)/l + sum over segments s of e^(lR)(e^(l(s + C)) - 1)/l."""
    return _call(
        _core.expected_wall_exponential,
        mtbf=_array("mtbf", mtbf, allow_inf=True),
        work=_array("work", work),
        checkpoint_interval=_array("checkpoint_interval", checkpoint_interval),
        checkpoint_cost=_array("checkpoint_cost", checkpoint_cost, allow_zero=True),
        restart_cost=_array("restart_cost", restart_cost, allow_zero=True),
    )


def expected_ettr_exponential(
    mtbf: Number,
    work: Number,
    checkpoint_interval: Number,
    checkpoint_cost: Number,
    restart_cost: Number,
) -> Number:
    """work / :func:`expected_wall_exponential` (:ref:`model-closed-forms`)."""
    return _call(
        _core.expected_ettr_exponential,
        mtbf=_array("mtbf", mtbf, allow_inf=True),
        work=_array("work", work),
        checkpoint_interval=_array("checkpoint_interval", checkpoint_interval),
        checkpoint_cost=_array("checkpoint_cost", checkpoint_cost, allow_zero=True),
        restart_cost=_array("restart_cost", restart_cost, allow_zero=True),
    )


def meta_expected_ettr(
    gpus: Number,
    failures_per_node_day: Number,
    restart_overhead: Number,
    checkpoint_interval: Number,
    checkpoint_write: Number,
    gpus_per_node: int = 8,
) -> Number:
    """Meta's first-order estimate (RSC, HPCA 2025):
    E[ETTR] ~ (1 - N r_f (u0 + dt/2)) / (1 + w/dt) with N = gpus / gpus_per_node
    nodes, r_f failures per node-second, u0 the restart overhead, dt the
    checkpoint interval and w the blocking write time.

    The estimate is first order in the failure rate: it holds while a job
    fails rarely within ``u0 + dt/2`` (``N r_f (u0 + dt/2)`` well below 1).
    Beyond, the formula goes below 0; the value is clipped to [0, 1] (0: no
    progress expected), elementwise."""
    per_node = integer("gpus_per_node", gpus_per_node, minimum=1)
    nodes = np.asarray(_array("gpus", gpus), dtype=np.float64) / per_node
    rate = np.asarray(_array("failures_per_node_day", failures_per_node_day, allow_zero=True)) / DAY
    ettr = _call(
        _core.meta_expected_ettr,
        gpus=nodes,
        failures_per_node_day=rate,
        restart_overhead=_array("restart_overhead", restart_overhead, allow_zero=True),
        checkpoint_interval=_array("checkpoint_interval", checkpoint_interval),
        checkpoint_write=_array("checkpoint_write", checkpoint_write, allow_zero=True),
    )
    return _out(np.clip(ettr, 0.0, 1.0))


def meta_scale_model(mttf_1024: float = META_MTTF_1024_GPUS, exponent: float = 1.0) -> ScaleAware:
    """The scale-aware default failure model: exponential job-level failures
    with MTTF 7.9 h at 1,024 GPUs (Meta RSC), scaled as 1/GPUs."""
    return ScaleAware(
        Exponential(positive("mttf_1024", mttf_1024)), ref_gpus=1024.0, exponent=exponent
    )


def node_rate_model(failures_per_node_day: float, gpus_per_node: int = 8) -> ScaleAware:
    """Projection form MTTF = 1 / (nodes x r_f): exponential job-level failures
    at ``failures_per_node_day`` per node (e.g. 6.5e-3 for Meta RSC-1)."""
    rate = positive("failures_per_node_day", failures_per_node_day)
    per_node = integer("gpus_per_node", gpus_per_node, minimum=1)
    return ScaleAware(Exponential(DAY / rate), ref_gpus=float(per_node), exponent=1.0)


def mttf(model: Distribution, gpus: float) -> float:
    """Mean time to failure (seconds) of a job of ``gpus`` GPUs under ``model``."""
    model = scipy_to_law("model", model)
    if not isinstance(model, Distribution):
        raise TypeError(f"model must be a Distribution, got {type(model).__name__}")
    return model.mean(positive("gpus", gpus))
