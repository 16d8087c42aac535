"""acesim.history readers: Slurm host lists, hand-written sacct files and
event logs with known answers, malformed files, a simulated fleet written out
and read back, the real histories in ../shared/data, and random garbage."""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import acesim as ace
import numpy as np
import pytest
from acesim import history
from acesim.history import HistoryFormatError, RunState
from acesim.simulation import BUCKETS

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
HOUR = 3600.0


def same_table(a: Any, b: Any) -> bool:
    """Structured arrays equal field by field (NaN equal to NaN)."""
    return a.dtype == b.dtype and all(
        np.array_equal(a[f], b[f], equal_nan=a.dtype[f].kind == "f") for f in a.dtype.names
    )


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# node lists


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("gpu001", ["gpu001"]),
        ("gpu[001-004,007]", ["gpu001", "gpu002", "gpu003", "gpu004", "gpu007"]),
        ("a[1-2],b3", ["a1", "a2", "b3"]),
        ("node[8-11]", ["node8", "node9", "node10", "node11"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("gpu[1-2]-ib", ["gpu1-ib", "gpu2-ib"]),
        ("x[3],y[5-5]", ["x3", "y5"]),
        ("a.b_c-1,d[0]", ["a.b_c-1", "d0"]),
        ("gpu[001-002],cpu[1-2,4]", ["gpu001", "gpu002", "cpu1", "cpu2", "cpu4"]),
    ],
)
def test_expand_nodelist(text: str, names: list[str]) -> None:
    assert history.expand_nodelist(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "",
        "gpu[001-004",
        "gpu001-004]",
        "gpu[[1-2]]",
        "gpu[4-1]",
        "gpu[]",
        "gpu[1-]",
        "gpu[a-b]",
        "gpu[1:4]",
        "a,,b",
        ",a",
        "a,",
        "gpu 001",
        "gpu[1-2],[3]x]",
        "n[0-999999999]",
        "n[0-999][0-999]",
    ],
)
def test_garbled_nodelists(text: str) -> None:
    with pytest.raises(history.NodeListError):
        history.expand_nodelist(text)


def test_compress_nodelist_round_trip() -> None:
    assert history.compress_nodelist(["gpu003", "gpu001", "gpu002", "gpu007"]) == (
        "gpu[001-003,007]"
    )
    assert history.compress_nodelist(["b3", "a1", "a2"]) == "a[1-2],b3"
    assert history.compress_nodelist(["node9", "node10"]) == "node[9-10]"
    rng = np.random.default_rng(3)
    prefixes = ["gpu", "n", "rack1-n", "x", "cpu0"]
    for _ in range(300):
        names = set()
        for _ in range(int(rng.integers(1, 30))):
            prefix = prefixes[int(rng.integers(len(prefixes)))]
            width = int(rng.integers(0, 4))
            number = int(rng.integers(0, 1200))
            names.add(f"{prefix}{number:0{width}d}" if rng.random() < 0.95 else prefix)
        text = history.compress_nodelist(names)
        assert sorted(history.expand_nodelist(text)) == sorted(names), text


# ---------------------------------------------------------------------------
# sacct by hand

SACCT = """\
JobID|JobName|State|Submit|Start|End|Elapsed|NNodes|NodeList|FailedNode|AllocTRES
100|train|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T00:10:00|2024-01-01T02:10:00|02:00:00|2|gpu[001-002]|gpu002|billing=16,cpu=32,gres/gpu=16,mem=512G,node=2
100.batch|batch|CANCELLED|2024-01-01T00:00:00|2024-01-01T00:10:00|2024-01-01T02:10:00|02:00:00|1|gpu001||cpu=16,mem=256G,node=1
100.0|python|FAILED|2024-01-01T00:10:05|2024-01-01T00:10:05|2024-01-01T02:10:00|01:59:55|2|gpu[001-002]||cpu=32,gres/gpu=16,node=2
100|train|PREEMPTED|2024-01-01T02:10:00|2024-01-01T02:20:00|2024-01-01T03:20:00|01:00:00|2|gpu[001,003]||billing=16,gres/gpu=16,node=2
100|train|COMPLETED|2024-01-01T03:20:00|2024-01-01T04:00:00|2024-01-01T06:00:00|02:00:00|2|gpu[003-004]||gres/gpu=16,node=2
101_3|arr|FAILED|2024-01-01T01:00:00|2024-01-01T01:00:00|2024-01-01T01:30:00|00:30:00|1|gpu005||gres/gpu:a100=8,node=1
102|pend|PENDING|2024-01-01T05:00:00|Unknown|Unknown|00:00:00|1|None assigned||
103|cx|CANCELLED_BY|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|gpu006||gres/gpu=8,node=1
104|run|RUNNING|2024-01-01T05:00:00|2024-01-01T05:00:00|Unknown|01:00:00|1|gpu007||gres/gpu=8,node=1
""".replace("CANCELLED_BY", "CANCELLED by 1234")  # Slurm names who cancelled


def test_sacct_by_hand(tmp_path: Path) -> None:
    h = history.read_sacct(write(tmp_path, "jobs.txt", SACCT))
    assert h.job_names == ("100", "101_3", "102", "103", "104")
    assert h.origin is not None and h.origin.isoformat() == "2024-01-01T00:00:00"
    assert h.span == (0.0, 6 * HOUR)
    runs = h.runs
    assert runs.size == 6  # steps skipped, the pending job has none
    job100 = runs[runs["job"] == 0]
    assert [RunState(s).name for s in job100["state"]] == ["NODE_FAIL", "PREEMPTED", "COMPLETED"]
    assert job100["attempt"].tolist() == [0, 1, 2]
    assert h.nodes_of(int(job100["run"][1])) == ["gpu001", "gpu003"]
    assert runs["gpus"].tolist() == [16, 16, 16, 8, 8, 8]  # gres/gpu, or typed gres/gpu:a100
    run104 = runs[runs["job"] == 4][0]
    assert run104["state"] == RunState.RUNNING and run104["end"] == 6 * HOUR  # Start + Elapsed

    m = h.measured()
    assert m.available == ("wall", "held", "queue_wait", "recovery_wait")
    j = m.jobs[0]
    assert (j["runs"], j["restarts"], j["failures"], j["preemptions"]) == (3, 2, 1, 1)
    assert j["queue_wait"] == 600.0
    assert j["recovery_wait"] == 600.0 + 2400.0
    assert j["held"] == 5 * HOUR
    assert j["wall"] == 6 * HOUR == j["queue_wait"] + j["held"] + j["recovery_wait"]
    assert j["completed"] and not j["open"]
    assert math.isnan(j["productive"]) and math.isnan(j["detection"])
    assert m.jobs[2]["queue_wait"] == HOUR and m.jobs[2]["runs"] == 0  # pending to the end
    assert m.jobs[3]["cancellations"] == 1 and m.jobs[4]["open"]
    by_state = m.totals["gpu_hours_by_state"]
    assert by_state == {
        "NODE_FAIL": 32.0,
        "PREEMPTED": 16.0,
        "COMPLETED": 32.0,
        "FAILED": 4.0,
        "CANCELLED": 8.0,
        "RUNNING": 8.0,
    }
    assert m.totals["failures"] == 2
    assert m.goodput() == {
        "unsplit": pytest.approx(100.0),
        "BadputType.INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION": pytest.approx(16 * 3000 / 3600),
    }

    jobs = h.intervals("job")
    assert jobs.clock == "held"
    got = sorted(
        zip(jobs.group.tolist(), jobs.samples.tolist(), jobs.censored.tolist(), strict=True)
    )
    assert got == [
        (0, 2 * HOUR, False),  # held from 00:10 to the NODE_FAIL end at 02:10
        (0, 3 * HOUR, True),  # the preempted run and the completed one: censored
        (1, 1800.0, False),
        (3, HOUR, True),  # cancelled: censored
        (4, HOUR, True),  # still running: censored
    ]
    assert jobs.gpus[(jobs.group == 1)].tolist() == [8]

    nodes = h.intervals("node")
    assert nodes.partial and "idle nodes" in nodes.note and nodes.unattributed == 0
    gpu002 = nodes.of("gpu002")
    assert gpu002.samples.tolist() == [7800.0, 13800.0]
    assert gpu002.censored.tolist() == [False, True] and gpu002.truncated.tolist() == [True, False]
    assert nodes.of("gpu005").samples.tolist() == [5400.0, 16200.0]
    assert nodes.of("gpu004").samples.tolist() == [6 * HOUR]  # never failed: censored

    system = h.intervals("system")
    assert system.samples.tolist() == [5400.0, 2400.0, 13800.0]
    assert system.censored.tolist() == [False, False, True]

    causes = h.intervals("cause")
    assert causes.labels == ("NODE_FAIL", "FAILED")
    assert causes.of("NODE_FAIL").failures == 1 and causes.of("FAILED").failures == 1
    assert len(causes.of("FAILED")) == len(jobs)
    assert h.cause_counts() == {"NODE_FAIL": 1, "FAILED": 1}
    assert [c.name for c in h.causes()] == ["NODE_FAIL", "FAILED"]


