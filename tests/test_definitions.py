"""The literature's definitions (issue 14, item 4), on hand-computed tables: Xiao & Tao's ILoss
(the default) against the ARX-normalized one, Fung, Wang & Yu's per-value InfoGain(v) and
Score(v), and precision / recall / F1 with a tolerance for the classification utility."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis import ml, utility
from gpuppdp.hierarchy import Hierarchy

AGE = Hierarchy([["20", "21", "30", "31"], ["2*", "2*", "3*", "3*"], ["*"] * 4], name="age")
SEX = Hierarchy([["M", "F"], ["*", "*"]], name="sex")
HIER = {"age": AGE, "sex": SEX}


# ------------------------------------------------------------------------------------ ILoss

def _iloss_table():
    orig = pd.DataFrame({"age": ["20", "21", "30", "31"], "sex": ["M", "F", "M", "F"]})
    rel = pd.DataFrame({"age": ["2*", "2*", "3*", "*"], "sex": ["M", "F", "M", "*"]})
    return orig, rel


def test_iloss_xiao_tao_by_hand(backend):
    orig, rel = _iloss_table()
    # Xiao & Tao: ILoss(v) = (|leaves(v)| - 1) / |D|: '2*', '3*' -> 1/4, age '*' -> 3/4,
    # sex leaves -> 0, sex '*' -> 1/2; summed over the cells, weights 1
    want = 3 * 0.25 + 0.75 + 0.5
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], backend=backend) == \
        pytest.approx(want, abs=1e-15)
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], definition="xiao-tao",
                         backend=backend) == pytest.approx(want, abs=1e-15)
    # weights multiply each attribute's sum
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], {"age": 2.0, "sex": 0.5},
                         backend=backend) == pytest.approx(2 * 1.5 + 0.5 * 0.5, abs=1e-15)
    # the ARX-normalized option: (|leaves| - 1)/(|D| - 1), averaged, weights 1/q
    arx = (0.5 * (3 / 3 + 1) + 0.5 * 1) / 4
    assert utility.iloss(orig, rel, HIER, ["age", "sex"], definition="arx",
                         backend=backend) == pytest.approx(arx, abs=1e-15)


def test_iloss_dropped_records_count_as_suppressed(backend):
    orig, rel = _iloss_table()
    kept = rel.iloc[:3]
    assert utility.iloss(orig, kept, HIER, ["age", "sex"], levels={"age": 1, "sex": 0},
                         backend=backend) == pytest.approx(3 * 0.25 + 0.75 + 0.5, abs=1e-15)


def test_iloss_nothing_generalized_and_one_leaf_domain():
    orig = pd.DataFrame({"age": ["20", "31"], "c": ["x", "x"]})
    one = Hierarchy([["x"], ["*"]], name="c")
    hier = {"age": AGE, "c": one}
    assert utility.iloss(orig, orig, hier, ["age", "c"], levels={"age": 0, "c": 0}) == 0.0
    # a one-leaf domain loses (1 - 1)/1 = 0 even suppressed
    rel = orig.assign(c="*")
    assert utility.iloss(orig, rel, hier, ["age", "c"], levels={"age": 0, "c": 1}) == 0.0


@pytest.mark.parametrize("seed", range(10))
def test_iloss_definitions_related(seed):
    """One QID, default weights: xiao-tao = arx * N * (|D| - 1) / |D|."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    orig = pd.DataFrame({"age": rng.choice(AGE.leaves.tolist(), n)})
    level = int(rng.integers(0, 3))
    rel = orig.assign(age=AGE.generalize(orig["age"], level))
    xt = utility.iloss(orig, rel, HIER, ["age"], levels={"age": level})
    arx = utility.iloss(orig, rel, HIER, ["age"], levels={"age": level}, definition="arx")
    assert xt == pytest.approx(arx * n * 3 / 4, abs=1e-12)
    assert xt == pytest.approx(n * [0, 1, 3][level] / 4, abs=1e-12)


def test_iloss_rejects_unknown_definition():
    orig, rel = _iloss_table()
    with pytest.raises(ValueError, match="definition must be one of"):
        utility.iloss(orig, rel, HIER, ["age", "sex"], definition="lm")


# ----------------------------------------------------------------------------- Score(v)

def _score_table():
    return pd.DataFrame({"age": ["20", "21", "21", "30", "30", "31", "31"],
                         "sex": ["M", "M", "M", "F", "F", "F", "F"],
                         "cls": ["y", "n", "n", "y", "y", "n", "n"]})


def test_info_gain_scores_by_hand(backend):
    data = _score_table()
    s = utility.info_gain_scores(data, HIER, ["age", "sex"], "age", 1, "cls",
                                 backend=backend).set_index("value")
    h13 = -(1 / 3) * math.log2(1 / 3) - (2 / 3) * math.log2(2 / 3)
    # 2*: R = {20:y, 21:n, 21:n}: I = H(1/3), children pure -> InfoGain = H(1/3)
    # 3*: R = {30:y,y, 31:n,n}: I = 1, children pure -> InfoGain = 1
    assert s.loc["2*", "info_gain"] == pytest.approx(h13, abs=1e-12)
    assert s.loc["3*", "info_gain"] == pytest.approx(1.0, abs=1e-12)
    assert s["records"].tolist() == [3, 4]
    # cut (age level 1, sex level 0): groups (2*,M) 3, (3*,F) 4 -> A = 3
    assert s["anonymity"].tolist() == [3, 3]
    # specializing 2*: (20,M) 1, (21,M) 2, (3*,F) 4 -> A_v = 1; 3*: (30,F) 2, (31,F) 2 -> 2
    assert s["anonymity_after"].tolist() == [1, 2]
    assert s["anonymity_loss"].tolist() == [2, 1]
    assert s.loc["2*", "score"] == pytest.approx(h13 / 3, abs=1e-12)
    assert s.loc["3*", "score"] == pytest.approx(1 / 2, abs=1e-12)
    # the per-level sum is info_gain
    assert s["info_gain"].sum() == pytest.approx(
        utility.info_gain(data, AGE, "age", 1, "cls", backend=backend), abs=1e-12)


