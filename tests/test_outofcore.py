"""Out-of-core anonymization (:meth:`Anonymizer.fit_file`): chunked encoding gives the whole
table's frequency set, the search the same optimum, the release the same rows in a random
order; bad input in a late chunk is reported with its row in the whole file and leaves
nothing behind."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.backend import get_backend
from gpuppdp.engine import chunked_encoding, encoding
from gpuppdp.core.codes import UnknownValuesError
from gpuppdp.engine.chunked_encoding import encode_chunks
from gpuppdp.engine.encoding import Schema, SchemaError, encode
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.io import (TEMP_MARK, DatasetWriter, OutputError, TableWriter, estimated_rows,
                        read_chunks, read_table)
from gpuppdp.kernels import grouping
from gpuppdp.models import DistinctLDiversity, TCloseness
from gpuppdp.models.population import KMap


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    rng = np.random.default_rng(5)
    data = data.iloc[rng.permutation(len(data))[:6000]].reset_index(drop=True)
    return data, hierarchies


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(str)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def _chunks(df: pd.DataFrame, size: int):
    for start in range(0, len(df), size):
        yield df.iloc[start:start + size].reset_index(drop=True)


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("size", [1, 7, 500, 6000])
@pytest.mark.parametrize("sensitive,sorted_runs", [
    ([], True), ([], False), (["occupation"], False), (["occupation", "salary-class"], False)])
def test_chunked_frequency_set_is_the_whole_tables(adult, size, sensitive, narrow, sorted_runs,
                                                   monkeypatch):
    """Without sensitive codes, chunk sets are sorted runs (``sorted_runs``) or, where keys
    would not fit in int64, hashed on the threads; also with every merge of hashed sets
    reading counts and first rows as int32 (``narrow``: large merges do; lowered here) and
    with the partitioned roll-up on every merge."""
    if not sorted_runs:
        monkeypatch.setattr(chunked_encoding.sortedruns, "fits", lambda radix: False)
    if narrow:
        monkeypatch.setattr(encoding, "MERGE_NARROW_ENTRIES", 1)
        monkeypatch.setattr(grouping, "PARTITION_TABLE", 16)
    data, hierarchies = adult
    data = data.head(300) if size == 1 else data
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "education")}
    schema = Schema(qis, sensitive=sensitive, others="drop")
    be = get_backend("cpu")
    whole = encode(data, schema, be, sensitive)
    chunked = encode_chunks(_chunks(data, size), list(data.columns), schema, be, sensitive,
                            merge_entries=50)
    a, b = whole.frequency_set(), chunked.frequency_set()
    for name in ("codes", "sens", "count", "first"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert chunked.n_rows == whole.n_rows and chunked.n_sens == whole.n_sens
    for name in sensitive:
        x, y = whole.sensitive_column(name), chunked.sensitive_column(name)
        assert list(x.labels) == list(y.labels)
        np.testing.assert_array_equal(x.counts, y.counts)
        if x.from_carried is None:
            assert y.from_carried is None
        else:
            np.testing.assert_array_equal(x.from_carried, y.from_carried)


def _configs(hierarchies, data):
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "marital-status", "education")}
    population = pd.concat([data[list(qis)]] * 2, ignore_index=True)
    yield dict(quasi_identifiers=qis, others="insensitive", k=5, suppression_limit=0.05)
    yield dict(quasi_identifiers=qis, others="insensitive", k=3, suppression_limit=0.0,
               suppressed="drop", metric="discernibility")
    yield dict(quasi_identifiers=qis, sensitive=["occupation", "salary-class"],
               others="drop", k=2, suppression_limit=0.1,
               models=[DistinctLDiversity("occupation", 3),
                       TCloseness("salary-class", 0.3, "equal")])
    yield dict(quasi_identifiers=qis, others="insensitive", identifying=["workclass"],
               suppression_limit=0.05, models=[KMap(3, population=population)])


@pytest.mark.parametrize("config", range(4))
@pytest.mark.parametrize("chunk_rows,suffix", [(977, ".csv"), (2500, ".parquet"),
                                                (10 ** 6, ".csv")])
def test_fit_file_finds_and_releases_what_fit_does(adult, tmp_path, config, chunk_rows, suffix):
    data, hierarchies = adult
    options = list(_configs(hierarchies, data))[config]
    src = tmp_path / ("in" + suffix)
    if suffix == ".csv":
        data.to_csv(src, sep="|", index=False)
    else:
        data.to_parquet(src, index=False)
    anonymizer = Anonymizer(backend="cpu", seed=3, **options)
    expected = anonymizer.fit(data)
    out = tmp_path / ("out" + suffix)
    got = anonymizer.fit_file(src, out, chunk_rows=chunk_rows)
    for key in ("transformation", "information_loss", "suppressed_records",
                "equivalence_classes", "nodes_evaluated"):
        assert getattr(got, key) == getattr(expected, key), key
    assert got.release.path == os.fspath(out) and got.release.input_rows == len(data)
    released = read_table(out)
    assert list(released.columns) == list(expected.released.columns)
    assert not set(options.get("identifying", ())) & set(released.columns)
    pd.testing.assert_frame_equal(_sorted(released), _sorted(expected.released))
    if suffix == ".csv":  # the input's delimiter is kept
        assert open(out, encoding="utf-8").readline().count("|") == len(released.columns) - 1
    assert not [f for f in os.listdir(tmp_path) if TEMP_MARK in f or "buckets" in f]
    with pytest.raises(ValueError, match="written to"):
        got.released


def test_release_order_is_random_over_all_chunks(tmp_path):
    """With 20 bucket files, where the first input row lands is spread over the whole
    release, and every row appears once."""
    n = 200
    data = pd.DataFrame({"q": ["a", "b"] * (n // 2), "rid": np.arange(n)})
    src = tmp_path / "in.parquet"
    data.to_parquet(src, index=False)
    positions = []
    for seed in range(60):
        anonymizer = Anonymizer(quasi_identifiers={"q": Hierarchy([["a", "b"], ["*", "*"]])},
                                insensitive=["rid"], k=2, backend="cpu", seed=seed)
        anonymizer.fit_file(src, tmp_path / "out.parquet", chunk_rows=10)
        rid = read_table(tmp_path / "out.parquet")["rid"].to_numpy()
        assert sorted(rid.tolist()) == list(range(n))
        positions.append(int(np.flatnonzero(rid == 0)[0]))
    # uniform positions: each quarter of the release gets 15 of 60 on average
    quarters = np.bincount(np.array(positions) * 4 // n, minlength=4)
    assert quarters.min() >= 4, quarters


@pytest.mark.parametrize("suppression", ["mark", "drop"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_seed_gives_the_same_release_whatever_the_threads(adult, tmp_path, monkeypatch,
                                                            suppression, suffix):
    """Chunks and buckets are worked on by host threads in any order; each draws from its own
    stream of the seed, so the released file is the same row for row."""
    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    data.to_parquet(src, index=False)
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex", "race")},
                            sensitive=["occupation"], others="insensitive", k=20,
                            suppression_limit=0.05, suppressed=suppression,
                            models=[DistinctLDiversity("occupation", 2)], backend="cpu", seed=11)
    released = {}
    for threads in (1, 3, 4):
        monkeypatch.setenv("GPUPPDP_HOST_THREADS", str(threads))
        out = tmp_path / f"out{threads}{suffix}"
        result = anonymizer.fit_file(src, out, chunk_rows=700)
        assert result.suppressed_records > 0
        released[threads] = read_table(out)
    assert len(released[1]) == len(data) - (result.suppressed_records
                                            if suppression == "drop" else 0)
    for threads in (3, 4):
        pd.testing.assert_frame_equal(released[threads], released[1])
    # and it is a shuffle: not the input's order
    assert not (released[1]["occupation"].to_numpy()[:200]
                == data["occupation"].to_numpy()[:200]).all()


def test_the_first_bad_chunk_is_reported_whatever_the_threads(adult, tmp_path, monkeypatch):
    data, hierarchies = adult
    data = data.copy()
    data["age"] = data["age"].astype(object)
    data.loc[[2100, 5321], "age"] = "999"
    src = tmp_path / "in.csv"
    data.to_csv(src, sep=";", index=False)
    monkeypatch.setenv("GPUPPDP_HOST_THREADS", "4")
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex")},
                            others="insensitive", k=5, backend="cpu")
    with pytest.raises(UnknownValuesError, match="first at row 2100"):
        anonymizer.fit_file(src, tmp_path / "out.parquet", chunk_rows=300)
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]


@pytest.mark.parametrize("problem", ["unknown", "missing"])
def test_bad_value_in_a_late_chunk_names_its_row_and_writes_nothing(adult, tmp_path, problem):
    data, hierarchies = adult
    data = data.copy()
    row = 5321
    data["age"] = data["age"].astype(object)
    data.loc[row, "age"] = "999" if problem == "unknown" else None
    src = tmp_path / "in.csv"
    data.to_csv(src, sep=";", index=False)
    out = tmp_path / "out.parquet"
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex")},
                            others="insensitive", k=5, backend="cpu")
    error = UnknownValuesError if problem == "unknown" else SchemaError
    with pytest.raises(error, match=f"first at row {row}") as info:
        anonymizer.fit_file(src, out, chunk_rows=1000)
    assert "'age'" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]


def test_failed_write_leaves_no_output_and_no_bucket_files(adult, tmp_path, monkeypatch):
    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    data.to_parquet(src, index=False)
    out = tmp_path / "out.csv"
    out.write_text("previous\n")
    calls = []

    def failing(self, chunk):
        calls.append(chunk.rows)
        if len(calls) == 2:
            raise OSError("disk full")
        TableWriter.__dict__["_write_ok"](self, chunk)

    monkeypatch.setattr(TableWriter, "_write_ok", TableWriter.write_prepared, raising=False)
    monkeypatch.setattr(TableWriter, "write_prepared", failing)
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex")},
                            others="insensitive", k=5, backend="cpu")
    with pytest.raises(OSError, match="disk full"):
        anonymizer.fit_file(src, out, chunk_rows=1000)
    assert len(calls) == 2
    assert out.read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["in.parquet", "out.csv"]


def test_read_chunks_gives_read_tables_values(adult, tmp_path):
    data, _ = adult
    src = tmp_path / "in.csv"
    data.head(1000).to_csv(src, sep=",", index=False)
    parts = list(read_chunks(src, rows=300, columns=["sex", "age"]))
    assert [len(p) for p in parts] == [300, 300, 300, 100]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True),
                                  read_table(src, columns=["sex", "age"]))
    with pytest.raises(ValueError, match="nosuch"):
        list(read_chunks(src, columns=["nosuch"]))


@pytest.mark.parametrize("group_rows,chunk_rows,lazy", [(500, 700, True), (300, 1000, True),
                                                        (1200, 700, True), (3000, 700, False)])
def test_parquet_row_groups_read_lazily(adult, tmp_path, group_rows, chunk_rows, lazy):
    """Row groups of at most twice ``rows`` rows come as lazy chunks of whole groups (read by
    whichever thread works on them, as Arrow tables), larger ones as read batches; the values
    are the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gpuppdp.core.pipeline import LazyChunk, materialized

    data, _ = adult
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), src,
                   row_group_size=group_rows)
    parts = list(read_chunks(src, columns=["sex", "age", "occupation"], rows=chunk_rows,
                             lazy=True))
    assert all(isinstance(p, LazyChunk) == lazy for p in parts)
    if lazy:
        assert all(len(p) <= max(chunk_rows, group_rows) for p in parts)
        assert all(len(p) % group_rows == 0 for p in parts[:-1])
    read = [materialized(p) for p in parts]
    assert all(isinstance(r, pa.Table) == lazy for r in read)
    pd.testing.assert_frame_equal(
        pd.concat([r.to_pandas() if lazy else r for r in read], ignore_index=True),
        read_table(src, columns=["sex", "age", "occupation"]))


