"""Every law's cdf, sf, pdf and ppf: against scipy, against acesim's own
sampler (Kolmogorov-Smirnov), composed (Mixture, ScaleAware); scipy frozen
distributions converted exactly wherever a law is accepted; ``ace.gang``
(the first failure of fresh units) against its closed forms and a Monte
Carlo of the minimum of ``n`` draws."""

from __future__ import annotations

import doctest
import io
import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import acesim as ace
import acesim.distributions
import acesim.regimes
import numpy as np
import pytest
from acesim import exports
from acesim.distributions import as_distribution

stats = pytest.importorskip("scipy.stats")
integrate = pytest.importorskip("scipy.integrate")

P_MIN = 1e-3
RTOL = 1e-11


def ks_pvalue(sample: np.ndarray, law: ace.Distribution, gpus: float | None = None) -> float:
    """One-sample Kolmogorov-Smirnov p-value of ``sample`` against ``law.cdf``,
    with the statistic taken at both sides of every sample point, so that a
    law with atoms gets its exact statistic (the p-value is then
    conservative)."""
    x = np.sort(sample)
    n = x.size
    i = np.arange(1, n + 1)
    upper = law.cdf(x, gpus)
    below = law.cdf(np.nextafter(x, -np.inf), gpus)
    d = max(float(np.max(i / n - upper)), float(np.max(below - (i - 1) / n)), 0.0)
    return float(stats.kstwo.sf(d, n))


def _scaled(frozen: Any, c: float) -> Any:
    """The scipy law of ``c`` times a draw of ``frozen``."""
    return frozen.dist(*frozen.args, **{**frozen.kwds, "scale": c * frozen.kwds["scale"]})


# name -> (acesim law, gpus, scipy frozen law or a cdf/sf/pdf triple of callables)
MIXTURE = ace.Mixture([(0.9, ace.Weibull(2.5, 5 * ace.DAY)), (0.1, ace.LogNormal(6.0, 1.5))])
SA_FACTOR = (8.0 / 64.0) ** 0.7

CONTINUOUS: dict[str, tuple[ace.Distribution, float | None, Any]] = {
    "exponential": (ace.Exponential(3600.0), None, stats.expon(scale=3600.0)),
    "weibull_0.5": (ace.Weibull(0.5, 1000.0), None, stats.weibull_min(0.5, scale=1000.0)),
    "weibull_1": (ace.Weibull(1.0, 50.0), None, stats.weibull_min(1.0, scale=50.0)),
    "weibull_2.9": (ace.Weibull(2.9, 2.2e8), None, stats.weibull_min(2.9, scale=2.2e8)),
    "lognormal": (ace.LogNormal(5.0, 1.2), None, stats.lognorm(1.2, scale=math.exp(5.0))),
    "lognormal_neg_mu": (ace.LogNormal(-2.0, 0.3), None, stats.lognorm(0.3, scale=math.exp(-2.0))),
    "gamma_0.05": (ace.Gamma(0.05, 1.0), None, stats.gamma(0.05, scale=1.0)),
    "gamma_0.3": (ace.Gamma(0.3, 200.0), None, stats.gamma(0.3, scale=200.0)),
    "gamma_1": (ace.Gamma(1.0, 10.0), None, stats.gamma(1.0, scale=10.0)),
    "gamma_4": (ace.Gamma(4.0, 900.0), None, stats.gamma(4.0, scale=900.0)),
    "gamma_60": (ace.Gamma(60.0, 3.0), None, stats.gamma(60.0, scale=3.0)),
    "scale_aware_weibull": (
        ace.ScaleAware(ace.Weibull(0.7, 100.0), ref_gpus=8.0, exponent=0.7),
        64.0,
        stats.weibull_min(0.7, scale=100.0 * SA_FACTOR),
    ),
    "scale_aware_default_gpus": (
        ace.ScaleAware(ace.Exponential(7.9 * ace.HOUR), ref_gpus=1024.0),
        None,  # ref_gpus by default, as mean() does
        stats.expon(scale=7.9 * ace.HOUR),
    ),
    "mixture": (
        MIXTURE,
        None,
        (
            lambda x: (
                0.9 * stats.weibull_min.cdf(x, 2.5, scale=5 * ace.DAY)
                + 0.1 * stats.lognorm.cdf(x, 1.5, scale=math.exp(6.0))
            ),
            lambda x: (
                0.9 * stats.weibull_min.sf(x, 2.5, scale=5 * ace.DAY)
                + 0.1 * stats.lognorm.sf(x, 1.5, scale=math.exp(6.0))
            ),
            lambda x: (
                0.9 * stats.weibull_min.pdf(x, 2.5, scale=5 * ace.DAY)
                + 0.1 * stats.lognorm.pdf(x, 1.5, scale=math.exp(6.0))
            ),
        ),
    ),
}

