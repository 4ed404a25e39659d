"""Measures of perturbed data (gpuppdp.perturb.measures) on every backend: hand-computed
examples and the two ends of each scale."""

import numpy as np
import pytest

from gpuppdp.errors import InputError
from gpuppdp.perturb import (information_loss, interval_disclosure, perturbation_measures,
                             propensity_score, record_linkage)


def test_information_loss_by_hand(backend):
    x = np.array([[1.0], [2.0], [3.0]])
    y = np.array([[1.0], [2.0], [4.0]])
    got = information_loss(backend.asarray(x), backend.asarray(y), backend=backend)
    assert got["il1s"] == pytest.approx((1 / 3) / np.sqrt(2))  # sd = 1
    assert got["mean_variation"] == pytest.approx(1 / 6)       # |2 - 7/3| / 2
    assert got["covariance_variation"] == pytest.approx(4 / 3)  # |1 - 7/3| / 1
    assert got["correlation_variation"] == 0.0 and got["eigenvalue_distance"] == 0.0
    assert got["il1s_per_column"] == [pytest.approx((1 / 3) / np.sqrt(2))]
    assert got["correlations"] == {"original": [], "masked": []}  # one column, no pair
    same = information_loss(backend.asarray(x), backend.asarray(x), backend=backend)
    assert all(v == 0 for v in same.values() if isinstance(v, float))
    assert same["il1s_per_column"] == [0.0]


def test_correlations_and_eigenvalues(backend):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2_000, 3))
    x[:, 1] += x[:, 0]
    y = x.copy()
    rng.shuffle(y[:, 1])  # the correlation of columns 0 and 1 destroyed
    got = information_loss(backend.asarray(x), backend.asarray(y), backend=backend)
    r = np.corrcoef(x, rowvar=False)
    assert got["correlation_variation"] == pytest.approx(abs(r[0, 1]) / 3, abs=0.02)
    assert got["eigenvalue_distance"] > 0.3
    assert got["mean_variation"] == pytest.approx(0.0, abs=1e-12)
    pairs = np.triu_indices(3, 1)  # (0, 1), (0, 2), (1, 2)
    assert got["correlations"]["original"] == pytest.approx(r[pairs].tolist())
    assert got["correlations"]["masked"] == \
        pytest.approx(np.corrcoef(y, rowvar=False)[pairs].tolist())
    per = np.abs(x - y).mean(axis=0) / (np.sqrt(2) * x.std(axis=0, ddof=1))
    assert got["il1s_per_column"] == pytest.approx(per.tolist())
    assert np.mean(got["il1s_per_column"]) == pytest.approx(got["il1s"])


def test_record_linkage_counts_ties(backend):
    x = np.array([[0.0], [0.0], [5.0], [9.0]])
    got = record_linkage(backend.asarray(x), backend.asarray(x), backend=backend)
    assert got["linkage_rate"] == pytest.approx((0.5 + 0.5 + 1 + 1) / 4)
    far = record_linkage(backend.asarray(x[[2, 3]]), backend.asarray(x[[3, 2]]),
                         backend=backend)
    assert far["linkage_rate"] == 0.0
    rng = np.random.default_rng(2)
    big = rng.normal(size=(3_000, 2))
    sampled = record_linkage(backend.asarray(big), backend.asarray(big + 1e-6),
                             max_records=500, backend=backend)
    assert sampled["linkage_rate"] == 1.0 and sampled["records_linked"] == 500


def test_record_linkage_equals_a_record_by_record_count(backend):
    """Few distinct values (every original point held by many records): each masked record's
    nearest originals and ties counted record by record, with the same squared distance
    ``|a|^2 + |b|^2 - 2 a.b``, give the same rate as the linkage over distinct points."""
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, size=(400, 3)).astype(float)
    y = x + rng.integers(-1, 2, size=x.shape)
    got = record_linkage(backend.asarray(x), backend.asarray(y), backend=backend)
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    zx, zy = (x - mean) / sd, (y - mean) / sd
    norm_x = (zx * zx).sum(axis=1)
    rate = 0.0
    for i in range(len(x)):
        d = (zy[i] * zy[i]).sum() + norm_x - 2.0 * (zx @ zy[i])
        if d[i] == d.min():
            rate += 1.0 / (d == d.min()).sum()
    assert got["linkage_rate"] == pytest.approx(rate / len(x), rel=1e-12)
    assert 0.0 < got["linkage_rate"] < 1.0


def test_interval_disclosure_by_hand(backend):
    x = np.array([[0.0], [10.0]])       # sd = 7.07: the interval is +- 0.354
    y = np.array([[0.1], [12.0]])
    got = interval_disclosure(backend.asarray(x), backend.asarray(y), backend=backend)
    assert got["records_at_risk"] == 0.5 and got["per_column"] == [0.5]


def test_propensity_between_its_ends(backend):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1_000, 2))
    same = propensity_score(backend.asarray(x), backend.asarray(x), backend=backend)
    assert same["propensity_score"] == pytest.approx(0.0, abs=1e-12)
    apart = propensity_score(backend.asarray(x), backend.asarray(x + 6.0), backend=backend)
    assert apart["propensity_score"] > 0.2
    all_of_them = perturbation_measures(backend.asarray(x), backend.asarray(x + 0.01),
                                        backend=backend)
    assert set(all_of_them) == {"utility", "risk"}
    assert all_of_them["risk"]["interval_disclosure"]["records_at_risk"] == 1.0


def test_mismatched_tables_are_refused(backend):
    with pytest.raises(InputError, match="differ in shape"):
        information_loss(backend.asarray(np.zeros((3, 2))), backend.asarray(np.zeros((3, 1))),
                         backend=backend)
    with pytest.raises(InputError, match="missing or infinite"):
        record_linkage(backend.asarray(np.array([1.0, np.nan])),
                       backend.asarray(np.array([1.0, 2.0])), backend=backend)
