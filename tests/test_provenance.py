"""Provenance: every result says what produced it, as JSON data that runs
again to the same numbers (acesim.provenance)."""

from __future__ import annotations

import ctypes
import json
import math
import pickle
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim.provenance import describe, rebuild, reproduce
from acesim.sweep import sweep

#: A real function of a loaded image (a CompiledPolicy needs code).
LIBC_ABS = ctypes.cast(ctypes.CDLL(None).abs, ctypes.c_void_p).value or 0

HOUR = 3600.0
DAY = 86400.0


def wait_for_repair_when_short(view: Any) -> ace.Replacement:
    """A module-level Python failure policy (provenance names it)."""
    if view.spare_nodes == 0:
        return ace.Replacement.WAIT_REPAIR
    return ace.Replacement.SPARES


def _fleet_call() -> dict[str, Any]:
    fleet = ace.Fleet(
        10,
        spares=1,
        repair=ace.Repair(
            [ace.RepairStage(ace.Constant(600.0), escalate=0.4), ace.RepairStage(DAY, fix=0.9)],
            misdiagnosis=0.1,
        ),
        node_failures=ace.Weibull(0.7, 40 * HOUR),
        lemon_fraction=0.1,
        lemon_factor=4.0,
        maintenance=[(2 * DAY, 4 * HOUR, [0, 1])],
    )
    policy = ace.Policy(
        quarantine=ace.Quarantine(2, DAY, 4 * HOUR),
        on_failure=wait_for_repair_when_short,
        preemption=ace.Preemption.CHECKPOINT_AWARE,
    )
    jobs = [
        ace.Job(32, 2 * DAY, "young", name="pretrain", save=ace.Empirical([40.0, 60.0, 95.0])),
        ace.Job(16, DAY, HOUR, name="finetune", persist=ace.Exponential(120.0), priority=1),
        ace.Job(16, DAY, HOUR, min_gpus=8, reconfigure=30.0),
    ]
    return {
        "jobs": jobs,
        "fleet": fleet,
        "policy": policy,
        "causes": ace.LLAMA3_CAUSES,
        "replicas": 3,
        "seed": 11,
        "horizon": 6 * DAY,
        "record_events": True,
    }


