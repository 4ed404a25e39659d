"""Flash compiled: ARX's Flash traversal and node check in one Numba call (the kernels of
:mod:`.flash_kernels` and :mod:`.flash_classes`); this module decides which problems it runs
(:func:`compiled_flash_supports`), lays out its arrays and reads its records back.

:class:`~gpuppdp.engine.search.flash.FlashSearch` walks the lattice in Python and asks a
:class:`~gpuppdp.engine.evaluate.LatticeOracle` about one node at a time, with interpreter work
per checked node comparable to ARX's whole check on small tables.  Here the same traversal
(Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012, as ARX 3.9.2 runs it) and the node check run
in one compiled call; Python runs once per search.

It covers the common case: models whose :meth:`~gpuppdp.core.model.PrivacyModel.compiled_check`
it judges (k-anonymity, l-diversity -- distinct, entropy, recursive (c, l) --, t-closeness
with the equal, ordered or hierarchical distance, (alpha, k)-anonymity, beta-likeness,
delta-disclosure privacy and the privacy-loss model, one of each at most, on one sensitive
attribute carried with its own codes, with or without a minimal class size, and k-map and
delta-presence (Sweeney 2002; Nergiz, Atzori & Clifton 2007) on one population table:
:func:`_bottom_set`; or k-anonymity on QID subsets and LKC-privacy without its confidence
bound (Mohammed, Fung, Hung & Lee 2009), without a sensitive attribute or a population:
:func:`~.flash_classes.peel_groups`; with its confidence bound too), the risk-based models
(average risk, sample and population uniqueness: :mod:`.flash_risk`), the loss, precision,
discernibility (and its monotonic form), AECS, height, ambiguity and non-uniform entropy
(its monotonic and normalized forms too) metrics (with any gs-factor and attribute weights
they take) and KL divergence (deferred: it has no bound, so the walk reads no loss, and the
anonymous checked nodes' divergences come after it, :func:`_deferred_optimum`), a CPU
backend, a frequency set of at most :data:`MAX_BOTTOM_ENTRIES` entries and a lattice of at
most :data:`MAX_LATTICE` nodes (node properties are arrays the size of the lattice here: one
byte per direction and property set, as ARX's solution space stores them for small lattices).
Anything else runs the Python traversal, which gives the same optimum and checked nodes.

A check stops early, the node not anonymous, once it has more classes than an anonymous node
can have (:func:`class_limit`: k-anonymity judged alone, the loss or precision): most checks
of a search on a large lattice are of such nodes, near the bottom.  It then caches no
frequency set and records -1 for the classes, suppressed records and entries; ARX prunes with
a checked node's lower bound, and the stopped node's is the loss's prior bound
(:meth:`~gpuppdp.engine.metrics.Loss.prior_bound`: the same sums added in another order), which
decides every comparison farther than :data:`~.flash_kernels.BOUND_SLACK` from it, and else
the search runs again with every check complete (:func:`~.flash_kernels._no_better`).  Checked
nodes, optimum and loss are those of complete checks (tests: every reference case and random
tables against the Python traversal).
"""

from __future__ import annotations

import inspect

import numba
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ...kernels import cached_signatures, common_groups, small_pages
from ...kernels.aot import attached, attached_forms
from ...kernels.groupby import space_of
from ...kernels.grouping import NO_GROUP_LIMIT, ROLLUP_DENSE_FLOOR, ROLLUP_DENSE_RATIO
from ...kernels.segsum import _one_node
from ...kernels.uniqueness import estimator_work
from ..evaluate import CPU_WALK_BATCH_ENTRIES, NodeStats
from ..metrics import METRICS, Metric
from .flash_classes import (
    LKC_C,
    NOT_ASKED,
    PARAMETER_SLOTS,
    POPULATION_SHIFT,
    PRIOR_COLUMNS,
    RISK_POPULATION_T,
    SHARES,
    VALUE_BLOCKS,
    judge_classes,
)
from .flash_kernels import _CLASSES_ARGUMENT, _CODES_ARGUMENT, _FLASH_PARAMETERS, _flash
from .flash_layout import (
    AMBIGUOUS,
    ARENA_END,
    CACHED,
    CHECKED_NODES,
    DEFERRED,
    ENTROPY,
    ENTROPY_MONOTONIC,
    ENTROPY_NORMALIZED,
    FROM_BOTTOM,
    G_FACTOR,
    HEIGHT,
    MAX_CLASSES,
    NEXT_SLOT,
    OK,
    OPTIMUM,
    S_FACTOR,
    STATUS,
    UNSURE,
    WEIGHT,
    WORK_SIZE,
)
from .flash_risk import RISK_WORK_ROWS

