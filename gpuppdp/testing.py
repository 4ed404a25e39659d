"""A strict CuPy stand-in, so the CuPy code path runs (and fails) in CI without a GPU.

Real CuPy refuses to mix host and device data: ``cupy.ndarray.__array__`` raises
``TypeError``, ``cupy.concatenate([numpy_array])`` and ``numpy_array + cupy_array`` raise
``TypeError``.  Code that only ever runs on NumPy in CI would hide such mixing until it meets a
GPU.  :func:`strict_backend` hands out a :class:`~gpuppdp.backend.Backend` whose arrays
(:class:`StrictArray`) live on a pretend device: they compute with NumPy underneath, but every
implicit host/device crossing raises ``TypeError`` the way CuPy does, and reductions return 0-d
arrays rather than NumPy scalars, as CuPy's do.

When CuPy itself is importable (it imports without a GPU: ``pip install cupy-cuda12x``), the
stand-in is also honest about CuPy's interface: it exposes only names CuPy has (``xp.foo`` and
``array.foo`` raise ``AttributeError`` naming ``foo`` when CuPy lacks it) and checks each call
against the CuPy function's signature.  Whether or not CuPy is installed, the restrictions of
CuPy's routines that the package meets are reproduced (see ``_RESTRICTED``), each citing the
CuPy source it is read from.

Cross-backend test helpers (:func:`assert_backend_equal`) follow the model of CuPy's own
``cupy/testing/_loops.py``: run one code path, bring the result back explicitly, compare with
NumPy through :mod:`numpy.testing`.
"""

from __future__ import annotations

import functools
import inspect
import operator
import os
import re
import types
from typing import Any

import numpy as np

from gpuppdp.backend import Backend

#: Backend the engine-level test suites (golden ARX cases, property tests) run on: ``"gpu"`` in
#: the GPU tier (``GPUPPDP_TEST_GPU=1``), else ``"cpu"``.
ENGINE_BACKEND = "gpu" if os.environ.get("GPUPPDP_TEST_GPU") == "1" else "cpu"

__all__ = [
    "ENGINE_BACKEND",
    "device_to_host_count",
    "StrictArray",
    "StrictNamespace",
    "strict_xp",
    "strict_backend",
    "asnumpy",
    "assert_backend_equal",
]

_IMPLICIT_MSG = ("Implicit conversion to a NumPy array is not allowed. "
                 "Please use `.get()` to construct a NumPy array explicitly.")


#: set ``GPUPPDP_STRICT_CUPY=0`` to turn the checks against CuPy's own namespace off
_CHECK_CUPY = os.environ.get("GPUPPDP_STRICT_CUPY", "1") != "0"


@functools.lru_cache(maxsize=1)
def cupy_reference():
    """The ``cupy`` module the stand-in checks names and signatures against, or ``None``
    (CuPy not installed, or ``GPUPPDP_STRICT_CUPY=0``).  Importing CuPy needs no GPU."""
    if not _CHECK_CUPY:
        return None
    try:
        import cupy  # deferred: CuPy is optional
    except Exception:  # not installed, or a broken install: no namespace check
        return None
    return cupy


_DOC_SIGNATURE = re.compile(r"^(?:[\w.]+\.)?(\w+)\((.*)\)(?:\s*->.*)?$")


def _signature_from_doc(fn, name):
    """The signature Cython embeds as the first docstring line (``embedsignature``), e.g.
    ``_ndarray_base.astype(self, dtype, order='K', ...) -> _ndarray_base``; else None."""
    doc = (getattr(fn, "__doc__", None) or "").strip()
    m = _DOC_SIGNATURE.match(doc.splitlines()[0]) if doc else None
    if m is None or m.group(1) != name:
        return None
    namespace: dict[str, Any] = {}
    try:
        exec(f"def _f({m.group(2)}): pass", {}, namespace)  # noqa: S102 - CuPy's own docstring
        return inspect.signature(namespace["_f"])
    except Exception:  # Cython-typed parameters, defaults naming CuPy internals, ...: skip
        return None


