"""Samarati's k-minimal generalizations and preference policies (Samarati 2001; Sweeney 2002).

A node of the generalization lattice is *k-minimal* when it satisfies the privacy models
within the suppression limit (``MaxSup``) and no more specific node does: none of its
immediate predecessors (one attribute one level lower) is anonymous.  With models that are
monotonic under generalization and suppression (k-anonymity: generalizing merges classes, so
fewer records fall below k), the anonymous nodes form an up-set and these are exactly its
minimal elements.

* :class:`SamaratiSearch` (``search="samarati"``) with ``prefer="height"`` is Samarati's
  binary search on the lattice height: a height is feasible when one of its nodes is
  anonymous, which is monotone in the height for monotonic models, so the lowest feasible
  height is found evaluating about ``log2(height)`` whole levels, each as one batch; the
  solution is one of that height's anonymous nodes (they are all k-minimal).  Non-monotonic
  models, and the other preferences, evaluate the whole lattice (in batches) instead.
* The preference policies choose among the k-minimal nodes: ``height`` -- minimum absolute
  distance (sum of levels); ``precision`` -- minimum relative distance (sum of level /
  height of each attribute, i.e. maximum Prec, Sweeney 2002); ``classes`` -- maximum
  distribution (most released equivalence classes); ``suppression`` -- fewest suppressed
  records.  Ties go to the lower information loss (the run's metric), then to the smaller
  node id.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ...errors import InputError
from ..evaluate import LatticeOracle, NodeStats
from .base import SearchResult
from .packed_walk import PackedWalk

__all__ = ["PREFERENCES", "SamaratiSearch", "minimal_nodes", "preference_order"]

PREFERENCES = ("height", "precision", "classes", "suppression")


def minimal_nodes(lattice, anonymous: np.ndarray) -> np.ndarray:
    """Ids of the anonymous nodes none of whose immediate predecessors is anonymous
    (``anonymous``: one flag per node id of ``lattice``)."""
    ids = np.arange(lattice.size, dtype=np.int64)
    levels = lattice.levels_of(ids)
    minimal = anonymous.copy()
    for j, stride in enumerate(lattice.strides):  # one level lower in attribute j: id - stride
        has = levels[:, j] > 0
        minimal[has] &= ~anonymous[ids[has] - stride]
    return np.flatnonzero(minimal)


def preference_order(stats: NodeStats, heights: np.ndarray, prefer: str) -> np.ndarray:
    """Positions of ``stats`` best first under ``prefer`` (see the module docstring)."""
    if prefer not in PREFERENCES:
        raise InputError(f"prefer must be one of {PREFERENCES}, got {prefer!r}")
    loss = np.where(np.isnan(stats.information_loss), np.inf, stats.information_loss)
    key = {"height": stats.height.astype(np.float64),
           "precision": (stats.levels / np.maximum(heights, 1)).sum(axis=1),
           "classes": -stats.classes.astype(np.float64),
           "suppression": stats.suppressed.astype(np.float64)}[prefer]
    return np.lexsort((np.arange(len(loss)), loss, key))


class SamaratiSearch:
    """Samarati's search for a k-minimal generalization, chosen by ``prefer``."""

    name = "samarati"

    def __init__(self, *, monotonic: bool, prefer: str = "height"):
        if prefer not in PREFERENCES:
            raise InputError(f"prefer must be one of {PREFERENCES}, got {prefer!r}")
        self.monotonic = monotonic
        self.prefer = prefer

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        t0 = time.perf_counter()
        lattice = oracle.lattice
        heights = lattice.max_levels
        if self.monotonic and self.prefer == "height":
            candidates, probed = self._binary(oracle, progress)
            stats = _evaluated(oracle, candidates)
            details: dict[str, Any] = {"levels_probed": probed}
        else:
            everything = oracle.evaluate_all(progress, walk=PackedWalk.of(oracle.evaluator,
                                                                          lattice))
            candidates = minimal_nodes(lattice, everything.anonymous.astype(bool))
            stats = _select(everything, candidates)
            details = {"k_minimal": len(candidates), "all_stats": everything}
        best = None
        if len(candidates):
            best = int(preference_order(stats, heights, self.prefer)[0])
        details.update(prefer=self.prefer, monotonic=self.monotonic)
        return SearchResult(None if best is None else int(candidates[best]),
                            None if best is None else stats.row(best),
                            oracle.evaluations or lattice.size, time.perf_counter() - t0,
                            self.name, details)

    def _binary(self, oracle: LatticeOracle, progress) -> tuple[np.ndarray, list[int]]:
        """The anonymous nodes of the lowest height that has one, by binary search on the
        height (each probed height evaluated as one batch), and the heights probed."""
        lattice = oracle.lattice
        ids = np.arange(lattice.size, dtype=np.int64)
        height = lattice.levels_of(ids).sum(axis=1)
        probed: list[int] = []

        def anonymous_at(h: int) -> np.ndarray:
            nodes = ids[height == h]
            oracle.prefetch(nodes.tolist())
            if h not in probed:
                probed.append(h)
            if progress is not None:
                progress(len(probed), int(np.ceil(np.log2(lattice.max_height + 2))) + 1)
            return nodes[_evaluated(oracle, nodes).anonymous.astype(bool)]

        lo, hi = 0, int(lattice.max_height)
        if not len(anonymous_at(hi)):
            return np.zeros(0, dtype=np.int64), probed
        while lo < hi:
            mid = (lo + hi) // 2
            if len(anonymous_at(mid)):
                hi = mid
            else:
                lo = mid + 1
        return anonymous_at(lo), probed


def _select(stats: NodeStats, at: np.ndarray) -> NodeStats:
    fields: dict[str, Any] = {name: (None if getattr(stats, name) is None
                                     else getattr(stats, name)[at]) for name in _FIELDS}
    return NodeStats(**fields)


def _evaluated(oracle: LatticeOracle, nodes: np.ndarray) -> NodeStats:
    """The results of the evaluated ``nodes``, in their order."""
    stats = oracle.evaluated()                           # every evaluated node, by id
    return _select(stats, np.searchsorted(stats.levels @ oracle.lattice.strides, nodes))


_FIELDS = tuple(NodeStats.__dataclass_fields__)
