"""k-map and delta-presence against a population table; several sensitive attributes at once.

* a worked example (hand-counted population classes);
* at every lattice node of small random tables, the rows the engine suppresses are those of the
  classes an independent pandas checker rejects;
* flash and exhaustive search agree (sound monotonicity flags);
* the strict CuPy stand-in returns what NumPy returns;
* models on two sensitive attributes suppress exactly the union of what each suppresses alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpuppdp import Anonymizer
from gpuppdp.anonymizer import NoSolutionError
from gpuppdp.backend import cpu_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.models import DistinctLDiversity, EntropyLDiversity, TCloseness
from gpuppdp.models.population import DeltaPresence, KMap
from tests.test_models_ldiv_tclose import generalize, hierarchies_of, random_table, same_optimum


def population_and_sample(seed):
    """A random population (table of random_table) and a random sample of it."""
    population, levels = random_table(seed)
    rng = np.random.default_rng(seed)
    keep = rng.random(len(population)) < rng.uniform(0.3, 0.8)
    keep[rng.integers(len(population))] = True
    return population, population[keep].reset_index(drop=True), levels


# ---------------------------------------------------------------------------------------
# worked example
# ---------------------------------------------------------------------------------------
LEVELS = {"zip": [["13053", "13068", "14850", "14853"], ["130**", "130**", "148**", "148**"],
                  ["*"] * 4]}
POPULATION = pd.DataFrame({"zip": ["13053"] * 3 + ["13068"] * 5 + ["14850"] * 2 + ["14853"] * 2})
SAMPLE = pd.DataFrame({"zip": ["13053", "13068", "13068", "14850", "14850"]})


def bound(model, backend):
    enc = encode(SAMPLE, Schema(hierarchies_of(LEVELS)), backend)
    return Evaluator(enc, [model], make_metric("loss"), 1.0)


@pytest.mark.parametrize("node,want", [
    (0, {"13053": (1, 3), "13068": (2, 5), "14850": (2, 2)}),
    (1, {"130**": (3, 8), "148**": (2, 4)}),
    (2, {"*": (5, 12)}),
])
def test_worked_example(backend, node, want):
    """Sample counts against population counts per class, by hand."""
    evaluator = bound(DeltaPresence(0.3, 0.8, population=POPULATION), backend)
    _, fs = evaluator.evaluate(np.array([[node]]), evaluator.bottom, np.array([0]))
    classes = evaluator._classes(fs)
    model = evaluator.models[0]
    hierarchy = evaluator.encoded.hierarchies[0]
    names = hierarchy.labels(node)[backend.to_host(classes.codes[:, 0]).astype(int)]
    sizes = backend.to_host(model.population_sizes(classes))
    got = {str(n): (int(s), int(p)) for n, s, p in
           zip(names, backend.to_host(classes.size), sizes)}
    assert got == want
    deltas = backend.to_host(model.deltas(classes))
    fails = backend.to_host(model.class_fails(classes))
    np.testing.assert_allclose(deltas, [s / p for s, p in got.values()])
    assert fails.tolist() == [not 0.3 <= s / p <= 0.8 for s, p in got.values()]


def test_k_map_worked_example(backend):
    evaluator = bound(KMap(4, population=POPULATION), backend)
    stats, _ = evaluator.evaluate(np.array([[0], [1], [2]]), evaluator.bottom,
                                  np.array([0, 0, 0]))
    # level 0: populations 3, 5, 2 -> the classes of 13053 (1 record) and 14850 (2) fail
    assert stats.suppressed.tolist() == [3, 0, 0]


def test_anonymizer_with_population_models():
    result = Anonymizer(quasi_identifiers=hierarchies_of(LEVELS),
                        models=[KMap(4, population=POPULATION),
                                DeltaPresence(0.2, 0.7, population=POPULATION)],
                        backend="cpu", seed=0).fit(SAMPLE)
    assert result.transformation == {"zip": 1}     # 3/8 and 2/4 are in [0.2, 0.7]
    assert result.models[0] == {"model": "k-map", "k": 4, "population_rows": 12}
    assert result.models[1]["model"] == "delta-presence"


def test_population_errors():
    with pytest.raises(TypeError, match="population must be a pandas DataFrame"):
        KMap(2, population=[1, 2])
    with pytest.raises(ValueError, match="population: the table is empty"):
        KMap(2, population=POPULATION.iloc[:0])
    with pytest.raises(ValueError, match="delta_min must be at most delta_max"):
        DeltaPresence(0.6, 0.5, population=POPULATION)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        KMap(0, population=POPULATION)
    with pytest.raises(ValueError, match=r"population lacks quasi-identifier column\(s\) 'zip'"):
        bound(KMap(2, population=pd.DataFrame({"x": [1]})), cpu_backend())
    with pytest.raises(ValueError, match="not a sample of the population: 2 record"):
        bound(KMap(2, population=POPULATION.drop(index=[3, 4, 5, 6])), cpu_backend())
    with pytest.raises(ValueError, match="population column 'zip'.*'99999'"):
        bound(KMap(2, population=pd.concat([POPULATION, pd.DataFrame({"zip": ["99999"]})])),
              cpu_backend())


# ---------------------------------------------------------------------------------------
# naive checker at every node of random tables
# ---------------------------------------------------------------------------------------
def naive_row_fails(kind, params, sample, population, levels, node):
    qids = list(levels)
    gen_s = generalize(sample, levels, node)
    gen_p = generalize(population, levels, node)
    pop_counts = gen_p.value_counts(subset=qids)
    fails = np.zeros(len(sample), dtype=bool)
    for key, rows in gen_s.groupby(qids, sort=False).groups.items():
        key = key if isinstance(key, tuple) else (key,)
        n_pop = int(pop_counts[key])
        n = len(rows)
        bad = n_pop < params[0] if kind == "kmap" else not params[0] <= n / n_pop <= params[1]
        fails[np.asarray(rows)] = bad
    return fails


def make(kind, params, population):
    if kind == "kmap":
        return KMap(params[0], population=population)
    return DeltaPresence(*params, population=population)


PARAMS = {"kmap": [(2,), (3,), (5,)], "delta": [(0.2, 0.8), (0.0, 0.5), (0.4, 1.0)]}


@pytest.mark.parametrize("kind", list(PARAMS))
@pytest.mark.parametrize("seed", range(3))
def test_row_verdicts_equal_naive_checker(kind, seed):
    population, sample, levels = population_and_sample(seed)
    params = PARAMS[kind][seed]
    enc = encode(sample, Schema(hierarchies_of(levels), others="insensitive"), cpu_backend())
    evaluator = Evaluator(enc, [make(kind, params, population)], make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    for node in lattice.levels_of(np.arange(lattice.size)):
        want = naive_row_fails(kind, params, sample, population, levels, node)
        got = cpu_backend().to_host(evaluator.row_outliers(node)[0])
        np.testing.assert_array_equal(got, want, err_msg=f"{kind} {params} {node.tolist()}")


def _fit(data, levels, models, limit, search, **kw):
    try:
        return Anonymizer(quasi_identifiers=hierarchies_of(levels), models=models,
                          suppression_limit=limit, search=search, backend="cpu", seed=0,
                          **kw).fit(data)
    except NoSolutionError:
        return None


@pytest.mark.parametrize("kind", list(PARAMS))
@pytest.mark.parametrize("limit", [0.0, 0.2])
def test_flash_equals_exhaustive(kind, limit):
    solved = 0
    for seed in range(3):
        population, sample, levels = population_and_sample(100 + seed)
        params = PARAMS[kind][seed]
        solved += same_optimum(
            lambda search: _fit(sample, levels, [make(kind, params, population)], limit,
                                search, others="insensitive"), (seed, params))
    assert solved >= 1


@pytest.mark.parametrize("kind", list(PARAMS))
def test_statistics_equal_on_every_backend(backend, kind):
    population, sample, levels = population_and_sample(7)
    params = PARAMS[kind][1]
    out = []
    for be in (cpu_backend(), backend):
        enc = encode(sample, Schema(hierarchies_of(levels), others="insensitive"), be)
        evaluator = Evaluator(enc, [make(kind, params, population)], make_metric("loss"), 0.0)
        lattice = Lattice(enc.heights)
        levels_all = lattice.levels_of(np.arange(lattice.size))
        stats, _ = evaluator.evaluate(levels_all, evaluator.bottom,
                                      np.zeros(len(levels_all), dtype=np.int64))
        out.append(stats.suppressed)
    np.testing.assert_array_equal(out[0], out[1])


# ---------------------------------------------------------------------------------------
# several sensitive attributes
# ---------------------------------------------------------------------------------------
def two_sensitive(seed):
    data, levels = random_table(seed)
    rng = np.random.default_rng(seed)
    data["t"] = rng.choice(["x", "y", "z"], size=len(data), p=[0.5, 0.3, 0.2])
    return data, levels


def _outliers(data, levels, models, backend):
    enc = encode(data, Schema(hierarchies_of(levels), sensitive=["s", "t"]), backend,
                 sorted({m.sensitive_attribute for m in models}))
    evaluator = Evaluator(enc, models, make_metric("loss"), 0.0)
    lattice = Lattice(enc.heights)
    return [backend.to_host(evaluator.row_outliers(node)[0])
            for node in lattice.levels_of(np.arange(lattice.size))]


@pytest.mark.parametrize("seed", range(4))
def test_two_sensitive_attributes_suppress_the_union(backend, seed):
    data, levels = two_sensitive(seed)

    def models():
        return [DistinctLDiversity("s", 2), EntropyLDiversity("t", 1.5),
                TCloseness("t", 0.3, "equal")]

    both = _outliers(data, levels, models(), backend)
    alone_s = _outliers(data, levels, models()[:1], cpu_backend())
    alone_t = _outliers(data, levels, models()[1:], cpu_backend())
    for b, s, t in zip(both, alone_s, alone_t):
        np.testing.assert_array_equal(b, s | t)


def test_anonymizer_with_two_sensitive_attributes():
    data, levels = two_sensitive(11)
    result = Anonymizer(quasi_identifiers=hierarchies_of(levels), sensitive=["s", "t"],
                        models=[DistinctLDiversity("s", 2), DistinctLDiversity("t", 2)],
                        suppression_limit=0.5, backend="cpu", seed=0).fit(data)
    released = result.released
    kept = released[released[list(levels)].ne("*").any(axis=1)]
    for column in ("s", "t"):
        assert kept.groupby(list(levels), observed=True)[column].nunique().min() >= 2
