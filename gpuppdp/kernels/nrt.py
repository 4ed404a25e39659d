"""Kernels compiled without the reference counting of Numba's runtime (NRT).

Numba counts every array a compiled function receives in and out of it (an atomic increment and
decrement per array argument and per view made), even when the caller holds the array
throughout.  For a function called per checked node in a compiled search loop, with tens of
array arguments, that was a fifth of a check's time.  A function that allocates nothing (no
``np.empty``, no array returned) needs none of it; Numba's ``_nrt`` option turns it off for that
function, which then refuses to compile any allocation.
"""

from __future__ import annotations

from numba import njit

__all__ = ["njit_no_refcount"]


def njit_no_refcount(function=None, *, error_model: str = "python"):
    """``@njit(cache=True)`` without reference counting: for functions that allocate
    nothing.  ``@njit_no_refcount(error_model="numpy")``: Numba's NumPy error model (a
    division by zero gives an infinity or NaN instead of raising)."""
    def compile_(f):
        return njit(cache=True, _nrt=False, error_model=error_model)(f)  # type: ignore[call-overload]
    return compile_ if function is None else compile_(function)
