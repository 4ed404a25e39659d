"""Hierarchy builders: hand-checked examples, input validation, interval properties."""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuppdp.builders import (date_hierarchy, interval_hierarchy, levels_hierarchy,
                              masking_hierarchy)
from gpuppdp.hierarchy import Hierarchy


def per_leaf(h: Hierarchy) -> list[list[str]]:
    """Column-major label table: ``[level][leaf]``."""
    return [h.labels(L)[h.codes(L)].tolist() for L in range(h.height + 1)]


# -- levels_hierarchy -------------------------------------------------------------------------
def test_levels_from_dict_appends_top():
    h = levels_hierarchy({"flu": ["resp"], "cold": ["resp"], "gout": ["joint"]}, name="dx")
    assert isinstance(h, Hierarchy) and h.name == "dx"
    assert per_leaf(h) == [["flu", "cold", "gout"], ["resp", "resp", "joint"], ["*"] * 3]


def test_levels_keeps_existing_single_top_and_dedups():
    rows = [["a", "ab", "ALL"], ["b", "ab", "ALL"], ["a", "ab", "ALL"], [1, "c", "ALL"]]
    h = levels_hierarchy(rows)
    assert per_leaf(h) == [["a", "b", "1"], ["ab", "ab", "c"], ["ALL"] * 3]


def test_levels_without_labels_is_flat():
    h = levels_hierarchy({"x": [], "y": []}, top="any")
    assert per_leaf(h) == [["x", "y"], ["any", "any"]]


def test_levels_errors():
    with pytest.raises(ValueError, match=r"mapping: expected every leaf to have the same number"
                                         r".*'c \(1\)'"):
        levels_hierarchy({"a": ["x", "*"], "b": ["x", "*"], "c": ["y"]})
    with pytest.raises(ValueError, match=r"mapping: .*leaf 'a' is given with different labels"):
        levels_hierarchy([["a", "x"], ["a", "y"]])
    with pytest.raises(ValueError, match=r"mapping: .*missing"):
        levels_hierarchy({"a": [None]})
    with pytest.raises(ValueError, match=r"not a function of level 1"):  # Hierarchy validation
        levels_hierarchy({"a": ["x", "p"], "b": ["x", "q"]})
    with pytest.raises(ValueError, match=r"mapping: expected at least one leaf"):
        levels_hierarchy({})


# -- interval_hierarchy -----------------------------------------------------------------------
def test_interval_ages_20_to_29():
    h = interval_hierarchy(range(20, 30), (5, 10), name="age")
    assert h.height == 3
    assert h.leaves.tolist() == [str(a) for a in range(20, 30)]
    assert h.labels(1).tolist() == ["[20, 25)", "[25, 30)"]
    assert per_leaf(h)[1] == ["[20, 25)"] * 5 + ["[25, 30)"] * 5
    assert per_leaf(h)[2] == ["[20, 30)"] * 10
    assert h.labels(3).tolist() == ["*"]
    assert h.generalize([23, "27"], 1).tolist() == ["[20, 25)", "[25, 30)"]


def test_interval_default_start_is_zero_and_start_shifts():
    h = interval_hierarchy([27, 33, 41], (5, 10, 20))
    assert per_leaf(h)[1:4] == [["[25, 30)", "[30, 35)", "[40, 45)"],
                                ["[20, 30)", "[30, 40)", "[40, 50)"],
                                ["[20, 40)", "[20, 40)", "[40, 60)"]]
    h = interval_hierarchy([27, 33, 41, 2], (5, 10), start=3)
    assert per_leaf(h)[1:3] == [["[23, 28)", "[33, 38)", "[38, 43)", "[-2, 3)"],
                                ["[23, 33)", "[33, 43)", "[33, 43)", "[-7, 3)"]]


def test_interval_floats_are_exact_and_leaves_are_str():
    h = interval_hierarchy([0.3, 0.25, 1.0, np.float64(0.7), 2], (0.1, 0.5))
    assert h.leaves.tolist() == ["0.3", "0.25", "1.0", "0.7", "2"]
    assert per_leaf(h)[1] == ["[0.3, 0.4)", "[0.2, 0.3)", "[1, 1.1)", "[0.7, 0.8)", "[2, 2.1)"]
    assert per_leaf(h)[2] == ["[0, 0.5)", "[0, 0.5)", "[1, 1.5)", "[0.5, 1)", "[2, 2.5)"]


