"""Generalization hierarchies: a leaf domain and one label per leaf at every level.

A hierarchy with ``h + 1`` levels maps every leaf (level 0, the original value) to a label at
each level ``1..h``; the top level has a single label (usually ``*``).  Internally every level
is integer-encoded: ``codes(L)[leaf] -> code at level L``, so generalizing a column is a gather
(Sweeney 2002; Samarati 2001; the table form ARX uses, Prasser & Kohlmayer 2015).

Validated on construction: rectangular, no duplicate leaves, every level a function of the level
below it (a group of leaves may never split again higher up), one top value.
"""

from __future__ import annotations

import csv
import operator
import os
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .core.codes import Domain, UnknownValuesError, encode_column
from .display import hierarchy_html
from .errors import InputError, hinted
from .validation import format_values

__all__ = ["Hierarchy", "HierarchyError", "UnknownValuesError"]


class HierarchyError(InputError):
    """A hierarchy is malformed."""


def _check_lengths(name: str, lengths: Sequence[int], item: str, unit: str, first: int):
    """``HierarchyError`` naming the first ``item`` whose length differs from the first's."""
    for i, n in enumerate(lengths):
        if n != lengths[0]:
            raise HierarchyError(f"{name}: {item} {i + first} has {n} {unit}, {item} {first} "
                                 f"has {lengths[0]}")


