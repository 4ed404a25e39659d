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
from ..kernels.groupby import balanced_runs, n_tasks_for, run_tasks, space_of
from ..kernels.hashtable import _HASH_MUL, hash_shift, hashed_size
from .metric_entropy import _log2
from .metrics import METRICS, Ambiguity

__all__ = ["KLDivergence"]

#: a node's terms are kept per class for the tuples met up to this many times (a tuple's term
#: depends on its class and its count alone): most tuples of a wide table are met a few times
MEMO_COUNTS = 8


@njit(inline="always")
def _row_slot(values, shift):
    """The hashed slot of a row of codes (multiplicative hashing of the codes folded in)."""
    h = np.uint64(0)
    for j in range(values.shape[0]):
        h = (h + np.uint64(values[j])) * _HASH_MUL
    return np.int64(h >> shift)


@njit(cache=True, nogil=True)
def _classes_by_key(codes, tuples, maps, off, radix, leaf_off, out):
    """Each tuple's class among ``codes`` (a node's classes, distinct) into ``out``: the
    classes' and the generalized tuples' codes packed in a mixed-radix key at the node's
    radices (their space below ``KEY_LIMIT``), a tuple's key the sum of its attributes'
    terms (tabulated per leaf code), looked up in a hashed table."""
    n, q = codes.shape
    slots = hashed_size(n)
    shift, mask = hash_shift(slots), slots - 1
    table = np.full(slots, -1, np.int64)
    class_key = np.empty(n, np.int64)
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
        class_key[c] = key
        slot = np.int64((np.uint64(key) * _HASH_MUL) >> shift)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = c
    for i in range(tuples.shape[0]):
        key = np.int64(0)
        for j in range(q):
            key += term[leaf_off[j] + tuples[i, j]]
        slot = np.int64((np.uint64(key) * _HASH_MUL) >> shift)
        while class_key[table[slot]] != key:  # (every generalized tuple is a class)
            slot = (slot + 1) & mask
        out[i] = table[slot]


@njit(cache=True, nogil=True)
def _classes_by_row(codes, tuples, maps, off, out):
    """:func:`_classes_by_key` for key spaces too large to pack: the rows of codes hashed and
    compared whole."""
    n, q = codes.shape
    slots = hashed_size(n)
    shift, mask = hash_shift(slots), slots - 1
    table = np.full(slots, -1, np.int64)
    generalized = np.empty(q, np.int64)
    for c in range(n):
        slot = _row_slot(codes[c], shift)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = c
    for i in range(tuples.shape[0]):
        for j in range(q):
            generalized[j] = maps[off[j] + tuples[i, j]]
        slot = _row_slot(generalized, shift)
        while True:  # (every generalized tuple is one of the node's classes)
            c = table[slot]
            same = True
            for j in range(q):
                if codes[c, j] != generalized[j]:
                    same = False
                    break
            if same:
                break
            slot = (slot + 1) & mask
        out[i] = c


@njit(cache=True, nogil=True)
def _kl_run(t, runs, codes, ptr, size, outlier, tuples, maps, map_off, radix, leaf_off, share,
            share_off, domain, tuple_of_row, tuple_count, share_in, n_rows, max_area, needed,
            out):
    """Task ``t``: ARX's KL divergence of nodes ``runs[t]:runs[t + 1]`` (those ``needed``)
    into ``out``: each input tuple generalized to the node (``maps[map_off[b, j] + code]``)
    and found among the node's classes (``codes[ptr[b]:ptr[b + 1]]``, distinct;
    :func:`_classes_by_key` at the node's ``radix``, or :func:`_classes_by_row`); its term
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
        if space_of(radix[b]) >= 0:
            _classes_by_key(codes[lo:lo + n], tuples, maps, map_off[b], radix[b], leaf_off,
                            class_of)
        else:
            _classes_by_row(codes[lo:lo + n], tuples, maps, map_off[b], class_of)
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
