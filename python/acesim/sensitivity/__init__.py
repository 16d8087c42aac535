"""Which knobs matter: global sensitivity analysis of a scenario's objective
over its dotted parameter paths (see :mod:`acesim.sensitivity.designs`)."""

from __future__ import annotations
