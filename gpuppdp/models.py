"""Privacy models as plug-ins (ARX's ``criteria.PrivacyCriterion`` split).

A model declares what per-class data it needs, the smallest class it tolerates and whether it is
monotonic with generalization and with suppression (the pruning search may only use sound
flags).  It judges all classes of a batch of nodes at once: :meth:`PrivacyModel.class_fails`
returns one verdict per class, on the device.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from numba import njit

from . import kernels
from .hierarchy import Hierarchy, HierarchyError, first_appearance_codes, format_values

__all__ = ["PrivacyModel", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity",
           "RecursiveCLDiversity", "TCloseness", "AlphaKAnonymity", "DeltaDisclosurePrivacy",
           "BetaLikeness", "PrivacyLoss", "KAnonymityOnSubsets", "LKCPrivacy", "Classes"]


@dataclass
class Classes:
    """Equivalence classes of a batch of nodes, in canonical order (device arrays).

    ``size`` (C,) records per class; ``node`` (C,) node index of each class; ``ptr`` (B+1,)
    class offsets per node (``host_ptr`` on the host); ``codes`` (C, q) QID codes at the node's
    levels; ``distinct`` (C,) number of distinct sensitive values (``None`` without a sensitive
    attribute); ``entry_class``/``entry_sens``/``entry_count`` the per-class sensitive
    histograms as (class, value, count) triples of the code the frequency set carries;
    ``levels`` (B, q) host array of the nodes' generalization levels;
    ``sensitive_maps`` maps each sensitive attribute to ``(carried code -> its code, number of
    its values)`` when the carried code combines several attributes (see :meth:`for_attribute`).
    """

    xp: object
    size: object
    node: object
    ptr: object
    host_ptr: object
    codes: object
    distinct: object = None
    entry_class: object = None
    entry_sens: object = None
    entry_count: object = None
    levels: np.ndarray | None = None
    sensitive_maps: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_classes(self) -> int:
        return int(self.host_ptr[-1])

    def for_attribute(self, name: str | None) -> "Classes":
        """These classes with the histograms of sensitive attribute ``name``: the carried
        histograms re-aggregated per (class, value of ``name``) when the frequency set carries
        combinations of several attributes (computed once per batch), else ``self``."""
        if name is None or name not in self.sensitive_maps:
            return self
        hit = self._cache.get(("attribute", name))
        if hit is None:
            xp = self.xp
            from_carried, n_values = self.sensitive_maps[name]
            key = self.entry_class.astype(xp.int64) * n_values + \
                from_carried[self.entry_sens.astype(xp.int64)]
            order = xp.argsort(key)
            key = key[order]
            total = xp.cumsum(self.entry_count.astype(xp.int64)[order])
            last = xp.flatnonzero(xp.concatenate([key[1:] != key[:-1],
                                                  xp.ones(1, dtype=xp.bool_)]))
            count = xp.diff(xp.concatenate([xp.zeros(1, dtype=xp.int64), total[last]]))
            entry_class = key[last] // n_values
            hit = Classes(xp, self.size, self.node, self.ptr, self.host_ptr, self.codes,
                          xp.bincount(entry_class, minlength=self.size.shape[0]).astype(xp.int64),
                          entry_class, key[last] % n_values, count, levels=self.levels)
            self._cache[("attribute", name)] = hit
        return hit

    def sensitive_histogram(self):
        """The per-class sensitive histograms as ARX walks them: entries sorted by (class,
        sensitive code), ``(cls, sens, count, start)`` with class ``c`` owning entries
        ``start[c]:start[c+1]`` (``start`` has C+1 offsets; every class has >= 1 entry).
        Computed once per batch and shared by the models (device arrays)."""
        hit = self._cache.get("histogram")
        if hit is None:
            if self.entry_class is None or self.distinct is None:
                raise ValueError("these classes carry no sensitive histograms (no sensitive "
                                 "attribute was encoded)")
            xp = self.xp
            key = self.entry_class.astype(xp.int64) * (1 << 32) + \
                self.entry_sens.astype(xp.int64)
            order = xp.argsort(key)
            start = xp.concatenate([xp.zeros(1, dtype=xp.int64),
                                    xp.cumsum(self.distinct.astype(xp.int64))])
            hit = (self.entry_class[order].astype(xp.int64),
                   self.entry_sens[order].astype(xp.int64),
                   self.entry_count[order].astype(xp.int64), start)
            self._cache["histogram"] = hit
        return hit

    def entropy_bits(self):
        """Shannon entropy in bits of each class's sensitive histogram (device float64)."""
        xp = self.xp
        cls = self.entry_class.astype(xp.int64)
        share = self.entry_count.astype(xp.float64) / self.size.astype(xp.float64)[cls]
        return -xp.bincount(cls, weights=share * xp.log2(share), minlength=self.n_classes)

    def per_node(self, values):
        """Exact per-node totals of a per-class array (integer cumsum, no float rounding)."""
        xp = self.xp
        if self.host_ptr.shape[0] == 2:  # one node
            return xp.reshape(values.sum(), (1,))
        cs = xp.concatenate([xp.zeros(1, dtype=values.dtype), xp.cumsum(values)])
        return cs[self.ptr[1:]] - cs[self.ptr[:-1]]


