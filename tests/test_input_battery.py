"""A data-driven battery of bad and odd inputs over every public entry point.

Each case (see ``battery_cases``) is an id, the code of the call and what
must happen: a ValueError/TypeError (or the entry point's own error type)
whose message names the offending parameter, or a result that passes a
plausibility check. The cases run in a worker process, one at a time with a
timeout, so that a crash or a hang fails that case only. Cases that show a
bug in acesim expect the correct behaviour and are marked
``xfail(strict=True, reason="FINDING: ...")``.

``python -m pytest -s tests/test_input_battery.py`` prints the counts of
named errors, plausible results and everything else.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import math
import pickle
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from decimal import Decimal
from fractions import Fraction
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import fit, history, workloads
from acesim.compiled import FailurePolicyFn
from acesim.history import HistoryFormatError
from acesim.scenario import ScenarioError, load_scenario
from acesim.units import parse_duration
from battery_cases import (
    ACCEPTED,
    ADDRESS_SANITIZER,
    BAD,
    BIG,
    CASES,
    EXP,
    GARBAGE,
    INF,
    NAMED,
    NAN,
    OTHER,
    SELFTEST,
    TUNE_BASE,
    TUNE_SPACE,
    CliError,
    J,
    ProtocolReply,
    Raises,
    Runner,
    accepted,
    add,
    batch_ok,
    check,
    cli,
    cli_out,
    columns,
    draws_ok,
    equals,
    fleet,
    fleet_sim,
    job,
    law_ok,
    module_cli,
    on_failure,
    place,
    probabilities,
    raises,
    scipy_stats,
    serve,
    sim,
    sim_ok,
    true,
    unaligned,
)

# =========================================================================== distributions


def _constructors() -> None:
    # numpy scalars, fractions, decimals, 0-d arrays, far and tiny values
    add(
        "Exponential-np.float64-nan",
        lambda c: ace.Exponential(np.float64("nan")),
        raises(ValueError, "mean"),
    )
    add(
        "Exponential-np.float32-inf",
        lambda c: ace.Exponential(np.float32("inf")),
        raises(ValueError, "mean"),
    )
    add("Exponential-np.float16", lambda c: ace.Exponential(np.float16(2.0)), accepted(law_ok(2.0)))
    add("Exponential-Fraction", lambda c: ace.Exponential(Fraction(1, 3)), accepted(law_ok(1 / 3)))
    add("Exponential-Decimal", lambda c: ace.Exponential(Decimal("1.5")), raises(TypeError, "mean"))
    add("Exponential-0d-array", lambda c: ace.Exponential(np.array(5.0)), raises(TypeError, "mean"))
    add("Exponential-int-2**70", lambda c: ace.Exponential(2**70), accepted(law_ok(float(2**70))))
    add("Exponential-subnormal", lambda c: ace.Exponential(5e-324), accepted(law_ok(5e-324)))
    add(
        "Exponential-1e308",
        lambda c: ace.Exponential(1e308).sample(64, seed=3),
        accepted(draws_ok(64, inf=True)),
    )
    add("Exponential-missing-mean", lambda c: ace.Exponential(), raises(TypeError, "mean"))
    add(
        "Exponential-unknown-keyword",
        lambda c: ace.Exponential(mean=1.0, scale=2.0),
        raises(TypeError, "scale"),
    )
    add(
        "Exponential-np.int64-negative",
        lambda c: ace.Exponential(np.int64(-3)),
        raises(ValueError, "mean"),
    )
    add("Constant-negative-zero", lambda c: ace.Constant(-0.0), accepted(law_ok(0.0)))
    add(
        "Constant-np.float32-nan",
        lambda c: ace.Constant(np.float32("nan")),
        raises(ValueError, "value"),
    )
    add(
        "Constant-1e308-draws",
        lambda c: ace.Constant(1e308).sample(4),
        accepted(check(lambda x: np.all(x == 1e308))),
    )
    add("Constant-missing", lambda c: ace.Constant(), raises(TypeError, "value"))
    add("Weibull-missing-scale", lambda c: ace.Weibull(1.0), raises(TypeError, "scale"))
    add(
        "Weibull-unknown-keyword",
        lambda c: ace.Weibull(shape=1.0, scale=1.0, loc=0.0),
        raises(TypeError, "loc"),
    )
    add("Weibull-tiny-shape", lambda c: ace.Weibull(1e-3, 1.0), raises(ValueError, "shape"))
    add("Weibull-huge-shape", lambda c: ace.Weibull(1e300, 5.0), accepted(law_ok(5.0, rel=1e-9)))
    add(
        "Weibull-np.float32-scale",
        lambda c: ace.Weibull(0.7, np.float32(3600.0)),
        accepted(law_ok()),
    )
    add("Weibull-scale-2**70", lambda c: ace.Weibull(2.0, 2**70), accepted(law_ok()))
    add("LogNormal-mu-1e3", lambda c: ace.LogNormal(1e3, 1.0), raises(ValueError, "mu"))
    add("LogNormal-mu--1e3", lambda c: ace.LogNormal(-1e3, 1.0), accepted(law_ok(0.0)))
    add("LogNormal-sigma-1e3", lambda c: ace.LogNormal(0.0, 1e3), raises(ValueError, "sigma"))
    add(
        "LogNormal-mu-np.int64",
        lambda c: ace.LogNormal(np.int64(2), 0.5),
        accepted(law_ok(math.exp(2.125))),
    )
    add("LogNormal-mu-string", lambda c: ace.LogNormal("2", 0.5), raises(TypeError, "mu"))
    add("LogNormal-missing-sigma", lambda c: ace.LogNormal(0.0), raises(TypeError, "sigma"))
    add("Gamma-tiny-shape", lambda c: ace.Gamma(1e-3, 1.0), accepted(law_ok(1e-3)))
    add("Gamma-huge-shape", lambda c: ace.Gamma(1e12, 1.0), accepted(law_ok(1e12, rel=1e-9)))
    add("Gamma-scale-Fraction", lambda c: ace.Gamma(2.0, Fraction(1, 2)), accepted(law_ok(1.0)))
    add("Gamma-shape-Decimal", lambda c: ace.Gamma(Decimal(2), 1.0), raises(TypeError, "shape"))

    # Mixture: odd containers, nesting, extreme weights
    add(
        "Mixture-ndarray-pair",
        lambda c: ace.Mixture([np.array([1.0, EXP], dtype=object)]),
        raises(TypeError, "components[0]"),
    )
    add("Mixture-set-of-pairs", lambda c: ace.Mixture({(1.0, EXP)}), accepted(law_ok(1e4)))
    add("Mixture-dict", lambda c: ace.Mixture({1.0: EXP}), raises(TypeError, "components[0]"))
    add("Mixture-nested", lambda c: ace.Mixture(
        [(1.0, ace.Mixture([(1.0, ace.Constant(2.0)), (1.0, ace.Constant(4.0))])),
         (2.0, ace.Constant(6.0))]), accepted(law_ok(5.0)))  # fmt: skip
    add(
        "Mixture-of-ScaleAware",
        lambda c: ace.Mixture([(1.0, ace.ScaleAware(EXP, 8.0))]).mean(16),
        accepted(equals(5000.0)),
    )
    add(
        "Mixture-np.float32-nan-weight",
        lambda c: ace.Mixture([(np.float32("nan"), EXP)]),
        raises(ValueError, "components[0]"),
    )
    add(
        "Mixture-weight-2**70",
        lambda c: ace.Mixture([(2**70, EXP), (1, ace.Constant(1.0))]),
        accepted(law_ok(1e4, rel=1e-9)),
    )
    add(
        "Mixture-subnormal-weight",
        lambda c: ace.Mixture([(5e-324, ace.Constant(7.0))]),
        accepted(law_ok(7.0)),
    )
    add(
        "Mixture-10000-components",
        lambda c: ace.Mixture([(1.0, ace.Constant(float(i))) for i in range(10_000)]),
        accepted(law_ok(4999.5, rel=1e-9)),
    )
    add(
        "Mixture-of-Replay",
        lambda c: ace.Mixture([(1.0, ace.Replay([1.0, 2.0]))]),
        accepted(law_ok()),
    )
    add(
        "Mixture-weight-string",
        lambda c: ace.Mixture([("1", EXP)]),
        raises(TypeError, "components[0]"),
    )
    add(
        "Mixture-scipy-component",
        lambda c: ace.Mixture([(1.0, scipy_stats().expon(scale=5.0))]),
        accepted(law_ok(5.0)),
    )
    add(
        "Mixture-scipy-norm-component",
        lambda c: ace.Mixture([(1.0, scipy_stats().norm())]),
        raises(ValueError, "components[0]"),
    )

    # sample laws: dtypes, views, odd sequences
    add(
        "Empirical-non-contiguous",
        lambda c: ace.Empirical(np.arange(10.0)[::2]),
        accepted(law_ok(4.0)),
    )
    add(
        "Empirical-float16",
        lambda c: ace.Empirical(np.array([1, 2, 3], dtype=np.float16)),
        accepted(law_ok(2.0)),
    )
    add(
        "Empirical-uint64-max",
        lambda c: ace.Empirical(np.array([2**64 - 1], dtype=np.uint64)),
        accepted(law_ok(float(2**64 - 1))),
    )
    add(
        "Empirical-big-endian",
        lambda c: ace.Empirical(np.array([1.0, 2.0], dtype=">f8")),
        accepted(law_ok(1.5)),
    )
    add(
        "Empirical-unaligned",
        lambda c: ace.Empirical(unaligned([1.0, 2.0, 6.0], np.float64)),
        accepted(law_ok(3.0)),
    )
    add(
        "Empirical-column-view",
        lambda c: ace.Empirical(np.arange(6.0).reshape(3, 2)[:, 1]),
        accepted(law_ok(3.0)),
    )
    add("Empirical-range", lambda c: ace.Empirical(range(5)), accepted(law_ok(2.0)))
    add(
        "Empirical-str-array",
        lambda c: ace.Empirical(np.array(["1", "2"])),
        raises(TypeError, "samples"),
    )
    add(
        "Empirical-object-array",
        lambda c: ace.Empirical(np.array([1, 2], dtype=object)),
        raises(TypeError, "samples"),
    )
    add(
        "Empirical-datetime64",
        lambda c: ace.Empirical(np.array(["2024-01-01"], "datetime64[s]")),
        raises(TypeError, "samples"),
    )
    add("Empirical-2x2", lambda c: ace.Empirical(np.ones((2, 2))), raises(ValueError, "samples"))
    add("Empirical-huge-int", lambda c: ace.Empirical([1, 10**400]), raises(BAD, "samples"))
    add(
        "Empirical-mean-of-huge-values",
        lambda c: ace.Empirical([1e308, 1e308]).mean(),
        accepted(equals(1e308)),
    )
    add(
        "Empirical-int-2**70",
        lambda c: ace.Empirical([1, 2**70]),
        accepted(law_ok((1 + 2**70) / 2)),
    )
    add(
        "Empirical-pandas-series",
        lambda c: ace.Empirical(__import__("pandas").Series([2.0, 4.0])),
        accepted(law_ok(3.0)),
    )
    add(
        "BlockBootstrap-non-contiguous",
        lambda c: ace.BlockBootstrap(np.arange(12.0)[::3], block=np.int8(2)),
        accepted(law_ok(4.5)),
    )
    add(
        "BlockBootstrap-block-np.uint64-too-big",
        lambda c: ace.BlockBootstrap([1.0, 2.0], block=np.uint64(2**63)),
        raises(ValueError, "block"),
    )
    add(
        "BlockBootstrap-missing-block",
        lambda c: ace.BlockBootstrap([1.0, 2.0]),
        raises(TypeError, "block"),
    )
    add(
        "Replay-all-inf",
        lambda c: ace.Replay([INF, INF]).sample(3),
        accepted(check(lambda x: np.all(np.isinf(x)))),
    )
    add(
        "Replay-float32",
        lambda c: ace.Replay(np.array([1.5, 2.5], np.float32)).sample(3),
        accepted(check(lambda x: x.tolist() == [1.5, 2.5, INF])),
    )
    add(
        "Replay-negative-zero",
        lambda c: ace.Replay([-0.0, 1.0]).sample(2),
        accepted(check(lambda x: x.tolist() == [0.0, 1.0])),
    )

    # ScaleAware: nesting and extreme exponents
    add(
        "ScaleAware-nested",
        lambda c: ace.ScaleAware(ace.ScaleAware(EXP, 8.0), 8.0).mean(16),
        accepted(equals(2500.0)),
    )
    add(
        "ScaleAware-ref_gpus-2**70",
        lambda c: ace.ScaleAware(EXP, 2**70).mean(8),
        accepted(equals(1e4 * 2**70 / 8)),
    )
    add(
        "ScaleAware-exponent-1e308",
        lambda c: ace.ScaleAware(EXP, 8, exponent=1e308).mean(16),
        accepted(equals(0.0)),
    )
    add(
        "ScaleAware-exponent--1e308",
        lambda c: ace.ScaleAware(EXP, 8, exponent=-1e308).mean(16),
        accepted(equals(INF)),
    )
    add(
        "ScaleAware-base-scipy",
        lambda c: ace.ScaleAware(scipy_stats().expon(scale=80.0), 8.0),
        accepted(law_ok(80.0)),
    )
    add(
        "ScaleAware-base-scipy-unfrozen",
        lambda c: ace.ScaleAware(scipy_stats().expon, 8.0),
        raises(TypeError, "base"),
    )
    add(
        "ScaleAware-of-Replay",
        lambda c: ace.ScaleAware(ace.Replay([8.0]), 8.0).sample(2, gpus=16),
        accepted(check(lambda x: x.tolist() == [4.0, INF])),
    )
    add("ScaleAware-missing-ref_gpus", lambda c: ace.ScaleAware(EXP), raises(TypeError, "ref_gpus"))

    # from_failure_times
    for label, value, expect in [
        ("one", [5.0], raises(ValueError, "timestamps")),
        ("unsorted", [3.0, 1.0, 2.0], accepted(law_ok(1.0))),
        ("nan", [1.0, NAN], raises(ValueError, "timestamps")),
        ("negative", [-5.0, 5.0], accepted(law_ok(10.0))),
        ("string", "abc", raises(TypeError, "timestamps")),
        ("bools", [True, False], raises(TypeError, "timestamps")),
        ("datetime64", np.array(["2024-01-01", "2024-01-02"], "datetime64[s]"),
         raises(TypeError, "timestamps")),
        ("equal", [7.0, 7.0, 7.0], accepted(law_ok(0.0))),
        ("2d", [[1.0, 2.0], [3.0, 4.0]], raises(ValueError, "timestamps")),
        ("huge-int", [1, 10**400], raises(BAD, "timestamps")),
        ("none", None, raises(TypeError, "timestamps")),
        ("complex", [1j, 2j], raises(TypeError, "timestamps")),
        ("non-contiguous", np.arange(20.0)[::4], accepted(law_ok(4.0))),
    ]:  # fmt: skip
        add(
            f"from_failure_times-{label}",
            lambda c, v=value: ace.Empirical.from_failure_times(v),
            expect,
        )


def _from_csv() -> None:
    def csv(text: str | bytes, **kw: Any) -> Any:
        def build(c: Any) -> Any:
            return ace.Empirical.from_csv(c.write("gaps.csv", text), **kw)

        return build

    add(
        "from_csv-missing-file",
        lambda c: ace.Empirical.from_csv(c.path("nope.csv")),
        raises(FileNotFoundError, "nope.csv"),
    )
    add(
        "from_csv-directory",
        lambda c: ace.Empirical.from_csv(c.path("x").parent),
        raises(ValueError, "is a directory"),
    )
    add("from_csv-empty-file", csv(""), raises(ValueError, "path"))
    add(
        "from_csv-binary-garbage",
        csv(GARBAGE),
        raises(ValueError, "path"),
    )
    add("from_csv-header-only", csv("gap\n", column="gap"), raises(ValueError, "column 'gap'"))
    add("from_csv-no-such-column", csv("gap\n1\n", column="gaps"), raises(ValueError, "gaps"))
    add("from_csv-index-out-of-range", csv("gap\n1\n", column=3), raises(ValueError, "column"))
    add("from_csv-negative-index", csv("gap\n1\n", column=-1), raises(ValueError, "column"))
    add("from_csv-column-bool", csv("gap\n1\n", column=True), raises(TypeError, "column"))
    add("from_csv-column-float", csv("gap\n1\n", column=0.0), raises(TypeError, "column"))
    add("from_csv-column-none", csv("gap\n1\n", column=None), raises(TypeError, "column"))
    add("from_csv-path-int", lambda c: ace.Empirical.from_csv(5), raises(TypeError, "path"))
    add("from_csv-path-none", lambda c: ace.Empirical.from_csv(None), raises(TypeError, "path"))
    add("from_csv-not-a-number", csv("gap\n1\nabc\n", column="gap"), raises(ValueError, "line 3"))
    add(
        "from_csv-nan-cell",
        csv("gap\n1\nnan\n", column="gap"),
        raises(ValueError, "line 3"),
    )
    add(
        "from_csv-negative-cell",
        csv("gap\n1\n-5\n", column="gap"),
        raises(ValueError, "line 3"),
    )
    add(
        "from_csv-empty-cell-kept",
        csv("a,gap\n0,1\n\n0,2\n0,\n", column="gap"),
        accepted(law_ok(1.5)),
    )
    add(
        "from_csv-empty-cell-strict",
        csv("a,gap\n1,1\n2,\n", column="gap", skip_missing=False),
        raises(ValueError, "line 3"),
    )
    add(
        "from_csv-skip_missing-string",
        csv("gap\n1\n,\n", column="gap", skip_missing="no"),
        raises(TypeError, "skip_missing"),
    )
    add(
        "from_csv-utf8-bom",
        csv("\ufeffgap,other\n1,2\n3,4\n", column="gap"),
        accepted(law_ok(2.0)),
    )
    add("from_csv-crlf", csv("gap\r\n1\r\n3\r\n", column="gap"), accepted(law_ok(2.0)))
    add(
        "from_csv-quoted-and-padded",
        csv('gap\n"1.5"\n  2.5  \n', column="gap"),
        accepted(law_ok(2.0)),
    )
    add("from_csv-short-row", csv("a,gap\n1,2\n3\n", column="gap"), raises(ValueError, "line 3"))
    add("from_csv-semicolons", csv("a;gap\n1;2\n", column="gap"), raises(ValueError, "gap"))
    add("from_csv-unknown-keyword", csv("gap\n1\n", colum="gap"), raises(TypeError, "colum"))


def _sampling() -> None:
    e = ace.Exponential(3600.0)
    add("sample-zero", lambda c: e.sample(0), accepted(draws_ok(0)))
    add("sample-np.uint8", lambda c: e.sample(np.uint8(3)), accepted(draws_ok(3)))
    add(
        "sample-seed-np.uint64-max",
        lambda c: e.sample(3, seed=np.uint64(2**64 - 1)),
        accepted(draws_ok(3)),
    )
    add(
        "sample-stationary-string",
        lambda c: e.sample(3, stationary="yes"),
        raises(TypeError, "stationary"),
    )
    add(
        "sample-stationary-np.bool_",
        lambda c: e.sample(3, stationary=np.bool_(True)),
        accepted(draws_ok(3)),
    )
    add(
        "sample-stationary-cuda",
        lambda c: e.sample(3, device="cuda", stationary=True),
        raises(ValueError, "device"),
    )
    add("sample-threads-4097", lambda c: e.sample(3, threads=4097), raises(ValueError, "threads"))
    add(
        "sample-threads-np.int64", lambda c: e.sample(3, threads=np.int64(2)), accepted(draws_ok(3))
    )
    add("sample-unknown-keyword", lambda c: e.sample(3, size=3), raises(TypeError, "size"))
    add("sample-missing-n", lambda c: e.sample(), raises(TypeError, "n"))
    add("sample-n-Fraction", lambda c: e.sample(Fraction(3, 1)), raises(TypeError, "n"))
    add("sample-device-bytes", lambda c: e.sample(3, device=b"cpu"), raises(BAD, "device"))
    add(
        "sample-cuda",
        lambda c: e.sample(3, device="cuda"),
        accepted(draws_ok(3)) if ace.cuda_available() else raises(RuntimeError, "CUDA"),
    )
    add(
        "Replay-sample-past-end",
        lambda c: ace.Replay([1.0, 2.0, 3.0]).sample(5),
        accepted(check(lambda x: x.tolist() == [1.0, 2.0, 3.0, INF, INF])),
    )
    add(
        "Replay-sample-first",
        lambda c: ace.Replay([1.0, 2.0, 3.0]).sample(2, first=2),
        accepted(check(lambda x: x.tolist() == [3.0, INF])),
    )
    add(
        "Replay-sample-stationary",
        lambda c: ace.Replay([4.0]).sample(1, stationary=True),
        accepted(check(lambda x: x.tolist() == [4.0])),
    )
    add(
        "BlockBootstrap-sample-values",
        lambda c: ace.BlockBootstrap([1.0, 2.0, 3.0], 3).sample(300, seed=2),
        accepted(check(lambda x: set(x.tolist()) <= {1.0, 2.0, 3.0})),
    )
    add(
        "Mixture-sample-values",
        lambda c: ace.Mixture([(1, ace.Constant(1.0)), (1, ace.Constant(2.0))]).sample(999),
        accepted(check(lambda x: set(x.tolist()) == {1.0, 2.0})),
    )
    add(
        "Gamma-tiny-shape-draws",
        lambda c: ace.Gamma(1e-3, 1.0).sample(500, seed=4),
        accepted(draws_ok(500)),
    )
    add(
        "Weibull-small-shape-draws",
        lambda c: ace.Weibull(0.02, 1.0).sample(500, seed=4),
        accepted(draws_ok(500, inf=True)),
    )
    add(
        "ScaleAware-sample-tiny-gpus",
        lambda c: ace.ScaleAware(EXP, 8.0).sample(64, gpus=1e-300),
        accepted(draws_ok(64, inf=True)),
    )
    add(
        "ScaleAware-sample-gpus-np.float32-nan",
        lambda c: ace.ScaleAware(EXP, 8.0).sample(4, gpus=np.float32("nan")),
        raises(ValueError, "gpus"),
    )
    add("Exponential-mean-gpus-zero", lambda c: e.mean(gpus=0), raises(ValueError, "gpus"))
    add(
        "forward_recurrence-Constant-0",
        lambda c: ace.Constant(0.0).forward_recurrence_mean(),
        accepted(equals(0.0)),
    )
    add(
        "forward_recurrence-Replay",
        lambda c: ace.Replay([2.0, 4.0]).forward_recurrence_mean(),
        accepted(equals(3.0)),
    )
    add(
        "forward_recurrence-overflow",
        lambda c: ace.Empirical([1e308]).forward_recurrence_mean(),
        accepted(check(lambda m: m == INF or math.isclose(m, 0.5e308))),
    )
    add(
        "forward_recurrence-gpus-string",
        lambda c: e.forward_recurrence_mean("8"),
        raises(TypeError, "gpus"),
    )


def _evaluation() -> None:
    e = ace.Exponential(100.0)
    add(
        "cdf-2d",
        lambda c: e.cdf(np.array([[1.0, 2.0], [3.0, 4.0]])),
        accepted(probabilities((2, 2))),
    )
    add("cdf-non-contiguous", lambda c: e.cdf(np.arange(10.0)[::3]), accepted(probabilities((4,))))
    add("cdf-empty", lambda c: e.cdf([]), accepted(probabilities((0,))))
    add("cdf-nan", lambda c: e.cdf(NAN), raises(ValueError, "x"))
    add("cdf-array-with-nan", lambda c: e.cdf([1.0, NAN]), raises(ValueError, "x"))
    add("cdf--inf", lambda c: e.cdf(-INF), accepted(equals(0.0)))
    add("cdf-inf", lambda c: e.cdf(INF), accepted(equals(1.0)))
    add("sf-inf", lambda c: e.sf(INF), accepted(equals(0.0)))
    add("sf-far-tail", lambda c: e.sf(1e4), accepted(equals(math.exp(-100.0), rel=1e-12)))
    add("cdf-string", lambda c: e.cdf("1"), raises(TypeError, "x"))
    add("cdf-none", lambda c: e.cdf(None), raises(TypeError, "x"))
    add("cdf-bool", lambda c: e.cdf(True), raises(TypeError, "x"))
    add("cdf-object-array", lambda c: e.cdf(np.array([1, 2], dtype=object)), raises(TypeError, "x"))
    add("cdf-list-with-none", lambda c: e.cdf([1.0, None]), raises(TypeError, "x"))
    add("cdf-complex", lambda c: e.cdf(1 + 2j), raises(TypeError, "x"))
    add(
        "cdf-int-2**70",
        lambda c: e.cdf(2**70),
        accepted(equals(1.0)),
    )
    add(
        "cdf-int-10**400",
        lambda c: e.cdf(10**400),
        raises(ValueError, "x"),
    )
    add(
        "cdf-float32",
        lambda c: e.cdf(np.float32(100.0)),
        accepted(equals(1 - math.exp(-1), rel=1e-6)),
    )
    add("cdf-keyword-x", lambda c: e.cdf(x=50.0), accepted(probabilities()))
    add("cdf-unknown-keyword", lambda c: e.cdf(t=50.0), raises(TypeError, "t"))
    add("ppf-half", lambda c: e.ppf(0.5), accepted(equals(100.0 * math.log(2.0), rel=1e-14)))
    add("ppf-one", lambda c: e.ppf(1.0), accepted(equals(INF)))
    add("ppf-above-one", lambda c: e.ppf(1.0000001), raises(ValueError, "q"))
    add("ppf-negative-zero", lambda c: e.ppf(-0.0), accepted(equals(0.0)))
    add("ppf-nan", lambda c: e.ppf(NAN), raises(ValueError, "q"))
    add("ppf-array-out-of-range", lambda c: e.ppf([0.1, 2.0]), raises(ValueError, "q"))
    add("ppf-string", lambda c: e.ppf("0.5"), raises(TypeError, "q"))
    add(
        "ppf-Gamma-monotone",
        lambda c: ace.Gamma(2.0, 3.0).ppf(np.linspace(0, 1, 201)),
        accepted(check(lambda x: np.all(np.diff(x) >= 0) and x[0] == 0 and x[-1] == INF)),
    )
    add(
        "ppf-Gamma-tiny-shape",
        lambda c: ace.Gamma(1e-3, 1.0).ppf([0.25, 0.5, 0.999]),
        accepted(check(lambda x: np.all(np.isfinite(x)) and np.all(np.diff(x) >= 0))),
    )
    add(
        "ppf-Mixture",
        lambda c: ace.Mixture([(1, ace.Constant(1.0)), (1, EXP)]).ppf([0.25, 0.75]),
        accepted(check(lambda x: x[0] == 1.0 and x[1] > 1.0)),
    )
    add(
        "ppf-Empirical",
        lambda c: ace.Empirical([3.0, 1.0, 2.0]).ppf([0.0, 0.34, 1.0]),
        accepted(check(lambda x: x.tolist() == [1.0, 2.0, 3.0])),
    )
    add(
        "ppf-cdf-roundtrip-Weibull",
        lambda c: (lambda w: w.cdf(w.ppf(np.linspace(0.01, 0.99, 99))))(ace.Weibull(0.5, 7.0)),
        accepted(check(lambda p: np.allclose(p, np.linspace(0.01, 0.99, 99), rtol=1e-12))),
    )
    add("pdf-Empirical", lambda c: ace.Empirical([1.0]).pdf(1.0), raises(TypeError, "density"))
    add("pdf-Constant", lambda c: ace.Constant(1.0).pdf(1.0), raises(TypeError, "density"))
    add(
        "pdf-Mixture-with-Constant",
        lambda c: ace.Mixture([(1, ace.Constant(1.0)), (1, EXP)]).pdf(1.0),
        raises(TypeError, "density"),
    )
    add(
        "pdf-ScaleAware-of-Replay",
        lambda c: ace.ScaleAware(ace.Replay([1.0]), 8).pdf(1.0),
        raises(TypeError, "density"),
    )
    add("pdf-Weibull-at-zero", lambda c: ace.Weibull(0.5, 1.0).pdf(0.0), accepted(equals(INF)))
    add("pdf-negative-x", lambda c: e.pdf(-1.0), accepted(equals(0.0)))
    add("pdf-LogNormal-inf", lambda c: ace.LogNormal(0.0, 1.0).pdf(INF), accepted(equals(0.0)))
    add(
        "cdf-gpus-string",
        lambda c: ace.ScaleAware(EXP, 8).cdf(1.0, gpus="8"),
        raises(TypeError, "gpus"),
    )
    add(
        "cdf-gpus-nan",
        lambda c: ace.ScaleAware(EXP, 8).cdf(1.0, gpus=NAN),
        raises(ValueError, "gpus"),
    )
    add(
        "sf-ScaleAware-gpus",
        lambda c: ace.ScaleAware(ace.Exponential(80.0), 8).sf(10.0, gpus=16),
        accepted(equals(math.exp(-0.25), rel=1e-14)),
    )


def _scipy() -> None:
    for label, build, expect in [
        ("string", lambda st: "expon", raises(TypeError, "law")),
        ("norm", lambda st: st.norm(), raises(ValueError, "norm")),
        ("expon-loc", lambda st: st.expon(loc=1.0), raises(ValueError, "loc")),
        ("expon-scale-nan", lambda st: st.expon(scale=NAN), raises(ValueError, "scale")),
        ("weibull-negative-c", lambda st: st.weibull_min(-1.0), raises(ValueError, "c")),
        ("unfrozen", lambda st: st.expon, raises(TypeError, "law")),
        ("gamma", lambda st: st.gamma(2.0, scale=3.0), accepted(law_ok(6.0))),
        ("lognorm", lambda st: st.lognorm(1.0, scale=math.e), accepted(law_ok(math.exp(1.5)))),
        ("weibull-array-scale", lambda st: st.weibull_min(1.0, scale=np.array([1.0, 2.0])),
         raises(TypeError, "scale")),
    ]:  # fmt: skip
        add(f"from_scipy-{label}", lambda c, b=build: ace.from_scipy(b(scipy_stats())), expect)


# =========================================================================== jobs


def _jobs() -> None:
    base: dict[str, Any] = dict(gpus=8, work=3600.0, checkpoint_interval=600.0)

    def mk(**kw: Any) -> Any:
        return lambda c: ace.Job(**{**base, **kw})

    add(
        "Job-missing-checkpoint_interval",
        lambda c: ace.Job(8, 3600.0),
        raises(TypeError, "checkpoint_interval"),
    )
    add("Job-unknown-keyword", mk(walltime=5.0), raises(TypeError, "walltime"))
    add("Job-gpus-np.int8", mk(gpus=np.int8(8)), accepted(check(lambda j: j.gpus == 8)))
    add("Job-gpus-np.uint64-huge", mk(gpus=np.uint64(2**63)), raises(ValueError, "gpus"))
    add("Job-gpus-Fraction", mk(gpus=Fraction(8, 1)), raises(TypeError, "gpus"))
    add("Job-gpus-2**70", mk(gpus=2**70), raises(ValueError, "gpus"))
    add(
        "Job-work-np.float32",
        mk(work=np.float32(3600.0)),
        accepted(check(lambda j: j.work == 3600)),
    )
    add("Job-work-int-2**70", mk(work=2**70), raises(ValueError, "work"))
    add("Job-work-subnormal", mk(work=5e-324), accepted(check(lambda j: j.work == 5e-324)))
    add(
        "Job-interval-ADAPTIVE",
        mk(checkpoint_interval="ADAPTIVE"),
        accepted(check(lambda j: j.checkpoint_interval == "adaptive")),
    )
    add(
        "Job-interval-nul",
        mk(checkpoint_interval="young\x00"),
        raises(ValueError, "checkpoint_interval"),
    )
    add(
        "Job-interval-np.str_",
        mk(checkpoint_interval=np.str_("daly")),
        accepted(check(lambda j: j.checkpoint_interval == "daly")),
    )
    add(
        "Job-interval-np.float64-nan",
        mk(checkpoint_interval=np.float64("nan")),
        raises(ValueError, "checkpoint_interval"),
    )
    add(
        "Job-interval-2**70",
        mk(checkpoint_interval=2**70),
        raises(ValueError, "checkpoint_interval"),
    )
    add(
        "Job-init-scipy-expon",
        lambda c: ace.Job(**base, init=scipy_stats().expon(scale=30.0)),
        accepted(check(lambda j: j.init.mean() == 30.0)),
    )
    add(
        "Job-init-scipy-norm",
        lambda c: ace.Job(**base, init=scipy_stats().norm()),
        raises(ValueError, "init"),
    )
    add(
        "Job-save-2**70",
        mk(save=2**70),
        raises(ValueError, "save"),
    )
    add(
        "Job-priority-np.int32",
        mk(priority=np.int32(-5)),
        accepted(check(lambda j: j.priority == -5)),
    )
    add("Job-priority-2**70", mk(priority=2**70), raises(ValueError, "priority"))
    add("Job-name-empty", mk(name=""), accepted(check(lambda j: j.name == "")))
    add("Job-name-np.str_", mk(name=np.str_("x")), accepted(check(lambda j: j.name == "x")))
    add("Job-persist-negative", mk(persist=-1.0), raises(ValueError, "persist"))
    add("Job-persist-string", mk(persist="3min"), raises(TypeError, "persist"))
    add("Job-persist-nan", mk(persist=NAN), raises(ValueError, "persist"))
    tier = ace.CheckpointTier(60.0, 1.0, 1.0)
    add("Job-five-tiers", mk(tiers=[tier] * 5), raises(ValueError, "tiers"))
    add("Job-one-tier-bare", mk(tiers=tier), accepted(check(lambda j: j.tiers == (tier,))))
    add("Job-tiers-numbers", mk(tiers=[1, 2]), raises(TypeError, "tiers[0]"))
    add("Job-tiers-string", mk(tiers="abc"), raises(TypeError, "tiers"))
    add("Job-tiers-dict", mk(tiers={"interval": 60}), raises(TypeError, "tiers"))
    add(
        "Job-tier-longer-than-interval",
        mk(tiers=[ace.CheckpointTier(900.0, 1.0, 1.0)]),
        raises(ValueError, "tiers[0].interval"),
    )
    add("Job-tiers-none", mk(tiers=None), accepted(check(lambda j: j.tiers == ())))
    add("Job-min_gpus-zero", mk(min_gpus=0), raises(ValueError, "min_gpus"))
    add("Job-min_gpus-above-gpus", mk(min_gpus=16), raises(ValueError, "min_gpus"))
    add("Job-min_gpus-float", mk(min_gpus=4.0), raises(TypeError, "min_gpus"))
    add("Job-min_gpus-bool", mk(min_gpus=True), raises(TypeError, "min_gpus"))
    add("Job-scaling-negative", mk(scaling=-1.0), raises(ValueError, "scaling"))
    add("Job-scaling-nan", mk(scaling=NAN), raises(ValueError, "scaling"))
    add("Job-scaling-string", mk(scaling="1"), raises(TypeError, "scaling"))
    add("Job-reconfigure-negative", mk(reconfigure=-5.0), raises(ValueError, "reconfigure"))
    add(
        "Job-checkpoint_bytes-negative",
        mk(checkpoint_bytes=-1.0),
        raises(ValueError, "checkpoint_bytes"),
    )
    add(
        "Job-checkpoint_bytes-string",
        mk(checkpoint_bytes="1GB"),
        raises(TypeError, "checkpoint_bytes"),
    )
    add(
        "Job-checkpoint_bytes-inf", mk(checkpoint_bytes=INF), raises(ValueError, "checkpoint_bytes")
    )
    add(
        "Job-with_interval-negative",
        lambda c: J.with_interval(-1.0),
        raises(ValueError, "checkpoint_interval"),
    )
    add(
        "Job-with_interval-rule",
        lambda c: J.with_interval("weekly"),
        raises(ValueError, "checkpoint_interval"),
    )
    add(
        "Job-with_interval-keeps-fields",
        lambda c: job(name="a", priority=3).with_interval(60.0),
        accepted(check(lambda j: (j.name, j.priority, j.checkpoint_interval) == ("a", 3, 60.0))),
    )

    # CheckpointTier
    for label, args, kw, expect in [
        ("interval-zero", (0.0, 1.0, 1.0), {}, raises(ValueError, "interval")),
        ("interval-far", (2e12, 1.0, 1.0), {}, raises(ValueError, "interval")),
        ("save-negative", (60.0, -1.0, 1.0), {}, raises(ValueError, "save")),
        ("load-none", (60.0, 1.0, None), {}, raises(TypeError, "load")),
        ("replication-zero", (60.0, 1.0, 1.0), {"replication": 0},
         raises(ValueError, "replication")),
        ("replication-huge", (60.0, 1.0, 1.0), {"replication": 2**25},
         raises(ValueError, "replication")),
        ("replication-float", (60.0, 1.0, 1.0), {"replication": 1.0},
         raises(TypeError, "replication")),
        ("missing-save", (60.0,), {}, raises(TypeError, "save")),
        ("laws", (60.0, EXP, ace.Constant(2.0)), {},
         accepted(check(lambda t: t.save is EXP and t.load.mean() == 2.0))),
    ]:  # fmt: skip
        add(f"CheckpointTier-{label}", lambda c, a=args, k=kw: ace.CheckpointTier(*a, **k), expect)


def _job_arrays() -> None:
    base: dict[str, Any] = dict(gpus=[8, 16], work=[3600.0, 7200.0], checkpoint_interval=600.0)

    def arr(**kw: Any) -> Any:
        return lambda c: ace.JobArray(**{**base, **kw})

    n2 = check(lambda a: len(a) == 2)
    for label, kw, expect in [
        ("gpus-scalar", dict(gpus=8), raises(ValueError, "gpus")),
        ("gpus-empty", dict(gpus=[], work=[]), raises(ValueError, "gpus")),
        ("work-short", dict(work=[3600.0]), raises(ValueError, "work")),
        ("work-nan", dict(work=[3600.0, NAN]), raises(ValueError, "work")),
        ("work-zero", dict(work=[3600.0, 0.0]), raises(ValueError, "work")),
        ("work-2d", dict(work=[[3600.0, 7200.0]]), raises(ValueError, "work")),
        ("work-uint8", dict(work=np.array([60, 120], np.uint8)), accepted(n2)),
        ("work-big-endian", dict(work=np.array([60.0, 120.0], ">f8")), accepted(n2)),
        ("work-strings", dict(work=["1h", "2h"]), raises(TypeError, "work")),
        ("gpus-fractional", dict(gpus=[8.5, 16.0]), raises(ValueError, "gpus")),
        ("gpus-integral-floats", dict(gpus=[8.0, 16.0]), accepted(n2)),
        ("gpus-bools", dict(gpus=[True, True]), raises(TypeError, "gpus")),
        ("gpus-int8", dict(gpus=np.array([8, 16], np.int8)), accepted(n2)),
        ("gpus-2**32", dict(gpus=[8, 2**32]), raises(ValueError, "gpus")),
        ("gpus-2**70", dict(gpus=[8, 2**70]), raises(BAD, "gpus")),
        ("gpus-negative", dict(gpus=[8, -8]), raises(ValueError, "gpus")),
        ("gpus-non-contiguous", dict(gpus=np.arange(8, 40, 8)[::2]), accepted(n2)),
        ("gpus-2d", dict(gpus=[[8, 16]]), raises(ValueError, "gpus")),
        ("gpus-strings", dict(gpus=np.array(["8", "16"])), raises(TypeError, "gpus")),
        ("interval-young", dict(checkpoint_interval="young"), accepted(n2)),
        ("interval-unknown-rule", dict(checkpoint_interval="hourly"),
         raises(ValueError, "checkpoint_interval")),
        ("interval-zero", dict(checkpoint_interval=[600.0, 0.0]),
         raises(ValueError, "checkpoint_interval")),
        ("interval-far", dict(checkpoint_interval=[600.0, 2e12]),
         raises(ValueError, "checkpoint_interval")),
        ("submit-negative", dict(submit=[-1.0, 0.0]), raises(ValueError, "submit")),
        ("submit-three", dict(submit=[0.0, 1.0, 2.0]), raises(ValueError, "submit")),
        ("priority-fractional", dict(priority=[1.5, 2.0]), raises(ValueError, "priority")),
        ("priority-2**31", dict(priority=[0, 2**31]), raises(ValueError, "priority")),
        ("priority-uint64-huge", dict(priority=np.array([0, 2**63], np.uint64)),
         raises(ValueError, "priority")),
        ("time_limit-inf-means-none", dict(time_limit=[INF, 100.0]), accepted(n2)),
        ("time_limit-zero", dict(time_limit=[0.0, 100.0]), raises(ValueError, "time_limit")),
        ("time_limit-nan", dict(time_limit=NAN), raises(ValueError, "time_limit")),
        ("time_limit-string", dict(time_limit="1h"), raises(TypeError, "time_limit")),
        ("time_limit-three", dict(time_limit=[1.0, 2.0, 3.0]), raises(ValueError, "time_limit")),
        ("time_limit-far", dict(time_limit=[2e12, 1.0]), raises(ValueError, "time_limit")),
        ("init-negative", dict(init=-1.0), raises(ValueError, "init")),
        ("tier-longer-than-shortest", dict(checkpoint_interval=[600.0, 1200.0],
                                           tiers=[ace.CheckpointTier(900.0, 1.0, 1.0)]),
         raises(ValueError, "tiers[0].interval")),
        ("min_gpus-above-smallest", dict(min_gpus=12), raises(ValueError, "min_gpus")),
        ("pandas-series", dict(work=__import__("pandas").Series([60.0, 120.0])), accepted(n2)),
        ("unknown-keyword", dict(name=["a", "b"]), raises(TypeError, "name")),
    ]:  # fmt: skip
        add(f"JobArray-{label}", arr(**kw), expect)
    add(
        "JobArray-broadcast-scalars",
        lambda c: ace.JobArray(gpus=[8, 8, 8], work=3600.0, checkpoint_interval=600.0),
        accepted(check(lambda a: len(a) == 3 and np.all(a.work == 3600.0))),
    )
    add(
        "JobArray.from_records-list",
        lambda c: ace.JobArray.from_records([J]),
        raises(TypeError, "records"),
    )
    add(
        "JobArray.from_records-missing-work",
        lambda c: ace.JobArray.from_records(columns(gpus=[8], checkpoint_interval=[600.0])),
        raises(ValueError, "work"),
    )
    add(
        "JobArray.from_records-fractional-gpus",
        lambda c: ace.JobArray.from_records(
            columns(gpus=[8.5], work=[60.0], checkpoint_interval=[60.0])
        ),
        raises(ValueError, "gpus"),
    )
    add(
        "JobArray.from_records-empty",
        lambda c: ace.JobArray.from_records(
            columns(gpus=np.zeros(0, np.int64), work=np.zeros(0), checkpoint_interval=np.zeros(0))
        ),
        raises(ValueError, "gpus"),
    )
    add("JobArray.from_records-dataframe",
        lambda c: ace.JobArray.from_records(__import__("pandas").DataFrame(
            {"gpus": [8, 16], "work": [60.0, 120.0], "checkpoint_interval": [30.0, 30.0],
             "priority": [1, 2]})),
        accepted(check(lambda a: a.priority.tolist() == [1, 2])))  # fmt: skip


# =========================================================================== fleet


def _fleets() -> None:
    def fl(**kw: Any) -> Any:
        return lambda c: ace.Fleet(**{"nodes": 4, **kw})

    ok = accepted(check(lambda f: isinstance(f, ace.Fleet)))
    for label, kw, expect in [
        ("nodes-zero", dict(nodes=0), raises(ValueError, "nodes")),
        ("nodes-2**25", dict(nodes=2**25), raises(ValueError, "nodes")),
        ("nodes-2**70", dict(nodes=2**70), raises(ValueError, "nodes")),
        ("nodes-float", dict(nodes=4.0), raises(TypeError, "nodes")),
        ("nodes-string", dict(nodes="4"), raises(TypeError, "nodes")),
        ("nodes-bool", dict(nodes=True), raises(TypeError, "nodes")),
        ("nodes-none", dict(nodes=None), raises(TypeError, "nodes")),
        ("nodes-np.uint16", dict(nodes=np.uint16(4)), ok),
        ("gpus_per_node-zero", dict(gpus_per_node=0), raises(ValueError, "gpus_per_node")),
        ("gpus_per_node-2**17", dict(gpus_per_node=2**17), raises(ValueError, "gpus_per_node")),
        ("gpus_per_node-float", dict(gpus_per_node=8.0), raises(TypeError, "gpus_per_node")),
        ("spares-all", dict(spares=4), raises(ValueError, "spares")),
        ("spares-negative", dict(spares=-1), raises(ValueError, "spares")),
        ("spares-float", dict(spares=1.5), raises(TypeError, "spares")),
        ("repair-negative", dict(repair=-1.0), raises(ValueError, "repair")),
        ("repair-string", dict(repair="1h"), raises(TypeError, "repair")),
        ("repair-nan", dict(repair=NAN), raises(ValueError, "repair")),
        ("repair-class", dict(repair=ace.Exponential), raises(TypeError, "repair")),
        ("repair-far", dict(repair=1e20), raises(ValueError, "repair")),
        ("node_failures-number", dict(node_failures=3600.0), raises(TypeError, "node_failures")),
        ("node_failures-zero-mean", dict(node_failures=ace.Constant(0.0)),
         raises(ValueError, "node_failures")),
        ("node_failures-replay-inf", dict(node_failures=ace.Replay([INF])), ok),
        ("node_failures-scipy", dict(node_failures="scipy"), ok),
        ("lemon_fraction-above-one", dict(lemon_fraction=1.5),
         raises(ValueError, "lemon_fraction")),
        ("lemon_fraction-negative", dict(lemon_fraction=-0.1),
         raises(ValueError, "lemon_fraction")),
        ("lemon_fraction-string", dict(lemon_fraction="0.1"), raises(TypeError, "lemon_fraction")),
        ("lemon_factor-zero", dict(lemon_factor=0.0), raises(ValueError, "lemon_factor")),
        ("lemon_factor-inf", dict(lemon_factor=INF), raises(ValueError, "lemon_factor")),
        ("node_start-warm", dict(node_start="warm"), raises(ValueError, "node_start")),
        ("node_start-none", dict(node_start=None), raises(TypeError, "node_start")),
        ("node_clock-cpu", dict(node_clock="cpu"), raises(ValueError, "node_clock")),
        ("node_clock-int", dict(node_clock=1), raises(TypeError, "node_clock")),
        ("rate_windows-pair", dict(rate_windows=[(0.0, 10.0)]),
         raises(TypeError, "rate_windows[0]")),
        ("rate_windows-backwards", dict(rate_windows=[(10.0, 5.0, 2.0)]),
         raises(ValueError, "rate_windows[0]")),
        ("rate_windows-open-end", dict(rate_windows=[(0.0, INF, 2.0)]), ok),
        ("rate_windows-negative-factor", dict(rate_windows=[(0.0, 10.0, -1.0)]),
         raises(ValueError, "rate_windows[0]")),
        ("rate_windows-nan-start", dict(rate_windows=[(NAN, 10.0, 1.0)]),
         raises(ValueError, "rate_windows[0]")),
        ("rate_windows-nan-end", dict(rate_windows=[(0.0, NAN, 1.0)]),
         raises(ValueError, "rate_windows[0]")),
        ("rate_windows-string", dict(rate_windows="0-10"), raises(TypeError, "rate_windows")),
        ("rate_windows-factor-string", dict(rate_windows=[(0.0, 10.0, "2")]),
         raises(TypeError, "rate_windows[0]")),
        ("rate_windows-far-start", dict(rate_windows=[(2e12, INF, 1.0)]),
         raises(ValueError, "rate_windows[0]")),
        ("rate_windows-ndarray", dict(rate_windows=np.array([[0.0, 10.0, 2.0]])),
         raises(TypeError, "rate_windows")),
        ("maintenance-int-nodes", dict(maintenance=[(0.0, 3600.0, 5)]),
         raises(TypeError, "maintenance[0]")),
        ("maintenance-node-out-of-range", dict(maintenance=[(0.0, 3600.0, [9])]),
         raises(ValueError, "maintenance[0]")),
        ("maintenance-no-nodes", dict(maintenance=[(0.0, 3600.0, [])]),
         raises(ValueError, "maintenance[0]")),
        ("maintenance-negative-duration", dict(maintenance=[(0.0, -1.0, "all")]),
         raises(ValueError, "maintenance[0]")),
        ("maintenance-word", dict(maintenance=[(0.0, 3600.0, "some")]),
         raises(TypeError, "maintenance[0]")),
        ("maintenance-overlap", dict(maintenance=[(0.0, 3600.0, [0]), (1800.0, 3600.0, [0])]),
         raises(ValueError, "maintenance")),
        ("maintenance-node-twice", dict(maintenance=[(0.0, 3600.0, [0, 0])]),
         raises(ValueError, "maintenance")),
        ("maintenance-ndarray-nodes", dict(maintenance=[(0.0, 3600.0, np.array([0, 1]))]), ok),
        ("maintenance-range", dict(maintenance=[(0.0, 3600.0, range(2))]), ok),
        ("maintenance-float-node", dict(maintenance=[(0.0, 3600.0, [0.5])]),
         raises(TypeError, "maintenance[0]")),
        ("maintenance-bool-node", dict(maintenance=[(0.0, 3600.0, [True])]),
         raises(TypeError, "maintenance[0]")),
        ("maintenance-dict", dict(maintenance=[{"start": 0, "duration": 1, "nodes": "all"}]),
         raises(TypeError, "maintenance[0]")),
        ("cold_spares-without-delay", dict(cold_spares=2), raises(ValueError, "cold_spare_delay")),
        ("cold_spares-all", dict(cold_spares=4, cold_spare_delay=60.0),
         raises(ValueError, "cold_spares")),
        ("cold_spares-with-spares", dict(spares=2, cold_spares=2, cold_spare_delay=60.0),
         raises(ValueError, "cold_spares")),
        ("cold_spare_delay-negative", dict(cold_spares=1, cold_spare_delay=-1.0),
         raises(ValueError, "cold_spare_delay")),
        ("cold_spare_delay-inf-mean", dict(cold_spares=1, cold_spare_delay=ace.Replay([INF])),
         raises(ValueError, "cold_spare_delay")),
        ("storage_bandwidth-zero", dict(storage_bandwidth=0.0),
         raises(ValueError, "storage_bandwidth")),
        ("storage_bandwidth-string", dict(storage_bandwidth="10GB/s"),
         raises(TypeError, "storage_bandwidth")),
        ("storage_bandwidth-nan", dict(storage_bandwidth=NAN),
         raises(ValueError, "storage_bandwidth")),
        ("unknown-keyword", dict(racks=2), raises(TypeError, "racks")),
        ("lend_spares-np.bool_", dict(lend_spares=np.bool_(True)), ok),
    ]:  # fmt: skip
        if kw.get("node_failures") == "scipy":
            add(
                f"Fleet-{label}",
                lambda c: ace.Fleet(4, node_failures=scipy_stats().weibull_min(0.7, scale=1e5)),
                expect,
            )
            continue
        add(f"Fleet-{label}", fl(**kw), expect)
    add("Fleet-missing-nodes", lambda c: ace.Fleet(), raises(TypeError, "nodes"))

    # Cause
    for label, args, kw, expect in [
        ("missing", (), {}, raises(TypeError, "name")),
        ("name-int", (5, 1.0), {}, raises(TypeError, "name")),
        ("name-none", (None, 1.0), {}, raises(TypeError, "name")),
        ("share-negative", ("x", -1.0), {}, raises(ValueError, "share")),
        ("share-nan", ("x", NAN), {}, raises(ValueError, "share")),
        ("share-inf", ("x", INF), {}, raises(ValueError, "share")),
        ("share-string", ("x", "1"), {}, raises(TypeError, "share")),
        ("share-bool", ("x", True), {}, raises(TypeError, "share")),
        ("detect-negative", ("x", 1.0), {"detect": -1.0}, raises(ValueError, "detect")),
        ("detect-string", ("x", 1.0), {"detect": "10min"}, raises(TypeError, "detect")),
        ("node_down-int", ("x", 1.0), {"node_down": 1}, raises(TypeError, "node_down")),
        ("node_down-string", ("x", 1.0), {"node_down": "yes"}, raises(TypeError, "node_down")),
        ("node_down-np.bool_", ("x", 1.0), {"node_down": np.bool_(False)},
         accepted(check(lambda c: c.node_down is False and c.scope == "process"))),
        ("nodes-zero", ("x", 1.0), {"nodes": 0}, raises(ValueError, "nodes")),
        ("nodes-2**25", ("x", 1.0), {"nodes": 2**25}, raises(ValueError, "nodes")),
        ("nodes-float", ("x", 1.0), {"nodes": 1.0}, raises(TypeError, "nodes")),
        ("scope-rack", ("x", 1.0), {"scope": "rack"}, raises(ValueError, "scope")),
        ("scope-int", ("x", 1.0), {"scope": 1}, raises(BAD, "scope")),
        ("slowdown-one", ("x", 1.0), {"slowdown": 1.0}, raises(ValueError, "slowdown")),
        ("slowdown-negative", ("x", 1.0), {"slowdown": -0.1}, raises(ValueError, "slowdown")),
        ("slowdown-nan", ("x", 1.0), {"slowdown": NAN}, raises(ValueError, "slowdown")),
        ("slowdown-string", ("x", 1.0), {"slowdown": "0.5"}, raises(TypeError, "slowdown")),
        ("unknown-keyword", ("x", 1.0), {"weight": 2}, raises(TypeError, "weight")),
        ("share-zero", ("x", 0.0), {}, accepted(check(lambda c: c.share == 0.0))),
    ]:  # fmt: skip
        add(f"Cause-{label}", lambda c, a=args, k=kw: ace.Cause(*a, **k), expect)

    # Quarantine
    for label, kw, expect in [
        ("failures-zero", dict(failures=0), raises(ValueError, "failures")),
        ("failures-float", dict(failures=1.5), raises(TypeError, "failures")),
        ("failures-2**32", dict(failures=2**32), raises(ValueError, "failures")),
        ("window-negative", dict(window=-1.0), raises(ValueError, "window")),
        ("window-nan", dict(window=NAN), raises(ValueError, "window")),
        ("window-string", dict(window="7d"), raises(TypeError, "window")),
        ("window--inf", dict(window=-INF), raises(ValueError, "window")),
        ("window-none", dict(window=None), raises(TypeError, "window")),
        ("window-list", dict(window=[1.0]), raises(TypeError, "window")),
        ("window-np.float32-inf", dict(window=np.float32("inf")),
         accepted(check(lambda q: q.window == INF))),
        ("duration-negative", dict(duration=-1.0), raises(ValueError, "duration")),
        ("duration-string", dict(duration="inf"), raises(TypeError, "duration")),
        ("duration-nan", dict(duration=NAN), raises(ValueError, "duration")),
        ("duration-inf", dict(duration=INF), accepted(check(lambda q: q.duration == INF))),
        ("duration-far", dict(duration=1e15), raises(ValueError, "duration")),
        ("window-far", dict(window=1e15), raises(ValueError, "window")),
        ("unknown-keyword", dict(k=3), raises(TypeError, "k")),
    ]:  # fmt: skip
        add(f"Quarantine-{label}", lambda c, k=kw: ace.Quarantine(**k), expect)

    # Repair, RepairStage
    for label, build, expect in [
        ("stage-negative", lambda: ace.RepairStage(-1.0), raises(ValueError, "duration")),
        ("stage-string", lambda: ace.RepairStage("1h"), raises(TypeError, "duration")),
        ("stage-escalate-above-one", lambda: ace.RepairStage(60.0, escalate=1.5),
         raises(ValueError, "escalate")),
        ("stage-escalate-nan", lambda: ace.RepairStage(60.0, escalate=NAN),
         raises(ValueError, "escalate")),
        ("stage-fix-negative", lambda: ace.RepairStage(60.0, fix=-0.1), raises(ValueError, "fix")),
        ("stage-fix-string", lambda: ace.RepairStage(60.0, fix="1"), raises(TypeError, "fix")),
        ("empty", lambda: ace.Repair([]), raises(ValueError, "stages")),
        ("none", lambda: ace.Repair(None), raises(TypeError, "stages")),
        ("numbers", lambda: ace.Repair([60.0]), raises(TypeError, "stages[0]")),
        ("last-escalates", lambda: ace.Repair([ace.RepairStage(60.0, escalate=0.5)]),
         raises(ValueError, "stages[0].escalate")),
        ("misdiagnosis-two", lambda: ace.Repair(ace.RepairStage(60.0), misdiagnosis=2.0),
         raises(ValueError, "misdiagnosis")),
        ("misdiagnosis-none", lambda: ace.Repair(ace.RepairStage(60.0), misdiagnosis=None),
         raises(TypeError, "misdiagnosis")),
        ("generator", lambda: ace.Repair(ace.RepairStage(60.0) for _ in range(2)),
         raises(TypeError, "stages")),
        ("single-stage", lambda: ace.Repair(ace.RepairStage(60.0)),
         accepted(check(lambda r: r.mean() == 60.0))),
        ("mean", lambda: ace.Repair([ace.RepairStage(60.0, escalate=0.5), ace.RepairStage(120.0)]),
         accepted(check(lambda r: r.mean() == 120.0 and r.cure_probability() == 0.0))),
    ]:  # fmt: skip
        add(f"Repair-{label}", lambda c, b=build: b(), expect)

    # NodeTrace
    res = ace.simulate(job(gpus=16), fleet=fleet(spares=0), replicas=1, seed=2, horizon=86400.0,
                       threads=1)  # fmt: skip
    for label, build, expect in [
        ("plain-array", lambda: ace.NodeTrace(np.zeros(3), 4), raises(TypeError, "trace")),
        ("missing-field", lambda: ace.NodeTrace(columns(replica=[0], time=[1.0]), 4),
         raises(ValueError, "trace")),
        ("nodes-zero", lambda: ace.NodeTrace(res.trace, 0), raises(ValueError, "nodes")),
        ("replica-negative", lambda: ace.NodeTrace(res.trace, 4, replica=-1),
         raises(ValueError, "replica")),
        ("recorded", lambda: ace.NodeTrace(res.trace, 4, model=ace.Exponential(20_000.0)),
         accepted(check(lambda t: len(t.laws) == 4))),
        ("from_times-descending", lambda: ace.NodeTrace.from_times({0: [10.0, 5.0]}, nodes=2),
         raises(ValueError, "times[0]")),
        ("from_times-node-out-of-range", lambda: ace.NodeTrace.from_times({5: [1.0]}, nodes=2),
         raises(ValueError, "times")),
        ("from_times-list", lambda: ace.NodeTrace.from_times([1.0, 2.0], nodes=2),
         raises(TypeError, "times")),
        ("from_times-nan", lambda: ace.NodeTrace.from_times({0: [NAN]}, nodes=2),
         raises(ValueError, "times[0]")),
        ("from_times-negative", lambda: ace.NodeTrace.from_times({0: [-1.0]}, nodes=2),
         raises(ValueError, "times[0]")),
        ("from_times-strings", lambda: ace.NodeTrace.from_times({0: ["a"]}, nodes=2),
         raises(BAD, "times[0]")),
        ("from_times-ragged", lambda: ace.NodeTrace.from_times({0: [[1.0, 2.0], [3.0]]}, nodes=2),
         raises(BAD, "times[0]")),
        ("from_times-none", lambda: ace.NodeTrace.from_times({0: None}, nodes=2),
         raises(ValueError, "times[0]")),
        ("from_times-inf", lambda: ace.NodeTrace.from_times({0: [INF]}, nodes=2),
         accepted(check(lambda t: t.laws[1] is None))),
        ("from_times-bool-node", lambda: ace.NodeTrace.from_times({True: [1.0]}, nodes=2),
         raises(TypeError, "times")),
        ("from_gaps-nodes-zero", lambda: ace.NodeTrace.from_gaps({0: [1.0]}, nodes=0),
         raises(ValueError, "nodes")),
        ("from_gaps-model-string", lambda: ace.NodeTrace.from_gaps({0: [1.0]}, 1, model="exp"),
         raises(TypeError, "model")),
        ("from_gaps-scalar", lambda: ace.NodeTrace.from_gaps({0: 5.0}, 1),
         accepted(check(lambda t: t.laws[0].times.tolist() == [5.0]))),
    ]:  # fmt: skip
        add(f"NodeTrace-{label}", lambda c, b=build: b(), expect)


# =========================================================================== policies


def _policies() -> None:
    for label, kw, expect in [
        ("replacement-lowercase", dict(replacement="wait_repair"),
         accepted(check(lambda p: p.replacement == ace.Replacement.WAIT_REPAIR))),
        ("replacement-misspelt", dict(replacement="spare"), raises(ValueError, "replacement")),
        ("replacement-7", dict(replacement=7), raises(ValueError, "replacement")),
        ("replacement-float", dict(replacement=1.0), raises(TypeError, "replacement")),
        ("replacement-bool", dict(replacement=True), raises(TypeError, "replacement")),
        ("replacement-np.int64", dict(replacement=np.int64(1)),
         accepted(check(lambda p: p.replacement == ace.Replacement.WAIT_REPAIR))),
        ("replacement-Preemption-enum", dict(replacement=ace.Preemption.CHECKPOINT_AWARE),
         accepted(check(lambda p: p.replacement == ace.Replacement.WAIT_REPAIR))),
        ("preemption-name", dict(preemption="checkpoint_aware"),
         accepted(check(lambda p: p.preemption == ace.Preemption.CHECKPOINT_AWARE))),
        ("preemption-lazy", dict(preemption="lazy"), raises(ValueError, "preemption")),
        ("preemption-none", dict(preemption=None), raises(TypeError, "preemption")),
        ("quarantine-int", dict(quarantine=3), raises(TypeError, "quarantine")),
        ("quarantine-dict", dict(quarantine={"failures": 3}), raises(TypeError, "quarantine")),
        ("on_failure-int", dict(on_failure=5), raises(TypeError, "on_failure")),
        ("on_failure-string", dict(on_failure="mypolicies:on_failure"),
         raises(TypeError, "on_failure")),
        ("preemption_grace-negative", dict(preemption_grace=-1.0),
         raises(ValueError, "preemption_grace")),
        ("preemption_grace-nan", dict(preemption_grace=NAN),
         raises(ValueError, "preemption_grace")),
        ("preemption_grace-inf", dict(preemption_grace=INF),
         raises(ValueError, "preemption_grace")),
        ("preemption_grace-string", dict(preemption_grace="10min"),
         raises(TypeError, "preemption_grace")),
        ("place-int", dict(place=5), raises(TypeError, "place")),
        ("replacement_delay-negative", dict(replacement_delay=-1.0),
         raises(ValueError, "replacement_delay")),
        ("replacement_delay-inf-mean", dict(replacement_delay=ace.Replay([INF])),
         raises(ValueError, "replacement_delay")),
        ("replacement_delay-string", dict(replacement_delay="5min"),
         raises(TypeError, "replacement_delay")),
        ("backfill-EASY", dict(backfill="EASY"), accepted(check(lambda p: p.backfill == "easy"))),
        ("unknown-keyword", dict(on_start=print), raises(TypeError, "on_start")),
    ]:  # fmt: skip
        if label == "replacement-Preemption-enum":
            continue  # an IntEnum of another kind: see below
        add(f"Policy-{label}", lambda c, k=kw: ace.Policy(**k), expect)
    add(
        "Policy-replacement-other-enum",
        lambda c: ace.Policy(replacement=ace.Preemption.CHECKPOINT_AWARE),
        raises(TypeError, "replacement"),
    )

    # Python callbacks, run on a fleet whose nodes fail
    done = sim_ok(2, completed=True)
    keep: list[Any] = []
    for label, fn, expect in [
        ("none", lambda v: None, accepted(done)),
        ("enum", lambda v: ace.Replacement.REQUEUE, accepted(done)),
        ("int", lambda v: 1, accepted(done)),
        ("default-minus-one", lambda v: -1, accepted(done)),
        ("string", lambda v: "requeue", raises(TypeError, "on_failure")),
        ("out-of-range", lambda v: 99, raises(ValueError, "on_failure")),
        ("float", lambda v: 1.5, raises(TypeError, "on_failure")),
        ("bool", lambda v: True, raises(TypeError, "on_failure")),
        ("np.int64", lambda v: np.int64(2), accepted(done)),
        ("raises", lambda v: 1 / 0, raises(ZeroDivisionError, "division by zero")),
        ("raises-SystemExit", lambda v: (_ for _ in ()).throw(SystemExit(3)),
         raises(SystemExit, "3")),
        ("no-arguments", lambda: None, raises(TypeError, "positional argument")),
        ("writes-the-view", lambda v: setattr(v, "time", 5.0), raises(AttributeError, "no setter")),
        ("nested-simulate", lambda v: ace.simulate(J, EXP, threads=1) and None, accepted(done)),
        ("keeps-the-view", lambda v: keep.append(v), accepted(sim_ok(2, then=lambda r: all(
            math.isfinite(v.time) and v.time >= 0 and v.nodes_needed >= 0 for v in keep)))),
    ]:  # fmt: skip
        add(f"on_failure-{label}", lambda c, f=fn: on_failure(f), expect)
    add(
        "on_failure-threads",
        lambda c: on_failure(lambda v: None, threads=2, replicas=4),
        accepted(sim_ok(4, completed=True)),
    )
    add(
        "on_failure-without-fleet",
        lambda c: ace.simulate(J, EXP, policy=ace.Policy(on_failure=lambda v: None)),
        raises(ValueError, "on_failure"),
    )

    def first_start(nodes: Any) -> Any:
        return lambda v, cands: None if v.recovering else nodes

    for label, fn, expect in [
        ("none", lambda v, cands: None, accepted(done)),
        ("not-a-node", lambda v, cands: [99, 98], raises(ValueError, "place")),
        ("twice", lambda v, cands: [cands[0]] * v.nodes_needed, raises(ValueError, "place")),
        ("too-few", lambda v, cands: [cands[0]], raises(ValueError, "place")),
        ("string", lambda v, cands: "ab", raises(TypeError, "place")),
        ("ndarray", lambda v, cands: np.asarray(cands[: v.nodes_needed]), accepted(done)),
        ("tuple", lambda v, cands: tuple(cands[: v.nodes_needed]), accepted(done)),
        ("generator", lambda v, cands: (n for n in cands[: v.nodes_needed]), accepted(done)),
        ("floats", lambda v, cands: [float(n) for n in cands[: v.nodes_needed]],
         raises(TypeError, "place")),
        ("negative", lambda v, cands: [-1, 0], raises(BAD, "place")),
        ("huge", lambda v, cands: [2**70, 0], raises(BAD, "place")),
        ("int", lambda v, cands: 5, raises(TypeError, "place")),
        ("bools", first_start([True, False]), raises(TypeError, "place")),
        ("raises", lambda v, cands: {}["k"], raises(KeyError, "k")),
        ("one-argument", lambda v: None, raises(TypeError, "positional argument")),
    ]:  # fmt: skip
        add(f"place-{label}", lambda c, f=fn: place(f), expect)

    # compiled policies
    def libc_abs() -> int:
        """A function of a loaded image (CompiledPolicy refuses non-code)."""
        return ctypes.cast(ctypes.CDLL(None).abs, ctypes.c_void_p).value or 0

    def compiled(fn: Any) -> Any:
        return ace.Policy(on_failure=ace.CompiledPolicy.from_ctypes(FailurePolicyFn(fn)))

    for label, build, expect in [
        ("address-zero", lambda: ace.CompiledPolicy(0), raises(ValueError, "address")),
        ("address-negative", lambda: ace.CompiledPolicy(-1), raises(ValueError, "address")),
        ("address-2**64", lambda: ace.CompiledPolicy(2**64), raises(ValueError, "address")),
        ("address-float", lambda: ace.CompiledPolicy(1.5), raises(TypeError, "address")),
        ("address-string", lambda: ace.CompiledPolicy("0x1234"), raises(TypeError, "address")),
        ("address-bool", lambda: ace.CompiledPolicy(True), raises(TypeError, "address")),
        ("address-none", lambda: ace.CompiledPolicy(None), raises(TypeError, "address")),
        ("address-np.int64", lambda: ace.CompiledPolicy(np.int64(libc_abs())),
         accepted(check(lambda p: p.address == libc_abs()))),
        ("address-unmapped", lambda: ace.CompiledPolicy(12345),
         raises(ValueError, "address")),
        ("address-data", lambda: ace.CompiledPolicy(id(object())),
         raises(ValueError, "address")),
        ("user_data-negative", lambda: ace.CompiledPolicy(libc_abs(), user_data=-1),
         raises(ValueError, "user_data")),
        ("user_data-2**64", lambda: ace.CompiledPolicy(libc_abs(), user_data=2**64),
         raises(ValueError, "user_data")),
        ("user_data-string", lambda: ace.CompiledPolicy(libc_abs(), user_data="x"),
         raises(TypeError, "user_data")),
        ("from_capsule-int", lambda: ace.CompiledPolicy.from_capsule(5),
         raises(TypeError, "capsule")),
        ("from_capsule-none", lambda: ace.CompiledPolicy.from_capsule(None),
         raises(TypeError, "capsule")),
        ("from_ctypes-int", lambda: ace.CompiledPolicy.from_ctypes(5), raises(TypeError, "fn")),
        ("from_ctypes-lambda", lambda: ace.CompiledPolicy.from_ctypes(lambda v, u: 0),
         raises(TypeError, "fn")),
        ("from_ctypes-one-argument", lambda: ace.CompiledPolicy.from_ctypes(
            ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(lambda v: 0)),
         raises(TypeError, "fn")),
        ("from_ctypes-returns-double", lambda: ace.CompiledPolicy.from_ctypes(
            ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p)(lambda v, u: 0)),
         raises(TypeError, "fn")),
        ("from_ctypes-returns-void", lambda: ace.CompiledPolicy.from_ctypes(
            ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(lambda v, u: None)),
         raises(TypeError, "fn")),
        ("from_ctypes-null", lambda: ace.CompiledPolicy.from_ctypes(FailurePolicyFn()),
         raises(ValueError, "fn")),
        ("pickle", lambda: pickle.dumps(ace.CompiledPolicy.from_ctypes(FailurePolicyFn(
            lambda v, u: 0))), raises(TypeError, "pickled")),
        ("invoke-not-a-view", lambda: ace.CompiledPolicy.from_ctypes(FailurePolicyFn(
            lambda v, u: 0)).invoke(5), raises(TypeError, "view")),
        ("returns-99", lambda: fleet_sim(compiled(lambda v, u: 99)),
         raises(ValueError, "on_failure")),
        ("returns-default", lambda: fleet_sim(compiled(lambda v, u: -1)), accepted(done)),
        ("reads-the-view", lambda: fleet_sim(compiled(
            lambda v, u: 3 if v.contents.nodes_needed > 0 else 0)), accepted(done)),
        ("threads", lambda: fleet_sim(compiled(lambda v, u: 0), threads=2, replicas=4),
         accepted(sim_ok(4, completed=True))),
        ("wrong-signature-libc-abs", lambda: fleet_sim(ace.Policy(
            on_failure=ace.CompiledPolicy.from_ctypes(ctypes.CDLL(None).abs))),
         raises(ValueError, "on_failure")),
        ("without-fleet", lambda: ace.simulate(J, EXP, policy=compiled(lambda v, u: 0)),
         raises(ValueError, "on_failure")),
    ]:  # fmt: skip
        add(f"CompiledPolicy-{label}", lambda c, b=build: b(), expect)


# =========================================================================== simulate


def _simulate() -> None:
    one = sim_ok(1)
    two = sim_ok(2)
    for label, kw, expect in [
        ("unknown-keyword", dict(replica=3), raises(TypeError, "replica")),
        ("replicas-np.int8", dict(replicas=np.int8(3)), accepted(sim_ok(3))),
        ("horizon-np.float32", dict(horizon=np.float32(1e4)), accepted(two)),
        ("horizon-int-2**70", dict(horizon=2**70), raises(ValueError, "horizon")),
        ("horizon-subnormal", dict(horizon=5e-324), accepted(two)),
        ("horizon-Fraction", dict(horizon=Fraction(10**4, 3)), accepted(two)),
        ("horizon-Decimal", dict(horizon=Decimal(10**4)), raises(TypeError, "horizon")),
        ("seed-np.uint64-max", dict(seed=np.uint64(2**64 - 1)), accepted(two)),
        ("seed-2**70", dict(seed=2**70), raises(ValueError, "seed")),
        ("fleet-string", dict(fleet="fleet"), raises(TypeError, "fleet")),
        ("fleet-class", dict(fleet=ace.Fleet), raises(TypeError, "fleet")),
        ("fleet-dict", dict(fleet={"nodes": 4}), raises(TypeError, "fleet")),
        ("policy-string", dict(policy="spares"), raises(TypeError, "policy")),
        ("policy-enum", dict(policy=ace.Replacement.SPARES), raises(TypeError, "policy")),
        ("causes-string", dict(causes="llama3"), raises(TypeError, "causes")),
        ("causes-empty", dict(causes=[]), raises(ValueError, "causes")),
        ("causes-all-zero", dict(causes=[ace.Cause("a", 0.0), ace.Cause("b", 0.0)]),
         raises(ValueError, "causes")),
        ("causes-single", dict(causes=ace.Cause("x", 1.0)), accepted(two)),
        ("causes-llama3", dict(causes=ace.LLAMA3_CAUSES), accepted(two)),
        ("causes-with-string", dict(causes=[ace.Cause("x", 1.0), "y"]),
         raises(TypeError, "causes[1]")),
        ("causes-generator", dict(causes=(ace.Cause("x", 1.0) for _ in range(2))),
         raises(TypeError, "causes")),
        ("failures-scipy-expon", dict(failures="scipy-expon"), accepted(two)),
        ("failures-scipy-norm", dict(failures="scipy-norm"), raises(ValueError, "failures")),
        ("failures-scipy-loc", dict(failures="scipy-loc"), raises(ValueError, "loc")),
        ("failures-replay-inf", dict(failures=ace.Replay([INF])),
         accepted(sim_ok(2, completed=True, then=lambda r: np.all(r.jobs["failures"] == 0)))),
        ("failures-tuple", dict(failures=(EXP,)), accepted(two)),
        ("failures-ndarray", dict(failures=np.array([EXP], dtype=object)),
         raises(TypeError, "failures")),
        ("failures-dict", dict(failures={"law": "exponential"}), raises(TypeError, "failures")),
        ("failures-nested-list", dict(failures=[[EXP]]), raises(TypeError, "failures[0]")),
        ("check_invariants-string", dict(check_invariants="yes"),
         raises(TypeError, "check_invariants")),
        ("check_invariants-with-fleet", dict(check_invariants=True, fleet="fleet-ok"),
         accepted(two)),
        ("first_replica-np.uint32", dict(first_replica=np.uint32(5)),
         accepted(sim_ok(2, then=lambda r: r.jobs["replica"].tolist() == [5, 6]))),
        ("gpus_per_node-2**17", dict(gpus_per_node=2**17), raises(ValueError, "gpus_per_node")),
        ("threads-8192", dict(threads=8192), raises(ValueError, "threads")),
        ("threads-np.int64", dict(threads=np.int64(1)), accepted(two)),
        ("max_events-exceeded", dict(max_events=3, horizon=INF),
         raises(RuntimeError, "max_events")),
        ("max_events-2**64", dict(max_events=2**64), raises(ValueError, "max_events")),
        ("max_events-none", dict(max_events=None), accepted(two)),
        ("record_events-np.bool_-false", dict(record_events=np.bool_(False)), accepted(two)),
        ("target_se", dict(target_se=0.05, replicas=20), accepted(sim_ok())),
        ("replicas-positional-string", dict(replicas="2"), raises(TypeError, "replicas")),
    ]:  # fmt: skip
        finding = None

        def build(c: Any, kw: dict[str, Any] = kw) -> Any:
            kw = dict(kw)
            st = scipy_stats() if str(kw.get("failures", "")).startswith("scipy") else None
            if kw.get("failures") == "scipy-expon":
                kw["failures"] = st.expon(scale=1e4)
            elif kw.get("failures") == "scipy-norm":
                kw["failures"] = st.norm(loc=1e4, scale=10.0)
            elif kw.get("failures") == "scipy-loc":
                kw["failures"] = st.expon(loc=5.0, scale=1e4)
            if kw.get("fleet") == "fleet-ok":
                kw["fleet"] = fleet()
            return sim(**kw)

        add(f"simulate-{label}", build, expect, finding=finding)

    for label, build, expect in [
        ("no-arguments", lambda: ace.simulate(), raises(TypeError, "jobs")),
        ("jobs-set", lambda: ace.simulate({J}, EXP, threads=1), accepted(one)),
        ("jobs-JobArray-in-list", lambda: ace.simulate([ace.JobArray([8], [60.0], 60.0)], EXP),
         raises(TypeError, "jobs[0]")),
        ("jobs-structured", lambda: ace.simulate(
            columns(gpus=[8, 16], work=[60.0, 120.0], checkpoint_interval=[60.0, 60.0]), EXP,
            threads=1), accepted(sim_ok(2, completed=True))),
        ("jobs-structured-missing-work", lambda: ace.simulate(
            columns(gpus=[8], checkpoint_interval=[60.0]), EXP), raises(ValueError, "work")),
        ("jobs-dataframe", lambda: ace.simulate(__import__("pandas").DataFrame(
            {"gpus": [8], "work": [60.0], "checkpoint_interval": [60.0]}), EXP, threads=1),
         accepted(sim_ok(1, completed=True))),
        ("jobs-unaligned-JobArray", lambda: ace.simulate(ace.JobArray(
            gpus=unaligned([8, 16], np.uint32), work=unaligned([60.0, 90.0], np.float64),
            checkpoint_interval=30.0), EXP, threads=1), accepted(sim_ok(2, completed=True))),
        ("failures-per-job-with-none", lambda: ace.simulate([J, J], [EXP, None], threads=1),
         accepted(sim_ok(2, completed=True))),
        ("failures-per-job-too-few", lambda: ace.simulate([J, J], [EXP], threads=1),
         raises(ValueError, "failures")),
        ("job-wider-than-fleet", lambda: ace.simulate(job(gpus=64), fleet=ace.Fleet(2)),
         raises(ValueError, "gpus")),
        ("min_gpus-not-a-multiple", lambda: ace.simulate(job(gpus=16, min_gpus=4),
                                                         fleet=ace.Fleet(4)),
         raises(ValueError, "min_gpus")),
        ("elastic-on-fleet", lambda: ace.simulate(
            ace.Job(32, 6 * 3600.0, 1800.0, min_gpus=16, reconfigure=60.0),
            fleet=fleet(spares=0), replicas=2, seed=3, threads=1),
         accepted(sim_ok(2, completed=True))),
        ("work-subnormal", lambda: ace.simulate(job(work=5e-324), EXP, threads=1),
         accepted(sim_ok(1, completed=True, then=lambda r: r.jobs["productive"][0] == 5e-324))),
        ("submit-at-the-limit", lambda: ace.simulate(job(submit=1e12), EXP, threads=1),
         accepted(sim_ok(1, completed=True, then=lambda r: r.jobs["productive"][0] == 3600.0))),
        ("gpus_per_node-ignored-with-fleet", lambda: ace.simulate(
            J, EXP, fleet=ace.Fleet(4, gpus_per_node=4), gpus_per_node=8, threads=1),
         accepted(sim_ok(1, completed=True))),
        ("init-far", lambda: ace.simulate(job(init=1e13), EXP, threads=1, max_events=10**5),
         raises(ValueError, "init")),
        ("repair-replay-inf", lambda: ace.simulate(
            ace.Job(16, 36000.0, 600.0), fleet=ace.Fleet(2, repair=ace.Replay([INF]),
                                                         node_failures=ace.Exponential(3600.0)),
            threads=1), raises(ValueError, "inf")),
        ("quarantine-retires-every-node", lambda: ace.simulate(
            BIG, fleet=fleet(spares=0), replicas=2, seed=1, threads=1,
            policy=ace.Policy(quarantine=ace.Quarantine(1, INF, INF))),
         accepted(sim_ok(2, then=lambda r: np.all(r.jobs["status"] == ace.JobStatus.UNPLACEABLE)))),
        ("node-trace-fleet", lambda: ace.simulate(
            BIG, fleet=ace.Fleet(4, repair=600.0, node_failures=ace.NodeTrace.from_times(
                {0: [3600.0, 7200.0]}, nodes=4)), threads=1),
         accepted(sim_ok(1, completed=True, then=lambda r: r.trace["time"].tolist()
                         == [3600.0, 7200.0]))),
        ("maintenance-all-nodes", lambda: ace.simulate(
            BIG, fleet=ace.Fleet(4, maintenance=[(3600.0, 3600.0, "all")]), threads=1),
         accepted(sim_ok(1, completed=True,
                         then=lambda r: r.jobs["planned_interruptions"][0] == 1))),
        ("storage-bandwidth", lambda: ace.simulate(
            [job(gpus=16, checkpoint_bytes=1e12)] * 2, fleet=ace.Fleet(4, storage_bandwidth=1e9),
            threads=1), accepted(sim_ok(2, completed=True))),
        ("quarantine-far", lambda: ace.simulate(
            BIG, fleet=fleet(), replicas=2, threads=1,
            policy=ace.Policy(quarantine=ace.Quarantine(1, window=1e15, duration=1e15))),
         raises(ValueError, "window")),
        ("first_replica-last-id", lambda: ace.simulate(J, EXP, first_replica=2**32 - 1, threads=1),
         raises(ValueError, "first_replica")),
        ("failure-law-tiny", lambda: ace.simulate(J, ace.Constant(1e-300), horizon=1e3,
                                                  threads=1, max_events=10**5),
         raises(BAD, "failures")),
    ]:  # fmt: skip
        finding = None
        add(f"simulate-{label}", lambda c, b=build: b(), expect, finding=finding)


def _batch() -> None:
    for label, build, expect in [
        ("empty", lambda: ace.batch_simulate([]), raises(ValueError, "jobs")),
        ("replicas-zero", lambda: ace.batch_simulate(J, replicas=0),
         raises(ValueError, "replicas")),
        ("device-gpu", lambda: ace.batch_simulate(J, device="gpu"), raises(ValueError, "device")),
        ("device-none", lambda: ace.batch_simulate(J, device=None), raises(ValueError, "device")),
        ("device-cuda", lambda: ace.batch_simulate(J, EXP, replicas=2, device="cuda"),
         accepted(batch_ok(1, 2)) if ace.cuda_available() else raises(RuntimeError, "CUDA")),
        ("horizon-nan", lambda: ace.batch_simulate(J, horizon=NAN), raises(ValueError, "horizon")),
        ("threads-zero", lambda: ace.batch_simulate(J, threads=0), raises(ValueError, "threads")),
        ("causes-string", lambda: ace.batch_simulate(J, causes="x"), raises(TypeError, "causes")),
        ("time_limit", lambda: ace.batch_simulate(job(time_limit=100.0)),
         raises(ValueError, "time_limit")),
        ("failures-too-few", lambda: ace.batch_simulate([J, J], [EXP]),
         raises(ValueError, "failures")),
        ("replicas-positional", lambda: ace.batch_simulate(J, EXP, 5),
         raises(TypeError, "positional argument")),
        ("fleet-keyword", lambda: ace.batch_simulate(J, fleet=fleet()), raises(TypeError, "fleet")),
        ("first_replica-overflow", lambda: ace.batch_simulate(J, replicas=3,
                                                              first_replica=2**32 - 2),
         raises(ValueError, "first_replica")),
        ("max_events-exceeded", lambda: ace.batch_simulate(J, ace.Exponential(10.0), max_events=3),
         raises(RuntimeError, "max_events")),
        ("JobArray", lambda: ace.batch_simulate(ace.JobArray([8, 16], [60.0, 120.0], 30.0), EXP,
                                                replicas=3, threads=1), accepted(batch_ok(2, 3))),
        ("elastic-alone", lambda: ace.batch_simulate(job(min_gpus=4), EXP, replicas=2),
         accepted(batch_ok(1, 2))),
        ("persist-and-tiers", lambda: ace.batch_simulate(job(
            persist=ace.Exponential(30.0), tiers=[ace.CheckpointTier(60.0, 0.5, 2.0)]),
            ace.Exponential(900.0), replicas=4, threads=1), accepted(batch_ok(1, 4))),
        ("replay-failures", lambda: ace.batch_simulate(J, ace.Replay([100.0, 200.0]), replicas=2),
         accepted(batch_ok(1, 2))),
        ("same-rows-as-simulate-non-contiguous", lambda: (lambda jobs: (
            ace.batch_simulate(jobs, EXP, replicas=3, seed=4, threads=1).rows(0).tobytes()
            == ace.simulate(jobs[0], EXP, replicas=3, seed=4, threads=1).jobs.tobytes()))(
            [job(work=float(w)) for w in np.arange(600.0, 6000.0, 600.0)[::4]]),
         accepted(true)),
        ("rows-point-out-of-range", lambda: ace.batch_simulate(J, EXP, replicas=2).rows(1),
         raises(ValueError, "point")),
        ("rows-point-bool", lambda: ace.batch_simulate(J, EXP, replicas=2).rows(True),
         raises(TypeError, "point")),
    ]:  # fmt: skip
        add(f"batch_simulate-{label}", lambda c, b=build: b(), expect)


def _sweeps() -> None:
    base = {"jobs": J, "failures": EXP, "replicas": 4, "horizon": 1e5, "threads": 1}
    for label, build, expect in [
        ("dict", lambda: ace.sweep(base), raises(TypeError, "scenarios")),
        ("string", lambda: ace.sweep("abc"), raises(TypeError, "scenarios")),
        ("none", lambda: ace.sweep(None), raises(TypeError, "scenarios")),
        ("int-entry", lambda: ace.sweep([5]), raises(TypeError, "scenarios[0]")),
        ("missing-jobs", lambda: ace.sweep([{}]), raises(ValueError, "jobs")),
        ("misspelt-key", lambda: ace.sweep([{**base, "replica": 2}]),
         raises(ValueError, "replica")),
        ("int-key", lambda: ace.sweep([{1: J}]), raises(TypeError, "keys")),
        ("replicas-zero", lambda: ace.sweep([{**base, "replicas": 0}]),
         raises(ValueError, "replicas")),
        ("replicas-float", lambda: ace.sweep([{**base, "replicas": 2.0}]),
         raises(TypeError, "replicas")),
        ("seed-negative-names-scenario", lambda: ace.sweep([base, {**base, "seed": -1}]),
         raises(ValueError, "scenarios[1]: seed")),
        ("executor-string", lambda: ace.sweep([base], executor="pool"),
         raises(TypeError, "executor")),
        ("chunk_replicas-zero", lambda: ace.sweep([base], chunk_replicas=0),
         raises(ValueError, "chunk_replicas")),
        ("chunk_replicas-float", lambda: ace.sweep([base], chunk_replicas=1.5),
         raises(TypeError, "chunk_replicas")),
        ("progress-string", lambda: ace.sweep([base], progress="yes"),
         raises(TypeError, "progress")),
        ("empty", lambda: ace.sweep([]), accepted(check(lambda r: r == []))),
        ("chunks-equal-whole", lambda: ace.sweep([base], chunk_replicas=3)[0].result.jobs.tobytes()
         == ace.simulate(**base).jobs.tobytes(), accepted(true)),
        ("thread-pool", lambda: ace.sweep([base, {**base, "seed": 1}],
                                          executor=ThreadPoolExecutor(2)),
         accepted(check(lambda r: len(r) == 2 and all(x.result.jobs.size == 4 for x in r)))),
        ("process-pool-lambda-policy", lambda: ace.sweep(
            [{**base, "fleet": fleet(), "policy": ace.Policy(on_failure=lambda v: None)}],
            executor=ProcessPoolExecutor(1)), raises(TypeError, "policy")),
        ("grid-base-string", lambda: ace.sweep.grid("x"), raises(TypeError, "base")),
        ("grid-scalar-axis", lambda: ace.sweep.grid(base, seed=5), raises(TypeError, "seed")),
        ("grid-empty-axis", lambda: ace.sweep.grid(base, seed=[]), raises(ValueError, "seed")),
        ("grid-string-axis", lambda: ace.sweep.grid(base, replicas="12"),
         raises(TypeError, "replicas")),
        ("grid-misspelt-base-key", lambda: ace.sweep.grid({"job": J}), raises(ValueError, "job")),
        ("grid-range-axis", lambda: ace.sweep.grid(base, seed=range(3)),
         accepted(check(lambda g: [x["seed"] for x in g] == [0, 1, 2]))),
        ("grid-dict-axis", lambda: ace.sweep.grid(base, seed={0: 1}), raises(TypeError, "seed")),
    ]:  # fmt: skip
        add(f"sweep-{label}", lambda c, b=build: b(), expect)


def _workloads_fit_analytic() -> None:
    def meta(**kw: Any) -> Any:
        return lambda c: workloads.meta_like(**{"days": 1.0, "gpus": 256, **kw})

    def jobs_ok(a: Any) -> None:
        assert isinstance(a, ace.JobArray) and len(a) >= 1
        assert np.all(a.work >= 60.0) and np.all(a.work <= 7 * 86400.0), a.work
        assert np.all(a.submit >= 0) and np.all(np.diff(a.submit) >= 0)

    for label, kw, expect in [
        ("days-zero", dict(days=0), raises(ValueError, "days")),
        ("days-negative", dict(days=-1.0), raises(ValueError, "days")),
        ("days-nan", dict(days=NAN), raises(ValueError, "days")),
        ("days-string", dict(days="7"), raises(TypeError, "days")),
        ("days-inf", dict(days=INF), raises(ValueError, "days")),
        ("days-far", dict(days=1e8), raises(ValueError, "days")),
        ("days-tiny", dict(days=1e-9), accepted(jobs_ok)),
        ("gpus-zero", dict(gpus=0), raises(ValueError, "gpus")),
        ("gpus-float", dict(gpus=256.0), raises(TypeError, "gpus")),
        ("gpus-2**31+1", dict(gpus=2**31 + 1), raises(ValueError, "gpus")),
        ("gpus-one", dict(gpus=1), accepted(check(lambda a: np.all(a.gpus == 1)))),
        ("seed-negative", dict(seed=-1), raises(ValueError, "seed")),
        ("seed-float", dict(seed=1.5), raises(TypeError, "seed")),
        ("seed-2**70", dict(seed=2**70), accepted(jobs_ok)),
        ("utilization-zero", dict(utilization=0.0), raises(ValueError, "utilization")),
        ("utilization-one", dict(utilization=1.0), accepted(jobs_ok)),
        ("utilization-above-one", dict(utilization=1.0000001), raises(ValueError, "utilization")),
        ("checkpoint_interval-zero", dict(checkpoint_interval=0.0),
         raises(ValueError, "checkpoint_interval")),
        ("checkpoint_interval-rule", dict(checkpoint_interval="young"),
         raises(TypeError, "checkpoint_interval")),
        ("runtime_sigma-zero", dict(runtime_sigma=0.0), raises(ValueError, "runtime_sigma")),
        ("runtime_sigma-huge", dict(runtime_sigma=1e3), accepted(jobs_ok)),
        ("init-negative", dict(init=-1.0), raises(ValueError, "init")),
        ("unknown-keyword", dict(nodes=32), raises(TypeError, "nodes")),
    ]:  # fmt: skip
        add(f"meta_like-{label}", meta(**kw), expect)
    add(
        "offered_load-gpus-zero",
        lambda c: workloads.offered_load(workloads.meta_like(1.0, 64), 0, 1.0),
        raises(ValueError, "gpus"),
    )
    add(
        "offered_load-not-jobs",
        lambda c: workloads.offered_load("jobs", 8, 1.0),
        raises(TypeError, "jobs"),
    )
    add(
        "offered_load-plausible",
        lambda c: workloads.offered_load(workloads.meta_like(2.0, 1024, seed=1), 1024, 2.0),
        accepted(check(lambda x: 0.3 < x < 2.0)),
    )

    # fitting
    for label, build, expect in [
        ("weibull-one-sample", lambda: fit.fit_weibull([1.0]), raises(ValueError, "samples")),
        ("weibull-equal", lambda: fit.fit_weibull([5.0, 5.0, 5.0]), raises(ValueError, "samples")),
        ("lognormal-zero", lambda: fit.fit_lognormal([0.0, 1.0]), raises(ValueError, "samples")),
        ("exponential-zeros", lambda: fit.fit_exponential([0.0, 0.0]),
         raises(ValueError, "samples")),
        ("exponential-empty", lambda: fit.fit_exponential([]), raises(ValueError, "samples")),
        ("weibull-nan", lambda: fit.fit_weibull([1.0, NAN]), raises(ValueError, "samples")),
        ("exponential-string", lambda: fit.fit_exponential("abc"), raises(TypeError, "samples")),
        ("weibull-object", lambda: fit.fit_weibull(np.array([1, 2, 3], dtype=object)),
         raises(TypeError, "samples")),
        ("weibull-2d", lambda: fit.fit_weibull([[1.0, 2.0], [3.0, 4.0]]),
         raises(ValueError, "samples")),
        ("weibull-extreme-spread", lambda: fit.fit_weibull([1e-300, 1e300]),
         raises(ValueError, "samples")),
        ("lognormal-extreme-spread", lambda: fit.fit_lognormal([1e-300, 1e300]),
         raises(ValueError, "samples")),
        ("weibull-int-2**70", lambda: fit.fit_weibull([1.0, 2.0, 2**70]), accepted(law_ok())),
        ("censored-short", lambda: fit.fit_exponential([1.0, 2.0], censored=[True]),
         raises(ValueError, "censored")),
        ("censored-all", lambda: fit.fit_weibull([1.0, 2.0, 3.0], censored=[True] * 3),
         raises(ValueError, "censored")),
        ("censored-two", lambda: fit.fit_exponential([1.0, 2.0], censored=[2, 0]),
         raises(ValueError, "censored")),
        ("censored-string", lambda: fit.fit_weibull([1.0, 2.0], censored="ab"),
         raises(TypeError, "censored")),
        ("censored-float-flags", lambda: fit.fit_weibull([1.0, 2.0, 3.0],
                                                         censored=np.array([0.0, 1.0, 0.0])),
         accepted(law_ok())),
        ("weibull-non-contiguous", lambda: fit.fit_weibull(np.arange(1.0, 100.0)[::2]),
         accepted(law_ok())),
        ("exponential-positional-extra", lambda: fit.fit_exponential([1.0], None, 3),
         raises(TypeError, "positional argument")),
        ("weibull_mle-exact", lambda: fit.weibull_mle([1.0, 2.0, 3.0]),
         accepted(check(lambda t: len(t) == 2 and all(v > 0 for v in t)))),
        ("exponential_mle-censored",
         lambda: fit.exponential_mle([1.0, 3.0], censored=[False, True]),
         accepted(equals(4.0))),
        ("lognormal_mle-string", lambda: fit.lognormal_mle(["1", "2"]),
         raises(TypeError, "samples")),
    ]:  # fmt: skip
        add(f"fit-{label}", lambda c, b=build: b(), expect)

    # closed forms and the small helpers
    for label, build, expect in [
        ("young-non-contiguous", lambda: ace.young_interval(np.full(6, 60.0)[::2], 3600.0),
         accepted(check(lambda x: np.allclose(x, math.sqrt(2 * 60 * 3600))))),
        ("young-float16", lambda: ace.young_interval(60.0, np.float16(3600.0)),
         accepted(equals(math.sqrt(2 * 60 * 3600)))),
        ("young-empty", lambda: ace.young_interval([], []),
         accepted(check(lambda x: np.asarray(x).shape == (0,)))),
        ("young-2**70", lambda: ace.young_interval(60.0, 2**70), accepted(check(math.isfinite))),
        ("daly-cost-above-2M", lambda: ace.daly_interval(7200.0, 3600.0), accepted(equals(3600.0))),
        ("daly-missing", lambda: ace.daly_interval(60.0), raises(TypeError, "mtbf")),
        ("ettr-tiny-mtbf", lambda: ace.expected_ettr_exponential(
            mtbf=1e-300, work=1e5, checkpoint_interval=600.0, checkpoint_cost=60.0,
            restart_cost=120.0), accepted(check(lambda e: 0.0 <= e <= 1.0))),
        ("ettr-inf-mtbf", lambda: ace.expected_ettr_exponential(
            mtbf=INF, work=1e5, checkpoint_interval=600.0, checkpoint_cost=60.0,
            restart_cost=120.0), accepted(equals(1e5 / (1e5 + 120.0 + 167 * 60.0), rel=1e-12))),
        ("ettr-interval-above-work", lambda: ace.expected_ettr_exponential(
            mtbf=1e4, work=600.0, checkpoint_interval=1e6, checkpoint_cost=60.0,
            restart_cost=0.0), accepted(check(lambda e: 0.0 < e < 1.0))),
        ("meta-ettr-out-of-range", lambda: ace.meta_expected_ettr(
            gpus=131072, failures_per_node_day=1.0, restart_overhead=3600.0,
            checkpoint_interval=86400.0, checkpoint_write=60.0),
         accepted(check(lambda e: 0.0 <= e <= 1.0))),
        ("meta-ettr-gpus_per_node-huge", lambda: ace.meta_expected_ettr(
            16384, 6.5e-3, 600.0, 3600.0, 60.0, gpus_per_node=2**70),
         accepted(check(lambda e: 0.0 <= e <= 1.0))),
        ("mttf-of-a-plain-law", lambda: ace.mttf(ace.Exponential(5.0), 8), accepted(equals(5.0))),
        ("mttf-gpus-2**70", lambda: ace.mttf(ace.meta_scale_model(), 2**70),
         accepted(check(lambda m: 0 < m < 1))),
        ("node_rate_model-huge", lambda: ace.node_rate_model(1e308),
         accepted(check(lambda m: m.mean(8) > 0))),
        ("gang-not-a-law", lambda: ace.gang(5, 4), raises(TypeError, "law")),
        ("gang-units-zero", lambda: ace.gang(EXP, 0), raises(ValueError, "units")),
        ("gang-units-2**63", lambda: ace.gang(EXP, 2**63), raises(ValueError, "units")),
        ("gang-units-float", lambda: ace.gang(EXP, 1.5), raises(TypeError, "units")),
        ("gang-replay", lambda: ace.gang(ace.Replay([1.0]), 4), raises(TypeError, "law")),
        ("gang-points-one", lambda: ace.gang(ace.LogNormal(0, 1), 4, points=1),
         raises(ValueError, "points")),
        ("gang-weibull-exact", lambda: ace.gang(ace.Weibull(0.5, 16.0), 4),
         accepted(check(lambda g: isinstance(g, ace.Weibull) and math.isclose(g.scale, 1.0)))),
        ("gang-lognormal-huge-units", lambda: ace.gang(ace.LogNormal(0, 1), 2**62, points=64),
         accepted(law_ok())),
        ("gang-mixture-of-scale-aware", lambda: ace.gang(
            ace.Mixture([(1, ace.ScaleAware(EXP, 8))]), 4), raises(BAD, "ScaleAware")),
        ("optimal_interval-not-a-job", lambda: ace.optimal_interval("job"),
         raises(TypeError, "job")),
        ("optimal_interval-replicas-one", lambda: ace.optimal_interval(J, EXP, replicas=1),
         raises(ValueError, "replicas")),
        ("optimal_interval-empty", lambda: ace.optimal_interval(J, EXP, intervals=[], replicas=2),
         raises(ValueError, "intervals")),
        ("optimal_interval-negative", lambda: ace.optimal_interval(J, EXP, intervals=[600.0, -1.0],
                                                                   replicas=2),
         raises(ValueError, "intervals[1]")),
        ("optimal_interval-strings", lambda: ace.optimal_interval(J, EXP, intervals=["a"],
                                                                  replicas=2),
         raises(BAD, "intervals")),
        ("optimal_interval-failures-string", lambda: ace.optimal_interval(J, "exp", replicas=2),
         raises(TypeError, "failures")),
        ("optimal_interval-two-candidates", lambda: ace.optimal_interval(
            J, EXP, intervals=[600.0, 1200.0], replicas=4),
         accepted(check(lambda o: o.interval in (600.0, 1200.0) and 0 <= o.ettr <= 1))),
        ("optimal_interval-fleet-not-a-fleet", lambda: ace.optimal_interval(J, fleet=8),
         raises(TypeError, "fleet")),
        ("optimal_interval-policy-string", lambda: ace.optimal_interval(J, policy="spares"),
         raises(TypeError, "policy")),
        ("optimal_interval-others-a-job", lambda: ace.optimal_interval(J, others=J),
         raises(TypeError, "others")),
        ("optimal_interval-on-a-fleet", lambda: ace.optimal_interval(
            J, fleet=ace.Fleet(4, spares=1, node_failures=EXP), intervals=[600.0, 1200.0],
            replicas=4),
         accepted(check(lambda o: o.interval in (600.0, 1200.0) and 0 <= o.ettr <= 1))),
        ("tune-empty-space", lambda: ace.tune(TUNE_BASE, {}), raises(ValueError, "space")),
        ("tune-unknown-path", lambda: ace.tune(TUNE_BASE, {"fleet.spars": [0, 1]}),
         raises(ValueError, "did you mean 'spares'")),
        ("tune-confidence-one", lambda: ace.tune(TUNE_BASE, TUNE_SPACE, confidence=1),
         raises(ValueError, "confidence")),
        ("tune-confidence-nan", lambda: ace.tune(TUNE_BASE, TUNE_SPACE, confidence=NAN),
         raises(ValueError, "confidence")),
        ("tune-indifference-negative", lambda: ace.tune(TUNE_BASE, TUNE_SPACE, indifference=-1),
         raises(ValueError, "indifference")),
        ("tune-cost-without-indifference", lambda: ace.tune(
            TUNE_BASE, TUNE_SPACE, objective="cost", cost=ace.Cost(gpu_hour=1.0)),
         raises(ValueError, "indifference")),
        ("tune-subject_to-code", lambda: ace.tune(
            TUNE_BASE, TUNE_SPACE, subject_to="__import__('os')", minimize="fleet.spares"),
         raises(ValueError, "subject_to")),
        ("tune-minimize-strings", lambda: ace.tune(
            TUNE_BASE, {"policy.replacement": ["spares", "wait_repair"]},
            subject_to="ettr >= 0.5", minimize="policy.replacement"),
         raises(TypeError, "minimize")),
        ("tune-range-points-zero", lambda: ace.search.Range(0, 4, points=0),
         raises(ValueError, "points")),
        ("tune-value-not-toml", lambda: ace.tune(TUNE_BASE, {"fleet.spares": [object()]}),
         raises(TypeError, "space")),
        ("tune-base-not-a-scenario", lambda: ace.tune("x.toml", TUNE_SPACE),
         raises(TypeError, "base")),
        ("tune-two-spares", lambda: ace.tune(TUNE_BASE, TUNE_SPACE, indifference=0.05),
         accepted(check(lambda r: r.best["fleet.spares"] in (0, 1) and r.table.shape == (2,)))),
        ("cost-negative", lambda: ace.Cost(gpu_hour=-1.0), raises(ValueError, "gpu_hour")),
        ("cost-all-zero", lambda: ace.Cost(), raises(ValueError, "Cost")),
        ("parse_duration-bare-number-with-part", lambda: parse_duration("1h30"),
         raises(ValueError, "duration")),
        ("parse_duration-empty", lambda: parse_duration(""), raises(ValueError, "duration")),
        ("parse_duration-negative", lambda: parse_duration("-1h"), raises(ValueError, "duration")),
        ("parse_duration-overflow", lambda: parse_duration("1e400s"),
         raises(ValueError, "duration")),
        ("parse_duration-none", lambda: parse_duration(None), raises(TypeError, "duration")),
        ("parse_duration-upper-case", lambda: parse_duration("1H"), accepted(equals(3600.0))),
        ("parse_duration-np.int64", lambda: parse_duration(np.int64(5)), accepted(equals(5.0))),
        ("parse_duration-name", lambda: parse_duration("soon", "horizon"),
         raises(ValueError, "horizon")),
        ("parse_duration-composite", lambda: parse_duration("1d2h3min4s"),
         accepted(equals(86400 + 7200 + 180 + 4.0))),
    ]:  # fmt: skip
        add(f"analytic-{label}", lambda c, b=build: b(), expect)


# =========================================================================== sensitivity


def _sensitivity_ok(method: str) -> Any:
    def ok(s: Any) -> bool:
        assert s.method == method and s.ranking[0] in ("fleet.spares", "fleet.repair.mean")
        for name in s.indices.dtype.names:
            if name not in ("factor", "rank"):
                assert np.all(np.isfinite(s.indices[name])), name
        return True

    return check(ok)


def _sensitivity_cases() -> None:
    from acesim.sensitivity import load_sensitivity
    from acesim.sensitivity.spec import parse_factor_text

    spares = {"fleet.spares": {"low": 0, "high": 1}}
    for label, build, expect in [
        ("empty-factors", lambda: ace.sensitivity(TUNE_BASE, {}),
         raises(ValueError, "at least one factor")),
        ("factors-a-list", lambda: ace.sensitivity(TUNE_BASE, ["fleet.spares"]),
         raises(TypeError, "factors")),
        ("unknown-path", lambda: ace.sensitivity(TUNE_BASE, {"fleet.spars": [0, 1]}),
         raises(ValueError, "did you mean 'spares'")),
        ("empty-range", lambda: ace.sensitivity(TUNE_BASE, {"fleet.spares": {"low": 1, "high": 1}}),
         raises(ValueError, "is empty")),
        ("reversed-range", lambda: ace.sensitivity(
            TUNE_BASE, {"jobs[0].work": {"low": "2d", "high": "1d"}}), raises(ValueError, "empty")),
        ("categorical-range", lambda: ace.sensitivity(
            TUNE_BASE, {"policy.replacement": {"low": 0, "high": 1}}),
         raises(ValueError, "categorical")),
        ("categorical-search-range", lambda: ace.sensitivity(
            TUNE_BASE, {"fleet.node_start": ace.search.Range(0, 1)}),
         raises(ValueError, "categorical")),
        ("mean-without-law", lambda: ace.sensitivity(
            TUNE_BASE, {"failures.mean": {"low": 1.0, "high": 2.0}}),
         raises(ValueError, "holds no law")),
        ("mean-not-positive", lambda: ace.sensitivity(
            TUNE_BASE, {"fleet.node_failures.mean": {"low": 0.0, "high": 2.0}}),
         raises(ValueError, "mean must be > 0")),
        ("bound-nan", lambda: ace.sensitivity(TUNE_BASE, {"jobs[0].work": {"low": NAN, "high": 1}}),
         raises(ValueError, "finite")),
        ("bound-bad-unit", lambda: ace.sensitivity(
            TUNE_BASE, {"jobs[0].work": {"low": "1 fortnight", "high": "1d"}}),
         raises(ValueError, "low")),
        ("count-float-bound", lambda: ace.sensitivity(
            TUNE_BASE, {"fleet.spares": {"low": 0.5, "high": 1}}),
         raises(TypeError, "must be an integer")),
        ("log-from-zero", lambda: ace.sensitivity(
            TUNE_BASE, {"jobs[0].work": {"low": 0.0, "high": 9.0, "log": True}}),
         raises(ValueError, "low > 0")),
        ("one-level", lambda: ace.sensitivity(TUNE_BASE, {"fleet.spares": [1]}),
         raises(ValueError, "at least 2")),
        ("repeated-level", lambda: ace.sensitivity(TUNE_BASE, {"fleet.spares": [1, 1]}),
         raises(ValueError, "given twice")),
        ("level-refused", lambda: ace.sensitivity(TUNE_BASE, {"fleet.spares": [0, 7]}),
         raises(ValueError, "spares")),
        ("method-unknown", lambda: ace.sensitivity(TUNE_BASE, spares, method="fast"),
         raises(ValueError, "method")),
        ("trajectories-bool", lambda: ace.sensitivity(TUNE_BASE, spares, trajectories=True),
         raises(TypeError, "trajectories")),
        ("samples-one", lambda: ace.sensitivity(TUNE_BASE, spares, method="sobol", samples=1),
         raises(ValueError, "samples")),
        ("seed-negative", lambda: ace.sensitivity(TUNE_BASE, spares, seed=-1),
         raises(ValueError, "seed")),
        ("seed-float", lambda: ace.sensitivity(TUNE_BASE, spares, seed=1.5),
         raises(TypeError, "seed")),
        ("replicas-zero", lambda: ace.sensitivity(TUNE_BASE, spares, replicas=0),
         raises(ValueError, "replicas")),
        ("grid-odd", lambda: ace.sensitivity(TUNE_BASE, spares, grid=3),
         raises(ValueError, "grid")),
        ("bootstrap-few", lambda: ace.sensitivity(TUNE_BASE, spares, bootstrap=3),
         raises(ValueError, "bootstrap")),
        ("cost-missing", lambda: ace.sensitivity(TUNE_BASE, spares, objective="cost"),
         raises(ValueError, "cost")),
        ("base-a-path", lambda: ace.sensitivity("x.toml", spares), raises(TypeError, "base")),
        ("factor-text-no-equals", lambda: parse_factor_text("fleet.spares"),
         raises(ValueError, "--factor")),
        ("factor-text-half-range", lambda: parse_factor_text("fleet.spares=1.."),
         raises(ValueError, "LOW..HIGH")),
        ("load-garbage", lambda: load_sensitivity(__file__), raises(ValueError, "")),
        ("morris-two-factors", lambda: ace.sensitivity(
            TUNE_BASE, {**spares, "fleet.repair.mean": {"low": "1h", "high": "4h"}},
            trajectories=3, replicas=2), accepted(_sensitivity_ok("morris"))),
        ("sobol-two-factors", lambda: ace.sensitivity(
            TUNE_BASE, {**spares, "fleet.repair.mean": {"low": "1h", "high": "4h"}},
            method="sobol", samples=4, replicas=2), accepted(_sensitivity_ok("sobol"))),
    ]:  # fmt: skip
        add(f"sensitivity-{label}", lambda c, b=build: b(), expect)


_sensitivity_cases()


# =========================================================================== history


SACCT_HEAD = "JobID|State|Start|End|NNodes|NodeList\n"


def _sacct_with_failures() -> str:
    """One job that fails five times on its nodes, then completes."""
    lines, t = [], 0
    for k, (state, node) in enumerate([("NODE_FAIL", "n1"), ("NODE_FAIL", "n2"),
                                       ("NODE_FAIL", "n1"), ("FAILED", "n3"),
                                       ("NODE_FAIL", "n2"), ("COMPLETED", "n3")]):  # fmt: skip
        start, end = t + 600, t + 600 + 3600 * (k + 1)
        lines.append(f"7|{state}|{_stamp(start)}|{_stamp(end)}|1|{node}\n")
        t = end
    return SACCT_HEAD + "".join(lines)


def _stamp(seconds: int) -> str:
    import datetime as dt

    return (dt.datetime(2024, 1, 1) + dt.timedelta(seconds=seconds)).isoformat()


GOOD_SACCT = SACCT_HEAD + "1|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|1|n1\n"


def _history() -> None:
    def sacct(text: str | bytes, name: str = "jobs.txt", **kw: Any) -> Any:
        return lambda c: history.read_sacct(c.write(name, text), **kw)

    def events(text: str | bytes, name: str = "log.jsonl", **kw: Any) -> Any:
        return lambda c: history.read_events(c.write(name, text), **kw)

    hist_ok = accepted(check(lambda h: isinstance(h, history.History)))
    for label, build, expect in [
        ("sacct-missing-file", lambda c: history.read_sacct(c.path("nope.txt")),
         raises(FileNotFoundError, "nope.txt")),
        ("sacct-directory", lambda c: history.read_sacct(c.path("x").parent),
         raises(HistoryFormatError, "is a directory")),
        ("sacct-empty", sacct(""), raises(HistoryFormatError, "empty")),
        ("sacct-garbage", sacct(GARBAGE), raises(HistoryFormatError, "jobs.txt")),
        ("sacct-nul-bytes", sacct(SACCT_HEAD + "1\x00|COMPLETED|2024-01-01T00:00:00|"
                                  "2024-01-01T01:00:00|1|n1\n"),
         raises(HistoryFormatError, "JobID")),
        ("sacct-bom", sacct("\ufeff" + GOOD_SACCT), hist_ok),
        ("sacct-crlf", sacct(GOOD_SACCT.replace("\n", "\r\n")), hist_ok),
        ("sacct-huge-line", sacct(SACCT_HEAD + "1|" + "x" * (1 << 21) + "\n"),
         raises(HistoryFormatError, "longer than")),
        ("sacct-year-9999", sacct(SACCT_HEAD + "1|COMPLETED|2024-01-01T00:00:00|"
                                  "9999-12-31T23:59:59|1|n1\n"),
         accepted(check(lambda h: h.span[1] > 2.5e11))),
        ("sacct-path-none", lambda c: history.read_sacct(None), raises(TypeError, "path")),
        ("sacct-path-int", lambda c: history.read_sacct(5), raises(TypeError, "path")),
        ("sacct-columns-string", sacct(GOOD_SACCT.split("\n", 1)[1], columns="JobID|State"),
         raises(TypeError, "columns")),
        ("sacct-span-bad-times", sacct(GOOD_SACCT, span=("x", "y")), raises(ValueError, "span")),
        ("sacct-span-int", sacct(GOOD_SACCT, span=5), raises(TypeError, "span")),
        ("sacct-span-backwards", sacct(GOOD_SACCT, span=("2024-01-01T02:00:00",
                                                         "2024-01-01T00:00:00")),
         raises(ValueError, "span")),
        ("sacct-gpus_per_node-zero", sacct(GOOD_SACCT, gpus_per_node=0),
         raises(ValueError, "gpus_per_node")),
        ("sacct-gpus_per_node-string", sacct(GOOD_SACCT, gpus_per_node="8"),
         raises(TypeError, "gpus_per_node")),
        ("sacct-failure_states-unknown", sacct(GOOD_SACCT, failure_states=["EXPLODED"]),
         raises(ValueError, "failure_states")),
        ("sacct-origin-int", sacct(GOOD_SACCT, origin=5), raises(TypeError, "origin")),
        ("sacct-nodes-int", sacct(GOOD_SACCT, nodes=5), raises(TypeError, "nodes")),
        ("sacct-checkpoints-int", sacct(GOOD_SACCT, checkpoints=5),
         raises(TypeError, "checkpoints")),
        ("sacct-checkpoints-bad-time", sacct(GOOD_SACCT, checkpoints=[("1", "x")]),
         raises(ValueError, "checkpoints")),
        ("sacct-unknown-keyword", sacct(GOOD_SACCT, format="csv"), raises(TypeError, "format")),
        ("events-missing-file", lambda c: history.read_events(c.path("nope.jsonl")),
         raises(FileNotFoundError, "nope.jsonl")),
        ("events-empty", events(""), raises(HistoryFormatError, "empty")),
        ("events-garbage", events(GARBAGE), raises(HistoryFormatError, "log.jsonl")),
        ("events-format-xml", events('{"time": 0, "kind": "log_start"}\n', format="xml"),
         raises(ValueError, "format")),
        ("events-format-int", events('{"time": 0, "kind": "log_start"}\n', format=5),
         raises(BAD, "format")),
        ("events-time-nan-token", events('{"time": NaN, "kind": "log_start"}\n'),
         raises(HistoryFormatError, "time")),
        ("events-time-infinity", events('{"time": Infinity, "kind": "log_start"}\n'),
         raises(HistoryFormatError, "time")),
        ("events-time-huge", events('{"time": 1e300, "kind": "log_start"}\n'),
         raises(HistoryFormatError, "time")),
        ("events-gpus-negative", events('{"time": 0, "kind": "job_submit", "job": "a", '
                                        '"gpus": -8}\n'), raises(HistoryFormatError, "gpus")),
        ("events-gpus-string", events('{"time": 0, "kind": "job_submit", "job": "a", '
                                      '"gpus": "eight"}\n'), raises(HistoryFormatError, "gpus")),
        ("events-nodes-int", events('{"time": 0, "kind": "job_start", "job": "a", "nodes": 5}\n'),
         raises(HistoryFormatError, "nodes")),
        ("events-job-object", events('{"time": 0, "kind": "job_start", "job": {"a": 1}}\n'),
         raises(HistoryFormatError, "job")),
        ("events-csv-header-only", events("time,kind\n", name="log.csv"),
         raises(HistoryFormatError, "no events")),
        ("events-csv-no-time", events("kind,job\njob_start,a\n", name="log.csv"),
         raises(HistoryFormatError, "time")),
        ("events-bom", events('\ufeff{"time": 0, "kind": "job_start", "job": "a"}\n'
                              '{"time": 60, "kind": "job_stop", "job": "a", '
                              '"state": "COMPLETED"}\n'), hist_ok),
        ("events-path-none", lambda c: history.read_events(None), raises(TypeError, "path")),
        ("events-origin-with-numbers", events('{"time": 0, "kind": "log_start"}\n',
                                              origin="2024-01-01T00:00:00"),
         raises(ValueError, "origin")),
        ("titan-failed-two", lambda c: history.read_titan_lifetimes(c.write(
            "t.csv", "gpu_sn,batch,service_time_s,failed,failure_mode\na,old,100,2,DBE\n")),
         raises(HistoryFormatError, "failed")),
        ("titan-negative-time", lambda c: history.read_titan_lifetimes(c.write(
            "t.csv", "gpu_sn,batch,service_time_s,failed,failure_mode\na,old,-5,1,DBE\n")),
         raises(HistoryFormatError, "service_time_s")),
        ("titan-mode-without-failure", lambda c: history.read_titan_lifetimes(c.write(
            "t.csv", "gpu_sn,batch,service_time_s,failed,failure_mode\na,old,100,0,DBE\n")),
         raises(HistoryFormatError, "failure_mode")),
        ("titan-missing-column", lambda c: history.read_titan_lifetimes(c.write(
            "t.csv", "gpu_sn,batch,failed,failure_mode\na,old,1,DBE\n")),
         raises(HistoryFormatError, "service_time_s")),
        ("titan-no-such-batch", lambda c: history.read_titan_lifetimes(c.write(
            "t.csv", "gpu_sn,batch,service_time_s,failed,failure_mode\na,old,100,1,DBE\n"),
            batch="new"), raises(HistoryFormatError, "batch")),
        ("titan-interfailure-backwards", lambda c: history.read_titan_interfailure(c.write(
            "t.csv", "event_time,event_type\n2014-01-23 05:59:42,DBE\n2013-01-01 00:00:00,DBE\n")),
         raises(HistoryFormatError, "event_time")),
        ("titan-interfailure-bad-stamp", lambda c: history.read_titan_interfailure(c.write(
            "t.csv", "event_time,event_type\nyesterday,DBE\n")),
         raises(HistoryFormatError, "event_time")),
        ("lanl-nodes-bad-node", lambda c: history.read_lanl_nodes(c.write(
            "l.csv", "node,prob_started,inter_failure_s\nx,2002-01-02 12:00,5\n")),
         raises(HistoryFormatError, "node")),
        ("lanl-nodes-inf-gap", lambda c: history.read_lanl_nodes(c.write(
            "l.csv", "node,prob_started,inter_failure_s\n1,2002-01-02 12:00,inf\n")),
         raises(HistoryFormatError, "inter_failure_s")),
        ("llama3-negative-count", lambda c: history.read_llama3_causes(c.write(
            "c.csv", "component,category,count\nGPU,GPU,-1\n")),
         raises(HistoryFormatError, "count")),
        ("llama3-fractional-count", lambda c: history.read_llama3_causes(c.write(
            "c.csv", "component,category,count\nGPU,GPU,1.5\n")),
         raises(HistoryFormatError, "count")),
        ("llama3-empty-component", lambda c: history.read_llama3_causes(c.write(
            "c.csv", "component,category,count\n,GPU,3\n")),
         raises(HistoryFormatError, "component")),
        ("llama3-header-only", lambda c: history.read_llama3_causes(c.write(
            "c.csv", "component,category,count\n")), raises(HistoryFormatError, "no causes")),
        ("llama3-extra-field", lambda c: history.read_llama3_causes(c.write(
            "c.csv", "component,category,count\nGPU,GPU,3,4\n")),
         raises(HistoryFormatError, "fields")),
        ("acme-share-above-one", lambda c: history.read_acme_states(c.write("a.csv", (
            "cluster,gpu_job_num,avg_gpu_num,med_gpu_num,max_gpu,avg_run_time_gpu,med_run_time_gpu,"
            "max_run_time_gpu,complete_rate_gpu,cancel_rate_gpu,fail_rate_gpu,"
            "complete_rate_gpu_time,cancel_rate_gpu_time,fail_rate_gpu_time\n"
            "X,10,1,1,1,1,1,1,1.5,0,0,0,0,0\n"))), raises(HistoryFormatError, "complete_rate_gpu")),
        ("bamboo-preempted-two", lambda c: history.read_bamboo_lifetimes(c.write(
            "b.csv", "trace,node,add_s,remove_s,lifetime_s,preempted\np3,n1,0,60,60,2\n")),
         raises(HistoryFormatError, "preempted")),
        ("bamboo-remove-before-add", lambda c: history.read_bamboo_lifetimes(c.write(
            "b.csv", "trace,node,add_s,remove_s,lifetime_s,preempted\np3,n1,60,0,60,1\n")),
         raises(HistoryFormatError, "remove_s")),
        ("bamboo-preemptions-no-time", lambda c: history.read_bamboo_preemptions(c.write(
            "b.csv", "n_preempted,gap_s\n1,\n")), raises(HistoryFormatError, "t_s")),
        ("philly-empty-job", lambda c: history.read_philly(c.write(
            "p.csv", "job_id,num_gpus,attempt,attempt_runtime_s\n,8,1,74.0\n")),
         raises(HistoryFormatError, "job_id")),
        ("read_shared-unknown", lambda c: history.read_shared("nope", c.path("x").parent),
         raises(ValueError, "name")),
        ("read_shared-missing-folder", lambda c: history.read_shared("llama3_causes",
                                                                     c.path("absent")),
         raises(FileNotFoundError, "llama3_interruptions.csv")),
        ("expand_nodelist-open", lambda c: history.expand_nodelist("n[1-"),
         raises(history.NodeListError, "[")),
        ("expand_nodelist-int", lambda c: history.expand_nodelist(5),
         raises(TypeError, "node list")),
        ("expand_nodelist-huge-range", lambda c: history.expand_nodelist("n[1-100000000]"),
         raises(history.NodeListError, "names")),
        ("compress_nodelist-int", lambda c: history.compress_nodelist([5]),
         raises(history.NodeListError, "5")),
        ("compress_nodelist-string", lambda c: history.compress_nodelist("abc"),
         raises(TypeError, "names")),
        ("compress-expand-roundtrip", lambda c: history.expand_nodelist(
            history.compress_nodelist(["gpu003", "gpu001", "gpu002", "cpu9"])),
         accepted(check(lambda n: sorted(n) == ["cpu9", "gpu001", "gpu002", "gpu003"]))),
    ]:  # fmt: skip
        add(f"history-{label}", build, expect)

    # the analysis of a history with failures
    def h(c: Any) -> Any:
        return history.read_sacct(c.write("jobs.txt", _sacct_with_failures()))

    for label, call, expect in [
        ("intervals-by-rack", lambda x: x.intervals(by="rack"), raises(ValueError, "by")),
        ("intervals-by-int", lambda x: x.intervals(by=5), raises(BAD, "by")),
        ("fit-unknown-family", lambda x: x.fit(families=["cauchy"]),
         raises(ValueError, "families")),
        ("fit-level", lambda x: x.fit(level=1.5), raises(ValueError, "level")),
        ("fit-by-job", lambda x: x.fit(by="job"),
         accepted(check(lambda f: isinstance(f.law, ace.Distribution) and f.law.mean() > 0))),
        ("fit-cause-without-by", lambda x: x.fit(cause="NODE_FAIL"), raises(ValueError, "cause")),
        ("backtest-replicas-zero", lambda x: x.backtest(replicas=0),
         raises(ValueError, "replicas")),
        ("backtest-replicas-float", lambda x: x.backtest(replicas=2.5),
         raises(TypeError, "replicas")),
        ("backtest-level", lambda x: x.backtest(replicas=2, level=1.5),
         raises(ValueError, "level")),
        ("backtest-model-string", lambda x: x.backtest(model="x", replicas=2),
         raises(TypeError, "model")),
        ("backtest-interval-negative", lambda x: x.backtest(replicas=2, checkpoint_interval=-1.0),
         raises(ValueError, "checkpoint_interval")),
        ("backtest-restart_delay", lambda x: x.backtest(replicas=2, restart_delay="soon"),
         raises(ValueError, "restart_delay")),
        ("backtest-plausible", lambda x: x.backtest(replicas=3, seed=1),
         accepted(check(lambda b: b.replicas == 3 and len(b.table) > 0))),
        ("lemons-alpha", lambda x: x.lemons(alpha=2.0), raises(ValueError, "alpha")),
        ("lemons-alpha-string", lambda x: x.lemons(alpha="0.1"), raises(TypeError, "alpha")),
        ("burstiness-max_lag", lambda x: x.burstiness(max_lag=-1), raises(ValueError, "max_lag")),
        ("burstiness-by", lambda x: x.burstiness(by="rack"), raises(ValueError, "by")),
        ("to_model-family", lambda x: x.to_model(family="cauchy"), raises(ValueError, "family")),
        ("to_model-by", lambda x: x.to_model(by="rack"), raises(ValueError, "by")),
        ("measured", lambda x: x.measured(),
         accepted(check(lambda m: m.totals["failures"] == 5))),
        ("intervals-of-unknown", lambda x: x.intervals("job").of("nope"),
         raises(KeyError, "nope")),
        ("intervals-select-short-mask", lambda x: x.intervals("job").select([True]),
         raises(ValueError, "mask")),
        ("fit-by-intervals", lambda x: x.fit(by=x.intervals("job")),
         accepted(check(lambda f: f.law.mean() > 0))),
        ("time-of-a-second", lambda x: x.time(60.0),
         accepted(check(lambda t: t.isoformat() == "2024-01-01T00:11:00"))),
    ]:  # fmt: skip
        add(f"History-{label}", lambda c, f=call: f(h(c)), expect)


# --------------------------------------------------------------------------- history: families
# that cannot be fitted, and a model of a record without spells out of service
# (a family that fails is reported with its reason and the others ranked; a
# sacct record gives causes that leave nodes in service and lists its defaults)


def _sacct_equal_failures() -> str:
    """One job that fails after exactly 1 h of each of three runs, then
    completes after 30 min: no Weibull, log-normal or gamma MLE exists."""
    lines, t = [], 0
    for state, held in [("FAILED", 3600), ("FAILED", 3600), ("FAILED", 3600),
                        ("COMPLETED", 1800)]:  # fmt: skip
        lines.append(f"7|{state}|{_stamp(t)}|{_stamp(t + held)}|1|n1\n")
        t += held + 600
    return SACCT_HEAD + "".join(lines)


def _history_fit_failures() -> None:
    def equal(c: Any) -> Any:
        return history.read_sacct(c.write("equal.txt", _sacct_equal_failures()))

    def spread(c: Any) -> Any:
        return history.read_sacct(c.write("jobs.txt", _sacct_with_failures()))

    not_fitted = ["weibull", "lognormal", "gamma"]
    # (no GPU counts in this sacct: 8 per node is a default too)
    no_spells = {"fleet.gpus_per_node", "fleet.repair", "fleet.node_start", "causes[0].detect",
                 "causes[1].detect"}  # fmt: skip
    for label, build, expect in [
        ("fit-families-failed", lambda c: equal(c).fit(by="job"),
         accepted(check(lambda f: list(f.failed) == not_fitted
                        and [x.family for x in f] == ["exponential"]))),
        ("fit-every-family-failed", lambda c: equal(c).fit(by="job", families=not_fitted),
         raises(ValueError, "no family could be fitted")),
        ("fit-failed-family-by-name", lambda c: equal(c).fit(by="job")["gamma"],
         raises(KeyError, "could not be fitted")),
        ("to_model-failed-family", lambda c: equal(c).to_model(by="job", family="lognormal"),
         raises(ValueError, "family")),
        ("to_model-no-spells", lambda c: spread(c).to_model(by="job"),
         accepted(check(lambda m: not any(x.node_down for x in m["causes"])
                        and set(m.defaults) == no_spells))),
        ("cli-fit-families-failed", lambda c: cli("fit", c.write("equal.txt",
                                                                 _sacct_equal_failures()),
                                                  "--by", "job"),
         accepted(cli_out("| exponential |", "| gamma | failed: samples: the gamma MLE"))),
        ("cli-fit-scenario-failed-family", lambda c: cli(
            "fit", c.write("equal.txt", _sacct_equal_failures()), "--by", "job",
            "--scenario", c.path("m.toml"), "--family", "weibull"),
         raises(CliError, "family")),
    ]:  # fmt: skip
        add(f"History-{label}", build, expect)


# --------------------------------------------------------------------------- end of the block


# =========================================================================== command line


SCENARIO = """\
[run]
replicas = 2
seed = 1
threads = 1
horizon = "2d"

