"""The level-by-level lattice walk (``LatticeOracle.evaluate_levels``) and the exhaustive
search built on it.

* Batches written one after another into reused roll-up buffers (``RollupBuffers``) give the
  statistics of every node rolled up alone from the bottom into new arrays, and a set of
  buffers is written over only once no batch in it is read any more;
* the exhaustive search checks the lower bound of anonymous nodes only: theirs are the checked
  bounds bit for bit, the others' the metric's prior bound (the same sums in another order);
* a set of nodes evaluated chained (``LatticeOracle.evaluate_chained``: each from a direct
  predecessor among them) has the statistics of its nodes rolled up alone from the bottom.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest

from gpuppdp import datasets
from gpuppdp.backend import cpu_backend
from gpuppdp.engine import evaluate
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator, LatticeOracle, NodeStats
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.engine.search import ExhaustiveSearch
from gpuppdp.models import DistinctLDiversity, KAnonymity

QIDS = ["sex", "age", "race", "marital-status", "education"]


def _evaluator(metric="loss", diverse=False, rows=3000):
    data, hierarchies = datasets.adult()
    cols = QIDS + (["occupation"] if diverse else [])
    enc = encode(data.head(rows)[cols], Schema({c: hierarchies[c] for c in QIDS},
                                               ["occupation"] if diverse else []),
                 cpu_backend(), "occupation" if diverse else None)
    models = [KAnonymity(4)] + ([DistinctLDiversity("occupation", 2)] if diverse else [])
    return Evaluator(enc, models, make_metric(metric), 0.05)


def _one_by_one(evaluator, lattice) -> NodeStats:
    """Every node rolled up alone from the bottom, into new arrays."""
    levels = lattice.levels_of(np.arange(lattice.size))
    return NodeStats.concatenate([evaluator.evaluate(levels[i:i + 1], evaluator.bottom,
                                                     np.zeros(1, np.int64))[0]
                                  for i in range(lattice.size)])


@pytest.mark.parametrize("diverse", [False, True])
@pytest.mark.parametrize("batch_entries", [50, 3000])
def test_walk_in_reused_buffers_equals_nodes_alone(monkeypatch, diverse, batch_entries):
    evaluator = _evaluator(diverse=diverse)
    lattice = Lattice(evaluator.encoded.heights)
    sets, taken = [], []
    real_take = evaluate.RollupBuffers.take

    def take(self, entries):
        arrays, handle = real_take(self, entries)
        if not any(handle[0] is s for s in sets):
            sets.append(handle[0])
        taken.append(entries)
        return arrays, handle

    monkeypatch.setattr(evaluate.RollupBuffers, "take", take)
    walked = LatticeOracle(evaluator, lattice, batch_entries=batch_entries).evaluate_all()
    want = _one_by_one(evaluator, lattice)
    for name in ("anonymous", "k_anonymous", "suppressed", "classes", "smallest_class", "aecs",
                 "information_loss", "lower_bound", "entries", "height", "levels"):
        np.testing.assert_array_equal(getattr(walked, name), getattr(want, name), err_msg=name)
    # many batches, few sets: each set is written over again and again
    assert len(taken) > 2 * len(sets)
    # the peak: what two levels hold, not what the walk writes
    assert sum(s[0][2].shape[0] for s in sets) < sum(taken)


@pytest.mark.parametrize("diverse", [False, True])
@pytest.mark.parametrize("budget", [40, 1 << 20])
def test_nodes_evaluated_chained_equal_nodes_alone(diverse, budget):
    """Random node sets (some with gaps between heights, some nodes with no predecessor among
    them), KL divergence (whose value does not depend on the classes' order) and the loss's
    verdicts: each node's statistics those of its roll-up alone from the bottom; fewer
    entries touched than from the bottom."""
    evaluator = _evaluator(metric="kl", diverse=diverse)
    lattice = Lattice(evaluator.encoded.heights)
    alone = _one_by_one(evaluator, lattice)
    rng = np.random.default_rng(budget + diverse)
    for share in (0.1, 0.5, 1.0):
        ids = rng.permutation(lattice.size)[:max(2, int(share * lattice.size))]
        oracle = LatticeOracle(evaluator, lattice)
        rolled = []
        real = evaluator.evaluate

        def evaluate(levels, source, source_index, out=None, bounds=True):
            rolled.append(int(np.diff(source.host_ptr)[source_index].sum()))
            return real(levels, source, source_index, out, bounds)

        evaluator.evaluate = evaluate
        try:
            got = oracle.evaluate_chained(lattice.levels_of(ids), budget)
        finally:
            del evaluator.evaluate
        want = alone.take(ids)
        for name in ("anonymous", "k_anonymous", "suppressed", "classes", "smallest_class",
                     "aecs", "information_loss", "entries", "height", "levels"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name),
                                          err_msg=f"{name} {share}")
        assert oracle.evaluations == len(ids)
        if share == 1.0:  # every node but the bottom has its predecessors among them
            assert sum(rolled) < evaluator.bottom.rows * len(ids) // 2


def test_buffers_are_not_lent_off_the_cpu():
    evaluator = _evaluator()
    evaluator.backend = type("Other", (), {"kernels": "cuda"})()
    assert evaluate.RollupBuffers(evaluator, 100).take(10) == (None, None)


@pytest.mark.parametrize("metric", ["loss", "precision", "discernibility"])
def test_exhaustive_checks_the_bounds_of_anonymous_nodes_only(metric):
    evaluator = _evaluator(metric)
    lattice = Lattice(evaluator.encoded.heights)
    checked = LatticeOracle(evaluator, lattice).evaluate_all()
    found = ExhaustiveSearch().run(LatticeOracle(evaluator, lattice))
    stats = found.details["all_stats"]
    anonymous = stats.anonymous
    assert anonymous.any() and (~anonymous).any()
    np.testing.assert_array_equal(stats.lower_bound[anonymous], checked.lower_bound[anonymous])
    np.testing.assert_array_equal(stats.information_loss, checked.information_loss)
    assert not np.isnan(stats.lower_bound).any()
    prior = evaluator.metric.prior_bound(evaluator.bottom)
    others = ~anonymous
    if metric == "loss":  # a prior bound: the same sums, added in another order
        np.testing.assert_array_equal(stats.lower_bound[others],
                                      prior(stats.levels[others]))
        np.testing.assert_allclose(stats.lower_bound[others], checked.lower_bound[others],
                                   rtol=1e-12)
    else:  # bounds cheap to check are all checked
        np.testing.assert_array_equal(stats.lower_bound, checked.lower_bound)


@pytest.mark.parametrize("seed", range(6))
def test_a_levels_open_nodes_are_those_a_plain_reading_keeps(seed):
    """The top-down level search's pass over one level (``_open_nodes``) against a plain
    reading of it: the level's nodes (``level_nodes``), less those evaluated, those with a
    successor tagged or not anonymous (then tagged themselves) and those whose prior bound
    (the factors' product less one) exceeds the limit."""
    from gpuppdp.engine.prior_bound import FactorBound
    from gpuppdp.engine.search.levels import _open_nodes
    from gpuppdp.engine.solution_space import level_nodes

    rng = np.random.default_rng(seed)
    lat = Lattice(rng.integers(0, 4, size=rng.integers(2, 6)))
    assert lat.level_sizes.tolist() == [len(level_nodes(lat.max_levels, h))
                                        for h in range(lat.max_height + 1)]
    tagged, not_anonymous, done = (rng.random(lat.size) < p for p in (0.1, 0.3, 0.2))
    factors = np.ascontiguousarray(1 + rng.random((lat.n_attributes, 4)))
    bound = FactorBound(factors)
    out = np.empty((lat.size, lat.n_attributes), np.int64), np.empty(lat.size, np.int64)
    for h in range(lat.max_height + 1):
        levels = level_nodes(lat.max_levels, h)
        ids = levels @ lat.strides
        limit = float(np.median(bound(levels)))
        for tag in (False, True):
            for table in (factors, np.empty((0, 0))):
                expected_tags = tagged.copy()
                hit = np.zeros(len(ids), bool)
                if tag:
                    for j in range(lat.n_attributes):
                        up = levels[:, j] < lat.max_levels[j]
                        succ = np.where(up, ids + lat.strides[j], 0)
                        hit |= up & (tagged[succ] | not_anonymous[succ])
                    expected_tags[ids[hit]] = True
                keep = ~hit & ~done[ids]
                if len(table):  # multiplied in attribute order, as the kernel does
                    keep &= np.array([functools.reduce(operator.mul, factors[
                        np.arange(lat.n_attributes), row], 1.0) - 1.0 <= limit
                        for row in levels])
                marks = tagged.copy()
                n = _open_nodes(lat.max_levels, h, lat.strides, table, limit, marks,
                                not_anonymous, done, tag, *out)
                assert out[1][:n].tolist() == ids[keep].tolist()
                assert (out[0][:n] == levels[keep]).all()
                assert (marks == expected_tags).all()


@pytest.mark.parametrize("seed", range(4))
def test_shared_predecessors_are_those_counted_plainly(seed):
    """The predecessor each node rolls up through (``_shared_predecessors``): the direct
    predecessor the most nodes of the level share, the lowest attribute on ties, against a
    count with ``np.unique``; the count buffer is left zeroed."""
    from gpuppdp.engine.search.levels import _shared_predecessors
    from gpuppdp.engine.solution_space import level_nodes

    rng = np.random.default_rng(seed)
    lat = Lattice(rng.integers(1, 4, size=5))
    h = lat.max_height // 2
    levels = level_nodes(lat.max_levels, h)
    levels = levels[rng.random(len(levels)) < 0.6]
    ids = levels @ lat.strides
    candidates = np.where(levels > 0, ids[:, None] - lat.strides[None, :], -1)
    values, counts = np.unique(candidates[candidates >= 0], return_counts=True)
    shared = np.array([[counts[np.searchsorted(values, c)] if c >= 0 else -1 for c in row]
                       for row in candidates])
    j = np.argmax(shared, axis=1)
    buffer = np.zeros(lat.size, np.int32)
    pred_ids, pred_levels = _shared_predecessors(levels, ids, lat.strides, buffer)
    assert pred_ids.tolist() == candidates[np.arange(len(ids)), j].tolist()
    assert (pred_levels == levels - np.eye(lat.n_attributes, dtype=np.int64)[j]).all()
    assert not buffer.any()


@pytest.mark.parametrize("metric, batch_entries, bounds", [
    ("loss", 40, True), ("loss", 3000, True), ("loss", 3000, False),
    ("discernibility", 3000, True)])
def test_a_gpu_walk_of_k_anonymity_equals_the_cpus(metric, batch_entries, bounds):
    """On the strict CuPy stand-in (a GPU's code path, Numba's simulator) k-anonymity without
    a sensitive attribute takes the evaluation waited for once per batch: the roll-up's
    arrays longer than its sets (small batches: the simulated kernel leaves rows unwritten),
    the node totals and the loss sums on them (``bounds=False``: of the anonymous nodes
    only, chosen on the device).  Every node's statistics equal the CPU's."""
    from gpuppdp.testing import strict_backend

    data, hierarchies = datasets.adult()
    results = {}
    for name, backend in (("cpu", cpu_backend()), ("strict", strict_backend())):
        qids = QIDS[:3] if batch_entries < 100 else QIDS  # small batches: a small lattice
        enc = encode(data.head(200)[qids], Schema({c: hierarchies[c] for c in qids}, []),
                     backend, None)
        evaluator = Evaluator(enc, [KAnonymity(3)], make_metric(metric), 0.05)
        assert evaluator._at_once == (name == "strict")
        oracle = LatticeOracle(evaluator, Lattice(enc.heights), batch_entries=batch_entries)
        results[name] = oracle.evaluate_all(bounds=bounds)
    cpu, strict = results["cpu"], results["strict"]
    for field in ("anonymous", "k_anonymous", "suppressed", "classes", "smallest_class",
                  "entries"):
        np.testing.assert_array_equal(getattr(strict, field), getattr(cpu, field), field)
    for field in ("information_loss", "lower_bound", "aecs"):
        np.testing.assert_allclose(getattr(strict, field), getattr(cpu, field), rtol=1e-12,
                                   err_msg=field)
    if not bounds:  # the bounds of the nodes not anonymous are not computed
        assert np.isnan(strict.lower_bound[~strict.anonymous]).all()
