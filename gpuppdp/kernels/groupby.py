"""One group-by: number the distinct key tuples of the rows of a table, within segments.

A key is a tuple of non-negative integer codes, column ``j`` below ``radix[j]``.  Groups are
numbered in order of first appearance (``order="first"``: the canonical order of frequency
sets and equivalence classes, as ARX's hash groupify numbers them) or in sorted order
(``order="sorted"``: lexicographic, first column most significant, as ``numpy.unique`` of the
packed key numbers them).  With segments (``ptr``: rows ``ptr[s]:ptr[s+1]``) no group spans
two of them and groups are numbered segment by segment.

The path is picked by the size of the key space (the product of the radices):

* dense -- a space at most a few times the rows is counted over (in Numba a directly
  addressed table; in the array form, for sorted numbering, ``bincount``);
* sort (array form) -- the mixed-radix key packed in one int64 when the space fits
  (``argsort``), ``lexsort`` over the columns otherwise;
* hash (Numba form) -- open addressing on the packed key (multiplicative hashing, Knuth,
  TAOCP vol. 3, 6.4); a key that would overflow int64 is packed column by column, the prefix
  replaced by its group ids first (:func:`extend_key`).

Two forms give the same ``ids`` and ``group_ptr`` (and, numbered by first appearance, the
same ``rep``): :func:`group_xp` (array form: the NumPy reference, and the GPU's on CuPy) and
:func:`group_njit` (Numba CPU, runs of segments as tasks for the threads).  The Numba
primitives (:func:`space_of`, :func:`extend_key`, :func:`number_keys`,
:func:`number_keys_sorted`) are also the roll-up's (:mod:`.grouping`) and the subset kernel's
(:mod:`.subsets`); each path is a kernel of its own, compiled on first use.  :func:`group`
picks the form for the array namespace.  :func:`run_tasks` runs CPU kernels as tasks that a
few threads take as they come free (the roll-up's and the per-node sums' parallelism).
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import cuda, njit

from .aot import CODE_TYPES, ahead_of_time
from .hashtable import _HASH_MUL

__all__ = ["group", "group_xp", "group_njit", "segment_ids", "count_keys", "rank_present",
           "key_space", "space_of", "number_keys", "number_keys_sorted", "extend_key", "run_tasks",
           "balanced_runs", "n_tasks_for", "segment_of", "KeySet", "marginal_counts_njit",
           "present_codes", "distinct_at_levels"]

DENSE_RATIO = 4              # key spaces up to this times the rows (plus a floor) are dense
NJIT_DENSE_FLOOR = 1 << 10   # ... a directly addressed table in Numba
XP_DENSE_FLOOR = 1 << 16     # ... a bincount in the array form
SORTED_DENSE_RATIO = 16      # ... in Numba numbering in sorted order (plus XP_DENSE_FLOOR)
KEY_LIMIT = 1 << 62          # packed keys stay below this


# --------------------------------------------------------------------------------------
# CPU parallelism: tasks taken by a pool of threads as they come free
# --------------------------------------------------------------------------------------
_POOL: ThreadPoolExecutor | None = None
_POOL_THREADS = 0
_POOL_LOCK = threading.Lock()


def run_tasks(kernel, n_tasks: int, *args) -> None:
    """``kernel(t, *args)`` for ``t`` in ``range(n_tasks)``: a compiled kernel that releases the
    GIL (``nogil=True``), on the calling thread and ``numba.get_num_threads() - 1`` pool
    threads, each claiming the next task when it is done with one -- a thread slowed by other
    work on its core just takes fewer (no static split, no barrier but the end)."""
    n_threads = 1 if n_tasks <= 1 else min(numba.get_num_threads(), n_tasks)
    if n_threads <= 1:
        for t in range(n_tasks):
            kernel(t, *args)
        return
    global _POOL, _POOL_THREADS
    with _POOL_LOCK:
        if _POOL is None or _POOL_THREADS < n_threads - 1:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL = ThreadPoolExecutor(n_threads - 1, thread_name_prefix="gpuppdp-kernel")
            _POOL_THREADS = n_threads - 1
        pool = _POOL
    claim = itertools.count().__next__  # atomic under the GIL

    def work():
        t = claim()
        while t < n_tasks:
            kernel(t, *args)
            t = claim()

    helpers = [pool.submit(work) for _ in range(n_threads - 1)]
    work()
    for f in helpers:
        f.result()


def balanced_runs(ptr, n_runs: int) -> np.ndarray:
    """``(R+1,)`` int64 boundaries of at most ``n_runs`` runs of consecutive segments of ``ptr``
    (host offsets) holding about equal numbers of rows (no empty run)."""
    ptr = np.asarray(ptr, dtype=np.int64)
    n_seg = ptr.shape[0] - 1
    if n_runs <= 1 or n_seg <= 1:
        return np.array([0, max(n_seg, 0)], np.int64) if n_seg > 0 else np.zeros(1, np.int64)
    total = int(ptr[-1] - ptr[0])
    cuts = np.searchsorted(ptr, ptr[0] + total * np.arange(1, n_runs) / n_runs, side="left")
    return np.unique(np.concatenate([[0], np.clip(cuts, 0, n_seg), [n_seg]])).astype(np.int64)


def n_tasks_for(rows: int, n_segments: int, per_thread: int = 4) -> int:
    """How many tasks to cut ``rows`` rows in ``n_segments`` segments into: one for small work
    or a single thread, else ``per_thread`` per thread (at most one per segment)."""
    if rows < (1 << 15):  # before asking Numba (microseconds a call, per node in a search)
        return 1
    n_threads = numba.get_num_threads()
    if n_threads <= 1:
        return 1
    return max(1, min(n_segments, per_thread * n_threads))


def key_space(radix) -> int | None:
    """Product of the radices (each at least 1), ``None`` when it reaches ``KEY_LIMIT``."""
    space = 1
    for r in radix:
        space *= max(int(r), 1)
        if space >= KEY_LIMIT:
            return None
    return space


# --------------------------------------------------------------------------------------
# Numba CPU form
# --------------------------------------------------------------------------------------
@njit(cache=True)
def space_of(radix):
    """:func:`key_space` in Numba: the product of ``radix`` (each at least 1), -1 when it
    reaches ``KEY_LIMIT``."""
    space = np.int64(1)
    for r in radix:
        r = max(np.int64(r), 1)
        if space > (KEY_LIMIT - 1) // r:
            return np.int64(-1)
        space *= r
    return space


ahead_of_time(space_of, ["int64(int64[::1])"])  # the form Python calls (the compiled Flash's test)


@njit(cache=True)
def _spaces_fit(radix):
    """Whether every row of ``radix`` (S, k) has a key space below ``KEY_LIMIT``
    (:func:`space_of`)."""
    for i in range(radix.shape[0]):
        if space_of(radix[i]) < 0:
            return False
    return True


ahead_of_time(_spaces_fit, ["boolean(int64[:, ::1])", "boolean(int64[:, :])"])


@njit(inline='always')
def _slot(key, mask):
    """A key's first slot in an open-addressed table of ``mask + 1`` slots (multiplicative
    hashing, Knuth, TAOCP vol. 3, 6.4)."""
    return ((np.uint64(key) * _HASH_MUL) >> np.uint64(20)) & mask


@njit(cache=True)
def _number_hashed(keys, ids, seen):
    """First-appearance group ids of ``keys`` by open addressing (linear probing, a power of
    two and at least ``2 n`` slots); ``seen[g]`` the key of group ``g``.  Returns the count."""
    n = keys.shape[0]
    cap = 16
    while cap < 2 * n:
        cap *= 2
    table = np.full(cap, -1, np.int64)
    mask = np.uint64(cap - 1)
    g = 0
    for i in range(n):
        k = keys[i]
        slot = _slot(k, mask)
        while True:
            s = table[slot]
            if s < 0:
                s = g
                table[slot] = g
                seen[g] = k
                g += 1
                break
            if seen[s] == k:
                break
            slot = (slot + np.uint64(1)) & mask
        ids[i] = s
    return g


@njit(cache=True)
def number_keys(keys, space, ids, dense_max=-1):
    """Group ids of int64 ``keys`` (below ``space``; -1: unbounded) into ``ids`` in order of
    first appearance; returns the number of groups.  A space of at most ``dense_max`` keys
    (default ``DENSE_RATIO * n + NJIT_DENSE_FLOOR``) is addressed directly, a larger one
    hashed (:func:`_number_hashed`)."""
    n = keys.shape[0]
    if dense_max < 0:
        dense_max = DENSE_RATIO * n + NJIT_DENSE_FLOOR
    if not 0 <= space <= dense_max:
        return _number_hashed(keys, ids, np.empty(n, np.int64))
    table = np.full(space, -1, np.int64)
    g = 0
    for i in range(n):
        k = keys[i]
        s = table[k]
        if s < 0:
            s = g
            table[k] = g
            g += 1
        ids[i] = s
    return g


@njit(cache=True)
def number_keys_sorted(keys, space, ids, dense_max=-1):
    """:func:`number_keys` numbering the groups in the keys' order: a space of at most
    ``dense_max`` keys (default ``SORTED_DENSE_RATIO * n + XP_DENSE_FLOOR``: a scan of the
    space beats sorting the groups for longer) is marked and scanned, a larger one hashed and
    its groups ranked by key.  A kernel of its own, so that the first-appearance numbering
    (the search's) does not compile a sort."""
    n = keys.shape[0]
    if dense_max < 0:
        dense_max = SORTED_DENSE_RATIO * n + XP_DENSE_FLOOR
    if 0 <= space <= dense_max:  # mark the keys present, number them in a scan of the space
        table = np.full(space, -1, np.int64)
        for i in range(n):
            table[keys[i]] = 0
        g = 0
        for k in range(space):
            if table[k] == 0:
                table[k] = g
                g += 1
        for i in range(n):
            ids[i] = table[keys[i]]
        return g
    seen = np.empty(n, np.int64)
    g = _number_hashed(keys, ids, seen)
    if g > 1:  # rank the groups by their keys
        rank = np.empty(g, np.int64)
        order = np.argsort(seen[:g])
        for r in range(g):
            rank[order[r]] = r
        for i in range(n):
            ids[i] = rank[ids[i]]
    return g


@njit(cache=True)
def extend_key(keys, space, col, radix, scratch, sorted_order):
    """``keys = keys * radix + col`` (mixed radix, ``keys`` below ``space``); returns the new
    space.  When that would reach ``KEY_LIMIT`` the keys are first replaced by their group ids
    (numbered as ``sorted_order`` says, through ``scratch``)."""
    r = max(np.int64(radix), 1)
    if space > (KEY_LIMIT - 1) // r:
        if sorted_order:
            space = number_keys_sorted(keys, space, scratch)
        else:
            space = number_keys(keys, space, scratch)
        for i in range(keys.shape[0]):
            keys[i] = scratch[i]
    for i in range(keys.shape[0]):
        keys[i] = keys[i] * r + col[i]
    return space * r


@njit(cache=True)
def _packed_keys(s, cols, radix, ptr, keys):
    """Segment ``s``'s mixed-radix keys (first column most significant) when its key space
    fits in int64; returns the space."""
    r = radix[s] if radix.shape[0] > 1 else radix[0]  # per segment, or one row for all
    space = np.int64(1)
    for j in range(cols.shape[1]):
        space *= max(r[j], 1)
    for i in range(ptr[s], ptr[s + 1]):
        key = np.int64(0)
        for j in range(cols.shape[1]):
            key = key * max(r[j], 1) + cols[i, j]
        keys[i] = key
    return space


@njit(cache=True)
def _first_rows(s, ptr, ids, rep, g, n_groups):
    """``rep[ptr[s] + g]``: the first row of segment ``s``'s group ``g``."""
    start = ptr[s]
    for i in range(ptr[s + 1] - 1, start - 1, -1):  # the last write is a group's first row
        rep[start + ids[i]] = i
    n_groups[s] = g


@njit(cache=True, nogil=True)
def _group_first(t, runs, cols, radix, ptr, keys, ids, rep, n_groups):
    """Task ``t``: segments ``runs[t]:runs[t+1]`` (key spaces within int64), groups numbered
    by first appearance; ids local to each segment."""
    for s in range(runs[t], runs[t + 1]):
        space = _packed_keys(s, cols, radix, ptr, keys)
        a, b = ptr[s], ptr[s + 1]
        _first_rows(s, ptr, ids, rep, number_keys(keys[a:b], space, ids[a:b]), n_groups)


ahead_of_time(_group_first, [
    f"none(int64, int64[::1], {c}[:, ::1], {radix}, {', '.join(['int64[::1]'] * 5)})"
    for c in (*CODE_TYPES, "int64") for radix in ("int64[:, ::1]", "int64[:, :]")])


@njit(cache=True, nogil=True)
def _group_sorted(t, runs, cols, radix, ptr, keys, ids, rep, n_groups):
    """:func:`_group_first` with the groups numbered in key order."""
    for s in range(runs[t], runs[t + 1]):
        space = _packed_keys(s, cols, radix, ptr, keys)
        a, b = ptr[s], ptr[s + 1]
        _first_rows(s, ptr, ids, rep, number_keys_sorted(keys[a:b], space, ids[a:b]),
                    n_groups)


# the forms the risk report's classes (codes int32) and the checker's (int64) take; the
# others compile on first use
ahead_of_time(_group_sorted, [
    f"none(int64, int64[::1], {c}[:, ::1], int64[:, ::1], {', '.join(['int64[::1]'] * 5)})"
    for c in ("int32", "int64")])


@njit(cache=True, nogil=True)
def _group_wide(t, runs, cols, radix, ptr, keys, ids, rep, n_groups, sorted_order):
    """:func:`_group_first` / :func:`_group_sorted` for key spaces past int64: the key built
    column by column (:func:`extend_key`)."""
    for s in range(runs[t], runs[t + 1]):
        a, b = ptr[s], ptr[s + 1]
        r = radix[s] if radix.shape[0] > 1 else radix[0]
        k = keys[a:b]
        local = ids[a:b]
        for i in range(b - a):
            k[i] = 0
        space = np.int64(1)
        for j in range(cols.shape[1]):
            space = extend_key(k, space, cols[a:b, j], r[j], local, sorted_order)
        g = number_keys_sorted(k, space, local) if sorted_order else \
            number_keys(k, space, local)
        _first_rows(s, ptr, ids, rep, g, n_groups)


@njit(cache=True, nogil=True)
def _group_global(t, runs, ptr, group_ptr, count, ids, rep, rep_out, size, distinct, segment):
    """Task ``t``: segments ``runs[t]:runs[t+1]`` of :func:`group_njit`, their groups
    numbered globally (``ids`` in place, first rows to ``rep_out``); with a ``count`` per row
    (else empty) each group's summed ``size``, rows (``distinct``) and ``segment`` too."""
    with_totals = count.shape[0] > 0
    for s in range(runs[t], runs[t + 1]):
        base, start = group_ptr[s], ptr[s]
        for g in range(group_ptr[s + 1] - base):
            rep_out[base + g] = rep[start + g]
            if with_totals:
                size[base + g] = 0
                distinct[base + g] = 0
                segment[base + g] = s
        for i in range(start, ptr[s + 1]):
            c = ids[i] + base
            ids[i] = c
            if with_totals:
                size[c] += count[i]
                distinct[c] += 1


ahead_of_time(_group_global, ["none(int64, " + ", ".join(["int64[::1]"] * 10) + ")"])


def group_njit(cols, radix, ptr=None, order="first", count=None):
    """Numba form of :func:`group_xp` on host arrays: ``cols`` (n, k), ``radix`` (k,) or per
    segment (S, k), ``ptr`` (S+1,) or ``None`` (one segment).  Runs of segments are tasks for
    the threads (:func:`run_tasks`); each kernel compiles on first use (packed keys in first
    or key order, or keys past int64).  With ``count`` (n,) also ``(size, distinct,
    segment)`` per group (int64: summed counts, rows, segment), in the pass that numbers the
    groups globally."""
    cols = np.ascontiguousarray(cols)
    n = cols.shape[0]
    ptr = np.array([0, n], np.int64) if ptr is None else np.asarray(ptr, dtype=np.int64)
    radix = np.asarray(radix, dtype=np.int64).reshape(-1, cols.shape[1])
    sorted_order = _sorted(order)
    n_seg = ptr.shape[0] - 1
    keys = np.empty(n, np.int64)
    ids = np.empty(n, np.int64)
    rep = np.empty(n, np.int64)
    n_groups = np.zeros(n_seg, np.int64)
    runs = balanced_runs(ptr, n_tasks_for(n, n_seg))
    if _spaces_fit(radix):
        run_tasks(_group_sorted if sorted_order else _group_first, len(runs) - 1, runs, cols,
                  radix, ptr, keys, ids, rep, n_groups)
    else:
        run_tasks(_group_wide, len(runs) - 1, runs, cols, radix, ptr, keys, ids, rep,
                  n_groups, sorted_order)
    group_ptr = np.zeros(n_seg + 1, np.int64)
    np.cumsum(n_groups, out=group_ptr[1:])
    n_out = int(group_ptr[-1])
    totals = count is not None
    if not totals and n_seg == 1:
        return ids, rep[:n_out], group_ptr
    count = np.ascontiguousarray(count if totals else np.zeros(0), dtype=np.int64)
    size, distinct, segment = (np.empty(n_out if totals else 0, np.int64) for _ in range(3))
    rep_out = np.empty(n_out, np.int64)
    # (the runs balanced for the grouping serve here too)
    run_tasks(_group_global, len(runs) - 1, runs, ptr, group_ptr, count, ids, rep, rep_out,
              size, distinct, segment)
    if totals:
        return ids, rep_out, group_ptr, size, distinct, segment
    return ids, rep_out, group_ptr


# --------------------------------------------------------------------------------------
# CUDA form: the segment of a row, for kernels with a thread per row
# --------------------------------------------------------------------------------------
@cuda.jit(device=True)
def segment_of(ptr, i):
    """CUDA device function: the segment ``s`` with ``ptr[s] <= i < ptr[s+1]`` (binary search;
    empty segments are passed over)."""
    lo = 0
    hi = ptr.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ptr[mid] <= i:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------
# Array (NumPy / CuPy) form
# --------------------------------------------------------------------------------------
def segment_ids(xp, ptr, total):
    """``ptr`` (S+1 offsets, device) -> segment index of each of ``total`` rows.

    Counts the segment starts at each row and sums them up (CuPy's ``repeat`` takes no device
    array of repeat counts)."""
    inner = ptr[1:-1].astype(xp.int64)
    if inner.shape[0] == 0:  # one segment; CuPy < 14.2's bincount fails on an empty array
        return xp.zeros(total, dtype=xp.int64)
    starts = count_keys(xp, inner, total + 1)[:total]
    return xp.cumsum(starts).astype(xp.int64)


def marginal_counts_njit(codes, count, sizes) -> list[np.ndarray]:
    """Per column ``j`` of ``codes`` (E, q): the summed ``count`` of each code ``0..sizes[j]-1``,
    int64 -- one pass over the entries for all columns, the entries split among the
    threads."""
    sizes = [int(s) for s in sizes]
    offsets = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = codes.shape[0]
    n_tasks = n_tasks_for(n, n, per_thread=1)
    bounds = np.array([0, n], np.int64) if n_tasks == 1 else \
        np.linspace(0, n, n_tasks + 1).astype(np.int64)
    out = np.zeros((n_tasks, int(offsets[-1])), np.int64)
    run_tasks(_marginals, n_tasks, bounds, np.ascontiguousarray(codes),
              np.ascontiguousarray(count, dtype=np.int64), offsets, out)
    total = out[0] if n_tasks == 1 else out.sum(axis=0)
    return [total[offsets[j]:offsets[j + 1]] for j in range(len(sizes))]


@njit(cache=True, nogil=True)
def _marginals(t, bounds, codes, count, offsets, out):
    """Task ``t``: entries ``bounds[t]:bounds[t+1]`` counted into ``out[t]``."""
    for e in range(bounds[t], bounds[t + 1]):
        c = count[e]
        for j in range(codes.shape[1]):
            out[t, offsets[j] + codes[e, j]] += c


ahead_of_time(_marginals, [f"none(int64, int64[::1], {t}[:, ::1], int64[::1], int64[::1], "
                           "int64[:, ::1])" for t in CODE_TYPES])


@njit(cache=True)
def present_codes(counts, offsets, j, out):
    """The codes of column ``j`` with a nonzero count (``counts[offsets[j]:offsets[j+1]]``)
    into ``out``, ascending; returns how many."""
    m = 0
    for c in range(offsets[j + 1] - offsets[j]):
        if counts[offsets[j] + c] > 0:
            out[m] = c
            m += 1
    return m


@njit(cache=True)
def distinct_at_levels(counts, offsets, maps, map_off, heights, level_sizes):
    """(q, H + 1): per column ``j`` and level ``L <= heights[j]`` how many distinct codes the
    leaf codes with a nonzero count (``counts[offsets[j]:offsets[j+1]]``) have at level ``L``
    (``maps[map_off[j, 0, L] + leaf]``, radix ``level_sizes[j, L]``); 0 past the height."""
    q = heights.shape[0]
    out = np.zeros(level_sizes.shape, np.int64)
    present = np.empty(max(np.diff(offsets).max(), 1), np.int64)
    seen = np.zeros(max(level_sizes.max(), 1), np.bool_)
    for j in range(q):
        m = present_codes(counts, offsets, j, present)
        for level in range(heights[j] + 1):
            off = map_off[j, 0, level]
            d = 0
            for i in range(m):
                c = maps[off + present[i]]
                if not seen[c]:
                    seen[c] = True
                    d += 1
            for i in range(m):  # cleared for the next level
                seen[maps[off + present[i]]] = False
            out[j, level] = d
    return out


ahead_of_time(distinct_at_levels, [f"int64[:, ::1](int64[::1], int64[::1], {t}[::1], "
                                   "int64[:, :, ::1], int64[::1], int64[:, ::1])"
                                   for t in CODE_TYPES])


def count_keys(xp, key, space: int, weights=None):
    """Dense counting: rows (int64), or their summed ``weights`` (float64), per key value
    ``0..space-1`` (every key below ``space``).  NumPy's ``bincount``; on a GPU one atomic
    scatter-add (``add.at``, the order of additions CuPy's ``bincount`` has too) and no
    synchronization, where CuPy's ``bincount`` brings the keys' maximum and sign check to the
    host (two a call)."""
    if xp is np:
        return np.bincount(key, weights=weights, minlength=space)
    if weights is None:  # add.at takes no int64 before CuPy 14.1
        out = xp.zeros(space, dtype=xp.uint64)
        xp.add.at(out, key, xp.ones(key.shape[0], dtype=xp.uint64))
        return out.astype(xp.int64)
    out = xp.zeros(space, dtype=xp.float64)
    xp.add.at(out, key, weights.astype(xp.float64, copy=False))
    return out


def rank_present(xp, present, key, dtype=None):
    """Dense ids, in key order, of the values ``present`` marks (a bool array over the key
    space): ``(ids of key, number of groups)``; ids in ``dtype`` (default int64)."""
    remap = xp.cumsum(present, dtype=xp.int64 if dtype is None else dtype)
    g = int(remap[-1])
    remap -= 1
    return remap[key], g


def _pack(xp, cols, radix):
    key = cols[0].astype(xp.int64)
    for c, r in zip(cols[1:], radix[1:]):
        key *= r
        key += c.astype(xp.int64)
    return key


def group_xp(xp, cols, radix, ptr=None, order="first"):
    """Group the rows of ``cols`` (columns of codes below ``radix``) within the segments
    ``ptr`` (device, S+1 offsets; ``None``: one segment): ``(ids, rep, group_ptr)``.

    ``ids`` (n,) int64 is each row's group, numbered segment by segment, in order of first
    appearance (``order="first"``) or of the keys (``"sorted"``); ``rep`` (G,) int64 a row of
    each group (its first row, except on the dense path of ``"sorted"``, where any row);
    ``group_ptr`` (S+1,) int64 the groups' offsets per segment.  ``cols``: a sequence of 1-D
    device arrays or a 2-D (n, k) one; ``radix``: (k,) or per segment (S, k), host.
    """
    sorted_order = _sorted(order)
    cols = _columns(cols)
    n = int(cols[0].shape[0])
    radix = [int(r) for r in np.asarray(radix, dtype=np.int64).reshape(-1, len(cols)).max(axis=0)]
    n_seg = 1 if ptr is None else int(ptr.shape[0]) - 1
    if n == 0:
        empty = xp.zeros(0, dtype=xp.int64)
        return empty, empty, xp.zeros(n_seg + 1, dtype=xp.int64)
    if ptr is not None:
        seg = segment_ids(xp, ptr, n)
        cols, radix = [seg] + cols, [n_seg] + radix
    space = key_space(radix)
    if sorted_order and space is not None and space <= DENSE_RATIO * max(n, XP_DENSE_FLOOR):
        key = _pack(xp, cols, radix)
        ids, g = rank_present(xp, count_keys(xp, key, space) > 0, key)
        rep = xp.empty(g, dtype=xp.int64)
        rep[ids] = xp.arange(n, dtype=xp.int64)
    else:
        if space is not None:
            key = _pack(xp, cols, radix)
            perm = xp.argsort(key, kind="stable")
            s = key[perm]
            step = s[1:] != s[:-1]
        else:
            perm = xp.lexsort(xp.stack([c.astype(xp.int64) for c in cols[::-1]]))
            step = xp.zeros(n - 1, dtype=xp.bool_)
            for c in cols:
                s = c[perm]
                step |= s[1:] != s[:-1]
        boundary = xp.concatenate([xp.ones(1, dtype=xp.bool_), step])
        rep = perm[xp.flatnonzero(boundary)]  # the first row of each group (stable sort)
        ids = xp.empty(n, dtype=xp.int64)
        ids[perm] = xp.cumsum(boundary.astype(xp.int64)) - 1
        if not sorted_order:
            by_first = xp.argsort(rep)
            rank = xp.empty(rep.shape[0], dtype=xp.int64)
            rank[by_first] = xp.arange(rep.shape[0], dtype=xp.int64)
            ids, rep = rank[ids], rep[by_first]
    if ptr is None:
        group_ptr = xp.asarray(np.array([0, rep.shape[0]], dtype=np.int64))
    else:
        group_ptr = xp.zeros(n_seg + 1, dtype=xp.int64)
        group_ptr[1:] = xp.cumsum(count_keys(xp, cols[0][rep], n_seg))
    return ids, rep, group_ptr


# --------------------------------------------------------------------------------------
# membership
# --------------------------------------------------------------------------------------
#: a :class:`KeySet` whose key space is at most this many keys is a table over the space
DENSE_SET_KEYS = 1 << 25


class KeySet:
    """Distinct rows of codes (column ``j`` below ``radix[j]``; e.g. the classes a release
    suppresses) prepared once for testing many rows against them (bucket after bucket):
    packed into mixed-radix keys, held as a bool table over the key space when it is at most
    :data:`DENSE_SET_KEYS`, else in a hash table (open addressing, on the CPU: one probe or
    two per tested row) or sorted (a binary search per tested row, in the array form); each
    test is then one pass over the tested rows, fused in Numba on the CPU.  Where the key
    space passes int64, each test groups the set's rows with the tested ones instead."""

    def __init__(self, xp, rows, radix):
        self.xp = xp
        self.radix = np.asarray(radix, dtype=np.int64).reshape(-1)
        space = key_space(self.radix)
        self.rows = rows if space is None else None
        self.dense = space is not None and space <= DENSE_SET_KEYS
        if space is None:
            return
        keys = _pack(xp, _columns(rows), self.radix) if rows.shape[0] else \
            xp.zeros(0, dtype=xp.int64)
        if self.dense:
            self.table = xp.zeros(space, dtype=xp.bool_)
            self.table[keys] = True
        elif xp is np:
            self.table = np.full(max(16, 1 << (2 * len(keys)).bit_length()), -1, np.int64)
            _hash_insert(keys, self.table)
        else:
            self.table = xp.sort(keys)

    def __getstate__(self) -> dict:  # a host set travels (to Dask workers); NumPy by name
        if self.xp is not np:
            raise TypeError("a KeySet of device arrays cannot leave its process")
        return {**self.__dict__, "xp": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, xp=np)

    def contains(self, rows):
        """Bool per row of ``rows`` (n, k), an array of the set's namespace: is it in the
        set?"""
        xp, n = self.xp, int(rows.shape[0])
        if self.rows is not None:  # keys past int64: group both tables' rows together
            both = xp.concatenate([self.rows, rows.astype(self.rows.dtype)])
            ids, _, _ = group(xp, both, self.radix)
            return ids[self.rows.shape[0]:] < self.rows.shape[0]  # the set's rows come first
        if xp is np:
            out = np.empty(n, dtype=np.bool_)
            (_in_table if self.dense else _in_hashed)(np.ascontiguousarray(rows), self.radix,
                                                       self.table, out)
            return out
        if n == 0 or (not self.dense and self.table.shape[0] == 0):
            return xp.zeros(n, dtype=xp.bool_)
        keys = _pack(xp, _columns(rows), self.radix)
        if self.dense:
            return self.table[keys]
        at = xp.minimum(xp.searchsorted(self.table, keys), self.table.shape[0] - 1)
        return self.table[at] == keys


@njit(inline='always')
def _row_key(rows, i, radix):
    """Row ``i``'s mixed-radix key (first column most significant)."""
    key = np.int64(0)
    for j in range(rows.shape[1]):
        key = key * radix[j] + rows[i, j]
    return key


@njit(cache=True, nogil=True)
def _in_table(rows, radix, table, out):
    """``out[i]``: is row ``i``'s mixed-radix key set in the bool ``table``?"""
    for i in range(rows.shape[0]):
        out[i] = table[_row_key(rows, i, radix)]


@njit(cache=True, nogil=True)
def _hash_insert(keys, table):
    """Put distinct ``keys`` in ``table`` (``-1`` empty; linear probing)."""
    mask = np.uint64(table.shape[0] - 1)
    for i in range(keys.shape[0]):
        slot = _slot(keys[i], mask)
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = keys[i]


@njit(cache=True, nogil=True)
def _in_hashed(rows, radix, table, out):
    """``out[i]``: is row ``i``'s mixed-radix key in the open-addressed ``table``?"""
    mask = np.uint64(table.shape[0] - 1)
    for i in range(rows.shape[0]):
        key = _row_key(rows, i, radix)
        slot = _slot(key, mask)
        while table[slot] >= 0 and table[slot] != key:
            slot = (slot + np.uint64(1)) & mask
        out[i] = table[slot] == key


ahead_of_time(_in_table, [f"none({t}[:, ::1], int64[::1], boolean[::1], boolean[::1])"
                          for t in CODE_TYPES])
ahead_of_time(_in_hashed, [f"none({t}[:, ::1], int64[::1], int64[::1], boolean[::1])"
                           for t in CODE_TYPES])
ahead_of_time(_hash_insert, ["none(int64[::1], int64[::1])"])


# --------------------------------------------------------------------------------------
# dispatch
# --------------------------------------------------------------------------------------
def group(xp, cols, radix=None, *, ptr=None, order="first"):
    """:func:`group_xp`'s contract on the form for ``xp``: :func:`group_njit` on NumPy
    arrays, :func:`group_xp` otherwise (CuPy, the strict stand-in).  ``radix=None``: one
    more than each column's largest code (a device-to-host transfer)."""
    if radix is None:
        radix = _radix_of(xp, _columns(cols))
    if xp is np:
        if not isinstance(cols, np.ndarray):
            cols = np.stack([np.asarray(c) for c in cols], axis=1)
        return group_njit(cols, radix, ptr, order)
    return group_xp(xp, cols, radix, ptr, order)


def _columns(cols):
    if hasattr(cols, "ndim") and cols.ndim == 2:
        return [cols[:, j] for j in range(cols.shape[1])]
    return list(cols)


def _radix_of(xp, cols):
    if int(cols[0].shape[0]) == 0:
        return [1] * len(cols)
    top = xp.stack([c.max().astype(xp.int64) for c in cols])
    return [int(v) + 1 for v in (top if xp is np else top.get()).tolist()]


def _sorted(order) -> bool:
    if order not in ("first", "sorted"):
        raise ValueError(f"order must be 'first' or 'sorted', got {order!r}")
    return order == "sorted"
