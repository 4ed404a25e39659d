"""Flash compiled: ARX's Flash traversal and node check in one Numba function.

:class:`~gpuppdp.engine.search.FlashSearch` walks the lattice in Python and asks a
:class:`~gpuppdp.engine.evaluate.LatticeOracle` about one node at a time: about 0.1 ms of
interpreter work per checked node, as much as ARX's whole check on small tables.  Here the
same traversal (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012, as ARX 3.9.2 runs it: strategy
order, binary phase with ``java.util.PriorityQueue`` semantics, linear phase, predictive tagging,
bound pruning, ``trackOptimum``) and the node check -- the roll-up from the smallest cached
ancestor (:func:`~gpuppdp.kernels.grouping._rollup_range`), the class verdicts, the suppressed
count and the metric (the kernels the batched evaluator uses, so the losses are bit-identical)
-- run in one compiled call; Python runs once per search.

It covers the common case: privacy models that judge a class by its size alone (k-anonymity),
the loss, precision and discernibility metrics, a CPU backend, a frequency set of at most
:data:`MAX_BOTTOM_ENTRIES` entries and a lattice of at most :data:`MAX_LATTICE` nodes (node
properties are arrays the size of the lattice here: one byte per direction and property set,
as ARX's solution space stores them for small lattices).  Anything else runs the Python
traversal, which gives the same optimum and checked nodes.

Node properties: ``explicit[g]`` holds the bits set on ``g`` alone; ``up[g]`` / ``down[g]``
the bits propagated to the cone above / below an apex.  A cone is marked when it is set,
stopping where the bits are already present (a marked node's cone is marked), so each node
takes each bit at most once per direction.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..kernels.grouping import ROLLUP_DENSE_FLOOR, ROLLUP_DENSE_RATIO, _rollup_range
from ..kernels.groupby import space_of
from ..kernels.segsum import _one_node
from ..models import PrivacyModel, Requirement
from .evaluate import NodeStats
from .metrics import (Discernibility, Loss, Precision, _mean_share, _normalize_and_aggregate,
                      _precision)
from .solution_space import (ANON, CHECKED, INSUFF, KANON, NOTANON, NOTKANON, SUCC_PRUNED,
                             VISITED, _fill_level)

__all__ = ["supported", "run"]

#: largest lattice searched here (its node properties take 7 bytes + 16 of bounds per node)
MAX_LATTICE = 1 << 22
#: largest bottom frequency set: above it the batched roll-up's threads and partitions pay off
MAX_BOTTOM_ENTRIES = 1 << 18
#: frequency-set entries cached for roll-ups (as :class:`LatticeOracle`'s default), at least
#: this many bottom sets' worth; when full, every set but the bottom's is dropped
CACHE_ENTRIES, CACHE_BOTTOMS = 20_000_000, 64
#: nodes the work arrays (checked nodes, candidates, priority queue) first hold; doubled and
#: the search run again when they run full
FIRST_CAPACITY = 1 << 14

METRIC_KINDS = {"loss": 0, "precision": 1, "discernibility": 2}
TAG_NONE, TAG_PRUNED, TAG_VISITED = 0, 1, 2
OK, OVERFLOW = 0, 1  # statuses: an OVERFLOW run is repeated with larger work arrays


def supported(evaluator, lattice) -> bool:
    """Whether :func:`run` can search this evaluator's problem (see the module docstring)."""
    models = evaluator.models
    return (not evaluator.backend.is_gpu and evaluator.backend.kernels == "cpu"
            and not evaluator.carries_sensitive
            and evaluator.min_class_size is not None
            and evaluator.metric.name in METRIC_KINDS
            and type(evaluator.metric) in (Loss, Precision, Discernibility)
            and all(type(m).class_fails is PrivacyModel.class_fails
                    and m.sensitive_attribute is None
                    and Requirement.RELEASED_CLASSES not in m.requires for m in models)
            and lattice.size <= MAX_LATTICE
            and int(evaluator.bottom.host_ptr[-1]) <= MAX_BOTTOM_ENTRIES
            and space_of(evaluator.encoded.node_radix(
                np.zeros((1, lattice.n_attributes), np.int64))[0]) >= 0)


