"""A missing cell (NaN, None, an empty CSV field) is ARX's value ``NULL``
(``DataType.NULL_VALUE``): in a quasi-identifier it is looked up in the hierarchy, which must
hold it (as ARX: an error naming the column, the count and the row to add); in a sensitive
attribute it is one more value.

ARX 3.9.2's optimum, loss, suppressed records and checked nodes on Adult with blanked cells
passed to ARX as nulls, and ARX's error without a NULL row (``tests/data/arx_types.json``,
section ``missing_values``); a table with NaNs released as the same table with ``"NULL"``
strings; the CSV path with empty fields.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, DistinctLDiversity, Hierarchy, SchemaError, datasets
from gpuppdp.cli.main import main
from gpuppdp.models import KAnonymity, TCloseness
from gpuppdp.testing import ENGINE_BACKEND

with open(Path(__file__).parent / "data" / "arx_types.json", encoding="utf-8") as _fh:
    REFERENCE = json.load(_fh)["missing_values"]
CASES = [c for c in REFERENCE["cases"] if "arx_error" not in c]
REFUSED = [c for c in REFERENCE["cases"] if "arx_error" in c]


def _arg(case, name):
    found = [a.split("=", 1)[1] for a in case["runner_args"].split() if a.startswith(name + "=")]
    return found[0] if found else None


def _with_null_row(h: Hierarchy, row: str) -> Hierarchy:
    rows = np.stack([h.labels(L)[h.codes(L)] for L in range(h.height + 1)], axis=1).tolist()
    return Hierarchy.from_rows(rows + [row.split(";")], name=h.name)


@pytest.fixture(scope="module")
def adult_missing():
    """Adult with the reference's cells missing (NaN), and hierarchies with its NULL rows."""
    data, hierarchies = datasets.adult()
    data = data.astype(object)
    k = np.arange(len(data))
    for column, (m, r) in REFERENCE["missing"].items():
        data.loc[k % m == r, column] = np.nan
    with_null = {c: _with_null_row(h, REFERENCE["null_rows"][c])
                 if c in REFERENCE["null_rows"] else h for c, h in hierarchies.items()}
    return data, hierarchies, with_null


def _fit(data, hierarchies, case):
    sensitive = _arg(case, "sensitive")
    models = [KAnonymity(int(_arg(case, "k")))]
    if _arg(case, "tclose"):
        models.append(TCloseness(sensitive, float(_arg(case, "t")), _arg(case, "tclose")))
    types = dict(t.split(":", 1) for t in (_arg(case, "types") or "").split(";") if t)
    if sensitive:
        types.setdefault(sensitive, "string")  # ARX's default type
    return Anonymizer(
        quasi_identifiers={c: hierarchies[c] for c in _arg(case, "qids").split(",")},
        sensitive=[sensitive] if sensitive else [], others="insensitive", models=models,
        suppression_limit=float(_arg(case, "supp")), metric=_arg(case, "metric"), types=types,
        search="flash", backend=ENGINE_BACKEND).fit(data)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_arx_reads_missing_cells_as_null(adult_missing, case):
    data, _, with_null = adult_missing
    result = _fit(data, with_null, case)
    assert dict(result.transformation) == case["transformation"]
    assert result.information_loss == case["information_loss"]
    assert result.suppressed_records == case["suppressed_records"]
    assert result.nodes_evaluated == case["transformations_checked"]


def test_without_a_null_row_arx_and_gpuppdp_refuse(adult_missing):
    data, hierarchies, _ = adult_missing
    case, = REFUSED
    assert "does not contain a transformation rule for value 'NULL'" in case["arx_error"]
    n_age = int(data["age"].isna().sum())
    with pytest.raises(SchemaError) as info:
        _fit(data, hierarchies, case)
    message = str(info.value)
    assert f"column 'age' has {n_age} missing value(s) (NaN/None), first at row 3" in message
    assert "add a row for it (e.g. 'NULL;NULL;NULL;NULL;*'" in message
    assert info.value.row == 3


# -- the same release as the table with "NULL" strings ------------------------------------------

def _small():
    rng = np.random.default_rng(3)
    n = 80

    def draw(values):
        return rng.choice(np.array(values, dtype=object), n)

    table = pd.DataFrame({"zip": draw(["1301", "1302", "1311", None]),
                          "age": draw(["21", "22", "35", "36", np.nan]),
                          "disease": draw(["flu", "cancer", None, "ulcer"])})
    hierarchies = {
        "zip": Hierarchy.from_rows([[z, z[:3] + "*", "*"] for z in ["1301", "1302", "1311"]]
                                   + [["NULL", "NULL", "*"]], name="zip"),
        "age": Hierarchy.from_rows([["21", "20s", "*"], ["22", "20s", "*"], ["35", "30s", "*"],
                                    ["36", "30s", "*"], ["NULL", "unknown", "*"]], name="age"),
    }
    return table, hierarchies


@pytest.mark.parametrize("limit", [0.0, 0.1])
def test_missing_cells_release_as_null_strings(limit):
    table, hierarchies = _small()
    assert table.isna().any().all()
    filled = table.fillna("NULL")

    def fit(data):
        return Anonymizer(quasi_identifiers=hierarchies, sensitive=["disease"],
                          models=[KAnonymity(3), DistinctLDiversity("disease", 2)],
                          suppression_limit=limit, search="exhaustive", backend=ENGINE_BACKEND,
                          seed=1).fit(data)

    got, want = fit(table), fit(filled)
    assert dict(got.transformation) == dict(want.transformation)
    assert got.information_loss == want.information_loss
    assert got.suppressed_records == want.suppressed_records
    assert got.equivalence_classes == want.equivalence_classes
    # the QIDs are released as NULL (or its generalization); the sensitive values as given
    pd.testing.assert_frame_equal(got.released.fillna("NULL"), want.released)
    assert (got.released[["zip", "age"]] == want.released[["zip", "age"]]).all().all()


def test_csv_with_empty_fields(capsys, tmp_path):
    """An empty CSV field is missing: NULL in a QID with a NULL row; without one, the error
    names the file's line."""
    table, hierarchies = _small()
    path = tmp_path / "t.csv"
    table.to_csv(path, sep=";", index=False)  # None/NaN written as empty fields
    for c, h in hierarchies.items():
        h.to_csv(tmp_path / f"{c}.csv")
    out = tmp_path / "o.csv"
    argv = ["anonymize", str(path), "--qi", f"zip={tmp_path / 'zip.csv'}",
            "--qi", f"age={tmp_path / 'age.csv'}", "--sensitive", "disease",
            "--l-diversity", "distinct:2", "--k", "3", "--quiet", "--output", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    released = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
    expected = Anonymizer(quasi_identifiers=hierarchies, sensitive=["disease"],
                          models=[KAnonymity(3), DistinctLDiversity("disease", 2)],
                          backend="cpu").fit(table.fillna("NULL"))
    level = dict(expected.transformation)
    for c, h in hierarchies.items():  # every released label of the QID is one of its level
        assert set(released[c]) <= set(h.labels(level[c])) | {"*"}
    assert sorted(released["disease"]) == sorted(table["disease"].fillna(""))
    Hierarchy.from_rows([["1301", "*"], ["1302", "*"], ["1311", "*"]]).to_csv(
        tmp_path / "zip.csv")
    assert main(argv) == 2
    first = int(np.flatnonzero(table["zip"].isna())[0])
    err = capsys.readouterr().err
    assert f"column 'zip' has {int(table['zip'].isna().sum())} missing value(s)" in err
    assert f"first at line {first + 2} of {path}" in err and "'NULL;*'" in err
