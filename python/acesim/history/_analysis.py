"""From a :class:`History` to failure laws: fits, burstiness, lemons, a model.

The methods :meth:`History.fit`, :meth:`History.burstiness`,
:meth:`History.lemons` and :meth:`History.to_model` delegate here.

**Fits** (:func:`fit_intervals`): each family is fitted to the censored
samples of :meth:`History.intervals` by maximum likelihood (failures
through the density, censored samples through the survival function; the
exponential, Weibull and log-normal estimators of :mod:`acesim.fit`, the
gamma one here by Nelder-Mead in ``(log shape, log scale)`` polished by
Newton steps). Confidence intervals come from the observed information
(the numerical Hessian of the log-likelihood) in the parameters' natural
unbounded coordinates (``log`` of a positive parameter, ``mu`` as is), so
an interval of a positive parameter is ``exp(log p +- z se)`` and never
crosses zero. Fits are ranked by ``AIC = 2 k - 2 log L``; every density is
of the same samples in seconds, so the log-likelihoods are comparable.
The goodness-of-fit statistic ``ks`` is a censored Kolmogorov-Smirnov
distance: the largest gap between the fitted cdf and the Kaplan-Meier
estimate, at the failure times (on either side of each step).

Samples of zero seconds are left out of the fits (the Weibull, log-normal
and gamma likelihoods need ``t > 0``); ``Fit.dropped`` counts them.

A family that cannot be fitted to the samples (its maximum-likelihood
estimate does not exist, as for the Weibull, log-normal and gamma laws when
every failure time is the same and no sample lies above it; or its fitted
law cannot be represented, a log-normal whose mean overflows a float) is
reported in ``Fit.failed`` with the reason, and the others are ranked; only
when no family can be fitted is it an error.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import _special
from .. import fit as _fit
from .._validation import finite, integer, seconds
from ..distributions import Distribution, Exponential, Gamma, LogNormal, Weibull

if TYPE_CHECKING:
    from ._model import History, Intervals

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: The families :meth:`History.fit` knows, with their parameter names.
FAMILIES: dict[str, tuple[str, ...]] = {
    "exponential": ("mean",),
    "weibull": ("shape", "scale"),
    "lognormal": ("mu", "sigma"),
    "gamma": ("shape", "scale"),
}

# which parameters are positive (fitted on the log scale)
_POSITIVE = {"mean", "shape", "scale", "sigma"}


# ---------------------------------------------------------------------------
# log-likelihoods (densities of t in seconds, all families comparable)


def _loglik(family: str, p: Sequence[float], t: FloatArray, cens: BoolArray) -> float:
    obs = ~cens
    if family == "exponential":
        (m,) = p
        return float(-np.count_nonzero(obs) * math.log(m) - np.sum(t) / m)
    if family == "weibull":
        k, lam = p
        z = t / lam
        logz = np.log(z)
        return float(
            np.count_nonzero(obs) * (math.log(k) - math.log(lam))
            + (k - 1.0) * np.sum(logz[obs])
            - np.sum(np.exp(k * logz))
        )
    if family == "lognormal":
        mu, sigma = p
        y = np.log(t)
        z = (y - mu) / sigma
        zd = z[obs]
        ll = float(
            -np.sum(y[obs]) - zd.size * (math.log(sigma) + 0.5 * math.log(2.0 * math.pi))
        ) - 0.5 * float(np.sum(zd * zd))
        if np.any(cens):
            ll += float(np.sum(_fit._log_ndtr(-z[cens])))
        return ll
    if family == "gamma":
        k, theta = p
        x = t / theta
        xd = x[obs]
        ll = float(
            np.sum((k - 1.0) * np.log(xd) - xd) - xd.size * (math.lgamma(k) + math.log(theta))
        )
        if np.any(cens):
            q = _special.gamma_pq(k, x[cens])[1]
            ll += float(np.sum(np.log(np.maximum(q, 1e-300))))
        return ll
    raise ValueError(f"unknown family {family!r}")  # pragma: no cover


def _to_free(names: Sequence[str], p: Sequence[float]) -> FloatArray:
    return np.array([math.log(v) if n in _POSITIVE else v for n, v in zip(names, p, strict=True)])


def _from_free(names: Sequence[str], x: FloatArray) -> list[float]:
    return [
        math.exp(float(v)) if n in _POSITIVE else float(v) for n, v in zip(names, x, strict=True)
    ]


def _nelder_mead(f: Callable[[FloatArray], float], x0: FloatArray, step: float = 0.3) -> FloatArray:
    """Minimise ``f`` from ``x0`` (small dimension; enough for a polish after)."""
    n = x0.size
    pts = [x0.astype(float)]
    for i in range(n):
        e = x0.astype(float).copy()
        e[i] += step
        pts.append(e)
    vals = [f(p) for p in pts]
    for _ in range(2000):
        order = np.argsort(vals)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if (
            abs(vals[-1] - vals[0]) <= 1e-12 * (1.0 + abs(vals[0]))
            and np.max(np.abs(np.array(pts[1:]) - pts[0])) <= 1e-10
        ):
            break
        c = np.mean(pts[:-1], axis=0)
        xr = c + (c - pts[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = c + 2.0 * (c - pts[-1])
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = c + 0.5 * (pts[-1] - c)
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = pts[0] + 0.5 * (pts[i] - pts[0])
                    vals[i] = f(pts[i])
    return pts[int(np.argmin(vals))]


def _hessian(f: Callable[[FloatArray], float], x: FloatArray) -> FloatArray:
    """Central-difference Hessian of ``f`` at ``x``."""
    n = x.size
    h = 1e-4 * (1.0 + np.abs(x))
    out = np.zeros((n, n))
    f0 = f(x)
    for i in range(n):
        ei = np.zeros(n)
        ei[i] = h[i]
        out[i, i] = (f(x + ei) - 2.0 * f0 + f(x - ei)) / (h[i] * h[i])
        for j in range(i + 1, n):
            ej = np.zeros(n)
            ej[j] = h[j]
            v = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4.0 * h[i] * h[j]
            )
            out[i, j] = out[j, i] = v
    return out


def _gradient(f: Callable[[FloatArray], float], x: FloatArray) -> FloatArray:
    h = 1e-5 * (1.0 + np.abs(x))
    g = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h[i]
        g[i] = (f(x + e) - f(x - e)) / (2.0 * h[i])
    return g


def _gamma_mle(t: FloatArray, cens: BoolArray) -> tuple[float, float]:
    # as for the Weibull and log-normal laws, the likelihood grows without
    # bound (shape -> inf) when every failure is at one time with nothing above
    _fit._check_spread(np.log(t), cens, "gamma")
    td = t[~cens]
    m = float(np.mean(td))
    v = float(np.var(td)) if td.size >= 2 else m * m
    k0 = m * m / v if v > 0 else 1.0
    # start from the exponential-with-censoring mean for the scale
    mean = float(np.sum(t)) / td.size
    x0 = np.array([math.log(k0), math.log(mean / k0)])

    def nll(x: FloatArray) -> float:
        if np.any(np.abs(x) > 700):
            return math.inf
        v_ = -_loglik("gamma", (math.exp(x[0]), math.exp(x[1])), t, cens)
        return v_ if math.isfinite(v_) else math.inf

    x = _nelder_mead(nll, x0)
    for _ in range(5):  # Newton polish
        g = _gradient(nll, x)
        hess = _hessian(nll, x)
        try:
            step = np.linalg.solve(hess, g)
        except np.linalg.LinAlgError:  # pragma: no cover
            break
        if not np.all(np.isfinite(step)) or nll(x - step) > nll(x):
            break
        x = x - step
        if np.max(np.abs(step)) < 1e-10:
            break
    return math.exp(float(x[0])), math.exp(float(x[1]))


def _mle(family: str, t: FloatArray, cens: BoolArray) -> list[float]:
    if family == "exponential":
        return [_fit.exponential_mle(t, cens)]
    if family == "weibull":
        return list(_fit.weibull_mle(t, cens))
    if family == "lognormal":
        return list(_fit.lognormal_mle(t, cens))
    return list(_gamma_mle(t, cens))


_LAWS: dict[str, Callable[..., Distribution]] = {
    "exponential": Exponential,
    "weibull": Weibull,
    "lognormal": LogNormal,
    "gamma": Gamma,
}


def _law(family: str, p: Sequence[float]) -> Distribution:
    """The family's law of the fitted parameters (a ValueError saying so
    when the law cannot hold them, as :mod:`acesim.fit` says it)."""
    return _fit._law(_LAWS[family], family, **dict(zip(FAMILIES[family], p, strict=True)))


def kaplan_meier(
    samples: npt.ArrayLike, censored: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Kaplan-Meier survival: ``(times, before, after)``, the distinct failure
    times with the estimate just before and at each."""
    t = np.asarray(samples, np.float64)
    c = np.asarray(censored, np.bool_)
    order = np.lexsort((c, t))  # failures before censorings at the same time
    t, c = t[order], c[order]
    n = t.size
    times: list[float] = []
    before: list[float] = []
    after: list[float] = []
    s = 1.0
    i = 0
    while i < n:
        j = i
        while j < n and t[j] == t[i]:
            j += 1
        d = int(np.count_nonzero(~c[i:j]))
        if d:
            at_risk = n - i
            times.append(float(t[i]))
            before.append(s)
            s *= 1.0 - d / at_risk
            after.append(s)
        i = j
    return np.array(times), np.array(before), np.array(after)


