"""Cross-release attacks (gpuppdp.attacks.linkage): hand-built releases whose outcome is known,
a brute-force reference over every pairing of the rows, and the command line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp.attacks import LinkageRisk, check_release, linkage_attack
from gpuppdp.cli.main import main
from gpuppdp.hierarchy import Hierarchy

AGE = Hierarchy([["20", "21", "30", "31"], ["2*", "2*", "3*", "3*"], ["*"] * 4], name="age")
SEX = Hierarchy([["M", "F"], ["*", "*"]], name="sex")
H = {"age": AGE, "sex": SEX}
QIDS = ["age", "sex"]


def _complementary(people):
    """A: age at level 1, sex kept; B: age kept, sex suppressed (Sweeney's complementary
    generalizations of one table)."""
    a = people.assign(age=AGE.generalize(people["age"], 1))
    b = people.assign(sex=SEX.generalize(people["sex"], 1))
    return a, b


# ------------------------------------------------------------------------ (a) complementary

def test_complementary_hand_example():
    # each release alone is 2-anonymous; joined on the disease with row-count reasoning:
    # (2*,M,flu) must be B's (20,*,flu), so a target (21,M) is A's (2*,M,cold) row only, and a
    # target (20,F) has one B candidate, (20,*,cold)
    people = pd.DataFrame({"age": ["20", "21", "20", "21"], "sex": ["M", "M", "F", "F"],
                           "disease": ["flu", "cold", "cold", "cold"]})
    a, b = _complementary(people)
    r = linkage_attack(a, b, QIDS, H, sensitive="disease", k=2)
    assert r.mode == "complementary" and r.link_on == ["disease"]
    assert (r.compatible_pairs, r.usable_pairs) == (5, 5)
    assert r.records["candidates"].tolist() == [2, 1, 1, 1]
    assert r.records["candidates_alone"].tolist() == [2, 2, 2, 2]
    assert r.records["newly_below_k"].tolist() == [False, True, True, True]
    assert r.records["sensitive_certain"].tolist() == [False, True, True, True]
    # every certain value was already certain in one release alone (B's (21,*) is all cold,
    # A's (2*,F) is all cold)
    assert not r.records["newly_certain"].any()
    cells = r.cells.set_index(QIDS)
    assert cells.loc[("21", "M"), "candidates_a"] == 1
    assert cells.loc[("20", "F"), "candidates_b"] == 1
    assert cells.loc[("20", "M"), "candidates"] == 2
    assert bool(cells.loc[("21", "M"), "certain"]) and cells.loc[("21", "M"), "value"] == "cold"
    assert len(r.differences) == 0 and not r.row_order["leaked"]
    with pytest.raises(LinkageRisk, match="fewer than k=2 candidates"):
        check_release(b, a, QIDS, H, sensitive="disease", k=2)


def test_complementary_safe_example_passes():
    # the diseases pair up both ways: two perfect matchings, nothing narrows
    people = pd.DataFrame({"age": ["20", "21", "20", "21"], "sex": ["M", "M", "F", "F"],
                           "disease": ["flu", "cold", "cold", "flu"]})
    a, b = _complementary(people)
    r = check_release(b, a, QIDS, H, sensitive="disease", k=2)
    assert r.records["candidates"].tolist() == [2, 2, 2, 2]
    assert not r.records["sensitive_certain"].any()


def test_row_count_reasoning_drops_pairs_on_no_matching():
    # A shows (2*,M) twice and suppresses the third person; B shows exact ages.  (*,*) meets
    # every B row, but the two (2*,M) rows need (20,*) and (21,*): (*,*) must be (30,*)
    a = pd.DataFrame({"age": ["2*", "2*", "*"], "sex": ["M", "M", "*"]})
    b = pd.DataFrame({"age": ["20", "21", "30"], "sex": ["*", "*", "*"]})
    r = linkage_attack(a, b, QIDS, H, k=2)
    assert r.link_on == [] and r.mode == "complementary"
    assert (r.compatible_pairs, r.usable_pairs) == (5, 3)
    cells = r.cells.set_index(QIDS)
    assert cells.loc[("20", "M"), "candidates_a"] == 2          # not the suppressed row
    assert cells.loc[("20", "M"), "alone_a"] == 3
    assert set(r.cells["age"]) == {"20", "21", "30"}
    # without the matching argument (temporal) the suppressed row stays a candidate
    t = linkage_attack(a, b, QIDS, H, k=2, mode="temporal")
    assert t.usable_pairs == 5
    assert t.cells.set_index(QIDS).loc[("20", "M"), "candidates_a"] == 3


def test_complementary_mode_needs_one_population():
    a = pd.DataFrame({"age": ["2*", "2*"], "sex": ["M", "M"]})
    b = pd.DataFrame({"age": ["30", "31"], "sex": ["*", "*"]})
    with pytest.raises(ValueError, match="not of one population"):
        linkage_attack(a, b, QIDS, H, mode="complementary")
    assert linkage_attack(a, b, QIDS, H).mode == "temporal"


# ------------------------------------------------------------------------------ (b) temporal

def _temporal_base():
    return pd.DataFrame({"age": ["2*"] * 4 + ["3*"] * 3,
                         "sex": ["M", "M", "F", "F", "M", "M", "M"],
                         "disease": ["flu", "cold", "flu", "cold", "flu", "cold", "hiv"]})


def test_difference_attack_one_added_record():
    a = _temporal_base()
    b = pd.concat([a, pd.DataFrame({"age": ["2*"], "sex": ["F"], "disease": ["hiv"]})],
                  ignore_index=True).sample(frac=1, random_state=1).reset_index(drop=True)
    r = linkage_attack(a, b, QIDS, H, sensitive="disease", k=2)
    assert r.mode == "temporal"
    d = r.differences
    assert len(d) == 1
    assert d.iloc[0][["age", "sex", "count_a", "count_b", "delta", "revealed"]].tolist() == \
        ["2*", "F", 2, 3, 1, "hiv"]
    assert r.summary()["difference"] == {"changed_blocks": 1, "changed_by_one": 1,
                                         "revealed": 1}
    with pytest.raises(LinkageRisk, match="difference attack"):
        check_release(b, a, QIDS, H, sensitive="disease", k=2)


def test_difference_attack_removed_and_mixed():
    a = _temporal_base()
    # one (3*,M,hiv) removed: revealed; two (2*,M) of different values added: not revealed
    b = pd.concat([a.iloc[:6], pd.DataFrame({"age": ["2*", "2*"], "sex": ["M", "M"],
                                             "disease": ["flu", "hiv"]})], ignore_index=True)
    r = linkage_attack(a, b, QIDS, H, sensitive="disease", k=2)
    d = r.differences.set_index(QIDS)
    assert d.loc[("3*", "M"), "delta"] == -1 and d.loc[("3*", "M"), "revealed"] == "hiv"
    assert d.loc[("2*", "M"), "delta"] == 2 and pd.isna(d.loc[("2*", "M"), "revealed"])


def test_difference_attack_across_generalizations():
    # B generalizes sex; the blocks are (2*,*) and (3*,*); one flu added to (2*, F)
    a = _temporal_base()
    b = pd.concat([a, pd.DataFrame({"age": ["2*"], "sex": ["F"], "disease": ["flu"]})],
                  ignore_index=True).assign(sex="*")
    r = linkage_attack(a, b, QIDS, H, sensitive="disease", k=2)
    assert len(r.differences) == 1
    row = r.differences.iloc[0]
    assert row["age"] == "2*" and (row["count_a"], row["count_b"]) == (4, 5)
    assert row["revealed"] == "flu"


# ---------------------------------------------------------------------------- (c) row order

AGE20 = Hierarchy([[str(v) for v in range(20)], [f"{v // 5 * 5}-{v // 5 * 5 + 4}"
                                                for v in range(20)], ["*"] * 20], name="age")
ZIP = Hierarchy([[f"z{v}" for v in range(10)], [f"z{v // 5}*" for v in range(10)],
                 ["*"] * 10], name="zip")


def _population(seed, n=80):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(0, 20, n).astype(str),
                         "zip": [f"z{v}" for v in rng.integers(0, 10, n)]})


def test_row_order_leak_links_rows():
    people = _population(0)
    hier = {"age": AGE20, "zip": ZIP}
    a = people.assign(age=AGE20.generalize(people["age"], 1))
    b = people.assign(zip=ZIP.generalize(people["zip"], 1))
    r = linkage_attack(a, b, ["age", "zip"], hier, k=2)
    assert r.row_order["leaked"] and r.row_order["in_order"] == len(people)
    # row i linked to row i: the exact (age, zip) of every row; its candidates are the people
    # sharing it
    exact = people.groupby(["age", "zip"])["age"].transform("size").to_numpy()
    assert r.order_records["candidates"].tolist() == exact.tolist()
    shuffled = b.sample(frac=1, random_state=3).reset_index(drop=True)
    r2 = linkage_attack(a, shuffled, ["age", "zip"], hier, k=2)
    assert not r2.row_order["leaked"] and r2.order_records is None


def test_row_order_with_appended_and_dropped_records():
    people = _population(1, 90)
    hier = {"age": AGE20, "zip": ZIP}
    a = people.iloc[:80].assign(age=AGE20.generalize(people["age"].iloc[:80], 1))
    # 10 records appended: the same start
    b = people.assign(zip=ZIP.generalize(people["zip"], 1))
    r = linkage_attack(a, b, ["age", "zip"], hier, k=2)
    assert r.mode == "temporal"
    assert r.row_order["leaked"] and r.row_order["shift"] == 0
    assert r.row_order["aligned_rows"] == 80 and r.row_order["in_order"] == 80
    # a sliding window: the first 10 dropped, 10 appended (row i + 10 of A is row i of B)
    b2 = people.iloc[10:].assign(zip=ZIP.generalize(people["zip"].iloc[10:], 1)) \
        .reset_index(drop=True)
    r2 = linkage_attack(a, b2, ["age", "zip"], hier, k=2)
    assert r2.row_order["leaked"] and r2.row_order["shift"] == 10
    assert r2.row_order["aligned_rows"] == 70
    linked = r2.order_records["candidates"].to_numpy()
    assert (linked[:10] == 0).all()                   # the dropped rows link to nothing
    exact = people.iloc[10:80].groupby(["age", "zip"])["age"].transform("size").to_numpy()
    assert linked[10:].tolist() == exact.tolist()


# ---------------------------------------------------------------- brute-force reference

def _covers(h, label, leaf):
    if label == "*":
        return True
    for level in range(h.height + 1):
        if label in h.labels(level).tolist():
            return h.generalize([leaf], level)[0] == label
    return False


def _naive(a, b, hier, qids, link, k):
    """Every perfect matching enumerated; per row of A the worst cell of its region."""
    n = len(a)
    leaves = list(itertools.product(*[hier[q].leaves.tolist() for q in qids]))

    def cov(t, i, x):
        return all(_covers(hier[q], t[q].iloc[i], x[j]) for j, q in enumerate(qids))

    def compat(i, j):
        if any(a[c].iloc[i] != b[c].iloc[j] for c in link):
            return False
        return any(cov(a, i, x) and cov(b, j, x) for x in leaves)

    ok = [[compat(i, j) for j in range(n)] for i in range(n)]
    usable = set()
    for perm in itertools.permutations(range(n)):
        if all(ok[i][perm[i]] for i in range(n)):
            usable.update((i, perm[i]) for i in range(n))
    cand, alone, certain = {}, {}, {}
    for x in leaves:
        ca = {i for (i, j) in usable if cov(a, i, x) and cov(b, j, x)}
        cb = {j for (i, j) in usable if cov(a, i, x) and cov(b, j, x)}
        cand[x] = min(len(ca), len(cb))
        alone[x] = min(sum(cov(a, i, x) for i in range(n)), sum(cov(b, j, x) for j in range(n)))
        certain[x] = bool(link) and len({a[link[0]].iloc[i] for i in ca}) == 1
    out = []
    for i in range(n):
        region = [x for x in leaves if any(cov(a, i, x) and cov(b, j, x)
                                           for (ii, j) in usable if ii == i)]
        out.append((min(cand[x] for x in region), min(alone[x] for x in region),
                    any(cand[x] < k <= alone[x] for x in region),
                    any(certain[x] for x in region)))
    return out, bool(usable)


def _generalize_rows(people, hier, qids, rng, local):
    out = people.copy()
    levels = {q: int(rng.integers(0, hier[q].height + 1)) for q in qids}
    for q in qids:
        if local:
            lv = rng.integers(0, hier[q].height + 1, len(people))
            out[q] = [hier[q].generalize([v], int(v_l))[0] for v, v_l in zip(people[q], lv)]
        else:
            out[q] = hier[q].generalize(people[q], levels[q])
    return out


@pytest.mark.parametrize("seed", range(30))
def test_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    people = pd.DataFrame({"age": rng.choice(AGE.leaves.tolist(), n),
                           "sex": rng.choice(SEX.leaves.tolist(), n),
                           "d": rng.choice(["x", "y"], n)})
    local = bool(seed % 3 == 0)
    a = _generalize_rows(people, H, QIDS, rng, local)
    b = _generalize_rows(people, H, QIDS, rng, local).sample(
        frac=1, random_state=seed).reset_index(drop=True)
    link = ["d"] if seed % 2 else []
    if not link:
        a, b = a[QIDS], b[QIDS]
    k = int(rng.integers(2, 4))
    r = linkage_attack(a, b, QIDS, H, k=k, mode="complementary",
                       sensitive="d" if link else None)
    want, _ = _naive(a, b, H, QIDS, link, k)
    got = list(zip(r.records["candidates"], r.records["candidates_alone"],
                   r.records["newly_below_k"], r.records["sensitive_certain"]))
    assert [(int(c), int(al), bool(f), bool(s)) for c, al, f, s in got] == want


@pytest.mark.parametrize("seed", range(10))
def test_a_release_with_itself_discloses_nothing_new(seed):
    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(5, 40))
    people = pd.DataFrame({"age": rng.choice(AGE.leaves.tolist(), n),
                           "sex": rng.choice(SEX.leaves.tolist(), n),
                           "d": rng.choice(["x", "y", "z"], n)})
    a = _generalize_rows(people, H, QIDS, rng, local=False)
    b = a.sample(frac=1, random_state=seed).reset_index(drop=True)
    r = linkage_attack(a, b, QIDS, H, sensitive="d", k=3)
    assert r.mode == "complementary"
    assert not r.records["newly_below_k"].any() and not r.records["newly_certain"].any()
    sizes = a.groupby(QIDS)["d"].transform("size").to_numpy()
    assert r.records["candidates"].tolist() == sizes.tolist()
    assert len(r.differences) == 0


def test_chunked_single_release_counts(monkeypatch):
    from gpuppdp.attacks import linkage
    people = _population(4, 120).assign(d=lambda t: np.where(t.index % 3 == 0, "x", "y"))
    hier = {"age": AGE20, "zip": ZIP}
    a = people.assign(age=AGE20.generalize(people["age"], 1))
    b = people.assign(zip=ZIP.generalize(people["zip"], 1)).sample(frac=1, random_state=0)
    whole = linkage_attack(a, b, ["age", "zip"], hier, sensitive="d", k=3)
    monkeypatch.setattr(linkage, "_CHUNK", 7)
    chunked = linkage_attack(a, b, ["age", "zip"], hier, sensitive="d", k=3)
    pd.testing.assert_frame_equal(whole.cells, chunked.cells)
    pd.testing.assert_frame_equal(whole.records, chunked.records)


# ------------------------------------------------------------------------------ command line

def test_cli_linkage_and_check(tmp_path, capsys):
    (tmp_path / "age.csv").write_text("20;2*;*\n21;2*;*\n30;3*;*\n31;3*;*\n")
    (tmp_path / "sex.csv").write_text("M;*\nF;*\n")
    people = pd.DataFrame({"age": ["20", "21", "20", "21"], "sex": ["M", "M", "F", "F"],
                           "disease": ["flu", "cold", "cold", "cold"]})
    a, b = _complementary(people)
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    args = ["attack", "linkage", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"),
            "--qi", f"age={tmp_path / 'age.csv'}", "--qi", f"sex={tmp_path / 'sex.csv'}",
            "--sensitive", "disease", "--json", str(tmp_path / "out.json")]
    assert main(args) == 0
    summary = json.loads((tmp_path / "out.json").read_text())
    assert summary["linkage"]["newly_below_k"] == 3 and summary["mode"] == "complementary"
    capsys.readouterr()
    assert main(args + ["--check"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused" in err[0]
    # the same release twice passes
    assert main(args[:3] + [str(tmp_path / "a.csv")] + args[4:] + ["--check"]) == 0
