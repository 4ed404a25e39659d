"""The lattice searches for the optimal full-domain generalization, and their registry.

One module per search: :mod:`.flash` (ARX's Flash, Kohlmayer, Prasser, Eckert, Kemper & Kuhn
2012; compiled in one call where :func:`compiled_flash_supports` holds: :mod:`.flash_compiled`
drives the kernels of :mod:`.flash_kernels` and :mod:`.flash_classes`), :mod:`.exhaustive`,
:mod:`.levels` (the batched top-down level walk), :mod:`.heuristic` (Lightning and beam) and
:mod:`.samarati` (a k-minimal node); :mod:`.base` holds what they share.  This module maps the
names of :data:`SEARCHES` to their factories (:func:`make_search`) and picks ``auto``'s
(:func:`auto_search`).  No module of the package imports this one.
"""

from __future__ import annotations

from typing import Callable

from ...errors import InputError
from ...kernels import groupby, grouping, segsum
from ..metrics import _factor_table, _normalize_and_aggregate
from ..prior_bound import prior_sums
from ..solution_space import _fill_level
from . import flash_kernels, heuristic
from .base import FULL, SearchResult, privacy_monotonicity
from .exhaustive import ExhaustiveSearch
from .flash import FlashSearch
from .flash_compiled import compiled_flash_refusal, compiled_flash_supports
from .levels import LevelSearch
from .samarati import PREFERENCES, SamaratiSearch

__all__ = ["SEARCHES", "SEARCH_FACTORIES", "ARX_OPTIMAL_LIMIT", "LEVELS_FROM_ROWS",
           "SearchResult", "ExhaustiveSearch", "LevelSearch", "FlashSearch", "SamaratiSearch",
           "PREFERENCES", "make_search", "auto_search", "compiled_flash_supports",
           "compiled_flash_refusal", "search_kernels"]


#: ARX's default limit for an optimal search (``ARXConfiguration.getHeuristicSearchThreshold()``,
#: 100,000 nodes): on a larger lattice ARX 3.9.2's optimal algorithm refuses to run ("Solution
#: space is too large") unless ``setHeuristicSearchThreshold`` raises the limit.
ARX_OPTIMAL_LIMIT = 100_000


#: on the CPU, ``auto`` searches tables of more rows than this with ``levels`` where it walks
#: top down with tagging (census scale: there it checks a fraction of Flash's nodes)
LEVELS_FROM_ROWS = 1 << 20


def _utility_monotonic(evaluator) -> bool:
    metric = evaluator.metric
    return (metric.monotonic_with_generalization if evaluator.suppression_limit == 0
            else metric.monotonic_with_suppression)


def _flash(evaluator, privacy: str, options: dict):
    metric = evaluator.metric
    return FlashSearch(privacy_monotonicity=privacy,
                       utility_monotonic=_utility_monotonic(evaluator),
                       has_min_class_size=evaluator.min_class_size is not None,
                       data_independent_bound=metric.data_independent_bound)


def _levels(evaluator, privacy: str, options: dict):
    return LevelSearch(utility_monotonic=_utility_monotonic(evaluator),
                       privacy_monotonic=privacy == FULL)


def _heuristic(name: str) -> Callable:
    def make(evaluator, privacy: str, options: dict):
        return heuristic.make_heuristic(name, evaluator, time_limit=options["time_limit"],
                                        max_evaluations=options["max_evaluations"])
    return make


#: search name -> ``factory(evaluator, privacy monotonicity, options)``
SEARCH_FACTORIES: dict[str, Callable] = {
    "flash": _flash,
    "exhaustive": lambda evaluator, privacy, options: ExhaustiveSearch(),
    "levels": _levels,
    **{name: _heuristic(name) for name in heuristic.HEURISTICS},
    "samarati": lambda evaluator, privacy, options: SamaratiSearch(
        monotonic=privacy == FULL, prefer=options["prefer"]),
}

