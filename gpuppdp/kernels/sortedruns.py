"""Frequency sets as sorted runs: the CPU's bottom set of a table read in chunks.

A chunk's bottom set is built by sorting instead of hashing: each row's codes are packed into
one key of bit fields (first QID most significant: keys sort as the rows do, and unpack with
shifts, not divisions), tagged with the row's position in the chunk
and sorted (NumPy's sort of int64, vectorized where the CPU has AVX-512), so that equal keys are
adjacent and the first of each run is its first row; the set comes out in key order.  Sets in
key order merge in one linear pass (equal keys: counts added, the smaller first row kept), so
adding pending sets to the merged one reads both once instead of hashing the merged set again
(which made a 100-million-row table's merges read about seven times its bottom set).  At the
end the set is put in canonical order -- first appearance, i.e. ascending first row -- by
ranking the first rows in a bitmap of the table's rows (per-word prefix counts and a popcount:
Jacobson, "Space-efficient static trees and graphs", FOCS 1989), and its codes are unpacked from
the keys.  The result is the frequency set the hash roll-up gives, entry for entry.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .aot import CODE_TYPES, ahead_of_time

__all__ = ["fits", "chunk_set", "merge_sets", "canonical"]


def _shifts(radix) -> tuple[np.ndarray, int]:
    """``(shift of each column's bit field, bits in all)``: column ``j`` takes the bits of its
    largest code, the last column the lowest."""
    widths = np.array([max(1, (int(r) - 1).bit_length()) for r in radix], dtype=np.int64)
    shifts = np.zeros(len(widths), dtype=np.int64)
    if len(widths) > 1:
        shifts[:-1] = np.cumsum(widths[::-1])[::-1][1:]
    return shifts, int(widths.sum())


def fits(radix) -> bool:
    """Do keys of codes below ``radix`` pack into one int64 (62 bits at most)?"""
    return _shifts(radix)[1] <= 62


@njit(cache=True, nogil=True)
def _pack(codes, shifts, bits, keys):
    """``keys[i]``: row ``i``'s key (codes in bit fields at ``shifts``) shifted left by
    ``bits``, ``i`` in the low bits (``bits=0``: the key alone)."""
    for i in range(codes.shape[0]):
        key = np.int64(0)
        for j in range(codes.shape[1]):
            key |= np.int64(codes[i, j]) << shifts[j]
        keys[i] = (key << bits) | i if bits else key


@njit(cache=True, nogil=True)
def _runs_tagged(tagged, bits, first_row, keys, count, first):
    """The runs of equal keys of sorted ``tagged`` keys (see :func:`_pack`): each run's key,
    length and first row (its smallest tag, plus ``first_row``); returns the number of runs."""
    mask = (np.int64(1) << bits) - 1
    g = -1
    previous = np.int64(-1)
    for i in range(tagged.shape[0]):
        key = tagged[i] >> bits
        if key != previous:
            g += 1
            keys[g] = key
            count[g] = 1
            first[g] = first_row + (tagged[i] & mask)
            previous = key
        else:
            count[g] += 1
    return g + 1


@njit(cache=True, nogil=True)
def _runs_ordered(keys_in, order, first_row, keys, count, first):
    """The runs of equal keys of ``keys_in[order]`` (a stable sort): as :func:`_runs_tagged`."""
    g = -1
    previous = np.int64(-1)
    for i in range(order.shape[0]):
        key = keys_in[order[i]]
        if key != previous:
            g += 1
            keys[g] = key
            count[g] = 1
            first[g] = first_row + order[i]
            previous = key
        else:
            count[g] += 1
    return g + 1


ahead_of_time(_pack, [f"none({t}[:, ::1], int64[::1], int64, int64[::1])" for t in CODE_TYPES])
ahead_of_time(_runs_tagged, ["int64(int64[::1], int64, int64, int64[::1], int64[::1], "
                             "int64[::1])"])


def chunk_set(codes: np.ndarray, radix: np.ndarray, first_row: int):
    """The bottom set of the rows ``first_row, first_row + 1, ...`` whose codes are ``codes``
    (n, q) below ``radix`` (q,) (:func:`fits`), in key order: ``(keys, count, first)``, int64."""
    n = codes.shape[0]
    shifts, key_bits = _shifts(radix)
    codes = np.ascontiguousarray(codes)
    bits = max(1, (n - 1).bit_length())
    keys, count, first = (np.empty(n, np.int64) for _ in range(3))
    if key_bits + bits <= 63:  # row numbers fit beside the keys
        tagged = np.empty(n, np.int64)
        _pack(codes, shifts, bits, tagged)
        tagged.sort()
        g = _runs_tagged(tagged, bits, first_row, keys, count, first)
    else:
        plain = np.empty(n, np.int64)
        _pack(codes, shifts, 0, plain)
        g = _runs_ordered(plain, np.argsort(plain, kind="stable"), first_row, keys, count,
                          first)
    return keys[:g].copy(), count[:g].copy(), first[:g].copy()


@njit(cache=True, nogil=True)
def _merge2(ka, ca, fa, kb, cb, fb, keys, count, first):
    """Merge two sets in key order (distinct keys each): equal keys once, counts added, the
    smaller first row; returns the number of entries."""
    i = j = g = 0
    while i < ka.shape[0] and j < kb.shape[0]:
        if ka[i] < kb[j]:
            keys[g], count[g], first[g] = ka[i], ca[i], fa[i]
            i += 1
        elif kb[j] < ka[i]:
            keys[g], count[g], first[g] = kb[j], cb[j], fb[j]
            j += 1
        else:
            keys[g], count[g], first[g] = ka[i], ca[i] + cb[j], min(fa[i], fb[j])
            i += 1
            j += 1
        g += 1
    while i < ka.shape[0]:
        keys[g], count[g], first[g] = ka[i], ca[i], fa[i]
        i += 1
        g += 1
    while j < kb.shape[0]:
        keys[g], count[g], first[g] = kb[j], cb[j], fb[j]
        j += 1
        g += 1
    return g


ahead_of_time(_merge2, ["int64(" + ", ".join(["int64[::1]"] * 9) + ")"])


def merge_sets(sets: list) -> tuple:
    """One set in key order of ``sets`` (each ``(keys, count, first)`` in key order), merged in
    pairs, smallest first; ``sets`` is emptied, each set let go once merged."""
    if not sets:
        raise ValueError("no sets to merge")
    while len(sets) > 1:
        sets.sort(key=lambda s: -len(s[0]))  # the two smallest at the end
        a, b = sets.pop(), sets.pop()
        n = len(a[0]) + len(b[0])
        out = tuple(np.empty(n, np.int64) for _ in range(3))
        g = _merge2(*a, *b, *out)
        del a, b
        sets.append(tuple(x[:g].copy() if 2 * g < n else x[:g] for x in out))  # mostly full
    return sets.pop()


@njit(cache=True, nogil=True)
def _popcount(x):
    """Set bits of a uint64 (SWAR; LLVM emits the popcnt instruction for it)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


#: canonical order is placed partition by partition, each ``2**PART_BITS`` rows: a bitmap of
#: 8 KiB and about ``2**PART_BITS`` entries of output, in the cache (placing every entry by
#: rank at once writes at random over the whole set: TLB misses; benchmarks/RESULTS.md)
PART_BITS = 16


@njit(cache=True, nogil=True)
def _by_part(keys, count, first, shift, start, p_keys, p_count, p_first):
    """Scatter the entries to their partitions (``first >> shift``), in order within each:
    partition ``p`` fills ``start[p]:start[p + 1]`` (``start`` is advanced)."""
    for e in range(first.shape[0]):
        p = first[e] >> shift
        at = start[p]
        p_keys[at], p_count[at], p_first[at] = keys[e], count[e], first[e]
        start[p] = at + 1


@njit(cache=True, nogil=True)
def _place(p_keys, p_count, p_first, shift, ptr, shifts, codes, count, first):
    """Partition by partition, each entry at its rank among the partition's first rows (a
    bitmap of the partition's rows and per-word counts), its key unpacked into ``codes``."""
    n_words = ((1 << shift) + 63) >> 6
    words = np.zeros(n_words, np.uint64)
    before = np.zeros(n_words, np.int64)
    q = shifts.shape[0]
    for p in range(ptr.shape[0] - 1):
        lo, hi = ptr[p], ptr[p + 1]
        if lo == hi:
            continue
        base = np.int64(p) << shift
        words[:] = 0
        for e in range(lo, hi):
            f = p_first[e] - base
            words[f >> 6] |= np.uint64(1) << np.uint64(f & 63)
        running = lo
        for w in range(n_words):
            before[w] = running
            running += _popcount(words[w])
        for e in range(lo, hi):
            f = p_first[e] - base
            below = (np.uint64(1) << np.uint64(f & 63)) - np.uint64(1)
            at = before[f >> 6] + _popcount(words[f >> 6] & below)
            key = p_keys[e]
            for j in range(q):  # the field above column j's is column j - 1's
                high = (key >> shifts[j - 1]) << shifts[j - 1] if j else np.int64(0)
                codes[at, j] = (key - high) >> shifts[j]
            count[at] = p_count[e]
            first[at] = p_first[e]


ahead_of_time(_by_part, ["none(int64[::1], int64[::1], int64[::1], int64, int64[::1], "
                         "int64[::1], int64[::1], int64[::1])"])
ahead_of_time(_place, [f"none(int64[::1], int64[::1], int64[::1], int64, int64[::1], "
                       f"int64[::1], {t}[:, ::1], int64[::1], int64[::1])" for t in CODE_TYPES])


def canonical(sets: list, radix, n_rows: int, code_dtype) -> tuple:
    """The one set ``(keys, count, first)`` in ``sets`` (a set in key order of a table of
    ``n_rows`` rows; the list is emptied, the set let go once read) in canonical order:
    ``(codes (E, q) of code_dtype, count, first)``.  Two cache-friendly passes: entries
    scattered to partitions of ``2**PART_BITS`` rows, then placed within each by rank."""
    keys, count, first = sets.pop()
    shifts = _shifts(radix)[0]
    n = len(keys)
    n_parts = (max(int(n_rows), 1) - 1 >> PART_BITS) + 1
    ptr = np.zeros(n_parts + 1, np.int64)
    np.cumsum(np.bincount(first >> PART_BITS, minlength=n_parts), out=ptr[1:])
    parted = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64))
    _by_part(keys, count, first, PART_BITS, ptr[:-1].copy(), *parted)
    del keys, count, first
    codes = np.empty((n, len(shifts)), code_dtype)
    count_out, first_out = np.empty(n, np.int64), np.empty(n, np.int64)
    _place(*parted, PART_BITS, ptr, shifts, codes, count_out, first_out)
    return codes, count_out, first_out
