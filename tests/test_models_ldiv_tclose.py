"""Entropy and recursive (c,l) l-diversity, t-closeness (equal, ordered, hierarchical distance).

* the ordered-sum kernel (``gpuppdp/kernels/histograms.py``): its three forms are bit-identical and
  add strictly left to right; the dispatcher gives the same on every backend;
* worked examples from the literature: the entropy of Machanavajjhala et al.'s patient classes
  (exp H = 1.89 and 1.7548: entropy l-diverse exactly up to l = 1.7548) and Li, Li &
  Venkatasubramanian's Salary/Disease table (ordered and hierarchical EMD);
* properties on small random tables: at every lattice node the rows the engine suppresses are
  those of the classes an independent per-class checker (written here, pandas + fractions, and
  a linear program for the hierarchical EMD) rejects;
* flash and exhaustive search agree for every model with and without suppression (a wrong
  monotonicity flag would let Flash prune an optimum away);
* the strict CuPy stand-in (the GPU code path) returns exactly what the CPU returns;
* the command line options and the models' argument checks.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numba
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from gpuppdp import Anonymizer, datasets, kernels
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.backend import cpu_backend
from gpuppdp.cli.main import main
from gpuppdp.core.classes import Classes
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.kernels import histograms
from gpuppdp.models import (DistinctLDiversity, EntropyLDiversity, KAnonymity,
                            RecursiveCLDiversity, TCloseness)
from gpuppdp.models.base import log_table
from gpuppdp.testing import assert_backend_equal

SEEDS = list(range(10))


# ---------------------------------------------------------------------------------------
# the ordered-sum kernel
# ---------------------------------------------------------------------------------------
def _sum_inputs(seed):
    rng = np.random.default_rng(500 + seed)
    lens = rng.integers(0, 40, size=int(rng.integers(1, 60)))
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    # terms like the models' (f ln f, |q - p| - q, ratios of awkward integers): the order of
    # the additions changes the last bits
    values = rng.integers(-97, 98, size=int(ptr[-1])) / 97.0 * rng.choice([1e-3, 1.0, 1e3],
                                                                           size=int(ptr[-1]))
    init = float(rng.choice([0.0, 1.0, 0.1]))
    return values, ptr, init


@pytest.mark.parametrize("abs_prefix", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_ordered_sums_forms_bit_identical(seed, abs_prefix):
    values, ptr, init = _sum_inputs(seed)
    ref = histograms.ordered_sums_reference(values, ptr, init, abs_prefix)
    np.testing.assert_array_equal(histograms.ordered_sums_njit(values, ptr, init, abs_prefix),
                                  ref)
    out = np.full(len(ptr) - 1, np.nan)
    got = histograms.ordered_sums_cuda(values, ptr, init, abs_prefix, out)  # simulator tier
    assert got is out
    np.testing.assert_array_equal(out, ref)
    # empty segments hold init
    empty = np.flatnonzero(np.diff(ptr) == 0)
    assert (ref[empty] == init).all()


@pytest.mark.parametrize("abs_prefix", [False, True])
def test_ordered_sums_on_the_task_pool_bit_identical(abs_prefix, monkeypatch):
    """Many segments, in runs the threads take as tasks (:func:`.groupby.run_tasks`): the
    oracle's sums, with every thread and with one."""
    rng = np.random.default_rng(77)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 12, size=12_000))]).astype(np.int64)
    values = rng.integers(-97, 98, size=int(ptr[-1])) / 97.0
    ref = histograms.ordered_sums_reference(values, ptr, 0.5, abs_prefix)
    tasks, real = [], histograms.run_tasks
    monkeypatch.setattr(histograms, "run_tasks",
                        lambda kernel, n, *args: (tasks.append(n), real(kernel, n, *args)))
    threads = numba.get_num_threads()
    for n_threads in sorted({1, threads}):
        numba.set_num_threads(n_threads)
        try:
            got = histograms.ordered_sums_njit(values, ptr, 0.5, abs_prefix)
        finally:
            numba.set_num_threads(threads)
        np.testing.assert_array_equal(got, ref)
        assert tasks[-1] == (1 if n_threads == 1 else 4 * n_threads)


def test_ordered_sums_are_sequential():
    values = np.full(1001, 0.1)
    ptr = np.array([0, 1001], np.int64)
    sequential = np.add.accumulate(np.concatenate([[1.0], values]))[-1]
    assert np.sum(np.concatenate([[1.0], values])) != sequential  # pairwise differs here
    for form in (histograms.ordered_sums_reference, histograms.ordered_sums_njit):
        assert form(values, ptr, 1.0)[0] == sequential
    # abs_prefix: sum of |running sums|, by hand
    v = np.array([0.5, -1.0, 0.25, 0.25])
    want = ((0.0 + 0.5) + 0.5) + 0.25  # |0.5| + |-0.5| + |-0.25| + |0|
    for form in (histograms.ordered_sums_reference, histograms.ordered_sums_njit):
        assert form(v, np.array([0, 4]), 0.0, True)[0] == want + 0.0


@pytest.mark.parametrize("abs_prefix", [False, True])
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_dispatch_ordered_sums(backend, seed, abs_prefix):
    values, ptr, init = _sum_inputs(seed)
    ref = histograms.ordered_sums_reference(values, ptr, init, abs_prefix)
    got = kernels.ordered_sums(backend, backend.asarray(values), backend.asarray(ptr), init,
                               abs_prefix)
    assert_backend_equal(backend, got, ref)


