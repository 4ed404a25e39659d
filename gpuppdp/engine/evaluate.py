"""Lattice-node evaluation: frequency set -> classes -> privacy verdicts and metrics, per batch.

This is ARX's ``TransformationChecker`` for many nodes at once: roll the source frequency sets
up to the batch's nodes, form the equivalence classes, let every privacy model judge every class,
count the records of failing classes (suppressed as a whole, up to the limit), and compute the
metric.  Only small per-node results (:class:`NodeStats`) come back to the host.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

import numpy as np
from numba import njit

from .. import kernels
from ..backend import Array
from ..core.classes import Classes
from ..core.model import PrivacyModel, Requirement
from ..errors import InputError, InputTypeError
from ..kernels.aot import ahead_of_time
from ..validation import format_values
from .encoding import EncodedTable, FrequencySet, SchemaError
from .lattice import Lattice
from .metrics import Metric
from .solution_space import level_nodes

__all__ = ["NodeStats", "Evaluator", "LatticeOracle", "RollupBuffers", "referred_sensitive",
           "check_models", "checked_evaluator"]


def referred_sensitive(models: Sequence[PrivacyModel]) -> set[str]:
    """The sensitive attributes whose histograms ``models`` judge."""
    return {m.sensitive_attribute for m in models
            if Requirement.SENSITIVE_HISTOGRAM in m.requires
            and m.sensitive_attribute is not None}


def check_models(models: Sequence, sensitive: Sequence[str], hint: str = "") -> list:
    """``models`` as a list, checked: at least one, each a PrivacyModel, at most one
    risk-based, every sensitive attribute they judge declared in ``sensitive`` (``hint``: how
    the caller's user gives models, appended to the message when there is none)."""
    models = list(models)
    if not models:
        raise InputError("no privacy model given: pass k=... and/or models=[...]" + hint)
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise InputTypeError(f"models must be PrivacyModel instances, got {m!r}")
    risk = [m for m in models if Requirement.SIZE_DISTRIBUTION in m.requires]
    if len(risk) > 1:
        raise InputError(f"one risk-based model at a time (ARX enforces one on the classes "
                         f"the others leave), got {', '.join(map(repr, risk))}")
    undeclared = sorted(referred_sensitive(models) - set(sensitive))
    if undeclared:
        raise SchemaError(f"models refer to {format_values(undeclared)}: declare them "
                          "sensitive (sensitive=[...])")
    return models


def checked_evaluator(encoded: EncodedTable, models: Sequence[PrivacyModel], metric: Metric,
                      suppression_limit: float) -> "Evaluator":
    """The :class:`Evaluator` of ``encoded``; :class:`InputError` when a model needs larger
    classes than the table has rows."""
    for m in models:
        if m.min_class_size is not None and m.min_class_size > encoded.n_rows:
            raise InputError(f"{m!r} needs classes of {m.min_class_size} records but the "
                             f"table has only {encoded.n_rows} rows")
    return Evaluator(encoded, list(models), metric, suppression_limit)


@dataclass
class NodeStats:
    """Results for a batch of nodes (host arrays, one entry per node).

    ``suppressed``: records in classes that fail a privacy model (all suppressed);
    ``anonymous``: ``suppressed <= floor(limit * rows)``; ``k_anonymous``: the same test on
    classes below the minimal class size only (ARX's k-anonymity sub-flag, ``None`` when no model
    sets a minimal size); ``classes``/``smallest_class``/``aecs``: over the released (kept)
    classes, ``aecs`` = released records / released classes; ``information_loss`` is NaN for
    nodes that are not anonymous (ARX computes it only for anonymous nodes), ``lower_bound``
    is the metric's bound; ``entries``: frequency-set size; ``height``: sum of levels.  A
    check the compiled Flash stopped early, the node known not to be anonymous
    (:func:`~.search.flash_compiled.class_limit`), has -1 for ``suppressed``, ``classes``,
    ``smallest_class`` and ``entries``, NaN ``aecs``, and the metric's prior bound.
    """

    levels: np.ndarray
    anonymous: np.ndarray
    k_anonymous: np.ndarray | None
    suppressed: np.ndarray
    classes: np.ndarray
    smallest_class: np.ndarray
    aecs: np.ndarray
    information_loss: np.ndarray
    lower_bound: np.ndarray
    entries: np.ndarray
    height: np.ndarray

    def __len__(self) -> int:
        return len(self.levels)

    def row(self, b: int) -> dict:
        """Node ``b`` as a plain dict of Python scalars."""
        out = {}
        for name in _NODE_STATS_FIELDS:
            value = getattr(self, name)
            out[name] = None if value is None else (
                tuple(int(v) for v in value[b]) if name == "levels" else value[b].item())
        return out

    def take(self, rows: np.ndarray) -> "NodeStats":
        """The nodes at ``rows``, in that order."""
        fields: dict[str, Any] = {name: (None if getattr(self, name) is None
                                         else getattr(self, name)[rows])
                                  for name in _NODE_STATS_FIELDS}
        return NodeStats(**fields)

    @staticmethod
    def concatenate(parts: Sequence["NodeStats"]) -> "NodeStats":
        kw: dict[str, Any] = {}
        for name in _NODE_STATS_FIELDS:
            vals = [getattr(p, name) for p in parts]
            kw[name] = None if vals[0] is None else np.concatenate(vals)
        return NodeStats(**kw)


_NODE_STATS_FIELDS = tuple(f.name for f in fields(NodeStats))


class Evaluator:
    """Evaluates batches of lattice nodes of one encoded table.

    Parameters
    ----------
    encoded : EncodedTable
    models : list of PrivacyModel
    metric : Metric (bound to ``encoded`` here)
    suppression_limit : float in [0, 1]
        Largest share of records that may be suppressed; ARX's absolute limit is
        ``floor(limit * rows)``.
    """

    def __init__(self, encoded: EncodedTable, models: Sequence[PrivacyModel], metric: Metric,
                 suppression_limit: float):
        self.encoded = encoded
        self.backend = encoded.backend
        # bound copies: binding to this table never rebinds the caller's models or metric
        self.models = [copy.copy(m).bind(encoded) for m in models]
        self.metric = copy.copy(metric).bind(encoded)
        self.suppression_limit = suppression_limit
        self.max_suppressed = math.floor(suppression_limit * encoded.n_rows)
        sizes = [m.min_class_size for m in self.models if m.min_class_size is not None]
        self.min_class_size = max(sizes) if sizes else None
        self.bottom = encoded.frequency_set()
        self.maps, self.map_off = encoded.level_maps()
        self.carries_sensitive = encoded.carries_sensitive
        self.sensitive_maps = {name: (col.from_carried, len(col.labels))
                               for name, col in encoded.sensitive.items()
                               if col.from_carried is not None}
        # (levels, classes, outlier) of the last node_classes call
        self._node_classes: tuple[tuple, Classes, Any] | None = None
        # (levels, per-row outlier mask) of the last row_outliers call
        self._row_outliers: tuple[tuple, Any] | None = None
        # on a GPU, k-anonymity alone without a sensitive attribute: a batch's results come
        # back in one copy (:meth:`_evaluate_at_once`)
        self._at_once = (self.backend.kernels != "cpu" and not self.carries_sensitive
                         and all(m.compiled_kind == "size" for m in self.models))

    # -- one batch ---------------------------------------------------------------------
    def evaluate(self, levels: np.ndarray, source: FrequencySet, source_index: np.ndarray,
                 out=None, bounds: bool = True) -> tuple[NodeStats, FrequencySet]:
        """Evaluate nodes ``levels`` (B, q), node ``b`` rolled up from node
        ``source_index[b]`` of ``source`` (which must be at least as specific); ``out``: the
        CPU roll-up's output arrays (:class:`RollupBuffers`), by default new ones;
        ``bounds=False``: the metric's lower bound is wanted for anonymous nodes only (NaN
        elsewhere where that saves work: :meth:`.Metric.evaluate_needed`)."""
        levels = np.asarray(levels, dtype=np.int64).reshape(-1, len(self.encoded.qi_names))
        if self._at_once:
            return self._evaluate_at_once(levels, source, source_index, bounds)
        fs = self.rollup(levels, source, source_index, out)
        return self._judge(self._classes(fs), levels, np.diff(fs.host_ptr), bounds), fs

    def _evaluate_at_once(self, levels: np.ndarray, source: FrequencySet,
                          source_index: np.ndarray, bounds: bool):
        """:meth:`evaluate` on a GPU for k-anonymity alone without a sensitive attribute (the
        classes are the frequency sets' entries): the roll-up, the verdicts, the node totals
        and the metric's sums (:meth:`.Metric.launch_sums`) launched back to back on arrays
        sized by the source entries, and waited for once, when the offsets come back."""
        be, xp = self.backend, self.backend.xp
        fs = self.rollup(levels, source, source_index, sync=False)
        if self.min_class_size is None:
            outlier = xp.zeros(fs.count.shape[0], dtype=xp.bool_)
        else:
            outlier = fs.count < self.min_class_size
        totals = kernels.node_stats_device(be, fs.count, outlier, fs.ptr)
        # ARX computes the loss of anonymous nodes only (and every node's bound if asked)
        wanted = None if bounds else totals[:, 0] <= self.max_suppressed
        sums = self.metric.launch_sums(Classes(xp, fs.count, None, fs.ptr, None, fs.codes,
                                               levels=levels), outlier, levels, wanted)
        host_ptr = be.to_host(fs.ptr).astype(np.int64)  # the wait
        totals = kernels.segsum.node_stats_on_host(be.to_host(totals))
        n = int(host_ptr[-1])
        fs = FrequencySet(levels, fs.codes[:n], fs.sens[:n], fs.count[:n], fs.first[:n],
                          fs.ptr, host_ptr)
        classes = Classes(xp, fs.count, None, fs.ptr, host_ptr, fs.codes, levels=levels)
        outlier = outlier[:n]
        if sums is None:
            def losses(anonymous):
                return self.metric.evaluate_needed(classes, outlier, levels, anonymous, bounds)
        else:
            host_sums = be.to_host(sums)

            def losses(anonymous):
                return self.metric.from_sums(host_sums[0], host_sums[1], anonymous, bounds)
        has_small = self.min_class_size is not None
        return self._stats(totals, has_small, has_small, levels, np.diff(host_ptr),
                           losses), fs

    def rollup(self, levels: np.ndarray, source: FrequencySet, source_index: np.ndarray,
               out=None, sync: bool = True) -> FrequencySet:
        """The frequency sets of nodes ``levels`` (B, q), node ``b`` rolled up from node
        ``source_index[b]`` of ``source`` (see :meth:`evaluate`); ``sync=False`` on a GPU:
        not waited for, ``host_ptr`` may be ``None`` and the arrays longer than the sets
        (:func:`.kernels.rollup`)."""
        source_index = np.asarray(source_index, dtype=np.int64)
        src_levels = source.levels[source_index]
        if (src_levels > levels).any():
            raise ValueError("a source node must be at least as specific as its target")
        q = levels.shape[1]
        node_map_off = self.map_off[np.arange(q)[None, :], src_levels, levels]
        codes, sens, count, first, ptr, host_ptr = kernels.rollup(
            self.backend, source.codes, source.sens, source.count, source.first,
            source.host_ptr[source_index], source.host_ptr[source_index + 1], node_map_off,
            self.maps, self.encoded.node_radix(levels), out, sync)
        return FrequencySet(levels, codes, sens, count, first, ptr, host_ptr)

    def _classes(self, fs: FrequencySet) -> Classes:
        be, xp = self.backend, self.backend.xp
        if not self.carries_sensitive:  # the node of each class: computed if asked for
            return Classes(xp, fs.count, None, fs.ptr, fs.host_ptr, fs.codes, levels=fs.levels)
        class_of_entry, rep, class_ptr, size, distinct, node = kernels.classes(
            be, fs.ptr, fs.codes, self.encoded.node_radix(fs.levels)[:, :-1], fs.count,
            fs.host_ptr)
        host_class_ptr = be.to_host(class_ptr).astype(np.int64)
        return Classes(xp, size, node, be.asarray(host_class_ptr), host_class_ptr,
                       fs.codes[rep], distinct, class_of_entry, fs.sens, fs.count,
                       levels=fs.levels, sensitive_maps=self.sensitive_maps)

    def outliers(self, classes: Classes):
        """``(outlier, small)`` per class: failing any model, and below the minimal size
        (``small`` is ``None`` when no model sets a minimal size; ``outlier`` is ``small``
        itself, the same array, when no model fails other classes).  Models that judge the
        released classes together (LKC, k on QID subsets) see the classes the others
        suppress; the risk-based models (:mod:`gpuppdp.models.risk`) come last and suppress
        classes in the metric's :meth:`~.Metric.suppression_order`."""
        xp = classes.xp
        if self.min_class_size is not None:
            small = classes.size < self.min_class_size
            outlier = small  # a new array once a model fails more
        else:
            small = None
            outlier = xp.zeros(classes.size.shape[0], dtype=xp.bool_)
        grouped: list[Any] = []  # their class_fails also takes the classes suppressed so far
        sized: list[Any] = []    # they suppress classes to fit the size distribution, last
        for model in self.models:
            if Requirement.RELEASED_CLASSES in model.requires:
                grouped.append(model)
                continue
            if Requirement.SIZE_DISTRIBUTION in model.requires:
                sized.append(model)
                continue
            fails = model.class_fails(classes.for_attribute(model.sensitive_attribute))
            if fails is not None:
                outlier = outlier | fails
        # models judging the released classes together: to a common fixed point
        changed = bool(grouped)
        while changed:
            changed = False
            for model in grouped:
                fails = model.class_fails(classes.for_attribute(model.sensitive_attribute),
                                          outlier)
                if bool((fails & ~outlier).any()):
                    outlier = outlier | fails
                    changed = len(grouped) > 1
        for model in sized:  # ARX's sample-based criteria, after the class-based ones
            outlier = model.suppress(classes, outlier, self.max_suppressed,
                                     self.metric.suppression_order)
        return outlier, small

    def _judge(self, classes: Classes, levels: np.ndarray, entries: np.ndarray,
               bounds: bool = True) -> NodeStats:
        outlier, small = self.outliers(classes)
        # per node, in one pass: suppressed records, records in small classes (those
        # suppressed when the small classes are the outliers), kept classes, smallest kept class
        totals = kernels.node_stats(self.backend, classes.size, outlier,
                                    None if small is outlier else small, classes.ptr,
                                    classes.host_ptr)

        def losses(anonymous):
            return self.metric.evaluate_needed(classes, outlier, levels, anonymous, bounds)
        return self._stats(totals, small is not None, small is outlier, levels, entries, losses)

    def _stats(self, totals: np.ndarray, has_small: bool, small_is_outlier: bool,
               levels: np.ndarray, entries: np.ndarray, losses: Callable) -> NodeStats:
        """The batch's :class:`NodeStats` from its host node totals (:func:`.kernels.
        node_stats`) and ``losses(anonymous) -> (information loss, lower bound)``."""
        suppressed = totals[:, 0]
        anonymous = suppressed <= self.max_suppressed
        in_small = suppressed if small_is_outlier else totals[:, 1]
        k_anonymous = in_small <= self.max_suppressed if has_small else None
        kept = totals[:, 2]
        kept_records = self.encoded.n_rows - suppressed
        smallest = totals[:, 3]
        # ARX computes the loss of anonymous nodes only: the others' may be skipped
        il, lb = losses(anonymous)
        il = np.where(anonymous, il, np.nan)
        aecs = np.where(kept > 0, kept_records / np.maximum(kept, 1), 0.0)
        return NodeStats(levels, anonymous, k_anonymous, suppressed.astype(np.int64),
                         kept.astype(np.int64), smallest, aecs, il, lb,
                         entries.astype(np.int64), levels.sum(axis=1))

    def node_classes(self, levels) -> tuple[Classes, Array]:
        """``(classes, outlier)`` of node ``levels``: its equivalence classes and which fail a
        privacy model; kept for the last node asked (a release and its summary ask for the
        optimum, each more than once).  No node statistics or metric: a release after the
        compiled Flash compiles none of the batched evaluator's kernels but the roll-up."""
        levels = np.asarray(levels, dtype=np.int64).reshape(1, -1)
        key = tuple(levels[0].tolist())
        if self._node_classes is None or self._node_classes[0] != key:
            classes = self._classes(self.rollup(levels, self.bottom, np.array([0])))
            outlier, _ = self.outliers(classes)
            self._node_classes = (key, classes, outlier)
        return self._node_classes[1], self._node_classes[2]

    def suppressed_classes(self, levels) -> Array:
        """Device (F, q): the QID codes at node ``levels`` of the classes that fail a privacy
        model, whose records a release suppresses."""
        classes, outlier = self.node_classes(levels)
        return classes.codes[outlier]

    def row_outliers(self, levels: np.ndarray):
        """Per input row (device bool): is the row in a class that fails a privacy model at
        node ``levels``?  Also returns the rows' QID codes at that node, ``(N, q)``."""
        levels = np.asarray(levels, dtype=np.int64).reshape(-1)
        assert self.encoded.qi_codes is not None  # (a table encoded whole)
        row_codes = self.encoded.generalize(levels, self.encoded.qi_codes)
        return self._row_outlier_mask(levels, row_codes), row_codes

    def row_outlier_mask(self, levels: np.ndarray):
        """The first array of :meth:`row_outliers` alone; kept for the last node asked (local
        recoding starts from the release's node, whose rows the release judged already)."""
        levels = np.asarray(levels, dtype=np.int64).reshape(-1)
        if self._row_outliers is not None and self._row_outliers[0] == tuple(levels.tolist()):
            return self._row_outliers[1]
        assert self.encoded.qi_codes is not None  # (a table encoded whole)
        return self._row_outlier_mask(levels, self.encoded.generalize(levels,
                                                                      self.encoded.qi_codes))

    def _row_outlier_mask(self, levels: np.ndarray, row_codes):
        outlier = self.encoded.class_set(levels, self.suppressed_classes(levels)).contains(
            row_codes)
        self._row_outliers = (tuple(levels.tolist()), outlier)
        return outlier


@njit(cache=True)
def _smallest_below(slot_levels, slot_size, levels):
    """Slot of the smallest cached frequency set whose node is at most ``levels``."""
    best, best_size = -1, np.iinfo(np.int64).max
    for s in range(slot_levels.shape[0]):
        if slot_size[s] >= best_size:
            continue
        below = True
        for i in range(levels.shape[0]):
            if slot_levels[s, i] > levels[i]:
                below = False
                break
        if below:
            best, best_size = s, slot_size[s]
    return best


ahead_of_time(_smallest_below, ["int64(int64[:, ::1], int64[::1], int64[::1])"])


@njit(cache=True)
def _smallest_predecessor(ids, levels, strides, size):
    """Id of each node's direct predecessor with the fewest frequency-set entries, the first
    attribute's on a tie (-1 when none was evaluated: their size is the int64 maximum);
    ``levels`` are the nodes' levels, ``strides`` the lattice's."""
    n, q = levels.shape
    best = np.full(n, -1, np.int64)
    for i in range(n):
        best_size = np.iinfo(np.int64).max
        for j in range(q):
            if levels[i, j] > 0:
                pred = ids[i] - strides[j]
                if size[pred] < best_size:
                    best[i], best_size = pred, size[pred]
    return best


ahead_of_time(_smallest_predecessor, ["int64[::1](int64[::1], int64[:, ::1], int64[::1], "
                                      "int64[::1])"])


#: source entries of one batch of nodes, at most: on the CPU, and on a GPU with memory to spare
CPU_BATCH_ENTRIES, GPU_BATCH_ENTRIES = 4_000_000, 64_000_000
#: at most this many in a batch of a lattice walk on the CPU: the walk holds a level's batches
#: until the next level has read them, and smaller ones let it write over its buffers sooner
#: (9-QID Adult: 49 K page faults instead of 70 K, 5 % less time) and stay in the L3 cache
CPU_WALK_BATCH_ENTRIES = 1 << 20
#: device bytes a batch may use per source entry and byte of entry (its output; the roll-up's
#: hash tables, up to 3 slots of 24 bytes per entry, and per-entry temporaries: a generous
#: factor)
GPU_BATCH_BYTES_PER_BYTE = 6


def default_batch_entries(evaluator: Evaluator) -> int:
    """The batch budget: :data:`CPU_BATCH_ENTRIES` on the CPU; on a GPU
    :data:`GPU_BATCH_ENTRIES`, or fewer (2^20 at least) when the device's free memory
    (:meth:`~gpuppdp.backend.Backend.free_memory`) could not hold a batch that large."""
    backend = evaluator.backend
    if not backend.is_gpu:
        return CPU_BATCH_ENTRIES
    free = backend.free_memory()
    if free is None:
        return GPU_BATCH_ENTRIES
    bottom = evaluator.bottom
    entry_bytes = (bottom.codes.dtype.itemsize * bottom.codes.shape[1]
                   + bottom.sens.dtype.itemsize + 16)  # + count and first
    fits = free // (GPU_BATCH_BYTES_PER_BYTE * entry_bytes)
    return int(max(1 << 20, min(GPU_BATCH_ENTRIES, fits)))


class RollupBuffers:
    """Output arrays of the CPU roll-ups of one lattice walk: batches written one after another
    into large sets of arrays, a set written over once the frequency sets in it are read no
    more.  Memory fresh from the operating system is paid for at first touch (a page fault, the
    page zeroed), and a walk writes many times what it holds at once (two levels' worth held).
    Small pages (:func:`.kernels.small_pages`): fresh huge pages cost far more on some hosts.
    On a GPU CuPy's memory pool does this: :meth:`take` lends nothing there."""

    def __init__(self, evaluator: "Evaluator", capacity: int, packed: bool = False):
        bottom = evaluator.bottom
        self.enabled = evaluator.backend.kernels == "cpu"
        self.capacity = capacity
        # code columns (None: a packed walk's codes, one int64 word a row)
        self._columns = None if packed else bottom.codes.shape[1]
        self._dtypes = (np.dtype(np.int64) if packed else evaluator.maps.dtype,
                        bottom.sens.dtype)
        # the set being filled: [arrays, next free row, batches in it]
        self._open: list | None = None
        self._free: list[list] = []

    def take(self, entries: int):
        """``(arrays, handle)``: arrays ``(codes, sens, count, first)`` with room for a batch of
        ``entries`` source entries, after the batches taken before; ``(None, None)`` off the
        CPU.  Sensitive codes start as zeros and are written only by nodes that carry them, as
        all or none of one table's do; ``first`` is empty: within a walk nothing reads the
        groups' first rows (their order is the canonical one), and 8 of an entry's 25 bytes
        are saved.  Say how many rows the batch kept with :meth:`used`."""
        if not self.enabled:
            return None, None
        held = self._open
        if held is None or held[1] + entries > held[0][2].shape[0]:
            fits = [i for i, s in enumerate(self._free) if s[0][2].shape[0] >= entries]
            if fits:
                held = self._free.pop(fits[-1])
            else:
                n = max(entries, self.capacity)
                codes_dtype, sens_dtype = self._dtypes
                with kernels.small_pages():
                    shape = (n,) if self._columns is None else (n, self._columns)
                    held = [(np.empty(shape, codes_dtype), np.zeros(n, sens_dtype),
                             np.empty(n, np.int64), np.empty(0, np.int64)), 0, 0]
            if self._open is not None and self._open[2] == 0:
                self._free.append(self._open)
            self._open = held
        at = held[1]
        held[1] += entries
        held[2] += 1
        codes, sens, count, first = held[0]
        return ((codes[at:at + entries], sens[at:at + entries], count[at:at + entries], first),
                (held, at))

    def used(self, handle, rows: int) -> None:
        """The batch of ``handle`` kept its first ``rows`` rows: the next batch goes after
        them (when it was the last one taken)."""
        if handle is not None:
            held, at = handle
            if self._open is not None and held is self._open:
                held[1] = at + rows

    def give(self, handle) -> None:
        """The batch of ``handle`` (``None`` is ignored) is read no more; a set none of whose
        batches is read any more may be written over."""
        if handle is None:
            return
        held = handle[0]
        held[2] -= 1
        if held[2] == 0:
            held[1] = 0
            if held is not self._open:
                self._free.append(held)


class LatticeOracle:
    """Answers "evaluate node g" for a search, rolling up from the best cached ancestor.

    Caches frequency sets of evaluated nodes (up to ``cache_entries`` entries in all, oldest
    dropped first, the bottom node never: every node can be rolled up from it) and results of
    every node.  :meth:`evaluate_all` evaluates the whole lattice
    level by level in batches of at most ``batch_entries`` source entries (by default
    :func:`default_batch_entries`: sized to the device's free memory on a GPU).
    """

    def __init__(self, evaluator: Evaluator, lattice: Lattice, cache_entries: int = 20_000_000,
                 batch_entries: int | None = None):
        self.evaluator = evaluator
        self.lattice = lattice
        self.cache_entries = cache_entries
        self.batch_entries = batch_entries or default_batch_entries(evaluator)
        self._fs: OrderedDict[int, FrequencySet] = OrderedDict()
        self._fs_entries = 0
        # cached node -> slot; per slot: level vector and size (int64 max = free slot)
        self._slot: dict[int, int] = {}
        self._slot_levels = np.zeros((64, lattice.n_attributes), dtype=np.int64)
        self._slot_size = np.full(64, np.iinfo(np.int64).max, dtype=np.int64)
        self._free: list[int] = list(range(63, -1, -1))
        self._results: dict[int, dict] = {}
        self.evaluations = 0
        self._store(lattice.bottom, evaluator.bottom)

    def _store(self, node_id: int, fs: FrequencySet) -> None:
        if not self._free:
            n = len(self._slot_size)
            self._slot_levels = np.concatenate([self._slot_levels,
                                                np.zeros_like(self._slot_levels)])
            self._slot_size = np.concatenate(
                [self._slot_size, np.full(n, np.iinfo(np.int64).max, dtype=np.int64)])
            self._free = list(range(2 * n - 1, n - 1, -1))
        slot = self._free.pop()
        self._slot[node_id] = slot
        self._slot_levels[slot] = fs.levels[0]
        self._slot_size[slot] = int(fs.host_ptr[-1])
        self._fs[node_id] = fs
        self._fs_entries += int(fs.host_ptr[-1])
        while self._fs_entries > self.cache_entries and len(self._fs) > 1:
            if next(iter(self._fs)) == self.lattice.bottom:
                self._fs.move_to_end(self.lattice.bottom)
            old_id, old = self._fs.popitem(last=False)
            self._fs_entries -= int(old.host_ptr[-1])
            old_slot = self._slot.pop(old_id)
            self._slot_size[old_slot] = np.iinfo(np.int64).max
            self._free.append(old_slot)

    def _best_source(self, levels: np.ndarray) -> FrequencySet:
        """The cached node below ``levels`` with the smallest frequency set."""
        slot = _smallest_below(self._slot_levels, self._slot_size, levels)
        return self._fs[self.lattice.node_id(self._slot_levels[slot])]

    def evaluate(self, node_id: int) -> dict:
        """Result row (see :meth:`NodeStats.row`) of one node, evaluated at most once."""
        hit = self._results.get(node_id)
        if hit is None:
            self.prefetch([node_id])
            hit = self._results[node_id]
        return hit

    def prefetch(self, node_ids) -> None:
        """Evaluate the given nodes not yet evaluated, as one batch (several cores, or one
        GPU launch), rolled up from the smallest cached node below all of them."""
        todo = [n for n in dict.fromkeys(node_ids) if n not in self._results]
        if not todo:
            return
        levels = self.lattice.levels_of(np.array(todo, dtype=np.int64))
        source = self._best_source(levels.min(axis=0))
        stats, fs = self.evaluator.evaluate(levels, source, np.zeros(len(todo), dtype=np.int64))
        self.evaluations += len(todo)
        for b, node_id in enumerate(todo):
            self._results[node_id] = stats.row(b)
            self._store(node_id, fs.node(b))

    def evaluated(self) -> NodeStats:
        """Results of the nodes evaluated so far by :meth:`evaluate` / :meth:`prefetch`, in
        node-id order (:meth:`evaluate_all` returns its own)."""
        rows = [self._results[i] for i in sorted(self._results)]
        shape = {"levels": (len(rows), self.lattice.n_attributes)}
        fields: dict[str, Any] = {name: (None if rows and rows[0][name] is None else
                                         np.array([r[name] for r in rows]).reshape(
                                             shape.get(name, (len(rows),))))
                                  for name in _NODE_STATS_FIELDS}
        return NodeStats(**fields)

    def evaluate_all(self, progress: Callable[[int, int], None] | None = None,
                     bounds: bool = True, walk=None) -> NodeStats:
        """Evaluate every node, level by level (:meth:`evaluate_levels`); rows in node-id
        order."""
        return self.evaluate_levels(None, progress, bounds=bounds, walk=walk)

    def evaluate_levels(self, choose: Callable | None = None,
                        progress: Callable[[int, int], None] | None = None,
                        observe: Callable | None = None, bounds: bool = True,
                        walk=None) -> NodeStats:
        """Evaluate the lattice level by level, bottom up; rows of the evaluated nodes in
        node-id order.

        ``choose(ids, levels) -> bool mask`` (``None``: all) picks the nodes of a level to
        evaluate, knowing the results of the levels below; a chosen node's direct predecessors
        must all have been evaluated; ``observe(ids, stats)`` (optional) sees each batch's
        results as they come.  Each node is rolled up from its predecessor with the
        smallest frequency set.  A level is evaluated in batches whose source entries stay
        under ``batch_entries``; the previous level's frequency sets are kept as the list of
        those batches.  ``bounds=False``: lower bounds of anonymous nodes only
        (:meth:`Evaluator.evaluate`).  ``walk``: a
        :class:`~gpuppdp.engine.search.packed_walk.PackedWalk` of the evaluator, whose
        batches then run in packed codes (its own sets,
        :class:`~gpuppdp.engine.search.packed_walk.PackedSets`).
        """
        lat = self.lattice
        budget = self.batch_entries if self.evaluator.backend.is_gpu else \
            min(self.batch_entries, CPU_WALK_BATCH_ENTRIES)
        buffers = RollupBuffers(self.evaluator, budget, packed=walk is not None)
        bottom = self.evaluator.bottom if walk is None else walk.bottom()
        # where each node of the previous level lives: (batch, index in batch, size), and the
        # batches' roll-up buffers
        prev_batches: list = [bottom]  # FrequencySet or the walk's PackedSets (None once let go)
        prev_buffers: list = [None]
        where_batch = np.zeros(lat.size, dtype=np.int64)
        where_index = np.zeros(lat.size, dtype=np.int64)
        size = np.full(lat.size, np.iinfo(np.int64).max, dtype=np.int64)
        size[0] = bottom.rows
        parts, part_ids, done = [], [], 0
        for h in range(lat.max_height + 1):
            levels = level_nodes(lat.max_levels, h)  # ascending id
            ids = levels @ lat.strides
            if choose is not None and h > 0:
                keep = np.asarray(choose(ids, levels), dtype=bool)
                ids, levels = ids[keep], levels[keep]
            src = ids if h == 0 else _smallest_predecessor(
                ids, np.ascontiguousarray(levels, dtype=np.int64), lat.strides, size)
            if (src < 0).any():
                raise ValueError("a chosen node has no evaluated predecessor")
            batches: list = []
            batch_buffers: list = []
            order = np.lexsort((ids, where_batch[src]))
            ids, src, levels = ids[order], src[order], levels[order]
            for start, stop in self._split(where_batch[src], size[src], budget):
                sl = slice(start, stop)
                used = int(where_batch[src[start]])
                # the runs come in source-batch order: a batch left behind is read no more,
                # and its memory serves the next frequency sets
                prev_batches[:used] = [None] * used
                for b in range(used):
                    buffers.give(prev_buffers[b])
                    prev_buffers[b] = None
                source = prev_batches[used]
                assert source is not None  # (let go only once its batch has been read)
                out, handle = buffers.take(int(np.sum(size[src[sl]])))
                if walk is None:
                    stats, fs = self.evaluator.evaluate(levels[sl], source,
                                                        where_index[src[sl]], out, bounds)
                else:
                    stats, fs = walk.evaluate(levels[sl], ids[sl], source,
                                              where_index[src[sl]], out, bounds)
                buffers.used(handle, fs.rows)
                where_batch[ids[sl]] = len(batches)
                where_index[ids[sl]] = np.arange(stop - start)
                size[ids[sl]] = stats.entries
                batches.append(fs)
                batch_buffers.append(handle)
                parts.append(stats)
                part_ids.append(ids[sl])
                if observe is not None:
                    observe(ids[sl], stats)
                done += stop - start
                if progress is not None:
                    progress(done, lat.size)
            self.evaluations += len(ids)
            for b in prev_buffers:
                buffers.give(b)
            prev_batches, prev_buffers = batches, batch_buffers
        stats = NodeStats.concatenate(parts)
        return stats.take(np.argsort(np.concatenate(part_ids)))

    def evaluate_from(self, levels: np.ndarray, source: FrequencySet,
                      source_index: np.ndarray, bounds: bool = True) -> NodeStats:
        """Evaluate nodes ``levels`` (B >= 1, q), node ``b`` rolled up from node
        ``source_index[b]`` of ``source``, in batches of at most ``batch_entries`` source
        entries; rows in the given order, frequency sets not kept.  ``bounds=False``: lower
        bounds of anonymous nodes only (:meth:`Evaluator.evaluate`)."""
        return NodeStats.concatenate([stats for _, stats, _ in
                                      self.batches_from(levels, source, source_index, bounds)])

    def evaluate_chained(self, levels: np.ndarray, budget: int,
                         bounds: bool = True) -> NodeStats:
        """Evaluate nodes ``levels`` (distinct), height by height, each rolled up from the
        direct predecessor among them (of the height below) with the fewest entries
        (:func:`_smallest_predecessor`, as :meth:`evaluate_levels` picks it), or from the
        bottom without one, in batches of at most ``budget`` source entries; rows in the
        given order, frequency sets not kept beyond the next height.  (A set of nodes a search
        checked, as Flash's linear phase checks an anonymous node's successors: most have
        such a predecessor, whose set is far smaller than the bottom's.)"""
        ev, lat = self.evaluator, self.lattice
        levels = np.ascontiguousarray(levels, dtype=np.int64)
        ids, height = levels @ lat.strides, levels.sum(axis=1)
        # per node evaluated: its batch among its height's, its index there and its entries
        where_set = np.zeros(lat.size, np.int64)
        where_index = np.zeros(lat.size, np.int64)
        size = np.full(lat.size, np.iinfo(np.int64).max, np.int64)
        parts, rows = [], []
        prev_sets: list = []  # the batches of the height below; then the bottom
        for h in np.unique(height):
            at = np.flatnonzero(height == h)
            src = _smallest_predecessor(ids[at], levels[at], lat.strides, size)
            found = src >= 0
            source = np.where(found, where_set[src], len(prev_sets))
            index = np.where(found, where_index[src], 0)
            source_size = np.where(found, size[src], ev.bottom.rows)
            sets: list = []
            for s, from_set in enumerate([*prev_sets, ev.bottom]):
                mine = np.flatnonzero(source == s)
                for start, stop in self._split(np.zeros(len(mine), np.int64),
                                               source_size[mine], budget):
                    b = mine[start:stop]
                    stats, fs = ev.evaluate(levels[at[b]], from_set, index[b], bounds=bounds)
                    self.evaluations += len(b)
                    node = ids[at[b]]
                    where_set[node], where_index[node] = len(sets), np.arange(len(b))
                    size[node] = stats.entries
                    parts.append(stats)
                    rows.append(at[b])
                    sets.append(fs)
            prev_sets = sets
        stats = NodeStats.concatenate(parts)
        return stats.take(np.argsort(np.concatenate(rows)))

    def batches_from(self, levels: np.ndarray, source: FrequencySet, source_index: np.ndarray,
                     bounds: bool = True):
        """:meth:`evaluate_from` batch by batch: yields ``(rows, stats, sets)``, the slice of
        ``levels`` a batch holds, its results and its frequency sets (not cached)."""
        source_index = np.asarray(source_index, dtype=np.int64)
        size = source.host_ptr[source_index + 1] - source.host_ptr[source_index]
        for start, stop in self._split(np.zeros(len(levels), np.int64), size):
            stats, sets = self.evaluator.evaluate(levels[start:stop], source,
                                                  source_index[start:stop], bounds=bounds)
            self.evaluations += stop - start
            yield slice(start, stop), stats, sets

    def _split(self, source_batch: np.ndarray, source_size: np.ndarray,
               budget: int | None = None):
        """``(start, stop)`` runs of nodes sharing a source batch, each run's source entries
        at most ``budget`` (by default ``batch_entries``; one node at least)."""
        budget = budget or self.batch_entries
        start = 0
        n = len(source_batch)
        while start < n:
            same = start + int(np.searchsorted(source_batch[start:], source_batch[start],
                                               side="right"))
            cumulative = np.cumsum(source_size[start:same])
            stop = start + max(1, int(np.searchsorted(cumulative, budget, side="right")))
            yield start, stop
            start = stop
