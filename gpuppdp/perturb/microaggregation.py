"""Microaggregation of numeric (and, by rank, ordinal) attributes: groups of at least ``k``
records, each record released as its group's mean (or median).

Three methods, all on the standardized columns (mean 0, standard deviation 1; a constant
column stays 0): MDAV (Domingo-Ferrer and Mateo-Sanz 2002; groups of ``k``, the last one
``k`` to ``2k - 1``), V-MDAV (Solanas and Martinez-Balleste 2006; groups of ``k`` to
``2k - 1`` that follow the data, :mod:`gpuppdp.kernels.vmdav`) and, for one column, the
optimal grouping (Hansen and Mukherjee 2003; :mod:`gpuppdp.kernels.univariate`).  MDAV and
V-MDAV run exactly on the whole table by default.  For census
sizes, ``partition_rows`` first sorts the records by their projection on the first principal
component (of the first :data:`PCA_SAMPLE_ROWS` records) and cuts that order into consecutive
partitions of about that many records, each aggregated on its own -- in parallel, a block per
partition on a GPU -- at the price of some within-group variance (the ``information_loss``
says how much).  The groups are the same on the CPU and on a GPU (:mod:`gpuppdp.kernels.mdav`);
released means agree to rounding.  Ordinal columns (``ordinal``: their values are ranks)
release the group's lower median, always a value of the column.  The information loss is
``SSE / SST`` on the standardized columns (Domingo-Ferrer and Mateo-Sanz 2002, section 2).
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

__all__ = ["Microaggregation", "microaggregate", "PCA_SAMPLE_ROWS", "METHODS", "VMDAV_GAMMA"]

#: records whose covariance gives the projection that orders the records into partitions
PCA_SAMPLE_ROWS = 100_000
#: the grouping methods of :func:`microaggregate`
METHODS = ("mdav", "vmdav", "optimal")
#: V-MDAV's gain factor by default: Solanas and Martinez-Balleste's (2006) value for scattered
#: data (larger values extend groups more readily, for clustered data)
VMDAV_GAMMA = 0.2


@dataclass
class Microaggregation:
    """The result of :func:`microaggregate`.

    ``values``: the released values (n, d) or (n,), float64, on the backend; ``groups``: each
    record's group, ``0..n_groups-1`` (device int64); ``sse``/``sst``: within-group and total
    sums of squares of the standardized columns; ``information_loss``: ``sse / sst``;
    ``partitions``: how many partitions the method ran on; ``method``: "mdav", "vmdav" or
    "optimal"; ``seconds``: wall time."""

    values: Array
    groups: Array
    n_groups: int
    smallest_group: int
    largest_group: int
    sse: float
    sst: float
    information_loss: float
    partitions: int
    method: str
    seconds: float

    def summary(self) -> dict:
        """The figures (everything but the arrays), JSON-ready."""
        return {name: getattr(self, name) for name in (
            "method", "n_groups", "smallest_group", "largest_group", "sse", "sst",
            "information_loss", "partitions", "seconds")}


def _checked(xp, values, k, partition_rows, aggregate, method, gamma, ordinal):
    """``values`` as a float64 (n, d) array, checked with the parameters, whether it was one
    column, the gain factor and the ordinal columns' indices."""
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
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "optimal" and x.shape[1] != 1:
        raise InputError(f"method='optimal' is univariate: values must be one column, got "
                         f"{x.shape[1]}")
    if method == "optimal" and partition_rows is not None:
        raise InputError("partition_rows is for mdav and vmdav: method='optimal' groups the "
                         "whole column in O(n k)")
    if gamma is not None and method != "vmdav":
        raise InputError(f"gamma is V-MDAV's gain factor: give it with method='vmdav' (method "
                         f"is {method!r})")
    gamma = VMDAV_GAMMA if gamma is None else gamma
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma > 0 or \
            not np.isfinite(gamma):
        raise InputError(f"gamma must be a positive number, got {gamma!r}")
    columns = list(ordinal)
    bad = [j for j in columns if isinstance(j, bool) or not isinstance(j, numbers.Integral)
           or not 0 <= j < x.shape[1]]
    if bad:
        raise InputError(f"ordinal must list column indices in 0..{x.shape[1] - 1}, got "
                         f"{bad[0]!r}")
    return x, one_column, float(gamma), sorted(set(int(j) for j in columns))


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


