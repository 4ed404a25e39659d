"""Sparse solution space for Flash (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012): node
properties and the lattice's levels without arrays the size of the lattice, as in ARX's JHPL.

Flash's predictive tagging (Kohlmayer et al. 2012) propagates a verdict to a whole
cone: anonymity (and pruning) upwards to every generalization, non-anonymity downwards to every
specialization.  :class:`Properties` keeps, per property, the nodes it was set on explicitly and,
for the propagated ones, the apexes of the cones that carry it: a node has an "up" property iff
some apex is componentwise <= it, a "down" property iff some apex is >= it.  The apexes live in a
trie over their level vectors (one trie per direction, each trie node with the property bits of
the apexes below it), so a dominance query only walks the branches that can hold such an apex;
a node whose cone already carries a property does not become an apex of it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.aot import ahead_of_time
from ..kernels.nrt import njit_no_refcount

__all__ = ["Properties", "level_nodes"]

# Node properties of ARX's Flash (JHPL lattice properties), one bit each.
CHECKED, ANON, NOTANON, KANON, NOTKANON, VISITED, SUCC_PRUNED, INSUFF = (1 << i for i in range(8))


@njit(cache=True)
def _digits(node, strides, radix):
    out = np.empty(strides.shape[0], np.int64)
    for i in range(strides.shape[0]):
        out[i] = node // strides[i] % radix[i]
    return out


@njit(cache=True)
def _carried(child, bits, g, props, up, first):
    """The bits of ``props`` carried by the trie's apexes ``a <= g`` (``up``) or ``a >= g``
    (the first bits found only, if ``first``).  Trie node 0 is the root; ``child[t, v]`` is
    the child of node ``t`` for level ``v`` of the next attribute (-1: none); ``bits[t]`` is
    the union of the bits of the apexes below ``t``."""
    q, width = g.shape[0], child.shape[1]
    stack = np.empty((q * width + 1, 2), np.int64)  # (trie node, depth), depth first
    stack[0, 0] = stack[0, 1] = 0
    top, found = 1, 0
    while top:
        top -= 1
        t, depth = stack[top, 0], stack[top, 1]
        if not bits[t] & props & ~found:
            continue
        if depth == q:
            found |= bits[t] & props
            if first or found == props:
                break
            continue
        for v in range(0, g[depth] + 1) if up else range(g[depth], width):
            c = child[t, v]
            if c >= 0 and bits[c] & props & ~found:
                stack[top, 0], stack[top, 1] = c, depth + 1
                top += 1
    return found


@njit(cache=True)
def _first_carried(child, bits, node, strides, radix, props, up):
    return _carried(child, bits, _digits(node, strides, radix), props, up, True)


ahead_of_time(_first_carried, ["int64(int64[:, ::1], int64[::1], int64, int64[::1], int64[::1], "
                                "int64, boolean)"])


@njit(cache=True)
def _has_many(child, bits, nodes, props, up, out):
    for j in range(nodes.shape[0]):
        if not out[j] and _carried(child, bits, nodes[j], props, up, True):
            out[j] = True


ahead_of_time(_has_many, ["none(int64[:, ::1], int64[::1], int64[:, ::1], int64, boolean, "
                           "boolean[::1])"])


@njit(cache=True)
def _add_apex(child, bits, n, node, strides, radix, props, up):
    """Make ``node`` an apex of those ``props`` its cone does not carry yet; returns the new
    trie size (capacity: ``n + q`` trie nodes)."""
    g = _digits(node, strides, radix)
    new = props & ~_carried(child, bits, g, props, up, False)
    if new:
        t = 0
        bits[0] |= new
        for v in g:
            if child[t, v] < 0:
                child[t, v] = n
                n += 1
            t = child[t, v]
            bits[t] |= new
    return n


ahead_of_time(_add_apex, ["int64(int64[:, ::1], int64[::1], int64, int64, int64[::1], "
                           "int64[::1], int64, boolean)"])


class _Cones:
    """The apexes of one direction's cones, as a trie (see :func:`_carried`)."""

    def __init__(self, radix, up: bool):
        self.up = up
        self.q = len(radix)
        self.child = np.full((64, int(max(radix, default=1))), -1, dtype=np.int64)
        self.bits = np.zeros(64, dtype=np.int64)
        self.n = 1
        self.all = 0  # every bit some apex carries

    def add(self, node: int, props: int, strides, radix) -> None:
        if self.n + self.q > len(self.bits):
            self.child = np.concatenate([self.child, np.full_like(self.child, -1)])
            self.bits = np.concatenate([self.bits, np.zeros_like(self.bits)])
        self.n = _add_apex(self.child, self.bits, self.n, node, strides, radix, props, self.up)
        self.all |= props


