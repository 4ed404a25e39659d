"""Reading tables (CSV, delimiter detected or given, and Parquet) and writing a run's outputs
safely: :class:`OutputPlan` checks every output path before any work, :class:`AtomicOutputs`
writes temporary files next to them and renames them into place together."""

from __future__ import annotations

import codecs
import contextlib
import csv
import json
import math
import os
import re
import secrets
import shutil
import stat
import sys
from collections import Counter
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .core.csvlines import records as _records
from .core.csvlines import text_encoding as _text_encoding
from .core.pipeline import LazyChunk
from .errors import InputError, hinted
from .stops import COMMITTED, interrupts_deferred, raise_put_off
from .validation import format_values

__all__ = ["read_table", "read_chunks", "table_columns", "estimated_rows", "write_table",
           "is_cudf_frame", "host_frame", "check_fields", "file_line", "input_file",
           "TableWriter", "DatasetWriter", "PreparedChunk", "CHUNK_ROWS", "PARQUET_SUFFIXES",
           "sniff_delimiter", "TABLE_SUFFIXES", "TEMP_MARK", "OutputError", "OutputPlan",
           "AtomicOutputs", "jsonable"]

PARQUET_SUFFIXES = (".parquet", ".pq")
"""File name endings of a Parquet table (or dataset folder)."""
_SNIFF_BYTES = 64 * 1024


