"""Issue 37, item 3: bounded queries (count, sum, mean, variance) with their intervals,
quantiles by the exponential mechanism, and keys released above a threshold τ.

Distributions are checked against the mechanisms' formulas (chi-squared), the quantile's
probabilities against the exponential mechanism computed naively here, the intervals'
coverage on 2000 independent cells, and τ's δ in exact arithmetic."""

import decimal
import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from gpuppdp.cli import choices, main
from gpuppdp.dp import (BudgetAccountant, RandomSource, dp_count, dp_key_counts, dp_mean,
                        dp_median, dp_quantile, dp_query, dp_sum, dp_variance)
from gpuppdp.dp.keys import key_threshold
from gpuppdp.dp.quantiles import _choose, _eta, _select, quantile_gaps
from gpuppdp.dp.queries import QUERY_MECHANISMS
from gpuppdp.errors import InputError

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")
CELLS = 2000


def source(backend="cpu", seed=7):
    return RandomSource(backend, seed=seed, insecure=True)


def cells_table(rows_per_cell=3, seed=0):
    """``CELLS`` groups of a few values in [0, 10], with a public domain."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(CELLS), rows_per_cell)
    return pd.DataFrame({"g": g, "v": rng.integers(-2, 13, g.shape[0]).astype(float)})


def by_cell(**kw):
    return {"by": "g", "domains": {"g": list(range(CELLS))}, **kw}


# --- distributions and intervals -----------------------------------------------------------

def test_sum_noise_is_the_discrete_laplace_on_the_grid(backend):
    df = cells_table()
    out = dp_sum(df, "v", lower=0, upper=10, epsilon=1.0, random=source(backend),
                 **by_cell())
    exact = df.assign(v=df.v.clip(0, 10)).groupby("g").v.sum().to_numpy()
    info = out.attrs["dp"]["queries"]["sum"]
    steps = (out["sum"].to_numpy() - exact) / info["granularity"]
    assert np.array_equal(steps, np.rint(steps))  # on the grid, the exact sum rounded
    b = info["scale"] / info["granularity"]  # the noise's scale in grid steps
    a = math.exp(-1 / b)
    edges = [0, round(0.3 * b), round(b), round(2 * b), round(4 * b), math.inf]
    tail = [1.0] + [2 * a**lo / (1 + a) for lo in edges[1:-1]] + [0.0]  # P[|Z| >= lo]
    probs = np.array([tail[i] - tail[i + 1] for i in range(5)])
    observed = np.histogram(np.abs(steps), bins=np.array(edges[:-1] + [1e18]) - 0.5)[0]
    assert stats.chisquare(observed, probs * CELLS).pvalue > 1e-4


@pytest.mark.parametrize("mechanism,target", [("laplace", {"epsilon": 0.5}),
                                              ("gaussian", {"rho": 0.1})])
def test_count_and_sum_intervals_cover_at_the_stated_level(mechanism, target):
    df = cells_table(seed=1)
    exact_sum = df.assign(v=df.v.clip(0, 10)).groupby("g").v.sum().to_numpy()
    exact_count = df.groupby("g").size().to_numpy()
    for statistic, exact, bounds in (("count", exact_count, {}),
                                     ("sum", exact_sum, {"lower": 0, "upper": 10})):
        out = dp_query(df, statistic, None if statistic == "count" else "v", **bounds,
                       mechanism=mechanism, confidence=0.8, random=source(seed=3),
                       **target, **by_cell())
        covered = (out[f"{statistic}_low"] <= exact) & (exact <= out[f"{statistic}_high"])
        info = out.attrs["dp"]["queries"][statistic]
        if mechanism == "laplace":  # exact: the discrete Laplace's tail at the half-width
            a = math.exp(-info["granularity"] / info["scale"])
            t = round((out[f"{statistic}_high"][0] - out[statistic][0]) / info["granularity"])
            p = 1 - 2 * a ** (t + 1) / (1 + a)
            assert p >= 0.8
            assert stats.binomtest(int(covered.sum()), CELLS, p).pvalue > 1e-4
        else:  # a bound: at least the level
            assert covered.mean() >= 0.8 - 3 * math.sqrt(0.16 / CELLS)


@pytest.mark.parametrize("query", [dp_mean, dp_variance])
def test_mean_and_variance_intervals_are_conservative(query):
    df = cells_table(rows_per_cell=40, seed=2)
    clamped = df.assign(v=df.v.clip(0, 10)).groupby("g").v
    naive = clamped.mean() if query is dp_mean else clamped.var(ddof=0)
    out = query(df, "v", lower=0, upper=10, epsilon=2.0, confidence=0.9,
                random=source(seed=4), **by_cell())
    name = "mean" if query is dp_mean else "variance"
    covered = (out[f"{name}_low"] <= naive.to_numpy()) & (naive.to_numpy()
                                                          <= out[f"{name}_high"])
    assert covered.mean() >= 0.9
    assert (out[f"{name}_low"] <= out[name]).all() and (out[name] <= out[f"{name}_high"]).all()
    assert out.attrs["dp"]["split"] == ({"count": 0.5, "sum": 0.5} if name == "mean" else
                                        {"count": 1 / 3, "sum": 1 / 3, "squares": 1 / 3})
    assert out.attrs["dp"]["epsilon"] == pytest.approx(2.0)


@pytest.mark.parametrize("mechanism,target", [("laplace", {"epsilon": 1.0}),
                                              ("gaussian", {"epsilon": 1.0, "delta": 1e-6})])
def test_whole_table_statistics_match_the_naive_ones(mechanism, target):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"v": rng.normal(40, 15, 50_000)})
    clamped = df.v.clip(0, 100)
    naive = {"count": len(df), "sum": clamped.sum(), "mean": clamped.mean(),
             "variance": clamped.var(ddof=0)}
    for statistic, value in naive.items():
        kw = {} if statistic == "count" else {"lower": 0, "upper": 100}
        out = dp_query(df, statistic, None if statistic == "count" else "v", **kw,
                       mechanism=mechanism, confidence=1 - 1e-9, random=source(seed=9),
                       **target)
        assert out[f"{statistic}_low"][0] <= value <= out[f"{statistic}_high"][0]
        width = out[f"{statistic}_high"][0] - out[f"{statistic}_low"][0]
        assert width < {"count": 200, "sum": 3e4, "mean": 1.0, "variance": 40}[statistic]
    if mechanism == "gaussian":  # (ε, δ) met through zCDP
        assert out.attrs["dp"]["epsilon"] <= 1.0 and out.attrs["dp"]["notion"] == "zcdp"


def test_person_bound_and_ledger():
    df = pd.DataFrame({"p": ["a"] * 50 + ["b", "c", "c"], "v": [9.0] * 53})
    acc = BudgetAccountant(100.0)
    out = dp_count(df, epsilon=60.0, person="p", max_rows_per_person=2, random=source(),
                   accountant=acc)
    assert out["count"][0] == 2 + 1 + 2  # geometric at 60: noise 0 w.p. 1 - 1e-26
    assert acc.ledger[-1].unit == "person (p, at most 2 rows)"
    summed = dp_sum(df, "v", lower=0, upper=10, epsilon=1.0, person="p", max_rows_per_person=3,
                    random=source())
    assert summed.attrs["dp"]["summation"]["sum"]["sensitivity"] == pytest.approx(30.0)


# --- quantiles -----------------------------------------------------------------------------

def naive_quantile(values, q, eps, sens, candidates):
    """The exponential mechanism over the candidates, computed directly."""
    n = len(values)
    score = [-abs(sum(v < c for v in values) - q * n) for c in candidates]
    w = [math.exp(eps * s / (2 * sens)) for s in score]
    return np.array(w) / sum(w)


def ranks_of(values, g, lo, hi):
    j_lo, j_hi = math.ceil(lo / g), math.floor(hi / g)
    pos = np.clip(np.floor(np.array(values) / g).astype(np.int64) + 1, j_lo, j_hi + 1)
    return np.concatenate(([j_lo], np.sort(pos), [j_hi + 1]))


@pytest.mark.parametrize("q", [0.5, 0.3])
def test_quantile_probabilities_are_the_exponential_mechanism(q):
    values, eps = [1.0, 2.0, 2.0, 5.0, 7.5], 1.3
    sens = max(q, 1 - q)
    ranks = ranks_of(values, 0.5, 0.0, 8.0)
    eps_run = eps - 4 * _eta(eps / (2 * sens))
    k, gaps = quantile_gaps(ranks, q, eps_run / (2 * sens))
    weights = k * np.exp(-gaps)
    run_p = weights / weights.sum()
    cand = np.arange(0, 17) * 0.5
    ideal = naive_quantile(values, q, eps_run, sens, cand)
    per_candidate = np.repeat(run_p / np.maximum(k, 1), k)  # uniform within a run
    assert np.max(np.abs(np.log(per_candidate / ideal))) <= 2 * _eta(eps / (2 * sens))
    src = source(seed=11)
    draws = np.array([_select(ranks, q, eps, sens, src)[0] for _ in range(2000)])
    observed = np.bincount(draws, minlength=17)
    assert stats.chisquare(observed, ideal * 2000).pvalue > 1e-4


def test_quantile_is_epsilon_dp_on_neighbours():
    """The probability of every candidate, as run, for a table and the table plus one value:
    within e**ε (the float weights taken exactly)."""
    eps, q = 0.7, 0.5
    base = [1.0, 3.0, 3.5, 6.0]
    for extra in (0.0, 3.2, 8.0):
        ps = []
        for values in (base, base + [extra]):
            ranks = ranks_of(values, 1.0, 0.0, 8.0)
            eps_run = eps - 4 * _eta(eps / (2 * 0.5))
            k, gaps = quantile_gaps(ranks, q, eps_run)
            w = [Fraction(float(x)) for x in k * np.exp(-gaps)]
            per = [wi / sum(w) / ki for wi, ki in zip(w, k) for _ in range(ki)]
            ps.append(np.array([float(p) for p in per]))
        assert np.max(np.abs(np.log(ps[0] / ps[1]))) <= eps


def test_float_weights_are_drawn_exactly():
    weights = np.array([3.0, 0.0, 1.0, 2.0**-900, 1.5, 2.0**-60])
    src = source(seed=2)
    draws = np.array([_choose(src, weights) for _ in range(2000)])
    assert not np.isin(draws, [1]).any()
    observed = np.bincount(draws, minlength=6)[[0, 2, 4]]
    assert observed.sum() == 2000  # the tiny weights: probability below 2**-61
    assert stats.chisquare(observed, np.array([3, 1, 1.5]) / 5.5 * 2000).pvalue > 1e-4


def test_quantiles_of_a_large_table_are_accurate(backend):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"v": rng.uniform(0, 100, 20_000)})
    out = dp_quantile(df, "v", [0.25, 0.5, 0.75], lower=0, upper=100, epsilon=1.0,
                      random=source(backend))
    for (_, row), (name, info) in zip(out.iterrows(), out.attrs["dp"]["queries"].items()):
        rank = (df.v < row["value"]).sum()
        assert abs(rank - row["quantile"] * len(df)) <= 1 + info["rank_error"]
        assert row["value"] / info["granularity"] == round(row["value"] / info["granularity"])
    assert out.attrs["dp"]["epsilon"] == 1.0 and out.attrs["dp"]["delta"] == 0.0
    median = dp_median(df, "v", lower=0, upper=100, epsilon=1.0, random=source(backend))
    assert abs((df.v < median["value"][0]).sum() - 10_000) <= 200


# --- keys above a threshold ----------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 3])
def test_tau_bounds_the_release_of_a_singleton_key(k):
    """K · P[1 + Z >= τ] <= δ < K · P[1 + Z >= τ - 1], in exact arithmetic from the
    sampler's own rate (discrete Laplace) and from the pmf summed directly (Gaussian)."""
    from gpuppdp.dp import DiscreteGaussianMechanism, GeometricMechanism

    delta = 1e-6
    mech = GeometricMechanism(epsilon=0.8, sensitivity=k)
    tau = key_threshold(mech, delta, k)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        a = (-Decimal(mech.sampler.rate)).exp()

        def tail(t):  # P[Z >= t], t >= 1
            return a**t / (1 + a)

        assert k * tail(tau - 1) <= Decimal(delta) < k * tail(tau - 2)
        gauss = DiscreteGaussianMechanism(rho=0.5, sensitivity=math.sqrt(k))
        tau = key_threshold(gauss, delta, k)
        s2 = Decimal(gauss.grid_sigma) ** 2
        pmf = [(-Decimal(y * y) / (2 * s2)).exp() for y in range(0, 400)]
        norm = 2 * sum(pmf) - pmf[0]
        def gtail(t):
            return sum(pmf[t:]) / norm

        assert k * gtail(tau - 1) <= Decimal(delta) < k * gtail(tau - 3)  # near the least
    assert tau > 1


