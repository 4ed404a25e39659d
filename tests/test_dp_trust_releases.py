"""Issue 32, the releases: no free answers before the charge, person bounding, seeds, the
randomness's copies and forks, and the command line's --hierarchy-sep."""

import copy
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from gpuppdp.cli import main
from gpuppdp.dp import (
    OTHER,
    BudgetAccountant,
    OutOfDomainError,
    RandomSource,
    SeededNoiseWarning,
    dp_class_counts,
    dp_histogram,
)
from gpuppdp.hierarchy import Hierarchy

HUGE_EPS = 60.0  # noise 0 with probability 1 - 1e-26


def exact_source():
    with pytest.warns(SeededNoiseWarning):
        return RandomSource("cpu", seed=5, insecure=True)


@pytest.fixture
def ages(tmp_path):
    """Adult-like: ages 17..90 in the data, the hierarchy lacks 90."""
    data = tmp_path / "people.csv"
    rows = ["age;sex;id"] + [f"{a};{'mf'[a % 2]};p{a}" for a in range(17, 91)]
    data.write_text("\n".join(rows) + "\n")
    hier = tmp_path / "age.csv"
    hier.write_text("".join(f"{a};*\n" for a in range(0, 90)))  # 90 left out
    return tmp_path, data, hier


# --- no free answers before the charge ----------------------------------------------------

def _histogram(tmp, data, hier, *extra):
    return main(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={hier}",
                 "--epsilon", "0.1", "--budget-file", str(tmp / "l.json"), *extra,
                 "--output", str(tmp / "o.csv")])


def test_out_of_domain_probe_is_charged_before_the_refusal(ages, capsys):
    """Was: refused at epsilon 0, as often as asked, also after the budget was spent."""
    tmp, data, hier = ages
    assert _histogram(tmp, data, hier, "--budget", "0.25", "--new-ledger") == 2
    assert "outside its public domain" in capsys.readouterr().err
    assert BudgetAccountant.load(tmp / "l.json").spent == pytest.approx(0.1)  # charged
    assert _histogram(tmp, data, hier) == 2
    capsys.readouterr()
    # the budget is spent: a value present and a value absent get the same refusal
    assert _histogram(tmp, data, hier) == 2
    absent = capsys.readouterr().err
    clean = tmp / "clean.csv"
    pd.read_csv(data, sep=";", dtype=str).query("age != '90'").to_csv(clean, sep=";",
                                                                      index=False)
    assert _histogram(tmp, clean, hier) == 2
    present = capsys.readouterr().err
    assert absent == present and "cannot spend epsilon=0.1" in absent
    assert BudgetAccountant.load(tmp / "l.json").spent == pytest.approx(0.2)


@pytest.mark.parametrize("unknown,rows", [("other", 91), ("drop", 90)])
def test_out_of_domain_rows_counted_in_other_or_dropped(ages, capsys, unknown, rows):
    tmp, data, hier = ages
    assert _histogram(tmp, data, hier, "--budget", "1", "--new-ledger",
                      "--unknown", unknown) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(tmp / "o.csv", sep=";", dtype=str)
    assert len(table) == rows and (table["age"].iloc[-1] == OTHER) == (unknown == "other")
    assert "values outside the hierarchies: " in out
    if unknown == "drop":
        assert "dropped (how many is not released)" in out


def test_python_releases_charge_before_refusing():
    h = Hierarchy([["a", "b"], ["*", "*"]], name="x")
    df = pd.DataFrame({"x": ["a", "b", "c"]})
    acc = BudgetAccountant(1.0)
    with pytest.raises(OutOfDomainError, match="charged epsilon=0.5"):
        dp_histogram(df, "x", epsilon=0.5, hierarchies={"x": h}, accountant=acc)
    assert acc.spent == pytest.approx(0.5)
    with pytest.raises(OutOfDomainError):
        dp_class_counts(df, ["x"], epsilon=0.5, hierarchies={"x": h}, accountant=acc)
    assert acc.spent == pytest.approx(1.0)
    # budget exhausted: refused before the data is looked at (same error, clean data or not)
    for frame in (df, df.iloc[:2]):
        with pytest.raises(ValueError, match="cannot spend epsilon=0.5"):
            dp_histogram(frame, "x", epsilon=0.5, hierarchies={"x": h}, accountant=acc)


