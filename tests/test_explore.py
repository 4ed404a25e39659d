"""Every node measured (:func:`gpuppdp.explore`): each node's figures against the independent
checker, risk summary and loss measures on that node's release (``Anonymizer.release``), the
Pareto flags against a brute-force filter, the release of a chosen node against ``fit``'s, the
frontier page, and the ``explore`` / ``anonymize --transformation`` command lines."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import gpuppdp
from gpuppdp import Anonymizer, NoSolutionError, datasets
from gpuppdp.analysis.checker import check
from gpuppdp.analysis.risk import class_sizes, sample_risk_summary
from gpuppdp.algorithms._lattice import lattice_evaluator
from gpuppdp.analysis.utility import privacy_utility_losses
from gpuppdp.backend import get_backend
from gpuppdp.cli.main import main
from gpuppdp.engine.evaluate import LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.engine.search.heuristic import AUTO_HEURISTIC, make_heuristic
from gpuppdp.engine.transform import suppressed_rows
from gpuppdp.errors import InputError
from gpuppdp.models import DistinctLDiversity, KAnonymity, PrivacyLoss
from gpuppdp.tradeoff import PARETO, pareto_mask

QIDS = ["age", "sex", "race", "education"]


@pytest.fixture(scope="module")
def adult_part():
    """1,500 Adult rows, four QIDs (80 nodes) and occupation."""
    data, hierarchies = datasets.adult()
    return (data[QIDS + ["occupation"]].iloc[:1500].reset_index(drop=True),
            {q: hierarchies[q] for q in QIDS})


def brute_pareto(x, y, eligible):
    """O(n^2): a point is optimal when eligible, not NaN and no other such point is <= on
    both axes and < on one."""
    ok = eligible & ~np.isnan(x) & ~np.isnan(y)
    out = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        out[i] = not any((x[j] <= x[i] and y[j] <= y[i] and (x[j] < x[i] or y[j] < y[i]))
                         for j in np.flatnonzero(ok))
    return out


def test_pareto_mask_equals_a_brute_force_filter():
    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(1, 60))
        x = rng.integers(0, 6, n).astype(float)  # many ties on each axis and on both
        y = rng.integers(0, 6, n).astype(float)
        x[rng.random(n) < 0.1] = np.nan
        eligible = rng.random(n) < 0.8
        assert (pareto_mask(x, y, eligible) == brute_pareto(x, y, eligible)).all(), trial
    # two points tying on both axes are both kept; one point dominating both removes them
    assert pareto_mask([1, 1, 2], [2, 2, 1]).tolist() == [True, True, True]
    assert pareto_mask([1, 1, 0], [2, 2, 2]).tolist() == [False, False, True]


def _release_figures(data, hierarchies, node, suppression_limit, models):
    """The figures of ``node``'s release, measured by the independent tools."""
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation"],
                            models=models, k=3, suppression_limit=suppression_limit,
                            backend="cpu", seed=0)
    result = anonymizer.release(data, node)
    released = result.released
    measured = check(released, quasi_identifiers=QIDS, sensitive="occupation", backend="cpu")
    kept = released[~suppressed_rows(released, QIDS)]
    risk = sample_risk_summary(class_sizes(kept, QIDS), "cpu")
    losses = privacy_utility_losses(data, result.release, QIDS, "occupation")
    return result, measured, risk, losses


