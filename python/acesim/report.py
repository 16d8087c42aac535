"""A self-contained HTML report of simulation results (needs the ``plot``
extra: matplotlib).

:func:`write_report` writes one HTML file that opens anywhere, offline: the
figures of :mod:`acesim.plot` are embedded as base64 PNG images, the
summaries are HTML tables, and the page loads nothing else (no scripts, no
style sheets, fonts or images from elsewhere; its content security policy
forbids them). Every text that comes from the results (names, provenance)
is escaped.

What it holds, for a result or for each of several named results:

* a summary table (pooled ETTR with its confidence interval, the time
  buckets' shares, failures, completions, GPU-hours lost);
* the ETTR breakdown and, with two or more replicas, the per-replica ETTR
  distribution;
* with several results, the policy comparison: pooled ETTR with intervals
  and the paired differences from the first result (the baseline), as a
  figure and a table of every metric of :func:`acesim.compare`, when the
  results share their seed and replicas;
* for each result of a fleet run with the event log (node events), the
  fleet timeline of its first replica;
* with ``optimal`` (an :func:`acesim.optimal_interval` result) or
  ``sweep`` (a sweep's grid table over the interval), the
  checkpoint-interval curve;
* a table per result of its jobs, when it has several: each by its name
  (``Job.name``), with its own breakdown (its buckets' shares);
* last, each result's provenance, collapsed (the result's ``provenance``
  dict when it has one, with the paths in it relative to the scenario's
  folder; else its seed and replicas).

Where a figure is not drawn (one replica, one result, no interval search,
no event log of a fleet run) a sentence in its place says why. Jobs are
named by their names in the tables and the timelines' lanes, results by
the names given (the command line's ``acesim report`` names them by their
scenarios).

>>> import acesim as ace, tempfile, pathlib
>>> res = ace.simulate(ace.Job(8, work=ace.DAY, checkpoint_interval=ace.HOUR),
...                    ace.Exponential(12 * ace.HOUR), replicas=10, seed=1)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "report.html"
>>> ace.report.write_report(res, path, title="Hourly checkpoints") == path
True
>>> "<script" in path.read_text()
False
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import struct
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _atomic, plot
from .optimize import OptimalInterval
from .policy import Policy, Quarantine
from .search import TuneResult
from .simulation import BUCKETS, SimulationResult
from .stats import METRICS, SingleReplicaWarning, compare
from .units import HOUR

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "report_html",
    "sensitivity_report_html",
    "tune_report_html",
    "write_report",
    "write_sensitivity_report",
    "write_tune_report",
]

#: Jobs listed per result in a report's job table (the rest are counted).
MAX_JOB_ROWS = 50

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1d1d1d; background: #fff; margin: 0; }
main { max-width: 1240px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid #ddd;
     padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .4rem; }
p.lead { color: #555; margin: 0 0 1rem; }
nav ol { columns: 2; margin: .25rem 0 0; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
caption { text-align: left; color: #555; padding-bottom: .3rem; }
th, td { border: 1px solid #d6d6d6; padding: .25rem .5rem; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
tr.chosen td { font-weight: 600; background: #fdecea; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
figure { margin: 1rem 0 1.5rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: .88rem; margin-top: .3rem; }
pre { background: #f7f7f7; border: 1px solid #e3e3e3; padding: .5rem; overflow-x: auto;
      font-size: .8rem; }
.note { color: #555; font-size: .9rem; }
footer { color: #777; font-size: .8rem; margin-top: 3rem; }
"""


def _e(value: Any) -> str:
    """Text escaped for HTML (content and attribute values)."""
    return html.escape(str(value), quote=True)


def _num(value: float, digits: int = 4) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.{digits}f}"


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.2%}"


