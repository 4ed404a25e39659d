"""ARX's KL-divergence quality model (``Metric.createKLDivergenceMetric()``,
``MetricSDNMKLDivergence``; Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007, after
Kifer & Gehrke 2006).

The input distribution ``p`` gives each tuple of QID values its share of the records; the
release's ``q`` spreads a class's share uniformly over the hierarchy rows its generalized
values stand for (its *area*, the per-class product of :class:`~.metrics.Ambiguity`), and
the suppressed records' share over every combination of rows.  As ARX, the sum runs over the
*rows* in input order, each adding its tuple's ``p log2(p / q)`` -- a tuple occurring ``n``
times adds its term ``n`` times -- and is neither monotone under suppression nor bounded
below before or after a check (ARX returns no lower bound).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InputError
from ..kernels import groupby
from .metric_entropy import _log2
from .metrics import METRICS, Ambiguity

__all__ = ["KLDivergence"]

#: rows one grouping of classes and generalized tuples may hold (nodes are taken in runs)
GROUP_ROWS = 1 << 22


@njit(cache=True)
def _segments(codes, ptr, tuples, maps, off, seg_ptr, out):
    """Per node ``b`` of a run: its classes' codes, then every input tuple generalized to the
    node (``maps[off[b, j] + leaf code]``), into ``out`` at ``seg_ptr[b]``."""
    q = tuples.shape[1]
    for b in range(ptr.shape[0] - 1):
        pos = seg_ptr[b]
        for c in range(ptr[b], ptr[b + 1]):
            for j in range(q):
                out[pos, j] = codes[c, j]
            pos += 1
        for t in range(tuples.shape[0]):
            for j in range(q):
                out[pos, j] = maps[off[b, j] + tuples[t, j]]
            pos += 1


@njit(cache=True)
def _kl(tuple_of_row, share_in, tuple_class, size, outlier, area, ptr, n_rows, max_area,
        needed):
    """Per node ARX's KL divergence: for every row in order ``p log2(p / q)`` of its tuple,
    ``q = (|E| / R) / area(E)`` for its class ``E`` kept, ``(suppressed / R) / max_area``
    for it suppressed (``tuple_class`` (B, T): each tuple's class); NaN where not needed."""
    n_nodes, n_tuples = tuple_class.shape
    out = np.full(n_nodes, np.nan)
    term = np.empty(n_tuples)
    for b in range(n_nodes):
        if not needed[b]:
            continue
        suppressed = 0.0
        for c in range(ptr[b], ptr[b + 1]):
            if outlier[c]:
                suppressed += size[c]
        for t in range(n_tuples):
            c = tuple_class[b, t]
            if outlier[c]:
                q = suppressed / n_rows / max_area
            else:
                q = float(size[c]) / n_rows / area[c]
            term[t] = share_in[t] * _log2(share_in[t] / q)
        total = 0.0
        for r in range(tuple_of_row.shape[0]):
            total += term[tuple_of_row[r]]
        out[b] = total
    return out


@njit(cache=True)
def _areas(codes, ptr, off, share, domain):
    """Per class the product over attributes of ``share * S`` in attribute order (ARX's
    ``getArea``: the hierarchy rows its values stand for)."""
    n_nodes, q = off.shape
    out = np.ones(codes.shape[0])
    for b in range(n_nodes):
        for c in range(ptr[b], ptr[b + 1]):
            a = 1.0
            for i in range(q):
                a *= share[off[b, i] + codes[c, i]] * domain[i]
            out[c] = a
    return out


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
        rows = np.stack([be.to_host(c).astype(np.int64) for c in encoded.qi_codes], axis=1)
        tuple_of_row, rep, _ = groupby.group(np, rows, [len(h.leaves) for h in
                                                        encoded.hierarchies])
        self._tuple_of_row = tuple_of_row
        self._tuples = np.ascontiguousarray(rows[rep])
        counts = np.bincount(tuple_of_row, minlength=len(rep)).astype(np.float64)
        self._share_in = counts / float(self.n_rows)
        self._max_area = 1.0
        for size in self._domain:  # in attribute order, as ARX
            self._max_area *= size
        return self

    def suppression_order(self, classes, idx):
        return None  # ARX's entry loss: the class size

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        levels = np.ascontiguousarray(levels, dtype=np.int64)
        n_nodes, q = levels.shape
        needed = np.ones(n_nodes, np.bool_) if needed is None else np.asarray(needed, np.bool_)
        size, codes, out, ptr = self._host_classes(classes, outlier)
        share = self.backend.to_host(self._share)
        maps, level_off = self.encoded.level_maps()
        maps = self.backend.to_host(maps).astype(np.int64)
        map_off = level_off[np.arange(q)[None, :], 0, levels]
        share_off = self._share_off[np.arange(q)[None, :], levels]
        radix = self.encoded.node_radix(levels)[:, :-1]
        n_tuples = len(self._tuples)
        il = np.full(n_nodes, np.nan)
        run = max(1, GROUP_ROWS // max(n_tuples + len(size) // max(n_nodes, 1), 1))
        for lo in range(0, n_nodes, run):  # runs of nodes, each grouped at once
            hi = min(lo + run, n_nodes)
            if not needed[lo:hi].any():
                continue
            local_ptr = ptr[lo:hi + 1] - ptr[lo]
            seg_ptr = local_ptr + np.arange(hi - lo + 1) * n_tuples
            cols = np.empty((int(seg_ptr[-1]), q), np.int64)
            _segments(codes[ptr[lo]:ptr[hi]], local_ptr, self._tuples, maps, map_off[lo:hi],
                      seg_ptr, cols)
            ids, _, group_ptr = groupby.group(np, cols, radix[lo:hi], ptr=seg_ptr)
            # a node's classes come first in its segment and are distinct: group i is class i
            at = (seg_ptr[:-1] + np.diff(local_ptr))[:, None] + np.arange(n_tuples)[None, :]
            tuple_class = ids[at] - group_ptr[:-1, None] + local_ptr[:-1, None]
            c = slice(ptr[lo], ptr[hi])
            area = _areas(codes[c], local_ptr, share_off[lo:hi], share, self._domain)
            il[lo:hi] = _kl(self._tuple_of_row, self._share_in, tuple_class, size[c], out[c],
                            area, local_ptr, float(self.n_rows), self._max_area,
                            needed[lo:hi])
        return il, np.full(n_nodes, np.nan)


METRICS[KLDivergence.name] = KLDivergence