def run(search, oracle) -> tuple[int | None, int, NodeStats]:
    """Run ``search`` (a set-up :class:`~.search.FlashSearch`) compiled on ``oracle``'s
    evaluator: ``(optimum id or None, checked nodes, stats of the checked nodes by id)``."""
    ev, lat = oracle.evaluator, oracle.lattice
    enc, metric = ev.encoded, ev.metric
    q = lat.n_attributes
    bottom = ev.bottom
    n0 = int(bottom.host_ptr[-1])
    hmax = int(lat.max_levels.max(initial=0))
    level_radix = np.stack([enc.node_radix(np.minimum(np.full((1, q), L), lat.max_levels))[0]
                            for L in range(hmax + 1)], axis=1)  # (q+1, hmax+1)
    width = int(lat.radix.max(initial=1))
    key_p = np.zeros((q, width))
    key_d = np.zeros((q, width))
    for j, (_, radix, p, d) in enumerate(search.terms):
        key_p[j, :radix], key_d[j, :radix] = p, d
    maps, map_off = ev.maps, ev.map_off
    kind = METRIC_KINDS[metric.name]
    if kind == 0:
        share, share_off = metric._share, metric._share_off
        loss_min, loss_max = metric._minimum, metric._maximum
    else:
        share, share_off = np.zeros(1), np.zeros((q, hmax + 1), np.int64)
        loss_min = loss_max = np.zeros(q)
    binary, linear = search.binary, search.linear
    phases = np.array([
        binary is not None, *(_phase(binary) if binary else (0, 0, 0, 0)),
        linear is not None, *(_phase(linear) if linear else (0, 0, 0, 0))], np.int64)
    arena = int(min(CACHE_ENTRIES, max(CACHE_BOTTOMS * n0, 1 << 20)))
    arena = max(arena, 2 * n0 + 1)
    codes = np.empty((arena, q), maps.dtype)
    codes[:n0] = bottom.codes
    count = np.empty(arena, np.int64)
    count[:n0] = bottom.count
    first = np.empty(arena, np.int64)
    first[:n0] = bottom.first
    # the roll-up's table: a dense one of up to ROLLUP_DENSE_RATIO n + ROLLUP_DENSE_FLOOR
    # slots, a hashed one of up to 8 n (a power of two >= 4 n)
    table = max(ROLLUP_DENSE_RATIO, 8) * n0 + ROLLUP_DENSE_FLOOR + 16
    capacity = min(lat.size + 2, FIRST_CAPACITY)
    bound_precision = search.bound is not None
    while True:
        status, opt, checked, rec_id, rec_int, rec_float = _flash(
            lat.max_levels, lat.strides, key_p, key_d, phases, search.predictive_anon,
            search.has_k, search.pruning, search.utility_full, bound_precision,
            np.asarray(metric.heights, np.float64),
            codes, count, first, n0, maps, map_off, level_radix, table,
            int(ev.min_class_size), int(ev.max_suppressed), int(enc.n_rows), kind, share,
            share_off, loss_min, loss_max, capacity)
        if status == OK:
            break
        capacity *= 2
    oracle.evaluations += checked
    order = np.argsort(rec_id[:checked], kind="stable")
    ids = rec_id[:checked][order]
    ints, floats = rec_int[:checked][order], rec_float[:checked][order]
    levels = lat.levels_of(ids)
    kept, suppressed = ints[:, 2], ints[:, 1]
    kept_records = enc.n_rows - suppressed
    stats = NodeStats(levels, ints[:, 0] > 0, ints[:, 0] > 0, suppressed, kept, ints[:, 3],
                      np.where(kept > 0, kept_records / np.maximum(kept, 1), 0.0),
                      floats[:, 0], floats[:, 1], ints[:, 4], levels.sum(axis=1))
    return (None if opt < 0 else int(opt)), int(checked), stats


