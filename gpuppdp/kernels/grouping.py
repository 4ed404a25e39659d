"""The roll-up: a frequency set rolled up to more general lattice nodes.

A *frequency set* lists the distinct rows of an encoded table (QID codes, optionally a sensitive
code) with their ``count`` and ``first`` (index of the first input row holding them), ordered by
``first``.  Rolling it up to a more general node maps every QID code through the hierarchy's
level-to-level table and merges entries that become equal (the roll-up of Incognito and ARX,
LeFevre et al. 2005; Kohlmayer et al. 2012); within a node, groups keep the order of the first
input row that falls into them.  A node's map of QID ``j`` starts at ``node_map_off[b, j]`` in
``maps_flat``; offset 0 (``IDENTITY_OFFSET``) holds the identity, so the CPU form leaves the
codes of a QID that keeps its level as they are.  Three forms group with the key packing of
:mod:`.groupby` and give identical output:

* :func:`rollup_njit` (CPU): one pass per node, each entry keyed by its packed code in a
  directly addressed table when the key space is small, else a hashed one; a new key writes its
  group at once.  Runs of nodes are tasks the threads take as they come free
  (:func:`.groupby.run_tasks`); a key space past int64 packs column by column
  (:func:`_rollup_node`); a node whose table would miss the cache is hash-partitioned first
  (:func:`_rollup_partitioned`);
* :func:`.grouping_cuda.rollup_cuda` (GPU): a thread per source entry, slots claimed by
  compare-and-swap, the first entry of a group by atomic minimum, groups numbered by a prefix
  sum -- no sort;
* :func:`rollup_xp` (NumPy/CuPy, :func:`.groupby.group_xp`: gather, sort, segment boundaries):
  the reference, and the CUDA form's fallback for key spaces past int64.
"""

from __future__ import annotations

import contextlib
import os
import threading

import numba
import numpy as np
from numba import njit

from .aot import CODE_TYPES, ahead_of_time
from .hashtable import _HASH_MUL, NO_GROUP, find_slot, hash_shift, hashed_size
from .nrt import njit_no_refcount
from .groupby import (balanced_runs, extend_key, group_xp, n_tasks_for,
                      number_keys, run_tasks, segment_ids, space_of)

# -- Numba CPU form --------------------------------------------------------------------
IDENTITY_OFFSET = 0  # a map at this offset is the identity: maps_flat[:d] == arange(d)


@njit(inline='always')
def _up(maps_flat, off, code):
    """``code`` mapped at offset ``off`` (``maps_flat[off + code]``); a QID whose level does
    not change keeps its code without the gather (``off == IDENTITY_OFFSET``)."""
    return code if off == IDENTITY_OFFSET else maps_flat[off + code]


@njit(cache=True)
def _rollup_node(b, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                 node_map_off, maps_flat, node_radix, out_start, out_codes, out_sens, out_count,
                 out_first, out_len):
    """Roll the source range of node ``b`` up into ``out_*[out_start[b]:]``: key each entry by
    its mixed-radix code (radices ``node_radix[b]``: QIDs, then the sensitive attribute; one
    pass when the key space fits in int64, else column by column), number the keys
    (:func:`.groupby.number_keys`), sum the counts and write each group from its first
    entry."""
    q = src_codes.shape[1]
    start = node_src_start[b]
    n = node_src_stop[b] - start
    keys = np.empty(n, np.int64)
    ids = np.empty(n, np.int64)
    space = space_of(node_radix[b])
    if space >= 0:
        strides = np.empty(q + 1, np.int64)
        stride = 1
        for j in range(q + 1):
            strides[j] = stride
            stride *= max(node_radix[b, j], 1)
        moff = node_map_off[b]
        for i in range(n):
            e = start + i
            key = src_sens[e] * strides[q]
            for j in range(q):
                key += _up(maps_flat, moff[j], src_codes[e, j]) * strides[j]
            keys[i] = key
    else:
        keys[:] = 0
        space = 1
        col = np.empty(n, np.int64)
        for j in range(q):
            for i in range(n):
                col[i] = _up(maps_flat, node_map_off[b, j], src_codes[start + i, j])
            space = extend_key(keys, space, col, node_radix[b, j], ids, False)
        space = extend_key(keys, space, src_sens[start:start + n], node_radix[b, q], ids, False)
    g = number_keys(keys, space, ids)
    base = out_start[b]
    first = keys  # the keys are done with: each group's first entry, in a branch-free pass
    for i in range(n - 1, -1, -1):
        first[ids[i]] = start + i
    out_count[base:base + g] = 0
    for i in range(n):
        out_count[base + ids[i]] += src_count[start + i]
    for o in range(base, base + g):
        e = first[o - base]
        for j in range(q):
            out_codes[o, j] = _up(maps_flat, node_map_off[b, j], src_codes[e, j])
        out_sens[o] = src_sens[e]
        if out_first.shape[0]:
            out_first[o] = src_first[e]
    out_len[b] = g


