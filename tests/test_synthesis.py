"""MST synthetic data (gpuppdp.dp.synthesis) and its evaluation, against naive references."""

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from gpuppdp.cli.main import main
from gpuppdp.dp import BudgetAccountant, RandomSource
from gpuppdp.dp.accounting import approx_to_zcdp, zcdp_to_approx
from gpuppdp.dp.synthesis import MSTSynthesizer, frequency_set, marginal_counts, project_simplex
from gpuppdp.dp.synthesis_eval import evaluate_synthetic
from gpuppdp.errors import InputError


def _source(backend, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RandomSource(backend, seed=seed, insecure=True)


def _chain(n=4000, seed=0):
    """a -> b -> c strongly dependent, d independent: the best tree has a-b and b-c."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.85, (b + 1) % 4, rng.integers(0, 4, n))
    d = rng.integers(0, 2, n)
    return pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "c": c.astype(str),
                         "d": d.astype(str)})


def test_marginal_counts_equal_pandas_crosstab(backend):
    df = _chain(600)
    codes = np.stack([pd.factorize(df[c], sort=True)[0] for c in df], axis=1).astype(np.int64)
    radix = codes.max(axis=0) + 1
    rows, counts = frequency_set(backend.xp, backend.asarray(codes), radix)
    cliques = [(0,), (3,)] + list(itertools.combinations(range(4), 2))
    flat, off = marginal_counts(backend.xp, rows, counts, radix, cliques)
    flat = backend.to_host(flat)
    for i, c in enumerate(cliques):
        cols = [df.columns[j] for j in c]
        if len(c) == 1:
            ref = df[cols[0]].value_counts().sort_index().to_numpy()
        else:
            ref = pd.crosstab(df[cols[0]], df[cols[1]]).to_numpy().ravel()
        np.testing.assert_array_equal(flat[off[i]:off[i + 1]], ref)


def test_project_simplex_is_the_euclidean_projection():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(20, 5)) * 2
    p = project_simplex(v)
    assert np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()
    for row, proj in zip(v, p):  # no other point of the simplex is closer (random ones)
        others = rng.dirichlet(np.ones(5) * 0.3, 300)
        assert (np.linalg.norm(others - row, axis=1) >= np.linalg.norm(proj - row) - 1e-12).all()


def test_budget_split_and_noise_scales():
    rho = approx_to_zcdp(1.0, 1e-9)
    assert zcdp_to_approx(rho, 1e-9) <= 1.0 < zcdp_to_approx(rho * 1.001, 1e-9)
    synth = MSTSynthesizer(1.0, 1e-9, public_domain=True, random=_source("cpu"))
    d = 5
    one, two, eps_sel, charge = synth.mechanisms(d)
    third = rho / 3
    assert one.sigma == pytest.approx(math.sqrt(d / (2 * third)), rel=1e-5)
    assert two.sigma == pytest.approx(math.sqrt((d - 1) / (2 * third)), rel=1e-5)
    assert eps_sel ** 2 / 8 * (d - 1) == pytest.approx(third, rel=1e-5)
    assert charge["rho"] <= rho and charge["rho"] == pytest.approx(rho, rel=1e-5)


def test_tree_is_spanning_and_finds_the_chain():
    df = _chain()
    synth = MSTSynthesizer(rho=50.0, public_domain=True, random=_source("cpu")).fit(df)
    edges = synth.edges
    assert len(edges) == 3
    comp = {c: c for c in df.columns}  # union-find: 3 edges joining 4 columns, no cycle

    def root(c):
        while comp[c] != c:
            c = comp[c]
        return c
    for a, b in edges:
        assert root(a) != root(b)
        comp[root(a)] = root(b)
    assert {frozenset(e) for e in edges} >= {frozenset("ab"), frozenset("bc")}


def test_model_distributions_are_consistent_and_valid(backend):
    df = _chain(3000)
    synth = MSTSynthesizer(rho=0.05, public_domain=True, random=_source(backend)).fit(df)
    m = synth._model
    for node in m["order"]:
        cum, starts, sums, width = (backend.to_host(t) if hasattr(t, "shape") else t
                                    for t in m["tables"][node])
        assert (np.diff(np.r_[0, cum]) >= 0).all()  # non-negative weights
        assert sums.min() >= 1 and cum[-1] == sums.sum()


def test_huge_epsilon_reproduces_the_tree_marginals():
    df = _chain(6000, seed=2)
    synth = MSTSynthesizer(rho=100.0, public_domain=True, random=_source("cpu", 3)).fit(df)
    syn = synth.sample(20000)
    for a, b in synth.edges:
        p = pd.crosstab(df[a], df[b], normalize=True)
        q = pd.crosstab(syn[a], syn[b], normalize=True).reindex_like(p).fillna(0)
        assert 0.5 * np.abs(p.to_numpy() - q.to_numpy()).sum() < 0.03


def test_sampler_draws_the_model_distribution(backend):
    """Chi-squared of the sampled pairs of each edge against the model's joint."""
    df = _chain(2000, seed=4)
    synth = MSTSynthesizer(rho=0.2, public_domain=True, random=_source(backend, 5)).fit(df)
    n = 20000
    codes = backend.to_host(synth.sample_codes(n))
    m = synth._model
    for node in m["order"]:
        parent = m["parent"][node]
        cum, starts, sums, width = (backend.to_host(t) if hasattr(t, "shape") else t
                                    for t in m["tables"][node])
        w = np.diff(np.r_[0, cum]).reshape(-1, width) / sums[:, None]
        if parent < 0:
            expected = w[0] * n
            observed = np.bincount(codes[:, node], minlength=width)
        else:  # the parent's sampled counts times the model's conditional
            pc = np.bincount(codes[:, parent], minlength=w.shape[0])
            expected = (pc[:, None] * w).ravel()
            observed = np.bincount(codes[:, parent] * width + codes[:, node],
                                   minlength=w.size)
        keep = expected > 5
        assert observed[~keep].sum() <= max(5 * (~keep).sum(), 0) + 5
        chi2 = (((observed[keep] - expected[keep]) ** 2) / expected[keep]).sum()
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4


def test_budget_is_charged_once_before_noise():
    df = _chain(500)
    acc = BudgetAccountant(1.2, 1e-9)
    synth = MSTSynthesizer(1.0, 1e-9, public_domain=True, random=_source("cpu"), accountant=acc)
    synth.fit(df)
    assert len(acc.ledger) == 1 and acc.ledger[0].rho == pytest.approx(synth.privacy["rho"])
    assert synth.privacy["epsilon"] <= 1.0
    with pytest.raises(InputError, match="budget|exceed"):  # a second one overspends
        MSTSynthesizer(1.0, 1e-9, public_domain=True, random=_source("cpu"),
                       accountant=acc).fit(df)
    assert len(acc.ledger) == 1


def test_errors_name_the_parameters():
    with pytest.raises(InputError, match="epsilon and delta"):
        MSTSynthesizer(1.0)
    with pytest.raises(InputError, match="rho"):
        MSTSynthesizer(rho=-1.0)
    with pytest.raises(InputError, match="unknown"):
        MSTSynthesizer(rho=1.0, unknown="keep")
    s = MSTSynthesizer(rho=1.0, random=_source("cpu"), bins={"x": (5, 1, 3)})
    with pytest.raises(InputError, match=r"bins\['x'\]"):
        s.fit(pd.DataFrame({"x": [1, 2]}))
    with pytest.raises(InputError, match="public domain"):
        MSTSynthesizer(rho=1.0, random=_source("cpu")).fit(pd.DataFrame({"x": ["a"]}))
    with pytest.raises(InputError, match="fit the synthesizer"):
        MSTSynthesizer(rho=1.0, random=_source("cpu")).sample(3)


def test_bins_give_values_inside_their_bounds():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(17, 91, 2000), "s": rng.choice(["f", "m"], 2000)})
    syn = MSTSynthesizer(rho=5.0, public_domain=["s"], bins={"age": (17, 91, 8)},
                         random=_source("cpu")).fit(df).sample(500)
    assert syn["age"].dtype.kind == "i" and syn["age"].between(17, 91).all()


