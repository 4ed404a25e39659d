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
  ``sum |E|^2`` over kept classes plus ``R`` per suppressed record;
  :class:`MonotonicDiscernibility` (``createDiscernabilityMetric(true)``, DM*) ``sum |E|^2``.
* :class:`AECS` -- ``createAECSMetric()``: the average equivalence class size (LeFevre, DeWitt &
  Ramakrishnan 2006), the suppressed records one class.
* :class:`~.metric_entropy.Entropy` -- ``createEntropyMetric()``: non-uniform entropy (Gionis
  & Tassa 2009; ARX's ``MetricMDNUNMEntropy``), ``MonotonicEntropy``
  (``createEntropyMetric(true)``) and ``NormalizedEntropy``
  (``createNormalizedEntropyMetric()``), in :mod:`.metric_entropy`.
* :class:`Height` -- ``createHeightMetric()``: the sum of the generalization levels.
* :class:`Ambiguity` -- ``createAmbiguityMetric()``: Nergiz & Clifton's (2007) ambiguity.
* :class:`~.metric_kl.KLDivergence` -- ``createKLDivergenceMetric()``: the KL divergence of
  the release from the input (Machanavajjhala et al. 2007), in :mod:`.metric_kl`.

``gs_factor`` (ARX's generalization/suppression factor, ``createLossMetric(gsFactor)``) weighs
generalization against suppression where ARX honours it (loss, precision, entropy, AECS);
``attribute_weights`` weigh the attributes of the multi-dimensional metrics (loss, precision,
entropy, normalized entropy, height; ARX's ``ARXConfiguration.setAttributeWeight``: 0.5 unless
given, divided by the largest).
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np
from numba import njit

from .. import kernels
from ..core.classes import Classes
from ..errors import InputError
from ..kernels.aot import ahead_of_time
from ..kernels.nrt import njit_no_refcount
from ..kernels.packed import code_at
from .prior_bound import FactorBound, prior_sums
from ..validation import check_number

__all__ = ["Metric", "Loss", "Precision", "Discernibility", "MonotonicDiscernibility", "AECS",
           "Height", "Ambiguity",
           "METRICS", "make_metric", "precision_loss", "discernibility",
           "generalization_shares"]


class Metric:
    """Base class. Subclasses implement :meth:`bind` and :meth:`evaluate`.

    ``gs_factor`` in [0, 1] (ARX's ``gsFactor``; 0.5: generalization and suppression alike, 0:
    only suppression costs, 1: only generalization) for the metrics that take one
    (:attr:`takes_gs_factor`); ``attribute_weights`` ``{QID: weight >= 0}`` for the
    multi-dimensional ones (:attr:`takes_weights`)."""

    name = "metric"
    monotonic_with_generalization = True
    monotonic_with_suppression = False
    #: ARX's ``isGSFactorSupported()``
    takes_gs_factor = False
    #: ARX's ``AbstractMetricMultiDimensional``: per-attribute values, weighted and aggregated
    takes_weights = False

    def __init__(self, *, gs_factor: float = 0.5,
                 attribute_weights: Mapping[str, float] | None = None):
        gs_factor = check_number("gs_factor", gs_factor, 0.0, 1.0)
        if gs_factor != 0.5 and not self.takes_gs_factor:
            raise InputError(f"gs_factor: the {self.name} metric takes none (ARX's take one for "
                             f"loss, precision, entropy and aecs), got {gs_factor!r}")
        weights = dict(attribute_weights or {})
        if weights and not self.takes_weights:
            raise InputError(f"attribute_weights: the {self.name} metric weighs no attributes "
                             "(ARX weighs those of loss, precision, entropy, normalized-entropy "
                             f"and height), got {weights!r}")
        for column, weight in weights.items():
            check_number(f"attribute_weights[{column!r}]", weight, 0.0)
        self.gs_factor = gs_factor
        self.attribute_weights = {column: float(w) for column, w in weights.items()}
        # ARX's Metric(): sFactor = 0 charges generalization only, gFactor = 0 suppression only
        self.s_factor = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
        self.g_factor = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)

    @property
    def arx_default(self) -> bool:
        """Whether the metric has ARX's default parameters (gs-factor 0.5, equal weights): the
        form the compiled Flash evaluates."""
        return self.gs_factor == 0.5 and not self.attribute_weights

    def bind(self, encoded) -> "Metric":
        """Precompute what the metric needs from the encoded table; returns ``self``."""
        self.encoded = encoded
        self.backend = encoded.backend
        self.n_rows = encoded.n_rows
        self.heights = encoded.heights
        unknown = sorted(set(self.attribute_weights) - set(encoded.qi_names)
                         - set(encoded.microaggregation))
        if unknown:
            raise InputError(f"attribute_weights: {unknown[0]!r} is not a quasi-identifier "
                             f"(they are {list(encoded.qi_names)})")
        # ARX's AbstractMetricMultiDimensional: 0.5 unless given, divided by the largest
        w = np.array([self.attribute_weights.get(c, 0.5) for c in encoded.qi_names])
        self.weights = np.ones(len(w)) if w.max(initial=0.0) == 0.0 else w / w.max()
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

    def launch_sums(self, classes: Classes, outlier, levels: np.ndarray, wanted=None):
        """Device sums from which :meth:`from_sums` gives the loss and bound of the nodes
        ``wanted`` (device bool per node; ``None``: every node), launched without waiting
        for them (a GPU lattice walk copies them back with the level's other results:
        :meth:`.Evaluator.evaluate`), or ``None``: this metric is computed by
        :meth:`evaluate_needed` once the classes are on the host's books.  ``classes`` may
        hold rows past the last node's (not read)."""
        return None

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

    def _host_classes(self, classes: Classes, outlier):
        """``(size, codes, outlier, ptr)`` of the classes on the host (for the kernels of the
        metrics that add their terms in ARX's order on the CPU whatever the backend)."""
        be = self.backend
        return (be.to_host(classes.size).astype(np.int64), be.to_host(classes.codes),
                be.to_host(outlier).astype(np.bool_), classes.host_ptr.astype(np.int64))

    def __repr__(self) -> str:
        args = ([f"gs_factor={self.gs_factor!r}"] if self.gs_factor != 0.5 else []) + \
            ([f"attribute_weights={self.attribute_weights!r}"] if self.attribute_weights else [])
        return f"{type(self).__name__}({', '.join(args)})"


@njit(cache=True)
def _attribute_factor(total, minimum, maximum, exponent, weight):
    """One attribute's factor of ARX's loss: its sum normalized to [0, 1] (``v = 0`` for an
    attribute whose domain has a single value, minimum == maximum), truncated to 1e-10, as
    ``(v * weight + 1) ** exponent``; NaN for a sum not computed."""
    span = maximum - minimum
    v = (total - minimum) / span if span > 0.0 else 0.0
    if math.isnan(v):
        return math.nan
    if v < 0.0:
        v = 0.0
    v = math.floor(v * 1e10) / 1e10
    return math.pow(v * weight + 1.0, exponent)


@njit(cache=True)
def _geometric_mean(sums, minimum, maximum, weights):
    """ARX's per-attribute normalization, truncation to 1e-10 and weighted geometric mean
    (``ILMultiDimensionalGeometricMean``) of ``B`` nodes' per-attribute sums (B, q); NaN for a
    node whose sums were not computed."""
    out = np.empty(sums.shape[0], np.float64)
    for b in range(sums.shape[0]):
        out[b] = _geometric_mean_row(sums, b, minimum, maximum, weights)
    return out


ahead_of_time(_geometric_mean,
              ["float64[::1](float64[:, ::1], float64[::1], float64[::1], float64[::1])"])


@njit_no_refcount
def _geometric_mean_row(sums, b, minimum, maximum, weights):
    """:func:`_geometric_mean` of node ``b`` (row ``b`` of ``sums``); ``weights`` None: all
    1.0 (ARX's default), without an array of them."""
    q = sums.shape[1]
    exponent = 1.0 / q
    g = 1.0
    for i in range(q):
        g *= _attribute_factor(sums[b, i], minimum[i], maximum[i], exponent,
                               1.0 if weights is None else weights[i])
    return g - 1.0


@njit(cache=True)
def _normalize_and_aggregate(sums, minimum, maximum):
    """:func:`_geometric_mean` with equal weights (ARX's default)."""
    return _geometric_mean(sums, minimum, maximum, np.ones(sums.shape[1]))


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
            out[i, level] = _attribute_factor(sums[i, level], minimum[i], maximum[i], 1.0 / q,
                                               1.0)
    return out


ahead_of_time(_factor_table, ["float64[:, ::1](float64[:, ::1], float64[::1], float64[::1])"])


@njit(cache=True)
def _loss_sums_factors(size, codes, outlier, ptr, off, share, g_factor, s_factor):
    """Per node and QID the charged and the kept sums of ARX's loss with a gs-factor
    (:func:`node_sums_with_factors` of each node)."""
    n_nodes, q = off.shape
    charged = np.zeros((n_nodes, q))
    kept = np.zeros((n_nodes, q))
    no_fields = np.empty((2, 0), np.int64)  # the codes are not packed
    for b in range(n_nodes):
        node_sums_with_factors(size, codes, no_fields, outlier, ptr[b], ptr[b + 1], off[b],
                               share, g_factor, s_factor, charged[b], kept[b])
    return charged, kept


@njit_no_refcount
def node_sums_with_factors(size, codes, fields, outlier, lo, hi, off, share, g_factor,
                           s_factor, charged, kept):
    """One node's charged and kept sums per QID (into ``charged`` and ``kept``, (q,)) of ARX's
    loss with a gs-factor (``MetricMDNMLoss``: a kept class costs ``|E| share g``, a
    suppressed one ``|E|`` when ``s == 1``, else ``|E| share + s (|E| - |E| share)``), over
    classes ``lo..hi-1`` in their order; ``codes`` (C, q), or packed in the fields of
    ``fields`` (:func:`~gpuppdp.kernels.packed.code_at`); ``off`` (q,): the node's share
    offsets.  The compiled searches call it too."""
    for j in range(off.shape[0]):
        h = 0.0
        k = 0.0
        for c in range(lo, hi):
            count = float(size[c])
            x = count * share[off[j] + code_at(codes, c, j, fields)]
            if outlier[c]:
                h += count if s_factor == 1.0 else x + s_factor * (count - x)
            else:
                h += x * g_factor
            k += x * g_factor
        charged[j] = h
        kept[j] = k


@njit(cache=True)
def _aggregated_sums(size, distinct, outlier, ptr, domain, g_factor, s_factor):
    """Per node ARX's loss sum of one microaggregated attribute (``MetricMDNMLoss``: a kept
    class costs ``|E| (d_E / D) g``, ``d_E`` its distinct values of the attribute and ``D``
    the attribute's distinct values in the table; a suppressed one as for a generalized
    attribute), added in class order."""
    n_nodes = ptr.shape[0] - 1
    out = np.zeros(n_nodes)
    for b in range(n_nodes):
        h = 0.0
        for c in range(ptr[b], ptr[b + 1]):
            count = float(size[c])
            x = count * (float(distinct[c]) / domain)
            if outlier[c]:
                h += count if s_factor == 1.0 else x + s_factor * (count - x)
            else:
                h += x * g_factor
        out[b] = h
    return out


def charged_aggregations(encoded) -> list[str]:
    """The microaggregated attributes a metric that charges them sees (ARX's
    ``getHotQIsNotGeneralized``): those without a hierarchy, in table order."""
    return [c for c in encoded.roles if c in encoded.microaggregation
            and not encoded.microaggregation[c].clustered]


class Loss(Metric):
    """ARX's loss metric (normalized LM, weighted geometric mean over attributes;
    ``createLossMetric(gsFactor)``).  A microaggregated attribute without hierarchy is one
    more attribute (:mod:`gpuppdp.engine.microaggregation`), after the generalized ones,
    normalized by the row count; the lower bound charges it nothing."""

    name = "loss"
    takes_gs_factor = True
    takes_weights = True
    #: ARX's ``isAbleToHandleMicroaggregation()``
    charges_microaggregation = True

    @property
    def arx_default(self) -> bool:
        return super().arx_default and not getattr(self, "_aggregated", None)

    def bind(self, encoded):
        super().bind(encoded)
        self._aggregated = charged_aggregations(encoded)
        if self._aggregated:  # ARX's weights over the generalized, then the aggregated ones
            w = np.array([self.attribute_weights.get(c, 0.5)
                          for c in list(encoded.qi_names) + self._aggregated])
            self.weights = np.ones(len(w)) if w.max(initial=0.0) == 0.0 else w / w.max()
        bound_to = getattr(self, "_shares_of", (None, None))
        if bound_to[0] is not encoded.hierarchies or bound_to[1] is not self.backend:
            self._bind_shares(encoded.hierarchies)
        self._minimum = (self.g_factor * self.n_rows) / self._domain
        self._maximum = np.full(len(self._domain), float(self.n_rows))
        if self._aggregated:  # normalized as aggregate / rows
            a = len(self._aggregated)
            self._minimum = np.concatenate([self._minimum, np.zeros(a)])
            self._maximum = np.concatenate([self._maximum, np.full(a, float(self.n_rows))])
        return self

    def _bind_shares(self, hierarchies) -> None:
        """The domain shares of every label of every level (they depend on the hierarchies
        only: a copy bound again to a row subset of its table keeps them)."""
        hmax = int(self.heights.max())
        off = np.zeros((len(hierarchies), hmax + 1), dtype=np.int64)
        parts, pos = [], 0
        self._domain = np.empty(len(hierarchies), dtype=np.float64)
        for j, h in enumerate(hierarchies):
            size = float(len(h.leaves))
            self._domain[j] = size
            for level in range(h.height + 1):
                off[j, level] = pos
                share = h.label_row_counts(level) / size
                parts.append(share)
                pos += len(share)
        self._share = self.backend.asarray(np.concatenate(parts).astype(np.float64))
        self._share_off = off
        self._shares_of = (hierarchies, self.backend)

    def evaluate(self, classes, outlier, levels):
        return self.evaluate_needed(classes, outlier, levels, None)

    def suppression_order(self, classes, idx):
        """ARX's ``MetricMDNMLoss.getInformationLoss(node, entry)`` aggregated: the weighted
        geometric mean ``prod_j (|E| share_j w_j + 1)^(1/n) - 1`` of the class's unnormalized
        terms (``n`` attributes; a microaggregated attribute's term is left out: 1)."""
        xp = classes.xp
        levels = np.asarray(classes.levels)
        exponent = 1.0 / len(self.weights)
        size = classes.size[idx].astype(xp.float64)
        node = classes.node[idx]
        g = xp.ones(size.shape[0], dtype=xp.float64)
        for j in range(levels.shape[1]):
            off = self.backend.asarray(self._share_off[j, levels[:, j]])[node]
            share = self._share[off + classes.codes[idx, j].astype(xp.int64)]
            g = g * xp.power(size * share * float(self.weights[j]) + 1.0, exponent)
        return g - 1.0

    def prior_factors(self, bottom) -> np.ndarray:
        """(q, height + 1): per attribute and level the factor of :meth:`prior_bound` (the
        bound of levels ``L`` is the product of ``factors[j, L[j]]`` over ``j``, minus 1)."""
        maps, map_off = self.encoded.level_maps()
        counts, offsets = self.encoded.leaf_counts(bottom)
        sums = prior_sums(counts, offsets, self.backend.to_host(maps), map_off,
                          self.encoded.heights, self.backend.to_host(self._share),
                          self._share_off)
        return _factor_table(sums, self._minimum, self._maximum)

    def prior_bound(self, bottom):
        """The lower bound charges every record, suppressed or not, its generalized value's
        share: per attribute a sum that depends only on that attribute's level and marginal
        counts, so one table of ``q x (height + 1)`` sums gives every node's bound unchecked.
        Its additions run in another order than the checked bound's: a search pruning with
        it must allow for rounding.  None with a gs-factor or attribute weights."""
        if not self.arx_default:
            return None
        return FactorBound(self.prior_factors(bottom))

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        q = levels.shape[1]
        off = self._share_off[np.arange(q)[None, :], levels]  # (B, q) host
        if self.g_factor == 1.0 and self.s_factor == 1.0:
            charged, kept = kernels.loss_sums(self.backend, classes.size, classes.codes,
                                              outlier, classes.ptr, off, self._share, needed,
                                              None if bounds else needed)
        else:
            size, codes, out, ptr = self._host_classes(classes, outlier)
            charged, kept = _loss_sums_factors(size, codes, out, ptr, off,
                                               self.backend.to_host(self._share),
                                               self.g_factor, self.s_factor)
        if self._aggregated:
            charged, kept = self._with_aggregated(classes, outlier, charged, kept)
        return self.from_sums(charged, kept, needed, bounds)

    def launch_sums(self, classes, outlier, levels, wanted=None):
        """Device (2, B, q): the charged and kept sums of the nodes ``wanted``
        (:func:`.kernels.loss_sums_device`), or ``None`` with a gs-factor or a
        microaggregated attribute."""
        if self.g_factor != 1.0 or self.s_factor != 1.0 or self._aggregated:
            return None
        q = levels.shape[1]
        return kernels.loss_sums_device(self.backend, classes.size, classes.codes, outlier,
                                        classes.ptr, self._share_off[np.arange(q)[None, :],
                                                                     levels], self._share,
                                        wanted)

    def from_sums(self, charged, kept, needed, bounds: bool = True):
        """``(information loss, lower bound)`` per node from its host charged and kept sums
        (B, q) (:meth:`~Metric.evaluate_needed`'s ``needed`` and ``bounds``): the sums of
        the nodes not ``needed`` are set aside first (their loss is discarded, and without
        ``bounds`` their bound NaN on every backend, whatever it computed), so that only
        the wanted values cost their powers."""
        if needed is not None:
            wanted = np.asarray(needed, dtype=np.bool_)[:, None]
            charged = np.where(wanted, charged, np.nan)
            if not bounds:
                kept = np.where(wanted, kept, np.nan)
        lb = _geometric_mean(kept, self._minimum, self._maximum, self.weights)
        return _geometric_mean(charged, self._minimum, self._maximum, self.weights), lb


    def _with_aggregated(self, classes, outlier, charged, kept):
        """The sums with one column per microaggregated attribute: charged as ARX does, 0 in
        the lower bound (ARX computes no bound for them)."""
        be = self.backend
        size, _, out, ptr = self._host_classes(classes, outlier)
        extra = [_aggregated_sums(size, be.to_host(classes.for_attribute(c).distinct)
                                  .astype(np.int64), out, ptr,
                                  float(len(self.encoded.sensitive[c].labels)),
                                  self.g_factor, self.s_factor)
                 for c in self._aggregated]
        charged = np.column_stack([np.asarray(charged, dtype=np.float64)] + extra)
        kept = np.column_stack([np.asarray(kept, dtype=np.float64),
                                np.zeros((charged.shape[0], len(extra)))])
        return np.ascontiguousarray(charged), np.ascontiguousarray(kept)


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
def _precision_weighted(shares, sup, n_rows, g_factor, s_factor, weights):
    """ARX's ``MetricMDNMPrecision`` of ``B`` nodes: per attribute
    ``((kept * share) * g + sup * s) / n_rows``, their weighted arithmetic mean
    (``ILMultiDimensionalArithmeticMean``)."""
    n_nodes, q = shares.shape
    il = np.zeros(n_nodes)
    for b in range(n_nodes):
        kept = n_rows - sup[b]
        for i in range(q):
            il[b] += _precision_term(shares[b, i], kept, sup[b], n_rows, g_factor, s_factor, q,
                                     weights[i])
    return il


ahead_of_time(_precision_weighted, ["float64[::1](float64[:, ::1], float64[::1], float64, "
                                    "float64, float64, float64[::1])"])


@njit(inline="always")
def _precision_term(share, kept, sup, n_rows, g_factor, s_factor, q, weight):
    """One attribute's term of :func:`_precision_weighted`."""
    return ((((kept * share) * g_factor + sup * s_factor) / n_rows) / q) * weight


@njit(cache=True)
def _precision(shares, sup, n_rows):
    """:func:`precision_loss` compiled."""
    return _precision_weighted(shares, sup, n_rows, 1.0, 1.0, np.ones(shares.shape[1]))


ahead_of_time(_precision, ["float64[::1](float64[:, ::1], float64[::1], float64)"])


@njit(cache=True)
def _mean_share_weighted(shares, g_factor, weights):
    """Prec's lower bound: the weighted mean of ``level / height * g`` per node, in ARX's
    order."""
    n_nodes, q = shares.shape
    lb = np.zeros(n_nodes)
    for b in range(n_nodes):
        for i in range(q):
            lb[b] += _mean_share_term(shares[b, i], g_factor, q, weights[i])
    return lb


@njit(inline="always")
def _mean_share_term(share, g_factor, q, weight):
    """One attribute's term of :func:`_mean_share_weighted`."""
    return ((share * g_factor) / q) * weight


@njit_no_refcount
def node_discernibility(kept_sq_sum, suppressed, n_rows):
    """The discernibility metric DM (Bayardo & Agrawal 2005; ARX's
    ``createDiscernabilityMetric()``): ``sum |E|^2`` over kept classes plus ``N`` per
    suppressed record, as a float -- of a node (integers; the compiled search's) or, through
    ``.py_func``, of int64 arrays of nodes (:func:`discernibility`)."""
    return (kept_sq_sum + n_rows * suppressed) * 1.0


def discernibility(kept_sq_sum, suppressed, n_rows: int) -> np.ndarray:
    """:func:`node_discernibility` of per-node ``kept_sq_sum`` and ``suppressed`` (host
    arrays)."""
    return node_discernibility.py_func(np.asarray(kept_sq_sum, dtype=np.int64),
                                       np.asarray(suppressed, dtype=np.int64), np.int64(n_rows))


@njit_no_refcount(error_model="numpy")
def node_aecs(rows, kept, every, s_factor, g_factor):
    """ARX's AECS (:class:`AECS`) of a node with ``kept`` of its ``every`` classes kept:
    ``(loss, lower bound)`` -- floats (the compiled search's) or, through ``.py_func``
    (under ``np.errstate``), float arrays of nodes.  ``g_factor`` is added only where records
    are suppressed (``+ 0.0`` elsewhere: the same float)."""
    groups = kept * s_factor + (kept != every) * (1.0 * g_factor)
    return rows / groups, rows / (every * s_factor)


class Precision(Metric):
    """ARX's precision metric (Prec, weighted arithmetic mean over attributes;
    ``createPrecisionMetric(false, gsFactor)``)."""

    name = "precision"
    takes_gs_factor = True
    takes_weights = True

    def _generalization_shares(self, levels):
        return generalization_shares(levels, self.heights)

    def evaluate(self, classes, outlier, levels):
        xp = classes.xp
        sup = self.backend.to_host(
            classes.per_node(xp.where(outlier, classes.size, 0))).astype(np.float64)
        shares = np.atleast_2d(self._generalization_shares(levels))
        return (_precision_weighted(shares, sup, float(self.n_rows), self.g_factor,
                                    self.s_factor, self.weights),
                self.data_independent_bound(levels))

    def data_independent_bound(self, levels):
        return _mean_share_weighted(self._generalization_shares(np.atleast_2d(levels)),
                                    self.g_factor, self.weights)


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


class MonotonicDiscernibility(Metric):
    """ARX's monotonic discernibility DM* (``createDiscernabilityMetric(true)``,
    ``MetricSDDiscernability``): ``sum |E|^2`` over every class, suppressed or not."""

    name = "discernibility-monotonic"
    monotonic_with_suppression = True

    def evaluate(self, classes, outlier, levels):
        size = classes.size
        sq = self.backend.to_host(classes.per_node(size * size)).astype(np.float64)
        return sq, sq.copy()


class AECS(Metric):
    """ARX's average equivalence class size (``createAECSMetric(gsFactor)``, ``MetricSDAECS``;
    LeFevre, DeWitt & Ramakrishnan 2006): ``R / (kept classes * s + g)``, the suppressed
    records one more class when there are any (ARX switches the two factors here); lower
    bound ``R / (classes * s)``."""

    name = "aecs"
    takes_gs_factor = True

    def evaluate(self, classes, outlier, levels):
        xp, be = classes.xp, self.backend
        kept = be.to_host(classes.per_node((~outlier).astype(xp.int64))).astype(np.float64)
        every = np.diff(classes.host_ptr).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return node_aecs.py_func(float(self.n_rows), kept, every, self.s_factor,
                                     self.g_factor)


class Height(Metric):
    """ARX's height metric (``createHeightMetric()``, ``MetricMDHeight``): the weighted sum of
    the generalization levels, known before any check."""

    name = "height"
    monotonic_with_suppression = True
    takes_weights = True

    def data_independent_bound(self, levels):
        return _weighted_sum(np.atleast_2d(levels).astype(np.float64), self.weights)

    def evaluate(self, classes, outlier, levels):
        il = self.data_independent_bound(levels)
        return il, il.copy()


@njit(cache=True)
def _weighted_sum(values, weights):
    """ARX's ``ILMultiDimensionalSum`` of ``B`` nodes' per-attribute values (B, q): added in
    attribute order, an infinite or NaN sum becomes ``Double.MAX_VALUE``."""
    n_nodes, q = values.shape
    out = np.zeros(n_nodes)
    for b in range(n_nodes):
        total = 0.0
        for i in range(q):
            total += values[b, i] * weights[i]
        out[b] = arx_sum(total)
    return out


@njit(inline="always")
def arx_sum(total):
    """ARX's ``ILMultiDimensionalSum`` value of a sum: an infinite or NaN one becomes
    ``Double.MAX_VALUE`` (the compiled searches' height too)."""
    return total if math.isfinite(total) else 1.7976931348623157e308


@njit(cache=True)
def _ambiguity(size, codes, outlier, ptr, off, share, domain):
    """Per node :func:`node_ambiguity` (``MetricSDNMAmbiguity``)."""
    n_nodes = off.shape[0]
    il = np.zeros(n_nodes)
    lb = np.zeros(n_nodes)
    no_fields = np.empty((2, 0), np.int64)  # the codes are not packed
    for b in range(n_nodes):
        il[b], lb[b] = node_ambiguity(size, codes, no_fields, outlier, ptr[b], ptr[b + 1],
                                      off[b], share, domain)
    return il, lb


@njit_no_refcount
def node_ambiguity(size, codes, fields, outlier, lo, hi, off, share, domain):
    """One node's ambiguity ``sum_E |E| prod_i (share_i * S_i)`` (a suppressed class charged
    ``S_i``) and its bound (every class kept), over classes ``lo..hi-1`` in their order
    (``MetricSDNMAmbiguity``); ``codes`` (C, q), or packed in the fields of ``fields``;
    ``off`` (q,): the node's share offsets.  The compiled searches call it too."""
    il = 0.0
    lb = 0.0
    for c in range(lo, hi):
        charged = 1.0
        kept = 1.0
        for i in range(off.shape[0]):
            x = share[off[i] + code_at(codes, c, i, fields)]
            charged *= (1.0 if outlier[c] else x) * domain[i]
            kept *= x * domain[i]
        il += charged * size[c]
        lb += kept * size[c]
    return il, lb


class Ambiguity(Loss):
    """ARX's ambiguity metric (``createAmbiguityMetric()``, ``MetricSDNMAmbiguity``; Nergiz &
    Clifton 2007): per class its size times the product over attributes of the number of
    hierarchy rows its generalized value stands for (``share * S``, the materialized domain
    shares of :class:`Loss`; a suppressed value stands for all ``S``)."""

    name = "ambiguity"
    takes_gs_factor = False
    takes_weights = False

    def prior_bound(self, bottom):
        return None

    def launch_sums(self, classes, outlier, levels, wanted=None):
        return None  # its own sums, on the host

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        q = levels.shape[1]
        off = self._share_off[np.arange(q)[None, :], levels]
        size, codes, out, ptr = self._host_classes(classes, outlier)
        return _ambiguity(size, codes, out, ptr, off, self.backend.to_host(self._share),
                          self._domain)


#: the metrics by their command-line names (:mod:`.metric_entropy` adds the entropies and
#: :mod:`.metric_kl` ``kl`` when the engine package is imported, each in its own module)
METRICS: dict[str, type[Metric]] = {m.name: m for m in (
    AECS, Ambiguity, Discernibility, MonotonicDiscernibility, Height, Loss, Precision)}


def make_metric(metric, *, gs_factor: float | None = None,
                attribute_weights: Mapping[str, float] | None = None) -> Metric:
    """A :class:`Metric` instance from a name (:data:`METRICS`) with ``gs_factor`` and
    ``attribute_weights``, or ``metric`` itself when it is one (then with neither)."""
    if isinstance(metric, Metric):
        if gs_factor is not None or attribute_weights is not None:
            raise InputError("gs_factor and attribute_weights: give them to the metric object "
                             f"({type(metric).__name__}(...)), not beside it")
        return metric
    if isinstance(metric, str) and metric.lower() in METRICS:
        return METRICS[metric.lower()](
            gs_factor=0.5 if gs_factor is None else gs_factor,
            attribute_weights=attribute_weights)
    raise InputError(f"metric must be one of {sorted(METRICS)} or a Metric, got {metric!r}")
