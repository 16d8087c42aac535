"""The TOML layer of scenario files (``acesim._toml``): the writer gives back
what it was given through ``tomllib``, and the locator finds the line of
every key, array element and inline-table key."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest
from acesim import _toml
from hypothesis import given, settings
from hypothesis import strategies as st

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# --------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------

keys = st.text(min_size=1, max_size=8)
scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)
documents = st.dictionaries(keys, values, max_size=5)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_dumps_then_loads_gives_the_document(doc: dict[str, Any]) -> None:
    text = _toml.dumps(doc)
    assert tomllib.loads(text) == doc


def test_layout() -> None:
    doc = {
        "name": "x",
        "run": {"replicas": 10, "horizon": math.inf},
        "jobs": [
            {"gpus": 8, "save": {"law": "exponential", "mean": 60.0}, "tiers": [{"interval": 1}]},
            {"gpus": 16, "tiers": []},
        ],
        "weird key": {"a.b": [1, 2]},
    }
    text = _toml.dumps(doc, header="fitted by hand\nsecond line")
    assert text.splitlines() == [
        "# fitted by hand",
        "# second line",
        'name = "x"',
        "",
        "[run]",
        "replicas = 10",
        "horizon = inf",
        "",
        "[[jobs]]",
        "gpus = 8",
        'save = {law = "exponential", mean = 60.0}',
        "",
        "[[jobs.tiers]]",
        "interval = 1",
        "",
        "[[jobs]]",
        "gpus = 16",
        "tiers = []",
        "",
        '["weird key"]',
        '"a.b" = [1, 2]',
    ]
    assert tomllib.loads(text) == doc


def test_long_arrays_wrap() -> None:
    doc = {"failures": {"law": "empirical", "samples": [float(i) * 1.5 for i in range(200)]}}
    text = _toml.dumps(doc)
    assert max(len(line) for line in text.splitlines()) <= 92
    assert tomllib.loads(text) == doc


def test_strings_are_escaped() -> None:
    doc = {"s": 'quote " backslash \\ tab \t newline \n del \x7f bell \x07 é'}
    text = _toml.dumps(doc)
    assert "\x7f" not in text and "\x07" not in text
    assert tomllib.loads(text) == doc


def test_values_toml_has_not() -> None:
    with pytest.raises(TypeError, match=r"run.seed: TOML has no NoneType"):
        _toml.dumps({"run": {"seed": None}})
    with pytest.raises(TypeError, match="a TOML document is a table"):
        _toml.dumps([1, 2])  # type: ignore[arg-type]


def test_format_path() -> None:
    assert _toml.format_path(("jobs", 2, "work")) == "jobs[2].work"
    assert _toml.format_path(("axes", "jobs[0].work", 1)) == 'axes."jobs[0].work"[1]'
    assert _toml.format_path(()) == ""


# --------------------------------------------------------------------------
# Locator
# --------------------------------------------------------------------------

TEXT = """\
# a comment [not a table]
title = "x # not a comment"

[run]
replicas = 10   # trailing comment

[[jobs]]
gpus = 8
save = {law = "weibull", shape = 0.7, scale = "8h"}

[[jobs.tiers]]
interval = "5min"

[[jobs]]
"quoted.key" = 1
tiers = [
  {interval = 1},
  {interval = 2},
]
text = '''
[[jobs]]
not = "a table"
'''
after = 1

[fleet.repair]
stages = [{duration = "1h"}]
[ axes ]
failures.mean = ["4h",
  "8h"]
"jobs[0].work" = [1]
"""


def test_locator_lines() -> None:
    loc = _toml.Locator(TEXT)
    assert tomllib.loads(TEXT)["jobs"][1]["after"] == 1
    want = {
        ("title",): 2,
        ("run",): 4,
        ("run", "replicas"): 5,
        ("jobs",): 7,
        ("jobs", 0): 7,
        ("jobs", 0, "gpus"): 8,
        ("jobs", 0, "save"): 9,
        ("jobs", 0, "save", "scale"): 9,
        ("jobs", 0, "tiers", 0): 11,
        ("jobs", 0, "tiers", 0, "interval"): 12,
        ("jobs", 1): 14,
        ("jobs", 1, "quoted.key"): 15,
        ("jobs", 1, "tiers"): 16,
        ("jobs", 1, "tiers", 0): 17,
        ("jobs", 1, "tiers", 1, "interval"): 18,
        ("jobs", 1, "text"): 20,
        ("jobs", 1, "after"): 24,
        ("fleet", "repair"): 26,
        ("fleet", "repair", "stages", 0, "duration"): 27,
        ("axes",): 28,
        ("axes", "failures", "mean"): 29,
        ("axes", "failures", "mean", 1): 30,
        ("axes", "jobs[0].work", 0): 31,
    }
    for path, line in want.items():
        assert loc.line(path) == line, path
    assert ("jobs", 2) not in loc.lines  # the [[jobs]] inside the string is not a table


def test_locator_falls_back_to_the_table() -> None:
    loc = _toml.Locator(TEXT)
    assert loc.line(("jobs", 0, "work")) == 7  # missing key: its table's header
    assert loc.line(("run", "seed")) == 4
    assert loc.line(("jobs", 1, "tiers", 1, "save")) == 18
    assert loc.line(("nothing",)) is None


def test_locator_keeps_what_it_found_on_text_it_does_not_follow() -> None:
    loc = _toml.Locator('a = 1\nb = "unterminated\n')
    assert loc.line(("a",)) == 1
