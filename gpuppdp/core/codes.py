"""The one encoder from table columns to integer codes.

Every part of the package that turns a column into codes -- the anonymizer's QID leaf codes and
sensitive attributes, the checker, the risk, utility and adversary measures -- calls
:func:`encode_column` (or :func:`encode_columns`), so "which code does a value get" is decided
here only:

* a pandas Series / Index / NumPy array / list is dictionary-encoded like
  ``pandas.factorize(values, use_na_sentinel=False)``: codes ``0..g-1`` in order of first
  appearance (or of the sorted values with ``sort=True``), a missing value being a value of its
  own;
* a pandas categorical is read from its codes (no re-factorization): only the categories that
  occur get a code, a missing value (code ``-1``) gets one too, in the same order as above;
* a pyarrow ``DictionaryArray`` (or a ``ChunkedArray`` of them, whose chunks' dictionaries are
  unified first, or a pandas column of such an ``ArrowDtype``) is read from its indices and
  dictionary the same way; any other pyarrow array is dictionary-encoded by Arrow;
* with a ``domain`` (e.g. a hierarchy's leaves) the code of a value is its position in the
  domain, values compared as strings; values outside the domain raise
  :class:`UnknownValuesError` (naming the column and listing the values), or
  get code ``-1`` with ``unknown="missing"``.

Codes are returned in the smallest signed integer dtype that holds them
(:func:`smallest_int_dtype`); only the distinct values are ever compared or turned into strings.

A table read in chunks is encoded chunk by chunk with a :class:`ColumnDictionary` per column
(codes in order of first appearance in the whole table, whatever the chunking), and
:class:`DistinctRows` reduces the chunks to their distinct rows with counts.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import InputError
from ..kernels import grouping
from ..validation import format_values

__all__ = ["UnknownValuesError", "Domain", "encode_column", "encode_columns",
           "smallest_int_dtype", "ColumnDictionary", "DistinctRows"]


def smallest_int_dtype(n_values: int) -> np.dtype:
    """Smallest signed integer dtype holding codes ``0..n_values-1``."""
    for dt in (np.int8, np.int16, np.int32):
        if n_values <= np.iinfo(dt).max + 1:
            return np.dtype(dt)
    return np.dtype(np.int64)


def _object_array(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _label_array(uniq) -> np.ndarray:
    """pandas' distinct values as a host array: NumPy arrays and numbers stay as they are,
    anything else becomes an object array of the values as iterating pandas' uniques gives
    them (so ``str`` of a label is ``str`` of pandas' value)."""
    if isinstance(uniq, np.ndarray):
        return uniq
    if isinstance(uniq.dtype, np.dtype) and uniq.dtype.kind in "biuf":
        return uniq.to_numpy()
    return _object_array(uniq.tolist())


def _from_codes(codes: np.ndarray, categories: pd.Index, na_label, sort: bool):
    """Encode from dictionary codes (``-1``: missing): only the codes that occur, in order of
    first appearance (``sort``: category order, missing last)."""
    k = len(categories)
    present = pd.unique(codes).astype(np.int64)    # distinct codes, in order of appearance
    present[present < 0] = k                       # the missing value is slot k
    if sort:
        present.sort()
    remap = np.full(k + 1, -1, dtype=smallest_int_dtype(len(present)))
    remap[present] = np.arange(len(present))
    out = remap[codes]                             # code -1 reads slot k
    na_at = np.flatnonzero(present == k)
    if not len(na_at) and isinstance(categories.dtype, np.dtype) \
            and categories.dtype.kind in "biuf":
        return out, categories.to_numpy()[present]
    labels = categories.take(present[present < k]).tolist()
    if len(na_at):
        labels.insert(int(na_at[0]), na_label)
    return out, _object_array(labels)


def _arrow(values):
    """``(codes, labels)`` of a pyarrow Array or ChunkedArray."""
    chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
    if not pa.types.is_dictionary(chunked.type):
        chunked = chunked.dictionary_encode()      # first-appearance order, as pandas
    chunked = chunked.unify_dictionaries()
    if chunked.num_chunks:
        dictionary = chunked.chunk(0).dictionary
        indices = [ch.indices.cast(pa.int64()).fill_null(-1).to_numpy(zero_copy_only=False)
                   if ch.null_count else ch.indices.to_numpy().astype(np.int64, copy=False)
                   for ch in chunked.chunks]
        codes = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
    else:
        dictionary = pa.array([], type=chunked.type.value_type)
        codes = np.zeros(0, dtype=np.int64)
    if dictionary.null_count:                      # a null inside the dictionary
        null_at = np.flatnonzero(dictionary.is_null().to_numpy(zero_copy_only=False))
        codes = np.where(np.isin(codes, null_at), -1, codes)
    categories = pd.Index(dictionary.to_pandas())
    return codes, categories


def _factorized(values, sort: bool):
    """``(codes, labels)`` of ``values`` without a domain (see the module docstring)."""
    if isinstance(values, pd.Categorical) or isinstance(
            getattr(values, "dtype", None), pd.CategoricalDtype):
        cat = values if isinstance(values, pd.Categorical) else values.array
        return _from_codes(cat.codes, cat.categories, np.nan, sort)
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype).startswith("dictionary"):
        values = values.array.__arrow_array__()
    if type(values).__module__.partition(".")[0] == "pyarrow":
        codes, categories = _arrow(values)
        if sort:                                   # by value, not dictionary order
            perm = categories.argsort(kind="stable")
            rank = np.empty(len(perm) + 1, dtype=np.int64)
            rank[perm], rank[-1] = np.arange(len(perm)), -1
            codes, categories = rank[codes], categories.take(perm)
        return _from_codes(codes, categories, pd.NA, sort)
    if not isinstance(values, (pd.Series, pd.Index)):
        values = np.asarray(values).reshape(-1)
    codes, uniq = pd.factorize(values, sort=sort, use_na_sentinel=False)
    return codes, _label_array(uniq)


