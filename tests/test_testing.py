"""The strict CuPy stand-in refuses implicit host/device mixing and otherwise matches NumPy."""

import copy
import operator
import os
import pickle

import numpy as np
import pytest

from gpuppdp.backend import Backend, cpu_backend
from gpuppdp.testing import (
    StrictArray,
    StrictNamespace,
    asnumpy,
    assert_backend_equal,
    cupy_reference,
    strict_backend,
    strict_xp,
)

IMPLICIT = "Implicit conversion to a NumPy array is not allowed"


@pytest.fixture
def x():
    return strict_xp.asarray(np.array([3, 1, 2, 1, 5], dtype=np.int64))


# --------------------------------------------------------------------------- refusals
def test_np_asarray_refused(x):
    with pytest.raises(TypeError, match=IMPLICIT):
        np.asarray(x)
    with pytest.raises(TypeError, match=IMPLICIT):
        np.array(x)
    assert not hasattr(x, "__array_interface__")
    assert not hasattr(x, "__array_struct__")
    assert not isinstance(x, np.ndarray)


def test_numpy_ufunc_refused(x):
    with pytest.raises(TypeError):
        np.add(x, 1)
    with pytest.raises(TypeError):
        np.maximum.reduce(x)


def test_numpy_array_function_refused(x):
    with pytest.raises(TypeError):
        np.concatenate([x, x])
    with pytest.raises(TypeError):
        np.sum(x)
    with pytest.raises(TypeError):
        np.argsort(x)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.eq,
                                operator.lt, operator.and_, operator.floordiv])
def test_mixed_operators_refused(x, op):
    host = np.arange(5, dtype=np.int64)
    with pytest.raises(TypeError):
        op(host, x)
    with pytest.raises(TypeError):
        op(x, host)


def test_inplace_mixing_refused(x):
    host = np.arange(5, dtype=np.int64)
    with pytest.raises(TypeError):
        host += x
    with pytest.raises(TypeError):
        x += host


def test_numpy_index_and_value_refused(x):
    with pytest.raises(TypeError):
        x[np.array([0, 1])]
    with pytest.raises(TypeError):
        x[np.array([True, False, True, False, True])]
    with pytest.raises(TypeError):
        x[(np.array([0]),)]
    with pytest.raises(TypeError):
        x[np.array([0, 1])] = 7
    with pytest.raises(TypeError):
        x[:] = np.zeros(5, dtype=np.int64)


def test_namespace_refuses_host_arrays(x):
    host = np.arange(3)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        strict_xp.concatenate([host])
    with pytest.raises(TypeError):
        strict_xp.concatenate([x, host])
    with pytest.raises(TypeError):
        strict_xp.bincount(x, weights=np.ones(5))
    with pytest.raises(TypeError):
        strict_xp.where(host > 0, x[:3], 0)
    with pytest.raises(TypeError):
        strict_xp.add.at(x, np.array([0, 1]), 1)
    with pytest.raises(TypeError):
        strict_xp.add.reduceat(x, np.array([0, 2]))
    with pytest.raises(TypeError):
        x.take(np.array([0, 1]))


def test_mixing_with_cpu_backend_refused(x):
    with pytest.raises(TypeError):
        cpu_backend().asarray(x)


# --------------------------------------------------------------------------- transfers
def test_explicit_transfers_round_trip():
    b = strict_backend()
    assert isinstance(b, Backend) and b.is_gpu and b.kernels == "cudasim"
    host = np.array([[1.5, 2.0], [3.0, -1.0]])
    dev = b.asarray(host)
    assert isinstance(dev, StrictArray) and isinstance(dev, b.xp.ndarray)
    host[0, 0] = 99.0  # the device copy is independent of the host buffer
    back = b.to_host(dev)
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, [[1.5, 2.0], [3.0, -1.0]])
    back[0, 0] = -7.0  # and the host copy is independent of the device
    assert float(dev[0, 0]) == 1.5
    np.testing.assert_array_equal(dev.get(), asnumpy(dev))
    np.testing.assert_array_equal(strict_xp.asnumpy(dev), dev.get())
    assert b.asarray([1, 2, 3], dtype=np.int32).dtype == np.int32
    assert b.scalar(dev.sum()) == 5.5


