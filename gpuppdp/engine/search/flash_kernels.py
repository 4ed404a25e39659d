"""The compiled Flash's kernels: ARX's Flash traversal and node check in one Numba function,
:func:`_flash`, which :mod:`.flash_compiled` calls.

The traversal (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012, as ARX 3.9.2 runs it: strategy
order, binary phase with ``java.util.PriorityQueue`` semantics, linear phase, predictive
tagging, bound pruning, ``trackOptimum``) and the node check -- the roll-up from the smallest
cached set below the node (:mod:`.flash_cache`), the class verdicts
(:mod:`.flash_classes`), the suppressed count and the metric (:mod:`.flash_record`: the
kernels the batched evaluator uses, so the losses are bit-identical).

Node properties: ``explicit[g]`` holds the bits set on ``g`` alone; ``up[g]`` / ``down[g]``
the bits propagated to the cone above / below an apex.  A cone is marked when it is set,
stopping where the bits are already present (a marked node's cone is marked), so each node
takes each bit at most once per direction.

Arrays rather than tuples travel between the functions (Numba compiles calls with many-field
tuples slowly):

* ``lattice`` (2, q): max levels, strides;  ``keys`` (2, q, width): the strategy key's terms;
  ``node_keys`` (3, size): the nodes' keys as computed (NaN before);
* ``props`` (4, size) uint8: EXPLICIT, UP, DOWN bits and the VERDICT;  ``bounds`` (2, size):
  loss and lower bound of checked nodes;  ``queue`` (size, q + 2) int32: scratch of the
  cone marking;
* ``work``: ARENA_END ... FROM_BOTTOM;  ``cfg``: PREDICTIVE ... PACK_BITS (both
  :mod:`.flash_layout`);  ``loss_table``
  (2 + height + 1, q): each attribute's smallest and largest loss sum, then per level its
  prior-bound factor (zeros where no check may stop early).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ...kernels.aot import CODE_TYPES, ahead_of_time
from ...kernels.nrt import njit_no_refcount
from ..solution_space import _fill_level
from .flash_cache import _roll_up
from .flash_classes import (DISTINCT, MAP_K, PRESENCE_HIGH, SIZE, judge_classes,
                            judge_sample_classes, peel_confident_groups, peel_groups)
from .flash_layout import (AMBIGUOUS, ANON, ARENA_END, CACHED, CANDIDATES, CHECKED, CHECKED_NODES,
                           DOWN, EXPLICIT, HAS_K, INDEPENDENT_BOUND, INSUFF,
                           KANON, MAX_SUPPRESSED, METRIC, MIN_SIZE, NEXT_SLOT, NOTANON, NOTKANON,
                           OK, ONE, OPTIMUM, OVERFLOW, PREDICTIVE, PRUNING, PTR, STATUS,
                           STOPPED, SUCC_PRUNED, TAG_INSUFFICIENT, TAG_NONE, TAG_PRUNED,
                           TAG_VISITED, TAG_VISITED_INSUFFICIENT, UNSURE, UP, UTILITY_FULL,
                           VERDICT, VISITED, ZERO, _level)
from .flash_record import _height_of, _mean_share_of, record_classes
from .flash_risk import risk_model_asked, suppress_by_risk

#: a prior bound and the checked one (the same sums added in other orders, truncated to
#: 1e-10) differ by less than this
BOUND_SLACK = 1e-8


# The compiled part (its arrays: see the module's docstring); the functions a check calls
# allocate nothing and are compiled without reference counting (:mod:`gpuppdp.kernels.nrt`).
# ------------------------------------------------------------------------------------------
@njit_no_refcount
def _has(props, g, bits):
    return (props[EXPLICIT, g] | props[UP, g] | props[DOWN, g]) & bits != 0


@njit_no_refcount
def _set(props, queue, lattice, g, bits, row):
    """Set ``bits`` on ``g`` alone (``row`` EXPLICIT) or on its cone above (UP) or below
    (DOWN), marking the cone breadth first and stopping at nodes that carry them already.

    Only cones set a row's bits, so the nodes carrying them are closed upwards (UP) or
    downwards (DOWN): stopping there skips only marked nodes.  Each node of the cone is
    reached once, from the node one step nearer ``g`` in the last attribute changed on the
    way, the changes made in attribute order (a node reached by changing attribute ``j``
    changes ``j`` and later ones only).  ``queue`` rows: node, its levels (a neighbour's differ
    in one: no division per neighbour), that attribute."""
    mark = props[row]
    if row == EXPLICIT:
        mark[g] |= bits
        return
    if mark[g] & bits == bits:
        return
    mark[g] |= bits
    q = lattice.shape[1]
    step = 1 if row == UP else -1
    queue[0, 0] = g
    for j in range(q):
        queue[0, j + 1] = _level(g, lattice, j)
    queue[0, q + 1] = 0
    head, tail = 0, 1
    while head < tail:
        x = queue[head, 0]
        for j in range(queue[head, q + 1], q):
            level = queue[head, j + 1]
            if level == (lattice[0, j] if row == UP else 0):
                continue
            y = x + step * lattice[1, j]
            if mark[y] & bits != bits:
                mark[y] |= bits
                for t in range(q + 1):
                    queue[tail, t] = queue[head, t]
                queue[tail, 0] = y
                queue[tail, j + 1] = level + step
                queue[tail, q + 1] = j
                tail += 1
        head += 1


@njit_no_refcount
def _key(g, lattice, keys, node_keys):
    """ARX's ``FLASHStrategy`` key of node ``g`` (see :meth:`FlashSearch.key`): the same
    floating-point operations in the same order, kept in ``node_keys`` (3, size; NaN where
    not yet computed): the priority queue and the successors' sort compare nodes often."""
    if not math.isnan(node_keys[0, g]):
        return node_keys[0, g], node_keys[1, g], node_keys[2, g]
    q = lattice.shape[1]
    height, total, prec, dd = 0, 0, 0.0, 0.0
    for j in range(q):
        level = _level(g, lattice, j)
        height += level
        total += lattice[0, j]
        prec = prec + keys[0, j, level]
        dd = dd + keys[1, j, level]
    k0 = height / float(total) if total != 0 else 0.0
    node_keys[0, g], node_keys[1, g], node_keys[2, g] = k0, prec / q, 1.0 - dd / q
    return node_keys[0, g], node_keys[1, g], node_keys[2, g]


