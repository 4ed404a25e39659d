"""ARX's KL-divergence quality model (``Metric.createKLDivergenceMetric()``,
``MetricSDNMKLDivergence``; Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007, after
Kifer & Gehrke 2006).

The input distribution ``p`` gives each tuple of QID values its share of the records; the
release's ``q`` spreads a class's share uniformly over the hierarchy rows its generalized
values stand for (its *area*, the per-class product of :class:`~.metrics.Ambiguity`), and
the suppressed records' share over every combination of rows.  As ARX, the sum runs over the
*rows* in input order, each adding its tuple's ``p log2(p / q)`` -- a tuple occurring ``n``
times adds its term ``n`` times -- and is neither monotone under suppression nor bounded
below before or after a check (ARX returns no lower bound).  The compiled Flash therefore
defers it: it walks the lattice as for any metric without a bound and computes the checked
anonymous nodes' divergences afterwards, in one batch (:mod:`.search.flash_compiled`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InputError
from ..kernels import groupby
from ..kernels.aot import CODE_TYPES, ahead_of_time
from ..kernels.groupby import (balanced_runs, extend_key, n_tasks_for, number_keys, run_tasks,
                               space_of)
from .metric_entropy import _log2
from .metrics import METRICS, Ambiguity

__all__ = ["KLDivergence"]

#: a node's terms are kept per class for the tuples met up to this many times (a tuple's term
#: depends on its class and its count alone): most tuples of a wide table are met a few times
MEMO_COUNTS = 8


@njit(cache=True, nogil=True)
def _tuple_classes(codes, tuples, maps, off, radix, leaf_off, out):
    """Each tuple's class among ``codes`` (a node's classes, distinct) into ``out``: the
    classes and the tuples generalized to the node (``maps[off[j] + code]``) keyed together
    by their mixed-radix codes at the node's ``radix``, as the roll-up keys its entries -- in
    one pass when the key space fits in int64 (a tuple's key the sum of its attributes'
    terms, tabulated per leaf code: ``leaf_off``), else column by column
    (:func:`~gpuppdp.kernels.groupby.extend_key`) -- and numbered in order of first
    appearance (:func:`~gpuppdp.kernels.groupby.number_keys`): class ``c`` is group ``c``."""
    n, q = codes.shape
    m = n + tuples.shape[0]
    keys = np.empty(m, np.int64)
    ids = np.empty(m, np.int64)
    space = space_of(radix)
    if space >= 0:
        term = np.empty(leaf_off[q], np.int64)
        stride = np.int64(1)
        for j in range(q):
            for v in range(leaf_off[j + 1] - leaf_off[j]):
                term[leaf_off[j] + v] = np.int64(maps[off[j] + v]) * stride
            stride *= radix[j]
        for c in range(n):
            key, stride = np.int64(0), np.int64(1)
            for j in range(q):
                key += np.int64(codes[c, j]) * stride
                stride *= radix[j]
            keys[c] = key
        for i in range(tuples.shape[0]):
            key = np.int64(0)
            for j in range(q):
                key += term[leaf_off[j] + tuples[i, j]]
            keys[n + i] = key
    else:  # the entries' columns, then their keys extended by one column at a time
        columns = np.empty((q, m), np.int64)
        columns[:, :n] = codes.T
        for i in range(tuples.shape[0]):
            for j in range(q):
                columns[j, n + i] = maps[off[j] + tuples[i, j]]
        keys[:] = 0
        space = 1
        for j in range(q):
            space = extend_key(keys, space, columns[j], radix[j], ids, False)
    number_keys(keys, space, ids)
    out[:] = ids[n:]


@njit(cache=True, nogil=True)
def _kl_run(t, runs, codes, ptr, size, outlier, tuples, maps, map_off, radix, leaf_off, share,
            share_off, domain, tuple_of_row, tuple_count, share_in, n_rows, max_area, needed,
            out):
    """Task ``t``: ARX's KL divergence of nodes ``runs[t]:runs[t + 1]`` (those ``needed``)
    into ``out``: each input tuple generalized to the node (``maps[map_off[b, j] + code]``)
    and found among the node's classes (``codes[ptr[b]:ptr[b + 1]]``, distinct;
    :func:`_tuple_classes` at the node's ``radix``); its term
    ``p log2(p / q)`` with ``q = (|E| / R) / area(E)`` for its class ``E`` kept (``area``:
    the product over attributes of ``share * S`` in attribute order, ARX's ``getArea``),
    ``(suppressed / R) / max_area`` for it suppressed (computed once per class and count up
    to :data:`MEMO_COUNTS`: the same operations on the same operands, ``p`` the tuple's
    ``tuple_count / R``); the terms added over the rows in order."""
    n_tuples, q = tuples.shape
    term = np.empty(n_tuples)
    class_of = np.empty(n_tuples, np.int64)
    for b in range(runs[t], runs[t + 1]):
        if not needed[b]:
            continue
        lo, n = ptr[b], ptr[b + 1] - ptr[b]
        _tuple_classes(codes[lo:lo + n], tuples, maps, map_off[b], radix[b], leaf_off, class_of)
        area = np.empty(n)
        memo = np.full((n, MEMO_COUNTS), np.nan)  # per class the terms of the counts kept
        suppressed = 0.0
        for c in range(n):
            if outlier[lo + c]:
                suppressed += size[lo + c]
            a = 1.0
            for j in range(q):
                a *= share[share_off[b, j] + codes[lo + c, j]] * domain[j]
            area[c] = a
        for i in range(n_tuples):
            c = class_of[i]
            kept = tuple_count[i] <= MEMO_COUNTS
            if kept and not np.isnan(memo[c, tuple_count[i] - 1]):
                term[i] = memo[c, tuple_count[i] - 1]
                continue
            if outlier[lo + c]:
                p_out = suppressed / n_rows / max_area
            else:
                p_out = float(size[lo + c]) / n_rows / area[c]
            term[i] = share_in[i] * _log2(share_in[i] / p_out)
            if kept:
                memo[c, tuple_count[i] - 1] = term[i]
        total = 0.0
        for r in range(tuple_of_row.shape[0]):
            total += term[tuple_of_row[r]]
        out[b] = total


ahead_of_time(_kl_run, [
    f"none(int64, int64[::1], {t}[:, ::1], int64[::1], int64[::1], boolean[::1], {t}[:, ::1], "
    f"{t}[::1], int64[:, ::1], int64[:, ::1], int64[::1], float64[::1], int64[:, ::1], "
    "float64[::1], int64[::1], int64[::1], float64[::1], float64, float64, boolean[::1], "
    "float64[::1])"
    for t in CODE_TYPES])


class KLDivergence(Ambiguity):
    """ARX's KL divergence (``createKLDivergenceMetric()``): see the module.  It reads the
    rows (their order fixes the sum's rounding, as in ARX), so a table encoded chunk by chunk
    cannot take it."""

    name = "kl"
    charges_microaggregation = False  # ARX's isAbleToHandleMicroaggregation(): false

    def bind(self, encoded):
        if encoded.qi_codes is None:
            raise InputError("metric: 'kl' sums over the input rows in order, as ARX does, and "
                             "needs them in memory; this table is read in chunks (choose another "
                             "metric, or read the table whole)")
        super().bind(encoded)
        be = self.backend
        rows = np.stack([be.to_host(c) for c in encoded.qi_codes], axis=1)
        leaves = [len(h.leaves) for h in encoded.hierarchies]
        tuple_of_row, rep, _ = groupby.group(np, rows, leaves)
        self._tuple_of_row = tuple_of_row.astype(np.int64)
        self._leaf_off = np.concatenate([[0], np.cumsum(leaves)]).astype(np.int64)
        self._tuples = np.ascontiguousarray(rows[rep], dtype=encoded.code_dtype)
        self._tuple_count = np.bincount(tuple_of_row, minlength=len(rep)).astype(np.int64)
        self._share_in = self._tuple_count.astype(np.float64) / float(self.n_rows)
        self._max_area = 1.0
        for size in self._domain:  # in attribute order, as ARX
            self._max_area *= size
        return self

    def suppression_order(self, classes, idx):
        return None  # ARX's entry loss: the class size

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        levels = np.ascontiguousarray(levels, dtype=np.int64)
        n_nodes, q = levels.shape
        needed = np.ones(n_nodes, np.bool_) if needed is None else \
            np.ascontiguousarray(needed, np.bool_)
        size, codes, out, ptr = self._host_classes(classes, outlier)
        maps, level_off = self.encoded.level_maps()
        columns = np.arange(q)[None, :]
        il = np.full(n_nodes, np.nan)
        # each node's work: its classes, the tuples and the rows
        work = ptr + (len(self._tuples) + len(self._tuple_of_row)) * np.arange(n_nodes + 1)
        runs = balanced_runs(work, n_tasks_for(int(work[-1] - work[0]), n_nodes))
        run_tasks(_kl_run, len(runs) - 1, runs, np.ascontiguousarray(codes, self._tuples.dtype),
                  ptr, size, out, self._tuples, self.backend.to_host(maps),
                  np.ascontiguousarray(level_off[columns, 0, levels]),
                  np.ascontiguousarray(self.encoded.node_radix(levels)[:, :q], np.int64),
                  self._leaf_off, self.backend.to_host(self._share),
                  np.ascontiguousarray(self._share_off[columns, levels]), self._domain,
                  self._tuple_of_row, self._tuple_count, self._share_in, float(self.n_rows),
                  self._max_area, needed, il)
        return il, np.full(n_nodes, np.nan)


METRICS[KLDivergence.name] = KLDivergence
