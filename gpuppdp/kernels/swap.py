"""Rank swapping's CPU kernels: the stable rank order of a column by a parallel radix sort, and
the pairing within blocks of ranks as tasks on the thread pool (:func:`.groupby.run_tasks`).

They compute exactly what the array form of :func:`gpuppdp.perturb.rank_swap_sources` computes
with two global sorts (the form a GPU runs).  The rank order is ``np.argsort(x,
kind="stable")``: a least-significant-digit radix sort (Knuth, *TAOCP* vol. 3, section 5.2.5)
of the values' bits made order-preserving as unsigned integers, each pass a counting sort
whose chunks count and scatter as tasks, the passes over digits that every value shares
skipped.  The shuffle of a block orders its ranks by their random bits with ties by rank:
NumPy's sort of 64-bit keys packing the block, the leading random bits and the rank, the
rare runs of equal leading bits finished by an insertion sort on all the bits.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .aot import ahead_of_time
from .groupby import run_tasks

__all__ = ["stable_argsort", "swap_sources"]

#: bits of a radix sort's digit (six passes cover 64 bits; 2,048 buckets stay in the caches)
DIGIT_BITS = 11
#: rows per chunk of a radix pass, at least (a task each; more chunks than threads balance)
SORT_CHUNK_ROWS = 1 << 18
#: ranks per task of the block shuffles, at least (whole blocks, sorted together)
SHUFFLE_TASK_ROWS = 1 << 16


@njit(cache=True, nogil=True)
def _sort_keys(t, bits, kind, bounds, keys, counts):
    """Chunk ``t``'s keys, unsigned integers in the values' order, and the counts of each of
    their digits.  ``bits``: the values' 64 bits; ``kind`` 0: float64 (-0.0 as 0.0, negatives
    complemented, the sign set on the others), 1: int64 (sign flipped), 2: uint64."""
    sign = np.uint64(1) << np.uint64(63)
    mask = np.uint64((1 << DIGIT_BITS) - 1)
    for i in range(bounds[t], bounds[t + 1]):
        k = bits[i]
        if kind == 0:
            if k == sign:
                k = np.uint64(0)
            k = ~k if k & sign else k | sign
        elif kind == 1:
            k ^= sign
        keys[i] = k
        for d in range(counts.shape[1]):
            counts[t, d, (k >> np.uint64(d * DIGIT_BITS)) & mask] += 1


ahead_of_time(_sort_keys, ["none(int64, uint64[::1], int64, int64[::1], uint64[::1], "
                           "int64[:, :, ::1])"])


@njit(cache=True, nogil=True)
def _count_digit(t, keys, bounds, shift, counts):
    """Counts of chunk ``t``'s digit at bit ``shift`` (a pass after the first)."""
    mask = np.uint64((1 << DIGIT_BITS) - 1)
    for i in range(bounds[t], bounds[t + 1]):
        counts[t, (keys[i] >> np.uint64(shift)) & mask] += 1


ahead_of_time(_count_digit, ["none(int64, uint64[::1], int64[::1], int64, int64[:, ::1])"])


@njit(cache=True, nogil=True)
def _scatter_digit(t, keys, order, bounds, shift, starts, out_keys, out_order, first, last):
    """Chunk ``t``'s rows to their places by the digit at bit ``shift``, in their order (a
    stable counting sort); ``starts[t]``: the chunk's first place of each digit.  ``first``:
    the rows are the positions themselves (``order`` unread); ``last``: no keys written."""
    mask = np.uint64((1 << DIGIT_BITS) - 1)
    place = starts[t].copy()
    for i in range(bounds[t], bounds[t + 1]):
        k = keys[i]
        d = (k >> np.uint64(shift)) & mask
        p = place[d]
        place[d] = p + 1
        out_order[p] = i if first else order[i]
        if not last:
            out_keys[p] = k


ahead_of_time(_scatter_digit, ["none(int64, uint64[::1], int64[::1], int64[::1], int64, "
                               "int64[:, ::1], uint64[::1], int64[::1], boolean, boolean)"])


