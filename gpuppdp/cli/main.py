"""The ``gpuppdp`` command line: :func:`main` (the console script ``gpuppdp.cli:main``).

Exit statuses:

* 0 -- done.
* 1 -- a command's negative answer: ``negotiate`` ended without a deal, ``attack linkage
  --check`` refused the release.
* 2 -- a usage error (argparse), a :class:`gpuppdp.errors.UserError` (a bad parameter, a value
  missing from a hierarchy, a problem with no solution, ...), an ``OSError`` reading or writing
  the user's files, or running out of host or device memory: one line
  ``gpuppdp: error: ...`` on stderr, no traceback (``gpuppdp --debug COMMAND ...`` prints the
  traceback above the line).
* 70 -- any other exception, which is a bug: the line ``gpuppdp: internal error (a bug;
  please report it with the traceback below)`` and the traceback (70 is ``EX_SOFTWARE``,
  "internal software error", of BSD's ``sysexits.h``).
* 130, 143, 129 -- stopped by a signal at any moment: Ctrl-C (SIGINT, 130), ``kill``
  (SIGTERM, 143) or a closed terminal (SIGHUP, 129), 128 plus the signal's number as shells
  report it: one line (``gpuppdp: interrupted``, ``gpuppdp: terminated``, ``gpuppdp: hung
  up``), no partial output and no temporary file or folder left (:mod:`gpuppdp.stops`). A
  signal that comes once every output is in place stops nothing: the run ends as it would
  have (0).

A closed standard output (``gpuppdp anonymize ... | head -1``) fails nothing: what is printed
after the reader has gone is dropped, and the run's files are written as without the pipe.

Importing this module loads only the few standard modules it names and
:mod:`gpuppdp.stops`: :func:`main` installs its stop-signal handlers first, and only then
imports the subcommand modules to build the parser (which load the library in their run
functions), so that a signal sent right after start-up finds the handlers in place sooner
(on a loaded machine the subcommands' imports took longer than 0.3 s: CI, stop 57), and
``gpuppdp --help`` and ``gpuppdp --version`` start quickly.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import warnings

from .. import __version__
from ..stops import COMMITTED, PUT_OFF, STOP_SIGNALS

__all__ = ["main", "build_parser", "INTERRUPTED", "USER_ERROR", "INTERNAL_ERROR"]

USER_ERROR = 2        # as argparse's usage errors
INTERNAL_ERROR = 70   # a bug: EX_SOFTWARE of BSD's sysexits.h (1 is a command's "no")
INTERRUPTED = 130     # 128 + SIGINT, as shells report it
INTERNAL_LINE = "gpuppdp: internal error (a bug; please report it with the traceback below)"
_STOP_LINES = {signal.SIGINT: "interrupted", getattr(signal, "SIGTERM", -1): "terminated",
               getattr(signal, "SIGHUP", -2): "hung up"}


class Stopped(KeyboardInterrupt):
    """A stop signal turned into an exception (a ``KeyboardInterrupt``, so that every cleanup
    that runs for Ctrl-C runs for it too); ``signum`` is the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: how soon a stop signal that came during an import is delivered again (seconds)
RESEND_AFTER = 0.01


class _Stops:
    """Handler of the stop signals: the first raises :class:`Stopped` unless the run's outputs
    are all in place (then the run ends as it would have); later ones are ignored while the
    first is handled (temporary files removed, the line printed).  One that comes while the
    main thread is inside the import system is sent again a moment later instead: raised
    there, it can land in importlib's weakref callback between its taking of the import lock
    and its ``try``, where Python prints and drops it with the lock still held; the kernels'
    warm-up thread then waits on that lock inside Numba's compiler lock, which the main
    thread waits on next (seen once in CI, and read off the hung process with py-spy).  Until
    it is raised it waits in :data:`gpuppdp.stops.PUT_OFF`, and the outputs' commit raises it
    if it still waits then (seen once in CI: a run stopped during its imports finished with
    status 0)."""

    def __init__(self):
        self.count = 0

    def __call__(self, signum, frame):
        if COMMITTED.is_set():
            return
        if self.count == 0 and _importing(frame):
            PUT_OFF[:] = [signum]  # no output is committed while it waits
            resend = threading.Timer(RESEND_AFTER, os.kill, (os.getpid(), signum))
            resend.daemon = True
            resend.start()
            return
        self.count += 1
        if self.count == 1:
            PUT_OFF.clear()
            raise Stopped(signum)


def _importing(frame) -> bool:
    """Is ``frame`` (or a frame that called it) code of the import system?"""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _install_handlers() -> dict:
    """Install :class:`_Stops` for every stop signal not ignored (as a parent may ask); returns
    the previous handlers (none where signals cannot be handled: not the main thread)."""
    handler = _Stops()
    previous: dict[int, object] = {}
    for signum in STOP_SIGNALS:
        try:
            before = signal.getsignal(signum)
            if before is signal.SIG_IGN:
                continue
            signal.signal(signum, handler)
        except ValueError:  # not the main thread
            return previous
        previous[signum] = signal.SIG_DFL if before is None else before
    return previous


