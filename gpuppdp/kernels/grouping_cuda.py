"""The CUDA forms of the roll-up and of a batch's classes (:mod:`.grouping` says what a roll-up
is): a thread per entry, each node's hash table a slice of one array (directly addressed when
its key space is small, else linear probing with slots claimed by compare-and-swap), a group's
first entry found by an atomic minimum and the groups numbered by a prefix sum over the first
entries -- no sort, the output of the other forms.  On CuPy arrays, or on NumPy arrays under
Numba's CUDA simulator.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .cudalaunch import BLOCK_THREADS, launch, to_device_together
from .groupby import KEY_LIMIT, segment_of
from .grouping import rollup_xp

CUDA_TABLE_LOAD = 1.5      # hashed tables: a power of two at least this times the entries
CUDA_DENSE_RATIO = 2       # key spaces up to this times the entries (plus a floor) are
CUDA_DENSE_FLOOR = 1 << 6  # directly addressed: no probing
_NO_FIRST = np.iinfo(np.int64).max


@cuda.jit(device=True)
def _slot_hash(key, mask):
    """A slot for ``key`` (< 2^62) in a table of ``mask + 1`` slots: the two 31-bit halves
    multiplied by odd constants below 2^31 (no overflow) and their high bits folded down."""
    lo = key & 0x7FFFFFFF
    hi = key >> 31
    x = lo * 0x6C8E9CF5
    y = hi * 0x4CF5AD43
    return (x ^ (x >> 29) ^ y ^ (y >> 31)) & mask


@cuda.jit(device=True)
def _claim_slot(table_key, base, mask, key):
    """The slot of ``key`` in the table at ``base`` (``mask`` -1: directly addressed, else
    ``mask + 1`` slots, linear probing, an empty slot claimed by compare-and-swap)."""
    if mask < 0:
        return base + key
    h = _slot_hash(key, mask)
    while True:
        slot = base + h
        seen = table_key[slot]
        if seen == -1:
            seen = cuda.atomic.cas(table_key, slot, -1, key)
            if seen == -1:
                return slot
        if seen == key:
            return slot
        h = (h + 1) & mask


@cuda.jit(cache=True)
def _rollup_insert(row_ptr, src_start, src_codes, src_sens, src_count, node_map_off, maps_flat,
                   strides, table_base, table_mask, table_key, table_first, table_count,
                   slot_of):
    """One thread per batch entry: key it by its node's packed mixed-radix code, find or
    claim its slot (``table_mask`` -1: directly addressed, else linear probing with a
    compare-and-swap), and fold its position (minimum: the group's first entry) and count
    into the slot."""
    i = cuda.grid(1)
    if i >= slot_of.shape[0]:
        return
    b = segment_of(row_ptr, i)
    e = src_start[b] + i - row_ptr[b]
    q = src_codes.shape[1]
    key = src_sens[e] * strides[b, q]
    for j in range(q):
        key += maps_flat[node_map_off[b, j] + src_codes[e, j]] * strides[b, j]
    slot = _claim_slot(table_key, table_base[b], table_mask[b], key)
    if table_first[slot] > i:
        cuda.atomic.min(table_first, slot, i)
    cuda.atomic.add(table_count, slot, src_count[e])
    slot_of[i] = slot


@cuda.jit(cache=True)
def _rollup_firsts(slot_of, table_first, is_first):
    """Whether each batch entry is the first of its group."""
    i = cuda.grid(1)
    if i < slot_of.shape[0]:
        is_first[i] = 1 if table_first[slot_of[i]] == i else 0


@cuda.jit(cache=True)
def _rollup_emit(row_ptr, src_start, src_codes, src_sens, src_first, node_map_off, maps_flat,
                 slot_of, table_count, is_first, group_at, out_codes, out_sens, out_count,
                 out_first):
    """One thread per batch entry: the first entry of a group writes the group at
    ``group_at[i]`` (its rank among the firsts: node by node, by first appearance)."""
    i = cuda.grid(1)
    if i >= slot_of.shape[0] or is_first[i] == 0:
        return
    b = segment_of(row_ptr, i)
    e = src_start[b] + i - row_ptr[b]
    o = group_at[i]
    for j in range(src_codes.shape[1]):
        out_codes[o, j] = maps_flat[node_map_off[b, j] + src_codes[e, j]]
    out_sens[o] = src_sens[e]
    out_first[o] = src_first[e]
    out_count[o] = table_count[slot_of[i]]


def _cuda_tables(lens, node_radix):
    """Per node: the packing strides (B, q+1) and the table's first slot and mask (-1:
    directly addressed, the key space's size) -- or ``None`` when a key space reaches
    :data:`.groupby.KEY_LIMIT` (then the array form's column-wise sort serves)."""
    radix = np.maximum(np.asarray(node_radix, dtype=np.int64), 1)
    # in logarithms, short of KEY_LIMIT by a margin for their rounding
    if np.log2(radix.astype(np.float64)).sum(axis=1).max(initial=0.0) >= \
            np.log2(KEY_LIMIT) - 0.1:
        return None
    strides = np.ones(radix.shape, np.int64)
    np.cumprod(radix[:, :-1], axis=1, out=strides[:, 1:])
    space = strides[:, -1] * radix[:, -1]
    dense = space <= CUDA_DENSE_RATIO * lens + CUDA_DENSE_FLOOR
    hashed = 1 << np.ceil(np.log2(np.maximum(CUDA_TABLE_LOAD * lens, 16))).astype(np.int64)
    size = np.where(dense, space, hashed)
    base = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(size, out=base[1:])
    return strides, base, np.where(dense, -1, hashed - 1)


@cuda.jit(cache=True)
def _class_insert(ptr, codes, count, strides, table_base, table_mask, table_key, table_first,
                  table_size, table_entries, slot_of):
    """One thread per entry of a batch's frequency sets: key it by its node's packed QID codes
    (the sensitive value left out), claim its slot (:func:`_claim_slot`) and fold into it its
    position (minimum: the class's first entry), records and one entry."""
    i = cuda.grid(1)
    if i >= slot_of.shape[0]:
        return
    b = segment_of(ptr, i)
    key = 0
    for j in range(codes.shape[1]):
        key += codes[i, j] * strides[b, j]
    slot = _claim_slot(table_key, table_base[b], table_mask[b], key)
    if table_first[slot] > i:
        cuda.atomic.min(table_first, slot, i)
    cuda.atomic.add(table_size, slot, count[i])
    cuda.atomic.add(table_entries, slot, 1)
    slot_of[i] = slot


@cuda.jit(cache=True)
def _class_emit(ptr, slot_of, table_first, table_size, table_entries, class_at, class_of_entry,
                rep, size, distinct, node):
    """One thread per entry: its class (``class_at`` of the class's first entry: the number
    of first entries before it); the first entry writes the class's row."""
    i = cuda.grid(1)
    if i >= slot_of.shape[0]:
        return
    slot = slot_of[i]
    first = table_first[slot]
    c = class_at[first]
    class_of_entry[i] = c
    if first == i:
        rep[c] = i
        size[c] = table_size[slot]
        distinct[c] = table_entries[slot]
        node[c] = segment_of(ptr, i)


def _empty_tables(xp, slots: int, counters: int) -> list:
    """A batch's ``slots`` table slots, empty: their keys (-1), their groups' first entries
    (none yet) and ``counters`` int64 sums (0)."""
    return [xp.full(slots, -1, dtype=xp.int64), xp.full(slots, _NO_FIRST, dtype=xp.int64)] + \
        [xp.zeros(slots, dtype=xp.int64) for _ in range(counters)]


def _first_entries(xp, slot_of, table_first, grid: int) -> tuple:
    """``(is_first, group_at)`` of a batch's entries once their slots are filled: whether
    each is its group's first, and the exclusive prefix sum of the firsts (at a first entry,
    its group's number; at a node's first position, the node's first group)."""
    is_first = xp.empty(slot_of.shape[0], dtype=xp.int8)
    launch(_rollup_firsts, grid, BLOCK_THREADS, slot_of, table_first, is_first)
    return is_first, xp.concatenate([xp.zeros(1, dtype=xp.int64),
                                     xp.cumsum(is_first, dtype=xp.int64)])


def classes_cuda(xp, ptr, host_ptr, codes, radix, count):
    """:func:`~gpuppdp.kernels.classes` of a GPU batch -- ``(class_of_entry, rep_entry,
    class_ptr, size, distinct, node)``, the classes numbered node by node in order of first
    appearance -- in four launches over the entries (a hash table per node, as
    :func:`rollup_cuda` builds), or ``None`` where a node's key space reaches
    :data:`.groupby.KEY_LIMIT` (the array form serves).  ``host_ptr``: ``ptr`` on the host;
    ``radix`` (B, q) host.  On CuPy arrays, or NumPy ones under Numba's CUDA simulator."""
    host_ptr = np.asarray(host_ptr, dtype=np.int64)
    lens = np.diff(host_ptr)
    radix = np.broadcast_to(np.asarray(radix, dtype=np.int64), (len(lens), codes.shape[1]))
    tables = _cuda_tables(lens, np.concatenate([radix, np.ones((len(lens), 1), np.int64)],
                                               axis=1))
    if tables is None:
        return None
    strides, base, mask = tables
    total = int(host_ptr[-1])
    if total == 0:
        empty = xp.zeros(0, dtype=xp.int64)
        return empty, empty, xp.zeros(len(lens) + 1, dtype=xp.int64), empty, empty, empty
    strides, table_base, table_mask = to_device_together(xp, strides, base[:-1], mask)
    table_key, table_first, table_size, table_entries = _empty_tables(xp, int(base[-1]), 2)
    slot_of = xp.empty(total, dtype=xp.int64)
    grid = (total + BLOCK_THREADS - 1) // BLOCK_THREADS
    ptr = ptr.astype(xp.int64, copy=False)
    launch(_class_insert, grid, BLOCK_THREADS, ptr, codes, count.astype(xp.int64, copy=False),
           strides, table_base, table_mask, table_key, table_first, table_size, table_entries,
           slot_of)
    del table_key
    _, class_at = _first_entries(xp, slot_of, table_first, grid)
    class_ptr = class_at[ptr]
    n_classes = int(class_at[total])
    out = [xp.empty(total, dtype=xp.int64)] + [xp.empty(n_classes, dtype=xp.int64)
                                               for _ in range(4)]
    launch(_class_emit, grid, BLOCK_THREADS, ptr, slot_of, table_first, table_size,
           table_entries, class_at, *out)
    class_of_entry, rep, size, distinct, node = out
    return class_of_entry, rep, class_ptr, size, distinct, node


def rollup_cuda(xp, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                node_map_off, maps_flat, node_radix, sync: bool = True):
    """CUDA roll-up of a batch of nodes (the contract and output of :func:`rollup_xp`): a
    thread per source entry, its node's table a slice of one array (directly addressed, or
    linear probing with slots claimed by compare-and-swap); a group's first entry is the
    smallest batch position in its slot (atomic minimum), a prefix sum over the first
    entries numbers the groups.  On CuPy arrays, or NumPy ones under Numba's CUDA simulator.
    Sixth output: the offsets on the host, the one synchronization (the last is the size);
    ``sync=False``: ``None`` there, no synchronization, and the outputs sized by the source
    entries (the groups are their first ``ptr[-1]`` rows; the rest is not written)."""
    node_src_start = np.asarray(node_src_start, dtype=np.int64)
    lens = np.asarray(node_src_stop, dtype=np.int64) - node_src_start
    tables = _cuda_tables(lens, node_radix)
    if tables is None:
        out = rollup_xp(xp, src_codes, src_sens, src_count, src_first, node_src_start,
                        node_src_start + lens, node_map_off, maps_flat, node_radix)
        return out + (np.asarray(out[4] if xp is np else out[4].get(), dtype=np.int64),)
    strides, base, mask = tables
    host_row_ptr = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=host_row_ptr[1:])
    total = int(host_row_ptr[-1])
    q = src_codes.shape[1]
    if total == 0:
        return (xp.zeros((0, q), dtype=maps_flat.dtype), xp.zeros(0, dtype=src_sens.dtype),
                xp.zeros(0, dtype=xp.int64), xp.zeros(0, dtype=src_first.dtype),
                xp.zeros(len(lens) + 1, dtype=xp.int64), np.zeros(len(lens) + 1, np.int64))
    row_ptr, start, map_off, strides, table_base, table_mask = to_device_together(
        xp, host_row_ptr, node_src_start, node_map_off, strides, base[:-1], mask)
    table_key, table_first, table_count = _empty_tables(xp, int(base[-1]), 1)
    slot_of = xp.empty(total, dtype=xp.int64)
    grid = (total + BLOCK_THREADS - 1) // BLOCK_THREADS
    launch(_rollup_insert, grid, BLOCK_THREADS, row_ptr, start, src_codes, src_sens, src_count,
           map_off, maps_flat, strides, table_base, table_mask, table_key, table_first,
           table_count, slot_of)
    del table_key
    is_first, group_at = _first_entries(xp, slot_of, table_first, grid)
    ptr = group_at[row_ptr]
    host_ptr, n_groups = None, total  # the groups fit in the entries they come from
    if sync:
        host_ptr = np.asarray(ptr if xp is np else ptr.get(), dtype=np.int64)  # last: the size
        n_groups = int(host_ptr[-1])
    codes = xp.empty((n_groups, q), dtype=maps_flat.dtype)
    sens = xp.empty(n_groups, dtype=src_sens.dtype)
    count = xp.empty(n_groups, dtype=xp.int64)
    first = xp.empty(n_groups, dtype=src_first.dtype)
    launch(_rollup_emit, grid, BLOCK_THREADS, row_ptr, start, src_codes, src_sens, src_first,
           map_off, maps_flat, slot_of, table_count, is_first, group_at, codes, sens, count,
           first)
    return codes, sens, count, first, ptr, host_ptr
