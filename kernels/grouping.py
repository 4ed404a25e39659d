"""Group-by kernels: roll a frequency set up to more general lattice nodes.

A *frequency set* lists the distinct rows of an encoded table (QID codes, optionally a sensitive
code) with their ``count`` and ``first`` (index of the first input row holding them), ordered by
``first``.  Rolling it up to a more general node maps every QID code through the hierarchy's
level-to-level table and merges entries that become equal (the roll-up of Incognito and ARX,
LeFevre et al. 2005; Kohlmayer et al. 2012).  The output keeps the canonical order: within a
node, groups are ordered by the first input row that falls into them.

Two forms give identical output:

* :func:`rollup_njit` -- Numba CPU form: per node, one pass with an open-addressing hash
  table; nodes of a batch run in parallel (``prange``).
* :func:`rollup_xp` -- array form for NumPy/CuPy: gather, ``lexsort``, segment boundaries
  (the sort-and-reduce pass that suits the GPU).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)


# --------------------------------------------------------------------------------------
# Numba CPU form
# --------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _mix(h, v):
    h ^= np.uint64(v) + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
    return h


@njit(cache=True)
def _rollup_node(b, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                 node_map_off, maps_flat, node_radix, out_start, out_codes, out_sens, out_count,
                 out_first, out_len):
    """Roll the source range of node ``b`` up into ``out_*[out_start[b]:]``.

    Entries are keyed by their mixed-radix code (radices ``node_radix[b]``: QIDs, then the
    sensitive attribute) when the node's key space fits in int64: directly addressed when the
    space is small, hashed otherwise; without such a key the hash compares the code columns.
    """
    q = src_codes.shape[1]
    start = node_src_start[b]
    stop = node_src_stop[b]
    strides = np.ones(q + 1, np.int64)
    space = 1
    log_space = 0.0
    for j in range(q + 1):
        strides[j] = space
        r = max(node_radix[b, j], 1)
        log_space += np.log2(r)
        space = space * r if log_space < 62.0 else 1
    if log_space >= 62.0:
        space = -1
    dense = 0 <= space <= 4 * (stop - start) + 1024
    if dense:
        cap = space
    else:
        cap = 16
        while cap < 2 * (stop - start):
            cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full(cap, -1, np.int64)
    keys = np.empty(stop - start if space >= 0 and not dense else 0, np.int64)
    s_stride = strides[q]
    base = out_start[b]
    used = 0
    row = np.empty(q, np.int32)
    for e in range(start, stop):
        h = np.uint64(1469598103934665603)
        key = 0
        for j in range(q):
            c = maps_flat[node_map_off[b, j] + src_codes[e, j]]
            row[j] = c
            key += c * strides[j]
            h = _mix(h, c)
        s = src_sens[e]
        key += s * s_stride
        h = _mix(h, s)
        if dense:
            slot = np.uint64(key)
        elif space >= 0:
            slot = ((np.uint64(key) * _HASH_MUL) >> np.uint64(20)) & mask
        else:
            slot = ((h * _HASH_MUL) >> np.uint64(20)) & mask
        while True:
            g = table[slot]
            if g < 0:
                table[slot] = used
                o = base + used
                for j in range(q):
                    out_codes[o, j] = row[j]
                out_sens[o] = s
                out_count[o] = src_count[e]
                out_first[o] = src_first[e]
                if keys.shape[0]:
                    keys[used] = key
                used += 1
                break
            o = base + g
            if dense:
                same = True
            elif space >= 0:
                same = keys[g] == key
            else:
                same = out_sens[o] == s
                if same:
                    for j in range(q):
                        if out_codes[o, j] != row[j]:
                            same = False
                            break
            if same:
                out_count[o] += src_count[e]
                break
            slot = (slot + np.uint64(1)) & mask
    out_len[b] = used


@njit(cache=True, parallel=True)
def _rollup_njit_parallel(src_codes, src_sens, src_count, src_first, node_src_start,
                          node_src_stop, node_map_off, maps_flat, node_radix, out_start,
                          out_codes, out_sens, out_count, out_first, out_len):
    for b in prange(node_src_start.shape[0]):
        _rollup_node(b, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                     node_map_off, maps_flat, node_radix, out_start, out_codes, out_sens,
                     out_count, out_first, out_len)


@njit(cache=True, parallel=True)
def _compact(out_start, out_len, ptr, codes, sens, count, first, c_codes, c_sens, c_count,
             c_first):
    for b in prange(out_start.shape[0]):
        for i in range(out_len[b]):
            o = out_start[b] + i
            d = ptr[b] + i
            c_codes[d, :] = codes[o, :]
            c_sens[d] = sens[o]
            c_count[d] = count[o]
            c_first[d] = first[o]


def rollup_njit(src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
                node_map_off, maps_flat, node_radix):
    """CPU roll-up of a batch of nodes; see :func:`rollup_xp` for the contract.  ``node_radix``
    (B, q+1) holds each node's number of codes per QID and of the sensitive attribute."""
    lens = (node_src_stop - node_src_start).astype(np.int64)
    out_start = np.zeros(len(lens), np.int64)
    np.cumsum(lens[:-1], out=out_start[1:])
    total = int(lens.sum())
    q = src_codes.shape[1]
    codes = np.empty((total, q), maps_flat.dtype)
    sens = np.empty(total, src_sens.dtype)
    count = np.empty(total, np.int64)
    first = np.empty(total, np.int64)
    out_len = np.empty(len(lens), np.int64)
    args = (src_codes, src_sens, src_count, src_first, node_src_start.astype(np.int64),
            node_src_stop.astype(np.int64), node_map_off, maps_flat,
            np.asarray(node_radix, dtype=np.int64), out_start, codes, sens, count, first, out_len)
    if len(lens) == 1:  # a single node: no thread-pool start-up
        _rollup_node(0, *args)
    else:
        _rollup_njit_parallel(*args)
    ptr = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(out_len, out=ptr[1:])
    if len(lens) == 1:
        used = slice(0, int(out_len[0]))
        return codes[used], sens[used], count[used], first[used], ptr
    if ptr[-1] < total:
        m = int(ptr[-1])
        packed = (np.empty((m, codes.shape[1]), codes.dtype), np.empty(m, sens.dtype),
                  np.empty(m, np.int64), np.empty(m, np.int64))
        _compact(out_start, out_len, ptr, codes, sens, count, first, *packed)
        codes, sens, count, first = packed
    return codes, sens, count, first, ptr


