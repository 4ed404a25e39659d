"""The cells of a differentially private release's table, from its grouping columns' public
domains (:mod:`gpuppdp.dp.releases` explains the rules: the domain must be public, values
outside it are refused, counted in an ``"(other)"`` cell or dropped; persons with several
rows keep at most ``M`` of them).

* :func:`_encode` -- each column's codes in its public domain (a hierarchy's level, a list of
  values, or values declared public), combined mixed-radix into one cell key per row on the
  device (:class:`_Cells`);
* :func:`_bound_persons` -- the per-person contribution bound (``M`` rows per person, chosen
  with the CSPRNG);
* :class:`DataDomainError`, :class:`OutOfDomainError` -- the refusals (documented, and
  imported by users, from :mod:`gpuppdp.dp.releases`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..backend import Array
from ..core.codes import encode_column
from ..errors import InputError
from ..hierarchy import Hierarchy
from ..validation import check_int, format_values
from .randomness import RandomSource

UNKNOWN_CHOICES = ("error", "other", "drop")
OTHER = "(other)"  # the label of the cell of out-of-domain values (unknown="other")
_MAX_KEY = 2**62  # mixed-radix cell keys are int64


class DataDomainError(InputError):
    """A grouping column's set of values would be read from the data (not protected);
    ``columns`` names them."""

    def __init__(self, message: str, columns: Sequence[str] = ()):
        super().__init__(message)
        self.columns = list(columns)


class OutOfDomainError(InputError):
    """A column holds values outside its public domain (the message names none of them)."""


@dataclass
class _Cells:
    """Rows mapped to cells of a table (device keys) plus each column's labels (host)."""

    columns: list[str]
    labels: list[np.ndarray]
    key: Array  # int64 array on the backend, one cell index per (kept) row
    from_data: list[str]  # columns whose labels were read from the data (declared public)
    # unknown="error", deferred: columns to refuse after the charge
    out_of_domain: list | None = None
    kept: np.ndarray | None = None  # deferred: host mask of the rows the keys are of (None: all)

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
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    cols = [by] if isinstance(by, str) else list(by)
    if not cols:
        raise InputError("by must name at least one column")
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise InputError(f"column(s) {format_values(missing)} not in the data; columns are "
                         f"{format_values(list(data.columns), first=10)}")
    if len(set(cols)) != len(cols):
        raise InputError(f"by names a column twice: {cols}")
    return cols


def _public_columns(public_domain, cols: list[str]) -> set[str]:
    """The columns whose data-derived set of values the caller declares public."""
    if public_domain is True:
        return set(cols)
    if public_domain is False or public_domain is None:
        return set()
    names = [public_domain] if isinstance(public_domain, str) else list(public_domain)
    stray = [c for c in names if c not in cols]
    if stray:
        raise InputError(f"public_domain names {format_values(stray)}, which are not among the "
                         f"grouping columns {cols}")
    return set(names)


def _match(values: pd.Series, labels: Sequence | np.ndarray) -> np.ndarray:
    """Index of each value in ``labels`` (compared as strings, as hierarchies compare), -1
    where absent (missing values included)."""
    return encode_column(values, domain=labels, unknown="missing")[0].astype(np.int64)


def _domain_list(col: str, values) -> np.ndarray:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputError(f"domains[{col!r}] must be a list of values, got {values!r}")
    labels = np.asarray(list(values), dtype=object)
    if len(labels) == 0:
        raise InputError(f"domains[{col!r}] is empty")
    as_text = [str(v) for v in labels]
    if len(set(as_text)) != len(as_text):
        raise InputError(f"domains[{col!r}] lists a value twice")
    return labels


def _check_source(source: RandomSource) -> None:
    """A seeded source is refused for a release unless created with ``insecure=True``."""
    if not isinstance(source, RandomSource):
        raise InputError(f"random must be a RandomSource, got {type(source).__name__}")
    if source.seeded and not getattr(source, "insecure", False):
        raise InputError(
            "a seeded RandomSource is not private (anyone who knows the seed recovers the "
            "true counts exactly); a release accepts it only when created with "
            "RandomSource(..., seed=N, insecure=True) (--insecure-seed on the command line)")


