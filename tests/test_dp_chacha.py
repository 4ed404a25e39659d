"""The DP randomness: ChaCha20 against RFC 8439, exact Bernoulli trials, the CPU and CUDA
forms of the fused noise kernel (the CUDA form under Numba's simulator, in a subprocess; the
CPU's vectorized form against its scalar reference), fork safety."""

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from gpuppdp.dp import (
    GeometricMechanism,
    LaplaceMechanism,
    RandomSource,
    default_source,
    randomness,
)
from gpuppdp.kernels import dp_noise as k

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")

KEY = np.frombuffer(bytes(range(32)), dtype="<u4").astype(np.uint32)  # 00:01:...:1f
# RFC 8439 2.3.2: counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00
BLOCK_232 = ("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
             "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
# RFC 8439 2.4.2: counter 1, nonce 00:00:00:00:00:00:00:4a:00:00:00:00
SUNSCREEN = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip "
             b"for the future, sunscreen would be it.")
CIPHER_242 = ("6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
              "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
              "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
              "5af90bbf74a35be6b40b8eedf2785e42874d")
# RFC 8439 A.1, test vector #1: zero key, zero nonce, counter 0
ZERO_BLOCK = ("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
              "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")

# words 12-15 of the state: the keystream kernels read words 12-13 as a 64-bit block counter
# and 14-15 as the nonce, so RFC 8439's 32-bit counter and 96-bit nonce map to
# base = counter | nonce[0] << 32, n0 = nonce[1], n1 = nonce[2]
RFC_232 = dict(base=1 | 0x09000000 << 32, n0=0x4A000000, n1=0)
RFC_242 = dict(base=1, n0=0x4A000000, n1=0)


def serialize(words) -> str:
    return np.asarray(words, dtype="<u4").tobytes().hex()


def test_block_function_matches_rfc8439_2_3_2():
    out = np.empty(16, dtype=np.uint32)
    k.chacha20_block(KEY, 1, 0x09000000, 0x4A000000, 0, out)
    assert serialize(out) == BLOCK_232
    k.chacha20_block(np.zeros(8, np.uint32), 0, 0, 0, 0, out)
    assert serialize(out) == ZERO_BLOCK
    k.chacha20_block(KEY, 2, 0x09000000, 0x4A000000, 0, out)  # the test has teeth
    assert serialize(out) != BLOCK_232


@pytest.mark.parametrize("form", ["serial", "parallel", "lanes"])
def test_keystream_kernels_match_rfc8439_2_4_2(form):
    words = k.keystream_forms(KEY, RFC_242["n0"], RFC_242["n1"], RFC_242["base"], 32, form)
    stream = bytes.fromhex(serialize(words))[:len(SUNSCREEN)]
    cipher = bytes(a ^ b for a, b in zip(SUNSCREEN, stream))
    assert cipher.hex() == CIPHER_242
    block = k.keystream_forms(KEY, RFC_232["n0"], RFC_232["n1"], RFC_232["base"], 16, form)
    assert serialize(block) == BLOCK_232


def test_random_source_draws_the_keystream_in_order():
    """Consecutive draws use consecutive blocks of one keystream (no block used twice)."""
    src = RandomSource("cpu", seed=7)
    first, second = src.random_words(20), src.random_words(16)
    again = RandomSource("cpu", seed=7)
    key, n0, n1, _ = again._reserve(0)
    stream = k.keystream_forms(key, n0, n1, 0, 64, "serial")
    np.testing.assert_array_equal(first, stream[:20])
    np.testing.assert_array_equal(second, stream[32:48])  # the next call starts a new block


# --- exact Bernoulli trials --------------------------------------------------------------

@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(1, 2**16), Fraction(12345, 2**16),
                               Fraction(1, 2), Fraction(0), Fraction(40503, 2**16)])
