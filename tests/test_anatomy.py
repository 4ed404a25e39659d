"""Anatomy (gpuppdp.algorithms.anatomy): the bucket kernel against a naive reference, every release
l-diverse by the independent checker, the paper's worked example, caller-given groups and the
``gpuppdp anatomize`` command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuppdp.algorithms import Anatomy
from gpuppdp.algorithms.anatomy import _bucket_groups
from gpuppdp.analysis.checker import check
from gpuppdp.cli.main import main
from gpuppdp.queries import estimate_count

# Xiao & Tao, VLDB 2006, Table 1 (the microdata) and its 2-diverse partition (Table 3)
MICRODATA = pd.DataFrame({
    "age": [23, 27, 35, 59, 61, 65, 65, 70],
    "sex": ["M", "M", "M", "M", "F", "F", "F", "F"],
    "zipcode": [11000, 13000, 59000, 12000, 54000, 25000, 25000, 30000],
    "disease": ["pneumonia", "dyspepsia", "dyspepsia", "pneumonia", "flu", "gastritis", "flu",
                "bronchitis"]})
QIDS = ["age", "sex", "zipcode"]


def _naive_buckets(counts, l):
    """The paper's loop, literally: one row from each of the l largest buckets (ties: the
    smaller value) while l buckets are non-empty; the group of each row, rows by value."""
    remaining = list(counts)
    taken = [0] * len(counts)
    groups = [[-1] * c for c in counts]
    g = 0
    while sum(1 for c in remaining if c > 0) >= l:
        top = sorted((v for v in range(len(counts)) if remaining[v] > 0),
                     key=lambda v: (-remaining[v], v))[:l]
        for v in top:
            groups[v][taken[v]] = g
            taken[v] += 1
            remaining[v] -= 1
        g += 1
    return [x for gs in groups for x in gs], g


@settings(max_examples=80, deadline=None)
@given(counts=st.lists(st.integers(0, 12), min_size=1, max_size=8), l=st.integers(2, 5))
def test_bucket_kernel_equals_the_papers_loop(counts, l):
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    group, n_groups = _bucket_groups(ptr, l)
    expected, g = _naive_buckets(counts, l)
    assert n_groups == g
    assert group.tolist() == expected


@st.composite
def _tables(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    l = draw(st.integers(2, 4))
    n_values = draw(st.integers(l, 7))
    n = draw(st.integers(l, 80))
    rng = np.random.default_rng(seed)
    sens = rng.integers(0, n_values, n)
    return pd.DataFrame({"a": rng.integers(0, 9, n), "b": rng.choice(list("xyz"), n),
                         "s": [f"v{v}" for v in sens]}), l, seed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables())
def test_every_release_is_l_diverse_and_faithful(case):
    df, l, seed = case
    top = df["s"].value_counts().max()
    if top * l > len(df):
        with pytest.raises(ValueError, match="not .*-eligible"):
            Anatomy(quasi_identifiers=["a", "b"], sensitive="s", l=l, seed=seed).fit(df)
        return
    r = Anatomy(quasi_identifiers=["a", "b"], sensitive="s", l=l, seed=seed).fit(df)
    # the QIT: the QIDs unmodified, in order
    pd.testing.assert_frame_equal(r.qit[["a", "b"]], df[["a", "b"]])
    # the independent checker on (group, sensitive): every value on at most 1/l of a group
    joined = pd.DataFrame({"group_id": r.qit["group_id"], "s": df["s"]})
    measured = check(joined, quasi_identifiers=["group_id"], sensitive="s", backend="cpu")
    assert measured["alpha"] <= 1 / l + 1e-12
    assert measured["distinct_l"] >= l and measured["k"] >= l
    # the ST: exactly the sensitive counts of every group (a naive group-by)
    naive = (joined.groupby(["group_id", "s"]).size().rename("count").reset_index()
             .sort_values(["group_id", "s"]).reset_index(drop=True))
    got = r.st.sort_values(["group_id", "s"]).reset_index(drop=True)
    assert got.to_dict("list") == naive.to_dict("list")
    assert r.groups == joined["group_id"].nunique() == r.qit["group_id"].max()
    # the same seed, the same release
    again = Anatomy(quasi_identifiers=["a", "b"], sensitive="s", l=l, seed=seed).fit(df)
    assert again.qit["group_id"].tolist() == r.qit["group_id"].tolist()


def test_the_papers_example_by_hand():
    """Xiao & Tao's Table 3: tuples 1-4 and 5-8 as the two groups; the ST holds (1,
    dyspepsia, 2), (1, pneumonia, 2), (2, bronchitis, 1), (2, flu, 2), (2, gastritis, 1)."""
    r = Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2).fit(
        MICRODATA, groups=[1, 1, 1, 1, 2, 2, 2, 2])
    assert r.qit["group_id"].tolist() == [1, 1, 1, 1, 2, 2, 2, 2]
    assert list(r.st.itertuples(index=False, name=None)) == [
        (1, "dyspepsia", 2), (1, "pneumonia", 2), (2, "bronchitis", 1), (2, "flu", 2),
        (2, "gastritis", 1)]
    # the paper's query: pneumonia, age <= 30, zipcode in [10001, 20000]: tuples 1 and 2 of
    # group 1 qualify on the QIT, each pneumonia with probability 2/4 -> 1 (actual: 1)
    where = {"disease": "pneumonia", "age": (0, 30), "zipcode": (10001, 20000)}
    assert estimate_count(r, where) == pytest.approx(1.0)


def test_the_bucket_algorithm_on_the_papers_table():
    """Counts 2, 2, 2, 1, 1 (pneumonia, dyspepsia, flu, gastritis, bronchitis): groups take
    the two largest buckets each time; every group holds two distinct values."""
    r = Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2, seed=3).fit(MICRODATA)
    assert r.groups == 4
    assert r.st.groupby("group_id")["count"].max().max() == 1
    assert r.st["count"].sum() == 8


def test_given_groups_that_are_not_diverse_are_refused_by_name():
    df = MICRODATA.assign(g=["x", "a", "a", "x", "y", "y", "y", "y"])
    with pytest.raises(ValueError, match=r"group 'x' is not 2-diverse: 2 of its 2 rows have "
                                         r"disease='pneumonia' \(more than 1/2\); 2 group"):
        Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2).fit(df, groups="g")
    ok = Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2).fit(
        df, groups=["x", "a", "x", "a", "y", "y", "y", "y"])
    assert ok.groups == 3 and ok.qit["group_id"].tolist() == [1, 2, 1, 2, 3, 3, 3, 3]
    bad = MICRODATA.assign(g=[1, 2, 2, 1, 3, 3, 4, 4])   # group 1: pneumonia twice
    with pytest.raises(ValueError, match=r"group 1 is not 2-diverse: 2 of its 2 rows have "
                                         r"disease='pneumonia'"):
        Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2).fit(bad, groups="g")


def test_ineligible_and_bad_parameters():
    with pytest.raises(ValueError, match="not 5-eligible"):
        Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=5).fit(MICRODATA)
    with pytest.raises(ValueError, match="l must be an integer >= 2"):
        Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=1).fit(MICRODATA)
    with pytest.raises(ValueError, match="quasi-identifier and as the sensitive"):
        Anatomy(quasi_identifiers=QIDS, sensitive="sex", l=2).fit(MICRODATA)
    with pytest.raises(ValueError, match="groups has 3 labels"):
        Anatomy(quasi_identifiers=QIDS, sensitive="disease", l=2).fit(MICRODATA, groups=[1, 2, 3])


def test_cli_writes_both_tables(tmp_path, capsys):
    src = tmp_path / "micro.csv"
    MICRODATA.to_csv(src, sep=";", index=False)
    qit, st_, js = tmp_path / "qit.csv", tmp_path / "st.csv", tmp_path / "a.json"
    code = main(["anatomize", str(src), "--qi", "age", "sex", "--qi", "zipcode",
                 "--sensitive", "disease", "--l", "2", "--qit", str(qit), "--st", str(st_),
                 "--json", str(js), "--seed", "1"])
    assert code == 0
    q = pd.read_csv(qit, sep=";", dtype=str)
    s = pd.read_csv(st_, sep=";")
    assert list(q.columns) == ["age", "sex", "zipcode", "group_id"]
    assert q[QIDS].to_dict("list") == MICRODATA[QIDS].astype(str).to_dict("list")
    assert list(s.columns) == ["group_id", "disease", "count"] and s["count"].sum() == 8
    assert "4 groups" in capsys.readouterr().out
    assert js.exists()


def test_cli_error_writes_nothing(tmp_path, capsys):
    src = tmp_path / "micro.csv"
    MICRODATA.to_csv(src, sep=";", index=False)
    qit, st_ = tmp_path / "qit.csv", tmp_path / "st.csv"
    code = main(["anatomize", str(src), "--qi", "age", "--sensitive", "disease", "--l", "5",
                 "--others", "drop", "--qit", str(qit), "--st", str(st_)])
    assert code == 2
    assert "not 5-eligible" in capsys.readouterr().err
    assert not qit.exists() and not st_.exists()
    code = main(["anatomize", str(src), "--qi", "age", "--sensitive", "disease", "--l", "2",
                 "--others", "drop", "--qit", str(src), "--st", str(st_)])
    assert code == 2 and "input of this run" in capsys.readouterr().err


def test_parameters_in_the_constructor():
    """Anatomy checks and stores its parameters (its repr); fit(data) does the work."""
    anatomy = Anatomy(QIDS, sensitive="disease", l=2, seed=3)
    assert repr(anatomy) == (f"Anatomy(quasi_identifiers={QIDS!r}, sensitive='disease', "
                             "l=2, seed=3)")
    with pytest.raises(ValueError, match="quasi-identifier and as the sensitive"):
        Anatomy(QIDS, sensitive=QIDS[0], l=2)