ROLLUP_DENSE_RATIO = 8         # a node's key space up to this times its entries (plus a
ROLLUP_DENSE_FLOOR = 1 << 15   # floor) is counted in a directly addressed table, else hashed
PARTITION_TABLE = 1 << 19      # a node whose table would have more slots (and misses the
#                                cache) is rolled up partitioned (:func:`_rollup_partitioned`)
PARTITION_ENTRIES = 1 << 12    # entries per partition: its table stays in the L1/L2 cache
PARTITION_THREAD_ENTRIES = 1 << 16  # entries per thread of a partitioned node, at least
NO_GROUP_LIMIT = np.int64(np.iinfo(np.int64).max)  # :func:`_rollup_range` gives up on nothing


@njit(cache=True)
def _table_size(n, space):
    """Slots a node of ``n`` source entries and key space ``space`` (-1: past int64) needs in
    the scratch table: the space when it is counted densely, else a power of two >= 4 n (0:
    the column-by-column path, which has its own)."""
    if space < 0:
        return np.int64(0)
    if space <= ROLLUP_DENSE_RATIO * n + ROLLUP_DENSE_FLOOR:
        return space
    return hashed_size(n)


@njit(cache=True)
def table_layout(n, space):
    """``(dense, shift, mask)`` of the scratch table of ``n`` keys in a key space of ``space``
    (:func:`_table_size` slots; ``dense``: directly addressed) for
    :func:`~.hashtable.find_slot`."""
    size = _table_size(n, space)
    return size == space, hash_shift(size), np.uint64(size - 1)


