"""Ordered per-node sums of ARX's loss terms, without materializing a (classes x QIDs) matrix.

For node ``b`` (classes ``ptr[b]:ptr[b+1]``, in order of first appearance) and QID ``j``:

* ``kept[b, j]    = sum_c size[c] * share[off[b, j] + codes[c, j]]``
* ``charged[b, j] = sum_c (size[c] if outlier[c] else size[c] * share[...])``

ARX sums these terms sequentially in class order and the loss metric truncates the result at
1e-10, so a pairwise or tree reduction (``np.sum``, a GPU block reduction) can flip the last
decimal and with it a tie between nodes.  All forms add strictly left to right, which makes
every backend bit-identical to ARX.

Three forms: :func:`loss_sums_reference` (plain NumPy, the oracle), :func:`loss_sums_njit`
(Numba CPU, parallel over nodes) and :func:`loss_sums_cuda` (Numba CUDA, one thread per
(node, QID); runs on CuPy arrays, or on NumPy arrays under Numba's CUDA simulator).  The two
compiled forms run one function, :func:`_loss_sums_node`.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda, njit, prange


def loss_sums_reference(size, codes, outlier, ptr, off, share):
    """Oracle: ``np.add.accumulate`` over each node's classes; returns ``(charged, kept)``."""
    n_nodes, q = off.shape
    charged = np.zeros((n_nodes, q))
    kept = np.zeros((n_nodes, q))
    for b in range(n_nodes):
        s = slice(ptr[b], ptr[b + 1])
        sz = size[s].astype(np.float64)
        for j in range(q):
            x = sz * share[off[b, j] + codes[s, j]]
            if len(x):
                kept[b, j] = np.add.accumulate(x)[-1]
                charged[b, j] = np.add.accumulate(np.where(outlier[s], sz, x))[-1]
    return charged, kept


def _loss_sums_node(b, j0, j1, size, codes, outlier, ptr, off, share, acc):
    """QIDs ``j0..j1-1`` of node ``b``, its classes left to right, into the zeroed running
    sums ``acc[0, j - j0]`` (charged) and ``acc[1, j - j0]`` (kept).  Compiled for the CPU
    (``_node``: all QIDs of a node in one pass over its classes) and as a CUDA device function
    (``_node_device``: one QID per thread), so both forms run the same operations in the same
    order."""
    for c in range(ptr[b], ptr[b + 1]):
        sz = float(size[c])
        out = outlier[c]
        for j in range(j0, j1):
            x = sz * share[off[b, j] + codes[c, j]]
            acc[1, j - j0] += x
            acc[0, j - j0] += sz if out else x


_node = njit(cache=True)(_loss_sums_node)
_node_device = cuda.jit(device=True)(_loss_sums_node)


@njit(cache=True)
def _one_node(b, size, codes, outlier, ptr, off, share, charged, kept):
    acc = np.zeros((2, off.shape[1]))
    _node(b, 0, off.shape[1], size, codes, outlier, ptr, off, share, acc)
    charged[b, :] = acc[0]
    kept[b, :] = acc[1]


@njit(cache=True)
def _loss_sums_serial(size, codes, outlier, ptr, off, share, charged, kept):
    for b in range(off.shape[0]):
        _one_node(b, size, codes, outlier, ptr, off, share, charged, kept)


@njit(cache=True, parallel=True)
def _loss_sums_parallel(size, codes, outlier, ptr, off, share, charged, kept):
    for b in prange(off.shape[0]):
        _one_node(b, size, codes, outlier, ptr, off, share, charged, kept)


def loss_sums_njit(size, codes, outlier, ptr, off, share):
    n_nodes, q = off.shape
    charged = np.empty((n_nodes, q))
    kept = np.empty((n_nodes, q))
    run = _loss_sums_serial if n_nodes == 1 else _loss_sums_parallel
    run(size, codes, outlier, ptr, off, share, charged, kept)
    return charged, kept


@cuda.jit
def _loss_sums_kernel(size, codes, outlier, ptr, off, share, charged, kept):
    t = cuda.grid(1)
    q = off.shape[1]
    if t < off.shape[0] * q:
        b = t // q
        j = t - b * q
        acc = cuda.local.array((2, 1), numba.float64)
        acc[0, 0] = 0.0
        acc[1, 0] = 0.0
        _node_device(b, j, j + 1, size, codes, outlier, ptr, off, share, acc)
        charged[b, j] = acc[0, 0]
        kept[b, j] = acc[1, 0]


def loss_sums_cuda(size, codes, outlier, ptr, off, share, charged, kept):
    """Launch the CUDA form on device arrays (or host arrays under the simulator)."""
    n = off.shape[0] * off.shape[1]
    if n:
        threads = 128
        _loss_sums_kernel[math.ceil(n / threads), threads](size, codes, outlier, ptr, off, share,
                                                           charged, kept)
    return charged, kept
