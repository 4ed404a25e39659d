"""Mondrian (gpuppdp.algorithms.mondrian): the batched rounds against a naive recursive reference,
every release through the independent checker, NCP against a naive formula and against the
full-domain optimum, and hand-computed examples."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuppdp import Anonymizer
from gpuppdp.algorithms import Mondrian
from gpuppdp.algorithms.mondrian import certainty_penalty
from gpuppdp.analysis.checker import check
from gpuppdp.builders import interval_hierarchy
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    LKCPrivacy,
    TCloseness,
)

LETTERS = list("abcdef")
H_CAT = Hierarchy([LETTERS, ["ab", "ab", "cd", "cd", "ef", "ef"],
                   ["abcd"] * 4 + ["ef"] * 2, ["*"] * 6], name="c")


# --------------------------------------------------------------------------------------
# a naive reference: one partition at a time, plain Python
# --------------------------------------------------------------------------------------
def _leaves_under(h: Hierarchy, level: int, leaf: int) -> int:
    return int((h.codes(level) == h.codes(level)[leaf]).sum())


def _naive(df, qids, hier, k, l, sens, strict):
    """Mondrian by recursion over partitions (lists of row numbers, ascending)."""
    num = {c: sorted(set(pd.to_numeric(df[c]).tolist())) for c in qids if c not in hier}
    leaf = {c: hier[c].leaf_codes(df[c]).tolist() for c in hier}

    def lca(c, rows):
        h = hier[c]
        for L in range(h.height + 1):
            if len({int(h.codes(L)[leaf[c][r]]) for r in rows}) == 1:
                return L
        raise AssertionError

    def width(c, rows):
        if c in hier:
            h, L = hier[c], lca(c, rows)
            d = len(h.leaves)
            return (_leaves_under(h, L, leaf[c][rows[0]]) - 1) / (d - 1) if d > 1 else 0.0
        vals = [float(df[c].iloc[r]) for r in rows]
        span = num[c][-1] - num[c][0]
        return (max(vals) - min(vals)) / span if span > 0 else 0.0

    def allowable(parts):
        if any(len(p) < k for p in parts):
            return False
        return l is None or all(len({sens[r] for r in p}) >= l for p in parts)

    def cut(c, rows):
        if c in hier:
            L = lca(c, rows) - 1
            groups = {}
            for r in rows:
                groups.setdefault(int(hier[c].codes(L)[leaf[c][r]]), []).append(r)
            return list(groups.values())
        ordered = sorted(rows, key=lambda r: float(df[c].iloc[r]))
        if not strict:
            half = len(rows) // 2
            return [sorted(ordered[:half]), sorted(ordered[half:])]
        vals = [float(df[c].iloc[r]) for r in ordered]
        m = vals[(len(rows) - 1) // 2]
        le = [r for r in rows if float(df[c].iloc[r]) <= m]
        lt = [r for r in rows if float(df[c].iloc[r]) < m]
        n = len(rows)
        ok = lambda left: k <= len(left) <= n - k
        if ok(le) and (not ok(lt) or abs(2 * len(le) - n) <= abs(2 * len(lt) - n)):
            left = le
        elif ok(lt):
            left = lt
        else:
            return None
        return [left, [r for r in rows if r not in left]]

    def split(rows):
        if len(rows) < 2 * k:
            return [rows]
        widths = [width(c, rows) for c in qids]
        for j in sorted(range(len(qids)), key=lambda j: -widths[j]):
            if widths[j] <= 0:
                break
            parts = cut(qids[j], rows)
            if parts is not None and allowable(parts):
                return [q for p in parts for q in split(p)]
        return [rows]

    return split(list(range(len(df))))


def _partition_sets(part):
    return {frozenset(np.flatnonzero(part == p).tolist()) for p in np.unique(part)}


def _table(draw_or_rng, n, with_cat=True):
    rng = draw_or_rng
    data = {"x": rng.integers(0, 20, n), "y": rng.integers(0, 6, n)}
    if with_cat:
        data["c"] = rng.choice(LETTERS, n)
    data["s"] = rng.choice(list("pqrst"), n)
    return pd.DataFrame(data)


@st.composite
def _cases(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 60))
    k = draw(st.integers(1, 6))
    l = draw(st.sampled_from([None, 2, 3]))
    strict = draw(st.booleans())
    df = _table(np.random.default_rng(seed), n)
    return df, k, l, strict


FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FAST
@given(_cases())
def test_rounds_equal_the_naive_recursion_and_pass_the_checker(case):
    df, k, l, strict = case
    qids, hier = ["x", "y", "c"], {"c": H_CAT}
    if len(df) < k or (l is not None and df["s"].nunique() < l):
        with pytest.raises(ValueError):
            Mondrian(qids, k=k, sensitive="s", l=l, strict=strict, hierarchies=hier).fit(df)
        return
    r = Mondrian(qids, k=k, sensitive="s", l=l, strict=strict, hierarchies=hier).fit(df)
    naive = _naive(df, qids, hier, k, l, df["s"].tolist(), strict)
    assert _partition_sets(r.partition) == {frozenset(p) for p in naive}
    measured = check(r.released, quasi_identifiers=qids, sensitive="s", backend="cpu")
    assert measured["k"] >= k
    if l is not None:
        assert measured["distinct_l"] >= l
    # NCP: the release's own figures, the generic function and a naive sum over records
    cp = certainty_penalty(r.released, df, qids, hierarchies=hier)
    assert cp["ncp"] == pytest.approx(r.ncp)
    assert cp["gcp"] == pytest.approx(r.gcp)
    total = 0.0
    for p in naive:
        for c in qids:
            if c in hier:
                h = hier[c]
                leaves = set(h.leaf_codes(df[c].iloc[p]).tolist())
                L = next(L for L in range(h.height + 1)
                         if len({int(h.codes(L)[x]) for x in leaves}) == 1)
                cost = (_leaves_under(h, L, next(iter(leaves))) - 1) / 5
            else:
                span = df[c].max() - df[c].min()
                cost = (df[c].iloc[p].max() - df[c].iloc[p].min()) / span if span else 0.0
            total += cost * len(p)
    assert r.gcp == pytest.approx(total / (len(df) * len(qids)))


@FAST
@given(_cases())
def test_released_values_cover_the_original_ones(case):
    df, k, _, strict = case
    if len(df) < k:
        return
    r = Mondrian(["x", "y", "c"], k=k, strict=strict, hierarchies={"c": H_CAT}).fit(df)
    under = {lab: set() for L in range(H_CAT.height + 1) for lab in H_CAT.labels(L)}
    for L in range(H_CAT.height + 1):
        for leaf, code in zip(H_CAT.leaves, H_CAT.codes(L)):
            under[H_CAT.labels(L)[code]].add(leaf)
    for i in range(len(df)):
        for c in ("x", "y"):
            text = r.released[c].iloc[i]
            lo, _, hi = text.strip("[]").partition("-") if text.startswith("[") else \
                (text, "", text)
            assert float(lo) <= df[c].iloc[i] <= float(hi)
        assert df["c"].iloc[i] in under[r.released["c"].iloc[i]]


# --------------------------------------------------------------------------------------
# against the full-domain optimum
# --------------------------------------------------------------------------------------
def _full_domain(df, k):
    hx = interval_hierarchy(df["x"].unique(), [2, 4, 8], name="x")
    hy = interval_hierarchy(df["y"].unique(), [2, 4], name="y")
    res = Anonymizer(quasi_identifiers={"x": hx, "y": hy, "c": H_CAT}, k=k,
                     suppression_limit=0.0, metric="loss", backend="cpu", seed=0,
                     others="insensitive").fit(df.astype(str))
    best = np.inf                       # naive: the smallest NCP of every k-anonymous node
    for lv in itertools.product(range(hx.height + 1), range(hy.height + 1),
                                range(H_CAT.height + 1)):
        rel = pd.DataFrame({c: h.generalize(df[c].astype(str), L)
                            for c, h, L in zip("xyc", (hx, hy, H_CAT), lv)})
        if rel.groupby(list("xyc")).size().min() >= k:
            best = min(best, certainty_penalty(rel, df, list("xyc"),
                                               hierarchies={"c": H_CAT})["gcp"])
    return res, best


@pytest.mark.parametrize("seed", range(12))
def test_ncp_never_exceeds_the_full_domain_optimum(seed):
    """Tables of 60-200 rows (on a handful of rows the greedy median cut can lose, see the
    hand-computed example below)."""
    rng = np.random.default_rng(seed)
    df = _table(rng, int(rng.integers(60, 200)))
    k = int(rng.integers(2, 6))
    res, best = _full_domain(df, k)
    full = certainty_penalty(res.released, df, ["x", "y", "c"], hierarchies={"c": H_CAT})["gcp"]
    assert best <= full + 1e-12
    for strict in (True, False):
        r = Mondrian(["x", "y", "c"], k=k, strict=strict, hierarchies={"c": H_CAT}).fit(df)
        assert r.gcp <= best + 1e-12
        refined = Mondrian(["x", "y", "c"], k=k, strict=strict,
                           hierarchies={"c": H_CAT}).fit(df, partition=res)
        assert refined.gcp <= full + 1e-12


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), k=st.integers(1, 4),
       strict=st.booleans())
def test_refining_the_full_domain_classes_never_loses(seed, n, k, strict):
    """Started from the full-domain optimum's classes, every cut narrows a range or an
    ancestor: the NCP is at most the full-domain release's, on any table."""
    df = _table(np.random.default_rng(seed), n)
    if n < k:
        return
    res, _ = _full_domain(df, k)
    full = certainty_penalty(res.released, df, ["x", "y", "c"], hierarchies={"c": H_CAT})["gcp"]
    r = Mondrian(["x", "y", "c"], k=k, strict=strict,
                 hierarchies={"c": H_CAT}).fit(df, partition=res)
    assert r.gcp <= full + 1e-12
    assert check(r.released, quasi_identifiers=["x", "y", "c"], backend="cpu")["k"] >= k


