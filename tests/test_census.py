"""The census generator (:mod:`gpuppdp.census`): schema, determinism, streaming row groups,
hierarchies, realistic marginals, ``gpuppdp generate census`` and ``gpuppdp demo --census``."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpuppdp import census, datasets
from gpuppdp.cli.main import main
from gpuppdp.hierarchy import Hierarchy


@pytest.fixture(scope="module")
def big() -> pd.DataFrame:
    return census.census_table(200_000, 11)


def run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- the table ----------------------------------------------------------------------------------
def test_schema_and_dtypes():
    df = census.census_table(5000, 1)
    assert tuple(df.columns) == census.COLUMNS
    assert len(df) == 5000 and not df.isna().any().any()
    assert df["person_id"].dtype == np.int64
    assert (df["person_id"].to_numpy() == np.arange(1, 5001)).all()
    assert df["age"].dtype == np.int16 and df["age"].between(0, 100).all()
    assert df["income"].dtype == np.int32 and (df["income"] >= 0).all()
    hierarchies = census.census_hierarchies()
    for c in census.QUASI_IDENTIFIERS:
        if c == "age":
            continue
        assert isinstance(df[c].dtype, pd.CategoricalDtype), c
        assert df[c].cat.categories.tolist() == hierarchies[c].leaves.tolist(), c
    assert df["zip"].str.fullmatch(r"\d{5}").all()


def test_same_seed_same_table_and_prefixes():
    a = census.census_table(3000, 7)
    pd.testing.assert_frame_equal(a, census.census_table(3000, 7))
    other = census.census_table(3000, 8)
    assert not a.drop(columns="person_id").equals(other.drop(columns="person_id"))
    # row i depends on (seed, i) only: a longer table (past a block boundary) starts the same
    longer = census.census_table(census.BLOCK_ROWS + 1000, 7)
    pd.testing.assert_frame_equal(longer.iloc[:3000], a)


def test_rows_and_seed_validated():
    for rows in (0, -1, 2.5, "10", True):
        with pytest.raises(ValueError, match="rows must be an integer >= 1"):
            census.census_table(rows, 0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        census.census_table(10, -1)


def test_every_value_is_a_leaf_and_hierarchies_match_the_files(tmp_path, big):
    files = census.write_census(tmp_path, 100, 0)
    hierarchies = census.census_hierarchies()
    assert set(hierarchies) == set(census.QUASI_IDENTIFIERS) == set(files.hierarchies)
    for c, h in hierarchies.items():
        h.leaf_codes(big[c], attribute=c)  # raises for a value that is not a leaf
        loaded = Hierarchy.from_csv(files.hierarchies[c], name=c)
        assert loaded.height == h.height >= 1, c
        for level in range(h.height + 1):
            assert (loaded.labels(level)[loaded.codes(level)]
                    == h.labels(level)[h.codes(level)]).all(), (c, level)
        assert h.labels(h.height).tolist() == ["*"], c
    zips = hierarchies["zip"]
    assert zips.height == 5 and len(zips.leaves) == 30_000
    chain = [zips.generalize([zips.leaves[123]], L)[0] for L in range(6)]
    z = chain[0]
    assert chain == [z, z[:4] + "*", z[:3] + "**", z[:2] + "***", z[:1] + "****", "*"]
    age = hierarchies["age"]
    assert age.generalize(["37"], 1)[0] == "[35, 40)" and age.height == 5
    education = hierarchies["education"]
    assert education.labels(1).tolist() == ["No high school diploma", "High school graduate",
                                            "College", "Graduate degree"]
    first_line = open(files.hierarchies["sex"], encoding="utf-8").readline()
    assert first_line == "Male;*\n"


# -- marginals ----------------------------------------------------------------------------------
def test_zip_populations_are_heavy_tailed(big):
    counts = big["zip"].value_counts()
    counts = counts[counts > 0]
    assert len(counts) >= 1000
    top = counts.iloc[: max(1, len(counts) // 100)].sum() / len(big)
    assert top > 0.05


def test_age_and_dependent_columns(big):
    assert 35 <= big["age"].mean() <= 42
    assert big["age"].min() == 0 and big["age"].max() >= 95
    assert 0.48 < (big["sex"] == "Female").mean() < 0.54
    assert 0.14 < (big["hispanic"] == "Hispanic or Latino").mean() < 0.23
    assert 0.55 < (big["race"] == "White").mean() < 0.66
    child = big["age"] < 15
    assert (big.loc[child, "marital"] == "Never married").all()
    assert (big.loc[child, "income"] == 0).all()
    assert (big.loc[big["age"] < 16, "occupation"] == "Not applicable (under 16)").all()
    assert not big.loc[big["age"] < 20, "education"].isin(
        ["Master degree", "Professional degree", "Doctorate degree"]).any()
    married = big["marital"].isin(["Married", "Separated"])
    assert married[big["age"].between(20, 24)].mean() < married[big["age"].between(40, 49)].mean()
    widowed = big["marital"] == "Widowed"
    assert widowed[big["age"] >= 80].mean() > 0.3 > widowed[big["age"].between(30, 60)].mean()
    adults = big[big["age"] >= 25]
    level = census.census_hierarchies()["education"].generalize(adults["education"], 1)
    median = adults["income"].groupby(level).median()
    assert (median["No high school diploma"] < median["High school graduate"]
            < median["College"] < median["Graduate degree"])
    employed = ~big["occupation"].isin(["Not in labor force", "Unemployed",
                                        "Not applicable (under 16)"])
    assert 0.5 < employed[big["age"] >= 16].mean() < 0.7


# -- files --------------------------------------------------------------------------------------
def test_row_groups_are_streamed(tmp_path):
    files = census.write_census(tmp_path / "new", 2500, 3, row_group_rows=1000)
    assert files.rows == 2500 and files.row_groups == 3
    meta = pq.ParquetFile(files.table).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [1000, 1000, 500]
    schema = pq.read_schema(files.table)
    assert str(schema.field("zip").type) == "dictionary<values=string, indices=int16, ordered=0>"
    assert schema.metadata[b"gpuppdp.seed"] == b"3"
    # the row groups are the in-memory table's rows, whatever their size
    pd.testing.assert_frame_equal(pd.read_parquet(files.table), census.census_table(2500, 3))
    tables = list(census.iter_tables(2500, 3, row_group_rows=1000))
    assert [t.num_rows for t in tables] == [1000, 1000, 500]
    assert not [n for n in os.listdir(tmp_path / "new") if n.startswith(".")]
    # built on host threads, a block straddling row groups drawn for each: the same tables
    for threads in (1, 3):
        again = list(census.iter_tables(2500, 3, row_group_rows=700, threads=threads))
        assert [t.num_rows for t in again] == [700, 700, 700, 400]
        assert pa.concat_tables(again).equals(pa.concat_tables(tables))
    # statistics for the numeric columns only; the row numbers delta-encoded
    column = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
              for i in range(meta.num_columns)}
    assert {name for name, c in column.items() if c.is_stats_set} == {"person_id", "age",
                                                                      "income"}
    assert "DELTA_BINARY_PACKED" in column["person_id"].encodings


def test_generate_command(capsys, tmp_path):
    out = tmp_path / "census"
    argv = ["generate", "census", "--rows", "3000", "--seed", "5", "--output", str(out),
            "--row-group-rows", "1000"]
    rc, stdout, stderr = run(capsys, argv)
    assert rc == 0 and stderr == ""
    assert "3000 rows in 3 row groups, seed 5" in stdout
    names = sorted(os.listdir(out))
    assert names == sorted(["census.parquet"] + [census.hierarchy_file(c)
                                                 for c in census.QUASI_IDENTIFIERS])
    data, hierarchies = datasets.census(3000, 5)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "census.parquet"), data)
    for c, h in hierarchies.items():
        assert Hierarchy.from_csv(out / census.hierarchy_file(c)).height == h.height
    first = (out / "census.parquet").read_bytes()
    assert run(capsys, argv)[0] == 0
    assert (out / "census.parquet").read_bytes() == first


@pytest.mark.parametrize("rows", ["0", "-5", "2.5", "ten", ""])
def test_generate_bad_rows(capsys, tmp_path, rows):
    out = tmp_path / "never"
    rc, stdout, stderr = run(capsys, ["generate", "census", "--rows", rows, "--output", str(out)])
    assert rc == 2 and stdout == ""
    assert stderr.splitlines() == [f"gpuppdp: error: --rows expects a positive whole number, "
                                   f"got {rows!r}"]
    assert not out.exists()


def test_generate_bad_output(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, _, stderr = run(capsys, ["generate", "census", "--rows", "10", "--output", str(blocker)])
    assert rc == 2 and stderr.splitlines() == [f"gpuppdp: error: --output {blocker} is not a "
                                               "folder"]
    rc, _, stderr = run(capsys, ["generate", "census", "--rows", "1e3", "--seed", "-2",
                                 "--output", str(tmp_path)])
    assert rc == 2 and len(stderr.splitlines()) == 1 and "--seed" in stderr


# -- the demo -----------------------------------------------------------------------------------
def test_demo_on_census(capsys, tmp_path):
    out, js = tmp_path / "census.csv", tmp_path / "census.json"
    rc, stdout, stderr = run(capsys, ["demo", "--census", "4000", "--quiet", "--output",
                                      str(out), "--json", str(js), "--seed", "0"])
    assert rc == 0 and stderr == ""
    assert stdout.startswith("Census: 4000 rows (seed 0")
    summary = json.loads(js.read_text(encoding="utf-8"))
    assert list(summary["transformation"]) == list(census.DEMO_QUASI_IDENTIFIERS)
    assert summary["input_rows"] == 4000 and summary["metric"] == "loss"
    assert summary["suppressed_records"] <= 0.05 * 4000
    released = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
    assert "person_id" not in released.columns and len(released) == 4000
    qids = list(census.DEMO_QUASI_IDENTIFIERS)
    kept = released[~(released[qids] == "*").all(axis=1)]
    assert kept.groupby(qids).size().min() >= 5


@pytest.mark.parametrize("argv, message", [
    (["--census", "0"], "--census expects a positive whole number, got '0'"),
    (["--census", "1.5"], "--census expects a positive whole number, got '1.5'"),
    (["--census-seed", "1"], "--census-seed needs --census ROWS"),
])
def test_demo_census_errors(capsys, tmp_path, argv, message):
    rc, _, stderr = run(capsys, ["demo", "--quiet", "--output", str(tmp_path / "o.csv"), *argv])
    assert rc == 2 and stderr.splitlines() == [f"gpuppdp: error: {message}"]
