"""Tables that live on the GPU: cuDF DataFrames encoded and released on the device.

:meth:`gpuppdp.Anonymizer.fit` (and ``release``) accept a ``cudf.DataFrame``
(RAPIDS; ``pip install 'gpuppdp[gpu-frames]'``).  With a GPU backend its rows never cross to
the host:

* each quasi-identifier is factorized on the device (cuDF's ``Series.factorize``: codes in order
  of first appearance, ``-1`` for a null); only its distinct values come to the host, where
  they are matched with the hierarchy's leaves (:func:`~gpuppdp.core.codes.encode_column`), and
  one gather of that lookup table gives every row's leaf code on the device;
* the sensitive attributes' combinations are grouped on the device
  (:func:`~gpuppdp.kernels.groupby.group`); only the distinct combinations and their counts go
  to the host, where :class:`~gpuppdp.engine.encoding.SensitiveEncoder` numbers them in order
  of first appearance, as for a pandas table;
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
import pandas as pd

from .backend import Backend
from .core.codes import UnknownValuesError, encode_column, smallest_int_dtype
from .core.datatypes import NULL
from .engine.encoding import (
    EncodedTable,
    Role,
    Schema,
    SensitiveEncoder,
    encode,
    missing_error,
    sensitive_names,
    table_roles,
    with_null,
)
from .engine.transform import SUPPRESSION_MODES, Release, categories_of, released_columns
from .errors import InputError
from .io import is_cudf_frame
from .kernels import groupby

__all__ = ["encode_cudf", "encode_frame", "release_cudf", "leaf_codes", "combinations",
           "released_frame", "generalized_partition", "random_keys"]


def _cudf():
    """The cuDF module the frames came from (imported by their creator)."""
    return sys.modules["cudf"]


class _Factorized:
    """One column factorized on the device: ``codes`` (device int64) index ``values`` (host
    pandas Series, distinct values in order of first appearance; a missing cell -- null or
    NaN -- the value ``NULL``, at the end when only nulls stand for it); ``missing`` (host
    bool per value) marks the values that stand for missing cells."""

    def __init__(self, column, backend: Backend):
        xp = backend.xp
        codes, uniques = column.factorize()
        codes = backend.asarray(codes).astype(xp.int64)
        values, miss = with_null(pd.Series(uniques.to_pandas(), copy=False))
        if int(xp.count_nonzero(codes < 0)):        # nulls: one more value, NULL
            values = pd.concat([values.astype(object), pd.Series([NULL], dtype=object)],
                               ignore_index=True)
            miss = np.append(np.zeros(len(values) - 1, bool) if miss is None else miss, True)
            codes = xp.where(codes < 0, len(values) - 1, codes)
        self.codes, self.values = codes, values.reset_index(drop=True)
        self.missing = np.zeros(len(values), bool) if miss is None else np.asarray(miss)

    def rows(self, backend: Backend, which: np.ndarray) -> np.ndarray:
        """Host bool mask of the rows holding one of the values ``which`` marks (for an
        error's count and first row: a transfer of the rows' mask, on the error path only)."""
        return backend.to_host(backend.asarray(which)[self.codes])


def _leaf_codes(column, name: str, h, backend: Backend, row_offset: int):
    """Device leaf codes of one QID column of a cuDF frame (see the module docstring)."""
    col = _Factorized(column, backend)
    if col.missing.any() and not (h.leaves == NULL).any():
        raise missing_error(name, h, col.rows(backend, col.missing), row_offset)
    lut = encode_column(col.values, domain=h.leaf_domain, name=name, unknown="missing")[0]
    unknown = lut < 0
    if unknown.any():
        rows = col.rows(backend, unknown)
        raise UnknownValuesError(name, sorted(str(v) for v in col.values[unknown]),
                                 int(rows.sum()), row_offset + int(np.argmax(rows)))
    return backend.asarray(lut)[col.codes]


def leaf_codes(data, qi_names: Sequence[str], hierarchies, backend: Backend,
               row_offset: int = 0) -> list:
    """Device leaf codes of every QID column of cuDF frame ``data`` (rows numbered from
    ``row_offset`` in errors), as :func:`gpuppdp.engine.encoding.leaf_codes` gives them for a
    pandas one."""
    return [_leaf_codes(data[c], c, h, backend, row_offset) for c, h in zip(qi_names, hierarchies)]


def combinations(data, names: Sequence[str], backend: Backend) -> tuple:
    """``(group, distinct, counts)``: each row's combination of the columns ``names`` of cuDF
    frame ``data`` numbered in order of first appearance (device int64), those combinations
    (a host DataFrame, a missing value ``NULL``) and how many rows hold each (host): grouped
    on the device, only the distinct combinations on the host."""
    xp = backend.xp
    columns = [_Factorized(data[name], backend) for name in names]
    group, rep, _ = groupby.group(xp, [c.codes for c in columns],
                                  [len(c.values) for c in columns])
    distinct = pd.DataFrame({name: c.values.to_numpy()[backend.to_host(c.codes[rep])]
                             for name, c in zip(names, columns)})
    return group, distinct, backend.to_host(xp.bincount(group, minlength=int(rep.shape[0])))


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
        return encode(data.to_pandas(), schema, backend, sensitive_attributes)
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
