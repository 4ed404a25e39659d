"""The roll-up: a frequency set rolled up to more general lattice nodes.

A *frequency set* lists the distinct rows of an encoded table (QID codes, optionally a sensitive
code) with their ``count`` and ``first`` (index of the first input row holding them), ordered by
``first``.  Rolling it up to a more general node maps every QID code through the hierarchy's
level-to-level table and merges entries that become equal (the roll-up of Incognito and ARX,
LeFevre et al. 2005; Kohlmayer et al. 2012).  The output keeps the canonical order: within a
node, groups are ordered by the first input row that falls into them.

Both forms group with :mod:`.groupby` and give identical output:

* :func:`rollup_njit` -- Numba CPU form: per node, each entry keyed by its packed
  mixed-radix code, the keys numbered in a directly addressed or hashed table
  (:func:`.groupby.number_keys`); nodes of a batch run in parallel (``prange``);
* :func:`rollup_xp` -- array form for NumPy/CuPy (:func:`.groupby.group_xp`: gather, sort,
  segment boundaries -- the sort-and-reduce pass that suits the GPU).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .groupby import extend_key, group_xp, number_keys, segment_ids, space_of


# --------------------------------------------------------------------------------------
# Numba CPU form
# --------------------------------------------------------------------------------------
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
                key += maps_flat[moff[j] + src_codes[e, j]] * strides[j]
            keys[i] = key
    else:
        keys[:] = 0
        space = 1
        col = np.empty(n, np.int64)
        for j in range(q):
            for i in range(n):
                col[i] = maps_flat[node_map_off[b, j] + src_codes[start + i, j]]
            space = extend_key(keys, space, col, node_radix[b, j], ids, False)
        space = extend_key(keys, space, src_sens[start:start + n], node_radix[b, q], ids, False)
    g = number_keys(keys, space, ids, False)
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
            out_codes[o, j] = maps_flat[node_map_off[b, j] + src_codes[e, j]]
        out_sens[o] = src_sens[e]
        out_first[o] = src_first[e]
    out_len[b] = g


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
def rollup_xp(xp, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
              node_map_off, maps_flat, node_radix):
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
    node_radix : (B, q+1) int64 (host) -- each node's number of codes per QID, then of the
        sensitive attribute.

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
