"""Anonymization on a Dask cluster: partitions are encoded and reduced where they live.

:meth:`gpuppdp.Anonymizer.fit` accepts a ``dask.dataframe.DataFrame`` (CLI: ``gpuppdp
anonymize ... --dask local:N|tcp://HOST:PORT``).  The table never travels to the client:

1. each partition reports its row count and its distinct sensitive values (in order of first
   appearance, with counts); the client numbers them as :class:`SensitiveEncoder` does for
   the whole table, so codes and labels are those of a single-process run;
2. each partition is encoded against the hierarchies and reduced to its bottom frequency set
   (rows numbered in the whole table), and the sets are merged pairwise in a tree of tasks;
   the client receives only the merged set and runs the search (CPU or GPU);
3. the release is a lazy Dask DataFrame: every partition generalized and its failing classes
   suppressed where it lives, the rows given independent uniform keys and shuffled by them
   (a uniformly random order over the whole table); the CLI writes it as a Parquet dataset
   (one file per partition) or one CSV file.

Every task is a pure function of its partition, so a task lost with its worker is simply run
again and the result is identical (Dask retries it).  Optimum, loss, classes and suppressed
records are those of :meth:`~gpuppdp.Anonymizer.fit` on the same table in memory.
"""

from __future__ import annotations

import logging
import os
import secrets
from typing import Sequence

import numpy as np
import pandas as pd

from . import backend as backends
from . import device_frames
from .backend import Backend, get_backend
from .core.codes import encode_column
from .engine import device_columns
from .engine.device_columns import COUNT_COLUMN
from .engine.encoding import (
    EncodedTable,
    FrequencySet,
    Role,
    Schema,
    SchemaError,
    SensitiveEncoder,
    check_complete,
    leaf_codes,
    sensitive_names,
)
from .engine.transform import (
    SUPPRESSION_MODES,
    Release,
    categories_of,
    labelled_codes,
    released_columns,
)
from .errors import InputError
from .io import (
    _CSV_OPTIONS,
    PARQUET_SUFFIXES,
    TABLE_SUFFIXES,
    OutputPlan,
    is_cudf_frame,
    table_columns,
    table_delimiter,
)
from .kernels import groupby

__all__ = ["is_dask_frame", "client_for", "encode_dask", "release_dask", "write_release",
           "read_dask"]

_ORDER = "__gpuppdp_order__"


def is_dask_frame(data) -> bool:
    """Is ``data`` a Dask DataFrame (without importing Dask when it is not)?"""
    return type(data).__module__.partition(".")[0] in ("dask", "dask_expr") \
        and hasattr(data, "to_delayed")


def client_for(spec: str, gpu: bool = False):
    """A ``distributed.Client`` for ``local:N`` (a new ``LocalCluster`` of N single-threaded
    worker processes; with ``gpu``, dask-cuda's ``LocalCUDACluster`` of N workers, one GPU
    each), ``local-cuda:N`` (that GPU cluster, whatever ``gpu`` says) or ``tcp://HOST:PORT``
    (a running scheduler)."""
    try:
        from distributed import Client, LocalCluster  # deferred: Dask is optional
    except ImportError:
        raise ImportError("--dask needs Dask: pip install 'gpuppdp[dask]'") from None
    kind, _, value = spec.partition(":")
    if kind in ("local", "local-cuda"):
        try:
            workers = int(value)
        except ValueError:
            workers = 0
        if workers < 1:
            raise InputError(f"--dask {kind}:N needs a number of workers N >= 1, got {spec!r}")
        # the cluster logs its start and stop, and the release's shuffle, as news
        logging.getLogger("distributed").setLevel(logging.ERROR)
        options = dict(n_workers=workers, threads_per_worker=1, dashboard_address=None,
                       silence_logs=logging.ERROR)
        if gpu or kind == "local-cuda":
            return Client(_cuda_cluster(workers, options))
        return Client(LocalCluster(processes=True, **options))
    if kind in ("tcp", "tls", "ucx"):
        return Client(spec)
    raise InputError(f"--dask expects local:N, local-cuda:N or tcp://HOST:PORT, got {spec!r}")


def _cuda_cluster(workers: int, options: dict):
    """dask-cuda's ``LocalCUDACluster`` with ``workers`` workers, each pinned to its own GPU."""
    try:
        from dask_cuda import LocalCUDACluster  # deferred: dask-cuda is optional
    except ImportError:
        raise ImportError("--dask local:N on the GPU needs dask-cuda (one worker per GPU): "
                          "pip install 'gpuppdp[dask-gpu]'") from None
    available = backends.gpu_count()
    if workers > available:
        raise InputError(f"--dask local:{workers} on the GPU: this machine has {available} "
                         "GPU(s), one per worker")
    return LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(workers)), **options)


