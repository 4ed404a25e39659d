"""The records of a CSV file as lines: each non-blank record's 1-based file line and its
number of fields, counted block by block (NumPy where no quote character makes it simple, the
``csv`` module elsewhere) -- for :func:`gpuppdp.io.check_fields` and
:func:`gpuppdp.io.file_line`."""

from __future__ import annotations

import codecs
import csv
import re
from typing import Iterator

import numpy as np

__all__ = ["records", "text_encoding"]


def text_encoding(encoding: str) -> str:
    """The codec reading ``encoding`` text: UTF-8 with a byte-order mark ignored."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


_FIELDS_BLOCK = 1 << 24


def records(path: str, sep: str, encoding: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(line numbers, field counts)`` of the non-blank records of a CSV file, block by block:
    1-based file lines (a quoted record spanning lines: its first).  Blocks without a quote
    character are counted with NumPy (one ASCII delimiter, an ASCII-compatible encoding); the
    rest of the file, from the first quote, with the ``csv`` module."""
    fast = len(sep) == 1 and ord(sep) < 128 and sep != '"' and \
        codecs.lookup(encoding).name in ("utf-8", "latin-1", "iso8859-1", "cp1252", "ascii")
    done = 0  # lines counted
    with open(path, "rb") as fh:
        start, tail = 0, b""
        while fast:
            block = fh.read(_FIELDS_BLOCK)
            data = tail + block
            if not block:
                cut = len(data)
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    tail = data
                    continue
            part, tail = data[:cut], data[cut:]
            if b'"' in part:
                break
            if part:
                yield _counted(part, ord(sep), done)
                done += part.count(b"\n") + (not part.endswith(b"\n"))
            start += len(part)
            if not block:
                return
        fh.seek(start)
        text = codecs.getreader(text_encoding(encoding) if start == 0 else encoding)(fh)
        yield from _counted_text(_text_lines(text), sep, done)


def _counted_text(lines: Iterator[str], sep: str, before: int
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`_records` of text lines read by the ``csv`` module (a regular expression
    delimiter: split line by line, as pandas does), the first being line ``before + 1``."""
    reader = csv.reader(lines, delimiter=sep) if len(sep) == 1 else None
    rows = reader if reader is not None else (re.split(sep, line.rstrip("\r\n"))
                                              for line in lines)
    found, counts, previous = [], [], before
    for row in rows:
        first = previous + 1
        previous = before + reader.line_num if reader is not None else first
        if len(row) > 1 or (row and row[0].strip()):
            found.append(first)
            counts.append(len(row))
            if len(found) >= 1 << 16:
                yield np.array(found), np.array(counts)
                found, counts = [], []
    if found:
        yield np.array(found), np.array(counts)


def _text_lines(text) -> Iterator[str]:
    """The lines of a text stream, line endings kept (as ``newline=""`` reads them)."""
    pending = ""
    while chunk := text.read(1 << 20):
        pending += chunk
        parts = pending.splitlines(keepends=True)
        pending = parts.pop() if parts and not parts[-1].endswith(("\n", "\r")) else ""
        yield from parts
    if pending:
        yield pending


def _counted(part: bytes, sep: int, before: int) -> tuple[np.ndarray, np.ndarray]:
    """``(line numbers, field counts)`` of the non-blank lines of ``part`` (whole lines, the
    first being line ``before + 1``)."""
    buf = np.frombuffer(part, np.uint8)
    ends = np.flatnonzero(buf == 10)
    if not part.endswith(b"\n"):
        ends = np.append(ends, len(buf))
    starts = np.concatenate(([0], ends[:-1] + 1))
    counts = np.diff(np.searchsorted(np.flatnonzero(buf == sep), ends), prepend=0) + 1
    keep = counts > 1
    single = np.flatnonzero(~keep)  # no delimiter: blank when white space only (skipped)
    if len(single) > 4096:
        solid = np.concatenate(([0], np.cumsum((buf != 32) & (buf != 9) & (buf != 13)
                                               & (buf != 10), dtype=np.int32)))
        keep |= solid[ends] - solid[starts] > 0
    else:
        for i in single.tolist():
            keep[i] = bool(part[starts[i]:ends[i]].strip())
    return np.flatnonzero(keep) + before + 1, counts[keep]
