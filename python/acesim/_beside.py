"""Callbacks from a module beside a scenario file, named by (file, SHA-256,
attribute).

A scenario's ``on_failure = "mypolicies:on_failure"`` names a module that
may lie beside the scenario file. Such a module is loaded from its file, by
path, under a name of its own (its file and content hash): two scenarios
with different ``mypolicies.py`` get their own module each, and nothing is
added to ``sys.path`` or cached under the plain name ``mypolicies``. The
callback is a :class:`BesideCallable`: it describes itself in provenance and
pickles as (file, SHA-256, module, attribute), and a process that loads it
again (a ``sweep --processes`` worker, ``reproduce(..., trust=True)``)
refuses with :class:`~acesim.UntrustedNameError` when the file no longer has
that SHA-256.

A scenario that names such a module runs its code: run scenarios you trust.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any

from .errors import UntrustedNameError

__all__ = ["BesideCallable", "beside_file", "folder_of", "load_beside"]

#: Modules loaded from files beside scenarios, by (folder, module, SHA-256).
_LOADED: dict[tuple[str, str, str], types.ModuleType] = {}


def beside_file(folder: Path, module: str) -> Path | None:
    """The file of ``module`` (dotted) beside a scenario in ``folder``: a
    ``top.py`` for a plain module, ``top/.../name.py`` (or its
    ``__init__.py``) inside a package ``top/``; None when there is none."""
    parts = module.split(".")
    if len(parts) == 1 and (folder / f"{parts[0]}.py").is_file():
        return (folder / f"{parts[0]}.py").resolve()
    if not (folder / parts[0] / "__init__.py").is_file():
        return None
    base = folder.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_module(folder: str, module: str, file: str, sha256: str) -> types.ModuleType:
    key = (folder, module, sha256)
    if key in _LOADED:
        return _LOADED[key]
    try:
        source = Path(file).read_bytes()
    except OSError as exc:
        raise UntrustedNameError(
            f"the callback module {module!r} ({file}) cannot be read: {exc.strerror or exc}"
        ) from None
    found = _digest(source)
    if found != sha256:
        raise UntrustedNameError(
            f"the callback module {module!r} ({file}) changed since the scenario was loaded: "
            f"its SHA-256 is {found}, not {sha256}; load the scenario again"
        )
    # A name of its own: the folder and the content, so same-named modules never meet.
    unique = "_acesim_beside_" + _digest(f"{folder}\0{sha256}".encode())[:16]
    parts = module.split(".")
    if len(parts) == 1 and Path(file).name != "__init__.py":
        mod = types.ModuleType(unique)
        mod.__file__ = file
        sys.modules[unique] = mod
        try:
            exec(compile(source, file, "exec"), mod.__dict__)  # the scenario's code
        except BaseException:
            del sys.modules[unique]
            raise
    else:
        top = Path(folder) / parts[0]
        if unique not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                unique, top / "__init__.py", submodule_search_locations=[os.fspath(top)]
            )
            assert spec is not None and spec.loader is not None
            package = importlib.util.module_from_spec(spec)
            sys.modules[unique] = package
            try:
                spec.loader.exec_module(package)
            except BaseException:
                del sys.modules[unique]
                raise
        mod = importlib.import_module(".".join([unique, *parts[1:]]))
    _LOADED[key] = mod
    return mod


class BesideCallable:
    """A callable loaded from a module beside a scenario file: calls go to
    the function; it is named (for provenance and pickles) by its file,
    that file's SHA-256 and the attribute."""

    __slots__ = ("_target", "attribute", "file", "folder", "module", "sha256")

    def __init__(
        self, folder: str, module: str, attribute: str, file: str, sha256: str, target: Any
    ) -> None:
        self.folder = folder
        self.module = module
        self.attribute = attribute
        self.file = file
        self.sha256 = sha256
        self._target = target

    @property
    def name(self) -> str:
        """``module:attribute``, as the scenario wrote it."""
        return f"{self.module}:{self.attribute}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, tuple[str, ...]]:
        return _load_beside, (self.folder, self.module, self.attribute, self.file, self.sha256)

    def _key(self) -> tuple[str, str, str, str]:
        return (self.file, self.sha256, self.module, self.attribute)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BesideCallable):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<{self.name} from {self.file} (sha256 {self.sha256[:12]}...)>"


def load_beside(
    folder: str, module: str, attribute: str, file: str, sha256: str | None = None
) -> BesideCallable:
    """``module:attribute`` from ``file`` beside a scenario in ``folder``;
    with ``sha256``, refuses (:class:`~acesim.UntrustedNameError`) a file
    whose content no longer has it."""
    if sha256 is None:
        sha256 = _digest(Path(file).read_bytes())
    obj: Any = _load_module(folder, module, file, sha256)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return BesideCallable(folder, module, attribute, file, sha256, obj)


def folder_of(module: str, file: str) -> str:
    """The scenario's folder, from a beside module's name and file."""
    path = Path(file)
    return os.fspath(path.parents[module.count(".") + (path.name == "__init__.py")])


def _load_beside(folder: str, module: str, attribute: str, file: str, sha256: str) -> Any:
    """Unpickles a :class:`BesideCallable` (a named error if the file changed)."""
    return load_beside(folder, module, attribute, file, sha256)


# Pickles name it as an attribute of acesim (where acesim/__init__.py puts it).
_load_beside.__module__ = "acesim"
