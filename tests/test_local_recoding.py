"""Local recoding (ARX's ``optimizeIterativeFast``): ARX 3.9.2's results on Adult
(tests/data/arx_local_recoding.json) and a small table checked row by row."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.analysis.utility import granularity
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import TCloseness

CASES = json.loads((Path(__file__).parent / "data" / "arx_local_recoding.json").read_text())[
    "cases"]
Q5 = [c for c in CASES if len(c["quasi_identifiers"]) == 5]
OTHERS = [c for c in CASES if len(c["quasi_identifiers"]) > 5]


@pytest.fixture(scope="module")
def adult():
    return datasets.adult()


def _against_arx(case, adult):
    """Our steps are ARX's, no more records suppressed and ARX's granularity (ARX's
    getGranularity().getArithmeticMean(false); ours by gpuppdp.analysis.utility.granularity on
    the released table, label by label) of both the full-domain and the recoded release."""
    data, hierarchies = adult
    qids = case["quasi_identifiers"]
    hier = {q: hierarchies[q] for q in qids}
    result = Anonymizer(quasi_identifiers=hier, k=case["k"], others="insensitive",
                        suppression_limit=case["suppression_limit"], backend="cpu",
                        seed=1).fit(data)
    recoded = result.local_recoding(data, case["records_per_iteration"], seed=2)
    exp = case["expected"]
    assert result.transformation == exp["full_domain"]["transformation"]
    assert [{"transformation": s["transformation"], "records": s["records"]}
            for s in recoded.iterations[1:]] == exp["steps"]
    assert recoded.suppressed_records <= exp["local_recoding"]["suppressed_records"]
    for release, side in ((result.released, "full_domain"), (recoded.released, "local_recoding")):
        measured = granularity(release, hier, qids)
        assert measured["granularity"] >= exp[side]["granularity"] - 1e-9
        assert measured["granularity"] == pytest.approx(exp[side]["granularity"], abs=1e-9)
        for q in qids:
            assert measured["per_attribute"][q] == pytest.approx(
                exp[side]["granularity_per_attribute"][q], abs=1e-9)
    assert check(recoded.released, quasi_identifiers=qids, backend="cpu")["k"] >= case["k"]


@pytest.mark.parametrize("case", Q5, ids=[c["id"] for c in Q5])
def test_local_recoding_matches_arx_on_five_qids(case, adult):
    _against_arx(case, adult)


@pytest.mark.parametrize("case", OTHERS, ids=[c["id"] for c in OTHERS])
def test_local_recoding_matches_arx_on_more_qids(case, adult):
    _against_arx(case, adult)


def _small():
    rng = np.random.default_rng(7)
    n = 120
    ages = [str(a) for a in range(20, 60)]
    zips = [f"{z:02d}" for z in range(20)]
    data = pd.DataFrame({"age": rng.choice(ages, n), "zip": rng.choice(zips, n),
                         "sex": rng.choice(["m", "f"], n), "disease": rng.choice(list("abc"), n),
                         "weight": np.arange(n)})
    hier = {"age": Hierarchy([ages, [f"{a[0]}0-{a[0]}9" for a in ages], ["*"] * len(ages)]),
            "zip": Hierarchy([zips, [f"{z[0]}*" for z in zips], ["*"] * len(zips)]),
            "sex": Hierarchy([["m", "f"], ["*", "*"]])}
    return data, hier


def test_each_record_carries_its_iterations_generalization(backend):
    data, hier = _small()
    k = 6
    result = Anonymizer(quasi_identifiers=hier, sensitive=["disease"], insensitive=["weight"],
                        k=k, suppression_limit=0.2, backend=backend, seed=0).fit(data)
    recoded = result.local_recoding(data, 0.02, seed=3)
    rel = recoded.released
    assert recoded.release.released_rows + recoded.suppressed_records == len(data)
    assert recoded.suppressed_records <= result.suppressed_records
    assert len(recoded.iterations) >= 2  # something was re-anonymized
    src = recoded.release.source_rows
    # naive reference, row by row: the label of the row's value at its iteration's level
    for i, row in rel.iterrows():
        t = recoded.row_iteration[src[i]]
        original = data.iloc[src[i]]
        assert row["weight"] == original["weight"]
        for q, h in hier.items():
            if t < 0:
                assert row[q] == "*"
            else:
                level = recoded.iterations[t]["transformation"][q]
                leaf = list(h.leaves).index(original[q])
                assert row[q] == h.labels(level)[h.codes(level)[leaf]]
    released = rel[recoded.row_iteration[src] >= 0]
    assert check(released, quasi_identifiers=list(hier), backend=backend)["k"] >= k
    assert check(rel, quasi_identifiers=list(hier), backend=backend)["suppressed_rows"] == \
        recoded.suppressed_records
    sizes = np.bincount(recoded.row_iteration[recoded.row_iteration >= 0])
    assert [it["records"] for it in recoded.iterations] == sizes.tolist()
    dropped = result.local_recoding(data, 0.02, suppressed="drop", seed=3)
    assert len(dropped.released) == dropped.release.released_rows


@pytest.mark.parametrize("metric", ["loss", "precision"])
def test_a_row_subset_evaluates_as_a_table_of_its_own(metric):
    """An iteration's evaluator -- the rows gathered from the whole table's codes
    (``EncodedTable.take_rows``, level maps shared) and the metric bound to the whole table,
    copied and bound again -- gives every node of the lattice the statistics, loss and bounds
    of the subset's rows encoded afresh with a fresh metric."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
    from gpuppdp.engine.lattice import Lattice
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.models import KAnonymity

    data, hier = _small()
    schema = Schema(hier, (), (), (), "insensitive")
    whole = Evaluator(encode(data, schema, cpu_backend()), [KAnonymity(3)],
                      make_metric(metric), 0.1)
    rows = np.sort(np.random.default_rng(5).choice(len(data), 50, replace=False))
    sub = Evaluator(whole.encoded.take_rows(rows), [KAnonymity(3)], whole.metric, 0.3)
    fresh = Evaluator(encode(data.iloc[rows].reset_index(drop=True), schema, cpu_backend()),
                      [KAnonymity(3)], make_metric(metric), 0.3)
    lattice = Lattice(fresh.encoded.heights)
    got, want = (LatticeOracle(ev, lattice).evaluate_all() for ev in (sub, fresh))
    assert want.anonymous.any() and not want.anonymous.all()
    for name in ("anonymous", "suppressed", "classes", "information_loss", "lower_bound"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    bound, reference = (ev.metric.prior_bound(ev.bottom) for ev in (sub, fresh))
    if bound is not None:
        np.testing.assert_array_equal(bound(want.levels), reference(want.levels))
    assert [d.tolist() for d in sub.encoded.distinct_per_level()] == \
        [d.tolist() for d in fresh.encoded.distinct_per_level()]


def test_row_outlier_mask_is_the_rows_in_small_classes_whichever_node_was_asked_before():
    """``Evaluator.row_outlier_mask`` (kept for the last node: local recoding reads the
    release's) equals a naive count of each row's class at the node, and the first array of
    ``row_outliers``, asked in any order, nodes repeated."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.lattice import Lattice
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.models import KAnonymity

    data, hier = _small()
    k = 3
    ev = Evaluator(encode(data, Schema(hier, (), (), (), "insensitive"), cpu_backend()),
                   [KAnonymity(k)], make_metric("loss"), 1.0)
    lattice = Lattice(ev.encoded.heights)
    nodes = lattice.levels_of(np.random.default_rng(2).integers(0, lattice.size, 12))
    mixed = 0
    for levels in [*nodes, nodes[0], nodes[0], nodes[3]]:
        labels = pd.DataFrame({q: [h.labels(int(lv))[h.codes(int(lv))[list(h.leaves).index(v)]]
                                   for v in data[q]]
                               for (q, h), lv in zip(hier.items(), levels)})
        want = (labels.groupby(list(hier))[list(hier)[0]].transform("size") < k).to_numpy()
        np.testing.assert_array_equal(ev.row_outlier_mask(levels), want)
        np.testing.assert_array_equal(ev.row_outlier_mask(levels), want)  # the kept one
        np.testing.assert_array_equal(ev.row_outliers(levels)[0], want)
        mixed += bool(want.any() and not want.all())
    assert mixed >= 3  # nodes with rows on both sides


def test_local_recoding_errors():
    data, hier = _small()
    result = Anonymizer(quasi_identifiers=hier, others="insensitive", k=4,
                        suppression_limit=0.1, backend="cpu").fit(data)
    for bad in (0, 1.5, -0.1):
        with pytest.raises(InputError, match="records_per_iteration"):
            result.local_recoding(data, bad)
    with pytest.raises(InputError, match="rows"):
        result.local_recoding(data.iloc[:10], 0.01)
    with pytest.raises(InputError, match="suppressed"):
        result.local_recoding(data, 0.01, suppressed="hide")
    # a model judging classes against the table's distribution: refused (set on the fitted
    # result, sparing the fit of its kernels)
    result._setup = result._setup._replace(models=[TCloseness("disease", 0.9)])
    with pytest.raises(InputError, match="local recoding supports"):
        result.local_recoding(data, 0.01)


def test_command_line_local_options(tmp_path, capsys):
    from gpuppdp.cli.main import main

    data, hier = _small()
    data.to_csv(tmp_path / "in.csv", sep=";", index=False)
    qi = []
    for name, h in hier.items():
        h.to_csv(tmp_path / f"{name}.csv")
        qi += ["--qi", f"{name}={tmp_path / f'{name}.csv'}"]
    base = ["anonymize", str(tmp_path / "in.csv"), *qi, "--others", "insensitive",
            "--suppression-limit", "20%", "--output", str(tmp_path / "out.csv"), "--quiet",
            "--backend", "cpu", "--seed", "0"]
    with pytest.raises(SystemExit):
        main(base + ["--local-suppression"])                     # no --k
    assert "--local-suppression needs --k" in capsys.readouterr().err
    assert main(base + ["--k", "6", "--local-recoding", "--local-suppression", "--importance",
                        "sex,zip,age", "--json", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    released = pd.read_csv(tmp_path / "out.csv", sep=";", dtype=str)
    assert summary["local_recoding"]["steps"][0]["transformation"] == summary["transformation"]
    assert summary["local_recoding"]["suppressed_records"] + \
        summary["local_recoding"]["released_records"] == len(data)
    cells = summary["local_suppression"]["suppressed_cells"]
    assert set(cells) == set(hier)
    assert check(released, quasi_identifiers=list(hier), backend="cpu")["k"] >= 1
    from gpuppdp.analysis.checker import check_cells
    assert check_cells(released, quasi_identifiers=list(hier))["k"] >= 6
