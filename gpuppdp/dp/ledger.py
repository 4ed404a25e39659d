"""The ledger file: an append-only, hash-chained JSON Lines file, locked while in use.

A ledger file holds one JSON object per line: a header (the budget: ``epsilon``, ``delta``,
the neighbouring relation it is kept in), then one line per spend.  Every line carries
``hash``, the SHA-256 of its own content (its other keys, serialized canonically), and every
entry line ``prev``, the hash of the line before it; the header's hash starts the chain.  An
edited, removed, reordered or damaged line breaks the chain, and reading the file names the
first line that does not verify.  (The chain is tamper *evidence* against edits by hand or by
other tools; someone who rewrites the file and recomputes every hash is not detected -- that
needs a key the writer does not have.)

**One transaction per run** (:func:`locked`): the file is opened at its real path (symlinks
resolved), locked with :func:`fcntl.flock` on the ledger file itself (so no lock file is left
behind), read and verified; every spend is then appended as one line and
:func:`os.fsync`-ed *before* its noise is drawn, and the lock is released when the run ends.
A spend is never lost: not to a concurrent run (they wait for the lock and read each other's
lines), not to an exception after a release (the line was written when it was charged).  A
crash in the middle of a write leaves a torn last line, which is refused when read (the
spend it was writing is refused too: its noise was never drawn).
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from typing import Iterator

from ..errors import InputError

try:  # POSIX: advisory locks between processes
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock
    fcntl = None  # type: ignore[assignment]  # None marks a platform without fcntl

__all__ = ["LEDGER_FORMAT", "LedgerError", "canonical", "chain_hash", "locked", "read",
           "append", "header_line"]

LEDGER_FORMAT = "gpuppdp-budget-ledger/2"
GENESIS = "0" * 64  # the "previous hash" of the header


class LedgerError(InputError):
    """A ledger file that is not a valid, unbroken gpuppdp ledger."""


def canonical(obj: dict) -> bytes:
    """The bytes a hash covers: sorted keys, no spaces, ASCII, no NaN."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def chain_hash(content: dict) -> str:
    """SHA-256 of ``content`` (which holds ``prev``, the previous line's hash)."""
    return hashlib.sha256(canonical(content)).hexdigest()


def _seal(content: dict, prev: str) -> dict:
    body = dict(content, prev=prev)
    body.pop("hash", None)
    return dict(body, hash=chain_hash(body))


def header_line(header: dict) -> dict:
    """The sealed header line of a new ledger."""
    return _seal(dict(header, format=LEDGER_FORMAT), GENESIS)


@contextmanager
def locked(path, *, create: bool = False, shared: bool = False) -> Iterator[tuple[int, str]]:
    """Open the ledger at its real path and hold an exclusive (or shared) lock on it.

    Yields ``(fd, real_path)``.  ``create``: a missing file is created empty (the caller
    writes the header); otherwise a missing file raises :class:`FileNotFoundError`.  The lock
    is on the file itself: nothing is left behind when the run ends.
    """
    real = os.path.realpath(os.fspath(path))
    while True:
        flags = (os.O_RDONLY if shared else os.O_RDWR) | getattr(os, "O_CLOEXEC", 0)
        if create and not shared:
            flags |= os.O_CREAT
        try:
            fd = os.open(real, flags, 0o644)
        except FileNotFoundError:
            raise FileNotFoundError(f"budget file not found: {real}") from None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:  # the file we locked is still the one at the path (not removed meanwhile)
                same = os.path.samestat(os.fstat(fd), os.stat(real))
            except FileNotFoundError:
                same = False
            if same:
                yield fd, real
                return
        finally:
            os.close(fd)  # closing releases the lock
        if not create:
            raise FileNotFoundError(f"budget file not found: {real} (removed while opening)")


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _old_format(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("version") == 1 and "ledger" in data


def read(fd: int, source: str) -> tuple[dict | None, list[dict]]:
    """The verified header and entry lines of a locked ledger (``(None, [])`` when empty).

    Raises :class:`LedgerError` naming the first line that is not valid JSON or whose hash
    or link to the previous line does not verify.
    """
    raw = _read_all(fd)
    if not raw:
        return None, []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError(f"{source} is not a gpuppdp budget ledger (not UTF-8 text)") from None
    if _old_format(text):
        raise LedgerError(
            f"{source} is a version-1 ledger (one JSON document, no hash chain), which this "
            "version no longer reads: start a new ledger (its spends still count: carry "
            "them over as one spend of their total)")
    lines = text.split("\n")
    if lines[-1] != "":
        raise LedgerError(f"{source}: line {len(lines)} is incomplete (a write was "
                          "interrupted, or the file was edited): the ledger cannot be trusted")
    prev: str | None = GENESIS
    out = []
    for number, line in enumerate(lines[:-1], start=1):
        what = "the header (line 1)" if number == 1 else f"entry {number - 1} (line {number})"
        try:
            item = json.loads(line)
        except ValueError:
            raise LedgerError(f"{source}: {what} is not valid JSON: the ledger was edited "
                              "or damaged") from None
        if not isinstance(item, dict) or (number == 1 and item.get("format") != LEDGER_FORMAT):
            raise LedgerError(f"{source} is not a gpuppdp budget ledger ({LEDGER_FORMAT})"
                              if number == 1 else f"{source}: {what} is not an object")
        stored = item.get("hash")
        body = {k: v for k, v in item.items() if k != "hash"}
        try:
            ok = item.get("prev") == prev and stored == chain_hash(body)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise LedgerError(
                f"{source}: {what} fails its hash check (edited by hand, removed, reordered "
                "or damaged); the ledger is refused from there on -- restore it from a copy")
        prev = stored
        out.append(item)
    return out[0], out[1:]


def append(fd: int, content: dict, prev: str) -> str:
    """Seal ``content`` after ``prev``, append it as one line and fsync; its hash."""
    line = _seal(content, prev)
    data = canonical(line) + b"\n"
    os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.fsync(fd)
    return line["hash"]
