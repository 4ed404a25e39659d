"""ARX's non-uniform entropy metrics (Gionis & Tassa 2009), computed as ARX 3.9.2 computes
them: :class:`Entropy` (``createEntropyMetric()``, ``MetricMDNUNMEntropy``),
:class:`MonotonicEntropy` (``createEntropyMetric(true)``, ``MetricMDNUEntropy``) and
:class:`NormalizedEntropy` (``createNormalizedEntropyMetric()``,
``MetricMDNUNMNormalizedEntropy``); registered in :data:`.metrics.METRICS` when the engine
package is imported."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import kernels
from ..kernels.nrt import njit_no_refcount
from ..kernels.packed import code_at
from .metrics import METRICS, Metric, _weighted_sum

__all__ = ["Entropy", "MonotonicEntropy", "NormalizedEntropy"]


@njit(cache=True)
def _log2(x):
    """ARX's ``log2``: ``Math.log(x) / Math.log(2)``."""
    return math.log(x) / math.log(2.0)


@njit(cache=True)
def _entropy_sum(a, b):
    """``sum a log2(a / b)`` added in order (``MetricMDNUEntropyPrecomputed``)."""
    value = 0.0
    for i in range(a.shape[0]):
        if a[i] != 0.0:
            value += a[i] * _log2(a[i] / b[i])
    return value


@njit(cache=True)
def _round(x):
    """ARX's ``Metric.round``: truncation to 1e-10."""
    return math.floor(x * 1e10) / 1e10


@njit_no_refcount
def attribute_entropy(raw_at, size, codes, fields, outlier, lo, hi, i, radix, n_sup, s_factor,
                      counts):
    """Attribute ``i``'s ARX non-uniform entropy at a node whose classes are ``lo..hi-1``:
    ``raw_at`` (its generalization part, ``raw[i, L_i] * g``) plus, with ``n_sup`` records
    suppressed, ``sum_v n_v log2(n_v / n_sup) s`` over the values ``v`` (``radix`` of them;
    added in code order) of the suppressed classes' codes (``codes`` (C, q), or packed in the
    fields of ``fields``), negated and truncated to 1e-10 (``MetricMDNUNMEntropyPrecomputed``).
    ``counts`` (float, >= ``radix``): scratch, zero before and after.  The compiled searches
    call it too."""
    value = raw_at
    if n_sup != 0:
        for c in range(lo, hi):
            if outlier[c]:
                counts[code_at(codes, c, i, fields)] += size[c]
        for v in range(radix):
            if counts[v] != 0.0:
                count = counts[v]
                value += count * _log2(count / n_sup) * s_factor
                counts[v] = 0.0
    return _round(-value) if value != 0.0 else value


@njit(cache=True)
def _entropy_values(raw, levels, size, codes, outlier, ptr, radix, g_factor, s_factor,
                    suppressed_part):
    """Per node and attribute (B, q) :func:`attribute_entropy`, the suppressed records' part
    with ``suppressed_part`` only."""
    n_nodes, q = levels.shape
    out = np.zeros((n_nodes, q))
    counts = np.zeros(radix.max() if radix.size else 0)
    no_fields = np.empty((2, 0), np.int64)  # the codes are not packed
    for b in range(n_nodes):
        n_sup = 0
        if suppressed_part:
            for c in range(ptr[b], ptr[b + 1]):
                if outlier[c]:
                    n_sup += size[c]
        for i in range(q):
            out[b, i] = attribute_entropy(raw[i, levels[b, i]] * g_factor, size, codes,
                                          no_fields, outlier, ptr[b], ptr[b + 1], i,
                                          radix[b, i], n_sup, s_factor, counts)
    return out


