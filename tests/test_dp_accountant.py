"""Budget accounting: sequential and parallel composition, clear errors."""

import math

import pytest

from gpuppdp.dp import BudgetAccountant, BudgetError


def test_sequential_composition_adds_up():
    acc = BudgetAccountant(1.0)
    acc.spend(0.3, label="a")
    acc.spend(0.2, label="b")
    assert acc.spent == pytest.approx(0.5)
    assert acc.remaining == pytest.approx(0.5)
    assert [s.label for s in acc.ledger] == ["a", "b"]
    assert all(s.composition == "sequential" for s in acc.ledger)


def test_ten_tenths_fit_exactly():
    acc = BudgetAccountant(1.0)
    for _ in range(10):
        acc.spend(0.1)
    assert acc.remaining == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetError):
        acc.spend(1e-6)


def test_over_budget_error_says_what_is_left():
    acc = BudgetAccountant(1.0)
    acc.spend(0.75)
    with pytest.raises(BudgetError, match=r"only 0\.25 remaining") as info:
        acc.spend(0.5, label="age histogram")
    assert "age histogram" in str(info.value) and "epsilon=0.5" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert acc.spent == pytest.approx(0.75)  # nothing was charged


def test_parallel_composition_costs_the_largest_part():
    acc = BudgetAccountant(1.0)
    with acc.parallel("per-class counts") as group:
        for eps in (0.2, 0.5, 0.4):
            group.spend(eps)
    assert acc.spent == pytest.approx(0.5)
    (entry,) = acc.ledger
    assert entry.composition == "parallel" and entry.parts == (0.2, 0.5, 0.4)


def test_parallel_part_over_budget_fails_early_and_keeps_what_was_spent():
    acc = BudgetAccountant(1.0)
    acc.spend(0.6)
    with pytest.raises(BudgetError, match="remaining"):
        with acc.parallel("bins") as group:
            group.spend(0.3)
            group.spend(0.5)  # the group would cost 0.5 > 0.4 left
    assert acc.spent == pytest.approx(0.9)  # the 0.3 part was released: charged


@pytest.mark.parametrize("bad", [0, -0.1, math.nan, math.inf])
def test_invalid_spends_and_budgets(bad):
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(bad)
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        acc.spend(bad)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        with acc.parallel() as group:
            group.spend(bad)
    assert acc.spent == 0
