"""Figures of simulation results (needs the ``plot`` extra: matplotlib).

Every figure has two functions: a *data* function (``*_data``) that computes
exactly the numbers, spans, marks and texts that are drawn, in numpy only,
and a drawing function that calls it and returns the matplotlib
:class:`~matplotlib.figure.Figure`. Tests, reports and your own figures can
use the data function without matplotlib.

* :func:`ettr_breakdown`: where the GPU-weighted wall-clock went, one bar
  per time bucket (:data:`acesim.simulation.BUCKETS`), its share written on it;
* :func:`interval_curve`: pooled ETTR against the checkpoint interval
  (:func:`acesim.optimal_interval`) with its confidence band, and the chosen
  interval, Young's, Daly's and the simulated optimum marked;
* :func:`replica_distribution` and :func:`exponential_vs_history`: the
  distribution over replicas of each replica's ETTR (or wall-clock), e.g. for
  a history law and the exponential law with its mean;
* :func:`fleet_timeline`: one replica of a fleet, nodes down, quarantined and
  in maintenance, the jobs running on them, and the jobs as a Gantt chart;
* :func:`policy_comparison`: pooled ETTR of named results with their
  confidence intervals and the paired differences against a baseline
  (:func:`acesim.compare`);
* :func:`mtbf_sweep` and :func:`demo_figure` (the figure of ``acesim demo
  --plot``).

Titles and captions name the scenario, the replicas and the seed: from the
result's ``provenance`` (a dict with ``acesim_version``, ``seed``,
``replicas`` and ``scenario``, whose ``run.name`` is the scenario's name)
when it has one, else from the result itself (its seed, the replicas in its
tables). ``title=`` and ``caption=`` replace them; ``""`` leaves them out.
Without ``ax`` a new figure is made, titled (its suptitle) and captioned
(below the axes). With ``ax`` (your own axes) the drawing goes there, the
title goes on the axes and no caption is written unless ``caption=`` is
given; the data object's ``caption`` has the text. Figures are made with
:class:`matplotlib.figure.Figure` directly (no pyplot state): show one in a
notebook by returning it, or save it with ``fig.savefig``.

>>> import acesim as ace
>>> from acesim import plot
>>> res = ace.simulate(ace.Job(8, work=ace.DAY, checkpoint_interval=ace.HOUR),
...                    ace.Exponential(12 * ace.HOUR), replicas=20, seed=1)
>>> data = plot.ettr_breakdown_data(res)
>>> bool(abs(data.shares[0].sum() - 1.0) < 1e-12)
True
"""

from __future__ import annotations

import itertools
import math
import textwrap
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from .distributions import Distribution, Exponential
from .job import Job
from .optimize import OptimalInterval
from .policy import Policy, Quarantine
from .simulation import (
    BUCKETS,
    EventKind,
    NodeEventKind,
    SimulationResult,
    quarantines_recorded,
    simulate,
)
from .stats import Difference, Estimate, SingleReplicaWarning, _ettr_interval, compare
from .units import DAY, HOUR, MINUTE

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

__all__ = [
    "BUCKET_COLORS",
    "NODE_STATE_COLORS",
    "BreakdownData",
    "DemoFigureData",
    "DistributionData",
    "ExponentialVsHistoryData",
    "IntervalCurveData",
    "JobMarker",
    "JobSpan",
    "NodeSpan",
    "Occupancy",
    "PolicyComparisonData",
    "Provenance",
    "SensitivityData",
    "SweepCurveData",
    "SweepData",
    "TimelineData",
    "demo_figure",
    "demo_figure_data",
    "ettr_breakdown",
    "ettr_breakdown_data",
    "exponential_vs_history",
    "exponential_vs_history_data",
    "exponential_vs_history_results",
    "fleet_timeline",
    "fleet_timeline_data",
    "interval_curve",
    "interval_curve_data",
    "mtbf_sweep",
    "mtbf_sweep_data",
    "policy_comparison",
    "policy_comparison_data",
    "provenance",
    "replica_distribution",
    "replica_distribution_data",
    "replica_values",
    "sensitivity_data",
    "sensitivity_figure",
    "sweep_curve",
    "sweep_curve_data",
]

#: What to install for the figures.
INSTALL_HINT = 'pip install "acesim[plot]"'

# Okabe & Ito's colour-blind safe palette.
_BLUE, _ORANGE, _GREEN, _VERMILLION = "#0072B2", "#E69F00", "#009E73", "#D55E00"
_PURPLE, _SKY, _YELLOW, _GREY, _BLACK = "#CC79A7", "#56B4E9", "#F0E442", "#999999", "#000000"

#: The colour of each time bucket in :func:`ettr_breakdown`.
BUCKET_COLORS: dict[str, str] = {
    "productive": _GREEN,
    "wasted": _VERMILLION,
    "ckpt_stall": _BLUE,
    "overhead": _ORANGE,
    "detection": _PURPLE,
    "queue_wait": _SKY,
    "recovery_wait": _YELLOW,
    "narrow": _GREY,
}

#: The colour of each out-of-service state in :func:`fleet_timeline`.
NODE_STATE_COLORS: dict[str, str] = {
    "down": _VERMILLION,
    "quarantined": _PURPLE,
    "maintenance": _ORANGE,
    "down_or_quarantined": "#8C4A2F",
}

_NODE_STATE_LABELS = {
    "down": "down (failed, under repair)",
    "quarantined": "quarantined",
    "maintenance": "in maintenance",
    "down_or_quarantined": "down after a failure (repair or quarantine)",
}

#: Colours of the results in figures that show several.
_SERIES = (_BLUE, _ORANGE, _GREEN, _VERMILLION, _PURPLE, _SKY, "#5D5D5D", _YELLOW)

#: Colours of the jobs in the timeline (cool tones: the node states are warm).
_JOB_COLORS = (
    "#0072B2",
    "#56B4E9",
    "#009E73",
    "#6A8FC7",
    "#2F8F6A",
    "#8FC1E3",
    "#3B5B92",
    "#7DBFA0",
)

_JOB_STATE_COLORS = {
    "queued": "#E8E8E8",
    "waiting": "#BDBDBD",
    "detecting": _YELLOW,
}

_JOB_STATE_LABELS = {
    "queued": "queued (before its first start)",
    "running": "running (start-up, compute, checkpoints)",
    "detecting": "fault until its detection",
    "waiting": "waiting for nodes or in the queue again",
}

_MARKERS: dict[str, tuple[str, str, str]] = {
    # kind: (matplotlib marker, colour, legend label)
    "failure": ("x", _BLACK, "failure"),
    "preempted": ("v", "#5D5D5D", "preempted"),
    "maintenance": ("D", _ORANGE, "stopped for maintenance"),
    "time_limit": ("|", _BLACK, "time limit"),
    "unplaceable": ("X", _VERMILLION, "unplaceable"),
    "shrink": ("1", "#5D5D5D", "shrank (elastic)"),
    "grow": ("2", "#5D5D5D", "grew back (elastic)"),
}

Results = SimulationResult | Mapping[str, SimulationResult]
AxesArg = Any  # an Axes, or for the two-panel figures a pair of Axes


# ----------------------------------------------------------------- helpers


def _matplotlib() -> type[Figure]:
    """matplotlib's Figure class, or an ImportError naming the extra."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"acesim.plot needs matplotlib: {INSTALL_HINT}") from exc
    return Figure


def _root(fig: Figure | SubFigure) -> Figure:
    """The top-level figure of an axes' (sub)figure."""
    parent: Any = fig
    while getattr(parent, "figure", parent) is not parent:
        parent = parent.figure
    out: Figure = parent
    return out


def _new_figure(width: float, height: float) -> Figure:
    """A new figure (no pyplot state) with constrained layout."""
    figure_class = _matplotlib()
    return figure_class(figsize=(width, height), layout="constrained")


def _label(fig: Figure, title: str, caption: str) -> None:
    """The figure's suptitle and a caption under its axes (wrapped to the
    figure's width)."""
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
    if caption:
        width = max(40, int(fig.get_figwidth() * 15))
        fig.supxlabel(
            textwrap.fill(caption, width),
            fontsize=8,
            x=0.01,
            ha="left",
            color="#333333",
        )


def _finish(
    fig: Figure, ax: Any, own: bool, title: str, caption: str, caption_given: bool
) -> Figure:
    if own:
        _label(fig, title, caption)
    else:
        if title:
            first = ax[0] if isinstance(ax, Sequence) else ax
            first.set_title(title, fontsize=10, loc="left")
        if caption_given and caption:
            _label(fig, "", caption)
    return fig


def _as_results(results: Any, what: str = "results") -> dict[str, SimulationResult]:
    """A SimulationResult (named by its scenario, else "result") or a mapping
    of names to results, as an ordered dict of str -> SimulationResult."""
    if isinstance(results, SimulationResult):
        name = provenance(results).scenario or "result"
        return {name: results}
    if not isinstance(results, Mapping):
        raise TypeError(
            f"{what} must be a SimulationResult or a mapping of names to SimulationResult, "
            f"got {type(results).__name__}"
        )
    if not results:
        raise ValueError(f"{what} must not be empty")
    out: dict[str, SimulationResult] = {}
    for key, value in results.items():
        if not isinstance(value, SimulationResult):
            raise TypeError(
                f"{what}[{key!r}] must be a SimulationResult, got {type(value).__name__}"
            )
        out[str(key)] = value
    return out


def _text(name: str, value: Any, default: str) -> tuple[str, bool]:
    """An explicit title or caption (``""``: none) or the default; and
    whether it was given."""
    if value is None:
        return default, False
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string or None, got {type(value).__name__}")
    return value, True


