"""Count queries (gpuppdp.queries): estimates against a naive expansion of every released
row into the original values it stands for, hand-computed examples, workload error."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuppdp import Anonymizer
from gpuppdp.algorithms import Anatomy, Mondrian
from gpuppdp.builders import interval_hierarchy
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.queries import estimate_count, parse_interval, workload_error

LETTERS = list("abcd")
H_CAT = Hierarchy([LETTERS, ["ab", "ab", "cd", "cd"], ["*"] * 4], name="c")

SLOW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _expand(label, hierarchy=None):
    """The original values a released value stands for (naively, one by one)."""
    text = str(label)
    if hierarchy is not None:
        for L in range(hierarchy.height + 1):
            labels = hierarchy.labels(L).tolist()
            if text in labels:
                code = labels.index(text)
                return [v for v, c in zip(hierarchy.leaves, hierarchy.codes(L)) if c == code]
    if text.startswith("[") and "-" in text:
        lo, hi = text.strip("[]").split("-")
        return [str(v) for v in range(int(lo), int(hi) + 1)]
    return [text]


def _holds(value, cond):
    if isinstance(cond, tuple):
        return cond[0] <= float(value) <= cond[1]
    return str(value) == str(cond)


def _naive_count(table, where, hierarchies):
    total = 0.0
    for _, row in table.iterrows():
        sets = [_expand(row[c], hierarchies.get(c)) for c in where]
        hits = sum(all(_holds(v, cond) for v, cond in zip(combo, where.values()))
                   for combo in itertools.product(*sets))
        total += hits / np.prod([len(s) for s in sets])
    return total


def _table(seed, n):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.integers(0, 12, n), "c": rng.choice(LETTERS, n),
                         "s": rng.choice(list("pqr"), n)})


def _where(seed, table):
    rng = np.random.default_rng(seed + 1)
    a, b = sorted(rng.integers(-1, 13, 2).tolist())
    options = [{"x": (a, b)}, {"c": str(rng.choice(LETTERS))}, {"x": int(rng.integers(0, 12))},
               {"x": (a, b), "c": str(rng.choice(LETTERS))}]
    return options[int(rng.integers(len(options)))]


@SLOW
@given(seed=st.integers(0, 2**31), n=st.integers(1, 30))
def test_raw_table_counts_exactly(seed, n):
    df = _table(seed, n)
    where = _where(seed, df)
    exact = _naive_count(df, where, {})
    assert estimate_count(df, where) == pytest.approx(exact)
    assert exact == int(exact)


@SLOW
@given(seed=st.integers(0, 2**31), n=st.integers(2, 30), k=st.integers(1, 4),
       strict=st.booleans())
def test_mondrian_release_against_the_naive_expansion(seed, n, k, strict):
    df = _table(seed, n)
    if n < k:
        return
    r = Mondrian(["x", "c"], k=k, strict=strict, hierarchies={"c": H_CAT}).fit(df)
    where = _where(seed, df)
    assert estimate_count(r, where) == pytest.approx(
        _naive_count(r.released, where, {"c": H_CAT}))
    # the released DataFrame with hierarchies= gives the same
    assert estimate_count(r.released, where, hierarchies={"c": H_CAT}) == pytest.approx(
        estimate_count(r, where))


@SLOW
@given(seed=st.integers(0, 2**31), n=st.integers(4, 25), k=st.integers(1, 4))
def test_full_domain_release_against_the_naive_expansion(seed, n, k):
    df = _table(seed, n).astype(str)
    hx = interval_hierarchy(df["x"].unique(), [3, 6], name="x")
    res = Anonymizer(quasi_identifiers={"x": hx, "c": H_CAT}, k=k, backend="cpu", seed=0,
                     others="insensitive").fit(df)
    where = _where(seed, df)
    hier = {"x": hx, "c": H_CAT}
    assert estimate_count(res, where) == pytest.approx(
        _naive_count(res.released, where, hier))


@SLOW
@given(seed=st.integers(0, 2**31), n=st.integers(3, 30))
def test_anatomy_against_the_naive_expansion(seed, n):
    df = _table(seed, n)
    if df["s"].value_counts().max() * 2 > n:
        return
    r = Anatomy(quasi_identifiers=["x", "c"], sensitive="s", l=2, seed=seed).fit(df)
    where = {**_where(seed, df), "s": "p"}
    naive = 0.0
    for _, row in r.qit.iterrows():
        if not all(_holds(row[c], cond) for c, cond in where.items() if c != "s"):
            continue
        group = r.st[r.st["group_id"] == row["group_id"]]
        naive += group.loc[group["s"] == "p", "count"].sum() / group["count"].sum()
    assert estimate_count(r, where) == pytest.approx(naive)
    # without a condition on the sensitive value the QIT answers exactly
    qid_where = {c: v for c, v in where.items() if c != "s"}
    assert estimate_count(r, qid_where) == pytest.approx(_naive_count(df, qid_where, {}))


def test_interval_formats_by_hand():
    assert parse_interval("[20-29]") == (20.0, 29.0, True, True)
    assert parse_interval("20-29") == (20.0, 29.0, True, True)
    assert parse_interval("[0, 5)") == (0.0, 5.0, True, False)
    assert parse_interval("[0, 5[") == (0.0, 5.0, True, False)
    assert parse_interval("-5--1") == (-5.0, -1.0, True, True)
    assert parse_interval("Male") is None and parse_interval("[20-29") is None
    rel = pd.DataFrame({"age": ["[20-29]", "20-39", "[0, 5)", "*", "42"]})
    # 5 of 10, 5 of 20, 2 of 5 ({3, 4}), 5 of the 0..99 domain, 0
    got = estimate_count(rel, {"age": (20, 24)}, domains={"age": range(100)})
    assert got == pytest.approx(5 / 10 + 5 / 20 + 0 + 5 / 100 + 0)
    assert estimate_count(rel, {"age": (3, 10)}, domains={"age": range(100)}) == \
        pytest.approx(0 + 0 + 2 / 5 + 8 / 100)
    assert estimate_count(rel, {"age": 42}, domains={"age": range(100)}) == \
        pytest.approx(1 / 100 + 1)
    with pytest.raises(ValueError, match="'\\*' needs"):
        estimate_count(rel, {"age": 3})


def test_hierarchy_labels_by_hand():
    rel = pd.DataFrame({"c": ["ab", "a", "*", "cd"]})
    assert estimate_count(rel, {"c": "a"}, hierarchies={"c": H_CAT}) == \
        pytest.approx(1 / 2 + 1 + 1 / 4)
    with pytest.raises(ValueError, match="not in the release"):
        estimate_count(rel, {"zip": 1})
    with pytest.raises(ValueError, match="range must be"):
        estimate_count(rel, {"c": (1, 2, 3)})


def test_workload_error():
    df = _table(7, 300)
    assert workload_error(df, df, queries=50, seed=1) == 0.0
    r = Anatomy(quasi_identifiers=["x", "c"], sensitive="s", l=2, seed=0).fit(df)
    assert workload_error(df, r, queries=50, seed=1, columns=["x", "c"]) == 0.0
    details = workload_error(df, r, queries=40, seed=1, details=True)
    assert list(details.columns) == ["where", "actual", "estimate", "error"]
    assert len(details) == 40 and (details["error"] >= 0).all()
    for where, actual in zip(details["where"], details["actual"]):
        assert actual == _naive_count(df, where, {})
    m = Mondrian(["x", "c"], k=10, sensitive="s", hierarchies={"c": H_CAT}).fit(df)
    err = workload_error(df, m, queries=60, seed=2)
    assert 0 < err < 10
    again = workload_error(df, m, queries=60, seed=2)
    assert err == again
