"""Perturbing a table (gpuppdp.perturb.Perturbation) and ``gpuppdp perturb``: every method
on named columns, the others unchanged, rows kept, a clear error for each misuse."""

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp.cli.main import USER_ERROR, main
from gpuppdp.errors import InputError
from gpuppdp.perturb import Perturbation


def _table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, size=n),
        "income": rng.lognormal(10, 1, size=n).round(2),
        "hours": rng.integers(1, 80, size=n).astype(float),
        "sex": rng.choice(["F", "M"], size=n),
        "zip": rng.choice(["10001", "10002", "10003"], size=n),
        "disease": rng.choice(["flu", "cold", "cancer", "none"], size=n),
    })


def test_every_method_on_its_column_and_the_others_unchanged():
    data = _table()
    release = Perturbation(
        microaggregate=[(["age", "hours"], 4)], swap={"income": 10},
        pram={"sex": None}, top_code={"zip_num": 0} if False else None,
        permute={"disease": ["zip"]}, seed=5, backend="cpu").fit(data)
    out = release.data
    assert len(out) == len(data) and list(out.columns) == list(data.columns)
    pd.testing.assert_series_equal(out["id"], data["id"])
    pd.testing.assert_series_equal(out["zip"], data["zip"])
    methods = {m["method"]: m for m in release.summary()["methods"]}
    assert methods["microaggregate"]["checked_k"] >= 4
    assert out.groupby(["age", "hours"]).size().min() >= 4  # k-anonymous on the two
    assert sorted(out["income"]) == sorted(data["income"])  # swapping keeps the multiset
    assert out["income"].dtype == data["income"].dtype
    for z in data["zip"].unique():  # permutation keeps each group's multiset
        assert sorted(out.loc[data["zip"] == z, "disease"]) == \
            sorted(data.loc[data["zip"] == z, "disease"])
    assert set(out["sex"]) <= {"F", "M"} and 0 < methods["pram"]["changed"] < 0.5
    again = Perturbation(microaggregate=[(["age", "hours"], 4)], swap={"income": 10},
                         pram={"sex": None}, permute={"disease": ["zip"]}, seed=5,
                         backend="cpu").fit(data)
    pd.testing.assert_frame_equal(again.data, out)  # the seed reproduces the release


def test_noise_coding_and_a_given_pram_matrix():
    data = _table()
    identity = pd.DataFrame(np.eye(2), index=["F", "M"], columns=["F", "M"])
    release = Perturbation(noise={("income", "hours"): 20}, noise_method="correlated",
                           top_code={"age": 70}, pram={"sex": identity}, seed=1,
                           backend="cpu").fit(data)
    out = release.data
    assert (out["age"] <= 70).all() and (out["age"][data["age"] <= 70] ==
                                         data["age"][data["age"] <= 70]).all()
    methods = {m["method"]: m for m in release.summary()["methods"]}
    assert methods["top_code"]["replaced"] == int((data["age"] > 70).sum())
    assert (out["sex"] == data["sex"]).all() and methods["pram"]["matrix"] == "given"
    assert not np.allclose(out["income"], data["income"])
    ratio = np.var(out["hours"] - data["hours"]) / np.var(data["hours"])
    assert 0.1 < ratio < 0.3  # noise of 20 % of the variance
    assert methods["noise"]["noise_method"] == "correlated"
    for method, columns in (("noise", ["income", "hours"]), ("top_code", ["age"])):
        il1s = np.mean([np.abs(out[c] - data[c]).mean() / (np.sqrt(2) * data[c].std())
                        for c in columns])  # each method's IL1s, by hand
        assert methods[method]["il1s"] == pytest.approx(il1s)


def test_text_numbers_are_read_and_misuse_is_named():
    data = _table().astype({"age": str})
    out = Perturbation(swap={"age": 5}, seed=1, backend="cpu").fit(data).data
    assert sorted(out["age"]) == sorted(data["age"])
    with pytest.raises(InputError, match="'sex' has"):
        Perturbation(swap={"sex": 5}, seed=1).fit(data)
    with pytest.raises(InputError, match="named by swap and noise"):
        Perturbation(swap={"age": 5}, noise={"age": 10}).fit(data)
    with pytest.raises(InputError, match="not in the table: 'nope'"):
        Perturbation(top_code={"nope": 1}).fit(data)
    with pytest.raises(InputError, match="no perturbation asked for"):
        Perturbation()
    bad = pd.DataFrame(np.eye(2), index=["F", "X"], columns=["F", "X"])
    with pytest.raises(InputError, match="'M' missing"):
        Perturbation(pram={"sex": bad}, seed=1).fit(data)