@njit_no_refcount
def _compare(a, b, lattice, keys, node_keys):
    """-1, 0, 1: the keys of nodes ``a`` and ``b`` compared as Python tuples."""
    a0, a1, a2 = _key(a, lattice, keys, node_keys)
    b0, b1, b2 = _key(b, lattice, keys, node_keys)
    if a0 != b0:
        return -1 if a0 < b0 else 1
    if a1 != b1:
        return -1 if a1 < b1 else 1
    if a2 != b2:
        return -1 if a2 < b2 else 1
    return 0


@njit_no_refcount
def _sorted_successors(g, out, lattice, keys, node_keys):
    """Direct generalizations of ``g`` into ``out``, stably sorted by key; returns how
    many."""
    n = 0
    for j in range(lattice.shape[1]):
        if _level(g, lattice, j) < lattice[0, j]:
            s = g + lattice[1, j]
            i = n
            while i > 0 and _compare(s, out[i - 1], lattice, keys, node_keys) < 0:
                out[i] = out[i - 1]
                i -= 1
            out[i] = s
            n += 1
    return n


@njit_no_refcount
def _sorted_by_key(ids, n, out, k, order, lattice, keys, node_keys):
    """``ids[:n]`` stably sorted by key into ``out[:n]``: a bottom-up merge sort of their keys
    (``k`` (2, >= n, 3) and ``order`` (2, >= n) are scratch)."""
    for i in range(n):
        k[0, i, 0], k[0, i, 1], k[0, i, 2] = _key(ids[i], lattice, keys, node_keys)
        order[0, i] = i
    src, width = 0, 1
    while width < n:
        dst = 1 - src
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            a, b = lo, mid
            for o in range(lo, hi):
                take_b = a == mid
                if not take_b and b < hi:
                    x0, x1, x2 = k[src, a, 0], k[src, a, 1], k[src, a, 2]
                    y0, y1, y2 = k[src, b, 0], k[src, b, 1], k[src, b, 2]
                    take_b = y0 < x0 or (y0 == x0 and (y1 < x1 or (y1 == x1 and y2 < x2)))
                c = b if take_b else a
                for t in range(3):  # element by element: a row assignment compiles shape checks
                    k[dst, o, t] = k[src, c, t]
                order[dst, o] = order[src, c]
                if take_b:
                    b += 1
                else:
                    a += 1
        src, width = dst, 2 * width
    for i in range(n):
        out[i] = ids[order[src, i]]


