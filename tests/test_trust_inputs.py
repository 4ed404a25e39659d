"""Issue 32, second pass on inputs, outputs and messages: every row of a CSV file has the
header's fields, an error about a row names its 1-based file line, a folder or an empty file
is said to be one, ``--encoding`` wherever a table is read, ``/dev/stdout`` written directly,
a release whose every QID is ``*`` measured as one class, roles given once and none dropped
without a word, ``anonymize --lkc L,K,C@V1,V2``, ``attack reconstruct`` sized before it is
built, and the compile notice only when a kernel the run calls is not compiled."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.cli.main import build_parser, main
from gpuppdp.errors import InputError
from gpuppdp.io import TABLE_SUFFIXES, OutputPlan, file_line, read_chunks, read_table

SCRIPT = Path(sys.executable).parent / "gpuppdp"
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}
SEX = datasets.adult_path("adult_hierarchy_sex.csv")
RACE = datasets.adult_path("adult_hierarchy_race.csv")
QI = ["--qi", f"sex={SEX}", "--qi", f"race={RACE}"]


@pytest.fixture
def table(tmp_path) -> Path:
    """200 Adult rows (sex, race, age, salary-class), ';'-separated: data row i on line i+2."""
    data, _ = datasets.adult()
    path = tmp_path / "data.csv"
    data.loc[:199, ["sex", "race", "age", "salary-class"]].to_csv(path, sep=";", index=False)
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def one_error(rc: int, err: str, *fragments: str) -> str:
    assert rc == 2, err
    lines = [line for line in err.splitlines() if not line.startswith(("check:", "risk:"))]
    assert len(lines) == 1 and lines[0].startswith("gpuppdp: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


# -- item 10: a row with more or fewer fields than the header -------------------------------------
def test_extra_field_is_an_error_naming_its_line(capsys, tmp_path, table):
    rows = lines_of(table)
    rows[4] = rows[4].rstrip("\n") + ";surplus\n"        # file line 5
    table.write_text("".join(rows), encoding="utf-8")
    message = re.escape(f"{table}, line 5: 5 field(s), more than the 4 of the header line")
    with pytest.raises(InputError, match=message) as info:
        read_table(table)
    assert "pass the right sep=" in str(info.value)
    with pytest.raises(InputError, match=message):
        list(read_chunks(table, rows=50))
    rc, out, err = cli(capsys, "anonymize", table, *QI, "--others", "insensitive", "--k", "2",
                       "--quiet", "--output", tmp_path / "o.csv")
    assert one_error(rc, err, "line 5: 5 field(s), more than the 4", "give the right --sep")
    assert out == ""
    assert not (tmp_path / "o.csv").exists()


def test_short_row_is_an_error_naming_its_line(capsys, tmp_path, table):
    rows = lines_of(table)
    rows[150] = ";".join(rows[150].split(";")[:2]) + "\n"   # file line 151: 2 of 4 fields
    table.write_text("".join(rows), encoding="utf-8")
    message = f"{table}, line 151: 2 field(s), fewer than the 4 of the header line"
    with pytest.raises(InputError, match=re.escape(message)):
        read_table(table)
    rc, _, err = cli(capsys, "check", table, "--qi", "sex", "race", "--quiet")
    one_error(rc, err, message)


def test_blank_lines_and_quoted_fields_are_no_field_error(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('a;b\n\n1;"x;y"\n   \n"multi\nline";2\n3;4\n', encoding="utf-8")
    assert read_table(path).to_dict("list") == {"a": ["1", "multi\nline", "3"],
                                                "b": ["x;y", "2", "4"]}
    # data rows from 0 -> the line each starts on (blank lines and a two-line record counted)
    assert [file_line(path, r) for r in range(4)] == [3, 5, 7, None]
    path.write_text('a;b\n"multi\nline";2\n3;4;5\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 4: 3 field\(s\)"):
        read_table(path)


def test_one_column_files_and_white_space_lines(tmp_path):
    """A file of one column (every line without a delimiter: blank lines found among many)."""
    path = tmp_path / "one.csv"
    path.write_text("a\n" + "x\n" * 3000 + "  \n\t\n" + "y\n" * 3000, encoding="utf-8")
    assert len(read_table(path, sep=";")) == 6000
    assert file_line(path, 3000, sep=";") == 3004
    path.write_text("a;b\n" + "1;2\n" * 5000 + " \n" + "3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 5003: 1 field\(s\), fewer"):
        read_table(path)


# -- item 12: standard streams are written directly -----------------------------------------------
def test_output_to_dev_stdout_is_the_table_alone(tmp_path, table):
    argv = [str(SCRIPT), "anonymize", str(table), *QI, "--others", "insensitive", "--k", "2",
            "--seed", "1", "--quiet", "--output", "/dev/stdout"]
    piped = subprocess.run(argv, capture_output=True, text=True, env=ENV)
    assert piped.returncode == 0, piped.stderr
    released = piped.stdout.splitlines()
    assert released[0] == "sex;race;age;salary-class" and len(released) == 201
    assert "information loss" in piped.stderr          # the summary went to stderr
    with open(tmp_path / "shell.csv", "w") as fh:       # the shell points stdout at a file
        to_file = subprocess.run(argv, stdout=fh, stderr=subprocess.PIPE, text=True, env=ENV)
    assert to_file.returncode == 0, to_file.stderr
    assert (tmp_path / "shell.csv").read_text().splitlines() == released
    null = subprocess.run(argv[:-1] + ["/dev/null", "--json", "/dev/stdout"],
                          capture_output=True, text=True, env=ENV)
    assert null.returncode == 0 and json.loads(null.stdout)["rows_in_release"] == 200


def test_stream_names_are_planned_as_streams():
    plan = OutputPlan([]).add("--output", "/dev/stdout", TABLE_SUFFIXES)
    plan.add("--json", "/dev/null", (".json",))
    assert plan.path("--output") == "/dev/stdout"


# -- item 13: lines, folders, empty files, encodings, messages per interface ----------------------
@pytest.mark.parametrize("command", ["anonymize", "check", "risk"])
def test_a_value_error_names_the_file_line(capsys, tmp_path, table, command):
    rows = lines_of(table)
    rows[150] = rows[150].replace("Male", "Mle", 1).replace("Female", "Mle", 1)  # data row 149
    rows.insert(3, "\n")                                  # a blank line: the row is on line 152
    table.write_text("".join(rows), encoding="utf-8")
    argv = {"anonymize": ["anonymize", table, *QI, "--others", "insensitive", "--k", "2",
                          "--quiet", "--output", tmp_path / "o.csv"],
            "check": ["check", table, "--qi", f"sex={SEX}", "--quiet"],
            "risk": ["risk", table, "--qi", f"sex={SEX}", "--quiet"]}[command]
    rc, _, err = cli(capsys, *argv)
    line = one_error(rc, err, "'Mle'", f"first at line 152 of {table}")
    assert "row 149" not in line


def test_a_missing_value_names_the_file_line(capsys, tmp_path, table):
    rows = lines_of(table)
    rows[9] = ";" + rows[9].split(";", 1)[1]              # line 10: sex empty
    table.write_text("".join(rows), encoding="utf-8")
    rc, _, err = cli(capsys, "anonymize", table, *QI, "--others", "insensitive", "--k", "2",
                     "--quiet", "--output", tmp_path / "o.csv")
    one_error(rc, err, "column 'sex' has 1 missing value(s)", f"first at line 10 of {table}")


def test_a_folder_is_not_a_missing_file(capsys, tmp_path):
    with pytest.raises(IsADirectoryError, match="is a folder, not a file"):
        read_table(tmp_path)
    rc, _, err = cli(capsys, "check", tmp_path, "--qi", "sex", "--quiet")
    one_error(rc, err, f"input file {tmp_path} is a folder, not a file")


@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_an_empty_file_is_said_to_be_empty(capsys, tmp_path, text):
    path = tmp_path / "empty.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="is empty"):
        read_table(path)
    rc, _, err = cli(capsys, "anonymize", path, *QI, "--k", "2", "--quiet",
                     "--output", tmp_path / "o.csv")
    line = one_error(rc, err, f"{path} is empty")
    assert "delimiter" not in line


@pytest.fixture
def latin1(tmp_path, table) -> Path:
    path = tmp_path / "latin1.csv"
    text = table.read_text(encoding="utf-8").replace("<=50K", "<=50K\u00e9", 3)
    path.write_bytes(text.encode("latin-1"))
    return path


def test_latin1_input_names_the_remedy_per_interface(capsys, tmp_path, latin1):
    with pytest.raises(InputError, match="pass its encoding, e.g. encoding='latin-1'") as info:
        read_table(latin1)
    assert "--encoding" not in str(info.value)
    assert read_table(latin1, encoding="latin-1")["salary-class"].str.endswith("\u00e9").sum() == 3
    rc, _, err = cli(capsys, "anonymize", latin1, *QI, "--others", "insensitive", "--k", "2",
                     "--quiet", "--output", tmp_path / "o.csv")
    line = one_error(rc, err, "is not UTF-8 text", "give its encoding, e.g. --encoding latin-1")
    assert "encoding=" not in line


def test_every_table_reading_command_takes_encoding(capsys, tmp_path, latin1):
    enc = ["--encoding", "latin-1"]
    runs = [
        ["anonymize", latin1, *QI, "--others", "insensitive", "--k", "2", "--quiet",
         "--output", tmp_path / "a.csv", *enc],
        ["report", latin1, *QI, "--others", "insensitive", "--k", "2", "--quiet",
         "--html", tmp_path / "r.html", *enc],
        ["check", latin1, "--qi", "sex", "race", "--quiet", *enc],
        ["risk", latin1, "--qi", "sex", "race", "--quiet", *enc],
        ["anatomize", latin1, "--qi", "sex", "race", "salary-class", "--sensitive", "age",
         "--l", "2", "--qit", tmp_path / "qit.csv", "--st", tmp_path / "st.csv", *enc],
        ["negotiate", latin1, *QI, "--sensitive", "salary-class", "--other-columns", "drop",
         "--privacy-loss", "2,3", "--utility-loss", "2,3", "--pattern", "sex;race",
         "--objective", "flat", "--json", tmp_path / "n.json", *enc],
        ["attack", "linkage", latin1, latin1, *QI, "--json", tmp_path / "l.json", *enc],
    ]
    for argv in runs:
        rc, _, err = cli(capsys, *argv)
        assert rc in (0, 1), (argv[0], err)       # negotiate: 1 is "no deal", not an error
        assert "error" not in err, (argv[0], err)


def test_every_hierarchy_reading_command_takes_hierarchy_sep():
    parser = build_parser()
    for argv in (["anonymize", "x.csv", "--qi", "a=h.csv", "--output", "o.csv"],
                 ["report", "x.csv", "--qi", "a=h.csv", "--html", "r.html"],
                 ["check", "x.csv", "--qi", "a=h.csv"],
                 ["risk", "x.csv", "--qi", "a=h.csv"],
                 ["negotiate", "x.csv", "--qi", "a=h.csv", "--sensitive", "s",
                  "--privacy-loss", "1,1", "--utility-loss", "1,1", "--pattern", "a",
                  "--objective", "flat", "--json", "n.json"],
                 ["attack", "linkage", "a.csv", "b.csv", "--qi", "a=h.csv"]):
        assert parser.parse_args(argv + ["--hierarchy-sep", ","]).hierarchy_sep == ","


def test_delimiter_remedy_per_interface(capsys, tmp_path):
    path = tmp_path / "colon.csv"
    path.write_text("a:b\n1:2\n3:4\n", encoding="utf-8")
    with pytest.raises(InputError, match="pass sep=") as info:
        read_table(path)
    assert "--sep" not in str(info.value)
    rc, _, err = cli(capsys, "check", path, "--qi", "a", "--quiet")
    assert "--sep" in one_error(rc, err, "cannot detect the delimiter") and "sep=" not in err


def test_unassigned_columns_message_per_interface(capsys, tmp_path, table):
    rc, _, err = cli(capsys, "anonymize", table, *QI, "--k", "2", "--quiet",
                     "--output", tmp_path / "o.csv")
    line = one_error(rc, err, "2 column(s) have no role: 'age', 'salary-class'",
                     "--others insensitive|drop")
    assert "others='" not in line


# -- item 14: every QID '*' is one class, not all suppressed --------------------------------------
def test_a_release_at_the_top_of_the_lattice_is_measured(capsys, tmp_path, table):
    top = pd.read_csv(table, sep=";", dtype=str).assign(sex="*", race="*")
    path = tmp_path / "top.csv"
    top.to_csv(path, sep=";", index=False)
    out = tmp_path / "c.json"
    rc, _, err = cli(capsys, "check", path, "--qi", "sex", "race", "--quiet", "--json", out)
    assert rc == 0, err
    measured = json.loads(out.read_text())
    assert (measured["records"], measured["suppressed_rows"], measured["classes"],
            measured["k"]) == (200, 0, 1, 200)
    rc, _, err = cli(capsys, "risk", path, "--qi", "sex", "race", "--quiet", "--json", out)
    assert rc == 0, err
    risk = json.loads(out.read_text())
    assert risk["suppressed_rows"] == 0 and risk["prosecutor_highest_risk"] == pytest.approx(
        1 / 200)
    # with some rows not all '*', the all-'*' rows are suppressed records, as before
    top.loc[:9, "sex"] = "Male"
    top.to_csv(path, sep=";", index=False)
    assert cli(capsys, "check", path, "--qi", "sex", "race", "--quiet", "--json", out)[0] == 0
    assert json.loads(out.read_text())["suppressed_rows"] == 190


# -- item 15: roles -------------------------------------------------------------------------------
def test_a_repeated_qi_is_an_error_naming_it(capsys, tmp_path, table):
    age = datasets.adult_path("adult_hierarchy_age.csv")
    rc, _, err = cli(capsys, "anonymize", table, *QI, "--qi", f"sex={age}", "--others", "drop",
                     "--k", "2", "--quiet", "--output", tmp_path / "o.csv")
    one_error(rc, err, "--qi sex is given 2 times")
    rc, _, err = cli(capsys, "anonymize", table, *QI, "--sensitive", "sex", "--others", "drop",
                     "--k", "2", "--quiet", "--output", tmp_path / "o.csv")
    one_error(rc, err, "'sex' is given both --qi and --sensitive")


def test_anatomize_lists_columns_without_a_role(capsys, tmp_path, table):
    qit, st = tmp_path / "qit.csv", tmp_path / "st.csv"
    base = ["anatomize", table, "--qi", "sex", "race", "--sensitive", "age", "--l",
            "2", "--qit", qit, "--st", st]
    rc, _, err = cli(capsys, *base)
    one_error(rc, err, "1 column(s) have no role: 'salary-class'", "--others insensitive|drop")
    assert not qit.exists()
    assert cli(capsys, *base, "--others", "insensitive")[0] == 0
    assert list(pd.read_csv(qit, sep=";").columns) == ["sex", "race", "salary-class",
                                                       "group_id"]
    assert cli(capsys, *base, "--others", "drop")[0] == 0
    assert list(pd.read_csv(qit, sep=";").columns) == ["sex", "race", "group_id"]


def test_negotiate_lists_columns_without_a_role(capsys, tmp_path, table):
    argv = ["negotiate", table, *QI, "--sensitive", "salary-class", "--privacy-loss", "2,3",
            "--utility-loss", "2,3", "--pattern", "sex;race", "--objective", "flat",
            "--json", tmp_path / "n.json"]
    rc, _, err = cli(capsys, *argv)
    one_error(rc, err, "1 column(s) have no role: 'age'", "--other-columns drop")
    assert cli(capsys, *argv, "--other-columns", "drop")[0] in (0, 1)


def test_anonymize_lkc_takes_the_value_set(capsys, tmp_path, table):
    out = tmp_path / "s.json"
    for target in ("@>50K", "@salary-class=>50K"):
        rc, _, err = cli(capsys, "anonymize", table, *QI, "--sensitive", "salary-class",
                         "--others", "drop", "--lkc", f"2,3,0.6{target}", "--suppression",
                         "10%", "--quiet", "--output", tmp_path / "o.csv", "--json", out)
        assert rc == 0, err
        models = json.loads(out.read_text())["models"]
        assert {"model": "lkc-privacy", "L": 2, "K": 3, "C": 0.6, "attribute": "salary-class",
                "sensitive_values": [">50K"]}.items() <= models[0].items()
    rc, _, err = cli(capsys, "anonymize", table, *QI, "--others", "drop", "--lkc",
                     "2,3,0.6@>50K", "--quiet", "--output", tmp_path / "o.csv")
    one_error(rc, err, "give --sensitive COLUMN")


# -- item 9: reconstruct sized before it is built ------------------------------------------------
def _stats(tmp_path, top: int) -> Path:
    path = tmp_path / f"stats{top}.json"
    path.write_text(json.dumps({
        "attributes": {"age": {"min": 0, "max": top, "integer": True}, "sex": ["F", "M"]},
        "statistics": [{"group": {}, "count": 3, "median": 30, "attribute": "age"}],
        "suppression_threshold": 3}), encoding="utf-8")
    return path


def test_reconstruct_refuses_a_huge_domain_before_building_it(capsys, tmp_path):
    rc, _, err = cli(capsys, "attack", "reconstruct", _stats(tmp_path, 10 ** 9),
                     "--output", tmp_path / "r.csv")
    one_error(rc, err, "attributes['age']", "1,000,000,001 values", "--max-types")
    rc, _, err = cli(capsys, "attack", "reconstruct", _stats(tmp_path, 10 ** 5),
                     "--output", tmp_path / "r.csv")
    one_error(rc, err, "'age' has 100,001 values", "more than 1,000,000 in all",
              "--max-model")
    assert not (tmp_path / "r.csv").exists()


def test_reconstruct_max_model_is_the_limit(capsys, tmp_path):
    stats = _stats(tmp_path, 100)
    rc, _, err = cli(capsys, "attack", "reconstruct", stats, "--output", tmp_path / "r.csv",
                     "--max-model", "500")
    one_error(rc, err, "'age' has 101 values", "more than 500 in all")
    rc, _, err = cli(capsys, "attack", "reconstruct", stats, "--output", tmp_path / "r.csv")
    assert rc == 0, err
    from gpuppdp.attacks import reconstruct

    with pytest.raises(InputError, match="or raise max_model$"):
        reconstruct(json.loads(stats.read_text()), max_model=500)


# -- item 16: the compile notice ------------------------------------------------------------------
def test_compile_notice_only_while_the_run_s_kernels_are_cold(tmp_path, table):
    env = {**ENV, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "GPUPPDP_AOT": "0"}
    runs = {"anonymize": [str(SCRIPT), "anonymize", str(table), *QI, "--others", "insensitive",
                          "--k", "2", "--output", "/dev/null"],
            "risk": [str(SCRIPT), "risk", str(table), "--qi", "sex", "race"]}
    for name, argv in runs.items():
        first = subprocess.run(argv, capture_output=True, text=True, env=env)
        again = subprocess.run(argv, capture_output=True, text=True, env=env)
        assert first.returncode == again.returncode == 0, (first.stderr, again.stderr)
        assert "compiling kernels" in first.stderr, (name, first.stderr)
        assert "compiling kernels" not in again.stderr, (name, again.stderr)
