"""A strict CuPy stand-in, so the CuPy code path runs (and fails) in CI without a GPU.

Real CuPy refuses to mix host and device data: ``cupy.ndarray.__array__`` raises
``TypeError``, ``cupy.concatenate([numpy_array])`` and ``numpy_array + cupy_array`` raise
``TypeError``.  Code that only ever runs on NumPy in CI would hide such mixing until it meets a
GPU.  :func:`strict_backend` hands out a :class:`~gpuppdp.backend.Backend` whose arrays
(:class:`StrictArray`) live on a pretend device: they compute with NumPy underneath, but every
implicit host/device crossing raises ``TypeError`` the way CuPy does, and reductions return 0-d
arrays rather than NumPy scalars, as CuPy's do.

Cross-backend test helpers (:func:`assert_backend_equal`) follow the model of CuPy's own
``cupy/testing/_loops.py``: run one code path, bring the result back explicitly, compare with
NumPy through :mod:`numpy.testing`.
"""

from __future__ import annotations

import functools
import operator
import os
import types
from typing import Any

import numpy as np

from gpuppdp.backend import Backend

#: Backend the engine-level test suites (golden ARX cases, property tests) run on: ``"gpu"`` in
#: the GPU tier (``GPUPPDP_TEST_GPU=1``), else ``"cpu"``.
ENGINE_BACKEND = "gpu" if os.environ.get("GPUPPDP_TEST_GPU") == "1" else "cpu"

__all__ = [
    "ENGINE_BACKEND",
    "StrictArray",
    "StrictNamespace",
    "strict_xp",
    "strict_backend",
    "asnumpy",
    "assert_backend_equal",
]

_IMPLICIT_MSG = ("Implicit conversion to a NumPy array is not allowed. "
                 "Please use `.get()` to construct a NumPy array explicitly.")


def _host_error(where: str) -> TypeError:
    return TypeError(
        f"Unsupported type <class 'numpy.ndarray'> in {where}: a host numpy.ndarray met "
        "device arrays (CuPy raises here too); transfer it explicitly with "
        "backend.asarray / xp.asarray")


def _rebuild(like, items):
    """A list/tuple/namedtuple of the same type as *like* holding *items*."""
    if isinstance(like, list):
        return items
    if hasattr(like, "_fields"):  # namedtuple results, e.g. numpy.unique_all
        return type(like)(*items)
    return type(like)(items)


def _unwrap(obj, where: str):
    """StrictArray -> its ndarray (recursively in lists/tuples); a raw ndarray -> TypeError."""
    if isinstance(obj, StrictArray):
        return obj._a
    if isinstance(obj, np.ndarray):
        raise _host_error(where)
    if isinstance(obj, (list, tuple)) and obj:
        return _rebuild(obj, [_unwrap(o, where) for o in obj])
    return obj


def _unwrap_host_ok(obj):
    """Like :func:`_unwrap` but host ndarrays are accepted (``xp.asarray``/``xp.array``)."""
    if isinstance(obj, StrictArray):
        return obj._a
    if isinstance(obj, (list, tuple)) and obj:
        return _rebuild(obj, [_unwrap_host_ok(o) for o in obj])
    return obj


def _wrap(obj):
    """ndarray -> StrictArray, NumPy scalar -> 0-d StrictArray (CuPy reductions return 0-d
    arrays), recursively through tuples/lists; NumPy random generators -> wrapped proxies."""
    if isinstance(obj, np.ndarray):
        return StrictArray(obj)
    if isinstance(obj, np.generic):
        return StrictArray(np.asarray(obj))
    if isinstance(obj, (tuple, list)):
        return _rebuild(obj, [_wrap(o) for o in obj])
    if isinstance(obj, (np.random.Generator, np.random.RandomState)):
        return _StrictProxy(obj, type(obj).__name__)
    return obj


