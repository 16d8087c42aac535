"""A real distributed sweep: ``dask scheduler`` and two ``dask worker``
processes on localhost, ``acesim sweep --dask`` against them, the results
byte-identical to a local run."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acesim import results_io
from acesim.simulation import TABLES

SWEEP = """\
name = "distributed grid"
chunk_replicas = 4
[base.run]
replicas = 10
seed = 21
record_events = true
[[base.jobs]]
gpus = 64
work = "2d"
checkpoint_interval = "1h"
[[base.jobs]]
gpus = 16
work = "1d"
checkpoint_interval = "young"
persist = "2min"
[base.fleet]
nodes = 12
spares = 1
repair = "4h"
node_failures = {law = "weibull", shape = 0.7, scale = "10d"}
[base.policy]
quarantine = {failures = 2, window = "7d", duration = "1d"}
[axes]
"jobs[0].checkpoint_interval" = ["young", "30min", "2h"]
fleet.spares = [0, 2]
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(address: str, workers: int, timeout: float = 60.0) -> None:
    from distributed import Client

    deadline = time.monotonic() + timeout
    while True:
        try:
            with Client(address, timeout=5) as client:
                client.wait_for_workers(workers, timeout=max(1.0, deadline - time.monotonic()))
                return
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("distributed", reason="the distributed sweep needs dask[distributed]")
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command (dask[distributed]) is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask")
    env = dict(os.environ)
    # The workers import acesim as this process does.
    import acesim

    where = str(Path(acesim.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (where, env.get("PYTHONPATH")) if p)
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=(logs / "scheduler.log").open("w"),
            stderr=subprocess.STDOUT,
            env=env,
        )
    ]
    try:
        for k in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        dask,
                        "worker",
                        address,
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        f"w{k}",
                    ],
                    stdout=(logs / f"worker{k}.log").open("w"),
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
        _wait_for(address, 2)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _sweep(path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acesim", "sweep", str(path), "--results", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_sweep_on_a_dask_cluster_is_byte_identical_to_a_local_one(
    cluster: str, tmp_path: Path
) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(SWEEP)
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    remote.mkdir()
    ran = _sweep(path, local)
    assert ran.returncode == 0, ran.stderr
    ran = _sweep(path, remote, "--dask", cluster)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("\n") >= 6  # a row per grid point
    points = sorted(p.name for p in local.glob("point-*.npz"))
    assert len(points) == 6 and points == sorted(p.name for p in remote.glob("point-*.npz"))
    for name in points:
        a = results_io.load_result(local / name)
        b = results_io.load_result(remote / name)
        for table in TABLES:
            ta, tb = getattr(a, table), getattr(b, table)
            assert (ta is None) == (tb is None), table
            if ta is not None:
                assert ta.dtype == tb.dtype and ta.tobytes() == tb.tobytes(), (name, table)
        assert a.placements is not None and a.placements.size > 0
    # The work really went to the workers: the scheduler saw both.
    from distributed import Client

    with Client(cluster, timeout=10) as client:
        assert len(client.scheduler_info()["workers"]) == 2
