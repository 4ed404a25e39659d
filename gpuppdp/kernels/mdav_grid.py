"""Exact MDAV of one large partition on the whole GPU: every block of the grid works on every
step, and the groups are those of :func:`.mdav._mdav_partition` (the same choices, the same
arithmetic; Domingo-Ferrer and Mateo-Sanz 2002, IEEE TKDE 14(1)).

The block-per-partition form (:func:`.mdav.mdav_cuda`) runs a whole table on one block:
latency-bound (10^5 x 5 in 45 s on an H200).  Here MDAV is a fixed sequence of *passes* over
the remaining rows -- it depends on the rows ``m`` and ``k`` only (:func:`mdav_phases`) --
each pass a reduction by the whole grid:

* ``CENTROID``: the farthest row ``r`` from the centroid (an arg-max);
* ``FROM_R``: distances to ``r``: its ``k - 1`` nearest and its ``k`` farthest rows (``s``,
  the farthest outside ``r``'s group, is among them);
* ``FROM_S``: distances to ``s``: its ``k - 1`` nearest (``r``'s group already out);
* ``REST``: the smallest remaining row (the last group's name); ``LABEL``: name the rest.

Every pass writes per block its best candidates -- ``(distance, row)`` pairs, sorted, the
smallest ``(distance, row)`` or for "farthest" the largest distance and smallest row, as
:mod:`.mdav` -- and the next pass starts with *every* block merging all blocks' candidates
the same way (the same result in each block: no second barrier for a single merging block).
So each pass costs one grid-wide barrier, and candidates alternate between two buffers (a
block can be at most one pass ahead of another).  Each thread keeps its best ``L`` in a
sorted local list (``L <= k <=`` :data:`MDAV_GRID_MAX_K`); a block takes the best ``L`` of its
threads' lists by ``L`` block reductions of the lists' heads.

Each block owns a fixed slice of the rows, kept transposed (coalesced) and packed: a group's
rows are skipped by the pass after the merge that formed them, labelled by their owner, and
swapped out of their slice at its end, so a pass reads only the remaining rows and no block
ever reads another's slice.  The centroid's exact fixed-point sums (:mod:`.mdav`) are kept
by every block, each group's integers subtracted.  Distances: float64 sums of squares in
column order, never fused (:data:`.mdav._mul`, :data:`.mdav._add`).

On a GPU the passes run in one persistent cooperative kernel (all blocks resident, a
``this_grid().sync()`` between passes, the grid sized by
``max_cooperative_grid_blocks``).  Numba's simulator runs the blocks of a launch one after
another, so its grid barrier holds for one block only: there (and on a GPU whose cooperative
launch fails) a launch per pass runs the same pass function, :func:`_pass` -- the tests run
it on 2 to 4 blocks, and the cooperative kernel on one.  Why not a launch per pass on a GPU
too: 5-10 us of host time each, ``3m / 2k`` passes (3 x 10^5 for 10^6 rows: 2-3 s of
launches alone), and CUDA graphs are not at hand from Numba.  The slices' packing is the
"compact as rows go" idea, done by each block on its own slice at every pass.

Expected time, 10^6 x 5, k = 5, H100/H200 (an estimate: not run on a GPU).  The cooperative
kernel compiles (sm_90, numba 0.68) to 152 registers a thread, 128 threads a block: 3 blocks
per multiprocessor, ~400 blocks, ~20 rows a thread at first.  Per two groups (10^5 times):
three passes, each reading the remaining rows' 40 bytes (on average 20 MB; the 40 MB table
stays in the 50 MB (H100) or 60 MB (H200) L2) at ~5 TB/s: ~12 us; 24 block reductions of
the candidates' lists (9 block barriers each, ~0.4 us): ~10 us; three grid barriers: ~6 us.
About 3 s in all, under the 5 s goal; the block barriers and the grid barrier's latency are
the uncertain terms (warp shuffles would cut the first).
"""

from __future__ import annotations

import logging

import numpy as np
from numba import cuda

from .cudalaunch import launch
from .mdav import _SIMULATED, MDAV_MAX_COLUMNS, _add, _better, _block_best, _mul

