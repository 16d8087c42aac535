"""Units: every duration in acesim is float64 seconds.

:func:`parse_duration` reads a duration written with a unit, as the command
line, scenario files and the JSON-lines protocol (``acesim serve --stdio``)
accept them: ``"7.9h"``, ``"30min"``, ``"2d"``, ``"1h30min"``, ``"1h 30min"``,
``"6H"``, ``"90"`` (seconds). It is the one grammar of durations.
"""

from __future__ import annotations

import math
import re

from ._validation import real

__all__ = [
    "DAY",
    "DURATION_PATTERN",
    "DURATION_UNITS",
    "HOUR",
    "MINUTE",
    "SECOND",
    "WEEK",
    "parse_duration",
]

SECOND: float = 1.0
MINUTE: float = 60.0
HOUR: float = 3600.0
DAY: float = 86400.0
WEEK: float = 7 * DAY

#: The units :func:`parse_duration` accepts, in seconds, as written here in
#: lower case (any case is read: ``"6H"`` is six hours; ``m`` is minutes).
DURATION_UNITS: dict[str, float] = {
    "ms": 1e-3,
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), SECOND),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), MINUTE),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), HOUR),
    **dict.fromkeys(("d", "day", "days"), DAY),
    **dict.fromkeys(("w", "week", "weeks"), WEEK),
}

_BLANK = "[ \\t]*"
_NUMBER = "(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: The sizes of the units, largest first: a duration's terms follow this order.
_SIZES = sorted(set(DURATION_UNITS.values()), reverse=True)


def _any_case(word: str) -> str:
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


def _term(size: float) -> str:
    names = sorted((u for u, s in DURATION_UNITS.items() if s == size), key=len, reverse=True)
    return f"(?:({_NUMBER}){_BLANK}(?:{'|'.join(map(_any_case, names))}){_BLANK})?"


#: The grammar of a duration string, as a regular expression that Python and
#: JSON Schema (ECMA 262) read alike: a bare number of seconds, or terms of a
#: number and a unit (any case, blanks allowed), each unit at most once and
#: from the largest to the smallest (``"1h30min"``, not ``"30min 1h"``).
#: Group k holds the number of the k-th size of :data:`DURATION_UNITS`.
DURATION_PATTERN = (
    f"^(?:{_BLANK}({_NUMBER}){_BLANK}|(?={_BLANK}[0-9.]){_BLANK}"
    + "".join(_term(size) for size in _SIZES)
    + ")$"
)
_DURATION = re.compile(DURATION_PATTERN)
_LOOSE = re.compile(f"{_BLANK}({_NUMBER}){_BLANK}([A-Za-z]+)")


def parse_duration(text: str | float, name: str = "duration") -> float:
    """Seconds in ``text``: a number of seconds (``3600``, ``"3600"``, a
    numpy number) or one or more numbers each followed by a unit (``"7.9h"``,
    ``"30 min"``, ``"2d"``, ``"1h30min"``, ``"1h 30min"``); units are those of
    :data:`DURATION_UNITS`, in any case (``m`` is minutes), each at most once
    and from the largest to the smallest. Raises ``ValueError`` naming
    ``name`` for anything else: a negative number, ``"30min 1h"``, ``"1h 1h"``,
    or an interval rule such as ``"young"`` (a rule, not a duration).

    >>> parse_duration("1h30min")
    5400.0
    >>> parse_duration("7.9h")
    28440.0
    >>> parse_duration("6H")
    21600.0
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
    m = _DURATION.fullmatch(text)
    if m is not None:
        bare, *terms = m.groups()
        total = (
            float(bare)
            if bare is not None
            else sum(float(t) * size for t, size in zip(terms, _SIZES, strict=True) if t)
        )
        if math.isfinite(total):
            return total
    raise ValueError(_refusal(text, name))


def _refusal(text: str, name: str) -> str:
    """Why ``text`` is not a duration, plainly where the reason is plain (an
    interval rule; units repeated or out of order)."""
    from .job import INTERVAL_RULES  # (job imports this module)

    if text.strip().lower() in INTERVAL_RULES:
        return (
            f"{name} must be a duration; {text.strip()!r} is an interval rule "
            "(a checkpoint_interval), not a duration"
        )
    plain = (
        f"{name} must be a number of seconds or numbers with units (s, min, h, d, w; "
        "e.g. '30min', '7.9h', '1h30min')"
    )
    sizes, pos = [], 0
    while pos < len(text):
        part = _LOOSE.match(text, pos)
        if part is None or part.group(2).lower() not in DURATION_UNITS:
            break
        sizes.append(DURATION_UNITS[part.group(2).lower()])
        pos = part.end()
    if pos == len(text) and len(sizes) > 1 and sizes != sorted(set(sizes), reverse=True):
        plain += ", each unit at most once and the largest first ('1h30min', not '30min 1h')"
    return f"{plain}, got {text!r}"
