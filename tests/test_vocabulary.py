"""One vocabulary: every law and every shared option means the same through
a scenario file (TOML), the JSON protocol, pickle and provenance.

Each case is written once per entry point (a mixture's components and an
infinite time are spelled differently in TOML and JSON) and once as the
Python object worked out by hand; the three routes give objects with the
same constructor arguments (compared through the constructor form pickling
and provenance use, since a law compares by identity). Then what each entry
point refuses, with the reason it gives.
"""

from __future__ import annotations

import enum
import json
import math
import pickle
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import _vocabulary, provenance, serve
from acesim._pickle import constructor_form
from acesim.scenario import Scenario, ScenarioError, law_spec
from acesim.units import DURATION_UNITS

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
JOB = {"gpus": 8, "work": "1h", "checkpoint_interval": "10min"}


def form(x: Any) -> Any:
    """A value as its constructor arguments, recursively (arrays as lists)."""
    if isinstance(x, list | tuple):
        return [form(v) for v in x]
    if isinstance(x, np.ndarray):
        return [form(v) for v in x.tolist()]
    if isinstance(x, enum.Enum):
        return x
    described = constructor_form(x)
    if described is None:
        return x
    name, how, values = described
    return (name, how, {k: form(v) for k, v in values.items()})


def via_toml(law: Any) -> Any:
    """The law a scenario file's ``failures`` key builds."""
    kwargs = Scenario.from_dict({"jobs": [JOB], "failures": law}).simulate_kwargs()
    return kwargs["failures"]


def via_protocol(law: Any) -> Any:
    return serve._law(law, "law")


