"""``gpuppdp anonymize --algorithm full-domain|mondrian|tds``: one command, the releases
checked by the independent checker, the same JSON keys (``ncp``/``gcp`` for every
algorithm), QIDs without hierarchy numeric for Mondrian and TDS only."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gpuppdp.algorithms import TDS, Mondrian
from gpuppdp.algorithms.mondrian import certainty_penalty
from gpuppdp.analysis.checker import check
from gpuppdp.cli.main import main
from gpuppdp.hierarchy import Hierarchy

PAPER = [("9th", "M", 30, 0, 3), ("10th", "M", 32, 0, 4), ("11th", "M", 35, 2, 3),
         ("12th", "F", 37, 3, 1), ("Bachelors", "F", 42, 4, 2), ("Bachelors", "F", 44, 4, 0),
         ("Masters", "M", 44, 4, 0), ("Masters", "F", 44, 3, 0), ("Doctorate", "F", 44, 1, 0)]
EDU_ROWS = [["9th", "Junior Sec.", "Secondary", "ANY"],
            ["10th", "Junior Sec.", "Secondary", "ANY"],
            ["11th", "Senior Sec.", "Secondary", "ANY"],
            ["12th", "Senior Sec.", "Secondary", "ANY"],
            ["Bachelors", "Bachelors", "University", "ANY"],
            ["Masters", "Grad School", "University", "ANY"],
            ["Doctorate", "Grad School", "University", "ANY"]]
SEX_ROWS = [["M", "ANY"], ["F", "ANY"]]
KEYS = {"transformation", "ncp", "gcp", "rows_in_release", "released_records",
        "suppressed_records", "input", "output", "models"}


@pytest.fixture
def files(tmp_path: Path) -> dict:
    recs = []
    for edu, sex, hrs, yes, no in PAPER:
        recs += [(edu, sex, hrs, "Y")] * yes + [(edu, sex, hrs, "N")] * no
    data = pd.DataFrame(recs, columns=["Education", "Sex", "Work_Hrs", "Class"])
    data["Id"] = range(len(data))
    data.to_csv(tmp_path / "in.csv", sep=";", index=False)
    for name, rows in (("edu", EDU_ROWS), ("sex", SEX_ROWS)):
        (tmp_path / f"{name}.csv").write_text("\n".join(";".join(r) for r in rows) + "\n")
    return {"data": data, "in": str(tmp_path / "in.csv"), "edu": str(tmp_path / "edu.csv"),
            "sex": str(tmp_path / "sex.csv"), "dir": tmp_path}


def run(capsys, files, *argv, name="out") -> tuple[int, pd.DataFrame | None, dict | None, str]:
    out, js = files["dir"] / f"{name}.csv", files["dir"] / f"{name}.json"
    rc = main(["anonymize", files["in"], "--qi", f"Education={files['edu']}",
               "--qi", f"Sex={files['sex']}", "--identifying", "Id", "--quiet",
               "--output", str(out), "--json", str(js), "--seed", "1", *argv])
    captured = capsys.readouterr()
    if rc:
        return rc, None, None, captured.err
    return (rc, pd.read_csv(out, sep=";", dtype=str), json.loads(js.read_text()),
            captured.out)


def hierarchies():
    return {"Education": Hierarchy.from_rows(EDU_ROWS, name="Education"),
            "Sex": Hierarchy.from_rows(SEX_ROWS, name="Sex")}


def test_tds_release_is_the_library_release_and_checked(capsys, files):
    rc, out, summary, stdout = run(capsys, files, "--qi", "Work_Hrs", "--insensitive", "Class",
                                   "--k", "4", "--algorithm", "tds", "--target", "Class")
    assert rc == 0
    assert KEYS <= set(summary) and summary["transformation"] is None
    assert summary["algorithm"] == "tds" and summary["models"] == [{"model": "k-anonymity",
                                                                     "k": 4}]
    assert summary["rows_in_release"] == summary["released_records"] == 34
    assert summary["suppressed_records"] == 0
    assert summary["input"] == files["in"] and summary["output"].endswith("out.csv")
    assert "Id" not in out.columns
    qids = ["Education", "Sex", "Work_Hrs"]
    assert check(out, quasi_identifiers=qids)["k"] >= 4
    lib = TDS(qids, k=4, target="Class", hierarchies=hierarchies()).fit(files["data"])
    assert summary["ncp"] == pytest.approx(lib.ncp) and summary["gcp"] == pytest.approx(lib.gcp)
    counts = lambda t: t[qids].astype(str).value_counts().sort_index()  # noqa: E731
    pd.testing.assert_series_equal(counts(out), counts(lib.released))
    assert summary["details"]["specializations"] == lib.specializations
    assert summary["check"]["k"] >= 4
    assert "top-down specialization" in stdout


@pytest.mark.parametrize("target", [None, "Class"])
def test_tds_sibling_generalization(capsys, files, target):
    more = ["--target", "Class"] if target else ["--insensitive", "Class"]
    qids = ["Education", "Sex", "Work_Hrs"]
    results = {}
    for scheme in ("subtree", "sibling"):
        rc, out, summary, stdout = run(capsys, files, "--qi", "Work_Hrs", *more, "--k", "5",
                                       "--algorithm", "tds", "--generalization", scheme,
                                       name=scheme)
        assert rc == 0 and f"({scheme} generalization)" in stdout
        assert summary["details"]["generalization"] == scheme
        assert summary["rows_in_release"] == summary["released_records"] == 34
        assert check(out, quasi_identifiers=qids)["k"] >= 5
        lib = TDS(qids, k=5, target=target, hierarchies=hierarchies(),
                  generalization=scheme).fit(files["data"])
        assert summary["gcp"] == pytest.approx(lib.gcp)
        results[scheme] = summary
    assert results["sibling"]["gcp"] <= results["subtree"]["gcp"] + 1e-12


def test_hdtds_lkc(capsys, files):
    rc, out, summary, _ = run(capsys, files, "--qi", "Work_Hrs", "--sensitive", "Class",
                              "--lkc", "2,4,0.9", "--algorithm", "tds")
    assert rc == 0
    m = check(out, quasi_identifiers=["Education", "Sex", "Work_Hrs"], sensitive="Class",
              lkc=(2, 4, 0.9))
    assert m["lkc_satisfied"] and summary["check"]["lkc_satisfied"]
    assert summary["models"][0]["model"] == "lkc-privacy"
    assert summary["details"]["algorithm"] == "hdtds"


def test_mondrian_with_l_diversity(capsys, files):
    rc, out, summary, _ = run(capsys, files, "--qi", "Work_Hrs", "--sensitive", "Class",
                              "--k", "3", "--l-diversity", "distinct:2",
                              "--algorithm", "mondrian")
    assert rc == 0
    qids = ["Education", "Sex", "Work_Hrs"]
    m = check(out, quasi_identifiers=qids, sensitive="Class")
    assert m["k"] >= 3 and m["distinct_l"] >= 2
    lib = Mondrian(qids, k=3, sensitive="Class", l=2, hierarchies=hierarchies()).fit(files["data"])
    assert summary["gcp"] == pytest.approx(lib.gcp)
    assert summary["transformation"] is None and KEYS <= set(summary)
    assert [m["model"] for m in summary["models"]] == ["k-anonymity", "distinct-l-diversity"]


def test_mondrian_with_t_closeness_and_entropy_l(capsys, files):
    """Any class-level model goes to Mondrian; the release is re-measured by the checker."""
    from gpuppdp.models import EntropyLDiversity, TCloseness

    rc, out, summary, _ = run(capsys, files, "--qi", "Work_Hrs", "--sensitive", "Class",
                              "--k", "2", "--t-closeness", "equal:0.3", "--l-diversity",
                              "entropy:1.5", "--algorithm", "mondrian")
    assert rc == 0
    qids = ["Education", "Sex", "Work_Hrs"]
    m = check(out, quasi_identifiers=qids, sensitive="Class")
    assert m["k"] >= 2 and m["t_equal"] <= 0.3 + 1e-12 and m["entropy_l"] >= 1.5 - 1e-9
    lib = Mondrian(qids, k=2, sensitive="Class", hierarchies=hierarchies(),
                   models=[TCloseness("Class", 0.3, "equal"),
                           EntropyLDiversity("Class", 1.5)]).fit(files["data"])
    assert summary["gcp"] == pytest.approx(lib.gcp)
    assert [m["model"] for m in summary["models"]] == ["k-anonymity", "entropy-l-diversity",
                                                       "t-closeness"]


def test_full_domain_json_has_ncp(capsys, files):
    rc, out, summary, _ = run(capsys, files, "--insensitive", "Class",
                              "--insensitive", "Work_Hrs", "--k", "4")
    assert rc == 0
    assert KEYS <= set(summary) and summary["algorithm"] == "full-domain"
    assert summary["transformation"] == {"Education": 1, "Sex": 0}
    expected = certainty_penalty(out, out, ["Education", "Sex"], hierarchies=hierarchies())
    assert summary["ncp"] == pytest.approx(expected["ncp"])
    assert summary["gcp"] == pytest.approx(expected["gcp"])


def test_full_domain_refuses_a_qid_without_hierarchy(capsys, files):
    with pytest.raises(SystemExit) as info:
        run(capsys, files, "--qi", "Work_Hrs", "--insensitive", "Class", "--k", "4")
    assert info.value.code == 2
    assert "quasi-identifier 'Work_Hrs' needs a hierarchy" in capsys.readouterr().err


@pytest.mark.parametrize("argv,fragment", [
    (["--algorithm", "tds", "--qi", "Work_Hrs", "--insensitive", "Class"],
     "--algorithm tds needs --k and/or --lkc"),
    (["--algorithm", "mondrian", "--qi", "Work_Hrs", "--insensitive", "Class", "--k", "2",
      "--target", "Class"], "--target is the classification attribute of --algorithm tds"),
    (["--algorithm", "tds", "--qi", "Work_Hrs", "--sensitive", "Class", "--k", "2",
      "--t-closeness", "equal:0.2"], "does not support --t-closeness"),
    (["--algorithm", "mondrian", "--qi", "Work_Hrs", "--sensitive", "Class", "--k", "2",
      "--lkc", "2,2,0.9"], "does not support --lkc"),
    (["--algorithm", "tds", "--qi", "Work_Hrs", "--insensitive", "Class", "--k", "2",
      "--suppression", "5%"], "does not support --suppression"),
    (["--algorithm", "tds", "--qi", "Work_Hrs", "--k", "2"], "1 column(s) have no role: 'Class'"),
    (["--algorithm", "mondrian", "--qi", "Work_Hrs", "--insensitive", "Class", "--k", "2",
      "--generalization", "sibling"], "--generalization is an option of --algorithm tds"),
    (["--algorithm", "tds", "--qi", "Class", "--insensitive", "Work_Hrs", "--k", "2"],
     "must be numeric"),
])
def test_errors(capsys, files, argv, fragment):
    rc, _, _, err = run(capsys, files, *argv)
    assert rc != 0
    assert fragment in err
    assert "Traceback" not in err


def test_full_domain_refuses_generalization(capsys, files):
    with pytest.raises(SystemExit) as info:
        run(capsys, files, "--qi", f"Work_Hrs={files['sex']}", "--insensitive", "Class",
            "--k", "2", "--generalization", "sibling")
    assert info.value.code == 2
    assert "--generalization is an option of --algorithm tds" in capsys.readouterr().err
