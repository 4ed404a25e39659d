"""The progress shown on stderr: :class:`ProgressBar` and the search's bar
(:func:`search_progress`).  Imports only the standard library."""

from __future__ import annotations

import sys

from ..stops import raise_put_off

__all__ = ["ProgressBar", "search_progress", "compile_notice"]


class ProgressBar:
    """Progress on stderr: a bar redrawn in place (``\\r``) when stderr is a terminal, plain
    lines (``search: 40% (48/120 nodes)``, one per tenth at most) when it is a file or a pipe,
    so that logs hold no carriage returns.  ``tty`` forces either form (default: asked of
    stderr at the first update); disabled (``--quiet``), it prints nothing.  A stop signal
    put off during an import (:data:`gpuppdp.stops.PUT_OFF`) is raised at the first update,
    before anything is shown: a stopped run reports no progress (seen in CI: a late re-send
    let a small search print its 100 %)."""

    def __init__(self, label: str, enabled: bool, *, unit: str = "nodes",
                 tty: bool | None = None):
        self.label = label
        self.enabled = enabled
        self.unit = unit
        self.tty = tty
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        raise_put_off()
        if not self.enabled or total <= 0:
            return
        if self.tty is None:
            isatty = getattr(sys.stderr, "isatty", None)
            self.tty = bool(isatty and isatty())
        done = min(max(done, 0), total)
        steps = 30 if self.tty else 10
        step = steps * done // total
        if step == self._last:
            return
        self._last = step
        if self.tty:
            sys.stderr.write(f"\r{self.label} [{'#' * step}{'.' * (steps - step)}] "
                             f"{done}/{total} {self.unit}" + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(f"{self.label}: {100 * done // total}% ({done}/{total} "
                             f"{self.unit})\n")
        sys.stderr.flush()


def compile_notice(args, dispatchers=(), wanted=None, seconds: str = "about 10 s") -> None:
    """Say on stderr (unless ``--quiet``) that the run is about to compile kernels, when one
    it will call -- ``dispatchers`` (default: the batched search's) -- is neither compiled
    ahead of time nor in Numba's cache (:func:`gpuppdp.kernels.compiled`)."""
    if not getattr(args, "quiet", False):
        from .. import kernels  # deferred: keeps gpuppdp --help from importing Numba

        if not kernels.compiled(*dispatchers, wanted=wanted):
            print(f"compiling kernels (first run only, {seconds}; ahead-of-time kernels: "
                  f"{kernels.aot.status()}) ...", file=sys.stderr, flush=True)


def search_progress(args, dispatchers=(), wanted=None) -> ProgressBar:
    """The search's progress bar; says first when the kernels the search will call
    (``dispatchers``, default: the batched search's) are about to be compiled."""
    compile_notice(args, dispatchers, wanted)
    return ProgressBar("search", not args.quiet)
