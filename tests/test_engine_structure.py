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


ENGINE_CALL = re.compile(r"\bengine_\s*\.\s*(\w+)\s*\(")

# What a part may raise through the engine in the middle of its own
# transition (served at once, so that the order of transitions and every
# recorded result stay as they are); everything else a part returns as an
# outcome for the engine to carry out.
RAISED = {
    # (catch_up: a job about to fail slowly, whose rate changes, is first
    # brought to the present from its checkpoints applied ahead)
    "FailureRouting": {"interrupt", "retry_preemption", "catch_up"},
    "RecoveryActions": {"interrupt", "begin_start", "enqueue", "grow"},
}


def test_parts_raise_only_what_they_must():
    """JobTransitions, CheckpointWrites and ElasticResize never reach the
    engine (their constructors take only the state they read);
    FailureRouting and RecoveryActions call it only for RAISED."""
    for name, stem in zip(PARTS, PART_FILES, strict=True):
        header = _code(ENGINE / f"{stem}.hpp")
        source = _code(ENGINE / f"{stem}.cpp")
        called = set(ENGINE_CALL.findall(header + source))
        assert called == RAISED.get(name, set()), name
        holds = bool(re.search(r"\bReplicaEngine\s*&", _class_body(header, name)))
        assert holds == (name in RAISED), name
        if name not in RAISED:
            assert '#include "replica_engine.hpp"' not in source, stem


def test_the_engine_serves_only_what_is_raised():
    """The engine's public methods for its parts are the raised ones and
    nothing else: no forwarding method stands for an outcome."""
    header = _code(ENGINE / "replica_engine.hpp")
    public = header[header.index("public:") : header.index("private:")]
    raised = set().union(*RAISED.values())
    for name in raised:
        assert re.search(r"\b" + name + r"\s*\(", public), name
    for gone in (
        "dispatch",
        "resume",
        "preempt",
        "cancel_replacement_delay",
        "give_up_if_unplaceable",
        "give_up_unplaceable",
        "end_transfer",
        "end_narrow",
        "phase_end",
    ):
        assert not re.search(r"\b" + gone + r"\s*\(", public), gone


def test_transitions_return_outcomes():
    """A strike, a node back, a recovery, a write end and a resize each
    return an outcome the engine acts on (replica_engine.cpp names them)."""
    engine = _code(ENGINE / "replica_engine.cpp") + _code(ENGINE / "replica_engine_outside.cpp")
    declared = {
        "failure_routing": ("Strike", "NodeBack"),
        "recovery_actions": ("Recovery",),
        "checkpoint_writes": ("WriteOutcome",),
        "elastic_resize": ("Resize",),
    }
    for stem, outcomes in declared.items():
        header = _code(ENGINE / f"{stem}.hpp")
        for outcome in outcomes:
            assert re.search(r"\b(?:struct|enum class)\s+" + outcome + r"\b", header), outcome
            assert re.search(r"\b" + outcome + r"\b", engine), outcome
