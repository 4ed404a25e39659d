"""DP releases on the engine's encoding: contingency tables, class counts, group statistics."""

import math
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from gpuppdp.dp import (
    OTHER,
    BudgetAccountant,
    BudgetError,
    DataDomainError,
    GeometricMechanism,
    OutOfDomainError,
    RandomSource,
    dp_class_counts,
    dp_group_stats,
    dp_histogram,
    dp_query,
)
from gpuppdp.hierarchy import Hierarchy

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")

HUGE_EPS = 60.0  # noise is then 0 with probability 1 - 1e-26: the exact table shows through


@pytest.fixture
def people():
    return pd.DataFrame({
        "age": ["21", "22", "35", "36", "37", "22", "21", "58"],
        "sex": ["f", "m", "m", "f", "m", "m", "f", "f"],
        "income": [10.0, 20.0, 30.0, 40.0, 500.0, 20.0, 10.0, -5.0],
    })


@pytest.fixture
def hierarchies():
    ages = [str(a) for a in range(20, 60)]
    decade = [f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in range(20, 60)]
    age = Hierarchy([ages, decade, ["*"] * len(ages)], name="age")
    sex = Hierarchy([["m", "f", "x"], ["*", "*", "*"]], name="sex")
    return {"age": age, "sex": sex}


def src(backend, seed=0):
    return RandomSource(backend, seed=seed, insecure=True)  # tests: reproducible by design


def test_contingency_table_has_every_cell_at_the_requested_level(backend, people, hierarchies):
    table = dp_histogram(people, ["age", "sex"], epsilon=HUGE_EPS, hierarchies=hierarchies,
                         levels={"age": 1}, random=src(backend))
    # all 4 decades x 3 sexes, empty cells included, in hierarchy label order
    assert len(table) == 12
    assert table[["age", "sex"]].head(3).values.tolist() == [
        ["20-29", "m"], ["20-29", "f"], ["20-29", "x"]]
    exact = (pd.DataFrame({"age": hierarchies["age"].generalize(people["age"], 1),
                           "sex": people["sex"]}).value_counts())
    got = table.set_index(["age", "sex"])["count"]
    for (age, sex), n in got.items():
        assert n == exact.get((age, sex), 0)
    assert table["count"].dtype.kind == "i"
    dp = table.attrs["dp"]
    assert dp["epsilon"] == HUGE_EPS and dp["cells"] == 12
    assert dp["queries"]["count"]["mechanism"] == "geometric"
    assert dp["queries"]["count"]["sensitivity"] == 1
    assert dp["post_processing"] == ["clamped at 0"]
    assert dp["seeded"] and dp["backend"] == backend.name


def test_top_level_is_one_noisy_total(backend, people, hierarchies):
    table = dp_histogram(people, "age", epsilon=HUGE_EPS, hierarchies=hierarchies,
                         levels={"age": 2}, random=src(backend))
    assert table.values.tolist() == [["*", 8]]


def test_noise_is_calibrated_and_clamped(backend, hierarchies):
    data = pd.DataFrame({"sex": ["m"] * 500 + ["f"] * 300})
    counts = []
    for seed in range(40):
        table = dp_histogram(data, "sex", epsilon=0.5, hierarchies=hierarchies,
                             clamp=False, random=src(backend, seed))
        counts.append(table["count"].to_numpy())
    counts = np.array(counts)
    mech = table.attrs["dp"]["queries"]["count"]
    assert mech["scale"] == pytest.approx(2.0, rel=1e-12)  # Δ/ε = 1/0.5 (ε kept, not exceeded)
    err = counts - np.array([500, 300, 0])
    assert abs(err.mean()) < 5 * mech["std"] / math.sqrt(err.size)
    assert np.abs(err).mean() == pytest.approx(mech["expected_abs_error"], rel=0.35)
    assert (counts[:, 2] < 0).any()  # the empty cell 'x' is noisy too, negative without clamp
    clamped = dp_histogram(data, "sex", epsilon=0.5, hierarchies=hierarchies,
                           random=src(backend, 3))
    assert (clamped["count"] >= 0).all()