class PrivacyModel:
    """Base class of privacy models.

    Attributes
    ----------
    min_class_size : int or None
        Classes smaller than this fail (k for k-anonymity, ceil(l) for l-diversity).
    sensitive_attribute : str or None
        The attribute whose per-class histograms the model needs.
    monotonic_with_generalization, monotonic_with_suppression : bool
        Soundness flags used by the pruning search (Kohlmayer et al. 2012, Flash).
    judges_released_classes : bool
        See the attribute's comment.
    """

    min_class_size: int | None = None
    sensitive_attribute: str | None = None
    monotonic_with_generalization: bool = True
    monotonic_with_suppression: bool = True
    #: True for models whose verdict on a class depends on which other classes are released:
    #: their ``class_fails(classes, suppressed)`` takes the classes suppressed so far
    judges_released_classes: bool = False

    def bind(self, encoded) -> "PrivacyModel":
        """Precompute what the model needs from the encoded table (the sensitive attribute's
        global distribution, its hierarchy tree, ...); returns ``self``.  Called once per
        table before any :meth:`class_fails` (the default needs nothing)."""
        return self

    def class_fails(self, classes: Classes):
        """Boolean device array, True for classes violating the model (beyond the size test),
        or ``None`` when the size test is all there is."""
        return None

    def describe(self) -> dict:
        raise NotImplementedError


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
            isinstance(value, float) and value.is_integer()):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class KAnonymity(PrivacyModel):
    """k-anonymity: every equivalence class holds at least ``k`` records (Sweeney 2002)."""

    def __init__(self, k: int):
        self.k = _check_int("k", k, 1)
        self.min_class_size = self.k

    def describe(self) -> dict:
        return {"model": "k-anonymity", "k": self.k}

    def __repr__(self) -> str:
        return f"KAnonymity(k={self.k})"


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: at least ``l`` distinct sensitive values per class
    (Machanavajjhala et al. 2007)."""

    def __init__(self, attribute: str, l: int):  # noqa: E741 - the literature's name
        if not isinstance(attribute, str) or not attribute:
            raise ValueError(f"attribute must be a column name, got {attribute!r}")
        self.sensitive_attribute = attribute
        self.l = _check_int("l", l, 1)
        self.min_class_size = math.ceil(self.l)

    def class_fails(self, classes: Classes):
        return classes.distinct < self.l

    def describe(self) -> dict:
        return {"model": "distinct-l-diversity", "attribute": self.sensitive_attribute,
                "l": self.l}

    def __repr__(self) -> str:
        return f"DistinctLDiversity({self.sensitive_attribute!r}, l={self.l})"


# ---------------------------------------------------------------------------------------
# models on the per-class sensitive histograms
# ---------------------------------------------------------------------------------------
def _check_number(name: str, value, minimum: float, maximum: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or not minimum <= float(value) <= maximum:
        bounds = f">= {minimum}" if maximum == math.inf else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be a finite number {bounds}, got {value!r}")
    return float(value)


def _plain(value: float):
    """``3.0 -> 3`` for the JSON summary, other floats unchanged."""
    return int(value) if float(value).is_integer() else value


#: ln(k) for k = 0..LOG_TABLE_MAX is tabulated once (ln 0 is stored as 0 and never used);
#: larger counts (classes of more than ~4M records) are looked up through their unique values.
LOG_TABLE_MAX = 1 << 22


@njit(cache=True)
def _log_table(n):
    """``math.log`` (the C library's log, as Python's ``math.log``) of 0..n; entry 0 is 0."""
    out = np.empty(n + 1, dtype=np.float64)
    out[0] = 0.0
    for k in range(1, n + 1):
        out[k] = math.log(k)
    return out


class _SensitiveModel(PrivacyModel):
    """A model judging each class's histogram of one sensitive attribute.

    :meth:`bind` records the backend and the table's size; models that need more from the
    table (the global distribution, an order, a tree) extend it.  Evaluating a model that was
    never bound raises a clear error.
    """

    _encoded = None

    def __init__(self, attribute: str):
        if not isinstance(attribute, str) or not attribute:
            raise ValueError(f"attribute must be a column name, got {attribute!r}")
        self.sensitive_attribute = attribute

    def bind(self, encoded):
        if encoded is self._encoded:
            return self
        column = encoded.sensitive_column(self.sensitive_attribute)
        if encoded.n_rows >= 2 ** 31:
            raise ValueError(f"{self!r}: tables of 2^31 rows or more are not supported "
                             f"({encoded.n_rows} rows)")
        self.backend = encoded.backend
        self.n_rows = int(encoded.n_rows)
        self.n_values = len(column.labels)
        self.labels = column.labels
        self._codes = column.codes
        self._bind(encoded)
        self._encoded = encoded
        return self

    def _bind(self, encoded) -> None:
        pass

    def _require_bound(self, classes: Classes) -> None:
        if self._encoded is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        if classes.entry_class is None:
            raise ValueError(f"{self!r} needs the per-class histograms of "
                             f"{self.sensitive_attribute!r}, but the classes carry none")

    def _global_counts(self):
        """Device int64 (m,): count of each sensitive value over all rows of the table."""
        xp = self.backend.xp
        return xp.bincount(self._codes.astype(xp.int64),
                           minlength=self.n_values).astype(xp.int64)


class EntropyLDiversity(_SensitiveModel):
    """Entropy l-diversity (Machanavajjhala et al. 2007) as ARX 3.9.2 evaluates it (Shannon
    estimator): a class of ``n`` records passes iff it holds at least ``ceil(l)`` distinct
    sensitive values and ``sum_v f_v ln f_v <= n (ln n - ln l)``, i.e. its entropy is at least
    ``ln l``.  The sum is accumulated in ascending sensitive code, as ARX does, with the same
    double operations, so verdicts at the threshold match ARX's bit for bit.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def __init__(self, attribute: str, l: float):  # noqa: E741 - the literature's name
        super().__init__(attribute)
        self.l = _check_number("l", l, 1.0)
        self.min_class_size = math.ceil(self.l)
        self._ln_l = math.log(self.l)

    def _bind(self, encoded):
        size = min(self.n_rows, LOG_TABLE_MAX)
        self._ln_max = size
        self._ln = self.backend.asarray(_log_table(size))

    def _log(self, values):
        """``math.log`` of positive int64 device values, elementwise (device float64)."""
        be, xp = self.backend, self.backend.xp
        if self._ln_max >= self.n_rows:  # every count is at most the number of rows
            return self._ln[values]
        out = self._ln[xp.minimum(values, self._ln_max)]
        big = values > self._ln_max
        if int(big.sum()):
            uniq, inverse = np.unique(be.to_host(values[big]), return_inverse=True)
            logs = np.array([math.log(int(u)) for u in uniq], dtype=np.float64)
            out[big] = be.asarray(logs[inverse.reshape(-1)])
        return out

    def _sum_flogf(self, classes: Classes):
        """Per class ``sum_v f_v ln f_v`` in ascending sensitive code (device float64)."""
        xp = classes.xp
        cls, sens, count, start = classes.sensitive_histogram()
        terms = count.astype(xp.float64) * self._log(count)           # f * ln f
        return kernels.ordered_sums(self.backend, terms, start, 0.0)  # ascending code order

    def class_fails(self, classes: Classes):
        self._require_bound(classes)
        xp = classes.xp
        total = self._sum_flogf(classes)
        n = classes.size.astype(xp.int64)
        threshold = n.astype(xp.float64) * (self._log(n) - self._ln_l)  # n (ln n - ln l)
        return (classes.distinct < self.min_class_size) | (threshold < total)

    def entropies(self, classes: Classes):
        """Shannon entropy (natural log) of every class's sensitive distribution (device
        float64): ``ln n - sum_v f_v ln f_v / n``; a class is entropy l-diverse for every
        ``l <= exp(H)``."""
        self._require_bound(classes)
        xp = classes.xp
        n = classes.size.astype(xp.int64)
        h = self._log(n) - self._sum_flogf(classes) / n.astype(xp.float64)
        return xp.maximum(h, 0.0)

    def describe(self) -> dict:
        return {"model": "entropy-l-diversity", "attribute": self.sensitive_attribute,
                "l": _plain(self.l), "log": "shannon"}

    def __repr__(self) -> str:
        return f"EntropyLDiversity({self.sensitive_attribute!r}, l={_plain(self.l)})"


