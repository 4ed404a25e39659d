"""The Numba CUDA launcher (:mod:`gpuppdp.kernels.cudalaunch`): results as through Numba's
dispatcher, arrays laid out as Numba lays them out, and (GPU tier) the fast path taken for CuPy
arrays once its marshalling agreed with Numba's own."""

import ctypes
import json

import numpy as np
from numba import cuda

from gpuppdp.kernels import cudalaunch
from gpuppdp.kernels.cudalaunch import launch


@cuda.jit
def _mixed(table, column, scale, shift, flag, out):
    """``out[i] = table[i, 1] * scale + column[i] + shift (+ 100 where flag)``."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = table[i, 1] * scale + column[i] + shift + (100.0 if flag else 0.0)


def test_launch_gives_the_dispatchers_results_on_every_launch(backend):
    on_device = backend.name == "cupy"  # else host arrays (the simulator, or Numba's copies)
    xp = backend.xp if on_device else np
    n = 300
    table = xp.asarray(np.arange(3 * n, dtype=np.int32).reshape(n, 3))
    column = xp.asarray(np.linspace(0.0, 1.0, 2 * n))[::2]  # on a device: strided, layout "A"
    if not on_device:  # Numba copies host arrays in one piece
        column = column.copy()
    expected = (np.arange(n) * 3 + 1) * 2.5 + np.linspace(0.0, 1.0, 2 * n)[::2] + 7
    for flag in (False, True, False):  # the first launch compiles, the others reuse
        out = xp.zeros(n, dtype=np.float64)
        args = (table, column, 2.5, np.int64(7), flag, out)
        launch(_mixed, (n + 127) // 128, 128, *args)
        np.testing.assert_allclose(backend.to_host(out) if on_device else out,
                                   expected + (100.0 if flag else 0.0))
    fast = cudalaunch._SIGNATURES[(_mixed, tuple(map(cudalaunch._signature_of, args)))]
    if on_device:  # CuPy arrays: marshalled here, after agreeing with Numba's own layout
        assert fast is not None
        assert fast[1][:2] == [cudalaunch._ARRAY, cudalaunch._ARRAY]
    else:  # the dispatcher serves every launch
        assert fast is None


class _DeviceArray:
    """Just the attributes the marshalling reads of a CuPy array."""

    class _Flags:
        def __init__(self, c):
            self.c_contiguous = c
            self.f_contiguous = False

    class _Pointer:
        def __init__(self, ptr):
            self.ptr = ptr

    def __init__(self, shape, itemsize, ptr, strides, contiguous):
        self.shape, self.itemsize, self.strides = shape, itemsize, strides
        self.size = int(np.prod(shape))
        self.data = self._Pointer(ptr)
        self.flags = self._Flags(contiguous)


def test_arrays_are_laid_out_as_numba_lays_them_out():
    """Numba's ``_Kernel._prepare_args``: meminfo, parent, size, itemsize, data pointer, the
    shape, then the strides in bytes (computed from the shape for a C-contiguous array)."""
    table = _DeviceArray((4, 3), 8, 4096, (999, 999), True)  # strides recomputed: (24, 8)
    column = _DeviceArray((5,), 4, 8192, (12,), False)  # a strided view: its own strides
    kinds = [cudalaunch._ARRAY, cudalaunch._ARRAY, ctypes.c_int64, ctypes.c_double,
             cudalaunch._BOOL]
    params = cudalaunch._marshal([table, column, 3, 2.5, True], kinds)
    assert params[:9] == [0, 0, 12, 8, 4096, 4, 3, 24, 8]
    assert params[9:16] == [0, 0, 5, 4, 8192, 5, 12]
    assert type(params[16]) is ctypes.c_int64 and params[16].value == 3
    assert type(params[17]) is ctypes.c_double and params[17].value == 2.5
    assert params[18] is True
    assert len(params) == 19


def test_an_empty_array_has_a_signature_of_its_own():
    """Numba marshals an empty CuPy array differently (its pointer): a launch with one must
    not decide the fast path of launches with the array filled."""
    assert cudalaunch._signature_of(np.zeros(0)) != cudalaunch._signature_of(np.zeros(3))
    assert cudalaunch._signature_of(np.zeros(2)) == cudalaunch._signature_of(np.ones(5))


def test_a_layout_that_differs_from_numbas_is_refused():
    same = [0, 0, 12, 8, 4096, ctypes.c_int64(3), True]
    assert cudalaunch._same_params(same, [0, 0, 12, 8, 4096, ctypes.c_int64(3), True])
    assert not cudalaunch._same_params(same, [0, 0, 12, 8, 4096, ctypes.c_int32(3), True])
    assert not cudalaunch._same_params(same, [0, 0, 12, 8, 4097, ctypes.c_int64(3), True])
    assert not cudalaunch._same_params(same, [0, 0, 12, 8, 4096, ctypes.c_int64(3), 1])
    assert not cudalaunch._same_params(same, same[:-1])


def test_first_launches_are_recorded_for_the_offline_compile_check(tmp_path, monkeypatch):
    """With ``GPUPPDP_RECORD_LAUNCHES`` a kernel's first launch per signature is written as
    the kernel's name and its arguments' Numba types (``benchmarks/cuda_compile_check.py``
    compiles them for a GPU); a second launch of the same signature is not."""
    path = tmp_path / "launches.jsonl"
    monkeypatch.setattr(cudalaunch, "_RECORD", str(path))
    monkeypatch.setattr(cudalaunch, "_SIGNATURES", {})
    n = 4
    table = np.zeros((n, 3), dtype=np.int32)
    column = np.zeros(n)
    out = np.zeros(n)
    for _ in range(2):
        launch(_mixed, 1, 32, table, column, 2.5, np.int64(7), True, out)
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {
        "module": __name__, "kernel": "_mixed",
        "args": [["int32", 2, "C"], ["float64", 1, "C"], "float64", "int64", "bool",
                 ["float64", 1, "C"]]}
