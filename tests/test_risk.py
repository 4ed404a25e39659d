"""Re-identification risk (gpuppdp.analysis.risk) and the ``risk`` subcommand."""

import argparse
import itertools
import json
import math
import os

import numpy as np
import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.analysis.risk import (attribute_risks, class_sizes, pitman_uniques,
                                   population_uniqueness, risk_report, sample_risk_summary,
                                   zayatz_uniques)
from gpuppdp.backend import cpu_backend
from gpuppdp.cli.risk import register

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "data", "arx_adult_risk.json")


@pytest.fixture(scope="module")
def reference():
    with open(REFERENCE, encoding="utf-8") as fh:
        return json.load(fh)["8qid"]


@pytest.fixture(scope="module")
def adult_data():
    return datasets.adult()[0]


@pytest.fixture(scope="module")
def adult_report(adult_data, reference):
    return risk_report(adult_data, reference["quasi_identifiers"],
                       population_size=reference["population_size"], backend=cpu_backend())


# ------------------------------------------------------------------------ golden (ARX 3.9.2)

SUMMARY_KEYS = ["records", "equivalence_classes", "sample_uniques", "sample_uniques_fraction",
                "prosecutor_highest_risk", "prosecutor_lowest_risk", "prosecutor_average_risk",
                "marketer_risk"]


def test_sample_summary_matches_arx(adult_report, reference):
    for key in SUMMARY_KEYS:
        assert adult_report[key] == pytest.approx(reference[key], rel=1e-12, abs=0), key
    # journalist = prosecutor without a population table
    for what in ("highest", "lowest", "average"):
        assert adult_report[f"journalist_{what}_risk"] == adult_report[f"prosecutor_{what}_risk"]
    assert adult_report["records_at_risk"].keys() == reference["records_at_risk"].keys()
    for t, v in reference["records_at_risk"].items():
        assert adult_report["records_at_risk"][t] == pytest.approx(v, rel=1e-12), t


def test_population_uniqueness_matches_arx(adult_report, reference):
    ref = reference["population_uniqueness"]
    got = adult_report["population_uniqueness"]
    assert adult_report["population_size"] == reference["population_size"]
    assert got["pitman"] == pytest.approx(ref["pitman"], rel=1e-9)
    assert got["zayatz"] == pytest.approx(ref["zayatz"], rel=1e-12)
    assert got["dankar_choice"] == ref["dankar_choice"] == "pitman"
    assert got["dankar"] == got["pitman"]
    assert got["snb"] is None  # ARX's SNB equations have no solution here (ARX reports 0)


def test_attribute_risks_match_arx(adult_report, reference):
    got = adult_report["attribute_risks"]
    ref = reference["attribute_risks"]
    assert len(got) == len(ref) == 2 ** 8 - 1
    assert list(got) == list(ref)  # same keys, same order (size, distinction, separation)
    for key, v in ref.items():
        assert abs(got[key]["distinction"] - v["distinction"]) <= 5e-7, key
        assert abs(got[key]["separation"] - v["separation"]) <= 5e-7, key


# ------------------------------------------------------------------------ worked examples

def test_five_row_example(backend):
    data = pd.DataFrame({"Age": ["30", "30", "40", "40", "50"],
                         "Sex": ["M", "M", "F", "F", "M"],
                         "State": ["CA", "CA", "NY", "CA", "NY"]})
    risks = {r.name: r for r in attribute_risks(data, ["Age", "Sex", "State"], backend)}
    assert risks["Age"].distinction == pytest.approx(0.6)
    assert risks["Age"].separation == pytest.approx(0.8)
    assert risks["Sex, State"].distinction == pytest.approx(0.8)
    assert risks["Sex, State"].separation == pytest.approx(0.9)
    assert len(risks) == 7