# --------------------------------------------------------------------------------------
# hand-computed examples
# --------------------------------------------------------------------------------------
PATIENTS = pd.DataFrame({  # LeFevre et al., ICDE 2006, Table 1 (Patients)
    "age": [25, 25, 26, 27, 27, 28],
    "sex": ["Male", "Female", "Male", "Male", "Female", "Male"],
    "zipcode": [53711, 53712, 53711, 53710, 53712, 53711],
    "disease": ["Flu", "Hepatitis", "Brochitis", "Broken Arm", "AIDS", "Hang Nail"]})
H_SEX = Hierarchy.flat(["Male", "Female"], name="sex")


def test_patients_by_hand():
    """Widths 1, 1, 1 (age 3/3, sex (2-1)/(2-1), zip 2/2): the first QID, age, is cut at its
    median 26 (records <= 26 left: 3 and 3); neither half (3 < 2k) is cut again."""
    r = Mondrian(["age", "sex", "zipcode"], k=2, hierarchies={"sex": H_SEX}).fit(PATIENTS)
    assert r.released["age"].tolist() == ["[25-26]"] * 3 + ["[27-28]"] * 3
    assert r.released["sex"].tolist() == ["*"] * 6
    assert r.released["zipcode"].tolist() == ["[53711-53712]"] * 3 + ["[53710-53712]"] * 3
    assert r.ncp == pytest.approx({"age": 1 / 3, "sex": 1.0, "zipcode": 0.75})
    assert r.gcp == pytest.approx((3 * (1 / 3 + 1 + 1 / 2) + 3 * (1 / 3 + 1 + 1)) / 18)
    assert r.partitions == 2 and r.rounds == 2
    # 2-diverse on disease as well (every disease differs)
    r2 = Mondrian(["age", "sex", "zipcode"], k=2, sensitive="disease", l=2,
                  hierarchies={"sex": H_SEX}).fit(PATIENTS)
    assert r2.partitions == 2