def test_each_node_s_figures_are_those_of_its_release(adult_part, backend):
    data, hierarchies = adult_part
    models = [DistinctLDiversity("occupation", 2)]
    found = gpuppdp.explore(data, quasi_identifiers=hierarchies, sensitive=["occupation"],
                            k=3, models=models, suppression_limit=0.05, backend=backend)
    nodes = found.nodes
    assert len(nodes) == 80 and (nodes["node"] == np.arange(80)).all()
    anonymous = np.flatnonzero(nodes["anonymous"].to_numpy())
    assert 0 < len(anonymous) < 80
    rng = np.random.default_rng(3)
    for at in rng.choice(anonymous, 4, replace=False):
        row = nodes.iloc[at]
        node = {q: int(row[q]) for q in QIDS}
        result, measured, risk, losses = _release_figures(data, hierarchies, node, 0.05, models)
        assert row["suppressed_records"] == result.suppressed_records == \
            measured["suppressed_rows"]
        assert row["classes"] == measured["classes"] == risk.equivalence_classes
        assert row["smallest_class"] == measured["k"]
        assert row["information_loss"] == result.information_loss
        assert row["highest_risk"] == pytest.approx(risk.prosecutor_highest_risk, abs=1e-12)
        assert row["average_risk"] == pytest.approx(risk.prosecutor_average_risk, abs=1e-12)
        assert row["records_at_risk"] == pytest.approx(risk.records_at_risk["0.20"], abs=1e-12)
        assert row["distribution_privacy_loss_max"] == pytest.approx(
            measured["distribution_loss_max"], abs=1e-9)
        assert row["entropy_privacy_loss_max"] == pytest.approx(measured["entropy_loss_max"],
                                                                abs=1e-9)
        for name in ("distribution_privacy_loss", "entropy_privacy_loss",
                     "distribution_utility_loss", "entropy_utility_loss"):
            assert row[f"{name}_max"] == pytest.approx(losses.maximum[name], abs=1e-9)
            assert row[f"{name}_mean"] == pytest.approx(losses.total[name], abs=1e-9)
    for flag, (x, y) in PARETO.items():
        assert (nodes[flag].to_numpy() == brute_pareto(
            nodes[x].to_numpy(), nodes[y].to_numpy(), nodes["anonymous"].to_numpy())).all()
    # the optimum: least loss, then lowest height, then smallest id (the exhaustive search's)
    loss = np.where(nodes["anonymous"], nodes["information_loss"], np.inf)
    best = nodes.iloc[np.lexsort((nodes["node"], nodes["height"], loss))[0]]
    assert found.optimum == {q: int(best[q]) for q in QIDS}


def test_a_given_prior_and_no_sensitive_attribute(adult_part):
    data, hierarchies = adult_part
    values = data["occupation"].astype(str).unique()
    prior = {v: 1.0 / len(values) for v in values}
    found = gpuppdp.explore(data, quasi_identifiers=hierarchies, sensitive=["occupation"],
                            models=[PrivacyLoss("occupation", 0.9, 3.5)], prior=prior,
                            backend="cpu")
    row = found.nodes.iloc[41]
    released = Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation"],
                          models=[PrivacyLoss("occupation", 0.9, 3.5)], backend="cpu",
                          suppression_limit=1.0).release(data, row[QIDS].tolist()).released
    measured = check(released, quasi_identifiers=QIDS, sensitive="occupation", prior=prior,
                     backend="cpu")
    assert row["distribution_privacy_loss_max"] == pytest.approx(
        measured["distribution_loss_max"], abs=1e-9)
    assert found.thresholds == {"distribution_privacy_loss_max": 0.9}
    plain = gpuppdp.explore(data.drop(columns="occupation"), quasi_identifiers=hierarchies,
                            k=2, backend="cpu")
    assert plain.nodes["entropy_utility_loss_mean"].isna().all()
    assert not plain.nodes["pareto_privacy_utility"].any()
    assert plain.nodes["pareto_risk_loss"].any()
    assert plain.thresholds == {"highest_risk": 0.5}


def test_release_of_the_optimum_is_fit_s_release_and_bad_nodes_are_named(adult_part):
    data, hierarchies = adult_part
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, sensitive=["occupation"], k=4,
                            suppression_limit=0.02, backend="cpu", seed=5)
    fitted = anonymizer.fit(data)
    given = anonymizer.release(data, fitted.transformation)
    pd.testing.assert_frame_equal(given.released, fitted.released)
    a, b = fitted.summary(), given.summary()
    for key in ("transformation", "information_loss", "equivalence_classes",
                "suppressed_records", "smallest_class", "released_records"):
        assert a[key] == b[key], key
    assert b["search"] == "given" and b["nodes_evaluated"] == 1
    as_tuple = anonymizer.release(data, tuple(fitted.transformation.values()))
    pd.testing.assert_frame_equal(as_tuple.released, fitted.released)
    with pytest.raises(NoSolutionError, match="records would be suppressed, at most 30 of"):
        anonymizer.release(data, {q: 0 for q in QIDS})
    for node, match in (({"age": 1}, "no level given for quasi-identifier.*'sex'"),
                        ({**fitted.transformation, "zip": 1}, "'zip' is not a quasi-id"),
                        ({**fitted.transformation, "age": 5}, "'age' must be an integer "
                                                              "from 0 to .* height 4, got 5"),
                        ({**fitted.transformation, "sex": 0.5}, "'sex'.*got 0.5"),
                        ((0, 1), "2 levels given for 4")):
        with pytest.raises(InputError, match=match):
            anonymizer.release(data, node)