def test_replace_neighbours_double_the_sensitivity(backend, people, hierarchies):
    table = dp_histogram(people, "sex", epsilon=1.0, hierarchies=hierarchies,
                         neighbouring="replace", random=src(backend))
    assert table.attrs["dp"]["queries"]["count"]["sensitivity"] == 2
    assert table.attrs["dp"]["queries"]["count"]["scale"] == pytest.approx(2.0, rel=1e-12)


def test_laplace_counts_are_rounded(backend, people, hierarchies):
    table = dp_histogram(people, "sex", epsilon=HUGE_EPS, hierarchies=hierarchies,
                         mechanism="laplace", random=src(backend))
    assert table["count"].tolist() == [4, 4, 0]
    assert table.attrs["dp"]["post_processing"] == ["rounded to integers", "clamped at 0"]
    raw = dp_histogram(people, "sex", epsilon=1.0, hierarchies=hierarchies, mechanism="laplace",
                       rounding=False, clamp=False, random=src(backend))
    assert raw["count"].dtype == np.float64 and raw.attrs["dp"]["post_processing"] == []


def test_accountant_is_charged_before_noise(backend, people, hierarchies):
    acc = BudgetAccountant(1.0)
    dp_histogram(people, "sex", epsilon=0.75, hierarchies=hierarchies, random=src(backend),
                 accountant=acc)
    assert acc.spent == 0.75 and "sex" in acc.ledger[0].label
    with pytest.raises(BudgetError, match="0.25 remaining"):
        dp_histogram(people, "sex", epsilon=0.5, hierarchies=hierarchies,
                     random=src(backend), accountant=acc)
    assert acc.spent == 0.75


def test_column_without_a_public_domain_is_refused(backend, people):
    """A domain read from the data is not protected: refused unless declared public."""
    with pytest.raises(DataDomainError, match=r"'sex' have no public domain.*public_domain"):
        dp_histogram(people, "sex", epsilon=HUGE_EPS, random=src(backend))
    table = dp_histogram(people, "sex", epsilon=HUGE_EPS, public_domain=True,
                         random=src(backend))
    assert table.values.tolist() == [["f", 4], ["m", 4]]
    assert table.attrs["dp"]["domain_from_data"] == ["sex"]
    # the same by naming the column, or by giving the domain explicitly (then not from data)
    named = dp_histogram(people, "sex", epsilon=HUGE_EPS, public_domain=["sex"],
                         random=src(backend))
    assert named.values.tolist() == table.values.tolist()
    listed = dp_histogram(people, "sex", epsilon=HUGE_EPS, domains={"sex": ["m", "f", "x"]},
                          random=src(backend))
    assert listed.values.tolist() == [["m", 4], ["f", 4], ["x", 0]]
    assert listed.attrs["dp"]["domain_from_data"] == []
    with pytest.raises(ValueError, match="public_domain names 'age'"):
        dp_histogram(people, "sex", epsilon=1.0, public_domain=["age"], random=src(backend))
    with pytest.raises(DataDomainError):  # group statistics follow the same rule
        dp_group_stats(people, "sex", "income", epsilon=1.0, lower=0, upper=10,
                       random=src(backend))


