"""Population uniqueness estimators: how many records of a sample are unique in the population,
estimated from the sample's class-size histogram alone (Zayatz 1991; Pitman's model, Hoshino
2001; the slide negative binomial, Chen and Keller-McNulty 1998), as ARX's
``RiskModelPopulationUniqueness`` computes them.  The privacy model
:class:`gpuppdp.models.PopulationUniqueness` bounds them in the search; the risk measures
(:func:`gpuppdp.analysis.risk.population_uniqueness`) report them.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

__all__ = ["zayatz_uniques", "pitman_uniques", "snb_uniques"]


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
