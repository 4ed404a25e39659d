"""The discrete Gaussian and the Gaussian mechanism (zCDP and (ε, δ)), sampled exactly.

The discrete Gaussian ``N_Z(0, σ²)``, ``P[Y = y] ∝ exp(-y²/(2σ²))`` on the integers
(Canonne, Kamath & Steinke 2020), is drawn by their Algorithm 3: a proposal ``Y`` from the
discrete Laplace ``P ∝ exp(-r|y|)`` (the exact sampler of :mod:`~gpuppdp.dp.mechanisms`,
``r ≈ 1/(floor(σ) + 1)``), accepted with probability ``exp(-γ)``,
``γ = (|Y| - σ² r)² / (2σ²)`` (the product of the two is ``∝ exp(-y²/(2σ²))``), else
redrawn, in rounds over the values still pending (about 1.3-1.6 proposals per value),
each round one fused kernel (:func:`~gpuppdp.kernels.dp_gaussian.gaussian_round`) on the
host's thread pool or a CUDA thread per 16 values.  Both read the keystream the same way:
the same values for a seed, but where the device's ``exp`` differs from libm's in the last
place (each within :data:`~gpuppdp.dp.coins.EXP_ERROR`).

* :class:`DiscreteGaussianMechanism` adds it to integer queries; ``ρ = Δ²/(2σ²)``-zCDP for
  an L2 sensitivity ``Δ`` (CKS20 Theorem 4).
* :class:`GaussianMechanism` answers real queries on the grid ``g·ℤ`` (``g = 2**k``), as
  :class:`~gpuppdp.dp.mechanisms.LaplaceMechanism` does, so a floating-point Gaussian (not
  exact: Mironov's attack applies to it as to the Laplace) is never drawn; it is calibrated
  from ``(ε, δ)`` with Balle & Wang's analytic condition (:func:`analytic_gaussian_sigma`)
  checked on the discrete Gaussian itself (:func:`discrete_gaussian_delta`, CKS20
  Theorem 7), or from ``ρ``.  A changed value moves ``round(x/g)`` by at most ``Δ/g + 1``
  steps, so the L2 sensitivity in grid steps is ``Δ/g + sqrt(c)`` for ``c`` changed
  coordinates (``floor(Δ/g) + 1`` for one).

What the sampler guarantees (derived here; the tests enumerate it on small σ)
------------------------------------------------------------------------------
* The proposal's probabilities are within ``e**±σ_L`` of the ideal discrete Laplace
  (``σ_L`` = :attr:`~gpuppdp.dp.mechanisms.DiscreteLaplaceSampler.sigma`); the coin is exact
  for the float64 ``p̂ = fl(exp(-γ̂))``, with ``γ̂`` within ``u (y_max r + 4γ + 8)`` of ``γ``
  (``u = 2**-53``; one rounding of ``σ² r``, of ``|Y| - σ² r``, of its square and of the
  division) and the ``exp`` within :data:`~gpuppdp.dp.coins.EXP_ERROR`: ``η_A``.
* Proposals with ``γ̂ > 700`` are rejected: the support is ``|y| <= y_max`` (about ``38σ``),
  whose complement has ideal mass below ``e**-690``.  On the support the sampled
  probabilities are within ``e**±η`` of the ideal ones restricted to it,
  ``η = 2 (σ_L + η_A) + 2**-60``.
* Hence, per changed coordinate (``c`` of them): (ε, δ)-DP at the ideal ε plus ``2cη``, with
  ``e**(cη)`` times the ideal δ plus ``δ_trunc`` (the ideal mass beyond ``y_max - Δ``,
  bounded by a geometric series, below ``1e-100`` or refused); and, for Rényi orders
  ``α >= 1 + 2**-6`` (all the conversions of :mod:`~gpuppdp.dp.accounting` use),
  ``D_α <= ρα + 2cη + cη/(α - 1) <= (ρ + 66cη) α``: the mechanism is charged
  ``ρ̂ = ρ + 66cη`` (``η`` is about ``2**-40``), approximate zCDP with ``δ_trunc``
  (Bun & Steinke 2016, Definition 1.8).

References
----------
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020: Algorithm 3, Theorems 4 and 7.
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for Differential
   Privacy: Analytical Calibration and Optimal Denoising", ICML 2018, Theorem 8.
.. [BS16] M. Bun and T. Steinke, "Concentrated Differential Privacy", TCC 2016.
.. [Mir12] I. Mironov, ACM CCS 2012 (floating-point noise is not private).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..validation import check_epsilon, check_number, check_positive
from .accounting import MIN_ORDER, approx_to_zcdp, zcdp_to_approx
from .coins import EXP_ERROR, MAX_GAMMA
from .mechanisms import (
    DiscreteLaplaceSampler,
    _check_coordinates,
    _check_int_range,
    _grid_granularity,
    _GridNoise,
    _sampler,
)
from ..kernels import dp_gaussian
from .randomness import RandomSource, default_source

__all__ = ["DiscreteGaussianSampler", "discrete_gaussian_noise", "discrete_gaussian_delta",
           "analytic_gaussian_sigma", "DiscreteGaussianMechanism", "GaussianMechanism"]

_U = 2.0**-53
_MAX_SIGMA = 2.0**38  # noise stays below 40 σ < 2**44: exact in float64 and int64
_MAX_TRUNC_DELTA = 1e-100  # a calibration whose support costs more δ is refused
_SLACK_ORDERS = 2.0 + 1.0 / (MIN_ORDER - 1.0)  # 2 + 1/(α - 1) at the smallest order: 66


@dataclass(frozen=True)
class DiscreteGaussianSampler:
    """The sampler of ``N_Z(0, σ²)`` (module docstring).

    Attributes
    ----------
    sigma2 : float
        ``σ²`` (grid units).
    laplace : DiscreteLaplaceSampler
        The proposal, at rate ``r``.
    center : float
        ``fl(σ² r)``.
    y_max : int
        The support is ``|y| <= y_max``.
    eta : float
        ``|ln(P̂[y] / P[y])| <= eta`` on the support.
    """

    sigma2: float
    laplace: DiscreteLaplaceSampler
    center: float
    y_max: int
    eta: float

    @property
    def sigma(self) -> float:
        return math.sqrt(self.sigma2)

    def gamma(self, y, xp=np):
        """``γ̂`` of the acceptance coin for proposals ``y`` (int64), as the sampler
        computes it."""
        d = xp.abs(y).astype(xp.float64) - self.center
        return (d * d) / (2.0 * self.sigma2)

    def truncation_delta(self, shift: float) -> float:
        """A bound on the ideal mass of ``|Y| > y_max - shift`` (one coordinate moved by at
        most ``shift``): ``2 e**(-y0²/2σ²) / (1 - e**(-(2 y0 + 1)/2σ²))``, ``y0`` its first
        integer (the terms fall geometrically; the normalizer is at least 1)."""
        y0 = self.y_max - math.ceil(shift) + 1
        if y0 <= 0:
            return 1.0
        log_bound = (math.log(2.0) - y0 * y0 / (2.0 * self.sigma2)
                     - math.log(-math.expm1(-(2 * y0 + 1) / (2.0 * self.sigma2))))
        return max(math.exp(log_bound), math.ulp(0.0)) if log_bound < 0 else 1.0


@functools.lru_cache(maxsize=256)
def _gaussian_sampler(sigma2: float) -> DiscreteGaussianSampler:
    sigma = math.sqrt(sigma2)
    laplace = _sampler(1.0 / (math.floor(sigma) + 1.0))
    rate = laplace.rate
    center = sigma2 * rate
    probe = DiscreteGaussianSampler(sigma2, laplace, center, 0, 0.0)
    y = int(center + math.sqrt(2.0 * MAX_GAMMA * sigma2)) + 3
    while float(probe.gamma(np.array([y]))[0]) > MAX_GAMMA:  # the exact float boundary
        y -= 1
    eta_a = (y * rate + 4.0 * MAX_GAMMA + 8.0) * _U + EXP_ERROR
    eta = 2.0 * (laplace.sigma + eta_a) + 2.0**-60
    return DiscreteGaussianSampler(sigma2, laplace, center, y, eta)


def _check_sigma(sigma) -> float:
    sigma = check_positive("sigma", sigma)
    if sigma > _MAX_SIGMA:
        raise InputError(f"sigma must be <= 2**38 grid steps for the exact sampler, "
                         f"got {sigma:g}")
    return sigma


def _draw(source: RandomSource, n: int, sampler: DiscreteGaussianSampler):
    """``n`` draws of the sampler (int64 on the backend), in rounds over the pending values
    (CKS20 Algorithm 3): a fused round (:func:`~gpuppdp.kernels.dp_gaussian.gaussian_round`)
    for the pending values, on fresh blocks, until none is left (about ``n/2.5`` proposals
    after the first round)."""
    xp = source.backend.xp
    trials = sampler.laplace.tables[0].shape[0]
    out = xp.empty(n, dtype=xp.int64)
    pending = None  # None: every value (the first round)
    m = n
    while m:
        key, n0, n1, base = source._reserve(dp_gaussian.gaussian_blocks(m, trials))
        y, accept = dp_gaussian.gaussian_round(source.backend, key, n0, n1, base, m,
                                               sampler.laplace.tables, sampler.center,
                                               sampler.sigma2, MAX_GAMMA)
        ok = accept.astype(xp.bool_)
        if pending is None:
            out[ok] = y[ok]
            pending = xp.flatnonzero(~ok)
        else:
            out[pending[ok]] = y[ok]
            pending = pending[~ok]
        m = int(pending.shape[0])
    return out


def discrete_gaussian_noise(shape, *, sigma: float, random: RandomSource | None = None):
    """Draw discrete Gaussian noise ``N_Z(0, σ²)`` on the integers (module docstring).

    Parameters
    ----------
    shape : int or tuple of int
    sigma : float
        ``σ > 0`` (at most ``2**38``).
    random : RandomSource, optional
        Defaults to the OS-keyed :func:`~gpuppdp.dp.randomness.default_source`.

    Returns
    -------
    array of int64 on ``random.backend``.

    Examples
    --------
    >>> from gpuppdp.dp import RandomSource
    >>> discrete_gaussian_noise(4, sigma=2.0, random=RandomSource("cpu")).dtype
    dtype('int64')
    """
    sigma = _check_sigma(sigma)
    source = random if random is not None else default_source()
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return _draw(source, math.prod(shape), _gaussian_sampler(sigma * sigma)).reshape(shape)


def _tail(y0: int, sigma2: float, norm: float) -> float:
    """``P[Y >= y0]`` for ``Y ~ N_Z(0, σ²)`` (float64).  Terms beyond 40σ are dropped, and
    beyond ``y0 + 60σ²/y0`` too: past ``y0`` each term is at most ``e**(-y0/σ²)`` times the
    one before, so those left out sum to less than ``e**-60 (1 + σ²/y0)`` times the first
    (below float64's rounding of the sum; a calibration at ``y0 ≈ εσ²`` sums some ``60/ε``
    terms instead of ``40σ``)."""
    if y0 <= 0:
        return 1.0 - _tail(1 - y0, sigma2, norm)
    width = min(int(40.0 * math.sqrt(sigma2)), int(60.0 * sigma2 / y0)) + 8
    total, start, chunk = 0.0, y0, 1 << 20
    while start < y0 + width:
        y = np.arange(start, min(start + chunk, y0 + width), dtype=np.float64)
        total += float(np.sum(np.exp(-(y * y) / (2.0 * sigma2))))
        start += chunk
    return total / norm


def _normalizer(sigma2: float) -> float:
    """``Σ_y exp(-y²/2σ²)``: directly for small σ, by Poisson summation
    (``σ sqrt(2π) (1 + 2 Σ_k e**(-2π²σ²k²))``) above."""
    if sigma2 < 16.0:
        y = np.arange(-200, 201, dtype=np.float64)
        return float(np.sum(np.exp(-(y * y) / (2.0 * sigma2))))
    return math.sqrt(2.0 * math.pi * sigma2) * (1.0 + 2.0 * math.exp(-2.0 * math.pi**2 * sigma2))


def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity: int) -> float:
    """The smallest δ of the discrete Gaussian mechanism at ε for an integer query of
    sensitivity ``Δ`` (one coordinate): ``P[Y > εσ²/Δ - Δ/2] - e**ε P[Y > εσ²/Δ + Δ/2]``,
    ``Y ~ N_Z(0, σ²)`` (CKS20 Theorem 7), summed in float64 (the tests check it against a
    120-digit sum).

    >>> f"{discrete_gaussian_delta(1.0, 4.0, 1):.3e}"
    '3.055e-06'
    """
    epsilon = check_epsilon("epsilon", epsilon)
    sigma = _check_sigma(sigma)
    sens = int(sensitivity)
    s2 = sigma * sigma
    norm = _normalizer(s2)
    a = epsilon * s2 / sens
    first = _tail(math.floor(a - sens / 2.0) + 1, s2, norm)
    second = _tail(math.floor(a + sens / 2.0) + 1, s2, norm)
    return max(0.0, first - math.exp(epsilon) * second)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ of the (continuous) Gaussian mechanism that is (ε, δ)-DP:
    ``Φ(Δ/2σ - εσ/Δ) - e**ε Φ(-Δ/2σ - εσ/Δ) <= δ`` (Balle & Wang 2018, Theorem 8), by
    bisection on the condition (evaluated in float64 against ``δ (1 - 1e-10)``, a margin
    for the rounding of ``erfc``; σ is returned on the safe side).

    >>> round(analytic_gaussian_sigma(1.0, 1e-5, 1.0), 4)
    3.7306
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_number("delta", delta, 0.0, 1.0)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1), got {delta!r}")
    sens = check_positive("sensitivity", sensitivity)

    def excess(sigma: float) -> float:
        a, b = sens / (2.0 * sigma), epsilon * sigma / sens
        return _phi(a - b) - math.exp(epsilon) * _phi(-a - b) - delta * (1.0 - 1e-10)

    lo, hi = sens * 1e-6, sens
    while excess(hi) > 0.0:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if excess(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return hi


def _epsilon_at(delta: float, grid_sigma: float, l2: float, shift: int, coordinates: int,
                delta_trunc: float) -> float:
    """ε at ``delta`` of a release with these parameters (:meth:`_GaussianBase.epsilon_at`)."""
    eta = _gaussian_sampler(grid_sigma * grid_sigma).eta
    rho = l2 * l2 / (2.0 * grid_sigma * grid_sigma) + _SLACK_ORDERS * coordinates * eta
    via_rho = zcdp_to_approx(rho, delta - delta_trunc)
    if coordinates != 1:
        return via_rho
    target = (delta - delta_trunc) * math.exp(-eta)
    lo, hi = 0.0, via_rho  # the exact curve: the smallest ε with δ(ε) <= target
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid > 0 and discrete_gaussian_delta(mid, grid_sigma, shift) <= target:
            hi = mid
        else:
            lo = mid
    return min(via_rho, hi + 2.0 * eta)


def _calibrate(epsilon: float, delta: float, l2: float, shift: int, coordinates: int) -> float:
    """The smallest σ (grid steps, up to a relative ``2**-20``) whose release meets the
    (ε, δ) target, starting from the analytic σ (Balle & Wang 2018) for one coordinate, from
    the smallest ρ whose tight conversion meets it for several."""
    eps = check_epsilon("epsilon", epsilon)
    delta = check_number("delta", delta, 0.0, 1.0)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1) for the Gaussian mechanism, got {delta!r}")
    if coordinates == 1:
        sigma = _check_sigma(analytic_gaussian_sigma(eps, delta, l2))
    else:  # the largest ρ whose tight conversion meets the target
        sigma = l2 / math.sqrt(2.0 * max(approx_to_zcdp(eps, 0.5 * delta), 1e-300))
    step = 2.0**-20
    for _ in range(1 << 12):
        sigma = _check_sigma(sigma)
        sampler = _gaussian_sampler(sigma * sigma)
        trunc = min(1.0, coordinates * sampler.truncation_delta(shift))
        if trunc < min(delta, _MAX_TRUNC_DELTA) and \
                _epsilon_at(delta, sigma, l2, shift, coordinates, trunc) <= eps:
            return sigma
        sigma *= 1.0 + step
        step *= 2.0
    raise InputError(f"cannot calibrate the Gaussian mechanism to epsilon={eps:g}, "
                     f"delta={delta:g}")  # pragma: no cover - σ doubles within 20 steps


class _GaussianBase(_GridNoise):
    """Discrete Gaussian noise in grid steps (shared by both mechanisms)."""

    _sampler: DiscreteGaussianSampler
    epsilon: float | None = None  # the (ε, δ) target, when calibrated from one
    delta: float | None = None

    def _setup(self, grid_sigma: float, sensitivity: float, granularity: float,
               l2_steps: float, shift_steps: int, coordinates: int) -> None:
        self._set_grid(sensitivity, granularity, l2_steps, coordinates)  # L2, in grid steps
        self._shift = shift_steps  # the largest move of one coordinate, in steps
        self.grid_sigma = _check_sigma(grid_sigma)
        self._sampler = _gaussian_sampler(self.grid_sigma**2)
        self.delta_trunc = min(1.0, coordinates * self._sampler.truncation_delta(shift_steps))
        if self.delta_trunc > _MAX_TRUNC_DELTA:
            raise InputError(
                f"sigma={self.sigma:g} is too small for sensitivity {sensitivity:g}: the "
                f"sampler's support would cost delta={self.delta_trunc:.3g}; use a larger "
                "sigma (or smaller rho / larger delta)")

    @property
    def sigma(self) -> float:
        """The noise's σ in query units."""
        return self.grid_sigma * self.granularity

    @property
    def rho_ideal(self) -> float:
        """``Δ²/(2σ²)`` of the ideal discrete Gaussian (grid steps)."""
        return self.grid_sensitivity**2 / (2.0 * self.grid_sigma**2)

    @property
    def rho(self) -> float:
        """The zCDP ρ charged: ``ρ + 66cη`` (module docstring), approximate zCDP with
        :attr:`delta_trunc`."""
        return self.rho_ideal + _SLACK_ORDERS * self.coordinates * self._sampler.eta

    @property
    def variance(self) -> float:
        """The noise variance (``<= σ²``, CKS20 Proposition 19)."""
        return self.sigma**2

    @property
    def std(self) -> float:
        return self.sigma

    def epsilon_at(self, delta: float) -> float:
        """The ε of the (ε, δ) guarantee at ``delta`` (which must exceed
        :attr:`delta_trunc`): for one changed coordinate the exact discrete curve (CKS20
        Theorem 7) plus the float slack, else the tight conversion of :attr:`rho`."""
        delta = check_number("delta", delta, 0.0, 1.0)
        if not self.delta_trunc < delta < 1.0:
            raise InputError(f"delta must be in ({self.delta_trunc:.3g}, 1), got {delta!r}")
        return _epsilon_at(delta, self.grid_sigma, self.grid_sensitivity, self._shift,
                           self.coordinates, self.delta_trunc)

    def _target(self, epsilon, delta, rho, l2: float, shift: int, coordinates: int) -> float:
        """σ in grid steps from ``rho`` (``Δ/sqrt(2ρ)``) or from the (ε, δ) target
        (:func:`_calibrate`); sets :attr:`epsilon` and :attr:`delta` in the latter case."""
        if rho is not None:
            return l2 / math.sqrt(2.0 * check_positive("rho", rho))
        self.epsilon = check_epsilon("epsilon", epsilon)
        self.delta = check_number("delta", delta, 0.0, 1.0)
        return _calibrate(self.epsilon, self.delta, l2, shift, coordinates)

    def info(self) -> dict:
        """The mechanism's parameters and guarantee, as recorded on releases."""
        return {"mechanism": self.name, "sigma": self.sigma, "rho": self.rho,
                "delta_trunc": self.delta_trunc, "sensitivity": self.sensitivity,
                "granularity": self.granularity, "std": self.std,
                "epsilon": self.epsilon, "delta": self.delta}


