"""Flash's sparse solution space (Kohlmayer et al. 2012 on a JHPL-like store): the property
store against a dense reference, the lazy level enumeration against a sort of the whole
lattice, and flash == exhaustive on random tables with 3 to 5 QIDs and several models."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.solution_space import Properties, level_nodes
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import (AverageReidentificationRisk, DistinctLDiversity,
                            EntropyLDiversity, KAnonymity, PopulationUniqueness,
                            PrivacyLoss)

from .test_models_ldiv_tclose import same_optimum


def _random_lattice(rng) -> Lattice:
    return Lattice(rng.integers(0, 4, size=int(rng.integers(1, 5))))


@pytest.mark.parametrize("seed", range(12))
def test_properties_match_a_dense_reference(seed):
    """Random tags (explicit, up or down, several bits at once) on a small lattice: every node
    answers every query as a dense array marked cone by cone does."""
    rng = np.random.default_rng(seed)
    lat = _random_lattice(rng)
    all_levels = lat.levels_of(np.arange(lat.size))
    dense = np.zeros(lat.size, dtype=np.int64)
    store = Properties(lat.strides, lat.radix)
    for _ in range(int(rng.integers(1, 40))):
        g, props = int(rng.integers(lat.size)), int(rng.integers(1, 16))
        mode = rng.choice(["explicit", "up", "down"])
        store.set(g, props, up=mode == "up", down=mode == "down")
        if mode == "explicit":
            dense[g] |= props
        else:
            apex = all_levels[g]
            inside = (all_levels >= apex) if mode == "up" else (all_levels <= apex)
            dense[inside.all(axis=1)] |= props
        query = int(rng.integers(1, 16))
        expected = (dense & query) != 0
        assert [store.has(n, query) for n in range(lat.size)] == expected.tolist()
        ids = np.arange(lat.size)
        np.testing.assert_array_equal(store.has_many(ids, all_levels, query), expected)


@pytest.mark.parametrize("seed", range(12))
def test_level_nodes_are_the_sorted_lattice(seed):
    """Each height's nodes, in ascending id, as a lexsort of the whole lattice gives them."""
    lat = _random_lattice(np.random.default_rng(100 + seed))
    ids = np.arange(lat.size)
    height = lat.levels_of(ids).sum(axis=1)
    order = np.lexsort((ids, height))
    got = [level_nodes(lat.max_levels, h) for h in range(lat.max_height + 1)]
    assert all(lv.shape[1] == lat.n_attributes for lv in got)
    np.testing.assert_array_equal(np.concatenate([lv @ lat.strides for lv in got]), order)


def _table(seed):
    rng = np.random.default_rng(9000 + seed)
    n, cols, hierarchies = int(rng.integers(40, 200)), {}, {}
    for j in range(int(rng.integers(3, 6))):
        leaves = [f"v{i}" for i in range(int(rng.integers(2, 9)))]
        depth = int(rng.integers(1, 4))
        levels = [leaves] + [[f"{i >> d}/{d}" for i in range(len(leaves))]
                             for d in range(1, depth)] + [["*"] * len(leaves)]
        hierarchies[f"q{j}"] = Hierarchy(levels, name=f"q{j}")
        cols[f"q{j}"] = rng.choice(leaves, size=n)
    cols["s"] = rng.choice(list("abcde"), size=n)
    return pd.DataFrame(cols), hierarchies


MODELS = {"k": lambda: [KAnonymity(3)],
          "distinct": lambda: [DistinctLDiversity("s", 2)],
          "entropy+k": lambda: [EntropyLDiversity("s", 1.5), KAnonymity(2)]}


@pytest.mark.parametrize("seed", range(4))
def test_flash_equals_exhaustive_on_larger_lattices(seed):
    data, hierarchies = _table(seed)
    solved = 0
    for (kind, models), metric, limit in itertools.product(
            MODELS.items(), ("loss", "precision", "discernibility"), (0.0, 0.1)):

        def fit(search):
            try:
                return Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                                  models=models(), suppression_limit=limit, metric=metric,
                                  search=search, backend="cpu", seed=0).fit(data)
            except NoSolutionError:
                return None

        solved += same_optimum(fit, (seed, kind, metric, limit))
    assert solved


