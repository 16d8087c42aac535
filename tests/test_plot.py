"""acesim.plot: every figure's numbers checked by the data function that the
figure is drawn from, against hand-computed or independently computed
values, and every figure rendered to PNG and checked as an image."""

from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import io
import itertools
import math
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import plot
from acesim.results_io import load_result
from acesim.simulation import BUCKETS

HAS_MPL = importlib.util.find_spec("matplotlib") is not None
needs_mpl = pytest.mark.skipif(
    not HAS_MPL, reason='matplotlib is not installed (pip install "acesim[plot]")'
)
DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TITAN = DATA_DIR / "titan_gpu_interfailure_s.csv"


# ------------------------------------------------------------------ helpers


def png(fig: Any, dpi: int = 60) -> tuple[bytes, Any]:
    """The figure rendered to PNG at ``dpi``: its bytes and its pixels (RGBA
    floats, rows x columns x 4)."""
    from matplotlib.image import imread

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    data = buffer.getvalue()
    return data, imread(io.BytesIO(data), format="png")


def check_image(fig: Any, dpi: int = 60) -> Any:
    """A PNG of the expected pixel size (the figure's size in inches x dpi)
    that is not a blank canvas; returns its RGB pixels."""
    data, pixels = png(fig, dpi)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = fig.get_size_inches() * dpi
    assert pixels.shape[:2] == (round(height), round(width))
    rgb = pixels[..., :3]
    ink = np.any(rgb < 0.9, axis=-1).mean()
    assert ink > 0.02, f"only {ink:.1%} of the pixels are drawn"
    colours = np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 20
    return rgb


def has_colour(rgb: Any, hex_colour: str, at_least: int = 20, tol: float = 0.02) -> bool:
    """Whether at least ``at_least`` pixels have the colour (within ``tol``)."""
    target = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    close = np.all(np.abs(rgb - target) <= tol, axis=-1)
    return int(close.sum()) >= at_least


def constant_job() -> ace.Job:
    return ace.Job(
        8,
        work=4 * ace.HOUR,
        checkpoint_interval=ace.HOUR,
        init=ace.Constant(300.0),
        save=ace.Constant(60.0),
        load=ace.Constant(120.0),
    )


@pytest.fixture(scope="module")
def constant_result() -> ace.SimulationResult:
    # A failure every 5,400 s of held time, constant costs: every replica the same.
    return ace.simulate(constant_job(), ace.Constant(5400.0), replicas=3, seed=0)


# Each start costs init + load = 420 s. Run 1: start 0-420, compute to 4,020,
# write to 4,080 (checkpoint at 1 h), compute until the failure at 5,400:
# 1,320 s lost. Runs 2 and 3 the same from 5,400 and 10,800 (the failure
# clock restarts with each start). Run 4 from 16,200: start to 16,620, one
# hour of compute to 20,220 and the last write to 20,280, work done.
HAND_WALL = 20280.0
HAND = {
    "productive": 4 * 3600.0,
    "wasted": 3 * 1320.0,
    "ckpt_stall": 4 * 60.0,
    "overhead": 4 * 420.0,
    "detection": 0.0,
    "queue_wait": 0.0,
    "recovery_wait": 0.0,
    "narrow": 0.0,
}


# ------------------------------------------------------------ the breakdown


def test_breakdown_shares_by_hand(constant_result: ace.SimulationResult) -> None:
    assert sum(HAND.values()) == HAND_WALL
    data = plot.ettr_breakdown_data(constant_result)
    assert data.buckets == BUCKETS
    expected = np.array([HAND[b] / HAND_WALL for b in BUCKETS])
    np.testing.assert_allclose(data.shares[0], expected, rtol=0, atol=1e-12)
    assert data.shown == ("productive", "wasted", "ckpt_stall", "overhead")
    # every replica alike: the interval has no width
    assert data.ettr[0].value == pytest.approx(14400.0 / HAND_WALL, abs=1e-12)
    assert data.ettr[0].low == pytest.approx(data.ettr[0].high, abs=1e-12)
    assert "narrow" in data.caption  # named as not drawn


def test_breakdown_of_several_results_pools_each(constant_result: ace.SimulationResult) -> None:
    job = ace.Job(64, work=ace.DAY, checkpoint_interval=ace.HOUR)
    other = ace.simulate(job, ace.Exponential(8 * ace.HOUR), replicas=12, seed=2)
    data = plot.ettr_breakdown_data({"constant": constant_result, "exponential": other})
    assert data.names == ("constant", "exponential")
    summary = other.summary()
    # independently: the shares summary() reports
    np.testing.assert_allclose(data.shares[1], [summary[b] for b in BUCKETS], rtol=1e-12)
    np.testing.assert_allclose(data.shares.sum(axis=1), 1.0, rtol=1e-12)
    assert data.ettr[1] == pytest.approx(tuple(other.ettr()))


