"""Count queries on released tables, answered under the uniform assumption.

A generalized value stands for a set of original values, each equally likely (LeFevre, DeWitt
& Ramakrishnan, ICDE 2006, sec. 5; Xiao & Tao, VLDB 2006, sec. 6):

* a hierarchy label stands for the leaves under it (``hierarchies=``);
* an interval -- ``[lo-hi]`` (Mondrian), ``lo-hi`` (ARX's Adult hierarchies), ``[lo, hi)`` or
  ``[lo, hi[`` (half-open), ``[lo, hi]`` -- for the integers in it;
* ``*`` for the whole domain (its hierarchy's leaves, or ``domains=``);
* any other value for itself.

:func:`estimate_count` gives the expected ``COUNT(*)`` of a conjunctive query
``where={column: value | (lo, hi)}`` (``(lo, hi)``: ``lo <= x <= hi``); for an anatomized
release it combines the exact QIDs of the QIT with the sensitive counts of the ST.
:func:`workload_error` draws random queries and reports their mean relative error against the
original table.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .core.codes import encode_column
from .errors import InputError
from .validation import check_frame, check_int, column_list

__all__ = ["parse_interval", "estimate_count", "workload_error", "label_leaves"]

_NUM = r"(-?\d+(?:\.\d+)?)"
_HALF = re.compile(r"^\s*([\[(])\s*" + _NUM + r"\s*[,;]\s*" + _NUM + r"\s*([\])\[])\s*$")
_DASH = re.compile(r"^\s*(\[?)\s*" + _NUM + r"\s*-\s*" + _NUM + r"\s*(\]?)\s*$")


def parse_interval(label) -> tuple[float, float, bool, bool] | None:
    """``(lo, hi, lo_closed, hi_closed)`` of an interval label, ``None`` for anything else.

    >>> parse_interval("[20-39]"), parse_interval("[0, 5)")
    ((20.0, 39.0, True, True), (0.0, 5.0, True, False))
    """
    text = str(label)
    m = _HALF.match(text)
    if m:
        return float(m[2]), float(m[3]), m[1] == "[", m[4] == "]"
    m = _DASH.match(text)
    if m and (m[1] == "[") == (m[4] == "]"):
        return float(m[2]), float(m[3]), True, True
    return None


def _as_number(value) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def label_leaves(hierarchy) -> dict[str, np.ndarray]:
    """Every label of ``hierarchy`` -> the leaf indices under it (the lowest level holding the
    label wins, so a leaf stands for itself)."""
    out: dict[str, np.ndarray] = {}
    for level in range(hierarchy.height + 1):
        codes = hierarchy.codes(level)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(hierarchy.labels(level)) + 1))
        for i, label in enumerate(hierarchy.labels(level).tolist()):
            out.setdefault(str(label), order[bounds[i]:bounds[i + 1]])
    return out


class _Column:
    """How the released values of one column spread over original values."""

    def __init__(self, name: str, hierarchy=None, domain=None):
        self.name = name
        self.hierarchy = hierarchy
        self.leaves = None if hierarchy is None else hierarchy.leaves
        self.under = None if hierarchy is None else label_leaves(hierarchy)
        self.domain = None if domain is None else list(dict.fromkeys(domain))

    def _match(self, values: Sequence, cond) -> np.ndarray:
        """Which of ``values`` satisfy ``cond`` (a value, or ``(lo, hi)`` inclusive)."""
        if isinstance(cond, tuple):
            lo, hi = float(cond[0]), float(cond[1])
            nums = np.array([_as_number(v) if _as_number(v) is not None else np.nan
                             for v in values], dtype=float)
            return (nums >= lo) & (nums <= hi)
        target = str(cond)
        return np.array([str(v) == target for v in values], dtype=bool)

    def fraction(self, label, cond) -> float:
        """Expected share of the original values behind released ``label`` that satisfy
        ``cond``."""
        text = str(label)
        if self.under is not None and self.leaves is not None and text in self.under:
            leaves = self.leaves[self.under[text]]
            return float(self._match(leaves, cond).mean())
        if text == "*":
            if self.domain is None:
                raise InputError(f"column {self.name!r}: '*' needs the column's hierarchy "
                                 "(hierarchies=) or domain (domains=) to be spread over")
            nums = [_as_number(v) for v in self.domain]
            numbers = [x for x in nums if x is not None]
            if len(numbers) == len(nums) and all(float(x).is_integer() for x in numbers) and nums:
                return self._integers(min(numbers), max(numbers), True, True, cond)
            return float(self._match(self.domain, cond).mean())
        interval = parse_interval(text)
        if interval is not None:
            return self._integers(*interval, cond)
        return float(self._match([text], cond)[0])

    @staticmethod
    def _integers(lo, hi, lo_closed, hi_closed, cond) -> float:
        first = math.ceil(lo) + (0 if lo_closed or not float(lo).is_integer() else 1)
        last = math.floor(hi) - (0 if hi_closed or not float(hi).is_integer() else 1)
        width = last - first + 1
        if width <= 0:
            return 0.0
        if isinstance(cond, tuple):
            a = max(first, math.ceil(float(cond[0])))
            b = min(last, math.floor(float(cond[1])))
            return max(b - a + 1, 0) / width
        x = _as_number(cond)
        return 1.0 / width if x is not None and x.is_integer() and first <= x <= last else 0.0


def _release_parts(release, hierarchies):
    """``(table, hierarchies)`` of a generalized release: a DataFrame, an
    :class:`~gpuppdp.anonymizer.AnonymizationResult` or a
    :class:`~gpuppdp.algorithms.mondrian.MondrianRelease`."""
    hierarchies = dict(hierarchies or {})
    schema = getattr(release, "schema", None)
    if schema is not None:               # an AnonymizationResult: its own hierarchies
        hierarchies = {**schema.quasi_identifiers, **hierarchies}
    own = getattr(release, "hierarchies", None)
    if isinstance(own, Mapping):         # a MondrianRelease
        hierarchies = {**own, **hierarchies}
    table = getattr(release, "released", release)
    return check_frame("release", table), hierarchies


def _anatomized(release) -> bool:
    """Is ``release`` an :class:`~gpuppdp.algorithms.anatomy.AnatomizedRelease` (a QIT and an
    ST)?  Known by its tables, so that this module imports no algorithm."""
    return isinstance(getattr(release, "qit", None), pd.DataFrame) and \
        isinstance(getattr(release, "st", None), pd.DataFrame)


def _check_where(where, columns) -> dict:
    if not isinstance(where, Mapping) or not where:
        raise InputError(f"where must be a non-empty mapping column -> value or (lo, hi), "
                         f"got {where!r}")
    for col, cond in where.items():
        if col not in columns:
            raise InputError(f"where: column {col!r} is not in the release")
        if isinstance(cond, (tuple, list)):
            if len(cond) != 2 or _as_number(cond[0]) is None or _as_number(cond[1]) is None:
                raise InputError(f"where[{col!r}]: a range must be (lo, hi) numbers, got "
                                 f"{cond!r}")
    return {c: tuple(v) if isinstance(v, list) else v for c, v in where.items()}


def estimate_count(release, where: Mapping, *, hierarchies: Mapping | None = None,
                   domains: Mapping | None = None) -> float:
    """Expected ``COUNT(*) WHERE`` every condition of ``where`` holds, under the uniform
    assumption (see the module docstring).

    ``release``: a released DataFrame (QID values as hierarchy labels, intervals or ``*``), an
    ``AnonymizationResult``, a ``MondrianRelease`` or an
    :class:`~gpuppdp.algorithms.anatomy.AnatomizedRelease`.  ``where`` maps a column to a
    value (equality, compared as strings) or ``(lo, hi)`` (``lo <= x <= hi``, numbers).
    ``hierarchies`` maps columns to the hierarchies their labels come from; ``domains`` maps
    columns to their original values, for ``*`` in a column without a hierarchy.
    """
    if _anatomized(release):
        return _estimate_anatomy(release, where)
    table, hierarchies = _release_parts(release, hierarchies)
    where = _check_where(where, table.columns)
    domains = dict(domains or {})
    prob = np.ones(len(table))
    for col, cond in where.items():
        spread = _Column(col, hierarchies.get(col), domains.get(col))
        codes, labels = encode_column(table[col])
        share = np.array([spread.fraction(v, cond) for v in labels.tolist()], dtype=float)
        prob *= share[codes]
    return float(prob.sum())


def _estimate_anatomy(release, where) -> float:
    """COUNT from the QIT (exact QIDs) and the ST (sensitive counts per group): the rows of
    group g matching the QID conditions times the share of g's sensitive values matching."""
    qit, st, sensitive = release.qit, release.st, release.sensitive
    where = _check_where(where, list(qit.columns) + [sensitive])
    n_groups = int(qit["group_id"].max()) + 1
    match = np.ones(len(qit), dtype=bool)
    for col, cond in where.items():
        if col == sensitive:
            continue
        codes, labels = encode_column(qit[col])
        match &= _Column(col)._match(labels.tolist(), cond)[codes]
    gid = qit["group_id"].to_numpy(np.int64)
    rows = np.bincount(gid[match], minlength=n_groups).astype(float)
    size = np.bincount(gid, minlength=n_groups).astype(float)
    share = np.ones(n_groups)
    if sensitive in where:
        ok = _Column(sensitive)._match(st[sensitive].tolist(), where[sensitive])
        sgid = st["group_id"].to_numpy(np.int64)
        hits = np.bincount(sgid[ok], weights=st["count"].to_numpy(float)[ok],
                           minlength=n_groups)
        share = np.divide(hits, size, out=np.zeros(n_groups), where=size > 0)
    return float((rows * share).sum())


