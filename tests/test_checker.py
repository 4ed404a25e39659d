"""The privacy checker (:func:`gpuppdp.analysis.checker.check`) and ``gpuppdp check``.

* worked examples: the entropy l of Machanavajjhala et al.'s 3-anonymous patient table, the
  privacy-loss examples (a 12-record table against (7, 3, 2)/12, and a 4-anonymous inpatient
  table with Heart 3, Virus 4, Cancer 5 of 12);
* every key against a naive pandas checker on random small tables (with suppressed rows);
* the strict CuPy stand-in gives what NumPy gives; argument errors; the command line.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.analysis.checker import CHECK_KEYS, check, format_report
from gpuppdp.backend import cpu_backend
from gpuppdp.cli.check import register
from tests.test_models_ldiv_tclose import patient_table


def test_patient_table_entropy_l(backend):
    result = check(patient_table(), quasi_identifiers=["g"], sensitive="condition",
                   backend=backend)
    assert result["entropy_l"] == pytest.approx(1.7548, abs=1e-4)
    assert result["entropy_l"] == pytest.approx(math.exp(-(0.75 * math.log(0.75)
                                                            + 0.25 * math.log(0.25))), rel=1e-12)
    assert (result["k"], result["distinct_l"], result["classes"], result["records"]) == \
        (3, 2, 2, 7)
    assert result["recursive_c"] == 3.0                # 3 cancer / 1 viral infection
    assert result["alpha"] == 0.75
    assert result["t_ordered"] is None                 # diagnoses are not numbers


def test_privacy_loss_thesis_example(backend):
    """Original distribution (7/12, 3/12, 2/12) against classes (3/4, 1/4, 0), (3/4, 1/4, 0),
    (1/4, 1/4, 2/4): distribution losses sqrt(8)/12, sqrt(8)/12, sqrt(32)/12 and entropy
    losses 0.573, 0.573, 0.116 bits."""
    data = pd.DataFrame({"zip": list("AAAABBBBCCCC"), "s": list("aaab" "aaab" "abcc")})
    result = check(data, quasi_identifiers=["zip"], sensitive="s", backend=backend,
                   per_class=True)
    table = result["per_class"]
    assert table["zip"].tolist() == ["A", "B", "C"]
    np.testing.assert_allclose(table["distribution_loss"],
                               [math.sqrt(8) / 12, math.sqrt(8) / 12, math.sqrt(32) / 12],
                               rtol=1e-12)
    np.testing.assert_allclose(table["entropy_loss"], [0.573, 0.573, 0.116], atol=5e-4)
    assert result["distribution_loss_max"] == pytest.approx(math.sqrt(32) / 12, rel=1e-12)
    assert result["entropy_loss_max"] == pytest.approx(0.573, abs=5e-4)


def inpatient_table():
    """A 4-anonymous inpatient table of 12 records (Heart 3, Virus 4, Cancer 5), three classes
    of four: {Heart 2, Virus 2}, {Heart 1, Virus 2, Cancer 1}, {Cancer 4} -- found by a search
    over class compositions for the published losses."""
    rows = ([("130**", "<30", "Heart")] * 2 + [("130**", "<30", "Virus")] * 2
            + [("1485*", ">=40", "Heart")] + [("1485*", ">=40", "Virus")] * 2
            + [("1485*", ">=40", "Cancer")]
            + [("130**", "3*", "Cancer")] * 4)
    return pd.DataFrame(rows, columns=["zip", "age", "condition"])


def test_privacy_loss_inpatient_table(backend):
    data = inpatient_table()
    assert data["condition"].value_counts().to_dict() == {"Cancer": 5, "Virus": 4, "Heart": 3}
    result = check(data, quasi_identifiers=["zip", "age"], sensitive="condition",
                   backend=backend, per_class=True)
    table = result["per_class"]
    assert result["k"] == 4 and result["classes"] == 3
    np.testing.assert_allclose(table["distribution_loss"], [0.5137, 0.2357, 0.7169], atol=1e-4)
    np.testing.assert_allclose(table["entropy_loss"], [0.5546, 0.0546, 1.5546], atol=1e-4)
    assert result["distribution_loss_max"] == pytest.approx(0.7169, abs=1e-4)
    assert result["entropy_loss_max"] == pytest.approx(1.5546, abs=1e-4)
    assert result["recursive_c"] == math.inf           # the all-Cancer class


# ---------------------------------------------------------------------------------------
# naive pandas checker
# ---------------------------------------------------------------------------------------
def naive_check(data, qids, sensitive):
    kept = data[~(data[qids] == "*").all(axis=1)]
    out = {"records": len(kept), "suppressed_rows": len(data) - len(kept)}
    groups = [g for _, g in kept.groupby(qids, sort=False)]
    out["classes"] = len(groups)
    out["k"] = min(len(g) for g in groups)
    p = kept[sensitive].value_counts() / len(kept)
    labels = list(p.index)
    try:
        numeric = sorted(labels, key=float)
    except ValueError:
        numeric = None
    h = lambda d: -sum(x * math.log2(x) for x in d if x > 0)  # noqa: E731
    stats = {k: [] for k in CHECK_KEYS[4:]}
    for g in groups:
        pe = g[sensitive].value_counts() / len(g)
        full = pe.reindex(labels, fill_value=0.0)
        stats["distinct_l"].append(len(pe))
        stats["entropy_l"].append(math.exp(-sum(x * math.log(x) for x in pe)))
        top = g[sensitive].value_counts().max()
        stats["recursive_c"].append(top / (len(g) - top) if len(pe) > 1 else math.inf)
        stats["t_equal"].append(0.5 * (full - p).abs().sum())
        if numeric is not None:
            diff = (full - p).reindex(numeric).cumsum().abs().sum()
            stats["t_ordered"].append(diff / max(len(labels) - 1, 1))
        stats["alpha"].append(pe.max())
        stats["delta_disclosure"].append(max(abs(math.log2(pe[v] / p[v])) for v in pe.index))
        gains = [(pe[v] - p[v]) / p[v] for v in pe.index if pe[v] > p[v]]
        stats["beta_basic"].append(max(gains, default=0.0))
        enhanced = [math.inf if (pe[v] - p[v]) / p[v] > -math.log(p[v]) else
                    (pe[v] - p[v]) / p[v] for v in pe.index if pe[v] > p[v]]
        stats["beta_enhanced"].append(max(enhanced, default=0.0))
        stats["distribution_loss_max"].append(math.sqrt(((full - p) ** 2).sum()))
        stats["entropy_loss_max"].append(abs(h(p) - h(pe)))
    for key, values in stats.items():
        if not values:
            out[key] = None
        elif key in ("distinct_l", "entropy_l"):
            out[key] = min(values)
        else:
            out[key] = max(values)
    return out


def random_release(seed):
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(10, 80))
    q = int(rng.integers(1, 4))
    data = {f"q{j}": rng.choice([f"v{i}" for i in range(int(rng.integers(1, 4)))], size=n)
            for j in range(q)}
    numeric = seed % 2 == 0
    values = ["3", "10", "7.5", "42", "1"] if numeric else ["flu", "cold", "hiv", "cancer"]
    w = rng.integers(1, 5, size=len(values))
    data["s"] = rng.choice(values, size=n, p=w / w.sum())
    data["other"] = rng.integers(0, 9, size=n)
    df = pd.DataFrame(data)
    suppressed = rng.random(n) < 0.15
    suppressed[0] = False
    for j in range(q):
        df.loc[suppressed, f"q{j}"] = "*"
    return df, [f"q{j}" for j in range(q)], numeric


@pytest.mark.parametrize("seed", range(12))
def test_every_key_equals_naive_checker(seed):
    data, qids, numeric = random_release(seed)
    got = check(data, quasi_identifiers=qids, sensitive="s", backend="cpu")
    want = naive_check(data, qids, "s")
    assert list(got) == list(CHECK_KEYS)
    assert (got["t_ordered"] is None) == (not numeric)
    lkc = CHECK_KEYS.index("lkc_min_group")
    assert all(got[key] is None for key in CHECK_KEYS[lkc:])     # not asked for
    for key in CHECK_KEYS[:lkc]:
        if isinstance(want[key], float) and math.isinf(want[key]):
            assert math.isinf(got[key]), key
        elif isinstance(want[key], (int, np.integer)) and key != "recursive_c":
            assert got[key] == want[key], key
        elif want[key] is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-12), key


@pytest.mark.parametrize("seed", range(3))
def test_backends_agree(backend, seed):
    data, qids, _ = random_release(seed)
    ref = check(data, quasi_identifiers=qids, sensitive="s", backend=cpu_backend(),
                per_class=True)
    got = check(data, quasi_identifiers=qids, sensitive="s", backend=backend, per_class=True)
    pd.testing.assert_frame_equal(got.pop("per_class"), ref.pop("per_class"),
                                  check_exact=False, rtol=1e-12)
    assert_same_report(got, ref)


def assert_same_report(got: dict, want: dict) -> None:
    """The same keys; float values equal to 1e-12 relative, every other value exactly."""
    assert got.keys() == want.keys()
    for key in want:
        if isinstance(want[key], float):
            assert got[key] == pytest.approx(want[key], rel=1e-12), key
        else:
            assert got[key] == want[key], key


def test_without_sensitive_and_per_class_rows():
    data, qids, _ = random_release(1)
    result = check(data, quasi_identifiers=qids, backend="cpu", per_class=True)
    assert all(result[k] is None for k in CHECK_KEYS[4:])
    table = result["per_class"]
    assert table["size"].sum() == result["records"]
    assert len(table) == result["classes"]
    assert result["records"] + result["suppressed_rows"] == len(data)


def test_user_prior():
    data = inpatient_table()
    prior = {"Heart": 0.25, "Virus": 1 / 3, "Cancer": 5 / 12}     # the table's own
    a = check(data, quasi_identifiers=["zip", "age"], sensitive="condition", backend="cpu")
    b = check(data, quasi_identifiers=["zip", "age"], sensitive="condition", backend="cpu",
              prior=prior)
    assert b["distribution_loss_max"] == pytest.approx(a["distribution_loss_max"], rel=1e-12)
    uniform = {"Heart": 1 / 3, "Virus": 1 / 3, "Cancer": 1 / 3}
    c = check(data, quasi_identifiers=["zip", "age"], sensitive="condition", backend="cpu",
              prior=uniform)
    # the all-Cancer class: distance from uniform sqrt(4/9 + 1/9 + 1/9); entropy log2(3)
    assert c["distribution_loss_max"] == pytest.approx(math.sqrt(6) / 3, rel=1e-12)
    assert c["entropy_loss_max"] == pytest.approx(math.log2(3), rel=1e-12)


def test_errors():
    data = inpatient_table()
    with pytest.raises(ValueError, match="not in the data: 'nope'"):
        check(data, quasi_identifiers=["nope"], backend="cpu")
    # one column may be named by a plain string, as everywhere in the API
    assert check(data, quasi_identifiers="zip", backend="cpu") == \
        check(data, quasi_identifiers=["zip"], backend="cpu")
    with pytest.raises(ValueError, match="given twice: 'zip'"):
        check(data, quasi_identifiers=["zip", "zip"], backend="cpu")
    with pytest.raises(ValueError, match="at least one"):
        check(data, quasi_identifiers=[], backend="cpu")
    with pytest.raises(ValueError, match="quasi-identifier and as the sensitive"):
        check(data, quasi_identifiers=["zip"], sensitive="zip", backend="cpu")
    with pytest.raises(ValueError, match="prior needs a sensitive"):
        check(data, quasi_identifiers=["zip"], prior={"x": 1.0}, backend="cpu")
    with pytest.raises(ValueError, match="missing value"):
        check(data.assign(age=[None] + list(data["age"][1:])), quasi_identifiers=["age"],
              backend="cpu")
    # every QID of every row '*' is the top of the lattice: one class of all records
    top = check(data.assign(zip="*", age="*"), quasi_identifiers=["zip", "age"], backend="cpu")
    assert (top["records"], top["suppressed_rows"], top["classes"], top["k"]) == \
        (len(data), 0, 1, len(data))
    with pytest.raises(TypeError, match="DataFrame"):
        check([1, 2], quasi_identifiers=["zip"], backend="cpu")


# ---------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------
def run_cli(argv):
    parser = argparse.ArgumentParser(prog="gpuppdp")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_check(tmp_path, capsys):
    path = tmp_path / "in.csv"
    inpatient_table().assign(extra=1).to_csv(path, sep=";", index=False)
    out = tmp_path / "out.json"
    assert run_cli(["check", str(path), "--qi", "zip", "--qi", "age", "--sensitive",
                    "condition", "--json", str(out), "--backend", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "entropy_loss_max" in printed and "recursive_c" in printed
    assert "inf" in printed
    values = json.loads(out.read_text())
    assert list(values) == list(CHECK_KEYS)
    assert values["k"] == 4 and values["recursive_c"] == "inf"
    assert values["distribution_loss_max"] == pytest.approx(0.7169, abs=1e-4)
    assert format_report(check(inpatient_table(), quasi_identifiers=["zip"],
                               backend="cpu")).count("-") >= 10
    # several columns after one --qi, a given separator
    path2 = tmp_path / "in2.csv"
    inpatient_table().to_csv(path2, sep="|", index=False)
    assert run_cli(["check", str(path2), "--qi", "zip", "age", "--sep", "|",
                    "--backend", "cpu"]) == 0
    assert "classes" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not in"):
        run_cli(["check", str(path), "--qi", "nope", "--backend", "cpu"])
    with pytest.raises(SystemExit):
        run_cli(["check", str(path)])                    # --qi is required


@pytest.mark.parametrize("seed", [0, 2, 3, 5])     # tables with a solution
def test_released_tables_pass_the_checker(seed):
    """What the Anonymizer releases under (alpha, k)-anonymity, measured by the checker."""
    from gpuppdp import Anonymizer
    from gpuppdp.anonymizer import NoSolutionError
    from gpuppdp.models import AlphaKAnonymity
    from tests.test_models_ldiv_tclose import hierarchies_of, random_table
    data, levels = random_table(40 + seed)
    try:
        result = Anonymizer(quasi_identifiers=hierarchies_of(levels), sensitive=["s"],
                            models=[AlphaKAnonymity("s", 0.7, 3)], suppression_limit=0.2,
                            backend="cpu", seed=seed).fit(data)
    except NoSolutionError:
        pytest.skip("no solution for this table")
    measured = check(result.released, quasi_identifiers=list(levels), sensitive="s",
                     backend="cpu")
    assert measured["suppressed_rows"] == result.suppressed_records
    assert measured["records"] == len(data) - result.suppressed_records
    assert measured["k"] >= 3 and measured["alpha"] <= 0.7
    assert measured["classes"] == result.equivalence_classes


def test_lkc_worked_example():
    """Mohammed et al.'s patients at Non-Technical/Professional/Technical x M/F x 3 intervals:
    every group of at most 2 QID values holds >= 2 records; (Professional, [30-60)) holds
    Plastic twice in 3 records, the largest confidence."""
    from tests.test_models_lkc import patients

    data, hier = patients()
    released = data.assign(Job=hier["Job"].generalize(data["Job"], 1),
                           Age=hier["Age"].generalize(data["Age"], 1))
    qids = ["Job", "Sex", "Age"]
    got = check(released, quasi_identifiers=qids, sensitive="Surgery", lkc=(2, 2, 0.7),
                backend="cpu")
    assert got["lkc_min_group"] == 2
    assert got["lkc_max_confidence"] == pytest.approx(2 / 3)
    assert got["lkc_satisfied"] is True
    assert check(released, quasi_identifiers=qids, sensitive="Surgery", lkc=(2, 2, 0.5),
                 backend="cpu")["lkc_satisfied"] is False
    assert check(released, quasi_identifiers=qids, sensitive="Surgery", lkc=(2, 3, 1.0),
                 backend="cpu")["lkc_satisfied"] is False
    # L = 3 includes the full triple: (Professional, M, [30-60)) is one record
    assert check(released, quasi_identifiers=qids, lkc=(3, 1, 1.0),
                 backend="cpu")["lkc_min_group"] == 1
    with pytest.raises(ValueError, match="lkc must be a tuple"):
        check(released, quasi_identifiers=qids, lkc=(2, 2))
    with pytest.raises(ValueError, match="C must be"):
        check(released, quasi_identifiers=qids, sensitive="Surgery", lkc=(2, 2, 1.5))


def test_population_k_map_and_delta_presence(backend):
    population = pd.DataFrame({"zip": list("AAAABBBCCD"), "age": list("xxyyxxxyyy")})
    sample = population.iloc[[0, 1, 2, 4, 5, 7]].reset_index(drop=True)
    got = check(sample, quasi_identifiers=["zip"], population=population, backend=backend,
                per_class=True)
    # classes A (3 of 4), B (2 of 3), C (1 of 2); D is not in the sample
    assert got["k_map"] == 2
    assert got["delta_presence_min"] == pytest.approx(0.5)
    assert got["delta_presence_max"] == pytest.approx(0.75)
    assert got["per_class"]["population"].tolist() == [4, 3, 2]
    got = check(sample, quasi_identifiers=["zip", "age"], population=population,
                backend=backend)
    assert got["k_map"] == 2                               # (A, x) (A, y) (B, x) (C, y)
    with pytest.raises(ValueError, match="not a sample of the population: 3 record"):
        check(sample, quasi_identifiers=["zip"], population=population.iloc[2:])
    with pytest.raises(ValueError, match="population lacks quasi-identifier"):
        check(sample, quasi_identifiers=["zip"], population=population[["age"]])


def test_cli_check_lkc_and_population(tmp_path, capsys):
    population = pd.DataFrame({"zip": list("AAAABBBCCD"), "s": list("abababcabc")})
    sample = population.iloc[[0, 1, 2, 4, 5, 7]]
    sample.to_csv(tmp_path / "in.csv", sep=";", index=False)
    population.to_csv(tmp_path / "pop.csv", sep=";", index=False)
    out = tmp_path / "out.json"
    assert run_cli(["check", str(tmp_path / "in.csv"), "--qi", "zip", "--sensitive", "s",
                    "--lkc", "1,1,100%", "--population", str(tmp_path / "pop.csv"),
                    "--json", str(out), "--backend", "cpu"]) == 0
    values = json.loads(out.read_text())
    assert values["k_map"] == 2 and values["lkc_satisfied"] is True
    assert values["lkc_min_group"] == 1
    assert "delta_presence_max" in capsys.readouterr().out
