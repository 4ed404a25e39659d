"""Reconstruction of microdata from published statistics, as an integer program.

A statistical agency publishes counts, means and medians of small groups; the attack finds
every table of records consistent with them (Dinur and Nissim 2003, the "fundamental law of
information recovery"; Garfinkel, Abowd and Martindale 2018/2019, the attack the US Census
Bureau ran on its own 2010 tables).  :func:`reconstruct` encodes the statistics as a mixed
integer program and hands it to HiGHS (``scipy.optimize.milp``).

The encoding is **by record type** (a histogram), not record slot by record slot as
Garfinkel et al. write it for a SAT solver: one integer variable ``x_t >= 0`` per possible
record ``t`` (the cartesian product of the attribute domains, less the types a rule forbids)
counts the people of type ``t``.  Group filters are then fixed sets of types, so

* a count is ``sum_{t in G} x_t = c`` (suppressed: ``<= threshold - 1``, zero included);
* a mean ``p`` rounded to ``d`` decimals is ``n (p - tol) <= sum_{t in G} v_t x_t <=
  n (p + tol)`` with ``tol = 0.5 * 10**-d`` and ``n`` the group's count (a constant when
  published, the linear expression otherwise);
* a median uses the order statistics of the group: with cumulative counts
  ``C(v) = #{members with value <= v}`` and one binary ``y_v`` per value, the ``k``-th smallest
  value is ``v`` exactly when ``C(v) >= k`` and ``C(v - 1) <= k - 1``; an odd count ``n`` has
  one middle value (``k = (n + 1) / 2``), an even one two (``k = n / 2`` and ``n / 2 + 1``)
  whose average is the median.  The group's count must be published (in the same statistic
  or another one with the same group).

No slot symmetry arises, and the size of the program depends on the domains, not on the
number of people: keep the product of the domains small (``max_types``, default 10**6).
Numeric attributes must be integer-valued (``"integer": true``).

Uniqueness is decided as Garfinkel et al. do: solve again with the found table excluded (a
no-good cut: some type count lower, or more records in all); infeasible means unique.
Statistics that no table satisfies (noisy releases) are answered, by default, with the
table closest to them: the least total absolute deviation from the published counts, means
(in people and in the numeric attribute's units) and median bounds (there, a median only
limits the members below and above it to half the published count: exact for an odd count,
a relaxation for an even one).

References
----------
.. [1] I. Dinur and K. Nissim, "Revealing information while preserving privacy", PODS 2003.
.. [2] S. Garfinkel, J. M. Abowd and C. Martindale, "Understanding database reconstruction
   attacks on public data", ACM Queue 16(5), 2018; Commun. ACM 62(3):46-53, 2019.
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError, InputTypeError
from .domains import Attribute, group_mask, is_number, load_statistics, parse_attributes, too_large

__all__ = ["Reconstruction", "ReconstructionError", "groups_by", "load_statistics",
           "match_records", "reconstruct", "tabulate"]

DEFAULT_MAX_TYPES = 1_000_000
DEFAULT_MAX_MODEL = 1_000_000  # variables + constraints, estimated before building
DEFAULT_MAX_RECORDS = 10_000
_FUZZ = 1e-9
_STAT_KEYS = {"group", "count", "mean", "median", "attribute", "decimals", "tolerance",
              "suppressed", "label"}


class ReconstructionError(InputError):
    """The statistics admit no table (``on_inconsistent="error"``), or the solver stopped
    before it found one."""


def _scipy():
    try:
        from scipy import optimize, sparse  # noqa: PLC0415  # deferred: SciPy, optional
    except ImportError:  # pragma: no cover - scipy is in the test extra
        raise ImportError("the reconstruction attack needs SciPy >= 1.10 (HiGHS through "
                          "scipy.optimize.milp): pip install 'gpuppdp[attacks]'") from None
    return optimize, sparse


# -- the statistics file ------------------------------------------------------------------------
@dataclass(frozen=True)
class _Statistic:
    index: int
    label: str
    group: dict
    mask: np.ndarray  # over the record types
    count: int | None
    mean: float | None
    median: float | None
    attribute: str | None
    tolerance: float
    suppressed: bool


@dataclass
class _Spec:
    attributes: list
    types: dict           # name -> array over the record types (codes or numeric values)
    statistics: list
    threshold: int | None

    @property
    def n_types(self) -> int:
        return len(next(iter(self.types.values())))

    def numeric(self) -> list[str]:
        return [a.name for a in self.attributes if a.numeric]


def _parse(stats, max_types: int) -> _Spec:
    if isinstance(stats, (str, os.PathLike)):
        stats = load_statistics(stats)
    if not isinstance(stats, Mapping):
        raise InputTypeError(f"stats must be a dict or the path of a JSON file, got "
                        f"{type(stats).__name__}")
    extra = set(stats) - {"attributes", "rules", "statistics", "suppression_threshold",
                          "description", "source"}
    if extra:
        raise InputError(f"stats: unknown key(s) {sorted(extra)}; expected attributes, rules, "
                         "statistics, suppression_threshold")
    attributes = parse_attributes(stats.get("attributes"), max_types)
    by_name = {a.name: a for a in attributes}
    sizes = [len(a.values) for a in attributes]
    n = math.prod(sizes)
    if n > max_types:
        raise too_large(f"the attribute domains have {n:,} combinations (record types), "
                        f"more than {max_types:,}: narrow the domains, or raise ", "max_types")
    grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
    types = {}
    for attr, grid in zip(attributes, grids):
        codes = grid.reshape(-1)
        types[attr.name] = (np.asarray(attr.values, dtype=np.int64)[codes] if attr.numeric
                            else codes.astype(np.int64))
    keep = np.ones(n, dtype=bool)
    rules = stats.get("rules", []) or []
    if not isinstance(rules, (list, tuple)):
        raise InputError("rules must be a list of {\"if\": {...}, \"then\": {...}}")
    for i, rule in enumerate(rules):
        if not isinstance(rule, Mapping) or set(rule) != {"if", "then"}:
            raise InputError(f"rules[{i}]: expected {{\"if\": {{...}}, \"then\": {{...}}}}, "
                             f"got {rule!r}")
        keep &= ~group_mask(rule["if"], by_name, types, f"rules[{i}].if") \
            | group_mask(rule["then"], by_name, types, f"rules[{i}].then")
    types = {k: v[keep] for k, v in types.items()}
    threshold = stats.get("suppression_threshold")
    if threshold is not None and (not isinstance(threshold, numbers.Integral)
                                  or isinstance(threshold, bool) or threshold < 1):
        raise InputError(f"suppression_threshold must be an integer >= 1, got {threshold!r}")
    raw = stats.get("statistics")
    if not isinstance(raw, (list, tuple)) or not raw:
        raise InputError("statistics must be a non-empty list")
    numeric = [a.name for a in attributes if a.numeric]
    out = []
    for i, st in enumerate(raw):
        where = f"statistics[{i}]"
        if not isinstance(st, Mapping) or "group" not in st:
            raise InputError(f"{where}: expected an object with a \"group\", got {st!r}")
        unknown = set(st) - _STAT_KEYS
        if unknown:
            raise InputError(f"{where}: unknown key(s) {sorted(unknown)}; expected "
                             f"{', '.join(sorted(_STAT_KEYS))}")
        label = str(st.get("label", i))
        mask = group_mask(st["group"], by_name, types, f"{where}.group")
        suppressed = st.get("suppressed", False)
        if suppressed not in (True, False):
            raise InputError(f"{where}: suppressed must be true or false")
        count, mean, median = st.get("count"), st.get("mean"), st.get("median")
        if suppressed:
            if any(v is not None for v in (count, mean, median)):
                raise InputError(f"{where}: a suppressed statistic publishes no value")
            if threshold is None:
                raise InputError(f"{where}: suppressed, but the file has no "
                                 "suppression_threshold")
        elif count is None and mean is None and median is None:
            raise InputError(f"{where}: give count, mean or median, or \"suppressed\": true")
        if count is not None and (not isinstance(count, numbers.Integral)
                                  or isinstance(count, bool) or count < 0):
            raise InputError(f"{where}: count must be an integer >= 0, got {count!r}")
        for key, value in (("mean", mean), ("median", median)):
            if value is not None and not is_number(value):
                raise InputError(f"{where}: {key} must be a finite number, got {value!r}")
        attribute = st.get("attribute")
        if mean is not None or median is not None:
            if attribute is None:
                if len(numeric) != 1:
                    raise InputError(f"{where}: name the numeric attribute of the mean/median "
                                     f"(\"attribute\"); numeric attributes: {numeric}")
                attribute = numeric[0]
            elif attribute not in numeric:
                raise InputError(f"{where}: attribute {attribute!r} is not a numeric "
                                 f"attribute ({numeric})")
        decimals, tolerance = st.get("decimals"), st.get("tolerance")
        if decimals is not None and tolerance is not None:
            raise InputError(f"{where}: give decimals or tolerance, not both")
        if decimals is not None:
            if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool):
                raise InputError(f"{where}: decimals must be an integer, got {decimals!r}")
            tolerance = 0.5 * 10.0 ** (-int(decimals))
        elif tolerance is None:
            tolerance = 0.0
        elif not is_number(tolerance) or tolerance < 0:
            raise InputError(f"{where}: tolerance must be a number >= 0, got {tolerance!r}")
        out.append(_Statistic(i, label, dict(st["group"]), mask,
                              None if count is None else int(count),
                              None if mean is None else float(mean),
                              None if median is None else float(median),
                              attribute, float(tolerance), bool(suppressed)))
    return _Spec(attributes, types, out, None if threshold is None else int(threshold))


# -- the integer program ------------------------------------------------------------------------
class _Model:
    """Variables and rows of a MILP, solved by HiGHS through ``scipy.optimize.milp``."""

    def __init__(self):
        self.lb, self.ub, self.integer, self.cost = [], [], [], []
        self.rows = []  # (columns, coefficients, lb, ub)

    def var(self, n: int, lb, ub, integer: bool, cost=0.0) -> np.ndarray:
        start = len(self.lb)
        self.lb.extend(np.broadcast_to(np.asarray(lb, dtype=float), (n,)).tolist())
        self.ub.extend(np.broadcast_to(np.asarray(ub, dtype=float), (n,)).tolist())
        self.integer.extend([1 if integer else 0] * n)
        self.cost.extend(np.broadcast_to(np.asarray(cost, dtype=float), (n,)).tolist())
        return np.arange(start, start + n)

    def row(self, cols, coefs, lb=-np.inf, ub=np.inf) -> None:
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        coefs = np.broadcast_to(np.asarray(coefs, dtype=float), cols.shape)
        self.rows.append((cols, np.array(coefs), float(lb), float(ub)))

    @property
    def size(self) -> tuple[int, int]:
        return len(self.lb), len(self.rows)

    def solve(self, time_limit: float | None):
        """``(status, x, objective)``: status "optimal", "infeasible" or "limit" (x None
        when the limit came before any solution)."""
        optimize, sparse = _scipy()
        n = len(self.lb)
        indptr = np.cumsum([0] + [len(r[0]) for r in self.rows])
        cols = np.concatenate([r[0] for r in self.rows]) if self.rows else np.zeros(0, int)
        vals = np.concatenate([r[1] for r in self.rows]) if self.rows else np.zeros(0)
        a = sparse.csr_array((vals, cols, indptr), shape=(len(self.rows), n))
        options = {"disp": False, "presolve": True}
        if time_limit is not None:
            options["time_limit"] = float(time_limit)
        res = optimize.milp(
            np.asarray(self.cost), integrality=np.asarray(self.integer),
            bounds=optimize.Bounds(np.asarray(self.lb), np.asarray(self.ub)),
            constraints=[optimize.LinearConstraint(a, [r[2] for r in self.rows],
                                                   [r[3] for r in self.rows])]
            if self.rows else None,
            options=options)
        if res.status == 0:
            return "optimal", res.x, float(res.fun)
        if res.status == 2:
            return "infeasible", None, None
        if res.status == 1:
            return "limit", res.x, None if res.x is None else float(res.fun)
        raise ReconstructionError(f"HiGHS failed: {res.message}")


class _Program:
    """The reconstruction program of a :class:`_Spec`: exact, or closest (soft rows)."""

    def __init__(self, spec: _Spec, closest: bool, max_records: int):
        self.spec, self.closest = spec, closest
        self.m = _Model()
        counts = self._published_counts()
        known_total = next((c for mask, c in counts.values() if mask.all()), None)
        if closest:  # any count may be off: at most twice the largest published one, + 10
            largest = max([st.count for st in spec.statistics if st.count is not None]
                          + [spec.threshold or 0])
            n_ub = min(max_records, 2 * largest + 10)
        else:
            n_ub = known_total if known_total is not None else max_records
        ub = np.full(spec.n_types, float(n_ub))
        if not closest:  # a type is bounded by the count of every group it is in
            for st in spec.statistics:
                cap = st.count if st.count is not None else (
                    spec.threshold - 1 if st.suppressed else None)
                if cap is not None:
                    ub[st.mask] = np.minimum(ub[st.mask], cap)
        self.n_ub = n_ub
        self.x = self.m.var(spec.n_types, 0, ub, integer=True)
        self.x_ub = ub
        for st in spec.statistics:
            published = st.count if st.count is not None else counts.get(
                st.mask.tobytes(), (None, None))[1]
            if st.suppressed:
                self._soft(self.x[st.mask], 1.0, -np.inf, spec.threshold - 1, 1.0)
            if st.count is not None:
                self._soft(self.x[st.mask], 1.0, st.count, st.count, 1.0)
            if st.mean is not None:
                self._mean(st, published)
            if st.median is not None:
                self._median(st, published)

    def _published_counts(self) -> dict:
        out = {}
        for st in self.spec.statistics:
            if st.count is not None:  # the first published count of each group
                out.setdefault(st.mask.tobytes(), (st.mask, st.count))
        return out

    def _soft(self, cols, coefs, lb, ub, weight) -> None:
        """A row ``lb <= expr <= ub``; soft in a closest program (deviation costs
        ``weight`` per unit)."""
        cols = np.asarray(cols, dtype=np.int64)
        coefs = np.broadcast_to(np.asarray(coefs, dtype=float), cols.shape)
        if self.closest:
            s = self.m.var(2, 0, np.inf, integer=False, cost=weight)
            cols = np.concatenate([cols, s])
            coefs = np.concatenate([coefs, [1.0, -1.0]])
        self.m.row(cols, coefs, lb, ub)

    def _values(self, st: _Statistic) -> np.ndarray:
        return self.spec.types[st.attribute][st.mask].astype(float)

    def _mean(self, st: _Statistic, n) -> None:
        cols, vals = self.x[st.mask], self._values(st)
        lo, hi = st.mean - st.tolerance, st.mean + st.tolerance
        if n is not None:  # the group's size is published: the sum lies in n [lo, hi]
            if n == 0:
                if not self.closest:
                    self.m.row([], [], 1, 1)  # a mean of nobody: infeasible
                return
            if self.closest:  # sums are integers: the window may hold none
                self._soft(cols, vals, n * lo, n * hi, 1.0 / n)
            else:
                self._soft(cols, vals, math.ceil(n * lo - _FUZZ),
                           math.floor(n * hi + _FUZZ), 1.0 / n)
            return
        # unknown size: sum - hi n <= 0 <= sum - lo n, and at least one member
        self._soft(cols, vals - hi, -np.inf, 0.0, 1.0)
        self._soft(cols, vals - lo, 0.0, np.inf, 1.0)
        self.m.row(cols, 1.0, 1, np.inf)

    def _median(self, st: _Statistic, n) -> None:
        if n is None:
            raise InputError(f"statistics[{st.index}]: a median needs the group's count (in "
                             "the same statistic or another with the same group)")
        cols = self.x[st.mask]
        if n == 0 or len(cols) == 0:
            if not self.closest:
                self.m.row([], [], 1, 1)  # a median of nobody: infeasible
            return
        attr = next(a for a in self.spec.attributes if a.name == st.attribute)
        values = np.array(attr.values, dtype=float)
        member_values = self._values(st)
        lo, hi = st.median - st.tolerance - _FUZZ, st.median + st.tolerance + _FUZZ
        if self.closest:
            # soft: at most half of the published count below / above the median (exact
            # for an odd count, a relaxation for an even one); no binaries
            half = (n - 1) // 2 if n % 2 else n // 2
            self._soft(cols[member_values < lo], 1.0, -np.inf, half, 1.0)
            self._soft(cols[member_values > hi], 1.0, -np.inf, half, 1.0)
            return
        # cumulative counts C(v) = #members with value <= v (continuous, implied integer)
        big = float(n)
        c = self.m.var(len(values), 0, big, integer=False)
        for j, v in enumerate(values):
            at = cols[member_values == v]
            prev = [c[j - 1]] if j else []
            self.m.row(np.concatenate([[c[j]], prev, at]).astype(np.int64),
                       np.concatenate([[1.0], [-1.0] * len(prev), -np.ones(len(at))]), 0, 0)
        if n % 2:
            # odd: the k-th smallest lies in [lo, hi] exactly when C(lo - 1) <= k - 1 and
            # C(hi) >= k -- two linear rows, no binaries
            k = (n + 1) // 2
            below = np.flatnonzero(values < lo)
            upto = np.flatnonzero(values <= hi)
            if below.size:
                self.m.row([c[below[-1]]], 1.0, -np.inf, k - 1)
            self.m.row([c[upto[-1]]] if upto.size else [], 1.0, k, np.inf)
            return
        # even: the k-th smallest (k = n/2, n/2 + 1) as a value: z_v = 1 when it is <= v
        # (non-decreasing in v), i.e. k z_v <= C(v) <= k - 1 + (n - k + 1) z_v; its value is
        # min + #{v < max: z_v = 0} (integer values, step 1)
        ks = [n // 2, n // 2 + 1]
        cols_z, coefs_z, const = [], [], 0.0
        for k in ks:
            z = self.m.var(len(values), 0, 1, integer=True)
            for j in range(len(values)):
                self.m.row([c[j], z[j]], [1.0, -k], 0, np.inf)
                self.m.row([c[j], z[j]], [1.0, -(big - k + 1)], -np.inf, k - 1)
                if j:
                    self.m.row([z[j - 1], z[j]], [1.0, -1.0], -np.inf, 0)
            self.m.row([z[-1]], 1.0, 1, 1)
            cols_z.append(z[:-1])
            coefs_z.append(-np.ones(len(values) - 1) / len(ks))
            const += (values[0] + len(values) - 1) / len(ks)
        # the mean of the middle value(s) within the published median's rounding
        self._soft(np.concatenate(cols_z), np.concatenate(coefs_z), lo - const, hi - const,
                   1.0)

    def exclude(self, counts: np.ndarray) -> None:
        """No-good cut: some type in the support of ``counts`` has fewer records, or the
        table has more records in all."""
        support = np.flatnonzero(counts > 0)
        z = self.m.var(len(support) + 1, 0, 1, integer=True)
        for t, zt in zip(support, z[:-1]):
            big = self.x_ub[t] - counts[t] + 1
            self.m.row([self.x[t], zt], [1.0, big], -np.inf, counts[t] - 1 + big)
        total = int(counts.sum())
        self.m.row(np.concatenate([self.x, [z[-1]]]),
                   np.concatenate([np.ones(len(self.x)), [-(total + 1.0)]]), 0, np.inf)
        self.m.row(z, 1.0, 1, np.inf)

    def bound_objective(self, value: float) -> None:
        """Keep later solutions as close to the statistics as the first (closest mode)."""
        cost = np.asarray(self.m.cost)
        nz = np.flatnonzero(cost)
        self.m.row(nz, cost[nz], -np.inf, value + 1e-6 + 1e-9 * abs(value))

    def records(self, solution) -> np.ndarray:
        return np.rint(solution[self.x]).astype(np.int64)


# -- results ------------------------------------------------------------------------------------
@dataclass
class Reconstruction:
    """What :func:`reconstruct` found.

    Attributes
    ----------
    records : DataFrame
        One row per reconstructed person (the attributes as columns, sorted).
    unique : bool or None
        No other table satisfies the statistics (in closest mode: is as close to them);
        None when the time limit stopped the second solve.
    solutions : list of DataFrame
        Every table found: ``[records]`` plus, with ``all_solutions``, the others.
    complete : bool
        ``solutions`` holds every table (False when ``max_solutions`` or the time limit
        stopped the enumeration, or when only uniqueness was asked for and it is not unique).
    consistent : bool or None
        True: the statistics are satisfied exactly; False: no table satisfies them, the
        closest is returned; None: the time limit stopped the exact solve first (closest).
    deviation : float
        Total absolute deviation from the published values (0 when consistent).
    recovered_exact, recovered_within_1 : float or None
        With ``truth``: the share of the true records matched one to one by a reconstructed
        record equal to it / equal but for numeric attributes within ±1.
    """

    records: pd.DataFrame
    unique: bool | None
    solutions: list
    complete: bool
    consistent: bool | None
    deviation: float
    seconds: float
    solves: int
    record_types: int
    variables: int
    constraints: int
    recovered_exact: float | None = None
    recovered_within_1: float | None = None

    @property
    def certain(self) -> pd.DataFrame | None:
        """The records in every consistent table (a multiset intersection): disclosed even
        when the table is not unique (Garfinkel et al.); None unless every table is known."""
        if not self.complete:
            return None
        common = self.solutions[0].value_counts()
        for other in self.solutions[1:]:
            common = common.combine(other.value_counts(), min, fill_value=0)
        common = common[common > 0]
        rows = [key for key, n in common.items() for _ in range(int(n))]
        return pd.DataFrame(rows, columns=self.records.columns).astype(
            self.records.dtypes.to_dict())

    def summary(self) -> dict:
        """The figures as a JSON-ready dict."""
        return {"records": int(len(self.records)), "unique": self.unique,
                "solutions": len(self.solutions), "complete": self.complete,
                "consistent": self.consistent, "deviation": self.deviation,
                "recovered_exact": self.recovered_exact,
                "recovered_within_1": self.recovered_within_1,
                "certain_records": None if self.certain is None else int(len(self.certain)),
                "seconds": round(self.seconds, 4), "solves": self.solves,
                "record_types": self.record_types, "variables": self.variables,
                "constraints": self.constraints, "solver": "highs (scipy.optimize.milp)"}


def _frame(spec: _Spec, counts: np.ndarray) -> pd.DataFrame:
    idx = np.repeat(np.arange(spec.n_types), counts)
    data = {}
    for a in spec.attributes:
        col = spec.types[a.name][idx]
        data[a.name] = col if a.numeric else np.asarray(a.values, dtype=object)[col]
    df = pd.DataFrame(data)
    return df.sort_values(list(df.columns), kind="mergesort").reset_index(drop=True)


def _keys(df: pd.DataFrame, attributes) -> list[tuple]:
    cols = []
    for a in attributes:
        col = df[a.name]
        cols.append(col.astype(float).tolist() if a.numeric else col.astype(str).tolist())
    return list(zip(*cols))


def match_records(reconstructed: pd.DataFrame, truth: pd.DataFrame, *,
                  numeric: Sequence[str] = (), tolerance: float = 1.0) -> tuple[float, float]:
    """Shares of ``truth``'s records recovered: ``(exact, within)``.

    Records are matched one to one (a maximum bipartite matching): exactly equal, or equal on
    the other columns with every ``numeric`` column within ``±tolerance``.  Categorical values
    are compared as strings, numeric ones as numbers; the shares are of ``len(truth)``.
    """
    from scipy.sparse import csr_array  # noqa: PLC0415  # deferred: SciPy, optional
    from scipy.sparse.csgraph import maximum_bipartite_matching  # noqa: PLC0415  # deferred

    cols = list(truth.columns)
    missing = [c for c in cols if c not in reconstructed.columns]
    if missing:
        raise InputError(f"truth: column(s) {missing} are not reconstructed")
    if len(truth) == 0:
        return math.nan, math.nan
    attrs = [Attribute(c, c in numeric, ()) for c in cols]
    rk, tk = _keys(reconstructed[cols], attrs), _keys(truth[cols], attrs)
    pool: dict = {}
    for key in rk:
        pool[key] = pool.get(key, 0) + 1
    exact = 0
    for key in tk:
        if pool.get(key, 0) > 0:
            pool[key] -= 1
            exact += 1
    num = [i for i, c in enumerate(cols) if c in numeric]
    cat = [i for i, c in enumerate(cols) if c not in numeric]
    rows, colidx = [], []
    for i, t in enumerate(tk):
        for j, r in enumerate(rk):
            if all(t[c] == r[c] for c in cat) and all(abs(t[c] - r[c]) <= tolerance + _FUZZ
                                                      for c in num):
                rows.append(i)
                colidx.append(j)
    graph = csr_array((np.ones(len(rows)), (rows, colidx)), shape=(len(tk), max(len(rk), 1)))
    matched = maximum_bipartite_matching(graph, perm_type="column")
    return exact / len(tk), float(np.sum(matched >= 0)) / len(tk)


def _model_size(spec: _Spec) -> tuple[int, int]:
    """Upper bounds of the variables and constraints of the exact program (before it is
    built): a variable per record type, and a median's cumulative counts (and, for an even
    count, binaries) and rows per value of its attribute."""
    variables, rows = spec.n_types, 0
    sizes = {a.name: len(a.values) for a in spec.attributes}
    for st in spec.statistics:
        rows += 2 * (st.count is not None) + st.suppressed + 3 * (st.mean is not None)
        if st.median is not None:
            variables += 3 * sizes[st.attribute]
            rows += 7 * sizes[st.attribute] + 4
    return variables, rows


def _check_size(spec: _Spec, max_model: int) -> None:
    """Refuse a program over ``max_model`` variables + constraints, naming its largest
    domain, before it is built (it would take the memory and time of its size)."""
    variables, rows = _model_size(spec)
    if variables + rows > max_model:
        big = max(spec.attributes, key=lambda a: len(a.values))
        raise too_large(f"the reconstruction program would have about {variables:,} variables "
                        f"and {rows:,} constraints ({spec.n_types:,} record types; {big.name!r} "
                        f"has {len(big.values):,} values), more than {max_model:,} in all; "
                        f"narrow or bin {big.name!r}, or raise ", "max_model")


def _check_arguments(solver, on_inconsistent, time_limit, **limits) -> None:
    """:func:`reconstruct`'s arguments checked (``limits``: integers >= 1)."""
    if solver != "highs":
        raise InputError(f"solver must be 'highs' (HiGHS through scipy.optimize.milp), got "
                         f"{solver!r}")
    if on_inconsistent not in ("closest", "error"):
        raise InputError(f"on_inconsistent must be 'closest' or 'error', got "
                         f"{on_inconsistent!r}")
    if time_limit is not None and (not is_number(time_limit) or time_limit <= 0):
        raise InputError(f"time_limit must be a number of seconds > 0, got {time_limit!r}")
    for name, value in limits.items():
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise InputError(f"{name} must be an integer >= 1, got {value!r}")


