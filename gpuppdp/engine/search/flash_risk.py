"""The compiled Flash's risk-based models: average re-identification risk (with ARX's
highest-risk and records-at-risk thresholds), sample uniqueness and population uniqueness
(its estimators: :mod:`gpuppdp.kernels.uniqueness`), enforced on one node's
classes as :meth:`gpuppdp.models.risk.RiskModel.suppress` enforces them on a batch (ARX
3.9.2's ``RiskBasedCriterion.enforce``, ``HashGroupifyDistribution``).

After the class-based models have chosen their outliers, the classes still free -- not
suppressed, not all ``*``, not empty -- are sorted by size; if the model fails, ARX's binary
search over the prefixes of that order finds how many to suppress (giving up once a failing
prefix suppresses more than the limit); the classes suppressed are those smaller than the
prefix's last size and the first of that size, first by their own loss (the loss metric, in a
node that stays within the limit), then by first appearance.  Every function here allocates
nothing (:mod:`gpuppdp.kernels.nrt`): the caller hands in the scratch.
"""

from __future__ import annotations

import numpy as np

from ...kernels.nrt import njit_no_refcount
from ...kernels.uniqueness import unique_share_fulfilled
from .flash_classes import (
    RISK_AVERAGE_T,
    RISK_ESTIMATOR,
    RISK_POPULATION_SIZE,
    RISK_POPULATION_T,
    RISK_RECORDS,
    RISK_SMALLEST_SIZE,
    RISK_UNIQUES_T,
)

__all__ = ["suppress_by_risk", "risk_model_asked", "RISK_WORK_ROWS"]

#: rows of the risk step's int64 scratch (each one more than the node's classes long): the free
#: classes in first appearance, their sizes, the sizes sorted, their running sums, the tied
#: classes, a sort's buffer and the counting sort's counts
FREE, FREE_SIZES, SORTED, START, TIED, BUFFER, COUNTS = (np.int64(i) for i in range(7))
RISK_WORK_ROWS = 7
# the states of ARX's PrivacyCondition
_ABORT, _FULFILLED, _NOT_FULFILLED = 0, 1, 2


@njit_no_refcount
def risk_model_asked(params):
    """Is a risk-based model among the search's (its threshold in the parameters)?"""
    return params[RISK_AVERAGE_T] >= 0.0 or params[RISK_UNIQUES_T] >= 0.0 or \
        params[RISK_POPULATION_T] >= 0.0


@njit_no_refcount
def _java_half(x):
    """``x / 2`` in Java's int arithmetic (truncated toward zero)."""
    return x // 2 if x >= 0 else -((-x) // 2)


@njit_no_refcount
def _sift(a, start, end):
    """Heap sort's sift-down of ``a[start]`` within ``a[:end]`` (a max-heap)."""
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child] < a[child + 1]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@njit_no_refcount
def _sort_sizes(sizes, n, out, counts):
    """``out[:n]``: ``sizes[:n]`` ascending -- counted in ``counts`` where the largest size
    fits it, else heap sorted in place."""
    top = 0
    for i in range(n):
        top = max(top, sizes[i])
    if top < counts.shape[0]:
        for v in range(top + 1):
            counts[v] = 0
        for i in range(n):
            counts[sizes[i]] += 1
        o = 0
        for v in range(top + 1):
            for _ in range(counts[v]):
                out[o] = v
                o += 1
        return
    for i in range(n):
        out[i] = sizes[i]
    a = out[:n]
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


@njit_no_refcount
def _fulfilled(sorted_sizes, start, n, prefix, params, estimate):
    """Does the node fulfil its risk model once the first ``prefix`` of its ``n`` free classes
    (``sorted_sizes`` ascending, running sums ``start``) are suppressed?  The arithmetic of
    the models' ``_fulfilled`` (``estimate``: the population estimators' scratch)."""
    if params[RISK_POPULATION_T] >= 0.0:
        return unique_share_fulfilled(sorted_sizes, prefix, n, np.int64(params[RISK_ESTIMATOR]),
                                      params[RISK_POPULATION_SIZE], params[RISK_POPULATION_T],
                                      estimate)
    records = start[n] - start[prefix]
    classes = n - prefix
    if params[RISK_UNIQUES_T] >= 0.0:
        ones = 0
        while ones < n and sorted_sizes[ones] <= 1:
            ones += 1
        uniques = max(ones - prefix, 0)
        share = uniques / records if records > 0 else 0.0
        return share <= params[RISK_UNIQUES_T]
    ok = records == 0 or 1.0 / (records / classes) <= params[RISK_AVERAGE_T]
    top = np.int64(params[RISK_SMALLEST_SIZE]) - 1
    if top < 0:
        return ok
    fraction = 0.0
    below, p = np.int64(0), np.int64(0)  # classes of at most s - 1 records, then of at most s
    for s in range(1, top + 1):
        while p < n and sorted_sizes[p] <= s:
            p += 1
        left = max(p - max(prefix, below), 0)
        if records > 0:
            fraction += float(left) * s / records
        below = p
    return ok and fraction <= params[RISK_RECORDS]


@njit_no_refcount
def _state(sorted_sizes, start, n, prefix, params, estimate, base, limit):
    if _fulfilled(sorted_sizes, start, n, prefix, params, estimate):
        return _FULFILLED
    return _ABORT if base + start[prefix] > limit else _NOT_FULFILLED


