"""A wide job's node list (more than 64 whole nodes): a node change costs
O(1) (a node given back leaves a vacant slot, a node taken goes after the
others, the list is compacted when its slots run out), and the list keeps
the order in which the job took its nodes, which decides the node a
job-level failure blames (the i-th, i drawn from the job's blame stream).

A 100-node job on a 104-node fleet: 200 node failures, each on a node the
job holds, each restart on its survivors plus the lowest free node, in the
order the test keeps itself; then a job-level failure, whose drawn place is
read off the same job on a list in id order (its one blame draw is the
same)."""

from __future__ import annotations

import acesim as ace
from hand_cases import HOUR, ZERO

NODES = 104
WIDTH = 100
CHANGES = 200  # the list's 256 slots are compacted once on the way
GAP = 100.0  # seconds between node failures; repairs take 30 s
JOB_MTTF = 30_000.0  # the job-level law: a failure after 30,000 s of holding nodes


def _job() -> ace.Job:
    return ace.Job(8 * WIDTH, 30 * ace.DAY, HOUR, init=ZERO, save=ZERO, load=ZERO)


def _model(times: dict[int, list[float]]) -> ace.FleetModel:
    fleet = ace.Fleet(
        NODES,
        spares=0,
        repair=30.0,
        node_failures=ace.NodeTrace.from_times(times, nodes=NODES),
    )
    return ace.FleetModel(fleet, failures=ace.Constant(JOB_MTTF), check_invariants=True)


def _plan() -> tuple[dict[int, list[float]], list[int], list[list[int]]]:
    """The failures (node -> times), the struck nodes in turn and the job's
    list after each restart: failure k (at 50 + 100 k s) strikes the node
    at place 37 k mod 100 of the list; the restart keeps the others in
    their order and takes the lowest free node (the struck one is still in
    repair) after them."""
    held = list(range(WIDTH))
    times: dict[int, list[float]] = {}
    struck: list[int] = []
    lists: list[list[int]] = []
    for k in range(CHANGES):
        node = held[(37 * k) % WIDTH]
        struck.append(node)
        times.setdefault(node, []).append(50.0 + GAP * k)
        held = [n for n in held if n != node]
        held.append(min(n for n in range(NODES) if n not in held and n != node))
        lists.append(list(held))
    return times, struck, lists


Drive = tuple[list[int], list[list[int]], float, tuple[int, ...]]


def _drive(model: ace.FleetModel, job: int) -> Drive:
    """Drives the model to the job's first job-level failure, restarting it
    after each node failure on its survivors and the lowest free node;
    returns the struck nodes, the list after each restart, and the time and
    node of the job-level failure (a node_down blamed on the job)."""
    struck: list[int] = []
    lists: list[list[int]] = []
    while events := model.advance(40 * ace.DAY):
        for e in events:
            if e.kind == "node_down" and e.job == job:
                return struck, lists, e.time, e.nodes
            if e.kind == "job_failed":
                struck.extend(e.nodes)
                held = model.nodes_of(job)
                free = min(n for n in model.free_nodes() if n not in held)
                model.start(job, [*held, free])
                lists.append(model.nodes_of(job))
    raise AssertionError("no job-level failure")


def test_the_list_keeps_its_order_through_changes_and_blames_the_same_place() -> None:
    # Reference: the job on nodes 0..99 in order, no node failure: its
    # job-level failure at 30,000 s blames the node at the drawn place p,
    # which is node p.
    reference = _model({})
    job = reference.submit(_job())
    reference.start(job, list(range(WIDTH)))
    struck, _, time, (place,) = _drive(reference, job)
    assert struck == [] and time == JOB_MTTF

    times, planned, lists = _plan()
    model = _model(times)
    job = model.submit(_job())
    model.start(job, list(range(WIDTH)))
    struck, after, time, nodes = _drive(model, job)
    assert struck == planned
    assert after == lists
    # The same draw blames the node at the same place of the changed list.
    # Restarts cost nothing (no init, no load): the job held nodes throughout.
    assert time == JOB_MTTF
    assert nodes == (lists[-1][place],)
