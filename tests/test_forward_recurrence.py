"""The stationary first gap: ``Distribution.sample(stationary=True)`` draws the
equilibrium forward-recurrence law of a law F (density sf(x) / mean, mean
E[X^2] / (2 E[X]) = ``forward_recurrence_mean()``), the first gap of a renewal
process already in its stationary state (issue 7, section 2, item 7).

Every kind: the sample mean against ``forward_recurrence_mean()`` (within 4
standard errors, from the sample's own spread) and the shape against the
exact equilibrium CDF (Kolmogorov-Smirnov),

    F_e(x) = (1 / m) * integral_0^x sf(t) dt = (x sf(x) + E[X; X <= x]) / m,

worked out per kind below; determinism; Replay stays exact; a stationary
renewal process counts T / mean events in [0, T], a fresh one more."""

from __future__ import annotations

import math
from collections.abc import Callable

import acesim as ace
import numpy as np
import pytest

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

N = 200_000
Z_MAX = 4.0
KS_P_MIN = 1e-3

Cdf = Callable[[np.ndarray], np.ndarray]


# --- exact equilibrium CDFs ----------------------------------------------------


def _constant_cdf(c: float) -> Cdf:
    # sf = 1 on [0, c): F_e(x) = x / c, uniform on [0, c].
    return lambda x: np.clip(x / c, 0.0, 1.0)


def _exponential_cdf(m: float) -> Cdf:
    # Memoryless: F_e = F.
    return stats.expon(scale=m).cdf


def _weibull_cdf(k: float, lam: float) -> Cdf:
    # integral_0^x exp(-(t/lam)^k) dt with u = (t/lam)^k is
    # (lam / k) * Gamma(1/k) * P(1/k, (x/lam)^k) and m = lam * Gamma(1 + 1/k)
    # = (lam / k) * Gamma(1/k): F_e(x) = P(1/k, (x/lam)^k).
    return lambda x: special.gammainc(1.0 / k, (np.maximum(x, 0.0) / lam) ** k)


def _gamma_cdf(a: float, th: float) -> Cdf:
    # E[X; X <= x] = a th P(a + 1, x/th), m = a th:
    # F_e(x) = (x / (a th)) (1 - P(a, x/th)) + P(a + 1, x/th).
    def cdf(x: np.ndarray) -> np.ndarray:
        y = np.maximum(x, 0.0) / th
        return y / a * special.gammaincc(a, y) + special.gammainc(a + 1.0, y)

    return cdf


def _lognormal_cdf(mu: float, s: float) -> Cdf:
    # E[X; X <= x] = m Phi((ln x - mu - s^2) / s), m = exp(mu + s^2 / 2):
    # F_e(x) = (x / m) (1 - Phi((ln x - mu) / s)) + Phi((ln x - mu - s^2) / s).
    m = math.exp(mu + 0.5 * s * s)

    def cdf(x: np.ndarray) -> np.ndarray:
        lx = np.log(np.maximum(x, 1e-300))
        return x / m * stats.norm.sf((lx - mu) / s) + stats.norm.cdf((lx - mu - s * s) / s)

    return cdf


def _empirical_cdf(samples: np.ndarray) -> Cdf:
    # sf is a step function: integral_0^x sf = mean(min(x, x_i)), m = mean(x_i).
    s = np.sort(np.asarray(samples, dtype=np.float64))
    below = np.concatenate([[0.0], np.cumsum(s)])
    total = below[-1]

    def cdf(x: np.ndarray) -> np.ndarray:
        j = np.searchsorted(s, x, side="right")  # samples <= x
        return (below[j] + x * (s.size - j)) / total

    return cdf


def _mixture_cdf(parts: list[tuple[float, float, Cdf]]) -> Cdf:
    # sf = sum w_i sf_i: F_e = sum w_i m_i F_e,i / sum w_i m_i.
    total = sum(w * m for w, m, _ in parts)
    return lambda x: sum(w * m * cdf(x) for w, m, cdf in parts) / total


def _scaled_cdf(cdf: Cdf, factor: float) -> Cdf:
    return lambda x: cdf(x / factor)