def _phase(phase) -> tuple[int, int, int, int]:
    from .search import _tag_pruned, _tag_visited
    tag = {None: TAG_NONE, _tag_pruned: TAG_PRUNED, _tag_visited: TAG_VISITED}[phase.tag]
    return phase.prop, phase.skip, phase.check, tag


# ------------------------------------------------------------------------------------------
# node properties
# ------------------------------------------------------------------------------------------
@njit(cache=True)
def _has(props, g, bits):
    return (props[0, g] | props[1, g] | props[2, g]) & bits != 0


@njit(cache=True)
def _mark_cone(props, g, bits, direction, max_levels, strides, queue):
    """Set ``bits`` on ``g`` and its cone (``direction`` 1: up, 2: down), stopping at nodes
    that carry them already."""
    mark = props[direction]
    if mark[g] & bits == bits:
        return
    mark[g] |= bits
    queue[0] = g
    head, tail = 0, 1
    q = strides.shape[0]
    while head < tail:
        x = queue[head]
        head += 1
        for j in range(q):
            level = x // strides[j] % (max_levels[j] + 1)
            if direction == 1:
                if level == max_levels[j]:
                    continue
                y = x + strides[j]
            else:
                if level == 0:
                    continue
                y = x - strides[j]
            if mark[y] & bits != bits:
                mark[y] |= bits
                queue[tail] = y
                tail += 1


@njit(cache=True)
def _set(props, g, bits, up, down, max_levels, strides, queue):
    if up:
        _mark_cone(props, g, bits, 1, max_levels, strides, queue)
    elif down:
        _mark_cone(props, g, bits, 2, max_levels, strides, queue)
    else:
        props[0, g] |= bits


# ------------------------------------------------------------------------------------------
# strategy order
# ------------------------------------------------------------------------------------------
@njit(cache=True)
def _key(g, max_levels, strides, key_p, key_d, total):
    """ARX's ``FLASHStrategy`` key of node ``g`` (see :meth:`FlashSearch.key`): the same
    floating-point operations in the same order."""
    height = 0
    prec = 0.0
    dd = 0.0
    q = strides.shape[0]
    for j in range(q):
        level = g // strides[j] % (max_levels[j] + 1)
        height += level
        prec = prec + key_p[j, level]
        dd = dd + key_d[j, level]
    k0 = height / total if total != 0.0 else 0.0
    return k0, prec / q, 1.0 - dd / q


@njit(cache=True)
def _less(a, b, max_levels, strides, key_p, key_d, total):
    """-1, 0, 1: the keys of nodes ``a`` and ``b`` compared as Python tuples."""
    a0, a1, a2 = _key(a, max_levels, strides, key_p, key_d, total)
    b0, b1, b2 = _key(b, max_levels, strides, key_p, key_d, total)
    if a0 != b0:
        return -1 if a0 < b0 else 1
    if a1 != b1:
        return -1 if a1 < b1 else 1
    if a2 != b2:
        return -1 if a2 < b2 else 1
    return 0


@njit(cache=True)
def _sorted_successors(g, out, max_levels, strides, key_p, key_d, total):
    """Direct generalizations of ``g`` into ``out``, stably sorted by key; returns how
    many."""
    n = 0
    for j in range(strides.shape[0]):
        if g // strides[j] % (max_levels[j] + 1) < max_levels[j]:
            s = g + strides[j]
            i = n
            while i > 0 and _less(s, out[i - 1], max_levels, strides, key_p, key_d, total) < 0:
                out[i] = out[i - 1]
                i -= 1
            out[i] = s
            n += 1
    return n