def _column_codes(col: str, values: pd.Series, h, level, domains: dict, public: set,
                  values_are: str, deferred: bool = False):
    """``(codes, labels, from_data)`` of one column; None when it has no public domain."""
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise InputError(f"level of {col!r} must be an integer, got {level!r}")
    if h is not None and col in domains:
        raise InputError(f"give either a hierarchy or a domain for {col!r}, not both")
    if h is None and level != 0:
        raise InputError(f"level {level} of {col!r} needs a hierarchy for {col!r}")
    if h is not None:
        if not 0 <= level <= h.height:
            raise InputError(f"level of {col!r} must be in 0..{h.height} (its hierarchy's "
                             f"height), got {level}")
        col_labels = np.asarray(h.labels(level), dtype=object)
        if values_are == "leaves":
            leaf = _match(values, h.leaves)
            col_codes = np.where(leaf >= 0, h.codes(level).astype(np.int64)[leaf], -1)
        else:
            col_codes = _match(values, col_labels)
        return col_codes, col_labels, False
    if col in domains:
        col_labels = _domain_list(col, domains[col])
        return _match(values, col_labels), col_labels, False
    if col not in public:
        return None
    missing = values.isna().to_numpy()
    if missing.any() and not deferred:
        raise InputError(f"column {col!r} has missing values; fill or drop them first")
    present = values[~missing]  # deferred: missing values are out of the domain (code -1)
    try:
        codes, col_labels = encode_column(present, sort=True)
    except TypeError:  # mixed types do not sort: compare as strings
        codes, col_labels = encode_column(present.astype(str), sort=True)
    col_codes = np.full(len(values), -1, dtype=np.int64)
    col_codes[~missing] = codes
    return col_codes, np.asarray(col_labels, dtype=object), True


def _encode(data: pd.DataFrame, cols: list[str], hierarchies, levels, domains, public_domain,
            unknown: str, source: RandomSource, max_cells: int, *,
            values_are: str = "leaves", deferred: bool = False, select=None) -> _Cells:
    """Cell keys on the device: each column's codes in its public domain, mixed-radix.

    ``values_are``: ``"leaves"`` (data values, generalized through the hierarchies to the
    levels) or ``"labels"`` (a released table: values are already labels of the levels).
    ``deferred``: out-of-domain rows never raise here (``unknown="error"`` sets
    ``out_of_domain`` for the caller to refuse after the charge; ``"drop"`` drops them);
    ``select(valid)``, given the host mask of in-domain rows, returns the rows to count.
    """
    hierarchies = dict(hierarchies or {})
    levels = dict(levels or {})
    domains = dict(domains or {})
    _check_source(source)
    if unknown not in UNKNOWN_CHOICES or (unknown == "drop" and not deferred):
        choices = UNKNOWN_CHOICES if deferred else ("error", "other")
        raise InputError(f"unknown must be one of {choices}, got {unknown!r}")
    for name, h in hierarchies.items():
        if not isinstance(h, Hierarchy):
            raise InputError(f"hierarchies[{name!r}] must be a Hierarchy, got {type(h).__name__}")
    for what, mapping in (("levels", levels), ("domains", domains)):
        stray = [c for c in mapping if c not in cols]
        if stray:
            raise InputError(f"{what} given for {format_values(stray)}, which are not among "
                             f"the grouping columns {cols}")
    public = _public_columns(public_domain, cols)
    labels, codes, from_data, undeclared = [], [], [], []
    for col in cols:
        got = _column_codes(col, data[col], hierarchies.get(col), levels.get(col, 0), domains,
                            public, values_are, deferred)
        if got is None:
            undeclared.append(col)
            continue
        col_codes, col_labels, read = got
        if read:
            from_data.append(col)
        elif unknown == "other":  # always present: the table's shape is data-independent
            if OTHER in {str(v) for v in col_labels}:
                raise InputError(f"the domain of {col!r} already has a value {OTHER!r}")
            col_codes = np.where(col_codes >= 0, col_codes, len(col_labels))
            col_labels = np.append(col_labels, np.array([OTHER], dtype=object))
        labels.append(col_labels)
        codes.append(col_codes)
    if undeclared:
        raise DataDomainError(
            f"column(s) {format_values(undeclared)} have no public domain: their set of values "
            "would be read from the data, which differential privacy does not protect (one "
            "person with a new value adds a row); give a hierarchy (hierarchies=...), the "
            "list of values (domains=...), or declare the values public (public_domain=True)",
            undeclared)
    cells = math.prod(len(lab) for lab in labels)
    if cells > min(max_cells, _MAX_KEY):
        raise InputError(
            f"the table over {cols} has {cells} cells, more than "
            f"{'max_cells=' + str(max_cells) if max_cells < _MAX_KEY else 'a 63-bit key holds'};"
            " generalize some columns (higher levels) or raise max_cells")
    valid = np.ones(len(data), dtype=bool)
    bad = []
    for col, col_codes in zip([c for c in cols if c not in undeclared], codes):
        ok = col_codes >= 0
        if not ok.all():
            bad.append(col)
            valid &= ok
    if bad and not deferred:  # unknown="error" of a caller that refuses at once
        raise _out_of_domain(bad)
    key = np.zeros(len(data), dtype=np.int64)
    for col_codes, col_labels in zip(codes, labels):
        key *= len(col_labels)
        key += col_codes
    keep = valid if select is None else select(valid)
    kept = None
    if deferred and not keep.all():
        key, kept = key[keep], keep
    # with "other", what remains in ``bad`` are missing values of a column whose values are
    # read from the data (it has no "(other)" cell): refused after the charge as well
    return _Cells(cols, labels, source.backend.asarray(key), from_data,
                  out_of_domain=[] if unknown == "drop" else bad, kept=kept)


