"""cuDF frames in and out (:mod:`gpuppdp.device_frames`), on the strict cuDF stand-in
(:mod:`gpuppdp.testing_cudf`) and the strict CuPy stand-in: the same optimum, loss and counts
as the pandas table, a release with the same rows, and only distinct values on the host."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.core.codes import UnknownValuesError
from gpuppdp.engine.encoding import Schema, SchemaError, encode
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import DistinctLDiversity, EntropyLDiversity
from gpuppdp.testing import strict_backend
from gpuppdp.testing_cudf import host_cells, strict_cudf

QIS = ("age", "sex", "race", "education")


@pytest.fixture
def cudf(monkeypatch):
    module = strict_cudf()
    monkeypatch.setitem(sys.modules, "cudf", module)
    return module


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    data = data.head(2500).reset_index(drop=True)
    data.insert(0, "name", [f"person {i}" for i in range(len(data))])
    return data, {c: hierarchies[c] for c in QIS}


def _options(qis, sensitive, **kw):
    models = [DistinctLDiversity(s, 2) for s in sensitive]
    return {**dict(quasi_identifiers=qis, sensitive=list(sensitive), identifying=["name"],
                   others="drop", k=3, suppression_limit=0.05, models=models, seed=7), **kw}


def _rows(frame: pd.DataFrame) -> pd.DataFrame:
    """A release's rows as strings in a canonical order (the orders are random)."""
    frame = frame.astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


@pytest.mark.parametrize("sensitive", [(), ("occupation",), ("occupation", "salary-class")])
@pytest.mark.parametrize("suppressed", ["mark", "drop"])
def test_a_cudf_frame_gives_the_pandas_result_without_its_rows_on_the_host(
        cudf, adult, sensitive, suppressed):
    data, qis = adult
    options = _options(qis, sensitive, suppressed=suppressed)
    expected = Anonymizer(backend="cpu", **options).fit(data)
    frame = cudf.DataFrame.from_pandas(data)
    before = host_cells()
    got = Anonymizer(backend=strict_backend(), **options).fit(frame)
    distinct = sum(data[c].nunique() for c in (*QIS, *sensitive))
    assert host_cells() - before <= distinct  # the distinct values, never the rows
    for key in ("transformation", "information_loss", "suppressed_records",
                "equivalence_classes"):
        assert getattr(got, key) == getattr(expected, key), key
    assert isinstance(got.released, cudf.DataFrame)
    released = got.released.to_pandas()
    assert list(released.columns) == list(expected.released.columns)
    assert "name" not in released.columns
    assert got.release.input_rows == len(data)
    assert len(released) == (len(data) if suppressed == "mark"
                             else len(data) - got.suppressed_records)
    pd.testing.assert_frame_equal(_rows(released), _rows(expected.released))


def test_the_release_order_is_random_and_seeded(cudf, adult):
    data, qis = adult
    frame = cudf.DataFrame.from_pandas(data)
    first, again, other = (Anonymizer(backend=strict_backend(), **_options(qis, (), seed=s))
                           .fit(frame).released.to_pandas() for s in (1, 1, 2))
    pd.testing.assert_frame_equal(first, again)
    assert not first.equals(other)
    assert not (first["education"].to_numpy() == data["education"].to_numpy()).all()


def test_a_node_of_ones_choice_is_released_on_the_device(cudf, adult):
    data, qis = adult
    options = _options(qis, ("occupation",))
    node = {"age": 3, "sex": 1, "race": 0, "education": 2}
    expected = Anonymizer(backend="cpu", **options).release(data, node)
    got = Anonymizer(backend=strict_backend(), **options).release(
        cudf.DataFrame.from_pandas(data), node)
    assert got.transformation == expected.transformation == node
    assert got.suppressed_records == expected.suppressed_records
    pd.testing.assert_frame_equal(_rows(got.released.to_pandas()), _rows(expected.released))


def test_on_the_cpu_backend_the_frame_is_copied_to_the_host_once(cudf, adult):
    data, qis = adult
    options = _options(qis, ("occupation",))
    expected = Anonymizer(backend="cpu", **options).fit(data)
    before = host_cells()
    got = Anonymizer(backend="cpu", **options).fit(cudf.DataFrame.from_pandas(data))
    assert host_cells() - before == data.size
    assert isinstance(got.released, pd.DataFrame)
    assert got.transformation == expected.transformation
    pd.testing.assert_frame_equal(got.released, expected.released)