def _cupy_signature(ref, name, method=False):
    """The signature of CuPy's ``ref.name`` (``inspect.signature``, else the one Cython embeds
    in the docstring), without ``self`` for a *method*; None when neither is available
    (ufuncs, classes, Cython functions without an embedded signature: not checked)."""
    fn = getattr(ref, name, None)
    if fn is None or isinstance(fn, type) or not callable(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = _signature_from_doc(fn, name)
    if sig is None:
        return None
    params = list(sig.parameters.values())
    if method:
        if not params or params[0].name != "self":
            return None
        params = params[1:]
    return sig.replace(parameters=params, return_annotation=inspect.Signature.empty)


@functools.lru_cache(maxsize=None)
def _ndarray_method_signature(name):
    ref = cupy_reference()
    return None if ref is None else _cupy_signature(ref.ndarray, name, method=True)


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
    # cupy/_core/_routines_manipulation.pyx concatenate_method: "Only cupy arrays can be
    # concatenated"; cupy/_core/_kernel.pyx _preprocess_arg -> _scalar.pyx CScalar:
    # "Unsupported type <class 'numpy.ndarray'>" for a host array passed to a kernel
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
        ref = cupy_reference()
        name = type(obj).__name__
        return _StrictProxy(obj, name, getattr(ref.random, name, None) if ref else None)
    return obj


def _wrap_callable(fn, where: str, signature=None):
    """Wrap *fn* so StrictArray arguments are unwrapped, raw ndarrays refused, results wrapped;
    with *signature* (CuPy's), arguments CuPy's function would not accept raise TypeError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if signature is not None:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{where}{signature}: {exc} (CuPy's signature)") from None
        args = tuple(_unwrap(a, where) for a in args)
        kwargs = {k: _unwrap(v, where) for k, v in kwargs.items()}
        return _wrap(fn(*args, **kwargs))

    return wrapper


_DEVICE_TO_HOST = [0]


def device_to_host_count() -> int:
    """Device-to-host transfers of strict arrays so far in this process (``get``, Python
    scalars, ``bool``, ``item`` and ``tolist``): each a synchronization on a GPU.  Tests
    compare two readings."""
    return _DEVICE_TO_HOST[0]


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
        # cupy/_core/core.pyx _ndarray_base.__array__: implicit conversion raises TypeError
        raise TypeError(_IMPLICIT_MSG)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(
            f"numpy.{getattr(func, '__name__', func)} called on a StrictArray: "
            + _IMPLICIT_MSG)

    # --- explicit transfers and scalars -----------------------------------------------
    def get(self, stream=None, order="C", out=None):
        """Device -> host copy (``cupy.ndarray.get``)."""
        _DEVICE_TO_HOST[0] += 1
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
        _DEVICE_TO_HOST[0] += 1
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
        _DEVICE_TO_HOST[0] += 1
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
        ref = cupy_reference()
        if ref is not None and not hasattr(ref.ndarray, name):
            raise AttributeError(f"'cupy.ndarray' object has no attribute {name!r} "
                                 "(the strict stand-in exposes only CuPy's attributes)")
        attr = getattr(self._a, name)
        if name in ("item", "tolist"):
            _DEVICE_TO_HOST[0] += 1
        if callable(attr):
            out = _wrap_callable(attr, f"cupy.ndarray.{name}", _ndarray_method_signature(name))
            if name in ("sort", "argsort"):
                out = _check_method_sort(out, f"cupy.ndarray.{name}")
            return out
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

    __slots__ = ("_obj", "_where", "_ref")

    def __init__(self, obj, where, ref=None):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_ref", ref)  # CuPy's counterpart (a ufunc, a class), if known

    def __call__(self, *args, **kwargs):
        return _wrap_callable(self._obj, self._where)(*args, **kwargs)

    def __getattr__(self, name):
        if self._ref is not None and not name.startswith("_") and not hasattr(self._ref, name):
            raise AttributeError(f"CuPy's {self._where} has no attribute {name!r} (the strict "
                                 "stand-in exposes only what CuPy has)")
        attr = getattr(self._obj, name)
        if callable(attr) and not isinstance(attr, type):
            wrapped = _wrap_callable(attr, f"{self._where}.{name}")
            if name == "at" and self._obj is np.add:
                return _strict_at(wrapped, _add_at_refusal)
            if name == "at" and self._obj in (np.maximum, np.minimum):
                return _strict_at(wrapped, _extreme_at_refusal(self._obj.__name__))
            if name in _REDUCING and self._obj not in _REDUCING[name]:
                return _unsupported(f"cupy_{self._obj.__name__}.{name}")
            return wrapped
        return attr

    def __repr__(self):
        return f"<strict {self._obj!r}>"


#: the ufuncs whose ``reduce``, ``accumulate`` and ``reduceat`` CuPy has (the others raise
#: NotImplementedError: cupy/_core/_kernel.pyx ufunc, as CuPy 14.2.0 answers; add.reduce is sum,
#: add.accumulate cumsum, multiply's prod and cumprod, add.reduceat the one reduceat)
_REDUCING = {"reduce": (np.add, np.multiply), "accumulate": (np.add, np.multiply),
             "reduceat": (np.add,)}


def _unsupported(name):
    """A ufunc method CuPy lacks: calling it raises CuPy's NotImplementedError."""

    def method(*args, **kwargs):
        raise NotImplementedError(f"`{name}` is not supported yet")

    return method


#: the dtypes CuPy's ``add.at`` (an atomic scatter-add) accepts: no int64 before CuPy 14.1
#: (cupy/_core/_routines_indexing.pyx _scatter_op_single, v13.6.0 and v14.0.0)
_ADD_AT_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.uint64, np.float16,
                                             np.float32, np.float64))