def test_device_arrays_pass_through_asarray(x):
    b = strict_backend()
    assert b.asarray(x) is x
    assert strict_xp.asarray(x) is x
    assert strict_xp.asarray(x, dtype=np.int64) is x
    y = b.asarray(x, dtype=np.float32)
    assert y.dtype == np.float32 and y is not x
    z = strict_xp.array(x)
    z[0] = 100
    assert int(x[0]) == 3  # xp.array copies


def test_xp_asarray_copies_host_data():
    host = np.arange(4)
    for make in (strict_xp.asarray, strict_xp.array, strict_xp.asanyarray):
        dev = make(host)
        host[0] = 42
        assert int(dev[0]) == 0
        host[0] = 0
    mixed = strict_xp.asarray([strict_xp.asarray(np.int64(1)), 2])
    assert mixed.tolist() == [1, 2]


def test_get_set_item_tolist(x):
    out = np.empty(5, dtype=np.int64)
    assert x.get(out=out) is out
    assert out.tolist() == [3, 1, 2, 1, 5] == x.tolist()
    x.set(np.array([0, 0, 0, 0, 9], dtype=np.int64))
    assert x[4].item() == 9
    if cupy_reference() is not None:
        with pytest.raises(TypeError, match="cupy.ndarray.item"):
            x.item(4)  # cupy.ndarray.item(self): no index argument
    with pytest.raises(TypeError):
        x.set([1, 2, 3, 4, 5])


def test_scalars_and_python_protocols(x):
    s = x.sum()
    assert isinstance(s, StrictArray) and s.ndim == 0  # reductions stay on the device
    assert int(s) == 12 and float(s) == 12.0 and bool(s)
    assert [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130][x.max()] == 60
    assert range(20)[x[0]] == 3
    assert len(x) == 5
    items = list(x)
    assert all(isinstance(i, StrictArray) and i.ndim == 0 for i in items)
    assert [int(i) for i in items] == [3, 1, 2, 1, 5]
    assert 5 in x and 7 not in x
    with pytest.raises(TypeError):
        int(x)
    with pytest.raises(TypeError):
        operator.index(strict_xp.asarray(np.array([1.5])))
    with pytest.raises(ValueError):
        bool(x)
    assert f"{x.mean():.2f}" == "2.40"
    assert "StrictArray" in repr(x)
    with pytest.raises(TypeError):
        hash(x)


def test_copy_and_pickle(x):
    for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert isinstance(y, StrictArray)
        y[0] = -1
        assert int(x[0]) == 3


# --------------------------------------------------------------------------- ndarray API
def test_attributes(x):
    m = x.reshape(5, 1)
    assert m.shape == (5, 1) and m.ndim == 2 and m.size == 5
    assert m.dtype == np.int64 and m.itemsize == 8 and m.nbytes == 40
    assert isinstance(m.T, StrictArray) and m.T.shape == (1, 5)
    assert isinstance(x.astype(np.float32), StrictArray)
    assert x.astype(np.float32).dtype == np.float32
    assert isinstance(x.view(np.uint64), StrictArray)
    assert isinstance(strict_xp.asarray(np.array([1, 2])), strict_xp.ndarray)


def test_views_share_memory_and_inplace_ops(x):
    v = x[1:3]
    v[:] = 0
    assert x.tolist() == [3, 0, 0, 1, 5]
    v += 4
    assert x.tolist() == [3, 4, 4, 1, 5]
    x *= 2
    assert x.tolist() == [6, 8, 8, 2, 10]
    x.fill(strict_xp.asarray(np.int64(1)))
    assert x.tolist() == [1, 1, 1, 1, 1]
    r = x.ravel()
    r[0] = 5
    assert int(x[0]) == 5
    x.shape = (5, 1)
    assert x.shape == (5, 1)