#: the names :func:`make_search` takes (``auto``: :func:`auto_search`)
SEARCHES = ("auto", *SEARCH_FACTORIES)


def auto_search(evaluator, lattice_size: int | None, privacy_monotonic: bool) -> str:
    """The search ``auto`` stands for: ``levels`` on a GPU; on the CPU ``levels`` above ARX's
    limit for an optimal search (:data:`ARX_OPTIMAL_LIMIT`: ARX gives no node to agree with
    there) unless the compiled Flash runs the problem (:func:`compiled_flash_supports`: as
    fast or faster there, and ARX's node and checked nodes), and, for the loss metric with
    privacy monotone in generalization (the level search then walks top down with tagging),
    on tables of more than :data:`LEVELS_FROM_ROWS` rows; else ``flash``.  The two differ
    only on exact ties, where flash returns ARX's node: with the loss metric on a table that
    large two nodes all but never tie, with precision (a function of the levels and the
    suppressed count) they often do."""
    if evaluator.backend.is_gpu or (
            lattice_size is not None and lattice_size > ARX_OPTIMAL_LIMIT
            and not compiled_flash_supports(evaluator.models, evaluator.metric,
                                            evaluator=evaluator, lattice_size=lattice_size)):
        return "levels"
    census = evaluator.encoded.n_rows > LEVELS_FROM_ROWS
    return "levels" if census and privacy_monotonic and evaluator.metric.name == "loss" \
        else "flash"


def make_search(name: str, evaluator, *, lattice_size: int | None = None,
                time_limit: float | None = None, max_evaluations: int | None = None,
                prefer: str = "height"):
    """Build a search for an :class:`~gpuppdp.engine.evaluate.Evaluator`'s models and metric.

    ``lightning`` and ``beam`` are the heuristics of :mod:`.heuristic` (budget: ``time_limit``
    seconds and/or ``max_evaluations`` nodes); ``flash`` or ``levels`` on a lattice of more
    than :data:`~.heuristic.OPTIMAL_SEARCH_LIMIT` nodes becomes
    :data:`~.heuristic.AUTO_HEURISTIC`; ``samarati`` finds a k-minimal node chosen by
    ``prefer`` (:mod:`.samarati`); ``auto``: see :func:`auto_search`."""
    privacy = privacy_monotonicity(evaluator)
    if name == "auto":
        name = auto_search(evaluator, lattice_size, privacy == FULL)
    if name in ("flash", "levels") and lattice_size is not None and \
            lattice_size > heuristic.OPTIMAL_SEARCH_LIMIT:
        note = (f"lattice of {lattice_size} nodes > OPTIMAL_SEARCH_LIMIT "
                f"({heuristic.OPTIMAL_SEARCH_LIMIT}): heuristic search instead of {name}")
        return heuristic.make_heuristic(heuristic.AUTO_HEURISTIC, evaluator,
                                        time_limit=time_limit, max_evaluations=max_evaluations,
                                        note=note)
    factory = SEARCH_FACTORIES.get(name)
    if factory is None:
        raise InputError(f"search must be one of {SEARCHES}, got {name!r}")
    return factory(evaluator, privacy, {"time_limit": time_limit,
                                        "max_evaluations": max_evaluations, "prefer": prefer})


def search_kernels(compiled_flash: bool) -> tuple:
    """The compiled functions a search calls from Python, for :func:`gpuppdp.kernels.warm_up`
    to load from Numba's cache while the input is read (in a fresh process the search would
    load them itself): the compiled Flash's (``compiled_flash``: with the loss's prior-bound
    factors, the strategy's distinct labels per level and the marginal counts both read),
    else the batched evaluator's roll-up, node statistics and loss sums."""
    if compiled_flash:
        return (flash_kernels._flash, _fill_level, _factor_table, prior_sums,
                groupby.distinct_at_levels, groupby._marginals)
    return (grouping._node_paths, grouping._rollup_chunk, segsum._node_stats_run,
            segsum._loss_sums_run, _normalize_and_aggregate)