def input_file(path: str | os.PathLike, what: str = "input file") -> str:
    """``path`` checked as a file to read: a missing path raises ``FileNotFoundError``
    ("``what`` not found"), a folder ``IsADirectoryError`` ("is a folder, not a file")."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what} {path} is a folder, not a file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what} not found: {path}")
    return path


def _check_encoding(encoding: str) -> str:
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise hinted(f"unknown text encoding {encoding!r}; ", "pass encoding= one Python knows "
                     "(utf-8, latin-1, cp1252, ...)", "give --encoding one Python knows (utf-8, "
                     "latin-1, cp1252, ...)") from None
    return encoding


def _blank_text(path: str, encoding: str) -> bool:
    """Whether a CSV file holds nothing but white space (no header line)."""
    with open(path, encoding=_text_encoding(encoding), errors="replace") as fh:
        while block := fh.read(_SNIFF_BYTES):
            if block.strip():
                return False
    return True


def sniff_delimiter(path: str, candidates: str = ";,\t|", default: str | None = None, *,
                    encoding: str = "utf-8") -> str:
    """The delimiter of a CSV file among ``candidates``; ``default`` (or an error) if unclear.
    An empty file (nothing but white space) raises an error saying so."""
    with open(path, newline="", encoding=_text_encoding(encoding), errors="replace") as fh:
        sample = fh.read(_SNIFF_BYTES)
    if not sample.strip() and _blank_text(path, encoding):
        raise InputError(f"{path} is empty (no header line, no rows)")
    try:
        return csv.Sniffer().sniff(sample, delimiters=candidates).delimiter
    except csv.Error:
        if default is not None:
            return default
        raise hinted(f"cannot detect the delimiter of {path}; ", "pass sep=", "give --sep") \
            from None


def table_delimiter(path: str | os.PathLike, sep: str | None = None, *,
                    encoding: str = "utf-8") -> str:
    """The delimiter a table written for input ``path`` uses: the input's own (``sep``, or
    detected from a CSV file), ``;`` (ARX's) for Parquet input."""
    path = os.fspath(path)
    if sep is not None:
        return sep
    return ";" if _is_parquet(path) else sniff_delimiter(path, default=";", encoding=encoding)


CHUNK_ROWS = 1 << 20
"""Rows per chunk when a table is read chunk by chunk (:func:`read_chunks`)."""

_CSV_OPTIONS = dict(dtype=str, keep_default_na=False, na_values=[""])
"""How every CSV is read: values as strings, only empty fields missing."""


def read_table(path: str | os.PathLike, *, sep: str | None = None,
               columns: Sequence[str] | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a CSV or Parquet file (optionally only ``columns``).

    CSV values are read as strings (hierarchies match them as strings, as ARX does); only empty
    fields count as missing.  The delimiter is detected among ``; , TAB |`` unless ``sep`` is
    given; the text is ``encoding`` (default UTF-8, a byte-order mark ignored; e.g.
    ``"latin-1"``).  Every record of a CSV file must have as many fields as its header line
    (:func:`check_fields`: a longer or shorter one is an error naming its line).  Requested
    columns that the file lacks raise ``ValueError`` listing them; a missing file
    ``FileNotFoundError``, a folder ``IsADirectoryError``, an empty file ``ValueError``.
    """
    path = input_file(path)
    _check_encoding(encoding)
    try:
        return _read(path, sep, columns, encoding)
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, encoding) from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty (no header line, no rows)") from None


def _read(path: str, sep: str | None, columns: Sequence[str] | None,
          encoding: str = "utf-8") -> pd.DataFrame:
    sep, columns, available = _columns_of(path, sep, columns, encoding, full=True)
    if _is_parquet(path):
        return pd.read_parquet(path, columns=columns)
    check_fields(path, sep, len(available), encoding=encoding)
    return pd.read_csv(path, sep=sep, usecols=columns, encoding=encoding, **_CSV_OPTIONS)


def not_utf8(path: str, exc: UnicodeDecodeError, encoding: str = "utf-8") -> InputError:
    """The error for a text file that is not ``encoding``: the reader's exception counts bytes
    from the start of the block it was decoding, so the offset in the file is found again."""

    decoder, offset = codecs.getincrementaldecoder(encoding)(), 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as bad:
                # the decoder may hold back the start of a sequence from the previous block
                at = offset + bad.start - (len(bad.object) - len(block))
                line = 1 + _count_newlines(path, at)
                return hinted(f"{path} is not {encoding.upper()} text ({bad.reason} at byte "
                              f"{at}, line {line}); ", *_ENCODING_HINTS)
            offset += len(block)
    return hinted(f"{path} is not {encoding.upper()} text ({exc.reason}); ", *_ENCODING_HINTS)


_ENCODING_HINTS = ("pass its encoding, e.g. encoding='latin-1'",
                   "give its encoding, e.g. --encoding latin-1")


def _count_newlines(path: str, end: int) -> int:
    count, done = 0, 0
    with open(path, "rb") as fh:
        while done < end and (block := fh.read(min(1 << 20, end - done))):
            count += block.count(b"\n")
            done += len(block)
    return count


def estimated_rows(path: str | os.PathLike, *, sample_bytes: int = 1 << 20) -> int:
    """The rows of a table file: exact for Parquet (its metadata), for CSV the file's size over
    the mean length of the lines in its first ``sample_bytes`` (an estimate, for sizing)."""
    path = os.fspath(path)
    if _is_parquet(path):
        return pq.ParquetFile(path).metadata.num_rows
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        sample = fh.read(sample_bytes)
    lines = sample.count(b"\n") + (not sample.endswith(b"\n"))
    return math.ceil(size * lines / max(len(sample), 1))


def _is_parquet(path: str) -> bool:
    return path.lower().endswith(PARQUET_SUFFIXES)


def table_columns(path: str | os.PathLike, *, sep: str | None = None,
                  encoding: str = "utf-8") -> list[str]:
    """The column names of a CSV or Parquet file (checked as :func:`read_table` does)."""
    path = input_file(path)
    try:
        return _columns_of(path, sep, None, _check_encoding(encoding))[1]
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, encoding) from None


def read_chunks(path: str | os.PathLike, *, sep: str | None = None,
                columns: Sequence[str] | None = None, rows: int = CHUNK_ROWS,
                lazy: bool = False, encoding: str = "utf-8"
                ) -> Iterator[pd.DataFrame | LazyChunk]:
    """Read a CSV or Parquet file as consecutive DataFrames of at most ``rows`` rows (only
    ``columns``, in the file's order if not given), with the values :func:`read_table` gives;
    memory holds one chunk, whatever the file's size.

    ``lazy=True``: a Parquet file whose row groups hold at most ``2 * rows`` rows comes as
    :class:`~gpuppdp.core.pipeline.LazyChunk` s instead, each reading whole consecutive row
    groups (at most ``rows`` rows, or one larger group) as an Arrow table when asked, so that
    several threads can read the file at once and no chunk goes through pandas; anything else
    comes as DataFrames, read here.
    """
    path = input_file(path)
    _check_encoding(encoding)
    try:
        sep, columns, available = _columns_of(path, sep, columns, encoding, full=True)
        if not _is_parquet(path):
            check_fields(path, sep, len(available), encoding=encoding)
        if _is_parquet(path):
            # (no pre-buffering: its cache holds every row group read until the file closes,
            # 0.7 GiB over 10^8 census rows)
            with pq.ParquetFile(path, pre_buffer=False) as source:
                meta = source.metadata
                sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
                if lazy and max(sizes, default=0) <= 2 * rows:
                    yield from _row_group_chunks(path, columns, sizes, rows)
                    return
                for batch in source.iter_batches(batch_size=rows, columns=columns):
                    yield batch.to_pandas()
        else:
            with pd.read_csv(path, sep=sep, usecols=columns, chunksize=rows,
                             encoding=encoding, **_CSV_OPTIONS) as reader:
                for chunk in reader:
                    yield chunk[columns].reset_index(drop=True)
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, encoding) from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty (no header line, no rows)") from None


def _row_group_chunks(path: str, columns: list[str], sizes: list[int], rows: int
                      ) -> Iterator[LazyChunk]:
    """Lazy chunks of consecutive row groups (of ``sizes`` rows) of at most ``rows`` rows, or
    one larger group, each read as an Arrow table."""
    def reader(groups: list[int]):
        def read():
            with pq.ParquetFile(path, pre_buffer=False) as source:
                return source.read_row_groups(groups, columns=columns)
        return read

    groups, held = [], 0
    for g, size in enumerate(sizes):
        if groups and held + size > rows:
            yield LazyChunk(held, reader(groups))
            groups, held = [], 0
        groups.append(g)
        held += size
    if groups:
        yield LazyChunk(held, reader(groups))


def _columns_of(path: str, sep: str | None, columns: Sequence[str] | None,
                encoding: str = "utf-8", full: bool = False) -> tuple:
    """``(sep, columns)``: the CSV delimiter (detected unless given) and the columns to read
    (all, in the file's order, when ``columns`` is None), checked against the file's;
    ``full``: ``(sep, columns, the file's columns)``."""
    parquet = _is_parquet(path)
    if not parquet and sep is None:
        sep = sniff_delimiter(path, encoding=encoding)
    if parquet:
        available = list(pq.read_schema(path).names)
    else:
        available = _csv_header(path, sep, encoding)
        if not available:
            raise InputError(f"{path} is empty (no header line, no rows)")
    repeated = [name for name, count in Counter(available).items() if count > 1]
    if repeated:
        raise InputError(f"{path}: column name(s) {format_values(repeated)} appear more than "
                         "once; give every column its own name")
    if columns is not None:
        missing = [c for c in columns if c not in available]
        if missing:
            raise InputError(f"column(s) {format_values(missing)} not in {path}; its columns "
                             f"are {format_values(available, first=10)}")
        return (sep, list(columns), available) if full else (sep, list(columns))
    return (sep, available, available) if full else (sep, available)


def _csv_header(path: str, sep: str, encoding: str = "utf-8") -> list[str]:
    """The column names of a CSV file as written, byte-order mark removed (pandas renames a
    repeated name ``a`` to ``a.1``, so repeated names are only visible here)."""
    with open(path, newline="", encoding=_text_encoding(encoding)) as fh:
        if len(sep) == 1:
            rows = csv.reader(fh, delimiter=sep)
        else:  # pandas reads a longer separator as a regular expression
            rows = (re.split(sep, line.rstrip("\r\n")) for line in fh)
        return next((row for row in rows if any(row)), [])


def check_fields(path: str | os.PathLike, sep: str, fields: int, *,
                 encoding: str = "utf-8") -> None:
    """Every record of CSV file ``path`` after its header line has ``fields`` fields (blank
    lines are skipped, as the reader skips them); otherwise an :class:`InputError` naming the
    first other record's 1-based file line and both counts -- a longer record would lose its
    last fields, a shorter one would release empty values (both are refused)."""
    path = os.fspath(path)
    header = True
    for lines, counts in _records(path, sep, encoding):
        if header and len(lines):
            lines, counts, header = lines[1:], counts[1:], False
        bad = np.flatnonzero(counts != fields)
        if len(bad):
            line, count = int(lines[bad[0]]), int(counts[bad[0]])
            what = "more" if count > fields else "fewer"
            message = (f"{path}, line {line}: {count} field(s), {what} than the {fields} of "
                       "the header line; ")
            if count < fields:
                raise InputError(message + "fill in the missing fields (empty ones are "
                                 "delimiters with nothing between)")
            hint = f"quote a value holding the delimiter {sep!r}, or "
            raise hinted(message + hint, "pass the right sep=", "give the right --sep")


def file_line(path: str | os.PathLike, row: int, *, sep: str | None = None,
              encoding: str = "utf-8") -> int | None:
    """The 1-based line of CSV file ``path`` where data row ``row`` (counted from 0, as
    :func:`read_table` numbers them) starts; None for a Parquet file or a row it lacks."""
    path = os.fspath(path)
    if _is_parquet(path) or row < 0:
        return None
    if sep is None:
        sep = sniff_delimiter(path, encoding=encoding)
    target, seen = row + 1, 0  # the header is record 0
    for lines, _ in _records(path, sep, encoding):
        if target < seen + len(lines):
            return int(lines[target - seen])
        seen += len(lines)
    return None


def is_cudf_frame(data) -> bool:
    """Is ``data`` a cuDF DataFrame (without importing cuDF when it is not)?  See
    :mod:`gpuppdp.device_frames`."""
    return type(data).__module__.partition(".")[0] == "cudf" and hasattr(data, "to_pandas")


def host_frame(data: Any) -> pd.DataFrame:
    """``data`` in host memory: a cuDF frame copied there once (``to_pandas``), any other
    table as it is."""
    return data.to_pandas() if is_cudf_frame(data) else data


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, sep: str = ";") -> None:
    """Write CSV (``sep``-separated) or Parquet, chosen by the file extension; a cuDF frame is
    written from the device by cuDF's writers."""
    path = os.fspath(path)
    if is_cudf_frame(df):
        (df.to_parquet(path, index=False) if _is_parquet(path) else
         df.to_csv(path, sep=sep, index=False))
        return
    if _is_parquet(path):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, sep=sep, index=False, mode=_text_mode(path))


def _text_mode(path: str) -> str:
    """How a text output is opened: a standard stream's name appended to (a file the shell
    opened keeps what was written before), any other file written anew."""
    return "a" if _STREAM_NAME.fullmatch(os.path.abspath(path)) else "w"


class TableWriter:
    """Writes a table chunk by chunk to ``path``: Parquet (one row group per chunk, every chunk
    cast to the first one's schema; dictionary encoding for text and dictionary columns only,
    no column statistics) or ``sep``-separated CSV, chosen by the file extension as in
    :func:`write_table`.  :meth:`write` takes a DataFrame; or :meth:`prepare` (which touches
    no state: any thread) converts one and :meth:`write_prepared` writes it, in order.  A
    context manager; the file is complete when it closes."""

    def __init__(self, path: str | os.PathLike, *, sep: str = ";"):
        self.path, self.sep = os.fspath(path), sep
        self.rows = 0
        self._parquet = _is_parquet(self.path)
        self._file = None
        self._schema = None

    def prepare(self, df: pd.DataFrame, index: int | None = None) -> "PreparedChunk":
        """``df`` as the file needs it: an Arrow table, or CSV text (the header apart).
        (``index``, the chunk's place in a dataset, is not needed for one file.)"""
        if self._parquet:
            return PreparedChunk(len(df), None,
                                 pa.Table.from_pandas(df, preserve_index=False))
        header = df.iloc[:0].to_csv(None, sep=self.sep, index=False)
        return PreparedChunk(len(df), header,
                             df.to_csv(None, sep=self.sep, index=False, header=False))

    def write_prepared(self, chunk: "PreparedChunk") -> None:
        if self._parquet:
            table = chunk.data
            if self._file is None:
                self._schema = table.schema
                self._file = pq.ParquetWriter(self.path, self._schema,
                                              **_parquet_options(self._schema))
            elif not table.schema.equals(self._schema, check_metadata=False):
                table = table.cast(self._schema)
            self._file.write_table(table)
        else:
            if self._file is None:
                self._file = open(self.path, _text_mode(self.path), encoding="utf-8",
                                  newline="")
                self._file.write(chunk.header)
            self._file.write(chunk.data)
        self.rows += chunk.rows

    def write(self, df: pd.DataFrame) -> None:
        self.write_prepared(self.prepare(df))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "TableWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _parquet_options(schema) -> dict:
    """How releases are written to Parquet: dictionary encoding for text and dictionary columns
    only, no column statistics (nothing to prune by in a shuffled table, and costly to write)."""

    text = [f.name for f in schema
            if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type)
            or pa.types.is_large_string(f.type) or pa.types.is_binary(f.type)]
    return dict(use_dictionary=text, write_statistics=False)


class DatasetWriter:
    """Writes a table chunk by chunk as a Parquet dataset: folder ``path`` (existing) gets one
    file per chunk, ``part-NNNNN.parquet`` by the chunk's index, written by :meth:`prepare` on
    the calling thread -- so several threads write at once; :meth:`write_prepared` only counts
    rows.  Reading the files in name order gives the chunks in order."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.rows = 0

    def prepare(self, df: pd.DataFrame, index: int) -> "PreparedChunk":

        table = pa.Table.from_pandas(df, preserve_index=False)
        pq.write_table(table, os.path.join(self.path, f"part-{index:05d}.parquet"),
                       **_parquet_options(table.schema))
        return PreparedChunk(len(df), None, None)

    def write_prepared(self, chunk: "PreparedChunk") -> None:
        self.rows += chunk.rows

    def __enter__(self) -> "DatasetWriter":
        return self

    def __exit__(self, *exc) -> None:
        pass


# -- outputs ------------------------------------------------------------------------------------
TABLE_SUFFIXES = (".csv", ".txt", ".parquet", ".pq")
"""File name endings of a released table: the ending chooses the format (see
:func:`write_table`)."""

TEMP_MARK = ".gpuppdp-tmp-"
"""In the name of every temporary output file (``.NAME.gpuppdp-tmp-XXXXXXXX.SUFFIX``, in the
output's folder)."""


class PreparedChunk(NamedTuple):
    """A chunk converted by :meth:`TableWriter.prepare`."""

    rows: int
    header: str | None   # CSV: the header line
    data: object         # an Arrow table, or CSV text


class OutputError(InputError):
    """An output path that cannot or must not be written (an input, a missing folder, ...)."""


_STREAM_NAME = re.compile(r"/dev/(stdout|stderr|fd/\d+)|/proc/(self|\d+)/fd/\d+")
"""Names of an open file (a standard stream): outputs written directly, nothing replaced."""


class _Output(NamedTuple):
    option: str   # the command-line option naming it, for messages
    path: str     # as given
    target: str   # the file replaced: ``path`` with symbolic links resolved
    stream: bool  # an existing device or pipe (/dev/null): written directly, nothing replaced
    folder: bool = False  # a Parquet dataset: a folder of .parquet files


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): compare the resolved paths
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


class OutputPlan:
    """The files one run writes, checked before any work and replaced together.

    ``inputs`` are every file the run reads (table, hierarchies, population): no output may
    be one of them.  :meth:`add` checks an output at once and raises :class:`OutputError` when
    its folder is missing or not writable, it is a folder or a read-only file, its name does
    not end in one of ``suffixes`` (where the ending chooses the format), or it is the same
    file as an input or as an output added before (symbolic and hard links resolved).  Then::

        plan = OutputPlan([args.input]).add("--output", args.output, TABLE_SUFFIXES)
        ...                                   # the work
        with plan.writing() as out:           # temporary files; all renamed on success
            out.write_table("--output", released)

    Outputs that are existing devices or pipes (``/dev/null``, ``/dev/stdout``) are written
    directly: nothing can be renamed onto them.  So is a standard stream's name
    (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``) when the shell pointed it at a file; a
    stream's name needs no table ending (its table is CSV).
    """

    def __init__(self, inputs: Iterable[str | os.PathLike | None] = ()):
        self._inputs = [os.fspath(p) for p in inputs if p is not None]
        self._outputs: dict[str, _Output] = {}

    def add(self, option: str, path: str | os.PathLike | None,
            suffixes: Sequence[str] | None = None, *, dataset: bool = False) -> "OutputPlan":
        """Plan the file of ``option`` (nothing when ``path`` is None); returns the plan.
        ``dataset``: a Parquet dataset folder instead, its name ending in one of
        :data:`PARQUET_SUFFIXES` (it may replace a folder that holds only ``.parquet`` files,
        never any other)."""
        if path is None:
            return self
        if option in self._outputs:
            raise ValueError(f"{option} is already planned")
        self._outputs[option] = self._checked(option, os.fspath(path), suffixes, dataset)
        return self

    def _checked(self, option: str, path: str, suffixes: Sequence[str] | None,
                 dataset: bool = False) -> _Output:
        named = f"{option} {path}"
        if not path:
            raise OutputError(f"{option} needs a file name")
        # a standard stream's name (/dev/stdout, /dev/fd/1, ...) is written directly, whatever
        # it is now (a terminal, a pipe, a file the shell opened); other names resolved
        device = _STREAM_NAME.fullmatch(os.path.abspath(path)) is not None
        target = os.path.abspath(path) if device else os.path.realpath(path)
        try:
            mode = os.stat(target).st_mode  # follows /proc's links to pipes too
        except OSError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            if not dataset:
                raise OutputError(f"{named} is a folder, not a file")
            if not all(name.endswith(".parquet") for name in os.listdir(target)):
                raise OutputError(f"{named} is a folder that does not hold a Parquet dataset; "
                                  "refusing to replace it")
        elif dataset and mode is not None:
            raise OutputError(f"{named} is a file, not a Parquet dataset folder")
        if dataset:
            suffixes = PARQUET_SUFFIXES
        stream = mode is not None and not stat.S_ISDIR(mode) and \
            (device or not stat.S_ISREG(mode))
        if not stream:
            folder = os.path.dirname(target)
            if not os.path.isdir(folder):
                raise OutputError(f"{named}: the folder {folder} does not exist")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise OutputError(f"{named}: the folder {folder} is not writable")
            if mode is not None and not os.access(target, os.W_OK):
                raise OutputError(f"{named} is read-only; refusing to replace it")
            if suffixes is not None and os.path.splitext(path)[1].lower() not in suffixes:
                raise OutputError(f"{named}: the name must end in {' or '.join(suffixes)} "
                                  "(the ending chooses the format)")
        for source in self._inputs:
            if _same_file(target, source):
                raise OutputError(f"{named} is an input of this run ({source}); write the "
                                  "output to another file")
            if dataset and os.path.commonpath([target, os.path.realpath(source)]) == target:
                raise OutputError(f"{named} holds an input of this run ({source}); write the "
                                  "output to another folder")
        for other in self._outputs.values():
            if not (stream and other.stream) and _same_file(target, other.target):
                raise OutputError(f"{named} and {other.option} {other.path} are the same file")
        return _Output(option, path, target, stream, dataset)

    def __contains__(self, option: str) -> bool:
        return option in self._outputs

    def path(self, option: str) -> str:
        """The path of ``option``'s output as given."""
        return self._outputs[option].path

    def writing(self) -> "AtomicOutputs":
        """The temporary files of this plan (a context manager, see :class:`AtomicOutputs`)."""
        return AtomicOutputs(self._outputs.values())


class AtomicOutputs:
    """Temporary files next to a plan's outputs, renamed into place together.

    Leaving the ``with`` block normally calls :meth:`commit`: every planned output must have
    been written; then each temporary file replaces its output (:func:`os.replace`, atomic
    within a folder), with interrupts held until all are renamed.  Leaving it by an exception
    (``KeyboardInterrupt`` included) calls :meth:`discard`: the temporary files are removed and
    every previous output is left as it was.  Should a rename fail (a full or vanished folder),
    the outputs renamed before it are new, the others keep their previous files, and an
    :class:`OutputError` says which is which.
    """

    def __init__(self, outputs: Iterable[_Output]):
        self._outputs = {out.option: out for out in outputs}
        self._temps: dict[str, str] = {}

    def __enter__(self) -> "AtomicOutputs":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            self.discard()
            return False
        try:
            self.commit()
        except BaseException:
            self.discard()
            raise
        return False

    def path(self, option: str) -> str:
        """Where to write ``option``'s output now: a new empty temporary file (or folder, for a
        dataset) in its folder whose name ends like the output's (an existing device or pipe:
        the output itself)."""
        out = self._outputs[option]
        if out.stream:
            sys.stdout.flush()  # what the run printed comes first on a shared stream
            return out.path
        if option not in self._temps:
            folder, name = os.path.split(out.target)
            stem = os.path.splitext(name)[0][:180]
            suffix = os.path.splitext(out.path)[1]  # the format is chosen by the given name
            with interrupts_deferred():
                while True:
                    temp = os.path.join(folder,
                                        f".{stem}{TEMP_MARK}{secrets.token_hex(4)}{suffix}")
                    try:
                        if out.folder:
                            os.mkdir(temp)
                        else:
                            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                                             0o666))
                    except FileExistsError:
                        continue
                    self._temps[option] = temp
                    break
        return self._temps[option]

    def write_table(self, option: str, df: pd.DataFrame, *, sep: str = ";") -> bool:
        """:func:`write_table` to ``option``'s output; False (nothing written) if unplanned."""
        if option not in self._outputs:
            return False
        write_table(df, self.path(option), sep=sep)
        return True

    def write_json(self, option: str, value, *, indent: int = 2) -> bool:
        """``value`` as JSON to ``option``'s output; False (nothing written) if unplanned."""
        if option not in self._outputs:
            return False
        path = self.path(option)
        with open(path, _text_mode(path), encoding="utf-8") as fh:
            json.dump(value, fh, indent=indent)
            fh.write("\n")
        return True

    def commit(self) -> None:
        """Rename every temporary file onto its output (see the class)."""
        unwritten = [o for o, out in self._outputs.items()
                     if not out.stream and o not in self._temps]
        if unwritten:
            raise RuntimeError(f"output(s) {', '.join(unwritten)} planned but never written")
        raise_put_off()  # a stop put off during an import ends the run here, uncommitted
        replaced = []
        with interrupts_deferred():
            for option, temp in list(self._temps.items()):
                out = self._outputs[option]
                try:
                    if out.folder:
                        _replace_folder(temp, out.target)
                    else:
                        with contextlib.suppress(FileNotFoundError):  # keep the old file's mode
                            os.chmod(temp, stat.S_IMODE(os.stat(out.target).st_mode))
                        os.replace(temp, out.target)
                except OSError as exc:
                    self.discard()
                    done = (f"{', '.join(replaced)} replaced; " if replaced else "")
                    raise OutputError(f"could not write {option} {out.path}: "
                                      f"{exc.strerror or exc}; {done}no other output changed") \
                        from None
                del self._temps[option]
                replaced.append(f"{option} {out.path}")
        COMMITTED.set()

    def discard(self) -> None:
        """Remove the temporary files (and folders) not renamed yet."""
        with interrupts_deferred(reraise=False):
            for temp in self._temps.values():
                if os.path.isdir(temp) and not os.path.islink(temp):
                    shutil.rmtree(temp, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(temp)
            self._temps.clear()


def _replace_folder(temp: str, target: str) -> None:
    """Rename folder ``temp`` onto ``target``, a previous folder there moved aside first and
    removed after."""
    if not (os.path.isdir(target) and not os.path.islink(target)):
        os.replace(temp, target)
        return
    old = temp + "-old"
    os.replace(target, old)
    os.replace(temp, target)
    shutil.rmtree(old, ignore_errors=True)




def jsonable(value):
    """Plain JSON values: numpy scalars unwrapped, NaN -> None, infinities -> "inf"/"-inf"."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value
