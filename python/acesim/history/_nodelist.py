"""Slurm's compressed host lists: ``gpu[001-004,007]``, ``a[1-2],b3``.

A host list is a comma-separated list of entries; an entry is a name made of
literal text and bracketed ranges (``[1-3,7]``), each range expanding in
turn, left to right (``r[1-2]n[1-2]`` is ``r1n1 r1n2 r2n1 r2n2``). A range
bound keeps its zero padding: ``[08-10]`` gives ``08 09 10``. Names may hold
letters, digits and ``- _ .``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["NodeListError", "compress_nodelist", "expand_nodelist"]

#: More names than this in one list is taken for a garbled list, not a fleet.
MAX_NODES = 262_144
#: The most node names one history file may list in all (its runs' nodes).
MAX_TOTAL_NODES = 16_000_000

_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]+")
_ITEM = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?", re.ASCII)
_TRAILING_DIGITS = re.compile(r"^(.*?)(\d+)$", re.ASCII)


class NodeListError(ValueError):
    """A host list that is not in Slurm's compressed form."""


def _split_top(text: str) -> list[str]:
    """Split at the commas outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise NodeListError(f"nested '[' at column {i + 1}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise NodeListError(f"']' without '[' at column {i + 1}")
            depth = 0
        elif ch == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise NodeListError("'[' without ']'")
    parts.append(text[start:])
    return parts


def _range_values(body: str) -> list[str]:
    """The values of one bracket's body (``001-004,007``), padded as written."""
    if not body:
        raise NodeListError("empty brackets '[]'")
    values: list[str] = []
    for item in body.split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise NodeListError(f"range item {item!r} is not N or N-M")
        lo_text, hi_text = m.group(1), m.group(2)
        lo = int(lo_text)
        hi = lo if hi_text is None else int(hi_text)
        if hi < lo:
            raise NodeListError(f"range {item!r} runs backwards")
        if hi - lo + 1 + len(values) > MAX_NODES:
            raise NodeListError(f"more than {MAX_NODES} names in one range")
        width = len(lo_text)
        values.extend(f"{n:0{width}d}" for n in range(lo, hi + 1))
    return values


def _expand_entry(entry: str) -> list[str]:
    if not entry:
        raise NodeListError("empty name (two commas in a row, or a leading or trailing comma)")
    names = [""]
    pos = 0
    while pos < len(entry):
        if entry[pos] == "[":
            close = entry.index("]", pos)
            values = _range_values(entry[pos + 1 : close])
            if len(names) * len(values) > MAX_NODES:
                raise NodeListError(f"more than {MAX_NODES} names")
            names = [n + v for n in names for v in values]
            pos = close + 1
        else:
            m = _NAME_CHARS.match(entry, pos)
            if m is None:
                raise NodeListError(f"character {entry[pos]!r} is not allowed in a node name")
            names = [n + m.group(0) for n in names]
            pos = m.end()
    return names


def expand_nodelist(text: str) -> list[str]:
    """The node names of a Slurm host list, in the order written.

    >>> expand_nodelist("gpu[001-003,007]")
    ['gpu001', 'gpu002', 'gpu003', 'gpu007']
    >>> expand_nodelist("a[1-2],b3")
    ['a1', 'a2', 'b3']

    Raises :class:`NodeListError` (a ValueError) for a garbled list:
    unbalanced or nested brackets, a backwards range, an empty entry, a
    character that no node name has, or more than :data:`MAX_NODES` names.
    """
    if not isinstance(text, str):
        raise TypeError(f"a node list must be a string, got {type(text).__name__}")
    if not text:
        raise NodeListError("empty node list")
    out: list[str] = []
    for entry in _split_top(text):
        names = _expand_entry(entry)
        if len(out) + len(names) > MAX_NODES:
            raise NodeListError(f"more than {MAX_NODES} names")
        out.extend(names)
    return out


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def compress_nodelist(names: Iterable[str]) -> str:
    """Slurm's compressed form of a set of node names (sorted, duplicates
    dropped); :func:`expand_nodelist` gives the names back.

    >>> compress_nodelist(["gpu003", "gpu001", "gpu002", "gpu007"])
    'gpu[001-003,007]'
    >>> compress_nodelist(["b3", "a1", "a2"])
    'a[1-2],b3'

    ``names`` is an iterable of names: a single string is refused
    (TypeError) rather than read as one-letter names; a host list string
    goes through :func:`expand_nodelist` first.
    """
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise TypeError(
            "names must be an iterable of node names, "
            f"got {'a string' if isinstance(names, str | bytes) else type(names).__name__}"
        )
    given = list(names)
    for name in given:
        if not isinstance(name, str) or not _NAME_CHARS.fullmatch(name):
            raise NodeListError(f"{name!r} is not a node name Slurm can list")
    unique = sorted(set(given))
    if not unique:
        raise NodeListError("no node names to compress")
    literal: list[str] = []
    # (prefix, width): width 0 holds the numbers written without zero padding
    groups: dict[tuple[str, int], set[int]] = {}
    for name in unique:
        m = _TRAILING_DIGITS.match(name)
        if m is None:
            literal.append(name)
            continue
        prefix, digits = m.group(1), m.group(2)
        width = len(digits) if digits[0] == "0" and len(digits) > 1 else 0
        groups.setdefault((prefix, width), set()).add(int(digits))
    # unpadded numbers all of one padded group's width join it (gpu010 + gpu100)
    for (prefix, width), numbers in list(groups.items()):
        if width != 0:
            continue
        widths = {len(str(n)) for n in numbers}
        if len(widths) == 1 and (prefix, next(iter(widths))) in groups:
            groups[(prefix, next(iter(widths)))] |= numbers
            del groups[(prefix, 0)]
    entries: list[tuple[str, str]] = [(name, name) for name in literal]
    for (prefix, width), numbers in groups.items():
        pad = max(width, 1)
        runs = _runs(sorted(numbers))
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            entries.append((prefix, f"{prefix}{runs[0][0]:0{pad}d}"))
            continue
        body = ",".join(
            f"{lo:0{pad}d}" if lo == hi else f"{lo:0{pad}d}-{hi:0{pad}d}" for lo, hi in runs
        )
        entries.append((prefix, f"{prefix}[{body}]"))
    entries.sort()
    return ",".join(text for _, text in entries)
