"""Risk-based privacy models: average re-identification risk, sample and population uniqueness.

* at every lattice node of small random tables, the engine's verdict and suppressed records
  equal a plain transcription of ARX 3.9.2's ``HashGroupifyDistribution`` and
  ``RiskBasedCriterion.enforce`` on pandas group sizes (the classes sorted by size and first
  appearance, the binary search over suppressed prefixes with its early abort);
* the exhaustive search and the default (Flash) search find the same optimum;
* the options' text forms, the descriptions and the errors naming bad parameters.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuppdp import Anonymizer
from gpuppdp.analysis.risk import pitman_uniques, snb_uniques, zayatz_uniques
from gpuppdp.backend import cpu_backend
from gpuppdp.engine.encoding import Schema, encode
from gpuppdp.engine.evaluate import Evaluator, LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.errors import InputError
from gpuppdp.models import (AverageReidentificationRisk, KAnonymity, PopulationUniqueness,
                            SampleUniqueness, from_description, from_spec, parse_spec)
from gpuppdp.models.risk import (_free_classes, _smaller_in_prefix, _sorted_sizes, _split_at,
                                 size_threshold)
from tests.test_models_ldiv_tclose import generalize, hierarchies_of, random_table


# ---------------------------------------------------------------------------------------
# ARX's enforcement, transcribed
# ---------------------------------------------------------------------------------------
def fulfilled(model, hist: dict) -> bool:
    """``isFulfilled`` of ARX's criterion on a histogram {class size: classes}."""
    records = sum(s * c for s, c in hist.items())
    classes = sum(hist.values())
    if isinstance(model, SampleUniqueness):
        return (hist.get(1, 0) / records if records else 0.0) <= model.t
    if records == 0:
        return True
    if isinstance(model, AverageReidentificationRisk):
        if not 1.0 / (records / classes) <= model.t:
            return False
        if model.highest_risk is None:
            return True
        smallest = size_threshold(model.highest_risk)
        fraction = 0.0
        for size in range(1, smallest):
            fraction += hist.get(size, 0) * size / records
        return fraction <= model.records_at_risk
    big = model.population_size
    counts = np.bincount(list(hist), weights=list(hist.values()))
    estimator = {"pitman": pitman_uniques, "zayatz": zayatz_uniques, "snb": snb_uniques}
    if hist.get(1, 0) == 0:
        share = 0.0
    elif model.model != "dankar":
        share = estimator[model.model](counts, big) / big
    elif records / big <= 0.1:  # ARX: Dankar's rule without Zayatz as a fallback
        share = pitman_uniques(counts, big) / big
        share = -1.0 if math.isnan(share) or share == 0 else share
    else:
        snb, zayatz = snb_uniques(counts, big), zayatz_uniques(counts, big)
        share = (min(snb, zayatz) if snb == snb and snb != 0 else zayatz) / big
    share = 0.0 if math.isnan(share) else share
    return 0.0 < share <= model.t or (share == 0.0 and hist.get(1, 0) == 0)


def arx_suppressed(model, sizes: list[int], base: int, limit: int) -> int:
    """Records suppressed at one node: ``base`` by the class-based models, then ARX's binary
    search over the prefixes of ``sizes`` (the remaining classes, sorted)."""
    hist: dict[int, int] = {}
    for s in sizes:
        hist[s] = hist.get(s, 0) + 1
    suppressed = [False] * len(sizes)
    total = base

    def set_suppressed(i, on):
        nonlocal total
        suppressed[i] = on
        hist[sizes[i]] = hist.get(sizes[i], 0) + (-1 if on else 1)
        if hist[sizes[i]] == 0:
            del hist[sizes[i]]
        total += sizes[i] if on else -sizes[i]

    def state():
        if fulfilled(model, hist):
            return "FULFILLED"
        return "ABORT" if total > limit else "NOT_FULFILLED"

    if fulfilled(model, hist) or not sizes:
        return total
    low, high = 0, len(sizes) - 1
    mid = (low + high) // 2
    for i in range(low, mid + 1):
        set_suppressed(i, True)
    st = "ABORT"
    while low <= high:
        st = state()
        if st == "ABORT":
            break
        if st == "FULFILLED":
            high = mid - 1
            mid = int((low + high) / 2)  # Java's division
            i = mid + 1
            while i < len(sizes) and suppressed[i]:
                set_suppressed(i, False)
                i += 1
        else:
            low = mid + 1
            mid = int((low + high) / 2)
            for i in range(low, mid + 1):
                set_suppressed(i, True)
    if st != "ABORT":
        if state() == "NOT_FULFILLED" and mid + 1 < len(sizes) and not suppressed[mid + 1]:
            set_suppressed(mid + 1, True)
    return total


