"""Noise mechanisms, vectorized on the active backend, with a stated (ε, δ).

One sampler serves both additive mechanisms: the **discrete Laplace** (two-sided geometric)
distribution on the integers, ``P[Z = z] = (1 - a) / (1 + a) * a**|z|`` with
``a = exp(-λ)`` (Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020).

* :class:`GeometricMechanism` adds it to integer queries (counts, histograms) with
  ``λ ≈ ε/Δ``: released counts are integers, no floating-point value ever leaves.
* :class:`LaplaceMechanism` answers real-valued queries with it on the grid ``g·ℤ``,
  ``g = 2**k``, the construction OpenDP and Google's differential-privacy library use against
  Mironov's floating-point attack (Mironov 2012): the query value is rounded to the grid,
  integer noise is added in units of ``g``, and the result is scaled back by an exact power of
  two.  Every output is a multiple of ``g`` whatever the input, so the low bits of an output
  carry no trace of the input.  Rounding can move each coordinate by up to half a step, so
  the sensitivity in grid units is ``floor(Δ/g) + c`` for a query of which at most ``c``
  coordinates change (``coordinates``, 1 by default); the default ``g`` is the largest power
  of two ``<= Δ / 4096``, which costs at most 0.025 % more noise than textbook ``Lap(Δ/ε)``.

  We chose the grid over the snapping mechanism (Mironov 2012) because it shares the exact
  integer sampler with the count mechanism (one code path to test), needs no clamping bound
  ``B`` on the query value and no ε overhead from snapping, and outputs values on a fixed
  public grid.

The sampler (exact trials, no floating-point inverse CDF)
---------------------------------------------------------
``Z`` is drawn from independent Bernoulli trials (:mod:`gpuppdp.kernels.dp_noise`): a sign
bit; ``Z != 0`` with probability ``2a / (1 + a)``; then ``|Z| - 1 = G = Σ_j b_j 2**j``, whose
binary digits are independent with ``P[b_j = 1] = q_j = a**(2**j) / (1 + a**(2**j))`` (the
digits of a geometric variable are independent).  Each trial compares a uniform read from the
ChaCha20 keystream *as far as needed* with the float64 probability, so it fires with exactly
that float's probability.  The probabilities are computed on the host to 120 significant
digits and rounded to the nearest float64 (the smaller of ``p`` and ``1 - p`` is rounded, so
both outcomes of a trial are within a relative ``2**-53`` of the ideal); trials with
``q_j < 2**-1000`` are dropped, which ends the support at ``|Z| <= 2**J`` (``J`` trials kept).

What is guaranteed (derived here, checked by exhaustive enumeration in the tests):

* **Inside the support** the sampled probability of any ``z`` is the ideal one times at most
  ``J + 1`` factors ``1 ± 2**-53`` (and a common factor ``< 1 + 2**-997`` from the dropped
  digits): ``|ln(P̂[z] / P[z])| <= σ`` with ``σ = (J + 3) · 2**-51`` (generous).  The
  mechanism therefore runs the sampler at ``λ = (ε - 2 σ c) / Δ_grid``, rounded down, so that
  the ratio of the output probabilities of neighbouring inputs is at most ``e**ε`` wherever
  both are in the support: the stated ε is not exceeded by the rounding.
* **δ** is the probability that an output of one input lies outside the support of the
  neighbour's output: a coordinate shifted by ``d`` (``|d| <= Δ_grid <= 2**(J - 1)``) can
  only leave the support if ``|Z| > 2**J - Δ_grid``, which needs the top digit ``b_(J-1)``:
  ``δ <= c · q̂_(J-1)``, below ``c · 2e-150`` for every ε the mechanisms accept (the digit
  after the top one fails ``λ 2**J <= 700`` or ``q_J >= 2**-1000``, so ``λ 2**(J-1) > 346``)
  (:attr:`_GridMechanism.delta`, recorded in :meth:`~_GridMechanism.info` and charged to the
  accountant with every release).
* So every release is **(ε, δ)-differentially private** with the δ it records; it is not
  pure ε-DP, because a finite sampler cannot have the infinite support that needs.
* ε is refused where ``Δ_grid > 2**(J - 1)``, which happens only for ``ε / Δ_grid`` above
  about 690 (the noise would then vanish below the smallest float64 probability), and the
  grid scale ``Δ_grid / ε`` is limited to ``2**40`` (noise and values stay exact in int64
  and float64).  Values whose grid position ``|x / g|`` exceeds ``2**52`` (Laplace) or whose
  magnitude exceeds ``2**62`` (geometric) raise :class:`NoiseRangeError`: nothing is ever
  clipped or wrapped.

Randomized response draws its flips with the same exact trials and a flip probability
rounded *up* to a float64, so it is ε-DP with δ = 0 (its effective ε is at most the one
stated), down to flip probabilities of ``5e-324``.

References
----------
.. [DR14] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014: Definition 3.3 (Laplace mechanism),
   Theorem 3.6, section 3.2 (randomized response).
.. [GRS09] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing
   privacy mechanisms", STOC 2009 (the geometric mechanism).
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020 (discrete Laplace, section 2).
.. [Mir12] I. Mironov, "On significance of the least significant bits for differential
   privacy", ACM CCS 2012.
.. [War65] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
   answer bias", J. Amer. Statist. Assoc. 60(309), 1965.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from ..errors import InputError, InputTypeError
from ..kernels.dp_noise import bernoulli_tables
from ..validation import check_epsilon, check_positive, check_probability
from .randomness import RandomSource, default_source

__all__ = ["discrete_laplace_noise", "LaplaceMechanism", "GeometricMechanism",
           "RandomizedResponse", "NoiseRangeError", "DiscreteLaplaceSampler"]

_PRECISION = 120  # decimal digits of the host-side probability computations
_DROP_BELOW = Decimal(2) ** -1000  # trials rarer than this are dropped: the support ends
_MAX_EXPONENT = 700  # a**(2**j) = exp(-λ 2**j) below exp(-700) < 2**-1009: dropped
_SIGMA_UNIT = 2.0**-51  # σ = (J + 3) * 2**-51 bounds the log-ratio error of one output
_MAX_GRID_SCALE = 2.0**40  # noise magnitudes stay < 2**J <= 1386 * 2**40 < 2**52
_MAX_GRID_UNITS = 2.0**52  # |value / g| <= 2**52: value + noise exact in float64
_MAX_INT_VALUE = 2**62  # |value| <= 2**62: value + noise exact in int64
_DEFAULT_GRID_STEPS = 4096  # default granularity: largest power of two <= sensitivity / 4096


class NoiseRangeError(InputError, OverflowError):
    """A query value lies outside the range the mechanism computes exactly (never clipped)."""


# --- the sampler ------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiscreteLaplaceSampler:
    """The trials of the discrete Laplace sampler at rate ``λ`` (``P[Z = z] ∝ e**(-λ|z|)``).

    Attributes
    ----------
    rate : float
        ``λ``.
    bits : int
        ``J``, the number of binary digits of ``|Z| - 1`` drawn (the support is
        ``|Z| <= 2**J``).
    probabilities : tuple of float
        The float64 probability of each trial as run (row 0, the sign, is a plain bit),
        after taking the smaller side; ``invert`` says which rows are complemented.
    invert : tuple of int
    top_probability : float
        ``q̂_(J-1)``, the probability of the top digit: bounds δ per changed coordinate.
    tables : tuple of arrays
        Host tables for the kernels (:func:`gpuppdp.kernels.dp_noise.bernoulli_tables`).
    """

    rate: float
    bits: int
    probabilities: tuple
    invert: tuple
    top_probability: float
    tables: tuple

    @property
    def sigma(self) -> float:
        """Bound on ``|ln(P̂[z] / P[z])|`` over the support (see the module docstring)."""
        return (self.bits + 3) * _SIGMA_UNIT


def _float_down(value: Decimal) -> float:
    f = float(value)
    return math.nextafter(f, -math.inf) if Decimal(f) > value else f


def _float_up(value: Decimal) -> float:
    f = float(value)
    return math.nextafter(f, math.inf) if Decimal(f) < value else f


@functools.lru_cache(maxsize=512)
def _sampler(rate: float) -> DiscreteLaplaceSampler:
    """The trial probabilities of the discrete Laplace distribution at rate ``rate``."""
    with decimal.localcontext() as ctx:
        ctx.prec = _PRECISION
        lam = Decimal(rate)
        e = min(lam, Decimal(2 * _MAX_EXPONENT)).exp()  # beyond: P[Z != 0] < 2**-2000 anyway
        p_nonzero = 2 / (e + 1)
        if p_nonzero <= Decimal("0.5"):
            nonzero, flag = p_nonzero, 0
        else:
            nonzero, flag = (e - 1) / (e + 1), 1  # P[Z = 0], complemented
        probs, flags = [0.0, float(nonzero)], [0, flag]
        j = 0
        while lam * 2**j <= _MAX_EXPONENT:
            q = 1 / (1 + (lam * 2**j).exp())
            if q < _DROP_BELOW:
                break
            probs.append(float(q))
            flags.append(0)
            j += 1
    tables = bernoulli_tables(probs, flags)
    return DiscreteLaplaceSampler(rate=rate, bits=j, probabilities=tuple(probs),
                                  invert=tuple(flags),
                                  top_probability=probs[-1] if j else 1.0, tables=tables)


def _calibrate(epsilon: float, grid_sensitivity: int, coordinates: int, what: str):
    """The sampler of an ε-DP mechanism of integer sensitivity ``grid_sensitivity`` whose
    release changes at most ``coordinates`` coordinates: ``(sampler, delta)``."""
    if grid_sensitivity / epsilon > _MAX_GRID_SCALE:
        raise InputError(
            f"noise scale {grid_sensitivity / epsilon:g} grid steps is too large for the "
            f"exact sampler (epsilon={epsilon:g}, {what}); increase epsilon or the "
            "granularity")
    first = _sampler(epsilon / grid_sensitivity)
    reserve = 2 * coordinates * (first.bits + 4) * _SIGMA_UNIT  # room for one more digit
    with decimal.localcontext() as ctx:
        ctx.prec = _PRECISION
        rate = _float_down((Decimal(epsilon) - Decimal(reserve)) / grid_sensitivity)
    sampler = _sampler(rate)
    if sampler.bits == 0 or grid_sensitivity > 2 ** (sampler.bits - 1):
        raise InputError(
            f"epsilon={epsilon:g} is too large for {what}: epsilon per grid step "
            f"({epsilon / grid_sensitivity:.4g}) must stay below about 690, or the noise "
            "vanishes below the smallest float64 probability and the release stops being "
            "differentially private")
    if 2 * coordinates * sampler.sigma > reserve:  # pragma: no cover - J grows by <= 1
        raise AssertionError("sampler calibration: the rounding reserve is too small")
    return sampler, min(1.0, coordinates * sampler.top_probability)


def discrete_laplace_noise(shape, *, scale: float, random: RandomSource | None = None):
    """Draw discrete Laplace (two-sided geometric) noise on the integers.

    ``P[Z = z] = (1 - a) / (1 + a) * a**|z|`` with ``a = exp(-1/scale)`` (``1/scale``
    rounded to float64), from the exact sampler of the module docstring.

    Parameters
    ----------
    shape : int or tuple of int
    scale : float
        ``t > 0``; the distribution is the integer analogue of ``Lap(t)``
        (variance ``2a / (1 - a)**2``, close to ``2 t**2`` for large ``t``).
    random : RandomSource, optional
        Defaults to the OS-keyed :func:`default_source`.

    Returns
    -------
    array of int64 on ``random.backend``.

    Notes
    -----
    Scales above ``2**40`` are refused (the noise then stays below ``2**52``, exact in
    float64), as are scales so small that the noise would be identically 0.

    References
    ----------
    .. [1] Ghosh, Roughgarden and Sundararajan, STOC 2009.
    .. [2] Canonne, Kamath and Steinke, NeurIPS 2020, section 2.
    """
    scale = check_positive("scale", scale)
    if scale > _MAX_GRID_SCALE:
        raise InputError(f"scale must be <= 2**40 for the exact sampler, got {scale:g}")
    sampler = _sampler(1.0 / scale)
    if sampler.bits == 0:
        raise InputError(f"scale {scale:g} is too small: the noise would be identically 0")
    source = random if random is not None else default_source()
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    n = math.prod(shape)
    return source.discrete_noise(None, n, sampler.tables).reshape(shape)


def _check_coordinates(coordinates) -> int:
    """The number of coordinates one person changes, an integer >= 1."""
    if (isinstance(coordinates, bool) or not isinstance(coordinates, numbers.Integral)
            or coordinates < 1):
        raise InputError(f"coordinates must be an integer >= 1, got {coordinates!r}")
    return int(coordinates)


def _grid_granularity(granularity: float | None, sensitivity: float) -> float:
    """The grid's step: ``granularity`` (a power of two), by default the largest power of two
    <= ``sensitivity / 4096`` (``Δ/4096 = m * 2**e`` with ``0.5 <= m < 1``)."""
    if granularity is None:
        return math.ldexp(1.0, math.frexp(sensitivity / _DEFAULT_GRID_STEPS)[1] - 1)
    granularity = check_positive("granularity", granularity)
    if math.frexp(granularity)[0] != 0.5:
        raise InputError(f"granularity must be a power of two, got {granularity!r}")
    return granularity


class _GridNoise:
    """Additive noise on the grid ``granularity * ℤ``, drawn in grid steps by a sampler: the
    base of the discrete Laplace and the discrete Gaussian mechanisms
    (:mod:`gpuppdp.dp.gaussian`)."""

    name = ""
    _sampler: Any  # DiscreteLaplaceSampler or gaussian.DiscreteGaussianSampler

    def _set_grid(self, sensitivity: float, granularity: float, grid_sensitivity: float,
                  coordinates: int) -> None:
        """The query's sensitivity, the grid, the sensitivity in grid steps and the number
        of coordinates one person changes."""
        self.sensitivity = sensitivity
        self.granularity = granularity
        self.grid_sensitivity = grid_sensitivity
        self.coordinates = coordinates

    @property
    def sampler(self):
        """The sampler of the noise in grid steps."""
        return self._sampler

    def _on_grid(self, value, source: RandomSource):
        """``value`` as a float64 array on the source's backend and flattened, refused when
        not finite or beyond ``2**52 · granularity`` (:class:`NoiseRangeError`; the message
        states the range, never the value)."""
        backend, xp = source.backend, source.backend.xp
        x = _on_backend(value, source, np.float64)
        flat = x.reshape(-1)
        if flat.shape[0]:
            largest = backend.scalar(xp.max(xp.abs(flat)))
            if not math.isfinite(largest):
                raise InputError("query values must be finite (got NaN or inf)")
            if largest / self.granularity > _MAX_GRID_UNITS:
                raise NoiseRangeError(
                    f"a query value is out of the {self.name.capitalize()} mechanism's exact "
                    "range (the value is not shown: it may be private): |value| must be <= "
                    f"2**52 * granularity = {_MAX_GRID_UNITS * self.granularity:g} "
                    f"(granularity {self.granularity:g}); pass a coarser granularity")
        return x, flat


class _GridMechanism(_GridNoise):
    """Additive discrete-Laplace noise on the grid ``granularity * ℤ`` (shared machinery)."""

    _sampler: DiscreteLaplaceSampler

    def __init__(self, epsilon: float, sensitivity: float, granularity: float,
                 grid_sensitivity: int, coordinates: int):
        self.epsilon = epsilon
        self._set_grid(sensitivity, granularity, grid_sensitivity, coordinates)
        self._sampler, self._delta = _calibrate(
            epsilon, grid_sensitivity, coordinates,
            f"sensitivity {sensitivity:g}" + (f", granularity {granularity:g}"
                                              if self.name == "laplace" else ""))
        self.grid_scale = 1.0 / self._sampler.rate
        self._alpha = math.exp(-self._sampler.rate)

    @property
    def delta(self) -> float:
        """The δ of the (ε, δ) guarantee of one release (see the module docstring)."""
        return self._delta

    @property
    def scale(self) -> float:
        """Laplace scale ``b`` of the noise in query units (``Δ/ε``, grid-adjusted)."""
        return self.grid_scale * self.granularity

    @property
    def variance(self) -> float:
        """Exact variance of the noise, ``2a / (1 - a)**2 * g**2`` (about ``2 b**2``)."""
        a = self._alpha
        return 2.0 * a / (-math.expm1(-self._sampler.rate)) ** 2 * self.granularity**2

    @property
    def std(self) -> float:
        """Standard deviation of the noise."""
        return math.sqrt(self.variance)

    @property
    def expected_abs_error(self) -> float:
        """``E|noise| = 2a / (1 - a**2) * g`` (about ``b``)."""
        a = self._alpha
        return 2.0 * a / (-math.expm1(-2.0 * self._sampler.rate)) * self.granularity

    def info(self) -> dict:
        """The mechanism's parameters, guarantee and error, as recorded on releases."""
        return {"mechanism": self.name, "epsilon": self.epsilon, "delta": self.delta,
                "sensitivity": self.sensitivity, "granularity": self.granularity,
                "scale": self.scale, "std": self.std,
                "expected_abs_error": self.expected_abs_error}