def _wrap_callable(fn, where: str):
    """Wrap *fn* so StrictArray arguments are unwrapped, raw ndarrays refused, results wrapped."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = tuple(_unwrap(a, where) for a in args)
        kwargs = {k: _unwrap(v, where) for k, v in kwargs.items()}
        return _wrap(fn(*args, **kwargs))

    return wrapper


class StrictArray:
    """A device-array stand-in with ``cupy.ndarray``'s conversion rules.

    Wraps (does not subclass, does not copy) a NumPy array.  Attributes and methods are
    delegated to it with arguments unwrapped and results wrapped, so views share memory as
    device views do.  Implicit conversion to NumPy raises ``TypeError``
    (``cupy.ndarray.__array__`` does); so does mixing with a raw ``numpy.ndarray`` in an
    operator, an index or an assigned value.  Use :meth:`get` (or ``backend.to_host``).
    """

    __slots__ = ("_a",)
    __array_ufunc__ = None  # numpy_array + strict -> NotImplemented -> our __radd__ -> TypeError
    __hash__ = None  # type: ignore[assignment]  # unhashable, like cupy.ndarray

    def __init__(self, a):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"StrictArray wraps a numpy.ndarray, got {type(a).__name__}")
        object.__setattr__(self, "_a", a)

    # --- refusing implicit conversion -------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT_MSG)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(
            f"numpy.{getattr(func, '__name__', func)} called on a StrictArray: "
            + _IMPLICIT_MSG)

    # --- explicit transfers and scalars -----------------------------------------------
    def get(self, stream=None, order="C", out=None):
        """Device -> host copy (``cupy.ndarray.get``)."""
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("out must be a numpy.ndarray")
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        """Host -> device copy into this array (``cupy.ndarray.set``)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        if arr.shape != self._a.shape or arr.dtype != self._a.dtype:
            raise ValueError("Shape or dtype mismatch")
        np.copyto(self._a, arr)

    def _scalar(self):
        if self._a.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return self._a.reshape(-1)[0]

    def __int__(self):
        return int(self._scalar())

    def __float__(self):
        return float(self._scalar())

    def __complex__(self):
        return complex(self._scalar())

    def __index__(self):
        if self._a.size != 1 or self._a.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self._scalar())

    def __bool__(self):
        return bool(self._a)

    # --- containers --------------------------------------------------------------------
    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._a.shape[0]):
            yield StrictArray(self._a[i, ...])

    def __contains__(self, value):
        return bool(np.any(self._a == _unwrap(value, "'in'")))

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, "an index")])

    def __setitem__(self, key, value):
        self._a[_unwrap(key, "an index")] = _unwrap(value, "an assigned value")

    # --- delegation ----------------------------------------------------------------------
    def __getattr__(self, name):
        # Never hand out NumPy's protocol attributes (__array_interface__, ...): np.asarray
        # would use them and the conversion would stop being refused.
        if name.startswith("_"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if callable(attr):
            return _wrap_callable(attr, f"StrictArray.{name}")
        return _wrap(attr)

    def __setattr__(self, name, value):
        if name in ("shape", "dtype"):
            setattr(self._a, name, _unwrap(value, name))
        else:
            raise AttributeError(f"cannot set attribute {name!r} of StrictArray")

    def __dir__(self):
        return sorted(set(dir(type(self))) | {n for n in dir(self._a) if not n.startswith("_")})

    def __repr__(self):
        return f"StrictArray({self._a!r})"

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a if self._a.ndim else self._a[()], spec)

    def __copy__(self):
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictArray(self._a.copy())

    def __reduce__(self):
        return (StrictArray, (self._a,))

    # --- unary operators -------------------------------------------------------------------
    def __neg__(self):
        return _wrap(-self._a)

    def __pos__(self):
        return _wrap(+self._a)

    def __abs__(self):
        return _wrap(abs(self._a))

    def __invert__(self):
        return _wrap(~self._a)


def _binary(op, name):
    def method(self, other):
        return _wrap(op(self._a, _unwrap(other, f"operator {name}")))
    method.__name__ = name
    return method


def _reflected(op, name):
    def method(self, other):
        return _wrap(op(_unwrap(other, f"operator {name}"), self._a))
    method.__name__ = name
    return method


def _inplace(op, name):
    def method(self, other):
        op(self._a, _unwrap(other, f"operator {name}"))  # numpy in-place ops return the array
        return self
    method.__name__ = name
    return method


