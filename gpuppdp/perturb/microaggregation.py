"""Microaggregation of numeric attributes: MDAV groups of at least ``k`` records, each record
released as its group's mean (or median).

MDAV (Domingo-Ferrer and Mateo-Sanz 2002) runs on the standardized columns (mean 0, standard
deviation 1; a constant column stays 0), exactly on the whole table by default.  For census
sizes, ``partition_rows`` first sorts the records by their projection on the first principal
component (of the first :data:`PCA_SAMPLE_ROWS` records) and cuts that order into consecutive
partitions of about that many records, each aggregated on its own -- in parallel, a block per
partition on a GPU -- at the price of some within-group variance (the ``information_loss``
says how much).  The groups are the same on the CPU and on a GPU (:mod:`gpuppdp.kernels.mdav`);
released means agree to rounding.  The information loss is ``SSE / SST`` on the standardized
columns (Domingo-Ferrer and Mateo-Sanz 2002, section 2).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np

from .. import kernels
from ..backend import Array, get_backend
from ..errors import InputError
from ..kernels.mdav import fixed_point_scale

__all__ = ["Microaggregation", "microaggregate", "PCA_SAMPLE_ROWS"]

#: records whose covariance gives the projection that orders the records into partitions
PCA_SAMPLE_ROWS = 100_000


@dataclass
class Microaggregation:
    """The result of :func:`microaggregate`.

    ``values``: the released values (n, d) or (n,), float64, on the backend; ``groups``: each
    record's group, ``0..n_groups-1`` (device int64); ``sse``/``sst``: within-group and total
    sums of squares of the standardized columns; ``information_loss``: ``sse / sst``;
    ``partitions``: how many partitions MDAV ran on; ``seconds``: wall time."""

    values: Array
    groups: Array
    n_groups: int
    smallest_group: int
    largest_group: int
    sse: float
    sst: float
    information_loss: float
    partitions: int
    seconds: float

    def summary(self) -> dict:
        """The figures (everything but the arrays), JSON-ready."""
        return {name: getattr(self, name) for name in (
            "n_groups", "smallest_group", "largest_group", "sse", "sst", "information_loss",
            "partitions", "seconds")}


def _checked(xp, values, k, partition_rows, aggregate):
    """``values`` as a float64 (n, d) array, checked with the parameters, and whether it was
    one column."""
    x = xp.asarray(values)
    if x.ndim not in (1, 2) or x.shape[0] == 0:
        raise InputError(f"values must be a non-empty column or table, got shape {x.shape}")
    if x.dtype.kind not in "iuf":
        raise InputError(f"values must be numeric, got dtype {x.dtype}")
    one_column = x.ndim == 1
    x = x.astype(xp.float64).reshape(x.shape[0], -1)
    if not bool(xp.isfinite(x).all()):
        raise InputError("values have missing or infinite entries: impute or drop them first")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise InputError(f"k must be an integer of at least 2, got {k!r}")
    if x.shape[0] < k:
        raise InputError(f"k={k} is larger than the {x.shape[0]} records")
    if partition_rows is not None and (isinstance(partition_rows, bool) or not isinstance(
            partition_rows, numbers.Integral) or partition_rows < 2 * k):
        raise InputError(f"partition_rows must be an integer of at least 2k = {2 * k}, got "
                         f"{partition_rows!r}")
    if aggregate not in ("mean", "median"):
        raise InputError(f"aggregate must be 'mean' or 'median', got {aggregate!r}")
    return x, one_column


def _standardized(be, x):
    """``(x - mean) / sd`` per column with the moments every backend computes alike."""
    n = x.shape[0]
    mean = kernels.column_moments(be, x, np.zeros(x.shape[1]), 1) / n
    var = kernels.column_moments(be, x, mean, 2) / max(n - 1, 1)
    sd = np.where(var > 0, np.sqrt(var), 1.0)
    return (x - be.asarray(mean)) / be.asarray(sd)


def _partition_order(be, z, partition_rows):
    """Row order and partition offsets (host): the identity and one partition, or the order
    of the projection on the first principal component cut into about equal partitions."""
    xp = be.xp
    n = z.shape[0]
    if partition_rows is None or partition_rows >= n:
        return xp.arange(n, dtype=xp.int64), np.array([0, n], np.int64)
    sample = be.to_host(z[:PCA_SAMPLE_ROWS])
    _, vectors = np.linalg.eigh(np.cov(sample, rowvar=False).reshape(z.shape[1], -1))
    axis = vectors[:, -1] * (1.0 if vectors[np.argmax(np.abs(vectors[:, -1])), -1] >= 0
                             else -1.0)
    projection = z[:, 0] * float(axis[0])  # column by column: no fused multiply-add anywhere
    for j in range(1, z.shape[1]):
        projection = projection + z[:, j] * float(axis[j])
    parts = max(1, n // partition_rows)
    return (xp.argsort(projection, kind="stable"),
            (np.arange(parts + 1, dtype=np.int64) * n) // parts)


def _group_values(xp, x, groups, sizes, aggregate):
    """Per record, its group's mean or median of each column of ``x`` (``sizes``: the
    groups' record counts)."""
    if aggregate == "median":
        start = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(sizes)[:-1]])
        lower, upper = start + (sizes - 1) // 2, start + sizes // 2
    columns = []
    for j in range(x.shape[1]):
        if aggregate == "mean":
            sums = xp.bincount(groups, weights=x[:, j], minlength=sizes.shape[0])
            columns.append((sums / sizes)[groups])
            continue
        v = x[xp.lexsort(xp.stack([x[:, j], groups.astype(xp.float64)])), j]
        columns.append(((v[lower] + v[upper]) / 2)[groups])
    return xp.stack(columns, axis=1)


def microaggregate(values, k: int, *, partition_rows: int | None = None,
                   aggregate: str = "mean", backend="auto") -> Microaggregation:
    """MDAV microaggregation of ``values`` (n,) or (n, d): groups of ``k`` to ``2k - 1``
    records, each record released as its group's ``aggregate`` ("mean" or "median") of every
    column.  ``partition_rows``: aggregate partitions of about that many records (at least
    ``2k``) on their own (see the module); ``None``: exact MDAV on the whole table.  See
    :class:`Microaggregation`."""
    t0 = time.perf_counter()
    be = get_backend(backend)
    xp = be.xp
    x, one_column = _checked(xp, values, k, partition_rows, aggregate)
    z = _standardized(be, x)
    order, part_ptr = _partition_order(be, z, partition_rows)
    zs = xp.ascontiguousarray(z[order])
    scale = fixed_point_scale(float(xp.abs(zs).max()), int(np.diff(part_ptr).max()))
    qz = xp.rint(zs * scale).astype(xp.int64)
    label = kernels.microaggregate_partitions(be, part_ptr, zs, qz, scale, int(k))
    named = xp.empty_like(label)
    named[order] = order[label]  # the group's seed as a row of the input
    _, groups = xp.unique(named, return_inverse=True)
    groups = groups.reshape(-1).astype(xp.int64)
    sizes = xp.bincount(groups)
    released = _group_values(xp, x, groups, sizes, aggregate)
    within = z - _group_values(xp, z, groups, sizes, "mean")
    sse = float((within * within).sum())
    centered = z - z.mean(axis=0)
    sst = float((centered * centered).sum())
    return Microaggregation(released[:, 0] if one_column else released, groups,
                            int(sizes.shape[0]), int(sizes.min()), int(sizes.max()),
                            sse, sst, sse / sst if sst > 0 else 0.0, len(part_ptr) - 1,
                            time.perf_counter() - t0)
