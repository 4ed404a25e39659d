"""Risk-based privacy models: thresholds on the re-identification risk of the release as a
whole, judged from the distribution of the released classes' sizes (ARX's
``RiskBasedCriterion``, a ``SampleBasedCriterion``).

* :class:`AverageReidentificationRisk` -- the average prosecutor risk, #classes / #records,
  at most ``t``; optionally at most a share ``records_at_risk`` of the records in classes whose
  risk exceeds ``highest_risk`` (El Emam 2013; ARX's relaxed variant).
* :class:`SampleUniqueness` -- at most a share ``t`` of the records are sample uniques.
* :class:`PopulationUniqueness` -- the estimated share of population uniques at most ``t``,
  by Pitman's (Hoshino 2001), Zayatz's (1991) or the SNB model (Chen & Keller-McNulty 1998),
  or Dankar et al.'s (2012) rule among them (:mod:`gpuppdp.analysis.risk`'s estimators), for
  a population of a given size or region (ARX's ``ARXPopulationModel``).

They are enforced as ARX 3.9.2 enforces them (``HashGroupifyDistribution``): after the
class-based models (k, l, t, ...) have chosen their outliers, the remaining classes -- a class
whose every QID is ``*`` counts neither as released nor as suppressed -- are sorted by size,
then (with the loss metric) by their own loss ``prod_j (|E| share_j + 1)^(1/q) - 1``, then by
first appearance; if the model fails, a prefix of that order is suppressed, its length found
by ARX's binary search, which gives up as soon as a prefix that fails suppresses more than the
limit.  A node is anonymous when the records suppressed in all stay within the limit.

Monotonicity flags are ARX's: average risk and sample uniqueness are declared monotonic (Flash
tags predictively, as ARX does, though a prefix suppression may break it: the exhaustive
search is the exact optimum), population uniqueness is monotonic in generalization with
Zayatz's model only and never with suppression.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.classes import Classes
from ..engine.transform import SUPPRESSED_LABEL
from ..errors import InputError
from ..kernels.aot import ahead_of_time
from ..kernels.uniqueness import ESTIMATOR_CODES, estimator_work, population_shares
from ..validation import check_number, format_values, plain_number
from .base import CompiledCheck, PrivacyModel, Requirement

__all__ = ["RiskModel", "AverageReidentificationRisk", "SampleUniqueness",
           "PopulationUniqueness", "POPULATION_REGIONS", "POPULATION_ESTIMATORS",
           "size_threshold"]

#: ARX's ``ARXPopulationModel.Region`` population sizes (ARX 3.9.2)
POPULATION_REGIONS = {
    "africa": 1_100_000_000, "australia": 23_130_900, "europe": 740_000_000,
    "north_america": 565_265_000, "south_america": 385_742_554,
    "european_union": 507_420_000, "brasil": 202_656_788, "canada": 34_834_841,
    "china": 1_366_040_000, "france": 65_820_916, "germany": 80_767_000,
    "india": 1_210_569_573, "uk": 63_705_000, "usa": 317_238_626,
}

#: the estimators of :class:`PopulationUniqueness`
POPULATION_ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")

# the states of ARX's PrivacyCondition
_ABORT, _FULFILLED, _NOT_FULFILLED = 0, 1, 2


def size_threshold(highest_risk: float) -> int:
    """ARX's ``ParameterTranslation.getSizeThreshold``: the smallest class size whose risk
    ``1/size`` counts as at most ``highest_risk`` (1 % relative slack on the risk)."""
    size = 1.0 / highest_risk
    floor = math.floor(size)
    if (1.0 / floor) - (1.0 / size) >= 0.01 * highest_risk:
        floor += 1
    return int(floor)


class _Remaining:
    """The sizes of the classes a risk model may suppress, per node (host arrays): ``sizes``
    (E,), ascending within a node where prefixes are suppressed, with ``ptr`` (B+1,) the
    nodes' runs, ``start`` (E+1,) their running sums, each node's ``records``, ``classes`` and
    records ``base`` already suppressed."""

    def __init__(self, sizes, ptr, base, start):
        self.sizes, self.ptr, self.base, self.start = sizes, ptr, base, start
        self.classes = np.diff(ptr)
        self.records = self.cut(self.classes, np.arange(len(self.classes)))
        self._counts: dict[int, np.ndarray] = {}

    def cut(self, prefix, nodes) -> np.ndarray:
        """Records in the first ``prefix`` classes of each of ``nodes``."""
        at = self.ptr[nodes]
        return self.start[at + prefix] - self.start[at]

    def left(self, prefix, nodes) -> np.ndarray:
        """Records of ``nodes`` left once their first ``prefix`` classes are suppressed."""
        return self.records[nodes] - self.cut(prefix, nodes)

    def count_up_to(self, size: int) -> np.ndarray:
        """(B, size + 1): per node the classes of at most ``s`` records, s = 0..size."""
        hit = self._counts.get(size)
        if hit is not None:
            return hit
        n_nodes = len(self.classes)
        node = np.repeat(np.arange(n_nodes), self.classes)
        small = self.sizes <= size
        table = np.bincount(node[small] * (size + 1) + self.sizes[small],
                            minlength=n_nodes * (size + 1)).reshape(n_nodes, size + 1)
        hit = self._counts[size] = np.cumsum(table, axis=1)
        return hit


@njit(cache=True)
def _free_classes(outlier, star, size, ptr):
    """The classes a risk model may still suppress -- not suppressed yet, not all ``*``, not
    empty -- node by node (runs ``ptr``), in first appearance: ``(classes, sizes, runs,
    base, start)``, ``base`` per node the records already suppressed (all ``*`` classes
    aside), ``start`` the sizes' running sums (:class:`_Remaining`)."""
    n_nodes = ptr.shape[0] - 1
    base = np.zeros(n_nodes, np.int64)
    runs = np.zeros(n_nodes + 1, np.int64)
    for b in range(n_nodes):
        free = 0
        for c in range(ptr[b], ptr[b + 1]):
            if star[c]:
                continue
            if outlier[c]:
                base[b] += size[c]
            elif size[c] > 0:
                free += 1
        runs[b + 1] = runs[b] + free
    classes = np.empty(runs[n_nodes], np.int64)
    sizes = np.empty(runs[n_nodes], np.int64)
    start = np.zeros(runs[n_nodes] + 1, np.int64)
    j = 0
    for c in range(ptr[n_nodes]):
        if not outlier[c] and not star[c] and size[c] > 0:
            classes[j] = c
            sizes[j] = size[c]
            start[j + 1] = start[j] + size[c]
            j += 1
    return classes, sizes, runs, base, start