def test_missing_values_of_a_public_domain_column_are_decided_after_the_charge():
    df = pd.DataFrame({"x": ["a", None, "b"]})
    acc = BudgetAccountant(1.0)
    with pytest.raises(OutOfDomainError, match="'x'"):  # was: refused before the charge
        dp_histogram(df, "x", epsilon=0.5, public_domain=True, accountant=acc)
    assert acc.spent == pytest.approx(0.5)
    t = dp_histogram(df, "x", epsilon=HUGE_EPS, public_domain=True, unknown="drop",
                     random=exact_source())
    assert t["x"].tolist() == ["a", "b"] and t["count"].tolist() == [1, 1]


# --- person-level bounding ------------------------------------------------------------------

def test_rows_beyond_the_bound_are_dropped_and_sensitivity_scaled():
    df = pd.DataFrame({"sex": ["f"] * 5 + ["m"] * 3 + ["f", "m"],
                       "who": ["p1"] * 5 + ["p2"] * 3 + [None, None]})
    acc = BudgetAccountant(100.0)
    table = dp_histogram(df, "sex", epsilon=HUGE_EPS, domains={"sex": ["f", "m"]},
                         person="who", max_rows_per_person=2, random=exact_source(),
                         accountant=acc)
    assert table["count"].tolist() == [3, 3]  # p1: 2 of 5, p2: 2 of 3, two singletons
    dp = table.attrs["dp"]
    assert dp["queries"]["count"]["sensitivity"] == 2
    assert dp["unit"] == "person (who, at most 2 rows)"
    assert "at most 2 rows per person ('who'), chosen at random" in dp["post_processing"]
    (entry,) = acc.ledger
    assert entry.unit == dp["unit"] and entry.epsilon == HUGE_EPS  # person-level epsilon
    noisy = dp_histogram(df, "sex", epsilon=1.0, domains={"sex": ["f", "m"]}, person="who",
                         max_rows_per_person=3)
    assert noisy.attrs["dp"]["queries"]["count"]["scale"] == pytest.approx(3.0, rel=1e-3)
    with pytest.raises(ValueError, match="needs person="):
        dp_histogram(df, "sex", epsilon=1.0, domains={"sex": ["f", "m"]}, max_rows_per_person=2)
    with pytest.raises(ValueError, match="cannot be a grouping column"):
        dp_histogram(df, ["sex", "who"], epsilon=1.0, public_domain=True, person="who")


def test_the_rows_kept_are_a_uniform_random_choice():
    df = pd.DataFrame({"cell": ["a", "b", "c", "d"], "who": ["p"] * 4})
    seen = np.zeros(4)
    for _ in range(400):
        t = dp_histogram(df, "cell", epsilon=HUGE_EPS, domains={"cell": list("abcd")},
                         person="who", max_rows_per_person=1, random=RandomSource("cpu"))
        seen += t["count"].to_numpy()
    assert seen.sum() == 400 and seen.min() > 60  # each about 100 (binomial, sd 8.7)


def test_person_on_the_command_line(ages, capsys):
    tmp, data, _ = ages
    assert main(["dp-histogram", str(data), "--by", "sex", "--public-domain", "--epsilon",
                 "0.5", "--person", "id", "--max-rows-per-person", "2", "--budget-file",
                 str(tmp / "l.json"), "--budget", "1", "--new-ledger",
                 "--output", str(tmp / "o.csv")]) == 0
    out = capsys.readouterr().out
    assert "sensitivity 2" in out and "unit of privacy: person (id, at most 2 rows)" in out
    entry = json.loads((tmp / "l.json").read_text().splitlines()[1])
    assert entry["unit"] == "person (id, at most 2 rows)" and entry["epsilon"] == 0.5
    assert main(["dp-histogram", str(data), "--by", "sex", "--public-domain", "--epsilon",
                 "0.5", "--max-rows-per-person", "2", "--output", str(tmp / "o.csv")]) == 2
    assert "needs --person" in capsys.readouterr().err


