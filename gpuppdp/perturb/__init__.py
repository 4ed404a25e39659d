"""Perturbative masking of microdata (statistical disclosure control): microaggregation
(MDAV), noise, rank swapping, PRAM, top and bottom coding and permutation within groups, on
the CPU or a GPU; combined with the generalization of other quasi-identifiers in one run
(:meth:`Perturbation.anonymize`)."""

from .combined import PerturbedAnonymization, check_perturbed_roles
from .draws import normal, random_source, uniform
from .measures import (information_loss, interval_disclosure, perturbation_measures,
                       propensity_score, record_linkage)
from .microaggregation import Microaggregation, microaggregate
from .release import Perturbation, PerturbedRelease, numeric_columns
from .methods import (add_noise, bottom_code, invariant_pram_matrix, permute_within, pram,
                      rank_swap, rank_swap_sources, top_code)

__all__ = ["Perturbation", "PerturbedRelease", "PerturbedAnonymization", "microaggregate",
           "Microaggregation",
           "add_noise", "rank_swap", "rank_swap_sources", "pram", "invariant_pram_matrix",
           "top_code", "bottom_code", "permute_within", "random_source", "uniform", "normal",
           "perturbation_measures", "information_loss", "record_linkage",
           "interval_disclosure", "propensity_score", "numeric_columns",
           "check_perturbed_roles"]
