"""Differentially private releases built on the engine's encoding.

Columns are encoded the way the engine encodes quasi-identifiers: hierarchy leaf codes, then
one gather per column to the requested generalization level
(``Hierarchy.codes(level)[leaf_codes]``); the cell of a row is the mixed-radix combination of
its codes, and counts/sums per cell are one ``xp.bincount`` on the device.  Only the noisy
table (one value per cell) comes back to the host, as a :class:`pandas.DataFrame` with the
labels.  What was spent and how noisy the result is are recorded in
``result.attrs["dp"]``.

The cells of a table are *every* combination of the columns' labels at the chosen levels,
including empty ones: publishing only the non-empty cells would reveal which combinations
occur.  The labels come from the hierarchies, which are public; a column given without a
hierarchy is dictionary-encoded from the data, and a :class:`DataDomainWarning` says that
its set of values is then not protected.

Post-processing (rounding, clamping at 0, dividing a noisy sum by a noisy count) uses only
the noisy values and public parameters, so it keeps the guarantee (Dwork & Roth 2014,
Proposition 2.1).

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014: Proposition 2.1 (post-processing),
   Example 3.2 (histogram queries), Theorem 3.14 (composition).
.. [2] F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition over
   disjoint cells).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..hierarchy import Hierarchy, format_values
from ..validation import check_epsilon, check_probability
from .accountant import BudgetAccountant
from .mechanisms import GeometricMechanism, LaplaceMechanism
from .randomness import RandomSource, default_source
from .sensitivity import Neighbouring, grouped_sum_sensitivity, histogram_sensitivity

__all__ = ["DataDomainWarning", "dp_histogram", "dp_class_counts", "dp_group_stats",
           "MECHANISMS", "DEFAULT_MAX_CELLS"]

MECHANISMS = ("geometric", "laplace")
DEFAULT_MAX_CELLS = 10**7
_MAX_KEY = 2**62  # mixed-radix cell keys are int64


class DataDomainWarning(UserWarning):
    """A column's set of values was read from the data, so its presence is not protected."""


@dataclass
class _Cells:
    """Rows mapped to cells of a table (device keys) plus each column's labels (host)."""

    columns: list[str]
    labels: list[np.ndarray]
    key: object  # int64 array on the backend, one cell index per row
    from_data: list[str]  # columns whose labels were read from the data (no hierarchy)

    @property
    def radices(self) -> tuple[int, ...]:
        return tuple(len(lab) for lab in self.labels)

    def frame(self, cells: np.ndarray) -> pd.DataFrame:
        """The label columns of the given cell indices (host)."""
        digits = np.unravel_index(cells, self.radices)
        return pd.DataFrame({col: lab[d] for col, lab, d in
                             zip(self.columns, self.labels, digits)})


def _columns(data, by) -> list[str]:
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    cols = [by] if isinstance(by, str) else list(by)
    if not cols:
        raise ValueError("by must name at least one column")
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise ValueError(f"column(s) {format_values(missing)} not in the data; columns are "
                         f"{format_values(list(data.columns), first=10)}")
    if len(set(cols)) != len(cols):
        raise ValueError(f"by names a column twice: {cols}")
    return cols


