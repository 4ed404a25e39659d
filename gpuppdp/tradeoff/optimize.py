"""The three optimizations of the utility-privacy trade-off (the thesis "seed 004", section
4.3): over the distribution ``x`` that a class publishes of its sensitive attribute (a point
of the probability simplex of the ``m`` sensitive values),

1. :func:`min_utility_loss` -- the least utility loss subject to the privacy losses within
   (``epsilon``, ``alpha``);
2. :func:`min_privacy_loss` -- the least privacy loss subject to the utility losses within
   (``delta_distribution``, ``gamma_entropy``);
3. :func:`feasible_region` -- where both hold, with its boundary sampled.

The losses (the project's definitions, :mod:`gpuppdp.algorithms.negotiation` and
:func:`gpuppdp.analysis.utility.privacy_utility_losses`; ``a`` the adversary's prior, ``o``
the class's original distribution, ``e_v`` the point mass on value ``v``, ``H`` the Shannon
entropy in bits):

* distribution privacy loss ``P_D(x) = ||x - a||_2``; entropy privacy loss
  ``P_H(x) = |H(a) - H(x)|``;
* distribution utility loss ``U_D(x) = sum_v o_v ||e_v - x||_2`` (``reference="record"``, the
  default: each original record of value ``v`` sees its value blurred into ``x``) or
  ``||o - x||_2`` (``reference="original-class"``); entropy utility loss ``U_H(x) = H(x)``
  (record: ``|H(e_v) - H(x)|`` with ``H(e_v) = 0``) or ``|H(o) - H(x)|`` (original-class).

The thesis's names: ``epsilon`` bounds ``P_D``, ``alpha`` ``P_H``, ``delta`` ``U_D`` and
``gamma`` ``U_H``.  Each problem minimizes one loss (``objective="distribution"`` or
``"entropy"``: the vector problems of the thesis scalarized one component at a time; the other
component is reported at the answer).

Convexity (worked out for the solver)
-------------------------------------
The Euclidean terms ``P_D`` and ``U_D`` are convex in ``x`` (a norm of an affine map, and a
non-negative sum of them).  ``H`` is concave, so ``{H(x) >= c}`` is convex (a superlevel set
of a concave function) and ``{H(x) <= c}`` is *reverse convex* (the complement of an open
convex set): an absolute-value entropy bound ``|H(r) - H(x)| <= b`` is the convex constraint
``H(x) >= H(r) - b`` and the reverse-convex one ``H(x) <= H(r) + b`` (vacuous, hence dropped,
when ``H(r) + b >= log2 m``).  Minimizing ``|H(r) - H(x)|`` is split over the active side of the
absolute value: below (``H(x) <= H(r)``, objective ``H(r) - H(x)`` convex, its side constraint
reverse convex) and above (``H(x) >= H(r)``, a concave objective ``H(x) - H(r)``).  Hence:

* ``min_utility_loss(objective="distribution")``: convex but for ``H(x) <= H(a) + alpha``
  (often vacuous);
* ``min_privacy_loss(objective="distribution")``: convex but for the upper entropy-utility
  bound (``H(x) <= gamma`` with the record reference, vacuous when ``gamma >= log2 m``);
* every ``objective="entropy"`` problem and the feasible region: non-convex in general.

Solver
------
One simplicial branch and bound (Horst & Tuy, "Global Optimization", 1996, ch. 7) solves all:
a cell is a simplex ``conv(V)`` of the probability simplex, ``x = V lambda``; on a cell every
concave term (``+H``) is replaced by its convex envelope there, the affine interpolation of
``H`` at the cell's vertices (below ``H`` by concavity), which relaxes the problem to a convex
one solved with SciPy's SLSQP: its value is a lower bound on the cell, its answer (if it meets
the true constraints) an upper bound; cells are split on their longest edge, best bound first.
A problem without concave terms is convex and solved exactly in the first cell (``convex`` is
``True``, ``gap`` 0 up to the solver's 1e-12).  Otherwise the result carries the certified
``gap`` (best value found minus the least lower bound of the cells left), at most ``gap_tol``
unless ``max_cells`` ran out. "Certified" is up to SLSQP's tolerance on the convex relaxations
(a relaxation SLSQP does not solve gets the valid, weaker bound of its linearization at the
cell's vertices). Infeasibility is certified when every cell's relaxation is infeasible (a
convex phase-one problem with a positive optimum).

Per class: given 2-D ``prior`` / ``original`` (one row per class), each function answers a list,
one problem per class, solved one after the other (a Python loop calling SciPy: the problems are
small and this is not a hot path).  :func:`class_distributions` gives a table's classes'
original distributions and priors.

Needs SciPy (``pip install "gpuppdp[tradeoff]"``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["min_utility_loss", "min_privacy_loss", "feasible_region", "loss_values",
           "class_distributions",
           "Solution", "Region", "REFERENCES", "OBJECTIVES", "LOSSES"]

REFERENCES = ("record", "original-class")
OBJECTIVES = ("distribution", "entropy")
#: the four losses, in the thesis's order, with the name of the bound on each
LOSSES = {"distribution_privacy_loss": "epsilon", "entropy_privacy_loss": "alpha",
          "distribution_utility_loss": "delta_distribution",
          "entropy_utility_loss": "gamma_entropy"}

_FEAS_TOL = 1e-9    # a constraint holds within this (in the loss's own unit)
_TINY = 1e-15       # entropy gradients taken at max(x, _TINY)


def _entropy(x: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of each row of ``x`` (0 log 0 = 0)."""
    x = np.clip(x, 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x > 0, x * np.log2(np.where(x > 0, x, 1.0)), 0.0)
    return -t.sum(axis=-1)


