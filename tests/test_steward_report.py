"""The report a data protection officer reads (issue 12): a first section in plain words, the
files and columns, level labels, honest class-size bins with k marked, distribution and
entropy loss in separate panels, dominated classes flagged, the QID subsets folded with input
and release side by side; still one file with no script and nothing wider than a phone."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, DistinctLDiversity, datasets
from gpuppdp.cli.main import main
from gpuppdp.report import DOMINANCE_SHARE, build_report, model_sentence, render_html
from gpuppdp.report.figures import _size_bins

QIDS = ["sex", "age", "race", "marital-status"]
ROWS = 3000


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    table = data.loc[:ROWS - 1, QIDS + ["occupation", "education", "salary-class"]]
    return table.reset_index(drop=True), {q: hierarchies[q] for q in QIDS}


@pytest.fixture(scope="module")
def result(adult):
    table, hierarchies = adult
    return Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation"],
                      identifying=["education"], others="insensitive", k=5,
                      models=[DistinctLDiversity("occupation", 2)], suppression_limit=0.05,
                      backend="cpu", seed=0).fit(table)


@pytest.fixture(scope="module")
def report(result, adult):
    files = {"input": "data/people.csv", "output": "out/released.csv",
             "hierarchies": {q: f"h/{q}.csv" for q in QIDS}}
    return build_report(result, adult[0], files=files)


@pytest.fixture(scope="module")
def page(report):
    return render_html(report)


def section(page: str, key: str) -> str:
    return dict(re.findall(r'<section id="(\w+)">(.*?)</section>', page, re.S))[key]


def text(fragment: str) -> str:
    """The visible words of an HTML fragment (tags and SVGs dropped, entities kept)."""
    fragment = re.sub(r"<svg.*?</svg>", " ", fragment, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))


def test_plain_words_come_first(page, report, result):
    sections = re.findall(r'<section id="(\w+)">', page)
    assert sections[0] == "conclusion"
    words = text(section(page, "conclusion"))
    s = report["summary"]
    assert "data/people.csv" in words and "out/released.csv" in words
    assert f"{s['suppressed_records']:,} (" in words  # suppressed, with its share
    assert "removed: education" in words
    assert model_sentence({"model": "k-anonymity", "k": 5}) in words
    assert "at least 2 different values of occupation" in words
    after = report["risk"]["release"]
    smallest = report["class_sizes"]["smallest"]
    assert f"1 in {smallest}" in words
    assert after["prosecutor_highest_risk"] == pytest.approx(1 / smallest)
    for t in ("5%", "10%", "20%"):
        assert f"above {t}:" in words
    # the counts of records above each threshold are those of the release's classes
    sizes = result.released.loc[~(result.released[QIDS] == "*").all(axis=1)] \
        .groupby(QIDS).size().to_numpy()
    for t in (0.05, 0.1, 0.2):
        assert f"above {t:.0%}: {int(sizes[1 / sizes > t].sum()):,} records" in words
    assert "of the maximum" in words


def test_files_columns_and_level_labels(page, report, adult):
    _, hierarchies = adult
    summary = section(page, "summary")
    for path in ["data/people.csv", "out/released.csv"] + [f"h/{q}.csv" for q in QIDS]:
        assert path in summary
    s = report["summary"]
    assert s["removed_columns"] == ["education"] and s["identifying_columns"] == ["education"]
    assert s["insensitive_columns"] == ["salary-class"]
    for q in s["quasi_identifiers"]:
        labels = set(hierarchies[q["name"]].labels(q["level"]))
        assert q["labels"] and set(q["labels"]) <= labels
        for label in q["labels"]:
            assert f"{label}" in summary
        chosen = q["levels"][q["level"]]["sample"]
        assert chosen in labels and f"[{chosen}]" in summary


def test_class_sizes_start_at_k_with_equal_or_doubling_bins(report, page):
    cs = report["class_sizes"]
    bins = cs["bins"]
    assert cs["k"] == cs["smallest_allowed"] == 5 and bins[0]["low"] == 5
    widths = [b["high"] - b["low"] + 1 for b in bins]
    assert all(w == 1 for w in widths) or all(
        abs(b / a - 2) < 0.25 for a, b in zip(widths[:-2], widths[1:-1]))
    assert sum(b["classes"] for b in bins) == cs["classes"]
    body = section(page, "class_sizes")
    assert "stroke-dasharray" in body and "k = 5" in body


def test_doubling_bins_are_honest():

    sizes = np.array([5, 5, 7, 12, 40, 41, 300, 1000])
    bins = _size_bins(sizes, 5)
    assert [b["low"] for b in bins] == [5, 10, 20, 40, 80, 160, 320, 640]
    assert [b["classes"] for b in bins] == [3, 1, 0, 2, 0, 1, 0, 1]
    assert sum(b["records"] for b in bins) == sizes.sum()
    unit = _size_bins(np.array([6, 6, 9]), 5)
    assert [b["label"] for b in unit] == ["5", "6", "7", "8", "9"]
    assert [b["classes"] for b in unit] == [0, 2, 0, 0, 1]


def test_losses_in_two_panels_with_units(page):
    body = section(page, "privacy_losses")
    svgs = re.findall(r"<svg.*?</svg>", body, re.S)
    assert len(svgs) == 2
    assert "distribution loss" in svgs[0] and "entropy" not in svgs[0].split("</title>")[0]
    assert "entropy loss (bits)" in svgs[1]
    assert "#1<" not in body  # classes are named by their values, not by rank only


def test_dominated_classes_are_flagged(report, page, result):
    (d,) = report["dominance"]
    released = result.released
    kept = released.loc[~(released[QIDS] == "*").all(axis=1)]
    shares = kept.groupby(QIDS)["occupation"].agg(
        lambda col: col.value_counts().iloc[0] / len(col))
    sizes = kept.groupby(QIDS).size()
    dominated = shares > DOMINANCE_SHARE
    assert d["classes"] == int(dominated.sum()) > 0
    assert d["records"] == int(sizes[dominated].sum())
    assert d["classes_total"] == len(shares)
    assert [r["share"] for r in d["rows"]] == sorted((r["share"] for r in d["rows"]),
                                                     reverse=True)
    assert all(r["share"] > 0.5 for r in d["rows"])
    body = section(page, "worst_class")
    assert body.count('<tr class="flag">') == len(d["rows"])
    assert f"{d['classes']} of {d['classes_total']}" in text(section(page, "conclusion"))


def test_subsets_folded_with_input_and_release(report, page):
    body = section(page, "attribute_risks")
    assert re.search(r"<details><summary>.*?</summary>\s*<div class=\"scroll\"><table>", body,
                     re.S)
    assert "Distinction (release)" in body
    ar = report["attribute_risks"]
    full = next(r for r in ar["rows"] if len(r["attributes"]) == len(QIDS))
    cs = report["class_sizes"]
    assert full["release_distinction"] == pytest.approx(cs["classes"] / cs["records"])
    # generalizing merges combinations and suppressing removes some: never more than before
    for r in ar["rows"]:
        assert round(r["release_distinction"] * cs["records"]) <= round(r["distinction"] * ROWS)


def test_nothing_wider_than_a_phone(page):
    assert "<script" not in page.lower()
    assert not re.search(r"https?://", page)
    assert 'name="viewport"' in page
    for width in re.findall(r'<svg width="(\d+)"', page):
        assert int(width) <= 640
    assert "svg { display: block; margin: 0.5em 0; max-width: 100%; height: auto; }" in page
    for px in re.findall(r"(?<![-\w])width:\s*(\d+)px", page):  # max-width aside
        assert int(px) <= 200
    assert "@media (max-width: 700px)" in page
    # every table scrolls in its own box instead of widening the page
    assert page.count("<table>") == page.count('<div class="scroll"><table>')


def test_cli_report_names_its_files(adult, tmp_path, capsys):
    table, _ = adult
    source = tmp_path / "people.csv"
    table.to_csv(source, index=False)
    qi = [a for q in QIDS
          for a in ("--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}")]
    html = tmp_path / "r.html"
    assert main(["report", str(source), *qi, "--identifying", "education", "--others",
                 "insensitive", "--k", "5", "--suppression", "5%", "--quiet", "--seed", "0",
                 "--html", str(html), "--output", str(tmp_path / "rel.csv")]) == 0
    capsys.readouterr()
    page = html.read_text(encoding="utf-8")
    rep = json.loads(html.with_suffix(".json").read_text(encoding="utf-8"))
    assert str(source) in page and str(tmp_path / "rel.csv") in page
    s = rep["summary"]
    assert s["input"] == str(source) and s["files"]["html"] == str(html)
    assert s["removed_columns"] == ["education"]
    released = pd.read_csv(tmp_path / "rel.csv", dtype=str, keep_default_na=False)
    assert s["rows_in_release"] == len(released) == s["released_records"] + \
        s["suppressed_records"]
    age = next(q for q in s["quasi_identifiers"] if q["name"] == "age")
    assert set(age["labels"]) <= set(released["age"])
