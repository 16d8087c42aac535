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


PARTS = ("JobTransitions", "FailureRouting", "RecoveryActions", "CheckpointWrites", "ElasticResize")
PART_FILES = (
    "job_transitions",
    "failure_routing",
    "recovery_actions",
    "checkpoint_writes",
    "elastic_resize",
)


def _class_body(text: str, name: str) -> str:
    """The text of class (or struct) `name`'s definition, from its name to its closing brace."""
    m = re.search(r"\b(?:class|struct)\s+" + name + r"\b[^;{]*\{", text)
    assert m is not None, name
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.start() : i]


def test_no_part_holds_another():
    """None of the five parts has a member (or a constructor parameter) that
    points to or refers to another part: they return outcomes to the engine,
    or raise what another part does through it."""
    other = re.compile(r"\b(" + "|".join(PARTS) + r")\s*[*&]")
    for name, stem in zip(PARTS, PART_FILES, strict=True):
        body = _class_body(_code(ENGINE / f"{stem}.hpp"), name)
        assert other.findall(body) == [], name


def test_parts_include_no_other_part():
    """A part's files include no other part's header."""
    for stem in PART_FILES:
        for suffix in (".hpp", ".cpp"):
            includes = re.findall(r'#include "(\w+)\.hpp"', _code(ENGINE / f"{stem}{suffix}"))
            assert [i for i in includes if i in PART_FILES and i != stem] == [], stem + suffix


def test_no_shared_parts_struct():
    """ReplicaParts (one struct through which every part reached every other) is gone."""
    assert [p.name for p in _sources() if re.search(r"\bReplicaParts\b", _code(p))] == []


def test_no_class_over_400_lines():
    """Every class or struct of the C++ sources spans at most 400 lines of its
    definition (comments included)."""
    long = {}
    for p in _sources():
        text = _code(p)  # (comments become blank lines: the line count stays)
        for m in re.finditer(r"^\s*(?:class|struct)\s+(\w+)[^;{()]*\{", text, flags=re.M):
            lines = _class_body(text[m.start() :], m.group(1)).count("\n") + 1
            if lines > 400:
                long[f"{p.name}:{m.group(1)}"] = lines
    assert long == {}