def test_singleton_keys_are_released_at_the_predicted_rate():
    delta = 0.05
    df = pd.DataFrame({"key": np.arange(20_000).astype(str)})
    out = dp_key_counts(df, "key", epsilon=1.0, delta=delta, random=source(seed=5))
    tau = out.attrs["dp"]["tau"]
    from gpuppdp.dp import GeometricMechanism
    a = math.exp(-GeometricMechanism(epsilon=1.0).sampler.rate)
    p = a ** (tau - 1) / (1 + a)
    assert p <= delta
    assert stats.binomtest(len(out), 20_000, p).pvalue > 1e-4
    assert (out["count"] >= tau).all()


def test_key_counts_bound_persons_over_keys():
    df = pd.DataFrame({"p": ["x"] * 200 + [f"y{i}" for i in range(300)],
                       "key": [f"k{i % 100}" for i in range(200)] + ["big"] * 300})
    out = dp_key_counts(df, "key", epsilon=60.0, delta=1e-9, person="p",
                        max_keys_per_person=2, random=source())
    assert out.set_index("key")["count"].to_dict() == {"big": 300}  # x counts in 2 keys only
    assert out.attrs["dp"]["unit"] == "person (p, at most 2 keys)"


# --- errors and the command line -----------------------------------------------------------