def test_relaxed_splits_records_equal_to_the_median():
    """1, 2, 2, 2, 2, 3 with k=3: strict has no allowable cut (<= 2 leaves 1 on the right,
    < 2 leaves 1 on the left); relaxed cuts into two halves [1-2] and [2-3]."""
    df = pd.DataFrame({"x": [1, 2, 2, 2, 2, 3]})
    strict = Mondrian(["x"], k=3).fit(df)
    assert strict.released["x"].tolist() == ["[1-3]"] * 6 and strict.gcp == 1.0
    relaxed = Mondrian(["x"], k=3, strict=False).fit(df)
    assert relaxed.released["x"].tolist() == ["[1-2]"] * 3 + ["[2-3]"] * 3
    assert relaxed.gcp == pytest.approx(0.5)


def test_the_greedy_median_can_lose_on_a_tiny_table():
    """0, 0, 0, 1, 100, 100, k=2: the median 0 cuts {0,0,0} | {1,100,100}, whose range is
    99/100 -> GCP 3 * 0.99 / 6; full-domain intervals of width 2 give {0,0,0,1} (cost 1/100)
    and {100,100}: 4 * 0.01 / 6.  Refining the full-domain classes cannot lose."""
    df = pd.DataFrame({"x": [0, 0, 0, 1, 100, 100]})
    plain = Mondrian(["x"], k=2).fit(df)
    assert plain.gcp == pytest.approx(3 * 0.99 / 6)
    hx = interval_hierarchy(df["x"].unique(), [2], name="x")
    res = Anonymizer(quasi_identifiers={"x": hx}, k=2, backend="cpu", seed=0
                     ).fit(df.astype(str))
    full = certainty_penalty(res.released, df, ["x"])["gcp"]
    assert full == pytest.approx(4 * 0.01 / 6)
    refined = Mondrian(["x"], k=2).fit(df, partition=res)
    assert refined.gcp == pytest.approx(full)


