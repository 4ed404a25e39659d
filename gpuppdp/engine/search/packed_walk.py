"""The CPU level walk of k-anonymity problems in packed codes: each batch of nodes rolled up
and judged in one compiled pass.

:meth:`~gpuppdp.engine.evaluate.LatticeOracle.evaluate_levels` rolls every node up from a direct
predecessor, which differs from it in one QID's level.  When the problem is one the compiled
Flash judges without a sensitive attribute (classes judged by their size alone: k-anonymity;
a metric the compiled Flash computes in its checks, :data:`~.flash_compiled.METRIC_KINDS`
but the deferred one, with the gs-factor and weights it takes; a CPU backend) and the QIDs'
codes pack into one word (:mod:`gpuppdp.kernels.packed`), the walk's frequency sets hold
packed codes and each of its batches runs here: the threads take runs of nodes
(:func:`~gpuppdp.kernels.groupby.run_tasks`), and each node's roll-up
(:func:`~gpuppdp.kernels.packed.rollup_packed`) is followed at once, its classes still in the
cache, by its verdicts, suppressed records and metric
(:func:`~.flash_kernels.record_classes`, the compiled Flash's, which the tests hold
equal to the batched evaluator's bit for bit).  A task writes its nodes back to back from
where its sources' entries would end; the sets stay where they were written
(:class:`PackedSets`, each node's start and length), not moved together (on 9-QID Adult the
move was an eighth of the walk).  The searches that walk the lattice level by
level (exhaustive, levels, Samarati's) walk so where they can (``evaluate_levels(walk=...)``)
and the bottom set has at most :data:`PACKED_WALK_ENTRIES` entries (a node's roll-up is one
thread's; the batched roll-up partitions large nodes among the threads); anything else walks
as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ...kernels.aot import CODE_TYPES, ahead_of_time
from ...kernels.groupby import balanced_runs, n_tasks_for, run_tasks
from ...kernels.hashtable import NO_GROUP, hashed_size
from ...kernels.packed import field_layout, pack, rollup_packed
from ..evaluate import NodeStats
from .flash_compiled import (METRIC_KINDS, _metric_tables, compiled_flash_refusal, metric_terms,
                             record_stats)
from .flash_record import record_classes
from .flash_layout import DEFERRED, ENTROPY, MAX_SUPPRESSED, METRIC, MIN_SIZE, PACK_BITS, ROWS

__all__ = ["PackedSets", "PackedWalk", "PACKED_WALK_ENTRIES"]

#: bottom sets of up to this many entries walk packed (census table, 6 QIDs, exhaustive search
#: on the 2-core box: 1.6x faster than the batched walk at 294 K entries, as fast at 946 K)
PACKED_WALK_ENTRIES = 1 << 19


@njit(cache=True, nogil=True)
def _walk_run(t, runs, out_base, run_len, src, src_count, start, length, field, mask, map_off,
              maps, out, out_count, out_len, ids, fields, lattice, cfg, terms, share,
              share_off, loss_table, rec_int, rec_float, bounds):
    """Task ``t``: nodes ``runs[t]:runs[t+1]`` one after the other, each rolled up from its
    source range ``start:start+length`` (one QID's field raised: ``field``, ``mask``,
    ``map_off``) into ``out`` from ``out_base[t]`` on, back to back, and judged into its
    record (its index in the batch)."""
    b0, b1 = runs[t], runs[t + 1]
    longest = np.int64(1)
    for b in range(b0, b1):
        longest = max(longest, length[b])
    table = np.full(hashed_size(longest), NO_GROUP, np.int32)
    slots = np.empty(longest, np.int64)
    outlier = np.empty(longest, np.bool_)
    sums = np.zeros((2, fields.shape[1]))
    ptr = np.zeros(2, np.int64)
    # the entropy metrics count values in the shares' place: one copy per task
    shares = share.copy() if cfg[METRIC] >= ENTROPY else share
    pos = out_base[t]
    for b in range(b0, b1):
        g = rollup_packed(src, src_count, start[b], length[b], field[b], mask[b], map_off[b],
                          maps, out, out_count, pos, table, slots)
        out_len[b] = g
        size = out_count[pos:pos + g]
        for c in range(g):
            outlier[c] = size[c] < cfg[MIN_SIZE]
        record_classes(ids[b], b, g, size, out[pos:pos + g], fields, outlier, lattice, cfg,
                       terms, shares, share_off[b:b + 1], loss_table, sums, ptr, rec_int,
                       rec_float, bounds)
        pos += g
    run_len[t] = pos - out_base[t]


_i1, _i2 = "int64[::1]", "int64[:, ::1]"
ahead_of_time(_walk_run, [
    f"none(int64, {', '.join([_i1] * 10)}, {c}[::1], {_i1}, {_i1}, {_i1}, {_i1}, {_i2}, {_i2}, "
    f"{_i1}, float64[:, ::1], float64[::1], {_i2}, float64[:, ::1], {_i2}, float64[:, ::1], int64)"
    for c in CODE_TYPES])


@dataclass
class PackedSets:
    """The frequency sets of a batch of a packed walk: node ``b``'s entries are ``words``
    and ``count`` at ``start[b]:start[b] + length[b]`` (in order of first appearance), the
    runs of the threads' tasks apart; ``rows`` of the arrays are written (from row 0)."""

    levels: np.ndarray
    words: np.ndarray
    count: np.ndarray
    start: np.ndarray
    length: np.ndarray
    rows: int


