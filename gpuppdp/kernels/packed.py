"""Packed QID codes: a frequency-set entry's QID codes as the bit fields of one int64 word.

QID ``j``'s code sits in the field ``fields[1, j] << fields[0, j]``, as wide as its bottom
level's codes need (a code only shrinks as its level rises).  Rolling an entry up to a node
one level more general in one QID rewrites that QID's field and leaves the rest of the word
as it is, so the roll-up reads, keys and writes one word an entry instead of one code per QID,
and two entries are in one class when their words are equal.  The CPU level walk of
k-anonymity problems runs so (:mod:`gpuppdp.engine.search.packed_walk`): on 9-QID Adult its roll-up
takes a third less time an entry than rolling the codes up column by column
(:func:`.grouping.rollup_njit`).  (The compiled Flash, whose roll-ups start from larger sets
and rewrite several QIDs, was measured slower so: its column form addresses small key spaces
directly.)  A table whose fields need more than 63 bits is left to the column form.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .hashtable import NO_GROUP, find_slot, hash_shift, hashed_size

WORD_BITS = 63  # the fields stay clear of the sign bit


def field_layout(radix) -> np.ndarray | None:
    """``(2, q)`` int64: per QID the shift and the mask of its field, wide enough for codes
    below ``radix[j]`` (its bottom level's); ``None`` when they need more than
    :data:`WORD_BITS` bits."""
    widths = np.array([max(int(r) - 1, 0).bit_length() for r in radix], np.int64)
    if int(widths.sum()) > WORD_BITS:
        return None
    return np.stack([np.cumsum(widths) - widths, (np.int64(1) << widths) - 1])


def pack(codes: np.ndarray, fields: np.ndarray) -> np.ndarray:
    """(E,) int64: the rows of ``codes`` (E, q) packed into the fields of ``fields``."""
    out = np.zeros(codes.shape[0], np.int64)
    for j in range(codes.shape[1]):
        out |= codes[:, j].astype(np.int64) << fields[0, j]
    return out


def code_at(codes, c, j, fields):
    """QID ``j``'s code of row ``c``: ``codes[c, j]`` of a (C, q) table of codes, the field
    ``j`` of word ``codes[c]`` of packed codes (:func:`field_layout`)."""
    raise NotImplementedError("compiled only (numba.njit)")


@overload(code_at, inline="always")
def _code_at(codes, c, j, fields):
    if isinstance(codes, types.Array) and codes.ndim == 2:
        return lambda codes, c, j, fields: codes[c, j]
    return lambda codes, c, j, fields: (codes[c] >> fields[0, j]) & fields[1, j]


@njit(inline="always")
def rollup_packed(src, count, start, n, field, mask, map_off, maps, out, out_count, pos, table,
                  slots):
    """Roll entries ``start:start+n`` of ``src`` (packed words) and ``count`` up into
    ``out[pos:]`` and ``out_count[pos:]``, one QID's level raised: its field (``mask <<
    field``) mapped through ``maps[map_off + code]``, equal words merged in order of first
    appearance, their counts summed; returns the groups.  ``table`` (all
    :data:`.hashtable.NO_GROUP`, :func:`.hashtable.hashed_size` of ``n`` slots at least) and
    ``slots`` (``n`` entries at least) are scratch, the table as it was on return (the slots
    used cleared one by one when they are few, else all).  A group's key is its word in
    ``out``."""
    size = hashed_size(n)
    keys = out[pos:]
    shift = hash_shift(size)
    probe = np.uint64(size - 1)
    clear = ~(mask << field)
    g = 0
    for i in range(n):
        e = start + i
        word = src[e]
        word = (word & clear) | (np.int64(maps[map_off + ((word >> field) & mask)]) << field)
        slot, s = find_slot(word, False, table, keys, shift, probe)
        if s < 0:  # a new group, this entry its first
            table[slot] = g
            slots[g] = slot
            out[pos + g] = word
            out_count[pos + g] = count[e]
            g += 1
        else:
            out_count[pos + s] += count[e]
    if 16 * g < size:
        for k in range(g):
            table[slots[k]] = NO_GROUP
    else:
        table[:size] = NO_GROUP
    return g