def _add_at_refusal(dtype) -> str | None:
    if dtype not in _ADD_AT_DTYPES:
        return (f"cupy.add.at does not support {dtype} (CuPy's scatter_add supports int32, "
                "uint32, uint64, float16, float32, float64)")
    return None


def _extreme_at_refusal(name: str):
    """``maximum.at`` / ``minimum.at`` are refused on float64: CuPy 14.2.0's rounds the values
    through float32 (an H200, 2026-11-28: ``maximum.at`` of ``log2(9/7)`` gave
    ``float32(log2(9/7))``), so a float64 result would silently differ from NumPy's."""

    def refusal(dtype) -> str | None:
        if dtype == np.float64:
            return (f"cupy.{name}.at on float64 rounds through float32 (CuPy 14.2.0 on an "
                    "H200): the stand-in refuses it")
        return None

    return refusal


def _strict_at(at, refusal):
    """A ufunc's ``at`` refusing, with ``TypeError``, a stand-in array whose dtype
    ``refusal`` gives a reason for (what CuPy refuses or gets wrong)."""

    @functools.wraps(at)
    def wrapper(a, indices, b=None):
        reason = refusal(a.dtype) if isinstance(a, StrictArray) else None
        if reason:
            raise TypeError(reason)
        return at(a, indices) if b is None else at(a, indices, b)

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

    def __init__(self, module: types.ModuleType = np, name: str = "strict_xp",
                 cupy_path: str = ""):
        self._module = module
        self._cache: dict[str, Any] = {}
        self._cupy_path = cupy_path  # "" for cupy itself, "random" for cupy.random, ...
        self.__name__ = name

    def _cupy_module(self):
        """The CuPy module this namespace stands for (None: CuPy not importable)."""
        ref = cupy_reference()
        for part in filter(None, self._cupy_path.split(".")):
            if ref is None:
                break
            ref = getattr(ref, part, None)
        return ref

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_module", "_cache", "_cupy_path"):
            raise AttributeError(name)
        try:
            return self._cache[name]
        except KeyError:
            pass
        ref = self._cupy_module()
        if ref is not None and not hasattr(ref, name):
            cupy_name = ".".join(filter(None, ("cupy", self._cupy_path)))
            raise AttributeError(f"module {cupy_name!r} has no attribute {name!r} (the strict "
                                 "stand-in exposes only the names CuPy has)")
        attr = getattr(self._module, name)
        where = f"{self.__name__}.{name}"
        signature = _cupy_signature(ref, name) if ref is not None else None
        if isinstance(attr, types.ModuleType):
            out = StrictNamespace(attr, where,
                                  ".".join(filter(None, (self._cupy_path, name))))
        elif isinstance(attr, np.ufunc):
            out = _StrictProxy(attr, where, getattr(ref, name, None) if ref is not None else None)
        elif isinstance(attr, type) and issubclass(
                attr, (np.random.Generator, np.random.RandomState)):
            out = _wrap_callable(attr, where)  # xp.random.RandomState(0) -> wrapped generator
        elif isinstance(attr, type) or not callable(attr):
            out = attr  # dtypes, classes (iinfo, finfo, errstate), constants (nan, newaxis)
        elif not self._cupy_path and name in _RESTRICTED:
            out = _RESTRICTED[name](_wrap_callable(attr, where, signature))
        else:
            out = _wrap_callable(attr, where, signature)
        self._cache[name] = out
        return out

    def asarray(self, a, dtype=None, order=None, **kwargs):
        """Like ``cupy.asarray``: a device array passes through (no copy when the dtype
        matches); host data is copied to the device."""
        if isinstance(a, StrictArray):
            if dtype is None or np.dtype(dtype) == a.dtype:
                return a
            return StrictArray(_check_dtype(a._a.astype(dtype)))
        return StrictArray(_check_dtype(np.array(_unwrap_host_ok(a), dtype=dtype,
                                                 order=order or "K", copy=True)))

    asanyarray = asarray

    def array(self, obj, dtype=None, copy=True, order="K", subok=False, ndmin=0):
        """Like ``cupy.array``: host data is always copied to the device; a device array is
        copied unless ``copy=False`` and no conversion is needed."""
        if isinstance(obj, StrictArray):
            return StrictArray(_check_dtype(np.array(obj._a, dtype=dtype, copy=copy,
                                                     order=order, ndmin=ndmin)))
        return StrictArray(_check_dtype(np.array(_unwrap_host_ok(obj), dtype=dtype, copy=True,
                                                 order=order, ndmin=ndmin)))

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


