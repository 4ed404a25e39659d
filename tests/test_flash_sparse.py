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
