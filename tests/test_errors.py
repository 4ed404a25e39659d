"""Bad input: every error names the problem (parameter, column, values) and comes from gpuppdp,
not from deep inside NumPy or pandas."""

from __future__ import annotations

import math
import re
import sys

import numpy as np
import pandas as pd
import pytest

from gpuppdp import (
    Anonymizer,
    BackendError,
    DistinctLDiversity,
    Hierarchy,
    HierarchyError,
    KAnonymity,
    NoSolutionError,
    SchemaError,
    UnknownValuesError,
    get_backend,
)
from gpuppdp.io import read_table


# -- a small table ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hierarchies() -> dict[str, Hierarchy]:
    age = Hierarchy.from_rows([[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"]
                               for a in range(20, 40)], name="age")
    sex = Hierarchy.flat(["M", "F"], name="sex")
    return {"age": age, "sex": sex}


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({"age": [20, 21, 22, 23, 30, 31, 32, 33],
                         "sex": list("MFMFMFMF"),
                         "disease": list("abababab"),
                         "id": range(8)})


def make(hierarchies, **kw) -> Anonymizer:
    args = dict(quasi_identifiers=hierarchies, sensitive=["disease"], insensitive=["id"], k=2)
    args.update(kw)
    return Anonymizer(**args)


def test_the_fixture_is_anonymizable(hierarchies, table):
    result = make(hierarchies).fit(table)
    assert result.transformation == {"age": 1, "sex": 0}
    assert result.suppressed_records == 0


# -- values missing from a hierarchy ---------------------------------------------------------
def test_unknown_values_listed_and_truncated(hierarchies, table):
    bad = table.assign(age=[20, 50, 51, 52, 53, 54, 55, 56])  # 7 unknown values, 7 rows
    with pytest.raises(UnknownValuesError) as info:
        make(hierarchies).fit(bad)
    msg = str(info.value)
    assert "'age'" in msg
    assert "7 value(s) not in its hierarchy" in msg
    assert "(7 row(s), first at row 1)" in msg
    assert "'50', '51', '52', '53', '54' and 2 more" in msg
    assert "'55'" not in msg  # only the first five are shown
    assert info.value.attribute == "age"
    assert len(info.value.values) == 7
    assert isinstance(info.value, ValueError)


def test_unknown_values_few_are_all_listed(hierarchies, table):
    bad = table.assign(sex=list("MFMFMXMY"))
    with pytest.raises(UnknownValuesError,
                       match=r"column 'sex': 2 value\(s\) not in its hierarchy "
                             r"\(2 row\(s\), first at row 5\): 'X', 'Y'$"):
        make(hierarchies).fit(bad)


# -- missing values -------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [None, np.nan])
def test_missing_value_in_qid(hierarchies, table, missing):
    bad = table.astype({"age": object})
    bad.loc[3, "age"] = missing
    with pytest.raises(SchemaError) as info:
        make(hierarchies).fit(bad)
    msg = str(info.value)
    assert "column 'age'" in msg and "1 missing value(s) (NaN/None)" in msg
    assert "first at row 3" in msg


# -- malformed hierarchies ------------------------------------------------------------------------
def test_hierarchy_level_splits_a_group():
    with pytest.raises(HierarchyError) as info:
        Hierarchy([["a", "b", "c"], ["ab", "ab", "c"], ["x", "y", "x"]], name="letters")
    msg = str(info.value)
    assert msg.startswith("letters:")
    assert "level 2 is not a function of level 1" in msg
    assert "'ab'" in msg and "'x', 'y'" in msg


def test_hierarchy_duplicate_leaves():
    with pytest.raises(HierarchyError, match=r"zip: duplicate leaves '47906'$"):
        Hierarchy.from_rows([["47906", "*"], ["47677", "*"], ["47906", "*"]], name="zip")


def test_hierarchy_several_top_values():
    with pytest.raises(HierarchyError,
                       match=r"h: the top level must have one value, it has 2: '\*', 'ANY'"):
        Hierarchy([["a", "b", "c"], ["ab", "ab", "c"], ["*", "*", "ANY"]], name="h")


def test_hierarchy_ragged_levels_and_empty():
    with pytest.raises(HierarchyError, match="level 1 has 2 labels, level 0 has 3"):
        Hierarchy([["a", "b", "c"], ["*", "*"]], name="h")
    with pytest.raises(HierarchyError, match="at least one leaf"):
        Hierarchy([[]], name="h")
    with pytest.raises(HierarchyError, match="no rows"):
        Hierarchy.from_rows([], name="h")


# -- k -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, -3, 2.5, "3", True, [5]])
def test_bad_k(hierarchies, k):
    with pytest.raises(ValueError, match=r"k must be an integer >= 1, got " + re.escape(repr(k))):
        make(hierarchies, k=k)


def test_k_zero_in_model():
    with pytest.raises(ValueError, match=r"k must be an integer >= 1, got 0"):
        KAnonymity(0)


def test_k_larger_than_rows(hierarchies, table):
    with pytest.raises(ValueError, match=r"KAnonymity\(k=9\) needs classes of 9 records but "
                                         r"the table has only 8 rows"):
        make(hierarchies, k=9).fit(table)


def test_no_model(hierarchies):
    with pytest.raises(ValueError, match="no privacy model given"):
        make(hierarchies, k=None)


def test_bad_l(hierarchies):
    with pytest.raises(ValueError, match=r"l must be an integer >= 1, got 0"):
        DistinctLDiversity("disease", 0)


# -- suppression limit ----------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [-0.01, 1.5, math.nan, "0.1", None, True])
def test_bad_suppression_limit(hierarchies, limit):
    with pytest.raises(ValueError, match=r"suppression_limit must be a finite number in "
                                         r"\[0, 1\], got " + re.escape(repr(limit))):
        make(hierarchies, suppression_limit=limit)


@pytest.mark.parametrize("limit", [0, 0.0, 1, 1.0, 0.05])
def test_good_suppression_limit(hierarchies, limit):
    assert make(hierarchies, suppression_limit=limit).suppression_limit == float(limit)


# -- table ----------------------------------------------------------------------------------------
def test_empty_table(hierarchies, table):
    with pytest.raises(SchemaError, match=r"the table is empty \(0 rows\)"):
        make(hierarchies).fit(table.iloc[:0])


@pytest.mark.parametrize("data", [np.zeros((3, 4)), {"age": [20]}, [[20, "M"]]])
def test_data_not_a_dataframe(hierarchies, data):
    with pytest.raises(TypeError,
                       match=r"data must be a pandas DataFrame, got (numpy\.)?"
                       + type(data).__name__):
        make(hierarchies).fit(data)


def test_schema_column_absent_from_data(hierarchies, table):
    with pytest.raises(SchemaError) as info:
        make(hierarchies, insensitive=["id", "zipcode"]).fit(table)
    msg = str(info.value)
    assert "column(s) not in the data: 'zipcode'" in msg
    assert "the data has 'age', 'sex', 'disease', 'id'" in msg


def test_qid_absent_from_data(hierarchies, table):
    with pytest.raises(SchemaError, match="column\\(s\\) not in the data: 'sex'"):
        make(hierarchies).fit(table.drop(columns=["sex"]))


# -- roles ----------------------------------------------------------------------------------------
def test_qid_without_hierarchy(hierarchies):
    with pytest.raises(SchemaError, match=r"quasi-identifier 'zip' has no hierarchy"):
        make({**hierarchies, "zip": None})


@pytest.mark.parametrize("bad,typename", [(3, "int"), (["a", "*"], "list"),
                                          ({"a": "*"}, "dict")])
def test_qid_with_non_hierarchy(hierarchies, bad, typename):
    with pytest.raises(SchemaError, match=rf"quasi-identifier 'zip': expected a Hierarchy or a "
                                          rf"CSV path, got {typename}"):
        make({**hierarchies, "zip": bad})


def test_qid_hierarchy_path_missing(hierarchies, table, tmp_path):
    missing = tmp_path / "nope.csv"
    anonymizer = make({**hierarchies, "zip": str(missing)})  # the file is read by fit
    with pytest.raises(FileNotFoundError, match=re.escape(f"hierarchy file not found: {missing}")):
        anonymizer.fit(table)


def test_no_quasi_identifiers():
    with pytest.raises(SchemaError, match="quasi_identifiers must be a non-empty mapping"):
        Anonymizer(quasi_identifiers={}, k=2)


def test_sensitive_also_qid(hierarchies, table):
    with pytest.raises(SchemaError, match=r"column 'age' is given two roles: quasi-identifying "
                                          r"and sensitive"):
        make(hierarchies, sensitive=["age"]).fit(table)


def test_insensitive_also_identifying(hierarchies, table):
    with pytest.raises(SchemaError, match=r"column 'id' is given two roles: insensitive and "
                                          r"identifying"):
        make(hierarchies, identifying=["id"]).fit(table)


def test_role_given_as_string(hierarchies):
    with pytest.raises(TypeError, match=r"sensitive must be a list of column names, got the "
                                        r"string 'disease'"):
        make(hierarchies, sensitive="disease")


def test_column_without_role(hierarchies, table):
    with pytest.raises(SchemaError) as info:
        Anonymizer(quasi_identifiers=hierarchies, k=2).fit(table)
    msg = str(info.value)
    assert "2 column(s) have no role: 'disease', 'id'" in msg
    # the Python message names the parameter, the command line's the flag
    assert "others='insensitive'" in msg and "--others" not in msg
    assert "--others insensitive|drop" in info.value.cli and "others=" not in info.value.cli


@pytest.mark.parametrize("others,columns", [("insensitive", ["age", "sex", "disease", "id"]),
                                            ("drop", ["age", "sex"])])
def test_others_accepted(hierarchies, table, others, columns):
    result = Anonymizer(quasi_identifiers=hierarchies, k=2, others=others, seed=0).fit(table)
    assert list(result.released.columns) == columns
    assert len(result.released) == len(table)


def test_others_bad_value(hierarchies, table):
    with pytest.raises(SchemaError, match=r"others must be 'error', 'insensitive' or 'drop', "
                                          r"got 'keep'"):
        make(hierarchies, others="keep").fit(table)


def test_model_on_non_sensitive_column(hierarchies):
    with pytest.raises(SchemaError, match=r"models refer to 'id': declare them sensitive"):
        make(hierarchies, models=[DistinctLDiversity("id", 2)])
    with pytest.raises(SchemaError, match=r"models refer to 'age': declare them sensitive"):
        make(hierarchies, models=[DistinctLDiversity("age", 2)])


def test_models_not_privacy_models(hierarchies):
    with pytest.raises(TypeError, match=r"models must be PrivacyModel instances, got 5"):
        make(hierarchies, models=[5])


# -- option names ---------------------------------------------------------------------------------
@pytest.mark.parametrize("option,value,message", [
    ("metric", "gini",
     "metric must be one of ['aecs', 'ambiguity', 'discernibility', 'discernibility-monotonic', "
     "'entropy', 'entropy-monotonic', 'height', 'kl', 'loss', 'normalized-entropy', 'precision'] "
     "or a "
     "Metric, got 'gini'"),
    ("search", "genetic", "search must be one of ('auto', 'flash', 'exhaustive', 'levels', "
                          "'lightning', 'beam', 'samarati'), got 'genetic'"),
    ("backend", "tpu", "backend must be one of ('auto', 'cpu', 'gpu'), got 'tpu'"),
    ("suppressed", "blank", "suppressed must be one of ('mark', 'drop'), got 'blank'"),
])
def test_unknown_option_names(hierarchies, option, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make(hierarchies, **{option: value})


def test_metric_name_case_insensitive(hierarchies, table):
    assert make(hierarchies, metric="Precision").fit(table).metric == "precision"


# -- files ----------------------------------------------------------------------------------------
def test_read_table_missing_file(tmp_path):
    path = tmp_path / "missing.csv"
    with pytest.raises(FileNotFoundError, match=re.escape(f"input file not found: {path}")):
        read_table(path)


def test_read_table_directory(tmp_path):
    with pytest.raises(IsADirectoryError, match=re.escape(f"input file {tmp_path} is a folder, "
                                                          "not a file")):
        read_table(tmp_path)


def test_read_table_undetectable_delimiter(tmp_path):
    path = tmp_path / "colon.csv"
    path.write_text("a:b\n1:2\n3:4\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot detect the delimiter of .*colon\.csv; pass "
                                         r"sep=$"):
        read_table(path)
    assert read_table(path, sep=":").to_dict("list") == {"a": ["1", "3"], "b": ["2", "4"]}


def test_hierarchy_from_csv_missing_file(tmp_path):
    path = tmp_path / "h.csv"
    with pytest.raises(FileNotFoundError, match=re.escape(f"hierarchy file not found: {path}")):
        Hierarchy.from_csv(path)


# -- backends -------------------------------------------------------------------------------------
def test_gpu_backend_without_cupy_raises(monkeypatch):
    # CuPy is not installed here; make sure of it even on a GPU machine (None in sys.modules
    # makes ``import cupy`` raise ImportError)
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(BackendError) as info:
        get_backend("gpu")
    msg = str(info.value)
    assert "backend='gpu' requested but unavailable" in msg
    assert "CuPy is not importable (ModuleNotFoundError" in msg or \
        "CuPy is not importable (ImportError" in msg


def test_auto_backend_falls_back_to_numpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.delenv("GPUPPDP_BACKEND", raising=False)
    backend = get_backend("auto")
    assert backend.name == "numpy" and not backend.is_gpu
    assert get_backend("cpu").name == "numpy"


def test_backend_env_override_is_validated(monkeypatch):
    monkeypatch.setenv("GPUPPDP_BACKEND", "fpga")
    with pytest.raises(ValueError, match=r"GPUPPDP_BACKEND must be one of .*got 'fpga'"):
        get_backend("auto")


def test_gpu_backend_error_through_anonymizer(hierarchies, table, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    anonymizer = make(hierarchies, backend="gpu")  # the backend is chosen by fit
    with pytest.raises(BackendError, match="backend='gpu' requested but unavailable"):
        anonymizer.fit(table)


# -- no solution ----------------------------------------------------------------------------------
def test_no_solution_distinct_l_too_large(hierarchies, table):
    # only two distinct diseases: no class can hold three
    anonymizer = make(hierarchies, k=None, models=[DistinctLDiversity("disease", 3)],
                      suppression_limit=0.0)
    with pytest.raises(NoSolutionError) as info:
        anonymizer.fit(table)
    msg = str(info.value)
    assert "distinct l-diversity of disease with l = 3" in msg
    assert "0.00% suppressed records (0 of 8)" in msg


def test_no_solution_homogeneous_table(hierarchies, table):
    # one disease only: no class is 2-diverse, and 10 % of 8 rows allows 0 suppressed
    anonymizer = make(hierarchies, models=[DistinctLDiversity("disease", 2)],
                      suppression_limit=0.1)
    with pytest.raises(NoSolutionError, match=r"\(0 of 8\); allow more suppression"):
        anonymizer.fit(table.assign(disease=list("aaaaaaaa")))
    # one deviating record: only the top node (a single class) is 2-diverse
    result = anonymizer.fit(table.assign(disease=list("aaaaaaab")))
    assert result.transformation == {"age": 2, "sex": 1}
    assert result.suppressed_records == 0


def test_loss_with_a_single_valued_hierarchy_is_defined():
    """A one-leaf domain cannot lose information: its term is 0, not a division by zero."""
    import pandas as pd

    from gpuppdp import Anonymizer, Hierarchy
    H = {"a": Hierarchy([["v0"], ["*"]]), "b": Hierarchy([["v0", "v1"], ["*", "*"]])}
    df = pd.DataFrame({"a": ["v0"] * 4, "b": ["v0", "v1", "v0", "v1"]})
    result = Anonymizer(quasi_identifiers=H, k=2, metric="loss", backend="cpu").fit(df)
    assert result.transformation == {"a": 0, "b": 0}
    assert result.information_loss == 0.0


# -- the validators: the parameter's name first, one error type per kind of mistake --------------
@pytest.mark.parametrize("call, error, message", [
    (lambda v: v.check_positive("scale", 0), "InputError", "scale must be a finite number > 0"),
    (lambda v: v.check_epsilon("epsilon", math.nan), "InputError", "epsilon must be a finite"),
    (lambda v: v.check_probability("p", 1.0, low=0.5, high=1.0), "InputError",
     "p must be a number in the open interval (0.5, 1)"),
    (lambda v: v.check_int("k", 0, 1), "InputError", "k must be an integer >= 1, got 0"),
    (lambda v: v.check_number("t", 2.0, 0.0, 1.0), "InputError",
     "t must be a finite number in [0, 1], got 2.0"),
    (lambda v: v.check_name("attribute", ""), "InputError", "attribute must be a column name"),
    (lambda v: v.check_frame("data", [1, 2]), "InputTypeError",
     "data must be a pandas DataFrame, got list"),
    (lambda v: v.check_columns("quasi_identifiers", pd.DataFrame({"a": [1]}), ["a", "b"]),
     "InputError", "quasi_identifiers: column(s) not in the data: 'b'"),
    (lambda v: v.check_columns("sensitive", pd.DataFrame({"a": [1]}), ["a", "a"]),
     "InputError", "sensitive: column(s) given twice: 'a'"),
])
def test_validators_name_the_parameter_and_raise_user_errors(call, error, message):
    """Every ``check_*`` takes the parameter's name first; a bad value is an InputError (a
    ValueError), a wrong type an InputTypeError (a TypeError): user errors, one line on the
    command line."""
    from gpuppdp import errors, validation

    with pytest.raises(getattr(errors, error)) as info:
        call(validation)
    assert isinstance(info.value, errors.UserError)
    assert isinstance(info.value, ValueError if error == "InputError" else TypeError)
    assert str(info.value).startswith(message)


def test_validators_return_the_checked_value():
    from gpuppdp import validation as v

    frame = pd.DataFrame({"a": [1], "b": [2]})
    assert v.check_positive("scale", 2) == 2.0
    assert v.check_epsilon("epsilon", 0.5) == 0.5
    assert v.check_probability("p", 0.75, low=0.5, high=1.0) == 0.75
    assert v.check_int("k", 5.0, 1) == 5
    assert v.check_number("t", 0.2, 0.0, 1.0) == 0.2
    assert v.check_name("attribute", "a") == "a"
    assert v.check_frame("data", frame) is frame
    assert v.check_columns("quasi_identifiers", frame, "b") == ["b"]
    assert v.check_columns("sensitive", frame, ["a"], frame="release") == ["a"]