def test_neighbouring_tables_give_the_same_rows_or_are_refused(backend, people, hierarchies):
    """One more person with a value never seen before: with a public domain the output has the
    same rows (only counts move); without one the release is refused, for both tables."""
    neighbour = pd.concat([people, pd.DataFrame({"age": ["44"], "sex": ["x"], "income": [1.0]})],
                          ignore_index=True)
    released = pd.DataFrame({"age": ["20-29", "30-39", "20-29"], "sex": ["f", "m", "m"]})
    released_neighbour = pd.concat([released, pd.DataFrame({"age": ["40-49"], "sex": ["x"]})],
                                   ignore_index=True)
    for table, other in ((people, neighbour), (released, released_neighbour)):
        if table is people:
            def run(t, **kw):
                return dp_histogram(t, ["age", "sex"], epsilon=1.0, levels={"age": 1},
                                    random=src(backend), **kw)
        else:
            def run(t, **kw):
                return dp_class_counts(t, ["age", "sex"], epsilon=1.0, levels={"age": 1},
                                       random=src(backend), **kw)
        a = run(table, hierarchies=hierarchies)
        b = run(other, hierarchies=hierarchies)
        assert a[["age", "sex"]].values.tolist() == b[["age", "sex"]].values.tolist()
        for t in (table, other):
            with pytest.raises(DataDomainError):
                run(t, hierarchies={"age": hierarchies["age"]})  # 'sex' from the data
    # declared public, the class list of the released table follows the data (the caller's
    # declaration): one class more
    a = dp_class_counts(released, ["age", "sex"], epsilon=1.0, public_domain=True,
                        random=src(backend))
    b = dp_class_counts(released_neighbour, ["age", "sex"], epsilon=1.0, public_domain=True,
                        random=src(backend))
    assert len(b) == len(a) + 1 and a.attrs["dp"]["domain_from_data"] == ["age", "sex"]


def test_values_outside_the_domain_are_refused_without_naming_them(backend, people,
                                                                   hierarchies):
    people.loc[0, "age"] = "99"
    people.loc[1, "age"] = "Alice Smith, 1971-03-02"
    with pytest.raises(OutOfDomainError) as info:
        dp_histogram(people, "age", epsilon=1.0, hierarchies=hierarchies, random=src(backend))
    message = str(info.value)
    assert "'age'" in message and "outside its public domain" in message
    for leak in ("99", "Alice", "1971", " 2 ", "2 row", "(2)"):
        assert leak not in message
    assert info.value.__context__ is None and info.value.__cause__ is None
    # or counted in an "(other)" cell, which is released whether or not anything falls in it
    table = dp_histogram(people, "age", epsilon=HUGE_EPS, levels={"age": 1},
                         hierarchies=hierarchies, unknown="other", random=src(backend))
    assert table["age"].tolist() == ["20-29", "30-39", "40-49", "50-59", OTHER]
    assert table["count"].tolist() == [2, 3, 0, 1, 2]
    clean = dp_histogram(people.iloc[2:], "age", epsilon=HUGE_EPS, levels={"age": 1},
                         hierarchies=hierarchies, unknown="other", random=src(backend))
    assert clean["age"].tolist() == table["age"].tolist() and clean["count"].iloc[-1] == 0
    # or dropped: the table keeps its public shape, the release never says how many
    dropped = dp_histogram(people, "age", epsilon=HUGE_EPS, levels={"age": 1},
                           hierarchies=hierarchies, unknown="drop", random=src(backend))
    assert dropped["age"].tolist() == ["20-29", "30-39", "40-49", "50-59"]
    assert dropped["count"].tolist() == [2, 3, 0, 1]
    assert dropped.attrs["dp"]["out_of_domain"] == "dropped (how many is not released)"
    with pytest.raises(ValueError, match="unknown must be one of"):
        dp_histogram(people, "age", epsilon=1.0, hierarchies=hierarchies, unknown="skip",
                     random=src(backend))
    people.loc[0, "sex"] = None  # a missing value is outside the domain too
    with pytest.raises(OutOfDomainError):
        dp_histogram(people.iloc[:1], "sex", epsilon=1.0, hierarchies=hierarchies,
                     random=src(backend))