def _encode(data: pd.DataFrame, cols: list[str], hierarchies, levels, source: RandomSource,
            max_cells: int, *, public_values: bool = False) -> _Cells:
    """Cell keys on the device: gather each column to its level, combine mixed-radix.

    ``public_values``: the columns' values are already published (a released table), so
    reading them from the data warrants no :class:`DataDomainWarning`.
    """
    hierarchies = dict(hierarchies or {})
    levels = dict(levels or {})
    for name, h in hierarchies.items():
        if not isinstance(h, Hierarchy):
            raise ValueError(f"hierarchies[{name!r}] must be a Hierarchy, got {type(h).__name__}")
    unknown = [c for c in levels if c not in cols]
    if unknown:
        raise ValueError(f"levels given for {format_values(unknown)}, which are not among the "
                         f"grouping columns {cols}")
    backend = source.backend
    labels, codes, from_data = [], [], []
    for col in cols:
        level = levels.get(col, 0)
        h = hierarchies.get(col)
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
            raise ValueError(f"level of {col!r} must be an integer, got {level!r}")
        if h is None:
            if level != 0:
                raise ValueError(f"level {level} of {col!r} needs a hierarchy for {col!r}")
            values = data[col]
            if values.isna().any():
                raise ValueError(f"column {col!r} has {int(values.isna().sum())} missing "
                                 "value(s); fill or drop them first")
            try:
                col_codes, col_labels = pd.factorize(values, sort=True)
            except TypeError:  # mixed types do not sort: compare as strings
                col_codes, col_labels = pd.factorize(values.astype(str), sort=True)
            codes.append(backend.asarray(col_codes.astype(np.int64)))
            labels.append(np.asarray(col_labels, dtype=object))
            from_data.append(col)
        else:
            if not 0 <= level <= h.height:
                raise ValueError(f"level of {col!r} must be in 0..{h.height} (its hierarchy's "
                                 f"height), got {level}")
            leaf = backend.asarray(h.leaf_codes(data[col].to_numpy(), attribute=col))
            codes.append(backend.asarray(h.codes(level).astype(np.int64))[leaf])
            labels.append(h.labels(level))
    cells = math.prod(len(lab) for lab in labels)
    if cells > min(max_cells, _MAX_KEY):
        raise ValueError(
            f"the table over {cols} has {cells} cells, more than "
            f"{'max_cells=' + str(max_cells) if max_cells < _MAX_KEY else 'a 63-bit key holds'};"
            " generalize some columns (higher levels) or raise max_cells")
    if from_data and not public_values:
        warnings.warn(
            f"the values of column(s) {format_values(from_data)} are taken from the data: "
            "which values occur is NOT protected by differential privacy; pass a hierarchy "
            "(e.g. Hierarchy.flat(public_domain)) to fix the domain in advance",
            DataDomainWarning, stacklevel=3)
    key = backend.asarray(np.zeros(len(data), dtype=np.int64))
    for col_codes, col_labels in zip(codes, labels):
        key *= len(col_labels)
        key += col_codes
    return _Cells(cols, labels, key, from_data)


def _mechanism(name: str, epsilon: float, sensitivity: float):
    if name == "geometric":
        return GeometricMechanism(epsilon=epsilon, sensitivity=sensitivity)
    if name == "laplace":
        return LaplaceMechanism(epsilon=epsilon, sensitivity=sensitivity)
    raise ValueError(f"mechanism must be one of {MECHANISMS}, got {name!r}")


def _noisy_counts(counts, mech, source: RandomSource, *, clamp: bool, rounding: bool):
    """Noisy counts (host) and the post-processing applied, from exact device counts."""
    xp = source.backend.xp
    post = []
    if isinstance(mech, GeometricMechanism):
        noisy = mech.release(counts, random=source)
    else:
        noisy = mech.release(counts.astype(xp.float64), random=source)
        if rounding:
            noisy = xp.rint(noisy).astype(xp.int64)
            post.append("rounded to integers")
    if clamp:
        noisy = xp.maximum(noisy, 0)
        post.append("clamped at 0")
    return source.backend.to_host(noisy), post


def _spend(accountant: BudgetAccountant | None, epsilon: float, label: str) -> None:
    if accountant is not None:
        if not isinstance(accountant, BudgetAccountant):
            raise ValueError(f"accountant must be a BudgetAccountant, got "
                             f"{type(accountant).__name__}")
        accountant.spend(epsilon, label=label)


def _record(frame: pd.DataFrame, *, epsilon, neighbouring, queries, post, source, cells,
            from_data) -> pd.DataFrame:
    frame.attrs["dp"] = {
        "epsilon": epsilon,
        "neighbouring": neighbouring.value,
        "queries": queries,
        "post_processing": post,
        "cells": cells,
        "domain_from_data": from_data,
        "seeded": source.seeded,
        "backend": source.backend.name,
    }
    return frame


def _check_max_cells(max_cells) -> int:
    if isinstance(max_cells, bool) or not isinstance(max_cells, (int, np.integer)) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {max_cells!r}")
    return int(max_cells)