@njit_no_refcount
def _rollup_range(b0, b1, pos, src_codes, src_sens, src_count, src_first, node_src_start,
                  node_src_stop, node_map_off, maps_flat, node_radix, out_pos, out_codes,
                  out_sens, out_count, out_first, out_len, table, table_key, slots, strides,
                  max_groups):
    """Roll nodes ``b0..b1-1`` up one after the other, node ``b``'s groups written at
    ``out_pos[b]`` (from ``pos`` on, back to back); returns the position after the last.
    A node with more than ``max_groups`` groups is given up as soon as it has that many
    (``out_len[b]`` -1, nothing kept: a search that needs to know only that it has more;
    :data:`NO_GROUP_LIMIT`: none is; one type for every caller, one compiled form).

    One pass per node: each source entry (in ``first`` order) is keyed by its packed
    mixed-radix code and looked up in ``table`` (:mod:`.hashtable`: directly addressed when
    the key space is small, ``_table_size``, else hashed, the groups' keys in ``table_key``);
    an unseen key opens the next group, written at once from this entry (its first), a seen
    one adds its count.  ``table`` is scratch shared by the nodes: all -1 on entry and on
    return (the slots a node used, listed in ``slots``, are cleared after it); ``strides``
    (q + 1) is scratch too.  Nodes of the other paths (:func:`_node_paths`) are never given
    here.  The compiled Flash calls it."""
    q = src_codes.shape[1]
    for b in range(b0, b1):
        start = node_src_start[b]
        n = node_src_stop[b] - start
        out_pos[b] = pos
        space = space_of(node_radix[b])
        size = _table_size(n, space)
        dense = size == space
        carry_sens = node_radix[b, q] > 1  # else every sensitive code is 0 (already written)
        stride = np.int64(1)
        for j in range(q + 1):
            strides[j] = stride
            stride *= max(node_radix[b, j], 1)
        moff = node_map_off[b]
        shift = hash_shift(size)
        mask = np.uint64(size - 1)
        track = size > 16 * n  # clear the used slots one by one, else the whole table
        keep_first = out_first.shape[0] > 0
        g = 0
        for i in range(n):
            e = start + i
            o = pos + g  # the row of the next new group: the codes go there at once
            key = np.int64(src_sens[e]) * strides[q] if carry_sens else np.int64(0)
            for j in range(q):
                m = _up(maps_flat, moff[j], src_codes[e, j])
                out_codes[o, j] = m
                key += np.int64(m) * strides[j]
            slot, s = find_slot(key, dense, table, table_key, shift, mask)
            if s < 0:  # a new group, this entry its first
                table[slot] = g
                if not dense:
                    table_key[g] = key
                if track:
                    slots[g] = slot
                if carry_sens:
                    out_sens[o] = src_sens[e]
                out_count[o] = src_count[e]
                if keep_first:
                    out_first[o] = src_first[e]
                g += 1
                if g > max_groups:
                    break
            else:
                out_count[pos + s] += src_count[e]
        if track:
            for k in range(g):
                table[slots[k]] = NO_GROUP
        else:
            table[:size] = NO_GROUP
        if g > max_groups:  # given up
            out_len[b] = -1
        else:
            out_len[b] = g
            pos += g
    return pos


TABLE, PARTITIONED, COLUMNS = 0, 1, 2  # the roll-up paths of a node


@njit(cache=True)
def _node_paths(node_src_start, node_src_stop, node_radix, table_max):
    """Per node, its roll-up path: ``TABLE`` (one pass, :func:`_rollup_range`),
    ``PARTITIONED`` (its table would exceed ``table_max`` slots) or ``COLUMNS`` (key space past
    int64, :func:`_rollup_node`).  The last two compile only when a node needs them."""
    out = np.zeros(node_src_start.shape[0], np.int8)
    for b in range(out.shape[0]):
        space = space_of(node_radix[b])
        if space < 0:
            out[b] = COLUMNS
        elif _table_size(node_src_stop[b] - node_src_start[b], space) > table_max:
            out[b] = PARTITIONED
    return out


ahead_of_time(_node_paths, ["int8[::1](int64[::1], int64[::1], int64[:, ::1], int64)"])


@njit(cache=True, nogil=True)
def _rollup_chunk(c, chunk_ptr, out_base, chunk_len, src_codes, src_sens, src_count, src_first,
                  node_src_start, node_src_stop, node_map_off, maps_flat, node_radix, out_pos,
                  out_codes, out_sens, out_count, out_first, out_len, paths):
    """Task ``c``: the run of nodes ``chunk_ptr[c]:chunk_ptr[c+1]`` (:func:`_rollup_range`),
    its groups written from ``out_base[c]``; a node of another path (a run of its own) is
    left to the caller."""
    b0, b1 = chunk_ptr[c], chunk_ptr[c + 1]
    if b1 - b0 == 1 and paths[b0] != TABLE:
        return
    need, longest = np.int64(1), np.int64(1)
    for b in range(b0, b1):
        n = node_src_stop[b] - node_src_start[b]
        need = max(need, _table_size(n, space_of(node_radix[b])))
        longest = max(longest, n)
    table = np.full(need, NO_GROUP, np.int32)
    table_key = np.empty(longest, np.int64)  # a hashed node's keys, by group
    slots = np.empty(longest, np.int64)
    strides = np.empty(src_codes.shape[1] + 1, np.int64)
    base = out_base[c]
    chunk_len[c] = _rollup_range(b0, b1, base, src_codes, src_sens, src_count, src_first,
                                 node_src_start, node_src_stop, node_map_off, maps_flat,
                                 node_radix, out_pos, out_codes, out_sens, out_count, out_first,
                                 out_len, table, table_key, slots, strides,
                                 NO_GROUP_LIMIT) - base


