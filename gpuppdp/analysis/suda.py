"""Special uniques: minimal sample uniques (MSUs) and SUDA scores (SUDA2).

A *minimal sample unique* of a record is a set of its QID values that no other record of the
table shares while every proper subset of it is shared (Elliot et al. 2002); SUDA2 (Manning,
Haglin & Keane 2008) finds them all.  Only a record that is unique on all QIDs has MSUs, and a
set is minimal when it is unique and none of its subsets one attribute smaller is (uniqueness
only grows with the set).  :func:`suda2` searches level by level, subset size 1, 2, ...,
``max_size``: every subset of a level is grouped at once on the distinct QID combinations
(:func:`gpuppdp.kernels.groupby.group`, one segment per subset), a candidate is unique on a
subset when its group holds one record, and the MSUs of the level are the unique candidates
none of whose immediate subsets (the previous level, kept as a boolean matrix) is unique --
array passes on ``backend.xp``, no loop over rows.

Scores follow sdcMicro's ``suda2`` (the IHSN C++ code): an MSU of size ``s`` among ``M``
QIDs adds ``(M - s)!`` to its record's SUDA score (Elliot et al.'s weighting, sdcMicro's
default ``original_scores=TRUE``), or ``(2^(M-s) - 1) s! (M-s)! / M!`` with ``scoring="ihsn"``;
each attribute of the MSU is credited the same amount (an attribute's contribution to a record
is that sum over its score; the shares of a record's attributes sum to more than 1 when MSUs
have several attributes).  The DIS-SUDA score (Skinner & Elliot 2002) scales them to a
probability of a correct match: with ``U`` sample uniques, ``P`` records in classes of two,
sampling fraction ``f`` (``dis_fraction``), ``DIS = U f / (U f + P (1 - f))``, ``Q = 1 + (8 -
M) / 20`` and ``A = sum over scored records of score^-Q``, a record's is ``1 / (1 + (U / DIS -
U) / (score^Q A))``.  (sdcMicro counts in ``U`` only the uniques alone in their 16-bit hash
bucket, an artefact of its implementation; here ``U`` counts every sample unique, so DIS
scores can differ where sdcMicro's hash buckets collide.)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..errors import InputError
from ..kernels import groupby
from .qid_classes import _check_qids, encode_columns

__all__ = ["Suda2Result", "suda2", "msu_weights", "DIS_INTERVALS"]

#: sdcMicro's print(suda2) intervals of the DIS-SUDA score: upper bounds (right-closed) and
#: labels; the first is ``== 0``, the last ``> 0.7``
DIS_INTERVALS = (("== 0", 0.0), ("(0.0, 0.1]", 0.1), ("(0.1, 0.2]", 0.2),
                 ("(0.2, 0.3]", 0.3), ("(0.3, 0.4]", 0.4), ("(0.4, 0.5]", 0.5),
                 ("(0.5, 0.6]", 0.6), ("(0.6, 0.7]", 0.7), ("> 0.7", math.inf))

#: most cells (subsets x distinct combinations) grouped in one call
_BATCH_CELLS = 1 << 24


def msu_weights(n_attributes: int, max_size: int, scoring: str = "elliot") -> np.ndarray:
    """The score an MSU of size ``s = 1..max_size`` adds among ``n_attributes`` QIDs
    (host float64, index ``s - 1``): ``(M - s)!`` (``"elliot"``) or ``(2^(M-s) - 1) s!
    (M-s)! / M!`` (``"ihsn"``), as sdcMicro's ``suda2`` weighs them."""
    m = int(n_attributes)
    s = np.arange(1, int(max_size) + 1)
    fact = np.array([math.factorial(v) for v in range(m + 1)], dtype=np.float64)
    if scoring == "elliot":
        return fact[m - s]
    if scoring == "ihsn":
        return (2.0 ** (m - s) - 1.0) * fact[s] * fact[m - s] / fact[m]
    raise InputError(f"scoring must be 'elliot' or 'ihsn', got {scoring!r}")


