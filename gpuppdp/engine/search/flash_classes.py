"""The compiled Flash's class verdicts: the classes of a node's (QIDs, sensitive value)
entries, each judged by the models' compiled checks
(:meth:`~gpuppdp.core.model.PrivacyModel.compiled_check`): distinct, entropy and recursive
(c, l)-diversity (Machanavajjhala et al. 2007), t-closeness with ARX's equal, ordered or
hierarchical distance (Li, Li & Venkatasubramanian 2007), (alpha, k)-anonymity (Wong et al.
2006), delta-disclosure privacy (Brickell & Shmatikov 2008), beta-likeness (Cao & Karras 2012)
and the (epsilon, alpha) privacy-loss model, with the same operations in the same order as the
models' vectorized checks, so the verdicts are identical (a logarithm only where NumPy's and
the C library's may differ in the last bit: delta-disclosure compares the share ratio with
bounds found with NumPy's, the privacy loss reports an entropy loss too close to call)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...kernels.groupby import space_of
from ...kernels.grouping import table_layout
from ...kernels.hashtable import find_slot

__all__ = ["PARAMETER_SLOTS", "CLOSENESS_DISTANCES", "NOT_ASKED", "UNSURE_VERDICT",
           "POPULATION_SHIFT", "judge_classes", "judge_sample_classes", "histogram_verdict",
           "peel_groups", "peel_confident_groups", "closeness", "hierarchical_emd",
           "ordered_emd", "recursive_fails", "shares_fail", "ratios_fail", "losses_fail",
           "conditional_groups", "group_prior"]

_i64 = np.int64
# rows of the classes' scratch (a carried sensitive attribute): per class its size, distinct
# values, first entry, start in the entry list and a fill cursor; the entry list; per entry
# its class (-1: a population's entry); per class its population records
SIZE, DISTINCT, FIRST, START, CURSOR, ENTRIES, CLASS_OF, POPULATION = (
    _i64(i) for i in range(8))
# entries of the models' parameters: distinct l, entropy l's ceil(l) and ln(l), recursive
# (c, l) (0: the model is not asked for), t of t-closeness (-1: not asked for; the ordered
# distance's unnormalized threshold t (m - 1)) and its distance (:data:`CLOSENESS_DISTANCES`),
# alpha of (alpha, k)-anonymity (-1: not asked for) and its value's code (-1: every value),
# beta of beta-likeness (-1: not asked for) and whether enhanced, delta-disclosure's bounds
# on p_E(v) / p(v) (high -1: not asked for), the privacy loss's epsilon (-1: not asked for),
# alpha, sum q^2 and H(q) of its prior q, k-map's k (-1: not asked for), delta-presence's
# bounds (high -1: not asked for), the average risk's t (-1: not asked for), its size
# threshold of the highest risk (0: none) and share of records at risk, sample uniqueness's t
# (-1: not asked for), LKC-privacy's confidence bound C (-1: not asked for), population
# uniqueness's t (-1: not asked for), its estimator's code
# (:data:`gpuppdp.kernels.uniqueness.ESTIMATOR_CODES`) and population size, the privacy
# loss's class-conditional prior (the bit mask of its QIDs; -1: the prior is one), then the
# sensitive values' shares of the table q_v, their -ln q_v, the privacy loss's prior q(v) and
# whether LKC-privacy lists each value (1.0) or not (0.0)
(DISTINCT_L, ENTROPY_MIN, ENTROPY_LN_L, RECURSIVE_L, RECURSIVE_C, CLOSENESS_T,
 CLOSENESS_DISTANCE, ALPHA, ALPHA_VALUE, BETA, BETA_ENHANCED, DELTA_LOW, DELTA_HIGH,
 LOSS_EPSILON, LOSS_ALPHA, PRIOR_SQ, PRIOR_ENTROPY, MAP_K, PRESENCE_LOW, PRESENCE_HIGH,
 RISK_AVERAGE_T, RISK_SMALLEST_SIZE, RISK_RECORDS, RISK_UNIQUES_T, LKC_C, RISK_POPULATION_T,
 RISK_ESTIMATOR, RISK_POPULATION_SIZE, PRIOR_COLUMNS, SHARES) = (_i64(i) for i in range(30))
#: parameters that are -1 where their model is not asked for
NOT_ASKED = (CLOSENESS_T, ALPHA, BETA, DELTA_HIGH, LOSS_EPSILON, MAP_K, PRESENCE_HIGH,
             RISK_AVERAGE_T, RISK_UNIQUES_T, LKC_C, RISK_POPULATION_T, PRIOR_COLUMNS)
#: a frequency-set entry's count with a population (k-map, delta-presence): the sample's
#: records in the low :data:`POPULATION_SHIFT` bits, the population's above them, so that the
#: roll-up's sums add both
POPULATION_SHIFT = _i64(32)
_SAMPLE_MASK = _i64((1 << 32) - 1)
#: :func:`judge_classes`'s answer when an entropy loss is too close to its bound to decide
#: with the C library's logarithm (the search then runs in Python)
UNSURE_VERDICT = _i64(-1)
#: t-closeness's distances, by their number in the parameters (as
#: :data:`gpuppdp.models.tcloseness.TCLOSENESS_DISTANCES`)
CLOSENESS_DISTANCES = ("equal", "ordered", "hierarchical")
_ORDERED, _HIERARCHICAL = (_i64(CLOSENESS_DISTANCES.index(d)) for d in ("ordered", "hierarchical"))

#: (compiled check kind, number) -> its entry in the parameters (:meth:`CompiledCheck.numbers`)
PARAMETER_SLOTS = {("distinct", "l"): DISTINCT_L, ("entropy", "min_size"): ENTROPY_MIN,
                   ("entropy", "ln_l"): ENTROPY_LN_L, ("recursive", "l"): RECURSIVE_L,
                   ("recursive", "c"): RECURSIVE_C, ("t-closeness", "t"): CLOSENESS_T,
                   ("t-closeness", "distance"): CLOSENESS_DISTANCE,
                   ("alpha-k", "alpha"): ALPHA, ("alpha-k", "value"): ALPHA_VALUE,
                   ("beta-likeness", "beta"): BETA, ("beta-likeness", "enhanced"): BETA_ENHANCED,
                   ("delta-disclosure", "low"): DELTA_LOW,
                   ("delta-disclosure", "high"): DELTA_HIGH,
                   ("privacy-loss", "epsilon"): LOSS_EPSILON,
                   ("privacy-loss", "alpha"): LOSS_ALPHA, ("privacy-loss", "prior_sq"): PRIOR_SQ,
                   ("privacy-loss", "prior_entropy"): PRIOR_ENTROPY,
                   ("privacy-loss", "prior_columns"): PRIOR_COLUMNS, ("k-map", "k"): MAP_K,
                   ("delta-presence", "low"): PRESENCE_LOW,
                   ("delta-presence", "high"): PRESENCE_HIGH,
                   ("average-risk", "t"): RISK_AVERAGE_T,
                   ("average-risk", "smallest_size"): RISK_SMALLEST_SIZE,
                   ("average-risk", "records_at_risk"): RISK_RECORDS,
                   ("sample-uniqueness", "t"): RISK_UNIQUES_T, ("lkc", "c"): LKC_C,
                   ("population-uniqueness", "t"): RISK_POPULATION_T,
                   ("population-uniqueness", "estimator"): RISK_ESTIMATOR,
                   ("population-uniqueness", "population_size"): RISK_POPULATION_SIZE}
#: where the parameters hold the values' shares (each value's table share), their -ln and the
#: privacy loss's prior, by the arrays' names in :meth:`CompiledCheck.arrays`, in values
VALUE_BLOCKS = {"shares": 0, "neg_log_shares": 1, "prior": 2, "listed": 3}
_BLOCKS, _PRIOR, _LISTED = (_i64(len(VALUE_BLOCKS)), _i64(VALUE_BLOCKS["prior"]),
                            _i64(VALUE_BLOCKS["listed"]))
#: the relative rounding band of an entropy loss, per value of the class (NumPy's and the C
#: library's log2 differ by at most an ulp or two, so the sums by a few ulps per term)
_ENTROPY_BAND = 2.0 ** -50


@njit(cache=True)
def hierarchical_emd(hist, d, n, tree, value_counts):
    """ARX's hierarchical earth mover's distance of a class of ``n`` records whose ``d``
    (sensitive code, count) pairs are ``hist[0:2, :d]`` (see
    :meth:`gpuppdp.models.tcloseness.TCloseness._hierarchical`): ``extra_v = P_v n - f_v R``
    per value, then per inner node, level by level, ``pos`` and ``neg`` over its children,
    the cost ``(L/H) min(pos, neg)`` added in node order, the node's extra ``pos - neg``;
    ``cost / (R n)``.  ``tree``: the height H, then per level its node count K, K + 1 child
    offsets and the children (indices into the level below); ``value_counts``: P_v and R."""
    m = value_counts.shape[0] - 1
    rows = value_counts[m]
    below, above = hist[2], hist[3]
    for v in range(m):
        below[v] = value_counts[v] * n
    for t in range(d):
        below[hist[0, t]] -= hist[1, t] * rows
    height = tree[0]
    at = 1
    cost = 0.0
    for level in range(1, height + 1):
        k_nodes = tree[at]
        ptr = at + 1
        children = ptr + k_nodes + 1
        weight = level / height
        for k in range(k_nodes):
            pos, total = np.int64(0), np.int64(0)
            for c in range(tree[ptr + k], tree[ptr + k + 1]):
                x = below[tree[children + c]]
                pos += max(x, 0)
                total += x
            neg = pos - total
            cost += weight * float(min(pos, neg))
            above[k] = pos - neg
        for k in range(k_nodes):
            below[k] = above[k]
        at = children + tree[ptr + k_nodes]
    return cost / (float(rows) * float(n))


@njit(cache=True)
def ordered_emd(hist, d, n, order, params):
    """ARX's ordered earth mover's distance, unnormalized, of a class of ``n`` records whose
    ``d`` (sensitive code, count) pairs are ``hist[0:2, :d]`` (see
    :meth:`gpuppdp.models.tcloseness.TCloseness._ordered`): over the values in the attribute's
    order (``order``: the codes by position), ``run += p_v - q_v``, ``sum += |run|``, with
    ``p_v = f_v / n`` (0 for a value not in the class) -- the ordered-sum kernel's operations
    (:mod:`gpuppdp.kernels.histograms`).  ``hist[2]`` (zeros) holds the counts by code and is
    zeros again on return."""
    dense = hist[2]
    for t in range(d):
        dense[hist[0, t]] = hist[1, t]
    total = 0.0
    run = 0.0
    for i in range(order.shape[0]):
        v = order[i]
        run += float(dense[v]) / float(n) - params[SHARES + v]
        total += abs(run)
        dense[v] = 0
    return total


@njit(cache=True)
def closeness(hist, d, n, params, tree, value_counts):
    """The t-closeness distance of a class (``hist``, ``d``, ``n`` as in
    :func:`hierarchical_emd`) that ``params`` asks for: ARX's equal distance
    ``(1 + sum (|q - p| - q)) / 2`` in ascending sensitive code, :func:`ordered_emd` (``tree``
    the codes in the attribute's order) or :func:`hierarchical_emd`."""
    if params[CLOSENESS_DISTANCE] == _HIERARCHICAL:
        return hierarchical_emd(hist, d, n, tree, value_counts)
    if params[CLOSENESS_DISTANCE] == _ORDERED:
        return ordered_emd(hist, d, n, tree, params)
    distance = 1.0
    for t in range(d):
        share = params[SHARES + hist[0, t]]
        distance += abs(share - float(hist[1, t]) / float(n)) - share
    return distance / 2.0


@njit(cache=True)
def recursive_fails(hist, d, params):
    """Recursive (c, l)-diversity's verdict on a class's ``d`` counts ``hist[1, :d]`` (sorted
    ascending into ``hist[3]``, by insertion: the (code, count) pairs stay for the other
    models): fewer than ``l`` values, or ``r[d-1] >= c (r[0] + ... + r[d-l])``."""
    r = hist[3]
    for t in range(d):
        f = hist[1, t]
        u = t
        while u > 0 and r[u - 1] > f:
            r[u] = r[u - 1]
            u -= 1
        r[u] = f
    l_ = np.int64(params[RECURSIVE_L])
    if d < l_:
        return True
    low = np.int64(0)
    for t in range(d - l_ + 1):
        low += r[t]
    return not (float(r[d - 1]) < float(low) * params[RECURSIVE_C])


@njit(cache=True)
def shares_fail(hist, d, n, params):
    """(alpha, k)-anonymity's and beta-likeness's verdicts on a class of ``n`` records
    (:mod:`gpuppdp.models.distribution`): a share ``p_E(v) = f_v / n`` above ``alpha`` (of
    the value ``ALPHA_VALUE``, unless -1); for ``p_E(v) > p(v)`` a gain ``(p_E(v) - p(v)) /
    p(v)`` above ``beta`` or, enhanced, above ``-ln p(v)``."""
    m = (params.shape[0] - SHARES) // _BLOCKS
    for t in range(d):
        v = hist[0, t]
        share = float(hist[1, t]) / float(n)
        if params[ALPHA] >= 0 and share > params[ALPHA] and \
                (params[ALPHA_VALUE] < 0 or v == params[ALPHA_VALUE]):
            return True
        p = params[SHARES + v]
        if params[BETA] >= 0 and share > p:
            gain = (share - p) / p
            if gain > params[BETA] or (params[BETA_ENHANCED] and gain > params[SHARES + m + v]):
                return True
    return False


@njit(cache=True)
def ratios_fail(hist, d, n, params):
    """delta-disclosure privacy's verdict on a class of ``n`` records
    (:class:`~gpuppdp.models.distribution.DeltaDisclosurePrivacy`): a value whose ratio
    ``p_E(v) / p(v)`` is at most ``DELTA_LOW`` or at least ``DELTA_HIGH``, the ratios past
    which the model's ``|log2(p_E(v) / p(v))|`` reaches ``delta``."""
    for t in range(d):
        ratio = float(hist[1, t]) / float(n) / params[SHARES + hist[0, t]]
        if ratio <= params[DELTA_LOW] or ratio >= params[DELTA_HIGH]:
            return True
    return False


@njit(cache=True)
def losses_fail(hist, d, n, params, prior, divisor, prior_sq, prior_entropy, prior_terms):
    """The (epsilon, alpha) privacy-loss model's verdict on a class of ``n`` records
    (:func:`~gpuppdp.models.distribution.privacy_losses`, the same sums in ascending code)
    against the prior ``q_v = prior[v] / divisor`` (``sum q^2`` and ``H(q)`` given, summed
    over ``prior_terms`` values where computed here): 1 when
    ``sqrt(max(sum q^2 + sum_v (p_E^2 - 2 p_E q_v), 0))`` exceeds ``epsilon`` or
    ``|H(q) - H(p_E)|`` exceeds ``alpha``, 0 when neither does, :data:`UNSURE_VERDICT` when
    the entropy loss lies within the logarithms' rounding band of ``alpha``."""
    sq, plogp, size = 0.0, 0.0, 0.0
    for t in range(d):
        share = float(hist[1, t]) / float(n)
        sq += share * share - 2.0 * share * (float(prior[hist[0, t]]) / divisor)
        term = share * math.log2(share)
        plogp += term
        size += abs(term)
    if math.sqrt(max(prior_sq + sq, 0.0)) > params[LOSS_EPSILON]:
        return 1
    loss = abs(prior_entropy - -plogp)
    if abs(loss - params[LOSS_ALPHA]) <= (d + prior_terms + 8) * _ENTROPY_BAND * \
            (size + abs(prior_entropy)):
        return UNSURE_VERDICT
    return 1 if loss > params[LOSS_ALPHA] else 0


@njit(cache=True)
def conditional_groups(n_classes, class_codes, cls, sens, count, node_radix, params, m, table,
                       table_key, scratch, group_of, group_size, group_values):
    """The privacy loss's class-conditional prior
    (:meth:`~gpuppdp.models.distribution.PrivacyLoss._conditional_losses`): the node's classes
    grouped by their codes on the prior's QIDs (the bit mask ``params[PRIOR_COLUMNS]``), per
    class its group (``group_of``), per group its records (``group_size``) and its records of
    each of the ``m`` sensitive values (``group_values[g m + v]``)."""
    q = class_codes.shape[1]
    columns = np.int64(params[PRIOR_COLUMNS])
    space = np.int64(1)
    for j in range(q):
        if (columns >> j) & 1:
            space *= max(node_radix[0, j], 1)
    dense, shift, mask = table_layout(n_classes, space)
    groups = 0
    for k in range(n_classes):
        key, stride = np.int64(0), np.int64(1)
        for j in range(q):
            if (columns >> j) & 1:
                key += np.int64(class_codes[k, j]) * stride
                stride *= max(node_radix[0, j], 1)
        g = _group_of(key, groups, dense, table, table_key, scratch, shift, mask)
        if g == groups:
            group_size[g] = 0
            group_values[g * m:(g + 1) * m] = 0
            groups += 1
        group_of[k] = g
        group_size[g] += cls[SIZE, k]
        for t in range(cls[DISTINCT, k]):
            e = cls[ENTRIES, cls[START, k] + t]
            group_values[g * m + sens[e]] += count[e]
    for g in range(groups):
        table[scratch[g]] = -1


@njit(cache=True)
def group_prior(group_values, g, m, size):
    """``(sum q^2, H(q), values)`` of group ``g``'s sensitive distribution
    (:func:`conditional_groups`), summed in ascending code over its values present, as
    ``_conditional_losses`` sums them."""
    q_sq, plogp, terms = 0.0, 0.0, 0
    for v in range(m):
        c = group_values[g * m + v]
        if c > 0:
            share = float(c) / float(size)
            q_sq += share * share
            plogp += share * math.log2(share)
            terms += 1
    return q_sq, -plogp, terms


@njit(cache=True)
def judge_sample_classes(count, size, min_size, params, outlier):
    """The sample's classes among a node's entries ``count`` (counts packed with the
    population's: :data:`POPULATION_SHIFT`), each judged by size, k-map and delta-presence as
    :mod:`gpuppdp.models.population` judges it.  The union of the sample's and the
    population's frequency sets lists the sample's entries first, and a rolled-up set lists its
    classes in the order of their first bottom entry, so the classes holding sample records
    come first: their sample sizes go into ``size``, their verdicts into ``outlier``; returns
    their number."""
    m = 0
    while m < count.shape[0] and count[m] & _SAMPLE_MASK > 0:
        s = count[m] & _SAMPLE_MASK
        size[m] = s
        outlier[m] = s < min_size or _population_fails(s, count[m] >> POPULATION_SHIFT, params)
        m += 1
    return m


@njit(inline='always')
def _subset_at(subsets, at, node_radix, n):
    """The QID subset laid out at ``subsets[at]`` (:func:`peel_groups`): ``(k, columns, where
    the next starts, the scratch table's layout for n classes)``."""
    k, width = subsets[at], subsets[at + 1]
    cols = subsets[at + 2:at + 2 + width]
    space = np.int64(1)
    for c in cols:
        space *= max(node_radix[0, c], 1)
    dense, shift, mask = table_layout(n, space)
    return k, cols, at + 2 + width, dense, shift, mask


@njit(cache=True)
def peel_groups(size, codes, node_radix, outlier, subsets, table, table_key, scratch, total,
                work):
    """k-anonymity on QID subsets (:class:`~gpuppdp.models.groups.KAnonymityOnSubsets`,
    LKC-privacy without its confidence bound) on a node's classes ``size`` / ``codes`` (its
    radices ``node_radix[0]``): a class not yet ``outlier`` becomes one when its group on a
    subset -- the classes left that share its codes there -- holds fewer records than the
    subset's ``k``, until no class does (``subsets``: their number, then per subset ``k``,
    its length and its columns).  The classes left are the largest set whose groups all
    reach their ``k``, whatever the order of the removals, as the models' own peeling finds
    it.  ``total``: each group's records; ``work`` (2, C): each class's group and the
    classes left (scratch)."""
    group, live = work[0], work[1]
    n_live = _live_classes(outlier, size.shape[0], live)
    changed = True
    while changed:
        changed = False
        at = 1
        for _ in range(subsets[0]):
            k, cols, at, dense, shift, mask = _subset_at(subsets, at, node_radix, size.shape[0])
            groups = _alive_groups(size, codes, cols, node_radix, live, n_live, dense, shift,
                                   mask, table, table_key, scratch, total, group)
            kept = 0
            for t in range(n_live):
                e = live[t]
                if total[group[e]] < k:
                    outlier[e] = True
                    changed = True
                else:
                    live[kept] = e
                    kept += 1
            n_live = kept
            for g in range(groups):
                table[scratch[g]] = -1


@njit(cache=True)
def peel_confident_groups(size, codes, node_radix, outlier, subsets, table, table_key, scratch,
                          total, cls, sens, count, params, work, values):
    """LKC-privacy with its confidence bound (:class:`~gpuppdp.models.groups.LKCPrivacy`, C < 1)
    on a node's classes ``size`` / ``codes`` (entries ``cls[ENTRIES]`` from ``cls[START]``:
    :func:`judge_classes`): a class not yet ``outlier`` becomes one when its group on a subset
    -- the classes left that share its codes there -- holds fewer records than the subset's
    ``k`` or a listed sensitive value (``params``' ``listed`` block) makes up more than
    ``params[LKC_C]`` of them.  Each round judges every subset with the classes left at its
    start, then suppresses all the failing classes at once, until a round fails none: the
    model's own rounds (:meth:`~gpuppdp.models.groups._GroupModel.class_fails`; the
    confidence is not monotonic in the classes removed, so the order matters).

    After the first round a subset's groups are judged again only where the round before
    failed a class (:func:`_touched_groups`): a group that fails loses every class, so one
    that lost none is the group the round before passed, with the same verdict.  ``work``
    (6, C): per class its group in the subset judged (-1: none) and the round that failed it
    (0: none), the classes left, the classes failed by the round before, then by this one,
    and per entry of the classes (in their order) its value and its records if the value is
    listed (else 0); ``values`` (groups x values): each group's records per value;
    ``total``: each group's records, then -1 where it fails (scratch)."""
    n = size.shape[0]
    group, failed, live, newly, value, listed = work[0], work[1], work[2], work[3], work[4], \
        work[5]
    n_live = _live_classes(outlier, n, live)
    first = SHARES + _LISTED * ((params.shape[0] - SHARES) // _BLOCKS)
    for e in range(n):
        failed[e] = 0
        for u in range(cls[START, e], cls[START, e] + cls[DISTINCT, e]):
            i = cls[ENTRIES, u]
            value[u] = sens[i]
            listed[u] = count[i] if params[first + sens[i]] > 0.0 else 0
    judged, before = 1, 0  # the round, and the classes the round before failed
    while True:
        at, now = 1, before
        for _ in range(subsets[0]):
            k, cols, at, dense, shift, mask = _subset_at(subsets, at, node_radix, n)
            if judged == 1:
                groups = _alive_groups(size, codes, cols, node_radix, live, n_live, dense,
                                       shift, mask, table, table_key, scratch, total, group)
            else:
                groups = _touched_groups(size, codes, cols, node_radix, live, n_live, newly,
                                         before, dense, shift, mask, table, table_key,
                                         scratch, total, group)
            now = _fail_unconfident(live, n_live, groups, k, group, total, cls, value, listed,
                                    params, values, failed, judged, newly, now)
            for g in range(groups):
                table[scratch[g]] = -1
        if now == before:
            return
        for t in range(before, now):  # this round's failures, suppressed, go first
            outlier[newly[t]] = True
            newly[t - before] = newly[t]
        before = now - before
        n_live = _live_classes(outlier, n_live, live, live)
        judged += 1


@njit(inline='always')
def _live_classes(outlier, n, live, among=None):
    """The classes not ``outlier`` -- of ``0..n-1``, or of the first ``n`` of ``among`` --
    listed in ``live`` in order; returns how many."""
    kept = 0
    for t in range(n):
        e = t if among is None else among[t]
        if not outlier[e]:
            live[kept] = e
            kept += 1
    return kept


@njit(inline='always')
def _fail_unconfident(live, n_live, groups, k, group, total, cls, value, listed, params,
                      values, failed, judged, newly, now):
    """:func:`peel_confident_groups`' verdicts on one subset: each of the ``groups`` fails
    (``total`` -1) when it holds fewer than ``k`` records or a listed value makes up more than
    C of them (``value`` and ``listed``: the classes' entries'), and so does each class left
    in it (``failed`` = ``judged``, listed in ``newly`` from ``now`` on); returns where the
    list ends."""
    m = (params.shape[0] - SHARES) // _BLOCKS
    for v in range(groups * m):
        values[v] = 0
    for t in range(n_live):
        e = live[t]
        g = group[e]
        if g < 0 or total[g] < k:  # (a group under k fails whatever its values)
            continue
        for u in range(cls[START, e], cls[START, e] + cls[DISTINCT, e]):
            values[g * m + value[u]] += listed[u]
    for g in range(groups):
        top = 0
        for v in range(m):
            top = max(top, values[g * m + v])
        if total[g] < k or float(top) / max(float(total[g]), 1.0) > params[LKC_C]:
            total[g] = -1
    for t in range(n_live):
        e = live[t]
        if group[e] >= 0 and total[group[e]] < 0 and failed[e] != judged:
            failed[e] = judged
            newly[now] = e
            now += 1
    return now


@njit(inline='always')
def _alive_groups(size, codes, cols, node_radix, live, n_live, dense, shift, mask, table,
                  table_key, scratch, total, group):
    """The classes ``live[:n_live]`` grouped on the subset's columns ``cols``: each one's group
    into ``group``, each group's records into ``total``; returns the groups (their slots in
    ``scratch``, for the caller to clear the table)."""
    groups = 0
    for t in range(n_live):
        e = live[t]
        g = _group_of(_group_key(codes, e, cols, node_radix), groups, dense, table, table_key,
                      scratch, shift, mask)
        if g == groups:
            total[g] = 0
            groups += 1
        group[e] = g
        total[g] += size[e]
    return groups


@njit(inline='always')
def _touched_groups(size, codes, cols, node_radix, live, n_live, newly, before, dense, shift,
                    mask, table, table_key, scratch, total, group):
    """The groups on the subset's columns ``cols`` of the classes the round before failed
    (``newly[:before]``), with the classes left (``live[:n_live]``) in them: each class left
    its group in ``group`` (-1: in none of them), each group's records in ``total``; returns
    the groups (their slots in ``scratch``, for the caller to clear the table)."""
    groups = 0
    for t in range(before):
        g = _group_of(_group_key(codes, newly[t], cols, node_radix), groups, dense, table,
                      table_key, scratch, shift, mask)
        if g == groups:
            total[g] = 0
            groups += 1
    for t in range(n_live):
        e = live[t]
        g = find_slot(_group_key(codes, e, cols, node_radix), dense, table, table_key, shift,
                      mask)[1]
        group[e] = g
        if g >= 0:
            total[g] += size[e]
    return groups


@njit(inline='always')
def _group_of(key, groups, dense, table, table_key, scratch, shift, mask):
    """The group of ``key`` in the scratch table (:func:`~...kernels.hashtable.find_slot`);
    a new key opens group ``groups`` (its key in ``table_key``, its slot in ``scratch``)."""
    slot, g = find_slot(key, dense, table, table_key, shift, mask)
    if g < 0:
        g = groups
        table[slot] = g
        table_key[g] = key
        scratch[g] = slot
    return g


@njit(cache=True)
def _group_key(codes, e, cols, node_radix):
    """Class ``e``'s key on the QID columns ``cols`` (mixed radix at the node's levels)."""
    key = np.int64(0)
    stride = np.int64(1)
    for c in cols:
        key += np.int64(codes[e, c]) * stride
        stride *= max(node_radix[0, c], 1)
    return key


@njit(cache=True)
def _population_fails(size, population, params):
    """k-map's and delta-presence's verdicts on a class of ``size`` sample records and
    ``population`` population records."""
    if params[MAP_K] >= 0 and population < params[MAP_K]:
        return True
    if params[PRESENCE_HIGH] >= 0:
        delta = float(size) / float(population)
        return delta < params[PRESENCE_LOW] or delta > params[PRESENCE_HIGH]
    return False


@njit(cache=True)
def histogram_verdict(hist, d, total, params, tree, value_counts, prior, divisor, prior_sq,
                      prior_entropy, prior_terms):
    """The sensitive attribute's models' verdict on a class of ``total`` records whose ``d``
    (sensitive code, count) pairs ``hist[:2, :d]`` are sorted by code (the privacy loss's
    prior: :func:`losses_fail`): 1 when one of them fails it, 0 when none does,
    :data:`UNSURE_VERDICT` when the privacy loss cannot tell."""
    fails = False
    if params[ENTROPY_MIN] > 0:
        flogf = 0.0
        for t in range(d):
            flogf += float(hist[1, t]) * math.log(hist[1, t])
        threshold = float(total) * (math.log(total) - params[ENTROPY_LN_L])
        fails = d < params[ENTROPY_MIN] or threshold < flogf
    if not fails and params[CLOSENESS_T] >= 0:
        fails = closeness(hist, d, total, params, tree, value_counts) > params[CLOSENESS_T]
    if not fails and params[RECURSIVE_L] > 0:
        fails = recursive_fails(hist, d, params)
    if not fails and (params[ALPHA] >= 0 or params[BETA] >= 0):
        fails = shares_fail(hist, d, total, params)
    if not fails and params[DELTA_HIGH] >= 0:
        fails = ratios_fail(hist, d, total, params)
    if not fails and params[LOSS_EPSILON] >= 0:
        return losses_fail(hist, d, total, params, prior, divisor, prior_sq, prior_entropy,
                           prior_terms)
    return _i64(1) if fails else _i64(0)


@njit(cache=True)
def _class_verdict(k, cls, sens, count, hist, params, tree, value_counts, conditional,
                   group_work, group_values):
    """:func:`histogram_verdict` of class ``k`` (its (sensitive code, count) pairs sorted
    into ``hist``), against its group's prior where the privacy loss's is class-conditional
    (:func:`conditional_groups`), else the parameters'."""
    d = cls[DISTINCT, k]
    for t in range(d):  # (sensitive code, count), sorted by code (insertion)
        e = cls[ENTRIES, cls[START, k] + t]
        v, f = np.int64(sens[e]), count[e]
        u = t
        while u > 0 and hist[0, u - 1] > v:
            hist[0, u], hist[1, u] = hist[0, u - 1], hist[1, u - 1]
            u -= 1
        hist[0, u], hist[1, u] = v, f
    m = hist.shape[1]
    if conditional:
        g = group_work[0, k]
        q_sq, h, terms = group_prior(group_values, g, m, group_work[1, g])
        return histogram_verdict(hist, d, cls[SIZE, k], params, tree, value_counts,
                                 group_values[g * m:(g + 1) * m], float(group_work[1, g]),
                                 q_sq, h, terms)
    prior = SHARES + _PRIOR * ((params.shape[0] - SHARES) // _BLOCKS)
    return histogram_verdict(hist, d, cls[SIZE, k], params, tree, value_counts,
                             params[prior:prior + m], 1.0, params[PRIOR_SQ],
                             params[PRIOR_ENTROPY], 0)


@njit(cache=True)
def judge_classes(pos, n, codes, sens, count, node_radix, table, table_key, scratch, cls,
                   class_codes, hist, params, tree, value_counts, min_size, outlier, group_work,
                   group_values):
    """The equivalence classes of the node's entries ``pos:pos+n`` (distinct (QIDs,
    sensitive value) pairs, in canonical order): entries with equal QID codes, numbered in
    order of first appearance (a hashed or directly addressed table as in the roll-up), each
    judged by size and by the models of ``params`` as the Python models judge it
    (:mod:`gpuppdp.models.ldiversity`: entropy summed in ascending sensitive code, recursive
    (c, l) by :func:`recursive_fails`; :mod:`gpuppdp.models.tcloseness` by :func:`closeness`;
    :mod:`gpuppdp.models.distribution` by :func:`shares_fail`, :func:`ratios_fail` and
    :func:`losses_fail`).  With k-map or delta-presence, the population's entries (the
    sensitive code ``hist.shape[1]``, past the attribute's values; their records packed past
    :data:`POPULATION_SHIFT`) add to their class's population records only, and the
    classes holding sample records, the first ones (as in :func:`judge_sample_classes`),
    are judged against them too.  The privacy loss's class-conditional prior: each class's
    group's (:func:`conditional_groups`, in ``group_work`` and ``group_values``).  Fills
    ``cls``, ``class_codes`` and ``outlier``; returns the number of classes holding sample
    records, or :data:`UNSURE_VERDICT`."""
    q = codes.shape[1]
    population = params[MAP_K] >= 0 or params[PRESENCE_HIGH] >= 0
    outside = hist.shape[1]  # a population's entries' sensitive code
    # (a key space below the bottom's, which fits)
    dense, shift, mask = table_layout(n, space_of(node_radix[0, :q]))
    n_classes = 0
    for i in range(n):
        e = pos + i
        key = np.int64(0)
        stride = np.int64(1)
        for j in range(q):
            key += np.int64(codes[e, j]) * stride
            stride *= max(node_radix[0, j], 1)
        k = _group_of(key, n_classes, dense, table, table_key, scratch, shift, mask)
        if k == n_classes:
            cls[SIZE, k], cls[DISTINCT, k], cls[FIRST, k], cls[POPULATION, k] = 0, 0, e, 0
            n_classes += 1
        if population and sens[e] == outside:
            cls[POPULATION, k] += count[e] >> POPULATION_SHIFT
            cls[CLASS_OF, i] = -1
            continue
        cls[SIZE, k] += count[e]
        cls[DISTINCT, k] += 1
        cls[CLASS_OF, i] = k
    for k in range(n_classes):
        table[scratch[k]] = -1
    if population:  # the classes holding sample records come first
        released = 0
        while released < n_classes and cls[SIZE, released] > 0:
            released += 1
        n_classes = released
    for k in range(n_classes):
        for j in range(q):
            class_codes[k, j] = codes[cls[FIRST, k], j]
    # each class's entries, in canonical order
    at = 0
    for k in range(n_classes):
        cls[START, k] = cls[CURSOR, k] = at
        at += cls[DISTINCT, k]
    for i in range(n):
        k = cls[CLASS_OF, i]
        if k >= 0:
            cls[ENTRIES, cls[CURSOR, k]] = pos + i
            cls[CURSOR, k] += 1
    conditional = params[PRIOR_COLUMNS] >= 0
    if conditional:
        conditional_groups(n_classes, class_codes, cls, sens, count, node_radix, params,
                           hist.shape[1], table, table_key, scratch, group_work[0],
                           group_work[1], group_values)
    for k in range(n_classes):
        d = cls[DISTINCT, k]
        total = cls[SIZE, k]
        fails = total < min_size
        if not fails and params[DISTINCT_L] > 0:
            fails = d < params[DISTINCT_L]
        if not fails and (params[ENTROPY_MIN] > 0 or params[RECURSIVE_L] > 0 or
                          max(params[CLOSENESS_T], params[ALPHA], params[BETA],
                              params[DELTA_HIGH], params[LOSS_EPSILON]) >= 0):
            verdict = _class_verdict(k, cls, sens, count, hist, params, tree, value_counts,
                                     conditional, group_work, group_values)
            if verdict == UNSURE_VERDICT:
                return UNSURE_VERDICT
            fails = verdict == 1
        if not fails and population:
            fails = _population_fails(total, cls[POPULATION, k], params)
        outlier[k] = fails
    return n_classes
