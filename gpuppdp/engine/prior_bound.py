"""The loss's prior bound (:meth:`~gpuppdp.engine.metrics.Loss.prior_bound`): per node a
product of per-attribute factors, one table of ``q x (height + 1)`` for the whole lattice
(ARX's geometric mean of the attributes' normalized sums, every record charged its
generalized value's share)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.aot import ahead_of_time

__all__ = ["FactorBound", "factor_bound"]


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


class FactorBound:
    """``levels (B, q) -> bounds (B,)``: the loss's prior bound (:meth:`.Loss.prior_bound`),
    a product of per-attribute ``factors`` (q, height + 1); a search may read the table."""

    def __init__(self, factors: np.ndarray):
        self.factors = factors

    def __call__(self, levels) -> np.ndarray:
        return _factor_bounds(self.factors, np.ascontiguousarray(np.atleast_2d(levels),
                                                                 dtype=np.int64))
