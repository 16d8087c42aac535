"""Every file acesim writes goes through here, so that a save cut off (a
crash, a kill, a full disk) leaves the previous file whole.

- :func:`replace_file`: the new content goes to a temporary file in the
  target's folder (``.<name>.<random>.tmp``), is flushed and fsynced, then
  :func:`os.replace` puts it in place in one step, and the folder is fsynced
  where the platform allows it. A reader sees the old file or the new one,
  never a part of either.
- :func:`write_new`: a file under a name no other save uses (a table of a
  multi-file result), created exclusively, flushed and fsynced; it matters
  only once the metadata file that lists it replaces the old one.
- :func:`remove`: deletes a file no metadata lists any more.
- :func:`check_outputs`: refuses an output that is one of the files a
  command reads (:func:`os.path.samefile`), before anything is written.

Test-only switch: with ``ACESIM_TEST_KILL_AT=k`` in the environment, the
process is killed (SIGKILL; ``os._exit(137)`` where there is none) at the
``k``-th write, fsync, replace, link or remove done here, counted from the
first in the process; a write is cut in the middle (half its bytes reach
the file). The tests use it to show that a save killed at any step loses
nothing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import signal
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, NoReturn

__all__ = ["KILL_AT", "check_outputs", "remove", "replace_file", "write_new"]

#: The environment variable of the test-only kill switch.
KILL_AT = "ACESIM_TEST_KILL_AT"

_steps = 0


def _step() -> bool:
    """Count one write, fsync, replace, link or remove; True at the one
    ``ACESIM_TEST_KILL_AT`` names (the caller then dies)."""
    global _steps
    text = os.environ.get(KILL_AT)
    if not text:
        return False
    try:
        k = int(text)
    except ValueError:
        raise ValueError(f"{KILL_AT} must be a step number (1, 2, ...), got {text!r}") from None
    _steps += 1
    return _steps == k


def _die() -> NoReturn:
    kill = getattr(signal, "SIGKILL", None)
    if kill is not None:
        os.kill(os.getpid(), kill)
    os._exit(137)


class _Counted:
    """A binary file whose writes go through the kill switch (a writer such
    as ``numpy.savez`` gets it; every other attribute is the file's)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if _step():
            self._raw.write(view[: len(view) // 2])
            self._raw.flush()
            _die()
        return self._raw.write(view)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _fsync(fd: int) -> None:
    if _step():
        _die()
    os.fsync(fd)


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make the folder's entries (a new name, a rename) durable; a no-op
    where a folder cannot be opened (Windows) or synced."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        _fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create(path: Path) -> int:
    """A new file (never an existing one), with the usual permissions."""
    try:
        return os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
        )
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "no such folder", os.fspath(path.parent)) from None


def _fill(fd: int, data: bytes | str | Callable[[Any], None]) -> None:
    with os.fdopen(fd, "wb") as raw:
        out = _Counted(raw)
        if callable(data):
            data(out)
        else:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        raw.flush()
        _fsync(raw.fileno())


def replace_file(path: str | os.PathLike[str], data: bytes | str | Callable[[Any], None]) -> Path:
    """Write ``data`` (bytes, text as UTF-8, or a function writing to the
    binary file it is given) to ``path`` atomically: a temporary file in the
    same folder, flushed and fsynced, then :func:`os.replace`, then the
    folder fsynced. A file replaced keeps its permission bits. On any error
    the temporary file is removed and ``path`` is as it was. Returns
    ``path``."""
    target = Path(path)
    tmp = _temporary(target)
    fd = _create(tmp)
    try:
        with contextlib.suppress(OSError):  # the file it replaces keeps its permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        _fill(fd, data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _put_in_place(tmp, target)
    return target


def _temporary(target: Path) -> Path:
    """A fresh temporary name beside ``target`` (hidden, save-unique)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")


def _put_in_place(tmp: Path, target: Path) -> None:
    """``tmp`` renamed onto ``target`` (one step of the kill switch), the
    temporary removed if that fails, then the folder fsynced."""
    try:
        if _step():
            _die()
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def write_new(path: str | os.PathLike[str], data: bytes) -> tuple[int, str]:
    """Write ``data`` to the new file ``path`` (a FileExistsError if it
    exists), flushed and fsynced; returns its size and SHA-256 (hex)."""
    target = Path(path)
    fd = _create(target)
    try:
        _fill(fd, data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(target)
        raise
    return len(data), hashlib.sha256(data).hexdigest()


def link_or_copy(source: Path, target: Path) -> None:
    """``target`` replaced (atomically) by a hard link to ``source``, or by a
    copy of it where links are not supported."""
    tmp = _temporary(target)
    if _step():
        _die()
    try:
        os.link(source, tmp)
    except OSError:
        replace_file(target, source.read_bytes())
        return
    _put_in_place(tmp, target)


def remove(path: str | os.PathLike[str]) -> None:
    """Delete a file no longer listed (a missing one is fine)."""
    if _step():
        _die()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike[str]]],
    inputs: Iterable[str | os.PathLike[str]],
) -> None:
    """A ValueError when an output (``(option, path)``) is one of the files
    the command reads (compared with :func:`os.path.samefile`), before
    anything is written."""
    sources = list(inputs)
    for option, out in outputs:
        for source in sources:
            if _same(out, source):
                alias = "" if os.fspath(out) == os.fspath(source) else f" ({os.fspath(source)})"
                raise ValueError(
                    f"{option} {os.fspath(out)}{alias} is a file this command reads: writing "
                    "it would destroy its input; choose another output"
                )
