"""Selection mechanisms: the choice distribution as run, enumerated in exact arithmetic, equals
the formula (within the stated float error) and is ε-DP on neighbouring scores; chi-squared
on many independent selections."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from gpuppdp.dp import RandomSource
from gpuppdp.dp.selection import (
    COIN_ERROR,
    exponential_mechanism,
    permute_and_flip,
    report_noisy_max,
    selection_gaps,
)
from gpuppdp.errors import InputError

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")

SCORES = [3.0, 1.0, 0.0, 2.5]


def coins(scores, eps, sens=1.0):
    """The float64 acceptance probabilities the coins fire with, as exact fractions."""
    gaps = selection_gaps(np.array([scores]), eps, sens)[0]
    return [Fraction(float(p)) for p in np.exp(-gaps)]


def em_exact(scores, eps):
    p = coins(scores, eps)
    return [x / sum(p) for x in p]  # uniform proposals, accepted with p_i


def pf_exact(scores, eps):
    """Every order enumerated: the first candidate whose coin fires."""
    p = coins(scores, eps)
    n = len(p)
    out = [Fraction(0)] * n
    for perm in itertools.permutations(range(n)):
        reach = Fraction(1, math.factorial(n))
        for i in perm:
            out[i] += reach * p[i]
            reach *= 1 - p[i]
    return out


def test_exponential_mechanism_is_the_formula():
    eps = 1.3
    got = em_exact(SCORES, eps)
    eps_run = eps - 4 * COIN_ERROR  # the mechanism runs below ε by the coins' float error
    weights = [math.exp(eps_run * q / 2) for q in SCORES]
    for g, w in zip(got, weights):
        assert abs(math.log(float(g) / (w / sum(weights)))) <= 2 * COIN_ERROR + 1e-15


@pytest.mark.parametrize("exact", [em_exact, pf_exact])
def test_enumerated_choice_is_epsilon_dp_on_neighbours(exact):
    eps = 0.9
    base = exact(SCORES, eps)
    for moves in itertools.product((-1.0, 0.0, 1.0), repeat=len(SCORES)):
        other = exact([q + m for q, m in zip(SCORES, moves)], eps)
        worst = max(abs(math.log(float(a / b))) for a, b in zip(base, other))
        assert worst <= eps
    assert sum(base) == 1


def test_permute_and_flip_beats_the_exponential_mechanism_in_expected_score():
    em, pf = em_exact(SCORES, 1.0), pf_exact(SCORES, 1.0)
    assert sum(float(p) * q for p, q in zip(pf, SCORES)) > \
        sum(float(p) * q for p, q in zip(em, SCORES))


@pytest.mark.parametrize("noise,exact", [("gumbel", em_exact), ("exponential", pf_exact)])
def test_many_selections_pass_chi_squared(backend, noise, exact):
    rows = 3000
    src = RandomSource(backend, seed=7)
    scores = backend.asarray(np.tile(np.array(SCORES), (rows, 1)))
    chosen = backend.to_host(report_noisy_max(scores, epsilon=1.0, sensitivity=1.0,
                                              noise=noise, random=src))
    expected = np.array([float(p) for p in exact(SCORES, 1.0)]) * rows
    observed = np.bincount(chosen, minlength=len(SCORES))
    assert stats.chisquare(observed, expected)[1] > 1e-4


def test_single_row_and_far_scores():
    src = RandomSource("cpu", seed=1)
    assert exponential_mechanism([0.0, 1e300], epsilon=1.0, sensitivity=1.0, random=src) == 1
    assert permute_and_flip([-5.0], epsilon=1.0, sensitivity=1.0, random=src) == 0
    with pytest.raises(InputError, match="finite"):
        permute_and_flip([0.0, math.nan], epsilon=1.0, sensitivity=1.0, random=src)
    with pytest.raises(InputError, match="noise"):
        report_noisy_max([0.0], epsilon=1.0, sensitivity=1.0, noise="laplace", random=src)
