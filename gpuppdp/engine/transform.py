"""Release: apply a lattice node to all rows.

The only step that touches N rows again: one gather per QID, suppression of the records in
classes that fail a privacy model, a random row permutation (so that row order cannot be
matched against the input, the "unsorted matching" attack of Sweeney 2002), and every other
kept column carried through unchanged.  Identifying attributes never reach the output.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from contextlib import closing
from dataclasses import dataclass, field
from typing import Callable, Iterable, NamedTuple

import numpy as np
import pandas as pd

from .codes import encode_column, smallest_int_dtype
from .encoding import Role, leaf_codes
from .evaluate import Evaluator
from .pipeline import ordered_map, row_numbered

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
                   write: Callable[[object], None], *, chunk_rows: int,
                   suppression: str = "mark", seed=None, spill_dir: str | None = None,
                   prepare: Callable[[pd.DataFrame], object] | None = None,
                   threads: int | None = None) -> Release:
    """:func:`release` of a table given as consecutive row chunks (the table ``evaluator`` was
    built on, see :func:`~gpuppdp.engine.encoding.encode_chunks`), handing the released rows
    to ``write`` in chunks of about ``chunk_rows`` rows, in a uniformly random order: each
    generalized chunk is spread over ``ceil(rows / chunk_rows)`` bucket files (Arrow IPC, in a
    temporary folder in ``spill_dir``) by independent uniform draws, then each bucket is
    shuffled in memory and written (Rao 1961, Sandelius 1962: a uniform random permutation in
    two passes).  Memory holds a few chunks and buckets, whatever the row count; the bucket
    files are removed however the call ends.  A table of one chunk is shuffled in memory.

    Host work runs on ``threads`` threads (:func:`~gpuppdp.engine.pipeline.ordered_map`): leaf
    codes, bucket files, shuffling and ``prepare`` (e.g. formatting for the output file; it
    gets each released chunk as a DataFrame and ``write`` gets what it returns, in order; by
    default ``write`` gets the DataFrame).  The backend's work and ``write`` run on the calling
    thread, chunk after chunk.  Every chunk and every bucket draws from its own stream spawned
    from ``seed`` in order, so a seed gives the same release whatever the threads.
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
    prepare = prepare or (lambda part: part)
    offset = suppressed = 0

    def coded(numbered: tuple[int, pd.DataFrame]) -> tuple[pd.DataFrame, list, int]:
        """A chunk, its host leaf codes and its first row (host threads)."""
        first, chunk = numbered
        return chunk, leaf_codes(chunk, enc.qi_names, enc.hierarchies, first), first

    def generalized(item) -> _Generalized:
        """The chunk's generalized codes and outliers (on the backend, chunk after chunk)."""
        nonlocal offset, suppressed
        chunk, codes, first = item
        row_codes = enc.generalize(levels, [be.asarray(c) for c in codes])
        outlier = be.to_host(enc.in_classes(levels, failing, row_codes)).astype(bool)
        offset += len(chunk)
        suppressed += int(outlier.sum())
        return _Generalized(chunk, be.to_host(row_codes), outlier, first, rng.spawn(1)[0])

    def released(g: _Generalized) -> pd.DataFrame:
        """The chunk's released columns, QIDs as codes into their categories (``*`` for
        suppressed rows), suppressed rows dropped when asked."""
        columns = released_columns(
            g.chunk.columns, enc,
            lambda j: np.where(g.outlier, star[enc.qi_names[j]],
                               g.row_codes[:, j]).astype(np.int32),
            lambda name: g.chunk[name].reset_index(drop=True))
        out = pd.DataFrame(columns)
        return out[~g.outlier].reset_index(drop=True) if suppression == "drop" else out

    def labelled(part: pd.DataFrame) -> pd.DataFrame:
        for name, labels in categories.items():
            if name in part.columns:
                part[name] = pd.Categorical.from_codes(part[name].to_numpy(), labels)
        return part

    generalized_chunks = map(generalized, ordered_map(coded, row_numbered(chunks),
                                                      threads=threads))
    if n_buckets == 1:
        parts = [released(g) for g in generalized_chunks]
        whole = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        write(prepare(labelled(whole.take(rng.permutation(len(whole))).reset_index(drop=True))))
    else:
        with _Buckets(n_buckets, spill_dir) as buckets:
            empty = None
            with closing(ordered_map(lambda g: buckets.scatter(released(g), g.first, g.rng),
                                     generalized_chunks, threads=threads)) as scattered:
                for part in scattered:
                    empty = part if empty is None else empty
            streams = rng.spawn(n_buckets)
            written = 0
            with closing(ordered_map(
                    lambda b: prepare(labelled(buckets.shuffled(b, streams[b]))),
                    buckets.filled(), threads=threads)) as shuffled:
                for part in shuffled:
                    write(part)
                    written += 1
            if not written:  # every row dropped: the columns still go out
                write(prepare(labelled(empty)))
    if offset != enc.n_rows:
        raise RuntimeError(f"the table changed while it was read: {offset} rows now, "
                           f"{enc.n_rows} when it was encoded")
    return Release(None, enc.n_rows, suppressed, suppression)


