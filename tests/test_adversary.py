"""The adversary's view (gpuppdp.analysis.adversary): posterior beliefs and linkage."""

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis.adversary import (largest_gain, linkage_check, max_posterior,
                                        posterior_beliefs)
from gpuppdp.hierarchy import Hierarchy, UnknownValuesError

QIDS = ["zip", "age", "nationality"]


@pytest.fixture
def inpatient():
    """Machanavajjhala et al.'s inpatient microdata (Fig. 1) and its 4-anonymous release
    (Fig. 2): classes {Heart 2, Viral 2}, {Cancer 1, Heart 1, Viral 2} and {Cancer 4}."""
    original = pd.DataFrame([
        (13053, 28, "Russian", "Heart Disease"), (13068, 29, "American", "Heart Disease"),
        (13068, 21, "Japanese", "Viral Infection"), (13053, 23, "American", "Viral Infection"),
        (14853, 50, "Indian", "Cancer"), (14853, 55, "Russian", "Heart Disease"),
        (14850, 47, "American", "Viral Infection"), (14850, 49, "American", "Viral Infection"),
        (13053, 31, "American", "Cancer"), (13053, 37, "Indian", "Cancer"),
        (13068, 36, "Japanese", "Cancer"), (13068, 35, "American", "Cancer")],
        columns=[*QIDS, "condition"])
    released = pd.DataFrame({"zip": ["130**"] * 4 + ["1485*"] * 4 + ["130**"] * 4,
                             "age": ["<30"] * 4 + [">=40"] * 4 + ["3*"] * 4,
                             "nationality": ["*"] * 12, "condition": original["condition"]})
    # one-level hierarchies whose level 1 is exactly the published generalization
    zips = {"13053": "130**", "13068": "130**", "14853": "1485*", "14850": "1485*"}
    ages = {str(a): ("<30" if a < 30 else "3*" if a < 40 else ">=40")
            for a in original["age"]}
    nats = sorted(set(original["nationality"]))
    hierarchies = {"zip": Hierarchy([list(zips), list(zips.values()), ["*"] * len(zips)]),
                   "age": Hierarchy([list(ages), list(ages.values()), ["*"] * len(ages)]),
                   "nationality": Hierarchy.flat(nats)}
    return original, released, hierarchies


def _beliefs_by(b, *cols):
    return {tuple(r[c] for c in cols): r for _, r in b.iterrows()}


# ------------------------------------------------------------------------ posterior beliefs

def test_posterior_of_the_inpatient_table(inpatient):
    _, released, _ = inpatient
    b = posterior_beliefs(released, QIDS, "condition")
    assert len(b) == 6
    rows = _beliefs_by(b, "age", "condition")
    want = {("<30", "Heart Disease"): (2, 0.5), ("<30", "Viral Infection"): (2, 0.5),
            (">=40", "Cancer"): (1, 0.25), (">=40", "Heart Disease"): (1, 0.25),
            (">=40", "Viral Infection"): (2, 0.5), ("3*", "Cancer"): (4, 1.0)}
    prior = {"Heart Disease": 3 / 12, "Viral Infection": 4 / 12, "Cancer": 5 / 12}
    for key, (count, post) in want.items():
        r = rows[key]
        assert (r["count"], r["class_size"]) == (count, 4)
        assert r["posterior"] == pytest.approx(post)
        assert r["prior"] == pytest.approx(prior[key[1]])
        assert r["gain"] == pytest.approx(post - prior[key[1]])
        assert r["ratio"] == pytest.approx(post / prior[key[1]])
    top = max_posterior(b)
    assert (top["age"], top["condition"], top["posterior"]) == ("3*", "Cancer", 1.0)
    gain = largest_gain(b)
    assert (gain["age"], gain["condition"]) == ("3*", "Cancer")
    assert gain["gain"] == pytest.approx(7 / 12)