# --- CuPy's restrictions, read from CuPy's source (tags v13.6.0 .. v14.2.0; the gpu extra
# --- allows cupy>=13, so a restriction lifted in a later 14.x is kept, with a note) ----------
#: dtype characters CuPy arrays can hold (plus structured/void); others raise ValueError
_CUPY_TYPE_CHARS = "?bhilqBHILQefdFD"  # cupy/_core/_dtype.pyx: all_type_chars


def _check_dtype(a: np.ndarray) -> np.ndarray:
    """CuPy refuses object, string, datetime arrays (``ValueError: Unsupported dtype``)."""
    # cupy/_core/_dtype.pyx check_supported_dtype: only all_type_chars and plain void dtypes
    if a.dtype.char not in _CUPY_TYPE_CHARS and a.dtype.kind != "V":
        raise ValueError(f"Unsupported dtype {a.dtype} (CuPy arrays cannot hold it)")
    return a


def _check_sort_kind(fn, where, kind_pos=2):
    """``sort``/``argsort``: CuPy's sort is always stable and accepts only ``kind=None`` or
    ``"stable"`` (*kind_pos*: its position, 2 in ``xp.sort(a, axis, kind)``, 1 in
    ``a.sort(axis, kind)``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        kind = kwargs.get("kind", args[kind_pos] if len(args) > kind_pos else None)
        # cupy/_core/core.pyx ndarray._check_kind_sort: kind can only be None or 'stable'
        if kind is not None and kind != "stable":
            raise ValueError(f"{where}: kind can only be None or 'stable' (CuPy), got {kind!r}")
        return fn(*args, **kwargs)

    return wrapper


def _check_method_sort(fn, where):
    """``a.sort()``/``a.argsort()``: CuPy 13 takes only ``axis``; CuPy 14 adds ``kind``
    (None or "stable").  Both: pass no ``kind`` to the method, use ``xp.argsort(a, kind=)``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # cupy/_core/core.pyx v13.6.0: cpdef sort(self, int axis=-1), argsort(self, axis=-1)
        if len(args) > 1 or set(kwargs) - {"axis"}:
            raise TypeError(f"{where}: CuPy 13 accepts only `axis` (no kind/order); "
                            "xp.sort/xp.argsort take kind=None or 'stable'")
        return fn(*args, **kwargs)

    return wrapper


def _strict_sort(fn):
    return _check_sort_kind(fn, "cupy.sort")


def _strict_argsort(fn):
    return _check_sort_kind(fn, "cupy.argsort")


def _strict_repeat(repeat):
    """``repeat`` with CuPy's restriction: repeat counts are an int or a host list/tuple,
    never a device array."""

    @functools.wraps(repeat)
    def wrapper(a, repeats, axis=None):
        # cupy/_core/_routines_manipulation.pyx _repeat (v13.6, v14.0; accepted from v14.1)
        if isinstance(repeats, StrictArray):
            raise ValueError("cupy.ndarray cannot be specified as `repeats` argument.")
        return repeat(a, repeats, axis)

    return wrapper


