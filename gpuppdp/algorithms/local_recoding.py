"""ARX's iterative local recoding (``ARXResult.optimizeIterativeFast``, ARX 3.9.2).

A full-domain release suppresses the records of the classes that fail the privacy models.
Local recoding anonymizes those records again, on their own, with the same models, metric and
lattice, and releases the ones the optimum of that subset does not suppress with *its*
transformation; the records it still suppresses go to the next iteration, until none is left,
fewer remain than the models' smallest class, or an iteration releases none (Prasser, Eicher,
Spengler, Bild & Kuhn 2020, "Flexible data anonymization using ARX -- Current status and
challenges ahead", Softw. Pract. Exper. 50(7), Section 4.3: local recoding by iterated
global recoding).

Each iteration must release at least ``records_per_iteration`` of the *input's* records (ARX's
``records``, a fraction in ]0, 1]; ARX's user interface uses 1/100): its suppression limit on
the ``m`` remaining records is ``1 - min(1, records_per_iteration * N / m)``, as in
``ARXResult.optimizeFast``.  Every record keeps the generalization of the iteration that
released it; classes of different iterations only merge where their values are equal, so a
k-anonymous (or distinct/entropy l-diverse, alpha-k-anonymous) release stays one.  Models that
compare classes with the table's distribution or a population (t-closeness, delta-disclosure,
beta-likeness, the privacy-loss model, k-map, delta-presence) and LKC-privacy are refused.
Each iteration is one batched search over the remaining rows; only iterations are looped over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import kernels
from ..core.codes import smallest_int_dtype
from ..engine.encoding import EncodedTable
from ..engine.evaluate import LatticeOracle, checked_evaluator
from ..engine.lattice import Lattice
from ..engine.search import SEARCHES, make_search
from ..engine.transform import (SUPPRESSED_LABEL, SUPPRESSION_MODES, Release,
                                carried_column, released_columns)
from ..errors import InputError, InputTypeError
from ..models import (AlphaKAnonymity, DistinctLDiversity, EntropyLDiversity, KAnonymity,
                      KAnonymityOnSubsets, RecursiveCLDiversity)
from ..validation import check_number, format_values

__all__ = ["LocalRecoding", "local_recoding", "DEFAULT_RECORDS_PER_ITERATION",
           "LOCAL_RECODING_MODELS"]

#: ARX's user interface: 100 iterations, each for 1/100 of the records
DEFAULT_RECORDS_PER_ITERATION = 0.01
#: the models whose verdict on a class needs that class only (and so holds on the union of
#: the iterations' releases)
LOCAL_RECODING_MODELS = (KAnonymity, DistinctLDiversity, EntropyLDiversity,
                         RecursiveCLDiversity, AlphaKAnonymity, KAnonymityOnSubsets)


@dataclass
class LocalRecoding:
    """A locally recoded release.

    ``iterations[0]`` is the full-domain optimum, ``iterations[t]`` the ``t``-th re-anonymization
    of the records still suppressed: its ``transformation``, the ``records`` it released, the
    ``candidates`` it was run on, its ``suppression_limit`` and the ``information_loss`` of its
    optimum on those candidates.  ``timings``: seconds of the iterations (``search``, the
    re-anonymizations, as ARX's ``optimizeIterativeFast``), of the ``release`` (as ARX's
    ``getOutput``) and in ``total``.  ``row_iteration`` (host int64, one per input row, not for
    publication) is the iteration that released each row, ``-1`` where it stays suppressed.
    """

    release: Release
    iterations: list[dict]
    row_iteration: np.ndarray = field(repr=False)
    records_per_iteration: float
    timings: dict[str, float]

    @property
    def released(self) -> pd.DataFrame:
        assert self.release.data is not None
        return self.release.data

    @property
    def suppressed_records(self) -> int:
        return self.release.suppressed_rows

    def summary(self) -> dict:
        """Plain values: the records per iteration, each iteration's transformation and
        records, the suppressed records before (``initially_suppressed``) and after, timings."""
        return {"records_per_iteration": self.records_per_iteration,
                "iterations": len(self.iterations) - 1,
                "initially_suppressed": (self.iterations[0]["candidates"]
                                         - self.iterations[0]["records"]),
                "suppressed_records": self.suppressed_records,
                "released_records": self.release.released_rows,
                "steps": [dict(it) for it in self.iterations],
                "timings": dict(self.timings)}


def _check_models(models) -> None:
    refused = [m.describe()["model"] for m in models if not isinstance(m, LOCAL_RECODING_MODELS)]
    if refused:
        raise InputError(f"local recoding supports k-anonymity, l-diversity, (alpha,k)-anonymity"
                         f" and k on QID sets; not {format_values(sorted(set(refused)))}")


def _optimum(evaluator, lattice: Lattice, search: str, time_limit):
    """``(levels, stats, nodes evaluated)`` of ``evaluator``'s optimum on ``lattice`` (``levels``
    ``None`` when no node is anonymous)."""
    oracle = LatticeOracle(evaluator, lattice)
    with kernels.reused_scratch():
        found = make_search(search, evaluator, lattice_size=lattice.size,
                            time_limit=time_limit).run(oracle, None)
    if found.optimum is None:
        return None, None, found.nodes_evaluated
    return lattice.levels_of([found.optimum])[0], found.optimum_stats, found.nodes_evaluated


def _step(names, levels, stats, candidates: int, released: int, limit: float,
          nodes: int) -> dict:
    return {"transformation": {n: int(v) for n, v in zip(names, levels)},
            "records": int(released), "candidates": int(candidates),
            "suppression_limit": float(limit),
            "information_loss": float(stats["information_loss"]), "nodes_evaluated": int(nodes)}


def local_recoding(result, data: pd.DataFrame,
                   records_per_iteration: float = DEFAULT_RECORDS_PER_ITERATION, *,
                   search: str | None = None, suppressed: str | None = None,
                   seed=None) -> LocalRecoding:
    """ARX's ``optimizeIterativeFast(output, records_per_iteration)`` after ``result`` (an
    :class:`~gpuppdp.AnonymizationResult` of :meth:`~gpuppdp.Anonymizer.fit` on ``data``).

    ``search``: the search of every iteration (default: the one ``result`` ran, as ARX runs
    its own algorithm again); ``suppressed``: ``"mark"`` or ``"drop"`` (default:
    ``result``'s); ``seed``: the release's row permutation.  Every released row shows, per
    QID, the label of its iteration's level; released + suppressed = input rows.
    """
    t0 = time.perf_counter()
    rate = check_number("records_per_iteration", records_per_iteration, 0.0, 1.0)
    if rate <= 0.0:
        raise InputError(f"records_per_iteration must be in ]0, 1], got {records_per_iteration!r}")
    evaluator = result._evaluator
    if evaluator is None or evaluator.encoded.qi_codes is None:
        raise InputError("local recoding needs the result Anonymizer.fit returned on a table "
                         "in memory (not unpickled, not from fit_file or Dask)")
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    enc = evaluator.encoded
    if len(data) != enc.n_rows:
        raise InputError(f"data has {len(data)} rows, the result was fit on {enc.n_rows}")
    suppressed = result.release.suppression if suppressed is None else suppressed
    if suppressed not in SUPPRESSION_MODES:
        raise InputError(f"suppressed must be one of {SUPPRESSION_MODES}, got {suppressed!r}")
    search = search or (result.search.strategy if result.search.strategy in SEARCHES
                        else "auto")
    setup = result._setup
    _check_models(setup.models)
    be = enc.backend
    n = enc.n_rows
    levels0 = np.array(list(result.transformation.values()), dtype=np.int64)
    # the release's outliers (judged already)
    remaining = np.flatnonzero(be.to_host(evaluator.row_outlier_mask(levels0)))
    row_iteration = np.zeros(n, np.int64)
    row_iteration[remaining] = -1
    steps = [_step(enc.qi_names, levels0, result.node, n, n - len(remaining),
                   result.suppression_limit, result.nodes_evaluated)]
    levels = [levels0]
    smallest = evaluator.min_class_size or 1
    lattice = Lattice.of(enc.heights)
    while len(remaining) >= smallest and len(remaining):
        share = min(max(rate * n / len(remaining), 0.0), 1.0)  # ARX's relativeRecords
        limit = 1.0 - share
        # the metric bound to the whole table: its tables of the hierarchies are kept
        sub = checked_evaluator(enc.take_rows(be.asarray(remaining)), setup.models,
                                evaluator.metric, limit)
        node, stats, nodes = _optimum(sub, lattice, search,
                                      result.search.details.get("time_limit"))
        if node is None:
            break
        if stats["suppressed"]:
            still = be.to_host(sub.row_outlier_mask(node)).astype(bool)
        else:  # the optimum suppresses none of them
            still = np.zeros(len(remaining), dtype=bool)
        if still.all():
            break
        row_iteration[remaining[~still]] = len(levels)
        steps.append(_step(enc.qi_names, node, stats, len(remaining), int((~still).sum()),
                           limit, nodes))
        levels.append(np.asarray(node, dtype=np.int64))
        remaining = remaining[still]
    t1 = time.perf_counter()
    rel = _release(data, enc, np.array(levels), row_iteration, suppressed, seed)
    t2 = time.perf_counter()
    return LocalRecoding(rel, steps, row_iteration, rate,
                         {"search": t1 - t0, "release": t2 - t1, "total": t2 - t0})


def _release(data: pd.DataFrame, enc: EncodedTable, levels: np.ndarray,
             row_iteration: np.ndarray, suppression: str, seed) -> Release:
    """The release: row ``i`` generalized to ``levels[row_iteration[i]]``, ``*`` where
    ``row_iteration`` is -1 (removed with ``drop``), rows in a random order."""
    be = enc.backend
    qi_codes = enc.qi_codes
    assert qi_codes is not None
    outlier = row_iteration < 0
    keep = ~outlier if suppression == "drop" else np.ones(len(outlier), dtype=bool)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    order = rng.permutation(np.flatnonzero(keep))
    it = row_iteration[order]

    def qid(j: int):
        """QID ``j`` as released: a categorical of the labels of the levels used (each once,
        by level, then ``*``), gathered per row from its iteration's level (``*`` for -1)."""
        h = enc.hierarchies[j]
        position: dict[str, int] = {}
        luts = {lv: np.array([position.setdefault(str(v), len(position))
                              for v in h.labels(lv).tolist()])
                for lv in sorted(set(levels[:, j].tolist()))}
        star = position.setdefault(SUPPRESSED_LABEL, len(position))
        dtype = smallest_int_dtype(len(position))
        # row t: leaf -> category at iteration t's level; the last row (iteration -1): *
        table = np.vstack([luts[lv][h.codes(lv)].astype(dtype) for lv in levels[:, j].tolist()]
                          + [np.full(len(h.leaves), star, dtype)])
        leaf = be.to_host(qi_codes[j])[order]
        return pd.Categorical.from_codes(
            table[it, leaf], dtype=pd.CategoricalDtype(pd.Index(list(position))))

    columns = released_columns(data.columns, enc, qid,
                               lambda name: carried_column(data, name, order))
    return Release(pd.DataFrame(columns, copy=False), enc.n_rows, int(outlier.sum()), suppression,
                   order.astype(np.int64))