EMPIRICAL = np.array([0.0, 3.0, 7.5, 12.0, 40.0, 40.0, 95.0, 300.0, 1.25, 0.0, 18.0])
HISTORY = np.array([5.0, 0.2, 0.3, 0.1, 80.0, 60.0, 0.4, 0.2, 45.0, 100.0, 3.0, 0.5])


def _cases() -> dict[str, tuple[ace.Distribution, float | None, Cdf]]:
    """name -> (law, gpus to sample at or None, exact equilibrium CDF)."""
    w_lo, w_hi = 0.7, 0.3
    exp_mean, wb_k, wb_lam = 50.0, 0.5, 10.0
    wb_mean = wb_lam * math.gamma(1.0 + 1.0 / wb_k)
    # ScaleAware(Exponential(100), ref_gpus=8) at gpus=32: factor 8/32.
    sa_factor = 8.0 / 32.0
    return {
        "constant": (ace.Constant(3600.0), None, _constant_cdf(3600.0)),
        "exponential": (ace.Exponential(3600.0), None, _exponential_cdf(3600.0)),
        "weibull_0.5": (ace.Weibull(0.5, 1000.0), None, _weibull_cdf(0.5, 1000.0)),
        "weibull_1": (ace.Weibull(1.0, 50.0), None, _weibull_cdf(1.0, 50.0)),
        "weibull_2.5": (ace.Weibull(2.5, 7 * ace.DAY), None, _weibull_cdf(2.5, 7 * ace.DAY)),
        "gamma_0.3": (ace.Gamma(0.3, 200.0), None, _gamma_cdf(0.3, 200.0)),
        "gamma_4": (ace.Gamma(4.0, 900.0), None, _gamma_cdf(4.0, 900.0)),
        "lognormal": (ace.LogNormal(5.0, 0.8), None, _lognormal_cdf(5.0, 0.8)),
        "lognormal_neg_mu": (ace.LogNormal(-2.0, 0.3), None, _lognormal_cdf(-2.0, 0.3)),
        "mixture": (
            ace.Mixture([(w_lo, ace.Exponential(exp_mean)), (w_hi, ace.Weibull(wb_k, wb_lam))]),
            None,
            _mixture_cdf(
                [
                    (w_lo, exp_mean, _exponential_cdf(exp_mean)),
                    (w_hi, wb_mean, _weibull_cdf(wb_k, wb_lam)),
                ]
            ),
        ),
        # Component means depend on the job size through the ScaleAware inside:
        # at gpus=32 the first component has mean 100 * 8/32 = 25.
        "mixture_scale_aware_inside": (
            ace.Mixture(
                [
                    (0.5, ace.ScaleAware(ace.Exponential(100.0), ref_gpus=8.0)),
                    (0.5, ace.Weibull(wb_k, wb_lam)),
                ]
            ),
            32.0,
            _mixture_cdf(
                [
                    (0.5, 100.0 * sa_factor, _exponential_cdf(100.0 * sa_factor)),
                    (0.5, wb_mean, _weibull_cdf(wb_k, wb_lam)),
                ]
            ),
        ),
        "mixture_nested": (
            ace.Mixture(
                [
                    (0.2, ace.Mixture([(1.0, ace.Constant(30.0)), (3.0, ace.Gamma(2.0, 5.0))])),
                    (0.8, ace.Exponential(4.0)),
                ]
            ),
            None,
            _mixture_cdf(
                [
                    (0.2 * 0.25, 30.0, _constant_cdf(30.0)),
                    (0.2 * 0.75, 10.0, _gamma_cdf(2.0, 5.0)),
                    (0.8, 4.0, _exponential_cdf(4.0)),
                ]
            ),
        ),
        # A component with mean 0 is never the one a random time falls in.
        "mixture_zero_component": (
            ace.Mixture([(0.5, ace.Constant(0.0)), (0.5, ace.Exponential(10.0))]),
            None,
            _exponential_cdf(10.0),
        ),
        "empirical": (ace.Empirical(EMPIRICAL), None, _empirical_cdf(EMPIRICAL)),
        "block_bootstrap": (ace.BlockBootstrap(HISTORY, 4), None, _empirical_cdf(HISTORY)),
        "scale_aware_weibull": (
            ace.ScaleAware(ace.Weibull(0.7, 100.0), ref_gpus=8.0, exponent=0.5),
            64.0,  # factor (8/64)^0.5
            _scaled_cdf(_weibull_cdf(0.7, 100.0), (8.0 / 64.0) ** 0.5),
        ),
    }


