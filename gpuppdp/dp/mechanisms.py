"""Noise mechanisms, vectorized on the active backend.

One sampler serves both additive mechanisms: the **discrete Laplace** (two-sided geometric)
distribution on the integers, ``P[Z = z] = (1 - a) / (1 + a) * a**|z|`` with
``a = exp(-1 / t)`` (Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020).

* :class:`GeometricMechanism` adds it to integer queries (counts, histograms) with
  ``t = Δ/ε``: released counts are integers, no floating-point value ever leaves.
* :class:`LaplaceMechanism` answers real-valued queries with it on the grid ``g·ℤ``,
  ``g = 2**k``, the construction OpenDP and Google's differential-privacy library use against
  Mironov's floating-point attack (Mironov 2012): the query value is rounded to the grid,
  integer noise is added in units of ``g``, and the result is scaled back by an exact power of
  two.  Every output is a multiple of ``g`` whatever the input, so the low bits of an output
  carry no trace of the input.  Rounding can move a value by up to half a step, so the
  sensitivity in grid units is ``floor(Δ/g) + 1``; the default ``g`` is the largest power of
  two ``<= Δ / 4096``, which costs at most 0.025 % more noise than textbook ``Lap(Δ/ε)``.

  We chose the grid over the snapping mechanism (Mironov 2012) because it shares the exact
  integer sampler with the count mechanism (one code path to test), needs no clamping bound
  ``B`` on the query value and no ε overhead from snapping, and outputs values on a fixed
  public grid.

The sampler
-----------
Each value uses 63 uniform bits (:meth:`RandomSource.random_bits`): one for the sign, 62 for a
uniform ``U`` in ``(0, 1]`` with resolution ``2**-62``; the magnitude is the inverse CDF
``|Z| = floor(-t * log(U * (1 + a) / 2))``, which gives ``P[|Z| >= m] = 2 a**m / (1 + a)``.
Everything is elementwise ``xp`` arithmetic with no loops and no rejection, so it runs
unchanged on CuPy; it is a dozen unfused passes over the array, not one fused kernel
(``benchmarks/bench_dp.py`` measures the cost against the bound of writing the output).

Two deviations from the ideal distribution are inherent to a 62-bit uniform and are bounded
here, not hidden: the support is truncated at ``|Z| <= 43.7 t`` (mass ``< 2**-62``), and each
bucket's mass is off by at most one representable step of ``U`` at its boundary (``2**-62``
below ``U = 2**-9``, a relative ``2**-53`` above) plus a few ulp from ``log``.  The
mechanisms are therefore ε'-DP with ``ε' <= ε + t·2**-51`` up to an additive ``δ`` of order
``(44 t + 1)·2**-61`` per value: for the default grid at ε >= 0.01 (``t < 2**20``) that is
``ε' < ε + 2**-31``, ``δ < 2**-35``; for unit-sensitivity counts at ε >= 0.1,
``δ < 2**-52``.  Negligible, but stated.  An exact sampler with rational arithmetic
(Canonne et al. 2020, Algorithm 2) needs per-value loops that do not vectorize on a GPU.

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014: Definition 3.3 (Laplace mechanism),
   Theorem 3.6, section 3.2 (randomized response).
.. [GRS09] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing
   privacy mechanisms", STOC 2009 (the geometric mechanism).
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020 (discrete Laplace, section 2 and Algorithm 2).
.. [Mir12] I. Mironov, "On significance of the least significant bits for differential
   privacy", ACM CCS 2012.
.. [War65] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", J. Amer. Statist. Assoc. 60(309), 1965.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..validation import check_epsilon, check_positive, check_probability
from .randomness import RandomSource, default_source

__all__ = ["discrete_laplace_noise", "LaplaceMechanism", "GeometricMechanism",
           "RandomizedResponse"]

_UNIFORM_BITS = 62
_LOG_UNIFORM_SCALE = _UNIFORM_BITS * math.log(2.0)  # log(2**62)
_MAX_GRID_SCALE = 2.0**46  # noise magnitudes stay < 44 * 2**46 < 2**52: exact in float64
_MAX_GRID_VALUE = 2.0**61  # query values are clipped (1-Lipschitz) so value + noise fits int64
_DEFAULT_GRID_STEPS = 4096  # default granularity: largest power of two <= sensitivity / 4096


def discrete_laplace_noise(shape, *, scale: float, random: RandomSource | None = None):
    """Draw discrete Laplace (two-sided geometric) noise on the integers.

    ``P[Z = z] = (1 - a) / (1 + a) * a**|z|`` with ``a = exp(-1/scale)``.

    Parameters
    ----------
    shape : int or tuple of int
    scale : float
        ``t > 0``; the distribution is the integer analogue of ``Lap(t)``
        (variance ``2a / (1 - a)**2``, close to ``2 t**2`` for large ``t``).
    random : RandomSource, optional
        Defaults to the OS-seeded :func:`default_source`.

    Returns
    -------
    array of int64 on ``random.backend``.

    Notes
    -----
    Inverse-CDF sampling of the magnitude from a 62-bit uniform plus a sign bit; see the
    module docstring for the bounded truncation.  Scales above ``2**46`` are refused (the
    noise then stays below ``2**52``, exact in float64).

    References
    ----------
    .. [1] Ghosh, Roughgarden and Sundararajan, STOC 2009.
    .. [2] Canonne, Kamath and Steinke, NeurIPS 2020, section 2.
    """
    scale = check_positive(scale, "scale")
    if scale > _MAX_GRID_SCALE:
        raise ValueError(f"scale must be <= 2**46 for the 64-bit sampler, got {scale:g}")
    source = random if random is not None else default_source()
    xp = source.backend.xp
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    bits = source.random_bits(math.prod(shape))  # 1-D: 0-d arithmetic yields scalars
    # in place where possible: allocating fresh arrays costs more than the arithmetic
    sign = bits & 1
    xp.negative(sign, out=sign)  # 0 or -1 (all bits set)
    bits >>= 1  # m, 62 uniform bits
    # log(U * (1 + a) / 2) with U = (m + 1/2) / 2**62
    log_c = math.log1p(0.5 * math.expm1(-1.0 / scale)) - _LOG_UNIFORM_SCALE
    u = bits.astype(xp.float64)
    u += 0.5
    xp.log(u, out=u)
    u += log_c
    u *= -scale
    xp.floor(u, out=u)
    xp.copyto(bits, u, casting="unsafe")  # the magnitude: an integer < 2**52, exact
    bits ^= sign  # two's complement negation where sign == -1: (m ^ -1) + 1 = -m
    bits -= sign
    return bits.reshape(shape)


class _GridMechanism:
    """Additive discrete-Laplace noise on the grid ``granularity * ℤ`` (shared machinery)."""

    name = ""

    def __init__(self, epsilon: float, sensitivity: float, granularity: float,
                 grid_sensitivity: int):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.granularity = granularity
        self.grid_sensitivity = grid_sensitivity
        self.grid_scale = grid_sensitivity / epsilon
        if self.grid_scale > _MAX_GRID_SCALE:
            raise ValueError(
                f"noise scale {self.grid_scale:g} grid steps is too large for the 64-bit "
                f"sampler (epsilon={epsilon:g}, sensitivity={sensitivity:g}); increase "
                "epsilon or the granularity")
        self._alpha = math.exp(-1.0 / self.grid_scale)

    @property
    def scale(self) -> float:
        """Laplace scale ``b`` of the noise in query units (``Δ/ε``, grid-adjusted)."""
        return self.grid_scale * self.granularity

    @property
    def variance(self) -> float:
        """Exact variance of the noise, ``2a / (1 - a)**2 * g**2`` (about ``2 b**2``)."""
        a = self._alpha
        return 2.0 * a / (-math.expm1(-1.0 / self.grid_scale)) ** 2 * self.granularity**2

    @property
    def std(self) -> float:
        """Standard deviation of the noise."""
        return math.sqrt(self.variance)

    @property
    def expected_abs_error(self) -> float:
        """``E|noise| = 2a / (1 - a**2) * g`` (about ``b``)."""
        a = self._alpha
        return 2.0 * a / (-math.expm1(-2.0 / self.grid_scale)) * self.granularity

    def info(self) -> dict:
        """The mechanism's parameters and error, as recorded on releases."""
        return {"mechanism": self.name, "epsilon": self.epsilon,
                "sensitivity": self.sensitivity, "granularity": self.granularity,
                "scale": self.scale, "std": self.std,
                "expected_abs_error": self.expected_abs_error}

    def _add_noise(self, grid_values, source: RandomSource):
        """Add noise in place to ``grid_values`` (integers, int64 or float64, on the source's
        backend)."""
        grid_values += discrete_laplace_noise(grid_values.shape, scale=self.grid_scale,
                                              random=source)
        return grid_values


