"""Reading a history file into numbered lines, and the checks readers share."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from .._validation import NO_SUCH_FILE, input_file_problem, repeated_column
from ._errors import HistoryFormatError

__all__ = [
    "PathArg",
    "canonical_header",
    "check_path",
    "csv_rows",
    "missing_columns",
    "read_lines",
]

PathArg = str | os.PathLike[str]

#: Lines longer than this are taken for garbage (a binary file, a lost newline).
MAX_LINE = 1 << 20


def check_path(name: str, value: object) -> PathArg:
    """``value`` if it is a file path (a str or an :class:`os.PathLike` of
    one); else a TypeError naming the parameter ``name``."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        try:
            text = os.fspath(value)
        except TypeError:
            text = None
        if isinstance(text, str):
            return value
    raise TypeError(f"{name} must be a path (a str or os.PathLike), got {type(value).__name__}")


def read_lines(path: PathArg, name: str = "path") -> list[tuple[int, str]]:
    """The file's non-blank lines as (1-based line number, text without the
    line end). TypeError (naming the parameter ``name``) when ``path`` is not
    a path; OSError when it cannot be opened; HistoryFormatError when it is
    not UTF-8 text, is empty or has an absurdly long line, or is not a
    regular file (a directory, a FIFO, a device)."""
    problem = input_file_problem(check_path(name, path))
    if problem is not None and problem != NO_SUCH_FILE:
        raise HistoryFormatError(path, None, None, f"{problem}, not a history file")
    data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = data.count(b"\n", 0, exc.start) + 1
        raise HistoryFormatError(path, where, None, "not UTF-8 text") from None
    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if len(line) > MAX_LINE:
            raise HistoryFormatError(path, number, None, f"line longer than {MAX_LINE} characters")
        if line.strip():
            out.append((number, line))
    if not out:
        raise HistoryFormatError(path, None, None, "the file is empty")
    return out


def canonical_header(
    header: Sequence[str], aliases: Mapping[str, Sequence[str]] | None
) -> list[str]:
    """``header`` with every column named by one of its accepted aliases
    (``aliases``: column -> other names, matched without regard to case)
    renamed to the column, unless the file also has the column itself."""
    if not aliases:
        return list(header)
    present = set(header)
    out: list[str] = []
    for h in header:
        target = h
        if h not in aliases:
            low = h.lower()
            for column, others in aliases.items():
                if column not in present and low in (column, *(o.lower() for o in others)):
                    target = column
                    break
        out.append(target)
    return out


def missing_columns(
    missing: Sequence[str],
    expects: Mapping[str, str] | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
    noun: str = "column",
) -> str:
    """The one sentence naming every missing column (or key: ``noun``), what
    each holds (``expects``) and the other names it may have (``aliases``)."""
    parts = []
    for column in missing:
        notes = []
        if expects and column in expects:
            notes.append(expects[column])
        if aliases and aliases.get(column):
            notes.append(f"also read from a {noun} named " + " or ".join(aliases[column]))
        parts.append(f"{column!r}" + (f" ({'; '.join(notes)})" if notes else ""))
    return f"missing {noun}{'s' if len(missing) > 1 else ''} {', '.join(parts)}"


def csv_rows(
    path: PathArg,
    required: Sequence[str] | Callable[[list[str]], Sequence[str]],
    name: str = "path",
    *,
    aliases: Mapping[str, Sequence[str]] | None = None,
    expects: Mapping[str, str] | None = None,
) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """A CSV file with a header: (header, rows as (line number, {column: text})).
    Every column in ``required`` (or in what it returns for the header) must
    be in the header, once; all those missing are named in one error, with
    what each holds (``expects``) and its other names (``aliases``: a header
    column named by an alias is read as the column). ``name``: the parameter
    that gave ``path``, for the error when it is not a path."""
    lines = read_lines(path, name)
    header_line, header_text = lines[0]
    try:
        header = next(csv.reader([header_text]))
    except csv.Error as exc:
        raise HistoryFormatError(path, header_line, None, f"bad CSV header: {exc}") from None
    header = canonical_header([h.strip() for h in header], aliases)
    needed = required(header) if callable(required) else required
    missing = [column for column in needed if column not in header]
    if missing:
        raise HistoryFormatError(
            path,
            header_line,
            missing[0],  # the first; the reason names them all
            f"{missing_columns(missing, expects, aliases)} (the header has {', '.join(header)})",
        )
    twice = repeated_column(header)
    if twice is not None:
        raise HistoryFormatError(path, header_line, twice, "the header names this column twice")

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for number, text in lines[1:]:
            try:
                values = next(csv.reader([text]))
            except csv.Error as exc:
                raise HistoryFormatError(path, number, None, f"bad CSV: {exc}") from None
            if len(values) != len(header):
                raise HistoryFormatError(
                    path, number, None, f"{len(values)} fields, the header has {len(header)}"
                )
            yield number, dict(zip(header, values, strict=True))

    return header, rows()


def number(path: PathArg, line: int, field: str, text: str, *, minimum: float = 0.0) -> float:
    """A finite number >= minimum, or HistoryFormatError."""
    try:
        value = float(text)
    except ValueError:
        raise HistoryFormatError(path, line, field, f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < minimum or abs(value) > 1e12:
        raise HistoryFormatError(path, line, field, f"{text!r} is out of range")
    return value


def count(path: PathArg, line: int, field: str, text: str) -> int:
    """A non-negative integer, or HistoryFormatError."""
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 12:
        raise HistoryFormatError(path, line, field, f"{text!r} is not a count")
    return int(t)