def _png(fig: Figure, dpi: int) -> tuple[str, int, int]:
    """The figure as base64 PNG with its pixel size (from the PNG header)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    data = buffer.getvalue()
    width, height = struct.unpack(">II", data[16:24])
    return base64.b64encode(data).decode("ascii"), int(width), int(height)


class _Page:
    """The report under construction: sections of HTML and their headings."""

    def __init__(self, dpi: int) -> None:
        self.dpi = dpi
        self.parts: list[str] = []
        self.contents: list[tuple[str, str]] = []
        self.figures = 0

    def section(self, anchor: str, heading: str) -> None:
        self.contents.append((anchor, heading))
        self.parts.append(f'<h2 id="{_e(anchor)}">{_e(heading)}</h2>')

    def add(self, text: str) -> None:
        self.parts.append(text)

    def html(self, heading: str, lead: str | None = None) -> str:
        """The whole page: its head, heading, lead paragraph (when given),
        contents, sections and footer."""
        from . import __version__  # (the package's: imported once it is loaded)

        contents = "".join(f'<li><a href="#{_e(a)}">{_e(h)}</a></li>' for a, h in self.contents)
        lead_html = f'<p class="lead">{_e(lead)}</p>' if lead is not None else ""
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<link rel="icon" href="data:,">'
            f"<title>{_e(heading)}</title><style>{_STYLE}</style></head>\n<body><main>"
            f"<h1>{_e(heading)}</h1>{lead_html}"
            f'<nav aria-label="contents"><ol>{contents}</ol></nav>\n'
            + "\n".join(self.parts)
            + f"\n<footer>Written by acesim {_e(__version__)}: one self-contained file, "
            f"{self.figures} figure{'s' if self.figures != 1 else ''} embedded, no scripts."
            "</footer></main></body></html>\n"
        )

    def figure(self, fig: Figure, caption: str, alt: str) -> None:
        data, width, height = _png(fig, self.dpi)
        self.figures += 1
        self.parts.append(
            f'<figure id="figure-{self.figures}">'
            f'<img src="data:image/png;base64,{data}" width="{width}" height="{height}" '
            f'alt="{_e(alt)}">'
            f"<figcaption>Figure {self.figures}. {_e(caption)}</figcaption></figure>"
        )


def _table(
    headers: list[str], rows: list[list[tuple[str, bool]]], caption: str | None = None
) -> str:
    """An HTML table; each cell is (text, numeric); every text is escaped."""
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            (f'<td class="num">{_e(text)}</td>' if numeric else f"<td>{_e(text)}</td>")
            for text, numeric in row
        )
        + "</tr>"
        for row in rows
    )
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _shown_buckets(results: Mapping[str, SimulationResult]) -> list[str]:
    data = plot.ettr_breakdown_data(results)
    return list(data.shown)


def _summary(page: _Page, results: Mapping[str, SimulationResult], ci: float) -> None:
    shown = _shown_buckets(results)
    headers = ["result", "replicas", "seed", "jobs", f"ETTR ({plot._pct(ci)} CI)"]
    headers += [f"{b} share" for b in shown]
    headers += ["failures / replica", "jobs completed", "GPU-h lost / replica"]
    rows = []
    for name, res in results.items():
        e = plot._quiet_ettr(res, ci)
        s = res.summary()
        prov = plot.provenance(res)
        interval = f" [{_num(e.low)}, {_num(e.high)}]" if math.isfinite(e.low) else " (one replica)"
        row = [
            (name, False),
            (str(prov.replicas), True),
            ("n/a" if prov.seed is None else str(prov.seed), True),
            (str(int(np.unique(res.jobs["job"]).size)), True),
            (_num(e.value) + interval, True),
        ]
        row += [(_pct(s[b]), True) for b in shown]
        row += [
            (_num(s["failures_per_replica"], 2), True),
            (_pct(s["completed"]), True),
            (f"{s['gpu_hours_lost_per_replica']:,.1f}", True),
        ]
        rows.append(row)
    hidden = [b for b in BUCKETS if b not in shown]
    page.add(
        _table(
            headers,
            rows,
            "Pooled over replicas, GPU-weighted over jobs; shares of wall-clock"
            + (f" (zero in every result: {', '.join(hidden)})" if hidden else "")
            + ".",
        )
    )


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for key, item in value.items():
            out += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    return [(prefix, json.dumps(value, default=str) if not isinstance(value, str) else value)]


#: Provenance entries shown as blocks, not table rows.
_PROVENANCE_BLOCKS = ("scenario", "arguments", "batch_arguments", "fleet_model", "calls")


def _shorten(value: Any, limit: int = 120) -> Any:
    """JSON data with long strings (an array's base64) cut for display."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}... ({len(value)} characters)"
    if isinstance(value, list):
        return [_shorten(v, limit) for v in value]
    if isinstance(value, Mapping):
        return {k: _shorten(v, limit) for k, v in value.items()}
    return value


def _relative(value: Any, folder: Path | None) -> Any:
    """JSON data with every absolute path under ``folder`` (the scenario's)
    written relative to it."""
    if folder is None:
        return value
    if isinstance(value, str) and os.path.isabs(value):
        try:
            inside = Path(value).resolve().is_relative_to(folder)
        except (OSError, ValueError):
            return value
        return os.path.relpath(value, folder) if inside else value
    if isinstance(value, list):
        return [_relative(v, folder) for v in value]
    if isinstance(value, Mapping):
        return {k: _relative(v, folder) for k, v in value.items()}
    return value


def _provenance(page: _Page, results: Mapping[str, SimulationResult]) -> None:
    """Each result's provenance, collapsed (one ``<details>`` per result),
    with the paths in it relative to the scenario's folder."""
    for name, res in results.items():
        raw = getattr(res, "provenance", None)
        parts: list[str] = []
        if isinstance(raw, Mapping) and raw:
            source = raw.get("source")
            folder = (
                Path(source).resolve().parent
                if isinstance(source, str) and os.path.isabs(source)
                else None
            )
            raw = _relative(dict(raw), folder)
            scalars = {k: v for k, v in raw.items() if k not in _PROVENANCE_BLOCKS}
            rows = [[(k, False), (v, False)] for k, v in _flatten(scalars)]
            if folder is not None:
                rows.append([("paths relative to", False), (str(folder), False)])
            if rows:
                parts.append(_table(["field", "value"], rows))
            scenario = raw.get("scenario")
            if scenario is not None:
                text = json.dumps(scenario, indent=2, sort_keys=True, default=str)
                parts.append(f"<p>Scenario:</p><pre>{_e(text)}</pre>")
            for key in ("arguments", "batch_arguments", "fleet_model", "calls"):
                if raw.get(key) is not None:
                    text = json.dumps(_shorten(raw[key]), indent=1, sort_keys=True, default=str)
                    parts.append(
                        f"<details><summary>{_e(key)} (JSON data: "
                        "acesim.provenance.reproduce runs them again; long arrays shortened "
                        f"here)</summary><pre>{_e(text)}</pre></details>"
                    )
            summary = f"{name}: how it was made (versions, seed, scenario)"
        else:
            prov = plot.provenance(res)
            parts.append(
                f'<p class="note">No provenance recorded with this result: from the result '
                f"itself, seed {_e(prov.seed)}, {_e(prov.replicas)} replicas.</p>"
            )
            summary = f"{name}: no provenance recorded"
        page.add(f"<details><summary>{_e(summary)}</summary>{''.join(parts)}</details>")


def _comparison_table(page: _Page, results: Mapping[str, SimulationResult], ci: float) -> None:
    names = list(results)
    base = results[names[0]]
    shown = set(_shown_buckets(results))
    metrics = [m for m in METRICS if m == "ettr" or m in shown]
    columns = []
    for name in names[1:]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingleReplicaWarning)
            columns.append(compare(base, results[name], ci=ci))
    rows = []
    for metric in metrics:
        row = [(metric, False), (_num(columns[0][metric].a), True)]
        for c in columns:
            d = c[metric]
            interval = (
                f" [{d.low:+.4f}, {d.high:+.4f}]{' *' if d.significant else ''}"
                if math.isfinite(d.low)
                else ""
            )
            row.append((f"{d.b:.4f} ({d.diff:+.4f}{interval})", True))
        rows.append(row)
    page.add(
        _table(
            ["metric", f"{names[0]} (baseline)", *names[1:]],
            rows,
            f"Each result's value and its paired difference from {names[0]} "
            f"with its {plot._pct(ci)} interval (common random numbers: replica by replica; "
            "buckets as shares of GPU-hours; * the interval excludes 0).",
        )
    )