for _n, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
                ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
                ("lshift", operator.lshift), ("rshift", operator.rshift), ("divmod", divmod)]:
    setattr(StrictArray, f"__{_n}__", _binary(_op, f"__{_n}__"))
    setattr(StrictArray, f"__r{_n}__", _reflected(_op, f"__r{_n}__"))
for _n, _op in [("add", operator.iadd), ("sub", operator.isub), ("mul", operator.imul),
                ("truediv", operator.itruediv), ("floordiv", operator.ifloordiv),
                ("mod", operator.imod), ("pow", operator.ipow), ("matmul", operator.imatmul),
                ("and", operator.iand), ("or", operator.ior), ("xor", operator.ixor),
                ("lshift", operator.ilshift), ("rshift", operator.irshift)]:
    setattr(StrictArray, f"__i{_n}__", _inplace(_op, f"__i{_n}__"))
for _n, _op in [("lt", operator.lt), ("le", operator.le), ("eq", operator.eq),
                ("ne", operator.ne), ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(StrictArray, f"__{_n}__", _binary(_op, f"__{_n}__"))
del _n, _op


class _StrictProxy:
    """Wraps a ufunc or a random ``Generator``: calls and methods (``reduceat``, ``at``,
    ``integers``, ...) unwrap StrictArray arguments, refuse raw ndarrays, wrap results."""

    __slots__ = ("_obj", "_where")

    def __init__(self, obj, where):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_where", where)

    def __call__(self, *args, **kwargs):
        return _wrap_callable(self._obj, self._where)(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._obj, name)
        if callable(attr) and not isinstance(attr, type):
            wrapped = _wrap_callable(attr, f"{self._where}.{name}")
            if name == "at" and self._obj is np.add:
                return _strict_add_at(wrapped)
            return wrapped
        return attr

    def __repr__(self):
        return f"<strict {self._obj!r}>"


#: the dtypes CuPy's ``add.at`` (an atomic scatter-add) accepts: no int64
_ADD_AT_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.uint64, np.float16,
                                             np.float32, np.float64))


def _strict_add_at(add_at):
    """``add.at`` with CuPy's restriction on the dtype of the array added into."""

    @functools.wraps(add_at)
    def wrapper(a, indices, b=None):
        if isinstance(a, StrictArray) and a.dtype not in _ADD_AT_DTYPES:
            raise TypeError(f"cupy.add.at does not support {a.dtype} (CuPy's scatter_add "
                            "supports int32, uint32, uint64, float16, float32, float64)")
        return add_at(a, indices) if b is None else add_at(a, indices, b)

    return wrapper