def read_dask(path: str, *, sep: str | None = None, columns: Sequence[str] | None = None,
              gpu_frames: bool = False):
    """A CSV or Parquet file as a Dask DataFrame with :func:`gpuppdp.io.read_table`'s values
    (CSV: strings, only empty fields missing); ``columns``: only those are read.  With
    ``gpu_frames`` a Parquet file is read by dask-cuDF: its partitions are cuDF frames, each
    read into its worker's GPU, encoded and released there
    (:func:`gpuppdp.device_frames.generalized_partition`)."""
    import dask.dataframe as dd  # deferred: Dask is optional

    table_columns(path, sep=sep)  # the file's checks: present, readable, names unique
    columns = None if columns is None else list(columns)
    if gpu_frames:
        import dask_cudf  # deferred: optional (pip install 'gpuppdp[dask-gpu]')

        return dask_cudf.read_parquet(path, columns=columns)
    if path.lower().endswith((".parquet", ".pq")):
        return dd.read_parquet(path, columns=columns)
    return dd.read_csv(path, sep=table_delimiter(path, sep), blocksize="64MiB",
                       usecols=columns, **_CSV_OPTIONS)


def _counted(part: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """A partition's distinct rows of ``columns`` in order of first appearance, with their
    counts in :data:`COUNT_COLUMN` (missing values kept as values)."""
    counts = part.groupby(columns, sort=False, dropna=False, observed=True).size()
    return counts.rename(COUNT_COLUMN).reset_index()


def partition_counts(ddf, columns: Sequence[str]):
    """The partitions of Dask DataFrame ``ddf`` reduced on the workers to their distinct rows
    of ``columns`` with counts (:data:`COUNT_COLUMN`), yielded to the client in partition
    order -- the weighted chunks that ``risk_report_chunks`` and ``check_chunks`` merge into
    the table's frequency set (``weight_column=COUNT_COLUMN``), identical to reading the
    table in chunks."""
    import dask  # deferred: Dask is optional

    columns = list(columns)
    parts = ddf[columns].map_partitions(_counted, columns).to_delayed()
    futures = _client_compute(parts)
    for future in futures:
        yield future.result() if hasattr(future, "result") else dask.compute(future)[0]


def _client_compute(parts: list):
    """Futures of ``parts`` on the current distributed client (all at once, gathered one by
    one), or the delayed objects themselves without one."""
    try:
        from distributed import default_client  # deferred: Dask is optional
        return default_client().compute(parts)
    except (ImportError, ValueError):
        return parts


# -- encoding -----------------------------------------------------------------------------
def _local_combinations(part: pd.DataFrame, names: list[str]):
    """``(group, distinct, counts)``: each row's combination of sensitive values numbered in
    order of first appearance in ``part``, those combinations (a DataFrame of strings), and
    how many rows hold each."""
    codes, labels = [], []
    for name in names:
        c, lab = encode_column(part[name], as_str=True)
        codes.append(c.astype(np.int64))
        labels.append(lab)
    group, rep, _ = groupby.group(np, codes, None)
    distinct = pd.DataFrame({n: lab[c[rep]] for n, lab, c in zip(names, labels, codes)})
    return group, distinct, np.bincount(group, minlength=len(rep))


def _profile(part: pd.DataFrame, names: list[str], backend: Backend):
    if not names or not len(part):
        return len(part), None, None
    if is_cudf_frame(part):  # a dask-cuDF partition: grouped on the worker's GPU
        _, distinct, counts = device_columns.combinations(part, names, backend)
    else:
        _, distinct, counts = _local_combinations(part, names)
    return len(part), distinct, counts


def _partition_bottom(part: pd.DataFrame, table: EncodedTable, names: list[str],
                      checked: list[str], offset: int, lut, backend: Backend
                      ) -> FrequencySet | None:
    """A partition's bottom frequency set, grouped on the worker's ``backend`` (its GPU, when
    the run's backend is one), returned in host memory."""
    if not len(part):
        return None
    if is_cudf_frame(part):  # a dask-cuDF partition: encoded on the worker's GPU
        xp = backend.xp
        codes = device_columns.leaf_codes(part, table.qi_names, table.hierarchies, backend,
                                          offset)
        rows = xp.stack([c.astype(table.code_dtype) for c in codes], axis=1)
        carried = backend.asarray(lut)[device_columns.combinations(part, names, backend)[0]] \
            if names else None
    else:
        check_complete(part, checked, offset)
        codes = leaf_codes(part, table.qi_names, table.hierarchies, offset)
        rows = backend.asarray(np.stack([c.astype(table.code_dtype) for c in codes], axis=1))
        carried = backend.asarray(lut[_local_combinations(part, names)[0]]) if names else None
    return table.bottom_of(rows, carried, offset, backend).moved(backend.to_host)


def _merge(table: EncodedTable, a: FrequencySet | None, b: FrequencySet | None,
           backend: Backend):
    """Two consecutive partitions' sets merged on the worker's ``backend``, in host memory."""
    if a is None or b is None:
        return a if b is None else b
    return table.merge([a.moved(backend.asarray), b.moved(backend.asarray)],
                       backend).moved(backend.to_host)


def encode_dask(ddf, schema: Schema, backend: Backend,
                sensitive_attributes: Sequence[str] | str | None = ()) -> EncodedTable:
    """:func:`~gpuppdp.engine.encoding.encode` of a Dask DataFrame (see the module
    docstring): the same frequency set, codes and labels, computed on the workers -- grouped
    on their GPU when ``backend`` is one (it travels to a worker as its kind, so each worker
    uses its own device: one per worker on a dask-cuda cluster, see :func:`client_for`)."""
    import dask  # deferred: Dask is optional

    columns = list(ddf.columns)
    roles = schema.resolve(columns)
    qi_names = [c for c in columns if roles[c] is Role.QUASI_IDENTIFYING]
    names = sensitive_names(sensitive_attributes)
    sensitive = SensitiveEncoder(names, roles)
    parts = ddf[qi_names + [c for c in schema.sensitive if c not in qi_names]].to_delayed()
    profiles = dask.compute(*[dask.delayed(_profile)(p, names, backend) for p in parts])
    rows = np.array([n for n, _, _ in profiles], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(rows)])
    if offsets[-1] == 0:
        raise SchemaError("the table is empty (0 rows)")
    luts = [None if distinct is None else sensitive.encode(distinct, weights=counts)
            for _, distinct, counts in profiles]
    cpu = get_backend("cpu")
    table = EncodedTable(cpu, qi_names, [schema.quasi_identifiers[c] for c in qi_names], None,
                         int(offsets[-1]), roles=roles, n_sens=max(sensitive.n_carried, 1))
    shared = dask.delayed(table, pure=True)
    checked = qi_names + list(schema.sensitive)
    sets = [dask.delayed(_partition_bottom)(p, shared, names, checked, int(o), lut, backend)
            for p, o, lut in zip(parts, offsets, luts)]
    while len(sets) > 1:  # a tree of pairwise merges, in row order
        sets = [dask.delayed(_merge)(shared, *sets[i:i + 2], backend) if i + 1 < len(sets)
                else sets[i] for i in range(0, len(sets), 2)]
    bottom = sets[0].compute()
    enc = EncodedTable(backend, qi_names, table.hierarchies, None, table.n_rows, roles=roles,
                       n_sens=table.n_sens, types=dict(schema.types))
    enc._bottom = FrequencySet(bottom.levels, *(backend.asarray(getattr(bottom, n)) for n in (
        "codes", "sens", "count", "first", "ptr")), bottom.host_ptr)
    if names:
        sensitive.finish(enc)
    return enc


