"""The loss's prior bound (:meth:`~gpuppdp.engine.metrics.Loss.prior_bound`): per node a
product of per-attribute factors, one table of ``q x (height + 1)`` for the whole lattice
(ARX's geometric mean of the attributes' normalized sums, every record charged its
generalized value's share)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels import groupby  # a module: the extension may load while groupby is imported
from ..kernels.aot import CODE_TYPES, ahead_of_time

__all__ = ["FactorBound", "factor_bound", "prior_sums"]


@njit(cache=True)
def factor_bound(factors, levels):
    """The loss's prior bound of the node ``levels``: the product of its attributes'
    ``factors[j, level]`` less one, multiplied in attribute order as ARX aggregates."""
    g = 1.0
    for j in range(levels.shape[0]):
        g *= factors[j, levels[j]]
    return g - 1.0


@njit(cache=True)
def _factor_bounds(factors, levels):
    """:func:`factor_bound` of every row of ``levels``."""
    out = np.empty(levels.shape[0])
    for i in range(levels.shape[0]):
        out[i] = factor_bound(factors, levels[i])
    return out


ahead_of_time(_factor_bounds, ["float64[::1](float64[:, ::1], int64[:, ::1])"])


@njit(cache=True)
def prior_sums(counts, offsets, maps, map_off, heights, share, share_off):
    """(q, H + 1): per attribute ``j`` and level ``L`` the records' shares summed over the
    leaves present (``counts[offsets[j]:offsets[j+1]]`` records per leaf): the loss's
    per-attribute sum of a node that suppresses nothing, from the marginal counts alone."""
    out = np.zeros(share_off.shape)
    present = np.empty(max(np.diff(offsets).max(), 1), np.int64)
    for j in range(heights.shape[0]):
        m = groupby.present_codes(counts, offsets, j, present)
        for level in range(heights[j] + 1):
            off, s_off = map_off[j, 0, level], share_off[j, level]
            total = 0.0
            for i in range(m):
                leaf = present[i]
                total += float(counts[offsets[j] + leaf]) * share[s_off + maps[off + leaf]]
            out[j, level] = total
    return out


ahead_of_time(prior_sums, [f"float64[:, ::1](int64[::1], int64[::1], {t}[::1], "
                           "int64[:, :, ::1], int64[::1], float64[::1], int64[:, ::1])"
                           for t in CODE_TYPES])


class FactorBound:
    """``levels (B, q) -> bounds (B,)``: the loss's prior bound (:meth:`.Loss.prior_bound`),
    a product of per-attribute ``factors`` (q, height + 1); a search may read the table."""

    def __init__(self, factors: np.ndarray):
        self.factors = factors

    def __call__(self, levels) -> np.ndarray:
        return _factor_bounds(self.factors, np.ascontiguousarray(np.atleast_2d(levels),
                                                                 dtype=np.int64))
