"""``simulate`` keeps the last call's checked and converted input: a call with
the same objects, the same run options (of the same types) and jobs whose
fields are unchanged skips the checks and conversions. Anything else is
checked again: a job changed in place, a list of jobs grown, an option of
another type.

The job: 1 h of work, a checkpoint every 30 min (save 60 s, the last one at
the end), no init, no load, no failure within its run: wall 3,600 + 2 x 60
= 3,720 s; with 2 h of work, 7,200 + 4 x 60 = 7,440 s."""

from __future__ import annotations

import acesim as ace
import pytest
from hand_cases import HOUR, ZERO

NEVER = ace.Constant(1000 * HOUR)


def _job(work: float = HOUR) -> ace.Job:
    return ace.Job(8, work, HOUR / 2, init=ZERO, save=ace.Constant(60.0), load=ZERO)


def test_a_job_changed_in_place_is_converted_again() -> None:
    job = _job()
    first = ace.simulate(job, NEVER, seed=1, threads=1)
    again = ace.simulate(job, NEVER, seed=1, threads=1)
    assert first.jobs["wall"].tolist() == again.jobs["wall"].tolist() == [3720.0]
    assert again.jobs is not first.jobs
    assert again.provenance == first.provenance
    job.work = 2 * HOUR
    changed = ace.simulate(job, NEVER, seed=1, threads=1)
    assert changed.jobs["wall"].tolist() == [7440.0]


def test_a_list_of_jobs_grown_in_place_is_converted_again() -> None:
    jobs = [_job()]
    assert len(ace.simulate(jobs, NEVER, threads=1).jobs) == 1
    jobs.append(_job(2 * HOUR))
    assert ace.simulate(jobs, NEVER, threads=1).jobs["wall"].tolist() == [3720.0, 7440.0]
    jobs[0] = _job(2 * HOUR)  # another Job object with other fields
    assert ace.simulate(jobs, NEVER, threads=1).jobs["wall"].tolist() == [7440.0, 7440.0]


def test_options_of_another_type_are_checked_again() -> None:
    job = _job()
    ace.simulate(job, NEVER, replicas=1, seed=1, record_events=False, threads=1)
    with pytest.raises(TypeError, match="replicas"):
        ace.simulate(job, NEVER, replicas=True, seed=1, record_events=False, threads=1)
    ace.simulate(job, NEVER, replicas=1, seed=1, record_events=False, threads=1)
    with pytest.raises(TypeError, match="record_events"):
        ace.simulate(job, NEVER, replicas=1, seed=1, record_events=0, threads=1)
    with pytest.raises(TypeError, match="seed"):
        ace.simulate(job, NEVER, replicas=1, seed=1.0, record_events=False, threads=1)


def test_equal_calls_give_equal_results_and_other_seeds_other_ones() -> None:
    job = ace.Job(1024, 2 * ace.DAY, HOUR)
    law = ace.Weibull(0.7, 8 * HOUR)
    first = ace.simulate(job, law, seed=1, threads=1)
    again = ace.simulate(job, law, seed=1, threads=1)
    other = ace.simulate(job, law, seed=2, threads=1)
    fresh = ace.simulate(ace.Job(1024, 2 * ace.DAY, HOUR), ace.Weibull(0.7, 8 * HOUR), seed=1)
    assert first.jobs.tobytes() == again.jobs.tobytes() == fresh.jobs.tobytes()
    assert first.trace.tobytes() == again.trace.tobytes()
    assert other.jobs.tobytes() != first.jobs.tobytes()
    assert (again.seed, other.seed, again.replicas) == (1, 2, 1)


def test_a_field_of_another_type_is_checked_again() -> None:
    # 8.0 == 8, but a Job's gpus is an integer: set after a call, the next
    # call refuses it as a first call would.
    job = _job()
    assert ace.simulate(job, NEVER, seed=1, threads=1).jobs["wall"].tolist() == [3720.0]
    job.gpus = 8.0  # type: ignore[assignment]
    with pytest.raises(TypeError, match="jobs\\[0\\]"):
        ace.simulate(job, NEVER, seed=1, threads=1)
    fresh = _job()
    fresh.gpus = 8.0  # type: ignore[assignment]
    with pytest.raises(TypeError, match="jobs\\[0\\]"):
        ace.simulate(fresh, NEVER, seed=1, threads=1)
