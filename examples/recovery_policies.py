"""Recovery policies for examples/custom_policy.toml (imported by its
``on_failure = "recovery_policies:wait_if_nearly_repaired"``)."""

from __future__ import annotations

from typing import Any

import acesim as ace


def wait_if_nearly_repaired(view: Any) -> ace.Replacement | None:
    """A wide job waits for its own node when the repair ends within 30
    minutes (no re-placement, no neighbour churn); every other failure gets
    the policy's default (a spare)."""
    if view.gpus >= 128 and view.repair_remaining <= 30 * ace.MINUTE:
        return ace.Replacement.WAIT_REPAIR
    return None
