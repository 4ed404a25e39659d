"""Re-identification risk of a table (raw or released) given its quasi-identifiers.

Everything is computed from the sizes of the equivalence classes of the QID combination, as
ARX's risk models do (``RiskModelSampleSummary``, ``RiskModelPopulationUniqueness``,
``RiskModelAttributes``):

* :func:`sample_risk_summary` -- prosecutor / journalist / marketer risk, sample uniques and the
  share of records above risk thresholds (El Emam; journalist = prosecutor and marketer =
  #classes / #records when no population table is given);
* :func:`population_uniqueness` -- the share of population uniques estimated with Pitman's
  (Hoshino 2001), Zayatz's (1991) and the SNB model (Chen & Keller-McNulty 1998) and Dankar
  et al.'s (2012) decision rule among them;
* :func:`attribute_risks` -- alpha-distinction and separation of every non-empty QID subset;
* :func:`risk_report` -- all of the above in one JSON-ready dict, with the risks of survey
  (sampling) weights (:mod:`gpuppdp.analysis.survey`) and SUDA2's special uniques
  (:mod:`gpuppdp.analysis.suda`) on request.

Columns are dictionary-encoded on the host (:func:`gpuppdp.core.codes.encode_column`; a
missing value counts as a value of its own, as ``'*'`` does; :mod:`.qid_classes`, whose
:func:`encode_columns`, :func:`class_sizes` and :func:`class_sizes_encoded` this module
exports) and every array pass runs on ``backend.xp``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .. import kernels
from ..backend import Backend, get_backend
from ..core.codes import DistinctRows
from ..display import Measures
from ..engine.device_columns import COUNT_COLUMN, counted_rows
from ..engine.transform import all_suppressed, suppressed_rows
from ..errors import InputError, InputTypeError
from ..io import host_frame, is_cudf_frame
from ..kernels.uniqueness import pitman_uniques, snb_uniques, zayatz_uniques
from ..progress import Steps
from ..validation import check_columns
from .qid_classes import (RISK_THRESHOLDS, _check_qids, _classes_encoded, _threshold_key,
                          class_sizes, class_sizes_encoded, encode_columns)
from .suda import suda2 as find_msus
from .survey import _sampling_weights, _weighted_classes, survey_risk

__all__ = ["RISK_THRESHOLDS", "SampleRiskSummary", "AttributeRisk", "encode_columns",
           "risk_report_chunks",
           "class_sizes", "class_sizes_encoded", "sample_risk_summary", "population_class_sizes",
           "population_groups",
           "population_uniqueness", "pitman_uniques", "zayatz_uniques", "snb_uniques",
           "attribute_risks",
           "attribute_risks_encoded", "risk_report"]


# --------------------------------------------------------------------------------------------
# sample-based risks
# --------------------------------------------------------------------------------------------

@dataclass
class SampleRiskSummary:
    """ARX's sample risk summary (prosecutor = journalist without a population table;
    ``journalist_records_at_risk`` only with one)."""

    records: int
    equivalence_classes: int
    sample_uniques: int
    sample_uniques_fraction: float
    prosecutor_highest_risk: float
    prosecutor_lowest_risk: float
    prosecutor_average_risk: float
    journalist_highest_risk: float
    journalist_lowest_risk: float
    journalist_average_risk: float
    marketer_risk: float
    records_at_risk: dict
    journalist_records_at_risk: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)



def sample_risk_summary(sizes, backend: Backend | str = "cpu",
                        thresholds: Sequence[float] = RISK_THRESHOLDS, *,
                        population_sizes=None) -> SampleRiskSummary:
    """Risk summary from the class sizes (a device or host array of positive ints).

    ``records_at_risk[f"{t:.2f}"]`` is the share of records whose risk ``1/|E|`` exceeds ``t``
    (strictly, as ARX counts: 0.50 gives the sample uniques).  ``population_sizes`` (per
    class, the records of a population table sharing its QID values; see
    :func:`population_class_sizes`) gives the journalist and marketer risks as ARX's
    ``RiskModelSampleSummary`` computes them against a population (El Emam 2013): journalist
    highest ``1/min F``, lowest ``1/max F``, average ``max(#classes / sum F, sum(f/F) / n)``,
    records at risk ``1/F > t``; marketer ``sum(f/F) / n``.
    """
    backend = get_backend(backend)
    xp = backend.xp
    sizes = backend.asarray(sizes).astype(xp.int64).reshape(-1)
    n_classes = int(sizes.shape[0])
    if n_classes == 0:
        raise InputError("sizes: no equivalence classes given")
    for t in thresholds:
        if not 0.0 < float(t) <= 1.0:
            raise InputError(f"thresholds must lie in (0, 1], got {t!r}")
    ts = [float(t) for t in thresholds]
    # one reduction pass, one transfer: records, uniques, min, max, records above thresholds
    risk = 1.0 / sizes.astype(xp.float64)
    parts = [sizes.sum(), (sizes == 1).sum(), sizes.min(), sizes.max()]
    parts += [xp.where(risk > t, sizes, 0).sum() for t in ts]
    host = backend.to_host(xp.stack([p.astype(xp.int64) for p in parts]))
    n, uniques, smin, smax = (int(v) for v in host[:4])
    if smin < 1:
        raise InputError(f"sizes: class sizes must be positive, got a class of size {smin}")
    at_risk = {_threshold_key(t): int(v) / n for t, v in zip(ts, host[4:])}
    hi, lo, avg = 1.0 / smin, 1.0 / smax, n_classes / n
    if population_sizes is None:
        return SampleRiskSummary(n, n_classes, uniques, uniques / n, hi, lo, avg, hi, lo, avg,
                                 n_classes / n, at_risk)
    big = backend.asarray(population_sizes).astype(xp.int64).reshape(-1)
    if big.shape[0] != n_classes or bool(backend.scalar(xp.any(big < sizes))):
        raise InputError("population_sizes must give, for every class, at least its size")
    j_risk = 1.0 / big.astype(xp.float64)
    parts = [big.sum(), big.min(), big.max(), (sizes.astype(xp.float64) * j_risk).sum()]
    parts += [xp.where(j_risk > t, sizes, 0).sum() for t in ts]
    host = backend.to_host(xp.stack([p.astype(xp.float64) for p in parts]))
    total, fmin, fmax, marketer = host[0], host[1], host[2], host[3] / n
    j_at_risk = {_threshold_key(t): float(v) / n for t, v in zip(ts, host[4:])}
    return SampleRiskSummary(n, n_classes, uniques, uniques / n, hi, lo, avg, 1.0 / fmin,
                             1.0 / fmax, max(n_classes / total, marketer), marketer, at_risk,
                             j_at_risk)


def population_groups(data: pd.DataFrame, population: pd.DataFrame,
                      quasi_identifiers: Sequence[str], backend: Backend | str = "cpu"):
    """``(group, sizes, population_sizes)``: the group of every row of ``data`` (rows of
    ``data`` and of ``population`` with the same QID values share one) and per group its
    records in each table (device int64).  ``population`` must contain ``data``'s records,
    values in the same representation: a QID combination more frequent in ``data`` is an
    error."""
    backend = get_backend(backend)
    qids = _check_qids(data, quasi_identifiers)
    if not isinstance(population, pd.DataFrame):
        raise InputTypeError(f"population must be a pandas DataFrame, got "
                        f"{type(population).__name__}")
    absent = [q for q in qids if q not in population.columns]
    if absent:
        raise InputError(f"population lacks quasi-identifier column(s) "
                         f"{', '.join(map(repr, absent))}")
    xp = backend.xp
    n = len(data)
    codes, cards = encode_columns(pd.concat([data[qids], population[qids]], ignore_index=True),
                                  qids, backend)
    ids, _ = _classes_encoded(codes, cards, backend)
    g = int(backend.scalar(ids.max())) + 1
    sizes = xp.bincount(ids[:n], minlength=g).astype(xp.int64)
    big = xp.bincount(ids[n:], minlength=g).astype(xp.int64)
    over = int(backend.scalar((xp.where(sizes > big, sizes, 0)).sum()))
    if over:
        raise InputError(f"the table is not a sample of the population: {over} record(s) have "
                         "QID values that occur more often than in the population (both must "
                         "show the QIDs alike: for a released table, generalize the population "
                         "to the release's levels first)")
    return ids[:n], sizes, big


def population_class_sizes(data: pd.DataFrame, population: pd.DataFrame,
                           quasi_identifiers: Sequence[str], backend: Backend | str = "cpu"):
    """``(sizes, population_sizes)`` per class of ``data`` (device int64): its size and the
    records of ``population`` sharing its QID values (see :func:`population_groups`)."""
    _, sizes, big = population_groups(data, population, quasi_identifiers, backend)
    present = sizes > 0
    return sizes[present], big[present]


# --------------------------------------------------------------------------------------------
# population uniqueness
# --------------------------------------------------------------------------------------------

def _size_histogram(sizes, backend: Backend) -> np.ndarray:
    """``hist[s]`` = number of classes of size ``s`` (host int64)."""
    xp = backend.xp
    return backend.to_host(xp.bincount(backend.asarray(sizes).astype(xp.int64).reshape(-1)))


def _check_population(n: int, population_size) -> float:
    try:
        p = float(population_size)
    except (TypeError, ValueError):
        raise InputError(f"population_size must be a number, got {population_size!r}") from None
    if not math.isfinite(p) or p < n:
        raise InputError(f"population_size must be at least the number of records ({n}), "
                         f"got {population_size!r}")
    return p


def population_uniqueness(sizes, population_size, backend: Backend | str = "cpu") -> dict:
    """Share of population uniques by Pitman's, Zayatz's and the SNB model and Dankar et al.'s
    (2012) decision rule, as ARX's ``RiskModelPopulationUniqueness`` computes them.

    Dankar's rule: with a sampling fraction ``n/N`` of at most 10 %, Pitman's estimate
    (``dankar_choice`` ``"pitman"``), or Zayatz's when Pitman's has no solution; above 10 %,
    Zayatz's when the SNB estimate (ARX's variant, :func:`snb_uniques`) fails or exceeds it,
    else SNB's (``"snb"``).  A failed model's share is ``None`` (ARX shows 0) and a failed
    chosen estimate gives ``dankar`` 0.  Without sample uniques every estimate is 0 and
    ``dankar_choice`` is ``"none"``.
    """
    backend = get_backend(backend)
    hist = _size_histogram(sizes, backend)
    n = int((np.arange(len(hist)) * hist).sum())
    N = _check_population(n, population_size)
    c1 = int(hist[1]) if len(hist) > 1 else 0
    out = {"pitman": 0.0, "zayatz": 0.0, "dankar": 0.0, "dankar_choice": "none", "snb": 0.0}
    if c1 == 0:
        return out
    est = {"pitman": pitman_uniques(hist, N), "zayatz": zayatz_uniques(hist, N),
           "snb": snb_uniques(hist, N)}
    valid = {m: math.isfinite(v) and v != 0.0 for m, v in est.items()}
    for m, v in est.items():
        out[m] = v / N if valid[m] else None
    if n / N <= 0.1:
        choice = "pitman" if valid["pitman"] else "zayatz"
    else:  # ARX: Zayatz unless SNB is valid and not above it (a NaN Zayatz loses too)
        choice = "snb" if valid["snb"] and not est["zayatz"] < est["snb"] else "zayatz"
    out["dankar"], out["dankar_choice"] = out[choice] or 0.0, choice
    return out


# --------------------------------------------------------------------------------------------
# distinction and separation of QID subsets
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AttributeRisk:
    """alpha-distinction (distinct combinations / records) and separation (share of record
    pairs that differ in at least one attribute) of one QID subset."""

    attributes: tuple
    distinction: float
    separation: float

    @property
    def name(self) -> str:
        return ", ".join(self.attributes)


def attribute_risks(data: pd.DataFrame, quasi_identifiers: Sequence[str],
                    backend: Backend | str = "cpu", *, max_size: int | None = None,
                    min_distinction: float = 0.0, min_separation: float = 0.0,
                    sort: str = "arx") -> list[AttributeRisk]:
    """Distinction and separation of every non-empty subset of the QIDs.

    The table is first reduced to the frequency set of all QIDs; each subset ``S`` is then
    grouped from a parent ``S - {j}`` (dense ids times the radix of ``j``), so one subset costs
    a few passes over the frequency set.  Attribute names keep the order given.

    ``max_size`` limits the subset size; ``min_distinction``/``min_separation`` filter;
    ``sort`` is ``"arx"`` (subset size, then distinction, then separation -- ARX's order),
    ``"distinction"`` or ``"separation"`` (descending) or ``"none"`` (bitmask order).
    """
    backend = get_backend(backend)
    qids = _check_qids(data, quasi_identifiers)
    q = len(qids)
    if q > 20:
        raise InputError(f"quasi_identifiers: at most 20 columns (2^q - 1 subsets), got {q}")
    if max_size is None:
        max_size = q
    if not 1 <= int(max_size):
        raise InputError(f"max_size must be at least 1, got {max_size!r}")
    if sort not in ("arx", "distinction", "separation", "none"):
        raise InputError(f"sort must be 'arx', 'distinction', 'separation' or 'none', "
                         f"got {sort!r}")
    codes, cards = encode_columns(data, qids, backend)
    out = attribute_risks_encoded(codes, cards, qids, backend, max_size=max_size)
    out = [r for r in out if r.distinction >= min_distinction and r.separation >= min_separation]
    if sort == "arx":
        out.sort(key=lambda r: (len(r.attributes), r.distinction, r.separation))
    elif sort == "distinction":
        out.sort(key=lambda r: (-r.distinction, -r.separation, len(r.attributes)))
    elif sort == "separation":
        out.sort(key=lambda r: (-r.separation, -r.distinction, len(r.attributes)))
    return out


def attribute_risks_encoded(codes, cards, names, backend: Backend, *,
                            max_size: int | None = None, weights=None) -> list[AttributeRisk]:
    """:func:`attribute_risks` on dictionary codes (``codes[j]`` device ints in
    ``0..cards[j]-1``), unsorted (bitmask order); ``weights`` (device, optional): the records
    each row stands for (the counts of a frequency set)."""
    qids = list(names)
    q = len(qids)
    max_size = q if max_size is None else int(max_size)
    n = int(codes[0].shape[0]) if weights is None else int(backend.to_host(weights).sum())
    # bit b of a subset mask is QID order[b], largest cardinality first.  A subset is grouped
    # from its parent without the highest bit (the smallest radix, so key spaces stay small),
    # on the frequency set of the QIDs order[b:], b its lowest bit: the subsets that leave out
    # the widest QIDs run on ever smaller frequency sets.
    order = sorted(range(q), key=lambda j: -cards[j])
    rad = [int(cards[j]) for j in order]
    cur = [codes[j] for j in order]
    groups, sumsq = kernels.subset_stats(backend, cur, rad, max_size, weights)
    # by lowest bit b, then by the bits above it
    masks = np.concatenate([(1 << b) | (np.arange(1 << (q - 1 - b), dtype=np.int64) << (b + 1))
                            for b in range(q)])
    masks = masks[groups[masks] >= 0]
    groups, sumsq = groups[masks].astype(np.float64), sumsq[masks].astype(np.float64)
    dist = groups / n
    sep = 1.0 - (sumsq - n) / (float(n) * (n - 1)) if n > 1 else np.zeros_like(sumsq)
    bit = [1 << b for b in sorted(range(q), key=order.__getitem__)]  # bit of qids[j]
    return [AttributeRisk(tuple(qids[j] for j in range(q) if s & bit[j]), d, p)
            for s, d, p in zip(masks.tolist(), dist.tolist(), sep.tolist())]


# --------------------------------------------------------------------------------------------
# everything together
# --------------------------------------------------------------------------------------------

def risk_report(data: pd.DataFrame, quasi_identifiers: Sequence[str],
                population_size=None, backend: Backend | str = "cpu", *,
                attributes: bool = True, population: pd.DataFrame | None = None,
                sampling_weights=None, suda2: bool | int | None = None,
                progress=None) -> dict:
    """Sample summary, population uniqueness (when ``population_size`` is given) and
    attribute risks, in the layout of ``arx_adult_risk.json``; journalist and marketer
    risks against a ``population`` table when one is given.

    Rows whose QIDs are all ``'*'`` (suppressed in a release) are left out of every figure,
    as ARX's risk models skip suppressed records; ``suppressed_rows`` counts them.  When every
    row's are, none is suppressed: the table is the top of the lattice (every QID generalized
    to ``*``), one class of all its records.
    ``sampling_weights`` (a column name or one survey weight per row) adds
    ``survey_weights``: the weighted class sizes and individual risks of
    :func:`gpuppdp.analysis.survey.survey_risk`.  ``suda2`` (``True``: MSUs of any size; a
    number: of at most that many attributes) adds ``suda2``: the special uniques' summary of
    :func:`gpuppdp.analysis.suda.suda2`.
    ``progress(done, total)``, if given, is called before the first step and after each
    (classes, survey weights, SUDA2, population uniqueness, attribute risks).
    ``data`` may be a cuDF frame (:mod:`gpuppdp.device_frames`): on a GPU backend its rows are
    reduced on the device to their distinct QID combinations with counts
    (:func:`~gpuppdp.engine.device_columns.counted_rows`), which :func:`risk_report_chunks`
    measures; on the CPU, or with ``population``, ``sampling_weights`` or ``suda2`` (which
    need the rows), it is copied to the host once."""
    backend = get_backend(backend)
    if is_cudf_frame(data):
        if backend.is_gpu and population is None and sampling_weights is None and \
                suda2 in (None, False):
            qids = check_columns("quasi_identifiers", pd.DataFrame(columns=data.columns),
                                 quasi_identifiers)
            return risk_report_chunks([counted_rows(data, qids, backend)], qids,
                                      population_size, backend, attributes=attributes,
                                      weight_column=COUNT_COLUMN, progress=progress)
        data = host_frame(data)
    qids = _check_qids(data, quasi_identifiers)
    weights = None if sampling_weights is None else \
        _sampling_weights(data, sampling_weights)
    step = Steps(progress, 1 + (weights is not None) + (suda2 not in (None, False))
                 + (population_size is not None) + bool(attributes))
    step()
    suppressed = suppressed_rows(data, qids)
    n_suppressed = int(suppressed.sum())
    if n_suppressed == len(data):  # every QID of every row '*': one class, nothing suppressed
        n_suppressed = 0
    if n_suppressed:
        data = data.loc[~suppressed]
        weights = None if weights is None else weights[~np.asarray(suppressed)]
    if population is None:
        sizes = class_sizes(data, qids, backend)
        summary = sample_risk_summary(sizes, backend)
    else:
        sizes, big = population_class_sizes(data, population, qids, backend)
        summary = sample_risk_summary(sizes, backend, population_sizes=big)
    extra = {}
    if weights is not None:
        step()
        _, f, big_f = _weighted_classes(data, qids, weights, backend)
        extra["survey_weights"] = {
            "column": sampling_weights if isinstance(sampling_weights, str) else None,
            **survey_risk(f, big_f, backend)}
    if suda2 not in (None, False):
        step()
        extra["suda2"] = find_msus(data, qids, backend,
                                   max_size=None if suda2 is True else suda2).summary()
    return _assemble(qids, n_suppressed, summary, sizes, population_size, backend,
                     (lambda: attribute_risks(data, qids, backend)) if attributes else None,
                     step, extra)


def risk_report_chunks(chunks, quasi_identifiers: Sequence[str], population_size=None,
                       backend: Backend | str = "cpu", *, attributes: bool = True,
                       weight_column: str | None = None, progress=None) -> dict:
    """:func:`risk_report` of a table given as consecutive row chunks (DataFrames holding
    the QID columns, e.g. :func:`gpuppdp.io.read_chunks`): the chunks are reduced to the
    distinct QID combinations with their counts (:class:`~gpuppdp.core.codes.DistinctRows`),
    and every figure is computed from those, so memory follows the number of classes, not of
    rows.  Same figures as :func:`risk_report` of the whole table (no population table).
    With ``weight_column``, each chunk row stands for that many rows (chunks already
    reduced, e.g. a Dask partition's counts: :func:`gpuppdp.cluster.partition_counts`)."""
    backend = get_backend(backend)
    qids = list(quasi_identifiers)
    if not qids:
        raise InputError("quasi_identifiers: give at least one column")
    step = Steps(progress, 2 + (population_size is not None) + bool(attributes))
    step()
    reducer = DistinctRows(qids)
    for chunk in chunks:
        reducer.add(chunk, None if weight_column is None else chunk[weight_column])
    if reducer.rows == 0:
        raise InputError("the table is empty (0 rows)")
    codes, labels, counts = reducer.result()
    star = all_suppressed(codes, labels, len(counts))
    n_suppressed = int(counts[star].sum())
    if n_suppressed == reducer.rows:  # every QID of every row '*': one class, none suppressed
        star[:], n_suppressed = False, 0
    codes = [backend.asarray(c[~star].astype(np.int32)) for c in codes]
    counts = counts[~star]
    step()
    sizes = backend.asarray(counts)                  # each distinct combination is a class
    cards = [max(len(lab), 1) for lab in labels]
    return _assemble(qids, n_suppressed, sample_risk_summary(sizes, backend), sizes,
                     population_size, backend,
                     (lambda: attribute_risks_encoded(codes, cards, qids, backend,
                                                      weights=sizes)) if attributes else None,
                     step)


def _assemble(qids, n_suppressed, summary, sizes, population_size, backend, attribute_risks_of,
              step, extra=None) -> dict:
    """The report of :func:`risk_report` from its parts (attribute risks computed by
    ``attribute_risks_of()``, when given, in ARX's order; ``extra`` entries after the
    summary)."""
    rep = {"quasi_identifiers": qids, "suppressed_rows": n_suppressed}
    rep.update(summary.to_dict())
    rep.update(extra or {})
    rep["population_size"] = None
    rep["population_uniqueness"] = None
    if population_size is not None:
        step()
        pu = population_uniqueness(sizes, population_size, backend)
        rep["population_size"] = int(population_size) if float(population_size).is_integer() \
            else float(population_size)
        rep["population_uniqueness"] = pu
    if attribute_risks_of is not None:
        step()
        risks = sorted(attribute_risks_of(),
                       key=lambda r: (len(r.attributes), r.distinction, r.separation))
        rep["attribute_risks"] = {r.name: {"distinction": r.distinction,
                                           "separation": r.separation} for r in risks}
    step()
    return Measures(rep, "re-identification risk")
