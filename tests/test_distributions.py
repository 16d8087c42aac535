"""Every duration law: sample mean against ``.mean()``, shape against the
law (Kolmogorov-Smirnov), resampling laws draw what they promise, CSV and
failure-time ingestion, and CPU/CUDA agreement (DESIGN section 3)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import acesim as ace
import numpy as np
import pytest

stats = pytest.importorskip("scipy.stats")

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TITAN_INTERFAILURE = DATA_DIR / "titan_gpu_interfailure_s.csv"

N = 40_000
KS_P_MIN = 1e-3


def _bimodal() -> ace.Mixture:
    return ace.Mixture(
        [(0.9, ace.Exponential(5 * ace.DAY)), (0.1, ace.Exponential(20 * ace.MINUTE))]
    )


def _mixture_cdf(x: np.ndarray) -> np.ndarray:
    return 0.9 * stats.expon.cdf(x, scale=5 * ace.DAY) + 0.1 * stats.expon.cdf(
        x, scale=20 * ace.MINUTE
    )


# name -> (distribution, cdf of its law for KS, or None when the law is discrete)
CONTINUOUS = {
    "exponential": (ace.Exponential(3600.0), stats.expon(scale=3600.0).cdf),
    "weibull_0.5": (ace.Weibull(0.5, 1000.0), stats.weibull_min(0.5, scale=1000.0).cdf),
    "weibull_1": (ace.Weibull(1.0, 50.0), stats.weibull_min(1.0, scale=50.0).cdf),
    "weibull_2.5": (ace.Weibull(2.5, 7 * ace.DAY), stats.weibull_min(2.5, scale=7 * ace.DAY).cdf),
    "lognormal": (ace.LogNormal(5.0, 1.2), stats.lognorm(1.2, scale=math.exp(5.0)).cdf),
    "lognormal_neg_mu": (ace.LogNormal(-2.0, 0.3), stats.lognorm(0.3, scale=math.exp(-2.0)).cdf),
    "gamma_0.3": (ace.Gamma(0.3, 200.0), stats.gamma(0.3, scale=200.0).cdf),
    "gamma_1": (ace.Gamma(1.0, 10.0), stats.gamma(1.0, scale=10.0).cdf),
    "gamma_4": (ace.Gamma(4.0, 900.0), stats.gamma(4.0, scale=900.0).cdf),
    "gamma_0.05": (ace.Gamma(0.05, 1.0), stats.gamma(0.05, scale=1.0).cdf),
    "mixture_bimodal": (_bimodal(), _mixture_cdf),
    "scale_aware_exp": (
        ace.ScaleAware(ace.Exponential(7.9 * ace.HOUR), ref_gpus=1024.0),
        stats.expon(scale=7.9 * ace.HOUR).cdf,  # sampled at gpus = ref_gpus by default
    ),
    "scale_aware_weibull": (
        ace.ScaleAware(ace.Weibull(0.7, 100.0), ref_gpus=8.0, exponent=0.5),
        stats.weibull_min(0.7, scale=100.0).cdf,
    ),
}

ALL = {
    **{k: v[0] for k, v in CONTINUOUS.items()},
    "constant": ace.Constant(42.0),
    "constant_zero": ace.Constant(0.0),
    "empirical": ace.Empirical([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]),
    "block_bootstrap": ace.BlockBootstrap(np.arange(10.0, 60.0), 6),
    "replay": ace.Replay(np.linspace(1.0, 2.0, 11)),
    "mixture_mixed": ace.Mixture(
        [(2.0, ace.Constant(1.0)), (1.0, ace.Empirical([10.0, 20.0])), (1.0, ace.Weibull(2.0, 5.0))]
    ),
}


def test_weibull_is_exported():
    """DESIGN section 9: ``ace.Weibull(shape, scale)``."""
    from acesim.distributions import Weibull

    assert ace.Weibull is Weibull
    assert "Weibull" in ace.__all__


# --------------------------------------------------------------------------- mean


@pytest.mark.parametrize("name", sorted(ALL))
def test_sample_mean_matches_mean(name):
    d = ALL[name]
    if name == "replay":
        x = d.sample(11)  # the whole recording, nothing after
        assert x.mean() == pytest.approx(d.mean(), rel=1e-15)
        return
    x = d.sample(N, seed=2024, stream=1)
    assert np.all(np.isfinite(x)) and np.all(x >= 0)
    se = x.std(ddof=1) / math.sqrt(x.size)
    if se == 0:
        assert x.mean() == d.mean()
    else:
        assert abs(x.mean() - d.mean()) < 5 * se, (x.mean(), d.mean(), se)


@pytest.mark.parametrize(
    ("dist", "expected"),
    [
        (ace.Constant(7.0), 7.0),
        (ace.Exponential(3.0), 3.0),
        (ace.Weibull(0.5, 10.0), 20.0),
        (ace.Weibull(1.0, 10.0), 10.0),
        (ace.Weibull(2.5, 1.0), math.gamma(1.4)),
        (ace.LogNormal(1.0, 0.5), math.exp(1.125)),
        (ace.Gamma(0.3, 2.0), 0.6),
        (ace.Gamma(4.0, 0.5), 2.0),
        (ace.Mixture([(1.0, ace.Constant(1.0)), (3.0, ace.Constant(5.0))]), 4.0),
        (ace.Mixture([(0.0, ace.Constant(100.0)), (1.0, ace.Constant(5.0))]), 5.0),
        (ace.Empirical([1.0, 2.0, 6.0]), 3.0),
        (ace.BlockBootstrap([1.0, 2.0, 6.0], 2), 3.0),
        (ace.Replay([1.0, 2.0, 6.0]), 3.0),
    ],
)
def test_mean_closed_forms(dist, expected):
    assert dist.mean() == pytest.approx(expected, rel=1e-12)


def test_mixture_doc_example_mean():
    assert round(_bimodal().mean() / ace.DAY, 3) == 4.501


# --------------------------------------------------------------------------- shape (KS)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_ks_against_law(name):
    d, cdf = CONTINUOUS[name]
    x = d.sample(N, seed=17, stream=3, replica=1)
    result = stats.kstest(x, cdf)
    assert result.pvalue > KS_P_MIN, (name, result)


@pytest.mark.parametrize(
    "name", ["exponential", "weibull_0.5", "gamma_0.3", "gamma_4", "lognormal"]
)
def test_ks_other_streams(name):
    """The law holds on other seeds/streams/replicas too (not one lucky stream)."""
    d, cdf = CONTINUOUS[name]
    for seed, stream, replica in [(1, 0, 0), (2**33 + 1, 2**30, 77)]:
        x = d.sample(20_000, seed=seed, stream=stream, replica=replica)
        assert stats.kstest(x, cdf).pvalue > KS_P_MIN


def test_streams_are_independent():
    """Two streams of one law: no correlation between draw i of each."""
    d = ace.Exponential(1.0)
    a = d.sample(N, seed=5, stream=0)
    b = d.sample(N, seed=5, stream=1)
    c = d.sample(N, seed=5, replica=1)
    for other in (b, c):
        r = np.corrcoef(a, other)[0, 1]
        assert abs(r) < 5 / math.sqrt(N)
    # and successive draws of one stream are uncorrelated
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 5 / math.sqrt(N)


def test_mixture_component_frequencies():
    m = ace.Mixture([(1.0, ace.Constant(1.0)), (2.0, ace.Constant(2.0)), (7.0, ace.Constant(3.0))])
    x = m.sample(N, seed=9)
    counts = np.array([(x == v).sum() for v in (1.0, 2.0, 3.0)])
    assert counts.sum() == N
    assert stats.chisquare(counts, N * np.array([0.1, 0.2, 0.7])).pvalue > KS_P_MIN


def test_mixture_zero_weight_component_never_drawn():
    m = ace.Mixture([(0.0, ace.Constant(1.0)), (1.0, ace.Constant(2.0)), (0.0, ace.Constant(3.0))])
    assert np.all(m.sample(10_000, seed=3) == 2.0)


def test_nested_mixture_and_scale_aware():
    inner = ace.Mixture([(1.0, ace.Exponential(10.0)), (1.0, ace.Constant(30.0))])
    outer = ace.ScaleAware(ace.Mixture([(1.0, inner), (1.0, ace.Gamma(2.0, 5.0))]), ref_gpus=16.0)
    assert outer.mean(gpus=16) == pytest.approx(0.5 * 20.0 + 0.5 * 10.0)
    x = outer.sample(N, seed=1, gpus=32)
    se = x.std(ddof=1) / math.sqrt(N)
    assert abs(x.mean() - outer.mean(gpus=32)) < 5 * se


def test_constant_always_value():
    assert np.all(ace.Constant(42.0).sample(1000, seed=4, stream=8) == 42.0)
    assert np.all(ace.Constant(0.0).sample(10) == 0.0)


# --------------------------------------------------------------------------- Empirical


def test_empirical_draws_only_samples_with_uniform_frequencies():
    samples = np.array([0.5, 1.5, 2.5, 10.0, 100.0, 1e5, 3.25])
    d = ace.Empirical(samples)
    x = d.sample(N, seed=12, stream=2)
    assert np.isin(x, samples).all()
    counts = np.array([(x == v).sum() for v in samples])
    assert counts.sum() == N
    assert stats.chisquare(counts).pvalue > KS_P_MIN


def test_empirical_repeated_values_weight_by_multiplicity():
    d = ace.Empirical([1.0, 1.0, 1.0, 2.0])
    x = d.sample(N, seed=1)
    counts = np.array([(x == 1.0).sum(), (x == 2.0).sum()])
    assert stats.chisquare(counts, N * np.array([0.75, 0.25])).pvalue > KS_P_MIN


def test_empirical_many_samples_uniform_indices():
    samples = np.arange(1000, dtype=float)
    x = ace.Empirical(samples).sample(100_000, seed=6)
    counts = np.bincount(x.astype(int), minlength=1000)
    assert stats.chisquare(counts).pvalue > KS_P_MIN


def test_empirical_single_sample():
    assert np.all(ace.Empirical([3.0]).sample(100) == 3.0)


def test_empirical_copies_its_input():
    arr = np.array([1.0, 2.0, 3.0])
    d = ace.Empirical(arr)
    before = d.sample(100, seed=1)
    arr[:] = 1e9
    assert d.sample(100, seed=1).tobytes() == before.tobytes()
    assert d.mean() == 2.0


def test_empirical_accepts_integers_and_lists():
    d = ace.Empirical([1, 2, 3])
    assert d.mean() == 2.0
    assert d.sample(5).dtype == np.float64


# --------------------------------------------------------------------------- BlockBootstrap


def test_block_bootstrap_blocks_are_consecutive_circular_runs():
    seq = np.arange(100.0, 137.0)  # distinct values -> position is recoverable
    length = seq.size
    block = 5
    d = ace.BlockBootstrap(seq, block)
    n_blocks = 4000
    x = d.sample(block * n_blocks, seed=21, stream=4)
    pos = (x - 100.0).astype(int)
    assert np.array_equal(seq[pos], x)
    runs = pos.reshape(n_blocks, block)
    # inside a block: consecutive entries of the circular sequence
    steps = (runs[:, 1:] - runs[:, :-1]) % length
    assert np.all(steps == 1)
    # wrap-around actually happens (circular, not truncated)
    assert np.any(runs[:, 0] > length - block)


def test_block_bootstrap_starts_are_uniform():
    seq = np.arange(40.0)
    block = 4
    d = ace.BlockBootstrap(seq, block)
    n_blocks = 20_000
    x = d.sample(block * n_blocks, seed=3, stream=1, replica=2)
    starts = x[::block].astype(int)
    counts = np.bincount(starts, minlength=seq.size)
    assert stats.chisquare(counts).pvalue > KS_P_MIN
    # and every draw is still uniform over the sequence (circular bootstrap)
    all_counts = np.bincount(x.astype(int), minlength=seq.size)
    assert stats.chisquare(all_counts).pvalue > KS_P_MIN


def test_block_bootstrap_block_starts_are_independent_of_offset():
    """Blocks are aligned on the draw index: a batch that starts mid-block
    continues that block."""
    d = ace.BlockBootstrap(np.arange(50.0), 10)
    whole = d.sample(100, seed=8)
    part = d.sample(17, seed=8, first=33)
    assert part.tobytes() == whole[33:50].tobytes()
    assert np.all(np.diff(part[:7]) % 50 == 1)  # draws 33..39 in block 3


def test_block_bootstrap_block_equals_length_is_rotation():
    seq = np.array([5.0, 1.0, 7.0, 3.0])
    d = ace.BlockBootstrap(seq, 4)
    x = d.sample(400, seed=2).reshape(100, 4)
    rotations = {tuple(np.roll(seq, -k)) for k in range(4)}
    assert all(tuple(row) in rotations for row in x)


def test_block_bootstrap_block_one_is_iid_resampling():
    seq = np.arange(8.0)
    x = ace.BlockBootstrap(seq, 1).sample(N, seed=3)
    assert stats.chisquare(np.bincount(x.astype(int), minlength=8)).pvalue > KS_P_MIN


# --------------------------------------------------------------------------- Replay


def test_replay_returns_times_in_order_then_inf():
    times = np.array([5.0, 0.0, 3.5, 1e6, 2.0])
    d = ace.Replay(times)
    x = d.sample(12, seed=99, stream=5, replica=3)
    assert np.array_equal(x[:5], times)
    assert np.all(np.isinf(x[5:])) and np.all(x[5:] > 0)
    # independent of seed/stream/replica
    assert d.sample(12).tobytes() == x.tobytes()
    # offsets
    assert np.array_equal(d.sample(3, first=2), times[2:5])
    assert np.all(np.isinf(d.sample(3, first=100)))


def test_replay_accepts_inf_entries():
    d = ace.Replay([1.0, math.inf, 2.0])
    assert np.array_equal(d.sample(4), [1.0, math.inf, 2.0, math.inf])


# --------------------------------------------------------------------------- ScaleAware


@pytest.mark.parametrize("exponent", [1.0, 0.5, 2.0, 0.0, -1.0])
@pytest.mark.parametrize("gpus", [8, 1024, 16384, 3.5])
def test_scale_aware_mean_scales(exponent, gpus):
    base = ace.Weibull(0.6, 1000.0)
    ref = 1024.0
    d = ace.ScaleAware(base, ref_gpus=ref, exponent=exponent)
    assert d.mean(gpus) == pytest.approx(base.mean() * (ref / gpus) ** exponent, rel=1e-12)


def test_scale_aware_default_gpus_is_ref():
    d = ace.ScaleAware(ace.Exponential(10.0), ref_gpus=64.0, exponent=1.0)
    assert d.mean() == pytest.approx(10.0)
    assert d.sample(100, seed=1).tobytes() == d.sample(100, seed=1, gpus=64).tobytes()


@pytest.mark.parametrize("gpus", [8, 2048, 16384])
def test_scale_aware_sample_gpus_scales_every_draw(gpus):
    base = ace.Gamma(0.7, 3600.0)
    ref, exponent = 1024.0, 1.0
    d = ace.ScaleAware(base, ref_gpus=ref, exponent=exponent)
    x = d.sample(5000, seed=4, stream=2, gpus=gpus)
    b = base.sample(5000, seed=4, stream=2)
    np.testing.assert_allclose(x, b * (ref / gpus) ** exponent, rtol=1e-14)
    big = d.sample(N, seed=4, stream=3, gpus=gpus)
    se = big.std(ddof=1) / math.sqrt(N)
    assert abs(big.mean() - d.mean(gpus)) < 5 * se


def test_scale_aware_meta_default_model():
    m = ace.meta_scale_model()
    assert ace.mttf(m, 1024) == pytest.approx(7.9 * ace.HOUR)
    assert ace.mttf(m, 16384) == pytest.approx(7.9 * ace.HOUR / 16)
    x = m.sample(N, seed=1, gpus=16384)
    assert stats.kstest(x, stats.expon(scale=7.9 * ace.HOUR / 16).cdf).pvalue > KS_P_MIN


def test_node_rate_model_projection():
    m = ace.node_rate_model(6.5e-3)
    nodes = 16384 / 8
    assert ace.mttf(m, 16384) == pytest.approx(ace.DAY / (nodes * 6.5e-3))


def test_scale_aware_of_empirical_scales_values():
    d = ace.ScaleAware(ace.Empirical([10.0, 20.0]), ref_gpus=100.0, exponent=1.0)
    x = d.sample(1000, seed=1, gpus=200)
    assert set(np.unique(x)) <= {5.0, 10.0}


# --------------------------------------------------------------------------- ingestion


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def test_from_csv_by_name_and_index(tmp_path):
    p = tmp_path / "gaps.csv"
    _write_csv(
        p,
        ["when", "gap_s", "cause"],
        [["a", 10.0, "x"], ["b", "", "y"], ["c", 30, "z"], ["d", " 20.5 ", "w"]],
    )
    by_name = ace.Empirical.from_csv(p, column="gap_s")
    by_index = ace.Empirical.from_csv(str(p), column=1)
    assert np.array_equal(by_name.samples, [10.0, 30.0, 20.5])
    assert np.array_equal(by_index.samples, by_name.samples)
    assert by_name.mean() == pytest.approx(60.5 / 3)
    assert np.isin(by_name.sample(500, seed=1), [10.0, 30.0, 20.5]).all()


def test_from_csv_errors(tmp_path):
    p = tmp_path / "gaps.csv"
    _write_csv(p, ["gap"], [[1.0], [""], [2.0]])
    with pytest.raises(ValueError, match="line 3"):
        ace.Empirical.from_csv(p, column="gap", skip_missing=False)
    with pytest.raises(ValueError, match="nope"):
        ace.Empirical.from_csv(p, column="nope")
    with pytest.raises(ValueError, match="column"):
        ace.Empirical.from_csv(p, column=3)
    bad = tmp_path / "bad.csv"
    _write_csv(bad, ["gap"], [[1.0], ["abc"]])
    with pytest.raises(ValueError, match="abc"):
        ace.Empirical.from_csv(bad, column="gap")
    neg = tmp_path / "neg.csv"
    _write_csv(neg, ["gap"], [[1.0], [-2.0]])
    with pytest.raises(ValueError, match="samples"):
        ace.Empirical.from_csv(neg, column="gap")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError):
        ace.Empirical.from_csv(empty)
    only_header = tmp_path / "header.csv"
    only_header.write_text("gap\n")
    with pytest.raises(ValueError, match="gap"):
        ace.Empirical.from_csv(only_header, column="gap")


def test_from_failure_times_sorts_and_differences():
    d = ace.Empirical.from_failure_times([100.0, 10.0, 40.0, 45.0])
    assert np.array_equal(d.samples, [30.0, 5.0, 55.0])
    assert d.mean() == pytest.approx(30.0)
    assert np.isin(d.sample(100, seed=2), [30.0, 5.0, 55.0]).all()


def test_from_failure_times_from_file(tmp_path):
    p = tmp_path / "stamps.txt"
    stamps = np.cumsum(np.random.default_rng(0).exponential(3600.0, 500))
    np.savetxt(p, stamps)
    d = ace.Empirical.from_failure_times(np.loadtxt(p))
    np.testing.assert_allclose(d.samples, np.diff(stamps))


@pytest.mark.parametrize("bad", [[1.0], [], [1.0, math.nan], [0.0, math.inf], "12"])
def test_from_failure_times_rejects(bad):
    with pytest.raises((ValueError, TypeError), match="timestamps"):
        ace.Empirical.from_failure_times(bad)


@pytest.mark.skipif(not TITAN_INTERFAILURE.exists(), reason=f"shared data not found at {DATA_DIR}")
def test_from_csv_real_titan_data():
    d = ace.Empirical.from_csv(TITAN_INTERFAILURE, column="inter_failure_s")
    with open(TITAN_INTERFAILURE, newline="") as f:
        raw = [row["inter_failure_s"] for row in csv.DictReader(f)]
    values = np.array([float(v) for v in raw if v.strip() != ""])
    assert d.samples.size == values.size > 1000
    assert np.array_equal(d.samples, values)
    assert d.mean() == pytest.approx(values.mean(), rel=1e-12)
    x = d.sample(N, seed=1)
    assert np.isin(x, values).all()
    # resampled i.i.d.: the empirical CDF of the draws matches the data's
    assert stats.ks_2samp(x, values).pvalue > KS_P_MIN
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert abs(x.mean() - d.mean()) < 5 * se


@pytest.mark.skipif(not TITAN_INTERFAILURE.exists(), reason=f"shared data not found at {DATA_DIR}")
def test_block_bootstrap_real_titan_sequence_keeps_order():
    with open(TITAN_INTERFAILURE, newline="") as f:
        raw = [row["inter_failure_s"] for row in csv.DictReader(f)]
    seq = np.array([float(v) for v in raw if v.strip() != ""])
    d = ace.BlockBootstrap(seq, 50)
    x = d.sample(50 * 20, seed=3)
    for run in x.reshape(20, 50):
        starts = np.flatnonzero(seq == run[0])
        assert any(
            np.array_equal(np.take(seq, np.arange(s, s + 50), mode="wrap"), run) for s in starts
        )


# --------------------------------------------------------------------------- CUDA

# Laws drawn by table lookups and integer arithmetic only...
EXACT_ON_GPU = {
    "constant": ace.Constant(42.0),
    "empirical": ace.Empirical(np.arange(1.0, 1000.0)),
    "replay": ace.Replay(np.linspace(0.0, 1.0, 5000)),
    "block_bootstrap": ace.BlockBootstrap(np.arange(1.0, 300.0), 13),
    "mixture_of_empirical": ace.Mixture(
        [(0.3, ace.Empirical([1.0, 2.0])), (0.7, ace.Constant(5.0))]
    ),
}
# ...and laws that go through log/exp/pow (acesim's portable ones).
TRANSCENDENTAL_ON_GPU = {
    "exponential": ace.Exponential(3600.0),
    "weibull_0.5": ace.Weibull(0.5, 1000.0),
    "weibull_2.5": ace.Weibull(2.5, 10.0),
    "lognormal": ace.LogNormal(5.0, 1.2),
    "gamma_0.3": ace.Gamma(0.3, 200.0),
    "gamma_4": ace.Gamma(4.0, 900.0),
    "mixture_bimodal": _bimodal(),
    "scale_aware": ace.ScaleAware(ace.Weibull(0.7, 100.0), ref_gpus=8.0, exponent=0.5),
}


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two arrays of non-negative doubles."""
    ia = a.view(np.int64)
    ib = b.view(np.int64)
    return np.abs(ia - ib)


