"""The budget accountant across privacy notions: zCDP spends, conversions on composition,
the ledger file's new fields (issue 37, item 2)."""

import json
import math

import numpy as np
import pytest

from gpuppdp.dp import ledger as ledger_file
from gpuppdp.dp.accountant import BudgetAccountant, BudgetError, LedgerError
from gpuppdp.dp.accounting import ALPHAS, advanced_composition, zcdp_to_approx


def tight(rho, delta):
    """CKS 2020 Proposition 12 minimized over a dense grid of orders, written out here."""
    alpha = 1.0 + np.geomspace(1e-3, 1e6, 200_001)
    eps = rho * alpha + (math.log(1 / delta) - np.log(alpha)) / (alpha - 1) \
        + np.log1p(-1 / alpha)
    return float(eps.min())


def rr(epsilon, alpha):
    """Randomized response's Rényi divergence at ε (Mironov 2017, Proposition 5), as written
    there: the curve the ledger gives a pure entry in its RDP accounting."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) \
        / (alpha - 1)


def on_grid(curve, delta):
    """CKS 2020 Proposition 12 on the ledger's orders, for a curve given as a function."""
    return min(curve(a) + (math.log(1 / delta) - math.log(a)) / (a - 1) + math.log1p(-1 / a)
               for a in ALPHAS)


def test_k_gaussians_charge_the_tight_conversion_of_their_summed_rho():
    k, rho, delta = 10, 0.02, 1e-6
    acc = BudgetAccountant(5.0, delta=delta)
    for i in range(k):
        acc.spend(rho=rho, label=f"gaussian {i}")
    eps, spent_delta, how = acc.composition
    assert how == "zcdp" and spent_delta == delta
    assert eps == pytest.approx(tight(k * rho, delta), rel=1e-6)
    assert eps == zcdp_to_approx(k * rho, delta)
    # basic composition of the k releases, each converted at delta / k: much more
    assert eps < 0.5 * k * tight(rho, delta / k)
    assert eps < k * rho + 2 * math.sqrt(k * rho * math.log(1 / delta))  # BS16 Prop. 1.3
    assert [s.notion for s in acc.ledger] == ["zcdp"] * k
    assert all(s.epsilon is None and s.rho == rho for s in acc.ledger)


def test_approximate_zcdp_and_mixed_notions_compose_by_the_tightest_accounting():
    acc = BudgetAccountant(10.0, delta=1e-5)
    acc.spend(rho=0.1, delta=1e-8)  # approximate zCDP (a discrete Gaussian's support)
    acc.spend(rho=0.05)
    acc.spend(0.2)  # pure
    acc.spend(0.3, delta=1e-7)  # approximate DP
    slack = 1e-5 - 1e-8 - 1e-7
    # the three accountings that apply, by hand
    pure_as_rho = tight(0.15 + 0.02, slack) + 0.3
    pure_kept = tight(0.15, slack) + 0.2 + 0.3
    # the RDP accountings: the pure entry as randomized response's curve, or kept pure
    as_rdp = on_grid(lambda a: 0.15 * a + rr(0.2, a), slack) + 0.3
    as_rdp_kept = on_grid(lambda a: 0.15 * a, slack) + 0.2 + 0.3
    eps, delta, how = acc.composition
    assert delta == 1e-5
    by_name = {"zcdp": pure_as_rho, "zcdp, pure kept pure": pure_kept, "rdp": as_rdp,
               "rdp, pure kept pure": as_rdp_kept}
    assert eps == pytest.approx(min(by_name.values()), rel=1e-6)
    assert eps == pytest.approx(by_name[how], rel=1e-6)
    assert as_rdp < pure_as_rho  # the tight pure -> RDP curve beats ε²/2 here
    assert [s.notion for s in acc.ledger] == ["zcdp", "zcdp", "pure", "approx"]


def test_many_small_pure_spends_beat_basic_composition_with_a_delta_budget():
    acc = BudgetAccountant(3.0, delta=1e-6)
    for _ in range(200):
        acc.spend(0.01)
    basic = 200 * 0.01
    advanced = advanced_composition([0.01] * 200, 1e-6)
    as_zcdp = tight(200 * 0.01**2 / 2, 1e-6)
    as_rdp = on_grid(lambda a: 200 * rr(0.01, a), 1e-6)
    assert acc.spent == pytest.approx(min(basic, advanced, as_zcdp, as_rdp), rel=1e-6)
    assert acc.spent < 0.5 * basic
    # without a delta budget only the basic sum applies
    plain = BudgetAccountant(3.0)
    for _ in range(200):
        plain.spend(0.01)
    assert plain.spent == pytest.approx(basic) and plain.composition[2] == "basic"