def test_log_table_is_python_math_log():
    table = log_table(200_000)
    ks = np.concatenate([np.arange(1, 2000), np.random.default_rng(0).integers(1, 200_001, 3000)])
    assert all(table[k] == math.log(int(k)) for k in ks)
    assert table[0] == 0.0


# ---------------------------------------------------------------------------------------
# helpers: encode a table, build Classes from explicit class ids
# ---------------------------------------------------------------------------------------
def encode_table(data, sensitive, backend=None, qids=("g",)):
    backend = backend or cpu_backend()
    hierarchies = {q: Hierarchy.flat(pd.unique(data[q]), name=q) for q in qids}
    others = [c for c in data.columns if c not in qids and c != sensitive]
    schema = Schema(hierarchies, sensitive=[sensitive], insensitive=others)
    return encode(data, schema, backend, sensitive)


def classes_of(enc, class_ids) -> Classes:
    """One node's classes from per-row class ids (0..C-1): sizes and (class, value) entries."""
    be, xp = enc.backend, enc.backend.xp
    class_ids = np.asarray(class_ids, dtype=np.int64)
    sens = be.to_host(enc.sens_codes).astype(np.int64)
    pairs = pd.DataFrame({"c": class_ids, "s": sens}).value_counts(sort=False).reset_index()
    n_classes = int(class_ids.max()) + 1
    size = np.bincount(class_ids, minlength=n_classes)
    distinct = np.bincount(pairs["c"].to_numpy(), minlength=n_classes)
    host_ptr = np.array([0, n_classes], dtype=np.int64)
    dev = be.asarray
    return Classes(xp, dev(size.astype(np.int64)), dev(np.zeros(n_classes, np.int64)),
                   dev(host_ptr), host_ptr, dev(np.zeros((n_classes, 1), np.int32)),
                   dev(distinct.astype(np.int64)), dev(pairs["c"].to_numpy().astype(np.int64)),
                   dev(pairs["s"].to_numpy().astype(np.int32)),
                   dev(pairs["count"].to_numpy().astype(np.int64)))


def fails(model, classes):
    return model.backend.to_host(model.class_fails(classes)).astype(bool)


# ---------------------------------------------------------------------------------------
# worked examples
# ---------------------------------------------------------------------------------------
def patient_table():
    """A 3-anonymous patient table (after Machanavajjhala et al. 2007): one class of three
    records with two heart-disease patients and one viral infection (exp H = 1.8899), one of
    four with three cancer patients and one viral infection (exp H = 1.7548)."""
    rows = [("130**", "heart disease"), ("130**", "heart disease"),
            ("130**", "viral infection"),
            ("148**", "cancer"), ("148**", "viral infection"), ("148**", "cancer"),
            ("148**", "cancer")]
    return pd.DataFrame(rows, columns=["g", "condition"])


def test_entropy_l_diversity_patient_table(backend):
    data = patient_table()
    enc = encode_table(data, "condition", backend)
    classes = classes_of(enc, [0, 0, 0, 1, 1, 1, 1])
    for counts, e in (([2, 1], 1.8899), ([3, 1], 1.7548)):
        p = np.array(counts) / sum(counts)
        assert math.exp(-(p * np.log(p)).sum()) == pytest.approx(e, abs=1e-4)
    verdicts = {l: fails(EntropyLDiversity("condition", l).bind(enc), classes).tolist()
                for l in (1.0, 1.5, 1.75, 1.7547, 1.7548, 1.76, 1.88, 1.89, 2.0)}
    assert verdicts[1.0] == verdicts[1.5] == verdicts[1.75] == verdicts[1.7547] == [False, False]
    assert verdicts[1.7548] == [False, True]   # exp H(3,1) = 1.754765
    assert verdicts[1.76] == verdicts[1.88] == [False, True]
    assert verdicts[1.89] == [True, True]       # exp H(2,1) = 1.88988 < 1.89
    assert verdicts[2.0] == [True, True]        # ceil(2) distinct values, but H < ln 2
    # the whole table is entropy l-diverse exactly for l <= 1.7548
    for l, ok in ((1.75, True), (1.76, False)):
        result_fails = fails(EntropyLDiversity("condition", l).bind(enc), classes)
        assert (not result_fails.any()) is ok


def li_table():
    """Li, Li & Venkatasubramanian (2007), Table 3 with the classes of their 0.167-close
    table: the 9 records, Salary 3k..11k and Disease, grouped as 4767*, 4790*, 4760*."""
    rows = [(1, "4767*", 3, "gastric ulcer"), (2, "4760*", 4, "gastritis"),
            (3, "4767*", 5, "stomach cancer"), (4, "4790*", 6, "gastritis"),
            (5, "4790*", 11, "flu"), (6, "4790*", 8, "bronchitis"),
            (7, "4760*", 7, "bronchitis"), (8, "4767*", 9, "pneumonia"),
            (9, "4760*", 10, "stomach cancer")]
    data = pd.DataFrame(rows, columns=["id", "g", "salary", "disease"])
    data["salary"] = data["salary"].astype(str)
    return data


