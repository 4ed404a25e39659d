"""Release: apply a lattice node to all rows.

The only step that touches N rows again: one gather per QID, suppression of the records in
classes that fail a privacy model, a random row permutation (so that row order cannot be
matched against the input, the "unsorted matching" attack of Sweeney 2002), and every other
kept column carried through unchanged.  Identifying attributes never reach the output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .codes import encode_column
from .encoding import Role
from .evaluate import Evaluator

__all__ = ["Release", "release", "suppressed_rows", "SUPPRESSED_LABEL", "SUPPRESSION_MODES"]

SUPPRESSED_LABEL = "*"
SUPPRESSION_MODES = ("mark", "drop")


@dataclass
class Release:
    """A released table and its accounting: ``released_rows + suppressed_rows == input_rows``
    when suppressed rows are dropped; with ``mark`` they stay in the table with ``*`` QIDs.
    ``source_rows`` (host int64, not for publication) is the input position of every released
    row, undoing the row permutation for utility measures (:mod:`gpuppdp.analysis.utility`)."""

    data: pd.DataFrame
    input_rows: int
    suppressed_rows: int
    suppression: str
    source_rows: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def released_rows(self) -> int:
        return self.input_rows - self.suppressed_rows


def factorize_qids(data: pd.DataFrame, qids) -> tuple[list, list, np.ndarray]:
    """``(codes, cards, suppressed)``: each QID column encoded once by
    :func:`~gpuppdp.engine.codes.encode_column` (host int64 codes in order of first appearance,
    number of distinct values) and the host bool mask of the rows whose QIDs are all ``*``;
    only the distinct values of each column are compared with ``*``."""
    codes, cards = [], []
    mask = np.ones(len(data), dtype=bool)
    for q in qids:
        col, labels = encode_column(data[q], as_str=True)
        codes.append(col.astype(np.int64))
        cards.append(max(len(labels), 1))
        mask &= (labels == SUPPRESSED_LABEL)[col]
    return codes, cards, mask


def suppressed_rows(data: pd.DataFrame, qids) -> np.ndarray:
    """Host bool mask of the rows of a release whose QIDs are all ``*`` (suppressed)."""
    return factorize_qids(data, qids)[2]


def _labels(labels: np.ndarray, codes: np.ndarray, suppressed: np.ndarray) -> pd.Categorical:
    """Generalized labels as a categorical column (no per-row strings), ``*`` if suppressed."""
    categories = list(labels)
    if SUPPRESSED_LABEL not in categories:
        categories.append(SUPPRESSED_LABEL)
    star = categories.index(SUPPRESSED_LABEL)
    return pd.Categorical.from_codes(np.where(suppressed, star, codes), categories=categories)


def release(data: pd.DataFrame, evaluator: Evaluator, levels, *, suppression: str = "mark",
            seed=None) -> Release:
    """Generalize ``data`` (the table ``evaluator`` was built on) to node ``levels``.

    Parameters
    ----------
    suppression : {"mark", "drop"}
        ``mark`` replaces the QIDs of suppressed records with ``*``; ``drop`` removes them.
    seed : int, numpy Generator or None
        Seed of the row permutation (``None``: fresh OS entropy).
    """
    if suppression not in SUPPRESSION_MODES:
        raise ValueError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    enc = evaluator.encoded
    be = evaluator.backend
    levels = np.asarray(levels, dtype=np.int64)
    row_outlier, row_codes = evaluator.row_outliers(levels)
    outlier = be.to_host(row_outlier).astype(bool)
    keep = ~outlier if suppression == "drop" else np.ones(len(outlier), dtype=bool)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = rng.permutation(np.flatnonzero(keep))
    codes = be.to_host(row_codes)[order]
    shown_suppressed = outlier[order]
    columns = {}
    for name in data.columns:
        role = enc.roles.get(name)
        if role is None or role is Role.IDENTIFYING:
            continue
        if role is Role.QUASI_IDENTIFYING:
            j = enc.qi_names.index(name)
            columns[name] = _labels(enc.hierarchies[j].labels(int(levels[j])), codes[:, j],
                                    shown_suppressed)
        else:
            columns[name] = data[name].take(order).reset_index(drop=True)
    return Release(pd.DataFrame(columns), enc.n_rows, int(outlier.sum()), suppression,
                   order.astype(np.int64))
