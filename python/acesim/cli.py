"""Command line: ``acesim demo`` runs the built-in default scenario and
prints the ETTR decomposition; ``acesim --help`` lists the rest."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import __version__, cuda_available, cuda_built
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
from .simulation import BUCKETS as RESULT_BUCKETS
from .simulation import SimulationResult, simulate
from .units import DAY, HOUR, MINUTE

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


def run_demo(replicas: int = 2000, seed: int = 0, plot: str | None = None) -> int:
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
    res = simulate(job, model, replicas=replicas, seed=seed)
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
    best = optimal_interval(job, model, replicas=max(200, replicas // 2), seed=seed)
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
    print()
    _policy_section(max(50, replicas // 10), seed)
    print()
    _checkpoint_section(replicas, seed)
    print(f"\ndone in {time.perf_counter() - started:.1f} s")

    if plot:
        _plot(plot, summary, sweep, best)
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


def _plot(
    path: str, summary: dict[str, float], sweep: list[tuple[float, float]], best: object
) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('--plot needs matplotlib: pip install "acesim[plot]"', file=sys.stderr)
        return
    from .optimize import OptimalInterval

    assert isinstance(best, OptimalInterval)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    shares = [summary[b] for b in BUCKETS]
    axes[0].barh(BUCKETS, shares, color="tab:blue")
    axes[0].set_xlabel("share of wall-clock")
    axes[0].set_title("ETTR decomposition (1,024 GPUs)")
    axes[1].plot([s / HOUR for s, _ in sweep], [e for _, e in sweep], "o-")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("MTBF (h)")
    axes[1].set_ylabel("pooled ETTR")
    axes[1].set_title("Rare to frequent failures")
    axes[2].errorbar(best.intervals / MINUTE, best.ettrs, yerr=2 * best.stderrs, fmt=".-")
    marks = (
        (best.young, "Young", "tab:orange"),
        (best.daly, "Daly", "tab:green"),
        (best.interval, "simulated optimum", "tab:red"),
    )
    for tau, label, color in marks:
        axes[2].axvline(tau / MINUTE, linestyle="--", color=color, label=label)
    axes[2].set_xscale("log")
    axes[2].set_xlabel("checkpoint interval (min)")
    axes[2].set_ylabel("pooled ETTR")
    axes[2].legend()
    axes[2].set_title("Interval sweep")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"figure written to {path}")


def _read_history(path: str) -> Any:
    """A history file by what it holds: a shared-data file by its name, a
    sacct --parsable2 file by its header, else an event log."""
    from pathlib import Path

    from . import history

    file = Path(path)
    if not file.is_file():
        raise ValueError(f"file: {path} does not exist")
    for name, (filename, _) in history.SHARED_DATA.items():
        if file.name == filename:
            return history.read_shared(name, file.parent)
    with file.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    if "|" in first and "JobID" in first:
        return history.read_sacct(file)
    return history.read_events(file)


def run_fit(path: str, by: str | None, cause: str | None, backtest: int = 0, seed: int = 0) -> int:
    """``acesim fit FILE``: the ranked fits of the history's inter-failure
    times and, for a timeline, what happened (the measured buckets); with
    ``--backtest N`` the recorded schedule replayed ``N`` times with the
    fitted model's failures (:meth:`History.backtest`)."""
    if backtest < 0:
        raise ValueError(f"--backtest must be >= 0, got {backtest}")
    h = _read_history(path)
    if not hasattr(h, "fit"):
        raise ValueError(f"file: {path} is a summary, not a history of failures")
    fit = h.fit(by=by, cause=cause) if cause is not None else h.fit(by=by)
    print(f"acesim {__version__} fit: {path}")
    print(fit.table())
    measured = getattr(h, "measured", None)
    if measured is not None and getattr(h, "runs", None) is not None and len(h.runs):
        m = measured()
        print()
        print("What happened (GPU-hours; NaN: the source does not say):")
        for key, value in m.totals.items():
            if key.endswith("_gpu_hours"):
                print(f"   {key[: -len('_gpu_hours')]:<15}{float(value):14.1f}")
    if backtest:
        if not len(getattr(h, "runs", ())):
            raise ValueError(f"--backtest: {path} records no runs to replay")
        bt = h.backtest(replicas=backtest, seed=seed)
        pct = round(100 * bt.level)
        print()
        print(
            f"Back-test: the recorded schedule with the best fit's failures, "
            f"{bt.replicas} replicas, seed {seed} (GPU-hours; counts):"
        )
        print(bt.markdown())
        missed = [str(r["bucket"]) for r in bt.table if not r["covered"]]
        print(
            f"outside the {pct}% interval: {', '.join(missed)}"
            if missed
            else f"every bucket inside its {pct}% interval"
        )
    return 0


def run_info() -> int:
    print(f"acesim {__version__}")
    print(f"CUDA samplers built: {cuda_built()}; CUDA device available: {cuda_available()}")
    return 0


def run_interval(checkpoint_cost: float, mtbf: float, work: float | None, restart: float) -> int:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="acesim", description="Failure and recovery-policy simulator for GPU training fleets."
    )
    parser.add_argument("--version", action="version", version=f"acesim {__version__}")
    sub = parser.add_subparsers(dest="command")
    d = sub.add_parser("demo", help="run the built-in default scenario (no input needed)")
    d.add_argument("--replicas", type=int, default=2000)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--plot", metavar="FILE", help="write a figure (needs acesim[plot])")
    sub.add_parser("info", help="version and CUDA availability")
    i = sub.add_parser("interval", help="Young/Daly intervals and expected ETTR (seconds)")
    i.add_argument("checkpoint_cost", type=float)
    i.add_argument("mtbf", type=float)
    i.add_argument("--work", type=float, default=None)
    i.add_argument("--restart", type=float, default=0.0)
    s = sub.add_parser(
        "serve", help="drive a FleetModel over JSON lines (schedulers in any language)"
    )
    how = s.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--stdio",
        action="store_true",
        help="read one JSON request per line on stdin, write one reply per line on stdout",
    )
    how.add_argument("--schema", action="store_true", help="print the protocol's JSON Schema")
    f = sub.add_parser(
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
    args = parser.parse_args(argv)
    try:
        if args.command == "fit":
            return run_fit(args.file, args.by, args.cause, args.backtest, args.seed)
        if args.command == "demo":
            return run_demo(args.replicas, args.seed, args.plot)
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
    except (ValueError, TypeError) as exc:
        print(f"acesim: error: {exc}", file=sys.stderr)
        return 2
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
