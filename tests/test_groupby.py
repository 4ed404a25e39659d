"""The one group-by (``gpuppdp.kernels.groupby``): its forms agree on the same inputs.

* ``group_njit`` (Numba CPU) and ``group_xp`` (the array form the GPU runs, here on NumPy and
  on the strict CuPy stand-in) against a dictionary-based reference, on every path: dense
  counting, a packed int64 key (hash / argsort), and keys past int64 (packed column by column
  / lexsort); groups numbered by first appearance or sorted, with and without segments;
* the Numba primitives (``number_keys``, ``extend_key``) on their own;
* the dispatchers built on it (``group``, ``kernels.classes``, ``kernels.common_groups``) on
  every backend;
* the strict stand-in refuses what CuPy refuses (``add.at`` into int64).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuppdp import kernels
from gpuppdp.kernels import groupby
from gpuppdp.testing import assert_backend_equal, strict_backend

SEEDS = list(range(10))

#: radices per regime: a small key space (dense), a large one (packed key: hash / argsort),
#: one past int64 (column by column / lexsort)
REGIMES = {"dense": lambda r: r, "packed": lambda r: r * 10_000,
           "wide": lambda r: np.full_like(r, 2 ** 40)}


def naive_group(cols, ptr, order):
    """Per segment, a dict of key tuples in order of first appearance (or sorted)."""
    n = cols.shape[0]
    ids = np.empty(n, np.int64)
    rep, group_ptr = [], [0]
    for s in range(len(ptr) - 1):
        rows = range(ptr[s], ptr[s + 1])
        keys = [tuple(int(v) for v in cols[i]) for i in rows]
        uniq = list(dict.fromkeys(keys))
        if order == "sorted":
            uniq.sort()
        number = {k: group_ptr[-1] + g for g, k in enumerate(uniq)}
        first = {}
        for i, k in zip(rows, keys):
            ids[i] = number[k]
            first.setdefault(number[k], i)
        rep.extend(first[group_ptr[-1] + g] for g in range(len(uniq)))
        group_ptr.append(group_ptr[-1] + len(uniq))
    return ids, np.array(rep, np.int64), np.array(group_ptr, np.int64)


def random_table(seed, n=None, k=None, segments=True):
    """Codes with repeats, radices (k,), segment offsets (some segments empty)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300)) if n is None else n
    k = int(rng.integers(1, 5)) if k is None else k
    radix = rng.integers(1, 6, size=k).astype(np.int64)
    distinct = np.stack([rng.integers(0, r, size=max(n // 3, 1)) for r in radix], axis=1)
    cols = distinct[rng.integers(0, len(distinct), size=n)].astype(np.int16)
    if segments:
        cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, 5))))
        ptr = np.concatenate([[0], cuts, [n]]).astype(np.int64)
    else:
        ptr = None
    return cols, radix, ptr


def _check(got, want, order, names=("ids", "rep", "group_ptr"), to_host=np.asarray):
    ids, rep, group_ptr = (to_host(a) for a in got)
    np.testing.assert_array_equal(ids, want[0], err_msg=names[0])
    np.testing.assert_array_equal(group_ptr, want[2], err_msg=names[2])
    if order == "first":
        np.testing.assert_array_equal(rep, want[1], err_msg=names[1])
    else:  # a row of each group (on the dense path any row)
        np.testing.assert_array_equal(ids[rep], np.arange(len(want[1])), err_msg=names[1])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("regime", list(REGIMES))
@pytest.mark.parametrize("order", ["first", "sorted"])
def test_forms_agree(seed, regime, order):
    cols, radix, ptr = random_table(seed)
    radix = REGIMES[regime](radix)
    host_ptr = np.array([0, len(cols)]) if ptr is None else ptr
    want = naive_group(cols, host_ptr, order)
    _check(groupby.group_njit(cols, radix, ptr, order), want, order)
    _check(groupby.group_xp(np, cols, radix, ptr, order), want, order)
    be = strict_backend()
    got = groupby.group_xp(be.xp, be.asarray(cols), radix,
                           None if ptr is None else be.asarray(ptr), order)
    _check(got, want, order, to_host=be.to_host)


@pytest.mark.parametrize("order", ["first", "sorted"])
def test_forms_agree_per_segment_radix(order):
    """Radices may be given per segment (S, k), as the roll-up's node radices are."""
    cols, radix, ptr = random_table(7, n=400, k=3)
    per_seg = np.tile(radix, (len(ptr) - 1, 1)) * np.arange(1, len(ptr))[:, None]
    want = naive_group(cols, ptr, order)
    _check(groupby.group_njit(cols, per_seg, ptr, order), want, order)
    _check(groupby.group_xp(np, cols, per_seg, ptr, order), want, order)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_forms_agree_on_large_tables(seed):
    """Thousands of rows over many segments: the parallel Numba path and the sort path."""
    rng = np.random.default_rng(100 + seed)
    n = 20_000
    radix = np.array([50, 7, 300, 3], np.int64)
    cols = np.stack([rng.integers(0, r, size=n) for r in radix], axis=1).astype(np.int32)
    ptr = np.concatenate([[0], np.sort(rng.integers(0, n, size=30)), [n]]).astype(np.int64)
    for order in ("first", "sorted"):
        want = naive_group(cols, ptr, order)
        _check(groupby.group_njit(cols, radix, ptr, order), want, order)
        _check(groupby.group_xp(np, cols, radix, ptr, order), want, order)


