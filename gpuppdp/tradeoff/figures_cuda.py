"""Every node's figures (:class:`~gpuppdp.tradeoff.exploration.NodeFigures`) on a GPU: four
Numba CUDA launches over a batch's classes instead of tens of array operations and a sort per
figure.

* :func:`_class_totals` (a thread per class): the integer totals of each node's kept classes
  -- squared sizes, records at risk, records -- and, per node, the kept records of each
  sensitive value (integer atomics: exact, order-free);
* :func:`_node_distributions` (a thread per node): the node's released distribution ``q``,
  ``sum q^2`` and ``H(q)`` (Shannon, bits) -- skipped when a prior is given;
* :func:`_class_figures` (a thread per class): the thesis's distribution and entropy privacy
  losses and utility losses of the class (Def. 11-14 of the trade-off thesis, as
  :mod:`gpuppdp.models.distribution` computes them), its histogram entries read in their
  order in the batch through a stable sort by class, so each class adds the same terms in the
  same order as the CPU pass :func:`~gpuppdp.tradeoff.exploration._figures_njit`;
* :func:`_node_figures` (a block per node): each figure's largest value over the kept classes
  and its record-weighted mean, the classes' terms computed a tile at a time and added in
  class order by one thread (as :func:`gpuppdp.kernels.segsum.loss_sums_cuda` adds): the
  same sums on every run.

On CuPy arrays, or on NumPy arrays under Numba's CUDA simulator.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ..kernels.cudalaunch import BLOCK_THREADS, launch

__all__ = ["node_figures_cuda"]

THREADS = min(128, BLOCK_THREADS)  # threads of a block of the per-class and per-node launches
TILE = 64      # classes per tile of the per-node sums (the threads of their blocks)


@cuda.jit(cache=True)
def _class_totals(size, outlier, node, threshold, entry_ptr, order, entry_sens, entry_count,
                  n_values, want_q, node_int, q_count):
    """Per kept class ``c`` of node ``b``: ``node_int[b]`` += (size^2, size if 1/size >
    ``threshold`` else 0, size); with ``want_q`` its entries' records into ``q_count[b, v]``."""
    c = cuda.grid(1)
    if c >= size.shape[0] or outlier[c]:
        return
    s = size[c]
    b = node[c]
    cuda.atomic.add(node_int, (b, 0), s * s)
    if 1.0 / s > threshold:
        cuda.atomic.add(node_int, (b, 1), s)
    cuda.atomic.add(node_int, (b, 2), s)
    if want_q:
        for k in range(entry_ptr[c], entry_ptr[c + 1]):
            e = order[k]
            cuda.atomic.add(q_count, b * n_values + entry_sens[e], entry_count[e])


@cuda.jit(cache=True)
def _node_distributions(node_int, q_count, n_values, q, q_stats):
    """Per node with kept records: ``q`` (the kept records' shares of each value),
    ``q_stats[b] = (sum q^2, H(q))``, the values in order (as the CPU pass adds them)."""
    b = cuda.grid(1)
    if b >= node_int.shape[0] or node_int[b, 2] == 0:
        return
    records = node_int[b, 2]
    q_sq = 0.0
    h_q = 0.0
    for v in range(n_values):
        x = q_count[b * n_values + v] / records
        q[b * n_values + v] = x
        q_sq += x * x
        if x > 0:
            h_q -= x * math.log2(x)
    q_stats[b, 0] = q_sq
    q_stats[b, 1] = h_q


@cuda.jit(cache=True)
def _class_figures(size, outlier, node, entry_ptr, order, entry_sens, entry_count, q,
                   q_stride, q_stats, xlogx, values):
    """Per kept class: ``values[:, c]`` = (distribution privacy loss, entropy privacy loss,
    distribution utility loss, entropy utility loss); ``q[b * q_stride + v]`` the node's
    distribution (``q_stride`` 0: one prior for every node); ``xlogx[n] = n log2 n`` for the
    small counts."""
    c = cuda.grid(1)
    if c >= size.shape[0] or outlier[c]:
        return
    s = size[c]
    b = node[c]
    base = b * q_stride
    n_table = xlogx.shape[0]
    sq = 0.0
    cross = 0.0
    ent = 0.0
    for k in range(entry_ptr[c], entry_ptr[c + 1]):
        e = order[k]
        n = entry_count[e]
        p = n / s
        sq += p * p
        cross += p * p - 2.0 * p * q[base + entry_sens[e]]
        ent += xlogx[n] if n < n_table else n * math.log2(n)
    whole = xlogx[s] if s < n_table else s * math.log2(s)  # one value (n = |E|): exactly 0
    ent = 0.0 if ent == whole else math.log2(s) - ent / s
    util = 0.0
    for k in range(entry_ptr[c], entry_ptr[c + 1]):
        p = entry_count[order[k]] / s
        util += p * math.sqrt(max(1.0 - 2.0 * p + sq, 0.0))
    values[0, c] = math.sqrt(max(q_stats[b, 0] + cross, 0.0))
    values[1, c] = abs(q_stats[b, 1] - ent)
    values[2, c] = util
    values[3, c] = ent


