"""Population uniqueness estimators: how many records of a sample are unique in the population,
estimated from the sample's class-size histogram alone (Zayatz 1991; Pitman's model, Hoshino
2001; the slide negative binomial, Chen and Keller-McNulty 1998), as ARX's
``RiskModelPopulationUniqueness`` computes them.  The privacy model
:class:`gpuppdp.models.PopulationUniqueness` bounds them in the search; the risk measures
(:func:`gpuppdp.analysis.risk.population_uniqueness`) report them.

The estimators are compiled (Numba) functions of the histogram ``hist[s]`` (classes of size
``s``): their cost does not depend on the number of records.  They allocate nothing (the
caller hands in the scratch, :func:`estimator_work`), so the compiled Flash judges the model
inside its own loop (:mod:`gpuppdp.engine.search.flash_risk`).  Pitman's sums over ``j < n``
are differences of the digamma and trigamma functions (:func:`_harmonic`), its sums over the
class sizes run per run of equal ``m_j``, and its sums over the classes are digamma forms too
(:func:`_shifted`), or power series in ``alpha/theta`` where those would cancel; the SNB
solver steps one start at a time.
:func:`unique_share_fulfilled` is the model's verdict on one node's classes;
:func:`population_shares` judges many nodes in one call (the batched evaluator's
:class:`~gpuppdp.models.PopulationUniqueness`).
"""

from __future__ import annotations

import math

import numpy as np
from ..errors import InputError
from .aot import ahead_of_time
from .nrt import njit_no_refcount

__all__ = ["zayatz_uniques", "pitman_uniques", "snb_uniques", "population_shares",
           "unique_share_fulfilled", "estimator_work", "ESTIMATOR_CODES"]

#: the estimators' codes in :func:`population_shares` (Dankar et al.'s 2012 rule last)
ESTIMATOR_CODES = {"pitman": 0, "zayatz": 1, "snb": 2, "dankar": 3}

#: Bernoulli numbers B_2, B_4, ..., B_14 of the asymptotic series of digamma and trigamma
_BERNOULLI = np.array([1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6])
#: where the asymptotic series take over (the next term is below 1e-19 there)
_ASYMPTOTIC_FROM = 16.0

_compiled = njit_no_refcount(error_model="numpy")


@_compiled
def _harmonic(x, m, power):
    """``sum_{i=0}^{m-1} (x+i)**-power`` for ``x >= 0`` and ``power`` 1 or 2: the terms below
    ``_ASYMPTOTIC_FROM`` summed, the rest as ``psi(z) - psi(y)`` (power 1) or
    ``psi'(y) - psi'(z)`` (power 2) from their asymptotic series (Abramowitz & Stegun 6.3.18,
    6.4.12), each written as a difference so that nothing cancels."""
    acc = 0.0
    i = 0
    while i < m and x + i < _ASYMPTOTIC_FROM:
        acc += 1.0 / (x + i) ** power
        i += 1
    if i == m:
        return acc
    y, d = x + i, float(m - i)
    z = y + d
    if power == 1:  # log(z/y) - (1/(2z) - 1/(2y)) - sum_k B_2k/(2k) (z^-2k - y^-2k)
        acc += math.log1p(d / y) + d / (2.0 * y * z)
        for k in range(len(_BERNOULLI)):
            e = 2 * (k + 1)
            acc -= _BERNOULLI[k] / e * (z ** -e - y ** -e)
        return acc
    # (1/y - 1/z) + (1/(2y^2) - 1/(2z^2)) + sum_k B_2k (y^-(2k+1) - z^-(2k+1))
    acc += d / (y * z) + d * (y + z) / (2.0 * y * y * z * z)
    for k in range(len(_BERNOULLI)):
        e = 2 * (k + 1) + 1
        acc += _BERNOULLI[k] * (y ** -e - z ** -e)
    return acc


