"""delta-disclosure privacy and the (epsilon, alpha) privacy-loss model (a given prior, the
table's, or the class-conditional prior) on the compiled Flash
(:mod:`gpuppdp.engine.search.flash_classes`) against the Python traversal and the models'
vectorized checks: the ratio bounds decide as NumPy's logarithm does (ulp by ulp at the edge),
the loss verdicts are the vectorized ones, an entropy loss too close to call runs the search
in Python, and searches on random tables, dyadic tables (ratios exactly 2^delta) and Adult
give the same optimum, checked nodes and node statistics."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.engine.search import compiled_flash_refusal, flash_classes, flash_compiled
from gpuppdp.models import (BetaLikeness, DeltaDisclosurePrivacy, KAnonymity, PrivacyLoss,
                            RecursiveCLDiversity, TCloseness)
from gpuppdp.models.population import KMap
from tests.test_flash_compiled import _fit, _table, assert_same_search
from tests.test_models_ldiv_tclose import classes_of, encode_table

VALUES = list("abcdef")


def _bound(model, sens):
    """``model`` bound to a one-QID table whose sensitive column is ``sens``."""
    return model.bind(encode_table(pd.DataFrame({"g": ["x"] * len(sens), "s": sens}), "s"))


def _around(x: float, ulps: int) -> np.ndarray:
    """The positive float64 values within ``ulps`` of ``x`` (in bit order)."""
    bits = int(np.array([x]).view(np.int64)[0])
    out = np.arange(max(bits - ulps, 1), bits + ulps + 1, dtype=np.int64).view(np.float64)
    return out[np.isfinite(out)]


@pytest.mark.parametrize("delta", [0.3, 0.5, 1.0, 1.2, 2.0, 3.7, 1030.0, 1100.0])
def test_delta_bounds_decide_as_numpys_logarithm(delta):
    """Every ratio within 3000 ulps of either bound, and 20,000 random ones, passes the
    compiled comparison ``low < r < high`` exactly when the model's ``|ln r / ln 2| < delta``
    holds, and the bounds are ``2^-delta`` and ``2^delta`` up to rounding (subnormal, 0 and
    inf past the float range)."""
    model = _bound(DeltaDisclosurePrivacy("s", delta), list("aabbbc"))
    check = model.compiled_check()
    low, high = check.numbers["low"], check.numbers["high"]
    rng = np.random.default_rng(int(delta * 10))
    ratios = np.concatenate([_around(low, 3000), _around(high, 3000),
                             np.exp2(rng.uniform(-1, 1, 20_000) * min(1.5 * delta, 1000)),
                             [1.0]])
    ratios = ratios[ratios > 0]
    rng.shuffle(ratios)  # each value at another place in NumPy's vector loop
    want = model._log2_ratios(np, ratios) < delta
    np.testing.assert_array_equal((ratios > low) & (ratios < high), want)
    assert want.any() and (delta > 1075 or not want.all())  # every float passes past it
    if delta < 1000:
        assert math.isclose(low, 2.0 ** -delta, rel_tol=1e-14)
        assert math.isclose(high, 2.0 ** delta, rel_tol=1e-14)
    else:  # the subnormals' logarithms; past the largest float
        assert 0.0 < low < 2.0 ** -1022 if delta < 1074 else low == 0.0
        assert high == math.inf
    np.testing.assert_array_equal(check.arrays["shares"], [2 / 6, 3 / 6, 1 / 6])


def test_loss_verdicts_are_the_vectorized_ones():
    """:func:`~.flash_classes.losses_fail` on random classes (a given prior and the table's):
    the verdict of :meth:`PrivacyLoss.class_fails` wherever it answers, UNSURE only where the
    entropy loss is within 1e-12 of alpha -- and so at alpha = the loss itself."""
    rng = np.random.default_rng(5)
    sens = rng.choice(VALUES, 300, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    enc = encode_table(pd.DataFrame({"g": ["x"] * 300, "s": sens}), "s")
    codes, m = enc.backend.to_host(enc.sens_codes).astype(np.int64), enc.n_sens
    class_ids = np.unique(rng.integers(0, 120, 300), return_inverse=True)[1]
    classes = classes_of(enc, class_ids)
    prior = dict(zip(VALUES, [0.2, 0.2, 0.2, 0.2, 0.1, 0.1]))
    answered = 0
    for given, (eps, alpha) in itertools.product((None, prior), [(0.3, 0.5), (0.6, 0.9)]):
        model = PrivacyLoss("s", eps, alpha, prior=given).bind(enc)
        dist, ent = model.losses(classes)
        fails = model.class_fails(classes)
        params = _params([model.compiled_check()], m)
        hist = np.zeros((4, m), np.int64)
        for k in range(classes.n_classes):
            counts = np.bincount(codes[class_ids == k], minlength=m)
            d, n = int((counts > 0).sum()), int(counts.sum())
            hist[0, :d], hist[1, :d] = np.flatnonzero(counts), counts[counts > 0]
            got = _losses_fail(hist, d, n, params)
            if got == flash_classes.UNSURE_VERDICT:
                assert abs(ent[k] - alpha) < 1e-12
            else:
                assert got == int(fails[k]), (given, eps, alpha, k)
                answered += 1
            at_edge = params.copy()
            at_edge[flash_classes.LOSS_ALPHA] = ent[k]
            at_edge[flash_classes.LOSS_EPSILON] = max(dist[k], eps)
            assert _losses_fail(hist, d, n, at_edge) == flash_classes.UNSURE_VERDICT
    assert answered == 4 * classes.n_classes
    assert 0 < fails.sum() < classes.n_classes


def _losses_fail(hist, d, n, params):
    """:func:`~.flash_classes.losses_fail` against the prior the parameters hold."""
    m = hist.shape[1]
    prior = flash_classes.SHARES + flash_classes.VALUE_BLOCKS["prior"] * m
    return flash_classes.losses_fail(hist, d, n, params, params[prior:prior + m], 1.0,
                                     params[flash_classes.PRIOR_SQ],
                                     params[flash_classes.PRIOR_ENTROPY], 0)


def _params(checks, m: int) -> np.ndarray:
    """The compiled parameters of ``checks``, as the search lays them out."""
    from gpuppdp.engine.search.flash_compiled import _model_parameters

    class Evaluator:  # what _model_parameters reads of one
        encoded = type("Encoded", (), {"n_sens": m})()
        models = [type("Model", (), {"compiled_check": lambda self, c=c: c})() for c in checks]
    return _model_parameters(Evaluator())[0][0]


PRIOR = dict(zip(VALUES, [0.12, 0.28, 0.2, 0.15, 0.15, 0.1]))
#: the models on sensitive column "s" (with k-anonymity, k = 2, unless "alone")
MODELS = {"delta-alone": lambda: [DeltaDisclosurePrivacy("s", 1.0)],
          "loss-alone": lambda: [PrivacyLoss("s", 0.35, 0.7)],
          "delta-0.8": lambda: [DeltaDisclosurePrivacy("s", 0.8)],
          "delta-1.5": lambda: [DeltaDisclosurePrivacy("s", 1.5)],
          "loss": lambda: [PrivacyLoss("s", 0.3, 0.6)],
          "loss-prior": lambda: [PrivacyLoss("s", 0.45, 0.5, prior=PRIOR)],
          "delta+loss+t-equal": lambda: [DeltaDisclosurePrivacy("s", 2.0),
                                         PrivacyLoss("s", 0.5, 0.8), TCloseness("s", 0.4)],
          "recursive+beta": lambda: [RecursiveCLDiversity("s", 3, 2), BetaLikeness("s", 1.5)],
          "conditional-q0": lambda: [PrivacyLoss("s", 0.35, 0.5, prior="conditional",
                                                 prior_qids=["q0"])],
          "conditional-q1q0-alone": lambda: [PrivacyLoss("s", 0.3, 0.4, prior="conditional",
                                                         prior_qids=["q1", "q0"])],
          "conditional+delta": lambda: [PrivacyLoss("s", 0.4, 0.5, prior="conditional",
                                                    prior_qids=["q1"]),
                                        DeltaDisclosurePrivacy("s", 1.5)]}


@pytest.mark.parametrize("seed", range(2))
def test_compiled_equals_python_on_random_tables(seed, monkeypatch):
    """delta-disclosure and the privacy loss alone (no minimal class size: ARX's
    createNoneFull or none-none strategy) and with k-anonymity (partial-full or partial-none),
    the privacy loss with a given prior, both with t-closeness, recursive (c,
    l)-diversity with beta-likeness (whose (value, count) pairs the recursive check leaves in
    place), and the privacy loss with the class-conditional prior on one or two QIDs,
    with and without suppression."""
    data, hierarchies = _table(seed)
    data["s"] = np.random.default_rng(seed).choice(VALUES, size=len(data),
                                                   p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    solved = 0
    for (kind, models), limit, metric in itertools.product(MODELS.items(), (0.0, 0.1),
                                                           ("loss", "discernibility")):
        context = (seed, kind, limit, metric)
        fits = [_fit(data, hierarchies, None if kind.endswith("alone") else 2, limit, metric,
                     compiled, monkeypatch, sensitive=["s"], models=models())
                for compiled in (True, False)]
        assert_same_search(*fits, context)
        solved += fits[0] is not None
    assert solved >= 13


@pytest.mark.parametrize("delta", [1.0, 2.0])
def test_compiled_equals_python_where_ratios_are_powers_of_two(delta, monkeypatch):
    """Shares of the table 1/2, 1/4, 1/8, 1/8 and classes of a few records: many classes hold
    a value at exactly ``2^delta`` or ``2^-delta`` times its share (``|log2| = delta``: fails),
    decided in the compiled check as in the vectorized one."""
    data, hierarchies = _table(1)
    data = data.iloc[:64].copy()
    data["s"] = np.random.default_rng(3).permutation(np.repeat(list("abcd"), [32, 16, 8, 8]))
    qids = list(hierarchies)
    n = data.groupby(qids)["s"].transform("size")
    f = data.groupby(qids + ["s"])["s"].transform("size")
    ratio = (f / n) / data["s"].map(data["s"].value_counts(normalize=True))
    assert np.isin(ratio, [2.0 ** delta, 2.0 ** -delta]).sum() >= 4  # rows, at the bottom
    for limit in (0.0, 0.2):
        fits = [_fit(data, hierarchies, 1, limit, "loss", compiled, monkeypatch,
                     sensitive=["s"], models=[DeltaDisclosurePrivacy("s", delta)])
                for compiled in (True, False)]
        assert fits[0] is not None
        assert_same_search(*fits, (delta, limit))


def test_an_entropy_loss_too_close_to_call_runs_the_python_search(monkeypatch):
    """A prior ``q`` = (0.1, 0.3, 0.2, 0.15, 0.15, 0.1) and a class of shares (0.2, 0.3, 0.2,
    0.3) on the values of q 0.2, 0.3, 0.15, 0.15 (it occurs on the first random table):
    ``H(q) - H(p_E) = 0.2 log2(0.2 / 0.1) + 0.3 log2(0.3 / 0.15) = 0.5`` exactly, alpha = 0.5.
    The float sums may land either side, with NumPy's logarithm or the C library's: the
    compiled search stops and the Python one searches the problem."""
    data, hierarchies = _table(0)
    data["s"] = np.random.default_rng(0).choice(VALUES, size=len(data),
                                                p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    prior = dict(zip(VALUES, [0.1, 0.3, 0.2, 0.15, 0.15, 0.1]))
    runs = []
    real = flash_compiled.run
    monkeypatch.setattr(flash_compiled, "run", lambda *a: runs.append(real(*a)) or runs[-1])
    fits = [_fit(data, hierarchies, 2, 0.1, "loss", compiled, monkeypatch, sensitive=["s"],
                 models=[PrivacyLoss("s", 0.45, 0.5, prior=prior)])
            for compiled in (True, False)]
    assert runs == [None]
    assert not fits[0].search.details.get("compiled")
    assert (fits[0].transformation, fits[0].nodes_evaluated, fits[0].node) == \
        (fits[1].transformation, fits[1].nodes_evaluated, fits[1].node)


def test_what_runs_compiled_and_the_conditional_prior():
    """delta-disclosure and the privacy loss (the table's, a given or the class-conditional
    prior) are compiled kinds; the conditional prior with a population model is refused, with
    the reason."""
    assert DeltaDisclosurePrivacy.compiled_kind_of() == "delta-disclosure"
    assert PrivacyLoss.compiled_kind_of(prior=PRIOR) == "privacy-loss"
    assert compiled_flash_refusal([KAnonymity(2), PrivacyLoss("s", 0.2, 0.3, prior=PRIOR),
                                   DeltaDisclosurePrivacy("s", 1)]) is None
    conditional = PrivacyLoss("s", 0.2, 0.3, prior="conditional", prior_qids=["q0"])
    assert conditional.compiled_kind == "privacy-loss"
    assert compiled_flash_refusal([KAnonymity(2), conditional]) is None
    population, _ = _table(3)
    assert compiled_flash_refusal([KMap(2, population=population), conditional]) == \
        "the privacy loss's conditional prior with a population"


ADULT_MODELS = {
    "delta-1": lambda values: [DeltaDisclosurePrivacy("occupation", 1.0)],
    "delta-2.5": lambda values: [DeltaDisclosurePrivacy("occupation", 2.5)],
    "loss": lambda values: [PrivacyLoss("occupation", 0.3, 0.4)],
    "loss-uniform-prior": lambda values: [PrivacyLoss(
        "occupation", 0.5, 0.9, prior=dict.fromkeys(values, 1 / len(values)))],
    "loss-conditional": lambda values: [PrivacyLoss(
        "occupation", 0.4, 0.5, prior="conditional", prior_qids=["sex", "age"])],
}


@pytest.mark.parametrize("name", list(ADULT_MODELS))
def test_compiled_equals_python_on_adult(name, monkeypatch):
    """delta-disclosure and the privacy loss (the table's prior, a uniform one) on Adult's
    occupation (8 QIDs, k = 5, 4 %)."""
    data, hierarchies = datasets.adult()
    qids = {q: h for q, h in hierarchies.items() if q != "occupation"}
    values = sorted(data["occupation"].astype(str).unique())
    fits = [_fit(data, qids, 5, 0.04, "loss", compiled, monkeypatch, sensitive=["occupation"],
                 others="insensitive", models=ADULT_MODELS[name](values))
            for compiled in (True, False)]
    assert_same_search(*fits, name)


ARX_DELTA = Path(__file__).parent / "data" / "arx_delta_disclosure.json"


@pytest.mark.parametrize("case", json.loads(ARX_DELTA.read_text())["cases"],
                         ids=lambda case: case["id"])
def test_compiled_delta_disclosure_is_arxs(case):
    """ARX 3.9.2's optimum, loss (to the last bit) and checked nodes for delta-disclosure on
    Adult (8 QIDs, occupation sensitive, with and without k-anonymity and suppression), from
    the compiled Flash."""
    data, hierarchies = datasets.adult()
    models = ([KAnonymity(case["k"])] if case["k"] else []) + \
        [DeltaDisclosurePrivacy("occupation", case["delta"])]
    got = Anonymizer(quasi_identifiers={q: h for q, h in hierarchies.items()
                                        if q != "occupation"},
                     sensitive=["occupation"], others="insensitive", models=models,
                     suppression_limit=case["suppression_limit"], metric="loss",
                     search="flash", backend="cpu").fit(data)
    want = case["expected"]
    assert got.search.details["compiled"]
    assert got.transformation == want["transformation"]
    assert got.information_loss == float(want["information_loss"])
    assert got.nodes_evaluated == want["transformations_checked"]
