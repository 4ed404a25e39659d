"""Perturbing a table: the methods of :mod:`gpuppdp.perturb` applied to named columns of a
DataFrame in one run, with a summary of what each did (the CLI's ``gpuppdp perturb``).

Columns not named are released unchanged; a column takes one method at most; rows keep
their order and number.  A microaggregated set of columns is checked by the independent
checker (:func:`gpuppdp.analysis.checker.check`): its released values form classes of at
least ``k`` records.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.checker import check, value_order
from ..backend import get_backend
from ..core.codes import encode_column
from ..errors import InputError
from ..validation import format_values
from .combined import PerturbedAnonymization, anonymize_perturbed
from .draws import random_source
from .measures import perturbation_measures
from .methods import (add_noise, bottom_code, invariant_pram_matrix, permute_within, pram,
                      rank_swap_sources, top_code)
from .microaggregation import VMDAV_GAMMA, microaggregate

__all__ = ["Perturbation", "PerturbedRelease", "numeric_columns"]


@dataclass
class PerturbedRelease:
    """The released table and, per method and column, what was done (``summary()``)."""

    data: pd.DataFrame
    methods: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    measures: dict | None = None

    def summary(self) -> dict:
        return {"records": len(self.data), "methods": self.methods, "measures": self.measures,
                "seconds": self.seconds}


def _numeric(data: pd.DataFrame, column: str, method: str, hint: str = "") -> np.ndarray:
    """The column as float64; text is read as numbers (a CSV's columns are text), and a value
    that is no number is named (with ``hint``, what else the method takes)."""
    values = data[column]
    if pd.api.types.is_bool_dtype(values):
        raise InputError(f"{method} needs a numeric column; {column!r} is boolean")
    if not pd.api.types.is_numeric_dtype(values):
        numbers_ = pd.to_numeric(values, errors="coerce")
        bad = values[numbers_.isna() & values.notna()]
        if len(bad):
            raise InputError(f"{method} needs a numeric column; {column!r} has "
                             f"{format_values(bad.unique()[:5].tolist())} (row {bad.index[0]})"
                             f"{hint}")
        values = numbers_
    if values.isna().any():
        raise InputError(f"{method}: column {column!r} has missing values (row "
                         f"{int(np.flatnonzero(values.isna().to_numpy())[0])}); impute or "
                         "drop them first")
    return values.to_numpy(dtype=np.float64)


def numeric_columns(data: pd.DataFrame, columns, what: str) -> np.ndarray:
    """``columns`` of ``data`` as a float64 (n, d) array (text read as numbers; see
    :func:`_numeric`), ``what`` naming the caller in errors."""
    absent = [c for c in columns if c not in data.columns]
    if absent:
        raise InputError(f"{what}: columns not in the table: {format_values(absent)}")
    return np.column_stack([_numeric(data, c, what) for c in columns])


def _pram_matrix(column: str, labels: list, counts: np.ndarray, given, retain: float):
    if given is None:
        return invariant_pram_matrix(counts, retain), "invariant"
    if not isinstance(given, pd.DataFrame):
        raise InputError(f"the PRAM matrix of {column!r} must be a DataFrame whose index and "
                         "columns are the categories")
    missing = sorted(set(map(str, labels)) - set(map(str, given.index)))
    if missing or set(map(str, given.index)) != set(map(str, given.columns)):
        raise InputError(f"the PRAM matrix of {column!r} must have the same categories as "
                         f"rows and columns, covering the column's ({format_values(missing)} "
                         "missing)" if missing else "rows and columns differ")
    order = [str(v) for v in given.index]
    extra = [v for v in order if v not in set(map(str, labels))]
    labels.extend(extra)  # categories of the matrix absent from the column
    frame = given.copy()
    frame.index, frame.columns = order, [str(c) for c in given.columns]
    return frame.loc[[str(v) for v in labels], [str(v) for v in labels]].to_numpy(float), \
        "given"


class Perturbation:
    """Perturbative masking of a table, one method per named column: :meth:`fit` perturbs a
    table; :meth:`anonymize` perturbs it and then generalizes other quasi-identifiers in the
    same run.

    Parameters
    ----------
    microaggregate : list of (columns, k)
        Microaggregation of each set of numeric or ordinal columns, groups of at least ``k``
        records (:func:`.microaggregate`), with ``microaggregate_method`` ("mdav", "vmdav"
        or "optimal"), ``gamma`` (V-MDAV), ``partition_rows`` and ``aggregate``.  An ordinal
        column -- an ordered pandas Categorical, or a column given an ``order`` -- is
        aggregated on its ranks and released as the group's lower median category.
    order : {column: list of values or "lexical"}
        The order of a microaggregated column's values, making it ordinal
        (:func:`gpuppdp.analysis.checker.value_order`).
    swap : {column: p}
        Rank swapping within ``p`` % of the rank range (:func:`.rank_swap`).
    noise : {column or tuple of columns: percent}
        Noise of ``percent`` % of the variance (``noise_method`` "additive" or "correlated";
        a tuple of columns gets correlated noise together).
    pram : {column: DataFrame or None}
        PRAM with the given transition matrix (rows: from, columns: to) or, for ``None``, the
        invariant matrix that keeps a value with probability ``pram_retain``.
    top_code, bottom_code : {column: value}
    permute : {column: list of columns}
        The column's values shuffled within the groups of the listed columns.
    seed : int, optional
        Reproducible draws (tests, experiments); by default keyed from the OS.
    backend : "auto", "cpu" or "gpu"
    measures : bool, default True
        Measure the numeric columns changed (microaggregated, swapped, noised, coded)
        against the original ones (:func:`.perturbation_measures`: information loss,
        propensity score, record linkage, interval disclosure); each such method's summary
        gets the ``il1s`` of its own columns.
    """

    def __init__(self, *, microaggregate: Sequence[tuple[Sequence[str], int]] = (),
                 swap: Mapping[str, float] | None = None,
                 noise: Mapping[Any, float] | None = None, noise_method: str = "additive",
                 pram: Mapping[str, Any] | None = None, pram_retain: float = 0.8,
                 top_code: Mapping[str, float] | None = None,
                 bottom_code: Mapping[str, float] | None = None,
                 permute: Mapping[str, Sequence[str]] | None = None,
                 partition_rows: int | None = None, aggregate: str = "mean",
                 microaggregate_method: str = "mdav", gamma: float | None = None,
                 order: Mapping[str, Any] | None = None,
                 seed: int | None = None, backend="auto", measures: bool = True):
        self.microaggregate = [(list(cols), k) for cols, k in microaggregate]
        self.microaggregate_method, self.gamma = microaggregate_method, gamma
        self.order = dict(order or {})
        self.swap = dict(swap or {})
        self.noise = {((c,) if isinstance(c, str) else tuple(c)): v
                      for c, v in (noise or {}).items()}
        self.noise_method = noise_method
        self.pram = dict(pram or {})
        self.pram_retain = pram_retain
        self.top_code, self.bottom_code = dict(top_code or {}), dict(bottom_code or {})
        self.permute = {c: list(by) for c, by in (permute or {}).items()}
        self.partition_rows, self.aggregate = partition_rows, aggregate
        self.seed, self.backend, self.measures = seed, backend, measures
        if not any((self.microaggregate, self.swap, self.noise, self.pram, self.top_code,
                    self.bottom_code, self.permute)):
            raise InputError("no perturbation asked for: name columns for at least one method")

    def _targets(self) -> list[tuple[str, str]]:
        """(method, column) of every column a method changes; each column once."""
        named = [("microaggregate", c) for cols, _ in self.microaggregate for c in cols]
        named += [("swap", c) for c in self.swap] + [("pram", c) for c in self.pram]
        named += [("noise", c) for cols in self.noise for c in cols]
        named += [("top_code", c) for c in self.top_code]
        named += [("bottom_code", c) for c in self.bottom_code]
        named += [("permute", c) for c in self.permute]
        seen: dict[str, str] = {}
        for method, column in named:
            if column in seen:
                raise InputError(f"column {column!r} is named by {seen[column]} and {method}: "
                                 "one method per column")
            seen[column] = method
        stray = [c for c in self.order if seen.get(c) != "microaggregate"]
        if stray:
            raise InputError(f"order is for microaggregated columns; {format_values(stray)} "
                             "is not microaggregated")
        return named

    def fit(self, data: pd.DataFrame) -> PerturbedRelease:
        """The perturbed copy of ``data`` and the summary of each method."""
        t0 = time.perf_counter()
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        wanted = {c for _, c in self._targets()} | {c for by in self.permute.values()
                                                       for c in by}
        absent = sorted(wanted - set(data.columns))
        if absent:
            raise InputError(f"columns not in the table: {format_values(absent)}")
        be = get_backend(self.backend)
        source = random_source(be, self.seed)
        out = data.copy()
        methods: list[dict] = []
        for cols, k in self.microaggregate:
            methods.append(self._microaggregate(be, data, out, cols, k))
        for column, p in self.swap.items():  # the records' own values, moved
            methods.append(self._timed("swap", [column], {"p": p}, lambda c=column, p=p: (
                data[c].to_numpy()[be.to_host(rank_swap_sources(
                    be.asarray(_numeric(data, c, "swap")), p, source=source))]), out))
        for noised, percent in self.noise.items():
            x = numeric_columns(data, noised, "noise")
            methods.append(self._timed("noise", list(noised), {
                "percent_of_variance": percent, "noise_method": self.noise_method},
                lambda x=x, percent=percent: be.to_host(add_noise(
                    be.asarray(x), percent, method=self.noise_method, source=source)), out))
        for column, given in self.pram.items():
            methods.append(self._pram(be, data, out, column, given, source))
        for option, coder in (("top_code", top_code), ("bottom_code", bottom_code)):
            for column, value in getattr(self, option).items():
                values = _numeric(data, column, option)
                methods.append(self._timed(option, [column], {
                    "value": value, "replaced": int(np.sum(values > value if option ==
                                                           "top_code" else values < value))},
                    lambda v=values, coder=coder, value=value: coder(v, value), out))
        for column, by in self.permute.items():
            groups = data.groupby(by, sort=False, dropna=False).ngroup().to_numpy(np.int64)
            methods.append(self._timed("permute", [column], {
                "by": by, "groups": int(groups.max()) + 1 if len(groups) else 0},
                lambda c=column, g=groups: self._permuted(be, data, c, g, source), out))
        numeric = [c for m in methods if m["method"] not in ("pram", "permute")
                   for c in m["columns"] if c not in m.get("ordinal", ())]
        measured = None
        if self.measures and numeric:
            measured = perturbation_measures(
                be.asarray(numeric_columns(data, numeric, "measures")),
                be.asarray(numeric_columns(out, numeric, "measures")),
                backend=be)
            measured["columns"] = numeric
            per_column = dict(zip(numeric, measured["utility"]["il1s_per_column"]))
            for m in methods:  # each method's IL1s: the mean over its own columns
                if m["columns"][0] in per_column:
                    m["il1s"] = float(np.mean([per_column[c] for c in m["columns"]]))
        return PerturbedRelease(out, methods, time.perf_counter() - t0, measured)

    def anonymize(self, data: pd.DataFrame, anonymizer,
                  progress=None) -> PerturbedAnonymization:
        """Perturbation and generalization in one run: ``data`` perturbed (:meth:`fit`),
        then the optimal full-domain generalization of ``anonymizer``'s quasi-identifiers
        (an :class:`~gpuppdp.Anonymizer`: its models, suppression limit, metric, search) over
        the perturbed table, the microaggregated columns taking part in the classes as
        quasi-identifiers that are never generalized (a microaggregated column has no role
        in ``anonymizer``; a perturbed one is not identifying; the other perturbed columns
        it gives no role are insensitive).  The release is checked over all QIDs by the
        independent checker (``checked``); see :mod:`gpuppdp.perturb.combined`."""
        return anonymize_perturbed(self, data, anonymizer, progress=progress)

    @staticmethod
    def _timed(method: str, columns: list, info: dict, run, out: pd.DataFrame) -> dict:
        """Run ``run`` (the new values of ``columns``, (n,) or (n, d)) into ``out``; methods
        that only move values (swapping, permutation) keep the column's dtype."""
        t0 = time.perf_counter()
        released = np.asarray(run()).reshape(len(out), -1)
        for j, c in enumerate(columns):
            column = pd.Series(released[:, j], index=out.index)
            out[c] = column.astype(out[c].dtype) if method in ("swap", "permute") else column
        return {"method": method, "columns": columns, **info,
                "seconds": time.perf_counter() - t0}

    def _ranks(self, data: pd.DataFrame, column: str):
        """An ordinal column's ranks (float64) and its values by rank, or None for a
        numeric column."""
        values = data[column]
        categorical = isinstance(values.dtype, pd.CategoricalDtype) and values.cat.ordered
        if not categorical and column not in self.order:
            return None
        if values.isna().any():
            raise InputError(f"microaggregate: column {column!r} has missing values (row "
                             f"{int(np.flatnonzero(values.isna().to_numpy())[0])}); impute or "
                             "drop them first")
        if categorical:
            return values.cat.codes.to_numpy(np.float64), values.cat.categories
        levels = value_order(values.unique(), self.order[column],
                             attribute=f"microaggregate column {column!r}")
        if levels is None:  # "numeric": the values themselves
            return None
        if len(set(levels)) != len(levels):
            raise InputError(f"microaggregate: the order of {column!r} lists a value twice")
        text = values.astype(str)
        unknown = sorted(set(text) - set(levels))
        if unknown:
            raise InputError(f"microaggregate: the order of {column!r} misses its values "
                             f"{format_values(unknown[:5])}")
        codes = pd.Categorical(text, categories=levels).codes
        ranks = np.empty(len(levels), dtype=object)
        ranks[codes] = values.to_numpy(dtype=object)  # each rank's value as the table has it
        return codes.astype(np.float64), ranks

    def _microaggregate(self, be, data, out, cols, k) -> dict:
        absent = [c for c in cols if c not in data.columns]
        if absent:
            raise InputError(f"microaggregate: columns not in the table: "
                             f"{format_values(absent)}")
        ranked = {c: self._ranks(data, c) for c in cols}
        hint = ("; an ordinal column is an ordered pandas Categorical or is given its order "
                "(order={column: [values in order]}, --order COLUMN=V1,V2,...)")
        x = np.column_stack([r[0] if r is not None else _numeric(data, c, "microaggregate",
                                                                 hint)
                             for c, r in ranked.items()])
        ordinal = [j for j, c in enumerate(cols) if ranked[c] is not None]
        result = microaggregate(be.asarray(x), k, method=self.microaggregate_method,
                                gamma=self.gamma, partition_rows=self.partition_rows,
                                aggregate=self.aggregate, ordinal=ordinal, backend=be)
        released = be.to_host(result.values).reshape(len(data), -1)
        for j, c in enumerate(cols):
            if ranked[c] is None:
                out[c] = released[:, j]
                continue
            codes = released[:, j].astype(np.int64)
            levels = ranked[c][1]
            out[c] = pd.Categorical.from_codes(codes, dtype=data[c].dtype) if isinstance(
                data[c].dtype, pd.CategoricalDtype) else pd.Series(
                    levels[codes], index=out.index).astype(data[c].dtype)
        verified = check(out, quasi_identifiers=cols, backend="cpu")["k"]
        info = result.summary()
        info["algorithm"] = info.pop("method")
        if self.microaggregate_method == "vmdav":
            info["gamma"] = VMDAV_GAMMA if self.gamma is None else self.gamma
        return {"method": "microaggregate", "columns": cols, "k": k,
                "ordinal": [cols[j] for j in ordinal], **info, "checked_k": verified}

    def _pram(self, be, data, out, column, given, source) -> dict:
        t0 = time.perf_counter()
        values = data[column]
        if values.isna().any():
            raise InputError(f"pram: column {column!r} has missing values")
        retain = self.pram_retain
        if isinstance(retain, bool) or not isinstance(retain, numbers.Real):
            raise InputError(f"pram_retain must be a number in (0, 1], got {retain!r}")
        codes, uniques = encode_column(values, sort=True)
        labels = list(uniques)
        counts = np.bincount(codes, minlength=len(labels)).astype(float)
        matrix, kind = _pram_matrix(column, labels, counts, given, retain)
        new = be.to_host(pram(be.asarray(codes.astype(np.int64)), matrix, source=source))
        released = pd.Series(np.array(labels, dtype=object)[new], index=data.index)
        out[column] = released.astype(values.dtype) if len(labels) == len(uniques) else released
        return {"method": "pram", "columns": [column], "matrix": kind,
                "retain": retain if kind == "invariant" else None, "categories": len(labels),
                "changed": float(np.mean(new != codes)), "seconds": time.perf_counter() - t0}

    @staticmethod
    def _permuted(be, data: pd.DataFrame, column: str, groups: np.ndarray,
                  source) -> np.ndarray:
        values: pd.Series = data[column]
        codes, uniques = encode_column(values)
        moved = be.to_host(permute_within(be.asarray(codes.astype(np.int64)),
                                          be.asarray(groups), source=source))
        return np.asarray(uniques, dtype=object)[moved] if values.dtype == object else \
            np.asarray(uniques)[moved]