ahead_of_time(_rollup_chunk, [
    f"none(int64, int64[::1], int64[::1], int64[::1], {c}[:, ::1], int32[::1], int64[::1], "
    f"int64[::1], int64[::1], int64[::1], int64[:, ::1], {c}[::1], int64[:, ::1], int64[::1], "
    f"{c}[:, ::1], int32[::1], int64[::1], int64[::1], int64[::1], int8[::1])"
    for c in CODE_TYPES])


# Partitioned roll-up of one large node (tasks t of :func:`.groupby.run_tasks`): entries keyed
# and counted per partition (the top ``bits`` bits of the key's hash), scattered stably into
# their partitions, grouped partition by partition in a cache-resident table (a group's total
# at its first entry, in ``total``), written out in source order (the canonical order).
@njit(cache=True)
def _part_of(key, shift):
    return np.int64((np.uint64(key) * _HASH_MUL) >> shift) if shift < 64 else np.int64(0)


@njit(cache=True, nogil=True)
def _partition_keys(t, bounds, start, src_codes, src_sens, src_count, moff, maps_flat, strides,
                    carry_sens, keys, hist, shift, wide):
    """Keys of entries ``bounds[t]:bounds[t+1]`` and their count per partition (``hist[t]``);
    ``wide[t]``: does a count of the range need more than 4 bytes?"""
    q = src_codes.shape[1]
    big = np.int64(0)
    for i in range(bounds[t], bounds[t + 1]):
        e = start + i
        key = np.int64(src_sens[e]) * strides[q] if carry_sens else np.int64(0)
        for j in range(q):
            key += np.int64(_up(maps_flat, moff[j], src_codes[e, j])) * strides[j]
        keys[i] = key
        hist[t, _part_of(key, shift)] += 1
        big = max(big, np.int64(src_count[e]))
    wide[t] = big >= 2147483648


@njit(cache=True, nogil=True)
def _partition_scatter(t, bounds, start, keys, src_count, fill, shift, part_entry, part_key,
                       part_count):
    """Entries ``bounds[t]:bounds[t+1]`` into their partitions from ``fill[t]`` on (stable);
    ``keys`` becomes the all -1 ``total``."""
    cursor = fill[t]
    for i in range(bounds[t], bounds[t + 1]):
        key = keys[i]
        p = _part_of(key, shift)
        o = cursor[p]
        cursor[p] = o + 1
        part_entry[o] = i
        part_key[o] = key
        part_count[o] = src_count[start + i]
        keys[i] = -1


