"""How close a synthetic table is to the real one, and how close to its records.

:func:`evaluate_synthetic` compares two tables over the same columns (categorical, or numeric
cut into the same bins), both encoded on the union of their values:

* **marginals** -- the total variation distance ``½ Σ |p - q|`` of every 1-way and 2-way
  marginal (mean and max; MST's and AIM's measure, McKenna et al. 2021, 2022), counted on the
  backend with :func:`~gpuppdp.dp.synthesis.marginal_counts`;
* **queries** -- a workload of random counting queries (a conjunction over ``query_columns``
  random columns, each of a random half of its values), the absolute error of the share of
  records each matches (mean and max);
* **propensity** -- :func:`~gpuppdp.perturb.measures.propensity_score` (Woo et al. 2009) on
  equal-size random samples of both tables' codes (numbers: the logistic model sees each
  column's code, its square and the pairwise products, so a nominal column is seen through
  an arbitrary order of its values: a coarse check);
* **distance to the closest record** -- the share of synthetic records identical to a real
  one (all of them, :class:`~gpuppdp.kernels.groupby.KeySet`), and the quantiles of the
  Hamming distance from synthetic records (a random sample) to the nearest real one.

The workload and the samples use a seeded NumPy generator: the evaluation reads the real
data without noise, so it is for the data's owner, not for release.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import get_backend
from ..core.codes import encode_column
from ..errors import InputError
from ..kernels.groupby import KeySet
from ..perturb.measures import propensity_score
from ..validation import check_int, format_values
from .synthesis import _bin_codes, _check_bins, frequency_set, marginal_counts

__all__ = ["evaluate_synthetic", "marginal_distances"]

_BLOCK = 1 << 24  # entries of one block of the query and distance matrices


def _encode_pair(real, synthetic, cols, bins) -> tuple:
    """Both tables' codes (host int64) on the union of their values, and the radices."""
    rc, sc, radix = [], [], []
    for col in cols:
        if col in bins:
            a, b = _bin_codes(real[col], bins[col]), _bin_codes(synthetic[col], bins[col])
            size = bins[col][2]
            a, b = np.where(a < 0, size, a), np.where(b < 0, size, b)  # missing: a value
            size += 1
        else:
            both = pd.concat([real[col], synthetic[col]], ignore_index=True).astype(str)
            codes, uniques = encode_column(both)
            a, b, size = codes[:len(real)], codes[len(real):], len(uniques)
        rc.append(a.astype(np.int64))
        sc.append(b.astype(np.int64))
        radix.append(max(int(size), 1))
    return np.stack(rc, axis=1), np.stack(sc, axis=1), np.array(radix, dtype=np.int64)


def marginal_distances(be, real_rows, real_counts, syn_rows, syn_counts, radix,
                       cliques) -> np.ndarray:
    """Total variation distance of each clique's marginal between two frequency sets."""
    xp = be.xp
    x, off = marginal_counts(xp, real_rows, real_counts, radix, cliques)
    y, _ = marginal_counts(xp, syn_rows, syn_counts, radix, cliques)
    nx = max(float(be.scalar(real_counts.sum())), 1.0)
    ny = max(float(be.scalar(syn_counts.sum())), 1.0)
    diff = xp.abs(x / nx - y / ny)
    clique_of = np.repeat(np.arange(len(cliques)), np.diff(off))
    tv = xp.bincount(be.asarray(clique_of), weights=diff, minlength=len(cliques))
    return 0.5 * be.to_host(tv).astype(np.float64)