def _out_of_domain(bad: list, charged: str = "") -> OutOfDomainError:
    """The refusal of values outside a public domain, never naming or counting them; its
    remedy as a parameter, and as the command line's flag in its ``cli`` text."""
    message = (f"column(s) {format_values(bad)}: values outside its public domain (or missing "
               f"values; not shown: naming or counting them would disclose the data){charged}; "
               "clean the column, extend the domain, or ")
    error = OutOfDomainError(message + f"pass unknown='other' to count them in an {OTHER!r} "
                             "cell or unknown='drop' to drop them")
    error.cli = message + (f"give --unknown other to count them in an {OTHER!r} cell or "
                           "--unknown drop to drop them")
    return error


def _bound_persons(persons: pd.Series, valid: np.ndarray, m: int,
                   source: RandomSource) -> np.ndarray:
    """Rows kept when each person keeps at most ``m`` of their (valid) rows, chosen
    uniformly at random: a random 63-bit key per row (CSPRNG), then the ``m`` smallest keys
    of each person.  A row with a missing person is a person of its own."""
    codes = encode_column(persons)[0].astype(np.int64)
    missing = np.asarray(persons.isna())
    if missing.any():
        codes[missing] = codes.max(initial=-1) + 1 + np.arange(int(missing.sum()))
    rows = np.flatnonzero(valid)
    keep = np.zeros(len(valid), dtype=bool)
    if rows.shape[0] == 0:
        return keep
    who = codes[rows]
    order = np.lexsort((source.backend.to_host(source.random_bits(rows.shape[0])), who))
    ranked = who[order]
    first = np.r_[True, ranked[1:] != ranked[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(ranked.shape[0]), 0))
    keep[rows[order[np.arange(ranked.shape[0]) - start < m]]] = True
    return keep


def _persons(data: pd.DataFrame, cols: list[str], person, bound, *,
             name: str = "max_rows_per_person",
             role: str = "a grouping column: a table by it") -> tuple[str | None, int]:
    """``(column, M)`` of the contribution bound ``bound`` (the parameter ``name``, default 1),
    or ``(None, 1)``: rows are persons.  The person column may not be one of ``cols`` (it
    would be ``role``)."""
    if person is None:
        if bound is not None:
            raise InputError(f"{name} needs person= (the column that names the person each row "
                             "belongs to)")
        return None, 1
    if not isinstance(person, str) or person not in data.columns:
        raise InputError(f"person column {person!r} not in the data")
    if person in cols:
        raise InputError(f"person column {person!r} cannot be {role} would publish who is in "
                         "the data")
    return person, check_int(name, 1 if bound is None else bound, 1)


def _unit(person, m: int) -> str:
    return "row" if person is None else f"person ({person}, at most {m} rows)"
