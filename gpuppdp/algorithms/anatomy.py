"""Anatomy: release the quasi-identifiers and the sensitive values in two tables (Xiao & Tao,
VLDB 2006).

The rows are partitioned into groups; the quasi-identifier table (QIT) holds every row's QIDs
unmodified and its ``group_id``, the sensitive table (ST) each group's sensitive values with
their counts.  A group is l-diverse when no sensitive value holds more than ``1/l`` of it,
so an adversary who knows a person's QIDs and group infers a value with probability at most
``1/l`` (the paper's Theorem 1).

Groups come from the paper's bucket algorithm (Fig. 4): rows hashed into one bucket per
sensitive value; while ``l`` buckets are non-empty, a group takes one row from each of the
``l`` largest; each residual row (at most ``l - 1``, one per bucket, when the table is
l-eligible: no value on more than ``n / l`` rows) joins a group not holding its value.
Or the caller gives the groups (``groups=``), which are checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from numba import njit

from ..core.codes import encode_column
from ..errors import InputError
from ..kernels import groupby
from ..kernels.aot import ahead_of_time
from ..validation import (check_attribute, check_columns, check_complete, check_int,
                          column_list, format_values)

__all__ = ["Anatomy", "AnatomizedRelease"]


@dataclass
class AnatomizedRelease:
    """An anatomized release: ``qit`` (the QIDs unmodified, in the input's row order, the
    insensitive columns beside them, and ``group_id``, numbered from 1) and ``st``
    (``group_id``, the sensitive value, ``count``)."""

    qit: pd.DataFrame
    st: pd.DataFrame
    quasi_identifiers: list[str]
    sensitive: str
    l: int
    groups: int

    def summary(self) -> dict:
        """The release's figures as JSON-ready values."""
        size = self.qit["group_id"].value_counts()
        return {"algorithm": "anatomy", "records": int(len(self.qit)), "l": self.l,
                "groups": self.groups, "smallest_group": int(size.min()),
                "largest_group": int(size.max()), "st_rows": int(len(self.st))}


# --------------------------------------------------------------------------------------
# the bucket algorithm
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _above(a, b, remaining):
    """Bucket ``a`` before ``b`` in the heap: more rows left, then the smaller value code."""
    return remaining[a] > remaining[b] or (remaining[a] == remaining[b] and a < b)


@njit(cache=True)
def _sift_down(heap, size, i, remaining):
    while True:
        best = i
        for c in (2 * i + 1, 2 * i + 2):
            if c < size and _above(heap[c], heap[best], remaining):
                best = c
        if best == i:
            return
        heap[i], heap[best] = heap[best], heap[i]
        i = best


@njit(cache=True)
def _sift_up(heap, i, remaining):
    while i > 0:
        parent = (i - 1) // 2
        if not _above(heap[i], heap[parent], remaining):
            return
        heap[i], heap[parent] = heap[parent], heap[i]
        i = parent


@njit(cache=True)
def _bucket_groups(ptr, l):
    """Rows sorted by sensitive value (value ``v`` on ``ptr[v]:ptr[v+1]``) -> the group of
    each (-1: residual) and the number of groups: repeatedly one row from each of the ``l``
    buckets with most rows left (a max-heap of buckets)."""
    m = ptr.shape[0] - 1
    remaining = ptr[1:] - ptr[:-1]
    nxt = ptr[:-1].copy()
    group = np.full(ptr[m], -1, np.int64)
    heap = np.empty(m, np.int64)
    size = 0
    for v in range(m):
        if remaining[v] > 0:
            heap[size] = v
            size += 1
            _sift_up(heap, size - 1, remaining)
    taken = np.empty(l, np.int64)
    g = 0
    while size >= l:
        for i in range(l):            # pop the l largest buckets
            taken[i] = heap[0]
            size -= 1
            heap[0] = heap[size]
            _sift_down(heap, size, 0, remaining)
        for i in range(l):
            v = taken[i]
            group[nxt[v]] = g
            nxt[v] += 1
            remaining[v] -= 1
            if remaining[v] > 0:
                heap[size] = v
                size += 1
                _sift_up(heap, size - 1, remaining)
        g += 1
    return group, g


ahead_of_time(_bucket_groups, ["Tuple((int64[::1], int64))(int64[::1], int64)"])


def _bucketize(sens: np.ndarray, n_values: int, l: int, rng) -> np.ndarray:
    """Group of every row (0..G-1) by the bucket algorithm, residues assigned as the paper
    does: each to a random group that does not hold its value."""
    n = len(sens)
    order = np.lexsort((rng.permutation(n), sens))   # by value, random within a value
    ptr = np.zeros(n_values + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(sens, minlength=n_values))
    sorted_group, n_groups = _bucket_groups(ptr, int(l))
    group = np.empty(n, dtype=np.int64)
    group[order] = sorted_group
    residue = np.flatnonzero(group < 0)
    for r in residue:                # at most l - 1 rows, one per value
        holds = np.zeros(n_groups, dtype=bool)
        holds[group[(sens == sens[r]) & (group >= 0)]] = True
        free = np.flatnonzero(~holds)
        if not len(free):            # impossible for an l-eligible table (Xiao & Tao, Lemma 2)
            raise RuntimeError("anatomy: no group can take a residual row")
        group[r] = free[rng.integers(len(free))]
    return group


