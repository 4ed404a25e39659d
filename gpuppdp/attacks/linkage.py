"""Cross-release attacks: what two releases of the same population give away together.

An attacker holds two releases ``A`` (earlier) and ``B`` (later, or published beside it) and
knows a target's quasi-identifier (QID) values ``x``.  Each released QID value is a label of
its hierarchy and *covers* the leaves under it (``'*'``: every leaf); a release's row covers
``x`` when each of its labels covers ``x``'s value.  Three attacks are implemented.

**(a) Complementary releases** (Sweeney 2002, "k-anonymity: a model for protecting privacy",
IJUFKS 10(5), Section 4, the *complementary release* attack; Wang & Fung 2006, "Anonymizing
sequential releases", KDD, the join of releases on their shared attributes).  Two releases of
the *same* records, generalized differently, are joined:

* a row ``a`` of ``A`` and a row ``b`` of ``B`` are *compatible* (may be the same person's)
  when every *link column* (the non-QID columns both releases hold, e.g. the sensitive
  attribute; ``link_on``) shows equal values and, for every QID, the two labels cover at least
  one common leaf;
* *row-count reasoning*: both releases hold each person exactly once, so the true pairing is a
  perfect matching of ``A``'s rows to ``B``'s rows along compatible pairs.  A compatible pair
  that lies on *no* perfect matching cannot be one person's, and is dropped.  This is decided
  exactly on the rows grouped into *types* (same labels and link values): one maximum flow
  (:func:`scipy.sparse.csgraph.maximum_flow`) gives a matching; a pair of types with no flow is
  usable by another matching iff both lie in one strongly connected component of the residual
  graph (pairs one way, pairs carrying flow back) -- the Dulmage-Mendelsohn argument with
  multiplicities;
* a target in the *cell* ``c`` (the leaves no label of either release tells apart, one set per
  QID) has as candidates the rows of ``A`` with a usable partner in ``B`` such that both
  cover ``c`` (and likewise in ``B``).  Its *linked* candidate count is the smaller of the two
  sides; its sensitive value is *certain* when all its candidates hold the same one.

**(b) Temporal releases** (a later release with records added or removed; Wang & Fung 2006;
the *difference* attack that m-invariance, Xiao & Tao 2007, guards against).  The leaves of a
QID are joined into *blocks* (the connected components of the labels of both releases by
leaf overlap), so each row of either release lies in exactly one block tuple, and both
releases count the same region.  A block whose count changes by ``d`` held ``|d|`` added
(``d > 0``) or removed records; when its sensitive histogram changes on one value only, the
value of those records is revealed to anyone who knows who joined or left (``|d| = 1``: a
single person's).  The compatible pairs are still joined as in (a) for targets known to be
in both releases (no matching argument: the populations differ).

**(c) Row order** ("unsorted matching", Sweeney 2002, Section 4): releases that keep their
rows in the same order link row ``i`` to row ``i``.  Row ``i + s`` of ``A`` is aligned with row
``i`` of ``B`` for a few shifts ``s``: 0 (same start), ``n_A - n_B`` (same end) and the shifts
most frequent between a sample of ``B``'s rows and their compatible rows of ``A`` (records
dropped at the start and added at the end).  Each alignment is tested, and the one that leaks
(else the one with most compatible positions) reported: with ``X`` compatible positions of
``m`` and ``p_i`` the
share of ``B``'s rows compatible with ``A``'s row ``i``, the order is *leaked* when
``X >= 0.95 m`` and ``X`` exceeds its mean under a random order ``sum p_i`` by at least five
standard deviations (``sqrt(sum p_i (1 - p_i))``).  Then each aligned compatible row pair is
one person's and the candidates of a cell are the aligned rows covering it.

Records are reported per row of ``A``: its smallest candidate count over the cells it may lie
in (the worst case: the attacker's target may be any of them), the same count with each
release alone, and whether it falls below ``k`` only through the linkage (``newly_below_k``)
or its sensitive value becomes certain only through it (``newly_certain``).
:func:`check_release` refuses a new release that enables any of this against an earlier one.

The rows are grouped with the one group-by (:func:`gpuppdp.kernels.groupby.group`) on codes
from the one encoder (:func:`gpuppdp.core.codes.encode_column`), on the host (NumPy; the
matching needs SciPy's graph routines); everything after the grouping works on types and
cells, not rows.  Loops run over pairs of types only where a pair covers several cells
(releases whose labels are not a partition of each QID's leaves, e.g. local recoding).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.codes import encode_column
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy
from ..kernels import groupby
from ..validation import check_int, column_list

__all__ = ["LinkageReport", "LinkageRisk", "linkage_attack", "check_release", "MODES"]

#: the modes of :func:`linkage_attack`
MODES = ("auto", "complementary", "temporal")
_MAX_CELLS = 5_000_000
_CHUNK = 20_000_000          # cells x types booleans per pass of the single-release counts
_ORDER_SHARE = 0.95
_ORDER_SIGMAS = 5.0


class LinkageRisk(InputError):
    """:func:`check_release` refuses a release; the message is one line saying why."""


@dataclass
class LinkageReport:
    """The result of :func:`linkage_attack` (host values).

    ``records``: one row per row of ``A`` (same index): ``candidates`` (linked, smallest over
    its possible cells), ``candidates_alone`` (the smaller of what ``A`` or ``B`` alone
    gives, same cells), ``below_k``, ``newly_below_k``, ``sensitive_certain``,
    ``newly_certain`` and ``value`` (the certain value, else missing); rows with no usable
    partner (temporal releases) have ``candidates`` 0 and no flags.  ``cells``: one row per
    cell a linked pair covers (its QIDs shown by the smallest label covering it), with
    ``candidates_a``, ``candidates_b``, ``candidates``, ``alone_a``, ``alone_b``, ``certain``,
    ``value``.  ``differences``: the blocks whose counts differ (temporal), with ``count_a``,
    ``count_b``, ``delta`` and ``revealed`` (the value of the changed records when one).
    ``row_order``: the alignment test; ``order_records``: like ``records`` for the aligned
    row pairs when the order leaks (else ``None``).
    """

    mode: str
    k: int
    rows_a: int
    rows_b: int
    quasi_identifiers: list
    link_on: list
    sensitive: str | None
    records: pd.DataFrame
    cells: pd.DataFrame
    differences: pd.DataFrame
    row_order: dict
    order_records: pd.DataFrame | None = None
    usable_pairs: int = 0
    compatible_pairs: int = 0
    notes: list = field(default_factory=list)

    def _counts(self, table: pd.DataFrame | None) -> dict:
        if table is None:
            return {}
        return {"below_k": int(table["below_k"].sum()),
                "newly_below_k": int(table["newly_below_k"].sum()),
                "sensitive_certain": int(table["sensitive_certain"].sum()),
                "newly_certain": int(table["newly_certain"].sum())}

    def reasons(self) -> list[str]:
        """Why a check refuses ``B`` against ``A`` (empty: nothing new is disclosed)."""
        out = []
        c = self._counts(self.records)
        if c["newly_below_k"]:
            out.append(f"{self.mode} linkage leaves {c['newly_below_k']} record(s) with fewer "
                       f"than k={self.k} candidates")
        if c["newly_certain"]:
            out.append(f"{self.mode} linkage makes the {self.sensitive!r} value of "
                       f"{c['newly_certain']} record(s) certain")
        o = self._counts(self.order_records)
        if o and (o["newly_below_k"] or o["newly_certain"]):
            out.append(f"the rows keep the earlier release's order (row i links to row i): "
                       f"{o['newly_below_k']} record(s) below k={self.k}, "
                       f"{o['newly_certain']} sensitive value(s) certain")
        revealed = self.differences[self.differences["revealed"].notna()] \
            if len(self.differences) else self.differences
        if len(revealed):
            d = revealed.iloc[0]
            out.append(f"{len(revealed)} class(es) changed by records of one {self.sensitive!r} "
                       f"value (difference attack; e.g. {int(d['delta']):+d} record(s) of "
                       f"{d['revealed']!r})")
        return out

    def summary(self) -> dict:
        """A JSON-ready summary."""
        out = {"mode": self.mode, "k": self.k, "rows_a": self.rows_a, "rows_b": self.rows_b,
               "quasi_identifiers": self.quasi_identifiers, "link_on": self.link_on,
               "sensitive": self.sensitive, "compatible_type_pairs": self.compatible_pairs,
               "usable_type_pairs": self.usable_pairs, "cells": int(len(self.cells)),
               "linkage": self._counts(self.records),
               "difference": {"changed_blocks": int(len(self.differences)),
                              "changed_by_one": int((self.differences["delta"].abs() == 1).sum())
                              if len(self.differences) else 0,
                              "revealed": int(self.differences["revealed"].notna().sum())
                              if len(self.differences) else 0},
               "row_order": dict(self.row_order), "notes": list(self.notes),
               "refused_reasons": self.reasons()}
        if self.order_records is not None:
            out["row_order"]["linkage"] = self._counts(self.order_records)
        return out


# --------------------------------------------------------------------------------------------
# labels -> leaves
# --------------------------------------------------------------------------------------------

def _cover_matrix(labels: np.ndarray, hierarchy: Hierarchy | None, column: str) -> np.ndarray:
    """``(labels x leaves)`` booleans: the leaves each label covers (its lowest level in the
    hierarchy; ``'*'`` every leaf).  Without a hierarchy every label but ``'*'`` is a leaf."""
    names = [str(v) for v in labels.tolist()]
    if hierarchy is None:
        leaves = [v for v in names if v != "*"]
        pos = {v: i for i, v in enumerate(leaves)}
        m = np.zeros((len(names), max(len(leaves), 1)), dtype=bool)
        for i, v in enumerate(names):
            if v == "*":
                m[i, :] = True
            else:
                m[i, pos[v]] = True
        return m
    first: dict[str, tuple[int, int]] = {}
    for level in range(hierarchy.height + 1):
        for code, label in enumerate(hierarchy.labels(level).tolist()):
            first.setdefault(str(label), (level, code))
    unknown = sorted(v for v in names if v not in first and v != "*")
    if unknown:
        raise InputError(f"{column!r}: released value(s) {unknown[:5]} are not labels of its "
                         "hierarchy")
    m = np.zeros((len(names), len(hierarchy.leaves)), dtype=bool)
    for i, v in enumerate(names):
        if v not in first:
            m[i, :] = True
        else:
            level, code = first[v]
            m[i] = hierarchy.codes(level) == code
    return m


def _elementary(cover: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(elem, leaf_count)``: ``elem`` (labels x E) booleans, the *elementary sets* (leaves no
    label tells apart) each label covers; ``leaf_count`` (E,) their sizes."""
    _, inverse, counts = np.unique(cover.T, axis=0, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    elem = np.zeros((cover.shape[0], len(counts)), dtype=bool)
    rows, leaves = np.nonzero(cover)
    elem[rows, inverse[leaves]] = True
    return elem, counts


# --------------------------------------------------------------------------------------------
# the attack
# --------------------------------------------------------------------------------------------

@dataclass
class _Side:
    types: np.ndarray       # row -> type
    labels: np.ndarray      # (types, q) label codes
    key: np.ndarray         # (types,) link key code
    count: np.ndarray       # (types,) rows
    sens: np.ndarray        # (types,) sensitive code or -1
    first: np.ndarray       # (types,) a row of each type


def _side(codes: list, key: np.ndarray, sens: np.ndarray | None) -> _Side:
    cols = [c.astype(np.int64) for c in codes] + [key.astype(np.int64)]
    if sens is not None:
        cols.append(sens.astype(np.int64))
    n = int(cols[0].shape[0])
    if n == 0:
        raise InputError("a release is empty (0 rows)")
    ids, rep, _ = groupby.group(np, cols, order="sorted")
    ids = np.asarray(ids, dtype=np.int64)
    rep = np.asarray(rep, dtype=np.int64)
    count = np.bincount(ids, minlength=len(rep))
    labels = np.stack([c[rep] for c in cols[:len(codes)]], axis=1)
    return _Side(ids, labels, cols[len(codes)][rep],
                 count, sens[rep].astype(np.int64) if sens is not None
                 else np.full(len(rep), -1, np.int64), rep)


def _compatible(a: _Side, b: _Side, meets: list, block_a: np.ndarray,
                block_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Type pairs ``(ta, tb)`` with equal link keys whose labels meet on every QID (joined
    within blocks: labels in different blocks never meet)."""
    left = pd.DataFrame({"key": a.key, "block": block_a[a.first], "ta": np.arange(len(a.key))})
    right = pd.DataFrame({"key": b.key, "block": block_b[b.first],
                          "tb": np.arange(len(b.key))})
    pairs = left.merge(right, on=["key", "block"])
    ta, tb = pairs["ta"].to_numpy(np.int64), pairs["tb"].to_numpy(np.int64)
    ok = np.ones(len(ta), dtype=bool)
    for j, m in enumerate(meets):
        ok &= m[a.labels[ta, j], b.labels[tb, j]]
    return ta[ok], tb[ok]


def _usable(a: _Side, b: _Side, ta: np.ndarray, tb: np.ndarray) -> tuple[np.ndarray, bool]:
    """Which compatible type pairs lie on some perfect matching of the rows, and whether one
    exists (row-count reasoning)."""
    from scipy.sparse import csr_matrix  # noqa: PLC0415  # deferred: SciPy, optional
    from scipy.sparse.csgraph import connected_components, maximum_flow

    na, nb = len(a.count), len(b.count)
    n = int(a.count.sum())
    if n != int(b.count.sum()) or len(ta) == 0:
        return np.zeros(len(ta), dtype=bool), False
    s, t = 0, 1 + na + nb
    rows = np.concatenate([np.zeros(na, np.int64), 1 + ta, 1 + na + np.arange(nb)])
    cols = np.concatenate([1 + np.arange(na), 1 + na + tb, np.full(nb, t, np.int64)])
    cap = np.concatenate([a.count, np.minimum(a.count[ta], b.count[tb]), b.count])
    graph = csr_matrix((cap.astype(np.int32), (rows, cols)), shape=(t + 1, t + 1))
    flow = maximum_flow(graph, s, t).flow.tocsr()
    f = np.asarray(flow[1 + ta, 1 + na + tb]).reshape(-1)
    if int(round(float(flow[s].sum()))) != n:
        return np.zeros(len(ta), dtype=bool), False
    carry = f > 0
    rr = np.concatenate([ta, na + tb[carry]])
    cc = np.concatenate([na + tb, ta[carry]])
    residual = csr_matrix((np.ones(len(rr), np.int8), (rr, cc)), shape=(na + nb, na + nb))
    _, comp = connected_components(residual, directed=True, connection="strong")
    return carry | (comp[ta] == comp[na + tb]), True


def _pair_cells(la: np.ndarray, lb: np.ndarray, elems: list) -> tuple[np.ndarray, np.ndarray]:
    """For label tuples ``la``, ``lb`` (pairs x q): ``(pair index, cell tuple)`` of every
    cell both cover (a cell: one elementary set per QID)."""
    q = len(elems)
    inter = [elems[j][la[:, j]] & elems[j][lb[:, j]] for j in range(q)]
    single = np.all([x.sum(axis=1) == 1 for x in inter], axis=0) if q else np.ones(0, bool)
    idx = np.flatnonzero(single)
    cells = [np.stack([inter[j][idx].argmax(axis=1) for j in range(q)], axis=1)]
    owners = [idx]
    total = len(idx)
    for p in np.flatnonzero(~single):   # pairs whose cells are several: releases that are not
        parts = [np.flatnonzero(inter[j][p]) for j in range(q)]   # partitions
        size = math.prod(len(x) for x in parts)
        total += size
        if total > _MAX_CELLS:
            raise InputError(f"the releases' labels overlap into more than {_MAX_CELLS} cells; "
                             "compare releases that are generalizations of one partition")
        cells.append(np.array(list(itertools.product(*parts)), dtype=np.int64).reshape(-1, q))
        owners.append(np.full(size, p, np.int64))
    return np.concatenate(owners), np.concatenate(cells, axis=0)


def _alone(cells: np.ndarray, side: _Side, elems: list) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the rows of one release covering it and whether they all hold one sensitive
    value (the release alone)."""
    n_cells, q = cells.shape
    top = np.iinfo(np.int64).max
    count = np.zeros(n_cells, dtype=np.int64)
    lo = np.full(n_cells, top)
    hi = np.full(n_cells, -2, dtype=np.int64)
    n_types = len(side.count)
    step = max(1, _CHUNK // max(n_types, 1))
    for start in range(0, n_cells, step):   # chunks of cells x types
        part = cells[start:start + step]
        cov = np.ones((len(part), n_types), dtype=bool)
        for j in range(q):
            cov &= elems[j][side.labels[:, j]][:, part[:, j]].T
        count[start:start + step] = cov @ side.count
        lo[start:start + step] = np.where(cov, side.sens[None, :], top).min(axis=1)
        hi[start:start + step] = np.where(cov, side.sens[None, :], -2).max(axis=1)
    return count, (lo == hi) & (lo >= 0)


def _link(a: _Side, b: _Side, ta, tb, unit_a, unit_b, weight_a, weight_b, elems, k
          ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Candidates of every cell covered by the linked pairs ``(ta[i], tb[i])``; units (the
    indistinguishable rows behind each side of a pair, with weights) count once per cell.
    Returns the cells table (codes), and per pair-cell entry its pair and cell."""
    pair, cell_tuple = _pair_cells(a.labels[ta], b.labels[tb], elems)
    q = len(elems)
    if len(pair) == 0:
        return pd.DataFrame(), pair, np.zeros(0, np.int64)
    cid, crep, _ = groupby.group(np, [cell_tuple[:, j] for j in range(q)], order="sorted")
    cid, crep = np.asarray(cid, np.int64), np.asarray(crep, np.int64)
    n_cells = len(crep)
    cells = cell_tuple[crep]

    def side_count(unit, weight):
        u = unit[pair]
        key = np.unique(cid * (int(u.max()) + 1) + u)
        c, uu = key // (int(u.max()) + 1), key % (int(u.max()) + 1)
        return np.bincount(c, weights=weight[uu], minlength=n_cells).astype(np.int64)

    cand_a = side_count(unit_a, weight_a)
    cand_b = side_count(unit_b, weight_b)
    value = np.where(a.sens[ta] >= 0, a.sens[ta], b.sens[tb])[pair]
    lo = np.full(n_cells, np.iinfo(np.int64).max)
    hi = np.full(n_cells, -2, np.int64)
    np.minimum.at(lo, cid, value)
    np.maximum.at(hi, cid, value)
    certain = (lo == hi) & (lo >= 0)
    alone_a, cert_a = _alone(cells, a, elems)
    alone_b, cert_b = _alone(cells, b, elems)
    table = pd.DataFrame({"candidates_a": cand_a, "candidates_b": cand_b,
                          "candidates": np.minimum(cand_a, cand_b),
                          "alone_a": alone_a, "alone_b": alone_b,
                          "certain": certain, "value_code": np.where(certain, lo, -1),
                          "certain_alone": cert_a | cert_b})
    for j in range(q):
        table[f"_e{j}"] = cells[:, j]
    table["alone"] = np.minimum(alone_a, alone_b)
    table["below_k"] = table["candidates"] < k
    table["newly_below_k"] = table["below_k"] & (table["alone"] >= k)
    table["newly_certain"] = table["certain"] & ~table["certain_alone"]
    return table, pair, cid


def _per_record(rows_unit: np.ndarray, pair_unit: np.ndarray, pair: np.ndarray,
                cid: np.ndarray, cells: pd.DataFrame, index, value_labels) -> pd.DataFrame:
    """Per row: the worst case over the cells its unit's pairs cover."""
    n_units = int(max(rows_unit.max(initial=-1), pair_unit.max(initial=-1))) + 1
    u = pair_unit[pair]
    cand = np.full(n_units, np.iinfo(np.int64).max)
    alone = np.full(n_units, np.iinfo(np.int64).max)
    flags = {}
    if len(cells):
        np.minimum.at(cand, u, cells["candidates"].to_numpy()[cid])
        np.minimum.at(alone, u, cells["alone"].to_numpy()[cid])
    for name in ("below_k", "newly_below_k", "certain", "newly_certain"):
        f = np.zeros(n_units, dtype=bool)
        if len(cells):
            np.logical_or.at(f, u, cells[name].to_numpy()[cid])
        flags[name] = f
    val = np.full(n_units, -1, np.int64)
    if len(cells):
        np.maximum.at(val, u, np.where(cells["certain"].to_numpy()[cid],
                                       cells["value_code"].to_numpy()[cid], -1))
    none = cand == np.iinfo(np.int64).max
    cand[none] = 0
    alone[none] = 0
    r = rows_unit
    valid = r >= 0
    rr = np.where(valid, r, 0)
    labels = np.asarray(value_labels, dtype=object)
    v = val[rr]
    return pd.DataFrame({
        "candidates": np.where(valid, cand[rr], 0),
        "candidates_alone": np.where(valid, alone[rr], 0),
        "below_k": valid & flags["below_k"][rr],
        "newly_below_k": valid & flags["newly_below_k"][rr],
        "sensitive_certain": valid & flags["certain"][rr],
        "newly_certain": valid & flags["newly_certain"][rr],
        "value": pd.Series([labels[x] if (ok and x >= 0 and len(labels)) else None
                            for x, ok in zip(v.tolist(), valid.tolist())], dtype=object)
                   .to_numpy()}, index=index)


def _show_cells(table: pd.DataFrame, qids, union_labels, covers, elems, value_labels):
    """The cells with readable QIDs: the smallest label covering each elementary set."""
    out = pd.DataFrame(index=table.index)
    for j, q in enumerate(qids):
        e = table[f"_e{j}"].to_numpy()
        sizes = covers[j].sum(axis=1)
        order = np.argsort(sizes, kind="stable")
        holds = elems[j][order][:, e]                 # labels (by size) x cells
        out[q] = union_labels[j][order[holds.argmax(axis=0)]]
    for c in ("candidates_a", "candidates_b", "candidates", "alone_a", "alone_b", "certain"):
        out[c] = table[c].to_numpy()
    labels = np.asarray(value_labels, dtype=object)
    out["value"] = [labels[v] if v >= 0 else None for v in table["value_code"].tolist()]
    return out


def _blocks(codes_a, codes_b, covers) -> tuple[np.ndarray, np.ndarray]:
    """Block of every row of A and of B: per QID the connected components of its labels by leaf
    overlap, rows grouped on the components."""
    from scipy.sparse import csr_matrix  # noqa: PLC0415  # deferred: SciPy, optional
    from scipy.sparse.csgraph import connected_components

    comp_a, comp_b = [], []
    for j, cover in enumerate(covers):
        lab, leaf = np.nonzero(cover)
        nl = cover.shape[0]
        g = csr_matrix((np.ones(len(lab), np.int8), (lab, nl + leaf)),
                       shape=(nl + cover.shape[1],) * 2)
        _, comp = connected_components(g, directed=False)
        comp_a.append(comp[codes_a[j]].astype(np.int64))
        comp_b.append(comp[codes_b[j]].astype(np.int64))
    both = [np.concatenate([x, y]) for x, y in zip(comp_a, comp_b)]
    ids, _, _ = groupby.group(np, both, order="sorted")
    ids = np.asarray(ids, np.int64)
    return ids[:len(codes_a[0])], ids[len(codes_a[0]):]


def _differences(block_a, block_b, sens_a, sens_b, n_values, a_df, qids):
    nblk = int(max(block_a.max(initial=-1), block_b.max(initial=-1))) + 1
    ca = np.bincount(block_a, minlength=nblk)
    cb = np.bincount(block_b, minlength=nblk)
    changed = np.flatnonzero(ca != cb)
    out = pd.DataFrame({"block": changed, "count_a": ca[changed], "count_b": cb[changed],
                        "delta": cb[changed] - ca[changed]})
    revealed = [None] * len(changed)
    if sens_a is not None and sens_b is not None and len(changed):
        ha = np.bincount(block_a * n_values + sens_a, minlength=nblk * n_values)
        hb = np.bincount(block_b * n_values + sens_b, minlength=nblk * n_values)
        diff = (hb - ha).reshape(nblk, n_values)[changed]
        nonzero = (diff != 0).sum(axis=1)
        one_sign = (diff >= 0).all(axis=1) | (diff <= 0).all(axis=1)
        which = np.abs(diff).argmax(axis=1)
        revealed = [int(w) if (nz == 1 and s) else None
                    for w, nz, s in zip(which.tolist(), nonzero.tolist(), one_sign.tolist())]
    out["revealed"] = pd.Series(revealed, dtype=object)
    return out


def _row_order(a: _Side, b: _Side, ta, tb) -> tuple[dict, np.ndarray | None]:
    """The alignment test of (c): ``(result, aligned (row_a, row_b) pairs or None)``.

    Alignments tried: row ``i + s`` of A with row ``i`` of B for the shifts ``s = 0`` (same
    start), ``n_A - n_B`` (same end) and the most frequent shifts between a sample of B's rows
    and the A rows compatible with them (records dropped at the start, added at the end)."""
    nb_types = len(b.count)
    code = np.sort(ta * nb_types + tb)
    n_a, n_b = len(a.types), len(b.types)
    compat_b = np.bincount(ta, weights=b.count[tb], minlength=len(a.count)) / n_b
    shifts = {0: None, n_a - n_b: None}
    votes = []
    for j in np.unique(np.linspace(0, n_b - 1, min(n_b, 32)).astype(np.int64)).tolist():
        partners = ta[tb == b.types[j]]
        votes.append(np.flatnonzero(np.isin(a.types, partners)) - j)
    if votes:
        vs, vc = np.unique(np.concatenate(votes), return_counts=True)
        for v in vs[np.argsort(-vc, kind="stable")[:8]].tolist():
            shifts.setdefault(int(v), None)
    best = None
    for shift in shifts:
        lo, hi = max(0, -shift), min(n_b, n_a - shift)
        rb = np.arange(lo, max(hi, lo), dtype=np.int64)
        ra = rb + shift
        m = len(rb)
        want = a.types[ra] * nb_types + b.types[rb]
        at = np.minimum(np.searchsorted(code, want), max(len(code) - 1, 0))
        ok = code[at] == want if len(code) else np.zeros(m, bool)
        p = compat_b[a.types[ra]]
        x, mu = int(ok.sum()), float(p.sum())
        sd = math.sqrt(float((p * (1 - p)).sum()))
        z = (x - mu) / sd if sd > 0 else (math.inf if x > mu else 0.0)
        cand = {"shift": int(shift), "aligned_rows": int(m), "in_order": x,
                "share_in_order": x / m if m else 0.0, "expected_share": mu / m if m else 0.0,
                "z": z, "_ok": ok, "_ra": ra, "_rb": rb}
        cand["_leaked"] = bool(m >= 2 and x >= _ORDER_SHARE * m and z >= _ORDER_SIGMAS)
        if best is None or (cand["_leaked"], x) > (best["_leaked"], best["in_order"]):
            best = cand
    result = {k: v for k, v in best.items() if not k.startswith("_")}
    result["z"] = float(result["z"]) if math.isfinite(result["z"]) else None
    result["leaked"] = best["_leaked"]
    if not best["_leaked"]:
        return result, None
    ok = best["_ok"]
    return result, np.stack([best["_ra"][ok], best["_rb"][ok]], axis=1)


def linkage_attack(a: pd.DataFrame, b: pd.DataFrame, quasi_identifiers: Sequence[str],
                   hierarchies: Mapping[str, Hierarchy] | None = None, *,
                   sensitive: str | None = None, k: int = 2, mode: str = "auto",
                   link_on: Sequence[str] | None = None) -> LinkageReport:
    """Run the cross-release attacks of this module on releases ``a`` (earlier) and ``b``.

    Parameters
    ----------
    a, b : DataFrame
        Two releases of one population: QID columns hold labels of ``hierarchies`` (any
        level, ``'*'`` for suppressed), other columns are copied values.
    quasi_identifiers : columns both releases generalize.
    hierarchies : per QID its :class:`~gpuppdp.hierarchy.Hierarchy`; a QID without one is
        compared as strings (``'*'`` covers every value).
    sensitive : the sensitive column (in either or both releases): reported certain values
        and the difference attack's revealed values.
    k : records with fewer than ``k`` candidates are reported.
    mode : ``"complementary"`` (the same records: row-count reasoning), ``"temporal"`` (records
        added or removed: difference attack, no matching argument) or ``"auto"``
        (complementary when a perfect matching of the rows exists, else temporal).
    link_on : columns the rows are linked on (default: every non-QID column both hold).
    """
    qids = column_list(quasi_identifiers)
    k = check_int("k", k, 1)
    link = _check_releases(a, b, qids, mode, sensitive, link_on)
    enc = _encode_releases(a, b, qids, dict(hierarchies or {}), link, sensitive)
    side_a = _side(enc.codes_a, enc.key[:len(a)], enc.sens_a)
    side_b = _side(enc.codes_b, enc.key[len(a):], enc.sens_b)
    block_a, block_b = _blocks(enc.codes_a, enc.codes_b, enc.covers)
    ta, tb = _compatible(side_a, side_b, enc.meets, block_a, block_b)
    usable, matched = (_usable(side_a, side_b, ta, tb) if mode != "temporal"
                       else (np.ones(len(ta), bool), False))
    notes = []
    if mode == "complementary" and not matched:
        raise InputError("the releases are not of one population: no pairing of A's rows with "
                         "B's rows keeps the QIDs and link columns consistent (use "
                         "mode='temporal')")
    if mode == "auto":
        mode = "complementary" if matched else "temporal"
        if not matched:
            usable = np.ones(len(ta), bool)
            notes.append("no perfect matching of the rows: releases treated as temporal")

    # (a) linkage through the usable pairs, one unit per type
    ua, ub = ta[usable], tb[usable]
    cells, pair, cid = _link(side_a, side_b, ua, ub, ua, ub, side_a.count, side_b.count,
                             enc.elems, k)
    records = _per_record(side_a.types, ua, pair, cid, cells, a.index, enc.value_labels)
    cells_shown = _show_cells(cells, qids, enc.union_labels, enc.covers, enc.elems,
                              enc.value_labels) \
        if len(cells) else pd.DataFrame(columns=qids + ["candidates"])
    # (b) difference attack on blocks
    differences = _difference_table(enc, block_a, block_b, a, qids)
    # (c) row order
    row_order, aligned = _row_order(side_a, side_b, ta, tb)
    order_records = None if aligned is None else \
        _order_records(side_a, side_b, aligned, enc, k, a.index)
    return LinkageReport(mode=mode, k=k, rows_a=len(a), rows_b=len(b), quasi_identifiers=qids,
                         link_on=link, sensitive=sensitive, records=records,
                         cells=cells_shown, differences=differences, row_order=row_order,
                         order_records=order_records, usable_pairs=int(usable.sum()),
                         compatible_pairs=int(len(ta)), notes=notes)


def _check_releases(a, b, qids: list, mode: str, sensitive: str | None,
                    link_on: Sequence[str] | None) -> list:
    """The arguments of :func:`linkage_attack` checked; returns the link columns."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    for name, df in (("A", a), ("B", b)):
        if not isinstance(df, pd.DataFrame):
            raise InputTypeError(f"release {name} must be a pandas DataFrame, got "
                                 f"{type(df).__name__}")
        missing = [q for q in qids if q not in df.columns]
        if missing:
            raise InputError(f"release {name}: QID column(s) {missing} missing")
        if len(df) == 0:
            raise InputError(f"release {name} is empty (0 rows)")
    if sensitive is not None and sensitive in qids:
        raise InputError(f"{sensitive!r} is given as a QID and as the sensitive attribute")
    if sensitive is not None and sensitive not in a.columns and sensitive not in b.columns:
        raise InputError(f"sensitive column {sensitive!r} is in neither release")
    if link_on is None:
        return [c for c in a.columns if c in b.columns and c not in qids]
    link = column_list(link_on, "link_on")
    bad = [c for c in link if c not in a.columns or c not in b.columns or c in qids]
    if bad:
        raise InputError(f"link_on: {bad} are not non-QID columns of both releases")
    return link


@dataclass
class _Encoded:
    """Both releases in one code space per column: per QID the labels of both
    (``union_labels``), each release's codes, the labels' ``covers`` of the domain, its
    elementary sets (``elems``) and which labels meet (``meets``); the link ``key`` of every
    row (A's rows first) and the sensitive codes of each release (``None`` where absent)."""

    union_labels: list
    codes_a: list
    codes_b: list
    covers: list
    elems: list
    meets: list
    key: np.ndarray
    value_labels: np.ndarray
    sens_a: np.ndarray | None
    sens_b: np.ndarray | None


def _encode_releases(a, b, qids: list, hierarchies: dict, link: list,
                     sensitive: str | None) -> _Encoded:
    """:class:`_Encoded` of releases ``a`` and ``b``."""
    union_labels, codes_a, codes_b, covers, elems, meets = [], [], [], [], [], []
    for q in qids:
        codes, labels = encode_column(pd.concat([a[q], b[q]], ignore_index=True), as_str=True)
        codes = codes.astype(np.int64)
        cover = _cover_matrix(labels, hierarchies.get(q), q)
        elem, _ = _elementary(cover)
        union_labels.append(np.asarray(labels, dtype=object))
        codes_a.append(codes[:len(a)])
        codes_b.append(codes[len(a):])
        covers.append(cover)
        elems.append(elem)
        meets.append((elem.astype(np.int32) @ elem.T.astype(np.int32)) > 0)
    if link:
        kc = [encode_column(pd.concat([a[c], b[c]], ignore_index=True),
                            as_str=True)[0].astype(np.int64) for c in link]
        kid, _, _ = groupby.group(np, kc, order="sorted")
        key = np.asarray(kid, np.int64)
    else:
        key = np.zeros(len(a) + len(b), np.int64)
    value_labels = np.zeros(0, dtype=object)
    sens_a = sens_b = None
    if sensitive is not None:
        parts = [df[sensitive] for df in (a, b) if sensitive in df.columns]
        sc, value_labels = encode_column(pd.concat(parts, ignore_index=True), as_str=True)
        sc = sc.astype(np.int64)
        if sensitive in a.columns:
            sens_a, sc = sc[:len(a)], sc[len(a):]
        if sensitive in b.columns:
            sens_b = sc
    return _Encoded(union_labels, codes_a, codes_b, covers, elems, meets, key, value_labels,
                    sens_a, sens_b)


def _difference_table(enc: _Encoded, block_a, block_b, a, qids: list) -> pd.DataFrame:
    """The difference attack's blocks (:func:`_differences`) with their QID labels and
    revealed values as labels."""
    differences = _differences(block_a, block_b, enc.sens_a, enc.sens_b,
                               len(enc.value_labels), a, qids)
    if len(differences):
        _, first = np.unique(np.concatenate([block_a, block_b]), return_index=True)
        for j, q in enumerate(qids):
            allc = np.concatenate([enc.codes_a[j], enc.codes_b[j]])
            differences.insert(j + 1, q,
                               enc.union_labels[j][allc[first[differences["block"]]]])
        differences["revealed"] = [None if v is None else enc.value_labels[v]
                                   for v in differences["revealed"].tolist()]
        differences = differences.drop(columns="block")
    return differences


def _order_records(side_a: _Side, side_b: _Side, aligned: np.ndarray, enc: _Encoded, k: int,
                   index) -> pd.DataFrame:
    """The per-record linkage of the row pairs the kept row order aligns."""
    pa, pb = side_a.types[aligned[:, 0]], side_b.types[aligned[:, 1]]
    pid, prep, _ = groupby.group(np, [pa, pb], order="sorted")
    pid, prep = np.asarray(pid, np.int64), np.asarray(prep, np.int64)
    mult = np.bincount(pid, minlength=len(prep))
    units = np.arange(len(prep))
    ocells, opair, ocid = _link(side_a, side_b, pa[prep], pb[prep], units, units, mult,
                                mult, enc.elems, k)
    row_unit = np.full(len(index), -1, np.int64)
    row_unit[aligned[:, 0]] = pid
    return _per_record(row_unit, units, opair, ocid, ocells, index, enc.value_labels)


def check_release(new: pd.DataFrame, earlier: pd.DataFrame,
                  quasi_identifiers: Sequence[str],
                  hierarchies: Mapping[str, Hierarchy] | None = None, *,
                  sensitive: str | None = None, k: int = 2, mode: str = "auto",
                  link_on: Sequence[str] | None = None) -> LinkageReport:
    """Refuse ``new`` if, together with ``earlier``, it discloses what neither does alone:
    records with fewer than ``k`` candidates or a certain sensitive value through the
    linkage (complementary or temporal) or the kept row order, or a class whose change
    reveals the sensitive value of the records added or removed (difference attack).

    Raises :class:`LinkageRisk` (a ``ValueError``) with a one-line reason; returns the
    :class:`LinkageReport` of :func:`linkage_attack` (``earlier`` as ``A``) when it passes.
    """
    report = linkage_attack(earlier, new, quasi_identifiers, hierarchies, sensitive=sensitive,
                            k=k, mode=mode, link_on=link_on)
    reasons = report.reasons()
    if reasons:
        raise LinkageRisk("refused: " + "; ".join(reasons))
    return report
