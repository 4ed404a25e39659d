"""The compiled Flash (:mod:`gpuppdp.engine.search.flash_compiled`) against the Python traversal it
replaces: the same optimum, the same checked nodes and, on every checked node, the same
statistics bit for bit -- on random tables, on Adult's ARX reference cases, with work arrays
that run full and with a frequency-set cache that must be emptied."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.backend import cpu_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.metrics import make_metric
from gpuppdp.engine.search import flash_classes, flash_compiled, flash_kernels, flash_layout
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import (
    AlphaKAnonymity,
    BetaLikeness,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KAnonymityOnSubsets,
    LKCPrivacy,
    TCLOSENESS_DISTANCES,
    RecursiveCLDiversity,
    TCloseness,
)
from gpuppdp.models.population import DeltaPresence, KMap


def _table(seed):
    rng = np.random.default_rng(4200 + seed)
    n, cols, hierarchies = int(rng.integers(50, 400)), {}, {}
    for j in range(int(rng.integers(2, 6))):
        leaves = [f"v{i}" for i in range(int(rng.integers(2, 12)))]
        depth = int(rng.integers(1, 5))
        levels = [leaves] + [[f"{i >> d}/{d}" for i in range(len(leaves))]
                             for d in range(1, depth)] + [["*"] * len(leaves)]
        hierarchies[f"q{j}"] = Hierarchy(levels, name=f"q{j}")
        p = rng.dirichlet(np.ones(len(leaves)) * 0.7)
        cols[f"q{j}"] = rng.choice(leaves, size=n, p=p)
    return pd.DataFrame(cols), hierarchies


def _fit(data, hierarchies, k, limit, metric, compiled, monkeypatch, **kw):
    with monkeypatch.context() as m:
        if not compiled:
            m.setattr(flash_compiled, "compiled_flash_supports", lambda *a, **kw: False)
        try:
            return Anonymizer(quasi_identifiers=hierarchies, k=k, suppression_limit=limit,
                              metric=metric, search="flash", backend="cpu", seed=0,
                              **kw).fit(data)
        except NoSolutionError:
            return None


#: models the compiled search judges (with k-anonymity), on sensitive column "s"
DIVERSITY = {"distinct": lambda: [DistinctLDiversity("s", 2)],
             "entropy": lambda: [EntropyLDiversity("s", 1.6)],
             "recursive": lambda: [RecursiveCLDiversity("s", 3, 2)],
             "distinct+recursive": lambda: [DistinctLDiversity("s", 2),
                                            RecursiveCLDiversity("s", 2.5, 2)],
             "t-equal": lambda: [TCloseness("s", 0.3)],
             "t-hierarchical": lambda: [TCloseness("s", 0.25, "hierarchical", hierarchy=Hierarchy(
                 [list("abcdef"), ["ab", "ab", "cd", "cd", "ef", "ef"], ["*"] * 6]))],
             "entropy+t-equal": lambda: [EntropyLDiversity("s", 1.4), TCloseness("s", 0.4)],
             "t-ordered": lambda: [TCloseness("s", 0.2, "ordered", order=list("fbdace"))],
             "recursive+t-ordered": lambda: [RecursiveCLDiversity("s", 3, 2),
                                             TCloseness("s", 0.3, "ordered",
                                                        order=list("abcdef"))],
             "alpha-k": lambda: [AlphaKAnonymity("s", 0.6, k=3)],
             "alpha-k-value": lambda: [AlphaKAnonymity("s", 0.3, k=2, value="b")],
             "beta": lambda: [BetaLikeness("s", 1.5)],
             "beta-enhanced+t-ordered": lambda: [
                 BetaLikeness("s", 3.0, enhanced=True),
                 TCloseness("s", 0.3, "ordered", order=list("fedcba"))]}


def assert_same_search(got, want, context):
    """Same optimum, checked nodes and per-node statistics (the compiled search's checked
    nodes are among those the Python one evaluated, which may have looked ahead).  A check
    the compiled search stopped early (entries -1) found a node with more classes than could
    be anonymous: the Python search found it not anonymous with that many classes, and its
    bound is the prior one, equal up to rounding."""
    assert (got is None) == (want is None), context
    if got is None:
        return
    assert got.search.details.get("compiled"), context
    assert not want.search.details.get("compiled"), context
    assert got.transformation == want.transformation, context
    assert got.nodes_evaluated == want.nodes_evaluated, context
    assert got.node.keys() == want.node.keys(), context
    for name, value in got.node.items():  # (a NaN bound: KL divergence has none)
        assert value == want.node[name] or (isinstance(value, float) and math.isnan(value)
                                            and math.isnan(want.node[name])), (name, context)
    a, b = got.evaluated_nodes, want.evaluated_nodes
    ids_a = a.levels @ np.cumprod([1] + [int(x) + 1 for x in a.levels.max(axis=0)])[:-1]
    rows_b = {tuple(lv): i for i, lv in enumerate(b.levels.tolist())}
    at = [rows_b[tuple(lv)] for lv in a.levels.tolist()]
    assert len(set(ids_a.tolist())) == len(a), context
    stopped = a.entries < 0
    b_stopped = b.take(np.asarray(at, np.int64)[stopped])
    assert got.search.details["stopped_early"] == int(stopped.sum())
    if stopped.any():
        assert (b_stopped.entries > got.search.details["class_limit"]).all(), context
    assert not b_stopped.anonymous.any(), context
    assert b_stopped.k_anonymous is None or not b_stopped.k_anonymous.any(), context
    for name in ("suppressed", "classes", "smallest_class", "entries"):
        assert (getattr(a, name)[stopped] == -1).all(), (name, context)
    assert np.isnan(a.aecs[stopped]).all(), context
    np.testing.assert_allclose(a.lower_bound[stopped], b_stopped.lower_bound, rtol=1e-9,
                               err_msg=str(context))
    at = np.asarray(at, np.int64)[~stopped]
    a = a.take(np.flatnonzero(~stopped))
    for name in ("anonymous", "k_anonymous", "suppressed", "classes", "smallest_class",
                 "aecs", "information_loss", "lower_bound", "entries", "height"):
        if getattr(b, name) is None:  # k_anonymous without a minimal class size
            assert getattr(a, name) is None, (name, context)
            continue
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name)[at],
                                      err_msg=f"{name} {context}")
    return int(stopped.sum())


@pytest.mark.parametrize("seed", range(8))
def test_compiled_equals_python_on_random_tables(seed, monkeypatch):
    data, hierarchies = _table(seed)
    for k, limit, metric in itertools.product((2, 4), (0.0, 0.04, 0.2),
                                              ("loss", "precision", "discernibility")):
        context = (seed, k, limit, metric)
        got = _fit(data, hierarchies, k, limit, metric, True, monkeypatch)
        want = _fit(data, hierarchies, k, limit, metric, False, monkeypatch)
        assert_same_search(got, want, context)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_equals_python_with_a_gs_factor_and_weights(seed, monkeypatch):
    """ARX's loss and precision with a gs-factor (generalization or suppression weighed
    less) and attribute weights, without and with a sensitive attribute's l-diversity: the
    same search as the Python traversal, every checked node's loss and bound bit for bit."""
    data, hierarchies = _table(seed)
    rng = np.random.default_rng(seed)
    data["s"] = rng.choice(list("abcd"), size=len(data))
    weights = {q: float(w) for q, w in zip(hierarchies, rng.uniform(0.0, 2.0, len(hierarchies)))}
    for name, gs, weighted, limit, diverse in itertools.product(
            ("loss", "precision"), (0.0, 0.3, 0.8, 1.0), (False, True), (0.0, 0.1),
            (False, True)):
        metric = make_metric(name, gs_factor=gs, attribute_weights=weights if weighted else {})
        context = (seed, name, gs, weighted, limit, diverse)
        kw = ({"sensitive": ["s"], "models": [DistinctLDiversity("s", 2)]} if diverse else
              {"insensitive": ["s"]})
        fits = [_fit(data, hierarchies, 2, limit, metric, compiled, monkeypatch, **kw)
                for compiled in (True, False)]
        assert_same_search(*fits, context)


