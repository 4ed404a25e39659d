"""The compiled population-uniqueness estimators' closed forms against plain sums.

Pitman's likelihood equations sum over the records (``j < n``) and the classes (``i < u``):
:mod:`gpuppdp.kernels.uniqueness` evaluates them as digamma/trigamma differences (mirrored
where alpha < 0 puts poles among the terms) or power series in ``alpha/theta``, by region;
each region is checked here against the sums written out (``math.fsum``).  The ARX golden
tests (``test_risk_models_arx.py``, ``test_census_arx.py``) check the verdicts that follow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuppdp.kernels import uniqueness as U


@pytest.mark.parametrize("x", [0.3, 1.0, 15.9, 16.0, 17.5, 1234.5, 3e7])
@pytest.mark.parametrize("m", [0, 1, 7, 40, 3000])
@pytest.mark.parametrize("power", [1, 2])
def test_harmonic_is_the_plain_sum(x, m, power):
    expected = math.fsum((x + i) ** -power for i in range(m))
    assert U._harmonic(x, m, power) == pytest.approx(expected, rel=2e-15, abs=1e-300)


def _plain_equations(t, a, hist):
    """Pitman's equations and Jacobian with every sum written out."""
    sizes = np.arange(len(hist))
    u, n = int(hist.sum()), int(sizes @ hist)
    m = [int(hist[j + 1:].sum()) for j in range(1, len(hist) - 1)]  # classes larger than j
    i, j = range(1, u), range(1, n)
    s = math.fsum
    return (s(1 / (t + k * a) for k in i) - s(1 / (t + k) for k in j),
            s(k / (t + k * a) for k in i) - s(mj / (jj - a) for jj, mj in enumerate(m, 1)),
            s(1 / (t + k) ** 2 for k in j) - s(1 / (t + k * a) ** 2 for k in i),
            -s(k / (t + k * a) ** 2 for k in i),
            -s(k * k / (t + k * a) ** 2 for k in i)
            - s(mj / (jj - a) ** 2 for jj, mj in enumerate(m, 1)))


HIST = np.array([0, 61, 17, 0, 0, 6, 1, 0, 0, 0, 2], dtype=np.float64)  # u = 87


@pytest.mark.parametrize("t, a", [
    (40.0, 0.6),       # t/a <= 4u: digamma forms
    (1e5, 0.3),        # t/a > 4u: the power series
    (1e5, -0.3),       # the series with alpha < 0
    (2.1, -0.5),       # alpha < 0, poles among the terms: mirrored digamma forms
    (0.0, -0.5),       # theta = 0
    (3.0, 7.5),        # alpha above the smallest sizes: the m_j run term by term
])
def test_pitman_equations_are_the_plain_sums(t, a):
    u, n = float(HIST.sum()), float(np.arange(len(HIST)) @ HIST)
    powers = np.full(U._SERIES_TERMS + 2, np.nan)
    runs = np.full(3 * len(HIST), np.nan)
    n_runs = U._larger_runs(HIST, u, runs)
    assert n_runs <= np.count_nonzero(HIST[2:]) + 1  # the bound estimator_work reserves
    got = U._pitman_equations(t, a, u, n, runs, n_runs, powers)
    for value, expected in zip(got, _plain_equations(t, a, HIST)):
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_population_shares_judge_each_node_as_the_estimators_do():
    """Nodes' sorted sizes with prefixes cut: the verdict of each is the estimators' share
    (the public functions) against ``t``, or no sample unique."""
    rng = np.random.default_rng(5)
    sizes, ptr = [], [0]
    for _ in range(12):
        node = np.sort(rng.integers(1, rng.integers(2, 30), rng.integers(1, 60)))
        sizes.extend(node.tolist())
        ptr.append(len(sizes))
    sizes, ptr = np.array(sizes, dtype=np.int64), np.array(ptr, dtype=np.int64)
    nodes = np.arange(12, dtype=np.int64)
    prefix = np.minimum(rng.integers(0, 6, 12), np.diff(ptr)).astype(np.int64)
    big = 5000.0
    for name, code in U.ESTIMATOR_CODES.items():
        out = np.empty(12, dtype=bool)
        work = np.full(U.estimator_work(int(sizes.max()), int(np.diff(ptr).max())), np.nan)
        U.population_shares(sizes, ptr, nodes, prefix, code, big, 0.05, out, work)
        for b in range(12):
            hist = np.bincount(sizes[ptr[b] + prefix[b]:ptr[b + 1]]).astype(np.float64)
            if len(hist) < 2 or hist[1] == 0:
                assert out[b]
                continue
            n = float(np.arange(len(hist)) @ hist)
            if name == "dankar" and n / big <= 0.1:
                v = U.pitman_uniques(hist, big)
            elif name == "dankar":
                snb, zayatz = U.snb_uniques(hist, big), U.zayatz_uniques(hist, big)
                v = min(snb, zayatz) if math.isfinite(snb) and snb != 0 else zayatz
            else:
                v = getattr(U, f"{name}_uniques")(hist, big)
            share = v / big if math.isfinite(v) and v != 0 else 0.0
            assert out[b] == (0.0 < share <= 0.05), (name, b)
