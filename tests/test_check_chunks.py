"""The privacy checker in chunks (:func:`gpuppdp.analysis.checker.check_chunks`, ``gpuppdp
check --chunk-rows``): reduced to its frequency set chunk by chunk, a table gives every key of
:func:`~gpuppdp.analysis.checker.check` of the whole table (random tables with suppressed rows
and the Adult data, chunks of 1, 7, 1000 rows and larger than the table); the command line
prints and writes the same report from CSV and Parquet; bad values in a late chunk are named
with their row in the whole file; what needs the rows' own values is refused."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import datasets
from gpuppdp.analysis.checker import CHECK_KEYS, check, check_chunks
from gpuppdp.cli.main import main
from gpuppdp.io import write_table

SIZES = [1, 7, 1000, 10 ** 6]


def _chunks(df: pd.DataFrame, size: int):
    for start in range(0, len(df), size):
        yield df.iloc[start:start + size].reset_index(drop=True)


def assert_same(chunked, whole):
    """Every key of ``check``: integers and flags exactly, floats to 1e-12 relative."""
    assert list(chunked) == list(whole) == list(CHECK_KEYS)
    for key in CHECK_KEYS:
        a, b = chunked[key], whole[key]
        if isinstance(b, float):
            assert isinstance(a, float) and a == pytest.approx(b, rel=1e-12, abs=0), key
        else:
            assert type(a) is type(b) and a == b, key


def random_table(seed: int, rows: int = 300) -> pd.DataFrame:
    """QIDs a, b, c of small domains, a numeric sensitive s and a categorical one t; some
    rows suppressed (every QID '*')."""
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({
        "a": rng.integers(0, 4, rows).astype(str),
        "b": rng.choice(["x", "y", "z"], rows, p=[0.6, 0.3, 0.1]),
        "c": rng.integers(20, 20 + 2 + seed % 5, rows).astype(str),
        "s": rng.integers(0, 6, rows).astype(str),
        "t": rng.choice(["flu", "cold", "cancer", "gastritis"], rows),
    })
    star = rng.random(rows) < 0.05
    data.loc[star, ["a", "b", "c"]] = "*"
    return data


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("size", SIZES)
def test_random_tables_in_chunks_measure_what_check_does(seed, size):
    data = random_table(seed)
    options = [
        dict(quasi_identifiers=["a", "b", "c"]),                      # k only
        dict(quasi_identifiers=["a", "b", "c"], sensitive="s", lkc=(2, 3, 0.6)),
        dict(quasi_identifiers=["c", "a"], sensitive="t", order="lexical",
             lkc=(1, 2, 0.5, ["flu", "cancer"])),
        dict(quasi_identifiers=["b"], sensitive="s", order=["5", "4", "3", "2", "1", "0"],
             prior={str(v): 1 / 6 for v in range(6)}),
        dict(quasi_identifiers=["a", "b", "c"], lkc=(3, 2, 1.0)),     # LKC without sensitive
    ]
    for kw in options:
        whole = check(data, backend="cpu", **kw)
        assert_same(check_chunks(_chunks(data, size), backend="cpu", **kw), whole)


def test_every_backend_measures_the_same_in_chunks(backend):
    """NumPy, the strict CuPy stand-in and (GPU tier) CuPy."""
    data = random_table(7, rows=500)
    kw = dict(quasi_identifiers=["a", "b", "c"], sensitive="s", lkc=(2, 3, 0.6))
    assert_same(check_chunks(_chunks(data, 64), backend=backend, **kw),
                check(data, backend="cpu", **kw))


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    data = data.copy()
    rng = np.random.default_rng(11)
    data.loc[rng.random(len(data)) < 0.01, ["age", "sex", "race", "education"]] = "*"
    return data, hierarchies


def _adult_options(hierarchies):
    qids = ["age", "sex", "race", "education"]
    return [dict(quasi_identifiers=qids),
            dict(quasi_identifiers=qids, sensitive="occupation", lkc=(2, 5, 0.6),
                 sensitive_hierarchy=hierarchies["occupation"]),
            dict(quasi_identifiers=["marital-status", "sex"], sensitive="salary-class",
                 order="auto", lkc=(2, 10, 0.9, [">50K"]))]


@pytest.mark.parametrize("size", SIZES)
def test_adult_in_chunks_measures_what_check_does(adult, size):
    data, hierarchies = adult
    if size < 1000:          # one chunk per row or seven: a part of the table keeps it short
        data = data.iloc[:1500].reset_index(drop=True)
    for kw in _adult_options(hierarchies):
        whole = check(data, backend="cpu", **kw)
        assert_same(check_chunks(_chunks(data, size), backend="cpu", **kw), whole)
        assert whole["suppressed_rows"] > 0 or "age" not in kw["quasi_identifiers"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_check_chunks_reads_a_file(adult, tmp_path, suffix):
    data, hierarchies = adult
    src = tmp_path / f"adult{suffix}"
    write_table(data, src)
    for kw in _adult_options(hierarchies):
        assert_same(check_chunks(src, chunk_rows=4000, backend="cpu", **kw),
                    check(data, backend="cpu", **kw))


def _run(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_chunk_rows_prints_and_writes_the_same_report(adult, tmp_path, capsys, suffix):
    data, _ = adult
    data = data.iloc[:3000]
    src = tmp_path / f"adult{suffix}"
    write_table(data, src)
    age = datasets.adult_path("adult_hierarchy_age.csv")
    occupation = datasets.adult_path("adult_hierarchy_occupation.csv")
    argv = ["check", str(src), "--qi", f"age={age}", "--qi", "sex,race,education",
            "--sensitive", f"occupation={occupation}", "--lkc", "2,5,60%", "--backend", "cpu",
            "--quiet"]
    printed = {}
    for extra, name in (([], "whole"), (["--chunk-rows", "7"], "seven"),
                        (["--chunk-rows", "1000"], "chunked")):
        printed[name] = _run(capsys, [*argv, "--json", str(tmp_path / f"{name}.json"), *extra])
    whole = json.loads((tmp_path / "whole.json").read_text())
    assert list(whole) == list(CHECK_KEYS) and whole["t_hierarchical"] is not None
    for name in ("seven", "chunked"):
        assert printed[name] == printed["whole"]
        assert json.loads((tmp_path / f"{name}.json").read_text()) == whole


def test_cli_streams_above_the_threshold(adult, tmp_path, capsys, monkeypatch):
    """Above :data:`gpuppdp.io.CHUNK_ROWS` rows (Parquet) ``check`` reads in chunks by itself,
    as ``anonymize`` and ``risk`` do."""
    import gpuppdp.analysis.checker as checker
    import gpuppdp.io

    data, _ = adult
    src = tmp_path / "adult.parquet"
    data.iloc[:2000].to_parquet(src, index=False)
    argv = ["check", str(src), "--qi", "age,sex", "--sensitive", "occupation",
            "--backend", "cpu", "--quiet"]
    whole = _run(capsys, argv)
    calls = []

    def spy(chunks, **kw):
        def counted():
            for chunk in chunks:
                calls.append(len(chunk))
                yield chunk
        return check_chunks(counted(), **kw)

    monkeypatch.setattr(checker, "check_chunks", spy)
    monkeypatch.setattr(gpuppdp.io, "CHUNK_ROWS", 500)
    assert _run(capsys, argv) == whole
    assert calls == [500] * 4


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cli_value_not_in_the_hierarchy_names_its_row_and_column(adult, tmp_path, capsys,
                                                                  suffix):
    data, _ = adult
    data = data.copy()
    row = 5321
    data.loc[row, "age"] = "999"
    src = tmp_path / f"in{suffix}"
    write_table(data, src)
    age = datasets.adult_path("adult_hierarchy_age.csv")
    out = tmp_path / "out.json"
    for extra in ([], ["--chunk-rows", "1000"]):
        assert main(["check", str(src), "--qi", f"age={age}", "--qi", "sex", "--backend",
                     "cpu", "--quiet", "--json", str(out), *extra]) == 2
        err = capsys.readouterr().err
        # a CSV file's line (the header is line 1), a Parquet file's record from 1
        where = f"line {row + 2}" if suffix == ".csv" else f"record {row + 1}"
        assert f"first at {where} of {src}" in err and "'age'" in err and "'999'" in err
        assert not out.exists()


def test_missing_value_in_a_late_chunk_names_its_row_and_column(adult):
    data, _ = adult
    data = data.copy()
    data["sex"] = data["sex"].astype(object)
    data.loc[4321, "sex"] = None
    with pytest.raises(ValueError, match="column 'sex' has .*missing value.*first at row 4321"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["age", "sex"], backend="cpu")


def test_what_needs_the_rows_is_refused(adult, tmp_path, capsys):
    data, _ = adult
    with pytest.raises(ValueError, match="population"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["age"], population=data)
    with pytest.raises(ValueError, match="per_class"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["age"], per_class=True)
    src = tmp_path / "a.csv"
    data.iloc[:100].to_csv(src, sep=";", index=False)
    assert main(["check", str(src), "--qi", "age", "--population", str(src),
                 "--chunk-rows", "10", "--quiet"]) == 2
    assert "--chunk-rows" in capsys.readouterr().err


def test_options_are_checked_as_check_does(adult):
    data, _ = adult
    with pytest.raises(ValueError, match="quasi-identifier and as the sensitive"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["age"], sensitive="age")
    with pytest.raises(ValueError, match="prior needs a sensitive"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["age"], prior={"a": 1.0})
    with pytest.raises(ValueError, match="not in the chunk"):
        check_chunks(_chunks(data, 1000), quasi_identifiers=["nope"])
    # every QID of every row '*' is the top of the lattice: one class of all records
    star = data.assign(age="*", sex="*")
    top = check_chunks(_chunks(star, 1000), quasi_identifiers=["age", "sex"])
    assert (top["records"], top["suppressed_rows"], top["classes"], top["k"]) == \
        (len(data), 0, 1, len(data))
