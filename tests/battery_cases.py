"""The input battery's machinery: the data model of a case, the plausibility
checks and helpers the cases use, and the worker process that runs them.

A case (registered by ``test_input_battery.py`` with :func:`add`) is
``Case(id, build, expect)``: ``build(ctx)`` makes the call (``ctx`` gives it a
folder of its own for the files it writes); ``expect`` is :func:`raises` (the
exception type and a substring of its message that names the offending
parameter) or :func:`accepted` (a check that the result is plausible, not
merely that nothing was raised). A case that shows a bug in acesim carries
``finding``: it expects the correct behaviour and the test marks it
``xfail(strict=True)`` until the library is fixed.

The cases run in a worker process (``python battery_cases.py ROOT MODULE``,
started by :class:`Runner`) that reads one case id per line on stdin and
writes one JSON outcome per line, so that a crash or a hang fails that case
instead of the test run; the runner times each case and restarts the worker
when it dies or hangs.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acesim as ace
import acesim.cli
import numpy as np
from acesim.simulation import BUCKETS

NAN = math.nan
INF = math.inf
BAD = (ValueError, TypeError)
#: Seconds a case may take before it counts as a hang.
TIMEOUT = 20.0
#: The outcome kinds.
NAMED, ACCEPTED, OTHER = "named", "accepted", "other"


# --------------------------------------------------------------------------- the data model


@dataclass(frozen=True)
class Raises:
    """The call must raise ``exc`` with ``match`` in its message."""

    exc: type[BaseException] | tuple[type[BaseException], ...]
    match: str

    def describe(self) -> str:
        names = self.exc if isinstance(self.exc, tuple) else (self.exc,)
        return f"raises {'/'.join(e.__name__ for e in names)} naming {self.match!r}"


@dataclass(frozen=True)
class Accepted:
    """The call must return a result that ``check`` finds plausible (it
    raises AssertionError, or returns False, when it is not)."""

    check: Callable[[Any], Any]

    def describe(self) -> str:
        return f"accepted ({getattr(self.check, '__name__', 'check')})"


def raises(exc: type[BaseException] | tuple[type[BaseException], ...], match: str) -> Raises:
    return Raises(exc, match)


def accepted(check: Callable[[Any], Any]) -> Accepted:
    return Accepted(check)


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Ctx], Any]
    expect: Raises | Accepted
    finding: str | None = None
    timeout: float = TIMEOUT


class Ctx:
    """What a case's code gets: a folder of its own under the run's root."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name

    def write(self, name: str, data: str | bytes) -> Path:
        p = self.path(name)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")
        return p


CASES: dict[str, Case] = {}
#: Cases that check the harness itself (a crash, a hang): not part of the battery.
SELFTEST: dict[str, Case] = {}


def add(
    case_id: str,
    build: Callable[[Ctx], Any],
    expect: Raises | Accepted,
    *,
    finding: str | None = None,
    timeout: float = TIMEOUT,
    table: dict[str, Case] | None = None,
) -> None:
    registry = CASES if table is None else table
    if case_id in CASES or case_id in SELFTEST:
        raise AssertionError(f"duplicate case id {case_id!r}")
    registry[case_id] = Case(case_id, build, expect, finding, timeout)


def lookup(case_id: str) -> Case:
    return CASES[case_id] if case_id in CASES else SELFTEST[case_id]


# --------------------------------------------------------------------------- checks


def check_rows(rows: Any) -> None:
    """Job rows: every bucket finite and >= 0, adding up to wall; ettr is
    productive / wall (NaN for a row that never ran)."""
    assert rows.size > 0, "no rows"
    total = np.zeros(rows.shape)
    for bucket in BUCKETS:
        v = rows[bucket]
        assert np.all(np.isfinite(v)), f"{bucket} not finite: {v}"
        assert np.all(v >= 0), f"{bucket} negative: {v}"
        total = total + v
    wall = rows["wall"]
    assert np.all(np.isfinite(wall)) and np.all(wall >= 0), f"wall: {wall}"
    assert np.allclose(total, wall, rtol=1e-9, atol=1e-6), f"buckets {total} != wall {wall}"
    ran = wall > 0
    ettr = rows["ettr"]
    assert np.all(np.isnan(ettr[~ran])), "ettr of a row that never ran"
    assert np.all((ettr[ran] >= 0) & (ettr[ran] <= 1)), f"ettr out of [0, 1]: {ettr}"
    assert np.allclose(ettr[ran], rows["productive"][ran] / wall[ran], rtol=1e-9)