# -- release ------------------------------------------------------------------------------
def _generalize_partition(part: pd.DataFrame, table: EncodedTable, levels, failing, failing_set,
                          categories: dict, suppression: str, seed, offset_of: dict,
                          backend: Backend, partition_info=None) -> pd.DataFrame:
    """Partition ``part`` released at node ``levels``: the rows of the classes ``failing``
    (their codes; ``failing_set``: the same as a host :class:`~gpuppdp.kernels.groupby.KeySet`,
    built once by the client, None for cuDF partitions) suppressed, each row's shuffle key
    drawn from the partition's own seed."""
    number = 0 if partition_info is None else partition_info["number"]
    offset = offset_of.get(number, 0)
    partition_seed = np.random.SeedSequence(seed, spawn_key=(number,))
    if is_cudf_frame(part):  # a dask-cuDF partition: released on the worker's GPU
        return device_frames.generalized_partition(
            part, table, levels, failing, suppression, offset,
            int(partition_seed.generate_state(1, np.uint64)[0] >> np.uint64(2)), backend,
            _ORDER)
    codes = leaf_codes(part, table.qi_names, table.hierarchies, offset) if len(part) else \
        [np.zeros(0, dtype=np.int64) for _ in table.qi_names]
    row_codes = table.generalize(levels, codes)
    outlier = failing_set.contains(row_codes)
    frame = pd.DataFrame(released_columns(
        part.columns, table,
        lambda j: labelled_codes(categories[table.qi_names[j]], row_codes[:, j], outlier),
        lambda name: part[name].reset_index(drop=True)))
    frame[_ORDER] = np.random.default_rng(partition_seed).random(len(frame))
    return frame[~outlier].reset_index(drop=True) if suppression == "drop" else frame


