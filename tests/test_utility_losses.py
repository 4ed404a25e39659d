"""Privacy and utility losses of records, classes and releases (utility.privacy_utility_losses),
pairing of permuted releases, and the machine-learning utility loss (ml.ml_utility_loss)."""

import math
import sys

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis import ml, utility
from gpuppdp.analysis.checker import check
from gpuppdp.backend import cpu_backend

QIDS = ["zip", "age", "nationality"]
LOSSES = list(utility.LOSS_NAMES)


def inpatient():
    """The inpatient table of Machanavajjhala et al. 2006 and its 4-anonymous release."""
    orig = pd.DataFrame({
        "zip": ["13053", "13068", "13068", "13053", "14853", "14853", "14850", "14850",
                "13053", "13053", "13068", "13068"],
        "age": ["28", "29", "21", "23", "50", "55", "47", "49", "31", "37", "36", "35"],
        "nationality": ["Russian", "American", "Japanese", "American", "Indian", "Russian",
                        "American", "American", "American", "Indian", "Japanese", "American"],
        "condition": ["Heart", "Heart", "Viral", "Viral", "Cancer", "Heart", "Viral", "Viral",
                      "Cancer", "Cancer", "Cancer", "Cancer"]})
    rel = pd.DataFrame({"zip": ["130**"] * 4 + ["1485*"] * 4 + ["130**"] * 4,
                        "age": ["<30"] * 4 + [">=40"] * 4 + ["3*"] * 4,
                        "nationality": ["*"] * 12, "condition": orig["condition"]})
    return orig, rel


# ------------------------------------------------------------------------------ worked example

def test_inpatient_worked_example(backend):
    orig, rel = inpatient()
    res = utility.privacy_utility_losses(orig, rel, QIDS, "condition", backend=backend)
    cls = res.classes
    assert cls[QIDS].values.tolist() == [["130**", "<30", "*"], ["1485*", ">=40", "*"],
                                         ["130**", "3*", "*"]]
    assert cls["size"].tolist() == [4, 4, 4]
    util = cls["distribution_utility_loss"].to_numpy()
    np.testing.assert_allclose(util, [0.7071, 0.7739, 0.0], atol=1e-4)
    assert [round(v, 3) for v in util[:2]] == [0.707, 0.774] and util[2] == 0.0
    assert [round(v, 2) for v in util] == [0.71, 0.77, 0.0]
    assert util[0] == pytest.approx(math.sqrt(0.5), abs=1e-15)
    assert util[1] == pytest.approx((math.sqrt(0.875) + math.sqrt(0.875) + 2 * math.sqrt(0.375))
                                    / 4, abs=1e-15)
    np.testing.assert_allclose(cls["entropy_utility_loss"], [1.0, 1.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(cls["distribution_privacy_loss"], [0.5137, 0.2357, 0.7169],
                               atol=1e-4)
    np.testing.assert_allclose(cls["entropy_privacy_loss"], [0.5546, 0.0546, 1.5546], atol=1e-4)
    # individual: E1 records are point masses at H or V against (1/2, 1/2, 0)
    ind = res.individual
    assert ind["class"].tolist() == [0] * 4 + [1] * 4 + [2] * 4
    np.testing.assert_allclose(ind["distribution_utility_loss"][4:8],
                               np.sqrt([0.875, 0.875, 0.375, 0.375]), atol=1e-15)
    np.testing.assert_allclose(ind["distribution_privacy_loss"][:4], [0.5137] * 4, atol=1e-4)
    assert res.total["distribution_utility_loss"] == pytest.approx(util.mean(), abs=1e-15)
    assert res.total["entropy_utility_loss"] == pytest.approx(2.5 / 3, abs=1e-15)
    assert res.maximum["distribution_privacy_loss"] == pytest.approx(0.7169, abs=1e-4)
    assert res.suppressed_rows == 0 and res.satisfied == {} and res.thresholds == {}


def test_identity_release_loses_no_utility(backend):
    orig, _ = inpatient()
    res = utility.privacy_utility_losses(orig, orig, QIDS, "condition", backend=backend)
    for name in ("distribution_utility_loss", "entropy_utility_loss"):
        assert (res.individual[name] == 0.0).all() and res.total[name] == 0.0
    # classes of repeated QID values: zero, exactly, against the original class
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.integers(0, 2, 200),
                       "s": rng.integers(0, 4, 200)})
    res = utility.privacy_utility_losses(df, df, ["a", "b"], "s", backend=backend,
                                         reference="original-class")
    assert res.maximum["distribution_utility_loss"] == 0.0
    assert res.maximum["entropy_utility_loss"] == 0.0


