"""The class-conditional prior a_{S,[C_q]} of the (epsilon, alpha) privacy-loss model
(PrivacyLoss(prior="conditional", prior_qids=...)) against a pandas groupby reference."""

import itertools

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, Hierarchy
from gpuppdp.errors import InputError
from gpuppdp.models import PrivacyLoss
from gpuppdp.tradeoff import class_distributions

ROWS = [("a1", "b1", "x"), ("a1", "b2", "x"), ("a2", "b1", "x"), ("a2", "b2", "y"),
        ("a3", "b1", "x"), ("a3", "b2", "z"), ("a4", "b1", "y"), ("a4", "b2", "z"),
        ("a1", "b1", "y"), ("a3", "b1", "x"), ("a4", "b2", "x"), ("a2", "b2", "z")]
A_ROWS = [["a1", "a12", "*"], ["a2", "a12", "*"], ["a3", "a34", "*"], ["a4", "a34", "*"]]
B_ROWS = [["b1", "*"], ["b2", "*"]]


def tiny():
    data = pd.DataFrame(ROWS, columns=["a", "b", "s"])
    return data, {"a": Hierarchy.from_rows(A_ROWS, name="a"),
                  "b": Hierarchy.from_rows(B_ROWS, name="b")}


def reference_losses(data, hierarchies, levels, prior_qids):
    """Per class of node ``levels``: (size, distribution loss, entropy loss) against the
    distribution of the records sharing its generalized values on ``prior_qids``."""
    g = data.copy()
    for q, lv in levels.items():
        h = hierarchies[q]
        g[q] = g[q].map({leaf: h.generalize([leaf], lv)[0] for leaf in h.leaves})
    values = sorted(g["s"].unique())

    def dist(keys):
        c = g.groupby(keys + ["s"]).size().unstack(fill_value=0).reindex(columns=values,
                                                                         fill_value=0)
        return c.div(c.sum(axis=1), axis=0)

    def ent(p):
        p = p[p > 0]
        return float(-(p * np.log2(p)).sum())

    cls, pri = dist(["a", "b"]), dist(prior_qids)
    size = g.groupby(["a", "b"]).size()
    out = []
    for key, p in cls.iterrows():
        q = pri.loc[key[["a", "b"].index(prior_qids[0])]] if len(prior_qids) == 1 else \
            pri.loc[key]
        out.append((int(size[key]), round(float(np.linalg.norm(p.to_numpy() - q.to_numpy())), 9),
                    round(abs(ent(q.to_numpy()) - ent(p.to_numpy())), 9)))
    return sorted(out)


@pytest.mark.parametrize("prior_qids", [["a"], ["b"]])
def test_conditional_prior_matches_groupby(prior_qids):
    data, hs = tiny()
    eps, alpha = 0.3, 0.4
    model = PrivacyLoss("s", eps, alpha, prior="conditional", prior_qids=prior_qids)
    res = Anonymizer(quasi_identifiers=hs, sensitive=["s"], models=[model],
                     suppression_limit=0.0, search="exhaustive", backend="cpu").fit(data)
    nodes = res.evaluated_nodes
    assert len(nodes) == 6
    for levels, anonymous in zip(nodes.levels, nodes.anonymous):
        ref = reference_losses(data, hs, dict(zip(["a", "b"], levels)), prior_qids)
        want = all(d <= eps and e <= alpha for _, d, e in ref)
        assert bool(anonymous) == want, (levels, ref)
    # the losses of one node, class by class (multiset of (size, losses))
    ev = res._evaluator
    classes, _ = ev.node_classes(np.array([1, 0]))
    cl = classes.for_attribute("s")
    dist, ent = model.bind(ev.encoded).losses(cl)
    got = sorted(zip(cl.size.tolist(), np.round(dist, 9).tolist(), np.round(ent, 9).tolist()))
    ref = reference_losses(data, hs, {"a": 1, "b": 0}, prior_qids)
    assert got == ref
    assert model.describe()["prior_qids"] == prior_qids


def test_conditional_prior_options_and_class_distributions():
    with pytest.raises(InputError, match="prior_qids"):
        PrivacyLoss("s", 0.3, 0.4, prior_qids=["a"])
    with pytest.raises(InputError, match="prior must be"):
        PrivacyLoss("s", 0.3, 0.4, prior="global")
    data, hs = tiny()
    with pytest.raises(InputError, match="'c' is not a quasi-identifier"):
        Anonymizer(quasi_identifiers=hs, sensitive=["s"], backend="cpu", models=[
            PrivacyLoss("s", 0.3, 0.4, prior="conditional", prior_qids=["c"])]).fit(data)
    labels, classes, original, prior = class_distributions(data, ["a", "b"], "s",
                                                          prior="conditional",
                                                          prior_qids=["b"])
    assert labels == ["x", "y", "z"]
    for row, o, q in zip(classes.itertuples(), original, prior):
        part = data[(data["a"] == row.a) & (data["b"] == row.b)]["s"]
        same_b = data[data["b"] == row.b]["s"]
        np.testing.assert_allclose(o, [np.mean(part == v) for v in labels])
        np.testing.assert_allclose(q, [np.mean(same_b == v) for v in labels])
        assert row.size == len(part)
    assert list(itertools.chain(classes["size"])) and classes["size"].sum() == len(data)