def test_trials_are_exact_by_enumeration_at_a_reduced_bit_width(p):
    """Every uniform of 4 + 3 * 4 bits through the kernels' comparison functions: exactly
    ``floor(p * 2**16)`` of the 2**16 inputs fire, i.e. ``P = p`` when ``p`` has 16 bits
    (the full-width kernels read 16 + 48 * 32 bits, enough for any float64 ``p``)."""
    q = float(Fraction(int(p * 2**16), 2**16))
    p_first, ptab, invert = k.bernoulli_tables([q], first_bits=4, ext_bits=4, ext_words=3)
    u = np.arange(2**16)
    fired = 0
    for c in range(16):
        r = k.first_compare(c, p_first[0])
        if r >= 0:
            fired += (r ^ invert[0]) * 2**12
            continue
        for rest in range(2**12):
            ext = np.array([rest >> 8, (rest >> 4) & 15, rest & 15], dtype=np.uint32)
            fired += k.resolve_tie(ext, 3, ptab, 0) ^ invert[0]
    assert fired == int(p * 2**16) == int(np.sum(u < q * 2**16))
    if 0 < q < 0.5:  # the complemented trial fires on the other inputs
        flipped = k.bernoulli_tables([1.0 - q], first_bits=4, ext_bits=4, ext_words=3)
        assert flipped[2][0] == 1 and flipped[0][0] == p_first[0]


def test_tables_hold_the_whole_expansion_of_tiny_probabilities():
    for p in (5e-324, 2.0**-1000, 1 / 3, 0.5, 4.248354255291589e-18):
        p_first, ptab, _ = k.bernoulli_tables([p])
        value = int(p_first[0])
        for w in ptab[0]:
            value = value << 32 | int(w)
        assert Fraction(value, 2 ** (16 + 32 * 48)) == Fraction(p)
    with pytest.raises(ValueError, match="more than 20 bits"):
        k.bernoulli_tables([1 / 3], first_bits=4, ext_bits=4, ext_words=4)


def _tie_probability(chunk: int, rest_bits: int) -> float:
    """A probability whose first 16 bits are ``chunk`` (forcing a tie with it)."""
    return (chunk + rest_bits / 2**20) / 2**16


def _tie_base(key=None, n0=5, n1=6) -> int:
    """The first block from 1000 on whose word 0 has both halves below 0x8000 (so that
    probabilities built from them are <= 1/2 and run uncomplemented)."""
    key = np.arange(8, dtype=np.uint32) * 0x01010101 if key is None else key
    buf = np.empty(16, np.uint32)
    for base in range(1000, 2000):
        k.chacha20_block(key, base, 0, n0, n1, buf)
        if int(buf[0]) & 0x80008000 == 0:
            return base
    raise AssertionError("no such block")  # pragma: no cover


def _reference_trial(key, n0, n1, block, word, half, p) -> int:
    """``u < p`` in Python integers, ``u`` read as the kernels read it."""
    buf = np.empty(16, np.uint32)
    k.chacha20_block(key, block & 0xFFFFFFFF, block >> 32, n0, n1, buf)
    u = (int(buf[word]) >> (16 * half)) & 0xFFFF
    ext_index = (block * 16 + word) * 2 + half
    for m in range(k.EXT_BLOCKS):
        index = ext_index * k.EXT_BLOCKS + m
        k.chacha20_block(key, index & 0xFFFFFFFF, index >> 32, n0, n1 | k.EXT_FLAG, buf)
        for w in buf:
            u = u << 32 | int(w)
    return int(Fraction(u, 2 ** (16 + 32 * k.EXT_WORDS)) < Fraction(p))


def test_a_tied_trial_reads_the_extension_stream():
    """Force a tie (``p`` shares its first 16 bits with the chunk) and compare the kernel
    with a big-integer reference of ``u < p``."""
    key = np.arange(8, dtype=np.uint32) * 0x01010101
    n0, n1, base = 5, 6, _tie_base()
    buf = np.empty(16, np.uint32)
    k.chacha20_block(key, base, 0, n0, n1, buf)
    chunk = int(buf[0]) & 0xFFFF
    assert chunk < 0x8000  # p <= 1/2: run as is (not complemented), so it ties
    for rest in (1, 2**19, 2**20 - 1):
        p = _tie_probability(chunk, rest)
        got = k.bernoulli_forms(key, n0, n1, base, 1, k.bernoulli_tables([p]), "serial")[0]
        assert got == _reference_trial(key, n0, n1, base, 0, 0, p)


def test_bernoulli_frequencies(backend):
    src = RandomSource(backend, seed=4)
    for p in (0.1, 0.75, 1e-300):
        hits = backend.to_host(src.bernoulli(p, 100_000))
        assert hits.dtype == bool
        assert hits.mean() == pytest.approx(p, abs=0.004)
    assert not backend.to_host(src.bernoulli(0.0, 1000)).any()
    assert backend.to_host(src.bernoulli(1.0, 1000)).all()


# --- the CPU and CUDA forms: identical bits --------------------------------------------