def test_a_given_prior_that_does_not_depend_on_q(inpatient):
    _, released, _ = inpatient
    prior = {"Heart Disease": 0.1, "Viral Infection": 0.3, "Cancer": 0.6}
    b = posterior_beliefs(released, QIDS, "condition", prior=prior)
    base = posterior_beliefs(released, QIDS, "condition")
    np.testing.assert_allclose(b["posterior"], base["posterior"])  # beta = n(q*,s)/n(q*)
    np.testing.assert_allclose(b["prior"], b["condition"].map(prior))
    assert largest_gain(b)["gain"] == pytest.approx(0.4)  # Cancer 1 - 0.6 (= Heart 0.5 - 0.1)
    # the same prior as a table of weights f(q,s) = f(q) f(s) gives the same beliefs
    table = pd.DataFrame([(z, a, n, s, p) for z, a, n in released[QIDS].itertuples(index=False)
                          for s, p in prior.items()], columns=[*QIDS, "condition", "weight"])
    t = posterior_beliefs(released, QIDS, "condition", prior=table)
    assert len(t) == 6  # one target per class here
    np.testing.assert_allclose(t.sort_values(["age", "condition"])["posterior"],
                               base.sort_values(["age", "condition"])["posterior"])


def _naive_table_beliefs(released, prior, qids, sensitive, general):
    """beta(q,s,T*) straight from the definition, with loops."""
    rows = []
    targets = prior[qids].drop_duplicates().itertuples(index=False)
    for q in targets:
        qstar = tuple(general[c][str(v)] for c, v in zip(qids, q))
        cls = released[(released[qids].astype(str).apply(tuple, axis=1) == qstar)]
        if cls.empty:
            continue
        mine = prior[(prior[qids].astype(str).apply(tuple, axis=1) == tuple(map(str, q)))]
        in_class = prior[prior[qids].apply(
            lambda r: tuple(general[c][str(v)] for c, v in zip(qids, r)), axis=1) == qstar]
        terms = {}
        for s, n in cls[sensitive].value_counts().items():
            f_q = mine.loc[mine[sensitive] == s, "weight"].sum() / mine["weight"].sum()
            f_qstar = in_class.loc[in_class[sensitive] == s, "weight"].sum() \
                / in_class["weight"].sum()
            terms[s] = n * f_q / f_qstar if f_q > 0 else 0.0
        total = sum(terms.values())
        for s, t in terms.items():
            rows.append((tuple(map(str, q)), s, t / total))
    return rows


def test_a_prior_that_depends_on_q_agrees_with_a_naive_computation(inpatient):
    original, released, hierarchies = inpatient
    rng = np.random.default_rng(3)
    values = sorted(set(original["condition"]))
    people = original[QIDS].drop_duplicates()
    prior = pd.DataFrame([(*q, s) for q in people.itertuples(index=False) for s in values],
                         columns=[*QIDS, "condition"])
    prior["weight"] = rng.integers(0, 5, len(prior)).astype(float) + 0.5 * rng.random(len(prior))
    got = posterior_beliefs(released, QIDS, "condition", prior=prior, hierarchies=hierarchies)
    general = {q: dict(zip(hierarchies[q].leaves, hierarchies[q].labels(1)[
        hierarchies[q].codes(1)])) for q in QIDS}
    want = _naive_table_beliefs(released, prior, QIDS, "condition", general)
    assert len(got) == len(want) == 24  # 12 targets x the 2 or 3 values of their class
    targets = [f"target_{q}" for q in QIDS]
    table = {(tuple(r[targets]), r["condition"]): r["posterior"] for _, r in got.iterrows()}
    for q, s, beta in want:
        assert table[(q, s)] == pytest.approx(beta, rel=1e-12), (q, s)
    sums = got.groupby(targets)["posterior"].sum()
    np.testing.assert_allclose(sums, 1.0)


def test_full_background_knowledge_reveals_unique_people(inpatient):
    """With the original table itself as f(q,s), a target whose q is unique in it is found."""
    original, released, hierarchies = inpatient
    prior = original.assign(weight=1.0)
    b = posterior_beliefs(released, QIDS, "condition", prior=prior, hierarchies=hierarchies)
    truth = _beliefs_by(b, "target_zip", "target_age", "target_nationality", "condition")
    for z, a, n, s in original.itertuples(index=False):
        assert truth[(str(z), str(a), n, s)]["posterior"] == pytest.approx(1.0)
    assert (b["posterior"].isin([0.0, 1.0])).all()