def test_interval_negative_numpy_strings_and_dedup():
    values = np.array([-3, 4, -3, 4, 0])
    h = interval_hierarchy(values, 5, top="ANY")
    assert per_leaf(h) == [["-3", "4", "0"], ["[-5, 0)", "[0, 5)", "[0, 5)"], ["ANY"] * 3]
    h = interval_hierarchy(pd.Series(["7", "12", "7"]), [10])
    assert per_leaf(h)[:2] == [["7", "12"], ["[0, 10)", "[10, 20)"]]


def test_interval_errors():
    with pytest.raises(ValueError, match=r"age: widths: .*multiple.*got 15 after 10"):
        interval_hierarchy([1, 2], (5, 10, 15), name="age")
    with pytest.raises(ValueError, match=r"widths: .*multiple"):
        interval_hierarchy([1, 2], (5, 5))
    with pytest.raises(ValueError, match=r"widths: expected positive finite numbers, got -5"):
        interval_hierarchy([1, 2], (-5, 10))
    with pytest.raises(ValueError, match=r"widths: expected at least one"):
        interval_hierarchy([1, 2], ())
    with pytest.raises(ValueError, match=r"values: expected finite numbers; got 3 .*"
                                         r"nan, inf, None"):
        interval_hierarchy([1, float("nan"), 2, float("inf"), None, float("nan")], (5,))
    with pytest.raises(ValueError, match=r"values: expected numbers .*'abc'"):
        interval_hierarchy([1, "abc", True], (5,))
    with pytest.raises(ValueError, match=r"start: expected a finite number"):
        interval_hierarchy([1], (5,), start=float("nan"))
    with pytest.raises(ValueError, match=r"values: expected a sequence"):
        interval_hierarchy("123", (5,))


_INTERVAL = re.compile(r"^\[(-?[0-9.]+), (-?[0-9.]+)\)$")


def _check_intervals(h: Hierarchy, distinct: list, widths: list, start) -> None:
    assert h.height == len(widths) + 1
    assert h.labels(h.height).tolist() == ["*"]
    assert h.leaves.tolist() == [str(v) for v in distinct]
    table = per_leaf(h)
    for L, w in enumerate(widths, start=1):
        for v, label in zip(distinct, table[L]):
            m = _INTERVAL.match(label)
            assert m, label
            lo, hi = Fraction(m.group(1)), Fraction(m.group(2))
            x = Fraction(str(v))
            assert lo <= x < hi
            assert hi - lo == Fraction(str(w))
            assert (lo - Fraction(str(start))) % Fraction(str(w)) == 0


@st.composite
def _nesting_widths(draw, base):
    widths = [draw(base)]
    for factor in draw(st.lists(st.integers(2, 5), max_size=3)):
        widths.append(widths[-1] * factor)
    return widths


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(-10_000, 10_000), min_size=1, max_size=40),
       widths=_nesting_widths(st.integers(1, 50)),
       start=st.one_of(st.none(), st.integers(-100, 100)))
def test_interval_property_integers(values, widths, start):
    h = interval_hierarchy(values, widths, start=start)
    distinct = list(dict.fromkeys(values))
    _check_intervals(h, distinct, widths, 0 if start is None else start)
    assert h.leaf_codes(values).tolist() == [distinct.index(v) for v in values]


@settings(max_examples=75, deadline=None)
@given(values=st.lists(st.integers(-5_000, 5_000).map(lambda i: i / 100), min_size=1,
                       max_size=30),
       widths=_nesting_widths(st.integers(1, 40).map(lambda i: i / 10)))
def test_interval_property_decimals(values, widths):
    # widths such as 0.1 * 3 print as 0.30000000000000004: pass them the way a user would
    widths = [float(f"{w:.10g}") for w in widths]
    h = interval_hierarchy(values, widths)
    _check_intervals(h, list(dict.fromkeys(values)), widths, 0)


# -- masking_hierarchy ------------------------------------------------------------------------
def test_masking_zip_codes():
    h = masking_hierarchy(["47677", "47602", "47678", "47677"], name="zip")
    assert h.height == 5
    assert per_leaf(h) == [
        ["47677", "47602", "47678"],
        ["4767*", "4760*", "4767*"],
        ["476**", "476**", "476**"],
        ["47***", "47***", "47***"],
        ["4****", "4****", "4****"],
        ["*****", "*****", "*****"],
    ]


def test_masking_left_char_and_ints():
    h = masking_hierarchy([123, 124, 223], char="#", direction="left")
    assert per_leaf(h) == [["123", "124", "223"], ["#23", "#24", "#23"],
                           ["##3", "##4", "##3"], ["###", "###", "###"]]