@njit(cache=True, nogil=True)
def _partition_group(t, runs, part_ptr, part_entry, part_key, part_count, total, bits, longest,
                     bounds, firsts):
    """Group partitions ``runs[t]:runs[t+1]`` one after the other; each group's total count is
    written at its first entry (``total``), and ``firsts[t, u]`` counts the groups whose first
    entry lies in output range ``u`` (``bounds``)."""
    cap, cbits = np.int64(16), 4
    while cap < 2 * longest:
        cap *= 2
        cbits += 1
    mask = np.uint64(cap - 1)
    shift = np.uint64(64 - cbits)
    ubits = np.uint64(bits)
    table = np.full(cap, NO_GROUP, np.int32)
    table_key = np.empty(cap, np.int64)
    slots = np.empty(max(longest, 1), np.int64)
    lead = np.empty(max(longest, 1), np.int64)
    gsum = np.empty(max(longest, 1), np.int64)
    n_ranges = bounds.shape[0] - 1
    for p in range(runs[t], runs[t + 1]):
        g = 0
        for o in range(part_ptr[p], part_ptr[p + 1]):
            key = part_key[o]
            # the hash bits below those that chose the partition
            slot = np.int64(((np.uint64(key) * _HASH_MUL) << ubits) >> shift)
            while True:
                s = table[slot]
                if s < 0 or table_key[slot] == key:
                    break
                slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
            if s < 0:
                table[slot] = g
                table_key[slot] = key
                slots[g] = slot
                lead[g] = part_entry[o]
                gsum[g] = part_count[o]
                g += 1
            else:
                gsum[s] += part_count[o]
        for k in range(g):
            i = lead[k]
            total[i] = gsum[k]
            u = 0
            while u + 1 < n_ranges and bounds[u + 1] <= i:
                u += 1
            firsts[t, u] += 1
            table[slots[k]] = NO_GROUP


@njit(cache=True, nogil=True)
def _partition_emit(t, bounds, out_at, start, total, src_codes, src_sens, src_first, moff,
                    maps_flat, carry_sens, out_codes, out_sens, out_count, out_first):
    """Write the groups whose first entry lies in ``bounds[t]:bounds[t+1]``, in source order,
    from ``out_at[t]`` on (sensitive codes only when ``carry_sens``: else ``out_sens`` is all
    0 already, and left untouched)."""
    q = src_codes.shape[1]
    o = out_at[t]
    for i in range(bounds[t], bounds[t + 1]):
        c = total[i]
        if c >= 0:
            e = start + i
            for j in range(q):
                out_codes[o, j] = _up(maps_flat, moff[j], src_codes[e, j])
            if carry_sens:
                out_sens[o] = src_sens[e]
            out_count[o] = c
            if out_first.shape[0]:
                out_first[o] = src_first[e]
            o += 1


_SCRATCH = threading.local()


@contextlib.contextmanager
def reused_scratch():
    """Within it, this thread's partitioned roll-ups reuse their scratch arrays (grown when too
    small) instead of faulting in fresh pages for every node -- at 10^7 entries a node, the
    kernel's page zeroing costs a tenth of the search.  Released on leaving the outermost."""
    outer = getattr(_SCRATCH, "pool", None)
    if outer is None:
        _SCRATCH.pool = {}
    try:
        yield
    finally:
        if outer is None:
            _SCRATCH.pool = None


