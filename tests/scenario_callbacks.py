"""Module-level policy callbacks for the scenario tests (a scenario's
``on_failure = "scenario_callbacks:requeue_wide"`` imports them; pytest puts
``tests/`` on ``sys.path``)."""

from __future__ import annotations

from typing import Any

import acesim as ace


def requeue_wide(view: Any) -> ace.Replacement | None:
    """Requeue jobs of 16 GPUs or more; the policy's default for the rest."""
    return ace.Replacement.REQUEUE if view.gpus >= 16 else None


NOT_CALLABLE = 3


def builtin_placement(view: Any, candidates: Any) -> None:
    """A placement callback that leaves every choice to the built-in one."""
    return None