@pytest.mark.gpu
@pytest.mark.skipif(not ace.cuda_available(), reason="no usable CUDA device")
@pytest.mark.parametrize("name", sorted(EXACT_ON_GPU) + sorted(TRANSCENDENTAL_ON_GPU))
def test_cuda_matches_cpu(name):
    d = {**EXACT_ON_GPU, **TRANSCENDENTAL_ON_GPU}[name]
    kwargs = dict(seed=123, stream=7, replica=5, first=1000)
    if name == "scale_aware":
        kwargs["gpus"] = 4096
    n = 200_001
    cpu = d.sample(n, device="cpu", **kwargs)
    gpu = d.sample(n, device="cuda", **kwargs)
    assert gpu.dtype == np.float64 and gpu.shape == (n,)
    # Bit for bit, the transcendental laws too: both sides run acesim's
    # portable log/exp (portable_math.hpp) with no FMA contraction, so the
    # last-ulp differences between libm and CUDA's libdevice do not arise.
    if gpu.tobytes() != cpu.tobytes():
        worst = int(_ulp_distance(cpu, gpu).max())
        pytest.fail(f"{name}: CPU and CUDA draws differ (by up to {worst} ulp)")
    # the GPU path is a pure function of the index too
    part = d.sample(1000, device="cuda", **{**kwargs, "first": kwargs["first"] + 500})
    assert part.tobytes() == gpu[500:1500].tobytes()