DISEASES = Hierarchy.from_rows([
    # leaf; level 1; level 2; level 3 (Li et al.'s Figure: respiratory & digestive diseases)
    ["flu", "respiratory infection", "respiratory system", "*"],
    ["pneumonia", "respiratory infection", "respiratory system", "*"],
    ["bronchitis", "respiratory infection", "respiratory system", "*"],
    ["pulmonary edema", "vascular lung diseases", "respiratory system", "*"],
    ["pulmonary embolism", "vascular lung diseases", "respiratory system", "*"],
    ["gastric ulcer", "stomach diseases", "digestive system", "*"],
    ["gastritis", "stomach diseases", "digestive system", "*"],
    ["stomach cancer", "stomach diseases", "digestive system", "*"],
    ["colitis", "colon diseases", "digestive system", "*"],
    ["colon cancer", "colon diseases", "digestive system", "*"],
], name="disease")


def lp_emd(p, q, ground):
    """Earth mover's distance by linear programming (an independent reference)."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    res = linprog(np.asarray(ground, dtype=float).reshape(-1), A_eq=a_eq,
                  b_eq=np.concatenate([p, q]), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def lca_distance(h: Hierarchy, a: str, b: str) -> float:
    ia, ib = (int(np.flatnonzero(h.leaves == v)[0]) for v in (a, b))
    level = next(L for L in range(h.height + 1) if h.codes(L)[ia] == h.codes(L)[ib])
    return level / h.height


def test_t_closeness_li_salary_ordered(backend):
    data = li_table()
    enc = encode_table(data, "salary", backend)
    classes = classes_of(enc, pd.factorize(data["g"])[0])
    model = TCloseness("salary", 0.5, "ordered").bind(enc)
    dist = backend.to_host(model.distances(classes))
    # 4767* {3k,5k,9k}, 4760* {4k,7k,10k}, 4790* {6k,8k,11k}: 0.167, 0.083, 0.167
    np.testing.assert_allclose(dist, [1 / 6, 1 / 12, 1 / 6], rtol=0, atol=1e-12)
    assert dist.max() == pytest.approx(0.1667, abs=1e-3)
    assert not fails(TCloseness("salary", 0.167, "ordered").bind(enc), classes).any()
    assert fails(TCloseness("salary", 0.166, "ordered").bind(enc), classes).tolist() == \
        [True, False, True]
    # in their 3-anonymous Table 3 (records 1-3, 4-6, 7-9) the class {3k, 4k, 5k} is at
    # distance 0.375 and {6k, 8k, 11k} at 0.167
    d3 = backend.to_host(model.distances(classes_of(enc, [0, 0, 0, 1, 1, 1, 2, 2, 2])))
    np.testing.assert_allclose(d3[:2], [0.375, 1 / 6], rtol=0, atol=1e-12)


def test_t_closeness_li_disease_hierarchical(backend):
    """Li et al. print 0.278 for this table; the hierarchical EMD of its classes 4767*,
    4760* and 4790* is 7/27, 5/27 and 8/27 (max 0.2963) -- confirmed below by a linear
    program over their disease hierarchy.  By hand, the cheapest flow for 4790* {gastritis,
    flu, bronchitis} moves 1/9 within stomach diseases and 1/9 within respiratory infections
    (cost 1/3 each) and 2/9 across the root (cost 1): 8/27."""
    data = li_table()
    enc = encode_table(data, "disease", backend)
    class_ids = pd.factorize(data["g"])[0]
    classes = classes_of(enc, class_ids)
    model = TCloseness("disease", 0.5, "hierarchical", hierarchy=DISEASES).bind(enc)
    dist = backend.to_host(model.distances(classes))
    labels = list(enc.sensitive_column("disease").labels)
    q = data["disease"].value_counts().reindex(labels).to_numpy() / len(data)
    ground = [[lca_distance(DISEASES, a, b) for b in labels] for a in labels]
    for c in range(3):
        part = data["disease"][class_ids == c]
        p = part.value_counts().reindex(labels, fill_value=0).to_numpy() / len(part)
        assert dist[c] == pytest.approx(lp_emd(p, q, ground), abs=1e-9)
    # classes in order of first appearance: 4767*, 4760*, 4790*
    np.testing.assert_allclose(dist, [7 / 27, 5 / 27, 8 / 27], rtol=0, atol=1e-12)
    assert dist.max() == pytest.approx(0.2963, abs=1e-3)
    assert not fails(TCloseness("disease", 0.2963, "hierarchical", hierarchy=DISEASES)
                     .bind(enc), classes).any()
    assert fails(TCloseness("disease", 0.278, "hierarchical", hierarchy=DISEASES).bind(enc),
                 classes).tolist() == [False, False, True]
    # equal distance on the same classes: half the L1 distance
    eq = backend.to_host(TCloseness("disease", 0.5, "equal").bind(enc).distances(classes))
    for c in range(3):
        part = data["disease"][class_ids == c]
        p = part.value_counts().reindex(labels, fill_value=0).to_numpy() / len(part)
        assert eq[c] == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-12)


# ---------------------------------------------------------------------------------------
# random tables and an independent per-class checker
# ---------------------------------------------------------------------------------------
SENS_VALUES = ["40", "7", "12", "100", "3", "55"]      # numeric labels, not in numeric order
SENS_TREE = {"40": ("A", "AB"), "7": ("A", "AB"), "12": ("B", "AB"), "100": ("C", "CD"),
             "3": ("C", "CD"), "55": ("D", "CD"), "999": ("D", "CD")}  # 999: not in the data


def sens_hierarchy():
    return Hierarchy.from_rows([[v, a, b, "*"] for v, (a, b) in SENS_TREE.items()],
                               name="s-tree")


def random_table(seed):
    rng = np.random.default_rng(7000 + seed)
    n = int(rng.integers(15, 70))
    cols, levels = {}, {}
    for j in range(int(rng.integers(1, 3)) + 1):
        n_leaves = int(rng.integers(2, 6))
        leaves = [f"v{i}" for i in range(n_leaves)]
        groups = rng.integers(0, max(1, n_leaves - 1), size=n_leaves)
        levels[f"q{j}"] = [leaves, [f"g{g}" for g in groups], ["*"] * n_leaves]
        weights = rng.integers(1, 6, size=n_leaves)
        cols[f"q{j}"] = rng.choice(leaves, size=n, p=weights / weights.sum())
    n_sens = int(rng.integers(2, len(SENS_VALUES) + 1))
    w = rng.integers(1, 5, size=n_sens)
    cols["s"] = rng.choice(SENS_VALUES[:n_sens], size=n, p=w / w.sum())
    return pd.DataFrame(cols), levels


def hierarchies_of(levels):
    return {q: Hierarchy(lv, name=q) for q, lv in levels.items()}


def generalize(data, levels, node):
    return pd.DataFrame({q: data[q].map(dict(zip(lv[0], lv[L])))
                         for (q, lv), L in zip(levels.items(), node)})


def naive_class_fails(kind, params, sens: pd.Series, labels, q_counts, n_rows):
    """Does one class (its sensitive values ``sens``) fail the model?  Returns (fails,
    margin): margin = |statistic - threshold|, tiny margins are left out of the comparison."""
    n = len(sens)
    counts = sens.value_counts()
    f_by_code = [int(counts.get(v, 0)) for v in labels]     # ascending code = first appearance
    present = [f for f in f_by_code if f > 0]
    d = len(present)
    if kind == "entropy":
        (l,) = params
        if d < math.ceil(l):
            return True, math.inf
        entropy = -sum(f / n * math.log(f / n) for f in present)
        # ARX's operations (bit-exact with the engine), and the plain definition H >= ln l
        s = 0.0
        for f in f_by_code:
            if f:
                s += f * math.log(f)
        arx_fails = n * (math.log(n) - math.log(l)) < s
        return arx_fails, abs(entropy - math.log(l))
    if kind == "recursive":
        c, l = params
        if d < l:
            return True, math.inf
        r = sorted(present)
        low = sum(r[:d - l + 1])
        return not (r[-1] < c * low), abs(r[-1] - c * low)
    (t,) = params[:1]
    q = [Fraction(int(qc), n_rows) for qc in q_counts]
    p = [Fraction(f, n) for f in f_by_code]
    if kind == "equal":
        dist = sum(abs(a - b) for a, b in zip(p, q)) / 2
    elif kind == "ordered":
        order = np.argsort([float(v) for v in labels], kind="stable")
        run, dist = Fraction(0), Fraction(0)
        for i in order:
            run += p[i] - q[i]
            dist += abs(run)
        dist /= max(len(labels) - 1, 1)
    else:
        h = sens_hierarchy()
        ground = [[lca_distance(h, a, b) for b in labels] for a in labels]
        dist = Fraction(lp_emd(np.array(p, float), np.array(q, float), ground))
    return dist > Fraction(t), abs(float(dist) - t)


MODEL_KINDS = {
    "entropy": lambda rng: ("entropy", (float(rng.choice([1.2, 1.5, 2.0, 2.5])),)),
    "recursive": lambda rng: ("recursive", (float(rng.choice([0.5, 1.0, 2.0, 3.0])),
                                            int(rng.integers(1, 4)))),
    "equal": lambda rng: ("equal", (float(rng.choice([0.1, 0.2, 0.3, 0.45])),)),
    "ordered": lambda rng: ("ordered", (float(rng.choice([0.05, 0.1, 0.2, 0.3])),)),
    "hierarchical": lambda rng: ("hierarchical", (float(rng.choice([0.1, 0.2, 0.3])),)),
}


def make_model(kind, params):
    if kind == "entropy":
        return EntropyLDiversity("s", params[0])
    if kind == "recursive":
        return RecursiveCLDiversity("s", params[0], params[1])
    return TCloseness("s", params[0], kind,
                      hierarchy=sens_hierarchy() if kind == "hierarchical" else None)


@pytest.mark.parametrize("kind", list(MODEL_KINDS))
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_row_verdicts_equal_naive_checker(kind, seed):
    """At every node, the engine suppresses exactly the rows of the classes that fail."""
    data, levels = random_table(seed)
    rng = np.random.default_rng(seed)
    kind, params = MODEL_KINDS[kind](rng)
    with_k = bool(rng.integers(0, 2))
    model = make_model(kind, params)
    models = ([KAnonymity(2)] if with_k else []) + [model]
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    for m in models:
        m.bind(enc)
    evaluator = Evaluator(enc, models, make_metric("loss"), 0.0)
    labels = list(enc.sensitive_column("s").labels)
    q_counts = data["s"].value_counts().reindex(labels).to_numpy()
    min_size = max([m.min_class_size for m in models if m.min_class_size] or [0])
    lattice = Lattice(enc.heights)
    checked = 0
    for node in lattice.levels_of(np.arange(lattice.size)):
        gen = generalize(data, levels, node)
        groups = gen.groupby(list(levels), sort=False).ngroup().to_numpy()
        want = np.zeros(len(data), dtype=bool)
        skip = np.zeros(len(data), dtype=bool)
        for g in np.unique(groups):
            rows = groups == g
            bad, margin = naive_class_fails(kind, params, data["s"][rows], labels, q_counts,
                                            len(data))
            want[rows] = bad or rows.sum() < min_size
            skip[rows] = margin < 1e-9 and not rows.sum() < min_size
        got, _ = evaluator.row_outliers(node)
        got = cpu_backend().to_host(got)
        np.testing.assert_array_equal(got[~skip], want[~skip], err_msg=f"{kind} {params} "
                                      f"node {node.tolist()}")
        checked += int((~skip).sum())
    assert checked > 0


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_entropy_equals_arx_operations_bit_for_bit(seed):
    """Even at the threshold: a class whose entropy is exactly ln l in exact arithmetic
    (uniform over l values) passes or fails as ARX's double operations say."""
    rng = np.random.default_rng(seed)
    l = int(rng.integers(2, 5))   # noqa: E741
    per = int(rng.integers(1, 6))
    values = SENS_VALUES[:l]
    data = pd.DataFrame({"g": ["x"] * (l * per), "s": [v for v in values for _ in range(per)]})
    enc = encode_table(data, "s")
    verdict = fails(EntropyLDiversity("s", l).bind(enc), classes_of(enc, [0] * len(data)))[0]
    n = l * per
    s = 0.0
    for _ in range(l):
        s += per * math.log(per)
    assert verdict == (n * (math.log(n) - math.log(l)) < s)


