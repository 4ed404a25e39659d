"""V-MDAV microaggregation kernels: groups of variable size within partitions, the same groups
on the CPU (Numba) and on a GPU (Numba CUDA, a block per partition).

V-MDAV (Solanas and Martinez-Balleste 2006, "V-MDAV: a multivariate microaggregation with
variable group size", COMPSTAT 2006, 917-925) on the rows of one partition:

1. the centroid ``c`` of the partition's rows, once;
2. while at least ``2k`` rows are unassigned: the unassigned row ``e`` farthest from ``c``
   and its ``k - 1`` nearest unassigned rows make a group; the group is then *extended*:
   with ``e_min`` the unassigned row nearest to the group, ``d_in`` its distance to the
   group (to the nearest member) and ``d_out`` its distance to the nearest other unassigned
   row (infinite when none is left), ``e_min`` joins while ``d_in < gamma * d_out`` and the
   group has fewer than ``2k - 1`` rows;
3. ``k`` to ``2k - 1`` rows left make the last group; fewer than ``k`` left (the extensions
   can leave so few) join, each, the group whose centroid is nearest -- those groups may
   exceed ``2k - 1`` rows, as in the paper.

``gamma`` is the paper's gain factor (0.2 for scattered data in its experiments, larger
for clustered data).  Distances are Euclidean (the comparison ``sqrt(d_in) < gamma *
sqrt(d_out)`` on the squared sums, correctly rounded on both forms).  As in
:mod:`.mdav`, every choice is the smallest ``(distance, row)`` (the largest distance for
"farthest", the smallest row on a tie), centroids come from exact fixed-point sums, and
distances are float64 sums of squares in column order without fused multiply-add, so the
CPU and the GPU choose alike.  A group is named by the row it was formed around (the last
group by its smallest row).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, njit

from .aot import ahead_of_time
from .cudalaunch import launch
from .groupby import run_tasks
from .mdav import (_FAR, MDAV_MAX_COLUMNS, MDAV_MAX_K, MDAV_THREADS, _add, _better, _block_best,
                   _centroid, _cuda_group, _distances, _mul, _nearest, _partition_start,
                   _position_of, _remove)

_INF = math.inf
#: rows at most of a group being formed on a GPU (kept in shared memory): ``2k - 1``
VMDAV_MAX_GROUP = 2 * MDAV_MAX_K


# --------------------------------------------------------------------------------------
# CPU form: one task per partition
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _nearest_outside(dist, ids, m):
    """Position of the smallest ``(dist, row id)`` among ``dist[:m]`` >= 0 (-1: none)."""
    best = -1
    for p in range(m):
        v = dist[p]
        if v >= 0 and (best < 0 or v < dist[best] or (v == dist[best] and ids[p] < ids[best])):
            best = p
    return best


@njit(cache=True, nogil=True)
def _vmdav_partition(t, part_ptr, z, qz, scale, k, gamma, label):
    """V-MDAV on the rows ``part_ptr[t]:part_ptr[t+1]`` of ``z`` (see the module): each row's
    group name in ``label``.  The unassigned rows are kept transposed and packed in front;
    ``din[p]`` is row ``p``'s distance to the group being formed, -1 for its members."""
    zt, qzt, ids, sums, dist, point = _partition_start(t, part_ptr, z, qz)
    m = ids.shape[0]
    d = z.shape[1]
    din = np.empty(m)
    _centroid(sums, m, scale, point)
    _distances(zt, m, point, dist)
    farthest = ids[np.argsort(-dist, kind="mergesort")]  # ties: the smaller row first
    group = np.empty(2 * k - 1, np.int64)
    gsum = np.zeros((m // k + 1, d), np.int64)
    gsize = np.zeros(m // k + 1, np.int64)
    gname = np.zeros(m // k + 1, np.int64)
    n_groups = 0
    nxt = 0
    while m >= 2 * k:
        while label[farthest[nxt]] >= 0:
            nxt += 1
        e = _position_of(ids, m, farthest[nxt])
        point[:] = zt[:, e]
        _distances(zt, m, point, dist)
        _nearest(dist, ids, m, e, k, group[:k])
        din[:m] = dist[:m]
        for g in range(1, k):
            point[:] = zt[:, group[g]]
            _distances(zt, m, point, dist)
            for p in range(m):
                if din[p] >= 0 and dist[p] < din[p]:
                    din[p] = dist[p]
        size = k
        while size < 2 * k - 1:
            c = _nearest_outside(din, ids, m)
            if c < 0:
                break
            point[:] = zt[:, c]
            _distances(zt, m, point, dist)
            d_out = _INF
            for p in range(m):
                if din[p] >= 0 and p != c and dist[p] < d_out:
                    d_out = dist[p]
            if not math.sqrt(din[c]) < gamma * math.sqrt(d_out):
                break
            group[size] = c
            size += 1
            din[c] = _FAR
            for p in range(m):
                if din[p] >= 0 and dist[p] < din[p]:
                    din[p] = dist[p]
        for g in range(size):
            for j in range(d):
                gsum[n_groups, j] += qzt[j, group[g]]
        gsize[n_groups] = size
        gname[n_groups] = ids[e]
        n_groups += 1
        m = _remove(zt, qzt, ids, m, group[:size], sums, label, ids[e])
    if m >= k or n_groups == 0:
        rest = ids[:m].min() if m > 0 else 0
        for p in range(m):
            label[ids[p]] = rest
        return
    for p in range(m):  # fewer than k left: each to the group with the nearest centroid
        best, best_d = -1, _INF
        for g in range(n_groups):
            s = 0.0
            for j in range(d):
                u = zt[j, p] - (gsum[g, j] / gsize[g]) / scale
                s += u * u
            if best < 0 or s < best_d or (s == best_d and gname[g] < gname[best]):
                best, best_d = g, s
        label[ids[p]] = gname[best]


ahead_of_time(_vmdav_partition, ["none(int64, int64[::1], float64[:, ::1], int64[:, ::1], "
                                 "float64, int64, float64, int64[::1])"])


def vmdav_njit(part_ptr, z, qz, scale: float, k: int, gamma: float, label) -> None:
    """CPU form: the partitions as tasks on the thread pool (:func:`.groupby.run_tasks`)."""
    run_tasks(_vmdav_partition, len(part_ptr) - 1, part_ptr, z, qz, scale, k, gamma, label)


# --------------------------------------------------------------------------------------
# CUDA form: one block per partition
# --------------------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def _sq_distance(z, i, other):
    s = 0.0
    for j in range(z.shape[1]):
        u = z[i, j] - z[other, j]
        s = _add(s, _mul(u, u))
    return s


@cuda.jit(device=True)
def _cuda_extend(z, a, b, state, k, gamma, din, dtmp, chosen, rd, ri):
    """Extend the group ``chosen[:k]`` (state 1; ``din``: each unassigned row's distance to
    ``chosen[0]``) as :func:`_vmdav_partition` does: ``din`` becomes the distance to the
    group, and its nearest unassigned row joins while ``d_in < gamma * d_out`` and the group
    has fewer than ``2k - 1`` rows (``dtmp``: scratch).  Returns the group's size."""
    tid = cuda.threadIdx.x
    for g in range(1, k):
        c = chosen[g]
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0:
                s = _sq_distance(z, i, c)
                if s < din[i]:
                    din[i] = s
    size = k
    while size < 2 * k - 1:
        best_d, best_i = 0.0, -1
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and _better(din[i], i, best_d, best_i, False):
                best_d, best_i = din[i], i
        c = _block_best(rd, ri, best_d, best_i, False)
        if c < 0:
            break
        best_d, best_i = 0.0, -1
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and i != c:
                s = _sq_distance(z, i, c)
                dtmp[i] = s
                if _better(s, i, best_d, best_i, False):
                    best_d, best_i = s, i
        q = _block_best(rd, ri, best_d, best_i, False)
        d_out = dtmp[q] if q >= 0 else _INF
        if not math.sqrt(din[c]) < _mul(gamma, math.sqrt(d_out)):
            break
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and i != c and dtmp[i] < din[i]:
                din[i] = dtmp[i]
        if tid == 0:
            chosen[size] = c
            state[c] = 1
        size += 1
        cuda.syncthreads()
    return size


@cuda.jit(device=True)
def _first_unassigned(a, b, state, rd, ri):
    """The block's smallest unassigned row (-1: none)."""
    first = -1
    for i in range(a + cuda.threadIdx.x, b, MDAV_THREADS):
        if state[i] == 0 and (first < 0 or i < first):
            first = i
    return _block_best(rd, ri, 0.0, first, False)


@cuda.jit(device=True)
def _cuda_last_group(z, a, b, state, k, scale, label, gsum, gsize, remaining, rd, ri):
    """The ``remaining`` unassigned rows: one group named by its smallest row when ``k`` or
    more, else each to the group whose centroid is nearest (``gsum``/``gsize``)."""
    tid = cuda.threadIdx.x
    rest = _first_unassigned(a, b, state, rd, ri)
    if remaining >= k:
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0:
                label[i] = rest
        return
    while rest >= 0:  # fewer than k left: each to the group with the nearest centroid
        best_d, best_i = 0.0, -1
        for g in range(a + tid, b, MDAV_THREADS):
            if gsize[g] > 0:
                s = 0.0
                for j in range(z.shape[1]):
                    u = z[rest, j] - (gsum[g, j] / gsize[g]) / scale
                    s = _add(s, _mul(u, u))
                if _better(s, g, best_d, best_i, False):
                    best_d, best_i = s, g
        near = _block_best(rd, ri, best_d, best_i, False)
        if tid == 0:
            label[rest] = near
            state[rest] = 2
        cuda.syncthreads()
        rest = _first_unassigned(a, b, state, rd, ri)


@cuda.jit(cache=True)
def _vmdav_blocks(part_ptr, z, qz, scale, k, gamma, label, state, dcen, din, dtmp, gsum,
                  gsize):
    """V-MDAV of partition ``blockIdx.x``, the choices of :func:`_vmdav_partition`;
    ``state``: 0 unassigned, 1 in the group being formed, 2 grouped; ``gsum``/``gsize``:
    each group's fixed-point sums and size, at the row it is named by."""
    t, tid = cuda.blockIdx.x, cuda.threadIdx.x
    a, b = part_ptr[t], part_ptr[t + 1]
    d = z.shape[1]
    centroid = cuda.shared.array(MDAV_MAX_COLUMNS, np.float64)
    chosen = cuda.shared.array(VMDAV_MAX_GROUP, np.int64)
    rd = cuda.shared.array(MDAV_THREADS, np.float64)
    ri = cuda.shared.array(MDAV_THREADS, np.int64)
    remaining = cuda.shared.array(1, np.int64)
    if tid < d:
        total = 0
        for i in range(a, b):
            total += qz[i, tid]
        centroid[tid] = (total / (b - a)) / scale
    if tid == 0:
        remaining[0] = b - a
    cuda.syncthreads()
    for i in range(a + tid, b, MDAV_THREADS):
        s = 0.0
        for j in range(d):
            u = z[i, j] - centroid[j]
            s = _add(s, _mul(u, u))
        dcen[i] = s
    while remaining[0] >= 2 * k:
        best_d, best_i = _FAR, -1
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and _better(dcen[i], i, best_d, best_i, True):
                best_d, best_i = dcen[i], i
        e = _block_best(rd, ri, best_d, best_i, True)
        _cuda_group(z, a, b, state, e, k, din, chosen, rd, ri)  # din: distances to e
        size = _cuda_extend(z, a, b, state, k, gamma, din, dtmp, chosen, rd, ri)
        if tid == 0:
            for g in range(size):
                i = chosen[g]
                label[i] = e
                state[i] = 2
                for j in range(d):
                    gsum[e, j] += qz[i, j]
            gsize[e] = size
            remaining[0] -= size
        cuda.syncthreads()
    _cuda_last_group(z, a, b, state, k, scale, label, gsum, gsize, remaining[0], rd, ri)


def vmdav_cuda(xp, part_ptr, z, qz, scale: float, k: int, gamma: float, label) -> None:
    """CUDA form on device arrays (host ones under the simulator): a block per partition."""
    n, d = z.shape
    if d > MDAV_MAX_COLUMNS or k > MDAV_MAX_K:
        raise ValueError(f"the GPU's V-MDAV takes at most {MDAV_MAX_COLUMNS} columns and "
                         f"k <= {MDAV_MAX_K}")
    state = xp.zeros(n, dtype=xp.int8)
    dcen, din, dtmp = (xp.empty(n, dtype=xp.float64) for _ in range(3))
    gsum = xp.zeros((n, d), dtype=xp.int64)
    gsize = xp.zeros(n, dtype=xp.int64)
    launch(_vmdav_blocks, len(part_ptr) - 1, MDAV_THREADS, xp.asarray(part_ptr), z, qz,
           float(scale), int(k), float(gamma), label, state, dcen, din, dtmp, gsum, gsize)
