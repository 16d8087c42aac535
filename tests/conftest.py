"""Test-suite configuration.

Tests marked ``slow`` (the long statistical variants) are skipped unless
``ACESIM_SLOW_PROPERTIES=1`` is set; ``bash .ci/slow`` sets it and runs
``pytest -m slow``. The default run (``python -m pytest``) stays within its
ten-minute budget on two cores.
"""

from __future__ import annotations

import os

import pytest

SLOW = os.environ.get("ACESIM_SLOW_PROPERTIES") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SLOW:
        return
    skip = pytest.mark.skip(reason="slow: set ACESIM_SLOW_PROPERTIES=1 (bash .ci/slow)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
