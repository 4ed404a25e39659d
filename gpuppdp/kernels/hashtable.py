"""The open-addressing table of the CPU roll-ups and of the compiled Flash's classes.

A table maps keys (int64) to group numbers (int32, :data:`NO_GROUP` where a slot is free):
directly addressed when the key space is small, else hashed -- multiplicative hashing (Knuth,
TAOCP vol. 3, 6.4) into a power of two of at least four slots an entry, linear probing, each
group's key kept by group number (``group_key[g]``, written in order as groups open), so
that a new key touches one random slot and nothing else.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: the multiplier of Fibonacci hashing: 2^64 divided by the golden ratio
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
NO_GROUP = np.int32(-1)


@njit(cache=True)
def hashed_size(n):
    """Slots of a hashed table for ``n`` keys: a power of two >= 4 n (16 at least)."""
    cap = np.int64(16)
    while cap < 4 * n:
        cap *= 2
    return cap


@njit(inline='always')
def hash_shift(size):
    """The shift of multiplicative hashing into ``size`` slots (a power of two):
    64 - log2(size)."""
    shift = np.uint64(64)
    c = size
    while c > 1:
        c >>= 1
        shift -= np.uint64(1)
    return shift


@njit(inline='always')
def find_slot(key, dense, table, group_key, shift, mask):
    """``(slot, group)`` of ``key``: its own slot when the table is directly addressed, else
    the slot linear probing from its hash ends on (``group`` < 0: free, the key is new)."""
    if dense:
        return key, table[key]
    slot = np.int64((np.uint64(key) * _HASH_MUL) >> shift)
    while True:
        s = table[slot]
        if s < 0 or group_key[s] == key:
            return slot, s
        slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