def test_frontier_page_is_self_contained_and_marks_the_chosen_node(adult_part):
    data, hierarchies = adult_part
    found = gpuppdp.explore(data, quasi_identifiers=hierarchies, sensitive=["occupation"],
                            k=3, suppression_limit=0.05, backend="cpu")
    page = found.to_html(chosen={"age": 2, "sex": 1, "race": 1, "education": 2})
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "")
    assert page.count("<svg") == 2
    assert "chosen: age=2, sex=1, race=1, education=2" in page
    assert "highest_risk = 0.3333" in page            # the line of 1/k
    finite = found.nodes[["distribution_privacy_loss_max",
                          "distribution_utility_loss_mean"]].notna().all(axis=1)
    assert page.count("<circle") >= int(finite.sum())
    assert found._repr_html_() == found.to_html()


def _adult_options(tmp_path):
    files = {q: datasets.adult_path(f"adult_hierarchy_{q}.csv") for q in QIDS}
    data, _ = datasets.adult()
    path = tmp_path / "in.csv"
    data[QIDS + ["occupation"]].iloc[:1500].to_csv(path, sep=";", index=False)
    return [str(path), *sum((["--qi", f"{q}={f}"] for q, f in files.items()), []),
            "--sensitive", "occupation", "--k", "3", "--suppression-limit", "5%",
            "--backend", "cpu"]


def test_cli_explore_and_release_the_chosen_node(tmp_path, adult_part, capsys):
    options = _adult_options(tmp_path)
    out = tmp_path / "nodes.csv"
    assert main(["explore", *options, "--output", str(out), "--html",
                 str(tmp_path / "f.html"), "--json", str(tmp_path / "s.json"), "--quiet"]) == 0
    nodes = pd.read_csv(out, sep=";")
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["nodes"] == len(nodes) == 80 and summary["seconds"] > 0
    assert "<svg" in (tmp_path / "f.html").read_text()
    data, hierarchies = adult_part
    found = gpuppdp.explore(data, quasi_identifiers=hierarchies, sensitive=["occupation"],
                            k=3, suppression_limit=0.05, backend="cpu")
    assert (nodes["pareto_risk_loss"] == found.nodes["pareto_risk_loss"]).all()
    pick = found.frontier("pareto_risk_loss").iloc[-1]
    spec = ",".join(f"{q}={int(pick[q])}" for q in QIDS)
    released = tmp_path / "rel.csv"
    assert main(["anonymize", *options, "--transformation", spec, "--output", str(released),
                 "--json", str(tmp_path / "r.json"), "--seed", "1"]) == 0
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["transformation"] == {q: int(pick[q]) for q in QIDS}
    assert run["suppressed_records"] == pick["suppressed_records"]
    assert run["information_loss"] == pick["information_loss"]
    table = pd.read_csv(released, sep=";", dtype=str)
    assert check(table, quasi_identifiers=QIDS)["classes"] == pick["classes"]
    capsys.readouterr()
    assert main(["anonymize", *options, "--transformation", "age=0,sex=0", "--output",
                 str(released)]) == 2
    assert "--transformation: no level given for quasi-identifier(s) 'race'" in \
        capsys.readouterr().err
    for extra, message in ((["--search", "flash"], "leave out --search"),
                           (["--algorithm", "mondrian"], "full-domain lattice")):
        with pytest.raises(SystemExit):
            main(["anonymize", *options, "--transformation", spec, "--output",
                  str(released), *extra])
        assert message in capsys.readouterr().err
    assert not math.isnan(pick["highest_risk"])