@pytest.mark.parametrize("call,match", [
    (lambda df: dp_sum(df, "v", lower=0, upper=None, epsilon=1.0), "lower=0, upper=None"),
    (lambda df: dp_count(df, epsilon=1.0, mechanism="geometric"), "mechanism must be one of"),
    (lambda df: dp_mean(df, "v", lower=0, upper=1, epsilon=1.0, confidence=1.0),
     "confidence must be"),
    (lambda df: dp_count(df, epsilon=1.0, delta=1e-5), "delta=1e-05"),
    (lambda df: dp_variance(df, "v", lower=0, upper=1, mechanism="gaussian", epsilon=1.0),
     "needs delta > 0"),
    (lambda df: dp_quantile(df, "v", 1.5, lower=0, upper=1, epsilon=1.0), "q must be"),
    (lambda df: dp_quantile(df, "v", 0.5, lower=1, upper=1, epsilon=1.0), "lower < upper"),
    (lambda df: dp_quantile(df, "v", 0.5, lower=0, upper=1, epsilon=1.0, granularity=0.3),
     "granularity must be a power of two"),
    (lambda df: dp_key_counts(df, "v", epsilon=1.0, delta=0.0), "delta must be in"),
    (lambda df: dp_key_counts(df, "v", epsilon=1.0, delta=1e-6, max_keys_per_person=2),
     "max_keys_per_person needs person"),
    (lambda df: dp_key_counts(df, "v", epsilon=1.0, delta=1e-6, mechanism="laplace"),
     "mechanism must be one of"),
])
def test_errors_name_the_parameter(call, match):
    with pytest.raises(InputError, match=match):
        call(pd.DataFrame({"v": [0.5, 0.25]}))


