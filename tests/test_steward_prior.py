"""check with the sensitive attribute's hierarchy (t_hierarchical) and a prior (--prior), and
anonymize --prior for --privacy-loss: compared with the models measured directly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, Hierarchy, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.cli.main import main
from gpuppdp.models import PrivacyLoss

SALARY = [["<=50K", ">50K"], ["*", "*"]]


@pytest.fixture(scope="module")
def table():
    data, _ = datasets.adult()
    return data.head(3000)[["sex", "race", "education", "salary-class"]].reset_index(drop=True)


def _naive_hierarchical_t(table, qids, sensitive, hierarchy):
    """Largest hierarchical EMD of a class (Li et al. 2007) for a two-level hierarchy: half
    the total variation distance times the cost of the one level (1/height)."""
    overall = table[sensitive].value_counts(normalize=True)
    worst = 0.0
    for _, part in table.groupby(qids):
        p = part[sensitive].value_counts(normalize=True).reindex(overall.index, fill_value=0)
        worst = max(worst, 0.5 * float(np.abs(p - overall).sum()) / hierarchy.height)
    return worst


def test_check_measures_hierarchical_t_with_the_sensitive_hierarchy(table):
    h = Hierarchy(SALARY, name="salary-class")
    got = check(table, quasi_identifiers=["sex", "race"], sensitive="salary-class",
                sensitive_hierarchy=h, backend="cpu")
    expected = _naive_hierarchical_t(table, ["sex", "race"], "salary-class", h)
    assert got["t_hierarchical"] == pytest.approx(expected, rel=1e-9)
    assert check(table, quasi_identifiers=["sex"], sensitive="salary-class",
                 backend="cpu")["t_hierarchical"] is None


def _write(tmp_path, table):
    src = tmp_path / "t.csv"
    table.to_csv(src, sep=";", index=False)
    hier = tmp_path / "salary.csv"
    pd.DataFrame({0: SALARY[0], 1: SALARY[1]}).to_csv(hier, sep=";", header=False, index=False)
    prior = tmp_path / "prior.csv"
    prior.write_text("value,probability\n<=50K,0.6\n>50K,0.4\n")
    return src, hier, prior


def test_check_cli_takes_the_hierarchy_and_the_prior(table, tmp_path, capsys):
    src, hier, prior = _write(tmp_path, table)
    out = tmp_path / "c.json"
    assert main(["check", str(src), "--qi", "sex,race", "--sensitive",
                 f"salary-class={hier}", "--prior", str(prior), "--json", str(out)]) == 0
    got = json.load(open(out))
    h = Hierarchy(SALARY, name="salary-class")
    direct = check(table, quasi_identifiers=["sex", "race"], sensitive="salary-class",
                   sensitive_hierarchy=h, prior={"<=50K": 0.6, ">50K": 0.4}, backend="cpu")
    assert got["t_hierarchical"] == pytest.approx(direct["t_hierarchical"])
    assert got["distribution_loss_max"] == pytest.approx(direct["distribution_loss_max"])
    default = check(table, quasi_identifiers=["sex", "race"], sensitive="salary-class",
                    backend="cpu")
    assert got["distribution_loss_max"] != pytest.approx(default["distribution_loss_max"])
    assert "t_hierarchical" in capsys.readouterr().out


def test_anonymize_prior_reaches_the_privacy_loss_model(table, tmp_path):
    src, _, prior = _write(tmp_path, table)
    hierarchies = datasets.adult()[1]
    args = ["anonymize", str(src), "--sensitive", "salary-class", "--others", "insensitive",
            "--privacy-loss", "0.3,0.5", "--prior", str(prior), "--suppression", "10%",
            "--quiet", "--backend", "cpu", "--output", str(tmp_path / "o.csv"),
            "--json", str(tmp_path / "o.json")]
    for q in ("sex", "race"):
        args += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    assert main(args) == 0
    summary = json.load(open(tmp_path / "o.json"))
    expected = Anonymizer(
        quasi_identifiers={q: hierarchies[q] for q in ("sex", "race")},
        sensitive=["salary-class"], others="insensitive", suppression_limit=0.1,
        models=[PrivacyLoss("salary-class", 0.3, 0.5, prior={"<=50K": 0.6, ">50K": 0.4})],
        backend="cpu").fit(table)
    assert summary["transformation"] == expected.transformation
    assert summary["information_loss"] == expected.information_loss


@pytest.mark.parametrize("text,message", [("a,b,c\n", "expected value,probability"),
                                          ("<=50K,0.6\n>50K,lots\n", "'lots' is not")])
def test_bad_prior_file(table, tmp_path, capsys, text, message):
    src, _, prior = _write(tmp_path, table)
    prior.write_text(text)
    assert main(["check", str(src), "--qi", "sex", "--sensitive", "salary-class",
                 "--prior", str(prior)]) == 2
    assert message in capsys.readouterr().err


def test_prior_without_its_model_is_refused(table, tmp_path, capsys):
    src, _, prior = _write(tmp_path, table)
    assert main(["check", str(src), "--qi", "sex", "--prior", str(prior)]) == 2
    assert "--prior needs --sensitive" in capsys.readouterr().err


def test_report_cli_reports_its_steps(table, tmp_path, capsys):
    src, _, _ = _write(tmp_path, table)
    args = ["report", str(src), "--others", "insensitive", "--k", "3", "--backend", "cpu",
            "--html", str(tmp_path / "r.html")]
    for q in ("sex", "race"):
        args += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    assert main(args) == 0
    err = capsys.readouterr().err
    steps = [line for line in err.splitlines() if line.startswith("report: ")]
    assert steps[0].startswith("report: 0%") and steps[-1] == "report: 100% (4/4 steps)"
    assert "\r" not in err
