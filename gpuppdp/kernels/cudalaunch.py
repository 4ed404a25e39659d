"""Launching Numba CUDA kernels on CuPy arrays with less host work per launch.

Numba's dispatcher types every argument of every launch, and a CuPy array goes through DLPack
twice (a strided memory view to type it, another to marshal it): tens of microseconds per
array argument of host time on the serial path of every batch of a lattice walk (an
exhaustive search launches kernels with hundreds of array arguments in all).
:func:`launch` keeps, per kernel and argument signature, the kernel Numba compiled and how
each argument is marshalled, and lays CuPy arrays out from their own attributes (pointer,
shape, strides) as Numba's ``_Kernel._prepare_args`` does.

The first launch of a signature goes through Numba's dispatcher (which compiles); the
arguments are then marshalled both ways and the fast path is kept only when they agree, so
a numba-cuda whose layout differs is found out at run time and served by the dispatcher.
Under the CUDA simulator, and for any argument that is not a CuPy array or a scalar, every
launch goes through the dispatcher."""

from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Any

import numpy as np
from numba import config

#: threads of a block in the launches of one thread per item (a roll-up's entries, a node's
#: classes): 256 on a device; 32 under Numba's simulator, which runs a Python thread per CUDA
#: thread and whose launches are small by design (``kernels.SIMULATED_THREADS``)
BLOCK_THREADS = 32 if config.ENABLE_CUDASIM else 256  # type: ignore[attr-defined]
_ARRAY, _BOOL = "array", "bool"
#: (kernel, argument signature) -> (compiled kernel, marshal kinds), or None: the dispatcher
_SIGNATURES: dict = {}
_LOCK = threading.Lock()
#: numba-cuda's launch pieces, imported at the first launch on a device
_NUMBA: dict[str, Any] | None = None
#: where each kernel's first launch per signature is written (one JSON line: the kernel's
#: module and name, its arguments' Numba types), when ``GPUPPDP_RECORD_LAUNCHES`` names a
#: file: what ``benchmarks/cuda_compile_check.py`` compiles for a GPU without one
_RECORD = os.environ.get("GPUPPDP_RECORD_LAUNCHES")


def launch(kernel, grid, block, *args) -> None:
    """``kernel[grid, block](*args)`` (``grid`` and ``block`` ints) on CuPy arrays and
    scalars, with the fast path of this module where it was found to agree with Numba."""
    key = (kernel, tuple(_signature_of(a) for a in args))
    fast = _SIGNATURES.get(key, False)
    if fast is False:
        if _RECORD:
            _record(_RECORD, kernel, args)
        kernel[grid, block](*args)
        with _LOCK:
            if key not in _SIGNATURES:
                _SIGNATURES[key] = _fast_path(kernel, args)
        return
    if fast is None:
        kernel[grid, block](*args)
        return
    compiled, kinds = fast
    numba_cuda = _NUMBA
    assert numba_cuda is not None, "a fast path is kept only once _fast_path imported these"
    numba_cuda["launch"](numba_cuda["stream"], _config(grid, block), compiled,
                         *_marshal(args, kinds))


def _record(path: str, kernel, args) -> None:
    """Append ``kernel``'s launch on ``args`` to the file ``path`` (:data:`_RECORD`)."""
    import numba  # deferred: only when recording, Numba is imported by the kernels anyway

    function = getattr(kernel, "py_func", None) or kernel.fn  # a dispatcher; the simulator's
    types = []
    for value in args:
        t = numba.typeof(value)
        dtype = getattr(t, "dtype", None)
        types.append([str(dtype), t.ndim, t.layout] if getattr(t, "ndim", None) else str(t))
    line = json.dumps({"module": function.__module__, "kernel": function.__name__,
                       "args": types})
    with open(path, "a") as f:
        f.write(line + "\n")


def _signature_of(value):
    """What decides a value's Numba type -- an array's dtype, dimensions and layout; a
    scalar's type -- and whether an array is empty (Numba marshals an empty CuPy array's
    pointer otherwise: such launches stay with the dispatcher, and do not decide for the
    others)."""
    kind = type(value)
    flags = getattr(value, "flags", None)
    if flags is None:
        return kind
    layout = "C" if flags.c_contiguous else ("F" if flags.f_contiguous else "A")
    return (kind, value.dtype.char, value.ndim, layout, value.size == 0)