def _jobs_table(page: _Page, name: str, res: SimulationResult, shown: list[str]) -> None:
    """Per job (by its name where it has one), over replicas: its ETTR,
    where its GPU-hours went (the ``shown`` buckets' shares of its wall),
    completion, wall, failures and preemptions."""
    jobs = res.jobs
    ids = np.unique(jobs["job"])
    rows = []
    for j in ids[:MAX_JOB_ROWS]:
        mine = jobs[jobs["job"] == j]
        g = mine["gpus"].astype(np.float64)
        wall = float(np.sum(g * mine["wall"]))
        shares = [
            (_pct(float(np.sum(g * mine[b])) / wall) if wall > 0 else "n/a", True) for b in shown
        ]
        rows.append(
            [
                (plot._job_label(res, int(j)), False),
                (str(int(mine["gpus"][0])), True),
                (_num(res.pooled_ettr(job=int(j))), True),
                *shares,
                (_pct(float(np.mean(mine["completed"]))), True),
                (_num(float(np.mean(mine["wall"])) / HOUR, 2), True),
                (_num(float(np.mean(mine["failures"])), 2), True),
                (_num(float(np.mean(mine["preemptions"])), 2), True),
            ]
        )
    more = ids.size - min(ids.size, MAX_JOB_ROWS)
    page.add(f"<h3>{_e(name)}</h3>")
    page.add(
        _table(
            [
                "job",
                "GPUs",
                "pooled ETTR",
                *(f"{b} share" for b in shown),
                "completed",
                "mean wall (h)",
                "failures",
                "preemptions",
            ],
            rows,
            "Per job, over replicas; shares of the job's GPU-hours"
            + (f"; the first {MAX_JOB_ROWS} of {ids.size} jobs" if more else "")
            + ".",
        )
    )