def test_fit_file_reads_row_groups_on_threads(adult, tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pandas(data, preserve_index=False), src, row_group_size=400)
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex", "race")},
                            others="insensitive", k=10, suppression_limit=0.05, backend="cpu",
                            seed=2)
    expected = anonymizer.fit(data)
    monkeypatch.setenv("GPUPPDP_HOST_THREADS", "3")
    got = anonymizer.fit_file(src, tmp_path / "out.parquet", chunk_rows=1000)
    assert (got.transformation, got.information_loss, got.suppressed_records) == \
        (expected.transformation, expected.information_loss, expected.suppressed_records)
    pd.testing.assert_frame_equal(_sorted(read_table(tmp_path / "out.parquet")),
                                  _sorted(expected.released))


@pytest.mark.parametrize("layout", ["pandas", "arrow", "pandas index"])
def test_row_groups_kept_in_arrow_release_the_types_fit_does(tmp_path, layout):
    """Row groups stay Arrow tables from the reader to the bucket files; the release still
    gets the column types pandas reads from the file (a nullable integer, a string with
    missing values, a timestamp; with the file's pandas metadata, without, and with a stored
    pandas index, which pandas reads as the index), the same types and rows as :meth:`fit`
    of the table read whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(4)
    n = 2000
    data = pd.DataFrame({
        "age": rng.integers(20, 30, n).astype(np.int16),
        "sex": pd.Categorical(rng.choice(["m", "f"], n)),
        "score": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 9, n)),
                          dtype="Int64"),
        "note": pd.Series(rng.choice(["a", "b", None], n), dtype="str"),
        "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 5, n), "D")})
    data.index += 1000  # a stored index that does not start at 0
    table = pa.Table.from_pandas(data, preserve_index=layout == "pandas index")
    if layout == "arrow":
        table = table.replace_schema_metadata(None)
    src = tmp_path / "in.parquet"
    pq.write_table(table, src, row_group_size=300)
    hierarchies = {"age": Hierarchy.from_rows([[str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", "*"]
                                               for a in range(20, 30)]),
                   "sex": Hierarchy.from_rows([["m", "*"], ["f", "*"]])}
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, others="insensitive", k=3,
                            suppression_limit=0.05, backend="cpu", seed=1)
    got = anonymizer.fit_file(src, tmp_path / "out.parquet", chunk_rows=700)
    expected = anonymizer.fit(read_table(src))
    assert got.transformation == expected.transformation
    released = read_table(tmp_path / "out.parquet")
    assert dict(released.dtypes) == dict(expected.released.dtypes)
    assert list(released.columns) == ["age", "sex", "score", "note", "when"]
    assert released["score"].dtype == ("Int64" if layout != "arrow" else np.float64)
    pd.testing.assert_frame_equal(_sorted(released), _sorted(expected.released))


def test_a_missing_value_in_an_arrow_chunk_is_named_with_its_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ages = np.arange(1000) % 10 + 20.0
    ages[857] = np.nan  # a NaN, which pandas reads as missing, as it does a null
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"age": ages}), src, row_group_size=100)
    anonymizer = Anonymizer(quasi_identifiers={"age": Hierarchy.from_rows(
        [[str(a + 0.0), "*"] for a in range(20, 30)])}, k=2, backend="cpu")
    with pytest.raises(SchemaError, match=r"'age' has 1 missing value.*first at row 857"):
        anonymizer.fit_file(src, tmp_path / "out.parquet", chunk_rows=200)
    assert os.listdir(tmp_path) == ["in.parquet"]


def test_fit_file_writes_a_parquet_dataset(adult, tmp_path, monkeypatch):
    """One file per bucket, written by the threads: read as one table, the release of an
    in-memory fit; the same files whatever the threads; an existing dataset replaced, a
    folder holding anything else refused; nothing left behind."""
    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    data.to_parquet(src, index=False)
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex", "race")},
                            others="insensitive", k=10, suppression_limit=0.05, backend="cpu",
                            seed=5)
    expected = anonymizer.fit(data)
    out = tmp_path / "out.parquet"
    got = anonymizer.fit_file(src, out, chunk_rows=700, dataset=True)
    assert got.transformation == expected.transformation and got.release.path == os.fspath(out)
    parts = sorted(os.listdir(out))
    assert len(parts) == 9 and parts[0] == "part-00000.parquet"
    released = pd.read_parquet(out)
    pd.testing.assert_frame_equal(_sorted(released), _sorted(expected.released))
    monkeypatch.setenv("GPUPPDP_HOST_THREADS", "1")
    anonymizer.fit_file(src, out, chunk_rows=700, dataset=True)  # replaces the dataset
    pd.testing.assert_frame_equal(pd.read_parquet(out), released)
    other = tmp_path / "other.parquet"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match="does not hold a Parquet dataset"):
        anonymizer.fit_file(src, other, chunk_rows=700, dataset=True)
    assert (other / "notes.txt").read_text() == "keep me"
    inside = out / "part-00000.parquet"  # an input inside the dataset it would replace
    with pytest.raises(OutputError, match="holds an input of this run"):
        anonymizer.fit_file(inside, out, chunk_rows=700, dataset=True)
    assert inside.exists()
    assert not [f for f in os.listdir(tmp_path) if TEMP_MARK in f or "buckets" in f]


def test_failed_dataset_write_leaves_the_previous_one(adult, tmp_path, monkeypatch):
    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    data.to_parquet(src, index=False)
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in ("age", "sex")},
                            others="insensitive", k=5, backend="cpu")
    out = tmp_path / "out.parquet"
    anonymizer.fit_file(src, out, chunk_rows=1000, dataset=True)
    before = sorted(os.listdir(out))
    calls = []
    prepare = DatasetWriter.prepare

    def failing(self, df, index=None):
        calls.append(index)
        if len(calls) == 3:
            raise OSError("disk full")
        return prepare(self, df, index)

    monkeypatch.setattr(DatasetWriter, "prepare", failing)
    with pytest.raises(OSError, match="disk full"):
        anonymizer.fit_file(src, out, chunk_rows=1000, dataset=True)
    assert sorted(os.listdir(out)) == before
    assert sorted(os.listdir(tmp_path)) == ["in.parquet", "out.parquet"]


def test_estimated_rows_sizes_the_buckets(adult, tmp_path):
    """Exact for Parquet (its metadata); for CSV, from the first lines' length: within a
    tenth here, where line lengths do not drift along the file."""
    data, _ = adult
    data.to_parquet(tmp_path / "in.parquet", index=False)
    assert estimated_rows(tmp_path / "in.parquet") == len(data)
    data.to_csv(tmp_path / "in.csv", index=False)
    rows = len(data) + 1  # the header is a line too
    assert abs(estimated_rows(tmp_path / "in.csv", sample_bytes=4096) - rows) < rows / 10
    (tmp_path / "empty.csv").write_text("")
    assert estimated_rows(tmp_path / "empty.csv") == 0


def test_everything_dropped_still_writes_the_columns(tmp_path):
    data = pd.DataFrame({"q": [str(i) for i in range(30)], "v": range(30)})
    h = Hierarchy([[str(i) for i in range(30)]])  # one level: every row is its own class
    src = tmp_path / "in.csv"
    data.to_csv(src, index=False)
    anonymizer = Anonymizer(quasi_identifiers={"q": h}, insensitive=["v"], k=2,
                            suppression_limit=1.0, suppressed="drop", backend="cpu")
    result = anonymizer.fit_file(src, tmp_path / "out.csv", chunk_rows=7)
    assert result.suppressed_records == 30
    assert (tmp_path / "out.csv").read_text().strip() == "q,v"


def test_fit_file_on_the_strict_cupy_stand_in(adult, tmp_path, monkeypatch):
    """The chunked path keeps the encoding's arrays on the device backend: the strict CuPy
    stand-in (which refuses what CuPy refuses) finds and releases what the CPU does -- with
    every chunk handed to the device alone, or two or more at a time (the same release, row
    for row).  The release is host work: one device-to-host copy (the suppressed classes)."""
    from gpuppdp import anonymizer as anonymizer_module
    from gpuppdp.testing import device_to_host_count, strict_backend

    copies = []
    release_buckets = anonymizer_module.release_buckets

    def counted(*args, **kwargs):
        before = device_to_host_count()
        try:
            return release_buckets(*args, **kwargs)
        finally:
            copies.append(device_to_host_count() - before)

    monkeypatch.setattr(anonymizer_module, "release_buckets", counted)

    data, hierarchies = adult
    src = tmp_path / "in.parquet"
    data.head(3000).to_parquet(src, index=False)
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "education")}
    results = {}
    for name, backend, device_rows in (("cpu", "cpu", None), ("alone", strict_backend(), 1),
                                       ("together", strict_backend(), 1000)):
        if device_rows is not None:
            monkeypatch.setattr(chunked_encoding, "DEVICE_ROWS", device_rows)
        anonymizer = Anonymizer(quasi_identifiers=qis, sensitive=["occupation"],
                                others="insensitive", k=3, suppression_limit=0.05,
                                models=[DistinctLDiversity("occupation", 2)], backend=backend,
                                seed=5)
        results[name] = anonymizer.fit_file(src, tmp_path / f"{name}.csv", chunk_rows=700)
    a = results["cpu"]
    for name in ("alone", "together"):
        b = results[name]
        assert (a.transformation, a.information_loss, a.suppressed_records) == \
            (b.transformation, b.information_loss, b.suppressed_records)
        pd.testing.assert_frame_equal(_sorted(read_table(tmp_path / "cpu.csv")),
                                      _sorted(read_table(tmp_path / f"{name}.csv")))
    pd.testing.assert_frame_equal(read_table(tmp_path / "alone.csv"),
                                  read_table(tmp_path / "together.csv"))
    # device-to-host copies in the release (the suppressed classes'), as many with twice the
    # buckets: none per bucket
    Anonymizer(quasi_identifiers=qis, sensitive=["occupation"], others="insensitive", k=3,
               suppression_limit=0.05, models=[DistinctLDiversity("occupation", 2)],
               backend=strict_backend(), seed=5).fit_file(src, tmp_path / "more.csv",
                                                          chunk_rows=350)
    assert copies[1] == copies[2] == copies[3] <= 4


def test_encoding_error_names_its_byte_and_line_in_the_file(tmp_path):
    """pandas decodes in blocks and counts bytes from the block's start; the error must give
    the offset in the file (here past the first megabyte), whole or chunked."""
    lines = ["a;b"] + [f"{i};v{i}" for i in range(200_000)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    at = data.index(b"\n150000;") + 1 + len("150000;")
    data = data[:at] + b"\xe9" + data[at + 1:]
    src = tmp_path / "bad.csv"
    src.write_bytes(data)
    expected = f"at byte {at}, line 150002)"
    for read in (lambda: read_table(src), lambda: list(read_chunks(src, rows=5000))):
        with pytest.raises(ValueError, match="not UTF-8 text") as info:
            read()
        assert expected in str(info.value)


def test_risk_in_chunks_equals_risk_in_memory(adult, tmp_path):
    """Reduced to its distinct QID combinations chunk by chunk, a table gives every figure of
    the in-memory risk report (suppressed rows counted and left out, attribute risks from
    the weighted combinations)."""
    from gpuppdp.analysis.risk import risk_report, risk_report_chunks
    from gpuppdp.cli.main import main

    data, _ = adult
    data = data.copy()
    data.loc[data.index[:40], ["sex", "age", "race", "education"]] = "*"
    qids = ["sex", "age", "race", "education"]
    whole = risk_report(data, qids, population_size=10 ** 6, backend="cpu")
    chunked = risk_report_chunks((data.iloc[i:i + 777] for i in range(0, len(data), 777)),
                                 qids, population_size=10 ** 6, backend="cpu")
    assert json.dumps(chunked, sort_keys=True) == json.dumps(whole, sort_keys=True)
    src = tmp_path / "t.csv"
    data.to_csv(src, sep=";", index=False)
    for extra, name in (([], "whole"), (["--chunk-rows", "1000"], "chunked")):
        assert main(["risk", str(src), "--qi", ",".join(qids), "--population-size", "1000000",
                     "--quiet", "--json", str(tmp_path / f"{name}.json"), *extra]) == 0
    assert json.load(open(tmp_path / "chunked.json")) == json.load(open(tmp_path / "whole.json"))


@pytest.mark.parametrize("sensitive", [[], ["occupation"]])
def test_gpu_encoding_hands_consecutive_chunks_to_the_device_together(adult, monkeypatch,
                                                                      sensitive):
    """On a GPU (the strict CuPy stand-in), chunks go to the device ``device_rows`` rows or
    more at a time, in as few calls: the same frequency set and sensitive codes as the whole
    table's."""
    from gpuppdp.testing import strict_backend

    data, hierarchies = adult
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "education")}
    schema = Schema(qis, sensitive=sensitive, others="drop")
    be = strict_backend()
    whole = encode(data, schema, get_backend("cpu"), sensitive)
    calls = []
    original = encoding.EncodedTable.bottom_of
    monkeypatch.setattr(encoding.EncodedTable, "bottom_of",
                        lambda self, codes, *rest, **kw: calls.append(len(codes))
                        or original(self, codes, *rest, **kw))
    got = encode_chunks(_chunks(data, 500), list(data.columns), schema, be, sensitive,
                        merge_entries=2000, device_rows=1200)
    chunks = -(-len(data) // 500)
    assert len(calls) == -(-chunks // 3) and calls[0] == 1500 and sum(calls) == len(data)
    want, fs = whole.frequency_set(), got.frequency_set()
    for name in ("codes", "sens", "count", "first"):
        np.testing.assert_array_equal(be.to_host(getattr(fs, name)), getattr(want, name),
                                      err_msg=name)
    assert got.n_rows == whole.n_rows and got.n_sens == whole.n_sens


@pytest.mark.parametrize("free_after", [2, 9])
@pytest.mark.parametrize("sensitive", [[], ["occupation"]])
def test_gpu_encoding_spills_to_host_memory(adult, monkeypatch, free_after, sensitive):
    """On a GPU whose free memory runs short (a fake reading on the strict CuPy stand-in),
    the chunks' frequency sets move to host memory after chunk ``free_after`` and are merged
    there; the merged bottom set returns to the device -- the same set as without spilling --
    or, when even it does not fit, the run stops with a DeviceMemoryError naming its size."""
    from gpuppdp.backend import Backend, DeviceMemoryError
    from gpuppdp.testing import strict_backend

    data, hierarchies = adult
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "education")}
    schema = Schema(qis, sensitive=sensitive, others="drop")
    be = strict_backend()
    want = encode(data, schema, get_backend("cpu"), sensitive).frequency_set()
    readings = []

    def free_memory(self):  # plenty for the first chunks, then nothing to spare
        readings.append(None)
        return 1 << 40 if len(readings) <= free_after else 1 << 10

    monkeypatch.setattr(Backend, "free_memory", free_memory)
    moved = []
    original = encoding.FrequencySet.moved
    monkeypatch.setattr(encoding.FrequencySet, "moved",
                        lambda fs, convert: moved.append(convert) or original(fs, convert))
    with pytest.raises(DeviceMemoryError, match="bottom frequency set .* entries"):
        encode_chunks(_chunks(data, 500), list(data.columns), schema, be, sensitive,
                      merge_entries=50, device_rows=500)
    assert be.to_host in moved  # the sets went to host memory

    monkeypatch.setattr(chunked_encoding, "BOTTOM_FACTOR", 0)  # the merged set fits again
    readings.clear()
    got = encode_chunks(_chunks(data, 500), list(data.columns), schema, be, sensitive,
                        merge_entries=50, device_rows=500).frequency_set()
    assert isinstance(got.codes, type(be.asarray(np.zeros(1))))  # back on the device
    for name in ("codes", "sens", "count", "first"):
        np.testing.assert_array_equal(be.to_host(getattr(got, name)), getattr(want, name),
                                      err_msg=name)