@_compiled
def _shifted(x, m, power):
    """``sum_{i=1}^{m} (x+i)**-power`` for any ``x`` (power 1 or 2): by :func:`_harmonic`, the
    terms with ``x + i < 0`` (alpha < 0 in Pitman's sums) mirrored to positive arguments; a
    term at a pole is infinite, as summed term by term."""
    if not x < -1.0:
        return _harmonic(x + 1.0, m, power)
    below = min(m, math.ceil(-x) - 1)  # the terms with x + i < 0
    out = _harmonic(-x - below, below, power) * (-1.0 if power == 1 else 1.0)
    if m > below:
        out += _harmonic(x + below + 1.0, m - below, power)
    return out


@_compiled
def _totals(hist):
    """``(n, u, c1, c2)``: records, classes, classes of size 1 and 2."""
    n = 0.0
    u = 0.0
    for s in range(len(hist)):
        n += s * hist[s]
        u += hist[s]
    c1 = hist[1] if len(hist) > 1 else 0.0
    c2 = hist[2] if len(hist) > 2 else 0.0
    return n, u, c1, c2


@_compiled
def _zayatz(hist, big):
    n, u, c1, _ = _totals(hist)
    if c1 == 0:
        return 0.0
    log_fraction = math.log(n / big)
    temp = 0.0
    log_prod = 0.0  # log prod_{i=1}^{K-1} (N-n-i+1)/(N-i)
    for size in range(1, len(hist)):
        if size >= 2:
            log_prod += math.log1p(-(n - 1.0) / (big - (size - 1)))
        if hist[size] != 0:
            temp += hist[size] / u * math.exp(math.log(size) + log_fraction + log_prod)
    cond = (c1 / u) * (n / big) / temp
    return c1 * cond / (n / big)


def zayatz_uniques(hist: np.ndarray, population_size: float) -> float:
    """Zayatz's (1991) estimate of the number of population uniques.

    ``hist[s]`` is the number of sample classes of size ``s``.  The probability that a class of
    size ``K`` in the population shows exactly one record in a sample of ``n`` drawn from ``N``
    (hypergeometric) is ``K (n/N) prod_{i=1}^{K-1} (N-n-i+1)/(N-i)``, evaluated in log space.
    """
    return float(_zayatz(np.asarray(hist, dtype=np.float64), float(population_size)))


#: Scale factors of the starts of the Pitman solver: the initial guess itself, then an 8 x 8
#: grid over [-1, 1]^2 (ARX restarts from random factors in that square)
_PITMAN_RESTARTS = np.array([(1.0, 1.0)] + [(float(x), float(y)) for x in np.linspace(1, -1, 8)
                                            for y in np.linspace(1, -1, 8)])


@_compiled
def _larger_runs(hist, u, runs):
    """Runs ``(first j, length, m)`` of ``m_j`` = the classes larger than ``j``, for
    ``j = 1 .. len(hist) - 2``: constant between two sizes present; written to ``runs[3 r:3 r +
    3]`` (at most one more run than the sizes present), returns how many."""
    top = len(hist) - 2
    count = 0
    j = 1
    larger = u - hist[0] - (hist[1] if len(hist) > 1 else 0.0)
    while j <= top:
        end = j + 1  # the next size present above j, or the last j + 1
        while end <= top and hist[end] == 0:
            end += 1
        runs[3 * count], runs[3 * count + 1], runs[3 * count + 2] = j, end - j, larger
        count += 1
        if end <= top:
            larger -= hist[end]
        j = end
    return count


#: terms of the power series of Pitman's sums over the classes where ``|i a / t| <= 1/4``
_SERIES_TERMS = 40


@_compiled
def _class_powers(u, powers):
    """``powers[k] = sum_{i=1}^{u-1} (i/u)**k`` (``k < _SERIES_TERMS + 2``), filled on first
    use (``powers[0]`` NaN until then)."""
    if not math.isnan(powers[0]):
        return
    powers[:] = 0.0
    for i in range(1, int(u)):
        y = i / u
        p = 1.0
        for k in range(len(powers)):
            powers[k] += p
            p *= y


