"""Dask with GPU workers (:mod:`gpuppdp.cluster`): partitions grouped and merged on the
workers' device -- here the strict CuPy stand-in, on Dask's synchronous scheduler (a stand-in
cannot travel to worker processes) -- give the single-process frequency set and result; a
GPU run's local cluster is dask-cuda's, one worker per GPU."""

from __future__ import annotations

import sys
import types

import dask
import dask.dataframe as dd
import distributed
import numpy as np
import pytest

from gpuppdp import Anonymizer, backend, cluster, datasets
from gpuppdp.backend import get_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.models import DistinctLDiversity
from gpuppdp.testing import strict_backend


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    data = data.head(3000).reset_index(drop=True)
    qis = {c: hierarchies[c] for c in ("age", "sex", "race", "education")}
    return data, qis


@pytest.mark.parametrize("sensitive", [[], ["occupation"]])
def test_partitions_grouped_on_the_device_give_the_whole_tables_set(adult, sensitive):
    data, qis = adult
    schema = Schema(qis, sensitive=sensitive, others="drop")
    whole = encode(data, schema, get_backend("cpu"), sensitive).frequency_set()
    device = strict_backend()
    calls = []
    bottom_of = cluster.EncodedTable.bottom_of

    def counted(self, row_codes, sens_codes, first_row, backend=None):
        calls.append(backend)
        return bottom_of(self, row_codes, sens_codes, first_row, backend)

    with dask.config.set(scheduler="synchronous"), pytest.MonkeyPatch.context() as mp:
        mp.setattr(cluster.EncodedTable, "bottom_of", counted)
        enc = cluster.encode_dask(dd.from_pandas(data, npartitions=5), schema, device,
                                  sensitive)
    assert len(calls) == 5 and all(b is device for b in calls)  # on the workers' device
    got = enc.frequency_set()
    for name in ("codes", "sens", "count", "first"):
        np.testing.assert_array_equal(device.to_host(getattr(got, name)),
                                      getattr(whole, name), err_msg=name)


def test_dask_fit_on_the_device_is_the_single_process_fit(adult):
    data, qis = adult
    options = dict(quasi_identifiers=qis, sensitive=["occupation"], others="drop", k=3,
                   suppression_limit=0.05, models=[DistinctLDiversity("occupation", 2)], seed=4)
    expected = Anonymizer(backend="cpu", **options).fit(data)
    with dask.config.set(scheduler="synchronous"):
        got = Anonymizer(backend=strict_backend(), **options).fit(
            dd.from_pandas(data, npartitions=4))
        released = got.released.compute()
    for key in ("transformation", "information_loss", "suppressed_records",
                "equivalence_classes"):
        assert getattr(got, key) == getattr(expected, key), key
    assert len(released) == len(expected.released)


def test_a_gpu_run_asks_for_dask_cuda(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_cuda", None)  # not installed
    with pytest.raises(ImportError, match="dask-cuda"):
        cluster.client_for("local:2", gpu=True)


@pytest.fixture
def cuda_cluster(monkeypatch):
    """dask-cuda's ``LocalCUDACluster`` replaced by a class that records its options (the
    returned dict), ``distributed.Client`` by the cluster it would connect to, and a machine
    of 4 GPUs."""
    made = {}

    class FakeCUDACluster:
        def __init__(self, **options):
            made.update(options)

    monkeypatch.setitem(sys.modules, "dask_cuda",
                        types.SimpleNamespace(LocalCUDACluster=FakeCUDACluster))
    monkeypatch.setattr(backend, "gpu_count", lambda: 4)
    monkeypatch.setattr(distributed, "Client", lambda c: c)
    made["class"] = FakeCUDACluster
    return made


def test_a_gpu_run_gets_one_worker_per_gpu(monkeypatch, cuda_cluster):
    monkeypatch.setattr(backend, "gpu_count", lambda: 2)
    with pytest.raises(ValueError, match="2 GPU"):
        cluster.client_for("local:3", gpu=True)
    assert isinstance(cluster.client_for("local:2", gpu=True), cuda_cluster["class"])
    assert cuda_cluster["CUDA_VISIBLE_DEVICES"] == [0, 1] and cuda_cluster["n_workers"] == 2
    assert cuda_cluster["threads_per_worker"] == 1


def test_local_cuda_asks_for_one_gpu_per_worker_whatever_the_backend(cuda_cluster):
    assert isinstance(cluster.client_for("local-cuda:3", gpu=False), cuda_cluster["class"])
    assert cuda_cluster["CUDA_VISIBLE_DEVICES"] == [0, 1, 2]
    with pytest.raises(ValueError, match="--dask local-cuda:N needs a number of workers"):
        cluster.client_for("local-cuda:0")


def test_a_parquet_input_is_read_by_dask_cudf_when_asked(monkeypatch, tmp_path, adult):
    data, _ = adult
    path = tmp_path / "in.parquet"
    data.to_parquet(path, index=False)
    calls = []
    monkeypatch.setitem(sys.modules, "dask_cudf", types.SimpleNamespace(
        read_parquet=lambda p, columns=None: calls.append((p, columns)) or "frames"))
    assert cluster.read_dask(str(path), columns=["age"], gpu_frames=True) == "frames"
    assert calls == [(str(path), ["age"])]
    assert cluster.is_dask_frame(cluster.read_dask(str(path), columns=["age"]))