def _in_key_order(part: pd.DataFrame) -> pd.DataFrame:
    # (cuDF sorts by its own algorithm and warns at any kind asked for; the keys are distinct)
    order = {} if is_cudf_frame(part) else {"kind": "stable"}
    return part.sort_values(_ORDER, **order).drop(columns=_ORDER).reset_index(drop=True)


def release_dask(ddf, evaluator, levels, suppressed: int, *, suppression: str = "mark",
                 seed=None) -> Release:
    """The release of node ``levels`` of the Dask table ``evaluator`` was built on, as a lazy
    Dask DataFrame (``Release.data``) in a uniformly random row order; ``suppressed`` is the
    optimum's suppressed record count (from the search)."""
    if suppression not in SUPPRESSION_MODES:
        raise InputError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    import dask  # deferred: Dask is optional

    enc = evaluator.encoded
    levels = np.asarray(levels, dtype=np.int64)
    table = enc.rows_on_host()
    failing = evaluator.backend.to_host(evaluator.suppressed_classes(levels))
    categories = {name: categories_of(h.labels(int(levels[j])))
                  for j, (name, h) in enumerate(zip(enc.qi_names, enc.hierarchies))}
    kept = [c for c in ddf.columns if enc.roles.get(c) not in (None, Role.IDENTIFYING)]
    rows = dask.compute(*[dask.delayed(len)(p) for p in ddf.to_delayed()])
    offset_of = dict(enumerate(np.concatenate([[0], np.cumsum(rows)])[:-1].tolist()))
    seed = seed if seed is not None else secrets.randbits(64)
    backend = evaluator.backend
    # host partitions test their rows against one set built here; cuDF ones build theirs
    # on their GPU from the codes
    failing_set = None if is_cudf_frame(ddf._meta) else table.class_set(levels, failing)
    meta = _generalize_partition(ddf._meta, table, levels, failing, failing_set, categories,
                                 suppression, seed, {}, backend)
    generalized = ddf[kept].map_partitions(
        _generalize_partition, dask.delayed(table, pure=True), levels,
        dask.delayed(failing, pure=True), dask.delayed(failing_set, pure=True), categories,
        suppression, seed, offset_of, backend, meta=meta)
    shuffled = generalized.shuffle(_ORDER).map_partitions(_in_key_order,
                                                          meta=_in_key_order(meta))
    return Release(shuffled, enc.n_rows, int(suppressed), suppression)


def _unknown_categories(meta: pd.DataFrame) -> dict:
    """Arrow types for the categorical columns whose categories Dask does not know (carried
    from the input as read): dictionaries of strings, which Dask cannot infer."""
    import pyarrow as pa  # deferred: only a Parquet release needs it
    from dask.dataframe.utils import has_known_categories  # deferred: Dask is optional

    return {c: pa.dictionary(pa.int32(), pa.large_string()) for c in meta.columns
            if isinstance(meta[c].dtype, pd.CategoricalDtype)
            and (not has_known_categories(meta[c]) or not len(meta[c].cat.categories))}


def write_release(release: Release, path: str, *, sep: str = ";") -> None:
    """Write a Dask release: a Parquet dataset folder (one file per partition) for a name
    ending in ``.parquet``/``.pq``, else one ``sep``-separated CSV file.  Written under a
    temporary name in the same folder and renamed into place at the end (a previous release
    of that name is replaced only then; see :class:`gpuppdp.io.OutputPlan`)."""
    path = os.path.abspath(os.fspath(path))
    parquet = path.lower().endswith(PARQUET_SUFFIXES)
    plan = OutputPlan().add("output", path, TABLE_SUFFIXES, dataset=parquet)
    with plan.writing() as out:
        temp = out.path("output")
        if parquet and is_cudf_frame(release.data._meta):  # dask-cuDF: cuDF's writer
            release.data.to_parquet(temp, write_index=False)
        elif parquet:
            release.data.to_parquet(temp, write_index=False,
                                    schema=_unknown_categories(release.data._meta))
        else:
            release.data.to_csv(temp, single_file=True, sep=sep, index=False)
    release.path = path