def _absent(page: _Page, sentence: str) -> None:
    """Where a figure is not drawn: the sentence saying why."""
    page.add(f'<p class="note absent">{_e(sentence)}</p>')


def _has_timeline(res: SimulationResult) -> bool:
    return (
        res.node_events is not None
        and res.node_events.size > 0
        and res.placements is not None
        and res.events.size > 0
    )


def report_html(
    results: SimulationResult | Mapping[str, SimulationResult],
    *,
    title: str | None = None,
    optimal: OptimalInterval | None = None,
    chosen: float | None = None,
    quarantine: Quarantine | Policy | Mapping[str, Quarantine | Policy] | None = None,
    ci: float = 0.95,
    dpi: int = 100,
    sweep: Any = None,
) -> str:
    """The report's HTML text (see :func:`write_report`)."""
    plot._no_quarantine_argument(quarantine)

    plot._matplotlib()  # an ImportError naming the extra, before any work
    named = plot._as_results(results)
    level = plot._level(ci)
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 20 <= dpi <= 600:
        raise ValueError(f"dpi must be an integer in 20..600, got {dpi!r}")
    if optimal is not None and not isinstance(optimal, OptimalInterval):
        raise TypeError(f"optimal must be an OptimalInterval or None, got {type(optimal).__name__}")
    scenario = plot._scenario_of(named)
    heading = title if title is not None else plot._titled("acesim report", scenario)
    page = _Page(dpi)

    page.section("summary", "Summary")
    _summary(page, named, level)

    page.section("breakdown", "Where the wall-clock goes")
    breakdown = plot.ettr_breakdown_data(named, ci=level)
    page.figure(
        plot.ettr_breakdown(named, ci=level, caption=""), breakdown.caption, breakdown.title
    )

    page.section("replicas", "Per-replica ETTR")
    if any(plot._replicas_in(res) >= 2 for res in named.values()):
        dist = plot.replica_distribution_data(named)
        page.figure(plot.replica_distribution(named, caption=""), dist.caption, dist.title)
    else:
        _absent(page, "No per-replica distribution: every result has a single replica.")

    page.section("comparison", "Comparison")
    if len(named) == 1:
        _absent(
            page,
            "No comparison: it sets several results side by side (acesim report A B, "
            "write_report({name: result, ...})), and this report has one.",
        )
    else:
        comparison = plot.policy_comparison_data(named, ci=level)
        page.figure(
            plot.policy_comparison(named, ci=level, caption=""),
            comparison.caption,
            comparison.title,
        )
        if comparison.paired:
            _comparison_table(page, named, level)
        else:
            page.add(f'<p class="note">No paired differences: {_e(comparison.reason)}.</p>')

    page.section("interval", "Checkpoint interval")
    if optimal is not None:
        curve = plot.interval_curve_data(optimal, chosen=chosen, ci=level)
        fig = plot.interval_curve(optimal, chosen=chosen, ci=level, caption="")
        page.figure(fig, curve.caption, curve.title)
    if sweep is not None:
        along = plot.sweep_curve_data(sweep)
        page.figure(plot.sweep_curve(sweep, caption=""), along.caption, along.title)
    if optimal is None and sweep is None:
        _absent(
            page,
            "No interval curve: it comes from a search over checkpoint intervals "
            "(acesim.optimal_interval, given as optimal=; or a sweep of "
            "jobs[k].checkpoint_interval, acesim report --interval GRID), which these results "
            "are not.",
        )

    timelines = [(name, res) for name, res in named.items() if _has_timeline(res)]
    page.section("timeline", "Fleet timeline")
    if not timelines:
        logged = any(res.events.size > 0 for res in named.values())
        _absent(
            page,
            "No fleet timeline: it is drawn from the event log of a run on a fleet "
            "(record_events=True, acesim run --record-events) where nodes leave service, "
            + (
                "and in this run none does (its failures leave the nodes in service)."
                if logged and len(named) == 1
                else "which "
                + ("this result does not hold." if len(named) == 1 else "no result here holds.")
            ),
        )
    else:
        for name, res in timelines:
            label = "" if len(named) == 1 else name
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                data = plot.fleet_timeline_data(res)
                fig = plot.fleet_timeline(
                    res,
                    title=plot._titled("Fleet timeline", label or None),
                    caption="",
                )
            if label:
                page.add(f"<h3>{_e(label)}</h3>")
            for w in caught[:1]:
                page.add(f'<p class="note">Warning: {_e(w.message)}</p>')
            lanes = ", ".join(
                f"{label} ({g} GPUs)" for label, g in zip(data.labels, data.gpus, strict=True)
            )
            page.figure(fig, f"{data.caption} Job lanes, top to bottom: {lanes}.", data.title)
        missing = [name for name in named if name not in dict(timelines)]
        if missing:
            _absent(
                page,
                f"No fleet timeline for {', '.join(missing)}: no event log of a fleet run.",
            )

    multi = [(name, res) for name, res in named.items() if np.unique(res.jobs["job"]).size > 1]
    if multi:
        page.section("jobs", "Jobs")
        shown = _shown_buckets(named)
        for name, res in multi:
            _jobs_table(page, name, res, shown)

    page.section("provenance", "Provenance")
    _provenance(page, named)

    lead = (
        (
            f"{len(named)} results: {', '.join(named)} (the first is the baseline)."
            if len(named) > 1
            else ""
        )
        + plot._sentence(plot._describe_all(named))
    ).strip()
    return page.html(heading, lead)


