"""The discrete Gaussian sampler and the Gaussian mechanisms: the sampled pmf by enumeration
of the sampler's exact trials and coins (120-digit arithmetic), chi-squared on 10**6 draws,
the privacy loss by summing the pmf (CKS 2020 Theorem 7, Rényi divergences) and Balle &
Wang's calibration against its condition evaluated to 60 digits."""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

from gpuppdp.dp import RandomSource
from gpuppdp.dp.coins import EXP_ERROR, MAX_GAMMA, bernoulli_float
from gpuppdp.dp.gaussian import (
    DiscreteGaussianMechanism,
    GaussianMechanism,
    _gaussian_sampler,
    _normalizer,
    _tail,
    analytic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_noise,
)
from gpuppdp.errors import InputError
from tests.test_dp_sampler import PREC, exact_noise_distribution

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")


def ideal_pmf(sigma2, support):
    """``{y: P[Y = y]}`` of ``N_Z(0, σ²)`` to 120 digits (the normalizer over ±60σ)."""
    with localcontext() as ctx:
        ctx.prec = PREC
        s2 = Decimal(sigma2)
        span = int(60 * math.sqrt(sigma2)) + 60
        weights = {y: (-Decimal(y * y) / (2 * s2)).exp() for y in range(-span, span + 1)}
        z = sum(weights.values())
        return {y: weights[y] / z for y in support}


def sampled_pmf(sampler):
    """``{y: P̂[Y = y]}`` of the sampler *as run*: the proposal's exact distribution times
    the float64 acceptance probability ``fl(exp(-γ̂))`` the coin fires with, renormalized."""
    proposal = exact_noise_distribution(sampler.laplace)
    ys = np.array(sorted(proposal), dtype=np.int64)
    gamma = sampler.gamma(ys)
    accept = np.where(gamma <= MAX_GAMMA, np.exp(-np.minimum(gamma, MAX_GAMMA)), 0.0)
    with localcontext() as ctx:
        ctx.prec = PREC
        mass = {int(y): proposal[int(y)] * Decimal(float(a)) for y, a in zip(ys, accept) if a}
        total = sum(mass.values())
        return {y: m / total for y, m in mass.items()}


@pytest.mark.parametrize("sigma", [0.7, 2.5])
def test_sampled_pmf_is_within_eta_of_the_discrete_gaussian(sigma):
    sampler = _gaussian_sampler(sigma * sigma)
    got = sampled_pmf(sampler)
    assert max(got) == sampler.y_max == -min(got)
    ideal = ideal_pmf(sigma * sigma, got)
    with localcontext() as ctx:
        ctx.prec = PREC
        worst = max(abs((got[y] / ideal[y]).ln()) for y in got)
        outside = 1 - sum(ideal.values())  # the ideal mass the support leaves out
    assert worst <= Decimal(sampler.eta)
    assert worst > 0  # the floats do perturb it: the bound is not vacuous
    assert outside < Decimal(10) ** -290


def test_float_exp_is_within_the_stated_error():
    gamma = np.concatenate([np.linspace(0.0, MAX_GAMMA, 4001), np.geomspace(1e-12, 1.0, 500)])
    got = np.exp(-gamma)
    with localcontext() as ctx:
        ctx.prec = 60
        worst = max(abs((Decimal(float(p)) / (-Decimal(float(g))).exp()).ln())
                    for g, p in zip(gamma, got))
    assert worst <= EXP_ERROR


def test_bernoulli_float_is_exact_on_tiny_and_plain_probabilities(backend):
    src = RandomSource(backend, seed=3)
    p = np.array([0.0, 1.0, 0.5, 0.3, 2.0**-11 * 1.5, 2.0**-1074], dtype=np.float64)
    n = 200_000
    draws = backend.to_host(bernoulli_float(src, backend.asarray(np.repeat(p, n))))
    freq = draws.reshape(p.shape[0], n).mean(axis=1)
    assert freq[0] == 0 and freq[1] == 1 and freq[5] == 0
    for f, q in zip(freq[2:5], p[2:5]):
        assert abs(f - q) < 5 * math.sqrt(q * (1 - q) / n)


