"""The Python API's habits (scikit-learn's conventions): the constructor only stores its
parameters, ``repr`` shows the changed ones, results pickle without their input and save
themselves, ``apply`` returns a table, ``suppression=`` is the old name of ``suppressed=``."""

from __future__ import annotations

import json
import pickle
import sys

import pandas as pd
import pytest

from gpuppdp import AnonymizationResult, Anonymizer, DistinctLDiversity, datasets
from gpuppdp.backend import BackendError
from gpuppdp.io import read_table
from gpuppdp.report import write_report

pytestmark = pytest.mark.smoke  # also run against the installed wheel (.ci/run)

QIDS = ["sex", "age", "race", "education"]
ROWS = 1500


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    table = data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class"]].reset_index(drop=True)
    return table, {q: hierarchies[q] for q in QIDS}


def make(hierarchies, **kw) -> Anonymizer:
    args = dict(quasi_identifiers=hierarchies, sensitive=["occupation"],
                others="insensitive", k=5, models=[DistinctLDiversity("occupation", 2)],
                suppression_limit=0.05, backend="cpu", seed=0)
    return Anonymizer(**{**args, **kw})


@pytest.fixture(scope="module")
def result(adult) -> AnonymizationResult:
    table, hierarchies = adult
    return make(hierarchies).fit(table)


def test_constructor_reads_no_file_and_touches_no_backend(adult, tmp_path, monkeypatch):
    table, hierarchies = adult
    monkeypatch.setitem(sys.modules, "cupy", None)  # a GPU backend cannot start
    missing = tmp_path / "missing.csv"
    anonymizer = make({**hierarchies, "zip": str(missing)}, backend="gpu")
    assert anonymizer.quasi_identifiers["zip"] == str(missing)  # stored as given
    assert anonymizer.backend == "gpu"
    with pytest.raises((FileNotFoundError, BackendError)):
        anonymizer.fit(table)


def test_parameters_stored_as_given(adult):
    _, hierarchies = adult
    anonymizer = make(hierarchies, metric="Precision", suppression_limit=0)
    params = anonymizer.get_params()
    assert params["metric"] == "Precision" and params["suppression_limit"] == 0
    assert params["k"] == 5 and params["suppressed"] == "mark"
    assert Anonymizer(**params).get_params() == params


def test_repr_shows_changed_parameters(adult):
    _, hierarchies = adult
    text = repr(Anonymizer(quasi_identifiers={"sex": hierarchies["sex"]}, k=3,
                           suppressed="drop"))
    assert text == ("Anonymizer(quasi_identifiers={'sex': Hierarchy('sex', leaves=2, "
                    "height=1)}, k=3, suppressed='drop')")
    assert "backend" not in text and "metric" not in text


def test_suppression_is_the_old_name_of_suppressed(adult):
    table, hierarchies = adult
    with pytest.warns(FutureWarning, match="suppressed"):
        old = make(hierarchies, suppression="drop")
    assert old.suppressed == "drop"
    assert "suppression" not in old.get_params()
    new = make(hierarchies, suppressed="drop")
    pd.testing.assert_frame_equal(old.fit(table).released, new.fit(table).released)


def test_result_pickles_without_its_input(result, adult, tmp_path):
    table, _ = adult
    again = pickle.loads(pickle.dumps(result))
    assert again._evaluator is None  # the encoded input stays behind
    assert again.summary() == result.summary()
    assert again.transformation == result.transformation
    pd.testing.assert_frame_equal(again.released, result.released)
    new = table.iloc[:500].reset_index(drop=True)
    pd.testing.assert_frame_equal(again.apply(new, seed=1), result.apply(new, seed=1))
    with pytest.raises(ValueError, match="unpickled"):
        write_report(again, table, tmp_path / "r.html")
    assert not list(tmp_path.iterdir())


def test_to_dict_is_json(result):
    d = result.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["transformation"] == result.transformation
    assert d["information_loss"] == result.information_loss
    rel = d["release"]
    assert rel["input_rows"] == ROWS and rel["suppressed"] == "mark"
    assert rel["released_rows"] + rel["suppressed_rows"] == ROWS
    assert rel["suppressed_rows"] == result.suppressed_records


def test_save_writes_table_and_summary(result, tmp_path):
    table_path, json_path = result.save(tmp_path / "release.csv")
    assert json_path == tmp_path / "release.json"
    written = read_table(table_path)
    assert list(written.columns) == list(result.released.columns)
    assert len(written) == len(result.released)
    assert json.loads(json_path.read_text("utf-8")) == result.to_dict()


def test_apply_returns_a_table(result, adult):
    table, _ = adult
    out = result.apply(table.iloc[:300].reset_index(drop=True), seed=2)
    assert isinstance(out, pd.DataFrame) and len(out) == 300
    assert out.attrs["input_rows"] == 300
    assert out.attrs["released_rows"] + out.attrs["suppressed_rows"] == 300