def write_report(
    results: SimulationResult | Mapping[str, SimulationResult],
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    optimal: OptimalInterval | None = None,
    chosen: float | None = None,
    quarantine: Quarantine | Policy | Mapping[str, Quarantine | Policy] | None = None,
    ci: float = 0.95,
    dpi: int = 100,
    sweep: Any = None,
) -> Path:
    """Write a self-contained HTML report of ``results`` (a
    :class:`acesim.SimulationResult`, or a mapping of names to results, the
    first the comparison's baseline) to ``path`` and return the path.

    ``title``: the page's title (default: from the scenario's name);
    ``optimal``: an :class:`acesim.OptimalInterval` to draw the interval
    curve of (``chosen``: the job's interval, to mark); ``quarantine``:
    deprecated and ignored (the timelines read quarantines from each
    result's ``node_events``); ``sweep``: a sweep's grid table over a
    ``jobs[k].checkpoint_interval`` axis (the ``points`` table of ``acesim
    sweep --out``, :func:`acesim.results_io.load_tables`) to draw the
    interval curve of (:func:`acesim.plot.sweep_curve`); ``ci``: the confidence
    level; ``dpi``: the figures' resolution. Needs matplotlib (an
    ImportError naming ``pip install "acesim[plot]"`` otherwise).
    """
    plot._no_quarantine_argument(quarantine)
    text = report_html(
        results, title=title, optimal=optimal, chosen=chosen, ci=ci, dpi=dpi, sweep=sweep
    )
    out = Path(path)
    _atomic.replace_file(out, text)
    return out


