"""Utility metrics (gpuppdp.analysis.utility): worked examples, naive references, backends,
engine."""

import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis import utility
from gpuppdp.backend import cpu_backend
from gpuppdp.hierarchy import Hierarchy

AGE = Hierarchy([["20", "21", "30", "31"], ["2*", "2*", "3*", "3*"], ["*"] * 4], name="age")
SEX = Hierarchy([["M", "F"], ["*", "*"]], name="sex")
HIER = {"age": AGE, "sex": SEX}


def _table():
    orig = pd.DataFrame({"age": ["20", "21", "21", "30", "31"],
                         "sex": ["M", "M", "F", "F", "F"],
                         "disease": ["flu", "flu", "cold", "flu", "cold"]})
    # age at level 1, sex at level 0; the last record suppressed
    rel = pd.DataFrame({"age": ["2*", "2*", "2*", "3*", "*"],
                        "sex": ["M", "M", "F", "F", "*"],
                        "disease": orig["disease"]})
    return orig, rel


# ------------------------------------------------------------------------------ worked examples

def test_discernibility_worked_example(backend):
    assert utility.discernibility([2, 3], 0, 5, backend=backend) == 13.0
    assert utility.discernibility(np.array([2, 3]), 2, 7, backend=backend) == 13.0 + 14.0


def test_average_class_size_worked_example(backend):
    assert utility.average_class_size([2, 3], 2, backend=backend) == pytest.approx(1.25)
    assert utility.average_class_size([5, 5, 5], 5, backend=backend) == 1.0


def test_precision_worked_example(backend):
    orig, rel = _table()
    assert utility.released_levels(rel, HIER, ["age", "sex"]) == {"age": 1, "sex": 0}
    # kept 4 rows: age 1/2 each, sex 0; suppressed row: 1 + 1
    expected = 1 - (4 * 0.5 + 0 + 2) / (2 * 5)
    assert utility.precision(orig, rel, HIER, ["age", "sex"], backend=backend) == \
        pytest.approx(expected, abs=1e-15)
    # dropping the suppressed row changes nothing
    assert utility.precision(orig, rel.iloc[:4], HIER, ["age", "sex"], backend=backend) == \
        pytest.approx(expected, abs=1e-15)


def test_iloss_worked_example(backend):
    orig, rel = _table()
    # the old, ARX-normalized definition:
    # age '2*' / '3*' cover 2 of 4 leaves: (2-1)/(4-1) = 1/3; sex leaves: 0; suppressed: 1 + 1
    expected = (0.5 * (4 / 3 + 1) + 0.5 * (0 + 1)) / 5
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], definition="arx",
                         backend=backend) == pytest.approx(expected, abs=1e-15)
    w = {"age": 2.0, "sex": 1.0}
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], w, definition="arx",
                         backend=backend) == pytest.approx((2.0 * (4 / 3 + 1) + 1.0) / 5,
                                                           abs=1e-15)
    # Xiao & Tao (the default): '2*'/'3*' (2-1)/4 each; suppressed (4-1)/4 + (2-1)/2; summed
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], backend=backend) == \
        pytest.approx(4 * 0.25 + 0.75 + 0.5, abs=1e-15)


def test_non_uniform_entropy_worked_example(backend):
    orig, rel = _table()
    # age: '2*' holds 20,21,21 -> -log2(1/3) - 2 log2(2/3); '3*' holds 30 -> 0; '*' -> 0
    # sex: unchanged -> 0, '*' -> 0
    expected = -math.log2(1 / 3) - 2 * math.log2(2 / 3)
    assert utility.non_uniform_entropy(orig, rel, ["age", "sex"], backend=backend) == \
        pytest.approx(expected, abs=1e-12)
    assert utility.non_uniform_entropy(orig, orig, ["age", "sex"], backend=backend) == 0.0


