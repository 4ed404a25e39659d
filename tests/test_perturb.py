"""Perturbative masking (gpuppdp.perturb) on every backend: each method against a direct
loop over the same random draws, and its properties (kept multisets, moves bounded by the
rank window, invariant PRAM frequencies, noise covariance)."""

import numpy as np
import pytest

from gpuppdp.errors import InputError
from gpuppdp.kernels import swap
from gpuppdp.perturb import (add_noise, bottom_code, invariant_pram_matrix, normal,
                             permute_within, pram, random_source, rank_swap, top_code, uniform)


def _host(backend, a):
    return backend.to_host(a)


def test_draws_are_uniform_and_normal(backend):
    src = random_source(backend, seed=1)
    u = _host(backend, uniform(src, 200_000))
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    z = _host(backend, normal(src, (100_001,)))
    assert z.shape == (100_001,) and np.isfinite(z).all()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1.0) < 0.02
    assert abs(np.mean(np.abs(z) < 1.96) - 0.95) < 0.005
    # the same seed gives the same draws; another seed others
    again = _host(backend, uniform(random_source(backend, seed=1), 10))
    np.testing.assert_array_equal(again, u[:10])
    assert not np.array_equal(_host(backend, uniform(random_source(backend, seed=2), 10)), again)


def test_additive_noise_is_the_scaled_draws(backend):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5_000, 3)) * [1.0, 10.0, 100.0]
    got = _host(backend, add_noise(backend.asarray(x), 50, seed=9, backend=backend))
    z = _host(backend, normal(random_source(backend, seed=9), x.shape))
    want = x + z * np.sqrt(0.5 * x.var(axis=0, ddof=1))  # a device's variance may differ in
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * float(x.std()))  # an ulp
    one = _host(backend, add_noise(backend.asarray(x[:, 1]), 50, seed=9, backend=backend))
    assert one.shape == (5_000,)


def test_correlated_noise_has_the_datas_covariance(backend):
    rng = np.random.default_rng(4)
    base = rng.normal(size=(200_000, 2))
    x = np.column_stack([base[:, 0], 0.8 * base[:, 0] + 0.6 * base[:, 1]]) * [2.0, 5.0]
    got = _host(backend, add_noise(backend.asarray(x), 30, method="correlated", seed=5,
                                   backend=backend))
    noise_cov = np.cov(got - x, rowvar=False)
    np.testing.assert_allclose(noise_cov, 0.3 * np.cov(x, rowvar=False), rtol=0.03, atol=0.02)
    corr = np.corrcoef(got, rowvar=False)[0, 1]
    assert abs(corr - np.corrcoef(x, rowvar=False)[0, 1]) < 0.01  # correlation kept