@_compiled
def _pitman_equations(t, a, u, n, runs, n_runs, powers):
    """Pitman's likelihood equations at ``(theta, alpha) = (t, a)`` and their Jacobian:
    ``(f1, f2, j11, j12, j22)`` (the Jacobian is symmetric)."""
    r1 = 0.0  # sum_{i=1}^{u-1} 1/(t+ia), i/(t+ia), 1/(t+ia)^2, i/(t+ia)^2, i^2/(t+ia)^2
    ir1 = 0.0
    r2 = 0.0
    ir2 = 0.0
    iir2 = 0.0
    x = t / a  # t + ia = a (x + i)
    if t > 0.0 and abs(x) > 4.0 * u:  # 1/(t+ia) = sum_k (-ia/t)^k / t, |ia/t| < 1/4
        _class_powers(u, powers)
        y = -u * a / t
        p = 1.0
        for k in range(_SERIES_TERMS):
            r1 += p * powers[k]
            ir1 += p * powers[k + 1]
            r2 += (k + 1) * p * powers[k]
            ir2 += (k + 1) * p * powers[k + 1]
            iir2 += (k + 1) * p * powers[k + 2]
            p *= y
        r1, r2 = r1 / t, r2 / (t * t)
        ir1, ir2, iir2 = ir1 * u / t, ir2 * u / (t * t), iir2 * u * u / (t * t)
    else:  # digamma forms: nothing cancels much for |x| <= 4u
        r1 = _shifted(x, int(u) - 1, 1) / a
        r2 = _shifted(x, int(u) - 1, 2) / (a * a)
        ir1 = ((u - 1.0) - t * r1) / a
        ir2 = (r1 - t * r2) / a
        iir2 = ((u - 1.0) - 2.0 * t * r1 + t * t * r2) / (a * a)
    s1 = _harmonic(t + 1.0, int(n) - 1, 1)  # sum_{j=1}^{n-1} 1/(t+j)
    s2 = _harmonic(t + 1.0, int(n) - 1, 2)
    q1 = 0.0  # sum_j m_j / (j - a), and squared
    q2 = 0.0
    for k in range(n_runs):
        lo, length, m = runs[3 * k], int(runs[3 * k + 1]), runs[3 * k + 2]
        if lo - a > 0.0:
            q1 += m * _harmonic(lo - a, length, 1)
            q2 += m * _harmonic(lo - a, length, 2)
        else:  # a pole may lie in the run: term by term
            for j in range(length):
                q = 1.0 / (lo + j - a)
                q1 += m * q
                q2 += m * q * q
    return r1 - s1, ir1 - q1, s2 - r2, -ir2, -iir2 - q2


@_compiled
def _pitman_solve(t, a, u, n, runs, n_runs, powers, max_iter, tol):
    """Newton's method from ``(t, a)``: ``(ok, t, a)``, not ok when it fails or leaves
    ``theta >= 0``."""
    for _ in range(max_iter):
        if not (math.isfinite(t) and math.isfinite(a)) or t < 0:
            return False, t, a
        f1, f2, j11, j12, j22 = _pitman_equations(t, a, u, n, runs, n_runs, powers)
        if not (math.isfinite(f1) and math.isfinite(f2) and math.isfinite(j11)
                and math.isfinite(j12) and math.isfinite(j22)):
            return False, t, a
        det = j11 * j22 - j12 * j12
        if det == 0:
            return False, t, a
        dt = (f1 * j22 - f2 * j12) / det
        da = (j11 * f2 - j12 * f1) / det
        t, a = t - dt, a - da
        if abs(dt) <= tol * max(1.0, abs(t)) and abs(da) <= tol * max(1.0, abs(a)):
            return t >= 0, t, a
    return False, t, a


