"""The subset-grouping kernel (gpuppdp/kernels/subsets.py) on each of its three paths -- dense
counting, the slot table, the hash table -- against pandas, for every subset of small random
tables; its array form against its Numba form."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from gpuppdp import kernels
from gpuppdp.kernels import subsets
from gpuppdp.testing import strict_backend


def naive(codes: np.ndarray, max_size: int):
    q = codes.shape[0]
    frame = pd.DataFrame(codes.T)
    groups = np.full(1 << q, -1, dtype=np.int64)
    sumsq = np.full(1 << q, -1, dtype=np.int64)
    for size in range(1, max_size + 1):
        for cols in itertools.combinations(range(q), size):
            mask = sum(1 << c for c in cols)
            sizes = frame.groupby(list(cols)).size().to_numpy()
            groups[mask], sumsq[mask] = len(sizes), int((sizes.astype(np.int64) ** 2).sum())
    return groups, sumsq


# (count_ratio, dense_limit): dense counting; slot table beyond 1,024 keys; hash table beyond
PATHS = {"dense": (1 << 20, 1 << 22), "slots": (0, 1 << 22), "hash": (0, 1)}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threads", [1, 2])
def test_every_path_equals_pandas(path, seed, threads):
    rng = np.random.default_rng(seed)
    q = int(rng.integers(2, 7))
    n = int(rng.integers(1, 1500))
    # wide columns: key spaces of pairs pass the kernel's 1,024-key floor for dense counting
    radix = rng.integers(1, 300, size=q).astype(np.int64)
    codes = np.stack([rng.integers(0, r, size=n) for r in radix]).astype(np.int32)
    max_size = int(rng.integers(1, q + 1))
    count_ratio, dense_limit = PATHS[path]
    groups, sumsq = subsets.all_subsets_njit(codes, radix, max_size, np.ones(n, np.int64),
                                             threads=threads, count_ratio=count_ratio,
                                             dense_limit=dense_limit)
    want_groups, want_sumsq = naive(codes, max_size)
    np.testing.assert_array_equal(groups, want_groups)
    np.testing.assert_array_equal(sumsq, want_sumsq)


@pytest.mark.parametrize("seed", range(6))
def test_array_form_equals_numba_form(seed):
    """The array form (the GPU's, here on NumPy and on the strict CuPy stand-in) gives the
    Numba form's numbers on the same inputs."""
    rng = np.random.default_rng(50 + seed)
    q = int(rng.integers(1, 7))
    n = int(rng.integers(1, 1500))
    radix = rng.integers(1, 300, size=q).astype(np.int64)
    codes = np.stack([rng.integers(0, r, size=n) for r in radix]).astype(np.int32)
    max_size = int(rng.integers(1, q + 1))
    want = subsets.all_subsets_njit(codes, radix, max_size, np.ones(n, np.int64))
    np.testing.assert_array_equal(want[0], naive(codes, max_size)[0])
    got = subsets.all_subsets_xp(np, list(codes), radix.tolist(), max_size)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    be = strict_backend()
    got = kernels.subset_stats(be, [be.asarray(c) for c in codes], radix, max_size)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("seed", range(4))
def test_weighted_rows_equal_the_expanded_table(seed):
    """A frequency set (distinct rows with their counts) gives the numbers of the table it
    stands for, in every form."""
    rng = np.random.default_rng(80 + seed)
    q = int(rng.integers(1, 6))
    radix = rng.integers(1, 40, size=q).astype(np.int64)
    distinct = np.unique(np.stack([rng.integers(0, r, size=400) for r in radix], axis=1),
                         axis=0).T.astype(np.int32)
    weights = rng.integers(1, 9, size=distinct.shape[1]).astype(np.int64)
    expanded = np.repeat(distinct, weights, axis=1)
    max_size = int(rng.integers(1, q + 1))
    want = naive(expanded, max_size)
    got = subsets.all_subsets_njit(distinct, radix, max_size, weights)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    be = strict_backend()
    got = kernels.subset_stats(be, [be.asarray(c) for c in distinct], radix, max_size,
                               be.asarray(weights))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
