"""Top-down specialization (gpuppdp.algorithms.tds): the vectorized rounds replayed against a
brute-force reference (every candidate specialization applied to the table, judged by the
independent checker and scored with pandas), every release through the checker, the cut's shape,
and the worked example of Fung, Wang & Yu (ICDE 2005)."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuppdp import datasets
from gpuppdp.algorithms import TDS
from gpuppdp.algorithms.mondrian import certainty_penalty
from gpuppdp.algorithms.tds import _CatCut, _NumCut, release_table
from gpuppdp.analysis.checker import check
from gpuppdp.core.codes import encode_column
from gpuppdp.hierarchy import Hierarchy

LETTERS = list("abcdef")
H_CAT = Hierarchy([LETTERS, ["ab", "ab", "cd", "cd", "ef", "ef"],
                   ["abcd"] * 4 + ["ef2"] * 2, ["*"] * 6], name="c")
H_BIN = Hierarchy([["u", "v", "w"], ["uv", "uv", "w"], ["*"] * 3], name="b")


# --------------------------------------------------------------------------------------
# a brute-force reference
# --------------------------------------------------------------------------------------
def _entropy(values) -> float:
    p = pd.Series(list(values)).value_counts(normalize=True).to_numpy()
    return float(-(p * np.log2(p)).sum()) if len(p) else 0.0


def _min_group(table, cols) -> int:
    return int(table.groupby(list(cols), observed=True).size().min())


def _candidates(cut):
    if isinstance(cut, _CatCut):
        cur = cut.current()
        return sorted({int(v) for v in cur[cut.depth < cut.leaf_depth]})
    return [v for v in range(len(cut.lo)) if cut.hi[v] > cut.lo[v]]


def _valid(table, qids, k, lkc, sensitive) -> bool:
    m = check(table, quasi_identifiers=qids, sensitive=sensitive, lkc=lkc)
    ok = m["suppressed_rows"] == 0
    if k is not None:
        ok &= m["k"] >= k
    if lkc is not None:
        ok &= bool(m["lkc_satisfied"])
    return bool(ok)


def _naive_scores(data, qids, cuts, k, lkc, sensitive, target):
    """Every candidate of the cut -> (valid, info gain, priv loss, score), by applying it."""
    before, _ = release_table(data, qids, cuts)
    sets = []
    if k is not None:
        sets.append(tuple(qids))
    if lkc is not None:
        sets += [s for n in range(1, min(lkc[0], len(qids)) + 1)
                 for s in itertools.combinations(qids, n)]
    out = {}
    for j, (name, cut) in enumerate(zip(qids, cuts)):
        for v in _candidates(cut):
            label = cut.label(v)
            trial = copy.deepcopy(cuts)
            trial[j].specialize(v)
            after, _ = release_table(data, qids, trial)
            rows = (before[name].astype(str) == label).to_numpy()
            klass = data[target] if target is not None else data[name]
            kids = after[name].astype(str)[rows]
            gain = 0.0
            if rows.any():
                gain = _entropy(klass[rows]) - sum(
                    (kids == c).mean() * _entropy(klass[rows][(kids == c).to_numpy()])
                    for c in kids.unique())
            if target is None:                  # the whole table's gain
                gain *= rows.mean()
            losses = [_min_group(before, s) - _min_group(after, s) for s in sets if name in s]
            loss = float(np.mean(losses)) if losses else 0.0
            score = gain / (loss + 1) if target is not None else gain
            out[(name, label)] = (_valid(after, qids, k, lkc, sensitive), gain, loss, score)
    return out


def _replay(data, qids, hier, release, k, lkc, sensitive, target):
    """Replays ``release.history`` step by step against the brute-force scores."""
    klass = None if target is None else encode_column(data[target])[0]
    cuts = [_CatCut(c, data[c], hier[c]) if c in hier else _NumCut(c, data[c], klass)
            for c in qids]
    for cut in cuts:
        if isinstance(cut, _NumCut):
            _set_split_naively(data, cut, target)
    for step in release.history:
        scores = _naive_scores(data, qids, cuts, k, lkc, sensitive, target)
        key = (step["attribute"], step["value"])
        valid, gain, loss, score = scores[key]
        assert valid, key
        assert step["info_gain"] == pytest.approx(gain, abs=1e-9)
        assert step["priv_loss"] == pytest.approx(loss, abs=1e-9)
        best = max(s for ok, _, _, s in scores.values() if ok)
        assert step["score"] == pytest.approx(best, abs=1e-9)
        j = qids.index(step["attribute"])
        value = next(v for v in _candidates(cuts[j]) if cuts[j].label(v) == step["value"])
        assert cuts[j].specialize(value) == step["children"]
        if isinstance(cuts[j], _NumCut):
            _set_split_naively(data, cuts[j], target)
    scores = _naive_scores(data, qids, cuts, k, lkc, sensitive, target)
    assert not any(ok for ok, *_ in scores.values())       # nothing valid is left
    final, _ = release_table(data, qids, cuts)
    pd.testing.assert_frame_equal(final, release.released)


def _set_split_naively(data, cut, target):
    """Each interval's split: the lowest threshold of highest information gain, by trying
    every one (and checks the cut's own choice has that gain)."""
    values = cut.num.values
    x = pd.to_numeric(data[cut.name]).to_numpy(float)
    klass = (data[target] if target is not None else data[cut.name]).to_numpy()
    for v in range(len(cut.lo)):
        lo, hi = cut.lo[v], cut.hi[v]
        if hi <= lo:
            continue
        inside = (x >= values[lo]) & (x <= values[hi])
        base = _entropy(klass[inside])
        gains = []
        for t in range(lo, hi):
            left = inside & (x <= values[t])
            right = inside & (x > values[t])
            n = inside.sum()
            gains.append(base - left.sum() / n * _entropy(klass[left])
                         - right.sum() / n * _entropy(klass[right]))
        best = lo + int(np.argmax(np.round(gains, 12)))
        assert gains[cut.split[v] - lo] == pytest.approx(gains[best - lo], abs=1e-9)


@st.composite
def tables(draw):
    n = draw(st.integers(4, 18))
    c = draw(st.lists(st.sampled_from(LETTERS), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(["u", "v", "w"]), min_size=n, max_size=n))
    x = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    y = draw(st.lists(st.sampled_from(["yes", "no"]), min_size=n, max_size=n))
    d = draw(st.lists(st.sampled_from(["flu", "hiv", "none"]), min_size=n, max_size=n))
    return pd.DataFrame({"c": c, "b": b, "x": x, "y": y, "d": d})


HIER = {"c": H_CAT, "b": H_BIN}
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(tables(), st.integers(1, 4), st.booleans(), st.sampled_from([["c", "x"], ["c", "b", "x"]]))
def test_k_anonymity_steps_match_brute_force(data, k, with_target, qids):
    if len(data) < k:
        return
    target = "y" if with_target else None
    hier = {c: HIER[c] for c in qids if c in HIER}
    r = TDS(qids, k=k, target=target, hierarchies=hier).fit(data)
    assert r.checked["k"] >= k
    _replay(data, qids, hier, r, k, None, None, target)


@SETTINGS
@given(tables(), st.integers(1, 2), st.integers(1, 4), st.sampled_from([1.0, 0.8, 0.6]),
       st.booleans())
def test_lkc_steps_match_brute_force(data, L, K, C, with_target):  # noqa: N803
    qids = ["c", "b", "x"]
    if len(data) < K:
        return
    top = data["d"].value_counts(normalize=True).max()
    lkc = (L, K, C)
    if top > C:
        with pytest.raises(ValueError, match="confidence"):
            TDS(qids, lkc=lkc, sensitive="d", hierarchies=HIER).fit(data)
        return
    target = "y" if with_target else None
    r = TDS(qids, lkc=lkc, sensitive="d", target=target, hierarchies=HIER).fit(data)
    assert r.checked["lkc_satisfied"]
    _replay(data, qids, HIER, r, None, lkc, "d", target)


@SETTINGS
@given(tables(), st.integers(1, 3))
def test_release_is_a_cut_of_each_hierarchy(data, k):
    if len(data) < k:
        return
    r = TDS(["c", "x"], k=k, target="y", hierarchies={"c": H_CAT}).fit(data)
    leaves = {str(lbl): set(H_CAT.leaves[H_CAT.codes(L) == code])
              for L in range(H_CAT.height + 1)
              for code, lbl in enumerate(H_CAT.labels(L))}
    cut = [leaves[v] for v in r.cut["c"]]
    assert sorted(itertools.chain(*cut)) == sorted(LETTERS)     # cover, and disjoint
    for value, label in zip(data["c"], r.released["c"].astype(str)):
        assert value in leaves[label]
    for value, label in zip(data["x"], r.released["x"].astype(str)):
        lo, _, hi = label.strip("[]").partition("-")
        assert float(lo) <= value <= float(hi or lo)
    assert r.ncp == certainty_penalty(r.released, data, ["c", "x"],
                                      hierarchies={"c": H_CAT})["ncp"]


# --------------------------------------------------------------------------------------
# the worked example of Fung, Wang & Yu (ICDE 2005), Table 1 and Figure 1
# --------------------------------------------------------------------------------------
# Education, Sex, Work_Hrs, #Y, #N; 34 records, 21 Y and 13 N.  The Education and Work_Hrs
# columns and the class counts are the paper's; the Sex column is our reconstruction.
PAPER = [("9th", "M", 30, 0, 3), ("10th", "M", 32, 0, 4), ("11th", "M", 35, 2, 3),
         ("12th", "F", 37, 3, 1), ("Bachelors", "F", 42, 4, 2), ("Bachelors", "F", 44, 4, 0),
         ("Masters", "M", 44, 4, 0), ("Masters", "F", 44, 3, 0), ("Doctorate", "F", 44, 1, 0)]
EDUCATION = Hierarchy.from_rows([
    ["9th", "Junior Sec.", "Secondary", "ANY"], ["10th", "Junior Sec.", "Secondary", "ANY"],
    ["11th", "Senior Sec.", "Secondary", "ANY"], ["12th", "Senior Sec.", "Secondary", "ANY"],
    ["Bachelors", "Bachelors", "University", "ANY"],
    ["Masters", "Grad School", "University", "ANY"],
    ["Doctorate", "Grad School", "University", "ANY"]], name="Education")
SEX = Hierarchy.from_rows([["M", "ANY"], ["F", "ANY"]], name="Sex")


def paper_table() -> pd.DataFrame:
    recs = []
    for edu, sex, hrs, yes, no in PAPER:
        recs += [(edu, sex, hrs, "Y")] * yes + [(edu, sex, hrs, "N")] * no
    return pd.DataFrame(recs, columns=["Education", "Sex", "Work_Hrs", "Class"])


def h(*counts) -> float:
    n = sum(counts)
    return -sum(c / n * math.log2(c / n) for c in counts if c)


def test_paper_example_first_round_by_hand():
    data = paper_table()
    qids = ["Education", "Sex", "Work_Hrs"]
    hier = {"Education": EDUCATION, "Sex": SEX}
    r = TDS(qids, k=4, target="Class", hierarchies=hier).fit(data)
    # the paper's Example: I(R_ANY_Edu) = 0.9597, InfoGain(ANY_Edu) = 0.2716
    assert h(21, 13) == pytest.approx(0.9597, abs=5e-5)
    gain_edu = h(21, 13) - 16 / 34 * h(5, 11) - 18 / 34 * h(16, 2)
    assert gain_edu == pytest.approx(0.2716, abs=5e-5)
    # Work_Hrs [1-99) splits at 37: [1-37) holds 2Y10N, [37-99) 19Y3N
    gain_hrs = h(21, 13) - 12 / 34 * h(2, 10) - 22 / 34 * h(19, 3)
    gain_sex = h(21, 13) - 16 / 34 * h(6, 10) - 18 / 34 * h(15, 3)
    # all three leave groups of 12..22 out of 34: AnonyLoss = 34 - the smaller part
    scores = {"Education": gain_edu / (34 - 16 + 1), "Work_Hrs": gain_hrs / (34 - 12 + 1),
              "Sex": gain_sex / (34 - 16 + 1)}
    assert max(scores, key=scores.get) == "Work_Hrs"
    first = r.history[0]
    assert first["attribute"] == "Work_Hrs"
    assert first["value"] == "[30-44]" and first["children"] == ["[30-35]", "[37-44]"]
    assert first["info_gain"] == pytest.approx(gain_hrs, abs=1e-12)
    assert first["priv_loss"] == 22
    assert first["score"] == pytest.approx(scores["Work_Hrs"], abs=1e-12)
    edu = next(s for s in r.history if s["value"] == "ANY" and s["attribute"] == "Education")
    assert edu["info_gain"] == pytest.approx(gain_edu, abs=1e-12)
    assert edu["children"] == ["Secondary", "University"]
    sex = next(s for s in r.history if s["attribute"] == "Sex")
    assert sex["info_gain"] == pytest.approx(gain_sex, abs=1e-12)
    assert r.checked["k"] >= 4
    _replay(data, qids, hier, r, 4, None, None, "Class")


def test_paper_example_release_by_hand():
    """k = 4 on all three attributes: the final cut, worked out step by step by hand."""
    r = TDS(["Education", "Sex", "Work_Hrs"], k=4, target="Class",
            hierarchies={"Education": EDUCATION, "Sex": SEX}).fit(paper_table())
    assert [(s["attribute"], s["value"]) for s in r.history] == [
        ("Work_Hrs", "[30-44]"), ("Work_Hrs", "[37-44]"), ("Work_Hrs", "[30-35]"),
        ("Education", "ANY"), ("Education", "Secondary"), ("Sex", "ANY"),
        ("Education", "University"), ("Education", "Senior Sec."), ("Work_Hrs", "[37-42]")]
    assert r.cut == {"Education": ["Junior Sec.", "Bachelors", "Grad School", "11th", "12th"],
                     "Sex": ["M", "F"], "Work_Hrs": ["[30-32]", "35", "37", "42", "44"]}
    # [37-44]'s best split: 37..42 (3Y1N + 4Y2N) against 44 (12Y0N)
    assert r.history[1]["info_gain"] == pytest.approx(
        h(19, 3) - 10 / 22 * h(7, 3) - 12 / 22 * h(12, 0), abs=1e-12)


def test_hdtds_lkc_confidence_bounds_the_release():
    data = paper_table()
    r = TDS(["Education", "Sex", "Work_Hrs"], lkc=(2, 4, 0.9), sensitive="Class",
            hierarchies={"Education": EDUCATION, "Sex": SEX}).fit(data)
    # University & M would be Masters M: 4Y0N, confidence 1 > 0.9: Sex stays ANY
    assert r.cut["Sex"] == ["ANY"]
    m = check(r.released, quasi_identifiers=["Education", "Sex", "Work_Hrs"],
              sensitive="Class", lkc=(2, 4, 0.9))
    assert m["lkc_satisfied"] and m["lkc_max_confidence"] <= 0.9
    assert r.summary()["algorithm"] == "hdtds"
    # bounding only N's confidence allows more
    r2 = TDS(["Education", "Sex", "Work_Hrs"], lkc=(2, 4, 0.9, ["N"]), sensitive="Class",
             hierarchies={"Education": EDUCATION, "Sex": SEX}).fit(data)
    assert r2.specializations > r.specializations
    assert check(r2.released, quasi_identifiers=["Education", "Sex", "Work_Hrs"],
                 sensitive="Class", lkc=(2, 4, 0.9, ["N"]))["lkc_satisfied"]


# --------------------------------------------------------------------------------------
# Adult, errors
# --------------------------------------------------------------------------------------
def test_adult_release_passes_checker():
    data, hierarchies = datasets.adult()
    data = data.iloc[:3000].reset_index(drop=True)
    data["age"] = pd.to_numeric(data["age"])
    cat = {c: hierarchies[c] for c in ["sex", "race", "marital-status", "education"]}
    qids = ["age", *cat]
    r = TDS(qids, k=10, target="salary-class", hierarchies=cat).fit(data)
    m = check(r.released, quasi_identifiers=qids)
    assert m["k"] >= 10 and m["suppressed_rows"] == 0
    assert r.specializations >= 4
    assert 0 < r.gcp < 1
    s = r.summary()
    assert s["algorithm"] == "tds" and s["smallest_partition"] >= 10
    assert len(r.released) == len(data)
    # LKC with L = len(qids) and C = 1 is k-anonymity (the scores differ: PrivLoss averages
    # over every QID set)
    r2 = TDS(qids, lkc=(3, 10, 1.0), target="salary-class", hierarchies=cat).fit(data)
    m2 = check(r2.released, quasi_identifiers=qids, lkc=(3, 10, 1.0))
    assert m2["lkc_satisfied"] and m2["lkc_min_group"] >= 10
    assert r2.summary()["algorithm"] == "hdtds"


def test_top_cut_when_nothing_is_valid():
    data = paper_table()
    r = TDS(["Education", "Sex"], k=20, hierarchies={"Education": EDUCATION, "Sex": SEX}).fit(data)
    assert r.history == [] and r.cut == {"Education": ["ANY"], "Sex": ["ANY"]}
    assert r.gcp == 1.0


def test_errors():
    data = paper_table()
    hier = {"Education": EDUCATION}
    with pytest.raises(ValueError, match="privacy model"):
        TDS(["Education"], hierarchies=hier).fit(data)
    with pytest.raises(ValueError, match="sensitive"):
        TDS(["Education"], lkc=(1, 2, 0.5), hierarchies=hier).fit(data)
    with pytest.raises(ValueError, match="numeric"):
        TDS(["Sex"], k=2).fit(data)
    with pytest.raises(ValueError, match="quasi-identifier and as the target"):
        TDS(["Education", "Class"], k=2, target="Class", hierarchies=hier).fit(data)
    with pytest.raises(ValueError, match="at least 40 records"):
        TDS(["Education"], k=40, hierarchies=hier).fit(data)
    with pytest.raises(ValueError, match="generalization must be one of subtree, sibling"):
        TDS(["Education"], k=2, hierarchies=hier, generalization="full").fit(data)


# --------------------------------------------------------------------------------------
# sibling generalization (generalization="sibling")
# --------------------------------------------------------------------------------------
def _leaf_sets(h: Hierarchy) -> dict:
    return {str(lbl): set(h.leaves[h.codes(L) == code])
            for L in range(h.height + 1) for code, lbl in enumerate(h.labels(L))}


def _sibling_moves_left(data, qids, cuts, k, lkc, sensitive):
    """Brute force: the valid sibling moves of the cut (each child of each cut value,
    applied to a copy and judged by the checker)."""
    valid = []
    for j, cut in enumerate(cuts):
        if not isinstance(cut, _CatCut):
            continue
        cur, child = cut.current(), cut.child()
        for c in np.unique(child[child != cur]):
            if not np.isin(cut.codes, np.flatnonzero((child == c) & (cur != c))).any():
                continue                              # no record under that child
            trial = copy.deepcopy(cuts)
            trial[j].specialize_child(int(c))
            after, _ = release_table(data, qids, trial)
            if _valid(after, qids, k, lkc, sensitive):
                valid.append((qids[j], cut.label(int(c))))
    return valid


@SETTINGS
@given(tables(), st.integers(1, 4), st.sampled_from([None, "y"]))
def test_sibling_release_is_checked_and_refines_the_subtree_release(data, k, target):
    if len(data) < k:
        return
    qids = ["c", "b", "x"]
    sub = TDS(qids, k=k, target=target, hierarchies=HIER).fit(data)
    sib = TDS(qids, k=k, target=target, hierarchies=HIER, generalization="sibling").fit(data)
    m = check(sib.released, quasi_identifiers=qids)
    assert m["suppressed_rows"] == 0 and m["k"] >= k           # the independent checker
    assert len(sib.released) == len(data)
    pd.testing.assert_frame_equal(sib.released[["y", "d"]], data[["y", "d"]])
    assert sib.gcp <= sub.gcp + 1e-12
    for q in qids:
        assert sib.ncp[q] <= sub.ncp[q] + 1e-12
    # the subtree run is the first phase; every sibling step only narrows a value
    assert sib.history[:len(sub.history)] == sub.history
    for q, h in HIER.items():
        leaves = _leaf_sets(h)
        for value, a, b in zip(data[q], sub.released[q].astype(str),
                                sib.released[q].astype(str)):
            assert value in leaves[b] and leaves[b] <= leaves[a]
    assert sib.summary()["generalization"] == "sibling"
    # no valid sibling move is left (the vectorized validity against brute force)
    klass = None if target is None else encode_column(data[target])[0]
    cuts = [_CatCut(c, data[c], HIER[c]) if c in HIER else _NumCut(c, data[c], klass)
            for c in qids]
    for step in sib.history:
        j = qids.index(step["attribute"])
        if step["kind"] == "subtree":
            v = next(v for v in _candidates(cuts[j]) if cuts[j].label(v) == step["value"])
            cuts[j].specialize(v)
        else:
            node = next(int(n) for n in range(cuts[j].n_values)
                        if cuts[j].label(n) == step["children"][0])
            assert cuts[j].specialize_child(node) == (step["value"], step["children"])
    pd.testing.assert_frame_equal(release_table(data, qids, cuts)[0], sib.released)
    assert _sibling_moves_left(data, qids, cuts, k, None, None) == []


@SETTINGS
@given(tables(), st.integers(1, 2), st.integers(1, 3), st.sampled_from([0.6, 0.8, 1.0]))
def test_sibling_lkc_release_is_checked(data, L, K, C):  # noqa: N803
    if len(data) < K:
        return
    qids = ["c", "b", "x"]
    lkc = (L, K, C)
    top = data["d"].value_counts(normalize=True).max()
    if C < 1 and top > C:
        return
    sub = TDS(qids, lkc=lkc, sensitive="d", hierarchies=HIER).fit(data)
    sib = TDS(qids, lkc=lkc, sensitive="d", hierarchies=HIER, generalization="sibling").fit(data)
    assert check(sib.released, quasi_identifiers=qids, sensitive="d",
                 lkc=lkc)["lkc_satisfied"] or (sib.released[qids].astype(str) == "*").all().all()
    assert sib.gcp <= sub.gcp + 1e-12 and len(sib.released) == len(data)


def test_sibling_keeps_the_parent_label_for_the_children_not_specialized():
    # x, x, y, y, z under one root, k=2: the root cannot be split into x | y | z (z alone),
    # but x can leave it: x, x released as x, the other three stay at '*'
    h = Hierarchy.flat(["x", "y", "z"], name="v")
    data = pd.DataFrame({"v": ["x", "y", "x", "z", "y"], "n": range(5)})
    sub = TDS(["v"], k=2, hierarchies={"v": h}).fit(data)
    sib = TDS(["v"], k=2, hierarchies={"v": h}, generalization="sibling").fit(data)
    assert sub.released["v"].astype(str).tolist() == ["*"] * 5 and sub.gcp == 1.0
    assert sib.released["v"].astype(str).tolist() in (["x", "*", "x", "*", "*"],
                                                      ["*", "y", "*", "*", "y"])
    assert sib.gcp == pytest.approx(0.6)
    assert [s["kind"] for s in sib.history] == ["sibling"]
    assert sib.history[0]["value"] == "*" and sib.cut["v"] in (["*", "x"], ["*", "y"])


# --------------------------------------------------------------------------------------
# the rounds on a GPU backend (the strict CuPy stand-in; the GPU in the GPU tier): the CPU's
# release, step by step
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    dict(k=10, target="salary-class"),
    dict(k=5),
    dict(lkc=(2, 10, 0.7), sensitive="occupation", target="salary-class"),
    dict(k=8, generalization="sibling"),
    dict(lkc=(2, 6, 0.8), sensitive="occupation", generalization="sibling"),
])
def test_the_rounds_on_a_device_give_the_cpu_release(options):
    from gpuppdp.testing import ENGINE_BACKEND, strict_backend

    data, hierarchies = datasets.adult()
    data = data.iloc[:1500].reset_index(drop=True)
    data["age"] = pd.to_numeric(data["age"])
    cat = {c: hierarchies[c] for c in ["sex", "race", "marital-status", "education"]}
    qids = ["age", *cat]
    cpu = TDS(qids, hierarchies=cat, **options).fit(data)
    device = TDS(qids, hierarchies=cat, **options,  # a real GPU in the GPU tier
                 backend="gpu" if ENGINE_BACKEND == "gpu" else strict_backend()).fit(data)
    assert cpu.specializations >= 2
    assert [(h["attribute"], h["value"], h["children"], h["kind"]) for h in device.history] \
        == [(h["attribute"], h["value"], h["children"], h["kind"]) for h in cpu.history]
    for d, c in zip(device.history, cpu.history):
        for key in ("info_gain", "priv_loss", "score"):
            assert d[key] == pytest.approx(c[key], rel=1e-12, abs=1e-12), key
    assert device.cut == cpu.cut
    pd.testing.assert_frame_equal(device.released, cpu.released)