def _query_answers(be, rows, counts, columns, masks) -> np.ndarray:
    """The share of records each query matches: ``masks[q, k]`` (bool over the values of
    column ``columns[q, k]``), all ``k`` at once, in blocks of queries."""
    xp, g = be.xp, int(rows.shape[0])
    total = max(float(be.scalar(counts.sum())), 1.0)
    w = counts.astype(xp.float64)
    out = []
    step = max(1, _BLOCK // max(g, 1))
    t = rows.T  # (d, G)
    for lo in range(0, columns.shape[0], step):
        cq, mq = columns[lo:lo + step], masks[lo:lo + step]
        match = xp.ones((cq.shape[0], g), dtype=xp.bool_)
        for k in range(cq.shape[1]):
            match &= xp.take_along_axis(mq[:, k, :], t[cq[:, k]], axis=1)
        out.append(match.astype(xp.float64) @ w / total)
    return np.concatenate([be.to_host(o) for o in out])


def _nearest_hamming(be, sample, real_rows) -> np.ndarray:
    """Hamming distance from each sampled row to the nearest of ``real_rows``, in blocks."""
    g = int(real_rows.shape[0])
    step = max(1, _BLOCK // max(g * int(real_rows.shape[1]), 1))
    out = []
    for lo in range(0, int(sample.shape[0]), step):
        block = sample[lo:lo + step]
        dist = (block[:, None, :] != real_rows[None, :, :]).sum(axis=2)
        out.append(dist.min(axis=1))
    return np.concatenate([be.to_host(o) for o in out])


def evaluate_synthetic(real: pd.DataFrame, synthetic: pd.DataFrame,
                       columns: Sequence[str] | None = None, *,
                       bins: Mapping[str, tuple] | None = None, queries: int = 1000,
                       query_columns: int = 3, distance_records: int = 2000,
                       propensity_records: int = 5000, seed: int = 0,
                       backend="auto") -> dict:
    """Measures of a synthetic table against the real one (module docstring).

    Parameters
    ----------
    real, synthetic : DataFrame
    columns : sequence of str, optional
        Default: every column of ``real`` (all must be in ``synthetic``).
    bins : mapping column -> (lower, upper, count), optional
        Numeric columns compared on these bins (as :class:`~.synthesis.MSTSynthesizer`).
    queries, query_columns : int
        The workload: this many random conjunctions over this many columns.
    distance_records, propensity_records : int
        Sample sizes of the distance to the closest record and of the propensity score.
    seed : int
        The workload's and the samples' generator.
    backend : {"auto", "cpu", "gpu"} or Backend

    Returns
    -------
    dict
        ``one_way`` and ``two_way`` (``mean``, ``max`` total variation and ``per_clique``),
        ``queries`` (``mean_abs_error``, ``max_abs_error``, ``count``, ``columns``),
        ``propensity`` (``propensity_score``, ``records``), ``closest_record``
        (``identical_share``, ``hamming_quantiles`` at 5, 25, 50 %, ``records``).
    """
    for name, t in (("real", real), ("synthetic", synthetic)):
        if not isinstance(t, pd.DataFrame) or len(t) == 0:
            raise InputError(f"{name} must be a non-empty pandas DataFrame")
    cols = list(real.columns) if columns is None else list(columns)
    missing = [c for c in cols if c not in real.columns or c not in synthetic.columns]
    if missing or not cols:
        raise InputError(f"columns {format_values(missing)} are not in both tables")
    queries = check_int("queries", queries, 0)
    query_columns = check_int("query_columns", query_columns, 1)
    distance_records = check_int("distance_records", distance_records, 1)
    propensity_records = check_int("propensity_records", propensity_records, 2)
    be = get_backend(backend)
    xp = be.xp
    bins = _check_bins(bins, cols)
    rc, sc, radix = _encode_pair(real, synthetic, cols, bins)
    rng = np.random.default_rng(seed)
    r_rows, r_counts = frequency_set(xp, be.asarray(rc), radix)
    s_rows, s_counts = frequency_set(xp, be.asarray(sc), radix)
    d = len(cols)
    pairs = [(a, b) for a in range(d) for b in range(a + 1, d)]
    one = marginal_distances(be, r_rows, r_counts, s_rows, s_counts, radix,
                             [(j,) for j in range(d)])
    two = marginal_distances(be, r_rows, r_counts, s_rows, s_counts, radix, pairs)
    out = {"columns": cols,
           "one_way": {"mean": float(one.mean()), "max": float(one.max()),
                       "per_clique": {cols[j]: float(v) for j, v in enumerate(one)}},
           "two_way": None if not pairs else {
               "mean": float(two.mean()), "max": float(two.max()),
               "per_clique": {f"{cols[a]},{cols[b]}": float(v)
                              for (a, b), v in zip(pairs, two)}}}
    width = min(query_columns, d)
    if queries:
        qcols = np.argsort(rng.random((queries, d)), axis=1)[:, :width]
        masks = rng.random((queries, width, int(radix.max()))) < 0.5
        qc, qm = be.asarray(qcols), be.asarray(masks)
        err = np.abs(_query_answers(be, r_rows, r_counts, qc, qm)
                     - _query_answers(be, s_rows, s_counts, qc, qm))
        out["queries"] = {"mean_abs_error": float(err.mean()), "max_abs_error": float(err.max()),
                          "count": queries, "columns": width}
    m = min(propensity_records, len(rc), len(sc))
    if m >= 2:
        a = rc[rng.choice(len(rc), m, replace=False)].astype(np.float64)
        b = sc[rng.choice(len(sc), m, replace=False)].astype(np.float64)
        out["propensity"] = {**propensity_score(a, b, backend=be), "records": m}
    identical = KeySet(xp, r_rows, radix).contains(be.asarray(sc))
    sample = sc[rng.choice(len(sc), min(distance_records, len(sc)), replace=False)]
    near = _nearest_hamming(be, be.asarray(sample), r_rows)
    out["closest_record"] = {
        "identical_share": float(be.scalar(identical.mean())),
        "hamming_quantiles": {q: float(np.quantile(near, q / 100)) for q in (5, 25, 50)},
        "hamming_mean": float(near.mean()), "records": int(sample.shape[0])}
    return out