def test_sacct_variants(tmp_path: Path) -> None:
    # --parsable (trailing |), --noheader with columns=, short states, epoch times
    text = "7|CD|1704067200|1704070800|\n8|NF|1704067200|1704068100|\n"
    h = history.read_sacct(
        write(tmp_path, "p.txt", text), columns=["JobID", "State", "Start", "End"]
    )
    assert [RunState(s).name for s in h.runs["state"]] == ["COMPLETED", "NODE_FAIL"]
    assert h.runs["end"].tolist() == [3600.0, 900.0]
    assert h.runs["gpus"].tolist() == [-1, -1]
    # gpus_per_node x NNodes when there is no GPU field; NODE_FAIL on 2 nodes: node unknown
    text = (
        "JobID|State|Start|End|NNodes|NodeList\n"
        "9|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T01:00:00|2|n[1-2]\n"
    )
    h = history.read_sacct(
        write(tmp_path, "q.txt", text),
        gpus_per_node=8,
        nodes="n[1-4]",
        span=("2024-01-01", "2024-01-02"),
    )
    assert h.runs["gpus"].tolist() == [16]
    assert h.node_names == ("n1", "n2", "n3", "n4")
    iv = h.intervals("node")
    assert iv.unattributed == 1 and iv.failures == 0
    assert iv.samples.tolist() == [86400.0] * 4
    assert "nodes that never ran" not in iv.note  # the census was given
    # failure_states: only NODE_FAIL counts
    text = (
        "JobID|State|Start|End\n"
        "1|FAILED|2024-01-01T00:00:00|2024-01-01T01:00:00\n"
        "1|COMPLETED|2024-01-01T01:00:00|2024-01-01T02:00:00\n"
    )
    h = history.read_sacct(write(tmp_path, "r.txt", text), failure_states=["NODE_FAIL"])
    assert h.failures.size == 0
    assert h.intervals("job").samples.tolist() == [2 * HOUR]


def test_sacct_with_checkpoints(tmp_path: Path) -> None:
    text = (
        "JobID|State|Start|End\n"
        "5|FAILED|2024-01-01T00:00:00|2024-01-01T03:00:00\n"
        "5|COMPLETED|2024-01-01T03:00:00|2024-01-01T05:00:00\n"
    )
    ckpts = [("5", 1 * HOUR), ("5", 2 * HOUR), ("5", 4 * HOUR), ("6", HOUR)]
    h = history.read_sacct(write(tmp_path, "s.txt", text), checkpoints=ckpts)
    m = h.measured()
    assert "kept" in m.available and "lost" in m.available
    j = m.jobs[0]
    assert j["kept"] == 2 * HOUR + 2 * HOUR and j["lost"] == HOUR
    assert j["checkpoints"] == 3
    assert m.goodput()["BadputType.WASTED_PROGRESS_FROM_DISRUPTION"] == pytest.approx(
        0.0
    )  # gpus unknown


# ---------------------------------------------------------------------------
# event log by hand

EVENTS = [
    {"time": 0, "kind": "log_start", "nodes": "n[1-4]"},
    {"time": 0, "kind": "job_submit", "job": "a", "gpus": 16},
    {"time": 60, "kind": "job_start", "job": "a", "nodes": ["n1", "n2"], "setup": 100},
    {"time": 3760, "kind": "checkpoint", "job": "a", "duration": 30, "progress": 3600},
    {"time": 5000, "kind": "job_failure", "job": "a", "nodes": ["n2"], "cause": "gpu"},
    {"time": 5000, "kind": "node_down", "node": "n2", "cause": "gpu"},
    {"time": 5060, "kind": "job_stop", "job": "a", "state": "NODE_FAIL"},
    {"time": 5100, "kind": "job_start", "job": "a", "nodes": "n[1,3]", "setup": 150},
    {"time": 9000, "kind": "node_up", "node": "n2"},
    {"time": 9000, "kind": "node_failure", "nodes": ["n4"], "cause": "psu"},
    {"time": 12000, "kind": "node_down", "node": "n1", "reason": "maintenance"},
    {"time": 12000, "kind": "job_stop", "job": "a", "state": "REQUEUED"},
    {"time": 13000, "kind": "node_up", "node": "n1"},
    {"time": 13000, "kind": "job_start", "job": "a", "nodes": ["n1", "n3"], "setup": 50},
    {"time": 16650, "kind": "checkpoint", "job": "a", "duration": 20, "progress": 7200},
    {"time": 16650, "kind": "job_stop", "job": "a", "state": "COMPLETED"},
    {"time": 20000, "kind": "log_end"},
]


def test_events_by_hand(tmp_path: Path) -> None:
    # lines in any order of time; events at the same time keep the file's order
    text = "".join(json.dumps(e) + "\n" for e in EVENTS[12:] + EVENTS[:12])
    h = history.read_events(write(tmp_path, "log.jsonl", text))
    assert h.span == (0.0, 20000.0) and h.origin is None
    assert h.node_names == ("n1", "n2", "n3", "n4")
    assert {"fault_times", "setup", "checkpoint_durations", "node_spells", "node_census"} <= h.knows
    assert [RunState(s).name for s in h.runs["state"]] == ["NODE_FAIL", "REQUEUED", "COMPLETED"]
    assert h.runs["fault"][0] == 5000.0
    m = h.measured()
    assert set(m.available) == {
        "wall",
        "held",
        "queue_wait",
        "recovery_wait",
        "kept",
        "lost",
        "productive",
        "wasted",
        "ckpt_stall",
        "overhead",
        "detection",
    }
    j = m.jobs[0]
    # run 1: 60-5060, setup 100, checkpoint at 3760 (30 s), fault 5000, stop 5060
    # run 2: 5100-12000, setup 150, no checkpoint: all of it after the setup is wasted
    # run 3: 13000-16650, setup 50, final checkpoint 20 s
    assert j["held"] == 5000 + 6900 + 3650
    assert j["detection"] == 60
    assert j["overhead"] == 100 + 150 + 50
    assert j["ckpt_stall"] == 50
    assert j["wasted"] == (5000 - 3760) + (12000 - 5250)
    assert (
        j["productive"]
        == j["held"] - j["wasted"] - j["detection"] - j["overhead"] - j["ckpt_stall"]
    )
    assert j["productive"] == (3760 - 160 - 30) + (16650 - 13050 - 20)
    assert j["kept"] == (3760 - 60) + 0 + 3650 and j["lost"] == j["held"] - j["kept"]
    assert j["queue_wait"] == 60 and j["recovery_wait"] == 40 + 1000
    assert (j["failures"], j["requeues"], j["checkpoints"]) == (1, 1, 2)

    jobs = h.intervals("job")  # the requeue does not renew the job's clock
    assert jobs.samples.tolist() == [4940.0, 6900.0 + 3650.0]
    assert jobs.censored.tolist() == [False, True]

    nodes = h.intervals("node")
    assert not nodes.partial and nodes.clock == "in_service"
    n2 = nodes.of("n2")
    assert n2.samples.tolist() == [5000.0, 11000.0] and n2.censored.tolist() == [False, True]
    n1 = nodes.of("n1")  # the maintenance drain censors, the return restarts the clock
    assert n1.samples.tolist() == [12000.0, 7000.0] and n1.censored.tolist() == [True, True]
    assert nodes.of("n4").samples.tolist() == [9000.0, 11000.0]
    assert nodes.of("n3").samples.tolist() == [20000.0]
    assert h.node_spells.size == 2
    assert h.cause_counts() == {"gpu": 1, "psu": 1}

    # the same log as CSV
    rows = ["time,kind,job,nodes,gpus,cause,state,reason,setup,duration,progress"]
    for e in EVENTS:
        nodes_value = e.get("nodes", e.get("node", ""))
        if isinstance(nodes_value, list):
            nodes_value = history.compress_nodelist(nodes_value)
        cells = [
            e["time"],
            e["kind"],
            e.get("job", ""),
            f'"{nodes_value}"',
            e.get("gpus", ""),
            e.get("cause", ""),
            e.get("state", ""),
            e.get("reason", ""),
            e.get("setup", ""),
            e.get("duration", ""),
            e.get("progress", ""),
        ]
        rows.append(",".join(str(c) for c in cells))
    hc = history.read_events(write(tmp_path, "log.csv", "\n".join(rows) + "\n"))
    assert same_table(hc.runs, h.runs)
    assert same_table(hc.measured().jobs, m.jobs)


