"""Equivalence classes of a batch of lattice nodes: what the evaluator hands to every privacy
model and metric (device arrays), with the per-class reductions they share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..backend import Array
from ..kernels import groupby

__all__ = ["Classes", "entry_shares", "segment_max", "segment_sum"]


@dataclass
class Classes:
    """Equivalence classes of a batch of nodes, in canonical order (device arrays).

    ``size`` (C,) records per class; ``node`` (C,) node index of each class (``None`` when
    constructed: computed from ``ptr`` on first use); ``ptr`` (B+1,)
    class offsets per node (``host_ptr`` on the host); ``codes`` (C, q) QID codes at the node's
    levels; ``distinct`` (C,) number of distinct sensitive values (``None`` without a sensitive
    attribute); ``entry_class``/``entry_sens``/``entry_count`` the per-class sensitive
    histograms as (class, value, count) triples of the code the frequency set carries;
    ``levels`` (B, q) host array of the nodes' generalization levels;
    ``sensitive_maps`` maps each sensitive attribute to ``(carried code -> its code, number of
    its values)`` when the carried code combines several attributes (see :meth:`for_attribute`).
    """

    xp: Array
    size: Array
    node: Array
    ptr: Array
    host_ptr: Array
    codes: Array
    distinct: Array = None
    entry_class: Array = None
    entry_sens: Array = None
    entry_count: Array = None
    levels: np.ndarray | None = None
    sensitive_maps: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if value is None and name == "node":  # the node of each class, on first use
            value = groupby.segment_ids(self.xp, self.ptr, self.n_classes)
            object.__setattr__(self, "node", value)
        return value

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
            cls = self.entry_class.astype(xp.int64)
            value = from_carried[self.entry_sens.astype(xp.int64)].astype(xp.int64)
            entry, rep, _ = groupby.group(xp, [cls, value], [self.size.shape[0], n_values],
                                          order="sorted")
            count = xp.bincount(entry, weights=self.entry_count.astype(xp.float64),
                                minlength=int(rep.shape[0])).astype(xp.int64)  # exact (< 2**53)
            entry_class = cls[rep]
            hit = Classes(xp, self.size, self.node, self.ptr, self.host_ptr, self.codes,
                          xp.bincount(entry_class, minlength=self.size.shape[0]).astype(xp.int64),
                          entry_class, value[rep], count, levels=self.levels)
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
        return -segment_sum(xp, cls, share * xp.log2(share), self.n_classes)

    def per_node(self, values):
        """Exact per-node totals of a per-class array (integer cumsum, no float rounding)."""
        xp = self.xp
        if self.host_ptr.shape[0] == 2:  # one node
            return xp.reshape(values.sum(), (1,))
        cs = xp.concatenate([xp.zeros(1, dtype=values.dtype), xp.cumsum(values)])
        return cs[self.ptr[1:]] - cs[self.ptr[:-1]]



def entry_shares(classes: Classes):
    """``(cls, sens, share)`` of every histogram entry: ``share = f_v / n`` (device)."""
    xp = classes.xp
    cls = classes.entry_class.astype(xp.int64)
    share = classes.entry_count.astype(xp.float64) / classes.size.astype(xp.float64)[cls]
    return cls, classes.entry_sens.astype(xp.int64), share


def segment_max(xp, cls, values, n_classes: int, empty: float = 0.0):
    """Largest ``values`` entry of each class (``empty`` for classes without entries).  NumPy:
    one scatter (``maximum.at``); a GPU: a sort by (class, value), each class's last entry
    (CuPy's ``maximum.at`` rounds float64 through float32: seen on an H200, CuPy 14.2.0)."""
    if xp is np:
        top = np.full(n_classes, -np.inf)
        np.maximum.at(top, cls, values.astype(np.float64))
        has = np.zeros(n_classes, dtype=np.bool_)
        has[cls] = True
        return np.where(has, top, empty)
    out = xp.full(n_classes, empty, dtype=xp.float64)
    if values.shape[0] == 0:
        return out
    order = xp.lexsort(xp.stack([values.astype(xp.float64), cls.astype(xp.float64)]))
    c, v = cls[order], values[order].astype(xp.float64)
    last = xp.concatenate([c[1:] != c[:-1], xp.ones(1, dtype=xp.bool_)])
    out[c[last]] = v[last]
    return out


def segment_sum(xp, cls, values, n_classes: int):
    """Sum of ``values`` per class (float64; :func:`.groupby.count_keys`)."""
    return groupby.count_keys(xp, cls, n_classes, values.astype(xp.float64))
