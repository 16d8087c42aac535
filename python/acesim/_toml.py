"""TOML for scenario files: reading (``tomllib``, or ``tomli`` before
Python 3.11), the line each key of a document is on (``tomllib`` gives
none), and a small writer.

The writer covers the TOML types a scenario holds (tables, arrays, strings,
integers, floats, booleans; no dates). Top-level tables become ``[table]``
sections, top-level arrays of tables ``[[table]]`` sections, and arrays of
tables directly inside those ``[[table.key]]`` sections; every deeper table
is written inline. ``loads(dumps(doc)) == doc`` for every document of those
types (floats compare as floats: ``nan`` is written, but is not equal to
itself).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ImportError as exc:
        raise ImportError("reading TOML on Python 3.10 needs tomli: pip install tomli") from exc

__all__ = ["KeyPath", "Locator", "TOMLDecodeError", "dumps", "format_path", "loads"]

TOMLDecodeError = tomllib.TOMLDecodeError

#: A key's place in a document: table keys (str) and array indices (int).
KeyPath = tuple[str | int, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def loads(text: str) -> dict[str, Any]:
    """The document in ``text`` (``tomllib.loads``); a TOMLDecodeError, not
    a RecursionError, for arrays or inline tables nested too deeply for it."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TOMLDecodeError(
            "arrays or inline tables nested too deeply (a scenario needs a few levels)"
        ) from None


