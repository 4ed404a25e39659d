"""The generalization lattice: one node per vector of hierarchy levels (Samarati 2001).

Node ids follow ARX: ``id(g) = sum_i g_i * prod_{j<i} (max_j + 1)`` (attribute 0 is the least
significant digit); successors of ``g`` are ``g + e_i`` in ascending ``i``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property, lru_cache

import numpy as np

from ..errors import InputError, InputTypeError

__all__ = ["Lattice", "node_levels"]


class Lattice:
    """Full-domain generalization lattice for QIDs with the given maximal levels."""

    def __init__(self, max_levels):
        self.max_levels = np.asarray(max_levels, dtype=np.int64)
        if self.max_levels.ndim != 1 or (self.max_levels < 0).any():
            raise InputError(f"max_levels must be non-negative integers, got {max_levels!r}")
        self.radix = self.max_levels + 1
        self.strides = np.concatenate([[1], np.cumprod(self.radix)[:-1]]).astype(np.int64)
        self.size = int(np.prod(self.radix))
        self.max_height = int(self.max_levels.sum())
        # (stride, radix, max level) per attribute as Python ints: successors() runs per
        # checked node in the search, where NumPy scalar arithmetic would dominate
        self._digits = [(int(s), int(r), int(m)) for s, r, m in
                        zip(self.strides, self.radix, self.max_levels)]

    @staticmethod
    def of(max_levels) -> "Lattice":
        """The lattice of ``max_levels``, built once per process (a search of a small table
        pays its construction as much as its nodes): shared, so its arrays are never
        written."""
        return _shared_lattice(tuple(int(h) for h in np.asarray(max_levels).reshape(-1)))

    @cached_property
    def level_sizes(self) -> np.ndarray:
        """The number of nodes of each height ``0..max_height``: the coefficients of
        ``prod_j (1 + x + ... + x^max_j)`` (computed once, read-only)."""
        sizes = np.ones(1, dtype=np.int64)
        for top in self.max_levels:
            sizes = np.convolve(sizes, np.ones(int(top) + 1, dtype=np.int64))
        sizes.flags.writeable = False
        return sizes

    @cached_property
    def relative_levels(self) -> np.ndarray:
        """(q, largest radix): each level divided by its attribute's height, one float64
        division as ARX's ``FLASHStrategy`` takes it (0 for a height of 0 and past the height;
        computed once, read-only)."""
        width = int(self.radix.max(initial=1))
        top = self.max_levels[:, None]
        inside = (np.arange(width)[None, :] <= top) & (top > 0)
        out = np.where(inside, np.arange(width, dtype=np.float64)[None, :] / np.maximum(top, 1),
                       0.0)
        out.flags.writeable = False
        return out

    @property
    def n_attributes(self) -> int:
        return len(self.max_levels)

    def node_id(self, levels) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    def levels_of(self, ids) -> np.ndarray:
        """(len(ids), q) level vectors of node ids."""
        ids = np.asarray(ids, dtype=np.int64)
        return (ids[:, None] // self.strides[None, :]) % self.radix[None, :]

    def successors(self, node_id: int) -> list[int]:
        """Direct generalizations, ascending attribute index."""
        node_id = int(node_id)
        return [node_id + stride for stride, radix, top in self._digits
                if node_id // stride % radix < top]

    @property
    def bottom(self) -> int:
        """The id of the node of every level 0."""
        return 0

    @property
    def top(self) -> int:
        return self.size - 1


@lru_cache(maxsize=64)
def _shared_lattice(max_levels: tuple[int, ...]) -> Lattice:
    return Lattice(max_levels)


def node_levels(node, quasi_identifiers: Sequence[str], heights: Sequence[int] | np.ndarray,
                name: str = "node") -> np.ndarray:
    """The level vector of ``node``: a mapping QID -> level naming every QID once, or a
    sequence of levels in ``quasi_identifiers``' order; each level an integer within its
    hierarchy's height.  :class:`InputError` names the offending QID and level (and
    ``name``, how the caller's user gives the node)."""
    names = list(quasi_identifiers)
    if isinstance(node, Mapping):
        unknown = [c for c in node if c not in names]
        if unknown:
            raise InputError(f"{name}: {unknown[0]!r} is not a quasi-identifier (they are "
                             f"{', '.join(names)})")
        missing = [c for c in names if c not in node]
        if missing:
            raise InputError(f"{name}: no level given for quasi-identifier(s) "
                             f"{', '.join(map(repr, missing))}; name every one once")
        values = [node[c] for c in names]
    elif isinstance(node, (str, bytes)) or not isinstance(node, (Sequence, np.ndarray)):
        raise InputTypeError(f"{name} must be a mapping QID -> level or a sequence of levels, "
                             f"got {node!r}")
    else:
        values = list(node)
        if len(values) != len(names):
            raise InputError(f"{name}: {len(values)} levels given for {len(names)} "
                             f"quasi-identifiers ({', '.join(names)})")
    levels = np.zeros(len(names), dtype=np.int64)
    for j, (qid, value, height) in enumerate(zip(names, values, heights)):
        whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not whole or not 0 <= int(value) <= int(height):
            raise InputError(f"{name}: the level of {qid!r} must be an integer from 0 to its "
                             f"hierarchy's height {int(height)}, got {value!r}")
        levels[j] = int(value)
    return levels