@pytest.mark.gpu
@pytest.mark.skipif(not ace.cuda_available(), reason="no usable CUDA device")
def test_cuda_sample_zero_and_one():
    d = ace.Exponential(1.0)
    assert d.sample(0, device="cuda").shape == (0,)
    assert d.sample(1, device="cuda", seed=3)[0] == pytest.approx(d.sample(1, seed=3)[0], rel=1e-15)


@pytest.mark.skipif(ace.cuda_available(), reason="a CUDA device is usable here")
def test_cuda_unavailable_raises_cleanly():
    """Without a usable device, device='cuda' is an error, not a crash."""
    with pytest.raises((RuntimeError, ValueError)):
        ace.Exponential(1.0).sample(10, device="cuda")


# --------------------------------------------------------------------------
# Never: a failure law that never fires
# --------------------------------------------------------------------------


def test_never_is_a_law_without_draws() -> None:
    never = ace.Never()
    assert never == ace.Never() and hash(never) == hash(ace.Never())
    assert never.mean() == never.mean(gpus=1024) == math.inf
    assert never.forward_recurrence_mean() == math.inf
    assert np.array_equal(never.sample(4, seed=3), np.full(4, math.inf))
    assert never.cdf(1e12) == 0.0 and never.sf(1e12) == 1.0
    assert never.ppf(0.5) == never.ppf(0.0) == math.inf
    with pytest.raises(TypeError, match="density"):
        never.pdf(1.0)
    # Units that never fail never fail together.
    assert ace.gang(never, 1024) == never


def test_never_is_refused_where_a_duration_is_meant() -> None:
    never = ace.Never()
    for name, make in [
        ("save", lambda: ace.Job(8, 3600.0, 600.0, save=never)),
        ("init", lambda: ace.Job(8, 3600.0, 600.0, init=never)),
        ("detect", lambda: ace.Cause("x", 1.0, detect=never)),
        ("repair", lambda: ace.Fleet(4, repair=never)),
        ("components[1]", lambda: ace.Mixture([(1.0, ace.Exponential(1.0)), (1.0, never)])),
        ("base", lambda: ace.ScaleAware(never, 8)),
    ]:
        with pytest.raises(TypeError, match=re.escape(name) + ": Never"):
            make()