class StrictNamespace:
    """A module-like view of NumPy with CuPy's rules (``strict_xp`` is ``cupy`` to the code).

    ``getattr`` returns NumPy's attribute: functions and ufuncs are wrapped (StrictArray
    arguments unwrapped, raw ``numpy.ndarray`` arguments refused with ``TypeError`` except in
    ``asarray``/``array``, which copy host data to the "device" as CuPy's do; ndarray results
    wrapped); submodules (``random``, ``linalg``, ...) are wrapped likewise; classes, dtypes and
    constants pass through, except ``ndarray``, which is :class:`StrictArray`.
    """

    ndarray = StrictArray

    def __init__(self, module: types.ModuleType = np, name: str = "strict_xp"):
        self._module = module
        self._cache: dict[str, Any] = {}
        self.__name__ = name

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_module", "_cache"):
            raise AttributeError(name)
        try:
            return self._cache[name]
        except KeyError:
            pass
        attr = getattr(self._module, name)
        where = f"{self.__name__}.{name}"
        if isinstance(attr, types.ModuleType):
            out = StrictNamespace(attr, where)
        elif isinstance(attr, np.ufunc):
            out = _StrictProxy(attr, where)
        elif isinstance(attr, type) and issubclass(
                attr, (np.random.Generator, np.random.RandomState)):
            out = _wrap_callable(attr, where)  # xp.random.RandomState(0) -> wrapped generator
        elif isinstance(attr, type) or not callable(attr):
            out = attr  # dtypes, classes (iinfo, finfo, errstate), constants (nan, newaxis)
        elif name == "repeat":
            out = _strict_repeat(_wrap_callable(attr, where))
        else:
            out = _wrap_callable(attr, where)
        self._cache[name] = out
        return out

    def asarray(self, a, dtype=None, order=None, **kwargs):
        """Like ``cupy.asarray``: a device array passes through (no copy when the dtype
        matches); host data is copied to the device."""
        if isinstance(a, StrictArray):
            if dtype is None or np.dtype(dtype) == a.dtype:
                return a
            return StrictArray(a._a.astype(dtype))
        return StrictArray(np.array(_unwrap_host_ok(a), dtype=dtype, order=order or "K",
                                    copy=True))

    asanyarray = asarray

    def array(self, obj, dtype=None, copy=True, order="K", subok=False, ndmin=0):
        """Like ``cupy.array``: host data is always copied to the device; a device array is
        copied unless ``copy=False`` and no conversion is needed."""
        if isinstance(obj, StrictArray):
            return StrictArray(np.array(obj._a, dtype=dtype, copy=copy, order=order,
                                        ndmin=ndmin))
        return StrictArray(np.array(_unwrap_host_ok(obj), dtype=dtype, copy=True, order=order,
                                    ndmin=ndmin))

    def asnumpy(self, a, stream=None, order="C", out=None):
        return asnumpy(a, stream=stream, order=order, out=out)

    def get_array_module(self, *args):
        """``cupy.get_array_module``: this namespace if any argument is a StrictArray."""
        return self if any(isinstance(a, StrictArray) for a in args) else np

    def __dir__(self):
        return sorted(set(dir(self._module)) | {"asnumpy", "get_array_module", "ndarray"})

    def __repr__(self):
        return f"<StrictNamespace {self.__name__} over {self._module.__name__}>"


strict_xp = StrictNamespace()


def _strict_repeat(repeat):
    """``repeat`` with CuPy's restriction: repeat counts are an int or a host list/tuple,
    never a device array."""

    @functools.wraps(repeat)
    def wrapper(a, repeats, axis=None):
        if isinstance(repeats, StrictArray):
            raise ValueError("cupy.ndarray cannot be specified as `repeats` argument.")
        return repeat(a, repeats, axis)

    return wrapper


def asnumpy(a, stream=None, order="C", out=None):
    """Like ``cupy.asnumpy``: device array -> NumPy copy; anything else -> ``np.asarray``."""
    if isinstance(a, StrictArray):
        return a.get(order=order, out=out)
    res = np.asarray(a, order=order)
    if out is not None:
        np.copyto(out, res)
        return out
    return res


def _to_device(a) -> StrictArray:
    if isinstance(a, StrictArray):
        return a
    return StrictArray(np.array(a, copy=True))


def strict_backend() -> Backend:
    """The strict CuPy stand-in as a :class:`Backend` (``kernels="cudasim"``)."""
    return Backend("strict-cupy", strict_xp, "cudasim", asnumpy, _to_device)


def _is_backend_array(backend: Backend, a) -> bool:
    if backend.kernels == "cpu":
        return isinstance(a, (np.ndarray, np.generic))
    return isinstance(a, backend.xp.ndarray)


def assert_backend_equal(backend: Backend, device_array, expected_numpy, **kw) -> None:
    """Bring *device_array* to the host explicitly and compare it with *expected_numpy*.

    The array must belong to *backend* (a host array coming out of a device code path means
    data left the device unasked).  With ``rtol``/``atol`` in *kw* the comparison is
    :func:`numpy.testing.assert_allclose`, otherwise :func:`numpy.testing.assert_array_equal`;
    other keywords (``err_msg``, ``strict``, ...) are passed on.
    """
    if not _is_backend_array(backend, device_array):
        raise AssertionError(
            f"expected an array of backend {backend.name!r}, got {type(device_array).__name__}")
    actual = backend.to_host(device_array)
    if "rtol" in kw or "atol" in kw:
        np.testing.assert_allclose(actual, expected_numpy, **kw)
    else:
        np.testing.assert_array_equal(actual, expected_numpy, **kw)