def test_kl_divergence_worked_example(backend):
    orig, rel = _table()
    # tuples (20,M) 1/5, (21,M) 1/5, (21,F) 1/5, (30,F) 1/5, (31,F) 1/5
    # class (2*,M) = {20M, 21M}: mass 2/5 over 2 tuples -> 1/5 each; others exact -> KL = 0
    assert utility.kl_divergence(orig, rel, ["age", "sex"], backend=backend) == \
        pytest.approx(0.0, abs=1e-15)
    rel2 = rel.copy()
    rel2["sex"] = ["*", "*", "*", "*", "*"]
    rel2["age"] = ["2*", "2*", "2*", "3*", "3*"]
    # class 2* = {20M, 21M, 21F, 21F?}: rows 20M, 21M, 21F -> mass 3/5 over 3 tuples = 1/5 each
    assert utility.kl_divergence(orig, rel2, ["age", "sex"], backend=backend) == \
        pytest.approx(0.0, abs=1e-15)
    orig3 = orig.copy()
    orig3["age"] = ["20", "20", "21", "30", "31"]
    orig3["sex"] = ["M", "M", "F", "F", "F"]
    # class 2* = rows 20M, 20M, 21F: mass 3/5 over 2 tuples -> Q = 3/10 each; P = 2/5, 1/5
    expected = 0.4 * math.log(0.4 / 0.3) + 0.2 * math.log(0.2 / 0.3)
    assert utility.kl_divergence(orig3, rel2, ["age", "sex"], backend=backend) == \
        pytest.approx(expected, abs=1e-15)


def test_info_gain_worked_example(backend):
    orig, _ = _table()
    # level 2 -> 1: '*' (flu 3, cold 2) -> '2*' (flu 2, cold 1), '3*' (flu 1, cold 1)
    def H(*p):
        return -sum(x * math.log2(x) for x in p if x > 0)
    expected = H(3 / 5, 2 / 5) - (3 / 5 * H(2 / 3, 1 / 3) + 2 / 5 * H(1 / 2, 1 / 2))
    assert utility.info_gain(orig, AGE, "age", 2, "disease", backend=backend) == \
        pytest.approx(expected, abs=1e-12)
    # level 1 -> 0: '2*' {20: flu; 21: flu, cold}, '3*' {30: flu; 31: cold}
    expected1 = (H(2 / 3, 1 / 3) - 2 / 3 * H(1 / 2, 1 / 2)) + (H(1 / 2, 1 / 2) - 0)
    assert utility.info_gain(orig, AGE, "age", 1, "disease", backend=backend) == \
        pytest.approx(expected1, abs=1e-12)


# ------------------------------------------------------------------------- naive references