def _assert_metrics_search_as_python(seed, metrics, monkeypatch):
    """On random table ``seed`` with a sensitive column "s": each metric of ``metrics(weights)``
    (name -> metric of the model kind, given random attribute weights), at 0 and 10 %
    suppression, with k-anonymity alone, distinct l-diversity and the average
    re-identification risk, searched compiled and by the Python traversal: the same search,
    every checked node's figures bit for bit (:func:`assert_same_search`)."""
    from gpuppdp.models import AverageReidentificationRisk

    data, hierarchies = _table(seed)
    rng = np.random.default_rng(seed)
    data["s"] = rng.choice(list("abcd"), size=len(data))
    weights = {q: float(w) for q, w in zip(hierarchies, rng.uniform(0.0, 2.0, len(hierarchies)))}
    models = {"k": {"insensitive": ["s"]},
              "l-diversity": {"sensitive": ["s"], "models": [DistinctLDiversity("s", 2)]},
              "risk": {"insensitive": ["s"], "models": [AverageReidentificationRisk(0.3)]}}
    for (name, metric), limit, (kind, kw) in itertools.product(metrics(weights).items(),
                                                                (0.0, 0.1), models.items()):
        context = (seed, name, limit, kind)
        fits = [_fit(data, hierarchies, 3, limit, metric(kind), compiled, monkeypatch, **kw)
                for compiled in (True, False)]
        assert_same_search(*fits, context)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_equals_python_with_the_class_count_metrics(seed, monkeypatch):
    """ARX's AECS (with a gs-factor), height (with weights: its bound known before a check),
    monotonic discernibility and ambiguity, without and with a sensitive attribute's
    l-diversity, and with the average re-identification risk (which ranks the classes it
    suppresses by ambiguity's entry loss, the loss's): the same search as the Python
    traversal, every checked node's loss and bound bit for bit."""
    _assert_metrics_search_as_python(seed, lambda weights: {
        "aecs": lambda kind: make_metric("aecs"),
        "aecs-gs0.2": lambda kind: make_metric("aecs", gs_factor=0.2),
        "aecs-gs0.9": lambda kind: make_metric("aecs", gs_factor=0.9),
        # (weights with a risk-based model: the Python traversal's)
        "height": lambda kind: make_metric(
            "height", attribute_weights=weights if kind != "risk" else {}),
        "dm*": lambda kind: make_metric("discernibility-monotonic"),
        "ambiguity": lambda kind: make_metric("ambiguity")}, monkeypatch)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_equals_python_with_the_entropy_metrics(seed, monkeypatch):
    """ARX's non-uniform entropy (with a gs-factor and weights: the suppressed records' part
    weighed), its monotonic and its normalized forms, without and with a sensitive
    attribute's l-diversity and with the average re-identification risk: the same search as
    the Python traversal, every checked node's loss and bound bit for bit (the bound of a
    node not anonymous: its generalization part; of an anonymous one: before negation, or the
    monotonic form's loss)."""
    _assert_metrics_search_as_python(seed, lambda weights: {
        "entropy": lambda kind: make_metric("entropy"),
        "entropy-gs0.3-weights": lambda kind: make_metric(
            "entropy", gs_factor=0.3, attribute_weights=weights if kind != "risk" else {}),
        "entropy-monotonic": lambda kind: make_metric("entropy-monotonic"),
        "normalized-entropy": lambda kind: make_metric("normalized-entropy")}, monkeypatch)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_equals_python_with_kl_divergence(seed, monkeypatch):
    """ARX's KL divergence, deferred (the checks record no loss; the anonymous checked nodes'
    divergences come after the walk, and the optimum by ARX's rule), without and with a
    sensitive attribute's l-diversity and with the average re-identification risk: the same
    search as the Python traversal, which computes each divergence in its check, every
    checked node's loss bit for bit."""
    _assert_metrics_search_as_python(seed, lambda weights: {
        "kl": lambda kind: make_metric("kl")}, monkeypatch)