CASES = _cases()


def _draws(name: str, n: int = N, **kwargs: object) -> np.ndarray:
    dist, gpus, _ = CASES[name]
    return dist.sample(n, seed=11, stream=3, gpus=gpus, stationary=True, **kwargs)


# --- closed-form means ---------------------------------------------------------


def test_forward_recurrence_means_in_closed_form():
    k, lam = 0.5, 1.0
    # Weibull: lam Gamma(1 + 2/k) / (2 Gamma(1 + 1/k)) = Gamma(5) / (2 Gamma(3)) = 24 / 4.
    assert ace.Weibull(k, lam).forward_recurrence_mean() == pytest.approx(6.0, rel=1e-12)
    assert ace.Exponential(7.0).forward_recurrence_mean() == pytest.approx(7.0, rel=1e-12)
    assert ace.Constant(8.0).forward_recurrence_mean() == pytest.approx(4.0, rel=1e-12)
    # Gamma: (a + 1) th / 2.
    assert ace.Gamma(3.0, 2.0).forward_recurrence_mean() == pytest.approx(4.0, rel=1e-12)
    # LogNormal: exp(2 mu + 2 s^2) / (2 exp(mu + s^2 / 2)) = exp(mu + 1.5 s^2) / 2.
    assert ace.LogNormal(1.0, 0.5).forward_recurrence_mean() == pytest.approx(
        math.exp(1.0 + 1.5 * 0.25) / 2.0, rel=1e-12
    )
    # Empirical: sum x^2 / (2 sum x) = (1 + 9) / (2 * 4).
    assert ace.Empirical([1.0, 3.0]).forward_recurrence_mean() == pytest.approx(1.25, rel=1e-12)
    assert ace.BlockBootstrap([1.0, 3.0], 1).forward_recurrence_mean() == pytest.approx(
        1.25, rel=1e-12
    )
    # Mixture 1:3 of Constant(2) and Exponential(4): E[X^2] = (4 + 3 * 32) / 4 = 25,
    # E[X] = (2 + 3 * 4) / 4 = 3.5.
    mix = ace.Mixture([(1.0, ace.Constant(2.0)), (3.0, ace.Exponential(4.0))])
    assert mix.forward_recurrence_mean() == pytest.approx(25.0 / 7.0, rel=1e-12)
    # ScaleAware: the base's, times (ref / gpus)^exponent.
    sa = ace.ScaleAware(ace.Weibull(k, lam), ref_gpus=8.0)
    assert sa.forward_recurrence_mean(gpus=32.0) == pytest.approx(6.0 / 4.0, rel=1e-12)
    assert sa.forward_recurrence_mean() == pytest.approx(6.0, rel=1e-12)  # at ref_gpus
    # Mass all at 0: the first gap is 0.
    assert ace.Constant(0.0).forward_recurrence_mean() == 0.0
    assert ace.Empirical([0.0, 0.0]).forward_recurrence_mean() == 0.0
    # Replays stay exact: the draws are the plain ones, so is the mean.
    replay = ace.Replay([1.0, 2.0, 6.0])
    assert replay.forward_recurrence_mean() == replay.mean() == pytest.approx(3.0, rel=1e-12)


# --- every kind: mean and shape ------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_mean_matches_forward_recurrence_mean(name):
    dist, gpus, _ = CASES[name]
    x = _draws(name)
    expected = dist.forward_recurrence_mean(gpus=gpus)
    assert np.isfinite(x).all() and (x >= 0).all()
    se = x.std(ddof=1) / math.sqrt(x.size)
    z = (x.mean() - expected) / se if se > 0 else 0.0
    assert abs(z) < Z_MAX, f"{name}: mean {x.mean():.6g} vs {expected:.6g} (z = {z:.2f})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_matches_equilibrium_cdf(name):
    _, _, cdf = CASES[name]
    x = _draws(name)
    result = stats.kstest(x, cdf)
    assert result.pvalue > KS_P_MIN, (
        f"{name}: KS D = {result.statistic:.4g}, p = {result.pvalue:.3g}"
    )


