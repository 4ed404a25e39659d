"""k-anonymity over several QID sets (KAnonymityOnSubsets) and LKC-privacy (Mohammed, Fung,
Hung & Lee 2009) as plug-ins.

* the literature's worked example (Job/Sex/Age, Surgery): L=2, K=2, C=50 % holds where
  2-anonymity does not, and the optimum under LKC is less general than under 2-anonymity;
* at every lattice node of small random tables, the rows the engine suppresses are those an
  independent pandas checker (groupby over every subset, iterated until no group violates)
  rejects;
* flash and exhaustive search agree with and without suppression (sound flags);
* the command line's ``--qid-set`` and ``--lkc`` build the models.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.backend import cpu_backend
from gpuppdp.cli.main import main
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import KAnonymity, KAnonymityOnSubsets, LKCPrivacy
from tests.test_models_ldiv_tclose import generalize, hierarchies_of, random_table, same_optimum

# ---------------------------------------------------------------------------------------
# worked example: Mohammed et al. (KDD 2009), raw patient data (Job, Sex, Age; Transfuse is
# the class attribute, Surgery the sensitive one)
# ---------------------------------------------------------------------------------------
PATIENTS = [
    ("Janitor", "M", "34", "Y", "Transgender"), ("Doctor", "M", "58", "N", "Plastic"),
    ("Mover", "M", "34", "Y", "Transgender"), ("Lawyer", "M", "24", "N", "Vascular"),
    ("Mover", "M", "58", "N", "Urology"), ("Janitor", "M", "44", "Y", "Plastic"),
    ("Doctor", "M", "24", "N", "Urology"), ("Lawyer", "F", "58", "N", "Plastic"),
    ("Doctor", "F", "44", "N", "Vascular"), ("Carpenter", "F", "63", "Y", "Vascular"),
    ("Technician", "F", "63", "Y", "Plastic"),
]
JOB = [["Janitor", "Non-Technical", "Blue-collar", "ANY"],
       ["Mover", "Non-Technical", "Blue-collar", "ANY"],
       ["Carpenter", "Technical", "Blue-collar", "ANY"],
       ["Technician", "Technical", "Blue-collar", "ANY"],
       ["Doctor", "Professional", "White-collar", "ANY"],
       ["Lawyer", "Professional", "White-collar", "ANY"]]
SEX = [["M", "ANY"], ["F", "ANY"]]
AGE = [["24", "[1-30)", "[1-60)", "[1-99)"], ["34", "[30-60)", "[1-60)", "[1-99)"],
       ["44", "[30-60)", "[1-60)", "[1-99)"], ["58", "[30-60)", "[1-60)", "[1-99)"],
       ["63", "[60-99)", "[60-99)", "[1-99)"]]


def patients():
    data = pd.DataFrame(PATIENTS, columns=["Job", "Sex", "Age", "Transfuse", "Surgery"])
    hier = {name: Hierarchy([list(col) for col in zip(*rows)], name=name)
            for name, rows in (("Job", JOB), ("Sex", SEX), ("Age", AGE))}
    return data, hier


def _node_verdicts(models, node):
    data, hier = patients()
    enc = encode(data, Schema(hier, sensitive=["Surgery"], insensitive=["Transfuse"]),
                 cpu_backend(), "Surgery")
    ev = Evaluator(enc, models, make_metric("loss"), 0.0)
    stats, _ = ev.evaluate(np.array([node]), ev.bottom, np.array([0]))
    return bool(stats.anonymous[0]), int(stats.suppressed[0])


def _patients_fit(models, limit=0.0, search="flash"):
    data, hier = patients()
    return Anonymizer(quasi_identifiers=hier, sensitive=["Surgery"], insensitive=["Transfuse"],
                      models=models, suppression_limit=limit, search=search,
                      backend="cpu", seed=0).fit(data)


def test_worked_example_lkc_holds_where_2_anonymity_does_not():
    node = [1, 0, 1]   # Job: Non-Technical/Professional/Technical, Sex, Age: 3 intervals
    # the paper's sensitive value is Transgender
    lkc = LKCPrivacy(2, 2, 0.5, sensitive_values=["Transgender"], attribute="Surgery")
    assert _node_verdicts([lkc], node) == (True, 0)
    # with every value sensitive, (Professional, [30-60)) holds Plastic twice in 3 records
    assert _node_verdicts([LKCPrivacy(2, 2, 0.5, attribute="Surgery")], node) == (False, 3)
    # (Professional, M, [30-60)) is one record: not 2-anonymous
    anonymous, suppressed = _node_verdicts([KAnonymity(2)], node)
    assert not anonymous and suppressed == 1
    # every QID pair at that node is 2-anonymous, the full triple is not
    pairs = [list(p) for p in itertools.combinations(["Job", "Sex", "Age"], 2)]
    assert _node_verdicts([KAnonymityOnSubsets(pairs, 2)], node) == (True, 0)
    assert not _node_verdicts([KAnonymityOnSubsets([["Job", "Sex", "Age"]], 2)], node)[0]
    # a lower confidence bound fails: (Non-Technical, M) holds Transgender twice in 4
    assert not _node_verdicts([LKCPrivacy(2, 2, 0.4, ["Transgender"], "Surgery")], node)[0]
    # at the raw data, (Janitor, M) holds two records, one of them Transgender: C = 50 %
    # holds for it, but (Mover, 58) is one record
    assert not _node_verdicts([LKCPrivacy(2, 2, 0.5, ["Transgender"], "Surgery")],
                              [0, 0, 0])[0]

    lkc = _patients_fit([LKCPrivacy(2, 2, 0.5, ["Transgender"], "Surgery")])
    k2 = _patients_fit([KAnonymity(2)])
    assert lkc.node["height"] < k2.node["height"]
    assert lkc.information_loss < k2.information_loss
    assert _node_verdicts([LKCPrivacy(2, 2, 0.5, ["Transgender"], "Surgery")],
                          list(lkc.transformation.values()))[0]
    # the node of the paper is LKC-private and the optimum is at most as lossy
    assert sum(lkc.transformation.values()) <= sum(node)
    assert lkc.summary()["models"][0]["model"] == "lkc-privacy"


def test_arguments_flags_and_binding():
    for bad in (lambda: KAnonymityOnSubsets([], 2), lambda: KAnonymityOnSubsets([["a"]], 0),
                lambda: KAnonymityOnSubsets("ab", 2), lambda: KAnonymityOnSubsets([[]], 2),
                lambda: KAnonymityOnSubsets([["a", "a"]], 2),
                lambda: LKCPrivacy(0, 2, 0.5, attribute="s"),
                lambda: LKCPrivacy(2, 0, 0.5, attribute="s"),
                lambda: LKCPrivacy(2, 2, 1.5, attribute="s"),
                lambda: LKCPrivacy(2, 2, 0.5),                      # C < 1 needs the attribute
                lambda: LKCPrivacy(2, 2, 0.5, sensitive_values="x", attribute="s")):
        with pytest.raises(ValueError):
            bad()
    sub = KAnonymityOnSubsets([["Job", "Sex"]], 2)
    assert (sub.min_class_size, sub.monotonic_with_generalization,
            sub.monotonic_with_suppression) == (None, True, True)
    lkc = LKCPrivacy(2, 2, 0.5, attribute="Surgery")
    assert (lkc.min_class_size, lkc.monotonic_with_generalization,
            lkc.monotonic_with_suppression) == (None, True, False)
    assert LKCPrivacy(2, 2, 1.0).monotonic_with_suppression      # k-anonymity on subsets
    assert lkc.describe() == {"model": "lkc-privacy", "L": 2, "K": 2, "C": 0.5,
                              "attribute": "Surgery"}
    data, hier = patients()
    enc = encode(data, Schema(hier, sensitive=["Surgery"], insensitive=["Transfuse"]),
                 cpu_backend(), "Surgery")
    with pytest.raises(ValueError, match="not quasi-identifiers"):
        KAnonymityOnSubsets([["Job", "Transfuse"]], 2).bind(enc)
    with pytest.raises(ValueError, match="refers to"):
        LKCPrivacy(2, 2, 0.5, attribute="Transfuse").bind(enc)
    with pytest.raises(RuntimeError, match="not bound"):
        KAnonymityOnSubsets([["Job"]], 2).class_fails(None)
    # without C, LK-privacy needs no sensitive attribute
    assert _patients_fit([LKCPrivacy(2, 2, 1.0)]).transformation is not None


# ---------------------------------------------------------------------------------------
# random tables: engine verdicts == a naive pandas checker
# ---------------------------------------------------------------------------------------
def random_model(rng, qids):
    """``(kind, params, model)``: subsets of the QIDs and k, or (L, K, C, values)."""
    if rng.random() < 0.5:
        subsets = []
        for _ in range(int(rng.integers(1, 4))):
            size = int(rng.integers(1, len(qids) + 1))
            subsets.append(sorted(rng.choice(qids, size=size, replace=False).tolist()))
        k = int(rng.integers(2, 5))
        return "subsets", (subsets, k), KAnonymityOnSubsets(subsets, k)
    L, K = int(rng.integers(1, 3)), int(rng.integers(1, 4))  # noqa: N806
    C = float(rng.choice([0.4, 0.5, 0.7, 1.0]))  # noqa: N806
    values = None if rng.random() < 0.5 else ["40", "7"]
    return "lkc", (L, K, C, values), LKCPrivacy(L, K, C, values, attribute="s")


def naive_rules(kind, params, qids):
    """(QID subset, K, C, listed values) of every group rule of a model."""
    if kind == "subsets":
        subsets, k = params
        return [(list(s), k, 1.0, None) for s in subsets]
    L, K, C, values = params  # noqa: N806
    return [(list(s), K, C, values) for n in range(1, min(L, len(qids)) + 1)
            for s in itertools.combinations(qids, n)]


def naive_outliers(kind, params, gen: pd.DataFrame, sens: pd.Series, base=None,
                   more_rules=()) -> np.ndarray:
    """Rows in violating groups, re-checked on the remaining rows until nothing changes;
    ``base`` marks rows other models suppress from the start."""
    rules = naive_rules(kind, params, list(gen.columns)) + list(more_rules)
    out = np.zeros(len(gen), dtype=bool) if base is None else base.copy()
    while True:
        new = out.copy()
        for cols, k, c, values in rules:
            rows = np.flatnonzero(~out)
            for _, idx in gen.iloc[rows].groupby(cols).indices.items():
                members = rows[idx]
                s = sens.iloc[members]
                listed = s if values is None else s[s.isin(values)]
                conf = listed.value_counts().max() / len(s) if len(listed) else 0.0
                if len(s) < k or conf > c:
                    new[members] = True
        if (new == out).all():
            return out
        out = new


@pytest.mark.parametrize("seed", range(10))
def test_row_verdicts_equal_naive_checker(seed):
    data, levels = random_table(seed)
    rng = np.random.default_rng(seed)
    kind, params, model = random_model(rng, list(levels))
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    evaluator = Evaluator(enc, [model], make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    for node in lattice.levels_of(np.arange(lattice.size)):
        gen = generalize(data, levels, node)
        want = naive_outliers(kind, params, gen, data["s"])
        got = cpu_backend().to_host(evaluator.row_outliers(node)[0])
        np.testing.assert_array_equal(got, want, err_msg=f"{model!r} node {node.tolist()}")


@pytest.mark.parametrize("seed", range(6))
def test_with_other_models_row_verdicts_equal_naive_checker(seed):
    """k-anonymity suppresses small classes first; the group models then judge what is left,
    and two group models reach a common fixed point."""
    data, levels = random_table(40 + seed)
    rng = np.random.default_rng(seed)
    qids = list(levels)
    (kind, params, model), (kind2, params2, model2) = (random_model(rng, qids),
                                                       random_model(rng, qids))
    k = int(rng.integers(2, 4))
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    evaluator = Evaluator(enc, [model, KAnonymity(k), model2], make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    for node in lattice.levels_of(np.arange(lattice.size)):
        gen = generalize(data, levels, node)
        base = (gen.groupby(qids)[qids[0]].transform("size") < k).to_numpy()
        want = naive_outliers(kind, params, gen, data["s"], base,
                              naive_rules(kind2, params2, qids))
        got = cpu_backend().to_host(evaluator.row_outliers(node)[0])
        np.testing.assert_array_equal(got, want, err_msg=f"{model!r} {model2!r} k={k} "
                                                         f"node {node.tolist()}")


def test_suppression_is_iterated_until_the_release_satisfies_the_model():
    # a-groups x: 2, y: 2; b-groups p: 1, q: 2, r: 1.  The rows with b = p, r fail; suppressing
    # them leaves x and y with one row each, so those fail too.
    data = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["p", "q", "q", "r"],
                         "s": ["1", "2", "1", "2"]})
    levels = {"a": [["x", "y"], ["*", "*"]], "b": [["p", "q", "r"], ["*"] * 3]}
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s"]), cpu_backend(), "s")
    for model, kind, params in ((KAnonymityOnSubsets([["a"], ["b"]], 2), "subsets",
                                 ([["a"], ["b"]], 2)),
                                (LKCPrivacy(1, 2, 1.0, attribute="s"), "lkc", (1, 2, 1.0, None))):
        ev = Evaluator(enc, [model], make_metric("loss"), 0.0)
        got = cpu_backend().to_host(ev.row_outliers([0, 0])[0])
        assert got.tolist() == [True] * 4
        assert naive_outliers(kind, params, data[["a", "b"]], data["s"]).tolist() == [True] * 4
        # at (0, 1) b is suppressed to *: a-groups of two rows each pass
        assert not cpu_backend().to_host(ev.row_outliers([0, 1])[0]).any()


# ---------------------------------------------------------------------------------------
# flash == exhaustive, with and without suppression
# ---------------------------------------------------------------------------------------
def _fit(data, levels, model, limit, metric, search):
    try:
        return Anonymizer(quasi_identifiers=hierarchies_of(levels), sensitive=["s"],
                          models=[model], suppression_limit=limit, metric=metric,
                          search=search, backend="cpu", seed=0).fit(data)
    except NoSolutionError:
        return None


@pytest.mark.parametrize("kind", ["subsets", "lkc"])
@pytest.mark.parametrize("limit", [0.0, 0.1, 0.3])
def test_flash_equals_exhaustive(kind, limit):
    solved = 0
    for seed in range(5):
        data, levels = random_table(400 + seed)
        rng = np.random.default_rng(seed)
        for metric in ("loss", "discernibility"):
            while True:
                kind_, params, _ = random_model(rng, list(levels))
                if kind_ == kind:
                    break

            def model():
                return (KAnonymityOnSubsets(*params) if kind == "subsets"
                        else LKCPrivacy(*params, attribute="s"))

            solved += same_optimum(
                lambda search: _fit(data, levels, model(), limit, metric, search),
                (seed, metric, params))
    assert solved >= 1


# ---------------------------------------------------------------------------------------
# backends
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_verdicts_equal_on_every_backend(backend, seed):
    data, levels = random_table(20 + seed)
    schema = Schema(hierarchies_of(levels), sensitive=["s"])
    qids = list(levels)
    models = [KAnonymityOnSubsets([[q] for q in qids] + [qids], 3),
              LKCPrivacy(2, 2, 0.5, attribute="s"), LKCPrivacy(1, 3, 0.4, ["40"], "s")]
    ref = Evaluator(encode(data, schema, cpu_backend(), "s"), models, make_metric("loss"), 0.2)
    ev = Evaluator(encode(data, schema, backend, "s"), models, make_metric("loss"), 0.2)
    lattice = Lattice(ref.encoded.heights)
    nodes = lattice.levels_of(np.arange(lattice.size))
    want, _ = ref.evaluate(nodes, ref.bottom, np.zeros(len(nodes), dtype=np.int64))
    got, _ = ev.evaluate(nodes, ev.bottom, np.zeros(len(nodes), dtype=np.int64))
    np.testing.assert_array_equal(got.suppressed, want.suppressed)
    np.testing.assert_array_equal(got.anonymous, want.anonymous)
    # one batch of every node == each node on its own (groups never span nodes)
    alone = [int(cpu_backend().to_host(ref.row_outliers(node)[0]).sum()) for node in nodes]
    assert want.suppressed.tolist() == alone


# ---------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------
def _cli(tmp_path, *extra):
    data, _ = patients()
    path = tmp_path / "in.csv"
    data.to_csv(path, sep=";", index=False)
    args = ["anonymize", str(path), "--quiet", "--sensitive", "Surgery",
            "--insensitive", "Transfuse", "--output", str(tmp_path / "out.csv"),
            "--json", str(tmp_path / "s.json")]
    for name, rows in (("Job", JOB), ("Sex", SEX), ("Age", AGE)):
        h = tmp_path / f"{name}.csv"
        h.write_text("\n".join(";".join(r) for r in rows) + "\n")
        args += ["--qi", f"{name}={h}"]
    rc = main(args + list(extra))
    summary = json.loads((tmp_path / "s.json").read_text()) if rc == 0 else None
    return rc, summary


def test_cli_qid_set_and_lkc(tmp_path, capsys):
    rc, summary = _cli(tmp_path, "--k", "2", "--qid-set", "Job,Sex", "--qid-set", "Sex,Age")
    assert rc == 0
    assert summary["models"] == [{"model": "k-anonymity-on-subsets", "k": 2,
                                  "subsets": [["Job", "Sex"], ["Sex", "Age"]]}]
    rc, summary = _cli(tmp_path, "--lkc", "2,2,50%")
    assert rc == 0
    assert summary["models"] == [{"model": "lkc-privacy", "L": 2, "K": 2, "C": 0.5,
                                  "attribute": "Surgery"}]
    want = _patients_fit([LKCPrivacy(2, 2, 0.5, attribute="Surgery")])
    assert summary["information_loss"] == pytest.approx(want.information_loss)
    capsys.readouterr()
    for bad in (["--lkc", "2,2"], ["--lkc", "a,2,0.5"], ["--qid-set", "Job,"]):
        with pytest.raises(SystemExit):
            _cli(tmp_path, *bad)
    assert _cli(tmp_path, "--qid-set", "Job")[0] == 2            # needs --k
    assert _cli(tmp_path, "--k", "2", "--qid-set", "Job,Zip")[0] == 2
    assert "not quasi-identifiers" in capsys.readouterr().err