@needs_mpl
def test_breakdown_figure_writes_the_shares_on_the_bars(
    constant_result: ace.SimulationResult,
) -> None:
    fig = plot.ettr_breakdown(constant_result)
    rgb = check_image(fig)
    ax = fig.axes[0]
    written = {t.get_text() for t in ax.texts}
    for bucket in ("productive", "wasted", "ckpt_stall", "overhead"):
        assert f"{HAND[bucket] / HAND_WALL:.2%}" in written
    assert [t.get_text() for t in ax.get_yticklabels()] == list(
        plot.ettr_breakdown_data(constant_result).shown
    )
    for bucket in ("productive", "wasted", "overhead"):
        assert has_colour(rgb, plot.BUCKET_COLORS[bucket]), bucket
    assert not has_colour(rgb, plot.BUCKET_COLORS["recovery_wait"])  # zero: not drawn


def test_titles_and_captions_from_provenance(constant_result: ace.SimulationResult) -> None:
    plain = plot.ettr_breakdown_data(constant_result)
    assert plain.title == "ETTR breakdown"
    assert "3 replicas, seed 0" in plain.caption
    res = ace.simulate(constant_job(), ace.Constant(5400.0), replicas=2, seed=7)
    res = res.with_provenance(scenario={"run": {"name": "lemon fleet"}})
    data = plot.ettr_breakdown_data(res)
    assert data.title == "ETTR breakdown: lemon fleet"
    assert f'Scenario "lemon fleet", 2 replicas, seed 7, acesim {ace.__version__}.' in data.caption
    explicit = plot.ettr_breakdown_data(res, title="Mine", caption="Said so.")
    assert (explicit.title, explicit.caption) == ("Mine", "Said so.")
    # a single result is named by its scenario
    assert data.names == ("lemon fleet",)


@needs_mpl
def test_own_figure_and_given_axes(constant_result: ace.SimulationResult) -> None:
    from matplotlib.figure import Figure

    fig = plot.ettr_breakdown(constant_result)
    data = plot.ettr_breakdown_data(constant_result)
    assert fig.get_suptitle() == data.title
    assert fig.get_supxlabel().replace("\n", " ") == data.caption
    mine = Figure(figsize=(8, 3))
    left, right = mine.subplots(1, 2)
    out = plot.ettr_breakdown(constant_result, ax=right)
    assert out is mine
    assert right.get_title(loc="left") == data.title
    assert mine.get_suptitle() == "" and mine.get_supxlabel() == ""
    assert not left.has_data() and right.has_data()
    none = plot.ettr_breakdown(constant_result, title="", caption="")
    assert none.get_suptitle() == "" and none.get_supxlabel() == ""


# ------------------------------------------------------- interval curve


@pytest.fixture(scope="module")
def best() -> ace.OptimalInterval:
    job = ace.Job(256, work=2 * ace.DAY, checkpoint_interval=ace.HOUR, save=ace.Constant(120.0))
    return ace.optimal_interval(job, ace.Exponential(6 * ace.HOUR), replicas=40, seed=2)


def test_interval_marks_are_young_daly_and_the_optimum(best: ace.OptimalInterval) -> None:
    data = plot.interval_curve_data(best, chosen=ace.HOUR)
    mtbf = 6 * ace.HOUR
    assert data.marks["young"] == pytest.approx(ace.young_interval(120.0, mtbf), rel=1e-12)
    assert data.marks["young"] == pytest.approx(math.sqrt(2 * 120.0 * mtbf), rel=1e-12)
    assert data.marks["daly"] == pytest.approx(ace.daly_interval(120.0, mtbf), rel=1e-12)
    assert data.marks["optimum"] == best.interval
    assert data.marks["chosen"] == ace.HOUR
    assert list(data.marks) == ["chosen", "young", "daly", "optimum"]
    assert "chosen" not in plot.interval_curve_data(best).marks
    np.testing.assert_array_equal(data.intervals, best.intervals)
    np.testing.assert_array_equal(data.ettr, best.ettrs)


def test_interval_band_is_the_ettr_interval(best: ace.OptimalInterval) -> None:
    """Each point's band is the interval res.ettr() gives (the same function
    of the per-replica linearized values), whose SE is the stored stderr;
    the optimum's is that of the fresh replicas."""
    from acesim import stats

    data = plot.interval_curve_data(best, ci=0.9)
    n = best.replicas
    assert best.influences.shape == (best.intervals.size, n)
    np.testing.assert_allclose(
        np.sqrt(np.sum(best.influences**2, axis=1) / (n * (n - 1))), best.stderrs, rtol=1e-9
    )
    low, high = stats._ettr_interval(best.ettrs, best.influences, 0.9, two_sided=True)
    np.testing.assert_array_equal(data.low, low)
    np.testing.assert_array_equal(data.high, high)
    assert np.all((data.low < data.ettr) & (data.ettr < data.high))
    assert np.all((data.low >= 0) & (data.high <= 1))
    fresh_se = math.sqrt(float(np.sum(best.fresh_influence**2)) / (n * (n - 1)))
    assert fresh_se == pytest.approx(best.ettr_stderr, rel=1e-9)
    opt = stats._ettr_interval(best.ettr, best.fresh_influence, 0.9, two_sided=True)
    assert (data.optimum_low, data.optimum_high) == (float(opt[0]), float(opt[1]))
    assert data.optimum_low < data.optimum_ettr < data.optimum_high
    assert f"90% CI {data.optimum_low:.4f} to {data.optimum_high:.4f}" in data.caption
    assert data.optimum_ettr == best.ettr
    assert data.plausible == best.plausible


