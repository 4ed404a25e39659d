"""ARX's Flash algorithm (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012), emulated step by
step as ARX 3.9.2 runs it -- the same traversal order, predictive tagging with monotonicity,
bound-based pruning and ``trackOptimum`` rule -- so that when several nodes tie it returns the
very node ARX returns, and checks the same nodes.  Where the compiled Flash runs the problem
(:func:`.flash_compiled.compiled_flash_supports`) the same search runs in one compiled call."""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..evaluate import LatticeOracle
from ..solution_space import (
    ANON,
    CHECKED,
    INSUFF,
    KANON,
    NOTANON,
    NOTKANON,
    SUCC_PRUNED,
    VISITED,
    Properties,
    level_nodes,
)
from . import flash_compiled
from .base import (
    FULL,
    PARTIAL,
    TAG_INSUFFICIENT,
    TAG_PRUNED,
    TAG_VISITED,
    TAG_VISITED_INSUFFICIENT,
    Phase,
    SearchResult,
)

__all__ = ["FlashSearch", "key_table"]


def key_table(lattice, distinct: np.ndarray) -> np.ndarray:
    """(2, q, largest radix): per attribute ``i`` and level ``L`` the terms of ARX's
    ``FLASHStrategy`` key (:meth:`FlashSearch.key`), ``L / max_i`` (0 where ``max_i`` is 0:
    :attr:`~.lattice.Lattice.relative_levels`) and ``d_i[L] / d_i[0]`` from ``distinct``
    (:meth:`~.EncodedTable.distinct_per_level`), each one float64 division as ARX's; 0 past
    the attribute's height (where ``distinct`` is 0)."""
    levels = lattice.relative_levels
    d = distinct[:, :levels.shape[1]].astype(np.float64)
    out = np.empty((2,) + levels.shape)
    out[0] = levels
    np.divide(d, d[:, :1], out=out[1])
    return out


class FlashSearch:
    """ARX-compatible Flash (Kohlmayer et al. 2012) on a sparse solution space
    (:mod:`.solution_space`): nothing the size of the lattice is allocated; the levels are
    enumerated one at a time and the strategy key is computed per node on demand.  Where
    :func:`.flash_compiled.compiled_flash_supports` holds, the same search runs in one compiled
    call instead (:mod:`.flash_compiled`): the same nodes checked, the same optimum.

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
        self.il: dict[int, float] = {}
        self.lb: dict[int, float] = {}     # of checked nodes
        self.bounds: dict[int, float] = {}  # data-independent bounds computed so far
        self.anonymous: dict[int, bool] = {}
        self.checked = 0
        self.opt: int | None = None
        self.candidates: list[int] = []
        self.keys: dict[int, tuple] = {}
        self.key_table = key_table(lat, oracle.evaluator.encoded.distinct_per_level())
        self.pruning = not (self.privacy == FULL and self.utility_full)
        self.predictive_anon = self.privacy == FULL
        self.binary: Phase | None
        if self.privacy == FULL and self.utility_full:
            self.binary = Phase(ANON, ANON | NOTANON, ANON | NOTANON, TAG_PRUNED)
            self.linear = None
        elif self.privacy == PARTIAL and self.utility_full:  # ARX's createPartialFull
            skip = KANON | NOTKANON | INSUFF
            self.binary = Phase(KANON, skip, skip, TAG_INSUFFICIENT)
            self.linear = Phase(0, VISITED | NOTKANON | INSUFF,
                                VISITED | NOTKANON | INSUFF | CHECKED, TAG_VISITED_INSUFFICIENT)
        elif self.utility_full:  # ARX's createNoneFull
            self.binary = None
            skip = ANON | NOTANON | INSUFF
            self.linear = Phase(0, skip, skip, TAG_INSUFFICIENT)
        elif self.privacy in (FULL, PARTIAL):
            prop, notprop = (ANON, NOTANON) if self.privacy == FULL else (KANON, NOTKANON)
            self.binary = Phase(prop, prop | notprop, prop | notprop)
            self.linear = Phase(0, notprop | VISITED, CHECKED | notprop, TAG_VISITED)
        else:
            self.binary = None
            self.linear = Phase(0, ANON | NOTANON, ANON | NOTANON)

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
        if not self.pruning or g not in self.lb or math.isnan(self.lb[g]):  # NaN: no bound
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

    def _check_and_tag(self, g: int, phase: Phase) -> None:
        if not self.has(g, phase.check):
            self._check(g)
        self._track(g)
        if phase.tag == TAG_PRUNED:
            if self.has(g, ANON):
                self._set(g, SUCC_PRUNED, up=True)
        elif phase.tag == TAG_VISITED:
            self._set(g, VISITED)
        elif phase.tag in (TAG_INSUFFICIENT, TAG_VISITED_INSUFFICIENT):
            if phase.tag == TAG_VISITED_INSUFFICIENT:
                self._set(g, VISITED)
            if self.has(g, ANON):
                for s in self.lattice.successors(g):
                    self._set(s, INSUFF, up=True)
                self._set(g, SUCC_PRUNED, up=True)
        self._prune(g)

    def _successors(self, g: int) -> list[int]:
        return self._sorted(self.lattice.successors(g))

    def _binary(self, g: int) -> None:
        assert self.binary is not None  # (the search has a binary phase)
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
        assert self.binary is not None
        chain = [h]
        while True:
            nxt = next((s for s in self._successors(chain[-1])
                        if not self._skip(self.binary.skip, s)), None)
            if nxt is None:
                return chain
            chain.append(nxt)

    def _check_path(self, chain: list[int], queue) -> int | None:
        assert self.binary is not None
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
        assert self.linear is not None  # (the search has a linear phase)
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
        evaluator = oracle.evaluator
        if flash_compiled.compiled_flash_supports(evaluator.models, evaluator.metric,
                                                  evaluator=evaluator, lattice_size=lat.size):
            compiled = self._run_compiled(oracle, progress, t0)
            if compiled is not None:  # None: a verdict too close to call compiled
                return compiled
        outer = self.binary or self.linear
        assert outer is not None  # (a binary or a linear phase)
        # the traversal's properties (the compiled search's are arrays) and, per attribute,
        # stride, radix and the key's two terms per level as Python floats
        self.props = Properties(lat.strides, lat.radix)
        self.terms = [(stride, radix, self.key_table[0, j, :radix].tolist(),
                       self.key_table[1, j, :radix].tolist())
                      for j, (stride, radix, _) in enumerate(lat._digits)]
        self.has = self.props.has
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
                      t0: float) -> SearchResult | None:
        """The same search in one compiled call (:mod:`.flash_compiled`); None when a class
        verdict was too close to call there."""
        found = flash_compiled.run(self, oracle)
        if found is None:
            return None
        opt, checked, stats, row = found
        if progress is not None:
            progress(self.lattice.size, self.lattice.size)
        self.opt, self.checked = opt, checked
        return SearchResult(opt, row, checked, time.perf_counter() - t0, self.name,
                            {"privacy_monotonicity": self.privacy,
                             "utility_monotonic": self.utility_full,
                             "evaluations": oracle.evaluations, "compiled": True,
                             "class_limit": flash_compiled.class_limit(oracle.evaluator),
                             "stopped_early": int((stats.entries < 0).sum()),
                             "all_stats": stats})


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