def via_pickle(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


def via_provenance(obj: Any) -> Any:
    """Described as a result's provenance records it, and rebuilt."""
    return provenance.rebuild(json.loads(json.dumps(provenance.describe(obj))))


EXP_5MIN = {"law": "exponential", "mean": "5min"}
WEIBULL = {"law": "weibull", "shape": 0.7, "scale": "2d"}

#: family -> (TOML value, protocol value, the Python law by hand)
LAWS: dict[str, tuple[Any, Any, Any]] = {
    "constant": ({"law": "constant", "value": "30min"},) * 2 + (ace.Constant(1800.0),),
    "exponential": ({"law": "exponential", "mean": "8h"},) * 2 + (ace.Exponential(8 * HOUR),),
    "weibull": (WEIBULL, WEIBULL, ace.Weibull(0.7, 2 * DAY)),
    "lognormal": ({"law": "lognormal", "mu": 10, "sigma": 1.5},) * 2 + (ace.LogNormal(10.0, 1.5),),
    "gamma": ({"law": "gamma", "shape": 2, "scale": "1h"},) * 2 + (ace.Gamma(2.0, HOUR),),
    "mixture": (
        {
            "law": "mixture",
            "components": [
                {"weight": 0.9, "law": "constant", "value": 30},
                {"weight": 0.1, **EXP_5MIN},
            ],
        },
        {
            "law": "mixture",
            "components": [{"weight": 0.9, "law": 30}, {"weight": 0.1, "law": EXP_5MIN}],
        },
        ace.Mixture([(0.9, ace.Constant(30.0)), (0.1, ace.Exponential(300.0))]),
    ),
    "empirical": ({"law": "empirical", "samples": [10, "20s", "1min"]},) * 2
    + (ace.Empirical([10.0, 20.0, 60.0]),),
    "block_bootstrap": ({"law": "block_bootstrap", "sequence": [5, "1min", 500], "block": 2},) * 2
    + (ace.BlockBootstrap([5.0, 60.0, 500.0], 2),),
    "replay": (
        {"law": "replay", "times": [30, "inf"]},
        {"law": "replay", "times": [30, "Infinity"]},
        ace.Replay([30.0, math.inf]),
    ),
    "scale_aware": ({"law": "scale_aware", "base": WEIBULL, "ref_gpus": 1024, "exponent": 0.5},) * 2
    + (ace.ScaleAware(ace.Weibull(0.7, 2 * DAY), 1024.0, 0.5),),
    # an exponential of mean mttf_1024 at 1,024 GPUs
    "meta_scale": ({"law": "meta_scale", "mttf_1024": "5h", "exponent": 0.9},) * 2
    + (ace.ScaleAware(ace.Exponential(5 * HOUR), 1024.0, 0.9),),
    # 0.5 failures per node-day: a node's mean is 2 days, at its 4 GPUs
    "node_rate": ({"law": "node_rate", "failures_per_node_day": 0.5, "gpus_per_node": 4},) * 2
    + (ace.ScaleAware(ace.Exponential(2 * DAY), 4.0, 1.0),),
    # the first of 4 units with 40 s exponential lifetimes: a 10 s exponential
    "gang": ({"law": "gang", "base": {"law": "exponential", "mean": "40s"}, "units": 4},) * 2
    + (ace.Exponential(10.0),),
    "never": ({"law": "never"},) * 2 + (ace.Never(),),
}


def test_the_cases_cover_every_declared_law() -> None:
    assert set(LAWS) == set(_vocabulary.LAWS) == set(serve.LAWS)
    assert tuple(_vocabulary.LAWS) == ace.scenario.LAWS


@pytest.mark.parametrize("family", list(LAWS))
def test_every_law_is_the_same_through_toml_the_protocol_and_pickle(family: str) -> None:
    toml, wire, expected = LAWS[family]
    want = form(expected)
    assert form(via_toml(toml)) == want
    assert form(via_protocol(wire)) == want
    assert form(via_pickle(expected)) == want
    assert form(via_provenance(expected)) == want


@pytest.mark.parametrize("family", [f for f in LAWS if _vocabulary.LAWS[f].cls is not None])
def test_every_law_class_is_written_back_as_its_table(family: str) -> None:
    """law_spec writes the declared table; reading it back gives the same law."""
    expected = LAWS[family][2]
    spec = law_spec(expected)
    assert spec["law"] == family
    assert form(via_toml(spec)) == form(expected)


@pytest.mark.parametrize("unit", list(DURATION_UNITS))
def test_every_duration_unit_is_read_alike_by_both_readers(unit: str) -> None:
    want = form(ace.Constant(3 * DURATION_UNITS[unit]))
    assert form(via_toml(f"3{unit}")) == want
    assert form(via_protocol(f"3{unit}")) == want
    assert form(via_protocol({"law": "constant", "value": f"3 {unit.upper()}"})) == want


# The shared options: every field of a fleet, a job, a cause and a policy
# that both a scenario file and the protocol take.
FLEET = {
    "nodes": 4,
    "gpus_per_node": 4,
    "spares": 1,
    "repair": {"stages": [{"duration": "1h", "escalate": 0.25, "fix": 0.5}, {"duration": "1d"}],
               "misdiagnosis": 0.1},
    "node_failures": {"law": "weibull", "shape": 0.8, "scale": "30d"},
    "lemon_fraction": 0.25,
    "lemon_factor": 3.0,
    "node_start": "fresh",
    "node_clock": "busy",
    "rate_windows": [{"start": "1d", "end": "2d", "factor": 2.0}],
    "maintenance": [{"start": "3d", "duration": "4h", "nodes": [0, 1]}],
    "cold_spares": 0,
    "cold_spare_delay": "1h",
    "lend_spares": True,
    "storage_bandwidth": 1e9,
}  # fmt: skip
FULL_JOB = {
    "gpus": 16,
    "work": "10h",
    "checkpoint_interval": "1h",
    "init": "2min",
    "save": 30,
    "load": {"law": "exponential", "mean": 60},
    "priority": 2,
    "name": "a",
    "persist": "5min",
    "tiers": [{"interval": "30min", "save": 5, "load": 10, "replication": 2}],
    "min_gpus": 8,
    "reconfigure": "1min",
    "scaling": 0.9,
    "checkpoint_bytes": 1e10,
}
CAUSE = {
    "name": "gpu",
    "share": 0.6,
    "detect": "5min",
    "node_down": True,
    "nodes": 2,
    "scope": "node",
    "slowdown": 0.0,
}
QUARANTINE = {"failures": 2, "window": "1d", "duration": "12h"}


def test_the_cases_use_every_shared_field() -> None:
    """Every declared field the protocol takes is in the cases above."""
    for name, case in (("fleet", FLEET), ("job", FULL_JOB), ("cause", CAUSE)):
        taken = {f.name for f in _vocabulary.RECORDS[name].fields if not f.refused}
        assert set(case) == taken, name
    taken = {f.name for f in _vocabulary.RECORDS["quarantine"].fields if not f.refused}
    assert set(QUARANTINE) == taken


def test_every_shared_option_is_the_same_through_toml_the_protocol_and_pickle() -> None:
    spec = {
        "jobs": [FULL_JOB],
        "fleet": FLEET,
        "causes": [CAUSE],
        "policy": {"quarantine": QUARANTINE},
    }
    toml = Scenario.from_dict(spec).simulate_kwargs()
    wire = {
        "jobs": [serve._job(FULL_JOB, "job")],
        "fleet": serve._fleet(FLEET, "fleet"),
        "causes": list(serve._causes([CAUSE], "causes")),
        "policy": serve._policy({"quarantine": QUARANTINE}, "policy"),
    }
    for key, value in wire.items():
        assert form(toml[key]) == form(value), key
        assert form(via_pickle(value)) == form(value), key
        assert form(via_provenance(value)) == form(value), key
    # and by hand: the values the strings stand for
    fleet = toml["fleet"]
    assert fleet.rate_windows == ((DAY, 2 * DAY, 2.0),)
    assert fleet.maintenance == ((3 * DAY, 4 * HOUR, (0, 1)),)
    assert toml["policy"].quarantine.window == DAY
    assert toml["policy"].quarantine.duration == 12 * HOUR
    job = toml["jobs"][0]
    assert (job.work, job.checkpoint_interval, job.tiers[0].interval) == (10 * HOUR, HOUR, 1800.0)


# --------------------------------------------------------------------------
# What each entry point refuses
# --------------------------------------------------------------------------

CODE, FILE = "names code", "names a file"
SCHEDULER = "outside scheduler's"

#: The protocol: (reader, value, error type, field at fault, words of the message).
PROTOCOL_REFUSALS = [
    ("policy", {"on_failure": "rules:decide"}, "RequestError", "x.on_failure", CODE),
    ("policy", {"place": "rules:place"}, "RequestError", "x.place", CODE),
    ("policy", {"replacement": "none"}, "RequestError", "x.replacement", SCHEDULER),
    ("policy", {"preemption_grace": "1min"}, "RequestError", "x.preemption_grace", SCHEDULER),
    ("policy", {"backfill": "none"}, "RequestError", "x.backfill", SCHEDULER),
    ("law", {"law": "empirical", "csv": "x.csv"}, "RequestError", "x.csv", FILE),
    ("law", {"history": "h.csv"}, "RequestError", "x.history", FILE),
    ("fleet", {"nodes": 2, "node_failures": {"node_events": "e.csv"}}, "RequestError",
     "x.node_failures.node_events", FILE),
    ("job", {**JOB, "submit": 5}, "RequestError", "x.submit", "submitted at the model's clock"),
    ("job", {**JOB, "time_limit": "1h"}, "RequestError", "x.time_limit", "to enforce"),
    ("law", {"law": "gang", "base": "1h"}, "RequestError", "x.units", "is required"),
    ("law", {"law": "gang", "base": "1h", "units": 1.5}, "TypeError", "x.units", "an integer"),
    ("law", {"law": "weibul"}, "ValueError", "x.law", "did you mean 'weibull'"),
    ("fleet", {"nodes": 2, "spars": 1}, "RequestError", "x.spars", "did you mean 'spares'"),
    ("law", "3 parsecs", "ValueError", "x", "parsecs"),
]  # fmt: skip

READERS = {"policy": serve._policy, "law": serve._law, "fleet": serve._fleet, "job": serve._job}


@pytest.mark.parametrize(("reader", "value", "kind", "field", "words"), PROTOCOL_REFUSALS)
def test_the_protocol_refuses(reader: str, value: Any, kind: str, field: str, words: str) -> None:
    with pytest.raises(serve.ProtocolError) as info:
        READERS[reader](value, "x")
    assert (info.value.kind, info.value.field) == (kind, field)
    assert info.value.message.startswith(field)
    assert words in info.value.message


#: A scenario file: (table, value, key at fault, words of the message).
TOML_REFUSALS = [
    ({"failures": {"law": "weibul"}}, "failures.law", "did you mean 'weibull'"),
    ({"failures": {"law": "exponential", "mean": "3 parsecs"}}, "failures.mean", "parsecs"),
    ({"failures": {"law": "gang", "base": "1h", "units": 1.5}}, "failures.units",
     "must be an integer"),
    ({"failures": {"law": "gang", "base": "1h"}}, "failures.units", "missing key 'units'"),
    ({"failures": {"law": "never", "mean": 3}}, "failures.mean", "unknown key 'mean'"),
    ({"fleet": {"nodes": 2, "spars": 1}}, "fleet.spars", "did you mean 'spares'"),
    ({"policy": {"quarantine": {"failures": "2"}}}, "policy.quarantine.failures",
     "must be an integer"),
    ({"policy": {"on_failure": "no_colon"}}, "policy.on_failure", "package.module:function"),
]  # fmt: skip


@pytest.mark.parametrize(("table", "key", "words"), TOML_REFUSALS)
def test_a_scenario_file_refuses(table: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict({"jobs": [JOB], **table})
    assert info.value.key == key
    assert words in str(info.value)


def test_pickle_refuses_a_compiled_sampler() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(ace.Exponential(1.0)._compiled)


# --------------------------------------------------------------------------
# Dotted key paths (parse_key's syntax) name declared fields
# --------------------------------------------------------------------------

FIELDS_AT = [
    ("fleet.spares", "integer", "nodes"),
    ("jobs[0].checkpoint_interval", "interval", "s"),
    ("jobs[2].tiers[1].interval", "duration", "s"),
    ("jobs[0].checkpoint_bytes", "number", "bytes"),
    ("policy.quarantine.window", "duration_inf", "s"),
    ("fleet.repair.stages[0].fix", "number", ""),
    ("fleet.node_failures.scale", "duration", "s"),
    ("fleet.node_failures.base.mean", "duration", "s"),
    ("causes[1].detect", "law", "s"),
    ("fleet.storage_bandwidth", "number", "bytes/s"),
]


@pytest.mark.parametrize(("key", "kind", "unit"), FIELDS_AT)
def test_a_key_path_names_its_field_kind_and_unit(key: str, kind: str, unit: str) -> None:
    found = _vocabulary.field_at(ace.scenario.parse_key(key))
    assert (found.kind, found.unit) == (kind, unit)
    assert found.name == key.rsplit(".", 1)[-1].split("[")[0]


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("fleet.spars", "did you mean 'spares'"),
        ("flet.nodes", "did you mean 'fleet'"),
        ("fleet.node_failures.scael", "did you mean 'scale'"),
        ("jobs.gpus", "give the index"),
        ("fleet.nodes.x", "has no fields"),
        ("fleet", "names a table"),
    ],
)
def test_a_key_path_no_declaration_has_is_refused(key: str, words: str) -> None:
    with pytest.raises(KeyError, match=words):
        _vocabulary.field_at(ace.scenario.parse_key(key))


def test_the_bounds_of_a_field_are_declared() -> None:
    fix = _vocabulary.field_at(("fleet", "repair", "stages", 0, "fix"))
    assert (fix.low, fix.high) == (0.0, 1.0)
    shape = _vocabulary.field_at(("fleet", "node_failures", "shape"))
    assert (shape.low, shape.low_open) == (0.0, True)
