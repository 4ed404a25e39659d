"""Notebook display (``_repr_html_``) of results, hierarchies and measurements."""

from __future__ import annotations

import json

import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.analysis.risk import risk_report


@pytest.fixture(scope="module")
def adult():
    data, hierarchies = datasets.adult()
    return data.head(2000), hierarchies


def test_result_shows_levels_labels_counts_and_models(adult):
    data, hierarchies = adult
    qis = {c: hierarchies[c] for c in ("age", "sex", "race")}
    result = Anonymizer(quasi_identifiers=qis, others="insensitive", k=5,
                        suppression_limit=0.05, backend="cpu", seed=0).fit(data)
    page = result._repr_html_()
    level = result.transformation["age"]
    assert f"level {level} of {hierarchies['age'].height}" in page
    assert str(hierarchies["age"].labels(level)[0]) in page
    assert f"{result.suppressed_records:,} suppressed" in page
    assert "k-anonymity" in page and "<script" not in page


def test_hierarchy_shows_leaves_through_levels_escaped(adult):
    _, hierarchies = adult
    page = hierarchies["salary-class"]._repr_html_()
    assert "&lt;=50K" in page and "<=50K" not in page
    assert page.count("<th>") == hierarchies["salary-class"].height + 1
    assert "…" in hierarchies["age"]._repr_html_()  # 100 leaves: the first twelve shown


def test_check_and_risk_are_dicts_that_show_as_tables(adult):
    data, _ = adult
    measured = check(data, quasi_identifiers=["age", "sex"], sensitive="occupation",
                     backend="cpu")
    assert isinstance(measured, dict) and json.loads(json.dumps(measured))["k"] == measured["k"]
    page = measured._repr_html_()
    assert f"<td>k</td><td>{measured['k']}</td>" in page and "privacy measures" in page
    risk = risk_report(data, ["age", "sex"], backend="cpu")
    page = risk._repr_html_()
    assert "re-identification risk" in page and "attribute_risks.age.distinction" in page
