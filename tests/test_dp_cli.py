"""The ``dp-histogram`` subcommand, through a parser built with ``register``."""

import argparse

import pandas as pd
import pytest

from gpuppdp.cli.dp import register


def run(argv):
    parser = argparse.ArgumentParser(prog="gpuppdp")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "people.csv"
    data.write_text("age;sex;zip\n21;f;1\n22;m;2\n35;m;3\n36;f;4\n37;m;5\n22;m;6\n")
    hier = tmp_path / "age.csv"
    hier.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 40)))
    return tmp_path, data, hier


def test_dp_histogram_writes_every_cell_and_reports_the_error(files, capsys):
    tmp, data, hier = files
    out = tmp / "out.csv"
    status = run(["dp-histogram", str(data), "--by", "age,sex", "--epsilon", "1",
                  "--hierarchy", f"age={hier}", "--level", "age=1", "--seed", "3",
                  "--insecure-seed", "--public-domain", "--output", str(out)])
    assert status == 0
    assert out.read_text().splitlines()[0] == "age;sex;count"  # the input's delimiter
    table = pd.read_csv(out, sep=";")
    assert list(table.columns) == ["age", "sex", "count"]
    assert table["age"].tolist() == ["20-29", "20-29", "30-39", "30-39"]
    assert (table["count"] >= 0).all()
    captured = capsys.readouterr()
    text = captured.out
    assert "epsilon spent: 1 (add-remove neighbours, sensitivity 1); delta " in text
    delta = float(text.split("; delta ")[1].split()[0])
    assert 0 < delta < 1e-150
    assert "noise: geometric, scale 1 " in text
    assert "expected |error| per cell 0.8509" in text
    warned = captured.err.splitlines()
    assert any(w.startswith("gpuppdp: warning: noise drawn from an explicit seed") and
               "NOT differentially private" in w for w in warned)
    # reproducible with the same seed
    again = tmp / "again.csv"
    run(["dp-histogram", str(data), "--by", "age,sex", "--epsilon", "1", "--hierarchy",
         f"age={hier}", "--level", "age=1", "--seed", "3", "--insecure-seed", "--public-domain",
         "--output", str(again)])
    assert again.read_text() == out.read_text()


def test_laplace_parquet_and_explicit_separator(files, capsys):
    tmp, data, _ = files
    pq = tmp / "people.parquet"
    pd.read_csv(data, sep=";", dtype=str).to_parquet(pq)
    out = tmp / "out.parquet"
    assert run(["dp-histogram", str(pq), "--by", "sex", "--epsilon", "0.5", "--public-domain",
                "--mechanism", "laplace", "--no-clamp", "--output", str(out)]) == 0
    table = pd.read_parquet(out)
    assert table["sex"].tolist() == ["f", "m"]
    text = capsys.readouterr().out
    assert "noise: laplace, scale 2.0" in text and "post-processing: rounded" in text
    csv_out = tmp / "out.csv"
    run(["dp-histogram", str(data), "--sep", ";", "--by", "sex", "--epsilon", "1",
         "--public-domain", "--output", str(csv_out)])
    assert pd.read_csv(csv_out, sep=";")["sex"].tolist() == ["f", "m"]


@pytest.mark.parametrize("extra,error,match", [
    (["--by", "nope"], ValueError, "'nope' not in"),
    (["--by", "age", "--level", "age"], ValueError, "--level expects COL=VALUE"),
    (["--by", "age", "--level", "age=x"], ValueError, "must be an integer"),
    (["--by", "age", "--level", "age=1"], ValueError, "needs a hierarchy"),
    (["--by", "sex", "--level", "age=1"], ValueError, "not in --by"),
    (["--by", "age", "--hierarchy", "age=missing.csv"], FileNotFoundError, "missing.csv"),
    (["--by", "age", "--epsilon", "0"], ValueError, "epsilon must be a finite number > 0"),
    (["--by", "age", "--epsilon", "nan"], ValueError, "epsilon must be a finite number > 0"),
])
def test_bad_input_raises_clear_errors(files, extra, error, match):
    tmp, data, _ = files
    argv = ["dp-histogram", str(data), "--output", str(tmp / "o.csv")] + extra
    if "--epsilon" not in extra:
        argv += ["--epsilon", "1"]
    with pytest.raises(error, match=match):
        run(argv)


def test_missing_input_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="input file not found"):
        run(["dp-histogram", str(tmp_path / "none.csv"), "--by", "a", "--epsilon", "1",
             "--output", str(tmp_path / "o.csv")])


