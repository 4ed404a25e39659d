"""What the lattice searches share: their :class:`SearchResult`, Flash's privacy
monotonicity classes and phases, and the choice of the smallest-loss node of evaluated stats.

The searches only walk the lattice: they ask a
:class:`~gpuppdp.engine.evaluate.LatticeOracle` about nodes and never touch data arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["SearchResult", "FULL", "PARTIAL", "NONE", "TAG_NONE", "TAG_PRUNED", "TAG_VISITED",
           "TAG_INSUFFICIENT", "TAG_VISITED_INSUFFICIENT",
           "Phase", "privacy_monotonicity",
           "prior_where_unchecked", "smallest_loss"]


@dataclass
class SearchResult:
    """Outcome of a search: the optimum's id (``None`` if no node is anonymous), its result
    row, how many nodes were evaluated, and the search time in seconds."""

    optimum: int | None
    optimum_stats: dict | None
    nodes_evaluated: int
    seconds: float
    strategy: str
    details: dict = field(default_factory=dict)


FULL, PARTIAL, NONE = "full", "partial", "none"

#: what a Flash phase does to a node after its check: nothing, prune the cone above an
#: anonymous node (``SUCC_PRUNED``), or mark the node ``VISITED``
TAG_NONE, TAG_PRUNED, TAG_VISITED = 0, 1, 2
#: with a utility monotone under suppression but privacy not (ARX's PARTIAL/FULL and NONE/FULL
#: Flash): an anonymous node's generalizations have insufficient utility (``INSUFF`` on its
#: successors, ``SUCC_PRUNED`` on it); the second marks the node ``VISITED`` first
TAG_INSUFFICIENT, TAG_VISITED_INSUFFICIENT = 3, 4


@dataclass
class Phase:
    """A phase of Flash (Kohlmayer et al. 2012): the property the binary phase searches for,
    the bits that make a node skipped, those that spare it a check, and its tag."""

    prop: int                     # the property the binary phase searches for
    skip: int                     # a node carrying any of these bits is skipped
    check: int                    # a node carrying none of these bits is checked
    tag: int = TAG_NONE           # one of the TAG_ constants


def privacy_monotonicity(evaluator) -> str:
    """Flash's privacy monotonicity of the evaluator's models under its suppression limit:
    ``FULL`` (every model monotone), ``PARTIAL`` (a minimal class size exists) or ``NONE``."""
    limit, models = evaluator.suppression_limit, evaluator.models
    if all(m.monotonic_with_generalization for m in models) and (
            limit == 0 or all(m.monotonic_with_suppression for m in models)):
        return FULL
    return PARTIAL if evaluator.min_class_size is not None else NONE


def prior_where_unchecked(stats, prior: Callable | None) -> None:
    """Give the nodes whose lower bound was not checked (NaN: not anonymous, evaluated with
    ``bounds=False``) the metric's prior bound, where it has one."""
    unchecked = np.isnan(stats.lower_bound)
    if prior is not None and unchecked.any():
        stats.lower_bound[unchecked] = prior(stats.levels[unchecked])


def smallest_loss(stats, ids: np.ndarray, t0: float, name: str) -> SearchResult:
    """The result of a search that evaluated nodes ``ids`` (ascending; rows of ``stats``): the
    anonymous node of smallest loss, then lowest height, then smallest id."""
    il = np.where(stats.anonymous, stats.information_loss, np.inf)
    best = None
    if stats.anonymous.any():
        best = int(np.lexsort((ids, stats.height, il))[0])
    return SearchResult(None if best is None else int(ids[best]),
                        None if best is None else stats.row(best), len(ids),
                        time.perf_counter() - t0, name,
                        {"anonymous_nodes": int(stats.anonymous.sum()), "all_stats": stats})