def naive_node(data, levels, node, model, k, limit):
    """``(anonymous, suppressed)`` of one node, from pandas group sizes."""
    gen = generalize(data, levels, node)
    qids = list(levels)
    sizes = gen.groupby(qids, sort=False).size()  # first appearance
    star = np.all([sizes.index.get_level_values(q) == "*" for q in qids], axis=0) \
        if len(qids) > 1 else (sizes.index == "*")
    small = sizes.to_numpy() < k
    base = int(sizes.to_numpy()[small & ~star].sum())
    rest = sorted((int(s), i) for i, s in enumerate(sizes.to_numpy())
                  if not small[i] and not star[i])
    suppressed = arx_suppressed(model, [s for s, _ in rest], base, limit)
    return suppressed <= limit, suppressed


MODELS = [
    AverageReidentificationRisk(0.3),
    AverageReidentificationRisk(0.4, highest_risk=0.34, records_at_risk=0.2),
    SampleUniqueness(0.1),
    PopulationUniqueness(0.05, model="zayatz", population_size=400),
    PopulationUniqueness(0.05, model="dankar", population_size=100_000),
]
MODEL_IDS = ["average", "average-highest", "sample", "zayatz", "dankar"]


def check_every_node(backend, model, seed, k, supp, metric="precision"):
    data, levels = random_table(seed)
    data = data.drop(columns="s")
    enc = encode(data, Schema(hierarchies_of(levels)), backend)
    models = [model] + ([KAnonymity(k)] if k > 1 else [])
    evaluator = Evaluator(enc, models, make_metric(metric), supp)
    lattice = Lattice(enc.heights)
    stats = LatticeOracle(evaluator, lattice).evaluate_all()
    limit = math.floor(supp * len(data))
    for b, node in enumerate(stats.levels):
        anonymous, suppressed = naive_node(data, levels, node, model, k, limit)
        assert bool(stats.anonymous[b]) == anonymous, (node.tolist(), suppressed)
        if anonymous:
            assert int(stats.suppressed[b]) == suppressed, node.tolist()


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
@pytest.mark.parametrize("seed,k,supp", [(0, 1, 0.2), (1, 2, 0.3), (2, 1, 0.0), (5, 1, 0.5)])
def test_every_node_matches_arx_transcribed(model, seed, k, supp):
    check_every_node(cpu_backend(), model, seed, k, supp)


def test_every_node_on_each_backend(backend):
    """The array path (sort, prefix choice, '*' classes) on the strict CuPy stand-in too."""
    check_every_node(backend, MODELS[1], 1, 2, 0.3, metric="loss")


@pytest.mark.parametrize("model", MODELS[:4], ids=MODEL_IDS[:4])
@pytest.mark.parametrize("seed", [3, 4])
def test_exhaustive_and_flash_agree(model, seed):
    data, levels = random_table(seed)
    hier = hierarchies_of(levels)
    results = [Anonymizer(quasi_identifiers=hier, insensitive=["s"], models=[model],
                          suppression_limit=0.1, search=search, backend="cpu").fit(data)
               for search in ("exhaustive", "flash")]
    assert results[0].information_loss == results[1].information_loss
    assert results[0].transformation == results[1].transformation


