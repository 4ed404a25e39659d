"""Exact per-group sums of clipped values, for sums whose sensitivity holds as stated.

A float sum is not the real sum: its rounding depends on the order of the additions and on
the other values, so adding one record can move it by more than the record's clipped value,
and the Laplace noise calibrated to ``max(|lower|, |upper|)`` no longer gives the stated ε
(Casacuberta, Shoemate, Vadhan and Wagaman 2022 measure ε = 1 turning into about 2 near
2·10**8 rows).  Here the sum is exact:

1. each value is clipped to ``[lower, upper]`` and rounded (half to even) to the
   *summation grid* ``s = g · 2**-SUM_GRID_BITS``, ``g`` the Laplace mechanism's output
   grid: an integer number of units ``q`` with ``|q| <= Q = max(|round(lower/s)|,
   |round(upper/s)|)`` (clipping and rounding are monotone);
2. the units are summed per cell in integers, exactly (so in any order; the GPU's
   ``bincount`` gives the same sums as the CPU's): the units, shifted to ``0 .. 2Q``, are
   cut into digits of ``L = 52 - bit_length(n)`` bits and each digit summed with a float64
   ``bincount`` -- every partial sum is an integer below ``2**52``, exact in float64 --
   then recombined in int64 (on the CPU one fused pass over the rows adds the units into
   int64 totals directly: :mod:`gpuppdp.kernels.dp_sums`);
3. the exact sum ``S·s`` is rounded (half to even) to the mechanism's grid ``g`` in integer
   arithmetic, as the mechanism itself rounds a real input, and handed over as an exact
   multiple of ``g``.

Adding or removing one record changes one cell's exact sum by ``|q| · s <= Q · s``: the
sensitivity is ``Q · s`` (``max(|lower|, |upper|)`` rounded to the summation grid; twice
that under replace-one, where a record can move between two cells), and the mechanism is
built with it.  The refusal: a table of ``n`` rows with ``n · Q >= 2**62`` could overflow the
int64 accumulator and is refused (:class:`SummationRangeError`, before any budget is spent;
``Q`` is below ``2**29`` at the mechanism's default grid, so tables up to ``2**33``, about
``8.6·10**9`` rows, always pass, whatever the bounds).

What changes on small tables: each value moves by at most ``s / 2`` (``s`` is ``g / 65536``,
with ``g`` at most ``Δ / 4096``: ``Δ / 2**28`` or finer), so a cell's sum moves by at most
``count · s / 2`` before its rounding to ``g`` -- less than one step of ``g`` for cells of
fewer than 131072 rows -- and the noise scale is that of the float sum's mechanism (the
sensitivity rounded to the summation grid, which leaves ``floor(Δ / g)`` unchanged but for
bounds within ``s/2`` below a multiple of ``g``).  Values already on the summation grid
(integers, multiples of ``2**-k`` for small ``k``) give the very same release as the float
sum did with the same key (tests/test_dp_summation.py).

References
----------
.. [CSVW22] S. Casacuberta, M. Shoemate, S. Vadhan and C. Wagaman, "Widespread
   underestimation of sensitivity in differentially private libraries and how to fix it",
   ACM CCS 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..kernels.dp_sums import grid_unit_sums
from .mechanisms import LaplaceMechanism

__all__ = ["SUM_GRID_BITS", "SUM_LIMIT", "SummationRangeError", "ExactSum", "exact_sum_plan",
           "exact_sum_mechanism", "exact_grid_sums", "to_units", "check_range",
           "grouped_exact_sums", "round_units_to_grid"]

SUM_GRID_BITS = 16  # the summation grid is the noise grid divided by 2**16
SUM_LIMIT = 2**62  # n * Q must stay below this (int64 sums, shifted units below 2**63)


class SummationRangeError(InputError):
    """The table has too many rows for the exact int64 sum at this grid."""


@dataclass(frozen=True)
class ExactSum:
    """The plan of an exact sum: the summation grid and the clipping bounds in its units."""

    grid: float  # s, a power of two
    noise_grid: float  # g = s * 2**SUM_GRID_BITS
    lower_units: int  # round(lower / s)
    upper_units: int  # round(upper / s)
    lower: float = 0.0  # the clipping bounds
    upper: float = 0.0

    @property
    def bound_units(self) -> int:
        """``Q``: the largest ``|q|`` of a clipped, rounded value."""
        return max(abs(self.lower_units), abs(self.upper_units))

    def sensitivity(self, changed_cells: int) -> float:
        """L1 sensitivity of the exact per-cell sums: ``changed_cells · Q · s`` (exact)."""
        return float(changed_cells * self.bound_units) * self.grid

    def info(self, changed_cells: int) -> dict:
        """What a release records about its summation."""
        return {"method": "exact: fixed point in int64", "grid": self.grid,
                "noise_grid": self.noise_grid, "rounding": "half to even",
                "sensitivity": self.sensitivity(changed_cells),
                "max_rows": (SUM_LIMIT - 1) // max(self.bound_units, 1)}


def _round_half_even(v: float) -> int:
    return int(round(v))  # Python's round: half to even, exact on floats


def exact_sum_plan(lower: float, upper: float, noise_grid: float) -> ExactSum:
    """The summation grid under the mechanism's grid ``noise_grid`` (a power of two) and the
    bounds in its units."""
    grid = math.ldexp(noise_grid, -SUM_GRID_BITS)
    if grid == 0.0 or not math.isfinite(1.0 / grid):
        raise InputError(f"the noise grid {noise_grid!r} is too fine for an exact sum")
    return ExactSum(grid, noise_grid, _round_half_even(float(lower) / grid),
                    _round_half_even(float(upper) / grid), float(lower), float(upper))


def exact_sum_mechanism(epsilon: float, lower: float, upper: float, sensitivity: float,
                        coordinates: int) -> tuple[ExactSum, LaplaceMechanism]:
    """The plan of an exact sum and its Laplace mechanism: the grid the float sum's
    mechanism (``sensitivity``, the stated ``max(|lower|, |upper|)``-based one) would use,
    and the exact sum's sensitivity, ``coordinates · Q · s``."""
    plan = exact_sum_plan(lower, upper, LaplaceMechanism(
        epsilon=epsilon, sensitivity=sensitivity, coordinates=coordinates).granularity)
    return plan, LaplaceMechanism(epsilon=epsilon, sensitivity=plan.sensitivity(coordinates),
                                  granularity=plan.noise_grid, coordinates=coordinates)