@njit_no_refcount
def _heap_add(heap, n, x, lattice, keys, node_keys):
    """``java.util.PriorityQueue.add`` (OpenJDK's sift-up) on ``heap[:n]``; returns n + 1."""
    k = n
    while k > 0:
        parent = (k - 1) >> 1
        if _compare(x, heap[parent], lattice, keys, node_keys) >= 0:
            break
        heap[k] = heap[parent]
        k = parent
    heap[k] = x
    return n + 1


@njit_no_refcount
def _heap_poll(heap, n, lattice, keys, node_keys):
    """``java.util.PriorityQueue.poll`` (OpenJDK's sift-down); returns (head, n - 1)."""
    result = heap[0]
    n -= 1
    x = heap[n]
    if n:
        k, half = 0, n >> 1
        while k < half:
            child = 2 * k + 1
            right = child + 1
            if right < n and _compare(heap[child], heap[right], lattice, keys, node_keys) > 0:
                child = right
            if _compare(x, heap[child], lattice, keys, node_keys) <= 0:
                break
            heap[k] = heap[child]
            k = child
        heap[k] = x
    return result, n


@njit_no_refcount
def _bound(g, props, bounds, lattice, cfg, terms):
    """A lower bound of ``g``'s loss known now: the checked one, else the metric's
    data-independent one (precision's, the height's), else NaN."""
    if props[VERDICT, g] != 0:
        return bounds[1, g]
    if cfg[INDEPENDENT_BOUND]:
        return _mean_share_of(g, lattice, terms) if cfg[METRIC] == 1 else \
            _height_of(g, lattice, terms)
    return np.nan


@njit_no_refcount
def _no_better(best, g, bound, props, work):
    """``best <= bound``: the optimum's loss is no better than ``g``'s lower bound (NaN: no
    bound).  ``g``'s check stopped early: its bound is the prior one, which decides the
    comparison unless it lies within :data:`BOUND_SLACK` of ``best``; then the checked bound
    would be needed, and ``work[STATUS]`` becomes AMBIGUOUS (the search is run again with
    every check complete)."""
    if math.isnan(bound):
        return False
    if props[VERDICT, g] != STOPPED:
        return best <= bound
    if best <= bound - BOUND_SLACK:
        return True
    if best > bound + BOUND_SLACK:
        return False
    work[STATUS] = AMBIGUOUS
    return False


@njit_no_refcount
def _skip(trigger, g, props, bounds, queue, lattice, work, cfg, terms):
    """ARX's ``skip``: ``g`` carries a trigger bit, or (pruning) is insufficient or has a
    lower bound no better than the optimum's loss (then its cone is marked so)."""
    opt = work[OPTIMUM]
    if not cfg[PRUNING] or opt < 0:
        return _has(props, g, trigger)
    if _has(props, g, trigger | INSUFF):
        return True
    if _no_better(bounds[0, opt], g, _bound(g, props, bounds, lattice, cfg, terms), props,
                  work):
        _set(props, queue, lattice, g, INSUFF | SUCC_PRUNED, UP)
        return True
    return False


@njit_no_refcount
def _height(g, lattice):
    h = 0
    for j in range(lattice.shape[1]):
        h += _level(g, lattice, j)
    return h


