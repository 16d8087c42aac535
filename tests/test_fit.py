"""Tests for acesim.fit: maximum-likelihood fits with right censoring."""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TITAN_LIFETIMES = DATA_DIR / "titan_gpu_lifetimes.csv"


def _load_fit() -> ModuleType:
    """Import acesim.fit; if the package as a whole does not import (e.g. the
    compiled core is not built in this checkout), load the module from its file:
    it depends on numpy only."""
    try:
        import acesim.fit as mod

        return mod
    except ImportError:
        path = Path(__file__).resolve().parents[1] / "python" / "acesim" / "fit.py"
        if not path.exists():
            pytest.skip("acesim.fit is not importable", allow_module_level=True)
        spec = importlib.util.spec_from_file_location("_acesim_fit_standalone", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod


fit = _load_fit()
exponential_mle = fit.exponential_mle
weibull_mle = fit.weibull_mle
lognormal_mle = fit.lognormal_mle


def _censor(lifetimes: np.ndarray, censor_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Random right censoring: observe min(T, C), censored where T > C."""
    return np.minimum(lifetimes, censor_times), lifetimes > censor_times


# ---------------------------------------------------------------- uncensored vs scipy


def test_exponential_uncensored_is_sample_mean() -> None:
    rng = np.random.default_rng(1)
    x = rng.exponential(50.0, 1000)
    assert exponential_mle(x) == pytest.approx(float(np.mean(x)), rel=1e-12)
    stats = pytest.importorskip("scipy.stats")
    _, scale = stats.expon.fit(x, floc=0)
    assert exponential_mle(x) == pytest.approx(scale, rel=1e-10)


@pytest.mark.parametrize("shape", [0.45, 1.0, 1.7, 4.0])
def test_weibull_uncensored_matches_scipy(shape: float) -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2)
    x = 3.0e4 * rng.weibull(shape, 3000)
    k_ref, _, scale_ref = stats.weibull_min.fit(x, floc=0)
    k, scale = weibull_mle(x)
    assert k == pytest.approx(k_ref, rel=1e-6)
    assert scale == pytest.approx(scale_ref, rel=1e-6)


def test_lognormal_uncensored_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    x = np.exp(rng.normal(7.0, 1.3, 3000))
    sigma_ref, _, scale_ref = stats.lognorm.fit(x, floc=0)
    mu, sigma = lognormal_mle(x)
    assert mu == pytest.approx(math.log(scale_ref), rel=1e-10)
    assert sigma == pytest.approx(sigma_ref, rel=1e-10)


def test_all_false_censoring_equals_uncensored() -> None:
    rng = np.random.default_rng(4)
    x = 10.0 * rng.weibull(2.0, 500)
    none = np.zeros(x.size, dtype=bool)
    assert weibull_mle(x, none) == pytest.approx(weibull_mle(x), rel=1e-12)
    assert lognormal_mle(x, none) == pytest.approx(lognormal_mle(x), rel=1e-12)
    assert exponential_mle(x, none) == pytest.approx(exponential_mle(x), rel=1e-12)


def test_scale_equivariance() -> None:
    rng = np.random.default_rng(5)
    t, c = _censor(rng.weibull(1.3, 2000), rng.uniform(0.0, 2.0, 2000))
    k1, s1 = weibull_mle(t, c)
    k2, s2 = weibull_mle(t * 1e7, c)
    assert k2 == pytest.approx(k1, rel=1e-9)
    assert s2 == pytest.approx(s1 * 1e7, rel=1e-9)
    mu1, sg1 = lognormal_mle(t, c)
    mu2, sg2 = lognormal_mle(t * 1e7, c)
    assert mu2 == pytest.approx(mu1 + math.log(1e7), rel=1e-9)
    assert sg2 == pytest.approx(sg1, rel=1e-9)


# ---------------------------------------------------------------- censored recovery

N = 40_000


def test_exponential_censored_recovers_mean_and_naive_is_biased() -> None:
    rng = np.random.default_rng(10)
    t, c = _censor(rng.exponential(100.0, N), rng.uniform(0.0, 150.0, N))
    assert 0.3 < c.mean() < 0.6
    # closed form: total time over observed failures
    assert exponential_mle(t, c) == pytest.approx(t.sum() / (~c).sum(), rel=1e-12)
    assert exponential_mle(t, c) == pytest.approx(100.0, rel=0.03)
    assert exponential_mle(t) < 0.7 * 100.0  # censored times taken as failures


def test_weibull_censored_recovers_parameters_and_naive_is_biased() -> None:
    shape, scale = 1.5, 1000.0
    rng = np.random.default_rng(11)
    t, c = _censor(scale * rng.weibull(shape, N), rng.uniform(0.0, 2000.0, N))
    assert 0.3 < c.mean() < 0.6
    k, lam = weibull_mle(t, c)
    assert k == pytest.approx(shape, rel=0.03)
    assert lam == pytest.approx(scale, rel=0.03)
    k_naive, lam_naive = weibull_mle(t)  # censored times taken as failures
    assert lam_naive < 0.8 * scale
    assert abs(k_naive - shape) > 0.05
    _, lam_drop = weibull_mle(t[~c])  # censored samples dropped
    assert lam_drop < 0.8 * scale


def test_weibull_administrative_censoring() -> None:
    """Everyone still alive at a fixed end of observation is censored there."""
    shape, scale = 2.6, 7.0
    rng = np.random.default_rng(12)
    t, c = _censor(scale * rng.weibull(shape, N), np.full(N, 5.0))
    assert 0.6 < c.mean() < 0.8  # heavy censoring
    k, lam = weibull_mle(t, c)
    assert k == pytest.approx(shape, rel=0.03)
    assert lam == pytest.approx(scale, rel=0.03)


def test_lognormal_censored_recovers_parameters_and_naive_is_biased() -> None:
    mu_true, sigma_true = 2.0, 0.8
    rng = np.random.default_rng(13)
    t, c = _censor(np.exp(rng.normal(mu_true, sigma_true, N)), rng.uniform(0.0, 15.0, N))
    assert 0.4 < c.mean() < 0.7
    mu, sigma = lognormal_mle(t, c)
    assert mu == pytest.approx(mu_true, abs=0.02)
    assert sigma == pytest.approx(sigma_true, rel=0.03)
    mu_naive, _ = lognormal_mle(t)
    assert mu_naive < mu_true - 0.3


def test_lognormal_heavy_tail_censoring_is_stable() -> None:
    """Censoring far in the upper tail exercises log Phi at large arguments."""
    rng = np.random.default_rng(14)
    x = np.exp(rng.normal(0.0, 0.1, 2000))
    c = np.zeros(x.size, dtype=bool)
    t = np.concatenate([x, np.full(50, math.exp(6.0))])  # 60 sigma above mu
    c = np.concatenate([c, np.ones(50, dtype=bool)])
    mu, sigma = lognormal_mle(t, c)
    assert math.isfinite(mu) and math.isfinite(sigma) and sigma > 0.0


def test_censored_fits_match_scipy_censored_data() -> None:
    stats = pytest.importorskip("scipy.stats")
    if not hasattr(stats, "CensoredData"):
        pytest.skip("scipy.stats.CensoredData needs scipy >= 1.11")
    rng = np.random.default_rng(15)
    n = 5000
    t, c = _censor(300.0 * rng.weibull(0.8, n), rng.uniform(0.0, 800.0, n))
    data = stats.CensoredData(uncensored=t[~c], right=t[c])
    k_ref, _, scale_ref = stats.weibull_min.fit(data, floc=0)
    k, lam = weibull_mle(t, c)
    assert k == pytest.approx(k_ref, rel=1e-5)
    assert lam == pytest.approx(scale_ref, rel=1e-5)
    sigma_ref, _, s_ref = stats.lognorm.fit(data, floc=0)  # Nelder-Mead: loose
    mu, sigma = lognormal_mle(t, c)
    assert mu == pytest.approx(math.log(s_ref), abs=1e-3)
    assert sigma == pytest.approx(sigma_ref, rel=1e-3)


def test_log_ndtr_matches_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    a = np.linspace(-200.0, 8.0, 20_001)
    ref = special.log_ndtr(a)
    np.testing.assert_allclose(fit._log_ndtr(a), ref, rtol=1e-12, atol=1e-300)


def test_censored_accepts_integer_flags() -> None:
    rng = np.random.default_rng(16)
    t, c = _censor(rng.weibull(1.2, 300), rng.uniform(0.0, 2.0, 300))
    assert weibull_mle(t, c.astype(int)) == weibull_mle(t, c)
    assert lognormal_mle(list(t), list(c)) == lognormal_mle(t, c)


# ---------------------------------------------------------------- real data: Titan


def _titan(batch: str) -> tuple[np.ndarray, np.ndarray]:
    if not TITAN_LIFETIMES.exists():
        pytest.skip(f"real-data test: {TITAN_LIFETIMES} not present (needs ../shared/data)")
    times: list[float] = []
    cens: list[bool] = []
    with TITAN_LIFETIMES.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["batch"] == batch:
                times.append(float(row["service_time_s"]))
                cens.append(row["failed"] == "0")  # failed=0: still running, censored
    return np.asarray(times), np.asarray(cens)


def test_titan_old_batch_censored_weibull_is_wear_out() -> None:
    """Ostrouchov et al. (SC'20), data github olcf/TitanGPULife: old batch k ~ 2.6.

    Measured: shape 2.638, scale 2.243e8 s (7.1 years), 5,027 failures of 18,837.
    """
    t, c = _titan("old")
    assert t.size > 10_000 and 1000 < (~c).sum() < t.size
    k, lam = weibull_mle(t, c)
    assert 2.4 < k < 2.8
    assert 6.0 < lam / (365.25 * 86400.0) < 8.5
    k_naive, _ = weibull_mle(t)  # ignoring censoring overstates the wear-out
    assert k_naive > k + 0.5


def test_titan_new_batch_has_far_lower_failure_rate() -> None:
    t_old, c_old = _titan("old")
    t_new, c_new = _titan("new")
    assert exponential_mle(t_new, c_new) > 10 * exponential_mle(t_old, c_old)
    k_new, _ = weibull_mle(t_new, c_new)
    assert 0.5 < k_new < 2.0


# ---------------------------------------------------------------- invalid inputs

ALL_MLE = [exponential_mle, weibull_mle, lognormal_mle]
POSITIVE_MLE = [weibull_mle, lognormal_mle]


@pytest.mark.parametrize("func", ALL_MLE)
def test_empty_samples(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="samples"):
        func([])


@pytest.mark.parametrize("func", ALL_MLE)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_samples(func: Callable[..., object], bad: float) -> None:
    with pytest.raises(ValueError, match="samples"):
        func([1.0, bad, 3.0])


@pytest.mark.parametrize("func", POSITIVE_MLE)
@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_samples(func: Callable[..., object], bad: float) -> None:
    with pytest.raises(ValueError, match="samples"):
        func([1.0, bad, 3.0])


def test_exponential_allows_zero_but_not_negative() -> None:
    assert exponential_mle([0.0, 2.0, 4.0]) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="samples"):
        exponential_mle([1.0, -1.0])
    with pytest.raises(ValueError, match="samples"):
        exponential_mle([0.0, 0.0])


@pytest.mark.parametrize("func", ALL_MLE)
def test_length_mismatch(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="censored"):
        func([1.0, 2.0, 3.0], [False, True])


@pytest.mark.parametrize("func", ALL_MLE)
def test_all_censored(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="censored"):
        func([1.0, 2.0, 3.0], [True, True, True])


@pytest.mark.parametrize("func", ALL_MLE)
def test_censored_not_zero_one(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="censored"):
        func([1.0, 2.0, 3.0], [0, 2, 1])


@pytest.mark.parametrize("func", ALL_MLE)
@pytest.mark.parametrize("bad", [["a", "b"], [1.0, None], "12", [1 + 2j, 3.0], [True, False]])
def test_non_numeric_samples(func: Callable[..., object], bad: object) -> None:
    with pytest.raises(TypeError, match="samples"):
        func(bad)


@pytest.mark.parametrize("func", ALL_MLE)
def test_non_numeric_censored(func: Callable[..., object]) -> None:
    with pytest.raises(TypeError, match="censored"):
        func([1.0, 2.0], ["yes", "no"])


@pytest.mark.parametrize("func", ALL_MLE)
def test_not_one_dimensional(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="samples"):
        func([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="samples"):
        func(5.0)


@pytest.mark.parametrize("func", POSITIVE_MLE)
def test_degenerate_samples_have_no_mle(func: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="samples"):
        func([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="samples"):
        func([2.0, 2.0, 1.0], [False, False, True])  # censored below the failures
    func([2.0, 2.0, 3.0], [False, False, True])  # a later censored time: finite MLE


# ---------------------------------------------------------------- distribution wrappers


def test_fit_wrappers_build_distributions() -> None:
    dists = pytest.importorskip("acesim.distributions")
    from acesim.fit import fit_exponential, fit_lognormal, fit_weibull

    rng = np.random.default_rng(20)
    t, c = _censor(50.0 * rng.weibull(1.4, 2000), rng.uniform(0.0, 100.0, 2000))
    e = fit_exponential(t, c)
    assert isinstance(e, dists.Exponential)
    assert e.mean() == pytest.approx(exponential_mle(t, c), rel=1e-12)
    w = fit_weibull(t, c)
    assert isinstance(w, dists.Weibull)
    k, lam = weibull_mle(t, c)
    assert w.mean() == pytest.approx(lam * math.gamma(1.0 + 1.0 / k), rel=1e-9)
    ln = fit_lognormal(t, c)
    assert isinstance(ln, dists.LogNormal)
    mu, sigma = lognormal_mle(t, c)
    assert ln.mean() == pytest.approx(math.exp(mu + 0.5 * sigma * sigma), rel=1e-9)
    with pytest.raises(ValueError, match="censored"):
        fit_weibull(t, c[:-1])
