"""Utility (information-loss) metrics of a released table.

Functions on DataFrames, like :mod:`gpuppdp.analysis.risk`: columns are dictionary-encoded on
the host (:func:`gpuppdp.core.codes.encode_column`; only the *distinct* labels are looked up
in the hierarchies), and every pass over rows or classes runs vectorized on ``backend.xp``
(NumPy or CuPy).

* :func:`precision` -- Sweeney's Prec (Sweeney 2002);
* :func:`iloss` -- Xiao & Tao's ILoss, summed over the cells (by default), or Iyengar's LM
  normalized per attribute and averaged as ARX does (``definition="arx"``);
* :func:`granularity` -- ARX's granularity of any release (per cell: the share of the domain a
  label covers; local recodings, suppressed cells and records included);
* :func:`discernibility` -- DM (Bayardo & Agrawal 2005);
* :func:`average_class_size` -- normalized C_AVG (LeFevre, DeWitt & Ramakrishnan 2006);
* :func:`non_uniform_entropy` -- (de Waal & Willenborg 1999; Gionis & Tassa 2008);
* :func:`kl_divergence` -- KL divergence of the release (Kifer & Gehrke 2006);
* :func:`info_gain` -- InfoGain of one specialization (Fung, Wang & Yu 2005);
* :func:`info_gain_scores` -- per value ``v`` of a level, InfoGain(v), AnonyLoss(v) and
  Fung, Wang & Yu's Score(v) (the per-level sum is :func:`info_gain`); these two live in
  :mod:`.info_gain` and are exported here;
* :func:`privacy_utility_losses` -- distribution and entropy privacy losses (the (epsilon,
  alpha) privacy-loss model, :class:`gpuppdp.models.PrivacyLoss`) and utility losses of every
  record, class and the whole release, with thresholds;
* :func:`gpuppdp.analysis.ml.ml_utility_loss` -- drop of a classifier's cross-validated
  accuracy, precision, recall and F1, with a tolerance lambda (in its own module: it needs
  scikit-learn).

A *suppressed* record is one whose quasi-identifiers are all ``'*'`` (the ``mark`` mode of
:func:`gpuppdp.engine.transform.release`); in the ``drop`` mode the suppressed records are the
``len(original) - len(released)`` missing rows.  The functions that pair original and
released records (:func:`non_uniform_entropy`, :func:`kl_divergence`,
:func:`privacy_utility_losses`) take the :class:`~gpuppdp.engine.transform.Release` itself (e.g.
``result.release`` of :class:`gpuppdp.Anonymizer`), whose ``source_rows`` undo its row
permutation; given a DataFrame they pair rows by *position* (a release in input order).
"""

from __future__ import annotations

from dataclasses import dataclass
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..core.classes import segment_sum
from ..core.codes import encode_column
from ..engine.metrics import discernibility as dm_metric
from ..engine.metrics import generalization_shares, precision_loss
from ..engine.transform import SUPPRESSED_LABEL, Release, suppressed_rows
from ..errors import InputError
from ..hierarchy import Hierarchy
from ..io import is_cudf_frame
from ..kernels import groupby
from ..models import PrivacyLoss
from ..validation import check_attribute, check_columns, column_list, format_values
from .checker import _class_ids, classes_of_rows, sensitive_table
from .info_gain import info_gain, info_gain_scores
from .qid_classes import _classes_encoded, encode_columns

__all__ = ["precision", "iloss", "ILOSS_DEFINITIONS", "discernibility", "average_class_size",
           "non_uniform_entropy", "kl_divergence", "info_gain", "released_levels", "granularity",
           "privacy_utility_losses", "PrivacyUtilityLosses", "LOSS_NAMES",
           "info_gain_scores", "utility_thresholds"]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

def _check_frames(original, released, columns, name: str = "quasi_identifiers"):
    for frame, df in (("original", original), ("released", released)):
        check_columns(name, df, columns, frame)
    if len(original) == 0:
        raise InputError("the original table is empty (0 rows)")


def released_levels(released: pd.DataFrame, hierarchies: Mapping[str, Hierarchy],
                    quasi_identifiers: Sequence[str]) -> dict[str, int]:
    """The generalization level of each QID of a full-domain release: the lowest level whose
    labels contain every label shown in non-suppressed rows (all ``'*'`` rows excluded); a QID
    shown only as ``'*'`` is at its top level."""
    qids = column_list(quasi_identifiers)
    star = suppressed_rows(released, qids)
    out = {}
    for q in qids:
        h = hierarchies[q]
        codes, uniq = encode_column(released[q], as_str=True)
        shown = set(uniq[np.unique(codes[~star])].tolist()) if (~star).any() else set()
        for level in range(h.height + 1):
            if shown <= set(h.labels(level).tolist()):
                out[q] = level
                break
        else:
            raise InputError(f"{q!r}: the released labels {sorted(shown)[:5]} are not all on one "
                             f"level of its hierarchy")
    return out


