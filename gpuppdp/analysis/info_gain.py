"""InfoGain of generalization levels and values: Fung, Wang & Yu's information gain,
anonymity loss and score of a specialization (2005, "Top-down specialization for information
and privacy preservation", ICDE), on ``backend.xp``.

* :func:`info_gain` -- InfoGain of specializing a column by one level, summed over its values;
* :func:`info_gain_scores` -- per value ``v`` of a level, InfoGain(v), AnonyLoss(v) and
  Score(v).

Documented, and imported by users, from :mod:`gpuppdp.analysis.utility`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..core.codes import encode_column
from ..errors import InputError
from ..hierarchy import Hierarchy
from ..kernels import groupby
from ..validation import column_list


def _entropy_rows(xp, counts, totals):
    """Per row of ``counts`` (groups x classes) the entropy in bits of ``counts / totals``."""
    p = counts / xp.where(totals == 0, 1, totals)[:, None]
    return -xp.sum(xp.where(counts > 0, p * xp.log2(xp.where(counts > 0, p, 1.0)), 0.0), axis=1)


def _value_gains(data, hierarchy, column, level, class_attribute, be):
    """Per value of ``level``: ``(InfoGain(v), |R_v|)`` (device arrays) and the records' leaf
    codes (device)."""
    if not 1 <= int(level) <= hierarchy.height:
        raise InputError(f"level must be in 1..{hierarchy.height}, got {level!r}")
    level = int(level)
    xp = be.xp
    leaf = be.asarray(encode_column(data[column], domain=hierarchy.leaf_domain,
                                    name=column)[0].astype(np.int64))
    cls, cu = encode_column(data[class_attribute])
    cls = be.asarray(cls.astype(np.int64))
    nc = len(cu)
    nv, nch = len(hierarchy.labels(level)), len(hierarchy.labels(level - 1))
    v = be.asarray(hierarchy.codes(level).astype(np.int64))[leaf]
    c = be.asarray(hierarchy.codes(level - 1).astype(np.int64))[leaf]
    cnt_v = xp.bincount(v * nc + cls, minlength=nv * nc).reshape(nv, nc)
    cnt_c = xp.bincount(c * nc + cls, minlength=nch * nc).reshape(nch, nc)
    tot_v, tot_c = cnt_v.sum(axis=1), cnt_c.sum(axis=1)
    parent = be.asarray(hierarchy.upmap(level - 1, level).astype(np.int64))
    h_c = _entropy_rows(xp, cnt_c, tot_c) * tot_c / xp.where(tot_v == 0, 1, tot_v)[parent]
    after = xp.bincount(parent, weights=h_c, minlength=nv)
    gain = xp.where(tot_v > 0, _entropy_rows(xp, cnt_v, tot_v) - after, 0.0)
    return gain, tot_v, leaf


def info_gain(data: pd.DataFrame, hierarchy: Hierarchy, column: str, level: int,
              class_attribute: str, *, backend: Backend | str = "cpu") -> float:
    r"""InfoGain of specializing ``column`` from ``level`` to ``level - 1`` (Fung, Wang & Yu
    2005, "Top-down specialization for information and privacy preservation", ICDE), in bits.

    .. math:: \mathrm{InfoGain} = \sum_{v} \Big( I(R_v) - \sum_{c \in \mathrm{child}(v)}
              \frac{|R_c|}{|R_v|} I(R_c) \Big)

    summed over the values ``v`` of ``level`` present in ``data``; ``R_v`` are the records whose
    value generalizes to ``v``, ``child(v)`` the values of ``level - 1`` under ``v`` and
    ``I(R)`` the entropy of ``class_attribute`` over ``R``.  This per-level sum is not a figure
    of the paper, which scores each value ``v`` on its own (``InfoGain(v)``, the summand, and
    ``Score(v)``): see :func:`info_gain_scores`.
    """
    be = get_backend(backend)
    gain, _, _ = _value_gains(data, hierarchy, column, level, class_attribute, be)
    return float(be.scalar(be.xp.sum(gain)))


def _segment_min(xp, seg, values, n: int, fill: int):
    """Per segment ``0..n-1`` the smallest of ``values`` (``fill`` where none): one sort of
    ``(seg, value)`` keys, the first entry of each segment kept."""
    out = xp.full(n, fill, dtype=xp.int64)
    if int(seg.shape[0]) == 0:
        return out
    key = xp.sort(seg.astype(xp.int64) * (fill + 1) + values.astype(xp.int64))
    s, v = key // (fill + 1), key % (fill + 1)
    head = xp.concatenate([xp.ones(1, dtype=bool), s[1:] != s[:-1]])
    out[s[head]] = v[head]
    return out


def info_gain_scores(data: pd.DataFrame, hierarchies: Mapping[str, Hierarchy],
                     quasi_identifiers: Sequence[str], column: str, level: int,
                     class_attribute: str, *, levels: Mapping[str, int] | None = None,
                     backend: Backend | str = "cpu") -> pd.DataFrame:
    r"""Per value ``v`` of ``column`` at ``level``: the score of specializing ``v`` alone to its
    children at ``level - 1``, as Fung, Wang & Yu's top-down specialization ranks candidates
    (2005, "Top-down specialization for information and privacy preservation", ICDE):

    .. math:: \mathrm{Score}(v) = \frac{\mathrm{InfoGain}(v)}{\mathrm{AnonyLoss}(v) + 1},
              \qquad \mathrm{AnonyLoss}(v) = A - A_v

    ``InfoGain(v) = I(R_v) - sum_c |R_c|/|R_v| I(R_c)`` (bits, entropy of
    ``class_attribute``); ``A`` is the anonymity of the current cut -- the smallest group of
    records sharing their ``quasi_identifiers`` generalized to ``levels`` (``column`` at
    ``level``; default: every other QID at level 0) -- and ``A_v`` the same after ``v``
    alone is specialized.  The paper averages AnonyLoss over its virtual identifiers; here the
    QIDs form one.  ``data`` holds the original (leaf) values; suppression is not modelled.

    Returns one row per value with records (``value``, ``records`` = ``|R_v|``, ``info_gain``,
    ``anonymity``, ``anonymity_after``, ``anonymity_loss``, ``score``); the ``info_gain``
    column sums to :func:`info_gain`.
    """
    qids = column_list(quasi_identifiers)
    if column not in qids:
        raise InputError(f"column {column!r} is not one of the quasi-identifiers")
    be = get_backend(backend)
    xp = be.xp
    h = hierarchies[column]
    gain, tot_v, leaf = _value_gains(data, h, column, level, class_attribute, be)
    level = int(level)
    lv = {q: 0 for q in qids}
    lv.update({q: int(v) for q, v in (levels or {}).items() if q in lv})
    lv[column] = level
    others = []
    for q in qids:
        if q == column:
            continue
        hq = hierarchies[q]
        lq = be.asarray(encode_column(data[q], domain=hq.leaf_domain, name=q)[0].astype(np.int64))
        others.append(be.asarray(hq.codes(lv[q]).astype(np.int64))[lq])
    v = be.asarray(h.codes(level).astype(np.int64))[leaf]
    child = be.asarray(h.codes(level - 1).astype(np.int64))[leaf]
    nv = len(h.labels(level))
    big = len(data) + 1
    # the current cut's groups; per value v the smallest group holding v, and without v
    ids, rep, _ = groupby.group(xp, others + [v], order="sorted")
    size = xp.bincount(ids)
    gv = v[rep]
    min_in = _segment_min(xp, gv, size, nv, big)
    anonymity = int(be.scalar(xp.min(size)))
    sorted_min = xp.sort(min_in)
    first, second = sorted_min[0], sorted_min[1] if nv > 1 else big
    without = xp.where(min_in == first, second, first)
    # groups after v is specialized: per parent value the smallest child group
    ids2, rep2, _ = groupby.group(xp, others + [child], order="sorted")
    size2 = xp.bincount(ids2)
    g2 = v[rep2]
    min_after = _segment_min(xp, g2, size2, nv, big)
    after = xp.minimum(without, min_after)
    present = tot_v > 0
    loss = anonymity - after
    out = pd.DataFrame({"value": h.labels(level),
                        "records": be.to_host(tot_v).astype(np.int64),
                        "info_gain": be.to_host(gain),
                        "anonymity": anonymity,
                        "anonymity_after": be.to_host(after).astype(np.int64),
                        "anonymity_loss": be.to_host(loss).astype(np.int64)})
    out["score"] = out["info_gain"] / (out["anonymity_loss"] + 1.0)
    return out[be.to_host(present)].reset_index(drop=True)