def _on_backend(value, source: RandomSource, dtype):
    """``value`` as an array of ``dtype`` on the source's backend (explicit transfer only)."""
    backend = source.backend
    if isinstance(value, backend.xp.ndarray):
        return value.astype(dtype)  # a copy: the mechanism adds noise in place
    return backend.asarray(np.array(value, dtype=dtype))


class LaplaceMechanism(_GridMechanism):
    """The Laplace mechanism ``M(D) = f(D) + Lap(Δf/ε)``, safe against floating-point attacks.

    Implemented as discrete Laplace noise on the grid ``g·ℤ`` (see the module docstring):
    outputs are exact multiples of ``granularity``, so two neighbouring inputs have the same
    set of possible outputs.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε > 0 (finite).
    sensitivity : float
        Global L1 sensitivity Δf > 0 of the query under the chosen neighbouring relation
        (see :mod:`gpuppdp.dp.sensitivity`).
    granularity : float, optional
        Output grid step, a power of two.  Default: the largest power of two
        ``<= sensitivity / 4096``.

    Attributes
    ----------
    scale : float
        Laplace scale ``b = (floor(Δ/g) + 1) g / ε`` (at most 0.025 % above ``Δ/ε`` by
        default).
    expected_abs_error, std, variance : float

    References
    ----------
    .. [1] Dwork and Roth 2014, Definition 3.3 and Theorem 3.6.
    .. [2] Mironov 2012 (the attack on textbook floating-point Laplace sampling).
    .. [3] Canonne, Kamath and Steinke 2020 (discrete Laplace).

    Examples
    --------
    >>> from gpuppdp.dp import RandomSource
    >>> mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    >>> round(mech.scale, 4)
    1.0002
    >>> out = mech.release([10.0, 20.0], random=RandomSource("cpu"))
    """

    name = "laplace"

    def __init__(self, *, epsilon: float, sensitivity: float, granularity: float | None = None):
        epsilon = check_epsilon(epsilon)
        sensitivity = check_positive(sensitivity, "sensitivity")
        if granularity is None:
            # largest power of two <= Δ/4096: Δ/4096 = m * 2**e with 0.5 <= m < 1
            granularity = math.ldexp(1.0, math.frexp(sensitivity / _DEFAULT_GRID_STEPS)[1] - 1)
        else:
            granularity = check_positive(granularity, "granularity")
            if math.frexp(granularity)[0] != 0.5:
                raise ValueError(f"granularity must be a power of two, got {granularity!r}")
        if not math.isfinite(1.0 / granularity):
            raise ValueError(f"granularity {granularity!r} is too small to scale by exactly")
        super().__init__(epsilon, sensitivity, granularity,
                         math.floor(sensitivity / granularity) + 1)

    def release(self, value, *, random: RandomSource | None = None):
        """Add noise to a real scalar or to every value of an array.

        Parameters
        ----------
        value : float or array_like
            Query answer(s) ``f(D)``; must be finite.  Arrays may live on the host or on the
            source's device.
        random : RandomSource, optional
            Defaults to the OS-seeded :func:`default_source`.

        Returns
        -------
        float (for a scalar) or float64 array on ``random.backend`` (same shape).
        """
        source = random if random is not None else default_source()
        scalar = isinstance(value, numbers.Real)
        xp = source.backend.xp
        x = _on_backend(value, source, np.float64)
        if not source.backend.scalar(xp.isfinite(x).all()):
            raise ValueError("query values must be finite (got NaN or inf)")
        x *= 1.0 / self.granularity  # exact: a power of two
        xp.rint(x, out=x)
        xp.clip(x, -_MAX_GRID_VALUE, _MAX_GRID_VALUE, out=x)
        # x holds integers (|x| <= 2**61) and |noise| < 2**52, so the float64 sum is the
        # correctly rounded exact integer sum: a function of round(value / g) + noise only
        self._add_noise(x, source)
        x *= self.granularity
        return source.backend.scalar(x) if scalar else x


