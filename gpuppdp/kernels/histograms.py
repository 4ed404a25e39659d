"""Ordered per-segment sums for the privacy models that judge sensitive histograms.

ARX evaluates entropy l-diversity (``sum f ln f``), t-closeness with equal distance
(``1 + sum (|q - p| - q)``), with ordered distance (``sum |running sum of (p - q)|``) and with
hierarchical distance (``sum over inner nodes of (level/height) * min(pos, neg)``) by adding
terms one at a time, left to right.  A pairwise or tree reduction (``np.sum``, a GPU block
reduction, CuPy's scan) can change the last bit of such a sum and flip a verdict at the
threshold, so these sums are kernels that add strictly left to right, in every form:

* segment ``s`` owns ``values[ptr[s]:ptr[s+1]]`` (for the models: one equivalence class, its
  terms in ascending sensitive code, or in the attribute's order, or in hierarchy-node order);
* plain mode: ``out[s] = (((init + v0) + v1) + ...)``;
* ``abs_prefix`` mode: ``run = 0; acc = init; for v: run += v; acc += |run|`` (the ordered
  earth mover's distance of Li, Li & Venkatasubramanian 2007, unnormalized).

Three forms: :func:`ordered_sums_reference` (``np.add.accumulate`` per segment, the oracle),
:func:`ordered_sums_njit` (Numba CPU, runs of segments as tasks the threads take as they come
free, :func:`.groupby.run_tasks`) and :func:`ordered_sums_cuda`
(Numba CUDA, one thread per segment; CuPy arrays, or host arrays under Numba's simulator).
All three are bit-identical.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, njit

from .aot import ahead_of_time
from .cudalaunch import launch
from .groupby import balanced_runs, n_tasks_for, run_tasks


def ordered_sums_reference(values, ptr, init=0.0, abs_prefix=False):
    """Oracle: ``np.add.accumulate`` over each segment, seeded with ``init``."""
    values = np.asarray(values, dtype=np.float64)
    ptr = np.asarray(ptr, dtype=np.int64)
    n_seg = len(ptr) - 1
    out = np.empty(n_seg, dtype=np.float64)
    for s in range(n_seg):
        seg = values[ptr[s]:ptr[s + 1]]
        if abs_prefix and len(seg):
            # run_0 = 0 + v0 (exactly v0, up to the sign of a zero, which |.| removes)
            seg = np.abs(np.add.accumulate(np.concatenate([[0.0], seg]))[1:])
        out[s] = np.add.accumulate(np.concatenate([[float(init)], seg]))[-1]
    return out


def _segment_sum(s, values, ptr, init, abs_prefix, out):
    """Segment ``s``, left to right; compiled for the CPU (``_segment``) and as a CUDA device
    function (``_segment_device``), so both forms run the same operations in the same order."""
    acc = init
    run = 0.0
    for i in range(ptr[s], ptr[s + 1]):
        if abs_prefix:
            run += values[i]
            acc += abs(run)
        else:
            acc += values[i]
    out[s] = acc


_segment = njit(cache=True)(_segment_sum)
_segment_device = cuda.jit(device=True)(_segment_sum)


@njit(cache=True, nogil=True)
def _runs(t, bounds, values, ptr, init, abs_prefix, out):
    """Task ``t``: the segments ``bounds[t]:bounds[t+1]``, in turn."""
    for s in range(bounds[t], bounds[t + 1]):
        _segment(s, values, ptr, init, abs_prefix, out)


ahead_of_time(_runs, ["none(int64, int64[::1], float64[::1], int64[::1], float64, boolean, "
                      "float64[::1])"])


def ordered_sums_njit(values, ptr, init=0.0, abs_prefix=False):
    """Numba CPU form: runs of segments with about equal terms, taken by the threads as they
    come free (one run for little work)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    n_seg = ptr.shape[0] - 1
    out = np.empty(n_seg, dtype=np.float64)
    bounds = balanced_runs(ptr, n_tasks_for(int(ptr[-1] - ptr[0]) if n_seg > 0 else 0, n_seg))
    run_tasks(_runs, len(bounds) - 1, bounds, values, ptr, float(init), bool(abs_prefix), out)
    return out


@cuda.jit(cache=True)
def _kernel(values, ptr, init, abs_prefix, out):
    s = cuda.grid(1)
    if s < out.shape[0]:
        _segment_device(s, values, ptr, init, abs_prefix, out)


def ordered_sums_cuda(values, ptr, init, abs_prefix, out):
    """Launch the CUDA form on device arrays (or host arrays under the simulator); fills and
    returns ``out`` (float64, one value per segment)."""
    n = out.shape[0]
    if n:
        threads = 128
        launch(_kernel, math.ceil(n / threads), threads, values, ptr, float(init),
               bool(abs_prefix), out)
    return out
