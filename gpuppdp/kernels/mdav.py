"""Microaggregation kernels: MDAV within partitions, and the sums it is built on, with the
same arithmetic on the CPU (Numba) and on a GPU (Numba CUDA), so that both give the same
groups.

MDAV (Domingo-Ferrer and Mateo-Sanz 2002, "Practical data-oriented microaggregation for
statistical disclosure control", IEEE TKDE 14(1)) on the rows of one partition: while at
least ``3k`` rows remain, take the row ``r`` farthest from the remaining rows' centroid and the
row ``s`` farthest from ``r`` (outside ``r``'s group), and make a group of each with its
``k - 1`` nearest remaining rows; then one more group around the farthest row when ``2k`` or
more remain, and the rest as the last group.  Every choice is the smallest ``(distance, row)``
pair (the largest distance for "farthest", the smallest row on a tie), so the groups do not
depend on the order in which a form visits the rows.  The centroid is kept as exact integer
sums of the rows' values in fixed point (a power-of-two scale): CPU and GPU add them in any
order and agree.  Distances are plain float64 sums of squares in column order (no fused
multiply-add: Numba contracts none without ``fastmath``).  A group is named by the row it was
formed around (for the last group, its smallest row).

Deterministic sums (the standardization's moments): fixed chunks of rows, each summed in row
order; the chunks' sums are added on the host, in order, by both forms.
"""

from __future__ import annotations

import math
import operator

import numba
import numpy as np
from numba import cuda, njit
from numba.cuda import libdevice

from .aot import ahead_of_time
from .cudalaunch import launch
from .groupby import run_tasks

#: rows per chunk of the deterministic column sums
SUM_CHUNK = 4096
_SIMULATED = numba.config.ENABLE_CUDASIM  # type: ignore[attr-defined]  # set at run time
#: threads per block of the CUDA MDAV (one block per partition); fewer under Numba's
#: simulator, whose threads are Python threads (the groups do not depend on the number)
MDAV_THREADS = 32 if _SIMULATED else 128
#: the CUDA forms' multiply and add: correctly rounded, never fused (the simulator's libdevice
#: functions are stubs: Python's own operations there)
_mul = operator.mul if _SIMULATED else libdevice.dmul_rn
_add = operator.add if _SIMULATED else libdevice.dadd_rn
#: columns at most (the CUDA form keeps the centroid's sums in shared memory)
MDAV_MAX_COLUMNS = 32
#: group size at most on a GPU (a group's rows are kept in shared memory while it is formed)
MDAV_MAX_K = 256
_FAR = -1.0  # below every distance: a row that cannot be chosen as the farthest


# --------------------------------------------------------------------------------------
# deterministic column moments
# --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _chunk_moments_njit(x, center, power, out):
    """``out[c, j]``: the sum of ``(x[i, j] - center[j]) ** power`` over chunk ``c``'s rows,
    in row order (``power`` 1 or 2)."""
    n, d = x.shape
    for c in range(out.shape[0]):
        for j in range(d):
            s = 0.0
            for i in range(c * SUM_CHUNK, min(n, (c + 1) * SUM_CHUNK)):
                t = x[i, j] - center[j]
                s += t if power == 1 else t * t
            out[c, j] = s


ahead_of_time(_chunk_moments_njit, ["none(float64[:, ::1], float64[::1], int64, "
                                    "float64[:, ::1])"])


@cuda.jit(cache=True)
def _chunk_moments_cuda(x, center, power, out):
    """One thread per (chunk, column): :func:`_chunk_moments_njit`'s sums, the same order."""
    t = cuda.grid(1)
    n, d = x.shape
    if t >= out.shape[0] * d:
        return
    c, j = t // d, t % d
    s = 0.0
    for i in range(c * SUM_CHUNK, min(n, (c + 1) * SUM_CHUNK)):
        v = x[i, j] - center[j]
        s = _add(s, v if power == 1 else _mul(v, v))
    out[c, j] = s


