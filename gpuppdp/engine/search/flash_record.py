"""A checked node's record in the compiled searches -- its classes' verdict counts and its
metric's loss and lower bound -- as the batched evaluator judges a node (the compiled Flash's
check, :mod:`.flash_kernels`, and the packed level walk, :mod:`.packed_walk`).

The metric reads ``terms`` (4, q): each attribute's height and weight and the metric's
generalization and suppression factors (:data:`~.flash_layout.HEIGHT` ...,
:func:`~.flash_compiled.metric_terms`), and ``loss_table``: the loss's smallest and largest
sums (then its prior-bound factors), or ambiguity's domain sizes
(:func:`~.flash_compiled._metric_tables`), or the entropy metrics' table
(:func:`~.flash_compiled._entropy_table`).  The metric codes are those of
:data:`~.flash_compiled.METRIC_KINDS`; a deferred metric's (:data:`~.flash_layout.DEFERRED`)
loss and bound are left NaN.
"""

from __future__ import annotations

import math

import numpy as np

from ...kernels.nrt import njit_no_refcount
from ...kernels.segsum import _one_node
from ..metric_entropy import attribute_entropy
from ..metrics import (_geometric_mean_row, _mean_share_term, _precision_term, arx_sum,
                       node_aecs, node_ambiguity, node_discernibility, node_sums_with_factors)
from .flash_layout import (DEFERRED, ENTROPY, ENTROPY_MONOTONIC, G_FACTOR, HEIGHT,
                           MAX_SUPPRESSED, METRIC, MIN_SIZE, ONE, ROWS, S_FACTOR, WEIGHT, ZERO,
                           _level)


@njit_no_refcount
def _share(g, lattice, terms, j):
    """Attribute ``j``'s ``level / height`` of node ``g`` (0 where the height is 0)."""
    height = terms[HEIGHT, j]
    return 0.0 if height == 0 else _level(g, lattice, j) / height


@njit_no_refcount
def _mean_share_of(g, lattice, terms):
    """Precision's lower bound of node ``g``: :func:`~..metrics._mean_share_weighted`'s
    operations on its shares, with the metric's generalization factor and weights
    (``terms``: :data:`~.flash_layout.HEIGHT` ...)."""
    q = lattice.shape[1]
    bound = 0.0
    for j in range(q):
        bound += _mean_share_term(_share(g, lattice, terms, j), terms[G_FACTOR, j], q,
                                  terms[WEIGHT, j])
    return bound


@njit_no_refcount
def _precision_of(g, lattice, terms, suppressed, n_rows):
    """Precision of node ``g`` with ``suppressed`` of ``n_rows`` records suppressed:
    :func:`~..metrics._precision_weighted`'s operations on its shares."""
    q = lattice.shape[1]
    kept = n_rows - suppressed
    loss = 0.0
    for j in range(q):
        loss += _precision_term(_share(g, lattice, terms, j), kept, suppressed, n_rows,
                                terms[G_FACTOR, j], terms[S_FACTOR, j], q, terms[WEIGHT, j])
    return loss


@njit_no_refcount
def _height_of(g, lattice, terms):
    """The height metric of node ``g``: :func:`~..metrics._weighted_sum`'s operations on its
    levels and the weights."""
    total = 0.0
    for j in range(lattice.shape[1]):
        total += float(_level(g, lattice, j)) * terms[WEIGHT, j]
    return arx_sum(total)


@njit_no_refcount
def _ratio(x, y):
    """``x / y`` of floats as NumPy divides them (``y`` 0: infinite, or NaN for ``x`` 0)."""
    if y != 0.0:
        return x / y
    return np.nan if x == 0.0 or math.isnan(x) else math.copysign(math.inf, x)


@njit_no_refcount
def _class_metric(cfg, terms, kept, n_classes, kept_sq, all_sq, suppressed):
    """``(loss, lower bound)`` of a checked node by the metrics that need only its classes'
    counts: discernibility (:data:`~.flash_compiled.METRIC_KINDS` 2), its monotonic form (3)
    and AECS (4), by the formulas of :mod:`~gpuppdp.engine.metrics`."""
    if cfg[METRIC] == 2:
        return node_discernibility(kept_sq, suppressed, cfg[ROWS]), float(all_sq)
    if cfg[METRIC] == 3:
        return float(all_sq), float(all_sq)
    return node_aecs(float(cfg[ROWS]), float(kept), float(n_classes), terms[S_FACTOR, 0],
                     terms[G_FACTOR, 0])


