"""The ML trade-off of chapter 5 (gpuppdp.tradeoff.ml_tradeoff) on a slice of Adult: the scores
are ml_utility_loss's on the Anonymizer's release of each constraint, L_U relative (Def. 25),
the lambda table L_U <= lambda, and the SVG figure well-formed."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis.ml import ml_utility_loss
from gpuppdp.models import PrivacyLoss
from gpuppdp.tradeoff import ml_tradeoff


def test_ml_tradeoff_on_adult():
    pytest.importorskip("sklearn")
    data, h = datasets.adult()
    data = data.iloc[:1500].reset_index(drop=True)
    qids = {c: h[c] for c in ("age", "sex", "race")}
    features = ["age", "sex", "race", "education", "marital-status"]
    constraints = [(0.3, 0.5), (0.05, 0.05), (0.0, 0.0)]
    res = ml_tradeoff(data, quasi_identifiers=qids, sensitive="occupation",
                      constraints=constraints, features=features, target="salary-class",
                      lambdas=[0.0, 0.02, 0.1], cv=3, backend="cpu")
    assert list(res.scores["constraint"]) == ["0.3,0.5", "0.05,0.05", "0,0"]
    for row in res.scores.itertuples():
        if row.transformation is None:
            continue
        rel = Anonymizer(quasi_identifiers=qids, sensitive=["occupation"], others="insensitive",
                         models=[PrivacyLoss("occupation", row.epsilon, row.alpha)],
                         backend="cpu", seed=0).fit(data)
        assert rel.transformation == row.transformation
        want = ml_utility_loss(data, rel.release, features=features, target="salary-class",
                               cv=3)
        assert row.accuracy_released == pytest.approx(want["accuracy_released"])
        assert row.f1_released == pytest.approx(want["f1_released"])
        acc_o = res.original["accuracy"]
        assert row.L_U == pytest.approx((acc_o - row.accuracy_released) / acc_o)
    assert res.scores["transformation"].notna().sum() >= 2
    for lam, row in res.lambda_table.iterrows():
        for c, met in row.items():
            lu = res.scores.set_index("constraint").loc[c, "L_U"]
            assert met == (bool(np.isfinite(lu)) and lu <= lam + 1e-12)
    svg = res.to_svg()
    root = ET.fromstring(svg)
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(rects) == 9
    filled = sum(r.get("fill") == "#4c9a54" for r in rects)
    assert filled == int(res.lambda_table.to_numpy().sum())
    met = bool(res.lambda_table.loc[0.1, "0.3,0.5"])
    assert res.to_dict()["lambda_table"]["0.1"]["0.3,0.5"] == met