_rng = np.random.default_rng(20240601)
_HISTORY = np.round(_rng.weibull(0.6, 3000) * 5000.0, 0)  # ties, and a few zeros

DISCRETE: dict[str, tuple[ace.Distribution, float | None]] = {
    "constant": (ace.Constant(600.0), None),
    "constant_0": (ace.Constant(0.0), None),
    "empirical": (ace.Empirical(_HISTORY), None),
    "block_bootstrap": (ace.BlockBootstrap(_HISTORY, block=7), None),
    "replay": (ace.Replay([5.0, 1.0, 3.0, 3.0, math.inf, 8.0]), None),
    "mixture_with_atom": (
        ace.Mixture([(0.3, ace.Constant(50.0)), (0.7, ace.Exponential(100.0))]),
        None,
    ),
    "scale_aware_empirical": (ace.ScaleAware(ace.Empirical(_HISTORY), ref_gpus=16.0), 128.0),
}

ALL = {**{k: (v[0], v[1]) for k, v in CONTINUOUS.items()}, **DISCRETE}


def _functions(ref: Any) -> tuple[Callable[..., Any], ...]:
    if isinstance(ref, tuple):
        return ref
    return ref.cdf, ref.sf, ref.pdf


def _points(law: ace.Distribution, gpus: float | None) -> np.ndarray:
    """Points spread over the law's range, its ends and a few outside it."""
    q = np.concatenate([[1e-300, 1e-200, 1e-30, 1e-12], np.linspace(1e-4, 1 - 1e-4, 400)])
    x = np.concatenate([law.ppf(q, gpus), law.ppf(1.0 - np.array([1e-8, 1e-12]), gpus)])
    x = x[np.isfinite(x) & (x > 0)]
    return np.concatenate([[-5.0, -1e-300, 0.0, math.inf], x, x * 0.999, x * 1.7])


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float = RTOL) -> None:
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    same = (actual == expected) | np.isnan(expected)  # scipy's NaN: e.g. a pdf at inf
    tiny = np.abs(expected) < 1e-290
    ok = same | (tiny & (np.abs(actual) < 1e-280)) | np.isclose(actual, expected, rtol, 0.0)
    assert ok.all(), list(zip(actual[~ok][:5], expected[~ok][:5], strict=True))


# ----------------------------------------------------------- against scipy


@pytest.mark.parametrize("name", CONTINUOUS)
def test_cdf_sf_pdf_match_scipy(name: str) -> None:
    law, gpus, ref = CONTINUOUS[name]
    cdf, sf, pdf = _functions(ref)
    x = _points(law, gpus)
    with np.errstate(all="ignore"):
        _close(law.cdf(x, gpus), cdf(x))
        _close(law.sf(x, gpus), sf(x))
        nonzero = x != 0.0  # the density at 0 is checked on its own below
        _close(law.pdf(x[nonzero], gpus), pdf(x[nonzero]))


@pytest.mark.parametrize(
    "name",
    [n for n in CONTINUOUS if not isinstance(CONTINUOUS[n][2], tuple)],
)
def test_ppf_matches_scipy(name: str) -> None:
    law, gpus, ref = CONTINUOUS[name]
    q = np.concatenate(
        [[0.0, 1e-300, 1e-100, 1e-15], np.linspace(0.001, 0.999, 101), [1 - 1e-12, 1.0]]
    )
    expected = ref.ppf(q)
    _close(law.ppf(q, gpus), expected, rtol=1e-10)
    assert law.ppf(0.0, gpus) == 0.0 and law.ppf(1.0, gpus) == math.inf