ahead_of_time(_free_classes, ["UniTuple(int64[::1], 5)(boolean[::1], boolean[::1], int64[::1], "
                              "int64[::1])"])


@njit(cache=True)
def _sorted_sizes(sizes, runs, nodes):
    """The sizes of the classes of ``nodes`` (runs ``runs`` of ``sizes``), node after node,
    each node's ascending (counted, or sorted where the sizes spread far beyond the classes):
    ``(sorted sizes, runs, running sums)``.  A model's verdict after suppressing a prefix
    depends only on these; which classes of the last size go is :func:`_split_at`'s."""
    out_runs = np.zeros(nodes.shape[0] + 1, np.int64)
    for i in range(nodes.shape[0]):
        b = nodes[i]
        out_runs[i + 1] = out_runs[i] + runs[b + 1] - runs[b]
    out = np.empty(out_runs[-1], np.int64)
    for i in range(nodes.shape[0]):
        lo, hi, o = runs[nodes[i]], runs[nodes[i] + 1], out_runs[i]
        top = 0
        for e in range(lo, hi):
            top = max(top, sizes[e])
        if top <= 4 * (hi - lo) + 1024:
            count = np.zeros(top + 1, np.int64)
            for e in range(lo, hi):
                count[sizes[e]] += 1
            for v in range(top + 1):
                for _ in range(count[v]):
                    out[o] = v
                    o += 1
        else:
            out[o:o + hi - lo] = np.sort(sizes[lo:hi])
    start = np.zeros(out.shape[0] + 1, np.int64)
    for r in range(out.shape[0]):
        start[r + 1] = start[r] + out[r]
    return out, out_runs, start