_UNITS = ((DAY, "days"), (HOUR, "h"), (MINUTE, "min"), (1.0, "s"))


def _unit(seconds: float) -> tuple[float, str]:
    """The largest unit in which ``seconds`` is at least 2."""
    for size, name in _UNITS:
        if seconds >= 2.0 * size:
            return size, name
    return 1.0, "s"


def _duration(seconds: float) -> str:
    """A duration for a label: '52.3 min', '7.90 h', '2.5 days'."""
    if not math.isfinite(seconds):
        return "inf"
    size, name = _unit(abs(seconds))
    value = seconds / size
    return f"{value:.3g} {name}" if abs(value) < 100 else f"{value:.0f} {name}"


def _quiet_ettr(res: SimulationResult, ci: float, job: int | None = None) -> Estimate:
    """res.ettr(ci) without the one-replica warning (the figures say so)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleReplicaWarning)
        return res.ettr(job=job, ci=ci)


def _level(ci: Any) -> float:
    if isinstance(ci, bool) or not isinstance(ci, int | float) or not 0.0 < float(ci) < 1.0:
        raise ValueError(f"ci must be a number in (0, 1), got {ci!r}")
    return float(ci)


def _plain_log_axis(axis: Any) -> None:
    """Log-scale ticks at 1, 2, 5 x 10^k written as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


# -------------------------------------------------------------- provenance


@dataclass(frozen=True)
class Provenance:
    """What a figure says about where a result came from: the scenario's
    name (``None``: unknown), the replicas, the seed (``None``: unknown) and
    the acesim version that ran it (``None``: unknown)."""

    scenario: str | None
    replicas: int | None
    seed: int | None
    acesim_version: str | None

    def describe(self) -> str:
        """'scenario "x", 200 replicas, seed 3, acesim 0.1.0' (what is known)."""
        parts = []
        if self.scenario:
            parts.append(f'scenario "{self.scenario}"')
        if self.replicas is not None:
            parts.append(f"{self.replicas} replica{'s' if self.replicas != 1 else ''}")
        if self.seed is not None:
            parts.append(f"seed {self.seed}")
        if self.acesim_version:
            parts.append(f"acesim {self.acesim_version}")
        return ", ".join(parts)


def _replicas_in(res: SimulationResult) -> int:
    return int(np.unique(res.jobs["replica"]).size)


def provenance(result: Any) -> Provenance:
    """The provenance of a result: its ``provenance`` dict when it has one
    (keys ``acesim_version``, ``seed``, ``replicas``, ``scenario`` with
    ``run.name``), else what the result tells: its ``seed`` and the replicas
    its tables hold (an :class:`acesim.OptimalInterval`: its replicas)."""
    raw = getattr(result, "provenance", None)
    info: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    scenario = info.get("scenario")
    name: str | None = None
    if isinstance(scenario, Mapping):
        run = scenario.get("run")
        if isinstance(run, Mapping) and run.get("name") is not None:
            name = str(run["name"])
        elif scenario.get("name") is not None:
            name = str(scenario["name"])
    elif isinstance(scenario, str):
        name = scenario
    replicas = info.get("replicas")
    if replicas is None:
        if isinstance(result, SimulationResult):
            replicas = _replicas_in(result)
        elif isinstance(result, OptimalInterval):
            replicas = result.replicas
    seed = info.get("seed")
    if seed is None and isinstance(result, SimulationResult):
        seed = result.seed
    version = info.get("acesim_version")
    return Provenance(
        scenario=name,
        replicas=None if replicas is None else int(replicas),
        seed=None if seed is None else int(seed),
        acesim_version=None if version is None else str(version),
    )


def _describe_all(results: Mapping[str, SimulationResult]) -> str:
    """One sentence for several results: shared facts once, else per result."""
    provs = {name: provenance(res) for name, res in results.items()}
    if len(provs) == 1:
        return next(iter(provs.values())).describe()
    values = list(provs.values())
    same = values[0]
    if all(
        (p.replicas, p.seed, p.acesim_version, p.scenario)
        == (same.replicas, same.seed, same.acesim_version, same.scenario)
        for p in values
    ):
        text = same.describe()
        return f"each result: {text}" if text else ""
    return "; ".join(f"{name}: {p.describe()}" for name, p in provs.items())


def _sentence(text: str) -> str:
    """' Text.' (a space, capitalized, a full stop), or '' for no text."""
    return f" {text[0].upper()}{text[1:]}." if text else ""


def _scenario_of(results: Mapping[str, SimulationResult]) -> str | None:
    names = {provenance(res).scenario for res in results.values()}
    if len(names) == 1:
        return names.pop()
    return None


def _titled(base: str, scenario: str | None) -> str:
    return f"{base}: {scenario}" if scenario else base


# ----------------------------------------------------------- ETTR breakdown


@dataclass(frozen=True)
class BreakdownData:
    """What :func:`ettr_breakdown` draws.

    ``shares[i, k]``: result ``names[i]``'s total GPU-weighted bucket
    ``buckets[k]`` over its total GPU-weighted wall-clock (the shares of
    :meth:`SimulationResult.summary`; a row adds up to 1, ``productive``'s
    share is the pooled ETTR). ``shown``: the buckets drawn (those not zero
    in every result). ``ettr``: each result's pooled ETTR with its interval
    at level ``ci``.
    """

    names: tuple[str, ...]
    buckets: tuple[str, ...]
    shares: npt.NDArray[np.float64]
    shown: tuple[str, ...]
    ettr: tuple[Estimate, ...]
    ci: float
    title: str
    caption: str


def _shares(res: SimulationResult) -> npt.NDArray[np.float64]:
    j = res.jobs
    g = j["gpus"].astype(np.float64)
    wall = float(np.sum(g * j["wall"]))
    if not wall > 0:
        return np.full(len(BUCKETS), math.nan)
    return np.array([float(np.sum(g * j[b])) / wall for b in BUCKETS])


def ettr_breakdown_data(
    results: Results, *, ci: float = 0.95, title: str | None = None, caption: str | None = None
) -> BreakdownData:
    """The shares of wall-clock per time bucket of one result or of several
    named results (see :class:`BreakdownData`)."""
    named = _as_results(results)
    level = _level(ci)
    shares = np.vstack([_shares(res) for res in named.values()])
    shown = tuple(b for k, b in enumerate(BUCKETS) if np.any(shares[:, k] != 0.0))
    estimates = tuple(_quiet_ettr(res, level) for res in named.values())
    hidden = [b for b in BUCKETS if b not in shown]
    ettrs = "; ".join(
        (f"{name} " if len(named) > 1 else "")
        + f"{e.value:.4f}"
        + (
            f" ({_pct(level)} CI {e.low:.4f} to {e.high:.4f})"
            if math.isfinite(e.low)
            else " (one replica: no interval)"
        )
        for name, e in zip(named, estimates, strict=True)
    )
    default_caption = (
        "Shares of the GPU-weighted wall-clock by time bucket (they add up to 1; the "
        f"productive share is the pooled ETTR). ETTR: {ettrs}."
        + (
            f" Zero{' in every result' if len(named) > 1 else ''}, not drawn: {', '.join(hidden)}."
            if hidden
            else ""
        )
        + _sentence(_describe_all(named))
    )
    title_, _ = _text("title", title, _titled("ETTR breakdown", _scenario_of(named)))
    caption_, _ = _text("caption", caption, default_caption)
    return BreakdownData(
        names=tuple(named),
        buckets=BUCKETS,
        shares=shares,
        shown=shown,
        ettr=estimates,
        ci=level,
        title=title_,
        caption=caption_,
    )


def _draw_breakdown(ax: Axes, data: BreakdownData) -> None:
    shown = list(data.shown)
    n = len(data.names)
    rows = np.arange(len(shown), dtype=np.float64)
    height = 0.8 / n
    index = [data.buckets.index(b) for b in shown]
    for i, name in enumerate(data.names):
        values = data.shares[i, index]
        y = rows - 0.4 + height * (i + 0.5)
        colors = [BUCKET_COLORS.get(b, _GREY) for b in shown] if n == 1 else _SERIES[i % 8]
        bars = ax.barh(y, values, height=height * 0.92, color=colors, label=name)
        ax.bar_label(bars, labels=[f"{v:.2%}" for v in values], padding=3, fontsize=8)
    ax.set_yticks(rows, shown)
    ax.invert_yaxis()
    ax.set_xlim(0.0, 1.15)
    ax.set_xlabel("share of GPU-weighted wall-clock")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    if n > 1:
        ax.legend(fontsize=8, loc="lower right")