@contextlib.contextmanager
def small_pages():
    """No transparent huge pages for the arrays NumPy allocates within it: NumPy asks the kernel
    for them on arrays of 4 MiB and more, and fresh 2 MiB pages cost from nothing to several
    times what small ones do, depending on the host.  A ``NUMPY_MADVISE_HUGEPAGE`` set by the
    user stands."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        yield
        return
    core = np._core if hasattr(np, "_core") else np.core  # NumPy 2, NumPy 1
    before = core.multiarray._set_madvise_hugepage(False)
    try:
        yield
    finally:
        core.multiarray._set_madvise_hugepage(before)


POOLED_ENTRIES = 1 << 24  # larger scratch is not kept between nodes: memory before speed


def _scratch(name: str, n: int, dtype) -> np.ndarray:
    """An uninitialized (n,) array: from this thread's pool within :func:`reused_scratch`
    (up to :data:`POOLED_ENTRIES` entries: a larger one is let go after its node, so that a
    search's peak holds one node's scratch and its output, not the pool's copy as well)."""
    pool = getattr(_SCRATCH, "pool", None)
    if pool is None or n > POOLED_ENTRIES:
        if pool is not None:
            pool.pop(name, None)
        return np.empty(n, dtype)
    a = pool.get(name)
    if a is None or a.shape[0] < n:
        a = pool[name] = np.empty(n, dtype)
    return a[:n]


def _partition_and_group(start, stop, moff, radix, src_codes, src_sens, src_count, maps_flat):
    """The first three phases of a partitioned roll-up of source entries ``start:stop``:
    ``(total, bounds, per_range)`` -- each group's total count at its first entry (-1
    elsewhere), the output ranges of the threads and their group counts.  A function of its
    own so that the partitions' scratch (unless pooled) is let go before the output is
    allocated."""
    n = stop - start
    if n >= 1 << 31:
        raise ValueError(f"a node of {n} frequency-set entries is past the roll-up's int32 "
                         "entry numbers")
    n_threads = min(numba.get_num_threads(), max(1, n // PARTITION_THREAD_ENTRIES))
    bounds = np.linspace(0, n, n_threads + 1).astype(np.int64)
    bits = ((n - 1) // PARTITION_ENTRIES).bit_length()
    n_parts = 1 << bits
    shift = np.uint64(64 - bits)
    strides = np.ones(len(radix), np.int64)
    np.cumprod(np.maximum(radix[:-1], 1), out=strides[1:])
    keys = _scratch("keys", n, np.int64)
    hist = np.zeros((n_threads, n_parts), np.int64)
    wide = np.zeros(n_threads, np.bool_)
    run_tasks(_partition_keys, n_threads, bounds, start, src_codes, src_sens, src_count, moff,
              maps_flat, strides, bool(radix[-1] > 1), keys, hist, shift, wide)
    # partition p, thread t starts after partitions < p and thread t's predecessors in p
    flat = hist.T.ravel()
    fill = (np.cumsum(flat) - flat).reshape(n_parts, n_threads).T.copy()
    part_ptr = np.append(fill[0], n)
    part_entry = _scratch("part_entry", n, np.int32)
    part_key = _scratch("part_key", n, np.int64)
    # counts fit in 4 bytes below 2^31 records (the int64 kernels compile only past that)
    wide = bool(wide.any())
    part_count = _scratch("part_count64" if wide else "part_count", n,
                          np.int64 if wide else np.int32)
    run_tasks(_partition_scatter, n_threads, bounds, start, keys, src_count, fill, shift,
              part_entry, part_key, part_count)
    runs = balanced_runs(part_ptr, n_tasks_for(n, n_parts, per_thread=4))
    firsts = np.zeros((len(runs) - 1, n_threads), np.int64)
    run_tasks(_partition_group, len(runs) - 1, runs, part_ptr, part_entry, part_key, part_count,
              keys, bits, int(np.diff(part_ptr).max()), bounds, firsts)
    return keys, bounds, firsts.sum(axis=0)


def _rollup_partitioned(start, stop, moff, radix, src_codes, src_sens, src_count, src_first,
                        maps_flat, out=None, pos=0):
    """Roll source entries ``start:stop`` up to one node (code maps at ``moff``, radices
    ``radix``), partitioned so that every table stays in the cache: the hash-partitioned
    aggregation of database systems (Shatdal, Kant & Naughton, VLDB 1994) kept in canonical
    order, each phase shared by the threads.  The groups go to ``out`` (codes, sens, count,
    first) from ``pos`` on, or to new arrays of their size; returns ``(out, groups)``."""
    total, bounds, per_range = _partition_and_group(start, stop, moff, radix, src_codes,
                                                    src_sens, src_count, maps_flat)
    g = int(per_range.sum())
    if out is None:  # np.zeros: pages of sensitive codes never written are never resident
        out = (np.empty((g, src_codes.shape[1]), maps_flat.dtype), np.zeros(g, src_sens.dtype),
               np.empty(g, np.int64), np.empty(g, np.int64))
    out_at = pos + np.concatenate([[0], np.cumsum(per_range)[:-1]]).astype(np.int64)
    run_tasks(_partition_emit, len(bounds) - 1, bounds, out_at, start, total, src_codes,
              src_sens, src_first, moff, maps_flat, bool(radix[-1] > 1), *out)
    return out, g


# the name under which the compile notice looks for the roll-up in Numba's cache
_rollup_njit_parallel = _rollup_chunk


def rollup_njit(src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                node_map_off, maps_flat, node_radix, out=None):
    """CPU roll-up of a batch of nodes; see :func:`rollup_xp` for the contract.  ``node_radix``
    (B, q+1) holds each node's number of codes per QID and of the sensitive attribute.
    ``out`` (optional): arrays ``(codes, sens, count, first)`` of at least as many rows as the
    batch has source entries, to write the groups into (the results are views of them;
    sensitive codes only where a node carries them; an empty ``first``: first rows not kept).

    Runs of consecutive nodes (about equal source entries) go to the threads, each rolled up
    node after node (:func:`_rollup_range`), then moved together.  A node whose table would
    miss the cache is a run of its own, rolled up partitioned (:func:`_rollup_partitioned`)."""
    node_src_start, node_src_stop, node_radix, node_map_off = (np.asarray(a, dtype=np.int64)
        for a in (node_src_start, node_src_stop, node_radix, node_map_off))
    lens = node_src_stop - node_src_start
    n_nodes = len(lens)
    total = int(lens.sum())
    paths = _node_paths(node_src_start, node_src_stop, node_radix, PARTITION_TABLE)
    if n_nodes == 1 and paths[0] == PARTITIONED:
        (codes, sens, count, first), g = _rollup_partitioned(
            int(node_src_start[0]), int(node_src_stop[0]), node_map_off[0], node_radix[0],
            src_codes, src_sens, src_count, src_first, maps_flat, out)
        return codes[:g], sens[:g], count[:g], first[:g], np.array([0, g], np.int64)
    q = src_codes.shape[1]
    given = out is not None
    if not given:  # sensitive codes written only where a node carries them
        out = (np.empty((total, q), maps_flat.dtype), np.zeros(total, src_sens.dtype),
               np.empty(total, np.int64), np.empty(total, np.int64))
    codes, sens, count, first = out
    out_len = np.zeros(n_nodes, np.int64)
    out_pos = np.zeros(n_nodes, np.int64)
    if n_nodes == 1 and paths[0] == TABLE:  # one run, written at 0: nothing to move
        _rollup_chunk(0, np.array([0, 1]), np.zeros(1, np.int64), np.zeros(1, np.int64),
                      src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                      node_map_off, maps_flat, node_radix, out_pos, codes, sens, count, first,
                      out_len, paths)
        m = int(out_len[0])
    else:
        starts = np.zeros(n_nodes + 1, np.int64)
        np.cumsum(lens, out=starts[1:])
        chunk_ptr = balanced_runs(starts, n_tasks_for(total, n_nodes, per_thread=2))
        alone = np.flatnonzero(paths != TABLE)
        if len(alone):  # each a run of its own
            chunk_ptr = np.union1d(chunk_ptr,
                                   np.concatenate([alone, alone + 1])).astype(np.int64)
        out_base = starts[chunk_ptr[:-1]]
        chunk_len = np.zeros(len(out_base), np.int64)
        run_tasks(_rollup_chunk, len(out_base), chunk_ptr, out_base, chunk_len, src_codes,
                  src_sens, src_count, src_first, node_src_start, node_src_stop, node_map_off,
                  maps_flat, node_radix, out_pos, codes, sens, count, first, out_len, paths)
        for b in alone.tolist():
            c = int(np.searchsorted(chunk_ptr, b))
            if paths[b] == PARTITIONED:
                _, out_len[b] = _rollup_partitioned(
                    int(node_src_start[b]), int(node_src_stop[b]), node_map_off[b], node_radix[b],
                    src_codes, src_sens, src_count, src_first, maps_flat,
                    (codes, sens, count, first), int(out_base[c]))
            else:
                out_pos[b] = out_base[c]
                _rollup_node(b, src_codes, src_sens, src_count, src_first, node_src_start,
                             node_src_stop, node_map_off, maps_flat, node_radix, out_pos, codes,
                             sens, count, first, out_len)
            chunk_len[c] = out_len[b]
        # sensitive codes only where some node carries them (else all 0, never written)
        m = move_runs_together((codes, count, first) if n_nodes and
                               int(node_radix[..., -1].max()) <= 1 else
                               (codes, sens, count, first), out_base, chunk_len)
    ptr = np.zeros(n_nodes + 1, np.int64)
    np.cumsum(out_len, out=ptr[1:])
    if 2 * m < total and not given:  # do not keep a mostly empty buffer alive
        return codes[:m].copy(), sens[:m].copy(), count[:m].copy(), first[:m].copy(), ptr
    return codes[:m], sens[:m], count[:m], first[:m], ptr


def move_runs_together(arrays, starts, lengths) -> int:
    """Move the runs of rows ``starts[i]:starts[i] + lengths[i]`` of ``arrays`` (ascending,
    apart) together from row 0, in order; returns the rows.  Flat views: NumPy copies
    overlapping 1-D ranges forward in place, but 2-D ones through a temporary."""
    flat = [(a.reshape(-1), a.shape[1] if a.ndim == 2 else 1) for a in arrays]
    m = 0
    for src, n in zip(starts.tolist(), lengths.tolist()):
        if src != m:
            for a, w in flat:
                a[m * w:(m + n) * w] = a[src * w:(src + n) * w]
        m += n
    return m


# -- Array (NumPy / CuPy) form ---------------------------------------------------------
def rollup_xp(xp, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
              node_map_off, maps_flat, node_radix):
    """Roll source frequency sets up to a batch of nodes (array form).

    Parameters
    ----------
    src_codes : (E, q) int -- QID codes of all source entries, at their source levels.
    src_sens, src_count, src_first : (E,) -- sensitive code (0 if none), count, first row.
    node_src_start, node_src_stop : (B,) int64 (host) -- the source entry range of each node;
        entries of a range are ordered by ``first``.
    node_map_off : (B, q) int64 -- offset in ``maps_flat`` of each node's map of each QID.
    maps_flat : (M,) int -- the level-to-level code maps, concatenated (the codes' dtype).
    node_radix : (B, q+1) int64 (host) -- each node's codes per QID, then sensitive values.

    Returns
    -------
    codes, sens, count, first, ptr -- the rolled-up entries of all nodes, node ``b`` owning
    ``ptr[b]:ptr[b+1]``, in canonical (first-appearance) order.
    """
    start = xp.asarray(node_src_start, dtype=xp.int64)
    lens = xp.asarray(node_src_stop, dtype=xp.int64) - start
    total = int(lens.sum())
    row_ptr = xp.zeros(lens.shape[0] + 1, dtype=xp.int64)
    row_ptr[1:] = xp.cumsum(lens)
    seg = segment_ids(xp, row_ptr, total)
    rows = xp.arange(total, dtype=xp.int64) - row_ptr[seg] + start[seg]
    map_off = xp.asarray(node_map_off, dtype=xp.int64)
    cols = [maps_flat[map_off[seg, j] + src_codes[rows, j]] for j in range(src_codes.shape[1])]
    sens = src_sens[rows]
    # rows of a node are in ``first`` order: first appearance by row is by ``first``
    group_of_row, rep, ptr = group_xp(xp, cols + [sens], node_radix, row_ptr)
    n_groups = int(rep.shape[0])
    count = xp.bincount(group_of_row, weights=src_count[rows].astype(xp.float64),
                        minlength=n_groups).astype(xp.int64)  # exact: counts stay below 2**53
    codes = xp.stack([c[rep] for c in cols], axis=1).astype(maps_flat.dtype) if n_groups else \
        xp.zeros((0, src_codes.shape[1]), dtype=maps_flat.dtype)
    return codes, sens[rep], count, src_first[rows][rep], ptr
