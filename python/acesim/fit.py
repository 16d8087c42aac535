"""Maximum-likelihood fits of failure-time distributions, with right censoring.

A sample ``t_i`` is either an observed failure or *right-censored*: the unit was
still alive at ``t_i`` when observation stopped (for example a GPU still in
service at the end of the log).  Censored samples only tell us that the
lifetime exceeds ``t_i``, so they enter the likelihood through the survival
function ``S(t_i)`` instead of the density ``f(t_i)``::

    log L(theta) = sum_{i observed} log f(t_i; theta) + sum_{i censored} log S(t_i; theta)

Ignoring censoring (treating censored times as failures, or dropping them)
biases lifetimes downwards.

Two layers are provided:

* ``exponential_mle``, ``weibull_mle``, ``lognormal_mle`` return plain
  parameters (floats) and depend on numpy only;
* ``fit_exponential``, ``fit_weibull``, ``fit_lognormal`` wrap them into the
  :mod:`acesim.distributions` objects ``Exponential(mean)``,
  ``Weibull(shape, scale)`` and ``LogNormal(mu, sigma)``.

Inputs are validated at the boundary: ``TypeError`` for non-numeric data,
``ValueError`` (naming the parameter) for empty input, NaN or infinite values,
out-of-range samples, a length mismatch between ``samples`` and ``censored``, or
no uncensored observation.  Exponential samples may be zero (``t >= 0``);
Weibull and log-normal samples must be strictly positive (their likelihoods
involve ``log t``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt

from ._validation import described, real_array

if TYPE_CHECKING:
    from acesim.distributions import Exponential, LogNormal, Weibull

__all__ = [
    "exponential_mle",
    "fit_exponential",
    "fit_lognormal",
    "fit_weibull",
    "lognormal_mle",
    "weibull_mle",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_MAX_ITER = 200
_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------


def _as_samples(samples: npt.ArrayLike, *, positive: bool) -> FloatArray:
    """Return ``samples`` as a finite 1-D float64 array, or raise."""
    arr = real_array("samples", samples)
    if arr is None:
        raise TypeError(f"samples must be a 1-D sequence of real numbers{described(samples)}")
    if arr.ndim != 1:
        raise ValueError(f"samples must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("samples must not be empty")
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError("samples must be finite (found NaN or inf)")
    if positive:
        if np.any(out <= 0.0):
            raise ValueError("samples must be strictly positive (> 0)")
    elif np.any(out < 0.0):
        raise ValueError("samples must be non-negative (>= 0)")
    return out


def _as_censored(censored: npt.ArrayLike | None, n: int) -> BoolArray:
    """Return the censoring mask (True = right-censored), or raise."""
    if censored is None:
        return np.zeros(n, dtype=np.bool_)
    try:
        arr = np.asarray(censored)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"censored must be a 1-D sequence of booleans: {exc}") from exc
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"censored must be booleans (or 0/1), got array of dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"censored must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"censored must have the same length as samples ({n}), got {arr.shape[0]}")
    if arr.dtype.kind != "b":
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError("censored must contain only booleans or 0/1")
    mask: BoolArray = arr.astype(np.bool_)
    if np.all(mask):
        raise ValueError("censored: at least one uncensored observation (a failure) is needed")
    return mask


L = TypeVar("L")


def _law(make: Callable[..., L], family: str, **params: float) -> L:
    """``make(**params)``, the fitted law; a ValueError naming ``samples`` when
    the law cannot hold the fitted parameters (samples spread over more
    orders of magnitude than the law can represent: its mean overflows)."""
    try:
        return make(**params)
    except ValueError as exc:
        fitted = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise ValueError(
            f"samples: their spread is beyond what a {family} law can represent "
            f"(the fit gives {fitted}: {exc})"
        ) from None


def _check_spread(y: FloatArray, cens: BoolArray, what: str) -> None:
    """Raise unless a finite MLE exists for a location-scale fit on ``y = log t``.

    The Weibull and log-normal likelihoods are unbounded (shape -> inf,
    sigma -> 0) when every observed failure time is the same value and no
    sample, censored or not, lies above it.
    """
    y_obs = y[~cens]
    top = float(np.max(y))
    mean_obs = float(np.mean(y_obs))
    if top - mean_obs <= 1e-12 * max(1.0, abs(top)):
        raise ValueError(
            f"samples: the {what} MLE does not exist when all observed failure "
            "times are equal and no sample lies above them"
        )


# --------------------------------------------------------------------------
# Exponential
# --------------------------------------------------------------------------


def exponential_mle(samples: npt.ArrayLike, censored: npt.ArrayLike | None = None) -> float:
    """Maximum-likelihood mean of an exponential distribution.

    Closed form, with ``d`` the number of uncensored samples::

        mean = sum_i t_i / d

    (total time on test over the number of observed failures; censored
    samples add exposure but no failure).

    Args:
        samples: non-negative, finite durations (zeros allowed).
        censored: optional booleans, True where the sample is right-censored.

    Returns:
        The fitted mean (``1 / rate``).

    Raises:
        TypeError: non-numeric ``samples`` or ``censored``.
        ValueError: empty, NaN/inf or negative ``samples``; length mismatch;
            no uncensored sample; total time zero.
    """
    t = _as_samples(samples, positive=False)
    cens = _as_censored(censored, t.size)
    total = float(np.sum(t))
    if total <= 0.0:
        raise ValueError("samples: total time is zero, the exponential mean would be 0")
    d = int(np.count_nonzero(~cens))
    return total / d


def fit_exponential(samples: npt.ArrayLike, censored: npt.ArrayLike | None = None) -> Exponential:
    """Fit ``acesim.Exponential(mean)`` by maximum likelihood.

    See :func:`exponential_mle` for the estimator and the errors raised.
    """
    from acesim.distributions import Exponential

    return _law(Exponential, "exponential", mean=exponential_mle(samples, censored))


# --------------------------------------------------------------------------
# Weibull
# --------------------------------------------------------------------------


def _weibull_profile(k: float, u: FloatArray, u_obs_mean: float) -> tuple[float, float]:
    """Profile score ``g(k)`` and ``dg/dk`` on shifted logs ``u = log t - max log t``."""
    w = np.exp(k * u)  # in (0, 1], the largest sample contributes exactly 1
    s0 = float(np.sum(w))
    m1 = float(np.sum(w * u)) / s0
    m2 = float(np.sum(w * u * u)) / s0
    g = m1 - 1.0 / k - u_obs_mean
    dg = max(m2 - m1 * m1, 0.0) + 1.0 / (k * k)
    return g, dg


def weibull_mle(
    samples: npt.ArrayLike, censored: npt.ArrayLike | None = None
) -> tuple[float, float]:
    """Maximum-likelihood ``(shape, scale)`` of a two-parameter Weibull.

    With shape ``k``, scale ``lam`` (location 0), ``D`` the uncensored samples
    and ``d = |D|``, the log-likelihood is::

        l(k, lam) = sum_{i in D} [log k - k log lam + (k - 1) log t_i]
                    - sum_{all i} (t_i / lam)^k

    For fixed ``k`` it is maximised by ``lam^k = sum_all t_i^k / d``;
    substituting gives the profile score equation for the shape::

        g(k) = sum_all t_i^k log t_i / sum_all t_i^k - 1/k - (1/d) sum_{i in D} log t_i = 0

    ``g`` is strictly increasing (its derivative is a weighted variance of
    ``log t`` plus ``1/k^2``), so the root is unique.  It is found by a
    bracketed Newton iteration in ``log k`` that falls back to bisection
    whenever a Newton step leaves the bracket; the sums are computed on
    ``log t - max log t`` so that ``t^k`` cannot overflow.

    Args:
        samples: strictly positive, finite durations.
        censored: optional booleans, True where the sample is right-censored.

    Returns:
        ``(shape, scale)``.

    Raises:
        TypeError: non-numeric ``samples`` or ``censored``.
        ValueError: empty, NaN/inf or non-positive ``samples``; length
            mismatch; no uncensored sample; no finite MLE (all observed
            failures equal with nothing above them).
    """
    t = _as_samples(samples, positive=True)
    cens = _as_censored(censored, t.size)
    y = np.log(t)
    _check_spread(y, cens, "Weibull")
    top = float(np.max(y))
    u = y - top
    obs = ~cens
    d = int(np.count_nonzero(obs))
    u_obs_mean = float(np.mean(u[obs]))

    # Starting point: moment estimate pi / (sqrt(6) sd(log t)) of the failures.
    sd = float(np.std(y[obs])) if d >= 2 else 0.0
    if not sd > 0.0:
        sd = float(np.std(y))
    x0 = math.log(math.pi / (math.sqrt(6.0) * sd)) if sd > 0.0 else 0.0

    def score(x: float) -> tuple[float, float]:
        k = math.exp(x)
        g, dg = _weibull_profile(k, u, u_obs_mean)
        return g, k * dg  # d g / d log k

    # Bracket the root in x = log k: g -> -inf as k -> 0, g -> -u_obs_mean > 0 as k -> inf.
    lo = hi = x0
    g_lo, _ = score(lo)
    g_hi = g_lo
    for _ in range(_MAX_ITER):
        if g_lo <= 0.0:
            break
        hi, g_hi = lo, g_lo
        lo -= 1.0
        g_lo, _ = score(lo)
    for _ in range(_MAX_ITER):
        if g_hi >= 0.0:
            break
        lo, g_lo = hi, g_hi
        hi += 1.0
        g_hi, _ = score(hi)
    if g_lo > 0.0 or g_hi < 0.0:
        raise RuntimeError("weibull_mle: could not bracket the shape")  # pragma: no cover

    x = 0.5 * (lo + hi) if not (lo < x0 < hi) else x0
    for _ in range(_MAX_ITER):
        g, dgx = score(x)
        if g == 0.0:
            break
        if g < 0.0:
            lo = x
        else:
            hi = x
        step = g / dgx if dgx > 0.0 else math.inf
        x_new = x - step
        if not (lo < x_new < hi):
            x_new = 0.5 * (lo + hi)
        if abs(x_new - x) <= 1e-14 * max(1.0, abs(x)) or hi - lo <= 1e-14 * max(1.0, abs(x)):
            x = x_new
            break
        x = x_new
    else:  # pragma: no cover - the bracket halves at worst
        raise RuntimeError("weibull_mle: shape iteration did not converge")

    k = math.exp(x)
    s0 = float(np.sum(np.exp(k * u)))
    log_scale = top + (math.log(s0) - math.log(d)) / k
    return k, math.exp(log_scale)


def fit_weibull(samples: npt.ArrayLike, censored: npt.ArrayLike | None = None) -> Weibull:
    """Fit ``acesim.Weibull(shape, scale)`` (location 0) by maximum likelihood.

    See :func:`weibull_mle` for the estimator and the errors raised.
    """
    from acesim.distributions import Weibull

    shape, scale = weibull_mle(samples, censored)
    return _law(Weibull, "Weibull", shape=shape, scale=scale)


# --------------------------------------------------------------------------
# Log-normal
# --------------------------------------------------------------------------

_erfc_vec = np.frompyfunc(math.erfc, 1, 1)


def _log_ndtr(a: FloatArray) -> FloatArray:
    """``log Phi(a)`` for the standard normal CDF, accurate over the whole line.

    Uses ``math.erfc`` (full double precision) where ``Phi`` is representable
    and the asymptotic series ``Phi(a) ~ phi(a)/|a| (1 - 1/a^2 + 3/a^4 - ...)``
    for ``a < -30``.
    """
    a = np.asarray(a, dtype=np.float64)
    out = np.empty_like(a)
    pos = a >= 0.0
    mid = (a < 0.0) & (a >= -30.0)
    far = a < -30.0
    if np.any(pos):
        q = np.asarray(_erfc_vec(a[pos] / math.sqrt(2.0)), dtype=np.float64)
        out[pos] = np.log1p(-0.5 * q)
    if np.any(mid):
        q = np.asarray(_erfc_vec(-a[mid] / math.sqrt(2.0)), dtype=np.float64)
        out[mid] = np.log(0.5 * q)
    if np.any(far):
        x = a[far]
        r = 1.0 / (x * x)
        series = 1.0 + r * (-1.0 + r * (3.0 + r * (-15.0 + r * (105.0 + r * -945.0))))
        out[far] = -0.5 * x * x - np.log(-x) - 0.5 * _LOG_2PI + np.log(series)
    return out


def _mills(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(log Phi(a), phi(a) / Phi(a))``, both computed in log space."""
    log_cdf = _log_ndtr(a)
    log_pdf = -0.5 * a * a - 0.5 * _LOG_2PI
    return log_cdf, np.exp(log_pdf - log_cdf)