@njit(cache=True)
def _sorted_by_key(ids, max_levels, strides, key_p, key_d, total):
    """``ids`` stably sorted by key (three stable passes, least significant key first)."""
    n = ids.shape[0]
    k = np.empty((3, n))
    for i in range(n):
        k[0, i], k[1, i], k[2, i] = _key(ids[i], max_levels, strides, key_p, key_d, total)
    order = np.arange(n)
    for c in range(2, -1, -1):
        order = order[np.argsort(k[c][order], kind="mergesort")]
    return ids[order]


# ------------------------------------------------------------------------------------------
# java.util.PriorityQueue (OpenJDK's sift rules)
# ------------------------------------------------------------------------------------------
@njit(cache=True)
def _heap_add(heap, n, x, max_levels, strides, key_p, key_d, total):
    k = n
    while k > 0:
        parent = (k - 1) >> 1
        if _less(x, heap[parent], max_levels, strides, key_p, key_d, total) >= 0:
            break
        heap[k] = heap[parent]
        k = parent
    heap[k] = x
    return n + 1


@njit(cache=True)
def _heap_poll(heap, n, max_levels, strides, key_p, key_d, total):
    result = heap[0]
    n -= 1
    x = heap[n]
    if n:
        k, half = 0, n >> 1
        while k < half:
            child = 2 * k + 1
            right = child + 1
            if right < n and _less(heap[child], heap[right], max_levels, strides, key_p, key_d,
                                   total) > 0:
                child = right
            if _less(x, heap[child], max_levels, strides, key_p, key_d, total) <= 0:
                break
            heap[k] = heap[child]
            k = child
        heap[k] = x
    return result, n


