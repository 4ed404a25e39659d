"""Statistical and safety tests of the DP mechanisms, on every backend.

Seeded (fixed seeds, deterministic on NumPy and the strict stand-in) with bounds of about
4-5 standard errors, so they also hold for the different random streams of a real GPU.
"""

import math
import os

import numpy as np
import pytest
from scipy import stats

from gpuppdp.dp import (
    GeometricMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    RandomSource,
    SeededNoiseWarning,
    default_source,
    discrete_laplace_noise,
    randomness,
)

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")


def host(backend, a):
    return backend.to_host(a)


def source(backend, seed):
    return RandomSource(backend, seed=seed)


def discrete_laplace_pmf(k, alpha):
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)


# --- distributions ------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_discrete_laplace_matches_its_pmf(backend, scale):
    n = 200_000
    z = host(backend, discrete_laplace_noise(n, scale=scale, random=source(backend, 11)))
    assert z.dtype == np.int64
    alpha = math.exp(-1 / scale)
    kmax = int(np.ceil(scale * 6))  # tails merged into two bins, expected counts >= ~100
    ks = np.arange(-kmax, kmax + 1)
    observed = np.concatenate([[np.sum(z < -kmax)], [np.sum(z == k) for k in ks],
                               [np.sum(z > kmax)]])
    tail = alpha ** (kmax + 1) / (1 + alpha)
    expected = n * np.concatenate([[tail], discrete_laplace_pmf(ks, alpha), [tail]])
    assert observed.sum() == n
    assert expected.sum() == pytest.approx(n)
    chi2, p = stats.chisquare(observed, expected)
    assert p > 1e-4, f"chi-square {chi2:.1f} on {len(ks) + 1} dof, p={p:.2e}"


def test_discrete_laplace_chi_square_detects_a_wrong_scale():
    """The chi-square check has power: samples with scale 1.1 fail against scale 1."""
    n = 200_000
    z = discrete_laplace_noise(n, scale=1.1, random=RandomSource("cpu", seed=11))
    alpha = math.exp(-1.0)
    ks = np.arange(-6, 7)
    observed = np.concatenate([[np.sum(z < -6)], [np.sum(z == k) for k in ks], [np.sum(z > 6)]])
    tail = alpha**7 / (1 + alpha)
    expected = n * np.concatenate([[tail], discrete_laplace_pmf(ks, alpha), [tail]])
    assert stats.chisquare(observed, expected).pvalue < 1e-10


@pytest.mark.parametrize("epsilon,sensitivity", [(0.5, 1.0), (2.0, 10.0)])
def test_laplace_noise_has_mean_zero_and_variance_2b2(backend, epsilon, sensitivity):
    n = 1_000_000
    mech = LaplaceMechanism(epsilon=epsilon, sensitivity=sensitivity)
    b = mech.scale
    assert b == pytest.approx(sensitivity / epsilon, rel=3e-4)  # grid costs <= 1/4096
    assert mech.variance == pytest.approx(2 * b * b, rel=1e-6)
    noise = host(backend, mech.release(np.full(n, 100.0), random=source(backend, 5))) - 100.0
    # sd of the sample mean: b*sqrt(2/n); of the sample variance: b^2*sqrt(20/n)
    assert abs(noise.mean()) < 5 * b * math.sqrt(2 / n)
    assert abs(noise.var() - 2 * b * b) < 5 * b * b * math.sqrt(20 / n)
    assert abs(np.abs(noise).mean() - mech.expected_abs_error) < 5 * b / math.sqrt(n)


def test_geometric_mechanism_moments(backend):
    mech = GeometricMechanism(epsilon=0.7, sensitivity=2)
    assert mech.alpha == pytest.approx(math.exp(-0.35))
    n = 500_000
    noise = host(backend, mech.release(np.full(n, 7, dtype=np.int64),
                                       random=source(backend, 8))) - 7
    assert noise.dtype == np.int64
    assert abs(noise.mean()) < 5 * mech.std / math.sqrt(n)
    assert noise.var() == pytest.approx(mech.variance, rel=0.02)
    assert np.abs(noise).mean() == pytest.approx(mech.expected_abs_error, rel=0.02)


# --- the epsilon-DP ratio check on neighbouring inputs -------------------------------------

def dp_violation(out_x, out_y, epsilon, thresholds, points=()):
    """max over the test sets S of P̂[M(x) ∈ S] - e^ε P̂[M(y) ∈ S], both directions.

    Sets: {out <= t}, {out >= t} for each threshold and {out == v} for each point.
    """
    out_x, out_y = np.sort(out_x), np.sort(out_y)

    def probs(sorted_out):
        n = len(sorted_out)
        le = np.searchsorted(sorted_out, thresholds, side="right") / n
        ge = 1 - np.searchsorted(sorted_out, thresholds, side="left") / n
        eq = np.array([np.searchsorted(sorted_out, v, side="right")
                       - np.searchsorted(sorted_out, v, side="left") for v in points]) / n
        return np.concatenate([le, ge, eq])

    px, py = probs(out_x), probs(out_y)
    e = math.exp(epsilon)
    return max(np.max(px - e * py), np.max(py - e * px))


