"""Units: every duration in acesim is float64 seconds.

:func:`parse_duration` reads a duration written with a unit, as the command
line and the JSON-lines protocol (``acesim serve --stdio``) accept them:
``"7.9h"``, ``"30min"``, ``"2d"``, ``"1h30min"``, ``"90"`` (seconds).
"""

from __future__ import annotations

import math
import re

from ._validation import real

__all__ = ["DAY", "DURATION_UNITS", "HOUR", "MINUTE", "SECOND", "WEEK", "parse_duration"]

SECOND: float = 1.0
MINUTE: float = 60.0
HOUR: float = 3600.0
DAY: float = 86400.0
WEEK: float = 7 * DAY

#: The units :func:`parse_duration` accepts (lower case, as written here), in seconds.
DURATION_UNITS: dict[str, float] = {
    "ms": 1e-3,
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), SECOND),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), MINUTE),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), HOUR),
    **dict.fromkeys(("d", "day", "days"), DAY),
    **dict.fromkeys(("w", "week", "weeks"), WEEK),
}

_PART = re.compile(r"[ \t]*((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t]*([A-Za-z]*)")


def parse_duration(text: str | float, name: str = "duration") -> float:
    """Seconds in ``text``: a number of seconds (``3600``, ``"3600"``, a
    numpy number) or one or more numbers each followed by a unit (``"7.9h"``,
    ``"30 min"``, ``"2d"``, ``"1h30min"``); units are those of :data:`DURATION_UNITS`
    (lower case; ``m`` is minutes). Raises ``ValueError`` naming ``name`` for anything
    else, a negative number included.

    >>> parse_duration("1h30min")
    5400.0
    >>> parse_duration("7.9h")
    28440.0
    """
    if not isinstance(text, str):
        try:
            value = real(name, text)
        except TypeError:
            raise TypeError(
                f"{name} must be a number of seconds or a string such as '30min', "
                f"got {type(text).__name__}"
            ) from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number of seconds >= 0, got {text!r}")
        return value
    total, pos, parts = 0.0, 0, 0
    body = text.rstrip(" \t")
    while pos < len(body):
        m = _PART.match(body, pos)
        if m is None:
            break
        number, unit = m.group(1), m.group(2)
        if unit == "" and (parts or m.end() < len(body)):
            break  # a bare number only on its own
        if unit and unit not in DURATION_UNITS:
            break
        total += float(number) * DURATION_UNITS.get(unit, SECOND)
        pos, parts = m.end(), parts + 1
    if parts == 0 or pos < len(body) or not math.isfinite(total):
        raise ValueError(
            f"{name} must be a number of seconds or numbers with units "
            f"(s, min, h, d, w; e.g. '30min', '7.9h', '1h30min'), got {text!r}"
        )
    return total