@njit_no_refcount
def _prune(g, props, bounds, queue, lattice, work, cfg, candidates):
    """ARX's pruning of nodes whose lower bound is no better than the optimum's loss; the
    checked nodes not yet ruled out wait as candidates until the optimum improves."""
    if not cfg[PRUNING] or props[VERDICT, g] == 0:
        return
    opt = work[OPTIMUM]
    if g != opt and _has(props, g, SUCC_PRUNED):
        return
    if g != opt:
        if opt >= 0 and _no_better(bounds[0, opt], g, bounds[1, g], props, work):
            _set(props, queue, lattice, g, INSUFF | SUCC_PRUNED, UP)
        elif work[CANDIDATES] == candidates.shape[0]:
            work[STATUS] = OVERFLOW
        else:
            candidates[work[CANDIDATES]] = g
            work[CANDIDATES] += 1
        return
    best = bounds[0, opt]
    kept = 0
    for i in range(work[CANDIDATES]):
        c = candidates[i]
        if _has(props, c, SUCC_PRUNED):
            continue
        if _no_better(best, c, bounds[1, c], props, work):
            _set(props, queue, lattice, c, INSUFF | SUCC_PRUNED, UP)
            continue
        candidates[kept] = c
        kept += 1
    if not _has(props, g, SUCC_PRUNED):
        if kept == candidates.shape[0]:
            work[STATUS] = OVERFLOW
            return
        candidates[kept] = g
        kept += 1
    work[CANDIDATES] = kept




@njit_no_refcount
def _check(g, props, bounds, queue, lattice, work, cfg, terms, rec_int, rec_float, slot,
           slot_levels, slot_of, table, table_key, scratch, outlier, codes, count, first, maps,
           map_off, level_radix, share, share_off, loss_table, node_off, node_radix, sums, sens,
           cls, class_codes, hist, params, tree, value_counts, subsets,
           group_total, star_off, stars, risk_work, risk_keys, group_work,
           group_values):
    """Check ``g`` (:func:`_roll_up`, then its classes judged, its suppressed count and
    metric) into the next record, and set Flash's properties from the verdict."""
    q = lattice.shape[1]
    r = work[CHECKED_NODES]
    s = work[NEXT_SLOT]
    levels = slot_levels[s]
    rec_int[r, 7] = s
    n = _roll_up(g, lattice, work, cfg, slot, slot_levels, slot_of, table, table_key, scratch,
                 codes, count, first, maps, map_off, level_radix, share_off, node_off, node_radix,
                 sens, cls is None)
    pos = work[ARENA_END]
    if n < 0:  # more classes than could keep the node anonymous: stopped, not cached
        if cfg[METRIC] == 0:
            bound = 1.0
            for j in range(q):
                bound *= loss_table[2 + levels[j], j]
            bound -= 1.0
        else:
            bound = _mean_share_of(g, lattice, terms)
        rec_int[r, 0], rec_int[r, 1], rec_int[r, 6] = g, 0, 0
        rec_int[r, 2:6] = -1  # suppressed records, kept classes, smallest, entries: unknown
        rec_float[r, 0], rec_float[r, 1] = np.nan, bound
    else:
        slot[0, s], slot[1, s] = pos, n
        slot[2, work[CACHED]] = s
        slot_of[g] = s
        work[CACHED] += 1
        work[ARENA_END] = pos + n
        if cls is not None:  # a sensitive attribute: classes of entries with equal QIDs
            n_classes = judge_classes(pos, n, codes, sens, count, node_radix, table,
                                       table_key, scratch, cls, class_codes, hist, params,
                                       tree, value_counts, cfg[MIN_SIZE], outlier, group_work,
                                       group_values)
            if n_classes < 0:
                work[STATUS] = UNSURE
                return
            size = cls[SIZE, :n_classes]
            class_codes_now = class_codes[:n_classes]
            if params[MAP_K] >= 0 or params[PRESENCE_HIGH] >= 0:  # the sample's entries
                n = 0
                for k in range(n_classes):
                    n += cls[DISTINCT, k]
            if subsets[0] > 0:  # LKC-privacy: groups of classes and their values
                peel_confident_groups(size, class_codes_now, node_radix, outlier, subsets,
                                      table, table_key, scratch, group_total, cls, sens, count,
                                      params, group_work, group_values)
        else:  # no sensitive attribute: the classes are the entries, judged by size (with a
            # population's entries, the sample's: their sizes into the roll-up's key scratch)
            size = count[pos:pos + n]
            if params[MAP_K] >= 0 or params[PRESENCE_HIGH] >= 0:
                n = judge_sample_classes(size, table_key, cfg[MIN_SIZE], params, outlier)
                size = table_key[:n]
            else:
                for c in range(n):
                    outlier[c] = size[c] < cfg[MIN_SIZE]
            class_codes_now = codes[pos:pos + n]
            if subsets[0] > 0:  # k-anonymity on QID subsets: groups of classes
                peel_groups(size, class_codes_now, node_radix, outlier, subsets, table,
                            table_key, scratch, group_total, group_work)
        if risk_model_asked(params):  # after the others' verdicts
            suppress_by_risk(size, class_codes_now, outlier, levels, params, stars, star_off,
                             cfg[MAX_SUPPRESSED], cfg[METRIC] == 0 or cfg[METRIC] == 6,
                             share, node_off[1],
                             risk_work, risk_keys)
        record_classes(g, r, n, size, class_codes_now, node_radix, outlier, lattice, cfg,
                       terms, share, node_off[1:2], loss_table, sums, work[PTR:PTR + 2],
                       rec_int, rec_float, ONE)  # (node_radix: codes not packed, unread)
    anonymous, k_anonymous, bound = rec_int[r, 1] > 0, rec_int[r, 6] > 0, rec_float[r, 1]
    work[CHECKED_NODES] += 1
    # Flash's properties
    props[EXPLICIT, g] |= CHECKED
    props[VERDICT, g] = 2 if anonymous else (STOPPED if n < 0 and cfg[METRIC] == 0 else 1)
    if anonymous:
        _set(props, queue, lattice, g, ANON, UP if cfg[PREDICTIVE] else EXPLICIT)
        bounds[0, g] = rec_float[r, 0]
    else:
        _set(props, queue, lattice, g, NOTANON, DOWN if cfg[PREDICTIVE] else EXPLICIT)
    if cfg[HAS_K]:
        _set(props, queue, lattice, g, KANON if k_anonymous else NOTKANON,
             UP if k_anonymous else DOWN)
    bounds[1, g] = bound