class GeometricMechanism(_GridMechanism):
    """The geometric (discrete Laplace) mechanism for integer queries: counts, histograms.

    ``M(D) = f(D) + Z`` with ``P[Z = z] ∝ exp(-ε |z| / Δ)``; outputs are integers.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε > 0 (finite).
    sensitivity : int, default 1
        Global L1 sensitivity Δ of the integer query, a positive integer (1 for a count or
        for a histogram under add/remove-one neighbours, 2 for a histogram under
        replace-one; see :mod:`gpuppdp.dp.sensitivity`).

    Attributes
    ----------
    scale : float
        ``Δ/ε``; ``alpha = exp(-ε/Δ)``.
    expected_abs_error, std, variance : float

    References
    ----------
    .. [1] Ghosh, Roughgarden and Sundararajan, STOC 2009.
    .. [2] Canonne, Kamath and Steinke, NeurIPS 2020.

    Examples
    --------
    >>> mech = GeometricMechanism(epsilon=1.0)
    >>> round(mech.alpha, 4), round(mech.expected_abs_error, 4)
    (0.3679, 0.8509)
    """

    name = "geometric"

    def __init__(self, *, epsilon: float, sensitivity: int = 1):
        epsilon = check_epsilon(epsilon)
        sens = check_positive(sensitivity, "sensitivity")
        if not sens.is_integer():
            raise ValueError(f"sensitivity of an integer query must be a positive integer, "
                             f"got {sensitivity!r}")
        super().__init__(epsilon, sens, 1.0, int(sens))

    @property
    def alpha(self) -> float:
        """``exp(-ε/Δ)``, the ratio of neighbouring probabilities of the noise."""
        return self._alpha

    def release(self, value, *, random: RandomSource | None = None):
        """Add integer noise to an integer scalar or to every value of an integer array.

        Parameters
        ----------
        value : int or array_like of int
            Query answer(s); float arrays are refused (use :class:`LaplaceMechanism`).
        random : RandomSource, optional
            Defaults to the OS-seeded :func:`default_source`.

        Returns
        -------
        int (for a scalar) or int64 array on ``random.backend``.
        """
        source = random if random is not None else default_source()
        scalar = isinstance(value, numbers.Integral)
        if not scalar:
            kind = (value.dtype.kind if hasattr(value, "dtype")
                    else np.asarray(value).dtype.kind)
            if kind not in "iub":
                raise ValueError("the geometric mechanism releases integer queries; got "
                                 f"values of dtype kind {kind!r} (use LaplaceMechanism for "
                                 "real-valued queries)")
        out = self._add_noise(_on_backend(value, source, np.int64), source)
        return source.backend.scalar(out) if scalar else out


