"""``acesim demo``'s checkpointing section: synchronous, asynchronous and
two-level checkpoints of one job on the same failures."""

from __future__ import annotations

import math
import re

import acesim as ace
import numpy as np
import pytest
from acesim import cli

SCHEMES = ("synchronous", "asynchronous", "two-level")

# "   asynchronous 21.8 min        0.9281     92.81%      2.22% ..."
ROW = re.compile(
    r"^   (synchronous|asynchronous|two-level) +([0-9.]+(?: / [0-9.]+)? min) +([0-9.]+)"
    r"((?: +[0-9.]+%){5})$",
    flags=re.M,
)


def rows(text: str) -> dict[str, tuple[str, float, list[float]]]:
    return {
        m[1]: (m[2], float(m[3]), [float(x) for x in m[4].replace("%", "").split()])
        for m in ROW.finditer(text)
    }


def test_demo_prints_the_checkpointing_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--replicas", "100"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("6. Checkpointing") :]
    found = rows(section)
    assert tuple(found) == SCHEMES
    for name, (interval, ettr, shares) in found.items():
        assert 0.0 < ettr <= 1.0, name
        # productive share is the pooled ETTR; with queue_wait and
        # recovery_wait 0 (no fleet) the five shares make up the wall
        assert shares[0] == pytest.approx(100.0 * ettr, abs=0.006)
        assert sum(shares) == pytest.approx(100.0, abs=0.03)
        assert (" / " in interval) == (name == "two-level")
    assert "two_level_optimal_intervals" in section
    assert "optimal_interval" in section
    # section 4 says why the optimum's row and the figure differ: the row
    # runs replicas that chose it, the figure fresh ones
    four = out[out.index("4. Checkpoint interval") : out.index("6. Checkpointing")]
    assert "replicas 0..99, some of those that chose the optimum (in-sample" in four
    m = re.search(r"on fresh replicas 200\.\.399 the optimum's ETTR is ([0-9.]+) \+/- ", four)
    assert m is not None, four
    best = ace.optimal_interval(cli.demo_job(), ace.meta_scale_model(), replicas=200, seed=0)
    assert m[1] == f"{best.ettr:.4f}"


def test_asynchronous_beats_synchronous_on_the_same_failures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = cli._checkpoint_section(200, seed=3)
    capsys.readouterr()
    assert tuple(results) == SCHEMES
    for res in results.values():
        assert 0.0 < res.pooled_ettr() <= 1.0
        assert res.jobs["completed"].all()
    sync, asyn = results["synchronous"], results["asynchronous"]
    assert asyn.pooled_ettr() > sync.pooled_ettr()
    # paired: the same replicas (same seed) under both schemes
    assert np.array_equal(sync.jobs["replica"], asyn.jobs["replica"])
    d = asyn.jobs["wall"] - sync.jobs["wall"]
    assert d.mean() < -5.0 * d.std(ddof=1) / math.sqrt(d.size)
    # the two-level job wrote tier checkpoints and restarted from them
    assert results["two-level"].jobs["tier_restores"].sum() > 0