def _small():
    h = Hierarchy.from_rows([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                             ["d", "cd", "*"], ["NULL", "cd", "*"]])
    g = Hierarchy.from_rows([["x", "*"], ["y", "*"]])
    data = pd.DataFrame({"q": ["a", "b", None, "c", "d", "a", "b", "c"] * 3,
                         "g": ["x", "y"] * 12,
                         "s": ["u", None, "v", "u", "w", "v", "u", "w"] * 3})
    return data, h, g


def test_missing_values_are_arxs_null_as_in_pandas(cudf):
    data, h, g = _small()
    schema = Schema({"q": h, "g": g}, sensitive=["s"])
    want = encode(data, schema, strict_backend(), ["s"])
    got = __import__("gpuppdp.device_frames", fromlist=["encode_cudf"]).encode_cudf(
        cudf.DataFrame.from_pandas(data), schema, strict_backend(), ["s"])
    be = strict_backend()
    for a, b in zip(got.qi_codes, want.qi_codes):
        np.testing.assert_array_equal(be.to_host(a), be.to_host(b))
    np.testing.assert_array_equal(be.to_host(got.sens_codes), be.to_host(want.sens_codes))
    assert got.sens_codes.dtype == want.sens_codes.dtype
    assert list(got.sensitive["s"].labels) == list(want.sensitive["s"].labels)
    np.testing.assert_array_equal(be.to_host(got.sensitive["s"].counts),
                                  be.to_host(want.sensitive["s"].counts))


def _error(run):
    with pytest.raises((SchemaError, UnknownValuesError)) as info:
        run()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("change", ["unknown", "missing"])
def test_bad_values_raise_the_pandas_paths_error(cudf, change):
    data, h, g = _small()
    if change == "unknown":
        data.loc[[5, 9], "q"] = ["zz", "yy"]
    else:  # a hierarchy without NULL
        h = Hierarchy.from_rows([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                 ["d", "cd", "*"]])
    options = dict(quasi_identifiers={"q": h, "g": g}, sensitive=["s"], k=2)
    want = _error(lambda: Anonymizer(backend="cpu", **options).fit(data))
    got = _error(lambda: Anonymizer(backend=strict_backend(), **options).fit(
        cudf.DataFrame.from_pandas(data)))
    assert got == want
    assert ("row 5" if change == "unknown" else "first at row 2") in got[1]


def test_the_release_is_written_from_the_device(cudf, adult, tmp_path):
    data, qis = adult
    got = Anonymizer(backend=strict_backend(), **_options(qis, ())).fit(
        cudf.DataFrame.from_pandas(data))
    parquet, _ = got.save(tmp_path / "out.parquet")
    csv, _ = got.save(tmp_path / "out.csv", sep=";")
    want = _rows(got.released.to_pandas())
    pd.testing.assert_frame_equal(_rows(pd.read_parquet(parquet)), want)
    pd.testing.assert_frame_equal(_rows(pd.read_csv(csv, sep=";", dtype=str)), want)


def test_microaggregation_asks_for_a_host_table(cudf, adult):
    data, qis = adult
    options = _options(qis, ())
    options["others"] = "insensitive"
    with pytest.raises(ValueError, match="microaggregation needs the table in host memory"):
        Anonymizer(backend=strict_backend(), microaggregation={"hours-per-week": "mean"},
                   **options).fit(cudf.DataFrame.from_pandas(data.assign(**{
                       "hours-per-week": np.arange(len(data)) % 60})))


def test_the_stand_in_refuses_what_cudf_refuses(cudf):
    frame = cudf.DataFrame.from_pandas(pd.DataFrame({"a": ["x", "y"], "n": [1, 2]}))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(frame["a"])
    with pytest.raises(TypeError, match="not iterable"):
        list(frame["a"])
    with pytest.raises(TypeError, match="unsupported"):
        frame["a"].tolist()
    with pytest.raises(TypeError, match="no CuPy array"):
        frame["a"].values
    with pytest.raises(TypeError, match="na_sentinel"):
        frame["a"].factorize(na_sentinel=-1)  # cuDF 26.10 has use_na_sentinel only
    with pytest.raises(TypeError, match="device arrays"):
        frame["a"].take(np.array([1, 0]))
    assert frame["n"].values.sum() == 3  # a numeric column's device array