def test_gender_year_of_birth_example(backend):
    rows = ([("M", 1975)] * 3 + [("F", 1976)] * 2 + [("M", 1971), ("F", 1972), ("M", 1983),
                                                        ("F", 1985), ("M", 1988), ("F", 1991)])
    data = pd.DataFrame(rows, columns=["Gender", "Year"])
    s = sample_risk_summary(class_sizes(data, ["Gender", "Year"], backend), backend)
    assert (s.records, s.equivalence_classes) == (11, 8)
    assert s.prosecutor_lowest_risk == pytest.approx(1 / 3)
    assert s.prosecutor_highest_risk == 1.0
    assert s.prosecutor_average_risk == pytest.approx(8 / 11)
    assert s.sample_uniques == 6
    decades = data.assign(Year=(data["Year"] // 10 * 10).astype(str) + "s")
    s = sample_risk_summary(class_sizes(decades, ["Gender", "Year"], backend), backend)
    assert s.equivalence_classes == 5
    assert s.prosecutor_average_risk == pytest.approx(5 / 11)
    assert s.marketer_risk == pytest.approx(5 / 11)
    assert s.prosecutor_lowest_risk == pytest.approx(1 / 4)


def test_records_at_risk_counts_strictly_above_the_threshold():
    # sizes 1, 2, 5, 10, 20: risks 1, 0.5, 0.2, 0.1, 0.05
    s = sample_risk_summary(np.array([1, 2, 5, 10, 20]))
    assert s.records == 38
    assert s.records_at_risk == {"0.50": 1 / 38, "0.20": 3 / 38, "0.10": 8 / 38,
                                 "0.05": 18 / 38}


# ------------------------------------------------------------------------ backends, checker

def _naive(data, qids):
    n = len(data)
    out = {}
    for r in range(1, len(qids) + 1):
        for sub in itertools.combinations(qids, r):
            sizes = data.groupby(list(sub), dropna=False).size().to_numpy()
            out[", ".join(sub)] = (len(sizes) / n,
                                   1 - (sizes * (sizes - 1)).sum() / (n * (n - 1)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_attribute_risks_agree_with_a_naive_checker(backend, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    q = int(rng.integers(1, 5))
    qids = [f"c{j}" for j in rng.permutation(6)[:q]]
    data = pd.DataFrame({c: rng.integers(0, int(rng.integers(1, 8)), n).astype(str)
                         for c in qids})
    data["other"] = "x"
    got = {r.name: (r.distinction, r.separation) for r in attribute_risks(data, qids, backend)}
    want = _naive(data, qids)
    assert got.keys() == want.keys()
    for k, (d, s) in want.items():
        assert got[k][0] == pytest.approx(d, abs=1e-12), k
        assert got[k][1] == pytest.approx(s, abs=1e-12), k


def test_backends_agree_on_adult(backend, adult_data, adult_report, reference):
    rep = risk_report(adult_data, reference["quasi_identifiers"],
                      population_size=reference["population_size"], backend=backend)
    assert rep == adult_report


def test_attribute_risk_filters_and_sorting():
    data = pd.DataFrame({"a": list("aabbc"), "b": list("xyxyx"), "c": list("11111")})
    all_ = attribute_risks(data, ["a", "b", "c"])
    assert len(all_) == 7
    top = attribute_risks(data, ["a", "b", "c"], sort="distinction")
    assert [r.distinction for r in top] == sorted((r.distinction for r in all_), reverse=True)
    small = attribute_risks(data, ["a", "b", "c"], max_size=1)
    assert sorted(r.name for r in small) == ["a", "b", "c"]
    assert all(r.distinction >= 0.5 for r in attribute_risks(data, ["a", "b", "c"],
                                                             min_distinction=0.5))
    assert attribute_risks(data, ["c"])[0].separation == 0.0


# ------------------------------------------------------------------------ population models

def test_population_uniqueness_without_uniques_is_zero():
    out = population_uniqueness(np.array([2, 3, 4]), 1000)
    assert out["pitman"] == out["zayatz"] == out["dankar"] == 0.0


def test_dankar_uses_zayatz_above_ten_percent():
    sizes = np.array([1] * 30 + [2] * 20 + [3] * 10)
    out = population_uniqueness(sizes, 200)  # sampling fraction 0.5
    assert out["dankar_choice"] == "zayatz"
    assert out["dankar"] == out["zayatz"]
    assert 0 < out["zayatz"] <= 1


def test_zayatz_matches_scipy_hypergeometric():
    stats = pytest.importorskip("scipy.stats")
    hist = np.array([0, 50, 20, 7, 0, 3])
    N = 5000
    sizes = np.arange(len(hist))
    n, u = int((sizes * hist).sum()), hist.sum()
    p1 = np.array([stats.hypergeom(N, k, n).pmf(1) if k else 0.0 for k in sizes])
    cond = (hist[1] / u) * p1[1] / (hist / u * p1).sum()
    assert zayatz_uniques(hist, N) == pytest.approx(hist[1] * cond / (n / N), rel=1e-10)


def test_pitman_is_nan_or_in_range():
    hist = np.array([0, 50, 20, 7, 0, 3])
    v = pitman_uniques(hist, 1_000_000)
    assert math.isnan(v) or 0 <= v <= 1_000_000


@pytest.mark.parametrize("bad", [10, -5, float("nan")])
def test_population_size_is_validated(bad):
    with pytest.raises(ValueError, match="population_size"):
        population_uniqueness(np.array([1, 2, 3, 30]), bad)


def test_bad_input_is_rejected():
    data = pd.DataFrame({"a": ["1", "2"]})
    with pytest.raises(ValueError, match="not in the data: 'b'"):
        risk_report(data, ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        risk_report(data, [])
    with pytest.raises(ValueError, match="given twice"):
        attribute_risks(data, ["a", "a"])
    with pytest.raises(ValueError, match="empty"):
        class_sizes(data.iloc[:0], ["a"])


# ------------------------------------------------------------------------ CLI

def run(argv):
    parser = argparse.ArgumentParser(prog="gpuppdp")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_reproduces_the_reference(tmp_path, capsys, reference):
    out = tmp_path / "risk.json"
    q = reference["quasi_identifiers"]
    status = run(["risk", datasets.adult_path(), "--qi", *q[:3], "--qi", ",".join(q[3:]),
                  "--population-size", str(reference["population_size"]), "--json", str(out),
                  "--top", "3"])
    assert status == 0
    text = capsys.readouterr().out
    assert "records: 30162   equivalence classes: 12458   sample uniques: 8841" in text
    assert "Dankar's rule (pitman)" in text
    rep = json.loads(out.read_text())
    assert rep["quasi_identifiers"] == q
    for key in SUMMARY_KEYS + ["records_at_risk", "population_size"]:
        assert rep[key] == reference[key], key
    assert rep["population_uniqueness"]["zayatz"] == pytest.approx(
        reference["population_uniqueness"]["zayatz"], rel=1e-12)
    assert list(rep["attribute_risks"]) == list(reference["attribute_risks"])


def test_cli_without_population(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text("a,b,c\n1,x,p\n1,y,p\n2,y,q\n2,y,q\n")
    assert run(["risk", str(data), "--qi", "a", "b", "--sep", ","]) == 0
    text = capsys.readouterr().out
    assert "equivalence classes: 3" in text and "population uniques" not in text


@pytest.mark.parametrize("argv, match", [
    (["--qi", "a", "zz"], "zz"),
    (["--qi", "a", "--population-size", "0"], "population-size"),
    (["--qi", "a", "--population-size", "2"], "population_size"),
    (["--qi", "a,a"], "twice"),
    (["--qi", "a", "--top", "-1"], "--top"),
])
def test_cli_errors(tmp_path, argv, match):
    data = tmp_path / "t.csv"
    data.write_text("a,b\n1,x\n1,y\n2,y\n")
    with pytest.raises(ValueError, match=match):
        run(["risk", str(data), *argv])


@pytest.mark.parametrize("dense_min", [1, 1 << 16])
def test_class_sizes_with_wide_keys(backend, monkeypatch, dense_min):
    """Key spaces far beyond int32 / the dense limit: the sort (array form) and hash (Numba)
    paths of the group-by."""
    from gpuppdp.kernels import groupby

    monkeypatch.setattr(groupby, "XP_DENSE_FLOOR", dense_min)
    rng = np.random.default_rng(7)
    n = 300
    data = pd.DataFrame({f"c{j}": rng.integers(0, 250, n).astype(str) for j in range(6)})
    data["c0"] = rng.integers(0, 3, n).astype(str)
    qids = list(data.columns)
    got = np.sort(backend.to_host(class_sizes(data, qids, backend)))
    want = np.sort(data.groupby(qids).size().to_numpy())
    np.testing.assert_array_equal(got, want)
    risks = {r.name: (r.distinction, r.separation)
             for r in attribute_risks(data, qids[:4], backend)}
    for k, (d, s) in _naive(data, qids[:4]).items():
        assert risks[k][0] == pytest.approx(d, abs=1e-12)
        assert risks[k][1] == pytest.approx(s, abs=1e-12)


# ------------------------------------------------------------- journalist against a population

def naive_journalist(sample, population, qids, threshold=0.2):
    """El Emam's / ARX's journalist and marketer risk, class by class (pandas)."""
    f = sample.groupby(qids).size()
    big = population.groupby(qids).size().reindex(f.index)
    n = f.sum()
    return {"journalist_highest_risk": 1 / big.min(), "journalist_lowest_risk": 1 / big.max(),
            "journalist_average_risk": max(len(f) / big.sum(), (f / big).sum() / n),
            "marketer_risk": (f / big).sum() / n,
            "at_risk": f[1 / big > threshold].sum() / n}


@pytest.mark.parametrize("seed", range(3))
def test_journalist_risk_against_a_population(backend, seed):
    rng = np.random.default_rng(seed)
    population = pd.DataFrame({"a": rng.choice(list("xyz"), 300), "b": rng.integers(0, 6, 300)})
    sample = population[rng.random(300) < 0.3].reset_index(drop=True)
    rep = risk_report(sample, ["a", "b"], backend=backend, population=population,
                      attributes=False)
    want = naive_journalist(sample, population, ["a", "b"])
    for key in ("journalist_highest_risk", "journalist_lowest_risk", "journalist_average_risk",
                "marketer_risk"):
        assert rep[key] == pytest.approx(want[key], rel=1e-12), key
    assert rep["journalist_records_at_risk"]["0.20"] == pytest.approx(want["at_risk"])
    # prosecutor risk is the sample's own
    assert rep["prosecutor_highest_risk"] == 1 / sample.groupby(["a", "b"]).size().min()
    # without a population, journalist = prosecutor
    plain = risk_report(sample, ["a", "b"], backend=backend, attributes=False)
    assert plain["journalist_records_at_risk"] is None
    assert plain["journalist_average_risk"] == plain["prosecutor_average_risk"]


def test_population_must_contain_the_sample(tmp_path, capsys):
    population = pd.DataFrame({"a": list("xxyz")})
    with pytest.raises(ValueError, match="not a sample of the population: 3 record"):
        risk_report(pd.DataFrame({"a": list("xxx")}), ["a"], population=population)
    with pytest.raises(ValueError, match="population lacks quasi-identifier column"):
        risk_report(pd.DataFrame({"a": list("xx")}), ["a"], population=population[[]])
    population.to_csv(tmp_path / "p.csv", index=False)
    pd.DataFrame({"a": list("xy")}).to_csv(tmp_path / "s.csv", index=False)
    assert run(["risk", str(tmp_path / "s.csv"), "--qi", "a", "--population",
                str(tmp_path / "p.csv"), "--sep", ","]) == 0
    assert "journalist risk: highest 1, lowest 0.5" in capsys.readouterr().out


def test_suppressed_rows_are_left_out(backend):
    """A release's all-'*' rows are not a class of their own (ARX skips suppressed records)."""
    release = pd.DataFrame({"a": ["x", "x", "y", "y", "y", "*", "*"],
                            "b": ["1", "1", "2", "2", "2", "*", "*"]})
    rep = risk_report(release, ["a", "b"], backend=backend)
    assert rep["suppressed_rows"] == 2
    assert (rep["records"], rep["equivalence_classes"]) == (5, 2)
    assert rep["prosecutor_highest_risk"] == 0.5
    assert rep["attribute_risks"]["a"]["distinction"] == pytest.approx(2 / 5)
    assert risk_report(release.iloc[:5], ["a", "b"], backend=backend)["suppressed_rows"] == 0
    # every QID of every row '*' is the top of the lattice: one class of both records
    top = risk_report(release.iloc[5:], ["a", "b"])
    assert (top["suppressed_rows"], top["records"], top["equivalence_classes"]) == (0, 2, 1)
    assert top["prosecutor_highest_risk"] == 0.5
