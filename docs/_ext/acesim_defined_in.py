"""The value classes and enums where they are defined, for the docs build.

acesim's value classes and public enums report ``__module__ == "acesim"``
(so that pickles and provenance name them publicly). autodoc reads doc
comments (``#:``, e.g. on enum members) and viewcode finds source from the
module ``__module__`` names, so for the build each gets its defining module
back (``acesim._pickle.DEFINED_IN``); the pages still name them ``acesim.X``.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _restore(app: Sphinx) -> None:
    from acesim._pickle import DEFINED_IN

    for cls, module in DEFINED_IN.items():
        cls.__module__ = module


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _restore)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