class RecursiveCLDiversity(_SensitiveModel):
    """Recursive (c, l)-diversity (Machanavajjhala et al. 2007) as ARX evaluates it: with the
    class's ``d`` value frequencies sorted ascending ``r[0] <= ... <= r[d-1]``, a class passes
    iff ``d >= l`` and ``r[d-1] < c * (r[0] + ... + r[d-l])`` -- the most frequent value is
    rarer than ``c`` times the ``l``-th most frequent and all rarer ones together.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def __init__(self, attribute: str, c: float, l: int):  # noqa: E741
        super().__init__(attribute)
        self.c = _check_number("c", c, 0.0)
        if self.c <= 0:
            raise ValueError(f"c must be a finite number > 0, got {c!r}")
        self.l = _check_int("l", l, 1)
        self.min_class_size = self.l

    @staticmethod
    def _top_low(classes: Classes, l: int):  # noqa: E741
        """``(top, low, enough)`` per class: the largest frequency ``r[d-1]``, the sum
        ``r[0] + ... + r[d-l]`` (exact integers as float64) and ``d >= l``."""
        xp = classes.xp
        # the entries grouped by class, each class's frequencies ascending
        count = classes.entry_count.astype(xp.int64)
        r = count[xp.argsort(classes.entry_class.astype(xp.int64) * (1 << 32) + count)]
        cs = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(r)])
        d = classes.distinct.astype(xp.int64)
        stop = xp.cumsum(d)
        first = stop - d
        enough = d >= l
        last_low = xp.where(enough, first + d - l, first)  # index of r[d-l] in the class
        low = (cs[last_low + 1] - cs[first]).astype(xp.float64)   # r[0] + ... + r[d-l], exact
        top = r[stop - 1].astype(xp.float64)                      # r[d-1]
        return top, low, enough

    def class_fails(self, classes: Classes):
        self._require_bound(classes)
        xp = classes.xp
        if classes.entry_count.shape[0] == 0:
            return xp.zeros(0, dtype=xp.bool_)
        top, low, enough = self._top_low(classes, self.l)
        return ~enough | ~(top < low * self.c)

    def ratios(self, classes: Classes):
        """Per class ``r[d-1] / (r[0] + ... + r[d-l])`` with this model's ``l`` (device
        float64; ``inf`` for classes of fewer than ``l`` values, or when that sum is 0): the
        class is recursive (c, l)-diverse for every ``c`` above it.  With ``l = 2`` this is the
        most frequent value's count over all the others'."""
        self._require_bound(classes)
        xp = classes.xp
        if classes.entry_count.shape[0] == 0:
            return xp.zeros(0, dtype=xp.float64)
        top, low, enough = self._top_low(classes, self.l)
        ok = enough & (low > 0)
        return xp.where(ok, top / xp.maximum(low, 1.0), xp.inf)

    def describe(self) -> dict:
        return {"model": "recursive-cl-diversity", "attribute": self.sensitive_attribute,
                "c": _plain(self.c), "l": self.l}

    def __repr__(self) -> str:
        return (f"RecursiveCLDiversity({self.sensitive_attribute!r}, c={_plain(self.c)}, "
                f"l={self.l})")


TCLOSENESS_DISTANCES = ("equal", "ordered", "hierarchical")

#: dense per-class matrices (ordered and hierarchical distance) are built for at most this
#: many (class x sensitive value) cells at a time
_DENSE_CELLS = 1 << 23


class TCloseness(_SensitiveModel):
    """t-closeness (Li, Li & Venkatasubramanian 2007): the earth mover's distance between each
    class's sensitive distribution and the whole table's is at most ``t``.

    The global distribution is taken over all rows of the input, before generalization and
    suppression (ARX's ``DataManager.getDistribution``).  Ground distances:

    * ``"equal"``: every pair of values is 1 apart; ARX's evaluation
      ``D = (1 + sum_{v in E} (|q_v - p_v| - q_v)) / 2``, summed in ascending sensitive code;
    * ``"ordered"``: values ordered (numerically by default, or by ``order``, a list of every
      value) and ``|i - j| / (m - 1)`` apart; ``D = sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1)``,
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

    def __init__(self, attribute: str, t: float, distance: str = "equal", hierarchy=None,
                 order: Sequence[str] | None = None):
        super().__init__(attribute)
        self.t = _check_number("t", t, 0.0, 1.0)
        if distance not in TCLOSENESS_DISTANCES:
            raise ValueError(f"distance must be one of {TCLOSENESS_DISTANCES}, got {distance!r}")
        self.distance = distance
        if distance == "hierarchical":
            if hierarchy is None:
                raise ValueError("t-closeness with hierarchical distance needs the sensitive "
                                 f"attribute's hierarchy (hierarchy=...) for {attribute!r}")
            if isinstance(hierarchy, (str, os.PathLike)):
                hierarchy = Hierarchy.from_csv(hierarchy)
            if not isinstance(hierarchy, Hierarchy):
                raise TypeError(f"hierarchy must be a Hierarchy or a CSV path, got "
                                f"{type(hierarchy).__name__}")
            if hierarchy.height < 1:
                raise HierarchyError(f"{hierarchy.name}: t-closeness with hierarchical distance "
                                     "needs a hierarchy with at least two levels")
        elif hierarchy is not None:
            raise ValueError(f"hierarchy is only used with distance='hierarchical', not "
                             f"{distance!r}")
        if order is not None:
            if distance != "ordered":
                raise ValueError(f"order is only used with distance='ordered', not {distance!r}")
            order = [str(v) for v in order]
            if len(set(order)) != len(order):
                raise ValueError("order lists a value twice")
        self.hierarchy = hierarchy
        self.order = order

    # -- binding -------------------------------------------------------------------------
    def _bind(self, encoded):
        xp = self.backend.xp
        counts = self._global_counts()
        self._counts = counts                                         # P_v
        self._q = counts.astype(xp.float64) / float(self.n_rows)      # q_v = P_v / R
        if self.distance == "ordered":
            self._bind_ordered(self.labels)
        elif self.distance == "hierarchical":
            self._bind_tree(self.labels)

    def _bind_ordered(self, labels):
        labels = [str(v) for v in labels]
        if self.order is not None:
            pos = {v: i for i, v in enumerate(self.order)}
            missing = [v for v in labels if v not in pos]
            if missing:
                raise ValueError(f"t-closeness with ordered distance: value(s) of "
                                 f"{self.sensitive_attribute!r} not in order: "
                                 f"{format_values(missing)}")
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
                raise ValueError(
                    f"t-closeness with ordered distance orders {self.sensitive_attribute!r} "
                    f"numerically, but some values are not numbers: {format_values(bad)}; "
                    "pass order=[...] (every value, in order) for ordinal values")
        order = np.argsort(key, kind="stable")    # ARX: a stable sort of the dictionary
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        self._rank = self.backend.asarray(rank)                       # code -> position
        self._q_ordered = self._q[self.backend.asarray(order)]
        self._threshold = self.t * (len(labels) - 1.0)

    def _bind_tree(self, labels):
        """ARX's tree (``DataManager.getTree``) over the values present in the data: per level
        ``L >= 1`` its nodes in order of first appearance when the leaves are scanned in code
        order, each with its children (leaves at ``L = 1``, nodes of ``L - 1`` above)."""
        be = self.backend
        h = self.hierarchy
        leaf = h.leaf_codes(np.asarray(labels, dtype=object), attribute=self.sensitive_attribute)
        self._height = h.height
        levels = []     # per level: (weight L/H, [device indices of each node's children])
        child_node = np.arange(len(labels))       # node of each code at the level below
        for level in range(1, h.height + 1):
            _, node = first_appearance_codes(h.codes(level)[leaf])
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

    def describe(self) -> dict:
        out = {"model": "t-closeness", "distance": self.distance,
               "attribute": self.sensitive_attribute, "t": _plain(self.t)}
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy.name
        return out

    def __repr__(self) -> str:
        return (f"TCloseness({self.sensitive_attribute!r}, t={_plain(self.t)}, "
                f"distance={self.distance!r})")


