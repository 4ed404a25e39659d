"""Tables that live on the GPU: cuDF DataFrames encoded and released on the device.

:meth:`gpuppdp.Anonymizer.fit` (and ``release``) accept a ``cudf.DataFrame``
(RAPIDS; ``pip install 'gpuppdp[gpu-frames]'``).  With a GPU backend its rows never cross to
the host:

* each quasi-identifier is factorized on the device and only its distinct values are matched
  with the hierarchy's leaves on the host (:func:`gpuppdp.engine.device_columns.leaf_codes`);
* the sensitive attributes' combinations are grouped on the device
  (:func:`gpuppdp.engine.device_columns.combinations`); only the distinct combinations and
  their counts go to the host, where :class:`~gpuppdp.engine.encoding.SensitiveEncoder`
  numbers them in order of first appearance, as for a pandas table;
* the release is a cuDF DataFrame: the rows kept (all, or those not suppressed) in a uniformly
  random order drawn on the device (ChaCha20 keys, :mod:`gpuppdp.dp.randomness`, sorted), each
  QID one gather of its level's labels (``*`` for a suppressed record), every other kept column
  gathered in that order (identifying columns never reach it).

Missing values are ARX's ``NULL`` as in a pandas table, values outside a hierarchy raise the same
:class:`~gpuppdp.core.codes.UnknownValuesError` (count and first row), and optimum, loss and
counts equal those of the same table as a pandas DataFrame.  On the CPU backend the frame is
copied to the host once (``to_pandas``) and takes the pandas path.
"""

from __future__ import annotations

import sys
from typing import Sequence

import numpy as np

from .backend import Backend
from .core.codes import smallest_int_dtype
from .engine.device_columns import combinations, leaf_codes
from .engine.encoding import (
    EncodedTable,
    Role,
    Schema,
    SensitiveEncoder,
    encode,
    sensitive_names,
    table_roles,
)
from .engine.transform import SUPPRESSION_MODES, Release, categories_of, released_columns
from .errors import InputError
from .io import host_frame, is_cudf_frame

__all__ = ["encode_cudf", "encode_frame", "release_cudf", "released_frame",
           "generalized_partition", "random_keys"]


def _cudf():
    """The cuDF module the frames came from (imported by their creator)."""
    return sys.modules["cudf"]


def encode_cudf(data, schema: Schema, backend: Backend,
                sensitive_attributes: Sequence[str] | str | None = ()) -> EncodedTable:
    """:func:`~gpuppdp.engine.encoding.encode` of a cuDF DataFrame on a GPU ``backend`` (see
    the module docstring): the same codes, labels and frequency set."""
    if not backend.is_gpu:
        raise InputError("a cuDF DataFrame is encoded on a GPU backend; on the CPU pass "
                         "data.to_pandas()")
    if schema.microaggregation:
        raise InputError("microaggregation needs the table in host memory: pass "
                         "data.to_pandas(), not a cuDF DataFrame")
    roles = table_roles(data, schema)
    qi_names = [c for c in data.columns if roles[c] is Role.QUASI_IDENTIFYING]
    hierarchies = [schema.quasi_identifiers[c] for c in qi_names]
    qi_codes = leaf_codes(data, qi_names, hierarchies, backend)
    enc = EncodedTable(backend, qi_names, hierarchies, qi_codes, len(data), roles=roles,
                       types=dict(schema.types))
    sensitive = SensitiveEncoder(sensitive_names(sensitive_attributes), roles)
    if sensitive.names:
        group, distinct, counts = combinations(data, sensitive.names, backend)
        carried = backend.asarray(sensitive.encode(distinct, weights=counts))[group]
        enc.sens_codes = carried.astype(smallest_int_dtype(sensitive.n_carried))
        sensitive.finish(enc)
    return enc


def encode_frame(data, schema: Schema, backend: Backend,
                 sensitive_attributes: Sequence[str] | str | None = ()) -> EncodedTable:
    """A pandas frame, or a cuDF frame (:func:`encode_cudf` on a GPU ``backend``; copied to
    the host once on the CPU), encoded under ``schema``."""
    if not is_cudf_frame(data):
        return encode(data, schema, backend, sensitive_attributes)
    if not backend.is_gpu:
        return encode(host_frame(data), schema, backend, sensitive_attributes)
    return encode_cudf(data, schema, backend, sensitive_attributes)