def _marshal(args, kinds) -> list:
    """Kernel parameters of ``args``: an array as Numba lays it out (meminfo, parent, size,
    itemsize, pointer, shape, strides in bytes), a scalar as its ctypes value."""
    params: list = []
    for value, kind in zip(args, kinds):
        if kind is _ARRAY:
            params += (0, 0, value.size, value.itemsize, value.data.ptr)
            params += value.shape
            params += _strides(value)
        elif kind is _BOOL:
            params.append(value)
        else:
            params.append(kind(value))
    return params


def _strides(value) -> tuple:
    """Strides in bytes; those of the shape for a C-contiguous array, as Numba computes them."""
    if not value.flags.c_contiguous:
        return value.strides
    strides, step = [], value.itemsize
    for n in reversed(value.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _config(grid: int, block: int):
    numba_cuda = _NUMBA
    assert numba_cuda is not None, "called on the fast path only"
    return numba_cuda["config"](grid=grid, block=block, shmem_size=0,
                                **{numba_cuda["cooperative"]: False})


def _fast_path(kernel, args):
    """``(compiled kernel, marshal kinds)`` for a launch like this one, or ``None`` where the
    dispatcher must serve (the simulator, a kernel Numba treats specially, an argument type
    not handled here, or a layout that differs from Numba's own)."""
    global _NUMBA
    try:
        if config.ENABLE_CUDASIM:  # type: ignore[attr-defined]
            return None
        # deferred: numba-cuda is an optional dependency, loaded only with a device
        from numba.cuda import dispatcher as numba_dispatcher  # noqa: PLC0415
        from numba.cuda import types as numba_types  # noqa: PLC0415
        from numba.cuda.cudadrv import driver  # noqa: PLC0415
        if _NUMBA is None:
            _NUMBA = {"launch": numba_dispatcher.launch,
                      "config": numba_dispatcher.LaunchConfig,
                      "cooperative": ("is_cooperative" if numba_dispatcher.CUDA_CORE_GE_1_0
                                      else "cooperative_launch"),
                      "stream": driver._to_core_stream(0)}
        if kernel.specialized or kernel.extensions:
            return None
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        compiled = kernel.overloads.get(argtypes)
        if (compiled is None or compiled.debug or compiled.cooperative
                or getattr(compiled, "launch_config_sensitive", False)):
            return None
        kinds = []
        for ty, value in zip(argtypes, args):
            if isinstance(ty, numba_types.Array) and type(value).__module__.startswith("cupy"):
                kinds.append(_ARRAY)
            elif ty == numba_types.boolean:
                kinds.append(_BOOL)
            elif isinstance(ty, numba_types.Integer):
                kinds.append(getattr(ctypes, f"c_{ty}"))
            elif ty == numba_types.float64:
                kinds.append(ctypes.c_double)
            elif ty == numba_types.float32:
                kinds.append(ctypes.c_float)
            else:
                return None
        # Numba's own marshalling of the same arguments, to compare with
        theirs, keep_alive = [], []
        for ty, value in zip(argtypes, args):
            compiled._prepare_args(ty, value, 0, keep_alive, theirs)
        if not _same_params(_marshal(args, kinds), theirs):
            return None
        return compiled._codelibrary.get_cufunc().kernel, kinds
    except Exception:  # noqa: BLE001 - any surprise: Numba's dispatcher serves
        return None


def _same_params(ours: list, theirs: list) -> bool:
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs):
        if isinstance(a, ctypes._SimpleCData) or isinstance(b, ctypes._SimpleCData):
            if type(a) is not type(b) or a.value != b.value:
                return False
        elif isinstance(a, bool) != isinstance(b, bool) or a != b:
            return False
    return True


def to_device_together(xp, *arrays) -> list:
    """Host int64 arrays copied to the device in one transfer (a copy costs tens of microseconds
    of host time however small it is): device views of one buffer, in the arrays' shapes."""
    host = [np.ascontiguousarray(a, dtype=np.int64) for a in arrays]
    buffer = xp.asarray(np.concatenate([a.ravel() for a in host]))
    views, at = [], 0
    for a in host:
        views.append(buffer[at:at + a.size].reshape(a.shape))
        at += a.size
    return views