def test_density_at_zero() -> None:
    assert ace.Weibull(0.5, 3.0).pdf(0.0) == math.inf
    assert ace.Weibull(1.0, 4.0).pdf(0.0) == 0.25
    assert ace.Weibull(2.0, 4.0).pdf(0.0) == 0.0
    assert ace.Gamma(0.5, 3.0).pdf(0.0) == math.inf
    assert ace.Gamma(1.0, 4.0).pdf(0.0) == 0.25
    assert ace.Gamma(3.0, 4.0).pdf(0.0) == 0.0
    assert ace.Exponential(4.0).pdf(0.0) == 0.25
    assert ace.LogNormal(0.0, 1.0).pdf(0.0) == 0.0
    for law in (ace.Exponential(4.0), ace.Weibull(0.5, 3.0), ace.Gamma(0.5, 3.0)):
        assert law.pdf(-1.0) == 0.0 and law.cdf(-1.0) == 0.0 and law.sf(-1.0) == 1.0


@pytest.mark.parametrize("name", CONTINUOUS)
def test_integral_of_sf_is_the_samplers_mean(name: str) -> None:
    # mean() comes from the core's parameters: the cdf side uses the same ones.
    law, gpus, _ = CONTINUOUS[name]
    # (What lies above the 1 - 1e-15 quantile adds less than 1e-10 of the mean here.)
    cuts = [0.0, *law.ppf([0.01, 0.5, 0.9, 0.99, 0.9999, 1 - 1e-8, 1 - 1e-15], gpus)]
    pieces = [
        integrate.quad(lambda t: law.sf(t, gpus), a, b, limit=200)[0]
        for a, b in itertools.pairwise(cuts)
    ]
    assert math.fsum(pieces) == pytest.approx(law.mean(gpus), rel=1e-7)


@pytest.mark.parametrize("name", CONTINUOUS)
def test_pdf_is_the_derivative_of_cdf(name: str) -> None:
    law, gpus, _ = CONTINUOUS[name]
    x = law.ppf(np.linspace(0.02, 0.98, 25), gpus)
    h = x * 1e-6
    slope = (law.cdf(x + h, gpus) - law.cdf(x - h, gpus)) / (2 * h)
    np.testing.assert_allclose(law.pdf(x, gpus), slope, rtol=1e-5)


# ------------------------------------------------------ against the sampler


@pytest.mark.parametrize("name", ALL)
def test_sampler_draws_the_law_of_cdf(name: str) -> None:
    law, gpus = ALL[name]
    if isinstance(law, ace.Replay):
        draws = law.sample(law.times.size)  # exactly its recorded times
    elif isinstance(law, ace.BlockBootstrap):
        # Draws in one block are successive values; one draw per block are independent.
        draws = law.sample(20_000 * law.block, seed=3, gpus=gpus)[:: law.block]
    else:
        draws = law.sample(20_000, seed=3, gpus=gpus)
    assert ks_pvalue(draws, law, gpus) > P_MIN


def test_ks_helper_rejects_a_wrong_law() -> None:
    draws = ace.Weibull(1.3, 100.0).sample(20_000, seed=1)
    assert ks_pvalue(draws, ace.Weibull(1.2, 100.0)) < 1e-6
    shifted = ace.Empirical(_HISTORY * 1.1)
    assert ks_pvalue(ace.Empirical(_HISTORY).sample(20_000, seed=1), shifted) < 1e-6


# ------------------------------------------------------ the resampling laws


@pytest.mark.parametrize(
    "name", ["empirical", "block_bootstrap", "replay", "scale_aware_empirical"]
)
def test_resampling_laws_use_the_empirical_cdf(name: str) -> None:
    law, gpus = DISCRETE[name]
    values = {
        ace.Empirical: lambda d: d.samples,
        ace.BlockBootstrap: lambda d: d.sequence,
        ace.Replay: lambda d: d.times,
    }
    base = law.base if isinstance(law, ace.ScaleAware) else law
    factor = law._factor(gpus) if isinstance(law, ace.ScaleAware) else 1.0
    v = np.sort(values[type(base)](base)) * factor
    n = v.size
    x = np.concatenate([v, np.nextafter(v, -np.inf), v + 0.5, [-1.0, 0.0, math.inf]])
    counts = np.array([(v <= t).sum() for t in x])
    np.testing.assert_array_equal(law.cdf(x, gpus), counts / n)  # right-continuous
    np.testing.assert_array_equal(law.sf(x, gpus), (n - counts) / n)
    # ppf: the least value whose computed cdf reaches q, so ppf(cdf(v)) == v...
    q = np.concatenate([np.arange(1, n + 1) / n, np.linspace(0.0, 1.0, 1001)])
    brute = np.array([v[np.argmax(counts[:n] / n >= t)] for t in q])
    np.testing.assert_array_equal(law.ppf(q, gpus), brute)
    np.testing.assert_array_equal(law.ppf(law.cdf(v, gpus), gpus), v)
    # ...numpy's "inverted_cdf" quantile away from the steps (where it rounds otherwise).
    off_steps = (np.arange(1000) + 0.37) / 1000
    np.testing.assert_array_equal(
        law.ppf(off_steps, gpus), np.quantile(v, off_steps, method="inverted_cdf")
    )
    assert law.ppf(0.0, gpus) == v[0] and law.ppf(1.0, gpus) == v[-1]


