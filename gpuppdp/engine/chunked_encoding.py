"""A table encoded chunk by chunk (out of core): each chunk reduced to its own frequency set,
the sets merged as they come, so that memory holds a few chunks and the sets, whatever the
row count; the same :class:`~gpuppdp.engine.encoding.EncodedTable` as
:func:`~gpuppdp.engine.encoding.encode` of the whole table.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import kernels
from ..backend import Backend, DeviceMemoryError, cpu_backend
from ..core.pipeline import (DEVICE_ROWS, LazyChunk, Stopwatch, materialized, ordered_map,
                             row_numbered)
from ..kernels import sortedruns
from .encoding import (EncodedTable, FrequencySet, Role, Schema, SchemaError, SensitiveEncoder,
                       check_complete, leaf_codes, sensitive_names)

__all__ = ["encode_chunks", "SPILL_FACTOR", "BOTTOM_FACTOR"]


def encode_chunks(chunks: Iterable["pd.DataFrame | pa.Table"], columns: Sequence[str],
                  schema: Schema, backend: Backend,
                  sensitive_attributes: Sequence[str] | str | None = (), *,
                  merge_entries: int = 1 << 22, device_rows: int | None = None,
                  threads: int | None = None,
                  tee: Callable[[int, "pd.DataFrame | pa.Table", np.ndarray], None] | None = None
                  ) -> EncodedTable:
    """Encode a table given as consecutive row chunks (each a DataFrame or Arrow table holding at
    least its QID and sensitive columns, or a :class:`~gpuppdp.core.pipeline.LazyChunk` that
    reads one) into an :class:`EncodedTable` that keeps only the bottom frequency
    set: each chunk is encoded and reduced to its own frequency set, and pending sets are
    merged whenever they hold more than ``merge_entries`` entries and a third of the merged
    set's size (a merge's peak then stays near 4/3 of the merged set), so memory is a few
    chunks plus the frequency sets, whatever the row count.  Chunks are checked and mapped to leaf
    codes on ``threads`` host threads (:func:`~gpuppdp.core.pipeline.ordered_map`), then
    reduced in order on the backend -- on a GPU, consecutive chunks together, at least
    ``device_rows`` rows at a time (default :data:`~gpuppdp.core.pipeline.DEVICE_ROWS`),
    so that the thread driving the device makes few calls.  ``tee(first row, chunk, leaf codes
    (n, q) host)`` is also called with every chunk, on those threads (e.g.
    :meth:`~gpuppdp.engine.transform.RowBuckets.scatter`, keeping the rows for the release).
    ``columns`` are the table's column names (roles are checked against them).  Same
    frequency set, codes, labels and errors (rows numbered in the whole table) as
    :func:`encode` of the whole table.
    """
    roles = schema.resolve(list(columns))
    qi_names = [c for c in columns if roles[c] is Role.QUASI_IDENTIFYING]
    hierarchies = [schema.quasi_identifiers[c] for c in qi_names]
    enc = EncodedTable(backend, qi_names, hierarchies, None, 0, roles=roles,
                       types=dict(schema.types))
    sensitive = SensitiveEncoder(sensitive_names(sensitive_attributes), roles)
    encoder = _ChunkEncoder(enc, schema, sensitive, merge_entries, tee)
    # fresh huge pages cost several times small ones on some hosts (the merges' outputs; see
    # kernels.small_pages)
    with kernels.small_pages():
        encoder.run(ordered_map(encoder.coded, row_numbered(chunks), threads=threads),
                    DEVICE_ROWS if device_rows is None else device_rows)
    encoder.watch.log(f"{encoder.n_chunks} chunks")
    if encoder.host is not None:  # back to the device for the search, if it fits there
        bottom = enc._bottom
        assert bottom is not None  # (encoder.run built it)
        if _device_short(backend, [bottom], BOTTOM_FACTOR):
            raise DeviceMemoryError(
                f"the bottom frequency set ({len(bottom.count):,} entries, "
                f"{bottom.nbytes / 2**30:.2f} GiB) does not fit in the GPU's free memory "
                f"({(backend.free_memory() or 0) / 2**30:.2f} GiB) with room for the search")
        enc._bottom = bottom.moved(backend.asarray)
    if sensitive.names:
        sensitive.finish(enc)
    return enc


class _ChunkEncoder:
    """The state of :func:`encode_chunks`: the merged and pending frequency sets, where they
    live, and how a chunk's set is built."""

    def __init__(self, enc: EncodedTable, schema: Schema, sensitive: SensitiveEncoder,
                 merge_entries: int, tee: Callable | None):
        self.enc, self.schema, self.sensitive = enc, schema, sensitive
        self.merge_entries, self.tee = merge_entries, tee
        self.merged: list[FrequencySet] = []
        self.pending: list[FrequencySet] = []
        # the CPU backend, once the sets have been spilled to host memory
        self.host: Backend | None = None
        self.watch, self.n_chunks = Stopwatch("encoding"), 0
        # on the CPU, without sensitive codes to number in order, a chunk's own frequency set
        # is built on its host thread too: sorted by key where the keys fit in int64, so that
        # merging reads each set once (kernels.sortedruns), else hashed as on a device (the
        # level maps built here, before any thread reads them)
        self.on_thread = not enc.backend.is_gpu and not sensitive.names
        self.radix = enc.node_radix(np.zeros((1, len(enc.qi_names)), dtype=np.int64))[0, :-1]
        self.runs = _SortedBottom(self.radix, merge_entries) \
            if self.on_thread and sortedruns.fits(self.radix) else None
        if self.on_thread and self.runs is None:
            enc.level_maps()

    def coded(self, numbered: tuple[int, pd.DataFrame | pa.Table | LazyChunk]) -> tuple:
        """(first row, host leaf codes (n, q), sensitive columns, the chunk's frequency set
        when built here) of a chunk (host threads)."""
        enc, first, chunk = self.enc, numbered[0], materialized(numbered[1])
        qi_names = list(enc.qi_names)
        check_complete(chunk, self.schema.microaggregated, first)
        codes = np.stack([c.astype(enc.code_dtype) for c in leaf_codes(
            chunk, qi_names, enc.hierarchies, first)], axis=1)
        if self.tee is not None:
            self.tee(first, chunk, codes)
        names = self.sensitive.names
        carried = chunk[names] if isinstance(chunk, pd.DataFrame) else \
            chunk.select(names)  # an Arrow table
        if self.runs is not None:
            return first, codes, carried, sortedruns.chunk_set(codes, self.radix, first)
        return first, codes, carried, enc.bottom_of(codes, None, first) if self.on_thread \
            else None

    def device_set(self, batch: list[tuple]) -> FrequencySet:
        """The frequency set of consecutive chunks ``(first row, codes, carried)``, built on
        the backend in one pass."""
        backend = self.enc.backend
        with self.watch.part("chunk sets"):
            codes = np.concatenate([b[1] for b in batch]) if len(batch) > 1 else batch[0][1]
            carried = None
            if batch[0][2] is not None:
                carried = backend.asarray(np.concatenate([b[2] for b in batch]))
            return self.enc.bottom_of(backend.asarray(codes), carried, batch[0][0])

    def add(self, fs: FrequencySet) -> None:
        """Keep a chunk set (spilled to host memory once the device runs short) and merge
        the pending sets when they are due."""
        backend = self.enc.backend
        if self.host is None and _device_short(backend, self.merged + self.pending + [fs],
                                               SPILL_FACTOR):
            self.host = cpu_backend()
            self.merged = [part.moved(backend.to_host) for part in self.merged]
            self.pending = [part.moved(backend.to_host) for part in self.pending]
        self.pending.append(fs if self.host is None else fs.moved(backend.to_host))
        if _merge_due(sum(len(part.count) for part in self.pending),
                      sum(len(part.count) for part in self.merged), self.merge_entries):
            parts = self.merged + self.pending
            self.merged, self.pending = [], []  # no other reference to them
            with self.watch.part("merges"):
                self.merged = [self.enc.merge(parts, self.host)]

    def run(self, coded_chunks, device_rows: int) -> None:
        """Reduce the coded chunks in order into the table's bottom frequency set."""
        enc, sensitive, rows = self.enc, self.sensitive, 0
        batch: list[tuple] = []  # chunks not yet on the device
        for first, codes, sens_columns, fs in self.watch.waited(coded_chunks,
                                                                "waiting for chunks"):
            rows, self.n_chunks = first + len(codes), self.n_chunks + 1
            if self.runs is not None:
                with self.watch.part("merges"):
                    self.runs.add(fs)
                continue
            if fs is not None:  # built on its host thread
                self.add(fs)
                continue
            carried = sensitive.encode(sens_columns) if sensitive.names else None
            enc.n_sens = max(sensitive.n_carried, 1)  # radix of the carried code so far
            batch.append((first, codes, carried))
            if rows - batch[0][0] >= device_rows:
                self.add(self.device_set(batch))
                batch = []
        if batch:
            self.add(self.device_set(batch))
        if rows == 0:
            raise SchemaError("the table is empty (0 rows)")
        enc.n_rows = rows
        parts = self.merged + self.pending
        self.merged, self.pending = [], []
        with self.watch.part("merges"):
            enc._bottom = self.runs.bottom(rows, enc.code_dtype) if self.runs is not None \
                else enc.merge(parts, self.host)