def loss_values(x, prior, original, reference: str = "record") -> dict:
    """The four losses of publishing ``x`` (rows: points) in a class of original distribution
    ``original`` against the prior ``prior`` (the module docstring's definitions); each a float
    for one point, an array for several."""
    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(prior, dtype=np.float64)
    o = np.asarray(original, dtype=np.float64)
    hx = _entropy(x)
    if reference == "record":
        sq = (x * x).sum(axis=-1)[..., None]
        u_d = (o * np.sqrt(np.maximum(1.0 - 2.0 * x + sq, 0.0))).sum(axis=-1)
        u_h = hx
    else:
        u_d = np.linalg.norm(x - o, axis=-1)
        u_h = np.abs(_entropy(o) - hx)
    out = {"distribution_privacy_loss": np.linalg.norm(x - a, axis=-1),
           "entropy_privacy_loss": np.abs(_entropy(a) - hx),
           "distribution_utility_loss": u_d, "entropy_utility_loss": u_h}
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in out.items()}


# ------------------------------------------------------------------------------------------
# terms: f(x) with its gradient; ``concave`` ones are relaxed on a cell
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Term:
    """``kind``: ``"sqdist"`` ``||x - c||^2`` (reported as ``||x - c||``), ``"record"``
    ``sum_v c_v ||x - e_v||``, ``"entropy"`` ``sign * H(x) + offset``, ``"zero"``."""

    kind: str
    c: np.ndarray | None = None
    sign: float = 1.0
    offset: float = 0.0

    @property
    def concave(self) -> bool:
        return self.kind == "entropy" and self.sign > 0

    def value(self, x: np.ndarray) -> float:
        if self.kind == "sqdist":
            d = x - self.c
            return float(d @ d)
        if self.kind == "record":
            return float(self.c @ np.sqrt(np.maximum(1.0 - 2.0 * x + x @ x, 0.0)))
        if self.kind == "entropy":
            return float(self.sign * _entropy(x) + self.offset)
        return 0.0

    def grad(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "sqdist":
            return 2.0 * (x - self.c)
        if self.kind == "record":
            dist = np.sqrt(np.maximum(1.0 - 2.0 * x + x @ x, 0.0))
            c = np.asarray(self.c)
            w = np.divide(c, dist, out=np.zeros_like(dist), where=dist > 1e-12)
            return w.sum() * x - w                   # sum_v w_v (x - e_v)
        if self.kind == "entropy":
            return -self.sign * (np.log2(np.maximum(x, _TINY)) + 1.0 / math.log(2))
        return np.zeros_like(x)

    def report(self, v: float) -> float:
        """The loss from the term's value (``sqdist`` holds a squared distance)."""
        return math.sqrt(max(v, 0.0)) if self.kind == "sqdist" else v


@dataclass
class _Problem:
    objective: _Term
    constraints: list[tuple[_Term, float]]     # term(x) <= bound

    @property
    def convex(self) -> bool:
        return not self.objective.concave and not any(t.concave for t, _ in self.constraints)

    def feasible(self, x: np.ndarray) -> bool:
        return all(t.report(t.value(x)) <= t.report(b) + _FEAS_TOL for t, b in self.constraints)


def _entropy_bounds(ref_entropy: float, bound: float, m: int) -> list[tuple[_Term, float]]:
    """``|H(ref) - H(x)| <= bound`` as its convex side ``-H(x) <= bound - H(ref)`` and its
    reverse-convex side ``H(x) <= H(ref) + bound``, each dropped when vacuous."""
    out = []
    if ref_entropy - bound > 0:
        out.append((_Term("entropy", sign=-1.0), bound - ref_entropy))
    if ref_entropy + bound < math.log2(m):
        out.append((_Term("entropy", sign=1.0), ref_entropy + bound))
    return out


# ------------------------------------------------------------------------------------------
# the branch and bound
# ------------------------------------------------------------------------------------------

@dataclass
class _Outcome:
    x: np.ndarray | None
    value: float          # the objective term's value at x (inf: none found)
    lower: float          # certified lower bound on the term's value (inf: infeasible)
    cells: int
    convex: bool


def _cell_terms(term: _Term, V: np.ndarray, hv: np.ndarray):
    """``(f, grad)`` of ``term`` on a cell in barycentric coordinates ``lambda``
    (``x = V lambda``): a concave term is replaced by its affine interpolation."""
    if term.concave:
        lin = term.sign * hv
        return (lambda lam: float(lin @ lam) + term.offset), (lambda lam: lin)
    return (lambda lam: term.value(V @ lam)), (lambda lam: V.T @ term.grad(V @ lam))


def _relax(problem: _Problem, V: np.ndarray, optimize):
    """Lower bound of the problem on cell ``conv(V)`` and the relaxation's answer: ``(bound,
    x or None)``; ``(inf, None)`` when the relaxation is infeasible."""
    m = V.shape[1]
    hv = _entropy(V.T)
    f, g = _cell_terms(problem.objective, V, hv)
    cons: list[dict] = [{"type": "eq", "fun": lambda lam: lam.sum() - 1.0,
                         "jac": lambda lam: np.ones_like(lam)}]
    for term, bound in problem.constraints:
        cf, cg = _cell_terms(term, V, hv)
        cons.append({"type": "ineq", "fun": (lambda lam, cf=cf, b=bound: b - cf(lam)),
                     "jac": (lambda lam, cg=cg: -cg(lam))})
    lam0 = np.full(m, 1.0 / m)
    res = optimize.minimize(f, lam0, jac=g, method="SLSQP", bounds=[(0.0, 1.0)] * m,
                            constraints=cons, options={"ftol": 1e-13, "maxiter": 300})
    lam = np.clip(res.x, 0.0, None)
    lam /= lam.sum()
    relaxed_ok = all(c["fun"](lam) >= -1e-9 for c in cons[1:])
    if res.success and relaxed_ok:
        return f(lam) - 1e-12, V @ lam
    if _phase_one_infeasible(problem, V, hv, optimize):
        return math.inf, None
    # SLSQP did not settle: the objective's linearization at the vertices is a valid bound
    if problem.objective.concave:
        bound = float(np.min(problem.objective.sign * hv + problem.objective.offset))
    else:
        c = np.full(m, 1.0 / m)
        bound = float(f(c) + np.min(g(c) - g(c) @ c))
    return bound, (V @ lam if relaxed_ok else None)


def _phase_one_infeasible(problem: _Problem, V: np.ndarray, hv: np.ndarray, optimize) -> bool:
    """Whether the convex relaxation on the cell is infeasible: min t s.t. every relaxed
    constraint <= bound + t has a positive optimum."""
    if not problem.constraints:
        return False
    m = V.shape[1]
    cons = [{"type": "eq", "fun": lambda z: z[:m].sum() - 1.0,
             "jac": lambda z: np.concatenate([np.ones(m), [0.0]])}]
    for term, bound in problem.constraints:
        cf, cg = _cell_terms(term, V, hv)
        cons.append({"type": "ineq", "fun": (lambda z, cf=cf, b=bound: b + z[m] - cf(z[:m])),
                     "jac": (lambda z, cg=cg: np.concatenate([-cg(z[:m]), [1.0]]))})
    z0 = np.concatenate([np.full(m, 1.0 / m), [10.0]])
    res = optimize.minimize(lambda z: z[m], z0, jac=lambda z: np.eye(m + 1)[m],
                            method="SLSQP", bounds=[(0.0, 1.0)] * m + [(None, None)],
                            constraints=cons, options={"ftol": 1e-13, "maxiter": 300})
    return bool(res.success) and float(res.x[m]) > 1e-7


def _polish(problem: _Problem, x0: np.ndarray, optimize) -> np.ndarray | None:
    """A local SLSQP solve of the true problem from ``x0``; its answer when feasible."""
    m = x0.shape[0]
    obj = problem.objective
    cons = [{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones_like(x)}]
    for term, bound in problem.constraints:
        cons.append({"type": "ineq", "fun": (lambda x, t=term, b=bound: b - t.value(x)),
                     "jac": (lambda x, t=term: -t.grad(x))})
    res = optimize.minimize(obj.value, x0, jac=obj.grad, method="SLSQP",
                            bounds=[(0.0, 1.0)] * m, constraints=cons,
                            options={"ftol": 1e-13, "maxiter": 300})
    x = np.clip(res.x, 0.0, None)
    x /= x.sum()
    return x if problem.feasible(x) else None


def _branch_and_bound(problem: _Problem, starts: Sequence[np.ndarray], gap_tol: float,
                      max_cells: int, target: float | None = None) -> _Outcome:
    """The simplicial branch and bound of the module docstring, in the objective term's own
    unit (squared for a distance; ``gap_tol`` in the loss's); it stops early once a point of
    value <= ``target`` is found."""
    from scipy import optimize  # noqa: PLC0415  # deferred: SciPy, optional

    m = len(starts[0])
    best_x, best = None, math.inf

    def offer(x):
        nonlocal best_x, best
        if x is not None and problem.feasible(x):
            v = problem.objective.value(x)
            if v < best:
                best_x, best = x, v

    for s in starts:  # local solves of the true problem: an early upper bound
        offer(_polish(problem, np.asarray(s, dtype=np.float64), optimize))
    V0 = np.eye(m)
    lb, x = _relax(problem, V0, optimize)
    offer(x)
    heap = [] if math.isinf(lb) else [(lb, 0, V0)]
    cells, counter = 1, 1
    rep = problem.objective.report    # gap_tol is in the loss's own unit
    while heap:
        lb, _, V = heap[0]
        if rep(best) - rep(lb) <= gap_tol or cells >= max_cells or (
                target is not None and best <= target):
            break
        heapq.heappop(heap)
        d = ((V[:, :, None] - V[:, None, :]) ** 2).sum(axis=0)
        i, j = np.unravel_index(int(np.argmax(d)), d.shape)
        mid = 0.5 * (V[:, i] + V[:, j])
        for k in (i, j):
            child = V.copy()
            child[:, k] = mid
            clb, cx = _relax(problem, child, optimize)
            cells += 1
            if cx is not None and not problem.feasible(cx) and best == math.inf:
                cx = _polish(problem, cx, optimize)
            offer(cx)
            if not math.isinf(clb):
                heapq.heappush(heap, (max(clb, lb), counter, child))
                counter += 1
    if best_x is not None:  # a last local polish of the best point
        px = _polish(problem, best_x, optimize)
        offer(px)
    lower = heap[0][0] if heap else (best if best_x is not None else math.inf)
    return _Outcome(best_x, best, min(lower, best), cells, problem.convex)


# ------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------

@dataclass
class Solution:
    """The answer of one problem.

    ``x``: the distribution found (``None`` when none is feasible); ``value``: the minimized
    loss at ``x``; ``losses``: the four losses at ``x``; ``constraints``: each bound given and
    whether ``x`` meets it; ``feasible``: ``True`` (``x`` meets every bound), ``False``
    (certified infeasible) or ``None`` (undetermined within ``max_cells``); ``lower_bound``:
    a certified lower bound on the optimum; ``gap``: ``value - lower_bound`` (0 for a convex
    problem, solved exactly); ``convex``: whether the problem posed was convex; ``cells``:
    cells of the branch and bound.
    """

    x: np.ndarray | None
    value: float
    losses: dict
    constraints: dict
    feasible: bool | None
    lower_bound: float
    gap: float
    convex: bool
    cells: int
    objective: str = ""
    labels: list | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """JSON-ready (``x`` a list, or a mapping label -> share with ``labels``)."""
        x = None if self.x is None else (
            dict(zip(self.labels, map(float, self.x))) if self.labels is not None
            else [float(v) for v in self.x])
        return {"x": x, "objective": self.objective, "value": _num(self.value),
                "losses": {k: _num(v) for k, v in self.losses.items()},
                "constraints": self.constraints, "feasible": self.feasible,
                "lower_bound": _num(self.lower_bound), "gap": _num(self.gap),
                "convex": self.convex, "cells": self.cells}


def _num(v):
    return None if v is None or not math.isfinite(float(v)) else float(v)


def _solution(x, value: float, lower: float, feasible, convex: bool, cells: int, objective: str,
              bounds: dict, a, o, reference: str, labels) -> Solution:
    """A :class:`Solution` from the point found (``None``: none) and the bounds."""
    if x is None:
        return Solution(None, math.nan, {}, {k: {"bound": v, "met": None} for k, v in
                                              bounds.items()}, feasible, lower, math.nan,
                        convex, cells, objective, labels)
    losses = loss_values(x, a, o, reference)
    met = {name: {"bound": b, "met": bool(losses[loss] <= b + _FEAS_TOL)}
           for loss, name in LOSSES.items() for b in [bounds.get(name)] if b is not None}
    lower = min(lower, value)
    return Solution(x, value, losses, met, True, lower, value - lower, convex, cells, objective,
                    labels)


def _solve_distance(problem: _Problem, starts, gap_tol: float, max_cells: int, **kw) -> Solution:
    """A distance objective: the branch and bound (one convex solve for a convex problem)."""
    out = _branch_and_bound(problem, starts, gap_tol, max_cells)
    report = problem.objective.report
    lower = report(out.lower) if math.isfinite(out.lower) else out.lower
    if out.x is None:
        return _solution(None, math.nan, lower, False if math.isinf(out.lower) else None,
                         out.convex, out.cells, **kw)
    return _solution(out.x, report(out.value), lower, True, out.convex, out.cells, **kw)


def _solve_entropy(constraints: list, r: float, starts, gap_tol: float, max_cells: int,
                   **kw) -> Solution:
    """``min |H(x) - r|`` subject to ``constraints``: the distance constraints make a convex
    set ``C``, the entropy ones an interval ``[lo, hi]`` of ``H``.  ``C`` is connected, so
    ``H`` takes on it every level of ``[min_C H, max_C H]``: the best level is ``r`` clipped to
    ``[max(lo, min_C H), min(hi, max_C H)]``.  ``max_C H`` is a convex problem; ``min_C H``
    (concave minimization) is needed only down to the level aimed at, ``T``: the branch and
    bound stops at a point of ``C`` with ``H <= T`` (then a point of ``H = T`` lies on the
    segment to the maximizer, found by bisection: exact) or at a certified bound above ``T``
    (then ``min_C H`` is the level, with the branch and bound's gap)."""
    m = len(starts[0])
    dist = [(t, b) for t, b in constraints if t.kind != "entropy"]
    lo = max([-b for t, b in constraints if t.kind == "entropy" and t.sign < 0], default=0.0)
    hi = min([b for t, b in constraints if t.kind == "entropy" and t.sign > 0],
             default=math.log2(m))
    top = _branch_and_bound(_Problem(_Term("entropy", sign=-1.0), dist), starts, gap_tol,
                            max_cells)                   # max_C H: convex
    cells = top.cells
    if top.x is None:
        return _solution(None, math.nan, math.inf, False if math.isinf(top.lower) else None,
                         False, cells, **kw)
    x_max = top.x
    h_max = float(_entropy(x_max))
    upper = min(hi, h_max)
    if upper < lo - _FEAS_TOL:
        return _solution(None, math.nan, math.inf, False, False, cells, **kw)
    level = min(max(r, lo), upper)
    if h_max <= level + _FEAS_TOL:
        return _solution(x_max, abs(h_max - r), abs(h_max - r), True, False, cells, **kw)
    low = _branch_and_bound(_Problem(_Term("entropy", sign=1.0), dist), starts, gap_tol,
                            max_cells, target=level)
    cells += low.cells
    if low.x is not None and low.value <= level + _FEAS_TOL:
        t_lo, t_hi = 0.0, 1.0   # H(low.x) <= level < H(x_max): bisection on the segment
        for _ in range(60):
            mid = 0.5 * (t_lo + t_hi)
            if _entropy(low.x + mid * (x_max - low.x)) <= level:
                t_lo = mid
            else:
                t_hi = mid
        x = low.x + t_lo * (x_max - low.x)
        value = abs(float(_entropy(x)) - r)
        return _solution(x, value, value, True, False, cells, **kw)
    if low.x is None or low.value > upper + _FEAS_TOL:    # min_C H above every allowed level
        certain = math.isinf(low.lower) or low.lower > upper
        return _solution(None, math.nan, math.inf, False if certain else None, False, cells,
                         **kw)
    return _solution(low.x, low.value - r, low.lower - r, True, False, cells, **kw)


def _check_inputs(prior, original) -> tuple[np.ndarray, np.ndarray, bool]:
    """``prior`` and ``original`` as 2-D float arrays of equal width (one row per class,
    broadcast), and whether either was given per class."""
    arrays = []
    for name, value in (("prior", prior), ("original", original)):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a probability vector (or one per class), got "
                             f"{value!r}") from None
        if arr.ndim not in (1, 2) or arr.shape[-1] < 2:
            raise InputError(f"{name} must be a vector of >= 2 probabilities (or one row per "
                             f"class), got shape {arr.shape}")
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any() or np.any(np.abs(arr.sum(axis=-1) - 1.0) > 1e-6):
            raise InputError(f"{name} must hold probabilities summing to 1 per row, got "
                             f"{value!r}")
        arrays.append(np.atleast_2d(arr))
    a, o = arrays
    if a.shape[1] != o.shape[1]:
        raise InputError(f"prior and original must cover the same values: {a.shape[1]} "
                         f"against {o.shape[1]}")
    if a.shape[0] != o.shape[0] and 1 not in (a.shape[0], o.shape[0]):
        raise InputError(f"prior and original give {a.shape[0]} and {o.shape[0]} classes")
    n = max(a.shape[0], o.shape[0])
    per_class = np.ndim(prior) == 2 or np.ndim(original) == 2
    return np.broadcast_to(a, (n, a.shape[1])), np.broadcast_to(o, (n, o.shape[1])), per_class


