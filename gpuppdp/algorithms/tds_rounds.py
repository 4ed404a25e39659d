"""The rounds of top-down specialization (:mod:`gpuppdp.algorithms.tds`): the scores of every
candidate specialization of a cut, on the arrays of a backend.

Each round reduces the table's distinct rows (weighted) with group-bys
(:func:`gpuppdp.kernels.groupby.group`) and weighted ``bincount``s; the arrays are NumPy's or
CuPy's (``xp``, taken from the backend the rows live on), so on a GPU a round's group-bys,
counts and entropies run on the device and only the per-value scores (one entry per value of
the cut) come back to the host.  The smallest group per value is a segment minimum
(:func:`~gpuppdp.core.classes.segment_max` of the negated sizes: CuPy's ``minimum.at`` rounds
float64 through float32).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.classes import segment_max
from ..kernels import groupby

__all__ = ["Constraint", "entropy", "split_entropy", "round_scores", "sibling_scores"]


def entropy(xp, counts):
    """Entropy (bits) of each row of ``counts``."""
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = xp.where(counts > 0, counts / xp.maximum(total, 1e-300), 0.0)
        return -xp.sum(xp.where(p > 0, p * xp.log2(xp.where(p > 0, p, 1.0)), 0.0), axis=-1)


def split_entropy(xp, left, right):
    """Weighted entropy of a two-way split (rows: thresholds)."""
    nl, nr = left.sum(axis=-1), right.sum(axis=-1)
    n = xp.maximum(nl + nr, 1e-300)
    return (nl * entropy(xp, left) + nr * entropy(xp, right)) / n


@dataclass
class Constraint:
    """Groups on the QIDs ``attrs`` hold >= ``K`` records; with ``listed`` (a mask of the
    sensitive codes, an array of the rows' backend), none of those values exceeds confidence
    ``C`` in a group."""

    attrs: tuple
    K: int
    C: float = 1.0
    listed: object = None


def _group_sizes(xp, cols, weights):
    ids, rep, _ = groupby.group(xp, [c.astype(xp.int64) for c in cols])
    return ids, rep, xp.bincount(ids, weights=weights)


def _min_by(xp, index, values, n: int):
    """Smallest ``values`` entry per ``index`` in ``0..n-1`` (``inf`` where none)."""
    return -segment_max(xp, index, -values.astype(xp.float64), n, empty=-np.inf)


def _second_smallest(xp, sizes):
    """``(smallest, second smallest)`` of ``sizes`` (device 0-d values; ``inf`` when there is
    only one)."""
    order = xp.sort(sizes)
    return order[0], (order[1] if int(order.shape[0]) > 1 else xp.asarray(np.inf))


def round_scores(xp, state, weights, cls, n_cls, sens, constraints):
    """Per attribute: (InfoGain, PrivLoss, valid) of each value of its cut (arrays indexed by
    value id; ``valid`` False for values that cannot be specialized).  ``state``: per
    attribute (each row's value, each row's child, which values can be specialized, number
    of value ids), as ``rows()`` of the cuts gives them."""
    out = []
    now = {}                                          # each constraint's current groups
    total = weights.sum()
    for j, (cur, child, open_, n_values) in enumerate(state):
        n_child = int(child.max()) + 1
        parent = xp.zeros(n_child, dtype=xp.int64)
        parent[child] = cur
        size_child = xp.bincount(child, weights=weights, minlength=n_child)
        size_value = xp.bincount(cur, weights=weights, minlength=n_values)
        with np.errstate(divide="ignore", invalid="ignore"):
            if cls is None:   # class: the original value; I(R_v) - sum ... = H(child | v),
                # weighted by the share of the table it concerns
                p = xp.where(size_child > 0, size_child / size_value[parent], 1.0)
                gain = xp.bincount(parent, weights=-p * xp.log2(p), minlength=n_values)
                gain = gain * size_value / total
            else:
                per_value = xp.bincount(cur * n_cls + cls, weights=weights,
                                        minlength=n_values * n_cls).reshape(n_values, n_cls)
                per_child = xp.bincount(child * n_cls + cls, weights=weights,
                                        minlength=n_child * n_cls).reshape(n_child, n_cls)
                child_part = xp.bincount(parent, weights=size_child * entropy(xp, per_child),
                                         minlength=n_values)
                gain = entropy(xp, per_value) - xp.where(size_value > 0,
                                                         child_part / size_value, 0.0)
        gain = xp.maximum(gain, 0.0)
        valid = open_.copy()
        loss = xp.zeros(n_values)
        used = 0
        for c, con in enumerate(constraints):
            if j not in con.attrs:
                continue
            used += 1
            if c not in now:
                now[c] = _group_sizes(xp, [state[i][0] for i in con.attrs], weights)[1:]
            rep_now, size_now = now[c]
            others = [state[i][0] for i in con.attrs if i != j]
            now_min = _min_by(xp, cur[rep_now], size_now, n_values)
            a_now, second = _second_smallest(xp, now_min)
            ids, rep, size = _group_sizes(xp, [child, *others], weights)
            new_min = _min_by(xp, cur[rep], size, n_values)
            rest = xp.where(now_min == a_now, second, a_now)  # smallest group outside the value
            a_new = xp.minimum(rest, new_min)
            loss += xp.where(xp.isfinite(a_new), a_now - a_new, 0.0)
            valid &= new_min >= con.K
            if con.listed is not None and con.C < 1.0:
                n_s = int(con.listed.shape[0])
                hits = xp.bincount(ids * n_s + sens, weights=weights * con.listed[sens],
                                   minlength=int(size.shape[0]) * n_s).reshape(-1, n_s)
                over = hits.max(axis=1) / size > con.C + 1e-12
                valid &= xp.bincount(cur[rep], weights=over.astype(xp.float64),
                                     minlength=n_values) == 0
        if used:
            loss /= used
        out.append((gain, loss, valid))
    return out


def sibling_scores(xp, state, j, weights, cls, n_cls, sens, constraints):
    """Sibling candidates of the categorical attribute ``j``: per child node ``c`` (node
    ids, as ``state[j]``'s children), (InfoGain, PrivLoss, valid) of moving only the records
    under ``c`` out of their cut value ``v`` (the others stay at ``v``).  The gain is that of
    splitting ``R_v`` into ``R_c`` and ``R_v - R_c``; valid: every group of ``c``'s records
    and what is left of each group of ``v`` (when not empty) hold >= ``K`` records and, for
    LKC with ``C < 1``, no listed value above confidence ``C``."""
    cur, child, _, n_ids = state[j]
    sub = child != cur                                # rows that a child move may concern
    csub, wsub = child[sub], weights[sub]
    valid = xp.zeros(n_ids, dtype=xp.bool_)
    if int(csub.shape[0]) == 0:                       # every value a leaf: no candidate
        return xp.zeros(n_ids), xp.zeros(n_ids), valid
    valid[csub] = True
    parent = xp.zeros(n_ids, dtype=xp.int64)
    parent[csub] = cur[sub]
    size_value = xp.bincount(cur, weights=weights, minlength=n_ids)
    size_c = xp.bincount(csub, weights=wsub, minlength=n_ids)
    size_v = size_value[parent]
    size_rest = size_v - size_c
    with np.errstate(divide="ignore", invalid="ignore"):
        if cls is None:   # the entropy of the two-way split, weighted by R_v's share
            gain = size_v / weights.sum() * entropy(xp, xp.stack([size_c, size_rest], axis=1))
        else:
            per_value = xp.bincount(cur * n_cls + cls, weights=weights,
                                    minlength=n_ids * n_cls).reshape(n_ids, n_cls)
            per_c = xp.bincount(csub * n_cls + cls[sub], weights=wsub,
                                minlength=n_ids * n_cls).reshape(n_ids, n_cls)
            rest = per_value[parent] - per_c
            gain = entropy(xp, per_value[parent]) - xp.where(
                size_v > 0, (size_c * entropy(xp, per_c) + size_rest * entropy(xp, rest))
                / size_v, 0.0)
    gain = xp.where(valid, xp.maximum(xp.nan_to_num(gain), 0.0), 0.0)
    loss = xp.zeros(n_ids)
    used = 0
    for con in constraints:
        if j not in con.attrs:
            continue
        used += 1
        others = [state[i][0] for i in con.attrs if i != j]
        ids_now, _, size_now = _group_sizes(xp, [cur, *others], weights)
        ids_mv, rep_mv, size_mv = _group_sizes(xp, [csub, *(o[sub] for o in others)], wsub)
        c_of = csub[rep_mv]                           # each moved group's child
        g_of = ids_now[sub][rep_mv]                   # and the group it leaves
        resid = size_now[g_of] - size_mv
        left = resid > 0.5
        bad = (size_mv < con.K) | (left & (resid < con.K))
        if con.listed is not None and con.C < 1.0:
            n_s = int(con.listed.shape[0])
            hit_w = weights * con.listed[sens]
            hits_now = xp.bincount(ids_now * n_s + sens, weights=hit_w,
                                   minlength=int(size_now.shape[0]) * n_s).reshape(-1, n_s)
            hits_mv = xp.bincount(ids_mv * n_s + sens[sub], weights=hit_w[sub],
                                  minlength=int(size_mv.shape[0]) * n_s).reshape(-1, n_s)
            conf_left = xp.where(left, (hits_now[g_of] - hits_mv).max(axis=1)
                                 / xp.where(left, resid, 1.0), 0.0)
            bad |= (hits_mv.max(axis=1) / size_mv > con.C + 1e-12) | \
                (conf_left > con.C + 1e-12)
        valid[c_of[bad]] = False
        # PrivLoss: the smallest group after the move (untouched groups: the smallest one,
        # or the second smallest when c touches the smallest, as the subtree rounds do)
        a_now, second = _second_smallest(xp, size_now)
        new_min = xp.minimum(_min_by(xp, c_of, size_mv, n_ids),
                             _min_by(xp, c_of, xp.where(left, resid, np.inf), n_ids))
        touches = xp.zeros(n_ids, dtype=xp.bool_)
        touches[c_of[g_of == int(xp.argmin(size_now))]] = True
        untouched = xp.where(touches, second, a_now)
        a_new = xp.minimum(untouched, new_min)
        loss += xp.where(xp.isfinite(a_new), a_now - a_new, 0.0)
    if used:
        loss /= used
    return gain, loss, valid