def lognormal_mle(
    samples: npt.ArrayLike, censored: npt.ArrayLike | None = None
) -> tuple[float, float]:
    """Maximum-likelihood ``(mu, sigma)`` of a log-normal (of the underlying normal).

    With ``y_i = log t_i``, uncensored set ``D`` (size ``d``) and censored set
    ``C``, the log-likelihood (up to a constant) is::

        l(mu, sigma) = sum_{i in D} [-log sigma - (y_i - mu)^2 / (2 sigma^2)]
                       + sum_{i in C} log(1 - Phi((y_i - mu) / sigma))

    Without censoring this has the closed form ``mu = mean(y)``,
    ``sigma^2 = mean((y - mu)^2)`` (divisor ``n``).  With censoring it is
    maximised by Newton's method in Olsen's parameters ``beta = mu / sigma``,
    ``gamma = 1 / sigma``, in which the log-likelihood::

        l = d log gamma - sum_{i in D} (gamma y_i - beta)^2 / 2
            + sum_{i in C} log Phi(beta - gamma y_i)

    is globally concave, with a backtracking line search; ``log Phi`` and the
    inverse Mills ratio ``phi / Phi`` are evaluated in log space so heavily
    censored samples far in the tail stay accurate.  Pure numpy.

    Args:
        samples: strictly positive, finite durations.
        censored: optional booleans, True where the sample is right-censored.

    Returns:
        ``(mu, sigma)``.

    Raises:
        TypeError: non-numeric ``samples`` or ``censored``.
        ValueError: empty, NaN/inf or non-positive ``samples``; length
            mismatch; no uncensored sample; no finite MLE (all observed
            failures equal with nothing above them).
    """
    t = _as_samples(samples, positive=True)
    cens = _as_censored(censored, t.size)
    y_all = np.log(t)
    _check_spread(y_all, cens, "log-normal")
    obs = ~cens
    if not np.any(cens):
        mu = float(np.mean(y_all))
        return mu, float(np.sqrt(np.mean((y_all - mu) ** 2)))

    # Centre and scale y for conditioning; undo at the end.
    centre = float(np.mean(y_all))
    spread = float(np.std(y_all))
    if not spread > 0.0:  # pragma: no cover - excluded by _check_spread
        spread = 1.0
    y = (y_all - centre) / spread
    yd = y[obs]
    yc = y[cens]
    d = float(yd.size)
    sum_yd = float(np.sum(yd))
    sum_yd2 = float(np.sum(yd * yd))

    def loglik(beta: float, gamma: float) -> float:
        r = gamma * yd - beta
        log_cdf = _log_ndtr(beta - gamma * yc)
        return d * math.log(gamma) - 0.5 * float(np.sum(r * r)) + float(np.sum(log_cdf))

    # Start from the moments of the failures on the scaled axis (sd 1 if undefined).
    mu0 = float(np.mean(yd))
    sd0 = float(np.std(yd)) if yd.size >= 2 else 0.0
    if not sd0 > 0.0:
        sd0 = 1.0
    beta, gamma = mu0 / sd0, 1.0 / sd0
    ll = loglik(beta, gamma)

    for _ in range(_MAX_ITER):
        a = beta - gamma * yc
        _, m = _mills(a)
        h = -m * (a + m)  # second derivative of log Phi, <= 0
        r_sum = gamma * sum_yd - d * beta  # sum_D (gamma y - beta)
        grad_b = r_sum + float(np.sum(m))
        grad_g = d / gamma - (gamma * sum_yd2 - beta * sum_yd) - float(np.sum(m * yc))
        h_bb = -d + float(np.sum(h))
        h_bg = sum_yd - float(np.sum(h * yc))
        h_gg = -d / (gamma * gamma) - sum_yd2 + float(np.sum(h * yc * yc))
        det = h_bb * h_gg - h_bg * h_bg
        if det > 0.0 and h_bb < 0.0:
            step_b = -(h_gg * grad_b - h_bg * grad_g) / det
            step_g = -(-h_bg * grad_b + h_bb * grad_g) / det
        else:  # pragma: no cover - the Hessian is negative definite
            step_b, step_g = grad_b, grad_g
        decrement = step_b * grad_b + step_g * grad_g  # Newton decrement^2 >= 0
        if decrement <= 1e-20 * max(1.0, abs(ll)):
            break
        lam = 1.0
        accepted = False
        while lam >= 1e-10:
            nb, ng = beta + lam * step_b, gamma + lam * step_g
            if ng > 0.0:
                nll = loglik(nb, ng)
                if nll >= ll + 1e-4 * lam * decrement:
                    accepted = True
                    break
            lam *= 0.5
        if not accepted:  # at the limit of floating-point precision
            break
        small = abs(nb - beta) <= 1e-13 * max(1.0, abs(nb)) and abs(ng - gamma) <= 1e-13 * max(
            1.0, ng
        )
        beta, gamma, ll = nb, ng, nll
        if small:
            break
    else:  # pragma: no cover
        raise RuntimeError("lognormal_mle: Newton iteration did not converge")

    sigma_scaled = 1.0 / gamma
    mu_scaled = beta / gamma
    return centre + spread * mu_scaled, spread * sigma_scaled


def fit_lognormal(samples: npt.ArrayLike, censored: npt.ArrayLike | None = None) -> LogNormal:
    """Fit ``acesim.LogNormal(mu, sigma)`` by maximum likelihood.

    See :func:`lognormal_mle` for the estimator and the errors raised.
    """
    from acesim.distributions import LogNormal

    mu, sigma = lognormal_mle(samples, censored)
    return _law(LogNormal, "log-normal", mu=mu, sigma=sigma)
