"""Differential privacy for gpuppdp: mechanisms, sensitivity, budget accounting, releases.

A layer of its own: it shares only the array backend (:mod:`gpuppdp.backend`) and the
hierarchies (:mod:`gpuppdp.hierarchy`) with the rest of the engine.

* :mod:`~gpuppdp.dp.mechanisms` -- :class:`LaplaceMechanism` (real values, on a ``2**k``
  grid so that it resists Mironov's floating-point attack), :class:`GeometricMechanism`
  (integer counts), :class:`RandomizedResponse` (Warner's protocol), all vectorized on the
  backend, each with the (ε, δ) it guarantees.
* :mod:`~gpuppdp.dp.gaussian` -- the discrete Gaussian (exact sampler, CKS 2020),
  :class:`DiscreteGaussianMechanism` (integers, zCDP) and :class:`GaussianMechanism` (the
  ``2**k`` grid, Balle & Wang's analytic calibration).
* :mod:`~gpuppdp.dp.selection` -- the exponential mechanism, report-noisy-max (Gumbel,
  exponential) and permute-and-flip, exact coins, many selections at once.
* :mod:`~gpuppdp.dp.accounting` -- pure, (ε, δ), zCDP and RDP: conversions (standard and
  tight) and composition (basic, advanced).
* :mod:`~gpuppdp.dp.randomness` -- :class:`RandomSource`: a ChaCha20 keystream keyed with
  256 bits of OS entropy, fork-safe, never copied, the same bits on CPU and GPU; a seed only
  on request (with a :class:`SeededNoiseWarning`; the releases refuse a seeded source unless
  it was created with ``insecure=True``).
* :mod:`~gpuppdp.dp.sensitivity` -- sensitivities from declared bounds, with the
  neighbouring relation explicit (:class:`Neighbouring`).
* :mod:`~gpuppdp.dp.accountant` -- :class:`BudgetAccountant`: sequential and parallel
  composition, δ, entries in pure ε, (ε, δ), zCDP or RDP composed by the tightest accounting,
  a budget kept in one neighbouring relation (entries of the other converted),
  :meth:`BudgetAccountant.open_ledger`, the one transaction every spend of a run goes through.
* :mod:`~gpuppdp.dp.composition` -- the rules the accountant applies: an entry charged in the
  budget's relation (:func:`charge`), the accountings of a ledger (basic, advanced, zCDP, RDP)
  and the tightest of them; :class:`BudgetError`.
* :mod:`~gpuppdp.dp.ledger` -- the ledger file: append-only JSON Lines, hash-chained
  (:class:`LedgerError` names the first edited line), locked with ``flock`` on the file
  itself, each spend fsync-ed before its noise is drawn.
* :mod:`~gpuppdp.dp.releases` -- :func:`dp_histogram` (noisy contingency tables at any
  generalization level, over public domains, optionally with a per-person contribution
  bound), :func:`dp_class_counts`, :func:`dp_group_stats`; refusals that depend on the data
  come after the charge.
* :mod:`~gpuppdp.dp.queries` -- :func:`dp_count`, :func:`dp_sum`, :func:`dp_mean`,
  :func:`dp_variance` (clamping bounds, person bounding, optionally per cell of public keys),
  each with a confidence interval.
* :mod:`~gpuppdp.dp.quantiles` -- :func:`dp_quantile`, :func:`dp_median`: the exponential
  mechanism over a public grid (Smith 2011), sampled exactly.
* :mod:`~gpuppdp.dp.keys` -- :func:`dp_key_counts`: counts of keys read from the data,
  released above a threshold τ (approximate DP).
* :mod:`~gpuppdp.dp.synthesis` -- :class:`~gpuppdp.dp.synthesis.MSTSynthesizer`, synthetic
  records from a tree of noisy marginals (MST, McKenna, Miklau & Sheldon 2021), and
  :mod:`~gpuppdp.dp.synthesis_eval` to measure them.
* :mod:`~gpuppdp.cli.dp`, :mod:`~gpuppdp.cli.dp_query`, :mod:`~gpuppdp.cli.synthesize` -- the
  ``gpuppdp dp-histogram``, ``gpuppdp dp-query`` and ``gpuppdp synthesize`` subcommands.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014.
"""

from .accountant import BudgetAccountant, LedgerError, ParallelGroup, Spend
from .composition import BudgetError, charge
from .mechanisms import (
    DiscreteLaplaceSampler,
    GeometricMechanism,
    LaplaceMechanism,
    NoiseRangeError,
    RandomizedResponse,
    discrete_laplace_noise,
)
from .gaussian import (
    DiscreteGaussianMechanism,
    GaussianMechanism,
    analytic_gaussian_sigma,
    discrete_gaussian_noise,
)
from .randomness import RandomSource, SeededNoiseWarning, default_source
from .selection import exponential_mechanism, permute_and_flip, report_noisy_max
from .releases import (
    OTHER,
    DataDomainError,
    OutOfDomainError,
    dp_class_counts,
    dp_group_stats,
    dp_histogram,
)
from .summation import SummationRangeError
from .queries import dp_count, dp_mean, dp_query, dp_sum, dp_variance
from .quantiles import dp_median, dp_quantile
from .keys import dp_key_counts
from .sensitivity import (
    Neighbouring,
    count_sensitivity,
    counting_queries_sensitivity,
    grouped_sum_sensitivity,
    histogram_sensitivity,
    mean_sensitivity,
    sum_sensitivity,
)

__all__ = [
    "BudgetAccountant", "BudgetError", "LedgerError", "ParallelGroup", "Spend", "charge",
    "SummationRangeError",
    "DiscreteLaplaceSampler", "GeometricMechanism", "LaplaceMechanism", "NoiseRangeError",
    "RandomizedResponse", "discrete_laplace_noise",
    "DiscreteGaussianMechanism", "GaussianMechanism", "analytic_gaussian_sigma",
    "discrete_gaussian_noise", "exponential_mechanism", "permute_and_flip", "report_noisy_max",
    "RandomSource", "SeededNoiseWarning", "default_source",
    "OTHER", "DataDomainError", "OutOfDomainError", "dp_class_counts",
    "dp_group_stats", "dp_histogram",
    "dp_count", "dp_sum", "dp_mean", "dp_variance", "dp_query", "dp_quantile", "dp_median",
    "dp_key_counts",
    "Neighbouring", "count_sensitivity", "counting_queries_sensitivity",
    "grouped_sum_sensitivity", "histogram_sensitivity", "mean_sensitivity", "sum_sensitivity",
]