def test_operators_with_python_and_numpy_scalars(x):
    assert isinstance(np.int64(2) + x, StrictArray)
    assert (np.int64(2) + x).tolist() == [5, 3, 4, 3, 7]
    assert (10 - x).tolist() == [7, 9, 8, 9, 5]
    assert (2 ** x).tolist() == [8, 2, 4, 2, 32]
    assert (-x).tolist() == [-3, -1, -2, -1, -5]
    assert (~(x > 2)).tolist() == [False, True, True, True, False]
    q, r = divmod(x, 2)
    assert q.tolist() == [1, 0, 1, 0, 2] and r.tolist() == [1, 1, 0, 1, 1]
    assert (x == x).all() and not (x != x).any()
    m = x.reshape(5, 1)
    assert (m.T @ m).tolist() == [[40]]


def _cases():
    """(name, fn(xp, a, b, w)) pairs run on NumPy and on the stand-in (cupy/testing style)."""
    return [
        ("argsort", lambda xp, a, b, w: xp.argsort(a, kind="stable")),
        ("argsort_method", lambda xp, a, b, w: a.argsort()),
        ("cumsum", lambda xp, a, b, w: xp.cumsum(a)),
        ("cumsum_method", lambda xp, a, b, w: a.cumsum()),
        ("bincount", lambda xp, a, b, w: xp.bincount(a, weights=w, minlength=12)),
        ("unique_inverse", lambda xp, a, b, w: xp.unique(a, return_inverse=True,
                                                         return_counts=True)),
        ("unique_all", lambda xp, a, b, w: tuple(xp.unique_all(a))),
        ("lexsort_2d", lambda xp, a, b, w: xp.lexsort(xp.stack([b, a]))),
        ("take", lambda xp, a, b, w: xp.take(a, b[:4])),
        ("take_method", lambda xp, a, b, w: a.take(b)),
        ("searchsorted", lambda xp, a, b, w: xp.searchsorted(xp.sort(a), b, side="right")),
        ("where3", lambda xp, a, b, w: xp.where(a > 3, a, -b)),
        ("where1", lambda xp, a, b, w: xp.where(a > 3)),
        ("nonzero", lambda xp, a, b, w: (a > 3).nonzero()),
        ("concatenate", lambda xp, a, b, w: xp.concatenate([a, b, a[:2]])),
        ("diff", lambda xp, a, b, w: xp.diff(a, prepend=-1)),
        ("add_reduceat", lambda xp, a, b, w: xp.add.reduceat(
            a, xp.asarray(np.array([0, 3, 5]))),),
        ("add_reduce", lambda xp, a, b, w: xp.add.reduce(w)),
        ("add_accumulate", lambda xp, a, b, w: xp.add.accumulate(a)),
        ("multiply_outer", lambda xp, a, b, w: xp.multiply.outer(a[:3], b[:2])),
        ("ufunc_call", lambda xp, a, b, w: xp.maximum(a, b)),
        ("bool_mask", lambda xp, a, b, w: a[a % 2 == 0]),
        ("fancy", lambda xp, a, b, w: a[b]),
        ("fancy_2d", lambda xp, a, b, w: a.reshape(2, 5)[xp.asarray(np.array([1, 0])),
                                                        b[:2] % 5]),
        ("mixed_index", lambda xp, a, b, w: a.reshape(2, 5)[:, b[:3] % 5]),
        ("list_index", lambda xp, a, b, w: a[[0, 2, 4]]),
        ("reductions", lambda xp, a, b, w: (a.sum(), a.min(), a.max(), a.mean(), a.any(),
                                            a.all(), xp.count_nonzero(a), w.sum(axis=0))),
        ("split", lambda xp, a, b, w: xp.split(a, [2, 5])),
        ("arange_zeros", lambda xp, a, b, w: (xp.arange(5, dtype=xp.int32),
                                              xp.zeros((2, 3)), xp.full(3, xp.nan),
                                              xp.empty_like(a).shape,
                                              xp.iinfo(xp.int32).max)),
        ("repeat", lambda xp, a, b, w: xp.repeat(a[:3], 2)),
        ("sort_method", lambda xp, a, b, w: xp.sort(a)[::-1].copy()),
        ("clip_astype", lambda xp, a, b, w: xp.clip(a, 2, 6).astype(xp.int8)),
        ("isin", lambda xp, a, b, w: xp.isin(a, b)),
        ("ravel_multi_index", lambda xp, a, b, w: xp.ravel_multi_index((a, b), (12, 10))),
    ]


