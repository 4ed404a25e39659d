"""The exhaustive search: every node of the lattice evaluated, in large batches."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ..evaluate import LatticeOracle
from .base import SearchResult, prior_where_unchecked, smallest_loss
from .packed_walk import PackedWalk

__all__ = ["ExhaustiveSearch"]


class ExhaustiveSearch:
    """Evaluate all nodes in batches; tie-break: (loss, height, node id).  It prunes nothing,
    so it checks the metric's lower bound of anonymous nodes only; a node that is not anonymous
    gets the metric's prior bound where the metric has one (:meth:`.Metric.prior_bound`: for
    the loss, the same sums added in another order), else NaN."""

    name = "exhaustive"

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        t0 = time.perf_counter()
        evaluator = oracle.evaluator
        stats = oracle.evaluate_all(progress, bounds=False,
                                    walk=PackedWalk.of(evaluator, oracle.lattice))
        prior_where_unchecked(stats, evaluator.metric.prior_bound(evaluator.bottom))
        return smallest_loss(stats, np.arange(len(stats)), t0, self.name)