def _numeric_values(series: pd.Series) -> np.ndarray | None:
    nums = pd.to_numeric(series, errors="coerce")
    return None if nums.isna().any() else nums.to_numpy(float)


def workload_error(original: pd.DataFrame, release, *, queries: int = 1000, seed=None,
                   columns: Sequence[str] | None = None, dims: int = 2,
                   hierarchies: Mapping | None = None, sanity: float = 1.0,
                   details: bool = False):
    """Mean relative error ``|estimate - actual| / max(actual, sanity)`` of ``queries`` random
    count queries on ``release`` (anything :func:`estimate_count` takes), as in LeFevre et al.
    (ICDE 2006) and Xiao & Tao (VLDB 2006).

    Each query constrains ``dims`` random columns of ``columns`` (default: the released QIDs
    and, for Mondrian and anatomy, the sensitive attribute): a numeric column (every value a
    number) by a range between two random values of its domain, any other by equality with a
    random value of its domain.  ``details=True`` returns a DataFrame of the queries
    (``where``, ``actual``, ``estimate``, ``error``) instead of the mean.
    """
    check_frame("original", original)
    queries = check_int("queries", queries, 1)
    dims = check_int("dims", dims, 1)
    if columns is None:
        if _anatomized(release):
            columns = release.quasi_identifiers + [release.sensitive]
        elif hasattr(release, "quasi_identifiers"):
            columns = list(release.quasi_identifiers) + (
                [release.sensitive] if getattr(release, "sensitive", None) else [])
        else:
            table = getattr(release, "released", release)
            columns = [c for c in table.columns if c in original.columns]
    columns = column_list(columns, "columns")
    missing = [c for c in columns if c not in original.columns]
    if missing:
        raise InputError(f"columns: not in the original table: {', '.join(map(repr, missing))}")
    rng = np.random.default_rng(seed)
    domains = {}
    for c in columns:
        nums = _numeric_values(original[c])
        domains[c] = ("range", np.unique(nums)) if nums is not None else \
            ("value", encode_column(original[c], as_str=True)[1])
    rows = []
    for _ in range(queries):
        picked = rng.choice(len(columns), size=min(dims, len(columns)), replace=False)
        where: dict[str, tuple[float, float] | str] = {}
        for j in sorted(picked):
            kind, dom = domains[columns[j]]
            if kind == "range":
                a, b = np.sort(rng.choice(dom, size=2))
                where[columns[j]] = (float(a), float(b))
            else:
                where[columns[j]] = str(dom[rng.integers(len(dom))])
        actual = _actual_count(original, where)
        estimate = estimate_count(release, where, hierarchies=hierarchies,
                                  domains={c: d[1].tolist() for c, d in domains.items()})
        rows.append((where, actual, estimate, abs(estimate - actual) / max(actual, sanity)))
    out = pd.DataFrame(rows, columns=["where", "actual", "estimate", "error"])
    return out if details else float(out["error"].mean())


def _actual_count(original: pd.DataFrame, where: Mapping) -> int:
    match = np.ones(len(original), dtype=bool)
    for col, cond in where.items():
        codes, labels = encode_column(original[col])
        match &= _Column(col)._match(labels.tolist(), cond)[codes]
    return int(match.sum())
