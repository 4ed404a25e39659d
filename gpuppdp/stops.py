"""The signals that stop a run (bottom layer: the standard library only, so that the command
line loads it before anything else).

A stop signal -- Ctrl-C (SIGINT), ``kill`` (SIGTERM), a closed terminal (SIGHUP) -- becomes
an exception in the main thread, so that every ``finally`` and context manager on the way out
removes its temporary files (:class:`gpuppdp.io.AtomicOutputs`, the release's bucket folder);
while a temporary is created (:func:`temporary_folder`) or outputs are renamed into place it is
held (:func:`interrupts_deferred`), and once they all are (:data:`COMMITTED`) the run is done
and a late signal changes nothing.
"""

from __future__ import annotations

import contextlib
import signal
import tempfile
import threading

__all__ = ["STOP_SIGNALS", "COMMITTED", "PUT_OFF", "raise_put_off", "interrupts_deferred",
           "temporary_folder"]

#: set once a run's outputs are all renamed into place: a stop signal after it ends nothing
#: (the command line clears it before each run)
COMMITTED = threading.Event()

#: the stop signals put off because they came while the main thread was importing (the command
#: line sends them again a moment later, ``gpuppdp.cli.main``): while one waits, no output is
#: committed (:func:`raise_put_off`); the command line clears it before each run
PUT_OFF: list[int] = []

#: the signals that end a run: Ctrl-C, ``kill`` and a closed terminal
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


@contextlib.contextmanager
def interrupts_deferred(reraise: bool = True):
    """Hold the :data:`STOP_SIGNALS` in the block; when one came, pass the first on to its
    previous handler (``KeyboardInterrupt`` for SIGINT by default) after the block, unless
    ``reraise`` is False.  Does nothing outside the main thread, where signals are not
    delivered."""
    received = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError):  # a thread of another interpreter
            for signum in STOP_SIGNALS:
                previous[signum] = signal.signal(
                    signum, lambda number, frame: received.append((number, frame)))
    try:
        yield
    finally:
        for signum, handler in previous.items():  # None: not set from Python -> the default
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    if not (received and reraise):
        return
    signum, frame = received[0]
    handler = previous.get(signum)
    if callable(handler):
        handler(signum, frame)
    elif handler is not signal.SIG_IGN:  # SIG_DFL or a handler not set from Python
        if signum != signal.SIGINT:
            signal.raise_signal(signum)
        raise KeyboardInterrupt


def raise_put_off() -> None:
    """Hand a stop signal that waits in :data:`PUT_OFF` to its handler now (which raises it):
    called before outputs are renamed into place, so that a run stopped during its imports
    never commits, however late the signal's second delivery comes (on a busy machine the
    thread that sends it again may not run before the run ends)."""
    if PUT_OFF:
        signum = PUT_OFF[0]
        PUT_OFF.clear()
        handler = signal.getsignal(signum)
        if callable(handler):
            handler(signum, None)


def temporary_folder(**kwargs) -> tempfile.TemporaryDirectory:
    """A :class:`tempfile.TemporaryDirectory` (``kwargs`` are its own) made with the
    :data:`STOP_SIGNALS` held: one raised between the folder's ``mkdir`` and the registration
    of its clean-up would leave the folder behind (seen in CI, a signal landing right after the
    ``mkdir``).  A signal that came meanwhile is raised once the folder is removed again; once
    returned, the folder goes with the object, whatever ends its life."""
    folder = None
    try:
        with interrupts_deferred():
            folder = tempfile.TemporaryDirectory(**kwargs)
    except BaseException:
        if folder is not None:
            folder.cleanup()
        raise
    return folder