class UnknownValuesError(InputError):
    """Data values that are not leaves of their hierarchy; ``first_row`` is the first row
    holding one (counted from 0, ``None`` if unknown)."""

    def __init__(self, attribute: str, values: Sequence[str], count_rows: int,
                 first_row: int | None = None):
        self.attribute = attribute
        self.values = list(values)
        self.count_rows = count_rows
        self.first_row = self.row = first_row  # row: the command line names the file's line
        where = "" if first_row is None else f", first at row {first_row}"
        super().__init__(
            f"column {attribute!r}: {len(self.values)} value(s) not in its hierarchy "
            f"({count_rows} row(s){where}): {format_values(self.values)}")

    def at(self, row_offset: int) -> "UnknownValuesError":
        """The same error for rows numbered from ``row_offset`` (a chunk of a larger table)."""
        first = None if self.first_row is None else self.first_row + row_offset
        return UnknownValuesError(self.attribute, self.values, self.count_rows, first)


class Domain:
    """Known values (e.g. a hierarchy's leaves) prepared for encoding many columns, or the
    chunks of one, against them: the position of each value's string is found in a dict
    built once, and a column whose values are codes already -- a pandas categorical, an Arrow
    dictionary column, or integers in a short range -- costs one gather through positions
    kept for the next chunk (the chunks of one file usually share their dictionaries and
    range).  :func:`encode_column` takes one as its ``domain``."""

    #: integer columns spanning at most this many values (or twice the domain) are gathered
    INTEGER_SPAN = 1 << 16

    def __init__(self, values: Sequence | np.ndarray):
        self.values = np.asarray(values, dtype=object).reshape(-1)
        self._index = {str(v): i for i, v in enumerate(self.values.tolist())}
        # (the last categorical's categories, their positions)
        self._categories: tuple[pd.Index, tuple[np.ndarray, bool]] | None = None
        # (the last Arrow dictionary, its positions)
        self._dictionary: tuple[Any, tuple[np.ndarray, bool]] | None = None
        # (lowest integer, positions of lowest, lowest + 1, ...)
        self._integers: tuple[int, tuple[np.ndarray, bool]] | None = None

    def positions(self, labels) -> np.ndarray:
        """int64 position of each label's string in the domain, ``-1`` where absent."""
        return np.array([self._index.get(str(u), -1) for u in labels], dtype=np.int64)

    def gathered(self, values) -> np.ndarray | None:
        """Positions of a column's values in one gather, or ``None`` when the column is no
        categorical, Arrow dictionary or short-range integer column, is empty, or holds a
        missing value or one outside the domain (the general path then encodes it, and names
        what is wrong).  The kept positions are replaced in one assignment: safe to share
        between threads."""
        if isinstance(values, pd.Categorical) or (
                isinstance(values, (pd.Series, pd.Index))
                and isinstance(values.dtype, pd.CategoricalDtype)):
            cat: Any = values if isinstance(values, pd.Categorical) else values.array
            return self._through(self._category_positions(cat.categories), cat.codes)
        if type(values).__module__.partition(".")[0] == "pyarrow":
            return self._arrow_gathered(values)
        dtype = getattr(values, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind in "iu":
            return self._integers_gathered(np.asarray(values))
        return None

    def _positions_of(self, labels) -> tuple[np.ndarray, bool]:
        """(:meth:`positions` of ``labels`` in the codes' dtype, are they all in the domain?)"""
        positions = self.positions(labels)
        return positions.astype(smallest_int_dtype(len(self.values))), bool(
            positions.size and positions.min() >= 0)

    @staticmethod
    def _through(positions: tuple[np.ndarray, bool], codes: np.ndarray) -> np.ndarray | None:
        """``positions[codes]`` (see :meth:`_positions_of`), or ``None`` where a code is
        missing (``-1``) or leads outside the domain."""
        if not codes.size or codes.min() < 0:
            return None
        out = positions[0][codes]
        return out if positions[1] or out.min() >= 0 else None

    def _category_positions(self, categories: pd.Index) -> tuple[np.ndarray, bool]:
        """:meth:`_positions_of` a categorical's categories (same values and dtype as the last
        ones: ``str`` of a value depends on both)."""
        last = self._categories
        if last is None or not (last[0] is categories or (
                last[0].dtype == categories.dtype and last[0].equals(categories))):
            last = (categories, self._positions_of(categories))
            self._categories = last
        return last[1]

    def _arrow_gathered(self, values) -> np.ndarray | None:
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        if not chunks or values.null_count:
            return None
        if pa.types.is_integer(values.type):
            return self._integers_gathered(np.concatenate(
                [c.to_numpy() for c in chunks]) if len(chunks) > 1 else chunks[0].to_numpy())
        if not pa.types.is_dictionary(values.type):
            return None
        parts = []
        for chunk in chunks:
            last = self._dictionary
            if last is None or not last[0].equals(chunk.dictionary):
                last = (chunk.dictionary,
                        self._positions_of(pd.Index(chunk.dictionary.to_pandas())))
                self._dictionary = last
            part = self._through(last[1], chunk.indices.to_numpy())
            if part is None:
                return None
            parts.append(part)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _integers_gathered(self, values: np.ndarray) -> np.ndarray | None:
        if not values.size:
            return None
        lo, hi = int(values.min()), int(values.max())
        if lo < -(1 << 62) or hi >= 1 << 62:  # offsets computed in int64
            return None
        last = self._integers
        if last is None or lo < last[0] or hi >= last[0] + len(last[1][0]):
            if last is not None:  # the union of the ranges seen
                lo, hi = min(lo, last[0]), max(hi, last[0] + len(last[1][0]) - 1)
            if hi - lo >= max(self.INTEGER_SPAN, 2 * len(self.values)):
                return None
            last = (lo, self._positions_of(np.arange(lo, hi + 1)))
            self._integers = last
        positions, known = last[1]
        out = positions[values if last[0] == 0 else values.astype(np.int64) - last[0]]
        return out if known or out.min() >= 0 else None


def encode_column(values, *, domain: Sequence | np.ndarray | Domain | None = None,
                  name: str | None = None, sort: bool = False, as_str: bool = False,
                  unknown: str = "error") -> tuple[np.ndarray, np.ndarray]:
    """Encode one column: ``(codes, labels)`` with ``labels[codes[i]]`` the value of row ``i``.

    Parameters
    ----------
    values : pandas Series / Index / Categorical, pyarrow Array / ChunkedArray, NumPy array
        or list.
    domain : sequence or :class:`Domain`, optional
        The known values (e.g. ``hierarchy.leaves``): ``codes`` are positions in it (values
        compared as strings), ``labels`` is the domain itself (an object array).  A
        :class:`Domain` serves many calls.
    name : str, optional
        The column's name, for the error about values outside ``domain``.
    sort : bool
        Without a domain: codes in sorted order of the values (category order for a
        categorical) instead of order of first appearance.
    as_str : bool
        Without a domain: ``labels`` as an object array of ``str`` of the values.
    unknown : {"error", "missing"}
        With a domain: values outside it raise
        :class:`UnknownValuesError`, or get code ``-1``.

    ``codes`` have the smallest signed integer dtype holding ``0..len(labels)-1``.
    """
    if unknown not in ("error", "missing"):
        raise InputError(f"unknown must be 'error' or 'missing', got {unknown!r}")
    if domain is not None:
        domain = domain if isinstance(domain, Domain) else Domain(domain)
        gathered = domain.gathered(values)
        if gathered is not None:
            return gathered, domain.values
    codes, labels = _factorized(values, sort and domain is None)
    if domain is None:
        if as_str:
            labels = _object_array([str(u) for u in labels])
        return codes.astype(smallest_int_dtype(len(labels))), labels
    lut = domain.positions(labels)                 # only the distinct values become strings
    missing = lut < 0
    if missing.any() and unknown == "error":
        bad = np.isin(codes, np.flatnonzero(missing))
        raise UnknownValuesError(name if name is not None else "values",
                                 sorted(str(u) for u, m in zip(labels, missing) if m),
                                 int(bad.sum()), int(np.argmax(bad)))
    return lut[codes].astype(smallest_int_dtype(len(domain.values))), domain.values


def encode_columns(data: pd.DataFrame, columns: Sequence[str], *,
                   domains: dict | None = None, **options) -> tuple[list, list]:
    """:func:`encode_column` of each of ``data[columns]``: ``(codes, labels)``, two lists in
    the order of ``columns``; ``domains`` maps column names to their domains (the others have
    none), ``options`` go to every :func:`encode_column` call."""
    domains = domains or {}
    codes, labels = [], []
    for c in columns:
        col_codes, col_labels = encode_column(data[c], domain=domains.get(c), name=c, **options)
        codes.append(col_codes)
        labels.append(col_labels)
    return codes, labels


class ColumnDictionary:
    """Codes of one column read chunk after chunk: :meth:`encode` gives each value the code of
    its first appearance in all the chunks so far (values as strings), as :func:`encode_column`
    with ``as_str=True`` gives for the whole column."""

    def __init__(self):
        self._index: dict = {}

    def __len__(self) -> int:
        return len(self._index)

    def encode(self, values) -> np.ndarray:
        """Host int64 codes of ``values`` (only the distinct values are looked up)."""
        local, labels = encode_column(values, as_str=True)
        index = self._index
        lut = np.array([index.setdefault(v, len(index)) for v in labels.tolist()],
                       dtype=np.int64)
        return lut[local]

    @property
    def labels(self) -> np.ndarray:
        """Object array of the labels, code order."""
        out = np.empty(len(self._index), dtype=object)
        out[:] = list(self._index)
        return out


class DistinctRows:
    """The distinct rows of some columns of a table read in chunks, with how many rows each
    stands for -- the table's frequency set, in memory proportional to it, not to the rows.

    :meth:`add` a chunk (a DataFrame holding the columns); :meth:`result` gives ``(codes,
    labels, counts)``: ``codes`` a list of host int32 arrays (one per column, codes in
    ``labels``, numbered by first appearance), ``counts`` host int64.  Pending chunk sets are
    merged when they hold more than ``merge_rows`` rows and the merged set's size.
    """

    def __init__(self, columns: Sequence[str], merge_rows: int = 1 << 22):
        self.columns = list(columns)
        self.dictionaries = [ColumnDictionary() for _ in self.columns]
        self._merged: list[tuple] = []
        self._pending: list[tuple] = []
        self._merge_rows = merge_rows
        self.rows = 0

    def add(self, chunk: pd.DataFrame, weights=None) -> None:
        """Add a chunk's rows, each standing for one row or for ``weights`` (int, one per
        row: e.g. a partition's distinct rows with their counts)."""
        if not len(chunk):
            return
        codes = np.stack([d.encode(chunk[c]).astype(np.int32)  # distinct values < 2^31
                          for d, c in zip(self.dictionaries, self.columns)], axis=1)
        weights = np.ones(len(chunk), dtype=np.int64) if weights is None else \
            np.asarray(weights, dtype=np.int64)
        self._pending.append(_distinct(codes, weights, self._radix()))
        self.rows += int(weights.sum())
        pending = sum(len(w) for _, w in self._pending)
        if pending > max(self._merge_rows, sum(len(w) for _, w in self._merged)):
            self._merged = [self._merge(self._merged + self._pending)]
            self._pending = []

    def _radix(self) -> list[int]:
        return [max(len(d), 1) for d in self.dictionaries]

    def _merge(self, parts: list[tuple]) -> tuple:
        if len(parts) == 1:
            return parts[0]
        return _distinct(np.concatenate([c for c, _ in parts]),
                         np.concatenate([w for _, w in parts]), self._radix())

    def result(self) -> tuple[list, list, np.ndarray]:
        codes, counts = self._merge(self._merged + self._pending) if self.rows else (
            np.zeros((0, len(self.columns)), dtype=np.int32), np.zeros(0, dtype=np.int64))
        return ([codes[:, j].copy() for j in range(codes.shape[1])],
                [d.labels for d in self.dictionaries], counts)


def _distinct(codes: np.ndarray, weights: np.ndarray, radix: Sequence[int]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``codes`` (n, q) int32 in order of first appearance, and their weights:
    a roll-up to the bottom node (:func:`~gpuppdp.kernels.grouping.rollup_njit`, partitioned
    on the threads when large); ``radix`` the number of codes of each column."""
    n, q = codes.shape
    identity = np.arange(max(radix, default=1), dtype=np.int32)  # every column at offset 0
    codes, _, counts, _, _ = grouping.rollup_njit(
        codes, np.zeros(n, np.int32), weights, np.arange(n, dtype=np.int64), np.array([0]),
        np.array([n]), np.full((1, q), grouping.IDENTITY_OFFSET, np.int64), identity,
        np.array([list(radix) + [1]], dtype=np.int64))
    return codes, counts
