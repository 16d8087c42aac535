"""The acesim pytest plugin, active wherever acesim is installed (entry
point ``pytest11``, name ``acesim``; ``-p no:acesim`` turns it off).

Fixtures:

``acesim_seed``
    A seed for the test: ``--acesim-seed N`` when given (every test gets
    ``N``), else a stable hash of the test's node id (the first 4 bytes of
    its SHA-256, little-endian: the same across runs, machines and Python
    versions as long as the test keeps its path and name). When a test that
    used it fails, its report gets a section ``acesim seed: N`` with the
    command line that replays it.

``fleet_model``
    A factory: ``fleet_model(fleet, failures=None, causes=None,
    policy=None, **more)`` builds ``acesim.FleetModel(fleet,
    failures=..., causes=..., policy=..., seed=acesim_seed, replica=0,
    **more)`` when called. The test is skipped (with the reason) when this
    acesim has no ``FleetModel``.

``recorded_trace``
    Regression files of failure traces:
    ``recorded_trace(source, nodes, replica=0, model=None, name=None)``
    returns a :class:`acesim.NodeTrace` to use as a fleet's
    ``node_failures``. On the first run (no file yet) or with
    ``--acesim-record``, ``source`` (a ``SimulationResult``, its ``.trace``,
    or a callable returning either: called only then) is stored with
    ``nodes`` in ``<test dir>/acesim_traces/`` (named as below); on
    later runs the file is read and ``source`` is not used, so the test
    replays the same failures whatever the simulator would now draw.
    The file name is ``<readable>.<hash>.npz``: ``<readable>`` the test's id
    in its folder (``test_file.py::Class::test[param]``) with ``.py::`` and
    ``::`` as ``.`` and every character but letters, digits and ``_.=+-``
    as ``_``; ``<hash>`` the first 8 hex digits of the SHA-256 of that id
    as it is, so that two tests never share a file (``test[a x]`` and
    ``test[a?x]`` read alike, not the same). ``name`` replaces the id (its
    readable form and its hash); a second call in one test without a name
    gets ``-2`` after the readable part, then ``-3``, ....
    ``model`` and ``replica`` go to ``NodeTrace`` (``model``: the law that
    produced the trace, for the MTBF the simulator reads; it is not stored).

    File format (version 1): a numpy ``.npz`` archive read with
    ``allow_pickle=False``, holding ``trace`` (the structured array
    ``res.trace`` as it was, every replica, fields ``replica event job node
    origin cause source time inter_failure``; files written before the
    padding field left the public dtype also hold ``pad_``), ``nodes`` (int64, the
    fleet's node count), ``format`` (the string ``"acesim-trace"``),
    ``version`` (int64 1) and ``acesim_version`` (the string of the acesim
    that wrote it). Only its node failures (``source == 1``) are replayed.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["TraceRecorder", "stable_seed"]

_SEED = pytest.StashKey[int]()
TRACE_DIR = "acesim_traces"
TRACE_FORMAT = "acesim-trace"
TRACE_VERSION = 1


def stable_seed(nodeid: str) -> int:
    """The default seed of a test: the first 4 bytes of the SHA-256 of its
    node id, little-endian (0 .. 2**32 - 1)."""
    return int.from_bytes(hashlib.sha256(nodeid.encode("utf-8")).digest()[:4], "little")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("acesim", "acesim simulation fixtures")
    group.addoption(
        "--acesim-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed for every test's acesim_seed fixture (default: a stable hash of the test id)",
    )
    group.addoption(
        "--acesim-record",
        action="store_true",
        default=False,
        help="re-record the failure traces of the recorded_trace fixture",
    )


def pytest_configure(config: pytest.Config) -> None:
    seed = config.getoption("acesim_seed")
    if seed is not None and not 0 <= seed < 2**64:
        raise pytest.UsageError(f"--acesim-seed must be in 0 .. 2**64 - 1, got {seed}")


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.getoption("acesim_seed")
    where = f"--acesim-seed {seed}" if seed is not None else "a stable hash of each test id"
    record = ", re-recording traces" if config.getoption("acesim_record") else ""
    return f"acesim: seeds from {where}{record}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    seed = item.stash.get(_SEED, None)
    if seed is not None and report.failed:
        report.sections.append(
            (
                f"acesim seed: {seed}",
                f"acesim seed: {seed}\nreplay: python -m pytest {shlex.quote(item.nodeid)} "
                f"--acesim-seed {seed}",
            )
        )


@pytest.fixture
def acesim_seed(request: pytest.FixtureRequest) -> int:
    """This test's seed (``--acesim-seed`` or a stable hash of its node id)."""
    option = request.config.getoption("acesim_seed")
    seed = int(option) if option is not None else stable_seed(request.node.nodeid)
    request.node.stash[_SEED] = seed
    return seed


