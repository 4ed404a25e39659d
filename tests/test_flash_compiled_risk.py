"""The risk-based models on the compiled Flash (:mod:`gpuppdp.engine.search.flash_risk`): the
classes one node's average risk, sample uniqueness or population uniqueness (each estimator,
either side of Dankar's 10 % sampling fraction) suppresses equal those of
:meth:`gpuppdp.models.risk.RiskModel.suppress` on every node of random tables (ties of equal
size broken by the loss's order, the counted and the heap-sorted sizes, classes all ``*``),
and searches give the Python traversal's optimum, checked nodes and node statistics.
(ARX's own optima on Adult: ``tests/test_risk_models_arx.py``, now on the compiled path.)"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpuppdp.backend import cpu_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.engine.search import flash_compiled
from gpuppdp.engine.search.flash_risk import RISK_WORK_ROWS, suppress_by_risk
from gpuppdp.kernels.uniqueness import estimator_work
from gpuppdp.models import (AverageReidentificationRisk, DistinctLDiversity, KAnonymity,
                            PopulationUniqueness, SampleUniqueness)
from gpuppdp.models.population import KMap
from tests.test_flash_compiled import _fit, _table, assert_same_search

#: risk-based models (with the k-anonymity of the search, if any)
RISK_MODELS = {
    "average 0.3": (None, lambda: [AverageReidentificationRisk(0.3)]),
    "average 0.1": (None, lambda: [AverageReidentificationRisk(0.1)]),
    "average 0.2, highest 0.5, 10 %": (None, lambda: [AverageReidentificationRisk(
        0.2, highest_risk=0.5, records_at_risk=0.1)]),
    "average 0.3, highest 0.1, 30 %": (None, lambda: [AverageReidentificationRisk(
        0.3, highest_risk=0.1, records_at_risk=0.3)]),
    "uniques 0.02": (None, lambda: [SampleUniqueness(0.02)]),
    "uniques 0.1": (None, lambda: [SampleUniqueness(0.1)]),
    "k2 + average 0.2": (2, lambda: [AverageReidentificationRisk(0.2)]),
    "k3 + uniques 0.05": (3, lambda: [SampleUniqueness(0.05)]),
    "population pitman 0.05": (None, lambda: [PopulationUniqueness(
        0.05, model="pitman", population_size=2000)]),
    "population zayatz 0.1": (None, lambda: [PopulationUniqueness(
        0.1, model="zayatz", population_size=2000)]),
    "population snb 0.05": (None, lambda: [PopulationUniqueness(
        0.05, model="snb", population_size=1000)]),
    "population dankar 0.05, usa": (None, lambda: [PopulationUniqueness(
        0.05, model="dankar", region="usa")]),
    "population dankar 0.02": (None, lambda: [PopulationUniqueness(
        0.02, model="dankar", population_size=1500)]),
    "k2 + population zayatz 0.02": (2, lambda: [PopulationUniqueness(
        0.02, model="zayatz", population_size=2000)]),
}


def _node_outliers(encoded, models, metric, limit, nodes):
    """Per node of ``nodes`` ``(python, compiled, by first appearance)``: the classes
    suppressed by :meth:`Evaluator.outliers` (all nodes in one batch) and by
    :func:`suppress_by_risk` after k-anonymity's own, ranking ties by the loss's order (with the
    loss metric) and by first appearance alone."""
    ev = Evaluator(encoded, models, make_metric(metric), limit)
    nodes = np.asarray(nodes, np.int64)
    classes = ev._classes(ev.rollup(nodes, ev.bottom, np.zeros(len(nodes), np.int64)))
    python = np.asarray(ev.outliers(classes)[0])
    size, codes = np.asarray(classes.size, np.int64), np.ascontiguousarray(classes.codes)
    (params, *_), (star_off, stars) = flash_compiled._model_parameters(ev)
    for b, levels in enumerate(nodes):
        lo, hi = int(classes.host_ptr[b]), int(classes.host_ptr[b + 1])
        out = []
        for keyed in (True, False):
            outlier = size[lo:hi] < (ev.min_class_size or 0)
            share, share_at = np.zeros(1), np.zeros(len(levels), np.int64)
            if metric == "loss":
                share = ev.metric._share
                share_at = ev.metric._share_off[np.arange(len(levels)), levels].astype(np.int64)
            suppress_by_risk(size[lo:hi], codes[lo:hi], outlier, levels, params, stars, star_off,
                             ev.max_suppressed, keyed and metric == "loss", share, share_at,
                             np.empty((RISK_WORK_ROWS, hi - lo + 1), np.int64),
                             np.full(max(hi - lo + 1, estimator_work(encoded.n_rows, hi - lo)),
                                     np.nan))
            out.append(outlier)
        yield python[lo:hi], out[0], out[1]


@pytest.mark.parametrize("seed", range(3))
def test_one_nodes_suppression_equals_the_batched_models(seed):
    """On (up to 150 random) nodes of random tables the compiled suppression equals the
    batched one; with the loss metric, ranking ties by first appearance alone differs on
    some node (the loss's order is exercised)."""
    data, hierarchies = _table(seed)
    encoded = encode(data, Schema(hierarchies), cpu_backend())
    lattice = Lattice.of(np.array([h.height for h in hierarchies.values()]))
    ids = np.random.default_rng(seed).permutation(lattice.size)[:150]
    nodes = lattice.levels_of(np.sort(ids))
    by_order = 0
    for (name, (k, models)), limit, metric in itertools.product(
            RISK_MODELS.items(), (0.0, 0.05, 0.3), ("loss", "precision")):
        chosen = models() + ([KAnonymity(k)] if k else [])
        for levels, (python, compiled, first) in zip(
                nodes.tolist(), _node_outliers(encoded, chosen, metric, limit, nodes)):
            np.testing.assert_array_equal(compiled, python, err_msg=f"{name} {limit} {levels}")
            by_order += not np.array_equal(first, python)
    assert by_order > 0


@pytest.mark.parametrize("seed", range(5))
def test_compiled_equals_python_with_risk_models(seed, monkeypatch):
    """Whole searches: the same optimum, checked nodes and statistics per checked node, with
    and without suppression, under each metric, with k-anonymity and with a sensitive
    attribute's l-diversity."""
    data, hierarchies = _table(seed)
    rng = np.random.default_rng(seed)
    data["s"] = rng.choice(list("abcdef"), size=len(data))
    solved = 0
    for (name, (k, models)), limit, metric in itertools.product(
            RISK_MODELS.items(), (0.0, 0.1), ("loss", "precision", "discernibility")):
        context = (seed, name, limit, metric)
        fits = [_fit(data, hierarchies, k, limit, metric, compiled, monkeypatch,
                     models=models(), insensitive=["s"]) for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    # l-diversity's classes (a sensitive attribute carried)
    fits = [_fit(data, hierarchies, 2, 0.1, "loss", compiled, monkeypatch, sensitive=["s"],
                 models=[DistinctLDiversity("s", 2), AverageReidentificationRisk(0.3)])
            for compiled in (True, False)]
    assert_same_search(*fits, (seed, "distinct + average"))
    assert solved >= 24


def test_a_risk_model_with_a_population_runs_in_python(monkeypatch):
    """A risk-based model with a population model (k-map) is refused, with the reason; the
    search then runs in Python.  Population uniqueness alone runs compiled."""
    population, hierarchies = _table(3)
    refusal = flash_compiled.compiled_flash_refusal
    assert refusal([AverageReidentificationRisk(0.1), KMap(2, population=population)]) == \
        "a risk-based model with a population"
    assert refusal([PopulationUniqueness(0.1, region="usa"), KMap(2, population=population)]) \
        == "a risk-based model with a population"
    assert refusal([AverageReidentificationRisk(0.1), KAnonymity(2)]) is None
    assert refusal([PopulationUniqueness(0.01, region="usa"), KAnonymity(2)]) is None
    fits = [_fit(population, hierarchies, k, 0.1, "loss", True, monkeypatch, models=models)
            for k, models in ((None, [PopulationUniqueness(0.5, population_size=4000)]),
                              (2, [KMap(2, population=population),
                                   AverageReidentificationRisk(0.3)]))]
    assert fits[0] is not None and fits[0].search.details.get("compiled")
    assert fits[1] is None or not fits[1].search.details.get("compiled")
