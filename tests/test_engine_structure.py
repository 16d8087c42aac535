"""The fleet engine's structure, checked over its sources.

Only the replica engine sequences the parts: the heap is scheduled and
invalidated from ``replica_engine.cpp`` alone (the parts ask through
``KernelRequests``, which the engine serves after each call).
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPP = ROOT / "cpp"
ENGINE = CPP / "src" / "engine"

KERNEL_CALL = re.compile(r"\b(?:schedule|invalidate)_\w+\s*\(")


def _sources() -> list[Path]:
    return sorted(p for p in CPP.rglob("*") if p.suffix in {".cpp", ".hpp", ".h", ".cc"})


def _code(path: Path) -> str:
    """The file's text without its comments (a comment may name a call)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def test_sources_are_found():
    """The checks below read real files (an empty list would pass them)."""
    names = {p.name for p in _sources()}
    assert {"kernel.hpp", "replica_engine.cpp", "job_transitions.cpp"} <= names


def test_only_the_engine_schedules_and_invalidates():
    """schedule_* and invalidate_* are defined in kernel.hpp and called only
    from replica_engine.cpp."""
    callers = {
        str(p.relative_to(CPP))
        for p in _sources()
        if p.name != "kernel.hpp" and KERNEL_CALL.search(_code(p))
    }
    assert callers == {"src/engine/replica_engine.cpp"}


def test_the_kernel_defines_them():
    """The pattern above matches the kernel's own methods (it is not vacuous)."""
    found = set(re.findall(r"\b((?:schedule|invalidate)_\w+)\s*\(", _code(ENGINE / "kernel.hpp")))
    assert found == {"schedule_job", "invalidate_job", "schedule_node"}
