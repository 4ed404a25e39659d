"""The HTML report (gpuppdp.report), its JSON twin, ``gpuppdp.report.write_report`` and
``gpuppdp report``."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, DistinctLDiversity, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.cli.main import main
from gpuppdp.engine.lattice import Lattice
from gpuppdp.report import SECTION_TITLES, build_report, render_html, write_report
from gpuppdp.report.words import describe_release
from gpuppdp.testing import strict_backend

QIDS = ["sex", "age", "race", "education"]
ROWS = 2000
#: section -> SVG plots in it (per sensitive attribute for the privacy losses and the worst
#: class: distribution and entropy loss are two panels with their own units)
PLOTTED = {"class_sizes": 1, "risk": 1, "privacy_losses": 2, "worst_class": 1, "lattice": 1}
SVGS = sum(PLOTTED.values())


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    table = data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class"]].reset_index(drop=True)
    return table, {q: hierarchies[q] for q in QIDS}


def fit(table, hierarchies, *, backend="cpu", search="flash", sensitive=True):
    models = [DistinctLDiversity("occupation", 3)] if sensitive else []
    return Anonymizer(quasi_identifiers=hierarchies,
                      sensitive=["occupation"] if sensitive else [],
                      others="insensitive", k=5, models=models, suppression_limit=0.05,
                      search=search, backend=backend, seed=0).fit(table)


@pytest.fixture(scope="module")
def result(adult):
    return fit(*adult)


@pytest.fixture(scope="module")
def written(result, adult, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "adult.html"
    html_path, json_path = write_report(result, adult[0], path)
    assert html_path == path and json_path == path.with_suffix(".json")
    return html_path.read_text(encoding="utf-8"), json.loads(json_path.read_text("utf-8"))


def sections(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="(\w+)">(.*?)</section>', page, re.S))


def test_every_section_and_plot(written):
    page, _ = written
    assert page.startswith("<!DOCTYPE html>")
    for title in SECTION_TITLES.values():
        assert f"<h2>{title}</h2>" in page
    parts = sections(page)
    assert list(parts) == list(SECTION_TITLES)
    assert page.count("<svg") == page.count("</svg>") == SVGS
    for key, body in parts.items():
        assert body.count("<svg") == PLOTTED.get(key, 0), key
    assert "nodes checked by the search" in parts["lattice"].lower()
    assert "<table>" in parts["summary"] and "<table>" in parts["attribute_risks"]


def test_json_twin_agrees_with_result(written, result, adult):
    page, rep = written
    s = rep["summary"]
    assert s["transformation"] == result.transformation
    assert s["suppressed_records"] == result.suppressed_records
    assert s["information_loss"] == result.information_loss
    assert s["nodes_evaluated"] == result.nodes_evaluated
    cs = rep["class_sizes"]
    assert cs["classes"] == result.equivalence_classes
    assert cs["smallest"] == result.node["smallest_class"] >= 5
    assert sum(b["classes"] for b in cs["bins"]) == cs["classes"]
    assert sum(b["records"] for b in cs["bins"]) == result.release.released_rows
    risk = rep["risk"]
    assert risk["input"]["records"] == ROWS
    assert risk["release"]["records"] == result.release.released_rows
    assert risk["release"]["prosecutor_highest_risk"] == pytest.approx(1 / cs["smallest"])
    assert sum(lv["input_records"] for lv in risk["levels"]) == ROWS
    assert sum(lv["release_records"] for lv in risk["levels"]) == result.release.released_rows
    measured = check(result.released, quasi_identifiers=QIDS, sensitive="occupation",
                     backend="cpu")
    (pl,) = rep["privacy_losses"]
    assert pl["classes"] == result.equivalence_classes == pl["shown"]
    assert pl["distribution_loss_max"] == pytest.approx(measured["distribution_loss_max"])
    assert pl["entropy_loss_max"] == pytest.approx(measured["entropy_loss_max"])
    losses = [r["distribution_loss"] for r in pl["rows"]]
    assert losses == sorted(losses, reverse=True)
    (worst,) = rep["worst_class"]
    assert worst["distribution_loss"] == pl["rows"][0]["distribution_loss"]
    assert sum(v["class_count"] for v in worst["values"]) == worst["size"]
    assert sum(v["overall_share"] for v in worst["values"]) == pytest.approx(1.0)
    ar = rep["attribute_risks"]
    assert len(ar["rows"]) == 2 ** len(QIDS) - 1 == ar["subsets_total"]
    assert [r["distinction"] for r in ar["rows"]] == sorted(
        (r["distinction"] for r in ar["rows"]), reverse=True)
    full = next(r for r in ar["rows"] if len(r["attributes"]) == len(QIDS))
    assert full["distinction"] == pytest.approx(risk["input"]["equivalence_classes"] / ROWS)
    lat = rep["lattice"]
    assert lat["optimum"]["levels"] == list(result.transformation.values())
    assert lat["evaluated"] == lat["drawn"] == len(result.evaluated_nodes) \
        == result.search.details["evaluations"]
    assert lat["nodes_checked"] == result.nodes_evaluated
    assert lat["optimum"]["levels"] in lat["nodes"]["levels"]
    anonymous = np.array(lat["nodes"]["anonymous"])
    assert all(v is None for v in np.array(lat["nodes"]["information_loss"],
                                           dtype=object)[~anonymous])
    # the HTML is rendered from the JSON twin alone
    assert render_html(rep) == page


def test_evaluated_nodes(result, adult):
    _, hierarchies = adult
    nodes = result.evaluated_nodes
    ids = nodes.levels @ Lattice([hierarchies[q].height for q in QIDS]).strides
    assert (np.diff(ids) > 0).all()  # node-id order, each node once
    opt = (nodes.levels == list(result.transformation.values())).all(axis=1)
    assert opt.sum() == 1 and nodes.information_loss[opt][0] == result.information_loss
    assert np.isfinite(nodes.information_loss[nodes.anonymous]).all()
    assert np.isnan(nodes.information_loss[~nodes.anonymous]).all()


def test_no_external_references(written):
    page, _ = written
    for pattern in (r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", r"<script", r"@import",
                    r"url\(", r"<link", r"<img", r"<iframe", r"https?://"):
        assert not re.search(pattern, page, re.I), pattern


def test_data_strings_are_escaped(adult, tmp_path):
    table, hierarchies = adult
    table = table.copy()
    table.loc[table.index % 3 == 0, "occupation"] = '<script>alert("x")</script>&'
    rep = build_report(fit(table, hierarchies), table)
    page = render_html(rep)
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page


def test_without_sensitive_attribute_exhaustive(adult):
    table, hierarchies = adult
    result = fit(table, hierarchies, search="exhaustive", sensitive=False)
    rep = build_report(result, table, max_subsets=5)
    page = render_html(rep)
    assert rep["privacy_losses"] is None and rep["worst_class"] is None
    assert page.count("<svg") == SVGS - 3
    assert "No sensitive attribute" in sections(page)["privacy_losses"]
    # the exhaustive search evaluates every node
    assert rep["lattice"]["evaluated"] == result.lattice_size == len(result.evaluated_nodes)
    ar = rep["attribute_risks"]
    assert ar["max_size"] == 1 and len(ar["rows"]) == 4 == ar["computed"]
    capped = build_report(result, table, max_nodes=10)["lattice"]
    assert capped["drawn"] <= 10 and capped["optimum"]["levels"] in capped["nodes"]["levels"]


def test_strict_backend_gives_the_same_figures(adult, written):
    table, hierarchies = adult
    strict = fit(table, hierarchies, backend=strict_backend())
    rep = build_report(strict, table)
    _, cpu = written
    for key in ("class_sizes", "risk", "privacy_losses", "worst_class", "attribute_risks"):
        assert rep[key] == cpu[key], key
    # the release's description counts labels on the device: the same as on the CPU
    described = describe_release(strict)
    assert described == describe_release(fit(table, hierarchies))
    assert all(q["labels"] and q["levels"] for q in described["quasi_identifiers"])


def test_bad_arguments(result, adult, tmp_path):
    table, _ = adult
    with pytest.raises(TypeError, match="path must be a file path"):
        write_report(result, table, 123)
    with pytest.raises(TypeError, match="json_path must be a file path"):
        write_report(result, table, tmp_path / "r.html", json_path=4.5)
    with pytest.raises(ValueError, match="json_path .* and path .* are the same file"):
        write_report(result, table, tmp_path / "r.html", json_path=tmp_path / "r.html")
    _, twin = write_report(result, table, tmp_path / "t.html",
                           json_path=str(tmp_path / "t.data"))
    assert json.loads(twin.read_text("utf-8"))["summary"]["input_rows"] == ROWS
    with pytest.raises(TypeError):
        # json_path is keyword-only
        write_report(result, table, tmp_path / "r.html", tmp_path / "r.json")
    with pytest.raises(ValueError, match="max_classes must be an integer >= 1"):
        build_report(result, table, max_classes=0)
    with pytest.raises(ValueError, match="sensitive: 'salary-class' is not a sensitive"):
        build_report(result, table, sensitive="salary-class")
    with pytest.raises(ValueError, match="the table the result was fitted on"):
        write_report(result, table.head(10), tmp_path / "r.html")
    with pytest.raises(TypeError, match="AnonymizationResult"):
        build_report({"summary": {}}, table)
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.json").exists()


def qi_args() -> list[str]:
    out = []
    for q in QIDS:
        out += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    return out


def test_cli_end_to_end(adult, result, tmp_path, capsys):
    table, _ = adult
    source = tmp_path / "in.csv"
    table.to_csv(source, sep=";", index=False)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["report", str(source), *qi_args(), "--sensitive", "occupation",
            "--insensitive", "salary-class", "--l-diversity", "distinct:3", "--k", "5",
            "--suppression", "5%", "--seed", "1", "--quiet", "--html", str(out / "r.html"),
            "--output", str(out / "released.csv")]
    assert main(argv) == 0
    stdout = capsys.readouterr().out
    assert f"report             {out / 'r.html'}" in stdout
    page = (out / "r.html").read_text(encoding="utf-8")
    rep = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert page.count("<svg") == SVGS
    assert rep["summary"]["transformation"] == result.transformation
    released = pd.read_csv(out / "released.csv", sep=";", dtype=str, keep_default_na=False)
    assert (released[QIDS] == "*").all(axis=1).sum() == rep["summary"]["suppressed_records"]
    capsys.readouterr()

    assert main(argv + ["--top-classes", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "gpuppdp: error: --top-classes must be at least 1, got 0\n"
    with pytest.raises(SystemExit) as exc:
        main(argv[:-4])  # no --html
    assert exc.value.code == 2
    assert "--html" in capsys.readouterr().err


def test_one_part_per_sensitive_attribute(adult):
    """Models on two sensitive attributes: sections 4 and 5 show one plot for each, and their
    figures are the checker's for that attribute."""
    table, hierarchies = adult
    result = Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation", "salary-class"],
                        others="insensitive", k=5,
                        models=[DistinctLDiversity("occupation", 3),
                                DistinctLDiversity("salary-class", 2)],
                        suppression_limit=0.05, backend="cpu", seed=0).fit(table)
    rep = build_report(result, table)
    assert rep["summary"]["sensitive"] == ["occupation", "salary-class"]
    assert [p["sensitive"] for p in rep["privacy_losses"]] == ["occupation", "salary-class"]
    assert [w["sensitive"] for w in rep["worst_class"]] == ["occupation", "salary-class"]
    for part in rep["privacy_losses"]:
        measured = check(result.released, quasi_identifiers=QIDS, sensitive=part["sensitive"],
                         backend="cpu")
        assert part["distribution_loss_max"] == pytest.approx(measured["distribution_loss_max"])
    parts = sections(render_html(rep))
    assert parts["privacy_losses"].count("<svg") == 4
    assert parts["worst_class"].count("<svg") == 2
    only = build_report(result, table, sensitive="salary-class")
    assert [p["sensitive"] for p in only["privacy_losses"]] == ["salary-class"]


def test_write_report_checks_before_work_and_keeps_old_files(result, adult, tmp_path):
    """A report path in a missing folder is refused before the report is built, and the HTML
    file already there is kept (both files are replaced together or not at all)."""
    from gpuppdp.io import OutputError

    old = tmp_path / "r.html"
    old.write_text("previous")
    with pytest.raises(OutputError, match="does not exist"):
        write_report(result, adult[0], old, json_path=tmp_path / "missing" / "r.json")
    assert old.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]