# ------------------------------------------------------------------------------------------
# the search.  Its state travels in tuples:
#   lat   = (max_levels, strides, key_p, key_d, total)
#   st    = (props, state, il, lb, queue, candidates, opt, status, work)
#           state[g]: 0 unchecked, 1 checked not anonymous, 2 checked anonymous;
#           work = (arena end, cached sets, checked nodes, candidates)
#   flags = (predictive_anon, has_k, pruning, bound_precision, heights)
#   rec   = (rec_id, rec_int, rec_float): per checked node, in check order
#   cache = (slot_start, slot_len, slot_levels, valid, table, table_key, slots, sens, outlier,
#            codes, count, first, n0, maps, map_off, level_radix)
#   prob  = (min_size, max_suppressed, n_rows, metric_kind, share, share_off, loss_min,
#            loss_max)
# ------------------------------------------------------------------------------------------
@njit(cache=True)
def _flash(max_levels, strides, key_p, key_d, phases, predictive_anon, has_k, pruning,
           utility_full, bound_precision, heights, codes, count, first, n0, maps, map_off,
           level_radix, table_size, min_size, max_suppressed, n_rows, metric_kind, share,
           share_off, loss_min, loss_max, capacity):
    """The whole search; returns ``(status, optimum, checked, rec_id, rec_int, rec_float)``
    with per checked node (in check order) its id, ``(anonymous, suppressed, kept classes,
    smallest kept class, entries)`` and ``(loss, lower bound)``.  ``status`` is
    ``OVERFLOW`` when a work array of ``capacity`` entries ran full (run again, larger)."""
    q = strides.shape[0]
    size = 1
    for j in range(q):
        size *= max_levels[j] + 1
    top = size - 1
    total = 0.0
    for j in range(q):
        total += max_levels[j]
    height_max = int(total)
    lat = (max_levels, strides, key_p, key_d, total)
    opt = np.full(1, -1, np.int64)
    status = np.zeros(1, np.int64)
    work = np.zeros(4, np.int64)
    work[0], work[1] = n0, 1
    props = np.zeros((3, size), np.uint8)
    st = (props, np.zeros(size, np.uint8), np.full(size, np.nan), np.full(size, np.nan),
          np.empty(size, np.int64), np.empty(capacity, np.int64), opt, status, work)
    il = st[2]
    flags = (predictive_anon, has_k, pruning, bound_precision, heights)
    rec = (np.empty(capacity, np.int64), np.zeros((capacity, 5), np.int64),
           np.zeros((capacity, 2)))
    slot_start = np.empty(capacity + 1, np.int64)
    slot_len = np.empty(capacity + 1, np.int64)
    valid = np.empty(capacity + 1, np.int64)
    slot_start[0], slot_len[0], valid[0] = 0, n0, 0  # slot 0: the bottom
    cache = (slot_start, slot_len, np.zeros((capacity + 1, q), np.int64), valid,
             np.full(table_size, -1, np.int32), np.empty(table_size, np.int64),
             np.empty(n0 + 1, np.int64), np.zeros(1, np.int32), np.empty(n0, np.bool_),
             codes, count, first, n0, maps, map_off, level_radix)
    prob = (min_size, max_suppressed, n_rows, metric_kind, share, share_off, loss_min,
            loss_max)
    heap = np.empty(capacity, np.int64)
    succ = np.empty((height_max + 2, q), np.int64)
    chain = np.empty(height_max + 2, np.int64)
    b_on, b_prop, b_skip, b_check, b_tag = phases[0], phases[1], phases[2], phases[3], phases[4]
    l_on, l_skip, l_check, l_tag = phases[5], phases[7], phases[8], phases[9]
    outer_skip = b_skip if b_on else l_skip
    for height in range(height_max + 1):
        m = _fill_level(max_levels, height, np.empty((0, q), np.int64))
        levels = np.empty((m, q), np.int64)
        _fill_level(max_levels, height, levels)
        ids = np.zeros(m, np.int64)
        for i in range(m):
            for j in range(q):
                ids[i] += levels[i, j] * strides[j]
        # the level's nodes not skipped, judged before any is searched (ARX's
        # getSortedUnprocessedNodes)
        keep = np.zeros(m, np.bool_)
        if not pruning or opt[0] < 0:
            for i in range(m):
                keep[i] = not _has(props, ids[i], outer_skip)
        else:
            best = il[opt[0]]
            for i in range(m):
                g = ids[i]
                if _has(props, g, outer_skip | INSUFF):
                    continue
                bound = _bound(g, lat, st, flags)
                if not math.isnan(bound) and best <= bound:
                    _set(props, g, INSUFF | SUCC_PRUNED, True, False, max_levels, strides,
                         st[4])
                else:
                    keep[i] = True
        for g in _sorted_by_key(ids[keep], max_levels, strides, key_p, key_d, total):
            if not b_on:
                _linear(g, l_skip, l_check, l_tag, succ, chain, lat, st, flags, rec, cache,
                        prob)
            else:  # the binary phase: a priority queue of path starts
                n = _heap_add(heap, 0, g, max_levels, strides, key_p, key_d, total)
                while n:
                    h, n = _heap_poll(heap, n, max_levels, strides, key_p, key_d, total)
                    if _skip(b_skip, h, lat, st, flags):
                        continue
                    # the path: from h, always on to the first successor not skipped
                    length = 1
                    chain[0] = h
                    while True:
                        ns = _sorted_successors(chain[length - 1], succ[0], max_levels,
                                                strides, key_p, key_d, total)
                        nxt = -1
                        for i in range(ns):
                            if not _skip(b_skip, succ[0, i], lat, st, flags):
                                nxt = succ[0, i]
                                break
                        if nxt < 0:
                            break
                        chain[length] = nxt
                        length += 1
                    # binary search along the path for its lowest node with the property
                    lo, hi, last = 0, length - 1, -1
                    while lo <= hi and status[0] == OK:
                        mid = (lo + hi) // 2
                        x = chain[mid]
                        if _skip(b_skip, x, lat, st, flags):
                            hi = mid - 1
                            continue
                        _check_and_tag(x, b_check, b_tag, lat, st, flags, rec, cache, prob)
                        if not _has(props, x, b_prop):
                            ns = _sorted_successors(x, succ[0], max_levels, strides, key_p,
                                                    key_d, total)
                            for i in range(ns):
                                if not _skip(b_skip, succ[0, i], lat, st, flags):
                                    if n == capacity:
                                        status[0] = OVERFLOW
                                        break
                                    n = _heap_add(heap, n, succ[0, i], max_levels, strides,
                                                  key_p, key_d, total)
                            lo = mid + 1
                        else:
                            last = x
                            hi = mid - 1
                    if last >= 0 and l_on and status[0] == OK:
                        _linear(last, l_skip, l_check, l_tag, succ, chain, lat, st, flags,
                                rec, cache, prob)
                    if status[0] != OK:
                        break
            if status[0] != OK:
                return status[0], opt[0], work[2], rec[0], rec[1], rec[2]
    if utility_full:  # ARX's computeUtilityForMonotonicMetrics
        for g in (0, top):
            if not _has(props, g, CHECKED):
                _check(g, lat, st, flags, rec, cache, prob)
    return status[0], opt[0], work[2], rec[0], rec[1], rec[2]


