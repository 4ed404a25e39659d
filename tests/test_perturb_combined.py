"""Perturbation and generalization in one run (``Perturbation.anonymize``, ``gpuppdp perturb
--qi ...``): the release is k-anonymous over every QID, generalized and microaggregated (a
naive pandas groupby), every row is accounted for, the generalization leaves the
microaggregated values as they are, the CLI equals its Python twin, misuse is named."""

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer
from gpuppdp.cli.main import USER_ERROR, main
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import DistinctLDiversity
from gpuppdp.perturb import Perturbation

ZIPS = ["10001", "10002", "10003", "10004"]


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, size=n),
        "income": rng.lognormal(10, 1, size=n).round(2),
        "hours": rng.integers(1, 80, size=n).astype(float),
        "zip": rng.choice(ZIPS, size=n),
        "sex": rng.choice(["F", "M"], size=n),
        "disease": rng.choice(["flu", "cold", "cancer", "none"], size=n),
    })


def _hierarchies():
    return {"zip": Hierarchy([ZIPS, ["1000*"] * 4, ["*"] * 4], name="zip"),
            "sex": Hierarchy.flat(["F", "M"], name="sex")}


def _twin(data, seed, backend="cpu"):
    """The run of the tests, in Python: MDAV of age and income (k=8), hours swapped; zip and
    sex generalized for k=3 and distinct 2-diversity, 10 % suppression (the optimum keeps
    sex, which splits MDAV's groups, and suppresses the classes under 3)."""
    anonymizer = Anonymizer(quasi_identifiers=_hierarchies(), sensitive=["disease"],
                            identifying=["id"], k=3, models=[DistinctLDiversity("disease", 2)],
                            suppression_limit=0.1, backend=backend, seed=seed)
    return Perturbation(microaggregate=[(["age", "income"], 8)], swap={"hours": 10},
                        seed=seed, backend=backend).anonymize(data, anonymizer)


def test_release_is_k_anonymous_over_every_qid_and_rows_add_up(backend):
    data = _table()
    outcome = _twin(data, seed=4, backend=backend)
    out, perturbed = outcome.released, outcome.perturbation.data
    qids = ["zip", "sex", "age", "income"]
    kept = out[~(out[qids] == "*").all(axis=1)]  # suppressed rows: every QID *
    sizes = kept.groupby(qids, observed=True).size()
    assert sizes.min() >= 3 and outcome.checked["k"] == sizes.min()  # the naive check agrees
    assert outcome.checked["classes"] == len(sizes) and outcome.checked["satisfied"]
    assert kept.groupby(qids, observed=True)["disease"].nunique().min() >= 2
    summary = outcome.summary()
    assert summary["input_rows"] == len(data) == len(out)
    assert summary["released_records"] + summary["suppressed_records"] == len(data)
    assert summary["suppressed_records"] == len(out) - len(kept) > 0
    assert summary["quasi_identifiers"] == {"generalized": ["zip", "sex"],
                                            "microaggregated": ["age", "income"]}
    assert outcome.result.transformation["age"] == outcome.result.transformation["income"] == 0
    assert "id" not in out.columns and "hours" in out.columns  # the swapped: insensitive
    # the generalization leaves the microaggregated values as MDAV released them
    source = np.asarray(outcome.result.release.source_rows)
    unsuppressed = ~(out[qids] == "*").all(axis=1).to_numpy()
    for column in ("age", "income"):
        released = out[column].astype(str).to_numpy()[unsuppressed].astype(float)
        assert np.array_equal(released, perturbed[column].to_numpy()[source[unsuppressed]])
    assert sorted(out["hours"]) == sorted(data["hours"])  # swapping kept the multiset
    methods = {m["method"]: m for m in summary["methods"]}
    assert methods["microaggregate"]["checked_k"] >= 8 and methods["swap"]["il1s"] > 0


def test_cli_equals_its_python_twin(tmp_path, capsys):
    data = _table()
    src = tmp_path / "in.csv"
    data.to_csv(src, index=False)
    files = {}
    for name, h in _hierarchies().items():
        files[name] = tmp_path / f"{name}.csv"
        h.to_csv(files[name])
    code = main(["perturb", str(src), "--microaggregate", "age,income:k=8",
                 "--swap", "hours:10%", "--qi", f"zip={files['zip']}",
                 "--qi", f"sex={files['sex']}", "--sensitive", "disease", "--identifying", "id",
                 "--k", "3", "--l-diversity", "distinct:2", "--suppression-limit", "10%",
                 "--output", str(tmp_path / "out.csv"), "--json", str(tmp_path / "s.json"),
                 "--seed", "4", "--backend", "cpu", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "independent checker over age, income, zip, sex: k = 3" in capsys.readouterr().out
    twin = _twin(pd.read_csv(src, dtype=str), seed=4)  # a CSV's columns are text
    twin_csv = tmp_path / "twin.csv"
    twin.released.to_csv(twin_csv, index=False)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "out.csv", dtype=str),
                                  pd.read_csv(twin_csv, dtype=str))
    summary = json.loads((tmp_path / "s.json").read_text())
    expected = twin.summary()
    for key in ("check", "quasi_identifiers", "input_rows", "released_records",
                "suppressed_records"):
        assert summary[key] == expected[key]
    assert summary["generalization"]["transformation"] == twin.result.transformation
    assert summary["generalization"]["information_loss"] == twin.result.information_loss
    assert [m["method"] for m in summary["methods"]] == ["microaggregate", "swap"]
    assert all(m["seconds"] >= 0 and "il1s" in m for m in summary["methods"])


def test_misuse_is_named_and_nothing_written(tmp_path, capsys):
    data = _table(60)
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    data.to_csv(src, index=False)
    hierarchy = tmp_path / "zip.csv"
    _hierarchies()["zip"].to_csv(hierarchy)
    qi = ["--qi", f"zip={hierarchy}", "--k", "2", "--others", "insensitive"]
    for argv, fragment in [
        (["--microaggregate", "age,income:k=3", "--qi", f"age={hierarchy}", *qi],
         "--qi: 'age' is microaggregated"),
        (["--microaggregate", "age:k=3", "--sensitive", "age", *qi],
         "--sensitive: 'age' is microaggregated"),
        (["--swap", "id:5%", "--identifying", "id", *qi],
         "--identifying: 'id' is also perturbed (swap)"),
        (["--swap", "hours:5%", "--k", "5"], "--k is an option of the generalization"),
        (["--swap", "hours:5%", "--html", str(tmp_path / "r.html")],
         "--html is an option of the generalization"),
    ]:
        code = main(["perturb", str(src), *argv, "--output", str(out), "--backend", "cpu"])
        err = capsys.readouterr().err
        assert code == USER_ERROR and fragment in err and len(err.splitlines()) == 1, err
        assert not out.exists()
    hierarchies = _hierarchies()
    with pytest.raises(InputError, match="quasi_identifiers: 'zip' is microaggregated"):
        Perturbation(microaggregate=[(["zip"], 3)]).anonymize(
            data, Anonymizer(quasi_identifiers=hierarchies, others="insensitive", k=2))
    with pytest.raises(InputError, match="identifying: 'hours' is also perturbed"):
        Perturbation(noise={"hours": 5}).anonymize(
            data, Anonymizer(quasi_identifiers=hierarchies, identifying=["hours"],
                             others="insensitive", k=2))