# ---------------------------------------------------------------------------------------
# flash == exhaustive (sound monotonicity flags), with and without suppression
# ---------------------------------------------------------------------------------------
def same_optimum(fit, context) -> bool:
    """Flash and exhaustive search agree: neither finds a solution, or both find one of the
    same loss and height.  ``fit(search)`` returns a result or ``None``; True when solved."""
    flash, exhaustive = fit("flash"), fit("exhaustive")
    assert (flash is None) == (exhaustive is None), context
    if flash is None:
        return False
    assert flash.information_loss == exhaustive.information_loss, context
    assert flash.node["height"] == exhaustive.node["height"], context
    assert flash.node["anonymous"], context
    return True


def _fit(data, levels, models, limit, metric, search):
    try:
        return Anonymizer(quasi_identifiers=hierarchies_of(levels), sensitive=["s"],
                          models=models, suppression_limit=limit, metric=metric,
                          search=search, backend="cpu", seed=0).fit(data)
    except NoSolutionError:
        return None


@pytest.mark.parametrize("limit", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("kind", list(MODEL_KINDS))
def test_flash_equals_exhaustive(kind, limit):
    agreed = solved = 0
    for seed in SEEDS[:5]:
        data, levels = random_table(100 + seed)
        rng = np.random.default_rng(seed)
        for metric, with_k in itertools.product(("loss", "precision", "discernibility"),
                                                (False, True)):
            kind_, params = MODEL_KINDS[kind](rng)

            def models():
                return ([KAnonymity(2)] if with_k else []) + [make_model(kind_, params)]

            agreed += 1
            solved += same_optimum(
                lambda search: _fit(data, levels, models(), limit, metric, search),
                (seed, metric, with_k, params))
    assert solved >= agreed // 3


# A chain lattice (one QID: a, b, c -> ab, c -> *) where the model is not monotonic with
# suppression: at the bottom class b fails and is suppressed within the limit, at level 1 the
# merged class ab fails and is too big to suppress, at the top everything passes.  A search
# that took the model for monotonic with suppression would tag the bottom not anonymous from
# level 1 and miss it (Flash's binary phase checks the middle of the chain first).
CHAIN = [["a", "b", "c"], ["ab", "ab", "c"], ["*", "*", "*"]]


def chain_case(kind):
    if kind in ("entropy", "recursive"):
        # a: {x, y} passes; b: {x, x, x} fails (one value); ab: {x x x x y} fails
        # c: {y, z, w, v} passes; the whole table passes
        rows = [("a", "x"), ("a", "y"), ("b", "x"), ("b", "x"), ("b", "x"),
                ("c", "y"), ("c", "z"), ("c", "w"), ("c", "v")]
        model = (EntropyLDiversity("s", 1.9) if kind == "entropy"
                 else RecursiveCLDiversity("s", 2, 2))
        limit = 0.34                                   # floor(0.34 * 9) = 3 records
    else:
        # global x share 27/56; a: 3/4 x (distance 0.27), b: all x (0.52), ab: 7/8 x (0.39),
        # c: 20/48 x (0.07); t = 0.3; two values, so all three distances coincide
        rows = ([("a", "1")] * 3 + [("a", "2")] + [("b", "1")] * 4 + [("c", "1")] * 20
                + [("c", "2")] * 28)
        model = TCloseness("s", 0.3, kind, hierarchy=Hierarchy.from_rows(
            [["1", "*"], ["2", "*"]]) if kind == "hierarchical" else None)
        limit = 0.1                                    # floor(0.1 * 56) = 5 records
    return pd.DataFrame(rows, columns=["q", "s"]), model, limit


@pytest.mark.parametrize("kind", list(MODEL_KINDS))
def test_not_monotonic_with_suppression(kind):
    data, model, limit = chain_case(kind)
    enc = encode(data, Schema({"q": Hierarchy(CHAIN, name="q")}, sensitive=["s"]),
                 cpu_backend(), "s")
    evaluator = Evaluator(enc, [model.bind(enc)], make_metric("loss"), limit)
    stats, _ = evaluator.evaluate(np.array([[0], [1], [2]]), evaluator.bottom,
                                  np.zeros(3, dtype=np.int64))
    assert stats.anonymous.tolist() == [True, False, True]
    assert not model.monotonic_with_suppression
    for search in ("flash", "exhaustive"):
        result = Anonymizer(quasi_identifiers={"q": Hierarchy(CHAIN, name="q")},
                            sensitive=["s"], models=[chain_case(kind)[1]],
                            suppression_limit=limit, search=search, backend="cpu").fit(data)
        assert result.transformation == {"q": 0}, search


@pytest.mark.parametrize("kind", list(MODEL_KINDS))
@pytest.mark.parametrize("seed", SEEDS[:6])
def test_monotonic_with_generalization(kind, seed):
    """Without suppression, anonymity is inherited by every generalization (the flag Flash
    relies on with a limit of 0): checked on every edge of the lattice."""
    data, levels = random_table(200 + seed)
    kind, params = MODEL_KINDS[kind](np.random.default_rng(seed))
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    evaluator = Evaluator(enc, [make_model(kind, params).bind(enc)], make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    all_levels = lattice.levels_of(np.arange(lattice.size))
    stats, _ = evaluator.evaluate(all_levels, evaluator.bottom,
                                  np.zeros(lattice.size, dtype=np.int64))
    for node, levels_ in enumerate(all_levels):
        for j in range(len(levels_)):
            if levels_[j] < enc.heights[j] and stats.anonymous[node]:
                up = levels_.copy()
                up[j] += 1
                assert stats.anonymous[lattice.node_id(up)], (params, levels_, j)


def test_monotonicity_flags_and_minimal_sizes():
    assert EntropyLDiversity("s", 2.5).min_class_size == 3
    assert RecursiveCLDiversity("s", 3, 2).min_class_size == 2
    assert TCloseness("s", 0.2).min_class_size is None
    for m in (EntropyLDiversity("s", 2), RecursiveCLDiversity("s", 3, 2),
              TCloseness("s", 0.2), TCloseness("s", 0.2, "ordered"),
              TCloseness("s", 0.2, "hierarchical", hierarchy=sens_hierarchy())):
        assert m.monotonic_with_generalization and not m.monotonic_with_suppression
    assert KAnonymity(2).monotonic_with_suppression
    assert DistinctLDiversity("s", 2).monotonic_with_suppression


# ---------------------------------------------------------------------------------------
# the GPU code path (strict CuPy stand-in) == the CPU
# ---------------------------------------------------------------------------------------
QIDS4 = ["sex", "age", "race", "education"]


@pytest.fixture(scope="module")
def adult200():
    data, hierarchies = datasets.adult()
    return data.iloc[:200].reset_index(drop=True), hierarchies


@pytest.mark.parametrize("model_name,search,limit", [
    ("entropy", "flash", 0.05), ("recursive", "exhaustive", 0.05), ("equal", "flash", 0.0),
    ("ordered-age", "flash", 0.05), ("hierarchical", "exhaustive", 0.1)])
def test_backend_end_to_end_equals_cpu(backend, adult200, model_name, search, limit):
    data, hierarchies = adult200
    sens = "age" if model_name == "ordered-age" else "occupation"
    qids = [q for q in QIDS4 if q != sens] + (["marital-status"] if sens == "age" else [])

    def models():
        return {"entropy": lambda: [EntropyLDiversity(sens, 1.8)],
                "recursive": lambda: [KAnonymity(2), RecursiveCLDiversity(sens, 3, 2)],
                "equal": lambda: [TCloseness(sens, 0.4)],
                "ordered-age": lambda: [TCloseness(sens, 0.15, "ordered")],
                "hierarchical": lambda: [TCloseness(
                    sens, 0.3, "hierarchical",
                    hierarchy=datasets.adult_path("adult_hierarchy_occupation.csv"))],
                }[model_name]()

    def fit(be):
        return Anonymizer(quasi_identifiers={c: hierarchies[c] for c in qids},
                          sensitive=[sens], others="insensitive", models=models(),
                          suppression_limit=limit, metric="loss", search=search, backend=be,
                          seed=3).fit(data)

    cpu, other = fit("cpu"), fit(backend)
    assert other.summary()["backend"] == backend.name
    assert other.transformation == cpu.transformation
    assert other.information_loss == cpu.information_loss
    assert other.node == cpu.node
    assert other.nodes_evaluated == cpu.nodes_evaluated
    pd.testing.assert_frame_equal(other.released, cpu.released)


@pytest.mark.parametrize("kind", list(MODEL_KINDS))
def test_class_verdicts_equal_on_every_backend(backend, kind):
    data, levels = random_table(3)
    rng = np.random.default_rng(11)
    kind, params = MODEL_KINDS[kind](rng)
    class_ids = pd.factorize(data["q0"])[0]
    out = {}
    for be in (cpu_backend(), backend):
        enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), be, "s")
        model = make_model(kind, params).bind(enc)
        verdict = model.class_fails(classes_of(enc, class_ids))
        assert isinstance(verdict, be.xp.ndarray)
        out[be.name] = be.to_host(verdict)
        if kind in ("equal", "ordered", "hierarchical"):
            out[be.name + "-d"] = be.to_host(model.distances(classes_of(enc, class_ids)))
    np.testing.assert_array_equal(out["numpy"], out[backend.name])
    if kind in ("equal", "ordered", "hierarchical"):
        np.testing.assert_array_equal(out["numpy-d"], out[backend.name + "-d"])