def _on_backend(value, source: RandomSource, dtype):
    """``value`` as an array of ``dtype`` on the source's backend (explicit transfer only)."""
    backend = source.backend
    if isinstance(value, backend.xp.ndarray):
        return value.astype(dtype)  # a copy
    return backend.asarray(np.array(value, dtype=dtype))


class LaplaceMechanism(_GridMechanism):
    """The Laplace mechanism ``M(D) = f(D) + Lap(Δf/ε)``, safe against floating-point attacks.

    Implemented as discrete Laplace noise on the grid ``g·ℤ`` (see the module docstring):
    outputs are exact multiples of ``granularity``, so two neighbouring inputs have the same
    set of possible outputs.  (ε, δ)-DP with the :attr:`delta` the sampler's support implies
    (below ``2e-150`` per changed coordinate).

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
    coordinates : int, default 1
        The most coordinates of a vector query that one change of neighbour moves (1 for a
        scalar, a histogram or per-group sums under add/remove, 2 under replace-one): each
        may round one grid step further.

    Attributes
    ----------
    scale : float
        Laplace scale ``b ≈ (floor(Δ/g) + coordinates) g / ε`` (at most 0.025 % above
        ``Δ/ε`` by default).
    delta : float
    expected_abs_error, std, variance : float

    Raises
    ------
    NoiseRangeError
        From :meth:`release`, for values with ``|value| / granularity > 2**52``.

    References
    ----------
    .. [1] Dwork and Roth 2014, Definition 3.3 and Theorem 3.6.
    .. [2] Mironov 2012 (the attack on textbook floating-point Laplace sampling).
    .. [3] Canonne, Kamath and Steinke 2020 (discrete Laplace).

    Examples
    --------
    >>> from gpuppdp.dp import RandomSource
    >>> mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    >>> round(mech.scale, 4), mech.delta < 2e-150
    (1.0002, True)
    >>> out = mech.release([10.0, 20.0], random=RandomSource("cpu"))
    """

    name = "laplace"

    def __init__(self, *, epsilon: float, sensitivity: float, granularity: float | None = None,
                 coordinates: int = 1):
        epsilon = check_epsilon("epsilon", epsilon)
        sensitivity = check_positive("sensitivity", sensitivity)
        coordinates = _check_coordinates(coordinates)
        granularity = _grid_granularity(granularity, sensitivity)
        if not math.isfinite(1.0 / granularity):
            raise InputError(f"granularity {granularity!r} is too small to scale by exactly")
        super().__init__(epsilon, sensitivity, granularity,
                         math.floor(sensitivity / granularity) + coordinates, coordinates)

    def release(self, value, *, random: RandomSource | None = None):
        """Add noise to a real scalar or to every value of an array.

        Parameters
        ----------
        value : float or array_like
            Query answer(s) ``f(D)``; must be finite, with ``|value| <= 2**52 · granularity``
            (exact grid arithmetic).  Arrays may live on the host or on the source's device.
        random : RandomSource, optional
            Defaults to the OS-keyed :func:`default_source`.

        Returns
        -------
        float (for a scalar) or float64 array on ``random.backend`` (same shape).

        Raises
        ------
        ValueError
            NaN or infinite values.
        NoiseRangeError
            A value beyond ``2**52 · granularity`` (the message states the range, never the
            value: a query value may be private).
        """
        source = random if random is not None else default_source()
        x, flat = self._on_grid(value, source)
        out = source.grid_noise(flat, self._sampler.tables, self.granularity).reshape(x.shape)
        return source.backend.scalar(out) if isinstance(value, numbers.Real) else out