def test_a_partial_walk_measures_the_nodes_the_heuristic_visits(adult_part, tmp_path):
    data, hierarchies = adult_part
    options = dict(quasi_identifiers=hierarchies, sensitive=["occupation"], k=3,
                   suppression_limit=0.05, backend="cpu")
    whole = gpuppdp.explore(data, **options)
    part = gpuppdp.explore(data, max_nodes=20, **options)
    # the reference: the anonymizer's heuristic run alone on the same lattice and budget
    evaluator = lattice_evaluator(data, hierarchies, sensitive=["occupation"],
                                  models=[KAnonymity(3)], suppression_limit=0.05,
                                  metric=make_metric("loss"), backend=get_backend("cpu"))
    oracle = LatticeOracle(evaluator, Lattice(evaluator.encoded.heights))
    make_heuristic(AUTO_HEURISTIC, evaluator, max_evaluations=20).run(oracle)
    visited = oracle.evaluated().levels @ oracle.lattice.strides
    nodes = part.nodes
    assert nodes["node"].tolist() == sorted(visited.tolist()) and 20 <= len(nodes) < 80
    summary = part.summary()
    assert summary["complete"] is False and summary["lattice_nodes"] == 80
    assert summary["nodes"] == len(nodes) and whole.summary()["complete"] is True
    flags = list(PARETO)
    same = whole.nodes.set_index("node").loc[nodes["node"]].reset_index()
    pd.testing.assert_frame_equal(nodes.drop(columns=flags), same.drop(columns=flags))
    for flag, (x, y) in PARETO.items():  # among the visited nodes only
        assert (nodes[flag].to_numpy() == brute_pareto(
            nodes[x].to_numpy(), nodes[y].to_numpy(), nodes["anonymous"].to_numpy())).all()
    loss = np.where(nodes["anonymous"], nodes["information_loss"], np.inf)
    best = nodes.iloc[np.lexsort((nodes["node"], nodes["height"], loss))[0]]
    assert part.optimum == {q: int(best[q]) for q in QIDS}
    assert part.node(part.optimum)["node"] == best["node"]
    unvisited = int(np.setdiff1d(np.arange(80), nodes["node"])[0])
    with pytest.raises(InputError, match="was not measured"):
        part.node(Lattice(part.heights).levels_of([unvisited])[0].tolist())
    assert "of 80 (a partial walk" in part.to_html()
    assert gpuppdp.explore(data, max_nodes=80, **options).summary()["complete"] is True
    with pytest.raises(InputError, match="max_nodes must be an integer >= 1, got 0"):
        gpuppdp.explore(data, max_nodes=0, **options)
    assert main(["explore", *_adult_options(tmp_path), "--max-nodes", "20", "--quiet",
                 "--json", str(tmp_path / "s.json")]) == 0
    written = json.loads((tmp_path / "s.json").read_text())
    assert written["complete"] is False and written["nodes"] == len(nodes)


