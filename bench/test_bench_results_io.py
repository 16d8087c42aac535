"""Saving and loading a result in each format (format version 2: atomic
saves, the CSV and Parquet tables listed with their sizes and SHA-256 and
checked on load): one 1,024-GPU, 7-day job with hourly checkpoints, 5,000
replicas (5,000 job rows, about 117,000 failure rows). Best of two rounds
of each; the loaded tables must be the saved ones, byte for byte.

Run: ``python -m pytest bench/test_bench_results_io.py -q``; the figures
are in the terminal summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import acesim as ace
import pytest
from acesim import results_io
from conftest import report

ROUNDS = 2


@pytest.fixture(scope="module")
def result() -> ace.SimulationResult:
    return ace.simulate(ace.Job(1024, 7 * ace.DAY, ace.HOUR), replicas=5_000, seed=1, threads=1)


@pytest.mark.parametrize("suffix", [".npz", ".parquet", ".csv", ".json"])
def test_save_and_load(
    benchmark: Any, tmp_path: Path, result: ace.SimulationResult, suffix: str
) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / f"x{suffix}"
    saves, loads = [], []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        files = results_io.save_result(result, path)
        t1 = time.perf_counter()
        back = results_io.load_result(path)
        t2 = time.perf_counter()
        saves.append(t1 - t0)
        loads.append(t2 - t1)
    assert back.jobs.tobytes() == result.jobs.tobytes()
    assert back.trace.tobytes() == result.trace.tobytes()
    # (x.csv is a hard link to the listed jobs table: its bytes count once)
    size = sum({f.stat().st_ino: f.stat().st_size for f in files}.values())
    benchmark.extra_info.update(save_s=min(saves), load_s=min(loads), bytes=size)
    benchmark.pedantic(lambda: None, rounds=1)
    report(
        f"results {suffix}: {result.jobs.size:,} job rows and {result.trace.size:,} failure "
        f"rows, {size / 1e6:.1f} MB in {len(files)} file(s): save {min(saves):.3f} s, "
        f"load {min(loads):.3f} s"
    )