def ettr_breakdown(
    results: Results,
    *,
    ci: float = 0.95,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """Bars of the shares of wall-clock per time bucket, each value written
    on its bar; several named results are grouped per bucket."""
    data = ettr_breakdown_data(results, ci=ci, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(7.5, 1.6 + 0.45 * len(data.shown) * max(1.0, len(data.names) * 0.6))
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_breakdown(ax, data)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


# ---------------------------------------------------------- interval curve


@dataclass(frozen=True)
class IntervalCurveData:
    """What :func:`interval_curve` draws (durations in seconds).

    ``intervals``, ``ettr``: the simulated curve (the selection replicas'
    pooled ETTR at each candidate interval); ``low``, ``high``: its pointwise
    band at level ``ci``, each point's interval made as
    :meth:`acesim.SimulationResult.ettr` makes it (Student's t with
    ``replicas - 1`` degrees of freedom, corrected for skewness, clipped to
    [0, 1]; :mod:`acesim.stats`). ``marks``: the marked intervals by
    name (``"chosen"`` when given, ``"young"``, ``"daly"``, ``"optimum"``).
    ``optimum_ettr`` with ``optimum_low`` .. ``optimum_high``: the optimum's
    ETTR measured again on the fresh replicas and its interval.
    ``plausible``: the optimum's paired plausible range.
    """

    intervals: npt.NDArray[np.float64]
    ettr: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    marks: dict[str, float]
    optimum_ettr: float
    optimum_low: float
    optimum_high: float
    plausible: tuple[float, float]
    ci: float
    replicas: int
    title: str
    caption: str


_MARK_STYLES = {
    "chosen": (_BLACK, "-", "chosen"),
    "young": (_ORANGE, "--", "Young"),
    "daly": (_GREEN, ":", "Daly"),
    "optimum": (_VERMILLION, "-.", "simulated optimum"),
}


def interval_curve_data(
    best: OptimalInterval,
    *,
    chosen: float | None = None,
    ci: float = 0.95,
    title: str | None = None,
    caption: str | None = None,
) -> IntervalCurveData:
    """The simulated ETTR-interval curve of :func:`acesim.optimal_interval`
    with its band and marks (see :class:`IntervalCurveData`); ``chosen`` is
    the interval the job runs with (seconds), if it is to be marked."""
    if not isinstance(best, OptimalInterval):
        raise TypeError(f"best must be an OptimalInterval, got {type(best).__name__}")
    level = _level(ci)
    x = np.asarray(best.intervals, dtype=np.float64)
    y = np.asarray(best.ettrs, dtype=np.float64)
    low, high = _ettr_interval(y, best.influences, level, two_sided=True)
    opt_low, opt_high = _ettr_interval(best.ettr, best.fresh_influence, level, two_sided=True)
    marks: dict[str, float] = {}
    if chosen is not None:
        c = float(chosen)
        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"chosen must be a positive number of seconds, got {chosen!r}")
        marks["chosen"] = c
    marks.update(young=float(best.young), daly=float(best.daly), optimum=float(best.interval))
    prov = provenance(best)
    described = ", ".join(f"{_MARK_STYLES[k][2]} {_duration(v)}" for k, v in marks.items())
    default_caption = (
        f"Pooled ETTR against the checkpoint interval on {best.replicas} selection replicas "
        f"(common random numbers), with its pointwise {_pct(level)} band; the diamond is the "
        f"optimum's ETTR measured again on {best.replicas} fresh replicas "
        f"({best.ettr:.4f}, {_pct(level)} CI {float(opt_low):.4f} to {float(opt_high):.4f}). "
        f"Marked: {described}; shaded: the optimum's "
        f"plausible range {_duration(best.plausible[0])} to {_duration(best.plausible[1])} "
        "(paired, 2 standard errors)." + _sentence(prov.describe())
    )
    title_, _ = _text("title", title, _titled("Checkpoint interval", prov.scenario))
    caption_, _ = _text("caption", caption, default_caption)
    return IntervalCurveData(
        intervals=x,
        ettr=y,
        low=np.asarray(low, dtype=np.float64),
        high=np.asarray(high, dtype=np.float64),
        marks=marks,
        optimum_ettr=float(best.ettr),
        optimum_low=float(opt_low),
        optimum_high=float(opt_high),
        plausible=(float(best.plausible[0]), float(best.plausible[1])),
        ci=level,
        replicas=int(best.replicas),
        title=title_,
        caption=caption_,
    )


def _draw_interval_curve(ax: Axes, data: IntervalCurveData) -> None:
    size, unit = _unit(float(np.median(data.intervals)))
    x = data.intervals / size
    ax.axvspan(
        data.plausible[0] / size,
        data.plausible[1] / size,
        color=_VERMILLION,
        alpha=0.08,
        label="plausible optimum range",
    )
    ax.fill_between(x, data.low, data.high, color=_BLUE, alpha=0.25, label=f"{_pct(data.ci)} band")
    ax.plot(x, data.ettr, "o-", color=_BLUE, ms=3, lw=1.2, label="simulated ETTR")
    for name, tau in data.marks.items():
        color, style, label = _MARK_STYLES[name]
        ax.axvline(
            tau / size,
            color=color,
            ls=style,
            lw=1.5,
            label=f"{label} {_duration(tau)}",
            gid=f"mark-{name}",
        )
    opt = data.marks["optimum"] / size
    ax.errorbar(
        [opt],
        [data.optimum_ettr],
        yerr=[[data.optimum_ettr - data.optimum_low], [data.optimum_high - data.optimum_ettr]],
        fmt="D",
        color=_VERMILLION,
        ms=6,
        capsize=3,
        label=f"optimum, fresh replicas {data.optimum_ettr:.4f}",
    )
    ax.set_xscale("log")
    _plain_log_axis(ax.xaxis)
    ax.set_xlabel(f"checkpoint interval ({unit})")
    ax.set_ylabel("pooled ETTR")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="best")