@needs_mpl
def test_interval_figure_draws_band_and_labelled_marks(best: ace.OptimalInterval) -> None:
    from matplotlib.collections import PolyCollection

    fig = plot.interval_curve(best, chosen=ace.HOUR)
    rgb = check_image(fig)
    ax = fig.axes[0]
    data = plot.interval_curve_data(best, chosen=ace.HOUR)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for prefix in ("chosen", "Young", "Daly", "simulated optimum", "95% band"):
        assert any(label.startswith(prefix) for label in labels), prefix
    # the vertical marks sit at the data's intervals (in the axis' unit)
    size = ace.MINUTE
    assert ax.get_xlabel() == "checkpoint interval (min)"
    marks = {
        line.get_gid(): line.get_xdata()[0]
        for line in ax.get_lines()
        if str(line.get_gid()).startswith("mark-")
    }
    assert marks == pytest.approx({f"mark-{k}": v / size for k, v in data.marks.items()})
    band = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert band, "no confidence band drawn"
    assert has_colour(rgb, "#D55E00")  # the optimum


# ---------------------------------------------- per-replica distributions


def test_replica_values_are_the_fleet_rollup() -> None:
    fleet = ace.Fleet(8, repair=ace.Constant(ace.HOUR), node_failures=ace.Exponential(2 * ace.DAY))
    jobs = [
        ace.Job(32, work=ace.DAY, checkpoint_interval=ace.HOUR),
        ace.Job(8, work=6 * ace.HOUR, checkpoint_interval=ace.HOUR, submit=ace.HOUR),
    ]
    res = ace.simulate(jobs, fleet=fleet, replicas=6, seed=3)
    np.testing.assert_allclose(plot.replica_values(res, "ettr"), res.fleet["ettr"], rtol=1e-12)
    one = ace.simulate(jobs[0], ace.Exponential(ace.DAY), replicas=5, seed=3)
    np.testing.assert_allclose(plot.replica_values(one, "ettr"), one.jobs["ettr"], rtol=1e-12)
    np.testing.assert_array_equal(plot.replica_values(one, "wall"), one.jobs["wall"])
    with pytest.raises(ValueError, match="metric"):
        plot.replica_values(one, "goodput")  # type: ignore[arg-type]


def law_pair(law: ace.Distribution, replicas: int = 60) -> dict[str, ace.SimulationResult]:
    job = ace.Job(512, work=ace.DAY, checkpoint_interval=ace.HOUR)
    return plot.exponential_vs_history_results(job, law, replicas=replicas, seed=11)


def test_exponential_has_the_history_laws_mean() -> None:
    law = ace.Weibull(0.5, 3 * ace.HOUR / math.gamma(3.0))  # mean 3 h, bursty
    runs = law_pair(law)
    assert list(runs) == ["history", "exponential"]
    # the simulator's own record of each job's MTBF under each law
    np.testing.assert_allclose(runs["history"].jobs["mtbf"], 3 * ace.HOUR, rtol=1e-9)
    np.testing.assert_allclose(runs["exponential"].jobs["mtbf"], 3 * ace.HOUR, rtol=1e-9)
    # same seed and replicas, so the pair can be compared replica by replica
    assert runs["history"].seed == runs["exponential"].seed == 11
    data = plot.exponential_vs_history_data(
        runs["history"], runs["exponential"], mtbf=law.mean(), history_label="Weibull k=0.5"
    )
    dist = data.distribution
    assert dist.names == ("Weibull k=0.5", "exponential, same mean")
    for values, res in zip(dist.values, runs.values(), strict=True):
        np.testing.assert_allclose(values, res.jobs["ettr"], rtol=1e-12)
    widths = np.diff(dist.edges)
    np.testing.assert_allclose((dist.density * widths).sum(axis=1), 1.0, rtol=1e-12)
    assert dist.edges[0] <= min(v.min() for v in dist.values)
    assert dist.edges[-1] >= max(v.max() for v in dist.values)
    np.testing.assert_allclose(dist.mean, [v.mean() for v in dist.values])
    assert "3 h" in data.caption