def _concat(xp, parts):
    if not parts:
        return xp.zeros(0, dtype=xp.float64)
    return parts[0] if len(parts) == 1 else xp.concatenate(parts)


# ---------------------------------------------------------------------------------------
# frequency-based models: (alpha, k)-anonymity, delta-disclosure, beta-likeness, (eps, alpha)
# privacy loss.  Each exposes its per-class statistic (one formula, shared with the checker).
# ---------------------------------------------------------------------------------------
def _entry_shares(classes: Classes):
    """``(cls, sens, share)`` of every histogram entry: ``share = f_v / n`` (device)."""
    xp = classes.xp
    cls = classes.entry_class.astype(xp.int64)
    share = classes.entry_count.astype(xp.float64) / classes.size.astype(xp.float64)[cls]
    return cls, classes.entry_sens.astype(xp.int64), share


def _segment_max(xp, cls, values, n_classes: int, empty: float = 0.0):
    """Largest ``values`` entry of each class (``empty`` for classes without entries)."""
    out = xp.full(n_classes, empty, dtype=xp.float64)
    if values.shape[0] == 0:
        return out
    order = xp.lexsort(xp.stack([values.astype(xp.float64), cls.astype(xp.float64)]))
    c, v = cls[order], values[order].astype(xp.float64)
    last = xp.concatenate([c[1:] != c[:-1], xp.ones(1, dtype=xp.bool_)])
    out[c[last]] = v[last]
    return out


