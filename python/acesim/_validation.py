"""Input checks shared by the public constructors: each error names the parameter."""

from __future__ import annotations

import math
import numbers
import os
import stat
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt


def real(name: str, value: Any) -> float:
    """``value`` as a float; TypeError unless it is a real number (bools are not)."""
    if type(value) is float:  # the common case, without the ABC check (about 1 us)
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return _to_float(name, value)


def _to_float(name: str, value: Any) -> float:
    """``float(value)`` for a real number; a ValueError naming ``name`` for an
    integer too large for a float (``10**400``)."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got an integer too large for a float") from None


def finite(name: str, value: Any) -> float:
    x = real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def positive(name: str, value: Any) -> float:
    """A finite number > 0."""
    x = finite(name, value)
    if x <= 0.0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return x


def non_negative(name: str, value: Any) -> float:
    """A finite number >= 0."""
    x = finite(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return x


#: The largest time, work or duration a model input may hold (seconds; about
#: 31,700 years). A float64 still resolves 0.2 ms there; far beyond it a job's
#: clock loses the precision its accounting needs (at 1e17 s, 16 s).
MAX_SECONDS = 1e12


def seconds(name: str, value: Any, *, positive: bool = False) -> float:
    """A time, work or duration: finite, >= 0 (> 0 with ``positive``) and at
    most :data:`MAX_SECONDS`."""
    x = finite(name, value)
    if positive and x <= 0.0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    if x < 0.0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    if x > MAX_SECONDS:
        raise ValueError(
            f"{name} must be at most {MAX_SECONDS:g} s (about 31,700 years), got {x!r}"
        )
    return x


def check_seconds(name: str, arr: npt.NDArray[Any]) -> None:
    """Every element of a (finite) array of times at most :data:`MAX_SECONDS`."""
    if arr.size and float(np.max(arr)) > MAX_SECONDS:
        raise ValueError(f"{name} must be at most {MAX_SECONDS:g} s (about 31,700 years)")


def repeated_column(header: Sequence[str]) -> str | None:
    """The first column name that a CSV header holds twice, else None: every
    CSV reader refuses such a file, naming the column (which of the two a
    value would come from is a guess)."""
    seen: set[str] = set()
    for name in header:
        if name in seen:
            return name
        seen.add(name)
    return None


#: What :func:`input_file_problem` says of a path that names nothing.
NO_SUCH_FILE = "no such file"


def input_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be read as an input file (:data:`NO_SUCH_FILE`,
    ``"is a directory"``, ``"is a FIFO (named pipe)"``, ...), else None: every reader
    of a named file asks this before it opens it, so that a directory, a
    FIFO or a device (``/dev/zero``) is named as what it is, never read (a
    FIFO would block, ``/dev/zero`` would fill memory) and never reported as
    missing."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return NO_SUCH_FILE
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISREG(mode):
        return None
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a special file"
    )
    return f"is {kind}"


def boolean(name: str, value: Any) -> bool:
    """A flag: a bool (or numpy bool); a TypeError naming ``name`` for
    anything else (``"no"`` and ``1`` included)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def integer(name: str, value: Any, *, minimum: int = 0, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum]; TypeError for non-integers (bools included)."""
    if type(value) is int:  # the common case (a bool's type is bool), without the ABC check
        n = value
    elif isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    else:
        n = int(value)
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {n}")
    return n


def durations(name: str, values: Any, *, allow_inf: bool = False) -> npt.NDArray[np.float64]:
    """A non-empty 1-D float64 array of durations >= 0 (finite unless allow_inf)."""
    if isinstance(values, str | bytes) or values is None:
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    found = real_array(name, values)
    if found is None:
        raise TypeError(f"{name} must hold real numbers{described(values)}")
    if found.ndim == 0:
        raise TypeError(f"{name} must be a sequence of numbers, got a scalar")
    arr = np.ascontiguousarray(found, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must not contain inf")
    if (arr < 0).any():
        raise ValueError(f"{name} must hold durations >= 0, found {arr.min()!r}")
    return arr


T = TypeVar("T")


def sequence_of(name: str, values: Any, cls: type[T], *, empty: str = "") -> list[T]:
    """``values`` as a non-empty list of ``cls`` (a single ``cls`` counts as
    one); ``empty`` is added to the error for an empty sequence."""
    if isinstance(values, cls):
        return [values]
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of {cls.__name__}, got {type(values).__name__}")
    out = list(values)
    if not out:
        raise ValueError(f"{name} must not be empty{empty}")
    for i, item in enumerate(out):
        if not isinstance(item, cls):
            raise TypeError(f"{name}[{i}] must be a {cls.__name__}, got {type(item).__name__}")
    return out


def triple(name: str, value: Any, shape: str) -> tuple[Any, Any, Any]:
    """``value`` as a 3-tuple, ``shape`` naming its parts in the error."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 3:
        raise TypeError(f"{name} must be a {shape} tuple")
    return value[0], value[1], value[2]