@cuda.jit(cache=True)
def _node_figures(ptr, size, outlier, values, node_int, with_sens, out):
    """A block of :data:`TILE` threads per node: ``out[b]`` = (squared kept sizes, records at
    risk, then per figure its largest value and record-weighted mean over the kept classes;
    NaN without a sensitive attribute or kept records)."""
    b = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    tile = cuda.shared.array((4, TILE), numba.float64)
    weight = cuda.shared.array(TILE, numba.float64)  # the class's size; -1: suppressed
    records = node_int[b, 2]
    if lane == 0:
        out[b, 0] = node_int[b, 0]
        out[b, 1] = node_int[b, 1]
    if not with_sens or records == 0:  # the same for every thread of the block
        if lane < 8:
            out[b, 2 + lane] = math.nan
        return
    top0 = top1 = top2 = top3 = -math.inf
    sum0 = sum1 = sum2 = sum3 = 0.0
    start = ptr[b]
    stop = ptr[b + 1]
    for first in range(start, stop, TILE):
        c = first + lane
        if c < stop:
            weight[lane] = -1.0 if outlier[c] else float(size[c])
            for f in range(4):
                tile[f, lane] = values[f, c] if not outlier[c] else 0.0
        cuda.syncthreads()
        if lane == 0:
            for i in range(min(TILE, stop - first)):
                w = weight[i]
                if w < 0:
                    continue
                top0 = max(top0, tile[0, i])
                top1 = max(top1, tile[1, i])
                top2 = max(top2, tile[2, i])
                top3 = max(top3, tile[3, i])
                sum0 += tile[0, i] * w
                sum1 += tile[1, i] * w
                sum2 += tile[2, i] * w
                sum3 += tile[3, i] * w
        cuda.syncthreads()
    if lane == 0:
        out[b, 2] = top0
        out[b, 3] = sum0 / records
        out[b, 4] = top1
        out[b, 5] = sum1 / records
        out[b, 6] = top2
        out[b, 7] = sum2 / records
        out[b, 8] = top3
        out[b, 9] = sum3 / records


def node_figures_cuda(backend, classes, outlier, n_nodes: int, threshold: float,
                      n_values: int, xlogx, prior=None, prior_sq: float = 0.0,
                      prior_h: float = 0.0):
    """Device (B, 10) figures of a batch's nodes in the column order of
    :func:`~gpuppdp.tradeoff.exploration._figures_njit` (which says what they are).

    ``classes``: the batch's :class:`~gpuppdp.core.classes.Classes`, with the histograms of
    the sensitive attribute (``n_values`` > 0) or without (``n_values`` 0: only the first two
    columns); ``xlogx``: device ``n log2 n`` of the small counts; ``prior`` (device, one share
    per value) with its ``sum q^2`` and ``H(q)``, or ``None``: per node the kept records'
    distribution.  Under the simulator (``backend.kernels`` ``"cudasim"``) the kernels run on
    the host's copies."""
    xp = backend.xp
    if backend.kernels == "cudasim":
        xp = np

    def arg(a, dtype=None):
        a = backend.to_host(a) if xp is np else a
        return a if dtype is None else a.astype(dtype, copy=False)

    size = arg(classes.size, xp.int64)
    node = arg(classes.node, xp.int64)
    outlier = arg(outlier)
    n_classes = size.shape[0]
    with_sens = n_values > 0
    want_q = with_sens and prior is None
    node_int = xp.zeros((n_nodes, 3), dtype=xp.int64)
    out = xp.empty((n_nodes, 10), dtype=xp.float64)
    empty = xp.zeros(1, dtype=xp.int64)
    entry_ptr, order, entry_sens, entry_count = empty, empty, empty, empty
    if with_sens:
        entry_ptr = xp.zeros(n_classes + 1, dtype=xp.int64)
        entry_ptr[1:] = xp.cumsum(arg(classes.distinct))
        order = xp.argsort(arg(classes.entry_class), kind="stable")  # a class's entries in order
        entry_sens = arg(classes.entry_sens, xp.int64)
        entry_count = arg(classes.entry_count, xp.int64)
    q_count = xp.zeros(n_nodes * n_values if want_q else 1, dtype=xp.int64)
    grid = -(-n_classes // THREADS)
    if n_classes:
        launch(_class_totals, grid, THREADS, size, outlier, node, float(threshold), entry_ptr,
               order, entry_sens, entry_count, int(max(n_values, 1)), want_q, node_int, q_count)
    if with_sens and n_classes:
        if want_q:
            q = xp.zeros(n_nodes * n_values, dtype=xp.float64)
            q_stats = xp.zeros((n_nodes, 2), dtype=xp.float64)
            launch(_node_distributions, -(-n_nodes // THREADS), THREADS, node_int, q_count,
                   int(n_values), q, q_stats)
            q_stride = n_values
        else:
            q = arg(prior, xp.float64)
            q_stats = xp.empty((n_nodes, 2), dtype=xp.float64)
            q_stats[:, 0] = prior_sq
            q_stats[:, 1] = prior_h
            q_stride = 0
        values = xp.empty((4, n_classes), dtype=xp.float64)
        launch(_class_figures, grid, THREADS, size, outlier, node, entry_ptr, order,
               entry_sens, entry_count, q, int(q_stride), q_stats, arg(xlogx), values)
    else:
        values = xp.zeros((4, 1), dtype=xp.float64)
    if n_nodes:
        launch(_node_figures, n_nodes, TILE, arg(classes.ptr, xp.int64), size, outlier, values,
               node_int, bool(with_sens), out)
    return out if xp is not np else backend.asarray(out)