@_compiled
def _pitman(hist, big, restarts, max_iter, tol, runs, powers):
    n, u, c1, c2 = _totals(hist)
    if c1 == 0:
        return 0.0
    c2 = c2 if c2 != 0 else 1.0
    c = c1 * (c1 - 1) / c2
    if 2 * c1 * u + c1 * c - n * c == 0:  # no initial guess (Java: a NaN, no solution)
        return np.nan
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    n_runs = _larger_runs(hist, u, runs)
    powers[:] = np.nan  # (:func:`_class_powers` fills it on first use)
    # ARX's solver restarts a failed try from the initial guess scaled by random factors in
    # [-1, 1] (NewtonRaphson2D); here by the fixed factors of _PITMAN_RESTARTS, in order
    ok, t, a = False, t0, a0
    for k in range(len(restarts)):
        ok, t, a = _pitman_solve(restarts[k, 0] * t0, restarts[k, 1] * a0, u, n, runs,
                                 n_runs, powers, max_iter, tol)
        if ok:
            break
    if not ok:
        return np.nan
    if not math.isfinite(t) or not math.isfinite(a) or a == 0:
        return np.nan
    log_val = math.lgamma(t + 1.0) - math.lgamma(t + a) + a * math.log(big)
    if not math.isfinite(log_val):  # a pole of Gamma, or an overflow
        return np.nan
    val = math.exp(log_val)
    return val if 0.0 <= val <= big else np.nan


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
    work = np.empty(estimator_work(len(hist) - 1, len(hist)))
    return float(_pitman_in(hist, float(population_size), _PITMAN_RESTARTS, int(max_iter),
                            float(tol), work))


#: Starts ``(alpha, beta)`` of the SNB solver: a deterministic 8 x 8 grid over ``(0, 1)^2``
#: in place of ARX's random restarts from the same square.
_SNB_STARTS = np.stack(np.meshgrid((np.arange(8) + 0.5) / 8, (np.arange(8) + 0.5) / 8,
                                   indexing="ij"), -1).reshape(-1, 2)
_SNB_STEPS = 0.5 ** np.arange(31)  # step lengths tried by the line search


@_compiled
def _snb_classes(hist, f, arx):
    """Number ``K`` of non-empty population classes: Haas et al.'s (1995) second Shlosser
    estimator ``d + c1 * A/B * (C/D)**2`` with ``A = sum_i i q^2 (1-q^2)^(i-1) f_i``,
    ``B = sum_i (1-q)^i ((1+q)^i - 1) f_i``, ``C = sum_i (1-q)^i f_i`` and
    ``D = sum_i i q (1-q)^(i-1) f_i`` (``f_i`` classes of size ``i``, ``q`` the sampling
    fraction).  ARX (``ModelSNB.estimateNonEmptyEquivalenceClasses``) computes ``B`` as
    ``sum_i ((1-q)^i (1+q)^i f_i - 1)`` over the class sizes present, which ``arx`` keeps."""
    classes = 0.0
    a = 0.0
    b = 0.0
    c = 0.0
    d = 0.0
    for size in range(1, len(hist)):
        fi = hist[size]
        if fi == 0:
            continue
        i = float(size)
        classes += fi
        a += i * f * f * (1.0 - f * f) ** (i - 1.0) * fi
        c += (1.0 - f) ** i * fi
        if arx:
            b += (1.0 - f) ** i * fi * (1.0 + f) ** i - 1.0
        else:
            b += (1.0 - f) ** i * ((1.0 + f) ** i - 1.0) * fi
        d += i * f * (1.0 - f) ** (i - 1.0) * fi
    return classes + hist[1] * (a / b) * (c / d) ** 2


@_compiled
def _snb_terms(a, b, q, k, f, s):
    """The terms :func:`_snb_lhs` and :func:`_snb_jacobian` share: ``(d, e, h, g1, m, g2)``."""
    d = (1.0 - f) * q
    e = 1.0 - d
    h = 1.0 + a * d / e
    g1 = k * f * (b / e) ** a
    m = 2.0 - (1.0 - a) * d
    g2 = k * f * f / 2.0 * b ** a * e ** (s * (a + 2.0))
    return d, e, h, g1, m, g2


@_compiled
def _snb_lhs(a, b, q, k, f, s):
    """Left-hand sides of the SNB equations at ``(alpha, beta) = (a, b)``, ``q = 1 - b``."""
    _, _, h, g1, m, g2 = _snb_terms(a, b, q, k, f, s)
    return g1 * h, g2 * a * q * m


