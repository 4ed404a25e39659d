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
from typing import Any, Callable, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

from ..core.codes import encode_column, smallest_int_dtype
from ..core.pipeline import Stopwatch, ordered_map
from ..errors import InputError
from ..stops import temporary_folder
from .encoding import Role
from .evaluate import Evaluator
from .microaggregation import aggregated_column

__all__ = ["Release", "release", "RowBuckets", "release_buckets", "released_columns",
           "suppressed_rows", "all_suppressed", "carried_column", "categories_of",
           "labelled_codes", "SUPPRESSED_LABEL", "SUPPRESSION_MODES"]

SUPPRESSED_LABEL = "*"
SUPPRESSION_MODES = ("mark", "drop")


@dataclass
class Release:
    """A released table and its accounting: ``released_rows + suppressed_rows == input_rows``
    when suppressed rows are dropped; with ``mark`` they stay in the table with ``*`` QIDs.
    ``source_rows`` (host int64, not for publication; a device array when ``data`` is a cuDF
    frame) is the input position of every released row, undoing the row permutation for
    utility measures (:mod:`gpuppdp.analysis.utility`).
    A release written chunk by chunk has ``path`` and neither ``data`` nor ``source_rows``."""

    data: pd.DataFrame | None
    input_rows: int
    suppressed_rows: int
    suppression: str
    source_rows: np.ndarray | None = field(default=None, repr=False, compare=False)
    path: str | None = None
    """The file the release was written to by :func:`release_buckets` (``data`` is then
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
    :func:`~gpuppdp.core.codes.encode_column` (host int64 codes in order of first appearance,
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


def carried_column(data: pd.DataFrame, name: str, order: np.ndarray) -> pd.Series:
    """Column ``name`` of ``data`` as released: its rows ``order`` (host positions), its dtype
    kept, a fresh range index (one gather of its array, without the frame's indexing)."""
    return pd.Series(data[name].array.take(order), name=name)


def categories_of(labels) -> tuple[pd.CategoricalDtype, int]:
    """The categories of a released QID column at one level, as the categorical dtype of its
    labels and ``*`` (added unless it is one of them), and the position of ``*``.  Built once
    per release: a column of many chunks reuses it."""
    categories = list(labels)
    if SUPPRESSED_LABEL not in categories:
        categories.append(SUPPRESSED_LABEL)
    return pd.CategoricalDtype(categories), categories.index(SUPPRESSED_LABEL)


def labelled_codes(categories: tuple[pd.CategoricalDtype, int], codes: np.ndarray,
                   suppressed: np.ndarray) -> pd.Categorical:
    """A released QID column as a categorical (no per-row strings): ``codes`` into the labels
    of ``categories`` (:func:`categories_of`), ``*`` where ``suppressed``."""
    dtype, star = categories
    return pd.Categorical.from_codes(np.where(suppressed, star, codes), dtype=dtype)


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
        raise InputError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    enc = evaluator.encoded
    be = evaluator.backend
    levels = np.asarray(levels, dtype=np.int64)
    row_outlier, row_codes = evaluator.row_outliers(levels)
    outlier = be.to_host(row_outlier).astype(bool)
    keep = ~outlier if suppression == "drop" else np.ones(len(outlier), dtype=bool)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = rng.permutation(np.flatnonzero(keep))
    all_codes = be.to_host(row_codes)
    codes = all_codes.take(order, axis=0)  # (2.5x a fancy index's speed on (n, q) codes)
    shown_suppressed = outlier[order]
    columns = released_columns(
        data.columns, enc,
        lambda j: labelled_codes(categories_of(enc.hierarchies[j].labels(int(levels[j]))),
                                 codes[:, j], shown_suppressed),
        lambda name: carried_column(data, name, order))
    for name, agg in enc.microaggregation.items():  # one aggregate per class
        columns[name] = pd.Series(aggregated_column(data[name].to_numpy(), all_codes, outlier,
                                                    agg)[order])
    # the columns are new arrays: the frame takes them as they are, not copied once more
    return Release(pd.DataFrame(columns, copy=False), enc.n_rows, int(outlier.sum()),
                   suppression, order.astype(np.int64))


class RowBuckets:
    """The rows of a table read once, chunk by chunk, kept for its release in bucket files
    (Arrow IPC, in a temporary folder in ``spill_dir``, removed on leaving the context however
    it ends): QIDs as leaf codes, every other column as read.

    :meth:`scatter` (from any thread, e.g. as
    :func:`~gpuppdp.engine.chunked_encoding.encode_chunks`'s ``tee``) appends each row of a
    chunk to one of ``ceil(rows / chunk_rows)`` buckets drawn uniformly and independently;
    :func:`release_buckets` then reads each bucket back, in chunk order whatever order the
    threads wrote it in, generalizes and shuffles it in memory (Rao 1961, Sandelius 1962: a
    uniform random permutation in two passes). Every chunk and every bucket draws from its own
    stream spawned from ``seed`` (keyed by the chunk's first row, or the bucket's number), so a
    seed gives the same release whatever the threads. Memory holds a few chunks or buckets,
    whatever the row count.
    """

    def __init__(self, rows: int, chunk_rows: int, qi_names, *, spill_dir: str | None = None,
                 seed=None):
        self.n_buckets = max(1, math.ceil(rows / chunk_rows))
        self.qi_names = list(qi_names)
        self.spill_dir = spill_dir
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._chunk_seeds, self._bucket_seeds = (
            cast(np.random.SeedSequence, g.bit_generator.seed_seq) for g in rng.spawn(2))
        self._locks = [threading.Lock() for _ in range(self.n_buckets)]
        self._writers: dict = {}                                   # bucket -> open stream
        self._firsts: list[list[int]] = [[] for _ in range(self.n_buckets)]  # of each piece
        self._rows = np.zeros(self.n_buckets, dtype=np.int64)
        self._schema: pa.Schema | None = None                      # of the kept columns
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> "RowBuckets":
        self._folder = temporary_folder(prefix=".gpuppdp-buckets-", dir=self.spill_dir)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._close_writers()
        finally:
            if self._folder is not None:
                self._folder.cleanup()

    def _path(self, b: int | np.integer) -> str:
        assert self._folder is not None, "RowBuckets used outside its with block"
        return os.path.join(self._folder.name, f"{b}.arrows")

    def _close_writers(self) -> None:
        while self._writers:
            self._writers.popitem()[1].close()

    @staticmethod
    def _stream(seeds: np.random.SeedSequence, key: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(
            seeds.entropy, spawn_key=tuple(seeds.spawn_key) + (int(key),)))

    @property
    def rows(self) -> int:
        """Rows scattered so far."""
        return int(self._rows.sum())

    def scatter(self, first: int, chunk: "pd.DataFrame | pa.Table", codes: np.ndarray) -> None:
        """Keep the rows of ``chunk`` (rows ``first, first + 1, ...`` of the table; a DataFrame,
        or an Arrow table kept in Arrow, whose pandas types the release reads back), its QIDs
        as ``codes`` (n, q) host leaf codes in the order of ``qi_names``."""

        table = chunk if isinstance(chunk, pa.Table) else \
            pa.Table.from_pandas(chunk, preserve_index=False)
        names = table.column_names
        part = pa.table([pa.array(codes[:, self.qi_names.index(name)]) if name in self.qi_names
                         else table.column(name) for name in names], names=names,
                        metadata=table.schema.metadata)
        if self._schema is None:
            self._schema = part.schema
        n = part.num_rows
        bucket = self._stream(self._chunk_seeds, first).integers(0, self.n_buckets, size=n)
        # the same stable order; NumPy radix-sorts keys of 16 bits or less
        order = np.argsort(bucket.astype(smallest_int_dtype(self.n_buckets)), kind="stable")
        bounds = np.zeros(self.n_buckets + 1, dtype=np.int64)
        np.cumsum(np.bincount(bucket, minlength=self.n_buckets), out=bounds[1:])
        batch = part.take(order).combine_chunks().to_batches()[0]  # one batch a piece
        for b in np.flatnonzero(np.diff(bounds)):
            with self._locks[b]:
                if b not in self._writers:
                    self._writers[b] = ipc.new_stream(self._path(b), batch.schema)
                self._writers[b].write_batch(batch.slice(bounds[b], bounds[b + 1] - bounds[b]))
                self._firsts[b].append(first)
                self._rows[b] += bounds[b + 1] - bounds[b]

    def filled(self) -> list[int]:
        """The buckets holding rows (their files closed: call it once every scatter is done)."""
        self._close_writers()
        return [b for b in range(self.n_buckets) if self._firsts[b]]

    def read(self, b: int) -> pd.DataFrame:
        """Bucket ``b``'s rows in chunk order; its file is removed."""

        with ipc.open_stream(self._path(b)) as reader:
            batches = list(reader)
        os.unlink(self._path(b))
        in_order = np.argsort(np.asarray(self._firsts[b]), kind="stable")
        return self._frame(pa.Table.from_batches([batches[i] for i in in_order]))

    def empty(self) -> pd.DataFrame:
        """The kept columns (QIDs as codes), without rows."""
        assert self._schema is not None  # (rows were scattered)
        return self._frame(self._schema.empty_table())

    def _frame(self, table) -> pd.DataFrame:
        """A bucket's rows as a DataFrame: QIDs as NumPy codes, the other columns as pandas
        reads them (with the types the input's pandas metadata gives, if it has some; a stored
        pandas index becomes the index, as :func:`gpuppdp.io.read_table` reads it, and is
        let go with it)."""
        qids = [name for name in table.column_names if name in self.qi_names]
        others = table.drop_columns(qids).to_pandas().reset_index(drop=True)
        return pd.DataFrame({name: table.column(name).to_numpy() if name in self.qi_names
                             else others[name] for name in table.column_names
                             if name in self.qi_names or name in others.columns})

    def permutation(self, b: int, n: int) -> np.ndarray:
        """The order of bucket ``b``'s ``n`` released rows."""
        return self._stream(self._bucket_seeds, b).permutation(n)


def release_buckets(buckets: RowBuckets, evaluator: Evaluator, levels,
                    write: Callable[[Any], None], *, suppression: str = "mark",
                    prepare: Callable[[pd.DataFrame, int], object] | None = None,
                    threads: int | None = None) -> Release:
    """:func:`release` of the table kept in ``buckets`` (the table ``evaluator`` was built on),
    handing the released rows to ``write`` bucket by bucket, in a uniformly random order.

    Every bucket is read, generalized (with the CPU's kernels, whatever the backend: the
    rows are in host memory), shuffled and ``prepare`` d (e.g. formatted for the output file,
    or written as a dataset's file: it gets each released bucket as a DataFrame and the
    bucket's number, and ``write`` what it returns; by default ``write`` gets the DataFrame)
    on ``threads`` host threads (:func:`~gpuppdp.core.pipeline.ordered_map`); ``write``
    runs on the calling thread, bucket after bucket.
    """
    if suppression not in SUPPRESSION_MODES:
        raise InputError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    levels = np.asarray(levels, dtype=np.int64)
    # row-wise work on rows read from host files and written to host files: the host threads
    # do it with the CPU's kernels, whatever the backend (on the device, its one driving
    # thread would spend the release in copies and synchronizations)
    enc = evaluator.encoded.rows_on_host()
    # the suppressed classes, on the host once, tested bucket after bucket
    failing = enc.class_set(levels, evaluator.backend.to_host(
        evaluator.suppressed_classes(levels)))
    enc.level_maps()  # built before any thread reads them
    categories = [categories_of(h.labels(int(levels[j]))) for j, h in enumerate(enc.hierarchies)]
    prepare = prepare or (lambda part, b: part)
    if buckets.rows != enc.n_rows:
        raise RuntimeError(f"{buckets.rows} rows were kept for the release of a table of "
                           f"{enc.n_rows} rows")

    def labelled(part: pd.DataFrame, row_codes: np.ndarray, outlier: np.ndarray
                 ) -> pd.DataFrame:
        """``part`` with its QIDs as released (``row_codes`` (n, q) at the node)."""
        for j, name in enumerate(enc.qi_names):
            part[name] = labelled_codes(categories[j], row_codes[:, j], outlier)
        return part

    def generalized(item: tuple[int, pd.DataFrame]) -> tuple[int, pd.DataFrame, np.ndarray]:
        """Bucket ``b`` with its QIDs as released, and which rows are suppressed."""
        b, part = item
        row_codes = enc.generalize(levels, [part[name].to_numpy() for name in enc.qi_names])
        outlier = failing.contains(row_codes)
        return b, labelled(part, row_codes, outlier), outlier

    def released(item: tuple[int, pd.DataFrame, np.ndarray]) -> tuple[object, int, int]:
        """(the bucket prepared for ``write``, its rows released, its rows suppressed)."""
        b, part, outlier = item
        if suppression == "drop":
            part = part[~outlier]
        part = part.take(buckets.permutation(b, len(part))).reset_index(drop=True)
        columns = released_columns(part.columns, enc, lambda j: part[enc.qi_names[j]],
                                   lambda name: part[name])
        return prepare(pd.DataFrame(columns, copy=False), b), len(part), int(outlier.sum())

    def read(b: int) -> tuple[int, pd.DataFrame]:
        return b, buckets.read(b)

    filled = buckets.filled()
    watch = Stopwatch("release")
    steps = ordered_map(lambda b: released(generalized(read(b))), filled, threads=threads)
    written = suppressed = 0
    with closing(watch.waited(steps, "waiting for buckets released")) as steps:
        for prepared, rows, outliers in steps:
            suppressed += outliers
            if rows:
                with watch.part("writing"):
                    write(prepared)
                written += rows
    watch.log(f"{len(filled)} buckets")
    if not written:  # every row dropped: the columns still go out
        none = np.zeros(0, dtype=bool)
        empty = labelled(buckets.empty(), np.zeros((0, len(enc.qi_names)), np.int64), none)
        write(released((0, empty, none))[0])
    return Release(None, enc.n_rows, suppressed, suppression)
