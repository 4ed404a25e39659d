"""The one encoder (gpuppdp.core.codes) against a naive Python reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuppdp.core import codes as codes_module
from gpuppdp.core.codes import Domain, encode_column, encode_columns, smallest_int_dtype
from gpuppdp.hierarchy import UnknownValuesError

_NA = object()


def _is_na(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def reference(values, sort: bool = False, key=None):
    """Codes in order of first appearance (or sorted, by ``key``), every missing value one
    value of its own (last when sorted); labels as str (``None`` for the missing value)."""
    keys = [_NA if _is_na(v) else v for v in values]
    distinct = list(dict.fromkeys(keys))
    if sort:
        distinct = sorted((k for k in distinct if k is not _NA), key=key) + \
            ([_NA] if _NA in distinct else [])
    index = {k: i for i, k in enumerate(distinct)}
    return [index[k] for k in keys], [None if k is _NA else str(k) for k in distinct]


def check(values, expected_values, sort: bool = False, key=None):
    codes, labels = encode_column(values, sort=sort, as_str=True)
    ref_codes, ref_labels = reference(expected_values, sort, key)
    assert codes.tolist() == ref_codes
    assert codes.dtype == smallest_int_dtype(len(ref_labels))
    assert len(labels) == len(ref_labels)
    for got, want in zip(labels, ref_labels):
        if want is None:
            assert got in ("nan", "None", "<NA>")
        else:
            assert got == want


@pytest.mark.parametrize("sort", [False, True])
def test_object_column(sort):
    values = ["b", "a", None, "b", "c", np.nan, "a"]
    check(pd.Series(values, dtype=object), values, sort)
    check(np.array(["x", "y", "x"], dtype=object), ["x", "y", "x"], sort)
    check(["q", "p", "q"], ["q", "p", "q"], sort)


@pytest.mark.parametrize("sort", [False, True])
def test_numeric_column(sort):
    check(pd.Series([39, 40, 38, 39, 40]), [39, 40, 38, 39, 40], sort)
    check(pd.Series([1.5, np.nan, 0.5, 1.5]), [1.5, np.nan, 0.5, 1.5], sort)
    codes, labels = encode_column(pd.Series([3, 1, 3]))
    assert labels.dtype.kind == "i" and labels.tolist() == [3, 1]


@pytest.mark.parametrize("sort", [False, True])
def test_categorical_with_unused_categories_and_nan(sort):
    values = ["b", None, "a", "b", None, "d"]
    cat = pd.Categorical(values, categories=["z", "a", "b", "c", "d"])
    check(pd.Series(cat), values, sort)
    check(cat, values, sort)
    # numbers: labels stay numbers unless a missing value is among them
    check(pd.Series(pd.Categorical([3, 1, 3], categories=[1, 2, 3, 4])), [3, 1, 3], sort)
    check(pd.Series(pd.Categorical([3, None, 1], categories=[1, 2, 3])), [3, None, 1], sort)


def test_categorical_same_as_pandas_factorize():
    for values in (["b", None, "a", "b"], [2, 2, 1], [None, None], []):
        s = pd.Series(pd.Categorical(values, categories=["a", "b", "c", 1, 2]))
        want_codes, want_uniq = pd.factorize(s, use_na_sentinel=False)
        got_codes, got_labels = encode_column(s, as_str=True)
        assert got_codes.tolist() == want_codes.tolist()
        assert got_labels.tolist() == [str(u) for u in want_uniq]


def test_categorical_and_dictionary_arrays_are_not_refactorized(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("re-factorized")

    monkeypatch.setattr(codes_module.pd, "factorize", refuse)
    cat = pd.Series(pd.Categorical(["b", "a", "b"], categories=["a", "b", "c"]))
    assert encode_column(cat)[0].tolist() == [0, 1, 0]
    arr = pa.array(["b", "a", "b"]).dictionary_encode()
    assert encode_column(arr)[0].tolist() == [0, 1, 0]


@pytest.mark.parametrize("sort", [False, True])
def test_arrow_dictionary_chunks_with_different_dictionaries(sort):
    first = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], type=pa.int32()),
                                           pa.array(["x", "y"]))
    second = pa.DictionaryArray.from_arrays(pa.array([0, 2, 1, 0], type=pa.int32()),
                                            pa.array(["z", "y", "w"]))
    chunked = pa.chunked_array([first, second])
    values = chunked.to_pylist()
    check(chunked, values, sort)
    check(first, first.to_pylist(), sort)
    # a pandas column of that Arrow dictionary type reads the same
    series = pd.Series(pd.arrays.ArrowExtensionArray(chunked))
    check(series, values, sort)


def test_arrow_plain_array():
    values = [5, 3, None, 5, 7]
    check(pa.array(values), values)
    check(pa.chunked_array([pa.array(["a", "b"]), pa.array(["c", "a"])]), ["a", "b", "c", "a"])


def test_domain_codes_are_positions():
    domain = np.array(["38", "39", "40", "41"], dtype=object)
    values = [39, 40, 38, 39]
    codes, labels = encode_column(pd.Series(values), domain=domain)
    assert codes.tolist() == [list(domain).index(str(v)) for v in values]
    assert codes.dtype == np.int8 and labels.tolist() == domain.tolist()
    cat = pd.Series(pd.Categorical(["41", "38"], categories=["38", "41", "99"]))
    assert encode_column(cat, domain=domain)[0].tolist() == [3, 0]   # unused '99' is fine


def test_domain_unknown_values():
    domain = ["a", "b"]
    values = pd.Series(["a", "zz", "b", "q", "zz"])
    with pytest.raises(UnknownValuesError) as info:
        encode_column(values, domain=domain, name="col")
    err = info.value
    assert err.attribute == "col" and err.values == ["q", "zz"] and err.count_rows == 3
    assert err.first_row == 1
    assert "column 'col': 2 value(s) not in its hierarchy (3 row(s), first at row 1): 'q', 'zz'" \
        in str(err)
    codes, _ = encode_column(values, domain=domain, unknown="missing")
    assert codes.tolist() == [0, -1, 1, -1, -1]
    with pytest.raises(ValueError, match="unknown must be"):
        encode_column(values, domain=domain, unknown="skip")


def test_a_domain_serves_chunks_of_categoricals_as_a_plain_domain_does(monkeypatch):
    """A :class:`Domain` gathers a categorical's codes through its categories' positions,
    looked up once per distinct dictionary: the same codes as a plain domain, and the same
    errors (a missing value, a value outside the domain) through the general path."""
    leaves = ["b", "a", "c", "1", "2.0"]
    domain = Domain(leaves)
    rng = np.random.default_rng(3)
    categories = ["c", "a", "zz", "b"]
    looked_up = []
    positions = Domain.positions
    monkeypatch.setattr(Domain, "positions",
                        lambda self, labels: (self is domain and looked_up.append(len(labels)))
                        or positions(self, labels))
    for _ in range(3):  # chunks sharing one dictionary (an unused 'zz' outside the domain)
        chunk = pd.Series(pd.Categorical.from_codes(rng.choice([0, 1, 3], 50),
                                                    categories=categories))
        codes, labels = encode_column(chunk, domain=domain, name="col")
        assert codes.tolist() == encode_column(chunk.astype(object), domain=leaves)[0].tolist()
        assert codes.dtype == np.int8 and labels.tolist() == leaves
    assert looked_up == [4]  # the categories once, not per chunk
    # the dtype takes part: str(1) is '1' but str(1.0) is '1.0' (not a leaf), 2.0 is
    ints = pd.Series(pd.Categorical([1, 1], categories=[1, 2]))
    assert encode_column(ints, domain=domain)[0].tolist() == [3, 3]
    floats = pd.Series(pd.Categorical([2.0, 2.0], categories=[1.0, 2.0]))
    assert encode_column(floats, domain=domain)[0].tolist() == [4, 4]
    with pytest.raises(UnknownValuesError, match="'1.0'") as info:
        encode_column(pd.Series(pd.Categorical([2.0, 1.0], categories=[1.0, 2.0])),
                      domain=domain, name="col")
    assert info.value.first_row == 1
    with pytest.raises(UnknownValuesError, match="'zz'") as info:
        encode_column(pd.Series(pd.Categorical(["a", "zz"], categories=categories)),
                      domain=domain, name="col")
    assert info.value.first_row == 1
    missing = pd.Series(pd.Categorical(["a", None], categories=categories))
    assert encode_column(missing, domain=domain, unknown="missing")[0].tolist() == [1, -1]


def test_a_domain_gathers_arrow_dictionaries_and_integers_as_a_plain_domain_does(monkeypatch):
    """Arrow dictionary columns and integer columns in a short range are gathered through
    positions looked up once (per dictionary; per range, widened when a chunk leaves it): the
    same codes as a plain domain, and the general path's errors for missing and unknown
    values."""
    leaves = [str(v) for v in range(20, 0, -1)] + ["x", "y"]
    domain = Domain(leaves)
    looked_up = []
    positions = Domain.positions
    monkeypatch.setattr(Domain, "positions",
                        lambda self, labels: (self is domain and looked_up.append(len(labels)))
                        or positions(self, labels))
    rng = np.random.default_rng(5)

    def same_as_plain(values, plain):
        codes, labels = encode_column(values, domain=domain, name="col")
        assert codes.tolist() == encode_column(plain, domain=leaves)[0].tolist()
        assert codes.dtype == np.int8 and labels.tolist() == leaves

    dictionary = pa.array(["y", "3", "x", "20"])
    for _ in range(3):  # chunks of one dictionary, as a Parquet file's row groups give
        indices = rng.integers(0, 4, 40)
        same_as_plain(pa.DictionaryArray.from_arrays(pa.array(indices, pa.int8()), dictionary),
                      dictionary.to_numpy(zero_copy_only=False)[indices].astype(object))
    assert looked_up == [4]
    for values in (np.array([5, 1, 20], np.int16), pd.Series([7, 7, 2], dtype=np.uint8),
                   pa.chunked_array([pa.array([4, 9], pa.int32()), pa.array([12], pa.int32())])):
        same_as_plain(values, [str(v) for v in np.asarray(values).tolist()])
    assert looked_up == [4, 20]  # 1..20, once for all three chunks
    with pytest.raises(UnknownValuesError, match="'0'") as info:  # widens the range, unknown
        encode_column(np.array([3, 0, 2]), domain=domain, name="col")
    assert info.value.first_row == 1
    with pytest.raises(UnknownValuesError, match="'<NA>'|'None'"):
        encode_column(pa.array([3, None], pa.int64()), domain=domain, name="col")
    big = np.array([2 ** 63 + 3, 2 ** 63 + 4], dtype=np.uint64)  # past int64: the general path
    with pytest.raises(UnknownValuesError, match="'9223372036854775811'"):
        encode_column(big, domain=domain, name="col")
    huge = np.array([1, 10**9])  # far too wide a range: the general path
    with pytest.raises(UnknownValuesError, match="'1000000000'"):
        encode_column(huge, domain=domain, name="col")
    with pytest.raises(UnknownValuesError, match="'zz'"):
        encode_column(pa.array(["3", "zz"]).dictionary_encode(), domain=domain, name="col")


def test_smallest_dtype_and_encode_columns():
    values = pd.Series(np.arange(300) % 200)
    codes, labels = encode_column(values)
    assert codes.dtype == np.int16 and len(labels) == 200
    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 1, 2]})
    codes, labels = encode_columns(df, ["b", "a"], domains={"a": ["y", "x"]})
    assert [c.tolist() for c in codes] == [[0, 0, 1], [1, 0, 1]]
    assert labels[0].tolist() == [1, 2] and labels[1].tolist() == ["y", "x"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"])), max_size=30),
       st.booleans(), st.booleans())
def test_against_reference(values, categorical, sort):
    series = pd.Series(values, dtype=object)
    key = None
    if categorical:   # sorted means in category order, as pandas sorts categoricals
        categories = ["e", "d", "c", "b", "a"]
        series = series.astype(pd.CategoricalDtype(categories))
        key = categories.index
    check(series, values, sort, key)
    check(pa.array(values, type=pa.string()).dictionary_encode(), values, sort)


@pytest.mark.parametrize("merge_rows", [1, 50, 10 ** 6])
@pytest.mark.parametrize("weighted", [False, True])
def test_distinct_rows_of_chunks_match_a_naive_count(merge_rows, weighted):
    """DistinctRows over chunks (merged early or late) against pandas: the distinct rows in
    order of first appearance, each with its rows (or summed weights)."""
    from gpuppdp.core.codes import DistinctRows

    rng = np.random.default_rng(4)
    n = 3000
    data = pd.DataFrame({"a": rng.choice(list("xyzw"), n), "b": rng.integers(0, 40, n),
                         "c": rng.choice(["p", "q"], n)})
    weights = rng.integers(1, 5, n) if weighted else np.ones(n, dtype=np.int64)
    reducer = DistinctRows(["a", "b", "c"], merge_rows=merge_rows)
    for start in range(0, n, 170):
        part = data.iloc[start:start + 170].reset_index(drop=True)
        reducer.add(part, weights[start:start + 170] if weighted else None)
    codes, labels, counts = reducer.result()
    got = pd.DataFrame({name: np.asarray(lab, dtype=object)[c].astype(str)
                        for name, c, lab in zip("abc", codes, labels)})
    got["n"] = counts
    expected = (data.assign(n=weights).groupby(["a", "b", "c"], sort=False, as_index=False)["n"]
                .sum().astype({"b": str}))
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert reducer.rows == int(weights.sum())


def test_distinct_labels_per_level_match_a_naive_count():
    """The Flash key's ``d_i[L]`` (distinct labels of each QID at each level among the
    data's values), of the whole table and of subsets of its rows, against the labels of the
    rows' values counted in pandas."""
    from gpuppdp import Anonymizer, datasets

    data, hierarchies = datasets.adult()
    qids = ["age", "education", "native-country", "occupation"]
    result = Anonymizer(quasi_identifiers={q: hierarchies[q] for q in qids}, k=2,
                        others="insensitive", backend="cpu").fit(data)
    encoded = result._evaluator.encoded
    rng = np.random.default_rng(3)
    for rows in (np.arange(len(data)), rng.choice(len(data), 40, replace=False),
                 np.array([7])):
        table = encoded.take_rows(rows) if len(rows) < len(data) else encoded
        got = table.distinct_per_level()
        for j, q in enumerate(qids):
            h = hierarchies[q]
            values = data[q].astype(str).iloc[rows]
            expected = [values.map(dict(zip(h.leaves, h.labels(level)[h.codes(level)]))
                                   ).nunique() for level in range(h.height + 1)]
            assert got[j, :h.height + 1].tolist() == expected, (q, len(rows))
            assert not got[j, h.height + 1:].any()
