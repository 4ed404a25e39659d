"""Release: apply a lattice node to all rows.

The only step that touches N rows again: one gather per QID, suppression of the records in
classes that fail a privacy model, a random row permutation (so that row order cannot be
matched against the input, the "unsorted matching" attack of Sweeney 2002), and every other
kept column carried through unchanged.  Identifying attributes never reach the output.
"""

from __future__ import annotations

import itertools
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from .codes import encode_column, smallest_int_dtype
from .encoding import Role, leaf_codes
from .evaluate import Evaluator

__all__ = ["Release", "release", "release_chunks", "released_columns", "suppressed_rows",
           "all_suppressed", "categories_of", "SUPPRESSED_LABEL", "SUPPRESSION_MODES"]

SUPPRESSED_LABEL = "*"
SUPPRESSION_MODES = ("mark", "drop")


@dataclass
class Release:
    """A released table and its accounting: ``released_rows + suppressed_rows == input_rows``
    when suppressed rows are dropped; with ``mark`` they stay in the table with ``*`` QIDs.
    ``source_rows`` (host int64, not for publication) is the input position of every released
    row, undoing the row permutation for utility measures (:mod:`gpuppdp.analysis.utility`).
    A release written chunk by chunk has ``path`` and neither ``data`` nor ``source_rows``."""

    data: pd.DataFrame | None
    input_rows: int
    suppressed_rows: int
    suppression: str
    source_rows: np.ndarray | None = field(default=None, repr=False, compare=False)
    path: str | None = None
    """The file the release was written to by :func:`release_chunks` (``data`` is then
    ``None``)."""

    @property
    def released_rows(self) -> int:
        return self.input_rows - self.suppressed_rows

    @property
    def rows_in_release(self) -> int:
        """Rows of the released table: every input row when suppressed rows are marked."""
        return self.input_rows if self.suppression == "mark" else self.released_rows


def factorize_qids(data: pd.DataFrame, qids) -> tuple[list, list, np.ndarray]:
    """``(codes, cards, suppressed)``: each QID column encoded once by
    :func:`~gpuppdp.engine.codes.encode_column` (host int64 codes in order of first appearance,
    number of distinct values) and the host bool mask of the rows whose QIDs are all ``*``;
    only the distinct values of each column are compared with ``*``."""
    codes, labels = [], []
    for q in qids:
        col, lab = encode_column(data[q], as_str=True)
        codes.append(col.astype(np.int64))
        labels.append(lab)
    return codes, [max(len(lab), 1) for lab in labels], all_suppressed(codes, labels,
                                                                       len(data))


def all_suppressed(codes, labels, n: int) -> np.ndarray:
    """Host bool mask of the ``n`` rows whose every QID (``codes[j]`` into ``labels[j]``) is
    ``*``; only the labels are compared with ``*``."""
    mask = np.ones(n, dtype=bool)
    for col, lab in zip(codes, labels):
        mask &= (np.asarray(lab) == SUPPRESSED_LABEL)[col]
    return mask


def suppressed_rows(data: pd.DataFrame, qids) -> np.ndarray:
    """Host bool mask of the rows of a release whose QIDs are all ``*`` (suppressed)."""
    return factorize_qids(data, qids)[2]


def released_columns(columns, enc, qid: Callable[[int], object],
                     other: Callable[[str], object]) -> dict:
    """The columns of a release in the table's order: identifying and dropped columns left
    out, QID ``j`` of ``enc`` (an :class:`~gpuppdp.engine.encoding.EncodedTable`) as
    ``qid(j)``, any other kept column ``name`` as ``other(name)``."""
    out = {}
    for name in columns:
        role = enc.roles.get(name)
        if role is Role.QUASI_IDENTIFYING:
            out[name] = qid(enc.qi_names.index(name))
        elif role is not None and role is not Role.IDENTIFYING:
            out[name] = other(name)
    return out


def categories_of(labels) -> tuple[list, int]:
    """The categories of a released QID column at one level: its labels and ``*`` (added
    unless it is one of them), and the position of ``*``."""
    categories = list(labels)
    if SUPPRESSED_LABEL not in categories:
        categories.append(SUPPRESSED_LABEL)
    return categories, categories.index(SUPPRESSED_LABEL)


def _labels(labels: np.ndarray, codes: np.ndarray, suppressed: np.ndarray) -> pd.Categorical:
    """Generalized labels as a categorical column (no per-row strings), ``*`` if suppressed."""
    categories, star = categories_of(labels)
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
    columns = released_columns(
        data.columns, enc,
        lambda j: _labels(enc.hierarchies[j].labels(int(levels[j])), codes[:, j],
                          shown_suppressed),
        lambda name: data[name].take(order).reset_index(drop=True))
    return Release(pd.DataFrame(columns), enc.n_rows, int(outlier.sum()), suppression,
                   order.astype(np.int64))


