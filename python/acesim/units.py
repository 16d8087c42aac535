"""Units: every duration in acesim is float64 seconds."""

from __future__ import annotations

SECOND: float = 1.0
MINUTE: float = 60.0
HOUR: float = 3600.0
DAY: float = 86400.0