def _gen_codes(released, hierarchies, qids, levels, backend):
    """Per QID the device codes of the released labels at their level (``-1`` where the row is
    suppressed), and the suppressed mask."""
    star = backend.asarray(suppressed_rows(released, qids))
    out = []
    for q in qids:
        h, level = hierarchies[q], levels[q]
        codes, _ = encode_column(released[q], domain=h.labels(level), unknown="missing")
        gen = backend.asarray(codes.astype(np.int64))
        if len(released) and bool(backend.scalar(backend.xp.any((gen < 0) & ~star))):
            raise InputError(f"{q!r}: released labels that are not on level {level} of its "
                             "hierarchy (and not a suppressed '*' row)")
        gen = backend.xp.where(star, -1, gen)
        out.append(gen)
    return out, star


def _levels(released, hierarchies, qids, levels):
    if levels is None:
        return released_levels(released, hierarchies, qids)
    levels = dict(levels)
    missing = [q for q in qids if q not in levels]
    if missing:
        raise InputError(f"levels: no level for {missing}")
    return {q: int(levels[q]) for q in qids}


def _backend(backend) -> Backend:
    return get_backend(backend)


# --------------------------------------------------------------------------------------------
# hierarchy-based metrics
# --------------------------------------------------------------------------------------------

def _hierarchy_metric_inputs(original, released, hierarchies, quasi_identifiers, levels,
                             backend):
    """``(qids, backend, level of each QID)`` of a hierarchy-based metric's arguments."""
    qids = column_list(quasi_identifiers)
    _check_frames(original, released, qids)
    return qids, _backend(backend), _levels(released, hierarchies, qids, levels)


def precision(original: pd.DataFrame, released: pd.DataFrame,
              hierarchies: Mapping[str, Hierarchy], quasi_identifiers: Sequence[str], *,
              levels: Mapping[str, int] | None = None, backend: Backend | str = "cpu") -> float:
    r"""Sweeney's precision Prec of a full-domain release (Sweeney 2002, "Achieving
    k-anonymity privacy protection using generalization and suppression", IJUFKS 10(5)).

    .. math:: \mathrm{Prec} = 1 - \frac{1}{q N} \sum_{i=1}^{q} \sum_{r}
              \frac{\mathrm{level}_i(r)}{\mathrm{height}_i}

    ``level_i(r)`` is the level of QID ``i`` in the release (:func:`released_levels`, or
    ``levels``) for kept records and the top level for suppressed records (all QIDs ``'*'``, or
    missing from a ``drop`` release: ``N = len(original)``).  A QID whose hierarchy has height 0
    costs 0 on kept records and 1 on suppressed ones.  This is exactly
    ``1 - `` ARX's precision loss (``Metric.createPrecisionMetric()``, the engine's
    ``metric='precision'``).

    Returns
    -------
    float in [0, 1] (1: nothing generalized).
    """
    qids, be, lv = _hierarchy_metric_inputs(original, released, hierarchies, quasi_identifiers,
                                            levels, backend)
    xp, n = be.xp, len(original)
    star = be.asarray(suppressed_rows(released, qids))
    n_sup = be.scalar(xp.sum(star.astype(xp.int64))) + (n - len(released))
    share = generalization_shares([lv[q] for q in qids], [hierarchies[q].height for q in qids])
    return 1.0 - float(precision_loss(share, float(n_sup), n)[0])


#: the definitions :func:`iloss` follows
ILOSS_DEFINITIONS = ("xiao-tao", "arx")


