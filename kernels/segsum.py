"""Ordered segment sums: ``out[s, j] = values[ptr[s]] [j] + values[ptr[s]+1][j] + ...`` left to right.

ARX sums a metric's per-class terms in the order the classes first appear in the data, and the
loss metric truncates the result at 1e-10, so a pairwise or tree reduction (``np.sum``, a GPU
block reduction) can flip the last decimal and with it a tie between nodes.  These kernels add
each segment strictly sequentially, which makes every backend bit-identical to ARX.

Three forms:

* :func:`segment_sum_reference` -- plain NumPy, one ``np.add.accumulate`` per segment (oracle).
* :func:`segment_sum_njit` -- Numba CPU.
* :func:`segment_sum_cuda` -- Numba CUDA, one thread per (segment, column); works on CuPy arrays
  and under Numba's CUDA simulator on NumPy arrays.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, njit, prange


def segment_sum_reference(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Oracle: sequential sums per segment with ``np.add.accumulate``."""
    out = np.zeros((len(ptr) - 1, values.shape[1]), dtype=np.float64)
    for s in range(len(ptr) - 1):
        seg = values[ptr[s]:ptr[s + 1]]
        if len(seg):
            out[s] = np.add.accumulate(seg, axis=0)[-1]
    return out


@njit(cache=True, parallel=True)
def _segment_sum_njit(values, ptr, out):
    for s in prange(ptr.shape[0] - 1):
        for j in range(values.shape[1]):
            acc = 0.0
            for i in range(ptr[s], ptr[s + 1]):
                acc += values[i, j]
            out[s, j] = acc


def segment_sum_njit(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    out = np.empty((len(ptr) - 1, values.shape[1]), dtype=np.float64)
    _segment_sum_njit(np.ascontiguousarray(values, dtype=np.float64),
                      np.asarray(ptr, dtype=np.int64), out)
    return out


@cuda.jit
def _segment_sum_kernel(values, ptr, out):
    t = cuda.grid(1)
    n_cols = values.shape[1]
    if t < out.shape[0] * n_cols:
        s = t // n_cols
        j = t - s * n_cols
        acc = 0.0
        for i in range(ptr[s], ptr[s + 1]):
            acc += values[i, j]
        out[s, j] = acc


def segment_sum_cuda(values, ptr, out):
    """Launch the CUDA form; ``values``, ``ptr``, ``out`` are device (or, simulated, host) arrays."""
    n = out.shape[0] * out.shape[1]
    if n == 0:
        return out
    threads = 128
    _segment_sum_kernel[math.ceil(n / threads), threads](values, ptr, out)
    return out
