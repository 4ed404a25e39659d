"""Lattice searches for the optimal full-domain generalization.

The searches only walk the lattice: they ask a
:class:`~gpuppdp.engine.evaluate.LatticeOracle` about nodes and never touch data arrays.

* :class:`ExhaustiveSearch` evaluates every node (level by level, in large batches) and picks
  the anonymous node of smallest information loss; ties go to the lower generalization height,
  then to the smaller node id (ARX's id order: attribute 0 varies fastest).
* :class:`LevelSearch` evaluates the lattice level by level in large batches (top down from a
  greedy path's best loss, where the metric bounds nodes before they are checked), skipping
  what the bounds and monotonicity rule out; the exhaustive search's optimum and tie-break
  (the default on a GPU, at census scale and above ARX's lattice limit: :func:`auto_search`);
* :class:`FlashSearch` is ARX's Flash algorithm (Kohlmayer, Prasser, Eckert, Kemper & Kuhn
  2012), emulated step by step as ARX 3.9.2 runs it -- the same traversal order, predictive
  tagging with monotonicity, bound-based pruning and ``trackOptimum`` rule -- so that when
  several nodes tie it returns the very node ARX returns, and checks the same nodes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import flash_compiled
from ..encoding import FrequencySet
from ..evaluate import LatticeOracle, NodeStats
from ..solution_space import (ANON, CHECKED, INSUFF, KANON, NOTANON, NOTKANON, SUCC_PRUNED,
                              VISITED, Properties, level_nodes)

__all__ = ["SearchResult", "ExhaustiveSearch", "LevelSearch", "FlashSearch", "make_search",
           "SEARCHES"]


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


class ExhaustiveSearch:
    """Evaluate all nodes in batches; tie-break: (loss, height, node id).  It prunes nothing,
    so it checks the metric's lower bound of anonymous nodes only; a node that is not anonymous
    gets the metric's prior bound where the metric has one (:meth:`.Metric.prior_bound`: for
    the loss, the same sums added in another order), else NaN."""

    name = "exhaustive"

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        t0 = time.perf_counter()
        stats = oracle.evaluate_all(progress, bounds=False)
        evaluator = oracle.evaluator
        _prior_where_unchecked(stats, evaluator.metric.prior_bound(evaluator.bottom))
        return _smallest_loss(stats, np.arange(len(stats)), t0, self.name)


def _prior_where_unchecked(stats, prior: Callable | None) -> None:
    """Give the nodes whose lower bound was not checked (NaN: not anonymous, evaluated with
    ``bounds=False``) the metric's prior bound, where it has one."""
    unchecked = np.isnan(stats.lower_bound)
    if prior is not None and unchecked.any():
        stats.lower_bound[unchecked] = prior(stats.levels[unchecked])