@dataclass(frozen=True)
class FamilyFit:
    """One family fitted by censored maximum likelihood (see the module doc).

    ``params`` by name (``exponential``: mean; ``weibull`` and ``gamma``:
    shape, scale; ``lognormal``: mu, sigma of ``log t``), ``ci`` their
    confidence intervals at ``level`` and ``se`` their standard errors in the
    fitted coordinates (of ``log p`` for a positive parameter), ``loglik``,
    ``aic``, ``delta_aic`` (to the best fit), ``ks`` the censored KS distance;
    :attr:`law` the acesim distribution.
    """

    family: str
    params: dict[str, float]
    ci: dict[str, tuple[float, float]]
    se: dict[str, float]
    loglik: float
    aic: float
    ks: float
    level: float
    delta_aic: float = 0.0

    @property
    def law(self) -> Distribution:
        """The fitted acesim distribution."""
        return _law(self.family, [self.params[n] for n in FAMILIES[self.family]])

    def covers(self, **true: float) -> bool:
        """Whether each given parameter lies inside its confidence interval."""
        return all(self.ci[k][0] <= v <= self.ci[k][1] for k, v in true.items())

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={v:.4g}" for k, v in self.params.items())
        return f"FamilyFit({self.family}: {ps}; AIC {self.aic:.1f}, KS {self.ks:.3f})"