@needs_mpl
@pytest.mark.skipif(not TITAN.exists(), reason=f"shared data not found at {DATA_DIR}")
def test_exponential_vs_titan_history_figure() -> None:
    law = ace.Empirical.from_csv(TITAN, "inter_failure_s")
    runs = law_pair(law, replicas=40)
    np.testing.assert_allclose(runs["exponential"].jobs["mtbf"], law.samples.mean(), rtol=1e-9)
    fig = plot.exponential_vs_history(
        runs["history"], runs["exponential"], mtbf=law.mean(), history_label="Titan GPUs"
    )
    rgb = check_image(fig)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "Titan GPUs",
        "exponential, same mean",
    ]
    assert has_colour(rgb, plot._SERIES[0]) and has_colour(rgb, plot._SERIES[1])
    wall = plot.exponential_vs_history(runs["history"], runs["exponential"], metric="wall")
    check_image(wall)
    assert wall.axes[0].get_xlabel().startswith("wall-clock (")


def test_constant_law_distribution_has_one_bin(constant_result: ace.SimulationResult) -> None:
    data = plot.replica_distribution_data(constant_result)
    assert data.edges.size == 2
    assert data.density[0] @ np.diff(data.edges) == pytest.approx(1.0)
    assert data.median[0] == pytest.approx(14400.0 / HAND_WALL)


# ---------------------------------------------------------------- timeline


def hand_fleet(repair: float = 3600.0) -> ace.Fleet:
    return ace.Fleet(
        3,
        repair=ace.Constant(repair),
        node_failures=ace.NodeTrace.from_times({0: [5000.0], 1: [9000.0, 30000.0]}, nodes=3),
        maintenance=[(50000.0, 2000.0, [2])],
    )


HAND_POLICY = ace.Policy(
    replacement=ace.Replacement.WAIT_REPAIR, quarantine=ace.Quarantine(2, ace.DAY, 7200.0)
)


@pytest.fixture(scope="module")
def hand_timeline() -> ace.SimulationResult:
    # One job on all three nodes: every failure hits it, and under
    # WAIT_REPAIR it waits for the node to come back.
    job = ace.Job(
        24,
        work=20 * ace.HOUR,
        checkpoint_interval=ace.HOUR,
        init=ace.Constant(60.0),
        save=ace.Constant(30.0),
        load=ace.Constant(60.0),
    )
    return ace.simulate(
        job, fleet=hand_fleet(), policy=HAND_POLICY, replicas=2, seed=5, record_events=True
    )


def test_timeline_spans_are_the_hand_placed_failures(hand_timeline: ace.SimulationResult) -> None:
    data = plot.fleet_timeline_data(hand_timeline)
    assert data.replica == 0 and data.nodes == (0, 1, 2)
    spans = [(s.node, s.state, s.start, s.end) for s in data.node_spans]
    assert spans == [
        (0, "down", 5000.0, 5000.0 + 3600.0),  # repair
        (1, "down", 9000.0, 9000.0 + 3600.0),
        # second failure within a day: quarantined 2 h (its 1 h repair inside)
        (1, "quarantined", 30000.0, 30000.0 + 7200.0),
        (2, "maintenance", 50000.0, 52000.0),
    ]
    assert not any(s.open for s in data.node_spans)
    assert (data.quarantines, data.recorded_quarantines) == (1, 1)
    fleet = hand_timeline.fleet[0]
    quarantined = sum(s.end - s.start for s in data.node_spans if s.state == "quarantined")
    assert quarantined / ace.HOUR == pytest.approx(fleet["quarantined_node_hours"])
    assert 2000.0 / ace.HOUR == pytest.approx(fleet["maintenance_node_hours"])


def test_timeline_job_gantt_by_hand(hand_timeline: ace.SimulationResult) -> None:
    data = plot.fleet_timeline_data(hand_timeline)
    row = hand_timeline.jobs[hand_timeline.jobs["replica"] == 0][0]
    end = float(row["end"])
    waits = [(5000.0, 8600.0), (9000.0, 12600.0), (30000.0, 37200.0), (50000.0, 52000.0)]
    expected = []
    t = 0.0
    for a, b in waits:
        expected += [(0, "running", t, a), (0, "waiting", a, b)]
        t = b
    expected.append((0, "running", t, end))
    assert [tuple(s) for s in data.job_spans] == expected
    # the waits are the job's recovery_wait bucket, the spans its wall
    assert sum(b - a for a, b in waits) == pytest.approx(row["recovery_wait"])
    assert sum(s.end - s.start for s in data.job_spans) == pytest.approx(row["wall"])
    assert [(m.kind, m.time) for m in data.markers] == [
        ("failure", 5000.0),
        ("failure", 9000.0),
        ("failure", 30000.0),
        ("maintenance", 50000.0),
    ]
    trace = hand_timeline.trace[hand_timeline.trace["replica"] == 0]
    assert [m.time for m in data.markers if m.kind == "failure"] == list(trace["time"])
    # every run holds all three nodes
    runs = [(s.start, s.end) for s in data.job_spans if s.state == "running"]
    for node in (0, 1, 2):
        mine = [(o.start, o.end) for o in data.occupancy if o.node == node]
        assert mine == runs
    assert data.end == end