def test_cli_writes_the_release_and_summary(tmp_path, capsys):
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    (tmp_path / "m.csv").write_text("from,F,M\nF,0.9,0.1\nM,0.2,0.8\n")
    code = main(["perturb", str(src), "--microaggregate", "age,hours:k=3",
                 "--swap", "income:5%", "--pram", f"sex={tmp_path / 'm.csv'}",
                 "--permute", "disease", "--by", "zip", "--identifying", "id",
                 "--output", str(tmp_path / "out.csv"), "--json", str(tmp_path / "s.json"),
                 "--seed", "2", "--backend", "cpu"])
    assert code == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "out.csv")
    assert len(out) == 600 and "id" not in out.columns
    summary = json.loads((tmp_path / "s.json").read_text())
    assert [m["method"] for m in summary["methods"]] == ["microaggregate", "swap", "pram",
                                                         "permute"]
    assert summary["dropped_identifying"] == ["id"] and summary["records"] == 600
    assert summary["methods"][0]["checked_k"] >= 3
    measures = summary["measures"]
    assert measures["columns"] == ["age", "hours", "income"]
    assert 0 <= measures["risk"]["linkage_rate"] <= 1
    assert measures["utility"]["mean_variation"] < 1e-9  # group means and swaps keep means
    assert "record linkage" in capsys.readouterr().out


def test_cli_errors_write_nothing(tmp_path, capsys):
    src = tmp_path / "in.csv"
    _table().to_csv(src, index=False)
    target = tmp_path / "out.csv"
    assert main(["perturb", str(src), "--permute", "disease", "--output", str(target)]) == \
        USER_ERROR
    assert "--permute needs --by" in capsys.readouterr().err
    assert main(["perturb", str(src), "--swap", "sex:5", "--output", str(target)]) == \
        USER_ERROR
    assert "'sex' has" in capsys.readouterr().err
    assert not target.exists()
    matrix = tmp_path / "m.csv"
    matrix.write_text("from,F,M\nF,1,0\nM,0,1\n")
    assert main(["perturb", str(src), "--pram", f"sex={matrix}", "--output", str(matrix)]) \
        == USER_ERROR  # the matrix is an input of the run: no output overwrites it
    assert "is an input of this run" in capsys.readouterr().err
    assert matrix.read_text() == "from,F,M\nF,1,0\nM,0,1\n"
    with pytest.raises(SystemExit):
        main(["perturb", str(src), "--swap", "income", "--output", str(target)])
    assert "--swap expects COL:NUMBER%" in capsys.readouterr().err


def test_risk_measures_a_perturbed_release_against_its_original(tmp_path, capsys):
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _table().to_csv(src, index=False)
    assert main(["perturb", str(src), "--noise", "income:1e-6", "--output", str(out),
                 "--seed", "1", "--backend", "cpu", "--no-measures"]) == 0
    capsys.readouterr()
    js = tmp_path / "risk.json"
    assert main(["risk", str(out), "--qi", "sex", "zip", "--original", str(src),
                 "--perturbed", "income", "--json", str(js), "--top", "0",
                 "--backend", "cpu", "--quiet"]) == 0
    assert "record linkage" in capsys.readouterr().out
    pert = json.loads(js.read_text())["perturbation"]
    assert pert["columns"] == ["income"] and pert["risk"]["linkage_rate"] > 0.9  # tiny noise
    assert main(["risk", str(out), "--qi", "sex", "--original", str(src)]) == USER_ERROR
    assert "go together" in capsys.readouterr().err
    checked = tmp_path / "check.json"
    assert main(["check", str(out), "--qi", "sex", "zip", "--original", str(src),
                 "--perturbed", "income", "--json", str(checked), "--backend", "cpu",
                 "--quiet"]) == 0
    assert "record linkage" in capsys.readouterr().out
    report = json.loads(checked.read_text())
    assert report["perturbation"] == pert and report["k"] >= 1  # the same measures as risk
    before = src.read_bytes()
    for command in ("risk", "check"):  # the original is an input: no output overwrites it
        assert main([command, str(out), "--qi", "sex", "--original", str(src), "--perturbed",
                     "income", "--json", str(src), "--backend", "cpu", "--quiet"]) == \
            USER_ERROR
        assert "gpuppdp: error:" in capsys.readouterr().err
        assert main([command, str(out), "--qi", "sex", "--original", str(src), "--perturbed",
                     "income", "--chunk-rows", "100", "--backend", "cpu"]) == USER_ERROR
        assert "in memory" in capsys.readouterr().err
    assert src.read_bytes() == before