def test_categorical_release_is_the_lowest_common_ancestor():
    df = pd.DataFrame({"c": ["a", "b", "a", "b", "e", "f", "e", "f"]})
    r = Mondrian(["c"], k=2, hierarchies={"c": H_CAT}).fit(df)
    # root -> children abcd (4 rows) and ef (4 rows); abcd's LCA is ab -> a, b (2 each)
    assert r.released["c"].tolist() == ["a", "b", "a", "b", "e", "f", "e", "f"]
    r4 = Mondrian(["c"], k=4, hierarchies={"c": H_CAT}).fit(df)
    assert r4.released["c"].tolist() == ["ab"] * 2 + ["ab"] * 2 + ["ef"] * 4
    assert r4.gcp == pytest.approx(1 / 5)


def test_adult_release_passes_the_checker():
    from gpuppdp import datasets

    data, h = datasets.adult()
    qids = ["age", "sex", "race", "marital-status", "education", "workclass"]
    hier = {c: h[c] for c in qids if c != "age"}
    before = data.copy()
    r = Mondrian(qids, k=10, sensitive="occupation", l=4, hierarchies=hier).fit(data)
    pd.testing.assert_frame_equal(data, before)  # the release shares columns, changes none
    measured = check(r.released, quasi_identifiers=qids, sensitive="occupation",
                     backend="cpu")
    assert measured["k"] >= 10 and measured["distinct_l"] >= 4
    assert measured["classes"] == r.partitions
    assert 0 < r.gcp < 1
    assert r.summary()["partitions"] == r.partitions


def test_errors_name_the_problem():
    df = pd.DataFrame({"x": ["1", "2", "three"], "s": ["a", "b", "a"]})
    with pytest.raises(ValueError, match="'x'.*not numbers.*'three'"):
        Mondrian(["x"], k=1).fit(df)
    with pytest.raises(ValueError, match="l needs the sensitive"):
        Mondrian(["x"], k=1, l=2).fit(df.iloc[:2])
    with pytest.raises(ValueError, match="k=4 needs at least 4"):
        Mondrian(["x"], k=4).fit(df.iloc[:2])
    with pytest.raises(ValueError, match="only 2 distinct"):
        Mondrian(["x"], k=1, sensitive="s", l=3).fit(df.iloc[:2])
    with pytest.raises(ValueError, match="fewer than k=2"):
        Mondrian(["x"], k=2).fit(df.iloc[:2], partition=[0, 1])
    with pytest.raises(ValueError, match="not quasi-identifiers"):
        Mondrian(["x"], k=1, hierarchies={"s": H_SEX}).fit(df.iloc[:2])


