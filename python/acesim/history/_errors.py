"""The one error type the history readers raise for a malformed file."""

from __future__ import annotations

from os import PathLike

__all__ = ["HistoryFormatError"]


class HistoryFormatError(ValueError):
    """A history file that cannot be read: it names the file, the line
    (1-based, counting the header; None when the problem is the file as a
    whole) and the field (the column or key; None when the problem is the
    line as a whole).

    It is a :class:`ValueError`, so ``except ValueError`` catches it too.

    >>> err = HistoryFormatError("jobs.txt", 3, "End", "end before start")
    >>> str(err)
    "jobs.txt:3: field 'End': end before start"
    >>> (err.path, err.line, err.field)
    ('jobs.txt', 3, 'End')
    """

    #: the file (as given to the reader)
    path: str
    #: 1-based line number, or None
    line: int | None
    #: the column or key at fault, or None
    field: str | None
    #: what is wrong, without the location
    reason: str

    def __init__(
        self,
        path: str | PathLike[str],
        line: int | None,
        field: str | None,
        reason: str,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = reason
        where = self.path if line is None else f"{self.path}:{line}"
        what = f" field {field!r}:" if field is not None else ""
        super().__init__(f"{where}:{what} {reason}")

    def __reduce__(
        self,
    ) -> tuple[type[HistoryFormatError], tuple[str, int | None, str | None, str]]:
        return (type(self), (self.path, self.line, self.field, self.reason))