def reconstruct(stats, *, all_solutions: bool = False, solver: str = "highs",
                time_limit: float | None = None, truth: pd.DataFrame | None = None,
                max_solutions: int = 100, on_inconsistent: str = "closest",
                max_types: int = DEFAULT_MAX_TYPES,
                max_records: int = DEFAULT_MAX_RECORDS,
                max_model: int = DEFAULT_MAX_MODEL) -> Reconstruction:
    """Reconstruct the records behind published statistics (see the module docstring).

    Parameters
    ----------
    stats : dict or path
        ``attributes`` (categorical: a list of values; numeric: ``{"min", "max",
        "integer": true}``), ``rules`` (``{"if": {filters}, "then": {filters}}``: records
        matching ``if`` must match ``then``), ``statistics`` (each a ``group`` of filters --
        ``{"sex": "F"}``, ``{"age": [18, null]}``, ``{}`` for everyone -- with any of
        ``count``, ``mean`` and ``median`` of a numeric ``attribute``, rounded to
        ``decimals`` (or within ``tolerance``; exact by default), or ``"suppressed": true``:
        the count is below ``suppression_threshold``, zero included).
    all_solutions : bool
        Enumerate every table (up to ``max_solutions``), not just decide uniqueness.
    solver : {"highs"}
    time_limit : float, optional
        Seconds per solve.
    truth : DataFrame, optional
        The true records: the shares recovered exactly / within ±1 are filled in.
    on_inconsistent : {"closest", "error"}
        Statistics that no table satisfies: return the closest table, or raise
        :class:`ReconstructionError`.
    max_types, max_records : int
        Refuse domains with more record types (a numeric domain with more values is refused
        before it is built); bound on the number of records when no total count is published.
    max_model : int
        Refuse a program estimated (before it is built) at more variables + constraints:
        its memory and solving time grow with it (default 1,000,000).

    Returns
    -------
    Reconstruction
    """
    _check_arguments(solver, on_inconsistent, time_limit, max_solutions=max_solutions,
                     max_types=max_types, max_records=max_records, max_model=max_model)
    _scipy()
    t0 = time.perf_counter()
    spec = _parse(stats, max_types)
    if truth is not None:
        missing = [a.name for a in spec.attributes if a.name not in truth.columns]
        if missing:
            raise InputError(f"truth: column(s) {missing} missing")
    _check_size(spec, max_model)
    program = _Program(spec, closest=False, max_records=max_records)
    status, x, _ = program.m.solve(time_limit)
    solves, consistent, deviation = 1, True, 0.0
    if x is None:  # infeasible, or the time limit before any table
        if status == "infeasible" and on_inconsistent == "error":
            raise ReconstructionError("the statistics are inconsistent: no table of records "
                                      "satisfies them all")
        if status == "limit" and on_inconsistent == "error":
            raise ReconstructionError(f"no table found within the time limit ({time_limit} s)")
        consistent = False if status == "infeasible" else None
        program = _Program(spec, closest=True, max_records=max_records)
        status, x, deviation = program.m.solve(time_limit)
        solves += 1
    if x is None:
        raise ReconstructionError(f"no table found within the time limit ({time_limit} s)")
    first = program.records(x)
    found = [first]
    variables, constraints = program.m.size
    unique, complete = None, False
    if program.closest:
        program.bound_objective(deviation)
    while status == "optimal":  # (an incumbent cut short by the limit: uniqueness unknown)
        program.exclude(found[-1])
        status, x, _ = program.m.solve(time_limit)
        solves += 1
        if status == "infeasible":
            unique, complete = len(found) == 1, True
            break
        if x is None:  # time limit before any further table
            unique = False if len(found) > 1 else None
            break
        found.append(program.records(x))
        unique = False
        if not all_solutions or len(found) >= max_solutions:
            break
    solutions = [_frame(spec, c) for c in found]
    result = Reconstruction(
        records=solutions[0], unique=unique, solutions=solutions, complete=complete,
        consistent=consistent, deviation=float(deviation or 0.0),
        seconds=time.perf_counter() - t0, solves=solves, record_types=spec.n_types,
        variables=variables, constraints=constraints)
    if truth is not None:
        cols = [a.name for a in spec.attributes]
        result.recovered_exact, result.recovered_within_1 = match_records(
            solutions[0], truth[cols], numeric=spec.numeric())
    return result