def _smallest_loss(stats, ids: np.ndarray, t0: float, name: str) -> SearchResult:
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
            _prior_where_unchecked(stats, bound)
        return _smallest_loss(stats, ids, t0, self.name)

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
        for h in range(lat.max_height, -1, -1):
            levels = level_nodes(top, h)
            ids = levels @ strides
            todo = bound(levels) <= walk.best + self.BOUND_SLACK
            tagged = np.zeros(len(ids), dtype=bool)
            if self.privacy_full and h < lat.max_height:
                for j in range(lat.n_attributes):
                    up = levels[:, j] < top[j]
                    successor = np.where(up, ids + strides[j], 0)
                    tagged |= up & (tagged_map[successor] | walk.not_anonymous[successor])
                tagged_map[ids[tagged]] = True
            todo &= ~tagged & ~walk.done[ids]
            if todo.any():
                entries_above = walk.evaluate_level(levels[todo], ids[todo], entries_above)
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
            stats, sources = evaluator.evaluate(path, evaluator.bottom, zeros, bounds=False)
            oracle.evaluations += len(path)
            return [stats], path, sources
        parts = [oracle.evaluate_from(path[:1], evaluator.bottom, zeros[:1], bounds=False)]
        sources, source = [], evaluator.bottom
        for levels in path[1:]:
            stats, source = evaluator.evaluate(levels[None, :], source, zeros[:1],
                                               bounds=False)
            parts.append(stats)
            sources.append(source if source.host_ptr[-1] <= oracle.batch_entries else None)
        oracle.evaluations += len(path) - 1
        # path nodes 1 + kept.. are kept; the top (one entry) always is
        kept, total = len(sources), 0
        while kept and sources[kept - 1] is not None and \
                total + int(sources[kept - 1].host_ptr[-1]) <= oracle.batch_entries:
            kept -= 1
            total += int(sources[kept].host_ptr[-1])
        return (parts, path[1 + kept:],
                FrequencySet.concatenate(evaluator.backend.xp, sources[kept:]))

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

        stats = oracle.evaluate_levels(choose, progress, observe)
        return stats, np.flatnonzero(evaluated)


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
        kept = self.kept_levels
        below = np.all(kept[None, :, :] <= levels[:, None, :], axis=2)  # (B, kept)
        index = len(kept) - 1 - np.argmax(below[:, ::-1], axis=1)
        from_path = below.any(axis=1)
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
        candidates = np.where(levels > 0, ids[:, None] - self.strides[None, :], -1)
        values, counts = np.unique(candidates[candidates >= 0], return_counts=True)
        at = np.searchsorted(values, candidates).clip(0, len(values) - 1)
        shared = np.where((candidates >= 0) & (values[at] == candidates), counts[at], -1)
        j = np.argmax(shared, axis=1)
        rows = np.arange(len(levels))
        pred_levels = levels.copy()
        pred_levels[rows, j] -= 1
        return candidates[rows, j], pred_levels

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


FULL, PARTIAL, NONE = "full", "partial", "none"


@dataclass
class _Phase:
    prop: int                     # the property the binary phase searches for
    skip: int                     # a node carrying any of these bits is skipped
    check: int                    # a node carrying none of these bits is checked
    # ``tag(search, g)``: a plain function, so that no reference cycle keeps a finished
    # search (and its oracle's frequency sets) alive until the garbage collector runs
    tag: Callable[["FlashSearch", int], None] | None = None


