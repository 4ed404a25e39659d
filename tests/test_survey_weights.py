"""Survey weights in the risk measures: weighted class sizes and the individual risk."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis.risk import risk_report
from gpuppdp.analysis.survey import individual_risk, individual_risks, survey_risk
from gpuppdp.errors import InputError

from .test_risk import run

# sdcMicro's own test of indivRisk (sdcTools/sdcMicro, tests/testthat/test_indivRisk.R,
# "data frame with weight, method = approx, qual = default, survey = TRUE"): three key
# variables, a weight, and the risks it expects
SDC_A = [2, 3, 2, 2, 3, 3, 1, 2]
SDC_B = [3, 3, 3, 3, 3, 3, 4, 3]
SDC_C = [1, 3, 1, 2, 1, 1, 1, 1]
SDC_W = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51]
SDC_RISK = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883,
            0.03931625, 0.01369863]


def sdc_table():
    return pd.DataFrame({"A": SDC_A, "B": SDC_B, "C": SDC_C, "weight": SDC_W})


def naive_risks(data, qids, weights):
    """Per record: f (records of its class), F (their weights) and Benedetti & Franconi's
    approximate individual risk written out (Franconi & Polettini 2004; sdcMicro's
    indivRisk.R)."""
    keys = [tuple(r) for r in data[qids].astype(str).itertuples(index=False)]
    f, big = {}, {}
    for k, w in zip(keys, weights):
        f[k] = f.get(k, 0) + 1
        big[k] = big.get(k, 0.0) + w
    out = []
    for k in keys:
        fk, fw = f[k], big[k]
        p = fk / fw
        if fw == fk:
            r = 1.0 / fk
        elif fk == 1:
            r = p / (1 - p) * math.log(1 / p)
        elif fk == 2:
            r = p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
        else:
            r = p / (fk - (1 - p))
        out.append((fk, fw, r))
    return out


def test_sdcmicro_example(backend):
    risks = individual_risks(sdc_table(), ["A", "B", "C"], "weight", backend)
    assert risks == pytest.approx(SDC_RISK, abs=5e-9)


def test_against_the_formulas(backend):
    rng = np.random.default_rng(3)
    n = 400
    data = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 5, n),
                         "c": rng.integers(0, 3, n)})
    w = rng.uniform(1.0, 60.0, n)
    w[:5] = 1.0  # some classes of their own population (F = f) where the rows are alone
    qids = ["a", "b", "c"]
    ref = naive_risks(data, qids, w)
    got = individual_risks(data, qids, w, backend)
    assert got == pytest.approx([r for _, _, r in ref], rel=1e-12)
    rep = risk_report(data, qids, backend=backend, sampling_weights=w, attributes=False)
    sw = rep["survey_weights"]
    risk = np.array([r for _, _, r in ref])
    assert sw["expected_reidentifications"] == pytest.approx(risk.sum(), rel=1e-12)
    assert sw["global_risk"] == pytest.approx(risk.sum() / n, rel=1e-12)
    assert sw["estimated_population"] == pytest.approx(w.sum(), rel=1e-12)
    assert sw["highest_individual_risk"] == pytest.approx(risk.max(), rel=1e-12)
    assert sw["smallest_class_weight"] == pytest.approx(min(F for _, F, _ in ref), rel=1e-12)
    assert sw["sample_uniques_weight"] == pytest.approx(
        sum(F for f, F, _ in ref if f == 1), rel=1e-12)
    for t, share in sw["records_at_risk"].items():
        assert share == pytest.approx(float((risk > float(t)).mean())), t
    assert sw["column"] is None


def test_hand_computed_classes(backend):
    """f = 1, 2, 3 and F = f, by hand: p = 1/4 -> (1/3) ln 4; p = 2/5 -> 2/3 - (4/9) ln 2.5;
    p = 3/6 -> 0.5 / 2.5; F = f -> 1/f."""
    sizes = [1, 2, 3, 2]
    sums = [4.0, 5.0, 6.0, 2.0]
    got = backend.to_host(individual_risk(sizes, sums, backend))
    want = [math.log(4) / 3, 2 / 3 - 4 / 9 * math.log(2.5), 0.2, 0.5]
    assert got == pytest.approx(want, rel=1e-14)
    s = survey_risk(sizes, sums, backend)
    assert s["expected_reidentifications"] == pytest.approx(
        want[0] + 2 * want[1] + 3 * want[2] + 2 * want[3], rel=1e-14)
    assert s["global_risk"] == pytest.approx(s["expected_reidentifications"] / 8)


def test_suppressed_rows_and_their_weights_are_left_out(backend):
    data = sdc_table().astype({"A": str, "B": str, "C": str})
    starred = pd.concat([data, pd.DataFrame({"A": ["*"], "B": ["*"], "C": ["*"],
                                             "weight": [1e6]})], ignore_index=True)
    rep = risk_report(starred, ["A", "B", "C"], backend=backend, sampling_weights="weight",
                      attributes=False)
    assert rep["suppressed_rows"] == 1
    sw = rep["survey_weights"]
    assert sw["column"] == "weight"
    assert sw["estimated_population"] == pytest.approx(sum(SDC_W))
    assert sw["expected_reidentifications"] == pytest.approx(sum(SDC_RISK), abs=1e-7)


@pytest.mark.parametrize("weights, match", [
    ("nope", "no column 'nope'"),
    ([1.0] * 7, "one weight per row"),
    ([1.0] * 7 + [0.0], "positive numbers, got 0.0 at row 7"),
    ([1.0] * 7 + [float("nan")], "positive"),
    ([0.5] * 8, "F_k < f_k"),
])
def test_bad_weights(weights, match):
    with pytest.raises(InputError, match=match):
        individual_risks(sdc_table(), ["A", "B", "C"], weights)


def test_cli(tmp_path, capsys):
    path = tmp_path / "t.csv"
    sdc_table().to_csv(path, sep=";", index=False)
    out = tmp_path / "r.json"
    assert run(["risk", str(path), "--qi", "A", "B", "C", "--sampling-weights", "weight",
                "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "survey weights (weight): estimated population 394;" in text
    sw = json.loads(out.read_text())["survey_weights"]
    assert sw["expected_reidentifications"] == pytest.approx(sum(SDC_RISK), abs=1e-7)
    with pytest.raises(InputError, match="--dask and --sampling-weights"):
        run(["risk", str(path), "--qi", "A", "--sampling-weights", "weight", "--dask", "local:1"])
