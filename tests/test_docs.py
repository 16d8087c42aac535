"""The documentation (docs/): it names no file that is not shipped, its API
reference covers every public name, and it builds with warnings as errors
(every example on its pages runs during the build)."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import acesim
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "python" / "acesim"

#: The submodules whose ``__all__`` the API reference documents, beside
#: ``acesim.__all__``.
PUBLIC_MODULES = (
    "analytic",
    "plot",
    "provenance",
    "report",
    "results_io",
    "scenario",
    "search",
    "sensitivity",
    "sensitivity.designs",
    "sensitivity.factors",
    "sensitivity.spec",
    "checkpointing",
    "compiled",
    "distributions",
    "exports",
    "fit",
    "fleet",
    "fleet_model",
    "history",
    "job",
    "objectives",
    "optimize",
    "policy",
    "pytest_plugin",
    "regimes",
    "repair",
    "serve",
    "simulation",
    "stats",
    "sweep",
    "testing",
    "units",
    "workloads",
)

#: A reference to the design brief the model was specified in: it is not
#: part of the repository, so shipped text must point at the docs instead.
UNSHIPPED = re.compile(r"DESIGN\.md|shared/DESIGN|DESIGN section")


def _text_files(top: Path, skip: tuple[str, ...]) -> list[Path]:
    out = []
    for path in sorted(top.rglob("*")):
        parts = path.relative_to(top).parts
        if not path.is_file() or any(p in skip for p in parts):
            continue
        if path.suffix in (".so", ".pyc", ".pyd", ".png", ".npz"):
            continue
        out.append(path)
    return out


def test_no_shipped_file_refers_to_the_design_brief() -> None:
    files = _text_files(PACKAGE, ("__pycache__", "include")) + _text_files(
        DOCS, ("_build", "__pycache__")
    )
    assert any(f.name == "model.rst" for f in files)
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if UNSHIPPED.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


_DIRECTIVE = re.compile(
    r"^\.\. (?:py:)?(?:auto)?(function|class|data|exception|attribute|method|module)::\s*(\S.*)$"
)
_CURRENT = re.compile(r"^\.\. (?:py:)?currentmodule::\s*(\S+)\s*$")


def documented_names() -> set[str]:
    """The full names the API reference's directives document (autodoc's and
    the Python domain's), resolved against the current module."""
    names: set[str] = set()
    for page in sorted((DOCS / "api").glob("*.rst")):
        module = "acesim"
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            current = _CURRENT.match(line)
            if current:
                module = current[1]
                continue
            directive = _DIRECTIVE.match(line)
            if not directive:
                continue
            kind, first = directive[1], directive[2]
            targets = [first]
            # More signatures of one py:data directive, aligned under the first.
            indent = line.index(first)
            for more in lines[i + 1 :]:
                if more[:indent].strip() or not more[indent:].strip() or more[indent] == ":":
                    break
                targets.append(more[indent:])
            for target in targets:
                name = target.split("(")[0].strip()
                if kind == "module" or name.startswith("acesim"):
                    names.add(name)
                else:
                    names.add(f"{module}.{name}")
    return names


def test_every_public_name_is_in_the_api_reference() -> None:
    names = documented_names()
    missing = [n for n in acesim.__all__ if f"acesim.{n}" not in names]
    assert not missing, f"not in docs/api: {missing}"


def test_every_public_submodule_name_is_in_the_api_reference() -> None:
    names = documented_names()
    missing = []
    for mod in PUBLIC_MODULES:
        module = importlib.import_module(f"acesim.{mod}")
        for name in module.__all__:
            obj = getattr(module, name)
            top = getattr(acesim, name, None) is obj and f"acesim.{name}" in names
            if not top and f"acesim.{mod}.{name}" not in names:
                missing.append(f"acesim.{mod}.{name}")
    assert not missing, f"not in docs/api: {missing}"


@pytest.mark.slow  # a whole Sphinx build: run by .ci/slow
def test_the_docs_build_with_warnings_as_errors(tmp_path: Path) -> None:
    pytest.importorskip("sphinx", reason="building the docs needs sphinx")
    pytest.importorskip("myst_parser", reason="building the docs needs myst-parser")
    env = dict(os.environ)
    # The build documents (and runs the examples with) this acesim.
    where = str(Path(acesim.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (where, env.get("PYTHONPATH")) if p)
    started = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(DOCS),
            str(tmp_path / "html"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    took = time.perf_counter() - started
    assert out.returncode == 0, f"sphinx-build failed after {took:.0f} s:\n{out.stderr}"
    assert out.stderr == "", out.stderr
    for page in ("index", "model", "api/index", "protocol", "tutorials/index"):
        assert (tmp_path / "html" / f"{page}.html").is_file()