def _rank_swap_reference(x, p, bits):
    """Direct loops: ranks in blocks of ceil(p n / 100), each block's ranks ordered by the
    random bits (those a block number leaves of 63), consecutive ones paired and swapped."""
    n = len(x)
    width = max(2, -(-int(round(p * n)) // 100))
    kept = 63 - max(1, int((n - 1) // width).bit_length())
    by_rank = np.argsort(x, kind="stable")
    out = x.copy()
    for start in range(0, n, width):
        ranks = list(range(start, min(start + width, n)))
        ranks.sort(key=lambda r: (int(bits[r]) >> (63 - kept), r))
        for a, b in zip(ranks[0::2], ranks[1::2]):
            out[by_rank[a]], out[by_rank[b]] = x[by_rank[b]], x[by_rank[a]]
    return out


@pytest.mark.parametrize("p", [1, 5, 37.5, 100])
def test_rank_swap_equals_direct_loops_and_keeps_the_multiset(backend, p):
    rng = np.random.default_rng(int(p * 10))
    x = rng.integers(0, 60, size=1_001).astype(np.float64)  # ties among the ranks
    got = _host(backend, rank_swap(backend.asarray(x), p, seed=11, backend=backend))
    keys = _host(backend, random_source(backend, seed=11).random_bits(len(x)))
    np.testing.assert_array_equal(got, _rank_swap_reference(x, p, keys))
    np.testing.assert_array_equal(np.sort(got), np.sort(x))
    rank = np.empty(len(x), np.int64)
    rank[np.argsort(x, kind="stable")] = np.arange(len(x))
    width = max(2, -(-int(round(p * len(x))) // 100))
    # a record's new value is the value of a record at most width - 1 ranks away
    sorted_x = np.sort(x)
    lo = sorted_x[np.maximum(rank - width + 1, 0)]
    hi = sorted_x[np.minimum(rank + width - 1, len(x) - 1)]
    assert ((got >= lo) & (got <= hi)).all()
    distinct = rng.permutation(len(x)).astype(np.float64)  # only a block's odd one stays
    moved = _host(backend, rank_swap(backend.asarray(distinct), p, seed=11, backend=backend))
    assert (moved == distinct).sum() <= -(-len(x) // width)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32, np.uint64, np.int16])
def test_rank_order_in_chunks_is_numpys_stable_order(monkeypatch, dtype):
    monkeypatch.setattr(swap, "SORT_CHUNK_ROWS", 1_000)  # several chunks a radix pass
    monkeypatch.setattr(swap.numba, "get_num_threads", lambda: 5)
    rng = np.random.default_rng(3)
    x = rng.integers(-40, 40, size=5_003).astype(dtype)  # many ties (uint64: wrapped, large)
    if x.dtype.kind == "f":
        x[::7] = -0.0  # equal to 0.0, ordered by position
        x[1::11], x[2::13] = -np.inf, np.inf
        x[3::17] = rng.normal(size=len(x[3::17])) * 1e-310  # subnormals of both signs
    np.testing.assert_array_equal(swap.stable_argsort(x), np.argsort(x, kind="stable"))
    same = np.full(1_000, 7, dtype=dtype)  # every digit shared: no pass, the positions
    np.testing.assert_array_equal(swap.stable_argsort(same), np.arange(1_000))


@pytest.mark.parametrize("n, p, task_rows", [(4_001, 5, 1_000), (3_000, 100, 1 << 16)])
def test_rank_swap_orders_ties_of_the_random_bits_by_rank(monkeypatch, n, p, task_rows):
    """Keystream words of few values: the random bits of many ranks share their leading bits
    (or all of them), which the block's sort must order by the rest, then by rank."""
    monkeypatch.setattr(swap, "SHUFFLE_TASK_ROWS", task_rows)  # 1,000: 4 blocks a task
    rng = np.random.default_rng(8)
    x = rng.integers(0, 50, size=n).astype(np.float64)
    words = np.empty(2 * n, dtype=np.uint32)
    words[0::2], words[1::2] = rng.integers(0, 2, size=n), rng.integers(0, 1 << 12, size=n)
    bits = (words[0::2].astype(np.int64) << 31) | (words[1::2].astype(np.int64) >> 1)
    width = max(2, -(-int(round(p * n)) // 100))
    drop = max(1, int((n - 1) // width).bit_length())
    sources = swap.swap_sources(np.argsort(x, kind="stable"), words, width, drop)
    np.testing.assert_array_equal(x[sources], _rank_swap_reference(x, p, bits))


def test_pram_follows_the_matrix_draw_by_draw(backend):
    rng = np.random.default_rng(6)
    k = 4
    matrix = rng.dirichlet(np.ones(k), size=k)
    codes = rng.integers(0, k, size=3_000).astype(np.int32)
    got = _host(backend, pram(backend.asarray(codes), matrix, seed=2, backend=backend))
    u = _host(backend, uniform(random_source(backend, seed=2), len(codes)))
    want = np.array([min(int(np.sum(np.cumsum(matrix[c]) <= v)), k - 1)
                     for c, v in zip(codes, u)])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    same = _host(backend, pram(backend.asarray(codes), np.eye(k), seed=2, backend=backend))
    np.testing.assert_array_equal(same, codes)


def test_invariant_pram_keeps_the_frequencies_in_expectation(backend):
    freq = np.array([5_000, 3_000, 1_500, 500, 0])
    r = invariant_pram_matrix(freq, 0.7)
    np.testing.assert_allclose(r.sum(axis=1), 1.0)
    pi = freq / freq.sum()
    np.testing.assert_allclose(pi @ r, pi, atol=1e-12)          # invariant
    assert r[4, 4] == 1.0 and (r[:4, 4] == 0).all()  # nothing moves to an absent category
    # by hand: pi = (3/4, 1/4), P = [[.8, .2], [.2, .8]]: Q = [[12/13, 1/13], [3/7, 4/7]]
    np.testing.assert_allclose(invariant_pram_matrix([3, 1], 0.8),
                               [[0.8 * 12 / 13 + 0.2 * 3 / 7, 0.8 / 13 + 0.2 * 4 / 7],
                                [0.2 * 12 / 13 + 0.8 * 3 / 7, 0.2 / 13 + 0.8 * 4 / 7]])
    codes = np.repeat(np.arange(5), freq)
    counts = np.zeros(5)
    runs = 20
    src = random_source(backend, seed=8)
    for _ in range(runs):
        counts += np.bincount(_host(backend, pram(backend.asarray(codes), r, source=src)),
                              minlength=5)
    # chi-square of the summed released counts against the original ones (4 d.o.f.;
    # the variance of a count under PRAM is at most its binomial variance)
    expected = freq[:4] * runs
    chi2 = float(np.sum((counts[:4] - expected) ** 2 / expected))
    assert chi2 < 18.5  # the 0.999 quantile of chi-square with 4 degrees of freedom
    assert counts[4] == 0


def test_top_and_bottom_coding(backend):
    x = np.array([1, 5, 9, 12, 40], dtype=np.int64)
    np.testing.assert_array_equal(_host(backend, top_code(backend.asarray(x), 10)),
                                  [1, 5, 9, 10, 10])
    got = _host(backend, top_code(backend.asarray(x), 10, 10.5))
    assert got.dtype == np.float64 and got.tolist() == [1, 5, 9, 10.5, 10.5]
    np.testing.assert_array_equal(_host(backend, bottom_code(backend.asarray(x), 5, 0)),
                                  [0, 5, 9, 12, 40])


def test_permutation_within_groups_equals_direct_loops(backend):
    rng = np.random.default_rng(9)
    groups = rng.integers(0, 30, size=2_000)
    values = rng.integers(0, 1_000, size=2_000)
    got = _host(backend, permute_within(backend.asarray(values), backend.asarray(groups),
                                        seed=4, backend=backend))
    keys = _host(backend, random_source(backend, seed=4).random_bits(len(values)))
    used = int(groups.max()).bit_length()  # the random bits below the group's
    want = np.empty_like(values)
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        shuffled = sorted(rows, key=lambda r: (int(keys[r]) >> used, r))
        want[rows] = values[shuffled]
    np.testing.assert_array_equal(got, want)
    for g in np.unique(groups):
        assert sorted(got[groups == g]) == sorted(values[groups == g])


def test_bad_input_is_named(backend):
    x = backend.asarray(np.arange(10.0))
    with pytest.raises(InputError, match="p must be a percentage"):
        rank_swap(x, 0, seed=1, backend=backend)
    with pytest.raises(InputError, match="noise must be a positive"):
        add_noise(x, -1, seed=1, backend=backend)
    with pytest.raises(InputError, match="method must be"):
        add_noise(x, 10, method="ROMM", seed=1, backend=backend)
    with pytest.raises(InputError, match="missing or infinite"):
        add_noise(backend.asarray(np.array([1.0, np.nan])), 10, seed=1, backend=backend)
    with pytest.raises(InputError, match="codes must lie in 0..1"):
        pram(backend.asarray(np.array([0, 2])), np.eye(2), seed=1, backend=backend)
    with pytest.raises(InputError, match="sum"):
        pram(backend.asarray(np.array([0, 1])), [[0.5, 0.4], [0, 1]], seed=1, backend=backend)
    with pytest.raises(InputError, match="non-negative integer labels"):
        permute_within(x, backend.asarray(np.full(10, -1)), seed=1, backend=backend)
    with pytest.raises(InputError, match="differ in length"):
        permute_within(x, backend.asarray(np.zeros(3, np.int64)), seed=1, backend=backend)
    with pytest.raises(InputError, match="seed or source"):
        rank_swap(x, 5, seed=1, source=random_source(backend, seed=1))