SIMULATOR_SCRIPT = textwrap.dedent("""
    import json, os, sys
    assert os.environ["NUMBA_ENABLE_CUDASIM"] == "1"
    import numpy as np
    from numba import config
    from gpuppdp.kernels import dp_noise as k
    from gpuppdp.dp.mechanisms import _sampler
    assert config.ENABLE_CUDASIM
    out = {}
    key = np.frombuffer(bytes(range(32)), dtype="<u4").astype(np.uint32)
    out["rfc232"] = np.asarray(k.keystream_forms(key, 0x4A000000, 0, 1 | 0x09000000 << 32, 16,
                                                 "cuda"), dtype="<u4").tobytes().hex()
    out["rfc242"] = np.asarray(k.keystream_forms(key, 0x4A000000, 0, 1, 32, "cuda"),
                               dtype="<u4").tobytes().hex()
    key = np.arange(8, dtype=np.uint32) * 0x01010101
    n0, n1, base = 5, 6, int(sys.argv[1])
    same = {}
    for name, rate in (("geometric", 1.0), ("laplace", 1 / 4097), ("tiny", 40.0)):
        tables = _sampler(rate).tables
        x = np.arange(-20, 21, dtype=np.int64) * 3
        same[name + "-int"] = bool(np.array_equal(
            k.noise_int_forms(x, key, n0, n1, base, tables, "serial"),
            k.noise_int_forms(x, key, n0, n1, base, tables, "cuda")))
        xf = np.linspace(-7.3, 9.1, 37)
        same[name + "-grid"] = bool(np.array_equal(
            k.noise_grid_forms(xf, key, n0, n1, base, tables, 2.0**-3, "serial"),
            k.noise_grid_forms(xf, key, n0, n1, base, tables, 2.0**-3, "cuda")))
    buf = np.empty(16, np.uint32)
    k.chacha20_block(key, base, 0, n0, n1, buf)
    # trial 0 of element 0 tied with its chunk: the extension stream decides
    p = ((int(buf[0]) & 0xFFFF) + 0.25) / 2**16
    tables = k.bernoulli_tables([p, 0.3])
    same["bernoulli-tie"] = bool(np.array_equal(
        k.bernoulli_forms(key, n0, n1, base, 40, tables, "serial"),
        k.bernoulli_forms(key, n0, n1, base, 40, tables, "cuda")))
    # a noise trial tied: sign, nonzero, then bit 0 uses the high half of word 0 of row 0
    g = _sampler(1.0)
    probs = list(g.probabilities)
    probs[1] = ((int(buf[0]) >> 16) + 0.5) / 2**16  # 'nonzero' of element 0, row 0
    tables = k.bernoulli_tables(probs, g.invert)
    x = np.zeros(20, dtype=np.int64)
    same["noise-tie"] = bool(np.array_equal(
        k.noise_int_forms(x, key, n0, n1, base, tables, "serial"),
        k.noise_int_forms(x, key, n0, n1, base, tables, "cuda")))
    out["same"] = same
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def simulator_run():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-c", SIMULATOR_SCRIPT, str(_tie_base())], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cuda_form_matches_rfc8439_under_the_simulator(simulator_run):
    assert simulator_run["rfc232"] == BLOCK_232
    stream = bytes.fromhex(simulator_run["rfc242"])[:len(SUNSCREEN)]
    assert bytes(a ^ b for a, b in zip(SUNSCREEN, stream)).hex() == CIPHER_242


def test_cuda_form_gives_the_cpu_forms_bits_under_the_simulator(simulator_run):
    assert simulator_run["same"] == dict.fromkeys(simulator_run["same"], True)
    assert len(simulator_run["same"]) == 8


def test_cpu_forms_agree():
    key = np.arange(8, dtype=np.uint32) * 7
    tables = LaplaceMechanism(epsilon=0.5, sensitivity=1.0).sampler.tables
    x = np.linspace(-1e3, 1e3, 70_001)  # > 4096 groups: the thread pool runs the tasks
    serial = k.noise_grid_forms(x, key, 1, 2, 3, tables, 2.0**-12, "serial")
    parallel = k.noise_grid_forms(x, key, 1, 2, 3, tables, 2.0**-12, "parallel")
    np.testing.assert_array_equal(serial, parallel)


def _random_stream(rng, carry=False):
    key = rng.integers(0, 2**32, 8, dtype=np.uint64).astype(np.uint32)
    n0, n1 = (int(v) for v in rng.integers(0, 2**31, 2))
    # a base just below 2**32 makes the block counter carry into word 13 inside the call
    base = 2**32 - int(rng.integers(1, 40)) if carry else int(rng.integers(0, 2**50))
    return key, n0, n1, base


@pytest.mark.parametrize("seed", range(6))
def test_vectorized_keystream_gives_the_scalar_words(seed):
    """The SIMD keystream (8 blocks a pass) is the scalar block function's, word for word, on
    random keys, nonces, counters and lengths (most not a multiple of 8 blocks)."""
    rng = np.random.default_rng(seed)
    for n_words in (1, 15, 16, 17, 127, 128, 129, 16 * 8 * 3 + 5, int(rng.integers(1, 5000))):
        key, n0, n1, base = _random_stream(rng, carry=n_words % 2 == 1)
        np.testing.assert_array_equal(k.keystream_forms(key, n0, n1, base, n_words, "lanes"),
                                      k.keystream_forms(key, n0, n1, base, n_words, "serial"))


def test_vectorized_keystream_over_many_tasks():
    key, n0, n1, base = _random_stream(np.random.default_rng(7), carry=True)
    n_words = 16 * (2 * k._TASK_UNITS + 77) + 9  # three tasks on the pool, a ragged end
    np.testing.assert_array_equal(k.keystream_forms(key, n0, n1, base, n_words, "lanes"),
                                  k.keystream_forms(key, n0, n1, base, n_words, "serial"))


def _ties(key, n0, n1, base, n, tables) -> int:
    """How many trials of a noise call over ``n`` values tie on their first 16 bits."""
    p_first = tables[0]
    trials = p_first.shape[0]
    rows = k.noise_rows(trials)
    groups = -(-n // k.GROUP)
    words = k.keystream_forms(key, n0, n1, base, 16 * groups * rows, "serial").astype(np.int64)
    words = words.reshape(groups, rows, 16)
    chunks = np.stack([words & 0xFFFF, words >> 16], axis=2).reshape(groups, 2 * rows, 16)
    valid = np.arange(groups * 16).reshape(groups, 1, 16) < n
    return int(((chunks[:, 1:trials, :] == p_first[1:, None]) & valid).sum())


@pytest.mark.parametrize("seed", range(3))
def test_vectorized_noise_gives_the_scalar_noise(seed):
    """The fused kernels' task form (SIMD keystream, trials vectorized over a group, ties
    settled apart) gives the scalar form's values, ties included."""
    rng = np.random.default_rng(100 + seed)
    key, n0, n1, base = _random_stream(rng, carry=seed == 0)
    tables = LaplaceMechanism(epsilon=float(rng.uniform(0.05, 3.0)),
                              sensitivity=1.0).sampler.tables
    n = 2 * 16 * k._TASK_UNITS + int(rng.integers(1, 16))  # three tasks, a ragged last group
    assert _ties(key, n0, n1, base, n, tables) > 0  # the rare path is exercised
    x = rng.normal(0.0, 1e3, n)
    np.testing.assert_array_equal(
        k.noise_grid_forms(x, key, n0, n1, base, tables, 2.0**-12, "lanes"),
        k.noise_grid_forms(x, key, n0, n1, base, tables, 2.0**-12, "serial"))
    xi = rng.integers(-(2**40), 2**40, n)
    np.testing.assert_array_equal(k.noise_int_forms(xi, key, n0, n1, base, tables, "lanes"),
                                  k.noise_int_forms(xi, key, n0, n1, base, tables, "serial"))
    small = int(rng.integers(1, 200))  # the calling thread alone
    np.testing.assert_array_equal(
        k.noise_int_forms(xi[:small], key, n0, n1, base, tables, "lanes"),
        k.noise_int_forms(xi[:small], key, n0, n1, base, tables, "serial"))