def test_census_nodes_equal_a_naive_groupby():
    """A small census (wide ZIP codes, ages, sex; occupation sensitive): every node's figures
    equal those of its classes formed directly from the rows (a unique over the generalized
    codes, a histogram per class), suppression of the classes under k included."""
    census, hierarchies = datasets.census(4000, 0)
    qids, k, limit = ["zip", "age", "sex"], 3, 0.3
    found = gpuppdp.explore(census[qids + ["occupation"]],
                            quasi_identifiers={q: hierarchies[q] for q in qids},
                            sensitive=["occupation"], k=k, suppression_limit=limit,
                            backend="cpu")
    nodes = found.nodes
    leaf = [hierarchies[q].leaf_codes(census[q]) for q in qids]
    sens = pd.factorize(census["occupation"])[0]
    n = len(census)
    anonymous = nodes["anonymous"].to_numpy()
    assert len(nodes) == 72 and 0 < anonymous.sum() < 72
    for _, row in nodes.iterrows():
        codes = np.stack([hierarchies[q].codes(int(row[q]))[c] for q, c in zip(qids, leaf)])
        _, cls = np.unique(codes, axis=1, return_inverse=True)
        size = np.bincount(cls)
        kept = size >= k
        hist = np.zeros((len(size), sens.max() + 1))
        np.add.at(hist, (cls, sens), 1.0)
        hist, size = hist[kept], size[kept]
        assert row["classes"] == kept.sum()
        assert row["suppressed_records"] == n - size.sum()
        assert row["anonymous"] == (n - size.sum() <= math.floor(limit * n))
        if not kept.any():  # every record suppressed
            continue
        p = hist / size[:, None]
        q = hist.sum(axis=0) / size.sum()
        h_p = -np.sum(np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0.0), axis=1)
        h_q = -np.sum(q[q > 0] * np.log2(q[q > 0]))
        per_class = {
            "distribution_privacy_loss": np.sqrt(((p - q) ** 2).sum(axis=1)),
            "entropy_privacy_loss": np.abs(h_q - h_p),
            "distribution_utility_loss": (p * np.sqrt(np.maximum(
                1 - 2 * p + (p * p).sum(axis=1)[:, None], 0))).sum(axis=1),
            "entropy_utility_loss": h_p}
        assert row["smallest_class"] == size.min()
        assert row["average_risk"] == pytest.approx(len(size) / size.sum(), abs=1e-12)
        assert row["records_at_risk"] == pytest.approx(size[size < 5].sum() / size.sum(),
                                                       abs=1e-12)
        for name, values in per_class.items():
            assert row[f"{name}_max"] == pytest.approx(values.max(), abs=1e-9)
            assert row[f"{name}_mean"] == pytest.approx((values * size).sum() / size.sum(),
                                                        abs=1e-9)


def test_figures_do_not_read_their_scratch_before_writing_it():
    """The CPU figures' per-class scratch is reused from batch to batch without clearing
    (:func:`~gpuppdp.tradeoff.exploration._figures_njit`): scratch full of NaN gives the
    figures of a zeroed one, on nodes whose classes are partly suppressed and whose histogram
    entries are interleaved across classes."""
    from gpuppdp.tradeoff.exploration import _figures_njit

    rng = np.random.default_rng(7)
    m = 5
    class_ptr, entry_ptr = [0], [0]
    size, outlier, entry_class, entry_sens, entry_count = [], [], [], [], []
    for _ in range(4):  # nodes
        first = len(size)
        node_entries = []
        for _ in range(int(rng.integers(1, 7))):  # classes
            c = len(size)
            values = rng.choice(m, int(rng.integers(1, m + 1)), replace=False)
            counts = rng.integers(1, 9, len(values))
            node_entries += [(c, int(v), int(n)) for v, n in zip(values, counts)]
            size.append(int(counts.sum()))
            outlier.append(bool(rng.random() < 0.3))
        outlier[first] = False  # each node keeps a class
        for i in rng.permutation(len(node_entries)):  # the classes' entries interleaved
            entry_class.append(node_entries[i][0])
            entry_sens.append(node_entries[i][1])
            entry_count.append(node_entries[i][2])
        class_ptr.append(len(size))
        entry_ptr.append(len(entry_class))
    arrays = [np.array(a, dtype=np.int64) for a in
              (class_ptr, entry_ptr, size)] + [np.array(outlier, dtype=np.bool_)] + \
        [np.array(a, dtype=np.int64) for a in (entry_class, entry_sens, entry_count)]
    xlogx = np.arange(64, dtype=np.float64)
    xlogx[1:] *= np.log2(xlogx[1:])
    for prior in (np.zeros(0), np.full(m, 1.0 / m)):
        q_sq, h_q = float((prior ** 2).sum()), float(-(prior * np.log2(prior)).sum())
        args = (*arrays, m, prior, q_sq, h_q, 0.2, True, xlogx)
        clean = _figures_njit(*args, np.zeros((4, len(size))))
        dirty = _figures_njit(*args, np.full((4, len(size) + 3), np.nan))
        np.testing.assert_array_equal(dirty, clean)
        assert np.isfinite(clean[:, 2:]).all()  # every node kept a class: all figures shown