def test_one_million_draws_pass_chi_squared():
    sigma = 3.0
    x = discrete_gaussian_noise(10**6, sigma=sigma, random=RandomSource("cpu", seed=11))
    ys = np.arange(-12, 13)
    ideal = ideal_pmf(sigma * sigma, range(-40, 41))
    expected = np.array([float(ideal[y]) for y in ys]) * x.shape[0]
    observed = np.array([(x == y).sum() for y in ys], dtype=np.float64)
    tail_obs = x.shape[0] - observed.sum()
    tail_exp = x.shape[0] - expected.sum()
    _, p = stats.chisquare(np.append(observed, tail_obs), np.append(expected, tail_exp))
    assert p > 1e-4
    assert abs(x.var() - sigma**2) < 0.05  # variance just below σ² (CKS20 Prop. 19)


def test_noise_on_each_backend_matches_the_pmf(backend):
    src = RandomSource(backend, seed=5)
    x = backend.to_host(discrete_gaussian_noise(6000, sigma=1.5, random=src))
    ideal = ideal_pmf(2.25, range(-3, 4))
    for y in range(-3, 4):
        p = float(ideal[y])
        assert abs((x == y).mean() - p) < 5 * math.sqrt(p * (1 - p) / x.shape[0])


def hockey_stick(p, q, epsilon):
    with localcontext() as ctx:
        ctx.prec = PREC
        e = Decimal(epsilon).exp()
        return sum(max(Decimal(0), p[y] - e * q.get(y, Decimal(0))) for y in p)


@pytest.mark.parametrize("sigma", [37.0, 300.0, 4000.0])
def test_tail_against_every_term_of_the_window(sigma):
    """The tail ``P[Y >= y0]`` that stops once the terms fall below ``e**-60`` of the first
    (a calibration's ``y0`` lies near ``εσ²``) equals the sum of every term within 40σ, added
    exactly (``math.fsum``), near the centre, a few σ out and far out, on both sides."""
    s2 = sigma * sigma
    norm = _normalizer(s2)
    for y0 in (1, int(sigma), int(3 * sigma), int(0.05 * s2), int(0.5 * s2), int(2 * s2),
               -int(sigma), 1 - int(0.5 * s2)):
        lo = max(y0, 1)  # y0 <= 0: P[Y >= y0] = 1 - P[Y >= 1 - y0]
        if y0 <= 0:
            lo = 1 - y0
        ys = np.arange(lo, lo + int(40 * sigma) + 8, dtype=np.float64)
        full = math.fsum(np.exp(-(ys * ys) / (2.0 * s2)).tolist()) / norm
        expected = full if y0 > 0 else 1.0 - full
        assert _tail(y0, s2, norm) == pytest.approx(expected, rel=1e-12, abs=1e-300), y0


@pytest.mark.parametrize("sigma,shift", [(2.0, 1), (1.3, 2)])
def test_delta_formula_and_rho_against_the_summed_pmf(sigma, shift):
    """CKS20 Theorem 7's δ equals the hockey-stick divergence summed over the pmf; the Rényi
    divergences are at most ρα (Theorem 4) and not far below it."""
    span = int(45 * sigma) + shift
    p = ideal_pmf(sigma * sigma, range(-span, span + 1))
    q = {y + shift: v for y, v in p.items()}
    for eps in (0.25, 1.0, 3.0):
        exact = hockey_stick(p, q, eps)
        assert float(exact) == pytest.approx(discrete_gaussian_delta(eps, sigma, shift),
                                             rel=1e-9, abs=1e-300)
    rho = shift**2 / (2 * sigma**2)
    with localcontext() as ctx:
        ctx.prec = PREC
        for alpha in (1.5, 2, 5, 20):
            a = Decimal(alpha)
            s = sum(p[y] ** a * q[y] ** (1 - a) for y in p if y in q)
            renyi = float(s.ln() / (a - 1))
            assert 0.8 * rho * alpha < renyi <= rho * alpha