def test_documented_example_reads(tmp_path: Path) -> None:
    doc = history._events.__doc__ or ""
    lines = [ln.strip() for ln in doc.split("Example::")[1].splitlines() if ln.strip()[:1] == "{"]
    h = history.read_events(write(tmp_path, "doc.jsonl", "\n".join(lines) + "\n"))
    m = h.measured()
    assert m.jobs["failures"][0] == 1 and m.jobs["detection"][0] == 60.0
    assert m.jobs["held"][0] == (5060 - 60) + (90000 - 5060)
    assert h.intervals("node").of("node004").samples.tolist() == [5000.0, 81000.0]


@pytest.mark.parametrize(
    ("reader", "text", "line", "field"),
    [
        (history.read_titan_lifetimes, "gpu_sn,batch,failed,failure_mode\n", 1, "service_time_s"),
        (
            history.read_titan_lifetimes,
            "gpu_sn,batch,service_time_s,failed,failure_mode\n1,old,-5,0,\n",
            2,
            "service_time_s",
        ),
        (
            history.read_titan_lifetimes,
            "gpu_sn,batch,service_time_s,failed,failure_mode\n1,old,5,yes,\n",
            2,
            "failed",
        ),
        (
            history.read_titan_interfailure,
            "event_time,event_type\n2014-02-30 00:00:00,DBE\n",
            2,
            "event_time",
        ),
        (
            history.read_titan_interfailure,
            "event_time,event_type\n2014-02-03 00:00:00,DBE\n2014-02-01 00:00:00,DBE\n",
            3,
            "event_time",
        ),
        (
            history.read_lanl_systems,
            "system,nodes,prob_started,node,cause,downtime_min\n20,512,2002-01-01 00:00,512,,5\n",
            2,
            "node",
        ),
        (
            history.read_lanl_systems,
            "system,nodes,prob_started,node,cause,downtime_min\n20,9999999,2002-01-01 00:00,1,,5\n",
            2,
            "nodes",
        ),
        (
            history.read_lanl_nodes,
            "node,prob_started,inter_failure_s\n1,later,5\n",
            2,
            "prob_started",
        ),
        (history.read_philly, "job_id,num_gpus,attempt,attempt_runtime_s\n,8,1,74\n", 2, "job_id"),
        (
            history.read_bamboo_lifetimes,
            "trace,node,add_s,remove_s,lifetime_s,preempted\np3,n1,10,5,5,1\n",
            2,
            "remove_s",
        ),
        (history.read_bamboo_preemptions, "n_preempted,gap_s\n1,\n", 1, "t_s"),
        (history.read_llama3_causes, "component,category,count\nGPU,GPU,many\n", 2, "count"),
        (history.read_acme_states, "cluster\nSeren\n", 1, "gpu_job_num"),
        (history.read_titan_lifetimes, "", None, None),
    ],
)
def test_malformed_shared_files(
    tmp_path: Path, reader: Callable[[Path], Any], text: str, line: int | None, field: str | None
) -> None:
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(HistoryFormatError) as info:
        reader(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_events_iso_times_and_origin(tmp_path: Path) -> None:
    events = [
        {"time": "2024-03-01T00:00:00", "kind": "job_start", "job": 1},
        {"time": "2024-03-01T00:30:00.5", "kind": "job_stop", "job": 1, "state": "FAILED"},
        {"time": "2024-03-01T01:00:00", "kind": "job_start", "job": 1},
    ]
    path = write(tmp_path, "iso.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    h = history.read_events(path)
    assert h.origin is not None and h.origin.isoformat() == "2024-03-01T00:00:00"
    assert h.runs["end"].tolist() == [1800.5, 3600.0]  # the open run ends with the log
    assert "fault_times" not in h.knows  # a FAILED stop without its job_failure
    assert math.isnan(h.measured().jobs[0]["detection"])
    h2 = history.read_events(path, origin="2024-02-29T23:00:00")
    assert h2.runs["start"][0] == HOUR


def test_correlated_failure_origin(tmp_path: Path) -> None:
    # a switch takes two jobs down: only the job holding the origin node failed on its own
    events = [
        {"time": 0, "kind": "log_start", "nodes": ["a", "b", "c"]},
        {"time": 0, "kind": "job_start", "job": "x", "nodes": ["a"]},
        {"time": 0, "kind": "job_start", "job": "y", "nodes": ["b"]},
        {
            "time": 100,
            "kind": "job_failure",
            "job": "x",
            "nodes": ["a"],
            "origin": "b",
            "failure": 7,
        },
        {
            "time": 100,
            "kind": "job_failure",
            "job": "y",
            "nodes": ["b"],
            "origin": "b",
            "failure": 7,
        },
        {"time": 100, "kind": "job_stop", "job": "x", "state": "FAILED"},
        {"time": 100, "kind": "job_stop", "job": "y", "state": "FAILED"},
        {"time": 150, "kind": "job_start", "job": "x", "nodes": ["a"]},
        {"time": 150, "kind": "job_start", "job": "y", "nodes": ["b"]},
        {"time": 300, "kind": "job_stop", "job": "x", "state": "COMPLETED"},
        {"time": 300, "kind": "job_stop", "job": "y", "state": "COMPLETED"},
    ]
    h = history.read_events(
        write(tmp_path, "c.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    )
    assert h.measured().jobs["failures"].tolist() == [1, 1]  # both interrupted
    jobs = h.intervals("job")
    assert jobs.of("x").samples.tolist() == [250.0] and jobs.of("x").censored.tolist() == [True]
    assert jobs.of("y").samples.tolist() == [100.0, 150.0]
    nodes = h.intervals("node")
    assert nodes.of("a").failures == 0 and nodes.of("b").failures == 1
    assert np.unique(h.failures["event"]).size == 1 and h.intervals("system").failures == 1


# ---------------------------------------------------------------------------
# malformed files

SACCT_HEADER = "JobID|State|Submit|Start|End|NNodes|NodeList\n"
GOOD = "1|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|1|n1\n"


@pytest.mark.parametrize(
    ("text", "line", "field", "match"),
    [
        ("", None, None, "empty"),
        ("\n\n  \n", None, None, "empty"),
        (b"JobID|State\n\xff\xfe\n", 2, None, "UTF-8"),
        ("1|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00\n", 1, "JobID", "header"),
        ("JobID|State|Start\n1|COMPLETED|2024-01-01T00:00:00\n", 1, "End", "missing"),
        ("JobID|JobID|State|Start|End\n", 1, "JobID", "twice"),
        (SACCT_HEADER + "1|COMPLETED|2024-01-01\n", 2, None, "fields"),
        (SACCT_HEADER + GOOD.replace("COMPLETED", "EXPLODED"), 2, "State", "unknown job state"),
        (
            SACCT_HEADER + GOOD.replace("2024-01-01T01:00:00", "2024-13-01T01:00:00"),
            2,
            "End",
            "not a valid time",
        ),
        (SACCT_HEADER + GOOD.replace("2024-01-01T01:00:00", "yesterday"), 2, "End", "not a time"),
        (
            SACCT_HEADER + GOOD.replace("2024-01-01T01:00:00", "2023-12-31T23:00:00"),
            2,
            "End",
            "before Start",
        ),
        (
            SACCT_HEADER
            + "1|COMPLETED|2024-01-01T02:00:00|2024-01-01T00:00:00|2024-01-01T03:00:00|1|n1\n",
            2,
            "Start",
            "before Submit",
        ),
        (SACCT_HEADER + GOOD.replace("2024-01-01T01:00:00", "Unknown"), 2, "End", "unknown"),
        (
            SACCT_HEADER + "1|FAILED|2024-01-01T00:00:00|Unknown|2024-01-01T01:00:00|1|n1\n",
            2,
            "Start",
            "no Start",
        ),
        (SACCT_HEADER + GOOD.replace("|n1", "|n[1-"), 2, "NodeList", "garbled"),
        (SACCT_HEADER + GOOD.replace("|n1", "|n[3-1]"), 2, "NodeList", "backwards"),
        (SACCT_HEADER + GOOD.replace("|1|n1", "|3|n[1-2]"), 2, "NodeList", "NNodes says 3"),
        (SACCT_HEADER + GOOD.replace("|1|n1", "|x|n1"), 2, "NNodes", "not a count"),
        (SACCT_HEADER + GOOD.replace("|n1", "|n1,n1"), 2, "NodeList", "twice"),
        (SACCT_HEADER + "abc|COMPLETED|||||\n", 2, "JobID", "not a Slurm job id"),
        (
            SACCT_HEADER
            + GOOD
            + GOOD.replace("T00:00:00|2024-01-01T01", "T00:30:00|2024-01-01T01"),
            3,
            "Start",
            "starts before",
        ),
        (SACCT_HEADER + "1.batch|COMPLETED|||||\n", None, None, "no job lines"),
    ],
)
def test_malformed_sacct(
    tmp_path: Path, text: str | bytes, line: int | None, field: str | None, match: str
) -> None:
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(HistoryFormatError, match=match) as info:
        history.read_sacct(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert str(path) in str(err)


def test_malformed_sacct_fields(tmp_path: Path) -> None:
    header = "JobID|State|Start|End|NodeList|FailedNode|AllocTRES\n"
    cases = [
        (
            "1|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T01:00:00|n[1-2]|n3|gres/gpu=8\n",
            "FailedNode",
        ),
        ("1|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|n1||gres/gpu=x\n", "AllocTRES"),
        ("1|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|n1||gpu\n", "AllocTRES"),
    ]
    for text, field in cases:
        with pytest.raises(HistoryFormatError) as info:
            history.read_sacct(write(tmp_path, "f.txt", header + text))
        assert (info.value.line, info.value.field) == (2, field)
    text = "JobID|State|Start|End|Elapsed\n1|RUNNING|2024-01-01T00:00:00|Unknown|1:2:3:4\n"
    with pytest.raises(HistoryFormatError) as info:
        history.read_sacct(write(tmp_path, "g.txt", text))
    assert (info.value.line, info.value.field) == (2, "Elapsed")


def _jsonl(events: list[Any]) -> str:
    return "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events)


START = {"time": 0, "kind": "job_start", "job": "a"}


@pytest.mark.parametrize(
    ("events", "line", "field", "match"),
    [
        (["{not json"], 1, None, "not a JSON object"),
        (["[1, 2]"], 1, None, "not a JSON object"),
        (["[" * 100000 + "]" * 100000], 1, None, "not a JSON object"),
        ([{"time": 0}], 1, "kind", "missing"),
        ([{"time": 0, "kind": "job_explode", "job": "a"}], 1, "kind", "unknown event kind"),
        ([{"kind": "job_start", "job": "a"}], 1, "time", "missing"),
        ([{"time": "soon", "kind": "job_start", "job": "a"}], 1, "time", "not a time"),
        ([{"time": True, "kind": "job_start", "job": "a"}], 1, "time", "not a time"),
        (
            [START, {"time": "2024-01-01", "kind": "job_stop", "job": "a", "state": "COMPLETED"}],
            2,
            "time",
            "mixes",
        ),
        ([{"time": 0, "kind": "job_start"}], 1, "job", "needs its job"),
        ([START, {"time": 1, "kind": "job_start", "job": "a"}], 2, "job", "starts while"),
        (
            [{"time": 0, "kind": "job_stop", "job": "a", "state": "COMPLETED"}],
            1,
            "job",
            "outside a run",
        ),
        (
            [START, {"time": 9, "kind": "job_stop", "job": "a", "state": "DONE"}],
            2,
            "state",
            "unknown stop state",
        ),
        ([START, {"time": 9, "kind": "job_stop", "job": "a"}], 2, "state", "unknown stop state"),
        ([{"time": 5, "kind": "checkpoint", "job": "a"}], 1, "job", "outside a run"),
        ([{"time": 5, "kind": "job_failure", "job": "a"}], 1, "job", "outside a run"),
        (
            [
                START,
                {"time": 5, "kind": "job_failure", "job": "a"},
                {"time": 6, "kind": "job_stop", "job": "a", "state": "COMPLETED"},
            ],
            3,
            "state",
            "after a job_failure",
        ),
        ([{"time": 0, "kind": "job_start", "job": "a", "nodes": "n[1-"}], 1, "nodes", "garbled"),
        (
            [{"time": 0, "kind": "job_start", "job": "a", "nodes": {"n": 1}}],
            1,
            "nodes",
            "not a list",
        ),
        ([{"time": 0, "kind": "job_start", "job": "a", "setup": -1}], 1, "setup", "out of range"),
        ([{"time": 0, "kind": "job_start", "job": "a", "gpus": 1.5}], 1, "gpus", "whole number"),
        ([{"time": 1e300, "kind": "job_start", "job": "a"}], 1, "time", "out of range"),
        (
            [
                {"time": 0, "kind": "node_down", "node": "n1"},
                {"time": 1, "kind": "node_down", "node": "n1"},
            ],
            2,
            "node",
            "while it is down",
        ),
        (
            [
                {"time": 0, "kind": "node_up", "node": "n1"},
                {"time": 1, "kind": "node_up", "node": "n1"},
            ],
            2,
            "node",
            "while it is up",
        ),
        ([{"time": 0, "kind": "node_down"}], 1, "nodes", "needs its node"),
        (
            [{"time": 0, "kind": "node_down", "node": "n1", "reason": "tired"}],
            1,
            "reason",
            "unknown reason",
        ),
        (
            [{"time": 0, "kind": "log_end"}, {"time": 1, "kind": "job_start", "job": "a"}],
            2,
            "time",
            "after log_end",
        ),
        (
            [
                START,
                {"time": 0, "kind": "job_submit", "job": "a"},
                {"time": 1, "kind": "job_submit", "job": "a"},
            ],
            3,
            "job",
            "twice",
        ),
    ],
)
def test_malformed_events(
    tmp_path: Path, events: list[Any], line: int, field: str | None, match: str
) -> None:
    path = write(tmp_path, "bad.jsonl", _jsonl(events))
    with pytest.raises(HistoryFormatError, match=match) as info:
        history.read_events(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("", None, None),
        ("time,job\n0,a\n", 1, "kind"),
        ("time,kind,job\n0,job_start\n", 2, None),
        ("time,kind,job\n0,job_start,a\nx,job_stop,a\n", 3, "time"),
        ("time,kind,job\n", None, None),
        ('time,kind,job,nodes\n0,job_start,a,"n[1-"\n', 2, "nodes"),
        ("time,kind,job\n0,job_start,a\0\n", 2, "job"),
    ],
)
def test_malformed_event_csv(
    tmp_path: Path, text: str, line: int | None, field: str | None
) -> None:
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(HistoryFormatError) as info:
        history.read_events(path)
    assert (info.value.line, info.value.field) == (line, field)


def test_format_error_pickles() -> None:
    import pickle

    err = HistoryFormatError("f.txt", 4, "End", "End is before Start")
    back = pickle.loads(pickle.dumps(err))
    assert (back.path, back.line, back.field, str(back)) == ("f.txt", 4, "End", str(err))


# ---------------------------------------------------------------------------
# round trip: a simulated fleet written out and read back


#: The result's buckets a history measures (a log has no narrow bucket).
MEASURED_BUCKETS = tuple(b for b in BUCKETS if b != "narrow")


def _fleet_run(*, job_level: bool, seed: int) -> tuple[Any, list[Any], int]:
    causes = [
        ace.Cause("gpu", 3, detect=60.0, node_down=True),
        ace.Cause("software", 1, detect=120.0, node_down=False),
        ace.Cause("switch", 1, detect=0.0, node_down=True, nodes=2),
    ]
    nodes = 12
    fleet = ace.Fleet(
        nodes,
        spares=1,
        repair=ace.Exponential(4 * HOUR),
        node_failures=None if job_level else ace.Weibull(1.3, 2 * 86400.0),
        node_start="fresh",
        maintenance=[(1.5 * 86400.0, 3 * HOUR, [0, 1])],
    )
    jobs = [
        ace.Job(
            16,
            work=1.5 * 86400,
            checkpoint_interval=HOUR,
            init=60,
            save=30,
            load=45,
            tiers=[ace.CheckpointTier(600.0, 2.0, 3.0)],  # a local tier lost with its node
        ),
        ace.Job(
            24,
            work=86400,
            checkpoint_interval=2 * HOUR,
            submit=1800,
            priority=1,
            save=20,
            load=10,
            time_limit=10 * HOUR,
        ),
        ace.Job(
            32,
            work=0.5 * 86400,
            checkpoint_interval=HOUR,
            submit=3 * HOUR,
            priority=2,
            init=30,
            save=15,
            load=15,
        ),
        ace.Job(8, work=0.3 * 86400, checkpoint_interval=HOUR, submit=HOUR),
    ]
    res = ace.simulate(
        jobs,
        failures=ace.Exponential(8 * HOUR) if job_level else None,
        fleet=fleet,
        policy=ace.Policy(replacement=ace.Replacement.PREEMPT_LOWER),
        causes=causes,
        seed=seed,
        record_events=True,
    )
    return res, causes, nodes


def _check_round_trip(res: Any, h_events: history.History, h_sacct: history.History) -> None:
    rows = res.jobs
    for h, exact in ((h_events, True), (h_sacct, False)):
        m = h.measured()
        for r in rows:
            j = h.job_names.index(str(int(r["job"])))
            got = m.jobs[j]
            for field in ("failures", "preemptions", "timeouts", "restarts"):
                assert int(got[field]) == int(r[field]), (field, int(r["job"]))
            assert int(got["runs"]) == int(r["restarts"]) + 1
            assert int(got["requeues"]) == int(r["planned_interruptions"])
            if exact:
                for field in (*MEASURED_BUCKETS, "wall"):
                    assert got[field] == pytest.approx(float(r[field]), rel=1e-12, abs=1e-6), field
                assert int(got["checkpoints"]) == int(r["checkpoints"])
            else:  # sacct keeps whole seconds
                for field in ("wall", "queue_wait", "recovery_wait"):
                    assert abs(float(got[field]) - float(r[field])) <= 1.0 * (
                        int(r["restarts"]) + 1
                    )
                held = sum(
                    float(r[b])
                    for b in ("productive", "wasted", "ckpt_stall", "overhead", "detection")
                )
                assert abs(float(got["held"]) - held) <= 1.0 * (int(r["restarts"]) + 1)
        assert m.totals["failures"] == int(rows["failures"].sum())
    # failures: every trace event, at its time, on its nodes
    trace = res.trace
    times = {}
    for ev, t in zip(
        h_events.failures["event"].tolist(), h_events.failures["time"].tolist(), strict=True
    ):
        times.setdefault(ev, t)
    assert sorted(times.values()) == sorted(set(trace["time"].tolist()))
    fail_nodes = {h_events.node_names[n] for n in h_events.failures["node"].tolist()}
    assert fail_nodes == {f"node{n:03d}" for n in trace["node"].tolist()} | {
        f"node{n:03d}" for n in res.node_events["node"][res.node_events["kind"] == 0].tolist()
    }
    # runs: every start's nodes as placed
    placed = sorted(
        zip(
            res.placements["job"].tolist(),
            res.placements["time"].tolist(),
            res.placements["node"].tolist(),
            strict=True,
        )
    )
    got_runs = sorted(
        (int(h_events.job_names[int(r["job"])]), float(r["start"]), int(h_events.node_names[n][4:]))
        for r in h_events.runs
        for n in h_events.run_nodes["node"][h_events.run_nodes["run"] == r["run"]].tolist()
    )
    assert got_runs == placed
    assert h_sacct.runs.size == h_events.runs.size


def _first_rows(trace: Any) -> dict[int, Any]:
    first: dict[int, Any] = {}
    for row in trace:
        first.setdefault(int(row["event"]), row)
    return first


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_round_trip_node_failures(tmp_path: Path, seed: int) -> None:
    res, causes, nodes = _fleet_run(job_level=False, seed=seed)
    assert (
        res.trace.size > 5 and int(res.jobs["preemptions"].sum() + res.jobs["timeouts"].sum()) >= 0
    )
    history.write_events(res, tmp_path / "log.jsonl", causes=causes, nodes=nodes)
    history.write_events(res, tmp_path / "log.csv", causes=causes, nodes=nodes)
    history.write_sacct(res, tmp_path / "sacct.txt", nodes=nodes)
    he = history.read_events(tmp_path / "log.jsonl")
    hc = history.read_events(tmp_path / "log.csv")
    hs = history.read_sacct(
        tmp_path / "sacct.txt",
        origin=history.DEFAULT_EPOCH,
        nodes=[f"node{i:03d}" for i in range(nodes)],
    )
    assert same_table(he.runs, hc.runs)
    # CSV host lists come back sorted: the same rows in another order within a failure
    assert same_table(
        np.sort(he.failures, order=["event", "node"]), np.sort(hc.failures, order=["event", "node"])
    )
    _check_round_trip(res, he, hs)
    # node samples are the node failure processes' draws (each event once, on its origin)
    iv = he.intervals("node")
    want = sorted(round(float(r["inter_failure"]), 6) for r in _first_rows(res.trace).values())
    assert sorted(np.round(iv.samples[~iv.censored], 6).tolist()) == want
    assert not iv.partial
    assert iv.failures == len(_first_rows(res.trace))
    # the causes are the simulation's
    names = [c.name for c in causes]
    counts = he.cause_counts()
    for row in _first_rows(res.trace).values():
        assert names[int(row["cause"])] in counts
    assert sum(counts.values()) == len(_first_rows(res.trace))
    # sacct: node samples are partial, failures at the runs' ends
    ivs = hs.intervals("node")
    assert ivs.partial and ivs.failures <= iv.failures
    # sacct with the log's checkpoints: held time kept and lost as the log says
    hk = history.read_sacct(
        tmp_path / "sacct.txt", origin=history.DEFAULT_EPOCH, checkpoints=tmp_path / "log.jsonl"
    )
    mk, me = hk.measured(), he.measured()
    assert {"kept", "lost"} <= set(mk.available)
    order = [he.job_names.index(name) for name in hk.job_names]
    assert mk.jobs["checkpoints"].tolist() == me.jobs["checkpoints"][order].tolist()
    tol = 1.0 * hk.runs.size  # whole seconds
    assert np.allclose(mk.jobs["kept"] + mk.jobs["lost"], mk.jobs["held"])
    # sacct cannot tell that a local-tier checkpoint died with its node (the event log's
    # stop progress does): it keeps as much or more, never less
    assert np.all(mk.jobs["kept"] >= me.jobs["kept"][order] - tol)
    plain = [j for j in range(len(hk.job_names)) if hk.job_names[j] != "0"]  # no tiers
    assert np.allclose(mk.jobs["kept"][plain], me.jobs["kept"][order][plain], atol=tol)


@pytest.mark.parametrize("seed", [4, 5])
def test_round_trip_job_failures(tmp_path: Path, seed: int) -> None:
    res, causes, nodes = _fleet_run(job_level=True, seed=seed)
    history.write_events(res, tmp_path / "log.jsonl", causes=causes, nodes=nodes)
    history.write_sacct(res, tmp_path / "sacct.txt", nodes=nodes)
    he = history.read_events(tmp_path / "log.jsonl")
    hs = history.read_sacct(tmp_path / "sacct.txt", origin="2024-01-01T00:00:00")
    _check_round_trip(res, he, hs)
    # job samples are the job-level law's draws (held seconds), each event once
    iv = he.intervals("job")
    first = _first_rows(res.trace)
    want = sorted(round(float(r["inter_failure"]), 6) for r in first.values() if int(r["job"]) >= 0)
    assert sorted(np.round(iv.samples[~iv.censored], 6).tolist()) == want
    # every job's last sample is censored unless its last run failed
    m = he.measured()
    assert iv.censored.sum() == int(np.sum(m.jobs["completed"]))
    # the samples cover every run up to its fault: all held time but the detections
    assert iv.exposure == pytest.approx(float(np.sum(m.jobs["held"] - m.jobs["detection"])))
    # sacct cannot tell a failure from one that arose elsewhere, nor the fault from its
    # detection: every failed run ends a sample, and the samples cover all held time
    ivs = hs.intervals("job")
    assert ivs.failures == int(res.jobs["failures"].sum()) >= iv.failures
    assert ivs.exposure == pytest.approx(float(np.sum(hs.measured().jobs["held"])))


def test_round_trip_horizon_and_epoch(tmp_path: Path) -> None:
    fleet = ace.Fleet(
        4, repair=ace.Exponential(HOUR), node_failures=ace.Exponential(86400.0), node_start="fresh"
    )
    jobs = [
        ace.Job(32, work=10 * 86400, checkpoint_interval=HOUR, save=10, load=10),
        ace.Job(32, work=HOUR, checkpoint_interval=HOUR, submit=HOUR, priority=-1),  # never runs
    ]
    res = ace.simulate(jobs, fleet=fleet, seed=9, record_events=True, horizon=3 * 86400)
    assert res.jobs["status"].tolist() == [ace.JobStatus.RUNNING, ace.JobStatus.QUEUED]
    history.write_sacct(res, tmp_path / "s.txt", node_names=[f"gpu{i + 1:02d}" for i in range(4)])
    history.write_events(res, tmp_path / "e.jsonl", epoch=history.DEFAULT_EPOCH)
    text = (tmp_path / "s.txt").read_text().splitlines()
    assert text[0] == "|".join(history.SACCT_FIELDS)
    still = text[-2].split("|")
    assert (still[2], still[5]) == ("RUNNING", "Unknown") and "gpu[01-04]" in still
    assert text[-1].split("|")[:5] == ["1", "job1", "PENDING", "2024-01-01T01:00:00", "Unknown"]
    hs = history.read_sacct(tmp_path / "s.txt", origin="2024-01-01T00:00:00")
    assert hs.runs["end"][-1] == 3 * 86400  # Start + Elapsed
    he = history.read_events(tmp_path / "e.jsonl", origin="2024-01-01T00:00:00")
    assert he.span == (0.0, 3 * 86400)
    assert RunState(int(he.runs["state"][-1])) == RunState.RUNNING
    last = he.intervals("job")
    assert bool(last.censored[-1])
    for h in (he, hs):
        m = h.measured()
        assert m.jobs["open"][0]
        assert m.jobs["queue_wait"][1] == res.jobs["queue_wait"][1]
        assert m.jobs["wall"][1] == res.jobs["wall"][1] and m.jobs["runs"][1] == 0
        assert h.jobs["waiting"].tolist() == [False, True]


def test_round_trip_async_checkpoints(tmp_path: Path) -> None:
    # a background persist: the log says when each checkpoint's state was taken and leaves
    # its stall unknown, so the buckets that need it are NaN rather than wrong
    fleet = ace.Fleet(
        6, spares=1, repair=ace.Exponential(2 * HOUR), node_failures=ace.Exponential(86400.0)
    )
    job = ace.Job(32, work=2 * 86400, checkpoint_interval=HOUR, save=20, load=30, persist=300.0)
    res = ace.simulate(job, fleet=fleet, seed=4, record_events=True)
    assert res.jobs["failures"][0] > 0
    history.write_events(res, tmp_path / "a.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    ckpts = [e for e in lines if e["kind"] == "checkpoint"]
    assert ckpts and all("taken" in e and "duration" not in e for e in ckpts)
    assert all(e["time"] - e["taken"] >= 300.0 - 1e-9 for e in ckpts)
    h = history.read_events(tmp_path / "a.jsonl")
    m = h.measured()
    assert {"kept", "lost", "detection", "overhead", "queue_wait", "recovery_wait"} <= set(
        m.available
    )
    assert not {"productive", "wasted", "ckpt_stall"} & set(m.available)
    row, got = res.jobs[0], m.jobs[0]
    for field in ("overhead", "detection", "queue_wait", "recovery_wait", "wall"):
        assert got[field] == pytest.approx(float(row[field]), abs=1e-6), field
    assert got["kept"] + got["lost"] == pytest.approx(got["held"])
    assert int(got["failures"]) == int(row["failures"])


def test_writers_need_the_event_log(tmp_path: Path) -> None:
    res = ace.simulate(ace.Job(8, work=HOUR, checkpoint_interval=HOUR), seed=1)
    with pytest.raises(ValueError, match="record_events"):
        history.write_sacct(res, tmp_path / "x.txt")
    with pytest.raises(TypeError):
        history.write_events(object(), tmp_path / "x.jsonl")


# ---------------------------------------------------------------------------
# the real histories in ../shared/data


def shared(name: str) -> Path:
    filename = history.SHARED_DATA[name][0]
    path = DATA_DIR / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared data folder is not next to this checkout)")
    return path


def test_titan_lifetimes() -> None:
    h = history.read_titan_lifetimes(shared("titan_lifetimes"))
    iv = h.intervals("node")
    assert len(iv) == 30207 and iv.failures == 5089
    assert set(h.intervals("cause").labels) == {"DBE", "OTB"}
    assert h.cause_counts() == {"DBE": 3603, "OTB": 1486}
    old = history.read_titan_lifetimes(shared("titan_lifetimes"), batch="old").intervals("node")
    shape, _ = ace.fit.weibull_mle(old.samples, old.censored)
    assert 2.4 < shape < 2.9  # wear-out (README: about 2.6)


def test_titan_interfailure() -> None:
    h = history.read_titan_interfailure(shared("titan_interfailure"))
    iv = h.intervals("system")
    assert iv.failures == 6366 and iv.clock == "wall"
    csv_gaps = np.loadtxt(shared("titan_interfailure"), delimiter=",", skiprows=2, usecols=2)
    assert np.allclose(iv.samples, csv_gaps)
    assert set(h.cause_counts()) == {"DBE", "OTB"}


def test_lanl_systems() -> None:
    h = history.read_lanl_systems(shared("lanl_systems"))
    assert h.system_names == ("2", "16", "18", "19", "20")
    assert len(h.node_names) == 49 + 16 + 1024 + 1024 + 512
    assert np.unique(h.failures["event"]).size == 19543
    nodes = h.intervals("node")
    assert nodes.clock == "in_service" and nodes.failures > 19000
    assert nodes.samples.min() >= 0
    s20 = history.read_lanl_systems(shared("lanl_systems"), system=20)
    assert s20.system_names == ("20",) and len(s20.node_names) == 512
    gaps = s20.intervals("system")
    assert gaps.failures == 2478 - 1
    counts = h.cause_counts()
    assert counts["Hardware"] == 12077 and counts["unknown"] == 324
    assert {c.name for c in h.causes()} == set(counts) - {"unknown"}


def test_lanl_nodes() -> None:
    iv = history.read_lanl_nodes(shared("lanl_nodes")).intervals("node")
    assert len(iv) == 2078 and len(iv.labels) == 323 and iv.partial


def test_philly() -> None:
    h = history.read_philly(shared("philly"))
    iv = h.intervals("job")
    assert iv.failures == 1456
    if (DATA_DIR / "philly_pass_jobs_ge2gpu.csv").exists():
        assert len(iv) - iv.failures == 3034
        assert not iv.partial
    assert set(iv.gpus.tolist()) <= set(range(2, 200))
    alone = history.read_philly(shared("philly"), passed=None)
    assert alone.intervals("job").failures == 1456


def test_philly_timeline_is_the_files_sums() -> None:
    """The timeline's measured buckets are the files' own sums, computed
    here with the csv module: lost = the interrupted attempts' GPU-hours,
    kept = the final attempts', recovery_wait = the restart gaps'."""
    import csv

    passed_path = DATA_DIR / "philly_pass_jobs_ge2gpu.csv"
    if not passed_path.exists():
        pytest.skip("../shared/data/philly_pass_jobs_ge2gpu.csv is absent")
    with shared("philly").open() as f:
        attempts = list(csv.DictReader(f))
    with passed_path.open() as f:
        passed = list(csv.DictReader(f))
    lost = math.fsum(float(a["attempt_runtime_s"]) * int(a["num_gpus"]) for a in attempts)
    gaps = math.fsum(float(a["restart_gap_s"]) * int(a["num_gpus"]) for a in attempts)
    held = math.fsum(float(p["sum_attempt_s"]) * int(p["num_gpus"]) for p in passed)
    h = history.read_philly(shared("philly"))
    assert h.runs.size == len(attempts) + len(passed)
    assert np.unique(h.failures["event"]).size == len(attempts)
    t = h.measured().totals
    assert t["lost_gpu_hours"] == pytest.approx(lost / 3600, rel=1e-12)
    assert t["kept_gpu_hours"] == pytest.approx((held - lost) / 3600, rel=1e-12)
    assert t["recovery_wait_gpu_hours"] == pytest.approx(gaps / 3600, rel=1e-12)
    assert t["failures"] == len(attempts) and t["jobs"] == len(passed)
    first = min(p["submitted_time"] for p in passed)
    assert h.origin is not None and h.origin.isoformat(sep=" ") == first
    assert h.span[0] == 0.0 and h.runs["start"].min() == 0.0
    model = h.to_model()
    assert model["fleet"].node_failures is None and model["failures"] is not None
    assert [c.node_down for c in model["causes"]] == [False]


PHILLY_ATTEMPTS = (
    "job_id,num_gpus,size_class,attempt,attempt_runtime_s,restart_gap_s\n"
    "a,8,5-8,1,100,20\n"
    "a,8,5-8,2,50,30\n"
)
PHILLY_PASSED = (
    "job_id,submitted_time,num_gpus,size_class,n_attempts,wall_s,sum_attempt_s,final_status\n"
    "b,2017-10-01 00:10:00,16,9-16,1,400,400,Pass\n"
    "a,2017-10-01 00:00:00,8,5-8,3,1200,1150,Pass\n"
)


def test_philly_timeline_by_hand(tmp_path: Path) -> None:
    """Job a (8 GPUs) starts at 00:00, fails after 100 s, restarts 20 s later,
    fails after 50 s, restarts 30 s later and completes in 1,000 s (1,150 s
    of attempts in all); job b (16 GPUs) starts at 00:10 and completes in
    400 s. Origin 00:00; lost 150 s x 8 GPUs; kept 1,000 s x 8 + 400 s x
    16; recovery wait 50 s x 8."""
    attempts = write(tmp_path, "philly_interrupted_attempt_runtime_s.csv", PHILLY_ATTEMPTS)
    write(tmp_path, "philly_pass_jobs_ge2gpu.csv", PHILLY_PASSED)
    h = history.read_philly(attempts)
    assert h.job_names == ("b", "a")
    runs = h.runs
    assert runs[["job", "attempt", "start", "end", "state", "gpus"]].tolist() == [
        (0, 0, 600.0, 1000.0, RunState.COMPLETED, 16),
        (1, 0, 0.0, 100.0, RunState.FAILED, 8),
        (1, 1, 120.0, 170.0, RunState.FAILED, 8),
        (1, 2, 200.0, 1200.0, RunState.COMPLETED, 8),
    ]
    assert h.failures[["time", "job", "run", "node"]].tolist() == [
        (100.0, 1, 1, -1),
        (170.0, 1, 2, -1),
    ]
    assert h.span == (0.0, 1200.0)
    t = h.measured().totals
    assert t["lost_gpu_hours"] == 150 * 8 / 3600
    assert t["kept_gpu_hours"] == (1000 * 8 + 400 * 16) / 3600
    assert t["recovery_wait_gpu_hours"] == 50 * 8 / 3600
    iv = h.intervals("job")
    assert sorted(zip(iv.samples.tolist(), iv.censored.tolist(), strict=True)) == [
        (50.0, False),
        (100.0, False),
        (400.0, True),
        (1000.0, True),
    ]
    assert history.restart_gaps(h).tolist() == [20.0, 30.0]


@pytest.mark.parametrize(
    "passed, line, field",
    [
        (PHILLY_PASSED.replace("1200,1150", "1300,1150"), 3, "wall_s"),
        (PHILLY_PASSED.replace(",3,1200", ",2,1200"), 3, "n_attempts"),
        (PHILLY_PASSED.replace("1200,1150", "100,90"), 3, "sum_attempt_s"),
        (PHILLY_PASSED.replace("2017-10-01 00:10:00", "yesterday"), 2, "submitted_time"),
        (PHILLY_PASSED + "b,2017-10-01 00:10:00,16,9-16,1,400,400,Pass\n", 4, "job_id"),
        (PHILLY_PASSED.replace("\na,2017", "\nc,2017"), 3, "n_attempts"),
    ],
    ids=["wall", "attempts", "attempt-time", "time", "twice", "unknown-job"],
)
def test_philly_malformed_passed_jobs(tmp_path: Path, passed: str, line: int, field: str) -> None:
    attempts = write(tmp_path, "attempts.csv", PHILLY_ATTEMPTS)
    path = write(tmp_path, "passed.csv", passed)
    with pytest.raises(HistoryFormatError) as info:
        history.read_philly(attempts, passed=path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_philly_attempts_out_of_order(tmp_path: Path) -> None:
    path = write(tmp_path, "attempts.csv", PHILLY_ATTEMPTS.replace("a,8,5-8,2,", "a,8,5-8,3,"))
    with pytest.raises(HistoryFormatError) as info:
        history.read_philly(path)
    assert (info.value.line, info.value.field) == (3, "attempt")


def test_bamboo() -> None:
    iv = history.read_bamboo_lifetimes(shared("bamboo_lifetimes")).intervals("node")
    assert len(iv) == 256 and iv.failures == 241
    p3 = history.read_bamboo_lifetimes(shared("bamboo_lifetimes"), trace="p3").intervals("node")
    assert len(p3) == 177
    events = history.read_bamboo_preemptions(shared("bamboo_p3_preemptions"))
    assert events.intervals("system").failures == 79
    assert events.meta["instances"].sum() > 79
    clock = history.read_bamboo_preemptions(shared("bamboo_64node_preemptions"))
    assert clock.origin is not None and clock.intervals("system").failures == 44


def test_llama3_causes_are_acesims() -> None:
    h = history.read_llama3_causes(shared("llama3_causes"))
    causes = h.causes()

    def key(c: Any) -> tuple[Any, ...]:
        return (c.name, c.share, c.node_down, c.detect.mean(), c.scope)

    assert [key(c) for c in causes] == [key(c) for c in ace.LLAMA3_CAUSES]
    assert sum(h.cause_counts().values()) == 419 == h.meta["interruptions"]
    assert h.available_intervals == ()
    with pytest.raises(ValueError, match="available: none"):
        h.intervals("job")


def test_acme_states() -> None:
    table = history.read_acme_states(shared("acme_states"))
    assert table["cluster"].tolist() == ["Seren", "Kalos", "Philly", "Helios", "PAI"]
    assert table["failed"][0] == pytest.approx(0.429)
    assert math.isnan(table["failed"][-1])


def test_read_shared_names() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        history.read_shared("nope", DATA_DIR)
    for name in history.SHARED_DATA:
        shared(name)
        assert history.read_shared(name, DATA_DIR) is not None


# ---------------------------------------------------------------------------
# random garbage: only HistoryFormatError, never a hang


class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        raise Hang(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_TOKENS = [
    "|",
    ",",
    "\n",
    "[",
    "]",
    "-",
    "{",
    "}",
    '"',
    ":",
    "0",
    "9",
    "00",
    "1e999",
    "-1",
    "NaN",
    "Unknown",
    "None assigned",
    "T",
    "2024-01-01T00:00:00",
    "COMPLETED",
    "NODE_FAIL",
    "CANCELLED by 1",
    "job_start",
    "job_stop",
    "node_down",
    "gres/gpu=",
    "n[1-3]",
    "n[9-1]",
    "\x00",
    "\xff",
    "é",
    " ",
    "null",
    "true",
    "[[[[",
    "99999999999999999999",
    ".batch",
    "_",
    "+",
    "state",
    "time",
    "kind",
    "nodes",
    "origin",
]


def _mutate(seed_text: str, rng: np.random.Generator) -> bytes:
    text = seed_text
    for _ in range(int(rng.integers(1, 6))):
        op = int(rng.integers(0, 6))
        pos = int(rng.integers(0, len(text) + 1))
        if op == 0:  # insert a token
            text = text[:pos] + _TOKENS[int(rng.integers(len(_TOKENS)))] + text[pos:]
        elif op == 1 and text:  # delete a span
            end = min(len(text), pos + int(rng.integers(1, 20)))
            text = text[:pos] + text[end:]
        elif op == 2 and text:  # replace a character
            text = text[:pos] + chr(int(rng.integers(0, 0x2FF))) + text[pos + 1 :]
        elif op == 3:  # truncate
            text = text[:pos]
        elif op == 4:  # duplicate a line
            lines = text.split("\n")
            i = int(rng.integers(len(lines)))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        else:  # swap two lines
            lines = text.split("\n")
            if len(lines) > 1:
                i, k = (int(x) for x in rng.integers(len(lines), size=2))
                lines[i], lines[k] = lines[k], lines[i]
            text = "\n".join(lines)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        data = bytes(rng.integers(0, 256, size=int(rng.integers(0, 64))).tolist())
    return data


def _exercise(h: Any) -> None:
    """A history that reads must also measure and give its intervals."""
    if not isinstance(h, history.History):
        return
    if h.jobs.size:
        h.measured().goodput()
    for by in h.available_intervals:
        iv = h.intervals(by)
        assert np.all(iv.samples >= 0), by
        iv.groups()
    h.cause_counts()


def _seeds(tmp_path: Path) -> dict[str, tuple[str, Callable[[Path], Any]]]:
    res, causes, nodes = _fleet_run(job_level=False, seed=1)
    history.write_events(res, tmp_path / "seed.jsonl", causes=causes, nodes=nodes)
    history.write_events(res, tmp_path / "seed.csv", causes=causes, nodes=nodes)
    seeds: dict[str, tuple[str, Callable[[Path], Any]]] = {
        "sacct": (SACCT, history.read_sacct),
        "events.jsonl": (
            "".join((tmp_path / "seed.jsonl").read_text().splitlines(keepends=True)[:60]),
            history.read_events,
        ),
        "events.csv": (
            "".join((tmp_path / "seed.csv").read_text().splitlines(keepends=True)[:60]),
            history.read_events,
        ),
        "hand.jsonl": (_jsonl(EVENTS), history.read_events),
    }
    for name, (filename, reader) in history.SHARED_DATA.items():
        path = DATA_DIR / filename
        if path.exists():
            head = "".join(path.read_text().splitlines(keepends=True)[:25])
            seeds[f"{name}.csv"] = (head, reader)
    return seeds


def test_random_garbage_only_format_errors(tmp_path: Path) -> None:
    rng = np.random.default_rng(20240101)
    seeds = _seeds(tmp_path)
    outcomes = {"read": 0, "rejected": 0}
    for name, (text, reader) in seeds.items():
        with time_limit(20.0):
            _exercise(reader(write(tmp_path, name, text)))  # the seed itself reads
        for case in range(150):
            data = _mutate(text, rng)
            path = write(tmp_path, f"{case}-{name}", data)
            try:
                with time_limit(5.0):
                    h = reader(path)
                    _exercise(h)
                outcomes["read"] += 1
            except HistoryFormatError as err:
                assert err.path == str(path)
                assert err.line is None or 1 <= err.line <= data.count(b"\n") + 1
                outcomes["rejected"] += 1
            except Hang:
                pytest.fail(f"{name} case {case} hung on {data[:200]!r}")
            except Exception as err:  # pragma: no cover - the point of the test
                pytest.fail(f"{name} case {case}: {type(err).__name__}: {err} on {data[:300]!r}")
    assert outcomes["read"] > 0 and outcomes["rejected"] > 0


# ---------------------------------------------------------------------------
# a user's own log: other column names, a log of failures only, zoned times

FAILURES_ONLY = """\
timestamp,host
2024-01-01T00:00:00Z,n1
2024-01-01T03:00:00+02:00,n2
2024-01-01T02:30:00.5Z,n1
2024-01-01T05:00:00Z,n2
2024-01-01T06:00:00Z,n1
"""


def test_a_log_of_times_and_nodes_is_node_failures(tmp_path: Path) -> None:
    h = history.read_events(write(tmp_path, "log.csv", FAILURES_ONLY))
    assert h.node_names == ("n1", "n2")
    assert h.origin is not None and h.origin.isoformat() == "2024-01-01T00:00:00"
    # 03:00+02:00 is 01:00 UTC; the rows are put in time order
    assert h.failures["time"].tolist() == [0.0, HOUR, 2.5 * HOUR + 0.5, 5 * HOUR, 6 * HOUR]
    assert h.failures["node"].tolist() == [0, 1, 0, 1, 0]
    assert (h.failures["job"] == -1).all() and h.span == (0.0, 6 * HOUR)
    fit = h.fit(by="node", families=("exponential",))
    # n1: 0 -> 9000.5 -> 21600 (the gap after its last failure has length 0);
    # n2: from the record's start to 3600 (left-truncated, left out), 3600 ->
    # 18000, then 3600 s without a failure to the end (censored)
    assert (fit.samples, fit.failures, fit.left_truncated) == (4, 3, 1)
    assert fit.samples_line().startswith(
        "samples: 4 node intervals (wall clock), 3 failures and 1 censored"
    )
    assert "left out: 1 left-truncated" in fit.samples_line()
    assert fit["exponential"].params["mean"] == pytest.approx((9000.5 + 12599.5 + 14400 + 3600) / 3)


def test_json_lines_with_other_key_names_and_epoch_seconds(tmp_path: Path) -> None:
    lines = [
        {"ts": 1704067200.25, "hostname": "a"},
        {"ts": 1704070800, "hostname": "b"},
    ]
    h = history.read_events(write(tmp_path, "log.jsonl", _jsonl(lines)))
    assert h.failures["time"].tolist() == [1704067200.25, 1704070800.0]  # kept as given
    assert h.node_names == ("a", "b")
    assert h.origin is None
    text = "Time,Event,Job_ID,Hosts,State\n10,job_start,7,n[1-2],\n20.5,job_stop,7,,COMPLETED\n"
    h = history.read_events(write(tmp_path, "log.csv", text))
    assert h.job_names == ("7",) and h.nodes_of(0) == ["n1", "n2"]
    assert h.runs["end"].tolist() == [20.5]


def test_every_missing_column_in_one_error(tmp_path: Path) -> None:
    path = write(tmp_path, "log.csv", "job,cause\na,GPU\n")
    with pytest.raises(HistoryFormatError) as info:
        history.read_events(path)
    err = info.value
    assert (err.line, err.field) == (1, "time")
    for said in ("'time'", "'kind'", "timestamp", "node_failure", "job_start", "event"):
        assert said in err.reason
    assert "time and node columns" in err.reason
    path = write(tmp_path, "log.jsonl", _jsonl([{"job": "a"}]))
    with pytest.raises(HistoryFormatError, match=r"missing keys 'time'.*'kind'") as info:
        history.read_events(path)
    assert (info.value.line, info.value.field) == (1, "time")
    with pytest.raises(HistoryFormatError, match=r"unknown event kind 'boom' \(one of job_submit"):
        history.read_events(write(tmp_path, "k.csv", "time,kind\n0,boom\n"))


@pytest.mark.parametrize(
    ("rows", "line"),
    [
        (["2024-01-01T00:00:00Z,n1", "2024-01-01T01:00:00,n2"], 3),
        (["2024-01-01T00:00:00,n1", "2024-01-01T01:00:00+00:00,n2"], 3),
        (["2024-01-01T05:00:00,n1", "2024-01-01T01:00:00,n2", "2024-01-01T02:00:00-05:00,n1"], 4),
    ],
)
def test_a_log_mixing_naive_and_zoned_times_is_refused(
    tmp_path: Path, rows: list[str], line: int
) -> None:
    path = write(tmp_path, "log.csv", "time,node\n" + "\n".join(rows) + "\n")
    with pytest.raises(HistoryFormatError, match="zone") as info:
        history.read_events(path)
    assert (info.value.line, info.value.field) == (line, "time")
    assert "line 2" in info.value.reason  # the first time, which set the rule


@pytest.mark.parametrize(
    ("text", "seconds", "zoned"),
    [
        ("2024-01-01T00:00:00Z", 1704067200.0, True),
        ("2024-01-01T02:00:00+02:00", 1704067200.0, True),
        ("2023-12-31T19:00:00-05:00", 1704067200.0, True),
        ("2024-01-01T00:00:00.5Z", 1704067200.5, True),
        ("2024-01-01 00:00:00", 1704067200.0, False),
        ("2024-01-01", 1704067200.0, False),
        ("1704067200", 1704067200.0, True),
        ("1704067200.25", 1704067200.25, True),
    ],
)
def test_times_by_the_standard_library(text: str, seconds: float, zoned: bool) -> None:
    from acesim.history._times import parse_time

    assert parse_time(text) == (seconds, zoned)


@pytest.mark.parametrize("text", ["soon", "2024-13-01", "1e9", "-5", "2024-01-01T00:00:00Q"])
def test_times_refused(text: str) -> None:
    from acesim.history._times import parse_time

    with pytest.raises(ValueError, match="time"):
        parse_time(text)
