"""t-closeness (Li, Li & Venkatasubramanian 2007) with the equal, ordered and hierarchical
Earth Mover's Distances, as ARX's ``*DistanceTCloseness``.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .. import kernels
from ..core.classes import Classes
from ..core.codes import encode_column
from ..errors import InputError, InputTypeError, hinted
from ..hierarchy import Hierarchy, HierarchyError
from ..validation import check_number, format_values, plain_number
from .base import CompiledCheck, Requirement, SensitiveModel

__all__ = ["TCloseness", "TCLOSENESS_DISTANCES"]


TCLOSENESS_DISTANCES = ("equal", "ordered", "hierarchical")

#: dense per-class matrices (ordered and hierarchical distance) are built for at most this
#: many (class x sensitive value) cells at a time
_DENSE_CELLS = 1 << 23


class TCloseness(SensitiveModel):
    """t-closeness (Li, Li & Venkatasubramanian 2007): the earth mover's distance between each
    class's sensitive distribution and the whole table's is at most ``t``.

    The global distribution is taken over all rows of the input, before generalization and
    suppression (ARX's ``DataManager.getDistribution``).  Ground distances:

    * ``"equal"``: every pair of values is 1 apart; ARX's evaluation
      ``D = (1 + sum_{v in E} (|q_v - p_v| - q_v)) / 2``, summed in ascending sensitive code;
    * ``"ordered"``: values ordered by ``order`` (a list of every value), else by the
      attribute's declared data type (the anonymizer's ``types``: numbers, dates and ordered
      strings by value, strings lexically, as ARX), else numerically; ``|i - j| / (m - 1)``
      apart; ``D = sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1)``,
      tested as ARX does (``sum <= t * (m - 1)``);
    * ``"hierarchical"``: the ground distance of two values is the level of their lowest
      common ancestor in ``hierarchy`` (a :class:`~gpuppdp.hierarchy.Hierarchy` or an ARX
      hierarchy CSV of the sensitive attribute) divided by its height, restricted to the values
      present in the data; ARX's integer algorithm (``extra_v = P_v n - f_v R``, inner nodes by
      ascending level then first appearance, ``cost += (L/H) min(pos, neg)``, ``cost / (R n)``).

    A class passes iff ``D <= t``.  No minimal class size; monotonic with generalization, not
    with suppression.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    min_class_size = None
    compiled_kind = "t-closeness"

    @property
    def requires(self) -> Requirement:
        need = super().requires
        return need | Requirement.SENSITIVE_HIERARCHY if self.hierarchy is not None else need

    def __init__(self, attribute: str, t: float, distance: str = "equal", hierarchy=None,
                 order: Sequence[str] | None = None):
        super().__init__(attribute)
        self.t = check_number("t", t, 0.0, 1.0)
        if distance not in TCLOSENESS_DISTANCES:
            raise InputError(f"distance must be one of {TCLOSENESS_DISTANCES}, got {distance!r}")
        self.distance = distance
        if distance == "hierarchical":
            if hierarchy is None:
                raise InputError("t-closeness with hierarchical distance needs the sensitive "
                                 f"attribute's hierarchy (hierarchy=...) for {attribute!r}")
            if isinstance(hierarchy, (str, os.PathLike)):
                hierarchy = Hierarchy.from_csv(hierarchy)
            if not isinstance(hierarchy, Hierarchy):
                raise InputTypeError(f"hierarchy must be a Hierarchy or a CSV path, got "
                                f"{type(hierarchy).__name__}")
            if hierarchy.height < 1:
                raise HierarchyError(f"{hierarchy.name}: t-closeness with hierarchical distance "
                                     "needs a hierarchy with at least two levels")
        elif hierarchy is not None:
            raise InputError(f"hierarchy is only used with distance='hierarchical', not "
                             f"{distance!r}")
        if order is not None:
            if distance != "ordered":
                raise InputError(f"order is only used with distance='ordered', not {distance!r}")
            order = [str(v) for v in order]
            if len(set(order)) != len(order):
                raise InputError("order lists a value twice")
        self.hierarchy = hierarchy
        self.order = order

    # -- binding -------------------------------------------------------------------------
    def _bind(self, encoded):
        xp = self.backend.xp
        counts = self._global_counts()
        self._counts = counts                                         # P_v
        self._q = counts.astype(xp.float64) / float(self.n_rows)      # q_v = P_v / R
        if self.distance == "ordered":
            self._bind_ordered(self.labels, encoded.types.get(self.sensitive_attribute))
        elif self.distance == "hierarchical":
            self._bind_tree(self.labels)

    def _bind_ordered(self, labels, declared=None):
        """The values' order: ``order`` when given, else the attribute's ``declared`` data
        type's (:meth:`~gpuppdp.core.datatypes.DataType.sort`, as ARX orders by the type),
        else numeric; an ``order`` that the declared type contradicts is an error."""
        labels = [str(v) for v in labels]
        if self.order is not None:
            pos = {v: i for i, v in enumerate(self.order)}
            missing = [v for v in labels if v not in pos]
            if missing:
                raise InputError(f"t-closeness with ordered distance: value(s) of "
                                 f"{self.sensitive_attribute!r} not in order: "
                                 f"{format_values(missing)}")
            key = np.array([pos[v] for v in labels], dtype=np.float64)
            if declared is not None:
                self._check_type_agrees(labels, key, declared)
        elif declared is not None:
            pos = {v: i for i, v in enumerate(declared.sort(labels, self.sensitive_attribute))}
            key = np.array([pos[v] for v in labels], dtype=np.float64)
        else:
            key, bad = np.empty(len(labels)), []
            for i, v in enumerate(labels):
                try:
                    key[i] = float(v)
                except ValueError:
                    bad.append(v)
            if bad or not np.isfinite(key).all():
                bad = bad or [v for v, k in zip(labels, key) if not np.isfinite(k)]
                raise hinted(
                    f"t-closeness with ordered distance orders {self.sensitive_attribute!r} "
                    f"numerically, but some values are not numbers: {format_values(bad)}; ",
                    "pass order=[...] (every value, in order) for ordinal values",
                    f"give --order {self.sensitive_attribute}=V1,V2,... (every value, in "
                    "order) or --order lexical")
        order = np.argsort(key, kind="stable")    # ARX: a stable sort of the dictionary
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        self._rank = self.backend.asarray(rank)                       # code -> position
        self._order = order.astype(np.int64)                          # position -> code
        self._q_ordered = self._q[self.backend.asarray(order)]
        self._threshold = self.t * (len(labels) - 1.0)

    def _check_type_agrees(self, labels, key, declared) -> None:
        """An error naming both when ``order`` (the positions ``key`` of ``labels``) and the
        ``declared`` type put two values the other way round."""
        by_type = declared.sort(labels, self.sensitive_attribute)
        by_order = [labels[i] for i in np.argsort(key, kind="stable")]
        if by_order == by_type:
            return
        i = next(i for i, (a, b) in enumerate(zip(by_order, by_type)) if a != b)
        name = self.sensitive_attribute
        raise hinted(
            f"t-closeness with ordered distance on {name!r}: the order given puts "
            f"{by_order[i]!r} where its declared type {declared.describe()!r} puts "
            f"{by_type[i]!r} (the type orders {format_values(by_type, 6)}); ",
            "give order=[...] or types={...} for it, not both, or make them agree",
            f"give --order {name}=... or --type {name}=..., not both, or make them agree")

    def _bind_tree(self, labels):
        """ARX's tree (``DataManager.getTree``) over the values present in the data: per level
        ``L >= 1`` its nodes in order of first appearance when the leaves are scanned in code
        order, each with its children (leaves at ``L = 1``, nodes of ``L - 1`` above)."""
        be = self.backend
        h = self.hierarchy
        leaf, _ = encode_column(np.asarray(labels, dtype=object), domain=h.leaves,
                                name=self.sensitive_attribute)
        self._height = h.height
        levels = []     # per level: (weight L/H, [device indices of each node's children])
        child_node = np.arange(len(labels))       # node of each code at the level below
        for level in range(1, h.height + 1):
            node = encode_column(h.codes(level)[leaf])[0].astype(np.int32)
            parent = np.empty(int(child_node.max()) + 1, dtype=np.int64)
            parent[child_node] = node
            children = [be.asarray(np.flatnonzero(parent == k).astype(np.int64))
                        for k in range(int(node.max()) + 1)]
            levels.append((level / h.height, children))
            child_node = node
        self._levels = levels
        self._n_inner = sum(len(children) for _, children in levels)

    # -- evaluation ----------------------------------------------------------------------
    def class_fails(self, classes: Classes):
        self._require_bound(classes)
        if self.distance == "equal":
            return self._equal(classes) > self.t
        if self.distance == "ordered":
            return self._ordered(classes) > self._threshold   # ARX: sum <= t (m - 1)
        return self._hierarchical(classes) > self.t

    def distances(self, classes: Classes):
        """The distance of every class (device float64): ``D`` as defined above (for the
        ordered distance normalized by ``m - 1``; the verdict uses ARX's unnormalized test)."""
        self._require_bound(classes)
        if self.distance == "ordered":
            return self._ordered(classes) / max(self.n_values - 1.0, 1.0)
        return {"equal": self._equal, "hierarchical": self._hierarchical}[self.distance](classes)

    def _equal(self, classes: Classes):
        xp = classes.xp
        cls, sens, count, start = classes.sensitive_histogram()
        q = self._q[sens]
        p = count.astype(xp.float64) / classes.size.astype(xp.float64)[cls]
        terms = xp.abs(q - p) - q
        return kernels.ordered_sums(self.backend, terms, start, 1.0) / 2.0

    def _chunks(self, classes: Classes, width: int):
        """``(c0, c1, cls, sens, count)``: runs of classes whose dense (classes x width)
        matrices stay under ``_DENSE_CELLS`` cells, with their histogram entries (in any
        order: dense matrices need no sorting)."""
        n_classes = classes.n_classes
        step = max(1, _DENSE_CELLS // max(width, 1))
        if n_classes <= step:
            xp = classes.xp
            yield (0, n_classes, classes.entry_class.astype(xp.int64),
                   classes.entry_sens.astype(xp.int64), classes.entry_count.astype(xp.int64))
            return
        xp = classes.xp
        cls = classes.entry_class.astype(xp.int64)
        for c0 in range(0, n_classes, step):
            c1 = min(n_classes, c0 + step)
            mine = (cls >= c0) & (cls < c1)
            yield (c0, c1, cls[mine], classes.entry_sens[mine].astype(xp.int64),
                   classes.entry_count[mine].astype(xp.int64))

    def _ordered(self, classes: Classes):
        """Per class ``sum_i |sum_{j<=i} (p_j - q_j)|`` in the attribute's order."""
        xp = classes.xp
        m = self.n_values
        parts = []
        for c0, c1, cls, sens, count in self._chunks(classes, m):
            rows = c1 - c0
            p = xp.zeros((rows, m), dtype=xp.float64)
            p[cls - c0, self._rank[sens]] = \
                count.astype(xp.float64) / classes.size.astype(xp.float64)[cls]
            diff = (p - self._q_ordered[None, :]).reshape(-1)
            ptr = xp.arange(rows + 1, dtype=xp.int64) * m
            parts.append(kernels.ordered_sums(self.backend, diff, ptr, 0.0, abs_prefix=True))
        return _concat(xp, parts)

    def _hierarchical(self, classes: Classes):
        """Per class ARX's hierarchical EMD ``sum_N (L_N/H) min(pos_N, neg_N) / (R n)``.

        Integer arithmetic (int64: exact, where ARX's int would overflow once R n >= 2^31) on
        (value x class) matrices, so that each node's sums add contiguous rows; the float
        cost terms are then added per class in ARX's node order by the ordered-sum kernel."""
        xp = classes.xp
        big_r = self.n_rows
        parts = []
        for c0, c1, cls, sens, count in self._chunks(classes, self.n_values + self._n_inner):
            n = classes.size[c0:c1].astype(xp.int64)
            extra = xp.outer(self._counts, n)                 # P_v n  (values x classes)
            extra[sens, cls - c0] -= count * big_r            # - f_v R; (class, value) unique
            terms = []
            for weight, children in self._levels:
                positive = xp.maximum(extra, 0)
                pos = xp.stack([positive[c].sum(axis=0) for c in children])
                neg = pos - xp.stack([extra[c].sum(axis=0) for c in children])
                terms.append(weight * xp.minimum(pos, neg).astype(xp.float64))
                extra = pos - neg
            cost_terms = xp.ascontiguousarray(xp.concatenate(terms).T).reshape(-1)
            ptr = xp.arange(c1 - c0 + 1, dtype=xp.int64) * self._n_inner
            cost = kernels.ordered_sums(self.backend, cost_terms, ptr, 0.0)
            parts.append(cost / (float(big_r) * n.astype(xp.float64)))
        return _concat(xp, parts)

    # -- the compiled Flash's check (:mod:`gpuppdp.engine.search.flash_classes`) --------------
    def compiled_check(self) -> CompiledCheck:
        """``t`` (the ordered distance: ARX's unnormalized threshold ``t (m - 1)``), the
        distance's number (its place in :data:`TCLOSENESS_DISTANCES`), the values' shares of
        the table and, for the hierarchical distance, the tree (per level its node count,
        child offsets and children) and the values' counts; for the ordered one, the codes in
        the attribute's order."""
        be = self.backend
        ordered = self.distance == "ordered"
        numbers = {"t": self._threshold if ordered else self.t,
                   "distance": TCLOSENESS_DISTANCES.index(self.distance)}
        arrays = {"shares": be.to_host(self._q)}
        if self.distance == "hierarchical":
            arrays["tree"] = self._flat_tree()
            arrays["value_counts"] = np.append(be.to_host(self._counts),
                                               self.n_rows).astype(np.int64)
        elif ordered:
            arrays["order"] = self._order
        return CompiledCheck("t-closeness", self.sensitive_attribute, numbers, arrays)

    def _flat_tree(self) -> np.ndarray:
        """The tree of :meth:`_bind_tree` flattened: the height, then per level its node count
        K, K + 1 child offsets and the children (indices into the level below)."""
        out = [len(self._levels)]
        for _, children in self._levels:
            kids = [np.asarray(self.backend.to_host(c), np.int64) for c in children]
            out += [len(kids)] + np.concatenate([[0], np.cumsum([len(c) for c in kids])]).tolist()
            out += np.concatenate(kids).tolist() if kids else []
        return np.array(out, np.int64)

    def describe(self) -> dict:
        out = {"model": "t-closeness", "distance": self.distance,
               "attribute": self.sensitive_attribute, "t": plain_number(self.t)}
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy.name
        return out

    def __repr__(self) -> str:
        return (f"TCloseness({self.sensitive_attribute!r}, t={plain_number(self.t)}, "
                f"distance={self.distance!r})")


def _concat(xp, parts):
    if not parts:
        return xp.zeros(0, dtype=xp.float64)
    return parts[0] if len(parts) == 1 else xp.concatenate(parts)