def test_a_gs_factor_and_weights_on_adult_stop_checks_only_for_precision(monkeypatch):
    """9-QID Adult, k = 5, 5 %: with a gs-factor and weights, precision's checks still stop
    early (its bound needs no classes), the loss's no longer do (its prior bound holds at ARX's
    defaults only); both searches are the Python traversal's."""
    data, hierarchies = datasets.adult()
    for name, stops in (("precision", True), ("loss", False)):
        metric = make_metric(name, gs_factor=0.3, attribute_weights={"age": 1.0, "sex": 0.2})
        fits = [_fit(data, hierarchies, 5, 0.05, metric, compiled, monkeypatch)
                for compiled in (True, False)]
        assert (assert_same_search(*fits, name) > 0) == stops


def test_what_runs_compiled_with_a_metric_s_options():
    """A gs-factor and weights run compiled, with a risk-based model too, except weights
    there (the records it suppresses first are ranked by unweighted loss); every metric of
    the library runs compiled (KL divergence deferred), a user's subclass of one does not."""
    from gpuppdp.engine.metrics import METRICS, Loss
    from gpuppdp.models import AverageReidentificationRisk

    refusal = flash_compiled.compiled_flash_refusal
    options = make_metric("loss", gs_factor=0.2, attribute_weights={"a": 1.0})
    assert refusal([KAnonymity(2)], options) is None
    assert refusal([KAnonymity(2)], make_metric("precision", gs_factor=0.9)) is None
    assert refusal([AverageReidentificationRisk(0.1)], make_metric("loss", gs_factor=0.2)) \
        is None
    assert refusal([AverageReidentificationRisk(0.1)], options) == \
        "a risk-based model with attribute weights"
    assert {"aecs", "height", "discernibility-monotonic", "ambiguity", "entropy",
            "entropy-monotonic", "normalized-entropy", "kl"} < set(METRICS)
    for name in METRICS:
        assert refusal([KAnonymity(2)], make_metric(name)) is None, name

    class UsersLoss(Loss):
        pass
    assert refusal([KAnonymity(2)], UsersLoss()) == "the loss metric"


