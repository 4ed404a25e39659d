"""Charging and composing ledger entries: neighbouring relations, privacy notions, the accountings.

What one entry of a :class:`~gpuppdp.dp.accountant.BudgetAccountant`'s ledger costs in the
budget's relation (:func:`charge`, :func:`charge_zcdp`, :func:`charge_rdp`), and what a
whole ledger costs (:func:`compose`, the tightest of the accountings below).

* **Sequential composition**: releases computed on the same data add up,
  ``(Σ ε_i, Σ δ_i)`` (Dwork & Roth 2014, Theorem 3.16).
* **Parallel composition**: releases computed on *disjoint* parts of the data (histogram
  bins, equivalence classes, any partition fixed independently of the data).  What a group
  costs depends on the neighbouring relation (:class:`~gpuppdp.dp.sensitivity.Neighbouring`):

  - add/remove-one: one person is in at most one part, the group costs ``max ε_i``
    (McSherry 2009, Theorem 4);
  - replace-one: the replaced record can leave one part and enter another, so two parts
    change: the group costs the sum of the two largest ``ε_i`` (and of the two largest
    ``δ_i``).

  The caller vouches for disjointness by spending inside
  :meth:`~gpuppdp.dp.accountant.BudgetAccountant.parallel`.

**Neighbouring relations.**  A budget is kept in one relation (``neighbouring``, add/remove
by default); every entry records the relation its ε was computed under and is *charged*
(:attr:`Spend.charged <gpuppdp.dp.accountant.Spend.charged>`) in the budget's relation:

* an add/remove-one entry charged to a replace-one budget costs ``2ε`` and
  ``(1 + e**ε)·δ``: replacing a record is removing it and adding another, two add/remove
  steps (group privacy for groups of 2, Dwork & Roth 2014, Theorem 2.2 and its (ε, δ) form);
* a replace-one entry charged to an add/remove budget costs its ``ε`` (and δ).  This holds
  for a release whose add/remove sensitivity is at most its replace-one sensitivity -- every
  release of this package: counts, histograms, class counts and grouped sums have replace-one
  sensitivity twice the add/remove one, so calibrated to replace-one at ε they are
  ``ε/2``-DP under add/remove (Dwork & Roth 2014, Example 3.2; charged at ε, conservatively).
  A mechanism private *only* under replace-one (a mean over a public n) must not be charged
  to an add/remove budget.

So one add/remove release at ε = 1 and one replace-one release at ε = 1 cost 3 of a
replace-one budget, not 2.

**Privacy notions.**  Every entry records its notion (:data:`NOTIONS`): ``"pure"`` (ε),
``"approx"`` (ε, δ), ``"zcdp"`` (ρ, with the δ of approximate zCDP, Bun & Steinke 2016,
Definition 8.1: the discrete Gaussian's support) or ``"rdp"`` (an RDP curve on a grid of
orders, Mironov 2017, with a δ of the same kind, and optionally the (ε, δ) the same release
also satisfies, e.g. a Laplace release's :func:`~gpuppdp.dp.accounting.laplace_curve` and
its ε).  A zCDP entry under add/remove-one charged to a replace-one budget costs ``4ρ``
(group privacy for groups of 2, Bun & Steinke 2016, Proposition 1.9; refused when its
δ > 0), an RDP entry its :func:`~gpuppdp.dp.accounting.group_curve` (Mironov 2017,
Proposition 2; refused when its δ > 0); a replace-one entry is charged at face value, as
above.  The budget stays an (ε, δ) pair, and what the ledger has spent is the tightest of
these accountings of all its entries (:func:`compose`), each at a δ within the budget:

* *basic*: ``(Σ ε_i, Σ δ_i)`` (every entry has an (ε, δ): no zCDP entry, no RDP entry
  without one);
* *advanced*: advanced composition of the same (ε, δ) at the δ the budget has left
  (:func:`~gpuppdp.dp.accounting.advanced_composition`);
* *zCDP*: the ρ of the zCDP entries plus ``ε²/2`` for every pure entry (Bun & Steinke 2016,
  Proposition 1.4), converted once with the tight conversion
  (:func:`~gpuppdp.dp.accounting.zcdp_to_approx`) at the δ left after the entries' own δ,
  plus the ε of the approximate entries (basic composition; RDP entries count by their
  (ε, δ), and without one there is no zCDP accounting);
* *zCDP, pure kept pure*: as the last, the pure entries added as ε instead;
* *RDP*: the curves summed (Mironov 2017, Proposition 1) on the orders all RDP entries
  share (:data:`ALPHAS <gpuppdp.dp.accounting.ALPHAS>` by default): the RDP entries'
  curves, ``ρ α`` for the zCDP entries and :func:`~gpuppdp.dp.accounting.pure_curve` (the
  tight curve of ε-DP) for the pure ones, converted once
  (:func:`~gpuppdp.dp.accounting.rdp_to_approx`) at the δ left, plus the ε of the
  approximate entries;
* *RDP, pure kept pure*: as the last, the pure entries added as ε instead.

:attr:`BudgetAccountant.composition <gpuppdp.dp.accountant.BudgetAccountant.composition>`
says which accounting it took.  A spend is refused (:class:`BudgetError`) when no accounting
of the ledger with it fits the budget.  A zCDP spend, and an RDP spend without an (ε, δ),
need a budget with δ > 0.  The accountings are composition theorems for releases whose
parameters do not depend on earlier outputs (the basic sum and the zCDP sum also hold as
privacy filters when they do: Rogers et al. 2016;
Whitehouse et al. 2023).

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014, Theorem 2.2 (group privacy),
   Example 3.2, Theorem 3.16 (composition).
.. [2] F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition).
.. [3] M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications,
   Extensions, and Lower Bounds", TCC 2016: Propositions 1.4 and 1.9, section 8.
.. [4] R. Rogers, A. Roth, J. Ullman and S. Vadhan, "Privacy Odometers and Filters",
   NeurIPS 2016; J. Whitehouse, A. Ramdas, R. Rogers and Z. S. Wu, "Fully-Adaptive
   Composition in Differential Privacy", ICML 2023.
.. [5] I. Mironov, "Rényi Differential Privacy", CSF 2017: Propositions 1, 2, 5, 6.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .accounting import (ALPHAS, advanced_composition, check_curve, group_curve,
                         pure_curve, rdp_to_approx, zcdp_to_approx)
from .sensitivity import Neighbouring

__all__ = ["BudgetError", "charge", "charge_zcdp", "charge_rdp", "compose", "NOTIONS"]

#: the privacy notions of ledger entries
NOTIONS = ("pure", "approx", "zcdp", "rdp")


class BudgetError(InputError):
    """A spend would exceed the privacy budget (or goes to a closed parallel group, or a
    stale ledger snapshot would be saved)."""


def _two_steps(relation: Neighbouring | str, budget: Neighbouring | str, delta: float = 0.0,
               notion: str | None = None) -> bool:
    """Whether an entry computed under ``relation`` is charged to a budget kept under
    ``budget`` as two add/remove steps (add/remove -> replace; otherwise at face value).  For a
    ``notion`` whose group privacy is bounded only without δ (zCDP, RDP), an approximate
    entry (``delta`` > 0) that needs the two steps is refused (:class:`BudgetError`)."""
    relation, budget = Neighbouring.parse(relation), Neighbouring.parse(budget)
    if relation is budget or budget is Neighbouring.ADD_REMOVE:
        return False
    if notion is not None and delta > 0.0:
        raise BudgetError(
            f"an entry in {notion} with delta={delta:g} under add-remove neighbours cannot be "
            f"charged to a replace budget (group privacy of approximate {notion} is not "
            "bounded here): compute the release under replace-one neighbours")
    return True


def charge(epsilon: float, delta: float, relation: Neighbouring | str,
           budget: Neighbouring | str) -> tuple[float, float]:
    """``(ε, δ)`` of an entry computed under ``relation``, charged to a budget kept under
    ``budget`` (the module's rule: add/remove -> replace doubles ε, Dwork & Roth 2014,
    Theorem 2.2; replace -> add/remove at face value).

    >>> charge(1.0, 0.0, "add-remove", "replace"), charge(1.0, 0.0, "replace", "add-remove")
    ((2.0, 0.0), (1.0, 0.0))
    """
    if not _two_steps(relation, budget):
        return epsilon, delta
    if delta == 0.0:
        return 2.0 * epsilon, 0.0
    return 2.0 * epsilon, min(1.0, (1.0 + math.exp(min(epsilon, 700.0))) * delta)


def charge_zcdp(rho: float, delta: float, relation: Neighbouring | str,
                budget: Neighbouring | str) -> tuple[float, float]:
    """``(ρ, δ)`` of a zCDP entry computed under ``relation``, charged to a budget kept under
    ``budget``: add/remove -> replace costs ``4ρ`` (group privacy, Bun & Steinke 2016,
    Proposition 1.9; an approximate entry, δ > 0, is refused), replace -> add/remove at face
    value (as :func:`charge`).

    >>> charge_zcdp(0.5, 0.0, "add-remove", "replace")
    (2.0, 0.0)
    """
    if not _two_steps(relation, budget, delta, "zCDP"):
        return rho, delta
    return 4.0 * rho, 0.0


def charge_rdp(curve, orders, delta: float, relation: Neighbouring | str,
               budget: Neighbouring | str) -> tuple[np.ndarray, float]:
    """``(curve, δ)`` of an RDP entry computed under ``relation``, charged to a budget kept
    under ``budget``: add/remove -> replace is two add/remove steps,
    :func:`~gpuppdp.dp.accounting.group_curve` (Mironov 2017, Proposition 2; an approximate
    entry, δ > 0, is refused), replace -> add/remove at face value (as :func:`charge`).

    >>> charged, delta = charge_rdp([1.0, 2.0, 3.0], [2.0, 4.0, 8.0], 0.0, "replace", "add-remove")
    >>> charged.tolist(), delta
    ([1.0, 2.0, 3.0], 0.0)
    """
    curve, orders = check_curve(curve, orders)
    if not _two_steps(relation, budget, delta, "RDP"):
        return curve, delta
    return group_curve(curve, orders), 0.0



def compose(entries, delta_budget: float | None) -> tuple[float, float, str]:
    """``(ε, δ, accounting)``: the tightest accounting of the charged ``entries`` (the module
    docstring's list; the smallest ε, then the smallest δ) whose δ fits ``delta_budget``
    (None or 0: only the basic sum, which needs no δ to spare).  ``ε`` is ``inf`` when no
    accounting applies (zCDP or RDP entries without δ to convert them).

    >>> from gpuppdp.dp.accountant import Spend
    >>> e = [Spend(None, "", "sequential", (), notion="zcdp", charged_rho=0.5, charged_delta=0.0)]
    >>> eps, delta, how = compose(e, 1e-6)
    >>> round(eps, 4), delta, how
    (5.2215, 1e-06, 'zcdp')
    """
    pure: list[float] = []  # the ε of entries that are only ε-DP ...
    approx: list[float] = []  # ... or only (ε, δ)-DP, δ > 0
    rho: list[float] = []
    curves: list = []  # the RDP entries
    deltas: list[float] = []
    for s in entries:
        value = s.charged_rho if s.notion == "zcdp" else \
            s.charged_curve if s.notion == "rdp" else s.charged
        if s.charged_delta is None or value is None:
            raise TypeError(f"ledger entry {s.label!r} carries no charge")
        deltas.append(s.charged_delta)
        if s.notion == "rdp":
            curves.append(s)
        else:
            (rho if s.notion == "zcdp" else pure if s.charged_delta == 0.0 else approx
             ).append(value)
    own_delta = min(1.0, math.fsum(deltas))
    found: list[tuple[float, float, str]] = []
    # the RDP entries with an (ε, δ) count by it too; without, no (ε, δ) or zCDP accounting
    with_eps = all(s.charged is not None for s in curves)
    pure_eps = pure + [s.charged for s in curves if s.charged is not None
                       and s.charged_delta == 0.0]
    approx_eps = approx + [s.charged for s in curves if s.charged is not None
                           and s.charged_delta]
    if with_eps and not rho:
        found.append((math.fsum(pure_eps) + math.fsum(approx_eps), own_delta, "basic"))
    budget = delta_budget or 0.0
    slack = budget - own_delta
    if budget > 0.0 and 0.0 < slack < 1.0:
        if with_eps and not rho and len(pure_eps) + len(approx_eps) > 1:
            found.append((advanced_composition(pure_eps + approx_eps, slack), budget,
                          "advanced"))
        if with_eps:
            rho_z, rho_p = math.fsum(rho), math.fsum(0.5 * e * e for e in pure_eps)
            if rho or pure_eps:
                found.append((zcdp_to_approx(rho_z + rho_p, slack) + math.fsum(approx_eps),
                              budget, "zcdp"))
            if rho and pure_eps:
                found.append((zcdp_to_approx(rho_z, slack) + math.fsum(pure_eps)
                              + math.fsum(approx_eps), budget, "zcdp, pure kept pure"))
        rdp = _summed_curve(curves, rho, pure)
        if rdp is not None:
            found.append((rdp_to_approx(rdp[1], slack, rdp[0]) + math.fsum(approx), budget,
                          "rdp"))
            kept = _summed_curve(curves, rho, []) if pure and (rho or curves) else None
            if kept is not None:
                found.append((rdp_to_approx(kept[1], slack, kept[0]) + math.fsum(pure)
                              + math.fsum(approx), budget, "rdp, pure kept pure"))
    if not found:
        return math.inf, own_delta, "none"
    return min(found, key=lambda c: (c[0], c[1]))


def _summed_curve(curves: list, rho: list[float], pure: list[float]):
    """``(orders, curve)``: the sum of the charged RDP curves, ``ρ α`` and the pure entries'
    :func:`~gpuppdp.dp.accounting.pure_curve` on the orders every RDP entry gives (None
    when there is nothing to sum, or no order they share)."""
    if not (curves or rho or pure):
        return None
    grids: dict[int, tuple[tuple[float, ...], list]] = {}
    for s in curves:  # by identity: equal grids are one object (accountant._GRIDS)
        grids.setdefault(id(s.orders), (s.orders, []))[1].append(s.charged_curve)
    orders = np.asarray(ALPHAS, dtype=np.float64)
    for i, (grid, _) in enumerate(grids.values()):  # several grids: the orders all give
        orders = np.asarray(grid) if i == 0 else np.intersect1d(orders, grid)
    if not orders.shape[0]:
        return None
    total = math.fsum(rho) * orders
    for grid, rows in grids.values():
        total += np.sum(rows, axis=0)[np.isin(grid, orders)]
    values, counts = np.unique(np.asarray(pure, dtype=np.float64), return_counts=True)
    for value, count in zip(values.tolist(), counts.tolist()):  # distinct ε: few
        total += count * pure_curve(value, orders)
    return orders, total


def _group_cost(values, neighbouring: Neighbouring) -> float:
    """Cost of parallel parts: the largest, or the two largest under replace-one."""
    if not values:
        return 0.0
    if neighbouring is Neighbouring.ADD_REMOVE:
        return max(values)
    top = sorted(values, reverse=True)[:2]
    return math.fsum(top)