def _seed_of(seed) -> int | None:
    """An integer key for the release's order from ``seed`` (an int, a NumPy Generator or
    ``None``: keyed from the OS)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(1 << 62))
    return None if seed is None else int(seed)


def release_cudf(data, evaluator, levels, *, suppression: str = "mark", seed=None) -> Release:
    """The release of node ``levels`` of the cuDF table ``evaluator`` was built on, as a cuDF
    DataFrame (see the module docstring); its ``source_rows`` stay on the device."""
    if suppression not in SUPPRESSION_MODES:
        raise InputError(f"suppression must be one of {SUPPRESSION_MODES}, got {suppression!r}")
    enc, be = evaluator.encoded, evaluator.backend
    xp = be.xp
    levels = np.asarray(levels, dtype=np.int64)
    row_outlier, row_codes = evaluator.row_outliers(levels)
    outlier = row_outlier.astype(xp.bool_)
    kept = _kept(xp, outlier, suppression)
    order = kept[xp.argsort(random_keys(be, int(kept.shape[0]), _seed_of(seed)))]
    return Release(released_frame(data, enc, levels, row_codes, outlier, order), enc.n_rows,
                   int(xp.count_nonzero(outlier)), suppression, order)


def _kept(xp, outlier, suppression: str):
    """Device positions of the rows a release holds: those not suppressed, or all."""
    if suppression == "drop":
        return xp.flatnonzero(~outlier)
    return xp.arange(int(outlier.shape[0]), dtype=xp.int64)


def random_keys(backend: Backend, n: int, seed: int | None):
    """``n`` device int64 keys of 63 uniform bits (ChaCha20, keyed by ``seed`` or the OS)."""
    from .perturb.draws import random_source  # deferred: a seeded source without DP's warning

    return random_source(backend, seed=seed).random_bits(n)


def released_frame(data, enc: EncodedTable, levels, row_codes, outlier, order):
    """The cuDF frame of rows ``order`` (device positions in ``data``) released at node
    ``levels``: each QID its labels gathered from ``row_codes`` (device (n, q)), ``*`` where
    ``outlier``; every other kept column of ``data`` gathered."""
    cudf = _cudf()
    xp = enc.backend.xp
    shown_suppressed = outlier[order]

    def qid(j: int):
        dtype, star = categories_of(enc.hierarchies[j].labels(int(levels[j])))
        labels = cudf.Series([str(label) for label in dtype.categories])
        codes = xp.where(shown_suppressed, star, row_codes[order, j].astype(xp.int64))
        return labels.take(codes).reset_index(drop=True)

    return cudf.DataFrame(released_columns(
        data.columns, enc, qid, lambda name: data[name].take(order).reset_index(drop=True)))


def generalized_partition(part, table: EncodedTable, levels, failing, suppression: str,
                          offset: int, seed: int, backend: Backend, order_column: str):
    """A Dask partition (a cuDF frame, rows ``offset`` on in the table) released at node
    ``levels`` on the worker's ``backend`` (:mod:`gpuppdp.cluster`): the classes ``failing``
    (host (F, q) codes) suppressed, each row a uniform key in ``order_column`` for the
    shuffle."""
    cudf = _cudf()
    xp = backend.xp
    device = EncodedTable(backend, table.qi_names, table.hierarchies, None, table.n_rows,
                          roles=table.roles)
    row_codes = device.generalize(levels, leaf_codes(part, table.qi_names, table.hierarchies,
                                                     backend, offset))
    outlier = device.class_set(levels, backend.asarray(failing)).contains(row_codes)
    kept = _kept(xp, outlier.astype(xp.bool_), suppression)
    frame = released_frame(part, device, levels, row_codes, outlier, kept)
    frame[order_column] = cudf.Series(random_keys(backend, int(kept.shape[0]), seed))
    return frame
