"""Golden tests on the census generator's table: ARX 3.9.2's optimum, information loss,
suppressed records and checked nodes for every quality model at k=5 (suppression 0 and 5 %)
and for the risk-based models (5 % suppression), on ``gpuppdp.datasets.census(30000, 0)``
with the six demo quasi-identifiers (``tests/data/arx_census_references.json``; each case's
``runner_args`` is ARX's call, see the file's ``source``).

The table is generated here, not committed: the generator draws categories through integer
lookup tables (:mod:`gpuppdp.census`), and the test first checks the SHA-256 of the table ARX
read.  Bit-identical as on Adult (``test_quality_models_arx.py``), except the non-monotonic
entropies with suppressed records, whose suppressed terms ARX adds in hash-map order: 1e-9
relative there.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.testing import ENGINE_BACKEND

from tests.test_risk_models_arx import models_of

with open(Path(__file__).parent / "data" / "arx_census_references.json", encoding="utf-8") as _fh:
    REFERENCE = json.load(_fh)
CASES = REFERENCE["cases"]
QIDS = REFERENCE["data"]["quasi_identifiers"]
HASH_ORDERED = {"entropy", "normalized-entropy"}  # see the module docstring
#: the default tier: one quality model and one risk model (about 2 s together)
FAST = ["loss-k5-s5", "avg-0.05-s5"]


@pytest.fixture(scope="module")
def census():
    data, hierarchies = datasets.census(REFERENCE["data"]["rows"], REFERENCE["data"]["seed"])
    table = data[QIDS].astype(str)
    digest = hashlib.sha256(table.to_csv(sep=";", index=False).encode()).hexdigest()
    assert digest == REFERENCE["data"]["qid_csv_sha256"], "not the table ARX read"
    return table, {q: hierarchies[q] for q in QIDS}


def _check(census, case):
    table, hierarchies = census
    args = dict(a.split("=", 1) for a in case["runner_args"].split()[2:])
    models = models_of(args)
    result = Anonymizer(quasi_identifiers=hierarchies, models=models,
                        suppression_limit=case["suppression_limit"], metric=case["metric"],
                        search="flash", backend=ENGINE_BACKEND, seed=0).fit(table)
    exp = case["expected"]
    assert dict(result.transformation) == exp["transformation"]
    if case["metric"] in HASH_ORDERED and exp["suppressed_records"]:
        assert result.information_loss == pytest.approx(exp["information_loss"], rel=1e-9)
    else:
        assert result.information_loss == exp["information_loss"]
    assert result.suppressed_records == exp["suppressed_records"]
    assert result.nodes_evaluated == case["arx"]["transformations_checked"]


@pytest.mark.parametrize("case", [c for c in CASES if c["id"] in FAST], ids=FAST)
def test_census_matches_arx(census, case):
    _check(census, case)


MORE = [c for c in CASES if c["id"] not in FAST]


@pytest.mark.parametrize("case", MORE, ids=[c["id"] for c in MORE])
def test_census_matches_arx_more_cases(census, case):
    _check(census, case)
