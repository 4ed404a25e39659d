"""Re-identification risk with survey (sampling) weights: each record stands for ``w``
records of the population.

* :func:`individual_risk` / :func:`survey_risk` -- the weighted class sizes ``F_k`` (the
  records of the population each class stands for, sdcMicro's ``freqCalc``) and Benedetti &
  Franconi's individual risk (sdcMicro's ``indivRisk``; Franconi & Polettini 2004), summed to
  the expected number of re-identifications;
* :func:`individual_risks` -- each record's individual risk, from a table and its weights.

:func:`gpuppdp.analysis.risk.risk_report` adds them to its report (``sampling_weights=``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..errors import InputError
from .qid_classes import (RISK_THRESHOLDS, _check_qids, _classes_encoded, _threshold_key,
                          encode_columns)

__all__ = ["individual_risk", "survey_risk", "individual_risks"]


def _sampling_weights(data: pd.DataFrame, sampling_weights) -> np.ndarray:
    """The survey weights of ``data``'s rows (host float64): a column name or one number
    per row, each finite and positive (a record stands for ``w`` records of the
    population)."""
    if isinstance(sampling_weights, str):
        if sampling_weights not in data.columns:
            raise InputError(f"sampling_weights: no column {sampling_weights!r} in the table")
        values = data[sampling_weights]
        name = f"sampling_weights column {sampling_weights!r}"
    else:
        values = sampling_weights
        name = "sampling_weights"
    w = pd.to_numeric(pd.Series(np.asarray(values).reshape(-1)), errors="coerce") \
        .to_numpy(dtype=np.float64)
    if len(w) != len(data):
        raise InputError(f"{name}: one weight per row is needed ({len(data)}), got {len(w)}")
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        error = InputError(f"{name}: weights must be positive numbers, got "
                           f"{np.asarray(values).reshape(-1)[i].item()!r} at row {i}")
        error.row = i
        raise error
    return w


def individual_risk(sizes, weight_sums, backend: Backend | str = "cpu"):
    """Benedetti & Franconi's individual risk of the records of each class (device float64),
    as sdcMicro's ``indivRisk(method="approx")`` computes it (Franconi & Polettini 2004).

    ``sizes`` ``f_k`` are the sample class sizes, ``weight_sums`` ``F_k`` the sums of the
    records' survey weights (``F_k >= f_k``).  With ``p = f_k / F_k``: ``p / (1-p) *
    log(1/p)`` for ``f_k = 1``, ``p/(1-p) - (p/(1-p))**2 * log(1/p)`` for ``f_k = 2``,
    ``p / (f_k - (1-p))`` above, and ``1 / f_k`` where ``F_k = f_k`` (a class that is its
    whole population)."""
    backend = get_backend(backend)
    xp = backend.xp
    f = backend.asarray(sizes).astype(xp.float64).reshape(-1)
    big = backend.asarray(weight_sums).astype(xp.float64).reshape(-1)
    if f.shape != big.shape:
        raise InputError(f"weight_sums: one sum per class is needed ({f.shape[0]}), got "
                         f"{big.shape[0]}")
    short = int(backend.scalar(xp.count_nonzero(big < f)))
    if short:
        raise InputError(f"weight_sums: {short} class(es) weigh less than their records "
                         "(F_k < f_k); survey weights count the population records each "
                         "record stands for, at least itself")
    whole = big == f
    p = xp.where(whole, 0.5, f / big)                # 0.5: any value in (0, 1), replaced below
    odds = p / (1.0 - p)
    log_inv = -xp.log(p)
    risk = xp.where(f == 1, odds * log_inv,
                    xp.where(f == 2, odds - odds * odds * log_inv, p / (f - (1.0 - p))))
    return xp.where(whole, 1.0 / f, risk)


def survey_risk(sizes, weight_sums, backend: Backend | str = "cpu",
                thresholds: Sequence[float] = RISK_THRESHOLDS) -> dict:
    """Weighted frequencies and individual risk of the classes (``sizes`` ``f_k`` and survey
    ``weight_sums`` ``F_k``, see :func:`individual_risk`): the estimated population ``sum
    F_k``, the sample uniques' weight, the expected number of re-identifications ``sum_k f_k
    r_k`` (sdcMicro's global risk ``ER``), its share of the records, the highest individual
    risk and the share of records whose risk exceeds each threshold."""
    backend = get_backend(backend)
    xp = backend.xp
    f = backend.asarray(sizes).astype(xp.float64).reshape(-1)
    big = backend.asarray(weight_sums).astype(xp.float64).reshape(-1)
    rk = individual_risk(f, big, backend)
    ts = [float(t) for t in thresholds]
    parts = [f.sum(), big.sum(), (f * rk).sum(), rk.max(), big.min(),
             xp.where(f == 1, big, 0.0).sum()]
    parts += [xp.where(rk > t, f, 0.0).sum() for t in ts]
    host = backend.to_host(xp.stack(parts))
    n = float(host[0])
    return {"estimated_population": float(host[1]),
            "expected_reidentifications": float(host[2]),
            "global_risk": float(host[2]) / n,
            "highest_individual_risk": float(host[3]),
            "smallest_class_weight": float(host[4]),
            "sample_uniques_weight": float(host[5]),
            "records_at_risk": {_threshold_key(t): float(v) / n for t, v in zip(ts, host[6:])}}


def _weighted_classes(data, qids, weights, backend: Backend):
    """``(ids, sizes, weight_sums)`` of the classes of ``data``'s QIDs (device)."""
    xp = backend.xp
    codes, cards = encode_columns(data, qids, backend)
    ids, sizes = _classes_encoded(codes, cards, backend)
    sums = xp.bincount(ids, weights=backend.asarray(weights), minlength=int(sizes.shape[0]))
    return ids, sizes, sums


def individual_risks(data: pd.DataFrame, quasi_identifiers: Sequence[str], sampling_weights,
                     backend: Backend | str = "cpu") -> np.ndarray:
    """Each record's individual risk (host float64, :func:`individual_risk`) given its
    ``sampling_weights`` (a column name or one weight per row)."""
    backend = get_backend(backend)
    qids = _check_qids(data, quasi_identifiers)
    ids, sizes, sums = _weighted_classes(data, qids, _sampling_weights(data, sampling_weights),
                                         backend)
    return backend.to_host(individual_risk(sizes, sums, backend)[ids])