@njit_no_refcount
def _check_and_tag(g, check, tag, final, props, bounds, queue, lattice, work, cfg, terms,
                   rec_int, rec_float, slot, slot_levels, slot_of, table, table_key, scratch,
                   outlier, codes, count, first, maps, map_off, level_radix, share, share_off,
                   loss_table, candidates, node_off, node_radix, sums, sens, cls, class_codes,
                   hist, params, tree, value_counts, subsets, group_total, star_off, stars,
                   risk_work, risk_keys, group_work, group_values):
    """ARX's ``checkAndTag``: check ``g`` unless it carries a ``check`` bit (:func:`_check`),
    then (unless ``final``: the closing checks of bottom and top) track the optimum (smaller
    loss, then lower height), tag and prune.

    ``slot`` and ``slot_levels``: the frequency-set cache's (:mod:`.flash_cache`; record r's
    slot in ``rec_int[r, 7]``).  ``sens`` is the arena's carried sensitive codes (one entry
    when none is carried), ``count`` its counts (with a population's, packed:
    :func:`~.flash_classes.judge_sample_classes`).  ``node_off`` (2, q),
    ``node_radix`` (2, q + 1: the node's radices, then the roll-up's strides), ``sums`` (2, q)
    and, for a carried sensitive attribute, ``cls``, ``class_codes`` and ``hist`` are scratch
    (:func:`~.flash_classes.judge_classes`; ``params`` its models); ``subsets`` lays out
    k-anonymity on QID subsets, ``group_total`` is its scratch
    (:func:`~.flash_classes.peel_groups`; a zero: none); ``star_off`` and ``stars`` say which
    labels are ``*``, ``risk_work`` and ``risk_keys`` are scratch (a risk-based model:
    :func:`~.flash_risk.suppress_by_risk`), as are ``group_work`` and ``group_values``
    (LKC-privacy's confidence bound: :func:`~.flash_classes.peel_confident_groups`).
    """
    if not _has(props, g, check):
        if work[CHECKED_NODES] == rec_int.shape[0]:
            work[STATUS] = OVERFLOW
            return
        _check(g, props, bounds, queue, lattice, work, cfg, terms, rec_int, rec_float, slot,
               slot_levels, slot_of, table, table_key, scratch, outlier, codes, count, first,
               maps, map_off, level_radix, share, share_off, loss_table, node_off, node_radix,
               sums, sens, cls, class_codes, hist, params, tree, value_counts, subsets,
               group_total, star_off, stars, risk_work, risk_keys, group_work, group_values)
    if final or work[STATUS] == UNSURE:
        return
    if props[VERDICT, g] == 2:
        opt = work[OPTIMUM]
        if opt < 0 or bounds[0, g] < bounds[0, opt] or (
                bounds[0, g] == bounds[0, opt] and _height(g, lattice) < _height(opt, lattice)):
            work[OPTIMUM] = g
    if tag == TAG_PRUNED:
        if _has(props, g, ANON):
            _set(props, queue, lattice, g, SUCC_PRUNED, UP)
    elif tag == TAG_VISITED:
        props[EXPLICIT, g] |= VISITED
    elif tag == TAG_INSUFFICIENT or tag == TAG_VISITED_INSUFFICIENT:
        # ARX's strategies for a monotonic metric and models not monotonic with
        # generalization (createPartialFull, createNoneFull): above an anonymous node no
        # better one
        if tag == TAG_VISITED_INSUFFICIENT:
            props[EXPLICIT, g] |= VISITED
        if _has(props, g, ANON):
            for j in range(lattice.shape[1]):
                if _level(g, lattice, j) < lattice[0, j]:
                    _set(props, queue, lattice, g + lattice[1, j], INSUFF, UP)
            _set(props, queue, lattice, g, SUCC_PRUNED, UP)
    _prune(g, props, bounds, queue, lattice, work, cfg, candidates)


