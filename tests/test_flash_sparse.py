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
from gpuppdp.models import DistinctLDiversity, EntropyLDiversity, KAnonymity

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


def test_auto_search_is_levels_on_a_gpu_and_flash_on_the_cpu():
    from gpuppdp.engine.evaluate import Evaluator
    from gpuppdp.engine.encoding import Schema, encode
    from gpuppdp.engine.metrics import make_metric
    from gpuppdp.engine.search import FlashSearch, LevelSearch, make_search
    from gpuppdp.backend import cpu_backend
    from gpuppdp.testing import strict_backend

    data, hierarchies = _table(0)
    schema = Schema(hierarchies, ["s"], (), (), "error")
    for backend, kind in ((cpu_backend(), FlashSearch), (strict_backend(), LevelSearch)):
        enc = encode(data, schema, backend)
        ev = Evaluator(enc, [KAnonymity(2)], make_metric("loss"), 0.1)
        assert isinstance(make_search("auto", ev), kind)


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