def _check_options(reference: str, objective: str, gap_tol, max_cells) -> None:
    if reference not in REFERENCES:
        raise InputError(f"reference must be one of {REFERENCES}, got {reference!r}")
    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if isinstance(gap_tol, bool) or not isinstance(gap_tol, (int, float)) or not gap_tol > 0:
        raise InputError(f"gap_tol must be a number > 0, got {gap_tol!r}")
    if isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 1:
        raise InputError(f"max_cells must be an integer >= 1, got {max_cells!r}")


def _bound(name: str, value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not float(value) >= 0 or math.isnan(float(value)):
        raise InputError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def _privacy_constraints(a, epsilon, alpha) -> list:
    out = []
    if epsilon is not None:
        out.append((_Term("sqdist", c=a), epsilon ** 2))
    if alpha is not None:
        out += _entropy_bounds(float(_entropy(a)), alpha, len(a))
    return out


def _utility_constraints(o, delta, gamma, reference) -> list:
    out = []
    if delta is not None:
        out.append((_Term("record", c=o), delta) if reference == "record"
                   else (_Term("sqdist", c=o), delta ** 2))
    if gamma is not None:
        if reference == "record":
            if gamma < math.log2(len(o)):
                out.append((_Term("entropy", sign=1.0), gamma))
        else:
            out += _entropy_bounds(float(_entropy(o)), gamma, len(o))
    return out


def _run(kind: str, prior, original, bounds: dict, objective: str, reference: str,
         gap_tol: float, max_cells: int, labels) -> Solution | list[Solution]:
    a_all, o_all, per_class = _check_inputs(prior, original)
    out = []
    for a, o in zip(a_all, o_all):  # one problem per class: small SciPy solves, not hot
        m = len(a)
        if kind == "utility":
            constraints = _privacy_constraints(a, bounds["epsilon"], bounds["alpha"])
            point = o
        else:
            constraints = _utility_constraints(o, bounds["delta_distribution"],
                                               bounds["gamma_entropy"], reference)
            point = a
        starts = [a.copy(), o.copy(), np.full(m, 1.0 / m)]
        kw = {"objective": f"{objective}_{kind}_loss", "a": a, "o": o, "reference": reference,
              "labels": labels, "bounds": {k: v for k, v in bounds.items() if v is not None}}
        record = kind == "utility" and reference == "record"
        if objective == "distribution":
            term = _Term("record", c=o) if record else _Term("sqdist", c=point)
            out.append(_solve_distance(_Problem(term, constraints), starts, gap_tol, max_cells,
                                       **kw))
        else:  # |H(x) - r|: r = H(a), H(o), or 0 (the record reference: H(e_v) = 0)
            r = 0.0 if record else float(_entropy(point))
            out.append(_solve_entropy(constraints, r, starts, gap_tol, max_cells, **kw))
    return out if per_class else out[0]


def min_utility_loss(prior, original, epsilon=None, alpha=None, *,
                     objective: str = "distribution", reference: str = "record",
                     gap_tol: float = 1e-4, max_cells: int = 4000, labels=None
                     ) -> Solution | list[Solution]:
    """Problem 1 of section 4.3: the published distribution ``x`` of least utility loss
    (``objective``: the distribution utility loss ``U_D`` or the entropy utility loss ``U_H``)
    whose distribution privacy loss is at most ``epsilon`` and entropy privacy loss at most
    ``alpha`` (bits); ``None`` leaves a bound out.

    ``prior`` (the adversary's prior ``a``) and ``original`` (the class's distribution ``o``):
    probability vectors over the same ``m`` values, or one row per class (then a list, one
    :class:`Solution` per class).  ``labels`` names the values in :meth:`Solution.to_dict`.
    See the module docstring for the losses, which problems are convex and the certified gap.
    """
    _check_options(reference, objective, gap_tol, max_cells)
    bounds = {"epsilon": _bound("epsilon", epsilon), "alpha": _bound("alpha", alpha)}
    return _run("utility", prior, original, bounds, objective, reference, float(gap_tol),
                max_cells, labels)


def min_privacy_loss(prior, original, delta_distribution=None, gamma_entropy=None, *,
                     objective: str = "distribution", reference: str = "record",
                     gap_tol: float = 1e-4, max_cells: int = 4000, labels=None
                     ) -> Solution | list[Solution]:
    """Problem 2 of section 4.3: the published distribution ``x`` of least privacy loss
    (``objective``: ``P_D`` or ``P_H``) whose distribution utility loss is at most
    ``delta_distribution`` and entropy utility loss at most ``gamma_entropy`` (bits; the
    thesis's delta and gamma).  Arguments and result as :func:`min_utility_loss`."""
    _check_options(reference, objective, gap_tol, max_cells)
    bounds = {"delta_distribution": _bound("delta_distribution", delta_distribution),
              "gamma_entropy": _bound("gamma_entropy", gamma_entropy)}
    return _run("privacy", prior, original, bounds, objective, reference, float(gap_tol),
                max_cells, labels)


# ------------------------------------------------------------------------------------------
# the feasible region
# ------------------------------------------------------------------------------------------

@dataclass
class Region:
    """The feasible region of problem 3: ``feasible`` (``True``, ``False`` certified, or
    ``None`` undetermined within ``max_cells``), ``point`` a distribution inside (its
    ``losses``), and ``boundary``: points of the region's boundary (one row each, on the
    simplex) with ``ray`` the ray that found each (see :func:`feasible_region`)."""

    feasible: bool | None
    point: np.ndarray | None
    losses: dict
    boundary: np.ndarray
    ray: np.ndarray
    bounds: dict
    cells: int

    def to_dict(self) -> dict:
        return {"feasible": self.feasible,
                "point": None if self.point is None else [float(v) for v in self.point],
                "losses": {k: _num(v) for k, v in self.losses.items()},
                "boundary": self.boundary.tolist(), "bounds": self.bounds, "cells": self.cells}


def _inside(x: np.ndarray, a, o, bounds: dict, reference: str) -> np.ndarray:
    """Whether each row of ``x`` meets every bound given."""
    lv = loss_values(x, a, o, reference)
    ok = np.ones(x.shape[0], dtype=bool)
    for loss, name in LOSSES.items():
        if bounds.get(name) is not None:
            ok &= np.asarray(lv[loss]) <= bounds[name] + _FEAS_TOL
    return ok


def _directions(m: int, samples: int, seed: int) -> np.ndarray:
    """Unit directions in the simplex's plane ``sum d = 0``: evenly spaced angles for
    ``m = 3``, both signs for ``m = 2``, seeded random ones above."""
    basis = np.linalg.svd(np.eye(m) - 1.0 / m)[0][:, :m - 1]   # orthonormal, sum 0
    if m == 2:
        coef = np.array([[1.0], [-1.0]])
    elif m == 3:
        t = 2.0 * np.pi * np.arange(samples) / samples
        coef = np.column_stack([np.cos(t), np.sin(t)])
    else:
        coef = np.random.default_rng(seed).standard_normal((samples, m - 1))
        coef /= np.linalg.norm(coef, axis=1, keepdims=True)
    return coef @ basis.T


def feasible_region(prior, original, epsilon=None, alpha=None, delta_distribution=None,
                    gamma_entropy=None, *, samples: int = 64, steps: int = 400,
                    reference: str = "record", gap_tol: float = 1e-4, max_cells: int = 4000,
                    seed: int = 0) -> Region:
    """Problem 3 of section 4.3: the distributions ``x`` whose privacy losses are within
    (``epsilon``, ``alpha``) and utility losses within (``delta_distribution``,
    ``gamma_entropy``), for one class (1-D ``prior`` and ``original``).

    Whether the region is empty is decided by the branch and bound (a point inside, or every
    cell certified infeasible).  Its boundary is sampled along ``samples`` rays from that
    point in the simplex's plane (evenly spaced angles for ``m = 3``; seeded random directions
    above): each ray is scanned at ``steps`` points up to the simplex's edge and every change
    of membership is refined by bisection to 1e-10, so a region that is not star-shaped
    around the point still has every crossing of every ray sampled (to the scan's
    resolution); where a ray meets the simplex's edge inside the region, that point is on the
    boundary too.
    """
    _check_options(reference, "distribution", gap_tol, max_cells)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"samples must be an integer >= 1, got {samples!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 2:
        raise InputError(f"steps must be an integer >= 2, got {steps!r}")
    a_all, o_all, per_class = _check_inputs(prior, original)
    if per_class and len(a_all) > 1:
        raise InputError("feasible_region takes one class: 1-D prior and original")
    a, o = a_all[0], o_all[0]
    m = len(a)
    bounds = {"epsilon": _bound("epsilon", epsilon), "alpha": _bound("alpha", alpha),
              "delta_distribution": _bound("delta_distribution", delta_distribution),
              "gamma_entropy": _bound("gamma_entropy", gamma_entropy)}
    constraints = _privacy_constraints(a, bounds["epsilon"], bounds["alpha"]) + \
        _utility_constraints(o, bounds["delta_distribution"], bounds["gamma_entropy"], reference)
    given = {k: v for k, v in bounds.items() if v is not None}
    out = _branch_and_bound(_Problem(_Term("zero"), constraints),
                            [a, o, np.full(m, 1.0 / m)], gap_tol, max_cells)
    empty = np.zeros((0, m))
    if out.x is None:
        return Region(False if math.isinf(out.lower) else None, None, {}, empty,
                      np.zeros(0, dtype=np.int64), given, out.cells)
    c = out.x
    d = _directions(m, samples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.where(d < 0, -c / d, np.inf).min(axis=1)       # to the simplex's edge
    t = np.linspace(0.0, 1.0, steps)[None, :] * reach[:, None]
    pts = c[None, None, :] + t[:, :, None] * d[:, None, :]
    pts = np.clip(pts, 0.0, None)
    ins = _inside(pts.reshape(-1, m), a, o, given, reference).reshape(len(d), steps)
    ray, k = np.nonzero(ins[:, 1:] != ins[:, :-1])
    lo, hi = t[ray, k], t[ray, k + 1]
    lo_in = ins[ray, k]
    for _ in range(40):  # bisection on every crossing at once
        mid = 0.5 * (lo + hi)
        mid_in = _inside(np.clip(c + mid[:, None] * d[ray], 0.0, None), a, o, given, reference)
        same = mid_in == lo_in
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    edge = np.flatnonzero(ins[:, -1])
    ray = np.concatenate([ray, edge])
    tb = np.concatenate([0.5 * (lo + hi), reach[edge]])
    boundary = np.clip(c + tb[:, None] * d[ray], 0.0, None)
    boundary /= boundary.sum(axis=1, keepdims=True)
    order = np.lexsort((tb, ray))
    return Region(True, c, loss_values(c, a, o, reference), boundary[order], ray[order],
                  given, out.cells)


def class_distributions(data, quasi_identifiers: Sequence[str], sensitive: str, *,
                        prior: Mapping | str | None = None, prior_qids: Sequence[str] = ()):
    """The original classes of ``data`` (rows sharing their ``quasi_identifiers`` values):
    ``(labels, classes, original, prior)`` -- the sensitive values (sorted), a DataFrame of the
    classes' QID values and ``size``, their sensitive distributions (one row per class) and the
    prior of each (one row per class): the table's distribution (``prior=None``), a given
    mapping value -> probability, or ``"conditional"``: the distribution among the records
    sharing the class's values on ``prior_qids`` (as :class:`gpuppdp.models.PrivacyLoss`
    with ``prior="conditional"``)."""
    qids = list(quasi_identifiers)
    sens = data[sensitive].astype(str)
    labels = sorted(sens.unique())

    def distributions(keys):
        counts = (data[keys].assign(_s=sens).groupby(keys + ["_s"], observed=True).size()
                  .unstack(fill_value=0).reindex(columns=labels, fill_value=0))
        return counts.div(counts.sum(axis=1), axis=0), counts.sum(axis=1)

    table = sens.value_counts().reindex(labels).to_numpy() / len(data)
    dist, size = distributions(qids)
    original = dist.to_numpy(dtype=np.float64)
    classes = dist.index.to_frame(index=False)
    classes["size"] = size.to_numpy()
    if isinstance(prior, str) and prior == "conditional":
        keys = list(prior_qids)
        unknown = [q for q in keys if q not in qids]
        if unknown:
            raise InputError(f"prior_qids: {unknown[0]!r} is not one of the quasi-identifiers "
                             f"{qids}")
        if keys:
            group, _ = distributions(keys)
            priors = group.reindex(pd.MultiIndex.from_frame(classes[keys])
                                   if len(keys) > 1 else classes[keys[0]]).to_numpy()
        else:
            priors = np.broadcast_to(table, original.shape)
    elif prior is None:
        priors = np.broadcast_to(table, original.shape)
    else:
        if not isinstance(prior, Mapping):
            raise InputError(f"prior must be None, 'conditional' or a mapping value -> "
                             f"probability, got {prior!r}")
        priors = np.broadcast_to(np.array([float(prior.get(v, 0.0)) for v in labels]),
                                 original.shape)
    return labels, classes, original, np.ascontiguousarray(priors, dtype=np.float64)
