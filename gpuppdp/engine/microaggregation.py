"""Microaggregation of an attribute inside a full-domain generalization, as ARX 3.9.2 does it
(``DataDefinition.setMicroAggregationFunction``, ``AttributeType.MicroAggregationFunction``,
``DistributionAggregateFunction``; Domingo-Ferrer & Mateo-Sanz 2002 for microaggregation).

An attribute given a function (``mean``, ``geomean``, ``median``, ``mode``, ``interval``) is
released as one value per equivalence class: the aggregate of its values in the class.

* Without a hierarchy (ARX's ``performClustering = false``, the default) it is no part of the
  lattice: the classes are those of the generalized quasi-identifiers, and the loss metric
  charges it as one more attribute (``MetricMDNMLoss``: a kept class ``|E| d_E / D``, ``d_E``
  its distinct values in the class and ``D`` those in the table; a suppressed one ``|E|``;
  the sum divided by the row count).  Metrics ARX does not let charge it (all but loss and
  precision) ignore it.
* With a hierarchy (``performClustering = true``) it is generalized like any quasi-identifier
  and then aggregated within the classes; no metric charges the aggregation.

The aggregates are written as ARX writes them: ``DataType.format`` of the declared (or
inferred, :func:`~gpuppdp.core.datatypes.infer_type`) type: an integer mean rounded half up,
a decimal one as Java's ``Double.toString``, an interval ``[min, max]``; a median of an even
count of values is the mean of the middle two (ratio scale) or, for an ordered string, that
value when both are equal and ``NULL`` otherwise; the mode is the most frequent value
(ties: the value seen first in the table).  Suppressed records show ``*``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from ..core.codes import encode_column
from ..core.datatypes import DataType, infer_type
from ..errors import InputError
from ..validation import format_values

__all__ = ["FUNCTIONS", "Aggregation", "check_microaggregation", "aggregate_classes",
           "aggregated_column", "NULL_VALUE"]

#: the functions and the scale of measure ARX requires of the attribute's type
#: (``MicroAggregationFunction.getRequiredScale``)
FUNCTIONS = {"mean": "interval", "geomean": "interval", "median": "ordinal",
             "mode": "nominal", "interval": "ordinal"}

#: ARX's ``DataType.NULL_VALUE``
NULL_VALUE = "NULL"


class Aggregation:
    """One microaggregated attribute: its ``function`` and its data ``dtype``
    (``None`` until :meth:`typed` infers it from the column); ``clustered`` when it also has a
    hierarchy (generalized, then aggregated)."""

    def __init__(self, column: str, function: str, dtype: DataType | None = None,
                 clustered: bool = False):
        if function not in FUNCTIONS:
            raise InputError(f"microaggregation[{column!r}] must be one of {list(FUNCTIONS)}, "
                             f"got {function!r}")
        self.column, self.function, self.dtype, self.clustered = \
            column, function, dtype, clustered

    def typed(self, values) -> "Aggregation":
        """This aggregation with its type (inferred from ``values`` when not declared),
        checked against the scale the function needs."""
        dtype = self.dtype or infer_type(values)
        needed = FUNCTIONS[self.function]
        if not dtype.provides(needed) or (needed == "interval" and not dtype.numeric):
            raise InputError(
                f"microaggregation[{self.column!r}]: {self.function} needs "
                f"{'numbers' if needed == 'interval' else 'ordered values'} (an integer or "
                f"decimal{'' if needed == 'interval' else ', date or ordered'} column), but "
                f"{self.column!r} is typed {dtype.describe()}; declare its type "
                "(types={...}, CLI: --type COL=integer|decimal|...)")
        return Aggregation(self.column, self.function, dtype, self.clustered)

    def __repr__(self) -> str:
        return f"Aggregation({self.column!r}, {self.function!r})"


def check_microaggregation(microaggregation, quasi_identifiers, types) -> dict:
    """``{column: Aggregation}`` from ``{column: function}``; a column with a hierarchy in
    ``quasi_identifiers`` is clustered (ARX's ``performClustering``)."""
    if microaggregation is None:
        return {}
    if not hasattr(microaggregation, "items"):
        raise InputError("microaggregation must be a mapping column -> function "
                         f"({format_values(list(FUNCTIONS))}), got {microaggregation!r}")
    return {str(c): Aggregation(str(c), f, types.get(c), str(c) in quasi_identifiers)
            for c, f in microaggregation.items()}


def _numeric_label(dtype: DataType, x: float, text: str) -> str:
    return dtype.format_number(x) if dtype.numeric else text


@njit(cache=True)
def _arx_modes(codes, start, size):
    """The mode of each class as ARX finds it: the codes of its rows (``codes[start[c]:
    start[c] + size[c]]``, in row order) added to ARX's ``Distribution`` (open addressing,
    home bucket ``code mod capacity``, linear probing, capacity 8 doubled past 3/4 full), then
    the first bucket of the largest count."""
    out = np.empty(start.shape[0], np.int64)
    for c in range(start.shape[0]):
        cap, used, threshold = 8, 0, 6
        table = np.full(2 * cap, -1, np.int64)
        for r in range(start[c], start[c] + size[c]):
            e = codes[r]
            i = (e & (cap - 1)) << 1
            while table[i] != -1 and table[i] != e:
                i = (i + 2) & (2 * cap - 1)
            if table[i] == e:
                table[i + 1] += 1
                continue
            table[i], table[i + 1] = e, 1
            used += 1
            if used > threshold:  # ARX's rehash: re-add in bucket order
                grown = np.full(4 * cap, -1, np.int64)
                for j in range(0, 2 * cap, 2):
                    if table[j] != -1:
                        k = (table[j] & (2 * cap - 1)) << 1
                        while grown[k] != -1:
                            k = (k + 2) & (4 * cap - 1)
                        grown[k], grown[k + 1] = table[j], table[j + 1]
                cap *= 2
                threshold = int(cap * 0.75)
                table = grown
        best, mode = -1, -1
        for j in range(0, 2 * cap, 2):
            if table[j] != -1 and table[j + 1] > best:
                best, mode = table[j + 1], table[j]
        out[c] = mode
    return out


def aggregate_classes(values, cls: np.ndarray, n_classes: int, agg: Aggregation,
                      codes=None, labels=None) -> np.ndarray:
    """The released value of each of ``n_classes`` classes (object array of str): the
    aggregate of ``values`` (strings, one per row, in table order) over the rows of each class
    (``cls``, int64, one class per row).  ``codes`` and ``labels`` (optional) number the
    values in order of first appearance in the whole column (ARX's dictionary, which decides
    the mode among equally frequent values); by default in ``values``."""
    dtype = agg.dtype or infer_type(values)
    text = np.asarray(pd.Series(np.asarray(values, dtype=object)).astype(str), dtype=object)
    out = np.full(n_classes, NULL_VALUE, dtype=object)
    size = np.bincount(cls, minlength=n_classes)
    start = np.concatenate([[0], np.cumsum(size)])[:-1]
    live = np.flatnonzero(size)
    if agg.function == "mode":
        if codes is None:
            codes, labels = encode_column(text)
        by_class = np.argsort(cls, kind="stable")  # rows of each class in table order
        modes = _arx_modes(np.asarray(codes, dtype=np.int64)[by_class], start[live],
                           size[live])
        out[live] = np.asarray(labels, dtype=object)[modes]
        return out
    keys = dtype.keys(text, agg.column)
    if agg.function in ("mean", "geomean"):
        x = keys if agg.function == "mean" else np.log(keys + 1.0)
        m = np.bincount(cls, weights=x, minlength=n_classes) / np.maximum(size, 1)
        m = m if agg.function == "mean" else np.exp(m) - 1.0
        out[live] = [dtype.format_number(v) for v in m[live]]
        return out
    order = np.lexsort((keys, cls))
    s, n = start[live], size[live]
    if agg.function == "interval":
        lo, hi = order[s], order[s + n - 1]
        out[live] = ["[" + _numeric_label(dtype, keys[a], text[a]) + ", " +
                     _numeric_label(dtype, keys[b], text[b]) + "]" for a, b in zip(lo, hi)]
        return out
    lo, hi = order[s + (n - 1) // 2], order[s + n // 2]  # the middle row(s)
    labels = []
    for a, b in zip(lo, hi):
        if a == b or (not dtype.numeric and keys[a] == keys[b]):
            labels.append(_numeric_label(dtype, keys[a], text[a]))
        elif dtype.numeric:
            labels.append(dtype.format_number((keys[a] + keys[b]) / 2.0))
        else:
            labels.append(NULL_VALUE)
    out[live] = labels
    return out


def aggregated_column(values, row_codes: np.ndarray, suppressed: np.ndarray,
                      agg: Aggregation) -> np.ndarray:
    """The released column (object array, one value per row): the aggregate of ``values`` in
    each row's class (rows of equal generalized codes ``row_codes`` (n, q)), ``*`` in the
    suppressed rows."""
    kept = np.flatnonzero(~suppressed)
    out = np.full(len(suppressed), "*", dtype=object)
    if len(kept) == 0:
        return out
    _, cls = np.unique(np.asarray(row_codes)[kept], axis=0, return_inverse=True)
    cls = cls.reshape(-1).astype(np.int64)
    text = pd.Series(np.asarray(values, dtype=object)).astype(str).to_numpy(dtype=object)
    codes, labels = encode_column(text)
    released = aggregate_classes(text[kept], cls, int(cls.max()) + 1, agg, codes[kept],
                                 labels)
    out[kept] = released[cls]
    return out
