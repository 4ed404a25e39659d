"""The reconstruction attack (:mod:`gpuppdp.attacks.reconstruct`): the published worked example
of Garfinkel, Abowd and Martindale, hand-counted medians of odd and even groups, an
independent brute-force enumeration of every table, inconsistent (noisy) statistics, the
recovered shares, parameter errors and the ``gpuppdp attack reconstruct`` command."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuppdp.attacks import (
    ReconstructionError,
    load_statistics,
    match_records,
    reconstruct,
    tabulate,
)
from gpuppdp.attacks.reconstruct import groups_by
from gpuppdp.cli.main import main

DATA = Path(__file__).parent / "data"
GARFINKEL = DATA / "reconstruct_garfinkel_block.json"

# Garfinkel, Abowd and Martindale (2018), the block's 7 people (their Table 2 / the solved
# table of the paper's sources): age, sex, race, marital status.
_B, _W = "Black or African American", "White"
GARFINKEL_PEOPLE = pd.DataFrame(
    [(8, "Female", _B, "Single"), (18, "Male", _W, "Single"), (24, "Female", _W, "Single"),
     (30, "Male", _W, "Married"), (36, "Female", _B, "Married"), (66, "Female", _B, "Married"),
     (84, "Male", _B, "Married")], columns=["age", "sex", "race", "marital"])


def _sorted(df: pd.DataFrame) -> list[tuple]:
    return sorted(map(tuple, df.astype({"age": int}).itertuples(index=False)))


# -- the published example ---------------------------------------------------------------------
def test_garfinkel_table1_matches_the_people():
    """The statistics file (the paper's Table 1, typed by hand) is what the 7 people give:
    counts, means to one decimal, medians, and (D) exactly where fewer than 3 people are."""
    stats = load_statistics(GARFINKEL)
    groups = [st["group"] for st in stats["statistics"]]
    mine = tabulate(GARFINKEL_PEOPLE, stats["attributes"], groups, suppression_threshold=3)
    for published, computed in zip(stats["statistics"], mine["statistics"]):
        assert published.get("suppressed", False) == computed.get("suppressed", False)
        for key in ("count", "mean", "median"):
            assert published.get(key) == computed.get(key), (published, computed)


def test_garfinkel_block_reconstructed_uniquely():
    result = reconstruct(str(GARFINKEL), truth=GARFINKEL_PEOPLE)
    assert result.consistent is True
    assert result.unique is True and result.complete
    assert _sorted(result.records) == _sorted(GARFINKEL_PEOPLE)
    assert result.recovered_exact == 1.0 and result.recovered_within_1 == 1.0
    assert _sorted(result.certain) == _sorted(GARFINKEL_PEOPLE)
    assert result.solves == 2  # the table, then the proof that no other exists


def test_garfinkel_without_married_adults_is_ambiguous_and_every_table_fits():
    """Drop statistic 3B: several tables remain; each reproduces every published statistic,
    and the true one is among them."""
    stats = load_statistics(GARFINKEL)
    stats["statistics"] = [st for st in stats["statistics"] if st.get("label") != "3B"]
    result = reconstruct(stats, all_solutions=True, max_solutions=200)
    assert result.unique is False and result.complete
    assert len(result.solutions) > 1
    groups = [st["group"] for st in stats["statistics"]]
    for table in result.solutions:
        again = tabulate(table, stats["attributes"], groups, suppression_threshold=3)
        assert again["statistics"] == tabulate(
            GARFINKEL_PEOPLE, stats["attributes"], groups,
            suppression_threshold=3)["statistics"]
        assert (table.loc[table.marital == "Married", "age"] >= 15).all()  # the rule
    found = {tuple(_sorted(t)) for t in result.solutions}
    assert len(found) == len(result.solutions)  # no table twice
    assert tuple(_sorted(GARFINKEL_PEOPLE)) in found
    certain = _sorted(result.certain)
    for table in result.solutions:  # in every table
        rest = _sorted(table)
        for rec in certain:
            rest.remove(rec)


# -- medians, by hand ---------------------------------------------------------------------------
def _ages(lo, hi, **stat):
    return {"attributes": {"age": {"min": lo, "max": hi, "integer": True}},
            "statistics": [{"group": {}, **stat}]}


def _age_sets(result) -> set[tuple]:
    return {tuple(sorted(t["age"].tolist())) for t in result.solutions}


def test_odd_median_by_hand():
    # 3 people aged 0..4, median 2, mean 2: a <= 2 <= c and a + c = 4
    result = reconstruct(_ages(0, 4, count=3, median=2, mean=2), all_solutions=True)
    assert _age_sets(result) == {(0, 2, 4), (1, 2, 3), (2, 2, 2)}
    assert result.complete and result.unique is False


def test_even_median_by_hand():
    # 4 people aged 0..5, median 2.5 (b + c = 5), mean 2.5 (a + d = 5), a <= b <= c <= d
    result = reconstruct(_ages(0, 5, count=4, median=2.5, mean=2.5, decimals=1),
                         all_solutions=True)
    expected = {(a, b, 5 - b, 5 - a) for b in (0, 1, 2) for a in range(0, b + 1)}
    assert len(expected) == 6
    assert _age_sets(result) == expected


def test_rounded_median_widens_the_window():
    # 2 people aged 0..3, median published as 2 with no decimals: (a + b)/2 in [1.5, 2.5]
    result = reconstruct(_ages(0, 3, count=2, median=2, decimals=0), all_solutions=True)
    expected = {(a, b) for a in range(4) for b in range(a, 4) if 3 <= a + b <= 5}
    assert _age_sets(result) == expected


# -- an independent check: every table, by brute force ------------------------------------------
ATTRS = {"age": {"min": 0, "max": 5, "integer": True}, "sex": ["F", "M"]}
GROUPS = [{}, {"sex": "F"}, {"sex": "M"}, {"age": [3, None]}]


def _brute_force(stats: dict, size: int) -> set[tuple]:
    """Every multiset of ``size`` records whose statistics are exactly ``stats``."""
    types = [(a, s) for a in range(6) for s in ("F", "M")]
    out = set()
    for combo in itertools.combinations_with_replacement(types, size):
        table = pd.DataFrame(list(combo), columns=["age", "sex"])
        if tabulate(table, ATTRS, GROUPS, suppression_threshold=2)["statistics"] \
                == stats["statistics"]:
            out.add(tuple(sorted(combo)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("size", [3, 4])
def test_every_table_found_matches_brute_force(seed, size):
    rng = np.random.default_rng(seed)
    truth = pd.DataFrame({"age": rng.integers(0, 6, size),
                          "sex": rng.choice(["F", "M"], size)})
    stats = tabulate(truth, ATTRS, GROUPS, suppression_threshold=2)
    result = reconstruct(stats, all_solutions=True, max_solutions=1000, truth=truth)
    assert result.complete
    found = {tuple(sorted(zip(t["age"].tolist(), t["sex"].tolist())))
             for t in result.solutions}
    assert found == _brute_force(stats, size)
    assert result.unique == (len(found) == 1)
    assert result.recovered_exact == 1.0 or not result.unique


def test_suppressed_includes_zero():
    # 3 people, the men suppressed (fewer than 2): 0 or 1 man
    stats = {"attributes": {"sex": ["F", "M"]}, "suppression_threshold": 2,
             "statistics": [{"group": {}, "count": 3}, {"group": {"sex": "M"},
                                                         "suppressed": True}]}
    result = reconstruct(stats, all_solutions=True)
    men = sorted(int((t.sex == "M").sum()) for t in result.solutions)
    assert men == [0, 1]


def test_rules_restrict_the_record_types():
    stats = {"attributes": {"age": {"min": 0, "max": 20, "integer": True},
                            "marital": ["Single", "Married"]},
             "rules": [{"if": {"marital": "Married"}, "then": {"age": [15, 125]}}],
             "statistics": [{"group": {"marital": "Married"}, "count": 1, "mean": 14,
                             "decimals": 0}]}
    # mean 14 rounded: 13.5..14.5, but a married person is at least 15
    with pytest.raises(ReconstructionError, match="inconsistent"):
        reconstruct(stats, on_inconsistent="error")
    stats["rules"] = []
    assert reconstruct(stats).records["age"].tolist() == [14]


# -- inconsistent (noisy) statistics -------------------------------------------------------------
def test_inconsistent_statistics_give_the_closest_table():
    stats = {"attributes": {"age": {"min": 0, "max": 9, "integer": True}, "sex": ["F", "M"]},
             "statistics": [{"group": {}, "count": 3},
                            {"group": {"sex": "F"}, "count": 2},
                            {"group": {"sex": "M"}, "count": 2}]}
    with pytest.raises(ReconstructionError, match="inconsistent"):
        reconstruct(stats, on_inconsistent="error")
    result = reconstruct(stats)
    assert result.consistent is False
    assert result.deviation == pytest.approx(1.0)  # one count off by one
    assert len(result.records) in (3, 4)


# -- recovered shares ---------------------------------------------------------------------------
def test_match_records_exact_and_within_one():
    rec = pd.DataFrame({"age": [10, 21, 30, 40], "sex": ["F", "F", "F", "M"]})
    truth = pd.DataFrame({"age": [10, 20, 35, 41], "sex": ["F", "F", "F", "F"]})
    exact, within = match_records(rec, truth, numeric=["age"])
    assert exact == pytest.approx(1 / 4)
    assert within == pytest.approx(2 / 4)  # 10=10, 21~20; 35 and 41 (F) have no partner


# -- parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stats, message", [
    (_ages(0, 5, median=2), "needs the group's count"),
    ({"attributes": {"age": {"min": 0, "max": 5, "integer": False}},
      "statistics": [{"group": {}, "count": 1}]}, "integer-valued"),
    ({"attributes": {"sex": ["F", "M"]}, "statistics": [{"group": {"race": "W"}, "count": 1}]},
     "unknown attribute 'race'"),
    ({"attributes": {"sex": ["F", "M"]}, "statistics": [{"group": {"sex": "X"}, "count": 1}]},
     "not in the domain"),
    ({"attributes": {"sex": ["F", "M"]}, "statistics": [{"group": {}, "suppressed": True}]},
     "suppression_threshold"),
    ({"attributes": {"sex": ["F", "M"]}, "statistics": [{"group": {}, "count": 1.5}]},
     "count must be an integer"),
    ({"attributes": {"sex": ["F", "M"]}, "statistics": [{"group": {}, "cnt": 1}]},
     "unknown key"),
])
def test_bad_statistics_are_named(stats, message):
    with pytest.raises(ValueError, match=message):
        reconstruct(stats)


def test_bad_parameters():
    stats = _ages(0, 3, count=1)
    with pytest.raises(ValueError, match="solver"):
        reconstruct(stats, solver="cplex")
    with pytest.raises(ValueError, match="time_limit"):
        reconstruct(stats, time_limit=0)
    with pytest.raises(ValueError, match="max_types"):
        reconstruct(_ages(0, 10 ** 6, count=1), max_types=1000)


# -- the command --------------------------------------------------------------------------------
def test_cli_reconstruct_writes_records_and_summary(tmp_path, capsys):
    truth = tmp_path / "truth.csv"
    GARFINKEL_PEOPLE.to_csv(truth, index=False)
    out, summary = tmp_path / "records.csv", tmp_path / "summary.json"
    rc = main(["attack", "reconstruct", str(GARFINKEL), "--output", str(out),
               "--json", str(summary), "--truth", str(truth)])
    assert rc == 0
    records = pd.read_csv(out)
    assert _sorted(records) == _sorted(GARFINKEL_PEOPLE)
    info = json.loads(summary.read_text())
    assert info["unique"] is True and info["records"] == 7
    assert info["recovered_exact"] == 1.0
    assert "unique: yes" in capsys.readouterr().out


def test_cli_all_solutions_numbers_the_tables(tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(_ages(0, 4, count=3, median=2, mean=2)))
    out = tmp_path / "all.csv"
    assert main(["attack", "reconstruct", str(stats), "--output", str(out),
                 "--all-solutions"]) == 0
    table = pd.read_csv(out)
    assert sorted(table["solution"].unique().tolist()) == [1, 2, 3]
    assert (table.groupby("solution")["age"].median() == 2).all()


def test_cli_bad_statistics_one_line(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(_ages(0, 5, median=2)))
    out = tmp_path / "r.csv"
    assert main(["attack", "reconstruct", str(stats), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuppdp: error:") and err.count("\n") == 1
    assert not out.exists()


def test_groups_by():
    attrs = {"sex": ["F", "M"], "race": ["B", "W"]}
    groups = groups_by(attrs, ("sex",), ("sex", "race"))
    assert groups[0] == {} and len(groups) == 1 + 2 + 4
    assert {"sex": "M", "race": "W"} in groups
    assert copy.deepcopy(groups) == groups
