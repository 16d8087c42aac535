"""The paths that run without an optional dependency (pandas, matplotlib,
scipy): a clear message naming the extra, never a crash."""

from __future__ import annotations

import builtins
import importlib.util
from typing import Any

import acesim as ace
import pytest
from acesim import cli


def hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in names:
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def small_result() -> ace.SimulationResult:
    return ace.simulate(ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0), replicas=2, seed=1)


def test_to_pandas_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    res = small_result()
    hide(monkeypatch, "pandas")
    with pytest.raises(ImportError, match=r"acesim\[pandas\]"):
        res.to_pandas()


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas not installed")
def test_to_pandas_with_pandas() -> None:
    frame = small_result().to_pandas()
    assert list(frame.columns)[:3] == ["replica", "job", "gpus"]
    assert len(frame) == 2


def test_demo_plot_without_matplotlib(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """An error (exit 2, one line naming the extra) before anything runs:
    the figure asked for cannot be made."""
    hide(monkeypatch, "matplotlib")
    assert cli.main(["demo", "--replicas", "100", "--plot", str(tmp_path / "demo.png")]) == 2
    captured = capsys.readouterr()
    assert captured.err == 'acesim: error: --plot needs matplotlib: pip install "acesim[plot]"\n'
    assert captured.out == ""
    assert not (tmp_path / "demo.png").exists()


def test_fitting_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    # Weibull, lognormal and exponential fits (censored too) need numpy only.
    import numpy as np

    hide(monkeypatch, "scipy")
    rng = np.random.default_rng(0)
    x = rng.weibull(0.7, 2000) * 3600.0
    censored = x > 7200.0
    dist = ace.fit.fit_weibull(np.minimum(x, 7200.0), censored=censored)
    assert 0.6 < dist.shape < 0.8
    assert isinstance(ace.fit.fit_lognormal(x, censored=censored), ace.LogNormal)
    assert isinstance(ace.fit.fit_exponential(x), ace.Exponential)


def test_laws_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    # cdf, sf, pdf, ppf, gang and the law checks import scipy only for an
    # object that is scipy's.
    hide(monkeypatch, "scipy")
    for law in (
        ace.Exponential(5.0),
        ace.Weibull(2.9, 3.0),
        ace.LogNormal(1.0, 0.5),
        ace.Gamma(2.5, 4.0),
        ace.Mixture([(1.0, ace.Gamma(0.5, 1.0))]),
    ):
        x = law.ppf([0.1, 0.5, 0.9])
        assert abs(law.cdf(x[1]) - 0.5) < 1e-12 and law.sf(x[1]) > 0 and law.pdf(x[1]) > 0
    assert ace.Empirical([1.0, 2.0]).cdf(1.5) == 0.5
    assert ace.gang(ace.LogNormal(1.0, 0.5), 64).mean() < ace.LogNormal(1.0, 0.5).mean()
    job = ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0, save=30.0)
    assert isinstance(job.save, ace.Constant)
    with pytest.raises(TypeError, match="frozen scipy distribution"):
        ace.Job(8, work=ace.HOUR, checkpoint_interval=600.0, save="30s")


def test_cli_errors_are_messages(capsys: pytest.CaptureFixture[str]) -> None:
    # "-1" is refused by the argument's duration type: argparse's usage error,
    # exit status 2, one line naming the argument.
    with pytest.raises(SystemExit) as exit_:
        cli.main(["interval", "-1", "3600"])
    assert exit_.value.code == 2
    assert "checkpoint_cost" in capsys.readouterr().err


def test_to_pandas_decodes_every_table() -> None:
    pytest.importorskip("pandas")
    fleet = ace.Fleet(4, node_failures=ace.Exponential(6 * 3600.0), repair=ace.Constant(600.0))
    res = ace.simulate(
        [ace.Job(16, 4 * 3600.0, 3600.0)],
        fleet=fleet,
        seed=3,
        record_events=True,
        horizon=3 * 3600.0,
    )
    jobs = res.to_pandas("jobs")
    assert list(jobs["status"].cat.categories) == [s.name for s in ace.JobStatus]
    assert jobs["status"][0] == ace.JobStatus(int(res.jobs["status"][0])).name
    events = res.to_pandas("events")
    assert events["kind"].tolist() == [ace.EventKind(int(k)).name for k in res.events["kind"]]
    trace = res.to_pandas("trace")
    assert set(trace["source"]) <= {"JOB", "NODE"} and "pad_" not in trace
    assert len(res.to_pandas("placements")) == len(res.placements)
    nodes = res.to_pandas("node_events")
    assert nodes["kind"].tolist() == [
        ace.NodeEventKind(int(k)).name for k in res.node_events["kind"]
    ]
    assert len(res.to_pandas("fleet")) == 1
    with pytest.raises(ValueError, match="table must be one of"):
        res.to_pandas("nodes")  # type: ignore[arg-type]


def test_goodput_maps_the_buckets_to_ml_goodput_names() -> None:
    res = small_result()
    g = res.goodput()
    hours = lambda b: float((res.jobs["gpus"] * res.jobs[b]).sum()) / 3600.0 / res.replicas  # noqa: E731
    assert g["GoodputType.TOTAL"] == pytest.approx(hours("productive"))
    assert g["BadputType.WASTED_PROGRESS_FROM_DISRUPTION"] == pytest.approx(
        hours("wasted") + hours("detection")
    )
    assert g["BadputType.UNPRODUCTIVE_CHECKPOINT_SAVE_TIME"] == pytest.approx(hours("ckpt_stall"))
    assert g["queue_wait"] == pytest.approx(hours("queue_wait"))
    assert sum(g.values()) == pytest.approx(hours("wall"))