class Hierarchy:
    """A validated generalization hierarchy.

    Parameters
    ----------
    levels : sequence of sequences of str
        ``levels[L][i]`` is the label of leaf ``i`` at level ``L``; ``levels[0]`` are the leaves.
        All levels have the same length.
    name : str, optional
        Used in error messages.

    Examples
    --------
    >>> h = Hierarchy([["a", "b", "c"], ["ab", "ab", "c"], ["*", "*", "*"]], name="x")
    >>> h.height, h.labels(1).tolist()
    (2, ['ab', 'c'])
    """

    def __init__(self, levels: Sequence[Sequence[str]], *, name: str | None = None):
        self.name = name or "hierarchy"
        arrays = [np.asarray([str(v) for v in level], dtype=object) for level in levels]
        if not arrays or len(arrays[0]) == 0:
            raise HierarchyError(f"{self.name}: a hierarchy needs at least one leaf")
        _check_lengths(self.name, [len(level) for level in arrays], "level", "labels", 0)
        leaves = arrays[0]
        uniq, counts = np.unique(leaves, return_counts=True)
        if (counts > 1).any():
            raise HierarchyError(
                f"{self.name}: duplicate leaves {format_values(uniq[counts > 1].tolist())}")
        self._labels: list[np.ndarray] = []
        self._codes: list[np.ndarray] = []
        self._leaf_domain: Domain | None = None
        for level in arrays:
            codes, labels = encode_column(level)
            codes = codes.astype(np.int32)
            self._labels.append(labels)
            self._codes.append(codes)
        for lv in range(1, len(arrays)):
            self._check_function(lv)
        if len(arrays) > 1 and len(self._labels[-1]) != 1:
            raise HierarchyError(
                f"{self.name}: the top level must have one value, it has "
                f"{len(self._labels[-1])}: {format_values(self._labels[-1].tolist())}")

    def _check_function(self, lv: int) -> None:
        below, above = self._codes[lv - 1], self._codes[lv]
        parent = np.full(len(self._labels[lv - 1]), -1, dtype=np.int64)
        parent[below] = above
        split = parent[below] != above
        if split.any():
            i = int(np.flatnonzero(split)[0])
            label = self._labels[lv - 1][below[i]]
            targets = sorted({self._labels[lv][c] for c in above[below == below[i]]})
            raise HierarchyError(
                f"{self.name}: level {lv} is not a function of level {lv - 1}: "
                f"{label!r} (level {lv - 1}) maps to {format_values(targets)}")

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[str]], *, name: str | None = None) -> "Hierarchy":
        """From ARX-style rows ``[leaf, level1, ..., top]``."""
        rows = [list(r) for r in rows]
        if not rows:
            raise HierarchyError(f"{name or 'hierarchy'}: no rows")
        width = len(rows[0])
        _check_lengths(name or "hierarchy", [len(r) for r in rows], "row", "columns", 1)
        return cls([[r[lv] for r in rows] for lv in range(width)], name=name)

    @classmethod
    def from_csv(cls, path: str | os.PathLike, *, sep: str = ";",
                 name: str | None = None, encoding: str = "utf-8") -> "Hierarchy":
        """Load an ARX hierarchy file: one row per leaf, ``leaf;level1;...;*``, no header
        (a byte-order mark at its start is not part of the first leaf)."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"hierarchy file not found: {path}")
        try:
            with open(path, newline="", encoding=encoding) as fh:
                if fh.read(1) != "\ufeff":
                    fh.seek(0)
                rows = [r for r in csv.reader(fh, delimiter=sep)
                        if r and any(c.strip() for c in r)]
        except UnicodeDecodeError as exc:
            raise hinted(f"hierarchy file {path} is not {encoding} text ({exc.reason} at byte "
                         f"{exc.start}); ", "pass its encoding (encoding=)",
                         "convert it to UTF-8", HierarchyError) from None
        return cls.from_rows(rows, name=name or os.path.basename(path))

    @classmethod
    def flat(cls, values: Iterable, *, name: str | None = None, top: str = "*") -> "Hierarchy":
        """Two levels: every value, then ``top``."""
        leaves = list(dict.fromkeys(str(v) for v in values))
        return cls([leaves, [top] * len(leaves)], name=name)

    # -- writing ------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike, sep: str = ";", *,
               encoding: str = "utf-8") -> None:
        """Write the ARX hierarchy file :meth:`from_csv` reads: one line per leaf,
        ``leaf;level1;...;top``, no header (a label holding ``sep`` or a quote is quoted)."""
        with open(os.fspath(path), "w", newline="", encoding=encoding) as fh:
            csv.writer(fh, delimiter=sep, lineterminator="\n").writerows(
                [str(self._labels[lv][self._codes[lv][i]]) for lv in range(len(self._codes))]
                for i in range(len(self._codes[0])))

    # -- queries ------------------------------------------------------------------------
    @property
    def height(self) -> int:
        """Highest level (number of levels - 1)."""
        return len(self._codes) - 1

    @property
    def leaves(self) -> np.ndarray:
        return self._labels[0]

    @property
    def leaf_domain(self) -> Domain:
        """The leaves prepared for encoding data against them, chunk after chunk (built
        once; see :class:`~gpuppdp.core.codes.Domain`)."""
        if self._leaf_domain is None:
            self._leaf_domain = Domain(self.leaves)
        return self._leaf_domain

    def _level(self, level) -> int:
        """``level`` as an int in ``0..height``; otherwise a ValueError naming the hierarchy
        (a bare index would raise IndexError, or silently count from the top if negative)."""
        try:
            value = operator.index(level)
        except TypeError:
            value = None
        if value is None or isinstance(level, bool) or not 0 <= value <= self.height:
            raise InputError(f"{self.name}: level must be an integer in 0..{self.height}, "
                             f"got {level!r}")
        return value

    def labels(self, level: int) -> np.ndarray:
        """Distinct labels of ``level`` in code order (order of first appearance)."""
        return self._labels[self._level(level)]

    def codes(self, level: int) -> np.ndarray:
        """``codes(level)[leaf] -> code of the leaf's label at level`` (int32)."""
        return self._codes[self._level(level)]

    def upmap(self, src: int, dst: int) -> np.ndarray:
        """``upmap(src, dst)[code at src] -> code at dst`` for ``src <= dst``."""
        if not 0 <= src <= dst <= self.height:
            raise InputError(f"need 0 <= src <= dst <= {self.height}, got {src}, {dst}")
        out = np.empty(len(self._labels[src]), dtype=np.int32)
        out[self._codes[src]] = self._codes[dst]
        return out

    def label_row_counts(self, level: int) -> np.ndarray:
        """Number of hierarchy rows under each label of ``level`` (ARX's domain-share
        numerator)."""
        level = self._level(level)
        return np.bincount(self._codes[level], minlength=len(self._labels[level]))

    def leaf_codes(self, values: Sequence | np.ndarray | pd.Series, *,
                   attribute: str | None = None) -> np.ndarray:
        """Encode data values (compared as strings) to leaf codes (int32); values that are not
        leaves raise :class:`UnknownValuesError` naming them."""
        codes, _ = encode_column(values, domain=self.leaf_domain, name=attribute or self.name)
        return codes.astype(np.int32)

    def generalize(self, values: Sequence, level: int, *,
                   attribute: str | None = None) -> np.ndarray:
        """Labels of ``values`` at ``level`` (object array of str)."""
        level = self._level(level)
        leaf = self.leaf_codes(values, attribute=attribute)
        return self._labels[level][self._codes[level][leaf]]

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Hierarchy({self.name!r}, leaves={len(self.leaves)}, height={self.height})"

    def _repr_html_(self) -> str:
        return hierarchy_html(self)