class RandomizedResponse:
    """Warner's randomized response for one yes/no attribute (local differential privacy).

    Each respondent reports the truth with probability ``p = 1/2 + γ`` and the opposite
    otherwise; the release is ε-DP per respondent with ``ε = ln(p / (1 - p))``.  The
    *coin protocol* of Dwork & Roth (flip a coin; on tails answer truthfully, on heads answer
    with a second coin) is the case ``p = 3/4``, ``ε = ln 3``: :meth:`coin`.

    Parameters
    ----------
    epsilon : float, optional
        Privacy parameter; gives ``p = e**ε / (1 + e**ε)``.
    truth_probability : float, optional
        ``p`` in ``(1/2, 1)``.  Give exactly one of ``epsilon`` and ``truth_probability``.

    Attributes
    ----------
    epsilon, truth_probability : float

    References
    ----------
    .. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
       answer bias", JASA 60(309), 1965.
    .. [2] Dwork and Roth 2014, section 3.2.

    Examples
    --------
    >>> rr = RandomizedResponse.coin()
    >>> rr.truth_probability, round(rr.epsilon, 4)
    (0.75, 1.0986)
    >>> rr.estimate_count(40, 100)          # real_yes = 2x - n/2
    30.0
    """

    def __init__(self, *, epsilon: float | None = None, truth_probability: float | None = None):
        if (epsilon is None) == (truth_probability is None):
            raise ValueError("give exactly one of epsilon and truth_probability")
        if epsilon is not None:
            self.epsilon = check_epsilon(epsilon)
            self.truth_probability = 1.0 / (1.0 + math.exp(-self.epsilon))
        else:
            p = check_probability(truth_probability, "truth_probability", low=0.5, high=1.0)
            self.truth_probability = p
            self.epsilon = math.log(p / (1.0 - p))

    @classmethod
    def coin(cls) -> "RandomizedResponse":
        """The coin protocol: ``P[yes | truly yes] = 3/4``, ``P[yes | truly no] = 1/4``."""
        return cls(truth_probability=0.75)

    def release(self, truth, *, random: RandomSource | None = None):
        """Randomize true answers.

        Parameters
        ----------
        truth : array_like of bool
            The respondents' true answers (host or device array).
        random : RandomSource, optional

        Returns
        -------
        bool array on ``random.backend``: the reported answers.
        """
        source = random if random is not None else default_source()
        t = _on_backend(truth, source, np.bool_)
        return t ^ source.bernoulli(1.0 - self.truth_probability, t.shape)

    def estimate_count(self, yes: float, n: int) -> float:
        """Unbiased estimate of the number of true "yes" among ``n`` from ``yes`` reported.

        ``E[yes] = p·T + (1 - p)(n - T)``, hence ``T̂ = (yes - (1 - p) n) / (2p - 1)``.
        """
        p = self.truth_probability
        return (float(yes) - (1.0 - p) * n) / (2.0 * p - 1.0)

    def estimate_proportion(self, yes: float, n: int) -> float:
        """Unbiased estimate of the true proportion of "yes" among ``n`` respondents."""
        if n <= 0:
            raise ValueError(f"n must be a positive number of answers, got {n!r}")
        return self.estimate_count(yes, n) / n

    def estimator_std(self, n: int, proportion: float) -> float:
        """Standard deviation of :meth:`estimate_proportion` for ``n`` answers.

        ``Var = λ(1 - λ) / (n (2p - 1)**2)`` with ``λ = p π + (1 - p)(1 - π)`` (Warner 1965).
        """
        p = self.truth_probability
        lam = p * proportion + (1.0 - p) * (1.0 - proportion)
        return math.sqrt(lam * (1.0 - lam) / n) / (2.0 * p - 1.0)
