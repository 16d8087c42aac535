"""Command line: ``acesim demo`` runs the built-in default scenario and
prints the ETTR decomposition; ``acesim --help`` lists the rest."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from . import __version__, _atomic, _tune_cli, cuda_available, cuda_built
from ._validation import non_negative
from .analytic import (
    daly_interval,
    expected_ettr_exponential,
    meta_expected_ettr,
    meta_scale_model,
    mttf,
    young_interval,
)
from .checkpointing import two_level_optimal_intervals
from .distributions import Constant, Distribution, Exponential, LogNormal, Mixture, Weibull
from .fleet import LLAMA3_CAUSES, Fleet
from .job import CheckpointTier, Job
from .optimize import optimal_interval
from .policy import Policy, Preemption, Quarantine, Replacement
from .scenario import Scenario, load_scenario, load_sweep
from .simulation import BUCKETS as RESULT_BUCKETS
from .simulation import SimulationResult, simulate
from .stats import SingleReplicaWarning, compare
from .units import DAY, HOUR, MINUTE, parse_duration

#: The buckets the demo shows (its job is not elastic: no ``narrow``).
BUCKETS = tuple(b for b in RESULT_BUCKETS if b != "narrow")


def demo_job(checkpoint_interval: float | str = HOUR) -> Job:
    """The demo's job: 1,024 GPUs, 3 days of compute, hourly checkpoints."""
    return Job(
        1024,
        work=3 * DAY,
        checkpoint_interval=checkpoint_interval,  # type: ignore[arg-type]
        init=Constant(5 * MINUTE),
        save=Constant(1 * MINUTE),
        load=Constant(2 * MINUTE),
        name="demo-1024",
    )


def _hours(seconds: float) -> str:
    return f"{seconds / HOUR:8.2f} h"


def _spread(res: SimulationResult) -> str:
    e = res.jobs["ettr"]
    p5, p50, p95 = np.percentile(e, [5, 50, 95])
    return f"{p5:6.3f} {p50:6.3f} {p95:6.3f}"


def _same_mean_bursty(mean: float) -> list[tuple[str, Distribution]]:
    """Failure histories with one mean and different structure."""
    weibull_shape = 0.5
    return [
        ("exponential", Exponential(mean)),
        # 90% of gaps are long quiet runs, 10% come in quick succession.
        (
            "bimodal mixture 90/10",
            Mixture(
                [
                    (0.9, Exponential((mean - 0.1 * 10 * MINUTE) / 0.9)),
                    (0.1, Exponential(10 * MINUTE)),
                ]
            ),
        ),
        ("weibull k=0.5", Weibull(weibull_shape, mean / math.gamma(1 + 1 / weibull_shape))),
    ]


