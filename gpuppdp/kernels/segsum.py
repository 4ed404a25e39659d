"""Ordered per-node sums of ARX's loss terms, without materializing a (classes x QIDs) matrix.

For node ``b`` (classes ``ptr[b]:ptr[b+1]``, in order of first appearance) and QID ``j``:

* ``kept[b, j]    = sum_c size[c] * share[off[b, j] + codes[c, j]]``
* ``charged[b, j] = sum_c (size[c] if outlier[c] else size[c] * share[...])``

ARX sums these terms sequentially in class order and the loss metric truncates the result at
1e-10, so a pairwise or tree reduction (``np.sum``, a GPU block reduction) can flip the last
decimal and with it a tie between nodes.  All forms add strictly left to right, which makes
every backend bit-identical to ARX.

Three forms: :func:`loss_sums_reference` (plain NumPy, the oracle), :func:`loss_sums_njit`
(Numba CPU, parallel over nodes: per (node, QID) the same additions in the same order, three
to five QIDs per pass with the running sums in registers) and :func:`loss_sums_cuda` (Numba
CUDA, a block per (node, QID): the terms of a tile of classes computed in parallel, added in
order by one thread; runs on CuPy arrays, or on NumPy arrays under Numba's CUDA simulator).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda, njit

from .aot import CODE_TYPES, ahead_of_time
from .nrt import njit_no_refcount
from .packed import code_at
from .cudalaunch import BLOCK_THREADS, launch
from .groupby import balanced_runs, n_tasks_for, run_tasks, segment_of


def loss_sums_reference(size, codes, outlier, ptr, off, share):
    """Oracle: ``np.add.accumulate`` over each node's classes; returns ``(charged, kept)``."""
    n_nodes, q = off.shape
    charged = np.zeros((n_nodes, q))
    kept = np.zeros((n_nodes, q))
    for b in range(n_nodes):
        s = slice(ptr[b], ptr[b + 1])
        sz = size[s].astype(np.float64)
        for j in range(q):
            x = sz * share[off[b, j] + codes[s, j]]
            if len(x):
                kept[b, j] = np.add.accumulate(x)[-1]
                charged[b, j] = np.add.accumulate(np.where(outlier[s], sz, x))[-1]
    return charged, kept


def _pass_source(w: int) -> str:
    """Source of ``_pass{w}(b, j, ...)``: QIDs ``j..j+w-1`` of node ``b`` in one pass over its
    classes, the ``2 w`` running sums in registers (``both`` False: the charged sums NaN).
    Written out per width: a loop over the QIDs inside the loop over the classes would keep
    the sums in memory."""
    r = range(w)
    return "\n".join([
        f"def _pass{w}(b, j, size, codes, fields, outlier, ptr, off, share, charged, kept, "
        "both):",
        *(f"    j{i} = j + {i}\n    o{i} = off[b, j{i}]\n    k{i} = h{i} = 0.0" for i in r),
        "    for c in range(ptr[b], ptr[b + 1]):",
        "        sz = float(size[c])",
        *(f"        x{i} = sz * share[o{i} + code_at(codes, c, j{i}, fields)]\n"
          f"        k{i} += x{i}" for i in r),
        "        if not both:",
        "            pass",
        "        elif outlier[c]:",
        *(f"            h{i} += sz" for i in r),
        "        else:",
        *(f"            h{i} += x{i}" for i in r),
        *(f"    kept[b, j{i}] = k{i}\n    charged[b, j{i}] = h{i} if both else np.nan" for i in r),
    ]) + "\n"


def _compiled_pass(w: int):
    """``_pass{w}`` compiled, inlined into :func:`_one_node` in Numba's IR (``inline='always'``:
    compiled once there instead of once on its own and again where inlined)."""
    namespace = {"__name__": __name__, "np": np, "code_at": code_at}
    exec(compile(_pass_source(w), f"<segsum._pass{w}>", "exec"), namespace)  # noqa: S102
    return njit(inline="always")(namespace[f"_pass{w}"])


