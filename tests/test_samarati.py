"""Samarati's k-minimal generalizations and preferences against a naive reference: every
node of small random lattices generalized with pandas, its suppressed records counted."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, Hierarchy
from gpuppdp.algorithms import KMinimalGeneralizations


def _table(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 160))
    a = Hierarchy([[str(v) for v in range(8)], [str(v // 2) for v in range(8)],
                   [str(v // 4) for v in range(8)], ["*"] * 8], name="a")
    b = Hierarchy([list("pqrstu"), list("ppqqrr"), ["*"] * 6], name="b")
    c = Hierarchy([["x", "y"], ["*", "*"]], name="c")
    data = pd.DataFrame({"a": rng.integers(0, 8, n).astype(str),
                         "b": rng.choice(list("pqrstu"), n, p=[.3, .3, .1, .1, .1, .1]),
                         "c": rng.choice(["x", "y"], n)})
    return data, {"a": a, "b": b, "c": c}


def _naive(data, hierarchies, k, limit):
    """Per node (levels tuple): (anonymous, suppressed, classes) by brute force."""
    out = {}
    ranges = [range(h.height + 1) for h in hierarchies.values()]
    for levels in itertools.product(*ranges):
        g = pd.DataFrame({c: h.generalize(data[c], lv)
                          for (c, h), lv in zip(hierarchies.items(), levels)})
        sizes = g.groupby(list(g.columns)).size()
        suppressed = int(sizes[sizes < k].sum())
        out[levels] = (suppressed <= int(np.floor(limit * len(data))), suppressed,
                       int((sizes >= k).sum()))
    return out


def _minimal(naive):
    return {lv for lv, (ok, _, _) in naive.items() if ok and not any(
        naive.get(lv[:j] + (lv[j] - 1,) + lv[j + 1:], (False,))[0]
        for j in range(len(lv)) if lv[j] > 0)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k,limit", [(2, 0.0), (3, 0.05), (5, 0.1)])
def test_k_minimal_generalizations_are_the_naive_ones(seed, k, limit):
    data, hierarchies = _table(seed)
    naive = _naive(data, hierarchies, k, limit)
    got = KMinimalGeneralizations(hierarchies, k=k, suppression_limit=limit,
                                  backend="cpu").fit(data)
    assert {tuple(d.values()) for d in got} == _minimal(naive)
    heights = [sum(d.values()) for d in got]
    assert heights == sorted(heights)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prefer", ["height", "precision", "classes", "suppression"])
def test_samarati_search_picks_a_k_minimal_node_by_preference(seed, prefer):
    data, hierarchies = _table(seed)
    k, limit = 3, 0.05
    naive = _naive(data, hierarchies, k, limit)
    minimal = _minimal(naive)
    result = Anonymizer(quasi_identifiers=hierarchies, k=k, suppression_limit=limit,
                        search="samarati", prefer=prefer, backend="cpu").fit(data)
    chosen = tuple(result.transformation.values())
    assert chosen in minimal
    heights = [h.height for h in hierarchies.values()]
    key = {"height": lambda lv: sum(lv),
           "precision": lambda lv: sum(v / h for v, h in zip(lv, heights)),
           "classes": lambda lv: -naive[lv][2],
           "suppression": lambda lv: naive[lv][1]}[prefer]
    assert key(chosen) == pytest.approx(min(key(lv) for lv in minimal))
    assert result.suppressed_records == naive[chosen][1]


def test_binary_search_probes_few_levels_and_finds_the_lowest_height():
    data, hierarchies = _table(9)
    naive = _naive(data, hierarchies, 3, 0.0)
    lowest = min(sum(lv) for lv, (ok, _, _) in naive.items() if ok)
    result = Anonymizer(quasi_identifiers=hierarchies, k=3, search="samarati",
                        backend="cpu").fit(data)
    assert sum(result.transformation.values()) == lowest
    probed = result.search.details["levels_probed"]
    height = sum(h.height for h in hierarchies.values())
    assert len(probed) <= 1 + int(np.ceil(np.log2(height + 1)))  # the top, then halving
    assert result.nodes_evaluated < len(naive)


def test_cli_samarati_with_preference(tmp_path):
    from gpuppdp.cli import main
    data, hierarchies = _table(3)
    src = tmp_path / "t.csv"
    data.to_csv(src, index=False)
    args = ["anonymize", str(src)]
    for name, h in hierarchies.items():
        path = tmp_path / f"{name}.csv"
        rows = np.stack([h.labels(lv)[h.codes(lv)] for lv in range(h.height + 1)], axis=1)
        pd.DataFrame(rows).to_csv(path, sep=";", header=False, index=False)
        args += ["--qi", f"{name}={path}"]
    args += ["--k", "3", "--suppression", "5%", "--search", "samarati", "--prefer", "classes",
             "--quiet", "--backend", "cpu", "--output", str(tmp_path / "o.csv"),
             "--json", str(tmp_path / "o.json")]
    assert main(args) == 0
    summary = json.load(open(tmp_path / "o.json"))
    assert summary["search"] == "samarati"
    naive = _naive(data, hierarchies, 3, 0.05)
    assert tuple(summary["transformation"].values()) in _minimal(naive)