def run_demo(
    replicas: int = 2000, seed: int = 0, plot: str | None = None, progress: bool = False
) -> int:
    """``acesim demo``: the built-in scenario's sections; ``progress``: bars
    for its two longest steps (the first run and the interval search)."""
    if plot:
        _matplotlib()  # before the run: a missing extra is an error, not a skipped figure
    started = time.perf_counter()
    job = demo_job()
    model = meta_scale_model()
    m = mttf(model, job.gpus)
    save, restart = job.save.mean(), job.init.mean() + job.load.mean()
    print(f"acesim {__version__} demo: {replicas} replicas, seed {seed}")
    print(
        f"job: {job.gpus} GPUs, {job.work / DAY:g} days of compute, checkpoint every "
        f"{_hours(HOUR).strip()}, save {save:g} s, init+load {restart:g} s"
    )
    print(
        f"failures: scale-aware default (MTTF 7.9 h at 1,024 GPUs, 1/GPUs): "
        f"MTTF {m / HOUR:.2f} h for this job\n"
    )

    # 1. ETTR decomposition under the default.
    res = simulate(job, model, replicas=replicas, seed=seed, progress=progress)
    summary = res.summary()
    mean_wall = float(np.mean(res.jobs["wall"]))
    print("1. Where the wall-clock goes (mean per run)")
    print(f"   {'bucket':<15}{'share':>8}{'time':>12}")
    for b in BUCKETS:
        print(f"   {b:<15}{summary[b]:8.2%}{_hours(float(np.mean(res.jobs[b]))):>12}")
    print(f"   {'wall':<15}{1:8.2%}{_hours(mean_wall):>12}")
    closed = float(expected_ettr_exponential(m, job.work, HOUR, save, restart))
    nodes = job.gpus / 8
    meta = float(meta_expected_ettr(job.gpus, DAY / (m * nodes), restart, HOUR, save))
    print(
        f"   ETTR simulated {summary['ettr']:.4f} +/- {summary['ettr_stderr']:.4f}; "
        f"closed form {closed:.4f}; Meta first-order {meta:.4f}"
    )
    print(
        f"   failures per run {summary['failures_per_replica']:.2f}; GPU-hours lost per run "
        f"{summary['gpu_hours_lost_per_replica']:,.0f}\n"
    )

    # 2. The same job under rare to frequent failure histories.
    print("2. The same job, rare to frequent failures (exponential)")
    print(f"   {'MTBF':>10}  {'pooled ETTR':>11}  {'p5    p50    p95':>20}  {'closed form':>11}")
    histories = [50 * HOUR, 7.9 * HOUR, 2 * HOUR, 30 * MINUTE, 10 * MINUTE]
    sweep: list[tuple[float, float]] = []
    for mtbf in histories:
        r = simulate(
            job, Exponential(mtbf), replicas=max(50, replicas // 10), seed=seed, horizon=30 * DAY
        )
        cf = float(expected_ettr_exponential(mtbf, job.work, HOUR, save, restart))
        sweep.append((mtbf, r.pooled_ettr()))
        print(f"   {_hours(mtbf):>10}  {r.pooled_ettr():11.4f}  {_spread(r):>20}  {cf:11.4f}")
    print("   (runs cut at a 30-day horizon; closed form: expected_ettr_exponential)\n")

    # 3. Same mean, different structure.
    print(f"3. Same mean ({m / HOUR:.2f} h), different structure: what the model computes")
    print(f"   {'history':<24}{'pooled ETTR':>12}{'failures/run':>14}  {'p5    p50    p95':>20}")
    for name, dist in _same_mean_bursty(m):
        r = simulate(job, dist, replicas=replicas, seed=seed)
        print(
            f"   {name:<24}{r.pooled_ettr():12.4f}{np.mean(r.jobs['failures']):14.2f}  "
            f"{_spread(r):>20}"
        )
    print("   (no direction is assumed: compare the numbers for your own history)\n")

    # 4. The chosen interval versus Young, Daly and the simulated optimum.
    print("4. Checkpoint interval: chosen vs Young / Daly / simulated optimum")
    best = optimal_interval(
        job, model, replicas=max(200, replicas // 2), seed=seed, progress=progress
    )
    young = float(young_interval(save, m))
    daly = float(daly_interval(save, m))
    rows = [
        ("chosen", HOUR),
        ("young", young),
        ("daly", daly),
        ("simulated optimum", best.interval),
    ]
    for name, tau in rows:
        r = simulate(job.with_interval(tau), model, replicas=replicas, seed=seed)
        print(f"   {name:<18}{tau / MINUTE:8.1f} min   ETTR {r.pooled_ettr():.4f}")
    lo, hi = best.plausible
    print(
        f"   optimum plausible within {lo / MINUTE:.1f} .. {hi / MINUTE:.1f} min "
        f"(paired, 2 standard errors)"
    )
    print(
        f"   the rows above run replicas 0..{replicas - 1}, some of those that chose the "
        "optimum (in-sample: its row is optimistic);\n"
        f"   on fresh replicas {best.replicas}..{2 * best.replicas - 1} the optimum's ETTR is "
        f"{best.ettr:.4f} +/- {best.ettr_stderr:.4f}, the value the figure shows"
    )
    print()
    _policy_section(max(50, replicas // 10), seed)
    print()
    _checkpoint_section(replicas, seed)
    print(f"\ndone in {time.perf_counter() - started:.1f} s")

    if plot:
        _plot(plot, res, sweep, best)
    return 0


def _policy_section(replicas: int, seed: int) -> None:
    """A 1,024-GPU flagship job and a stream of small jobs on a tight fleet:
    five recovery policies on the same node failures."""
    fleet = Fleet(
        nodes=136,
        spares=0,
        repair=LogNormal(mu=8.0, sigma=1.0),
        node_failures=Exponential(DAY / 6.5e-3),
        lemon_fraction=0.05,
        lemon_factor=20.0,
    )
    jobs = [Job(1024, work=7 * DAY, checkpoint_interval="daly", priority=1)]
    jobs += [
        Job(16, work=12 * HOUR, checkpoint_interval=HOUR, submit=i * 3 * HOUR) for i in range(64)
    ]
    policies = {
        "spares": Policy(replacement=Replacement.SPARES),
        "wait-repair": Policy(replacement=Replacement.WAIT_REPAIR),
        "preempt-lower": Policy(
            replacement=Replacement.PREEMPT_LOWER,
            preemption=Preemption.CHECKPOINT_AWARE,
            preemption_grace=10 * MINUTE,
        ),
        "requeue": Policy(replacement=Replacement.REQUEUE),
        "spares+quarantine": Policy(quarantine=Quarantine(2, 7 * DAY, 30 * DAY)),
    }
    print("5. Recovery policies on the same node failures (136 nodes, RSC-1 failure rate,")
    print("   5% lemon nodes, Llama 3 causes; a 1,024-GPU flagship and 64 small jobs)")
    print(
        f"   {'policy':<18}{'flagship ETTR':>14}{'fleet ETTR':>11}{'failures':>9}"
        f"{'churn GPU-h':>12}{'quarantined node-h':>19}"
    )
    for name, policy in policies.items():
        res = simulate(
            jobs, fleet=fleet, policy=policy, causes=LLAMA3_CAUSES, replicas=replicas, seed=seed
        )
        f = res.fleet
        print(
            f"   {name:<18}{res.pooled_ettr(job=0):14.4f}{f['ettr'].mean():11.4f}"
            f"{f['failures'].mean():9.2f}{f['churn_gpu_hours'].mean():12.1f}"
            f"{f['quarantined_node_hours'].mean():19.1f}"
        )


#: Section 6's costs (seconds): the demo job's init and load, the blocking
#: snapshot and its background persist (a synchronous write stalls for both),
#: the in-memory tier's save and load.
INIT, LOAD = 5 * MINUTE, 2 * MINUTE
SNAPSHOT, PERSIST = 30.0, 3 * MINUTE
TIER_SAVE, TIER_LOAD = 5.0, 1 * MINUTE

#: Section 6's decomposition (shares of wall; queue_wait and recovery_wait
#: are 0 without a fleet).
SCHEME_BUCKETS = ("productive", "ckpt_stall", "wasted", "overhead", "detection")
SCHEME_WIDTHS = (11, 11, 8, 9, 10)


def _scheme_job(
    interval: float, persist: float | None = None, tiers: Sequence[CheckpointTier] = ()
) -> Job:
    """The demo's job with section 6's checkpoints: asynchronous with a
    ``persist`` (``save`` is the snapshot), else synchronous (``save`` is the
    whole write, snapshot + persist), with optional ``tiers``."""
    return Job(
        1024,
        work=3 * DAY,
        checkpoint_interval=interval,
        init=Constant(INIT),
        save=Constant(SNAPSHOT if persist is not None else SNAPSHOT + PERSIST),
        load=Constant(LOAD),
        name="demo-1024",
        persist=None if persist is None else Constant(persist),
        tiers=tiers,
    )


def _checkpoint_section(replicas: int, seed: int) -> dict[str, SimulationResult]:
    """Synchronous, asynchronous and two-level checkpoints of the demo's job
    on the same failures (same seed, Llama 3 causes), each at its own best
    interval(s). Returns each scheme's result."""
    model = meta_scale_model()
    m = mttf(model, 1024)
    causes = LLAMA3_CAUSES
    survive = sum(c.share for c in causes if c.scope == "process") / sum(c.share for c in causes)
    search = max(200, replicas // 2)
    sync_tau = optimal_interval(
        _scheme_job(HOUR), model, replicas=search, seed=seed, causes=causes
    ).interval
    async_job = _scheme_job(HOUR, persist=PERSIST)
    async_tau = optimal_interval(
        async_job, model, replicas=search, seed=seed, causes=causes
    ).interval
    # The tier survives process-scope failures only (replication 1).
    two = two_level_optimal_intervals(
        m, TIER_SAVE, TIER_LOAD, SNAPSHOT + PERSIST, LOAD, survive, init=INIT
    )
    tier = CheckpointTier(two.tier_interval, save=TIER_SAVE, load=TIER_LOAD)
    schemes = {
        "synchronous": (_scheme_job(sync_tau), f"{sync_tau / MINUTE:.1f} min"),
        "asynchronous": (async_job.with_interval(async_tau), f"{async_tau / MINUTE:.1f} min"),
        "two-level": (
            _scheme_job(two.durable_interval, tiers=[tier]),
            f"{two.tier_interval / MINUTE:.1f} / {two.durable_interval / MINUTE:.1f} min",
        ),
    }
    print("6. Checkpointing: synchronous vs asynchronous vs two-level, on the same failures")
    print(
        f"   (Llama 3 causes, {survive:.1%} of them process-scope; snapshot {SNAPSHOT:g} s + "
        f"persist {PERSIST / MINUTE:g} min: a"
    )
    print(
        f"   synchronous write stalls {(SNAPSHOT + PERSIST) / MINUTE:g} min, the asynchronous "
        f"snapshot {SNAPSHOT:g} s; two-level: the"
    )
    print(
        f"   synchronous write plus an in-memory tier, save {TIER_SAVE:g} s, load "
        f"{TIER_LOAD / MINUTE:g} min, on one node)"
    )
    print(
        f"   {'scheme':<13}{'interval(s)':<16}{'ETTR':>6}"
        + "".join(f"{b:>{w}}" for b, w in zip(SCHEME_BUCKETS, SCHEME_WIDTHS, strict=True))
    )
    results: dict[str, SimulationResult] = {}
    for name, (job, label) in schemes.items():
        res = simulate(job, model, replicas=replicas, seed=seed, causes=causes)
        results[name] = res
        summary = res.summary()
        print(
            f"   {name:<13}{label:<16}{res.pooled_ettr():6.4f}"
            + "".join(
                f"{summary[b]:{w}.2%}" for b, w in zip(SCHEME_BUCKETS, SCHEME_WIDTHS, strict=True)
            )
        )
    print("   (shares of wall; synchronous, asynchronous: optimal_interval with the same causes)")
    print(f"   two-level: two_level_optimal_intervals (exponential closed form), k = {two.k}")
    base = results["synchronous"].jobs["wall"]
    diffs = []
    for name in ("asynchronous", "two-level"):
        d = (results[name].jobs["wall"] - base) / HOUR
        se = float(np.std(d, ddof=1) / math.sqrt(d.size)) if d.size > 1 else math.nan
        diffs.append(f"{name} {float(np.mean(d)):+.2f} h +/- {se:.2f}")
    print(f"   wall-clock vs synchronous, paired per run: {diffs[0]},")
    print(f"   {diffs[1]} (1 standard error)")
    return results


def _matplotlib() -> Any:
    """matplotlib's pyplot on the Agg backend; an ImportError naming the extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('--plot needs matplotlib: pip install "acesim[plot]"') from None
    return plt


def _plot(path: str, res: Any, sweep: list[tuple[float, float]], best: object) -> None:
    """The demo's figure (:func:`acesim.plot.demo_figure`)."""
    _matplotlib()  # the Agg backend, or the ImportError naming the extra
    from .optimize import OptimalInterval
    from .plot import demo_figure

    assert isinstance(best, OptimalInterval)
    fig = demo_figure(res, sweep, best, chosen=HOUR)
    kind = Path(path).suffix[1:].lower() or None  # (a file object does not say its format)
    _atomic.replace_file(path, lambda handle: fig.savefig(handle, dpi=110, format=kind))
    print(f"figure written to {shown(path)}")


def run_report(
    paths: Sequence[str], output: str, title: str | None, interval: str | None = None
) -> int:
    """``acesim report RESULTS... -o report.html``: one self-contained HTML
    report of saved results (:func:`acesim.report.write_report`); with
    several, the first is the baseline of the comparison. ``--interval
    GRID``: a sweep's grid (``acesim sweep --out``) over a job's checkpoint
    interval, drawn as the interval curve."""
    from pathlib import Path

    from .report import write_report
    from .results_io import _read_files, load_result

    inputs = [*paths, *([interval] if interval is not None else [])]
    _atomic.check_outputs([("-o", output)], [f for p in inputs for f in _read_files(p)])
    if len(paths) == 1 and _file_kind(paths[0]) == "acesim-sensitivity":
        from .report import write_sensitivity_report
        from .sensitivity import load_sensitivity

        out = write_sensitivity_report(load_sensitivity(paths[0]), output, title=title)
        print(f"report written to {shown(out)}")
        return 0
    if len(paths) == 1 and _is_tune_table(paths[0]):
        from .report import write_tune_report
        from .search import load_tune

        out = write_tune_report(load_tune(paths[0]), output, title=title)
        print(f"report written to {shown(out)}")
        return 0
    from .plot import provenance, sweep_curve_data
    from .results_io import load_tables

    grid = None
    if interval is not None:
        tables, _ = load_tables(interval, kind="acesim-sweep")
        grid = tables.get("points")
        try:
            sweep_curve_data(grid)
        except ValueError as exc:
            raise ValueError(f"--interval {interval}: {exc}") from None

    loaded = [load_result(p) for p in paths]
    # each result by its scenario's name ([run].name), else its file's stem
    names = [provenance(r).scenario or Path(p).stem for r, p in zip(loaded, paths, strict=True)]
    if len(set(names)) < len(names):  # two alike: by file name, else by path
        names = [Path(p).stem for p in paths]
        if len(set(names)) < len(names):
            names = [str(p) for p in paths]
    results = dict(zip(names, loaded, strict=True))
    out = write_report(
        results[names[0]] if len(results) == 1 else results, output, title=title, sweep=grid
    )
    print(f"report written to {shown(out)}")
    return 0


def _file_kind(path: str) -> str | None:
    """The ``format`` a saved file's metadata names (None when unreadable:
    the loader then says why)."""
    from .results_io import ResultFileError, _read_meta

    try:
        kind = _read_meta(Path(path)).get("format")
    except (ResultFileError, OSError, ValueError):
        return None
    return kind if isinstance(kind, str) else None


def _is_tune_table(path: str) -> bool:
    """Whether ``path`` holds an ``acesim tune --out`` table."""
    from .results_io import ResultFileError, _read_meta

    try:
        return _read_meta(Path(path)).get("format") == "acesim-tune"
    except (ResultFileError, OSError, ImportError):
        return False  # load_result names the problem


def _read_history(path: str) -> Any:
    """A history file by what it holds (:func:`acesim.scenario.read_history_file`)."""
    from .scenario import read_history_file

    return read_history_file(path)


#: The replicas ``acesim fit --scenario`` writes without ``--replicas``.
FITTED_REPLICAS = 100


def run_fit(
    path: str,
    by: str | None,
    cause: str | None,
    backtest: int = 0,
    seed: int = 0,
    *,
    scenario: str | None = None,
    family: str | None = None,
    job: dict[str, Any] | None = None,
    nodes: int | None = None,
    replicas: int | None = None,
    progress: bool = False,
) -> int:
    """``acesim fit FILE``: the ranked fits of the history's inter-failure
    times and, for a timeline, what happened (the measured buckets); with
    ``--backtest N`` the recorded schedule replayed ``N`` times with the
    fitted model's failures (:meth:`History.backtest`); with ``--scenario
    OUT.toml`` the fitted model (:meth:`History.to_model`) written as a
    scenario file (see :func:`write_fitted_scenario`)."""
    if backtest < 0:
        raise ValueError(f"--backtest must be >= 0, got {backtest}")
    if scenario is not None and by not in (None, "node", "job"):
        raise ValueError(f"--scenario: the model is fitted by node or by job, not by {by!r}")
    if scenario is None and (
        family is not None or job is not None or nodes is not None or replicas is not None
    ):
        raise ValueError(
            "--family, --job-gpus, --job-work, --nodes and --replicas go with --scenario"
        )
    if scenario is not None:
        _atomic.check_outputs([("--scenario", scenario)], [path])
    h = _read_history(path)
    if not hasattr(h, "fit"):
        raise ValueError(f"file: {path} is a summary, not a history of failures")
    fit = h.fit(by=by, cause=cause) if cause is not None else h.fit(by=by)
    print(f"acesim {__version__} fit: {shown(path)}")
    print(shown(fit.samples_line()))
    print(shown(fit.table(), lines=True))
    measured = getattr(h, "measured", None)
    if measured is not None and getattr(h, "runs", None) is not None and len(h.runs):
        m = measured()
        print()
        print("What happened (GPU-hours; NaN: the source does not say):")
        for key, value in m.totals.items():
            if key.endswith("_gpu_hours"):
                print(f"   {key[: -len('_gpu_hours')]:<15}{float(value):14.1f}")
    if scenario is not None:
        notes = write_fitted_scenario(
            h, path, scenario, by=by, family=family, job=job, nodes=nodes, replicas=replicas
        )
        print()
        print(
            f"fitted model written to {shown(scenario)}" + ("" if job else " (no jobs: add them)")
        )
        if notes:
            print("values not from the log (marked in the file):")
            for key, note in notes.items():
                print(f"   {key} = {shown(note)}")
    if backtest:
        if not len(getattr(h, "runs", ())):
            raise ValueError(f"--backtest: {path} records no runs to replay")
        bt = h.backtest(replicas=backtest, seed=seed, progress=progress)
        pct = round(100 * bt.level)
        print()
        print(
            f"Back-test: the recorded schedule with the best fit's failures, "
            f"{bt.replicas} replicas, seed {seed} (GPU-hours; counts):"
        )
        print(shown(bt.markdown(), lines=True))
        missed = [str(r["bucket"]) for r in bt.table if not r["covered"]]
        print(
            f"outside the {pct}% interval: {', '.join(missed)}"
            if missed
            else f"every bucket inside its {pct}% interval"
        )
    return 0


def _default_text(value: Any) -> str:
    """A default value as a scenario file would write it."""
    from ._toml import _inline
    from .distributions import Distribution
    from .repair import Repair
    from .scenario import law_spec

    if isinstance(value, Distribution | Repair):
        try:
            return _inline(law_spec(value), "value")
        except TypeError:
            return repr(value)
    if value is None:
        return "simulate's default"
    return _inline(value, "value") if isinstance(value, str | int | float | bool) else repr(value)


def write_fitted_scenario(
    h: Any,
    source: str,
    out: str,
    *,
    by: str | None = None,
    family: str | None = None,
    job: dict[str, Any] | None = None,
    nodes: int | None = None,
    replicas: int | None = None,
) -> dict[str, str]:
    """The model :meth:`History.to_model` fits to ``h`` (its fleet, job- or
    node-level law, repair and causes) written to ``out`` as a scenario.

    A history says nothing of the jobs to run on the model, so the file has
    no ``[[jobs]]`` unless ``job`` (``--job-gpus``, ``--job-work``,
    ``--job-interval``) gives one: it loads, serves as a sweep's base and can
    be completed by hand; running it as is fails with a message saying jobs
    are missing. ``nodes`` (``--nodes``): the fleet's size, where the log
    names only the nodes that failed; without it a job larger than the
    nodes the log names is a ValueError (nothing is written). ``replicas``
    (``--replicas``, default 100) is written as ``[run].replicas``. Every
    value that came from a default rather than the log (the model's
    ``.defaults``) has a comment above it saying so. Durations are written
    in seconds, exactly. Returns those values: the notes by key path."""
    from .scenario import cause_spec, dump_scenario, fleet_spec, law_spec

    model = h.to_model(by=by, family=family)
    fleet = model.get("fleet")
    notes = {
        key: f"{_default_text(v)}: a default, not from the log" for key, v in model.defaults.items()
    }
    if nodes is not None:
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
            raise ValueError(f"--nodes must be an integer >= 1, got {nodes!r}")
        if fleet is not None:
            seen = fleet.nodes
            fleet = dataclasses.replace(fleet, nodes=nodes)
            notes["fleet.nodes"] = f"{nodes}: from --nodes (the log names {seen} nodes)"
    if job is not None and fleet is not None:
        capacity = fleet.nodes * fleet.gpus_per_node
        if job["gpus"] > capacity:
            raise ValueError(
                f"--job-gpus {job['gpus']}: the fleet fitted to {source} has {fleet.nodes} nodes "
                f"of {fleet.gpus_per_node} GPUs ({capacity} GPUs"
                + (", the nodes the log names" if nodes is None else "")
                + "): the job can never run; give the fleet's size with --nodes N"
            )
    if replicas is not None and (
        isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1
    ):
        raise ValueError(f"--replicas must be an integer >= 1, got {replicas!r}")
    if replicas is None:
        replicas = FITTED_REPLICAS
        notes["run.replicas"] = f"{FITTED_REPLICAS}: acesim fit's default (--replicas N)"
    spec: dict[str, Any] = {
        "run": {
            "name": f"fitted: {Path(source).name}",
            "description": f"History.to_model of {source}"
            + (f" by {by}" if by else "")
            + (f", family {family}" if family else ", best family by AIC"),
            "replicas": replicas,
        }
    }
    if job is not None:
        spec["jobs"] = [job]
    if model.get("failures") is not None:
        spec["failures"] = law_spec(model["failures"])
    if fleet is not None:
        spec["fleet"] = fleet_spec(fleet)
    causes = model.get("causes") or ()
    if causes:
        spec["causes"] = [cause_spec(c) for c in causes]
    if fleet is not None and "fleet.node_start" in notes:
        spec["fleet"]["node_start"] = fleet.node_start  # written, to carry its note
    header = f"acesim {__version__} fit of {source}; durations in seconds.\n" + (
        "Add [[jobs]] tables (or a [workload]) before running it: acesim run needs jobs."
        if job is None
        else "The job comes from --job-gpus / --job-work / --job-interval."
    )
    if notes:
        header += "\nValues marked 'a default, not from the log' are guesses: check them."
    if "causes" in notes:
        header += f"\ncauses: {notes['causes']}"
    dump_scenario(spec, out, header=header, comments=notes)
    return notes


def run_info() -> int:
    print(f"acesim {__version__}")
    print(f"CUDA samplers built: {cuda_built()}; CUDA device available: {cuda_available()}")
    return 0


def run_interval(checkpoint_cost: float, mtbf: float, work: float | None, restart: float) -> int:
    # --restart is used only with --work, but is checked either way.
    non_negative("--restart", restart)
    young = float(young_interval(checkpoint_cost, mtbf))
    daly = float(daly_interval(checkpoint_cost, mtbf))
    print(
        f"Young {young:.1f} s ({young / MINUTE:.2f} min); Daly {daly:.1f} s "
        f"({daly / MINUTE:.2f} min)"
    )
    if work is not None:
        for name, tau in (("young", young), ("daly", daly)):
            e = float(expected_ettr_exponential(mtbf, work, tau, checkpoint_cost, restart))
            print(f"expected ETTR at {name}: {e:.4f}")
    return 0


# ---------------------------------------------------------------------------
# Scenario files: acesim run, sweep, compare
# ---------------------------------------------------------------------------


def show_progress(no_progress: bool = False) -> bool:
    """Whether to draw a progress bar: stderr is a terminal, ``CI`` is not
    set (:func:`acesim.sweep.on_terminal`) and ``--no-progress`` was not
    given."""
    from .sweep import on_terminal

    return not no_progress and on_terminal()


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The [run] values the command line sets (``run.replicas``, ...)."""
    out: dict[str, Any] = {}
    for name in ("replicas", "seed", "threads", "horizon"):
        value = getattr(args, name, None)
        if value is not None:
            out[f"run.{name}"] = value
    if getattr(args, "record_events", False):
        out["run.record_events"] = True
    for assignment in getattr(args, "set", None) or ():
        key, value = _assignment(assignment)
        out[key] = value
    return out


def _assignment(text: str) -> tuple[str, Any]:
    """``--set PATH=VALUE``: the dotted path (as a sweep file's axes write
    it, :func:`acesim.scenario.parse_key`) and the value, read as a TOML value
    (``4``, ``true``, ``"2h"``, ``{law = "constant", value = 60}``) or, when
    it is not one, as the text itself (``2h``, ``daly``)."""
    from ._toml import loads
    from .scenario import parse_key

    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--set {text}: expected PATH=VALUE, such as jobs[0].work=7d")
    try:
        parse_key(key)
    except ValueError as exc:
        raise ValueError(f"--set {text}: {exc}") from None
    raw = raw.strip()
    try:
        value = loads(f"v = {raw}")["v"]
    except ValueError:  # tomllib.TOMLDecodeError is a ValueError
        value = raw
    return key, value


def _chunk(replicas: int, threads: int | None) -> int:
    """Replicas per chunk of a run shown with a progress bar: about 20
    chunks, none smaller than 4 replicas per thread (each chunk runs on every
    thread)."""
    per = 4 * (threads or os.cpu_count() or 1)
    return max(math.ceil(replicas / 20), per)


def _run_scenario(scenario: Scenario, progress: bool) -> SimulationResult:
    """One scenario through :func:`acesim.sweep.sweep`'s machinery: in chunks
    (``first_replica`` offsets, joined in replica order) when a progress bar
    is shown, else in one call. The result is the same either way."""
    from .sweep import _sweep

    kwargs = scenario.simulate_kwargs()
    chunk = _chunk(scenario.replicas, kwargs.get("threads")) if progress else None
    try:
        out = _sweep(
            [kwargs], None, chunk_replicas=chunk, progress=progress, label=("run", "chunk")
        )
    except (TypeError, ValueError) as exc:
        message = str(exc).removeprefix("scenarios[0]: ")
        raise scenario.simulate_error(type(exc)(message)) from None
    return out[0].result


def _estimate(res: SimulationResult, level: float) -> tuple[float, float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleReplicaWarning)
        value, low, high = res.ettr(ci=level)
    return value, low, high


def _ci_text(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "n/a (1 replica)"
    return f"[{low:.4f}, {high:.4f}]"


def _groups(scenario: Scenario, res: SimulationResult) -> list[tuple[str, npt.NDArray[Any]]]:
    """Per [[jobs]] table (a ``count = N`` table pools its N jobs), or per GPU
    size for a workload, the job numbers it holds."""
    labels = scenario.job_labels
    jobs = res.jobs
    if labels:
        out: list[tuple[str, npt.NDArray[Any]]] = []
        start = 0
        for label, count in labels:
            out.append((label, np.arange(start, start + count)))
            start += count
        return out
    first = jobs[jobs["replica"] == jobs["replica"][0]]
    sizes = np.unique(first["gpus"])
    return [(f"{int(g)} GPUs", first["job"][first["gpus"] == g]) for g in sizes]


def print_result(
    scenario: Scenario, res: SimulationResult, level: float = 0.95, indent: str = "   "
) -> None:
    """The run's table: ETTR with its interval, the buckets' shares and
    GPU-hours, failures and GPU-hours lost (per [[jobs]] table when several)."""
    pct = f"{100 * level:g}%"
    value, low, high = _estimate(res, level)
    summary = res.summary()
    jobs = res.jobs
    g = jobs["gpus"].astype(np.float64)
    replicas = max(res.replicas, 1)
    print(f"ETTR {value:.4f}  {pct} CI {_ci_text(low, high)}")
    print(f"{indent}{'bucket':<15}{'share':>8}{'GPU-h/replica':>16}")
    listed = [b for b in RESULT_BUCKETS if b != "narrow" or summary[b] > 0]
    for bucket in listed:
        hours = float(np.sum(g * jobs[bucket])) / HOUR / replicas
        print(f"{indent}{bucket:<15}{summary[bucket]:8.2%}{hours:16,.2f}")
    wall = float(np.sum(g * jobs["wall"])) / HOUR / replicas
    print(f"{indent}{'wall':<15}{1.0:8.2%}{wall:16,.2f}")
    print(
        f"failures/replica {summary['failures_per_replica']:.2f}; GPU-hours lost/replica "
        f"{summary['gpu_hours_lost_per_replica']:,.2f}; completed {summary['completed']:.1%}"
    )
    groups = [(shown(label), members) for label, members in _groups(scenario, res)]
    if len(groups) < 2:
        return
    width = max(12, *(len(label) for label, _ in groups)) + 2
    print()
    print(
        f"{indent}{'jobs':<{width}}{'count':>6}{'GPUs':>7}{'ETTR':>8}  {pct + ' CI':<18}"
        f"{'failures/rep':>13}{'GPU-h lost/rep':>16}{'completed':>11}"
    )
    for label, members in groups:
        rows = jobs[np.isin(jobs["job"], members)]
        part = dataclasses.replace(res, jobs=rows)
        v, lo, hi = _estimate(part, level)
        sizes = np.unique(rows["gpus"])
        gpus = str(int(sizes[0])) if sizes.size == 1 else "mixed"
        print(
            f"{indent}{label:<{width}}{members.size:>6}{gpus:>7}{v:8.4f}  {_ci_text(lo, hi):<18}"
            f"{float(rows['failures'].sum()) / replicas:13.2f}"
            f"{float(rows['gpu_hours_lost'].sum()) / replicas:16,.2f}"
            f"{float(np.mean(rows['completed'])):11.1%}"
        )


def _provenance(scenario: Scenario, res: SimulationResult) -> dict[str, Any]:
    """The result's own provenance when it has one (with the scenario
    added), else the scenario's."""
    return scenario.provenance(res)


def _label(scenario: Scenario, path: str) -> str:
    name = f" ({shown(scenario.name)})" if scenario.name else ""
    return f"{shown(path)}{name}"


def shown(text: object, *, lines: bool = False) -> str:
    """``text`` as every printout of the command line shows a name it did
    not choose (a scenario, job, axis or cause name, a description, a path,
    a table of them): its control and format characters (an escape
    sequence, a carriage return, a bidi override) written as Python escapes
    (``\\x1b``), so that they cannot act on the terminal. ``lines``: line
    breaks are kept (a table of several lines)."""
    out = str(text)
    if out.isprintable():
        return out
    keep = "\n" if lines else ""
    return "".join(
        c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii")
        for c in out
    )


def run_run(args: argparse.Namespace) -> int:
    """``acesim run SCENARIO.toml``."""
    from .results_io import save_result

    if args.out is not None:
        _check_out(args.out)
    scenario = load_scenario(args.scenario).with_values(_overrides(args), origin="command line")
    if args.out is not None:
        _check_inputs(args.out, [args.scenario, *scenario.files().values()])
    res = _run_scenario(scenario, show_progress(args.no_progress))
    n_jobs = int(res.jobs["job"].max()) + 1 if res.jobs.size else 0
    horizon = scenario.simulate_kwargs().get("horizon", math.inf)
    print(f"acesim {__version__} run: {_label(scenario, args.scenario)}")
    if scenario.description:
        print(shown(scenario.description, lines=True))
    print(
        f"{n_jobs} job{'s' if n_jobs != 1 else ''}, {res.replicas} replicas, seed {res.seed}, "
        f"horizon {'none' if math.isinf(horizon) else f'{horizon / DAY:g} d'}"
    )
    print()
    print_result(scenario, res, args.ci)
    if args.out is not None:
        files = save_result(res, args.out, provenance=_provenance(scenario, res))
        more = f" (and {len(files) - 1} more files beside it)" if len(files) > 1 else ""
        print(f"\nresults written to {shown(args.out)}{more}")
    return 0


def _check_inputs(out: str, inputs: list[Any], option: str = "--out") -> None:
    """Exit 2 (a ValueError) when a file a save to ``out`` replaces is one
    of the ``inputs`` (the scenario, the files it names), before running."""
    from .results_io import _replaced_files

    _atomic.check_outputs([(option, out), *((option, f) for f in _replaced_files(out)[1:])], inputs)


def _check_out(path: str) -> None:
    """An --out path's format and folder, before anything runs."""
    from .results_io import FORMATS

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"--out {path}: the format comes from the suffix, one of {', '.join(FORMATS)}"
        )
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise ValueError(f"--out {path}: no such folder {folder}")
    if suffix == ".parquet":
        from .results_io import _pyarrow

        _pyarrow()


def _cell(value: Any) -> str:
    """An axis value as the sweep table shows it."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}"
    from ._toml import _inline

    return shown(_inline(value, "value"))


def _short(seconds: float) -> str:
    """An interval as the sweep table shows it: minutes under 2 h, else hours."""
    if seconds < 2 * HOUR:
        return f"{seconds / MINUTE:.3g} min"
    return f"{seconds / HOUR:.3g} h"


def _ruled_jobs(grid: Any) -> list[tuple[int, str]]:
    """The [[jobs]] (by number, at most 3) whose checkpoint_interval is
    ``young`` or ``daly`` in every point without an axis setting it."""
    set_by_axes = {_interval_axis_job(axis) for axis in grid.axes}
    found: list[tuple[int, str]] = []
    try:
        jobs = [p.scenario.simulate_kwargs().get("jobs") for p in grid.points]
    except (TypeError, ValueError):
        return []
    if not all(isinstance(j, list) for j in jobs) or not jobs:
        return []
    for k, job in enumerate(jobs[0]):
        rule = getattr(job, "checkpoint_interval", None)
        if k in set_by_axes or rule not in ("young", "daly"):
            continue
        same = all(
            len(other) > k and getattr(other[k], "checkpoint_interval", None) == rule
            for other in jobs
        )
        if same:
            found.append((k, str(rule)))
        if len(found) == 3:
            break
    return found


def _interval_axis_job(axis: str) -> int | None:
    """The job whose checkpoint interval a sweep axis sets
    (``jobs[k].checkpoint_interval``), else None."""
    from .scenario import parse_key

    path = parse_key(axis)
    if len(path) == 3 and path[0] == "jobs" and path[2] == "checkpoint_interval":
        return int(path[1])
    return None


def _resolved_interval(res: SimulationResult, job: int) -> float:
    """The durable checkpoint interval job ``job`` ran with (its mean over
    replicas: one value unless adaptive), NaN when it did not run."""
    rows = res.jobs[res.jobs["job"] == job]
    return float(np.mean(rows["checkpoint_interval"])) if rows.size else math.nan


def _axis_cell(axis: str, value: Any, res: SimulationResult) -> str:
    """An axis value as the sweep table shows it, with the interval a
    ``young`` / ``daly`` checkpoint interval resolved to in that point's run
    (``daly (1.42 h)``)."""
    text = _cell(value)
    job = _interval_axis_job(axis)
    if value not in ("young", "daly") or job is None:
        return text
    seconds = _resolved_interval(res, job)
    if math.isnan(seconds):
        return text
    return f"{text} ({_short(seconds)})"


def _best_point(results: list[SimulationResult], level: float) -> tuple[int | None, set[int], str]:
    """The point with the highest ETTR, the points not distinguishable from
    it (paired differences on common random numbers when the points share a
    seed and replicas; else their intervals overlap its) and how that was
    decided."""
    values = [_estimate(r, level) for r in results]
    finite = [k for k, v in enumerate(values) if not math.isnan(v[0])]
    if not finite:
        return None, set(), ""
    best = max(finite, key=lambda k: values[k][0])
    pct = f"{100 * level:g}%"
    plausible = {best}
    paired = True
    for k in finite:
        if k == best:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SingleReplicaWarning)
                d = compare(results[best], results[k], ci=level)["ettr"]
            if not (d.significant or math.isnan(d.low)):
                plausible.add(k)
        except ValueError:  # not paired: another seed or replica count
            paired = False
            if values[k][2] >= values[best][1]:
                plausible.add(k)
    how = (
        f"not significantly below it, paired {pct} intervals"
        if paired
        else f"{pct} intervals overlapping its"
    )
    return best, plausible, how


def _axis_range(grid: Any, points: list[int]) -> str:
    """For a single numeric axis, the range of its values over ``points``."""
    if len(grid.axes) != 1:
        return ""
    axis = grid.axes[0]
    values = [grid.points[k].values[axis] for k in points]
    sizes = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float | str):
            return ""
        try:
            sizes.append(float(v) if not isinstance(v, str) else parse_duration(v))
        except ValueError:  # not a number nor a duration (young, a name)
            return ""
    low, high = values[int(np.argmin(sizes))], values[int(np.argmax(sizes))]
    return f"; {shown(axis)} from {_cell(low)} to {_cell(high)}"


def _axis_column(values: list[Any]) -> npt.NDArray[Any]:
    """One axis as a column: numbers as numbers, strings as strings, else
    the values' TOML text."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, np.bool_)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, np.int64)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return np.array(values, np.float64)
    return np.array([_cell(v) for v in values], dtype=np.str_)


def _executor(args: argparse.Namespace) -> Any:
    """The executor of ``--processes N`` or ``--dask ADDRESS`` (a context
    manager), or None."""
    if args.processes is not None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if args.processes < 1:
            raise ValueError(f"--processes must be >= 1, got {args.processes}")
        return ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("spawn"))
    if args.dask is not None:
        try:
            import distributed
        except ImportError:
            raise ImportError('--dask needs dask.distributed: pip install "acesim[dask]"') from None
        try:
            connect: Any = distributed.Client
            client = connect(args.dask, timeout=args.dask_timeout)
        except Exception as exc:  # distributed raises OSError, TimeoutError, ...
            raise ValueError(f"--dask: cannot reach the scheduler at {args.dask}: {exc}") from None
        return client
    return None


def run_sweep(args: argparse.Namespace) -> int:
    """``acesim sweep SWEEP.toml``."""
    import contextlib

    from .results_io import save_result, save_tables

    if args.out is not None:
        _check_out(args.out)
    if args.results is not None and not Path(args.results).is_dir():
        raise ValueError(f"--results {args.results}: no such folder")
    grid = load_sweep(args.sweep)
    overrides = _overrides(args)
    if overrides:
        grid = grid.with_values(overrides, origin="command line")
    if args.chunk_replicas is not None and args.chunk_replicas < 1:
        raise ValueError(f"--chunk-replicas must be >= 1, got {args.chunk_replicas}")
    for point in grid.points:
        point.scenario.simulate_kwargs()  # a scenario without jobs fails here, named
    inputs = [
        args.sweep,
        grid.base.source,
        *(f for p in grid.points for f in p.scenario.files().values()),
    ]
    inputs = [f for f in inputs if f is not None]
    if args.out is not None:
        _check_inputs(args.out, inputs)
    width = len(str(len(grid.points) - 1))  # of the point files' zero-padded numbers
    if args.results is not None:
        for k in range(len(grid.points)):
            _check_inputs(str(Path(args.results) / f"point-{k:0{width}d}.npz"), inputs, "--results")
    executor = _executor(args)
    with contextlib.ExitStack() as stack:
        if executor is not None:
            stack.enter_context(executor)
            if args.dask is not None:
                executor = executor.get_executor()
        try:
            results = grid.run(
                executor,
                chunk_replicas=args.chunk_replicas,
                progress=show_progress(args.no_progress),
            )
        except (TypeError, ValueError) as exc:
            text = str(exc)
            m = re.match(r"scenarios\[(\d+)\]: ", text)
            if m is None:
                raise
            point = grid.points[int(m.group(1))]
            raise point.scenario.simulate_error(type(exc)(text[m.end() :])) from None
    level = args.ci
    pct = f"{100 * level:g}%"
    first = grid.points[0].scenario
    base = (
        "the inline [base]"
        if isinstance(grid.spec.get("base"), dict)
        else _label(grid.base, str(grid.spec.get("base")))
    )
    print(
        f"acesim {__version__} sweep: {shown(args.sweep)}"
        + (f" ({shown(grid.name)})" if grid.name else "")
        + f", {len(grid.points)} points, base {base}"
    )
    replicas = {p.scenario.replicas for p in grid.points}
    seeds = {p.scenario.seed for p in grid.points}
    print(
        (f"{first.replicas} replicas a point" if len(replicas) == 1 else "replicas per point")
        + (
            f", seed {first.seed} (common random numbers)"
            if len(seeds) == 1
            else ", a seed per point"
        )
    )
    print()
    texts = [
        [_axis_cell(axis, p.values[axis], item.result) for axis in grid.axes]
        for p, item in zip(grid.points, results, strict=True)
    ]
    # a young / daly interval the axes do not set: what it resolved to, per point
    ruled = _ruled_jobs(grid)
    for p_texts, item in zip(texts, results, strict=True):
        for number, _ in ruled:
            seconds = _resolved_interval(item.result, number)
            p_texts.append("n/a" if math.isnan(seconds) else _short(seconds))
    headers = [*map(shown, grid.axes), *(f"jobs[{number}] {rule}" for number, rule in ruled)]
    widths = [max(len(name), *(len(row[a]) for row in texts)) for a, name in enumerate(headers)]
    head = "".join(f"{name:<{w + 2}}" for name, w in zip(headers, widths, strict=True))
    rows = []
    for item in results:
        res = item.result
        value, low, high = _estimate(res, level)
        rows.append((value, low, high, res.summary(), res))
    best, plausible, how = _best_point([r[4] for r in rows], level)
    print(f"   {'#':>4}  {head}{'ETTR':>8}  {pct + ' CI':<18}{'failures/rep':>13}{'completed':>11}")
    for k, (cells, (value, low, high, summary, _)) in enumerate(zip(texts, rows, strict=True)):
        mark = "*" if k == best else ("~" if k in plausible else " ")
        line = "".join(f"{c:<{w + 2}}" for c, w in zip(cells, widths, strict=True))
        print(
            f" {mark} {k:>4}  {line}{value:8.4f}  {_ci_text(low, high):<18}"
            f"{summary['failures_per_replica']:13.2f}{summary['completed']:11.1%}"
        )
    if best is not None:
        where = ", ".join(f"{shown(axis)} = {texts[best][a]}" for a, axis in enumerate(grid.axes))
        print()
        print(f"* best: point {best} ({where}), ETTR {rows[best][0]:.4f}")
        others = sorted(plausible - {best})
        if others:
            print(
                f"~ plausible ({how}): point{'s' if len(others) > 1 else ''} "
                f"{', '.join(map(str, others))}" + _axis_range(grid, [best, *others])
            )
        else:
            print(f"~ plausible ({how}): no other point")
    written: list[str] = []
    if args.results is not None:
        for k, (point, (*_, res)) in enumerate(zip(grid.points, rows, strict=True)):
            target = Path(args.results) / f"point-{k:0{width}d}.npz"
            save_result(res, target, provenance=_provenance(point.scenario, res))
            written.append(target.name)
    if args.out is not None:
        columns: dict[str, npt.NDArray[Any]] = {"point": np.arange(len(rows), dtype=np.int64)}
        for axis in grid.axes:
            columns[axis] = _axis_column([p.values[axis] for p in grid.points])
            job = _interval_axis_job(axis)
            if job is not None:  # what each point's interval resolved to
                columns[f"{axis}.resolved_s"] = np.array(
                    [_resolved_interval(r[4], job) for r in rows], np.float64
                )
        columns["best"] = np.arange(len(rows)) == (-1 if best is None else best)
        columns["plausible"] = np.isin(np.arange(len(rows)), sorted(plausible))
        columns["ettr"] = np.array([r[0] for r in rows])
        columns["ettr_low"] = np.array([r[1] for r in rows])
        columns["ettr_high"] = np.array([r[2] for r in rows])
        for bucket in RESULT_BUCKETS:
            columns[bucket] = np.array([r[3][bucket] for r in rows])
        for key in ("failures_per_replica", "gpu_hours_lost_per_replica", "completed"):
            columns[key] = np.array([r[3][key] for r in rows])
        columns["replicas"] = np.array([r[4].replicas for r in rows], np.int64)
        columns["seed"] = np.array([r[4].seed for r in rows], np.uint64)
        if written:
            columns["result"] = np.array(written, dtype=np.str_)
        table = np.zeros(len(rows), [(name, c.dtype) for name, c in columns.items()])
        for name, c in columns.items():
            table[name] = c
        provenance = {
            "acesim_version": __version__,
            "created": grid.points[0].scenario.provenance()["created"],
            "sweep": grid.to_dict(),
            "source": str(Path(args.sweep).resolve()),
            "axes": list(grid.axes),
            "level": level,
        }
        save_tables(args.out, {"points": table}, {"provenance": provenance}, kind="acesim-sweep")
        print(f"\ngrid written to {args.out}")
    if written:
        print(f"results of each point written to {args.results}/ ({written[0]} ...)")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """``acesim compare A.toml B.toml``: both with the same seed and
    replicas, the paired differences (:func:`acesim.compare`)."""
    a = load_scenario(args.a)
    b = load_scenario(args.b)
    a.simulate_kwargs()  # a scenario without jobs fails here, named
    b.simulate_kwargs()
    differ = [
        f"{name} ({getattr(a, name)} vs {getattr(b, name)})"
        for name in ("seed", "replicas")
        if getattr(a, name) != getattr(b, name) and getattr(args, name) is None
    ]
    if differ:
        raise ValueError(
            f"{args.a} and {args.b} differ in {' and '.join(differ)}: a paired comparison "
            "needs common random numbers; pass --seed and --replicas to run both with the same"
        )
    overrides = _overrides(args)
    a = a.with_values(overrides, origin="command line")
    b = b.with_values(overrides, origin="command line")
    progress = show_progress(args.no_progress)
    res_a = _run_scenario(a, progress)
    res_b = _run_scenario(b, progress)
    print(
        f"acesim {__version__} compare: a = {_label(a, args.a)}, b = {_label(b, args.b)}; "
        f"{res_a.replicas} replicas each, seed {res_a.seed} (common random numbers)"
    )
    print()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleReplicaWarning)
        comparison = compare(res_a, res_b, ci=args.ci)
    print(comparison)
    d = comparison["ettr"]
    pct = f"{100 * args.ci:g}%"
    print()
    if math.isnan(d.low):
        verdict = "no interval with 1 replica"
    elif d.significant:
        verdict = f"significant: {'b' if d.diff > 0 else 'a'} has the higher ETTR"
    else:
        verdict = "not significant: the interval includes 0"
    print(f"ETTR b - a = {d.diff:+.4f}, {pct} interval [{d.low:+.4f}, {d.high:+.4f}]: {verdict}")
    return 0


def run_sensitivity(args: argparse.Namespace) -> int:
    """``acesim sensitivity SCENARIO.toml``: which factors move the objective
    (:func:`acesim.sensitivity`), from the file's ``[sensitivity]`` table
    or ``--factor`` options (which replace the table's factors)."""
    from .sensitivity import sensitivity
    from .sensitivity.spec import parse_factor_text, read_spec

    if args.out is not None:
        _check_out(args.out)
    scenario = load_scenario(args.scenario)
    overrides = _overrides(args)
    if overrides:
        scenario = scenario.with_values(overrides, origin="command line")
    spec = read_spec(scenario)
    factors = spec.factors
    if args.factor:
        factors = dict(parse_factor_text(text) for text in args.factor)
    if not factors:
        raise ValueError(
            f"{args.scenario}: no factors: add a [sensitivity.factors] table or give "
            "--factor PATH=LOW..HIGH / --factor PATH=A,B,C"
        )
    options = dict(spec.options)
    for name in ("method", "objective", "job", "trajectories", "samples"):
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    if args.seed is not None:
        options["seed"] = args.seed
    if args.replicas is not None:
        options["replicas"] = args.replicas
    options.setdefault("seed", scenario.seed)
    if isinstance(options.get("job"), str) and options["job"].isdigit():
        options["job"] = int(options["job"])
    if args.ci is not None:  # (given: it overrides the file's)
        options["ci"] = args.ci
    options.setdefault("ci", 0.95)
    if args.out is not None:
        inputs = [args.scenario, *scenario.files().values()]
        _check_inputs(args.out, [f for f in inputs if f is not None])
    result = sensitivity(spec.base, factors, progress=show_progress(args.no_progress), **options)
    print(f"acesim {__version__} sensitivity: {_label(scenario, args.scenario)}")
    print(shown(str(result), lines=True))
    print()
    print("ranking: " + shown(", ".join(result.ranking)))
    if args.out is not None:
        result.save(args.out)
        print(f"\nindices written to {shown(args.out)} (acesim report shows the figure)")
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replicas", type=int, default=None, help="override [run].replicas")
    p.add_argument("--seed", type=int, default=None, help="override [run].seed")
    p.add_argument("--threads", type=int, default=None, help="override [run].threads")
    p.add_argument(
        "--horizon",
        type=_duration_type("--horizon", infinite=True),
        default=None,
        help="override [run].horizon (30d, inf)",
    )
    p.add_argument("--ci", type=_level_arg, default=0.95, help="confidence level (default 0.95)")
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (shown only on a terminal)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a value of the file, by its dotted path as a sweep's axes name it "
        "(jobs[0].checkpoint_interval=2h, fleet.spares=4); repeatable",
    )