def _merge_due(pending: int, merged: int, merge_entries: int) -> bool:
    """Are ``pending`` entries due to be merged into a merged set of ``merged`` entries: more
    than ``merge_entries``, and a third of the merged set?  (A merge's peak then stays near
    4/3 of the merged set.)"""
    return pending > max(merge_entries, merged // 3)


class _SortedBottom:
    """The bottom frequency set of chunks' sets in key order (:mod:`~gpuppdp.kernels.
    sortedruns`), on the CPU: pending sets merged into the merged one when due
    (:func:`_merge_due`), each merge one linear pass; canonical order at the end."""

    def __init__(self, radix: np.ndarray, merge_entries: int):
        self.radix, self.merge_entries = radix, merge_entries
        self.merged: list[tuple] = []
        self.pending: list[tuple] = []

    def add(self, run: tuple) -> None:
        self.pending.append(run)
        if _merge_due(sum(len(r[0]) for r in self.pending),
                      sum(len(r[0]) for r in self.merged), self.merge_entries):
            parts, self.merged, self.pending = self.merged + self.pending, [], []
            self.merged = [sortedruns.merge_sets(parts)]

    def bottom(self, n_rows: int, code_dtype) -> FrequencySet:
        parts, self.merged, self.pending = self.merged + self.pending, [], []
        merged = [sortedruns.merge_sets(parts)]  # the only reference: canonical lets it go
        codes, count, first = sortedruns.canonical(merged, self.radix, n_rows, code_dtype)
        n = len(count)
        ptr = np.array([0, n], dtype=np.int64)
        return FrequencySet(np.zeros((1, len(self.radix)), dtype=np.int64), codes,
                            np.zeros(n, dtype=np.int32), count, first, ptr, ptr)


#: a GPU encoding spills its frequency sets to host memory (merging them there) once the
#: device's free memory is under this many times their size (a merge's peak is about 3 times)
SPILL_FACTOR = 4
#: the merged bottom set goes back to the device only with this many times its size free
BOTTOM_FACTOR = 3


def _device_short(backend: Backend, sets: list[FrequencySet], factor: float) -> bool:
    """Is the device's free memory under ``factor`` times the size of ``sets``?  (``False``
    on the CPU, and where the backend cannot tell.)"""
    free = backend.free_memory()
    return free is not None and free < factor * sum(fs.nbytes for fs in sets)
