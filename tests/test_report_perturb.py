"""The report's section on perturbed columns: ``gpuppdp report --original --perturbed`` and
``gpuppdp perturb --qi ... --html`` draw the measures of ``perturbation_measures`` computed
directly (tables, bars, JSON), in a self-contained page."""

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp.cli.main import USER_ERROR, main
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.perturb import Perturbation, perturbation_measures
from gpuppdp.report import build_report
from gpuppdp.report.text import _num, _pct

ZIPS = ["10001", "10002", "10003", "10004"]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    n = 240
    data = pd.DataFrame({"age": rng.integers(18, 90, size=n),
                         "income": rng.lognormal(10, 1, size=n).round(2),
                         "hours": rng.integers(1, 80, size=n).astype(float),
                         "zip": rng.choice(ZIPS, size=n), "sex": rng.choice(["F", "M"], size=n)})
    data["hours"] += 0.001 * data["income"]  # a correlation for the pair's figures
    paths = {"original": tmp_path / "in.csv", "zip": tmp_path / "zip.csv",
             "sex": tmp_path / "sex.csv", "perturbed": tmp_path / "p.csv"}
    data.to_csv(paths["original"], index=False)
    Hierarchy([ZIPS, ["1000*"] * 4, ["*"] * 4]).to_csv(paths["zip"])
    Hierarchy.flat(["F", "M"]).to_csv(paths["sex"])
    Perturbation(noise={("income", "hours"): 30}, noise_method="correlated", seed=2,
                 backend="cpu").fit(data).data.to_csv(paths["perturbed"], index=False)
    return paths


def _flat(tree, prefix="") -> dict:
    """A nested dict of numbers and lists of numbers as one flat dict."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, list):
            out.update({f"{prefix}{key}[{i}]": v for i, v in enumerate(value)})
        else:
            out[prefix + key] = value
    return out


def _section(html: str) -> str:
    start = html.index('<section id="perturbation">')
    return html[start:html.index("</section>", start)]


def test_report_draws_the_measures_computed_directly(files, tmp_path, capsys):
    html_path = tmp_path / "r.html"
    assert main(["report", str(files["perturbed"]), "--qi", f"zip={files['zip']}",
                 "--qi", f"sex={files['sex']}", "--k", "3", "--others", "insensitive",
                 "--original", str(files["original"]), "--perturbed", "income,hours",
                 "--html", str(html_path), "--backend", "cpu", "--quiet"]) == 0, \
        capsys.readouterr().err
    assert "record linkage" in capsys.readouterr().out
    columns = ["income", "hours"]
    direct = perturbation_measures(pd.read_csv(files["original"])[columns].to_numpy(),
                                   pd.read_csv(files["perturbed"])[columns].to_numpy(),
                                   backend="cpu")
    got = json.loads(html_path.with_suffix(".json").read_text())["perturbation"]
    assert got["columns"] == columns
    for part in ("utility", "risk"):
        assert _flat(got[part]) == pytest.approx(_flat(direct[part]))
    html = html_path.read_text()
    section = _section(html)
    assert "9. Perturbed columns against the original" in section
    utility, risk = direct["utility"], direct["risk"]
    for name, key in (("IL1s", "il1s"), ("Eigenvalue distance", "eigenvalue_distance"),
                      ("Propensity score", "propensity_score")):
        assert f'<td>{name}</td><td class="n">{_num(utility[key])}</td>' in section
    assert f'<td class="n">{_pct(risk["linkage_rate"])}</td>' in section
    assert f'<td class="n">{_pct(risk["interval_disclosure"]["records_at_risk"])}</td>' \
        in section
    for column, value in zip(columns, utility["il1s_per_column"]):  # the bars' hover text
        assert f"<title>{column}: IL1s {_num(value)}</title>" in section
    original, masked = (utility["correlations"][k][0] for k in ("original", "masked"))
    assert (f"<td>income \u00d7 hours</td><td class=\"n\">{_num(original)}</td>"
            f"<td class=\"n\">{_num(masked)}</td>") in section
    assert section.count("<svg") == 3 and "<script" not in html and "http" not in section
    assert "published perturbed (insensitive; section 9): income, hours" in html


def test_a_combined_run_writes_the_same_report(files, tmp_path, capsys):
    html_path, summary_path = tmp_path / "c.html", tmp_path / "s.json"
    assert main(["perturb", str(files["original"]), "--microaggregate", "age,income:k=4",
                 "--qi", f"zip={files['zip']}", "--qi", f"sex={files['sex']}", "--k", "2",
                 "--others", "insensitive", "--output", str(tmp_path / "out.csv"),
                 "--json", str(summary_path), "--html", str(html_path), "--seed", "1",
                 "--backend", "cpu", "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads(summary_path.read_text())
    report = json.loads(html_path.with_suffix(".json").read_text())
    assert report["perturbation"] == summary["measures"]
    assert report["summary"]["transformation"] == summary["generalization"]["transformation"]
    html = html_path.read_text()
    assert "age perturbed (section 9), not generalized (level 0 of 0)" in html
    assert "IL1s per perturbed column" in _section(html)


def test_misuse_is_named(files, tmp_path, capsys):
    assert main(["report", str(files["perturbed"]), "--qi", f"zip={files['zip']}", "--k", "2",
                 "--others", "insensitive", "--original", str(files["original"]),
                 "--html", str(tmp_path / "r.html")]) == USER_ERROR
    assert "--original and --perturbed go together" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(InputError, match="perturbation must be the measures"):
        build_report(None, None, perturbation={"utility": {}})
