"""The SNB population-uniqueness model and Dankar's rule (gpuppdp.analysis.risk)."""

import math

import numpy as np
import pytest

import gpuppdp.analysis.risk as risk
from gpuppdp.analysis.risk import population_uniqueness, snb_uniques, zayatz_uniques

optimize = pytest.importorskip("scipy.optimize")
stats = pytest.importorskip("scipy.stats")


def _sizes(hist):
    return np.repeat(np.arange(len(hist)), hist)


def _moments(hist):
    hist = np.asarray(hist)
    return float((np.arange(len(hist)) * hist).sum()), float(hist[1]), float(hist[2])


def _shlosser(hist, q, arx):
    """Haas et al.'s second Shlosser estimator, term by term; ``arx``: ARX's loop over the
    (size, count) pairs of its histogram, with its ``- 1`` per pair."""
    pairs = [(i, c) for i, c in enumerate(hist) if i > 0 and c > 0]
    a = sum(i * q * q * (1 - q * q) ** (i - 1) * c for i, c in pairs)
    if arx:
        b = sum((1 - q) ** i * c * (1 + q) ** i - 1 for i, c in pairs)
    else:
        b = sum((1 - q) ** i * ((1 + q) ** i - 1) * c for i, c in pairs)
    c_ = sum((1 - q) ** i * c for i, c in pairs)
    d = sum(i * q * (1 - q) ** (i - 1) * c for i, c in pairs)
    return sum(c for _, c in pairs) + hist[1] * a / b * (c_ / d) ** 2


def _expected_counts(alpha, beta, k, f):
    """E[#sample classes of size 1 and 2] from the model itself: population class sizes
    ``1 + NegBin(alpha, beta)``, each record sampled with probability ``f``."""
    sizes = np.arange(1, int(stats.nbinom.isf(1e-16, alpha, beta)) + 2)
    p = stats.nbinom.pmf(sizes - 1, alpha, beta)
    return (k * (p * stats.binom.pmf(1, sizes, f)).sum(),
            k * (p * stats.binom.pmf(2, sizes, f)).sum())


@pytest.mark.parametrize("hist, ratio", [([0, 60, 25, 12, 6, 3, 1], 2.0),
                                         ([0, 56, 16, 48, 40], 1.2),
                                         ([0, 400, 120, 50, 20, 8, 0, 2], 20.0)])