def format_path(path: Sequence[str | int]) -> str:
    """``jobs[2].work``: keys joined by dots (quoted where TOML would quote
    them), indices in brackets."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = part if _BARE.fullmatch(part) else _string(part)
            out += key if not out else f".{key}"
    return out


# ---------------------------------------------------------------------------
# Where each key is
# ---------------------------------------------------------------------------


class Locator:
    """The line (1-based) of every key, table header, array element and
    inline-table key of a TOML text, by its :data:`KeyPath`.

    ``line(path)`` is the line of ``path``, or of the longest prefix of it
    that the text names (a key the text lacks is blamed on its table), or
    ``None``. The scan assumes a text that ``tomllib`` accepted; on anything
    it does not follow it keeps what it found so far (locations only ever
    help an error message).
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1
        self.lines: dict[KeyPath, int] = {}
        self._arrays: dict[KeyPath, int] = {}
        #: The first key path each line declares (a key, or a table header).
        self.declared: dict[int, KeyPath] = {}
        try:
            self._document()
        except (IndexError, ValueError, RecursionError):
            pass

    def line(self, path: Sequence[str | int]) -> int | None:
        key = tuple(path)
        while True:
            if key in self.lines:
                return self.lines[key]
            if not key:
                return None
            key = key[:-1]

    # -- scanning ------------------------------------------------------------

    def _peek(self, k: int = 0) -> str:
        i = self._pos + k
        return self._text[i] if i < len(self._text) else ""

    def _advance(self, n: int = 1) -> None:
        chunk = self._text[self._pos : self._pos + n]
        self._line += chunk.count("\n")
        self._pos += n

    def _skip_blank(self, newlines: bool) -> None:
        while self._pos < len(self._text):
            c = self._peek()
            if c in " \t\r" or (newlines and c == "\n"):
                self._advance()
            elif c == "#":
                end = self._text.find("\n", self._pos)
                self._pos = len(self._text) if end < 0 else end
            else:
                return

    def _document(self) -> None:
        table: KeyPath = ()
        while True:
            self._skip_blank(newlines=True)
            if self._pos >= len(self._text):
                return
            line = self._line
            if self._peek() == "[":
                array = self._peek(1) == "["
                self._advance(2 if array else 1)
                keys = self._key()
                self._skip_blank(newlines=False)
                self._advance(2 if array else 1)
                table = self._resolve(keys, array)
                self.lines.setdefault(table, line)
                self.declared.setdefault(line, table)
            else:
                keys = self._key()
                self._skip_blank(newlines=False)
                if self._peek() != "=":
                    raise ValueError("expected '='")
                self._advance()
                self._skip_blank(newlines=False)
                path = table + keys
                self.lines.setdefault(path, line)
                self.declared.setdefault(line, path)
                self._value(path)

    def _resolve(self, keys: KeyPath, array: bool) -> KeyPath:
        """A header's keys as a path: each key naming an array of tables
        stands for its last element so far; ``[[...]]`` adds an element."""
        out: KeyPath = ()
        for k, key in enumerate(keys):
            out = (*out, key)
            last = k == len(keys) - 1
            if last and array:
                count = self._arrays.get(out, 0)
                self._arrays[out] = count + 1
                self.lines.setdefault(out, self._line)
                out = (*out, count)
            elif out in self._arrays:
                out = (*out, self._arrays[out] - 1)
        return out

    def _key(self) -> KeyPath:
        parts: list[str | int] = []
        while True:
            self._skip_blank(newlines=False)
            c = self._peek()
            if c in ('"', "'"):
                start = self._pos
                self._string_token()
                parts.append(tomllib.loads("k = " + self._text[start : self._pos])["k"])
            else:
                m = _BARE.match(self._text, self._pos)
                if m is None:
                    raise ValueError("expected a key")
                parts.append(m.group(0))
                self._advance(m.end() - self._pos)
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return tuple(parts)
            self._advance()

    def _string_token(self) -> None:
        quote = self._peek()
        if self._text.startswith(quote * 3, self._pos):
            self._advance(3)
            end = self._pos
            while True:
                end = self._text.index(quote * 3, end)
                if quote == "'" or not _escaped(self._text, end):
                    break
                end += 1
            # A closing run may hold up to two more quotes (part of the string).
            while self._text.startswith(quote, end + 3):
                end += 1
            self._advance(end + 3 - self._pos)
            return
        self._advance()
        while True:
            c = self._peek()
            if c == "":
                raise ValueError("unterminated string")
            if c == "\\" and quote == '"':
                self._advance(2)
                continue
            self._advance()
            if c == quote:
                return

    def _value(self, path: KeyPath) -> None:
        c = self._peek()
        if c in ('"', "'"):
            self._string_token()
        elif c == "[":
            self._advance()
            index = 0
            while True:
                self._skip_blank(newlines=True)
                if self._peek() == "]":
                    self._advance()
                    return
                item = (*path, index)
                self.lines.setdefault(item, self._line)
                self._value(item)
                self._skip_blank(newlines=True)
                if self._peek() == ",":
                    self._advance()
                index += 1
        elif c == "{":
            self._advance()
            while True:
                self._skip_blank(newlines=True)
                if self._peek() == "}":
                    self._advance()
                    return
                if self._peek() == ",":
                    self._advance()
                    continue
                line = self._line
                keys = self._key()
                self._skip_blank(newlines=False)
                self._advance()  # '='
                self._skip_blank(newlines=False)
                item = path + keys
                self.lines.setdefault(item, line)
                self._value(item)
        else:
            m = re.compile(r"[^,\]}#\r\n]*").match(self._text, self._pos)
            assert m is not None
            self._advance(max(1, len(m.group(0).rstrip(" \t"))))


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` is escaped by an odd run of backslashes."""
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _key_text(key: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"TOML keys must be strings, got {type(key).__name__}")
    return key if _BARE.fullmatch(key) else _string(key)


def _scalar(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    raise TypeError(
        f"{where}: TOML has no {type(value).__name__} (tables, arrays, strings, numbers "
        "and booleans only)"
    )


def _inline(value: Any, where: str, wrap: bool = False) -> str:
    if isinstance(value, Mapping):
        items = [f"{_key_text(k)} = {_inline(v, f'{where}.{k}')}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}" if items else "{}"
    if isinstance(value, list | tuple):
        parts = [_inline(v, f"{where}[{i}]") for i, v in enumerate(value)]
        one_line = "[" + ", ".join(parts) + "]"
        if not wrap or len(one_line) <= 88:
            return one_line
        lines, current = ["["], "   "
        for part in parts:
            if len(current) + len(part) + 2 > 88 and current.strip():
                lines.append(current.rstrip())
                current = "   "
            current += f" {part},"
        lines.append(current.rstrip())
        lines.append("]")
        return "\n".join(lines)
    return _scalar(value, where)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def _section(
    out: list[str],
    header: KeyPath,
    table: Mapping[str, Any],
    depth: int,
    array: bool,
    comments: Mapping[str, str] | None = None,
    at: KeyPath = (),
) -> None:
    """One ``[header]`` (or ``[[header]]``) section: its plain keys, then
    the sections below it (arrays of tables one level down). ``at``: the
    section's key path with its array indices; ``comments``: comment lines
    written above a key, by its :func:`format_path`."""
    name = ".".join(_key_text(str(k)) for k in header)
    if header:
        out.append("")
        out.append(f"[[{name}]]" if array else f"[{name}]")
    nested: list[tuple[str, Any]] = []
    for key, value in table.items():
        where = format_path((*header, key))
        as_section = (depth == 0 and isinstance(value, Mapping)) or (
            depth <= 1 and _is_table_array(value)
        )
        if as_section:
            nested.append((key, value))
        else:
            note = comments.get(format_path((*at, key))) if comments else None
            if note:
                out.extend(f"# {line}".rstrip() for line in note.splitlines())
            out.append(f"{_key_text(key)} = {_inline(value, where, wrap=True)}")
    for key, value in nested:
        if isinstance(value, Mapping):
            _section(out, (*header, key), value, depth + 1, False, comments, (*at, key))
        else:
            for k, element in enumerate(value):
                _section(out, (*header, key), element, depth + 1, True, comments, (*at, key, k))


def dumps(
    doc: Mapping[str, Any],
    header: str | None = None,
    comments: Mapping[str, str] | None = None,
) -> str:
    """``doc`` as TOML text, after ``header`` as ``#`` comment lines;
    ``comments``: comment lines above a key, by its key path
    (:func:`format_path`: ``"fleet.repair"``, ``"causes[0].detect"``)."""
    if not isinstance(doc, Mapping):
        raise TypeError(f"a TOML document is a table (a dict), got {type(doc).__name__}")
    out: list[str] = []
    if header:
        out.extend(f"# {line}".rstrip() for line in header.splitlines())
    _section(out, (), doc, 0, False, comments)
    text = "\n".join(out).lstrip("\n") + "\n"
    return text