def test_hierarchical_chunks_and_integer_path(monkeypatch):
    """Many classes are evaluated in chunks of dense matrices: same distances."""
    import gpuppdp.models.tcloseness as models_module

    data, levels = random_table(5)
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    class_ids = np.arange(len(data)) % 7
    classes = classes_of(enc, class_ids)
    ordered = TCloseness("s", 0.2, "ordered").bind(enc)
    hier = TCloseness("s", 0.2, "hierarchical", hierarchy=sens_hierarchy()).bind(enc)
    whole = ordered.distances(classes), hier.distances(classes)
    monkeypatch.setattr(models_module, "_DENSE_CELLS", 8)
    chunked = ordered.distances(classes_of(enc, class_ids)), \
        hier.distances(classes_of(enc, class_ids))
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------
# errors and descriptions
# ---------------------------------------------------------------------------------------
def test_argument_checks():
    with pytest.raises(ValueError, match="l must be a finite number >= 1"):
        EntropyLDiversity("s", 0.5)
    with pytest.raises(ValueError, match="l must be a finite number"):
        EntropyLDiversity("s", float("nan"))
    with pytest.raises(ValueError, match="c must be a finite number > 0"):
        RecursiveCLDiversity("s", 0, 2)
    with pytest.raises(ValueError, match="l must be an integer >= 1"):
        RecursiveCLDiversity("s", 2, 1.5)
    with pytest.raises(ValueError, match=r"t must be a finite number in \[0, 1\]"):
        TCloseness("s", 1.5)
    with pytest.raises(ValueError, match="distance must be one of"):
        TCloseness("s", 0.2, "manhattan")
    with pytest.raises(ValueError, match="needs the sensitive attribute's hierarchy"):
        TCloseness("s", 0.2, "hierarchical")
    with pytest.raises(ValueError, match="hierarchy is only used with distance='hierarchical'"):
        TCloseness("s", 0.2, "equal", hierarchy=sens_hierarchy())
    with pytest.raises(ValueError, match="attribute must be a column name"):
        TCloseness("", 0.2)


