"""Bounded statistics of a table: count, sum, mean, variance, each with a confidence interval.

:func:`dp_count`, :func:`dp_sum`, :func:`dp_mean` and :func:`dp_variance` answer one query on
the whole table, or per group of public keys (``by=``, with the hierarchies, levels, domains
and ``unknown`` rules of :func:`~gpuppdp.dp.releases.dp_histogram`: every cell of the public
domain is released).  Values are clamped to declared bounds ``[lower, upper]`` (never taken
from the data) and summed exactly on a ``2**-k`` grid (:mod:`gpuppdp.dp.summation`); with
``person=`` each person keeps at most ``max_rows_per_person`` rows (a random choice,
:mod:`gpuppdp.dp.cells`) and every sensitivity is scaled by it.

**Noise.**  ``mechanism="laplace"``: the discrete Laplace, on the integers for counts
(:class:`~gpuppdp.dp.mechanisms.GeometricMechanism`) and on the sums' ``2**-k`` grid
(:class:`~gpuppdp.dp.mechanisms.LaplaceMechanism`), ε from ``epsilon`` (the δ of the finite
sampler, below ``1e-149``, is recorded and charged).  ``mechanism="gaussian"``: the discrete
Gaussian, on the integers for counts and on the grid for sums, calibrated from ``(epsilon,
delta)`` or from ``rho`` and charged in zCDP.

**Composition.**  A mean is ``mid + S / N`` from a noisy count ``N`` and a noisy sum ``S`` of
the centred values ``x - mid`` (``mid = (lower + upper) / 2``: the sum's sensitivity is half
the range, not the largest bound); a variance adds a noisy sum of squares ``Q`` of the centred
values and is ``Q / N - (S / N)**2`` (the sufficient statistics).  The budget is split in equal
parts: ``ε/2`` each for a mean, ``ε/3`` each for a variance (of ``δ`` and ``ρ`` alike), and the
parts compose sequentially to the stated total (Dwork & Roth 2014, Theorem 3.16; Bun &
Steinke 2016, Lemma 2.3).  Dividing noisy values and clamping the result to the bounds are
post-processing.

**Confidence intervals** (``confidence``, default 0.95): for a count or a sum the interval is
``noisy ± t·g`` with ``t`` the smallest number of grid steps ``g`` whose noise tail
``P[|Z| > t]`` is at most ``1 - confidence``: exact for the discrete Laplace (``2a**(t+1) /
(1 + a)``), a bound for the discrete Gaussian (the tail sum bounded by its first term plus the
integral).  It covers the exact sum of the *clamped* values as summed (each rounded to the
summation grid, the total to ``g``), not the unclamped data.  For a mean or a variance the
interval is conservative: each part's interval at ``1 - (1 - confidence)/k`` (``k`` parts, a
union bound), then the extreme values of the ratio over those intervals, within the bounds.
A count's lower end is at least 0.

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014: Theorem 3.16 (composition), Proposition 2.1
   (post-processing).
.. [BS16] M. Bun and T. Steinke, "Concentrated Differential Privacy", TCC 2016.
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..hierarchy import Hierarchy
from ..validation import check_epsilon, check_int, check_number, check_probability
from .accountant import BudgetAccountant
from .accounting import zcdp_to_approx
from .cells import UNKNOWN_CHOICES, _bound_persons, _columns, _out_of_domain, _persons, _unit
from .gaussian import GaussianMechanism, _normalizer
from .mechanisms import GeometricMechanism, LaplaceMechanism
from .randomness import RandomSource
from .releases import (DEFAULT_MAX_CELLS, ReleaseOptions, _changed_cells, _charge,
                       _check_accountant, _mechanism, _numeric_column, _record, _spend)
from .sensitivity import Neighbouring, grouped_sum_sensitivity
from .summation import exact_grid_sums, exact_sum_mechanism, exact_sum_plan

__all__ = ["dp_count", "dp_sum", "dp_mean", "dp_variance", "dp_query", "QUERIES",
           "QUERY_MECHANISMS", "noise_interval", "gaussian_tail_bound", "query_charge"]

QUERIES = ("count", "sum", "mean", "variance")
#: the noise families: discrete Laplace or discrete Gaussian (integers for counts, the
#: ``2**-k`` grid for sums)
QUERY_MECHANISMS = ("laplace", "gaussian")
_PARTS = {"count": ("count",), "sum": ("sum",), "mean": ("count", "sum"),
          "variance": ("count", "sum", "squares")}


def _split(target: dict, k: int) -> list[dict]:
    """``k`` equal parts of a privacy target (``epsilon`` and ``delta``, or ``rho``); the last
    takes the remainder so that the parts add up to the total."""
    if k == 1:
        return [target]
    parts: list[dict[str, Any]] = [{name: None if v is None else v / k
                                    for name, v in target.items()}
             for _ in range(k - 1)]
    parts.append({name: None if v is None else v - sum(p[name] for p in parts)
                  for name, v in target.items()})
    return parts


def _sum_mechanism(name: str, target: dict, lower: float, upper: float,
                   neighbouring: Neighbouring, m: int):
    """``(plan, mechanism)`` of an exact per-cell sum of values in ``[lower, upper]``: the
    summation grid under the mechanism's and the noise (grid Laplace or grid Gaussian; the
    L1 sensitivity ``c·Q·s`` of the exact sums also bounds their L2 sensitivity)."""
    sens = grouped_sum_sensitivity(lower=lower, upper=upper, neighbouring=neighbouring,
                                   max_contributions=m)
    if sens == 0:
        raise InputError("lower and upper are both 0: the sum is constant, nothing to release")
    coordinates = _changed_cells(neighbouring) * m
    if name == "laplace":
        return exact_sum_mechanism(target["epsilon"], lower, upper, sens, coordinates)
    # the grid rule of both grid mechanisms: the largest power of two <= Δ / 4096
    plan = exact_sum_plan(lower, upper, LaplaceMechanism(epsilon=1.0, sensitivity=sens)
                          .granularity)
    return plan, GaussianMechanism(**target, sensitivity=plan.sensitivity(coordinates),
                                   granularity=plan.noise_grid, coordinates=coordinates)


def _plan(statistic: str, mechanism: str, target: dict, lower, upper,
          neighbouring: Neighbouring, m: int) -> dict:
    """Each part's mechanism (and summation plan and bounds) of a query."""
    if mechanism not in QUERY_MECHANISMS:
        raise InputError(f"mechanism must be one of {QUERY_MECHANISMS}, got {mechanism!r}")
    if mechanism == "laplace" and (target["rho"] is not None or target["delta"] is not None):
        raise InputError(f"rho and delta apply to mechanism 'gaussian', not 'laplace': got "
                         f"rho={target['rho']!r}, delta={target['delta']!r}")
    if mechanism == "laplace":
        target = {"epsilon": target["epsilon"]}
    elif target["rho"] is not None:
        if target["epsilon"] is not None:
            raise InputError(f"give epsilon and delta, or rho, not both: got "
                             f"epsilon={target['epsilon']!r}, rho={target['rho']!r}")
        target = {"rho": target["rho"]}
    elif target["epsilon"] is None or target["delta"] is None:
        raise InputError(f"mechanism 'gaussian' needs delta > 0 with epsilon (or rho "
                         f"instead), got epsilon={target['epsilon']!r}, "
                         f"delta={target['delta']!r}")
    else:
        target = {"rho": _rho_for(target["epsilon"], target["delta"])}
    parts = _PARTS[statistic]
    out: dict[str, tuple] = {}
    for part, share in zip(parts, _split(target, len(parts))):
        if part == "count":
            integer = "geometric" if mechanism == "laplace" else "discrete-gaussian"
            out[part] = (None, _mechanism(integer, epsilon=share.get("epsilon"),
                                          delta=share.get("delta"), rho=share.get("rho"),
                                          neighbouring=neighbouring, m=m), None)
            continue
        if statistic == "sum":
            bounds = (lower, upper)
        else:
            half = (upper - lower) / 2.0
            bounds = (-half, half) if part == "sum" else (0.0, half * half)
        plan, mech = _sum_mechanism(mechanism, share, *bounds, neighbouring, m)
        out[part] = (plan, mech, bounds)
    return out


