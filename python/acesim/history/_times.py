"""Timestamps and durations as the readers accept them."""

from __future__ import annotations

import calendar
import datetime as _dt
import math
import re

__all__ = ["format_timestamp", "parse_duration", "parse_timestamp", "to_posix"]

#: Absolute times beyond this many seconds from 1970 are taken for garbage.
MAX_SECONDS = 1e12

_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?", re.ASCII
)
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


def parse_timestamp(text: str) -> float:
    """POSIX seconds of ``YYYY-MM-DDTHH:MM:SS`` (also with a space for the
    ``T``, without the seconds, or date only; fractional seconds allowed) or of
    a plain integer (``SLURM_TIME_FORMAT=%s``). ValueError otherwise."""
    if text.isascii() and text.isdigit() and len(text) <= 13:
        seconds = float(int(text))
    else:
        m = _ISO.fullmatch(text)
        if m is None:
            raise ValueError(f"{text!r} is not a time like 2024-01-02T03:04:05")
        year, month, day, hour, minute, second, frac = m.groups()
        try:
            stamp = _dt.datetime(
                int(year),
                int(month),
                int(day),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
            )
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a valid time: {exc}") from None
        seconds = to_posix(stamp) + (float(frac) if frac else 0.0)
    if not abs(seconds) <= MAX_SECONDS:
        raise ValueError(f"{text!r} is too far from 1970")
    return seconds


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