class _ClosedPipeSafe:
    """Standard output whose reader may go away (``| head``): once a write or flush finds the
    pipe closed, the file descriptor is pointed at the null device and what follows is
    dropped, so that the run goes on and ends as without the pipe."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_null()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_null()

    def _to_null(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line: ``PROG: error: MESSAGE
    (see PROG --help)``, exit status 2 (argparse's own error prints the whole usage block
    first).  Subparsers inherit the class (``add_subparsers`` uses the parent's type)."""

    def error(self, message):
        message = " ".join(str(message).split())  # argparse wraps some messages
        self.exit(USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    """The ``argparse`` parser of every subcommand."""
    # deferred: main installs the stop-signal handlers before these imports
    from . import (anatomize, anonymize, attack, check, dp, dp_query, explore, generate,
                   hierarchy, negotiate, perturb, report, risk, synthesize, tradeoff)

    parser = _Parser(
        prog="gpuppdp", description="GPU-accelerated privacy-preserving data publishing")
    parser.add_argument("--version", action="version", version=f"gpuppdp {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an error too (before the subcommand: "
                        "gpuppdp --debug COMMAND ...)")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (anonymize, check, risk, report, explore, dp, dp_query, generate, hierarchy,
                   attack, anatomize, negotiate, perturb, tradeoff, synthesize):
        module.register(sub)
    return parser


def _run(argv) -> int:
    args = build_parser().parse_args(argv)  # --help, --version and usage errors exit here

    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    import logging

    from ..backend import DeviceMemoryError
    from ..errors import UserError

    # GPUPPDP_LOG is the level of the package's own logger; other libraries' (Numba's CUDA
    # driver logs every call at DEBUG) stay at WARNING
    logging.basicConfig(level="WARNING", format="%(message)s")
    logging.getLogger("gpuppdp").setLevel(os.environ.get("GPUPPDP_LOG", "WARNING"))
    previous = warnings.showwarning
    warnings.showwarning = _warning_line
    stdout = sys.stdout
    if _writes_stdout(args):  # the table owns standard output: the summary goes to stderr
        sys.stdout = sys.stderr
    try:
        return args.func(args)
    except (UserError, OSError) as exc:  # OSError: the user's files (missing, unreadable, ...)
        return _user_error(_located(exc, args), args.debug)
    except MemoryError as exc:  # the host's, or the GPU's (CuPy's OutOfMemoryError)
        device = isinstance(exc, DeviceMemoryError) or type(exc).__module__.startswith("cupy")
        where = "device" if device else "host"
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return _user_error(f"out of {where} memory ({detail}); nothing was written. "
                           "Smaller chunks (--chunk-rows) lower the peak of a large input; on "
                           "a GPU, --backend cpu runs in host memory", args.debug)
    except Exception:
        print(INTERNAL_LINE, file=sys.stderr)
        traceback.print_exc()
        return INTERNAL_ERROR
    finally:
        warnings.showwarning = previous
        sys.stdout = stdout


_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _writes_stdout(args) -> bool:
    """Whether an output option of the command names standard output."""
    return any(isinstance(value, str) and value in _STDOUT_NAMES
               for name, value in vars(args).items() if name not in ("input", "func"))


def _located(exc: BaseException, args) -> str:
    """The message of ``exc`` (its ``cli`` text when it has one: the remedy as a flag rather
    than a parameter); an error about data row ``exc.row`` (counted from 0) of the
    command's CSV input names that row's 1-based line of the file instead."""
    message, row = getattr(exc, "cli", None) or str(exc), getattr(exc, "row", None)
    path = getattr(args, "input", None)
    if not isinstance(row, int) or not isinstance(path, str) or f"row {row}" not in message:
        return message
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import UserError
    from ..io import file_line

    try:
        line = file_line(path, row, sep=getattr(args, "sep", None),
                         encoding=getattr(args, "encoding", None) or "utf-8")
    except (UserError, OSError, UnicodeError):
        line = None
    where = f"line {line} of {path}" if line is not None else f"record {row + 1} of {path}"
    return message.replace(f"row {row}", where, 1)


def _user_error(message: str, debug: bool) -> int:
    """The one line of an error the user can fix (after its traceback with ``--debug``)."""
    if debug:
        traceback.print_exc()
    print(f"gpuppdp: error: {message}", file=sys.stderr)
    return USER_ERROR


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """A library warning on the command line: one line in the CLI's style, no source line."""
    print(f"gpuppdp: warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Called without ``argv`` (the console script, which exits next) the stop signals stay
    ignored after the run, so that none can interrupt the interpreter's shutdown with a
    traceback; with ``argv`` the previous handlers are restored.
    """
    COMMITTED.clear()
    PUT_OFF.clear()
    previous = _install_handlers()
    stdout, sys.stdout = sys.stdout, _ClosedPipeSafe(sys.stdout)
    try:
        return _run(argv)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"gpuppdp: {_STOP_LINES.get(signum, 'stopped')}", file=sys.stderr)
        return 128 + signum
    finally:
        sys.stdout.flush()
        if argv is not None:
            sys.stdout = stdout
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if argv is None else handler)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