def test_replay_counts_its_infinite_times() -> None:
    law = ace.Replay([5.0, math.inf])
    assert law.cdf(1e300) == 0.5 and law.cdf(math.inf) == 1.0 and law.ppf(1.0) == math.inf


def test_constant() -> None:
    law = ace.Constant(600.0)
    np.testing.assert_array_equal(law.cdf([599.9, 600.0, 1e9]), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(law.sf([599.9, 600.0]), [1.0, 0.0])
    np.testing.assert_array_equal(law.ppf([0.0, 0.3, 1.0]), [600.0, 600.0, 600.0])
    assert ace.Constant(0.0).cdf(0.0) == 1.0 and ace.Constant(0.0).cdf(-1.0) == 0.0


# ------------------------------------------------------------- composition


def test_mixture_composes() -> None:
    parts = [(2.0, ace.Exponential(10.0)), (0.0, ace.Constant(3.0)), (6.0, ace.Gamma(3.0, 7.0))]
    law = ace.Mixture(parts)
    x = np.linspace(0.0, 200.0, 101)
    expected = 0.25 * parts[0][1].cdf(x) + 0.75 * parts[2][1].cdf(x)
    np.testing.assert_allclose(law.cdf(x), expected, rtol=1e-14)
    np.testing.assert_allclose(law.sf(x), 0.25 * parts[0][1].sf(x) + 0.75 * parts[2][1].sf(x))
    # The zero-weight Constant is never drawn: the mixture keeps a density.
    np.testing.assert_allclose(law.pdf(x), 0.25 * parts[0][1].pdf(x) + 0.75 * parts[2][1].pdf(x))
    q = np.linspace(0.0, 1.0, 41)
    xq = law.ppf(q)
    np.testing.assert_allclose(law.cdf(xq[1:-1]), q[1:-1], rtol=1e-12)
    assert xq[0] == 0.0 and xq[-1] == math.inf
    atoms = ace.Mixture([(1.0, ace.Constant(5.0)), (1.0, ace.Constant(7.0))])
    np.testing.assert_array_equal(atoms.ppf([0.0, 0.25, 0.5, 0.51, 1.0]), [5, 5, 5, 7, 7])


def test_scale_aware_composes_at_every_size() -> None:
    base = ace.Gamma(2.0, 300.0)
    law = ace.ScaleAware(base, ref_gpus=8.0, exponent=0.8)
    x = np.linspace(0.0, 5000.0, 51)
    for gpus in (1.0, 8.0, 100.0, 16_384.0):
        c = (8.0 / gpus) ** 0.8
        np.testing.assert_allclose(law.cdf(x, gpus), base.cdf(x / c), rtol=1e-14)
        np.testing.assert_allclose(law.sf(x, gpus), base.sf(x / c), rtol=1e-14)
        np.testing.assert_allclose(law.pdf(x, gpus), base.pdf(x / c) / c, rtol=1e-14)
        np.testing.assert_allclose(law.ppf([0.1, 0.5, 0.9], gpus), c * base.ppf([0.1, 0.5, 0.9]))
        assert ks_pvalue(law.sample(10_000, seed=5, gpus=gpus), law, gpus) > P_MIN
    assert law.cdf(900.0) == base.cdf(900.0)  # gpus defaults to ref_gpus, as mean() does
    # Below a Mixture, a ScaleAware sees the Mixture's gpus (1 by default, as for mean()).
    mixed = ace.Mixture([(1.0, law), (1.0, ace.Exponential(50.0))])
    assert mixed.cdf(900.0) == pytest.approx(0.5 * law.cdf(900.0, 1.0) + 0.5 * (1 - math.exp(-18)))
    assert mixed.cdf(900.0, 64.0) == pytest.approx(
        0.5 * law.cdf(900.0, 64.0) + 0.5 * (1 - math.exp(-18))
    )


def test_shapes_and_scalars() -> None:
    law = ace.Weibull(1.5, 10.0)
    assert isinstance(law.cdf(3.0), float) and isinstance(law.ppf(0.5), float)
    assert isinstance(law.cdf(np.float32(3.0)), float) and isinstance(law.cdf(3), float)
    grid = np.linspace(0.0, 30.0, 12).reshape(3, 4)
    for f in (law.cdf, law.sf, law.pdf):
        out = f(grid)
        assert out.shape == (3, 4) and out.dtype == np.float64
        np.testing.assert_array_equal(out.ravel(), f(grid.ravel()))
    assert law.ppf(np.full((2, 2), 0.5)).shape == (2, 2)
    assert law.cdf([]).shape == (0,)
    np.testing.assert_array_equal(law.cdf([1.0, 2.0]), [law.cdf(1.0), law.cdf(2.0)])
    assert law.cdf(math.inf) == 1.0 and law.sf(math.inf) == 0.0 and law.pdf(math.inf) == 0.0


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("law", "match"),
    [
        (ace.Constant(5.0), r"Constant has no density: all of its mass is at 5\.0"),
        (ace.Empirical([1.0, 2.0]), "Empirical has no density: it is discrete"),
        (ace.BlockBootstrap([1.0, 2.0], 1), "BlockBootstrap has no density: it is discrete"),
        (ace.Replay([1.0, 2.0]), "Replay has no density: it replays an exact sequence"),
        (
            ace.Mixture([(1.0, ace.Exponential(5.0)), (1.0, ace.Constant(1.0))]),
            r"Mixture has no density: components\[1\] \(Constant\(value=1\.0\)\) has none",
        ),
        (ace.ScaleAware(ace.Empirical([1.0]), 8.0), "ScaleAware has no density: its base Emp"),
    ],
)
def test_pdf_without_density_names_the_law(law: ace.Distribution, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        law.pdf(1.0)
    law.cdf(1.0), law.sf(1.0), law.ppf(0.5)  # these exist for every law


def test_bad_points_are_named() -> None:
    law = ace.Exponential(5.0)
    with pytest.raises(TypeError, match="x must be a number or an array of numbers, got str"):
        law.cdf("1")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="x must be a number or an array of numbers"):
        law.sf(True)
    with pytest.raises(TypeError, match="x must be a number"):
        law.pdf([1.0, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="x must not be NaN"):
        law.cdf([1.0, math.nan])
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\]"):
        law.ppf(1.5)
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\]"):
        law.ppf([0.5, -1e-9])
    with pytest.raises(ValueError, match="q must not be NaN"):
        law.ppf(math.nan)
    with pytest.raises(ValueError, match="gpus must be > 0"):
        law.cdf(1.0, gpus=0.0)
    with pytest.raises(TypeError, match="gpus must be a real number"):
        ace.ScaleAware(law, 8.0).cdf(1.0, gpus="8")  # type: ignore[arg-type]