__all__ = ["compiled_flash_supports", "compiled_flash_refusal", "run", "class_limit",
           "forms_classes"]

#: largest lattice searched here (per node: properties 4 bytes, bounds 16, keys 24, slot 8,
#: the cone marking's scratch 4 (q + 2))
MAX_LATTICE = 1 << 22
#: largest bottom frequency set: above it the batched roll-up's threads and partitions pay off
MAX_BOTTOM_ENTRIES = 1 << 18
#: frequency-set entries cached for roll-ups (as :class:`LatticeOracle`'s default), at least
#: this many bottom sets' worth; when full, every set but the bottom's is dropped
CACHE_ENTRIES, CACHE_BOTTOMS = 20_000_000, 64
#: the arena of the last search is kept for the next of its shape when it takes at most this
#: many bytes: a fresh one costs a page fault per page the search first writes (14 % of 8-QID
#: Adult's search with k = 5 and 5 % suppression); one search at a time takes it
ARENA_KEPT_BYTES = 64 << 20
_ARENA: dict = {}
#: nodes the work arrays (checked nodes, candidates, priority queue) first hold; doubled and
#: the search run again when they run full
FIRST_CAPACITY = 1 << 14

#: the metrics the compiled checks compute (their codes there: :mod:`.flash_kernels`)
METRIC_KINDS = {"loss": 0, "precision": 1, "discernibility": 2, "discernibility-monotonic": 3,
                "aecs": 4, "height": 5, "ambiguity": 6, "entropy": int(ENTROPY),
                "entropy-monotonic": int(ENTROPY_MONOTONIC),
                "normalized-entropy": int(ENTROPY_NORMALIZED), "kl": int(DEFERRED)}
#: largest table of LKC-privacy's records per (group, sensitive value) (8 bytes each)
MAX_LKC_VALUES = 1 << 24
#: models judged against a population table (its frequency set joins the sample's)
POPULATION_KINDS = ("k-map", "delta-presence")
#: risk-based models (their suppression: :mod:`.flash_risk`)
RISK_KINDS = ("average-risk", "sample-uniqueness", "population-uniqueness")
#: models judging the sample's classes by their sizes alone, without a sensitive attribute
SAMPLE_KINDS = ("size", "subsets", *POPULATION_KINDS, *RISK_KINDS)


def compiled_flash_refusal(models, metric=None, *, evaluator=None,
                           lattice_size: int | None = None) -> str | None:
    """Why the compiled Flash cannot search a problem (``None``: it can), the one rule the
    search's choice and the command line's warm-up follow.

    ``models``: privacy models or anything with their ``compiled_kind`` and
    ``sensitive_attribute`` (the command line's parsed model options); ``metric``: a
    :class:`~gpuppdp.engine.metrics.Metric` or its name; ``evaluator`` (with
    ``lattice_size``): the problem as the search sees it (backend, table, sensitive attribute
    carried, lattice), left out where only the models and the metric are known."""
    kinds = [m.compiled_kind for m in models]
    if None in kinds:
        return f"{models[kinds.index(None)]!r} is judged in Python only"
    judged = [k for k in kinds if k != "size"]
    if len(set(judged)) != len(judged):
        return "two models of one kind"
    attributes = {m.sensitive_attribute for m, k in zip(models, kinds)
                  if k not in SAMPLE_KINDS}
    if len(attributes) > 1:
        return "models on several sensitive attributes"
    if len({id(getattr(m, "population", None)) for m, k in zip(models, kinds)
            if k in POPULATION_KINDS}) > 1:
        return "models on several population tables"
    if "subsets" in kinds and (attributes or set(kinds) & set(POPULATION_KINDS)):
        return "k-anonymity on QID subsets with a sensitive attribute or a population"
    if set(kinds) & set(RISK_KINDS) and set(kinds) & set(POPULATION_KINDS):
        return "a risk-based model with a population"
    if "lkc" in kinds and ("subsets" in kinds or set(kinds) & set(POPULATION_KINDS)):
        return "LKC-privacy's confidence bound with QID subsets or a population"
    if set(kinds) & set(POPULATION_KINDS) and \
            any(getattr(m, "prior", None) == "conditional" for m in models):
        return "the privacy loss's conditional prior with a population"
    if metric is not None:
        name = metric if isinstance(metric, str) else metric.name
        if name not in METRIC_KINDS or (isinstance(metric, Metric) and
                                        type(metric) is not METRICS[name]):
            return f"the {name} metric"
        if getattr(metric, "_aggregated", None):
            return f"the {name} metric with a microaggregated attribute"
        if set(kinds) & set(RISK_KINDS) and getattr(metric, "attribute_weights", None):
            # (the records a risk-based model suppresses first are ranked unweighted here)
            return "a risk-based model with attribute weights"
    return None if evaluator is None else _problem_refusal(evaluator, lattice_size, attributes)