@njit_no_refcount
def _entropy_of(g, lattice, cfg, terms, table, size, codes, fields, outlier, n_classes,
                suppressed, anonymous, counts):
    """``(loss, lower bound)`` of node ``g`` by the entropy metrics
    (:data:`~.flash_layout.ENTROPY` ...): per attribute
    :func:`~..metric_entropy.attribute_entropy` (the suppressed records' part for an anonymous
    node by the non-monotonic ones; the loss of a node not anonymous is not read), divided by
    its upper value (normalized entropy; else 1) and weighted, added in attribute order as
    :class:`~..metric_entropy.Entropy` adds them; its lower bound ARX's: for an anonymous node
    the generalization part before negation (the monotonic one: the loss), for another the
    generalization part (the monotonic one: none, NaN).  ``table``: row 0 each attribute's
    upper value, then per level its generalization part, then per level its radix
    (:func:`~.flash_compiled._entropy_table`); ``counts``: scratch, zero."""
    q = lattice.shape[1]
    levels = (table.shape[0] - 1) // 2
    monotonic = cfg[METRIC] == ENTROPY_MONOTONIC
    n_sup = suppressed if anonymous and not monotonic else 0
    loss = 0.0
    bound = 0.0
    for i in range(q):
        level = _level(g, lattice, i)
        raw_at = table[1 + level, i] * terms[G_FACTOR, i]
        value = attribute_entropy(raw_at, size, codes, fields, outlier, 0, n_classes, i,
                                  np.int64(table[1 + levels + level, i]), n_sup,
                                  terms[S_FACTOR, i], counts)
        loss += _ratio(value, table[0, i]) * terms[WEIGHT, i]
        if anonymous and not monotonic:
            bound += _ratio(raw_at, table[0, i]) * terms[WEIGHT, i]
        else:  # (the value is the generalization part)
            bound += _ratio(value, table[0, i]) * terms[WEIGHT, i]
    loss = arx_sum(loss)
    if monotonic:
        return loss, loss if anonymous else np.nan
    return loss, arx_sum(bound)


@njit_no_refcount
def record_classes(g, r, n, size, codes, fields, outlier, lattice, cfg, terms, share, off,
                   loss_table, sums, ptr, rec_int, rec_float, bounds):
    """Record ``r``: node ``g`` (``n`` frequency-set entries) judged from its classes -- their
    sizes, codes (``codes`` (C, q), or packed in the fields of ``fields``:
    :func:`~gpuppdp.kernels.segsum._one_node`) and verdicts ``outlier`` -- ``(id, anonymous,
    suppressed, kept classes, smallest kept class, entries, k-anonymous)`` into ``rec_int``
    and ``(loss, lower bound)`` into ``rec_float`` (the loss NaN unless anonymous; ``bounds``
    False: the loss metric's bound too, its sums skipped there), as the batched evaluator
    judges a node (:meth:`~gpuppdp.engine.metrics.Metric.evaluate_needed`).  ``off`` (1, q):
    the loss's share offsets at the node's levels; ``sums`` (2, q) and ``ptr`` (2,) are
    scratch."""
    n_classes = size.shape[0]
    big = np.iinfo(np.int64).max
    suppressed, small, kept, kept_sq, all_sq = 0, 0, 0, 0, 0
    smallest = big
    for c in range(n_classes):
        sz = size[c]
        if outlier[c]:
            suppressed += sz
        else:
            kept += 1
            kept_sq += sz * sz
            smallest = min(smallest, sz)
        if sz < cfg[MIN_SIZE]:
            small += sz
        all_sq += sz * sz
    anonymous = suppressed <= cfg[MAX_SUPPRESSED]
    loss = bound = np.nan
    if cfg[METRIC] == 0:
        if anonymous or bounds:
            if terms[G_FACTOR, 0] == 1.0 and terms[S_FACTOR, 0] == 1.0:
                ptr[0], ptr[1] = 0, n_classes
                _one_node(ZERO, size, codes, fields, outlier, ptr, off, share, sums[0:1],
                          sums[1:2], anonymous)
            else:
                node_sums_with_factors(size, codes, fields, outlier, 0, n_classes, off[0],
                                       share, terms[G_FACTOR, 0], terms[S_FACTOR, 0],
                                       sums[0], sums[1])
            loss = _geometric_mean_row(sums, ZERO, loss_table[0], loss_table[1],
                                       terms[WEIGHT])
            bound = _geometric_mean_row(sums, ONE, loss_table[0], loss_table[1],
                                        terms[WEIGHT])
    elif cfg[METRIC] == 1:
        loss = _precision_of(g, lattice, terms, float(suppressed), float(cfg[ROWS]))
        bound = _mean_share_of(g, lattice, terms)
    elif cfg[METRIC] == 5:
        loss = bound = _height_of(g, lattice, terms)
    elif cfg[METRIC] == 6:  # ambiguity: the loss's shares, the domain sizes in loss_table[0]
        loss, bound = node_ambiguity(size, codes, fields, outlier, 0, n_classes, off[0], share,
                                     loss_table[0])
    elif cfg[METRIC] >= ENTROPY:  # the entropy metrics: their value counts in share's place
        loss, bound = _entropy_of(g, lattice, cfg, terms, loss_table, size, codes, fields,
                                  outlier, n_classes, suppressed, anonymous, share)
    elif cfg[METRIC] != DEFERRED:  # (a deferred metric's loss comes after the search)
        loss, bound = _class_metric(cfg, terms, kept, n_classes, kept_sq, all_sq, suppressed)
    rec_int[r, 0] = g
    rec_int[r, 1] = anonymous
    rec_int[r, 2] = suppressed
    rec_int[r, 3] = kept
    rec_int[r, 4] = 0 if smallest == big else smallest
    rec_int[r, 5] = n
    rec_int[r, 6] = small <= cfg[MAX_SUPPRESSED]
    rec_float[r, 0] = loss if anonymous else np.nan
    rec_float[r, 1] = bound