class DiscreteGaussianMechanism(_GaussianBase):
    """The discrete Gaussian mechanism for integer queries: ``f(D) + N_Z(0, σ²)`` per value.

    ``ρ = Δ²/(2σ²)``-zCDP for an L2 sensitivity ``Δ`` (CKS20 Theorem 4), charged as
    :attr:`rho` (the module docstring's float slack added).

    Parameters
    ----------
    sigma : float, optional
        The noise's σ.
    rho : float, optional
        The zCDP target instead: ``σ = Δ / sqrt(2ρ)``.
    epsilon, delta : float, optional
        The (ε, δ) target instead (as :class:`GaussianMechanism`, on the integers).  Give
        exactly one of ``sigma``, ``rho`` and (``epsilon`` and ``delta``).
    sensitivity : float, default 1
        L2 sensitivity of the integer query (1 for a count or a histogram under add/remove,
        ``sqrt(2)`` for a histogram under replace-one).
    coordinates : int, default 1
        The most coordinates one change of neighbour moves.

    Examples
    --------
    >>> mech = DiscreteGaussianMechanism(rho=0.5)
    >>> mech.sigma, mech.rho_ideal
    (1.0, 0.5)
    """

    name = "discrete-gaussian"

    def __init__(self, *, sigma: float | None = None, rho: float | None = None,
                 epsilon: float | None = None, delta: float | None = None,
                 sensitivity: float = 1.0, coordinates: int = 1):
        sens = check_positive("sensitivity", sensitivity)
        coordinates = _check_coordinates(coordinates)
        _check_one_target(epsilon, delta, rho, sigma)
        shift = math.ceil(sens)
        if sigma is None:
            sigma = self._target(epsilon, delta, rho, sens, shift, coordinates)
        self._setup(_check_sigma(sigma), sens, 1.0, sens, shift, coordinates)

    def release(self, value, *, random: RandomSource | None = None):
        """Add noise to an integer scalar or to every value of an integer array
        (``|value| <= 2**62``; float arrays are refused): int64 on ``random.backend``."""
        source = random if random is not None else default_source()
        scalar = isinstance(value, numbers.Integral)
        x = _check_int_range(value, source)
        out = x.reshape(-1) + _draw(source, x.size, self._sampler)
        out = out.reshape(x.shape)
        return source.backend.scalar(out) if scalar else out


