"""(alpha, k)-anonymity, delta-disclosure privacy, basic/enhanced beta-likeness and the
(epsilon, alpha) privacy-loss model as plug-ins.

* worked examples (hand-computed per-class statistics and verdicts);
* at every lattice node of small random tables, the rows the engine suppresses are those of the
  classes an independent pandas checker rejects;
* flash and exhaustive search agree with and without suppression (sound monotonicity flags);
* the strict CuPy stand-in returns what NumPy returns.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.backend import cpu_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy, KAnonymity,
                            PrivacyLoss)
from gpuppdp.testing import assert_backend_equal
from tests.test_models_ldiv_tclose import (classes_of, encode_table, generalize, hierarchies_of,
                                           random_table, same_optimum)


def host(model, values):
    return model.backend.to_host(values)


# ---------------------------------------------------------------------------------------
# worked examples: 12 records, classes of 4 (a a a b | a a a b | a b c c), p = (7, 3, 2)/12
# ---------------------------------------------------------------------------------------
def small_table():
    return pd.DataFrame({"g": list("AAAABBBBCCCC"), "s": list("aaabaaababcc")})


def test_worked_examples(backend):
    data = small_table()
    enc = encode_table(data, "s", backend)
    classes = classes_of(enc, [0] * 4 + [1] * 4 + [2] * 4)
    p = np.array([7, 3, 2]) / 12

    ak = AlphaKAnonymity("s", 0.5, 4).bind(enc)
    np.testing.assert_allclose(host(ak, ak.alphas(classes)), [0.75, 0.75, 0.5])
    assert host(ak, ak.class_fails(classes)).tolist() == [True, True, False]
    one = AlphaKAnonymity("s", 0.3, 2, value="c").bind(enc)
    np.testing.assert_allclose(host(one, one.alphas(classes)), [0, 0, 0.5])
    assert host(one, one.class_fails(classes)).tolist() == [False, False, True]
    absent = AlphaKAnonymity("s", 0.3, value="zzz").bind(enc)
    assert not host(absent, absent.class_fails(classes)).any()

    dd = DeltaDisclosurePrivacy("s", 1.0).bind(enc)
    want = [abs(math.log2(0.75 / p[0])), abs(math.log2(0.75 / p[0])),
            max(abs(math.log2(0.25 / p[0])), abs(math.log2(0.25 / p[1])),
                abs(math.log2(0.5 / p[2])))]
    np.testing.assert_allclose(host(dd, dd.deltas(classes)), want, rtol=1e-12)
    assert want[2] == pytest.approx(math.log2(3))      # c: 1/2 against 1/6
    assert host(dd, dd.class_fails(classes)).tolist() == [False, False, True]

    basic = BetaLikeness("s", 1.5).bind(enc)
    # a: (3/4 - 7/12) / (7/12) = 2/7; c in class 3: (1/2 - 1/6) / (1/6) = 2
    np.testing.assert_allclose(host(basic, basic.betas(classes)), [2 / 7, 2 / 7, 2.0])
    assert host(basic, basic.class_fails(classes)).tolist() == [False, False, True]
    enhanced = BetaLikeness("s", 5.0, enhanced=True).bind(enc)
    # -ln(1/6) = 1.79 < 2: no beta makes class 3 enhanced-beta-like; -ln(7/12) = 0.54 > 2/7
    got = host(enhanced, enhanced.betas(classes))
    np.testing.assert_allclose(got[:2], [2 / 7, 2 / 7])
    assert got[2] == math.inf
    assert host(enhanced, enhanced.class_fails(classes)).tolist() == [False, False, True]

    loss = PrivacyLoss("s", 0.3, 0.6).bind(enc)
    dist, ent = (host(loss, a) for a in loss.losses(classes))
    np.testing.assert_allclose(dist, [math.sqrt(8) / 12, math.sqrt(8) / 12, math.sqrt(32) / 12],
                               rtol=1e-12)
    np.testing.assert_allclose(ent, [0.573, 0.573, 0.116], atol=5e-4)
    assert host(loss, loss.class_fails(classes)).tolist() == [False, False, True]
    assert host(loss, PrivacyLoss("s", 1.0, 0.5).bind(enc).class_fails(classes)).tolist() == \
        [True, True, False]


def test_privacy_loss_user_prior():
    data = small_table()
    enc = encode_table(data, "s")
    classes = classes_of(enc, [0] * 4 + [1] * 4 + [2] * 4)
    # a prior with a value absent from the data ("d") counts in both losses
    prior = {"a": 0.5, "b": 0.25, "c": 0.125, "d": 0.125}
    loss = PrivacyLoss("s", 1.0, 1.0, prior=prior).bind(enc)
    dist, ent = (host(loss, a) for a in loss.losses(classes))
    q = np.array([0.5, 0.25, 0.125, 0.125])
    h_q = -(q * np.log2(q)).sum()                       # 1.75 bits
    for c, pe in enumerate(([0.75, 0.25, 0, 0], [0.75, 0.25, 0, 0], [0.25, 0.25, 0.5, 0])):
        pe = np.array(pe)
        assert dist[c] == pytest.approx(np.sqrt(((pe - q) ** 2).sum()), abs=1e-12)
        nz = pe[pe > 0]
        assert ent[c] == pytest.approx(abs(h_q + (nz * np.log2(nz)).sum()), abs=1e-12)
    with pytest.raises(ValueError, match="no \\(or zero\\) probability"):
        PrivacyLoss("s", 1, 1, prior={"a": 0.5, "b": 0.5}).bind(enc)
    with pytest.raises(ValueError, match="sum to 1"):
        PrivacyLoss("s", 1, 1, prior={"a": 0.5, "b": 0.4, "c": 0.05})
    with pytest.raises(ValueError, match="prior"):
        PrivacyLoss("s", 1, 1, prior=[0.5, 0.5])


def test_argument_checks_and_flags():
    for bad in (lambda: AlphaKAnonymity("s", 1.5), lambda: AlphaKAnonymity("s", 0.5, 0),
                lambda: AlphaKAnonymity("s", 0.5, value=3),
                lambda: DeltaDisclosurePrivacy("s", 0), lambda: DeltaDisclosurePrivacy("s", -1),
                lambda: BetaLikeness("s", 0), lambda: BetaLikeness("s", math.inf),
                lambda: PrivacyLoss("s", -0.1, 1), lambda: PrivacyLoss("s", 0.1, "x"),
                lambda: AlphaKAnonymity("", 0.5)):
        with pytest.raises(ValueError):
            bad()
    assert AlphaKAnonymity("s", 0.5, 3).min_class_size == 3
    for m in (DeltaDisclosurePrivacy("s", 1), BetaLikeness("s", 1), PrivacyLoss("s", 1, 1)):
        assert m.min_class_size is None
    # ARX: DDisclosurePrivacy (false, false), Basic/EnhancedBLikeness (false, true)
    assert (AlphaKAnonymity("s", 0.5).monotonic_with_generalization,
            AlphaKAnonymity("s", 0.5).monotonic_with_suppression) == (True, False)
    assert BetaLikeness("s", 1, enhanced=True).monotonic_with_generalization
    for m in (DeltaDisclosurePrivacy("s", 1), PrivacyLoss("s", 1, 1)):
        assert not m.monotonic_with_generalization and not m.monotonic_with_suppression
    for m in (BetaLikeness("s", 1), AlphaKAnonymity("s", 0.5, 2)):
        assert not m.monotonic_with_suppression
    assert DeltaDisclosurePrivacy("s", 1).describe()["model"] == "delta-disclosure"
    assert "value" in AlphaKAnonymity("s", 0.5, value="x").describe()
    with pytest.raises(RuntimeError, match="not bound"):
        BetaLikeness("s", 1).class_fails(classes_of(encode_table(small_table(), "s"),
                                                    [0] * 12))


# ---------------------------------------------------------------------------------------
# random tables: engine verdicts == an independent pandas checker
# ---------------------------------------------------------------------------------------
KINDS = {
    "alphak": lambda rng: ("alphak", (float(rng.choice([0.4, 0.5, 0.6, 0.8])),
                                      int(rng.integers(1, 3)))),
    "alphak-value": lambda rng: ("alphak-value", (float(rng.choice([0.2, 0.3, 0.5])),)),
    "delta": lambda rng: ("delta", (float(rng.choice([0.5, 0.8, 1.2, 2.0])),)),
    "beta": lambda rng: ("beta", (float(rng.choice([0.5, 1.0, 2.0])),)),
    "beta-enhanced": lambda rng: ("beta-enhanced", (float(rng.choice([0.5, 1.0, 2.0])),)),
    "loss": lambda rng: ("loss", (float(rng.choice([0.2, 0.3, 0.5])),
                                  float(rng.choice([0.3, 0.6, 1.0])))),
}


def make(kind, params):
    if kind == "alphak":
        return AlphaKAnonymity("s", params[0], params[1])
    if kind == "alphak-value":
        return AlphaKAnonymity("s", params[0], value="40")
    if kind == "delta":
        return DeltaDisclosurePrivacy("s", params[0])
    if kind in ("beta", "beta-enhanced"):
        return BetaLikeness("s", params[0], enhanced=kind == "beta-enhanced")
    return PrivacyLoss("s", params[0], params[1])


def naive_fails(kind, params, sens: pd.Series, table: pd.Series):
    """(fails, margin) of one class; margins below 1e-9 are left out of the comparison."""
    n = len(sens)
    pe = sens.value_counts() / n
    p = table.value_counts() / len(table)
    if kind == "alphak":
        alpha, k = params
        return pe.max() > alpha or n < k, abs(pe.max() - alpha)
    if kind == "alphak-value":
        share = float(pe.get("40", 0.0))
        return share > params[0], abs(share - params[0])
    if kind == "delta":
        stat = max(abs(math.log2(pe[v] / p[v])) for v in pe.index)
        return not stat < params[0], abs(stat - params[0])
    if kind.startswith("beta"):
        beta = params[0]
        worst, margin = False, math.inf
        for v in pe.index:
            if pe[v] > p[v]:
                gain = (pe[v] - p[v]) / p[v]
                bound = min(beta, -math.log(p[v])) if kind == "beta-enhanced" else beta
                worst |= gain > bound
                margin = min(margin, abs(gain - bound))
        return worst, margin
    eps, alpha = params
    full = pe.reindex(p.index, fill_value=0.0)
    dist = math.sqrt(((full - p) ** 2).sum())
    h = lambda d: -sum(x * math.log2(x) for x in d if x > 0)  # noqa: E731
    ent = abs(h(p) - h(pe))
    return dist > eps or ent > alpha, min(abs(dist - eps), abs(ent - alpha))


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(4))
def test_row_verdicts_equal_naive_checker(kind, seed):
    data, levels = random_table(seed)
    kind, params = KINDS[kind](np.random.default_rng(seed))
    model = make(kind, params)
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    evaluator = Evaluator(enc, [model], make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    checked = 0
    for node in lattice.levels_of(np.arange(lattice.size)):
        gen = generalize(data, levels, node)
        groups = gen.groupby(list(levels), sort=False).ngroup().to_numpy()
        want = np.zeros(len(data), dtype=bool)
        skip = np.zeros(len(data), dtype=bool)
        for g in np.unique(groups):
            rows = groups == g
            bad, margin = naive_fails(kind, params, data["s"][rows], data["s"])
            want[rows] = bad
            skip[rows] = margin < 1e-9
        got = cpu_backend().to_host(evaluator.row_outliers(node)[0])
        np.testing.assert_array_equal(got[~skip], want[~skip],
                                      err_msg=f"{kind} {params} node {node.tolist()}")
        checked += int((~skip).sum())
    assert checked > 0


# ---------------------------------------------------------------------------------------
# flash == exhaustive, with and without suppression
# ---------------------------------------------------------------------------------------
def _fit(data, levels, models, limit, metric, search):
    try:
        return Anonymizer(quasi_identifiers=hierarchies_of(levels), sensitive=["s"],
                          models=models, suppression_limit=limit, metric=metric,
                          search=search, backend="cpu", seed=0).fit(data)
    except NoSolutionError:
        return None


# Models that are not monotonic with generalization (delta-disclosure, privacy loss) make Flash
# give up predictive tagging even without suppression (gpuppdp.engine.search.make_search).
SEARCH_CASES = [(k, lim) for k in KINDS for lim in (0.0, 0.1, 0.3)]


@pytest.mark.parametrize("kind,limit", SEARCH_CASES)
def test_flash_equals_exhaustive(kind, limit):
    agreed = solved = 0
    for seed in range(4):
        data, levels = random_table(300 + seed)
        rng = np.random.default_rng(seed)
        for metric, with_k in itertools.product(("loss", "discernibility"), (False, True)):
            kind_, params = KINDS[kind](rng)

            def models():
                return ([KAnonymity(2)] if with_k else []) + [make(kind_, params)]

            agreed += 1
            solved += same_optimum(
                lambda search: _fit(data, levels, models(), limit, metric, search),
                (seed, metric, with_k, params))
    assert solved >= 1


# ---------------------------------------------------------------------------------------
# backends
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(KINDS))
def test_statistics_equal_on_every_backend(backend, kind):
    data, levels = random_table(5)
    kind, params = KINDS[kind](np.random.default_rng(5))
    node = [1] * len(levels)
    gen = generalize(data, levels, node)
    class_ids = gen.groupby(list(levels), sort=False).ngroup().to_numpy()
    sub = data.assign(g=class_ids.astype(str))[["g", "s"]]
    ref_enc, enc = encode_table(sub, "s"), encode_table(sub, "s", backend)
    ref_cls, cls = classes_of(ref_enc, class_ids), classes_of(enc, class_ids)
    ref, model = make(kind, params).bind(ref_enc), make(kind, params).bind(enc)
    assert_backend_equal(backend, model.class_fails(cls),
                         ref.backend.to_host(ref.class_fails(ref_cls)))
    stat = {"alphak": "alphas", "alphak-value": "alphas", "delta": "deltas", "beta": "betas",
            "beta-enhanced": "betas", "loss": "losses"}[kind]
    got, want = getattr(model, stat)(cls), getattr(ref, stat)(ref_cls)
    for g, w in (zip(got, want) if isinstance(got, tuple) else [(got, want)]):
        assert_backend_equal(backend, g, ref.backend.to_host(w), rtol=1e-12, atol=0)


# A chain (a, b, c -> ab, c -> *) where delta-disclosure holds at the bottom and the top but
# not at level 1: class a holds x once in 10 (p(x) = 0.2), b has no x, so ab holds x once in 20
# (|log2(0.05 / 0.2)| = 2 >= 1.5).  The model is not monotonic with generalization.
CHAIN = [["a", "b", "c"], ["ab", "ab", "c"], ["*", "*", "*"]]
CHAIN_ROWS = ([("a", "x")] + [("a", "y")] * 9 + [("b", "y")] * 10 + [("c", "x")] * 7
              + [("c", "y")] * 13)


def _chain_fit(search, limit):
    from gpuppdp.hierarchy import Hierarchy
    return Anonymizer(quasi_identifiers={"q": Hierarchy(CHAIN, name="q")}, sensitive=["s"],
                      models=[DeltaDisclosurePrivacy("s", 1.5)], suppression_limit=limit,
                      search=search, backend="cpu").fit(pd.DataFrame(CHAIN_ROWS,
                                                                     columns=["q", "s"]))


def test_delta_disclosure_not_monotonic_with_generalization():
    data = pd.DataFrame(CHAIN_ROWS, columns=["q", "s"])
    from gpuppdp.hierarchy import Hierarchy
    enc = encode(data, Schema({"q": Hierarchy(CHAIN, name="q")}, sensitive=["s"]),
                 cpu_backend(), "s")
    evaluator = Evaluator(enc, [DeltaDisclosurePrivacy("s", 1.5)], make_metric("loss"), 0.0)
    stats, _ = evaluator.evaluate(np.array([[0], [1], [2]]), evaluator.bottom,
                                  np.zeros(3, dtype=np.int64))
    assert stats.anonymous.tolist() == [True, False, True]
    assert _chain_fit("exhaustive", 0.0).transformation == {"q": 0}
    assert _chain_fit("flash", 0.1).transformation == {"q": 0}


def test_flash_without_suppression_respects_generalization_flag():
    assert _chain_fit("flash", 0.0).transformation == {"q": 0}


def test_models_declare_requirements():
    """Each model says what it needs: the evaluator and the encoder act on these flags."""
    import pandas as pd

    from gpuppdp.builders import levels_hierarchy
    from gpuppdp.models import (DeltaPresence, DistinctLDiversity, KAnonymity,
                                KAnonymityOnSubsets, LKCPrivacy, Requirement, TCloseness)
    R = Requirement
    assert KAnonymity(2).requires == R.COUNTS
    assert DistinctLDiversity("s", 2).requires == R.COUNTS | R.SENSITIVE_HISTOGRAM
    assert TCloseness("s", 0.2).requires == R.COUNTS | R.SENSITIVE_HISTOGRAM
    h = levels_hierarchy([["a", "b"], ["*", "*"]])
    assert R.SENSITIVE_HIERARCHY in TCloseness("s", 0.2, distance="hierarchical",
                                               hierarchy=h).requires
    assert KAnonymityOnSubsets([["x"]], 2).requires == R.COUNTS | R.RELEASED_CLASSES
    assert R.SENSITIVE_HISTOGRAM in LKCPrivacy(2, 2, 0.5, attribute="s").requires
    assert R.SENSITIVE_HISTOGRAM not in LKCPrivacy(2, 2, 1.0).requires
    pop = pd.DataFrame({"x": ["1"]})
    assert DeltaPresence(0.0, 1.0, population=pop).requires == R.COUNTS | R.POPULATION
