"""CLI examples that run as printed (issue 33): ``gpuppdp demo --show-command`` prints an
``anonymize`` command that gives the demo's result, ``gpuppdp hierarchy build`` writes the
builders' hierarchies as ARX files that ``anonymize --qi`` reads, and ``--help`` states the
default suppression limit."""

from __future__ import annotations

import json
import shlex

import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.builders import (date_hierarchy, interval_hierarchy, levels_hierarchy,
                              masking_hierarchy)
from gpuppdp.cli.main import main
from gpuppdp.hierarchy import Hierarchy

TABLE = pd.DataFrame({
    "age": ["23", "27", "31", "23", "45", "38", "27", "52"],
    "zip": ["47677", "47602", "47678", "47677", "47905", "47909", "47602", "47905"],
    "visit": ["1994-03-17", "1994-04-02", "2001-01-01", "1994-03-17", "1999-12-31",
              "2001-01-01", "1994-04-02", "1999-12-31"],
    "diag": ["flu", "cold", "gout", "flu", "cold", "gout", "flu", "cold"],
})
GROUPS = "flu;respiratory;illness\ncold;respiratory;illness\ngout;joint;illness\n"


def _levels(h: Hierarchy) -> list[list[str]]:
    """Every level of ``h``, leaf by leaf."""
    return [h.generalize(h.leaves, level).tolist() for level in range(h.height + 1)]


@pytest.fixture()
def table(tmp_path):
    path = tmp_path / "t.csv"
    TABLE.to_csv(path, sep=";", index=False)
    (tmp_path / "groups.csv").write_text(GROUPS)
    return path


# -- Hierarchy.to_csv ------------------------------------------------------------------------
def test_to_csv_writes_the_arx_file_from_csv_reads(tmp_path):
    h = levels_hierarchy({"a;1": ["x \"y\""], "b": ["z"]}, name="h")
    path = tmp_path / "h.csv"
    h.to_csv(path)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[1] == "b;z;*"
    assert _levels(Hierarchy.from_csv(path, name="h")) == _levels(h)
    h.to_csv(path, sep=",")
    assert path.read_text().splitlines()[1] == "b,z,*"
    assert _levels(Hierarchy.from_csv(path, sep=",")) == _levels(h)


# -- hierarchy build -------------------------------------------------------------------------
KINDS = [
    ("age", ["--intervals", "5,10,20"], lambda v: interval_hierarchy(v, (5, 10, 20))),
    ("age", ["--intervals", "10", "--top", "any"],
     lambda v: interval_hierarchy(v, 10, top="any")),
    ("zip", ["--mask"], lambda v: masking_hierarchy(v)),
    ("zip", ["--mask", "--mask-direction", "left"],
     lambda v: masking_hierarchy(v, direction="left")),
    ("visit", ["--dates", "month,year,decade"],
     lambda v: date_hierarchy(v, levels=("month", "year", "decade"))),
    ("diag", ["--groups", "GROUPS"],
     lambda v: levels_hierarchy([r.split(";") for r in GROUPS.splitlines()])),
]


@pytest.mark.parametrize("column, options, build", KINDS,
                         ids=[" ".join(k[1]) for k in KINDS])
def test_hierarchy_build_writes_the_builders_hierarchy(table, tmp_path, capsys, column, options,
                                                       build):
    out = tmp_path / "h.csv"
    options = [str(tmp_path / "groups.csv") if o == "GROUPS" else o for o in options]
    assert main(["hierarchy", "build", str(table), "--column", column, *options,
                 "--output", str(out)]) == 0
    expected = build(TABLE[column].tolist())
    written = Hierarchy.from_csv(out, name=column)
    assert written.height == expected.height
    assert _levels(written) == _levels(expected)
    assert capsys.readouterr().out.strip() == (
        f"hierarchy of {column}: {len(expected.leaves)} leaves, height {expected.height}, "
        f"written to {out}")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # atomic


def test_built_hierarchies_run_in_anonymize(table, tmp_path):
    qi = []
    for column, options in (("age", ["--intervals", "5,10,20"]), ("zip", ["--mask"]),
                            ("visit", ["--dates", "year,decade"]),
                            ("diag", ["--groups", str(tmp_path / "groups.csv")])):
        out = tmp_path / f"{column}.csv"
        assert main(["hierarchy", "build", str(table), "--column", column, *options,
                     "--output", str(out)]) == 0
        qi += ["--qi", f"{column}={out}"]
    released = tmp_path / "released.csv"
    assert main(["anonymize", str(table), *qi, "--k", "2", "--backend", "cpu", "--seed", "0",
                 "--output", str(released), "--quiet"]) == 0
    data = pd.read_csv(released, sep=";", dtype=str)
    assert len(data) == len(TABLE) and data.groupby(list(data.columns)).size().min() >= 2