def _problem_refusal(evaluator, lattice_size: int | None, attributes: set) -> str | None:
    """The part of :func:`compiled_flash_refusal` that needs the evaluator."""
    if evaluator.backend.is_gpu or evaluator.backend.kernels != "cpu":
        return "not the CPU backend"
    encoded = evaluator.encoded
    if evaluator.carries_sensitive:
        names = list(encoded.sensitive)
        if len(names) != 1 or encoded.sensitive[names[0]].from_carried is not None \
                or attributes != {names[0]}:
            return "the sensitive attributes carried"
    elif attributes:
        return "no sensitive attribute carried"
    if lattice_size is None or lattice_size > MAX_LATTICE:
        return f"a lattice of more than {MAX_LATTICE} nodes"
    population = _population(evaluator)
    if population is not None and int(population[1].sum()) >> (63 - POPULATION_SHIFT):
        return f"a population of 2^{63 - POPULATION_SHIFT} records or more"
    entries = int(evaluator.bottom.host_ptr[-1])  # the search's bottom set (:func:`_bottom_set`)
    if population is not None:
        entries = population[0].shape[0] + entries * evaluator.carries_sensitive
    if entries > MAX_BOTTOM_ENTRIES:
        return f"a bottom frequency set of more than {MAX_BOTTOM_ENTRIES} entries"
    if any(m.compiled_kind == "lkc" for m in evaluator.models) and \
            (entries + 1) * encoded.n_sens > MAX_LKC_VALUES:
        return f"LKC-privacy's value counts of more than {MAX_LKC_VALUES} entries"
    radix = encoded.node_radix(np.zeros((1, len(encoded.qi_names)), np.int64))[0]
    radix[-1] += evaluator.carries_sensitive and population is not None  # (its entries' code)
    if space_of(radix) < 0:
        return "a code space beyond int64"
    return None


def compiled_flash_supports(models, metric=None, *, evaluator=None,
                            lattice_size: int | None = None) -> bool:
    """Whether the compiled Flash searches the problem (:func:`compiled_flash_refusal` gives
    none)."""
    return compiled_flash_refusal(models, metric, evaluator=evaluator,
                                  lattice_size=lattice_size) is None


