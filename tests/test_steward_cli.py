"""What a data steward meets on the command line (issue 12): one-line usage errors, progress
without carriage returns in logs, one ``--qi COL[=HIERARCHY.csv]`` grammar for ``check`` and
``risk``, summary counts that add up, and a JSON summary that names its files and columns."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.cli.main import build_parser, main
from gpuppdp.cli.progress import ProgressBar
from gpuppdp.cli.run import anonymizer_from_args, release_plan, run_summary

QIDS = ["sex", "age", "race", "education"]
ROWS = 800


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    data, _ = datasets.adult()
    part = data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class", "workclass"]].copy()
    part.insert(0, "name", [f"person {i}" for i in range(ROWS)])
    return part.reset_index(drop=True)


@pytest.fixture()
def source(table, tmp_path):
    path = tmp_path / "people.csv"
    table.to_csv(path, sep=",", index=False)
    return path


def hierarchy(q: str) -> str:
    return datasets.adult_path(f"adult_hierarchy_{q}.csv")


def qi_args(qids=QIDS) -> list[str]:
    return [a for q in qids for a in ("--qi", f"{q}={hierarchy(q)}")]


# -- usage errors ------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,prog,fragment", [
    (["anonymize", "in.csv", "--qi", "a=b.csv", "--metric", "nosuch", "--output", "o.csv"],
     "gpuppdp anonymize", "argument --metric: invalid choice: 'nosuch'"),
    (["check", "in.csv"], "gpuppdp check", "the following arguments are required: --qi"),
    (["risk", "in.csv", "--qi", "a", "--top", "many"], "gpuppdp risk", "argument --top"),
    (["nosuch"], "gpuppdp", "argument command: invalid choice: 'nosuch'"),
    (["demo", "--bogus"], "gpuppdp", "unrecognized arguments: --bogus"),
])
def test_usage_error_is_one_line(capsys, argv, prog, fragment):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: error: ")
    assert fragment in lines[0]
    assert lines[0].endswith(f"(see {prog} --help)")


def test_help_still_prints_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["check", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "COL[=HIERARCHY.csv]" in out


# -- progress ----------------------------------------------------------------------------------
def _progress(monkeypatch, tty, steps, total=97):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    bar = ProgressBar("search", True, tty=tty)
    for done in steps:
        bar(done, total)
    return err.getvalue()


def test_progress_plain_lines_when_not_a_terminal(monkeypatch):
    text = _progress(monkeypatch, False, range(98))
    assert "\r" not in text
    lines = text.splitlines()
    assert 2 <= len(lines) <= 11  # one line per tenth at most
    assert lines[-1] == "search: 100% (97/97 nodes)"
    shares = [int(line.split(": ")[1].split("%")[0]) for line in lines]
    assert shares == sorted(shares) and len(set(shares)) == len(shares)


def test_progress_bar_redrawn_on_a_terminal(monkeypatch):
    text = _progress(monkeypatch, True, range(98))
    assert text.startswith("\rsearch [") and text.endswith("97/97 nodes\n")
    assert text.count("\n") == 1


def test_progress_asks_stderr_whether_it_is_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    ProgressBar("risk", True, unit="subsets")(5, 5)
    assert err.getvalue().startswith("\rrisk [") and "5/5 subsets" in err.getvalue()


def test_progress_disabled_prints_nothing(monkeypatch):
    assert _progress(monkeypatch, False, range(98)) != ""
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    ProgressBar("search", False)(3, 7)
    assert err.getvalue() == ""


# -- one --qi grammar for check and risk ---------------------------------------------------------
@pytest.mark.parametrize("command,extra", [("check", ["--sensitive", "occupation"]),
                                           ("risk", [])])
def test_check_and_risk_take_hierarchies(capsys, tmp_path, source, command, extra):
    plain = tmp_path / "plain.json"
    with_h = tmp_path / "with.json"
    assert main([command, str(source), "--qi", *QIDS, *extra, "--json", str(plain)]) == 0
    assert main([command, str(source), *qi_args(), *extra, "--json", str(with_h)]) == 0
    mixed = tmp_path / "mixed.json"
    assert main([command, str(source), "--qi", f"sex={hierarchy('sex')}", "age,race",
                 "--qi", "education", *extra, "--json", str(mixed)]) == 0
    capsys.readouterr()
    a, b, c = (json.loads(p.read_text()) for p in (plain, with_h, mixed))
    assert a == b == c


@pytest.mark.parametrize("command", ["check", "risk"])
def test_hierarchy_must_cover_the_values(capsys, tmp_path, source, command):
    # the education hierarchy given for age: the ages are not its labels
    rc = main([command, str(source), "--qi", f"age={hierarchy('education')}", "sex",
               "--json", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"gpuppdp: error: --qi age={hierarchy('education')}: ")
    assert "are not labels of the hierarchy" in err
    assert not (tmp_path / "x.json").exists()


def test_released_labels_pass_the_hierarchy_check(capsys, tmp_path, source):
    out = tmp_path / "rel.csv"
    assert main(["anonymize", str(source), *qi_args(), "--identifying", "name", "--others",
                 "insensitive", "--k", "5", "--suppression", "5%", "--quiet", "--seed", "0",
                 "--output", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", str(out), *qi_args(), "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["k"] >= 5


@pytest.mark.parametrize("argv_tail", [["--qi", "=x.csv"], ["--qi", "age="], ["--qi", ","]])
def test_malformed_qi(capsys, argv_tail):
    with pytest.raises(SystemExit) as info:
        main(["risk", "in.csv", *argv_tail])
    assert info.value.code == 2
    assert "--qi expects COLUMN or COLUMN=HIERARCHY.csv" in capsys.readouterr().err


def test_column_given_twice(capsys, source):
    assert main(["risk", str(source), "--qi", "age", "--qi", f"age={hierarchy('age')}"]) == 2
    assert "column given twice: age" in capsys.readouterr().err


# -- summary counts ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["mark", "drop"])
@pytest.mark.parametrize("metric", ["loss", "discernibility"])
def test_summary_counts_add_up(table, mode, metric):
    _, hierarchies = datasets.adult()
    result = Anonymizer(quasi_identifiers={q: hierarchies[q] for q in QIDS},
                        identifying=["name"], others="insensitive", k=10,
                        suppression_limit=0.1, suppressed=mode, metric=metric,
                        backend="cpu", seed=0).fit(table)
    s = result.summary()
    released = result.released
    suppressed = int((released[QIDS] == "*").all(axis=1).sum())
    assert s["rows_in_release"] == len(released)
    assert s["released_records"] + s["suppressed_records"] == s["input_rows"] == ROWS
    assert s["suppressed_records"] > 0
    if mode == "mark":
        assert s["rows_in_release"] == ROWS == s["released_records"] + suppressed
        assert suppressed == s["suppressed_records"]
    else:
        assert s["rows_in_release"] == s["released_records"] and suppressed == 0
    assert 0 < s["information_loss_relative"] < 1
    if metric == "loss":
        assert s["information_loss_relative"] == s["information_loss"]
        assert "share of the maximum" in s["information_loss_scale"]
    else:
        assert s["information_loss_relative"] == pytest.approx(s["information_loss"] / ROWS ** 2)
        assert f"maximum {ROWS ** 2}" in s["information_loss_scale"]


def test_console_summary_says_the_scale(capsys, tmp_path, source):
    assert main(["anonymize", str(source), *qi_args(), "--identifying", "name", "--others",
                 "insensitive", "--k", "5", "--suppression", "5%", "--quiet",
                 "--output", str(tmp_path / "o.csv")]) == 0
    out = capsys.readouterr().out
    assert "of the maximum)" in out and "records released unsuppressed" in out


# -- the JSON of a run ----------------------------------------------------------------------------
def test_run_summary_names_files_and_columns(source, tmp_path):
    out = tmp_path / "rel.csv"
    args = build_parser().parse_args(
        ["anonymize", str(source), *qi_args(), "--identifying", "name", "--insensitive",
         "workclass", "--sensitive", "occupation", "--others", "drop", "--k", "5",
         "--suppression", "5%", "--output", str(out), "--json", str(tmp_path / "s.json")])
    plan = release_plan(args).add("--json", args.json)
    data, anonymizer = anonymizer_from_args(args)
    result = anonymizer.fit(data)
    s = run_summary(result, args, plan)
    json.dumps(s)  # plain JSON values
    assert s["input"] == str(source) and s["output"] == str(out)
    assert s["files"]["hierarchies"] == {q: hierarchy(q) for q in QIDS}
    assert s["files"]["json"] == str(tmp_path / "s.json")
    assert s["identifying_columns"] == ["name"]
    assert s["dropped_columns"] == ["salary-class"]
    assert s["removed_columns"] == ["name", "salary-class"]
    assert s["insensitive_columns"] == ["workclass"]
    assert s["sensitive_columns"] == ["occupation"]
    _, hierarchies = datasets.adult()
    for q in s["quasi_identifiers"]:
        h = hierarchies[q["name"]]
        assert q["level"] == result.transformation[q["name"]]
        assert q["max_level"] == h.height and q["hierarchy"] == hierarchy(q["name"])
        level_labels = set(h.labels(q["level"]))
        assert q["labels"] and set(q["labels"]) <= level_labels
        assert [v["level"] for v in q["levels"]] == list(range(h.height + 1))
        for v in q["levels"]:
            assert v["sample"] in set(h.labels(v["level"]))
        # the sample chain is one value generalized step by step
        leaf = q["levels"][0]["sample"]
        assert [v["sample"] for v in q["levels"]] == [
            h.generalize([leaf], lv)[0] for lv in range(h.height + 1)]
    assert s["rows_in_release"] == s["released_records"] + s["suppressed_records"]


# -- progress of risk ---------------------------------------------------------------------------
@pytest.mark.parametrize("population_size,attributes,steps", [(None, True, 2), (10 ** 6, True, 3),
                                                              (None, False, 1)])
def test_risk_report_reports_each_step(table, population_size, attributes, steps):
    from gpuppdp.analysis.risk import risk_report

    calls = []
    plain = risk_report(table, QIDS, population_size=population_size, attributes=attributes)
    rep = risk_report(table, QIDS, population_size=population_size, attributes=attributes,
                      progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, steps) for i in range(steps + 1)]
    assert rep == plain


def test_risk_cli_progress_lines(capsys, source):
    assert main(["risk", str(source), "--qi", *QIDS]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == ["risk: 0% (0/2 steps)", "risk: 50% (1/2 steps)",
                                "risk: 100% (2/2 steps)"]
    assert main(["risk", str(source), "--qi", *QIDS, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


# -- check --lkc with a set S of sensitive values -------------------------------------------------
def _naive_lkc(table, qids, sensitive, L, values=None):
    """Smallest group and largest confidence of the listed values over every set of at most
    L QIDs, by pandas."""
    from itertools import combinations

    smallest, confidence = len(table), 0.0
    for size in range(1, L + 1):
        for subset in combinations(qids, size):
            groups = table.groupby(list(subset))
            smallest = min(smallest, int(groups.size().min()))
            shares = groups[sensitive].value_counts(normalize=True)
            if values is not None:
                shares = shares[shares.index.get_level_values(-1).isin(values)]
            confidence = max(confidence, float(shares.max()) if len(shares) else 0.0)
    return smallest, confidence


@pytest.mark.parametrize("values", [None, ["Craft-repair", "Sales"], ["not a value"]])
def test_check_lkc_with_sensitive_values(capsys, tmp_path, source, table, values):
    out = tmp_path / "c.json"
    spec = "2,3,60%" + ("" if values is None else "@" + ",".join(values))
    assert main(["check", str(source), "--qi", *QIDS[:3], "--sensitive", "occupation",
                 "--lkc", spec, "--json", str(out)]) == 0
    capsys.readouterr()
    got = json.loads(out.read_text())
    smallest, confidence = _naive_lkc(table, QIDS[:3], "occupation", 2, values)
    assert got["lkc_min_group"] == smallest
    assert got["lkc_max_confidence"] == pytest.approx(confidence)
    assert got["lkc_satisfied"] == (smallest >= 3 and confidence <= 0.6)


def test_check_lkc_values_need_the_sensitive_column(capsys, source):
    assert main(["check", str(source), "--qi", "sex", "--lkc", "1,2,0.5@Sales"]) == 2
    assert "needs --sensitive COLUMN" in capsys.readouterr().err


def test_library_warnings_are_one_cli_line(capsys, monkeypatch, source):
    """A warning raised by the library during a run reaches stderr as one line in the CLI's
    style, without Python's file and source line."""
    import warnings

    import gpuppdp.cli.anonymize as cli_anonymize

    def warn_then_fail(args):
        warnings.warn("lattice too large: heuristic search instead of flash", stacklevel=2)
        return 0

    monkeypatch.setattr(cli_anonymize, "cmd_anonymize", warn_then_fail)
    monkeypatch.setattr(warnings, "filters", [])
    assert main(["anonymize", str(source), *qi_args(), "--k", "2", "--output",
                 str(source) + ".out.csv"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["gpuppdp: warning: lattice too large: heuristic search instead of flash"]
