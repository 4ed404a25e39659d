"""Host threads for a table read in chunks.

The out-of-core passes (:func:`~gpuppdp.engine.chunked_encoding.encode_chunks`,
:func:`~gpuppdp.engine.transform.release_buckets`) are a sequence of chunks, each going
through host work that needs no other chunk (leaf codes, Arrow conversion, bucket files,
output formatting) and work that must see the chunks in order (a dictionary numbered by first
appearance, the device, the output file).  :func:`ordered_map` runs the first kind on a pool of
threads -- NumPy, pandas' hash tables and Arrow release the GIL -- and hands the results back in
order, at most a few chunks ahead, so memory stays a few chunks whatever the row count.
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Generator, Iterable, Iterator, TypeVar

import pandas as pd

from ..errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["host_threads", "ordered_map", "LazyChunk", "row_numbered", "materialized",
           "Stopwatch", "MAX_HOST_THREADS", "DEVICE_ROWS"]

T = TypeVar("T")
R = TypeVar("R")

#: the default number of host threads is the usable cores, at most this many (each thread
#: holds a chunk or two in flight)
MAX_HOST_THREADS = 8
#: on a GPU, the thread that drives the device takes consecutive chunks together, at least
#: this many rows at a time, for fewer calls: per chunk its host work far exceeds the
#: device's own, and each copy, launch and synchronization may also wait for the GIL, which
#: the host threads share
DEVICE_ROWS = 1 << 22


def host_threads() -> int:
    """Threads for chunk work: ``GPUPPDP_HOST_THREADS`` if set (at least 1), else the cores
    this process may run on, at most :data:`MAX_HOST_THREADS`."""
    value = os.environ.get("GPUPPDP_HOST_THREADS", "").strip()
    if value:
        try:
            n = int(value)
        except ValueError:
            raise InputError(f"GPUPPDP_HOST_THREADS must be a whole number, got {value!r}"
                             ) from None
        if n < 1:
            raise InputError(f"GPUPPDP_HOST_THREADS must be at least 1, got {n}")
        return n
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_HOST_THREADS))


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, threads: int | None = None,
                ahead: int | None = None) -> Iterator[R]:
    """``fn(item)`` for every item, run on ``threads`` threads (default :func:`host_threads`),
    yielded in the items' order.  Items are drawn from ``items`` on the calling thread, at most
    ``ahead`` (default twice the threads) beyond the one being yielded.  An exception raised by
    ``fn`` is raised here when its item's turn comes (an earlier item's first); however the
    iteration ends -- exhausted, failed or closed -- no call is still running when it has.
    With one thread, ``fn`` runs on the calling thread, one item at a time."""
    threads = host_threads() if threads is None else threads
    if threads <= 1:
        yield from map(fn, items)
        return
    ahead = 2 * threads if ahead is None else max(ahead, 1)
    source = iter(items)
    pending: deque = deque()
    pool = ThreadPoolExecutor(threads, thread_name_prefix="gpuppdp-chunks")
    try:
        for item in source:
            pending.append(pool.submit(fn, item))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)


class Stopwatch:
    """Seconds the ordered (calling) thread of a chunked pass spends in named parts -- waiting
    for the host threads' next result, the backend's work, writing -- logged on the
    ``gpuppdp`` logger at DEBUG level (``GPUPPDP_LOG=DEBUG`` for the CLI), to show which side
    bounds the pass.  A wait includes any part drawn on this thread while waiting (the items
    of :func:`ordered_map` are drawn on the calling thread)."""

    def __init__(self, name: str):
        self.name = name
        self.seconds: defaultdict = defaultdict(float)
        self._start = time.perf_counter()

    @contextmanager
    def part(self, key: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[key] += time.perf_counter() - t

    def waited(self, items: Iterable[T], key: str) -> Generator[T, None, None]:
        """``items``, the time spent waiting for each one added to part ``key``; closing
        this closes ``items``."""
        source = iter(items)
        try:
            while True:
                t = time.perf_counter()
                try:
                    item = next(source)
                except StopIteration:
                    return
                finally:
                    self.seconds[key] += time.perf_counter() - t
                yield item
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def log(self, counted: str) -> None:
        """One DEBUG line: the pass's seconds so far and each part's, with ``counted`` (e.g.
        ``"330 chunks"``)."""
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in self.seconds.items())
        logging.getLogger("gpuppdp").debug("%s of %s on the calling thread: %.2f s (%s)",
                                           self.name, counted,
                                           time.perf_counter() - self._start, parts)


class LazyChunk:
    """A chunk of ``rows`` rows not read yet: ``read()`` reads it (a DataFrame or an Arrow
    table), on whichever host thread works on it (e.g. row groups of a Parquet file, see
    :func:`gpuppdp.io.read_chunks`)."""

    __slots__ = ("rows", "read")

    def __init__(self, rows: int, read: Callable[[], "pd.DataFrame | pa.Table"]):
        self.rows, self.read = int(rows), read

    def __len__(self) -> int:
        return self.rows


def materialized(chunk: "pd.DataFrame | pa.Table | LazyChunk") -> "pd.DataFrame | pa.Table":
    """``chunk`` read: a :class:`LazyChunk` read (and its row count checked), a table as it
    is."""
    if not isinstance(chunk, LazyChunk):
        return chunk
    data = chunk.read()
    if len(data) != chunk.rows:
        raise RuntimeError(f"a chunk of {chunk.rows} rows read as {len(data)}: the file changed "
                           "while it was read")
    return data


def row_numbered(chunks: Iterable["pd.DataFrame | pa.Table | LazyChunk"]
                 ) -> Iterator[tuple[int, "pd.DataFrame | pa.Table | LazyChunk"]]:
    """``(first row, chunk)`` of every non-empty chunk, rows numbered in the whole table."""
    first = 0
    for chunk in chunks:
        if len(chunk):
            yield first, chunk
            first += len(chunk)