class _Generalized(NamedTuple):
    chunk: pd.DataFrame
    row_codes: np.ndarray    # (n, q) host codes at the released levels
    outlier: np.ndarray      # (n,) host bool: in a suppressed class
    first: int               # the chunk's first row in the table
    rng: np.random.Generator


class _Buckets:
    """The bucket files of a chunked release (see :func:`release_chunks`), in a temporary
    folder removed on exit: :meth:`scatter` (from any thread) appends each chunk's rows to
    uniformly drawn buckets, :meth:`shuffled` reads a bucket back in chunk order (whatever
    order the threads wrote it in) and shuffles it."""

    def __init__(self, n_buckets: int, spill_dir: str | None):
        self.n_buckets, self.spill_dir = n_buckets, spill_dir
        self._locks = [threading.Lock() for _ in range(n_buckets)]
        self._writers: dict = {}                                     # bucket -> open stream
        self._chunks: list[list[int]] = [[] for _ in range(n_buckets)]  # first row of each piece

    def __enter__(self) -> "_Buckets":
        self._folder = tempfile.TemporaryDirectory(prefix=".gpuppdp-buckets-",
                                                   dir=self.spill_dir)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._close_writers()
        finally:
            self._folder.cleanup()

    def _path(self, b: int) -> str:
        return os.path.join(self._folder.name, f"{b}.arrows")

    def _close_writers(self) -> None:
        while self._writers:
            self._writers.popitem()[1].close()

    def scatter(self, part: pd.DataFrame, first: int, rng: np.random.Generator
                ) -> pd.DataFrame:
        """Append the rows of ``part`` (the chunk from row ``first``) to buckets drawn by
        ``rng``; returns ``part``'s columns without rows."""
        import pyarrow as pa  # noqa: PLC0415 - only for chunked releases
        import pyarrow.ipc as ipc  # noqa: PLC0415

        bucket = rng.integers(0, self.n_buckets, size=len(part))
        # the same stable order; NumPy radix-sorts keys of 16 bits or less
        order = np.argsort(bucket.astype(smallest_int_dtype(self.n_buckets)), kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(self.n_buckets + 1))
        batch = pa.RecordBatch.from_pandas(part.take(order), preserve_index=False)
        for b in np.flatnonzero(np.diff(bounds)):
            with self._locks[b]:
                if b not in self._writers:
                    self._writers[b] = ipc.new_stream(self._path(b), batch.schema)
                self._writers[b].write_batch(batch.slice(bounds[b], bounds[b + 1] - bounds[b]))
                self._chunks[b].append(first)
        return part.iloc[:0].copy()

    def filled(self) -> list[int]:
        """The buckets holding rows (their files closed: every scatter is done)."""
        self._close_writers()
        return [b for b in range(self.n_buckets) if self._chunks[b]]

    def shuffled(self, b: int, rng: np.random.Generator) -> pd.DataFrame:
        """Bucket ``b``'s rows in chunk order, then in an order drawn by ``rng``; its file is
        removed."""
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.ipc as ipc  # noqa: PLC0415

        with ipc.open_stream(self._path(b)) as reader:
            batches = list(reader)
        os.unlink(self._path(b))
        in_order = np.argsort(np.asarray(self._chunks[b]), kind="stable")
        table = pa.Table.from_batches([batches[i] for i in in_order])
        return table.take(rng.permutation(table.num_rows)).to_pandas()