@pytest.mark.parametrize("seed", range(6))
def test_level_search_equals_exhaustive(seed):
    """The batched level search (the GPU's default) skips nodes by bound and monotonicity
    but returns the exhaustive search's optimum -- node, loss and statistics -- and never
    evaluates more nodes."""
    data, hierarchies = _table(seed)
    compared = 0
    for (kind, models), metric, limit in itertools.product(
            MODELS.items(), ("loss", "precision", "discernibility"), (0.0, 0.1)):
        results = {}
        for search in ("exhaustive", "levels"):
            try:
                results[search] = Anonymizer(
                    quasi_identifiers=hierarchies, sensitive=["s"], models=models(),
                    suppression_limit=limit, metric=metric, search=search, backend="cpu",
                    seed=0).fit(data)
            except NoSolutionError:
                results[search] = None
        want, got = results["exhaustive"], results["levels"]
        case = (seed, kind, metric, limit)
        assert (want is None) == (got is None), case
        if want is None:
            continue
        assert got.search.strategy == "levels", case
        assert got.transformation == want.transformation, case
        assert got.information_loss == want.information_loss, case
        assert got.node == want.node, case
        assert got.search.nodes_evaluated <= want.search.nodes_evaluated, case
        compared += 1
    assert compared


def test_level_search_skips_nodes_on_adult():
    """On 8-QID Adult (k=5, 5 %, loss) the bound rules out a good part of the lattice."""
    from gpuppdp import datasets

    data, hierarchies = datasets.adult()
    qids = list(datasets.ADULT_QUASI_IDENTIFIERS)[:8]
    fits = {s: Anonymizer(quasi_identifiers={q: hierarchies[q] for q in qids},
                          others="insensitive", k=5, suppression_limit=0.05, search=s,
                          backend="cpu").fit(data) for s in ("exhaustive", "levels")}
    assert fits["levels"].transformation == fits["exhaustive"].transformation
    assert fits["levels"].search.nodes_evaluated < 0.8 * fits["exhaustive"].search.nodes_evaluated


def _skewed_table(rows: int, qids: int, seed: int = 0):
    """``qids`` columns of 16 leaves in a binary hierarchy (5 levels), leaves drawn from a
    truncated geometric distribution: a 5^qids lattice whose optimum lies inside it."""
    rng = np.random.default_rng(seed)
    p = 0.35 * 0.65 ** np.arange(16)
    leaves = [f"v{i}" for i in range(16)]
    levels = [leaves] + [[f"{i >> d}/{d}" for i in range(16)] for d in range(1, 4)] + [["*"] * 16]
    hierarchies = {f"q{j}": Hierarchy(levels, name=f"q{j}") for j in range(qids)}
    data = pd.DataFrame({f"q{j}": np.array(leaves)[rng.choice(16, size=rows, p=p / p.sum())]
                         for j in range(qids)})
    return data, hierarchies