_CASES = _cases()


@pytest.mark.parametrize("fn", [f for _, f in _CASES], ids=[n for n, _ in _CASES])
def test_common_ops_match_numpy(fn):
    a_h = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], dtype=np.int64)
    b_h = np.array([0, 9, 2, 2, 7, 1, 8, 3, 6, 4], dtype=np.int64)
    w_h = np.linspace(0.0, 1.0, 10)
    expected = fn(np, a_h.copy(), b_h.copy(), w_h.copy())
    got = fn(strict_xp, strict_xp.asarray(a_h), strict_xp.asarray(b_h), strict_xp.asarray(w_h))
    _compare(got, expected)


def _compare(got, expected):
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _compare(g, e)
    elif isinstance(expected, (np.ndarray, np.generic)):
        assert isinstance(got, StrictArray), type(got)
        h = got.get()
        assert h.dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(h, expected)
    else:
        assert got == expected


def test_ufunc_at_and_inplace_out():
    acc_h = np.zeros(4)
    np.add.at(acc_h, np.array([0, 1, 1, 3]), np.array([1.0, 2.0, 3.0, 4.0]))
    acc = strict_xp.zeros(4)
    strict_xp.add.at(acc, strict_xp.asarray(np.array([0, 1, 1, 3])),
                     strict_xp.asarray(np.array([1.0, 2.0, 3.0, 4.0])))
    np.testing.assert_array_equal(acc.get(), acc_h)
    out = strict_xp.empty(4)
    res = strict_xp.multiply(acc, 2, out=out)
    np.testing.assert_array_equal(out.get(), acc_h * 2)
    assert res.get().tolist() == (acc_h * 2).tolist()
    top = strict_xp.zeros(4, dtype=np.int32)
    strict_xp.maximum.at(top, strict_xp.asarray(np.array([2])), 10)
    assert int(top[2]) == 10


def test_setitem_forms(x):
    x[strict_xp.asarray(np.array([0, 4]))] = strict_xp.asarray(np.array([7, 8]))
    x[x == 1] = 0
    x[2] = np.int64(6)
    x[(slice(None, 1),)] = x[4]
    assert x.tolist() == [8, 0, 6, 0, 8]


def test_random_generator_returns_strict_arrays():
    rng = strict_xp.random.default_rng(0)
    ref = np.random.default_rng(0)
    r = rng.integers(0, 10, size=6)
    assert isinstance(r, StrictArray)
    np.testing.assert_array_equal(r.get(), ref.integers(0, 10, size=6))
    assert isinstance(rng.random(3), StrictArray)
    rs, ref_rs = strict_xp.random.RandomState(0), np.random.RandomState(0)
    p = rs.permutation(strict_xp.arange(5))  # cupy.random.Generator has no permutation
    assert isinstance(p, StrictArray)
    np.testing.assert_array_equal(p.get(), ref_rs.permutation(np.arange(5)))
    with pytest.raises(TypeError):
        rs.permutation(np.arange(5))
    assert isinstance(strict_xp.random.RandomState(1).rand(2), StrictArray)
    assert strict_xp.random is strict_xp.random


def test_namespace_passthrough():
    assert strict_xp.int32 is np.int32
    assert strict_xp.newaxis is None
    assert np.isnan(strict_xp.nan)
    assert strict_xp.iinfo(strict_xp.int32).max == 2**31 - 1
    assert strict_xp.finfo(np.float64).eps == np.finfo(np.float64).eps
    assert strict_xp.dtype("int64") == np.int64
    assert strict_xp.get_array_module(strict_xp.zeros(1)) is strict_xp
    assert strict_xp.get_array_module(np.zeros(1)) is np
    assert strict_xp.ndarray is StrictArray