@njit_no_refcount
def _prefix(sorted_sizes, start, n, params, estimate, base, limit):
    """How many of the sorted free classes ARX's binary search suppresses
    (``suppressWhileNotFulfilledBinary``; as :func:`gpuppdp.models.risk._binary_search`): 1
    where even the first exceeds the limit."""
    if base + start[1] > limit:
        return np.int64(1)
    low, high = np.int64(0), n - 1
    mid = _java_half(low + high)
    prefix = mid + 1
    while low <= high:
        st = _state(sorted_sizes, start, n, prefix, params, estimate, base, limit)
        if st == _ABORT:
            return prefix
        if st == _FULFILLED:
            high = mid - 1
        else:
            low = mid + 1
        mid = _java_half(low + high)
        prefix = mid + 1
    if _state(sorted_sizes, start, n, prefix, params, estimate, base, limit) == _NOT_FULFILLED \
            and mid + 1 < n:
        prefix += 1
    return prefix


@njit_no_refcount
def _all_star(c, codes, levels, stars, star_off):
    for j in range(codes.shape[1]):
        if not stars[star_off[j, levels[j]] + codes[c, j]]:
            return False
    return True


@njit_no_refcount
def _loss_key(c, size, codes, share, share_at):
    """Class ``c``'s own loss (:meth:`gpuppdp.engine.metrics.Loss.suppression_order`,
    weights 1): ``prod_j (|E| share_j + 1)^(1/q) - 1``."""
    q = codes.shape[1]
    exponent = 1.0 / q
    g = 1.0
    for j in range(q):
        g = g * (float(size[c]) * share[share_at[j] + codes[c, j]] * 1.0 + 1.0) ** exponent
    return g - 1.0


@njit_no_refcount
def _by_key_first(tied, n, keys, buffer):
    """``tied[:n]`` (classes in first appearance) sorted stably by ``keys`` (by their position
    in ``tied``), bottom-up merge sort through ``buffer``."""
    width, passes = 1, 0
    src, dst = tied, buffer
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if keys[src[j]] < keys[src[i]]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
        passes += 1
    if passes % 2:  # the sorted run ended in the buffer
        for i in range(n):
            tied[i] = buffer[i]


@njit_no_refcount
def suppress_by_risk(size, codes, outlier, levels, params, stars, star_off, max_suppressed,
                     keyed, share, share_at, work, keys):
    """Add to ``outlier`` (the classes the other models suppress) the classes the node's
    risk model suppresses.  ``size`` and ``codes`` (C, q): the node's classes at its
    ``levels``; ``params``: the models' parameters (:mod:`.flash_classes`); ``stars`` at
    ``star_off[j, level] + code``: is that label ``*`` (``star_off`` (q, height + 2): each
    level's start, then its end); ``keyed``: rank classes of equal size
    by their own loss (the loss metric's shares ``share`` at offsets ``share_at`` (q,));
    ``work`` (:data:`RISK_WORK_ROWS`, C + 1) and ``keys`` (C + 1, and the population
    estimators' :func:`~gpuppdp.kernels.uniqueness.estimator_work`: they run before the keys
    are written) are scratch."""
    n_classes = size.shape[0]
    q = codes.shape[1]
    maybe_star = True  # only where every level has a '*' label (mostly the top alone)
    for j in range(q):
        any_star = False
        for i in range(star_off[j, levels[j]], star_off[j, levels[j] + 1]):
            any_star = any_star or stars[i]
        maybe_star = maybe_star and any_star
    free, free_sizes = work[FREE], work[FREE_SIZES]
    base, n = np.int64(0), np.int64(0)
    for c in range(n_classes):
        if maybe_star and _all_star(c, codes, levels, stars, star_off):
            continue
        if outlier[c]:
            base += size[c]
        elif size[c] > 0:
            free[n] = c
            free_sizes[n] = size[c]
            n += 1
    if n == 0:
        return
    sorted_sizes, start = work[SORTED], work[START]
    _sort_sizes(free_sizes, n, sorted_sizes, work[COUNTS])
    start[0] = 0
    for i in range(n):
        start[i + 1] = start[i] + sorted_sizes[i]
    if _fulfilled(sorted_sizes, start, n, 0, params, keys):
        return
    prefix = _prefix(sorted_sizes, start, n, params, keys, base, max_suppressed)
    last = sorted_sizes[prefix - 1] if prefix > 0 else 0
    smaller = 0
    while smaller < prefix and sorted_sizes[smaller] < last:
        smaller += 1
    equal = prefix - smaller
    n_tied = 0
    for i in range(n):
        n_tied += free_sizes[i] == last
    by_key = keyed and base + start[prefix] <= max_suppressed and 0 < equal < n_tied
    tied, t, taken = work[TIED], 0, 0
    for i in range(n):
        c = free[i]
        if free_sizes[i] < last:
            outlier[c] = True
        elif free_sizes[i] == last:
            if by_key:
                keys[c] = _loss_key(c, size, codes, share, share_at)
                tied[t] = c
                t += 1
            elif taken < equal:
                outlier[c] = True
                taken += 1
    if by_key:
        _by_key_first(tied, t, keys, work[BUFFER])
        for i in range(equal):
            outlier[tied[i]] = True
