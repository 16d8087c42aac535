"""Sphinx configuration of the acesim documentation.

Build it from the repository root with warnings as errors:

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The pages run their examples while they are built (``docs/_ext/acesim_run.py``),
so acesim must be importable: installed, or a checkout whose
``python/acesim`` holds the compiled ``_core`` module (that checkout is then
the one documented).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
# A checkout with its compiled core in place documents itself, ahead of an
# installed acesim.
if any(
    (ROOT / "python" / "acesim" / f"_core{suffix}").exists()
    for suffix in importlib.machinery.EXTENSION_SUFFIXES
):
    sys.path.insert(0, str(ROOT / "python"))
    # The examples that start Python processes (pytest, acesim serve) use it too.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p
    )

import acesim  # noqa: E402

project = "acesim"
author = "acesim developers"
copyright = "acesim developers"
version = release = acesim.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "myst_parser",
    "acesim_run",
    "acesim_reexports",
    "acesim_defined_in",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# Python domain and autodoc.
default_role = "code"
add_module_names = False
python_use_unqualified_type_names = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_class_signature = "mixed"
autodoc_inherit_docstrings = True
autosummary_generate = False
# The sidebar lists pages and sections; each API page's table lists its objects.
toc_object_entries = False
# acesim.fit's estimators document their arguments Google style.
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# MyST (the protocol page is Markdown).
myst_heading_anchors = 3

# HTML.
html_theme = "alabaster"
html_title = f"acesim {release}"
html_static_path = ["_static"]
html_css_files = ["acesim.css"]
html_theme_options = {
    "description": "Failures, checkpoints and recovery policies of large GPU training fleets",
    "fixed_sidebar": True,
    "page_width": "1260px",
    "sidebar_width": "240px",
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_show_sourcelink = False
pygments_style = "sphinx"