@njit_no_refcount
def _flash(lattice, keys, node_keys, phases, cfg, terms, codes, count, first, maps, map_off,
           level_radix, share, share_off, loss_table, work, props, bounds, queue, heap, candidates,
           rec_int, rec_float, slot, slot_levels, slot_of, table, table_key, scratch, outlier,
           walk, succ, level_levels, odometer, level_ids, sorted_ids, sort_keys, sort_order,
           node_off, node_radix, sums, sens, cls, class_codes, hist, params, tree, value_counts,
           subsets, group_total, star_off, stars, risk_work, risk_keys, group_work,
           group_values):
    """The whole search (one compiled kernel loop), in the arrays
    :func:`~.flash_compiled.run` allocates (a compiled allocation compiles
    an implementation per shape and type); writes per checked node, in check order, ``(id,
    anonymous, suppressed, kept classes, smallest kept class, entries, k-anonymous, slot)``
    into ``rec_int`` and ``(loss, lower bound)`` into ``rec_float``; ``work[STATUS]`` is
    OVERFLOW when the heap, the candidates or the records ran full (run again, larger), UNSURE
    when a class verdict
    was too close to call (the search stops).

    Per node of the outer loop: the binary phase (a priority queue of path starts; from each
    a path, always on to the first successor not skipped, binary-searched for its lowest node
    with the phase's property), each node found starting the linear phase (depth first: check
    the node, then each successor not skipped, in key order; a finished node's successors
    are pruned), or the linear phase alone.  One loop runs both, so the check has one call
    site per phase.  ``walk`` rows: the linear phase's stack (node, successors, next one to
    try per depth) and the path; ``succ``: sorted successors per depth, the last row the
    path's; ``odometer`` (q): the level enumeration's scratch.  ``cls`` is None when no
    sensitive attribute is carried: Numba then prunes the class code from the compiled check
    (a search without one does not compile it).  Compiled without reference counting (it
    allocates nothing): a caller that counts them would count every array it passes in and
    out of every call, 45 of them per check."""
    q = lattice.shape[1]
    size, height_max = 1, 0
    for j in range(q):
        size *= lattice[0, j] + 1
        height_max += lattice[0, j]
    stack, n_succ, cursor, chain = walk[0], walk[1], walk[2], walk[3]
    path_succ = succ[height_max + 1]
    b_on, b_prop, b_skip, b_check, b_tag = phases[0], phases[1], phases[2], phases[3], phases[4]
    l_on, l_skip, l_check, l_tag = phases[5], phases[7], phases[8], phases[9]
    outer_skip = b_skip if b_on else l_skip
    for height in range(height_max + 1):
        m = _fill_level(lattice[0], height, level_levels, odometer)
        for i in range(m):
            level_ids[i] = 0
            for j in range(q):
                level_ids[i] += level_levels[i, j] * lattice[1, j]
        # the level's nodes not skipped, judged before any is searched (ARX's
        # getSortedUnprocessedNodes)
        opt = work[OPTIMUM]
        kept = 0
        for i in range(m):
            g = level_ids[i]
            keep = False
            if not cfg[PRUNING] or opt < 0:
                keep = not _has(props, g, outer_skip)
            elif not _has(props, g, outer_skip | INSUFF):
                bound = _bound(g, props, bounds, lattice, cfg, terms)
                if _no_better(bounds[0, opt], g, bound, props, work):
                    _set(props, queue, lattice, g, INSUFF | SUCC_PRUNED, UP)
                else:
                    keep = True
            if keep:
                level_ids[kept] = g
                kept += 1
        _sorted_by_key(level_ids, kept, sorted_ids, sort_keys, sort_order, lattice, keys,
                       node_keys)
        for i_outer in range(kept):
            g = sorted_ids[i_outer]
            n = _heap_add(heap, ZERO, g, lattice, keys, node_keys) if b_on else 0
            linear_from = -1 if b_on else g
            while work[STATUS] == OK:
                if linear_from >= 0:  # the linear phase
                    depth = 0
                    stack[0] = linear_from
                    entering = True
                    while depth >= 0 and work[STATUS] == OK:
                        x = stack[depth]
                        if entering:
                            entering = False
                            n_succ[depth] = cursor[depth] = 0
                            if not _skip(l_skip, x, props, bounds, queue, lattice, work, cfg,
                                         terms):
                                _check_and_tag(x, l_check, l_tag, ZERO, props, bounds, queue,
                                               lattice, work, cfg, terms, rec_int, rec_float,
                                               slot, slot_levels, slot_of, table, table_key,
                                               scratch, outlier, codes, count, first, maps,
                                               map_off, level_radix, share, share_off, loss_table,
                                               candidates, node_off, node_radix, sums, sens, cls,
                                               class_codes, hist, params, tree, value_counts,
                                               subsets, group_total, star_off, stars,
                                               risk_work, risk_keys, group_work, group_values)
                                n_succ[depth] = _sorted_successors(x, succ[depth], lattice,
                                                                   keys, node_keys)
                                # the Python search tests the successors here for its
                                # look-ahead batch (and prunes those a bound rules out): the
                                # same side effects, in the same order
                                for i in range(n_succ[depth]):
                                    _skip(l_skip, succ[depth, i], props, bounds, queue,
                                          lattice, work, cfg, terms)
                        advanced = False
                        while cursor[depth] < n_succ[depth]:
                            s = succ[depth, cursor[depth]]
                            cursor[depth] += 1
                            if not _skip(l_skip, s, props, bounds, queue, lattice, work, cfg,
                                         terms):
                                depth += 1
                                stack[depth] = s
                                entering = advanced = True
                                break
                        if not advanced:
                            _set(props, queue, lattice, x, SUCC_PRUNED, UP)
                            depth -= 1
                    linear_from = -1
                if n == 0:
                    break
                # the binary phase: the next path start
                h, n = _heap_poll(heap, n, lattice, keys, node_keys)
                if _skip(b_skip, h, props, bounds, queue, lattice, work, cfg, terms):
                    continue
                length = 1
                chain[0] = h
                while True:
                    ns = _sorted_successors(chain[length - 1], path_succ, lattice, keys, node_keys)
                    nxt = -1
                    for i in range(ns):
                        if not _skip(b_skip, path_succ[i], props, bounds, queue, lattice, work,
                                     cfg, terms):
                            nxt = path_succ[i]
                            break
                    if nxt < 0:
                        break
                    chain[length] = nxt
                    length += 1
                lo, hi, last = 0, length - 1, -1
                while lo <= hi and work[STATUS] == OK:
                    mid = (lo + hi) // 2
                    x = chain[mid]
                    if _skip(b_skip, x, props, bounds, queue, lattice, work, cfg, terms):
                        hi = mid - 1
                        continue
                    _check_and_tag(x, b_check, b_tag, ZERO, props, bounds, queue, lattice, work,
                                   cfg, terms, rec_int, rec_float, slot, slot_levels, slot_of,
                                   table, table_key, scratch, outlier, codes, count, first, maps,
                                   map_off, level_radix, share, share_off, loss_table, candidates,
                                   node_off, node_radix, sums, sens, cls, class_codes, hist,
                                   params, tree, value_counts, subsets, group_total, star_off,
                                   stars, risk_work, risk_keys, group_work, group_values)
                    if _has(props, x, b_prop):
                        last = x
                        hi = mid - 1
                        continue
                    ns = _sorted_successors(x, path_succ, lattice, keys, node_keys)
                    for i in range(ns):
                        if not _skip(b_skip, path_succ[i], props, bounds, queue, lattice, work,
                                     cfg, terms):
                            if n == heap.shape[0]:
                                work[STATUS] = OVERFLOW
                                break
                            n = _heap_add(heap, n, path_succ[i], lattice, keys, node_keys)
                    lo = mid + 1
                if last >= 0 and l_on:
                    linear_from = last
            if work[STATUS] != OK:
                return
    if cfg[UTILITY_FULL]:  # ARX's computeUtilityForMonotonicMetrics
        for g in (0, size - 1):
            _check_and_tag(g, CHECKED, TAG_NONE, ONE, props, bounds, queue, lattice, work, cfg,
                           terms, rec_int, rec_float, slot, slot_levels, slot_of, table,
                           table_key, scratch, outlier, codes, count, first, maps, map_off,
                           level_radix, share, share_off, loss_table, candidates, node_off,
                           node_radix, sums, sens, cls, class_codes, hist, params, tree,
                           value_counts, subsets, group_total, star_off, stars, risk_work,
                           risk_keys, group_work, group_values)