def tune_report_html(result: TuneResult, *, title: str | None = None, dpi: int = 100) -> str:
    """The HTML text of a report of an :func:`acesim.tune` result: its
    probability statement, the candidates' figure and their table, the
    chosen candidate marked (see :func:`write_tune_report`)."""
    plot._matplotlib()
    if not isinstance(result, TuneResult):
        raise TypeError(f"result must be a TuneResult, got {type(result).__name__}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 20 <= dpi <= 600:
        raise ValueError(f"dpi must be an integer in 20..600, got {dpi!r}")
    heading = title if title is not None else "acesim tune"
    page = _Page(dpi)
    page.section("choice", "The choice")
    best = (
        "none (no candidate is feasible)"
        if result.best is None
        else ", ".join(f"{k} = {v}" for k, v in result.best.items())
    )
    estimate = ""
    if result.estimate is not None:
        e = result.estimate
        estimate = (
            f" Its {result.objective.name} on fresh replicas: {_num(e.value)} "
            f"[{_num(e.low)}, {_num(e.high)}] ({plot._pct(result.confidence)} CI)."
        )
    page.add(f"<p><strong>Chosen: {_e(best)}</strong>.{_e(estimate)}</p>")
    page.add(f"<p>{_e(result.statement)}</p>")
    page.section("candidates", "Candidates")
    fig = result.figure()
    page.figure(
        fig,
        f"Each candidate's mean {result.objective.name} with its interval on its own "
        "replicas; the chosen one in red, the ones eliminated in grey.",
        "candidates' estimates",
    )
    t = result.table
    headers = ["#", *result.paths, "estimate", "interval", "replicas", "status"]
    rows_html = []
    for row, values in zip(t, result.values, strict=True):
        if row["chosen"]:
            status = "chosen"
        elif row["eliminated"] >= 0:
            status = f"eliminated at replica {row['eliminated']}"
        elif row["feasible"] == 0:
            status = "infeasible"
        elif row["feasible"] == 1:
            status = "feasible"
        else:
            status = ""
        cells = [
            (str(row["candidate"]), True),
            *((str(values[p]), False) for p in result.paths),
            (_num(float(row["estimate"]), 5), True),
            (f"[{_num(float(row['low']), 5)}, {_num(float(row['high']), 5)}]", True),
            (str(row["replicas"]), True),
            (status, False),
        ]
        body = "".join(
            f'<td class="num">{_e(text)}</td>' if numeric else f"<td>{_e(text)}</td>"
            for text, numeric in cells
        )
        mark = ' class="chosen"' if row["chosen"] else ""
        rows_html.append(f"<tr{mark}>{body}</tr>")
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in headers)
    page.add(
        f'<div class="scroll"><table><caption>{_e(str(len(t)))} candidates, '
        f"{_e(str(result.replicas))} replicas in all</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows_html)}</tbody></table></div>"
    )
    return page.html(heading)


