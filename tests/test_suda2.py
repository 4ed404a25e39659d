"""SUDA2: minimal sample uniques and SUDA scores (gpuppdp.analysis.suda)."""

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis.risk import risk_report
from gpuppdp.analysis.suda import msu_weights, suda2
from gpuppdp.errors import InputError

from .test_risk import run


def brute_msus(data, qids, max_size):
    """Every (row, attributes) whose values no other row shares while no proper subset of
    them is unique, by checking every subset of every row against all rows."""
    rows = [tuple(r) for r in data[qids].astype(str).itertuples(index=False)]
    out = set()
    for s in range(1, max_size + 1):
        for cols in itertools.combinations(range(len(qids)), s):
            for i, r in enumerate(rows):
                def unique(c):
                    return sum(all(o[j] == r[j] for j in c) for o in rows) == 1
                if unique(cols) and not any(unique(sub) for t in range(1, s)
                                            for sub in itertools.combinations(cols, t)):
                    out.add((i, tuple(qids[j] for j in cols)))
    return sorted(out, key=lambda rm: (rm[0], len(rm[1]), rm[1]))


def test_sdcmicro_book_example(backend):
    """sdcMicro's test "suda2 book example" (sdcTools/sdcMicro,
    tests/testthat/test_suda2.R): scores of rows 5-8 are 4, 2, 6, 8."""
    tab = pd.DataFrame({"age": ["20s"] * 7 + ["60s"],
                        "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
                        "income": ["50k+"] * 2 + ["50k-"] * 6,
                        "education": ["highschool"] * 4 + ["university", "highschool",
                                                           "middleschool", "university"]})
    r = suda2(tab, list(tab.columns), backend)
    assert r.scores.tolist() == [0, 0, 0, 0, 4, 2, 6, 8]


def test_sdcmicro_guideline_example(backend):
    """sdcMicro's test "suda2 sdc guideline"."""
    t = pd.DataFrame({
        "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        "Gender": ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male",
                   "Female", "Female"],
        "Education": ["Secondary incomplete", "Secondary incomplete", "Primary incomplete",
                      "Secondary complete", "Secondary complete", "Secondary complete",
                      "Primary complete", "Post-secondary", "Secondary incomplete",
                      "Secondary incomplete"],
        "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed",
                  "Non-LF", "Unemployed", "Non-LF", "Non-LF"]})
    assert suda2(t, list(t.columns), backend).scores.tolist() == [0, 0, 6, 0, 12, 0, 6, 10,
                                                                  0, 0]


@pytest.mark.parametrize("order", [["a", "b", "c"], ["c", "a", "b"], ["c", "b", "a"]])
def test_sdcmicro_attribute_contributions(backend, order):
    """sdcMicro's tests "suda2 simple example contribution" 1-4: a 50 %, b and c 37.5 %."""
    d = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})[order]
    r = suda2(d, order, backend)
    assert r.attribute_contributions == {"a": 50.0, "b": 37.5, "c": 37.5}


@pytest.mark.parametrize("seed, q, max_size", [(0, 4, 4), (1, 5, 5), (2, 5, 3), (3, 6, 2)])
def test_against_brute_force(backend, seed, q, max_size):
    rng = np.random.default_rng(seed)
    n = 30
    data = pd.DataFrame({f"v{j}": rng.integers(0, 2 + j % 3, n) for j in range(q)})
    data.iloc[3] = data.iloc[4]            # a duplicate pair
    qids = list(data.columns)
    r = suda2(data, qids, backend, max_size=max_size, scoring="ihsn", dis_fraction=0.1)
    want = brute_msus(data, qids, max_size)
    assert r.msus() == want
    # scores, counts and contributions from the MSUs, written out
    w = {s: (2 ** (q - s) - 1) * math.factorial(s) * math.factorial(q - s) / math.factorial(q)
         for s in range(1, q + 1)}
    score = np.zeros(n)
    credit = np.zeros((n, q))
    for i, attrs in want:
        score[i] += w[len(attrs)]
        for a in attrs:
            credit[i, qids.index(a)] += w[len(attrs)]
    assert r.scores == pytest.approx(score, rel=1e-12)
    share = np.divide(credit, score[:, None], out=np.zeros_like(credit),
                      where=score[:, None] > 0)
    assert r.contributions == pytest.approx(share, rel=1e-12)
    assert r.msu_counts.sum() == len(want)
    for name, pct in r.attribute_contributions.items():
        assert pct == pytest.approx(100 * credit[:, qids.index(name)].sum() / score.sum())
    # DIS-SUDA (Skinner & Elliot's DIS, sdcMicro's spread), written out
    sizes = data.groupby(qids).size()
    uniques, pairs = int((sizes == 1).sum()), 2 * int((sizes == 2).sum())
    f = 0.1
    dis = uniques * f / (uniques * f + pairs * (1 - f))
    power = 1 + (8 - q) / 20
    adj = sum(s ** -power for s in score if s > 0)
    want_dis = [1 / (1 + (uniques / dis - uniques) / (s ** power * adj)) if s > 0 else 0.0
                for s in score]
    assert r.dis_scores == pytest.approx(want_dis, rel=1e-12)


def test_msu_weights():
    assert msu_weights(4, 4).tolist() == [6, 2, 1, 1]              # (M - s)!
    # sdcMicro's IHSN weights, e.g. M = 3: (2^2-1) 1! 2! / 3! = 1, (2-1) 2! 1! / 3! = 1/3
    assert msu_weights(3, 3, "ihsn") == pytest.approx([1.0, 1 / 3, 0.0])


def test_report_and_cli(tmp_path, capsys):
    d = pd.DataFrame({"a": [2, 1, 1, 5, 5], "b": [0, 3, 0, 1, 1], "c": [0, 6, 0, 2, 2]})
    rep = risk_report(d, ["a", "b", "c"], suda2=2, attributes=False)
    su = rep["suda2"]
    assert su == suda2(d, ["a", "b", "c"], max_size=2).summary()
    assert su["msus_by_size"] == {"1": 3, "2": 2} and su["records_with_msus"] == 3
    assert sum(su["dis_score_intervals"].values()) == 5 and su["dis_score_intervals"]["== 0"] == 2
    path = tmp_path / "t.csv"
    d.to_csv(path, index=False)
    out = tmp_path / "r.json"
    assert run(["risk", str(path), "--qi", "a", "b", "c", "--suda2", "--json", str(out),
                "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "special uniques (SUDA2, MSUs of at most 3 attributes): 5 MSUs" in text
    assert json.loads(out.read_text())["suda2"]["max_size"] == 3
    with pytest.raises(InputError, match="--suda2 must be at least 1"):
        run(["risk", str(path), "--qi", "a", "--suda2", "0"])


@pytest.mark.parametrize("kwargs, match", [
    ({"max_size": 4}, "max_size must be a whole number in 1..3"),
    ({"max_size": 0}, "max_size"),
    ({"dis_fraction": 1.0}, "dis_fraction"),
    ({"scoring": "x"}, "scoring"),
])
def test_bad_parameters(kwargs, match):
    d = pd.DataFrame({"a": [1, 2], "b": [1, 1], "c": [0, 0]})
    with pytest.raises(InputError, match=match):
        suda2(d, ["a", "b", "c"], **kwargs)