def _check_one_target(epsilon, delta, rho, sigma) -> None:
    given = (epsilon is not None or delta is not None) + (rho is not None) \
        + (sigma is not None)
    if given != 1 or (epsilon is None) != (delta is None):
        raise InputError(f"give exactly one of sigma and rho, or epsilon and delta together; "
                         f"got epsilon={epsilon!r}, delta={delta!r}, rho={rho!r}, "
                         f"sigma={sigma!r}")


class GaussianMechanism(_GaussianBase):
    """The Gaussian mechanism on the grid ``g·ℤ``: ``g (round(f(D)/g) + N_Z(0, (σ/g)²))``.

    Calibrated from ``(epsilon, delta)`` (Balle & Wang's analytic σ, increased until the
    discrete Gaussian itself meets the target on one coordinate; for several coordinates,
    the tight zCDP conversion), from ``rho`` or from ``sigma``.

    Parameters
    ----------
    epsilon, delta : float, optional
        The (ε, δ) target (both, or neither).
    rho : float, optional
        A zCDP target instead.
    sigma : float, optional
        The noise's σ in query units instead.
    sensitivity : float
        L2 sensitivity Δ of the query.
    granularity : float, optional
        Output grid step, a power of two; default the largest ``<= Δ / 4096``.
    coordinates : int, default 1
        The most coordinates one change of neighbour moves.

    Attributes
    ----------
    sigma, rho, delta_trunc : float
    epsilon, delta : float or None
        The (ε, δ) target when calibrated from it (the release is (ε, δ)-DP).

    Examples
    --------
    >>> mech = GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> round(mech.sigma, 3), mech.epsilon_at(1e-5) <= 1.0
    (3.732, True)
    """

    name = "gaussian"

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 rho: float | None = None, sigma: float | None = None,
                 sensitivity: float, granularity: float | None = None,
                 coordinates: int = 1):
        sens = check_positive("sensitivity", sensitivity)
        coordinates = _check_coordinates(coordinates)
        _check_one_target(epsilon, delta, rho, sigma)
        granularity = _grid_granularity(granularity, sens)
        shift = math.floor(sens / granularity) + 1
        l2 = float(shift) if coordinates == 1 else sens / granularity + math.sqrt(coordinates)
        if sigma is not None:
            grid_sigma = check_positive("sigma", sigma) / granularity
        else:
            grid_sigma = self._target(epsilon, delta, rho, l2, shift, coordinates)
        self._setup(grid_sigma, sens, granularity, l2, shift, coordinates)

    def release(self, value, *, random: RandomSource | None = None):
        """Add noise to a real scalar or every value of an array: float64 multiples of
        :attr:`granularity` on ``random.backend`` (``|value| <= 2**52 · granularity``;
        NaN or inf refused)."""
        source = random if random is not None else default_source()
        shaped, x = self._on_grid(value, source)
        xp = source.backend.xp
        steps = xp.rint(x / self.granularity) + _draw(source, x.shape[0],
                                                      self._sampler).astype(xp.float64)
        out = (steps * self.granularity).reshape(shaped.shape)
        return source.backend.scalar(out) if isinstance(value, numbers.Real) else out

