"""Ordered t-closeness on a text attribute from the command line (issue 12): ``--order
COL=lexical|numeric|V1,V2,...`` with ARX's default (numbers numerically, other values in the
order of ARX's string type, Java's ``String.compareTo``), and messages in words."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis.checker import check, value_order
from gpuppdp.cli.main import main
from gpuppdp.models import TCloseness

QIDS = ["sex", "age", "race"]
BRACKETS = ["000-010k", "010-025k", "025-050k", "050-100k", "100k+"]
ROWS = 1500


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    data, _ = datasets.adult()
    part = data.loc[:ROWS - 1, QIDS].reset_index(drop=True).copy()
    rng = np.random.default_rng(7)
    # income depends on age a little, so that classes differ from the whole table
    young = part["age"].astype(int) < 30
    low = rng.choice(BRACKETS, size=ROWS, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    high = rng.choice(BRACKETS, size=ROWS, p=[0.1, 0.15, 0.25, 0.3, 0.2])
    part["income"] = np.where(young, low, high)
    return part


@pytest.fixture()
def source(table, tmp_path):
    path = tmp_path / "people.csv"
    table.to_csv(path, index=False)
    return path


def qi_args() -> list[str]:
    return [a for q in QIDS
            for a in ("--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}")]


def cli(capsys, source, tmp_path, *extra) -> tuple[int, dict | None, str]:
    out = tmp_path / "rel.csv"
    summary = tmp_path / "rel.json"
    for p in (out, summary):
        if p.exists():
            p.unlink()
    rc = main(["anonymize", str(source), *qi_args(), "--sensitive", "income", "--k", "3",
               "--suppression", "2%", "--quiet", "--seed", "0", "--output", str(out),
               "--json", str(summary), *extra])
    err = capsys.readouterr().err
    return rc, json.loads(summary.read_text()) if rc == 0 else None, err


def library(table, order, t=0.15):
    _, hierarchies = datasets.adult()
    return Anonymizer(quasi_identifiers={q: hierarchies[q] for q in QIDS},
                      sensitive=["income"], k=3,
                      models=[TCloseness("income", t, "ordered", order=order)],
                      suppression_limit=0.02, backend="cpu", seed=0).fit(table)


def test_value_order_is_arx_default():
    assert value_order(["100k+", "010-025k", "000-010k"]) == ["000-010k", "010-025k", "100k+"]
    assert value_order(["10", "9", "1.5"]) is None  # numbers: the model's numeric order
    assert value_order(["10", "9", "1.5"], "lexical") == ["1.5", "10", "9"]
    # Java compares UTF-16 code units: upper case first, and a character beyond the BMP
    # (a surrogate pair, 0xD83D...) before U+FFFD, unlike Python's code-point order
    assert value_order(["b", "B", "a"], "lexical") == ["B", "a", "b"]
    assert value_order(["\ufffd", "\U0001F600"], "lexical") == ["\U0001F600", "\ufffd"]
    assert sorted(["\ufffd", "\U0001F600"]) == ["\ufffd", "\U0001F600"]
    assert value_order(["b", "a"], ["b", "a"]) == ["b", "a"]
    with pytest.raises(ValueError, match="not numbers: 'x'"):
        value_order(["1", "x"], "numeric")
    with pytest.raises(ValueError, match="order must be one of"):
        value_order(["1"], "alphabetic")


def test_text_attribute_runs_as_arx_orders_it(capsys, table, source, tmp_path):
    rc, summary, err = cli(capsys, source, tmp_path, "--t-closeness", "ordered:0.15")
    assert rc == 0, err
    expected = library(table, sorted(BRACKETS))
    assert summary["transformation"] == expected.transformation
    assert summary["information_loss"] == expected.information_loss
    assert summary["suppressed_records"] == expected.suppressed_records
    rc, lexical, _ = cli(capsys, source, tmp_path, "--t-closeness", "ordered:0.15@income",
                         "--order", "income=lexical")
    assert rc == 0 and lexical["transformation"] == summary["transformation"]


def test_explicit_order(capsys, table, source, tmp_path):
    order = ["100k+", "000-010k", "050-100k", "010-025k", "025-050k"]
    rc, summary, err = cli(capsys, source, tmp_path, "--t-closeness", "ordered:0.15",
                           "--order", "income=" + ",".join(order))
    assert rc == 0, err
    expected = library(table, order)
    assert summary["transformation"] == expected.transformation
    assert summary["information_loss"] == expected.information_loss


@pytest.mark.parametrize("extra,fragment", [
    (["--t-closeness", "ordered:0.15", "--order", "income=numeric"],
     "income is to be ordered numerically, but some values are not numbers"),
    (["--t-closeness", "equal:0.3", "--order", "income=lexical"],
     "--order income=...: no --t-closeness ordered:T uses income"),
    (["--t-closeness", "ordered:0.15", "--order", "income=000-010k,010-025k"],
     "not in order"),
])
def test_order_errors_in_words(capsys, source, tmp_path, extra, fragment):
    rc, _, err = cli(capsys, source, tmp_path, *extra)
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("gpuppdp: error: ")
    assert fragment in err
    assert "order=[" not in err and "{'" not in err


@pytest.mark.parametrize("text", ["income=", "=lexical", "income=a", "income=a,,b",
                                  "income=a,a"])
def test_order_usage_errors(capsys, text):
    with pytest.raises(SystemExit) as info:
        main(["anonymize", "in.csv", "--qi", "a=b.csv", "--k", "2", "--output", "o.csv",
              "--order", text])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--order" in err


def test_no_solution_message_in_words(capsys, source, tmp_path):
    # five incomes: no class can hold six different ones
    rc, _, err = cli(capsys, source, tmp_path, "--t-closeness", "ordered:0.2",
                     "--l-diversity", "distinct:6")
    assert rc == 2
    assert err.startswith("gpuppdp: error: no transformation satisfies k-anonymity with k = 3, "
                          "distinct l-diversity of income with l = 6 and t-closeness (ordered "
                          "distance) of income with t = 0.2 with at most 2.00% suppressed")
    assert "{" not in err and "[" not in err


def _naive_t_ordered(df: pd.DataFrame, qids, sensitive, order) -> float:
    pos = {v: i for i, v in enumerate(order)}
    m = len(order)
    q = np.bincount(df[sensitive].map(pos), minlength=m) / len(df)
    worst = 0.0
    for _, part in df.groupby(qids):
        p = np.bincount(part[sensitive].map(pos), minlength=m) / len(part)
        worst = max(worst, float(np.abs(np.cumsum(p - q)).sum() / (m - 1)))
    return worst


def test_check_measures_ordered_t_on_text(capsys, table, source, tmp_path):
    assert check(table, quasi_identifiers=QIDS, sensitive="income")["t_ordered"] is None
    out = tmp_path / "c.json"
    assert main(["check", str(source), "--qi", *QIDS, "--sensitive", "income",
                 "--json", str(out)]) == 0
    got = json.loads(out.read_text())["t_ordered"]
    assert got == pytest.approx(_naive_t_ordered(table, QIDS, "income", sorted(BRACKETS)))
    order = ["100k+", "000-010k", "050-100k", "010-025k", "025-050k"]
    assert main(["check", str(source), "--qi", *QIDS, "--sensitive", "income",
                 "--order", ",".join(order), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["t_ordered"] == pytest.approx(
        _naive_t_ordered(table, QIDS, "income", order))
    capsys.readouterr()
    assert main(["check", str(source), "--qi", *QIDS, "--sensitive", "income",
                 "--order", "numeric"]) == 2
    assert "not numbers" in capsys.readouterr().err