#: positions of the class scratch (``cls``, None without a sensitive attribute) and of the
#: codes among :func:`_flash`'s arguments
_FLASH_PARAMETERS = list(inspect.signature(_flash.py_func).parameters)
_CLASSES_ARGUMENT = _FLASH_PARAMETERS.index("cls")
_CODES_ARGUMENT = _FLASH_PARAMETERS.index("codes")


def _flash_signature(code: str, classes: str) -> str:
    """:func:`_flash`'s signature as :func:`run` calls it: QID codes of type ``code``, the
    class scratch ``classes`` (``none`` when no sensitive attribute is carried)."""
    i1, i2, i3 = "int64[::1]", "int64[:, ::1]", "int64[:, :, ::1]"
    f1, f2, f3 = "float64[::1]", "float64[:, ::1]", "float64[:, :, ::1]"
    typed = {"lattice": i2, "keys": f3, "node_keys": f2, "phases": i1, "cfg": i1, "terms": f2,
             "codes": f"{code}[:, ::1]", "count": i1, "first": i1, "maps": f"{code}[::1]",
             "map_off": i3, "level_radix": i2, "share": f1, "share_off": i2, "loss_table": f2,
             "work": i1, "props": "uint8[:, ::1]", "bounds": f2, "queue": "int32[:, ::1]",
             "heap": i1, "candidates": i1, "rec_int": i2, "rec_float": f2, "slot": i2,
             "slot_levels": i2, "slot_of": i1, "table": "int32[::1]", "table_key": i1,
             "scratch": i1, "outlier": "boolean[::1]", "walk": i2, "succ": i2, "level_levels": i2,
             "odometer": i1, "level_ids": i1, "sorted_ids": i1, "sort_keys": f3, "sort_order": i2,
             "node_off": i2, "node_radix": i2, "sums": f2, "sens": "int32[::1]", "cls": classes,
             "class_codes": f"{code}[:, ::1]", "hist": i2, "params": f1, "tree": i1,
             "value_counts": i1, "subsets": i1, "group_total": i1, "star_off": i2,
             "stars": "boolean[::1]", "risk_work": i2, "risk_keys": f1, "group_work": i2,
             "group_values": i1}
    return f"none({', '.join(typed[p] for p in _FLASH_PARAMETERS)})"


ahead_of_time(_flash, [_flash_signature(code, classes)
                       for code in CODE_TYPES for classes in ("none", "int64[:, ::1]")])