class FlashSearch:
    """ARX-compatible Flash (Kohlmayer et al. 2012) on a sparse solution space
    (:mod:`.solution_space`): nothing the size of the lattice is allocated; the levels are
    enumerated one at a time and the strategy key is computed per node on demand.  Where
    :func:`.flash_compiled.supported` holds, the same search runs in one compiled call
    instead (:mod:`.flash_compiled`): the same nodes checked, the same optimum.

    Parameters
    ----------
    privacy_monotonicity : {"full", "partial", "none"}
    utility_monotonic : bool
    has_min_class_size : bool
        Whether some model sets a minimal class size (k, l), i.e. the k-anonymity sub-flag exists.
    data_independent_bound : callable or None
        ``levels -> bound`` usable before a check (ARX: only Precision has one).
    """

    name = "flash"

    def __init__(self, *, privacy_monotonicity: str, utility_monotonic: bool,
                 has_min_class_size: bool, data_independent_bound=None):
        self.privacy = privacy_monotonicity
        self.utility_full = utility_monotonic
        self.has_k = has_min_class_size
        self.bound = data_independent_bound

    # -- set-up ------------------------------------------------------------------------
    def _setup(self, oracle: LatticeOracle):
        lat = oracle.lattice
        self.oracle = oracle
        self.lattice = lat
        self.props = Properties(lat.strides, lat.radix)
        self.has = self.props.has
        self.il: dict[int, float] = {}
        self.lb: dict[int, float] = {}     # of checked nodes
        self.bounds: dict[int, float] = {}  # data-independent bounds computed so far
        self.anonymous: dict[int, bool] = {}
        self.checked = 0
        self.opt: int | None = None
        self.candidates: list[int] = []
        self.keys: dict[int, tuple] = {}
        # per attribute: stride, radix, g_i / max_i and d_i[g_i] / d_i[0] per level g_i
        self.terms = [(stride, radix, [level / float(top) if top else 0.0
                                       for level in range(radix)],
                       [float(d[level]) / float(d[0]) for level in range(radix)])
                      for (stride, radix, top), d in
                      zip(lat._digits, oracle.evaluator.encoded.distinct_per_level())]
        self.pruning = not self.utility_full
        self.predictive_anon = self.privacy == FULL
        if self.privacy == FULL and self.utility_full:
            self.binary = _Phase(ANON, ANON | NOTANON, ANON | NOTANON, _tag_pruned)
            self.linear = None
        elif self.privacy in (FULL, PARTIAL):
            prop, notprop = (ANON, NOTANON) if self.privacy == FULL else (KANON, NOTKANON)
            self.binary = _Phase(prop, prop | notprop, prop | notprop)
            self.linear = _Phase(0, notprop | VISITED, CHECKED | notprop, _tag_visited)
        else:
            self.binary = None
            self.linear = _Phase(0, ANON | NOTANON, ANON | NOTANON)

    def _levels(self, g: int) -> list[int]:
        return [g // stride % radix for stride, radix, _, _ in self.terms]

    def key(self, g: int) -> tuple:
        """ARX's ``FLASHStrategy`` key ``(level/M, P, 1 - Dm)`` of node ``g``, computed with
        ARX's floating-point operations in ARX's order: ``P = (sum_i g_i / max_i) / n``,
        ``Dm = (sum_i d_i[g_i] / d_i[0]) / n`` with ``d_i[L]`` the distinct labels of attribute
        ``i`` at level ``L`` among the data's values (the terms are tabulated in ``terms``)."""
        k = self.keys.get(g)
        if k is None:
            height, prec, dd = 0, 0.0, 0.0
            for stride, radix, p, d in self.terms:
                level = g // stride % radix
                height += level
                prec = prec + p[level]
                dd = dd + d[level]
            n, total = len(self.terms), float(self.lattice.max_height)
            k = self.keys[g] = (height / total if total else 0.0, prec / n, 1.0 - dd / n)
        return k

    # -- properties ----------------------------------------------------------------------
    def _set(self, g: int, prop: int, up: bool = False, down: bool = False) -> None:
        self.props.set(g, prop, up=up, down=down)

    # -- ARX procedures ----------------------------------------------------------------------
    def _sorted(self, nodes: list[int]) -> list[int]:
        return sorted(nodes, key=self.key)  # Python's sort is stable, like Java's

    def _lower_bound(self, g: int) -> float | None:
        lb = self.lb.get(g)
        if lb is None and self.bound is not None:
            lb = self.bounds.get(g)
            if lb is None:
                lb = self.bounds[g] = float(self.bound(np.array([self._levels(g)]))[0])
        return lb

    def _skip(self, trigger: int, g: int) -> bool:
        if not self.pruning or self.opt is None:
            return self.has(g, trigger)
        if self.has(g, trigger | INSUFF):
            return True
        lb = self._lower_bound(g)
        if lb is not None and self.il[self.opt] <= lb:
            self._set(g, INSUFF | SUCC_PRUNED, up=True)
            return True
        return False

    def _unskipped(self, trigger: int, levels: np.ndarray) -> list[int]:
        """``[g for g in nodes if not self._skip(trigger, g)]`` for one level's nodes (level
        vectors ``levels``, ascending id), with the property tests and bounds vectorized."""
        ids = levels @ self.lattice.strides
        skip = self.props.has_many(ids, levels, trigger)
        if not self.pruning or self.opt is None:
            return ids[~skip].tolist()
        skip |= self.props.has_many(ids, levels, INSUFF)
        rest, best = ids[~skip].tolist(), self.il[self.opt]
        bounds = (self.bound(levels[~skip]).tolist() if self.bound is not None
                  else [None] * len(rest))
        out = []
        for g, bound in zip(rest, bounds):
            lb = self.lb.get(g)
            lb = bound if lb is None else lb
            if lb is not None and best <= lb:
                self._set(g, INSUFF | SUCC_PRUNED, up=True)
            else:
                out.append(g)
        return out

    def _check(self, g: int) -> None:
        row = self.oracle.evaluate(g)
        self.checked += 1
        self._set(g, CHECKED)
        anonymous = bool(row["anonymous"])
        self.anonymous[g] = anonymous
        if anonymous:
            self._set(g, ANON, up=self.predictive_anon)
            self.il[g] = row["information_loss"]
        else:
            self._set(g, NOTANON, down=self.predictive_anon)
        if self.has_k:
            if row["k_anonymous"]:
                self._set(g, KANON, up=True)
            else:
                self._set(g, NOTKANON, down=True)
        self.lb[g] = row["lower_bound"]

    def _track(self, g: int) -> None:
        if not self.anonymous.get(g):
            return
        if self.opt is None:
            self.opt = g
            return
        il, best = self.il[g], self.il[self.opt]
        if il < best or (il == best and sum(self._levels(g)) < sum(self._levels(self.opt))):
            self.opt = g

    def _prune(self, g: int) -> None:
        if not self.pruning or g not in self.lb:
            return
        if g != self.opt and self.has(g, SUCC_PRUNED):
            return
        if self.opt is None:
            self.candidates.append(g)
            return
        best = self.il[self.opt]
        if g != self.opt:
            if best <= self.lb[g]:
                self._set(g, INSUFF | SUCC_PRUNED, up=True)
            else:
                self.candidates.append(g)
            return
        kept = []
        for c in self.candidates:
            if self.has(c, SUCC_PRUNED):
                continue
            if best <= self.lb[c]:
                self._set(c, INSUFF | SUCC_PRUNED, up=True)
                continue
            kept.append(c)
        if not self.has(g, SUCC_PRUNED):
            kept.append(g)
        self.candidates = kept

    def _check_and_tag(self, g: int, phase: _Phase) -> None:
        if not self.has(g, phase.check):
            self._check(g)
        self._track(g)
        if phase.tag is not None:
            phase.tag(self, g)
        self._prune(g)

    def _successors(self, g: int) -> list[int]:
        return self._sorted(self.lattice.successors(g))

    def _binary(self, g: int) -> None:
        queue = _JavaPriorityQueue(self.key)
        queue.add(g)
        while queue:
            h = queue.poll()
            if self._skip(self.binary.skip, h):
                continue
            found = self._check_path(self._path(h), queue)
            if found is not None and self.linear is not None:
                self._linear(found)

    def _path(self, h: int) -> list[int]:
        chain = [h]
        while True:
            nxt = next((s for s in self._successors(chain[-1])
                        if not self._skip(self.binary.skip, s)), None)
            if nxt is None:
                return chain
            chain.append(nxt)

    def _check_path(self, chain: list[int], queue) -> int | None:
        lo, hi, last = 0, len(chain) - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            x = chain[mid]
            if self._skip(self.binary.skip, x):
                hi = mid - 1
                continue
            self._check_and_tag(x, self.binary)
            if not self.has(x, self.binary.prop):
                for s in self._successors(x):
                    if not self._skip(self.binary.skip, s):
                        queue.add(s)
                lo = mid + 1
            else:
                last = x
                hi = mid - 1
        return last

    def _linear(self, g: int) -> None:
        if not self._skip(self.linear.skip, g):
            self._check_and_tag(g, self.linear)
            # the successors will most likely be checked next: evaluate them as one batch
            self.oracle.prefetch([s for s in self._successors(g)
                                  if not self._skip(self.linear.skip, s)
                                  and not self.has(s, self.linear.check)])
            for s in self._successors(g):
                if not self._skip(self.linear.skip, s):
                    self._linear(s)
        self._set(g, SUCC_PRUNED, up=True)

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        t0 = time.perf_counter()
        self._setup(oracle)
        lat = self.lattice
        if flash_compiled.supported(oracle.evaluator, lat.size):
            return self._run_compiled(oracle, progress, t0)
        outer = self.binary or self.linear
        done = 0
        for height in range(lat.max_height + 1):
            levels = level_nodes(lat.max_levels, height)
            for g in self._sorted(self._unskipped(outer.skip, levels)):
                if self.binary is not None:
                    self._binary(g)
                else:
                    self._linear(g)
            done += len(levels)
            if progress is not None:
                progress(done, lat.size)
        if self.utility_full:  # ARX's computeUtilityForMonotonicMetrics: cannot change the optimum
            for g in (0, lat.top):
                if not self.has(g, CHECKED):
                    self._check(g)
        seconds = time.perf_counter() - t0
        opt = self.opt
        return SearchResult(opt, None if opt is None else oracle.evaluate(opt), self.checked,
                            seconds, self.name,
                            {"privacy_monotonicity": self.privacy,
                             "utility_monotonic": self.utility_full,
                             "evaluations": oracle.evaluations})


    def _run_compiled(self, oracle: LatticeOracle, progress: Callable | None,
                      t0: float) -> SearchResult:
        """The same search in one compiled call (:mod:`.flash_compiled`)."""
        opt, checked, stats = flash_compiled.run(self, oracle)
        if progress is not None:
            progress(self.lattice.size, self.lattice.size)
        row = None
        if opt is not None:
            row = stats.row(int(np.searchsorted(stats.levels @ self.lattice.strides, opt)))
        self.opt, self.checked = opt, checked
        return SearchResult(opt, row, checked, time.perf_counter() - t0, self.name,
                            {"privacy_monotonicity": self.privacy,
                             "utility_monotonic": self.utility_full,
                             "evaluations": oracle.evaluations, "compiled": True,
                             "class_limit": flash_compiled.class_limit(oracle.evaluator),
                             "stopped_early": int((stats.entries < 0).sum()),
                             "all_stats": stats})


def search_kernels(compiled_flash: bool) -> tuple:
    """The compiled functions a search calls from Python, for :func:`gpuppdp.kernels.warm_up`
    to load from Numba's cache while the input is read (in a fresh process the search would
    spend that time: about 15 ms for the compiled Flash on Adult, 0.15 s for the exhaustive
    search's kernels): the compiled Flash's (``compiled_flash``: with the loss's prior-bound
    factors, 2-3 ms loaded in the search), else the batched evaluator's roll-up, node
    statistics and loss sums."""
    if compiled_flash:
        from ..metrics import _factor_table
        from ..solution_space import _fill_level

        return flash_compiled._flash, _fill_level, _factor_table
    from ...kernels import grouping, segsum
    from ..metrics import _normalize_and_aggregate

    return (grouping._node_paths, grouping._rollup_chunk, segsum._node_stats_run,
            segsum._loss_sums_run, _normalize_and_aggregate)


def _tag_pruned(search: FlashSearch, g: int) -> None:
    if search.has(g, ANON):
        search._set(g, SUCC_PRUNED, up=True)


def _tag_visited(search: FlashSearch, g: int) -> None:
    search._set(g, VISITED)


class _JavaPriorityQueue:
    """``java.util.PriorityQueue`` semantics (binary heap, sift rules of OpenJDK), so that
    equal keys leave the queue in the same order as in ARX."""

    def __init__(self, key):
        self.key = key
        self.heap: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.heap)

    def _cmp(self, a: int, b: int) -> int:
        ka, kb = self.key(a), self.key(b)
        return -1 if ka < kb else (1 if ka > kb else 0)

    def add(self, x: int) -> None:
        heap = self.heap
        heap.append(x)
        k = len(heap) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if self._cmp(x, heap[parent]) >= 0:
                break
            heap[k] = heap[parent]
            k = parent
        heap[k] = x

    def poll(self) -> int:
        heap = self.heap
        result = heap[0]
        x = heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                right = child + 1
                if right < n and self._cmp(heap[child], heap[right]) > 0:
                    child = right
                if self._cmp(x, heap[child]) <= 0:
                    break
                heap[k] = heap[child]
                k = child
            heap[k] = x
        return result


