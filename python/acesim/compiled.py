"""Compiled recovery policies: a native callback the simulator calls without the GIL.

A compiled failure policy is a C-ABI function (see ``acesim_policy.h`` in
:func:`get_include`, or the Cython declarations in ``acesim/policy_abi.pxd``)::

    int32_t fn(const acesim_failure_view* view, void* user_data);

returning one of the ``ACESIM_*`` decisions. Write it in C, Cython (a
``cdef ... noexcept nogil`` function), Numba (``@cfunc``) or anything else that
exports a C function, and hand its address to :class:`CompiledPolicy`::

    policy = acesim.Policy(on_failure=acesim.CompiledPolicy(address, keepalive=module))

The function must be thread-safe and must not call into Python: the simulator
calls it from native code, without holding the GIL, possibly from several
threads at once (one per replica batch). ``user_data`` is passed through
unchanged as the ``void*`` argument.
"""

from __future__ import annotations

import ctypes
import operator
from _ctypes import CFuncPtr
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "ABI_VERSION",
    "ACESIM_DEFAULT",
    "ACESIM_PREEMPT_LOWER",
    "ACESIM_REQUEUE",
    "ACESIM_SPARES",
    "ACESIM_WAIT_REPAIR",
    "HEADER_NAME",
    "CompiledPolicy",
    "FailurePolicyFn",
    "FailureViewStruct",
    "get_include",
]

#: ``ACESIM_POLICY_ABI_VERSION`` of the header this package ships.
ABI_VERSION: Final = 1

#: Decisions a compiled policy returns (the header's ``ACESIM_*`` values;
#: the same numbers as ``acesim.Replacement``).
ACESIM_DEFAULT: Final = -1
ACESIM_SPARES: Final = 0
ACESIM_WAIT_REPAIR: Final = 1
ACESIM_PREEMPT_LOWER: Final = 2
ACESIM_REQUEUE: Final = 3

#: File name of the C header inside :func:`get_include`.
HEADER_NAME: Final = "acesim_policy.h"

_POINTER_BITS: Final = 8 * ctypes.sizeof(ctypes.c_void_p)
_MAX_POINTER: Final = (1 << _POINTER_BITS) - 1


def get_include() -> str:
    """The directory holding ``acesim_policy.h``, for ``include_dirs`` of an extension.

    The header is installed with the package (``acesim/include``) by the
    build; a source checkout used through ``PYTHONPATH`` does not have it.
    """
    include = Path(__file__).resolve().parent / "include"
    if not (include / HEADER_NAME).is_file():
        raise RuntimeError(
            f"acesim's C header {HEADER_NAME} is not installed: {include} does not contain it. "
            "The build installs it (pip install acesim, or pip install . from a checkout); "
            "a source tree imported through PYTHONPATH has no include directory."
        )
    return str(include)


class FailureViewStruct(ctypes.Structure):
    """ctypes mirror of ``acesim_failure_view`` (same fields, same order, same layout)."""

    _fields_ = [
        ("time", ctypes.c_double),
        ("fault_time", ctypes.c_double),
        ("progress", ctypes.c_double),
        ("work", ctypes.c_double),
        ("lost_work", ctypes.c_double),
        ("repair_remaining", ctypes.c_double),
        ("replica", ctypes.c_uint32),
        ("job", ctypes.c_uint32),
        ("gpus", ctypes.c_uint32),
        ("priority", ctypes.c_int32),
        ("failures", ctypes.c_uint32),
        ("cause", ctypes.c_int32),
        ("nodes_held", ctypes.c_uint32),
        ("nodes_needed", ctypes.c_uint32),
        ("free_nodes", ctypes.c_uint32),
        ("spare_nodes", ctypes.c_uint32),
        ("down_nodes", ctypes.c_uint32),
        ("quarantined_nodes", ctypes.c_uint32),
        ("preemptible_nodes", ctypes.c_uint32),
        ("reserved_", ctypes.c_uint32),
    ]


#: ctypes prototype of ``acesim_failure_policy_fn``.
FailurePolicyFn = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.POINTER(FailureViewStruct), ctypes.c_void_p
)


def _pointer_int(value: object, name: str, *, minimum: int) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not bool")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if number < minimum:
        what = "positive (a function address)" if minimum > 0 else "non-negative"
        raise ValueError(f"{name} must be {what}, got {number}")
    if number > _MAX_POINTER:
        raise ValueError(f"{name} must fit in a {_POINTER_BITS}-bit pointer, got {number:#x}")
    return number


_PROC_MAPS = "/proc/self/maps"