def test_missing_values_are_refused_after_the_charge():
    acc = BudgetAccountant(5.0)
    df = pd.DataFrame({"v": [1.0, None, 3.0]})
    with pytest.raises(InputError, match="missing values"):
        dp_mean(df, "v", lower=0, upper=5, epsilon=1.0, random=source(), accountant=acc)
    assert acc.spent == pytest.approx(1.0)
    out = dp_mean(df, "v", lower=0, upper=5, epsilon=1.0, random=source(), unknown="drop")
    assert list(out.columns) == ["count", "mean", "mean_low", "mean_high"]


def test_cli_dp_query_and_private_keys(tmp_path, capsys):
    assert choices.QUERY_MECHANISMS == QUERY_MECHANISMS
    data = tmp_path / "d.csv"
    pd.DataFrame({"age": np.arange(400) % 90, "sex": ["f", "m"] * 200}).to_csv(data, index=False)
    ledger = tmp_path / "l.json"
    common = ["--seed", "1", "--insecure-seed", "--budget-file", str(ledger)]
    assert main(["dp-query", str(data), "--query", "mean", "--column", "age", "--lower", "0",
                 "--upper", "100", "--by", "sex", "--public-domain", "--epsilon", "1",
                 "--budget", "3", "--new-ledger", "--json", str(tmp_path / "s.json"),
                 *common]) == 0
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["release"]["statistic"] == "mean" and doc["ledger"]["spent"]["epsilon"] == 1.0
    assert main(["dp-query", str(data), "--query", "quantile:0.1,0.9", "--column", "age",
                 "--lower", "0", "--upper", "100", "--epsilon", "1", *common]) == 0
    assert "q=0.9: with probability 0.95" in capsys.readouterr().out
    assert main(["dp-histogram", str(data), "--by", "sex", "--private-keys", "--epsilon", "0.5",
                 "--delta", "1e-6", "--output", str(tmp_path / "k.csv"), *common]) == 0
    assert pd.read_csv(tmp_path / "k.csv")["sex"].tolist() == ["f", "m"]
    assert BudgetAccountant.load(ledger).spent == pytest.approx(2.5)
    assert main(["dp-query", str(data), "--query", "median", "--column", "age", "--lower", "0",
                 "--upper", "100", "--epsilon", "1", *common]) == 2  # the budget is spent
    assert "budget" in capsys.readouterr().err