def _segment_sum(xp, cls, values, n_classes: int):
    return xp.bincount(cls, weights=values.astype(xp.float64), minlength=n_classes)


class _DistributionModel(_SensitiveModel):
    """A sensitive-attribute model that compares classes with the table's distribution
    ``p`` (over all rows of the input, before generalization and suppression)."""

    def _bind(self, encoded):
        xp = self.backend.xp
        self._counts = self._global_counts()
        self._p = self._counts.astype(xp.float64) / float(self.n_rows)


class AlphaKAnonymity(_SensitiveModel):
    """(alpha, k)-anonymity (Wong, Li, Fu & Wang 2006): every class holds at least ``k``
    records and the relative frequency of every sensitive value in it -- or, with ``value``,
    of that one sensitive value -- is at most ``alpha``.

    Monotonic with generalization (a merged class's frequencies are weighted averages of its
    parts', so never above their largest), not with suppression.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def __init__(self, attribute: str, alpha: float, k: int = 1, value: str | None = None):
        super().__init__(attribute)
        self.alpha = _check_number("alpha", alpha, 0.0, 1.0)
        self.k = _check_int("k", k, 1)
        self.min_class_size = self.k
        if value is not None and not isinstance(value, str):
            raise ValueError(f"value must be a sensitive value (a string), got {value!r}")
        self.value = value

    def _bind(self, encoded):
        labels = [str(v) for v in self.labels]
        self._code = labels.index(self.value) if self.value in labels else -1

    def alphas(self, classes: Classes):
        """Per class the largest relative frequency of a sensitive value (of ``value`` when
        given; 0 where it is absent) -- device float64."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = _entry_shares(classes)
        if self.value is None:
            return _segment_max(xp, cls, share, classes.n_classes)
        return _segment_sum(xp, cls, xp.where(sens == self._code, share, 0.0),
                            classes.n_classes)

    def class_fails(self, classes: Classes):
        return self.alphas(classes) > self.alpha

    def describe(self) -> dict:
        out = {"model": "alpha-k-anonymity", "attribute": self.sensitive_attribute,
               "alpha": _plain(self.alpha), "k": self.k}
        if self.value is not None:
            out["value"] = self.value
        return out

    def __repr__(self) -> str:
        extra = "" if self.value is None else f", value={self.value!r}"
        return (f"AlphaKAnonymity({self.sensitive_attribute!r}, alpha={_plain(self.alpha)}, "
                f"k={self.k}{extra})")