ahead_of_time(_sorted_sizes, ["UniTuple(int64[::1], 3)(int64[::1], int64[::1], int64[::1])"])


@njit(cache=True)
def _smaller_in_prefix(sizes, runs, prefix, last):
    """Per node ``i`` (run ``runs[i]:runs[i+1]`` of ascending ``sizes``), how many of its
    first ``prefix[i]`` sizes are smaller than ``last[i]``."""
    out = np.zeros(prefix.shape[0], np.int64)
    for i in range(prefix.shape[0]):
        lo = runs[i]
        out[i] = np.searchsorted(sizes[lo:lo + prefix[i]], last[i])
    return out


ahead_of_time(_smaller_in_prefix, ["int64[::1](int64[::1], int64[::1], int64[::1], int64[::1])"])


@njit(cache=True)
def _split_at(classes, sizes, runs, nodes, last, equal, keyed):
    """The classes suppressed in each node ``nodes[i]`` (runs ``runs`` of ``classes`` and
    ``sizes``, in first appearance): those smaller than ``last[i]`` and the first
    ``equal[i]`` of size ``last[i]`` -- except in a ``keyed`` node whose classes of that size
    are more than ``equal[i]``: those are left to the caller to rank by their own key
    (``(chosen, tied, tied's i)``)."""
    n = nodes.shape[0]
    n_tied = np.zeros(n, np.int64)
    n_below = 0
    for i in range(n):
        for e in range(runs[nodes[i]], runs[nodes[i] + 1]):
            if sizes[e] < last[i]:
                n_below += 1
            elif sizes[e] == last[i]:
                n_tied[i] += 1
    n_chosen, n_keyed = n_below, 0
    by_key = np.zeros(n, np.bool_)
    for i in range(n):
        by_key[i] = keyed[i] and 0 < equal[i] < n_tied[i]
        if by_key[i]:
            n_keyed += n_tied[i]
        else:
            n_chosen += min(equal[i], n_tied[i])
    chosen = np.empty(n_chosen, np.int64)
    tied = np.empty(n_keyed, np.int64)
    tied_node = np.empty(n_keyed, np.int64)
    c, t = 0, 0
    for i in range(n):
        taken = 0
        for e in range(runs[nodes[i]], runs[nodes[i] + 1]):
            if sizes[e] < last[i]:
                chosen[c] = classes[e]
                c += 1
            elif sizes[e] == last[i]:
                if by_key[i]:
                    tied[t] = classes[e]
                    tied_node[t] = i
                    t += 1
                elif taken < equal[i]:
                    chosen[c] = classes[e]
                    c += 1
                    taken += 1
    return chosen, tied, tied_node


ahead_of_time(_split_at, ["UniTuple(int64[::1], 3)(" + ", ".join(["int64[::1]"] * 6)
                          + ", boolean[::1])"])