def test_timeline_quarantine_shorter_than_repair() -> None:
    # Quarantine on the first failure for 3,000 s; the repair takes 10,000 s:
    # quarantined, then down for the rest of the repair.
    policy = ace.Policy(quarantine=ace.Quarantine(1, ace.DAY, 3000.0))
    job = ace.Job(8, work=10 * ace.HOUR, checkpoint_interval=ace.HOUR)
    res = ace.simulate(
        job, fleet=hand_fleet(repair=10000.0), policy=policy, replicas=1, seed=0,
        record_events=True,
    )  # fmt: skip
    data = plot.fleet_timeline_data(without_provenance(res))  # node_events only
    node0 = [(s.state, s.start, s.end) for s in data.node_spans if s.node == 0]
    assert node0 == [("quarantined", 5000.0, 8000.0), ("down", 8000.0, 15000.0)]
    fleet = res.fleet[0]
    q_hours = sum(s.end - s.start for s in data.node_spans if s.state == "quarantined") / 3600
    assert q_hours == pytest.approx(fleet["quarantined_node_hours"])
    assert data.quarantines == fleet["quarantines"]
    # repair spans run from each failure for 10,000 s (cut at the end)
    failures = [s for s in data.node_spans if s.state in ("down", "quarantined")]
    starts = sorted({s.start for s in failures if s.state == "quarantined"})
    assert starts == sorted(float(t) for t in res.trace["time"] if t < data.end)


def without_provenance(res: ace.SimulationResult) -> ace.SimulationResult:
    """The result as if it came from somewhere that did not say how it was
    made (its simulate arguments unknown)."""
    return dataclasses.replace(res, _origin=None)


def saved_before_quarantines_were_recorded(res: ace.SimulationResult) -> ace.SimulationResult:
    """The result as a file written before ``node_events`` recorded
    quarantines holds it: no ``until`` column, no quarantine rows."""
    assert res.node_events is not None
    rows = res.node_events[res.node_events["kind"] <= ace.NodeEventKind.MAINTENANCE]
    names = ["replica", "node", "kind", "event", "cause", "time"]
    dtype = np.dtype(
        {
            "names": names,
            "formats": [rows.dtype[n] for n in names],
            "offsets": [0, 4, 8, 12, 16, 24],
            "itemsize": 32,
        }
    )  # the table's dtype then
    old = np.zeros(rows.size, dtype)
    for name in names:
        old[name] = rows[name]
    return dataclasses.replace(res, node_events=old)


def test_timeline_reads_quarantines_from_the_node_events_only(
    hand_timeline: ace.SimulationResult,
) -> None:
    """Neither the policy nor the provenance is needed: the spans come from
    the node events the core wrote (the quarantine of node 1 at 30,000 s is
    its QUARANTINED row, until 37,200 s)."""
    bare = without_provenance(hand_timeline)
    data = plot.fleet_timeline_data(bare)
    spans = [(s.node, s.state, s.start, s.end) for s in data.node_spans]
    assert spans == [
        (0, "down", 5000.0, 8600.0),
        (1, "down", 9000.0, 12600.0),
        (1, "quarantined", 30000.0, 37200.0),
        (2, "maintenance", 50000.0, 52000.0),
    ]
    assert (data.quarantines, data.recorded_quarantines) == (1, 1)
    assert "1 quarantine(s) from the node events." in data.caption


def test_timeline_of_a_result_saved_before_quarantines_were_recorded(
    hand_timeline: ace.SimulationResult,
) -> None:
    """A result without quarantine rows: its failure spans are
    "down_or_quarantined" (one of them was a quarantine), and the caption
    says the quarantines were not recorded."""
    data = plot.fleet_timeline_data(saved_before_quarantines_were_recorded(hand_timeline))
    spans = [(s.node, s.state, s.start, s.end) for s in data.node_spans]
    assert spans == [
        (0, "down_or_quarantined", 5000.0, 8600.0),
        (1, "down_or_quarantined", 9000.0, 12600.0),
        (1, "down_or_quarantined", 30000.0, 37200.0),
        (2, "maintenance", 50000.0, 52000.0),
    ]
    assert data.quarantines is None and data.recorded_quarantines == 1
    assert "saved before its node events recorded quarantines" in data.caption
    assert "its 1 quarantine(s) are not told apart from repairs" in data.caption
    # one that recorded no quarantine has only repairs, and says so too
    job = ace.Job(24, work=20 * ace.HOUR, checkpoint_interval=ace.HOUR)
    res = ace.simulate(job, fleet=hand_fleet(), replicas=1, seed=1, record_events=True)
    data = plot.fleet_timeline_data(saved_before_quarantines_were_recorded(res))
    assert {s.state for s in data.node_spans} == {"down", "maintenance"}
    assert data.quarantines is None
    assert "saved before its node events recorded quarantines (it recorded none)" in data.caption