def test_entropy_l_diversity_on_the_device_equals_pandas(cudf, adult):
    data, qis = adult
    options = _options(qis, ())
    options.update(sensitive=["occupation"], models=[EntropyLDiversity("occupation", 2)])
    expected = Anonymizer(backend="cpu", **options).fit(data)
    got = Anonymizer(backend=strict_backend(), **options).fit(cudf.DataFrame.from_pandas(data))
    assert (got.transformation, got.information_loss) == (expected.transformation,
                                                          expected.information_loss)


def test_utility_of_a_device_release_pairs_its_rows_as_the_pandas_release(cudf, adult):
    from gpuppdp.analysis.utility import non_uniform_entropy

    data, qis = adult
    options = _options(qis, ("occupation",))
    expected = Anonymizer(backend="cpu", **options).fit(data)
    got = Anonymizer(backend=strict_backend(), **options).fit(cudf.DataFrame.from_pandas(data))
    want = non_uniform_entropy(data, expected.release, qis)
    assert non_uniform_entropy(data, got.release, qis) == pytest.approx(want, rel=1e-12)


# -- the command line: --gpu-io ------------------------------------------------------------------
def _cli_args(adult, tmp_path, output: str, *extra: str) -> list[str]:
    from gpuppdp.cli.main import main  # noqa: F401  (the parser the args are for)

    data, _ = adult
    source = tmp_path / "in.parquet"
    data.to_parquet(source, index=False)
    args = ["anonymize", str(source), "--output", str(tmp_path / output), "--k", "3",
            "--suppression", "0.05", "--identifying", "name", "--others", "drop",
            "--seed", "5", "--quiet", *extra]
    for c in QIS:
        args += ["--qi", f"{c}={datasets.adult_path(f'adult_hierarchy_{c}.csv')}"]
    return args


@pytest.fixture
def gpu_is_the_stand_in(monkeypatch):
    """``--backend gpu`` (and ``auto``) resolve to the strict CuPy stand-in."""
    from gpuppdp import backend

    monkeypatch.setattr(backend, "_probe_cupy", lambda: None)
    monkeypatch.setattr(backend, "_cupy_backend", lambda probe: strict_backend())


@pytest.mark.parametrize("output", ["out.parquet", "out.csv"])
def test_the_cli_reads_and_writes_parquet_on_the_device(cudf, adult, tmp_path, output,
                                                        gpu_is_the_stand_in, monkeypatch):
    from gpuppdp.cli.main import main

    read = []
    monkeypatch.setattr(cudf, "read_parquet", lambda *a, **kw: read.append(a) or
                        type(cudf).__getattribute__(strict_cudf(), "read_parquet")(*a, **kw))
    assert main(_cli_args(adult, tmp_path, output, "--backend", "gpu", "--gpu-io", "cudf",
                          "--json", str(tmp_path / "on.json"))) == 0
    assert len(read) == 1
    on_device = tmp_path / output
    host = "host." + output.split(".")[-1]
    assert main(_cli_args(adult, tmp_path, host, "--backend", "cpu",
                          "--json", str(tmp_path / "off.json"))) == 0
    load = (pd.read_parquet if output.endswith(".parquet") else
            lambda p: pd.read_csv(p, sep=";", dtype=str, keep_default_na=False))
    pd.testing.assert_frame_equal(_rows(load(on_device)), _rows(load(tmp_path / host)))
    import json
    on, off = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("on", "off"))
    for key in ("transformation", "information_loss", "suppressed_records"):
        assert on[key] == off[key], key
    # the certainty penalty from the classes' label counts equals the host table's
    assert on["ncp"] == pytest.approx(off["ncp"], rel=1e-12)
    assert on["gcp"] == pytest.approx(off["gcp"], rel=1e-12)


@pytest.mark.parametrize("extra, why", [
    (("--backend", "cpu"), "the backend (cpu) is not a GPU"),
    (("--backend", "gpu", "--local-suppression"),
     "--local-recoding and --local-suppression work on the host"),
])
def test_gpu_io_cudf_says_why_it_cannot(cudf, adult, tmp_path, gpu_is_the_stand_in, extra,
                                        why, capsys):
    from gpuppdp.cli.main import main

    assert main(_cli_args(adult, tmp_path, "out.csv", "--gpu-io", "cudf", *extra)) != 0
    assert f"--gpu-io cudf: {why}" in capsys.readouterr().err