@njit(cache=True)
def _linear(g, skip, check, tag, succ, cursor, lat, st, flags, rec, cache, prob):
    """ARX's linear phase from ``g``, depth first: check the node, then each successor not
    skipped, in key order; a finished node's successors are pruned.  An explicit stack:
    ``succ[d]`` the sorted successors at depth ``d``, ``cursor[d]`` the next one to try."""
    max_levels, strides, key_p, key_d, total = lat
    props, status = st[0], st[7]
    nodes = np.empty(succ.shape[0], np.int64)
    counts = np.zeros(succ.shape[0], np.int64)
    depth = 0
    nodes[0] = g
    entering = True
    while depth >= 0:
        x = nodes[depth]
        if entering:
            entering = False
            counts[depth] = 0
            cursor[depth] = 0
            if not _skip(skip, x, lat, st, flags):
                _check_and_tag(x, check, tag, lat, st, flags, rec, cache, prob)
                if status[0] != OK:
                    return
                counts[depth] = _sorted_successors(x, succ[depth], max_levels, strides,
                                                   key_p, key_d, total)
                # the Python search tests the successors here for its look-ahead batch (and
                # prunes those a bound rules out): the same side effects, in the same order
                for i in range(counts[depth]):
                    _skip(skip, succ[depth, i], lat, st, flags)
        advanced = False
        while cursor[depth] < counts[depth]:
            s = succ[depth, cursor[depth]]
            cursor[depth] += 1
            if not _skip(skip, s, lat, st, flags):
                depth += 1
                nodes[depth] = s
                entering = True
                advanced = True
                break
        if not advanced:
            _set(props, x, SUCC_PRUNED, True, False, max_levels, strides, st[4])
            depth -= 1


@njit(cache=True)
def _shares(g, max_levels, strides, heights):
    """(1, q) ``level / height`` per attribute of node ``g`` (0 where the height is 0)."""
    q = strides.shape[0]
    out = np.empty((1, q))
    for j in range(q):
        level = g // strides[j] % (max_levels[j] + 1)
        out[0, j] = 0.0 if heights[j] == 0 else level / heights[j]
    return out


@njit(cache=True)
def _bound(g, lat, st, flags):
    """A lower bound of ``g``'s loss known now: the checked one, else Precision's
    data-independent one, else NaN."""
    if st[1][g] != 0:
        return st[3][g]
    if flags[3]:
        return _mean_share(_shares(g, lat[0], lat[1], flags[4]))[0]
    return np.nan


@njit(cache=True)
def _skip(trigger, g, lat, st, flags):
    props, il, opt = st[0], st[2], st[6]
    if not flags[2] or opt[0] < 0:
        return _has(props, g, trigger)
    if _has(props, g, trigger | INSUFF):
        return True
    bound = _bound(g, lat, st, flags)
    if not math.isnan(bound) and il[opt[0]] <= bound:
        _set(props, g, INSUFF | SUCC_PRUNED, True, False, lat[0], lat[1], st[4])
        return True
    return False