# --------------------------------------------------------------------------------------
# the release
# --------------------------------------------------------------------------------------
def _check_diverse(group: np.ndarray, labels, sens: np.ndarray, values, l: int,
                   sensitive: str) -> None:
    """``InputError`` naming the first group in which one value holds more than ``1/l``."""
    pair, rep, _ = groupby.group(np, [group, sens], None)
    count = np.bincount(pair)
    g_of = group[rep]
    size = np.bincount(group)
    worst = np.zeros(len(size), dtype=np.int64)
    np.maximum.at(worst, g_of, count)
    bad = np.flatnonzero(worst * l > size)
    if len(bad):
        g = int(bad[0])
        at = np.flatnonzero(g_of == g)
        top = at[np.argmax(count[at])]
        label, value = labels[g], values[sens[rep[top]]]
        label, value = (getattr(x, "item", lambda x=x: x)() for x in (label, value))
        raise InputError(f"groups: group {label!r} is not {l}-diverse: {int(count[top])} "
                         f"of its {int(size[g])} rows have {sensitive}={value!r} "
                         f"(more than 1/{l}); "
                         f"{len(bad)} group(s) fail")


class Anatomy:
    """Anatomy (Xiao & Tao, VLDB 2006): :meth:`fit` gives an :class:`AnatomizedRelease` whose
    groups are l-diverse (no sensitive value on more than ``1/l`` of a group).

    ``insensitive`` columns are published unmodified in the QIT beside the QIDs; any other
    column of the data is left out.  Groups come from the bucket algorithm (the table must be
    l-eligible; ``seed`` picks the rows taken from a bucket and the groups of the residual
    rows), or from ``fit``'s ``groups``.

    >>> df = pd.DataFrame({"age": [20, 30, 40, 50], "disease": ["flu", "hiv", "flu", "hiv"]})
    >>> Anatomy(["age"], sensitive="disease", l=2, seed=0).fit(df).st["count"].tolist()
    [1, 1, 1, 1]
    """

    def __init__(self, quasi_identifiers: Sequence[str], *, sensitive: str, l: int,
                 seed=None, insensitive: Sequence[str] = ()):
        self.quasi_identifiers = column_list(quasi_identifiers)
        self.sensitive = check_attribute("sensitive", sensitive, self.quasi_identifiers)
        self.insensitive = column_list(insensitive, "insensitive") if len(insensitive) else []
        clash = [c for c in self.insensitive if c in self.quasi_identifiers + [self.sensitive]]
        if clash:
            raise InputError(f"insensitive: {format_values(clash)} already has a role "
                             "(a quasi-identifier or the sensitive attribute)")
        self.l = check_int("l", l, 2)
        self.seed = seed

    def __repr__(self) -> str:
        return (f"Anatomy(quasi_identifiers={self.quasi_identifiers!r}, "
                f"sensitive={self.sensitive!r}, l={self.l!r}, seed={self.seed!r})")

    def fit(self, data: pd.DataFrame, *, groups=None) -> AnatomizedRelease:
        """Anatomize ``data``.  ``groups`` (a column name or one label per row, e.g. the
        classes of a generalization) gives the groups instead of the bucket algorithm; they
        are checked, numbered 1.. in order of first appearance."""
        qids, sensitive, l = self.quasi_identifiers, self.sensitive, self.l
        check_columns("quasi_identifiers", data, qids)
        check_columns("sensitive", data, [sensitive])
        check_complete(data, [sensitive])
        if len(data) == 0:
            raise InputError("data has no rows")
        sens, values = encode_column(data[sensitive], sort=True)  # the ST in value order
        sens = sens.astype(np.int64)
        if groups is None:
            group = self._bucket_groups(data, sens, values)
        else:
            group, labels = encode_column(_given_groups(data, groups))
            group = group.astype(np.int64)
            _check_diverse(group, labels, sens, values, l, sensitive)
        if self.insensitive:
            check_columns("insensitive", data, self.insensitive)
        qit = data[qids + self.insensitive].copy()  # insensitive columns published as they are
        qit["group_id"] = group + 1
        pair, rep, _ = groupby.group(np, [group, sens], None, order="sorted")
        st = pd.DataFrame({"group_id": group[rep] + 1, sensitive: values[sens[rep]],
                           "count": np.bincount(pair)})
        return AnatomizedRelease(qit, st.reset_index(drop=True), qids, sensitive, l,
                                 int(group.max()) + 1)

    def _bucket_groups(self, data, sens: np.ndarray, values) -> np.ndarray:
        """The bucket algorithm's groups, after checking that the table is l-eligible."""
        l = self.l
        counts = np.bincount(sens, minlength=len(values))
        top = int(np.argmax(counts))
        if counts[top] * l > len(data):
            raise InputError(f"the table is not {l}-eligible: {self.sensitive}={values[top]!r} "
                             f"is on {int(counts[top])} of its {len(data)} rows (more than "
                             f"1/{l}), so no grouping is {l}-diverse")
        return _bucketize(sens, len(values), l, np.random.default_rng(self.seed))


def _given_groups(data: pd.DataFrame, groups):
    """The group labels ``groups`` names (a column) or gives (one per row)."""
    if isinstance(groups, str):
        check_columns("groups", data, [groups])
        return data[groups]
    given = np.asarray(groups).reshape(-1)
    if len(given) != len(data):
        raise InputError(f"groups has {len(given)} labels, the table {len(data)} rows")
    return given