#: Where the scenario file format is documented (the acesim.scenario module's
#: documentation, as the docs build it).
SCENARIO_DOCS = "docs/api/scenarios.rst (or: python -m pydoc acesim.scenario)"

#: Each subcommand's --help ends with these examples.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "demo": ("acesim demo", "acesim demo --replicas 500 --plot demo.png"),
    "run": (
        "acesim run scenario.toml",
        "acesim run scenario.toml --replicas 500 --seed 3",
        "acesim run scenario.toml --set jobs[0].checkpoint_interval=2h --set fleet.spares=4",
        "acesim run scenario.toml --out results.npz && acesim report results.npz",
    ),
    "sweep": (
        "acesim sweep sweep.toml",
        "acesim sweep sweep.toml --processes 4 --out grid.csv --results points/",
        "acesim sweep sweep.toml --set run.replicas=1000",
    ),
    "compare": ("acesim compare spares.toml wait.toml --replicas 500 --seed 1",),
    "report": (
        "acesim report results.npz",
        "acesim report base.npz other.npz -o report.html --title 'spares vs wait'",
        "acesim sweep intervals.toml --out grid.npz && acesim report base.npz --interval grid.npz",
    ),
    "info": ("acesim info",),
    "interval": ("acesim interval 3.5min 7.9h", "acesim interval 90 6h --work 7d --restart 5min"),
    "serve": ("acesim serve --schema", "acesim serve --stdio < requests.jsonl"),
    "fit": (
        "acesim fit failures.csv",
        "acesim fit sacct.txt --by job --backtest 30",
        "acesim fit log.csv --scenario model.toml --nodes 512 --job-gpus 4096 "
        "--job-work 7d --replicas 200",
    ),
    "tune": (
        "acesim tune examples/tune.toml",
        "acesim tune scenario.toml --vary fleet.spares=0,2,4,8 --scenario best.toml",
        "acesim tune examples/tune.toml --out tune.npz && acesim report tune.npz",
    ),
    "sensitivity": (
        "acesim sensitivity examples/sensitivity.toml",
        "acesim sensitivity scenario.toml --factor fleet.spares=0..8 "
        "--factor jobs[0].checkpoint_interval=log:10min..4h --method sobol",
        "acesim sensitivity examples/sensitivity.toml --out s.npz && acesim report s.npz",
    ),
}


