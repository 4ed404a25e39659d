"""The kernel forms agree with each other and with the plain-array references.

* ``grouping.rollup_njit`` / ``rollup_xp`` and the classes (``groupby.group_njit`` /
  ``group_xp`` by node): identical outputs in identical (canonical, first-appearance) order;
* ``segsum.loss_sums_njit`` and ``loss_sums_cuda`` (Numba's CUDA simulator in this tier) are
  bit-identical to ``loss_sums_reference`` (sequential sums, ARX's order);
* the dispatchers in :mod:`gpuppdp.kernels` give the same results on every backend, the
  strict CuPy stand-in included;
* end to end, :class:`~gpuppdp.Anonymizer` on the strict stand-in returns exactly what the CPU
  backend returns (so the CuPy path mixes no host and device arrays).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets, kernels
from gpuppdp.backend import Backend
from gpuppdp.kernels import groupby, grouping, grouping_cuda, segsum
from gpuppdp.models import DistinctLDiversity
from gpuppdp.testing import StrictArray, assert_backend_equal, strict_backend

SEEDS = list(range(12))


# ---------------------------------------------------------------------------------------
# random inputs
# ---------------------------------------------------------------------------------------
def random_frequency_set(rng, n_entries=None, q=None, with_sens=None):
    """A frequency set: distinct (codes, sens) rows ordered by ``first``, with counts."""
    q = int(rng.integers(1, 5)) if q is None else q
    domains = rng.integers(1, 7, size=q)
    n_rows = int(rng.integers(1, 400)) if n_entries is None else n_entries
    with_sens = bool(rng.integers(0, 2)) if with_sens is None else with_sens
    codes = np.stack([rng.integers(0, d, size=n_rows) for d in domains], axis=1).astype(np.int32)
    sens = (rng.integers(0, 4, size=n_rows) if with_sens
            else np.zeros(n_rows)).astype(np.int32)
    # distinct rows, in order of first appearance
    table = pd.DataFrame(codes).assign(s=sens)
    first = (~table.duplicated()).to_numpy()
    key = pd.MultiIndex.from_frame(table)
    count = pd.Series(1, index=key).groupby(level=list(range(q + 1)), sort=False).sum()
    idx = np.flatnonzero(first)
    uniq = key[idx]
    cnt = count.reindex(uniq).to_numpy().astype(np.int64)
    assert cnt.sum() == n_rows
    return dict(codes=codes[idx], sens=sens[idx], count=cnt, first=idx.astype(np.int64),
                domains=domains)


def random_maps(rng, domains, n_maps=3):
    """Per QID a few random code maps (arbitrary functions of the QID's domain); returns
    ``(maps_flat int32, offs)`` with ``offs[j]`` a list of ``(offset, number of output
    codes)`` per map of QID ``j``."""
    parts = [np.arange(max(domains))]  # the identity, at offset 0 as ``level_maps`` has it
    offs, pos = [], len(parts[0])
    for d in domains:
        mine = [(0, d)]
        for m in range(1, n_maps):
            if m == n_maps - 1:
                f = np.zeros(d, dtype=np.int64)        # everything to one code
            else:
                f = rng.integers(0, max(1, d - 1), size=d)
            mine.append((pos, int(f.max()) + 1))
            parts.append(f.astype(np.int32))
            pos += d
        offs.append(mine)
    return np.concatenate(parts).astype(np.int32), offs


def random_batch(rng, fs, offs, n_nodes=None):
    """Nodes rolled up from random contiguous ranges of ``fs`` with random maps.
    Ranges may overlap, repeat and be empty.  Returns ``start, stop, map_off, radix`` with
    ``radix`` (B, q+1) the number of codes of each QID at the node, then of the sensitive
    attribute."""
    n = len(fs["first"])
    n_nodes = int(rng.integers(1, 7)) if n_nodes is None else n_nodes
    a = rng.integers(0, n + 1, size=n_nodes)
    b = rng.integers(0, n + 1, size=n_nodes)
    start, stop = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    if n_nodes:
        start[0], stop[0] = 0, n   # at least one full range
    q = len(offs)
    chosen = [[offs[j][int(rng.integers(0, len(offs[j])))] for j in range(q)]
              for _ in range(n_nodes)]
    map_off = np.array([[o for o, _ in row] for row in chosen], np.int64).reshape(n_nodes, q)
    n_sens = int(fs["sens"].max()) + 1 if len(fs["sens"]) else 1
    radix = np.array([[r for _, r in row] + [n_sens] for row in chosen],
                     np.int64).reshape(n_nodes, q + 1)
    return start, stop, map_off, radix


def naive_rollup(fs, start, stop, map_off, maps):
    """Dictionary-based roll-up, the obvious way."""
    codes_out, sens_out, count_out, first_out, ptr = [], [], [], [], [0]
    for b in range(len(start)):
        groups: dict = {}
        for e in range(start[b], stop[b]):
            key = tuple(int(maps[map_off[b, j] + fs["codes"][e, j]])
                        for j in range(fs["codes"].shape[1])) + (int(fs["sens"][e]),)
            if key in groups:
                groups[key][1] += int(fs["count"][e])
            else:
                groups[key] = [int(fs["first"][e]), int(fs["count"][e])]
        for key, (first, count) in groups.items():   # insertion order == first appearance
            codes_out.append(key[:-1])
            sens_out.append(key[-1])
            count_out.append(count)
            first_out.append(first)
        ptr.append(ptr[-1] + len(groups))
    q = fs["codes"].shape[1]
    return (np.array(codes_out, dtype=np.int32).reshape(-1, q), np.array(sens_out, np.int32),
            np.array(count_out, np.int64), np.array(first_out, np.int64),
            np.array(ptr, np.int64))


def _rollup_inputs(seed):
    rng = np.random.default_rng(seed)
    fs = random_frequency_set(rng)
    maps, offs = random_maps(rng, fs["domains"])
    start, stop, map_off, radix = random_batch(rng, fs, offs)
    return fs, maps, start, stop, map_off, radix


def _assert_outputs_equal(got, want, names):
    if len(got) == len(want) + 1:  # the CUDA roll-up's sixth output: its offsets on the host
        np.testing.assert_array_equal(got[-1], np.asarray(got[-2]), err_msg="host offsets")
        got = got[:-1]
    assert len(got) == len(want)
    for g, w, name in zip(got, want, names):
        g = np.asarray(g)
        np.testing.assert_array_equal(g, w, err_msg=name)


ROLLUP_NAMES = ("codes", "sens", "count", "first", "ptr")

# Both forms key entries by a mixed-radix code: directly addressed (CPU) when the key space is
# small, hashed (CPU) or sorted (array form) when it is large; past int64 the CPU form packs
# column by column and the array form sorts the columns (lexsort).  Radices larger than
# needed must not change the result.
RADIX_REGIMES = {"exact": lambda r: r, "wide": lambda r: r * 1000,
                 "huge": lambda r: np.full_like(r, 2 ** 40)}


def _args(fs, start, stop, map_off, maps):
    return (fs["codes"], fs["sens"], fs["count"], fs["first"], start, stop, map_off, maps)


# ---------------------------------------------------------------------------------------
# roll-up
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_rollup_forms_agree(seed):
    fs, maps, start, stop, map_off, radix = _rollup_inputs(seed)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    for regime, widen in RADIX_REGIMES.items():
        names = [f"{n} ({regime})" for n in ROLLUP_NAMES]
        _assert_outputs_equal(grouping.rollup_xp(np, *args, widen(radix)), want, names)
        got_njit = grouping.rollup_njit(*args, widen(radix))
        _assert_outputs_equal(got_njit, want, names)
        for arr, dt in zip(got_njit, (np.int32, np.int32, np.int64, np.int64, np.int64)):
            assert np.asarray(arr).dtype == dt
    # totals are preserved per node
    ptr = want[4]
    for b in range(len(start)):
        assert want[2][ptr[b]:ptr[b + 1]].sum() == fs["count"][start[b]:stop[b]].sum()


def test_rollup_of_raw_rows_builds_the_frequency_set():
    """Rolling single rows (count 1, first = row index) up with identity maps groups equal
    rows, ordered by first appearance."""
    rng = np.random.default_rng(99)
    n, q = 500, 3
    codes = rng.integers(0, 3, size=(n, q)).astype(np.int32)
    sens = rng.integers(0, 2, size=n).astype(np.int32)
    maps = np.arange(3, dtype=np.int32)
    args = (codes, sens, np.ones(n, np.int64), np.arange(n, dtype=np.int64), np.array([0]),
            np.array([n]), np.zeros((1, q), np.int64), maps)
    radix = np.array([[3, 3, 3, 2]], np.int64)
    for got in (grouping.rollup_njit(*args, radix), grouping.rollup_xp(np, *args, radix)):
        out_codes, out_sens, count, first, ptr = (np.asarray(a) for a in got)
        table = pd.DataFrame(codes).assign(s=sens)
        expected_first = np.flatnonzero(~table.duplicated().to_numpy())
        np.testing.assert_array_equal(first, expected_first)
        np.testing.assert_array_equal(out_codes, codes[expected_first])
        np.testing.assert_array_equal(out_sens, sens[expected_first])
        sizes = table.groupby(list(table.columns), sort=False).size().to_numpy()
        np.testing.assert_array_equal(count, sizes)
        np.testing.assert_array_equal(ptr, [0, len(expected_first)])


@pytest.mark.parametrize("regime", list(RADIX_REGIMES))
def test_rollup_forms_agree_on_large_batches(regime):
    rng = np.random.default_rng(1234)
    fs = random_frequency_set(rng, n_entries=3000, q=4, with_sens=True)
    maps, offs = random_maps(rng, fs["domains"], n_maps=4)
    start, stop, map_off, radix = random_batch(rng, fs, offs, n_nodes=40)
    args = _args(fs, start, stop, map_off, maps)
    want = grouping.rollup_xp(np, *args, radix)
    _assert_outputs_equal(want, naive_rollup(fs, start, stop, map_off, maps), ROLLUP_NAMES)
    _assert_outputs_equal(grouping.rollup_njit(*args, RADIX_REGIMES[regime](radix)), want,
                          ROLLUP_NAMES)
    _assert_outputs_equal(grouping.rollup_xp(np, *args, RADIX_REGIMES[regime](radix)), want,
                          ROLLUP_NAMES)


@pytest.mark.parametrize("dtype,domain", [(np.int8, 128), (np.int16, 300), (np.int32, 70_000)])
def test_rollup_and_classes_small_code_dtypes(dtype, domain):
    """Codes travel in the smallest dtype of the hierarchies (int8 for Adult); codes up to
    the dtype's maximum must survive the keying, hashing and the output."""
    rng = np.random.default_rng(int(domain))
    n, q = 2000, 3
    codes = np.stack([rng.integers(0, domain, size=n), rng.integers(domain - 3, domain, size=n),
                      rng.integers(0, 4, size=n)], axis=1).astype(dtype)
    sens = rng.integers(0, 3, size=n).astype(np.int32)
    # maps: identity, "divide by 7", constant -- all in ``dtype``
    ident = np.arange(domain)
    parts = [ident, ident // 7, np.zeros(domain, np.int64)]
    maps = np.concatenate(parts).astype(dtype)
    offs = [(0, domain), (domain, (domain - 1) // 7 + 1), (2 * domain, 1)]
    fs = dict(codes=codes, sens=sens, count=rng.integers(1, 5, size=n).astype(np.int64),
              first=np.arange(n, dtype=np.int64))
    # nodes: every combination of maps over the three QIDs
    combos = list(itertools.product(range(3), repeat=q))
    map_off = np.array([[offs[m][0] for m in c] for c in combos], np.int64)
    radix = np.array([[offs[m][1] for m in c] + [3] for c in combos], np.int64)
    start = np.zeros(len(combos), np.int64)
    stop = np.full(len(combos), n, np.int64)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    got_xp = grouping.rollup_xp(np, *args, radix)
    _assert_outputs_equal(got_xp, want, ROLLUP_NAMES)
    assert np.asarray(got_xp[0]).dtype == dtype
    for regime, widen in RADIX_REGIMES.items():
        got = grouping.rollup_njit(*args, widen(radix))
        _assert_outputs_equal(got, want, [f"{nm} ({regime})" for nm in ROLLUP_NAMES])
        assert np.asarray(got[0]).dtype == dtype
        assert np.asarray(got[1]).dtype == sens.dtype
    assert int(np.asarray(want[0]).max()) == domain - 1
    # classes of the rolled-up entries, codes still in ``dtype``
    out_codes, _, _, _, ptr = got_xp
    want_classes = naive_classes(ptr, out_codes)
    names = ("class_of_entry", "rep", "class_ptr")
    _assert_outputs_equal(groupby.group_njit(out_codes, radix[:, :-1], ptr), want_classes, names)
    _assert_outputs_equal(groupby.group_xp(np, out_codes, radix[:, :-1], ptr), want_classes,
                          names)


def test_rollup_empty_batch_ranges():
    rng = np.random.default_rng(5)
    fs = random_frequency_set(rng, n_entries=50, q=2, with_sens=False)
    maps, offs = random_maps(rng, fs["domains"])
    n = len(fs["first"])
    assert n > 10
    start = np.array([0, 10, 10, n], np.int64)
    stop = np.array([0, 10, n, n], np.int64)
    map_off = np.array([[offs[0][0][0], offs[1][0][0]]] * 4, np.int64)
    radix = np.array([[offs[0][0][1], offs[1][0][1], 1]] * 4, np.int64)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    assert list(want[4][:3]) == [0, 0, 0]
    assert want[4][3] == want[4][4] > 0
    _assert_outputs_equal(grouping.rollup_njit(*args, radix), want, ROLLUP_NAMES)
    _assert_outputs_equal(grouping.rollup_xp(np, *args, radix), want, ROLLUP_NAMES)


# The CUDA roll-up runs here under Numba's simulator (a Python thread per CUDA thread): few
# seeds, small batches.  Exact radices give directly addressed tables, wide ones hashed tables
# (with collisions: at least 1.5 slots per entry, 16 at least), huge ones the array form.
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_rollup_cuda_agrees(seed):
    fs, maps, start, stop, map_off, radix = _rollup_inputs(seed)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    lens = stop - start
    for regime, widen in RADIX_REGIMES.items():
        tables = grouping_cuda._cuda_tables(lens, widen(radix))
        if regime == "huge":
            assert tables is None
        elif regime == "wide":
            assert (tables[2][lens > 0] >= 0).all()  # hashed
        got = grouping_cuda.rollup_cuda(np, *args, widen(radix))
        _assert_outputs_equal(got, want, [f"{n} ({regime})" for n in ROLLUP_NAMES])
        for arr, dt in zip(got, (np.int32, np.int32, np.int64, np.int64, np.int64)):
            assert np.asarray(arr).dtype == dt


def test_rollup_cuda_probes_past_collisions(monkeypatch):
    """Tables as small as the entries (a node's table can fill up): inserts probe past
    claimed slots, and the groups, their counts and first entries still come out right."""
    monkeypatch.setattr(grouping_cuda, "CUDA_TABLE_LOAD", 1.0)
    rng = np.random.default_rng(77)
    fs = random_frequency_set(rng, n_entries=64, q=3, with_sens=True)
    maps, offs = random_maps(rng, fs["domains"])
    start, stop, map_off, radix = random_batch(rng, fs, offs, n_nodes=3)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    _, base, mask = grouping_cuda._cuda_tables(stop - start, radix * 1000)
    assert (mask[stop > start] >= 0).all()
    assert want[4][1] / (base[1] - base[0]) > 0.6  # node 0: its table over 60 % full
    _assert_outputs_equal(grouping_cuda.rollup_cuda(np, *args, radix * 1000), want, ROLLUP_NAMES)


def test_rollup_cuda_small_code_dtypes_and_empty_ranges():
    rng = np.random.default_rng(11)
    n, domain = 150, 128
    codes = np.stack([rng.integers(0, domain, size=n), rng.integers(domain - 3, domain, size=n)],
                     axis=1).astype(np.int8)
    ident = np.arange(domain)
    maps = np.concatenate([ident, ident // 7]).astype(np.int8)
    fs = dict(codes=codes, sens=np.zeros(n, np.int32),
              count=rng.integers(1, 5, size=n).astype(np.int64),
              first=np.arange(n, dtype=np.int64))
    start = np.array([0, 0, 40, 0, n], np.int64)
    stop = np.array([0, n, 40, n, n], np.int64)
    map_off = np.array([[0, 0], [0, domain], [domain, 0], [domain, domain], [0, 0]], np.int64)
    radix = np.array([[domain, domain, 1], [domain, 19, 1], [19, domain, 1], [19, 19, 1],
                      [domain, domain, 1]], np.int64)
    args = _args(fs, start, stop, map_off, maps)
    want = naive_rollup(fs, start, stop, map_off, maps)
    _, _, mask = grouping_cuda._cuda_tables(stop - start, radix)
    assert mask[1] >= 0 and mask[3] < 0  # a hashed table and a directly addressed one
    got = grouping_cuda.rollup_cuda(np, *args, radix)
    _assert_outputs_equal(got, want, ROLLUP_NAMES)
    assert got[0].dtype == np.int8 and int(got[0].max()) == domain - 1
    empty = grouping_cuda.rollup_cuda(np, *_args(fs, start[:1], stop[:1], map_off[:1], maps),
                                 radix[:1])
    assert [a.shape for a in empty] == [(0, 2), (0,), (0,), (0,), (2,), (2,)]


# ---------------------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------------------
def _classes_inputs(seed):
    fs, maps, start, stop, map_off, radix = _rollup_inputs(seed)
    codes, sens, count, first, ptr = grouping.rollup_xp(
        np, *_args(fs, start, stop, map_off, maps), radix)
    return ptr, codes, radix[:, :-1]


def naive_classes(ptr, codes):
    class_of_entry = np.empty(len(codes), np.int64)
    rep, class_ptr = [], [0]
    for b in range(len(ptr) - 1):
        seen: dict = {}
        for e in range(ptr[b], ptr[b + 1]):
            key = tuple(int(c) for c in codes[e])
            if key not in seen:
                seen[key] = class_ptr[-1] + len(seen)
                rep.append(e)
            class_of_entry[e] = seen[key]
        class_ptr.append(class_ptr[-1] + len(seen))
    return class_of_entry, np.array(rep, np.int64), np.array(class_ptr, np.int64)


@pytest.mark.parametrize("seed", SEEDS)
def test_classes_forms_agree(seed):
    ptr, codes, radix = _classes_inputs(seed)
    want = naive_classes(ptr, codes)
    names = ("class_of_entry", "rep", "class_ptr")
    _assert_outputs_equal(groupby.group_njit(codes, radix, ptr), want, names)
    _assert_outputs_equal(groupby.group_xp(np, codes, radix, ptr), want, names)


# ---------------------------------------------------------------------------------------
# loss sums
# ---------------------------------------------------------------------------------------
def _loss_inputs(seed):
    rng = np.random.default_rng(1000 + seed)
    n_nodes = int(rng.integers(1, 8))
    q = int(rng.integers(1, 6))
    lens = rng.integers(0, 60, size=n_nodes)
    lens[0] = max(lens[0], 1)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n_classes = int(ptr[-1])
    size = rng.integers(1, 10_000, size=n_classes).astype(np.int64)
    n_share = 50
    codes = rng.integers(0, 10, size=(n_classes, q)).astype(np.int32)
    outlier = rng.random(n_classes) < 0.3
    # shares like ARX's (k / S with awkward S) so rounding order matters
    share = rng.integers(1, 97, size=n_share) / 97.0
    off = rng.integers(0, n_share - 10, size=(n_nodes, q)).astype(np.int64)
    return size, codes, outlier, ptr, off, share


@pytest.mark.parametrize("seed", SEEDS)
def test_loss_sums_forms_bit_identical(seed):
    size, codes, outlier, ptr, off, share = _loss_inputs(seed)
    charged_ref, kept_ref = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    charged, kept = segsum.loss_sums_njit(size, codes, outlier, ptr, off, share)
    np.testing.assert_array_equal(charged, charged_ref)
    np.testing.assert_array_equal(kept, kept_ref)
    out_c, out_k = np.full(off.shape, np.nan), np.full(off.shape, np.nan)
    charged, kept = segsum.loss_sums_cuda(size, codes, outlier, ptr, off, share, out_c, out_k,
                                          np.arange(off.shape[0]))
    assert charged is out_c and kept is out_k
    np.testing.assert_array_equal(out_c, charged_ref)
    np.testing.assert_array_equal(out_k, kept_ref)


def test_loss_sums_cuda_across_tiles():
    """Nodes longer than a CUDA block's tile (several tiles, a partial last one) and an empty
    node: the block's running sums carry over from tile to tile in class order."""
    rng = np.random.default_rng(42)
    lens = np.array([3 * segsum.LOSS_TILE + 5, 0, segsum.LOSS_TILE, 1])
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(ptr[-1])
    size = rng.integers(1, 10_000, size=n).astype(np.int64)
    codes = rng.integers(0, 10, size=(n, 2)).astype(np.int8)
    outlier = rng.random(n) < 0.3
    share = rng.integers(1, 97, size=40) / 97.0
    off = rng.integers(0, 30, size=(len(lens), 2)).astype(np.int64)
    want = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    got = segsum.loss_sums_cuda(size, codes, outlier, ptr, off, share, np.zeros(off.shape),
                                np.zeros(off.shape), np.arange(len(lens)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_loss_sums_reference_is_sequential_and_exact():
    """The oracle itself: a hand-computed left-to-right sum, and the charge of outliers."""
    size = np.array([3, 5, 7], np.int64)
    codes = np.array([[0], [1], [2]], np.int32)
    outlier = np.array([False, True, False])
    ptr = np.array([0, 3], np.int64)
    off = np.array([[0]], np.int64)
    share = np.array([0.1, 0.2, 0.3])
    charged, kept = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    assert kept[0, 0] == ((3 * 0.1) + 5 * 0.2) + 7 * 0.3
    assert charged[0, 0] == ((3 * 0.1) + 5.0) + 7 * 0.3
    # a pairwise sum can differ in the last bit from the sequential one: the forms must
    # follow the sequential order exactly (ARX's), which the random tests above pin down.
    values = np.full(1001, 0.1)
    sequential = np.add.accumulate(values)[-1]
    ones = np.ones(1001, np.int64)
    c, k = segsum.loss_sums_njit(ones, np.zeros((1001, 1), np.int32), np.zeros(1001, bool),
                                 np.array([0, 1001], np.int64), np.array([[0]], np.int64),
                                 np.array([0.1]))
    assert k[0, 0] == sequential and c[0, 0] == sequential


# ---------------------------------------------------------------------------------------
# per-node class statistics
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_node_stats_forms_agree(seed):
    size, _, outlier, ptr, _, _ = _loss_inputs(seed)
    ptr = np.concatenate([ptr, [ptr[-1], ptr[-1]]])  # two empty nodes at the end
    outlier[: len(outlier) // 4] = True  # a run of outliers: often a node with none kept
    small = size < 3000
    for with_small in (small, None):
        want = np.array([[size[a:b][outlier[a:b]].sum(),
                          0 if with_small is None else size[a:b][with_small[a:b]].sum(),
                          (~outlier[a:b]).sum(),
                          size[a:b][~outlier[a:b]].min() if (~outlier[a:b]).any() else 0]
                         for a, b in zip(ptr[:-1], ptr[1:])], np.int64)
        np.testing.assert_array_equal(segsum.node_stats_njit(size, outlier, with_small, ptr),
                                      want)
        np.testing.assert_array_equal(segsum.node_stats_cuda(np, size, outlier, with_small,
                                                             ptr), want)


def test_node_stats_cuda_runs_across_many_small_nodes():
    """A CUDA thread's run of classes crosses several nodes, empty ones among them."""
    rng = np.random.default_rng(7)
    lens = rng.integers(0, 4, size=300)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    size = rng.integers(1, 50, size=int(ptr[-1])).astype(np.int64)
    outlier = size < 10
    small = size < 20
    np.testing.assert_array_equal(segsum.node_stats_cuda(np, size, outlier, small, ptr),
                                  segsum.node_stats_njit(size, outlier, small, ptr))


# ---------------------------------------------------------------------------------------
# the dispatchers on every backend
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_dispatch_rollup(backend, seed):
    fs, maps, start, stop, map_off, radix = _rollup_inputs(seed)
    want = naive_rollup(fs, start, stop, map_off, maps)
    dev = backend.asarray
    got = kernels.rollup(backend, dev(fs["codes"]), dev(fs["sens"]), dev(fs["count"]),
                         dev(fs["first"]), start, stop, map_off, dev(maps), radix)
    for g, w, name in zip(got, want, ROLLUP_NAMES):
        assert_backend_equal(backend, g, w, err_msg=name)
    assert got[5].dtype == np.int64  # the offsets on the host, as they are on the device
    np.testing.assert_array_equal(got[5], backend.to_host(got[4]))


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_dispatch_classes(backend, seed):
    ptr, codes, radix = _classes_inputs(seed)
    count = np.random.default_rng(seed).integers(1, 1000, len(codes)).astype(np.int64)
    want = naive_classes(ptr, codes)
    cls = want[0]
    n_classes = len(want[1])
    # per class: its records, entries and node, summed naively entry by entry
    size, distinct, node = (np.zeros(n_classes, np.int64) for _ in range(3))
    for e, c in enumerate(cls.tolist()):
        size[c] += count[e]
        distinct[c] += 1
        node[c] = np.searchsorted(ptr, e, side="right") - 1
    got = kernels.classes(backend, backend.asarray(ptr), backend.asarray(codes), radix,
                          backend.asarray(count))
    for g, w, name in zip(got, tuple(want) + (size, distinct, node),
                          ("class_of_entry", "rep", "class_ptr", "size", "distinct", "node")):
        assert_backend_equal(backend, g, w, err_msg=name)


@pytest.mark.parametrize("n", [0, 5, 70_000])
def test_dispatch_marginal_counts(backend, n):
    """Records per code of every column, on every backend (the CPU's split among threads
    past a few thousand entries) -- a naive count's."""
    rng = np.random.default_rng(n)
    sizes = [3, 50, 1]
    codes = np.stack([rng.integers(0, s, n) for s in sizes], axis=1).astype(np.int16)
    count = rng.integers(1, 1000, n).astype(np.int64)
    got = kernels.marginal_counts(backend, backend.asarray(codes), backend.asarray(count), sizes)
    for j, size in enumerate(sizes):
        want = [int(count[codes[:, j] == v].sum()) for v in range(size)]
        assert got[j].dtype == np.int64 and got[j].tolist() == want


@pytest.mark.parametrize("seed", SEEDS[:6])
def test_dispatch_loss_sums(backend, seed):
    size, codes, outlier, ptr, off, share = _loss_inputs(seed)
    charged_ref, kept_ref = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    dev = backend.asarray
    charged, kept = kernels.loss_sums(backend, dev(size), dev(codes), dev(outlier), dev(ptr),
                                      off, dev(share))
    # documented: host arrays come back
    assert isinstance(charged, np.ndarray) and isinstance(kept, np.ndarray)
    np.testing.assert_array_equal(charged, charged_ref)
    np.testing.assert_array_equal(kept, kept_ref)


@pytest.mark.parametrize("gpu_form", [False, True])
def test_dispatch_loss_sums_skips_nodes_not_wanted(backend, gpu_form):
    """Only the nodes in ``charge`` or ``keep`` are summed, on every form (the GPU's launches
    blocks for them alone): NaN elsewhere, the sequential sums there; a node charged has its
    kept sums too."""
    size, codes, outlier, ptr, off, share = _loss_inputs(3)
    charged_ref, kept_ref = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    n_nodes = off.shape[0]
    charge = np.arange(n_nodes) % 3 == 0
    keep = charge | (np.arange(n_nodes) % 3 == 1)
    if gpu_form:  # the kernel's branch with NumPy arrays as device arrays (the simulator)
        backend = Backend("numpy-as-device", np, "cuda", np.asarray, np.asarray)
    dev = backend.asarray
    charged, kept = kernels.loss_sums(backend, dev(size), dev(codes), dev(outlier), dev(ptr),
                                      off, dev(share), charge, keep)
    np.testing.assert_array_equal(charged[charge], charged_ref[charge])
    np.testing.assert_array_equal(kept[keep], kept_ref[keep])
    assert np.isnan(charged[~keep]).all() and np.isnan(kept[~keep]).all()
    none = np.zeros(n_nodes, dtype=bool)
    charged, kept = kernels.loss_sums(backend, dev(size), dev(codes), dev(outlier), dev(ptr),
                                      off, dev(share), none, none)
    assert np.isnan(charged).all() and np.isnan(kept).all()


def test_dispatch_cuda_branches_under_the_simulator():
    """The ``kernels == "cuda"`` branches (a GPU's) with NumPy arrays as device arrays: under
    Numba's simulator the CUDA kernels take them, so the dispatch runs here as on a GPU."""
    gpu_like = Backend("numpy-as-device", np, "cuda", np.asarray, np.asarray)
    fs, maps, start, stop, map_off, radix = _rollup_inputs(4)
    got = kernels.rollup(gpu_like, fs["codes"], fs["sens"], fs["count"], fs["first"], start,
                         stop, map_off, maps, radix)
    _assert_outputs_equal(got, naive_rollup(fs, start, stop, map_off, maps), ROLLUP_NAMES)
    size, codes, outlier, ptr, off, share = _loss_inputs(1)
    charged, kept = kernels.loss_sums(gpu_like, size, codes, outlier, ptr, off, share)
    want = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    np.testing.assert_array_equal(charged, want[0])
    np.testing.assert_array_equal(kept, want[1])
    small = size < 5000
    np.testing.assert_array_equal(kernels.node_stats(gpu_like, size, outlier, small, ptr, ptr),
                                  segsum.node_stats_njit(size, outlier, small, ptr))


def test_strict_backend_refuses_mixing():
    """The stand-in the tests above rely on does refuse host/device mixing."""
    be = strict_backend()
    a = be.asarray(np.arange(3))
    assert isinstance(a, StrictArray)
    with pytest.raises(TypeError):
        a + np.arange(3)
    with pytest.raises(TypeError):
        np.asarray(a)
    with pytest.raises(TypeError):
        be.xp.concatenate([a, np.arange(3)])


# ---------------------------------------------------------------------------------------
# end to end: the strict stand-in (CuPy code path) == the CPU backend
# ---------------------------------------------------------------------------------------
QIDS4 = ["sex", "age", "race", "education"]


@pytest.fixture(scope="module")
def adult300():
    data, hierarchies = datasets.adult()
    return data.iloc[:300].reset_index(drop=True), hierarchies


def _fit_small(adult300, backend, metric, search, diverse, suppression):
    data, hierarchies = adult300
    sensitive = ["occupation"] if diverse else []
    models = [DistinctLDiversity("occupation", 2)] if diverse else []
    insensitive = [c for c in data.columns if c not in QIDS4 + sensitive]
    return Anonymizer(quasi_identifiers={c: hierarchies[c] for c in QIDS4},
                      sensitive=sensitive, insensitive=insensitive, k=3, models=models,
                      suppression_limit=0.05, metric=metric, search=search, backend=backend,
                      suppressed=suppression, seed=11).fit(data)


@pytest.mark.parametrize("metric", ["loss", "precision", "discernibility"])
@pytest.mark.parametrize("search,diverse,suppression", [
    ("flash", False, "mark"), ("exhaustive", False, "mark"), ("flash", True, "drop")])
def test_backend_end_to_end_equals_cpu(backend, adult300, metric, search, diverse,
                                       suppression):
    """On the strict stand-in (and on CuPy in the GPU tier) the whole pipeline returns
    exactly what the CPU backend returns: node, loss, statistics, and the released table."""
    cpu = _fit_small(adult300, "cpu", metric, search, diverse, suppression)
    strict = _fit_small(adult300, backend, metric, search, diverse, suppression)
    assert strict.summary()["backend"] == backend.name
    assert cpu.summary()["backend"] == "numpy"
    assert strict.transformation == cpu.transformation
    assert strict.information_loss == cpu.information_loss
    assert strict.node == cpu.node
    assert strict.nodes_evaluated == cpu.nodes_evaluated
    assert strict.release.suppressed_rows == cpu.release.suppressed_rows
    pd.testing.assert_frame_equal(strict.released, cpu.released)
    # sanity: a real anonymization happened
    assert cpu.suppressed_records <= 15
    assert cpu.node["smallest_class"] >= 3
    if search == "exhaustive":
        a, b = cpu.search.details["all_stats"], strict.search.details["all_stats"]
        for name in ("anonymous", "suppressed", "classes", "smallest_class", "entries",
                     "lower_bound"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.information_loss, b.information_loss)


def test_low_occupancy_warnings_are_not_shown():
    """Small batches are small launches by design: Numba's low-occupancy warning is silenced
    once the kernels are imported (in a fresh process: pytest resets warning filters), and
    other warnings still show."""
    code = ("import warnings, gpuppdp.kernels\n"
            "warnings.warn('\\x1b[1mGrid size 3 will likely result in GPU under-utilization "
            "due to low occupancy.\\x1b[0m')\n"
            "warnings.warn('another warning')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert "another warning" in done.stderr
    assert "Grid size" not in done.stderr


def test_warm_up_starts_numbas_cpu_target_in_a_thread(monkeypatch):
    thread = kernels.warm_up()
    assert thread.name == "gpuppdp-warm-up" and not thread.daemon
    thread.join(timeout=120)
    assert not thread.is_alive()
    # a broken Numba is the search's to report: the warm-up thread stays silent
    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)

    def broken(_radix):
        raise RuntimeError("no Numba today")

    monkeypatch.setattr(kernels.groupby, "space_of", broken)
    kernels.warm_up().join(timeout=120)
    assert escaped == []