# --------------------------------------------------------------------------- helpers/fixture
def test_assert_backend_equal_checks_device_and_values():
    b = strict_backend()
    dev = b.asarray(np.array([1.0, 2.0]))
    assert_backend_equal(b, dev, np.array([1.0, 2.0]))
    assert_backend_equal(b, dev + 1e-12, np.array([1.0, 2.0]), rtol=1e-9)
    with pytest.raises(AssertionError):
        assert_backend_equal(b, dev, np.array([1.0, 3.0]))
    with pytest.raises(AssertionError, match="expected an array of backend"):
        assert_backend_equal(b, np.array([1.0, 2.0]), np.array([1.0, 2.0]))


def test_backend_fixture_params(request):
    conftests = [p for p in request.config.pluginmanager.get_plugins()
                 if hasattr(p, "BACKEND_PARAMS")]
    assert len(conftests) == 1
    expected = ["numpy", "strict"]
    if os.environ.get("GPUPPDP_TEST_GPU") == "1":
        expected.append("cupy")
    else:
        assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"  # simulator tier
    assert conftests[0].BACKEND_PARAMS == expected


def test_backend_fixture(backend):
    assert backend.name in ("numpy", "strict-cupy", "cupy")
    xp = backend.xp
    codes = backend.asarray(np.array([2, 0, 2, 1, 0], dtype=np.int32))
    assert backend.asarray(codes) is codes or backend.name == "numpy"
    order = xp.argsort(codes, kind="stable")
    counts = xp.bincount(codes, minlength=3)
    starts = xp.concatenate([xp.zeros(1, dtype=counts.dtype), xp.cumsum(counts)[:-1]])
    assert_backend_equal(backend, order, [1, 4, 3, 0, 2])
    assert_backend_equal(backend, counts, [2, 1, 2])
    assert_backend_equal(backend, starts, [0, 2, 3])
    assert backend.scalar(counts.max()) == 2
    assert int(counts.sum()) == 5
    if backend.name != "numpy":
        with pytest.raises(TypeError):
            np.asarray(codes)
        with pytest.raises(TypeError):
            xp.concatenate([codes, np.zeros(1, dtype=np.int32)])


def test_strict_repeat_refuses_device_counts():
    """CuPy's ``repeat`` refuses a device array of counts; the stand-in does too."""
    xp = strict_xp
    a = xp.arange(3)
    assert xp.repeat(a, 2).get().tolist() == [0, 0, 1, 1, 2, 2]
    assert xp.repeat(a, [1, 0, 2]).get().tolist() == [0, 2, 2]
    with pytest.raises(ValueError, match="cannot be specified as `repeats`"):
        xp.repeat(a, xp.asarray(np.array([1, 0, 2])))


# --------------------------------------------------------------------------- CuPy's interface
needs_cupy = pytest.mark.skipif(cupy_reference() is None,
                                reason="CuPy not importable: no namespace/signature check")


@needs_cupy
def test_only_cupy_names_exposed():
    """Names CuPy lacks raise AttributeError naming them (namespace, submodule, ndarray,
    ufunc, random generator); names CuPy has pass."""
    xp = StrictNamespace()  # fresh: no cached attributes
    assert hasattr(np, "unique_all") and hasattr(np, "trapezoid")
    for name in ("trapezoid", "cumulative_sum", "bitwise_count"):  # NumPy 2.x only
        if not hasattr(cupy_reference(), name):
            with pytest.raises(AttributeError, match=repr(name)):
                getattr(xp, name)
    with pytest.raises(AttributeError, match="'no_such_function'"):
        xp.no_such_function
    with pytest.raises(AttributeError, match="'permutation'"):
        xp.random.default_rng(0).permutation(3)
    with pytest.raises(AttributeError, match="'ptp'|'tofile'"):
        a = xp.arange(3)
        a.tofile if not hasattr(cupy_reference().ndarray, "tofile") else a.ptp
    for name in ("bincount", "lexsort", "searchsorted", "cumsum", "concatenate", "stack",
                 "where", "unique", "argsort", "flatnonzero", "count_nonzero", "outer",
                 "broadcast_to", "ascontiguousarray", "rint", "clip", "int64", "bool_", "inf"):
        getattr(xp, name)
    assert xp.arange(3).tolist() == [0, 1, 2]