class Entropy(Metric):
    """ARX's non-monotonic non-uniform entropy (``createEntropyMetric()``,
    ``MetricMDNUNMEntropy``; Gionis & Tassa 2009): per attribute
    ``-sum_leaves n_x log2(n_x / n_g(x))`` over the records (``n_g(x)`` the records sharing
    x's generalized value), plus for the suppressed records the entropy of their values,
    each truncated to 1e-10; the weighted sum over attributes.  ARX's lower bound of a node
    it computes the loss of is the generalization part *before* negation (<= 0: it prunes
    nothing), of the others the generalization part."""

    name = "entropy"
    takes_gs_factor = True
    takes_weights = True
    _suppressed_part = True

    def bind(self, encoded):
        super().bind(encoded)
        bottom = encoded.frequency_set()
        be = self.backend
        codes = be.to_host(bottom.codes)
        counts = kernels.marginal_counts(be, bottom.codes, bottom.count,
                                         [len(h.leaves) for h in encoded.hierarchies])
        hmax = int(self.heights.max())
        self._raw = np.zeros((len(encoded.hierarchies), hmax + 1))
        for j, h in enumerate(encoded.hierarchies):
            # ARX sums over the leaves in order of first appearance (its dictionary codes)
            leaves, first = np.unique(codes[:, j].astype(np.int64), return_index=True)
            leaves = leaves[np.argsort(first, kind="stable")]
            a = counts[j][leaves].astype(np.float64)
            for level in range(h.height + 1):
                label = h.codes(level)
                per_label = np.bincount(label, weights=counts[j].astype(np.float64),
                                        minlength=len(h.labels(level)))
                self._raw[j, level] = _entropy_sum(a, per_label[label[leaves]])
        self._radix = encoded.node_radix
        return self

    def _values(self, classes, outlier, levels, suppressed_part: bool):
        size, codes, out, ptr = self._host_classes(classes, outlier)
        return _entropy_values(self._raw, np.ascontiguousarray(levels, dtype=np.int64), size,
                               codes, out, ptr, self._radix(levels)[:, :-1], self.g_factor,
                               self.s_factor, suppressed_part)

    def _scale(self, values):
        """The per-attribute values as the metric reports them (normalized entropy: divided)."""
        return values

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        charged = self._scale(self._values(classes, outlier, levels, self._suppressed_part))
        il = _weighted_sum(charged, self.weights)
        if not self._suppressed_part:
            return il, il.copy()
        generalized = self._raw[np.arange(levels.shape[1])[None, :], levels] * self.g_factor
        rounded = _weighted_sum(self._scale(self._values(classes, outlier, levels, False)),
                                self.weights)
        negative = _weighted_sum(self._scale(generalized), self.weights)
        lb = rounded if needed is None else np.where(needed, negative, rounded)
        return il, lb


class MonotonicEntropy(Entropy):
    """ARX's monotonic non-uniform entropy (``createEntropyMetric(true)``,
    ``MetricMDNUEntropy``): the generalization part of :class:`Entropy` alone, suppressed
    records charged as if kept; no lower bound for a node ARX computes no loss of (NaN)."""

    name = "entropy-monotonic"
    monotonic_with_suppression = True
    _suppressed_part = False

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        il, lb = super().evaluate_needed(classes, outlier, levels, needed, bounds)
        return il, lb if needed is None else np.where(needed, lb, np.nan)


class NormalizedEntropy(Entropy):
    """ARX's normalized non-uniform entropy (``createNormalizedEntropyMetric()``,
    ``MetricMDNUNMNormalizedEntropy``): each attribute's :class:`Entropy` divided by its
    largest, ``-sum_leaves n_x log2(n_x / R)`` truncated to 1e-10 (gs-factor 0.5)."""

    name = "normalized-entropy"
    takes_gs_factor = False

    def bind(self, encoded):
        super().bind(encoded)
        bottom = encoded.frequency_set()
        codes = self.backend.to_host(bottom.codes)
        counts = kernels.marginal_counts(self.backend, bottom.codes, bottom.count,
                                         [len(h.leaves) for h in encoded.hierarchies])
        upper = []
        for j in range(len(encoded.hierarchies)):
            leaves, first = np.unique(codes[:, j].astype(np.int64), return_index=True)
            a = counts[j][leaves[np.argsort(first, kind="stable")]].astype(np.float64)
            value = _entropy_sum(a, np.full(len(a), float(self.n_rows))) * self.g_factor
            upper.append(_round(-value) if value != 0.0 else value)
        self._upper = np.array(upper)
        return self

    def _scale(self, values):
        with np.errstate(divide="ignore", invalid="ignore"):  # ARX: NaN -> Double.MAX_VALUE
            return values / self._upper


METRICS.update({m.name: m for m in (Entropy, MonotonicEntropy, NormalizedEntropy)})
