"""Build :class:`~gpuppdp.hierarchy.Hierarchy` objects in code.

Four builders cover the usual attribute kinds (the generalization schemes ARX offers in its
hierarchy wizard, Prasser & Kohlmayer 2015):

- :func:`levels_hierarchy` -- explicit labels per leaf, ``{leaf: [level1, level2, ...]}``;
- :func:`interval_hierarchy` -- numbers grouped into nested half-open intervals ``[20, 25)``;
- :func:`masking_hierarchy` -- fixed-length codes (ZIP, ICD) masked one character per level;
- :func:`date_hierarchy` -- dates generalized to month, quarter, year, decade, century.

Every builder de-duplicates its input (order of first appearance), validates it with a
``ValueError`` that names the parameter, what was expected and what was given, and returns a
hierarchy that passed :class:`~gpuppdp.hierarchy.Hierarchy` validation with a single top value.

Leaves are the strings the engine will compare data values with (data values are matched to
leaves by ``str(value)``, see :meth:`Hierarchy.leaf_codes`), so a leaf is ``str(value)`` unless
a builder documents otherwise.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import InputError
from .hierarchy import Hierarchy
from .validation import format_values

__all__ = [
    "levels_hierarchy",
    "interval_hierarchy",
    "masking_hierarchy",
    "date_hierarchy",
    "DATE_GRANULARITIES",
]

#: Date granularities :func:`date_hierarchy` supports, finest first.
DATE_GRANULARITIES: tuple[str, ...] = ("day", "month", "quarter", "year", "decade", "century")
_DATE_RANK = {g: i for i, g in enumerate(DATE_GRANULARITIES)}


# -- shared helpers -------------------------------------------------------------------------
def _prefix(name: str | None) -> str:
    return f"{name}: " if name else ""


def _as_list(values: Any, param: str, p: str) -> list:
    """A one-dimensional list of the elements of ``values`` (array, Series, any iterable)."""
    if values is None or isinstance(values, (str, bytes)):
        raise InputError(
            f"{p}{param}: expected a sequence of values, got a single {type(values).__name__}"
            f" ({values!r})")
    if isinstance(values, np.ndarray) or hasattr(values, "to_numpy"):
        arr = np.asarray(values, dtype=object)
        if arr.ndim != 1:
            raise InputError(
                f"{p}{param}: expected a one-dimensional sequence, got shape {arr.shape}")
        return arr.tolist()
    try:
        return list(values)
    except TypeError:
        raise InputError(
            f"{p}{param}: expected a sequence of values, got {type(values).__name__}") from None


def _is_missing(v: Any) -> bool:
    """None, NaN, pd.NA, NaT (scalars only)."""
    if v is None:
        return True
    try:
        r = pd.isna(v)
    except (TypeError, ValueError):
        return False
    return isinstance(r, (bool, np.bool_)) and bool(r)


def _present_values(values: Any, p: str, kind: str, missing_names: str) -> list:
    """``values`` as a list, refused when empty or holding a missing value (``kind``: what
    was expected, for the message)."""
    vals = _as_list(values, "values", p)
    if not vals:
        raise InputError(f"{p}values: expected at least one value, got none")
    missing = [v for v in vals if _is_missing(v)]
    if missing:
        raise InputError(f"{p}values: expected {kind}, got {len(missing)} missing value(s) "
                         f"({missing_names}): {format_values(missing)}")
    return vals


def _check_top(top: Any, p: str) -> str:
    if not isinstance(top, str):
        raise InputError(f"{p}top: expected a string label, got {type(top).__name__} ({top!r})")
    return top


# -- explicit levels ------------------------------------------------------------------------
def levels_hierarchy(mapping: Mapping[Any, Any] | Iterable[Sequence[Any]], *, top: str = "*",
                     name: str | None = None) -> Hierarchy:
    """A hierarchy from explicit labels per leaf.

    Parameters
    ----------
    mapping : dict or sequence of rows
        ``{leaf: [level1, level2, ...]}`` or ARX-style rows ``[leaf, level1, level2, ...]``
        (a ``DataFrame`` is read as rows). Every leaf needs the same number of labels.
        Leaves and labels are converted with ``str``. A leaf given twice with the same labels
        is kept once; with different labels it is an error.
    top : str, default "*"
        Appended as the top level when the given labels do not already end in a single value
        (i.e. when there are no labels above the leaves, or the last level has more than one
        distinct label).
    name : str, optional
        Name of the hierarchy, used in error messages.

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> h = levels_hierarchy({"flu": ["respiratory"], "cold": ["respiratory"], "gout": ["joint"]})
    >>> h.height, h.labels(1).tolist(), h.labels(2).tolist()
    (2, ['respiratory', 'joint'], ['*'])
    """
    p = _prefix(name)
    top = _check_top(top, p)
    if isinstance(mapping, Mapping):
        items = []
        for leaf, labels in mapping.items():
            if isinstance(labels, str):
                labels = [labels]
            try:
                labels = list(labels)
            except TypeError:
                raise InputError(
                    f"{p}mapping: expected a list of labels for leaf {leaf!r}, got "
                    f"{type(labels).__name__} ({labels!r})") from None
            items.append((leaf, labels))
    else:
        if hasattr(mapping, "to_numpy") and hasattr(mapping, "columns"):
            mapping = mapping.to_numpy(dtype=object).tolist()
        if mapping is None or isinstance(mapping, (str, bytes)):
            raise InputError(f"{p}mapping: expected a dict {{leaf: [labels]}} or a sequence of "
                             f"rows [leaf, level1, ...], got {mapping!r}")
        items = []
        try:
            rows = list(mapping)
        except TypeError:
            raise InputError(f"{p}mapping: expected a dict {{leaf: [labels]}} or a sequence of "
                             f"rows [leaf, level1, ...], got {type(mapping).__name__}") from None
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
                raise InputError(f"{p}mapping: expected row {i + 1} to be a sequence "
                                 f"[leaf, level1, ...], got {row!r}")
            row = list(row)
            if not row:
                raise InputError(f"{p}mapping: row {i + 1} is empty, expected [leaf, level1, ...]")
            items.append((row[0], row[1:]))
    if not items:
        raise InputError(f"{p}mapping: expected at least one leaf, got none")

    missing = [leaf for leaf, labels in items
               if _is_missing(leaf) or any(_is_missing(x) for x in labels)]
    if missing:
        raise InputError(f"{p}mapping: expected no missing leaves or labels (None/NaN); "
                         f"{len(missing)} leaf/leaves have one: {format_values(missing)}")
    width = len(items[0][1])
    wrong = [f"{leaf} ({len(labels)})" for leaf, labels in items if len(labels) != width]
    if wrong:
        raise InputError(
            f"{p}mapping: expected every leaf to have the same number of labels ({width}, as "
            f"leaf {str(items[0][0])!r}); {len(wrong)} leaf/leaves differ, with their label "
            f"counts: {format_values(wrong)}")

    rows_by_leaf: dict[str, list[str]] = {}
    for leaf, labels in items:
        leaf_s, labels_s = str(leaf), [str(x) for x in labels]
        seen = rows_by_leaf.setdefault(leaf_s, labels_s)
        if seen != labels_s:
            raise InputError(
                f"{p}mapping: expected each leaf once; leaf {leaf_s!r} is given with different "
                f"labels {seen!r} and {labels_s!r}")
    leaves = list(rows_by_leaf)
    levels = [leaves] + [[rows_by_leaf[leaf][j] for leaf in leaves] for j in range(width)]
    if width == 0 or len(set(levels[-1])) > 1:
        levels.append([top] * len(leaves))
    return Hierarchy(levels, name=name)


# -- intervals -------------------------------------------------------------------------------
def _to_fraction(v: Any, *, strings: bool) -> Fraction | int | str:
    """Exact value of a real number: int, Fraction, or 'nonfinite' / 'bad'."""
    if isinstance(v, (bool, np.bool_)):
        return "bad"
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        # str() is the shortest repr that round-trips, so 0.1 means 1/10, as a user reads it
        return Fraction(str(v)) if math.isfinite(v) else "nonfinite"
    if isinstance(v, Decimal):
        return Fraction(v) if v.is_finite() else "nonfinite"
    if isinstance(v, numbers.Rational):
        return Fraction(v.numerator, v.denominator)
    if isinstance(v, numbers.Real):
        f = float(v)
        return Fraction(str(f)) if math.isfinite(f) else "nonfinite"
    if strings and isinstance(v, str):
        try:
            fr = Fraction(v.strip())
        except (ValueError, ZeroDivisionError):
            try:
                f = float(v)
            except ValueError:
                return "bad"
            return "bad" if math.isfinite(f) else "nonfinite"
        return int(fr) if fr.denominator == 1 else fr
    return "bad"


def _simplest(x: Fraction | int) -> Fraction | int:
    """An int when ``x`` is integral (faster arithmetic), else the Fraction."""
    return int(x) if Fraction(x).denominator == 1 else x


def _fmt_number(x: Fraction | int) -> str:
    """Plain decimal text of an exact number: ``20``, ``2.5``, ``-0.125`` (never ``20.0``)."""
    if isinstance(x, int):
        return str(x)
    x = Fraction(x)
    if x.denominator == 1:
        return str(x.numerator)
    den, twos, fives = x.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:  # not a finite decimal (only from Fraction inputs such as 1/3)
        return repr(float(x))
    n = max(twos, fives)
    digits = str(abs(x.numerator) * 10 ** n // x.denominator).rjust(n + 1, "0")
    text = (digits[:-n] + "." + digits[-n:]).rstrip("0").rstrip(".")
    return ("-" if x < 0 else "") + text


def interval_hierarchy(values: Iterable[Any], widths: Sequence[Any] | Any, *,
                       start: Any = None, top: str = "*",
                       name: str | None = None) -> Hierarchy:
    """Numbers grouped into nested half-open intervals, one width per level, then ``top``.

    Level ``L`` (``1 <= L <= len(widths)``) labels value ``v`` with the interval
    ``[a, a + widths[L-1])`` that contains it, written like ARX as ``"[20, 25)"``, where
    ``a = start + k * widths[L-1]`` for an integer ``k``. The level after the last width is
    ``top``, so the height is always ``len(widths) + 1``. Arithmetic is exact (a float is read
    as the decimal it prints as), so ``0.3`` falls in ``[0.3, 0.4)`` with width ``0.1``.

    Parameters
    ----------
    values : iterable of numbers
        ints, floats (also NumPy scalars, ``Decimal``, ``Fraction``) or numeric strings.
        NaN, infinities and missing values are rejected. Leaves are the distinct values as
        ``str(value)`` in order of first appearance (so ``25`` gives ``"25"``, ``25.0`` gives
        ``"25.0"`` and ``"025"`` stays ``"025"``), which is how data values are matched.
    widths : sequence of positive numbers, or one number
        Interval width per level, finest first. Each width must be a multiple (at least 2x) of
        the previous one, so that the intervals of one level nest in those of the next.
    start : number, optional
        Origin that aligns the interval bounds: every bound is ``start + k * width``, for any
        integer ``k`` (values below ``start`` are allowed). The default, 0, puts the bounds on
        multiples of each width (``[20, 25)``, ``[20, 30)``, ``[0, 20)``), so the labels do
        not depend on which values happen to be present.
    top, name : str
        Label of the top level (default ``"*"``) and name of the hierarchy (for error
        messages), as in :func:`levels_hierarchy`.

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> h = interval_hierarchy([23, 27, 31], (5, 10))
    >>> [h.labels(L).tolist() for L in range(h.height + 1)]
    [['23', '27', '31'], ['[20, 25)', '[25, 30)', '[30, 35)'], ['[20, 30)', '[30, 40)'], ['*']]
    """
    p = _prefix(name)
    top = _check_top(top, p)
    ws = _interval_widths(widths, p)
    if start is None:
        origin: Fraction | int = 0
    else:
        origin = _to_fraction(start, strings=False)
        if isinstance(origin, str):
            raise InputError(f"{p}start: expected a finite number, got {start!r}")
    leaves = _numeric_leaves(values, p)
    return Hierarchy([list(leaves), *_interval_levels(leaves, ws, origin),
                      [top] * len(leaves)], name=name)


def _interval_widths(widths, p: str) -> list[Fraction]:
    """:func:`interval_hierarchy`'s ``widths`` as exact fractions, each a multiple (at least
    2x) of the previous one."""
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Iterable):
        widths_list = [widths]
    else:
        widths_list = list(widths)
    if not widths_list:
        raise InputError(f"{p}widths: expected at least one interval width, got {widths!r}")
    ws: list[Fraction] = []
    for w in widths_list:
        fw = _to_fraction(w, strings=False)
        if isinstance(fw, str) or fw <= 0:
            raise InputError(f"{p}widths: expected positive finite numbers, got {w!r} "
                             f"in widths={widths!r}")
        ws.append(Fraction(fw))
    for prev, cur in zip(ws, ws[1:]):
        ratio = cur / prev
        if ratio.denominator != 1 or ratio < 2:
            raise InputError(
                f"{p}widths: expected each width to be a multiple (at least 2x) of the previous "
                f"one so that the intervals nest; got {_fmt_number(cur)} after "
                f"{_fmt_number(prev)} in widths={widths!r}")
    return ws


def _numeric_leaves(values, p: str) -> dict[str, Fraction | int]:
    """The distinct ``values`` of :func:`interval_hierarchy` as ``{str(value): exact number}``
    in order of first appearance; non-numeric, NaN, infinite and missing values refused."""
    vals = _as_list(values, "values", p)
    if not vals:
        raise InputError(f"{p}values: expected at least one value, got none")
    leaves: dict[str, Fraction | int] = {}
    nonfinite: list[Any] = []
    bad: list[Any] = []
    rejected: set[str] = set()
    for v in vals:
        leaf = str(v)
        if leaf in leaves or leaf in rejected:
            continue
        x = _to_fraction(v, strings=True)
        if x == "bad" and _is_missing(v):  # None, pd.NA, NaT
            x = "nonfinite"
        if isinstance(x, str):
            rejected.add(leaf)
            (nonfinite if x == "nonfinite" else bad).append(v)
        else:
            leaves[leaf] = x
    if bad:
        raise InputError(
            f"{p}values: expected numbers (int, float or numeric strings); got {len(bad)} "
            f"non-numeric value(s): {format_values(bad)}")
    if nonfinite:
        raise InputError(
            f"{p}values: expected finite numbers; got {len(nonfinite)} NaN, infinite or "
            f"missing value(s): {format_values(nonfinite)}")
    return leaves


def _interval_levels(leaves: dict[str, Fraction | int], ws: list[Fraction],
                     origin: Fraction | int) -> list[list[str]]:
    """The interval labels of ``leaves``, one level per width: level ``L`` labels a leaf
    ``[a, a + w)`` with ``k1 = floor((v - origin) / w1)`` and ``a = origin +
    floor(k1 / (wL / w1)) * wL``."""
    origin = _simplest(origin)
    w1 = ws[0]
    w1_num = _simplest(w1)
    ws = [_simplest(w) for w in ws]  # type: ignore[misc]
    ratios = [int(w / w1) for w in ws]
    k1 = [(x - origin) // w1_num for x in leaves.values()]
    levels: list[list[str]] = []
    for ratio, w in zip(ratios, ws):
        cache: dict[int, str] = {}
        level = []
        for k in k1:
            kl = k // ratio
            label = cache.get(kl)
            if label is None:
                lo = origin + kl * w
                label = cache[kl] = f"[{_fmt_number(lo)}, {_fmt_number(lo + w)})"
            level.append(label)
        levels.append(level)
    return levels


# -- masking ---------------------------------------------------------------------------------
def masking_hierarchy(values: Iterable[Any], *, char: str = "*", direction: str = "right",
                      name: str | None = None) -> Hierarchy:
    """Fixed-length codes masked one more character per level.

    ``47677 -> 4767* -> 476** -> 47*** -> 4**** -> *****``: with codes of length ``n`` the
    hierarchy has height ``n``, and level ``n`` (every character masked) is the single top
    value, so no extra ``*`` level is added.

    Parameters
    ----------
    values : iterable
        The codes; leaves are the distinct ``str(value)`` in order of first appearance. All
        must have the same, non-zero length (pass ZIP codes as strings to keep leading zeros).
        Missing values (None/NaN) are rejected.
    char : str, default "*"
        The single masking character.
    direction : {"right", "left"}, default "right"
        ``"right"`` masks from the end (``4767*``), ``"left"`` from the start (``*7677``).
    name : str, optional
        As in :func:`levels_hierarchy`.

    Returns
    -------
    Hierarchy
        Level ``i`` masks ``i`` characters; the top level masks them all.

    Examples
    --------
    >>> h = masking_hierarchy(["47677", "47602"])
    >>> [h.labels(L).tolist() for L in (1, 3, 5)]
    [['4767*', '4760*'], ['47***'], ['*****']]
    """
    p = _prefix(name)
    if not isinstance(char, str) or len(char) != 1:
        raise InputError(f"{p}char: expected a single character, got {char!r}")
    if direction not in ("right", "left"):
        raise InputError(f"{p}direction: expected 'right' or 'left', got {direction!r}")
    vals = _present_values(values, p, "codes", "None/NaN")
    leaves = list(dict.fromkeys(str(v) for v in vals))
    lengths = Counter(len(s) for s in leaves)
    if len(lengths) > 1:
        top_count = max(lengths.values())
        # the most common length; on a tie, the length of the first code with such a count
        n = next(len(s) for s in leaves if lengths[len(s)] == top_count)
        off = [s for s in leaves if len(s) != n]
        raise InputError(
            f"{p}values: expected codes of one length to mask; {len(off)} of {len(leaves)} "
            f"distinct value(s) differ from the most common length {n}: {format_values(off)}")
    n = len(leaves[0])
    if n == 0:
        raise InputError(f"{p}values: expected non-empty codes, got only empty strings")
    levels = [leaves]
    for j in range(1, n + 1):
        if direction == "right":
            levels.append([s[:n - j] + char * j for s in leaves])
        else:
            levels.append([char * j + s[j:] for s in leaves])
    return Hierarchy(levels, name=name)


# -- dates -----------------------------------------------------------------------------------
def _date_label(granularity: str, y: int, m: int, d: int) -> str:
    if granularity == "day":
        return f"{y:04d}-{m:02d}-{d:02d}"
    if granularity == "month":
        return f"{y:04d}-{m:02d}"
    if granularity == "quarter":
        return f"{y:04d}-Q{(m - 1) // 3 + 1}"
    if granularity == "year":
        return f"{y:04d}"
    if granularity == "decade":
        lo = y // 10 * 10
        return f"{lo:04d}-{lo + 9:04d}"
    lo = y // 100 * 100  # century
    return f"{lo:04d}-{lo + 99:04d}"


def _object_date_leaf(v: Any) -> tuple[str, tuple[int, int, int]] | None:
    """Leaf text and (y, m, d) of a date-like object, or None if ``v`` is not one."""
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if isinstance(v, _dt.datetime):
        ymd = (v.year, v.month, v.day)
        has_time = (v.hour, v.minute, v.second, v.microsecond) != (0, 0, 0, 0) or (
            isinstance(v, pd.Timestamp) and v.nanosecond != 0)
        return (str(v) if has_time else "%04d-%02d-%02d" % ymd), ymd
    if isinstance(v, _dt.date):
        return "%04d-%02d-%02d" % (v.year, v.month, v.day), (v.year, v.month, v.day)
    return None


def date_hierarchy(values: Iterable[Any], *,
                   levels: Sequence[str] | str = ("month", "year", "decade"),
                   format: str | None = None, top: str = "*",
                   name: str | None = None) -> Hierarchy:
    """Dates generalized along the calendar: day -> month -> year -> decade -> ``top``.

    Labels: ``day`` ``'1994-03-17'``, ``month`` ``'1994-03'``, ``quarter`` ``'1994-Q1'``,
    ``year`` ``'1994'``, ``decade`` ``'1990-1999'``, ``century`` ``'1900-1999'``. The top level
    ``top`` is always appended, so the height is ``len(levels) + 1``.

    Parameters
    ----------
    values : iterable
        Date strings (parsed with ``pandas.to_datetime(..., format=format)``) or
        ``datetime.date``/``datetime.datetime``/``pandas.Timestamp``/``numpy.datetime64``
        objects. Leaves are the distinct values in order of first appearance: a string stays
        as it is (so it matches the data column); an object becomes ``'YYYY-MM-DD'``, or
        ``str(value)`` when it has a time of day other than midnight. Unparseable and
        missing values are rejected.
    levels : sequence of str, default ("month", "year", "decade")
        The levels above the leaves, finest first: any subset of ``DATE_GRANULARITIES``
        (``"day"``, ``"month"``, ``"quarter"``, ``"year"``, ``"decade"``, ``"century"``), in
        that order. A single string means one level.
    format : str, optional
        ``strftime`` format of the date strings (e.g. ``"%d/%m/%Y"``), passed to
        ``pandas.to_datetime``; by default pandas infers one format from the first string.
        ``"mixed"`` parses each string on its own.
    top, name : str
        As in :func:`interval_hierarchy`.

    Returns
    -------
    Hierarchy
        The leaves are the dates as given; one level per granularity, then ``top``.

    Examples
    --------
    >>> h = date_hierarchy(["1994-03-17", "1994-04-02", "2001-01-01"])
    >>> [h.labels(L).tolist() for L in range(1, h.height + 1)]
    [['1994-03', '1994-04', '2001-01'], ['1994', '2001'], ['1990-1999', '2000-2009'], ['*']]
    """
    p = _prefix(name)
    top = _check_top(top, p)
    level_list = _date_levels(levels, p)
    if format is not None and not isinstance(format, str):
        raise InputError(f"{p}format: expected a format string or None, got {format!r}")
    parsed = _date_leaves(values, format, p)
    leaves = list(parsed)
    return Hierarchy([leaves, *([_date_label(g, *parsed[leaf]) for leaf in leaves]
                                for g in level_list), [top] * len(leaves)], name=name)


def _date_levels(levels, p: str) -> list[str]:
    """:func:`date_hierarchy`'s ``levels`` as a list of known granularities, finest first."""
    level_list = [levels] if isinstance(levels, str) else list(levels)
    unknown = [g for g in level_list if g not in _DATE_RANK]
    if unknown:
        raise InputError(f"{p}levels: expected granularities among {list(DATE_GRANULARITIES)}, "
                         f"got unknown {format_values(unknown)}")
    ranks = [_DATE_RANK[g] for g in level_list]
    if any(b <= a for a, b in zip(ranks, ranks[1:])):
        raise InputError(
            f"{p}levels: expected distinct granularities from finest to coarsest (in the order "
            f"{', '.join(DATE_GRANULARITIES)}), got {tuple(level_list)!r}")
    return level_list


