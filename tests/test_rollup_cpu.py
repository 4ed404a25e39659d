"""The CPU roll-up and per-node kernels on batches large enough for their every path.

* ``grouping.rollup_njit`` equals the array form (``rollup_xp``, the NumPy reference) on
  batches cut into several runs of nodes (the runs are moved together afterwards), with
  directly addressed, hashed and column-by-column (key space past int64) nodes in one batch,
  with and without a sensitive code, and with overlapping and empty source ranges;
* ``segsum.loss_sums_njit`` is bit-identical to the sequential reference for every number of
  QIDs from 1 to 13 (the CPU form sums three or four QIDs per pass);
* ``kernels.node_stats`` (one pass on the CPU) equals its array form.
"""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from gpuppdp import kernels
from gpuppdp.kernels import groupby, grouping, segsum

NAMES = ("codes", "sens", "count", "first", "ptr")


def _frequency_set(rng, n_rows, domains, with_sens):
    """Distinct rows (codes, sens) of a random table, in order of first appearance."""
    q = len(domains)
    codes = np.stack([rng.integers(0, d, size=n_rows) for d in domains], axis=1)
    sens = rng.integers(0, 3, size=n_rows) if with_sens else np.zeros(n_rows, np.int64)
    rows = np.concatenate([codes, sens[:, None]], axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    count = np.bincount(rank[inverse.reshape(-1)], minlength=len(order)).astype(np.int64)
    first = np.sort(first)
    return (codes[first].astype(np.int16), sens[first].astype(np.int32), count,
            first.astype(np.int64), q)


def _maps(rng, domains):
    """Per QID the identity (at offset 0, shared, as ``level_maps`` lays it out), a random
    coarsening and 'all to one': ``(maps, offs)``."""
    parts = [np.arange(max(domains))]
    offs, pos = [], len(parts[0])
    for d in domains:
        mine = [(0, d)]
        for f in (rng.integers(0, max(1, d // 3), size=d), np.zeros(d, int)):
            mine.append((pos, int(f.max()) + 1))
            parts.append(f)
            pos += d
        offs.append(mine)
    return np.concatenate(parts).astype(np.int16), offs


def _batch(rng, n_entries, offs, n_nodes, n_sens, huge_every=0):
    start = rng.integers(0, n_entries, size=n_nodes)
    stop = np.minimum(n_entries, start + rng.integers(0, n_entries, size=n_nodes))
    start[0], stop[0] = 0, n_entries
    start[1], stop[1] = 5, 5  # an empty range
    q = len(offs)
    pick = rng.integers(0, 3, size=(n_nodes, q))
    map_off = np.array([[offs[j][p][0] for j, p in enumerate(row)] for row in pick], np.int64)
    radix = np.array([[offs[j][p][1] for j, p in enumerate(row)] + [n_sens] for row in pick],
                     np.int64)
    if huge_every:  # radices far above the codes: hashed keys, or keys past int64
        radix[::huge_every, :-1] *= np.int64(1) << 20
    return start.astype(np.int64), stop.astype(np.int64), map_off, radix


def _check_rollup(seed, n_tasks, monkeypatch, with_sens, huge_every):
    rng = np.random.default_rng(seed)
    domains = [7, 40, 3, 25, 11]
    codes, sens, count, first, _ = _frequency_set(rng, 20_000, domains, with_sens)
    maps, offs = _maps(rng, domains)
    n_sens = int(sens.max()) + 1
    start, stop, map_off, radix = _batch(rng, len(first), offs, 60, n_sens, huge_every)
    args = (codes, sens, count, first, start, stop, map_off, maps, radix)
    want = grouping.rollup_xp(np, *args)
    monkeypatch.setattr(grouping, "n_tasks_for", lambda rows, n_seg, per_thread=4: n_tasks)
    got = grouping.rollup_njit(*args)
    for g, w, name in zip(got, want, NAMES):
        np.testing.assert_array_equal(g, w, err_msg=name)
        assert g.dtype == w.dtype or name == "count", name
    # the scratch tables were left clean: a second run gives the same
    for g, w, name in zip(grouping.rollup_njit(*args), want, NAMES):
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("n_tasks", [1, 2, 7])
@pytest.mark.parametrize("with_sens", [False, True])
def test_rollup_runs_of_nodes_agree_with_array_form(monkeypatch, n_tasks, with_sens):
    _check_rollup(10 + n_tasks, n_tasks, monkeypatch, with_sens, huge_every=0)


@pytest.mark.parametrize("huge_every", [3, 2])
def test_rollup_hashed_and_wide_keys_agree_with_array_form(monkeypatch, huge_every):
    # every third (second) node's key space is 2**100 (2**80) times larger: past int64
    # with five QIDs, the column-by-column path; with the hashed path in the same runs
    _check_rollup(20 + huge_every, 3, monkeypatch, True, huge_every)


@pytest.mark.parametrize("thread_entries", [1 << 30, 700])
def test_large_nodes_take_the_partitioned_path(monkeypatch, thread_entries):
    """Nodes whose table would exceed ``PARTITION_TABLE`` slots are hash-partitioned first;
    lowered here (with ~40-entry partitions) so that the 20,000-entry batch has such nodes
    beside small ones, hashed and dense, each phase on one thread or shared by several."""
    monkeypatch.setattr(grouping, "PARTITION_TABLE", 2_000)
    monkeypatch.setattr(grouping, "PARTITION_ENTRIES", 40)
    monkeypatch.setattr(grouping, "PARTITION_THREAD_ENTRIES", thread_entries)
    calls = []
    real = grouping._rollup_partitioned
    monkeypatch.setattr(grouping, "_rollup_partitioned",
                        lambda *a: calls.append(a[1] - a[0]) or real(*a))
    _check_rollup(31, 2, monkeypatch, True, huge_every=4)
    assert 0 < len(calls) < 2 * 60  # some of the 60 nodes (each checked twice), not all


@pytest.mark.parametrize("with_sens,huge_every,partition", [(False, 0, False), (True, 3, False),
                                                             (True, 0, True)])
def test_rollup_into_given_arrays_equals_new_arrays(monkeypatch, with_sens, huge_every,
                                                    partition):
    """``out=``: the groups are written into the given (larger, dirty) arrays, views of them
    are returned, equal to a roll-up into new arrays -- runs of nodes, the column-by-column
    path, and a node alone on the partitioned path."""
    if partition:
        monkeypatch.setattr(grouping, "PARTITION_TABLE", 2_000)
        monkeypatch.setattr(grouping, "PARTITION_ENTRIES", 40)
    rng = np.random.default_rng(41 + huge_every)
    domains = [7, 40, 3, 25, 11]
    codes, sens, count, first, _ = _frequency_set(rng, 20_000, domains, with_sens)
    maps, offs = _maps(rng, domains)
    start, stop, map_off, radix = _batch(rng, len(first), offs, 30, int(sens.max()) + 1,
                                         huge_every)
    if partition:  # the whole frequency set to one node whose table exceeds the limit
        start, stop, map_off, radix = start[:1], stop[:1], map_off[:1], radix[:1]
        radix[0, :-1] = domains
        map_off[0] = 0
    args = (codes, sens, count, first, start, stop, map_off, maps, radix)
    monkeypatch.setattr(grouping, "n_tasks_for", lambda rows, n_seg, per_thread=4: 3)
    want = grouping.rollup_njit(*args)
    room = int((stop - start).sum()) + 100
    out = (np.full((room, codes.shape[1]), 99, maps.dtype), np.zeros(room, sens.dtype),
           np.full(room, -5, np.int64), np.full(room, -5, np.int64))
    calls = []
    real = grouping._rollup_partitioned
    monkeypatch.setattr(grouping, "_rollup_partitioned",
                        lambda *a: calls.append(len(a)) or real(*a))
    got = grouping.rollup_njit(*args, out=out)
    assert bool(calls) == partition
    for g, w, name in zip(got, want, NAMES):
        np.testing.assert_array_equal(g, w, err_msg=name)
    for g, o in zip(got[:4], out):
        assert np.shares_memory(g, o)
    # an empty ``first``: the first rows are not kept (the source's are not read either)
    lean = out[:3] + (np.empty(0, np.int64),)
    args = args[:3] + (np.empty(0, np.int64),) + args[4:]
    got = grouping.rollup_njit(*args, out=lean)
    for g, w, name in zip(got, want, NAMES):
        if name == "first":
            assert g.shape == (0,)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


def test_rollup_empty_batch():
    codes = np.zeros((0, 2), np.int16)
    out = grouping.rollup_njit(codes, np.zeros(0, np.int32), np.zeros(0, np.int64),
                               np.zeros(0, np.int64), np.zeros(0, np.int64),
                               np.zeros(0, np.int64), np.zeros((0, 2), np.int64),
                               np.zeros(1, np.int16), np.zeros((0, 3), np.int64))
    assert [len(a) for a in out] == [0, 0, 0, 0, 1]


@pytest.mark.parametrize("q", list(range(1, 14)))
def test_loss_sums_every_block_plan_bit_identical(q):
    rng = np.random.default_rng(q)
    lens = rng.integers(0, 80, size=9)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(ptr[-1])
    size = rng.integers(1, 5000, size=n).astype(np.int64)
    codes = rng.integers(0, 12, size=(n, q)).astype(np.int8)
    outlier = rng.random(n) < 0.3
    share = rng.integers(1, 97, size=60) / 97.0
    off = rng.integers(0, 48, size=(len(lens), q)).astype(np.int64)
    want = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    got = segsum.loss_sums_njit(size, codes, outlier, ptr, off, share)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("with_small", [False, True])
def test_node_stats_forms_agree(with_small):
    rng = np.random.default_rng(7)
    lens = rng.integers(0, 50, size=30)
    lens[3] = 0
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(ptr[-1])
    size = rng.integers(1, 20, size=n).astype(np.int64)
    outlier = rng.random(n) < 0.4
    outlier[ptr[5]:ptr[6]] = True  # a node with everything suppressed
    small = size < 5 if with_small else None
    cpu = kernels.node_stats(types.SimpleNamespace(kernels="cpu"), size, outlier, small, ptr,
                             ptr)
    # by hand
    for b in range(len(lens)):
        s = slice(ptr[b], ptr[b + 1])
        kept = size[s][~outlier[s]]
        assert cpu[b, 0] == size[s][outlier[s]].sum()
        assert cpu[b, 1] == (size[s][small[s]].sum() if with_small else 0)
        assert cpu[b, 2] == len(kept)
        assert cpu[b, 3] == (kept.min() if len(kept) else 0)
    # the array form, on the nodes that have classes (its segment minimum needs them)
    keep = np.flatnonzero(lens > 0)
    sub_ptr = np.concatenate([[0], np.cumsum(lens[keep])]).astype(np.int64)
    rows = np.concatenate([np.arange(ptr[b], ptr[b + 1]) for b in keep])
    xp_backend = types.SimpleNamespace(kernels="numpy", xp=np, to_host=np.asarray)
    arr = kernels.node_stats(xp_backend, size[rows], outlier[rows],
                             None if small is None else small[rows], sub_ptr, sub_ptr)
    np.testing.assert_array_equal(arr, cpu[keep])


def test_run_tasks_runs_every_task_once():
    seen = []
    groupby.run_tasks(lambda t, out: out.append(t), 9, seen)
    assert sorted(seen) == list(range(9))


def test_balanced_runs_cover_all_segments():
    ptr = np.array([0, 0, 10, 10, 11, 40, 41, 41], np.int64)
    for n_runs in range(1, 9):
        runs = groupby.balanced_runs(ptr, n_runs)
        assert runs[0] == 0 and runs[-1] == len(ptr) - 1
        assert np.all(np.diff(runs) > 0) and len(runs) - 1 <= max(n_runs, 1)
    assert groupby.balanced_runs(np.zeros(1, np.int64), 4).tolist() == [0]


@pytest.mark.parametrize("with_keep", [False, True])
def test_loss_sums_only_where_asked(with_keep):
    """``charge`` and ``keep``: the nodes whose charged and kept sums are wanted (kept: by
    default all); a node neither kept nor charged gets NaN, a charged one both sums (one pass
    gives both)."""
    rng = np.random.default_rng(99 + with_keep)
    lens = rng.integers(0, 60, size=16)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n, q = int(ptr[-1]), 9
    size = rng.integers(1, 5000, size=n).astype(np.int64)
    codes = rng.integers(0, 12, size=(n, q)).astype(np.int8)
    outlier = rng.random(n) < 0.3
    share = rng.integers(1, 97, size=60) / 97.0
    off = rng.integers(0, 48, size=(len(lens), q)).astype(np.int64)
    charge = rng.random(len(lens)) < 0.4
    keep = rng.random(len(lens)) < 0.4 if with_keep else None
    want_charged, want_kept = segsum.loss_sums_reference(size, codes, outlier, ptr, off, share)
    charged, kept = segsum.loss_sums_njit(size, codes, outlier, ptr, off, share, charge, keep)
    has_kept = charge | keep if with_keep else np.ones(len(lens), bool)
    np.testing.assert_array_equal(kept[has_kept], want_kept[has_kept])
    np.testing.assert_array_equal(charged[charge], want_charged[charge])
    assert np.isnan(kept[~has_kept]).all() and np.isnan(charged[~charge]).all()


@pytest.mark.parametrize("seed", range(3))
def test_searches_and_releases_unchanged_when_every_node_is_partitioned(monkeypatch, seed):
    """End to end: with the thresholds lowered so that nearly every node is rolled up
    partitioned (on several threads), the optimum, its statistics, the checked nodes and the
    release are those of the default roll-up."""
    from gpuppdp import Anonymizer
    from gpuppdp.models import DistinctLDiversity, KAnonymity

    from .test_flash_sparse import _table

    data, hierarchies = _table(seed)
    data = pd.concat([data] * 40, ignore_index=True)  # nodes of thousands of entries

    def fit():
        return Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                          models=[KAnonymity(3), DistinctLDiversity("s", 2)],
                          suppression_limit=0.1, backend="cpu", seed=0).fit(data)

    want = fit()
    monkeypatch.setattr(grouping, "PARTITION_TABLE", 16)
    monkeypatch.setattr(grouping, "PARTITION_ENTRIES", 8)
    monkeypatch.setattr(grouping, "PARTITION_THREAD_ENTRIES", 64)
    got = fit()
    assert got.transformation == want.transformation
    assert got.search.nodes_evaluated == want.search.nodes_evaluated
    assert got.information_loss == want.information_loss
    assert got.node == want.node
    pd.testing.assert_frame_equal(got.released, want.released)


def test_reused_scratch_lends_one_buffer_per_name_and_is_released():
    with grouping.reused_scratch():
        a = grouping._scratch("keys", 100, np.int64)
        with grouping.reused_scratch():  # nested: the same pool
            b = grouping._scratch("keys", 60, np.int64)
        assert np.shares_memory(a, b) and len(b) == 60
        c = grouping._scratch("keys", 1000, np.int64)  # grown
        assert len(c) == 1000 and not np.shares_memory(a, c)
    assert grouping._SCRATCH.pool is None
    assert not np.shares_memory(grouping._scratch("keys", 10, np.int64),
                                grouping._scratch("keys", 10, np.int64))


def test_scratch_above_the_pooled_size_is_not_kept(monkeypatch):
    monkeypatch.setattr(grouping, "POOLED_ENTRIES", 50)
    with grouping.reused_scratch():
        small = grouping._scratch("keys", 40, np.int64)
        assert np.shares_memory(small, grouping._scratch("keys", 30, np.int64))
        big = grouping._scratch("keys", 60, np.int64)  # fresh, and the pooled one let go
        assert not np.shares_memory(big, small)
        assert "keys" not in grouping._SCRATCH.pool


def test_partitioned_counts_past_four_bytes(monkeypatch):
    """Counts of 2^31 records and more (one entry standing for billions of rows) take the
    partitioned path's 8-byte partition counts and stay exact."""
    monkeypatch.setattr(grouping, "PARTITION_TABLE", 16)
    monkeypatch.setattr(grouping, "PARTITION_ENTRIES", 8)
    rng = np.random.default_rng(5)
    domains = [7, 40, 3]
    codes, sens, count, first, _ = _frequency_set(rng, 3_000, domains, False)
    count[::5] += np.int64(3) << 31
    maps, offs = _maps(rng, domains)
    pick = [0, 1, 0]  # the second QID coarsened, the others as they are
    map_off = np.array([[offs[j][p][0] for j, p in enumerate(pick)]], np.int64)
    radix = np.array([[offs[j][p][1] for j, p in enumerate(pick)] + [1]], np.int64)
    args = (codes, sens, count, first, np.array([0]), np.array([len(first)]), map_off, maps,
            radix)
    for got, want, name in zip(grouping.rollup_njit(*args), grouping.rollup_xp(np, *args),
                               NAMES):
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_level_maps_share_one_identity_at_offset_0():
    """``level_maps``: every QID's level-to-same-level map is the identity at offset 0 (which
    the CPU roll-up takes without a gather), every other map is the hierarchy's ``upmap``
    and starts past it."""
    from gpuppdp import Anonymizer

    from .test_flash_sparse import _table

    data, hierarchies = _table(0)
    ev = Anonymizer(quasi_identifiers=hierarchies, insensitive=["s"], k=2,
                    backend="cpu")._evaluator_for(data)
    maps, off = ev.encoded.level_maps()
    leaves = max(len(h.labels(0)) for h in ev.encoded.hierarchies)
    np.testing.assert_array_equal(maps[:leaves], np.arange(leaves))
    for j, h in enumerate(ev.encoded.hierarchies):
        for a in range(h.height + 1):
            assert off[j, a, a] == grouping.IDENTITY_OFFSET == 0
            for b in range(a + 1, h.height + 1):
                assert off[j, a, b] >= leaves
                m = h.upmap(a, b)
                np.testing.assert_array_equal(maps[off[j, a, b]:off[j, a, b] + len(m)], m)


@pytest.mark.parametrize("partitioned", [False, True])
def test_identity_offset_rolls_up_as_the_gathered_identity(monkeypatch, partitioned):
    """A QID kept at its level (offset 0) and the same identity gathered from elsewhere in
    ``maps_flat`` give the same roll-up, on every CPU path (table, partitioned, columns)."""
    if partitioned:
        monkeypatch.setattr(grouping, "PARTITION_TABLE", 16)
        monkeypatch.setattr(grouping, "PARTITION_ENTRIES", 8)
        monkeypatch.setattr(grouping, "PARTITION_THREAD_ENTRIES", 64)
    rng = np.random.default_rng(3)
    n, q = 3000, 3
    codes = rng.integers(0, 40, size=(n, q)).astype(np.int16)
    maps = np.concatenate([np.arange(40), np.arange(40), rng.integers(0, 7, 40)]).astype(np.int16)
    sens = np.zeros(n, np.int32)
    count = rng.integers(1, 5, n).astype(np.int64)
    first = np.arange(n, dtype=np.int64)
    start, stop = np.array([0, 0, 0]), np.array([n, n, n])
    radix = np.array([[40, 40, 7, 1], [40 << 20, 40 << 20, 7 << 20, 1], [40, 40, 7, 1]])
    skip = np.array([[0, 0, 80]] * 3)      # offset 0: no gather
    gather = np.array([[40, 40, 80]] * 3)  # the same identity, gathered
    for got, want in zip(grouping.rollup_njit(codes, sens, count, first, start, stop, skip, maps,
                                              radix),
                         grouping.rollup_njit(codes, sens, count, first, start, stop, gather,
                                              maps, radix)):
        np.testing.assert_array_equal(got, want)