@pytest.fixture
def fleet_model(acesim_seed: int) -> Callable[..., Any]:
    """A factory of ``acesim.FleetModel`` with this test's seed, replica 0."""

    def build(
        fleet: Any,
        failures: Any = None,
        causes: Any = None,
        policy: Any = None,
        **more: Any,
    ) -> Any:
        import acesim

        if "seed" in more:
            raise TypeError(
                "fleet_model takes its seed from acesim_seed (set it with --acesim-seed); "
                "build acesim.FleetModel directly for another seed"
            )
        more.setdefault("replica", 0)
        return acesim.FleetModel(
            fleet, failures=failures, causes=causes, policy=policy, seed=acesim_seed, **more
        )

    return build


class TraceRecorder:
    """The ``recorded_trace`` fixture's callable (see the module docstring)."""

    def __init__(self, directory: Path, test_id: str, record: bool) -> None:
        self.directory = directory
        #: the test's id in its folder (``test_file.py::test[param]``)
        self.test_id = test_id
        self.record = record
        self.calls = 0
        #: The files this test read or wrote, in call order.
        self.paths: list[Path] = []

    def path(self, name: str | None = None) -> Path:
        """The file a call with ``name`` uses (the next unnamed call's when None)."""
        if name is None:
            n = self.calls + 1
            return self.directory / _file_name(self.test_id, "" if n == 1 else f"-{n}")
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty string or None")
        return self.directory / _file_name(name, "")

    def __call__(
        self,
        source: Any,
        nodes: int,
        replica: int = 0,
        model: Any = None,
        name: str | None = None,
    ) -> Any:
        import acesim
        from acesim._validation import integer

        nodes_ = integer("nodes", nodes, minimum=1)
        path = self.path(name)
        if name is None:
            self.calls += 1
        if self.record or not path.exists():
            trace = _trace_of(source() if callable(source) else source)
            _write(path, trace, nodes_)
        stored, stored_nodes = _read(path)
        if stored_nodes != nodes_:
            raise ValueError(
                f"{path} was recorded for {stored_nodes} nodes, the test asks for {nodes_}; "
                "re-record it with --acesim-record"
            )
        self.paths.append(path)
        return acesim.NodeTrace(stored, nodes_, replica=replica, model=model)


@pytest.fixture
def recorded_trace(request: pytest.FixtureRequest) -> TraceRecorder:
    """Record a failure trace next to the test on the first run, replay it after."""
    test_path = Path(request.node.path)
    parts = request.node.nodeid.split("::")[1:] or [request.node.name]
    # the id in the test's folder: the same whatever directory pytest runs from
    test_id = "::".join([test_path.name, *parts])
    return TraceRecorder(
        test_path.parent / TRACE_DIR, test_id, bool(request.config.getoption("acesim_record"))
    )


def _file_name(test_id: str, call: str) -> str:
    """``<readable><call>.<hash>.npz`` (see the module docstring): the
    hash of the whole id makes the names of two ids differ even where their
    readable forms are the same."""
    readable = re.sub(r"[^A-Za-z0-9_.=+-]", "_", test_id.replace(".py::", ".").replace("::", "."))
    digest = hashlib.sha256(test_id.encode("utf-8")).hexdigest()[:8]
    return f"{readable}{call}.{digest}.npz"


def _trace_of(source: Any) -> Any:
    import numpy as np

    from acesim.simulation import SimulationResult

    trace = source.trace if isinstance(source, SimulationResult) else source
    if not isinstance(trace, np.ndarray) or trace.dtype.names is None:
        raise TypeError(
            "recorded_trace: source must be a SimulationResult, its .trace, or a callable "
            f"returning one, got {type(source).__name__}"
        )
    return trace


def _write(path: Path, trace: Any, nodes: int) -> None:
    import numpy as np

    import acesim
    from acesim import _atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    # Atomic (a temporary file renamed): parallel workers never read half a file.
    _atomic.replace_file(
        path,
        lambda f: np.savez(
            f,
            trace=np.ascontiguousarray(trace),
            nodes=np.int64(nodes),
            format=np.str_(TRACE_FORMAT),
            version=np.int64(TRACE_VERSION),
            acesim_version=np.str_(acesim.__version__),
        ),
    )


def _read(path: Path) -> tuple[Any, int]:
    import zipfile
    import zlib

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            if "format" not in data.files or str(data["format"]) != TRACE_FORMAT:
                raise ValueError(
                    f"{path} is not an acesim trace file; re-record it with --acesim-record"
                )
            version = int(data["version"])
            if version != TRACE_VERSION:
                raise ValueError(
                    f"{path} has trace format version {version}; this acesim reads "
                    f"{TRACE_VERSION} (re-record it with --acesim-record)"
                )
            return data["trace"], int(data["nodes"])
    except (OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(
            f"{path} is not a readable trace file (truncated or damaged?): {exc}; "
            "re-record it with --acesim-record"
        ) from None