@pytest.mark.parametrize("metric", ["loss", "precision"])
def test_prior_bound_never_exceeds_the_checked_bound(metric):
    """The bound known before a node is checked (Loss: from marginal counts; Precision: from
    the levels) is, on every node, at most the checked lower bound and the loss (up to the
    search's rounding slack)."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.engine.search import LevelSearch

    data, hierarchies = _skewed_table(3000, 4, seed=3)
    encoded = encode(data, Schema(hierarchies, (), (), (), "error"), cpu_backend())
    evaluator = Evaluator(encoded, [KAnonymity(5)], make_metric(metric), 0.05)
    lattice = Lattice(encoded.heights)
    stats = LatticeOracle(evaluator, lattice).evaluate_all()
    prior = evaluator.metric.prior_bound(evaluator.bottom)(stats.levels)
    slack = LevelSearch.BOUND_SLACK
    assert (prior <= stats.lower_bound + slack).all()
    anonymous = stats.anonymous
    assert (prior[anonymous] <= stats.information_loss[anonymous] + slack).all()
    assert np.ptp(prior) > 0.5  # a bound that says something


def test_top_down_level_search_checks_few_nodes_of_a_large_lattice():
    """On a 5^6-node lattice (k=5, 5 %, loss) the top-down level search -- greedy path,
    bounds known in advance, tagging below nodes that are not anonymous -- returns the
    exhaustive optimum after checking under a tenth of the nodes, fewer than Flash."""
    data, hierarchies = _skewed_table(4000, 6)
    fits = {s: Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                          metric="loss", search=s, backend="cpu", seed=0).fit(data)
            for s in ("exhaustive", "levels", "flash")}
    assert fits["levels"].transformation == fits["exhaustive"].transformation
    assert fits["levels"].information_loss == fits["exhaustive"].information_loss
    assert fits["levels"].search.nodes_evaluated < 0.1 * 5 ** 6
    assert fits["levels"].search.nodes_evaluated < fits["flash"].search.nodes_evaluated


def test_frequency_sets_concatenate_node_by_node():
    """``FrequencySet.concatenate`` keeps every node's entries and offsets, multi-node parts
    included."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import FrequencySet, Schema, encode
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.metrics import make_metric

    data, hierarchies = _skewed_table(500, 3)
    encoded = encode(data, Schema(hierarchies, (), (), (), "error"), cpu_backend())
    evaluator = Evaluator(encoded, [KAnonymity(2)], make_metric("loss"), 0.0)
    nodes = np.array([[1, 0, 0], [0, 2, 1], [3, 3, 3], [1, 1, 1]])
    _, a = evaluator.evaluate(nodes[:2], evaluator.bottom, np.zeros(2, np.int64))
    _, b = evaluator.evaluate(nodes[2:], evaluator.bottom, np.zeros(2, np.int64))
    both = FrequencySet.concatenate(np, [a, b])
    np.testing.assert_array_equal(both.levels, nodes)
    for i, (part, k) in enumerate([(a, 0), (a, 1), (b, 0), (b, 1)]):
        got, want = both.node(i), part.node(k)
        for name in ("codes", "sens", "count", "first", "host_ptr"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        np.testing.assert_array_equal(both.ptr[i:i + 2] - both.ptr[i], want.ptr)


def test_auto_search_is_levels_on_a_gpu_and_on_large_lattices_else_flash():
    """``auto``: levels on a GPU; on the CPU flash up to ARX's 100,000-node limit for an
    optimal search (ARX's node on ties), above it levels -- flash where it runs compiled
    (here k-anonymity, population uniqueness, the conditional prior; not two models of one
    kind); flash and levels both switch
    to the heuristic above ``OPTIMAL_SEARCH_LIMIT``."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.engine.search import ARX_OPTIMAL_LIMIT, FlashSearch, LevelSearch, make_search
    from gpuppdp.engine.search.heuristic import AUTO_HEURISTIC, OPTIMAL_SEARCH_LIMIT
    from gpuppdp.testing import strict_backend

    data, hierarchies = _table(0)
    schema = Schema(hierarchies, ["s"], (), (), "error")
    for backend, models, small, large in (
            (cpu_backend(), [KAnonymity(2)], FlashSearch, FlashSearch),
            (cpu_backend(), [KAnonymity(2), AverageReidentificationRisk(0.5)],
             FlashSearch, FlashSearch),
            (cpu_backend(), [KAnonymity(2), PopulationUniqueness(0.5, population_size=10**6)],
             FlashSearch, FlashSearch),
            (cpu_backend(), [KAnonymity(2), PrivacyLoss("s", 0.9, 3.0, prior="conditional",
                                                        prior_qids=[next(iter(hierarchies))])],
             FlashSearch, FlashSearch),
            (cpu_backend(), [KAnonymity(2), DistinctLDiversity("s", 2),
                             DistinctLDiversity("s", 3)],  # two of one kind: refused
             FlashSearch, LevelSearch),
            (strict_backend(), [KAnonymity(2)], LevelSearch, LevelSearch)):
        enc = encode(data, schema, backend, [m.sensitive_attribute for m in models
                                             if m.sensitive_attribute])
        ev = Evaluator(enc, models, make_metric("loss"), 0.1)
        assert isinstance(make_search("auto", ev), small)
        assert isinstance(make_search("auto", ev, lattice_size=ARX_OPTIMAL_LIMIT), small)
        assert isinstance(make_search("auto", ev, lattice_size=ARX_OPTIMAL_LIMIT + 1), large)
        for name in ("auto", "flash", "levels"):
            search = make_search(name, ev, lattice_size=OPTIMAL_SEARCH_LIMIT + 1)
            assert search.name == AUTO_HEURISTIC and "OPTIMAL_SEARCH_LIMIT" in search.note


@pytest.mark.parametrize("metric, models, census_search", [
    ("loss", lambda: [KAnonymity(2)], "levels"),
    ("loss", lambda: [KAnonymity(2), DistinctLDiversity("s", 2)], "levels"),
    ("precision", lambda: [KAnonymity(2)], "flash"),  # ties are common: ARX's node
    ("discernibility", lambda: [KAnonymity(2)], "flash"),  # no prior bound: bottom up
    ("loss", lambda: [EntropyLDiversity("s", 2)], "flash"),  # not monotone under suppression
])
def test_auto_search_at_census_scale_on_the_cpu(metric, models, census_search):
    """On the CPU, ``auto`` turns to the level search for tables of more than
    ``LEVELS_FROM_ROWS`` rows with the loss metric and monotone models (top down with
    tagging, ties all but impossible); flash otherwise."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.engine.search import LEVELS_FROM_ROWS, make_search

    data, hierarchies = _table(1)
    enc = encode(data, Schema(hierarchies, ["s"], (), (), "error"), cpu_backend(), ["s"])
    ev = Evaluator(enc, models(), make_metric(metric), 0.1)
    assert make_search("auto", ev).name == "flash"
    ev.encoded.n_rows = LEVELS_FROM_ROWS + 1  # the decision reads the row count only
    assert make_search("auto", ev).name == census_search


@pytest.mark.parametrize("seed", range(2))
def test_level_search_on_the_gpu_stand_in_matches_the_cpu(seed):
    """``search="auto"`` on the strict CuPy stand-in (the array-form kernels, CUDA kernels in
    Numba's simulator) runs the level search and finds the CPU's optimum."""
    from gpuppdp.testing import strict_backend

    data, hierarchies = _table(seed)

    def fit(search, backend):
        return Anonymizer(quasi_identifiers=hierarchies, sensitive=["s"],
                          models=[KAnonymity(2), DistinctLDiversity("s", 2)],
                          suppression_limit=0.1, search=search, backend=backend,
                          seed=0).fit(data)

    cpu, gpu = fit("levels", "cpu"), fit("auto", strict_backend())
    assert gpu.search.strategy == "levels"
    assert gpu.transformation == cpu.transformation
    assert gpu.information_loss == cpu.information_loss
    assert gpu.search.nodes_evaluated == cpu.search.nodes_evaluated


@pytest.mark.parametrize("backend_name", ["cpu", "strict"])
@pytest.mark.parametrize("batch_entries", [1, 60, 600, 10 ** 6])
def test_top_down_path_sources_under_a_small_batch_budget(backend_name, batch_entries):
    """The greedy path is rolled up in one batch when it fits ``batch_entries``, else node after
    node with only the highest path nodes kept as sources (the top alone, some, or all): each
    budget, on the CPU and on the strict CuPy stand-in, gives the exhaustive optimum."""
    from gpuppdp.backend import cpu_backend
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.engine.search import ExhaustiveSearch, LevelSearch
    from gpuppdp.testing import strict_backend

    data, hierarchies = _skewed_table(400, 4, seed=5)
    backend = cpu_backend() if backend_name == "cpu" else strict_backend()
    encoded = encode(data, Schema(hierarchies, (), (), (), "error"), backend)
    evaluator = Evaluator(encoded, [KAnonymity(4)], make_metric("loss"), 0.04)
    lattice = Lattice(encoded.heights)
    want = ExhaustiveSearch().run(LatticeOracle(evaluator, lattice))
    search = LevelSearch(utility_monotonic=False, privacy_monotonic=True)
    got = search.run(LatticeOracle(evaluator, lattice, batch_entries=batch_entries))
    assert got.optimum == want.optimum
    assert got.optimum_stats["information_loss"] == want.optimum_stats["information_loss"]
    assert got.nodes_evaluated < want.nodes_evaluated


@pytest.mark.parametrize("seed", range(8))
def test_top_down_level_search_equals_exhaustive_on_skewed_tables(seed):
    """Skewed tables with 4 or 5 QIDs of 5 levels (625 or 3,125 nodes), where the greedy path,
    the prior bound and the tagging all come into play: for random k, suppression limits and
    both metrics with a prior bound, the level search returns the exhaustive search's node,
    loss and statistics."""
    rng = np.random.default_rng(500 + seed)
    data, hierarchies = _skewed_table(int(rng.integers(300, 3000)), int(rng.integers(4, 6)),
                                      seed=seed)
    for metric in ("loss", "precision"):
        k, limit = int(rng.integers(2, 12)), float(rng.choice([0.0, 0.01, 0.05, 0.2]))
        fits = {}
        for search in ("exhaustive", "levels"):
            try:
                fits[search] = Anonymizer(quasi_identifiers=hierarchies, k=k,
                                          suppression_limit=limit, metric=metric,
                                          search=search, backend="cpu", seed=0).fit(data)
            except NoSolutionError:
                fits[search] = None
        want, got = fits["exhaustive"], fits["levels"]
        case = (seed, metric, k, limit)
        assert (want is None) == (got is None), case
        if want is not None:
            assert got.node == want.node, case
            assert got.information_loss == want.information_loss, case
            assert got.summary()["suppressed_records"] == want.summary()["suppressed_records"]
            assert got.search.nodes_evaluated < want.search.nodes_evaluated, case


@pytest.mark.parametrize("backend_name", ["cpu", "strict"])
def test_top_down_through_shared_predecessors(backend_name, monkeypatch):
    """Where a level's nodes share direct predecessors and the path's sets are much larger
    than the level's, the level rolls up from its shared predecessors, evaluated first: that
    happens here, on the CPU and on the strict CuPy stand-in, and the optimum, loss and
    statistics stay the exhaustive search's -- as they do with the predecessors never used."""
    from gpuppdp.engine.search import levels as search_module
    from gpuppdp.testing import strict_backend

    data, hierarchies = _skewed_table(1500, 6)

    def fit(search, backend="cpu"):
        return Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                          metric="loss", search=search, backend=backend, seed=0).fit(data)

    calls = []
    through = search_module._Walk._through_predecessors
    monkeypatch.setattr(search_module._Walk, "_through_predecessors",
                        lambda self, *args: calls.append(len(args[0])) or through(self, *args))
    want = fit("exhaustive")
    got = fit("levels", "cpu" if backend_name == "cpu" else strict_backend())
    assert calls and min(calls) >= search_module._Walk.MIN_NODES
    monkeypatch.setattr(search_module._Walk, "SHARING", float("inf"))  # never through them
    direct = fit("levels")
    for result in (got, direct):
        assert result.node == want.node
        assert result.information_loss == want.information_loss
        assert result.summary()["suppressed_records"] == want.summary()["suppressed_records"]


