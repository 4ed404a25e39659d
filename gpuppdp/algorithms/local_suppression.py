"""sdcMicro-style local suppression: the fewest quasi-identifier cells set to ``*`` so that
every record is compatible with at least ``k`` records (Templ, Kowarik & Meindl 2015,
"Statistical disclosure control for micro-data using the R package sdcMicro", JSS 67(4),
Section 4.2, ``localSuppression`` / ``kAnon``).

The convention is sdcMicro's (``freqCalc`` with alpha = 1): a suppressed cell matches any value,
so record ``i``'s frequency ``fk(i)`` counts the records equal to it in every column where
neither shows ``*`` (itself included; :func:`gpuppdp.analysis.checker.wildcard_class_sizes`).
Suppressing a cell never lowers any ``fk``.  The greedy works in passes, each batched over every
record still below ``k``: for each such record and each of its unsuppressed QIDs it counts the
``fk`` the record would have with that cell suppressed (one batched count for all of them),
and picks the least important QID that lifts it to ``k`` -- or, if none does, the one that
lifts it most (ties: the least important), as sdcMicro suppresses the least important
variable that makes the record match its nearest records.  Of the records the picks would
make identical, only the first (in row order) is suppressed in a pass: the others then match
it and may need no cell of their own.  Passes repeat until every ``fk >= k`` (each suppresses
at least one cell).  Importance is the order of ``importance`` (most important first); by default,
sdcMicro's: QIDs with more distinct values are less important.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..analysis.checker import cell_codes, wildcard_class_sizes
from ..engine.transform import SUPPRESSED_LABEL
from ..errors import InputError, InputTypeError
from ..validation import check_columns, check_complete, check_int, column_list, format_values

__all__ = ["LocalSuppression", "local_suppression"]


@dataclass
class LocalSuppression:
    """``released`` (``data`` with suppressed QID cells ``*``), the QIDs in the order
    ``importance`` took (most important first), the new ``suppressed_cells`` per QID, the
    ``passes`` the greedy made and the records with a new suppressed cell."""

    released: pd.DataFrame
    k: int
    importance: list[str]
    suppressed_cells: dict[str, int]
    records: int
    passes: int

    def summary(self) -> dict:
        return {"k": self.k, "importance": list(self.importance),
                "suppressed_cells": dict(self.suppressed_cells),
                "total_cells": int(sum(self.suppressed_cells.values())),
                "records_with_suppressed_cells": self.records, "passes": self.passes}


def _importance(data: pd.DataFrame, qids: list[str], importance) -> list[str]:
    """The QIDs, most important first."""
    if importance is None:  # sdcMicro's default: fewer distinct values, more important
        distinct = [data[q].nunique() for q in qids]
        return [qids[i] for i in np.argsort(distinct, kind="stable")]
    order = column_list(importance)
    if sorted(order) != sorted(qids) or len(set(order)) != len(order):
        raise InputError(f"importance must name every quasi-identifier once "
                         f"({format_values(qids)}), got {format_values(order)}")
    return order


def local_suppression(data: pd.DataFrame, quasi_identifiers: Sequence[str], k: int, *,
                      importance: Sequence[str] | None = None) -> LocalSuppression:
    """Suppress QID cells of ``data`` (values as they are: raw or generalized; ``*`` cells
    count as suppressed) until every record's ``fk`` is at least ``k`` (see the module).
    ``importance``: every QID, most important (suppressed last) first."""
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    qids = check_columns("quasi_identifiers", data, quasi_identifiers)
    k = check_int("k", k, 1)
    if k > len(data):
        raise InputError(f"k={k} exceeds the table's {len(data)} rows")
    check_complete(data, qids)
    order = _importance(data, qids, importance)
    codes, _, cards = cell_codes(data, qids)
    before = codes < 0
    # columns from the least important (tried first) to the most
    least_first = np.array([qids.index(q) for q in reversed(order)], dtype=np.int64)
    n, q = codes.shape
    passes = 0
    fk = wildcard_class_sizes(codes, codes, cards)
    while (fk < k).any():
        rows = np.flatnonzero(fk < k)
        # every (record, QID) candidate: the record with that one cell suppressed
        trial = np.repeat(codes[rows][:, None, :], q, axis=1)
        trial[:, np.arange(q), np.arange(q)] = -1
        gain = wildcard_class_sizes(trial.reshape(-1, q), codes, cards).reshape(len(rows), q)
        gain[codes[rows] < 0] = -1                     # already suppressed: not a choice
        gain = gain[:, least_first]
        reached = gain >= k
        column = least_first[np.where(reached.any(axis=1), reached.argmax(axis=1),
                                      gain.argmax(axis=1))]
        # records that would become the same: one of them this pass (the others may then
        # match it and need no cell of their own)
        target = codes[rows]
        target[np.arange(len(rows)), column] = -1
        _, first = np.unique(target, axis=0, return_index=True)
        codes[rows[first], column[first]] = -1
        passes += 1
        fk = wildcard_class_sizes(codes, codes, cards)
    new = (codes < 0) & ~before
    released = data.copy()
    for j, name in enumerate(qids):
        if new[:, j].any():
            values = released[name].astype(object).to_numpy(copy=True)
            values[new[:, j]] = SUPPRESSED_LABEL
            released[name] = values
    return LocalSuppression(released, k, order,
                            {name: int(new[:, j].sum()) for j, name in enumerate(qids)},
                            int(new.any(axis=1).sum()), passes)
