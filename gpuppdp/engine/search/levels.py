"""The level search: the optimal search in large batches (the GPU's), whole lattice levels
evaluated together, top down with the metric's prior bounds and predictive tagging, or bottom
up."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
from numba import njit

from ...kernels.aot import ahead_of_time
from ..encoding import FrequencySet
from ..evaluate import LatticeOracle, NodeStats
from ..prior_bound import FactorBound, factor_bound
from ..solution_space import first_of_level, next_of_level
from .base import SearchResult, prior_where_unchecked, smallest_loss
from .packed_walk import PackedWalk

__all__ = ["LevelSearch", "greedy_path"]


class LevelSearch:
    """The optimal search in large batches (the GPU's): whole lattice levels, or large slices
    of them, evaluated together (a few launch sequences each on a GPU, instead of Flash's node
    after node); the exhaustive search's optimum and tie-break (smallest loss, then lowest
    height, then smallest id).

    *Top down*, when the metric bounds every node's loss before it is checked
    (:meth:`~.metrics.Metric.prior_bound`: Loss from the marginal counts, Precision from the
    levels alone).  First the greedy path from the bottom to the top, each step to the
    successor of smallest bound, rolled up node after node: its best anonymous node gives the
    best loss so far.  Then the levels from the top down: a node is evaluated only when its
    bound does not exceed the best loss (allowing for rounding) and -- with a privacy model
    monotone in generalization -- no direct successor is known not to be anonymous (then it is
    not anonymous either: Flash's predictive tagging, Kohlmayer et al. 2012).  An optimal node
    has a bound at most the best loss and, being anonymous, is never tagged, so every optimal
    node is evaluated.  Nodes roll up from the highest path node below them, or through
    shared direct predecessors evaluated first (:class:`_Walk`).

    *Bottom up* otherwise (:meth:`LatticeOracle.evaluate_levels`): a node is skipped when one
    of its direct predecessors was skipped or has a checked lower bound at least the best loss
    found so far (the bound holds for a node and all its generalizations), or -- with a metric
    monotone in generalization and no suppression -- when a predecessor is anonymous.
    """

    name = "levels"

    #: the best loss plus this still counts as "at most the best loss": the prior bound and the
    #: checked one add in different orders, and ARX truncates normalized losses to 1e-10
    BOUND_SLACK = 1e-8

    def __init__(self, *, utility_monotonic: bool, privacy_monotonic: bool):
        self.utility_full = utility_monotonic
        self.privacy_full = privacy_monotonic

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        t0 = time.perf_counter()
        evaluator = oracle.evaluator
        bound = evaluator.metric.prior_bound(evaluator.bottom)
        if bound is None:
            stats, ids = self._bottom_up(oracle, progress)
        else:  # checked lower bounds prune nothing here: those of anonymous nodes only
            stats, ids = self._top_down(oracle, bound, progress)
            prior_where_unchecked(stats, bound)
        return smallest_loss(stats, ids, t0, self.name)

    def _top_down(self, oracle: LatticeOracle, bound: Callable, progress: Callable | None):
        lat = oracle.lattice
        top = np.asarray(lat.max_levels, dtype=np.int64)
        strides = np.asarray(lat.strides, dtype=np.int64)
        path = greedy_path(top, bound)
        path_parts, kept_levels, kept_sources = self._walk_path(oracle, path)
        path_stats = NodeStats.concatenate(path_parts)
        walk = _Walk(oracle, strides, kept_levels, kept_sources)
        walk.record(path_stats, path @ strides)
        tagged_map = np.zeros(lat.size, dtype=bool)  # not anonymous by monotonicity
        entries_above = None  # mean frequency-set size of the level above, once evaluated
        # the loss's factors bound the nodes inside the level's pass; another bound after it
        factors = bound.factors if isinstance(bound, FactorBound) else np.empty((0, 0))
        widest = int(lat.level_sizes.max())
        levels_out, ids_out = np.empty((widest, len(top)), np.int64), np.empty(widest, np.int64)
        for h in range(lat.max_height, -1, -1):
            limit = walk.best + self.BOUND_SLACK
            n = _open_nodes(top, h, strides, factors, limit, tagged_map, walk.not_anonymous,
                            walk.done, self.privacy_full and h < lat.max_height, levels_out,
                            ids_out)
            levels, ids = levels_out[:n].copy(), ids_out[:n].copy()
            if not len(factors) and len(ids):
                keep = bound(levels) <= limit
                levels, ids = levels[keep], ids[keep]
            if len(ids):
                entries_above = walk.evaluate_level(levels, ids, entries_above)
            if progress is not None:
                progress(oracle.evaluations, lat.size)
        return walk.results()

    @staticmethod
    def _walk_path(oracle: LatticeOracle, path: np.ndarray):
        """Evaluate the path's nodes: ``(stats parts, kept levels, kept sources)``, the kept
        path nodes' frequency sets (at most ``batch_entries`` entries, the highest first) to
        roll other nodes up from.  In one batch from the bottom when that stays within
        ``batch_entries`` source entries; else node after node, each from the one before."""
        evaluator, zeros = oracle.evaluator, np.zeros(len(path), np.int64)
        if len(path) * int(evaluator.bottom.host_ptr[-1]) <= oracle.batch_entries:
            stats, path_sets = evaluator.evaluate(path, evaluator.bottom, zeros, bounds=False)
            oracle.evaluations += len(path)
            return [stats], path, path_sets
        parts = [oracle.evaluate_from(path[:1], evaluator.bottom, zeros[:1], bounds=False)]
        sources: list[FrequencySet | None] = []
        source = evaluator.bottom
        for levels in path[1:]:
            stats, source = evaluator.evaluate(levels[None, :], source, zeros[:1],
                                               bounds=False)
            parts.append(stats)
            sources.append(source if source.host_ptr[-1] <= oracle.batch_entries else None)
        oracle.evaluations += len(path) - 1
        # path nodes 1 + kept.. are kept; the top (one entry) always is
        kept, total = len(sources), 0
        while kept:
            below = sources[kept - 1]
            if below is None or total + int(below.host_ptr[-1]) > oracle.batch_entries:
                break
            kept -= 1
            total += int(below.host_ptr[-1])
        return (parts, path[1 + kept:], FrequencySet.concatenate(
            evaluator.backend.xp, [s for s in sources[kept:] if s is not None]))  # (none is)

    def _bottom_up(self, oracle: LatticeOracle, progress: Callable | None):
        lat = oracle.lattice
        evaluated = np.zeros(lat.size, dtype=bool)
        lower = np.full(lat.size, np.nan)
        anonymous = np.zeros(lat.size, dtype=bool)
        best = [np.inf]

        def observe(ids, stats):
            evaluated[ids] = True
            lower[ids] = stats.lower_bound
            anonymous[ids] = stats.anonymous
            il = np.where(stats.anonymous, stats.information_loss, np.inf)
            best[0] = min(best[0], float(il.min(initial=np.inf)))

        def choose(ids, levels):
            keep = np.ones(len(ids), dtype=bool)
            for j in range(lat.n_attributes):
                has = levels[:, j] > 0
                pred = np.where(has, ids - lat.strides[j], 0)
                ok = evaluated[pred] & ~(lower[pred] >= best[0])  # a NaN bound prunes nothing
                if self.utility_full:
                    ok &= ~anonymous[pred]
                keep &= ~has | ok
            return keep

        stats = oracle.evaluate_levels(choose, progress, observe,
                                       walk=PackedWalk.of(oracle.evaluator, lat))
        return stats, np.flatnonzero(evaluated)


@njit(cache=True)
def _open_nodes(top, height, strides, factors, limit, tagged_map, not_anonymous, done, tag,
                levels, ids):
    """Write the nodes of ``height`` still to evaluate into ``levels`` and ``ids`` (room for
    the level's every node), in ascending id; returns how many there are.  A node is
    open when it was not evaluated, is not tagged when ``tag`` -- a direct successor tagged or
    evaluated not anonymous (predictive tagging; tagged nodes are marked in ``tagged_map``) --
    and, where ``factors`` has rows, its prior bound (:func:`factor_bound`) is at most
    ``limit``."""
    q = top.shape[0]
    v = np.zeros(q, np.int64)
    n = 0
    more = first_of_level(top, height, v)
    while more:
        node = 0
        for j in range(q):
            node += v[j] * strides[j]
        tagged = False
        if tag:
            for j in range(q):
                if v[j] < top[j] and (tagged_map[node + strides[j]]
                                      or not_anonymous[node + strides[j]]):
                    tagged = True
                    break
        if tagged:
            tagged_map[node] = True
        elif not done[node] and (factors.shape[0] == 0 or factor_bound(factors, v) <= limit):
            for j in range(q):
                levels[n, j] = v[j]
            ids[n] = node
            n += 1
        more = next_of_level(top, v)
    return n


ahead_of_time(_open_nodes, [
    "int64(int64[::1], int64, int64[::1], float64[:, ::1], float64, boolean[::1], boolean[::1], "
    "boolean[::1], boolean, int64[:, ::1], int64[::1])"])


@njit(cache=True)
def _highest_below(kept, levels):
    """Per row of ``levels``: the last row of ``kept`` (the kept path nodes, bottom up) that
    it generalizes (every level at least the kept node's), or -1."""
    m, q = levels.shape
    out = np.full(m, -1, dtype=np.int64)
    for i in range(m):
        for t in range(kept.shape[0] - 1, -1, -1):
            below = True
            for j in range(q):
                if kept[t, j] > levels[i, j]:
                    below = False
                    break
            if below:
                out[i] = t
                break
    return out


ahead_of_time(_highest_below, ["int64[::1](int64[:, ::1], int64[:, ::1])"])


@njit(cache=True)
def _shared_predecessors(levels, ids, strides, counts):
    """Per node (row of ``levels``, id in ``ids``) the direct predecessor that the most
    nodes of ``levels`` share (ties: the lowest attribute; -1 and the bottom's levels less one
    for a node without predecessor): ``(ids, levels)``.  ``counts`` (zeros, one per lattice
    node) counts the sharing nodes and is left zeroed."""
    m, q = levels.shape
    for i in range(m):
        for j in range(q):
            if levels[i, j] > 0:
                counts[ids[i] - strides[j]] += 1
    pred_ids = np.empty(m, np.int64)
    pred_levels = levels.copy()
    for i in range(m):
        most, at = -1, 0
        for j in range(q):
            if levels[i, j] > 0 and counts[ids[i] - strides[j]] > most:
                most, at = counts[ids[i] - strides[j]], j
        pred_ids[i] = ids[i] - strides[at] if most >= 0 else -1
        pred_levels[i, at] -= 1
    for i in range(m):
        for j in range(q):
            if levels[i, j] > 0:
                counts[ids[i] - strides[j]] -= 1
    return pred_ids, pred_levels


ahead_of_time(_shared_predecessors, [
    "Tuple((int64[::1], int64[:, ::1]))(int64[:, ::1], int64[::1], int64[::1], int32[::1])"])


class _Walk:
    """The evaluated nodes of a top-down level search, and how a level's nodes are rolled up.

    A node rolls up from the highest kept path node below it, or from the bottom.  When a
    level's nodes share direct predecessors (at least :attr:`SHARING` nodes per predecessor)
    and the level above shrank well below those sources (:attr:`SHRINK`), the shared
    predecessors are evaluated first and the level rolls up from them: the predecessors'
    sets are far smaller than the path's, and the predecessors count as evaluated nodes of
    the level below (their results feed its tagging and are not evaluated again).
    Evaluated and not-anonymous nodes are bitmaps by node id (with the search's tag map,
    3 bytes per lattice node: 30 MB at the 10^7 nodes above which the levels search hands
    over to a heuristic).
    """

    SHARING = 1.5     # nodes of a level per shared predecessor, at least
    SHRINK = 3.0      # source entries per entry of the level above, at least
    MIN_NODES = 32    # fewer nodes than this roll up from the path directly

    def __init__(self, oracle, strides, kept_levels, kept_sources):
        self.oracle, self.strides = oracle, strides
        self.kept_levels, self.kept_sources = kept_levels, kept_sources
        self.parts, self.part_ids = [], []
        size = oracle.lattice.size
        self.done = np.zeros(size, dtype=bool)            # by node id: evaluated
        self.not_anonymous = np.zeros(size, dtype=bool)   # evaluated, not anonymous
        self.best = np.inf
        self._sharing: np.ndarray | None = None

    def record(self, stats: NodeStats, ids: np.ndarray) -> None:
        """Keep the results of nodes ``ids`` (those evaluated before are kept once)."""
        new = ~self.done[ids]
        stats, ids = stats.take(np.flatnonzero(new)), ids[new]
        self.parts.append(stats)
        self.part_ids.append(ids)
        self.done[ids] = True
        self.not_anonymous[ids[~stats.anonymous]] = True
        il = np.where(stats.anonymous, stats.information_loss, np.inf)
        self.best = min(self.best, float(il.min(initial=np.inf)))

    def results(self) -> tuple[NodeStats, np.ndarray]:
        """Every evaluated node's results, in id order, and the ids."""
        ids = np.concatenate(self.part_ids)
        order = np.argsort(ids)
        return NodeStats.concatenate(self.parts).take(order), ids[order]

    def _sources(self, levels: np.ndarray):
        """``[(rows, source, index)]``: which rows of ``levels`` roll up from which set."""
        index = _highest_below(self.kept_levels, levels)
        from_path = index >= 0
        return [(np.flatnonzero(use), source, idx) for use, source, idx in (
            (~from_path, self.oracle.evaluator.bottom, np.zeros(len(levels), np.int64)),
            (from_path, self.kept_sources, index)) if use.any()]

    def evaluate_level(self, levels, ids, entries_above: float | None) -> float:
        """Evaluate one level's nodes ``levels`` (ids ``ids``), through shared predecessors
        when that pays (see the class), and record them; returns their mean set size."""
        groups = self._sources(levels)
        if len(levels) >= self.MIN_NODES and entries_above is not None:
            source_entries = np.mean(np.concatenate([
                np.diff(source.host_ptr)[idx[rows]] for rows, source, idx in groups]))
            if source_entries >= self.SHRINK * entries_above:
                pred_ids, pred_levels = self._shared_predecessors(levels, ids)
                distinct, first, inverse = np.unique(pred_ids, return_index=True,
                                                     return_inverse=True)
                if len(distinct) * self.SHARING <= len(levels):
                    return self._through_predecessors(levels, ids, distinct,
                                                      pred_levels[first], inverse)
        entries = []
        for rows, source, idx in groups:
            stats = self.oracle.evaluate_from(levels[rows], source, idx[rows], bounds=False)
            self.record(stats, ids[rows])
            entries.append(stats.entries)
        return float(np.mean(np.concatenate(entries)))

    def _shared_predecessors(self, levels, ids):
        """Per node its direct predecessor shared by the most nodes of ``levels`` (ties: the
        first attribute): ``(ids, levels)``."""
        if self._sharing is None:  # a count per lattice node, left zeroed by each call
            self._sharing = np.zeros(self.oracle.lattice.size, dtype=np.int32)
        return _shared_predecessors(levels, ids, self.strides, self._sharing)

    def _through_predecessors(self, levels, ids, pred_ids, pred_levels, inverse) -> float:
        """Evaluate the predecessors in batches from the path or the bottom, and each batch's
        nodes from its predecessors' frequency sets; returns the nodes' mean set size."""
        oracle, entries = self.oracle, []
        for rows, source, idx in self._sources(pred_levels):
            for part, stats, sets in oracle.batches_from(pred_levels[rows], source, idx[rows],
                                                         bounds=False):
                batch = rows[part]
                self.record(stats, pred_ids[batch])
                local = np.full(len(pred_ids), -1, dtype=np.int64)
                local[batch] = np.arange(len(batch))
                nodes = np.flatnonzero(local[inverse] >= 0)
                stats = oracle.evaluate_from(levels[nodes], sets, local[inverse[nodes]],
                                             bounds=False)
                self.record(stats, ids[nodes])
                entries.append(stats.entries)
        return float(np.mean(np.concatenate(entries)))


def greedy_path(top: np.ndarray, bound: Callable) -> np.ndarray:
    """``(height + 1, q)`` level vectors from the bottom to ``top``, each step raising the
    attribute whose successor has the smallest ``bound`` (the first such attribute on ties)."""
    node = np.zeros(len(top), dtype=np.int64)
    path = [node]
    step = np.eye(len(top), dtype=np.int64)
    while (node < top).any():
        successors = node[None, :] + step[node < top]
        node = successors[int(np.argmin(bound(successors)))]
        path.append(node)
    return np.array(path)
