"""A distribution described once for two models: ``Law.sampler`` for the
independent references in ``tests/`` (a numpy draw, or a plain number for a
constant) and ``Law.ace()`` for acesim, with the same parametrisations
(Weibull(shape, scale), LogNormal(mu, sigma), Gamma(shape, scale),
Exponential(mean))."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import acesim as ace

__all__ = ["ZERO", "Law", "const", "exp_", "gamma", "lognormal", "weibull"]


@dataclass(frozen=True)
class Law:
    kind: str
    a: float
    b: float = 0.0

    @property
    def sampler(self) -> Any:
        k, a, b = self.kind, self.a, self.b
        if k == "const":
            return a  # the references take a plain number as a constant
        if k == "exp":
            return lambda g: g.exponential(a)
        if k == "weibull":
            return lambda g: b * g.weibull(a)
        if k == "lognormal":
            return lambda g: g.lognormal(a, b)
        if k == "gamma":
            return lambda g: g.gamma(a, b)
        raise ValueError(k)

    def ace(self) -> Any:
        k, a, b = self.kind, self.a, self.b
        if k == "const":
            return ace.Constant(a)
        if k == "exp":
            return ace.Exponential(a)
        if k == "weibull":
            return ace.Weibull(a, b)
        if k == "lognormal":
            return ace.LogNormal(a, b)
        if k == "gamma":
            return ace.Gamma(a, b)
        raise ValueError(k)


def const(x: float) -> Law:
    return Law("const", x)


def exp_(mean: float) -> Law:
    return Law("exp", mean)


def weibull(shape: float, scale: float) -> Law:
    return Law("weibull", shape, scale)


def lognormal(mu: float, sigma: float) -> Law:
    return Law("lognormal", mu, sigma)


def gamma(shape: float, scale: float) -> Law:
    return Law("gamma", shape, scale)


ZERO = Law("const", 0.0)