@dataclass
class Suda2Result:
    """MSUs and SUDA scores of a table (per record arrays in the table's row order, host).

    ``msu_rows``/``msu_masks``: one entry per MSU, its record and its attributes (bit ``j``
    = ``quasi_identifiers[j]``); ``msu_counts[i, s-1]``: record ``i``'s MSUs of size ``s``;
    ``contributions[i, j]``: attribute ``j``'s share of record ``i``'s score (0 without
    one); ``attribute_contributions``: per attribute, its percentage of the total score
    (sdcMicro's ``attribute_contributions``)."""

    quasi_identifiers: list
    max_size: int
    scoring: str
    dis_fraction: float
    scores: np.ndarray
    dis_scores: np.ndarray
    contributions: np.ndarray
    msu_counts: np.ndarray
    msu_rows: np.ndarray
    msu_masks: np.ndarray
    attribute_contributions: dict

    def msus(self) -> list[tuple[int, tuple[str, ...]]]:
        """The MSUs as ``(row, attributes)``, by row then size."""
        q = self.quasi_identifiers
        out = [(int(r), tuple(q[j] for j in range(len(q)) if int(m) >> j & 1))
               for r, m in zip(self.msu_rows, self.msu_masks)]
        return sorted(out, key=lambda rm: (rm[0], len(rm[1]), rm[1]))

    def summary(self) -> dict:
        """The JSON-ready figures: MSUs by size, records with MSUs, score totals, the DIS
        scores by sdcMicro's intervals and the attribute contributions."""
        bounds = np.array([b for _, b in DIS_INTERVALS])
        bins = np.searchsorted(bounds, self.dis_scores, side="left")
        hist = np.bincount(bins, minlength=len(bounds))
        sizes = self.msu_counts.sum(axis=0)
        return {"max_size": self.max_size, "scoring": self.scoring,
                "dis_fraction": self.dis_fraction,
                "msus": int(sizes.sum()),
                "msus_by_size": {str(s + 1): int(v) for s, v in enumerate(sizes)},
                "records_with_msus": int(np.count_nonzero(self.scores)),
                "total_score": float(self.scores.sum()),
                "highest_score": float(self.scores.max(initial=0.0)),
                "highest_dis_score": float(self.dis_scores.max(initial=0.0)),
                "dis_score_intervals": {label: int(v)
                                        for (label, _), v in zip(DIS_INTERVALS, hist)},
                "attribute_contributions": dict(self.attribute_contributions)}


def _check(q: int, max_size, dis_fraction, scoring) -> int:
    max_size = q if max_size is None else max_size
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) \
            or not 1 <= max_size <= q:
        raise InputError(f"max_size must be a whole number in 1..{q} (the number of "
                         f"quasi-identifiers), got {max_size!r}")
    if not isinstance(dis_fraction, (int, float)) or not 0.0 < dis_fraction < 1.0:
        raise InputError(f"dis_fraction must lie in (0, 1), got {dis_fraction!r}")
    msu_weights(q, 1, scoring)  # checks scoring
    subsets = sum(math.comb(q, s) for s in range(1, int(max_size) + 1))
    if q > 62 or subsets > 1 << 22:
        raise InputError(f"max_size: {subsets} QID subsets of up to {max_size} of {q} "
                         "columns is too many; give a smaller max_size")
    return int(max_size)


def suda2(data: pd.DataFrame, quasi_identifiers: Sequence[str],
          backend: Backend | str = "cpu", *, max_size: int | None = None,
          dis_fraction: float = 0.01, scoring: str = "elliot") -> Suda2Result:
    """Minimal sample uniques of at most ``max_size`` attributes (default: all QIDs) and
    the SUDA and DIS-SUDA scores of every record (see the module's description; sdcMicro's
    ``suda2(data, variables, DisFraction=dis_fraction, original_scores=scoring ==
    "elliot")``).  A missing value is a value of its own."""
    backend = get_backend(backend)
    xp = backend.xp
    qids = _check_qids(data, quasi_identifiers)
    q = len(qids)
    max_size = _check(q, max_size, dis_fraction, scoring)
    weights = msu_weights(q, max_size, scoring)
    codes, cards = encode_columns(data, qids, backend)
    ids, rep, _ = groupby.group(xp, codes, cards)
    d = int(rep.shape[0])
    counts = xp.bincount(ids, minlength=d)
    distinct = xp.stack([c[rep] for c in codes], axis=1)          # (d, q) codes
    cand = xp.flatnonzero(counts == 1)                             # the sample uniques
    u = int(cand.shape[0])
    n_msu = xp.zeros((max_size, u), dtype=xp.int64)
    credit = xp.zeros((q, u), dtype=xp.float64)                    # per attribute, candidate
    found_rows, found_masks = [], []
    prev, prev_row = None, {}
    for s in range(1, max_size + 1):
        if u == 0:
            break
        combos = list(itertools.combinations(range(q), s))
        masks = np.array([sum(1 << j for j in c) for c in combos], dtype=np.int64)
        unique = _unique_on(xp, distinct, counts, cand, combos, cards)   # (len(combos), u)
        msu = unique
        if prev is not None:   # minimal: no immediate subset unique
            sub = np.array([[prev_row[int(m) ^ (1 << j)] for j in c]
                            for m, c in zip(masks, combos)], dtype=np.int64)
            msu = unique & ~prev[xp.asarray(sub.reshape(-1))].reshape(
                len(combos), s, u).any(axis=1)
        member = np.zeros((q, len(combos)), dtype=np.float64)     # attribute j in subset r
        member[np.array(combos).T, np.arange(len(combos))] = 1.0
        hits = msu.astype(xp.float64)
        n_msu[s - 1] = msu.sum(axis=0)
        credit += weights[s - 1] * (xp.asarray(member) @ hits)
        r, c = xp.nonzero(msu)
        found_rows.append(cand[c])
        found_masks.append(xp.asarray(masks)[r])
        prev, prev_row = unique, {int(m): i for i, m in enumerate(masks)}
    score_c = xp.asarray(weights) @ n_msu.astype(xp.float64) if u else xp.zeros(0)
    return _result(backend, qids, max_size, scoring, float(dis_fraction), ids, d, counts, cand,
                   score_c, credit, n_msu, found_rows, found_masks)