def _epilog(command: str) -> str:
    lines = ["examples:", *(f"  {e}" for e in EXAMPLES.get(command, ()))]
    return "\n".join(lines) + f"\n\nthe scenario file format: {SCENARIO_DOCS}"


def _level_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """Usage errors on one line: ``acesim run: error: ... (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="acesim",
        description="Failure and recovery-policy simulator for GPU training fleets.",
        epilog="acesim COMMAND --help: a command's options and examples.\n"
        f"the scenario file format: {SCENARIO_DOCS}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"acesim {__version__}")
    commands = parser.add_subparsers(dest="command")

    def add(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = commands.add_parser(
            name,
            epilog=_epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )
        return p

    d = add("demo", help="run the built-in default scenario (no input needed)")
    d.add_argument("--replicas", type=int, default=2000)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--plot", metavar="FILE", help="write a figure (needs acesim[plot])")
    d.add_argument(
        "--no-progress", action="store_true", help="no progress bar (shown only on a terminal)"
    )
    r = add(
        "run",
        help="run a scenario file (TOML) and print ETTR and where the time went",
        description="Run a scenario file (the format: see the end of this page). "
        "A scenario's on_failure / place name Python code (a module beside it, or any "
        "importable one), which runs: run scenarios you trust.",
    )
    r.add_argument("scenario", help="the scenario file (.toml)")
    _add_run_options(r)
    r.add_argument(
        "--record-events", action="store_true", help="keep the event log ([run].record_events)"
    )
    r.add_argument("--out", metavar="FILE", help="write the results (.npz .parquet .csv .json)")
    w = add(
        "sweep",
        help="run every point of a sweep file (a base scenario and [axes] of values)",
        description="Run a sweep file: a base scenario and [axes] of dotted keys with lists "
        "of values (their grid product), through acesim.sweep.",
    )
    w.add_argument("sweep", help="the sweep file (.toml)")
    where = w.add_mutually_exclusive_group()
    where.add_argument("--processes", type=int, metavar="N", help="a pool of N processes")
    where.add_argument(
        "--dask", metavar="ADDRESS", help="a Dask scheduler (tcp://HOST:PORT; acesim[dask])"
    )
    w.add_argument("--dask-timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    w.add_argument("--chunk-replicas", type=int, default=None, help="replicas per task")
    _add_run_options(w)
    w.add_argument(
        "--out", metavar="FILE", help="write the grid's table (.npz .parquet .csv .json)"
    )
    w.add_argument("--results", metavar="DIR", help="write each point's results to DIR")
    c = add(
        "compare",
        help="run two scenarios on common random numbers and print the paired differences",
    )
    c.add_argument("a", help="scenario a (.toml)")
    c.add_argument("b", help="scenario b (.toml)")
    _add_run_options(c)
    rp = add(
        "report", help="write a self-contained HTML report of saved results (needs acesim[plot])"
    )
    rp.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="results files (acesim run --out); with several, the first is the baseline",
    )
    rp.add_argument("-o", "--output", default="report.html", metavar="FILE")
    rp.add_argument("--title", default=None)
    rp.add_argument(
        "--interval",
        metavar="GRID",
        default=None,
        help="a sweep's grid (acesim sweep --out) over jobs[k].checkpoint_interval: "
        "draw the interval curve",
    )
    add("info", help="version and CUDA availability")
    i = add(
        "interval",
        help="Young/Daly intervals and expected ETTR",
        description="Young's and Daly's checkpoint intervals, in seconds and minutes. Every "
        "argument is a duration: seconds (90), or numbers with units (3.5min, 7.9h, 1h30min).",
    )
    i.add_argument(
        "checkpoint_cost",
        type=_duration_type("checkpoint_cost"),
        help="the time one checkpoint costs (seconds, or with a unit: 3.5min)",
    )
    i.add_argument(
        "mtbf",
        type=_duration_type("mtbf", infinite=True),
        help="the job's mean time between failures (seconds, or with a unit: 7.9h; inf)",
    )
    i.add_argument(
        "--work",
        type=_duration_type("--work"),
        default=None,
        help="the job's work, for the expected ETTR (seconds, or with a unit: 7d)",
    )
    i.add_argument(
        "--restart",
        type=_duration_type("--restart"),
        default=0.0,
        help="the time a restart takes (seconds, or with a unit: 5min; default 0)",
    )
    s = add("serve", help="drive a FleetModel over JSON lines (schedulers in any language)")
    how = s.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--stdio",
        action="store_true",
        help="read one JSON request per line on stdin, write one reply per line on stdout",
    )
    how.add_argument("--schema", action="store_true", help="print the protocol's JSON Schema")
    f = add(
        "fit",
        help="read a fleet's history (sacct --parsable2, an event log, or a shared-data file) "
        "and print the ranked fits and what happened",
    )
    f.add_argument("file", help="the history file")
    f.add_argument(
        "--by",
        choices=("job", "node", "cause", "system"),
        default=None,
        help="the inter-failure samples to fit (default: node, else job, else system)",
    )
    f.add_argument("--cause", default=None, help="with --by cause: the cause to fit")
    f.add_argument(
        "--backtest",
        type=int,
        default=0,
        metavar="N",
        help="replay the recorded schedule N times with the fitted failures and compare",
    )
    f.add_argument("--seed", type=int, default=0, help="the back-test's seed")
    f.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar for --backtest (shown only on a terminal)",
    )
    f.add_argument(
        "--scenario",
        metavar="OUT.toml",
        help="write the fitted model (fleet, failures, repair, causes) as a scenario file",
    )
    f.add_argument(
        "--family",
        choices=("exponential", "weibull", "lognormal", "gamma"),
        default=None,
        help="with --scenario: the family to write (default: the best by AIC)",
    )
    f.add_argument("--job-gpus", type=int, default=None, help="with --scenario: a job's GPUs")
    f.add_argument(
        "--nodes",
        type=int,
        default=None,
        metavar="N",
        help="with --scenario: the fleet's nodes (default: the nodes the log names)",
    )
    f.add_argument(
        "--replicas",
        type=int,
        default=None,
        metavar="N",
        help=f"with --scenario: [run].replicas (default {FITTED_REPLICAS})",
    )
    f.add_argument(
        "--job-work", type=_work_arg, default=None, help="with --scenario: its work (7d)"
    )
    f.add_argument(
        "--job-interval",
        default="daly",
        help="with --scenario: its checkpoint_interval (1h, young, daly, adaptive)",
    )
    sa = add(
        "sensitivity",
        help="which factors move ETTR or cost: Morris screening or Sobol indices over "
        "dotted paths, with bootstrap intervals",
        description="A global sensitivity analysis of a scenario (acesim.sensitivity): the "
        "factors come from its [sensitivity] table or from --factor options.",
    )
    sa.add_argument("scenario", help="the scenario file (.toml), with a [sensitivity] table")
    sa.add_argument(
        "--factor",
        action="append",
        default=[],
        metavar="PATH=RANGE",
        help="a factor: PATH=LOW..HIGH, PATH=log:LOW..HIGH or PATH=A,B,C (repeat; replaces "
        "the file's factors)",
    )
    sa.add_argument("--method", choices=("morris", "sobol"), default=None)
    sa.add_argument("--objective", choices=("ettr", "gpu_hours_lost", "cost"), default=None)
    sa.add_argument("--job", default=None, help="a job's index or name: its objective")
    sa.add_argument("--trajectories", type=int, default=None, help="Morris paths")
    sa.add_argument("--samples", type=int, default=None, help="Sobol base rows")
    _add_run_options(sa)
    sa.set_defaults(ci=None)  # (a [sensitivity] table's ci holds unless --ci is given)
    sa.add_argument("--out", metavar="FILE", help="write the indices (.npz .parquet .csv .json)")
    _tune_cli.add_parser(add)
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return run_run(args)
        if args.command == "tune":
            return _tune_cli.run_tune(args, show_progress(args.no_progress))
        if args.command == "sweep":
            return run_sweep(args)
        if args.command == "compare":
            return run_compare(args)
        if args.command == "sensitivity":
            return run_sensitivity(args)
        if args.command == "fit":
            job = None
            if (args.job_gpus is None) != (args.job_work is None):
                raise ValueError("--job-gpus and --job-work go together")
            if args.job_gpus is not None:
                job = {
                    "name": "job",
                    "gpus": args.job_gpus,
                    "work": args.job_work,
                    "checkpoint_interval": args.job_interval,
                }
            return run_fit(
                args.file,
                args.by,
                args.cause,
                args.backtest,
                args.seed,
                scenario=args.scenario,
                family=args.family,
                job=job,
                nodes=args.nodes,
                replicas=args.replicas,
                progress=show_progress(args.no_progress),
            )
        if args.command == "report":
            return run_report(args.results, args.output, args.title, args.interval)
        if args.command == "demo":
            return run_demo(args.replicas, args.seed, args.plot, show_progress(args.no_progress))
        if args.command == "info":
            return run_info()
        if args.command == "interval":
            return run_interval(args.checkpoint_cost, args.mtbf, args.work, args.restart)
        if args.command == "serve":
            from . import serve

            if args.schema:
                print(serve.schema_text(), end="")
                return 0
            return serve.main()
    except BrokenPipeError:  # the reader went away (acesim run x.toml | head)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, ImportError, OSError, RuntimeError) as exc:
        # RuntimeError: the core's refusals of a run (max_events passed, a
        # clock past 1e13 s), a message for the user rather than a traceback.
        print(f"acesim: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("acesim: interrupted", file=sys.stderr)
        return 130
    parser.print_help(sys.stderr)  # no command: a usage error
    return 2


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    return shown(text) or type(exc).__name__


def _duration_type(name: str, *, infinite: bool = False) -> Callable[[str], float]:
    """An argument type: seconds of a duration (:func:`parse_duration`'s
    grammar; with ``infinite``, also ``inf``), a usage error naming ``name``
    otherwise."""

    def duration(text: str) -> float:
        if infinite and text.strip().lower() in ("inf", "infinity", "never", "none"):
            return math.inf
        try:
            return parse_duration(text, name)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return duration


def _work_arg(text: str) -> str:
    """``--job-work``: a duration, kept as written (the scenario says it so)."""
    try:
        parse_duration(text, "--job-work")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
