"""The level walk in packed codes (``engine.search.packed_walk``, ``kernels.packed``).

* ``field_layout`` gives each QID a field just wide enough for its bottom codes, and refuses
  codes past 63 bits; ``pack`` and ``code_at`` agree with the codes they pack;
* the packed walk's node statistics equal the batched walk's bit for bit -- every field of
  every node, for the loss, precision and discernibility metrics, with and without the lower
  bounds of nodes that are not anonymous, in small and large batches -- and a naive group-by
  of the generalized rows on sampled nodes;
* it is taken only for the problems it judges (no sensitive attribute, classes judged by
  size, ARX's metrics), and the exhaustive search takes it where it can.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numba import njit

from gpuppdp import datasets
from gpuppdp.backend import cpu_backend
from gpuppdp.engine import evaluate
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.engine.search import ExhaustiveSearch, LevelSearch, SamaratiSearch
from gpuppdp.engine.search.packed_walk import PackedWalk
from gpuppdp.kernels.grouping import move_runs_together
from gpuppdp.kernels.packed import WORD_BITS, code_at, field_layout, pack
from gpuppdp.models import DistinctLDiversity, KAnonymity

QIDS = ["sex", "age", "race", "marital-status", "education", "workclass"]


def _evaluator(metric="loss", k=4, limit=0.05, rows=4000, diverse=False, backend=None,
               **metric_options):
    data, hierarchies = datasets.adult()
    sensitive = ["occupation"] if diverse else []
    enc = encode(data.head(rows)[QIDS + sensitive],
                 Schema({c: hierarchies[c] for c in QIDS}, sensitive), backend or cpu_backend(),
                 sensitive[0] if diverse else None)
    models = [KAnonymity(k)] + ([DistinctLDiversity("occupation", 2)] if diverse else [])
    return Evaluator(enc, models, make_metric(metric, **metric_options), limit)


def _assert_same_stats(a, b):
    for name in evaluate._NODE_STATS_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is None and y is None, name
        elif x.dtype.kind == "f":
            np.testing.assert_array_equal(x, y, err_msg=name)  # NaN where NaN, bit for bit
            assert np.array_equal(np.signbit(x), np.signbit(y)), name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)


def test_fields_are_as_wide_as_the_bottom_codes():
    fields = field_layout([2, 74, 5, 1, 16])
    np.testing.assert_array_equal(fields, [[0, 1, 8, 11, 11], [1, 127, 7, 0, 15]])
    np.testing.assert_array_equal(field_layout([1 << 32, 1 << 31]),
                                  [[0, 32], [2**32 - 1, 2**31 - 1]])  # 63 bits: fits
    assert field_layout([1 << 32, 1 << 31, 2]) is None  # 64 bits: past WORD_BITS
    assert WORD_BITS == 63


@njit(cache=False)
def _codes_back(codes, fields, out):
    for c in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[c, j] = code_at(codes, c, j, fields)


def test_pack_and_code_at_round_trip():
    rng = np.random.default_rng(3)
    radix = np.array([2, 100, 7, 1, 300, 5])
    codes = (rng.integers(0, 1 << 20, (500, len(radix))) % radix).astype(np.int16)
    fields = field_layout(radix)
    packed = pack(codes, fields)
    assert packed.dtype == np.int64 and (packed >= 0).all()
    assert len(np.unique(packed)) == len(np.unique(codes, axis=0))
    back = np.empty(codes.shape, np.int64)
    _codes_back(packed, fields, back)
    np.testing.assert_array_equal(back, codes)
    _codes_back(codes, fields, back)  # a table of codes: read as it is
    np.testing.assert_array_equal(back, codes)


def test_runs_move_together_in_order():
    a = np.arange(20, dtype=np.int64)
    b = np.arange(40, dtype=np.int8).reshape(20, 2)
    m = move_runs_together((a, b), np.array([0, 5, 12]), np.array([3, 4, 2]))
    assert m == 9
    np.testing.assert_array_equal(a[:m], [0, 1, 2, 5, 6, 7, 8, 12, 13])
    np.testing.assert_array_equal(b[:m, 1], 2 * a[:m] + 1)


@pytest.mark.parametrize("metric", ["loss", "precision", "discernibility"])
@pytest.mark.parametrize("bounds", [False, True])
@pytest.mark.parametrize("batch_entries", [700, 1 << 20])
def test_packed_walk_equals_the_batched_walk(metric, bounds, batch_entries):
    ev = _evaluator(metric, k=3 if metric == "loss" else 5)
    lattice = Lattice(ev.encoded.heights)
    walk = PackedWalk.of(ev, lattice)
    assert walk is not None
    batched = LatticeOracle(ev, lattice, batch_entries=batch_entries)
    packed = LatticeOracle(ev, lattice, batch_entries=batch_entries)
    _assert_same_stats(batched.evaluate_all(bounds=bounds),
                       packed.evaluate_all(bounds=bounds, walk=walk))
    assert packed.evaluations == batched.evaluations == lattice.size


@pytest.mark.parametrize("metric, options", [
    ("loss", {"gs_factor": 0.3, "attribute_weights": {"age": 1.0}}),
    ("loss", {"gs_factor": 0.8, "attribute_weights": {"sex": 0.1}}),
    ("precision", {"gs_factor": 0.3, "attribute_weights": {"age": 1.0}}),
    ("precision", {"gs_factor": 0.8, "attribute_weights": {"sex": 0.1}}),
    ("aecs", {"gs_factor": 0.2}), ("height", {"attribute_weights": {"age": 2.0}}),
    ("discernibility-monotonic", {}), ("ambiguity", {}),
    ("entropy", {"gs_factor": 0.3, "attribute_weights": {"age": 2.0}}),
    ("entropy-monotonic", {}), ("normalized-entropy", {})])
def test_packed_walk_with_other_metrics_equals_the_batched_walk(metric, options):
    """ARX's metrics with a gs-factor and attribute weights (the loss's sums with the factors,
    from packed codes), AECS, height, monotonic discernibility, ambiguity and the entropy
    metrics (the suppressed records' values counted from packed codes, per thread) walk
    packed, bit for bit as the batched walk judges them."""
    ev = _evaluator(metric, k=3, **options)
    lattice = Lattice(ev.encoded.heights)
    walk = PackedWalk.of(ev, lattice)
    assert walk is not None
    want = LatticeOracle(ev, lattice, batch_entries=700).evaluate_all()
    got = LatticeOracle(ev, lattice, batch_entries=700).evaluate_all(walk=walk)
    _assert_same_stats(want, got)
    assert (got.suppressed > 0).any()  # (suppressed classes charged with the factors)


def test_packed_walk_equals_a_naive_group_by():
    ev = _evaluator(k=5, limit=0.02)
    lattice = Lattice(ev.encoded.heights)
    stats = LatticeOracle(ev, lattice).evaluate_all(walk=PackedWalk.of(ev, lattice))
    data, hierarchies = datasets.adult()
    rows = data.head(4000)
    for g in np.random.default_rng(0).choice(lattice.size, 25, replace=False):
        levels = lattice.levels_of([g])[0]
        generalized = pd.DataFrame({q: hierarchies[q].generalize(rows[q], int(lv))
                                    for q, lv in zip(QIDS, levels)})
        sizes = generalized.groupby(QIDS, sort=False).size().to_numpy()
        small = sizes < 5
        assert stats.entries[g] == len(sizes)
        assert stats.suppressed[g] == sizes[small].sum()
        assert stats.classes[g] == (~small).sum()
        assert stats.anonymous[g] == (sizes[small].sum() <= int(0.02 * 4000))
        assert stats.smallest_class[g] == (sizes[~small].min() if (~small).any() else 0)


def test_only_the_problems_it_judges(backend):
    lattice = Lattice(_evaluator().encoded.heights)
    # the CPU backend only (a GPU, or the CuPy stand-in, walks batched on the device)
    assert (PackedWalk.of(_evaluator(backend=backend), lattice) is None) == \
        (backend.kernels != "cpu")
    assert PackedWalk.of(_evaluator(diverse=True), lattice) is None  # a sensitive attribute
    assert PackedWalk.of(_evaluator("kl"), lattice) is None  # (it reads the rows)


@pytest.mark.parametrize("search, metric", [
    (lambda: ExhaustiveSearch(), "loss"),
    (lambda: LevelSearch(utility_monotonic=False, privacy_monotonic=True), "discernibility"),
    (lambda: SamaratiSearch(monotonic=False), "precision")])
def test_searches_walk_packed(monkeypatch, search, metric):
    """The level-by-level searches take the packed walk (the levels search bottom up, skipping
    nodes) and find what they find without it, with the same node statistics."""
    ev = _evaluator(metric, k=5)
    lattice = Lattice(ev.encoded.heights)
    batches = []
    real = PackedWalk.evaluate

    def counted(self, levels, *args, **kwargs):
        batches.append(len(levels))
        return real(self, levels, *args, **kwargs)

    monkeypatch.setattr(PackedWalk, "evaluate", counted)
    oracle = LatticeOracle(ev, lattice)
    found = search().run(oracle)
    assert 0 < sum(batches) == oracle.evaluations
    monkeypatch.setattr(PackedWalk, "of", classmethod(lambda cls, *a: None))
    again = search().run(LatticeOracle(ev, lattice))
    assert (found.optimum, found.nodes_evaluated) == (again.optimum, again.nodes_evaluated)
    _assert_same_stats(found.details["all_stats"], again.details["all_stats"])


def test_a_source_must_be_a_direct_predecessor():
    ev = _evaluator()
    lattice = Lattice(ev.encoded.heights)
    walk = PackedWalk.of(ev, lattice)
    levels = np.zeros((1, len(QIDS)), np.int64)
    levels[0, :2] = 1  # two levels above the bottom
    out = evaluate.RollupBuffers(ev, 1 << 16, packed=True).take(int(ev.bottom.host_ptr[-1]))[0]
    with pytest.raises(ValueError, match="direct predecessor"):
        walk.evaluate(levels, levels @ lattice.strides, walk.bottom(), np.zeros(1, np.int64),
                      out, True)
