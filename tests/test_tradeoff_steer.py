"""Steering (gpuppdp.tradeoff.steer): the node whose released classes are nearest to a target
distribution, against a per-node pandas computation, and the exhaustive optimum against the
Anonymizer's; the `gpuppdp tradeoff` command."""

import json

import numpy as np
import pytest

from gpuppdp import Anonymizer
from gpuppdp.cli.main import main
from gpuppdp.errors import InputError
from gpuppdp.models import KAnonymity
from gpuppdp.tradeoff import min_utility_loss, steer

from tests.test_tradeoff_prior import A_ROWS, B_ROWS, tiny


def naive_distance(data, hs, levels, target, k):
    g = data.copy()
    for q, lv in levels.items():
        h = hs[q]
        g[q] = g[q].map({leaf: h.generalize([leaf], lv)[0] for leaf in h.leaves})
    values = sorted(set(g["s"]) | set(target))
    c = g.groupby(["a", "b"]).s.value_counts().unstack(fill_value=0).reindex(
        columns=values, fill_value=0)
    size = c.sum(axis=1).to_numpy()
    keep = size >= k
    x = np.array([target.get(v, 0.0) for v in values])
    d = np.linalg.norm(c.to_numpy() / size[:, None] - x, axis=1)
    return (d * size)[keep].sum() / size[keep].sum(), (~keep).sum() == 0 or \
        size[~keep].sum() <= 0


def test_steer_picks_the_nearest_node_and_reports_the_optimum():
    data, hs = tiny()
    target = {"x": 0.6, "y": 0.2, "z": 0.2}
    res = steer(data, hs, "s", target, models=[KAnonymity(2)], backend="cpu")
    assert len(res.nodes) == 6
    want = {}
    for r in res.nodes.itertuples():
        d, ok = naive_distance(data, hs, {"a": r.a, "b": r.b}, target, 2)
        assert r.target_distance == pytest.approx(d, abs=1e-12)
        assert bool(r.anonymous) == ok
        if ok:
            want[r.node] = d
    best = min(want.values())
    assert res.steered["target_distance"] == pytest.approx(best, abs=1e-12)
    assert want[res.steered["node"]] == pytest.approx(best, abs=1e-12)
    opt = Anonymizer(quasi_identifiers=hs, sensitive=["s"], k=2, search="exhaustive",
                     backend="cpu").fit(data)
    assert res.optimum["policy"] == opt.transformation
    assert res.optimum["information_loss"] == pytest.approx(opt.information_loss)
    assert res.steered["information_loss"] >= res.optimum["information_loss"]
    cmp = res.comparison()
    assert cmp.loc["target_distance", "steered"] <= cmp.loc["target_distance", "optimum"]
    with pytest.raises(InputError, match="sum to 1"):
        steer(data, hs, "s", {"x": 0.5}, backend="cpu")


def test_steer_toward_a_solution_and_the_cli(tmp_path, capsys):
    data, hs = tiny()
    labels = ["x", "y", "z"]
    table = data["s"].value_counts(normalize=True).reindex(labels).to_numpy()
    sol = min_utility_loss(table, table, 0.1, 0.2, labels=labels)
    res = steer(data, hs, "s", sol, backend="cpu")
    assert set(res.steered["policy"]) == {"a", "b"}
    data.to_csv(tmp_path / "in.csv", sep=";", index=False)
    (tmp_path / "a.csv").write_text("\n".join(";".join(r) for r in A_ROWS) + "\n")
    (tmp_path / "b.csv").write_text("\n".join(";".join(r) for r in B_ROWS) + "\n")
    out = tmp_path / "t.json"
    rc = main(["tradeoff", str(tmp_path / "in.csv"), "--qi", f"a={tmp_path / 'a.csv'}",
               "--qi", f"b={tmp_path / 'b.csv'}", "--sensitive", "s", "--epsilon", "0.1",
               "--alpha", "0.2", "--delta", "0.9", "--gamma", "1.2", "--backend", "cpu",
               "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "steered node" in text and "least utility loss" in text
    summary = json.loads(out.read_text())
    np.testing.assert_allclose([summary["min_utility_loss"]["x"][v] for v in labels], sol.x,
                               atol=1e-6)
    assert summary["steer"]["steered"] == res.steered
    assert summary["min_privacy_loss"]["constraints"]["delta_distribution"]["met"] in (True, None)