def test_through_the_main_cli(files, capsys):
    """Through the main CLI: errors are one line, exit status 2."""
    from gpuppdp import cli

    tmp, data, _ = files
    argv = ["dp-histogram", str(data), "--by", "nope", "--epsilon", "1",
            "--output", str(tmp / "o.csv")]
    status = cli.main(argv)
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuppdp: error: column(s) 'nope' not in")


def test_domains_must_be_public_and_identifying_columns_are_refused(files):
    tmp, data, hier = files
    base = ["dp-histogram", str(data), "--epsilon", "1", "--output", str(tmp / "o.csv")]
    with pytest.raises(ValueError, match=r"'sex' have no public domain.*--hierarchy COL=FILE.csv.*"
                                          r"--public-domain$"):
        run(base + ["--by", "age,sex", "--hierarchy", f"age={hier}"])
    assert not (tmp / "o.csv").exists()
    with pytest.raises(ValueError, match="'zip' is declared identifying"):
        run(base + ["--by", "sex,zip", "--public-domain", "--identifying", "name,zip"])
    with pytest.raises(ValueError, match="'zip' is declared identifying"):
        run(base + ["--by", "zip", "--identifying", "name", "--identifying", "zip"])
    assert run(base + ["--by", "sex", "--public-domain", "--identifying", "zip"]) == 0


def _ledger(path):
    """The entry lines of a ledger file (JSON Lines: a header, then one line per spend)."""
    import json
    header, *entries = [json.loads(line) for line in path.read_text().splitlines()]
    return dict(header, ledger=entries)


def test_budget_alone_starts_a_ledger_with_a_note(files, capsys):
    """``--budget`` with a missing ledger starts it, saying so on the terminal (never
    silently); ``--new-ledger`` says so itself and has no note."""
    from gpuppdp.cli import main

    tmp, data, hier = files

    def release(ledger, *extra):
        return main(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={hier}",
                     "--epsilon", "0.4", "--budget-file", str(ledger), "--budget", "1", *extra,
                     "--output", str(tmp / f"{ledger.stem}.csv")])

    assert release(tmp / "a.json") == 0
    err = capsys.readouterr().err
    assert f"no ledger at {tmp / 'a.json'}: starting a new one with a budget of 1" in err
    assert release(tmp / "a.json") == 0  # it exists now: no note
    assert "no ledger" not in capsys.readouterr().err
    assert release(tmp / "b.json", "--new-ledger") == 0
    assert "no ledger" not in capsys.readouterr().err
    assert _ledger(tmp / "a.json")["epsilon"] == 1


def test_budget_file_is_enforced_across_runs(files, capsys):
    """Each run charges the ledger; one that would overspend is refused (exit status 2, one
    line) and leaves the ledger and the output as they were."""
    from gpuppdp.cli import main

    tmp, data, hier = files
    ledger = tmp / "ledger.json"
    out = tmp / "o.csv"

    def release(eps, *extra):
        return main(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={hier}",
                     "--epsilon", str(eps), "--budget-file", str(ledger), *extra,
                     "--output", str(out)])

    assert release(0.4) == 2  # a missing ledger is an error
    assert "does not exist" in capsys.readouterr().err and not ledger.exists()
    assert release(0.4, "--budget", "1", "--new-ledger") == 0
    assert "epsilon 0.4 of 1 spent, 0.6 remaining" in capsys.readouterr().out
    assert release(0.5) == 0  # the ledger keeps its budget
    capsys.readouterr()
    first = _ledger(ledger)
    assert first["epsilon"] == 1 and [e["epsilon"] for e in first["ledger"]] == [0.4, 0.5]
    assert all(0 < e["delta"] < 1e-150 for e in first["ledger"])
    assert all(e["neighbouring"] == "add-remove" and e["unit"] == "row" and e["seed"] is None
               for e in first["ledger"])
    written = out.read_bytes()
    assert release(0.2) == 2  # 0.9 spent: 0.2 would overspend
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuppdp: error: cannot spend epsilon=0.2")
    assert "0.1 remaining" in err[0]
    assert _ledger(ledger) == first and out.read_bytes() == written
    assert release(0.1, "--budget", "2") == 2  # a ledger's budget never changes
    assert "cannot change" in capsys.readouterr().err
    assert release(0.1) == 0 and len(_ledger(ledger)["ledger"]) == 3
    assert sorted(p.name for p in tmp.iterdir()) == ["age.csv", "ledger.json", "o.csv",
                                                     "people.csv"]  # no .lock, no .tmp
    with pytest.raises(ValueError, match="--budget needs --budget-file"):
        run(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={hier}",
             "--epsilon", "1", "--budget", "1", "--output", str(out)])
    ledger.write_text("{not json\n")
    assert release(0.1) == 2 and "line 1) is not valid JSON" in capsys.readouterr().err