def sim_ok(
    rows: int | None = None,
    *,
    completed: bool | None = None,
    then: Callable[[Any], Any] | None = None,
) -> Callable[[Any], Any]:
    """A SimulationResult whose rows are plausible (``rows`` of them)."""

    def sim_ok(res: Any) -> None:
        assert isinstance(res, ace.SimulationResult), type(res)
        check_rows(res.jobs)
        if rows is not None:
            assert res.jobs.size == rows, f"{res.jobs.size} rows, expected {rows}"
        if completed is not None:
            assert bool(np.all(res.jobs["completed"])) == completed, res.jobs["completed"]
        fleet = res.fleet["ettr"]
        assert np.all(np.isnan(fleet) | ((fleet >= 0) & (fleet <= 1))), fleet
        if then is not None:
            verdict = then(res)
            assert verdict is None or bool(verdict), "the case's own check failed"

    return sim_ok


def batch_ok(points: int, replicas: int) -> Callable[[Any], Any]:
    def batch_ok(res: Any) -> None:
        assert isinstance(res, ace.BatchResult)
        assert (res.points, res.replicas) == (points, replicas)
        check_rows(res.jobs)
        pooled = res.pooled_ettr()
        assert pooled.shape == (points,)
        assert np.all((pooled >= 0) & (pooled <= 1)), pooled

    return batch_ok


def draws_ok(
    n: int, lo: float = 0.0, hi: float = INF, *, inf: bool = False
) -> Callable[[Any], Any]:
    """``n`` float64 draws in [lo, hi], never NaN (inf only with ``inf``)."""

    def draws_ok(x: Any) -> None:
        assert isinstance(x, np.ndarray) and x.dtype == np.float64, type(x)
        assert x.shape == (n,), x.shape
        assert not np.isnan(x).any(), "NaN draws"
        if not inf:
            assert np.isfinite(x).all(), "inf draws"
        assert np.all((x >= lo) & (x <= hi)), f"draws outside [{lo}, {hi}]: {x[:8]}"

    return draws_ok


def probabilities(shape: tuple[int, ...] | None = None) -> Callable[[Any], Any]:
    """cdf / sf values: in [0, 1] (a float for ``shape=None``)."""

    def probabilities(p: Any) -> None:
        if shape is None:
            assert isinstance(p, float), type(p)
        else:
            assert isinstance(p, np.ndarray) and p.shape == shape, p
        a = np.asarray(p)
        assert np.all((a >= 0) & (a <= 1)), a

    return probabilities


def equals(expected: Any, rel: float = 1e-12) -> Callable[[Any], Any]:
    def equals(value: Any) -> None:
        if isinstance(expected, float) and math.isinf(expected):
            assert value == expected, value
        else:
            assert math.isclose(float(value), expected, rel_tol=rel, abs_tol=1e-300), (
                f"{value!r} != {expected!r}"
            )

    return equals


def law_ok(mean: float | None = None, rel: float = 1e-12) -> Callable[[Any], Any]:
    """A Distribution whose mean is ``mean`` (finite or inf, never NaN) and
    whose draws are plausible."""

    def law_ok(d: Any) -> None:
        assert isinstance(d, ace.Distribution), type(d)
        m = d.mean()
        assert not math.isnan(m) and m >= 0, f"mean {m!r}"
        if mean is not None:
            equals(mean, rel)(m)
        x = d.sample(64, seed=1)
        assert x.dtype == np.float64 and x.shape == (64,)
        assert not np.isnan(x).any() and np.all(x >= 0), x[:8]

    return law_ok


def true(value: Any) -> None:
    assert value, value


