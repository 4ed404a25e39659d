"""Histograms with Gaussian noise: ``dp_histogram(mechanism="gaussian" | "discrete-gaussian")``
and ``gpuppdp dp-histogram --mechanism ... --delta/--rho``, charged to the ledger in zCDP
(issue 37, item 5)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from gpuppdp.cli import main
from gpuppdp.dp import BudgetAccountant, RandomSource, dp_histogram
from gpuppdp.dp.accounting import zcdp_to_approx
from gpuppdp.dp.gaussian import DiscreteGaussianMechanism
from gpuppdp.errors import InputError


def src(backend, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RandomSource(backend, seed=seed, insecure=True)  # tests: reproducible


def discrete_delta(epsilon, sigma, sens=1):
    """δ(ε) of the discrete Gaussian (CKS 2020 Theorem 7) by a direct sum over its pmf."""
    y = np.arange(-int(60 * sigma) - 10, int(60 * sigma) + 11, dtype=np.float64)
    p = np.exp(-y * y / (2 * sigma * sigma))
    p /= p.sum()
    q = np.exp(-(y - sens) ** 2 / (2 * sigma * sigma))
    q /= q.sum()
    return float(np.maximum(p - math.exp(epsilon) * q, 0.0).sum())


def test_discrete_gaussian_calibrated_from_epsilon_delta_is_the_smallest_sigma():
    mech = DiscreteGaussianMechanism(epsilon=1.0, delta=1e-6)
    assert discrete_delta(1.0, mech.sigma) <= 1e-6
    assert discrete_delta(1.0, mech.sigma * (1 - 1e-3)) > 1e-6  # not much larger than needed
    assert mech.epsilon == 1.0 and mech.delta == 1e-6


@pytest.mark.parametrize("mechanism", ["discrete-gaussian", "gaussian"])
def test_noise_variance_is_sigma_squared_on_many_cells(backend, mechanism):
    n = 4000
    data = pd.DataFrame({"x": np.repeat(np.arange(4), 5)})
    table = dp_histogram(data, "x", domains={"x": list(range(n))}, rho=0.02,
                         mechanism=mechanism, clamp=False, random=src(backend, 7))
    dp = table.attrs["dp"]
    q = dp["queries"]["count"]
    assert q["mechanism"] == mechanism and dp["notion"] == "zcdp"
    assert q["sigma"] == pytest.approx(5.0, rel=1e-3)  # Δ/sqrt(2ρ), Δ = 1 (a grid step more
    # for the grid Gaussian: round(x/g) moves by Δ/g + 1 steps)
    assert dp["rho"] == pytest.approx(0.02, rel=1e-3) and dp["rho"] >= 0.02
    assert dp["epsilon"] is None and 0 < dp["delta"] < 1e-100
    noise = table["count"].to_numpy() - np.r_[np.full(4, 5), np.zeros(n - 4)]
    assert table["count"].dtype.kind == "i"
    var = q["sigma"] ** 2 + (1 / 12 if mechanism == "gaussian" else 0)  # + the rounding
    assert abs(noise.mean()) < 5 * math.sqrt(var / n)
    assert noise.var() == pytest.approx(var, rel=6 * math.sqrt(2 / n))


def test_python_twin_charges_the_ledger_in_zcdp(backend):
    data = pd.DataFrame({"sex": ["f", "m", "m"]})
    acc = BudgetAccountant(2.0, delta=1e-5)
    table = dp_histogram(data, "sex", epsilon=0.5, delta=1e-6, public_domain=True,
                         mechanism="discrete-gaussian", accountant=acc,
                         random=src(backend))
    dp = table.attrs["dp"]
    (entry,) = acc.ledger
    assert entry.notion == "zcdp" and entry.rho == dp["rho"]
    assert entry.delta == dp["queries"]["count"]["delta_trunc"]
    assert (dp["epsilon"], dp["delta"]) == (0.5, 1e-6)
    assert acc.spent == zcdp_to_approx(entry.rho, 1e-5 - entry.delta)
    with pytest.raises(InputError, match="needs a budget with delta > 0"):
        dp_histogram(data, "sex", rho=0.1, public_domain=True, mechanism="gaussian",
                     accountant=BudgetAccountant(2.0), random=src(backend))
    for bad, match in ((dict(mechanism="gaussian", epsilon=1.0), "needs delta > 0"),
                       (dict(mechanism="laplace", epsilon=1.0, delta=1e-6), "apply to the"),
                       (dict(mechanism="discrete-gaussian", epsilon=1.0, rho=0.1),
                        "not both"),
                       (dict(mechanism="gaussian", epsilon=1.0, delta=0.0), "delta")):
        with pytest.raises(InputError, match=match):
            dp_histogram(data, "sex", public_domain=True, random=src(backend), **bad)


@pytest.fixture
def people(tmp_path):
    data = tmp_path / "people.csv"
    data.write_text("age;sex\n21;f\n22;m\n35;m\n36;f\n37;m\n22;m\n")
    return tmp_path, data


def test_cli_round_trip_records_sigma_rho_and_the_charge(people, capsys):
    tmp, data = people
    out, report, ledger = tmp / "out.csv", tmp / "out.json", tmp / "ledger.jsonl"
    argv = ["dp-histogram", str(data), "--by", "sex", "--public-domain", "--mechanism",
            "discrete-gaussian", "--epsilon", "1", "--delta", "1e-6", "--no-clamp",
            "--budget-file", str(ledger), "--budget", "3", "--budget-delta", "1e-5",
            "--new-ledger", "--seed", "4", "--insecure-seed", "--json", str(report),
            "--output", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "rho spent (zCDP): " in text and "noise: discrete-gaussian, sigma " in text
    doc = json.loads(report.read_text())
    release = doc["release"]
    q = release["queries"]["count"]
    assert q["mechanism"] == "discrete-gaussian" and release["notion"] == "zcdp"
    assert discrete_delta(1.0, q["sigma"]) <= 1e-6  # the (1, 1e-6) target is met
    assert release["rho"] == pytest.approx(1 / (2 * q["sigma"] ** 2), rel=1e-8)
    assert (release["epsilon"], release["delta"]) == (1.0, 1e-6)
    entry = doc["ledger"]["entry"]
    assert entry["notion"] == "zcdp" and entry["rho"] == release["rho"]
    assert entry["epsilon"] is None and entry["delta"] == q["delta_trunc"]
    loaded = BudgetAccountant.load(ledger)
    assert loaded.ledger[-1].rho == release["rho"]
    assert doc["ledger"]["spent"] == {"epsilon": loaded.spent, "delta": 1e-5,
                                      "accounting": "zcdp"}
    table = pd.read_csv(out, sep=";")
    assert table["sex"].tolist() == ["f", "m"] and table["count"].dtype.kind == "i"
    # a second run composes in zCDP: less than twice the first
    first = loaded.spent
    assert main(argv[:-4] + ["--output", str(out)]) == 0
    assert BudgetAccountant.load(ledger).spent < 2 * first


@pytest.mark.parametrize("extra, match", [
    (["--mechanism", "gaussian", "--epsilon", "1"], "needs --delta D > 0"),
    (["--mechanism", "laplace", "--epsilon", "1", "--rho", "0.1"], "--delta and --rho apply"),
    (["--mechanism", "gaussian"], "--epsilon is required"),
    (["--mechanism", "gaussian", "--epsilon", "1", "--rho", "0.1"], "not both"),
    (["--mechanism", "discrete-gaussian", "--rho", "0.1", "--budget-file", "L.jsonl",
      "--budget", "1", "--new-ledger"], "needs a budget with delta > 0"),
    (["--mechanism", "gaussian", "--epsilon", "1", "--delta", "2"], "delta"),
])
def test_cli_errors_name_the_parameter(people, capsys, extra, match):
    tmp, data = people
    extra = [str(tmp / e) if e == "L.jsonl" else e for e in extra]
    status = main(["dp-histogram", str(data), "--by", "sex", "--public-domain", *extra,
                   "--output", str(tmp / "o.csv")])
    assert status == 2 and match in capsys.readouterr().err
    assert not (tmp / "o.csv").exists()
