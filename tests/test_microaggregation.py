"""MDAV microaggregation (gpuppdp.perturb.microaggregate) against a direct transcription of
Domingo-Ferrer and Mateo-Sanz's algorithm, on every backend (small tables run the CUDA kernel
under Numba's simulator on the strict stand-in), and its properties."""

import numpy as np
import pytest

from gpuppdp.errors import InputError
from gpuppdp.kernels.mdav import fixed_point_scale
from gpuppdp.perturb import microaggregate


def _standardized(x):
    n = len(x)
    mean = x.sum(axis=0) / n  # any order: the test tables are small integers
    sd = np.sqrt(((x - mean) ** 2).sum(axis=0) / (n - 1))
    return (x - mean) / np.where(sd > 0, sd, 1.0)


def _mdav_reference(z, k):
    """The paper's loop, every choice the smallest (distance, row) -- farthest: largest
    distance, smallest row; the centroid from the same fixed-point sums as the kernels."""
    n, d = z.shape
    scale = fixed_point_scale(float(np.abs(z).max()), n)
    q = np.rint(z * scale).astype(np.int64)
    alive = set(range(n))
    groups = []

    def dist(a, point):
        s = 0.0
        for j in range(d):
            t = z[a, j] - point[j]
            s += t * t
        return s

    def farthest(cands, point):
        return min(cands, key=lambda i: (-dist(i, point), i))

    def group_around(seed):
        others = sorted((dist(i, z[seed]), i) for i in alive if i != seed)
        members = [seed] + [i for _, i in others[:k - 1]]
        return members

    def centroid():
        sums = q[sorted(alive)].sum(axis=0)
        return [(int(sums[j]) / len(alive)) / scale for j in range(d)]

    while len(alive) >= 3 * k:
        r = farthest(alive, centroid())
        gr = group_around(r)
        s = farthest(alive - set(gr), z[r])
        groups.append(gr)
        alive -= set(gr)
        gs = group_around(s)
        groups.append(gs)
        alive -= set(gs)
    if len(alive) >= 2 * k:
        r = farthest(alive, centroid())
        gr = group_around(r)
        groups.append(gr)
        alive -= set(gr)
    if alive:
        groups.append(sorted(alive))
    return sorted(sorted(g) for g in groups)


def _groups_of(labels):
    labels = np.asarray(labels)
    return sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


@pytest.mark.parametrize("seed, n, d, k", [(0, 40, 2, 3), (1, 61, 3, 4), (2, 90, 1, 5),
                                           (3, 17, 4, 2), (4, 9, 2, 3)])
def test_mdav_equals_the_paper(backend, seed, n, d, k):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=(n, d)).astype(np.float64)  # many ties
    got = microaggregate(backend.asarray(x), k, backend=backend)
    groups = _groups_of(backend.to_host(got.groups))
    assert groups == _mdav_reference(_standardized(x), k)
    sizes = [len(g) for g in groups]
    assert min(sizes) >= k and max(sizes) <= 2 * k - 1
    assert got.n_groups == len(groups) and got.smallest_group == min(sizes)


def test_released_values_are_group_means_and_keep_the_column_means(backend):
    rng = np.random.default_rng(5)
    x = rng.lognormal(3, 1, size=(500, 3))
    got = microaggregate(backend.asarray(x), 5, backend=backend)
    values, groups = backend.to_host(got.values), backend.to_host(got.groups)
    for g in range(got.n_groups):
        rows = groups == g
        np.testing.assert_allclose(values[rows], np.broadcast_to(x[rows].mean(axis=0),
                                                                 values[rows].shape))
    np.testing.assert_allclose(values.mean(axis=0), x.mean(axis=0), rtol=1e-12)
    assert 0 < got.information_loss < 1 and got.partitions == 1
    z = _standardized(x)
    within = sum(((z[groups == g] - z[groups == g].mean(axis=0)) ** 2).sum()
                 for g in range(got.n_groups))
    assert got.sse == pytest.approx(within, rel=1e-9)
    assert got.sst == pytest.approx(((z - z.mean(axis=0)) ** 2).sum(), rel=1e-9)
    median = microaggregate(backend.asarray(x[:, 0]), 5, aggregate="median", backend=backend)
    m = backend.to_host(median.values)
    assert m.shape == (500,)
    mg = backend.to_host(median.groups)
    for g in range(median.n_groups):
        np.testing.assert_allclose(m[mg == g], np.median(x[mg == g, 0]))


def test_partitions_give_the_same_groups_on_every_backend(backend):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3_000, 4)) @ rng.normal(size=(4, 4))
    got = microaggregate(backend.asarray(x), 4, partition_rows=500, backend=backend)
    cpu = microaggregate(x, 4, partition_rows=500, backend="cpu")
    np.testing.assert_array_equal(backend.to_host(got.groups), cpu.groups)
    assert got.partitions == 6
    assert got.smallest_group >= 4 and got.largest_group <= 7
    exact = microaggregate(x, 4, backend="cpu")
    assert exact.sse <= got.sse * 1.5  # partitions cost some within-group variance


def test_small_partitions_take_a_block_each(backend):
    """Under the simulator (strict stand-in) the CUDA form runs a block per partition."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 9, size=(90, 2)).astype(np.float64)
    got = microaggregate(backend.asarray(x), 3, partition_rows=30, backend=backend)
    cpu = microaggregate(x, 3, partition_rows=30, backend="cpu")
    np.testing.assert_array_equal(backend.to_host(got.groups), cpu.groups)
    assert got.partitions == 3


def test_a_constant_column_and_bad_input(backend):
    x = np.column_stack([np.arange(30.0), np.full(30, 7.0)])
    got = microaggregate(backend.asarray(x), 3, backend=backend)
    np.testing.assert_array_equal(backend.to_host(got.values)[:, 1], 7.0)
    with pytest.raises(InputError, match="k must be an integer of at least 2"):
        microaggregate(x, 1, backend=backend)
    with pytest.raises(InputError, match="larger than the 30 records"):
        microaggregate(x, 31, backend=backend)
    with pytest.raises(InputError, match="partition_rows must be"):
        microaggregate(x, 3, partition_rows=5, backend=backend)
    with pytest.raises(InputError, match="missing or infinite"):
        microaggregate(np.array([1.0, np.nan, 2.0]), 2, backend=backend)
    with pytest.raises(InputError, match="aggregate must be"):
        microaggregate(x, 3, aggregate="mode", backend=backend)