def test_bind_errors():
    data = li_table()
    enc = encode_table(data, "disease")
    classes = classes_of(enc, pd.factorize(data["g"])[0])
    with pytest.raises(RuntimeError, match="not bound to a table"):
        TCloseness("disease", 0.2).class_fails(classes)
    with pytest.raises(ValueError, match="refers to sensitive attribute 'salary'"):
        TCloseness("salary", 0.2).bind(enc)
    with pytest.raises(ValueError, match="orders 'disease' numerically.*'gastric ulcer'"):
        TCloseness("disease", 0.2, "ordered").bind(enc)
    ok = TCloseness("disease", 0.2, "ordered",
                    order=["flu", "pneumonia", "bronchitis", "gastric ulcer", "gastritis",
                           "stomach cancer"]).bind(enc)
    assert ok.distances(classes).shape == (3,)
    with pytest.raises(ValueError, match="not in order: 'stomach cancer'"):
        TCloseness("disease", 0.2, "ordered", order=["flu", "pneumonia", "bronchitis",
                                                     "gastric ulcer", "gastritis"]).bind(enc)
    small = Hierarchy.from_rows([["flu", "x"], ["pneumonia", "x"]], name="small")
    with pytest.raises(ValueError, match="value.*not in its hierarchy"):
        TCloseness("disease", 0.2, "hierarchical", hierarchy=small).bind(enc)


