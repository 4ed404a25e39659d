"""Quantiles and the median by the exponential mechanism over a public grid (Smith 2011).

The candidates are the points ``j·g`` of a public grid in ``[lower, upper]`` (``g`` a power of
two, by default the largest ``<= (upper - lower) / 2**32``).  A candidate ``c`` scores
``u(c) = -|#{x < c} - q n|`` over the values clamped to ``[lower, upper]``; a neighbour moves
every score by at most ``Δ = M·max(q, 1 - q)`` under add/remove-one (the rank by at most
``M``, ``q n`` by ``q M``; ``M`` rows per person) and ``Δ = M`` under replace-one.  The
exponential mechanism (McSherry & Talwar 2007) picks ``c`` with probability
``∝ exp(ε u(c) / (2Δ))``.  Consecutive candidates between two data values share a score, so the
choice is made in two exact steps, as Smith's interval mechanism (and OpenDP's and Google's
quantiles) does: the *run* ``i`` of the ``K_i`` candidates of rank ``i`` (an integer count)
with probability ``∝ K_i exp(-γ_i)``, then a uniform candidate of the run (an exact uniform
integer): the released value is a multiple of ``g``.

**Exactness.**  The gaps are computed as the selection mechanisms compute theirs
(:mod:`~gpuppdp.dp.selection`): ``γ_i = min((d_i - d*) ε' / (2Δ), 690)`` with ``d_i = |i - q n|``
(``q n`` split exactly into an integer and a fraction, so that ``d_i - d*`` is one rounding
away from the exact value whatever ``n``; ``d*`` the exact best) -- the clipped scores have
sensitivity ``Δ`` too, so the mechanism stays exactly an exponential mechanism.  Each weight
``fl(K_i · fl(exp(-γ_i)))`` is within ``e**±η`` of the ideal, ``η = η_c + (λ + 1) 2**-52``
(``η_c`` the selection's coin error: the gap, ``λ = ε'/(2Δ)`` and their product each rounded
once, then ``exp``; ``λ 2**-52`` the fraction of ``q n``; ``2**-52`` the product by ``K_i``),
and the run is drawn *exactly* in proportion to the float weights (:func:`_choose`: by binary
exponent, integer sums, then a rejection within one exponent).  So each output's probability
is within ``e**±2η`` of the ideal mechanism's at ``ε' = ε - 4η``, which is ε-DP (δ = 0).

**Accuracy.**  With probability at least ``confidence`` the released value ``c`` has
``|#{x < c} - q n| <= d* + (2Δ/ε')(ln C + ln(1/(1 - confidence)))`` (McSherry & Talwar 2007,
Theorem 6; ``C`` the number of candidates, ``d*`` the best distance on the grid: at most 1
when no value repeats and the grid separates the values); it is recorded as ``rank_error``.
Several quantiles split ε equally (sequential composition).

References
----------
.. [Smi11] A. Smith, "Privacy-preserving statistical estimation with optimal convergence
   rates", STOC 2011.
.. [MT07] F. McSherry and K. Talwar, "Mechanism Design via Differential Privacy", FOCS 2007.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from fractions import Fraction
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..validation import check_epsilon, check_number, check_probability
from .accountant import BudgetAccountant
from .cells import _bound_persons, _check_source, _persons, _unit
from .randomness import RandomSource, default_source
from .queries import missing_values
from .releases import _check_accountant, _numeric_column, _record, _spend
from .selection import _MAX_GAP, COIN_ERROR
from .sensitivity import Neighbouring

__all__ = ["dp_quantile", "dp_median", "quantile_gaps"]

_GRID_STEPS = 2**32  # default grid: the largest power of two <= (upper - lower) / 2**32
_MAX_CANDIDATES = 2**52
_MAX_RUNS = 2**26  # the per-exponent sums of 27-bit halves stay exact in float64


def _uniform_int(source: RandomSource, total: int) -> int:
    """A uniform integer in ``[0, total)`` (Python int, any size): 63-bit words, rejection."""
    bits = max(total - 1, 1).bit_length()
    words = -(-bits // 63)
    while True:
        draw = 0
        for w in source.backend.to_host(source.random_bits(words)).tolist():
            draw = (draw << 63) | int(w)
        draw >>= words * 63 - bits
        if draw < total:
            return draw


def _choose(source: RandomSource, weights: np.ndarray) -> int:
    """An index drawn with probability exactly ``weights[i] / sum(weights)`` (float64,
    ``>= 0``, not all 0): each weight is ``m·2**(e-53)`` (``2**52 <= m < 2**53``); an exponent
    is chosen by its exact integer total, then a member of it uniformly, accepted with
    probability ``m / 2**53`` (at least 1/2)."""
    nz = np.flatnonzero(weights > 0)
    mant, expo = np.frexp(weights[nz])
    m = np.ldexp(mant, 53).astype(np.int64)
    slot = (expo - expo.min()).astype(np.int64)
    high = np.bincount(slot, weights=(m >> 26).astype(np.float64))
    low = np.bincount(slot, weights=(m & ((1 << 26) - 1)).astype(np.float64))
    totals = [((int(h) << 26) + int(lo)) << e for e, (h, lo) in enumerate(zip(high, low))]
    cumulative = list(itertools.accumulate(totals))
    chosen = bisect_right(cumulative, _uniform_int(source, cumulative[-1]))
    members = np.flatnonzero(slot == chosen)
    while True:
        pick = int(members[_uniform_int(source, members.shape[0])])
        if _uniform_int(source, 1 << 53) < int(m[pick]):
            return int(nz[pick])


def _grid(lower: float, upper: float, granularity) -> tuple[float, int, int]:
    """``(g, j_lo, j_hi)``: the candidates are ``j·g``, ``j_lo <= j <= j_hi``."""
    if granularity is None:
        g = math.ldexp(1.0, math.frexp((upper - lower) / _GRID_STEPS)[1] - 1)
    else:
        g = check_number("granularity", granularity, 0.0)
        if g == 0.0 or math.frexp(g)[0] != 0.5:
            raise InputError(f"granularity must be a power of two, got {granularity!r}")
    j_lo, j_hi = math.ceil(lower / g), math.floor(upper / g)
    if max(abs(j_lo), abs(j_hi)) > _MAX_CANDIDATES:
        raise InputError(f"granularity {g:g} is too fine for the bounds [{lower:g}, {upper:g}]: "
                         "the grid positions must stay below 2**52 (pass a coarser one)")
    if not 1 <= j_hi - j_lo + 1 <= _MAX_CANDIDATES:
        raise InputError(f"granularity {g:g} gives {j_hi - j_lo + 1} candidates in "
                         f"[{lower:g}, {upper:g}]; it must give 1 to 2**52")
    return g, j_lo, j_hi


def _sensitivity(q: float, neighbouring: Neighbouring, m: int) -> float:
    return m * (max(q, 1.0 - q) if neighbouring is Neighbouring.ADD_REMOVE else 1.0)


def _eta(lam: float) -> float:
    """The bound on ``|ln(ŵ_i / w_i)|`` of one run's weight (module docstring)."""
    return COIN_ERROR + (lam + 1.0) * 2.0**-52


