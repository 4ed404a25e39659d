"""Declared data types order the values of ordered t-closeness as ARX orders them
(``DataManager.getOrder``: the dictionary sorted with the attribute's ``DataType.compare``).

ARX 3.9.2's optimum, loss, suppressed records and checked nodes on Adult with ``age - 16``
(1..74: one and two digits, so the string order differs from the numeric one) as the
sensitive attribute, declared STRING (ARX's default), INTEGER, DECIMAL and as an ordered
string (``tests/data/arx_types.json``, the runner call in each case); the declared order
against an independent sort; and an ``order`` that contradicts the declared type refused with
both named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.cli.main import main
from gpuppdp.core.datatypes import parse_type
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import KAnonymity, TCloseness
from gpuppdp.testing import ENGINE_BACKEND

with open(Path(__file__).parent / "data" / "arx_types.json", encoding="utf-8") as _fh:
    REFERENCE = json.load(_fh)["ordered_t_closeness"]
CASES = REFERENCE["cases"]


def _arg(case, name):
    """A ``name=value`` of the case's runner call."""
    found = [a.split("=", 1)[1] for a in case["runner_args"].split() if a.startswith(name + "=")]
    return found[0] if found else None


def _type_of(case) -> str:
    """gpuppdp's type of the runner's ``types=age:...`` (none: ARX's default, string)."""
    text = _arg(case, "types")
    if text is None:
        return "string"
    kind = text.split(":", 1)[1]
    return "ordered:" + kind.split(":", 1)[1].replace("/", ",") if kind.startswith("ordered") \
        else kind


@pytest.fixture(scope="module")
def adult16():
    data, hierarchies = datasets.adult()
    data = data.assign(age=(data["age"].astype(int) - 16).astype(str))
    return data, hierarchies


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_arx_orders_by_the_declared_type(adult16, case):
    data, hierarchies = adult16
    sensitive = _arg(case, "sensitive")
    result = Anonymizer(
        quasi_identifiers={c: hierarchies[c] for c in _arg(case, "qids").split(",")},
        sensitive=[sensitive], others="insensitive",
        models=[KAnonymity(int(_arg(case, "k"))),
                TCloseness(sensitive, float(_arg(case, "t")), "ordered")],
        suppression_limit=float(_arg(case, "supp")), metric=_arg(case, "metric"),
        types={sensitive: _type_of(case)}, search="flash", backend=ENGINE_BACKEND).fit(data)
    assert dict(result.transformation) == case["transformation"]
    assert result.information_loss == case["information_loss"]
    assert result.suppressed_records == case["suppressed_records"]
    assert result.nodes_evaluated == case["transformations_checked"]


def test_the_reference_has_different_optima():
    """STRING and INTEGER disagree on these values, so the cases test the type's order."""
    by_id = {c["id"]: c for c in CASES}
    assert by_id["age16-string"]["transformation"] != by_id["age16-integer"]["transformation"]
    assert by_id["age16-ordered"]["information_loss"] != by_id["age16-integer"]["information_loss"]


# -- the order of each type against a plain sort ----------------------------------------------

@pytest.mark.parametrize("kind, values, key", [
    ("string", ["9", "10", "a", "B", "\U0001F600", "\uFF5E", "NULL"],
     lambda v: _utf16_units(v)),
    ("integer", ["10", "NULL", "9", "-3", "null", "100"],
     lambda v: (v.upper() == "NULL", 0 if v.upper() == "NULL" else int(v))),
    ("decimal", ["2.5", "10", "-0.5", "NULL", "2.50"],
     lambda v: (v == "NULL", 0.0 if v == "NULL" else float(v))),
    ("date:%d.%m.%Y", ["02.01.2020", "31.12.2019", "NULL", "01.02.2020"],
     lambda v: (v == "NULL", "" if v == "NULL" else v[6:] + v[3:5] + v[:2])),
    ("ordered:low,mid,high", ["high", "NULL", "low", "mid"],
     lambda v: (v == "NULL", ["low", "mid", "high"].index(v) if v != "NULL" else 0)),
])
def test_sort_is_arx_order(kind, values, key):
    """Strings by UTF-16 code units (Java's ``compareTo``), the other types by value with
    ``NULL`` (any case) last; ties keep their order (ARX's stable merge sort)."""
    assert parse_type(kind).sort(values, "c") == sorted(values, key=key)


def _utf16_units(text: str) -> list[int]:
    """Java's chars: a code point past U+FFFF as its two surrogates."""
    out = []
    for ch in text:
        c = ord(ch)
        out += [c] if c <= 0xFFFF else [0xD800 + ((c - 0x10000) >> 10),
                                        0xDC00 + ((c - 0x10000) & 0x3FF)]
    return out


# -- an order that contradicts the declared type ------------------------------------------------

def _small():
    values = ["1", "2", "9", "10", "11", "20"] * 4
    table = pd.DataFrame({"g": list("ab") * 12, "s": values})
    return table, {"g": Hierarchy.flat(["a", "b"], name="g")}


def test_an_order_against_the_type_is_refused_with_both_named():
    table, hierarchies = _small()
    numeric = ["1", "2", "9", "10", "11", "20"]
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                            models=[TCloseness("s", 0.5, "ordered", order=numeric)],
                            types={"s": "string"}, backend="cpu")
    with pytest.raises(InputError, match=r"on 's': the order given puts '2' where its declared "
                                         r"type 'string' puts '10'.*order=\[\.\.\.\] or "
                                         r"types=\{\.\.\.\}"):
        anonymizer.fit(table)
    # the same order declared as an integer agrees: the same result as the type alone
    agreed = Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                        models=[TCloseness("s", 0.5, "ordered", order=numeric)],
                        types={"s": "integer"}, backend="cpu").fit(table)
    typed = Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                       models=[TCloseness("s", 0.5, "ordered")], types={"s": "integer"},
                       backend="cpu").fit(table)
    assert agreed.summary()["information_loss"] == typed.summary()["information_loss"]


def test_command_line_order_and_type(capsys, tmp_path):
    table, hierarchies = _small()
    path = tmp_path / "t.csv"
    table.to_csv(path, sep=";", index=False)
    hierarchies["g"].to_csv(tmp_path / "g.csv")
    base = ["anonymize", str(path), "--qi", f"g={tmp_path / 'g.csv'}", "--sensitive", "s",
            "--t-closeness", "ordered:0.5", "--quiet", "--output", str(tmp_path / "o.csv")]
    assert main(base + ["--type", "s=string", "--order", "s=numeric"]) == 2
    err = capsys.readouterr().err
    assert "--order s=... or --type s=..., not both" in err and "'string'" in err
    assert main(base + ["--type", "s=integer", "--order", "s=numeric"]) == 0
    assert main(base + ["--type", "s=string", "--order", "s=lexical"]) == 0