def test_geometric_mechanism_is_epsilon_dp_on_neighbours(backend):
    eps, n = 0.5, 400_000
    mech = GeometricMechanism(epsilon=eps)
    src = source(backend, 21)
    out_x = host(backend, mech.release(np.full(n, 10), random=src))
    out_y = host(backend, mech.release(np.full(n, 11), random=src))
    grid = np.arange(-5, 27)
    assert dp_violation(out_x, out_y, eps, grid + 0.5, points=grid) < 0.01
    # the check has power: the same samples violate a smaller epsilon clearly
    assert dp_violation(out_x, out_y, eps / 2, grid + 0.5, points=grid) > 0.1


def test_laplace_mechanism_is_epsilon_dp_on_neighbours(backend):
    eps, n = 1.0, 400_000
    mech = LaplaceMechanism(epsilon=eps, sensitivity=1.0)
    src = source(backend, 22)
    out_x = host(backend, mech.release(np.zeros(n), random=src))
    out_y = host(backend, mech.release(np.ones(n), random=src))
    thresholds = np.linspace(-6, 7, 53)
    assert dp_violation(out_x, out_y, eps, thresholds) < 0.01
    assert dp_violation(out_x, out_y, eps / 2, thresholds) > 0.1


def test_randomized_response_is_epsilon_dp(backend):
    rr = RandomizedResponse(epsilon=1.0)
    n = 400_000
    src = source(backend, 23)
    yes_if_yes = host(backend, rr.release(np.ones(n, dtype=bool), random=src)).mean()
    yes_if_no = host(backend, rr.release(np.zeros(n, dtype=bool), random=src)).mean()
    e = math.exp(rr.epsilon)
    assert yes_if_yes - e * yes_if_no < 0.01
    assert (1 - yes_if_no) - e * (1 - yes_if_yes) < 0.01
    assert yes_if_yes == pytest.approx(rr.truth_probability, abs=0.005)


# --- floating-point safety (Mironov 2012) ------------------------------------------------

@pytest.mark.parametrize("x,y", [(0.0, 1.0), (0.1, 1.1), (1 / 3, 1 / 3 + 1)])
def test_laplace_outputs_of_neighbours_share_one_grid(backend, x, y):
    """Every output is a multiple of the granularity whatever the input, so the outputs of
    neighbouring inputs come from the same set: no low bit tells them apart."""
    mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    g = mech.granularity
    n = 100_000
    src = source(backend, 31)
    out_x = host(backend, mech.release(np.full(n, x), random=src))
    out_y = host(backend, mech.release(np.full(n, y), random=src))
    for out in (out_x, out_y):
        steps = out / g
        np.testing.assert_array_equal(steps, np.round(steps))
    # each output of x is a possible output of y (within the sampler's support)
    reach = 44 * mech.grid_scale
    assert np.all(np.abs(out_x / g - round(y / g)) <= reach)
    common = np.intersect1d(out_x, out_y)
    assert len(common) > 0.2 * len(np.unique(out_x))


def test_textbook_float_laplace_fails_the_same_check():
    """The check above has teeth: textbook ``x + Lap(b)`` in floating point gives neighbours
    essentially disjoint output sets (Mironov's attack distinguishes them)."""
    rng = np.random.default_rng(31)
    n = 100_000
    out_x = 0.1 + rng.laplace(0.0, 1.0, n)
    out_y = 1.1 + rng.laplace(0.0, 1.0, n)
    assert len(np.intersect1d(out_x, out_y)) == 0


def test_inputs_differing_below_the_grid_give_identical_outputs(backend):
    """Low bits of the input never reach the output: same noise, same release."""
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=1.0)
    a = mech.release(np.full(1000, 1.0), random=source(backend, 7))
    b = mech.release(np.full(1000, 1.0 + 2.0**-40), random=source(backend, 7))
    np.testing.assert_array_equal(host(backend, a), host(backend, b))


# --- randomized response ---------------------------------------------------------------

def test_coin_protocol_worked_example(backend):
    """Dwork & Roth 2014, section 3.2: P[yes | truly yes] = 3/4, real_yes = 2x - n/2."""
    rr = RandomizedResponse.coin()
    assert rr.truth_probability == 0.75
    assert rr.epsilon == pytest.approx(math.log(3))
    n = 200_000
    src = source(backend, 41)
    assert host(backend, rr.release(np.ones(n, bool), random=src)).mean() == \
        pytest.approx(0.75, abs=0.005)
    assert host(backend, rr.release(np.zeros(n, bool), random=src)).mean() == \
        pytest.approx(0.25, abs=0.005)
    for x, total in [(40, 100), (0, 10), (530, 1000)]:
        assert rr.estimate_count(x, total) == pytest.approx(2 * x - total / 2)