def stable_argsort(x: np.ndarray) -> np.ndarray:
    """``np.argsort(x, kind="stable")`` of a numeric column without NaN, int64: a radix sort
    whose passes run in chunks on the thread pool (module docstring)."""
    n = x.shape[0]
    if x.dtype.kind == "f":
        bits, kind = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64), 0
    elif x.dtype.kind == "i":
        bits, kind = np.ascontiguousarray(x, dtype=np.int64).view(np.uint64), 1
    else:
        bits, kind = np.ascontiguousarray(x, dtype=np.uint64), 2
    n_chunks = max(1, min(n // SORT_CHUNK_ROWS, 8 * numba.get_num_threads()))
    bounds = np.arange(n_chunks + 1, dtype=np.int64) * n // n_chunks
    n_digits = -(-64 // DIGIT_BITS)
    counts = np.zeros((n_chunks, n_digits, 1 << DIGIT_BITS), dtype=np.int64)
    keys = np.empty(n, dtype=np.uint64)
    run_tasks(_sort_keys, n_chunks, bits, kind, bounds, keys, counts)
    # a digit every key shares orders nothing
    passes = [d for d in range(n_digits) if counts[:, d].sum(axis=0).max() < n]
    if not passes:
        return np.arange(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)  # the first pass reads the positions, not ``order``
    spare_keys, spare_order = np.empty_like(keys), np.empty_like(order)
    for j, d in enumerate(passes):
        digit_counts = counts[:, d] if j == 0 else np.zeros((n_chunks, 1 << DIGIT_BITS),
                                                            dtype=np.int64)
        if j > 0:
            run_tasks(_count_digit, n_chunks, keys, bounds, d * DIGIT_BITS, digit_counts)
        # places: digit by digit, within a digit chunk by chunk (the chunks are in order)
        ends = np.cumsum(digit_counts.T.ravel()).reshape(digit_counts.T.shape).T
        starts = np.ascontiguousarray(ends - digit_counts)
        run_tasks(_scatter_digit, n_chunks, keys, order, bounds, d * DIGIT_BITS, starts,
                  spare_keys, spare_order, j == 0, j == len(passes) - 1)
        keys, spare_keys, order, spare_order = spare_keys, keys, spare_order, order
    return order


@njit(cache=True, nogil=True)
def _random_bits(words, r):
    """Rank ``r``'s 63 random bits, as :meth:`~gpuppdp.dp.randomness.RandomSource.random_bits`
    makes them from keystream words 2r and 2r + 1."""
    return (np.int64(words[2 * r]) << 31) | (np.int64(words[2 * r + 1]) >> 1)


@njit(cache=True, nogil=True)
def _shuffle_keys(t, words, width, drop, per_task, place_bits, cut, packed):
    """Task ``t``'s sort keys (its ``per_task`` blocks of ``width`` ranks), high to low bits:
    the block in the task, a rank's random bits ``>> drop`` less their last ``cut`` bits, the
    rank's place in its block."""
    key_bits = np.uint64(63 - drop - cut)
    lo = t * per_task * width
    hi = min(lo + per_task * width, packed.shape[0])
    for start in range(lo, hi, width):
        block = np.uint64((start - lo) // width) << key_bits
        for r in range(start, min(start + width, hi)):
            k = block | np.uint64(_random_bits(words, r) >> (drop + cut))
            packed[r] = (k << np.uint64(place_bits)) | np.uint64(r - start)


ahead_of_time(_shuffle_keys, ["none(int64, uint32[::1], int64, int64, int64, int64, int64, "
                              "uint64[::1])"])


@njit(cache=True, nogil=True)
def _pair_blocks(t, packed, by_rank, words, width, drop, per_task, place_bits, cut, sources):
    """Task ``t``'s ranks in the order of their sorted keys, the runs of equal keys (which the
    cut bits may tell apart) put in the order of the whole random bits by an insertion sort
    (ties by rank), then each block's paired two by two, the odd one keeping its own."""
    lo = t * per_task * width
    hi = min(lo + per_task * width, packed.shape[0])
    shift, mask = np.uint64(place_bits), np.uint64((1 << place_bits) - 1)
    shuffle = np.empty(hi - lo, dtype=np.int64)  # ranks in the order of the keys
    for j in range(hi - lo):
        shuffle[j] = lo + (j // width) * width + np.int64(packed[lo + j] & mask)
    if cut > 0:
        for j in range(1, hi - lo):
            i = j
            while i > 0 and packed[lo + i - 1] >> shift == packed[lo + i] >> shift and \
                    _random_bits(words, shuffle[i - 1]) >> drop > \
                    _random_bits(words, shuffle[i]) >> drop:
                shuffle[i - 1], shuffle[i] = shuffle[i], shuffle[i - 1]
                i -= 1
    for start in range(0, hi - lo, width):
        size = min(width, hi - lo - start)
        for j in range(size):
            mate = j ^ 1 if (j ^ 1) < size else j
            sources[by_rank[shuffle[start + j]]] = by_rank[shuffle[start + mate]]


ahead_of_time(_pair_blocks, ["none(int64, uint64[::1], int64[::1], uint32[::1], int64, int64, "
                             "int64, int64, int64, int64[::1])"])


def _swap_task(t, by_rank, words, width, drop, per_task, place_bits, cut, packed, sources):
    """Task ``t``: its keys, sorted by NumPy (a vectorized sort that releases the GIL), paired."""
    _shuffle_keys(t, words, width, drop, per_task, place_bits, cut, packed)
    packed[t * per_task * width:(t + 1) * per_task * width].sort()
    _pair_blocks(t, packed, by_rank, words, width, drop, per_task, place_bits, cut, sources)


def swap_sources(by_rank: np.ndarray, words: np.ndarray, width: int, drop: int) -> np.ndarray:
    """For each row, the row whose value it takes: the ranks of each block of ``width`` are
    ordered by their random bits ``>> drop`` (ties by rank) and paired two by two, the odd one
    keeping its own (``words``: two keystream words a rank, in rank order, as
    :meth:`~gpuppdp.dp.randomness.RandomSource.random_bits` uses them).  A task sorts the
    packed keys of whole blocks (:func:`_shuffle_keys`), at least ``SHUFFLE_TASK_ROWS``
    ranks; the random bits below the key's share are compared only where the kept ones tie."""
    n, width = by_rank.shape[0], int(width)
    per_task = max(1, SHUFFLE_TASK_ROWS // width)
    place_bits = max(1, (width - 1).bit_length())
    key_bits = 64 - (per_task - 1).bit_length() - place_bits
    cut = max(0, 63 - int(drop) - key_bits)
    sources = np.empty(n, dtype=np.int64)
    run_tasks(_swap_task, -(-n // (per_task * width)),
              np.ascontiguousarray(by_rank, dtype=np.int64),
              np.ascontiguousarray(words, dtype=np.uint32), width, int(drop), per_task,
              place_bits, cut, np.empty(n, dtype=np.uint64), sources)
    return sources