@needs_cupy
def test_cupy_signatures_checked():
    xp = strict_xp
    a = xp.arange(4)
    with pytest.raises(TypeError, match="initial"):
        xp.sum(a, initial=0)  # cupy.sum(a, axis, dtype, out, keepdims)
    with pytest.raises(TypeError, match="sorted"):
        xp.unique(a, sorted=True)  # cupy.unique has no `sorted` (NumPy 2.3)
    with pytest.raises(TypeError, match="order"):
        xp.argsort(a, order="x")  # cupy.argsort(a, axis, kind)
    with pytest.raises(TypeError, match="like"):
        xp.zeros(3, like=a)
    with pytest.raises(TypeError, match="initial"):
        a.max(initial=0)  # cupy.ndarray.max(self, axis, out, keepdims): embedded signature
    assert a.astype(np.float32, copy=False).dtype == np.float32
    u, inv, cnt = xp.unique(a % 2, return_inverse=True, return_counts=True)
    assert u.tolist() == [0, 1] and cnt.tolist() == [2, 2]


def test_lexsort_needs_one_2d_array():
    """cupy/_sorting/sort.py: lexsort(keys) reads keys.ndim; 1-D keys give array(0)."""
    xp = strict_xp
    a = xp.asarray(np.array([2, 1, 2, 0]))
    b = xp.asarray(np.array([0, 1, 1, 5]))
    assert xp.lexsort(xp.stack([b, a])).tolist() == np.lexsort(
        [np.array([0, 1, 1, 5]), np.array([2, 1, 2, 0])]).tolist()
    with pytest.raises(AttributeError, match="2-D"):
        xp.lexsort((b, a))
    with pytest.raises(AttributeError, match="2-D"):
        xp.lexsort([b, a])
    with pytest.raises(ValueError, match="1-D"):
        xp.lexsort(a)
    with pytest.raises(NotImplementedError):
        xp.lexsort(xp.zeros((2, 2, 2)))


def test_sort_kind_only_stable():
    """cupy/_core/core.pyx _check_kind_sort: kind can only be None or 'stable'."""
    xp = strict_xp
    a = xp.asarray(np.array([3, 1, 2]))
    assert xp.argsort(a, kind="stable").tolist() == [1, 2, 0]
    assert a.argsort().tolist() == [1, 2, 0] and a.argsort(axis=0).tolist() == [1, 2, 0]
    assert xp.sort(a, -1, "stable").tolist() == [1, 2, 3]
    for call in (lambda: xp.argsort(a, kind="quicksort"), lambda: xp.sort(a, -1, "heapsort")):
        with pytest.raises(ValueError, match="kind can only be None or 'stable'"):
            call()
    # cupy/_core/core.pyx v13.6.0: the methods take only axis
    for call in (lambda: a.argsort(kind="stable"), lambda: a.sort(-1, "stable")):
        with pytest.raises(TypeError, match="only `axis`"):
            call()


def test_searchsorted_restrictions():
    """cupy/_sorting/search.py _searchsorted: a 1-D device array; v a device array (CuPy 13);
    integer sorter; int64 result."""
    xp = strict_xp
    a = xp.asarray(np.array([1, 3, 5], dtype=np.int32))
    got = xp.searchsorted(a, xp.asarray(np.array([0, 3, 6], dtype=np.int32)), side="right")
    assert got.tolist() == [0, 2, 3] and got.dtype == np.int64
    with pytest.raises(NotImplementedError, match="v"):
        xp.searchsorted(a, [1, 2])
    with pytest.raises(NotImplementedError, match="v"):
        xp.searchsorted(a, 4)  # CuPy 13: no Python scalar v
    with pytest.raises(ValueError, match="too deep"):
        xp.searchsorted(xp.zeros((2, 2)), a)
    with pytest.raises(TypeError, match="sorter"):
        xp.searchsorted(a, a, sorter=xp.asarray(np.array([0.0, 1.0, 2.0])))


