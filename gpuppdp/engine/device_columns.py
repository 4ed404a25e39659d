"""Columns of a cuDF frame encoded on the device: the table's rows stay in GPU memory, only
each column's distinct values (and the distinct combinations of several) come to the host.

* :class:`Factorized` -- one column factorized by cuDF (``Series.factorize``: codes in order of
  first appearance, ``-1`` for a null), a missing cell (null or NaN) the value ``NULL``;
* :func:`leaf_codes` -- the quasi-identifiers' leaf codes: each column's distinct values
  matched with its hierarchy's leaves on the host
  (:func:`~gpuppdp.core.codes.encode_column`), then one gather of that lookup table per row;
* :func:`combinations` -- the distinct combinations of several columns, grouped on the device
  (:func:`~gpuppdp.kernels.groupby.group`), with their counts;
* :func:`counted_rows` -- those as the weighted chunk the chunked measures take
  (``check_chunks`` and ``risk_report_chunks``, ``weight_column=COUNT_COLUMN``).

Errors are the pandas path's: a missing value in a QID whose hierarchy lacks ``NULL``, values
outside a hierarchy (:class:`~gpuppdp.core.codes.UnknownValuesError`, with their count and
first row; the rows' mask is copied to the host on the error path only).  The frames are
:mod:`gpuppdp.device_frames`'s.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..backend import Backend
from ..core.codes import UnknownValuesError, encode_column
from ..core.datatypes import NULL
from ..errors import InputError
from ..kernels import groupby
from .encoding import missing_error, with_null

__all__ = ["Factorized", "leaf_codes", "combinations", "counted_rows", "COUNT_COLUMN"]

#: the column of :func:`counted_rows` holding each distinct row's count
COUNT_COLUMN = "__gpuppdp_count__"


class Factorized:
    """One column factorized on the device: ``codes`` (device int64) index ``values`` (host
    pandas Series, distinct values in order of first appearance; a missing cell -- null or
    NaN -- the value ``NULL``, at the end when only nulls stand for it); ``missing`` (host
    bool per value) marks the values that stand for missing cells."""

    def __init__(self, column, backend: Backend):
        xp = backend.xp
        codes, uniques = column.factorize()
        codes = backend.asarray(codes).astype(xp.int64)
        values, miss = with_null(pd.Series(uniques.to_pandas(), copy=False))
        if int(xp.count_nonzero(codes < 0)):        # nulls: one more value, NULL
            values = pd.concat([values.astype(object), pd.Series([NULL], dtype=object)],
                               ignore_index=True)
            miss = np.append(np.zeros(len(values) - 1, bool) if miss is None else miss, True)
            codes = xp.where(codes < 0, len(values) - 1, codes)
        self.codes, self.values = codes, values.reset_index(drop=True)
        self.missing = np.zeros(len(values), bool) if miss is None else np.asarray(miss)

    def rows(self, backend: Backend, which: np.ndarray) -> np.ndarray:
        """Host bool mask of the rows holding one of the values ``which`` marks (for an
        error's count and first row: a transfer of the rows' mask, on the error path only)."""
        return backend.to_host(backend.asarray(which)[self.codes])


def _leaf_codes(column, name: str, h, backend: Backend, row_offset: int):
    """Device leaf codes of one QID column of a cuDF frame (see the module docstring)."""
    col = Factorized(column, backend)
    if col.missing.any() and not (h.leaves == NULL).any():
        raise missing_error(name, h, col.rows(backend, col.missing), row_offset)
    lut = encode_column(col.values, domain=h.leaf_domain, name=name, unknown="missing")[0]
    unknown = lut < 0
    if unknown.any():
        rows = col.rows(backend, unknown)
        raise UnknownValuesError(name, sorted(str(v) for v in col.values[unknown]),
                                 int(rows.sum()), row_offset + int(np.argmax(rows)))
    return backend.asarray(lut)[col.codes]


def leaf_codes(data, qi_names: Sequence[str], hierarchies, backend: Backend,
               row_offset: int = 0) -> list:
    """Device leaf codes of every QID column of cuDF frame ``data`` (rows numbered from
    ``row_offset`` in errors), as :func:`gpuppdp.engine.encoding.leaf_codes` gives them for a
    pandas one."""
    return [_leaf_codes(data[c], c, h, backend, row_offset) for c, h in zip(qi_names, hierarchies)]


def combinations(data, names: Sequence[str], backend: Backend) -> tuple:
    """``(group, distinct, counts)``: each row's combination of the columns ``names`` of cuDF
    frame ``data`` numbered in order of first appearance (device int64), those combinations
    (a host DataFrame, a missing value ``NULL``) and how many rows hold each (host): grouped
    on the device, only the distinct combinations on the host."""
    return _grouped([Factorized(data[name], backend) for name in names], names, backend)


def _grouped(columns: list[Factorized], names: Sequence[str], backend: Backend) -> tuple:
    """:func:`combinations` of columns factorized already."""
    xp = backend.xp
    group, rep, _ = groupby.group(xp, [c.codes for c in columns],
                                  [len(c.values) for c in columns])
    distinct = pd.DataFrame({name: c.values.to_numpy()[backend.to_host(c.codes[rep])]
                             for name, c in zip(names, columns)})
    return group, distinct, backend.to_host(xp.bincount(group, minlength=int(rep.shape[0])))


def counted_rows(data, columns: Sequence[str], backend: Backend, *,
                 complete: bool = False) -> pd.DataFrame:
    """The distinct rows of ``columns`` of cuDF frame ``data`` in order of first appearance,
    each with its count in :data:`COUNT_COLUMN` (a host DataFrame: the weighted chunk of the
    chunked measures).  With ``complete`` a missing value is an error naming its column, its
    count and its first row (:func:`gpuppdp.validation.check_complete`'s), else the value
    ``NULL``.  Each column is factorized once."""
    factorized = [Factorized(data[name], backend) for name in columns]
    for name, col in zip(columns, factorized):
        if complete and col.missing.any():
            rows = col.rows(backend, col.missing)
            first = int(np.argmax(rows))
            error = InputError(f"column {name!r} has {int(rows.sum())} missing value(s), "
                               f"first at row {first}")
            error.row = first
            raise error
    _, distinct, counts = _grouped(factorized, columns, backend)
    distinct[COUNT_COLUMN] = counts
    return distinct
