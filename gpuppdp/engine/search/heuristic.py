"""Heuristic searches for lattices too large to walk, under a time (or evaluation) budget.

Flash and the exhaustive search hold per-node arrays of lattice size; 15 QIDs of 5 levels
are ``5**15 ~ 3e10`` nodes.  These searches keep only the nodes they evaluate (node ids as
Python ints, level vectors on demand) and return the best anonymous node found, which need
not be optimal:

* :class:`LightningSearch` is ARX's Lightning (Prasser, Bild, Eicher, Spengler & Kuhn,
  "Lightning: utility-driven anonymization of high-dimensional data", Trans. Data Privacy 9,
  2016): best-first from the bottom node, a greedy depth-first dive every ``top height``
  steps, pruning of nodes whose lower bound is not below the best loss found.
* :class:`BeamSearch` descends from the (anonymous) top node: each step evaluates all direct
  predecessors of the beam in one batch and keeps the ``width`` anonymous ones of smallest
  loss (beam search, Lowerre 1976; a batched top-down cousin of the bottom-up greedy of
  Samarati 2001 / LeFevre et al.'s Incognito lattice); it restarts with a doubled width
  while the budget lasts.

Both report ``heuristic: True``, the smallest lower bound of the nodes left unexplored
(``best_lower_bound``; the bottom's bound when the search gives none better) and the gap of
the result's loss to it.
"""

from __future__ import annotations

import heapq
import time
from typing import Callable

from ...errors import InputError
from ..evaluate import LatticeOracle
from .base import SearchResult

__all__ = ["OPTIMAL_SEARCH_LIMIT", "DEFAULT_TIME_LIMIT", "AUTO_HEURISTIC", "HEURISTICS",
           "LightningSearch", "BeamSearch", "make_heuristic"]

#: Lattices with more nodes than this are searched heuristically when ``search`` is
#: ``"flash"`` or ``"levels"``: either may check a good part of the lattice.
OPTIMAL_SEARCH_LIMIT = 10 ** 7
#: Seconds a heuristic search runs when no time limit is given.
DEFAULT_TIME_LIMIT = 30.0
#: The heuristic that ``flash`` and ``levels`` switch to above :data:`OPTIMAL_SEARCH_LIMIT`.
AUTO_HEURISTIC = "beam"