def test_hierarchy_build_reads_parquet_and_a_separator(tmp_path):
    path = tmp_path / "t.parquet"
    TABLE.to_parquet(path)
    out = tmp_path / "h.csv"
    assert main(["hierarchy", "build", str(path), "--column", "zip", "--mask",
                 "--output", str(out), "--output-sep", "|"]) == 0
    assert out.read_text().splitlines()[0] == "47677|4767*|476**|47***|4****|*****"
    assert _levels(Hierarchy.from_csv(out, sep="|")) == _levels(masking_hierarchy(TABLE["zip"]))


@pytest.mark.parametrize("options, message", [
    ([], "give one of --intervals, --mask, --dates, --groups"),
    (["--mask", "--dates", "year"], "got --mask and --dates"),
    (["--intervals", "5,x"], "--intervals expects numbers"),
    (["--intervals", "5,,10"], "--intervals expects widths"),
    (["--intervals", "5,7"], "multiple"),
    (["--dates", "month,week"], "week"),
    (["--dates", "year", "--mask-direction", "left"], "--mask-direction is an option of --mask"),
    (["--mask", "--top", "T"], "--top is not an option of --mask"),
    (["--mask", "--column", "nope"], "--column nope"),
    (["--mask", "--column", "diag"], "codes of one length"),
    (["--groups", "missing.csv"], "missing.csv"),
    (["--groups", "GROUPS", "--column", "age"], "6 value(s) of age have no line"),
    (["--mask", "--output-sep", ";;"], "--output-sep expects one character"),
    (["--mask", "--output", "INPUT"], "is an input of this run"),
])
def test_hierarchy_build_errors_are_one_line(table, tmp_path, capsys, options, message):
    out = tmp_path / "h.csv"
    options = [str(tmp_path / "groups.csv") if o == "GROUPS" else str(table) if o == "INPUT"
               else str(tmp_path / o) if o == "missing.csv" else o for o in options]
    column = [] if "--column" in options else ["--column", "zip"]
    output = [] if "--output" in options else ["--output", str(out)]
    assert main(["hierarchy", "build", str(table), *column, *options, *output]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpuppdp: error: ") and message in err, err
    assert not out.exists()
    assert table.read_text().startswith("age;zip;visit;diag\n")


def test_hierarchy_without_action_is_one_usage_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["hierarchy"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ACTION" in err, err


# -- the default suppression limit in --help -------------------------------------------------
@pytest.mark.parametrize("command, text", [
    ("anonymize", "default 0: no record suppressed, as ARX's default"),
    ("report", "default 0: no record suppressed, as ARX's default"),
    ("demo", "k=5, suppression limit 5%"),
])
def test_help_states_the_default_suppression(capsys, command, text):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert text in " ".join(capsys.readouterr().out.split())


# -- demo --show-command ---------------------------------------------------------------------
def test_show_command_prints_the_bundled_paths_and_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--show-command", "--json", "my summary.json"]) == 0
    line = capsys.readouterr().out.strip()
    words = shlex.split(line)
    assert words[:3] == ["gpuppdp", "anonymize", datasets.adult_path()]
    qi = [words[i + 1] for i, w in enumerate(words) if w == "--qi"]
    assert qi == [f"{c}={datasets.adult_path(f'adult_hierarchy_{c}.csv')}"
                  for c in datasets.ADULT_QUASI_IDENTIFIERS]
    for option, value in (("--k", "5"), ("--suppression-limit", "5%"), ("--metric", "loss"),
                          ("--output", "adult_k5.released.csv"), ("--json", "my summary.json")):
        assert words[words.index(option) + 1] == value
    assert "'my summary.json'" in line
    assert list(tmp_path.iterdir()) == []  # nothing run, nothing written


def test_show_command_refuses_census(capsys):
    assert main(["demo", "--show-command", "--census", "100"]) == 2
    assert "--show-command" in capsys.readouterr().err


def test_show_command_runs_as_printed_with_the_demos_result(tmp_path, capsys):
    options = ["--backend", "cpu", "--seed", "3", "--search", "flash", "--quiet"]
    demo_out, demo_json = tmp_path / "demo.csv", tmp_path / "demo.json"
    assert main(["demo", *options, "--output", str(demo_out), "--json", str(demo_json)]) == 0
    cli_out, cli_json = tmp_path / "cli.csv", tmp_path / "cli summary.json"
    capsys.readouterr()
    assert main(["demo", "--show-command", *options, "--output", str(cli_out),
                 "--json", str(cli_json)]) == 0
    words = shlex.split(capsys.readouterr().out.strip())
    assert words[:2] == ["gpuppdp", "anonymize"]
    assert main(words[1:]) == 0
    demo, cli = json.loads(demo_json.read_text()), json.loads(cli_json.read_text())
    assert cli["transformation"] == demo["transformation"]
    assert cli["information_loss"] == demo["information_loss"]
    assert cli["suppressed_records"] == demo["suppressed_records"]
    assert cli["suppression_limit"] == demo["suppression_limit"] == 0.05
    assert cli_out.read_bytes() == demo_out.read_bytes()
