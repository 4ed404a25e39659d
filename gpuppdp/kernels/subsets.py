"""Distinct combinations and sum of squared class sizes of many QID subsets (risk analysis).

:func:`gpuppdp.analysis.risk.attribute_risks_encoded` needs, for every subset ``S`` of the
QIDs, the number of distinct value combinations of ``S`` and the sum of the squared class sizes
(for separation).  A subset is grouped from its parent ``P = S - {h}`` (``h`` its highest bit):
the key of an entry is ``id_P * radix_h + code_h`` and the entry's dense id under that key is
its id for ``S``'s children.  Two forms give the same numbers: :func:`all_subsets_njit`
(Numba CPU) and :func:`all_subsets_xp` (array passes, the GPU's form); both group with
:mod:`.groupby`.  The Numba form:

* :func:`suffix_sets_njit` -- one backward sweep over the rows builds the frequency sets of
  the column suffixes ``b..q-1``, each sorted lexicographically (which keeps the keys of a
  subset clustered: fewer cache misses below);
* :func:`subtrees_njit` -- the subsets with lowest bit ``b`` run on suffix set ``b``, split
  into subtrees by their second-lowest bit and visited depth-first (the parent's ids are the
  last ones computed one level up, so a thread needs one id row per depth); the subtrees are
  dealt by estimated work into a few chunks per thread, which the threads take as tasks as
  they come free (:func:`.groupby.run_tasks`: a thread slowed by other work takes fewer);
* per subset one pass over the set (:func:`_one_subset_dense`: counting over the whole key
  space when it is at most a few times the set -- no branch per entry; else
  :func:`_one_subset`: a directly addressed slot table or an open-addressing hash table,
  cleared slot by slot after use).
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit

from .aot import ahead_of_time
from .groupby import count_keys, group_xp, number_keys_sorted, rank_present, run_tasks


#: chunks of subtrees per thread (tasks taken as the threads come free)
CHUNKS_PER_THREAD = 4


@njit(cache=True, inline="always")
def _hash(k, mask):
    h = np.uint64(k) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h >> np.uint64(29)) & np.uint64(mask))


@njit(cache=True)
def _one_subset_dense(codes_col, radix, weights, pid, use_parent, space, out_ids, store, cnt):
    """:func:`_one_subset` by counting over the whole key space ``cnt[:space]`` (all zero,
    left zero): no branch per entry, a linear scan of the space instead."""
    f = codes_col.shape[0]
    for i in range(f):
        k = np.int64(codes_col[i])
        if use_parent:
            k += np.int64(pid[i]) * radix
        cnt[k] += weights[i]
        if store:
            out_ids[i] = k
    g = 0
    ss = np.int64(0)
    if store:
        for k in range(space):
            a = np.int64(cnt[k])
            ss += a * a
            cnt[k] = g
            g += a != 0
        for i in range(f):
            out_ids[i] = cnt[out_ids[i]]
        cnt[:space] = 0
    else:
        for k in range(space):
            a = np.int64(cnt[k])
            ss += a * a
            g += a != 0
            cnt[k] = 0
    return g, ss


@njit(cache=True, inline="always")
def _sum_squares_and_clear(acc, used, g, table):
    """Sum of the squared sizes of the ``g`` groups; frees their ``table`` entries (slot or
    hash position ``used[j]``) for the next subset."""
    ss = np.int64(0)
    for j in range(g):
        ss += acc[j] * acc[j]
        table[used[j]] = -1
    return ss


@njit(cache=True)
def _one_subset(codes_col, radix, weights, pid, use_parent, space, out_ids, store, slot, hkeys,
                hvals, acc, used):
    """Group the entries by ``pid * radix + code`` (keys below ``space``); returns
    ``(groups, sum of squared weighted sizes)``."""
    f = codes_col.shape[0]
    g = 0
    if space <= slot.shape[0]:
        for i in range(f):
            k = np.int64(codes_col[i])
            if use_parent:
                k += np.int64(pid[i]) * radix
            s = slot[k]
            if s < 0:
                s = g
                slot[k] = g
                used[g] = k
                acc[g] = 0
                g += 1
            acc[s] += weights[i]
            if store:
                out_ids[i] = s
        return g, _sum_squares_and_clear(acc, used, g, slot)
    mask = hkeys.shape[0] - 1
    for i in range(f):
        k = np.int64(codes_col[i])
        if use_parent:
            k += np.int64(pid[i]) * radix
        h = _hash(k, mask)
        while True:
            hk = hkeys[h]
            if hk == k:
                s = hvals[h]
                break
            if hk < 0:
                hkeys[h] = k
                s = g
                hvals[h] = g
                used[g] = h
                acc[g] = 0
                g += 1
                break
            h = (h + 1) & mask
        acc[s] += weights[i]
        if store:
            out_ids[i] = s
    return g, _sum_squares_and_clear(acc, used, g, hkeys)


@njit(cache=True)
def suffix_sets_njit(codes, radix, max_space, row_weights):
    """Frequency sets of the column suffixes ``codes[b:]`` (b = 0..q-1) of a table, each in
    lexicographic order of its columns (``codes[b]`` most significant).

    ``codes`` (q, n) int32, ``radix`` (q,) int64, ``row_weights`` (n,) int64: the records
    each row stands for (ones for a plain table).  One backward sweep over the rows: the rank
    of a row in suffix ``b`` is the rank of ``codes[b] * g + rank in suffix b + 1`` (``g``
    entries there), by :func:`.groupby.number_keys` (counting over that key space when it has
    at most ``max_space`` values).  Returns ``(ptr, rep, count)``: the entries of suffix ``b``
    are ``ptr[b]:ptr[b+1]``, in order, each with one member row ``rep`` and its number of
    records ``count``."""
    q, n = codes.shape
    ids = np.zeros(n, dtype=np.int64)
    key = np.empty(n, dtype=np.int64)
    counts_b = np.empty(n, dtype=np.int64)
    reps = []
    counts = []
    g = 1
    for b in range(q - 1, -1, -1):
        space = np.int64(radix[b]) * g
        for i in range(n):
            key[i] = np.int64(codes[b, i]) * g + ids[i]
        new_g = number_keys_sorted(key, space, ids, max_space)
        counts_b[:new_g] = 0
        for i in range(n):
            counts_b[ids[i]] += row_weights[i]
        rep = np.empty(new_g, dtype=np.int64)
        for i in range(n):
            rep[ids[i]] = i
        reps.append(rep)
        counts.append(counts_b[:new_g].copy())
        g = new_g
    total = 0
    for r in reps:
        total += r.shape[0]
    ptr = np.zeros(q + 1, dtype=np.int64)
    rep_all = np.empty(total, dtype=np.int64)
    count_all = np.empty(total, dtype=np.int64)
    pos = 0
    for b in range(q):
        r = reps[q - 1 - b]
        c = counts[q - 1 - b]
        rep_all[pos:pos + r.shape[0]] = r
        count_all[pos:pos + r.shape[0]] = c
        pos += r.shape[0]
        ptr[b + 1] = pos
    return ptr, rep_all, count_all


ahead_of_time(suffix_sets_njit, ["UniTuple(int64[::1], 3)(int32[:, ::1], int64[::1], int64, "
                                 "int64[::1])"])


@njit(cache=True)
def gather_sets_njit(codes, ptr, rep):
    """The codes of every frequency set's entries side by side: column ``j`` of set ``b``
    (``j >= b``) at ``out[j, ptr[b]:ptr[b+1]]``."""
    q = codes.shape[0]
    out = np.zeros((q, ptr[q]), dtype=codes.dtype)
    for b in range(q):
        for j in range(b, q):
            for e in range(ptr[b], ptr[b + 1]):
                out[j, e] = codes[j, rep[e]]
    return out


ahead_of_time(gather_sets_njit, ["int32[:, ::1](int32[:, ::1], int64[::1], int64[::1])"])


@njit(cache=True)
def _grow_slots(slot, space):
    if slot.shape[0] >= space:
        return slot
    return np.full(space, -1, dtype=np.int32)


@njit(cache=True, nogil=True)
def subtrees_njit(c, codes, radix, ptr, weights, max_size, task_b, task_h, chunk_ptr,
                  chunk_tasks, count_ratio, dense_limit, fmax, groups, sumsq):
    """Groups and sums of squared sizes of the subsets of the subtrees of chunk ``c`` (a
    task of :func:`.groupby.run_tasks`).

    Set ``b`` (entries ``ptr[b]:ptr[b+1]`` of ``codes`` (q, E) and ``weights`` (E,)) holds
    the distinct rows of the columns ``b..q-1``; ``fmax`` is its largest size.  Task ``t``
    with ``task_h[t] == task_b[t]`` measures the subset ``{b}``; otherwise every subset of at
    most ``max_size`` columns that has lowest bit ``b`` and second-lowest bit ``h``, in
    depth-first pre-order, each grouped from its parent without the highest bit (whose ids
    are the last ones computed one level up).  The chunk's tasks
    ``chunk_tasks[chunk_ptr[c]:chunk_ptr[c+1]]`` run in turn, with scratch of their own.
    Writes ``groups[mask]`` and ``sumsq[mask]``."""
    _run_chunk(codes, radix, ptr, weights, max_size, task_b, task_h,
               chunk_tasks[chunk_ptr[c]:chunk_ptr[c + 1]], count_ratio, dense_limit, fmax,
               groups, sumsq)


# the risk report's distinction and separation of every QID subset (a first report after an
# install compiled them for about 15 s); weights of int32 (past 2^31 records, int64: compiled
# on first use)
ahead_of_time(subtrees_njit, [
    "none(int64, int32[:, ::1], int64[::1], int64[::1], int32[::1], int64, int64[::1], "
    "int64[::1], int64[::1], int64[::1], int64, int64, int64, int64[::1], int64[::1])"])


@njit(cache=True)
def _run_chunk(codes, radix, ptr, weights, max_size, task_b, task_h, tasks, count_ratio,
               dense_limit, fmax, groups, sumsq):
    """The tasks of one chunk, in turn, with scratch of their own (reallocated as it
    grows)."""
    q = codes.shape[0]
    hcap = 16
    while hcap < 2 * fmax:
        hcap *= 2
    ids = np.empty((q + 1, fmax), dtype=np.int32)
    gs = np.zeros(q + 1, dtype=np.int64)
    hbs = np.zeros(q + 1, dtype=np.int64)
    acc = np.empty(fmax, dtype=np.int64)
    used = np.empty(fmax, dtype=np.int64)
    cnt = np.zeros(count_ratio * fmax + 1024, dtype=weights.dtype)
    slot = np.full(0, -1, dtype=np.int32)
    hkeys = np.full(0, -1, dtype=np.int64)
    hvals = np.zeros(0, dtype=np.int32)
    for t in tasks:
        b = task_b[t]
        h = task_h[t]
        lo = ptr[b]
        hi = ptr[b + 1]
        f = hi - lo
        w = weights[lo:hi]
        count_cap = min(cnt.shape[0], count_ratio * f + 1024)
        if h == b:  # {b} itself: its codes are the keys
            space = np.int64(radix[b])
            if space <= cnt.shape[0]:
                g, ss = _one_subset_dense(codes[b, lo:hi], space, w, ids[0, :f], False,
                                          space, ids[0, :f], False, cnt)
            else:
                slot = _grow_slots(slot, space)
                g, ss = _one_subset(codes[b, lo:hi], space, w, ids[0, :f], False, space,
                                    ids[0, :f], False, slot, hkeys, hvals, acc, used)
            groups[1 << b] = g
            sumsq[1 << b] = ss
            continue
        ids[1, :f] = codes[b, lo:hi]
        gs[1] = radix[b]
        d = 2
        hb = h
        s = (1 << b) | (1 << h)
        while True:
            space = gs[d - 1] * np.int64(radix[hb])
            store = hb < q - 1 and d < max_size
            if space <= count_cap:
                g, ss = _one_subset_dense(codes[hb, lo:hi], np.int64(radix[hb]), w,
                                          ids[d - 1, :f], True, space, ids[d, :f], store,
                                          cnt)
            else:
                if space <= dense_limit:
                    slot = _grow_slots(slot, space)
                    table = slot
                else:
                    table = slot[:0]
                    if hkeys.shape[0] < hcap:
                        hkeys = np.full(hcap, -1, dtype=np.int64)
                        hvals = np.zeros(hcap, dtype=np.int32)
                g, ss = _one_subset(codes[hb, lo:hi], np.int64(radix[hb]), w,
                                    ids[d - 1, :f], True, space, ids[d, :f], store,
                                    table, hkeys, hvals, acc, used)
            groups[s] = g
            sumsq[s] = ss
            gs[d] = g
            hbs[d] = hb
            if store:  # first child: the next bit up
                hb += 1
                s |= 1 << hb
                d += 1
                continue
            # next sibling, or the parent's next sibling, ... up to the subtree's root
            while d > 2 and hb + 1 >= q:
                s ^= 1 << hb
                d -= 1
                hb = hbs[d]
            if d == 2:
                break
            s ^= (1 << hb) | (1 << (hb + 1))
            hb += 1


def all_subsets_njit(codes, radix, max_size, row_weights, threads=None, count_ratio=4,
                     dense_limit=1 << 22):
    """Groups and sums of squared class sizes of every subset of at most ``max_size``
    columns of a table: ``(groups, sumsq)`` indexed by mask (bit ``b`` = column ``b``;
    -1 where not measured).  ``row_weights`` (n,) int64: the records each row stands for
    (ones for a plain table; the counts of a frequency set).

    The subsets whose lowest bit is ``b`` are grouped on the frequency set of the columns
    ``b..q-1`` (:func:`suffix_sets_njit`; place the widest columns first, so they appear in
    the fewest sets), in subtrees by their second-lowest bit spread over ``threads`` threads
    (default: Numba's; a few chunks of about equal work per thread, taken as they come free),
    each subset from its parent without the highest bit (:func:`subtrees_njit`).  Key spaces
    up to ``count_ratio`` times the set are counted densely, up to ``dense_limit`` addressed
    through a slot table, wider ones hashed.
    """
    q, n = codes.shape
    if q > 30:
        raise ValueError(f"at most 30 columns, got {q}")
    ptr, rep, count = suffix_sets_njit(codes, radix, max(dense_limit, 4 * n), row_weights)
    sets = gather_sets_njit(codes, ptr, rep)
    weights = count.astype(np.int32 if row_weights.sum() < 2**31 else np.int64)  # sizes fit
    sizes = np.diff(ptr)
    tasks_b, tasks_h, work = [], [], []
    for b in range(q):
        tasks_b.append(b)
        tasks_h.append(b)
        work.append(int(sizes[b]))
        if max_size >= 2:
            for h in range(b + 1, q):
                tasks_b.append(b)
                tasks_h.append(h)
                work.append(int(sizes[b]) << (q - 1 - h))  # subtree size times the set
    threads = get_num_threads() if threads is None else int(threads)
    # one chunk for little work: threads cost more than they save there (and far more when
    # the machine is loaded); else a few per thread, so that a slowed thread takes fewer
    chunks = max(1, min(CHUNKS_PER_THREAD * threads if threads > 1 else 1, len(work),
                        sum(work) // 200_000))
    load = [0] * chunks
    members = [[] for _ in range(chunks)]
    for t in sorted(range(len(work)), key=lambda t: -work[t]):  # largest first, least loaded
        c = load.index(min(load))
        members[c].append(t)
        load[c] += work[t]
    chunk_ptr = np.cumsum([0] + [len(m) for m in members]).astype(np.int64)
    chunk_tasks = np.array([t for m in members for t in m], dtype=np.int64)
    groups = np.full(1 << q, -1, dtype=np.int64)
    sumsq = np.full(1 << q, -1, dtype=np.int64)
    run_tasks(subtrees_njit, chunks, sets, radix, ptr, weights, int(max_size),
              np.array(tasks_b, dtype=np.int64), np.array(tasks_h, dtype=np.int64), chunk_ptr,
              chunk_tasks, int(count_ratio), int(dense_limit), max(1, int(sizes.max(initial=1))),
              groups, sumsq)
    return groups, sumsq


# --------------------------------------------------------------------------------------
# Array (NumPy / CuPy) form
# --------------------------------------------------------------------------------------
def all_subsets_xp(xp, codes, radix, max_size, row_weights=None):
    """:func:`all_subsets_njit` in array passes (the GPU's form): ``(groups, sumsq)`` device
    int64 arrays indexed by mask.  ``codes``: q device columns, ``radix`` their (host)
    cardinalities, ``row_weights`` (device, optional) the records each row stands for.

    For ``b = 0..q-1`` the frequency set of the columns ``b..q-1`` is grouped from the
    previous one (:func:`.groupby.group_xp`, sorted order); each subset with lowest bit ``b``
    is then counted over its key space (parent id times the radix of its highest bit) on that
    set, its dense ids kept while it is a parent."""
    q = len(codes)
    cur = list(codes)
    masks, counted = [], []  # masks (host); per mask (groups, sum of squares) on the device
    weights = None if row_weights is None else row_weights.astype(xp.float64)
    for b in range(q):
        ids, rep, _ = group_xp(xp, cur[b:], radix[b:], order="sorted")
        f = int(rep.shape[0])
        weights = count_keys(xp, ids, f, weights).astype(xp.float64)
        idt = xp.int32 if f * max(radix) < 2**31 else xp.int64
        cur = [None] * b + [c[rep].astype(idt) for c in cur[b:]]
        sub_ids, sub_groups = {}, {}
        for t in range(1 << (q - 1 - b)):
            s = (1 << b) | (t << (b + 1))
            size = bin(s).count("1")
            if size > max_size:
                continue
            h = s.bit_length() - 1  # parent: s without its highest bit
            parent = s ^ (1 << h)
            if parent == 0:
                k, space = cur[h], radix[h]
            else:
                k, space = sub_ids[parent] * radix[h] + cur[h], sub_groups[parent] * radix[h]
            w = count_keys(xp, k, space, weights)
            present = w > 0
            if h < q - 1 and size < max_size:  # a parent of subsets further down
                if parent == 0:
                    sub_ids[s], sub_groups[s] = k, space  # codes are dense already
                else:
                    sub_ids[s], sub_groups[s] = rank_present(xp, present, k, idt)
            masks.append(s)
            counted.append((xp.count_nonzero(present), (w * w).sum()))
    groups = xp.full(1 << q, -1, dtype=xp.int64)
    sumsq = xp.full(1 << q, -1, dtype=xp.int64)
    if masks:
        at = xp.asarray(np.array(masks, dtype=np.int64))
        groups[at] = xp.stack([g for g, _ in counted]).astype(xp.int64)
        sumsq[at] = xp.stack([ss for _, ss in counted]).astype(xp.int64)
    return groups, sumsq
