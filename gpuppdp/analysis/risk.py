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
from ..engine.transform import all_suppressed, suppressed_rows
from ..errors import InputError, InputTypeError
from ..progress import Steps
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


def zayatz_uniques(hist: np.ndarray, population_size: float) -> float:
    """Zayatz's (1991) estimate of the number of population uniques.

    ``hist[s]`` is the number of sample classes of size ``s``.  The probability that a class of
    size ``K`` in the population shows exactly one record in a sample of ``n`` drawn from ``N``
    (hypergeometric) is ``K (n/N) prod_{i=1}^{K-1} (N-n-i+1)/(N-i)``, evaluated in log space.
    """
    hist = np.asarray(hist, dtype=np.float64)
    sizes = np.arange(len(hist), dtype=np.float64)
    n = float((sizes * hist).sum())
    u = float(hist.sum())
    c1 = float(hist[1]) if len(hist) > 1 else 0.0
    if c1 == 0:
        return 0.0
    N = float(population_size)
    kmax = len(hist) - 1
    i = np.arange(1, max(kmax, 1), dtype=np.float64)  # 1..kmax-1
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.log1p(-(n - 1.0) / (N - i))  # log((N-n-i+1)/(N-i))
    logprod = np.concatenate([[0.0, 0.0], np.cumsum(terms)])[:kmax + 1]  # index K: sum to K-1
    with np.errstate(divide="ignore"):
        logp = np.log(np.maximum(sizes, 1.0)) + math.log(n / N) + logprod
    p1 = np.where(sizes >= 1, np.exp(logp), 0.0)
    temp = float((hist / u * p1).sum())
    cond = (c1 / u) * (n / N) / temp
    return c1 * cond / (n / N)


#: Scale factors of the starts of the Pitman solver: the initial guess itself, then an 8 x 8
#: grid over [-1, 1]^2 (ARX restarts from random factors in that square)
_PITMAN_RESTARTS = [(1.0, 1.0)] + [(float(x), float(y)) for x in np.linspace(1, -1, 8)
                                   for y in np.linspace(1, -1, 8)]


def pitman_uniques(hist: np.ndarray, population_size: float, *, max_iter: int = 200,
                   tol: float = 1e-12) -> float:
    """Pitman's model (Hoshino 2001): the number of population uniques, or NaN when the
    maximum-likelihood equations have no usable solution.

    The likelihood equations in ``(theta, alpha)`` are solved with Newton's method from ARX's
    initial guess, and where that fails (or leaves ``theta >= 0``, ARX's constraint) from the
    guess scaled by the factors of ``_PITMAN_RESTARTS`` in turn, as ARX restarts from random
    ones; the estimate is ``Gamma(theta+1)/Gamma(theta+alpha) * N**alpha``.
    """
    hist = np.asarray(hist, dtype=np.float64)
    sizes = np.arange(len(hist), dtype=np.float64)
    n = float((sizes * hist).sum())
    u = float(hist.sum())
    c1 = float(hist[1]) if len(hist) > 1 else 0.0
    c2 = float(hist[2]) if len(hist) > 2 else 0.0
    if c1 == 0:
        return 0.0
    N = float(population_size)
    c2 = c2 if c2 != 0 else 1.0
    c = c1 * (c1 - 1) / c2
    if 2 * c1 * u + c1 * c - n * c == 0:  # no initial guess (Java: a NaN, no solution)
        return float("nan")
    t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a = (t * (c1 - n) + (n - 1) * c1) / (n * u)

    iu = np.arange(1, int(u), dtype=np.float64)  # 1..u-1
    iu2 = iu * iu
    jn = np.arange(1, int(n), dtype=np.float64)  # 1..n-1
    # m[j] = number of classes larger than j, for j = 1..max size - 1
    m = u - np.cumsum(hist)[1:-1] if len(hist) > 2 else np.zeros(0)
    jm = np.arange(1, len(m) + 1, dtype=np.float64)

    def equations(t, a):
        r = 1.0 / (t + iu * a)
        r2 = r * r
        s = 1.0 / (t + jn)
        q = 1.0 / (jm - a)
        f = np.array([r.sum() - s.sum(), (iu * r).sum() - (m * q).sum()])
        d5 = (iu * r2).sum()
        jac = np.array([[(s * s).sum() - r2.sum(), -d5],
                        [-d5, -(iu2 * r2).sum() - (m * q * q).sum()]])
        return f, jac

    def solve(t, a):
        """Newton's method from ``(t, a)``; ``None`` when it fails or leaves ``theta >= 0``."""
        with np.errstate(all="ignore"):
            for _ in range(max_iter):
                if not (math.isfinite(t) and math.isfinite(a)) or t < 0:
                    return None
                f, jac = equations(t, a)
                if not np.all(np.isfinite(f)) or not np.all(np.isfinite(jac)):
                    return None
                det = jac[0, 0] * jac[1, 1] - jac[0, 1] * jac[1, 0]
                if det == 0:
                    return None
                dt = (f[0] * jac[1, 1] - f[1] * jac[0, 1]) / det
                da = (jac[0, 0] * f[1] - jac[1, 0] * f[0]) / det
                t, a = t - dt, a - da
                if abs(dt) <= tol * max(1.0, abs(t)) and abs(da) <= tol * max(1.0, abs(a)):
                    return (t, a) if t >= 0 else None
        return None

    # ARX's solver restarts a failed try from the initial guess scaled by random factors in
    # [-1, 1] (NewtonRaphson2D); here by the fixed factors of _PITMAN_RESTARTS, in order
    for scale_t, scale_a in _PITMAN_RESTARTS:
        found = solve(scale_t * t, scale_a * a)
        if found is not None:
            break
    else:
        return float("nan")
    t, a = found
    if not math.isfinite(t) or not math.isfinite(a) or a == 0:
        return float("nan")
    try:
        val = math.exp(math.lgamma(t + 1.0) - math.lgamma(t + a) + a * math.log(N))
    except (ValueError, OverflowError):
        return float("nan")
    return val if 0.0 <= val <= N else float("nan")