def chunk_moments(kernels: str, xp, x, center, power: int) -> np.ndarray:
    """Host (chunks, d) sums of ``(x - center) ** power`` per chunk of :data:`SUM_CHUNK`
    rows; ``kernels``: ``"cpu"``, ``"cuda"`` or ``"cudasim"`` (host arrays, simulator)."""
    n, d = x.shape
    chunks = max(1, -(-n // SUM_CHUNK))
    if kernels == "cpu":
        out = np.empty((chunks, d))
        _chunk_moments_njit(np.ascontiguousarray(x, dtype=np.float64),
                            np.ascontiguousarray(center, dtype=np.float64), power, out)
        return out
    out = xp.empty((chunks, d), dtype=xp.float64)
    launch(_chunk_moments_cuda, -(-chunks * d // MDAV_THREADS), MDAV_THREADS, x,
           xp.asarray(center, dtype=xp.float64), power, out)
    return out if xp is np else out.get()


# --------------------------------------------------------------------------------------
# MDAV, CPU form: one task per partition
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _distances(zt, m, point, dist):
    """``dist[p]``: squared distance of column ``p`` of ``zt[:, :m]`` (a row, transposed) to
    ``point``, the columns added in order (the same sums as row by row, but vectorized)."""
    for p in range(m):
        dist[p] = 0.0
    for j in range(zt.shape[0]):
        c = point[j]
        row = zt[j]
        for p in range(m):
            t = row[p] - c
            dist[p] += t * t


@njit(cache=True)
def _farthest(dist, ids, m):
    """Position of the largest distance among ``dist[:m]``, the smallest row id on a tie."""
    best = -1
    best_d = _FAR
    for p in range(m):
        v = dist[p]
        if v > best_d or (v == best_d and best >= 0 and ids[p] < ids[best]):
            best, best_d = p, v
    return best


@njit(cache=True)
def _position_of(ids, m, row):
    for p in range(m):
        if ids[p] == row:
            return p
    return -1


@njit(cache=True)
def _nearest(dist, ids, m, seed, k, group):
    """``group[:k]``: position ``seed`` and the ``k - 1`` positions of ``dist[:m]`` with the
    smallest ``(distance, row id)``, ``seed`` left out; their distances set to -1 after."""
    n_best = 0
    best_d = np.empty(k - 1)
    best_p = np.empty(k - 1, np.int64)
    for p in range(m):
        if p == seed:
            continue
        v = dist[p]
        if n_best == k - 1:
            last = best_p[n_best - 1]
            if v > best_d[n_best - 1] or (v == best_d[n_best - 1] and ids[p] > ids[last]):
                continue
        at = n_best if n_best < k - 1 else k - 2  # insert, sorted, dropping the largest
        while at > 0 and (best_d[at - 1] > v or
                          (best_d[at - 1] == v and ids[best_p[at - 1]] > ids[p])):
            best_d[at] = best_d[at - 1]
            best_p[at] = best_p[at - 1]
            at -= 1
        best_d[at] = v
        best_p[at] = p
        n_best = min(n_best + 1, k - 1)
    group[0] = seed
    group[1:] = best_p
    for g in range(k):
        dist[group[g]] = _FAR


@njit(cache=True)
def _remove(zt, qzt, ids, m, group, sums, label, name):
    """Label the rows at positions ``group`` ``name`` and take them out of the first ``m``
    positions (the last ones fill their places) and of the centroid's sums; the new ``m``."""
    for p in np.sort(group)[::-1]:
        label[ids[p]] = name
        for j in range(zt.shape[0]):
            sums[j] -= qzt[j, p]
        m -= 1
        ids[p] = ids[m]
        for j in range(zt.shape[0]):
            zt[j, p] = zt[j, m]
            qzt[j, p] = qzt[j, m]
    return m


@njit(cache=True)
def _centroid(sums, m, scale, out):
    for j in range(sums.shape[0]):
        out[j] = (sums[j] / m) / scale


@njit(cache=True)
def _partition_start(t, part_ptr, z, qz):
    """Partition ``t`` (rows ``a:b``, ``part_ptr[t]:part_ptr[t+1]``) of ``z`` and ``qz``
    transposed (a column contiguous), its row ids, the exact column sums of ``qz`` (the
    fixed-point sums the centroids come from) and scratch for a distance per row and a
    point."""
    a, b = part_ptr[t], part_ptr[t + 1]
    zt = np.ascontiguousarray(z[a:b].T)
    qzt = np.ascontiguousarray(qz[a:b].T)
    sums = np.zeros(qz.shape[1], np.int64)
    for j in range(qz.shape[1]):
        for p in range(b - a):
            sums[j] += qzt[j, p]
    return zt, qzt, np.arange(a, b), sums, np.empty(b - a), np.empty(z.shape[1])


@njit(cache=True, nogil=True)
def _mdav_partition(t, part_ptr, z, qz, scale, k, label):
    """MDAV on the rows ``part_ptr[t]:part_ptr[t+1]`` of ``z`` (see the module): each row's
    group name in ``label``.  The alive rows are kept transposed and packed in front."""
    zt, qzt, ids, sums, dist, point = _partition_start(t, part_ptr, z, qz)
    m = ids.shape[0]
    group = np.empty(k, np.int64)
    while m >= 2 * k:
        _centroid(sums, m, scale, point)
        _distances(zt, m, point, dist)
        r = _farthest(dist, ids, m)
        point[:] = zt[:, r]
        _distances(zt, m, point, dist)
        _nearest(dist, ids, m, r, k, group)
        if m < 3 * k:  # the last group but one
            m = _remove(zt, qzt, ids, m, group, sums, label, ids[r])
            break
        s = _farthest(dist, ids, m)  # outside r's group: its distances are -1
        s_id = ids[s]
        point[:] = zt[:, s]
        m = _remove(zt, qzt, ids, m, group, sums, label, ids[r])
        s = _position_of(ids, m, s_id)  # where the removal left it
        _distances(zt, m, point, dist)
        _nearest(dist, ids, m, s, k, group)
        m = _remove(zt, qzt, ids, m, group, sums, label, s_id)
    if m > 0:
        rest = ids[:m].min()
        for p in range(m):
            label[ids[p]] = rest


ahead_of_time(_mdav_partition, ["none(int64, int64[::1], float64[:, ::1], int64[:, ::1], "
                                "float64, int64, int64[::1])"])


def mdav_njit(part_ptr, z, qz, scale: float, k: int, label) -> None:
    """CPU form: the partitions as tasks on the thread pool (:func:`.groupby.run_tasks`)."""
    run_tasks(_mdav_partition, len(part_ptr) - 1, part_ptr, z, qz, scale, k, label)


# --------------------------------------------------------------------------------------
# MDAV, CUDA form: one block per partition
# --------------------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def _better(d1, i1, d2, i2, largest):
    """Is ``(d1, i1)`` chosen over ``(d2, i2)`` (row -1: no candidate)?"""
    if i1 < 0:
        return False
    if i2 < 0:
        return True
    if largest:
        return d1 > d2 or (d1 == d2 and i1 < i2)
    return d1 < d2 or (d1 == d2 and i1 < i2)


@cuda.jit(device=True)
def _block_best(rd, ri, d, i, largest):
    """The block's best ``(distance, row)`` of the threads' candidates ``(d, i)``; ``rd, ri``:
    shared arrays of a slot per thread (a power of two)."""
    tid = cuda.threadIdx.x
    rd[tid] = d
    ri[tid] = i
    cuda.syncthreads()
    step = rd.shape[0] // 2
    while step > 0:
        if tid < step and _better(rd[tid + step], ri[tid + step], rd[tid], ri[tid], largest):
            rd[tid] = rd[tid + step]
            ri[tid] = ri[tid + step]
        cuda.syncthreads()
        step //= 2
    best = ri[0]
    cuda.syncthreads()
    return best


@cuda.jit(device=True)
def _cuda_farthest_from_centroid(z, a, b, state, sums, m, scale, centroid, rd, ri):
    tid = cuda.threadIdx.x
    if tid < z.shape[1]:
        centroid[tid] = (sums[tid] / m) / scale
    cuda.syncthreads()
    best_d, best_i = _FAR, -1
    for i in range(a + tid, b, MDAV_THREADS):
        if state[i] == 0:
            s = 0.0
            for j in range(z.shape[1]):
                t = z[i, j] - centroid[j]
                s = _add(s, _mul(t, t))
            if _better(s, i, best_d, best_i, True):
                best_d, best_i = s, i
    return _block_best(rd, ri, best_d, best_i, True)


@cuda.jit(device=True)
def _cuda_group(z, a, b, state, seed, k, dist, chosen, rd, ri):
    """``chosen[:k]``: ``seed`` and its ``k - 1`` nearest alive rows (state 0 -> 1);
    ``dist`` keeps every alive row's squared distance to ``seed``."""
    tid = cuda.threadIdx.x
    for i in range(a + tid, b, MDAV_THREADS):
        if state[i] == 0:
            s = 0.0
            for j in range(z.shape[1]):
                t = z[i, j] - z[seed, j]
                s = _add(s, _mul(t, t))
            dist[i] = s
    cuda.syncthreads()
    if tid == 0:
        chosen[0] = seed
        state[seed] = 1
    cuda.syncthreads()
    for g in range(1, k):
        best_d, best_i = 0.0, -1
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and _better(dist[i], i, best_d, best_i, False):
                best_d, best_i = dist[i], i
        c = _block_best(rd, ri, best_d, best_i, False)
        if tid == 0:
            chosen[g] = c
            state[c] = 1
        cuda.syncthreads()


@cuda.jit(device=True)
def _cuda_take(qz, state, chosen, k, sums, remaining, label, name):
    """Label the chosen rows ``name`` (state 1 -> 2), out of the centroid's sums."""
    if cuda.threadIdx.x == 0:
        for g in range(k):
            i = chosen[g]
            label[i] = name
            state[i] = 2
            for j in range(qz.shape[1]):
                sums[j] -= qz[i, j]
        remaining[0] -= k
    cuda.syncthreads()


@cuda.jit(cache=True)
def _mdav_blocks(part_ptr, z, qz, scale, k, label, state, dist, max_rows):
    """MDAV of partition ``blockIdx.x`` (rows ``part_ptr[t]:part_ptr[t+1]``), the choices of
    :func:`_mdav_partition`; ``state``: 0 alive, 1 in the group being formed, 2 grouped.
    Partitions of more than ``max_rows`` rows are left alone (to :mod:`.mdav_grid`)."""
    t, tid = cuda.blockIdx.x, cuda.threadIdx.x
    a, b = part_ptr[t], part_ptr[t + 1]
    if b - a > max_rows:
        return
    sums = cuda.shared.array(MDAV_MAX_COLUMNS, np.int64)
    centroid = cuda.shared.array(MDAV_MAX_COLUMNS, np.float64)
    chosen = cuda.shared.array(MDAV_MAX_K, np.int64)
    rd = cuda.shared.array(MDAV_THREADS, np.float64)
    ri = cuda.shared.array(MDAV_THREADS, np.int64)
    remaining = cuda.shared.array(1, np.int64)
    if tid < z.shape[1]:
        s = 0
        for i in range(a, b):
            s += qz[i, tid]
        sums[tid] = s
    if tid == 0:
        remaining[0] = b - a
    cuda.syncthreads()
    while remaining[0] >= 3 * k:
        r = _cuda_farthest_from_centroid(z, a, b, state, sums, remaining[0], scale, centroid,
                                         rd, ri)
        _cuda_group(z, a, b, state, r, k, dist, chosen, rd, ri)
        best_d, best_i = _FAR, -1  # farthest from r outside its group: dist holds d(., r)
        for i in range(a + tid, b, MDAV_THREADS):
            if state[i] == 0 and _better(dist[i], i, best_d, best_i, True):
                best_d, best_i = dist[i], i
        s = _block_best(rd, ri, best_d, best_i, True)
        _cuda_take(qz, state, chosen, k, sums, remaining, label, r)
        _cuda_group(z, a, b, state, s, k, dist, chosen, rd, ri)
        _cuda_take(qz, state, chosen, k, sums, remaining, label, s)
    if remaining[0] >= 2 * k:
        r = _cuda_farthest_from_centroid(z, a, b, state, sums, remaining[0], scale, centroid,
                                         rd, ri)
        _cuda_group(z, a, b, state, r, k, dist, chosen, rd, ri)
        _cuda_take(qz, state, chosen, k, sums, remaining, label, r)
    first = -1
    for i in range(a + tid, b, MDAV_THREADS):
        if state[i] == 0 and (first < 0 or i < first):
            first = i
    rest = _block_best(rd, ri, 0.0, first, False)
    for i in range(a + tid, b, MDAV_THREADS):
        if state[i] == 0:
            label[i] = rest


def mdav_cuda(xp, part_ptr, z, qz, scale: float, k: int, label,
              max_rows: int | None = None) -> None:
    """CUDA form on device arrays (host ones under the simulator): a block per partition, those
    of at most ``max_rows`` rows (default: all)."""
    n, d = z.shape
    if d > MDAV_MAX_COLUMNS or k > MDAV_MAX_K:
        raise ValueError(f"the GPU's MDAV takes at most {MDAV_MAX_COLUMNS} columns and "
                         f"k <= {MDAV_MAX_K}")
    state = xp.zeros(n, dtype=xp.int8)
    dist = xp.empty(n, dtype=xp.float64)
    launch(_mdav_blocks, len(part_ptr) - 1, MDAV_THREADS, xp.asarray(part_ptr), z, qz,
           float(scale), int(k), label, state, dist, n if max_rows is None else int(max_rows))


def fixed_point_scale(max_abs: float, rows: int) -> float:
    """A power of two by which values up to ``max_abs`` become integers whose sum over
    ``rows`` rows stays under 2^62 (the centroid's exact sums)."""
    room = 2.0 ** 62 / (max(max_abs, 1e-300) * max(rows, 1))
    return 2.0 ** min(52, math.floor(math.log2(room)))