def test_stationary_draws_differ_from_plain_draws_for_a_non_exponential_law():
    # Weibull(0.5): the first gap from a random time is 3 times the mean gap.
    dist = ace.Weibull(0.5, 1.0)
    fresh = dist.sample(N, seed=5)
    stationary = dist.sample(N, seed=5, stationary=True)
    assert fresh.mean() == pytest.approx(2.0, rel=0.03)  # lam Gamma(3)
    assert stationary.mean() == pytest.approx(6.0, rel=0.03)


def test_empirical_never_returns_more_than_its_largest_sample():
    x = _draws("empirical")
    assert x.max() <= EMPIRICAL.max()
    # Zeros in the history are never the gap a random time falls in.
    assert (x > 0).all()


def test_all_mass_at_zero_gives_zero():
    for dist in (ace.Constant(0.0), ace.Empirical([0.0, 0.0, 0.0])):
        x = dist.sample(1000, seed=1, stationary=True)
        assert (x == 0.0).all()
    mix = ace.Mixture([(1.0, ace.Constant(0.0)), (2.0, ace.Empirical([0.0]))])
    assert (mix.sample(100, seed=2, stationary=True) == 0.0).all()


# --- stationary renewal counts -------------------------------------------------


def _renewal_counts(first: np.ndarray, later: np.ndarray, horizon: float) -> np.ndarray:
    """Events in [0, horizon] of renewal processes, one per row: the first gap,
    then the later gaps in order."""
    times = np.cumsum(np.column_stack([first, later]), axis=1)
    assert (times[:, -1] > horizon).all()  # enough gaps drawn
    return (times <= horizon).sum(axis=1)


def test_stationary_renewal_process_counts_the_nominal_rate():
    # A renewal process started in equilibrium has E N(T) = T / mean exactly
    # (the renewal theorem's stationary case); started fresh, a decreasing
    # hazard (Weibull shape 0.5) front-loads failures. Weibull(0.5, 1): mean
    # 2, T = 2: expected 1 event; the fresh process counts many more.
    dist, horizon, processes, gaps = ace.Weibull(0.5, 1.0), 2.0, 50_000, 100
    later = dist.sample(processes * gaps, seed=9, stream=1).reshape(processes, gaps)
    stationary = _renewal_counts(
        dist.sample(processes, seed=9, stream=0, stationary=True), later, horizon
    )
    fresh = _renewal_counts(dist.sample(processes, seed=9, stream=0), later, horizon)
    nominal = horizon / dist.mean()  # 1.0
    se = stationary.std(ddof=1) / math.sqrt(processes)
    assert abs(stationary.mean() - nominal) < Z_MAX * se, (stationary.mean(), nominal, se)
    assert fresh.mean() > nominal + 20 * se, (fresh.mean(), nominal)


# --- determinism and the stream layout -----------------------------------------


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_arguments_give_the_same_bits(name):
    a = _draws(name, 5000)
    b = _draws(name, 5000)
    np.testing.assert_array_equal(_bits(a), _bits(b))


@pytest.mark.parametrize(
    "name", ["weibull_0.5", "mixture_scale_aware_inside", "empirical", "gamma_0.3"]
)
def test_a_draw_is_a_pure_function_of_its_index(name):
    batch = _draws(name, 20_000)
    for k in (0, 1, 4095, 4096, 19_999):
        one = _draws(name, 1, first=k)
        np.testing.assert_array_equal(_bits(one), _bits(batch[k : k + 1]))
    np.testing.assert_array_equal(_bits(_draws(name, 20_000, threads=1)), _bits(batch))
    np.testing.assert_array_equal(_bits(_draws(name, 20_000, threads=3)), _bits(batch))


def test_seed_stream_and_replica_change_the_draws():
    dist = ace.Weibull(0.5, 1.0)
    base = dist.sample(100, seed=1, stream=2, stationary=True)
    for kwargs in ({"seed": 2, "stream": 2}, {"seed": 1, "stream": 3}):
        other = dist.sample(100, stationary=True, **kwargs)
        assert not np.array_equal(base, other)
    other = dist.sample(100, seed=1, stream=2, replica=1, stationary=True)
    assert not np.array_equal(base, other)