def test_masking_single_character_codes():
    h = masking_hierarchy(["a", "b"])
    assert per_leaf(h) == [["a", "b"], ["*", "*"]]


def test_masking_errors():
    codes = ["47677", "4760", "476781", "47602"] + [f"{i:05d}" for i in range(10)] + ["1", "22",
                                                                                          "333"]
    with pytest.raises(ValueError) as e:
        masking_hierarchy(codes, name="zip")
    msg = str(e.value)
    assert msg.startswith("zip: values: expected codes of one length")
    assert "5 of 17 distinct value(s) differ from the most common length 5" in msg
    assert "'4760', '476781', '1', '22', '333'" in msg
    with pytest.raises(ValueError, match=r"values: .* 7 of 11 .*length 5: '1', '12', "
                                         r"'123', '1234', '123456' and 2 more$"):
        masking_hierarchy(["12345", "23456", "1", "34567", "45678", "12", "123", "1234",
                           "123456", "1234567", "22", "1"])
    with pytest.raises(ValueError, match=r"values: expected codes, got 1 missing"):
        masking_hierarchy(["12", None])
    with pytest.raises(ValueError, match=r"char: expected a single character, got '\*\*'"):
        masking_hierarchy(["12"], char="**")
    with pytest.raises(ValueError, match=r"direction: expected 'right' or 'left', got 'up'"):
        masking_hierarchy(["12"], direction="up")
    with pytest.raises(ValueError, match=r"values: expected non-empty codes"):
        masking_hierarchy(["", ""])


# -- date_hierarchy ---------------------------------------------------------------------------
def test_dates_default_levels():
    values = ["1994-03-17", "1994-03-02", "1994-11-30", "1999-12-31", "2000-01-01",
              "1994-03-17"]
    h = date_hierarchy(values, name="dob")
    assert h.height == 4
    assert per_leaf(h) == [
        ["1994-03-17", "1994-03-02", "1994-11-30", "1999-12-31", "2000-01-01"],
        ["1994-03", "1994-03", "1994-11", "1999-12", "2000-01"],
        ["1994", "1994", "1994", "1999", "2000"],
        ["1990-1999", "1990-1999", "1990-1999", "1990-1999", "2000-2009"],
        ["*"] * 5,
    ]


def test_dates_objects_custom_levels_and_format():
    values = [dt.date(1987, 5, 4), pd.Timestamp("1987-08-09"), np.datetime64("2012-02-29"),
              dt.datetime(1987, 5, 4, 13, 30)]
    h = date_hierarchy(values, levels=("quarter", "century"))
    assert per_leaf(h) == [
        ["1987-05-04", "1987-08-09", "2012-02-29", "1987-05-04 13:30:00"],
        ["1987-Q2", "1987-Q3", "2012-Q1", "1987-Q2"],
        ["1900-1999", "1900-1999", "2000-2099", "1900-1999"],
        ["*"] * 4,
    ]
    h = date_hierarchy(["04/05/1987", "31/12/1987"], levels="year", format="%d/%m/%Y")
    assert per_leaf(h) == [["04/05/1987", "31/12/1987"], ["1987", "1987"], ["*", "*"]]
    h = date_hierarchy(["04/05/1987", "31/12/1987"], levels=("day", "month"),
                       format="%d/%m/%Y")
    assert per_leaf(h)[1:3] == [["1987-05-04", "1987-12-31"], ["1987-05", "1987-12"]]


def test_date_errors():
    with pytest.raises(ValueError, match=r"dob: values: .*2 value\(s\) could not be parsed"
                                         r".*'not a date', '1994-13-45'"):
        date_hierarchy(["1994-03-17", "not a date", "1994-13-45"], name="dob")
    with pytest.raises(ValueError, match=r"values: .*could not be parsed.*format='%Y-%m-%d'"):
        date_hierarchy(["17/03/1994"], format="%Y-%m-%d")
    with pytest.raises(ValueError, match=r"values: expected dates, got 2 missing"):
        date_hierarchy(["1994-03-17", None, pd.NaT])
    with pytest.raises(ValueError, match=r"values: expected date strings .* 19940317"):
        date_hierarchy([19940317])
    with pytest.raises(ValueError, match=r"levels: expected granularities .*'week'"):
        date_hierarchy(["1994-03-17"], levels=("week", "year"))
    with pytest.raises(ValueError, match=r"levels: expected distinct granularities from finest"):
        date_hierarchy(["1994-03-17"], levels=("year", "month"))