def _random_batch(rng, n_nodes, n_values):
    """Random classes of ``n_nodes`` nodes (some empty), histograms over ``n_values`` values
    with the entries of each node in a shuffled order, a random suppression (one node's
    classes all suppressed) and counts past a small ``n log2 n`` table."""
    per_node = rng.integers(0, 7, n_nodes)
    per_node[rng.integers(n_nodes)] = 0
    ptr = np.concatenate([[0], np.cumsum(per_node)]).astype(np.int64)
    n_classes = int(ptr[-1])
    distinct = rng.integers(1, min(n_values, 4) + 1, n_classes)
    entry_class = np.repeat(np.arange(n_classes), distinct)
    entry_sens = np.concatenate([rng.choice(n_values, d, replace=False) for d in distinct])
    entry_count = rng.integers(1, 40, len(entry_class))
    node_of_class = np.repeat(np.arange(n_nodes), per_node)
    node_of_entry = node_of_class[entry_class]
    order = np.lexsort((rng.random(len(entry_class)), node_of_entry))  # shuffled per node
    entry_class, entry_sens, entry_count = entry_class[order], entry_sens[order], \
        entry_count[order]
    size = np.bincount(entry_class, weights=entry_count, minlength=n_classes).astype(np.int64)
    outlier = rng.random(n_classes) < 0.3
    full = np.flatnonzero(per_node)[0]
    outlier[ptr[full]:ptr[full + 1]] = True
    return ptr, size, outlier, distinct, entry_class, entry_sens, entry_count


@pytest.mark.parametrize("with_prior", [False, True])
def test_the_cuda_figures_equal_the_cpu_pass(with_prior):
    """The four CUDA launches (Numba's simulator, the strict CuPy stand-in) against the CPU
    pass on random batches: the same figures per node (the same per-class sums; the node sums
    in class order on the device, the CPU's in class order too)."""
    from gpuppdp.core.classes import Classes
    from gpuppdp.testing import strict_backend
    from gpuppdp.tradeoff.exploration import _figures_njit
    from gpuppdp.tradeoff.figures_cuda import node_figures_cuda

    be = strict_backend()
    xp = be.xp
    rng = np.random.default_rng(11 + with_prior)
    for trial in range(3):
        n_nodes, n_values = int(rng.integers(2, 9)), int(rng.integers(2, 7))
        ptr, size, outlier, distinct, entry_class, entry_sens, entry_count = \
            _random_batch(rng, n_nodes, n_values)
        xlogx = np.arange(33, dtype=np.float64)  # counts past 32 computed, not looked up
        xlogx[1:] *= np.log2(xlogx[1:])
        prior = rng.random(n_values)
        prior /= prior.sum()
        prior_sq, prior_h = float((prior ** 2).sum()), float(-(prior * np.log2(prior)).sum())
        entry_ptr = np.zeros(n_nodes + 1, np.int64)
        node_of_class = np.repeat(np.arange(n_nodes), np.diff(ptr))
        np.cumsum(np.bincount(node_of_class[entry_class], minlength=n_nodes),
                  out=entry_ptr[1:])
        expected = _figures_njit(ptr, entry_ptr, size, outlier, entry_class,
                                 entry_sens.astype(np.int64), entry_count, n_values,
                                 prior if with_prior else np.zeros(0), prior_sq, prior_h,
                                 0.2, True, xlogx, np.empty((4, len(size))))
        classes = Classes(xp, be.asarray(size), None, be.asarray(ptr), ptr, None,
                          be.asarray(distinct), be.asarray(entry_class),
                          be.asarray(entry_sens.astype(np.int32)), be.asarray(entry_count))
        extra = {"prior": be.asarray(prior), "prior_sq": prior_sq,
                 "prior_h": prior_h} if with_prior else {}
        got = be.to_host(node_figures_cuda(be, classes, be.asarray(outlier), n_nodes, 0.2,
                                           n_values, be.asarray(xlogx), **extra))
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15, err_msg=str(trial))
        assert np.isnan(got[np.diff(ptr) == 0, 2:]).all()  # no classes: no figures
        # without a sensitive attribute: the first two columns, the rest NaN
        plain = Classes(xp, be.asarray(size), None, be.asarray(ptr), ptr, None)
        got = be.to_host(node_figures_cuda(be, plain, be.asarray(outlier), n_nodes, 0.2, 0,
                                           be.asarray(xlogx)))
        np.testing.assert_array_equal(got[:, :2], expected[:, :2])
        assert np.isnan(got[:, 2:]).all()