_pass1, _pass3, _pass4, _pass5 = (_compiled_pass(w) for w in (1, 3, 4, 5))


@njit_no_refcount
def _one_node(b, size, codes, fields, outlier, ptr, off, share, charged, kept, both=True):
    """Node ``b`` on the CPU (``both``: the charged sums too, else NaN): the QIDs in blocks
    of five, four or three, each block in one pass through the classes with its running sums
    in registers -- per (node, QID) the very additions of :func:`loss_sums_reference`, in the
    same order (9 QIDs: 5 + 4; 1 or 2 QIDs: one at a time).  ``codes``: the classes' codes
    (C, q), or their packed codes (C,) in the fields of ``fields`` (:mod:`.packed`; unread for
    the first).  Compiled without reference counting (it allocates nothing): the compiled
    searches call it once per node."""
    q = off.shape[1]
    j = 0
    while j < q:
        r = q - j
        if r == 5 or r >= 9:
            _pass5(b, j, size, codes, fields, outlier, ptr, off, share, charged, kept,
                    both)
            j += 5
        elif r == 4 or r == 7 or r == 8:
            _pass4(b, j, size, codes, fields, outlier, ptr, off, share, charged, kept,
                    both)
            j += 4
        elif r == 3 or r == 6:
            _pass3(b, j, size, codes, fields, outlier, ptr, off, share, charged, kept,
                    both)
            j += 3
        else:
            _pass1(b, j, size, codes, fields, outlier, ptr, off, share, charged, kept,
                    both)
            j += 1


@njit(cache=True, nogil=True)
def _loss_sums_run(t, bounds, size, codes, outlier, ptr, off, share, charged, kept, charge,
                   keep):
    no_fields = np.empty((2, 0), np.int64)  # the codes are not packed
    for b in range(bounds[t], bounds[t + 1]):
        if charge[b] or keep[b]:
            _one_node(b, size, codes, no_fields, outlier, ptr, off, share, charged, kept,
                      charge[b])
        else:
            charged[b, :] = np.nan
            kept[b, :] = np.nan


ahead_of_time(_loss_sums_run, [
    f"none(int64, int64[::1], int64[::1], {c}[:, ::1], boolean[::1], int64[::1], int64[:, ::1], "
    "float64[::1], float64[:, ::1], float64[:, ::1], boolean[::1], boolean[::1])"
    for c in CODE_TYPES])