def test_timeline_of_a_file_written_by_acesim_0_1_0() -> None:
    """A file saved by acesim 0.1.0 (tests/data/before_trust): replica 1
    recorded 2 quarantines that its node events do not mark."""
    res = load_result(Path(__file__).parent / "data" / "before_trust" / "fleet.npz")
    assert res.node_events is not None and "until" not in (res.node_events.dtype.names or ())
    data = plot.fleet_timeline_data(res, replica=1)
    assert data.quarantines is None and data.recorded_quarantines == 2
    assert "its 2 quarantine(s) are not told apart from repairs" in data.caption
    assert {s.state for s in data.node_spans} <= {"down_or_quarantined", "maintenance"}
    assert any(s.state == "down_or_quarantined" for s in data.node_spans)
    zero = plot.fleet_timeline_data(res, replica=0)
    assert "saved before its node events recorded quarantines (it recorded none)" in zero.caption


def test_timeline_quarantine_argument_is_deprecated(hand_timeline: ace.SimulationResult) -> None:
    with pytest.warns(DeprecationWarning, match="quarantine= is no longer used"):
        given = plot.fleet_timeline_data(hand_timeline, quarantine=ace.Quarantine(9, 1.0, 1.0))
    assert given == plot.fleet_timeline_data(hand_timeline)  # ignored


def test_timeline_needs_the_event_log() -> None:
    job = ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0)
    res = ace.simulate(job, fleet=ace.Fleet(2), replicas=1, seed=1)
    with pytest.raises(ValueError, match="record_events=True"):
        plot.fleet_timeline_data(res)
    logged = ace.simulate(job, fleet=ace.Fleet(2), replicas=2, seed=1, record_events=True)
    with pytest.raises(ValueError, match="replica 9"):
        plot.fleet_timeline_data(logged, replica=9)


def test_timeline_spans_partition_each_jobs_wall() -> None:
    # A tight fleet: the flagship's recoveries preempt the small jobs.
    fleet = ace.Fleet(
        10, repair=ace.LogNormal(8.0, 1.0), node_failures=ace.Exponential(2 * ace.DAY)
    )
    jobs = [ace.Job(64, work=2 * ace.DAY, checkpoint_interval="daly", priority=1)]
    jobs += [
        ace.Job(8, work=6 * ace.HOUR, checkpoint_interval=ace.HOUR, submit=i * ace.HOUR)
        for i in range(8)
    ]
    policy = ace.Policy(
        replacement=ace.Replacement.PREEMPT_LOWER, quarantine=ace.Quarantine(2, ace.DAY, ace.DAY)
    )
    res = ace.simulate(
        jobs, fleet=fleet, policy=policy, causes=ace.LLAMA3_CAUSES, replicas=3, seed=1,
        record_events=True,
    )  # fmt: skip
    # the case is not vacuous: quarantines, preemptions, detection latencies
    assert res.fleet["quarantines"].min() > 0 and res.fleet["preemptions"].min() > 0
    for replica in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            data = plot.fleet_timeline_data(res, replica=replica)
        rows = res.jobs[res.jobs["replica"] == replica]
        for row in rows:
            mine = [s for s in data.job_spans if s.job == row["job"]]
            assert mine[0].start == row["submit"] and mine[-1].end == row["end"]
            for a, b in itertools.pairwise(mine):
                assert a.end == b.start
            queued = sum(s.end - s.start for s in mine if s.state == "queued")
            assert queued <= row["queue_wait"] + 1e-6
        failures = [m for m in data.markers if m.kind == "failure"]
        assert len(failures) == rows["failures"].sum()
        preempted = [m for m in data.markers if m.kind == "preempted"]
        assert len(preempted) == rows["preemptions"].sum()
        down = sum(s.end - s.start for s in data.node_spans if s.state == "quarantined")
        fleet_row = res.fleet[res.fleet["replica"] == replica][0]
        assert down / ace.HOUR == pytest.approx(fleet_row["quarantined_node_hours"], abs=1e-9)
        assert data.quarantines == fleet_row["quarantines"]
        assert any(s.state == "detecting" for s in data.job_spans)


