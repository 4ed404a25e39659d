"""The grid-wide exact MDAV (gpuppdp.kernels.mdav_grid) under Numba's CUDA simulator: the same
groups, named the same, as the CPU kernel and as a transcription of Domingo-Ferrer and
Mateo-Sanz's algorithm, on tables with many duplicate rows; a launch per pass on several
blocks, the cooperative kernel on the simulator's one block, and the dispatch."""

import sys

import numpy as np
import pytest

from gpuppdp.kernels import mdav, mdav_grid, microaggregate_partitions
from gpuppdp.kernels.mdav import fixed_point_scale
from gpuppdp.testing import strict_backend
from tests.test_microaggregation import _groups_of, _mdav_reference


@pytest.fixture(autouse=True)
def _fast_barriers():
    """The simulator's barriers wait for its polling thread: switch threads every 0.2 ms
    rather than every 5 ms (five times faster here; the results do not depend on it)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(2e-4)
    yield
    sys.setswitchinterval(before)


def _table(seed, n, d):
    """Small integers (many ties, duplicate rows), their fixed-point integers and scale."""
    x = np.random.default_rng(seed).integers(0, 4, size=(n, d)).astype(np.float64)
    scale = fixed_point_scale(float(np.abs(x).max()), n)
    return x, np.rint(x * scale).astype(np.int64), scale


def _cpu_labels(part_ptr, z, qz, scale, k):
    label = np.full(z.shape[0], -1, np.int64)
    mdav.mdav_njit(np.asarray(part_ptr, np.int64), z, qz, scale, k, label)
    return label


def test_phases_follow_the_papers_loop():
    for m in range(0, 80):
        for k in (2, 3, 5, 7):
            passes, left = [], m
            while left >= 3 * k:
                passes += ["C", "R", "S"]
                left -= 2 * k
            if left >= 2 * k:
                passes += ["C", "R"]
            passes += ["rest", "label"]
            codes = {"C": mdav_grid.CENTROID, "R": mdav_grid.FROM_R, "S": mdav_grid.FROM_S,
                     "rest": mdav_grid.REST, "label": mdav_grid.LABEL}
            assert mdav_grid.mdav_phases(m, k).tolist() == [codes[p] for p in passes]


def _check_grid_form(seed, n, d, k, blocks):
    z, qz, scale = _table(seed, n, d)
    label = np.full(n, -1, np.int64)
    mdav_grid.mdav_grid(np, 0, n, z, qz, scale, k, label, blocks=blocks)
    assert label.tolist() == _cpu_labels([0, n], z, qz, scale, k).tolist()
    assert _groups_of(label) == _mdav_reference(z, k)


@pytest.mark.parametrize("seed, n, d, k, blocks", [
    (0, 23, 2, 3, 3),   # 23 -> 17 -> 11 -> 5: two groups a round, the last of 5 (k..2k-1)
    (1, 24, 3, 5, 2),   # 24 -> 14: two groups, then one (the last but one), the last of 9
])
def test_grid_form_equals_the_cpu_kernel(seed, n, d, k, blocks):
    """A launch per pass on a few blocks: the CPU kernel's labels, the paper's groups."""
    _check_grid_form(seed, n, d, k, blocks)


@pytest.mark.parametrize("seed, n, d, k, blocks", [
    (2, 13, 2, 2, 4),   # more blocks than some slices have rows
    (3, 40, 3, 3, 4),
    (4, 31, 1, 5, 3),   # one column (its transpose is the table's own memory)
    (5, 50, 2, 2, 2),
    (8, 34, 2, 5, 4),   # 34 -> 24 -> 14 -> 9
    (9, 44, 4, 3, 3),
])
def test_grid_form_on_more_tables(seed, n, d, k, blocks):
    _check_grid_form(seed, n, d, k, blocks)


def test_cooperative_kernel_equals_the_cpu_kernel():
    """One cooperative launch (the simulator's grid barrier holds for its one block)."""
    z, qz, scale = _table(6, 21, 2)
    label = np.full(21, -1, np.int64)
    mdav_grid.mdav_grid(np, 0, 21, z, qz, scale, 3, label)
    assert label.tolist() == _cpu_labels([0, 21], z, qz, scale, 3).tolist()


def test_large_partitions_take_the_grid_form(monkeypatch):
    """Partitions of at least MDAV_GRID_ROWS rows per partition run on the grid, the others
    on a block each; one labelling, the CPU kernel's."""
    part_ptr = np.array([0, 7, 25, 31])
    z, qz, scale = _table(7, 31, 2)
    calls = []
    grid = mdav_grid.mdav_grid

    def spy(xp, a, b, *args, **kwargs):
        calls.append((a, b))
        grid(xp, a, b, *args, **kwargs)

    monkeypatch.setattr(mdav_grid, "MDAV_GRID_ROWS", 6)  # 18 rows among 3 partitions
    monkeypatch.setattr(mdav_grid, "mdav_grid", spy)
    be = strict_backend()
    got = microaggregate_partitions(be, part_ptr, be.asarray(z), be.asarray(qz), scale, 2)
    assert calls == [(7, 25)]
    assert be.to_host(got).tolist() == _cpu_labels(part_ptr, z, qz, scale, 2).tolist()