def _date_leaves(values, format: str | None, p: str) -> dict[str, tuple[int, int, int]]:
    """The distinct ``values`` of :func:`date_hierarchy` as ``{leaf: (year, month, day)}`` in
    order of first appearance (a string stays as it is, an object becomes its date); missing,
    non-date and unparseable values refused."""
    vals = _present_values(values, p, "dates", "None/NaN/NaT")
    parsed: dict[str, tuple[int, int, int]] = {}   # leaf -> (y, m, d), order of appearance
    pending: dict[str, None] = {}                    # strings to parse, in order
    not_dates: list[Any] = []
    order: list[str] = []
    for v in vals:
        if isinstance(v, str):
            if v not in pending and v not in parsed:
                pending[v] = None
                order.append(v)
            continue
        obj = _object_date_leaf(v)
        if obj is None:
            not_dates.append(v)
            continue
        leaf, ymd = obj
        if leaf not in parsed:
            parsed[leaf] = ymd
            order.append(leaf)
    if not_dates:
        raise InputError(
            f"{p}values: expected date strings or date/datetime objects, got "
            f"{len(not_dates)} value(s) of other types: {format_values(not_dates)}")
    strings = [s for s in pending if s not in parsed]
    unparseable: list[str] = []
    for s, ymd in zip(strings, _parse_dates(strings, format)):
        if ymd is None:
            unparseable.append(s)
        else:
            parsed[s] = ymd
    if unparseable:
        how = (f"format={format!r}" if format is not None
               else "format=None: pandas infers one format from the first string")
        raise InputError(
            f"{p}values: expected dates; {len(unparseable)} value(s) could not be parsed "
            f"({how}; pass format=... or format='mixed'): {format_values(unparseable)}")
    return {leaf: parsed[leaf] for leaf in dict.fromkeys(order)}


def _parse_dates(strings: list[str], format: str | None) -> list[tuple[int, int, int] | None]:
    """``(year, month, day)`` of each date string, None where it does not parse."""
    if not strings:
        return []
    try:
        idx = pd.DatetimeIndex(pd.to_datetime(strings, format=format, errors="coerce"))
        return [None if pd.isna(t) else (t.year, t.month, t.day) for t in idx]
    except (ValueError, TypeError, OverflowError):
        results = []  # e.g. mixed time zones: parse one by one to find the culprits
        for s in strings:
            try:
                t = pd.to_datetime(s, format=format)
                results.append(None if pd.isna(t) else (t.year, t.month, t.day))
            except (ValueError, TypeError, OverflowError):
                results.append(None)
        return results