def _rho_for(epsilon, delta) -> float:
    """The ρ of a Gaussian query meeting ``(epsilon, delta)``: the largest (to a relative
    ``2**-40``) whose tight conversion at ``delta / 2`` stays below ``epsilon`` once the
    sampler's slack is added (the other half of ``delta`` covers the supports' δ, below
    ``1e-100``)."""
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_number("delta", delta, 0.0, 1.0)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1) for the Gaussian mechanism, got {delta!r}")
    lo, hi = 0.0, epsilon
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if zcdp_to_approx(mid * (1.0 + 2.0**-30) + 1e-9, 0.5 * delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo == 0.0:
        raise InputError(f"epsilon={epsilon:g} is too small for delta={delta:g}")
    return lo


def _charge_of(mechs) -> dict:
    """The spend of the parts together (sequential composition): ``epsilon`` and ``delta``,
    or ``rho`` and the supports' ``delta``."""
    charges = [_charge(m) for m in mechs]
    return {name: sum(c[name] for c in charges) for name in charges[0]}


def _guarantee_of(mechs, delta) -> dict:
    """The (ε, δ) recorded: the sum of the parts' (basic composition), or for a Gaussian the
    tight conversion of the total ρ at ``delta`` (none without it)."""
    charge = _charge_of(mechs)
    if "rho" not in charge:
        return {"epsilon": charge["epsilon"], "delta": charge["delta"], "rho": None,
                "notion": "approx"}
    if delta is not None:
        epsilon = zcdp_to_approx(charge["rho"], delta - charge["delta"])
    else:
        epsilon, delta = None, charge["delta"]
    return {"epsilon": epsilon, "delta": delta, "rho": charge["rho"], "notion": "zcdp"}


def query_charge(statistic: str, *, lower: float = 0.0, upper: float = 1.0,
                 mechanism: str = "laplace", epsilon: float | None = None,
                 delta: float | None = None, rho: float | None = None,
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                 max_rows_per_person: int = 1) -> dict:
    """What :func:`dp_query` with these parameters spends, as keywords of
    :meth:`BudgetAccountant.check <gpuppdp.dp.accountant.BudgetAccountant.check>`.

    >>> sorted(query_charge("mean", lower=0, upper=10, epsilon=1.0))
    ['delta', 'epsilon']
    """
    if statistic not in QUERIES:
        raise InputError(f"statistic must be one of {QUERIES}, got {statistic!r}")
    plan = _plan(statistic, mechanism, {"epsilon": epsilon, "delta": delta, "rho": rho},
                 lower, upper, Neighbouring.parse(neighbouring),
                 check_int("max_rows_per_person", max_rows_per_person, 1))
    return _charge_of([mech for _, mech, _ in plan.values()])


def gaussian_tail_bound(y0: int, sigma2: float, norm: float) -> float:
    """An upper bound on ``P[Y >= y0]`` (``y0 >= 1``) of ``Y ~ N_Z(0, σ²)``: the first term
    plus the integral beyond it, ``(f(y0) + ∫_{y0}^∞ f) / Σ f`` with ``f(y) = e**(-y²/2σ²)``
    (``f`` decreases), ``norm`` the sum."""
    first = math.exp(-y0 * y0 / (2.0 * sigma2))
    integral = math.sqrt(math.pi * sigma2 / 2.0) * math.erfc(y0 / math.sqrt(2.0 * sigma2))
    return (first + integral) / norm


def noise_interval(mech, confidence: float) -> tuple[float, float]:
    """``(half_width, coverage)`` of the interval ``noisy ± half_width`` around a value
    released by ``mech``: the smallest multiple ``t·g`` of the grid step with
    ``P[|Z| > t] <= 1 - confidence``, and ``1 - P[|Z| > t]`` (exact for the discrete
    Laplace; a lower bound for the discrete Gaussian).

    >>> from gpuppdp.dp import GeometricMechanism
    >>> noise_interval(GeometricMechanism(epsilon=1.0), 0.9)[0]
    2.0
    """
    alpha = 1.0 - check_probability("confidence", confidence, low=0.0, high=1.0)
    g = mech.granularity
    if isinstance(mech, (GeometricMechanism, LaplaceMechanism)):  # discrete Laplace
        rate = mech.sampler.rate
        log_a = -rate

        def tail(t: int) -> float:  # P[|Z| > t] = 2 a**(t+1) / (1 + a)
            return 2.0 * math.exp(log_a * (t + 1)) / (1.0 + math.exp(log_a))

        t = max(0, math.ceil(math.log(alpha * (1.0 + math.exp(log_a)) / 2.0) / log_a - 1.0))
    else:  # discrete Gaussian: a bound on the tail
        s2 = mech.grid_sigma**2
        norm = _normalizer(s2)

        def tail(t: int) -> float:
            return min(1.0, 2.0 * gaussian_tail_bound(t + 1, s2, norm))

        t = max(0, math.floor(mech.grid_sigma * math.sqrt(2.0 * math.log(2.0 / alpha))))
    while t > 0 and tail(t - 1) <= alpha:  # the smallest t (float steps fixed here)
        t -= 1
    while tail(t) > alpha:
        t += 1
    return t * g, 1.0 - tail(t)


def _ratio_bounds(num_lo, num_hi, den_lo, den_hi):
    """The least and greatest ``num / den`` over the boxes (``den_lo >= 1``)."""
    corners = [num_lo / den_lo, num_lo / den_hi, num_hi / den_lo, num_hi / den_hi]
    return np.minimum.reduce(corners), np.maximum.reduce(corners)


def _intervals(statistic: str, noisy: dict, plan: dict, confidence: float, lower, upper):
    """The release's columns: the noisy statistic and its interval (host arrays)."""
    k = len(plan)
    level = 1.0 - (1.0 - confidence) / k
    width = {p: noise_interval(mech, level) for p, (_, mech, _) in plan.items()}
    if statistic in ("count", "sum"):
        value = noisy[statistic]
        lo, hi = value - width[statistic][0], value + width[statistic][0]
        if statistic == "count":
            lo = np.maximum(lo, 0)
        return {statistic: value, f"{statistic}_low": lo, f"{statistic}_high": hi}
    mid, half = (lower + upper) / 2.0, (upper - lower) / 2.0
    n = noisy["count"]
    n_lo = np.maximum(n - width["count"][0], 1.0)
    n_hi = np.maximum(n + width["count"][0], 1.0)
    s = noisy["sum"]
    s_lo, s_hi = s - width["sum"][0], s + width["sum"][0]
    r_lo, r_hi = _ratio_bounds(s_lo, s_hi, n_lo, n_hi)
    ratio = np.clip(s / np.maximum(n, 1), -half, half)
    out = {"count": n, "mean": mid + ratio}
    if statistic == "mean":
        out["mean_low"] = mid + np.clip(r_lo, -half, half)
        out["mean_high"] = mid + np.clip(r_hi, -half, half)
        return out
    sq = noisy["squares"]
    q_lo = np.maximum(sq - width["squares"][0], 0.0)
    q_hi = sq + width["squares"][0]
    m2_lo, m2_hi = _ratio_bounds(q_lo, q_hi, n_lo, n_hi)
    r_lo, r_hi = np.clip(r_lo, -half, half), np.clip(r_hi, -half, half)
    r2_hi = np.maximum(r_lo * r_lo, r_hi * r_hi)
    r2_lo = np.where((r_lo <= 0) & (r_hi >= 0), 0.0, np.minimum(r_lo * r_lo, r_hi * r_hi))
    top = half * half
    out["variance"] = np.clip(sq / np.maximum(n, 1) - ratio * ratio, 0.0, top)
    out["variance_low"] = np.clip(m2_lo - r2_hi, 0.0, top)
    out["variance_high"] = np.clip(m2_hi - r2_lo, 0.0, top)
    return out


def _exact_parts(data, cols, statistic: str, plan: dict, values, select,
                 source: RandomSource, lo: float, hi: float, opts: ReleaseOptions):
    """The cells' keys on the device (:meth:`ReleaseOptions.cells`; None for the one cell of
    the whole table), the exact sums of the parts and the rows per cell of a count: ``(exact,
    counts, out_of_domain, n_cells, frame, from_data)``; refuses (before the charge) a sum
    that could overflow."""
    backend, xp = source.backend, source.backend.xp
    if cols is None:
        keep = select(np.ones(len(data), dtype=bool))
        kept = None if keep.all() else keep
        key, n_cells, rows = None, 1, int(keep.sum())
        bad: list = []
        frame, from_data = pd.DataFrame(index=range(1)), []
    else:
        cells = opts.cells(data, cols, source, select)
        key, kept, bad = cells.key, cells.kept, cells.out_of_domain or []
        n_cells = math.prod(cells.radices)
        frame, from_data = cells.frame(np.arange(n_cells)), cells.from_data
    exact = {}
    if statistic != "count":
        x = backend.asarray(values if kept is None else values[kept])
        sums, squares = exact_grid_sums(
            xp, key, x, n_cells, plan["sum"][0],
            shift=0.0 if statistic == "sum" else (lo + hi) / 2.0,
            squares=plan["squares"][0] if statistic == "variance" else None)
        exact["sum"] = sums
        if squares is not None:
            exact["squares"] = squares
    counts = None
    if "count" in plan:
        counts = (xp.bincount(key, minlength=n_cells).astype(xp.int64) if key is not None
                  else xp.full(1, rows, dtype=xp.int64))
    return exact, counts, bad, n_cells, frame, from_data


def _annotate(frame, statistic: str, plan: dict, mechs, delta, confidence: float, person,
              m: int, exact: dict, numeric: bool, lo: float, hi: float, record: dict):
    """``frame`` with ``attrs["dp"]``: the guarantee, the parts, the split, the intervals'
    method and the summation."""
    neighbouring = record["neighbouring"]
    post = [] if person is None else [f"at most {m} rows per person ({person!r}), chosen at "
                                      "random"]
    if statistic in ("mean", "variance"):
        post.append("mean = mid + clip(sum / max(count, 1), -half, half), mid and half of "
                    "[lower, upper]")
    if statistic == "variance":
        post.append("variance = clip(squares / max(count, 1) - (sum / max(count, 1))**2, 0, "
                    "half**2)")
    frame = _record(frame, **_guarantee_of(mechs, delta), post=post,
                    queries={p: mech.info() for p, (_, mech, _) in plan.items()}, **record)
    dp = frame.attrs["dp"]
    dp["statistic"] = statistic
    dp["bounds"] = [lo, hi] if numeric else None
    dp["split"] = {p: 1.0 / len(plan) for p in plan}
    dp["confidence"] = {
        "level": confidence,
        "method": ("exact: the noise's tail (a bound for the Gaussian)"
                   if statistic in ("count", "sum") else
                   f"conservative: each of {len(plan)} parts at "
                   f"{1.0 - (1.0 - confidence) / len(plan):.6g} (union bound), the extreme "
                   "ratios"),
        "covers": "the statistic of the clamped values as summed (not the clamping bias)"}
    dp["summation"] = {p: plan[p][0].info(_changed_cells(neighbouring) * m)
                       for p in exact}
    return frame


def _check_query(data, statistic: str, column, lower, upper) -> tuple[bool, float, float]:
    """``(numeric, lower, upper)`` of a query: a count takes no column or bounds (``(0, 1)``
    stand in), every other statistic needs them."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if statistic not in QUERIES:
        raise InputError(f"statistic must be one of {QUERIES}, got {statistic!r}")
    numeric = statistic != "count"
    if numeric and (column is None or lower is None or upper is None):
        raise InputError(f"a {statistic} needs column, lower and upper, got column={column!r}, "
                         f"lower={lower!r}, upper={upper!r}")
    if not numeric and (column is not None or lower is not None or upper is not None):
        raise InputError(f"a count takes no column or bounds, got column={column!r}, "
                         f"lower={lower!r}, upper={upper!r}")
    return numeric, (float(lower) if numeric else 0.0), (float(upper) if numeric else 1.0)


def missing_values(column: str) -> InputError:
    """The refusal (after the charge) of a numeric column with missing values."""
    return InputError(f"column {column!r} holds missing values or values that are not numbers "
                      "(not shown); clean it, or pass unknown='drop' to drop their rows")


def _noisy_parts(plan: dict, counts, exact: dict, source: RandomSource) -> dict:
    """Each part's noisy values (host): the counts per cell and the exact sums, released."""
    backend = source.backend
    noisy = {}
    if "count" in plan:
        noisy["count"] = backend.to_host(plan["count"][1].release(counts, random=source))
    for part, exact_sums in exact.items():
        noisy[part] = backend.to_host(plan[part][1].release(exact_sums, random=source))
    return noisy


def dp_query(data: pd.DataFrame, statistic: str, column: str | None = None, *,
             lower: float | None = None, upper: float | None = None,
             by: str | Sequence[str] | None = None,
             epsilon: float | None = None, delta: float | None = None,
             rho: float | None = None, mechanism: str = "laplace",
             confidence: float = 0.95, person: str | None = None,
             max_rows_per_person: int | None = None,
             hierarchies: Mapping[str, Hierarchy] | None = None,
             levels: Mapping[str, int] | None = None,
             domains: Mapping[str, Sequence] | None = None,
             public_domain: bool | str | Sequence[str] = False,
             unknown: str = "error",
             neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
             max_cells: int = DEFAULT_MAX_CELLS,
             random: RandomSource | None = None,
             accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """One bounded statistic (``"count"``, ``"sum"``, ``"mean"`` or ``"variance"``) of the
    table or per cell of ``by``, with its confidence interval (module docstring).

    Parameters
    ----------
    data : DataFrame
    statistic : {"count", "sum", "mean", "variance"}
    column : str
        The numeric column (not for a count).  Missing or non-numeric values are refused after
        the charge, or their rows dropped with ``unknown="drop"``.
    lower, upper : float
        Clamping bounds, declared in advance (not for a count).
    by : str or sequence of str, optional
        Grouping columns with public domains (``hierarchies``, ``levels``, ``domains``,
        ``public_domain``, ``unknown``, ``max_cells`` as in
        :func:`~gpuppdp.dp.releases.dp_histogram`); default: the whole table.
    epsilon, delta, rho : float
        The total privacy target: ``epsilon`` (laplace), ``epsilon`` and ``delta`` or ``rho``
        (gaussian); split equally between the parts of a mean or a variance.
    mechanism : {"laplace", "gaussian"}
    confidence : float, default 0.95
        The level of the intervals, in (0, 1).
    neighbouring, random, accountant, person, max_rows_per_person
        As in :func:`~gpuppdp.dp.releases.dp_histogram` (the charge is recorded with the
        label ``dp_query STATISTIC of COLUMN``).

    Returns
    -------
    DataFrame
        The ``by`` columns (none for the whole table: one row), then ``count`` (count, mean,
        variance), ``sum``, ``mean``, ``variance`` as asked, each with ``*_low`` and
        ``*_high``; ``attrs["dp"]`` records the guarantee, each part's mechanism, the
        ``split``, the ``confidence`` and the ``summation``.

    Examples
    --------
    >>> import pandas as pd
    >>> from gpuppdp.dp import RandomSource
    >>> df = pd.DataFrame({"age": [30, 40, 50, 60]})
    >>> r = dp_query(df, "mean", "age", lower=0, upper=100, epsilon=1.0,
    ...              random=RandomSource("cpu"))
    >>> list(r.columns), r.attrs["dp"]["split"]
    (['count', 'mean', 'mean_low', 'mean_high'], {'count': 0.5, 'sum': 0.5})
    """
    numeric, lo, hi = _check_query(data, statistic, column, lower, upper)
    confidence = check_probability("confidence", confidence, low=0.0, high=1.0)
    opts = ReleaseOptions(hierarchies, levels, domains, public_domain, unknown, neighbouring,
                          max_cells, random, accountant)
    neighbouring = Neighbouring.parse(neighbouring)
    cols = None if by is None else _columns(data, by)
    person, m = _persons(data, cols or [], person, max_rows_per_person)
    plan = _plan(statistic, mechanism, {"epsilon": epsilon, "delta": delta, "rho": rho},
                 lo, hi, neighbouring, m)
    charge = _charge_of(mechs := [mech for _, mech, _ in plan.values()])
    if unknown not in UNKNOWN_CHOICES:
        raise InputError(f"unknown must be one of {UNKNOWN_CHOICES}, got {unknown!r}")
    source = opts.source()
    _check_accountant(opts.accountant, charge, neighbouring)
    values = _numeric_column(data, str(column)) if numeric else np.zeros(len(data))
    not_numbers = np.isnan(values)

    def select(valid):
        keep = valid & ~not_numbers if unknown == "drop" else valid
        return keep if person is None else _bound_persons(data[person], keep, m, source)

    exact, counts, bad, n_cells, frame, from_data = _exact_parts(
        data, cols, statistic, plan, values, select, source, lo, hi, opts)
    label = f"dp_query {statistic}" + (f" of {column!r}" if numeric else "") + \
        (f" by {cols}" if cols else "")
    unit = _unit(person, m)
    _spend(opts.accountant, charge, label, neighbouring=neighbouring, unit=unit,
           seed=source.seed)
    if bad:  # decided after the charge: probing costs epsilon each time
        raise _out_of_domain(bad)
    if numeric and unknown != "drop" and not_numbers.any():  # as well
        raise missing_values(str(column))
    noisy = _noisy_parts(plan, counts, exact, source)
    for name, col in _intervals(statistic, noisy, plan, confidence, lo, hi).items():
        frame[name] = col
    return _annotate(frame, statistic, plan, mechs, delta if mechanism == "gaussian" else None,
                     confidence, person, m, exact, numeric, lo, hi,
                     dict(neighbouring=neighbouring, source=source, cells=n_cells,
                          from_data=from_data, unknown=unknown, unit=unit))


def dp_count(data: pd.DataFrame, **options) -> pd.DataFrame:
    """Noisy row count (per cell of ``by=``): :func:`dp_query` with ``"count"``."""
    return dp_query(data, "count", **options)


def dp_sum(data: pd.DataFrame, column: str, *, lower: float, upper: float,
           **options) -> pd.DataFrame:
    """Noisy sum of ``column`` clamped to ``[lower, upper]``: :func:`dp_query` with
    ``"sum"``."""
    return dp_query(data, "sum", column, lower=lower, upper=upper, **options)


def dp_mean(data: pd.DataFrame, column: str, *, lower: float, upper: float,
            **options) -> pd.DataFrame:
    """Noisy mean of ``column`` clamped to ``[lower, upper]`` (a noisy count and centred sum,
    ``ε/2`` each): :func:`dp_query` with ``"mean"``."""
    return dp_query(data, "mean", column, lower=lower, upper=upper, **options)


def dp_variance(data: pd.DataFrame, column: str, *, lower: float, upper: float,
                **options) -> pd.DataFrame:
    """Noisy (population) variance of ``column`` clamped to ``[lower, upper]`` (noisy count,
    centred sum and sum of squares, ``ε/3`` each): :func:`dp_query` with ``"variance"``."""
    return dp_query(data, "variance", column, lower=lower, upper=upper, **options)