@pytest.mark.parametrize("p", [0.3, 0.5 + 2.0**-20, 1e-9])
def test_vectorized_bernoulli_gives_the_scalar_trials(p):
    key, n0, n1, base = _random_stream(np.random.default_rng(int(p * 1e6)), carry=True)
    tables = k.bernoulli_tables([p])
    big = 2 * 32 * k._TASK_UNITS + 5
    words = k.keystream_forms(key, n0, n1, base, 16 * k.bernoulli_blocks(big), "serial")
    chunks = np.stack([words & 0xFFFF, words >> 16], axis=1).reshape(-1)[:big]
    assert (chunks == tables[0][0]).sum() > 0  # a tied trial: the rare path is exercised
    for n in (1, 31, 33, big):
        np.testing.assert_array_equal(k.bernoulli_forms(key, n0, n1, base, n, tables, "lanes"),
                                      k.bernoulli_forms(key, n0, n1, base, n, tables, "serial"))


def test_backends_give_identical_noise_for_one_seed(backend):
    """The same seed gives the same key, hence the same noise, on every backend (the
    simulator tier runs the CUDA form itself for these small inputs; the GPU tier the GPU)."""
    x = np.arange(50, dtype=np.int64)
    cpu = GeometricMechanism(epsilon=0.3).release(x, random=RandomSource("cpu", seed=9))
    other = GeometricMechanism(epsilon=0.3).release(x, random=RandomSource(backend, seed=9))
    np.testing.assert_array_equal(backend.to_host(other), cpu)
    xf = np.linspace(-5, 5, 33)
    mech = LaplaceMechanism(epsilon=2.0, sensitivity=1.0)
    cpu = mech.release(xf, random=RandomSource("cpu", seed=9))
    other = mech.release(xf, random=RandomSource(backend, seed=9))
    np.testing.assert_array_equal(backend.to_host(other), cpu)


