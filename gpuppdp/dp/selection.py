"""Private selection: the exponential mechanism, report-noisy-max and permute-and-flip.

Each function takes ``scores`` (one row of candidate scores, or a 2-D array: one independent
selection per row) of sensitivity ``Δ`` (a neighbour moves every score by at most ``Δ``)
and returns the index chosen in each row, on the source's backend, drawn with exact coins
(:mod:`~gpuppdp.dp.coins`) in array passes over the rows still pending:

* :func:`exponential_mechanism` (McSherry & Talwar 2007): ``P[i] ∝ exp(ε q_i / (2Δ))``, by
  rejection: a uniform candidate (exact :func:`~gpuppdp.dp.coins.uniform_below`) accepted
  with probability ``exp(-ε (q* - q_i) / (2Δ))`` (``q*`` the row's best score).
* :func:`permute_and_flip` (McKenna & Sheldon 2020): the candidates in a uniformly random
  order (Fisher-Yates, one step per pass), each accepted with the same probability; never
  worse in expected score than the exponential mechanism.
* :func:`report_noisy_max`: adding Gumbel noise of scale ``2Δ/ε`` and reporting the
  arg max *is* the exponential mechanism, adding exponential noise of that scale *is*
  permute-and-flip (Ding, Kifer et al. 2021): the same distributions are drawn exactly,
  without floating-point noise.

All are ε-DP: the gaps ``(q* - q_i) ε / (2Δ)`` are clipped at 690 (the scores
``max(q_i, q* - 1380Δ/ε)`` have sensitivity ``Δ`` too: the mechanism stays exactly ε-DP,
and a clipped candidate keeps a probability below ``e**-690``), and the coins' float64
probabilities are within ``e**±η_c``, ``η_c = 2074 · 2**-53 + EXP_ERROR`` (one rounding each
of the gap, of ``ε/(2Δ)`` and of their product, then ``exp``) of the ideal ones, which moves
a selection's probability by at most ``e**±2η_c``; the mechanisms run at ``ε - 4η_c``.

References
----------
.. [MT07] F. McSherry and K. Talwar, "Mechanism Design via Differential Privacy", FOCS 2007.
.. [MS20] R. McKenna and D. Sheldon, "Permute-and-Flip: A New Mechanism for Differentially
   Private Selection", NeurIPS 2020.
.. [DKSSWXZ21] Z. Ding, D. Kifer, S. M. S. N. E., T. Steinke, Y. Wang, Y. Xiao and D. Zhang,
   "The Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with Exponential Noise",
   arXiv:2105.07260, 2021.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import check_epsilon, check_positive
from .coins import EXP_ERROR, bernoulli_exp, uniform_below
from .randomness import RandomSource, default_source

__all__ = ["exponential_mechanism", "permute_and_flip", "report_noisy_max", "selection_gaps",
           "COIN_ERROR"]

_MAX_GAP = 690.0
#: bound on ``|ln(p̂ / p)|`` of one acceptance coin
COIN_ERROR = (3.0 * _MAX_GAP + 4.0) * 2.0**-53 + EXP_ERROR


def selection_gaps(scores, epsilon: float, sensitivity: float, xp=np):
    """``γ_i = min((q* - q_i) ε' / (2Δ), 690)`` per row, ``ε' = ε - 4 η_c``: the coins'
    exponents as the mechanisms compute them (float64, the shape of ``scores``)."""
    eps_run = epsilon - 4.0 * COIN_ERROR
    best = xp.max(scores, axis=1, keepdims=True)
    return xp.minimum((best - scores) * (eps_run / (2.0 * sensitivity)), _MAX_GAP)


def _prepare(scores, epsilon, sensitivity, random):
    epsilon = check_epsilon("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    source = random if random is not None else default_source()
    backend, xp = source.backend, source.backend.xp
    if isinstance(scores, xp.ndarray):
        q = scores.astype(xp.float64)
    else:
        q = backend.asarray(np.asarray(scores, dtype=np.float64))
    one = q.ndim == 1
    q = q.reshape(1, -1) if one else q
    if q.ndim != 2 or q.shape[1] == 0:
        raise InputError(f"scores must be a non-empty row or 2-D array of rows, got shape "
                         f"{tuple(q.shape)}")
    if q.size and not backend.scalar(xp.all(xp.isfinite(q))):
        raise InputError("scores must be finite (got NaN or inf)")
    return source, q, one, selection_gaps(q, epsilon, sensitivity, xp)


def _result(source, chosen, one):
    return source.backend.scalar(chosen[0]) if one else chosen


def exponential_mechanism(scores, *, epsilon: float, sensitivity: float,
                          random: RandomSource | None = None):
    """The exponential mechanism: index ``i`` with probability ``∝ exp(ε q_i / (2Δ))``.

    Parameters
    ----------
    scores : array_like of float, 1-D (one selection) or 2-D (one selection per row)
    epsilon : float
    sensitivity : float
        ``Δ``: the most a neighbour moves any score.
    random : RandomSource, optional

    Returns
    -------
    int, or an int64 array (one index per row) on ``random.backend``.

    Examples
    --------
    >>> from gpuppdp.dp import RandomSource
    >>> exponential_mechanism([0.0, 100.0], epsilon=1.0, sensitivity=1.0,
    ...                       random=RandomSource("cpu"))
    1
    """
    source, q, one, gaps = _prepare(scores, epsilon, sensitivity, random)
    xp = source.backend.xp
    rows, n = q.shape
    chosen = xp.zeros(rows, dtype=xp.int64)
    pending = xp.arange(rows)
    while pending.shape[0]:
        pick = uniform_below(source, xp.full(pending.shape[0], n, dtype=xp.int64))
        accept = bernoulli_exp(source, gaps[pending, pick])
        chosen[pending[accept]] = pick[accept]
        pending = pending[~accept]
    return _result(source, chosen, one)


def permute_and_flip(scores, *, epsilon: float, sensitivity: float,
                     random: RandomSource | None = None):
    """Permute-and-flip (McKenna & Sheldon 2020): the candidates in a uniformly random order,
    each accepted with probability ``exp(-ε (q* - q_i) / (2Δ))``; the first accepted is
    returned (the best one always is).  Parameters and result as
    :func:`exponential_mechanism`."""
    source, q, one, gaps = _prepare(scores, epsilon, sensitivity, random)
    xp = source.backend.xp
    rows, n = q.shape
    order = xp.tile(xp.arange(n, dtype=xp.int64), (rows, 1))
    chosen = xp.zeros(rows, dtype=xp.int64)
    pending = xp.arange(rows)
    for step in range(n):  # a Fisher-Yates step and a coin per pending row
        if not pending.shape[0]:
            break
        k = step + uniform_below(source, xp.full(pending.shape[0], n - step, dtype=xp.int64))
        head, other = order[pending, step], order[pending, k]
        order[pending, step], order[pending, k] = other, head
        accept = bernoulli_exp(source, gaps[pending, other])
        chosen[pending[accept]] = other[accept]
        pending = pending[~accept]
    return _result(source, chosen, one)


def report_noisy_max(scores, *, epsilon: float, sensitivity: float, noise: str = "gumbel",
                     random: RandomSource | None = None):
    """Report-noisy-max: the arg max of the scores plus noise of scale ``2Δ/ε``, Gumbel
    (``noise="gumbel"``: the exponential mechanism's distribution) or exponential
    (``"exponential"``: permute-and-flip's), drawn exactly as those mechanisms."""
    if noise == "gumbel":
        return exponential_mechanism(scores, epsilon=epsilon, sensitivity=sensitivity,
                                     random=random)
    if noise == "exponential":
        return permute_and_flip(scores, epsilon=epsilon, sensitivity=sensitivity,
                                random=random)
    raise InputError(f"noise must be 'gumbel' or 'exponential', got {noise!r}")
