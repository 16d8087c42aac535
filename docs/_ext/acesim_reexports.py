"""Doc comments of re-exported data.

acesim documents its constants with ``#:`` comments where they are defined
(``acesim.simulation.PURPOSES``) and re-exports many of them (``acesim.PURPOSES``,
``acesim.history.GOODPUT_NAMES`` from ``acesim.history._model``). autodoc
looks for the comment only in the module it is told, and otherwise shows the
docstring of the value's type (``dict``'s, ``numpy.dtype``'s). This
extension gives such an entry the comment of the module that defines it: the
first module of the package whose doc comment for that name documents the
same object. Without one, the entry gets no text rather than its type's.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer, PycodeError
from sphinx.util.docstrings import prepare_docstring


def _comment(package: str, attr: str, obj: Any) -> list[str] | None:
    for modname in sorted(m for m in list(sys.modules) if m.split(".")[0] == package):
        module = sys.modules.get(modname)
        if module is None or getattr(module, attr, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        lines = docs.get(("", attr))
        if lines:
            return list(lines)
    return None


def _process(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if what not in ("data", "attribute") or "." not in name:
        return
    own = "\n".join(lines).strip()
    type_doc = inspect.getdoc(type(obj))
    if own and (type_doc is None or own != "\n".join(prepare_docstring(type_doc)).strip()):
        return  # a doc comment of its own
    comment = _comment(name.split(".")[0], name.rpartition(".")[2], obj)
    lines[:] = comment if comment is not None else []


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", _process)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