def test_fit_binds_copies_and_apply_uses_the_new_table():
    data = li_table()
    model = TCloseness("disease", 0.29, "hierarchical", hierarchy=DISEASES)
    anonymizer = Anonymizer(quasi_identifiers={"g": Hierarchy.flat(pd.unique(data["g"]))},
                            sensitive=["disease"], insensitive=["id", "salary"],
                            models=[model], suppression_limit=0.4, backend="cpu", seed=0)
    result = anonymizer.fit(data)
    assert result.transformation == {"g": 0}
    suppressed = result.released[result.released["g"] == "*"]
    assert sorted(suppressed["id"]) == [4, 5, 6]     # 4790*: 8/27 > 0.29
    bound = result._evaluator.models[0]
    assert bound is not model and bound._encoded is result._evaluator.encoded
    # the same classes against a table where 4790* is most of the data: now 4767* is far
    # from the global distribution (11/27) and 4790* close to it (4/27)
    other = pd.concat([data] + [data[data["g"] == "4790*"]] * 3, ignore_index=True)
    released = result.apply(other, seed=0)
    assert sorted(released.loc[released["g"] == "*", "id"]) == [1, 3, 8]
    assert bound._encoded is result._evaluator.encoded   # the fit's binding is untouched


def test_describe():
    assert EntropyLDiversity("occupation", 3).describe() == {
        "model": "entropy-l-diversity", "attribute": "occupation", "l": 3, "log": "shannon"}
    assert RecursiveCLDiversity("occupation", 4, 3).describe() == {
        "model": "recursive-cl-diversity", "attribute": "occupation", "c": 4, "l": 3}
    assert TCloseness("occupation", 0.2).describe() == {
        "model": "t-closeness", "distance": "equal", "attribute": "occupation", "t": 0.2}
    h = TCloseness("occupation", 0.2, "hierarchical",
                   hierarchy=datasets.adult_path("adult_hierarchy_occupation.csv"))
    assert h.describe()["hierarchy"] == "adult_hierarchy_occupation.csv"