def test_bincount_restrictions():
    """cupy/_statistics/histogram.py bincount: 1-D, not float, non-negative, weights of x's
    shape; an empty x fails before CuPy 14.2."""
    xp = strict_xp
    x = xp.asarray(np.array([0, 2, 2], dtype=np.int32))
    w = xp.asarray(np.array([0.5, 1.0, 2.0]))
    assert xp.bincount(x).tolist() == [1, 0, 2]
    assert xp.bincount(x, weights=w, minlength=4).tolist() == [0.5, 0.0, 3.0, 0.0]
    with pytest.raises(TypeError, match="int array"):
        xp.bincount(x.astype(np.float64))
    with pytest.raises(ValueError, match="non-negative"):
        xp.bincount(x - 1)
    with pytest.raises(ValueError, match="too deep"):
        xp.bincount(xp.zeros((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="same length"):
        xp.bincount(x, weights=xp.asarray(np.array([1.0])))
    with pytest.raises(ValueError, match="empty"):  # CuPy < 14.2: cupy.max of a 0-size x
        xp.bincount(xp.zeros(0, dtype=np.int32), weights=xp.zeros(0), minlength=3)


def test_unsupported_dtypes_refused():
    """cupy/_core/_dtype.pyx check_supported_dtype: no object, string or datetime arrays."""
    be = strict_backend()
    for host in (np.array(["a", None], dtype=object), np.array(["ab"]),
                 np.array(["2020-01-01"], dtype="datetime64[D]")):
        with pytest.raises(ValueError, match="Unsupported dtype"):
            be.asarray(host)
        with pytest.raises(ValueError, match="Unsupported dtype"):
            strict_xp.asarray(host)
    assert strict_xp.asarray(np.array([1.5], dtype=np.float16)).dtype == np.float16


def test_add_at_refuses_int64():
    """cupy/_core/_routines_indexing.pyx (v13.6, v14.0): add.at has no int64 overload."""
    xp = strict_xp
    idx = xp.asarray(np.array([0, 0, 2]))
    acc = xp.zeros(3, dtype=np.int32)
    xp.add.at(acc, idx, 1)
    assert acc.tolist() == [2, 0, 1]
    with pytest.raises(TypeError, match="int64"):
        xp.add.at(xp.zeros(3, dtype=np.int64), idx, 1)


def test_extreme_at_refuses_float64():
    """An H200 with CuPy 14.2.0: maximum.at into float64 rounded the values through float32;
    the stand-in refuses float64 there and takes the integer forms."""
    xp = strict_xp
    idx = xp.asarray(np.array([0, 0, 2]))
    acc = xp.zeros(3, dtype=np.uint64)
    xp.maximum.at(acc, idx, xp.asarray(np.array([3, 5, 1], dtype=np.uint64)))
    assert acc.tolist() == [5, 0, 1]
    for name in ("maximum", "minimum"):
        with pytest.raises(TypeError, match="float32"):
            getattr(xp, name).at(xp.zeros(3), idx, xp.asarray(np.array([0.1, 0.2, 0.3])))


def test_ufunc_reductions_only_where_cupy_has_them():
    """cupy/_core/_kernel.pyx ufunc (as CuPy 14.2 answers): reduce and accumulate of add and
    multiply only, reduceat of add only; the others raise NotImplementedError."""
    xp = strict_xp
    a = xp.asarray(np.array([3, 1, 4, 1, 5]))
    at = xp.asarray(np.array([0, 2]))
    assert xp.add.reduceat(a, at).tolist() == [4, 10]
    assert xp.multiply.accumulate(a).tolist() == [3, 3, 12, 12, 60]
    for call in (lambda: xp.minimum.reduceat(a, at), lambda: xp.maximum.reduceat(a, at),
                 lambda: xp.multiply.reduceat(a, at), lambda: xp.minimum.accumulate(a),
                 lambda: xp.maximum.reduce(a)):
        with pytest.raises(NotImplementedError, match="is not supported yet"):
            call()