# --- fork safety ------------------------------------------------------------------------

def _draw_in_children(source, n_children=2):
    """Fork ``n_children`` workers that each draw 16 words from ``source``."""
    results = []
    for _ in range(n_children):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: draw, report, leave without running any test machinery
            try:
                words = np.asarray(source.random_words(16), dtype=np.uint32)
                os.write(write, words.tobytes())
            finally:
                os._exit(0)
        os.close(write)
        data = b""
        while len(data) < 64:
            chunk = os.read(read, 64 - len(data))
            if not chunk:
                break
            data += chunk
        os.close(read)
        os.waitpid(pid, 0)
        results.append(data)
    return results


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_workers_draw_different_noise():
    source = RandomSource("cpu")
    source.random_words(4)  # keyed and used in the parent
    a, b = _draw_in_children(source)
    mine = np.asarray(source.random_words(16), dtype=np.uint32).tobytes()
    assert len(a) == len(b) == 64
    assert len({a, b, mine}) == 3  # the children re-keyed: no shared noise
    shared = default_source("cpu")
    shared.random_words(1)
    c, d = _draw_in_children(shared)
    assert c != d


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_seeded_sources_stay_deterministic_across_fork():
    source = RandomSource("cpu", seed=11)
    source.random_words(4)
    a, b = _draw_in_children(source)
    assert a == b  # deterministic by request (and not private)


def test_every_source_rekeys_in_a_new_process(monkeypatch):
    source = RandomSource("cpu")
    before = source.key_fingerprint
    source.random_words(1)
    assert source.key_fingerprint == before
    monkeypatch.setattr(randomness.os, "getpid", lambda: -12345)
    source.random_words(1)
    assert source.key_fingerprint != before
    seeded = RandomSource("cpu", seed=1)
    fingerprint = seeded.key_fingerprint
    monkeypatch.setattr(randomness.os, "getpid", lambda: -54321)
    seeded.random_words(1)
    assert seeded.key_fingerprint == fingerprint


def test_seeds_derive_the_key_and_warn():
    from gpuppdp.dp import SeededNoiseWarning

    with pytest.warns(SeededNoiseWarning):
        a = RandomSource("cpu", seed=1)
    b, c = RandomSource("cpu", seed=1), RandomSource("cpu", seed=2)
    assert a.key_fingerprint == b.key_fingerprint != c.key_fingerprint
    assert RandomSource("cpu").key_fingerprint != RandomSource("cpu").key_fingerprint


def test_keystream_words_are_uniform():
    words = RandomSource("cpu", seed=3).random_words(200_000).astype(np.int64)
    for bit in (0, 7, 16, 31):
        assert ((words >> bit) & 1).mean() == pytest.approx(0.5, abs=0.005)
    counts = np.bincount(words >> 28, minlength=16)
    expected = len(words) / 16
    assert ((counts - expected) ** 2 / expected).sum() < 50  # chi-square, 15 dof


def test_threads_never_share_keystream_blocks():
    import threading

    source = RandomSource("cpu")
    draws = []
    barrier = threading.Barrier(6)

    def worker():
        barrier.wait()
        for _ in range(20):
            draws.append(np.asarray(source.random_words(48)).reshape(-1, 16))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    blocks = np.concatenate(draws)
    assert len(blocks) == 6 * 20 * 3
    assert len({b.tobytes() for b in blocks}) == len(blocks)  # every block drawn once
