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


# --- atomic spends: open groups are on the ledger (no overspend) ---------------------------

def test_a_spend_inside_an_open_group_sees_the_group():
    acc = BudgetAccountant(1.0)
    with acc.parallel("bins") as group:
        group.spend(1.0)
        assert acc.spent == 1.0 and acc.remaining == 0.0  # reserved while open
        with pytest.raises(BudgetError, match="only 0 remaining"):
            acc.spend(1.0)  # was accepted: 2.0 spent on a 1.0 budget
        assert acc.ledger[0].open
    assert acc.spent == 1.0 and not acc.ledger[0].open


def test_two_open_groups_cannot_overspend_together():
    acc = BudgetAccountant(1.0)
    with acc.parallel("a") as a, acc.parallel("b") as b:
        a.spend(0.6)
        with pytest.raises(BudgetError, match="the group would cost 0.6"):
            b.spend(0.6)
        b.spend(0.4)
        with pytest.raises(BudgetError):
            a.spend(0.7)  # a would grow to 0.7: 1.1 with b
        a.spend(0.5)  # a part below the group's largest costs nothing more
    assert acc.spent == pytest.approx(1.0)
    assert [s.parts for s in acc.ledger] == [(0.6, 0.5), (0.4,)]


def test_a_closed_group_refuses_spends():
    acc = BudgetAccountant(1.0)
    with acc.parallel("done") as group:
        group.spend(0.1)
    with pytest.raises(BudgetError, match="'done' is closed"):
        group.spend(0.1)
    assert acc.spent == pytest.approx(0.1) and len(acc.ledger) == 1


def test_parallel_composition_depends_on_the_neighbouring_relation():
    """Replace-one: a record moves from one part to another, both change: ε_i + ε_j."""
    acc = BudgetAccountant(2.0)
    with acc.parallel("add-remove") as group:
        for eps in (0.2, 0.5, 0.4):
            group.spend(eps, delta=1e-9)
    with acc.parallel("replace", neighbouring="replace") as group:
        for eps in (0.2, 0.5, 0.4):
            group.spend(eps, delta=1e-9)
    first, second = acc.ledger
    assert first.epsilon == 0.5 and first.delta == 1e-9 and first.neighbouring == "add-remove"
    assert second.epsilon == pytest.approx(0.9) and second.delta == pytest.approx(2e-9)
    assert second.neighbouring == "replace"
    assert acc.spent == pytest.approx(1.4)
    with pytest.raises(ValueError, match="neighbouring must be one of"):
        with acc.parallel("x", neighbouring="swap"):
            pass


def test_concurrent_spends_never_overspend():
    import threading

    acc = BudgetAccountant(1.0)
    ok, refused = [], []
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        for j in range(25):
            try:
                if j % 2:
                    acc.spend(0.01, label=f"{i}-{j}")
                else:
                    with acc.parallel(f"{i}-{j}") as group:
                        group.spend(0.005)
                        group.spend(0.01)
                ok.append(1)
            except BudgetError:
                refused.append(1)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acc.spent <= 1.0 * (1 + 1e-9)
    assert len(ok) == 100 and len(refused) == 100  # each success costs exactly 0.01


def test_delta_is_recorded_and_optionally_limited():
    acc = BudgetAccountant(1.0)
    acc.spend(0.1, delta=1e-12)
    acc.spend(0.1)
    assert acc.spent_delta == 1e-12 and acc.remaining_delta is None
    capped = BudgetAccountant(1.0, delta=1e-9)
    capped.spend(0.1, delta=6e-10)
    with pytest.raises(BudgetError, match="delta budget"):
        capped.spend(0.1, delta=6e-10)
    assert capped.remaining_delta == pytest.approx(4e-10)
    for bad in (-1e-9, 1.5, math.nan):
        with pytest.raises(ValueError, match="delta must be a finite number in"):
            acc.spend(0.1, delta=bad)


# --- the ledger file --------------------------------------------------------------------

def test_ledger_round_trip_and_spends_recorded_when_charged(tmp_path):
    path = tmp_path / "ledger.json"
    with BudgetAccountant.open_ledger(path, epsilon=1.0, create=True) as acc:
        acc.spend(0.25, label="first", delta=1e-200)
        with acc.parallel("classes", neighbouring="replace") as group:
            group.spend(0.1)
            group.spend(0.2)
    loaded = BudgetAccountant.load(path)
    assert loaded.total == 1.0 and loaded.spent == pytest.approx(0.55)
    assert [s.label for s in loaded.ledger] == ["first", "classes"]
    assert loaded.ledger[0].delta == 1e-200 and loaded.ledger[1].parts == (0.1, 0.2)
    # an exception after a release does not lose its spend (issue 32: it did)
    with pytest.raises(RuntimeError, match="release failed"):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.3)
            raise RuntimeError("release failed")
    assert BudgetAccountant.load(path).spent == pytest.approx(0.85)
    before = path.read_bytes()
    with pytest.raises(BudgetError):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.5)
    assert path.read_bytes() == before  # a refused spend writes nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.json"]  # no lock file
    loaded = BudgetAccountant.load(path)
    loaded.spend(0.05)
    loaded.save(path)
    assert BudgetAccountant.load(path).spent == pytest.approx(0.9)


def test_ledger_refuses_bad_files_and_budget_changes(tmp_path):
    path = tmp_path / "ledger.json"
    with pytest.raises(ValueError, match="give the total budget"):
        with BudgetAccountant.open_ledger(path, create=True):
            pass
    with pytest.raises(ValueError, match="does not exist; to start a new ledger pass create=True"):
        with BudgetAccountant.open_ledger(path, epsilon=1.0):
            pass
    assert not path.exists()
    BudgetAccountant(1.0).save(path)
    with pytest.raises(ValueError, match="cannot change"):
        with BudgetAccountant.open_ledger(path, epsilon=2.0):
            pass
    with pytest.raises(ValueError, match="relation cannot change"):
        with BudgetAccountant.open_ledger(path, neighbouring="replace"):
            pass
    for text, match in [("[]\n", "not a gpuppdp budget ledger"), ("{", "incomplete"),
                        ("{\n", "not valid JSON"),
                        ('{"version": 1, "epsilon": 1, "ledger": []}', "version-1 ledger")]:
        path.write_text(text)
        with pytest.raises(ValueError, match=match):
            BudgetAccountant.load(path)
    acc = BudgetAccountant(1.0)
    with acc.parallel() as group:
        group.spend(0.1)
        with pytest.raises(BudgetError, match="parallel group is open"):
            acc.save(tmp_path / "other.json")


def test_ledger_file_lock_serializes_concurrent_runs(tmp_path):
    """Two runs at once, each wanting 0.6 of a 1.0 budget: exactly one gets it (the file lock
    makes the second read the first one's spend)."""
    import threading

    path = tmp_path / "ledger.json"
    BudgetAccountant(1.0).save(path)
    inside = threading.Event()
    results = []

    def run(first):
        try:
            with BudgetAccountant.open_ledger(path) as acc:
                if first:
                    inside.set()
                acc.spend(0.6)
                if first:
                    # hold the lock while the other run is trying to get it
                    threading.Event().wait(0.2)
            results.append("ok")
        except BudgetError:
            results.append("refused")

    a = threading.Thread(target=run, args=(True,))
    a.start()
    inside.wait()
    b = threading.Thread(target=run, args=(False,))
    b.start()
    a.join()
    b.join()
    assert sorted(results) == ["ok", "refused"]
    assert BudgetAccountant.load(path).spent == pytest.approx(0.6)