def test_thresholds():
    orig, rel = inpatient()
    res = utility.privacy_utility_losses(orig, rel, QIDS, "condition", epsilon=0.72, alpha=1.5,
                                         delta_distribution=0.78, gamma_entropy=1.5)
    assert res.satisfied == {"epsilon": True, "alpha": False, "delta_distribution": True,
                             "gamma_entropy": True}
    assert res.thresholds == {"epsilon": 0.72, "alpha": 1.5, "delta_distribution": 0.78,
                              "gamma_entropy": 1.5}
    res = utility.privacy_utility_losses(orig, rel, QIDS, "condition", epsilon=0.7,
                                         delta_distribution=0.77)
    assert res.satisfied == {"epsilon": False, "delta_distribution": False}
    with pytest.raises(ValueError, match="delta_distribution"):
        utility.privacy_utility_losses(orig, rel, QIDS, "condition", delta_distribution=-1)
    # the former keywords: gamma= bounded the distribution, delta= the entropy utility loss
    with pytest.warns(DeprecationWarning, match="delta_distribution"):
        old = utility.privacy_utility_losses(orig, rel, QIDS, "condition", gamma=0.77,
                                             delta=0.5)
    assert old.thresholds == {"delta_distribution": 0.77, "gamma_entropy": 0.5}
    assert old.satisfied["delta_distribution"] is False


def test_prior_and_suppressed_rows():
    orig, rel = inpatient()
    prior = {"Heart": 0.2, "Viral": 0.3, "Cancer": 0.4, "Flu": 0.1}
    res = utility.privacy_utility_losses(orig, rel, QIDS, "condition", prior=prior)
    q = np.array([0.2, 0.3, 0.4, 0.1])
    p = np.array([0.5, 0.5, 0.0, 0.0])
    assert res.classes["distribution_privacy_loss"][0] == pytest.approx(
        np.linalg.norm(p - q), abs=1e-12)
    # a suppressed class is left out of every loss
    rel2 = rel.copy()
    rel2.loc[8:, QIDS] = "*"
    res = utility.privacy_utility_losses(orig, rel2, QIDS, "condition")
    assert res.suppressed_rows == 4 and len(res.classes) == 2
    assert res.individual["class"].tolist()[8:] == [-1] * 4
    assert res.individual["distribution_utility_loss"][8:].isna().all()
    # prior = the 8 released rows: H 3/8, V 4/8, C 1/8
    p = np.array([0.5, 0.5, 0.0])
    q = np.array([3, 4, 1]) / 8
    assert res.classes["distribution_privacy_loss"][0] == pytest.approx(
        np.linalg.norm(p - q), abs=1e-12)


# ------------------------------------------------------------------------- naive reference

def _naive(orig, rel, qids, sens):
    """Loop-based losses per released class (rows paired by position, '*' rows left out)."""
    def dist(values):
        return pd.Series(values).value_counts(normalize=True)

    def entropy(p):
        return float(-(p * np.log2(p)).sum())

    def distance(p, q):
        keys = set(p.index) | set(q.index)
        return math.sqrt(sum((p.get(k, 0.0) - q.get(k, 0.0)) ** 2 for k in keys))

    o_rows = orig[qids + [sens]].values.tolist()
    r_rows = rel[qids + [sens]].values.tolist()
    kept = [i for i, row in enumerate(r_rows) if not all(v == "*" for v in row[:-1])]
    prior = dist([r_rows[i][-1] for i in kept])
    orig_key = [tuple(row[:-1]) for row in o_rows]
    rel_key = {i: tuple(r_rows[i][:-1]) for i in kept}
    out = {}
    for key in dict.fromkeys(rel_key[i] for i in kept):          # first-appearance order
        members = [i for i in kept if rel_key[i] == key]
        p_e = dist([r_rows[i][-1] for i in members])
        du, eu = [], []
        for i in members:
            p_o = dist([o_rows[j][-1] for j in range(len(orig)) if orig_key[j] == orig_key[i]])
            du.append(distance(p_o, p_e))
            eu.append(abs(entropy(p_o) - entropy(p_e)))
        out[key] = {"size": len(members),
                    "distribution_privacy_loss": distance(p_e, prior),
                    "entropy_privacy_loss": abs(entropy(prior) - entropy(p_e)),
                    "distribution_utility_loss": float(np.mean(du)),
                    "entropy_utility_loss": float(np.mean(eu))}
    return out


