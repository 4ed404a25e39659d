"""Exact per-cell sums of clipped values, quantiles' grid positions and order statistics, on
the CPU: a pass or two over the rows each.

The CPU form of steps 1-2 of :mod:`gpuppdp.dp.summation`: each value (NaN read as 0) less a
shift is clipped to ``[lower, upper]``, scaled by the power of two ``1/s`` and rounded half to
even (``rint``: the same float operations, in the same order, as the array form's ``clip``,
product and ``rint``), and its integer units are added to its cell's int64 total; optionally
the square of the clipped value, clipped to its own bounds, is summed on its own grid in the
same pass (the sufficient statistics of a variance).  Integer additions are exact, so any
order gives the array form's sums: the rows are cut into tasks on the thread pool
(:func:`.groupby.run_tasks`), each adding into its own row of totals (rows padded apart, no
false sharing), and the rows are summed at the end.  The caller refuses a table whose sums
could overflow int64 first (:class:`~gpuppdp.dp.summation.SummationRangeError`).

:func:`grid_positions` is the CPU form of :mod:`gpuppdp.dp.quantiles`' positions: each value
(NaN read as 0) clipped, scaled, floored, plus one, clipped to the grid's range, in the array
form's float operations, the rows cut into tasks on the pool.  :func:`order_statistics` finds
``sorted(values)[first:last + 1]`` of integers by histogram selection: a histogram of ``2**16``
buckets (tasks on the pool), the values of the buckets holding the two ranks gathered, and
again on them while they are many and the buckets wider than one value; then a sort of what
is left.  Exact whatever the data (ties and skew only cost more rounds).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .aot import ahead_of_time
from .groupby import n_tasks_for, run_tasks

__all__ = ["grid_unit_sums", "grid_positions", "order_statistics"]

_PAD = 8  # int64 words between two tasks' rows of totals: one cache line


@njit(cache=True, nogil=True)
def _unit_sums(t, bounds, key, values, shift, lower, upper, scale, sq_lower, sq_upper,
               sq_scale, sums, squares):
    """Task ``t``: rows ``bounds[t]:bounds[t+1]`` added into ``sums[t]`` (and ``squares[t]``
    when it has rows); an empty ``key``: every row in cell 0."""
    with_squares = squares.shape[0] > 0
    keyed = key.shape[0] > 0
    for i in range(bounds[t], bounds[t + 1]):
        v = values[i]
        if v != v:
            v = 0.0
        c = min(max(v - shift, lower), upper)
        k = key[i] if keyed else 0
        sums[t, k] += np.int64(np.rint(c * scale))
        if with_squares:
            c2 = min(max(c * c, sq_lower), sq_upper)
            squares[t, k] += np.int64(np.rint(c2 * sq_scale))


ahead_of_time(_unit_sums, ["none(int64, int64[::1], int64[::1], float64[::1], float64, float64, "
                           "float64, float64, float64, float64, float64, int64[:, ::1], "
                           "int64[:, ::1])"])


def grid_unit_sums(key, values, n_cells: int, shift: float, bounds: tuple[float, float],
                   scale: float, sq_bounds: tuple[float, float] | None = None,
                   sq_scale: float = 1.0):
    """Per-cell int64 sums of ``rint(clip(v - shift, *bounds) * scale)`` over the rows (``key``
    int64 cell indices or None: one cell; ``values`` float64; host arrays), and with
    ``sq_bounds`` those of ``rint(clip(c * c, *sq_bounds) * sq_scale)``, ``c`` the clipped
    value: ``(sums, squares or None)``."""
    key = np.zeros(0, np.int64) if key is None else np.ascontiguousarray(key, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    n = values.shape[0]
    n_tasks = max(1, min(n_tasks_for(n, n), (n + (1 << 16)) // max(n_cells, 1)))
    cuts = np.linspace(0, n, n_tasks + 1).astype(np.int64)
    sums = np.zeros((n_tasks, n_cells + _PAD), np.int64)
    squares = np.zeros((n_tasks if sq_bounds is not None else 0, n_cells + _PAD), np.int64)
    sq_lower, sq_upper = sq_bounds if sq_bounds is not None else (0.0, 0.0)
    run_tasks(_unit_sums, n_tasks, cuts, key, values, float(shift), float(bounds[0]),
              float(bounds[1]), float(scale), float(sq_lower), float(sq_upper),
              float(sq_scale), sums, squares)
    total = sums[:, :n_cells].sum(axis=0)
    return total, (squares[:, :n_cells].sum(axis=0) if sq_bounds is not None else None)


@njit(cache=True, nogil=True)
def _positions(t, bounds, values, lower, upper, scale, j_lo, j_top, out):
    """Task ``t``: the positions of rows ``bounds[t]:bounds[t+1]``."""
    for i in range(bounds[t], bounds[t + 1]):
        v = values[i]
        if v != v:
            v = 0.0
        p = np.int64(np.floor(min(max(v, lower), upper) * scale)) + 1
        out[i] = min(max(p, j_lo), j_top)


ahead_of_time(_positions, ["none(int64, int64[::1], float64[::1], float64, float64, float64, "
                           "int64, int64, int64[::1])"])


def grid_positions(values, lower: float, upper: float, scale: float, j_lo: int, j_top: int):
    """``clip(floor(clip(v, lower, upper) * scale) + 1, j_lo, j_top)`` of each value (``values``
    float64, host; NaN read as 0): int64."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    n = values.shape[0]
    n_tasks = n_tasks_for(n, n)
    out = np.empty(n, np.int64)
    run_tasks(_positions, n_tasks, np.linspace(0, n, n_tasks + 1).astype(np.int64), values,
              float(lower), float(upper), float(scale), int(j_lo), int(j_top), out)
    return out


