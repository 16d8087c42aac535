"""The core's front door (cpp/src/simulator.cpp) only dispatches: input
validation, the chunked parallel run and the single-job kernel path live in
files of their own, and the result tables are walked by one helper
(``for_each_table``, cpp/include/acesim/simulation_output.hpp). A grep over
the sources keeps it so."""

from __future__ import annotations

import re
from pathlib import Path

from acesim.simulation import TABLES

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "cpp" / "include" / "acesim"
SRC = ROOT / "cpp" / "src"


def _code(path: Path) -> str:
    """The file's text without its comments."""
    text = path.read_text()
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def test_the_table_walk_names_every_table_python_reads() -> None:
    """``jobs`` (written in place) and the tables for_each_table walks are
    Python's tables, in the same order."""
    walk = re.search(
        r"void for_each_table\(F&& f\) \{(.*?)\n\}", _code(INCLUDE / "simulation_output.hpp"), re.S
    )
    assert walk is not None
    walked = re.findall(r'f\("(\w+)", &SimulationOutput::(\w+)\);', walk.group(1))
    assert [name for name, _ in walked] == [member for _, member in walked]
    assert ("jobs", *[name for name, _ in walked]) == TABLES


def test_the_front_door_only_dispatches() -> None:
    """simulator.cpp validates, plans and hands the replicas on: no thread
    pool, no kernel loop, no input rule and no table copied by hand there."""
    code = _code(SRC / "simulator.cpp")
    for dispatched in (
        "validate(in)",
        "make_plans(in)",
        "run_replicas(",
        "ReplicaEngine",
        "SingleJobPath",
    ):
        assert dispatched in code, dispatched
    for elsewhere in (
        "parallel_for",
        "run_single_job(",
        "require(",
        "require_that(",
        ".trace",
        ".node_events",
    ):
        assert elsewhere not in code, elsewhere


def test_input_rules_live_in_the_validation_file() -> None:
    """engine/plans.cpp makes plans and refuses nothing itself; the rules it
    applies to a derived interval are input_validation.cpp's."""
    plans = _code(SRC / "engine" / "plans.cpp")
    assert "require" not in plans and "invalid_argument" not in plans
    assert "validate_interval(" in plans and "validate_tier_intervals(" in plans
    validation = _code(SRC / "input_validation.cpp")
    for rule in (
        "void validate(",
        "void validate_setup(",
        "void validate_job(",
        "void validate_batch(",
    ):
        assert rule in validation, rule


def test_tables_are_appended_only_through_the_helper() -> None:
    """No core source outside simulation_output.hpp copies a whole result
    table by hand (``x.trace.insert(..., y.trace.begin(), ...)``)."""
    by_hand = re.compile(
        r"\.(fleet|trace|events|placements|node_events)\.insert\([^;]*\.\1\.begin\(\)"
    )
    sources = [*SRC.rglob("*.cpp"), *SRC.rglob("*.hpp"), *INCLUDE.glob("*.hpp")]
    assert len(sources) > 20
    assert [p.name for p in sources if by_hand.search(_code(p))] == []


def test_the_entry_header_declares_no_types() -> None:
    """simulator.hpp holds the entry points; the input's and the result's
    types are in specs.hpp, simulation_input.hpp and simulation_output.hpp,
    which it includes (so every existing include still compiles)."""
    code = _code(INCLUDE / "simulator.hpp")
    assert re.search(r"^\s*(struct|class|enum|using)\b", code, re.M) is None
    for header in ("specs.hpp", "simulation_input.hpp", "simulation_output.hpp"):
        assert f'#include "acesim/{header}"' in code, header