def run(search, oracle) -> tuple[int | None, int, NodeStats, dict | None] | None:
    """Run ``search`` (a set-up :class:`~.flash.FlashSearch`) compiled on ``oracle``'s
    evaluator: ``(optimum id or None, checked nodes, stats of the checked nodes by id, the
    optimum's stats as a row or None)``, or None when a class's verdict was too close to call
    here (an entropy loss within rounding of the privacy loss's alpha:
    :func:`~.flash_classes.losses_fail`), for the Python traversal to decide."""
    ev, lat = oracle.evaluator, oracle.lattice
    population = _population(ev)
    bottom = _bottom_set(ev, population)
    metric, n0 = ev.metric, bottom[1].shape[0]
    limit = class_limit(ev)
    keys = search.key_table
    phases = np.array([search.binary is not None, *_phase(search.binary),
                       search.linear is not None, *_phase(search.linear)], np.int64)
    cfg = np.array([search.predictive_anon, search.has_k, search.pruning,
                    search.bound is not None, search.utility_full, n0, ev.min_class_size or 0,
                    ev.max_suppressed, ev.encoded.n_rows, METRIC_KINDS[metric.name],
                    ev.encoded.n_sens + (ev.carries_sensitive and population is not None),
                    NO_GROUP_LIMIT if limit is None else limit,
                    _pack_bits(lat)], np.int64)
    inputs = (np.stack([lat.max_levels, lat.strides]).astype(np.int64), keys, phases, cfg,
              metric_terms(metric))
    parameters, stars = _model_parameters(ev)
    with small_pages():  # the arrays the compiled search works in
        work, rec_int, rec_float, slot_levels = _search(
            ev, lat, bottom, inputs, _metric_tables(ev, lat, limit), parameters, stars)
    if work[STATUS] == UNSURE:
        return None
    checked, opt = int(work[CHECKED_NODES]), int(work[OPTIMUM])
    oracle.evaluations += checked
    # record r's node's levels are its slot's, rec_int[r, 7]
    levels = slot_levels[rec_int[:checked, 7], :lat.n_attributes]
    if METRIC_KINDS[metric.name] == DEFERRED:
        opt = _deferred_optimum(oracle, rec_int[:checked], rec_float[:checked], levels)
    stats, ids = _stats(ev, rec_int[:checked], rec_float[:checked], levels)
    if opt < 0:
        return None, checked, stats, None
    return opt, checked, stats, stats.row(int(np.searchsorted(ids, opt)))


def _deferred_optimum(oracle, rec_int: np.ndarray, rec_float: np.ndarray,
                      levels: np.ndarray) -> int:
    """A deferred metric's (:data:`~.flash_layout.DEFERRED`: KL divergence) losses of the
    anonymous checked nodes (records in check order, their ``levels``) into ``rec_float``,
    evaluated after the search by the batched evaluator, each rolled up from one of them below
    it where it can (:meth:`~gpuppdp.engine.evaluate.LatticeOracle.evaluate_chained`, in the
    CPU walk's batches, :data:`~gpuppdp.engine.evaluate.CPU_WALK_BATCH_ENTRIES`) -- the metric
    gives no lower bound, so the traversal reads none -- and the optimum by ARX's
    ``trackOptimum``: the smallest loss, then the lowest height, then the first checked (-1:
    no anonymous node).  (The metric's value does not depend on the order of a node's
    classes, which the roll-up's source sets.)"""
    anonymous = np.flatnonzero(rec_int[:, 1] > 0)
    if anonymous.shape[0] == 0:
        return -1
    stats = oracle.evaluate_chained(levels[anonymous], CPU_WALK_BATCH_ENTRIES, bounds=False)
    assert stats.anonymous.all()  # (the same verdicts as the search's checks)
    rec_float[anonymous, 0] = stats.information_loss
    best = np.lexsort((anonymous, levels[anonymous].sum(axis=1), stats.information_loss))[0]
    return int(rec_int[anonymous[best], 0])


def _pack_bits(lat) -> int:
    """Bits of a level's field in the cache scan's packed levels: the largest level's, and a
    guard bit."""
    return int(lat.max_levels.max(initial=0)).bit_length() + 1