def test_gpu_io_auto_reads_on_the_host_without_cudf(adult, tmp_path, gpu_is_the_stand_in,
                                                    monkeypatch):
    from gpuppdp.cli import run

    monkeypatch.setitem(sys.modules, "cudf", None)  # not installed

    def args(gpu_io):  # (one run's arguments: the decision is kept on them)
        return __import__("types").SimpleNamespace(
            gpu_io=gpu_io, input=str(tmp_path / "in.parquet"), backend="gpu",
            local_recoding=None, local_suppression=False, attribute_microaggregation=[])
    auto = args("auto")
    assert run.on_device(auto, "cudf") is False
    monkeypatch.setitem(sys.modules, "cudf", __import__("types").ModuleType("cudf"))
    assert run.on_device(auto, "cudf") is False  # decided once per run
    monkeypatch.setitem(sys.modules, "cudf", None)
    with pytest.raises(ValueError, match=r"cudf is not installed \(pip install 'gpuppdp\[gpu-"):
        run.on_device(args("cudf"), "cudf")


# -- dask-cuDF: partitions that are cuDF frames ------------------------------------------------
def _dask_of_frames(cudf, data: pd.DataFrame, parts: int):
    import dask
    import dask.dataframe as dd

    bounds = np.linspace(0, len(data), parts + 1).astype(int)
    chunks = [data.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return dd.from_delayed([dask.delayed(cudf.DataFrame.from_pandas)(c) for c in chunks],
                           meta=data.iloc[:0], verify_meta=False)


@pytest.mark.parametrize("sensitive", [(), ("occupation", "salary-class")])
def test_dask_cudf_partitions_are_encoded_on_the_device(cudf, adult, sensitive):
    import dask

    from gpuppdp import cluster

    data, qis = adult
    schema = Schema(qis, sensitive=list(sensitive), identifying=["name"], others="drop")
    whole = encode(data, schema, strict_backend(), list(sensitive))
    before = host_cells()
    with dask.config.set(scheduler="synchronous"):
        got = cluster.encode_dask(_dask_of_frames(cudf, data, 4), schema, strict_backend(),
                                  list(sensitive))
    distinct = sum(data[c].nunique() for c in (*QIS, *sensitive))
    # each partition's distinct values, the sensitive ones in both passes (profile, bottom)
    assert host_cells() - before <= 2 * 4 * distinct < len(data)
    be = strict_backend()
    want, have = whole.frequency_set(), got.frequency_set()
    for name in ("codes", "sens", "count", "first"):
        np.testing.assert_array_equal(be.to_host(getattr(have, name)),
                                      be.to_host(getattr(want, name)), err_msg=name)
    for name in sensitive:
        assert list(got.sensitive[name].labels) == list(whole.sensitive[name].labels)


@pytest.mark.parametrize("suppressed", ["mark", "drop"])
def test_a_dask_cudf_partition_is_released_as_its_pandas_twin(cudf, adult, suppressed):
    from gpuppdp import cluster
    from gpuppdp.engine.transform import categories_of

    data, qis = adult
    options = _options(qis, ("occupation",), suppressed=suppressed)
    result = Anonymizer(backend="cpu", **options).fit(data)
    evaluator = result._evaluator
    enc = evaluator.encoded
    levels = np.array(list(result.transformation.values()))
    table = enc.rows_on_host()
    failing = evaluator.backend.to_host(evaluator.suppressed_classes(levels))
    categories = {n: categories_of(h.labels(int(levels[j])))
                  for j, (n, h) in enumerate(zip(enc.qi_names, enc.hierarchies))}
    part = data.iloc[700:1500].drop(columns="name")
    args = (categories, suppressed, 11, {3: 700})
    host = cluster._generalize_partition(part, table, levels, failing,
                                         table.class_set(levels, failing), *args,
                                         get_backend_cpu(), partition_info={"number": 3})
    device = cluster._generalize_partition(cudf.DataFrame.from_pandas(part), table, levels,
                                           failing, None, *args, strict_backend(),
                                           partition_info={"number": 3})
    assert isinstance(device, cudf.DataFrame)
    device = device.to_pandas()
    assert list(device.columns) == list(host.columns)
    keys = device.pop("__gpuppdp_order__")
    assert keys.is_unique and len(keys) == len(host)
    pd.testing.assert_frame_equal(_rows(device), _rows(host.drop(columns="__gpuppdp_order__")))


def get_backend_cpu():
    from gpuppdp.backend import get_backend

    return get_backend("cpu")


def test_a_large_parquet_input_is_read_whole_when_it_fits_the_device(cudf, adult, tmp_path,
                                                                     gpu_is_the_stand_in,
                                                                     monkeypatch):
    import types

    from gpuppdp.backend import Backend
    from gpuppdp.cli import run

    data, _ = adult
    source = tmp_path / "in.parquet"
    data.to_parquet(source, index=False)
    args = types.SimpleNamespace(
        gpu_io="auto", input=str(source), backend="gpu", local_recoding=None,
        local_suppression=False, attribute_microaggregation=[], chunk_rows=None,
        parquet_dataset=False)
    monkeypatch.setattr(Backend, "free_memory", lambda self: 10 ** 9)
    assert run.read_whole_on_device(args)
    monkeypatch.setattr(Backend, "free_memory", lambda self: 1000)  # too small: in chunks
    assert not run.read_whole_on_device(args)
    args.gpu_io = "cudf"  # demanded: read whole whatever the estimate
    assert run.read_whole_on_device(args)
    args.chunk_rows = 5000  # chunks asked for
    assert not run.read_whole_on_device(args)
    args.chunk_rows, args.gpu_io = None, "arrow"
    assert not run.read_whole_on_device(args)


def test_explore_measures_a_cudf_frame_as_the_pandas_one(cudf, adult):
    from gpuppdp.tradeoff import explore

    data, qis = adult
    data = data.head(400)  # (the figures' CUDA kernels run under the simulator)
    options = dict(quasi_identifiers={c: qis[c] for c in ("sex", "race", "education")},
                   sensitive=["occupation"], k=3, suppression_limit=0.05)
    want = explore(data, backend="cpu", **options).nodes
    got = explore(cudf.DataFrame.from_pandas(data), backend=strict_backend(), **options).nodes
    pd.testing.assert_frame_equal(got, want, rtol=1e-12)


def test_ordered_t_closeness_orders_its_values_from_the_file(cudf, adult, tmp_path,
                                                             gpu_is_the_stand_in):
    """The order of an ordered t-closeness's values is read from the file's column (a cuDF
    frame is not read on the host)."""
    import json

    from gpuppdp.cli.main import main

    extra = ["--sensitive", "education-num", "--t-closeness", "ordered:0.4", "--order",
             "education-num=numeric"]
    data, _ = adult
    data = data.assign(**{"education-num": data["education"].astype("category").cat.codes
                          .astype(str)})
    adult2 = (data, adult[1])
    assert main(_cli_args(adult2, tmp_path, "on.csv", "--backend", "gpu", "--gpu-io", "cudf",
                          "--json", str(tmp_path / "on.json"), *extra)) == 0
    assert main(_cli_args(adult2, tmp_path, "off.csv", "--backend", "cpu",
                          "--json", str(tmp_path / "off.json"), *extra)) == 0
    on, off = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("on", "off"))
    assert on["transformation"] == off["transformation"]
    assert on["information_loss"] == off["information_loss"]