def test_timeline_quarantines_are_the_cores_over_many_features() -> None:
    # Every re-placement policy, misdiagnosed repairs, failure causes (some
    # leave the node in service, some take a block of nodes), a horizon,
    # elastic jobs, cold spares, time limits, maintenance, lemons, and
    # quarantines for a while or for good: the spans from the node events
    # add up to the core's quarantine count and node-hours, the RETIRED rows
    # to its retired nodes, and each job's spans to its wall-clock.
    totals = np.zeros(3, dtype=np.int64)
    grid = itertools.product(
        ["spares", "wait_repair", "preempt_lower", "requeue"],
        [0.0, 0.3],
        [None, ace.LLAMA3_CAUSES],
        [math.inf, 3 * ace.DAY],
        [False, True],
        [0, 1],
    )
    for seed, (replacement, misdiagnosis, causes, horizon, elastic, cold) in enumerate(grid):
        repair: Any = ace.LogNormal(8.0, 1.0)
        if misdiagnosis:
            stage = ace.RepairStage(ace.LogNormal(8.0, 1.0), escalate=0.0, fix=0.9)
            repair = ace.Repair([stage], misdiagnosis=misdiagnosis)
        fleet = ace.Fleet(
            12,
            spares=1,
            cold_spares=cold,
            cold_spare_delay=ace.HOUR if cold else None,
            repair=repair,
            node_failures=ace.Exponential(2 * ace.DAY),
            maintenance=[(ace.DAY, 2 * ace.HOUR, [0, 1, 2])],
            lemon_fraction=0.2,
            lemon_factor=10.0,
        )
        jobs = [
            ace.Job(
                48,
                work=2 * ace.DAY,
                checkpoint_interval=ace.HOUR,
                priority=1,
                min_gpus=32 if elastic else None,
            )
        ]
        jobs += [
            ace.Job(
                8,
                work=6 * ace.HOUR,
                checkpoint_interval=ace.HOUR,
                submit=i * 3 * ace.HOUR,
                time_limit=8 * ace.HOUR if i % 3 == 0 else None,
            )
            for i in range(10)
        ]
        duration = 12 * ace.HOUR if seed % 2 else math.inf
        policy = ace.Policy(
            replacement=replacement, quarantine=ace.Quarantine(2, ace.DAY, duration)
        )
        res = ace.simulate(
            jobs, fleet=fleet, policy=policy, causes=causes, replicas=2, seed=seed,
            horizon=horizon, record_events=True,
        )  # fmt: skip
        for replica in (0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                data = plot.fleet_timeline_data(res, replica=replica)
            f = res.fleet[res.fleet["replica"] == replica][0]
            assert res.node_events is not None
            mine = res.node_events[res.node_events["replica"] == replica]
            retired = int(np.count_nonzero(mine["kind"] == ace.NodeEventKind.RETIRED))
            assert retired == f["retired_nodes"]
            if retired:
                assert f"({retired} for good)." in data.caption
            hours = sum(s.end - s.start for s in data.node_spans if s.state == "quarantined")
            assert hours / ace.HOUR == pytest.approx(f["quarantined_node_hours"], abs=1e-9)
            assert data.quarantines == f["quarantines"]
            for row in res.jobs[res.jobs["replica"] == replica]:
                held = sum(s.end - s.start for s in data.job_spans if s.job == row["job"])
                assert held == pytest.approx(row["wall"], rel=1e-12, abs=1e-9)
            totals += (f["quarantines"], f["retired_nodes"], f["preemptions"])
    assert np.all(totals > 0), totals  # quarantines, retirements and preemptions all occur


@needs_mpl
def test_timeline_figure(hand_timeline: ace.SimulationResult) -> None:
    fig = plot.fleet_timeline(hand_timeline)
    rgb = check_image(fig)
    nodes, jobs = fig.axes[:2]
    assert nodes.get_ylabel() == "nodes" and jobs.get_ylabel() == "jobs"
    for state in ("down", "quarantined", "maintenance"):
        assert has_colour(rgb, plot.NODE_STATE_COLORS[state]), state
    assert has_colour(rgb, plot._JOB_COLORS[0])
    legend = [t.get_text() for t in nodes.get_legend().get_texts()]
    assert "quarantined" in legend and "in maintenance" in legend
    assert "failure" in [t.get_text() for t in jobs.get_legend().get_texts()]
    # a result saved before quarantines were recorded: the quarantine colour is not used
    unsure = check_image(plot.fleet_timeline(saved_before_quarantines_were_recorded(hand_timeline)))
    assert not has_colour(unsure, plot.NODE_STATE_COLORS["quarantined"])
    assert has_colour(unsure, plot.NODE_STATE_COLORS["down_or_quarantined"])


# ------------------------------------------------------- policy comparison


@pytest.fixture(scope="module")
def policies() -> dict[str, ace.SimulationResult]:
    fleet = ace.Fleet(
        10, repair=ace.LogNormal(8.5, 0.8), node_failures=ace.Exponential(4 * ace.DAY)
    )
    jobs = [ace.Job(64, work=ace.DAY, checkpoint_interval=ace.HOUR)]
    out = {}
    for name, replacement in (
        ("spares", ace.Replacement.SPARES),
        ("wait-repair", ace.Replacement.WAIT_REPAIR),
        ("requeue", ace.Replacement.REQUEUE),
    ):
        out[name] = ace.simulate(
            jobs, fleet=fleet, policy=ace.Policy(replacement=replacement), replicas=16, seed=4
        )
    return out


def test_comparison_is_compare_against_the_baseline(
    policies: dict[str, ace.SimulationResult],
) -> None:
    data = plot.policy_comparison_data(policies, baseline="wait-repair", ci=0.9)
    assert data.paired and data.baseline == "wait-repair"
    for name, e, d in zip(data.names, data.ettr, data.differences, strict=True):
        assert e == pytest.approx(tuple(policies[name].ettr(ci=0.9)))
        if name == "wait-repair":
            assert d is None
        else:
            assert d == ace.compare(policies["wait-repair"], policies[name], ci=0.9)["ettr"]
    assert data.differences[0] is not None
    assert data.differences[0].diff == pytest.approx(
        policies["spares"].pooled_ettr() - policies["wait-repair"].pooled_ettr()
    )


def test_comparison_of_unpaired_results(policies: dict[str, ace.SimulationResult]) -> None:
    other = ace.simulate(ace.Job(64, work=ace.DAY, checkpoint_interval=ace.HOUR), replicas=16,
                         seed=99)  # fmt: skip
    mixed = {"spares": policies["spares"], "other seed": other}
    data = plot.policy_comparison_data(mixed)
    assert not data.paired and data.differences == (None, None)
    assert "common random numbers" in data.reason
    assert "No paired differences" in data.caption
    with pytest.raises(ValueError, match="common random numbers"):
        plot.policy_comparison_data(mixed, differences=True)
    with pytest.raises(ValueError, match="baseline"):
        plot.policy_comparison_data(mixed, baseline="nope")


@needs_mpl
def test_comparison_figure(policies: dict[str, ace.SimulationResult]) -> None:
    fig = plot.policy_comparison(policies)
    check_image(fig)
    left, right = fig.axes[:2]
    assert [t.get_text() for t in left.get_yticklabels()] == list(policies)
    data = plot.policy_comparison_data(policies)
    written = {t.get_text() for t in right.texts}
    for d in data.differences[1:]:
        assert d is not None
        assert f"{d.diff:+.4f}{' *' if d.significant else ''}" in written
    assert "baseline" in written
    check_image(plot.policy_comparison(policies, differences=False))


# ------------------------------------------------------------ demo figure


@needs_mpl
def test_demo_figure(constant_result: ace.SimulationResult, best: ace.OptimalInterval) -> None:
    sweep = [(ace.HOUR, 0.5), (10 * ace.HOUR, 0.9), (3 * ace.HOUR, (0.7, 0.68, 0.72))]
    data = plot.mtbf_sweep_data(sweep)
    np.testing.assert_array_equal(data.mtbf, [ace.HOUR, 3 * ace.HOUR, 10 * ace.HOUR])
    np.testing.assert_array_equal(data.ettr, [0.5, 0.7, 0.9])
    assert math.isnan(data.low[0]) and data.low[1] == 0.68
    fig = plot.demo_figure(constant_result, sweep, best, chosen=ace.HOUR)
    check_image(fig, dpi=40)
    titles = [a.get_title() for a in fig.axes]
    assert titles == [
        "Where the wall-clock goes",
        "Rare to frequent failures",
        "Checkpoint interval",
    ]
    assert "8 GPUs" in fig.get_suptitle()
    assert "3 replicas, seed 0" in fig.get_supxlabel().replace("\n", " ")


# ------------------------------------------------------ without matplotlib


def test_importing_acesim_does_not_import_matplotlib() -> None:
    code = "import sys, acesim, acesim.plot, acesim.report; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_figures_without_matplotlib(
    monkeypatch: pytest.MonkeyPatch, constant_result: ace.SimulationResult
) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "matplotlib":
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "acesim\[plot\]"'):
        plot.ettr_breakdown(constant_result)
    # the data functions need numpy only
    assert plot.ettr_breakdown_data(constant_result).shown[0] == "productive"


def test_module_example() -> None:
    import doctest

    failed, tried = doctest.testmod(plot, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


def test_timeline_reads_the_fleet_from_the_provenance() -> None:
    """Without arguments the timeline takes the run's own fleet size (every
    node drawn, idle ones too) from the provenance; the quarantines are
    those the core counted."""
    fleet = ace.Fleet(
        6,
        repair=ace.HOUR,
        node_failures=ace.NodeTrace.from_gaps({0: [ace.HOUR, ace.HOUR, ace.HOUR]}, nodes=6),
    )
    policy = ace.Policy(quarantine=ace.Quarantine(2, ace.DAY, 6 * ace.HOUR))
    res = ace.simulate(
        ace.Job(16, ace.DAY, ace.HOUR), fleet=fleet, policy=policy, record_events=True
    )
    data = plot.fleet_timeline_data(res)
    given = plot.fleet_timeline_data(res, nodes=6)
    assert len(data.nodes) == 6 == len(given.nodes)
    assert data == given
    assert data.quarantines == int(res.fleet["quarantines"][0]) >= 1
