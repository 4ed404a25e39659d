"""Counts over keys that are not known in advance, released above a threshold τ.

:func:`dp_key_counts` counts the rows (or, with ``person=``, the persons) of every key
*present* in the data -- a combination of the ``by`` values, read from the data -- adds
noise to each count and releases only the keys whose noisy count reaches the threshold ``τ``
(Korolova, Kenthapadi, Mishra & Ntoulas 2009; Wilson, Zhang, Lam, Desfontaines,
Simmons-Marengo & Gipson 2020).  Each person contributes 1 to at most ``K`` keys
(``max_keys_per_person``: a person's distinct keys, ``K`` of them chosen at random with the
CSPRNG when there are more, :func:`~gpuppdp.dp.cells._bound_persons`); without ``person``
every row is a person and ``K = 1``.

**Why δ.**  A neighbour without one person differs in at most ``K`` counts by 1 each, and a
key present only because of that person has count 1 there and no row at all in the
neighbour.  Keys present in both get the noise's guarantee (the geometric mechanism at ε,
L1 sensitivity ``K``; or the discrete Gaussian at ρ, L2 sensitivity ``sqrt(K)``); a key of
one table only is released with probability ``P[1 + Z >= τ]``, and the release is
(ε, δ)-DP (δ-approximately ρ-zCDP) when ``K · P[1 + Z >= τ] <= δ``, plus the sampler's own
δ.  τ is the smallest integer meeting this:

* discrete Laplace, ``P[Z >= t] = a**t / (1 + a)`` with ``a = e**(-ε/K)``:
  ``τ = 1 + ceil((K/ε) ln(K / (δ (1 + a))))``, the integer form of the continuous
  ``1 + (K/ε) ln(K/(2δ))`` (``K = 1``: Korolova et al.'s ``1 + ln(1/(2δ))/ε``);
* discrete Gaussian, the tail bounded by its first term plus the integral
  (:func:`~gpuppdp.dp.queries.gaussian_tail_bound`): about ``1 + σ Φ⁻¹(1 - δ/K)``.

(The threshold's condition is evaluated in float64 with a relative margin of ``2**-30``,
which covers the sampler's ``e**±2**-40`` deviation from the ideal probabilities.)  Only
add/remove-one neighbours: under replace-one a person moves, and the released key set says
where from.

References
----------
.. [KKMN09] A. Korolova, K. Kenthapadi, N. Mishra and A. Ntoulas, "Releasing search queries
   and clicks privately", WWW 2009.
.. [WZLDSG20] R. J. Wilson, C. Y. Zhang, W. Lam, D. Desfontaines, D. Simmons-Marengo and
   B. Gipson, "Differentially Private SQL with Bounded User Contribution", PoPETs 2020(2).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..validation import check_int, check_number
from .accountant import BudgetAccountant
from .cells import _bound_persons, _check_source, _columns, _persons
from .gaussian import DiscreteGaussianMechanism, _normalizer
from .mechanisms import GeometricMechanism
from .queries import gaussian_tail_bound
from .randomness import RandomSource, default_source
from .releases import _charge, _check_accountant, _record, _spend
from .sensitivity import Neighbouring

__all__ = ["dp_key_counts", "key_charge", "key_threshold", "KEY_MECHANISMS"]

#: the integer mechanisms of :func:`dp_key_counts` (names as in ``dp_histogram``)
KEY_MECHANISMS = ("geometric", "discrete-gaussian")
_MARGIN = 1.0 + 2.0**-30


def _key_mechanism(mechanism: str, epsilon, rho, k: int):
    if mechanism not in KEY_MECHANISMS:
        raise InputError(f"mechanism must be one of {KEY_MECHANISMS} for keys read from the "
                         f"data, got {mechanism!r}")
    if mechanism == "geometric":
        if rho is not None:
            raise InputError(f"rho applies to mechanism 'discrete-gaussian', got rho={rho!r}")
        return GeometricMechanism(epsilon=epsilon, sensitivity=k)
    if epsilon is not None or rho is None:
        raise InputError(f"mechanism 'discrete-gaussian' takes rho (its delta is the "
                         f"threshold's), got epsilon={epsilon!r}, rho={rho!r}")
    return DiscreteGaussianMechanism(rho=rho, sensitivity=math.sqrt(k))


def key_threshold(mech, delta: float, k: int) -> int:
    """τ: the smallest integer with ``k · P[1 + Z >= τ] <= delta`` for the noise ``Z`` of
    ``mech`` (module docstring).

    >>> key_threshold(GeometricMechanism(epsilon=1.0), 1e-6, 1)
    15
    """
    if isinstance(mech, GeometricMechanism):
        log_a = -mech.sampler.rate

        def tail(t: int) -> float:  # P[Z >= t], t >= 1
            return math.exp(log_a * t) / (1.0 + math.exp(log_a))

        t = max(1, math.ceil(math.log(delta * (1.0 + math.exp(log_a)) / k) / log_a))
    else:
        s2 = mech.grid_sigma**2
        norm = _normalizer(s2)

        def tail(t: int) -> float:
            return gaussian_tail_bound(t, s2, norm)

        t = max(1, math.floor(mech.grid_sigma * math.sqrt(2.0 * math.log(k / delta))))
    while t > 1 and k * tail(t - 1) * _MARGIN <= delta:
        t -= 1
    while k * tail(t) * _MARGIN > delta:
        t += 1
    return t + 1


def key_charge(mechanism: str = "geometric", *, delta: float, epsilon: float | None = None,
               rho: float | None = None, max_keys_per_person: int = 1) -> dict:
    """What :func:`dp_key_counts` with these parameters spends, as keywords of
    :meth:`BudgetAccountant.check <gpuppdp.dp.accountant.BudgetAccountant.check>`: the
    noise's ε (or ρ) and δ, plus the threshold's ``delta``.

    >>> key_charge(epsilon=1.0, delta=1e-6)["delta"]
    1e-06
    """
    delta = check_number("delta", delta, 0.0, 1.0)
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1), got {delta!r}")
    charge = _charge(_key_mechanism(mechanism, epsilon, rho,
                                    check_int("max_keys_per_person", max_keys_per_person, 1)))
    charge["delta"] += delta
    return charge


def dp_key_counts(data: pd.DataFrame, by: str | Sequence[str], *, delta: float,
                  epsilon: float | None = None, rho: float | None = None,
                  mechanism: str = "geometric", person: str | None = None,
                  max_keys_per_person: int | None = None,
                  random: RandomSource | None = None,
                  accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """Noisy counts of the keys present in the data, the keys released only above τ.

    Parameters
    ----------
    data : DataFrame
    by : str or sequence of str
        The key columns; their values are read from the data (no public domain needed).
        Rows with a missing key value are dropped.
    delta : float
        The threshold's δ, in (0, 1): the probability bound of releasing a key that a
        neighbour lacks.
    epsilon : float
        The geometric noise's ε (``mechanism="geometric"``).
    rho : float
        The discrete Gaussian's zCDP ρ (``mechanism="discrete-gaussian"``).
    mechanism : {"geometric", "discrete-gaussian"}
    person : str, optional
        The column naming each row's person: a person counts once per key, in at most
        ``max_keys_per_person`` keys (default 1).
    random, accountant
        As in :func:`~gpuppdp.dp.releases.dp_histogram` (charged ``epsilon`` or ``rho``
        with the threshold's δ plus the sampler's).

    Returns
    -------
    DataFrame
        The released keys (sorted) and ``count``; ``attrs["dp"]`` records the guarantee,
        ``tau``, the mechanism and ``max_keys_per_person``.

    Examples
    --------
    >>> import pandas as pd
    >>> from gpuppdp.dp import RandomSource
    >>> df = pd.DataFrame({"word": ["a"] * 100 + ["b"]})
    >>> r = dp_key_counts(df, "word", epsilon=1.0, delta=1e-6, random=RandomSource("cpu"))
    >>> r["word"].tolist(), r.attrs["dp"]["tau"]
    (['a'], 15)
    """
    cols = _columns(data, by)
    person, k = _persons(data, cols, person, max_keys_per_person, name="max_keys_per_person",
                         role="a key column: its keys")
    charge = key_charge(mechanism, delta=delta, epsilon=epsilon, rho=rho,
                        max_keys_per_person=k)
    mech = _key_mechanism(mechanism, epsilon, rho, k)
    tau = key_threshold(mech, delta, k)
    source = random if random is not None else default_source()
    _check_source(source)
    _check_accountant(accountant, charge, Neighbouring.ADD_REMOVE)
    rows = data[cols + ([person] if person else [])].dropna(subset=cols)
    if person is not None:
        rows = rows.drop_duplicates()
        rows = rows[_bound_persons(rows[person], np.ones(len(rows), dtype=bool), k, source)]
    counts = rows.groupby(cols, sort=True, observed=True).size()
    unit = "row" if person is None else f"person ({person}, at most {k} keys)"
    _spend(accountant, charge, f"dp_key_counts by {cols}", neighbouring=Neighbouring.ADD_REMOVE,
           unit=unit, seed=source.seed)
    backend = source.backend
    noisy = backend.to_host(mech.release(counts.to_numpy(dtype=np.int64), random=source))
    released = noisy >= tau
    frame = counts.index.to_frame(index=False)[released].reset_index(drop=True)
    frame["count"] = noisy[released]
    guarantee = {"epsilon": mech.epsilon, "delta": charge["delta"], "rho": None,
                 "notion": "approx"}
    if "rho" in charge:
        guarantee.update(epsilon=None, rho=mech.rho, notion="zcdp")
    frame = _record(frame, **guarantee, neighbouring=Neighbouring.ADD_REMOVE,
                    queries={"count": mech.info()},
                    post=[f"keys with a noisy count below tau={tau} withheld"],
                    source=source, cells=len(frame), from_data=cols, unknown="drop",
                    unit=unit)
    frame.attrs["dp"].update(tau=tau, max_keys_per_person=k, threshold_delta=delta)
    return frame