def iloss(original: pd.DataFrame, released: pd.DataFrame, hierarchies: Mapping[str, Hierarchy],
          quasi_identifiers: Sequence[str],
          weights: Mapping[str, float] | Sequence[float] | None = None, *,
          levels: Mapping[str, int] | None = None, definition: str = "xiao-tao",
          backend: Backend | str = "cpu") -> float:
    r"""Information loss ILoss of a release.

    ``definition="xiao-tao"`` (the default) follows Xiao & Tao (2006, "Personalized privacy
    preservation", SIGMOD, Section 6): a generalized value ``v`` of attribute ``A`` loses

    .. math:: \mathrm{ILoss}(v) = \frac{|\mathrm{leaves}(v)| - 1}{|D_A|}

    (``leaves(v)``: the leaves of ``A``'s hierarchy under ``v``; ``D_A``: all its leaves), a
    record the weighted sum over its QIDs and the table the **sum** over its records:

    .. math:: \mathrm{ILoss}(T^*) = \sum_r \sum_i w_i \,
              \frac{|\mathrm{leaves}(v_i(r))| - 1}{|D_i|}

    with ``w_i = 1`` by default.  An ungeneralized value loses 0; a suppressed value (``'*'``,
    the whole domain) loses ``(|D_i| - 1)/|D_i|``, as does every QID of a record left out of a
    ``drop`` release (``N = len(original)`` records are counted).  The result grows with the
    number of records and lies in ``[0, N sum_i w_i)``.

    ``definition="arx"`` is the normalized loss metric LM of Iyengar (2002, "Transforming data
    to satisfy privacy constraints", KDD), as gpuppdp computed ILoss before and as ARX's loss
    metrics normalize it: per value ``(|leaves(v)| - 1)/(|D_i| - 1)`` (so a suppressed value
    loses exactly 1, and a one-leaf domain 0), **averaged** over the records, with weights
    ``1/q`` by default so the result lies in [0, 1].  The two differ by the denominator
    (``|D|`` against ``|D| - 1``), by sum against mean over records, and by the default
    weights: with the same weights, each QID's term of ``xiao-tao`` is ``N (|D_i| - 1)/|D_i|``
    times its term of ``arx``.

    ``weights``: a mapping or a sequence in ``quasi_identifiers`` order.
    """
    if definition not in ILOSS_DEFINITIONS:
        raise InputError(f"definition must be one of {', '.join(ILOSS_DEFINITIONS)}, got "
                         f"{definition!r}")
    arx = definition == "arx"
    qids, be, lv = _hierarchy_metric_inputs(original, released, hierarchies, quasi_identifiers,
                                            levels, backend)
    xp, n = be.xp, len(original)
    if weights is None:
        w = np.full(len(qids), 1.0 / len(qids) if arx else 1.0)
    elif isinstance(weights, Mapping):
        w = np.array([float(weights[q]) for q in qids])
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if len(w) != len(qids):
            raise InputError(f"weights: {len(w)} values for {len(qids)} QIDs")
    gen, star = _gen_codes(released, hierarchies, qids, lv, be)
    n_dropped = n - len(released)
    total = 0.0
    for j, q in enumerate(qids):  # a loop over attributes only
        h = hierarchies[q]
        dom = len(h.leaves)
        denominator = dom - 1.0 if arx else float(dom)
        if denominator > 0:
            cost = (h.label_row_counts(lv[q]) - 1.0) / denominator
            top = (dom - 1.0) / denominator            # the whole domain: suppressed
        else:                                          # arx: a one-leaf domain loses 0
            cost, top = np.zeros(len(h.labels(lv[q]))), 0.0
        cost = be.asarray(np.append(cost, top))        # last: suppressed
        idx = xp.where(gen[j] < 0, len(cost) - 1, gen[j])
        s = be.scalar(xp.sum(cost[idx])) if len(released) else 0.0
        total += w[j] * (s + n_dropped * top)
    return float(total / n) if arx else float(total)


def granularity(released: pd.DataFrame, hierarchies: Mapping[str, Hierarchy],
                quasi_identifiers: Sequence[str], *, input_rows: int | None = None) -> dict:
    r"""ARX's granularity of a release (``StatisticsQuality.getGranularity()``, the loss
    measure of Iyengar 2002 per cell), label by label, so any release is measured: full-domain,
    locally recoded (records at different levels), with suppressed cells or records.

    A cell showing label ``v`` of QID ``i`` covers the share ``|leaves(v)| / |D_i|`` of the
    domain (``*``, and every QID of a suppressed record, 1; a label on several levels counts
    at its highest, as ARX's ``QualityDomainShareRaw``); ``r_i`` is its mean over the
    ``input_rows`` records (default ``len(released)``; those missing from a ``drop`` release
    count as suppressed) and ``m_i = 1/|D_i|``.  Returns ``{"granularity": 1 - (mean_i r_i -
    mean_i m_i) / (1 - mean_i m_i), "per_attribute": {QID: 1 - (r_i - m_i) / (1 - m_i)}}``
    (ARX's ``getArithmeticMean(false)`` and ``getValue(attribute)``: 1 is the input itself, 0
    every cell suppressed); ``1 - per_attribute`` is the normalized certainty penalty NCP.
    """
    qids = check_columns("quasi_identifiers", released, quasi_identifiers, "released")
    n = len(released) if input_rows is None else int(input_rows)
    if n < len(released) or n == 0:
        raise InputError(f"input_rows must be at least the release's {len(released)} rows and "
                         f"positive, got {input_rows!r}")
    star = suppressed_rows(released, qids)
    missing = n - len(released)
    r, m = [], []
    for q in qids:  # a loop over attributes; the rows are looked up through their labels
        h = hierarchies[q]
        share: dict[str, float] = {}
        for level in range(h.height + 1):
            share.update(zip(h.labels(level).astype(str).tolist(),
                             (h.label_row_counts(level) / len(h.codes(0))).tolist()))
        share[SUPPRESSED_LABEL] = 1.0
        codes, labels = encode_column(released[q], as_str=True)
        unknown = [v for v in labels.tolist() if v not in share]
        if unknown:
            raise InputError(f"released column {q!r}: {format_values(unknown)} not labels of "
                             "its hierarchy")
        cell = np.array([share[v] for v in labels.tolist()], dtype=np.float64)[codes]
        r.append((float(np.where(star, 1.0, cell).sum()) + missing) / n)
        m.append(1.0 / len(h.codes(0)))
    r_arr, m_arr = np.array(r), np.array(m)
    per = 1.0 - np.clip((r_arr - m_arr) / (1.0 - m_arr), 0.0, 1.0)
    overall = (r_arr.mean() - m_arr.mean()) / (1.0 - m_arr.mean())
    return {"granularity": float(1.0 - min(max(overall, 0.0), 1.0)),
            "per_attribute": {q: float(v) for q, v in zip(qids, per)}}