#: Starts ``(alpha, beta)`` of the SNB solver: a deterministic 8 x 8 grid over ``(0, 1)^2``
#: in place of ARX's random restarts from the same square.
_SNB_STARTS = np.stack(np.meshgrid((np.arange(8) + 0.5) / 8, (np.arange(8) + 0.5) / 8,
                                   indexing="ij"), -1).reshape(-1, 2)
_SNB_STEPS = 0.5 ** np.arange(31)  # step lengths tried by the line search


def _snb_classes(hist: np.ndarray, f: float, variant: str) -> float:
    """Number ``K`` of non-empty population classes: Haas et al.'s (1995) second Shlosser
    estimator ``d + c1 * A/B * (C/D)**2`` with ``A = sum_i i q^2 (1-q^2)^(i-1) f_i``,
    ``B = sum_i (1-q)^i ((1+q)^i - 1) f_i``, ``C = sum_i (1-q)^i f_i`` and
    ``D = sum_i i q (1-q)^(i-1) f_i`` (``f_i`` classes of size ``i``, ``q`` the sampling
    fraction).  ARX (``ModelSNB.estimateNonEmptyEquivalenceClasses``) computes ``B`` as
    ``sum_i ((1-q)^i (1+q)^i f_i - 1)`` over the class sizes present, which ``"arx"`` keeps."""
    i = np.flatnonzero(hist)
    i = i[i > 0]
    fi = hist[i]
    i = i.astype(np.float64)
    classes = fi.sum()
    a = (i * f * f * (1.0 - f * f) ** (i - 1.0) * fi).sum()
    c = ((1.0 - f) ** i * fi).sum()
    if variant == "arx":
        b = ((1.0 - f) ** i * fi * (1.0 + f) ** i).sum() - len(i)
    else:
        b = ((1.0 - f) ** i * ((1.0 + f) ** i - 1.0) * fi).sum()
    d = (i * f * (1.0 - f) ** (i - 1.0) * fi).sum()
    return float(classes + hist[1] * (a / b) * (c / d) ** 2)


def _snb_system(a, b, q, k, f, s, jacobian=False):
    """Left-hand sides of the SNB equations at ``(alpha, beta) = (a, b)`` (``q = 1 - b``),
    and with ``jacobian`` their derivatives by ``a`` and ``b``."""
    d = (1.0 - f) * q
    e = 1.0 - d
    h = 1.0 + a * d / e
    g1 = k * f * (b / e) ** a
    m = 2.0 - (1.0 - a) * d
    g2 = k * f * f / 2.0 * b ** a * e ** (s * (a + 2.0))
    lhs = (g1 * h, g2 * a * q * m)
    if not jacobian:
        return lhs
    return lhs, (g1 * (np.log(b / e) * h + d / e),
                 g1 * a * ((1.0 / b - (1.0 - f) / e) * h - (1.0 - f) / (e * e)),
                 g2 * q * (m + a * m * (np.log(b) + s * np.log(e)) + a * d),
                 g2 * a * (-m + q * (a * m / b + (1.0 - a) * (1.0 - f)
                                     + s * (a + 2.0) * (1.0 - f) * m / e)))