SEARCHES = ("auto", "flash", "exhaustive", "levels", "lightning", "beam", "samarati")


#: ARX's default limit for an optimal search (``ARXConfiguration``'s heuristic search
#: threshold, 100,000 nodes): above it ARX falls back to a heuristic unless told otherwise.
ARX_OPTIMAL_LIMIT = 100_000


#: on the CPU, ``auto`` searches tables of more rows than this with ``levels`` where it walks
#: top down with tagging (census scale: there it checks a fraction of Flash's nodes)
LEVELS_FROM_ROWS = 1 << 20


def auto_search(evaluator, lattice_size: int | None, privacy_monotonic: bool) -> str:
    """The search ``auto`` stands for: ``levels`` on a GPU; on the CPU ``levels`` above ARX's
    limit for an optimal search (:data:`ARX_OPTIMAL_LIMIT`: ARX gives no node to agree with
    there) unless the compiled Flash runs the problem (:func:`.flash_compiled.supported`: as
    fast or faster there, and ARX's node and checked nodes), and, for the loss metric with
    privacy monotone in generalization (the level search then walks top down with tagging),
    on tables of more than :data:`LEVELS_FROM_ROWS` rows; else ``flash``.  The two differ
    only on exact ties, where flash returns ARX's node: with the loss metric on a table that
    large two nodes all but never tie, with precision (a function of the levels and the
    suppressed count) they often do."""
    if evaluator.backend.is_gpu or (
            lattice_size is not None and lattice_size > ARX_OPTIMAL_LIMIT
            and not flash_compiled.supported(evaluator, lattice_size)):
        return "levels"
    census = evaluator.encoded.n_rows > LEVELS_FROM_ROWS
    return "levels" if census and privacy_monotonic and evaluator.metric.name == "loss" \
        else "flash"