def test_zcdp_spends_are_refused_beyond_the_budget_and_without_a_delta():
    acc = BudgetAccountant(1.0, delta=1e-6)
    acc.spend(rho=0.01)
    before = acc.spent
    with pytest.raises(BudgetError, match=r"cannot spend rho=0\.1.*would cost epsilon="):
        acc.spend(rho=0.1, label="too much")
    assert acc.spent == before and len(acc.ledger) == 1
    with pytest.raises(BudgetError, match="needs a budget with delta > 0"):
        BudgetAccountant(1.0).spend(rho=0.01)
    with pytest.raises(ValueError, match="exactly one of epsilon and rho"):
        acc.spend(0.1, rho=0.01)
    with pytest.raises(ValueError, match="rho must be a finite number > 0"):
        acc.check(rho=-1.0)
    with pytest.raises(BudgetError, match="delta budget"):  # no delta left to convert
        acc.spend(rho=0.001, delta=1e-6)


def test_zcdp_across_neighbouring_relations():
    replace = BudgetAccountant(5.0, delta=1e-6, neighbouring="replace")
    entry = replace.spend(rho=0.1, neighbouring="add-remove")
    assert entry.charged_rho == pytest.approx(0.4)  # group privacy: k**2 rho, k = 2
    assert replace.spent == pytest.approx(tight(0.4, 1e-6), rel=1e-6)
    with pytest.raises(BudgetError, match="cannot be charged to a replace budget"):
        replace.spend(rho=0.1, delta=1e-20, neighbouring="add-remove")
    add_remove = BudgetAccountant(5.0, delta=1e-6)
    assert add_remove.spend(rho=0.1, neighbouring="replace").charged_rho == 0.1


def test_a_mixed_ledger_round_trips_through_the_file(tmp_path):
    path = tmp_path / "ledger.jsonl"
    with BudgetAccountant.open_ledger(path, epsilon=4.0, delta=1e-6, create=True) as acc:
        acc.spend(0.25, label="pure")
        acc.spend(0.5, delta=1e-9, label="approx")
        acc.spend(rho=0.05, delta=1e-30, label="gaussian", neighbouring="replace")
        with acc.parallel("groups") as group:
            group.spend(0.1)
            group.spend(0.2)
        spent, entries = acc.composition, acc.ledger
    loaded = BudgetAccountant.load(path)
    assert loaded.composition == spent
    assert [(s.notion, s.epsilon, s.rho, s.delta, s.charged, s.charged_rho, s.neighbouring)
            for s in loaded.ledger] == \
        [(s.notion, s.epsilon, s.rho, s.delta, s.charged, s.charged_rho, s.neighbouring)
         for s in entries]
    assert [s.notion for s in loaded.ledger] == ["pure", "approx", "zcdp", "pure"]
    # the hash chain covers the new fields: relabelling the zCDP entry is detected
    lines = path.read_text().splitlines()
    assert json.loads(lines[3])["notion"] == "zcdp"
    lines[3] = lines[3].replace('"notion":"zcdp"', '"notion":"approx"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LedgerError, match=r"entry 3 \(line 4\) fails its hash check"):
        BudgetAccountant.load(path)


def test_a_ledger_written_before_notions_still_reads(tmp_path):
    """Entries as the previous version wrote them (no notion, rho or charged_rho)."""
    path = tmp_path / "old.jsonl"
    header = {"epsilon": 1.0, "delta": 1e-6, "neighbouring": "add-remove"}
    old = [{"epsilon": 0.25, "delta": 0.0, "label": "a", "composition": "sequential",
            "parts": [0.25], "part_deltas": [0.0], "neighbouring": "add-remove",
            "charged": 0.25, "charged_delta": 0.0, "unit": "row", "seed": None,
            "group": None},
           {"epsilon": 0.5, "delta": 1e-8, "label": "b", "composition": "sequential",
            "parts": [0.5], "part_deltas": [1e-8], "neighbouring": "replace",
            "charged": 0.5, "charged_delta": 1e-8, "unit": "row", "seed": None,
            "group": None}]
    sealed = ledger_file.header_line(header)
    lines = [sealed]
    for item in old:
        lines.append(ledger_file._seal(item, lines[-1]["hash"]))
    path.write_bytes(b"".join(ledger_file.canonical(x) + b"\n" for x in lines))
    acc = BudgetAccountant.load(path)
    assert [s.notion for s in acc.ledger] == ["pure", "approx"]
    assert acc.composition == (0.75, 1e-8, "basic")
    with BudgetAccountant.open_ledger(path) as ledger:  # and takes a zCDP spend
        ledger.spend(rho=0.001)
    assert BudgetAccountant.load(path).ledger[-1].notion == "zcdp"