class DeltaDisclosurePrivacy(_DistributionModel):
    """delta-disclosure privacy (Brickell & Shmatikov 2008): for every class and every
    sensitive value ``v`` present in it, ``|log2(p_E(v) / p(v))| < delta`` with ``p`` the whole
    table's distribution.

    The logarithm is to base 2, computed as ``ln(x) / ln 2`` as ARX's ``DDisclosurePrivacy``
    does, so verdicts match ARX's (the paper leaves the base open; a natural-log ``delta``
    is ``delta / ln 2`` here).  Neither monotonic with generalization (a merged class can hold
    a value much rarer than in the part that had it) nor with suppression, as in ARX.
    """

    monotonic_with_generalization = False
    monotonic_with_suppression = False
    min_class_size = None

    def __init__(self, attribute: str, delta: float):
        super().__init__(attribute)
        self.delta = _check_number("delta", delta, 0.0)
        if self.delta <= 0:
            raise ValueError(f"delta must be a finite number > 0, got {delta!r}")

    def deltas(self, classes: Classes):
        """Per class ``max_v |log2(p_E(v) / p(v))|`` over the values present (device float64)."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = _entry_shares(classes)
        return _segment_max(xp, cls, xp.abs(xp.log(share / self._p[sens]) / math.log(2)),
                            classes.n_classes)

    def class_fails(self, classes: Classes):
        return ~(self.deltas(classes) < self.delta)

    def describe(self) -> dict:
        return {"model": "delta-disclosure", "attribute": self.sensitive_attribute,
                "delta": _plain(self.delta)}

    def __repr__(self) -> str:
        return f"DeltaDisclosurePrivacy({self.sensitive_attribute!r}, delta={_plain(self.delta)})"


class BetaLikeness(_DistributionModel):
    """beta-likeness (Cao & Karras 2012): for every class and every sensitive value with
    ``p_E(v) > p(v)``, the relative gain ``(p_E(v) - p(v)) / p(v)`` is at most ``beta``
    (basic), or at most ``min(beta, -ln p(v))`` (``enhanced=True``).

    Monotonic with generalization (a merged class's ``p_E(v)`` is at most its parts' largest,
    and the bound depends on ``v`` only), not with suppression.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    min_class_size = None

    def __init__(self, attribute: str, beta: float, enhanced: bool = False):
        super().__init__(attribute)
        self.beta = _check_number("beta", beta, 0.0)
        if self.beta <= 0:
            raise ValueError(f"beta must be a finite number > 0, got {beta!r}")
        self.enhanced = bool(enhanced)

    def betas(self, classes: Classes):
        """Per class the smallest ``beta`` the class satisfies (device float64; 0 when no
        value is over-represented; enhanced: ``inf`` when some gain exceeds ``-ln p(v)``)."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = _entry_shares(classes)
        p = self._p[sens]
        gain = (share - p) / p
        gain = xp.where(share > p, gain, 0.0)
        if self.enhanced:
            gain = xp.where(gain > -xp.log(p), xp.inf, gain)
        return _segment_max(xp, cls, gain, classes.n_classes)

    def class_fails(self, classes: Classes):
        return self.betas(classes) > self.beta

    def describe(self) -> dict:
        return {"model": "enhanced-beta-likeness" if self.enhanced else "basic-beta-likeness",
                "attribute": self.sensitive_attribute, "beta": _plain(self.beta)}

    def __repr__(self) -> str:
        return (f"BetaLikeness({self.sensitive_attribute!r}, beta={_plain(self.beta)}, "
                f"enhanced={self.enhanced})")


def _check_prior(prior) -> dict:
    if not isinstance(prior, Mapping) or not prior:
        raise ValueError(f"prior must be a non-empty mapping sensitive value -> probability, "
                         f"got {prior!r}")
    out = {}
    for v, pr in prior.items():
        if isinstance(pr, bool) or not isinstance(pr, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(pr)) or not 0.0 <= float(pr) <= 1.0:
            raise ValueError(f"prior[{v!r}] must be a probability in [0, 1], got {pr!r}")
        out[str(v)] = float(pr)
    total = math.fsum(out.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"prior probabilities must sum to 1, they sum to {total!r}")
    return out


class PrivacyLoss(_SensitiveModel):
    """The (epsilon, alpha) privacy-loss model: per class the distribution loss is the
    Euclidean distance between the prior distribution of the sensitive attribute (the table's
    distribution, or ``prior``: a mapping value -> probability covering every value of the
    data) and the class's distribution, the entropy loss ``|H(prior) - H(class)|`` in bits.
    A class fails when its distribution loss exceeds ``epsilon`` or its entropy loss
    exceeds ``alpha``.

    Not monotonic (entropy loss can grow when classes merge): both flags ``False``.
    """

    monotonic_with_generalization = False
    monotonic_with_suppression = False
    min_class_size = None

    def __init__(self, attribute: str, epsilon: float, alpha: float, prior=None):
        super().__init__(attribute)
        self.epsilon = _check_number("epsilon", epsilon, 0.0)
        self.alpha = _check_number("alpha", alpha, 0.0)
        self.prior = None if prior is None else _check_prior(prior)

    def _bind(self, encoded):
        be = self.backend
        labels = [str(v) for v in self.labels]
        if self.prior is None:
            counts = be.to_host(self._global_counts()).astype(np.float64)
            q = counts / float(self.n_rows)
            rest = np.zeros(0)
        else:
            missing = [v for v in labels if v not in self.prior or self.prior[v] <= 0]
            if missing:
                raise ValueError(f"prior gives no (or zero) probability to value(s) of "
                                 f"{self.sensitive_attribute!r} in the data: "
                                 f"{format_values(missing)}")
            q = np.array([self.prior[v] for v in labels], dtype=np.float64)
            present = set(labels)
            rest = np.array([pr for v, pr in self.prior.items() if v not in present])
        everything = np.concatenate([q, rest])
        nz = everything[everything > 0]
        self._h_prior = float(-(nz * np.log2(nz)).sum())
        self._q_sq = float((everything ** 2).sum())     # sum of q^2 over the whole prior
        self._q = be.asarray(q)

    def losses(self, classes: Classes):
        """``(distribution_loss, entropy_loss)`` per class (device float64 each)."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = _entry_shares(classes)
        q = self._q[sens]
        n_classes = classes.n_classes
        # |p_E - q|^2 = sum_all q^2 + sum_{v in E} (p_E^2 - 2 p_E q)
        sq = self._q_sq + _segment_sum(xp, cls, share * share - 2.0 * share * q, n_classes)
        dist = xp.sqrt(xp.maximum(sq, 0.0))
        return dist, xp.abs(self._h_prior - classes.entropy_bits())

    def class_fails(self, classes: Classes):
        dist, ent = self.losses(classes)
        return (dist > self.epsilon) | (ent > self.alpha)

    def describe(self) -> dict:
        out = {"model": "privacy-loss", "attribute": self.sensitive_attribute,
               "epsilon": _plain(self.epsilon), "alpha": _plain(self.alpha)}
        if self.prior is not None:
            out["prior"] = dict(self.prior)
        return out

    def __repr__(self) -> str:
        return (f"PrivacyLoss({self.sensitive_attribute!r}, epsilon={_plain(self.epsilon)}, "
                f"alpha={_plain(self.alpha)})")