def dp_histogram(data: pd.DataFrame, by: str | Sequence[str], *, epsilon: float,
                 hierarchies: Mapping[str, Hierarchy] | None = None,
                 levels: Mapping[str, int] | None = None,
                 mechanism: str = "geometric",
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                 clamp: bool = True, rounding: bool = True,
                 max_cells: int = DEFAULT_MAX_CELLS,
                 random: RandomSource | None = None,
                 accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """A noisy contingency table: counts over any subset of columns, at any level.

    Parameters
    ----------
    data : DataFrame
        One row per person: the unit of privacy.  (If a person can own ``m`` rows, the
        histogram sensitivity is ``m`` times larger: divide ``epsilon`` by ``m``.)
    by : str or sequence of str
        Grouping columns (typically quasi-identifiers).
    epsilon : float
        Privacy parameter of the whole table (parallel composition over its disjoint cells).
    hierarchies : mapping column -> Hierarchy, optional
        Fix each column's domain and allow generalization; extra entries are ignored.
    levels : mapping column -> int, optional
        Generalization level per column (0 = original values, the default).
    mechanism : {"geometric", "laplace"}
        Integer two-sided geometric noise (default) or grid Laplace noise.
    neighbouring : {"add-remove", "replace"}
        Sets the histogram sensitivity: 1 or 2.
    clamp : bool, default True
        Post-process: negative counts become 0.
    rounding : bool, default True
        Post-process Laplace counts to integers (geometric counts already are).
    max_cells : int
        Refuse tables with more cells than this (every cell is released).
    random : RandomSource, optional
        Backend and randomness; default :func:`default_source` (OS entropy).
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` before any noise is drawn.

    Returns
    -------
    DataFrame
        One row per cell (all label combinations, row-major in label order) with the ``by``
        columns and ``count``; ``attrs["dp"]`` records ε, the mechanism, its scale and
        expected absolute error per cell, the post-processing.

    References
    ----------
    .. [1] Dwork and Roth 2014, Example 3.2 (histogram queries have sensitivity 1).
    .. [2] Ghosh, Roughgarden and Sundararajan, STOC 2009 (geometric mechanism).

    Examples
    --------
    >>> import pandas as pd
    >>> from gpuppdp.dp import RandomSource
    >>> h = Hierarchy([["f", "m"], ["*", "*"]], name="sex")
    >>> df = pd.DataFrame({"sex": ["f", "m", "m"]})
    >>> table = dp_histogram(df, "sex", epsilon=1.0, hierarchies={"sex": h},
    ...                      random=RandomSource("cpu"))
    >>> table["sex"].tolist(), table.attrs["dp"]["epsilon"]
    (['f', 'm'], 1.0)
    """
    epsilon = check_epsilon(epsilon)
    neighbouring = Neighbouring.parse(neighbouring)
    mech = _mechanism(mechanism, epsilon, histogram_sensitivity(neighbouring=neighbouring))
    cols = _columns(data, by)
    source = random if random is not None else default_source()
    cells = _encode(data, cols, hierarchies, levels, source, _check_max_cells(max_cells))
    xp = source.backend.xp
    n_cells = math.prod(cells.radices)
    counts = xp.bincount(cells.key, minlength=n_cells).astype(xp.int64)
    _spend(accountant, epsilon, f"dp_histogram by {cols}")
    noisy, post = _noisy_counts(counts, mech, source, clamp=clamp, rounding=rounding)
    frame = cells.frame(np.arange(n_cells))
    frame["count"] = noisy
    return _record(frame, epsilon=epsilon, neighbouring=neighbouring,
                   queries={"count": mech.info()}, post=post, source=source, cells=n_cells,
                   from_data=cells.from_data)


def dp_class_counts(released: pd.DataFrame, qids: Sequence[str], *, epsilon: float,
                    mechanism: str = "geometric",
                    neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                    clamp: bool = True, rounding: bool = True,
                    random: RandomSource | None = None,
                    accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """Noisy size of every equivalence class of a released (generalized) table.

    The classes are the distinct combinations of ``qids`` values in ``released`` -- a table
    that is already published, so the list of classes is public; the guarantee covers the
    counts given that list (each row is in exactly one class: parallel composition,
    histogram sensitivity).  Use :func:`dp_histogram` with hierarchies and levels when the
    class list itself must not depend on the data.

    Parameters
    ----------
    released : DataFrame
        The released table (generalized values, suppressed cells included as they appear).
    qids : sequence of str
        Its quasi-identifier columns.
    epsilon, mechanism, neighbouring, clamp, rounding, random, accountant
        As in :func:`dp_histogram`.

    Returns
    -------
    DataFrame
        One row per class (sorted by the classes' label codes) with the ``qids`` columns and
        ``count``; ``attrs["dp"]`` as in :func:`dp_histogram`.
    """
    epsilon = check_epsilon(epsilon)
    neighbouring = Neighbouring.parse(neighbouring)
    mech = _mechanism(mechanism, epsilon, histogram_sensitivity(neighbouring=neighbouring))
    cols = _columns(released, qids)
    source = random if random is not None else default_source()
    cells = _encode(released, cols, None, None, source, _MAX_KEY, public_values=True)
    xp = source.backend.xp
    classes, inverse = xp.unique(cells.key, return_inverse=True)
    counts = xp.bincount(inverse.reshape(-1), minlength=classes.shape[0]).astype(xp.int64)
    _spend(accountant, epsilon, f"dp_class_counts over {cols}")
    noisy, post = _noisy_counts(counts, mech, source, clamp=clamp, rounding=rounding)
    frame = cells.frame(source.backend.to_host(classes))
    frame["count"] = noisy
    return _record(frame, epsilon=epsilon, neighbouring=neighbouring,
                   queries={"count": mech.info()}, post=post, source=source,
                   cells=len(frame), from_data=[])


def dp_group_stats(data: pd.DataFrame, by: str | Sequence[str], value: str, *,
                   epsilon: float, lower: float, upper: float, statistic: str = "mean",
                   count_share: float = 0.5,
                   hierarchies: Mapping[str, Hierarchy] | None = None,
                   levels: Mapping[str, int] | None = None,
                   neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                   max_cells: int = DEFAULT_MAX_CELLS,
                   random: RandomSource | None = None,
                   accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """Noisy sum or mean of a numeric attribute per group (every cell of the table).

    Values are clipped to ``[lower, upper]`` (declared bounds, public), which bounds the
    sensitivity (:func:`~gpuppdp.dp.sensitivity.grouped_sum_sensitivity`).  A sum gets grid
    Laplace noise.  A mean is post-processed from a noisy count (geometric, ``count_share·ε``)
    and a noisy sum (Laplace, the rest of ε): ``clip(sum / max(count, 1), lower, upper)``;
    the two compose sequentially to ``ε``.

    Parameters
    ----------
    data, by, hierarchies, levels, neighbouring, max_cells, random, accountant
        As in :func:`dp_histogram`.
    value : str
        The numeric column (no missing values).
    epsilon : float
        Total privacy parameter.
    lower, upper : float
        Clipping bounds, declared in advance (never computed from the data).
    statistic : {"mean", "sum"}
    count_share : float, default 0.5
        Fraction of ε spent on the counts of a mean, in (0, 1).

    Returns
    -------
    DataFrame
        The ``by`` columns and ``sum`` (statistic "sum") or ``count``, ``sum``, ``mean``
        (statistic "mean"); ``attrs["dp"]`` records ε and each query's mechanism and error.

    References
    ----------
    .. [1] Dwork and Roth 2014, Theorem 3.14 and Proposition 2.1.
    """
    epsilon = check_epsilon(epsilon)
    neighbouring = Neighbouring.parse(neighbouring)
    if statistic not in ("mean", "sum"):
        raise ValueError(f"statistic must be 'mean' or 'sum', got {statistic!r}")
    sum_sens = grouped_sum_sensitivity(lower=lower, upper=upper, neighbouring=neighbouring)
    if sum_sens == 0:
        raise ValueError("lower and upper are both 0: the sum is constant, nothing to release")
    if statistic == "mean":
        share = check_probability(count_share, "count_share", low=0.0, high=1.0)
        count_mech = GeometricMechanism(
            epsilon=share * epsilon, sensitivity=histogram_sensitivity(neighbouring=neighbouring))
        sum_mech = LaplaceMechanism(epsilon=(1.0 - share) * epsilon, sensitivity=sum_sens)
    else:
        sum_mech = LaplaceMechanism(epsilon=epsilon, sensitivity=sum_sens)
    cols = _columns(data, by)
    if value not in data.columns:
        raise ValueError(f"value column {value!r} not in the data")
    try:
        values = pd.to_numeric(data[value], errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"value column {value!r} must be numeric: {exc}") from None
    if np.isnan(values).any():
        raise ValueError(f"value column {value!r} has {int(np.isnan(values).sum())} missing "
                         "value(s); fill or drop them first")
    source = random if random is not None else default_source()
    cells = _encode(data, cols, hierarchies, levels, source, _check_max_cells(max_cells))
    backend, xp = source.backend, source.backend.xp
    n_cells = math.prod(cells.radices)
    clipped = xp.clip(backend.asarray(values), float(lower), float(upper))
    sums = xp.bincount(cells.key, weights=clipped, minlength=n_cells)
    _spend(accountant, epsilon, f"dp_group_stats {statistic} of {value!r} by {cols}")
    noisy_sum = sum_mech.release(sums, random=source)
    frame = cells.frame(np.arange(n_cells))
    if statistic == "sum":
        frame["sum"] = backend.to_host(noisy_sum)
        queries, post = {"sum": sum_mech.info()}, []
    else:
        counts = xp.bincount(cells.key, minlength=n_cells).astype(xp.int64)
        noisy_count = xp.maximum(count_mech.release(counts, random=source), 0)
        mean = xp.clip(noisy_sum / xp.maximum(noisy_count, 1), float(lower), float(upper))
        frame["count"] = backend.to_host(noisy_count)
        frame["sum"] = backend.to_host(noisy_sum)
        frame["mean"] = backend.to_host(mean)
        queries = {"count": count_mech.info(), "sum": sum_mech.info()}
        post = ["count clamped at 0", "mean = clip(sum / max(count, 1), lower, upper)"]
    return _record(frame, epsilon=epsilon, neighbouring=neighbouring, queries=queries,
                   post=post, source=source, cells=n_cells,
                   from_data=cells.from_data)