# -- any class-level model ---------------------------------------------------------------------
def _adult_numeric_age(rows=4000):
    from gpuppdp import datasets
    data, h = datasets.adult()
    data = data.head(rows).copy()
    data["age"] = data["age"].astype(int)
    cat = {c: h[c] for c in ["sex", "race", "marital-status", "education"]}
    return data, ["age", *cat], cat


@pytest.mark.parametrize("make,key,bound", [
    (lambda: TCloseness("occupation", 0.2, "equal"), "t_equal", 0.2),
    (lambda: EntropyLDiversity("occupation", 3), "entropy_l", 3),
    (lambda: AlphaKAnonymity("occupation", 0.4, 2), "alpha", 0.4),
])
def test_class_level_models_hold_by_the_checker(make, key, bound):
    """Mondrian with t-closeness, entropy l-diversity, (alpha,k): every partition satisfies
    the model, as the independent checker measures it on the release."""
    data, qids, cat = _adult_numeric_age()
    release = Mondrian(qids, k=5, sensitive="occupation", hierarchies=cat,
                       models=[make()]).fit(data)
    measured = check(release.released, quasi_identifiers=qids, sensitive="occupation",
                     backend="cpu")
    assert measured["k"] >= 5
    if key == "entropy_l":
        assert measured[key] >= bound - 1e-9
    else:
        assert measured[key] <= bound + 1e-12
    # cutting went as far as the model allows: not the one-partition release
    assert len(np.unique(release.partition)) > 1


def test_distinct_l_as_a_model_is_the_l_parameter():
    data, qids, cat = _adult_numeric_age(2000)
    by_l = Mondrian(qids, k=4, sensitive="occupation", hierarchies=cat, l=3).fit(data)
    by_model = Mondrian(qids, k=4, sensitive="occupation", hierarchies=cat,
                        models=[DistinctLDiversity("occupation", 3)]).fit(data)
    np.testing.assert_array_equal(by_l.partition, by_model.partition)
    assert by_l.gcp == by_model.gcp


def test_models_that_are_not_class_level_or_on_another_column_are_refused():
    data, qids, cat = _adult_numeric_age(500)
    with pytest.raises(ValueError, match="class-level models only"):
        Mondrian(qids, k=5, sensitive="occupation", hierarchies=cat,
                 models=[LKCPrivacy(2, 5, 0.5, attribute="occupation")]).fit(data)
    with pytest.raises(ValueError, match="refers to 'workclass'"):
        Mondrian(qids, k=5, sensitive="occupation", hierarchies=cat,
                 models=[DistinctLDiversity("workclass", 2)]).fit(data)
    with pytest.raises(ValueError, match="no release satisfies them"):
        Mondrian(qids, k=5, sensitive="occupation", hierarchies=cat,
                 models=[DistinctLDiversity("occupation", 40)]).fit(data)


def test_quasi_identifiers_as_a_mapping_as_the_anonymizer_takes_them():
    """``{QID: Hierarchy or None}`` gives the same release as names plus ``hierarchies=``;
    both at once is refused; the parameters are the repr."""
    df = pd.DataFrame({"x": [1, 2, 3, 4, 5, 6], "c": ["a", "b", "c", "d", "e", "f"]})
    by_names = Mondrian(["x", "c"], k=2, hierarchies={"c": H_CAT}).fit(df)
    by_map = Mondrian({"x": None, "c": H_CAT}, k=2).fit(df)
    pd.testing.assert_frame_equal(by_names.released, by_map.released)
    assert by_names.partition.tolist() == by_map.partition.tolist()
    with pytest.raises(ValueError, match="not both"):
        Mondrian({"x": None, "c": H_CAT}, k=2, hierarchies={"c": H_CAT})
    assert repr(Mondrian(["x"], k=3)).startswith("Mondrian(quasi_identifiers=['x'], k=3")