def loss_sums_njit(size, codes, outlier, ptr, off, share, charge=None, keep=None):
    """CPU form: runs of nodes with about equal classes, taken by the threads as they come
    free (:func:`.groupby.run_tasks`).  ``charge`` and ``keep`` (B,) bool, optional: the nodes
    whose charged sums, and whose kept sums, are wanted (default all); the others get NaN (a
    node charged has its kept sums too: one pass gives both)."""
    n_nodes, q = off.shape
    charge, keep = (np.ones(n_nodes, np.bool_) if a is None else
                    np.asarray(a, dtype=np.bool_).reshape(n_nodes) for a in (charge, keep))
    charged = np.empty((n_nodes, q))
    kept = np.empty((n_nodes, q))
    host_ptr = np.asarray(ptr, dtype=np.int64)
    bounds = balanced_runs(host_ptr, n_tasks_for(int(host_ptr[-1]) * max(q, 1) // 4, n_nodes))
    run_tasks(_loss_sums_run, len(bounds) - 1, bounds, size, codes, outlier, ptr, off, share,
              charged, kept, charge, keep)
    return charged, kept


LOSS_TILE = 64  # threads of a CUDA block: the terms of this many classes at a time


@cuda.jit(cache=True)
def _loss_sums_kernel(size, codes, outlier, ptr, off, share, charged, kept, nodes):
    """A block per (wanted node, QID) -- node ``nodes[i]``, none where it is negative -- : its
    threads compute the terms of ``LOSS_TILE`` classes at a time into shared memory
    (coalesced loads, gathers in parallel), and its first thread adds them to the running
    sums in class order."""
    q = off.shape[1]
    i = cuda.blockIdx.x // q
    j = cuda.blockIdx.x - i * q
    b = nodes[i]
    if b < 0:  # the whole block: not wanted (its sums stay as they are)
        return
    lane = cuda.threadIdx.x
    tile_kept = cuda.shared.array(LOSS_TILE, numba.float64)
    tile_charged = cuda.shared.array(LOSS_TILE, numba.float64)
    start = ptr[b]
    stop = ptr[b + 1]
    o = off[b, j]
    acc_kept = 0.0
    acc_charged = 0.0
    for base in range(start, stop, LOSS_TILE):
        c = base + lane
        if c < stop:
            sz = float(size[c])
            x = sz * share[o + codes[c, j]]
            tile_kept[lane] = x
            tile_charged[lane] = sz if outlier[c] else x
        cuda.syncthreads()
        if lane == 0:
            for i in range(min(LOSS_TILE, stop - base)):
                acc_kept += tile_kept[i]
                acc_charged += tile_charged[i]
        cuda.syncthreads()
    if lane == 0:
        charged[b, j] = acc_charged
        kept[b, j] = acc_kept


def loss_sums_cuda(size, codes, outlier, ptr, off, share, charged, kept, nodes):
    """Launch the CUDA form on device arrays (or host arrays under the simulator) for the
    nodes ``nodes`` (int64, an array of the same kind; negative entries stand for no node)
    only: the rows of ``charged`` and ``kept`` of the other nodes are left as they are."""
    n = nodes.shape[0] * off.shape[1]
    if n:
        launch(_loss_sums_kernel, n, LOSS_TILE, size, codes, outlier, ptr, off, share, charged,
               kept, nodes)
    return charged, kept


# --------------------------------------------------------------------------------------
# per-node class statistics (the evaluator's verdict totals) in one pass
# --------------------------------------------------------------------------------------
@njit(cache=True)
def _node_stats_range(b0, b1, size, outlier, small, ptr, out):
    """Nodes ``b0..b1-1``: one branch-free pass over each node's classes."""
    has_small = small.shape[0] == size.shape[0]
    big = np.iinfo(np.int64).max
    for b in range(b0, b1):
        suppressed = np.int64(0)
        small_total = np.int64(0)
        kept = np.int64(0)
        smallest = big
        for c in range(ptr[b], ptr[b + 1]):
            sz = np.int64(size[c])
            fails = outlier[c]
            suppressed += sz if fails else 0
            kept += 0 if fails else 1
            smallest = min(smallest, big if fails else sz)
        if has_small:
            for c in range(ptr[b], ptr[b + 1]):
                small_total += np.int64(size[c]) if small[c] else 0
        out[b, 0] = suppressed
        out[b, 1] = small_total
        out[b, 2] = kept
        out[b, 3] = 0 if smallest == big else smallest


@njit(cache=True, nogil=True)
def _node_stats_run(t, bounds, size, outlier, small, ptr, out):
    _node_stats_range(bounds[t], bounds[t + 1], size, outlier, small, ptr, out)


ahead_of_time(_node_stats_run, ["none(int64, int64[::1], int64[::1], boolean[::1], boolean[::1], "
                                 "int64[::1], int64[:, ::1])"])


def node_stats_njit(size, outlier, small, ptr):
    """Per node ``b`` (classes ``ptr[b]:ptr[b+1]``): records in outlier classes, records in
    ``small`` classes (0 when ``small`` is ``None``), kept classes and the smallest kept class
    (0 when none is kept); host int64 array (B, 4).  Runs of nodes with about equal classes are
    taken by the threads as they come free (:func:`.groupby.run_tasks`)."""
    ptr = np.asarray(ptr, dtype=np.int64)
    n_nodes = ptr.shape[0] - 1
    out = np.empty((n_nodes, 4), np.int64)
    small = np.zeros(0, np.bool_) if small is None else small
    bounds = balanced_runs(ptr, n_tasks_for(int(ptr[-1]) // 4, n_nodes))
    run_tasks(_node_stats_run, len(bounds) - 1, bounds, size, outlier, small, ptr, out)
    return out


_NO_CLASS = np.iinfo(np.int64).max


NODE_STATS_RUN = 8  # consecutive classes a CUDA thread takes


@cuda.jit(device=True)
def _add_node_stats(out, b, suppressed, small_total, kept, largest_gap):
    if suppressed:
        cuda.atomic.add(out, (b, 0), suppressed)
    if small_total:
        cuda.atomic.add(out, (b, 1), small_total)
    if kept:
        cuda.atomic.add(out, (b, 2), kept)
        if out[b, 3] < largest_gap:
            cuda.atomic.max(out, (b, 3), largest_gap)


@cuda.jit(cache=True)
def _node_stats_kernel(size, outlier, small, has_small, ptr, out):
    """One thread per :data:`NODE_STATS_RUN` consecutive classes, totals kept per node while
    the classes stay in one node: their records into the node's outlier or small totals, the
    kept classes, and, as ``_NO_CLASS - size``, the smallest kept size (integer atomics on a
    zeroed ``out``: exact, order-free; a node's classes are consecutive, so few atomics)."""
    first = cuda.grid(1) * NODE_STATS_RUN
    n = min(size.shape[0], ptr[ptr.shape[0] - 1])  # classes past the last node's: not read
    if first >= n:
        return
    b = segment_of(ptr, first)
    suppressed = small_total = kept = largest_gap = 0
    for c in range(first, min(first + NODE_STATS_RUN, n)):
        if c >= ptr[b + 1]:  # the next node's classes (empty nodes passed over)
            _add_node_stats(out, b, suppressed, small_total, kept, largest_gap)
            suppressed = small_total = kept = largest_gap = 0
            while c >= ptr[b + 1]:
                b += 1
        sz = size[c]
        if outlier[c]:
            suppressed += sz
        else:
            kept += 1
            largest_gap = max(largest_gap, _NO_CLASS - sz)
        if has_small and small[c]:
            small_total += sz
    _add_node_stats(out, b, suppressed, small_total, kept, largest_gap)


def node_stats_cuda(xp, size, outlier, small, ptr, to_host=np.asarray):
    """:func:`node_stats_njit`'s totals in one launch, a thread per :data:`NODE_STATS_RUN`
    classes, on device arrays (``xp`` CuPy; NumPy arrays under Numba's CUDA simulator); host
    int64 array (B, 4), copied back by ``to_host``."""
    return node_stats_on_host(to_host(node_stats_launch(xp, size, outlier, small, ptr)))


def node_stats_on_host(raw) -> np.ndarray:
    """The host (B, 4) totals of :func:`node_stats_launch`'s raw device array, copied back
    (its own inverse: the raw form of such totals, too)."""
    host = np.array(raw, dtype=np.int64)
    host[:, 3] = np.where(host[:, 3] == 0, 0, _NO_CLASS - host[:, 3])
    return host


def node_stats_launch(xp, size, outlier, small, ptr):
    """Launch :func:`node_stats_cuda`'s pass; its raw device totals (the smallest kept size as
    ``_NO_CLASS - size``: :func:`node_stats_on_host` reads them).  Classes past ``ptr[-1]``
    (a roll-up's unwritten rows) are not read."""
    out = xp.zeros((ptr.shape[0] - 1, 4), dtype=xp.int64)
    n = size.shape[0]
    if n:
        runs = -(-n // NODE_STATS_RUN)
        launch(_node_stats_kernel, -(-runs // BLOCK_THREADS), BLOCK_THREADS,
               size.astype(xp.int64, copy=False), outlier,
               outlier if small is None else small, small is not None,
               ptr.astype(xp.int64, copy=False), out)
    return out
