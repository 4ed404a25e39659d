"""Global L1 sensitivity of common queries, derived from declared bounds.

The sensitivity ``Δf = max |f(D) - f(D')|_1`` over *neighbouring* datasets ``D, D'``
(Dwork & Roth 2014, Definition 3.1) depends on what "neighbouring" means, so every function
here takes the relation explicitly:

* :attr:`Neighbouring.ADD_REMOVE` -- ``D'`` is ``D`` with one person's records added or
  removed (unbounded DP; the dataset size is private).
* :attr:`Neighbouring.REPLACE` -- ``D'`` is ``D`` with one person's records replaced (bounded
  DP; the dataset size is public).

A person may own several records: ``max_contributions`` bounds how many (1 when each person is
one row, as in microdata).  The bound must be *enforced*, not assumed: the releases in
:mod:`gpuppdp.dp.releases` enforce it with ``person=`` and ``max_rows_per_person=`` (rows
beyond the bound dropped at random before counting) and pass it here.  (Dividing ε by ``m``
instead gives the same noise but records a row-level ε: a ledger would under-count the
person-level spending ``m``-fold.)  Values are only bounded if the query clips them: the
releases clip to the declared ``[lower, upper]`` before summing.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014, Definition 3.1, Examples 3.1-3.2 (counts,
   histograms), section 3.3.
.. [2] J. Near and C. Abuah, "Programming Differential Privacy", 2021, chapter "Sensitivity"
   (sums and means with clipping).
"""

from __future__ import annotations

import math
import numbers
from enum import Enum

from ..errors import InputError

__all__ = ["Neighbouring", "count_sensitivity", "sum_sensitivity", "mean_sensitivity",
           "histogram_sensitivity", "grouped_sum_sensitivity", "counting_queries_sensitivity"]


class Neighbouring(str, Enum):
    """Which datasets are neighbours (the unit of privacy)."""

    ADD_REMOVE = "add-remove"
    REPLACE = "replace"

    @classmethod
    def parse(cls, value: "Neighbouring | str") -> "Neighbouring":
        """Accept the enum or its value; a clear error otherwise."""
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in cls)
            raise InputError(f"neighbouring must be one of {choices}, got {value!r}") from None


def _check_contributions(max_contributions) -> int:
    if (not isinstance(max_contributions, numbers.Integral) or isinstance(max_contributions, bool)
            or max_contributions < 1):
        raise InputError(f"max_contributions must be an integer >= 1, got {max_contributions!r}")
    return int(max_contributions)


def _check_bounds(lower, upper) -> tuple[float, float]:
    for name, v in (("lower", lower), ("upper", upper)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v):
            raise InputError(f"{name} must be a finite number, got {v!r}")
    if not lower <= upper:
        raise InputError(f"need lower <= upper, got lower={lower!r}, upper={upper!r}")
    return float(lower), float(upper)


def count_sensitivity(*, neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                      max_contributions: int = 1) -> int:
    """Sensitivity of a counting query ("how many records satisfy P?").

    Adding, removing or replacing one person changes the count by at most the number of
    records they own, under either relation: ``Δ = max_contributions``.

    Examples
    --------
    >>> count_sensitivity()
    1
    """
    Neighbouring.parse(neighbouring)
    return _check_contributions(max_contributions)


def sum_sensitivity(*, lower: float, upper: float,
                    neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                    max_contributions: int = 1) -> float:
    """Sensitivity of the sum of one attribute clipped to ``[lower, upper]``.

    * add/remove: one record contributes at most ``max(|lower|, |upper|)``;
    * replace: one record changes by at most ``upper - lower``;

    times ``max_contributions``.

    Examples
    --------
    Each person reports how many real estates they sold, at most 7: the sum query has
    ``Δf = 7``.

    >>> sum_sensitivity(lower=0, upper=7)
    7.0
    """
    lower, upper = _check_bounds(lower, upper)
    m = _check_contributions(max_contributions)
    if Neighbouring.parse(neighbouring) is Neighbouring.ADD_REMOVE:
        return m * max(abs(lower), abs(upper))
    return m * (upper - lower)


def mean_sensitivity(*, lower: float, upper: float, n: int) -> float:
    """Sensitivity of the mean of ``n`` values clipped to ``[lower, upper]`` (replace-one).

    Only defined when ``n`` is public, i.e. under :attr:`Neighbouring.REPLACE`:
    ``Δ = (upper - lower) / n``.  Under add/remove-one the size is private; release a noisy
    sum and a noisy count instead (:func:`gpuppdp.dp.dp_group_stats` does).

    Examples
    --------
    >>> mean_sensitivity(lower=0, upper=100, n=50)
    2.0
    """
    lower, upper = _check_bounds(lower, upper)
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
        raise InputError(f"n must be a positive integer (the public dataset size), got {n!r}")
    return (upper - lower) / int(n)


def histogram_sensitivity(*, neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                          max_contributions: int = 1) -> int:
    """L1 sensitivity of a histogram (counts over disjoint bins, e.g. a contingency table).

    Adding or removing one record changes one bin by one: ``Δ = 1``; replacing it moves it
    between two bins: ``Δ = 2`` (times ``max_contributions``).

    Examples
    --------
    >>> histogram_sensitivity(), histogram_sensitivity(neighbouring="replace")
    (1, 2)
    """
    m = _check_contributions(max_contributions)
    return m if Neighbouring.parse(neighbouring) is Neighbouring.ADD_REMOVE else 2 * m


def grouped_sum_sensitivity(*, lower: float, upper: float,
                            neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                            max_contributions: int = 1) -> float:
    """L1 sensitivity of per-group sums of a clipped attribute (a histogram of sums).

    Add/remove: ``max(|lower|, |upper|)``; replace: the record may move to another group,
    changing two sums, ``2·max(|lower|, |upper|)`` (which bounds ``upper - lower`` for a
    change within one group); times ``max_contributions``.
    """
    lower, upper = _check_bounds(lower, upper)
    m = _check_contributions(max_contributions)
    one = max(abs(lower), abs(upper))
    return m * (one if Neighbouring.parse(neighbouring) is Neighbouring.ADD_REMOVE else 2 * one)


def counting_queries_sensitivity(k: int) -> int:
    """L1 sensitivity of ``k`` arbitrary counting queries answered together: ``Δ = k``.

    Each count changes by at most one when one record is added, removed or replaced, so the
    vector of ``k`` answers changes by at most ``k`` in L1 norm (Dwork & Roth 2014,
    section 3.3).  Disjoint counts (a histogram) do better: :func:`histogram_sensitivity`.
    """
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
        raise InputError(f"k must be a positive integer number of queries, got {k!r}")
    return int(k)
