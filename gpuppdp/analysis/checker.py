"""Measure the privacy of any table (raw or released) in one vectorized pass.

:func:`check` groups the rows by their quasi-identifier values as they are (no hierarchies:
every column is factorized), builds the :class:`~gpuppdp.core.classes.Classes` of that single
"node" on the backend, and asks the privacy models for their per-class statistics -- the
same code the anonymization search uses, so each formula lives in one place
(:mod:`gpuppdp.models`).

Rows whose quasi-identifiers are all ``*`` (records suppressed by a release) are left out
and counted in ``suppressed_rows`` -- unless every row is, which is no suppression but the top
of the lattice (every QID generalized to ``*``, e.g. a negotiated deal): that table is one
class of all its records, ``suppressed_rows`` 0.  The table's distribution of the sensitive
attribute (``p`` of t-closeness, delta-disclosure, beta-likeness, and the default prior of the
privacy-loss model) is taken over the remaining rows.
"""

from __future__ import annotations

import itertools
import math
import os
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..core.classes import Classes
from ..core.codes import DistinctRows, encode_column
from ..core.datatypes import DataType
from ..display import Measures
from ..engine.device_columns import COUNT_COLUMN, counted_rows
from ..engine.encoding import EncodedTable, SensitiveColumn, smallest_int_dtype
from ..engine.transform import SUPPRESSED_LABEL, factorize_qids
from ..errors import InputError
from ..io import CHUNK_ROWS, host_frame, is_cudf_frame, read_chunks
from ..kernels import groupby
from ..models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy, EntropyLDiversity,
                      LKCPrivacy, PrivacyLoss, RecursiveCLDiversity, TCloseness)
from ..progress import Steps
from ..validation import check_attribute, check_columns, check_complete, column_list
from .risk import population_groups

__all__ = ["check", "check_chunks", "wildcard_class_sizes", "check_cells", "cell_codes",
           "CHECK_KEYS", "value_order", "ORDERS", "classes_of_rows", "sensitive_table",
           "measured_holds", "MEASURED_MODELS"]

#: the named orders of :func:`value_order` (besides an explicit list of values)
ORDERS = ("auto", "lexical", "numeric")


def _not_numbers(values) -> list[str]:
    bad = []
    for v in values:
        try:
            ok = math.isfinite(float(v))
        except ValueError:
            ok = False
        if not ok:
            bad.append(v)
    return bad


def value_order(values, order="auto", *, attribute: str = "the attribute") -> list[str] | None:
    """The order of an attribute's ``values`` for ordered t-closeness, as ARX orders them.

    ``order`` is ``"numeric"`` (every value must be a number; returns None: the model's own
    numeric order), ``"lexical"`` (the values as strings in the order of ARX's string data
    type, Java's ``String.compareTo``), ``"auto"`` (numeric when every value is a number, as
    ARX orders an attribute declared ``DataType.INTEGER`` or ``DECIMAL``; lexical otherwise,
    as ARX's default ``DataType.STRING``) or a list of every value in order (returned as strings).
    """
    distinct = list(dict.fromkeys(str(v) for v in values))
    if not isinstance(order, str):
        return [str(v) for v in order]
    if order not in ORDERS:
        raise InputError(f"order must be one of {', '.join(ORDERS)} or a list of values, got "
                         f"{order!r}")
    bad = _not_numbers(distinct) if order != "lexical" else []
    if order == "numeric" and bad:
        raise InputError(f"{attribute} is to be ordered numerically, but some values are not "
                         f"numbers: {', '.join(map(repr, bad[:5]))}"
                         + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
                         + "; order them lexically or list them in order")
    if order == "numeric" or (order == "auto" and not bad):
        return None
    return DataType("string").sort(distinct, attribute)

#: the scalar keys of :func:`check`'s result, in print order
CHECK_KEYS = ("records", "suppressed_rows", "classes", "k", "distinct_l", "entropy_l",
              "recursive_c", "t_equal", "t_ordered", "t_hierarchical", "alpha",
              "delta_disclosure", "beta_basic", "beta_enhanced", "distribution_loss_max",
              "entropy_loss_max", "lkc_min_group", "lkc_max_confidence", "lkc_satisfied",
              "k_map", "delta_presence_min", "delta_presence_max")