def check(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn(result)`` must be truthy (a lambda with a name in failures)."""

    def check(value: Any) -> None:
        assert fn(value), f"implausible: {value!r}"[:400]

    return check


# --------------------------------------------------------------------------- helpers


class CliError(Exception):
    """``acesim.cli.main`` exited with status 2 (a usage or input error);
    the message is its stderr."""


class CliFailure(Exception):
    """``acesim.cli.main`` exited with a status other than 0 and 2."""


@dataclass(frozen=True)
class CliOutput:
    code: int
    out: str
    err: str


def cli(*argv: Any) -> CliOutput:
    """``acesim ARGV`` in this process, its output captured; CliError for
    exit status 2."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = acesim.cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    result = CliOutput(int(code), out.getvalue(), err.getvalue())
    if result.code == 2:
        raise CliError(result.err.strip() or result.out.strip())
    if result.code != 0:
        raise CliFailure(f"exit {result.code}: {result.err.strip()}")
    return result


def module_cli(*argv: Any) -> CliOutput:
    """``python -m acesim ARGV`` as a subprocess (the real entry point)."""
    proc = subprocess.run(
        [sys.executable, "-m", "acesim", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    result = CliOutput(proc.returncode, proc.stdout, proc.stderr)
    if result.code == 2:
        raise CliError(result.err.strip())
    if result.code != 0:
        raise CliFailure(f"exit {result.code}: {result.err.strip()[-2000:]}")
    return result


def cli_out(*needles: str) -> Callable[[Any], Any]:
    def cli_out(res: Any) -> None:
        assert isinstance(res, CliOutput) and res.code == 0, res
        for needle in needles:
            assert needle in res.out, f"{needle!r} not in output: {res.out[:500]}"

    return cli_out


class ProtocolReply(Exception):
    """An error reply of ``acesim serve``; the message holds its type,
    field and message."""


class InternalReply(Exception):
    """An InternalError reply of ``acesim serve`` (a bug by its own account)."""


def serve(*requests: Any) -> list[dict[str, Any]]:
    """The replies of one Server to the requests (dicts are sent as JSON);
    the first error reply is raised."""
    from acesim.serve import Server

    server = Server()
    replies = []
    for i, request in enumerate(requests, start=1):
        if isinstance(request, dict):
            request = json.dumps({"id": i, **request})
        reply = server.reply(request)
        if not reply.get("ok"):
            error = reply.get("error") or {}
            text = f"{error.get('type')}: field {error.get('field')!r}: {error.get('message')}"
            if error.get("type") == "InternalError":
                raise InternalReply(text)
            raise ProtocolReply(text)
        replies.append(reply)
    return replies


def job(**kw: Any) -> ace.Job:
    args: dict[str, Any] = dict(
        gpus=8, work=3600.0, checkpoint_interval=600.0, init=1.0, save=1.0, load=1.0
    )
    args.update(kw)
    return ace.Job(**args)


EXP = ace.Exponential(1e4)
J = job()
#: A small scenario and space for ``ace.tune``'s cases.
TUNE_BASE = ace.Scenario.from_dict(
    {
        "jobs": [{"gpus": 8, "work": "6h", "checkpoint_interval": "1h"}],
        "fleet": {"nodes": 3, "node_failures": {"law": "exponential", "mean": "2d"}},
    }
)
TUNE_SPACE = {"fleet.spares": [0, 1]}
#: A fleet whose nodes fail often enough for every policy decision to be asked.
FLEET = dict(nodes=4, spares=1, repair=600.0, node_failures=ace.Exponential(20_000.0))
BIG = ace.Job(16, 12 * 3600.0, 1800.0, init=1.0, save=1.0, load=1.0)


def fleet(**kw: Any) -> ace.Fleet:
    return ace.Fleet(**{**FLEET, **kw})


def sim(**kw: Any) -> Any:
    """``simulate`` of the small job with job-level failures, two replicas."""
    args: dict[str, Any] = dict(jobs=J, failures=EXP, replicas=2, horizon=1e5, threads=1)
    args.update(kw)
    return ace.simulate(**args)


def fleet_sim(policy: ace.Policy, **kw: Any) -> Any:
    """``simulate`` of a two-node job on the failing fleet under ``policy``."""
    args: dict[str, Any] = dict(
        jobs=BIG, fleet=fleet(), policy=policy, replicas=2, seed=1, threads=1, horizon=5 * 86400.0
    )
    args.update(kw)
    return ace.simulate(**args)


def on_failure(fn: Callable[[Any], Any], **kw: Any) -> Any:
    return fleet_sim(ace.Policy(on_failure=fn), **kw)


def place(fn: Callable[[Any, Any], Any], **kw: Any) -> Any:
    return fleet_sim(ace.Policy(place=fn), **kw)


def scipy_stats() -> Any:
    from scipy import stats

    return stats


def columns(**cols: Any) -> Any:
    """A structured array with these columns."""
    names = list(cols)
    arrays = [np.asarray(v) for v in cols.values()]
    dtype = [(n, a.dtype) for n, a in zip(names, arrays, strict=True)]
    out = np.zeros(len(arrays[0]), dtype=dtype)
    for n, a in zip(names, arrays, strict=True):
        out[n] = a
    return out


def unaligned(values: Any, dtype: Any) -> Any:
    data = np.ascontiguousarray(values, dtype)
    raw = np.zeros(data.nbytes + 1, np.uint8)
    raw[1:] = np.frombuffer(data.tobytes(), np.uint8)
    return np.frombuffer(raw.data, dtype=dtype, count=data.size, offset=1)


GARBAGE = bytes(range(256)) * 8 + b"\x00\xff\xfe\xfd" * 64


# --------------------------------------------------------------------------- the worker


def outcome(case: Case, ctx: Ctx) -> dict[str, str]:
    """Run one case and classify what happened."""
    expect = case.expect
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = case.build(ctx)
    except (Exception, SystemExit) as exc:
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(expect, Raises):
            if isinstance(exc, expect.exc) and expect.match in str(exc):
                return {"kind": NAMED, "detail": text[:2000]}
            return {"kind": OTHER, "detail": f"wrong error: {text}"[:4000]}
        tb = "".join(traceback.format_exception(exc)[-6:])
        return {"kind": OTHER, "detail": f"raised {text}\n{tb}"[:4000]}
    if isinstance(expect, Raises):
        return {"kind": OTHER, "detail": f"accepted, returned {result!r}"[:2000]}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdict = expect.check(result)
    except Exception as exc:
        return {"kind": OTHER, "detail": f"implausible result: {type(exc).__name__}: {exc}"[:4000]}
    if verdict is not None and not bool(verdict):
        return {"kind": OTHER, "detail": f"implausible result: {result!r}"[:2000]}
    return {"kind": ACCEPTED, "detail": repr(result)[:300]}


def _safe(case_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)[:120]


#: Whether the core runs under AddressSanitizer (.ci/sanitize preloads it):
#: address-space caps are then left off.
ADDRESS_SANITIZER = "libasan" in os.environ.get("LD_PRELOAD", "")


def worker(root: str) -> None:
    """Answer one case per stdin line ({"id": ...}) with one JSON line on
    the original stdout; whatever the cases print goes to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    with contextlib.suppress(Exception):
        import resource

        if not ADDRESS_SANITIZER:  # (its shadow memory reserves terabytes of address space)
            limit = 8 << 30  # a runaway allocation is a MemoryError, not a swapping machine
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core files from a crash
    base = Path(root)
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        case = lookup(request["id"])
        ctx = Ctx(base / _safe(case.id))
        answer = outcome(case, ctx)
        answer["id"] = case.id
        sys.stdout.flush()
        sys.stderr.flush()
        proto.write(json.dumps(answer) + "\n")


class Runner:
    """The parent's side: one worker process, restarted when it dies or hangs."""

    def __init__(self, root: Path, module: str) -> None:
        self.root = root
        self.module = module
        self.results: dict[str, dict[str, str]] = {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = b""
        self.starts = 0
        self.log: Path | None = None

    def _start(self) -> None:
        self.starts += 1
        self.log = self.root / f"worker-{self.starts}.log"
        from workers import worker_path

        tests = str(Path(__file__).resolve().parent)
        with worker_path():  # the worker imports this acesim
            env = dict(os.environ, MPLBACKEND="Agg", CI="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tests, env.get("PYTHONPATH", "")) if p)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-X", "faulthandler", __file__, str(self.root), self.module],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self.root,
                env=env,
                bufsize=0,
                start_new_session=True,
            )
        self.buffer = b""
        line = self._line(120.0)
        if not line or not json.loads(line).get("ready"):
            tail = self._log_tail()
            self.close()
            raise RuntimeError(f"the battery worker did not start: {tail}")

    def _line(self, timeout: float) -> bytes | None:
        """The next line from the worker; b"" at its end, None on timeout."""
        import select
        import time

        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _log_tail(self, size: int = 3000) -> str:
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_bytes()[-size:].decode("utf-8", "replace")

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(Exception):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill(proc)
        if proc.stdout is not None:
            proc.stdout.close()

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def run(self, case_id: str) -> dict[str, str]:
        """The outcome of one case (run once per process)."""
        if case_id in self.results:
            return self.results[case_id]
        case = lookup(case_id)
        if self.proc is None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps({"id": case_id}) + "\n").encode())
            line = self._line(case.timeout)
        except BrokenPipeError:
            line = b""
        if line is None:
            self._kill(self.proc)
            self.close()
            out = {"kind": OTHER, "detail": f"hang: no answer within {case.timeout:g} s"}
        elif line == b"":
            code = self.proc.wait()
            self.close()
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            out = {
                "kind": OTHER,
                "detail": f"crash: the worker died ({how}); its stderr ends:\n{self._log_tail()}",
            }
        else:
            out = json.loads(line)
        self.results[case_id] = out
        return out


if __name__ == "__main__":
    import importlib

    import battery_cases  # the registry of the importable module, not of __main__

    importlib.import_module(sys.argv[2])  # registers the cases
    battery_cases.worker(sys.argv[1])
