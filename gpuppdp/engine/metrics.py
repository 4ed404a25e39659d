"""Utility metrics as plug-ins, computed exactly as ARX 3.9.2 computes them.

Each metric turns the classes of a batch of nodes (and which of them are suppressed) into one
information-loss value and one lower bound per node.  Floating-point operations follow ARX's
order (classes summed sequentially in order of first appearance, see
:mod:`gpuppdp.kernels.segsum`) so that optima and ties match ARX bit for bit.

* :class:`Loss` -- ARX ``Metric.createLossMetric()`` (``MetricMDNMLoss``): Iyengar's LM
  (Iyengar 2002) per attribute with materialized domain shares, normalized, truncated to 1e-10,
  aggregated by geometric mean.
* :class:`Precision` -- ARX ``createPrecisionMetric()``: Sweeney's Prec (Sweeney 2002),
  arithmetic mean over attributes, suppressed records cost the top level.
* :class:`Discernibility` -- ARX ``createDiscernabilityMetric()``: DM (Bayardo & Agrawal 2005),
  ``sum |E|^2`` over kept classes plus ``R`` per suppressed record.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numba import njit

from .. import kernels
from ..core.classes import Classes
from ..errors import InputError
from ..kernels.aot import ahead_of_time

__all__ = ["Metric", "Loss", "Precision", "Discernibility", "METRICS", "make_metric",
           "precision_loss", "discernibility", "generalization_shares"]


class Metric:
    """Base class. Subclasses implement :meth:`bind` and :meth:`evaluate`."""

    name = "metric"
    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def bind(self, encoded) -> "Metric":
        """Precompute what the metric needs from the encoded table; returns ``self``."""
        self.encoded = encoded
        self.backend = encoded.backend
        self.n_rows = encoded.n_rows
        self.heights = encoded.heights
        return self

    def evaluate(self, classes: Classes, outlier, levels: np.ndarray):
        """Return host arrays ``(information_loss, lower_bound)``, one value per node."""
        raise NotImplementedError

    def evaluate_needed(self, classes: Classes, outlier, levels: np.ndarray, needed,
                        bounds: bool = True):
        """:meth:`evaluate` where only the nodes ``needed`` (host bool, (B,)) need their
        information loss (the others' may be anything: the caller discards it); every lower
        bound is computed, or (``bounds=False``) only those of the nodes ``needed``, the others
        NaN where that saves work.  By default :meth:`evaluate`."""
        return self.evaluate(classes, outlier, levels)

    def suppression_order(self, classes: Classes, idx):
        """Device float per class of ``idx`` (device indices into ``classes``) ordering classes
        of equal size for the risk-based models' suppression (ARX's
        ``HashGroupifyDistribution``: the entry's own loss), or ``None``: first appearance only
        (ARX's list of metrics whose entry loss is the class size)."""
        return None

    #: ``levels (B, q) -> bounds (B,)`` usable before a node is checked, or ``None``
    #: (in ARX only Precision has one).
    data_independent_bound = None

    def prior_bound(self, bottom) -> Callable[[np.ndarray], np.ndarray] | None:
        """``levels (B, q) -> bounds (B,)``: a lower bound of every node's loss known before
        the node is checked, given the bottom frequency set ``bottom`` (``None``: the metric
        has none).  By default :attr:`data_independent_bound`."""
        return self.data_independent_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@njit(cache=True)
def _attribute_factor(total, minimum, maximum, exponent):
    """One attribute's factor of ARX's loss: its sum normalized to [0, 1] (``v = 0`` for an
    attribute whose domain has a single value, minimum == maximum), truncated to 1e-10, as
    ``(v + 1) ** exponent``; NaN for a sum not computed."""
    span = maximum - minimum
    v = (total - minimum) / span if span > 0.0 else 0.0
    if math.isnan(v):
        return math.nan
    if v < 0.0:
        v = 0.0
    v = math.floor(v * 1e10) / 1e10
    return math.pow(v * 1.0 + 1.0, exponent)


@njit(cache=True)
def _normalize_and_aggregate(sums, minimum, maximum):
    """ARX's per-attribute normalization, truncation to 1e-10 and geometric mean of ``B``
    nodes' per-attribute sums (B, q); NaN for a node whose sums were not computed."""
    n_nodes, q = sums.shape
    out = np.empty(n_nodes, np.float64)
    exponent = 1.0 / q
    for b in range(n_nodes):
        g = 1.0
        for i in range(q):
            g *= _attribute_factor(sums[b, i], minimum[i], maximum[i], exponent)
        out[b] = g - 1.0
    return out


ahead_of_time(_normalize_and_aggregate,
              ["float64[::1](float64[:, ::1], float64[::1], float64[::1])"])


@njit(cache=True)
def _factor_table(sums, minimum, maximum):
    """:func:`_attribute_factor` of every entry of a (q, levels) table of per-attribute sums
    (the same operations, so a product of its entries is bit-identical to
    :func:`_normalize_and_aggregate` of the sums)."""
    q, n_levels = sums.shape
    out = np.empty((q, n_levels), np.float64)
    for i in range(q):
        for level in range(n_levels):
            out[i, level] = _attribute_factor(sums[i, level], minimum[i], maximum[i], 1.0 / q)
    return out


ahead_of_time(_factor_table, ["float64[:, ::1](float64[:, ::1], float64[::1], float64[::1])"])


class Loss(Metric):
    """ARX's loss metric (normalized LM, geometric mean over attributes)."""

    name = "loss"

    def bind(self, encoded):
        super().bind(encoded)
        hmax = int(self.heights.max())
        off = np.zeros((len(encoded.hierarchies), hmax + 1), dtype=np.int64)
        parts, pos = [], 0
        self._domain = np.empty(len(encoded.hierarchies), dtype=np.float64)
        for j, h in enumerate(encoded.hierarchies):
            size = float(len(h.leaves))
            self._domain[j] = size
            for level in range(h.height + 1):
                off[j, level] = pos
                share = h.label_row_counts(level) / size
                parts.append(share)
                pos += len(share)
        self._share = self.backend.asarray(np.concatenate(parts).astype(np.float64))
        self._share_off = off
        self._minimum = (1.0 * self.n_rows) / self._domain
        self._maximum = np.full(len(self._domain), float(self.n_rows))
        return self

    def evaluate(self, classes, outlier, levels):
        return self.evaluate_needed(classes, outlier, levels, None)

    def suppression_order(self, classes, idx):
        """ARX's ``MetricMDNMLoss.getInformationLoss(node, entry)`` aggregated: the geometric
        mean ``prod_j (|E| share_j + 1)^(1/q) - 1`` of the class's unnormalized terms."""
        xp = classes.xp
        levels = np.asarray(classes.levels)
        q = levels.shape[1]
        size = classes.size[idx].astype(xp.float64)
        node = classes.node[idx]
        g = xp.ones(size.shape[0], dtype=xp.float64)
        for j in range(q):
            off = self.backend.asarray(self._share_off[j, levels[:, j]])[node]
            share = self._share[off + classes.codes[idx, j].astype(xp.int64)]
            g = g * xp.power(size * share + 1.0, 1.0 / q)
        return g - 1.0

    def prior_factors(self, bottom) -> np.ndarray:
        """(q, height + 1): per attribute and level the factor of :meth:`prior_bound` (the
        bound of levels ``L`` is the product of ``factors[j, L[j]]`` over ``j``, minus 1)."""
        hierarchies = self.encoded.hierarchies
        share = self.backend.to_host(self._share)
        sums = np.zeros(self._share_off.shape)
        marginals = kernels.marginal_counts(self.backend, bottom.codes, bottom.count,
                                            [len(h.leaves) for h in hierarchies])
        for j, (h, leaf_count) in enumerate(zip(hierarchies, marginals)):
            leaf_count = leaf_count.astype(np.float64)  # whole numbers, exact below 2^53
            for level in range(h.height + 1):
                sums[j, level] = leaf_count @ share[self._share_off[j, level] + h.codes(level)]
        return _factor_table(sums, self._minimum, self._maximum)

    def prior_bound(self, bottom):
        """The lower bound charges every record, suppressed or not, its generalized value's
        share: per attribute a sum that depends only on that attribute's level and marginal
        counts, so one table of ``q x (height + 1)`` sums gives every node's bound unchecked.
        Its additions run in another order than the checked bound's: a search pruning with
        it must allow for rounding."""
        factors = self.prior_factors(bottom)

        def bound(levels):  # the factors multiplied in attribute order, as ARX aggregates
            levels = np.atleast_2d(levels)
            g = np.ones(len(levels))
            for j in range(levels.shape[1]):
                g *= factors[j, levels[:, j]]
            return g - 1.0
        return bound

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        q = levels.shape[1]
        off = self._share_off[np.arange(q)[None, :], levels]  # (B, q) host
        charged, kept = kernels.loss_sums(self.backend, classes.size, classes.codes, outlier,
                                          classes.ptr, off, self._share, needed,
                                          None if bounds else needed)
        lb = _normalize_and_aggregate(kept, self._minimum, self._maximum)
        if not bounds and needed is not None:  # NaN on every backend, whatever it computed
            lb = np.where(needed, lb, np.nan)
        return _normalize_and_aggregate(charged, self._minimum, self._maximum), lb


def generalization_shares(levels, heights) -> np.ndarray:
    """``level / height`` per attribute (0 for an attribute of height 0), as Prec charges it."""
    h = np.asarray(heights, dtype=np.float64)
    return np.where(h == 0, 0.0, np.asarray(levels, dtype=np.float64) / np.where(h == 0, 1.0, h))


def precision_loss(shares, suppressed, n_rows: int) -> np.ndarray:
    """ARX's precision loss (Sweeney's Prec, arithmetic mean over the ``q`` attributes) of
    ``B`` nodes: ``shares`` (B, q) ``level / height`` per attribute, ``suppressed`` (B,)
    suppressed records (charged the top level), in ARX's order of float operations."""
    shares = np.atleast_2d(np.asarray(shares, dtype=np.float64))
    sup = np.asarray(suppressed, dtype=np.float64).reshape(-1)
    return _precision(shares, sup, float(n_rows))


@njit(cache=True)
def _precision(shares, sup, n_rows):
    """:func:`precision_loss` node by node (compiled: Flash asks for one node at a time)."""
    n_nodes, q = shares.shape
    il = np.zeros(n_nodes)
    for b in range(n_nodes):
        kept = n_rows - sup[b]
        for i in range(q):
            v = ((kept * shares[b, i]) * 1.0 + sup[b] * 1.0) / n_rows
            il[b] += (v / q) * 1.0
    return il


@njit(cache=True)
def _mean_share(shares):
    """Prec's lower bound: the mean ``level / height`` per node, in ARX's order."""
    n_nodes, q = shares.shape
    lb = np.zeros(n_nodes)
    for b in range(n_nodes):
        for i in range(q):
            lb[b] += ((shares[b, i] * 1.0) / q) * 1.0
    return lb


def discernibility(kept_sq_sum, suppressed, n_rows: int) -> np.ndarray:
    """The discernibility metric DM (Bayardo & Agrawal 2005; ARX's
    ``createDiscernabilityMetric()``): ``sum |E|^2`` over kept classes plus ``N`` per
    suppressed record, from per-node ``kept_sq_sum`` and ``suppressed`` (host arrays)."""
    return (np.asarray(kept_sq_sum, dtype=np.int64) +
            np.int64(n_rows) * np.asarray(suppressed, dtype=np.int64)).astype(np.float64)


class Precision(Metric):
    """ARX's precision metric (Prec, arithmetic mean over attributes)."""

    name = "precision"

    def _generalization_shares(self, levels):
        return generalization_shares(levels, self.heights)

    def evaluate(self, classes, outlier, levels):
        xp = classes.xp
        sup = self.backend.to_host(
            classes.per_node(xp.where(outlier, classes.size, 0))).astype(np.float64)
        return (precision_loss(self._generalization_shares(levels), sup, self.n_rows),
                self.data_independent_bound(levels))

    def data_independent_bound(self, levels):
        return _mean_share(self._generalization_shares(np.atleast_2d(levels)))


class Discernibility(Metric):
    """ARX's discernibility metric (DM)."""

    name = "discernibility"

    def evaluate(self, classes, outlier, levels):
        xp = classes.xp
        size = classes.size
        sq = size * size
        kept_sq = classes.per_node(xp.where(outlier, 0, sq))
        all_sq = classes.per_node(sq)
        sup = classes.per_node(xp.where(outlier, size, 0))
        il = discernibility(self.backend.to_host(kept_sq), self.backend.to_host(sup), self.n_rows)
        return il, self.backend.to_host(all_sq).astype(np.float64)


METRICS = {"loss": Loss, "precision": Precision, "discernibility": Discernibility}


def make_metric(metric) -> Metric:
    """A :class:`Metric` instance from a name (``loss``, ``precision``, ``discernibility``)."""
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str) and metric.lower() in METRICS:
        return METRICS[metric.lower()]()
    raise InputError(f"metric must be one of {sorted(METRICS)} or a Metric, got {metric!r}")