@_compiled
def _snb_jacobian(a, b, q, k, f, s):
    """The derivatives of :func:`_snb_lhs` by ``a`` and ``b``: ``(j11, j12, j21, j22)``."""
    d, e, h, g1, m, g2 = _snb_terms(a, b, q, k, f, s)
    return (g1 * (math.log(b / e) * h + d / e),
            g1 * a * ((1.0 / b - (1.0 - f) / e) * h - (1.0 - f) / (e * e)),
            g2 * q * (m + a * m * (math.log(b) + s * math.log(e)) + a * d),
            g2 * a * (-m + q * (a * m / b + (1.0 - a) * (1.0 - f)
                                + s * (a + 2.0) * (1.0 - f) * m / e)))


@_compiled
def _snb_params(u, v):
    """``(alpha, beta, 1 - beta)`` of the solver's coordinates ``(log alpha, logit beta)``."""
    return math.exp(u), 1.0 / (1.0 + math.exp(-v)), 1.0 / (1.0 + math.exp(v))


@_compiled
def _snb(hist, big, arx, starts, steps, max_iter, tol):
    n, _, c1, c2 = _totals(hist)
    if c1 == 0:
        return 0.0
    f = n / big
    s = 1.0 if arx else -1.0
    w1, w2 = 1.0 / c1, 1.0 / max(c2, 1.0)  # residual weights of the line search
    k = _snb_classes(hist, f, arx)
    for start in range(len(starts)):
        u = math.log(starts[start, 0])
        v = math.log(starts[start, 1] / (1.0 - starts[start, 1]))
        done = False
        for _ in range(max_iter):
            a, b, q = _snb_params(u, v)
            l1, l2 = _snb_lhs(a, b, q, k, f, s)
            r1, r2 = l1 - c1, l2 - c2
            if abs(r1) <= tol and abs(r2) <= tol:
                done = True
                break
            if not (math.isfinite(r1) and math.isfinite(r2)):
                break
            j11, j12, j21, j22 = _snb_jacobian(a, b, q, k, f, s)
            j11, j21 = j11 * a, j21 * a  # chain rule: d/du = a d/da, d/dv = b q d/db
            j12, j22 = j12 * b * q, j22 * b * q
            det = j11 * j22 - j12 * j21
            du, dv = (r1 * j22 - r2 * j12) / det, (j11 * r2 - j21 * r1) / det
            # backtracking: the longest step of steps that lowers the weighted residual
            phi = (w1 * r1) ** 2 + (w2 * r2) ** 2
            moved = False
            for step in steps:
                ut, vt = u - step * du, v - step * dv
                at, bt, qt = _snb_params(ut, vt)
                t1, t2 = _snb_lhs(at, bt, qt, k, f, s)
                if (w1 * (t1 - c1)) ** 2 + (w2 * (t2 - c2)) ** 2 < (1.0 - 1e-4 * step) * phi:
                    u, v = ut, vt
                    moved = True
                    break
            if not moved:
                break
        if done:
            a, b, _ = _snb_params(u, v)
            est = k * b ** a
            if math.isfinite(est):
                return est
    return np.nan


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
    the starts ``_SNB_STARTS`` in turn (``max_iter`` steps each); the first start in that
    order that converges gives the estimate.  ARX runs plain Newton steps from random starts
    in the same square and takes the first that converges, so where the equations have
    several admissible roots ARX may report any of them.
    """
    if variant not in ("arx", "chen"):
        raise InputError(f"variant must be 'arx' or 'chen', got {variant!r}")
    return float(_snb(np.asarray(hist, dtype=np.float64), float(population_size),
                      variant == "arx", _SNB_STARTS, _SNB_STEPS, int(max_iter), float(tol)))


@_compiled
def _share(hist, estimator, big, runs, powers):
    """ARX's estimate of the share of population uniques (``hist[1] > 0``): an estimator
    without a solution gives 0; Dankar's rule where it picks Pitman's, -1/N."""
    if estimator == 0:
        v = _pitman(hist, big, _PITMAN_RESTARTS, 200, 1e-12, runs, powers)
    elif estimator == 1:
        v = _zayatz(hist, big)
    elif estimator == 2:
        v = _snb(hist, big, True, _SNB_STARTS, _SNB_STEPS, 200, 1e-6)
    elif _totals(hist)[0] / big <= 0.1:  # Dankar: Pitman's model alone, no fallback
        v = _pitman(hist, big, _PITMAN_RESTARTS, 200, 1e-12, runs, powers)
        return v / big if math.isfinite(v) and v != 0.0 else -1.0 / big
    else:  # Dankar: the smaller of SNB's and Zayatz's, Zayatz's where SNB fails
        snb, zayatz = _snb(hist, big, True, _SNB_STARTS, _SNB_STEPS, 200, 1e-6), \
            _zayatz(hist, big)
        v = (zayatz if zayatz < snb else snb) if math.isfinite(snb) and snb != 0.0 else zayatz
    return v / big if math.isfinite(v) and v != 0.0 else 0.0


def estimator_work(largest: int, classes: int) -> int:
    """Floats of scratch :func:`unique_share_fulfilled` needs for ``classes`` classes of at
    most ``largest`` records: Pitman's series powers, the histogram, Pitman's runs."""
    return _SERIES_TERMS + 2 + largest + 1 + 3 * (min(largest, classes) + 2)


@_compiled
def _scratch(work, hist_len):
    """``(runs, powers)`` in ``work`` beside a histogram of ``hist_len`` at
    ``work[_SERIES_TERMS + 2:]`` (:func:`estimator_work`'s layout)."""
    powers = work[:_SERIES_TERMS + 2]
    return work[_SERIES_TERMS + 2 + hist_len:], powers


@_compiled
def _pitman_in(hist, big, restarts, max_iter, tol, work):
    """:func:`_pitman` with its scratch in ``work`` (:func:`estimator_work`)."""
    runs, powers = _scratch(work, len(hist))
    return _pitman(hist, big, restarts, max_iter, tol, runs, powers)


@_compiled
def unique_share_fulfilled(sizes, lo, hi, estimator, big, t, work):
    """ARX's verdict of population uniqueness on the classes of sizes ``sizes[lo:hi]``: does
    the estimated share of population uniques (``ESTIMATOR_CODES[estimator]``, a population
    of ``big``) lie in ``(0, t]``, or is there no sample unique?  ``work``: scratch of
    :func:`estimator_work` floats for these classes."""
    uniques = 0
    top = 0
    for e in range(lo, hi):
        if sizes[e] == 1:
            uniques += 1
        top = max(top, sizes[e])
    if uniques == 0:
        return True
    hist = work[_SERIES_TERMS + 2:_SERIES_TERMS + 3 + top]
    hist[:] = 0.0
    for e in range(lo, hi):
        hist[sizes[e]] += 1.0
    runs, powers = _scratch(work, top + 1)
    share = _share(hist, estimator, big, runs, powers)
    return 0.0 < share <= t


@_compiled
def population_shares(sizes, ptr, nodes, prefix, estimator, big, t, out, work):
    """Per node ``nodes[i]`` (its classes' sizes ``sizes[ptr[b]:ptr[b+1]]``) without its
    first ``prefix[i]`` classes: :func:`unique_share_fulfilled`, written to ``out`` (bool);
    ``work``: :func:`estimator_work` floats for the largest node and class."""
    for i in range(len(nodes)):
        out[i] = unique_share_fulfilled(sizes, ptr[nodes[i]] + prefix[i], ptr[nodes[i] + 1],
                                        estimator, big, t, work)


# compiled ahead of time with its estimators (a first population-uniqueness search after an
# install compiled them for seconds); its own body divides nothing, so the extension's Python
# error model leaves it as the estimators' NumPy one has it
ahead_of_time(population_shares, ["void(int64[::1], int64[::1], int64[::1], int64[::1], int64, "
                                  "float64, float64, boolean[::1], float64[::1])"])
