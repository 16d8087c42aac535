"""Odd but legal input: results are the same as for the ordinary input."""

from __future__ import annotations

import pickle

import acesim as ace
import numpy as np
import numpy.typing as npt


def unaligned(values: npt.ArrayLike, dtype: type) -> npt.NDArray[np.generic]:
    """``values`` in a buffer one byte off its natural alignment."""
    data = np.ascontiguousarray(values, dtype)
    raw = np.zeros(data.nbytes + 1, np.uint8)
    raw[1:] = np.frombuffer(data.tobytes(), np.uint8)
    out = np.frombuffer(raw.data, dtype=dtype, count=data.size, offset=1)
    assert not out.flags.aligned
    return out


def test_job_columns_from_unaligned_buffers() -> None:
    """A JobArray on unaligned (and offset-view) columns, as buffers arrive
    unpickled on a Dask worker, gives the rows of the aligned one."""
    n = 7
    gpus = np.array([8, 16, 8, 32, 8, 64, 8], np.uint32)
    work = np.linspace(3600.0, 9 * 3600.0, n)
    interval = np.full(n, 900.0)
    submit = np.arange(n) * 60.0
    aligned = ace.JobArray(gpus=gpus, work=work, checkpoint_interval=interval, submit=submit)
    odd = ace.JobArray(
        gpus=unaligned(gpus, np.uint32),
        work=unaligned(work, np.float64),
        checkpoint_interval=unaligned(interval, np.float64),
        submit=unaligned(submit, np.float64),
    )
    law = ace.Weibull(0.8, 2 * 3600.0)
    a = ace.simulate(aligned, law, replicas=5, seed=2)
    b = ace.simulate(odd, law, replicas=5, seed=2)
    assert a.jobs.tobytes() == b.jobs.tobytes()
    c = ace.simulate(pickle.loads(pickle.dumps(odd)), law, replicas=5, seed=2)
    assert a.jobs.tobytes() == c.jobs.tobytes()
    fleet = ace.Fleet(32, node_failures=ace.Exponential(50 * 3600.0), repair=3600.0)
    d = ace.simulate(aligned, fleet=fleet, replicas=2, seed=1)
    e = ace.simulate(odd, fleet=fleet, replicas=2, seed=1)
    assert d.jobs.tobytes() == e.jobs.tobytes()