# -- check and risk of a cuDF frame ---------------------------------------------------------------
def _assert_close(got, want, where="") -> None:
    """Nested dicts and lists equal, numbers to 1e-12."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, nan_ok=True), where
    else:
        assert got == want, where


def _with_missing(data: pd.DataFrame) -> pd.DataFrame:
    data = data.copy()
    data.loc[[3, 50, 51], "education"] = None
    return data


@pytest.mark.parametrize("missing", [False, True])
def test_risk_of_a_cudf_frame_is_the_pandas_tables(cudf, adult, missing):
    from gpuppdp.analysis.risk import risk_report

    data, _ = adult
    data = _with_missing(data) if missing else data
    qids = list(QIS)
    want = risk_report(data, qids, population_size=100_000)
    before = host_cells()
    got = risk_report(cudf.DataFrame.from_pandas(data), qids, population_size=100_000,
                      backend=strict_backend())
    assert host_cells() - before < len(data)  # the distinct values, not the rows
    _assert_close(got, want)


def test_check_of_a_cudf_frame_is_the_pandas_tables(cudf, adult):
    from gpuppdp.analysis.checker import check

    data, _ = adult
    options = dict(quasi_identifiers=list(QIS), sensitive="occupation", lkc=(2, 5, 0.6))
    want = check(data, backend="cpu", **options)
    got = check(cudf.DataFrame.from_pandas(data), backend=strict_backend(), **options)
    _assert_close(dict(got), dict(want))
    # a missing value: the pandas path's error, its count and first row
    with pytest.raises(ValueError) as pandas_error:
        check(_with_missing(data), backend="cpu", **options)
    with pytest.raises(ValueError) as device_error:
        check(cudf.DataFrame.from_pandas(_with_missing(data)), backend=strict_backend(),
              **options)
    assert str(device_error.value) == str(pandas_error.value)
    assert "3 missing value(s), first at row 3" in str(device_error.value)
    with pytest.raises(ValueError, match="quasi_identifiers: column\\(s\\) not in the data: "
                       "'height'"):
        check(cudf.DataFrame.from_pandas(data), quasi_identifiers=["age", "height"],
              backend=strict_backend())


@pytest.mark.parametrize("algorithm", ["mondrian", "tds"])
def test_the_partition_algorithms_take_a_cudf_frame(cudf, adult, algorithm):
    from gpuppdp.algorithms import TDS, Mondrian

    data, qis = adult
    data = data.drop(columns="name")
    cat = {c: qis[c] for c in ("sex", "race", "education")}
    make = {"mondrian": lambda **kw: Mondrian(list(cat), k=5, hierarchies=cat, **kw),
            "tds": lambda **kw: TDS(list(cat), k=5, hierarchies=cat, **kw)}[algorithm]
    want = make().fit(data)
    before = host_cells()
    got = make(backend=strict_backend()).fit(cudf.DataFrame.from_pandas(data))
    assert host_cells() - before == data.size  # one copy to the host
    pd.testing.assert_frame_equal(got.released, want.released)


def _measure_args(adult, tmp_path, command: str, *extra: str) -> list[str]:
    data, _ = adult
    source = tmp_path / "in.parquet"
    data.to_parquet(source, index=False)
    args = [command, str(source), "--quiet", *extra]
    for c in QIS:
        args += ["--qi", f"{c}={datasets.adult_path(f'adult_hierarchy_{c}.csv')}"]
    return args


@pytest.mark.parametrize("command, extra", [
    ("check", ("--sensitive", "occupation", "--lkc", "2,5,0.6")),
    ("risk", ("--population-size", "100000")),
])
def test_check_and_risk_read_a_parquet_input_into_gpu_memory(cudf, adult, tmp_path, command,
                                                            extra, gpu_is_the_stand_in,
                                                            monkeypatch):
    """``check`` and ``risk --gpu-io cudf`` read INPUT with cuDF (its values checked against
    the hierarchies on the device) and report what the host path reports."""
    import json

    from gpuppdp.cli.main import main

    read = []
    monkeypatch.setattr(cudf, "read_parquet", lambda *a, **kw: read.append(kw) or
                        type(cudf).__getattribute__(strict_cudf(), "read_parquet")(*a, **kw))
    on, off = tmp_path / "on.json", tmp_path / "off.json"
    assert main(_measure_args(adult, tmp_path, command, "--backend", "gpu", "--gpu-io",
                              "cudf", "--json", str(on), *extra)) == 0
    assert len(read) == 1 and set(read[0]["columns"]) >= set(QIS)
    assert main(_measure_args(adult, tmp_path, command, "--backend", "cpu", "--json",
                              str(off), *extra)) == 0
    _assert_close(json.loads(on.read_text()), json.loads(off.read_text()))


def test_a_value_outside_the_hierarchies_is_named_as_on_the_host(cudf, adult, tmp_path,
                                                                 gpu_is_the_stand_in, capsys):
    from gpuppdp.cli.main import main

    data, hierarchies = adult
    data = data.copy()
    data.loc[[40, 41, 90], "age"] = "250"
    bad = (data, hierarchies)
    assert main(_measure_args(bad, tmp_path, "check", "--backend", "cpu")) != 0
    host = capsys.readouterr().err
    assert main(_measure_args(bad, tmp_path, "check", "--backend", "gpu", "--gpu-io",
                              "cudf")) != 0
    device = capsys.readouterr().err
    assert "1 value(s) of 'age' are not labels of the hierarchy (first at record 41 " in host
    assert device == host


def test_gpu_io_cudf_refuses_what_needs_the_rows_on_the_host(cudf, adult, tmp_path,
                                                            gpu_is_the_stand_in, capsys):
    from gpuppdp.cli.main import main

    data, _ = adult
    data.to_parquet(tmp_path / "population.parquet", index=False)
    assert main(_measure_args(adult, tmp_path, "check", "--backend", "gpu", "--gpu-io", "cudf",
                              "--population", str(tmp_path / "population.parquet"))) != 0
    assert "--gpu-io cudf: --population, --perturbed, --dask" in capsys.readouterr().err