def _strict_lexsort(lexsort):
    """``lexsort`` with CuPy's restrictions: the keys are one 2-D device array ``(k, N)``."""

    @functools.wraps(lexsort)
    def wrapper(keys, *args, **kwargs):
        # cupy/_sorting/sort.py lexsort: reads keys.ndim, so a tuple/list of arrays fails
        if not isinstance(keys, StrictArray):
            raise AttributeError(
                f"cupy.lexsort needs its keys as one 2-D cupy.ndarray (k, N), got "
                f"{type(keys).__name__}: stack them first ('{type(keys).__name__}' object "
                "has no attribute 'ndim')")
        # cupy/_sorting/sort.py lexsort: keys.ndim > 2 -> NotImplementedError
        if keys.ndim > 2:
            raise NotImplementedError("Keys with the rank of three or more is not supported "
                                      "in lexsort")
        # cupy/_sorting/sort.py lexsort: 1-D keys return cupy.array(0), not an argsort
        if keys.ndim == 1:
            raise ValueError("cupy.lexsort of a 1-D key returns array(0), not NumPy's "
                             "ordering: pass a 2-D (1, N) array")
        if args or kwargs:  # cupy/_sorting/sort.py lexsort(keys): no axis parameter
            raise TypeError("cupy.lexsort takes only keys (no axis)")
        return lexsort(keys)

    return wrapper


def _strict_searchsorted(searchsorted):
    """``searchsorted`` with CuPy's restrictions on ``a``, ``v`` and ``sorter``."""

    @functools.wraps(searchsorted)
    def wrapper(a, v, side="left", sorter=None):
        # cupy/_sorting/search.py _searchsorted: a must be a cupy.ndarray of rank 1
        if not isinstance(a, StrictArray):
            raise NotImplementedError("Only int or ndarray are supported for a")
        if a.ndim != 1:
            raise ValueError("object too deep for desired array" if a.ndim > 1
                             else "object of too small depth for desired array")
        # cupy/_sorting/search.py _searchsorted: v must be a cupy.ndarray (v13.6.0; Python
        # scalars are accepted from v14.0)
        if not isinstance(v, StrictArray):
            raise NotImplementedError("Only int or ndarray are supported for v (CuPy 13: "
                                      "no Python scalars, no lists)")
        # cupy/_sorting/search.py _searchsorted: sorter must be an integer device array
        if sorter is not None and (not isinstance(sorter, StrictArray)
                                   or sorter.dtype.kind not in "iu"):
            raise TypeError("sorter must be of integer type")
        out = searchsorted(a, v, side, sorter)
        # cupy/_sorting/search.py _searchsorted: the result is always int64
        return out.astype(np.int64) if isinstance(out, StrictArray) else out

    return wrapper


def _strict_bincount(bincount):
    """``bincount`` with CuPy's restrictions (of every CuPy the gpu extra allows)."""

    @functools.wraps(bincount)
    def wrapper(x, weights=None, minlength=None):
        if not isinstance(x, StrictArray):  # x.ndim is read first: a list fails
            raise AttributeError(f"cupy.bincount needs a cupy.ndarray, got {type(x).__name__}")
        # cupy/_statistics/histogram.py bincount: x must be 1-D, not float, non-negative
        if x.ndim != 1:
            raise ValueError("object too deep for desired array" if x.ndim > 1
                             else "object of too small depth for desired array")
        if x.dtype.kind == "f":
            raise TypeError("x must be int array")
        if x.size and bool((x._a < 0).any()):
            raise ValueError("The first argument of bincount must be non-negative")
        # cupy/_statistics/histogram.py bincount: weights must have x's shape (no broadcast)
        if isinstance(weights, np.ndarray):  # the kernel launch refuses host arrays
            raise _host_error("cupy.bincount")
        if weights is not None and (not isinstance(weights, StrictArray)
                                    or weights.shape != x.shape):
            raise ValueError("The weights and list don't have the same length.")
        # cupy/_statistics/histogram.py bincount: size = int(cupy.max(x)) + 1, so an empty x
        # raises ValueError (zero-size reduction) up to v14.1.1; v14.2.0 returns intp zeros
        if x.size == 0:
            raise ValueError("cupy.bincount of an empty array fails before CuPy 14.2 "
                             "(zero-size array to reduction operation cupy_max)")
        return bincount(x, weights=weights, minlength=0 if minlength is None else minlength)

    return wrapper


#: CuPy routines with restrictions NumPy does not have: name -> wrapper factory
_RESTRICTED = {
    "repeat": _strict_repeat,
    "lexsort": _strict_lexsort,
    "sort": _strict_sort,
    "argsort": _strict_argsort,
    "searchsorted": _strict_searchsorted,
    "bincount": _strict_bincount,
}


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
    return StrictArray(_check_dtype(np.array(a, copy=True)))


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
