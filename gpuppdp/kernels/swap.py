"""Rank swapping's CPU kernels: the stable rank order of a column, and the pairing within
blocks of ranks as tasks on the thread pool (:func:`.groupby.run_tasks`).

They compute exactly what the array form of :func:`gpuppdp.perturb.rank_swap_sources` computes
with two global sorts (the form a GPU runs): the rank order is a stable argsort, here sorted in
chunks at once and merged; the shuffle of a block orders its ranks by their random bits with
ties by rank, here one stable sort per block instead of one sort of all blocks' keys.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .aot import ahead_of_time
from .groupby import run_tasks

__all__ = ["stable_argsort", "swap_sources"]

#: rows per chunk of the rank order's first sorts, at least (one chunk per thread)
SORT_CHUNK_ROWS = 1 << 20


def _sort_chunk(t, x, bounds, order, values):
    """NumPy's stable sort of chunk ``t`` (it releases the GIL), its rows and values."""
    lo, hi = bounds[t], bounds[t + 1]
    chunk = np.argsort(x[lo:hi], kind="stable")
    values[lo:hi] = x[lo:hi][chunk]
    order[lo:hi] = chunk + lo


@njit(cache=True, nogil=True)
def _merge_runs(t, bounds, width, order, values, out_order, out_values):
    """Merge the sorted runs ``2t`` and ``2t + 1`` (of ``width`` chunks each) into ``out_*``,
    the left run's row first on a tie."""
    n_chunks = len(bounds) - 1
    lo = bounds[min(2 * t * width, n_chunks)]
    mid = bounds[min((2 * t + 1) * width, n_chunks)]
    hi = bounds[min((2 * t + 2) * width, n_chunks)]
    i, j = lo, mid
    for out in range(lo, hi):
        if j < hi and (i >= mid or values[j] < values[i]):
            out_order[out] = order[j]
            out_values[out] = values[j]
            j += 1
        else:
            out_order[out] = order[i]
            out_values[out] = values[i]
            i += 1


ahead_of_time(_merge_runs, [f"none(int64, int64[::1], int64, int64[::1], {t}[::1], int64[::1], "
                            f"{t}[::1])" for t in ("float64", "int64")])


def stable_argsort(x: np.ndarray) -> np.ndarray:
    """``np.argsort(x, kind="stable")`` of a float64 or int64 column without NaN: one chunk
    per thread of the pool sorted by NumPy at once, then merged pairwise (a stable merge of
    stable runs is the stable order, whatever the chunks)."""
    n = x.shape[0]
    n_chunks = min(numba.get_num_threads(), n // SORT_CHUNK_ROWS)
    if n_chunks <= 1 or x.dtype not in (np.float64, np.int64):
        return np.argsort(x, kind="stable")
    bounds = np.arange(n_chunks + 1, dtype=np.int64) * n // n_chunks
    order, values = np.empty(n, dtype=np.int64), np.empty_like(x)
    run_tasks(_sort_chunk, n_chunks, np.ascontiguousarray(x), bounds, order, values)
    spare_order, spare_values = np.empty_like(order), np.empty_like(values)
    width = 1
    while width < n_chunks:
        run_tasks(_merge_runs, -(-n_chunks // (2 * width)), bounds, width, order, values,
                  spare_order, spare_values)
        order, spare_order, values, spare_values = spare_order, order, spare_values, values
        width *= 2
    return order


@njit(cache=True, nogil=True)
def _swap_block(t, by_rank, bits, width, drop, sources):
    lo = t * width
    hi = min(lo + width, by_rank.shape[0])
    size = hi - lo
    shuffle = np.argsort(bits[lo:hi] >> drop, kind="mergesort")
    for j in range(size):
        mate = j ^ 1
        if mate >= size:
            mate = j
        sources[by_rank[lo + shuffle[j]]] = by_rank[lo + shuffle[mate]]


ahead_of_time(_swap_block, ["none(int64, int64[::1], int64[::1], int64, int64, int64[::1])"])


def swap_sources(by_rank: np.ndarray, bits: np.ndarray, width: int, drop: int) -> np.ndarray:
    """For each row, the row whose value it takes: the ranks of each block of ``width`` are
    ordered by ``bits >> drop`` (ties by rank) and paired two by two, the odd one keeping its
    own (``bits``: the random bits of the ranks, in rank order)."""
    n = by_rank.shape[0]
    sources = np.empty(n, dtype=np.int64)
    run_tasks(_swap_block, -(-n // width), np.ascontiguousarray(by_rank, dtype=np.int64),
              np.ascontiguousarray(bits, dtype=np.int64), int(width), int(drop), sources)
    return sources