def _not_code(address: int) -> str | None:
    """Why ``address`` cannot be a function of this process, where the
    platform can tell; None where it is in executable memory (a loaded
    image's text, or code a JIT such as Numba's or libffi's trampolines
    mapped executable) or where the platform cannot tell.

    Linux lists every mapping with its permissions (``/proc/self/maps``), so
    a data pointer, even one into a loaded image's data, is told apart from
    code. Elsewhere ``dladdr`` could only name the image holding an address,
    which leaves JIT code (Numba's, libffi's trampolines) unknown and an
    image's data accepted: no check there."""
    try:
        with open(_PROC_MAPS, encoding="ascii", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(maxsplit=5)
        start, _, end = fields[0].partition("-")
        if int(start, 16) <= address < int(end, 16):
            if "x" in fields[1]:
                return None
            where = fields[5].strip() if len(fields) > 5 else "anonymous memory"
            return f"it is in memory mapped without execute permission ({where}), not code"
    return "it is not in any memory mapped in this process"


def _capsule_pointer(capsule: object) -> int | None:
    """The pointer a PyCapsule holds, whatever its name (NULL names included)."""
    api = ctypes.pythonapi
    get_name = api.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = api.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address: int | None = get_pointer(capsule, get_name(capsule))
    return address


@dataclass(frozen=True)
class CompiledPolicy:
    """A compiled failure policy: the address of an ``acesim_failure_policy_fn``.

    ``address`` is the integer address of ``int32_t fn(const acesim_failure_view*,
    void*)``; ``user_data`` is passed as its ``void*`` argument (an integer, for
    example the address of a struct the caller keeps alive); ``keepalive`` holds
    whatever owns the code or the data (the extension module, the ctypes or Numba
    object) for as long as the policy lives. Equality and hashing use ``address``
    and ``user_data`` only.

    The simulator calls the function without the GIL, possibly from several
    threads. An address outside executable memory (a data pointer, a freed or
    unmapped one) is refused with a ``ValueError`` where the platform can
    tell (Linux: always); acesim cannot check the signature, or that the
    address is the start of a function, so a wrong function crashes the
    process.
    """

    address: int
    user_data: int = 0
    keepalive: object | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        address = _pointer_int(self.address, "address", minimum=1)
        why = _not_code(address)
        if why is not None:
            raise ValueError(f"address {address:#x} is not a function: {why}")
        object.__setattr__(self, "address", address)
        object.__setattr__(self, "user_data", _pointer_int(self.user_data, "user_data", minimum=0))

    @classmethod
    def from_capsule(cls, capsule: object, user_data: int = 0) -> CompiledPolicy:
        """From a ``PyCapsule`` holding the function pointer (any capsule name, or none).

        Cython's ``__pyx_capi__`` entries and ``PyCapsule_New(<void*>fn, name, NULL)``
        both work; the capsule is kept alive.
        """
        if type(capsule).__name__ != "PyCapsule":
            raise TypeError(f"capsule must be a PyCapsule, not {type(capsule).__name__}")
        address = _capsule_pointer(capsule)
        if not address:
            raise ValueError("capsule holds a NULL pointer")
        return cls(address, user_data, keepalive=capsule)

    @classmethod
    def from_ctypes(cls, fn: Any, user_data: int = 0) -> CompiledPolicy:
        """From a ctypes function pointer (a ``CFUNCTYPE`` object, e.g. :data:`FailurePolicyFn`).

        Works for a function of a loaded shared library and for a numba
        ``cfunc``'s ``.ctypes``; ``fn`` is kept alive. A ctypes callback that wraps
        a Python function also works but takes the GIL at every call: use a plain
        Python callable as ``on_failure`` instead.
        """
        if not isinstance(fn, CFuncPtr):
            raise TypeError(f"fn must be a ctypes function pointer, not {type(fn).__name__}")
        argtypes = getattr(fn, "argtypes", None)
        if argtypes is not None and len(argtypes) != 2:
            raise TypeError(
                f"fn must take (const acesim_failure_view*, void*), it takes {len(argtypes)} "
                "arguments"
            )
        restype = getattr(fn, "restype", ctypes.c_int)
        if restype is None or ctypes.sizeof(restype) != 4:
            raise TypeError("fn must return int32_t")
        address = ctypes.cast(fn, ctypes.c_void_p).value
        if not address:
            raise ValueError("fn is a NULL function pointer")
        return cls(address, user_data, keepalive=fn)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "a CompiledPolicy is a function address valid in this process only and cannot "
            "be pickled; build it in the worker process (e.g. with a thread executor, or "
            "by importing the compiled module there)"
        )

    def __copy__(self) -> CompiledPolicy:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> CompiledPolicy:
        return self

    def invoke(self, view: FailureViewStruct) -> int:
        """Call the function once on ``view`` (with the GIL; for tests and debugging)."""
        if not isinstance(view, FailureViewStruct):
            raise TypeError(f"view must be a FailureViewStruct, not {type(view).__name__}")
        fn = FailurePolicyFn(self.address)
        return int(fn(ctypes.byref(view), self.user_data or None))
