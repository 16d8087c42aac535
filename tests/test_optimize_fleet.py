"""optimal_interval on a fleet under a policy, with other jobs running as
given: the band it reports holds the optimum a brute-force scan finds on
fresh seeds, and its fresh estimate is the plain run of the winner."""

from __future__ import annotations

import importlib
import math

import acesim as ace
import numpy as np
import pytest

HOUR = ace.HOUR

FLEET = ace.Fleet(
    5, spares=1, repair=ace.Constant(4 * HOUR), node_failures=ace.Exponential(2 * ace.DAY)
)
POLICY = ace.Policy(replacement=ace.Replacement.SPARES)
JOB = ace.Job(16, work=2 * ace.DAY, checkpoint_interval=HOUR, init=60.0, save=300.0, load=120.0)
OTHER = ace.Job(16, work=ace.DAY, checkpoint_interval=HOUR)
GRID = [m * 60.0 for m in (30, 60, 90, 120, 150, 200, 300, 450, 700)]


def test_band_holds_the_brute_force_optimum_on_fresh_seeds() -> None:
    best = ace.optimal_interval(
        JOB, fleet=FLEET, policy=POLICY, others=[OTHER], intervals=GRID, replicas=300, seed=1
    )
    assert best.plausible[0] <= best.interval <= best.plausible[1]
    # Brute force: every grid point on 4,000 replicas of another seed.
    scan = [
        ace.simulate(
            [JOB.with_interval(tau), OTHER], None, FLEET, POLICY, replicas=4000, seed=77
        ).pooled_ettr(0)
        for tau in GRID
    ]
    truth = GRID[int(np.argmax(scan))]
    assert best.plausible[0] <= truth <= best.plausible[1]
    # The band is a band, not the whole grid.
    assert best.plausible[1] - best.plausible[0] < GRID[-1] - GRID[0]
    # Nodes of 8 GPUs failing every 2 days: 2 nodes, MTBF 1 day.
    assert best.young == pytest.approx(math.sqrt(2 * 300.0 * ace.DAY))


def test_fresh_estimate_is_the_winner_on_fresh_replicas() -> None:
    best = ace.optimal_interval(
        JOB, fleet=FLEET, policy=POLICY, others=[OTHER], intervals=GRID, replicas=50, seed=3,
        refine=False,
    )  # fmt: skip
    again = ace.simulate(
        [JOB.with_interval(best.interval), OTHER], None, FLEET, POLICY,
        replicas=50, seed=3, first_replica=50,
    )  # fmt: skip
    assert best.ettr == pytest.approx(again.pooled_ettr(0), rel=1e-12)
    assert best.ettr_stderr > 0
    # The selection figures are those of the candidates on replicas 0..49.
    k = GRID.index(best.interval)
    first = ace.simulate(
        [JOB.with_interval(best.interval), OTHER], None, FLEET, POLICY, replicas=50, seed=3
    )
    assert best.ettrs[k] == pytest.approx(first.pooled_ettr(0), rel=1e-12)
    assert best.selection_ettr == best.ettrs.max()


def test_whole_run_path_agrees_with_the_single_job_path() -> None:
    job = ace.Job(64, work=ace.DAY, checkpoint_interval=HOUR)
    law = ace.Exponential(6 * HOUR)
    plain = ace.optimal_interval(job, law, replicas=40, seed=2)
    # A policy without a fleet takes the whole-run path: the same draws, the same figures.
    with_policy = ace.optimal_interval(job, law, policy=ace.Policy(), replicas=40, seed=2)
    assert with_policy.interval == pytest.approx(plain.interval)
    np.testing.assert_allclose(with_policy.ettrs, plain.ettrs, rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fleet": 5}, TypeError, "fleet must be an acesim.Fleet"),
        ({"policy": "spares"}, TypeError, "policy must be an acesim.Policy"),
        ({"others": OTHER}, TypeError, "others must be a sequence"),
        ({"others": [OTHER, 3]}, TypeError, r"others\[1\] must be a Job"),
        ({"progress": "yes"}, TypeError, "progress must be a bool"),
        ({"fleet": FLEET, "replicas": 1}, ValueError, "replicas"),
        ({"fleet": FLEET, "intervals": []}, ValueError, "intervals"),
    ],
)
def test_checks(kwargs: dict[str, object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ace.optimal_interval(JOB, **kwargs)  # type: ignore[arg-type]


def test_progress_on_both_paths(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Progress is drawn only on a terminal outside CI: stand one in.
    monkeypatch.setattr(
        importlib.import_module("acesim.sweep"), "on_terminal", lambda stream=None: True
    )
    job = ace.Job(64, work=ace.DAY, checkpoint_interval=HOUR)
    law = ace.Exponential(6 * HOUR)
    quiet = ace.optimal_interval(job, law, replicas=10, seed=2, intervals=[1800.0, 3600.0])
    assert capsys.readouterr().err == ""
    shown = ace.optimal_interval(
        job, law, replicas=10, seed=2, intervals=[1800.0, 3600.0], progress=True
    )
    assert "optimal_interval" in capsys.readouterr().err
    assert shown.interval == quiet.interval and shown.ettr == quiet.ettr
    ace.optimal_interval(JOB, fleet=FLEET, replicas=10, intervals=GRID[:3], progress=True)
    assert "optimal_interval" in capsys.readouterr().err


def test_a_job_that_never_runs_is_named() -> None:
    # Submitted at 10 h with the run ending at 5 h: no replica runs it, so
    # no interval has an ETTR (it was a bare numpy error).
    late = ace.Job(8, 4 * HOUR, HOUR, submit=10 * HOUR)
    with pytest.raises(ValueError, match="job never ran before the horizon"):
        ace.optimal_interval(late, fleet=FLEET, horizon=5 * HOUR, replicas=4, intervals=GRID[:3])