# --------------------------------------------------------------------------------------------
# class-size metrics
# --------------------------------------------------------------------------------------------

def discernibility(class_sizes, suppressed: int, n: int, *,
                   backend: Backend | str = "cpu") -> float:
    r"""Discernibility metric DM (Bayardo & Agrawal 2005, "Data privacy through optimal
    k-anonymization", ICDE).

    .. math:: \mathrm{DM} = \sum_{E\ \mathrm{kept}} |E|^2 + |\mathrm{suppressed}| \cdot N

    ``class_sizes`` are the sizes of the kept equivalence classes (host or device array),
    ``suppressed`` the number of suppressed records, ``n`` the number of input records.  Equal
    to ARX's ``createDiscernabilityMetric()`` (the engine's ``metric='discernibility'``).

    Examples
    --------
    >>> discernibility([2, 3], 0, 5)
    13.0
    """
    be = _backend(backend)
    xp = be.xp
    sizes = be.asarray(class_sizes).astype(xp.int64)
    return float(dm_metric(be.scalar(xp.sum(sizes * sizes)), suppressed, n))


def average_class_size(class_sizes, k: int, *, backend: Backend | str = "cpu") -> float:
    r"""Normalized average equivalence-class size C_AVG (LeFevre, DeWitt & Ramakrishnan 2006,
    "Mondrian multidimensional k-anonymity", ICDE).

    .. math:: C_{AVG} = \frac{N_{released} / \#\mathrm{classes}}{k}

    ``class_sizes`` are the sizes of the released (kept) classes; ``N_released`` their sum.
    """
    if k <= 0:
        raise InputError(f"k must be positive, got {k!r}")
    be = _backend(backend)
    xp = be.xp
    sizes = be.asarray(class_sizes).astype(xp.int64)
    if int(sizes.shape[0]) == 0:
        raise InputError("no classes")
    return float(be.scalar(xp.sum(sizes))) / int(sizes.shape[0]) / k


# --------------------------------------------------------------------------------------------
# distribution metrics (original and released rows paired)
# --------------------------------------------------------------------------------------------

def _source_rows(original, released) -> tuple[pd.DataFrame, np.ndarray]:
    """``(released table, input position of each released row)``: a
    :class:`~gpuppdp.engine.transform.Release`'s ``source_rows``, else positions ``0..n-1``."""
    if isinstance(released, Release):
        if released.input_rows != len(original):
            raise InputError(f"the release was made from {released.input_rows} rows, the "
                             f"original table has {len(original)}")
        if released.source_rows is not None:
            assert released.data is not None, "a release with source_rows holds its rows"
            if is_cudf_frame(released.data):  # a release on the device, measured on the host
                frame: Any = released.data  # a cuDF frame and a device array: their
                rows: Any = released.source_rows  # explicit copies to the host
                return frame.to_pandas(), rows.get()
            return released.data, np.asarray(released.source_rows, dtype=np.int64)
        released = released.data
    if isinstance(released, pd.DataFrame) and len(released) != len(original):
        raise InputError(f"original ({len(original)} rows) and released ({len(released)} rows) "
                         "cannot be paired by position: pass the Release object (its "
                         "source_rows pair them) or a 'mark' release in input order")
    return released, np.arange(len(original), dtype=np.int64)


