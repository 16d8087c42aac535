"""Counter-based random numbers: Philox4x32-10 known answers, an independent
reference implementation, and the purity of ``Distribution.sample`` in
(seed, replica, stream, index) (DESIGN section 2)."""

from __future__ import annotations

import itertools
import math

import acesim as ace
import numpy as np
import pytest
from acesim import _core

MASK32 = 0xFFFFFFFF

# Random123 known-answer vectors (kat_vectors, philox4x32 with 10 rounds).
KAT = [
    (
        (0x00000000, 0x00000000, 0x00000000, 0x00000000),
        (0x00000000, 0x00000000),
        (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8),
    ),
    (
        (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
    ),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def philox4x32_10_ref(counter: tuple[int, ...], key: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Philox4x32-10 written from the published algorithm (Salmon et al., SC'11)."""
    m0, m1 = 0xD2511F53, 0xCD9E8D57
    w0, w1 = 0x9E3779B9, 0xBB67AE85
    x0, x1, x2, x3 = (c & MASK32 for c in counter)
    k0, k1 = (k & MASK32 for k in key)
    for r in range(10):
        if r:
            k0 = (k0 + w0) & MASK32
            k1 = (k1 + w1) & MASK32
        p0 = m0 * x0
        p1 = m1 * x2
        hi0, lo0 = p0 >> 32, p0 & MASK32
        hi1, lo1 = p1 >> 32, p1 & MASK32
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
    return x0, x1, x2, x3


def uniform_open_ref(v0: int, v1: int) -> float:
    lo64 = v0 | (v1 << 32)
    return ((lo64 >> 12) + 0.5) * 2.0**-52


def key_of(seed: int) -> tuple[int, int]:
    return seed & MASK32, (seed >> 32) & MASK32


# --------------------------------------------------------------------------- Philox


@pytest.mark.parametrize(("counter", "key", "expected"), KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(_core.philox4x32_10(list(counter), list(key))) == expected


@pytest.mark.parametrize(("counter", "key", "expected"), KAT)
def test_reference_implementation_matches_known_answers(counter, key, expected):
    assert philox4x32_10_ref(counter, key) == expected


def test_philox_matches_reference_on_random_inputs():
    rng = np.random.default_rng(20240611)
    for _ in range(500):
        counter = tuple(int(x) for x in rng.integers(0, 2**32, size=4, dtype=np.uint64))
        key = tuple(int(x) for x in rng.integers(0, 2**32, size=2, dtype=np.uint64))
        assert tuple(_core.philox4x32_10(list(counter), list(key))) == philox4x32_10_ref(
            counter, key
        )


def test_uniform_open_matches_reference_and_is_open():
    for bits in (0, 1, 2**12 - 1, 2**12, 2**63, 2**64 - 1, 0x0123456789ABCDEF):
        u = _core.uniform_open(bits)
        assert u == uniform_open_ref(bits & MASK32, bits >> 32)
        assert 0.0 < u < 1.0


# --------------------------------------------------------------------------- stream layout


@pytest.mark.parametrize(
    ("seed", "stream", "replica"),
    [(0, 0, 0), (1, 0, 0), (12345, 7, 3), (2**40 + 17, 2**31 + 5, 2**32 - 1)],
)
def test_exponential_pins_stream_layout(seed, stream, replica):
    """Draw i of an Exponential is -mean * log(u) with u from the Philox block
    of counter (sub=0, i, stream, replica) under key = seed (philox.hpp)."""
    mean = 3600.0
    n = 64
    got = ace.Exponential(mean).sample(n, seed=seed, stream=stream, replica=replica)
    key = key_of(seed)
    expected = np.empty(n)
    for i in range(n):
        v = philox4x32_10_ref((0, i, stream, replica), key)
        expected[i] = -mean * math.log(uniform_open_ref(v[0], v[1]))
    # Same formula in C++ and Python; libm log may differ by an ulp at most.
    np.testing.assert_allclose(got, expected, rtol=4e-16, atol=0)


def test_exponential_stream_layout_with_first_offset():
    mean = 2.0
    first = 1_000_003
    got = ace.Exponential(mean).sample(8, seed=99, stream=5, replica=2, first=first)
    expected = [
        -mean * math.log(uniform_open_ref(*philox4x32_10_ref((0, first + i, 5, 2), key_of(99))[:2]))
        for i in range(8)
    ]
    np.testing.assert_allclose(got, expected, rtol=4e-16, atol=0)


# --------------------------------------------------------------------------- purity of sample

DISTS = {
    "constant": ace.Constant(5.0),
    "exponential": ace.Exponential(10.0),
    "weibull": ace.Weibull(0.7, 100.0),
    "lognormal": ace.LogNormal(1.0, 0.8),
    "gamma_small": ace.Gamma(0.3, 2.0),
    "gamma": ace.Gamma(4.0, 2.0),
    "mixture": ace.Mixture([(0.9, ace.Exponential(1000.0)), (0.1, ace.Gamma(0.5, 3.0))]),
    "empirical": ace.Empirical([1.0, 2.0, 3.0, 5.0, 8.0, 13.0]),
    "block_bootstrap": ace.BlockBootstrap(np.arange(1.0, 51.0), 7),
    "replay": ace.Replay(np.arange(1.0, 30_001.0)),
    "scale_aware": ace.ScaleAware(ace.Weibull(0.5, 1.0), ref_gpus=1024, exponent=1.0),
}


@pytest.fixture(params=sorted(DISTS), ids=sorted(DISTS))
def dist(request):
    return DISTS[request.param]


def test_sample_is_float64_array(dist):
    x = dist.sample(10)
    assert isinstance(x, np.ndarray)
    assert x.dtype == np.float64
    assert x.shape == (10,)
    assert dist.sample(0).shape == (0,)


def test_same_arguments_give_bit_identical_draws(dist):
    a = dist.sample(5000, seed=42, stream=3, replica=2, first=11)
    b = dist.sample(5000, seed=42, stream=3, replica=2, first=11)
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("k", [1, 7, 4096, 10_000])
def test_draws_are_a_pure_function_of_index(dist, k):
    n = 3000
    whole = dist.sample(n + k, seed=7, stream=1, replica=4)
    tail = dist.sample(n, seed=7, stream=1, replica=4, first=k)
    assert tail.tobytes() == whole[k:].tobytes()


def test_thread_count_does_not_change_draws(dist):
    n = 20_000  # large enough that two threads are really used
    one = dist.sample(n, seed=3, stream=2, threads=1)
    two = dist.sample(n, seed=3, stream=2, threads=2)
    many = dist.sample(n, seed=3, stream=2, threads=7)
    default = dist.sample(n, seed=3, stream=2)
    assert one.tobytes() == two.tobytes() == many.tobytes() == default.tobytes()


def test_any_split_of_a_batch_gives_the_same_draws(dist):
    n = 12_345
    whole = dist.sample(n, seed=11, stream=9, replica=1)
    rng = np.random.default_rng(5)
    cuts = np.sort(rng.choice(np.arange(1, n), size=6, replace=False))
    edges = [0, *cuts.tolist(), n]
    parts = [
        dist.sample(b - a, seed=11, stream=9, replica=1, first=a, threads=1 + (i % 2))
        for i, (a, b) in enumerate(itertools.pairwise(edges))
    ]
    assert np.concatenate(parts).tobytes() == whole.tobytes()


RANDOM_DISTS = [name for name in sorted(DISTS) if name not in ("constant", "replay")]


@pytest.mark.parametrize("name", RANDOM_DISTS)
@pytest.mark.parametrize(
    "other",
    [dict(seed=2), dict(stream=1), dict(replica=1), dict(seed=2**32), dict(stream=2**31)],
    ids=["seed", "stream", "replica", "seed_hi_word", "stream_hi_bit"],
)
def test_different_seed_stream_replica_give_different_draws(name, other):
    d = DISTS[name]
    base = dict(seed=1, stream=0, replica=0)
    a = d.sample(2000, **base)
    b = d.sample(2000, **{**base, **other})
    assert a.tobytes() != b.tobytes()
    if name not in ("empirical", "block_bootstrap"):
        # Continuous laws: essentially no coincidences between independent streams.
        assert np.mean(a == b) < 0.01


def test_streams_are_not_shifted_copies_of_each_other():
    """Neighbouring streams/replicas must not be the same sequence offset by
    a few draws (a classic mistake when packing the counter)."""
    d = ace.Exponential(1.0)
    a = d.sample(4000, seed=1, stream=0)
    for other in (
        d.sample(4000, seed=1, stream=1),
        d.sample(4000, seed=1, replica=1),
        d.sample(4000, seed=2),
    ):
        assert np.intersect1d(a, other).size == 0


def test_seed_uses_all_64_bits():
    d = ace.Exponential(1.0)
    lo = d.sample(100, seed=5)
    hi = d.sample(100, seed=5 + 2**40)
    assert np.intersect1d(lo, hi).size == 0


def test_draws_do_not_depend_on_the_distribution_object():
    """Two equal distributions built separately draw the same numbers."""
    a = ace.Weibull(0.5, 3.0).sample(1000, seed=8, stream=4)
    b = ace.Weibull(0.5, 3.0).sample(1000, seed=8, stream=4)
    assert a.tobytes() == b.tobytes()


def test_job_streams_are_distinct():
    """Every (job, purpose) pair draws from its own stream."""
    ids = {ace.job_stream(j, p) for j in range(4) for p in ace.PURPOSES}
    assert len(ids) == 4 * len(ace.PURPOSES)