def test_evaluation_against_naive_measures():
    real, syn = _chain(800, seed=6), _chain(700, seed=7)
    ev = evaluate_synthetic(real, syn, queries=50, distance_records=100, backend="cpu")
    for a, b in itertools.combinations(real.columns, 2):
        p = pd.crosstab(real[a], real[b], normalize=True)
        q = pd.crosstab(syn[a], syn[b], normalize=True).reindex_like(p).fillna(0)
        assert ev["two_way"]["per_clique"][f"{a},{b}"] == pytest.approx(
            0.5 * np.abs(p.to_numpy() - q.to_numpy()).sum())
    real_set = set(map(tuple, real.to_numpy()))
    share = np.mean([tuple(r) in real_set for r in syn.to_numpy()])
    assert ev["closest_record"]["identical_share"] == pytest.approx(share)
    assert ev["closest_record"]["hamming_quantiles"][50] == 0.0  # tiny domain: most identical
    assert 0.0 <= ev["propensity"]["propensity_score"] <= 0.25
    assert 0.0 <= ev["queries"]["mean_abs_error"] <= ev["queries"]["max_abs_error"] <= 1.0


def test_cli_writes_the_table_the_summary_the_page_and_the_ledger(tmp_path):
    src = tmp_path / "in.csv"
    _chain(400).to_csv(src, sep=";", index=False)
    out, js, page = tmp_path / "syn.csv", tmp_path / "s.json", tmp_path / "s.html"
    ledger = tmp_path / "ledger.json"
    args = ["synthesize", str(src), "--epsilon", "1", "--delta", "1e-9", "--public-domain",
            "--output", str(out), "--json", str(js), "--html", str(page), "--rows", "123",
            "--seed", "1", "--insecure-seed", "--backend", "cpu", "--budget-file", str(ledger),
            "--budget", "1", "--budget-delta", "1e-6", "--new-ledger"]
    assert main(args) == 0
    syn = pd.read_csv(out, sep=";", dtype=str)
    assert len(syn) == 123 and list(syn.columns) == list("abcd")
    summary = json.loads(js.read_text())
    assert summary["privacy"]["epsilon"] <= 1.0 and summary["evaluation"]["two_way"]
    assert "<svg" in page.read_text() and "<script" not in page.read_text()
    assert main(args[:-7] + ["--budget-file", str(ledger)]) == 2  # the budget is spent
