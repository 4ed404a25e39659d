"""Privacy notions and their conversions: pure ε, approximate (ε, δ), zCDP (ρ) and RDP.

* **Pure and approximate DP** compose by adding ``(ε_i, δ_i)`` (basic composition) or, with
  a slack ``δ'``, by advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014,
  Theorem 3.20): ``ε' = sqrt(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e**ε_i - 1)`` at ``Σ δ_i + δ'``;
  :func:`compose_approx` takes the tighter.
* **zCDP** (Bun & Steinke 2016): ``ρ``-zCDP means ``D_α(M(x) || M(x')) <= ρ α`` for every
  order ``α > 1``; ``ρ`` adds up under composition, pure ε-DP is ``ε²/2``-zCDP
  (Proposition 1.4), a Gaussian of L2 sensitivity ``Δ`` and standard deviation ``σ`` (the
  discrete one too, Canonne, Kamath & Steinke 2020, Theorem 4) is ``Δ²/(2σ²)``-zCDP.
* **RDP** (Mironov 2017): a curve ``α -> ε(α)`` on the orders :data:`ALPHAS`; curves add
  up.  zCDP is the curve ``ρ α`` (a Gaussian's, Mironov 2017, Corollary 3); the Laplace
  mechanism's exact curve is :func:`laplace_curve`, and every ε-DP mechanism satisfies
  :func:`pure_curve` (randomized response's curve, the tight one).  An add/remove-one curve
  charged to replace-one neighbours (two add/remove steps) is :func:`group_curve`.

Conversions to (ε, δ): the standard one for zCDP, ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun &
Steinke 2016, Proposition 1.3), and the tight one for RDP and zCDP (Canonne, Kamath & Steinke
2020, Proposition 12; Balle et al. 2020, Theorem 21; Asoodeh et al. 2021):
``(α, τ)``-RDP implies ``(ε, δ)``-DP with

    ε = τ + ln(1/δ)/(α - 1) + ln(1 - 1/α) - ln(α)/(α - 1),

minimized over ``α`` (every ``α`` gives a valid bound: a coarse minimization only loosens
it).  The orders searched start at ``1 + 2**-6`` (:data:`MIN_ORDER`): the discrete Gaussian's
float rounding is bounded there (:mod:`gpuppdp.dp.gaussian`).

References
----------
.. [BS16] M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications,
   Extensions, and Lower Bounds", TCC 2016.
.. [Mir17] I. Mironov, "Rényi Differential Privacy", CSF 2017.
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020, Proposition 12 and Corollary 13.
.. [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu and T. Sato, "Hypothesis Testing
   Interpretations and Rényi Differential Privacy", AISTATS 2020, Theorem 21.
.. [DRV10] C. Dwork, G. N. Rothblum and S. Vadhan, "Boosting and Differential Privacy",
   FOCS 2010.
.. [Ste24] T. Steinke, "Tight RDP & zCDP Bounds from Pure DP", DifferentialPrivacy.org,
   2024, Theorem 4.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..validation import check_epsilon, check_number, check_positive

__all__ = ["ALPHAS", "MIN_ORDER", "pure_to_zcdp", "zcdp_to_approx", "zcdp_to_approx_standard",
           "approx_to_zcdp",
           "rdp_to_approx", "zcdp_curve", "laplace_curve", "pure_curve", "group_curve",
           "check_curve", "compose_approx", "advanced_composition"]

#: the smallest Rényi order the conversions use
MIN_ORDER = 1.0 + 2.0**-6
#: the standard grid of Rényi orders for RDP curves (as Opacus' and TF Privacy's)
ALPHAS = tuple([1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)) + [128.0, 256.0,
                                                                                    512.0])
# a dense grid of α - 1 for the tight zCDP conversion (refined by golden section)
_ORDERS_MINUS_ONE = np.geomspace(MIN_ORDER - 1.0, 1e9, 4000)


def _check_delta(delta) -> float:
    delta = check_number("delta", delta, 0.0, 1.0)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1) for a conversion to (epsilon, delta), "
                         f"got {delta!r}")
    return delta


def _check_rho(rho) -> float:
    rho = check_number("rho", rho, 0.0)
    if not math.isfinite(rho):
        raise InputError(f"rho must be finite, got {rho!r}")
    return rho


def pure_to_zcdp(epsilon: float) -> float:
    """``ρ = ε²/2``: pure ε-DP implies ρ-zCDP (Bun & Steinke 2016, Proposition 1.4).

    >>> pure_to_zcdp(1.0)
    0.5
    """
    epsilon = check_epsilon("epsilon", epsilon)
    return 0.5 * epsilon * epsilon


def zcdp_to_approx_standard(rho: float, delta: float) -> float:
    """``ε = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun & Steinke 2016, Proposition 1.3).

    >>> round(zcdp_to_approx_standard(0.5, 1e-6), 4)
    5.7565
    """
    rho, delta = _check_rho(rho), _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _rdp_epsilon(alpha, tau, log_inv_delta):
    """ε of ``(α, τ)``-RDP at δ (CKS20 Proposition 12), vectorized over ``α``."""
    am1 = alpha - 1.0
    return tau + (log_inv_delta - np.log(alpha)) / am1 + np.log1p(-1.0 / alpha)


def zcdp_to_approx(rho: float, delta: float) -> float:
    """The tight conversion of ρ-zCDP to (ε, δ)-DP: the RDP bound of :func:`rdp_to_approx`
    on the curve ``ρ α``, minimized over every order ``α >= MIN_ORDER``.

    Never above :func:`zcdp_to_approx_standard`.

    >>> round(zcdp_to_approx(0.5, 1e-6), 4)
    5.2215
    """
    rho, delta = _check_rho(rho), _check_delta(delta)
    if rho == 0.0:
        return 0.0
    lid = math.log(1.0 / delta)
    alphas = 1.0 + _ORDERS_MINUS_ONE
    values = _rdp_epsilon(alphas, rho * alphas, lid)
    i = int(np.argmin(values))
    lo, hi = alphas[max(i - 1, 0)], alphas[min(i + 1, alphas.shape[0] - 1)]
    best = float(values[i])
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(60):  # golden-section refinement (the bound is smooth in α)
        a = hi - golden * (hi - lo)
        b = lo + golden * (hi - lo)
        fa = float(_rdp_epsilon(a, rho * a, lid))
        fb = float(_rdp_epsilon(b, rho * b, lid))
        best = min(best, fa, fb)
        if fa < fb:
            hi = b
        else:
            lo = a
    return max(0.0, min(best, zcdp_to_approx_standard(rho, delta)))


def approx_to_zcdp(epsilon: float, delta: float) -> float:
    """The largest ρ whose tight conversion (:func:`zcdp_to_approx`) at ``delta`` is at most
    ``epsilon`` (bisection, on the safe side): the zCDP budget of an (ε, δ) target, as MST
    and AIM take it (McKenna et al. 2021, 2022).

    >>> rho = approx_to_zcdp(1.0, 1e-9)
    >>> round(rho, 5), zcdp_to_approx(rho, 1e-9) <= 1.0
    (0.01497, True)
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = _check_delta(delta)
    lo, hi = 0.0, epsilon  # ε >= ρ: the conversion never gives less than ρ
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if zcdp_to_approx(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def zcdp_curve(rho: float, alphas=ALPHAS) -> np.ndarray:
    """The RDP curve ``ε(α) = ρ α`` of ρ-zCDP on ``alphas``."""
    return _check_rho(rho) * np.asarray(alphas, dtype=np.float64)


def check_curve(curve, alphas=ALPHAS) -> tuple[np.ndarray, np.ndarray]:
    """``(curve, alphas)`` as float arrays, or :class:`InputError`: one value ``>= 0`` (or
    ``inf``: no bound at that order) per order, the orders increasing and ``>= MIN_ORDER``."""
    alphas = np.asarray(alphas, dtype=np.float64)
    curve = np.asarray(curve, dtype=np.float64)
    if alphas.ndim != 1 or curve.shape != alphas.shape or not alphas.shape[0] \
            or not np.all(alphas >= MIN_ORDER) or not np.all(np.diff(alphas) > 0.0) \
            or not np.all(np.isfinite(alphas)):
        raise InputError(f"curve must give one value per order (got {curve.shape} for "
                         f"{alphas.shape} orders), the orders finite, increasing and "
                         f">= {MIN_ORDER}")
    if not np.all(curve >= 0.0):  # NaN fails too
        raise InputError(f"an RDP curve's values must be >= 0, got "
                         f"{float(curve[~(curve >= 0.0)][0])!r}")
    return curve, alphas


def rdp_to_approx(curve, delta: float, alphas=ALPHAS) -> float:
    """(ε, δ)-DP from an RDP curve ``ε(α)`` on ``alphas`` (CKS20 Proposition 12, Balle et
    al. 2020 Theorem 21): the smallest bound over the orders given.

    >>> round(rdp_to_approx(zcdp_curve(0.5), 1e-6), 4)
    5.2215
    """
    delta = _check_delta(delta)
    curve, alphas = check_curve(curve, alphas)
    return max(0.0, float(np.min(_rdp_epsilon(alphas, curve, math.log(1.0 / delta)))))


def _orders(alphas) -> np.ndarray:
    alphas = np.asarray(alphas, dtype=np.float64)
    if not np.all(alphas >= MIN_ORDER):
        raise InputError(f"every order must be >= {MIN_ORDER}, got {alphas.min()!r}")
    return alphas


def laplace_curve(epsilon: float, alphas=ALPHAS) -> np.ndarray:
    """The exact RDP curve of the Laplace mechanism ``Lap(Δ/ε)`` on a scalar query of
    sensitivity ``Δ`` (Mironov 2017, Proposition 6, ``λ = Δ/ε``)::

        ε(α) = ln(α/(2α-1) e**((α-1)ε) + (α-1)/(2α-1) e**(-αε)) / (α-1)

    (evaluated as ``ε + ln(α/(2α-1) + (α-1)/(2α-1) e**(-(2α-1)ε)) / (α-1)``).  This is the
    *continuous* Laplace: the package's grid and geometric mechanisms draw the discrete
    Laplace, whose curve is larger (at grid sensitivity 1 it is :func:`pure_curve`), so they
    are charged as pure ε.

    >>> round(float(laplace_curve(1.0, [2.0])[0]), 6)  # ln(2/3 e + 1/3 e**-2)
    0.619124
    """
    epsilon = check_epsilon("epsilon", epsilon)
    a = _orders(alphas)
    inner = (a + (a - 1.0) * np.exp(-(2.0 * a - 1.0) * epsilon)) / (2.0 * a - 1.0)
    return epsilon + np.log(inner) / (a - 1.0)


def pure_curve(epsilon: float, alphas=ALPHAS) -> np.ndarray:
    """The RDP curve every ε-DP mechanism satisfies, and the tight one: randomized response's
    (Mironov 2017, Proposition 5 at ``p = e**ε/(1 + e**ε)``; Steinke 2024, Theorem 4)::

        ε(α) = ε - ln((1 + e**-ε) / (1 + e**(-(2α-1)ε))) / (α-1)

    Never above ``min(ε, α ε²/2)`` (Mironov 2017; Bun & Steinke 2016, Proposition 1.4).

    >>> round(float(pure_curve(1.0, [2.0])[0]), 6)  # ln((e**2 + e**-1) / (1 + e))
    0.735326
    """
    epsilon = check_epsilon("epsilon", epsilon)
    a = _orders(alphas)
    return epsilon - (math.log1p(math.exp(-epsilon))
                      - np.log1p(np.exp(-(2.0 * a - 1.0) * epsilon))) / (a - 1.0)


def group_curve(curve, alphas=ALPHAS) -> np.ndarray:
    """An RDP curve for neighbours two steps apart (a replaced record: removed, then another
    added) from the curve ``ε(α)`` of one step, on the same orders: the weak triangle
    inequality of the proof of Mironov 2017, Proposition 2 (groups of 2),
    ``D_β(P||R) <= (β - 1/2)/(β - 1) D_2β(P||Q) + D_(2β-1)(Q||R)``, with both divergences
    bounded by ``ε`` at the smallest order given ``>= 2β`` (Rényi divergence does not
    decrease with the order).  ``inf`` where no order ``>= 2β`` is given.

    >>> group_curve([1.0, 2.0, 3.0], [2.0, 4.0, 8.0]).round(4).tolist()  # (1.5/1 + 1) ε(4), ...
    [5.0, 6.5, inf]
    """
    curve, alphas = check_curve(curve, alphas)
    at = np.searchsorted(alphas, 2.0 * alphas, side="left")
    found = at < alphas.shape[0]
    bound = np.where(found, curve[np.minimum(at, alphas.shape[0] - 1)], np.inf)
    return ((alphas - 0.5) / (alphas - 1.0) + 1.0) * bound


def advanced_composition(epsilons, delta_slack: float) -> float:
    """ε of the composition of ``ε_i``-DP mechanisms by advanced composition (DRV10; Dwork
    & Roth 2014, Theorem 3.20): ``sqrt(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e**ε_i - 1)``, at an extra
    ``δ' = delta_slack``.

    >>> round(advanced_composition([0.01] * 1000, 1e-6), 4)
    1.7628
    """
    eps = np.asarray([check_epsilon("epsilon", e) for e in epsilons], dtype=np.float64)
    delta_slack = _check_delta(delta_slack)
    return float(math.sqrt(2.0 * math.log(1.0 / delta_slack) * float(np.sum(eps * eps)))
                 + float(np.sum(eps * np.expm1(eps))))


def compose_approx(epsilons, deltas, delta_slack: float = 0.0) -> tuple[float, float]:
    """``(ε, δ)`` of the sequential composition of ``(ε_i, δ_i)``-DP mechanisms: the basic sum,
    or advanced composition at ``Σ δ_i + delta_slack`` where that is tighter.

    >>> compose_approx([0.5, 0.5], [0.0, 1e-9])
    (1.0, 1e-09)
    """
    eps = [check_epsilon("epsilon", e) for e in epsilons]
    dl = [check_number("delta", d, 0.0, 1.0) for d in deltas]
    if len(eps) != len(dl):
        raise InputError(f"give one delta per epsilon ({len(eps)} epsilons, {len(dl)} deltas)")
    basic = (math.fsum(eps), min(1.0, math.fsum(dl)))
    if delta_slack == 0.0 or not eps:
        return basic
    delta_slack = check_positive("delta_slack", delta_slack)
    advanced = advanced_composition(eps, delta_slack)
    if advanced < basic[0]:
        return advanced, min(1.0, basic[1] + delta_slack)
    return basic
