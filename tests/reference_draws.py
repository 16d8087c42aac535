"""Durations for the independent references (no acesim import): a law is
None (0 s), a plain number (a constant) or a callable drawing from the
numpy generator it is given."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["drawer"]


def drawer(law: Any, rng: np.random.Generator) -> Callable[[], float]:
    """A zero-argument callable giving successive durations of ``law``."""
    if law is None:
        return lambda: 0.0
    if callable(law):
        return lambda: float(law(rng))
    value = float(law)
    if not (value >= 0.0 and math.isfinite(value)):
        raise ValueError(f"a constant duration must be finite and >= 0, got {value!r}")
    return lambda: value