# --------------------------------------------------------------------------------------
# Array (NumPy / CuPy) form
# --------------------------------------------------------------------------------------
def segment_ids(xp, ptr, total):
    """``ptr`` (S+1 offsets, device) -> segment index of each of ``total`` rows.

    Counts the segment starts at each row and sums them up (CuPy's ``repeat`` takes no device
    array of repeat counts)."""
    starts = xp.bincount(ptr[1:-1].astype(xp.int64), minlength=total + 1)[:total]
    return xp.cumsum(starts).astype(xp.int64)


def group_sorted_xp(xp, seg, key_cols, first):
    """Group rows by ``(seg, *key_cols)``; groups ordered by ``(seg, min first)``.

    Returns ``(group_of_row, rep_row, n_groups)`` where ``rep_row[g]`` is the row with the
    smallest ``first`` in group ``g``.
    """
    n = first.shape[0]
    if n == 0:
        empty = xp.zeros(0, dtype=xp.int64)
        return empty, empty, 0
    perm = xp.lexsort(xp.stack([first] + list(key_cols[::-1]) + [seg]))
    boundary = xp.zeros(n, dtype=xp.bool_)
    boundary[0] = True
    for col in [seg] + list(key_cols):
        s = col[perm]
        boundary[1:] |= s[1:] != s[:-1]
    starts = xp.flatnonzero(boundary)
    group_sorted = xp.cumsum(boundary.astype(xp.int64)) - 1
    rep = perm[starts]
    order = xp.lexsort(xp.stack([first[rep], seg[rep]]))
    rank = xp.empty(order.shape[0], dtype=xp.int64)
    rank[order] = xp.arange(order.shape[0], dtype=xp.int64)
    group_of_row = xp.empty(n, dtype=xp.int64)
    group_of_row[perm] = rank[group_sorted]
    return group_of_row, rep[order], int(order.shape[0])