def release_chunks(chunks: Iterable[pd.DataFrame], evaluator: Evaluator, levels,
                   write: Callable[[pd.DataFrame], None], *, chunk_rows: int,
                   suppression: str = "mark", seed=None, spill_dir: str | None = None
                   ) -> Release:
    """:func:`release` of a table given as consecutive row chunks (the table ``evaluator`` was
    built on, see :func:`~gpuppdp.engine.encoding.encode_chunks`), handing the released rows
    to ``write`` in chunks of about ``chunk_rows`` rows, in a uniformly random order: each
    generalized chunk is spread over ``ceil(rows / chunk_rows)`` bucket files (Arrow IPC, in a
    temporary folder in ``spill_dir``) by independent uniform draws, then each bucket is
    shuffled in memory and written (Rao 1961, Sandelius 1962: a uniform random permutation in
    two passes).  Memory holds a chunk and a bucket, whatever the row count; the bucket files
    are removed however the call ends.  A table of one chunk is shuffled in memory.
    """
    if suppression not in SUPPRESSION_MODES:
        raise ValueError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    enc, be = evaluator.encoded, evaluator.backend
    levels = np.asarray(levels, dtype=np.int64)
    failing = evaluator.suppressed_classes(levels)
    categories, star = {}, {}
    for j, name in enumerate(enc.qi_names):
        categories[name], star[name] = categories_of(enc.hierarchies[j].labels(int(levels[j])))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_buckets = max(1, math.ceil(enc.n_rows / chunk_rows))
    offset = suppressed = 0

    def generalized(chunk: pd.DataFrame) -> pd.DataFrame:
        """The chunk's released columns, QIDs as codes into their categories (``*`` for
        suppressed rows), suppressed rows dropped when asked."""
        nonlocal offset, suppressed
        codes = [be.asarray(c) for c in leaf_codes(chunk, enc.qi_names, enc.hierarchies,
                                                   offset)]
        row_codes = enc.generalize(levels, codes)
        outlier = be.to_host(enc.in_classes(levels, failing, row_codes)).astype(bool)
        row_codes = be.to_host(row_codes)
        offset += len(chunk)
        suppressed += int(outlier.sum())
        columns = released_columns(
            chunk.columns, enc,
            lambda j: np.where(outlier, star[enc.qi_names[j]], row_codes[:, j]).astype(np.int32),
            lambda name: chunk[name].reset_index(drop=True))
        out = pd.DataFrame(columns)
        return out[~outlier].reset_index(drop=True) if suppression == "drop" else out

    def labelled(part: pd.DataFrame) -> pd.DataFrame:
        for name, labels in categories.items():
            if name in part.columns:
                part[name] = pd.Categorical.from_codes(part[name].to_numpy(), labels)
        return part

    if n_buckets == 1:
        parts = [generalized(chunk) for chunk in chunks]
        whole = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        write(labelled(whole.take(rng.permutation(len(whole))).reset_index(drop=True)))
    else:
        parts = map(generalized, chunks)
        first = next(parts)
        written = _bucket_shuffle(itertools.chain([first], parts), n_buckets, rng, spill_dir,
                                  lambda part: write(labelled(part)))
        if not written:  # every row dropped: the columns still go out
            write(labelled(first.iloc[:0].copy()))
    if offset != enc.n_rows:
        raise RuntimeError(f"the table changed while it was read: {offset} rows now, "
                           f"{enc.n_rows} when it was encoded")
    return Release(None, enc.n_rows, suppressed, suppression)


def _bucket_shuffle(parts: Iterable[pd.DataFrame], n_buckets: int, rng: np.random.Generator,
                    spill_dir: str | None, write: Callable[[pd.DataFrame], None]) -> int:
    """Hand the rows of ``parts`` to ``write`` in a uniformly random order, one shuffled bucket
    at a time (see :func:`release_chunks`); returns the number of rows written."""
    import pyarrow as pa  # noqa: PLC0415 - only for chunked releases
    import pyarrow.ipc as ipc  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix=".gpuppdp-buckets-", dir=spill_dir) as folder:
        paths = [os.path.join(folder, f"{b}.arrows") for b in range(n_buckets)]
        writers = [None] * n_buckets
        try:
            for part in parts:
                bucket = rng.integers(0, n_buckets, size=len(part))
                # the same stable order; NumPy radix-sorts keys of 16 bits or less
                order = np.argsort(bucket.astype(smallest_int_dtype(n_buckets)), kind="stable")
                bounds = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
                table = pa.Table.from_pandas(part.take(order), preserve_index=False)
                for b in np.flatnonzero(np.diff(bounds)):
                    if writers[b] is None:
                        writers[b] = ipc.new_stream(paths[b], table.schema)
                    writers[b].write_table(table.slice(bounds[b], bounds[b + 1] - bounds[b]))
        finally:
            for w in writers:
                if w is not None:
                    w.close()
        written = 0
        for b in range(n_buckets):
            if writers[b] is None:
                continue
            with ipc.open_stream(paths[b]) as reader:
                table = reader.read_all()
            os.unlink(paths[b])
            table = table.take(rng.permutation(table.num_rows))
            write(table.to_pandas())
            written += table.num_rows
    return written