def windows_of(name: str, values: Any, shape: str) -> Sequence[Any]:
    """``values`` as a sequence of ``shape`` tuples (checked one by one by the caller)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of {shape}, got {type(values).__name__}")
    return values


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def real_array(name: str, value: Any) -> npt.NDArray[Any] | None:
    """``value`` (a real number, or a sequence or array of them) as a numpy
    array of an integer or floating dtype; None when it is not one (a
    string, a bool, None, complex numbers, a ragged list, an object array).

    Python ints beyond int64 (``[1, 2**70]``, which numpy holds as objects)
    are real numbers: such a number or list comes out as float64, and an
    integer too large for a float (``10**400``) is a ValueError naming
    ``name``. An array that is already of dtype object is refused as it is."""
    if isinstance(value, str | bytes | bool | np.bool_) or value is None:
        return None
    try:
        arr = np.asarray(value)
    except Exception:  # ragged or otherwise unconvertible input
        return None
    if arr.dtype == np.object_ and not isinstance(value, np.ndarray):
        items = arr.ravel()
        if not all(_is_real(x) for x in items):
            return None
        out = np.fromiter((_to_float(name, x) for x in items), np.float64, count=items.size)
        return out.reshape(arr.shape)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        return None
    return arr


def described(value: Any) -> str:
    """What ``value`` is, for an error message (``", got dtype <U1"``)."""
    try:
        return f", got dtype {np.asarray(value).dtype}"
    except Exception:
        return f", got {type(value).__name__}"


def is_numeric(value: Any) -> bool:
    """``value`` is a real number or an array of them (not a bool or a string)."""
    try:
        return real_array("value", value) is not None
    except ValueError:  # an integer too large for a float is still a number
        return True


def number_array(
    name: str, value: Any, *, allow_inf: bool = False, allow_zero: bool = False
) -> npt.NDArray[np.float64]:
    """``value`` as a float64 array of numbers > 0 (>= 0 with ``allow_zero``),
    finite unless ``allow_inf``; a TypeError/ValueError naming ``name``."""
    found = real_array(name, value)
    if found is None:
        raise TypeError(f"{name} must be a number or an array of numbers")
    arr = np.asarray(found, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if (arr < 0).any() or (not allow_zero and (arr == 0).any()):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}")
    return arr


#: The largest replica id (ids are 32-bit; the core keeps 2**32 - 1 free).
MAX_REPLICA_ID = 2**32 - 2


def check_replica_ids(first_replica: int, replicas: int) -> None:
    """Replicas ``first_replica .. first_replica + replicas - 1`` all have ids
    of at most :data:`MAX_REPLICA_ID`."""
    if first_replica + replicas - 1 > MAX_REPLICA_ID:
        raise ValueError(
            f"first_replica + replicas must be at most 2**32 - 1 (replica ids run to "
            f"2**32 - 2), got {first_replica} + {replicas}"
        )