[[jobs]]
gpus = 16
work = "6h"
checkpoint_interval = "1h"

[failures]
law = "exponential"
mean = "8h"
"""


def _cli() -> None:
    def with_file(name: str, text: str | bytes, *argv: Any) -> Any:
        def build(c: Any) -> Any:
            path = c.write(name, text)
            return cli(*[path if a == "FILE" else a for a in argv])

        return build

    def run(*argv: Any) -> Any:
        return with_file("s.toml", SCENARIO, "run", "FILE", *argv)

    usage = CliError
    for label, build, expect in [
        ("no-command", lambda c: cli(), raises(usage, "usage: acesim")),
        ("unknown-command", lambda c: cli("nope"), raises(usage, "nope")),
        ("run-no-file", lambda c: cli("run"), raises(usage, "scenario")),
        ("run-missing-file", lambda c: cli("run", c.path("missing.toml")),
         raises(usage, "missing.toml")),
        ("run-empty-file", with_file("empty.toml", "", "run", "FILE"), raises(usage, "no jobs")),
        ("run-garbage", with_file("g.toml", GARBAGE, "run", "FILE"), raises(usage, "g.toml")),
        ("run-bad-toml", with_file("b.toml", "[run\n", "run", "FILE"), raises(usage, "b.toml:1")),
        ("run-bom", with_file("bom.toml", "\ufeff" + SCENARIO, "run", "FILE"),
         accepted(cli_out("ETTR"))),
        ("run-replicas-abc", run("--replicas", "abc"), raises(usage, "--replicas")),
        ("run-replicas-zero", run("--replicas", "0"), raises(usage, "replicas")),
        ("run-replicas-negative", run("--replicas", "-5"), raises(usage, "replicas")),
        ("run-replicas-2**70", run("--replicas", str(2**70)), raises(usage, "replicas")),
        ("run-seed-negative", run("--seed", "-1"), raises(usage, "seed")),
        ("run-threads-zero", run("--threads", "0"), raises(usage, "threads")),
        ("run-ci-above-one", run("--ci", "1.5"), raises(usage, "--ci")),
        ("run-ci-nan", run("--ci", "nan"), raises(usage, "--ci")),
        ("run-horizon-unit", run("--horizon", "5parsecs"), raises(usage, "--horizon")),
        ("run-horizon-far", run("--horizon", "1e13s"), raises(usage, "horizon")),
        ("run-horizon-inf", run("--horizon", "inf"), accepted(cli_out("ETTR"))),
        ("run-out-suffix", run("--out", "x.xyz"), raises(usage, "--out")),
        ("run-out-missing-folder", lambda c: cli("run", c.write("s.toml", SCENARIO), "--out",
                                                 c.path("no/such/dir/r.json")),
         raises(usage, "r.json")),
        ("run-ok", run(), accepted(cli_out("ETTR", "failures/replica"))),
        ("run-unknown-option", run("--replicas-per-task", "3"), raises(usage, "--replicas-per")),
        ("run-abbreviated-option", run("--rep", "3"), accepted(cli_out("3 replicas"))),
        ("interval-ok", lambda c: cli("interval", 60, 3600), accepted(cli_out("Young", "Daly"))),
        ("interval-negative-cost", lambda c: cli("interval", -60, 3600),
         raises(usage, "checkpoint_cost")),
        ("interval-nan-cost", lambda c: cli("interval", "nan", 3600),
         raises(usage, "checkpoint_cost")),
        ("interval-zero-mtbf", lambda c: cli("interval", 60, 0), raises(usage, "mtbf")),
        ("interval-inf-mtbf", lambda c: cli("interval", 60, "inf"), accepted(cli_out("inf"))),
        ("interval-work-negative", lambda c: cli("interval", 60, 3600, "--work", -1),
         raises(usage, "work")),
        ("interval-work-overflow", lambda c: cli("interval", 60, 3600, "--work", "1e400"),
         raises(usage, "work")),
        ("interval-cost-abc", lambda c: cli("interval", "abc", 3600),
         raises(usage, "checkpoint_cost")),
        ("interval-restart-negative", lambda c: cli("interval", 60, 3600, "--restart", -5),
         raises(usage, "restart")),
        ("interval-unknown-option", lambda c: cli("interval", 60, 3600, "--bogus"),
         raises(usage, "--bogus")),
        ("interval-with-work", lambda c: cli("interval", 60, 3600, "--work", 86400),
         accepted(cli_out("expected ETTR at young", "expected ETTR at daly"))),
        ("fit-missing-file", lambda c: cli("fit", c.path("missing.txt")),
         raises(usage, "missing.txt")),
        ("fit-empty-file", with_file("e.txt", "", "fit", "FILE"), raises(usage, "empty")),
        ("fit-garbage", with_file("g.txt", GARBAGE, "fit", "FILE"), raises(usage, "g.txt")),
        ("fit-by-rack", with_file("h.txt", _sacct_with_failures(), "fit", "FILE", "--by", "rack"),
         raises(usage, "--by")),
        ("fit-backtest-negative", with_file("h.txt", _sacct_with_failures(), "fit", "FILE",
                                            "--backtest", "-1"), raises(usage, "--backtest")),
        ("fit-job-gpus-alone", with_file("h.txt", _sacct_with_failures(), "fit", "FILE",
                                         "--job-gpus", "8"), raises(usage, "--job-gpus")),
        ("fit-job-work-unit", with_file("h.txt", _sacct_with_failures(), "fit", "FILE",
                                        "--job-work", "7parsecs"), raises(usage, "--job-work")),
        ("fit-family-without-scenario", with_file("h.txt", _sacct_with_failures(), "fit", "FILE",
                                                  "--family", "weibull"),
         raises(usage, "--family")),
        ("fit-no-failures", with_file("h.txt", GOOD_SACCT, "fit", "FILE"),
         raises(usage, "failures")),
        ("fit-ok", with_file("h.txt", _sacct_with_failures(), "fit", "FILE", "--by", "job"),
         accepted(cli_out("weibull"))),
        ("demo-replicas-zero", lambda c: cli("demo", "--replicas", 0), raises(usage, "replicas")),
        ("demo-replicas-abc", lambda c: cli("demo", "--replicas", "abc"),
         raises(usage, "--replicas")),
        ("demo-seed-negative", lambda c: cli("demo", "--seed", -1, "--replicas", 2),
         raises(usage, "seed")),
        ("sweep-missing-file", lambda c: cli("sweep", c.path("missing.toml")),
         raises(usage, "missing.toml")),
        ("sweep-a-scenario", with_file("s.toml", SCENARIO, "sweep", "FILE"),
         raises(usage, "not a sweep file")),
        ("sweep-processes-zero", lambda c: cli("sweep", c.write("w.toml", SWEEP_TOML),
                                               "--processes", 0),
         raises(usage, "processes")),
        ("sweep-chunk-replicas-zero", lambda c: cli("sweep", c.write("w.toml", SWEEP_TOML),
                                                    "--chunk-replicas", 0),
         raises(usage, "chunk")),
        ("sweep-ok", lambda c: cli("sweep", c.write("w.toml", SWEEP_TOML), "--no-progress"),
         accepted(cli_out("seed"))),
        ("compare-missing", lambda c: cli("compare", c.path("missing.toml"),
                                          c.write("s.toml", SCENARIO)),
         raises(usage, "missing.toml")),
        ("compare-one-replica", lambda c: cli("compare", c.write("a.toml", SCENARIO),
                                              c.write("b.toml", SCENARIO), "--replicas", 1),
         accepted(cli_out("ETTR b - a"))),
        ("report-missing", lambda c: cli("report", c.path("missing.npz")),
         raises(usage, "missing.npz")),
        ("report-suffix", with_file("r.bin", GARBAGE, "report", "FILE"), raises(usage, "r.bin")),
        ("report-garbage-npz", with_file("r.npz", GARBAGE, "report", "FILE"),
         raises(usage, "r.npz")),
        ("serve-no-mode", lambda c: cli("serve"), raises(usage, "--stdio")),
        ("serve-schema", lambda c: cli("serve", "--schema"), accepted(cli_out("$schema"))),
        ("info", lambda c: cli("info"), accepted(cli_out("CUDA"))),
        ("version", lambda c: cli("--version"), accepted(cli_out("acesim"))),
        ("python-m-interval-nan", lambda c: module_cli("interval", 60, "nan"),
         raises(usage, "mtbf")),
        ("python-m-version", lambda c: module_cli("--version"), accepted(cli_out("acesim"))),
    ]:  # fmt: skip
        add(f"cli-{label}", build, expect)


SWEEP_TOML = (
    SCENARIO.replace("[run]", "[base.run]")
    .replace("[[jobs]]", "[[base.jobs]]")
    .replace("[failures]", "[base.failures]")
    + '\n[axes]\n"run.seed" = [0, 1]\n'
)


# =========================================================================== scenario files


def _scenarios() -> None:
    job_t = {"gpus": 16, "work": "6h", "checkpoint_interval": "1h"}

    def toml(text: str | bytes, name: str = "s.toml") -> Any:
        return lambda c: load_scenario(c.write(name, text))

    def spec(d: Any) -> Any:
        return lambda c: ace.Scenario.from_dict(d).simulate_kwargs()

    def with_job(**top: Any) -> Any:
        return spec({"jobs": [job_t], **top})

    def with_law(law: Any) -> Any:
        return spec({"jobs": [{**job_t, "save": law}]})

    runs = accepted(check(lambda kw: isinstance(kw, dict) and "jobs" in kw))
    loads = accepted(check(lambda s: isinstance(s, ace.Scenario)))
    err = ScenarioError
    for label, build, expect in [
        ("missing-file", lambda c: load_scenario(c.path("missing.toml")),
         raises(err, "missing.toml")),
        ("empty-file", toml(""), accepted(check(lambda s: not s.has_jobs))),
        ("empty-file-run", lambda c: load_scenario(c.write("e.toml", "")).run(),
         raises(err, "no jobs")),
        ("garbage", toml(GARBAGE), raises(err, "s.toml")),
        ("directory", lambda c: load_scenario(c.path("x").parent),
         raises(err, "scenario-directory")),
        ("bad-toml", toml("[run\nreplicas = 2\n"), raises(err, "s.toml:1")),
        ("duplicate-key", toml("[run]\nseed = 1\nseed = 2\n"), raises(err, "s.toml:3")),
        ("bom", toml("\ufeff" + SCENARIO), loads),
        ("unknown-table", toml("[runn]\nseed = 1\n"), raises(err, "runn")),
        ("unknown-run-key", toml("[run]\nreplica = 3\n"), raises(err, "run.replica")),
        ("replicas-string", toml('[run]\nreplicas = "3"\n'), raises(err, "run.replicas")),
        ("replicas-float", toml("[run]\nreplicas = 3.0\n"), raises(err, "run.replicas")),
        ("replicas-zero", toml("[run]\nreplicas = 0\n"), raises(err, "run.replicas")),
        ("replicas-bool", toml("[run]\nreplicas = true\n"), raises(err, "run.replicas")),
        ("replicas-int64-max", toml("[run]\nreplicas = 9223372036854775807\n"),
         raises(err, "run.replicas")),
        ("seed-negative", toml("[run]\nseed = -1\n"), raises(err, "run.seed")),
        ("horizon-unit", toml('[run]\nhorizon = "30 parsecs"\n'), raises(err, "run.horizon")),
        ("horizon-negative", toml('[run]\nhorizon = "-1h"\n'), raises(err, "run.horizon")),
        ("horizon-nan", toml("[run]\nhorizon = nan\n"), raises(err, "run.horizon")),
        ("horizon-far", toml("[run]\nhorizon = 1e13\n"), raises(err, "run.horizon")),
        ("horizon-inf", toml("[run]\nhorizon = inf\n"), loads),
        ("threads-zero", toml("[run]\nthreads = 0\n"), raises(err, "run.threads")),
        ("line-number", toml("[run]\nseed = 1\n\n[[jobs]]\ngpus = -8\nwork = '1h'\n"
                             "checkpoint_interval = '1h'\n"), raises(err, "s.toml:5")),
        ("jobs-not-tables", toml("jobs = 5\n"), raises(err, "jobs")),
        ("dict-not-a-table", lambda c: ace.Scenario.from_dict(5), raises(err, "table")),
        ("run-not-a-table", spec({"run": 5, "jobs": [job_t]}), raises(err, "run")),
        ("job-not-a-table", spec({"jobs": [5]}), raises(err, "jobs[0]")),
        ("replicas-np.int64", spec({"run": {"replicas": np.int64(3)}, "jobs": [job_t]}), runs),
        ("horizon-math.inf", spec({"run": {"horizon": math.inf}, "jobs": [job_t]}), runs),
        ("replicas-2**70", spec({"run": {"replicas": 2**70}, "jobs": [job_t]}),
         raises(err, "run.replicas")),
        ("gpus-string", spec({"jobs": [{**job_t, "gpus": "8"}]}), raises(err, "jobs[0].gpus")),
        ("gpus-missing", spec({"jobs": [{"work": "1h", "checkpoint_interval": "1h"}]}),
         raises(err, "jobs[0].gpus")),
        ("work-negative", spec({"jobs": [{**job_t, "work": -3600}]}), raises(err, "jobs[0].work")),
        ("interval-weekly", spec({"jobs": [{**job_t, "checkpoint_interval": "weekly"}]}),
         raises(err, "jobs[0].checkpoint_interval")),
        ("count-zero", spec({"jobs": [{**job_t, "count": 0}]}), raises(err, "jobs[0].count")),
        ("count-float", spec({"jobs": [{**job_t, "count": 1.5}]}), raises(err, "jobs[0].count")),
        ("count-huge", lambda c: _capped(lambda: ace.Scenario.from_dict(
            {"jobs": [{**job_t, "count": 10**9}]})), raises(err, "jobs[0].count")),
        ("count-submit-far", spec({"jobs": [{**job_t, "count": 3, "submit_every": 6e11}]}),
         raises(err, "jobs[0]")),
        ("law-misspelt", with_law({"law": "weibul", "shape": 1, "scale": 1}),
         raises(err, "jobs[0].save.law")),
        ("law-negative-shape", with_law({"law": "weibull", "shape": -1, "scale": "1h"}),
         raises(err, "jobs[0].save.shape")),
        ("law-missing-scale", with_law({"law": "weibull", "shape": 1}),
         raises(err, "jobs[0].save.scale")),
        ("law-unknown-key", with_law({"law": "weibull", "shape": 1, "scale": "1h", "foo": 1}),
         raises(err, "jobs[0].save.foo")),
        ("law-no-law-key", with_law({"shape": 1}), raises(err, "jobs[0].save")),
        ("law-array", with_law([1, 2]), raises(err, "jobs[0].save")),
        ("law-bool", with_law(True), raises(err, "jobs[0].save")),
        ("law-mixture-empty", with_law({"law": "mixture", "components": []}),
         raises(err, "jobs[0].save.components")),
        ("law-mixture-no-weight", with_law({"law": "mixture", "components": [
            {"law": "constant", "value": 1}]}), raises(err, "jobs[0].save.components[0]")),
        ("law-scale-aware-ref-zero", with_law({"law": "scale_aware", "base": "1h", "ref_gpus": 0}),
         raises(err, "jobs[0].save.ref_gpus")),
        ("law-gang-of-replay", with_law({"law": "gang", "base": {"law": "replay", "times": [1]},
                                         "units": 4}), raises(err, "jobs[0].save")),
        ("law-empirical-empty", with_law({"law": "empirical", "samples": []}),
         raises(err, "jobs[0].save.samples")),
        ("law-empirical-both", with_law({"law": "empirical", "samples": [1], "csv": "x.csv"}),
         raises(err, "jobs[0].save")),
        ("law-csv-missing", toml(SCENARIO + '\n[[jobs]]\ngpus = 8\nwork = "1h"\n'
                                 'checkpoint_interval = "1h"\n'
                                 'save = {law = "empirical", csv = "missing.csv"}\n'),
         raises(err, "jobs[1].save.csv")),
        ("law-csv-garbage", lambda c: (c.write("g.csv", GARBAGE), load_scenario(c.write(
            "s.toml", '[[jobs]]\ngpus = 8\nwork = "1h"\ncheckpoint_interval = "1h"\n'
            'save = {law = "empirical", csv = "g.csv"}\n')))[1],
         raises(err, "jobs[0].save.csv")),
        ("law-csv-nan-cell", lambda c: (c.write("n.csv", "gap\n1\nnan\n"), load_scenario(c.write(
            "s.toml", '[[jobs]]\ngpus = 8\nwork = "1h"\ncheckpoint_interval = "1h"\n'
            'save = {law = "empirical", csv = "n.csv", column = "gap"}\n')))[1],
         raises(err, "line 3")),
        ("failures-none", with_job(failures="none"), runs),
        ("failures-number", with_job(failures=5), runs),
        ("failures-history-missing", with_job(failures={"history": "/nonexistent/h.txt"}),
         raises(err, "failures.history")),
        ("failures-history-no-failures", lambda c: (c.write("h.txt", GOOD_SACCT), load_scenario(
            c.write("s.toml", '[[jobs]]\ngpus = 8\nwork = "1h"\ncheckpoint_interval = "1h"\n'
                    '[failures]\nhistory = "h.txt"\n')))[1],
         raises(err, "failures")),
        ("fleet-no-nodes", with_job(fleet={"spares": 1}), raises(err, "fleet.nodes")),
        ("fleet-nodes-zero", with_job(fleet={"nodes": 0}), raises(err, "fleet.nodes")),
        ("fleet-spares-all", with_job(fleet={"nodes": 4, "spares": 4}),
         raises(err, "fleet.spares")),
        ("fleet-node_start", with_job(fleet={"nodes": 4, "node_start": "warm"}),
         raises(err, "fleet.node_start")),
        ("fleet-window-no-end", with_job(fleet={"nodes": 4, "rate_windows": [{"start": "1d"}]}),
         raises(err, "fleet.rate_windows[0].end")),
        ("fleet-maintenance-range", with_job(fleet={"nodes": 4, "maintenance": [
            {"start": "1d", "duration": "1h", "nodes": "0-99"}]}),
         raises(err, "fleet.maintenance[0]")),
        ("fleet-maintenance-word", with_job(fleet={"nodes": 4, "maintenance": [
            {"start": "1d", "duration": "1h", "nodes": "abc"}]}),
         raises(err, "fleet.maintenance[0].nodes")),
        ("fleet-repair-no-stages", with_job(fleet={"nodes": 4, "repair": {"stages": []}}),
         raises(err, "fleet.repair.stages")),
        ("fleet-trace-missing", with_job(fleet={"nodes": 4, "node_failures": {
            "node_events": "/nonexistent/t.csv"}}), raises(err, "fleet.node_failures.node_events")),
        ("causes-unknown-name", with_job(causes="llama4"), raises(err, "causes")),
        ("causes-no-share", with_job(causes=[{"name": "x"}]), raises(err, "causes[0].share")),
        ("causes-share-negative", with_job(causes=[{"name": "x", "share": -1}]),
         raises(err, "causes[0].share")),
        ("policy-misspelt", with_job(fleet={"nodes": 4}, policy={"replacement": "spare"}),
         raises(err, "policy.replacement")),
        ("policy-no-module", with_job(fleet={"nodes": 4}, policy={"on_failure": "nomodule_xyz:f"}),
         raises(err, "policy.on_failure")),
        ("policy-not-callable", with_job(fleet={"nodes": 4}, policy={"on_failure": "math:pi"}),
         raises(err, "policy.on_failure")),
        ("policy-no-colon", with_job(fleet={"nodes": 4}, policy={"on_failure": "math"}),
         raises(err, "policy.on_failure")),
        ("policy-quarantine", with_job(fleet={"nodes": 4}, policy={"quarantine": {"failures": 0}}),
         raises(err, "policy.quarantine.failures")),
        ("workload-misspelt", spec({"workload": {"generator": "meta"}}),
         raises(err, "workload.generator")),
        ("workload-days-negative", spec({"workload": {"generator": "meta_like", "days": -1,
                                                      "gpus": 64}}), raises(err, "workload.days")),
        ("workload-unknown-key", spec({"workload": {"generator": "meta_like", "days": 1,
                                                    "gpus": 64, "foo": 1}}),
         raises(err, "workload.foo")),
        ("workload-and-jobs", with_job(workload={"generator": "meta_like", "days": 1, "gpus": 64}),
         raises(err, "workload")),
        ("workload-days-far", spec({"workload": {"generator": "meta_like", "days": 1e8,
                                                 "gpus": 16384}}), raises(err, "workload.days")),
        ("with_values-zero", lambda c: ace.Scenario.from_dict({"jobs": [job_t]}).with_values(
            {"run.replicas": 0}), raises(err, "run.replicas")),
        ("with_values-unknown", lambda c: ace.Scenario.from_dict({"jobs": [job_t]}).with_values(
            {"nope.key": 1}), raises(err, "nope")),
        ("with_values-index", lambda c: ace.Scenario.from_dict({"jobs": [job_t]}).with_values(
            {"jobs[5].gpus": 8}), raises(err, "jobs[5]")),
        ("with_values-int-key", lambda c: ace.Scenario.from_dict({"jobs": [job_t]}).with_values(
            {5: 1}), raises(BAD, "key")),
        ("run-overrides-unknown", lambda c: ace.Scenario.from_dict({"jobs": [job_t]}).run(
            replica=2), raises(BAD, "replica")),
        ("run-small", lambda c: ace.Scenario.from_dict({"run": {"replicas": 2, "threads": 1},
                                                        "jobs": [job_t]}).run(),
         accepted(sim_ok(2))),
        ("sweep-no-axes", lambda c: __import__("acesim.scenario", fromlist=["x"]).load_sweep(
            c.write("w.toml", "[base.run]\nseed = 1\n")), raises(err, "axes")),
        ("sweep-axis-not-list", lambda c: __import__("acesim.scenario", fromlist=["x"]).load_sweep(
            c.write("w.toml", SWEEP_TOML.replace('"run.seed" = [0, 1]', '"run.seed" = 3'))),
         raises(err, "run.seed")),
        ("sweep-axis-unknown-key", lambda c: __import__("acesim.scenario", fromlist=["x"])
         .load_sweep(c.write("w.toml", SWEEP_TOML.replace('"run.seed"', '"run.sead"'))),
         raises(err, "sead")),
        ("dump-unsupported-value", lambda c: ace.dump_scenario({"run": {"seed": object()}},
                                                               c.path("d.toml")),
         raises(BAD, "run.seed")),
    ]:  # fmt: skip
        add(
            f"scenario-{label}",
            build,
            expect,
            timeout=30.0 if label == "count-huge" else 20.0,
        )


def _capped(fn: Any, extra: int = 48 << 20) -> Any:
    """``fn()`` with at most ``extra`` bytes more address space than now."""
    import resource

    if ADDRESS_SANITIZER:
        return fn()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, hard))
    try:
        return fn()
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# =========================================================================== serve, FleetModel


def _serve_and_fleet_model() -> None:
    create = {"type": "create", "fleet": {"nodes": 4}}
    submit = {"type": "submit", "model": 1,
              "job": {"gpus": 16, "work": "8h", "checkpoint_interval": "1h"}}  # fmt: skip
    for label, requests, expect in [
        ("not-json", [b"not json"], raises(ProtocolReply, "ParseError")),
        ("not-utf8", [b"\xff\xfe"], raises(ProtocolReply, "UTF-8")),
        ("array", [b"[1, 2]"], raises(ProtocolReply, "JSON object")),
        ("no-id", [b'{"type": "hello"}'], raises(ProtocolReply, "'id'")),
        ("no-type", [b'{"id": 1}'], raises(ProtocolReply, "'type'")),
        ("unknown-type", [{"type": "explode"}], raises(ProtocolReply, "'type'")),
        ("no-fleet", [{"type": "create"}], raises(ProtocolReply, "'fleet'")),
        ("nodes-fraction", [{"type": "create", "fleet": {"nodes": 4.5}}],
         raises(ProtocolReply, "'fleet.nodes'")),
        ("nodes-bool", [{"type": "create", "fleet": {"nodes": True}}],
         raises(ProtocolReply, "'fleet.nodes'")),
        ("nodes-overflow", [b'{"id": 1, "type": "create", "fleet": {"nodes": 1e400}}'],
         raises(ProtocolReply, "out of range")),
        ("nodes-too-many", [{"type": "create", "fleet": {"nodes": 2**24 + 1}}],
         raises(ProtocolReply, "'fleet.nodes'")),
        ("law-negative-shape", [{"type": "create", "fleet": {"nodes": 4, "node_failures": {
            "law": "weibull", "shape": -1, "scale": "1h"}}}],
         raises(ProtocolReply, "'fleet.node_failures.shape'")),
        ("law-nan-token", [b'{"id": 1, "type": "create", "fleet": {"nodes": 4, "node_failures": '
                           b'{"law": "weibull", "shape": NaN, "scale": 3600}}}'],
         raises(ProtocolReply, "NaN")),
        ("repair-unit", [{"type": "create", "fleet": {"nodes": 4, "repair": "5 parsecs"}}],
         raises(ProtocolReply, "'fleet.repair'")),
        ("extra-field", [{**create, "extra": 1}], raises(ProtocolReply, "'extra'")),
        ("seed-negative", [{**create, "seed": -1}], raises(ProtocolReply, "'seed'")),
        ("seed-2**64", [{**create, "seed": 2**64}], raises(ProtocolReply, "'seed'")),
        ("id-object", [b'{"id": {"a": 1}, "type": "hello"}'], raises(ProtocolReply, "'id'")),
        ("no-model", [{**submit, "model": 99}], raises(ProtocolReply, "'model'")),
        ("gpus-negative", [create, {**submit, "job": {**submit["job"], "gpus": -8}}],
         raises(ProtocolReply, "'job.gpus'")),
        ("work-far", [create, {**submit, "job": {**submit["job"], "work": 1e13}}],
         raises(ProtocolReply, "'job.work'")),
        ("mixture-empty", [create, {**submit, "job": {**submit["job"], "save": {
            "law": "mixture", "components": []}}}], raises(ProtocolReply, "'job.save.components'")),
        ("start-twice-node", [create, submit, {"type": "start", "model": 1, "job": 0,
                                               "nodes": [0, 0]}],
         raises(ProtocolReply, "'nodes[1]'")),
        ("start-unknown-job", [create, {"type": "start", "model": 1, "job": 5, "nodes": [0]}],
         raises(ProtocolReply, "'job'")),
        ("advance-negative", [create, {"type": "advance", "model": 1, "until": -5}],
         raises(ProtocolReply, "'until'")),
        ("advance-unit", [create, {"type": "advance", "model": 1, "until": "soon"}],
         raises(ProtocolReply, "'until'")),
        ("advance-far", [create, {"type": "advance", "model": 1, "until": 1e300}],
         raises(ProtocolReply, "'until'")),
        ("result-no-job", [create, {"type": "result", "model": 1}],
         raises(ProtocolReply, "'model'")),
        ("advance-after-close", [create, {"type": "close", "model": 1},
                                 {"type": "advance", "model": 1, "until": 60}],
         raises(ProtocolReply, "'model'")),
        ("full-exchange", [create, submit, {"type": "start", "model": 1, "job": 0,
                                            "nodes": [0, 1]},
                           {"type": "advance", "model": 1, "until": "1d"}],
         accepted(check(lambda r: r[-1]["result"]["events"][0]["kind"] == "job_done"))),
    ]:  # fmt: skip
        add(f"serve-{label}", lambda c, r=requests: serve(*r), expect)

    def model(**kw: Any) -> Any:
        return ace.FleetModel(ace.Fleet(4, repair=600.0, node_failures=ace.Exponential(2e4)), **kw)

    def started() -> Any:
        m = model()
        j = m.submit(ace.Job(16, 3600.0, 600.0))
        m.start(j, [0, 1])
        return m, j

    for label, build, expect in [
        ("fleet-int", lambda: ace.FleetModel(5), raises(TypeError, "fleet")),
        ("failures-number", lambda: model(failures=5.0), raises(TypeError, "failures")),
        ("seed-negative", lambda: model(seed=-1), raises(ValueError, "seed")),
        ("replica-max", lambda: model(replica=2**32 - 1), raises(ValueError, "replica")),
        ("horizon-bool", lambda: model(horizon=True), raises(TypeError, "horizon")),
        ("horizon-string", lambda: model(horizon="1h"), raises(TypeError, "horizon")),
        ("horizon-none", lambda: model(horizon=None), raises(TypeError, "horizon")),
        ("horizon-np.float32", lambda: model(horizon=np.float32(3600.0)),
         accepted(check(lambda m: m.now == 0.0))),
        ("horizon-10**400", lambda: model(horizon=10**400), raises(ValueError, "horizon")),
        ("checkpoints-np.bool_", lambda: model(checkpoints=np.bool_(True)),
         accepted(check(lambda m: m.now == 0.0))),
        ("causes-string", lambda: model(causes="llama3"), raises(TypeError, "causes")),
        ("max_events-zero", lambda: model(max_events=0), raises(ValueError, "max_events")),
        ("cold-spares", lambda: ace.FleetModel(ace.Fleet(4, cold_spares=1, cold_spare_delay=60.0)),
         raises(ValueError, "cold_spares")),
        ("policy-callback", lambda: model(policy=ace.Policy(on_failure=lambda v: None)),
         raises(ValueError, "on_failure")),
        ("peek-beyond-horizon", lambda: model(horizon=100.0).peek(), accepted(equals(INF))),
        ("submit-string", lambda: model().submit("job"), raises(TypeError, "job")),
        ("submit-time-limit", lambda: model().submit(job(time_limit=10.0)),
         raises(ValueError, "time_limit")),
        ("submit-too-wide", lambda: model().submit(job(gpus=64)), raises(ValueError, "gpus")),
        ("start-unknown-job", lambda: model().start(99, [0, 1]), raises(ValueError, "job")),
        ("start-bool-job", lambda: (lambda m: (m.submit(BIG), m.start(True, [0, 1])))(model()),
         raises(TypeError, "job")),
        ("start-bool-job-none-submitted", lambda: model().start(True, [0, 1]),
         raises(TypeError, "job")),
        ("start-string-nodes", lambda: (lambda m: m.start(m.submit(BIG), "01"))(model()),
         raises(TypeError, "nodes")),
        ("start-node-twice", lambda: (lambda m: m.start(m.submit(BIG), [0, 0]))(model()),
         raises(ValueError, "node 0")),
        ("start-no-such-node", lambda: (lambda m: m.start(m.submit(BIG), [0, 99]))(model()),
         raises(ValueError, "node 99")),
        ("start-too-few-nodes", lambda: (lambda m: m.start(m.submit(BIG), [0]))(model()),
         raises(ValueError, "node")),
        ("start-float-nodes", lambda: (lambda m: m.start(m.submit(BIG), [0.0, 1.0]))(model()),
         raises(TypeError, "nodes[0]")),
        ("start-running", lambda: (lambda mj: mj[0].start(mj[1], [2, 3]))(started()),
         raises(ValueError, "running")),
        ("stop-queued", lambda: (lambda m: m.stop(m.submit(BIG)))(model()),
         raises(ValueError, "queued")),
        ("stop-for-unknown", lambda: (lambda mj: mj[0].stop(mj[1], for_job=99))(started()),
         raises(ValueError, "for_job")),
        ("resize-not-elastic", lambda: (lambda mj: mj[0].resize(mj[1], [0]))(started()),
         raises(ValueError, "elastic")),
        ("nodes_of-negative", lambda: model().nodes_of(-1), raises(ValueError, "job")),
        ("state-string", lambda: (lambda m: (m.submit(BIG), m.state("x")))(model()),
         raises(TypeError, "job")),
        ("advance-negative", lambda: model().advance(-1.0), raises(ValueError, "until")),
        ("advance-nan", lambda: model().advance(NAN), raises(ValueError, "until")),
        ("advance-array", lambda: model().advance(np.array([1.0, 2.0])),
         raises(TypeError, "until")),
        ("advance-string", lambda: model().advance("1h"), raises(TypeError, "until")),
        ("advance-far", lambda: model().advance(1e13), raises(ValueError, "until")),
        ("advance-backwards", lambda: (lambda m: (m.advance(100.0), m.advance(50.0)))(model()),
         raises(ValueError, "backwards")),
        ("advance-np.float32", lambda: (lambda mj: mj[0].advance(np.float32(200.0)))(started()),
         accepted(check(lambda ev: isinstance(ev, list)))),
        ("copy-runs-on", lambda: (lambda mj: mj[0].copy().advance(INF))(started()),
         accepted(check(lambda ev: len(ev) >= 1))),
        ("result-of-a-run", lambda: (lambda mj: (mj[0].advance(1e5), mj[0].result())[1])(
            started()), accepted(sim_ok(1))),
        ("can_start-unknown", lambda: model().can_start(99, [0]), raises(ValueError, "job")),
    ]:  # fmt: skip
        add(f"FleetModel-{label}", lambda c, b=build: b(), expect)


# =========================================================================== results


def _results() -> None:
    def res(**kw: Any) -> Any:
        return sim(replicas=3, **kw)

    for label, build, expect in [
        ("ettr-job-out-of-range", lambda: res().ettr(job=5), raises(ValueError, "job")),
        ("ettr-job-bool", lambda: res().ettr(job=True), raises(TypeError, "job")),
        ("ettr-ci-zero", lambda: res().ettr(ci=0.0), raises(ValueError, "ci")),
        ("ettr-ci-string", lambda: res().ettr(ci="95%"), raises(TypeError, "ci")),
        ("ettr-plausible", lambda: res().ettr(),
         accepted(check(lambda e: 0 <= e.low <= e.value <= e.high <= 1 or math.isnan(e.low)))),
        ("pooled_ettr-job", lambda: res().pooled_ettr(job=3), raises(ValueError, "job")),
        ("to_pandas-unknown-table", lambda: res().to_pandas(table="nodes"),
         raises(ValueError, "table")),
        ("to_pandas-events-not-recorded", lambda: res().to_pandas("events"),
         accepted(check(lambda f: len(f) == 0))),
        ("pooled_ettr-job-bool", lambda: res().pooled_ettr(job=True), raises(TypeError, "job")),
        ("to_pandas-jobs", lambda: res().to_pandas(),
         accepted(check(lambda f: len(f) == 3 and "ettr" in f.columns))),
        ("summary", lambda: res().summary(),
         accepted(check(lambda s: 0 <= s["ettr"] <= 1))),
        ("goodput", lambda: res().goodput(),
         accepted(check(lambda g: all(v >= 0 for v in g.values() if not math.isnan(v))))),
        ("compare-not-a-result", lambda: ace.compare(res(), "b"), raises(TypeError, "res_b")),
        ("compare-ci-above-one", lambda: ace.compare(res(), res(), ci=1.5),
         raises(ValueError, "ci")),
        ("compare-ci-bool", lambda: ace.compare(res(), res(), ci=True), raises(TypeError, "ci")),
        ("compare-other-seed", lambda: ace.compare(res(), res(seed=9)), raises(ValueError, "seed")),
        ("compare-same", lambda: ace.compare(res(), res()),
         accepted(check(lambda cmp: cmp["ettr"].diff == 0.0))),
        ("with_provenance-own-key", lambda: res().with_provenance(seed=3),
         raises(ValueError, "seed")),
        ("with_provenance-not-json", lambda: res().with_provenance(note=object()),
         raises(ValueError, "note")),
        ("save-suffix", lambda: res().save("r.xyz"), raises(ValueError, "r.xyz")),
        ("load-missing", lambda: ace.SimulationResult.load("missing.npz"),
         raises(FileNotFoundError, "missing.npz")),
        ("load-garbage", lambda: (open("g.npz", "wb").write(GARBAGE),
                                  ace.SimulationResult.load("g.npz"))[1],
         raises(ValueError, "g.npz")),
        ("save-load-roundtrip", lambda: (res().save("r.npz"),
                                         ace.SimulationResult.load("r.npz"))[1],
         accepted(sim_ok(3))),
        ("testing-assert-level", lambda: __import__("acesim.testing", fromlist=["x"])
         .assert_ettr_at_least(sim(replicas=10), 1.5), raises(AssertionError, ">= 1.5")),
        ("testing-assert-not-a-result", lambda: __import__("acesim.testing", fromlist=["x"])
         .assert_ettr_at_least("res", 0.5), raises(TypeError, "res")),
    ]:  # fmt: skip
        add(f"result-{label}", lambda c, b=build: _in(c, b), expect)


def _in(c: Any, build: Any) -> Any:
    """``build()`` run in the case's folder (for relative paths)."""
    import os

    c.path("x")
    here = os.getcwd()
    os.chdir(c.folder)
    try:
        return build()
    finally:
        os.chdir(here)