def test_randomized_response_estimator_is_unbiased(backend):
    rr = RandomizedResponse(truth_probability=0.5 + 0.2)  # Warner's p = 1/2 + 0.2
    assert rr.epsilon == pytest.approx(math.log(0.7 / 0.3))
    n, repeats, true_p = 1000, 400, 0.3
    truth = np.zeros((repeats, n), dtype=bool)
    truth[:, : int(true_p * n)] = True
    answers = host(backend, rr.release(truth, random=source(backend, 42)))
    estimates = [rr.estimate_proportion(int(row.sum()), n) for row in answers]
    se = rr.estimator_std(n, true_p)
    assert np.std(estimates) == pytest.approx(se, rel=0.15)
    assert abs(np.mean(estimates) - true_p) < 5 * se / math.sqrt(repeats)


# --- API: scalars, arrays, backends, randomness ----------------------------------------

def test_scalars_and_arrays(backend):
    src = source(backend, 1)
    lap = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    geo = GeometricMechanism(epsilon=1.0)
    assert isinstance(lap.release(3.0, random=src), float)
    assert isinstance(geo.release(3, random=src), int)
    out = lap.release(np.zeros((4, 5)), random=src)
    assert isinstance(out, backend.xp.ndarray) and out.shape == (4, 5)
    dev = backend.asarray(np.arange(6, dtype=np.int32))
    noisy = geo.release(dev, random=src)
    assert isinstance(noisy, backend.xp.ndarray) and host(backend, noisy).dtype == np.int64
    np.testing.assert_array_equal(host(backend, dev), np.arange(6))  # input untouched
    assert lap.release(np.array(2.0), random=src).shape == ()


def test_seeded_sources_reproduce_and_warn(backend):
    with pytest.warns(SeededNoiseWarning, match="NOT differentially private"):
        a = RandomSource(backend, seed=3)
    b = RandomSource(backend, seed=3)
    np.testing.assert_array_equal(host(backend, a.random_bits(100)),
                                  host(backend, b.random_bits(100)))
    assert a.seeded


def test_os_entropy_by_default(backend, recwarn):
    a, b = RandomSource(backend), RandomSource(backend)
    assert not a.seeded
    assert not any(issubclass(w.category, SeededNoiseWarning) for w in recwarn)
    assert not np.array_equal(host(backend, a.random_bits(8)), host(backend, b.random_bits(8)))
    # one ChaCha20 keystream, keyed with 256 OS bits, on every backend
    assert a.generator == "chacha20" and a.key_fingerprint != b.key_fingerprint


def test_random_bits_are_uniform_63_bit(backend):
    bits = host(backend, source(backend, 9).random_bits(100_000))
    assert bits.min() >= 0
    for b in (0, 1, 31, 62):  # each bit is a fair coin
        assert ((bits >> b) & 1).mean() == pytest.approx(0.5, abs=0.006)


def test_default_source_is_reseeded_after_fork(monkeypatch):
    first = default_source("cpu")
    assert default_source("cpu") is first and not first.seeded
    child_pid = os.getpid() + 1
    monkeypatch.setattr(randomness.os, "getpid", lambda: child_pid)
    assert default_source("cpu") is not first


def test_bernoulli_probability(backend):
    hits = host(backend, source(backend, 4).bernoulli(0.1, 200_000))
    assert hits.dtype == bool and hits.mean() == pytest.approx(0.1, abs=0.004)


# --- validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), -float("inf"), None,
                                 "1", True])
def test_invalid_epsilon(bad):
    for make in (lambda: LaplaceMechanism(epsilon=bad, sensitivity=1.0),
                 lambda: GeometricMechanism(epsilon=bad)):
        with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
            make()
    with pytest.raises(ValueError, match="epsilon"):  # None: "give exactly one of epsilon..."
        RandomizedResponse(epsilon=bad)


@pytest.mark.parametrize("bad", [-1.0, 0.0, float("nan"), float("inf")])
def test_invalid_sensitivity(bad):
    with pytest.raises(ValueError, match="sensitivity must be a finite number > 0"):
        LaplaceMechanism(epsilon=1.0, sensitivity=bad)
    with pytest.raises(ValueError, match="sensitivity"):
        GeometricMechanism(epsilon=1.0, sensitivity=bad)


def test_other_invalid_parameters():
    with pytest.raises(ValueError, match="positive integer"):
        GeometricMechanism(epsilon=1.0, sensitivity=1.5)
    with pytest.raises(ValueError, match="power of two"):
        LaplaceMechanism(epsilon=1.0, sensitivity=1.0, granularity=0.3)
    with pytest.raises(ValueError, match="too large"):
        LaplaceMechanism(epsilon=1e-15, sensitivity=1.0)
    with pytest.raises(ValueError, match="integer queries"):
        GeometricMechanism(epsilon=1.0).release(np.array([1.5]), random=RandomSource("cpu"))
    with pytest.raises(ValueError, match="finite"):
        LaplaceMechanism(epsilon=1.0, sensitivity=1.0).release(
            np.array([1.0, np.nan]), random=RandomSource("cpu"))
    with pytest.raises(ValueError, match="exactly one"):
        RandomizedResponse(epsilon=1.0, truth_probability=0.7)
    with pytest.raises(ValueError, match="truth_probability"):
        RandomizedResponse(truth_probability=0.5)
    with pytest.raises(ValueError, match="seed"):
        RandomSource("cpu", seed=-1)
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace_noise(3, scale=0.0, random=RandomSource("cpu"))