@pytest.mark.parametrize("models", ["k", "k+l"])
def test_a_batch_synchronizes_the_same_number_of_times_whatever_its_nodes(models):
    """Issue 16's "no per-node device-to-host syncs": evaluating a batch of nodes on the strict
    CuPy stand-in transfers as often for 64 nodes as for 8 (the stand-in counts every
    transfer: ``get``, Python scalars, ``bool``)."""
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.testing import device_to_host_count, strict_backend

    data, hierarchies = _skewed_table(2000, 4, seed=3)
    chosen = [KAnonymity(3)]
    sensitive = ()
    if models == "k+l":
        data = data.assign(s=np.arange(len(data)) % 5)
        chosen.append(DistinctLDiversity("s", 2))
        sensitive = ("s",)
    encoded = encode(data, Schema(hierarchies, sensitive, (), (), "error"), strict_backend(),
                     sensitive_attributes=sensitive)
    evaluator = Evaluator(encoded, chosen, make_metric("loss"), 0.05)
    nodes = np.array(list(itertools.product(range(3), repeat=4)), dtype=np.int64)[:64]
    counts = []
    for batch in (nodes[:8], nodes):
        before = device_to_host_count()
        stats, _ = evaluator.evaluate(batch, evaluator.bottom, np.zeros(len(batch), np.int64))
        counts.append(device_to_host_count() - before)
        assert len(stats) == len(batch)
    assert counts[0] == counts[1] > 0