def test_releases_record_delta(backend, people, hierarchies):
    acc = BudgetAccountant(10.0)
    table = dp_histogram(people, "sex", epsilon=1.0, hierarchies=hierarchies,
                         random=src(backend), accountant=acc)
    dp = table.attrs["dp"]
    assert 0 < dp["delta"] < 1e-150 and dp["delta"] == dp["queries"]["count"]["delta"]
    assert acc.ledger[-1].delta == dp["delta"]
    stats = dp_group_stats(people, "sex", "income", epsilon=1.0, lower=0, upper=100,
                           hierarchies=hierarchies, random=src(backend), accountant=acc)
    q = stats.attrs["dp"]["queries"]
    assert stats.attrs["dp"]["delta"] == q["count"]["delta"] + q["sum"]["delta"] > 0
    assert acc.spent_delta == pytest.approx(dp["delta"] + stats.attrs["dp"]["delta"])
    replaced = dp_histogram(people, "sex", epsilon=1.0, hierarchies=hierarchies,
                            neighbouring="replace", random=src(backend))
    two = GeometricMechanism(epsilon=1.0, sensitivity=2)  # two cells change: two coordinates
    assert replaced.attrs["dp"]["delta"] == two.delta == 2 * two.sampler.top_probability


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(by="nope"), ValueError, "'nope' not in the data"),
    (dict(by=[]), ValueError, "at least one column"),
    (dict(by="age", levels={"age": 5}), ValueError, r"must be in 0\.\.2"),
    (dict(by="sex", levels={"age": 1}), ValueError, "not among the grouping columns"),
    (dict(by="income", levels={"income": 1}), ValueError, "needs a hierarchy"),
    (dict(by=["age", "sex"], max_cells=10), ValueError, "120 cells, more than max_cells=10"),
    (dict(by="sex", mechanism="cauchy"), ValueError, "mechanism must be one of"),
    (dict(by="sex", epsilon=0), ValueError, "epsilon must be a finite number > 0"),
    (dict(by="sex", neighbouring="swap"), ValueError, "neighbouring must be one of"),
])
def test_invalid_requests(backend, people, hierarchies, kwargs, error, match):
    kwargs = {"epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        dp_histogram(people, hierarchies=hierarchies, random=src(backend), **kwargs)


def test_class_counts_of_a_released_table(backend, hierarchies):
    released = pd.DataFrame({"age": ["20-29", "20-29", "30-39", "*", "30-39", "20-29"],
                             "zip": ["481**", "481**", "482**", "*", "482**", "481**"],
                             "disease": ["flu", "hiv", "flu", "flu", "cold", "flu"]})
    with pytest.raises(DataDomainError, match="'age', 'zip'"):
        dp_class_counts(released, ["age", "zip"], epsilon=1.0, random=src(backend))
    # the caller declares the class list public (the released table is published)
    table = dp_class_counts(released, ["age", "zip"], epsilon=HUGE_EPS, public_domain=True,
                            random=src(backend))
    assert table.values.tolist() == [["*", "*", 1], ["20-29", "481**", 3],
                                     ["30-39", "482**", 2]]
    assert table.attrs["dp"]["cells"] == 3
    noisy = dp_class_counts(released, ["age", "zip"], epsilon=1.0, mechanism="laplace",
                            public_domain=True, random=src(backend))
    assert noisy.attrs["dp"]["queries"]["count"]["mechanism"] == "laplace"
    # with the hierarchy's level and an explicit domain: every combination, suppressed rows
    # in the "(other)" cells
    full = dp_class_counts(released, ["age", "zip"], epsilon=HUGE_EPS,
                           hierarchies={"age": hierarchies["age"]}, levels={"age": 1},
                           domains={"zip": ["481**", "482**"]}, unknown="other",
                           random=src(backend))
    assert len(full) == 5 * 3 and full.attrs["dp"]["domain_from_data"] == []
    counts = full.set_index(["age", "zip"])["count"]
    assert counts[("20-29", "481**")] == 3 and counts[("30-39", "482**")] == 2
    assert counts[(OTHER, OTHER)] == 1 and counts.sum() == len(released)


def test_group_mean_and_sum(backend, people, hierarchies):
    # epsilon so large that the count noise is 0 (probability 1e-130) and the sum noise small
    table = dp_group_stats(people, "sex", "income", epsilon=600.0, lower=0, upper=100,
                           hierarchies=hierarchies, random=src(backend))
    assert list(table.columns) == ["sex", "count", "sum", "mean"]
    by_sex = table.set_index("sex")
    # clipped to [0, 100]: m = 20 + 30 + 100 + 20, f = 10 + 40 + 10 + 0
    assert by_sex.loc["m", "count"] == 4 and by_sex.loc["f", "count"] == 4
    assert by_sex.loc["m", "sum"] == pytest.approx(170, abs=10)  # noise scale 1/3
    assert by_sex.loc["f", "mean"] == pytest.approx(15, abs=2.5)
    assert 0 <= by_sex.loc["x", "mean"] <= 100  # empty group: a noisy, clipped value
    dp = table.attrs["dp"]
    assert dp["queries"]["count"]["epsilon"] == pytest.approx(300)
    assert dp["queries"]["sum"]["sensitivity"] == 100
    sums = dp_group_stats(people, "sex", "income", epsilon=1.0, lower=-10, upper=100,
                          statistic="sum", neighbouring="replace", hierarchies=hierarchies,
                          random=src(backend))
    assert list(sums.columns) == ["sex", "sum"]
    assert sums.attrs["dp"]["queries"]["sum"]["sensitivity"] == 200
    with pytest.raises(ValueError, match="epsilon=5e\\+06 is too large"):
        dp_group_stats(people, "sex", "income", epsilon=1e7, lower=0, upper=100,
                       hierarchies=hierarchies, random=src(backend))


def test_group_stats_charge_the_whole_epsilon(backend, people, hierarchies):
    acc = BudgetAccountant(1.0)
    dp_group_stats(people, "sex", "income", epsilon=0.6, lower=0, upper=100,
                   hierarchies=hierarchies, random=src(backend), accountant=acc)
    assert acc.spent == pytest.approx(0.6)


def test_release_options_reach_group_stats_and_queries(people):
    """dp_group_stats and dp_query take the cells, the relation, the source and the
    accountant (ReleaseOptions): each keyword reaches its use, another one
    is refused."""
    acc = BudgetAccountant(10.0, neighbouring="replace")
    releases = [
        lambda **o: dp_group_stats(people, "sex", "income", epsilon=1.0, lower=0, upper=10,
                                   statistic="sum", **o),
        lambda **o: dp_query(people, "sum", "income", lower=0, upper=10, epsilon=1.0,
                             by="sex", **o)]
    for release in releases:
        with pytest.raises(TypeError, match="hierarchy"):
            release(hierarchy={}, accountant=acc)
        with pytest.raises(ValueError, match="max_cells"):
            release(domains={"sex": ["f"]}, unknown="other", max_cells=1, accountant=acc)
        out = release(domains={"sex": ["f"]}, unknown="other", neighbouring="replace",
                      random=RandomSource("cpu"), accountant=acc)
        assert out["sex"].tolist() == ["f", OTHER]
        assert out.attrs["dp"]["neighbouring"] == "replace"
    assert [s.neighbouring for s in acc.ledger] == ["replace", "replace"]


@pytest.mark.parametrize("kwargs,match", [
    (dict(value="nope"), "'nope' not in the data"),
    (dict(value="sex"), "values that are not numbers"),
    (dict(lower=5, upper=1), "lower <= upper"),
    (dict(lower=0, upper=0), "nothing to release"),
    (dict(statistic="median"), "statistic must be"),
    (dict(count_share=1.0), "count_share"),
])
def test_group_stats_invalid(backend, people, hierarchies, kwargs, match):
    kwargs = {"value": "income", "lower": 0, "upper": 100, **kwargs}
    value = kwargs.pop("value")
    with pytest.raises(ValueError, match=match):
        dp_group_stats(people, "sex", value, epsilon=1.0, hierarchies=hierarchies,
                       random=src(backend), **kwargs)


def test_adult_contingency_table(backend):
    adult = resources.files("gpuppdp.data") / "adult"
    data = pd.read_csv(adult / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    hier = {c: Hierarchy.from_csv(adult / f"adult_hierarchy_{c}.csv", name=c)
            for c in ("age", "sex", "education")}
    table = dp_histogram(data, ["age", "sex", "education"], epsilon=1.0, hierarchies=hier,
                         levels={"age": 2, "education": 1}, random=src(backend, 1))
    n_cells = (len(hier["age"].labels(2)) * 2 * len(hier["education"].labels(1)))
    assert len(table) == n_cells
    # the noisy total is close to the true one: sum of n_cells noises of std ~1.26
    assert abs(table["count"].sum() - len(data)) < 6 * 1.26 * math.sqrt(n_cells) + n_cells
