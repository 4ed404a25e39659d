"""Progress of a run made of a few steps, reported to a ``progress(done, total)`` callback
(the CLI's :class:`~gpuppdp.cli.progress.ProgressBar`, or anything callable)."""

from __future__ import annotations

from typing import Callable

__all__ = ["Steps"]


class Steps:
    """Call once before the first step and once after each: ``progress(0, total)``, then
    ``progress(1, total)``, ...; nothing when ``progress`` is None."""

    def __init__(self, progress: Callable[[int, int], None] | None, total: int):
        self.progress = progress
        self.total = total
        self.done = 0

    def __call__(self) -> None:
        if self.progress is not None:
            self.progress(self.done, self.total)
        self.done += 1