def phi(x: Decimal) -> Decimal:
    """Φ(x) to ~60 digits: erf's Taylor series at 200 digits (|x| <= 12)."""
    with localcontext() as ctx:
        ctx.prec = 200
        t = x / Decimal(2).sqrt()
        term, total, n = t, t, 0
        while abs(term) > Decimal(10) ** -190:
            n += 1
            term = -term * t * t / n
            total += term / (2 * n + 1)
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781")
        erf = 2 * total / pi.sqrt()
        return (1 + erf) / 2


def bw_delta(eps, sigma, sens) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 200
        s, d, e = Decimal(sigma), Decimal(sens), Decimal(eps)
        return phi(d / (2 * s) - e * s / d) - e.exp() * phi(-d / (2 * s) - e * s / d)


@pytest.mark.parametrize("eps,delta,sens", [(1.0, 1e-5, 1.0), (0.1, 1e-6, 2.0),
                                            (3.0, 1e-3, 0.5)])
def test_analytic_sigma_meets_balle_wang_condition_tightly(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    assert bw_delta(eps, sigma, sens) <= Decimal(delta)
    assert bw_delta(eps, sigma * (1 - 1e-7), sens) > Decimal(delta)
    if eps < 1:  # below the classical σ = Δ sqrt(2 ln(1.25/δ)) / ε (Dwork & Roth Thm A.1)
        assert sigma < sens * math.sqrt(2 * math.log(1.25 / delta)) / eps


def test_gaussian_mechanism_meets_its_target_on_the_exact_pmf():
    mech = GaussianMechanism(epsilon=2.0, delta=1e-3, sensitivity=1.0, granularity=0.25)
    assert mech.grid_sensitivity == 5  # floor(1 / 0.25) + 1 steps
    span = int(45 * mech.grid_sigma) + 5
    p = ideal_pmf(mech.grid_sigma**2, range(-span, span + 1))
    eta = mech.sampler.eta
    for shift in range(1, 6):
        q = {y + shift: v for y, v in p.items()}
        ideal = hockey_stick(p, q, 2.0 - 2 * eta)
        assert float(ideal) * math.exp(eta) + mech.delta_trunc <= 1e-3
    q = {y + 5: v for y, v in p.items()}
    assert float(hockey_stick(p, q, 2.0)) > 0.99e-3  # σ is not needlessly large
    assert mech.epsilon_at(1e-3) <= 2.0


def test_release_on_the_grid(backend):
    src = RandomSource(backend, seed=2)
    mech = GaussianMechanism(rho=0.5, sensitivity=1.0)
    out = backend.to_host(mech.release(backend.asarray(np.full(600, 0.3)), random=src))
    assert np.all(out / mech.granularity == np.round(out / mech.granularity))
    assert abs(out.mean() - 0.3) < 5 * mech.sigma / math.sqrt(600)
    assert mech.rho_ideal == pytest.approx(0.5, rel=1e-3) and mech.rho > mech.rho_ideal
    ints = DiscreteGaussianMechanism(sigma=2.0).release(np.arange(10), random=src)
    assert backend.to_host(ints).dtype == np.int64


def test_bad_parameters_name_the_parameter():
    with pytest.raises(InputError, match="delta"):
        GaussianMechanism(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(InputError, match="delta"):
        GaussianMechanism(epsilon=1.0, delta=0.0, sensitivity=1.0)
    with pytest.raises(InputError, match="sigma and rho"):
        DiscreteGaussianMechanism()
    with pytest.raises(InputError, match="sigma"):
        DiscreteGaussianMechanism(sigma=0.01)  # the support would cost a large δ
    with pytest.raises(InputError, match="granularity"):
        GaussianMechanism(rho=1.0, sensitivity=1.0, granularity=0.3)
