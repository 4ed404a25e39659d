"""Anonymization on a Dask local cluster (:mod:`gpuppdp.cluster`): the single-process result,
with the work done on the workers, surviving a worker lost mid-run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.core.codes import UnknownValuesError
from gpuppdp.models import DistinctLDiversity, TCloseness
from tests.test_checker import assert_same_report



@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    data = data.head(8000).reset_index(drop=True)
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "marital-status", "education")}
    return data, qis


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(str)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


CONFIGS = [
    dict(others="insensitive", k=5, suppression_limit=0.05),
    dict(others="insensitive", k=3, suppressed="drop", suppression_limit=0.02,
         metric="discernibility"),
    dict(sensitive=["occupation", "salary-class"], others="drop", k=2, suppression_limit=0.1,
         models=[DistinctLDiversity("occupation", 3), TCloseness("salary-class", 0.3, "equal")]),
]


@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_dask_fit_is_the_single_process_fit(client, adult, config):
    data, qis = adult
    anonymizer = Anonymizer(quasi_identifiers=qis, backend="cpu", seed=2, **CONFIGS[config])
    expected = anonymizer.fit(data)
    got = anonymizer.fit(dd.from_pandas(data, npartitions=7))
    for key in ("transformation", "information_loss", "suppressed_records",
                "equivalence_classes", "nodes_evaluated"):
        assert getattr(got, key) == getattr(expected, key), key
    released = got.released.compute()
    assert len(released) == got.release.rows_in_release == len(expected.released)
    pd.testing.assert_frame_equal(_sorted(released), _sorted(expected.released))
    evaluator = got._evaluator
    for name in evaluator.encoded.sensitive:
        a = expected._evaluator.encoded.sensitive_column(name)
        b = evaluator.encoded.sensitive_column(name)
        assert list(a.labels) == list(b.labels)
        np.testing.assert_array_equal(a.counts, b.counts)


def test_release_order_is_shuffled_across_partitions(client, adult):
    data, qis = adult
    data = data.assign(rid=np.arange(len(data)))
    anonymizer = Anonymizer(quasi_identifiers=qis, others="insensitive", k=5,
                            suppression_limit=0.05, backend="cpu", seed=4)
    released = anonymizer.fit(dd.from_pandas(data, npartitions=4)).released.compute()
    rid = released["rid"].to_numpy()
    assert sorted(rid.tolist()) == list(range(len(data)))
    # rows of the first input partition are spread over the whole release
    first_quarter = np.flatnonzero(rid < len(data) // 4)
    assert first_quarter.min() < len(data) // 8 and first_quarter.max() > len(data) * 7 // 8


def _die_once(part: pd.DataFrame, marker: str) -> pd.DataFrame:
    """Kill the worker process the first time any partition gets here."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return part
    os.close(fd)
    os._exit(1)


def test_a_worker_lost_mid_run_changes_nothing(client, adult, tmp_path):
    data, qis = adult
    anonymizer = Anonymizer(quasi_identifiers=qis, others="insensitive", k=5,
                            suppression_limit=0.05, backend="cpu", seed=1)
    expected = anonymizer.fit(data)
    marker = str(tmp_path / "died")
    ddf = dd.from_pandas(data, npartitions=6)
    ddf = ddf.map_partitions(_die_once, marker, meta=ddf._meta)  # never run here
    got = anonymizer.fit(ddf)
    assert os.path.exists(marker)  # a worker did die
    assert got.transformation == expected.transformation
    assert got.information_loss == expected.information_loss
    assert got.suppressed_records == expected.suppressed_records


def test_unknown_value_in_a_late_partition_names_its_row(client, adult):
    data, qis = adult
    data = data.copy()
    data["age"] = data["age"].astype(object)
    data.loc[6543, "age"] = "999"
    anonymizer = Anonymizer(quasi_identifiers=qis, others="insensitive", k=5, backend="cpu")
    with pytest.raises(UnknownValuesError, match="first at row 6543"):
        anonymizer.fit(dd.from_pandas(data, npartitions=5))