def _random_case(rng, nested: bool):
    n = int(rng.integers(5, 60))
    orig = pd.DataFrame({"a": rng.integers(0, 6, n).astype(str),
                         "b": rng.integers(0, 3, n).astype(str),
                         "s": rng.choice(["x", "y", "z", "w"], n, p=[0.4, 0.3, 0.2, 0.1])})
    if nested:   # full-domain style: every original class inside one released class
        rel = pd.DataFrame({"a": (orig["a"].astype(int) // 2).astype(str), "b": orig["b"]})
    else:        # local recoding: original classes split over released classes
        rel = pd.DataFrame({"a": rng.integers(0, 2, n).astype(str), "b": orig["b"]})
    rel["s"] = orig["s"]
    star = rng.random(n) < 0.15
    star[0] = False
    rel.loc[star, ["a", "b"]] = "*"
    return orig, rel


@pytest.mark.parametrize("seed", range(6))
def test_against_naive(seed, backend):
    rng = np.random.default_rng(seed)
    orig, rel = _random_case(rng, nested=seed % 2 == 0)
    res = utility.privacy_utility_losses(orig, rel, ["a", "b"], "s", backend=backend,
                                         reference="original-class")
    expected = _naive(orig, rel, ["a", "b"], "s")
    got = res.classes
    assert [tuple(r) for r in got[["a", "b"]].values.tolist()] == list(expected)
    for name in ["size"] + LOSSES:
        np.testing.assert_allclose(got[name].to_numpy(), [v[name] for v in expected.values()],
                                   rtol=0, atol=1e-12, err_msg=name)
    sizes = got["size"].to_numpy()
    for name in LOSSES:
        assert res.total[name] == pytest.approx(
            float((got[name].to_numpy() * sizes).sum() / sizes.sum()), abs=1e-12)
        assert res.maximum[name] == pytest.approx(float(got[name].max()), abs=1e-15)


def test_unpaired_rows_are_refused():
    orig, rel = inpatient()
    with pytest.raises(ValueError, match="not paired"):
        utility.privacy_utility_losses(orig, rel.iloc[::-1].reset_index(drop=True), QIDS,
                                       "condition")
    with pytest.raises(ValueError, match="cannot be paired by position"):
        utility.privacy_utility_losses(orig, rel.iloc[:8], QIDS, "condition")
    with pytest.raises(ValueError, match="quasi-identifier and as the sensitive"):
        utility.privacy_utility_losses(orig, rel, QIDS, "zip")


# ------------------------------------------------------------------- permuted engine releases

ADULT_QIDS = ["age", "sex", "race", "education", "marital-status"]


@pytest.fixture(scope="module")
def adult_slice():
    data, hierarchies = datasets.adult()
    return data.iloc[:3000].reset_index(drop=True), {c: hierarchies[c] for c in ADULT_QIDS}


def _fit(adult_slice, suppression):
    data, hier = adult_slice
    return Anonymizer(quasi_identifiers=hier, insensitive=["occupation"], others="drop", k=5,
                      suppression_limit=0.05, suppressed=suppression, backend="cpu",
                      seed=3).fit(data)


@pytest.fixture(scope="module")
def marked(adult_slice):
    return _fit(adult_slice, "mark")


def _in_input_order(release):
    return release.data.iloc[np.argsort(release.source_rows)].reset_index(drop=True)


def test_permuted_release_is_paired(adult_slice, marked):
    data, _ = adult_slice
    rel = marked.release
    assert sorted(rel.source_rows.tolist()) == list(range(len(data)))
    assert not np.array_equal(rel.source_rows, np.arange(len(data)))       # really permuted
    ordered = _in_input_order(rel)
    for fn in (utility.non_uniform_entropy, utility.kl_divergence):
        want = fn(data, ordered, ADULT_QIDS)
        assert want > 0
        assert fn(data, rel, ADULT_QIDS) == pytest.approx(want, rel=1e-12, abs=0)
    a = utility.privacy_utility_losses(data, rel, ADULT_QIDS, "occupation")
    b = utility.privacy_utility_losses(data, ordered, ADULT_QIDS, "occupation")
    assert a.suppressed_rows == marked.suppressed_records
    assert len(a.classes) == marked.equivalence_classes
    for name in LOSSES:
        assert a.total[name] == pytest.approx(b.total[name], abs=1e-12)
        assert a.maximum[name] == pytest.approx(b.maximum[name], abs=1e-12)
    # the privacy losses are the checker's
    checked = check(ordered, quasi_identifiers=ADULT_QIDS, sensitive="occupation",
                    per_class=True)["per_class"]
    for mine, theirs in (("distribution_privacy_loss", "distribution_loss"),
                         ("entropy_privacy_loss", "entropy_loss")):
        np.testing.assert_allclose(b.classes[mine], checked[theirs], rtol=0, atol=1e-15)
    # the released rows given by position are not paired with the input
    with pytest.raises(ValueError, match="not paired"):
        utility.privacy_utility_losses(data, rel.data, ADULT_QIDS, "occupation")


def test_drop_release_is_paired(adult_slice, marked):
    data, _ = adult_slice
    dropped = _fit(adult_slice, "drop")
    assert dropped.transformation == marked.transformation
    assert len(dropped.released) < len(data)
    a = utility.privacy_utility_losses(data, dropped.release, ADULT_QIDS, "occupation")
    b = utility.privacy_utility_losses(data, marked.release, ADULT_QIDS, "occupation")
    assert a.suppressed_rows == 0
    for name in LOSSES:
        assert a.total[name] == pytest.approx(b.total[name], abs=1e-12)
    with pytest.raises(ValueError, match="'mark' release"):
        utility.non_uniform_entropy(data, dropped.release, ADULT_QIDS)


# ---------------------------------------------------------------------- machine learning

FEATURES = ["age", "sex", "race", "education", "marital-status", "workclass", "native-country",
            "occupation"]
TARGET = "salary-class"


@pytest.fixture(scope="module")
def adult_ml():
    pytest.importorskip("sklearn")
    data, hierarchies = datasets.adult()
    return data.iloc[:3000].reset_index(drop=True), hierarchies


def test_ml_utility_loss_top_of_hierarchies(adult_ml):
    data, hier = adult_ml
    top = data.copy()
    for c in FEATURES:
        top[c] = hier[c].generalize(data[c].to_numpy(), hier[c].height, attribute=c)
    assert (top[FEATURES] == "*").all().all()
    res = ml.ml_utility_loss(data, top, features=FEATURES, target=TARGET)
    majority = data[TARGET].value_counts(normalize=True).max()
    assert res["accuracy_released"] == pytest.approx(majority, abs=1e-12)
    assert res["accuracy_original"] > majority + 0.01
    assert res["relative_loss"] > 0
    assert res["relative_loss"] == pytest.approx(
        (res["accuracy_original"] - res["accuracy_released"]) / res["accuracy_original"])


def test_ml_utility_loss_identity_and_release(adult_ml):
    data, hier = adult_ml
    res = ml.ml_utility_loss(data, data.copy(), features=FEATURES, target=TARGET)
    assert res["relative_loss"] == 0.0
    assert res["accuracy_original"] == res["accuracy_released"]
    # a permuted engine release is put back in input order: same records, same folds
    qids = ["age", "sex", "race", "education"]
    result = Anonymizer(quasi_identifiers={c: hier[c] for c in qids},
                        insensitive=[c for c in FEATURES if c not in qids] + [TARGET],
                        others="drop", k=5, suppression_limit=0.05, backend="cpu",
                        seed=1).fit(data)
    got = ml.ml_utility_loss(data, result.release, features=FEATURES, target=TARGET)
    want = ml.ml_utility_loss(data, _in_input_order(result.release), features=FEATURES,
                                   target=TARGET)
    assert got == want


def test_ml_utility_loss_without_sklearn(monkeypatch):
    orig, rel = inpatient()
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.model_selection", None)
    monkeypatch.setitem(sys.modules, "sklearn.tree", None)
    with pytest.raises(ImportError, match=r'pip install "gpuppdp\[ml\]"'):
        ml.ml_utility_loss(orig, rel, features=QIDS, target="condition")


def test_backends_agree_on_random_release(backend):
    rng = np.random.default_rng(11)
    orig, rel = _random_case(rng, nested=False)
    cpu = utility.privacy_utility_losses(orig, rel, ["a", "b"], "s", backend=cpu_backend())
    got = utility.privacy_utility_losses(orig, rel, ["a", "b"], "s", backend=backend)
    pd.testing.assert_frame_equal(got.classes, cpu.classes, check_exact=False, atol=1e-14)



def test_record_reference_is_the_definition_duplicate_qids_lose(backend):
    """The definition (reference="record"): a class of two records with two values loses
    0.707 and 1 bit even when the original table already had those QIDs twice; the original
    class as reference scores the same release 0."""
    df = pd.DataFrame({"a": ["x", "x", "y", "y", "y"], "s": ["p", "q", "p", "p", "p"]})
    res = utility.privacy_utility_losses(df, df, ["a"], "s", backend=backend)
    np.testing.assert_allclose(res.individual["distribution_utility_loss"],
                               [np.sqrt(0.5)] * 2 + [0.0] * 3)
    np.testing.assert_allclose(res.individual["entropy_utility_loss"], [1.0] * 2 + [0.0] * 3)
    assert res.total["entropy_utility_loss"] == pytest.approx(2 / 5)
    old = utility.privacy_utility_losses(df, df, ["a"], "s", backend=backend,
                                         reference="original-class")
    assert old.maximum["distribution_utility_loss"] == 0.0
    # a three-value class: ||1_s - (1/2, 1/4, 1/4)|| for s the majority and a minority value
    df3 = pd.DataFrame({"a": ["z"] * 4, "s": ["p", "p", "q", "r"]})
    got = utility.privacy_utility_losses(df3, df3, ["a"], "s", backend=backend)
    want_p = np.sqrt(0.5 ** 2 + 0.25 ** 2 + 0.25 ** 2)
    want_q = np.sqrt(0.5 ** 2 + 0.75 ** 2 + 0.25 ** 2)
    np.testing.assert_allclose(got.individual["distribution_utility_loss"],
                               [want_p, want_p, want_q, want_q])
    np.testing.assert_allclose(got.individual["entropy_utility_loss"], [1.5] * 4)


def test_thresholds_on_class_or_total_basis(backend):
    df = pd.DataFrame({"a": ["x", "x", "y", "y", "y", "y"], "s": ["p", "q", "p", "p", "p", "p"]})
    by_class = utility.privacy_utility_losses(df, df, ["a"], "s", backend=backend,
                                              gamma_entropy=0.5)
    by_total = utility.privacy_utility_losses(df, df, ["a"], "s", backend=backend,
                                              gamma_entropy=0.5, basis="total")
    assert by_class.maximum["entropy_utility_loss"] == pytest.approx(1.0)
    assert by_class.total["entropy_utility_loss"] == pytest.approx(2 / 6)
    assert by_class.satisfied == {"gamma_entropy": False}
    assert by_total.satisfied == {"gamma_entropy": True}
    with pytest.raises(ValueError, match="basis must be"):
        utility.privacy_utility_losses(df, df, ["a"], "s", basis="mean")
    with pytest.raises(ValueError, match="reference must be"):
        utility.privacy_utility_losses(df, df, ["a"], "s", reference="class")