@pytest.mark.parametrize("sorted_order", [False, True])
@pytest.mark.parametrize("dense_max", [-1, 0, 1 << 30])
def test_number_keys_paths(sorted_order, dense_max):
    """Directly addressed (``dense_max`` large) and hashed (``dense_max`` 0) numbering agree
    with ``numpy.unique`` (sorted) or with the order of first appearance."""
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5000, size=100)[rng.integers(0, 100, size=3000)].astype(np.int64)
    ids = np.empty(len(keys), np.int64)
    number = groupby.number_keys_sorted if sorted_order else groupby.number_keys
    g = number(keys, 5000, ids, dense_max)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    assert g == len(uniq)
    if sorted_order:
        np.testing.assert_array_equal(ids, inverse)
    else:
        rank = np.empty(g, np.int64)
        rank[np.argsort(first)] = np.arange(g)
        np.testing.assert_array_equal(ids, rank[inverse])


def test_extend_key_packs_past_int64():
    """Columns whose radices overflow int64 are packed after replacing the prefix by its
    group ids: equal rows stay equal, different rows different, sorted order kept."""
    rng = np.random.default_rng(4)
    cols = rng.integers(0, 3, size=(500, 6)).astype(np.int64) * (2 ** 39 - 1)  # < 2 ** 40
    keys = np.zeros(len(cols), np.int64)
    scratch = np.empty(len(cols), np.int64)
    space = 1
    for j in range(cols.shape[1]):
        space = groupby.extend_key(keys, space, cols[:, j], 2 ** 40, scratch, True)
        assert 0 < space < 2 ** 62
    _, want = np.unique(cols, axis=0, return_inverse=True)
    _, got = np.unique(keys, return_inverse=True)
    np.testing.assert_array_equal(got, want.reshape(-1))


def test_key_space():
    assert groupby.key_space([3, 4, 5]) == 60
    assert groupby.key_space([0, 4]) == 4  # a radix counts as at least 1
    assert groupby.key_space([2 ** 31, 2 ** 31]) is None
    assert groupby.space_of(np.array([3, 4, 5])) == 60
    assert groupby.space_of(np.array([2 ** 31, 2 ** 31])) == -1


def test_order_is_checked():
    cols, radix, _ = random_table(1, n=10)
    with pytest.raises(ValueError, match="order"):
        groupby.group(np, cols, radix, order="random")


# ---------------------------------------------------------------------------------------
# the dispatchers on every backend
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS[:5])
@pytest.mark.parametrize("order", ["first", "sorted"])
def test_dispatch_group(backend, seed, order):
    cols, radix, ptr = random_table(seed)
    want = naive_group(cols, np.array([0, len(cols)]) if ptr is None else ptr, order)
    d_ptr = None if ptr is None else backend.asarray(ptr)
    got = groupby.group(backend.xp, [backend.asarray(c) for c in cols.T], radix, ptr=d_ptr,
                        order=order)
    for a in got:
        assert_backend_equal(backend, a, np.asarray(backend.to_host(a)))
    _check(got, want, order, to_host=backend.to_host)
    if len(cols):  # radix=None: one more than each column's largest code
        got = groupby.group(backend.xp, backend.asarray(cols), ptr=d_ptr, order=order)
        _check(got, want, order, to_host=backend.to_host)


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_dispatch_common_groups(backend, seed):
    """Rows of two tables share a group iff they have the same node and codes; groups are
    numbered by first appearance, table ``a`` first."""
    rng = np.random.default_rng(seed)
    n_a, n_b, q = 40, 200, 3
    codes = rng.integers(0, 3, size=(n_a + n_b, q)).astype(np.int8)
    node = rng.integers(0, 2, size=n_a + n_b)
    ids, _, _ = naive_group(np.column_stack([node, codes]), np.array([0, n_a + n_b]), "first")
    dev = backend.asarray
    group_a, group_b, n_groups = kernels.common_groups(
        backend, dev(node[:n_a]), dev(codes[:n_a]), dev(node[n_a:]),
        dev(codes[n_a:].astype(np.int32)))
    assert n_groups == ids.max() + 1
    assert_backend_equal(backend, group_a, ids[:n_a])
    assert_backend_equal(backend, group_b, ids[n_a:])


