"""Issue 32, the ledger: one transaction per spend, no lost update, tamper evidence, relations.

Each test replays a bypass the audit reproduced on the former ledger (one JSON document
rewritten by ``save``, a ``PATH.lock`` file, the spends written when the block ended).
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from gpuppdp.dp import BudgetAccountant, BudgetError
from gpuppdp.dp.accountant import LedgerError, charge


def _new(path, epsilon=1.0, **kw):
    with BudgetAccountant.open_ledger(path, epsilon=epsilon, create=True, **kw):
        pass


# --- lost updates ----------------------------------------------------------------------

def test_a_stale_save_is_refused_not_lost(tmp_path):
    """load/spend/save by two runs: was 1.2 spent and 0.6 recorded."""
    path = tmp_path / "ledger.json"
    _new(path, epsilon=2.0)
    a, b = BudgetAccountant.load(path), BudgetAccountant.load(path)
    a.spend(0.6)
    b.spend(0.6)
    a.save(path)
    with pytest.raises(BudgetError, match="changed since this accountant was loaded"):
        b.save(path)
    assert BudgetAccountant.load(path).spent == pytest.approx(0.6)
    with pytest.raises(BudgetError, match="not loaded from"):
        BudgetAccountant(2.0).save(path)  # a foreign accountant does not overwrite it


def test_a_symlinked_path_is_the_same_ledger(tmp_path):
    """Was 1.4 spent of a 1.0 budget through a link and the real path."""
    real = tmp_path / "ledger.json"
    link = tmp_path / "link.json"
    _new(real)
    link.symlink_to(real)
    with BudgetAccountant.open_ledger(link) as acc:
        acc.spend(0.7)
    with pytest.raises(BudgetError, match="only 0.3 remaining"):
        with BudgetAccountant.open_ledger(real) as acc:
            acc.spend(0.7)
    assert link.is_symlink() and BudgetAccountant.load(link).spent == pytest.approx(0.7)


def test_an_exception_after_a_release_keeps_its_spend(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path)
    with pytest.raises(KeyError):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.4, label="released")
            {}["the output failed"]
    (entry,) = BudgetAccountant.load(path).ledger
    assert entry.label == "released" and entry.epsilon == 0.4


def test_a_missing_ledger_is_never_started_implicitly(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path)
    with BudgetAccountant.open_ledger(path) as acc:
        acc.spend(1.0)
    path.unlink()  # was: the next run with a budget started afresh, silently
    with pytest.raises(ValueError, match="does not exist; to start a new ledger pass"):
        with BudgetAccountant.open_ledger(path, epsilon=1.0):
            pass
    assert not path.exists()


def test_no_lock_file_is_left_behind(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path)
    for _ in range(3):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.1)
    BudgetAccountant.load(path)
    assert sorted(os.listdir(tmp_path)) == ["ledger.json"]


_WORKER = textwrap.dedent("""
    import sys, time
    from gpuppdp.dp import BudgetAccountant, BudgetError
    path, start = sys.argv[1], float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))
    try:
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.25, label="worker")
            time.sleep(0.05)  # hold the transaction a little
    except BudgetError:
        sys.exit(3)
""")


def test_eight_concurrent_processes_spend_exactly_the_budget(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(start)], env=env,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    codes = [p.wait(timeout=120) for p in procs]
    errors = [p.stderr.read() for p in procs]
    assert sorted(codes) == [0] * 4 + [3] * 4, errors
    acc = BudgetAccountant.load(path)
    assert acc.spent == pytest.approx(1.0) and len(acc.ledger) == 4


# --- tamper evidence ---------------------------------------------------------------------

def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_a_hand_edited_ledger_is_refused_naming_the_first_bad_entry(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path)
    with BudgetAccountant.open_ledger(path) as acc:
        for eps in (0.1, 0.2, 0.3):
            acc.spend(eps)
    lines = _lines(path)
    assert all(x["prev"] == y["hash"] for x, y in zip(lines[1:], lines))  # chained
    edited = [dict(x) for x in lines]
    edited[2]["epsilon"] = edited[2]["charged"] = 0.0001  # entry 2: 0.2 -> 0.0001
    _write(path, edited)
    with pytest.raises(LedgerError, match=r"entry 2 \(line 3\) fails its hash check"):
        BudgetAccountant.load(path)
    with pytest.raises(LedgerError, match="entry 2"):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.1)
    _write(path, lines[:2] + lines[3:])  # an entry removed
    with pytest.raises(LedgerError, match=r"entry 2 \(line 3\) fails"):
        BudgetAccountant.load(path)
    budget = [dict(lines[0], epsilon=10.0)] + lines[1:]  # the budget raised
    _write(path, budget)
    with pytest.raises(LedgerError, match=r"the header \(line 1\) fails"):
        BudgetAccountant.load(path)
    _write(path, lines)
    path.write_text(path.read_text()[:-20])  # a torn last line
    with pytest.raises(LedgerError, match="incomplete"):
        BudgetAccountant.load(path)
    _write(path, lines)
    assert BudgetAccountant.load(path).spent == pytest.approx(0.6)


# --- neighbouring relations --------------------------------------------------------------

def test_mixed_relations_are_converted_not_added():
    """Was 1 + 1 recorded as 2; an add/remove release costs 2x in a replace-one budget."""
    acc = BudgetAccountant(3.0, neighbouring="replace")
    acc.spend(1.0, neighbouring="add-remove", label="a")
    acc.spend(1.0, neighbouring="replace", label="b")
    assert acc.spent == pytest.approx(3.0) and acc.spent != pytest.approx(2.0)
    assert [(s.neighbouring, s.epsilon, s.charged) for s in acc.ledger] == [
        ("add-remove", 1.0, 2.0), ("replace", 1.0, 1.0)]
    with pytest.raises(BudgetError, match="charged 0.2 to this replace budget"):
        acc.spend(0.1, neighbouring="add-remove")
    kept_in_add_remove = BudgetAccountant(3.0)
    kept_in_add_remove.spend(1.0, neighbouring="replace")
    kept_in_add_remove.spend(1.0)
    assert kept_in_add_remove.spent == pytest.approx(2.0)  # face value (see the docstring)
    with BudgetAccountant(4.0, neighbouring="replace").parallel("bins") as group:
        group.spend(0.5)
        group.spend(0.5)
        assert group._accountant.spent == pytest.approx(1.0)  # add/remove group: 0.5 -> 1.0
    assert charge(1.0, 1e-9, "add-remove", "replace")[1] == pytest.approx((1 + 2.718281828) * 1e-9)


def test_the_relation_is_on_every_ledger_line(tmp_path):
    path = tmp_path / "ledger.json"
    _new(path, epsilon=3.0, neighbouring="replace")
    with BudgetAccountant.open_ledger(path) as acc:
        acc.spend(1.0, neighbouring="add-remove")
        acc.spend(1.0, neighbouring="replace")
    header, *entries = _lines(path)
    assert header["neighbouring"] == "replace"
    assert [(e["neighbouring"], e["charged"]) for e in entries] == [("add-remove", 2.0),
                                                                    ("replace", 1.0)]
    with pytest.raises(BudgetError):
        with BudgetAccountant.open_ledger(path) as acc:
            acc.spend(0.01)
    assert BudgetAccountant.load(path).spent == pytest.approx(3.0)


def test_accountants_are_not_copied():
    import copy
    import pickle

    acc = BudgetAccountant(1.0)
    for clone in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be"):
            clone(acc)