def test_roles_of_the_other_columns():
    """``identifying`` columns and, with ``others="drop"``, those with no role are left out
    of the release; ``others="error"`` refuses columns with no role."""
    df = pd.DataFrame({"x": [1, 2, 3, 4], "id": [9, 8, 7, 6], "note": list("abcd")})
    r = Mondrian(["x"], k=2, identifying=["id"], others="drop").fit(df)
    assert list(r.released.columns) == ["x"]
    assert r.removed_columns == ["id", "note"] and r.dropped_columns == ["note"]
    kept = Mondrian(["x"], k=2, identifying=["id"]).fit(df)
    assert list(kept.released.columns) == ["x", "note"]
    with pytest.raises(ValueError, match="1 column\\(s\\) have no role: 'note'"):
        Mondrian(["x"], k=2, identifying=["id"], others="error").fit(df)


# -- the rounds on a device backend ------------------------------------------------------------
def _same_release(device, cpu):
    np.testing.assert_array_equal(device.partition, cpu.partition)
    pd.testing.assert_frame_equal(device.released, cpu.released)
    assert (device.ncp, device.gcp, device.rounds) == (cpu.ncp, cpu.gcp, cpu.rounds)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("l", [None, 4])
def test_device_rounds_release_what_the_cpu_does_on_adult(backend, strict, l):
    """Strict and relaxed, k and distinct l: the backend's rounds (the strict CuPy stand-in,
    CuPy in the GPU tier) give the CPU's partition ids and release, with a few scalars per
    round back on the host, however many partitions."""
    from gpuppdp import datasets
    from gpuppdp.testing import device_to_host_count

    data, h = datasets.adult()
    qids = ["age", "sex", "race", "marital-status", "education", "workclass"]
    kw = dict(k=10, sensitive="occupation" if l else None, l=l, strict=strict,
              hierarchies={c: h[c] for c in qids if c != "age"})
    cpu = Mondrian(qids, **kw).fit(data)
    before = device_to_host_count()
    device = Mondrian(qids, backend=backend, **kw).fit(data)
    _same_release(device, cpu)
    assert cpu.partitions > 500
    assert device_to_host_count() - before <= 15 * device.rounds


@pytest.mark.parametrize("seed", range(8))
def test_device_rounds_release_what_the_cpu_does_on_random_tables(backend, seed):
    """Random tables (numeric and categorical QIDs, ties, k, l, strict or relaxed, a
    starting partition, a class-level model judged on the device): the CPU's release."""
    rng = np.random.default_rng(seed)
    df = _table(rng, int(rng.integers(100, 400)), with_cat=bool(seed % 2))
    qids = ["x", "y", "c"] if seed % 2 else ["x", "y"]
    k = int(rng.integers(2, 9))
    l = [None, 2, 3][seed % 3]
    models = [TCloseness("s", 0.5, "equal")] if seed % 4 == 3 else []
    kw = dict(k=k, sensitive="s", l=l, strict=seed % 4 < 2, models=models,
              hierarchies={"c": H_CAT} if seed % 2 else None)
    start = (df["y"] > 2).to_numpy() if l is None else None  # classes of ~n/2 rows
    cpu = Mondrian(qids, **kw).fit(df, partition=start)
    _same_release(Mondrian(qids, backend=backend, **kw).fit(df, partition=start), cpu)


def test_device_rounds_judge_class_level_models_as_the_cpu_does(backend):
    data, qids, cat = _adult_numeric_age(3000)
    kw = dict(k=4, sensitive="occupation", hierarchies=cat,
              models=[EntropyLDiversity("occupation", 2.5), AlphaKAnonymity("occupation", 0.5, 2)])
    _same_release(Mondrian(qids, backend=backend, **kw).fit(data), Mondrian(qids, **kw).fit(data))