#: threads per block of the grid form; 8 under Numba's simulator, whose every barrier polls
#: each thread (Python threads; the groups do not depend on the number)
MDAV_GRID_THREADS = 8 if _SIMULATED else 128
#: group size at most of the grid form (its threads' lists are local arrays of this size)
MDAV_GRID_MAX_K = 16
#: a partition of ``m`` rows among ``P`` takes the grid form on a GPU when
#: ``m >= MDAV_GRID_ROWS * P``.  The block form (:func:`.mdav.mdav_cuda`, ~2.2e-8 s x m^2 / k
#: from 10^5 x 5 in 45 s on an H200) runs ~10^3 partitions side by side, the grid form
#: (~7.5 us a group, :func:`mdav_grid`) one after another: the grid is faster for ``P``
#: partitions of ``m`` rows while ``P < m / 340``; this threshold leaves a margin for the
#: grid's fixed costs (estimates, to be tuned on a GPU)
MDAV_GRID_ROWS = 2_000
#: the passes (:func:`mdav_phases`)
CENTROID, FROM_R, FROM_S, REST, LABEL = 0, 1, 2, 3, 4
# a block's scalars: the partition's remaining rows, r, s, the block's remaining rows
_M, _R, _S, _ALIVE = 0, 1, 2, 3


def mdav_phases(m: int, k: int) -> np.ndarray:
    """The passes of MDAV on ``m`` rows (int8): ``CENTROID, FROM_R, FROM_S`` while ``3k`` rows
    or more remain (two groups each), ``CENTROID, FROM_R`` when ``2k`` to ``3k - 1`` remain
    (one group), then ``REST, LABEL``."""
    twice = (m - 3 * k) // (2 * k) + 1 if m >= 3 * k else 0
    once = m - 2 * k * twice >= 2 * k
    return np.concatenate([np.tile(np.array([CENTROID, FROM_R, FROM_S], np.int8), twice),
                           np.array([CENTROID, FROM_R] * once + [REST, LABEL], np.int8)])


@cuda.jit(device=True)
def _insert(ld, li, n, cap, d, i, largest):
    """Insert ``(d, i)`` into the sorted list ``ld, li[:n]`` of at most ``cap``; new length."""
    if n == cap and not _better(d, i, ld[n - 1], li[n - 1], largest):
        return n
    at = n if n < cap else cap - 1
    while at > 0 and _better(d, i, ld[at - 1], li[at - 1], largest):
        ld[at] = ld[at - 1]
        li[at] = li[at - 1]
        at -= 1
    ld[at] = d
    li[at] = i
    return n + 1 if n < cap else cap


@cuda.jit(device=True)
def _block_top(ld, li, n, cap, largest, rd, ri, out_d, out_i):
    """``out[:cap]``: the block's best ``cap`` of its threads' sorted lists ``ld, li[:n]``
    (row -1 past the last), one block reduction of the lists' heads each."""
    head = 0
    for g in range(cap):
        d, i = 0.0, -1
        if head < n:
            d, i = ld[head], li[head]
        best = _block_best(rd, ri, d, i, largest)
        if i >= 0 and i == best:
            out_d[g] = d
            out_i[g] = i
            head += 1
        elif best < 0 and cuda.threadIdx.x == 0:
            out_i[g] = -1
    cuda.syncthreads()


@cuda.jit(device=True)
def _index_of(row, rows, n):
    for g in range(n):
        if rows[g] == row:
            return g
    return -1


@cuda.jit(device=True)
def _merge(cand_d, cand_i, buf, off, width, cap, largest, skip, n_skip, ld, li, rd, ri,
           out_d, out_i):
    """``out[:cap]``: the best ``cap`` of every block's candidates ``off:off + width`` in
    buffer ``buf``, rows in ``skip[:n_skip]`` left out (the same in every block)."""
    n = 0
    for blk in range(cuda.threadIdx.x, cand_i.shape[1], MDAV_GRID_THREADS):
        for g in range(off, off + width):
            i = cand_i[buf, blk, g]
            if i < 0:
                break
            if _index_of(i, skip, n_skip) < 0:
                n = _insert(ld, li, n, cap, cand_d[buf, blk, g], i, largest)
    _block_top(ld, li, n, cap, largest, rd, ri, out_d, out_i)