def _aligned(original, released, qids) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(original rows in released order, released table)`` of a release of every row."""
    released, src = _source_rows(original, released)
    _check_frames(original, released, qids)
    if len(src) != len(original):
        raise InputError(f"the release holds {len(src)} of the {len(original)} original rows: "
                         "these metrics need every record (a 'mark' release)")
    if not np.array_equal(src, np.arange(len(src))):
        original = original.iloc[src].reset_index(drop=True)
    return original, released


def non_uniform_entropy(original: pd.DataFrame, released: pd.DataFrame | Release,
                        quasi_identifiers: Sequence[str], *,
                        backend: Backend | str = "cpu") -> float:
    r"""Non-uniform entropy (de Waal & Willenborg 1999, "Information loss through global
    recoding and local suppression", Netherlands Official Statistics; Gionis & Tassa 2008,
    "k-Anonymization with minimal loss of information", TKDE), in bits.

    .. math:: \mathrm{NUE} = \sum_r \sum_i -\log_2 P\big(X_i = x_i(r) \mid
              Y_i = y_i(r)\big)

    ``x_i(r)`` is the original and ``y_i(r)`` the released value of QID ``i`` of record ``r``
    (rows paired by the Release's ``source_rows``, or by position); ``P(x | y)`` is the share
    of records released as ``y`` whose original value is ``x``.  Suppressed ``'*'`` values are
    generalized values like any other.  0 when nothing is generalized.
    """
    qids = column_list(quasi_identifiers)
    original, released = _aligned(original, released, qids)
    be = _backend(backend)
    xp = be.xp
    total = 0.0
    for q in qids:
        o, ou = encode_column(original[q])
        g, gu = encode_column(released[q])
        o, g = be.asarray(o.astype(np.int64)), be.asarray(g.astype(np.int64))
        joint, joint_sizes = _classes_encoded([g, o], [len(gu), len(ou)], be)
        joint_count = joint_sizes[joint]
        gen_count = xp.bincount(g)[g]
        total += float(be.scalar(-xp.sum(xp.log2(joint_count / gen_count))))
    return total + 0.0


def kl_divergence(original: pd.DataFrame, released: pd.DataFrame | Release,
                  quasi_identifiers: Sequence[str], *,
                  backend: Backend | str = "cpu") -> float:
    r"""KL divergence between the original distribution of QID tuples and the one the release
    implies (Kifer & Gehrke 2006, "Injecting utility into anonymized datasets", SIGMOD), in
    nats.

    .. math:: \mathrm{KL}(P \| Q) = \sum_t P(t) \ln \frac{P(t)}{Q(t)}, \qquad
              Q(t) = \sum_{E \ni t} \frac{|E|}{N} \frac{1}{d_E}

    ``P`` is the empirical distribution of the original QID tuples ``t``; each released class
    ``E`` (distinct released QID tuple, suppressed ``'*'`` rows forming one class) spreads its
    mass ``|E|/N`` *uniformly over the d_E distinct original tuples of its records* (rows paired
    as in :func:`non_uniform_entropy`) -- not over every leaf cell its generalized tuple covers
    in the hierarchies, so no hierarchies are needed and the result does not depend on the size
    of the domains.  0 when nothing is generalized.
    """
    qids = column_list(quasi_identifiers)
    original, released = _aligned(original, released, qids)
    be = _backend(backend)
    xp = be.xp
    n = len(original)
    t, t_size = _classes_encoded(*encode_columns(original, qids, be), be)
    e, size = _classes_encoded(*encode_columns(released, qids, be), be)
    nt, ne = int(t_size.shape[0]), int(size.shape[0])
    p = t_size / n
    _, rep, _ = groupby.group(xp, [e, t], [ne, nt], order="sorted")  # distinct (class, tuple)
    pe, pt = e[rep], t[rep]
    d = xp.bincount(pe, minlength=ne)  # distinct original tuples per class
    mass = size[pe] / (n * d[pe])
    qt = xp.bincount(pt, weights=mass, minlength=nt)
    return float(be.scalar(xp.sum(p * xp.log(p / qt))))


# --------------------------------------------------------------------------------------------
# privacy and utility losses of records, classes and the release
# --------------------------------------------------------------------------------------------

#: the losses of :func:`privacy_utility_losses`, each with the threshold that bounds it (the
#: thesis's names: epsilon, alpha the privacy losses; delta the distribution and gamma the
#: entropy utility loss)
LOSS_NAMES = {"distribution_privacy_loss": "epsilon", "entropy_privacy_loss": "alpha",
              "distribution_utility_loss": "delta_distribution",
              "entropy_utility_loss": "gamma_entropy"}

_NOT_GIVEN: Any = object()


def utility_thresholds(delta_distribution, gamma_entropy, gamma=_NOT_GIVEN, delta=_NOT_GIVEN,
                       *, stacklevel: int = 3) -> tuple:
    """``(delta_distribution, gamma_entropy)``, the utility-loss bounds by the thesis's names
    (delta bounds the distribution utility loss, gamma the entropy one), from the former
    keywords ``gamma=`` (then the distribution bound) and ``delta=`` (then the entropy bound)
    when those are given: accepted with their former meaning and a ``DeprecationWarning``
    for one release."""
    old = {name: value for name, value in (("gamma", gamma), ("delta", delta))
           if value is not _NOT_GIVEN}
    if not old:
        return delta_distribution, gamma_entropy
    if delta_distribution is not None or gamma_entropy is not None:
        raise InputError("give the utility-loss bounds as delta_distribution= and "
                         "gamma_entropy= only, not with the former gamma= / delta=")
    warnings.warn("gamma= and delta= are renamed to the thesis's names: delta_distribution= "
                  "bounds the distribution utility loss (formerly gamma=), gamma_entropy= the "
                  "entropy utility loss (formerly delta=); the former keywords, with their "
                  "former meaning, go in the next release", DeprecationWarning,
                  stacklevel=stacklevel)
    return old.get("gamma"), old.get("delta")


@dataclass
class PrivacyUtilityLosses:
    """The result of :func:`privacy_utility_losses` (host values).

    ``individual``: one row per released row (same index): its ``class`` (-1 for a suppressed
    row) and the four losses (NaN for a suppressed row); ``classes``: one row per released
    class (its QID values, ``size``, the four losses); ``total``: each loss averaged over the
    released records; ``maximum``: each loss's largest class value; ``thresholds``: the
    thresholds given; ``satisfied``: per threshold given, ``maximum <= threshold``;
    ``suppressed_rows``: rows left out (all QIDs ``'*'``).
    """

    individual: pd.DataFrame
    classes: pd.DataFrame
    total: dict
    maximum: dict
    thresholds: dict
    satisfied: dict
    suppressed_rows: int


def _histograms(classes):
    """The classes' sensitive histograms sorted by (class, value) with ``share = f_v / n``,
    ``start`` offsets, and per class the sum of squared shares and the entropy in bits."""
    xp = classes.xp
    cls, sens, count, start = classes.sensitive_histogram()
    share = count.astype(xp.float64) / classes.size.astype(xp.float64)[cls]
    n = classes.n_classes
    sq = segment_sum(xp, cls, share * share, n)
    return cls, sens, share, start, sq, classes.entropy_bits()


def _pair_distances(be, orig, rel, rel_distinct, pair_o, pair_e, m: int):
    """Euclidean distance between the sensitive distributions of original class ``pair_o[i]``
    and released class ``pair_e[i]``, for every pair ``i``: the values of the original class
    are walked (one entry per pair and value), those of the released class looked up."""
    xp = be.xp
    o_cls, o_sens, o_share, o_start, _, _ = orig
    e_cls, e_sens, e_share, _, e_sq, _ = rel
    n_pairs = int(pair_o.shape[0])
    width = o_start[pair_o + 1] - o_start[pair_o]            # >= 1 value per class
    offset = xp.cumsum(width) - width
    total = int(be.scalar(xp.sum(width)))
    step = xp.zeros(total, dtype=xp.int64)
    step[offset[1:]] = 1
    pid = xp.cumsum(step)                                   # the pair of each entry
    entry = o_start[pair_o][pid] + xp.arange(total, dtype=xp.int64) - offset[pid]
    p = o_share[entry]
    e_key = e_cls * m + e_sens                              # ascending
    want = pair_e[pid] * m + o_sens[entry]
    at = xp.minimum(xp.searchsorted(e_key, want), e_key.shape[0] - 1)
    found = e_key[at] == want
    q = xp.where(found, e_share[at], 0.0)
    on_orig = segment_sum(xp, pid, (p - q) ** 2, n_pairs)  # values of the original class
    q_seen = segment_sum(xp, pid, q * q, n_pairs)
    n_seen = xp.bincount(pid[found], minlength=n_pairs)
    # values only the released class holds (none: exactly 0, not a rounding residue)
    rest = xp.where(n_seen == rel_distinct[pair_e], 0.0,
                    xp.maximum(e_sq[pair_e] - q_seen, 0.0))
    return xp.sqrt(on_orig + rest)


def privacy_utility_losses(original: pd.DataFrame, released: pd.DataFrame | Release,
                           quasi_identifiers: Sequence[str], sensitive: str, *,
                           prior: Mapping | None = None, epsilon: float | None = None,
                           alpha: float | None = None,
                           delta_distribution: float | None = None,
                           gamma_entropy: float | None = None, reference: str = "record",
                           basis: str = "class", backend: Backend | str = "cpu",
                           gamma=_NOT_GIVEN, delta=_NOT_GIVEN) -> PrivacyUtilityLosses:
    r"""Privacy and utility losses of every record, class and the whole release, measured on
    the distribution of the ``sensitive`` attribute.

    *Privacy losses* (the (epsilon, alpha) privacy-loss model, computed by
    :class:`gpuppdp.models.PrivacyLoss` as :func:`gpuppdp.analysis.checker.check` does): a
    released class ``E`` loses ``||p_E - q||_2`` (distribution) and ``|H(q) - H(p_E)|``
    (entropy, bits) against the ``prior`` ``q`` (by default the distribution over the released
    rows); a record loses what its class loses.

    *Utility losses*, as the privacy/utility-loss work defines them (``reference="record"``,
    the default): a record ``r`` with sensitive value ``s(r)`` in released class ``E(r)``
    loses what its class blurs of its own value,

    .. math:: u_D(r) = \lVert \mathbb{1}_{s(r)} - p_{E(r)} \rVert_2, \qquad
              u_H(r) = \lvert H(\mathbb{1}_{s(r)}) - H(p_{E(r)}) \rvert = H(p_{E(r)})
              \ \text{(bits)},

    so a class of two records with two values loses 0.707 and 1.0 whatever the original QIDs
    (the worked example: the 4-anonymous inpatient table of Machanavajjhala et al. 2006,
    "l-Diversity: privacy beyond k-anonymity", ICDE: class losses [0.707, 0.77, 0]).
    ``reference="original-class"`` measures instead against the record's original class
    ``O(r)`` (the original records with the same *ungeneralized* QID values):
    ``||p_O(r) - p_E(r)||_2`` and ``|H(p_O(r)) - H(p_E(r))|``, so that a release equal to the
    original loses 0 (the two agree when the original QIDs are unique).  A class loses the mean
    of its records' losses; the release (``total``) the mean over all released records.

    Thresholds: ``epsilon`` / ``alpha`` bound the distribution / entropy privacy loss,
    ``delta_distribution`` / ``gamma_entropy`` the distribution / entropy utility loss (the
    thesis's delta and gamma; the former ``gamma=`` / ``delta=``, which bounded the
    distribution / entropy utility loss, are accepted with a ``DeprecationWarning`` for one
    release); on ``basis="class"`` (the
    default) every class's loss (the largest, ``maximum``) must stay within the bound, on
    ``basis="total"`` the release's mean (``total``); each given threshold gets a flag in
    ``satisfied``.

    Rows paired as in :func:`non_uniform_entropy` (a :class:`~gpuppdp.engine.transform.Release`'s
    ``source_rows``, else by position; the rows of a ``drop`` release are paired through its
    ``source_rows``); released rows whose QIDs are all ``'*'`` are left out, as in
    :func:`gpuppdp.analysis.checker.check`.  Original classes are taken over the whole original
    table.
    """
    qids = column_list(quasi_identifiers)
    delta_distribution, gamma_entropy = utility_thresholds(delta_distribution, gamma_entropy,
                                                           gamma, delta)
    thresholds = {"epsilon": epsilon, "alpha": alpha, "delta_distribution": delta_distribution,
                  "gamma_entropy": gamma_entropy}
    _check_loss_options(qids, sensitive, reference, basis, thresholds)
    released, src = _source_rows(original, released)
    _check_frames(original, released, qids + [sensitive])
    be = _backend(backend)

    star = suppressed_rows(released, qids)
    kept = released.loc[~star, qids + [sensitive]].reset_index(drop=True)
    src = src[~star]
    if len(kept) == 0:
        raise InputError(f"no rows to measure: all {len(released)} released rows are "
                         "suppressed (all quasi-identifiers '*')")
    rel_sens, orig_sens, labels = _paired_sensitive(kept, original, sensitive, src, star)
    m = len(labels)
    e_host, first = _class_ids(kept, qids)
    o_host, _ = _class_ids(original, qids)
    rel = classes_of_rows(be, e_host, rel_sens, m)
    orig = classes_of_rows(be, o_host, orig_sens, m)
    dist_priv, ent_priv = PrivacyLoss(sensitive, 1.0, 1.0, prior=prior).bind(
        sensitive_table(be, sensitive, rel_sens, labels[:int(rel_sens.max()) + 1])).losses(rel)
    e = be.asarray(e_host)
    dist_util, ent_util = _utility_losses(be, rel, orig, e, be.asarray(o_host[src]), rel_sens,
                                          m, reference)

    per_record = {"distribution_privacy_loss": dist_priv[e], "entropy_privacy_loss": ent_priv[e],
                  "distribution_utility_loss": dist_util, "entropy_utility_loss": ent_util}
    size, n_e = rel.size.astype(be.xp.float64), rel.n_classes
    per_class = {"distribution_privacy_loss": dist_priv, "entropy_privacy_loss": ent_priv,
                 "distribution_utility_loss": segment_sum(be.xp, e, dist_util, n_e) / size,
                 "entropy_utility_loss": segment_sum(be.xp, e, ent_util, n_e) / size}
    classes = kept.loc[first, qids].reset_index(drop=True)
    classes["size"] = be.to_host(rel.size)
    return _losses_result(be, released, star, e_host, classes, per_record, per_class,
                          thresholds, basis)


def _check_loss_options(qids: list[str], sensitive: str, reference: str, basis: str,
                        thresholds: dict) -> None:
    """The options of :func:`privacy_utility_losses`, each named in its error."""
    check_attribute("sensitive", sensitive, qids)
    if reference not in ("record", "original-class"):
        raise InputError(f"reference must be 'record' or 'original-class', got {reference!r}")
    if basis not in ("class", "total"):
        raise InputError(f"basis must be 'class' or 'total', got {basis!r}")
    for name, value in thresholds.items():
        if value is not None and not float(value) >= 0:
            raise InputError(f"{name} must be a number >= 0, got {value!r}")


def _paired_sensitive(kept: pd.DataFrame, original: pd.DataFrame, sensitive: str,
                      src: np.ndarray, star: np.ndarray) -> tuple:
    """The sensitive codes of the kept released rows and of the original rows in one code
    space (the release's values first) and its labels; refuses rows that are not paired."""
    codes, labels = encode_column(pd.concat([kept[sensitive], original[sensitive]],
                                            ignore_index=True), as_str=True)
    codes = codes.astype(np.int64)
    rel_sens, orig_sens = codes[:len(kept)], codes[len(kept):]
    bad = np.flatnonzero(orig_sens[src] != rel_sens)
    if len(bad):
        raise InputError(f"released row {int(np.flatnonzero(~star)[bad[0]])} does not hold the "
                         f"{sensitive!r} value of original row {int(src[bad[0]])}: the rows are "
                         "not paired (pass the Release object, or a release in input order)")
    return rel_sens, orig_sens, labels


def _utility_losses(be: Backend, rel, orig, e, o, rel_sens: np.ndarray, m: int,
                    reference: str) -> tuple:
    """Each released record's distribution and entropy utility loss: against a point mass on
    its own value (``reference="record"``) or against its original class."""
    xp = be.xp
    rel_hist = _histograms(rel)
    e_cls, e_sens, e_share, _, e_sq, rel_bits = rel_hist
    if reference == "record":
        own = e_share[xp.searchsorted(e_cls * m + e_sens, e * m + be.asarray(rel_sens))]
        return xp.sqrt(xp.maximum(1.0 - 2.0 * own + e_sq[e], 0.0)), rel_bits[e]
    pair, rep, _ = groupby.group(xp, [o, e], [orig.n_classes, rel.n_classes], order="sorted")
    orig_hist = _histograms(orig)
    dist = _pair_distances(be, orig_hist, rel_hist, rel.distinct, o[rep], e[rep], m)[pair]
    return dist, xp.abs(orig_hist[-1][o] - rel_bits[e])


def _losses_result(be: Backend, released: pd.DataFrame, star: np.ndarray, e_host: np.ndarray,
                   classes: pd.DataFrame, per_record: dict, per_class: dict, thresholds: dict,
                   basis: str) -> PrivacyUtilityLosses:
    """Per-record table, per-class table, release means and maxima, and the threshold flags."""
    xp = be.xp
    individual = pd.DataFrame(index=released.index)
    cls_col = np.full(len(released), -1, dtype=np.int64)
    cls_col[~star] = e_host
    individual["class"] = cls_col
    total, maximum = {}, {}
    for name in LOSS_NAMES:
        values = np.full(len(released), np.nan)
        values[~star] = be.to_host(per_record[name])
        individual[name] = values
        classes[name] = be.to_host(per_class[name])
        total[name] = float(be.scalar(xp.mean(per_record[name])))
        maximum[name] = float(be.scalar(xp.max(per_class[name])))
    measured = maximum if basis == "class" else total
    satisfied = {t: measured[name] <= float(thresholds[t]) for name, t in LOSS_NAMES.items()
                 if thresholds[t] is not None}
    return PrivacyUtilityLosses(individual, classes, total, maximum,
                                {t: v for t, v in thresholds.items() if v is not None},
                                satisfied, int(star.sum()))