def interval_curve(
    best: OptimalInterval,
    *,
    chosen: float | None = None,
    ci: float = 0.95,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """ETTR against the checkpoint interval with its confidence band, the
    chosen interval (when given), Young's, Daly's and the simulated optimum
    marked and labelled, and the optimum's plausible range shaded."""
    data = interval_curve_data(best, chosen=chosen, ci=ci, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(7.5, 4.8)
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_interval_curve(ax, data)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


@dataclass(frozen=True)
class SweepCurveData:
    """What :func:`sweep_curve` draws from a sweep's grid table
    (``acesim sweep --out``): each point's resolved checkpoint interval
    (``intervals``, seconds, in increasing order), its axis value as written
    (``labels``: ``30min``, ``daly``), pooled ETTR with its interval, the
    best point (``best``, an index into these arrays) and the points the
    sweep could not tell from it (``plausible``)."""

    axis: str
    intervals: npt.NDArray[np.float64]
    labels: tuple[str, ...]
    ettr: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    best: int
    plausible: npt.NDArray[np.bool_]
    title: str
    caption: str


def sweep_curve_data(
    grid: Any, *, title: str | None = None, caption: str | None = None
) -> SweepCurveData:
    """The interval curve of a sweep grid table (the ``points`` table that
    ``acesim sweep --out`` writes, with a ``jobs[k].checkpoint_interval``
    axis): a ValueError when the table has no such axis."""
    names = getattr(getattr(grid, "dtype", None), "names", None) or ()
    resolved = [n for n in names if n.endswith(".checkpoint_interval.resolved_s")]
    if not resolved:
        raise ValueError(
            "the sweep grid has no checkpoint-interval axis (jobs[k].checkpoint_interval, "
            "written by acesim sweep --out)"
        )
    column = resolved[0]
    axis = column.removesuffix(".resolved_s")
    x = np.asarray(grid[column], dtype=np.float64)
    keep = np.isfinite(x)
    order = np.argsort(x[keep], kind="stable")
    rows = np.flatnonzero(keep)[order]
    ettr = np.asarray(grid["ettr"], dtype=np.float64)[rows]
    best = int(np.flatnonzero(np.asarray(grid["best"])[rows])[0]) if "best" in names else -1
    if best < 0:
        best = int(np.nanargmax(ettr))
    plausible = (
        np.asarray(grid["plausible"], dtype=bool)[rows]
        if "plausible" in names
        else np.arange(rows.size) == best
    )
    labels = tuple(str(v) for v in np.asarray(grid[axis])[rows]) if axis in names else ()
    default_caption = (
        f"Pooled ETTR of each point of the sweep against the checkpoint interval it ran "
        f"({axis}; young and daly at the interval they resolved to), with its interval; "
        f"the best point ({labels[best] if labels else _duration(float(x[rows][best]))}, "
        f"ETTR {ettr[best]:.4f}) marked and the points the sweep cannot tell from it shaded. "
        "Its ETTR is the one that chose it (in-sample): acesim.optimal_interval measures the "
        "optimum again on fresh replicas."
    )
    title_, _ = _text("title", title, "Checkpoint interval (sweep)")
    caption_, _ = _text("caption", caption, default_caption)
    return SweepCurveData(
        axis=axis,
        intervals=x[rows],
        labels=labels,
        ettr=ettr,
        low=np.asarray(grid["ettr_low"], dtype=np.float64)[rows],
        high=np.asarray(grid["ettr_high"], dtype=np.float64)[rows],
        best=best,
        plausible=plausible,
        title=title_,
        caption=caption_,
    )


def sweep_curve(
    grid: Any,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """ETTR against the checkpoint interval of a sweep's grid table
    (:func:`sweep_curve_data`), from the command line's ``acesim sweep
    --out``: each point with its interval, the best marked, the points not
    distinguishable from it shaded, each labelled as the axis wrote it."""
    data = sweep_curve_data(grid, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(7.5, 4.8)
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    size, unit = _unit(float(np.median(data.intervals)))
    x = data.intervals / size
    if data.plausible.any():
        ax.axvspan(
            float(x[data.plausible].min()) * 0.97,
            float(x[data.plausible].max()) * 1.03,
            color=_VERMILLION,
            alpha=0.08,
            label="not distinguishable from the best",
        )
    ax.errorbar(
        x,
        data.ettr,
        yerr=[data.ettr - data.low, data.high - data.ettr],
        fmt="o-",
        color=_BLUE,
        ms=4,
        lw=1.2,
        capsize=2,
        label="pooled ETTR",
    )
    ax.plot([x[data.best]], [data.ettr[data.best]], "D", color=_VERMILLION, ms=7, label="best")
    for k, label in enumerate(data.labels):
        ax.annotate(
            label, (x[k], data.ettr[k]), textcoords="offset points", xytext=(4, 6), fontsize=7
        )
    if x.min() > 0 and x.max() / x.min() > 4:
        ax.set_xscale("log")
        _plain_log_axis(ax.xaxis)
    ax.set_xlabel(f"checkpoint interval ({unit})")
    ax.set_ylabel("pooled ETTR")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="best")
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


# ------------------------------------------------- per-replica distributions

Metric = Literal["ettr", "wall"]


def replica_values(res: SimulationResult, metric: Metric = "ettr") -> npt.NDArray[np.float64]:
    """One value per replica, in replica order: ``"ettr"``, the replica's
    GPU-weighted ETTR (sum of gpus x productive over sum of gpus x wall over
    its jobs: ``res.fleet["ettr"]``; one job's ``ettr``), or ``"wall"``, the
    mean wall-clock of its jobs in seconds (one job's ``wall``)."""
    if metric not in ("ettr", "wall"):
        raise ValueError(f"metric must be 'ettr' or 'wall', got {metric!r}")
    jobs = res.jobs
    ids, inverse = np.unique(jobs["replica"], return_inverse=True)
    if metric == "wall":
        total = np.bincount(inverse, weights=jobs["wall"], minlength=ids.size)
        count = np.bincount(inverse, minlength=ids.size)
        return np.asarray(total / count, dtype=np.float64)
    g = jobs["gpus"].astype(np.float64)
    productive = np.bincount(inverse, weights=g * jobs["productive"], minlength=ids.size)
    wall = np.bincount(inverse, weights=g * jobs["wall"], minlength=ids.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(productive / wall, dtype=np.float64)


@dataclass(frozen=True)
class DistributionData:
    """What :func:`replica_distribution` draws: per result its per-replica
    ``values`` (:func:`replica_values`), ``mean`` and ``median``, and the
    histogram on the shared bin ``edges`` as a density (``density[i]``
    integrates to 1). ``metric``: ``"ettr"`` or ``"wall"`` (values in
    seconds)."""

    names: tuple[str, ...]
    metric: str
    values: tuple[npt.NDArray[np.float64], ...]
    mean: npt.NDArray[np.float64]
    median: npt.NDArray[np.float64]
    edges: npt.NDArray[np.float64]
    density: npt.NDArray[np.float64]
    title: str
    caption: str


def _edges(values: Sequence[npt.NDArray[np.float64]], bins: int | None) -> npt.NDArray[np.float64]:
    pooled = np.concatenate([v[np.isfinite(v)] for v in values])
    if pooled.size == 0:
        raise ValueError("no finite per-replica values to draw")
    lo, hi = float(pooled.min()), float(pooled.max())
    if bins is None:
        bins = int(np.clip(np.ceil(np.sqrt(pooled.size / len(values))) + 1, 5, 60))
    if hi <= lo:  # every replica alike (a constant law): one narrow bin around it
        pad = max(abs(lo) * 1e-3, 1e-9)
        lo, hi = lo - pad, hi + pad
        bins = 1
    return np.linspace(lo, hi, int(bins) + 1)


def replica_distribution_data(
    results: Results,
    *,
    metric: Metric = "ettr",
    bins: int | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> DistributionData:
    """Per-replica values of one or several named results on shared bins
    (see :class:`DistributionData`); ``bins`` defaults to about the square
    root of the replicas per result (5 to 60)."""
    named = _as_results(results)
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, int) or bins < 1):
        raise ValueError(f"bins must be a positive integer or None, got {bins!r}")
    values = tuple(replica_values(res, metric) for res in named.values())
    edges = _edges(values, bins)
    density = np.vstack(
        [np.histogram(v[np.isfinite(v)], bins=edges, density=True)[0] for v in values]
    )
    what = (
        "GPU-weighted ETTR of each replica"
        if metric == "ettr"
        else "mean wall-clock of each replica's jobs"
    )
    default_caption = (
        f"Distribution over replicas of the {what} (histograms on shared bins, as densities); "
        "solid lines: the means, dotted: the medians. "
        + "; ".join(
            f"{name}: mean {_fmt_metric(metric, float(np.mean(v)))}, median "
            f"{_fmt_metric(metric, float(np.median(v)))}"
            for name, v in zip(named, values, strict=True)
        )
        + "."
        + _sentence(_describe_all(named))
    )
    base = "Per-replica ETTR" if metric == "ettr" else "Per-replica wall-clock"
    title_, _ = _text("title", title, _titled(base, _scenario_of(named)))
    caption_, _ = _text("caption", caption, default_caption)
    return DistributionData(
        names=tuple(named),
        metric=metric,
        values=values,
        mean=np.array([float(np.mean(v)) for v in values]),
        median=np.array([float(np.median(v)) for v in values]),
        edges=edges,
        density=density,
        title=title_,
        caption=caption_,
    )


def _fmt_metric(metric: str, value: float) -> str:
    return f"{value:.4f}" if metric == "ettr" else _duration(value)


def _draw_distribution(ax: Axes, data: DistributionData) -> None:
    size, unit = (1.0, "") if data.metric == "ettr" else _unit(float(np.max(data.edges)))
    edges = data.edges / size
    for i, name in enumerate(data.names):
        color = _SERIES[i % len(_SERIES)]
        # density per unit drawn: rescale so that the drawn area stays 1
        dens = data.density[i] * size
        ax.stairs(dens, edges, fill=True, alpha=0.25, color=color)
        ax.stairs(dens, edges, color=color, lw=1.5, label=name)
        ax.axvline(data.mean[i] / size, color=color, lw=1.2)
        ax.axvline(data.median[i] / size, color=color, lw=1.2, ls=":")
    ax.set_xlabel("replica ETTR" if data.metric == "ettr" else f"wall-clock ({unit})")
    ax.set_ylabel("density")
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8)


def replica_distribution(
    results: Results,
    *,
    metric: Metric = "ettr",
    bins: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """Histograms of the per-replica ETTR (or wall-clock) of named results,
    with their means and medians."""
    data = replica_distribution_data(
        results, metric=metric, bins=bins, title=title, caption=caption
    )
    own = ax is None
    if ax is None:
        fig = _new_figure(7.5, 4.2)
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_distribution(ax, data)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


# ------------------------------------------------- exponential vs a history


@dataclass(frozen=True)
class ExponentialVsHistoryData:
    """What :func:`exponential_vs_history` draws: the two distributions
    (``distribution``, names ``history_label`` then ``"exponential"``) and
    the mean time to failure both laws share (``mtbf`` in seconds, when
    known)."""

    distribution: DistributionData
    mtbf: float | None
    title: str
    caption: str


def exponential_vs_history_results(
    jobs: Job | Sequence[Job],
    law: Distribution,
    *,
    replicas: int,
    seed: int = 0,
    **simulate_kwargs: Any,
) -> dict[str, SimulationResult]:
    """Run ``jobs`` under the history law ``law`` and under the
    :class:`acesim.Exponential` with the same mean for each job (its
    ``law.mean(job.gpus)``), on the same seed and replicas:
    ``{"history": ..., "exponential": ...}``. ``simulate_kwargs`` go to
    :func:`acesim.simulate` (not ``failures``)."""
    if not isinstance(law, Distribution):
        raise TypeError(f"law must be a Distribution, got {type(law).__name__}")
    if "failures" in simulate_kwargs:
        raise TypeError("failures: the history law is the law argument")
    job_list = [jobs] if isinstance(jobs, Job) else list(jobs)
    exponentials: list[Distribution | None] = [Exponential(law.mean(j.gpus)) for j in job_list]
    history = simulate(job_list, law, replicas=replicas, seed=seed, **simulate_kwargs)
    expo = simulate(job_list, exponentials, replicas=replicas, seed=seed, **simulate_kwargs)
    return {"history": history, "exponential": expo}


def exponential_vs_history_data(
    history: SimulationResult,
    exponential: SimulationResult,
    *,
    metric: Metric = "ettr",
    mtbf: float | None = None,
    history_label: str = "history",
    bins: int | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> ExponentialVsHistoryData:
    """The per-replica distributions of a result under a history law and of
    one under the exponential law with the same mean (see
    :func:`exponential_vs_history_results`); ``mtbf``: that mean, to state
    it."""
    for name, value in (("history", history), ("exponential", exponential)):
        if not isinstance(value, SimulationResult):
            raise TypeError(f"{name} must be a SimulationResult, got {type(value).__name__}")
    named = {history_label: history, "exponential, same mean": exponential}
    dist = replica_distribution_data(named, metric=metric, bins=bins, title="", caption="")
    same = f" (mean time to failure {_duration(mtbf)})" if mtbf is not None else ""
    h, e = dist.values
    default_caption = (
        f"Per-replica {'ETTR' if metric == 'ettr' else 'wall-clock'} under the {history_label} "
        f"law and under the exponential law with the same mean{same}: the mean alone does not "
        f"decide. Means {_fmt_metric(metric, float(np.mean(h)))} and "
        f"{_fmt_metric(metric, float(np.mean(e)))}; 5th-95th percentiles "
        f"{_fmt_metric(metric, float(np.percentile(h, 5)))}-"
        f"{_fmt_metric(metric, float(np.percentile(h, 95)))} and "
        f"{_fmt_metric(metric, float(np.percentile(e, 5)))}-"
        f"{_fmt_metric(metric, float(np.percentile(e, 95)))}. " + _sentence(_describe_all(named))
    )
    title_, _ = _text(
        "title",
        title,
        _titled(f"Exponential vs {history_label}, same mean", _scenario_of(named)),
    )
    caption_, _ = _text("caption", caption, default_caption)
    return ExponentialVsHistoryData(
        distribution=dist,
        mtbf=None if mtbf is None else float(mtbf),
        title=title_,
        caption=caption_,
    )


def exponential_vs_history(
    history: SimulationResult,
    exponential: SimulationResult,
    *,
    metric: Metric = "ettr",
    mtbf: float | None = None,
    history_label: str = "history",
    bins: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """The distributions of per-replica ETTR (or wall-clock) under a history
    law and under the exponential law with its mean."""
    data = exponential_vs_history_data(
        history,
        exponential,
        metric=metric,
        mtbf=mtbf,
        history_label=history_label,
        bins=bins,
        title=title,
        caption=caption,
    )
    own = ax is None
    if ax is None:
        fig = _new_figure(7.5, 4.2)
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_distribution(ax, data.distribution)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


# ------------------------------------------------------------ fleet timeline


class NodeSpan(NamedTuple):
    """A node out of service over ``[start, end)``: ``state`` is ``"down"``
    (failed, under repair), ``"quarantined"`` (retired included),
    ``"maintenance"`` or ``"down_or_quarantined"`` (after a failure, in a
    result saved before ``node_events`` recorded quarantines); ``open``:
    still out at the end of the record."""

    node: int
    state: str
    start: float
    end: float
    open: bool


class Occupancy(NamedTuple):
    """Job ``job`` running on ``node`` over ``[start, end)`` (from a start
    to its interruption or the job's end)."""

    node: int
    job: int
    start: float
    end: float


class JobSpan(NamedTuple):
    """Job ``job`` in ``state`` over ``[start, end)``: ``"queued"`` (before
    its first start), ``"running"`` (holding its nodes: start-up, compute,
    checkpoints), ``"detecting"`` (from a fault to its detection) or
    ``"waiting"`` (after an interruption, until its next start)."""

    job: int
    state: str
    start: float
    end: float


class JobMarker(NamedTuple):
    """Something that happened to job ``job`` at ``time``: ``"failure"``,
    ``"preempted"``, ``"maintenance"``, ``"time_limit"``, ``"unplaceable"``,
    ``"shrink"`` or ``"grow"``."""

    job: int
    kind: str
    time: float


@dataclass(frozen=True)
class TimelineData:
    """What :func:`fleet_timeline` draws for one replica (times in seconds).

    ``nodes``: the node ids drawn; ``node_spans``: every out-of-service span;
    ``occupancy``: the jobs running on the nodes (from ``res.placements``);
    ``jobs`` with ``gpus``: the jobs drawn; ``job_spans`` partition each
    job's ``[submit, end)``; ``markers``: failures, preemptions and other
    interruptions; ``end``: the end of the record (the last job end or node
    event). ``quarantines``: the quarantines in ``res.node_events``
    (``QUARANTINED`` and ``RETIRED`` rows; None for a result saved before
    they were recorded), ``recorded_quarantines``: the result's count
    (``res.fleet["quarantines"]``).
    """

    replica: int
    nodes: tuple[int, ...]
    node_spans: tuple[NodeSpan, ...]
    occupancy: tuple[Occupancy, ...]
    jobs: tuple[int, ...]
    gpus: tuple[int, ...]
    job_spans: tuple[JobSpan, ...]
    markers: tuple[JobMarker, ...]
    end: float
    quarantines: int | None
    recorded_quarantines: int
    title: str
    caption: str
    #: each drawn job's lane label: its ``Job.name``, else ``job N``
    labels: tuple[str, ...] = ()


def _job_label(res: SimulationResult, job: int) -> str:
    """A job as figures and reports name it: its ``Job.name`` (with its
    number), else ``job N``."""
    names = getattr(res, "job_names", ())
    name = names[job] if 0 <= job < len(names) else None
    return f"{name} (job {job})" if name else f"job {job}"


def _outage_spans(
    node: int,
    start: float,
    end: float,
    base: str,
    quarantine_end: float | None,
    maintenance_start: float | None,
    open_: bool,
) -> list[NodeSpan]:
    """An outage [start, end) cut where its reason changes: quarantined
    while the quarantine lasts, in maintenance from a drain that began in
    it, else its ``base`` reason."""
    cuts = {start, end}
    if quarantine_end is not None and start < quarantine_end < end:
        cuts.add(quarantine_end)
    if maintenance_start is not None and start < maintenance_start < end:
        cuts.add(maintenance_start)
    points = sorted(cuts)
    spans: list[NodeSpan] = []
    for a, b in itertools.pairwise(points):
        mid = 0.5 * (a + b)
        if quarantine_end is not None and mid < quarantine_end:
            state = "quarantined"
        elif maintenance_start is not None and mid >= maintenance_start:
            state = "maintenance"
        else:
            state = base
        if spans and spans[-1].state == state:
            spans[-1] = spans[-1]._replace(end=b)
        else:
            spans.append(NodeSpan(node, state, a, b, False))
    if spans and open_:
        spans[-1] = spans[-1]._replace(open=True)
    if not spans:  # a zero-length outage
        spans.append(NodeSpan(node, base, start, end, open_))
    return spans


_JOB_MARKER_KINDS = {
    EventKind.FAILURE: "failure",
    EventKind.PREEMPTED: "preempted",
    EventKind.MAINTENANCE: "maintenance",
    EventKind.TIME_LIMIT: "time_limit",
    EventKind.UNPLACEABLE: "unplaceable",
    EventKind.SHRINK: "shrink",
    EventKind.GROW: "grow",
}

#: Events that end a run (the job leaves "running").
_INTERRUPTIONS = {
    EventKind.PREEMPTED,
    EventKind.MAINTENANCE,
    EventKind.TIME_LIMIT,
}
_ENDS = {EventKind.DONE, EventKind.HORIZON, EventKind.UNPLACEABLE}


def _job_lanes(
    events: npt.NDArray[Any],
) -> tuple[list[JobSpan], list[JobMarker], dict[tuple[int, float], float]]:
    """From one replica's event log: each job's spans and markers, and the
    end of each run by (job, start time)."""
    spans: list[JobSpan] = []
    markers: list[JobMarker] = []
    runs: dict[tuple[int, float], float] = {}
    order = np.lexsort((np.arange(events.size), events["time"], events["job"]))
    state: dict[int, tuple[str, float]] = {}
    run_start: dict[int, float] = {}

    def close(j: int, t: float) -> None:
        if j in state:
            name, since = state.pop(j)
            if t > since:
                spans.append(JobSpan(j, name, since, t))
        if j in run_start:
            runs[(j, run_start.pop(j))] = t

    for row in events[order]:
        j, kind, t = int(row["job"]), int(row["kind"]), float(row["time"])
        if kind in _JOB_MARKER_KINDS:
            markers.append(JobMarker(j, _JOB_MARKER_KINDS[EventKind(kind)], t))
        if kind == EventKind.SUBMIT:
            close(j, t)
            state[j] = ("queued", t)
        elif kind == EventKind.START_BEGIN:
            close(j, t)
            state[j] = ("running", t)
            run_start[j] = t
        elif kind == EventKind.FAILURE:
            close(j, t)
            state[j] = ("detecting", t)
        elif kind == EventKind.DETECTED:
            if state.get(j, ("", 0.0))[0] == "detecting":
                close(j, t)
                state[j] = ("waiting", t)
        elif kind in _INTERRUPTIONS:
            close(j, t)
            state[j] = ("waiting", t)
        elif kind in _ENDS:
            close(j, t)
    return spans, markers, runs


def _run_fleet(res: SimulationResult) -> tuple[Any, str | None]:
    """The fleet of the run that made ``res``, from its provenance (None
    when it does not say or cannot rebuild it), and the user callable
    refused when the fleet names one (figures never resolve user code:
    :func:`acesim.provenance.rebuild` without ``trust``)."""
    from .errors import UntrustedNameError
    from .provenance import rebuild

    prov = res.provenance
    args = prov.get("arguments") or prov.get("fleet_model")
    if not isinstance(args, Mapping):
        return None, None
    fields = args.get("dict", {})
    if "fleet" not in fields:
        return None, None
    try:
        return rebuild(fields["fleet"]), None
    except UntrustedNameError as exc:
        return None, exc.name
    except (ValueError, ImportError, AttributeError):
        return None, None


def _no_quarantine_argument(quarantine: object) -> None:
    """The deprecated ``quarantine=`` of the timeline and the report: a
    warning (at the caller's caller), and nothing else."""
    if quarantine is not None:
        warnings.warn(
            "quarantine= is no longer used and will be removed: fleet timelines read "
            "quarantines and retirements from res.node_events",
            DeprecationWarning,
            stacklevel=3,
        )


def fleet_timeline_data(
    res: SimulationResult,
    *,
    replica: int | None = None,
    quarantine: Quarantine | Policy | None = None,
    nodes: int | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> TimelineData:
    """One replica's fleet as spans (see :class:`TimelineData`); needs a run
    with ``record_events=True``.

    Node states come from ``res.node_events`` only: a node is out of service
    from a ``DOWN`` (after a failure) or ``MAINTENANCE`` event to its
    ``UP``; a ``QUARANTINED`` row marks it quarantined until the row's
    ``until`` (then down for what is left of its repair), a ``RETIRED`` row
    for good. A result saved before ``node_events`` recorded quarantines
    (no ``until`` column) cannot tell them from repairs: a replica that
    recorded none has only repairs, one that did shows its failure spans as
    ``"down_or_quarantined"``, and the caption says so.

    ``replica``: the replica id (default: the first); ``nodes``: the fleet's
    size, by default the run's own, read from the result's provenance (its
    ``simulate`` arguments) when it has it, else one past the highest node
    id recorded. ``quarantine`` is deprecated and ignored (a
    ``DeprecationWarning``): the quarantines are the run's own rows.
    """
    if not isinstance(res, SimulationResult):
        raise TypeError(f"res must be a SimulationResult, got {type(res).__name__}")
    _no_quarantine_argument(quarantine)
    refused: str | None = None
    if nodes is None:
        run_fleet, refused = _run_fleet(res)
        if run_fleet is not None:
            nodes = run_fleet.nodes
    if res.events.size == 0 or res.placements is None or res.node_events is None:
        raise ValueError(
            "the timeline needs the event log: run simulate(..., record_events=True) with a fleet"
        )
    ids = np.unique(res.jobs["replica"])
    rep = int(ids[0]) if replica is None else int(replica)
    if rep not in set(ids.tolist()):
        raise ValueError(f"replica {rep} is not in the result (it holds {ids.size} replicas)")
    node_events = res.node_events[res.node_events["replica"] == rep]
    node_events = node_events[np.argsort(node_events["time"], kind="stable")]
    placements = res.placements[res.placements["replica"] == rep]
    events = res.events[res.events["replica"] == rep]
    jobs = res.jobs[res.jobs["replica"] == rep]
    jobs = jobs[np.argsort(jobs["job"], kind="stable")]
    fleet_rows = res.fleet[res.fleet["replica"] == rep]
    recorded = int(fleet_rows["quarantines"][0]) if fleet_rows.size else 0

    seen_nodes = [int(n) for n in node_events["node"]] + [int(n) for n in placements["node"]]
    n_nodes = (max(seen_nodes) + 1 if seen_nodes else 0) if nodes is None else int(nodes)
    if seen_nodes and n_nodes <= max(seen_nodes):
        raise ValueError(f"nodes={n_nodes}, but node {max(seen_nodes)} is in the record")
    finite_ends = jobs["end"][np.isfinite(jobs["end"])]
    end = max(
        [float(finite_ends.max())] if finite_ends.size else [0.0],
        default=0.0,
    )
    if node_events.size:
        end = max(end, float(node_events["time"].max()))
    if events.size:
        end = max(end, float(events["time"].max()))

    # Quarantines: the run's own rows, or (an older result) not recorded.
    found: int | None = None
    retired = 0
    kinds = node_events["kind"]
    if quarantines_recorded(res.node_events):
        retired = int(np.count_nonzero(kinds == NodeEventKind.RETIRED))
        found = int(np.count_nonzero(kinds == NodeEventKind.QUARANTINED)) + retired
    failure_state = "down" if found is not None or recorded == 0 else "down_or_quarantined"

    # Node outages: leave service (down / maintenance) .. up; a quarantine
    # row of the outage sets how long it is a quarantine.
    node_spans: list[NodeSpan] = []
    out: dict[int, dict[str, Any]] = {}
    for row in node_events:
        n, kind, t = int(row["node"]), int(row["kind"]), float(row["time"])
        if kind == NodeEventKind.UP:
            if n in out:
                o = out.pop(n)
                node_spans += _outage_spans(
                    n, o["start"], t, o["base"], o["q_end"], o["m_start"], False
                )
            continue
        if kind in (NodeEventKind.QUARANTINED, NodeEventKind.RETIRED):
            until = float(row["until"])
            o = out.setdefault(n, {"start": t, "base": "down", "q_end": None, "m_start": None})
            o["q_end"] = until if o["q_end"] is None else max(o["q_end"], until)
            continue
        if n not in out:
            base = failure_state if kind == NodeEventKind.DOWN else "maintenance"
            out[n] = {"start": t, "base": base, "q_end": None, "m_start": None}
        elif kind == NodeEventKind.MAINTENANCE and out[n]["m_start"] is None:
            out[n]["m_start"] = t
    for n, o in out.items():  # still out at the end of the record
        node_spans += _outage_spans(n, o["start"], end, o["base"], o["q_end"], o["m_start"], True)
    node_spans.sort(key=lambda s: (s.node, s.start))

    # Jobs: states from the event log, runs on nodes from the placements.
    job_spans, markers, runs = _job_lanes(events)
    occupancy: list[Occupancy] = []
    for row in placements:
        j, t = int(row["job"]), float(row["time"])
        stop = runs.get((j, t), end)
        if stop > t:
            occupancy.append(Occupancy(int(row["node"]), j, t, stop))
    job_spans.sort(key=lambda s: (s.job, s.start))
    markers.sort(key=lambda m: (m.job, m.time))
    occupancy.sort(key=lambda o: (o.node, o.start))

    prov = provenance(res)
    counts = {s: sum(1 for x in node_spans if x.state == s) for s in NODE_STATE_COLORS}
    failures = sum(1 for m in markers if m.kind == "failure")
    if found is None:
        q_note = " This result was saved before its node events recorded quarantines" + (
            f": its {recorded} quarantine(s) are not told apart from repairs."
            if recorded
            else " (it recorded none)."
        )
    elif found:
        q_note = f" {found} quarantine(s) from the node events" + (
            f" ({retired} for good)." if retired else "."
        )
    else:
        q_note = ""
    if refused is not None:
        q_note += (
            f" The run's fleet was not rebuilt from the result: it names the user callable "
            f"{refused!r}, which a figure never resolves (acesim.provenance.reproduce resolves "
            "it with trust=True); the nodes drawn are those in the record."
        )
    default_caption = (
        f"Replica {rep}: {n_nodes} nodes"
        + (" (those in the record)" if nodes is None else "")
        + f" and {jobs.size} jobs over {_duration(end)}. Node lanes: "
        f"out of service (down {counts['down'] + counts['down_or_quarantined']}, quarantined "
        f"{counts['quarantined']}, maintenance {counts['maintenance']} spans) and the jobs "
        f"running on them; job lanes: queued, running, fault to detection, waiting; "
        f"{failures} job failure(s) marked.{q_note}" + _sentence(prov.describe())
    )
    title_, _ = _text("title", title, _titled("Fleet timeline", prov.scenario))
    caption_, _ = _text("caption", caption, default_caption)
    return TimelineData(
        replica=rep,
        nodes=tuple(range(n_nodes)),
        node_spans=tuple(node_spans),
        occupancy=tuple(occupancy),
        jobs=tuple(int(j) for j in jobs["job"]),
        gpus=tuple(int(g) for g in jobs["gpus"]),
        job_spans=tuple(job_spans),
        markers=tuple(markers),
        end=end,
        quarantines=found,
        recorded_quarantines=recorded,
        title=title_,
        caption=caption_,
        labels=tuple(_job_label(res, int(j)) for j in jobs["job"]),
    )


def _lane_ticks(ax: Axes, count: int, prefix: str, labels: Sequence[str] | None = None) -> None:
    step = max(1, math.ceil(count / 30))
    ticks = list(range(0, count, step))
    ax.set_yticks(ticks, [labels[i] if labels else f"{prefix} {i}" for i in ticks], fontsize=7)
    ax.set_ylim(count - 0.5, -0.5)


def _draw_node_lanes(ax: Axes, data: TimelineData, size: float) -> None:
    from matplotlib.patches import Patch

    handles: list[Any] = []
    for state, color in NODE_STATE_COLORS.items():
        spans = [s for s in data.node_spans if s.state == state]
        for node in sorted({s.node for s in spans}):
            bars = [(s.start / size, (s.end - s.start) / size) for s in spans if s.node == node]
            ax.broken_barh(bars, (node - 0.45, 0.9), facecolors=color)
        if spans:
            handles.append(Patch(color=color, label=_NODE_STATE_LABELS[state]))
    index = {j: k for k, j in enumerate(data.jobs)}
    for node in sorted({o.node for o in data.occupancy}):
        mine = [o for o in data.occupancy if o.node == node]
        ax.broken_barh(
            [(o.start / size, (o.end - o.start) / size) for o in mine],
            (node - 0.25, 0.5),
            facecolors=[_JOB_COLORS[index.get(o.job, o.job) % len(_JOB_COLORS)] for o in mine],
        )
    if data.occupancy:
        handles.append(Patch(color=_JOB_COLORS[0], label="a job running (colour: job)"))
    _lane_ticks(ax, len(data.nodes), "node")
    ax.set_ylabel("nodes")
    ax.grid(axis="x", alpha=0.3)
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _draw_job_lanes(ax: Axes, data: TimelineData, size: float, unit: str) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    lane = {j: k for k, j in enumerate(data.jobs)}
    for state in ("queued", "waiting", "detecting", "running"):
        spans = [s for s in data.job_spans if s.state == state]
        for job in sorted({s.job for s in spans}):
            k = lane[job]
            color = (
                _JOB_COLORS[k % len(_JOB_COLORS)]
                if state == "running"
                else _JOB_STATE_COLORS[state]
            )
            ax.broken_barh(
                [(s.start / size, (s.end - s.start) / size) for s in spans if s.job == job],
                (k - 0.35, 0.7),
                facecolors=color,
                edgecolors={"queued": "#777777", "running": "white"}.get(state, "none"),
                linewidth=0.6,
            )
    present = {s.state for s in data.job_spans}
    handles: list[Any] = [
        Patch(
            color=_JOB_COLORS[0] if state == "running" else _JOB_STATE_COLORS[state],
            label=label,
        )
        for state, label in _JOB_STATE_LABELS.items()
        if state in present
    ]
    for kind, (marker, color, label) in _MARKERS.items():
        mine = [m for m in data.markers if m.kind == kind and m.job in lane]
        if not mine:
            continue
        ax.scatter(
            [m.time / size for m in mine],
            [lane[m.job] for m in mine],
            marker=marker,
            color=color,
            s=30,
            zorder=3,
            linewidths=1.2,
        )
        handles.append(
            Line2D([], [], marker=marker, color=color, ls="none", label=label, markersize=6)
        )
    names = data.labels or tuple(f"job {j}" for j in data.jobs)
    labels = [f"{n} ({g} GPUs)" for n, g in zip(names, data.gpus, strict=True)]
    _lane_ticks(ax, len(data.jobs), "job", labels)
    ax.set_ylabel("jobs")
    ax.set_xlabel(f"time ({unit})")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def fleet_timeline(
    res: SimulationResult,
    *,
    replica: int | None = None,
    quarantine: Quarantine | Policy | None = None,
    nodes: int | None = None,
    ax: AxesArg = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """One replica's fleet over time: node lanes (down, quarantined, in
    maintenance, and the jobs running on each node) above job lanes (a Gantt
    chart: queued, running, fault to detection, waiting, with failures and
    other interruptions marked). See :func:`fleet_timeline_data`; ``ax``: a
    pair of axes (nodes, jobs); ``quarantine``: deprecated and ignored."""
    _no_quarantine_argument(quarantine)
    data = fleet_timeline_data(res, replica=replica, nodes=nodes, title=title, caption=caption)
    own = ax is None
    if ax is None:
        n_nodes, n_jobs = max(len(data.nodes), 1), max(len(data.jobs), 1)
        node_h = min(5.5, 0.6 + 0.16 * n_nodes)
        job_h = min(5.5, 0.6 + 0.22 * n_jobs)
        fig = _new_figure(10.0, 1.6 + node_h + job_h)
        ax_nodes, ax_jobs = fig.subplots(2, 1, sharex=True, height_ratios=[node_h, job_h])
    else:
        if not (isinstance(ax, Sequence) and len(ax) == 2):
            raise TypeError("ax must be a pair of axes (node lanes, job lanes) or None")
        ax_nodes, ax_jobs = ax
        fig = _root(ax_nodes.figure)
    size, unit = _unit(data.end)
    _draw_node_lanes(ax_nodes, data, size)
    _draw_job_lanes(ax_jobs, data, size, unit)
    ax_jobs.set_xlim(0.0, data.end / size if data.end > 0 else 1.0)
    ax_nodes.set_xlim(0.0, data.end / size if data.end > 0 else 1.0)
    return _finish(fig, [ax_nodes, ax_jobs], own, data.title, data.caption, caption is not None)


# -------------------------------------------------------- policy comparison


@dataclass(frozen=True)
class PolicyComparisonData:
    """What :func:`policy_comparison` draws: each result's pooled ETTR with
    its interval at level ``ci`` (``ettr``), and, when ``paired``, each
    result's paired difference ``result - baseline`` of the pooled ETTR
    (:func:`acesim.compare`; ``None`` for the baseline itself). ``reason``
    says why there are no differences when ``paired`` is false."""

    names: tuple[str, ...]
    baseline: str
    ettr: tuple[Estimate, ...]
    differences: tuple[Difference | None, ...]
    paired: bool
    reason: str
    ci: float
    title: str
    caption: str


def policy_comparison_data(
    results: Mapping[str, SimulationResult],
    *,
    baseline: str | None = None,
    ci: float = 0.95,
    differences: bool | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> PolicyComparisonData:
    """Pooled ETTR of named results with their intervals, and the paired
    differences against ``baseline`` (default: the first). ``differences``:
    ``None`` computes them when every result pairs with the baseline (same
    seed and replicas: common random numbers), ``True`` requires them (the
    ValueError of :func:`acesim.compare` otherwise), ``False`` leaves them
    out."""
    named = _as_results(results)
    level = _level(ci)
    base = next(iter(named)) if baseline is None else str(baseline)
    if base not in named:
        raise ValueError(f"baseline {base!r} is not one of the results: {', '.join(named)}")
    estimates = tuple(_quiet_ettr(res, level) for res in named.values())
    diffs: list[Difference | None] = []
    reason = ""
    paired = differences is not False and len(named) > 1
    if differences is False:
        reason = "differences not asked for"
    elif len(named) == 1:
        reason = "one result: nothing to compare"
    if paired:
        b = named[base]
        for name, res in named.items():
            if name == base:
                diffs.append(None)
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SingleReplicaWarning)
                    diffs.append(compare(b, res, ci=level)["ettr"])
            except ValueError as exc:
                if differences:
                    raise
                paired, reason = False, f"not paired with the baseline ({exc})"
                break
    if not paired:
        diffs = [None] * len(named)
    text = "; ".join(
        f"{name} {e.value:.4f}" + (f" [{e.low:.4f}, {e.high:.4f}]" if math.isfinite(e.low) else "")
        for name, e in zip(named, estimates, strict=True)
    )
    if paired:
        diff_text = (
            " Paired differences from "
            + base
            + ": "
            + "; ".join(
                f"{name} {d.diff:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{' *' if d.significant else ''}"
                for name, d in zip(named, diffs, strict=True)
                if d is not None
            )
        )
        diff_text += " (* the interval excludes 0; common random numbers, replica by replica)."
    else:
        diff_text = f" No paired differences: {reason}." if len(named) > 1 else ""
    default_caption = (
        f"Pooled ETTR with {_pct(level)} confidence intervals: {text}.{diff_text} "
        + _sentence(_describe_all(named))
    )
    title_, _ = _text("title", title, _titled("Policy comparison", _scenario_of(named)))
    caption_, _ = _text("caption", caption, default_caption)
    return PolicyComparisonData(
        names=tuple(named),
        baseline=base,
        ettr=estimates,
        differences=tuple(diffs),
        paired=paired,
        reason=reason,
        ci=level,
        title=title_,
        caption=caption_,
    )


def _draw_comparison(ax: Axes, data: PolicyComparisonData) -> None:
    y = np.arange(len(data.names))
    for k, (name, e) in enumerate(zip(data.names, data.ettr, strict=True)):
        color = _SERIES[k % len(_SERIES)]
        err = [[e.value - e.low], [e.high - e.value]] if math.isfinite(e.low) else None
        ax.errorbar([e.value], [k], xerr=err, fmt="o", color=color, capsize=4, ms=6)
        ax.annotate(
            f"{e.value:.4f}",
            (e.value, k),
            xytext=(0, 7),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
        if name == data.baseline:
            ax.axvline(e.value, color=color, lw=0.8, ls=":")
    ax.set_yticks(y, list(data.names))
    ax.set_ylim(len(data.names) - 0.5, -0.5)
    ax.set_xlabel(f"pooled ETTR ({_pct(data.ci)} CI)")
    ax.grid(axis="x", alpha=0.3)


def _draw_differences(ax: Axes, data: PolicyComparisonData) -> None:
    ax.axvline(0.0, color=_BLACK, lw=0.8)
    for k, (name, d) in enumerate(zip(data.names, data.differences, strict=True)):
        if d is None:
            ax.annotate(
                "baseline" if name == data.baseline else "",
                (0.0, k),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
                color="#555555",
            )
            continue
        color = _SERIES[k % len(_SERIES)]
        err = [[d.diff - d.low], [d.high - d.diff]] if math.isfinite(d.low) else None
        ax.errorbar(
            [d.diff],
            [k],
            xerr=err,
            fmt="o",
            mfc=color if d.significant else "white",
            color=color,
            capsize=4,
            ms=6,
        )
        ax.annotate(
            f"{d.diff:+.4f}{' *' if d.significant else ''}",
            (d.diff, k),
            xytext=(0, 7),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
    ax.set_ylim(len(data.names) - 0.5, -0.5)
    ax.set_xlabel(f"ETTR - {data.baseline} (paired, {_pct(data.ci)} CI; filled: excludes 0)")
    ax.grid(axis="x", alpha=0.3)
    if not data.paired:
        ax.text(
            0.5,
            0.5,
            "no paired differences:\n" + textwrap.fill(data.reason, 40),
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="#555555",
        )


def policy_comparison(
    results: Mapping[str, SimulationResult],
    *,
    baseline: str | None = None,
    ci: float = 0.95,
    differences: bool | None = None,
    ax: AxesArg = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """Two panels: the pooled ETTR of each named result with its interval,
    and its paired difference from the baseline with its interval (see
    :func:`policy_comparison_data`). ``ax``: a pair of axes, or one axes
    for the first panel alone (the differences are then in the caption)."""
    data = policy_comparison_data(
        results, baseline=baseline, ci=ci, differences=differences, title=title, caption=caption
    )
    own = ax is None
    height = 1.8 + 0.45 * len(data.names)
    if ax is None:
        fig = _new_figure(10.0, height)
        first, second = fig.subplots(1, 2, sharey=True)
    elif isinstance(ax, Sequence):
        if len(ax) != 2:
            raise TypeError("ax must be an axes, a pair of axes or None")
        first, second = ax
        fig = _root(first.figure)
    else:
        first, second = ax, None
        fig = _root(first.figure)
    _draw_comparison(first, data)
    if second is not None:
        _draw_differences(second, data)
    return _finish(fig, first, own, data.title, data.caption, caption is not None)


# ------------------------------------------------------------ the MTBF sweep


@dataclass(frozen=True)
class SweepData:
    """What :func:`mtbf_sweep` draws: pooled ETTR (with its interval where
    given: ``low``, ``high``, else nan) against the mean time between
    failures (seconds)."""

    mtbf: npt.NDArray[np.float64]
    ettr: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    title: str
    caption: str


def mtbf_sweep_data(
    sweep: Iterable[tuple[float, float | Estimate]],
    *,
    title: str | None = None,
    caption: str | None = None,
) -> SweepData:
    """``sweep``: pairs ``(mtbf, ettr)``, the ETTR a number or an
    :class:`acesim.Estimate` ``(value, low, high)`` (``res.ettr()``)."""
    mtbf, value, low, high = [], [], [], []
    for k, item in enumerate(sweep):
        m, e = item
        mtbf.append(float(m))
        if isinstance(e, tuple):
            value.append(float(e[0]))
            low.append(float(e[1]))
            high.append(float(e[2]))
        else:
            value.append(float(e))
            low.append(math.nan)
            high.append(math.nan)
        if not mtbf[-1] > 0:
            raise ValueError(f"sweep[{k}]: the mtbf must be > 0, got {m!r}")
    if not mtbf:
        raise ValueError("sweep must not be empty")
    order = np.argsort(mtbf)
    caption_, _ = _text(
        "caption",
        caption,
        "Pooled ETTR of the same job under exponential failures from rare to frequent: "
        + ", ".join(f"MTBF {_duration(mtbf[i])} {value[i]:.4f}" for i in order.tolist())
        + ".",
    )
    title_, _ = _text("title", title, "Rare to frequent failures")
    return SweepData(
        mtbf=np.asarray(mtbf)[order],
        ettr=np.asarray(value)[order],
        low=np.asarray(low)[order],
        high=np.asarray(high)[order],
        title=title_,
        caption=caption_,
    )


def _draw_sweep(ax: Axes, data: SweepData) -> None:
    x = data.mtbf / HOUR
    if np.all(np.isfinite(data.low)):
        ax.fill_between(x, data.low, data.high, color=_BLUE, alpha=0.25, label="95% CI")
    ax.plot(x, data.ettr, "o-", color=_BLUE, label="pooled ETTR")
    for xi, yi in zip(x, data.ettr, strict=True):
        ax.annotate(
            f"{yi:.3f}",
            (xi, yi),
            xytext=(0, 6),
            textcoords="offset points",
            fontsize=7,
            ha="center",
        )
    ax.set_xscale("log")
    _plain_log_axis(ax.xaxis)
    ax.set_xlabel("MTBF (h)")
    ax.set_ylabel("pooled ETTR")
    ax.grid(alpha=0.3, which="both")


def mtbf_sweep(
    sweep: Iterable[tuple[float, float | Estimate]],
    *,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """Pooled ETTR against the MTBF (see :func:`mtbf_sweep_data`)."""
    data = mtbf_sweep_data(sweep, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(6.0, 4.2)
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_sweep(ax, data)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)


# -------------------------------------------------------------- demo figure


@dataclass(frozen=True)
class DemoFigureData:
    """The three panels of :func:`demo_figure` and its texts."""

    breakdown: BreakdownData
    sweep: SweepData
    interval: IntervalCurveData
    title: str
    caption: str


def demo_figure_data(
    res: SimulationResult,
    sweep: Iterable[tuple[float, float | Estimate]],
    best: OptimalInterval,
    *,
    chosen: float | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> DemoFigureData:
    """The data of ``acesim demo``'s figure: the breakdown of ``res``, the
    MTBF ``sweep`` and the interval curve of ``best`` (``chosen`` marked)."""
    breakdown = ettr_breakdown_data(res, title="Where the wall-clock goes")
    sweep_data = mtbf_sweep_data(sweep)
    interval = interval_curve_data(best, chosen=chosen, title="Checkpoint interval")
    prov = provenance(res)
    job = res.jobs[0] if res.jobs.size else None
    what = f"{int(job['gpus']):,} GPUs" if job is not None else ""
    title_, _ = _text(
        "title", title, _titled("acesim demo" + (f" ({what})" if what else ""), prov.scenario)
    )
    caption_, _ = _text(
        "caption",
        caption,
        f"Left: {breakdown.caption} Middle: {sweep_data.caption} Right: {interval.caption}",
    )
    return DemoFigureData(breakdown, sweep_data, interval, title_, caption_)


def demo_figure(
    res: SimulationResult,
    sweep: Iterable[tuple[float, float | Estimate]],
    best: OptimalInterval,
    *,
    chosen: float | None = None,
    ax: Sequence[Axes] | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """``acesim demo``'s figure: where the wall-clock goes (``res``), the
    ETTR from rare to frequent failures (``sweep``: ``(mtbf, ettr)`` pairs)
    and the checkpoint-interval curve (``best``, with ``chosen`` marked);
    ``ax``: three axes."""
    data = demo_figure_data(res, sweep, best, chosen=chosen, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(16.0, 5.6)
        axes = list(fig.subplots(1, 3, width_ratios=[1.1, 0.9, 1.2]))
    else:
        if len(ax) != 3:
            raise TypeError("ax must be three axes or None")
        axes = list(ax)
        fig = _root(axes[0].figure)
    _draw_breakdown(axes[0], data.breakdown)
    _draw_sweep(axes[1], data.sweep)
    _draw_interval_curve(axes[2], data.interval)
    for a, name in zip(
        axes, (data.breakdown.title, data.sweep.title, data.interval.title), strict=True
    ):
        a.set_title(name, fontsize=10)
    if own:
        _label(fig, data.title, data.caption)
    elif caption is not None and caption:
        _label(fig, "", caption)
    return fig


# ------------------------------------------------------- sensitivity figures


@dataclass(frozen=True)
class SensitivityData:
    """What :func:`sensitivity_figure` draws: the factors, most influential
    first, and per measure (``mu_star`` and ``sigma`` for Morris, ``first``
    and ``total`` for Sobol) the values and interval bounds in that order."""

    method: str
    factors: tuple[str, ...]
    measures: tuple[str, ...]
    value: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    title: str
    caption: str


_SENSITIVITY_MEASURES = {"morris": ("mu_star", "sigma"), "sobol": ("first", "total")}
_SENSITIVITY_LABELS = {
    "mu_star": "mu* (mean |elementary effect|)",
    "sigma": "sigma (non-linearity, interactions)",
    "first": "first-order S",
    "total": "total ST",
}


def sensitivity_data(
    result: Any, *, title: str | None = None, caption: str | None = None
) -> SensitivityData:
    """The figure of an :class:`acesim.SensitivityResult` (its ``method``,
    ``indices``, ``objective``, ``ci``, ``runs``, ``replicas`` and ``seed``)."""
    method = getattr(result, "method", None)
    if method not in _SENSITIVITY_MEASURES:
        raise TypeError(f"result must be an acesim.SensitivityResult, got {type(result).__name__}")
    table = result.indices
    order = np.argsort(table["rank"], kind="stable")
    measures = _SENSITIVITY_MEASURES[method]
    value = np.array([table[m][order] for m in measures], dtype=np.float64)
    low = np.array([table[f"{m}_low"][order] for m in measures], dtype=np.float64)
    high = np.array([table[f"{m}_high"][order] for m in measures], dtype=np.float64)
    factors = tuple(str(f) for f in table["factor"][order])
    pct = _pct(float(result.ci))
    if method == "morris":
        default_title = f"Which factors move {result.objective} (Morris screening)"
        what = (
            "Mean absolute elementary effect mu* of each factor (the objective's change across "
            "the factor's whole range), most influential on top, and sigma, the effects' spread"
        )
    else:
        default_title = f"Which factors move {result.objective} (Sobol indices)"
        what = (
            "First-order S (the share of the objective's variance the factor explains alone) "
            "and total ST (with its interactions) of each factor, most influential on top"
        )
    caption_, _ = _text(
        "caption",
        caption,
        f"{what}; bars end at the estimate, whiskers span its {pct} bootstrap interval. "
        f"{result.runs} runs of {result.replicas} replicas each, seed {result.seed} "
        "(common random numbers).",
    )
    title_, _ = _text("title", title, default_title)
    return SensitivityData(method, factors, measures, value, low, high, title_, caption_)


def _draw_sensitivity(ax: Axes, data: SensitivityData) -> None:
    n = len(data.factors)
    y = np.arange(n)[::-1].astype(np.float64)  # the most influential on top
    count = len(data.measures)
    height = 0.8 / count
    colors = (_BLUE, _ORANGE)
    for j, measure in enumerate(data.measures):
        offset = (j - (count - 1) / 2) * height
        value, low, high = data.value[j], data.low[j], data.high[j]
        err = np.vstack([np.maximum(value - low, 0.0), np.maximum(high - value, 0.0)])
        ax.barh(
            y - offset,
            value,
            height=height * 0.9,
            color=colors[j % len(colors)],
            xerr=err,
            capsize=3,
            label=_SENSITIVITY_LABELS[measure],
        )
    ax.set_yticks(y)
    ax.set_yticklabels(data.factors, fontsize=8)
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_xlabel("elementary effect" if data.method == "morris" else "share of variance")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3, axis="x")


def sensitivity_figure(
    result: Any,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    caption: str | None = None,
) -> Figure:
    """A tornado of a Morris screening (mu* and sigma per factor, the most
    influential on top) or the bars of Sobol first-order and total indices,
    with their bootstrap intervals (see :func:`sensitivity_data`)."""
    data = sensitivity_data(result, title=title, caption=caption)
    own = ax is None
    if ax is None:
        fig = _new_figure(7.0, 1.6 + 0.45 * len(data.factors) * len(data.measures))
        ax = fig.add_subplot()
    else:
        fig = _root(ax.figure)
    _draw_sensitivity(ax, data)
    return _finish(fig, ax, own, data.title, data.caption, caption is not None)
