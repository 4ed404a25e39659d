"""The HTML report (and its JSON twin) for every algorithm of ``gpuppdp anonymize
--algorithm``: full-domain, Mondrian (strict, relaxed) and TDS (subtree, sibling; HDTDS).

On Adult rows: the report names the algorithm, its record counts add up (released +
suppressed = input), its risk figures equal an independent recomputation from the released
table (highest prosecutor risk = 1 / smallest released class, by pandas), the class sizes sum
to the released records, and nothing that only a lattice node has (a level per QID, the
lattice) appears for Mondrian or TDS."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.algorithms.mondrian import mondrian
from gpuppdp.algorithms.tds import tds
from gpuppdp.cli.main import main
from gpuppdp.report import PARTITION_SECTION_TITLES, SECTION_TITLES, build_report, write_report
from gpuppdp.report.partition import TOP_AS_RELEASED

ROWS = 2000
CAT = ["sex", "race", "education", "marital-status"]
QIDS = ["age", *CAT]
NAMES = {"mondrian": "Mondrian multidimensional partitioning",
         "tds": "top-down specialization (TDS)", "hdtds": "top-down specialization (HDTDS)"}


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    table = data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class"]].reset_index(drop=True)
    table["age"] = pd.to_numeric(table["age"])
    return table, {c: hierarchies[c] for c in CAT}, hierarchies


RUNS = {
    "mondrian-strict": lambda d, h: mondrian(d, QIDS, k=5, sensitive="occupation", l=2,
                                             hierarchies=h),
    "mondrian-relaxed": lambda d, h: mondrian(d, QIDS, k=5, strict=False, hierarchies=h),
    "tds-subtree": lambda d, h: tds(d, QIDS, k=10, target="salary-class", hierarchies=h),
    "tds-sibling": lambda d, h: tds(d, QIDS, k=10, target="salary-class", hierarchies=h,
                                    generalization="sibling"),
    "hdtds": lambda d, h: tds(d, QIDS, lkc=(2, 10, 0.9), sensitive="occupation",
                              hierarchies=h),
}


def smallest_class(released: pd.DataFrame, qids) -> int:
    """The smallest class of the released records, by pandas (rows of '*' on every QID are
    suppressed records)."""
    table = released[qids].astype(str)
    table = table[~(table == "*").all(axis=1)]
    return int(table.groupby(qids, observed=True).size().min())


def text_of(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", "", page,
                                                                flags=re.S)))


@pytest.fixture(scope="module", params=sorted(RUNS))
def written(request, adult, tmp_path_factory):
    data, hier, _ = adult
    release = RUNS[request.param](data, hier)
    path = tmp_path_factory.mktemp("report") / f"{request.param}.html"
    html_path, json_path = write_report(release, data, path)
    return (request.param, release, html_path.read_text("utf-8"),
            json.loads(json_path.read_text("utf-8")))


def test_report_of_each_algorithm(written, adult):
    name, release, page, rep = written
    data = adult[0]
    s = rep["summary"]
    scheme = release.summary()["algorithm"]
    assert s["algorithm"] == ("mondrian" if name.startswith("mondrian") else "tds")
    assert s["scheme"] == scheme
    assert NAMES[scheme] in text_of(page)
    # record counts add up
    assert s["released_records"] + s["suppressed_records"] == s["input_rows"] == len(data)
    assert s["suppressed_records"] == 0 and s["rows_in_release"] == len(data)
    assert rep["class_sizes"]["records"] == len(data)
    # the risk, recomputed from the released table
    released = release.released
    smallest = smallest_class(released, QIDS)
    classes = released[QIDS].astype(str).drop_duplicates()
    assert not (classes == "*").all(axis=1).any() or name == "tds-sibling"
    assert rep["risk"]["release"]["prosecutor_highest_risk"] == pytest.approx(1 / smallest)
    assert rep["class_sizes"]["smallest"] == smallest == s["smallest_class"]
    assert rep["class_sizes"]["classes"] == len(classes) == s["equivalence_classes"]
    assert rep["risk"]["release"]["records"] == len(data)
    sizes = released.groupby([released[q].astype(str) for q in QIDS]).size()
    assert rep["risk"]["release"]["prosecutor_average_risk"] == pytest.approx(
        len(sizes) / len(data))
    before = data.groupby(QIDS).size()
    assert rep["risk"]["input"]["prosecutor_highest_risk"] == pytest.approx(1 / before.min())
    # NCP/GCP, no lattice, no level per QID
    assert s["gcp"] == pytest.approx(release.gcp)
    assert s["ncp"] == pytest.approx(release.ncp)
    assert f"GCP {release.gcp:.4g}" in text_of(page)
    assert rep["lattice"] is None and rep["partitioning"]["partitions"] == release.partitions
    ids = re.findall(r'<section id="(\w+)">', page)
    assert ids == list(PARTITION_SECTION_TITLES) and "lattice" not in ids
    assert "Generalization lattice" not in page and "generalized to level" not in page
    assert all(q["level"] is None for q in s["quasi_identifiers"])
    # ranges and cut labels are shown as released
    ages = released["age"].astype(str)
    assert ages.str.fullmatch(r"\[\d+-\d+\]|\d+").all()
    top_age = ages.value_counts().index[0]
    assert top_age in {v for q in s["quasi_identifiers"] if q["name"] == "age"
                       for v in q["labels"]}
    if name.startswith("tds") or name == "hdtds":
        for q, values in release.cut.items():
            assert rep["partitioning"]["cut"][q] == [str(v) for v in values]
        assert len(rep["partitioning"]["steps"]) == release.specializations
        assert "Values of the final cut" in page


def test_sensitive_sections_follow_the_release(written):
    name, release, page, rep = written
    if release.sensitive is None:
        assert rep["privacy_losses"] is None
        return
    assert [p["sensitive"] for p in rep["privacy_losses"]] == ["occupation"]
    assert rep["worst_class"][0]["size"] >= rep["class_sizes"]["smallest"]


def test_models_of_the_release(written):
    name, release, _, rep = written
    models = rep["summary"]["models"]
    if name == "hdtds":
        assert models == [{"model": "lkc-privacy", "L": 2, "K": 10, "C": 0.9,
                           "attribute": "occupation"}]
        assert rep["class_sizes"]["smallest_allowed"] is None   # LKC bounds QID subsets
    else:
        assert models[0] == {"model": "k-anonymity", "k": release.k}
        assert rep["class_sizes"]["smallest_allowed"] == release.k


def test_sibling_rows_at_every_root_are_released_records():
    from gpuppdp.hierarchy import Hierarchy

    h = Hierarchy.flat(["x", "y", "z"], name="v")
    data = pd.DataFrame({"v": ["x", "y", "x", "z", "y"], "s": list("abcab")})
    release = tds(data, ["v"], k=2, hierarchies={"v": h}, generalization="sibling")
    rep = build_report(release, data)
    assert rep["summary"]["released_records"] == 5 and rep["class_sizes"]["records"] == 5
    assert rep["risk"]["release"]["prosecutor_highest_risk"] == pytest.approx(1 / 2)
    assert sorted(rep["summary"]["quasi_identifiers"][0]["labels"]) == sorted(
        [TOP_AS_RELEASED, next(v for v in release.cut["v"] if v != "*")])


def test_build_report_errors(adult):
    data, hier, full = adult
    release = RUNS["mondrian-relaxed"](data, hier)
    with pytest.raises(ValueError, match="the table the release was made of"):
        build_report(release, data.iloc[:10])
    with pytest.raises(ValueError, match="not a column"):
        build_report(release, data, sensitive="nope")
    result = Anonymizer(quasi_identifiers={q: full[q] for q in CAT}, k=5,
                        others="insensitive", suppression_limit=0.05, seed=0) \
        .fit(data.drop(columns=["age"]))
    with pytest.raises(TypeError, match="Mondrian and TDS"):
        build_report(result, data.drop(columns=["age"]), summary={})


# --------------------------------------------------------------------------------------
# gpuppdp report --algorithm ...
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(adult, tmp_path_factory):
    data, _, _ = adult
    folder = tmp_path_factory.mktemp("cli")
    data.to_csv(folder / "in.csv", sep=";", index=False)
    return folder


def qi_args(numeric_age: bool) -> list[str]:
    out = ["--qi", "age" if numeric_age else
           f"age={datasets.adult_path('adult_hierarchy_age.csv')}"]
    for q in CAT:
        out += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    return out


CLI = {
    "full-domain": ["--k", "5", "--suppression", "5%"],
    "mondrian": ["--algorithm", "mondrian", "--k", "5", "--sensitive", "occupation",
                 "--l-diversity", "distinct:2"],
    "tds": ["--algorithm", "tds", "--k", "10", "--target", "salary-class",
            "--generalization", "sibling", "--sensitive", "occupation"],
}


@pytest.mark.parametrize("algorithm", sorted(CLI))
def test_cli_report(algorithm, files, adult, capsys):
    data = adult[0]
    html, released_csv = files / f"{algorithm}.html", files / f"{algorithm}.csv"
    argv = ["report", str(files / "in.csv"), *qi_args(algorithm != "full-domain"),
            *CLI[algorithm], "--others", "insensitive", "--seed", "3", "--quiet",
            "--html", str(html), "--output", str(released_csv)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"report             {html}" in out
    rep = json.loads(html.with_suffix(".json").read_text("utf-8"))
    page = html.read_text("utf-8")
    s = rep["summary"]
    released = pd.read_csv(released_csv, sep=";", dtype=str, keep_default_na=False)
    assert len(released) == s["rows_in_release"] == len(data)
    assert s["released_records"] + s["suppressed_records"] == s["input_rows"] == len(data)
    suppressed = int((released[QIDS] == "*").all(axis=1).sum())
    assert s["suppressed_records"] == suppressed
    assert rep["risk"]["release"]["prosecutor_highest_risk"] == pytest.approx(
        1 / smallest_class(released, QIDS))
    assert s["files"]["html"] == str(html) and s["files"]["output"] == str(released_csv)
    if algorithm == "full-domain":
        assert list(re.findall(r'<section id="(\w+)">', page)) == list(SECTION_TITLES)
        assert rep["lattice"] is not None
    else:
        assert s["algorithm"] == algorithm and s["ncp"] and 0 < s["gcp"] < 1
        assert "GCP" in text_of(page) and "Generalization lattice" not in page
        assert rep["privacy_losses"][0]["sensitive"] == "occupation"
    if algorithm == "tds":
        assert s["details"]["generalization"] == "sibling"
        assert "sibling generalization" in text_of(page)


@pytest.mark.parametrize("argv, fragment", [
    (["--generalization", "sibling"], "--generalization is an option of --algorithm tds"),
    (["--relaxed"], "--relaxed is an option of --algorithm mondrian"),
    (["--algorithm", "mondrian", "--generalization", "sibling"],
     "--generalization is an option of --algorithm tds"),
])
def test_cli_report_errors(argv, fragment, files, capsys):
    rc = main(["report", str(files / "in.csv"), *qi_args(False), "--k", "5",
               "--others", "insensitive", "--quiet", "--html", str(files / "bad.html"),
               *argv])
    assert rc == 2
    assert fragment in capsys.readouterr().err
    assert not (files / "bad.html").exists()


def test_cli_report_refuses_a_bare_qid_for_full_domain(files, capsys):
    rc = main(["report", str(files / "in.csv"), *qi_args(True), "--k", "5",
               "--others", "insensitive", "--quiet", "--html", str(files / "bad.html")])
    assert rc == 2
    assert "needs a hierarchy" in capsys.readouterr().err