def _check_int_range(value, source: RandomSource):
    """``value`` (integers) as an int64 backend array; :class:`NoiseRangeError` beyond
    ``±2**62``, checked before any conversion (nothing wraps)."""
    backend = source.backend
    if isinstance(value, backend.xp.ndarray):
        arr, on_device = value, True
    else:
        arr, on_device = np.asarray(value), False
        if arr.dtype.kind == "O" and all(isinstance(v, numbers.Integral)
                                         for v in arr.reshape(-1)):
            ints = [int(v) for v in arr.reshape(-1)]
            if ints and max(abs(v) for v in ints) > _MAX_INT_VALUE:
                raise NoiseRangeError(_int_range_message())
            arr = np.array(ints, dtype=np.int64).reshape(arr.shape)
    kind = arr.dtype.kind
    if kind not in "iub":
        raise InputError("the geometric mechanism releases integer queries; got "
                         f"values of dtype kind {kind!r} (use LaplaceMechanism for "
                         "real-valued queries)")
    if arr.size and kind in "iu":
        hi = arr.max()
        lo = arr.min()
        hi, lo = (backend.scalar(hi), backend.scalar(lo)) if on_device else (int(hi), int(lo))
        if hi > _MAX_INT_VALUE or lo < -_MAX_INT_VALUE:
            raise NoiseRangeError(_int_range_message())
    if on_device:
        return arr.astype(backend.xp.int64)
    return backend.asarray(arr.astype(np.int64))