# ---------------------------------------------------------------------------------------
# text forms and errors
# ---------------------------------------------------------------------------------------
def test_specs_build_the_models():
    assert parse_spec("--average-risk", "0.1,0.2,5%") == (0.1, 0.2, 0.05)
    assert parse_spec("--average-risk", "20%") == (0.2, None, None)
    assert parse_spec("--population-uniqueness", "0.01:pitman:usa") == \
        (0.01, "pitman", "usa", None)
    assert parse_spec("--population-uniqueness", "0.01:snb:1000000") == \
        (0.01, "snb", None, 1e6)
    assert parse_spec("--population-uniqueness", "0.01:dankar") == (0.01, "dankar", "usa", None)
    assert parse_spec("--sample-uniqueness", "5%") == 0.05
    model = from_spec("--average-risk", "0.1,0.2,0.05")
    assert (model.t, model.highest_risk, model.records_at_risk, model.smallest_size) == \
        (0.1, 0.2, 0.05, 5)
    model = from_spec("--population-uniqueness", "0.01:zayatz:germany")
    assert model.population_size == 80_767_000 and model.monotonic_with_generalization
    pitman = from_spec("--population-uniqueness", "0.01:pitman:500")
    assert not pitman.monotonic_with_generalization
    for model in MODELS + [PopulationUniqueness(0.01, region="USA")]:
        again = from_description(model.describe())
        assert repr(again) == repr(model) and again.describe() == model.describe()


@pytest.mark.parametrize("option,text,words", [
    ("--average-risk", "0.1,0.2", "T,HIGHEST,RECORDS_AT_RISK"),
    ("--population-uniqueness", "0.01:poisson:usa", "pitman, zayatz, snb, dankar"),
    ("--population-uniqueness", "x:pitman", "T:MODEL"),
    ("--sample-uniqueness", "many", "threshold"),
])
def test_bad_specs_say_what_is_expected(option, text, words):
    with pytest.raises(InputError, match=words):
        parse_spec(option, text)


@pytest.mark.parametrize("build,words", [
    (lambda: AverageReidentificationRisk(1.5), "t must be"),
    (lambda: AverageReidentificationRisk(0.1, highest_risk=0.2), "records_at_risk"),
    (lambda: AverageReidentificationRisk(0.1, highest_risk=0, records_at_risk=0.1),
     "highest_risk"),
    (lambda: SampleUniqueness(-0.1), "t must be"),
    (lambda: PopulationUniqueness(0.01, model="pitman"), "population_size=N or region"),
    (lambda: PopulationUniqueness(0.01, region="atlantis"), "region must be one of"),
    (lambda: PopulationUniqueness(0.01, model="chao", region="usa"), "model must be one of"),
    (lambda: PopulationUniqueness(0.01, population_size=0), "population_size must be"),
])
def test_bad_parameters_are_named(build, words):
    with pytest.raises(InputError, match=words):
        build()


def test_population_smaller_than_the_table_is_refused():
    data, levels = random_table(0)
    with pytest.raises(InputError, match="population_size must be at least the table's rows"):
        Anonymizer(quasi_identifiers=hierarchies_of(levels), insensitive=["s"],
                   models=[PopulationUniqueness(0.01, population_size=5)]).fit(data)


def test_size_threshold_is_arxs():
    # ParameterTranslation.getSizeThreshold: 1/r rounded down unless 1 % off the risk
    assert [size_threshold(r) for r in (0.5, 0.2, 0.1, 0.34, 0.33, 0.05, 1.0)] == \
        [2, 5, 10, 3, 4, 20, 1]


def test_command_line_average_risk_holds_in_the_release(capsys, tmp_path):
    from gpuppdp import datasets
    from tests.test_cli import QIDS, ROWS, anonymize, qi_args, run, suppressed, write_csv

    data, _ = datasets.adult()
    path = write_csv(data.loc[:ROWS - 1, QIDS + ["occupation", "salary-class"]],
                     tmp_path / "in.csv", ";")
    roles = ["--insensitive", "occupation", "--insensitive", "salary-class"]
    out, summary, _ = anonymize(capsys, tmp_path, path, "--average-risk", "0.2,0.5,10%",
                                roles=roles, k=1)
    assert summary["models"][-1] == {"model": "average-risk", "t": 0.2, "highest_risk": 0.5,
                                     "records_at_risk": 0.1}
    kept = out[~suppressed(out)]
    sizes = kept.groupby(QIDS).size()
    assert len(sizes) / len(kept) <= 0.2 and (sizes == 1).sum() / len(kept) <= 0.1
    assert int(suppressed(out).sum()) == summary["suppressed_records"] <= 0.05 * ROWS
    rc, _, stderr = run(capsys, ["anonymize", str(path), *qi_args(), *roles,
                                 "--sample-uniqueness", "0.1", "--average-risk", "0.2",
                                 "--output", str(tmp_path / "x.csv")])
    assert rc == 2 and "one risk-based model at a time" in stderr