def _privacy_monotonicity(evaluator) -> str:
    """Flash's privacy monotonicity of the evaluator's models under its suppression limit:
    ``FULL`` (every model monotone), ``PARTIAL`` (a minimal class size exists) or ``NONE``."""
    limit, models = evaluator.suppression_limit, evaluator.models
    if all(m.monotonic_with_generalization for m in models) and (
            limit == 0 or all(m.monotonic_with_suppression for m in models)):
        return FULL
    return PARTIAL if evaluator.min_class_size is not None else NONE


def make_search(name: str, evaluator, *, lattice_size: int | None = None,
                time_limit: float | None = None, max_evaluations: int | None = None,
                prefer: str = "height"):
    """Build a search for an :class:`~gpuppdp.engine.evaluate.Evaluator`'s models and metric.

    ``lightning`` and ``beam`` are the heuristics of :mod:`.heuristic` (budget: ``time_limit``
    seconds and/or ``max_evaluations`` nodes); ``flash`` or ``levels`` on a lattice of more
    than :data:`~.heuristic.OPTIMAL_SEARCH_LIMIT` nodes becomes
    :data:`~.heuristic.AUTO_HEURISTIC`; ``samarati`` finds a k-minimal node chosen by
    ``prefer`` (:mod:`.samarati`); ``auto``: see :func:`auto_search`."""
    from . import heuristic
    privacy = _privacy_monotonicity(evaluator)
    if name == "auto":
        name = auto_search(evaluator, lattice_size, privacy == FULL)
    if name in ("flash", "levels") and lattice_size is not None and \
            lattice_size > heuristic.OPTIMAL_SEARCH_LIMIT:
        note = (f"lattice of {lattice_size} nodes > OPTIMAL_SEARCH_LIMIT "
                f"({heuristic.OPTIMAL_SEARCH_LIMIT}): heuristic search instead of {name}")
        return heuristic.make_heuristic(heuristic.AUTO_HEURISTIC, evaluator,
                                        time_limit=time_limit, max_evaluations=max_evaluations,
                                        note=note)
    if name in heuristic.HEURISTICS:
        return heuristic.make_heuristic(name, evaluator, time_limit=time_limit,
                                        max_evaluations=max_evaluations)
    if name == "exhaustive":
        return ExhaustiveSearch()
    if name not in ("flash", "samarati", "levels"):
        raise ValueError(f"search must be one of {SEARCHES}, got {name!r}")
    limit, metric = evaluator.suppression_limit, evaluator.metric
    has_k = evaluator.min_class_size is not None
    if name == "samarati":
        from .samarati import SamaratiSearch
        return SamaratiSearch(monotonic=privacy == FULL, prefer=prefer)
    utility = (metric.monotonic_with_generalization if limit == 0
               else metric.monotonic_with_suppression)
    if name == "levels":
        return LevelSearch(utility_monotonic=utility, privacy_monotonic=privacy == FULL)
    return FlashSearch(privacy_monotonicity=privacy, utility_monotonic=utility,
                       has_min_class_size=has_k,
                       data_independent_bound=metric.data_independent_bound)