def test_suppressed_rows_are_a_class_of_their_own(inpatient):
    _, released, _ = inpatient
    rel = released.copy()
    rel.loc[[0, 4], QIDS] = "*"
    b = posterior_beliefs(rel, QIDS, "condition")
    star = b[b["zip"] == "*"]
    assert set(star["condition"]) == {"Heart Disease", "Cancer"}
    assert (star["class_size"] == 2).all() and np.allclose(star["posterior"], 0.5)


# ------------------------------------------------------------------------ linkage

def test_linkage_of_the_inpatient_table(inpatient):
    original, released, hierarchies = inpatient
    out = linkage_check(released, original, QIDS, k=4, hierarchies=hierarchies)
    assert out["external_records"] == 12
    np.testing.assert_array_equal(out["candidates"], [4] * 12)
    assert (out["linked_0"], out["linked_1"], out["linked_below_k"]) == (0, 0, 0)
    out = linkage_check(released, original, QIDS, k=5, hierarchies=hierarchies)
    assert out["linked_below_k"] == 12
    # without hierarchies the generalized labels equal no original value
    assert linkage_check(released, original, QIDS)["linked_0"] == 12


def test_linkage_with_suppressed_rows(inpatient):
    original, released, hierarchies = inpatient
    rel = released.copy()
    rel.loc[[4, 5, 6, 7, 8, 9, 10], QIDS] = "*"  # the ">=40" class and 3 of {Cancer 4}
    out = linkage_check(rel, original, QIDS, k=2, hierarchies=hierarchies)
    # suppressed rows are nobody's candidate: the ">=40" people link to no record, the four
    # "3*" people to the one left
    np.testing.assert_array_equal(out["candidates"], [4] * 4 + [0] * 4 + [1] * 4)
    assert (out["linked_0"], out["linked_1"], out["linked_below_k"]) == (4, 4, 4)


def test_linkage_without_hierarchies_compares_strings():
    released = pd.DataFrame({"a": ["1", "1", "2", "3"], "b": ["x", "x", "y", "y"]})
    external = pd.DataFrame({"a": [1, 2, 3, 4, 1], "b": ["x", "y", "x", "y", "x"]})
    out = linkage_check(released, external, ["a", "b"], k=3)
    np.testing.assert_array_equal(out["candidates"], [2, 1, 0, 0, 2])
    assert (out["linked_0"], out["linked_1"], out["linked_below_k"]) == (2, 1, 3)
    empty = linkage_check(released.iloc[:0], external, ["a", "b"])
    assert empty["linked_0"] == 5


def test_linkage_agrees_with_a_naive_checker():
    rng = np.random.default_rng(11)
    ages = [str(a) for a in range(20, 40)]
    h_age = Hierarchy([ages, [f"{a[0]}*" for a in ages], ["*"] * len(ages)])
    h_sex = Hierarchy.flat(["f", "m"])
    original = pd.DataFrame({"age": rng.choice(ages, 80), "sex": rng.choice(["f", "m"], 80)})
    level = {"age": 1, "sex": 0}
    released = pd.DataFrame({"age": h_age.generalize(original["age"], 1),
                             "sex": original["sex"].to_numpy()})
    released.loc[rng.choice(80, 6, replace=False), ["age", "sex"]] = "*"
    external = pd.DataFrame({"age": rng.choice(ages, 50), "sex": rng.choice(["f", "m"], 50)})
    hier = {"age": h_age, "sex": h_sex}
    for k in (1, 2, 5):
        out = linkage_check(released, external, ["age", "sex"], k=k, hierarchies=hier)
        want = []
        for a, s in external.itertuples(index=False):
            g = (h_age.generalize([a], level["age"])[0], s)
            want.append(sum(1 for ra, rs in released.itertuples(index=False) if (ra, rs) == g))
        np.testing.assert_array_equal(out["candidates"], want)
        want = np.array(want)
        assert out["linked_0"] == (want == 0).sum() and out["linked_1"] == (want == 1).sum()
        assert out["linked_below_k"] == ((want >= 1) & (want < k)).sum()