def test_snb_solves_the_papers_equations(hist, ratio):
    n, c1, c2 = _moments(hist)
    N = ratio * n
    f = n / N
    k = _shlosser(hist, f, arx=False)

    def residual(x):
        alpha, beta = np.exp(x[0]), 1 / (1 + np.exp(-x[1]))
        e1, e2 = _expected_counts(alpha, beta, k, f)
        return [e1 / c1 - 1, e2 / c2 - 1]

    sol = optimize.least_squares(residual, [0.0, 0.0], xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert np.abs(sol.fun).max() < 1e-9
    alpha, beta = np.exp(sol.x[0]), 1 / (1 + np.exp(-sol.x[1]))
    got = snb_uniques(np.array(hist), N, variant="chen")
    assert got == pytest.approx(k * beta ** alpha, rel=1e-6)
    assert 0 < got < N


def test_snb_solves_arxs_equations():
    """ARX's ModelSNB, transcribed: its K and its second equation (times (1-d)^(a+2))."""
    hist = [0, 56, 16, 48, 40]
    n, c1, c2 = _moments(hist)
    N = 1.2 * n
    f = n / N
    k = _shlosser(hist, f, arx=True)

    def arx_objective(x):
        a, b = x
        dividend = (1 - f) * (1 - b)
        return [k * f * (b / (1 - dividend)) ** a * (a * dividend / (1 - dividend) + 1) - c1,
                k * a * b ** a * (f * f) * (1 - b) / 2 * (1 - dividend) ** (a + 2)
                * (2 - (1 - a) * dividend) - c2]

    got = snb_uniques(np.array(hist), N)
    roots = set()
    for start in np.random.default_rng(0).random((40, 2)):
        with np.errstate(all="ignore"):
            sol = optimize.root(arx_objective, start, method="hybr", options={"xtol": 1e-14})
            a, b = sol.x
            if sol.success and np.abs(arx_objective(sol.x)).max() < 1e-6 and a > 0 and 0 < b < 1:
                roots.add(round(k * b ** a, 6))
    assert len(roots) == 1
    assert got == pytest.approx(roots.pop(), rel=1e-8)


def test_snb_estimates_the_uniques_of_an_snb_population():
    rng = np.random.default_rng(5)
    sizes = 1 + rng.negative_binomial(0.5, 0.1, 20000)
    sample = rng.binomial(sizes, 0.2)
    hist = np.bincount(sample[sample > 0])
    got = snb_uniques(hist, sizes.sum(), variant="chen")
    assert got == pytest.approx((sizes == 1).sum(), rel=0.05)


def test_snb_without_uniques_is_zero_and_the_variant_is_checked():
    assert snb_uniques(np.array([0, 0, 5, 3]), 100) == 0.0
    assert population_uniqueness(np.array([2, 3, 4]), 1000)["snb"] == 0.0
    with pytest.raises(ValueError, match="variant"):
        snb_uniques(np.array([0, 3, 1]), 100, variant="paper")


# ------------------------------------------------------------------------ Dankar's rule

def test_dankar_chooses_snb_when_it_is_below_zayatz():
    hist = np.array([0, 56, 16, 48, 40])
    n = _moments(hist)[0]
    out = population_uniqueness(_sizes(hist), 1.2 * n)  # sampling fraction 0.83
    assert out["snb"] == pytest.approx(snb_uniques(hist, 1.2 * n) / (1.2 * n), rel=1e-12)
    assert out["snb"] < out["zayatz"]
    assert out["dankar_choice"] == "snb"
    assert out["dankar"] == out["snb"]


def test_dankar_chooses_zayatz_when_it_is_below_snb():
    hist = np.array([0, 37, 4, 39, 20, 13, 25, 52])
    n = _moments(hist)[0]
    out = population_uniqueness(_sizes(hist), 1.2 * n)
    assert out["snb"] is not None and out["zayatz"] < out["snb"]
    assert out["dankar_choice"] == "zayatz"
    assert out["dankar"] == out["zayatz"] == pytest.approx(
        zayatz_uniques(hist, 1.2 * n) / (1.2 * n), rel=1e-12)


def test_failed_snb_is_none_and_dankar_falls_back_to_zayatz():
    hist = np.array([0, 30, 20, 10])  # ARX's equations have no admissible root here
    n = _moments(hist)[0]
    assert math.isnan(snb_uniques(hist, 1.2 * n))
    out = population_uniqueness(_sizes(hist), 1.2 * n)
    assert out["snb"] is None
    assert out["dankar_choice"] == "zayatz"
    assert out["dankar"] == out["zayatz"] > 0
    # without classes of size 2 the model is undefined
    assert math.isnan(snb_uniques(np.array([0, 30, 0, 10]), 200, variant="chen"))


def test_dankar_follows_arx_when_estimates_fail(monkeypatch):
    sizes = _sizes(np.array([0, 56, 16, 48, 40]))
    N = 1.2 * sizes.sum()
    # ARX compares the raw numbers: a NaN Zayatz is not below a valid SNB
    monkeypatch.setattr(risk, "zayatz_uniques", lambda hist, N: float("nan"))
    out = population_uniqueness(sizes, N)
    assert (out["zayatz"], out["dankar_choice"]) == (None, "snb")
    assert out["dankar"] == out["snb"] > 0
    # both failed: Zayatz is chosen and the estimate is 0
    monkeypatch.setattr(risk, "snb_uniques", lambda hist, N: float("nan"))
    out = population_uniqueness(sizes, N)
    assert (out["snb"], out["dankar_choice"], out["dankar"]) == (None, "zayatz", 0.0)
    # at most 10 %: Pitman, else Zayatz (never SNB)
    monkeypatch.setattr(risk, "snb_uniques", lambda hist, N: 1.0)
    monkeypatch.setattr(risk, "pitman_uniques", lambda hist, N: float("nan"))
    out = population_uniqueness(sizes, 20 * sizes.sum())
    assert out["dankar_choice"] == "zayatz" and out["dankar"] == 0.0