def _random_hierarchy(rng, name):
    n = int(rng.integers(1, 7))
    leaves = [f"{name}{i}" for i in range(n)]
    levels = [leaves]
    groups = list(range(n))
    for lv in range(int(rng.integers(0, 3))):
        groups = [g // 2 for g in groups]
        levels.append([f"{name}L{lv + 1}g{g}" for g in groups])
    levels.append(["*"] * n)
    return Hierarchy(levels, name=name)


def _random_case(rng):
    q = int(rng.integers(1, 4))
    qids = [f"q{j}" for j in range(q)]
    hier = {c: _random_hierarchy(rng, c) for c in qids}
    n = int(rng.integers(1, 40))
    orig = pd.DataFrame({c: rng.choice(hier[c].leaves, n) for c in qids})
    orig["cls"] = rng.choice(["a", "b", "c"], n)
    levels = {c: int(rng.integers(0, hier[c].height + 1)) for c in qids}
    if all(levels[c] == hier[c].height for c in qids) and hier[qids[0]].height > 0:
        levels[qids[0]] = 0  # a star row is then always a suppressed one
    rel = pd.DataFrame({c: hier[c].generalize(orig[c], levels[c]) for c in qids})
    sup = rng.random(n) < 0.2
    for c in qids:
        rel.loc[sup, c] = "*"
    rel["cls"] = orig["cls"]
    return orig, rel, hier, qids, levels, sup


def _is_star(rel, qids):
    return [all(rel[c].iloc[r] == "*" for c in qids) for r in range(len(rel))]


def naive_precision(orig, rel, hier, qids, levels):
    star = _is_star(rel, qids)
    total = 0.0
    for r in range(len(orig)):
        for c in qids:
            h = hier[c].height
            if r >= len(rel) or star[r]:
                total += 1.0
            elif h > 0:
                total += levels[c] / h
    return 1 - total / (len(qids) * len(orig))


def naive_iloss(orig, rel, hier, qids, levels, weights):
    """The ARX-normalized ILoss (``definition="arx"``)."""
    star = _is_star(rel, qids)
    total = 0.0
    for r in range(len(orig)):
        for j, c in enumerate(qids):
            h = hier[c]
            dom = len(h.leaves)
            if dom == 1:
                continue
            if r >= len(rel) or star[r]:
                total += weights[j]
                continue
            v = rel[c].iloc[r]
            under = sum(1 for leaf in h.leaves if h.generalize([leaf], levels[c])[0] == v)
            total += weights[j] * (under - 1) / (dom - 1)
    return total / len(orig)


def naive_entropy(orig, rel, qids):
    total = 0.0
    for c in qids:
        pairs = list(zip(orig[c], rel[c]))
        for x, y in pairs:
            ny = sum(1 for _, b in pairs if b == y)
            nxy = sum(1 for a, b in pairs if a == x and b == y)
            total -= math.log2(nxy / ny)
    return total


def naive_kl(orig, rel, qids):
    n = len(orig)
    t = [tuple(orig[c].iloc[r] for c in qids) for r in range(n)]
    e = [tuple(rel[c].iloc[r] for c in qids) for r in range(n)]
    p = {x: t.count(x) / n for x in set(t)}
    qd = dict.fromkeys(p, 0.0)
    for cls in set(e):
        rows = [r for r in range(n) if e[r] == cls]
        covered = {t[r] for r in rows}
        for x in covered:
            qd[x] += len(rows) / n / len(covered)
    return sum(p[x] * math.log(p[x] / qd[x]) for x in p)


def naive_info_gain(data, h, column, level, target):
    def ent(s):
        pr = s.value_counts(normalize=True)
        return float(-(pr * np.log2(pr)).sum())
    v = pd.Series(h.generalize(data[column], level), index=data.index)
    c = pd.Series(h.generalize(data[column], level - 1), index=data.index)
    total = 0.0
    for val, rows in data.groupby(v):
        after = sum(len(sub) / len(rows) * ent(sub[target])
                    for _, sub in rows.groupby(c[rows.index]))
        total += ent(rows[target]) - after
    return total


@pytest.mark.parametrize("seed", range(25))
def test_against_naive(seed, backend):
    rng = np.random.default_rng(seed)
    orig, rel, hier, qids, levels, sup = _random_case(rng)
    assert utility.precision(orig, rel, hier, qids, levels=levels, backend=backend) == \
        pytest.approx(naive_precision(orig, rel, hier, qids, levels), abs=1e-12)
    kept = rel[[not s for s in _is_star(rel, qids)]]
    assert utility.precision(orig, kept, hier, qids, levels=levels, backend=backend) == \
        pytest.approx(naive_precision(orig, rel, hier, qids, levels), abs=1e-12)
    w = rng.random(len(qids))
    assert utility.iloss(orig, rel, hier, qids, w, levels=levels, definition="arx",
                         backend=backend) == \
        pytest.approx(naive_iloss(orig, rel, hier, qids, levels, w), abs=1e-12)
    assert utility.iloss(orig, rel, hier, qids, levels=levels, definition="arx",
                         backend=backend) == \
        pytest.approx(naive_iloss(orig, rel, hier, qids, levels, [1 / len(qids)] * len(qids)),
                      abs=1e-12)
    assert utility.non_uniform_entropy(orig, rel, qids, backend=backend) == \
        pytest.approx(naive_entropy(orig, rel, qids), abs=1e-12)
    assert utility.kl_divergence(orig, rel, qids, backend=backend) == \
        pytest.approx(naive_kl(orig, rel, qids), abs=1e-12)
    sizes = rel[~sup].groupby(qids).size().to_numpy()
    if len(sizes):
        assert utility.discernibility(sizes, int(sup.sum()), len(orig), backend=backend) == \
            float((sizes ** 2).sum() + sup.sum() * len(orig))
        k = int(rng.integers(1, 5))
        assert utility.average_class_size(sizes, k, backend=backend) == \
            pytest.approx(sizes.sum() / len(sizes) / k, abs=1e-12)
    c = qids[0]
    for level in range(1, hier[c].height + 1):
        assert utility.info_gain(orig, hier[c], c, level, "cls", backend=backend) == \
            pytest.approx(naive_info_gain(orig, hier[c], c, level, "cls"), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_backends_agree(seed, backend):
    rng = np.random.default_rng(100 + seed)
    orig, rel, hier, qids, levels, sup = _random_case(rng)
    cpu = cpu_backend()
    for fn, args in ((utility.precision, (orig, rel, hier, qids)),
                     (utility.iloss, (orig, rel, hier, qids)),
                     (utility.non_uniform_entropy, (orig, rel, qids)),
                     (utility.kl_divergence, (orig, rel, qids))):
        kw = {"levels": levels} if fn in (utility.precision, utility.iloss) else {}
        assert fn(*args, backend=backend, **kw) == pytest.approx(fn(*args, backend=cpu, **kw),
                                                                abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_released_levels_inferred(seed):
    rng = np.random.default_rng(200 + seed)
    orig, rel, hier, qids, levels, sup = _random_case(rng)
    if sup.all():
        return
    assert utility.released_levels(rel, hier, qids) == levels


# ------------------------------------------------------------------------ engine consistency

@pytest.fixture(scope="module")
def adult():
    from gpuppdp import datasets
    data, hierarchies = datasets.adult()
    qids = [c for c in datasets.ADULT_QUASI_IDENTIFIERS if c != "occupation"]
    return data, {c: hierarchies[c] for c in qids}, qids


def _fit(adult, metric):
    from gpuppdp import Anonymizer
    data, hier, qids = adult
    return Anonymizer(quasi_identifiers=hier, insensitive=["occupation"], k=5,
                      suppression_limit=0.05, metric=metric, backend="cpu", seed=0).fit(data)


def test_engine_discernibility_and_precision(adult):
    from gpuppdp.analysis.risk import class_sizes
    data, hier, qids = adult
    res = _fit(adult, "discernibility")
    rel = res.released
    star = np.ones(len(rel), dtype=bool)
    for c in qids:
        star &= (rel[c].astype(str) == "*").to_numpy()
    assert int(star.sum()) == res.suppressed_records
    sizes = cpu_backend().to_host(class_sizes(rel[~star], qids))
    assert len(sizes) == res.equivalence_classes
    dm = utility.discernibility(sizes, int(star.sum()), len(data))
    assert dm == res.information_loss
    assert utility.released_levels(rel, hier, qids) == res.transformation
    assert utility.average_class_size(sizes, 5) >= 1.0

    # ARX's precision loss = mean over QIDs of level/height per record, suppressed records
    # charged the top level: exactly 1 - Sweeney's Prec as utility.precision computes it
    res_p = _fit(adult, "precision")
    prec = utility.precision(data, res_p.released, hier, qids)
    assert prec == pytest.approx(1.0 - res_p.information_loss, abs=1e-12)
    assert utility.precision(data, res_p.released, hier, qids,
                             levels=res_p.transformation) == prec


def test_precision_loss_and_bound_are_arx_formulas_to_the_bit():
    """The compiled Prec and its lower bound, batched and node by node as the compiled Flash
    computes them (at ARX's defaults, and with a random gs-factor's factors and attribute
    weights), against ARX's formulas written out in Python floats, attribute by attribute in
    order: equal to the last bit on random nodes."""
    from gpuppdp.engine.metrics import _mean_share_weighted, _precision_weighted, precision_loss
    from gpuppdp.engine.search.flash_record import _mean_share_of, _precision_of

    rng = np.random.default_rng(8)
    for trial in range(100):
        q, n_nodes, n_rows = int(rng.integers(1, 16)), int(rng.integers(1, 20)), \
            int(rng.integers(1, 10 ** 7))
        heights = rng.integers(1, 7, q)
        levels = rng.integers(0, 7, (n_nodes, q)) % (heights + 1)
        shares = levels / heights
        lattice = np.stack([heights, np.cumprod(np.r_[1, heights[:-1] + 1])]).astype(np.int64)
        nodes = levels @ lattice[1]
        suppressed = rng.integers(0, n_rows + 1, n_nodes)
        default = trial % 2 == 0
        g_f, s_f = (1.0, 1.0) if default else (float(rng.uniform(0, 1)), float(rng.uniform(0, 1)))
        w = np.ones(q) if default else rng.uniform(0, 1, q)
        loss = precision_loss(shares, suppressed, n_rows) if default else \
            _precision_weighted(shares, suppressed.astype(np.float64), float(n_rows), g_f, s_f, w)
        bound = _mean_share_weighted(shares, g_f, w)
        terms = np.stack([heights.astype(np.float64), w, np.full(q, g_f), np.full(q, s_f)])
        for b in range(n_nodes):
            sup = float(suppressed[b])
            kept = n_rows - sup
            il = lb = 0.0
            for i in range(q):
                s = float(shares[b, i])
                il += ((((kept * s) * g_f + sup * s_f) / n_rows) / q) * float(w[i])
                lb += ((s * g_f) / q) * float(w[i])
            assert loss[b] == il and bound[b] == lb
            g = np.int64(nodes[b])
            assert _precision_of(g, lattice, terms, sup, float(n_rows)) == il
            assert _mean_share_of(g, lattice, terms) == lb
