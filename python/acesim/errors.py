"""The errors acesim raises for the faults a caller must be able to tell apart.

Each is a subclass of the built-in exception a caller would otherwise catch
(``ValueError`` or ``RuntimeError``), so ``except ValueError`` still works.
"""

from __future__ import annotations

__all__ = ["NoProgressError", "ReentrantCallError", "TooFewReplicasError", "UntrustedNameError"]


class UntrustedNameError(ValueError):
    """A name read from a file or a dict (a results file's provenance, a
    pickled callback) would resolve user code, and the caller did not pass
    ``trust=True``. The message names the refused name and the switch;
    ``name`` holds it."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        #: The refused name (None when not given).
        self.name = name


class NoProgressError(ValueError):
    """A run cannot make progress: a job was interrupted
    ``max_stalled_failures`` times in a row without a new durable checkpoint,
    or a replica reached the failure cap. The message names the job and the
    count."""


class ReentrantCallError(RuntimeError):
    """A policy callback called back into the :class:`~acesim.FleetModel`
    whose callback is running, or nested simulations deeper than the limit."""


class TooFewReplicasError(ValueError):
    """A one-sided claim (:mod:`acesim.testing`) asked of fewer replicas than
    :data:`acesim.stats.MIN_REPLICAS`, below which its confidence bound does
    not hold its level. The message names the minimum and the count."""
