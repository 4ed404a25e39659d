"""The release: generalized labels, suppression (mark / drop), row permutation, identifying
columns, applying a found transformation to new data, and the summary's accounting."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, DistinctLDiversity, UnknownValuesError, datasets
from gpuppdp.engine.transform import SUPPRESSED_LABEL

QIDS = ["age", "sex", "race", "education", "marital-status"]
K = 5
SLICE = slice(0, 3000)
NEW_SLICE = slice(3000, 6000)


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    data = data.copy()
    data.insert(0, "id", [f"r{i}" for i in range(len(data))])
    data["name"] = [f"person {i}" for i in range(len(data))]
    return data, {c: hierarchies[c] for c in QIDS}


def anonymizer(hierarchies, **kw) -> Anonymizer:
    args = dict(quasi_identifiers=hierarchies, insensitive=["id"], identifying=["name"],
                others="insensitive", k=K, suppression_limit=0.05, seed=7)
    args.update(kw)
    return Anonymizer(**args)


@pytest.fixture(scope="module")
def marked(adult):
    data, hierarchies = adult
    return anonymizer(hierarchies).fit(data.iloc[SLICE].reset_index(drop=True))


@pytest.fixture(scope="module")
def dropped(adult):
    data, hierarchies = adult
    return anonymizer(hierarchies, suppressed="drop").fit(
        data.iloc[SLICE].reset_index(drop=True))


def qid_frame(df: pd.DataFrame) -> pd.DataFrame:
    return df[[c for c in df.columns if c in QIDS]]


def suppressed_mask(df: pd.DataFrame) -> np.ndarray:
    return (qid_frame(df) == SUPPRESSED_LABEL).all(axis=1).to_numpy()


def expected_labels(original: pd.DataFrame, hierarchies, transformation) -> pd.DataFrame:
    """Each QID of ``original`` generalized with Hierarchy.generalize (independent of the
    engine's roll-up)."""
    return pd.DataFrame({c: hierarchies[c].generalize(original[c].to_numpy(), level,
                                                      attribute=c)
                         for c, level in transformation.items()})


def by_id(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values("id", key=lambda s: s.str[1:].astype(int)).reset_index(drop=True)


# -- the setting is meaningful: there are suppressed records and several classes ----------------
def test_setting(marked):
    # QIDs in the table's column order
    assert list(marked.transformation) == ["sex", "age", "race", "marital-status", "education"]
    assert 0 < marked.suppressed_records <= 0.05 * 3000
    assert marked.equivalence_classes > 10
    assert any(level > 0 for level in marked.transformation.values())


# -- permutation and reproducibility ------------------------------------------------------------
def test_seed_reproducible_and_changes_order(adult, marked):
    data, hierarchies = adult
    part = data.iloc[SLICE].reset_index(drop=True)
    again = anonymizer(hierarchies).fit(part)
    pd.testing.assert_frame_equal(again.released, marked.released)
    other = anonymizer(hierarchies, seed=8).fit(part)
    assert other.transformation == marked.transformation
    assert not other.released["id"].equals(marked.released["id"])
    # same rows, other order
    pd.testing.assert_frame_equal(by_id(other.released), by_id(marked.released))
    # the order is not the input's order either
    assert not marked.released["id"].equals(part["id"])


def test_rows_are_a_permutation(adult, marked):
    data, _ = adult
    part = data.iloc[SLICE].reset_index(drop=True)
    out = marked.released
    assert len(out) == len(part)
    carried = [c for c in part.columns if c not in QIDS and c != "name"]
    assert carried == ["id", "native-country", "workclass", "occupation", "salary-class"]
    for c in carried:
        assert sorted(out[c].tolist()) == sorted(part[c].tolist()), c
    assert out["id"].is_unique
    # each row keeps its own non-QID values
    merged = by_id(out)[carried].reset_index(drop=True)
    pd.testing.assert_frame_equal(merged, part[carried].reset_index(drop=True),
                                  check_dtype=False)


# -- labels ---------------------------------------------------------------------------------------
def test_released_qids_are_categorical_with_the_level_labels(marked):
    for c, level in marked.transformation.items():
        col = marked.released[c]
        assert isinstance(col.dtype, pd.CategoricalDtype), c
        assert set(col.cat.categories) >= {"*"}, c


def test_released_labels_are_hierarchy_labels(adult, marked):
    data, hierarchies = adult
    part = data.iloc[SLICE].reset_index(drop=True)
    out = by_id(marked.released)
    expected = expected_labels(part, hierarchies, marked.transformation)
    sup = suppressed_mask(out)
    assert sup.sum() == marked.suppressed_records
    kept = ~sup
    released = out.loc[kept, list(expected.columns)].astype(str)  # QID columns are categorical
    pd.testing.assert_frame_equal(released.reset_index(drop=True),
                                  expected.loc[kept].reset_index(drop=True), check_dtype=False)
    for c, level in marked.transformation.items():
        allowed = set(hierarchies[c].labels(level).tolist())
        assert set(out.loc[kept, c]) <= allowed, c
        # a QID is '*' only where the row is suppressed (or the level is the top)
        if level < hierarchies[c].height:
            assert ((out[c] == SUPPRESSED_LABEL).to_numpy() == sup).all(), c


def test_suppressed_rows_are_the_small_classes(adult, marked):
    data, hierarchies = adult
    part = data.iloc[SLICE].reset_index(drop=True)
    out = by_id(marked.released)
    expected = expected_labels(part, hierarchies, marked.transformation)
    sizes = expected.groupby(list(expected.columns), sort=False)[expected.columns[0]] \
        .transform("size").to_numpy()
    np.testing.assert_array_equal(suppressed_mask(out), sizes < K)


def test_kept_classes_satisfy_k(marked):
    out = marked.released
    kept = out[~suppressed_mask(out)]
    sizes = kept.groupby(QIDS).size()
    assert sizes.min() >= K
    assert len(sizes) == marked.equivalence_classes
    assert sizes.min() == marked.node["smallest_class"]


def test_drop_removes_exactly_the_suppressed_rows(adult, marked, dropped):
    assert dropped.transformation == marked.transformation
    assert dropped.suppressed_records == marked.suppressed_records
    out = dropped.released
    assert len(out) == 3000 - marked.suppressed_records
    assert not suppressed_mask(out).any()
    below_top = [c for c, level in marked.transformation.items()
                 if level < adult[1][c].height]
    assert below_top  # '*' is a label at the top level only
    assert not (out[below_top] == SUPPRESSED_LABEL).any(axis=None)
    kept_ids = set(marked.released.loc[~suppressed_mask(marked.released), "id"])
    assert set(out["id"]) == kept_ids
    pd.testing.assert_frame_equal(
        by_id(out), by_id(marked.released[~suppressed_mask(marked.released)]))


def test_identifying_columns_never_appear(adult, marked, dropped):
    data, hierarchies = adult
    assert "name" not in marked.released.columns
    assert "name" not in dropped.released.columns
    for c in marked.released.columns:  # no value of the identifying column leaks anywhere
        assert not marked.released[c].astype(str).str.startswith("person ").any(), c
    applied = marked.apply(data.iloc[NEW_SLICE].reset_index(drop=True), seed=0)
    assert "name" not in applied.columns


def test_column_order_is_the_inputs(adult, marked):
    data, _ = adult
    assert list(marked.released.columns) == [c for c in data.columns if c != "name"]


# -- apply to new data ----------------------------------------------------------------------------
def test_apply_to_new_data(adult, marked):
    data, hierarchies = adult
    new = data.iloc[NEW_SLICE].reset_index(drop=True)
    rel = marked.apply(new, seed=3)
    assert isinstance(rel, pd.DataFrame)
    assert rel.attrs["input_rows"] == len(new) and rel.attrs["suppressed"] == "mark"
    out = by_id(rel)
    assert len(out) == len(new)
    sup = suppressed_mask(out)
    assert sup.sum() == rel.attrs["suppressed_rows"]
    kept = ~sup
    expected = expected_labels(new, hierarchies, marked.transformation)
    released = out.loc[kept, list(expected.columns)].astype(str)  # QID columns are categorical
    pd.testing.assert_frame_equal(released.reset_index(drop=True),
                                  expected.loc[kept].reset_index(drop=True), check_dtype=False)
    sizes = out[kept].groupby(QIDS).size()
    assert sizes.min() >= K
    # small classes of the new data are suppressed, whatever the limit
    all_sizes = expected.groupby(QIDS, sort=False)["age"].transform("size").to_numpy()
    np.testing.assert_array_equal(sup, all_sizes < K)
    # reproducible with a seed
    pd.testing.assert_frame_equal(marked.apply(new, seed=3), rel)


def test_apply_drop_mode(adult, dropped):
    data, _ = adult
    new = data.iloc[NEW_SLICE].reset_index(drop=True)
    rel = dropped.apply(new, seed=1)
    assert rel.attrs["suppressed"] == "drop"
    assert len(rel) == rel.attrs["released_rows"] == len(new) - rel.attrs["suppressed_rows"]
    assert rel.groupby(QIDS).size().min() >= K


def test_apply_checks_new_data(adult, marked):
    data, _ = adult
    bad = data.iloc[NEW_SLICE].reset_index(drop=True).copy()
    bad.loc[0, "age"] = "250"
    with pytest.raises(UnknownValuesError, match=r"column 'age'.*'250'"):
        marked.apply(bad)


# -- summary ------------------------------------------------------------------------------------
def test_summary_counts_drop(dropped):
    s = dropped.summary()
    assert s["input_rows"] == 3000
    assert s["released_rows"] + s["suppressed_records"] == s["input_rows"]
    assert s["released_rows"] == len(dropped.released)
    assert s["equivalence_classes"] == len(dropped.released[QIDS].drop_duplicates())
    assert s["smallest_class"] == dropped.released.groupby(QIDS).size().min()
    assert s["average_class_size"] == pytest.approx(s["released_rows"] /
                                                    s["equivalence_classes"])
    assert s["transformation"] == dropped.transformation
    assert s["generalization_height"] == sum(dropped.transformation.values())
    assert s["models"] == [{"model": "k-anonymity", "k": K}]
    assert s["suppression_limit"] == 0.05
    assert 0 < s["nodes_evaluated"] <= s["lattice_size"] == 5 * 2 * 2 * 3 * 4


def test_summary_counts_mark(marked):
    s = marked.summary()
    out = marked.released
    assert len(out) == s["input_rows"] == 3000
    assert s["released_rows"] == s["input_rows"] - s["suppressed_records"]
    assert s["suppressed_records"] == int(suppressed_mask(out).sum())
    distinct = out.loc[~suppressed_mask(out), QIDS].drop_duplicates()
    assert s["equivalence_classes"] == len(distinct)
    assert s["information_loss"] == marked.information_loss
    assert 0 < s["information_loss"] < 1


def test_single_class_release(adult):
    """Everything generalized to the top: one class holding every row."""
    data, hierarchies = adult
    part = data.iloc[:40].reset_index(drop=True)
    result = anonymizer(hierarchies, k=40, suppression_limit=0.0).fit(part)
    assert result.transformation == {c: hierarchies[c].height for c in result.transformation}
    assert (qid_frame(result.released) == SUPPRESSED_LABEL).all(axis=None)
    s = result.summary()
    assert s["suppressed_records"] == 0
    assert s["equivalence_classes"] == 1
    assert s["smallest_class"] == 40
    assert s["average_class_size"] == 40.0


def test_l_diverse_release(adult):
    data, hierarchies = adult
    part = data.iloc[SLICE].reset_index(drop=True)
    result = Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation"],
                        insensitive=["id"], identifying=["name"], others="drop", k=2,
                        models=[DistinctLDiversity("occupation", 3)], suppression_limit=0.05,
                        seed=0).fit(part)
    out = result.released
    assert list(out.columns) == ["id", "sex", "age", "race", "marital-status", "education",
                                 "occupation"]
    kept = out[~suppressed_mask(out)]
    assert kept.groupby(QIDS)["occupation"].nunique().min() >= 3
    assert len(kept) == 3000 - result.suppressed_records
    assert kept.groupby(QIDS).size().min() >= 3  # ceil(l) records at least


def test_release_with_a_key_space_beyond_int64():
    """Eight QIDs of 300 values each (300**8 > 2**62): rows find their classes by hashing."""
    import numpy as np

    from gpuppdp import Anonymizer, Hierarchy
    from gpuppdp.engine.transform import release
    rng = np.random.default_rng(7)
    n, q = 400, 8
    values = [f"v{i}" for i in range(300)]
    hierarchy = Hierarchy([values, ["*"] * len(values)])
    data = pd.DataFrame({f"q{j}": rng.choice(values[:2], n) for j in range(q)})
    data.iloc[:, 1:6] = "v0"
    data["q0"] = rng.choice(values[:150], n)  # some classes of one record, most larger
    result = Anonymizer(quasi_identifiers={c: hierarchy for c in data.columns}, k=2,
                        suppression_limit=1.0, backend="cpu", seed=0).fit(data)
    bottom = release(data, result._evaluator, [0] * q, seed=0)
    sizes = data.groupby(list(data.columns)).size()
    expected_suppressed = int(sizes[sizes < 2].sum())
    released = bottom.data.astype(str)
    starred = (released == "*").all(axis=1)
    assert starred.sum() == expected_suppressed == bottom.suppressed_rows
    assert 0 < expected_suppressed < n
    kept = released[~starred].groupby(list(data.columns)).size()
    assert (kept >= 2).all()
    assert sorted(map(tuple, released[~starred].to_numpy())) == sorted(
        map(tuple, data[data.set_index(list(data.columns)).index.map(sizes) >= 2].to_numpy()))