class Properties:
    """Flash's node properties (bit flags) on the lattice with the given strides and radixes:
    set on one node, or on the cone above (``up``) or below (``down``) it."""

    def __init__(self, strides, radix):
        self.strides = np.asarray(strides, dtype=np.int64)
        self.radix = np.asarray(radix, dtype=np.int64)
        # bits known per node: those set on it explicitly and those found on it by has()
        # (a property is never taken back, so a positive answer holds for good)
        self.known: dict[int, int] = {}
        self.up, self.down = _Cones(self.radix, True), _Cones(self.radix, False)

    def has(self, node: int, props: int) -> bool:
        """Does ``node`` carry any of the bits ``props``?"""
        known = self.known.get(node, 0)
        if known & props:
            return True
        up, down, found = self.up, self.down, 0
        if up.all & props:
            found = _first_carried(up.child, up.bits, node, self.strides, self.radix, props, True)
        if not found and down.all & props:
            found = _first_carried(down.child, down.bits, node, self.strides, self.radix, props,
                                   False)
        if found:
            self.known[node] = known | found
        return found != 0

    def has_many(self, ids: np.ndarray, levels: np.ndarray, props: int) -> np.ndarray:
        """:meth:`has` for nodes ``ids`` with level vectors ``levels`` (m, q)."""
        get = self.known.get
        out = np.fromiter((get(g, 0) & props != 0 for g in ids.tolist()), dtype=bool,
                          count=len(ids))
        levels = np.ascontiguousarray(levels, dtype=np.int64)
        for c in (self.up, self.down):
            if c.all & props:
                _has_many(c.child, c.bits, levels, props, c.up, out)
        return out

    def set(self, node: int, props: int, up: bool = False, down: bool = False) -> None:
        if up or down:
            (self.up if up else self.down).add(node, props, self.strides, self.radix)
        else:
            self.known[node] = self.known.get(node, 0) | props


@njit(cache=True)
def first_of_level(max_levels, height, v):
    """Set ``v`` to the level vector of sum ``height`` of smallest node id (the levels
    filled lowest attribute first); False when the lattice has no node of that height."""
    rest = height
    for j in range(max_levels.shape[0]):
        v[j] = min(max_levels[j], rest)
        rest -= v[j]
    return rest == 0


@njit(cache=True)
def next_of_level(max_levels, v):
    """Advance ``v`` to the next level vector of its sum in ascending node id
    (colexicographically); False after the last.  It raises the lowest attribute that can
    take one level from those below it, which are then refilled lowest attribute first."""
    q = max_levels.shape[0]
    below, i = v[0], 1
    while i < q and (below == 0 or v[i] == max_levels[i]):
        below += v[i]
        i += 1
    if i == q:
        return False
    v[i] += 1
    rest = below - 1
    for j in range(i):
        v[j] = min(max_levels[j], rest)
        rest -= v[j]
    return True


@njit(cache=True)
def _fill_level(max_levels, height, out, v):
    """Write the level vectors of sum ``height`` into ``out`` (as many as fit) in ascending
    node id, ``v`` (q,) the enumeration's scratch (nothing allocated: the compiled Flash
    calls it without reference counting); returns how many there are."""
    q = max_levels.shape[0]
    if not first_of_level(max_levels, height, v):
        return 0
    m = 0
    while True:
        if m < out.shape[0]:
            for j in range(q):  # element by element: a row assignment compiles shape checks
                out[m, j] = v[j]
        m += 1
        if not next_of_level(max_levels, v):
            return m


ahead_of_time(_fill_level, ["int64(int64[::1], int64, int64[:, ::1], int64[::1])"])


def level_nodes(max_levels, height: int) -> np.ndarray:
    """The (m, q) level vectors of the lattice nodes of the given height, ascending node id."""
    max_levels = np.asarray(max_levels, dtype=np.int64)
    out, v = np.empty((0, len(max_levels)), dtype=np.int64), np.zeros_like(max_levels)
    out = np.empty((_fill_level(max_levels, height, out, v), len(max_levels)), dtype=np.int64)
    _fill_level(max_levels, height, out, v)
    return out


@njit_no_refcount
def _pack(levels, q, bits):
    """Pack ``levels[:q]`` into ``levels[q:]``, ``63 // bits`` fields of ``bits`` bits a word,
    each level in the low ``bits - 1`` bits of its field; returns the words' guard mask (the
    fields' top bits, never set by a level)."""
    per = 63 // bits
    guard = 0
    for f in range(per):
        guard |= 1 << (f * bits + bits - 1)
    for w in range(q, levels.shape[0]):
        levels[w] = 0
    for j in range(q):
        levels[q + j // per] |= levels[j] << (j % per * bits)
    return guard


@njit_no_refcount
def _packed_below(a, b, q, guard):
    """Whether every level of ``a`` is at most ``b``'s, both packed by :func:`_pack`: a
    field of ``b``'s word with its guard bit set, minus ``a``'s, keeps the guard bit exactly
    when ``a``'s level is not larger, and never borrows from the next field (one subtraction
    per word, Lamport 1975's parallel comparison)."""
    for w in range(q, a.shape[0]):
        if ((b[w] | guard) - a[w]) & guard != guard:
            return False
    return True