class _Heuristic:
    """Budget, bookkeeping and the result of a heuristic search."""

    name = "heuristic"
    #: cap on the oracle's cache of frequency-set entries during the search
    cache_entries = 2_000_000

    def __init__(self, time_limit: float | None = DEFAULT_TIME_LIMIT,
                 max_evaluations: int | None = None, note: str | None = None):
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"time_limit must be positive seconds, got {time_limit!r}")
        if max_evaluations is not None and max_evaluations < 1:
            raise InputError(f"max_evaluations must be >= 1, got {max_evaluations!r}")
        self.time_limit = time_limit
        self.max_evaluations = max_evaluations
        self.note = note

    def _start(self, oracle: LatticeOracle) -> None:
        self.oracle = oracle
        self.lattice = oracle.lattice
        # the frequency sets of nodes far apart seldom serve as sources: keep few
        oracle.cache_entries = min(oracle.cache_entries, self.cache_entries)
        self.t0 = time.perf_counter()
        self.evals0 = oracle.evaluations
        self.best: int | None = None
        self.best_key: tuple | None = None
        self.stopped: str | None = None

    def _spent(self) -> bool:
        """Whether the budget is used up (records why)."""
        if self.max_evaluations is not None and \
                self.oracle.evaluations - self.evals0 >= self.max_evaluations:
            self.stopped = "evaluations"
        elif self.time_limit is not None and time.perf_counter() - self.t0 >= self.time_limit:
            self.stopped = "time"
        return self.stopped is not None

    def _check(self, nodes) -> list[dict]:
        """Evaluate ``nodes`` in one batch; track the best anonymous node by
        (loss, height, id), the exhaustive search's tie-break."""
        # batches of at most the oracle's ``batch_entries`` source entries (from the bottom)
        step = max(1, self.oracle.batch_entries // int(self.oracle.evaluator.bottom.host_ptr[-1]))
        for i in range(0, len(nodes), step):
            self.oracle.prefetch(nodes[i:i + step])
        rows = [self.oracle.evaluate(g) for g in nodes]
        for g, row in zip(nodes, rows):
            if row["anonymous"]:
                key = (row["information_loss"], row["height"], g)
                if self.best_key is None or key < self.best_key:
                    self.best, self.best_key = g, key
        return rows

    def _result(self, bound: float | None) -> SearchResult:
        row = None if self.best is None else self.oracle.evaluate(self.best)
        if bound is None or (row is not None and bound > row["information_loss"]):
            bound = None if row is None else row["information_loss"]
        loss = None if row is None else row["information_loss"]
        gap = None if loss is None or bound is None else loss - bound
        details = {"heuristic": True, "time_limit": self.time_limit,
                   "max_evaluations": self.max_evaluations,
                   "stopped": self.stopped or "exhausted", "best_lower_bound": bound, "gap": gap,
                   "relative_gap": (None if gap is None else
                                    (gap / abs(loss) if loss else 0.0)),
                   "evaluations": self.oracle.evaluations}
        if self.note:
            details["note"] = self.note
        return SearchResult(self.best, row, self.oracle.evaluations - self.evals0,
                            time.perf_counter() - self.t0, self.name, details)


class LightningSearch(_Heuristic):
    """ARX's Lightning: best-first search by information loss from the bottom node.

    Every step polls the queued node of smallest loss, skips it if already expanded or if its
    lower bound is not below the best loss found (ARX's ``propertyInsufficientUtility``),
    and *expands* it: checks all its unexpanded successors (here as one batch) and queues
    them.  Every ``top height``-th step is instead a greedy dive: expand, continue with the
    successor of smallest loss, until the top.  With ``utility_monotonic`` (no suppression
    with a monotonic metric) an anonymous node is not expanded: its successors cannot be
    better.  ARX ranks non-anonymous nodes by their loss with outliers charged; the engine
    keeps no loss for them, so they rank by the estimate ``lb + s/n * (U - lb)`` (bound
    ``lb``, ``s`` of ``n`` records suppressed, ``U`` the top node's bound).
    """

    name = "lightning"

    def __init__(self, time_limit=DEFAULT_TIME_LIMIT, max_evaluations=None, *,
                 utility_monotonic: bool = False, note=None):
        super().__init__(time_limit, max_evaluations, note)
        self.utility_monotonic = utility_monotonic

    def _key(self, row: dict) -> float:
        if row["anonymous"]:
            return row["information_loss"]
        lb, share = row["lower_bound"], row["suppressed"] / self.n_rows
        return lb + share * (self.top_bound - lb)

    def _pruned(self, g: int) -> bool:
        if g in self.expanded or g in self.insufficient:
            return True
        if self.best_key is not None and \
                self.oracle.evaluate(g)["lower_bound"] >= self.best_key[0]:
            self.insufficient.add(g)
            return True
        return False

    def _expand(self, g: int) -> int | None:
        """Check and queue ``g``'s successors; return the one of smallest loss."""
        self.expanded.add(g)
        row = self.oracle.evaluate(g)
        if self.utility_monotonic and row["anonymous"]:
            return None
        succ = [s for s in self.lattice.successors(g)
                if s not in self.expanded and s not in self.insufficient]
        pick = None
        for s, r in zip(succ, self._check(succ)):
            key = self._key(r)
            heapq.heappush(self.queue, (key, s))
            if pick is None or key < pick[0]:
                pick = (key, s)
        return None if pick is None else pick[1]

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        self._start(oracle)
        self.n_rows = oracle.evaluator.encoded.n_rows
        self.top_bound = self._check([self.lattice.top])[0]["lower_bound"]
        bottom = self._check([0])[0]
        self.queue: list[tuple] = [(self._key(bottom), 0)]
        self.expanded: set[int] = set()
        self.insufficient: set[int] = set()
        stepping, step = max(self.lattice.max_height, 1), 0
        while self.queue and not self._spent():
            g: int | None
            _, g = heapq.heappop(self.queue)
            if self._pruned(g):
                continue
            step += 1
            if step % stepping == 0:  # greedy depth-first dive, no backtracking
                while g is not None and not self._spent():
                    g = self._expand(g)
            else:
                self._expand(g)
        open_bounds = [oracle.evaluate(g)["lower_bound"] for _, g in self.queue
                       if g not in self.expanded and g not in self.insufficient]
        if self.stopped is None:  # queue exhausted: the best node is optimal
            return self._result(None)
        return self._result(min(open_bounds, default=bottom["lower_bound"]))


class BeamSearch(_Heuristic):
    """Top-down beam search, one batched evaluation per step.

    Starts from the top node; each step evaluates all direct predecessors (one attribute one
    level lower) of the beam's nodes in one ``prefetch`` call and keeps the ``width``
    anonymous ones of smallest (loss, height, id) as the next beam; it ends when no
    predecessor is anonymous.  While budget is left it restarts from the top with a doubled
    width (nodes already evaluated cost nothing), until a descent keeps every anonymous
    predecessor: with monotonic privacy models it has then seen every anonymous node and the
    result is optimal.  Otherwise the gap is taken to the bottom node's bound: a descent
    leaves the lattice below its beam unexplored.
    """

    name = "beam"

    def __init__(self, time_limit=DEFAULT_TIME_LIMIT, max_evaluations=None, *,
                 width: int = 8, privacy_monotonic: bool = False, note=None):
        super().__init__(time_limit, max_evaluations, note)
        self.privacy_monotonic = privacy_monotonic
        if width < 1:
            raise InputError(f"width must be >= 1, got {width!r}")
        self.width = width

    def _predecessors(self, g: int) -> list[int]:
        return [g - stride for stride, radix, _ in self.lattice._digits
                if g // stride % radix > 0]

    def run(self, oracle: LatticeOracle, progress: Callable | None = None) -> SearchResult:
        self._start(oracle)
        bottom = self._check([0])[0]
        top = self.lattice.top
        width, complete = self.width, False
        while not complete and not self._spent() and self._check([top])[0]["anonymous"]:
            beam, seen, complete = [top], set(), True
            while beam and not self._spent():
                preds = [p for p in dict.fromkeys(q for g in beam
                                                  for q in self._predecessors(g))
                         if p not in seen]
                seen.update(preds)
                ranked = sorted((r["information_loss"], r["height"], p)
                                for p, r in zip(preds, self._check(preds)) if r["anonymous"])
                complete &= len(ranked) <= width
                beam = [p for *_, p in ranked[:width]]
            width *= 2
        # a descent that never dropped a node saw every anonymous node if they form an up-set
        if complete and self.stopped is None and self.privacy_monotonic:
            return self._result(None)
        return self._result(bottom["lower_bound"])


HEURISTICS = {"lightning": LightningSearch, "beam": BeamSearch}


def make_heuristic(name: str, evaluator, *, time_limit: float | None = None,
                   max_evaluations: int | None = None, note: str | None = None):
    """A heuristic search for an :class:`~gpuppdp.engine.evaluate.Evaluator`: ``name`` in
    :data:`HEURISTICS`; no ``time_limit`` and no ``max_evaluations`` mean
    :data:`DEFAULT_TIME_LIMIT` seconds."""
    if time_limit is None and max_evaluations is None:
        time_limit = DEFAULT_TIME_LIMIT
    if name == "lightning":
        metric = evaluator.metric
        monotonic = (metric.monotonic_with_generalization if evaluator.suppression_limit == 0
                     else metric.monotonic_with_suppression)
        return LightningSearch(time_limit, max_evaluations, utility_monotonic=monotonic,
                               note=note)
    limit = evaluator.suppression_limit
    monotonic = all(m.monotonic_with_generalization and
                    (limit == 0 or m.monotonic_with_suppression) for m in evaluator.models)
    return BeamSearch(time_limit, max_evaluations, privacy_monotonic=monotonic, note=note)