# =========================================================================== untrusted names
# Provenance and pickles: a name read from a file or a dict is looked up in
# acesim.provenance's table (VALUE_CLASSES, ENUMS) and never imported; a user
# callable is resolved only with trust=True (issue 25, items 1 and 3).


def _untrusted_names() -> None:
    from acesim.provenance import check as check_names
    from acesim.provenance import describe, rebuild, reproduce
    from acesim.results_io import load_result, save_result

    by_keywords = "acesim._pickle._rebuild_by_keywords"
    shell = {"dict": {"args": "true", "shell": True}}

    def tampered_file(c: Any, suffix: str) -> Any:
        res = sim(replicas=1)
        prov = dict(res.provenance)
        prov["arguments"] = {"dict": {"jobs": {"call": "subprocess.run", "args": ["true"]}}}
        path = c.path(f"tampered{suffix}")
        save_result(res, path, provenance=prov)
        return path

    for label, build, expect in [
        ("function-untrusted", lambda c: rebuild({"function": "os:system"}),
         raises(ace.UntrustedNameError, "'os:system'")),
        ("function-untrusted-switch", lambda c: rebuild({"function": "os:system"}),
         raises(ace.UntrustedNameError, "trust=True")),
        ("function-malformed", lambda c: rebuild({"function": "os.system"}, trust=True),
         raises(ValueError, "'module:qualname'")),
        ("call-unknown", lambda c: rebuild({"call": "subprocess.run", "args": ["true"]}),
         raises(ace.UntrustedNameError, "'subprocess.run'")),
        ("call-unknown-trusted", lambda c: rebuild({"call": "os.system", "args": ["true"]},
                                                     trust=True),
         raises(ace.UntrustedNameError, "'os.system'")),
        ("call-acesim-function", lambda c: rebuild({"call": "acesim.load_scenario",
                                                    "args": ["x.toml"]}),
         raises(ace.UntrustedNameError, "'acesim.load_scenario'")),
        ("call-compiled-policy", lambda c: rebuild({"call": "acesim.CompiledPolicy",
                                                    "kwargs": {"address": 1}}),
         raises(ace.UntrustedNameError, "'acesim.CompiledPolicy'")),
        ("call-fleet-model", lambda c: rebuild({"call": "acesim.FleetModel", "kwargs": {}}),
         raises(ace.UntrustedNameError, "'acesim.FleetModel'")),
        ("call-scenario", lambda c: rebuild({"call": "acesim.Scenario", "kwargs": {}}),
         raises(ace.UntrustedNameError, "'acesim.Scenario'")),
        ("private-by-keywords-function", lambda c: rebuild(
            {"call": by_keywords, "args": [{"function": "subprocess:run"}, shell]}),
         raises(ace.UntrustedNameError, "'subprocess:run'")),
        ("private-by-keywords-type", lambda c: rebuild(
            {"call": by_keywords, "args": [{"type": "subprocess.Popen"}, shell]}),
         raises(ace.UntrustedNameError, "'subprocess.Popen'")),
        ("private-beside-loader", lambda c: rebuild(
            {"call": "acesim._beside.load_beside", "args": ["/", "m", "f", "/m.py"]}),
         raises(ace.UntrustedNameError, "'acesim._beside.load_beside'")),
        ("type-unknown", lambda c: rebuild({"type": "subprocess.Popen"}),
         raises(ace.UntrustedNameError, "'subprocess.Popen'")),
        ("enum-unknown", lambda c: rebuild({"enum": "os.environ", "name": "PATH"}),
         raises(ace.UntrustedNameError, "'os.environ'")),
        ("enum-no-member", lambda c: rebuild({"enum": "acesim.Replacement", "name": "NOPE"}),
         raises(ValueError, "'NOPE'")),
        ("kwargs-unknown-parameter", lambda c: rebuild(
            {"call": "acesim.Constant", "kwargs": {"value": 1.0, "evil": 2}}),
         raises(ValueError, "'evil'")),
        ("kwargs-bad-value", lambda c: rebuild({"call": "acesim.Exponential",
                                                "kwargs": {"mean": -1.0}}),
         raises(ValueError, "mean")),
        ("ndarray-objects", lambda c: rebuild({"ndarray": "", "dtype": "|O", "shape": [0]}),
         raises(ValueError, "ndarray")),
        ("node-trace-state-keys", lambda c: rebuild(
            {"call": "acesim.NodeTrace", "state": {"laws": [], "__dict__": 1}}),
         raises(ValueError, "NodeTrace's state")),
        ("trust-not-bool", lambda c: rebuild(1.0, trust="yes"), raises(TypeError, "trust")),
        ("check-not-a-dict", lambda c: check_names([1]), raises(TypeError, "provenance")),
        ("check-tampered", lambda c: check_names(
            {"arguments": {"dict": {"jobs": {"enum": "os.environ", "name": "PATH"}}}}),
         raises(ace.UntrustedNameError, "'os.environ'")),
        ("reproduce-callback-untrusted", lambda c: reproduce(
            {"arguments": {"dict": {"jobs": describe(J), "failures": describe(EXP),
                                    "policy": {"call": "acesim.Policy", "kwargs": {
                                        "on_failure": {"function": "os:system"}}}}}}),
         raises(ace.UntrustedNameError, "'os:system'")),
        ("load-result-tampered-npz", lambda c: load_result(
            tampered_file(c, ".npz")), raises(ace.UntrustedNameError, "'subprocess.run'")),
        ("load-result-tampered-json", lambda c: load_result(
            tampered_file(c, ".json")), raises(ace.UntrustedNameError, "'subprocess.run'")),
        ("cli-report-tampered", lambda c: cli("report", tampered_file(c, ".npz"), "-o",
                                              c.path("r.html")),
         raises(CliError, "'subprocess.run'")),
        ("rebuild-described", lambda c: rebuild(describe(ace.Weibull(0.5, 10.0))),
         accepted(law_ok(20.0, rel=1e-9))),
        ("reproduce-own", lambda c: reproduce(sim(replicas=1).provenance),
         accepted(sim_ok(1))),
    ]:  # fmt: skip
        add(f"untrusted-{label}", build, expect)