def exact_grid_sums(xp, key, values, n_cells: int, plan: ExactSum, *, shift: float = 0.0,
                    squares: ExactSum | None = None):
    """Per-cell sums (cells ``key``, or None: one cell) of ``values - shift`` (a float64
    backend array, NaN read as 0) clipped to the plan's bounds, summed exactly and rounded to
    the noise grid: float64 multiples of ``plan.noise_grid`` (exact), for the mechanism; with
    ``squares`` (a plan) also those of the clipped values' squares, clipped to its bounds:
    ``(sums, sums of squares or None)``.
    On NumPy one fused pass (:func:`~gpuppdp.kernels.dp_sums.grid_unit_sums`), elsewhere array
    passes (the same sums); refuses as :func:`grouped_exact_sums`, before any pass."""
    n = int(values.shape[0])
    for p in (plan,) if squares is None else (plan, squares):
        check_range(n, p)
    if xp is np:
        sums, sq = grid_unit_sums(
            key, values, n_cells, shift, (plan.lower, plan.upper), 1.0 / plan.grid,
            None if squares is None else (squares.lower, squares.upper),
            1.0 if squares is None else 1.0 / squares.grid)
    else:
        x = xp.where(xp.isnan(values), 0.0, values)
        key = xp.zeros(n, dtype=xp.int64) if key is None else key
        c = xp.clip(x - shift if shift else x, plan.lower, plan.upper)
        sums = grouped_exact_sums(xp, key, to_units(xp, c, plan.lower, plan.upper, plan),
                                  n_cells, plan)
        sq = None if squares is None else grouped_exact_sums(
            xp, key, to_units(xp, c * c, squares.lower, squares.upper, squares), n_cells,
            squares)
    return (round_units_to_grid(xp, sums).astype(xp.float64) * plan.noise_grid,
            None if squares is None else
            round_units_to_grid(xp, sq).astype(xp.float64) * squares.noise_grid)


def to_units(xp, values, lower: float, upper: float, plan: ExactSum):
    """Values (a float64 backend array) clipped to ``[lower, upper]`` and rounded half to
    even to the summation grid: int64 units (exact: a power-of-two scaling, then ``rint``)."""
    clipped = xp.clip(values, float(lower), float(upper))
    return xp.rint(clipped * (1.0 / plan.grid)).astype(xp.int64)


def check_range(n: int, plan: ExactSum) -> None:
    """Refuses (:class:`SummationRangeError`) an exact sum of ``n`` rows that could overflow
    int64: ``n · Q >= 2**62``."""
    bound = plan.bound_units
    if n * bound >= SUM_LIMIT:
        raise SummationRangeError(
            f"the exact sum of {n} rows of up to {bound} units of the summation grid "
            f"({plan.grid:g}) could overflow int64 (n * max|value| must stay below 2**62): "
            "split the table, or release with a coarser granularity")


def grouped_exact_sums(xp, key, units, n_cells: int, plan: ExactSum):
    """Exact per-cell sums (int64, in units of the summation grid) of ``units`` (int64,
    ``|q| <= Q``) by cell ``key``, array passes; refuses (:class:`SummationRangeError`) when
    ``n · Q`` could overflow."""
    n = int(units.shape[0])
    check_range(n, plan)
    bound = plan.bound_units
    shifted = units + bound  # 0 .. 2Q
    counts = xp.bincount(key, minlength=n_cells).astype(xp.int64)
    digit_bits = max(52 - max(n, 1).bit_length(), 1)  # n * 2**digit_bits <= 2**52: exact
    total = xp.zeros(n_cells, dtype=xp.int64)
    top = max(2 * bound, 1).bit_length()
    for low in range(0, top, digit_bits):
        digit = (shifted >> low) & ((1 << digit_bits) - 1)
        part = xp.bincount(key, weights=digit.astype(xp.float64), minlength=n_cells)
        total += xp.rint(part).astype(xp.int64) << low
    return total - counts * bound


def round_units_to_grid(xp, sums):
    """Exact sums (int64 units of the summation grid) rounded half to even to the noise
    grid: int64 units of ``g`` (``|result| < 2**47``, exact as float64)."""
    half = 1 << (SUM_GRID_BITS - 1)
    q = sums >> SUM_GRID_BITS  # floor
    r = sums & ((1 << SUM_GRID_BITS) - 1)
    up = (r > half) | ((r == half) & ((q & 1) == 1))
    return q + up.astype(xp.int64)