# ---------------------------------------------------------------------------------------
# models on groups of classes: k-anonymity over several QID subsets, LKC-privacy
# ---------------------------------------------------------------------------------------
def _subset_groups(classes: Classes, subsets: Sequence[Sequence[int]]):
    """``(gid, n_groups)``: ``gid`` (S, C) device int64, the group of every class of the batch
    for every subset of QID columns, numbered across all subsets (0..n_groups-1).  Classes
    share a group iff they belong to the same node and carry the same codes on the subset's
    columns (at the node's levels).  A subset is ranked from its prefix (cached), one column
    at a time, so keys never exceed ``C * radix`` (no overflow)."""
    xp = classes.xp
    ranked: dict[tuple, tuple] = {(): (classes.node.astype(xp.int64), 0)}

    def rank(cols: tuple):
        hit = ranked.get(cols)
        if hit is None:
            parent, _ = rank(cols[:-1])
            col = classes.codes[:, cols[-1]].astype(xp.int64)
            radix = int(col.max()) + 1
            uniq, gid = xp.unique(parent * radix + col, return_inverse=True)
            hit = ranked[cols] = (gid.reshape(-1).astype(xp.int64), int(uniq.shape[0]))
        return hit

    out, offset = [], 0
    for cols in subsets:
        gid, n_groups = rank(tuple(cols))
        out.append(gid + offset)
        offset += n_groups
    return xp.stack(out), offset


def _group_sizes(classes: Classes, gid, n_groups: int, alive):
    """Records of the ``alive`` classes per group (``gid`` (S, C), see
    :func:`_subset_groups`), float64."""
    xp = classes.xp
    weights = xp.where(alive, classes.size, 0).astype(xp.float64)
    return xp.bincount(gid.ravel(), weights=xp.broadcast_to(weights, gid.shape).ravel(),
                       minlength=n_groups)


