"""The UBNB-PPDD negotiation (:mod:`gpuppdp.algorithms.negotiation`): the per-policy losses against
a naive pandas reference and hand-computed values, matching of utility patterns, promotion and
demotion, the flat- and variable-rate protocols, a negotiation on Adult whose deal is
re-checked independently, and the ``negotiate`` command line."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Hierarchy
from gpuppdp.algorithms.negotiation import (
    BASES,
    FIGURES,
    OBJECTIVES,
    OTHERS,
    LinearProfit,
    Negotiation,
    _moves,
    parse_pattern,
    parse_profit,
)
from gpuppdp.analysis.checker import check
from gpuppdp.cli import negotiate as cli_negotiate
from gpuppdp.cli.main import main

# --------------------------------------------------------------------------------------------
# a tiny table: a (height 2) x b (height 1) = 6 policies, node id = a + 3 b
# --------------------------------------------------------------------------------------------

ROWS = [("a1", "b1", "x"), ("a1", "b2", "x"), ("a2", "b1", "x"), ("a2", "b2", "y"),
        ("a3", "b1", "x"), ("a3", "b2", "z"), ("a4", "b1", "y"), ("a4", "b2", "z")]
A_ROWS = [["a1", "a12", "*"], ["a2", "a12", "*"], ["a3", "a34", "*"], ["a4", "a34", "*"]]
B_ROWS = [["b1", "*"], ["b2", "*"]]


def tiny():
    data = pd.DataFrame(ROWS, columns=["a", "b", "s"])
    return data, {"a": Hierarchy.from_rows(A_ROWS, name="a"),
                  "b": Hierarchy.from_rows(B_ROWS, name="b")}


def generalized(data, hierarchies, levels):
    """``data`` with each QID replaced by its label at ``levels`` (a dict)."""
    out = data.copy()
    for q, lv in levels.items():
        h = hierarchies[q]
        mapping = {leaf: h.generalize([leaf], lv)[0] for leaf in h.leaves}
        out[q] = data[q].astype(str).map(mapping)
    return out


def naive_figures(table, qids, sensitive, prior):
    """The eight figures of a (generalized) table, by the definitions, with pandas and NumPy:
    privacy losses of each class against ``prior`` (a Series value -> probability), utility
    losses of each record against a point mass on its own value (explicit vector distances)."""
    values = list(prior.index)
    q = prior.to_numpy(dtype=float)
    counts = (table.groupby(qids + [sensitive], observed=True, sort=False).size()
              .unstack(fill_value=0).reindex(columns=values, fill_value=0).to_numpy(float))
    size = counts.sum(axis=1)
    p = counts / size[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log2(p), 0.0).sum(axis=1)
    h_prior = float(-(q[q > 0] * np.log2(q[q > 0])).sum())
    per_class = {
        "distribution_privacy_loss": np.sqrt(((p - q[None, :]) ** 2).sum(axis=1)),
        "entropy_privacy_loss": np.abs(h_prior - h),
        # own[c, v]: distance of class c's distribution from the point mass on value v
        "distribution_utility_loss": (counts * np.sqrt(
            ((p[:, None, :] - np.eye(len(values))[None, :, :]) ** 2).sum(axis=2))).sum(axis=1)
        / size,
        "entropy_utility_loss": np.abs(h - 0.0),
    }
    out = {}
    for loss, arr in per_class.items():
        out[f"{loss}_max"] = float(arr.max())
        out[f"{loss}_mean"] = float((arr * size).sum() / size.sum())
    return out


def naive_matches(levels, heights, layers, qids, others="lowest"):
    """Does a policy match a pattern: degree level/height of a higher layer <= of a lower."""
    named = [a for layer in layers for a in layer]
    rest = [q for q in qids if q not in named]
    if others == "top" and any(levels[q] != heights[q] for q in rest):
        return False
    if others == "lowest" and rest:
        layers = list(layers) + [rest]
    deg = {q: levels[q] / heights[q] for q in qids if heights[q] > 0}
    for i, upper in enumerate(layers):
        for lower in layers[i + 1:]:
            for a in upper:
                for b in lower:
                    if a in deg and b in deg and deg[a] > deg[b]:
                        return False
    return True


def all_levels(hierarchies, qids):
    """Every level vector, in node-id order (the first QID varies fastest)."""
    rev = qids[::-1]
    for combo in itertools.product(*(range(hierarchies[q].height + 1) for q in rev)):
        yield {q: combo[rev.index(q)] for q in qids}


# --------------------------------------------------------------------------------------------
# the figures
# --------------------------------------------------------------------------------------------

def test_tiny_figures_by_hand():
    data, hs = tiny()
    neg = Negotiation(hs, "s", epsilon=1, alpha=2, backend="cpu").fit(data)
    p = neg.policies.set_index("node")
    # q = (x .5, y .25, z .25): sum q^2 = .375, H(q) = 1.5 bits
    # top node (2, 1) = node 5: one class, the table itself
    assert p.loc[5, "distribution_privacy_loss_max"] == pytest.approx(0, abs=1e-12)
    assert p.loc[5, "entropy_privacy_loss_max"] == pytest.approx(0, abs=1e-12)
    # a record of x loses sqrt(1 - 1 + .375), of y or z sqrt(1 - .5 + .375)
    top_util = 0.5 * math.sqrt(0.375) + 0.5 * math.sqrt(0.875)
    assert p.loc[5, "distribution_utility_loss_mean"] == pytest.approx(top_util)
    assert p.loc[5, "distribution_utility_loss_max"] == pytest.approx(top_util)
    assert p.loc[5, "entropy_utility_loss_mean"] == pytest.approx(1.5)
    # bottom node 0: every record its own class: no utility loss, privacy loss of a point mass
    assert p.loc[0, "distribution_utility_loss_max"] == pytest.approx(0, abs=1e-12)
    assert p.loc[0, "entropy_utility_loss_max"] == pytest.approx(0, abs=1e-12)
    assert p.loc[0, "distribution_privacy_loss_max"] == pytest.approx(math.sqrt(0.875))
    assert p.loc[0, "distribution_privacy_loss_mean"] == pytest.approx(top_util)
    assert p.loc[0, "entropy_privacy_loss_max"] == pytest.approx(1.5)
    # node 1 = (a12/a34, b): classes {x,x} {x,y} {x,y} {z,z}; {x,y} loses 1/sqrt 2 and 1 bit
    assert p.loc[1, "distribution_utility_loss_max"] == pytest.approx(math.sqrt(0.5))
    assert p.loc[1, "distribution_utility_loss_mean"] == pytest.approx(math.sqrt(0.5) / 2)
    assert p.loc[1, "entropy_utility_loss_mean"] == pytest.approx(0.5)
    assert p.loc[1, "distribution_privacy_loss_max"] == pytest.approx(math.sqrt(0.875))
    assert p.loc[1, "entropy_privacy_loss_mean"] == pytest.approx(1.0)  # (1.5*4 + .5*4) / 8
    assert list(p["height"]) == [0, 1, 2, 1, 2, 3]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_policy_equals_the_naive_reference(seed):
    rng = np.random.default_rng(seed)
    n = 240
    hs = {"u": Hierarchy.from_rows([[f"u{i}", f"u{i // 2}x", f"u{i // 4}y", "*"]
                                    for i in range(8)], name="u"),
          "v": Hierarchy.from_rows([["v0", "*"], ["v1", "*"], ["v2", "*"]], name="v"),
          "w": Hierarchy.from_rows([[f"w{i}", f"w{i % 2}m", "*"] for i in range(4)],
                                   name="w")}
    data = pd.DataFrame({"u": rng.choice([f"u{i}" for i in range(8)], n),
                         "v": rng.choice(["v0", "v1", "v2"], n, p=[.6, .3, .1]),
                         "w": rng.choice([f"w{i}" for i in range(4)], n),
                         "s": rng.choice(list("pqrst"), n, p=[.4, .3, .15, .1, .05])})
    neg = Negotiation(hs, "s", epsilon=0.3, alpha=0.5, delta_distribution=0.8,
                      gamma_entropy=1.5, basis="total", utility_basis="class",
                      backend="cpu").fit(data)
    qids = neg.quasi_identifiers
    assert qids == ["u", "v", "w"]
    prior = data["s"].value_counts() / n
    assert len(neg.policies) == 4 * 2 * 3
    for levels in all_levels(hs, qids):
        row = neg.policies[(neg.policies[qids] == pd.Series(levels)).all(axis=1)]
        assert len(row) == 1
        row = row.iloc[0]
        ref = naive_figures(generalized(data, hs, levels), qids, "s", prior)
        for name in FIGURES:
            assert row[name] == pytest.approx(ref[name], abs=1e-12), (levels, name)
        in_g = ref["distribution_privacy_loss_mean"] <= 0.3 and \
            ref["entropy_privacy_loss_mean"] <= 0.5
        util = ref["distribution_utility_loss_max"] <= 0.8 and \
            ref["entropy_utility_loss_max"] <= 1.5
        assert bool(row["privacy_ok"]) == in_g
        assert bool(row["utility_ok"]) == util
    assert len(neg.G) == int(neg.policies["privacy_ok"].sum())


def test_a_given_prior_equals_the_naive_reference():
    data, hs = tiny()
    prior = {"x": 0.25, "y": 0.25, "z": 0.25, "w": 0.25}   # w: in the prior, not the data
    neg = Negotiation(hs, "s", epsilon=0.6, alpha=0.5, prior=prior, backend="cpu").fit(data)
    ref_prior = pd.Series(prior)
    for node, levels in enumerate(all_levels(hs, ["a", "b"])):
        ref = naive_figures(generalized(data, hs, levels), ["a", "b"], "s", ref_prior)
        for name in FIGURES:
            assert neg.policies.loc[node, name] == pytest.approx(ref[name], abs=1e-12)
    # the top node is no longer free of privacy loss: ||(.5,.25,.25,0) - .25||, |2 - 1.5|
    assert neg.policies.loc[5, "distribution_privacy_loss_max"] == pytest.approx(
        math.sqrt(0.0625 + 0.0625))
    assert neg.policies.loc[5, "entropy_privacy_loss_max"] == pytest.approx(0.5)
    assert neg.summary()["privacy_constraint"]["prior"] == prior


# --------------------------------------------------------------------------------------------
# patterns
# --------------------------------------------------------------------------------------------

def test_parse_pattern_and_profit():
    assert parse_pattern("age,sex, race;zip;occupation") == [["age", "sex", "race"], ["zip"],
                                                             ["occupation"]]
    with pytest.raises(ValueError):
        parse_pattern(" ; ")
    f = parse_profit("linear:10,4")
    assert f == LinearProfit(10.0, 4.0)
    assert f(0.5) == pytest.approx(8.0)
    for bad in ("linear:1", "linear:a,b", "cubic:1,2"):
        with pytest.raises(ValueError):
            parse_profit(bad)


@pytest.mark.parametrize("pattern, others, expected", [
    # deg a = a/2, deg b = b; nodes (a, b) in id order (0,0) (1,0) (2,0) (0,1) (1,1) (2,1)
    ([["a"], ["b"]], "lowest", [0, 3, 4, 5]),
    ([["b"], ["a"]], "lowest", [0, 1, 2, 5]),
    ([["a", "b"]], "lowest", [0, 1, 2, 3, 4, 5]),
    ([["a"]], "lowest", [0, 3, 4, 5]),          # b outside: an implicit lowest layer
    ([["a"]], "top", [3, 4, 5]),                # b outside: fully generalized
    ([["a"]], "free", [0, 1, 2, 3, 4, 5]),      # b outside: anything
    ([["b"]], "lowest", [0, 1, 2, 5]),
])
def test_matching_on_the_tiny_lattice(pattern, others, expected):
    data, hs = tiny()
    neg = Negotiation(hs, "s", epsilon=1, alpha=2, others=others, backend="cpu").fit(data)
    assert np.flatnonzero(neg.matches(pattern)).tolist() == expected
    heights = {"a": 2, "b": 1}
    naive = [i for i, lv in enumerate(all_levels(hs, ["a", "b"]))
             if naive_matches(lv, heights, pattern, ["a", "b"], others)]
    assert naive == expected


def test_promotions_and_demotions():
    listed = [(new, m["attribute"], m["move"]) for new, m in _moves([["a", "b"], ["c"]])]
    assert ([["a"], ["b"], ["c"]], "a", "promote") in listed
    assert ([["b"], ["a"], ["c"]], "a", "demote") in listed
    assert ([["b"], ["a"], ["c"]], "b", "promote") in listed
    assert ([["a"], ["b"], ["c"]], "b", "demote") in listed
    assert ([["a", "b", "c"]], "c", "promote") in listed        # alone: into the layer above
    assert len(listed) == 5                                    # c cannot go below the last
    where = {(m["attribute"], m["move"]): (m["from_layer"], m["to_layer"])
             for _, m in _moves([["a", "b"], ["c"]])}
    # layer numbers: before the move -> after it
    assert where == {("a", "promote"): (0, 0), ("a", "demote"): (0, 1),
                     ("b", "promote"): (0, 0), ("b", "demote"): (0, 1),
                     ("c", "promote"): (1, 0)}


# --------------------------------------------------------------------------------------------
# the protocols
# --------------------------------------------------------------------------------------------

def tiny_class_negotiation(**kw):
    # class basis: G = {2, 3, 4, 5} (eps .65 excludes the sqrt(.875) classes of 0 and 1);
    # delta .75 keeps 0, 1, 3 (0.7739 > .75): acceptable = {3} = (a 0, b 1)
    data, hs = tiny()
    return Negotiation(hs, "s", epsilon=0.65, alpha=1.5, delta_distribution=0.75,
                       gamma_entropy=1.5, backend="cpu", **kw).fit(data)


def test_flat_rate_proposal_and_deal():
    neg = tiny_class_negotiation()
    assert neg.policies["privacy_ok"].tolist() == [False, False, True, True, True, True]
    assert neg.policies["utility_ok"].tolist() == [True, True, False, True, False, False]
    answer = neg.offer([["a"], ["b"]])
    assert answer["action"] == "proposal"
    assert answer["policy"] == {"a": 0, "b": 1} and answer["node"] == 3
    assert neg.status == "pending"
    with pytest.raises(RuntimeError):
        neg.offer([["a"]])
    deal = neg.accept()
    assert deal["policy"] == {"a": 0, "b": 1} and deal["via"] == "proposal"
    assert neg.status == "deal"
    assert [(r["party"], r["action"]) for r in neg.log] == [
        ("user", "offer"), ("owner", "proposal"), ("user", "accept")]
    released = neg.release(seed=0)
    assert released.suppressed_rows == 0
    assert sorted(released.data["a"]) == sorted(r[0] for r in ROWS)
    assert set(released.data["b"]) == {"*"}
    summary = json.loads(json.dumps(neg.summary()))
    assert summary["deal"]["node"] == 3 and summary["policies_in_G"] == 4
    assert summary["policies_acceptable"] == 1


def test_counter_offer_by_promotion_or_demotion_then_reject_and_terminate():
    neg = tiny_class_negotiation()
    answer = neg.offer([["b"], ["a"]])          # matches 0, 1, 2, 5: none acceptable
    assert answer["action"] == "no-match"
    with pytest.raises(RuntimeError):
        neg.accept()
    counter = neg.counter()
    assert counter["action"] == "counter" and counter["node"] == 3
    assert counter["n_moves"] == 1
    assert sorted(map(sorted, counter["pattern"])) == [["a", "b"]]
    assert counter["moves"][0]["move"] in ("promote", "demote")
    neg.reject()
    assert neg.status == "open"
    neg.terminate()
    assert neg.status == "terminated" and neg.deal is None
    assert [r["action"] for r in neg.log] == ["offer", "no-match", "counter", "reject",
                                              "terminate"]
    with pytest.raises(RuntimeError):
        neg.offer([["a"]])


def test_counter_offer_without_a_pattern_when_moves_run_out():
    neg = tiny_class_negotiation(max_moves=0)
    neg.offer([["b"], ["a"]])
    counter = neg.counter()
    assert counter["node"] == 3 and counter["pattern"] is None and counter["moves"] is None
    assert neg.accept()["via"] == "counter"


def test_no_acceptable_policy_terminates():
    data, hs = tiny()
    neg = Negotiation(hs, "s", epsilon=0.65, alpha=1.5, delta_distribution=0.1, gamma_entropy=0.1,
                      backend="cpu").fit(data)
    assert neg.offer([["a"]])["action"] == "no-match"
    assert neg.counter() is None
    assert neg.status == "terminated"


def test_flat_and_variable_rate_choose_differently():
    data, hs = tiny()
    common = dict(epsilon=1, alpha=2, basis="total", profit="linear:10,5", backend="cpu")
    flat = Negotiation(hs, "s", objective="flat", **common).fit(data)
    variable = Negotiation(hs, "s", objective="variable", **common).fit(data)
    pattern = [["a"], ["b"]]                      # matches 0, 3, 4, 5; all in G
    # flat: the least privacy loss: the top node 5; variable: the least utility loss, node 0
    assert flat.offer(pattern)["node"] == 5
    answer = variable.offer(pattern)
    assert answer["node"] == 0 and answer["profit"] == pytest.approx(10.0)
    # variable-rate profit is the largest over the matching acceptable policies
    p = variable.policies
    ok = variable.matches(pattern) & p["privacy_ok"].to_numpy() & p["utility_ok"].to_numpy()
    assert answer["profit"] == pytest.approx(
        (10 - 5 * p.loc[ok, "distribution_utility_loss_mean"]).max())


def test_argument_errors():
    data, hs = tiny()
    with pytest.raises(ValueError, match="profit"):
        Negotiation(hs, "s", epsilon=1, alpha=1, objective="variable", backend="cpu").fit(data)
    with pytest.raises(ValueError, match="basis"):
        Negotiation(hs, "s", epsilon=1, alpha=1, basis="row", backend="cpu").fit(data)
    with pytest.raises(ValueError, match="epsilon"):
        Negotiation(hs, "s", epsilon=-1, alpha=1, backend="cpu").fit(data)
    neg = Negotiation(hs, "s", epsilon=1, alpha=2, backend="cpu").fit(data)
    with pytest.raises(ValueError, match="not a quasi-identifier"):
        neg.offer([["a"], ["zip"]])
    with pytest.raises(ValueError, match="twice"):
        neg.offer([["a"], ["a"]])
    with pytest.raises(RuntimeError):
        neg.counter()                              # no offer yet
    with pytest.raises(RuntimeError):
        neg.release()                              # no deal yet


def test_cli_choices_equal_the_library_constants():
    assert cli_negotiate.BASES == BASES
    assert cli_negotiate.OBJECTIVES == OBJECTIVES
    assert cli_negotiate.OTHERS == OTHERS


# --------------------------------------------------------------------------------------------
# Adult: the deal re-checked independently
# --------------------------------------------------------------------------------------------

ADULT_QIDS = ["sex", "age", "race", "marital-status", "education"]
ADULT_PATTERN = [["age", "education"], ["sex", "race"], ["marital-status"]]
EPS, ALPHA, DELTA_D, GAMMA_H = 0.6, 0.85, 0.55, 0.8


@pytest.fixture(scope="module")
def adult():
    from gpuppdp import datasets

    data, h = datasets.adult()
    hs = {q: h[q] for q in ADULT_QIDS}
    return data[ADULT_QIDS + ["salary-class"]], hs


@pytest.fixture(scope="module")
def adult_reference(adult):
    """Naive figures of every policy matching ADULT_PATTERN (levels tuple -> figures)."""
    data, hs = adult
    heights = {q: hs[q].height for q in ADULT_QIDS}
    prior = data["salary-class"].value_counts() / len(data)
    out = {}
    for levels in all_levels(hs, ADULT_QIDS):
        if naive_matches(levels, heights, ADULT_PATTERN, ADULT_QIDS):
            out[tuple(levels[q] for q in ADULT_QIDS)] = naive_figures(
                generalized(data, hs, levels), ADULT_QIDS, "salary-class", prior)
    return out


@pytest.mark.parametrize("objective", ["flat", "variable"])
def test_adult_deal_rechecked_independently(adult, adult_reference, objective):
    data, hs = adult
    neg = Negotiation(hs, "salary-class", epsilon=EPS, alpha=ALPHA, delta_distribution=DELTA_D,
                      gamma_entropy=GAMMA_H, basis="class", utility_basis="total",
                      objective=objective,
                      profit="linear:100,50", backend="cpu").fit(data)
    assert neg.lattice.size == 2 * 5 * 2 * 3 * 4
    answer = neg.offer(ADULT_PATTERN)
    assert answer["action"] == "proposal"
    deal = neg.accept()
    levels = deal["policy"]

    # the release itself, measured by the independent checker
    released = neg.release(seed=1).data
    assert len(released) == len(data)
    measured = check(released, quasi_identifiers=ADULT_QIDS, sensitive="salary-class",
                     prior=None, backend="cpu")
    assert measured["suppressed_rows"] == 0
    assert measured["distribution_loss_max"] <= EPS
    assert measured["entropy_loss_max"] <= ALPHA
    assert measured["distribution_loss_max"] == pytest.approx(
        deal["distribution_privacy_loss_max"])
    for q in ADULT_QIDS:  # the release shows the deal's levels
        assert set(released[q].astype(str)) == set(
            hs[q].generalize(data[q].astype(str).unique(), levels[q]))
    # the utility threshold, measured with pandas on the release
    prior = data["salary-class"].value_counts() / len(data)
    ref = naive_figures(released, ADULT_QIDS, "salary-class", prior)
    assert ref["distribution_utility_loss_mean"] <= DELTA_D
    assert ref["entropy_utility_loss_mean"] <= GAMMA_H
    assert ref["distribution_utility_loss_mean"] == pytest.approx(
        deal["distribution_utility_loss_mean"])
    # the pattern
    heights = {q: hs[q].height for q in ADULT_QIDS}
    assert naive_matches(levels, heights, ADULT_PATTERN, ADULT_QIDS)

    # the owner's choice among every acceptable matching policy, found naively
    acceptable = {lv: f for lv, f in adult_reference.items()
                  if f["distribution_privacy_loss_max"] <= EPS
                  and f["entropy_privacy_loss_max"] <= ALPHA
                  and f["distribution_utility_loss_mean"] <= DELTA_D
                  and f["entropy_utility_loss_mean"] <= GAMMA_H}
    assert len(acceptable) >= 2
    chosen = tuple(levels[q] for q in ADULT_QIDS)
    assert chosen in acceptable
    if objective == "variable":
        best = max(100 - 50 * f["distribution_utility_loss_mean"] for f in acceptable.values())
        assert deal["profit"] == pytest.approx(best)
    else:
        least = min(f["distribution_privacy_loss_max"] for f in acceptable.values())
        assert deal["distribution_privacy_loss_max"] == pytest.approx(least)


def test_adult_counter_offer_rechecked_independently(adult):
    data, hs = adult
    delta = 0.45
    neg = Negotiation(hs, "salary-class", epsilon=EPS, alpha=ALPHA, delta_distribution=delta,
                      gamma_entropy=GAMMA_H, basis="class", utility_basis="total",
                      backend="cpu").fit(data)
    offered = [["education"], ["age"], ["race"]]
    heights = {q: hs[q].height for q in ADULT_QIDS}
    prior = data["salary-class"].value_counts() / len(data)

    def acceptable(levels):
        f = naive_figures(generalized(data, hs, levels), ADULT_QIDS, "salary-class", prior)
        return (f["distribution_privacy_loss_max"] <= EPS and f["entropy_privacy_loss_max"]
                <= ALPHA and f["distribution_utility_loss_mean"] <= delta
                and f["entropy_utility_loss_mean"] <= GAMMA_H)

    # naively: no acceptable policy matches the offer
    matching = [lv for lv in all_levels(hs, ADULT_QIDS)
                if naive_matches(lv, heights, offered, ADULT_QIDS)]
    assert matching and not any(acceptable(lv) for lv in matching)
    assert neg.offer(offered)["action"] == "no-match"
    counter = neg.counter()
    assert counter["n_moves"] == 1 and counter["pattern"] is not None
    assert counter["pattern"] != offered
    assert naive_matches(counter["policy"], heights, counter["pattern"], ADULT_QIDS)
    assert acceptable(counter["policy"])
    deal = neg.accept()
    assert deal["via"] == "counter" and deal["policy"] == counter["policy"]


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------

def _write_tiny(tmp_path):
    data, _ = tiny()
    data.to_csv(tmp_path / "in.csv", sep=";", index=False)
    (tmp_path / "a.csv").write_text("\n".join(";".join(r) for r in A_ROWS) + "\n")
    (tmp_path / "b.csv").write_text("\n".join(";".join(r) for r in B_ROWS) + "\n")
    return [str(tmp_path / "in.csv"), "--qi", f"a={tmp_path / 'a.csv'}",
            "--qi", f"b={tmp_path / 'b.csv'}", "--sensitive", "s",
            "--privacy-loss", "0.65,1.5", "--delta", "0.75", "--gamma", "1.5", "--backend", "cpu"]


def test_cli_round_trip(tmp_path, capsys):
    base = _write_tiny(tmp_path)
    deal_json, out_csv = tmp_path / "deal.json", tmp_path / "out.csv"
    rc = main(["negotiate", *base, "--pattern", "b;a", "--pattern", "a;b",
               "--objective", "flat", "--json", str(deal_json), "--output", str(out_csv),
               "--seed", "0"])
    assert rc == 0
    assert "deal" in capsys.readouterr().out
    summary = json.loads(deal_json.read_text())
    # the first offer is not matched, its counter-offer rejected, the second proposed
    assert [r["action"] for r in summary["rounds"]] == [
        "offer", "no-match", "counter", "reject", "offer", "proposal", "accept"]
    assert summary["deal"]["policy"] == {"a": 0, "b": 1}
    assert summary["privacy_constraint"] == {"epsilon": 0.65, "alpha": 1.5, "basis": "class",
                                             "prior": None}
    # the same negotiation through the API
    neg = tiny_class_negotiation()
    neg.offer("b;a")
    neg.counter()
    neg.reject()
    neg.offer("a;b")
    neg.accept()
    assert json.loads(json.dumps(neg.summary())) == summary
    released = pd.read_csv(out_csv, sep=";", dtype=str)
    assert len(released) == len(ROWS)
    assert sorted(released["a"]) == sorted(r[0] for r in ROWS)
    assert set(released["b"]) == {"*"}


def test_former_gamma_delta_names_keep_their_meaning_with_a_warning(tmp_path, capsys):
    # the thesis: delta bounds the distribution utility loss, gamma the entropy one; the
    # former gamma= (distribution) and delta= (entropy) are accepted with a warning
    data, hs = tiny()
    new = Negotiation(hs, "s", epsilon=0.65, alpha=1.5, delta_distribution=0.75,
                      gamma_entropy=0.9, backend="cpu").fit(data)
    with pytest.warns(DeprecationWarning, match="delta_distribution"):
        old = Negotiation(hs, "s", epsilon=0.65, alpha=1.5, gamma=0.75, delta=0.9,
                          backend="cpu").fit(data)
    assert (old.delta_distribution, old.gamma_entropy) == (0.75, 0.9)
    pd.testing.assert_frame_equal(old.policies, new.policies)
    # the entropy bound really bounds the entropy utility loss: 0.9 bits drops the nodes
    # whose classes' mean entropy exceeds it
    ent = new.policies["entropy_utility_loss_max"].to_numpy()
    dist = new.policies["distribution_utility_loss_max"].to_numpy()
    assert (new.policies["utility_ok"].to_numpy() == ((ent <= 0.9) & (dist <= 0.75))).all()
    with pytest.raises(ValueError, match="not with the former"):
        Negotiation(hs, "s", epsilon=0.65, alpha=1.5, gamma=0.75, gamma_entropy=0.9)
    base = _write_tiny(tmp_path)
    i = base.index("--delta")
    base[i:i + 4] = ["--utility-loss", "0.75,1.5"]
    rc = main(["negotiate", *base, "--pattern", "a;b", "--objective", "flat", "--json",
               str(tmp_path / "deal.json")])
    assert rc == 0
    assert "--utility-loss GAMMA,DELTA is deprecated" in capsys.readouterr().err
    assert json.loads((tmp_path / "deal.json").read_text())["utility_threshold"] == {
        "delta_distribution": 0.75, "gamma_entropy": 1.5, "basis": "class"}


def test_cli_accept_counter_and_no_deal(tmp_path):
    base = _write_tiny(tmp_path)
    deal_json = tmp_path / "deal.json"
    assert main(["negotiate", *base, "--pattern", "b;a", "--objective", "flat",
                 "--accept-counter", "--json", str(deal_json)]) == 0
    summary = json.loads(deal_json.read_text())
    assert summary["deal"]["via"] == "counter" and summary["deal"]["node"] == 3
    out_csv = tmp_path / "none.csv"
    assert main(["negotiate", *base, "--pattern", "b;a", "--objective", "flat",
                 "--json", str(deal_json), "--output", str(out_csv)]) == 1
    summary = json.loads(deal_json.read_text())
    assert summary["deal"] is None and summary["status"] == "terminated"
    assert not out_csv.exists()
    # a prior from a file: the same policies as through the API
    (tmp_path / "prior.csv").write_text("x,0.25\ny,0.25\nz,0.25\nw,0.25\n")
    rc = main(["negotiate", *base, "--pattern", "a;b", "--objective", "flat",
               "--prior", str(tmp_path / "prior.csv"), "--json", str(deal_json)])
    summary = json.loads(deal_json.read_text())
    data, hs = tiny()
    neg = Negotiation(hs, "s", epsilon=0.65, alpha=1.5, delta_distribution=0.75, gamma_entropy=1.5,
                      prior={"x": 0.25, "y": 0.25, "z": 0.25, "w": 0.25}, backend="cpu").fit(data)
    assert summary["policies_in_G"] == int(neg.policies["privacy_ok"].sum())
    assert rc == (0 if neg.offer("a;b")["action"] == "proposal" else 1)
    assert summary["privacy_constraint"]["prior"] == {"x": 0.25, "y": 0.25, "z": 0.25,
                                                      "w": 0.25}
    # variable rate needs a profit function: a one-line error, status 2
    assert main(["negotiate", *base, "--pattern", "a;b", "--objective", "variable",
                 "--json", str(deal_json)]) == 2


def test_parameters_first_then_fit():
    """The parameters are checked and stored by the constructor (its repr); the offers
    wait for fit(data), which returns the negotiation."""
    data, hs = tiny()
    neg = Negotiation(hs, "s", epsilon=1, alpha=2, backend="cpu")
    assert repr(neg).startswith("Negotiation(quasi_identifiers=['a', 'b'], sensitive='s', "
                                "epsilon=1.0, alpha=2.0")
    with pytest.raises(RuntimeError, match=r"fit\(data\) first"):
        neg.offer([["a"]])
    assert neg.fit(data) is neg and neg.status == "open"