_SENSITIVE_KEYS = CHECK_KEYS[CHECK_KEYS.index("distinct_l"):CHECK_KEYS.index("lkc_min_group")]


def _class_ids(data: pd.DataFrame, qids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row its class (0..C-1 in order of first appearance) and each class's first row."""
    codes, cards, _ = factorize_qids(data, qids)
    return _combine(codes, cards)


def _combine(codes: list, cards: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_class_ids` of host code columns (``cards`` values each)."""
    cls, first, _ = groupby.group(np, codes, cards)
    return cls, first


def wildcard_class_sizes(query: np.ndarray, data: np.ndarray, cards) -> np.ndarray:
    """Per row of ``query`` ((m, q) host int64 codes, ``-1`` a suppressed cell), the number of
    rows of ``data`` ((n, q), the same coding) compatible with it: equal in every column where
    neither is suppressed -- sdcMicro's frequency ``fk`` with a missing value matching any
    value (``freqCalc``, alpha = 1; Templ, Kowarik & Meindl 2015, JSS 67(4)).  Rows are
    grouped by their suppression patterns: one group-by per pair of patterns present, no loop
    over rows."""
    q = query.shape[1]
    bits = 1 << np.arange(q, dtype=np.int64)
    q_pat, d_pat = (query < 0) @ bits, (data < 0) @ bits
    out = np.zeros(len(query), dtype=np.int64)
    d_rows = {int(p): np.flatnonzero(d_pat == p) for p in np.unique(d_pat)}
    for p in np.unique(q_pat).tolist():  # a loop over patterns (pairs), not rows
        qi = np.flatnonzero(q_pat == p)
        for p2, di in d_rows.items():
            keep = [c for c in range(q) if not (p | p2) >> c & 1]
            if not keep:
                out[qi] += len(di)
                continue
            gid = groupby.group(np, np.concatenate([query[qi][:, keep], data[di][:, keep]]),
                                [int(cards[c]) for c in keep])[0].astype(np.int64)
            counts = np.bincount(gid[len(qi):], minlength=int(gid.max()) + 1)
            out[qi] += counts[gid[:len(qi)]]
    return out


def cell_codes(data: pd.DataFrame, qids: Sequence[str]) -> tuple[np.ndarray, list, list]:
    """``(codes, labels, cards)``: the QID columns of ``data`` as one (n, q) host int64 array,
    ``-1`` where a cell shows ``*`` (suppressed), each column's labels and cardinality."""
    codes, labels = [], []
    for q in qids:
        col, lab = encode_column(data[q], as_str=True)
        col = col.astype(np.int64)
        star = np.flatnonzero(np.asarray(lab) == SUPPRESSED_LABEL)
        if len(star):
            col[col == int(star[0])] = -1
        codes.append(col)
        labels.append(lab)
    matrix = np.stack(codes, axis=1) if codes else np.zeros((len(data), 0), np.int64)
    return matrix, labels, [max(len(lab), 1) for lab in labels]


def check_cells(data: pd.DataFrame, *, quasi_identifiers: Sequence[str]) -> dict:
    """k-anonymity of a release with suppressed cells (``*``), a suppressed cell matching any
    value (sdcMicro's convention, :func:`wildcard_class_sizes`): ``{"records", "k"`` (the
    fewest records any record is compatible with, itself included), ``"suppressed_cells":
    {QID: cells showing *}}``."""
    qids = check_columns("quasi_identifiers", data, quasi_identifiers)
    check_complete(data, qids)
    if not len(data):
        raise InputError("the table is empty (0 rows)")
    codes, _, cards = cell_codes(data, qids)
    fk = wildcard_class_sizes(codes, codes, cards)
    return {"records": int(len(data)), "k": int(fk.min()),
            "suppressed_cells": {q: int((codes[:, j] < 0).sum()) for j, q in enumerate(qids)}}


def classes_of_rows(backend: Backend, cls: np.ndarray, sens: np.ndarray | None, n_values: int
                   ) -> Classes:
    """The classes of one node on ``backend`` from per-row class ids and sensitive codes."""
    be, xp = backend, backend.xp
    n_classes = int(cls.max()) + 1
    d_cls = be.asarray(cls)
    size = xp.bincount(d_cls, minlength=n_classes).astype(xp.int64)
    host_ptr = np.array([0, n_classes], dtype=np.int64)
    node = xp.zeros(n_classes, dtype=xp.int64)
    codes = xp.zeros((n_classes, 1), dtype=xp.int32)
    if sens is None:
        return Classes(xp, size, node, be.asarray(host_ptr), host_ptr, codes)
    d_sens = be.asarray(sens.astype(np.int64))
    entry, rep, _ = groupby.group(xp, [d_cls, d_sens], [n_classes, max(n_values, 1)],
                                  order="sorted")  # (class, value) pairs
    count = xp.bincount(entry, minlength=int(rep.shape[0]))
    entry_class = d_cls[rep]
    entry_sens = d_sens[rep].astype(xp.int32)
    distinct = xp.bincount(entry_class, minlength=n_classes).astype(xp.int64)
    return Classes(xp, size, node, be.asarray(host_ptr), host_ptr, codes, distinct,
                   entry_class, entry_sens, count.astype(xp.int64))


def _check_options(qids: list, sensitive: str | None, prior, lkc) -> list[str]:
    """Check the options of :func:`check` that do not depend on the data; the columns read."""
    check_attribute("sensitive", sensitive, qids)
    if prior is not None and sensitive is None:
        raise InputError("prior needs a sensitive attribute (sensitive=...)")
    if lkc is not None:
        if not isinstance(lkc, (tuple, list)) or len(lkc) not in (3, 4):
            raise InputError(f"lkc must be a tuple (L, K, C) or (L, K, C, values), got {lkc!r}")
        LKCPrivacy(lkc[0], lkc[1], lkc[2], lkc[3] if len(lkc) == 4 else None,
                   attribute=sensitive or "-")  # validates L, K, C and the values
        if len(lkc) == 4 and sensitive is None:
            raise InputError("lkc with sensitive values needs the sensitive attribute "
                             "(sensitive=...)")
    return qids + ([sensitive] if sensitive is not None else [])


def _sensitive_measures(out: dict, be: Backend, classes: Classes, enc: EncodedTable,
                        sensitive: str, labels, prior, order, hierarchy) -> tuple:
    """Put the sensitive measures of ``classes`` into ``out``; ``(distinct, stats)``: the
    per-class host arrays of the distinct values and of every other statistic."""
    ordering = None if order is None else value_order(labels, order, attribute=sensitive)
    stats = _sensitive_stats(be, classes, enc, sensitive, prior, ordering, order is not None,
                             hierarchy)
    distinct = be.to_host(classes.distinct)
    out["distinct_l"] = int(distinct.min())
    for key, values in stats.items():
        if values is None:
            out[key] = None
        elif key == "entropy_l":
            out[key] = float(values.min())
        else:
            out[key] = float(values.max())
    return distinct, stats


def _unsuppressed(data: pd.DataFrame, qids: list[str], wanted: list[str]) -> tuple:
    """The ``wanted`` columns of the rows not suppressed (QIDs not all ``*``), their QID codes
    and cardinalities, and the number of suppressed rows; refuses missing values and a table
    with no row left."""
    check_complete(data, wanted)
    codes, cards, suppressed = factorize_qids(data, qids)
    n_suppressed = int(suppressed.sum())
    if n_suppressed == len(data):  # every QID of every row '*': one class, nothing suppressed
        n_suppressed = 0
    kept = data[wanted]
    if n_suppressed:
        rows = np.flatnonzero(~suppressed)
        codes = [c[rows] for c in codes]
        kept = kept.iloc[rows].reset_index(drop=True)
    return kept, codes, cards, n_suppressed


def _population_measures(out: dict, table, be: Backend, kept: pd.DataFrame,
                         population: pd.DataFrame, qids: list[str], first, size) -> None:
    """``k_map`` and the delta-presence range of the classes against ``population`` into
    ``out`` (and per class into ``table``, when kept)."""
    group, _, in_population = population_groups(kept, population, qids, be)
    pop_size = be.to_host(in_population[group[be.asarray(first)]])
    ratio = size / pop_size
    out.update(k_map=int(pop_size.min()), delta_presence_min=float(ratio.min()),
               delta_presence_max=float(ratio.max()))
    if table is not None:
        table["population"] = pop_size
        table["delta_presence"] = ratio


def check(data: pd.DataFrame, *, quasi_identifiers: Sequence[str], sensitive: str | None = None,
          backend: str | Backend = "auto", prior: Mapping | None = None,
          lkc: tuple | None = None, population: pd.DataFrame | None = None,
          per_class: bool = False, order=None, sensitive_hierarchy=None,
          progress=None) -> dict:
    """Privacy measures of ``data`` grouped by ``quasi_identifiers`` (values as they are).

    Returns a dict with ``records`` (rows measured), ``suppressed_rows`` (rows whose QIDs are
    all ``*``, left out; when every row's are, none is: the table is one class),
    ``classes``, ``k`` (smallest class) and, with a ``sensitive`` column (``None``
    otherwise): ``distinct_l`` (fewest distinct values in a class),
    ``entropy_l`` (``exp(H)`` of the least diverse class, natural log), ``recursive_c``
    (largest ``r1 / (r2 + ... + rm)``; ``inf`` when a class has one value), ``t_equal`` and
    ``t_ordered`` (largest EMD, equal / ordered ground distance; ``t_ordered`` is ``None``
    unless every sensitive value is a number), ``alpha`` (largest relative frequency of a
    value in a class), ``delta_disclosure`` (largest ``|log2(p_E(v)/p(v))|``, as ARX),
    ``beta_basic`` / ``beta_enhanced`` (smallest beta that holds), ``distribution_loss_max`` and
    ``entropy_loss_max`` (privacy-loss model against ``prior``, a mapping value ->
    probability, by default the table's distribution).

    ``lkc=(L, K, C)`` adds LKC-privacy (Mohammed et al. 2009): ``lkc_min_group`` (fewest records
    sharing the values of at most ``L`` QIDs), ``lkc_max_confidence`` (largest share of a
    sensitive value among them; needs ``sensitive``) and ``lkc_satisfied``;
    ``lkc=(L, K, C, values)`` bounds the confidence of the listed sensitive ``values`` only
    (the set S of Mohammed et al.).  A ``population``
    table holding the QID columns in the same representation as ``data`` (a superset of its
    rows) adds ``k_map`` (fewest population records matching a class) and
    ``delta_presence_min`` / ``_max`` (range of the classes' sample / population ratios).
    Keys not asked for are ``None``.  With ``per_class=True`` the result also holds
    ``per_class``: a DataFrame of every class (QID values, size, statistics).  ``order`` sets
    the order of ``t_ordered`` (see :func:`value_order`: ``"auto"``, ``"lexical"``,
    ``"numeric"`` or a list of every value); None (default) measures it only when every value
    is a number.  ``sensitive_hierarchy`` (a :class:`~gpuppdp.hierarchy.Hierarchy` of the
    sensitive attribute) adds ``t_hierarchical`` (largest EMD with the hierarchical ground
    distance, as ARX); it is ``None`` otherwise.  ``progress(done, total)``, if given, is
    called before the first step and after each (classes, sensitive measures, LKC,
    population).  ``data`` may be a cuDF frame (:mod:`gpuppdp.device_frames`): on a GPU
    backend its rows are reduced on the device to their distinct (QID, sensitive) values with
    counts (:func:`~gpuppdp.engine.device_columns.counted_rows`), which :func:`check_chunks`
    measures; on the CPU, or with ``population`` or ``per_class`` (which need the rows), it
    is copied to the host once.
    """
    be = backend if isinstance(backend, Backend) else get_backend(backend)
    if is_cudf_frame(data):
        if be.is_gpu and population is None and not per_class:
            return _check_on_device(data, be, quasi_identifiers, sensitive, prior=prior,
                                    lkc=lkc, order=order,
                                    sensitive_hierarchy=sensitive_hierarchy, progress=progress)
        data = host_frame(data)
    qids = check_columns("quasi_identifiers", data, quasi_identifiers)
    if sensitive is not None:
        check_columns("sensitive", data, [sensitive])
    wanted = _check_options(qids, sensitive, prior, lkc)
    step = Steps(progress, 1 + (sensitive is not None) + (lkc is not None)
                 + (population is not None))
    step()
    kept, codes, cards, n_suppressed = _unsuppressed(data, qids, wanted)
    cls, first = _combine(codes, cards)
    out: dict = {"records": int(len(kept)), "suppressed_rows": n_suppressed}
    sens_codes = labels = None
    if sensitive is not None:
        sens_codes, labels = encode_column(kept[sensitive], as_str=True)
        sens_codes = sens_codes.astype(np.int64)
    classes = classes_of_rows(be, cls, sens_codes, 0 if labels is None else len(labels))
    size = be.to_host(classes.size)
    out["classes"] = int(classes.n_classes)
    out["k"] = int(size.min())
    table = None
    if per_class:
        table = kept.loc[first, qids].reset_index(drop=True)
        table["size"] = size
    if sensitive is None:
        out.update({k: None for k in _SENSITIVE_KEYS})
    else:
        step()
        assert sens_codes is not None and labels is not None  # encoded with the sensitive
        distinct, stats = _sensitive_measures(
            out, be, classes, sensitive_table(be, sensitive, sens_codes, labels), sensitive,
            labels, prior, order, sensitive_hierarchy)
        if table is not None:
            table["distinct_l"] = distinct
            for key, values in stats.items():
                name = {"distribution_loss_max": "distribution_loss",
                        "entropy_loss_max": "entropy_loss"}.get(key, key)
                table[name] = values if values is not None else None
    out.update(dict.fromkeys(CHECK_KEYS[CHECK_KEYS.index("lkc_min_group"):]))
    if lkc is not None:
        step()
        out.update(_lkc_stats(be, codes, cards, sens_codes, labels, *lkc))
    if population is not None:
        step()
        _population_measures(out, table, be, kept, population, qids, first, size)
    step()
    out = Measures({key: out[key] for key in CHECK_KEYS}, "privacy measures")
    if per_class:
        out["per_class"] = table
    return out


def _check_on_device(data, be: Backend, quasi_identifiers, sensitive, **options) -> dict:
    """:func:`check` of a cuDF frame on a GPU: its distinct (QID, sensitive) rows with counts,
    reduced on the device, measured by :func:`check_chunks`."""
    columns = pd.DataFrame(columns=data.columns)  # (the names, for their checks)
    qids = check_columns("quasi_identifiers", columns, quasi_identifiers)
    named = qids + ([] if sensitive is None else check_columns("sensitive", columns,
                                                               [sensitive]))
    return check_chunks([counted_rows(data, named, be, complete=True)], quasi_identifiers=qids,
                        sensitive=sensitive, backend=be, weight_column=COUNT_COLUMN, **options)


def check_chunks(chunks, *, quasi_identifiers: Sequence[str], sensitive: str | None = None,
                 backend: str | Backend = "auto", prior: Mapping | None = None,
                 lkc: tuple | None = None, population: pd.DataFrame | None = None,
                 per_class: bool = False, order=None, sensitive_hierarchy=None,
                 sep: str | None = None, chunk_rows: int = CHUNK_ROWS,
                 weight_column: str | None = None, progress=None) -> dict:
    """:func:`check` of a table given as consecutive row chunks (DataFrames holding the QID
    and sensitive columns, e.g. :func:`gpuppdp.io.read_chunks`) or as a CSV or Parquet file
    (``chunks`` a path, read ``chunk_rows`` rows at a time; ``sep``: the CSV delimiter,
    sniffed by default).

    The chunks are reduced to the table's frequency set -- the distinct (QID values,
    sensitive value) combinations of the rows not suppressed, with their counts, values
    numbered in order of first appearance in the whole table
    (:class:`~gpuppdp.core.codes.DistinctRows`) -- and every measure is computed from it, so
    memory is a chunk plus the frequency set, whatever the row count.  Same result as
    :func:`check` of the whole table, with the same options (``records``, ``classes`` and
    ``k`` to the sensitive measures and LKC); a missing value is reported with its row in the
    whole table.  ``population`` (k-map, delta-presence) and ``per_class`` need the rows'
    own values and are refused with a ValueError: use :func:`check` for them.  With
    ``weight_column``, each chunk row stands for that many rows (chunks already reduced, e.g.
    a Dask partition's counts: :func:`gpuppdp.cluster.partition_counts`).
    """
    if population is not None:
        raise InputError("population: k_map and delta-presence match the table's own values "
                         "against the population table, which check_chunks does not keep; "
                         "measure them with check() on the table in memory")
    if per_class:
        raise InputError("per_class=True: the table of every class holds the rows' own "
                         "values, which check_chunks does not keep; use check() on the table "
                         "in memory")
    qids = column_list(quasi_identifiers, "quasi_identifiers")
    wanted = _check_options(qids, sensitive, prior, lkc)
    if isinstance(chunks, (str, os.PathLike)):
        chunks = read_chunks(chunks, sep=sep, columns=wanted, rows=chunk_rows)
    be = backend if isinstance(backend, Backend) else get_backend(backend)
    step = Steps(progress, 1 + (sensitive is not None) + (lkc is not None))
    step()
    reducer = DistinctRows(wanted, merge_rows=1 << 20)  # pending chunk sets: ~ a chunk's rows
    starred = DistinctRows(wanted)  # the rows all '*' (a few entries: their sensitive values)
    rows = n_suppressed = 0
    for chunk in chunks:
        check_columns("quasi_identifiers", chunk, qids, frame="chunk")
        if sensitive is not None:
            check_columns("sensitive", chunk, [sensitive], frame="chunk")
        if not len(chunk):
            continue
        weights = np.ones(len(chunk), dtype=np.int64) if weight_column is None else \
            chunk[weight_column].to_numpy(dtype=np.int64)
        for c in wanted:
            if chunk[c].hasnans:
                miss = chunk[c].isna().to_numpy()
                first = None if weight_column is not None else \
                    rows + int(np.flatnonzero(miss)[0])
                where = "" if first is None else f", first at row {first}"
                error = InputError(f"column {c!r} has missing value(s){where}")
                error.row = first  # the command line names the file's line
                raise error
        suppressed = factorize_qids(chunk, qids)[2]
        n = int(weights[suppressed].sum())
        if n:
            reducer.add(chunk.loc[~suppressed, wanted], weights[~suppressed])
            starred.add(chunk.loc[suppressed, wanted], weights[suppressed])
        else:
            reducer.add(chunk[wanted], weights)
        n_suppressed += n
        rows += int(weights.sum())
    if rows == 0:
        raise InputError("no rows to measure: the table is empty (0 rows)")
    if n_suppressed == rows:  # every QID of every row '*': one class, nothing suppressed
        reducer, n_suppressed = starred, 0
    del starred
    codes, labels, counts = reducer.result()    # entries in order of first appearance (int32)
    del reducer                                 # its copy of the frequency set
    q = len(qids)
    cards = [max(len(lab), 1) for lab in labels[:q]]
    sens_codes, sens_labels = (codes[q], labels[q]) if sensitive is not None else (None, None)
    classes = _classes_of_entries(be, _combine(codes[:q], cards)[0], sens_codes, counts)
    if lkc is None:
        del codes                               # only LKC regroups the QID codes
    out: dict = {"records": rows - n_suppressed, "suppressed_rows": n_suppressed,
                 "classes": int(classes.n_classes), "k": int(be.to_host(classes.size).min())}
    if sensitive is None:
        out.update({k: None for k in _SENSITIVE_KEYS})
    else:
        step()
        assert sens_codes is not None and sens_labels is not None  # read with the sensitive
        sens_counts = np.bincount(sens_codes, weights=counts.astype(np.float64),
                                  minlength=len(sens_labels)).astype(np.int64)
        _sensitive_measures(out, be, classes, _counts_table(be, sensitive, sens_counts,
                                                            sens_labels),
                            sensitive, sens_labels, prior, order, sensitive_hierarchy)
    out.update(dict.fromkeys(CHECK_KEYS[CHECK_KEYS.index("lkc_min_group"):]))
    if lkc is not None:
        step()
        out.update(_lkc_stats(be, codes[:q], cards, sens_codes, sens_labels, *lkc,
                              weights=counts))
    step()
    return Measures({key: out[key] for key in CHECK_KEYS}, "privacy measures")


def _classes_of_entries(be: Backend, cls: np.ndarray, sens: np.ndarray | None,
                        count: np.ndarray) -> Classes:
    """:func:`classes_of_rows` of a frequency set: ``cls`` the class of each entry, ``sens``
    its sensitive code (``None``: none; the entries are then the classes), ``count`` the rows
    it stands for (host arrays).  The same classes, histogram entries in the same (class,
    value) order, as :func:`classes_of_rows` of the rows."""
    xp = be.xp
    n_classes = int(cls.max()) + 1
    size = be.asarray(np.bincount(cls, weights=count.astype(np.float64),
                                  minlength=n_classes).astype(np.int64))  # exact (< 2**53)
    host_ptr = np.array([0, n_classes], dtype=np.int64)
    node = xp.zeros(n_classes, dtype=xp.int64)
    codes = xp.zeros((n_classes, 1), dtype=xp.int32)
    if sens is None:
        return Classes(xp, size, node, be.asarray(host_ptr), host_ptr, codes)
    order = np.lexsort((sens, cls))             # each (class, value) pair once
    entry_class = cls[order].astype(np.int64)
    distinct = np.bincount(entry_class, minlength=n_classes).astype(np.int64)
    return Classes(xp, size, node, be.asarray(host_ptr), host_ptr, codes, be.asarray(distinct),
                   be.asarray(entry_class), be.asarray(sens[order].astype(np.int32)),
                   be.asarray(count[order].astype(np.int64)))


def sensitive_table(be: Backend, sensitive: str, sens_codes: np.ndarray, labels: np.ndarray
                    ) -> EncodedTable:
    """A table of one sensitive column (host codes into ``labels``) to bind the sensitive
    models to, for measuring classes formed outside the lattice search."""
    enc = _counts_table(be, sensitive, np.bincount(sens_codes, minlength=len(labels)), labels)
    enc.sens_codes = be.asarray(sens_codes.astype(smallest_int_dtype(len(labels))))
    return enc


def _counts_table(be: Backend, sensitive: str, counts: np.ndarray, labels: np.ndarray
                  ) -> EncodedTable:
    """:func:`sensitive_table` from the rows holding each label (``counts``, host) alone,
    without per-row codes: all the sensitive models read (the table's distribution)."""
    counts = np.asarray(counts, dtype=np.int64)
    return EncodedTable(be, [], [], [], int(counts.sum()), n_sens=len(labels),
                        sensitive={sensitive: SensitiveColumn(be.asarray(counts), labels)})


def _sensitive_stats(be: Backend, classes: Classes, enc: EncodedTable, sensitive: str, prior,
                     order=None, ordered_asked: bool = False, hierarchy=None) -> dict:
    """Per-class host arrays of every sensitive statistic, from the models' own methods
    (``enc``: the sensitive column, see :func:`sensitive_table`)."""
    host = be.to_host

    def bound(model):
        return model.bind(enc)

    stats = {}
    stats["entropy_l"] = np.exp(host(bound(EntropyLDiversity(sensitive, 1)).entropies(classes)))
    stats["recursive_c"] = host(bound(RecursiveCLDiversity(sensitive, 1, 2)).ratios(classes))
    stats["t_equal"] = host(bound(TCloseness(sensitive, 1.0, "equal")).distances(classes))
    try:
        ordered = bound(TCloseness(sensitive, 1.0, "ordered", order=order))
    except ValueError:                       # not every value is a number
        if ordered_asked:
            raise
        stats["t_ordered"] = None
    else:
        stats["t_ordered"] = host(ordered.distances(classes))
    stats["t_hierarchical"] = None if hierarchy is None else host(bound(TCloseness(
        sensitive, 1.0, "hierarchical", hierarchy=hierarchy)).distances(classes))
    stats["alpha"] = host(bound(AlphaKAnonymity(sensitive, 1.0)).alphas(classes))
    stats["delta_disclosure"] = host(bound(DeltaDisclosurePrivacy(sensitive, 1.0))
                                     .deltas(classes))
    stats["beta_basic"] = host(bound(BetaLikeness(sensitive, 1.0)).betas(classes))
    stats["beta_enhanced"] = host(bound(BetaLikeness(sensitive, 1.0, enhanced=True))
                                  .betas(classes))
    dist, ent = bound(PrivacyLoss(sensitive, 1.0, 1.0, prior=prior)).losses(classes)
    stats["distribution_loss_max"] = host(dist)
    stats["entropy_loss_max"] = host(ent)
    return stats


def _lkc_stats(be: Backend, codes: list, cards: list, sens_codes, labels,
               L: int, K: int, C: float, values=None, *,  # noqa: N803 - the literature's
               weights: np.ndarray | None = None) -> dict:
    """Smallest group and largest confidence over every combination of at most ``L`` QIDs
    (``codes``/``cards``: the measured rows' QID codes, as :func:`_combine` takes them); the
    confidence of the sensitive ``values`` only, when given (absent values count 0).
    ``weights`` (host ints, optional): the records each row stands for (rows of a frequency
    set)."""
    xp = be.xp
    w = None if weights is None else be.asarray(weights.astype(np.float64))

    def bincount(keys, minlength=0):           # counts or summed weights, exact (< 2**53)
        return xp.bincount(keys, weights=w, minlength=minlength).astype(xp.int64)

    listed = None
    if values is not None and labels is not None:
        wanted = {str(v) for v in values}
        listed = np.flatnonzero([str(v) in wanted for v in labels])
    smallest = len(codes[0]) if weights is None else int(weights.sum())
    confidence = None
    for size in range(1, min(L, len(codes)) + 1):
        for subset in itertools.combinations(range(len(codes)), size):
            groups = be.asarray(_combine([codes[j] for j in subset],
                                         [cards[j] for j in subset])[0])
            sizes = bincount(groups)
            smallest = min(smallest, int(be.to_host(sizes.min())))
            if sens_codes is None:
                continue
            m = len(labels)
            per = bincount(groups * m + be.asarray(sens_codes.astype(np.int64)),
                           minlength=sizes.shape[0] * m).reshape(-1, m)
            if listed is not None:
                if not len(listed):
                    worst = 0.0
                    confidence = worst if confidence is None else max(confidence, worst)
                    continue
                per = per[:, be.asarray(listed)]
            worst = float(be.to_host((per.max(axis=1) / sizes).max()))
            confidence = worst if confidence is None else max(confidence, worst)
    satisfied = smallest >= K and (C >= 1 or (confidence is not None and confidence <= C))
    return {"lkc_min_group": smallest, "lkc_max_confidence": confidence,
            "lkc_satisfied": bool(satisfied)}


def format_report(result: dict) -> str:
    """The scalar values of a :func:`check` result as an aligned two-column table."""
    width = max(len(k) for k in CHECK_KEYS)
    lines = []
    for key in CHECK_KEYS:
        value = result.get(key)
        if value is None:
            text = "-"
        elif isinstance(value, float):
            text = "inf" if math.isinf(value) else f"{value:.6g}"
        else:
            text = str(value)
        lines.append(f"{key:<{width}}  {text}")
    return "\n".join(lines)


#: the kinds of privacy model (``describe()["model"]``) :func:`measured_holds` judges
MEASURED_MODELS = ("k-anonymity", "t-closeness", "distinct-l-diversity",
                   "entropy-l-diversity", "alpha-k-anonymity", "delta-disclosure")


def measured_holds(model: dict, measured: dict) -> bool:
    """Does the checker's measure of a release (:func:`check`, with the model's sensitive
    attribute) satisfy a model (its ``describe()``)?  Models the checker has no single
    measure for (not in :data:`MEASURED_MODELS`) are taken as holding: the algorithm judged
    them with their own verdict."""
    kind, tol = model["model"], 1e-9
    if kind == "k-anonymity":
        return measured["k"] >= int(model["k"])
    if kind == "t-closeness":
        value = measured.get(f"t_{model['distance']}")
        return value is None or value <= float(model["t"]) + tol
    if kind == "distinct-l-diversity":
        return measured["distinct_l"] >= int(model["l"])
    if kind == "entropy-l-diversity":
        return measured["entropy_l"] >= float(model["l"]) - tol
    if kind == "alpha-k-anonymity":
        return measured["alpha"] <= float(model["alpha"]) + tol
    if kind == "delta-disclosure":
        return measured["delta_disclosure"] <= float(model["delta"]) + tol
    return True
