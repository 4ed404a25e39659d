"""Privacy budget accounting with sequential and parallel composition.

* **Sequential composition**: releases computed on the same data add up, ``ε = Σ ε_i``
  (Dwork & Roth 2014, Theorem 3.14).
* **Parallel composition**: releases computed on *disjoint* parts of the data (histogram
  bins, equivalence classes, any partition fixed independently of the data) cost only the
  largest of them, ``ε = max ε_i`` (McSherry 2009, Theorem 4).  The caller vouches for
  disjointness by spending inside :meth:`BudgetAccountant.parallel`.

A spend that would exceed the budget raises :class:`BudgetError`, before any noise is drawn,
with the amount still available.  Spends are never refunded: once noise is drawn, the
information is out.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014, Theorem 3.14.
.. [2] F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..validation import check_epsilon

__all__ = ["BudgetAccountant", "BudgetError", "Spend"]

_RELATIVE_SLACK = 1e-9  # float round-off when many spends add up exactly to the budget


class BudgetError(ValueError):
    """A spend would exceed the privacy budget."""


@dataclass(frozen=True)
class Spend:
    """One entry of the ledger.

    Attributes
    ----------
    epsilon : float
        What the entry cost (for a parallel group, the largest of its parts).
    label : str
    composition : {"sequential", "parallel"}
    parts : tuple of float
        The ε of each disjoint part (a single value for a sequential spend).
    """

    epsilon: float
    label: str
    composition: str
    parts: tuple[float, ...]


class BudgetAccountant:
    """A total privacy budget ε and what has been spent from it.

    Parameters
    ----------
    epsilon : float
        The total budget (finite, > 0).

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> _ = acc.spend(0.25, label="age histogram")
    >>> with acc.parallel("per-class counts") as group:
    ...     for _ in range(3):
    ...         group.spend(0.5)
    >>> acc.spent, acc.remaining
    (0.75, 0.25)
    """

    def __init__(self, epsilon: float):
        self.total = check_epsilon(epsilon, "budget epsilon")
        self._ledger: list[Spend] = []

    @property
    def spent(self) -> float:
        """ε spent so far (sequential composition of the ledger)."""
        return math.fsum(s.epsilon for s in self._ledger)

    @property
    def remaining(self) -> float:
        """ε still available."""
        return max(0.0, self.total - self.spent)

    @property
    def ledger(self) -> tuple[Spend, ...]:
        """Every spend, in order."""
        return tuple(self._ledger)

    def check(self, epsilon: float, *, label: str = "") -> float:
        """Raise :class:`BudgetError` if ``epsilon`` cannot be spent now; return it validated."""
        epsilon = check_epsilon(epsilon)
        if self.spent + epsilon > self.total * (1.0 + _RELATIVE_SLACK):
            what = f" for {label!r}" if label else ""
            raise BudgetError(
                f"cannot spend epsilon={epsilon:g}{what}: the budget is epsilon={self.total:g}, "
                f"{self.spent:g} already spent, only {self.remaining:g} remaining")
        return epsilon

    def spend(self, epsilon: float, *, label: str = "") -> Spend:
        """Spend ``epsilon`` (sequential composition) or raise :class:`BudgetError`."""
        epsilon = self.check(epsilon, label=label)
        entry = Spend(epsilon, label, "sequential", (epsilon,))
        self._ledger.append(entry)
        return entry

    @contextmanager
    def parallel(self, label: str = "") -> Iterator["ParallelGroup"]:
        """Spend on disjoint partitions: the group costs the largest part.

        Each ``group.spend(ε_i)`` is checked at once against the remaining budget (so an
        over-budget part fails before its noise is drawn); on leaving the block the group is
        recorded as one ledger entry costing ``max ε_i`` -- also when the block raises, since
        parts released before the error have already used their budget.

        Yields
        ------
        ParallelGroup
        """
        group = ParallelGroup(self, label)
        try:
            yield group
        finally:
            if group.parts:
                self._ledger.append(
                    Spend(max(group.parts), label, "parallel", tuple(group.parts)))

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"BudgetAccountant(total={self.total:g}, spent={self.spent:g}, "
                f"remaining={self.remaining:g})")


class ParallelGroup:
    """The parts of one parallel composition (see :meth:`BudgetAccountant.parallel`)."""

    def __init__(self, accountant: BudgetAccountant, label: str):
        self._accountant = accountant
        self._label = label
        self.parts: list[float] = []

    def spend(self, epsilon: float) -> None:
        """Spend ``epsilon`` on one more disjoint part; raise :class:`BudgetError` if the
        group's cost (the largest part) would exceed the remaining budget."""
        epsilon = check_epsilon(epsilon)
        if epsilon > max(self.parts, default=0.0):
            self._accountant.check(epsilon, label=self._label)
        self.parts.append(epsilon)