# ------------------------------------------------------------------------ errors

def test_unknown_external_values_are_named(inpatient):
    original, released, hierarchies = inpatient
    ext = original.copy()
    ext.loc[0, "zip"] = 99999
    with pytest.raises(UnknownValuesError, match=r"'zip'.*'99999'"):
        linkage_check(released, ext, QIDS, hierarchies=hierarchies)
    with pytest.raises(ValueError, match="no hierarchy for 'nationality'"):
        linkage_check(released, original, QIDS, hierarchies={"zip": hierarchies["zip"],
                                                             "age": hierarchies["age"]})


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_bad_k(inpatient, k):
    original, released, _ = inpatient
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        linkage_check(released, original, QIDS, k=k)


def test_bad_input_is_rejected(inpatient):
    original, released, hierarchies = inpatient
    with pytest.raises(TypeError, match="released must be a pandas DataFrame"):
        posterior_beliefs(released.to_dict(), QIDS, "condition")
    with pytest.raises(TypeError, match="external must be a pandas DataFrame"):
        linkage_check(released, original.to_numpy(), QIDS)
    with pytest.raises(ValueError, match=r"external: column\(s\) not in the data: 'age'"):
        linkage_check(released, original.drop(columns="age"), QIDS)
    with pytest.raises(ValueError, match=r"released: column\(s\) not in the data: 'disease'"):
        posterior_beliefs(released, QIDS, "disease")
    with pytest.raises(ValueError, match="also a quasi-identifier"):
        posterior_beliefs(released, QIDS, "zip")
    with pytest.raises(ValueError, match="given twice"):
        posterior_beliefs(released, ["zip", "zip"], "condition")
    with pytest.raises(ValueError, match="sum to 1"):
        posterior_beliefs(released, QIDS, "condition", prior={"Cancer": 0.5, "Heart Disease": 0.2,
                                                              "Viral Infection": 0.2})
    with pytest.raises(ValueError, match="without a positive prior.*'Viral Infection'"):
        posterior_beliefs(released, QIDS, "condition", prior={"Cancer": 0.5,
                                                              "Heart Disease": 0.5})
    with pytest.raises(ValueError, match=r"prior: column\(s\) not in the data: 'weight'"):
        posterior_beliefs(released, QIDS, "condition", prior=original, hierarchies=hierarchies)
    with pytest.raises(ValueError, match="weight"):
        posterior_beliefs(released, QIDS, "condition", prior=original.assign(weight=-1.0),
                          hierarchies=hierarchies)
    with pytest.raises(TypeError, match="prior must be"):
        posterior_beliefs(released, QIDS, "condition", prior=[0.2, 0.8])
    with pytest.raises(ValueError, match="empty"):
        posterior_beliefs(released.iloc[:0], QIDS, "condition")


# ------------------------------------------------------------------------ backends

def test_every_backend_gives_the_same_view(inpatient, backend):
    original, released, hierarchies = inpatient
    released = released.copy()
    released.loc[[0, 5], QIDS] = "*"
    cpu = posterior_beliefs(released, QIDS, "condition", backend="cpu")
    got = posterior_beliefs(released, QIDS, "condition", backend=backend)
    pd.testing.assert_frame_equal(got, cpu)
    prior = {"Heart Disease": 0.2, "Viral Infection": 0.3, "Cancer": 0.5}
    pd.testing.assert_frame_equal(
        posterior_beliefs(released, QIDS, "condition", prior, backend=backend),
        posterior_beliefs(released, QIDS, "condition", prior, backend="cpu"))
    link = linkage_check(released, original, QIDS, k=3, hierarchies=hierarchies,
                         levels={"zip": 1, "age": 1, "nationality": 1}, backend=backend)
    want = linkage_check(released, original, QIDS, k=3, hierarchies=hierarchies,
                         levels={"zip": 1, "age": 1, "nationality": 1}, backend="cpu")
    np.testing.assert_array_equal(link.pop("candidates"), want.pop("candidates"))
    assert link == want