def rollup_xp(xp, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
              node_map_off, maps_flat):
    """Roll source frequency sets up to a batch of nodes (array form).

    Parameters
    ----------
    src_codes : (E, q) int -- QID codes of all source entries, at their source levels.
    src_sens, src_count, src_first : (E,) -- sensitive code (0 if none), count, first row.
    node_src_start, node_src_stop : (B,) int64 (host) -- the source entry range of each node;
        entries of a range are ordered by ``first``.
    node_map_off : (B, q) int64 -- offset into ``maps_flat`` of the code map each node uses
        for each QID (from its source level to its own level).
    maps_flat : (M,) int -- all level-to-level code maps, concatenated; its dtype is the
        dtype of the output codes.

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
    first = src_first[rows]
    group_of_row, rep, n_groups = group_sorted_xp(xp, seg, cols + [sens], first)
    count = xp.zeros(n_groups, dtype=xp.int64)
    xp.add.at(count, group_of_row, src_count[rows])
    codes = xp.stack([c[rep] for c in cols], axis=1).astype(maps_flat.dtype) if n_groups else \
        xp.zeros((0, src_codes.shape[1]), dtype=maps_flat.dtype)
    ptr = xp.zeros(lens.shape[0] + 1, dtype=xp.int64)
    ptr[1:] = xp.cumsum(xp.bincount(seg[rep], minlength=lens.shape[0]))
    return codes, sens[rep], count, first[rep], ptr


# --------------------------------------------------------------------------------------
# Classes of a frequency set (QID codes only, the sensitive code dropped)
# --------------------------------------------------------------------------------------
@njit(cache=True, parallel=True)
def _classes_njit_parallel(ptr, codes, class_of_entry, rep_local, n_local):
    for b in prange(ptr.shape[0] - 1):
        _classes_node(b, ptr, codes, class_of_entry, rep_local, n_local)


@njit(cache=True)
def _classes_node(b, ptr, codes, class_of_entry, rep_local, n_local):
    q = codes.shape[1]
    start = ptr[b]
    n = ptr[b + 1] - start
    cap = 16
    while cap < 2 * n:
        cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full(cap, -1, np.int64)
    used = 0
    for e in range(start, start + n):
        h = np.uint64(1469598103934665603)
        for j in range(q):
            h = _mix(h, codes[e, j])
        slot = ((h * _HASH_MUL) >> np.uint64(20)) & mask
        while True:
            g = table[slot]
            if g < 0:
                table[slot] = used
                rep_local[start + used] = e
                class_of_entry[e] = used
                used += 1
                break
            r = rep_local[start + g]
            same = True
            for j in range(q):
                if codes[r, j] != codes[e, j]:
                    same = False
                    break
            if same:
                class_of_entry[e] = g
                break
            slot = (slot + np.uint64(1)) & mask
    n_local[b] = used


def classes_njit(ptr, codes, first):
    """CPU form of :func:`classes_xp`."""
    n = codes.shape[0]
    class_of_entry = np.empty(n, np.int64)
    rep_local = np.empty(n, np.int64)
    n_local = np.empty(len(ptr) - 1, np.int64)
    if len(ptr) == 2:
        _classes_node(0, ptr, codes, class_of_entry, rep_local, n_local)
    else:
        _classes_njit_parallel(ptr, codes, class_of_entry, rep_local, n_local)
    class_ptr = np.zeros(len(ptr), np.int64)
    np.cumsum(n_local, out=class_ptr[1:])
    seg_of_entry = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    class_of_entry += class_ptr[seg_of_entry]
    keep = np.arange(n) - ptr[seg_of_entry] < n_local[seg_of_entry]
    rep = rep_local[keep]
    return class_of_entry, rep, class_ptr


def classes_xp(xp, ptr, codes, first):
    """Equivalence classes of frequency-set entries: group by QID codes within each node.

    Returns ``(class_of_entry, rep_entry, class_ptr)`` with classes in canonical order.
    """
    seg = segment_ids(xp, ptr, codes.shape[0])
    cols = [codes[:, j] for j in range(codes.shape[1])]
    class_of_entry, rep, n_classes = group_sorted_xp(xp, seg, cols, first)
    class_ptr = xp.zeros(ptr.shape[0], dtype=xp.int64)
    class_ptr[1:] = xp.cumsum(xp.bincount(seg[rep], minlength=ptr.shape[0] - 1))
    return class_of_entry, rep, class_ptr
