"""The fused discrete Gaussian round of :mod:`gpuppdp.kernels.dp_gaussian` (every path of
:func:`gpuppdp.dp.gaussian.discrete_gaussian_noise`), its host and CUDA forms (the latter under
Numba's simulator), against a reference of its documented keystream written out here in
Python integers."""

import math

import numpy as np
import pytest

from gpuppdp.backend import cpu_backend
from gpuppdp.dp import RandomSource
from gpuppdp.dp.coins import MAX_GAMMA
from gpuppdp.dp.gaussian import _gaussian_sampler, discrete_gaussian_noise
from gpuppdp.kernels import dp_gaussian, dp_noise

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")


def reference_round(key, n0, n1, base, m, sampler):
    """Proposals by the noise kernel's serial form on the first blocks; value ``j``'s coin
    from words ``2j, 2j + 1`` after them, continued on the extension stream; the exact
    comparison of ``u`` with ``p = fl(exp(-γ))`` in Python integers."""
    tables = sampler.laplace.tables
    y = dp_noise.noise_int_forms(np.zeros(m, np.int64), key, n0, n1, base, tables, "serial")
    coin_base = base + dp_noise.noise_blocks(m, tables[0].shape[0])
    words = dp_noise.keystream_forms(key, n0, n1, coin_base, 32 * -(-m // 16), "serial")
    accept = []
    for j in range(m):
        d = abs(float(y[j])) - sampler.center
        gamma = (d * d) / (2.0 * sampler.sigma2)
        if gamma > MAX_GAMMA:
            accept.append(0)
            continue
        frac, ex = math.frexp(math.exp(-gamma))
        mant, k = int(math.ldexp(frac, 53)), -ex
        bits = (int(words[2 * j]) << 32) | int(words[2 * j + 1])
        n_bits = 64
        if k + 53 > 64:  # the extension stream at the first coin word's index
            index = 2 * (16 * coin_base + 2 * j)
            ext = dp_noise.keystream_forms(key, n0, n1 | dp_noise.EXT_FLAG,
                                           index * 3, 48, "serial")
            for w in ext:
                bits = (bits << 32) | int(w)
            n_bits += 48 * 32
        accept.append(int((bits >> (n_bits - k - 53)) < mant))
    return y, np.array(accept, dtype=np.uint8)


@pytest.mark.parametrize("sigma2,m", [(9.0, 300), (0.3, 200)])
def test_fused_round_follows_its_documented_stream(sigma2, m):
    sampler = _gaussian_sampler(sigma2)
    key = np.random.default_rng(int(sigma2 * 10)).integers(0, 2**32, 8, dtype=np.uint32)
    y, accept = dp_gaussian.gaussian_round(cpu_backend(), key, 7, 11, 1000, m,
                                           sampler.laplace.tables, sampler.center,
                                           sampler.sigma2, MAX_GAMMA)
    ref_y, ref_accept = reference_round(key, 7, 11, 1000, m, sampler)
    np.testing.assert_array_equal(y, ref_y)
    np.testing.assert_array_equal(accept, ref_accept)
    assert 0 < accept.sum() < m  # both outcomes occur


@pytest.mark.parametrize("sigma2,m", [(9.0, 61), (0.3, 40), (2000.0, 17)])
def test_cuda_form_follows_the_same_stream_under_the_simulator(sigma2, m):
    """The CUDA kernel (a thread per 16 values; conftest runs Numba's simulator) reads the
    proposals' and the coins' blocks as the host form does: the reference's bits."""
    sampler = _gaussian_sampler(sigma2)
    tables = sampler.laplace.tables
    trials = tables[0].shape[0]
    key = np.random.default_rng(m).integers(0, 2**32, 8, dtype=np.uint32)
    y, accept = np.empty(m, np.int64), np.empty(m, np.uint8)
    dp_noise._launch(dp_gaussian._gaussian_cuda, -(-m // dp_noise.GROUP), y, accept, key, 3, 5,
                     200, 200 + dp_noise.noise_blocks(m, trials), dp_noise.noise_rows(trials),
                     trials, *tables, sampler.center, 2.0 * sampler.sigma2, MAX_GAMMA)
    ref_y, ref_accept = reference_round(key, 3, 5, 200, m, sampler)
    np.testing.assert_array_equal(y, ref_y)
    np.testing.assert_array_equal(accept, ref_accept)


def test_backends_give_identical_discrete_gaussian_noise_for_one_seed(backend):
    """The same seed, the same draws on every backend (the simulator tier runs the CUDA form
    itself for small inputs, the GPU tier the GPU)."""
    for n, sigma in ((50, 3.0), (33, 0.7)):
        cpu = discrete_gaussian_noise(n, sigma=sigma, random=RandomSource("cpu", seed=4))
        other = discrete_gaussian_noise(n, sigma=sigma, random=RandomSource(backend, seed=4))
        np.testing.assert_array_equal(backend.to_host(other), cpu)


def test_undecided_coins_read_the_extension_stream():
    """``u``'s first 64 bits zero (probability 2**-64 in a run): the tail decides, bit-exact
    against Python integers, for small ``p`` at every bit position."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        k = int(rng.integers(0, 1000))
        mant = int(rng.integers(2**52, 2**53))
        words = rng.integers(0, 2**32, 50, dtype=np.uint32)
        zero = int(rng.integers(0, k + 2))  # u's leading zero bits: around k
        for b in range(min(zero, 1600)):
            words[b // 32] &= np.uint32(~(1 << (31 - b % 32)) & 0xFFFFFFFF)
        u = 0
        for w in words:
            u = (u << 32) | int(w)
        expected = int((u >> (1600 - k - 53)) < mant)
        assert dp_gaussian._coin_tail(words, k, mant) == expected
