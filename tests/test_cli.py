"""Command line: ``gpuppdp demo`` and ``gpuppdp anonymize`` in-process (and the console script
once); a user's errors exit with status 2 and one ``gpuppdp: error:`` line, no traceback
(unless ``--debug``); a bug exits with status 70 and its traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.cli.main import main

QIDS = ["sex", "age", "race", "education"]
ROWS = 600
K = 3

# ARX 3.9.2 on Adult, 9 QIDs, loss metric, k=5, 5 % suppression (A-9qid-loss-k5-s5)
ARX_OPTIMUM = {"sex": 0, "age": 3, "race": 0, "marital-status": 0, "education": 2,
               "native-country": 1, "workclass": 1, "occupation": 2, "salary-class": 0}
ARX_LOSS = 0.2419323650662908


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    data, _ = datasets.adult()
    part = data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class"]].copy()
    part.insert(0, "id", [str(i) for i in range(ROWS)])
    part["name"] = [f"person {i}" for i in range(ROWS)]
    return part.reset_index(drop=True)


def qi_args(qids=QIDS) -> list[str]:
    out = []
    for c in qids:
        out += ["--qi", f"{c}={datasets.adult_path(f'adult_hierarchy_{c}.csv')}"]
    return out


ROLES = ["--insensitive", "id", "--insensitive", "occupation", "--insensitive", "salary-class",
         "--identifying", "name"]


def write_csv(df: pd.DataFrame, path: Path, sep: str) -> Path:
    df.to_csv(path, sep=sep, index=False)
    return path


def read_out(path: Path, sep: str = ";") -> pd.DataFrame:
    """A released table; CSV releases use the input's delimiter (``sep``)."""
    if str(path).endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def anonymize(capsys, tmp_path, input_path, *extra, roles=ROLES, k=K, out_name="out.csv",
              out_sep=";"):
    out = tmp_path / out_name
    summary = tmp_path / "summary.json"
    rc, stdout, stderr = run(capsys, ["anonymize", str(input_path), *qi_args(), *roles,
                                      "--k", str(k), "--suppression", "5%", "--seed", "1",
                                      "--quiet", "--output", str(out), "--json", str(summary),
                                      *extra])
    assert rc == 0, stderr
    assert stderr == ""
    assert f"released table     {out}" in stdout
    return read_out(out, out_sep), json.loads(summary.read_text(encoding="utf-8")), stdout


def suppressed(df: pd.DataFrame, qids=QIDS) -> pd.Series:
    return (df[qids] == "*").all(axis=1)


def assert_k_anonymous(df: pd.DataFrame, summary: dict, k=K, qids=QIDS) -> None:
    sup = suppressed(df, qids)
    kept = df[~sup]
    sizes = kept.groupby(qids).size()
    assert sizes.min() >= k
    assert len(sizes) == summary["equivalence_classes"]
    assert int(sup.sum()) == summary["suppressed_records"]


# -- demo ---------------------------------------------------------------------------------------
def test_demo_reproduces_arx(capsys, tmp_path):
    out, js = tmp_path / "adult.csv", tmp_path / "adult.json"
    rc, stdout, stderr = run(capsys, ["demo", "--quiet", "--output", str(out), "--json",
                                      str(js), "--seed", "0"])
    assert rc == 0 and stderr == ""
    assert stdout.startswith("Adult extract: 30162 rows")
    summary = json.loads(js.read_text(encoding="utf-8"))
    assert {"transformation", "information_loss", "equivalence_classes", "suppressed_records",
            "nodes_evaluated", "seconds"} <= set(summary)
    assert summary["transformation"] == ARX_OPTIMUM
    assert list(summary["transformation"]) == list(ARX_OPTIMUM)
    assert summary["information_loss"] == pytest.approx(ARX_LOSS, rel=1e-12, abs=0)
    assert summary["search"] == "flash" and summary["metric"] == "loss"
    assert summary["seconds"] > 0 and summary["nodes_evaluated"] > 0
    assert "optimum            sex=0, age=3, race=0" in stdout
    released = read_out(out)
    assert len(released) == 30162 == summary["input_rows"]
    assert list(released.columns) == list(ARX_OPTIMUM)
    qids = list(ARX_OPTIMUM)
    all_star = suppressed(released, qids)
    assert int(all_star.sum()) == summary["suppressed_records"] > 0
    # QIDs below their top level show '*' exactly on the suppressed rows
    _, hierarchies = datasets.adult()
    below_top = [c for c in qids if ARX_OPTIMUM[c] < hierarchies[c].height]
    any_star = (released[below_top] == "*").any(axis=1)
    assert (any_star == all_star).all()
    assert_k_anonymous(released, summary, k=5, qids=qids)


