"""The README's Python examples run as written (from the repository root, so
that ../shared/data resolves as in the README); skipped without the data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]


def test_readme_has_examples() -> None:
    assert len(blocks()) >= 3


@pytest.mark.skipif(not DATA.is_dir(), reason=f"real data not found at {DATA}")
def test_readme_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for code in blocks():
        # The examples are sized for a user's machine; shrink replica counts
        # and the fleet month so the suite stays fast. Semantics are unchanged.
        code = re.sub(r"replicas=([0-9_]+)", lambda m: f"replicas={min(int(m[1]), 200)}", code)
        code = (
            code.replace("days=30, gpus=131_072", "days=1, gpus=8_192")
            .replace("ace.Fleet(16_384,", "ace.Fleet(1_024,")
            .replace("horizon=30 * ace.DAY", "horizon=1 * ace.DAY")
        )
        exec(compile(code, "README.md", "exec"), namespace)
    assert os.getcwd() == str(ROOT)


def test_readme_policy_table_is_what_the_example_prints() -> None:
    """The policy table the README quotes is the output of the command shown
    beside it (``python examples/policies.py``), to the last digit."""
    text = (ROOT / "README.md").read_text()
    marker = "`python examples/policies.py`"
    assert marker in text
    quoted = re.search(r"```\n(.*?)```", text[text.index(marker) :], flags=re.S)
    assert quoted is not None
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "policies.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == quoted[1]


def test_readme_excerpts_are_the_examples_code() -> None:
    """The README's ```py blocks are excerpts of the files their first line
    names (``# examples/...``), as they stand: every run of lines between
    ``...`` lines is in the file verbatim, the runs in order."""
    text = (ROOT / "README.md").read_text()
    excerpts = re.findall(r"```py\n(.*?)```", text, flags=re.S)
    assert len(excerpts) >= 2
    for excerpt in excerpts:
        first, *lines = excerpt.splitlines()
        named = re.match(r"# (examples/\S+?),? ", first + " ")
        assert named is not None, f"an excerpt must name its file: {first!r}"
        source = (ROOT / named[1]).read_text()
        runs: list[list[str]] = [[]]
        for line in lines:
            if line.strip() == "...":
                runs.append([])
            else:
                runs[-1].append(line)
        at = 0
        for run in filter(None, runs):
            chunk = "\n".join(run) + "\n"
            found = source.find(chunk, at)
            assert found >= 0, f"not in {named[1]} (after offset {at}):\n{chunk}"
            at = found + len(chunk)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"real data not found at {DATA}")
def test_readme_titan_gang_table_is_what_the_example_prints() -> None:
    """The steady-state and fresh-gang MTBF the README quotes for Titan's
    fitted per-GPU Weibull are the output of ``python examples/titan_gang.py``
    (run from the repository root, as the README's commands are)."""
    text = (ROOT / "README.md").read_text()
    marker = "`python examples/titan_gang.py`"
    assert marker in text
    quoted = re.search(r"```\n(.*?)```", text[text.index(marker) :], flags=re.S)
    assert quoted is not None
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "titan_gang.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout == quoted[1]
    # The prose quotes the same figures.
    for figure in ("54 h", "4,978 h", "92 times", "shape 2.9"):
        assert figure in text


def test_readme_history_fit_is_what_the_command_prints() -> None:
    """The README's fit table of LANL system 20 is the output of
    ``acesim fit ../shared/data/lanl_sys20_node_interfailure_s.csv``."""
    data = ROOT.parent / "shared" / "data" / "lanl_sys20_node_interfailure_s.csv"
    if not data.exists():
        pytest.skip("../shared/data is absent")
    text = (ROOT / "README.md").read_text()
    marker = "`acesim fit ../shared/data/lanl_sys20_node_interfailure_s.csv`"
    assert marker in text
    quoted = re.search(r"```\n(.*?)```", text[text.index(marker) :], flags=re.S)
    assert quoted is not None
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "acesim",
            "fit",
            "../shared/data/lanl_sys20_node_interfailure_s.csv",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout == quoted[1]


@pytest.mark.slow  # the whole Philly history replayed: run by .ci/slow
def test_readme_backtest_is_what_the_command_prints() -> None:
    """The README's Philly fit and back-test are the output of ``acesim fit
    ../shared/data/philly_interrupted_attempt_runtime_s.csv --backtest 30``."""
    data = ROOT.parent / "shared" / "data" / "philly_pass_jobs_ge2gpu.csv"
    if not data.exists():
        pytest.skip("../shared/data is absent")
    text = (ROOT / "README.md").read_text()
    marker = "philly_interrupted_attempt_runtime_s.csv --backtest 30`"
    assert marker in text
    quoted = re.search(r"```\n(.*?)```", text[text.index(marker) :], flags=re.S)
    assert quoted is not None
    command = ["fit", "../shared/data/philly_interrupted_attempt_runtime_s.csv", "--backtest", "30"]
    out = subprocess.run(
        [sys.executable, "-m", "acesim", *command],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout == quoted[1]
    for figure in ("3,034", "1,456", "shape 0.31", "1.3% below"):
        assert figure in text


def test_readme_run_table_is_what_the_command_prints() -> None:
    """The README's scenario table is the output of ``acesim run
    examples/checkpointing.toml``."""
    text = (ROOT / "README.md").read_text()
    marker = "`acesim run examples/checkpointing.toml` runs"
    assert marker in text
    quoted = re.search(r"```\n(.*?)```", text[text.index(marker) :], flags=re.S)
    assert quoted is not None
    out = subprocess.run(
        [sys.executable, "-m", "acesim", "run", "examples/checkpointing.toml"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout == quoted[1]
