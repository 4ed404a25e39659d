"""The compiled Flash's frequency-set cache: the arena of rolled-up sets (the bottom's first),
their slots, and a node's roll-up from the smallest cached set below it
(:func:`~gpuppdp.kernels.grouping._rollup_range`), through a cached meet where only the
bottom's is below it.

``slot`` (3, slots): per cached set (a column) its start in the arena, its entries and a
cached slot's number (``slot[2, :work[CACHED]]`` lists them); ``slot_levels`` (slots, q +
words): its node's levels, then the same packed into ``words`` words of ``63 //
cfg[PACK_BITS]`` fields (the cache scan's); slot 0 is the bottom, later slots are handed out
in order (``work[NEXT_SLOT]``), to each checked node and to each meet."""

from __future__ import annotations

from ...kernels.grouping import _rollup_range
from ...kernels.nrt import njit_no_refcount
from ..solution_space import _pack, _packed_below
from .flash_layout import (ARENA_END, BOTTOM, CACHED, ENDS, FROM_BOTTOM, LIVE_FROM, MAX_CLASSES,
                           NEXT_SLOT, ONE, PACK_BITS, SENSITIVE_VALUES, ZERO, _level)


@njit_no_refcount
def _roll_into(src, levels, pos, limit, work, slot, slot_levels, table, table_key, scratch,
               codes, count, first, maps, map_off, level_radix, share_off, node_off, node_radix,
               sens, cfg):
    """Roll the set of slot ``src`` up to ``levels`` into the arena at ``pos``; returns its
    entries (-1: more than ``limit``)."""
    q = node_off.shape[1]
    for j in range(q):
        node_off[0, j] = map_off[j, slot_levels[src, j], levels[j]]
        node_off[1, j] = share_off[j, levels[j]]
        node_radix[0, j] = level_radix[j, levels[j]]
    node_radix[0, q] = cfg[SENSITIVE_VALUES]
    work[ENDS], work[ENDS + 1] = slot[0, src], slot[0, src] + slot[1, src]
    _rollup_range(ZERO, ONE, pos, codes, sens, count, first, work[ENDS:ENDS + 1],
                  work[ENDS + 1:ENDS + 2], node_off[0:1], maps, node_radix,
                  work[ENDS + 2:ENDS + 3], codes, sens, count, first,
                  work[ENDS + 3:ENDS + 4], table, table_key, scratch, node_radix[1], limit)
    return work[ENDS + 3]


@njit_no_refcount
def _roll_up(g, lattice, work, cfg, slot, slot_levels, slot_of, table, table_key, scratch, codes,
             count, first, maps, map_off, level_radix, share_off, node_off, node_radix, sens,
             meets):
    """Roll node ``g`` up from the smallest cached frequency set below it into the arena at
    ``work[ARENA_END]`` (the cache emptied but for the bottom when full), its levels into
    slot ``work[NEXT_SLOT]``; returns its entries (-1: stopped, more classes than
    ``cfg[MAX_CLASSES]``).  ``slot_of`` (size): each node's slot, -1 when none (0: the
    bottom).  Any set below gives the same classes in the same order (each set lists its
    classes in the order of their first bottom entry), so the choice is one of speed only.
    With ``meets``, a node with no cached set below it but the bottom's is rolled up through
    the meet of its levels and those of the last node rolled up from the bottom, which is
    cached: the nodes a search checks next share its levels in some attributes (a binary
    phase's path, the successors of a node), and roll up from it instead of the bottom."""
    q = lattice.shape[1]
    n0 = cfg[BOTTOM]
    if work[ARENA_END] + 2 * n0 > codes.shape[0]:  # the cache is full: keep the bottom only
        work[ARENA_END], work[CACHED], work[LIVE_FROM] = n0, 1, work[NEXT_SLOT] - 1
    s = work[NEXT_SLOT]  # the node's slot: its levels first
    work[NEXT_SLOT] += 1
    levels = slot_levels[s]
    for j in range(q):
        levels[j] = _level(g, lattice, j)
    guard = _pack(levels, q, cfg[PACK_BITS])
    src, src_len = 0, n0
    entries = slot[1]
    # a direct predecessor's set is no larger than any set below it: the smallest cached one
    # is taken; the cache is scanned only when none is cached (the node's own set, cached as
    # a meet, is taken as it is)
    found = False
    c = slot_of[g]
    if c > work[LIVE_FROM]:
        found = True
        src, src_len = c, entries[c]
    for j in range(q):
        if levels[j] > 0:
            c = slot_of[g - lattice[1, j]]
            if c >= 0 and not 0 < c <= work[LIVE_FROM]:  # cached (slot 0: the bottom, always)
                found = True
                if entries[c] < src_len:
                    src, src_len = c, entries[c]
    if not found:
        cached = slot[2]  # contiguous, as the sizes: the scan streams through them
        for i in range(1, work[CACHED]):
            c = cached[i]
            if entries[c] < src_len and _packed_below(slot_levels[c], levels, q, guard):
                src, src_len = c, entries[c]
    if meets and src == 0 and g != 0:
        last = work[FROM_BOTTOM]
        work[FROM_BOTTOM] = g
        if last >= 0:
            t = work[NEXT_SLOT]
            meet = slot_levels[t]
            h = 0
            for j in range(q):
                meet[j] = min(levels[j], _level(last, lattice, j))
                h += meet[j] * lattice[1, j]
            if h != 0 and h != g:
                _pack(meet, q, cfg[PACK_BITS])
                work[NEXT_SLOT] += 1
                pos = work[ARENA_END]
                slot[0, t], slot[1, t] = pos, _roll_into(
                    ZERO, meet, pos, codes.shape[0], work, slot, slot_levels, table, table_key,
                    scratch, codes, count, first, maps, map_off, level_radix, share_off,
                    node_off, node_radix, sens, cfg)
                slot[2, work[CACHED]] = t
                slot_of[h] = t
                work[CACHED] += 1
                work[ARENA_END] = pos + slot[1, t]
                src = t
    return _roll_into(src, levels, work[ARENA_END], cfg[MAX_CLASSES], work, slot, slot_levels,
                      table, table_key, scratch, codes, count, first, maps, map_off,
                      level_radix, share_off, node_off, node_radix, sens, cfg)
