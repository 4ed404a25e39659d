"""Exact coins with per-value probabilities, vectorized on the backend (array passes).

The fused kernels of :mod:`gpuppdp.kernels.dp_noise` run trials whose probabilities are known
in advance (tables built on the host).  The discrete Gaussian and the selection mechanisms
need a different probability for every value; these helpers draw them with plain array calls
(NumPy, or CuPy on the GPU), in passes over the values still pending:

* :func:`bernoulli_float` -- ``True`` with probability exactly ``p`` (a float64 array), by
  comparing a uniform ``u`` read from the ChaCha20 keystream with the binary expansion of
  ``p`` as far as needed: ``p = M · 2**-(k + 53)`` with ``2**52 <= M < 2**53`` (``frexp``),
  and ``u < p`` iff the first ``k`` bits of ``u`` are 0 and its next 53 bits, as an integer,
  are below ``M``.  A 63-bit word decides ``k <= 10`` at once; otherwise 10 leading zeros
  (probability ``2**-10``) send the value to the next pass with ``k - 10``.
* :func:`bernoulli_exp` -- ``True`` with probability ``p̂ = fl(exp(-γ))`` for ``0 <= γ <= 700``
  (a normal float64, above ``1e-304``).  ``p̂`` is the backend's float64 ``exp``: the coin is
  exact for ``p̂``, which is within a relative :data:`EXP_ERROR` of ``exp(-γ)`` (checked
  against mpmath in the tests); callers add the rounding of ``γ`` itself and absorb the total
  into the privacy parameter, as :mod:`~gpuppdp.dp.mechanisms` does for the Laplace trials.
* :func:`uniform_below` -- uniform integers in ``[0, k)`` (``k`` per value), by rejection on
  63-bit words: exactly uniform.

References
----------
.. [CKS20] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020 (section 5: sampling with exact coins).
"""

from __future__ import annotations

from .randomness import RandomSource

__all__ = ["bernoulli_float", "bernoulli_exp", "uniform_below", "EXP_ERROR", "MAX_GAMMA"]

#: bound on ``|ln(p̂ / exp(-γ))|`` for the backend's float64 ``exp`` (16 ulps: glibc and
#: NumPy's SIMD ``exp`` are within 1-3 ulps, CUDA's double ``exp`` within 2)
EXP_ERROR = 16 * 2.0**-52
#: the largest ``γ`` of :func:`bernoulli_exp` (``exp(-700)`` is a normal float64)
MAX_GAMMA = 700.0
_MASK53 = (1 << 53) - 1


def bernoulli_float(source: RandomSource, p):
    """A boolean array, element ``i`` True with probability ``p[i]`` exactly.

    Parameters
    ----------
    source : RandomSource
    p : float64 array on ``source.backend`` with values in ``[0, 1]``

    Returns
    -------
    bool array on the backend, the shape of ``p``.
    """
    xp = source.backend.xp
    p = p.reshape(-1)
    out = p >= 1.0
    frac, exp = xp.frexp(p)  # p = frac · 2**exp, 0.5 <= frac < 1 (p > 0)
    mant = xp.ldexp(frac, 53).astype(xp.int64)  # M in [2**52, 2**53)
    zeros = (-exp).astype(xp.int64)  # k >= 0 for p < 1
    pending = xp.nonzero((p > 0.0) & (p < 1.0))[0]
    while pending.shape[0]:
        k, m = zeros[pending], mant[pending]
        r = source.random_bits(pending.shape[0])
        last = k <= 10
        kk = xp.minimum(k, 10)
        lead_zero = (r >> (63 - kk)) == 0
        below = ((r >> (10 - kk)) & _MASK53) < m
        out[pending[last & lead_zero & below]] = True
        go_on = ~last & lead_zero
        zeros[pending[go_on]] -= 10
        pending = pending[go_on]
    return out


def bernoulli_exp(source: RandomSource, gamma):
    """A boolean array, element ``i`` True with probability ``fl(exp(-gamma[i]))`` exactly.

    ``gamma`` (float64 on the backend) must lie in ``[0, MAX_GAMMA]``; the probability is the
    backend's float64 ``exp(-γ)``, within a relative :data:`EXP_ERROR` of the real one.
    """
    xp = source.backend.xp
    return bernoulli_float(source, xp.exp(-gamma))


def uniform_below(source: RandomSource, k):
    """Uniform integers ``0 <= x < k[i]`` (``k`` an int64 array, ``1 <= k < 2**62``), exact:
    a 63-bit word ``r`` is accepted below the largest multiple of ``k`` under ``2**63``."""
    xp = source.backend.xp
    k = k.reshape(-1).astype(xp.int64)
    out = xp.zeros(k.shape[0], dtype=xp.int64)
    top = (2**63 - 1 - ((2**63 - 1) % k + 1) % k)  # largest multiple of k, minus 1
    pending = xp.arange(k.shape[0])
    while pending.shape[0]:
        r = source.random_bits(pending.shape[0])
        ok = r <= top[pending]
        out[pending[ok]] = r[ok] % k[pending[ok]]
        pending = pending[~ok]
    return out