# -- publishing statistics (tests and benchmarks) ------------------------------------------------
def tabulate(data: pd.DataFrame, attributes: Mapping, groups: Sequence[Mapping], *,
             attribute: str | None = None, rules: Sequence = (), suppression_threshold: int = 3,
             decimals: int = 1, measures: Sequence[str] = ("count", "mean", "median")) -> dict:
    """The statistics file a census would publish for ``data``: for each group its count and
    the mean and median of the numeric ``attribute`` (rounded to ``decimals``), or
    ``"suppressed": true`` when the count is below ``suppression_threshold`` (zero
    included).  Groups are filter objects as in :func:`reconstruct`."""
    spec_attrs = parse_attributes(attributes)
    by_name = {a.name: a for a in spec_attrs}
    numeric = [a.name for a in spec_attrs if a.numeric]
    attribute = attribute if attribute is not None else (numeric[0] if numeric else None)
    cols = {}
    for a in spec_attrs:
        if a.name not in data.columns:
            raise InputError(f"data: no column {a.name!r}")
        if a.numeric:
            cols[a.name] = data[a.name].to_numpy(dtype=np.int64)
        else:
            lookup = {v: i for i, v in enumerate(a.values)}
            try:
                cols[a.name] = np.array([lookup[v] for v in data[a.name].tolist()],
                                        dtype=np.int64)
            except KeyError as exc:
                raise InputError(f"data[{a.name!r}]: value {exc.args[0]!r} is not in the "
                                 "domain") from None
    out = []
    for i, group in enumerate(groups):
        members = group_mask(group, by_name, cols, f"groups[{i}]") if len(data) else \
            np.zeros(0, dtype=bool)
        n = int(members.sum())
        st: dict = {"group": dict(group)}
        if n < suppression_threshold:
            st["suppressed"] = True
        else:
            values = cols[attribute][members] if attribute else None
            if "count" in measures:
                st["count"] = n
            if "mean" in measures:
                st["mean"] = round(float(values.mean()), decimals)
            if "median" in measures:
                st["median"] = round(float(np.median(values)), decimals)
            if "mean" in measures or "median" in measures:
                st["attribute"] = attribute
                st["decimals"] = decimals
        out.append(st)
    return {"attributes": dict(attributes), "rules": list(rules), "statistics": out,
            "suppression_threshold": suppression_threshold}


def groups_by(attributes: Mapping, *combinations: Sequence[str]) -> list[dict]:
    """Everyone (``{}``) and one group per combination of values of each tuple of
    categorical attributes in ``combinations`` (e.g. ``("sex",), ("race", "sex")``)."""
    out = [{}]
    for combo in combinations:
        for values in itertools.product(*[attributes[c] for c in combo]):
            out.append(dict(zip(combo, values)))
    return out