# =========================================================================== inputs read as else
# (issue 25, item 6: durations, CSV columns and rows, files that are not
# files, core and TOML errors, serve's duplicate keys and long lines,
# escaped names; one block, its cases named "meaning-...")


def _meaning() -> None:
    import io
    import json
    import os

    from acesim.exports import NodeEventFormatError, read_node_events
    from acesim.results_io import ResultFileError, load_result, save_result
    from acesim.serve import MAX_LINE_BYTES, Server
    from acesim.serve import serve as serve_lines

    err = ScenarioError
    job_t = 'gpus = 8\nwork = "{work}"\ncheckpoint_interval = "{interval}"\n'

    def scenario(work: str = "6h", interval: str = "1h", top: str = "") -> str:
        return (
            f"{top}[run]\nreplicas = 2\nseed = 1\nthreads = 1\n\n[[jobs]]\n"
            + job_t.format(work=work, interval=interval)
            + 'failures = "8h"\n'
        )

    def first_job(text: str) -> Any:
        return lambda c: load_scenario(c.write("s.toml", text)).simulate_kwargs()["jobs"][0]

    def submit(**job: Any) -> Any:
        def build(c: Any) -> Any:
            create = {"type": "create", "fleet": {"nodes": 2}, "failures": "8h"}
            body = {"gpus": 8, "work": "1h", "checkpoint_interval": "1h", **job}
            return serve(create, {"type": "submit", "model": 1, "job": body})[1]

        return build

    def fifo(c: Any, name: str) -> str:
        path = c.path(name)
        if not path.exists():
            os.mkfifo(path)
        return str(path)

    def csv_file(c: Any, text: str) -> str:
        return str(c.write("gaps.csv", text))

    def reply(line: str) -> Any:
        return lambda c: Server().reply(line)

    def lines(data: bytes) -> Any:
        """The replies of serve() to ``data`` (bytes read from a pipe)."""

        def build(c: Any) -> Any:
            out = io.BytesIO()
            serve_lines(io.BytesIO(data), out)
            return [json.loads(x) for x in out.getvalue().splitlines()]

        return build

    def stdio(data: bytes) -> Any:
        """The replies of ``python -m acesim serve --stdio`` to ``data`` on its stdin."""
        import subprocess
        import sys

        proc = subprocess.run(
            [sys.executable, "-m", "acesim", "serve", "--stdio"],
            input=data,
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return [json.loads(x) for x in proc.stdout.splitlines()]

    def results_csv(c: Any) -> str:
        res = ace.simulate(J, EXP, replicas=2, seed=1, threads=1)
        path = c.path("r.csv")
        save_result(res, path)
        jobs = c.path("r.csv")  # the jobs table
        head, _, rest = jobs.read_text(encoding="utf-8").partition("\n")
        names = head.split(",")
        names[1] = names[0]
        jobs.write_text(",".join(names) + "\n" + rest, encoding="utf-8")
        return str(path)

    def escaped(res: Any) -> bool:
        return "\x1b" not in res.out and "a\\x1b[2Jb" in res.out and "evil\\x1b[31m" in res.out

    young_60_28440 = "Young 1847.4 s"  # sqrt(2 * 60 * 28440) = 1847.38
    for label, build, expect in [
        # --- durations: one grammar (parse_duration, TOML, protocol, CLI)
        ("duration-1h30min", lambda c: parse_duration("1h30min"), accepted(equals(5400.0))),
        ("duration-1h-space-30min", lambda c: parse_duration("1h 30min"),
         accepted(equals(5400.0))),
        ("duration-6H", lambda c: parse_duration("6H"), accepted(equals(21600.0))),
        ("duration-1MIN-30S", lambda c: parse_duration("1MIN 30S"), accepted(equals(90.0))),
        ("duration-repeated", lambda c: parse_duration("1h 1h", "work"),
         raises(ValueError, "each unit at most once")),
        ("duration-increasing", lambda c: parse_duration("30min 1h", "work"),
         raises(ValueError, "largest first")),
        ("duration-m-and-min", lambda c: parse_duration("1m 30min", "work"),
         raises(ValueError, "each unit at most once")),
        ("duration-young", lambda c: parse_duration("young", "work"),
         raises(ValueError, "interval rule")),
        ("duration-DALY", lambda c: parse_duration("DALY", "work"),
         raises(ValueError, "interval rule")),
        ("toml-work-6H", first_job(scenario(work="6H")),
         accepted(check(lambda j: j.work == 21600.0))),
        ("toml-work-1h-30min", first_job(scenario(work="1h 30min")),
         accepted(check(lambda j: j.work == 5400.0))),
        ("toml-work-30min-1h", first_job(scenario(work="30min 1h")),
         raises(err, "jobs[0].work")),
        ("toml-work-young", first_job(scenario(work="young")), raises(err, "interval rule")),
        ("toml-interval-YOUNG", first_job(scenario(interval="YOUNG")),
         accepted(check(lambda j: j.checkpoint_interval == "young"))),
        ("toml-interval-1h-1h", first_job(scenario(interval="1h 1h")),
         raises(err, "jobs[0].checkpoint_interval")),
        ("job-interval-Daly", lambda c: job(checkpoint_interval=" Daly "),
         accepted(check(lambda j: j.checkpoint_interval == "daly"))),
        ("serve-interval-DALY", submit(checkpoint_interval="DALY"),
         accepted(check(lambda r: r["ok"]))),
        ("serve-work-6H", submit(work="6H"), accepted(check(lambda r: r["ok"]))),
        ("serve-work-1h-1h", submit(work="1h 1h"), raises(ProtocolReply, "job.work")),
        ("serve-interval-30min-1h", submit(checkpoint_interval="30min 1h"),
         raises(ProtocolReply, "job.checkpoint_interval")),
        ("cli-interval-units", lambda c: cli("interval", "1min", "7.9h"),
         accepted(cli_out(young_60_28440))),
        ("cli-interval-seconds", lambda c: cli("interval", "60", "28440"),
         accepted(cli_out(young_60_28440))),
        ("cli-interval-work-units", lambda c: cli("interval", "1min", "7.9H", "--work", "7d"),
         accepted(cli_out("expected ETTR at young"))),
        ("cli-interval-30min1h", lambda c: cli("interval", "30min1h", "5h"),
         raises(CliError, "largest first")),
        ("cli-interval-young", lambda c: cli("interval", "young", "5h"),
         raises(CliError, "interval rule")),
        ("cli-interval-help-says-units", lambda c: cli("interval", "--help"),
         accepted(cli_out("with a unit", "3.5min"))),
        ("cli-horizon-1d-1d", lambda c: cli("run", c.write("s.toml", SCENARIO), "--horizon",
                                            "1d 1d"),
         raises(CliError, "--horizon")),
        # --- CSV: a column named twice, ragged rows
        ("from_csv-column-twice", lambda c: ace.Empirical.from_csv(
            csv_file(c, "gap,gap\n1,2\n"), column="gap"), raises(ValueError, "'gap' twice")),
        ("from_csv-long-row", lambda c: ace.Empirical.from_csv(
            csv_file(c, "a,gap\n1,2\n3,4,5\n"), column="gap"), raises(ValueError, "line 3")),
        ("from_csv-short-row-first-column", lambda c: ace.Empirical.from_csv(
            csv_file(c, "gap,a\n1,2\n3\n"), column="gap"), raises(ValueError, "line 3")),
        ("scenario-csv-column-twice", lambda c: (csv_file(c, "gap,gap\n60,120\n"), load_scenario(
            c.write("s.toml", scenario() + '[failures]\nlaw = "empirical"\ncsv = "gaps.csv"\n'
                    'column = "gap"\n')))[1],
         raises(err, "'gap' twice")),
        ("scenario-csv-ragged", lambda c: (csv_file(c, "a,gap\n0,60\n0\n"), load_scenario(
            c.write("s.toml", scenario() + '[failures]\nlaw = "empirical"\ncsv = "gaps.csv"\n'
                    'column = "gap"\n')))[1],
         raises(err, "line 3")),
        ("events-csv-column-twice", lambda c: history.read_events(
            c.write("e.csv", "time,kind,kind\n0,job_submit,x\n")),
         raises(HistoryFormatError, "field 'kind'")),
        ("sacct-field-twice", lambda c: history.read_sacct(
            c.write("s.txt", "JobID|State|Start|End|state\n")),
         raises(HistoryFormatError, "names this field twice")),
        ("node-events-column-twice", lambda c: read_node_events(
            c.write("n.csv", "time,node,node\n1,0,1\n"), nodes=2),
         raises(NodeEventFormatError, "'node' twice")),
        ("node-events-short-row", lambda c: read_node_events(
            c.write("n.csv", "time,node,down\n1,0,1\n2,1\n"), nodes=2),
         raises(NodeEventFormatError, "line 3")),
        ("results-csv-column-twice", lambda c: load_result(results_csv(c)),
         raises(ResultFileError, "twice")),
        # --- a directory, a FIFO or a device given as an input file
        ("from_csv-fifo", lambda c: ace.Empirical.from_csv(fifo(c, "f.csv"), column=0),
         raises(ValueError, "FIFO")),
        ("from_csv-dev-zero", lambda c: ace.Empirical.from_csv("/dev/zero", column=0),
         raises(ValueError, "character device")),
        ("scenario-fifo", lambda c: load_scenario(fifo(c, "f.toml")), raises(err, "FIFO")),
        ("scenario-dev-zero", lambda c: load_scenario("/dev/zero"),
         raises(err, "character device")),
        ("scenario-csv-fifo", lambda c: (fifo(c, "gaps.csv"), load_scenario(
            c.write("s.toml", scenario() + '[failures]\nlaw = "empirical"\ncsv = "gaps.csv"\n'
                    'column = "gap"\n')))[1],
         raises(err, "FIFO")),
        ("sacct-dev-zero", lambda c: history.read_sacct("/dev/zero"),
         raises(HistoryFormatError, "character device")),
        ("events-fifo", lambda c: history.read_events(fifo(c, "e.jsonl")),
         raises(HistoryFormatError, "FIFO")),
        ("node-events-fifo", lambda c: read_node_events(fifo(c, "n.csv"), nodes=2),
         raises(ValueError, "FIFO")),
        ("load_result-fifo", lambda c: load_result(fifo(c, "r.npz")),
         raises(ResultFileError, "FIFO")),
        ("load_result-directory-npz", lambda c: (c.path("d.npz").mkdir(exist_ok=True),
                                                 load_result(c.path("d.npz")))[1],
         raises(ResultFileError, "is a directory")),
        ("cli-run-fifo", lambda c: cli("run", fifo(c, "f.toml")), raises(CliError, "FIFO")),
        ("cli-run-dev-zero", lambda c: cli("run", "/dev/zero"),
         raises(CliError, "character device")),
        ("cli-sweep-directory", lambda c: cli("sweep", c.path("x").parent),
         raises(CliError, "is a directory")),
        ("cli-fit-dev-zero", lambda c: cli("fit", "/dev/zero"),
         raises(CliError, "character device")),
        ("cli-fit-fifo", lambda c: cli("fit", fifo(c, "h.jsonl")), raises(CliError, "FIFO")),
        ("cli-fit-directory", lambda c: cli("fit", c.path("x").parent),
         raises(CliError, "is a directory")),
        ("cli-report-fifo", lambda c: cli("report", fifo(c, "r.npz"), "-o", c.path("o.html")),
         raises(CliError, "FIFO")),
        # --- core errors and TOML errors: exit 2 with a message
        ("cli-max-events-1", lambda c: cli("run", c.write("s.toml", scenario().replace(
            "[run]\n", "[run]\nmax_events = 1\n"))),
         raises(CliError, "max_events=1")),
        ("cli-deep-array", lambda c: cli("run", c.write(
            "s.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")),
         raises(CliError, "nested too deeply")),
        ("cli-deep-inline-table", lambda c: cli("run", c.write(
            "s.toml", "x = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n")),
         raises(CliError, "nested too deeply")),
        ("toml-key-twice", lambda c: load_scenario(c.write("s.toml", scenario().replace(
            "seed = 1\n", "seed = 1\nseed = 2\n"))),
         raises(err, "run.seed is defined twice")),
        ("toml-job-key-twice", lambda c: load_scenario(c.write("s.toml", scenario().replace(
            "gpus = 8\n", "gpus = 8\ngpus = 16\n"))),
         raises(err, "jobs[0].gpus is defined twice")),
        ("toml-table-twice", lambda c: load_scenario(c.write("s.toml", "[run]\n[run]\n")),
         raises(err, "run is defined twice")),
        # --- serve: a key given twice; a line over the limit
        ("serve-key-twice-id-and-path", reply(
            '{"id": 7, "type": "submit", "model": 1, "job": {"gpus": 8, "work": "1h", '
            '"checkpoint_interval": "1h", "tiers": [{"interval": 60, "save": 1, "save": 2}]}}'),
         accepted(check(lambda r: r["id"] == 7 and r["error"]["type"] == "RequestError"
                        and r["error"]["field"] == "job.tiers[0].save"
                        and "job.tiers[0].save" in r["error"]["message"]))),
        ("serve-type-twice", reply('{"id": "x", "type": "hello", "type": "now"}'),
         accepted(check(lambda r: r["id"] == "x" and r["error"]["field"] == "type"))),
        ("serve-line-over-limit", lines(
            b'{"id": 1, "type": "hello", "pad": "' + b"x" * MAX_LINE_BYTES + b'"}\n'
            + b'{"id": 2, "type": "now"}\n{"id": 3, "type": "hello"}\n'),
         accepted(check(lambda rs: len(rs) == 3 and rs[0]["id"] is None
                        and rs[0]["error"]["type"] == "ParseError"
                        and "16,777,216 bytes" in rs[0]["error"]["message"]
                        and rs[1]["id"] == 2 and rs[2]["ok"]))),
        ("serve-line-at-limit", lines(
            b'{"id": 1, "type": "hello", "pad": "'
            + b"x" * (MAX_LINE_BYTES - 38) + b'"}\n'),
         accepted(check(lambda rs: len(rs) == 1 and rs[0]["id"] == 1
                        and rs[0]["error"]["field"] == "pad"))),
        ("serve-stdio-over-limit", lambda c: stdio(
            b'{"id": 1, "pad": "' + b"x" * (MAX_LINE_BYTES + 1) + b'"}\n'
            + b'{"id": 2, "type": "now"}\n'),
         accepted(check(lambda rs: [r["id"] for r in rs] == [None, 2]
                        and rs[0]["error"]["type"] == "ParseError"))),
        ("serve-line-over-limit-at-end", lines(b"[" * (MAX_LINE_BYTES + 5)),
         accepted(check(lambda rs: len(rs) == 1 and rs[0]["error"]["type"] == "ParseError"))),
        # --- names printed escaped
        ("cli-run-names-escaped", lambda c: cli("run", c.write("s.toml", ESCAPES)),
         accepted(check(escaped))),
        ("cli-compare-names-escaped", lambda c: cli(
            "compare", c.write("s.toml", ESCAPES), c.write("t.toml", ESCAPES)),
         accepted(check(lambda r: "\x1b" not in r.out and "evil\\x1b[31m" in r.out))),
    ]:  # fmt: skip
        add(f"meaning-{label}", build, expect)


#: A scenario whose names hold terminal escape codes (a screen clear, a
#: colour, a title) and a bidi override.
ESCAPES = """\
[run]
name = "evil\\u001b[31mRED\\u001b]0;title\\u0007"
description = "over\\rwritten\\u202e"
replicas = 2
seed = 1
threads = 1

[[jobs]]
name = "a\\u001b[2Jb"
gpus = 8
work = "2h"
checkpoint_interval = "30min"
failures = "10h"

[[jobs]]
name = "plain"
gpus = 8
work = "2h"
checkpoint_interval = "30min"
failures = "10h"
"""


# =========================================================================== atomic saves
# Issue 25, item 2 (saves atomic, an output never an input, files that
# contradict themselves refused), a truncated .npz, recorded_trace names.


def _atomic_io() -> None:
    import json as _json
    import os as _os
    from pathlib import Path as _Path

    from acesim import _atomic, results_io
    from acesim.pytest_plugin import TraceRecorder

    gaps = "inter_failure_s\n3600\n7200\n20000\n"
    scenario = SCENARIO.replace(
        'law = "exponential"\nmean = "8h"',
        'law = "empirical"\ncsv = "gaps.csv"\ncolumn = "inter_failure_s"',
    )

    def saved(c: Any, name: str) -> Any:
        path = c.path(name)
        sim(replicas=3).save(path)
        return path

    def output_is_input(*argv: str) -> Any:
        def build(c: Any) -> Any:
            c.write("gaps.csv", gaps)
            c.write("s.toml", scenario)
            c.write("h.jsonl", '{"time": 0, "kind": "log_start"}\n')
            saved(c, "x.npz")
            return _in(c, lambda: cli(*argv))

        return build

    def truncated(c: Any) -> Any:
        path = saved(c, "t.npz")
        path.write_bytes(path.read_bytes()[:300])
        return results_io.load_result(path)

    def edited(name: str, edit: Any) -> Any:
        def build(c: Any) -> Any:
            path = saved(c, name)
            meta_file = path.with_name(path.stem + ".provenance.json")
            meta = _json.loads(meta_file.read_text())
            edit(path, meta)
            meta_file.write_text(_json.dumps(meta))
            return results_io.load_result(path)

        return build

    def listed(path: Any, meta: Any, table: str = "fleet") -> Any:
        return path.with_name(meta["files"][table]["file"])

    def contradicting(**change: Any) -> Any:
        def build(c: Any) -> Any:
            res = sim(replicas=3)
            tables = {n: getattr(res, n) for n in ("jobs", "fleet", "trace", "events")}
            tables["placements"], tables["node_events"] = res.placements, res.node_events
            header = {"seed": res.seed, "replicas": change.pop("replicas", res.replicas)}
            for name, fn in change.items():
                tables[name] = fn(tables[name].copy())
            results_io.save_tables(c.path("x.json"), tables, header, kind="acesim-result")
            return results_io.load_result(c.path("x.json"))

        return build

    def field(name: str, row: int, value: float) -> Any:
        def set_(a: Any) -> Any:
            a[name][row] = value
            return a

        return set_

    def kill_at(text: str) -> Any:
        def build(c: Any) -> Any:
            _os.environ[_atomic.KILL_AT] = text
            try:
                return sim().save(c.path("k.npz"))
            finally:
                del _os.environ[_atomic.KILL_AT]

        return build

    def trace_names(c: Any) -> Any:
        ids = ["t.py::test[a x]", "t.py::test[a?x]", "t.py::test[a_x]"]
        return {TraceRecorder(c.folder, i, record=False).path() for i in ids}

    def v1(suffix: str) -> Any:
        here = _Path(__file__).parent / "data" / "results_v1"
        return lambda c: results_io.load_result(here / f"r{suffix}")

    for label, build, expect in [
        ("report-output-is-its-input", output_is_input("report", "x.npz", "-o", "x.npz"),
         raises(CliError, "-o x.npz")),
        ("fit-scenario-is-its-history", output_is_input("fit", "h.jsonl", "--scenario", "h.jsonl"),
         raises(CliError, "--scenario h.jsonl")),
        ("run-out-is-the-scenarios-csv", output_is_input("run", "s.toml", "--out", "gaps.csv"),
         raises(CliError, "--out gaps.csv")),
        ("run-out-is-the-scenarios-csv-by-another-path",
         output_is_input("run", "s.toml", "--out", "./gaps.csv"),
         raises(CliError, "--out ./gaps.csv")),
        ("run-out-beside-is-fine", output_is_input("run", "s.toml", "--out", "y.csv"),
         accepted(cli_out("results written to y.csv"))),
        ("load-truncated-npz", truncated, raises(ValueError, "truncated")),
        ("load-listed-table-changed",
         edited("x.csv", lambda p, m: listed(p, m).write_bytes(listed(p, m).read_bytes() + b"0,")),
         raises(ValueError, "files.fleet.bytes")),
        ("load-listed-table-same-size-other-bytes",
         edited("x.csv", lambda p, m: listed(p, m).write_bytes(
             listed(p, m).read_bytes().replace(b"0", b"1", 1))),
         raises(ValueError, "files.fleet.sha256")),
        ("load-listed-table-missing", edited("x.csv", lambda p, m: listed(p, m).unlink()),
         raises(ValueError, "the fleet table of")),
        ("load-listed-name-outside", edited("x.csv", lambda p, m: m["files"]["fleet"].update(
            file="../x.fleet.csv")), raises(ValueError, "files.fleet.file")),
        ("load-listed-size-not-a-number", edited("x.csv", lambda p, m: m["files"]["jobs"].update(
            bytes="12")), raises(ValueError, "files.jobs")),
        ("load-no-file-list", edited("x.csv", lambda p, m: m.pop("files")),
         raises(ValueError, "list of files")),
        ("load-job-ettr-above-one", contradicting(jobs=field("ettr", 0, 1.5)),
         raises(ValueError, "jobs.ettr")),
        ("load-job-ettr-negative", contradicting(jobs=field("ettr", 1, -0.25)),
         raises(ValueError, "jobs.ettr")),
        ("load-fleet-ettr-nan", contradicting(fleet=field("ettr", 0, NAN)),
         raises(ValueError, "fleet.ettr")),
        ("load-replicas-not-the-fleet-rows", contradicting(replicas=5),
         raises(ValueError, "replicas")),
        ("load-jobs-rows-not-per-replica", contradicting(jobs=lambda a: a[:-1]),
         raises(ValueError, "jobs table")),
        ("load-untouched", contradicting(), accepted(sim_ok(3))),
        ("load-version-1-npz", v1(".npz"), accepted(check(lambda r: r.replicas == 2))),
        ("load-version-1-csv", v1(".csv"), accepted(check(lambda r: r.replicas == 2))),
        ("load-version-1-json", v1(".json"), accepted(check(lambda r: r.replicas == 2))),
        ("kill-switch-not-a-number", kill_at("third"), raises(ValueError, "ACESIM_TEST_KILL_AT")),
        ("recorded-trace-names-injective", trace_names, accepted(check(lambda s: len(s) == 3))),
    ]:  # fmt: skip
        add(f"atomic-{label}", build, expect)


# ===================================================================== no progress, re-entrance
# Issue 25, items 4 and 5: max_stalled_failures (simulate, batch_simulate,
# FleetModel, [run] of a scenario, acesim run) and callbacks that start
# simulations of their own. The cases register themselves here (not in
# _GROUPS), so that this block stays one piece.

HOPELESS = """\
[run]
max_stalled_failures = 50

[fleet]
nodes = 4
node_failures = "1h"
repair = "1h"

[[jobs]]
name = "llm"
gpus = 8
work = "6h"
checkpoint_interval = "1h"
"""


def _no_progress_and_reentrance() -> None:
    hour = 3600.0
    stalled = ace.Job(8, work=6 * hour, checkpoint_interval=hour, init=0.0, save=60.0, load=0.0)
    every_half_hour = ace.Constant(1800.0)
    hopeless_fleet = ace.Fleet(4, node_failures=ace.Constant(hour), repair=ace.Constant(hour))
    name = "max_stalled_failures"
    for label, value, error in [
        ("zero", 0, ValueError), ("negative", -1, ValueError), ("2**32", 2**32, ValueError),
        ("float", 1.5, TypeError), ("bool", True, TypeError), ("string", "10", TypeError),
        ("None", None, TypeError), ("nan", NAN, TypeError),
    ]:  # fmt: skip
        add(f"simulate-{name}-{label}",
            lambda c, v=value: ace.simulate(stalled, every_half_hour, max_stalled_failures=v),
            raises(error, name))  # fmt: skip
        add(f"batch_simulate-{name}-{label}",
            lambda c, v=value: ace.batch_simulate(stalled, every_half_hour,
                                                  max_stalled_failures=v),
            raises(error, name))  # fmt: skip
        add(f"FleetModel-{name}-{label}",
            lambda c, v=value: ace.FleetModel(hopeless_fleet, max_stalled_failures=v),
            raises(error, name))  # fmt: skip
    for label, build, expect in [
        ("np.int64", lambda c: ace.simulate(stalled, every_half_hour, horizon=10 * hour,
                                            max_stalled_failures=np.int64(50)),
         accepted(sim_ok(1))),
        # The stops: the kernel, the event heap (the event log), the batch
        # path, the fleet engine; each names the job and the count.
        ("kernel-stops", lambda c: ace.simulate(stalled, every_half_hour,
                                                max_stalled_failures=50),
         raises(ace.NoProgressError, "job 0 was interrupted 50 times")),
        ("event-heap-stops", lambda c: ace.simulate(stalled, every_half_hour, record_events=True,
                                                    max_stalled_failures=50),
         raises(ace.NoProgressError, "job 0 was interrupted 50 times")),
        ("batch-stops", lambda c: ace.batch_simulate([stalled], every_half_hour, replicas=4),
         raises(ace.NoProgressError, "job 0 was interrupted 10000 times")),
        ("hopeless-fleet-default", lambda c: ace.simulate(ace.Job(8, 6 * hour, hour, name="llm"),
                                                          fleet=hopeless_fleet),
         raises(ace.NoProgressError, "job 0 ('llm') was interrupted 10000 times")),
        ("hopeless-fleet-threads", lambda c: ace.simulate(ace.Job(8, 6 * hour, hour),
                                                          fleet=hopeless_fleet, replicas=3,
                                                          threads=2, max_stalled_failures=7),
         raises(ace.NoProgressError, "interrupted 7 times")),
        ("scenario-zero", lambda c: load_scenario(c.write("z.toml", HOPELESS.replace(
            "= 50", "= 0"))), raises(ScenarioError, "run.max_stalled_failures")),
        ("scenario-string", lambda c: load_scenario(c.write("s.toml", HOPELESS.replace(
            "= 50", '= "50"'))), raises(ScenarioError, "run.max_stalled_failures")),
        ("scenario-run", lambda c: load_scenario(c.write("h.toml", HOPELESS)).run(),
         raises(ace.NoProgressError, "interrupted 50 times")),
        ("cli-run", lambda c: cli("run", c.write("h.toml", HOPELESS)),
         raises(CliError, "job 0 ('llm') was interrupted 50 times")),
    ]:  # fmt: skip
        add(f"no-progress-{label}", build, expect)

    once = ace.NodeTrace.from_times({0: [600.0]}, nodes=2)
    nested_fleet = ace.Fleet(2, spares=1, repair=ace.Constant(hour), node_failures=once)
    nested_job = ace.Job(8, work=hour, checkpoint_interval=hour, init=0.0, save=0.0, load=0.0)

    def chain(depth: int, last: int) -> Any:
        """Simulation ``depth`` of a chain whose callbacks each start the next."""

        def look_ahead(view: Any) -> None:
            if depth < last:
                chain(depth + 1, last)

        return ace.simulate(nested_job, fleet=nested_fleet,
                            policy=ace.Policy(on_failure=look_ahead))  # fmt: skip

    add("reentrant-depth-8", lambda c: chain(1, 8), accepted(sim_ok(1)))
    add("reentrant-depth-9", lambda c: chain(1, 9),
        raises(ace.ReentrantCallError, "nested 9 deep"))  # fmt: skip
    add("reentrant-depth-100", lambda c: chain(1, 100),
        raises(ace.ReentrantCallError, "nested 9 deep"))  # fmt: skip


# =========================================================================== intervals
# Confidence intervals and the assertions' minimum replica count (issue 26):
# below acesim.stats.MIN_REPLICAS (10) replicas an assertion refuses with
# TooFewReplicasError (a ValueError) naming the minimum; ettr() and
# compare() still answer, inside [0, 1] and [-1, 1].


def _intervals() -> None:
    from acesim.testing import assert_ettr_at_least, assert_not_worse

    def inside(lo: float, hi: float) -> Any:
        return check(lambda e: all(lo <= x <= hi for x in e[-2:]) and e[-2] <= e[-1])

    for label, build, expect in [
        ("assert_ettr_at_least-9-replicas", lambda: assert_ettr_at_least(sim(replicas=9), 0.0),
         raises(ace.TooFewReplicasError, "at least 10 replicas")),
        ("assert_ettr_at_least-2-replicas", lambda: assert_ettr_at_least(sim(), 0.0),
         raises(ValueError, "got 2")),
        ("assert_not_worse-9-replicas",
         lambda: assert_not_worse(sim(replicas=9), sim(replicas=9), margin=1.0),
         raises(ace.TooFewReplicasError, "at least 10 replicas")),
        ("assert_ettr_at_least-10-replicas", lambda: assert_ettr_at_least(sim(replicas=10), 0.0),
         accepted(check(lambda v: v is None))),
        ("ettr-2-replicas-in-unit-interval", lambda: sim(seed=4).ettr(ci=0.999),
         accepted(inside(0.0, 1.0))),
        ("compare-2-replicas-in-minus-one-one",
         lambda: ace.compare(sim(seed=4), sim(seed=4, jobs=ace.Job(8, 3e4, 600.0)), ci=0.999)[
             "ettr"], accepted(inside(-1.0, 1.0))),
    ]:  # fmt: skip
        add(f"intervals-{label}", lambda c, b=build: b(), expect)


# --------------------------------------------------------------------------- core specs
# The compiled core's input crosses as bound specs with named fields
# (_core.FleetSpec, PolicySpec, CauseSpec, ...): a field that does not
# exist, a value of the wrong type, a law index out of range, an enum value
# the core does not know, or a tuple or dict in place of a spec is refused
# with an error naming the spec and field.


def _core_specs() -> None:
    from acesim import _core

    law = ace.Constant(60.0)._compiled
    job = _core.JobColumns(
        gpus=np.array([8], np.uint32), work=np.array([3600.0]),
        checkpoint_interval=np.array([600.0]), rule=np.zeros(1, np.uint32), init=0, save=0,
        load=0, submit=np.zeros(1), priority=np.zeros(1, np.int32),
    )  # fmt: skip
    options = dict(gpus_per_node=8, replicas=1, first_replica=0, seed=0, horizon=math.inf,
                   record_events=False, check_invariants=False, threads=1,
                   max_events=0)  # fmt: skip

    def run(fleet: Any = None, policy: Any = None, causes: Any = ()) -> Any:
        return _core.simulate([law], job, -1, list(causes), fleet, policy, **options)

    for label, build, expect in [
        ("fleet-unknown-field", lambda c: _core.FleetSpec(nodez=4),
         raises(TypeError, "FleetSpec.nodez: no such field")),
        ("fleet-nodes-string", lambda c: _core.FleetSpec(nodes="4"),
         raises(TypeError, "FleetSpec.nodes: cannot take a value of type str")),
        ("fleet-repair-below-none", lambda c: _core.FleetSpec(repair=-2),
         raises(ValueError, "FleetSpec.repair: a law index or -1")),
        ("fleet-law-list-entry", lambda c: _core.FleetSpec(node_failure_laws=[0, -5]),
         raises(ValueError, "FleetSpec.node_failure_laws[1]")),
        ("fleet-clock-unknown", lambda c: _core.FleetSpec(node_clock=_core.NodeClock(2)),
         raises(ValueError, "FleetSpec.node_clock: unknown value 2")),
        ("fleet-as-dict", lambda c: run(fleet={"nodes": 4}),
         raises(TypeError, "fleet: expected a FleetSpec")),
        ("policy-as-tuple", lambda c: run(policy=(0, 0, 0.0, None, None, 0, 0)),
         raises(TypeError, "policy: expected a PolicySpec")),
        ("policy-replacement-unknown",
         lambda c: _core.PolicySpec(replacement=_core.Replacement(4)),
         raises(ValueError, "PolicySpec.replacement: unknown value 4")),
        ("policy-on-failure-not-callable", lambda c: _core.PolicySpec(on_failure=3),
         raises(TypeError, "PolicySpec.on_failure: expected a callable")),
        ("cause-as-tuple", lambda c: run(causes=[(1.0, -1, True, 1, True, 0.0)]),
         raises(TypeError, "incompatible function arguments")),
        ("cause-detect-too-big", lambda c: _core.CauseSpec(detect=2**32 - 1),
         raises(ValueError, "CauseSpec.detect: a law index or -1")),
        ("fleet-law-names-no-distribution",
         lambda c: run(fleet=_core.FleetSpec(nodes=2, repair=5)), raises(ValueError, "repair")),
        ("spec-run-accepted", lambda c: run(fleet=_core.FleetSpec(nodes=1),
                                            policy=_core.PolicySpec(),
                                            causes=[_core.CauseSpec()])["jobs"],
         accepted(check(lambda rows: rows["wall"].tolist() == [3600.0 + 120.0 + 6 * 60.0]))),
    ]:  # fmt: skip
        add(f"core-spec-{label}", build, expect)


# =========================================================================== front door
# Issue 27, item 4: one implementation of each input rule, whichever door a
# job comes in by (simulate, batch_simulate, a job submitted to a
# FleetModel). The cases register themselves here, so that this block stays
# one piece.


def _front_door() -> None:
    # 1e10 s of work at a checkpoint every millisecond: 1e13 checkpoints.
    countless = ace.Job(8, 1e10, 1e-3)
    small_fleet = ace.Fleet(4, repair=600.0, node_failures=ace.Exponential(2e4))
    expect = raises(ValueError, "jobs[0].checkpoint_interval gives more than 2^32 checkpoints")
    add("front-door-simulate-countless-checkpoints",
        lambda c: ace.simulate(countless, EXP), expect)  # fmt: skip
    add("front-door-fleet-countless-checkpoints",
        lambda c: ace.simulate(countless, fleet=small_fleet), expect)  # fmt: skip
    add("front-door-batch-countless-checkpoints",
        lambda c: ace.batch_simulate([countless], EXP), expect)  # fmt: skip
    add("front-door-FleetModel-countless-checkpoints",
        lambda c: ace.FleetModel(small_fleet).submit(countless), expect)  # fmt: skip


# ======================================================================= embedding: Never, state


def _embedding() -> None:
    never = ace.Never()

    def fm() -> Any:
        return ace.FleetModel(ace.Fleet(4, spares=1, node_failures=never))

    def _swallow(call: Any) -> None:
        with contextlib.suppress(TypeError, ValueError):
            call()

    create = {"type": "create", "fleet": {"nodes": 4}}
    for label, requests, expect in [
        ("never-with-a-field", [{"type": "create", "fleet": {"nodes": 4, "node_failures": {
            "law": "never", "mean": 5}}}], raises(ProtocolReply, "'fleet.node_failures.mean'")),
        ("never-as-repair", [{"type": "create", "fleet": {"nodes": 4, "repair": {
            "law": "never"}}}], raises(ProtocolReply, "'fleet.repair'")),
        ("never-as-detect", [{**create, "causes": [{"name": "x", "share": 1, "detect": {
            "law": "never"}}]}], raises(ProtocolReply, "'causes[0].detect'")),
        ("never-in-a-mixture", [{**create, "failures": {"law": "mixture", "components": [
            {"weight": 1, "law": {"law": "never"}}]}}],
         raises(ProtocolReply, "'failures.components[0]'")),
        ("advance-whole-instant-string", [create, {"type": "advance", "model": 1, "until": 60,
                                                   "whole_instant": "no"}],
         raises(ProtocolReply, "'whole_instant'")),
        ("node_states-extra-field", [create, {"type": "node_states", "model": 1, "job": 0}],
         raises(ProtocolReply, "'job'")),
        ("queued-no-model", [create, {"type": "queued"}], raises(ProtocolReply, "'model'")),
        ("add_jobs-not-array", [create, {"type": "add_jobs", "model": 1, "jobs": {"gpus": 8}}],
         raises(ProtocolReply, "'jobs'")),
        ("add_jobs-time-limit", [create, {"type": "add_jobs", "model": 1, "jobs": [
            {"gpus": 8, "work": "1h", "checkpoint_interval": "1h", "time_limit": "1d"}]}],
         raises(ProtocolReply, "'jobs[0].time_limit'")),
        ("add_jobs-submit-negative", [create, {"type": "add_jobs", "model": 1, "jobs": [
            {"gpus": 8, "work": "1h", "checkpoint_interval": "1h", "submit": -5}]}],
         raises(ProtocolReply, "'jobs[0].submit'")),
        ("add_jobs-too-wide", [create, {"type": "add_jobs", "model": 1, "jobs": [
            {"gpus": 800, "work": "1h", "checkpoint_interval": "1h"}]}],
         raises(ProtocolReply, "'jobs[0].gpus'")),
        ("requeue-queued", [create, {"type": "submit", "model": 1, "job": {
            "gpus": 8, "work": "1h", "checkpoint_interval": "1h"}},
            {"type": "requeue", "model": 1, "job": 0}], raises(ProtocolReply, "'job'")),
        ("running-unknown-model", [create, {"type": "running", "model": 7}],
         raises(ProtocolReply, "'model'")),
        ("never-fleet", [{"type": "create", "fleet": {"nodes": 4, "node_failures": {
            "law": "never"}}}], accepted(check(lambda r: r[-1]["result"]["model"] == 1))),
    ]:  # fmt: skip
        add(f"serve-{label}", lambda c, r=requests: serve(*r), expect)

    for label, build, expect in [
        ("Never-args", lambda: ace.Never(1.0), raises(TypeError, "argument")),
        ("Never-sample-n-negative", lambda: never.sample(-1), raises(ValueError, "n")),
        ("Never-sample-device", lambda: never.sample(2, device="tpu"),
         raises(ValueError, "device")),
        ("Never-mean-gpus-zero", lambda: never.mean(gpus=0), raises(ValueError, "gpus")),
        ("Never-save", lambda: ace.Job(8, 3600.0, 600.0, save=never), raises(TypeError, "save")),
        ("Never-load", lambda: ace.Job(8, 3600.0, 600.0, load=never), raises(TypeError, "load")),
        ("Never-persist", lambda: ace.Job(8, 3600.0, 600.0, persist=never),
         raises(TypeError, "persist")),
        ("Never-repair", lambda: ace.Fleet(4, repair=never), raises(TypeError, "repair")),
        ("Never-repair-stage", lambda: ace.RepairStage(never, fix=1.0),
         raises(TypeError, "duration")),
        ("Never-cold-spare-delay", lambda: ace.Fleet(4, cold_spares=1, cold_spare_delay=never),
         raises(TypeError, "cold_spare_delay")),
        ("Never-replacement-delay", lambda: ace.Policy(replacement_delay=never),
         raises(TypeError, "replacement_delay")),
        ("Never-detect", lambda: ace.Cause("x", 1.0, detect=never), raises(TypeError, "detect")),
        ("Never-mixture", lambda: ace.Mixture([(1.0, never)]), raises(TypeError, "components[0]")),
        ("Never-scale-aware", lambda: ace.ScaleAware(never, 8), raises(TypeError, "base")),
        ("Never-failures", lambda: sim(failures=never),
         accepted(check(lambda r: (r.jobs["failures"] == 0).all()))),
        ("nodes_needed-unknown", lambda: fm().nodes_needed(0), raises(ValueError, "job")),
        ("nodes_needed-string", lambda: (lambda m: (m.submit(job()), m.nodes_needed("0")))(fm()),
         raises(TypeError, "job")),
        ("nodes_needed-out-of-range", lambda: (lambda m: (m.submit(job()), m.nodes_needed(3)))(
            fm()), raises(ValueError, "job")),
        ("advance-whole_instant-string", lambda: fm().advance(10.0, whole_instant="yes"),
         raises(TypeError, "whole_instant")),
        ("advance-whole_instant-positional", lambda: fm().advance(10.0, False),
         raises(TypeError, "positional")),
        ("node_states-empty-fleet-model", lambda: fm().node_states(),
         accepted(check(lambda s: list(s) == [0, 0, 0, 4]))),
        ("lists-empty", lambda: (lambda m: (m.running(), m.waiting(), m.queued(), m.down_nodes()))(
            fm()), accepted(check(lambda r: r == ([], [], [], [])))),
        ("add_jobs-a-job", lambda: fm().add_jobs(job()), raises(TypeError, "jobs")),
        ("add_jobs-string", lambda: fm().add_jobs("job"), raises(TypeError, "jobs")),
        ("add_jobs-not-a-job", lambda: fm().add_jobs([job(), 5]), raises(TypeError, "jobs[1]")),
        ("add_jobs-time-limit", lambda: fm().add_jobs([job(time_limit=10.0)]),
         raises(ValueError, "jobs[0].time_limit")),
        ("add_jobs-too-wide", lambda: fm().add_jobs([job(), job(gpus=64)]),
         raises(ValueError, "jobs[1].gpus")),
        ("add_jobs-refused-adds-nothing", lambda: (lambda m: (
            _swallow(lambda: m.add_jobs([job(), 5])), m.peek())[1])(fm()), accepted(equals(INF))),
        ("add_jobs-empty", lambda: (lambda m: (m.add_jobs([]), m.advance(INF))[1])(fm()),
         accepted(check(lambda ev: ev == []))),
        ("requeue-queued", lambda: (lambda m: m.requeue(m.submit(job())))(fm()),
         raises(ValueError, "job")),
        ("requeue-unknown", lambda: fm().requeue(3), raises(ValueError, "job")),
        ("requeue-bool", lambda: (lambda m: (m.submit(job()), m.requeue(True)))(fm()),
         raises(TypeError, "job")),
        ("Never-node-failures", lambda: ace.simulate(
            [job()], fleet=ace.Fleet(4, node_failures=never), replicas=2),
         accepted(check(lambda r: (r.jobs["failures"] == 0).all()))),
    ]:  # fmt: skip
        add(f"embedding-{label}", lambda c, b=build: b(), expect)


# =========================================================================== registry

_GROUPS = [
    _constructors,
    _from_csv,
    _sampling,
    _evaluation,
    _scipy,
    _jobs,
    _job_arrays,
    _fleets,
    _policies,
    _simulate,
    _batch,
    _sweeps,
    _workloads_fit_analytic,
    _history,
    _history_fit_failures,
    _cli,
    _scenarios,
    _serve_and_fleet_model,
    _results,
    _untrusted_names,
    _meaning,
    _atomic_io,
    _no_progress_and_reentrance,
    _intervals,
    _core_specs,
    _front_door,
    _embedding,
]
for _group in _GROUPS:
    _group()


# --------------------------------------------------------------------------- self-test cases

add("selftest-abort", lambda c: __import__("os").abort(), accepted(true), table=SELFTEST)
add(
    "selftest-hang",
    lambda c: __import__("time").sleep(3600),
    accepted(true),
    timeout=1.0,
    table=SELFTEST,
)
add("selftest-after-crash", lambda c: 1 + 1, accepted(equals(2.0)), table=SELFTEST)
add("selftest-after-hang", lambda c: 2 + 2, accepted(equals(4.0)), table=SELFTEST)


# =========================================================================== the tests

# One xdist worker runs the whole battery (--dist loadgroup): test_summary
# then finds every case already run instead of running again the cases
# another worker ran.
pytestmark = pytest.mark.xdist_group("input_battery")


def _params() -> list[Any]:
    out = []
    for case in CASES.values():
        marks = []
        if case.finding:
            marks.append(pytest.mark.xfail(strict=True, reason=f"FINDING: {case.finding}"))
        out.append(pytest.param(case.id, id=case.id, marks=marks))
    return out


@pytest.fixture(scope="module")
def battery(tmp_path_factory: pytest.TempPathFactory) -> Any:
    runner = Runner(tmp_path_factory.mktemp("battery"), __name__)
    yield runner
    runner.close()


@pytest.mark.parametrize("case_id", _params())
def test_case(battery: Runner, case_id: str) -> None:
    case = CASES[case_id]
    out = battery.run(case_id)
    want = NAMED if isinstance(case.expect, Raises) else ACCEPTED
    assert out["kind"] == want, f"{case_id}: {out['detail']}\n(expected: {case.expect.describe()})"


def test_at_least_400_cases() -> None:
    assert len(CASES) >= 400, len(CASES)


def test_a_crash_or_a_hang_fails_only_its_case(tmp_path: Any) -> None:
    runner = Runner(tmp_path, __name__)
    try:
        crash = runner.run("selftest-abort")
        assert crash["kind"] == OTHER and "crash" in crash["detail"], crash
        assert runner.run("selftest-after-crash")["kind"] == ACCEPTED
        hang = runner.run("selftest-hang")
        assert hang["kind"] == OTHER and "hang" in hang["detail"], hang
        assert runner.run("selftest-after-hang")["kind"] == ACCEPTED
        assert runner.starts == 3
    finally:
        runner.close()


def test_summary(battery: Runner) -> None:
    """The three counts over every case (running here the cases another
    xdist process ran); every "other" outcome is a listed finding."""
    kinds = {case_id: battery.run(case_id)["kind"] for case_id in CASES}
    counts = collections.Counter(kinds.values())
    print(
        f"\ninput battery: {len(CASES)} cases: {counts[NAMED]} named errors, "
        f"{counts[ACCEPTED]} accepted with a plausible result, {counts[OTHER]} other "
        f"({sum(1 for c in CASES.values() if c.finding)} listed findings)"
    )
    others = {case_id for case_id, kind in kinds.items() if kind == OTHER}
    findings = {case_id for case_id, case in CASES.items() if case.finding}
    assert others == findings, (
        f"not listed as findings: {sorted(others - findings)}; "
        f"listed but not other: {sorted(findings - others)}"
    )