CALLS: dict[str, dict[str, Any]] = {
    "single": {
        "jobs": ace.Job(1024, 7 * DAY, "daly", init=ace.Constant(300.0)),
        "failures": ace.ScaleAware(ace.Empirical(np.linspace(100.0, 9e4, 500)), ref_gpus=18_688),
        "replicas": 20,
        "seed": 4,
    },
    "laws": {
        "jobs": [
            ace.Job(
                64,
                DAY,
                HOUR,
                load=ace.Mixture([(0.5, ace.Constant(30.0)), (0.5, ace.Constant(90.0))]),
            ),
            ace.Job(8, DAY, 2 * HOUR, tiers=[ace.CheckpointTier(600.0, 5.0, 20.0)]),
        ],
        "failures": [ace.BlockBootstrap(np.arange(1.0, 200.0) * 300.0, 8), ace.LogNormal(9.0, 1.2)],
        "replicas": 5,
        "seed": 2,
        "first_replica": 7,
    },
    "array": {
        "jobs": ace.JobArray(gpus=[8, 16], work=[DAY, 2 * DAY], checkpoint_interval=[HOUR, HOUR]),
        "failures": ace.Gamma(0.8, 10 * HOUR),
        "replicas": 4,
    },
    "replay": {
        "jobs": ace.Job(16, DAY, HOUR),
        "fleet": ace.Fleet(
            3, repair=HOUR, node_failures=ace.NodeTrace.from_gaps({0: [HOUR, 5 * HOUR]}, nodes=3)
        ),
        "replicas": 1,
    },
    "fleet": _fleet_call(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_result_reproduces_from_its_provenance_alone(name: str) -> None:
    """The provenance survives JSON (strict: no NaN or inf literals) and runs
    again to byte-identical tables (the fleet call's policy callback is user
    code: it is resolved with trust=True)."""
    res = ace.simulate(**CALLS[name])
    text = json.dumps(res.provenance, allow_nan=False)
    prov = json.loads(text)
    assert prov["acesim_version"] == ace.__version__
    assert (prov["seed"], prov["replicas"]) == (res.seed, res.replicas)
    again = reproduce(prov, trust=True)
    for table in ("jobs", "fleet", "trace", "events"):
        assert getattr(again, table).tobytes() == getattr(res, table).tobytes(), table
    assert again.job_names == res.job_names


def test_provenance_leaves_out_threads_and_keeps_the_rest() -> None:
    res = ace.simulate(ace.Job(8, HOUR, 600.0), ace.Exponential(HOUR), replicas=2, threads=1)
    args = rebuild(res.provenance["arguments"])
    assert "threads" not in args
    assert args["replicas"] == 2 and args["horizon"] == math.inf
    assert isinstance(args["jobs"], ace.Job) and args["jobs"].work == HOUR
    assert res.provenance["arguments"]["dict"]["horizon"] == {"float": "inf"}


def test_describe_and_rebuild_are_inverse() -> None:
    values = [
        1.5,
        -math.inf,
        (1, "a", None),
        {"k": [True, 2]},
        np.array([[1, 2], [3, 4]], dtype=np.int32),
        ace.Replacement.WAIT_REPAIR,
        ace.Weibull(0.5, 10.0),
        ace.Cause("gpu", 0.5, detect=ace.Exponential(60.0), node_down=False),
    ]
    for v in values:
        back = rebuild(json.loads(json.dumps(describe(v), allow_nan=False)))
        if isinstance(v, np.ndarray):
            assert back.dtype == v.dtype and np.array_equal(back, v)
        else:
            assert back == v or repr(back) == repr(v)
    assert math.isnan(rebuild(describe(math.nan)))


def test_what_cannot_be_described_is_named_and_refused() -> None:
    policy = ace.Policy(on_failure=ace.CompiledPolicy(LIBC_ABS))
    data = describe({"policy": policy, "f": lambda v: v})
    with pytest.raises(ValueError, match="not serialisable"):
        rebuild(data)
    assert "unserialisable" in json.dumps(data)
    with pytest.raises(ace.UntrustedNameError, match=r"refused the name 'os\.system'"):
        rebuild({"call": "os.system", "args": ["true"]})
    with pytest.raises(ValueError, match="no 'arguments'"):
        reproduce({"seed": 0})


def test_provenance_travels_with_pickle_and_sweep_chunks() -> None:
    """A pickled result keeps its provenance; a sweep's result joined from
    chunks says it has all the replicas and reproduces the whole."""
    scenario = {
        "jobs": ace.Job(64, DAY, HOUR, name="j"),
        "failures": ace.Weibull(0.7, 6 * HOUR),
        "replicas": 10,
        "seed": 9,
    }
    whole = ace.simulate(**scenario)
    assert pickle.loads(pickle.dumps(whole)).provenance == whole.provenance
    (joined,) = sweep([scenario], chunk_replicas=3)
    assert joined.result.provenance["replicas"] == 10
    assert joined.result.provenance["arguments"]["dict"]["replicas"] == 10
    assert reproduce(joined.result.provenance).jobs.tobytes() == whole.jobs.tobytes()
    assert joined.result.job_names == ("j",)


def test_sweep_chunks_keep_every_placement_and_node_event() -> None:
    """Chunks of a fleet run with the event log join to the whole run's
    placements and node events too (not only the first chunk's)."""
    scenario = dict(_fleet_call(), replicas=5)
    whole = ace.simulate(**scenario)
    (joined,) = sweep([scenario], chunk_replicas=2)
    assert whole.placements is not None and whole.node_events is not None
    assert joined.result.placements is not None and joined.result.node_events is not None
    assert joined.result.placements.tobytes() == whole.placements.tobytes()
    assert joined.result.node_events.tobytes() == whole.node_events.tobytes()
    assert set(whole.placements["replica"].tolist()) == set(range(5))


def test_with_provenance_adds_a_producers_data() -> None:
    res = ace.simulate(ace.Job(8, HOUR, 600.0), ace.Exponential(HOUR), replicas=2)
    tagged = res.with_provenance(scenario={"run": {"name": "smoke"}})
    assert tagged.provenance["scenario"] == {"run": {"name": "smoke"}}
    assert pickle.loads(pickle.dumps(tagged)).provenance == tagged.provenance
    with pytest.raises(ValueError, match="JSON data"):
        res.with_provenance(scenario={"law": ace.Exponential(1.0)})
    with pytest.raises(ValueError, match="the result's own"):
        res.with_provenance(seed=3)
    assert reproduce(tagged.provenance).jobs.tobytes() == res.jobs.tobytes()
    assert "scenario" not in res.provenance


def test_job_names_are_kept_and_joined_by_to_pandas() -> None:
    pytest.importorskip("pandas")
    jobs = [ace.Job(8, HOUR, 600.0, name="a"), ace.Job(8, HOUR, 600.0), ace.Job(8, HOUR, 600.0)]
    res = ace.simulate(jobs, ace.Exponential(HOUR), replicas=2)
    assert res.job_names == ("a", None, None)
    frame = res.to_pandas()
    assert list(frame.columns[:3]) == ["replica", "job", "name"]
    assert frame["name"].isna().tolist() == [False, True, True, False, True, True]
    assert frame["name"].iloc[0] == frame["name"].iloc[3] == "a"
    unnamed = ace.simulate(ace.Job(8, HOUR, 600.0), ace.Exponential(HOUR))
    assert "name" not in unnamed.to_pandas()


def test_fleet_model_result_records_the_calls() -> None:
    model = ace.FleetModel(ace.Fleet(2), ace.Exponential(10 * HOUR), seed=3)
    a = model.submit(ace.Job(8, HOUR, 600.0, name="a"))
    model.start(a, [1])
    model.advance(2 * HOUR)
    res = model.result()
    assert res.job_names == ("a",)
    prov = json.loads(json.dumps(res.provenance, allow_nan=False))
    calls = rebuild(prov["calls"])
    assert [name for name, _ in calls] == ["submit", "start", "advance"]
    assert calls[1][1] == (0, (1,))
    args = rebuild(prov["fleet_model"])
    assert args["seed"] == 3 and isinstance(args["fleet"], ace.Fleet)


def test_public_arrays_have_no_padding_fields() -> None:
    fleet = ace.Fleet(3, repair=HOUR, node_failures=ace.NodeTrace.from_gaps({0: [HOUR]}, nodes=3))
    res = ace.simulate(ace.Job(16, DAY, HOUR), fleet=fleet, record_events=True)
    for table in ("jobs", "fleet", "trace", "events", "placements", "node_events"):
        names = getattr(res, table).dtype.names
        assert not any(n.startswith("pad") for n in names), table
    assert res.trace.dtype.itemsize == 48 and res.placements.dtype.itemsize == 24


def test_a_batch_result_reproduces_from_its_provenance() -> None:
    jobs = [ace.Job(512, DAY, tau) for tau in (0.5 * HOUR, HOUR, 2 * HOUR)]
    res = ace.batch_simulate(jobs, ace.Weibull(0.8, 5 * HOUR), replicas=6, seed=8)
    prov = json.loads(json.dumps(res.provenance, allow_nan=False))
    assert "batch_arguments" in prov and prov["replicas"] == 6
    again = reproduce(prov)
    assert isinstance(again, ace.BatchResult)
    assert again.jobs.tobytes() == res.jobs.tobytes()
    assert pickle.loads(pickle.dumps(res)).provenance == res.provenance


def test_fleet_model_calls_record_arrivals_and_never() -> None:
    model = ace.FleetModel(ace.Fleet(2, node_failures=ace.Never()), ace.Never(), seed=3)
    model.add_jobs([ace.Job(8, HOUR, 600.0, submit=100.0), ace.Job(8, HOUR, 600.0, submit=200.0)])
    model.advance(150.0)
    prov = json.loads(json.dumps(model.result().provenance, allow_nan=False))
    calls = rebuild(prov["calls"])
    assert [name for name, _ in calls] == ["add_jobs", "advance"]
    assert [job.submit for job in calls[0][1][0]] == [100.0, 200.0]
    assert rebuild(prov["fleet_model"])["failures"] == ace.Never()
