"""Timestamps and durations as the readers accept them."""

from __future__ import annotations

import calendar
import datetime as _dt
import math
import re

__all__ = [
    "format_timestamp",
    "parse_duration",
    "parse_time",
    "parse_timestamp",
    "to_posix",
]

#: Absolute times beyond this many seconds from 1970 are taken for garbage.
MAX_SECONDS = 1e12

#: Epoch seconds: digits with an optional fraction (no sign, no exponent).
_EPOCH = re.compile(r"\d{1,13}(?:\.\d{1,9})?", re.ASCII)
_ELAPSED = re.compile(r"(?:(\d{1,9})-)?(?:(\d{1,9}):)?(\d{1,9}):(\d{1,9})(\.\d{1,9})?", re.ASCII)


def to_posix(value: _dt.datetime) -> float:
    """Seconds since 1970-01-01 of a datetime; a naive one is read as UTC
    (Slurm prints local wall-clock time without a zone: a daylight-saving
    change shows up as a one-hour jump)."""
    if value.tzinfo is not None:
        return value.timestamp()
    return calendar.timegm(value.timetuple()) + value.microsecond * 1e-6


def from_posix(seconds: float) -> _dt.datetime:
    """The naive UTC datetime of POSIX seconds."""
    return _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)


def parse_time(text: str) -> tuple[float, bool]:
    """POSIX seconds of an ISO 8601 time (``datetime.fromisoformat``:
    ``2024-01-02T03:04:05``, a space for the ``T``, fractional seconds, date
    only, a zone as ``Z`` or ``+02:00``) or of epoch seconds (``1704164645``
    or ``1704164645.25``; ``SLURM_TIME_FORMAT=%s``), and whether the text gave
    a zone (epoch seconds count as zoned: they are UTC). A naive time is read
    as UTC. ValueError otherwise."""
    t = text.strip()
    if _EPOCH.fullmatch(t):
        seconds, zoned = float(t), True
    else:
        try:
            stamp = _dt.datetime.fromisoformat(t)
        except ValueError as exc:
            if t[:4].isascii() and t[:4].isdigit() and t[4:5] == "-":
                raise ValueError(f"{text!r} is not a valid time: {exc}") from None
            raise ValueError(
                f"{text!r} is not a time like 2024-01-02T03:04:05, 2024-01-02T03:04:05Z, "
                "2024-01-02T03:04:05+02:00 or epoch seconds"
            ) from None
        seconds, zoned = to_posix(stamp), stamp.tzinfo is not None
    if not abs(seconds) <= MAX_SECONDS:
        raise ValueError(f"{text!r} is too far from 1970")
    return seconds, zoned


def parse_timestamp(text: str) -> float:
    """POSIX seconds of :func:`parse_time`'s times. ValueError otherwise."""
    return parse_time(text)[0]


def format_timestamp(seconds: float) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of POSIX seconds, rounded to the second."""
    whole = math.floor(seconds + 0.5)
    return from_posix(float(whole)).strftime("%Y-%m-%dT%H:%M:%S")


def parse_duration(text: str) -> float:
    """Seconds of Slurm's ``[DD-[HH:]]MM:SS`` (``Elapsed``). ValueError otherwise."""
    m = _ELAPSED.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a duration like 1-02:03:04")
    days, hours, minutes, seconds, frac = m.groups()
    if days is not None and hours is None:
        raise ValueError(f"{text!r} is not a duration like 1-02:03:04")
    total = (
        int(days or 0) * 86400
        + int(hours or 0) * 3600
        + int(minutes) * 60
        + int(seconds)
        + (float(frac) if frac else 0.0)
    )
    if total > MAX_SECONDS:
        raise ValueError(f"{text!r} is too long")
    return float(total)


def format_duration(seconds: float) -> str:
    """Slurm's ``Elapsed`` form of a duration (whole seconds)."""
    total = max(0, math.floor(seconds + 0.5))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    core = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{core}" if days else core