class _GroupModel(PrivacyModel):
    """A model judging groups of classes that share their values on subsets of the QIDs.

    A class fails when one of its groups violates the model.  Suppressing failing classes
    shrinks their groups, which can make other groups violate: the verdicts are therefore
    iterated (peeled) until no further class fails, so that the released classes satisfy the
    model among themselves.  ``suppressed`` marks the classes other models suppress: they
    count as gone from the start (the :class:`~gpuppdp.evaluate.Evaluator` iterates all such
    models to a common fixed point).
    """

    min_class_size = None
    judges_released_classes = True
    _subsets_idx: list | None = None

    def _resolve(self, encoded) -> list[list[int]]:
        raise NotImplementedError

    def bind(self, encoded):
        self._subsets_idx = self._resolve(encoded)
        self.backend = encoded.backend
        return self

    def _require_bound(self):
        if self._subsets_idx is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")

    #: subsets are judged in chunks of at most this many (subset, class or entry) pairs
    chunk_pairs = 8_000_000

    def _group_fails(self, classes: Classes, gid, n_groups: int, alive):
        """Per group: does it violate the model, counting only the ``alive`` classes?
        ``gid`` (S, C) holds every class's group for each of S subsets."""
        raise NotImplementedError

    def class_fails(self, classes: Classes, suppressed=None):
        self._require_bound()
        xp = classes.xp
        n = classes.n_classes
        fails = xp.zeros(n, dtype=xp.bool_) if suppressed is None else suppressed.copy()
        if n == 0:
            return fails
        width = max(n, 0 if classes.entry_class is None else int(classes.entry_class.shape[0]))
        step = max(1, self.chunk_pairs // width)
        chunks = [_subset_groups(classes, self._subsets_idx[i:i + step])
                  for i in range(0, len(self._subsets_idx), step)]
        while True:
            alive = ~fails
            new = xp.zeros(n, dtype=xp.bool_)
            for gid, n_groups in chunks:
                new |= self._group_fails(classes, gid, n_groups, alive)[gid].any(axis=0)
            new &= alive
            if not bool(new.any()):
                return fails
            fails |= new


class KAnonymityOnSubsets(_GroupModel):
    """k-anonymity over several QID sets at once: for every given subset ``S`` of the
    quasi-identifiers, the records sharing their (generalized) values on ``S`` number at least
    ``k``.  A class fails when one of its ``S``-groups is smaller than ``k``.

    Monotonic with generalization and with suppression: a group at a more general node is a
    union of groups at the less general one, so the (unique) largest set of classes whose
    groups are all large enough at a node stays valid at every generalization of it.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = True

    def __init__(self, subsets, k: int):
        self.k = _check_int("k", k, 1)
        if isinstance(subsets, str) or not isinstance(subsets, Sequence) or not subsets:
            raise ValueError(f"subsets must be a non-empty list of lists of QID names, got "
                             f"{subsets!r}")
        out = []
        for s in subsets:
            if isinstance(s, str) or not isinstance(s, Sequence) or not s or \
                    not all(isinstance(c, str) and c for c in s):
                raise ValueError(f"every subset must be a non-empty list of QID names, got {s!r}")
            if len(set(s)) != len(s):
                raise ValueError(f"subset {list(s)!r} names a QID twice")
            out.append([str(c) for c in s])
        self.subsets = out

    def _resolve(self, encoded):
        names = list(encoded.qi_names)
        unknown = sorted({c for s in self.subsets for c in s if c not in names})
        if unknown:
            raise ValueError(f"{self!r} names column(s) that are not quasi-identifiers: "
                             f"{format_values(unknown)} (quasi-identifiers: "
                             f"{format_values(names)})")
        return [sorted(names.index(c) for c in s) for s in self.subsets]

    def _group_fails(self, classes, gid, n_groups, alive):
        return _group_sizes(classes, gid, n_groups, alive) < self.k

    def describe(self) -> dict:
        return {"model": "k-anonymity-on-subsets", "k": self.k,
                "subsets": [list(s) for s in self.subsets]}

    def __repr__(self) -> str:
        return f"KAnonymityOnSubsets({self.subsets!r}, k={self.k})"


class LKCPrivacy(_GroupModel):
    """LKC-privacy (Mohammed, Fung, Hung & Lee 2009): every combination of the (generalized)
    values of at most ``L`` quasi-identifiers is shared by at least ``K`` records, and within
    each such group the confidence ``count(s) / size`` of every listed sensitive value ``s``
    (``sensitive_values``; all values when ``None``) is at most ``C``.  A class fails when it
    belongs to a violating group.

    ``attribute`` names the sensitive attribute; without one only the ``L``/``K`` part is
    checked (``C`` must then be 1).  Monotonic with generalization (merged groups grow and
    their confidences are weighted averages of their parts'), not with suppression --
    except without the confidence bound (``C = 1``), where it is k-anonymity on every subset
    of at most ``L`` QIDs (see :class:`KAnonymityOnSubsets`).
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def __init__(self, L: int, K: int, C: float, sensitive_values=None,  # noqa: N803
                 attribute: str | None = None):
        self.L = _check_int("L", L, 1)
        self.K = _check_int("K", K, 1)
        self.C = _check_number("C", C, 0.0, 1.0)
        if attribute is not None and (not isinstance(attribute, str) or not attribute):
            raise ValueError(f"attribute must be a column name, got {attribute!r}")
        if attribute is None and self.C < 1.0:
            raise ValueError("LKC-privacy with C < 1 needs the sensitive attribute: "
                             "LKCPrivacy(L, K, C, attribute=...)")
        self.sensitive_attribute = attribute
        if sensitive_values is not None:
            if isinstance(sensitive_values, str) or not all(
                    isinstance(v, str) for v in sensitive_values):
                raise ValueError(f"sensitive_values must be a list of values (strings), got "
                                 f"{sensitive_values!r}")
            sensitive_values = list(sensitive_values)
        self.sensitive_values = sensitive_values
        if self.C >= 1.0:
            self.monotonic_with_suppression = True

    def _resolve(self, encoded):
        q = len(encoded.qi_names)
        if self.sensitive_attribute is not None:
            labels = [str(v) for v in encoded.sensitive_column(self.sensitive_attribute).labels]
            wanted = labels if self.sensitive_values is None else self.sensitive_values
            mask = np.array([v in wanted for v in labels], dtype=bool)
            self._n_values = len(labels)
            self._listed = encoded.backend.asarray(mask)
        return [list(s) for size in range(1, min(self.L, q) + 1)
                for s in itertools.combinations(range(q), size)]

    def _group_fails(self, classes, gid, n_groups, alive):
        xp = classes.xp
        sizes = _group_sizes(classes, gid, n_groups, alive)
        bad = sizes < self.K
        if self.sensitive_attribute is None or self.C >= 1.0:
            return bad
        if classes.entry_class is None:
            raise ValueError(f"{self!r} needs the per-class histograms of "
                             f"{self.sensitive_attribute!r}, but the classes carry none")
        cls = classes.entry_class.astype(xp.int64)
        sens = classes.entry_sens.astype(xp.int64)
        count = xp.where(alive[cls] & self._listed[sens], classes.entry_count, 0)
        m = self._n_values
        keys = gid[:, cls] * m + sens[None, :]
        weights = xp.broadcast_to(count.astype(xp.float64), keys.shape)
        per = xp.bincount(keys.ravel(), weights=weights.ravel(),
                          minlength=n_groups * m).reshape(n_groups, m)
        conf = per.max(axis=1) / xp.maximum(sizes, 1.0)
        return bad | (conf > self.C)

    def describe(self) -> dict:
        out = {"model": "lkc-privacy", "L": self.L, "K": self.K, "C": _plain(self.C)}
        if self.sensitive_attribute is not None:
            out["attribute"] = self.sensitive_attribute
        if self.sensitive_values is not None:
            out["sensitive_values"] = list(self.sensitive_values)
        return out

    def __repr__(self) -> str:
        extra = ("" if self.sensitive_attribute is None
                 else f", attribute={self.sensitive_attribute!r}")
        if self.sensitive_values is not None:
            extra += f", sensitive_values={self.sensitive_values!r}"
        return f"LKCPrivacy(L={self.L}, K={self.K}, C={_plain(self.C)}{extra})"