# -- anonymize: inputs --------------------------------------------------------------------------
@pytest.mark.parametrize("sep", [";", ",", "\t"], ids=["semicolon", "comma", "tab"])
def test_anonymize_csv_delimiter_detected(capsys, tmp_path, table, sep):
    path = write_csv(table, tmp_path / "in.csv", sep)
    out, summary, stdout = anonymize(capsys, tmp_path, path, out_sep=sep)
    # the release keeps the input's delimiter
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == sep.join(out.columns)
    assert list(out.columns) == ["id", *QIDS, "occupation", "salary-class"]
    assert len(out) == ROWS == summary["input_rows"]
    assert summary["models"] == [{"model": "k-anonymity", "k": K}]
    assert_k_anonymous(out, summary)
    assert f"suppressed rows    {summary['suppressed_records']} of {ROWS}" in stdout
    # the non-QID columns are carried through unchanged, row by row
    merged = out.merge(table, on="id", suffixes=("", "_in"))
    assert len(merged) == ROWS
    assert (merged["occupation"] == merged["occupation_in"]).all()


def test_anonymize_same_result_for_every_delimiter_and_sep_option(capsys, tmp_path, table):
    results = []
    for i, (sep, extra) in enumerate([(";", []), ("\t", []), ("|", ["--sep", "|"]),
                                      (":", ["--sep", ":"])]):
        sub = tmp_path / str(i)
        sub.mkdir()
        path = write_csv(table, sub / "in.txt", sep)
        out, summary, _ = anonymize(capsys, sub, path, *extra, out_sep=sep)
        results.append((summary["transformation"], summary["suppressed_records"],
                        out.sort_values("id").reset_index(drop=True)))
    for transformation, n_suppressed, out in results[1:]:
        assert transformation == results[0][0]
        assert n_suppressed == results[0][1]
        pd.testing.assert_frame_equal(out, results[0][2])


def test_anonymize_undetectable_delimiter_needs_sep(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.txt", ":")
    rc, stdout, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "2",
                                      "--quiet", "--output", str(tmp_path / "o.csv")])
    assert rc == 2
    assert stderr.splitlines() == [f"gpuppdp: error: cannot detect the delimiter of {path}; "
                                   "give --sep"]


def test_anonymize_parquet(capsys, tmp_path, table):
    parquet = tmp_path / "in.parquet"
    table.assign(age=table["age"].astype(int)).to_parquet(parquet, index=False)  # ints match '39'
    out, summary, _ = anonymize(capsys, tmp_path, parquet, out_name="out.parquet")
    assert len(out) == ROWS
    assert_k_anonymous(out, summary)
    csv_out, csv_summary, _ = anonymize(capsys, tmp_path,
                                        write_csv(table, tmp_path / "in.csv", ";"))
    assert summary["transformation"] == csv_summary["transformation"]
    assert summary["information_loss"] == csv_summary["information_loss"]


