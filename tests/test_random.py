"""Counter-based random numbers: Philox4x32-10 known answers, an independent
reference implementation, and the purity of ``Distribution.sample`` in
(seed, replica, stream, index) (DESIGN section 2)."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

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


def _ulps(a, b) -> np.ndarray:
    """Units in the last place between two float64 arrays of one sign."""
    return np.abs(
        np.asarray(a, dtype=np.float64).view(np.int64)
        - np.asarray(b, dtype=np.float64).view(np.int64)
    )


@pytest.mark.parametrize(
    ("seed", "stream", "replica"),
    [(0, 0, 0), (1, 0, 0), (12345, 7, 3), (2**40 + 17, 2**31 + 5, 2**32 - 1)],
)
def test_exponential_pins_stream_layout(seed, stream, replica):
    """Draw i of an Exponential is -mean * log(u) with u from the Philox block
    of counter (sub=0, i, stream, replica) under key = seed (philox.hpp).

    acesim's log is its own (portable_math.hpp, fdlibm's algorithm), within
    1 ulp of libm's: compare the logs, Exponential(1) giving -log(u)
    exactly, and Exponential(mean) being mean times that, exactly (IEEE
    multiplication is sign-symmetric)."""
    mean = 3600.0
    n = 64
    unit = ace.Exponential(1.0).sample(n, seed=seed, stream=stream, replica=replica)
    got = ace.Exponential(mean).sample(n, seed=seed, stream=stream, replica=replica)
    key = key_of(seed)
    expected_log = np.empty(n)
    for i in range(n):
        v = philox4x32_10_ref((0, i, stream, replica), key)
        expected_log[i] = math.log(uniform_open_ref(v[0], v[1]))
    assert _ulps(-unit, expected_log).max() <= 1
    assert got.tobytes() == (mean * unit).tobytes()


def test_exponential_stream_layout_with_first_offset():
    mean = 2.0
    first = 1_000_003
    got = ace.Exponential(mean).sample(8, seed=99, stream=5, replica=2, first=first)
    expected = [
        -mean * math.log(uniform_open_ref(*philox4x32_10_ref((0, first + i, 5, 2), key_of(99))[:2]))
        for i in range(8)
    ]
    # mean = 2 scales exactly, so the 1-ulp bound of the log carries over.
    assert _ulps(got, expected).max() <= 1


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


# --------------------------------------------------------------------------- batch path vs draw()

# Laws the batch sampler specializes (leaves, ScaleAware chains over them)
# and laws it hands to draw(), as source so that a subprocess can build them.
BATCH_CASES = {
    "constant": "ace.Constant(5.0)",
    "exponential": "ace.Exponential(10.0)",
    "weibull": "ace.Weibull(0.7, 100.0)",
    "weibull_1": "ace.Weibull(1.0, 3.0)",
    "weibull_tiny_shape": "ace.Weibull(0.02, 1.0)",  # exp over- and underflows
    "lognormal": "ace.LogNormal(1.0, 0.8)",
    "lognormal_wide": "ace.LogNormal(-3.0, 4.0)",
    "empirical": "ace.Empirical([1.0, 2.0, 3.0, 5.0, 8.0, 13.0])",
    "scale_aware_exp": "ace.ScaleAware(ace.Exponential(7.9 * 3600), ref_gpus=1024, exponent=1.0)",
    "scale_aware_lognormal": "ace.ScaleAware(ace.LogNormal(0.5, 0.3), ref_gpus=8, exponent=0.5)",
    "scale_aware_chain": (
        "ace.ScaleAware(ace.ScaleAware(ace.Weibull(0.5, 1.0), ref_gpus=64, exponent=0.7),"
        " ref_gpus=3, exponent=-1.3)"
    ),
    "scale_aware_empirical": "ace.ScaleAware(ace.Empirical([10.0, 20.0]), ref_gpus=100)",
    "gamma_small": "ace.Gamma(0.3, 2.0)",
    "gamma": "ace.Gamma(4.0, 2.0)",
    "mixture": "ace.Mixture([(0.9, ace.Exponential(1000.0)), (0.1, ace.LogNormal(2.0, 1.0))])",
    "block_bootstrap": "ace.BlockBootstrap(np.arange(1.0, 51.0), 7)",
    "replay": "ace.Replay(np.arange(1.0, 30_001.0))",
}

_SAMPLE_ALL = """
import sys
import numpy as np
import acesim as ace
cases = {cases!r}
out = {{}}
for name, src in cases.items():
    d = eval(src)
    # 5001 draws from 253: passes of 256 start mid-way and end ragged
    kwargs = dict(seed=2**33 + 5, stream=11, replica=3, first=253, gpus=640.0, threads=2)
    out[name] = d.sample(5001, **kwargs)
np.savez(sys.argv[1], **out)
"""


def _sample_all_with(mode: str, path) -> dict[str, np.ndarray]:
    env = dict(os.environ, ACESIM_CPU_SAMPLER=mode)
    package_root = str(Path(ace.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    code = _SAMPLE_ALL.format(cases=BATCH_CASES)
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def test_batch_kernels_match_draw(tmp_path):
    """sample() on the vectorized batch kernels (portable, AVX2, AVX-512:
    whichever this CPU runs) gives the same doubles as draw() per element,
    which is what the simulator and the CUDA kernels compute."""
    reference = _sample_all_with("draw", tmp_path / "draw.npz")
    for mode in ("portable", "avx2", "avx512"):
        got = _sample_all_with(mode, tmp_path / f"{mode}.npz")
        for name in BATCH_CASES:
            assert got[name].tobytes() == reference[name].tobytes(), (mode, name)


@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_single_draws_match_batch(name):
    """sample(1, first=i) (the kernels' scalar tails) against draw i of one
    long batch (their vector bodies)."""
    d = eval(BATCH_CASES[name], {"ace": ace, "np": np})
    kwargs = dict(seed=77, stream=5, replica=9, gpus=48.0)
    whole = d.sample(4000, **kwargs)
    rng = np.random.default_rng(3)
    for i in rng.choice(3980, size=40, replace=False):
        assert d.sample(1, first=int(i), **kwargs)[0].tobytes() == whole[i].tobytes()
        assert d.sample(19, first=int(i), **kwargs).tobytes() == whole[i : i + 19].tobytes()
