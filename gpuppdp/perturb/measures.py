"""Risk and utility measures made for perturbed numeric data: the masked columns against the
original ones, record by record (the rows in the same order).

Utility (information loss): IL1s (Yancey, Winkler and Creecy 2002), the variation of the means,
covariances and correlations (Domingo-Ferrer and Torra 2001; Mateo-Sanz, Domingo-Ferrer and
Sebé 2005), the distance between the eigenvalues of the correlation matrices, and the
propensity score (Woo, Reiter, Oganian and Karr 2009).  Risk: distance-based record linkage
(DBRL; Domingo-Ferrer and Torra 2001) and interval disclosure (Domingo-Ferrer, Mateo-Sanz
and Torra 2001, as sdcMicro's ``dRisk``).  Array code on the backend's arrays.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import get_backend
from ..errors import InputError

__all__ = ["perturbation_measures", "information_loss", "record_linkage",
           "interval_disclosure", "propensity_score"]

#: masked records linked at most (a deterministic sample of them above this)
LINKAGE_RECORDS = 20_000
#: masked records, and original ones, of one block of the record linkage's distances
LINKAGE_BLOCK, LINKAGE_CHUNK = 256, 1 << 16


def _pair(be, original, masked):
    xp = be.xp
    x = xp.asarray(original).astype(xp.float64)
    y = xp.asarray(masked).astype(xp.float64)
    x, y = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    if x.shape != y.shape:
        raise InputError(f"original and masked differ in shape: {tuple(x.shape)} and "
                         f"{tuple(y.shape)} (the same records and columns, in order)")
    if x.shape[0] < 2:
        raise InputError("the measures need at least 2 records")
    if not (bool(xp.isfinite(x).all()) and bool(xp.isfinite(y).all())):
        raise InputError("original or masked has missing or infinite values")
    return x, y


def _relative(a, b):
    """Mean of ``|a - b| / |a|`` over the entries where ``a`` is not 0."""
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    keep = a != 0
    return float(np.mean(np.abs(a[keep] - b[keep]) / np.abs(a[keep]))) if keep.any() else 0.0


def information_loss(original, masked, backend="auto") -> dict:
    """``il1s``: the mean over records and columns of ``|x - x'| / (sqrt(2) S)`` (``S`` the
    original column's standard deviation); ``mean_variation``: mean of ``|m - m'| / |m|``;
    ``covariance_variation``: the same over the covariance matrix's upper triangle;
    ``correlation_variation``: mean of ``|r - r'|`` over the pairs of columns;
    ``eigenvalue_distance``: ``sum |l - l'| / sum l`` of the sorted eigenvalues of the two
    correlation matrices (0 with one column).  Per column: ``il1s_per_column`` (whose mean is
    ``il1s``) and ``correlations``, the ``original`` and ``masked`` correlation of each pair
    of columns ``(i, j)``, ``i < j`` in row-major order (empty with one column)."""
    be = get_backend(backend)
    xp = be.xp
    x, y = _pair(be, original, masked)
    sd = x.std(axis=0, ddof=1)
    scale = xp.where(sd > 0, sd, 1.0) * np.sqrt(2.0)
    distance = xp.abs(x - y) / scale
    il1s = float(distance.mean())
    mx, my = be.to_host(x.mean(axis=0)), be.to_host(y.mean(axis=0))
    cx = np.atleast_2d(be.to_host(xp.cov(x, rowvar=False)))
    cy = np.atleast_2d(be.to_host(xp.cov(y, rowvar=False)))
    upper = np.triu_indices(cx.shape[0])
    out = {"il1s": il1s, "mean_variation": _relative(mx, my),
           "covariance_variation": _relative(cx[upper], cy[upper]),
           "il1s_per_column": [float(v) for v in be.to_host(distance.mean(axis=0))]}
    d = cx.shape[0]
    if d < 2:
        out.update(correlation_variation=0.0, eigenvalue_distance=0.0,
                   correlations={"original": [], "masked": []})
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        rx = cx / np.sqrt(np.outer(np.diag(cx), np.diag(cx)))
        ry = cy / np.sqrt(np.outer(np.diag(cy), np.diag(cy)))
    rx, ry = np.nan_to_num(rx), np.nan_to_num(ry)
    pairs = np.triu_indices(d, 1)
    lx, ly = np.linalg.eigvalsh(rx), np.linalg.eigvalsh(ry)
    out["correlation_variation"] = float(np.mean(np.abs(rx[pairs] - ry[pairs])))
    out["eigenvalue_distance"] = float(np.abs(lx - ly).sum() / max(lx.sum(), 1e-300))
    out["correlations"] = {"original": [float(v) for v in rx[pairs]],
                           "masked": [float(v) for v in ry[pairs]]}
    return out


def record_linkage(original, masked, *, max_records: int = LINKAGE_RECORDS, seed: int = 0,
                   backend="auto") -> dict:
    """Distance-based record linkage: each masked record is linked to the original record at
    the smallest Euclidean distance (columns standardized by the original's mean and standard
    deviation); ``linkage_rate`` is the share linked to their own record (a tie among ``t``
    nearest counts ``1/t`` when the own record is one of them).  Above ``max_records`` masked
    records a uniform sample of that many (drawn with ``seed``) is linked, against every
    original record.  Squared distances are ``|a|^2 + |b|^2 - 2 a.b``, a matrix product, taken
    to each distinct original point once (its records all lie at that distance: they count
    as that many ties), so that a column of few values costs little."""
    be = get_backend(backend)
    xp = be.xp
    x, y = _pair(be, original, masked)
    if isinstance(max_records, bool) or not isinstance(max_records, numbers.Integral) or \
            max_records < 1:
        raise InputError(f"max_records must be a positive integer, got {max_records!r}")
    n = x.shape[0]
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    sd = xp.where(sd > 0, sd, 1.0)
    zx, zy = (x - mean) / sd, (y - mean) / sd
    rows = np.arange(n) if n <= max_records else \
        np.sort(np.random.default_rng(seed).choice(n, max_records, replace=False))
    points, weight, point_of = _distinct_rows(xp, zx)
    m = points.shape[0]
    norm_x = (points * points).sum(axis=1)
    linked = 0.0
    for start in range(0, len(rows), LINKAGE_BLOCK):
        block = xp.asarray(rows[start:start + LINKAGE_BLOCK])
        q = zy[block]
        mine = point_of[block]  # each masked record's own original point
        norm_q = (q * q).sum(axis=1)
        nearest = xp.full(block.shape[0], np.inf)
        ties = xp.zeros(block.shape[0])
        own = xp.empty(block.shape[0])
        for lo in range(0, m, LINKAGE_CHUNK):  # the points in chunks: a running minimum
            hi = min(m, lo + LINKAGE_CHUNK)
            dist = norm_q[:, None] + norm_x[None, lo:hi] - 2.0 * (q @ points[lo:hi].T)
            low = dist.min(axis=1)
            count = xp.where(dist == low[:, None], weight[None, lo:hi], 0).sum(axis=1)
            ties = xp.where(low < nearest, count, xp.where(low == nearest, ties + count, ties))
            nearest = xp.minimum(nearest, low)
            here = (mine >= lo) & (mine < hi)
            own = xp.where(here, dist[xp.arange(block.shape[0]),
                                      xp.clip(mine - lo, 0, hi - lo - 1)], own)
        linked += float(xp.where(own == nearest, 1.0 / ties, 0.0).sum())
    return {"linkage_rate": linked / len(rows), "records_linked": int(len(rows)),
            "records": int(n)}


def _distinct_rows(xp, a):
    """``(points, counts, point_of)``: the distinct rows of ``a`` (sorted, first column most
    significant), how many rows each is, and each row's point."""
    order = xp.lexsort(xp.ascontiguousarray(a.T[::-1]))
    ordered = a[order]
    new = xp.ones(a.shape[0], dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    point = xp.cumsum(new) - 1
    point_of = xp.empty(a.shape[0], dtype=xp.int64)
    point_of[order] = point
    return ordered[new], xp.bincount(point), point_of


def interval_disclosure(original, masked, *, width: float = 0.05, backend="auto") -> dict:
    """Interval disclosure: a record is at risk when every original value lies within
    ``width`` original standard deviations of its masked value (sdcMicro's ``dRisk`` with
    ``k = width``); ``records_at_risk``: their share; ``per_column``: the share of values
    within the interval, per column."""
    be = get_backend(backend)
    xp = be.xp
    x, y = _pair(be, original, masked)
    if isinstance(width, bool) or not isinstance(width, numbers.Real) or not width > 0:
        raise InputError(f"width must be a positive number of standard deviations, got "
                         f"{width!r}")
    inside = xp.abs(x - y) <= float(width) * x.std(axis=0, ddof=1)
    return {"records_at_risk": float(inside.all(axis=1).mean()),
            "per_column": [float(v) for v in be.to_host(inside.mean(axis=0))],
            "width": float(width)}


def propensity_score(original, masked, *, iterations: int = 25, backend="auto") -> dict:
    """The propensity-score utility ``U_p = mean (p_i - 1/2)^2`` (Woo et al. 2009) of a
    logistic regression that tells masked from original records, both stacked (labels 1 and
    0), on the standardized columns, their squares and pairwise products; 0 when the model
    cannot tell them apart, 1/4 when it tells every record.  Fitted by Newton's method
    (``iterations`` steps at most) with a small ridge term."""
    be = get_backend(backend)
    xp = be.xp
    x, y = _pair(be, original, masked)
    both = xp.concatenate([x, y])
    both = (both - both.mean(axis=0)) / xp.where(both.std(axis=0) > 0, both.std(axis=0), 1.0)
    d = both.shape[1]
    terms = [xp.ones(both.shape[0])] + [both[:, j] for j in range(d)]
    terms += [both[:, i] * both[:, j] for i in range(d) for j in range(i, d)]
    design = xp.stack(terms, axis=1)
    label = xp.concatenate([xp.zeros(x.shape[0]), xp.ones(y.shape[0])])
    beta = xp.zeros(design.shape[1])
    ridge = 1e-6 * xp.eye(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + xp.exp(-(design @ beta)))
        w = p * (1.0 - p)
        step = xp.linalg.solve((design * w[:, None]).T @ design + ridge,
                               design.T @ (label - p))
        beta = beta + step
        if float(xp.abs(step).max()) < 1e-10:
            break
    p = 1.0 / (1.0 + xp.exp(-(design @ beta)))
    return {"propensity_score": float(((p - 0.5) ** 2).mean()), "terms": int(design.shape[1])}


def perturbation_measures(original, masked, *, backend="auto") -> dict:
    """All of the above with their defaults: ``{"utility": ..., "risk": ...}``."""
    utility = information_loss(original, masked, backend=backend)
    utility.update(propensity_score(original, masked, backend=backend))
    risk = record_linkage(original, masked, backend=backend)
    risk["interval_disclosure"] = interval_disclosure(original, masked, backend=backend)
    return {"utility": utility, "risk": risk}