@pytest.mark.parametrize("seed", range(6))
def test_compiled_equals_python_with_sensitive_models(seed, monkeypatch):
    """Classes of several (QIDs, sensitive value) entries judged by distinct, entropy and
    recursive (c, l) l-diversity, equal, ordered and hierarchical t-closeness, (alpha,
    k)-anonymity and basic and enhanced beta-likeness, with and without
    suppression (the linear phase and the k-anonymity sub-flag of a partially monotone search)."""
    data, hierarchies = _table(seed)
    data["s"] = np.random.default_rng(seed).choice(list("abcdef"), size=len(data),
                                                   p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    solved = 0
    for (kind, models), limit, metric in itertools.product(
            DIVERSITY.items(), (0.0, 0.1), ("loss", "precision", "discernibility")):
        context = (seed, kind, limit, metric)
        fits = [_fit(data, hierarchies, 2, limit, metric, compiled, monkeypatch,
                     sensitive=["s"], models=models()) for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    assert solved >= 16


@pytest.mark.parametrize("case", [(8, 2, 0.05, "discernibility"), (9, 5, 0.05, "loss"),
                                  (8, 5, 0.0, "precision"), (9, 10, 0.05, "precision")])
def test_compiled_equals_python_on_adult(case, monkeypatch):
    n_qids, k, limit, metric = case
    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if n_qids == 9 or q != "occupation"}
    kw = {} if n_qids == 9 else {"insensitive": ["occupation"]}
    got = _fit(data, qids, k, limit, metric, True, monkeypatch, **kw)
    want = _fit(data, qids, k, limit, metric, False, monkeypatch, **kw)
    assert_same_search(got, want, case)


ADULT_MODELS = {
    "ordered-salary": ("salary-class", lambda: [
        KAnonymity(5), TCloseness("salary-class", 0.05, "ordered", order=["<=50K", ">50K"])]),
    "ordered-age": ("age", lambda: [KAnonymity(5), TCloseness("age", 0.15, "ordered")]),
    "alpha-k": ("occupation", lambda: [AlphaKAnonymity("occupation", 0.5, k=5)]),
    "beta-enhanced": ("occupation", lambda: [KAnonymity(5),
                                             BetaLikeness("occupation", 1.0, enhanced=True)]),
}


@pytest.mark.parametrize("name", list(ADULT_MODELS))
def test_compiled_equals_python_on_adult_sensitive_models(name, monkeypatch):
    """Ordered t-closeness (two values in a given order; 72 ages, ordered numerically),
    (alpha, k)-anonymity and enhanced beta-likeness on Adult (8 QIDs, 5 %)."""
    sens, models = ADULT_MODELS[name]
    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if q != sens}
    fits = [_fit(data, qids, None, 0.05, "loss", compiled, monkeypatch, sensitive=[sens],
                 others="insensitive", models=models()) for compiled in (True, False)]
    assert_same_search(*fits, name)


#: models judged against a population table (with k-anonymity where ``k`` is given)
POPULATION_MODELS = {
    "k-map": (2, lambda pop: [KMap(4, population=pop)]),
    "k-map alone": (None, lambda pop: [KMap(3, population=pop)]),
    "delta-presence": (None, lambda pop: [DeltaPresence(0.2, 0.9, population=pop)]),
    "both": (2, lambda pop: [KMap(3, population=pop), DeltaPresence(0.1, 0.8, population=pop)]),
    "k-map+distinct": (2, lambda pop: [KMap(3, population=pop), DistinctLDiversity("s", 2)]),
    "delta-presence+entropy+t": (None, lambda pop: [
        DeltaPresence(0.1, 0.9, population=pop), EntropyLDiversity("s", 1.4),
        TCloseness("s", 0.4, "ordered", order=list("abcdef"))])}