def test_cli_dask_writes_a_parquet_dataset(tmp_path):
    data, _ = datasets.adult()
    src = tmp_path / "people.parquet"
    data.head(3000).to_parquet(src, index=False)
    cmd = [str(Path(sys.executable).parent / "gpuppdp"), "anonymize", str(src)]
    for q in ("age", "sex", "race"):
        cmd += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    out = tmp_path / "out.parquet"
    cmd += ["--identifying", "education", "--others", "insensitive", "--k", "5",
            "--suppression", "5%", "--quiet", "--backend", "cpu", "--dask", "local:1",
            "--output", str(out), "--json", str(tmp_path / "out.json")]
    for _ in range(2):  # the second run replaces the dataset
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
    released = pd.read_parquet(out)
    assert len(released) == 3000 and "education" not in released.columns
    summary = json.load(open(tmp_path / "out.json"))
    assert summary["output"] == str(out) and summary["rows_in_release"] == 3000
    assert not [f for f in os.listdir(tmp_path) if "gpuppdp-tmp" in f]
    bad = subprocess.run(cmd[:-4] + ["--dask", "local:0", "--output", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "local:N" in bad.stderr


def _with_suppressed_rows(data: pd.DataFrame, qids: list[str]) -> pd.DataFrame:
    """``data`` with a few rows whose every QID is '*' (suppressed in an earlier release)."""
    data = data.copy()
    data.loc[[3, 500, 4000], qids] = "*"
    return data


def test_risk_and_check_on_partition_counts_equal_the_whole_table(client, adult):
    """``partition_counts`` (each partition reduced on a worker to its distinct rows with
    counts) merged by ``risk_report_chunks`` / ``check_chunks`` gives the in-memory reports."""
    from gpuppdp.analysis.checker import check, check_chunks
    from gpuppdp.analysis.risk import risk_report, risk_report_chunks
    from gpuppdp.cluster import COUNT_COLUMN, partition_counts

    data, qis = adult
    qids = list(qis)
    data = _with_suppressed_rows(data, qids)
    ddf = dd.from_pandas(data, npartitions=7)
    got = risk_report_chunks(partition_counts(ddf, qids), qids, weight_column=COUNT_COLUMN)
    assert got == risk_report(data, qids)
    options = dict(quasi_identifiers=qids, sensitive="occupation", lkc=(2, 5, 0.8),
                   backend="cpu")
    got = check_chunks(partition_counts(ddf, qids + ["occupation"]),
                       weight_column=COUNT_COLUMN, **options)
    assert_same_report(got, check(data, **options))


def test_cli_risk_and_check_on_dask_print_the_in_memory_reports(tmp_path):
    data, _ = datasets.adult()
    src = tmp_path / "people.csv"
    data.head(3000).to_csv(src, index=False)
    gp = str(Path(sys.executable).parent / "gpuppdp")
    qi = []
    for q in ("age", "sex", "race"):
        qi += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    runs = {"risk": qi + ["--backend", "cpu"],
            "check": qi + ["--sensitive", "occupation", "--backend", "cpu"]}
    for sub, args in runs.items():
        out = {}
        for tag, extra in (("memory", []), ("dask", ["--dask", "local:1"])):
            path = tmp_path / f"{sub}.json"  # the same path: printed in the report
            p = subprocess.run([gp, sub, str(src), *args, *extra, "--quiet", "--json",
                                str(path)], capture_output=True, text=True, timeout=300)
            assert p.returncode == 0, p.stderr[-2000:]
            out[tag] = (p.stdout, json.load(open(path)))
        assert out["dask"] == out["memory"], sub
    bad = subprocess.run([gp, "risk", str(src), *qi, "--dask", "local:1", "--chunk-rows",
                          "100"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--dask and --chunk-rows" in bad.stderr