# ---------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------
CLI_QIDS = ["sex", "age", "race", "education"]


@pytest.fixture(scope="module")
def cli_table(tmp_path_factory):
    data, _ = datasets.adult()
    part = data.loc[:399, CLI_QIDS + ["occupation"]]
    path = tmp_path_factory.mktemp("cli") / "in.csv"
    part.to_csv(path, sep=";", index=False)
    return path


def run_cli(capsys, tmp_path, path, *extra):
    qi = [a for c in CLI_QIDS
          for a in ("--qi", f"{c}={datasets.adult_path(f'adult_hierarchy_{c}.csv')}")]
    summary = tmp_path / "s.json"
    rc = main(["anonymize", str(path), *qi, "--k", "2", "--suppression", "10%", "--quiet",
               "--seed", "1", "--output", str(tmp_path / "out.csv"), "--json", str(summary),
               *extra])
    captured = capsys.readouterr()
    return rc, captured, (json.loads(summary.read_text()) if rc == 0 else None)


def test_cli_models(capsys, tmp_path, cli_table):
    occupation = datasets.adult_path("adult_hierarchy_occupation.csv")
    rc, captured, summary = run_cli(
        capsys, tmp_path, cli_table, "--sensitive", f"occupation={occupation}",
        "--l-diversity", "entropy:1.5", "--l-diversity", "recursive:4,2",
        "--l-diversity", "distinct:2", "--t-closeness", "equal:0.5",
        "--t-closeness", "hierarchical:0.5")
    assert rc == 0, captured.err
    assert summary["models"] == [
        {"model": "k-anonymity", "k": 2},
        {"model": "entropy-l-diversity", "attribute": "occupation", "l": 1.5, "log": "shannon"},
        {"model": "recursive-cl-diversity", "attribute": "occupation", "c": 4, "l": 2},
        {"model": "distinct-l-diversity", "attribute": "occupation", "l": 2},
        {"model": "t-closeness", "distance": "equal", "attribute": "occupation", "t": 0.5},
        {"model": "t-closeness", "distance": "hierarchical", "attribute": "occupation",
         "t": 0.5, "hierarchy": "adult_hierarchy_occupation.csv"}]
    out = pd.read_csv(tmp_path / "out.csv", sep=";", dtype=str, keep_default_na=False)
    kept = out[~(out[CLI_QIDS] == "*").all(axis=1)]
    assert kept.groupby(CLI_QIDS)["occupation"].nunique().min() >= 2


@pytest.mark.parametrize("extra,fragment", [
    (["--t-closeness", "equal:0.2"], "--t-closeness needs --sensitive COLUMN"),
    (["--sensitive", "occupation", "--t-closeness", "hierarchical:0.2"],
     "--t-closeness hierarchical:T needs the hierarchy of 'occupation': --sensitive "
     "occupation=HIERARCHY.csv"),
    (["--sensitive", "occupation", "--t-closeness", "equal:2"], "t must be a finite number"),
    (["--sensitive", "occupation", "--l-diversity", "entropy:0.5"], "l must be a finite"),
])
def test_cli_model_errors(capsys, tmp_path, cli_table, extra, fragment):
    rc, captured, _ = run_cli(capsys, tmp_path, cli_table, *extra)
    assert rc == 2
    assert "Traceback" not in captured.err
    assert captured.err.startswith("gpuppdp: error: ") and fragment in captured.err


@pytest.mark.parametrize("argv_tail,fragment", [
    (["--t-closeness", "emd:0.2"], "--t-closeness expects equal:T, ordered:T or hierarchical:T"),
    (["--t-closeness", "equal"], "--t-closeness expects"),
    (["--l-diversity", "recursive:3"], "--l-diversity expects distinct:L, entropy:L or "
                                       "recursive:C,L"),
    (["--l-diversity", "entropy:x"], "--l-diversity expects"),
    (["--sensitive", "occupation="], "--sensitive expects COLUMN or COLUMN=HIERARCHY.csv"),
])
def test_cli_parse_errors(capsys, tmp_path, argv_tail, fragment):
    with pytest.raises(SystemExit) as info:
        main(["anonymize", "in.csv", "--qi", "age=h.csv", "--k", "2", "--output",
              str(tmp_path / "o.csv"), *argv_tail])
    assert info.value.code == 2
    assert fragment in capsys.readouterr().err
