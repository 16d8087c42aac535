"""Stream stability: recorded traces and results depend on the exact draws.
These golden values pin the first draws of every purpose stream, of every
leaf law, and the rows of two small scenarios. A change that alters any of
them changes what users' recorded results replay to: it must bump
``acesim.STREAM_VERSION`` (which every result's provenance carries) and say
so in the CHANGELOG, and these values are then recorded again."""

from __future__ import annotations

import acesim as ace

#: The stream version these values were recorded under.
RECORDED_VERSION = 1

# Exponential(3600) draws 0 and 1 of job 0's stream of each purpose (seed 7, replica 3).
PURPOSE_DRAWS = {
    "failure": [2639.2977470159603, 3690.144214079921],
    "init": [1330.9553790606315, 349.26503353017307],
    "save": [1272.4694906581815, 2611.5219271390533],
    "load": [790.6182594869678, 2745.027198879907],
    "blame": [2587.572581009753, 1728.772141351019],
    "cause": [715.9998704167277, 2087.8743700412],
    "detect": [13439.900281205706, 270.110622206874],
    "repair": [6161.961511240395, 13940.554996452254],
    "replace": [16602.07185761541, 12616.509964102639],
    "persist": [2289.7409740979915, 2490.2276411042963],
    "tier_save": [3487.588366912963, 915.820267904121],
    "tier_load": [6151.522780933523, 761.7895259581414],
    "reconfigure": [4839.061131295174, 4007.101126430578],
}

# Draws 0-2 of job 1's failure stream (seed 7, replica 0), by law.
LAW_DRAWS = {
    "exponential": (
        ace.Exponential(3600.0),
        [194.41364072645464, 2271.3872809632653, 3570.9650719398],
    ),
    "weibull": (
        ace.Weibull(0.7, 3600.0),
        [55.65189739304044, 1864.5415088374589, 3558.5933277932154],
    ),
    "lognormal": (
        ace.LogNormal(8.0, 1.0),
        [8326.311336825493, 3035.652985495057, 2138.5479994607763],
    ),
    "gamma": (ace.Gamma(0.8, 3600.0), [10416.299043625988, 903.8207812380583, 2519.128719745576]),
    "empirical": (ace.Empirical([10.0, 20.0, 30.0, 40.0]), [40.0, 30.0, 20.0]),
}


# Draws 0-3 of job 1's failure stream (seed 7, replica 0, 64 GPUs) of composite
# laws, and their forward-recurrence means (recorded when each composite still
# copied its children's tables; laid out lazily since, with the same table).
COMPOSITE_DRAWS = {
    "mixture": (
        ace.Mixture([(0.3, ace.Weibull(0.7, 3600.0)), (0.7, ace.LogNormal(8.0, 1.2))]),
        [10225.20453830553, 887.872020106284, 6571.7520877420375, 4443.582159533944],
        11528.359990972118,
    ),
    "nested": (
        ace.Mixture(
            [
                (1.0, ace.Mixture([(2.0, ace.Exponential(100.0)), (1.0, ace.Gamma(0.5, 800.0))])),
                (0.5, ace.ScaleAware(ace.Empirical([5.0, 50.0, 500.0]), 1024, 0.8)),
            ]
        ),
        [4594.793419988139, 52.018969387676385, 595.2290038311246, 41.343005443386346],
        1774.9663169961398,
    ),
    "scale_aware": (
        ace.ScaleAware(
            ace.Mixture([(1.0, ace.Exponential(3600.0)), (1.0, ace.Constant(60.0))]), 512, 1.0
        ),
        [480.0, 480.0, 6139.981095610394, 480.0],
        28331.803278688523,
    ),
}


def test_the_version_is_the_recorded_one() -> None:
    assert ace.STREAM_VERSION == RECORDED_VERSION
    res = ace.simulate(ace.Job(8, 3600.0, 600.0))
    assert res.provenance["stream_version"] == RECORDED_VERSION


def test_every_purpose_stream_draws_as_recorded() -> None:
    assert set(PURPOSE_DRAWS) == set(ace.PURPOSES)
    law = ace.Exponential(3600.0)
    for purpose, want in PURPOSE_DRAWS.items():
        got = law.sample(2, seed=7, stream=ace.job_stream(0, purpose), replica=3).tolist()
        assert got == want, purpose


def test_every_leaf_law_draws_as_recorded() -> None:
    stream = ace.job_stream(1, "failure")
    for name, (law, want) in LAW_DRAWS.items():
        assert law.sample(3, seed=7, stream=stream, replica=0).tolist() == want, name


def test_every_composite_law_draws_as_recorded() -> None:
    stream = ace.job_stream(1, "failure")
    for name, (law, want, forward) in COMPOSITE_DRAWS.items():
        assert law.sample(4, seed=7, stream=stream, replica=0, gpus=64).tolist() == want, name
        assert law.forward_recurrence_mean(gpus=64) == forward, name


def test_a_single_job_runs_as_recorded() -> None:
    res = ace.simulate(
        ace.Job(64, ace.DAY, ace.HOUR), ace.Weibull(0.7, 6 * ace.HOUR), replicas=3, seed=11
    )
    assert res.jobs[["wall", "wasted", "failures"]].tolist() == [
        (92703.78177196263, 3798.9844115589326, 5),
        (103239.3704742158, 14124.069422323053, 7),
        (96799.84185160918, 8239.84185160917, 3),
    ]


def test_a_fleet_runs_as_recorded() -> None:
    fleet = ace.Fleet(
        6,
        spares=1,
        repair=ace.Exponential(4 * ace.HOUR),
        node_failures=ace.Weibull(0.8, 3 * ace.DAY),
    )
    jobs = [ace.Job(16, 2 * ace.DAY, ace.HOUR), ace.Job(24, ace.DAY, "young", submit=ace.HOUR)]
    res = ace.simulate(jobs, fleet=fleet, causes=ace.LLAMA3_CAUSES, replicas=2, seed=5)
    assert res.jobs[["job", "wall", "wasted", "failures"]].tolist() == [
        (0, 175860.0, 0.0, 0),
        (1, 88140.0, 0.0, 0),
        (0, 179952.3719079676, 3612.3719079676084, 2),
        (1, 89432.82626517164, 1102.8262651716504, 1),
    ]
    assert res.trace[["time", "node", "cause"]].tolist()[:5] == [
        (58266.04793044001, 5, 4),
        (22319.757220449916, 0, 2),
        (100824.71383862205, 4, 1),
        (116830.2165640561, 4, 2),
        (117285.2657541065, 4, 0),
    ]