def _int_range_message() -> str:
    # the value is not quoted: a query value may be private (say the range only)
    return ("a query value is out of the geometric mechanism's exact range (the value is not "
            "shown: it may be private): |value| must be <= 2**62 so that value + noise is "
            "exact in int64")


class GeometricMechanism(_GridMechanism):
    """The geometric (discrete Laplace) mechanism for integer queries: counts, histograms.

    ``M(D) = f(D) + Z`` with ``P[Z = z] ∝ exp(-ε |z| / Δ)``; outputs are integers.  (ε, δ)-DP
    with the :attr:`delta` of the sampler (module docstring), at most ``Δ`` coordinates of a
    vector query changing.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε > 0 (finite, below about ``690 Δ``).
    sensitivity : int, default 1
        Global L1 sensitivity Δ of the integer query, a positive integer (1 for a count or
        for a histogram under add/remove-one neighbours, 2 for a histogram under
        replace-one; see :mod:`gpuppdp.dp.sensitivity`).

    Attributes
    ----------
    scale : float
        ``≈ Δ/ε``; ``alpha = exp(-1/scale)``.
    delta : float
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
        epsilon = check_epsilon("epsilon", epsilon)
        sens = check_positive("sensitivity", sensitivity)
        if not sens.is_integer():
            raise InputError(f"sensitivity of an integer query must be a positive integer, "
                             f"got {sensitivity!r}")
        super().__init__(epsilon, sens, 1.0, int(sens), int(sens))

    @property
    def alpha(self) -> float:
        """``exp(-1/scale)``, the ratio of neighbouring probabilities of the noise."""
        return self._alpha

    def release(self, value, *, random: RandomSource | None = None):
        """Add integer noise to an integer scalar or to every value of an integer array.

        Parameters
        ----------
        value : int or array_like of int
            Query answer(s), ``|value| <= 2**62``; float arrays are refused (use
            :class:`LaplaceMechanism`).
        random : RandomSource, optional
            Defaults to the OS-keyed :func:`default_source`.

        Returns
        -------
        int (for a scalar) or int64 array on ``random.backend``.

        Raises
        ------
        NoiseRangeError
            A value beyond ``±2**62`` (named: the caller passed it); nothing wraps.
        """
        source = random if random is not None else default_source()
        scalar = isinstance(value, numbers.Integral)
        x = _check_int_range(value, source)
        shape = x.shape
        flat = x.reshape(-1)
        out = source.discrete_noise(flat, flat.shape[0], self._sampler.tables).reshape(shape)
        return source.backend.scalar(out) if scalar else out


class RandomizedResponse:
    """Warner's randomized response for one yes/no attribute (local differential privacy).

    Each respondent reports the truth with probability ``p = 1/2 + γ`` and the opposite
    otherwise; the release is ε-DP per respondent with ``ε = ln(p / (1 - p))``.  The
    *coin protocol* of Dwork & Roth (flip a coin; on tails answer truthfully, on heads answer
    with a second coin) is the case ``p = 3/4``, ``ε = ln 3``: :meth:`coin`.

    The flips are exact Bernoulli trials with probability :attr:`flip_probability`, a float64
    rounded *up* from ``1 / (1 + e**ε)``: the effective ε is at most the one stated, δ = 0,
    and the flip probability stays positive for every finite ε (``4.2e-18`` at ε = 40,
    ``5e-324`` from ε ≈ 745 on).

    Parameters
    ----------
    epsilon : float, optional
        Privacy parameter; gives ``1 - p = 1 / (1 + e**ε)``.
    truth_probability : float, optional
        ``p`` in ``(1/2, 1)``.  Give exactly one of ``epsilon`` and ``truth_probability``.

    Attributes
    ----------
    epsilon : float
        An upper bound on the privacy loss (rounded up when derived from
        ``truth_probability``).
    flip_probability : float
        The exact probability that an answer is flipped.
    truth_probability : float
        ``1 - flip_probability`` rounded to float64 (1.0 once the flip probability is below
        ``2**-54``: read :attr:`flip_probability` then).
    delta : float
        0.

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
    >>> RandomizedResponse(epsilon=40.0).flip_probability > 0
    True
    """

    delta = 0.0

    def __init__(self, *, epsilon: float | None = None, truth_probability: float | None = None):
        if (epsilon is None) == (truth_probability is None):
            raise InputError("give exactly one of epsilon and truth_probability")
        with decimal.localcontext() as ctx:
            ctx.prec = _PRECISION
            if epsilon is not None:
                self.epsilon = check_epsilon("epsilon", epsilon)
                if self.epsilon > 1000.0:  # 1 / (1 + e**ε) < 2**-1074: the smallest float
                    flip = math.ulp(0.0)
                else:
                    flip = _float_up(1 / (1 + Decimal(self.epsilon).exp()))
            else:
                p = check_probability("truth_probability", truth_probability, low=0.5, high=1.0)
                flip = 1.0 - p  # exact (Sterbenz)
                self.epsilon = _float_up((Decimal(p) / Decimal(flip)).ln())

        self.flip_probability = flip
        self.truth_probability = 1.0 - flip
        self._tables = bernoulli_tables([flip])

    @classmethod
    def coin(cls) -> "RandomizedResponse":
        """The coin protocol: ``P[yes | truly yes] = 3/4``, ``P[yes | truly no] = 1/4``."""
        return cls(truth_probability=0.75)

    def info(self) -> dict:
        """The mechanism's parameters, as recorded on releases."""
        return {"mechanism": "randomized_response", "epsilon": self.epsilon, "delta": 0.0,
                "flip_probability": self.flip_probability}

    def release(self, truth, *, random: RandomSource | None = None):
        """Randomize true answers.

        Parameters
        ----------
        truth : array_like of bool
            The respondents' true answers (host or device array, or a bool).  Only booleans
            are accepted: strings, integers (0/1 included) and floats raise ``TypeError``.
        random : RandomSource, optional

        Returns
        -------
        bool array on ``random.backend``: the reported answers.
        """
        source = random if random is not None else default_source()
        backend = source.backend
        if isinstance(truth, backend.xp.ndarray):
            t = truth
        elif isinstance(truth, (bool, np.bool_)):
            t = backend.asarray(np.asarray(truth, dtype=np.bool_))
        else:
            host = np.asarray(truth)
            if host.dtype != np.bool_:
                raise InputTypeError(f"randomized response takes boolean answers, got dtype "
                                f"{host.dtype} (map the answers to True/False first)")
            t = backend.asarray(host)
        if t.dtype != backend.xp.bool_:
            raise InputTypeError(f"randomized response takes boolean answers, got dtype {t.dtype} "
                            "(map the answers to True/False first)")
        return t ^ source.bernoulli_table(self._tables, t.shape)

    def estimate_count(self, yes: float, n: int) -> float:
        """Unbiased estimate of the number of true "yes" among ``n`` from ``yes`` reported.

        ``E[yes] = p·T + (1 - p)(n - T)``, hence ``T̂ = (yes - (1 - p) n) / (2p - 1)``.
        """
        q = self.flip_probability
        return (float(yes) - q * n) / (1.0 - 2.0 * q)

    def estimate_proportion(self, yes: float, n: int) -> float:
        """Unbiased estimate of the true proportion of "yes" among ``n`` respondents."""
        if n <= 0:
            raise InputError(f"n must be a positive number of answers, got {n!r}")
        return self.estimate_count(yes, n) / n

    def estimator_std(self, n: int, proportion: float) -> float:
        """Standard deviation of :meth:`estimate_proportion` for ``n`` answers.

        ``Var = λ(1 - λ) / (n (2p - 1)**2)`` with ``λ = p π + (1 - p)(1 - π)`` (Warner 1965).
        """
        q = self.flip_probability
        lam = (1.0 - q) * proportion + q * (1.0 - proportion)
        return math.sqrt(lam * (1.0 - lam) / n) / (1.0 - 2.0 * q)
