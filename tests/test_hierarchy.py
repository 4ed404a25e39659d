"""Hierarchy: loading (CSV, rows, flat), level encoding, composition of level maps, data
encoding and generalization, on small hand-written examples and the bundled Adult files."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpuppdp import datasets
from gpuppdp.hierarchy import Hierarchy, HierarchyError, UnknownValuesError

# leaf;level1;level2;top -- labels deliberately not in sorted order, so that first-appearance
# order is distinguishable from sorted order.
ZIP_ROWS = [
    ["47906", "4790*", "479**", "*"],
    ["47677", "4767*", "476**", "*"],
    ["47905", "4790*", "479**", "*"],
    ["47602", "4760*", "476**", "*"],
    ["47678", "4767*", "476**", "*"],
]


@pytest.fixture
def zip_h() -> Hierarchy:
    return Hierarchy.from_rows(ZIP_ROWS, name="zip")


def per_leaf(h: Hierarchy, level: int) -> list[str]:
    return h.labels(level)[h.codes(level)].tolist()


# -- construction -----------------------------------------------------------------------------
def test_from_rows_levels_labels_and_codes(zip_h):
    assert zip_h.name == "zip"
    assert zip_h.height == 3
    assert zip_h.leaves.tolist() == ["47906", "47677", "47905", "47602", "47678"]
    assert zip_h.labels(1).tolist() == ["4790*", "4767*", "4760*"]
    assert zip_h.labels(2).tolist() == ["479**", "476**"]
    assert zip_h.labels(3).tolist() == ["*"]
    assert zip_h.codes(0).tolist() == [0, 1, 2, 3, 4]
    assert zip_h.codes(1).tolist() == [0, 1, 0, 2, 1]
    assert zip_h.codes(2).tolist() == [0, 1, 0, 1, 1]
    assert zip_h.codes(3).tolist() == [0, 0, 0, 0, 0]
    for level in range(zip_h.height + 1):
        assert per_leaf(zip_h, level) == [r[level] for r in ZIP_ROWS]


def test_from_csv_equals_from_rows(tmp_path, zip_h):
    path = tmp_path / "zip.csv"
    # blank lines are ignored; no header
    path.write_text("\n".join(";".join(r) for r in ZIP_ROWS[:2]) + "\n\n"
                    + "\n".join(";".join(r) for r in ZIP_ROWS[2:]) + "\n", encoding="utf-8")
    h = Hierarchy.from_csv(path)
    assert h.name == "zip.csv"  # default name: the file name
    assert h.height == zip_h.height
    for level in range(h.height + 1):
        assert h.labels(level).tolist() == zip_h.labels(level).tolist()
        assert h.codes(level).tolist() == zip_h.codes(level).tolist()


def test_from_csv_other_separator_and_name(tmp_path):
    path = tmp_path / "h.txt"
    path.write_text("a,ab,*\nb,ab,*\nc,c,*\n", encoding="utf-8")
    h = Hierarchy.from_csv(path, sep=",", name="letters")
    assert h.name == "letters"
    assert h.height == 2
    assert h.labels(1).tolist() == ["ab", "c"]
    # read with the wrong separator: one column per row -> a single level
    h1 = Hierarchy.from_csv(path)
    assert h1.height == 0 and h1.leaves.tolist() == ["a,ab,*", "b,ab,*", "c,c,*"]


def test_from_rows_ragged_rows_are_rejected():
    with pytest.raises(HierarchyError, match=r"row 2 has 2 columns, row 1 has 3"):
        Hierarchy.from_rows([["a", "x", "*"], ["b", "*"]], name="r")


def test_flat():
    h = Hierarchy.flat(["M", "F", "M", 3], name="sex")
    assert h.height == 1
    assert h.leaves.tolist() == ["M", "F", "3"]  # de-duplicated, first-appearance, as strings
    assert h.labels(1).tolist() == ["*"]
    assert h.codes(1).tolist() == [0, 0, 0]
    assert Hierarchy.flat(["a", "b"], top="ANY").labels(1).tolist() == ["ANY"]


def test_constructor_stringifies_labels():
    h = Hierarchy([[1, 2, 3], ["1-2", "1-2", 3], ["*", "*", "*"]])
    assert h.leaves.tolist() == ["1", "2", "3"]
    assert h.labels(1).tolist() == ["1-2", "3"]


# -- level maps -------------------------------------------------------------------------------
def test_upmap_composition_matches_codes(zip_h):
    H = zip_h.height
    for a in range(H + 1):
        assert zip_h.upmap(a, a).tolist() == list(range(len(zip_h.labels(a))))
        for b in range(a, H + 1):
            m_ab = zip_h.upmap(a, b)
            assert len(m_ab) == len(zip_h.labels(a))
            # mapping the leaves' level-a codes gives their level-b codes
            assert m_ab[zip_h.codes(a)].tolist() == zip_h.codes(b).tolist()
            for c in range(b, H + 1):
                assert zip_h.upmap(a, c).tolist() == zip_h.upmap(b, c)[m_ab].tolist()
    assert zip_h.upmap(1, 2).tolist() == [0, 1, 1]


@pytest.mark.parametrize("src,dst", [(2, 1), (-1, 0), (0, 4)])
def test_upmap_rejects_bad_levels(zip_h, src, dst):
    with pytest.raises(ValueError, match="0 <= src <= dst <= 3"):
        zip_h.upmap(src, dst)


def test_label_row_counts(zip_h):
    assert zip_h.label_row_counts(0).tolist() == [1, 1, 1, 1, 1]
    assert zip_h.label_row_counts(1).tolist() == [2, 2, 1]
    assert zip_h.label_row_counts(2).tolist() == [2, 3]
    assert zip_h.label_row_counts(3).tolist() == [5]


# -- data encoding ------------------------------------------------------------------------------
def test_leaf_codes_compare_as_strings():
    h = Hierarchy.from_rows([["38", "35-39", "*"], ["39", "35-39", "*"], ["40", "40-44", "*"]],
                            name="age")
    codes = h.leaf_codes([39, 40, 38, 39])
    assert codes.tolist() == [1, 2, 0, 1]
    assert h.leaf_codes(np.array(["40", "38"], dtype=object)).tolist() == [2, 0]
    assert h.leaf_codes(np.array([39, 39], dtype=np.int64)).tolist() == [1, 1]


def test_leaf_codes_unknown_values(zip_h):
    with pytest.raises(UnknownValuesError) as info:
        zip_h.leaf_codes(["47906", "99999", "99999", "12345"], attribute="zipcode")
    err = info.value
    assert err.attribute == "zipcode"
    assert sorted(err.values) == ["12345", "99999"]
    assert err.count_rows == 3
    assert "'zipcode'" in str(err) and "2 value(s)" in str(err) and "3 row(s)" in str(err)


def test_generalize(zip_h):
    values = ["47678", "47906", 47602, "47905"]
    assert zip_h.generalize(values, 0).tolist() == ["47678", "47906", "47602", "47905"]
    assert zip_h.generalize(values, 1).tolist() == ["4767*", "4790*", "4760*", "4790*"]
    assert zip_h.generalize(values, 2).tolist() == ["476**", "479**", "476**", "479**"]
    assert zip_h.generalize(values, 3).tolist() == ["*"] * 4
    assert zip_h.generalize([], 2).tolist() == []


# -- bundled Adult hierarchies ----------------------------------------------------------------
ADULT_HEIGHTS = {"sex": 1, "age": 4, "race": 1, "marital-status": 2, "education": 3,
                 "native-country": 2, "workclass": 2, "occupation": 2, "salary-class": 1}


def test_adult_hierarchies_heights_and_rows():
    data, hierarchies = datasets.adult()
    assert list(hierarchies) == list(datasets.ADULT_QUASI_IDENTIFIERS) == list(data.columns)
    assert {n: h.height for n, h in hierarchies.items()} == ADULT_HEIGHTS
    assert len(hierarchies["age"].leaves) == 100
    assert len(hierarchies["workclass"].leaves) == 8
    assert len(hierarchies["native-country"].leaves) == 41
    for name, h in hierarchies.items():
        assert h.name == name
        assert h.labels(h.height).tolist() == ["*"]
        assert int(h.label_row_counts(h.height)[0]) == len(h.leaves)
        # every data value is a leaf
        codes = h.leaf_codes(data[name].to_numpy(), attribute=name)
        assert codes.shape == (len(data),)
    age = hierarchies["age"]
    assert age.generalize(["39", 1], 1).tolist() == ["35-39", "0-4"]
    assert age.generalize([39], age.height).tolist() == ["*"]


def test_adult_hierarchy_from_bundled_path():
    h = Hierarchy.from_csv(datasets.adult_path("adult_hierarchy_workclass.csv"))
    assert h.height == 2
    assert h.name == "adult_hierarchy_workclass.csv"
    assert h.labels(1).tolist() == ["Non-Government", "Government", "Unemployed"]
    assert h.label_row_counts(1).tolist() == [3, 3, 2]
    assert h.generalize(["State-gov", "Never-worked"], 1).tolist() == ["Government",
                                                                       "Unemployed"]


# -- levels out of range ----------------------------------------------------------------------
@pytest.mark.parametrize("level", [-1, 4, 1.0, "1", True, None])
def test_bad_level_names_the_hierarchy(zip_h, level):
    message = rf"zip: level must be an integer in 0\.\.3, got {re.escape(repr(level))}"
    with pytest.raises(ValueError, match=message):
        zip_h.labels(level)
    with pytest.raises(ValueError, match=message):
        zip_h.codes(level)
    with pytest.raises(ValueError, match=message):
        zip_h.label_row_counts(level)
    with pytest.raises(ValueError, match=message):
        zip_h.generalize(["47906"], level)


def test_numpy_integer_levels_accepted(zip_h):
    assert zip_h.labels(np.int64(2)).tolist() == ["479**", "476**"]
    assert zip_h.generalize(["47602"], np.int32(1)).tolist() == ["4760*"]


def test_from_csv_wrong_encoding(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("Café;*\nTea;*\n".encode("latin-1"))
    with pytest.raises(HierarchyError, match=rf"hierarchy file {re.escape(str(path))} is not "
                                             r"utf-8 text .* at byte 3\); pass its encoding"):
        Hierarchy.from_csv(path)
    h = Hierarchy.from_csv(path, encoding="latin-1")
    assert h.leaves.tolist() == ["Café", "Tea"]
