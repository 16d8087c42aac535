"""Node failure clocks, time-varying failure intensity and planned maintenance
(issue 7, section 3), against figures worked out by hand, closed forms and
the intensity arithmetic checked on its own (cpp/src/engine/intensity.hpp).

Semantics asserted (``Fleet`` docstring):

- ``node_clock="busy"``: a node's failure process advances only while at
  least one job is placed on it (any phase: starting, computing, writing,
  in detection, waiting for the rest of its nodes); it pauses, keeping what
  is left of its gap, while the node is idle. ``"wall"`` (the default) is
  wall-clock time, busy or idle.
- ``rate_windows=[(start, end, factor)]``: the failure rate is multiplied by
  ``factor`` on wall-clock [start, end); exact by a change of time: a gap g
  is reached when the integral of the factor over the time the process runs
  equals g. Overlapping windows multiply; factor 0 means no failures.
- ``maintenance=[(start, duration, nodes)]``: the nodes leave service at
  ``start`` for ``duration`` (no failures meanwhile; a fresh draw when they
  return). A job computing on a drained node at ``start - S`` (``S`` its
  mean checkpoint write) writes an extra checkpoint from there; a write no
  longer than ``S`` ends by ``start``. At ``start`` the job stops, losing
  what it computed since its last checkpoint (or a write still running),
  counts a planned interruption (not a failure, no trace row), and recovers
  at once under the re-placement policy. ``maintenance_node_hours`` counts
  the windows up to the end of the simulated span.

Hand cases use constant laws (init, save and load explicit), failures placed
with ``NodeTrace.from_gaps`` and times that never tie with a checkpoint
unless the tie is the point. Every run checks the engine's invariants and
the accounting identity of every job row.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import acesim as ace
import hand_cases
import numpy as np
import pytest
from hand_cases import DAY, HOUR, MINUTE, ZERO, job, rows_of, trace_fleet

ROOT = Path(__file__).resolve().parents[1]


def run(jobs: Any, **kwargs: Any) -> ace.SimulationResult:
    """:func:`hand_cases.run` with the fleet totals checked too: every fleet
    change here (clocks, windows, maintenance) must keep each replica's
    fleet row in step with its job rows."""
    return hand_cases.run(jobs, fleet_totals=True, **kwargs)


# --------------------------------------------------------------------------
# The intensity arithmetic on its own (a C++ program over the header)
# --------------------------------------------------------------------------

INTENSITY_CHECK = r"""
#include <cmath>
#include <cstdio>
#include <random>
#include "engine/intensity.hpp"
using acesim::Intensity;
static int failures = 0;
static void expect(bool ok, const char* what) {
    if (!ok) { ++failures; std::printf("FAIL %s\n", what); }
}
int main() {
    const double inf = INFINITY;
    const double H = 3600.0;
    // No window: reach is from + gap exactly; the integral is the span.
    Intensity none;
    expect(none.constant(), "no window is constant");
    expect(none.reach(12.5, 7.25) == 12.5 + 7.25, "no window: from + gap");
    expect(none.integral(3.0, 10.0) == 7.0, "no window: integral");
    // Gap 10 h, factor 2 on [2 h, 4 h): 2 h + 2 h x 2 + 4 h = failure at 8 h.
    Intensity one({{2 * H, 4 * H, 2.0}});
    expect(one.reach(0.0, 10 * H) == 8 * H, "window: 8 h");
    expect(one.reach(0.0, 1 * H) == 1 * H, "window: before it");
    expect(one.reach(3 * H, 1 * H) == 3.5 * H, "window: inside it");
    expect(one.reach(5 * H, 1 * H) == 6 * H, "window: after it");
    expect(one.integral(0.0, 8 * H) == 10 * H, "window: integral");
    expect(one.factor(1 * H) == 1.0 && one.factor(2 * H) == 2.0, "factor");
    expect(one.factor(4 * H) == 1.0, "factor after");
    // Overlaps multiply: 2 on [2, 4), 2 x 3 on [4, 6), 3 on [6, 8); gap 20 h:
    // 2 + 4 + 12 = 18 h by 6 h, the last 2 h at factor 3: 6 h + 2/3 h.
    Intensity both({{2 * H, 6 * H, 2.0}, {4 * H, 8 * H, 3.0}});
    expect(both.factor(5 * H) == 6.0, "overlap factor");
    expect(std::fabs(both.reach(0.0, 20 * H) - (6 * H + 2 * H / 3)) < 1e-9, "overlap reach");
    // Factor 0: the clock stops; an endless zero window never fails.
    Intensity stop({{1 * H, 3 * H, 0.0}});
    expect(stop.reach(0.0, 2 * H) == 4 * H, "zero window skipped");
    expect(stop.reach(2 * H, 0.0) == 2 * H, "zero gap fires at once");
    Intensity never({{1 * H, inf, 0.0}});
    expect(never.reach(0.0, 2 * H) == inf, "endless zero window");
    expect(never.reach(0.0, 0.5 * H) == 0.5 * H, "before the endless zero window");
    Intensity forever({{1 * H, inf, 4.0}});
    expect(forever.reach(0.0, 3 * H) == 1.5 * H, "endless window");
    expect(none.reach(0.0, inf) == inf && one.reach(0.0, inf) == inf, "infinite gap");
    // Random windows: reach inverts the integral, and is monotone in the gap.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    int inverse_bad = 0, monotone_bad = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<Intensity::Window> w;
        const int n = 1 + trial % 5;
        for (int k = 0; k < n; ++k) {
            const double s = 100.0 * u(rng);
            const double f = trial % 7 == 0 && k == 0 ? 0.0 : 5.0 * u(rng);
            w.push_back({s, s + 50.0 * u(rng), f});
        }
        Intensity in(w);
        const double from = 120.0 * u(rng);
        for (int g = 0; g < 20; ++g) {
            const double gap = 10.0 * g * u(rng) + 5.0 * g;
            const double t = in.reach(from, gap);
            const double error = std::isfinite(t) ? std::fabs(in.integral(from, t) - gap) : 0.0;
            if (error > 1e-9 * (1.0 + gap)) ++inverse_bad;
        }
        double previous = from;
        for (int g = 0; g <= 40; ++g) {
            const double t = in.reach(from, 5.0 * g);
            if (t < previous) ++monotone_bad;
            previous = t;
        }
    }
    expect(inverse_bad == 0, "reach inverts integral");
    expect(monotone_bad == 0, "reach is monotone");
    std::printf("failures %d\n", failures);
    return failures == 0 ? 0 : 1;
}
"""


def test_intensity_header_known_answers(tmp_path: Path) -> None:
    """The time change on its own: reach(from, gap) is the wall time where the
    integral of the factor since ``from`` equals ``gap`` (known answers,
    overlaps, zero factors, endless windows), and it inverts the integral on
    random windows."""
    compiler = next((shutil.which(c) for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    source = tmp_path / "intensity.cpp"
    source.write_text(INTENSITY_CHECK)
    exe = tmp_path / "intensity"
    cmd = [
        compiler,
        "-std=c++17",
        "-O2",
        "-ffp-contract=off",
        f"-I{ROOT / 'cpp' / 'src'}",
        str(source),
        "-o",
        str(exe),
    ]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr


# --------------------------------------------------------------------------
# Busy clock
# --------------------------------------------------------------------------


@pytest.mark.parametrize("clock", ["wall", "busy"])
def test_busy_clock_shifts_the_failure_by_the_idle_time(clock: str) -> None:
    """One node, gap 3 h; a 1-node job of 10 h is submitted at 5 h. On the
    wall clock the idle node fails at 3 h (row job -1; repaired by 4 h) and
    the job runs 5 h -> 15 h untouched. On the busy clock the process waits
    for the job: 3 h of busy time from 5 h is 8 h; the job (2 h committed at
    7 h) loses 1 h, waits out the 1 h repair and restarts at 9 h with 8 h
    left: end 17 h."""
    fleet = trace_fleet(1, {0: [3 * HOUR]}, node_clock=clock)
    res = run(job(1, 10 * HOUR, submit=5 * HOUR), fleet=fleet)
    r, f = res.jobs[0], res.fleet[0]
    if clock == "wall":
        assert rows_of(res.trace, "job", "time") == [(-1, 3 * HOUR)]
        assert r["failures"] == 0
        assert r["end"] == pytest.approx(15 * HOUR, rel=1e-12)
        assert f["down_node_hours"] == pytest.approx(1.0, rel=1e-12)
    else:
        assert rows_of(res.trace, "job", "time", "inter_failure") == [(0, 8 * HOUR, 3 * HOUR)]
        assert r["failures"] == 1
        assert r["wasted"] == pytest.approx(HOUR, rel=1e-12)
        assert r["recovery_wait"] == pytest.approx(HOUR, rel=1e-12)
        assert r["end"] == pytest.approx(17 * HOUR, rel=1e-12)
        assert f["down_node_hours"] == pytest.approx(1.0, rel=1e-12)
    assert r["queue_wait"] == 0.0  # counted from its submission at 5 h


@pytest.mark.parametrize("clock", ["wall", "busy"])
def test_busy_clock_pauses_between_jobs(clock: str) -> None:
    """One node, gap 3.5 h. Job A (2 h) runs 0 -> 2 h; job B (2 h) is
    submitted at 5 h. Busy clock: A uses 2 h of the gap, the process pauses
    2 h -> 5 h and resumes with B: failure at 6.5 h (B committed 1 h at 6 h,
    loses 0.5 h), repaired by 7.5 h, B ends 8.5 h. Wall clock: the idle node
    fails at 3.5 h (row job -1) and B ends at 7 h."""
    fleet = trace_fleet(1, {0: [3.5 * HOUR]}, node_clock=clock)
    res = run([job(1, 2 * HOUR), job(1, 2 * HOUR, submit=5 * HOUR)], fleet=fleet)
    a, b = res.jobs
    assert a["failures"] == 0 and a["end"] == pytest.approx(2 * HOUR, rel=1e-12)
    if clock == "wall":
        assert rows_of(res.trace, "job", "time") == [(-1, 3.5 * HOUR)]
        assert b["failures"] == 0
        assert b["end"] == pytest.approx(7 * HOUR, rel=1e-12)
    else:
        assert rows_of(res.trace, "job", "time") == [(1, 6.5 * HOUR)]
        assert b["failures"] == 1
        assert b["wasted"] == pytest.approx(0.5 * HOUR, rel=1e-12)
        assert b["end"] == pytest.approx(8.5 * HOUR, rel=1e-12)


def test_busy_clock_counts_detection_and_waiting() -> None:
    """A node holding a job in detection or waiting for its other node is
    busy. A 2-node job on both nodes (10 h, hourly checkpoints), busy clock,
    WAIT_REPAIR, faults seen after 6 minutes, 1 h repairs. Node 0 fails at
    1.5 h (1 h committed, 0.5 h lost): detection 1.5 -> 1.6 h, then the job
    waits for node 0 (back at 2.6 h) holding node 1. Node 1's gap of 2 h runs
    on through the detection and the wait: it fails at 2 h (row job -1, the
    job is not running), back at 3.1 h. Restart at 3.1 h, end 12.1 h."""
    fleet = trace_fleet(2, {0: [1.5 * HOUR], 1: [2 * HOUR]}, node_clock="busy")
    res = run(
        job(2, 10 * HOUR),
        fleet=fleet,
        causes=[ace.Cause("crash", 1.0, detect=ace.Constant(6 * MINUTE))],
        policy=ace.Policy(replacement=ace.Replacement.WAIT_REPAIR),
    )
    r, f = res.jobs[0], res.fleet[0]
    assert rows_of(res.trace, "job", "node", "time") == [(0, 0, 1.5 * HOUR), (-1, 1, 2 * HOUR)]
    assert r["failures"] == 1
    assert r["detection"] == pytest.approx(0.1 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(1.5 * HOUR, rel=1e-12)  # 1.6 h -> 3.1 h
    assert r["end"] == pytest.approx(12.1 * HOUR, rel=1e-12)
    assert f["node_failures"] == 2
    assert f["down_node_hours"] == pytest.approx(2.2, rel=1e-12)


def test_busy_clock_idle_spare_never_fails() -> None:
    """Two nodes, node 1 an idle hot spare with a gap of 1 h; a 1-node job of
    5 h on node 0. On the busy clock the spare never runs a job, so it never
    fails; on the wall clock it fails at 1 h."""
    for clock, rows in (("busy", []), ("wall", [(-1, 1, HOUR)])):
        fleet = trace_fleet(2, {1: [HOUR]}, spares=1, node_clock=clock)
        res = run(job(1, 5 * HOUR), fleet=fleet)
        assert rows_of(res.trace, "job", "node", "time") == rows, clock
        assert res.jobs[0]["end"] == pytest.approx(5 * HOUR, rel=1e-12)


def test_busy_clock_failure_count_is_busy_node_hours_over_mtbf() -> None:
    """Twelve nodes (4 hot spares), Exponential(2 days) node failures on the
    busy clock, 2-hour repairs, no detection latency; 2-node jobs of a day
    arrive every 8 hours over 40 days, so nodes spend much of the time idle.
    Failures are memoryless, so on each node the busy clock gives a Poisson
    process in busy in-service time: E[node failures] = busy node-hours /
    MTBF. Busy node-time is measured from the rows (a job holds its nodes
    while starting, computing and writing; it never waits: replacements are
    always at hand). The wall clock would give about 12 x 40 / 2 = 240 per
    replica; busy time is about half of it. Tolerance: 4 Poisson standard
    deviations of the total over 40 replicas."""
    mtbf = 2 * DAY
    fleet = ace.Fleet(
        12,
        spares=4,
        repair=ace.Constant(2 * HOUR),
        node_failures=ace.Exponential(mtbf),
        node_clock="busy",
    )
    jobs = [
        job(2, DAY, interval=2 * HOUR, save=ace.Constant(5 * MINUTE), submit=8 * HOUR * i)
        for i in range(120)
    ]
    replicas = 40
    res = run(jobs, fleet=fleet, replicas=replicas, seed=7301, horizon=40 * DAY, threads=2)
    rows = res.jobs
    assert np.all(rows["recovery_wait"] == 0.0) and np.all(rows["detection"] == 0.0)
    held = rows["productive"] + rows["wasted"] + rows["ckpt_stall"] + rows["overhead"]
    busy_node_seconds = float(np.sum(held * 2))
    expected = busy_node_seconds / mtbf
    got = int(res.fleet["node_failures"].sum())
    assert expected < 0.75 * replicas * 12 * 40 / 2  # mostly idle: far below the wall-clock count
    assert abs(got - expected) < 4 * math.sqrt(expected), (got, expected)
    # Every node-level failure struck a busy node, so each hit a job.
    assert np.all(res.trace["job"] >= 0)


# --------------------------------------------------------------------------
# Rate windows
# --------------------------------------------------------------------------


def test_rate_window_shifts_the_failure_exactly() -> None:
    """One node, gap 10 h, factor 2 on [2 h, 4 h): 2 h of intensity time by
    2 h, 4 more by 4 h, the last 4 at factor 1: the failure comes at 8 h
    (10 h without the window). A 1-node job of 20 h (7 h committed at 7 h)
    loses 1 h, waits out the 1 h repair and ends at 22 h."""
    fleet = trace_fleet(1, {0: [10 * HOUR]}, rate_windows=[(2 * HOUR, 4 * HOUR, 2.0)])
    res = run(job(1, 20 * HOUR), fleet=fleet)
    assert rows_of(res.trace, "job", "time", "inter_failure") == [(0, 8 * HOUR, 10 * HOUR)]
    r = res.jobs[0]
    assert r["wasted"] == pytest.approx(HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(22 * HOUR, rel=1e-12)


def test_rate_windows_overlap_multiply_and_zero_stops() -> None:
    """Node 0: gap 20 h under factor 2 on [2 h, 6 h) and 3 on [4 h, 8 h)
    (6 on the overlap): 2 + 4 + 12 = 18 h by 6 h, the last 2 h at factor 3:
    failure at 6 h 40 min. Node 1: gap 2 h under factor 0 on [1 h, 3 h):
    the clock stops for 2 h, failure at 4 h. Idle nodes, so rows job -1."""
    windows = [(2 * HOUR, 6 * HOUR, 2.0), (4 * HOUR, 8 * HOUR, 3.0)]
    fleet = trace_fleet(3, {0: [20 * HOUR]}, rate_windows=windows)
    res = run(job(1, 10 * HOUR), fleet=fleet)
    assert rows_of(res.trace, "node") == [(0,)]
    assert res.trace["time"][0] == pytest.approx(6 * HOUR + 40 * MINUTE, rel=1e-12)
    fleet = trace_fleet(3, {1: [2 * HOUR]}, rate_windows=[(HOUR, 3 * HOUR, 0.0)])
    res = run(job(1, 10 * HOUR), fleet=fleet)
    assert rows_of(res.trace, "job", "node", "time") == [(-1, 1, 4 * HOUR)]


def test_rate_window_on_the_busy_clock() -> None:
    """Busy clock and a window together: gap 10 h, factor 2 on [2 h, 4 h),
    the job (and the node's clock) starts at 3 h: 2 h of intensity by 4 h,
    the last 8 h at factor 1: failure at 12 h (8 h on the wall clock, which
    runs through the whole window)."""
    for clock, at in (("busy", 12 * HOUR), ("wall", 8 * HOUR)):
        fleet = trace_fleet(
            1, {0: [10 * HOUR]}, node_clock=clock, rate_windows=[(2 * HOUR, 4 * HOUR, 2.0)]
        )
        res = run(job(1, 20 * HOUR, interval=0.4 * HOUR, submit=3 * HOUR), fleet=fleet)
        assert rows_of(res.trace, "job", "time") == [(0, at)], clock


def test_failures_in_a_window_follow_the_factor() -> None:
    """Sixteen nodes, Exponential(1 day) failures, instant repairs (a node is
    always in service, so each node's process is Poisson with rate
    factor(t) / MTBF in wall time), factor 3 on days [20, 35) and 0 on days
    [45, 50), over 60 days. Expected per replica: 16 x 3 x 15 = 720 in the
    first window, none in the second, 16 x 40 = 640 elsewhere. Tolerance: 4
    Poisson standard deviations over 16 replicas."""
    fleet = ace.Fleet(
        16,
        repair=ZERO,
        node_failures=ace.Exponential(DAY),
        rate_windows=[(20 * DAY, 35 * DAY, 3.0), (45 * DAY, 50 * DAY, 0.0)],
    )
    replicas = 16
    res = run(
        job(1, 1e6 * HOUR, interval=0.2 * DAY),
        fleet=fleet,
        replicas=replicas,
        seed=7302,
        horizon=60 * DAY,
        threads=2,
    )
    _, first = np.unique(res.trace[["replica", "event"]], return_index=True)
    times = res.trace["time"][first]
    assert len(times) == res.fleet["node_failures"].sum()
    inside = np.count_nonzero((times >= 20 * DAY) & (times < 35 * DAY))
    stopped = np.count_nonzero((times >= 45 * DAY) & (times < 50 * DAY))
    outside = len(times) - inside - stopped
    e_inside, e_outside = replicas * 16 * 3 * 15, replicas * 16 * 40
    assert stopped == 0
    assert abs(inside - e_inside) < 4 * math.sqrt(e_inside), (inside, e_inside)
    assert abs(outside - e_outside) < 4 * math.sqrt(e_outside), (outside, e_outside)


# --------------------------------------------------------------------------
# Planned maintenance
# --------------------------------------------------------------------------

HALF = ace.Constant(0.5 * HOUR)


def test_maintenance_after_a_drain_checkpoint() -> None:
    """One node, maintenance 2.2 h -> 5.2 h. A 1-node job of 10 h, hourly
    checkpoints of 0.5 h: compute 0 -> 1 h, write -> 1.5 h (1 h committed),
    compute from 1.5 h. The drain checkpoint starts at 2.2 h - 0.5 h = 1.7 h
    (0.2 h of compute), its write ends at 2.2 h: 1.2 h committed, nothing
    lost at the stop. Waiting out the window, restart at 5.2 h: 8.8 h of
    compute in 9 segments (9 writes): end 5.2 + 8.8 + 4.5 = 18.5 h, 11
    checkpoints in all."""
    fleet = ace.Fleet(1, repair=ace.Constant(HOUR), maintenance=[(2.2 * HOUR, 3 * HOUR, [0])])
    res = run(job(1, 10 * HOUR, save=HALF), fleet=fleet, record_events=True)
    r, f = res.jobs[0], res.fleet[0]
    assert r["planned_interruptions"] == 1 and f["planned_interruptions"] == 1
    assert r["failures"] == 0 and f["failures"] == 0 and len(res.trace) == 0
    assert r["checkpoints"] == 11 and r["restarts"] == 1
    assert r["wasted"] == 0.0
    assert r["ckpt_stall"] == pytest.approx(5.5 * HOUR, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(3 * HOUR, rel=1e-12)
    assert r["detection"] == 0.0
    assert r["end"] == pytest.approx(18.5 * HOUR, rel=1e-12)
    assert f["maintenance_node_hours"] == pytest.approx(3.0, rel=1e-12)
    assert f["down_node_hours"] == 0.0
    stops = res.events[res.events["kind"] == int(ace._core.EventKind.MAINTENANCE)]
    assert rows_of(stops, "job", "time") == [(0, 2.2 * HOUR)]
    drain = res.events[res.events["kind"] == int(ace._core.EventKind.CHECKPOINT_BEGIN)]["time"][1]
    assert drain == pytest.approx(1.7 * HOUR, rel=1e-12)


@pytest.mark.parametrize(
    "start, init, wasted, overhead, end",
    [
        # The start (init 0.5 h) runs past the drain point 0.3 h: compute
        # 0.5 h -> 0.8 h is lost. Restart at 3.8 h: 0.5 h + 10 h + 10 writes
        # of 0.5 h: end 19.3 h.
        pytest.param(0.8 * HOUR, HALF, 0.3 * HOUR, HOUR, 19.3 * HOUR, id="start-past-drain-point"),
        # The drain point 1.3 h falls in the regular write 1 h -> 1.5 h; the
        # write runs to its end (before 1.8 h) and the compute 1.5 h -> 1.8 h
        # is lost. Restart at 4.8 h from 1 h: 9 h + 9 writes: end 18.3 h.
        pytest.param(1.8 * HOUR, ZERO, 0.3 * HOUR, 0.0, 18.3 * HOUR, id="regular-write-first"),
    ],
)
def test_maintenance_without_a_drain_checkpoint(
    start: float, init: ace.Distribution, wasted: float, overhead: float, end: float
) -> None:
    """One node, a 3 h window; no extra checkpoint fits, so the job loses its
    compute since its last checkpoint at the stop."""
    fleet = ace.Fleet(1, repair=ace.Constant(HOUR), maintenance=[(start, 3 * HOUR, [0])])
    res = run(job(1, 10 * HOUR, save=HALF, init=init), fleet=fleet)
    r = res.jobs[0]
    assert r["planned_interruptions"] == 1 and r["failures"] == 0
    assert r["wasted"] == pytest.approx(wasted, rel=1e-12)
    assert r["overhead"] == pytest.approx(overhead, rel=1e-12)
    assert r["recovery_wait"] == pytest.approx(3 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(end, rel=1e-12)
    assert r["productive"] == pytest.approx(10 * HOUR, rel=1e-12)


def test_maintenance_drain_write_longer_than_the_mean_is_lost() -> None:
    """Saves replayed 0.25 h, 1 h, 0.25 h, 0.25 h, 0.25 h (mean 0.4 h); a 1-node
    job of 3 h; maintenance 2 h -> 3 h. Write 1 h -> 1.25 h (1 h committed);
    the drain checkpoint starts at 2 h - 0.4 h = 1.6 h but its write takes
    1 h: still running at 2 h, so the 0.35 h segment and 0.4 h of writing
    are lost. Restart at 3 h from 1 h: 2 segments, end 3 + 2 + 0.5 = 5.5 h."""
    save = ace.Replay(np.array([0.25, 1.0, 0.25, 0.25, 0.25]) * HOUR)
    fleet = ace.Fleet(1, repair=ace.Constant(HOUR), maintenance=[(2 * HOUR, HOUR, [0])])
    res = run(job(1, 3 * HOUR, save=save), fleet=fleet)
    r = res.jobs[0]
    assert r["planned_interruptions"] == 1
    assert r["wasted"] == pytest.approx(0.75 * HOUR, rel=1e-12)
    assert r["ckpt_stall"] == pytest.approx(0.75 * HOUR, rel=1e-12)
    assert r["checkpoints"] == 3
    assert r["end"] == pytest.approx(5.5 * HOUR, rel=1e-12)


@pytest.mark.parametrize(
    "replacement, wait, spare_uses",
    [
        pytest.param(ace.Replacement.SPARES, 0.0, 1, id="spares"),
        pytest.param(ace.Replacement.WAIT_REPAIR, 3 * HOUR, 0, id="wait-repair"),
        pytest.param(ace.Replacement.REQUEUE, 3 * HOUR, 0, id="requeue"),
    ],
)
def test_maintenance_recovers_under_the_replacement_policy(
    replacement: ace.Replacement, wait: float, spare_uses: int
) -> None:
    """Two nodes, node 1 a hot spare; a 1-node job of 10 h (zero saves) on
    node 0, drained 2.5 h -> 5.5 h. With zero saves the drain checkpoint is
    at 2.5 h itself: nothing lost. The job recovers as after a failure seen
    at once: SPARES moves to the spare at 2.5 h; WAIT_REPAIR waits for node
    0 (3 h) with the spare idle; REQUEUE queues again, and a start from the
    queue never takes a hot spare, so it waits for node 0 too."""
    fleet = ace.Fleet(
        2, spares=1, repair=ace.Constant(HOUR), maintenance=[(2.5 * HOUR, 3 * HOUR, [0])]
    )
    res = run(job(1, 10 * HOUR), fleet=fleet, policy=ace.Policy(replacement=replacement))
    r, f = res.jobs[0], res.fleet[0]
    assert r["planned_interruptions"] == 1 and r["failures"] == 0
    assert r["wasted"] == 0.0
    assert r["recovery_wait"] == pytest.approx(wait, rel=1e-12)
    assert r["end"] == pytest.approx(10 * HOUR + wait, rel=1e-12)
    assert f["spare_uses"] == spare_uses
    assert f["maintenance_node_hours"] == pytest.approx(3.0, rel=1e-12)


def test_maintenance_of_a_node_under_repair() -> None:
    """One node fails at 1.5 h under its job (0.5 h lost), repair 2 h (to
    3.5 h); a window 2.5 h -> 4.5 h keeps it out to 4.5 h. The job was not
    running at 2.5 h: no planned interruption. It waits 1.5 h -> 4.5 h and
    ends at 4.5 + 9 = 13.5 h. Both figures count their own span: 2 down and
    2 maintenance node-hours."""
    fleet = trace_fleet(
        1, {0: [1.5 * HOUR]}, repair=2 * HOUR, maintenance=[(2.5 * HOUR, 2 * HOUR, [0])]
    )
    res = run(job(1, 10 * HOUR), fleet=fleet)
    r, f = res.jobs[0], res.fleet[0]
    assert r["failures"] == 1 and r["planned_interruptions"] == 0
    assert r["recovery_wait"] == pytest.approx(3 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(13.5 * HOUR, rel=1e-12)
    assert f["down_node_hours"] == pytest.approx(2.0, rel=1e-12)
    assert f["maintenance_node_hours"] == pytest.approx(2.0, rel=1e-12)


def test_windows_at_one_time_stop_a_job_once() -> None:
    """A 2-node job on both nodes of a 2-node fleet (10 h, hourly, zero
    saves); windows at 2.5 h on node 0 (1 h) and node 1 (2 h). The drain
    checkpoint is at 2.5 h (2.5 h committed), one planned interruption; the
    job needs both nodes: back at 4.5 h, 7.5 h left, end 12 h. Checkpoints:
    1, 2, 2.5 h, then 3.5 .. 9.5 h and 10 h: 11. Node-hours 1 + 2."""
    fleet = ace.Fleet(
        2,
        repair=ace.Constant(HOUR),
        maintenance=[(2.5 * HOUR, HOUR, [0]), (2.5 * HOUR, 2 * HOUR, [1])],
    )
    res = run(job(2, 10 * HOUR), fleet=fleet)
    r, f = res.jobs[0], res.fleet[0]
    assert r["planned_interruptions"] == 1 and r["restarts"] == 1
    assert r["wasted"] == 0.0
    assert r["checkpoints"] == 11
    assert r["recovery_wait"] == pytest.approx(2 * HOUR, rel=1e-12)
    assert r["end"] == pytest.approx(12 * HOUR, rel=1e-12)
    assert f["maintenance_node_hours"] == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize(
    "horizon, work, hours",
    [
        # A 5 h horizon cuts the 2 h -> 12 h window at 3 h; the window from
        # 20 h starts after the end and counts nothing.
        pytest.param(5 * HOUR, 100 * HOUR, 3.0, id="horizon"),
        # No horizon: the span ends with the job (node 0 is never drained,
        # so it runs 0 -> 10 h): 8 h of the first window.
        pytest.param(math.inf, 10 * HOUR, 8.0, id="last-job-end"),
    ],
)
def test_maintenance_node_hours_stop_at_the_end_of_the_run(
    horizon: float, work: float, hours: float
) -> None:
    fleet = ace.Fleet(
        2,
        spares=1,
        repair=ace.Constant(HOUR),
        maintenance=[(2 * HOUR, 10 * HOUR, [1]), (20 * HOUR, HOUR, [1])],
    )
    res = run(job(1, work), fleet=fleet, horizon=horizon)
    f = res.fleet[0]
    assert res.jobs[0]["planned_interruptions"] == 0  # the job runs on node 0
    assert f["maintenance_node_hours"] == pytest.approx(hours, rel=1e-12)


def test_maintenance_idle_node_restarts_its_process_fresh() -> None:
    """The idle hot spare (node 1) has gaps 1 h, 2 h and is drained 0.5 h ->
    1.5 h: no failure at 1 h (out of service); its process restarts fresh
    when it returns: the next gap, 2 h, gives a failure at 3.5 h (row job
    -1). The job on node 0 is untouched."""
    fleet = trace_fleet(2, {1: [HOUR, 2 * HOUR]}, spares=1, maintenance=[(0.5 * HOUR, HOUR, [1])])
    res = run(job(1, 5 * HOUR), fleet=fleet)
    assert rows_of(res.trace, "job", "node", "time", "inter_failure") == [
        (-1, 1, 3.5 * HOUR, 2 * HOUR)
    ]
    assert res.jobs[0]["end"] == pytest.approx(5 * HOUR, rel=1e-12)
    assert res.fleet[0]["maintenance_node_hours"] == pytest.approx(1.0, rel=1e-12)


# --------------------------------------------------------------------------
# Common random numbers, determinism, every path under the invariant checks
# --------------------------------------------------------------------------


def mixed_jobs() -> list[ace.Job]:
    return [
        ace.Job(
            32, work=6 * DAY, checkpoint_interval=HOUR, priority=2, save=ace.Exponential(300.0)
        ),
        ace.Job(24, work=4 * DAY, checkpoint_interval=2 * HOUR, priority=1),
        ace.Job(16, work=3 * DAY, checkpoint_interval=30 * MINUTE, submit=HOUR),
        ace.Job(4, work=2 * DAY, checkpoint_interval=HOUR, submit=2 * HOUR),
        ace.Job(8, work=5 * DAY, checkpoint_interval=HOUR, submit=DAY),
        ace.Job(40, work=2 * DAY, checkpoint_interval=HOUR, submit=3 * DAY, priority=3),
    ]


def featured_fleet(clock: str, maintenance: bool = True) -> ace.Fleet:
    return ace.Fleet(
        16,
        spares=1,
        repair=ace.Exponential(4 * HOUR),
        node_failures=ace.Exponential(2 * DAY),
        node_clock=clock,
        rate_windows=[(2 * DAY, 5 * DAY, 3.0), (4 * DAY, 6 * DAY, 0.5), (8 * DAY, 9 * DAY, 0.0)],
        maintenance=[
            (1.5 * DAY, 6 * HOUR, range(8)),
            (3 * DAY, 4 * HOUR, [3, 9, 15]),
            (6 * DAY, 12 * HOUR, "all"),
        ]
        if maintenance
        else [],
    )


def node_events(res: ace.SimulationResult, replica: int) -> np.ndarray:
    """One trace row per node-level failure event of a replica."""
    t = res.trace[(res.trace["replica"] == replica) & (res.trace["source"] == 1)]
    _, first = np.unique(t["event"], return_index=True)
    return t[np.sort(first)]


def test_common_random_numbers_on_the_wall_clock() -> None:
    """Rate windows and maintenance do not depend on decisions: on the wall
    clock the node failure events are the same (node, time, draw) under
    every policy, with the same seed."""
    runs = [
        run(
            mixed_jobs(),
            fleet=featured_fleet("wall"),
            causes=ace.LLAMA3_CAUSES,
            policy=ace.Policy(replacement=p),
            replicas=3,
            seed=7303,
            horizon=12 * DAY,
            threads=2,
        )
        for p in ace.Replacement
    ]
    assert all(res.jobs["planned_interruptions"].sum() > 0 for res in runs)
    for r in range(3):
        seen = [node_events(res, r) for res in runs]
        # Runs end with their last job: compare up to the earliest end.
        end = min(res.fleet["makespan"][r] for res in runs)
        keys = [
            sorted(
                zip(
                    *(e[f][e["time"] < end].tolist() for f in ("origin", "time", "inter_failure")),
                    strict=True,
                )
            )
            for e in seen
        ]
        assert len(keys[0]) > 10
        assert all(k == keys[0] for k in keys), r


def test_common_random_numbers_on_the_busy_clock() -> None:
    """On the busy clock failure times depend on placement, but every node
    draws the same sequence under every policy: each failure takes the
    node's next draw (rate windows change when, not what), so the gaps one
    policy's run saw on a node are a prefix of another's, or the other way
    round. (A maintenance window, like a repair, also discards a pending
    draw, and whether a draw is pending then depends on placement: this
    check runs without maintenance.)"""
    runs = [
        run(
            mixed_jobs(),
            fleet=featured_fleet("busy", maintenance=False),
            causes=ace.LLAMA3_CAUSES,
            policy=ace.Policy(replacement=p),
            replicas=3,
            seed=7303,
            horizon=12 * DAY,
            threads=2,
        )
        for p in ace.Replacement
    ]
    # The times do depend on placement (REQUEUE's fourth failure comes 2.8 h
    # earlier than under SPARES in replica 0).
    assert any(
        not np.array_equal(node_events(runs[0], r)["time"][:5], node_events(res, r)["time"][:5])
        for res in runs[1:]
        for r in range(3)
    )
    for r in range(3):
        seqs = [
            {n: e["inter_failure"][e["origin"] == n].tolist() for n in range(16)}
            for e in (node_events(res, r) for res in runs)
        ]
        assert sum(len(v) for v in seqs[0].values()) > 10
        for other in seqs[1:]:
            for n in range(16):
                x, y = seqs[0][n], other[n]
                k = min(len(x), len(y))
                assert x[:k] == y[:k], (r, n)


def test_deterministic_across_threads_and_replica_splits() -> None:
    """Busy clock, windows and maintenance: the same rows for 1 or 3 threads
    and for replicas split over two calls."""
    kwargs: dict[str, Any] = dict(
        fleet=featured_fleet("busy"),
        causes=ace.LLAMA3_CAUSES,
        policy=ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER),
        seed=7304,
        horizon=12 * DAY,
        record_events=True,
    )
    one = run(mixed_jobs(), replicas=4, threads=1, **kwargs)
    many = run(mixed_jobs(), replicas=4, threads=3, **kwargs)
    head = run(mixed_jobs(), replicas=2, threads=1, **kwargs)
    tail = run(mixed_jobs(), replicas=2, first_replica=2, threads=1, **kwargs)
    for table in ("jobs", "fleet", "trace", "events"):
        np.testing.assert_array_equal(getattr(one, table), getattr(many, table))
        split = np.concatenate([getattr(head, table), getattr(tail, table)])
        np.testing.assert_array_equal(getattr(one, table), split)


@pytest.mark.parametrize("replacement", list(ace.Replacement), ids=lambda p: p.name)
@pytest.mark.parametrize("clock", ["wall", "busy"])
def test_every_policy_path_keeps_the_invariants(clock: str, replacement: ace.Replacement) -> None:
    """All three features with quarantine, CHECKPOINT_AWARE preemption, job-
    and node-level failures and the Llama 3 causes: the engine's invariant
    checks (busy clocks in step, nodes out of service during their windows)
    and the accounting identity hold on every event and row; trace rows
    still match the counted failures."""
    policy = ace.Policy(
        replacement=replacement,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
        preemption_grace=30 * MINUTE,
        quarantine=ace.Quarantine(failures=2, window=DAY, duration=2 * DAY),
    )
    res = run(
        mixed_jobs(),
        failures=ace.Exponential(5 * DAY),
        fleet=featured_fleet(clock),
        causes=ace.LLAMA3_CAUSES,
        policy=policy,
        replicas=3,
        seed=7305,
        horizon=12 * DAY,
        threads=2,
    )
    assert res.fleet["planned_interruptions"].sum() > 0
    for r in range(3):
        t = res.trace[(res.trace["replica"] == r) & (res.trace["job"] >= 0)]
        rows = res.jobs[res.jobs["replica"] == r]
        np.testing.assert_array_equal(np.bincount(t["job"], minlength=len(rows)), rows["failures"])
    # The 8-node window of 6 h, the 3-node one of 4 h and 16 x 12 h (all
    # before the 12-day horizon or the last job's end).
    spans = res.fleet["makespan"]
    full = 8 * 6 + 3 * 4 + 16 * 12
    assert np.all((spans < 6.5 * DAY) | (np.abs(res.fleet["maintenance_node_hours"] - full) < 1e-9))


# --------------------------------------------------------------------------
# Validation at the boundary
# --------------------------------------------------------------------------

INF, NAN = math.inf, math.nan


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(node_clock=1), TypeError, "node_clock"),
        (dict(node_clock="cpu"), ValueError, "node_clock"),
        (dict(rate_windows="day 20"), TypeError, "rate_windows"),
        (dict(rate_windows=5), TypeError, "rate_windows"),
        (dict(rate_windows=[(1.0, 2.0)]), TypeError, "rate_windows[0]"),
        (dict(rate_windows=[(-1.0, 2.0, 1.0)]), ValueError, "rate_windows[0]: start"),
        (dict(rate_windows=[(INF, INF, 1.0)]), ValueError, "rate_windows[0] start"),
        (dict(rate_windows=[(2.0, 2.0, 1.0)]), ValueError, "rate_windows[0]: end"),
        (dict(rate_windows=[(2.0, NAN, 1.0)]), ValueError, "rate_windows[0]: end"),
        (dict(rate_windows=[(0.0, 1.0, 2.0), (2.0, 1.0, 1.0)]), ValueError, "rate_windows[1]"),
        (dict(rate_windows=[(1.0, 2.0, -0.5)]), ValueError, "rate_windows[0]: factor"),
        (dict(rate_windows=[(1.0, 2.0, INF)]), ValueError, "rate_windows[0] factor"),
        (dict(rate_windows=[(1.0, 2.0, True)]), TypeError, "rate_windows[0] factor"),
        (dict(maintenance=7), TypeError, "maintenance"),
        (dict(maintenance=[(1.0, 2.0)]), TypeError, "maintenance[0]"),
        (dict(maintenance=[(-1.0, 2.0, [0])]), ValueError, "maintenance[0]: start"),
        (dict(maintenance=[(1.0, 0.0, [0])]), ValueError, "maintenance[0]: duration"),
        (dict(maintenance=[(1.0, INF, [0])]), ValueError, "maintenance[0] duration"),
        (dict(maintenance=[(1.0, 2.0, 3)]), TypeError, "maintenance[0]: nodes"),
        (dict(maintenance=[(1.0, 2.0, "some")]), TypeError, "maintenance[0]: nodes"),
        (dict(maintenance=[(1.0, 2.0, [])]), ValueError, "maintenance[0]: nodes"),
        (dict(maintenance=[(1.0, 2.0, [4])]), ValueError, "maintenance[0] node"),
        (dict(maintenance=[(1.0, 2.0, [1.5])]), TypeError, "maintenance[0] node"),
        (dict(maintenance=[(1.0, 2.0, [0, 0])]), ValueError, "node 0 overlap"),
        (dict(maintenance=[(0.0, 2.0, [1]), (1.0, 5.0, [2, 1])]), ValueError, "node 1 overlap"),
    ],
)
def test_fleet_rejects(kwargs: dict[str, Any], exc: type[Exception], words: str) -> None:
    with pytest.raises(exc) as info:
        ace.Fleet(4, **kwargs)
    assert words in str(info.value)


def test_fleet_accepts_and_normalises() -> None:
    fleet = ace.Fleet(
        4,
        node_clock="busy",
        rate_windows=[(0, INF, 0.0), (1, 2, 3)],
        maintenance=[(0, 1, range(2)), (1, 1, np.array([1, 3])), (5, 1, "all")],
    )
    assert fleet.rate_windows == ((0.0, INF, 0.0), (1.0, 2.0, 3.0))
    assert fleet.maintenance == ((0.0, 1.0, (0, 1)), (1.0, 1.0, (1, 3)), (5.0, 1.0, (0, 1, 2, 3)))
    default = ace.Fleet(4)
    assert (default.node_clock, default.rate_windows, default.maintenance) == ("wall", (), ())
    import pickle

    back = pickle.loads(pickle.dumps(fleet))
    for name in ("node_clock", "rate_windows", "maintenance"):
        assert getattr(back, name) == getattr(fleet, name)


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("rate_windows", ((2.0, 1.0, 1.0),), "fleet.rate_windows[0]: end"),
        ("rate_windows", ((1.0, 2.0, -1.0),), "fleet.rate_windows[0]: factor"),
        ("maintenance", ((1.0, 1.0, (0, 9)),), "fleet.maintenance[0]: node 9"),
        ("maintenance", ((1.0, 0.0, (0,)),), "fleet.maintenance[0]: duration"),
        ("maintenance", ((1.0, 1.0, ()),), "fleet.maintenance[0]: nodes"),
        ("maintenance", ((1.0, 2.0, (0,)), (2.5, 1.0, (1,)), (2.0, 1.0, (0,))), "node 0 overlap"),
    ],
)
def test_core_rejects(field: str, value: Any, words: str) -> None:
    """The core validates the same fields (a Fleet changed behind its
    constructor's back reaches it)."""
    fleet = ace.Fleet(4)
    object.__setattr__(fleet, field, value)
    with pytest.raises(ValueError) as info:
        ace.simulate(job(1, HOUR), fleet=fleet)
    assert words in str(info.value)