@njit(cache=True)
def _height(g, max_levels, strides):
    h = 0
    for j in range(strides.shape[0]):
        h += g // strides[j] % (max_levels[j] + 1)
    return h


@njit(cache=True)
def _check_and_tag(g, check, tag, lat, st, flags, rec, cache, prob):
    max_levels, strides = lat[0], lat[1]
    props, state, il, opt, status = st[0], st[1], st[2], st[6], st[7]
    if not _has(props, g, check):
        _check(g, lat, st, flags, rec, cache, prob)
        if status[0] != OK:
            return
    if state[g] == 2:  # trackOptimum: smaller loss, then lower height
        if opt[0] < 0:
            opt[0] = g
        else:
            a, b = il[g], il[opt[0]]
            if a < b or (a == b and _height(g, max_levels, strides)
                         < _height(opt[0], max_levels, strides)):
                opt[0] = g
    if tag == TAG_PRUNED:
        if _has(props, g, ANON):
            _set(props, g, SUCC_PRUNED, True, False, max_levels, strides, st[4])
    elif tag == TAG_VISITED:
        props[0, g] |= VISITED
    _prune(g, lat, st, flags)


@njit(cache=True)
def _prune(g, lat, st, flags):
    """ARX's pruning of nodes whose lower bound is no better than the optimum's loss; the
    checked nodes not yet ruled out wait as candidates until the optimum improves."""
    props, state, il, lb, queue, candidates, opt, status, work = st
    if not flags[2] or state[g] == 0:
        return
    best_node = opt[0]
    if g != best_node and _has(props, g, SUCC_PRUNED):
        return
    if g != best_node:
        if best_node >= 0 and il[best_node] <= lb[g]:
            _set(props, g, INSUFF | SUCC_PRUNED, True, False, lat[0], lat[1], queue)
        elif work[3] == candidates.shape[0]:
            status[0] = OVERFLOW
        else:
            candidates[work[3]] = g
            work[3] += 1
        return
    best = il[best_node]
    kept = 0
    for i in range(work[3]):
        c = candidates[i]
        if _has(props, c, SUCC_PRUNED):
            continue
        if best <= lb[c]:
            _set(props, c, INSUFF | SUCC_PRUNED, True, False, lat[0], lat[1], queue)
            continue
        candidates[kept] = c
        kept += 1
    if not _has(props, g, SUCC_PRUNED):
        if kept == candidates.shape[0]:
            status[0] = OVERFLOW
            return
        candidates[kept] = g
        kept += 1
    work[3] = kept


@njit(cache=True)
def _check(g, lat, st, flags, rec, cache, prob):
    """Check node ``g`` (:func:`_evaluate`) and set Flash's properties from the verdict."""
    max_levels, strides = lat[0], lat[1]
    props, state, il, lb, queue, candidates, opt, status, work = st
    predictive_anon, has_k = flags[0], flags[1]
    r = work[2]
    if r == rec[0].shape[0]:
        status[0] = OVERFLOW
        return
    _evaluate(g, r, lat, work, flags, rec, cache, prob)
    work[2] += 1
    props[0, g] |= CHECKED
    anonymous = rec[1][r, 0] > 0
    state[g] = 2 if anonymous else 1
    if anonymous:
        _set(props, g, ANON, predictive_anon, False, max_levels, strides, queue)
        il[g] = rec[2][r, 0]
    else:
        _set(props, g, NOTANON, False, predictive_anon, max_levels, strides, queue)
    if has_k:  # the size test is every model's: k-anonymous iff anonymous
        if anonymous:
            _set(props, g, KANON, True, False, max_levels, strides, queue)
        else:
            _set(props, g, NOTKANON, False, True, max_levels, strides, queue)
    lb[g] = rec[2][r, 1]


