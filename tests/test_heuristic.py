"""Heuristic searches (:mod:`gpuppdp.engine.search.heuristic`): Lightning and the batched beam
search.

On small lattices (Adult extracts) they return an anonymous node no better than the optimum
of the exhaustive search, reach it with enough budget (evaluation budgets, no wall clock),
carry ``heuristic``/gap in the summary; ``flash`` switches to a heuristic above
``OPTIMAL_SEARCH_LIMIT``; releases pass the independent checker; the CLI's ``--time-limit``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.cli.main import main
from gpuppdp.engine.evaluate import LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.search import ExhaustiveSearch, heuristic, make_search
from gpuppdp.engine.search.heuristic import BeamSearch, LightningSearch, make_heuristic
from gpuppdp.models import DistinctLDiversity, KAnonymity

QIDS = ["sex", "age", "race", "education", "marital-status"]
ROWS = 800


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    return data.iloc[:ROWS].reset_index(drop=True), {q: hierarchies[q] for q in QIDS}


def anonymizer(adult, **kw):
    kw = {"k": 4, "suppression_limit": 0.04, "metric": "loss", "backend": "cpu",
          "others": "insensitive", "seed": 0, **kw}
    return Anonymizer(quasi_identifiers=adult[1], **kw)


def oracle_for(adult, metric="loss", models=(KAnonymity(4),), limit=0.04):
    evaluator = anonymizer(adult, models=list(models), k=None, metric=metric,
                           suppression_limit=limit, sensitive=["occupation"])._evaluator_for(
        adult[0])
    return LatticeOracle(evaluator, Lattice(evaluator.encoded.heights))


def optimum(adult, **kw):
    found = ExhaustiveSearch().run(oracle_for(adult, **kw))
    return found.optimum_stats["information_loss"]


@pytest.mark.parametrize("metric", ["loss", "discernibility", "precision"])
@pytest.mark.parametrize("search", [LightningSearch, BeamSearch])
def test_small_budget_gives_anonymous_node_no_better_than_optimum(adult, search, metric):
    best = optimum(adult, metric=metric)
    found = search(time_limit=None, max_evaluations=3).run(oracle_for(adult, metric=metric))
    assert found.optimum is not None and found.optimum_stats["anonymous"]
    assert found.optimum_stats["information_loss"] >= best
    d = found.details
    assert d["heuristic"] and d["stopped"] == "evaluations" and d["time_limit"] is None
    assert d["best_lower_bound"] <= found.optimum_stats["information_loss"]
    assert d["gap"] == pytest.approx(found.optimum_stats["information_loss"]
                                     - d["best_lower_bound"])


@pytest.mark.parametrize("metric", ["loss", "discernibility", "precision"])
@pytest.mark.parametrize("name", ["lightning", "beam"])
def test_enough_budget_reaches_the_optimum(adult, name, metric):
    oracle = oracle_for(adult, metric=metric)
    found = make_heuristic(name, oracle.evaluator, max_evaluations=10 ** 6).run(oracle)
    assert found.optimum_stats["information_loss"] == optimum(adult, metric=metric)
    assert found.details["stopped"] == "exhausted" and found.details["gap"] == 0.0
    assert found.nodes_evaluated <= oracle.lattice.size


def test_non_monotonic_model_still_anonymous(adult):
    """l-diversity with suppression is not monotonic: the beam gives no optimality claim."""
    models = (KAnonymity(2), DistinctLDiversity("occupation", 2))
    best = optimum(adult, models=models)
    for name in ("lightning", "beam"):
        oracle = oracle_for(adult, models=models)
        found = make_heuristic(name, oracle.evaluator, max_evaluations=50).run(oracle)
        assert found.optimum_stats["anonymous"]
        assert found.optimum_stats["information_loss"] >= best


def test_summary_carries_heuristic_and_gap(adult):
    for search in ("lightning", "beam"):
        result = anonymizer(adult, search=search, time_limit=600).fit(adult[0])
        s = result.summary()
        assert s["search"] == search and s["heuristic"] is True
        assert s["time_limit"] == 600
        assert s["gap"] == pytest.approx(s["information_loss"] - s["best_lower_bound"])
        assert 0 <= s["relative_gap"] <= 1
        json.dumps(s)
    assert anonymizer(adult).fit(adult[0]).summary()["heuristic"] is False


def test_flash_switches_above_the_limit(adult, monkeypatch):
    monkeypatch.setattr(heuristic, "OPTIMAL_SEARCH_LIMIT", 10)
    with pytest.warns(UserWarning, match="OPTIMAL_SEARCH_LIMIT"):
        result = anonymizer(adult, time_limit=600).fit(adult[0])
    s = result.summary()
    assert s["search"] == heuristic.AUTO_HEURISTIC and s["heuristic"] is True
    assert "OPTIMAL_SEARCH_LIMIT" in s["note"]
    # below the limit flash stays flash
    monkeypatch.setattr(heuristic, "OPTIMAL_SEARCH_LIMIT", 10 ** 7)
    assert anonymizer(adult).fit(adult[0]).summary()["search"] == "flash"


def test_make_search_heuristics(adult):
    evaluator = oracle_for(adult).evaluator
    assert isinstance(make_search("lightning", evaluator, time_limit=5), LightningSearch)
    assert make_search("beam", evaluator).time_limit == heuristic.DEFAULT_TIME_LIMIT
    assert make_search("flash", evaluator, lattice_size=10 ** 8).note
    with pytest.raises(ValueError, match="time_limit"):
        LightningSearch(time_limit=0)
    with pytest.raises(ValueError, match="time_limit"):
        anonymizer(adult, search="beam", time_limit=-1)


def test_heuristic_release_passes_the_checker(adult):
    result = anonymizer(adult, search="beam", time_limit=600).fit(adult[0])
    released = result.released
    measured = check(released, quasi_identifiers=QIDS, backend="cpu")
    assert measured["k"] >= 4
    assert measured["suppressed_rows"] == result.suppressed_records <= 0.04 * ROWS
    kept = released[~(released[QIDS] == "*").all(axis=1)]
    assert kept.groupby(QIDS).size().min() >= 4 and len(released) == ROWS


def test_many_qids_without_lattice_sized_arrays():
    """20 QIDs of 5 levels (5**20 ~ 1e14 nodes, beyond any array): a few evaluations."""
    import pandas as pd

    from gpuppdp.hierarchy import Hierarchy
    rng = np.random.default_rng(0)
    data = pd.DataFrame({f"a{i}": rng.integers(0, 20, 300).astype(str) for i in range(20)})
    rows = [[str(v), f"{v // 4}", f"{v // 8}", f"{v // 16}", "*"] for v in range(20)]
    hier = {c: Hierarchy(list(zip(*rows)), name=c) for c in data.columns}
    for search in ("lightning", "beam"):
        oracle_search = Anonymizer(quasi_identifiers=hier, k=3, suppression_limit=0.1,
                                   backend="cpu", search=search)
        evaluator = oracle_search._evaluator_for(data)
        oracle = LatticeOracle(evaluator, Lattice(evaluator.encoded.heights))
        assert oracle.lattice.size == 5 ** 20
        found = make_heuristic(search, evaluator, max_evaluations=60).run(oracle)
        assert found.optimum_stats["anonymous"]
        assert found.details["stopped"] == "evaluations"


def test_cli_time_limit_and_heuristic_line(capsys, tmp_path, adult):
    path = tmp_path / "in.csv"
    adult[0][QIDS].to_csv(path, index=False)
    argv = ["anonymize", str(path), "--k", "4", "--suppression", "4%", "--quiet",
            "--output", str(tmp_path / "out.csv"), "--json", str(tmp_path / "s.json")]
    for q in QIDS:
        argv += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    assert main(argv + ["--search", "lightning", "--time-limit", "600"]) == 0
    out = capsys.readouterr().out
    assert "heuristic result" in out and "lightning" in out
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["heuristic"] is True and s["time_limit"] == 600 and "gap" in s
    assert main(argv) == 0
    assert "heuristic result" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--time-limit", "0"])
    assert exc.value.code == 2
    assert "positive seconds" in capsys.readouterr().err