@pytest.mark.parametrize("spread", [8, 10 ** 6])  # counting sort; merge sort (sizes far apart)
def test_free_classes_and_size_order_equal_a_naive_sort(spread):
    """The compiled bookkeeping of ``RiskModel.suppress`` against a plain reading of it: the
    free classes (not suppressed, not all ``*``, not empty) per node in first appearance, the
    records already suppressed, each chosen node's sizes sorted, and the classes below and at
    a node's last suppressed size."""
    rng = np.random.default_rng(spread)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 40, 12))]).astype(np.int64)
    c = int(ptr[-1])
    size = rng.integers(0, spread, c).astype(np.int64)
    size[rng.random(c) < 0.3] = 2  # ties, for the order of first appearance
    outlier, star = rng.random(c) < 0.2, rng.random(c) < 0.1
    classes, sizes, runs, base, start = _free_classes(outlier, star, size, ptr)
    want_classes, want_runs, want_base = [], [0], []
    for b in range(len(ptr) - 1):
        mine = [i for i in range(ptr[b], ptr[b + 1])
                if not outlier[i] and not star[i] and size[i] > 0]
        want_classes += mine
        want_runs.append(want_runs[-1] + len(mine))
        want_base.append(sum(int(size[i]) for i in range(ptr[b], ptr[b + 1])
                             if outlier[i] and not star[i]))
    assert classes.tolist() == want_classes and sizes.tolist() == size[want_classes].tolist()
    assert runs.tolist() == want_runs and base.tolist() == want_base
    assert start.tolist() == [0] + np.cumsum(sizes).tolist()
    nodes = np.array([b for b in range(len(ptr) - 1) if b % 3 != 1], dtype=np.int64)
    sorted_sizes, out_runs, sorted_start = _sorted_sizes(sizes, runs, nodes)
    want_sorted = [v for b in nodes for v in sorted(sizes[runs[b]:runs[b + 1]].tolist())]
    assert sorted_sizes.tolist() == want_sorted
    assert np.diff(out_runs).tolist() == [runs[b + 1] - runs[b] for b in nodes]
    assert sorted_start.tolist() == [0] + np.cumsum(sorted_sizes).tolist()
    prefix = np.minimum(np.arange(len(nodes)), np.diff(out_runs))
    last = np.array([sorted_sizes[out_runs[i] + p - 1] if p else 0 for i, p in enumerate(prefix)],
                    dtype=np.int64)
    smaller = _smaller_in_prefix(sorted_sizes, out_runs, prefix, last)
    assert smaller.tolist() == [sum(v < last[i] for v in sorted_sizes[out_runs[i]:out_runs[i] + p])
                                for i, p in enumerate(prefix)]
    equal = prefix - smaller
    keyed = np.arange(len(nodes)) % 2 == 0
    chosen, tied, tied_node = _split_at(classes, sizes, runs, nodes, last, equal, keyed)
    want_chosen, want_tied = [], []
    for i, b in enumerate(nodes):
        run = range(runs[b], runs[b + 1])
        at_last = [classes[e] for e in run if sizes[e] == last[i]]
        by_key = keyed[i] and 0 < equal[i] < len(at_last)
        want_chosen += [classes[e] for e in run if sizes[e] < last[i] or (
            sizes[e] == last[i] and not by_key and classes[e] in at_last[:equal[i]])]
        want_tied += [(c, i) for c in at_last] if by_key else []
    assert chosen.tolist() == want_chosen
    assert list(zip(tied.tolist(), tied_node.tolist())) == want_tied