@pytest.mark.parametrize("seed", range(6))
def test_compiled_equals_python_with_a_population(seed, monkeypatch):
    """k-map and delta-presence: the sample's and the population's frequency sets rolled up
    together, the sample's classes judged against their population records -- with and
    without suppression (delta-presence is not monotonic with it: the linear phase); KL
    divergence's nodes evaluated after the walk by the batched evaluator, which judges them
    against the population too."""
    population, hierarchies = _table(seed)
    rng = np.random.default_rng(seed)
    keep = rng.random(len(population)) < 0.5
    sample = population[keep].reset_index(drop=True)
    sample["s"] = rng.choice(list("abcdef"), size=len(sample), p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    solved = 0
    for (name, (k, models)), limit, metric in itertools.product(
            POPULATION_MODELS.items(), (0.0, 0.1), ("loss", "precision", "discernibility", "kl")):
        context = (seed, name, limit, metric)
        kw = {"sensitive": ["s"]} if "+" in name else {"insensitive": ["s"]}
        fits = [_fit(sample, hierarchies, k, limit, metric, compiled, monkeypatch,
                     models=models(population), **kw) for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    assert solved >= 18


@pytest.mark.parametrize("name, metric", [("k-map", "loss"), ("delta-presence", "discernibility"),
                                          ("k-map+distinct", "precision")])
def test_compiled_equals_python_on_adult_with_a_population(name, metric, monkeypatch):
    """A 30 % sample of Adult (9 QIDs, 5 %; 8 with occupation sensitive) against Adult as its
    population."""
    data, hierarchies = datasets.adult()
    sample = data[np.random.default_rng(1).random(len(data)) < 0.3].reset_index(drop=True)
    models = {"k-map": [KMap(5, population=data)],
              "delta-presence": [DeltaPresence(0.05, 0.6, population=data)],
              "k-map+distinct": [KMap(5, population=data),
                                 DistinctLDiversity("occupation", 3)]}[name]
    kw = {}
    if "+" in name:
        hierarchies = {q: h for q, h in hierarchies.items() if q != "occupation"}
        kw = {"sensitive": ["occupation"]}
    fits = [_fit(sample, hierarchies, 2, 0.05, metric, compiled, monkeypatch, models=models,
                 **kw) for compiled in (True, False)]
    assert_same_search(*fits, name)


def test_the_sample_and_the_population_share_one_bottom_set():
    """The bottom set with a population: the sample's entries first, in their order, each
    count the sample's records and the population's packed; then the population's other
    combinations with no sample record (hand-counted)."""
    population = pd.DataFrame({"zip": ["14853", "13053", "13068", "13053", "14850", "13068"],
                               "sex": ["m", "f", "m", "f", "m", "m"]})
    sample = population.iloc[[2, 3, 5]].reset_index(drop=True)  # 13068/m twice, 13053/f
    hierarchies = {"zip": Hierarchy([["13053", "13068", "14850", "14853"], ["*"] * 4]),
                   "sex": Hierarchy([["f", "m"], ["*", "*"]])}
    encoded = encode(sample, Schema(hierarchies), cpu_backend())
    evaluator = Evaluator(encoded, [KMap(2, population=population)], make_metric("loss"), 0.0)
    codes, count, _ = flash_compiled._bottom_set(evaluator, flash_compiled._population(evaluator))
    labels = [(hierarchies["zip"].leaves[a], hierarchies["sex"].leaves[b]) for a, b in codes]
    assert labels == [("13068", "m"), ("13053", "f"), ("14853", "m"), ("14850", "m")]
    shift = int(flash_classes.POPULATION_SHIFT)
    assert (count & ((1 << shift) - 1)).tolist() == [2, 1, 0, 0]
    assert (count >> shift).tolist() == [2, 2, 1, 1]


def test_qid_subsets_with_a_sensitive_attribute_or_a_population_run_in_python():
    """k-anonymity on QID subsets (or LKC-privacy with C = 1) with a model of the sensitive
    attribute or a population model is refused by the compiled Flash, which says why; LKC with
    a confidence bound runs there, but not with a population."""
    population, _ = _table(2)
    refusal = flash_compiled.compiled_flash_refusal
    subsets = KAnonymityOnSubsets([["q0", "q1"]], 3)
    why = "k-anonymity on QID subsets with a sensitive attribute or a population"
    assert refusal([subsets, DistinctLDiversity("s", 2)]) == why
    assert refusal([LKCPrivacy(2, 3, 1.0), KMap(2, population=population)]) == why
    assert refusal([subsets, KAnonymity(2)]) is None
    assert refusal([LKCPrivacy(2, 3, 0.6, attribute="s")]) is None
    assert refusal([LKCPrivacy(2, 3, 0.6, attribute="s"), KMap(2, population=population)]) \
        == "LKC-privacy's confidence bound with QID subsets or a population"


def test_population_models_on_two_tables_run_in_python(monkeypatch):
    """Models on two population tables run the Python traversal (and say why)."""
    population, hierarchies = _table(1)
    sample = population.iloc[::2].reset_index(drop=True)
    refusal = flash_compiled.compiled_flash_refusal
    two = [KMap(2, population=population),
           DeltaPresence(0.1, 0.9, population=population.copy())]
    assert refusal(two) == "models on several population tables"
    assert refusal([KMap(2, population=population),
                    DeltaPresence(0.1, 0.9, population=population)]) is None
    fit = _fit(sample, hierarchies, 2, 0.3, "loss", True, monkeypatch, models=two)
    assert fit is not None and not fit.search.details.get("compiled")


@pytest.mark.parametrize("seed", range(6))
def test_compiled_equals_python_with_qid_subsets(seed, monkeypatch):
    """k-anonymity on QID subsets and LKC-privacy without its confidence bound: groups of a
    node's classes peeled until every group left reaches its k -- with and without
    k-anonymity itself and suppression."""
    data, hierarchies = _table(seed)
    names = list(hierarchies)
    subsets = [names[:2], names[-1:]] if len(names) > 2 else [names[:1], names[1:]]
    solved = 0
    for (k, models), limit, metric in itertools.product(
            [(None, lambda: [KAnonymityOnSubsets(subsets, 4)]),
             (2, lambda: [KAnonymityOnSubsets(subsets, 6)]),
             (None, lambda: [LKCPrivacy(2, 3, 1.0)])],
            (0.0, 0.1), ("loss", "precision", "discernibility")):
        context = (seed, models(), limit, metric)
        fits = [_fit(data, hierarchies, k, limit, metric, compiled, monkeypatch,
                     models=models()) for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    assert solved >= 9


@pytest.mark.parametrize("seed", range(6))
def test_compiled_equals_python_with_lkcs_confidence_bound(seed, monkeypatch):
    """LKC-privacy with C < 1 (all values or a listed few), alone, with k and with distinct
    l-diversity: every round judges all subsets on the classes left at its start, as the
    model's own rounds do (the confidence is not monotonic in the classes removed)."""
    data, hierarchies = _table(seed)
    rng = np.random.default_rng(seed)
    data["s"] = rng.choice(list("abcdef"), size=len(data), p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    solved = 0
    for (k, models), limit, metric in itertools.product(
            [(None, lambda: [LKCPrivacy(2, 3, 0.5, attribute="s")]),
             (2, lambda: [LKCPrivacy(3, 2, 0.4, sensitive_values=["a", "b"], attribute="s")]),
             (None, lambda: [LKCPrivacy(1, 4, 0.6, attribute="s"),
                             DistinctLDiversity("s", 2)])],
            (0.0, 0.1), ("loss", "precision", "discernibility")):
        context = (seed, models(), limit, metric)
        fits = [_fit(data, hierarchies, k, limit, metric, compiled, monkeypatch,
                     sensitive=["s"], models=models()) for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    assert solved >= 6


def test_compiled_equals_python_on_adult_with_qid_subsets(monkeypatch):
    """8-QID Adult: k = 5 with k = 10 on {age, sex, race} and {education, marital-status}
    and LKC-privacy with L = 2, K = 10 (5 %), and LKC-privacy with L = 3, K = 5, C = 0.5 on
    occupation (0 %: 107 nodes; with 5 %, 1,205 nodes take the Python traversal 110 s)."""
    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if q != "occupation"}
    for k, models, limit, sens in [
            (5, [KAnonymityOnSubsets([["age", "sex", "race"],
                                      ["education", "marital-status"]], 10)], 0.05, False),
            (None, [LKCPrivacy(2, 10, 1.0)], 0.05, False),
            (None, [LKCPrivacy(3, 5, 0.5, attribute="occupation")], 0.0, True)]:
        roles = {"sensitive" if sens else "insensitive": ["occupation"]}
        fits = [_fit(data, qids, k, limit, "loss", compiled, monkeypatch, models=models,
                     **roles) for compiled in (True, False)]
        assert fits[0] is not None
        assert_same_search(*fits, models)


def _adult_9(k, limit, metric, monkeypatch):
    data, hierarchies = datasets.adult()
    return _fit(data, hierarchies, k, limit, metric, True, monkeypatch)


@pytest.mark.parametrize("metric", ["loss", "precision"])
def test_checks_stop_early_and_change_nothing_else(metric, monkeypatch):
    """A check stops once the node has more classes than an anonymous node can have (9-QID
    Adult, k=5: 6,032 + 1,508); the search is the one whose checks all run to the end --
    optimum, checked nodes, and the statistics of the checks that ran."""
    got = _adult_9(5, 0.05, metric, monkeypatch)
    assert got.search.details["class_limit"] == 30162 // 5 + 1508
    assert got.search.details["stopped_early"] > 0
    with monkeypatch.context() as m:
        m.setattr(flash_compiled, "class_limit", lambda evaluator: None)
        want = _adult_9(5, 0.05, metric, monkeypatch)
    assert want.search.details["stopped_early"] == 0
    assert (got.transformation, got.node, got.nodes_evaluated) == \
        (want.transformation, want.node, want.nodes_evaluated)
    a, b = got.evaluated_nodes, want.evaluated_nodes
    ran = a.entries >= 0
    np.testing.assert_array_equal(a.levels, b.levels)
    for name in ("anonymous", "suppressed", "entries", "information_loss", "lower_bound"):
        np.testing.assert_array_equal(getattr(a, name)[ran], getattr(b, name)[ran], name)
    assert (b.entries[~ran] > got.search.details["class_limit"]).all()


def test_no_early_stop_where_the_bound_needs_every_class(monkeypatch):
    """Discernibility's lower bound sums every class's size squared: no check stops
    early."""
    got = _adult_9(5, 0.05, "discernibility", monkeypatch)
    assert got.search.details["class_limit"] is None
    assert got.search.details["stopped_early"] == 0


def test_an_ambiguous_bound_runs_the_search_again_without_stopping(monkeypatch):
    """A stopped check's prior bound within rounding of the optimum's loss cannot decide a
    pruning: the search is run again with every check complete (here forced after the first
    run) and gives the complete search's result."""
    real = flash_compiled._flash
    cfg_at = flash_compiled._FLASH_PARAMETERS.index("cfg")
    work_at = flash_compiled._FLASH_PARAMETERS.index("work")
    limits = []

    def flash(*args):
        real(*args)
        limits.append(int(args[cfg_at][flash_layout.MAX_CLASSES]))
        if len(limits) == 1:
            args[work_at][flash_layout.STATUS] = flash_layout.AMBIGUOUS

    with monkeypatch.context() as m:
        m.setattr(flash_compiled, "_flash", flash)
        m.setattr(flash_compiled, "_compile_parts_first", lambda args: None)
        got = _adult_9(5, 0.05, "loss", monkeypatch)
    assert limits == [30162 // 5 + 1508, int(flash_compiled.NO_GROUP_LIMIT)]
    assert got.search.details["stopped_early"] == 0
    want = _adult_9(5, 0.05, "loss", monkeypatch)
    assert (got.transformation, got.node, got.nodes_evaluated) == \
        (want.transformation, want.node, want.nodes_evaluated)


def test_a_stopped_bound_decides_only_outside_the_rounding_slack():
    """``_no_better``: the optimum's loss against a bound, exactly for a complete check; for
    a stopped one (the prior bound) only farther than ``BOUND_SLACK``, else AMBIGUOUS."""
    props = np.zeros((4, 2), np.uint8)
    props[flash_layout.VERDICT] = [1, flash_layout.STOPPED]
    slack = flash_kernels.BOUND_SLACK
    for g, best, bound, want, status in [
            (0, 0.5, 0.5, True, 0), (0, 0.5 + 1e-12, 0.5, False, 0), (0, 0.5, np.nan, False, 0),
            (1, 0.5 - 2 * slack, 0.5, True, 0), (1, 0.5 + 2 * slack, 0.5, False, 0),
            (1, 0.5, 0.5, False, flash_layout.AMBIGUOUS)]:
        work = np.zeros(flash_layout.WORK_SIZE, np.int64)
        assert flash_kernels._no_better(best, g, bound, props, work) is want
        assert work[flash_layout.STATUS] == status


def test_meets_are_cached_and_rolled_up_from(monkeypatch):
    """Without a sensitive attribute, a node that only the bottom set lies below rolls up
    through the meet of its levels and the last such node's, which is cached: slots are
    handed to meets as well as to checks, and the search is the Python traversal's."""
    seen = {}
    real = flash_compiled._flash

    def flash(*args):
        real(*args)
        seen.update(zip(flash_compiled._FLASH_PARAMETERS, args))

    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if q != "occupation"}
    kw = {"insensitive": ["occupation"]}
    with monkeypatch.context() as m:
        m.setattr(flash_compiled, "_flash", flash)
        m.setattr(flash_compiled, "_compile_parts_first", lambda args: None)
        got = _fit(data, qids, 5, 0.05, "loss", True, monkeypatch, **kw)
    work, rec_int, slot = seen["work"], seen["rec_int"], seen["slot"]
    checked = int(work[flash_layout.CHECKED_NODES])
    record_slots = rec_int[:checked, 7]
    assert len(set(record_slots.tolist())) == checked and record_slots.min() >= 1
    meets = np.setdiff1d(np.arange(1, work[flash_layout.NEXT_SLOT]), record_slots)
    assert len(meets) > 0
    assert (slot[1, meets] < slot[1, 0]).all()  # each smaller than the bottom set
    assert_same_search(got, _fit(data, qids, 5, 0.05, "loss", False, monkeypatch, **kw),
                       "meets")


def test_the_arena_is_kept_for_the_next_search(monkeypatch):
    """The last search's arena (at most ``ARENA_KEPT_BYTES``) serves the next search of its
    shape, whose result is that of a fresh one; a larger arena is let go."""
    data, hierarchies = _table(3)
    flash_compiled._ARENA.clear()
    _fit(data, hierarchies, 2, 0.04, "loss", True, monkeypatch)
    (kept,) = flash_compiled._ARENA.values()
    second = _fit(data, hierarchies, 4, 0.0, "precision", True, monkeypatch)
    (again,) = flash_compiled._ARENA.values()
    assert all(a is b for a, b in zip(kept, again))
    want = _fit(data, hierarchies, 4, 0.0, "precision", False, monkeypatch)
    assert_same_search(second, want, "kept")
    monkeypatch.setattr(flash_compiled, "ARENA_KEPT_BYTES", 0)
    flash_compiled._ARENA.clear()
    assert_same_search(_fit(data, hierarchies, 4, 0.0, "precision", True, monkeypatch), want,
                       "fresh")
    assert flash_compiled._ARENA == {}


def test_full_work_arrays_and_cache_give_the_same_search(monkeypatch):
    """Work arrays of 4 nodes (the search is run again, larger, until they suffice) and a
    cache emptied whenever it would pass 2 bottom sets: nothing changes but the time."""
    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if q != "occupation"}
    kw = {"insensitive": ["occupation"]}
    want = _fit(data, qids, 2, 0.05, "loss", True, monkeypatch, **kw)
    monkeypatch.setattr(flash_compiled, "FIRST_CAPACITY", 4)
    monkeypatch.setattr(flash_compiled, "CACHE_ENTRIES", 1)
    got = _fit(data, qids, 2, 0.05, "loss", True, monkeypatch, **kw)
    assert got.transformation == want.transformation
    assert got.nodes_evaluated == want.nodes_evaluated
    assert got.node == want.node


def test_what_runs_compiled(monkeypatch):
    """k-anonymity, l-diversity and t-closeness (every distance) run compiled; two models
    of one kind run the Python traversal."""
    data, hierarchies = _table(0)
    data["s"] = np.resize(list("abc"), len(data))
    for kw in ({"insensitive": ["s"]},
               {"sensitive": ["s"], "models": [DistinctLDiversity("s", 2)]},
               {"sensitive": ["s"], "models": [TCloseness("s", 0.5, "ordered",
                                                          order=list("abc"))]}):
        fit = _fit(data, hierarchies, 2, 0.3, "loss", True, monkeypatch, **kw)
        assert fit.search.details["compiled"]
    assert flash_classes.CLOSENESS_DISTANCES == TCLOSENESS_DISTANCES  # one numbering
    other = Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                       models=[TCloseness("s", 0.5, "ordered", order=list("abc")),
                               TCloseness("s", 0.5), KAnonymity(2)],
                       suppression_limit=0.3, backend="cpu").fit(data)
    assert not other.search.details.get("compiled")


@pytest.mark.parametrize("user_choice", [None, "1"])
def test_search_arrays_without_huge_pages_and_numpy_left_as_found(monkeypatch, user_choice):
    """The compiled search allocates with NumPy's huge-page advice off (unless the user set
    ``NUMPY_MADVISE_HUGEPAGE``) and leaves the advice as it found it."""
    core = np._core if hasattr(np, "_core") else np.core
    if user_choice is None:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    else:
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", user_choice)
    seen = []
    flash = flash_compiled._flash

    def spy(*args):
        seen.append(core.multiarray._set_madvise_hugepage(True))  # the advice in force
        core.multiarray._set_madvise_hugepage(seen[-1])
        return flash(*args)

    monkeypatch.setattr(flash_compiled, "_flash", spy)
    monkeypatch.setattr(flash_compiled, "_compile_parts_first", lambda args: None)
    data, hierarchies = _table(0)
    before = core.multiarray._set_madvise_hugepage(True)
    try:
        got = _fit(data, hierarchies, 2, 0.1, "loss", True, monkeypatch)
        assert got.search.details.get("compiled")
        assert seen and all(advice is (user_choice is not None) for advice in seen)
        assert core.multiarray._set_madvise_hugepage(before) is True
    finally:
        core.multiarray._set_madvise_hugepage(before)


def test_cone_marking_marks_every_cone_whole():
    """Random calls of the compiled Flash's property setter, alone, upwards and downwards,
    against the cones computed from the levels: the marking that stops at nodes already
    carrying the bits and reaches each node once leaves exactly the union of the cones."""
    from gpuppdp.engine.lattice import Lattice

    k = flash_kernels
    lat = Lattice([2, 1, 3, 0, 2])
    q = lat.n_attributes
    lattice = np.stack([lat.max_levels, lat.strides])
    levels = lat.levels_of(np.arange(lat.size))
    props = np.zeros((4, lat.size), np.uint8)
    expected = props.copy()
    queue = np.empty((lat.size, q + 2), np.int32)
    rng = np.random.default_rng(11)
    for _ in range(300):
        g, bits = int(rng.integers(lat.size)), int(rng.choice([1, 2, 4, 6, 8]))
        row = [k.EXPLICIT, k.UP, k.DOWN][int(rng.integers(3))]
        k._set(props, queue, lattice, np.int64(g), np.int64(bits), row)
        cone = (np.arange(lat.size) == g) if row == k.EXPLICIT else \
            (levels >= levels[g]).all(axis=1) if row == k.UP else (levels <= levels[g]).all(axis=1)
        expected[row, cone] |= bits
        assert (props == expected).all(), (g, bits, row)


@pytest.mark.parametrize("heights", [[1], [2, 1, 3], [7] * 9, [31, 1, 4], [1] * 40, [100, 0, 3]])
def test_packed_levels_compare_as_the_levels(heights):
    """The cache scan's 'at most in every level' on packed levels (one subtraction per word)
    against the comparison level by level, with the field width and word count the search
    uses for the lattice; pairs drawn near each other so that both answers are common."""
    from gpuppdp.engine import solution_space
    from gpuppdp.engine.lattice import Lattice

    lat = Lattice(heights)
    q, bits = len(heights), flash_compiled._pack_bits(lat)
    width = q + flash_compiled._pack_words(lat)
    rng = np.random.default_rng(len(heights))
    top = np.array(heights)
    seen = set()
    for _ in range(400):
        a = rng.integers(0, top + 1)
        b = np.clip(a + rng.integers(-1, 2, q) * (rng.random(q) < 0.2), 0, top)
        packed = np.zeros((2, width), np.int64)
        packed[0, :q], packed[1, :q] = a, b
        guard = solution_space._pack(packed[0], q, bits)
        assert solution_space._pack(packed[1], q, bits) == guard
        below = bool((a <= b).all())
        assert solution_space._packed_below(packed[0], packed[1], q, guard) == below, (a, b)
        seen.add(below)
    assert seen == {True, False}


def test_strategy_key_terms_are_arxs_divisions():
    """The Flash key's table of terms (NumPy, every attribute and level at once) against
    ARX's ``FLASHStrategy`` terms computed one Python float division at a time, on Adult's
    nine QIDs (whole and a subset of rows): equal to the bit, zero past a height; and by hand
    on a lattice with an attribute of height 0."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.lattice import Lattice
    from gpuppdp.engine.search.flash import key_table

    data, hierarchies = datasets.adult()
    qids = ["sex", "age", "race", "marital-status", "education", "native-country",
            "workclass", "occupation", "salary-class"]
    encoded = encode(data[qids], Schema({q: hierarchies[q] for q in qids}), cpu_backend())
    for rows in (np.arange(len(data)), np.arange(0, len(data), 97)):
        table = encoded if len(rows) == len(data) else encoded.take_rows(rows)
        distinct = table.distinct_per_level()
        lat = Lattice(table.heights)
        got = key_table(lat, distinct)
        for j, top in enumerate(table.heights.tolist()):
            d = distinct[j].tolist()
            for level in range(got.shape[2]):
                inside = level <= top
                assert got[0, j, level] == ((level / float(top) if top else 0.0) if inside
                                            else 0.0)
                assert got[1, j, level] == (float(d[level]) / float(d[0]) if inside else 0.0)
    flat = key_table(Lattice([0, 2]), np.array([[3, 0, 0], [5, 4, 1]]))
    assert flat[0].tolist() == [[0.0, 0.0, 0.0], [0.0, 0.5, 1.0]]
    assert flat[1].tolist() == [[1.0, 0.0, 0.0], [1.0, 0.8, 0.2]]