@cuda.jit(device=True)
def _choose(prev, ph, k, qz, bvar, bsums, cand_d, cand_i, buf, grp, ld, li, rd, ri, out_d,
            out_i):
    """What pass ``prev`` found, from all blocks' candidates: ``r`` (after ``CENTROID``), the
    group of ``r`` and then ``s`` (after ``FROM_R``), the group of ``s`` (after ``FROM_S``),
    into ``grp`` (the name first) and out of the centroid's sums; the rows in ``grp``."""
    b, tid = cuda.blockIdx.x, cuda.threadIdx.x
    if prev == CENTROID:
        _merge(cand_d, cand_i, buf, 0, 1, 1, True, grp, 0, ld, li, rd, ri, out_d, out_i)
        if tid == 0:
            bvar[b, _R] = out_i[0]
    elif prev == REST:  # the last group's name, for LABEL
        _merge(cand_d, cand_i, buf, 0, 1, 1, False, grp, 0, ld, li, rd, ri, out_d, out_i)
        if tid == 0:
            grp[0] = out_i[0]
    if prev != FROM_R and prev != FROM_S:
        cuda.syncthreads()
        return 0
    _merge(cand_d, cand_i, buf, 0, k - 1, k - 1, False, grp, 0, ld, li, rd, ri, out_d, out_i)
    if tid == 0:
        grp[0] = bvar[b, _R] if prev == FROM_R else bvar[b, _S]
        for g in range(k):
            if g > 0:
                grp[g] = out_i[g - 1]
            for j in range(qz.shape[1]):
                bsums[b, j] -= qz[grp[g], j]
        bvar[b, _M] -= k
    cuda.syncthreads()
    if ph == FROM_S:  # s: the farthest from r outside r's group
        _merge(cand_d, cand_i, buf, k - 1, k, 1, True, grp, k, ld, li, rd, ri, out_d, out_i)
        if tid == 0:
            bvar[b, _S] = out_i[0]
        cuda.syncthreads()
    return k


@cuda.jit(device=True)
def _compact(wz, wid, lo, bvar, gpos, n_grp):
    """Swap the group's rows (at positions ``gpos``, -1: another block's) out of the block's
    packed slice, the largest position first (the last remaining row fills each place)."""
    b = cuda.blockIdx.x
    alive = bvar[b, _ALIVE]
    for _ in range(n_grp):
        at, p = -1, -1
        for g in range(n_grp):
            if gpos[g] > p:
                at, p = g, gpos[g]
        if at < 0:
            break
        gpos[at] = -1
        alive -= 1
        last = lo + alive
        wid[p] = wid[last]
        for j in range(wz.shape[0]):
            wz[j, p] = wz[j, last]
    bvar[b, _ALIVE] = alive