def _group_values(xp, x, groups, sizes, aggregates):
    """Per record, its group's value of each column ``j`` of ``x``: ``aggregates[j]`` "mean",
    "median" or "lower median" (``sizes``: the groups' record counts)."""
    start = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(sizes)[:-1]])
    lower, upper = start + (sizes - 1) // 2, start + sizes // 2
    columns = []
    for j, aggregate in enumerate(aggregates):
        if aggregate == "mean":
            sums = xp.bincount(groups, weights=x[:, j], minlength=sizes.shape[0])
            columns.append((sums / sizes)[groups])
            continue
        v = x[xp.lexsort(xp.stack([x[:, j], groups.astype(xp.float64)])), j]
        columns.append((v[lower] if aggregate == "lower median" else
                        (v[lower] + v[upper]) / 2)[groups])
    return xp.stack(columns, axis=1)


def microaggregate(values, k: int, *, method: str = "mdav", gamma: float | None = None,
                   partition_rows: int | None = None, aggregate: str = "mean",
                   ordinal=(), backend="auto") -> Microaggregation:
    """Microaggregation of ``values`` (n,) or (n, d): groups of at least ``k`` records, each
    record released as its group's ``aggregate`` ("mean" or "median") of every column.

    ``method``: "mdav" (groups of ``k``, the last ``k`` to ``2k - 1``), "vmdav" (``k`` to
    ``2k - 1``, extended while a record is nearer the group than ``gamma`` times its
    distance to the other records; ``gamma`` default :data:`VMDAV_GAMMA`; fewer than ``k``
    records left at the end join their nearest groups) or "optimal" (one column: the least
    SSE over runs of ``k`` to ``2k - 1`` sorted values).  ``partition_rows`` (mdav, vmdav):
    aggregate partitions of about that many records (at least ``2k``) on their own (see the
    module); ``None``: the whole table.  ``ordinal``: indices of columns whose values are
    ranks, released as the group's lower median (a rank of the group, never between two).
    See :class:`Microaggregation`."""
    t0 = time.perf_counter()
    be = get_backend(backend)
    xp = be.xp
    x, one_column, gamma, ordinal = _checked(xp, values, k, partition_rows, aggregate, method,
                                             gamma, ordinal)
    z = _standardized(be, x)
    if method == "optimal":
        order = xp.argsort(z[:, 0], kind="stable")
        part_ptr = np.array([0, x.shape[0]], np.int64)
        label = kernels.optimal_univariate(be, z[order, 0], int(k))
    else:
        order, part_ptr = _partition_order(be, z, partition_rows)
        zs = xp.ascontiguousarray(z[order])
        scale = fixed_point_scale(float(xp.abs(zs).max()), int(np.diff(part_ptr).max()))
        qz = xp.rint(zs * scale).astype(xp.int64)
        label = kernels.microaggregate_partitions(be, part_ptr, zs, qz, scale, int(k), method,
                                                  gamma)
    named = xp.empty_like(label)
    named[order] = order[label]  # the group's seed as a row of the input
    _, groups = xp.unique(named, return_inverse=True)
    groups = groups.reshape(-1).astype(xp.int64)
    sizes = xp.bincount(groups)
    released = _group_values(xp, x, groups, sizes, [
        "lower median" if j in ordinal else aggregate for j in range(x.shape[1])])
    within = z - _group_values(xp, z, groups, sizes, ["mean"] * z.shape[1])
    sse = float((within * within).sum())
    centered = z - z.mean(axis=0)
    sst = float((centered * centered).sum())
    return Microaggregation(released[:, 0] if one_column else released, groups,
                            int(sizes.shape[0]), int(sizes.min()), int(sizes.max()),
                            sse, sst, sse / sst if sst > 0 else 0.0, len(part_ptr) - 1,
                            method, time.perf_counter() - t0)