def test_a_rebuilt_distribution_draws_the_same_bits():
    a = ace.Mixture([(0.3, ace.Weibull(0.6, 5.0)), (0.7, ace.Empirical(EMPIRICAL))])
    b = ace.Mixture([(0.3, ace.Weibull(0.6, 5.0)), (0.7, ace.Empirical(EMPIRICAL))])
    np.testing.assert_array_equal(
        _bits(a.sample(3000, seed=4, stationary=True)),
        _bits(b.sample(3000, seed=4, stationary=True)),
    )


def test_stationary_draw_n_is_independent_of_plain_draw_n():
    # Its own counters (sub-blocks from 2^30): for an exponential the two
    # laws are the same, yet draw n of each are uncorrelated.
    dist = ace.Exponential(1.0)
    plain = dist.sample(N, seed=3)
    stationary = dist.sample(N, seed=3, stationary=True)
    assert not np.array_equal(plain, stationary)
    r = np.corrcoef(plain, stationary)[0, 1]
    assert abs(r) < Z_MAX / math.sqrt(N)


def test_plain_draws_are_unchanged_by_the_stored_means_and_sums():
    # Weibull tables carry their mean and Empirical tables their running sums
    # for the stationary draw; the plain draws are the inversion and the
    # index pick they always were.
    u = _uniforms(seed=7, n=1000)
    k, lam = 0.5, 1000.0
    expected = lam * (-np.log(u)) ** (1.0 / k)
    got = ace.Weibull(k, lam).sample(1000, seed=7)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    draws = ace.Empirical(EMPIRICAL).sample(1000, seed=7)
    assert set(np.unique(draws)) <= set(EMPIRICAL)


def _uniforms(seed: int, n: int) -> np.ndarray:
    """uniform_open of lo64 of sub-block 0 of draws 0..n-1 of stream 0."""
    key = [seed & 0xFFFFFFFF, seed >> 32]
    out = []
    for i in range(n):
        w = ace._core.philox4x32_10([0, i, 0, 0], key)
        out.append(ace._core.uniform_open(w[0] | (w[1] << 32)))
    return np.array(out)


# --- replays stay exact --------------------------------------------------------


def test_replay_returns_its_plain_draws():
    times = [5.0, 1.0, 7.0, 2.5]
    replay = ace.Replay(times)
    got = replay.sample(6, seed=1, stationary=True)
    np.testing.assert_array_equal(got, replay.sample(6, seed=1))
    np.testing.assert_array_equal(got, [*times, np.inf, np.inf])


def test_a_law_holding_a_replay_returns_its_plain_draws():
    for dist in (
        ace.Mixture([(0.5, ace.Replay([1.0, 2.0])), (0.5, ace.Weibull(0.5, 3.0))]),
        ace.ScaleAware(ace.Replay([4.0, 8.0, 16.0]), ref_gpus=8.0),
    ):
        np.testing.assert_array_equal(
            _bits(dist.sample(500, seed=6, gpus=16.0, stationary=True)),
            _bits(dist.sample(500, seed=6, gpus=16.0)),
        )
        assert dist.forward_recurrence_mean(gpus=16.0) == dist.mean(gpus=16.0)


# --- validation ----------------------------------------------------------------


def test_stationary_must_be_a_bool():
    with pytest.raises(TypeError, match="stationary"):
        ace.Exponential(1.0).sample(3, stationary="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="stationary"):
        ace.Exponential(1.0).sample(3, stationary=1)  # type: ignore[arg-type]


def test_stationary_draws_are_on_the_cpu():
    with pytest.raises(ValueError, match="device"):
        ace.Exponential(1.0).sample(3, device="cuda", stationary=True)


def test_forward_recurrence_mean_validates_gpus():
    with pytest.raises(ValueError, match="gpus"):
        ace.Exponential(1.0).forward_recurrence_mean(gpus=0.0)
    with pytest.raises(TypeError, match="gpus"):
        ace.Exponential(1.0).forward_recurrence_mean(gpus="8")  # type: ignore[arg-type]


def test_sample_arguments_are_validated_when_stationary():
    with pytest.raises(ValueError, match="n"):
        ace.Exponential(1.0).sample(-1, stationary=True)
    with pytest.raises(ValueError, match="first"):
        ace.Exponential(1.0).sample(2, first=2**32 - 1, stationary=True)
