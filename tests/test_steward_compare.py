"""``gpuppdp report --compare A.json B.json``: two configurations side by side (issue 12)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.cli.main import build_parser, main
from gpuppdp.cli.run import anonymizer_from_args, release_plan, run_summary
from gpuppdp.report.compare import compare, render_compare_html

QIDS = ["sex", "age", "race", "marital-status"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two reports and one anonymize summary of the same table, different configurations."""
    folder = tmp_path_factory.mktemp("compare")
    data, _ = datasets.adult()
    source = folder / "people.csv"
    data.head(2000).to_csv(source, index=False)
    qi = [a for q in QIDS
          for a in ("--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}")]
    common = [str(source), *qi, "--identifying", "education", "--others", "insensitive",
              "--quiet", "--seed", "0"]
    assert main(["report", *common, "--k", "5", "--suppression", "5%",
                 "--html", str(folder / "a.html")]) == 0
    assert main(["report", *common, "--k", "10", "--sensitive", "occupation",
                 "--l-diversity", "distinct:3", "--suppression", "2%",
                 "--html", str(folder / "b.html")]) == 0
    # the summary of 'anonymize --json' (cli.run.run_summary), written as anonymize does
    args = build_parser().parse_args(["anonymize", *common, "--k", "5", "--suppression", "5%",
                                      "--output", str(folder / "rel.csv"),
                                      "--json", str(folder / "s.json")])
    plan = release_plan(args).add("--json", args.json)
    data, anonymizer = anonymizer_from_args(args)
    result = anonymizer.fit(data)
    with plan.writing() as out:
        out.write_table("--output", result.released, sep=",")
        out.write_json("--json", run_summary(result, args, plan))
    return folder


def test_side_by_side(runs, capsys):
    capsys.readouterr()
    a, b = runs / "a.json", runs / "b.json"
    html = runs / "c.html"
    assert main(["report", "--compare", str(a), str(b), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    figures = compare(a, b)
    differ = sum(x != y for _, x, y in figures["rows"]) + \
        sum(x != y for x, y in figures["transformation"].values())
    assert out == f"comparison         {html} ({differ} figure(s) differ)\n"
    rows = {label: (x, y) for label, x, y in figures["rows"]}
    ra, rb = (json.loads(p.read_text()) for p in (a, b))
    for side, rep in enumerate((ra, rb)):
        s = rep["summary"]
        assert rows["Records suppressed"][side].startswith(f"{s['suppressed_records']:,} (")
        assert rows["Smallest class"][side] == f"{s['smallest_class']:,}"
        risk = rep["risk"]["release"]["prosecutor_highest_risk"]
        assert rows["Highest re-identification risk"][side] == f"{100 * risk:.3g} %"
    assert rows["Privacy models"] == ("k-anonymity with k = 5", "k-anonymity with k = 10; "
                                      "distinct l-diversity of occupation with l = 3")
    assert rows["Removed columns"] == ("education", "education")
    assert list(figures["transformation"]) == QIDS
    page = html.read_text(encoding="utf-8")
    assert page == render_compare_html(figures)
    assert page.count('<tr class="flag">') == differ > 0
    assert "<script" not in page.lower() and not re.search(r"https?://", page)


def test_a_summary_against_a_report(runs):
    figures = compare(runs / "s.json", runs / "a.json")
    rows = {label: (x, y) for label, x, y in figures["rows"]}
    # the same configuration: the same release figures; the summary has no risk section
    for label in ("Records published", "Records suppressed", "Information loss",
                  "Equivalence classes", "Privacy models"):
        assert rows[label][0] == rows[label][1], label
    assert rows["Highest re-identification risk"][0] == "-"
    assert rows["Released table"][0] == str(runs / "rel.csv")
    released = pd.read_csv(runs / "rel.csv", dtype=str)
    assert rows["Rows in the released table"][0] == f"{len(released):,}"
    assert all(x == y for x, y in figures["transformation"].values())


def test_compare_errors(runs, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"k": 5}')
    for argv, fragment in [
        (["--compare", str(runs / "a.json"), str(tmp_path / "nope.json")], "file not found"),
        (["--compare", str(runs / "a.json"), str(bad)], "neither a report's JSON nor"),
        (["x.csv", "--compare", str(runs / "a.json"), str(runs / "b.json")],
         "takes no INPUT, --qi or --output"),
        (["x.csv"], "report needs INPUT and --qi"),
    ]:
        assert main(["report", *argv, "--html", str(tmp_path / "c.html")]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and fragment in err, err
    assert not (tmp_path / "c.html").exists()