def test_info_gain_scores_levels_of_the_other_qids():
    data = _score_table()
    # sex at its top: one group per age value at level 2 ... here age level 2 -> '*' only
    s = utility.info_gain_scores(data, HIER, ["age", "sex"], "age", 2, "cls",
                                 levels={"sex": 1})
    assert s["value"].tolist() == ["*"]
    assert s["anonymity"].tolist() == [7]
    assert s["anonymity_after"].tolist() == [3]          # 2*: 3, 3*: 4
    # I(all) = H(3/7) bits; children 2* (y,n,n) and 3* (y,y,n,n)
    h = lambda p: 0.0 if p in (0, 1) else -p * math.log2(p) - (1 - p) * math.log2(1 - p)  # noqa: E731
    want = h(3 / 7) - 3 / 7 * h(1 / 3) - 4 / 7 * h(1 / 2)
    assert s["info_gain"].iloc[0] == pytest.approx(want, abs=1e-12)
    assert s["score"].iloc[0] == pytest.approx(want / 5, abs=1e-12)
    with pytest.raises(ValueError, match="not one of the quasi-identifiers"):
        utility.info_gain_scores(data, HIER, ["sex"], "age", 1, "cls")


# ------------------------------------------------------------------------ ML utility

@pytest.fixture
def sk():
    return pytest.importorskip("sklearn")


def _ml_table():
    # 10 records, 6 'a' and 4 'b'; the feature is the target itself
    y = ["a"] * 6 + ["b"] * 4
    orig = pd.DataFrame({"f": y, "y": y})
    rel = orig.assign(f="*")
    return orig, rel


def test_ml_precision_recall_f1_by_hand(sk):
    from sklearn.dummy import DummyClassifier
    orig, rel = _ml_table()
    # the majority class everywhere: with 2 stratified folds each holds 3 'a' and 2 'b':
    # accuracy 3/5; macro precision (3/5 + 0)/2; recall (1 + 0)/2; F1 (2*0.6/1.6 + 0)/2
    res = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2,
                                  classifier=DummyClassifier(strategy="most_frequent"),
                                  tolerance=0.0)
    for side in ("original", "released"):
        assert res[f"accuracy_{side}"] == pytest.approx(0.6)
        assert res[f"precision_{side}"] == pytest.approx(0.3)
        assert res[f"recall_{side}"] == pytest.approx(0.5)
        assert res[f"f1_{side}"] == pytest.approx(0.375)
    assert res["relative_loss"] == 0.0
    assert res["relative_losses"] == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0,
                                      "f1": 0.0}
    assert all(res["within_tolerance"].values())


def test_ml_tolerance(sk):
    from sklearn.tree import DecisionTreeClassifier
    orig, rel = _ml_table()
    tree = DecisionTreeClassifier(random_state=0)
    res = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2,
                                  classifier=tree, tolerance=0.5)
    # original: the feature is the target -> 1.0 everywhere; released: the majority
    assert (res["accuracy_original"], res["precision_original"], res["recall_original"],
            res["f1_original"]) == (1.0, 1.0, 1.0, 1.0)
    assert res["accuracy_released"] == pytest.approx(0.6)
    assert res["f1_released"] == pytest.approx(0.375)
    # drops: accuracy 0.4, precision 0.7, recall 0.5, F1 0.625; lambda = 0.5
    assert res["within_tolerance"] == {"accuracy": True, "precision": False, "recall": True,
                                       "f1": False}
    assert res["relative_losses"]["precision"] == pytest.approx(0.7)
    tight = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2,
                                    classifier=tree, tolerance=0.3)
    assert not any(tight["within_tolerance"].values())
    with pytest.raises(ValueError, match="tolerance"):
        ml.ml_utility_loss(orig, rel, features=["f"], target="y", tolerance=-1)


def test_ml_tolerance_is_relative(sk):
    # Def. 25: lambda bounds L_U = (acc_original - acc_released) / acc_original, not the drop
    y = ["a"] * 36 + ["b"] * 24
    f = list(y)
    f[0], f[36] = "b", "a"           # an original a little noisy: accuracy below 1
    orig = pd.DataFrame({"f": f, "y": y})
    rel = orig.assign(f="*")
    res = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2)
    acc_o, acc_r = res["accuracy_original"], res["accuracy_released"]
    assert 0 < acc_r < acc_o < 1
    drop, rel_loss = acc_o - acc_r, (acc_o - acc_r) / acc_o
    lam = (drop + rel_loss) / 2      # above the absolute drop, below the relative loss
    res = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2, tolerance=lam)
    assert res["within_tolerance"]["accuracy"] is False
    res = ml.ml_utility_loss(orig, rel, features=["f"], target="y", cv=2,
                             tolerance=rel_loss + 1e-9)
    assert res["within_tolerance"]["accuracy"] is True