def _unique_on(xp, distinct, counts, cand, combos, cards):
    """``(len(combos), len(cand))`` bool: whether each candidate (a distinct combination
    holding one record) is alone on each subset of columns, the subsets grouped together in
    batches (one segment per subset)."""
    d = int(distinct.shape[0])
    s = len(combos[0])
    per = max(1, _BATCH_CELLS // max(1, d * s))
    out = []
    for lo in range(0, len(combos), per):
        part = combos[lo:lo + per]
        cols = xp.concatenate([distinct[:, list(c)] for c in part], axis=0)
        radix = np.array([[cards[j] for j in c] for c in part], dtype=np.int64)
        ptr = xp.asarray(np.arange(len(part) + 1, dtype=np.int64) * d)
        gid, rep, _ = groupby.group(xp, cols, radix, ptr=ptr)
        size = xp.bincount(gid, weights=xp.tile(counts, len(part)).astype(xp.float64),
                           minlength=int(rep.shape[0]))
        at = (xp.arange(len(part), dtype=xp.int64)[:, None] * d + cand[None, :])
        out.append(size[gid[at]] == 1)
    return xp.concatenate(out, axis=0)


def _result(backend, qids, max_size, scoring, dis_fraction, ids, d, counts, cand, score_c,
            credit, n_msu, found_rows, found_masks) -> Suda2Result:
    """Per record arrays from the candidates' figures, and the DIS-SUDA scores."""
    xp = backend.xp
    q = len(qids)
    u = int(cand.shape[0])
    pairs = int(backend.scalar(xp.count_nonzero(counts == 2))) * 2
    to_host = backend.to_host
    score_d = np.zeros(d)
    score_d[to_host(cand)] = to_host(score_c)
    rec = to_host(ids)
    scores = score_d[rec]
    share_d = np.zeros((d, q))
    counts_d = np.zeros((d, max_size), dtype=np.int64)
    if u:
        sc = to_host(score_c)
        share_d[to_host(cand)] = np.divide(to_host(credit).T, sc[:, None],
                                           out=np.zeros((u, q)), where=sc[:, None] > 0)
        counts_d[to_host(cand)] = to_host(n_msu).T
    total = float(scores.sum())
    contrib = to_host(credit).sum(axis=1) if u else np.zeros(q)
    attr = {name: (100.0 * float(v) / total if total > 0 else 0.0)
            for name, v in zip(qids, contrib)}
    dis = np.zeros(len(scores))
    scored = scores > 0
    if scored.any():   # Skinner & Elliot's DIS, spread by Elliot's power Q (sdcMicro)
        f = dis_fraction
        dis_prob = u * f / (u * f + pairs * (1.0 - f))
        power = 1.0 + (8.0 - q) / 20.0
        adj = float((scores[scored] ** -power).sum())
        dis[scored] = 1.0 / (1.0 + (u / dis_prob - u) / (scores[scored] ** power * adj))
    # the records of the MSUs: each candidate combination is one record
    first = np.full(d, -1, dtype=np.int64)
    first[rec[::-1]] = np.arange(len(rec))[::-1]
    rows = np.concatenate([to_host(r) for r in found_rows]) if found_rows else \
        np.zeros(0, dtype=np.int64)
    masks = np.concatenate([to_host(m) for m in found_masks]) if found_masks else \
        np.zeros(0, dtype=np.int64)
    return Suda2Result(list(qids), max_size, scoring, dis_fraction, scores, dis,
                       share_d[rec], counts_d[rec], first[rows], masks, attr)