# --- seeds ---------------------------------------------------------------------------------

def test_a_seed_is_refused_for_a_release_unless_insecure(ages, capsys):
    tmp, data, _ = ages
    argv = ["dp-histogram", str(data), "--by", "sex", "--public-domain", "--epsilon", "1",
            "--seed", "7", "--output", str(tmp / "o.csv")]
    assert main(argv) == 2 and "--insecure-seed" in capsys.readouterr().err
    assert not (tmp / "o.csv").exists()
    assert main(argv + ["--insecure-seed", "--budget-file", str(tmp / "l.json"), "--budget",
                        "2", "--new-ledger"]) == 0
    assert "seed: 7 (--insecure-seed" in capsys.readouterr().out
    assert json.loads((tmp / "l.json").read_text().splitlines()[1])["seed"] == 7
    df = pd.DataFrame({"x": ["a", "b"]})
    with pytest.warns(SeededNoiseWarning):
        seeded = RandomSource("cpu", seed=7)
    with pytest.raises(ValueError, match="insecure=True"):
        dp_histogram(df, "x", epsilon=1.0, public_domain=True, random=seeded)
    table = dp_histogram(df, "x", epsilon=1.0, public_domain=True, random=exact_source())
    assert table.attrs["dp"]["seed"] == 5 and table.attrs["dp"]["seeded"]


# --- the randomness ------------------------------------------------------------------------

def test_a_source_cannot_be_copied_or_pickled():
    src = RandomSource("cpu")
    for clone in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="same keystream"):
            clone(src)


_FORKS = textwrap.dedent("""
    import os, threading
    from gpuppdp.dp import RandomSource
    src = RandomSource("cpu")
    stop = threading.Event()
    def draw():
        while not stop.is_set():
            src.random_words(64)
    threads = [threading.Thread(target=draw) for _ in range(2)]
    for t in threads:
        t.start()
    for _ in range(150):
        pid = os.fork()
        if pid == 0:
            src.random_words(8)  # deadlocked when the parent's lock was copied held
            os._exit(0)
        os.waitpid(pid, 0)
    stop.set()
    for t in threads:
        t.join()
    print("ok")
""")


def test_fork_while_another_thread_draws_does_not_deadlock():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _FORKS], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_clamping_is_said():
    df = pd.DataFrame({"x": ["a"]})
    t = dp_histogram(df, "x", epsilon=1.0, public_domain=True)
    assert "biases" in t.attrs["dp"]["clamping"] and "clamp=False" in t.attrs["dp"]["clamping"]
    assert dp_histogram(df, "x", epsilon=1.0, public_domain=True,
                        clamp=False).attrs["dp"]["clamping"] is None


# --- --hierarchy-sep ---------------------------------------------------------------------

def test_hierarchy_sep_reads_interval_labels_with_commas(tmp_path, capsys):
    """The census generator writes ``25;[0, 40);*``: sniffing picked the comma."""
    data = tmp_path / "people.csv"
    data.write_text("age;sex\n25;f\n41;m\n39;m\n")
    hier = tmp_path / "age.csv"
    hier.write_text("".join(f"{a};{'[0, 40)' if a < 40 else '[40, 80)'};*\n"
                            for a in range(0, 80)))
    out = tmp_path / "o.csv"
    assert main(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={hier}",
                 "--level", "age=1", "--epsilon", "1", "--output", str(out)]) == 0
    assert pd.read_csv(out, sep=";")["age"].tolist() == ["[0, 40)", "[40, 80)"]
    bar = tmp_path / "age_bar.csv"
    bar.write_text(hier.read_text().replace(";", "|"))
    assert main(["dp-histogram", str(data), "--by", "age", "--hierarchy", f"age={bar}",
                 "--hierarchy-sep", "|", "--level", "age=1", "--epsilon", "1",
                 "--output", str(out)]) == 0
    capsys.readouterr()