@cuda.jit(device=True)
def _pass(t, phases, z, qz, scale, k, label, wz, wid, bvar, bsums, cand_d, cand_i):
    """Pass ``t`` of :func:`mdav_phases` on the block's slice: take what the previous pass
    found (:func:`_choose`), label and skip the rows of a group just formed, write the
    block's candidates for this pass, then swap the group's rows out (:func:`_compact`)."""
    b, tid = cuda.blockIdx.x, cuda.threadIdx.x
    ph = phases[t]
    prev = phases[t - 1] if t > 0 else -1
    point = cuda.shared.array(MDAV_MAX_COLUMNS, np.float64)
    grp = cuda.shared.array(MDAV_GRID_MAX_K, np.int64)
    gpos = cuda.shared.array(MDAV_GRID_MAX_K, np.int64)
    out_d = cuda.shared.array(MDAV_GRID_MAX_K, np.float64)
    out_i = cuda.shared.array(MDAV_GRID_MAX_K, np.int64)
    rd = cuda.shared.array(MDAV_GRID_THREADS, np.float64)
    ri = cuda.shared.array(MDAV_GRID_THREADS, np.int64)
    ld = cuda.local.array(MDAV_GRID_MAX_K, np.float64)
    li = cuda.local.array(MDAV_GRID_MAX_K, np.int64)
    fd = cuda.local.array(MDAV_GRID_MAX_K, np.float64)
    fi = cuda.local.array(MDAV_GRID_MAX_K, np.int64)
    n_grp = _choose(prev, ph, k, qz, bvar, bsums, cand_d, cand_i, (t + 1) % 2, grp, ld, li,
                    rd, ri, out_d, out_i)
    seed = -1
    if ph == FROM_R:
        seed = bvar[b, _R]
    elif ph == FROM_S:
        seed = bvar[b, _S]
    if tid < z.shape[1]:
        if ph == CENTROID:
            point[tid] = (bsums[b, tid] / bvar[b, _M]) / scale
        elif seed >= 0:
            point[tid] = z[seed, tid]
    if tid < n_grp:
        gpos[tid] = -1
    rest = grp[0]  # after REST: the last group's name
    cuda.syncthreads()
    cap_near = k - 1 if seed >= 0 else (1 if ph == REST else 0)
    cap_far = 1 if ph == CENTROID else (k if ph == FROM_R else 0)
    n_near, n_far = 0, 0
    span = -(-wid.shape[0] // cuda.gridDim.x)
    lo = b * span
    for p in range(lo + tid, lo + bvar[b, _ALIVE], MDAV_GRID_THREADS):
        i = wid[p]
        g = _index_of(i, grp, n_grp)
        if g >= 0:
            gpos[g] = p
            label[i] = grp[0]
        elif ph == LABEL:
            label[i] = rest
        elif i != seed:
            d = 0.0  # REST: every row at 0, the smallest row first
            if ph != REST:
                for j in range(wz.shape[0]):
                    v = wz[j, p] - point[j]
                    d = _add(d, _mul(v, v))
            if cap_near > 0:
                n_near = _insert(ld, li, n_near, cap_near, d, i, False)
            if cap_far > 0:
                n_far = _insert(fd, fi, n_far, cap_far, d, i, True)
    if cap_near > 0:
        _block_top(ld, li, n_near, cap_near, False, rd, ri, cand_d[t % 2, b], cand_i[t % 2, b])
    if cap_far > 0:
        _block_top(fd, fi, n_far, cap_far, True, rd, ri, cand_d[t % 2, b, cap_near:],
                   cand_i[t % 2, b, cap_near:])
    cuda.syncthreads()
    if tid == 0 and n_grp > 0:
        _compact(wz, wid, lo, bvar, gpos, n_grp)


@cuda.jit(cache=True)
def _mdav_grid_cooperative(phases, z, qz, scale, k, label, wz, wid, bvar, bsums, cand_d,
                           cand_i):
    """Every pass of ``phases`` in one cooperative launch, a grid barrier after each."""
    grid = cuda.cg.this_grid()
    for t in range(phases.shape[0]):
        _pass(t, phases, z, qz, scale, k, label, wz, wid, bvar, bsums, cand_d, cand_i)
        grid.sync()


@cuda.jit(cache=True)
def _mdav_grid_step(t, phases, z, qz, scale, k, label, wz, wid, bvar, bsums, cand_d, cand_i):
    """Pass ``t`` alone (a launch per pass: the simulator, or no cooperative launch)."""
    _pass(t, phases, z, qz, scale, k, label, wz, wid, bvar, bsums, cand_d, cand_i)


def _cooperative_blocks(args) -> int:
    """The most blocks a cooperative launch of :func:`_mdav_grid_cooperative` on ``args`` can
    have (all resident); 1 under the simulator (its grid barrier holds for one block)."""
    if _SIMULATED:
        return 1
    kernel = _mdav_grid_cooperative
    compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
    return int(compiled.max_cooperative_grid_blocks(MDAV_GRID_THREADS))


def mdav_grid(xp, a: int, b: int, z, qz, scale: float, k: int, label,
              blocks: int | None = None) -> None:
    """MDAV of the rows ``a:b`` of ``z`` (``qz`` its fixed-point integers) on the whole grid:
    each row's group name in ``label``, as :func:`.mdav.mdav_njit`.  ``blocks``: a launch per
    pass on that many blocks; default one cooperative launch on as many blocks as can be
    resident (a launch per pass where the cooperative launch cannot be compiled)."""
    m, d = b - a, z.shape[1]
    if d > MDAV_MAX_COLUMNS or not 2 <= k <= MDAV_GRID_MAX_K:
        raise ValueError(f"the grid MDAV takes at most {MDAV_MAX_COLUMNS} columns and "
                         f"2 <= k <= {MDAV_GRID_MAX_K}")
    phases = mdav_phases(m, k)
    wz = z[a:b].T.copy()  # C order; a copy also where d is 1 (the transpose is contiguous)
    wid = xp.arange(a, b, dtype=xp.int64)
    sums = qz[a:b].sum(axis=0)

    def state(n_blocks):  # per block: scalars, centroid sums, the candidates' two buffers
        span = -(-m // n_blocks)
        bvar = np.zeros((n_blocks, 4), np.int64)
        bvar[:, _M] = m
        bvar[:, _ALIVE] = np.clip(m - span * np.arange(n_blocks), 0, span)
        return (xp.asarray(bvar), xp.tile(sums[None, :], (n_blocks, 1)),
                xp.empty((2, n_blocks, 2 * k)), xp.full((2, n_blocks, 2 * k), -1, xp.int64))

    head = (xp.asarray(phases), z, qz, float(scale), int(k), label, wz, wid)
    if blocks is None:
        try:
            blocks = min(_cooperative_blocks(head + state(1)), max(1, -(-m // MDAV_GRID_THREADS)))
        except Exception as exc:  # noqa: BLE001 - e.g. no device runtime to link grid.sync
            logging.getLogger("gpuppdp").warning("grid MDAV: no cooperative launch (%s); a "
                                                 "launch per pass instead", exc)
            blocks = 4 * cuda.get_current_device().MULTIPROCESSOR_COUNT
        else:
            launch(_mdav_grid_cooperative, blocks, MDAV_GRID_THREADS, *head, *state(blocks))
            return
    args = head + state(blocks)
    for t in range(len(phases)):  # the host's loop over MDAV's passes (not over rows)
        launch(_mdav_grid_step, blocks, MDAV_GRID_THREADS, t, *args)