def _pack_words(lat) -> int:
    """Words of the packed levels: 63 // :func:`_pack_bits` fields each."""
    per = 63 // _pack_bits(lat)
    return -(-lat.n_attributes // per)


def metric_terms(metric) -> np.ndarray:
    """The bound ``metric``'s terms as the compiled checks read them (:data:`~.flash_layout.
    HEIGHT`, :data:`~.flash_layout.WEIGHT`, :data:`~.flash_layout.G_FACTOR`,
    :data:`~.flash_layout.S_FACTOR` rows; (4, q))."""
    q = len(metric.heights)
    terms = np.empty((4, q))
    terms[HEIGHT] = metric.heights
    terms[WEIGHT] = metric.weights
    terms[G_FACTOR] = metric.g_factor
    terms[S_FACTOR] = metric.s_factor
    return terms


def _metric_tables(ev, lat, limit: int | None) -> tuple:
    """``(level_radix, share, share_off, loss_table)``: each attribute's radix per level and
    the loss's shares, offsets and table (each attribute's smallest and largest sum, then,
    for checks that may stop early, its prior-bound factors); ambiguity's shares (the loss's)
    and its table (each attribute's domain size); the entropy metrics' scratch of value counts
    in the shares' place and their table (:func:`_entropy_table`); zeros for other
    metrics."""
    metric, q = ev.metric, lat.n_attributes
    hmax = int(lat.max_levels.max(initial=0))
    # (q + 1, hmax + 1): each attribute's radix at level L (its top past its height), then
    # the sensitive attribute's
    level_radix = ev.encoded.node_radix(np.minimum(np.arange(hmax + 1)[:, None],
                                                   lat.max_levels[None, :])).T.copy()
    if metric.name == "ambiguity":
        return level_radix, metric._share, metric._share_off, metric._domain.reshape(1, q)
    if METRIC_KINDS.get(metric.name, -1) >= ENTROPY:
        counts = np.zeros(int(level_radix[:q].max(initial=1)))
        return (level_radix, counts, np.zeros((q, hmax + 1), np.int64),
                _entropy_table(metric, level_radix[:q]))
    if metric.name != "loss":
        return level_radix, np.zeros(1), np.zeros((q, hmax + 1), np.int64), np.zeros((2, q))
    factors = metric.prior_factors(ev.bottom).T if limit is not None else \
        np.zeros((hmax + 1, q))
    loss_table = np.concatenate([np.stack([metric._minimum, metric._maximum]), factors])
    return level_radix, metric._share, metric._share_off, np.ascontiguousarray(loss_table)


def _entropy_table(metric, level_radix: np.ndarray) -> np.ndarray:
    """The entropy metrics' table (2 (hmax + 1) + 1, q) (:func:`~.flash_record._entropy_of`):
    each attribute's upper value (normalized entropy's divisor; else 1), then per level its
    generalization part (:class:`~gpuppdp.engine.metric_entropy.Entropy`'s, before the
    gs-factor), then per level its radix (``level_radix`` (q, hmax + 1)); C-ordered, as the
    search's forms compiled ahead of time take it (a concatenation of transposes is not)."""
    upper = getattr(metric, "_upper", np.ones(level_radix.shape[0]))
    assert metric._raw.shape == level_radix.shape
    return np.ascontiguousarray(np.concatenate([upper[None, :], metric._raw.T, level_radix.T]),
                                dtype=np.float64)


def _model_parameters(ev) -> tuple[tuple, tuple | None]:
    """``((params, tree, value_counts, subsets), stars)``: the parameters of
    :func:`~.flash_classes.judge_classes`, the QID subsets of
    :func:`~.flash_classes.peel_groups` and a risk-based model's ``(star_off, stars)``
    (:func:`~.flash_risk.suppress_by_risk`; None without one) from the evaluator's models'
    :meth:`~gpuppdp.core.model.PrivacyModel.compiled_check`."""
    m = ev.encoded.n_sens
    params = np.zeros(SHARES + len(VALUE_BLOCKS) * m)
    params[list(NOT_ASKED)] = -1.0
    arrays = {"tree": np.zeros(1, np.int64), "value_counts": np.zeros(1, np.int64)}
    subsets = np.zeros(1, np.int64)  # (:func:`~.flash_classes.peel_groups`'s layout)
    stars = None
    for model in ev.models:
        check = model.compiled_check()
        for name, value in check.numbers.items():
            params[PARAMETER_SLOTS[check.kind, name]] = value
        for name, block in VALUE_BLOCKS.items():
            if name in check.arrays:
                params[SHARES + block * m:SHARES + (block + 1) * m] = check.arrays[name]
        if "order" in check.arrays:  # the ordered distance's order takes the tree's place
            arrays["tree"] = check.arrays["order"]
        subsets = check.arrays.get("subsets", subsets)  # (one such model at most)
        if "stars" in check.arrays:  # (one risk-based model at most)
            stars = check.arrays["star_off"], check.arrays["stars"]
        arrays.update((k, v) for k, v in check.arrays.items() if k in arrays)
    return (params, arrays["tree"].astype(np.int64), arrays["value_counts"].astype(np.int64),
            subsets.astype(np.int64)), stars


def _population(ev) -> tuple[np.ndarray, np.ndarray] | None:
    """The population's frequency set at the leaves ``(codes, count)`` of the evaluator's
    k-map or delta-presence model (one table for both: :func:`compiled_flash_refusal`), or
    None."""
    for model in ev.models:
        if model.compiled_kind in POPULATION_KINDS:
            arrays = model.compiled_check().arrays
            return arrays["population_codes"], arrays["population_count"]
    return None


def _bottom_set(ev, population: tuple | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The search's bottom frequency set ``(codes, count, sens)``: the sample's, or with a
    ``population`` (:func:`_population`) the union of both sets, the sample's entries first and in
    their order, each count the sample's and the population's records packed
    (:func:`~.flash_classes.judge_sample_classes`): without a sensitive attribute, then the
    population's other QID combinations; with one, then every combination of the population
    on its own, its sensitive code one past the attribute's values
    (:func:`~.flash_classes.judge_classes`).  The population holds every combination of the
    sample (checked when its model is bound)."""
    bottom = ev.bottom
    codes, count, sens = bottom.codes, bottom.count, bottom.sens
    if population is None:
        return codes, count, sens
    pop_codes, pop_count = population
    if ev.carries_sensitive:  # each population entry past the sensitive attribute's values
        return (np.concatenate([codes, pop_codes.astype(codes.dtype)]),
                np.concatenate([count, pop_count << POPULATION_SHIFT]),
                np.concatenate([sens, np.full(pop_count.shape[0], ev.encoded.n_sens,
                                              sens.dtype)]))
    group_s, group_p, n_groups = common_groups(
        ev.backend, np.zeros(codes.shape[0], np.int64), codes,
        np.zeros(pop_codes.shape[0], np.int64), pop_codes)
    in_population = np.zeros(n_groups, np.int64)
    in_population[group_p] = pop_count
    in_sample = np.zeros(n_groups, np.bool_)
    in_sample[group_s] = True
    others = ~in_sample[group_p]
    union_codes = np.concatenate([codes, pop_codes[others].astype(codes.dtype)])
    union_count = np.concatenate([count + (in_population[group_s] << POPULATION_SHIFT),
                                  pop_count[others] << POPULATION_SHIFT])
    return union_codes, union_count, np.zeros(union_count.shape[0], np.int32)


def _search(ev, lat, bottom: tuple, inputs: tuple, tables: tuple, parameters: tuple,
            stars: tuple | None) -> tuple:
    """Run :func:`~.flash_kernels._flash` until it completes or meets a verdict too close
    to call (``work[STATUS]`` UNSURE), its work arrays doubled after an overflow and every
    check complete after an ambiguous bound: ``(work, rec_int, rec_float, slot_levels)``."""
    lattice, keys, phases, cfg, heights = inputs
    level_radix, share, share_off, loss_table = tables
    q, carried = lat.n_attributes, ev.carries_sensitive
    bottom_codes, bottom_count, bottom_sens = bottom
    n0 = bottom_count.shape[0]
    arena = max(int(min(CACHE_ENTRIES, max(CACHE_BOTTOMS * n0, 1 << 20))), 3 * n0 + 1)
    key = (arena, q, ev.maps.dtype, carried)
    codes, count, sens = _ARENA.pop(key, None) or (
        np.empty((arena, q), ev.maps.dtype), np.empty(arena, np.int64),
        np.empty(arena, np.int32) if carried else np.zeros(1, np.int32))
    codes[:n0] = bottom_codes
    count[:n0] = bottom_count
    first = np.empty(0, np.int64)  # the groups' first rows: not kept (nothing reads them)
    if carried:
        sens[:n0] = bottom_sens
    # the roll-up's table: a dense one of up to ROLLUP_DENSE_RATIO n + ROLLUP_DENSE_FLOOR
    # slots, a hashed one of up to 8 n (a power of two >= 4 n)
    table = max(ROLLUP_DENSE_RATIO, 8) * n0 + ROLLUP_DENSE_FLOOR + 16
    widest = int(lat.level_sizes.max())
    # a risk-based model's label table and scratch (one row or entry past the node's classes;
    # the population estimators' for classes of up to every record)
    risk_keys = n0 + 1 if parameters[0][RISK_POPULATION_T] < 0 else \
        max(n0 + 1, estimator_work(ev.encoded.n_rows, n0))
    risk = (np.zeros((1, 2), np.int64), np.zeros(1, np.bool_),
            np.zeros((RISK_WORK_ROWS, 1), np.int64), np.zeros(1)) if stars is None else \
        (*stars, np.empty((RISK_WORK_ROWS, n0 + 1), np.int64), np.empty(risk_keys))
    # QID subsets: per class its group and the classes left (and, for LKC-privacy's
    # confidence bound, the round that failed it, the last rounds' failures and the entries'
    # listed values; for the privacy loss's conditional prior, per group its records), per
    # group its records of each sensitive value
    conditional = parameters[0][PRIOR_COLUMNS] >= 0
    rows = 6 if parameters[0][LKC_C] >= 0 else 2
    groups = (np.empty((rows, n0 + 1) if parameters[-1][0] or conditional else (2, 1),
                       np.int64),
              np.empty((n0 + 1) * ev.encoded.n_sens
                       if parameters[0][LKC_C] >= 0 or conditional else 1, np.int64))
    size, depth = lat.size, lat.max_height + 2
    capacity = min(size + 2, FIRST_CAPACITY)
    while True:
        work = np.zeros(WORK_SIZE, np.int64)
        work[ARENA_END], work[CACHED], work[OPTIMUM] = n0, 1, -1
        work[NEXT_SLOT], work[FROM_BOTTOM] = 1, -1
        slots = 2 * capacity + 1  # per check its node's and at most one meet's
        slot = np.zeros((3, slots), np.int64)
        slot[1, 0] = n0  # slot 0: the bottom, at 0
        slot_of = np.full(size, -1, np.int64)  # each node's slot (-1: none)
        slot_of[0] = 0
        rec_int, rec_float = np.zeros((capacity, 8), np.int64), np.zeros((capacity, 2))
        slot_levels = np.zeros((slots, q + _pack_words(lat)), np.int64)
        args = (lattice, keys, np.full((3, size), np.nan), phases, cfg, heights, codes, count,
                first, ev.maps, ev.map_off, level_radix, share, share_off, loss_table, work,
                np.zeros((4, size), np.uint8), np.full((2, size), np.nan),
                np.empty((size, q + 2), np.int32), np.empty(capacity, np.int64),
                np.empty(capacity, np.int64), rec_int, rec_float, slot,
                slot_levels, slot_of,
                np.full(table, -1, np.int32), np.empty(max(n0, 1), np.int64),
                np.empty(n0 + 1, np.int64), np.empty(n0, np.bool_),
                np.zeros((4, depth), np.int64), np.zeros((depth, q), np.int64),
                np.empty((widest, q), np.int64), np.zeros(q, np.int64), np.empty(widest, np.int64),
                np.empty(widest, np.int64), np.empty((2, widest, 3)),
                np.empty((2, widest), np.int64), np.zeros((2, q), np.int64),
                np.ones((2, q + 1), np.int64), np.zeros((2, q)), sens,
                np.zeros((8, n0 + 1), np.int64) if carried else None,
                np.zeros((n0 if carried else 1, q), ev.maps.dtype),
                np.zeros((4, ev.encoded.n_sens), np.int64), *parameters,
                np.empty(max(n0, 1) if parameters[-1][0] else 1, np.int64), *risk, *groups)
        _compile_parts_first(args)
        _flash(*args)
        if work[STATUS] in (OK, UNSURE):
            if codes.nbytes + count.nbytes + sens.nbytes <= ARENA_KEPT_BYTES:
                _ARENA.clear()
                _ARENA[key] = codes, count, sens
            return work, rec_int, rec_float, slot_levels
        if work[STATUS] == AMBIGUOUS:
            cfg[MAX_CLASSES] = NO_GROUP_LIMIT
        else:
            capacity *= 2


def _stats(ev, rec_int: np.ndarray, rec_float: np.ndarray,
           levels: np.ndarray) -> tuple[NodeStats, np.ndarray]:
    """The checked nodes' records and ``levels`` (in check order) as node statistics, and
    their ids, by node id."""
    order = np.argsort(rec_int[:, 0], kind="stable")
    return record_stats(ev, rec_int[order], rec_float[order], levels[order]), rec_int[order, 0]


def record_stats(ev, rec_int: np.ndarray, rec_float: np.ndarray,
                 levels: np.ndarray) -> NodeStats:
    """Records of :func:`~.flash_kernels.record_classes` and the nodes' ``levels`` as node
    statistics, in their order."""
    suppressed, kept = rec_int[:, 2], rec_int[:, 3]
    kept_records = ev.encoded.n_rows - suppressed
    aecs = np.where(kept > 0, kept_records / np.maximum(kept, 1), 0.0)
    k_anonymous = None if ev.min_class_size is None else rec_int[:, 6] > 0  # as the evaluator
    return NodeStats(levels, rec_int[:, 1] > 0, k_anonymous, suppressed, kept, rec_int[:, 4],
                     np.where(kept < 0, np.nan, aecs), rec_float[:, 0], rec_float[:, 1],
                     rec_int[:, 5], levels.sum(axis=1))


def class_limit(evaluator) -> int | None:
    """Classes past which a check stops, the node then known not to be anonymous (``None``:
    checks never stop).  Only the classes' sizes judged (k-anonymity alone, no sensitive
    attribute carried, no population's entries among the classes), ``N`` records and a
    minimal class size ``k``: at most ``N // k`` classes reach ``k``, every other one is
    suppressed whole, so a node of more than
    ``N // k + max_suppressed`` classes suppresses more than the limit.  Its lower bound is
    then the prior one (the loss at ARX's default gs-factor and weights) or needs no classes
    (precision); the other metrics' need them all."""
    k = evaluator.min_class_size
    metric = evaluator.metric
    if evaluator.carries_sensitive or k is None or k < 2 or \
            metric.name not in ("loss", "precision") or (metric.name == "loss" and
                                                         not metric.arx_default) or \
            any(m.compiled_kind in POPULATION_KINDS for m in evaluator.models):
        return None
    return evaluator.encoded.n_rows // k + evaluator.max_suppressed



def _type_key(args) -> tuple:
    """What tells the argument types of :func:`_search`'s calls apart: the code type and
    whether classes are formed; every other argument is built with fixed types.  (A key that
    missed a difference would only let a search compile with its parts inlined: slower to
    compile, the same code.)"""
    codes, classes = args[_CODES_ARGUMENT], args[_CLASSES_ARGUMENT]
    return codes.dtype, classes is None


#: :func:`_type_key` of the arguments of searches compiled in this process (the typing of
#: forty-odd arguments costs 0.3-1 ms, a search of a small table a few): from the start those
#: of the forms compiled ahead of time
_READY: set = {(as_dtype(form[_CODES_ARGUMENT].dtype),
                isinstance(form[_CLASSES_ARGUMENT], types.NoneType))
               for form in attached_forms(_flash)}


def _compile_parts_first(args) -> None:
    """Before :func:`_flash` is first compiled for ``args``, compile the loss sums and the
    class verdicts on their own, with the types the check will pass them; the check then
    takes them as they are (compiled within the check's typing, their passes and probes
    inlined in Numba's IR, they compile markedly slower).  Nothing when the search for these
    argument types is loaded already, in Numba's cache or compiled ahead of time
    (:mod:`gpuppdp.kernels.aot`)."""
    key = _type_key(args)
    if key in _READY:
        return
    signature = tuple(numba.typeof(a) for a in args)
    if signature in _flash.overloads or attached(_flash, signature):
        _READY.add(key)
        return
    cached = cached_signatures(_flash)
    if cached is None or signature in cached:
        return
    typed = dict(zip(_FLASH_PARAMETERS, signature))
    i64 = types.int64
    _one_node.compile((i64, typed["count"], typed["codes"], typed["node_radix"],
                       typed["outlier"], typed["work"], typed["node_off"], typed["share"],
                       typed["sums"], typed["sums"], types.boolean))
    if not isinstance(typed["cls"], types.NoneType):
        names = inspect.signature(judge_classes.py_func).parameters
        judge_classes.compile(tuple(i64 if name in ("pos", "n", "min_size") else typed[name]
                                     for name in names))



def forms_classes(signature) -> bool:
    """Whether a compiled search's signature (of :func:`_flash`) is the one that forms
    classes (a sensitive attribute carried) rather than judging entries by size."""
    return not isinstance(signature[_CLASSES_ARGUMENT], types.NoneType)



def _phase(phase) -> tuple[int, int, int, int]:
    """A Flash phase's property, skip and check bits and tag (zeros for a phase not run)."""
    return (0, 0, 0, 0) if phase is None else (phase.prop, phase.skip, phase.check, phase.tag)