@njit(cache=True)
def _evaluate(g, r, lat, work, flags, rec, cache, prob):
    """Roll node ``g`` up from the smallest cached frequency set below it (into the cache),
    judge its classes by size and compute its metric, into record ``r``."""
    max_levels, strides = lat[0], lat[1]
    rec_id, rec_int, rec_float = rec
    (slot_start, slot_len, slot_levels, valid, table, table_key, slots, sens, outlier, codes,
     count, first, n0, maps, map_off, level_radix) = cache
    min_size, max_suppressed, n_rows, metric_kind, share, share_off, loss_min, loss_max = prob
    q = strides.shape[0]
    levels = np.empty(q, np.int64)
    for j in range(q):
        levels[j] = g // strides[j] % (max_levels[j] + 1)
    if work[0] + n0 > codes.shape[0]:  # the cache is full: keep the bottom only
        work[0], work[1] = n0, 1
    src, src_len = 0, n0
    for i in range(1, work[1]):
        s = valid[i]
        if slot_len[s] >= src_len:
            continue
        below = True
        for j in range(q):
            if slot_levels[s, j] > levels[j]:
                below = False
                break
        if below:
            src, src_len = s, slot_len[s]
    node_map_off = np.empty((1, q), np.int64)
    node_radix = np.empty((1, q + 1), np.int64)
    for j in range(q):
        node_map_off[0, j] = map_off[j, slot_levels[src, j], levels[j]]
        node_radix[0, j] = level_radix[j, levels[j]]
    node_radix[0, q] = 1
    start = np.full(1, slot_start[src], np.int64)
    stop = np.full(1, slot_start[src] + src_len, np.int64)
    out_pos = np.zeros(1, np.int64)
    out_len = np.zeros(1, np.int64)
    pos = work[0]
    _rollup_range(0, 1, pos, codes, sens, count, first, start, stop, node_map_off, maps,
                  node_radix, out_pos, codes, sens, count, first, out_len, table, table_key,
                  slots)
    n = out_len[0]
    s = r + 1  # cached in the node's slot
    slot_start[s], slot_len[s] = pos, n
    for j in range(q):
        slot_levels[s, j] = levels[j]
    valid[work[1]] = s
    work[1] += 1
    work[0] = pos + n
    # no sensitive attribute: the classes are the entries, judged by size
    size = count[pos:pos + n]
    suppressed, kept, kept_sq, all_sq = 0, 0, 0, 0
    big = np.iinfo(np.int64).max
    smallest = big
    for c in range(n):
        sz = size[c]
        fails = sz < min_size
        outlier[c] = fails
        if fails:
            suppressed += sz
        else:
            kept += 1
            kept_sq += sz * sz
            smallest = min(smallest, sz)
        all_sq += sz * sz
    anonymous = suppressed <= max_suppressed
    if metric_kind == 0:
        off = np.empty((1, q), np.int64)
        for j in range(q):
            off[0, j] = share_off[j, levels[j]]
        charged = np.empty((1, q))
        kept_sums = np.empty((1, q))
        ptr = np.zeros(2, np.int64)
        ptr[1] = n
        _one_node(0, size, codes[pos:pos + n], outlier, ptr, off, share, charged, kept_sums,
                  anonymous)
        loss = _normalize_and_aggregate(charged, loss_min, loss_max)[0]
        bound = _normalize_and_aggregate(kept_sums, loss_min, loss_max)[0]
    elif metric_kind == 1:
        shares = _shares(g, max_levels, strides, flags[4])
        loss = _precision(shares, np.full(1, float(suppressed)), float(n_rows))[0]
        bound = _mean_share(shares)[0]
    else:
        loss = float(kept_sq + n_rows * suppressed)
        bound = float(all_sq)
    rec_id[r] = g
    rec_int[r, 0] = 1 if anonymous else 0
    rec_int[r, 1] = suppressed
    rec_int[r, 2] = kept
    rec_int[r, 3] = 0 if smallest == big else smallest
    rec_int[r, 4] = n
    rec_float[r, 0] = loss if anonymous else np.nan
    rec_float[r, 1] = bound