@dataclass(frozen=True)
class Fit:
    """The families fitted to one set of intervals, best (lowest AIC) first.

    ``fits[0]`` is :attr:`best`; ``fit["weibull"]`` one family by name; the
    samples' provenance: ``by``, ``clock``, ``samples`` and ``failures``
    (counts), ``dropped`` (zero-length samples left out), ``partial`` and
    ``note`` as :class:`acesim.history.Intervals` says them; ``failed``: each
    family that could not be fitted to these samples, with the reason (the
    others are ranked without it); ``left_truncated``: the left-truncated
    samples left out (see :meth:`History.fit`'s ``truncated``).
    :meth:`samples_line` says all of it in one sentence.
    """

    fits: tuple[FamilyFit, ...]
    by: str
    clock: str
    samples: int
    failures: int
    dropped: int = 0
    partial: bool = False
    note: str = ""
    label: str = ""
    failed: dict[str, str] = field(default_factory=dict)
    left_truncated: int = 0

    def samples_line(self) -> str:
        """Which samples the fit used and how many, and which it left out.

        >>> fit = Fit((), "node", "calendar", 12, 9, dropped=1, left_truncated=2)
        >>> fit.samples_line()  # doctest: +NORMALIZE_WHITESPACE
        'samples: 12 node intervals (calendar clock), 9 failures and 3 censored
        (still running when the record ended or was cut short); left out: 2
        left-truncated (begun before the record began; truncated=True keeps
        them), 1 of zero length'
        """
        what = f"{self.by} intervals" + (f" of cause {self.label}" if self.label else "")
        text = (
            f"samples: {self.samples} {what} ({self.clock} clock), {self.failures} failures and "
            f"{self.samples - self.failures} censored (still running when the record ended or "
            "was cut short)"
        )
        out = []
        if self.left_truncated:
            out.append(
                f"{self.left_truncated} left-truncated (begun before the record began; "
                "truncated=True keeps them)"
            )
        if self.dropped:
            out.append(f"{self.dropped} of zero length")
        return text + "; left out: " + (", ".join(out) if out else "none")

    @property
    def best(self) -> FamilyFit:
        return self.fits[0]

    @property
    def law(self) -> Distribution:
        """The best family's law."""
        return self.fits[0].law

    def __getitem__(self, key: int | str) -> FamilyFit:
        if isinstance(key, str):
            for f in self.fits:
                if f.family == key:
                    return f
            if key in self.failed:
                raise KeyError(f"family {key!r} could not be fitted: {self.failed[key]}")
            raise KeyError(f"no fit of family {key!r} (fitted: {[f.family for f in self.fits]})")
        return self.fits[key]

    def __iter__(self) -> Iterator[FamilyFit]:
        return iter(self.fits)

    def __len__(self) -> int:
        return len(self.fits)

    def table(self) -> str:
        """The ranked fits as a Markdown table (times in hours)."""
        pct = round(100 * self.fits[0].level)
        lines = [
            f"| family | parameters ({pct}% CI) | log L | AIC | dAIC | KS |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for f in self.fits:
            ps = []
            for name, v in f.params.items():
                lo, hi = f.ci[name]
                scale = 3600.0 if name in ("mean", "scale") else 1.0
                unit = " h" if scale != 1.0 else ""
                if name == "mu":  # of log seconds: show e^mu in hours
                    ps.append(
                        f"e^mu = {math.exp(v) / 3600:.4g} h "
                        f"[{math.exp(lo) / 3600:.4g}, {math.exp(hi) / 3600:.4g}]"
                    )
                    continue
                ps.append(f"{name} = {v / scale:.4g}{unit} [{lo / scale:.4g}, {hi / scale:.4g}]")
            lines.append(
                f"| {f.family} | {'; '.join(ps)} | {f.loglik:.1f} | {f.aic:.1f} | "
                f"{f.delta_aic:.1f} | {f.ks:.3f} |"
            )
        for family, reason in self.failed.items():
            lines.append(f"| {family} | failed: {reason.replace('|', '/')} | | | | |")
        return "\n".join(lines)

    def __repr__(self) -> str:
        extra = f", partial: {self.note}" if self.partial else ""
        if self.failed:
            extra += f"; failed: {', '.join(self.failed)}"
        return (
            f"Fit(by={self.by!r}, {self.samples} samples, {self.failures} failures; "
            f"best {self.best!r}{extra})"
        )


#: What a family's fit may raise when the family cannot fit the samples
#: (reported in ``Fit.failed``; anything else is a bug and propagates).
_FIT_ERRORS = (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError)


def _fit_family(
    family: str,
    t: FloatArray,
    cens: BoolArray,
    z: float,
    level: float,
    km: tuple[FloatArray, FloatArray, FloatArray],
) -> FamilyFit:
    """One family fitted to the censored samples (unranked); a ValueError,
    ArithmeticError or RuntimeError when it cannot be."""
    names = FAMILIES[family]
    p = _mle(family, t, cens)
    ll = _loglik(family, p, t, cens)
    if not (math.isfinite(ll) and all(math.isfinite(v) for v in p)):
        fitted = ", ".join(f"{n}={v!r}" for n, v in zip(names, p, strict=True))
        raise ValueError(f"the fit did not converge ({fitted}, log-likelihood {ll!r})")
    law = _law(family, p)

    def nll(x: FloatArray) -> float:
        return -_loglik(family, _from_free(names, x), t, cens)

    x = _to_free(names, p)
    if family == "exponential":
        cov = np.array([[1.0 / np.count_nonzero(~cens)]])
    else:
        hess = _hessian(nll, x)
        try:
            cov = np.linalg.inv(hess)
        except np.linalg.LinAlgError:  # pragma: no cover
            cov = np.full((len(names), len(names)), math.nan)
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    ci = {}
    for i, n in enumerate(names):
        lo, hi = x[i] - z * se[i], x[i] + z * se[i]
        ci[n] = (_exp(lo), _exp(hi)) if n in _POSITIVE else (float(lo), float(hi))
    km_t, km_before, km_after = km
    cdf = np.asarray(law.cdf(km_t), np.float64)
    ks = float(np.max(np.maximum(np.abs(1.0 - km_before - cdf), np.abs(1.0 - km_after - cdf))))
    return FamilyFit(
        family=family,
        params=dict(zip(names, p, strict=True)),
        ci=ci,
        se={n: float(s) for n, s in zip(names, se, strict=True)},
        loglik=ll,
        aic=2.0 * len(names) - 2.0 * ll,
        ks=ks,
        level=level,
    )


def _exp(x: float) -> float:
    """``exp(x)``, inf where it overflows (a confidence bound beyond a float)."""
    return math.exp(x) if x < _LOG_MAX else math.inf


_LOG_MAX = math.log(np.finfo(np.float64).max)


def _reason(exc: BaseException) -> str:
    """A failed family's reason: the error's message (its type too when it
    is not a ValueError, whose messages name what went wrong)."""
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def fit_samples(
    samples: npt.ArrayLike,
    censored: npt.ArrayLike | None = None,
    families: Sequence[str] = tuple(FAMILIES),
    level: float = 0.95,
) -> tuple[tuple[FamilyFit, ...], int, dict[str, str]]:
    """Fit ``families`` to censored samples: the ranked fits, the number of
    zero-length samples left out, and each family that could not be fitted
    with the reason (a ValueError naming every family's reason when none
    can be)."""
    t_all = np.asarray(samples, np.float64)
    c_all = np.zeros(t_all.size, bool) if censored is None else np.asarray(censored, bool)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families:
        raise ValueError(f"families must be some of {tuple(FAMILIES)}, got {tuple(families)!r}")
    level = finite("level", level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    keep = t_all > 0.0
    t, cens = t_all[keep], c_all[keep]
    if np.count_nonzero(~cens) < 2:
        raise ValueError(
            f"fit: {int(np.count_nonzero(~cens))} failures among the samples; at least 2 needed"
        )
    z = float(_special.ndtri(np.array([0.5 + level / 2]), np.array([0.5 - level / 2]))[0])
    km = kaplan_meier(t, cens)
    out: list[FamilyFit] = []
    failed: dict[str, str] = {}
    for family in families:
        try:
            with np.errstate(all="ignore"):
                out.append(_fit_family(family, t, cens, z, level, km))
        except _FIT_ERRORS as exc:
            failed[family] = _reason(exc)
    if not out:
        reasons = "; ".join(f"{f}: {r}" for f, r in failed.items())
        raise ValueError(f"fit: no family could be fitted to the samples ({reasons})")
    out.sort(key=lambda f: f.aic)
    best = out[0].aic
    ranked = tuple(dataclasses.replace(f, delta_aic=f.aic - best) for f in out)
    return ranked, int(np.count_nonzero(~keep)), failed


def default_by(h: History) -> str:
    """The intervals :meth:`History.fit` uses by default: node samples when
    complete, else job samples, else node (partial), else the system's gaps."""
    have = h.available_intervals
    if "node" in have and not h.intervals("node").partial:
        return "node"
    for by in ("job", "node", "system"):
        if by in have:
            return by
    raise ValueError(f"this {h.format} history has no inter-failure samples to fit")


def fit_history(
    h: History,
    by: str | Intervals | None = None,
    families: Sequence[str] = tuple(FAMILIES),
    *,
    cause: str | None = None,
    level: float = 0.95,
    truncated: bool = False,
) -> Fit:
    """:meth:`History.fit`."""
    from ._model import Intervals

    if isinstance(by, Intervals):
        iv = by
    else:
        iv = h.intervals(default_by(h) if by is None else by)
    label = ""
    if iv.by == "cause":
        if cause is None:
            raise ValueError(f"by='cause' needs cause= one of {iv.labels}")
        iv, label = iv.of(cause), cause
    elif cause is not None:
        raise ValueError("cause= goes with by='cause'")
    left_truncated = 0
    if not truncated:
        left_truncated = int(np.count_nonzero(iv.truncated))
        iv = iv.select(~iv.truncated)
    fits, dropped, failed = fit_samples(iv.samples, iv.censored, families, level)
    return Fit(
        fits=fits,
        by=iv.by,
        clock=iv.clock,
        samples=len(iv) - dropped,
        failures=int(np.count_nonzero(~iv.censored & (iv.samples > 0))),
        dropped=dropped,
        partial=iv.partial,
        note=iv.note,
        label=label,
        failed=failed,
        left_truncated=left_truncated,
    )


# ---------------------------------------------------------------------------
# burstiness


@dataclass(frozen=True)
class Burstiness:
    """How bursty the failures are (from :meth:`History.burstiness`).

    ``gaps``: the uncensored inter-failure gaps in time order (within each
    group, groups one after the other); ``cv`` their coefficient of
    variation (1 for a Poisson process, above 1 bursty); ``acf`` the
    autocorrelation of successive gaps at lags 1, 2, ... (pairs within one
    group), ``lag1`` its first value, ``bound`` the ``2 / sqrt(n)`` band an
    uncorrelated sequence stays within; ``block`` the suggested
    :class:`acesim.BlockBootstrap` block: the first lag whose
    autocorrelation is inside the band (1 when successive gaps look
    independent). :attr:`law` is that block bootstrap of ``gaps``.
    """

    by: str
    gaps: FloatArray = field(repr=False)
    cv: float
    lag1: float
    acf: tuple[float, ...]
    bound: float
    block: int

    @property
    def law(self) -> Distribution:
        from ..distributions import BlockBootstrap

        return BlockBootstrap(self.gaps, self.block)


def burstiness(h: History, by: str | None = None, max_lag: int = 50) -> Burstiness:
    """:meth:`History.burstiness`."""
    max_lag = integer("max_lag", max_lag, minimum=1)
    if by is None:
        have = h.available_intervals
        by = "system" if "system" in have else default_by(h)
    iv = h.intervals(by)
    seqs: list[FloatArray] = []
    for g in np.unique(iv.group).tolist():
        m = (iv.group == g) & ~iv.censored
        order = np.argsort(iv.start[m], kind="stable")
        seqs.append(iv.samples[m][order])
    gaps = np.concatenate(seqs) if seqs else np.zeros(0)
    if gaps.size < 3:
        raise ValueError(f"burstiness: {gaps.size} gaps; at least 3 needed")
    mean = float(np.mean(gaps))
    var = float(np.var(gaps))
    cv = math.sqrt(var) / mean if mean > 0 else math.nan
    acf: list[float] = []
    for lag in range(1, min(max_lag, gaps.size // 2) + 1):
        num, cnt = 0.0, 0
        for s in seqs:
            if s.size > lag:
                d = s - mean
                num += float(np.sum(d[:-lag] * d[lag:]))
                cnt += s.size - lag
        acf.append(num / cnt / var if cnt and var > 0 else 0.0)
    bound = 2.0 / math.sqrt(gaps.size)
    block = next((lag for lag, r in enumerate(acf, 1) if abs(r) < bound), len(acf) + 1)
    block = 1 if acf and abs(acf[0]) < bound else block
    return Burstiness(
        by=by,
        gaps=gaps,
        cv=cv,
        lag1=acf[0] if acf else math.nan,
        acf=tuple(acf),
        bound=bound,
        block=max(1, min(block, gaps.size)),
    )


# ---------------------------------------------------------------------------
# lemons

LEMON_DTYPE = np.dtype(
    [
        ("node", "U64"),
        ("failures", "<i8"),
        ("exposure", "<f8"),
        ("expected", "<f8"),
        ("ratio", "<f8"),
        ("p", "<f8"),
        ("lemon", "?"),
    ]
)


@dataclass(frozen=True)
class Lemons:
    """Per-node over-dispersion against a common failure rate (from
    :meth:`History.lemons`).

    ``rate``: the fleet's common rate (failures per second of exposure);
    ``nodes`` (:data:`LEMON_DTYPE`): per node its failures, exposure,
    expected failures at the common rate, their ratio and ``p``, the
    Poisson probability of at least that many failures; ``dispersion``:
    Pearson's chi-square over its degrees of freedom (about 1 when every
    node fails at the common rate, larger with lemons) and ``p_value`` its
    chi-square tail; ``flagged``: nodes whose ``p`` is below ``alpha`` over
    the number of nodes (Bonferroni). The Poisson reference holds for an
    exponential law; a Weibull of shape below 1 is over-dispersed by itself
    (and above 1 under-dispersed), so read ``dispersion`` with the fit's
    shape in mind. ``partial`` and ``note`` as the node intervals say.
    """

    rate: float
    nodes: npt.NDArray[Any] = field(repr=False)
    dispersion: float
    p_value: float
    flagged: tuple[str, ...]
    alpha: float
    partial: bool = False
    note: str = ""


def lemons(h: History, alpha: float = 0.01) -> Lemons:
    """:meth:`History.lemons`."""
    alpha = finite("alpha", alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    iv = h.intervals("node")
    groups = np.unique(iv.group)
    fails = np.array([np.count_nonzero(~iv.censored[iv.group == g]) for g in groups], np.int64)
    expo = np.array([float(np.sum(iv.samples[iv.group == g])) for g in groups])
    keep = expo > 0
    groups, fails, expo = groups[keep], fails[keep], expo[keep]
    n = groups.size
    if n < 2 or fails.sum() == 0:
        raise ValueError("lemons: needs failures on at least two nodes with exposure")
    rate = float(fails.sum() / expo.sum())
    expected = rate * expo
    chi2 = float(np.sum((fails - expected) ** 2 / expected))
    dof = n - 1
    p_value = float(_special.gamma_pq(dof / 2.0, np.array([chi2 / 2.0]))[1][0])
    p = np.ones(n)
    for i in range(n):
        if fails[i] > 0:
            p[i] = float(_special.gamma_pq(float(fails[i]), np.array([expected[i]]))[0][0])
    flag = p < alpha / n
    table = np.zeros(n, LEMON_DTYPE)
    table["node"] = [iv.labels[int(g)] for g in groups]
    table["failures"] = fails
    table["exposure"] = expo
    table["expected"] = expected
    table["ratio"] = fails / expected
    table["p"] = p
    table["lemon"] = flag
    return Lemons(
        rate=rate,
        nodes=table,
        dispersion=chi2 / dof,
        p_value=p_value,
        flagged=tuple(str(s) for s in table["node"][flag]),
        alpha=alpha,
        partial=iv.partial,
        note=iv.note,
    )


# ---------------------------------------------------------------------------
# to_model


def _recorded_gpus_per_node(h: History) -> int | None:
    """The most GPUs per node a run of the history used (None: no run says)."""
    if h.runs.size and h.run_nodes.size:
        counts = np.bincount(h.run_nodes["run"], minlength=int(h.runs["run"].max()) + 1)
        per = [
            int(r["gpus"]) // int(counts[int(r["run"])])
            for r in h.runs
            if counts[int(r["run"])] > 0 and int(r["gpus"]) > 0
        ]
        if per:
            return max(1, max(per))
    return None


def fleet_size(h: History) -> tuple[int, int]:
    """``(nodes, gpus_per_node)`` as the history records them (1 node and 8
    GPUs per node where it does not say)."""
    gpn = _recorded_gpus_per_node(h)
    return max(len(h.node_names), 1), 8 if gpn is None else gpn


def _latency_law(lat: FloatArray) -> Distribution:
    from ..distributions import Constant, Empirical

    return Constant(float(lat[0])) if np.all(lat == lat[0]) else Empirical(lat)


def _latencies(h: History) -> tuple[FloatArray, FloatArray]:
    """Each run's detection latency (its end minus its fault time) and
    whether the source records it (a finite fault time, a latency >= 0)."""
    runs = h.runs
    latency = runs["end"] - runs["fault"]
    ok = np.isfinite(runs["fault"]) & np.isfinite(latency) & (latency >= 0)
    return latency, ok


def _with_detection(h: History, causes: tuple[Any, ...]) -> list[Any] | None:
    """The causes with the detection latency the history shows (a failed
    run's end minus its fault time, where the source records faults), each
    cause its own (from the runs its failures ended; the pooled latencies
    for a cause that ended none): a Constant when every latency is the
    same, else an Empirical of them."""
    from ..fleet import Cause

    runs = h.runs
    latency, ok = _latencies(h)
    lat = latency[ok]
    if lat.size == 0 or float(lat.max()) <= 0.0:
        return list(causes) or None
    pooled = _latency_law(lat)
    if not causes:
        return [Cause("failure", 1.0, detect=pooled)]
    f = h.failures[h.failures["origin"] & (h.failures["run"] >= 0)]
    cause_of_run = dict(zip(f["run"].tolist(), f["cause"].tolist(), strict=True))
    run_cause = np.array([cause_of_run.get(int(r), -1) for r in runs["run"]], np.int64)
    out = []
    for c in causes:
        code = h.cause_names.index(c.name) if c.name in h.cause_names else -1
        own = latency[ok & (run_cause == code)] if code >= 0 else lat[:0]
        detect = _latency_law(own) if own.size else pooled
        fresh = Cause(
            c.name,
            c.share,
            detect=detect,
            node_down=c.node_down,
            nodes=c.nodes,
            scope=c.scope,
            slowdown=c.slowdown,
        )
        out.append(fresh)
    return out


class FittedModel(dict[str, Any]):
    """The ``simulate`` keyword arguments :meth:`History.to_model` fits (a
    dict: index it, pass it as ``**model``), with :attr:`defaults`: each
    value it filled from a default rather than from the history, by its
    scenario key path (``"fleet.repair"``, ``"fleet.node_start"``,
    ``"causes[0].detect"``, ...), as :meth:`History.to_model` set it."""

    defaults: dict[str, Any]

    def __init__(self, arguments: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
        super().__init__(arguments)
        #: the values not from the history, by key path (see the class doc)
        self.defaults = dict(defaults)

    def __repr__(self) -> str:
        return f"FittedModel({dict.__repr__(self)}, defaults={self.defaults!r})"


def to_model(
    h: History,
    by: str | None = None,
    family: str | None = None,
) -> FittedModel:
    """:meth:`History.to_model`."""
    from ..fleet import Cause, Fleet

    if family is not None:
        if not isinstance(family, str):
            raise TypeError(
                f"family must be one of {tuple(FAMILIES)} or None, got {type(family).__name__}"
            )
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {tuple(FAMILIES)} or None, got {family!r}")
    by_ = default_by(h) if by is None else by
    if by_ not in ("node", "job"):
        raise ValueError(f"to_model: by must be 'node' or 'job', got {by_!r}")
    fits = fit_history(h, by_)
    if family in fits.failed:
        raise ValueError(f"family: {family!r} could not be fitted: {fits.failed[family]}")
    law = fits[family].law if family is not None else fits.law
    nodes, gpn = fleet_size(h)
    defaults: dict[str, Any] = {}
    if not h.node_names:
        defaults["fleet.nodes"] = nodes
    if _recorded_gpus_per_node(h) is None:
        defaults["fleet.gpus_per_node"] = gpn
    repair: Distribution | None = None
    out_of_service = h.node_spells[h.node_spells["failure"]]
    ended = out_of_service[np.isfinite(out_of_service["up"])]
    if ended.size:
        repair = Exponential(max(float(np.mean(ended["up"] - ended["down"])), 1.0))
    causes = _with_detection(h, h.causes())
    if not out_of_service.size:
        # No failure of the record took a node out of service (a source that
        # names no nodes, or records no spells: sacct): no cause takes one
        # down, so no repair law is drawn and a back-test restarts a job
        # after the recorded gaps.
        causes = [
            Cause(
                c.name,
                c.share,
                detect=c.detect,
                node_down=False,
                nodes=c.nodes,
                slowdown=c.slowdown,
            )
            for c in (causes or [Cause("failure", 1.0)])
        ]
    if by_ == "node":
        fleet = Fleet(nodes, gpus_per_node=gpn, repair=repair, node_failures=law)
        arguments: dict[str, Any] = {"failures": None, "fleet": fleet, "causes": causes}
    else:
        fleet = Fleet(nodes, gpus_per_node=gpn, repair=repair)
        arguments = {"failures": law, "fleet": fleet, "causes": causes}
    if repair is None:
        defaults["fleet.repair"] = fleet.repair
    defaults["fleet.node_start"] = fleet.node_start
    if causes is None:
        defaults["causes"] = None
    elif not np.any(_latencies(h)[1]):
        for k, c in enumerate(causes):
            defaults[f"causes[{k}].detect"] = c.detect
    return FittedModel(arguments, defaults)


# ---------------------------------------------------------------------------
# back-test

#: The buckets :meth:`History.backtest` compares (GPU-hours, and counts).
BACKTEST_BUCKETS = (
    "productive",
    "wasted",
    "ckpt_stall",
    "overhead",
    "detection",
    "recovery_wait",
    "failures",
    "restarts",
)

BACKTEST_DTYPE = np.dtype(
    [
        ("bucket", "U16"),
        ("measured", "<f8"),
        ("mean", "<f8"),
        ("lo", "<f8"),
        ("hi", "<f8"),
        ("rank", "<f8"),
        ("covered", "?"),
    ]
)


@dataclass(frozen=True)
class Backtest:
    """The recorded schedule replayed with the model's failures (from
    :meth:`History.backtest`).

    ``table`` (:data:`BACKTEST_DTYPE`): per bucket (GPU-hours; ``failures``
    and ``restarts`` counted), the measured value, the simulated mean, the
    ``level`` interval of the replicas (``lo``, ``hi``), ``rank`` the share
    of replicas below the measurement (0.5: in the middle) and whether the
    interval covers it; ``simulated`` every replica's values by bucket.
    """

    table: npt.NDArray[Any]
    simulated: dict[str, FloatArray] = field(repr=False)
    replicas: int
    level: float

    @property
    def covered(self) -> bool:
        """Whether every bucket's measurement is inside its interval."""
        return bool(np.all(self.table["covered"]))

    def markdown(self) -> str:
        pct = round(100 * self.level)
        lines = [
            f"| bucket | measured | simulated mean | {pct}% interval | rank |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in self.table:
            lines.append(
                f"| {r['bucket']} | {r['measured']:.4g} | {r['mean']:.4g} | "
                f"[{r['lo']:.4g}, {r['hi']:.4g}] | {r['rank']:.2f} |"
            )
        return "\n".join(lines)


def recorded_jobs(
    h: History, gpus_per_node: int, checkpoint_interval: float
) -> tuple[list[Any], list[tuple[int, list[int], float]]]:
    """The history's jobs as :class:`acesim.Job` (work: the productive time
    when known, else the time kept at checkpoints, else the time held, and
    for a job unfinished at the end of the record that plus twice the
    record's span, so the replay cannot finish it early;
    checkpoint interval: the median gap between the job's checkpoints less
    their median write; for a job without checkpoints in a source that
    records them, its work (it restarts from scratch); else
    ``checkpoint_interval``; save: that median write; init: the median
    setup of its runs, load 0) and its runs as :func:`replay_schedule` rows.

    A source that names no nodes (Philly) gets dedicated ones: each job its
    own ``ceil(gpus / gpus_per_node)`` nodes, numbered in the order of the
    jobs' first starts, and a job of the recorded GPU count."""
    from ..job import Job

    m = h.measured().jobs
    runs = h.runs[np.argsort(h.runs["start"], kind="stable")]
    rows: list[tuple[int, list[int], float]] = []
    first_nodes: dict[int, int] = {}
    gpus_of: dict[int, int] = {}
    nodeless = h.runs.size > 0 and h.run_nodes.size == 0
    dedicated: dict[int, list[int]] = {}
    for r in runs:
        j = int(r["job"])
        if nodeless:
            gpus = int(r["gpus"])
            if gpus <= 0:
                raise ValueError(
                    f"backtest: job {h.job_names[j]!r} has no GPU count and no nodes to place it on"
                )
            if j not in dedicated:
                base = sum(len(v) for v in dedicated.values())
                dedicated[j] = list(range(base, base + -(-gpus // gpus_per_node)))
            nodes = dedicated[j]
            gpus_of.setdefault(j, gpus)
        else:
            nodes = h.run_nodes["node"][h.run_nodes["run"] == r["run"]].tolist()
            if not nodes or min(nodes) < 0:
                continue
        first_nodes.setdefault(j, len(nodes))
        rows.append((j, [int(n) for n in nodes], float(r["start"])))
    records_checkpoints = "checkpoints" in h.knows
    span = h.span[1] - h.span[0] if all(math.isfinite(t) for t in h.span) else math.inf
    jobs: dict[int, Any] = {}
    for j in sorted(first_nodes):
        row = m[m["job"] == j][0]
        work = max(
            next(
                (float(row[b]) for b in ("productive", "kept", "held") if math.isfinite(row[b])),
                0.0,
            ),
            1.0,
        )
        if not row["completed"] and math.isfinite(span):
            # Unfinished when the record ends: its work is more than it did,
            # and the replay must not finish it early for want of work.
            work += 2.0 * span
        ck = h.checkpoints["time"][h.checkpoints["job"] == j]
        dur = h.checkpoints["duration"][h.checkpoints["job"] == j]
        dur = dur[np.isfinite(dur)]
        save = float(np.median(dur)) if dur.size else 0.0
        if ck.size >= 2:
            interval = max(float(np.median(np.diff(np.sort(ck)))) - save, 1.0)
        elif ck.size == 0 and records_checkpoints:
            interval = work
        else:
            interval = max(checkpoint_interval - save, 1.0)
        setup = h.runs["setup"][h.runs["job"] == j]
        setup = setup[np.isfinite(setup)]
        jobs[j] = Job(
            gpus_of.get(j, first_nodes[j] * gpus_per_node),
            work=work,
            checkpoint_interval=interval,
            init=float(np.median(setup)) if setup.size else 0.0,
            save=save,
            load=0.0,
        )
    return [jobs[j] for j in sorted(jobs)], [
        (sorted(jobs).index(j), nodes, start) for j, nodes, start in rows if j in jobs
    ]


def restart_gaps(h: History) -> FloatArray:
    """The recorded scheduler's restart delays: from the end of each run a
    failure interrupted to the start of the job's next run."""
    runs = h.runs[np.lexsort((h.runs["start"], h.runs["job"]))]
    if runs.size < 2:
        return np.zeros(0)
    same = runs["job"][1:] == runs["job"][:-1]
    failed = np.isin(runs["run"][:-1], h.failures["run"])
    gaps = (runs["start"][1:] - runs["end"][:-1])[same & failed]
    return np.asarray(gaps[np.isfinite(gaps)], np.float64)


def _takes_nodes_down(model: dict[str, Any]) -> bool:
    """Whether a failure of the model can take a node out of service: one
    of a cause with ``node_down`` (every failure when the model names no
    causes), a node's failure as a job's (the engine sends a node struck by
    a cause without ``node_down`` to no repair)."""
    causes = model.get("causes")
    return causes is None or any(c.node_down for c in causes)


def _simulated(rj: npt.NDArray[Any], bucket: str) -> float:
    if bucket in ("failures", "restarts"):
        return float(np.sum(rj[bucket]))
    if bucket in ("kept", "lost"):
        lost = rj["wasted"] + rj["detection"]
        held = sum(rj[b] for b in ("productive", "wasted", "ckpt_stall", "overhead", "detection"))
        value = lost if bucket == "lost" else held - lost
        return float(np.sum(value * rj["gpus"])) / 3600.0
    return float(np.sum(rj[bucket] * rj["gpus"])) / 3600.0


def backtest(
    h: History,
    model: dict[str, Any] | None,
    replicas: int,
    *,
    level: float = 0.9,
    seed: int = 0,
    checkpoint_interval: float = 3600.0,
    restart_delay: Any = "measured",
    progress: bool = False,
) -> Backtest:
    """:meth:`History.backtest`."""
    from ..distributions import Empirical
    from ..exports import replay_schedule
    from ..fleet import Fleet
    from ..sweep import progress_bar, progress_flag

    replicas = integer("replicas", replicas, minimum=1)
    progress_flag(progress)
    level = finite("level", level)
    if not 0.0 < level <= 1.0:
        raise ValueError(f"level must be in (0, 1], got {level!r}")
    seed = integer("seed", seed, minimum=0, maximum=2**64 - 1)
    checkpoint_interval = seconds("checkpoint_interval", checkpoint_interval, positive=True)
    if model is not None:
        if not isinstance(model, Mapping):
            raise TypeError(
                "model must be a dict of simulate keyword arguments (as to_model() gives) "
                f"or None, got {type(model).__name__}"
            )
        if "fleet" not in model:
            raise ValueError("model must hold the Fleet under 'fleet' (as to_model() gives)")
        if not isinstance(model["fleet"], Fleet):
            raise TypeError(f"model['fleet'] must be a Fleet, got {type(model['fleet']).__name__}")
    if model is None:
        model = to_model(h)
    fleet = model["fleet"]
    jobs, schedule = recorded_jobs(h, fleet.gpus_per_node, checkpoint_interval)
    if not schedule:
        raise ValueError("backtest: this history has no runs with known nodes to replay")
    if h.run_nodes.size == 0:
        if fleet.node_failures is not None:
            raise ValueError(
                "backtest: this history names no nodes; its model cannot have node_failures"
            )
        needed = 1 + max(max(nodes) for _, nodes, _ in schedule)
        fleet = dataclasses.replace(fleet, nodes=max(needed, fleet.nodes))
    if isinstance(restart_delay, str):
        if restart_delay != "measured":
            raise ValueError(
                f"restart_delay must be 'measured', a law or None, got {restart_delay!r}"
            )
        gaps = restart_gaps(h)
        restart_delay = (
            Empirical(gaps)
            if gaps.size and not _takes_nodes_down(model) and gaps.max() > 0
            else None
        )
    keys = sorted({j for j, _, _ in schedule})
    measured = h.measured()
    mj = measured.jobs
    have = set(measured.available) | {"failures", "restarts"}
    want = [b for b in BACKTEST_BUCKETS if b in have]
    if "productive" not in have:
        want += [b for b in ("kept", "lost") if b in have]
    meas: dict[str, float] = {}
    for b in want:
        if b in ("failures", "restarts"):
            meas[b] = float(np.sum(mj[np.isin(mj["job"], keys)][b]))
        else:
            meas[b] = float(np.nansum(mj[b] * mj["gpus"])) / 3600.0
    sims: dict[str, list[float]] = {b: [] for b in want}
    horizon = h.span[1] if math.isfinite(h.span[1]) else math.inf
    bar = progress_bar(progress_flag(progress), replicas, desc="backtest", unit="replica")
    try:
        for k in range(replicas):
            res = replay_schedule(
                schedule,
                jobs,
                fleet,
                model.get("failures"),
                model.get("causes"),
                seed=seed,
                replica=k,
                horizon=horizon,
                restart="free",
                restart_delay=restart_delay,
            )
            for b in want:
                sims[b].append(_simulated(res.jobs, b))
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    table = np.zeros(len(want), BACKTEST_DTYPE)
    q = (1.0 - level) / 2.0
    for i, b in enumerate(want):
        v = np.asarray(sims[b])
        lo, hi = np.quantile(v, [q, 1.0 - q])
        x = meas[b]
        table[i] = (
            b,
            x,
            float(np.mean(v)),
            lo,
            hi,
            float((np.count_nonzero(v < x) + 0.5 * np.count_nonzero(v == x)) / v.size),
            lo <= x <= hi,
        )
    return Backtest(
        table=table,
        simulated={b: np.asarray(v) for b, v in sims.items()},
        replicas=replicas,
        level=level,
    )