def test_strict_backend_refuses_int64_add_at():
    """CuPy's ``add.at`` (scatter-add) has no int64 form; the stand-in refuses it too."""
    be = strict_backend()
    idx = be.asarray(np.array([0, 0, 1]))
    with pytest.raises(TypeError, match="int64"):
        be.xp.add.at(be.xp.zeros(2, dtype=be.xp.int64), idx, be.asarray(np.ones(3, np.int64)))
    out = be.xp.zeros(2, dtype=be.xp.float64)
    be.xp.add.at(out, idx, be.asarray(np.ones(3)))
    np.testing.assert_array_equal(be.to_host(out), [2.0, 1.0])


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_count_keys_counts_as_a_python_loop(seed):
    """``count_keys``: per key below ``space`` the rows (int64) or their summed weights
    (float64), on NumPy (``bincount``) and in the array form (``add.at`` on the strict CuPy
    stand-in, which refuses int64 scatters), against a Python loop; empty keys give zeros."""
    rng = np.random.default_rng(seed)
    space = int(rng.integers(1, 40))
    key = rng.integers(0, space, int(rng.integers(0, 300)))
    weights = rng.integers(1, 50, key.shape[0]).astype(np.float64)
    counts, sums = np.zeros(space, np.int64), np.zeros(space)
    for k, w in zip(key.tolist(), weights.tolist()):
        counts[k] += 1
        sums[k] += w
    be = strict_backend()
    for xp, convert, back in ((np, np.asarray, np.asarray), (be.xp, be.asarray, be.to_host)):
        got = back(groupby.count_keys(xp, convert(key), space))
        assert got.dtype == np.int64 and got.tolist() == counts.tolist()
        summed = back(groupby.count_keys(xp, convert(key), space, convert(weights)))
        assert summed.dtype == np.float64 and summed.tolist() == sums.tolist()
        assert back(groupby.count_keys(xp, convert(key[:0]), space)).tolist() == [0] * space


@pytest.mark.parametrize("regime", ["dense", "hashed", "wide"])
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_key_set_membership_matches_a_python_set(regime, seed, monkeypatch):
    """A :class:`~gpuppdp.kernels.groupby.KeySet` answers as a Python set of row tuples does,
    on every path (a bool table over a small key space, a hash table or sorted keys, keys
    past int64) and every form (Numba on NumPy arrays, the array form on the strict CuPy
    stand-in), with an empty set and empty tested rows; a host set survives pickling (Dask
    ships it)."""
    import pickle

    rng = np.random.default_rng(seed)
    radix = rng.integers(1, 9, 4)
    if regime == "hashed":  # a hash table on the CPU, sorted keys in the array form
        monkeypatch.setattr(groupby, "DENSE_SET_KEYS", 0)
    elif regime == "wide":
        radix = np.full(4, 2 ** 20)
    rows = (rng.integers(0, 1 << 20, (300, 4)) % radix).astype(np.int32)
    members = rows[rng.random(300) < 0.3]
    members = members[np.unique(members, axis=0, return_index=True)[1]]  # distinct classes
    expected = np.array([tuple(r) in {tuple(m) for m in members} for r in rows.tolist()])
    be = strict_backend()
    for xp, convert, back in ((np, np.asarray, np.asarray),
                              (be.xp, be.asarray, be.to_host)):
        keys = groupby.KeySet(xp, convert(members), radix)
        assert (back(keys.contains(convert(rows))) == expected).all()
        assert back(keys.contains(convert(rows[:0]))).shape == (0,)
        none = groupby.KeySet(xp, convert(members[:0]), radix)
        assert not back(none.contains(convert(rows))).any()
    shipped = pickle.loads(pickle.dumps(groupby.KeySet(np, members, radix)))
    assert (shipped.contains(rows) == expected).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_the_cuda_classes_are_the_groups_of_the_cpu_pass(seed):
    """:func:`grouping_cuda.classes_cuda` (Numba's simulator) against :func:`groupby.group_njit`
    on random batches of frequency-set entries: the same class of every entry, the same
    representatives, offsets, sizes, entry counts and nodes -- with empty nodes, nodes whose
    tables are addressed directly (small key spaces) and hashed ones (large)."""
    from gpuppdp.kernels import grouping_cuda

    rng = np.random.default_rng(seed)
    n_nodes = 6
    lens = rng.integers(0, 60, n_nodes)
    lens[1] = 0
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    q = 3
    radix = rng.integers(1, 5, (n_nodes, q))
    radix[2] = [400, 300, 200]  # a key space far past its entries: hashed
    codes = np.concatenate([rng.integers(0, radix[b], (lens[b], q)) for b in range(n_nodes)]
                           ).astype(np.int16)
    count = rng.integers(1, 9, len(codes)).astype(np.int64)
    got = grouping_cuda.classes_cuda(np, ptr, ptr, codes, radix, count)
    want = groupby.group_njit(codes, radix, ptr, count=count)
    for name, g, w in zip(("class", "rep", "class_ptr", "size", "distinct", "node"), got, want):
        np.testing.assert_array_equal(g, w, err_msg=name)
    empty = grouping_cuda.classes_cuda(np, np.zeros(3, np.int64), np.zeros(3, np.int64),
                                  codes[:0], radix[:2], count[:0])
    assert [len(a) for a in empty] == [0, 0, 3, 0, 0, 0]