def snb_uniques(hist: np.ndarray, population_size: float, *, variant: str = "arx",
                max_iter: int = 200, tol: float = 1e-6) -> float:
    """The SNB model (Chen & Keller-McNulty 1998): the number of population uniques, or NaN
    when its equations have no solution.

    Population class sizes are ``1 + NegBin(alpha, beta)`` over ``K`` non-empty classes
    (:func:`_snb_classes`), sampled with fraction ``f = n/N``.  With ``d = (1-f)(1-beta)``
    the expected numbers of sample classes of size 1 and 2 are matched to ``c1``, ``c2``::

        K f (beta/(1-d))**alpha (1 + alpha d/(1-d))                              = c1
        K f^2/2 alpha (1-beta) beta**alpha (2 - (1-alpha) d) (1-d)**(s (alpha+2)) = c2

    and the estimate is ``K beta**alpha``.  ``variant="chen"`` is the paper's model
    (``s = -1``); ``"arx"`` (the default) reproduces ARX's ``ModelSNB``, which multiplies by
    ``(1-d)**(alpha+2)`` (``s = +1``) and uses its form of ``K``: on the adult data with the
    US population it has no solution, as in ARX.

    The equations are solved to ARX's accuracy (``|lhs - c| <= tol``) by a damped Newton
    method in ``(log alpha, logit beta)``, which keeps ``alpha > 0`` and ``0 < beta < 1``, from
    the starts ``_SNB_STARTS`` all at once (``max_iter`` steps); the first start in that order
    that converges gives the estimate.  ARX runs plain Newton steps from random starts in the
    same square and takes the first that converges, so where the equations have several
    admissible roots ARX may report any of them.
    """
    if variant not in ("arx", "chen"):
        raise InputError(f"variant must be 'arx' or 'chen', got {variant!r}")
    hist = np.asarray(hist, dtype=np.float64)
    sizes = np.arange(len(hist), dtype=np.float64)
    n = float((sizes * hist).sum())
    c1 = float(hist[1]) if len(hist) > 1 else 0.0
    c2 = float(hist[2]) if len(hist) > 2 else 0.0
    if c1 == 0:
        return 0.0
    f = n / float(population_size)
    s = 1.0 if variant == "arx" else -1.0
    w1, w2 = 1.0 / c1, 1.0 / max(c2, 1.0)  # residual weights of the line search

    def params(u, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.exp(u), 1.0 / (1.0 + np.exp(-v)), 1.0 / (1.0 + np.exp(v))

    with np.errstate(all="ignore"):
        k = _snb_classes(hist, f, variant)
        u, v = np.log(_SNB_STARTS[:, 0]), np.log(_SNB_STARTS[:, 1] / (1.0 - _SNB_STARTS[:, 1]))
        alive = np.ones(len(u), dtype=bool)
        done = np.zeros(len(u), dtype=bool)
        for _ in range(max_iter):
            a, b, q = params(u, v)
            (l1, l2), (j11, j12, j21, j22) = _snb_system(a, b, q, k, f, s, jacobian=True)
            r1, r2 = l1 - c1, l2 - c2
            done |= alive & (np.abs(r1) <= tol) & (np.abs(r2) <= tol)
            alive &= ~done & np.isfinite(r1) & np.isfinite(r2)
            if not alive.any():
                break
            j11, j21 = j11 * a, j21 * a  # chain rule: d/du = a d/da, d/dv = b q d/db
            j12, j22 = j12 * b * q, j22 * b * q
            det = j11 * j22 - j12 * j21
            du, dv = (r1 * j22 - r2 * j12) / det, (j11 * r2 - j21 * r1) / det
            # backtracking: the longest step of _SNB_STEPS that lowers the weighted residual
            ut, vt = u[:, None] - _SNB_STEPS * du[:, None], v[:, None] - _SNB_STEPS * dv[:, None]
            t1, t2 = _snb_system(*params(ut, vt), k, f, s)
            phi = (w1 * r1) ** 2 + (w2 * r2) ** 2
            phit = (w1 * (t1 - c1)) ** 2 + (w2 * (t2 - c2)) ** 2
            better = phit < (1.0 - 1e-4 * _SNB_STEPS) * phi[:, None]
            step = better.argmax(axis=1)
            alive &= better.any(axis=1)
            rows = np.flatnonzero(alive)
            u[rows], v[rows] = ut[rows, step[rows]], vt[rows, step[rows]]
        a, b, _ = params(u, v)
        est = k * b ** a
    ok = np.flatnonzero(done & np.isfinite(est))
    return float(est[ok[0]]) if len(ok) else float("nan")


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
    (classes, survey weights, SUDA2, population uniqueness, attribute risks)."""
    backend = get_backend(backend)
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
