"""ARX's microaggregation inside a full-domain generalization: the optimum, the loss, the
checked nodes and the released table of ARX 3.9.2 on Adult (``tests/data/
arx_microaggregation.json``, from the runner call each case records; the release as a sha256
of its sorted rows), and the aggregates and the loss against plain references on small
tables."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.core.datatypes import java_double
from gpuppdp.engine.microaggregation import Aggregation, aggregate_classes
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.testing import ENGINE_BACKEND

with open(Path(__file__).parent / "data" / "arx_microaggregation.json", encoding="utf-8") as f:
    CASES = json.load(f)["cases"]
FAST = [c for c in CASES if c["id"] in ("mode-q4-k10-s2", "interval-cluster-q5-k5-s5")]
MORE = [c for c in CASES if c not in FAST]


@pytest.fixture(scope="module")
def adult():
    return datasets.adult()


def _check(adult, case):
    data, hierarchies = adult
    qids = case["quasi_identifiers"]
    result = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in qids}, k=case["k"],
                        suppression_limit=case["suppression_limit"], metric=case["metric"],
                        microaggregation=case["microaggregation"], types=case["types"],
                        others="insensitive", search="flash", backend=ENGINE_BACKEND,
                        seed=0).fit(data)
    exp = case["expected"]
    assert result.transformation == exp["transformation"]
    assert result.information_loss == exp["information_loss"]
    assert result.suppressed_records == exp["suppressed_records"]
    assert result.nodes_evaluated == exp["transformations_checked"]
    lines = sorted(";".join(row) for row in
                   result.released[exp["release_columns"]].astype(str).to_numpy().tolist())
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == exp["release_sha256"]


@pytest.mark.parametrize("case", FAST, ids=[c["id"] for c in FAST])
def test_arx_optimum_loss_and_release(adult, case):
    _check(adult, case)


@pytest.mark.parametrize("case", MORE, ids=[c["id"] for c in MORE])
def test_arx_optimum_loss_and_release_more_cases(adult, case):
    _check(adult, case)


# -- plain references on small tables ---------------------------------------------------------

def _small():
    rng = np.random.default_rng(3)
    n = 80
    table = pd.DataFrame({"zip": rng.choice(["1301", "1302", "1311", "1312"], n),
                          "sex": rng.choice(["m", "f"], n),
                          "age": rng.choice([21, 22, 35, 36, 37, 50, 51, 64], n).astype(str)})
    hierarchies = {
        "zip": Hierarchy.from_rows([[z, z[:3] + "*", "*"] for z in
                                    ["1301", "1302", "1311", "1312"]], name="zip"),
        "sex": Hierarchy.from_rows([["m", "*"], ["f", "*"]], name="sex")}
    return table, hierarchies


def _naive_loss(table, hierarchies, levels, k, aggregated):
    """ARX's loss of one node, written plainly: per generalized attribute the domain shares,
    the aggregated one charged ``|E| d_E / D`` (``|E|`` when suppressed), geometric mean."""
    names = list(hierarchies)
    gen = pd.DataFrame({c: table[c].map(dict(zip(hierarchies[c].labels(0),
                        hierarchies[c].labels(lv)[hierarchies[c].codes(lv)])))
                        for c, lv in zip(names, levels)})
    key = gen.apply(tuple, axis=1)
    n, values = len(table), []
    for c, lv in zip(names, levels):
        h, total = hierarchies[c], 0.0
        rows = len(h.leaves)
        for k_, idx in key.groupby(key, sort=False).groups.items():
            size = len(idx)
            if size < k:
                total += size
            else:
                label = gen.loc[idx[0], c]
                share = (h.labels(lv)[h.codes(lv)] == label).sum() / rows
                total += size * share
        lo = n / rows
        values.append(math.floor(max((total - lo) / (n - lo), 0.0) * 1e10) / 1e10)
    total, domain = 0.0, table[aggregated].nunique()
    for k_, idx in key.groupby(key, sort=False).groups.items():
        size = len(idx)
        total += size if size < k else size * (table.loc[idx, aggregated].nunique() / domain)
    values.append(math.floor(total / n * 1e10) / 1e10)
    g = 1.0
    for v in values:
        g *= math.pow(v + 1.0, 1.0 / len(values))
    return g - 1.0


def test_loss_of_every_node_matches_a_plain_reference():
    table, hierarchies = _small()
    result = Anonymizer(quasi_identifiers=hierarchies, k=4, suppression_limit=0.2,
                        microaggregation={"age": "median"}, search="exhaustive",
                        backend=ENGINE_BACKEND).fit(table)
    stats = result.evaluated_nodes
    for levels, il in zip(stats.levels, stats.information_loss):
        if not np.isnan(il):
            assert il == pytest.approx(_naive_loss(table, hierarchies, levels, 4, "age"),
                                       abs=1e-12)
    best = min(_naive_loss(table, hierarchies, lv, 4, "age") for lv, il in
               zip(stats.levels, stats.information_loss) if not np.isnan(il))
    assert result.information_loss == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("function", ["mean", "geomean", "median", "mode", "interval"])
def test_aggregates_match_pandas(function):
    rng = np.random.default_rng(5)
    values = rng.integers(0, 40, 200)
    cls = rng.integers(0, 12, 200)
    out = aggregate_classes(values.astype(str), cls, 12, Aggregation("x", function).typed(
        values.astype(str)))
    s = pd.Series(values).groupby(cls)
    expected = {"mean": s.mean().map(lambda m: str(int(math.floor(m + 0.5)))),
                "geomean": s.apply(lambda v: str(int(math.floor(
                    math.exp(np.log(v + 1.0).mean()) - 1.0 + 0.5)))),
                "median": s.median().map(lambda m: str(int(math.floor(m + 0.5)))),
                "interval": s.agg(lambda v: f"[{v.min()}, {v.max()}]")}
    if function == "mode":  # the most frequent value (ARX breaks ties by its hash order)
        counts = pd.crosstab(cls, values)
        for c in range(12):
            assert counts.loc[c, int(out[c])] == counts.loc[c].max()
    else:
        assert list(out) == list(expected[function])


def test_decimal_mean_is_written_as_java_writes_a_double():
    out = aggregate_classes(np.array(["1.5", "2.25", "10", "0.0001"]), np.array([0, 0, 1, 1]),
                            2, Aggregation("x", "mean").typed(["1.5"]))
    assert list(out) == ["1.875", "5.00005"]
    assert [java_double(x) for x in (1e7, 1.5e-5, 100.0)] == ["1.0E7", "1.5E-5", "100.0"]


def test_bad_configurations_name_the_column():
    table, hierarchies = _small()
    table["city"] = "x"
    with pytest.raises(InputError, match="'city'.*mean needs numbers"):
        Anonymizer(quasi_identifiers=hierarchies, k=2, others="insensitive",
                   microaggregation={"city": "mean"}).fit(table)
    with pytest.raises(InputError, match="must be one of"):
        Anonymizer(quasi_identifiers=hierarchies, k=2, microaggregation={"age": "avg"})
    with pytest.raises(InputError, match="precision"):
        Anonymizer(quasi_identifiers=hierarchies, k=2, metric="precision",
                   microaggregation={"age": "mean"})
    with pytest.raises(InputError, match="'age' is typed integer, but '2x'"):
        bad = table.assign(age=["2x"] + list(table["age"][1:]))
        Anonymizer(quasi_identifiers=hierarchies, k=2, others="insensitive",
                   types={"age": "integer"}, microaggregation={"age": "median"}).fit(bad)