class RiskModel(PrivacyModel):
    """Base of the risk-based models (ARX's ``RiskBasedCriterion``): a threshold ``t`` on a
    risk of the released classes' size distribution, met by suppressing the smallest classes
    (see the module docstring); subclasses say when the distribution left after suppressing
    a prefix fulfils the model (:meth:`_fulfilled`)."""

    _stars: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __init__(self, t: float):
        self.t = check_number("t", t, 0.0, 1.0)

    @property
    def requires(self) -> Requirement:
        return Requirement.COUNTS | Requirement.SIZE_DISTRIBUTION

    @property
    def compiled_kind(self) -> str | None:
        return None

    def bind(self, encoded):
        # which labels are '*' (ARX's completely generalized class), flat: QID j's level L at
        # stars[star_off[j, L]:star_off[j, L + 1]] (past the QID's height, its last end), and
        # whether that level has one (any_star[j, L]); the compiled Flash reads the same
        self.backend = encoded.backend
        hierarchies = encoded.hierarchies
        top = max(h.height for h in hierarchies)
        star_off = np.zeros((len(hierarchies), top + 2), np.int64)
        any_star = np.zeros((len(hierarchies), top + 1), dtype=bool)
        flat, at = [], 0
        for j, h in enumerate(hierarchies):
            for level in range(h.height + 1):
                labels = np.asarray(h.labels(level)) == SUPPRESSED_LABEL
                star_off[j, level], any_star[j, level] = at, labels.any()
                flat.append(labels)
                at += len(labels)
            star_off[j, h.height + 1:] = at
        self._stars = star_off, np.concatenate(flat), any_star
        return self

    def compiled_check(self) -> CompiledCheck | None:
        """The compiled Flash's form (:mod:`gpuppdp.engine.search.flash_risk`): the numbers
        of :meth:`_compiled_numbers` and the table of ``*`` labels (``star_off``,
        ``stars``); None for a model judged in Python only."""
        kind = self.compiled_kind
        if kind is None:
            return None
        if self._stars is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        star_off, stars, _ = self._stars
        return CompiledCheck(kind, None, self._compiled_numbers(),
                             {"star_off": star_off, "stars": stars})

    def _compiled_numbers(self) -> dict[str, float]:
        return {"t": self.t}

    def _all_star(self, classes: Classes):
        """Device bool (C,): the classes whose every QID is ``*`` (only in nodes whose every
        level has a ``*`` label: mostly the top alone)."""
        xp, be = classes.xp, self.backend
        levels = np.asarray(classes.levels)
        out = xp.zeros(classes.size.shape[0], dtype=xp.bool_)
        assert self._stars is not None  # (bound)
        star_off, stars, any_star = self._stars
        q = levels.shape[1]
        maybe = np.flatnonzero(any_star[np.arange(q), levels].all(axis=1))
        for b in maybe.tolist():  # a node or two per batch
            lo, hi = int(classes.host_ptr[b]), int(classes.host_ptr[b + 1])
            star = xp.ones(hi - lo, dtype=xp.bool_)
            for j, level in enumerate(levels[b].tolist()):
                table = stars[star_off[j, level]:star_off[j, level + 1]]
                star &= be.asarray(table)[classes.codes[lo:hi, j].astype(xp.int64)]
            out[lo:hi] = star
        return out

    def suppress(self, classes: Classes, outlier, max_suppressed: int, order_key=None):
        """``outlier`` (device bool, the classes suppressed so far) with the classes this model
        suppresses added, by ARX's binary search over the prefixes of the remaining classes
        sorted by size, ``order_key(classes, idx)`` (device float per class of ``idx``, or
        ``None``; :meth:`~gpuppdp.engine.metrics.Metric.suppression_order`), first
        appearance; the search gives up on a node once a failing prefix exceeds
        ``max_suppressed``."""
        if self._stars is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        be = self.backend
        star = self._all_star(classes)
        host_ptr = np.ascontiguousarray(be.to_host(classes.host_ptr), dtype=np.int64)
        n_nodes = len(host_ptr) - 1
        free, free_sizes, free_ptr, base, start = _free_classes(
            np.ascontiguousarray(be.to_host(outlier), dtype=np.bool_),
            np.ascontiguousarray(be.to_host(star), dtype=np.bool_),
            np.ascontiguousarray(be.to_host(classes.size), dtype=np.int64), host_ptr)
        # without suppression the order does not matter: the nodes that pass need no sort
        whole = _Remaining(free_sizes, free_ptr, base, start)
        failing = np.flatnonzero((whole.classes > 0) & ~self._fulfilled(
            whole, np.zeros(n_nodes, dtype=np.int64), np.arange(n_nodes)))
        if len(failing) == 0:
            return outlier
        sizes, ptr, start = _sorted_sizes(free_sizes, free_ptr, failing)
        rest = _Remaining(sizes, ptr, base[failing], start)
        prefix = _binary_search(self, rest, max_suppressed)
        # the prefix of each node's classes sorted by size, then first appearance: those
        # smaller than its last size, and the first of that size ("equal" of them)
        at = np.arange(len(failing))
        last = np.where(prefix > 0, sizes[np.maximum(ptr[:-1] + prefix - 1, 0)], 0)
        equal = prefix - _smaller_in_prefix(sizes, ptr, prefix, last)
        # which classes of a node that stays above the limit does not matter (not anonymous)
        kept = rest.base + rest.cut(prefix, at) <= max_suppressed
        chosen, tied, tied_node = _split_at(free, free_sizes, free_ptr, failing, last, equal,
                                            kept & (order_key is not None))
        if len(tied):
            chosen = np.concatenate([chosen, self._ties_by_key(classes, tied, tied_node,
                                                               equal, order_key)])
        out = outlier.copy()
        out[be.asarray(chosen)] = True
        return out

    def _ties_by_key(self, classes, tied, tied_node, equal, order_key):
        """The first ``equal[i]`` of the classes ``tied`` of node ``i`` (``tied_node``, in
        first appearance) by ``order_key``, then first appearance: ARX's entries of equal
        size are sorted by their own loss."""
        xp, be = classes.xp, self.backend
        key = order_key(classes, be.asarray(tied))
        if key is not None:
            by_key = xp.lexsort(xp.stack([xp.arange(len(tied), dtype=xp.float64),
                                          key.astype(xp.float64),
                                          be.asarray(tied_node.astype(np.float64))]))
            order = be.to_host(by_key)
            tied, tied_node = tied[order], tied_node[order]
        ranked = np.arange(len(tied)) - np.searchsorted(tied_node, tied_node)
        return tied[ranked < equal[tied_node]]

    def _fulfilled(self, rest: _Remaining, prefix: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Host bool (len(nodes),): does each of ``nodes`` fulfil the model once its first
        ``prefix`` remaining classes are suppressed?"""
        raise NotImplementedError


def _java_half(x: np.ndarray) -> np.ndarray:
    """``x / 2`` in Java's int arithmetic (truncated toward zero)."""
    return np.where(x < 0, -((-x) // 2), x // 2)


def _binary_search(model: RiskModel, rest: _Remaining, limit: int) -> np.ndarray:
    """Per node the number of remaining classes ARX's ``RiskBasedCriterion.enforce`` suppresses
    (``HashGroupifyDistribution.suppressWhileNotFulfilledBinary``, the early abort of a
    search at ``limit`` records), all nodes' searches stepped together.  Every node of
    ``rest`` fails the model without suppression and has a class to suppress; where every
    prefix exceeds the limit, 1 (the node is not anonymous whichever ARX ends at)."""
    n_nodes = len(rest.classes)
    length = rest.classes
    # where suppressing even the first class exceeds the limit, no prefix is anonymous: one
    # class stands for ARX's search (which ends above the limit too), no estimate is made
    hopeless = rest.base + rest.cut(np.ones(n_nodes, dtype=np.int64), np.arange(n_nodes)) > limit
    active = ~hopeless
    low = np.zeros(n_nodes, dtype=np.int64)
    high = length - 1
    mid = _java_half(low + high)
    prefix = np.where(active, mid + 1, hopeless.astype(np.int64))

    def state(nodes):
        ok = model._fulfilled(rest, prefix[nodes], nodes)
        over = rest.base[nodes] + rest.cut(prefix[nodes], nodes) > limit
        return np.where(ok, _FULFILLED, np.where(over, _ABORT, _NOT_FULFILLED))

    while True:
        run = np.flatnonzero(active & (low <= high))
        if len(run) == 0:
            break
        st = state(run)
        active[run[st == _ABORT]] = False
        ok, no = run[st == _FULFILLED], run[st == _NOT_FULFILLED]
        high[ok] = mid[ok] - 1
        low[no] = mid[no] + 1
        moved = np.concatenate([ok, no])
        mid[moved] = _java_half(low[moved] + high[moved])
        prefix[moved] = mid[moved] + 1
    last = np.flatnonzero(active)
    if len(last):
        st = state(last)
        more = last[(st == _NOT_FULFILLED) & (mid[last] + 1 < length[last])]
        prefix[more] += 1
    return prefix


class AverageReidentificationRisk(RiskModel):
    """Average re-identification risk (ARX's ``AverageReidentificationRisk``; El Emam 2013):
    the released classes per released record at most ``t`` (all records suppressed passes).
    With ``highest_risk`` and ``records_at_risk`` (both or neither), also at most a share
    ``records_at_risk`` of the released records in classes smaller than ARX's size threshold
    of ``highest_risk`` (:func:`size_threshold`: the risk ``1/|E|`` above it, with ARX's 1 %
    slack).  Monotonic in ARX's declaration (see the module docstring)."""

    compiled_kind = "average-risk"  # type: ignore[assignment]

    def __init__(self, t: float, *, highest_risk: float | None = None,
                 records_at_risk: float | None = None):
        super().__init__(t)
        if (highest_risk is None) != (records_at_risk is None):
            raise InputError("highest_risk and records_at_risk go together: give both or "
                             f"neither, got highest_risk={highest_risk!r}, "
                             f"records_at_risk={records_at_risk!r}")
        self.highest_risk: float | None = None
        self.records_at_risk: float | None = None
        self.smallest_size: int | None = None
        if highest_risk is not None:
            self.highest_risk = check_number("highest_risk", highest_risk, 0.0, 1.0)
            if self.highest_risk == 0.0:
                raise InputError("highest_risk must be in (0, 1], got 0")
            self.records_at_risk = check_number("records_at_risk", records_at_risk, 0.0, 1.0)
            self.smallest_size = size_threshold(self.highest_risk)

    def _compiled_numbers(self) -> dict[str, float]:
        return {"t": self.t, "smallest_size": float(self.smallest_size or 0),
                "records_at_risk": float(self.records_at_risk or 0.0)}

    def _fulfilled(self, rest, prefix, nodes):
        records = rest.left(prefix, nodes)
        classes = rest.classes[nodes] - prefix
        with np.errstate(divide="ignore", invalid="ignore"):
            ok = (records == 0) | (1.0 / (records.astype(np.float64) / classes) <= self.t)
        if self.smallest_size is None:
            return ok
        top = self.smallest_size - 1
        count = rest.count_up_to(top)[nodes]
        fraction = np.zeros(len(nodes))
        with np.errstate(divide="ignore", invalid="ignore"):
            for s in range(1, top + 1):  # ARX's sum, in ascending size
                left = np.maximum(count[:, s] - np.maximum(prefix, count[:, s - 1]), 0)
                fraction += np.where(records > 0, left.astype(np.float64) * s / records, 0.0)
        return ok & (fraction <= self.records_at_risk)

    def describe(self) -> dict:
        out = {"model": "average-risk", "t": plain_number(self.t)}
        if self.highest_risk is not None and self.records_at_risk is not None:
            out.update(highest_risk=plain_number(self.highest_risk),
                       records_at_risk=plain_number(self.records_at_risk))
        return out

    def __repr__(self) -> str:
        if self.highest_risk is None or self.records_at_risk is None:
            return f"AverageReidentificationRisk({plain_number(self.t)})"
        return (f"AverageReidentificationRisk({plain_number(self.t)}, "
                f"highest_risk={plain_number(self.highest_risk)}, "
                f"records_at_risk={plain_number(self.records_at_risk)})")


class SampleUniqueness(RiskModel):
    """Sample uniqueness (ARX's ``SampleUniqueness``): at most a share ``t`` of the released
    records are alone in their class.  Monotonic in ARX's declaration."""

    compiled_kind = "sample-uniqueness"  # type: ignore[assignment]

    def _fulfilled(self, rest, prefix, nodes):
        records = rest.left(prefix, nodes)
        uniques = np.maximum(rest.count_up_to(1)[nodes, 1] - prefix, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(records > 0, uniques.astype(np.float64) / records, 0.0)
        return share <= self.t

    def describe(self) -> dict:
        return {"model": "sample-uniqueness", "t": plain_number(self.t)}

    def __repr__(self) -> str:
        return f"SampleUniqueness({plain_number(self.t)})"


class PopulationUniqueness(RiskModel):
    """Population uniqueness (ARX's ``PopulationUniqueness``): the share of population uniques
    estimated from the released classes' sizes by ``model`` (``pitman``, ``zayatz``, ``snb`` or
    ``dankar``: :mod:`gpuppdp.analysis.risk`) is in ``(0, t]``, or is 0 with no sample unique.
    The population has ``population_size`` records or is a ``region`` of ARX's
    (:data:`POPULATION_REGIONS`, e.g. ``"usa"``).  As in ARX, Dankar's rule here has no
    fallback: where it picks Pitman's model (sampling fraction at most 10 %) and that has no
    solution, the model fails.  Monotonic in generalization with Zayatz's model only, never
    with suppression (ARX's flags).

    The estimators iterate; theirs and ARX's may differ in the last digits, which matters only
    for a node whose estimate lies that close to ``t``."""

    monotonic_with_suppression = False
    compiled_kind = "population-uniqueness"  # type: ignore[assignment]

    def __init__(self, t: float, *, model: str = "dankar", population_size: float | None = None,
                 region: str | None = None):
        super().__init__(t)
        if model not in POPULATION_ESTIMATORS:
            raise InputError(f"model must be one of {format_values(POPULATION_ESTIMATORS)}, "
                             f"got {model!r}")
        self.model = model
        self.monotonic_with_generalization = model == "zayatz"
        if (population_size is None) == (region is None):
            raise InputError("give the population as population_size=N or region=NAME (one of "
                             f"them), got population_size={population_size!r}, "
                             f"region={region!r}")
        self.region = None
        if region is not None:
            key = str(region).lower().replace(" ", "_").replace("-", "_")
            if key not in POPULATION_REGIONS:
                regions = format_values(sorted(POPULATION_REGIONS), 20)
                raise InputError(f"region must be one of {regions}, got {region!r}")
            self.region = key
            population_size = POPULATION_REGIONS[key]
        self.population_size = check_number("population_size", population_size, 1.0)

    def _compiled_numbers(self) -> dict[str, float]:
        return {"t": self.t, "estimator": float(ESTIMATOR_CODES[self.model]),
                "population_size": float(self.population_size)}

    def bind(self, encoded):
        if self.population_size < encoded.n_rows:
            raise InputError(f"population_size must be at least the table's rows "
                             f"({encoded.n_rows}), got {plain_number(self.population_size)}")
        return super().bind(encoded)

    def _fulfilled(self, rest, prefix, nodes):
        out = np.empty(len(nodes), dtype=bool)
        nodes = np.ascontiguousarray(nodes, dtype=np.int64)
        work = np.empty(estimator_work(int(rest.sizes.max(initial=0)),
                                       int(np.diff(rest.ptr)[nodes].max(initial=0))))
        population_shares(rest.sizes, rest.ptr, nodes,
                          np.ascontiguousarray(prefix, dtype=np.int64),
                          ESTIMATOR_CODES[self.model], float(self.population_size),
                          float(self.t), out, work)
        return out

    def describe(self) -> dict:
        out = {"model": "population-uniqueness", "t": plain_number(self.t),
               "estimator": self.model, "population_size": plain_number(self.population_size)}
        if self.region is not None:
            out["region"] = self.region
        return out

    def __repr__(self) -> str:
        where = (f"region={self.region!r}" if self.region is not None
                 else f"population_size={plain_number(self.population_size)}")
        return f"PopulationUniqueness({plain_number(self.t)}, model={self.model!r}, {where})"