def write_tune_report(
    result: TuneResult, path: str | os.PathLike[str], *, title: str | None = None, dpi: int = 100
) -> Path:
    """Write a self-contained HTML report of an :func:`acesim.tune` result
    (``acesim report t.npz`` of ``acesim tune --out t.npz``) and return the
    path. Needs matplotlib."""
    text = tune_report_html(result, title=title, dpi=dpi)
    out = Path(path)
    _atomic.replace_file(out, text)
    return out


def sensitivity_report_html(result: Any, *, title: str | None = None, dpi: int = 100) -> str:
    """The HTML text of a report of an :class:`acesim.SensitivityResult`:
    what was run, the figure (:func:`acesim.plot.sensitivity_figure`), the
    indices with their intervals, each factor's range and the provenance."""
    plot._matplotlib()  # an ImportError naming the extra, before any work
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 20 <= dpi <= 600:
        raise ValueError(f"dpi must be an integer in 20..600, got {dpi!r}")
    data = plot.sensitivity_data(result)
    heading = title if title is not None else data.title
    page = _Page(dpi)
    what = "Morris elementary effects" if result.method == "morris" else "Sobol indices"
    lead = (
        f"{what} of {result.objective} over {len(result.factors)} factors: {result.runs} runs "
        f"of {result.replicas} replicas each, seed {result.seed} (common random numbers at "
        f"every point); {plot._pct(result.ci)} bootstrap intervals."
    )
    page.section("figure", "Which factors matter")
    page.figure(plot.sensitivity_figure(result, caption=""), data.caption, data.title)
    page.section("indices", "Indices")
    measures = [m for m in result.indices.dtype.names if m + "_low" in result.indices.dtype.names]
    ranges = dict(zip(result.factors, result.ranges, strict=True))
    rows = []
    for path in result.ranking:
        row = result.indices[result.indices["factor"] == path][0]
        cells: list[tuple[str, bool]] = [(str(int(row["rank"])), True), (path, False)]
        cells.append((ranges[path], False))
        for m in measures:
            cells.append((f"{row[m]:.4g}", True))
            cells.append((f"[{row[m + '_low']:.4g}, {row[m + '_high']:.4g}]", True))
        rows.append(cells)
    headers = ["rank", "factor", "range or levels"]
    for m in measures:
        headers += [m, f"{plot._pct(result.ci)} interval"]
    page.add(_table(headers, rows, f"Ranked by {result.ranked_by}."))
    page.section("provenance", "Provenance")
    scenario = result.provenance.get("scenario")
    scalars = {k: v for k, v in result.provenance.items() if k != "scenario"}
    page.add(_table(["field", "value"], [[(k, False), (v, False)] for k, v in _flatten(scalars)]))
    if scenario is not None:
        text = json.dumps(scenario, indent=2, sort_keys=True, default=str)
        page.add(f"<p>Scenario:</p><pre>{_e(text)}</pre>")
    return page.html(heading, lead)


def write_sensitivity_report(
    result: Any, path: str | os.PathLike[str], *, title: str | None = None, dpi: int = 100
) -> Path:
    """Write :func:`sensitivity_report_html` of ``result`` to ``path``
    (atomically) and return the path. Needs matplotlib."""
    text = sensitivity_report_html(result, title=title, dpi=dpi)
    out = Path(path)
    _atomic.replace_file(out, text)
    return out