_BUCKET_BITS = 16


@njit(cache=True, nogil=True)
def _bucket_counts(t, bounds, values, low, high, shift, out):
    """Task ``t``: values ``bounds[t]:bounds[t+1]`` in ``[low, high)`` counted by bucket
    ``(v - low) >> shift`` into ``out[t]``."""
    for i in range(bounds[t], bounds[t + 1]):
        v = values[i]
        if low <= v and v < high:
            out[t, (v - low) >> shift] += 1


ahead_of_time(_bucket_counts, ["none(int64, int64[::1], int64[::1], int64, int64, int64, "
                               "int64[:, ::1])"])


@njit(cache=True, nogil=True)
def _gather(values, low, high, out):
    """The values in ``[low, high)``, in order, into ``out`` (exactly as many)."""
    m = 0
    for i in range(values.shape[0]):
        v = values[i]
        if low <= v and v < high:
            out[m] = v
            m += 1


ahead_of_time(_gather, ["none(int64[::1], int64, int64, int64[::1])"])


def order_statistics(values, first: int, last: int, low: int, high: int):
    """``np.sort(values)[first:last + 1]`` of int64 ``values`` (host), all in ``[low, high)``,
    without sorting them all (module docstring)."""
    below, sub = 0, np.ascontiguousarray(values, dtype=np.int64)
    enough = max(4 * (last - first + 1), 1 << 12)
    while True:
        shift = max((high - low - 1).bit_length() - _BUCKET_BITS, 0)
        n = sub.shape[0]
        n_tasks = n_tasks_for(n, n)
        counts = np.zeros((n_tasks, ((high - low - 1) >> shift) + 1), np.int64)
        run_tasks(_bucket_counts, n_tasks, np.linspace(0, n, n_tasks + 1).astype(np.int64),
                  sub, low, high, shift, counts)
        cum = np.cumsum(counts.sum(axis=0))
        b1, b2 = np.searchsorted(cum, [first - below, last - below], side="right").tolist()
        before = int(cum[b1 - 1]) if b1 else 0
        kept = np.empty(int(cum[b2]) - before, np.int64)
        low, high = low + (b1 << shift), min(low + ((b2 + 1) << shift), high)
        _gather(sub, low, high, kept)
        below, sub = below + before, kept
        if shift == 0 or sub.shape[0] <= enough:
            return np.sort(sub)[first - below:last - below + 1]