def test_anonymize_l_diversity(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    roles = ["--insensitive", "id", "--sensitive", "occupation", "--insensitive",
             "salary-class", "--identifying", "name"]
    out, summary, _ = anonymize(capsys, tmp_path, path, "--l-diversity", "distinct:2",
                                roles=roles)
    assert summary["models"] == [{"model": "k-anonymity", "k": K},
                                 {"model": "distinct-l-diversity", "attribute": "occupation",
                                  "l": 2}]
    kept = out[~suppressed(out)]
    assert kept.groupby(QIDS)["occupation"].nunique().min() >= 2
    assert_k_anonymous(out, summary)
    # stricter l: at least as much generalization or suppression
    out5, summary5, _ = anonymize(capsys, tmp_path, path, "--l-diversity", "distinct:5",
                                  roles=roles)
    kept5 = out5[~suppressed(out5)]
    assert kept5.groupby(QIDS)["occupation"].nunique().min() >= 5
    assert summary5["information_loss"] >= summary["information_loss"]


def test_anonymize_suppressed_drop(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    out, summary, _ = anonymize(capsys, tmp_path, path, "--suppressed", "drop")
    assert summary["suppressed_records"] > 0  # the case is meaningful
    assert len(out) == ROWS - summary["suppressed_records"] == summary["released_rows"]
    assert not suppressed(out).any()
    assert out.groupby(QIDS).size().min() >= K


def test_anonymize_identifying_column_removed(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    out, _, _ = anonymize(capsys, tmp_path, path)
    assert "name" not in out.columns
    assert not out.isin(set(table["name"])).any(axis=None)
    roles = ["--identifying", "id", "--identifying", "name", "--others", "insensitive"]
    out2, _, _ = anonymize(capsys, tmp_path, path, roles=roles)
    assert list(out2.columns) == [*QIDS, "occupation", "salary-class"]


@pytest.mark.parametrize("others,columns", [
    ("drop", ["id", *QIDS]),
    ("insensitive", ["id", *QIDS, "occupation", "salary-class", "name"]),
])
def test_anonymize_others(capsys, tmp_path, table, others, columns):
    path = write_csv(table, tmp_path / "in.csv", ";")
    out, summary, _ = anonymize(capsys, tmp_path, path, roles=["--insensitive", "id",
                                                               "--others", others])
    assert list(out.columns) == columns
    assert_k_anonymous(out, summary)


def test_anonymize_progress_bar_on_stderr(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "2",
                                 "--output", str(tmp_path / "o.csv")])
    assert rc == 0
    # stderr is not a terminal here: plain lines, no carriage return
    assert "\r" not in stderr
    lines = stderr.splitlines()
    assert lines and all(line.startswith("search: ") and line.endswith(" nodes)")
                         for line in lines if not line.startswith("compiling"))
    assert lines[-1].startswith("search: 100% (")


# -- errors --------------------------------------------------------------------------------------
def assert_one_error_line(rc: int, stderr: str, *fragments: str) -> str:
    assert rc == 2
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("gpuppdp: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


@pytest.mark.parametrize("module, where", [("numpy", "host"), ("cupy.cuda.memory", "device")])
def test_error_out_of_memory_is_one_line(capsys, tmp_path, table, monkeypatch, module, where):
    """Memory running out (NumPy's MemoryError, or CuPy's OutOfMemoryError, a MemoryError
    from module ``cupy.cuda.memory``) ends the run with one line saying which memory, and no
    partial output."""
    from gpuppdp import anonymizer

    oom = type("OutOfMemoryError", (MemoryError,), {"__module__": module})

    def fit(self, *args, **kwargs):
        raise oom("Out of memory allocating 4,294,967,296 bytes")

    monkeypatch.setattr(anonymizer.Anonymizer, "fit", fit)
    src, out = write_csv(table, tmp_path / "in.csv", ";"), tmp_path / "o.csv"
    rc, _, stderr = run(capsys, ["anonymize", str(src), *qi_args(), *ROLES, "--k", "2",
                                 "--quiet", "--output", str(out)])
    assert_one_error_line(rc, stderr, f"out of {where} memory", "4,294,967,296 bytes",
                          "--chunk-rows", "--backend cpu")
    assert not out.exists()


@pytest.mark.parametrize("error", [RuntimeError("an invariant broke"),
                                   ValueError("a bare ValueError is a bug"),
                                   KeyError("missing_key")])
def test_unexpected_exception_is_a_bug_with_its_traceback(capsys, tmp_path, table, monkeypatch,
                                                          error):
    """An exception that is no UserError (nor OSError, MemoryError) is a bug: the line asking
    for a report, then the traceback, exit status 70 (EX_SOFTWARE; not 2, a user's error, nor
    1, negotiate's "no deal"), no output."""
    from gpuppdp import anonymizer
    from gpuppdp.cli.main import INTERNAL_ERROR, INTERNAL_LINE

    def fit(self, *args, **kwargs):
        raise error

    monkeypatch.setattr(anonymizer.Anonymizer, "fit", fit)
    src, out = write_csv(table, tmp_path / "in.csv", ";"), tmp_path / "o.csv"
    rc, stdout, stderr = run(capsys, ["anonymize", str(src), *qi_args(), *ROLES, "--k", "2",
                                      "--quiet", "--output", str(out)])
    assert rc == INTERNAL_ERROR == 70
    lines = stderr.splitlines()
    assert lines[0] == INTERNAL_LINE
    assert lines[0] == ("gpuppdp: internal error (a bug; please report it with the traceback "
                        "below)")
    assert lines[1] == "Traceback (most recent call last):"
    assert "in fit" in stderr
    assert lines[-1] == f"{type(error).__name__}: {error}"
    assert "gpuppdp: error:" not in stderr
    assert not out.exists()


def test_unexpected_exception_in_a_command(capsys, monkeypatch):
    """The same for any subcommand's run function (here ``check``'s, raising RuntimeError)."""
    from gpuppdp.cli import check as cli_check

    def boom(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli_check, "run_check", boom)
    rc, _, stderr = run(capsys, ["check", "in.csv", "--qi", "age"])
    assert rc == 70
    assert stderr.startswith("gpuppdp: internal error (a bug; please report it with the "
                             "traceback below)\nTraceback (most recent call last):\n")
    assert "in boom" in stderr
    assert stderr.rstrip().endswith("RuntimeError: boom")


def test_debug_shows_the_traceback_of_a_user_error(capsys, tmp_path, table):
    """``gpuppdp --debug``: a user error's traceback, then its usual line; exit status 2."""
    path = write_csv(table, tmp_path / "in.csv", ";")
    argv = ["anonymize", str(path), *qi_args(), *ROLES, "--k", "0", "--quiet", "--output",
            str(tmp_path / "o.csv")]
    rc, _, plain = run(capsys, argv)
    line = assert_one_error_line(rc, plain, "k must be an integer >= 1, got 0")
    rc, _, stderr = run(capsys, ["--debug", *argv])
    assert rc == 2
    lines = stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert any(ln.startswith("gpuppdp.errors.InputError: k must be an integer") for ln in lines)
    assert lines[-1] == line
    assert not (tmp_path / "o.csv").exists()


def test_debug_shows_the_traceback_of_a_file_error(capsys, tmp_path):
    missing = tmp_path / "nope.csv"
    argv = ["anonymize", str(missing), *qi_args(), "--k", "2", "--quiet", "--output",
            str(tmp_path / "o.csv")]
    rc, _, stderr = run(capsys, ["--debug", *argv])
    assert rc == 2
    assert stderr.startswith("Traceback (most recent call last):\n")
    assert stderr.splitlines()[-1] == f"gpuppdp: error: input file not found: {missing}"


def test_debug_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--debug" in capsys.readouterr().out


def test_parquet_dataset_release(capsys, tmp_path, table):
    """--parquet-dataset: the release is a folder of Parquet files (out of core), the rows
    of the single-file release."""
    src = tmp_path / "in.parquet"
    table.to_parquet(src, index=False)
    anonymize(capsys, tmp_path, src, "--chunk-rows", "7", out_name="one.parquet")
    anonymize(capsys, tmp_path, src, "--parquet-dataset", "--chunk-rows", "7",
              out_name="set.parquet")
    assert (tmp_path / "set.parquet").is_dir()
    assert all(f.endswith(".parquet") for f in os.listdir(tmp_path / "set.parquet"))
    got = pd.read_parquet(tmp_path / "set.parquet").astype(str)
    expected = pd.read_parquet(tmp_path / "one.parquet").astype(str)
    key = list(expected.columns)
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  expected.sort_values(key).reset_index(drop=True))
    assert len(os.listdir(tmp_path / "set.parquet")) > 1


def test_error_missing_input_file(capsys, tmp_path):
    missing = tmp_path / "nope.csv"
    rc, stdout, stderr = run(capsys, ["anonymize", str(missing), *qi_args(), "--k", "2",
                                      "--quiet", "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, f"input file not found: {missing}")
    assert stdout == ""
    assert not (tmp_path / "o.csv").exists()


def test_error_unassigned_column(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), "--insensitive", "id",
                                 "--k", "2", "--quiet", "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "3 column(s) have no role: 'occupation', 'salary-class', "
                                      "'name'", "--others")


def test_error_bad_hierarchy_path(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    bad = tmp_path / "missing_hierarchy.csv"
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), "--qi", f"zip={bad}",
                                 *ROLES, "--k", "2", "--quiet",
                                 "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, f"hierarchy file not found: {bad}")


def test_error_malformed_hierarchy(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    h = tmp_path / "sex.csv"
    h.write_text("Male;*\nFemale;ANY\n", encoding="utf-8")
    rc, _, stderr = run(capsys, ["anonymize", str(path), "--qi", f"sex={h}",
                                 "--others", "insensitive", "--k", "2", "--quiet",
                                 "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "sex: the top level must have one value")


def test_error_value_not_in_hierarchy(capsys, tmp_path, table):
    bad = table.copy()
    bad.loc[[4, 9], "age"] = ["150", "-1"]
    path = write_csv(bad, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "2",
                                 "--quiet", "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "column 'age': 2 value(s) not in its hierarchy",
                          "'-1', '150'")


def test_error_missing_value(capsys, tmp_path, table):
    bad = table.copy()
    bad.loc[7, "race"] = ""  # an empty CSV field is a missing value
    path = write_csv(bad, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "2",
                                 "--quiet", "--output", str(tmp_path / "o.csv")])
    # data row 7 (from 0) is the file's line 9: the header is line 1
    assert_one_error_line(rc, stderr, "column 'race' has 1 missing value(s)",
                          f"first at line 9 of {path};")


def test_error_k_too_large(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "1000",
                                 "--quiet", "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "KAnonymity(k=1000) needs classes of 1000 records",
                          f"only {ROWS} rows")


def test_error_k_zero(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "0",
                                 "--quiet", "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "k must be an integer >= 1, got 0")


def test_error_no_solution(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    roles = ["--insensitive", "id", "--sensitive", "salary-class", "--insensitive",
             "occupation", "--identifying", "name"]
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *roles, "--k", "2",
                                 "--l-diversity", "distinct:3", "--quiet",
                                 "--output", str(tmp_path / "o.csv")])
    line = assert_one_error_line(rc, stderr, "no transformation satisfies",
                                 "distinct l-diversity of salary-class with l = 3")
    assert "{" not in line  # the models in words, not as Python dicts


def test_error_l_diversity_without_sensitive(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *ROLES, "--k", "2",
                                 "--l-diversity", "distinct:2", "--quiet",
                                 "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, "--l-diversity needs --sensitive COLUMN")


@pytest.mark.parametrize("argv_tail,fragment", [
    (["--qi", "age"], "quasi-identifier 'age' needs a hierarchy: --qi COLUMN=HIERARCHY.csv"),
    (["--qi", "age=h.csv", "--suppression", "lots"],
     "expected a fraction like 0.05 or 5%, got 'lots'"),
    (["--qi", "age=h.csv", "--l-diversity", "entropy:two"], "--l-diversity expects distinct:L"),
    (["--qi", "age=h.csv", "--metric", "gini"], "invalid choice: 'gini'"),
    (["--qi", "age=h.csv", "--alpha-k", "0.5"], "--alpha-k expects ALPHA,K"),
    (["--qi", "age=h.csv", "--beta-likeness", "strong:2"],
     "--beta-likeness expects basic:B or enhanced:B"),
    (["--qi", "age=h.csv", "--lkc", "2,5"], "--lkc expects L,K,C"),
])
def test_argparse_errors_exit_2(capsys, tmp_path, argv_tail, fragment):
    with pytest.raises(SystemExit) as info:
        main(["anonymize", "in.csv", "--k", "2", "--output", str(tmp_path / "o.csv"),
              *argv_tail])
    assert info.value.code == 2
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1].startswith("gpuppdp anonymize: error: ")
    assert fragment in stderr


def test_argparse_requires_a_command(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "gpuppdp: error:" in capsys.readouterr().err


# -- the console script ------------------------------------------------------------------------
def test_console_script(tmp_path, table):
    script = Path(sys.executable).parent / "gpuppdp"
    assert script.is_file(), script
    path = write_csv(table, tmp_path / "in.csv", ",")
    out, js = tmp_path / "out.csv", tmp_path / "s.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([str(script), "anonymize", str(path), *qi_args(), *ROLES, "--k",
                           str(K), "--suppression", "0.05", "--seed", "1", "--quiet",
                           "--output", str(out), "--json", str(js)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("optimum ")
    summary = json.loads(js.read_text(encoding="utf-8"))
    released = read_out(out, ",")
    assert len(released) == ROWS
    assert_k_anonymous(released, summary)


def test_error_hierarchy_not_utf8(capsys, tmp_path, table):
    path = write_csv(table, tmp_path / "in.csv", ";")
    h = tmp_path / "sex.csv"
    h.write_bytes("Male;*\nFemale;*\nNon-binär;*\n".encode("latin-1"))
    rc, _, stderr = run(capsys, ["anonymize", str(path), "--qi", f"sex={h}",
                                 "--others", "insensitive", "--k", "2", "--quiet",
                                 "--output", str(tmp_path / "o.csv")])
    assert_one_error_line(rc, stderr, f"hierarchy file {h} is not utf-8 text")


@pytest.mark.parametrize("command", ["anonymize", "check"])
def test_error_input_not_utf8(capsys, tmp_path, command):
    """A table that is not UTF-8 is the user's file problem: one line naming the byte and the
    line, exit status 2."""
    path = tmp_path / "in.csv"
    path.write_bytes("sex;age\nMale;30\nNon-binär;40\n".encode("latin-1"))
    tail = (["--qi", f"sex={datasets.adult_path('adult_hierarchy_sex.csv')}", "--k", "2",
             "--quiet", "--output", str(tmp_path / "o.csv"), "--others", "insensitive"]
            if command == "anonymize" else ["--qi", "sex", "--quiet"])
    rc, _, stderr = run(capsys, [command, str(path), *tail])
    assert_one_error_line(rc, stderr, f"{path} is not UTF-8 text", "line 3")


# -- the other privacy models ------------------------------------------------------------------
TWO_SENSITIVE = ["--insensitive", "id", "--sensitive", "occupation", "--sensitive",
                 "salary-class", "--identifying", "name"]


def test_anonymize_every_model_option(capsys, tmp_path, table):
    """Each model option reaches the search (as the --json summary shows) and holds in the
    release; models may refer to different sensitive attributes with @COLUMN."""
    path = write_csv(table, tmp_path / "in.csv", ";")
    out, summary, _ = anonymize(
        capsys, tmp_path, path, "--l-diversity", "distinct:2", "--alpha-k", "0.9,2",
        "--delta-disclosure", "5", "--beta-likeness", "enhanced:20",
        "--privacy-loss", "0.9,3.5@salary-class", "--l-diversity", "distinct:2@salary-class",
        "--lkc", "1,3,95%", roles=TWO_SENSITIVE)
    assert [m["model"] for m in summary["models"]] == [
        "k-anonymity", "lkc-privacy", "distinct-l-diversity", "distinct-l-diversity",
        "alpha-k-anonymity", "delta-disclosure", "enhanced-beta-likeness", "privacy-loss"]
    assert summary["models"][3]["attribute"] == "salary-class"
    assert summary["models"][7]["attribute"] == "salary-class"
    kept = out[~suppressed(out)]
    for column in ("occupation", "salary-class"):
        assert kept.groupby(QIDS)[column].nunique().min() >= 2
    share = kept.groupby(QIDS)["occupation"].value_counts(normalize=True)
    assert share.max() <= 0.9
    assert_k_anonymous(out, summary)


def test_anonymize_population_models(capsys, tmp_path, table):
    population = table
    sample = table.sample(frac=0.3, random_state=0)
    pop_path = write_csv(population, tmp_path / "population.csv", ";")
    path = write_csv(sample, tmp_path / "in.csv", ";")
    out, summary, _ = anonymize(capsys, tmp_path, path, "--population", str(pop_path),
                                "--k-map", "10", "--delta-presence", "0,0.5", k=1)
    assert [m["model"] for m in summary["models"]] == ["k-anonymity", "k-map",
                                                       "delta-presence"]
    levels = summary["transformation"]
    hierarchies, _ = datasets.adult()[1], None
    gen_pop = pd.DataFrame({c: hierarchies[c].generalize(population[c], levels[c])
                            for c in QIDS})
    pop_sizes = gen_pop.value_counts()
    kept = out[~suppressed(out)]
    for key, size in kept.groupby(QIDS).size().items():
        assert pop_sizes[key] >= 10
        assert size / pop_sizes[key] <= 0.5


@pytest.mark.parametrize("argv_tail,fragment", [
    (["--k-map", "3"], "--k-map needs --population FILE"),
    (["--alpha-k", "0.5,2"], "--alpha-k needs --sensitive COLUMN"),
    (["--privacy-loss", "0.5,1@nope", "--sensitive", "occupation"],
     "--privacy-loss refers to 'nope', which is not given with --sensitive"),
])
def test_model_option_errors(capsys, tmp_path, table, argv_tail, fragment):
    path = write_csv(table[QIDS + ["occupation"]], tmp_path / "in.csv", ";")
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), "--others", "insensitive",
                                 "--k", "2", "--output", str(tmp_path / "o.csv"), *argv_tail])
    assert_one_error_line(rc, stderr, fragment)


def test_anonymize_fit_starts_after_the_kernel_loads(capsys, tmp_path, table, monkeypatch):
    """The warm-up thread (cached kernels loaded while the input is read) has ended when the
    fit starts, so that no search or encoding timing holds a wait for it; the wait is its own
    entry of the --json timings."""
    import threading

    from gpuppdp.anonymizer import Anonymizer

    fit = Anonymizer.fit
    seen = []

    def checked_fit(self, *a, **kw):
        seen.append([t.name for t in threading.enumerate() if t.name == "gpuppdp-warm-up"])
        return fit(self, *a, **kw)

    monkeypatch.setattr(Anonymizer, "fit", checked_fit)
    _, summary, _ = anonymize(capsys, tmp_path, write_csv(table, tmp_path / "in.csv", ";"))
    assert seen == [[]]
    timings = summary["timings"]
    assert set(timings) == {"encode", "search", "release", "total", "kernel load"}
    assert all(v >= 0 for v in timings.values())


@pytest.mark.parametrize("command", ["anonymize", "report"])
def test_suppression_limit_and_its_alias(capsys, command):
    """``--suppression-limit`` (the Python API's ``suppression_limit``) and its alias
    ``--suppression`` set the same limit; --help lists both."""
    from gpuppdp.cli.main import build_parser

    base = [command, "in.csv", "--qi", "age=h.csv",
            *(["--output", "o.csv"] if command == "anonymize" else ["--html", "r.html"])]
    for option in ("--suppression-limit", "--suppression"):
        assert build_parser().parse_args([*base, option, "5%"]).suppression == 0.05
    assert build_parser().parse_args(base).suppression == 0.0
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--suppression-limit S, --suppression S" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main([*base, "--suppression-limit", "lots"])
    assert info.value.code == 2
    assert "expected a fraction like 0.05 or 5%, got 'lots'" in capsys.readouterr().err