def quantile_gaps(ranks: np.ndarray, q: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``(K, γ)`` of the runs of sorted grid positions ``ranks`` (the bounds ``j_lo`` and
    ``j_hi + 1`` first and last): the candidates of each rank and their gaps
    ``min((d_i - d*) λ, 690)`` as the mechanism computes them (host float64)."""
    k = np.diff(ranks)
    n = k.shape[0] - 1
    qn = Fraction(q) * n
    r = math.floor(qn)
    f = qn - r
    i = np.arange(n + 1, dtype=np.int64)
    below = i <= r
    a = np.where(below, r - i, i - r)  # d_i = a_i + s_i f, exactly
    s = np.where(below, 1, -1)
    present = np.flatnonzero(k > 0)
    sides = [present[present <= r][-1:], present[present > r][:1]]
    best = min((int(j[0]) for j in sides if j.shape[0]),
               key=lambda j: (r - j + f) if j <= r else (j - r - f))
    diff = (a - a[best]).astype(np.float64) + (s - s[best]) * float(f)
    return k, np.minimum(diff * lam, _MAX_GAP)


def _select(ranks: np.ndarray, q: float, epsilon: float, sens: float,
            source: RandomSource) -> tuple[int, float]:
    """The chosen candidate's grid index and the ε' the mechanism ran at."""
    eps_run = epsilon - 4.0 * _eta(epsilon / (2.0 * sens))
    if eps_run <= 0.0:
        raise InputError(f"epsilon={epsilon:g} is too small for the exact quantile")
    k, gaps = quantile_gaps(ranks, q, eps_run / (2.0 * sens))
    weights = np.where(k > 0, k * np.exp(-gaps), 0.0)
    run = _choose(source, weights)
    return int(ranks[run]) + _uniform_int(source, int(k[run])), eps_run


def _positions(data, column: str, unknown: str, person, m: int, source: RandomSource,
               lower: float, upper: float, g: float, j_lo: int, j_hi: int):
    """``(ranks, not_numbers)``: the sorted grid positions ``floor(x/g) + 1`` of the clamped
    values (rows bounded per person) between ``j_lo`` and ``j_hi + 1`` (host int64), and the
    mask of missing values."""
    values = _numeric_column(data, column)
    not_numbers = np.isnan(values)
    keep = ~not_numbers if unknown == "drop" else np.ones(len(values), dtype=bool)
    if person is not None:
        keep = _bound_persons(data[person], keep, m, source)
    backend, xp = source.backend, source.backend.xp
    x = xp.clip(backend.asarray(np.nan_to_num(values[keep])), lower, upper)
    position = xp.clip(xp.floor(x * (1.0 / g)).astype(xp.int64) + 1, j_lo, j_hi + 1)
    ranks = np.concatenate(([j_lo], backend.to_host(xp.sort(position)), [j_hi + 1]))
    if ranks.shape[0] - 1 > _MAX_RUNS:
        raise InputError(f"more than {_MAX_RUNS - 1} rows: split the table")
    return ranks, not_numbers


def _quantiles(ranks, levels: list[float], epsilon: float, neighbouring: Neighbouring, m: int,
               source: RandomSource, g: float, candidates: int, confidence: float):
    """The chosen values (``ε`` split equally over ``levels``) and each level's record."""
    shares = [epsilon / len(levels)] * (len(levels) - 1)
    shares.append(epsilon - sum(shares))
    chosen, queries = [], {}
    for level, eps_q in zip(levels, shares):
        sens = _sensitivity(level, neighbouring, m)
        index, eps_run = _select(ranks, level, eps_q, sens, source)
        chosen.append(index * g)
        queries[f"q={level:g}"] = {
            "mechanism": "exponential (Smith 2011), exact", "epsilon": eps_q,
            "epsilon_run": eps_run, "sensitivity": sens, "granularity": g,
            "candidates": candidates,
            "rank_error": 2.0 * sens / eps_run * (math.log(candidates)
                                                  - math.log1p(-confidence))}
    return chosen, queries


def dp_quantile(data: pd.DataFrame, column: str, q: float | Sequence[float], *,
                lower: float, upper: float, epsilon: float,
                granularity: float | None = None, confidence: float = 0.95,
                neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                unknown: str = "error", random: RandomSource | None = None,
                accountant: BudgetAccountant | None = None, person: str | None = None,
                max_rows_per_person: int | None = None) -> pd.DataFrame:
    """Differentially private quantile(s) of a numeric column (module docstring).

    Parameters
    ----------
    data : DataFrame
    column : str
        Numeric; missing or non-numeric values are refused after the charge
        (``unknown="error"``) or their rows dropped (``"drop"``).
    q : float or sequence of float
        Quantile level(s) in ``[0, 1]``; several split ``epsilon`` equally.
    lower, upper : float
        Declared bounds (the candidates' range; values are clamped to it).
    epsilon : float
        Total ε (pure: δ = 0).
    granularity : float, optional
        The grid step ``g``, a power of two; default the largest ``<= (upper - lower) /
        2**32``.
    confidence : float, default 0.95
        Level of the recorded ``rank_error``.
    neighbouring, random, accountant, person, max_rows_per_person
        As in :func:`~gpuppdp.dp.releases.dp_histogram`.

    Returns
    -------
    DataFrame
        ``quantile`` and ``value``, one row per level; ``attrs["dp"]`` records the guarantee
        and, per level, the mechanism, its ε, sensitivity, grid and ``rank_error``.

    Examples
    --------
    >>> import pandas as pd
    >>> from gpuppdp.dp import RandomSource
    >>> df = pd.DataFrame({"age": range(1000)})
    >>> r = dp_quantile(df, "age", 0.5, lower=0, upper=1000, epsilon=1.0,
    ...                 random=RandomSource("cpu"))
    >>> bool(450 < r["value"][0] < 550)
    True
    """
    given = [q] if not isinstance(q, (list, tuple, np.ndarray)) else list(q)
    if not given:
        raise InputError("q must name at least one quantile level")
    levels = [check_number("q", v, 0.0, 1.0) for v in given]
    epsilon = check_epsilon("epsilon", epsilon)
    for name, v in (("lower", lower), ("upper", upper)):
        check_number(name, v, -math.inf)
    if not lower < upper:
        raise InputError(f"need lower < upper, got lower={lower!r}, upper={upper!r}")
    lower, upper = float(lower), float(upper)
    g, j_lo, j_hi = _grid(lower, upper, granularity)
    confidence = check_probability("confidence", confidence, low=0.0, high=1.0)
    neighbouring = Neighbouring.parse(neighbouring)
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    person, m = _persons(data, [], person, max_rows_per_person)
    if unknown not in ("error", "drop"):
        raise InputError(f"unknown must be 'error' or 'drop', got {unknown!r}")
    source = random if random is not None else default_source()
    _check_source(source)
    charge = {"epsilon": epsilon, "delta": 0.0}
    _check_accountant(accountant, charge, neighbouring)
    ranks, not_numbers = _positions(data, column, unknown, person, m, source, lower, upper,
                                    g, j_lo, j_hi)
    unit = _unit(person, m)
    _spend(accountant, charge, f"dp_quantile {levels} of {column!r}", neighbouring=neighbouring,
           unit=unit, seed=source.seed)
    if unknown != "drop" and not_numbers.any():  # decided after the charge
        raise missing_values(column)
    chosen, queries = _quantiles(ranks, levels, epsilon, neighbouring, m, source, g,
                                 j_hi - j_lo + 1, confidence)
    frame = pd.DataFrame({"quantile": levels, "value": chosen})
    post = [] if person is None else [f"at most {m} rows per person ({person!r}), chosen at "
                                      "random"]
    frame = _record(frame, epsilon=epsilon, delta=0.0, neighbouring=neighbouring,
                    queries=queries, post=post, source=source, cells=len(levels),
                    from_data=[], unknown=unknown, unit=unit)
    frame.attrs["dp"]["statistic"] = "quantile"
    frame.attrs["dp"]["bounds"] = [lower, upper]
    frame.attrs["dp"]["confidence"] = {
        "level": confidence,
        "method": "rank_error: |#{x < value} - q n| <= d* + rank_error with this probability "
                  "(McSherry & Talwar 2007, Theorem 6; d* the best on the grid)"}
    return frame


def dp_median(data: pd.DataFrame, column: str, **options) -> pd.DataFrame:
    """The median: :func:`dp_quantile` at ``q = 0.5``."""
    return dp_quantile(data, column, 0.5, **options)