# -------------------------------------------------------- scipy conversions

SCIPY_CASES = [
    (stats.expon(scale=3600.0), ace.Exponential(3600.0)),
    (stats.expon(0.0, 3600.0), ace.Exponential(3600.0)),
    (stats.expon(), ace.Exponential(1.0)),
    (stats.weibull_min(2.9, scale=2.2e8), ace.Weibull(2.9, 2.2e8)),
    (stats.weibull_min(0.5, 0, 1000.0), ace.Weibull(0.5, 1000.0)),
    (stats.weibull_min(c=0.7, loc=0.0, scale=50.0), ace.Weibull(0.7, 50.0)),
    (stats.lognorm(1.2, scale=math.exp(5.0)), ace.LogNormal(math.log(math.exp(5.0)), 1.2)),
    (stats.lognorm(s=0.3, scale=2.5), ace.LogNormal(math.log(2.5), 0.3)),
    (stats.lognorm(0.8), ace.LogNormal(0.0, 0.8)),
    (stats.gamma(0.3, scale=200.0), ace.Gamma(0.3, 200.0)),
    (stats.gamma(a=4, scale=np.float64(900.0)), ace.Gamma(4.0, 900.0)),
]


@pytest.mark.parametrize(("frozen", "native"), SCIPY_CASES)
def test_scipy_laws_convert_exactly(frozen: Any, native: ace.Distribution) -> None:
    law = as_distribution("failures", frozen)
    assert type(law) is type(native) and repr(law) == repr(native)
    assert repr(ace.from_scipy(frozen)) == repr(native)
    # The same draws as the law written by hand...
    np.testing.assert_array_equal(law.sample(5000, seed=11), native.sample(5000, seed=11))
    # ...and the same law as scipy's.
    x = frozen.ppf(np.linspace(0.001, 0.999, 50))
    np.testing.assert_allclose(law.cdf(x), frozen.cdf(x), rtol=1e-12)
    np.testing.assert_allclose(law.sf(x), frozen.sf(x), rtol=1e-12)
    np.testing.assert_allclose(law.pdf(x), frozen.pdf(x), rtol=1e-12)
    assert law.mean() == pytest.approx(frozen.mean(), rel=1e-12)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (stats.norm(), ValueError, r"scipy\.stats\.norm has no acesim law; accepted are"),
        (stats.pareto(2.0), ValueError, "expon.*weibull_min.*lognorm.*gamma"),
        (stats.weibull_min(2.0, loc=1.0), ValueError, r"weibull_min must have loc=0.*got 1\.0"),
        (stats.expon(-5.0, 2.0), ValueError, "expon must have loc=0"),
        (stats.poisson(3.0), TypeError, "frozen scipy.stats distributions expon"),
        (stats.weibull_min, TypeError, "frozen scipy.stats distributions"),
        (stats.weibull_min(-1.0, scale=2.0), ValueError, r"weibull_min c must be > 0"),
        (stats.gamma(2.0, scale=-2.0), ValueError, r"gamma scale must be > 0"),
        (stats.weibull_min([1.0, 2.0]), TypeError, "weibull_min c must be a real number"),
    ],
)
def test_other_scipy_objects_are_rejected(value: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        as_distribution("failures", value)
    with pytest.raises(error, match=match):
        ace.simulate(ace.Job(8, ace.HOUR, 600.0), failures=value)


def test_scipy_laws_are_accepted_wherever_a_law_is() -> None:
    frozen = stats.weibull_min(0.8, scale=6 * ace.HOUR)
    native = ace.Weibull(0.8, 6 * ace.HOUR)
    save = stats.lognorm(0.4, scale=60.0)
    job = ace.Job(
        64, work=ace.DAY, checkpoint_interval=ace.HOUR, save=save, load=stats.expon(scale=90.0)
    )
    job_native = ace.Job(
        64,
        work=ace.DAY,
        checkpoint_interval=ace.HOUR,
        save=ace.LogNormal(math.log(60.0), 0.4),
        load=ace.Exponential(90.0),
    )
    a = ace.simulate(job, failures=frozen, replicas=20, seed=3)
    b = ace.simulate(job_native, failures=native, replicas=20, seed=3)
    np.testing.assert_array_equal(a.jobs, b.jobs)
    both = ace.simulate([job, job], failures=[frozen, None], replicas=2, seed=3)
    assert both.jobs.size == 4
    batch = ace.batch_simulate([job], failures=frozen, replicas=20, seed=3)
    assert batch.jobs.size == 20
    fleet = ace.Fleet(
        8, node_failures=stats.expon(scale=ace.DAY), repair=stats.gamma(2.0, scale=ace.HOUR)
    )
    assert isinstance(fleet.node_failures, ace.Exponential)
    cause = ace.Cause("gpu", 1.0, detect=stats.expon(scale=60.0))
    assert isinstance(cause.detect, ace.Exponential)
    assert ace.Mixture([(1.0, frozen)]).components[0][1].shape == 0.8
    assert ace.ScaleAware(frozen, 8.0).base.scale == 6 * ace.HOUR
    assert ace.mttf(frozen, 8.0) == native.mean()
    trace = ace.NodeTrace.from_times({0: [3600.0]}, nodes=2, model=frozen)
    assert isinstance(trace.model, ace.Weibull)
    events = io.StringIO("time,node\n3600.0,0\n")
    assert isinstance(exports.read_node_events(events, 2, model=frozen).model, ace.Weibull)
    model = ace.FleetModel(ace.Fleet(4), failures=frozen)
    assert model.now == 0.0
    assert ace.gang(frozen, 4).shape == 0.8
    assert ace.Policy(replacement_delay=stats.expon(scale=30.0)) is not None


# -------------------------------------------------------------------- gang


def test_gang_closed_forms() -> None:
    for k in (0.5, 1.0, 2.9):
        g = ace.gang(ace.Weibull(k, 1000.0), 1024)
        assert isinstance(g, ace.Weibull) and g.shape == k
        assert g.scale == pytest.approx(1000.0 / 1024 ** (1 / k), rel=1e-15)
    assert repr(ace.gang(ace.Exponential(3600.0), 8)) == "Exponential(mean=450.0)"
    assert repr(ace.gang(ace.Gamma(1.0, 80.0), 8)) == "Gamma(shape=1.0, scale=10.0)"
    c = ace.Constant(5.0)
    assert ace.gang(c, 100) is c
    law = ace.LogNormal(3.0, 1.0)
    assert ace.gang(law, 1) is law  # one unit: the law itself
    sa = ace.gang(ace.ScaleAware(ace.Weibull(2.0, 400.0), ref_gpus=8.0, exponent=0.5), 4)
    assert isinstance(sa, ace.ScaleAware) and (sa.ref_gpus, sa.exponent) == (8.0, 0.5)
    assert isinstance(sa.base, ace.Weibull) and sa.base.scale == 200.0
    # For a Weibull, ScaleAware with exponent 1 / k is the fresh gang at every size.
    w = ace.Weibull(2.9, 1000.0)
    fresh = ace.ScaleAware(w, ref_gpus=1.0, exponent=1 / 2.9)
    for units in (2, 1024, 16_384):
        x = ace.gang(w, units).ppf(np.linspace(0.0, 0.999, 50))
        np.testing.assert_allclose(fresh.cdf(x, units), ace.gang(w, units).cdf(x), rtol=1e-13)


GANG_LAWS = {
    "weibull_0.6": ace.Weibull(0.6, 1000.0),
    "weibull_2.9": ace.Weibull(2.9, 2.2e8),
    "lognormal": ace.LogNormal(10.0, 1.0),
    "lognormal_wide": ace.LogNormal(0.0, 2.5),
    "gamma": ace.Gamma(0.5, 100.0),
    "mixture": MIXTURE,
    "empirical": ace.Empirical(_HISTORY),
    "block_bootstrap": ace.BlockBootstrap(_HISTORY, block=5),
    "scale_aware_lognormal": ace.ScaleAware(ace.LogNormal(4.0, 0.5), ref_gpus=8.0),
}


@pytest.mark.parametrize("units", [3, 1024])
@pytest.mark.parametrize("name", GANG_LAWS)
def test_gang_cdf_is_within_half_a_grid_step(name: str, units: int) -> None:
    law = GANG_LAWS[name]
    g = ace.gang(law, units)
    points = np.unique(
        np.concatenate([law.ppf(np.linspace(0, 1, 2001)), g.ppf(np.linspace(0, 1, 2001))])
    )
    points = np.concatenate([points, np.nextafter(points, -np.inf), points * 1.0001])
    exact = -np.expm1(units * np.log(np.maximum(law.sf(points), 1e-320)))
    exact[law.sf(points) == 0.0] = 1.0
    error = np.max(np.abs(g.cdf(points) - exact))
    if isinstance(g, ace.Weibull | ace.ScaleAware) and not isinstance(law, ace.ScaleAware):
        assert error < 1e-12
    else:
        assert error <= 0.5 / ace.regimes.GANG_POINTS * (1 + 1e-6) + 1e-14


@pytest.mark.parametrize("units", [3, 1024])
@pytest.mark.parametrize(
    "name",
    [
        "weibull_0.6",
        "weibull_2.9",
        "lognormal",
        "lognormal_wide",
        "gamma",
        "mixture",
        "empirical",
        "block_bootstrap",
    ],
)
def test_gang_matches_a_monte_carlo_of_the_minimum(name: str, units: int) -> None:
    law = GANG_LAWS[name]
    replicas = 8_000
    draws = law.sample(units * replicas, seed=17, stream=2)
    if isinstance(law, ace.BlockBootstrap):  # units are independent: one draw per block
        draws = law.sample(units * replicas * law.block, seed=17, stream=2)[:: law.block]
    minima = draws.reshape(replicas, units).min(axis=1)
    g = ace.gang(law, units)
    assert ks_pvalue(minima, g) > P_MIN  # the Monte Carlo against the gang's cdf
    if name.startswith(("weibull", "lognormal", "gamma", "mixture")):  # continuous
        assert stats.ks_2samp(minima, g.sample(replicas, seed=99)).pvalue > P_MIN
    assert np.mean(minima) == pytest.approx(
        g.mean(), rel=6 * np.std(minima) / np.mean(minima) / math.sqrt(replicas) + 1e-9
    )


def test_gang_of_an_empirical_is_its_order_statistic() -> None:
    samples = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    law = ace.Empirical(samples)
    g = ace.gang(law, 3)
    values = np.unique(samples)
    assert set(np.unique(g.samples)) <= set(values)  # sample values only
    # P(min <= v) = 1 - (#{samples > v} / n) ** 3, to within half a grid step.
    exact = 1 - ((samples[None, :] > values[:, None]).sum(1) / samples.size) ** 3
    assert np.max(np.abs(g.cdf(values) - exact)) <= 0.5 / ace.regimes.GANG_POINTS


def test_gang_mean_accuracy() -> None:
    # The midpoint rule on the exact quantile function: close for light tails.
    for law, units, rel in [
        (ace.LogNormal(10.0, 1.0), 1024, 1e-5),
        (ace.LogNormal(10.0, 1.0), 2, 1e-4),
        (ace.Gamma(5.0, 10.0), 16, 1e-5),
    ]:
        exact, _ = integrate.quad(
            lambda t, law=law, units=units: law.sf(t) ** units, 0, math.inf, limit=400
        )
        assert ace.gang(law, units).mean() == pytest.approx(exact, rel=rel)


def test_gang_of_huge_gangs_and_grids() -> None:
    law = ace.LogNormal(10.0, 1.0)
    g = ace.gang(law, 10**12)
    x = g.ppf([0.1, 0.5, 0.9])
    assert np.all(np.isfinite(x) & (x > 0))
    np.testing.assert_allclose(-np.expm1(1e12 * np.log1p(-law.cdf(x))), [0.1, 0.5, 0.9], atol=1e-5)
    small = ace.gang(law, 8, points=16)
    assert small.samples.size == 16


@pytest.mark.parametrize(
    ("law", "units", "error", "match"),
    [
        (ace.Weibull(2.0, 1.0), 0, ValueError, "units must be >= 1, got 0"),
        (ace.Weibull(2.0, 1.0), -3, ValueError, "units must be >= 1"),
        (ace.Weibull(2.0, 1.0), 2.0, TypeError, "units must be an integer, got float"),
        (ace.Weibull(2.0, 1.0), True, TypeError, "units must be an integer, got bool"),
        (ace.Weibull(2.0, 1.0), "8", TypeError, "units must be an integer, got str"),
        (ace.Weibull(2.0, 1.0), 2**64, ValueError, "units must be <="),
        (3600.0, 8, TypeError, "law must be a Distribution, got float"),
        (ace.Replay([1.0, 2.0]), 8, TypeError, "a Replay is an exact recorded sequence"),
        (
            ace.Mixture([(1.0, ace.Replay([1.0])), (1.0, ace.Exponential(1.0))]),
            8,
            TypeError,
            "Replay",
        ),
        (
            ace.Mixture([(1.0, ace.ScaleAware(ace.Exponential(1.0), 8.0))]),
            8,
            ValueError,
            "a Mixture holding a ScaleAware depends on the job's size",
        ),
        (stats.norm(), 8, ValueError, "scipy.stats.norm has no acesim law"),
    ],
)
def test_gang_rejects_bad_input(law: Any, units: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ace.gang(law, units)


def test_gang_points_are_checked() -> None:
    with pytest.raises(ValueError, match="points must be >= 2"):
        ace.gang(ace.LogNormal(0.0, 1.0), 4, points=1)
    with pytest.raises(TypeError, match="points must be an integer"):
        ace.gang(ace.LogNormal(0.0, 1.0), 4, points=10.0)


@pytest.mark.parametrize("module", [acesim.distributions, acesim.regimes])
def test_docstring_examples(module: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