class PackedWalk:
    """The walk's batches of one evaluator in packed codes (see the module); :meth:`of` says
    whether the evaluator's problem is one."""

    def __init__(self, evaluator, lattice, fields: np.ndarray):
        self.evaluator, self.fields = evaluator, fields
        encoded, metric = evaluator.encoded, evaluator.metric
        self.lattice = np.stack([lattice.max_levels, lattice.strides]).astype(np.int64)
        self.cfg = np.zeros(int(PACK_BITS) + 1, np.int64)  # the compiled Flash's layout
        self.cfg[[MIN_SIZE, MAX_SUPPRESSED, ROWS, METRIC]] = (
            evaluator.min_class_size or 0, evaluator.max_suppressed, encoded.n_rows,
            METRIC_KINDS[metric.name])
        self.terms = metric_terms(metric)
        _, self.share, self.share_off, self.loss_table = _metric_tables(evaluator, lattice, None)

    @classmethod
    def of(cls, evaluator, lattice) -> "PackedWalk | None":
        """The packed walk of ``evaluator``'s problem, or ``None`` when it is not one."""
        if evaluator.backend.kernels != "cpu" or evaluator.carries_sensitive or \
                any(m.compiled_kind != "size" for m in evaluator.models) or \
                compiled_flash_refusal(evaluator.models, evaluator.metric) is not None or \
                METRIC_KINDS[evaluator.metric.name] == DEFERRED or \
                int(evaluator.bottom.host_ptr[-1]) > PACKED_WALK_ENTRIES:
            return None
        fields = field_layout(evaluator.encoded.level_sizes()[:, 0])
        return None if fields is None else cls(evaluator, lattice, fields)

    def bottom(self) -> PackedSets:
        """The bottom frequency set, its codes packed."""
        b = self.evaluator.bottom
        return PackedSets(b.levels, pack(b.codes, self.fields), b.count, b.host_ptr[:-1],
                          np.diff(b.host_ptr), int(b.host_ptr[-1]))

    def evaluate(self, levels: np.ndarray, ids: np.ndarray, source: PackedSets,
                 source_index: np.ndarray, out, bounds: bool) -> tuple[NodeStats, PackedSets]:
        """:meth:`.Evaluator.evaluate` of nodes ``levels`` (ids ``ids``), node ``b`` rolled up
        from node ``source_index[b]`` of ``source`` (the sets of direct predecessors),
        into ``out`` (:class:`~gpuppdp.engine.evaluate.RollupBuffers`' packed arrays)."""
        ev = self.evaluator
        levels = np.asarray(levels, dtype=np.int64)
        source_index = np.asarray(source_index, dtype=np.int64)
        src_levels = source.levels[source_index]
        raised = levels - src_levels
        if not ((raised >= 0).all() and (raised.sum(axis=1) <= 1).all()):
            raise ValueError("a source node must be a direct predecessor of its target, or "
                             "the node itself")
        j = np.argmax(raised, axis=1)  # (a node from itself: QID 0 through the identity map)
        rows = np.arange(len(levels))
        map_off = ev.map_off[j, src_levels[rows, j], levels[rows, j]]
        start, length = source.start[source_index], source.length[source_index]
        q = levels.shape[1]
        share_off = np.ascontiguousarray(self.share_off[np.arange(q)[None, :], levels])
        ends = np.concatenate([[0], np.cumsum(length)])
        runs = balanced_runs(ends, n_tasks_for(int(ends[-1]), len(levels), per_thread=2))
        out_base = ends[runs[:-1]]
        run_len = np.zeros(len(out_base), np.int64)
        out_len = np.zeros(len(levels), np.int64)
        rec_int, rec_float = np.empty((len(levels), 7), np.int64), np.empty((len(levels), 2))
        packed, _, count, _ = out
        run_tasks(_walk_run, len(out_base), runs, out_base, run_len, source.words, source.count,
                  start, length, np.ascontiguousarray(self.fields[0, j]),
                  np.ascontiguousarray(self.fields[1, j]), map_off, ev.maps, packed, count,
                  out_len, np.asarray(ids, dtype=np.int64), self.fields, self.lattice,
                  self.cfg, self.terms, self.share, share_off, self.loss_table, rec_int,
                  rec_float, np.int64(bounds))
        # each node's start: its task's base, then its task's nodes before it
        before = np.cumsum(out_len) - out_len
        task = np.repeat(np.arange(len(out_base)), np.diff(runs))
        out_start = out_base[task] + before - before[runs[:-1]][task]
        written = int(out_base[-1] + run_len[-1])
        return (record_stats(ev, rec_int, rec_float, levels),
                PackedSets(levels, packed, count, out_start, out_len, written))
