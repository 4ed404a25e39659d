"""Device kernels of gpuppdp, installed as ``gpuppdp.kernels``.

Each kernel exists in up to three forms -- a plain array (``xp``) reference, a Numba ``@njit``
CPU form and a Numba ``@cuda.jit`` form -- and the functions here pick one for a
:class:`gpuppdp.backend.Backend`:

* ``kernels == "cpu"``: Numba CPU forms on NumPy arrays;
* ``kernels == "cuda"``: array forms on CuPy and the CUDA kernels on CuPy arrays;
* ``kernels == "cudasim"``: like ``"cuda"``, the CUDA kernels run under Numba's simulator on
  arrays transferred explicitly to the host and back (the CI stand-in for a GPU); launches
  larger than :data:`SIMULATED_THREADS` threads take the array or CPU forms there.
"""

from __future__ import annotations

import threading
import warnings
from typing import Callable

import numpy as np

from . import (aot, groupby, grouping, grouping_cuda, histograms, mdav, mdav_grid, segsum, subsets,
               univariate, vmdav)
from .cudalaunch import to_device_together
from .grouping import reused_scratch, small_pages

# A batch of a few nodes is a launch of a few blocks, by design: Numba's low-occupancy
# warning would print a line per such launch (through the CLI, a "gpuppdp: warning" each).
# (matched by its text: numba-cuda has its own warning classes)
warnings.filterwarnings("ignore", message=r".*Grid size \d+ will likely result in GPU "
                        r"under-utilization")

__all__ = ["cached_signatures", "compiled", "risk_kernels", "warm_up", "rollup", "reused_scratch",
           "small_pages", "classes", "common_groups", "marginal_counts", "loss_sums", "node_stats",
           "segment_min", "ordered_sums", "subset_stats", "groupby", "column_moments",
           "microaggregate_partitions", "optimal_univariate"]


def warm_up(*dispatchers, wanted=None) -> threading.Thread:
    """Start Numba's CPU target in a thread (its typing and lowering registries and BLAS
    check, paid on the first compiled call of a process, cached kernels or not), then
    load the given ``dispatchers``' machine code from Numba's on-disk cache (tens of
    milliseconds for a large function; nothing is compiled that is not cached) -- only the
    signatures for which ``wanted(dispatcher, signature)`` holds, when given -- so that a
    caller reading its input meanwhile finds them ready; returns the thread."""
    def start() -> None:
        try:
            groupby.space_of(np.ones(2, np.int64))
            for d in dispatchers:
                for signature in cached_signatures(d) or ():
                    if aot.attached(d, signature):
                        continue  # compiled ahead of time: nothing to load
                    if wanted is None or wanted(d, signature):
                        d.compile(signature)  # the signature of a cached overload: loaded
        except Exception:  # noqa: BLE001 - the search itself reports a broken Numba, in one line
            pass

    thread = threading.Thread(target=start, name="gpuppdp-warm-up")
    thread.start()
    return thread


def cached_signatures(dispatcher) -> list | None:
    """The signatures Numba's on-disk cache holds for ``dispatcher`` (for its current source),
    read from the cache's index; ``None`` when that cannot be read (a private Numba interface:
    never fail because of it)."""
    try:
        return [key[0] for key in dispatcher._cache._cache_file._load_index()]
    except Exception:  # noqa: BLE001
        return None


def compiled(*dispatchers, wanted=None) -> bool:
    """Whether the kernels a run will call -- ``dispatchers`` (default: the batched search's
    hot kernels, the roll-up and the group-by) -- are each compiled ahead of time
    (:mod:`.aot`) or in Numba's on-disk cache for the current source (a signature for which
    ``wanted(dispatcher, signature)`` holds, when given): when one is not, the run compiles it
    first (seconds).  ``True`` when that cannot be told."""
    for d in dispatchers or (grouping._rollup_njit_parallel, groupby._group_first):
        aot.status()  # the extension opened (its forms attached) if it is there
        if any(wanted is None or wanted(d, args) for args in aot._ATTACHED.get(d, ())):
            continue  # compiled ahead of time (the package's own table of attached forms)
        cached = cached_signatures(d)
        if cached is None:
            continue  # cannot be told
        if not any(wanted is None or wanted(d, signature) for signature in cached):
            return False
    return True


def risk_kernels() -> tuple:
    """The CPU kernels a risk report calls from Python (the class sizes' group-by and the
    attribute risks' subset walk), for :func:`compiled` (not their callees: those compile
    within them, and when the callers are compiled ahead of time a callee never has a form
    of its own to find)."""
    return (groupby._group_sorted, subsets.suffix_sets_njit, subsets.subtrees_njit)


#: under Numba's CUDA simulator (``kernels == "cudasim"``: a Python thread per CUDA thread)
#: launches of up to this many threads run the CUDA forms of the roll-up, the node
#: statistics and the loss sums, larger ones the array forms (the loss sums: the CPU form on
#: host copies; the same output)
SIMULATED_THREADS = 128


def rollup(backend, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
           node_map_off, maps_flat, node_radix, out=None, sync: bool = True):
    """Roll frequency sets up to a batch of nodes (see :func:`grouping.rollup_xp`);
    ``node_radix`` (B, q+1, host) is each node's number of codes per QID and sensitive value.
    Numba CPU form on the CPU, the CUDA form (:func:`grouping_cuda.rollup_cuda`) on a GPU.
    ``out``: host arrays to write into, for the CPU form only (see :func:`grouping.rollup_njit`; a
    GPU's allocations come from CuPy's memory pool).  Returns ``(codes, sens, count, first,
    ptr, host_ptr)``: the frequency sets, their offsets and the offsets on the host (int64);
    ``sync=False``, on a GPU: ``host_ptr`` may be ``None``, the sets then not waited for and
    their arrays longer than ``ptr[-1]`` (:func:`grouping_cuda.rollup_cuda`)."""
    if backend.kernels == "cpu":
        out = grouping.rollup_njit(src_codes, src_sens, src_count, src_first,
                                   np.asarray(node_src_start), np.asarray(node_src_stop),
                                   np.asarray(node_map_off, dtype=np.int64), maps_flat,
                                   node_radix, out)
        return out + (out[4].astype(np.int64, copy=False),)
    if out is not None:
        raise ValueError(f"rollup: out= is for the CPU form, not the {backend.kernels!r} one")
    if backend.kernels == "cuda":
        return grouping_cuda.rollup_cuda(backend.xp, src_codes, src_sens, src_count, src_first,
                                    node_src_start, node_src_stop, node_map_off, maps_flat,
                                    node_radix, sync)
    entries = int(np.sum(np.asarray(node_src_stop) - np.asarray(node_src_start)))
    if entries > SIMULATED_THREADS:
        out = grouping.rollup_xp(backend.xp, src_codes, src_sens, src_count, src_first,
                                 node_src_start, node_src_stop, node_map_off, maps_flat,
                                 node_radix)
        return out + (backend.to_host(out[4]).astype(np.int64),)
    host = [backend.to_host(a) for a in (src_codes, src_sens, src_count, src_first, maps_flat)]
    out = grouping_cuda.rollup_cuda(np, host[0], host[1], host[2], host[3], node_src_start,
                               node_src_stop, node_map_off, host[4], node_radix, sync)
    return tuple(backend.asarray(a) for a in out[:5]) + (out[5],)


def classes(backend, ptr, codes, radix, count, host_ptr=None):
    """Equivalence classes of rolled-up entries ``codes`` (C, q) with ``count`` records each,
    node ``b`` owning ``ptr[b]:ptr[b+1]`` (entries in canonical order) and ``radix`` (B, q) or
    (q,) (host) codes per QID: ``(class_of_entry, rep_entry, class_ptr, size, distinct,
    node)``, classes numbered node by node in order of first appearance (see
    :func:`groupby.group`), with their records, entries and node (int64).  On the CPU the
    totals come from the pass that numbers the classes (:func:`groupby.group_njit`); on a GPU,
    given ``host_ptr`` (``ptr`` on the host), from hash tables per node
    (:func:`grouping_cuda.classes_cuda`), else the array form's sorts."""
    xp = backend.xp
    if xp is np:
        return groupby.group_njit(codes, radix, ptr, count=count)
    device = backend.kernels == "cuda"
    if host_ptr is not None and (device or int(host_ptr[-1]) <= SIMULATED_THREADS):
        on = (ptr, codes, count) if device else [backend.to_host(a) for a in (ptr, codes, count)]
        out = grouping_cuda.classes_cuda(xp if device else np, on[0], host_ptr, on[1], radix,
                                         on[2])
        if out is not None:
            return out if device else tuple(backend.asarray(a) for a in out)
    class_of_entry, rep, class_ptr = groupby.group(xp, codes, radix, ptr=ptr)
    n_classes = int(rep.shape[0])
    size = groupby.count_keys(xp, class_of_entry, n_classes,
                              count.astype(xp.float64)).astype(xp.int64)
    distinct = groupby.count_keys(xp, class_of_entry, n_classes)
    return (class_of_entry, rep, class_ptr, size, distinct,
            groupby.segment_ids(xp, class_ptr, n_classes))


def common_groups(backend, node_a, codes_a, node_b, codes_b):
    """Group the rows of two code tables by (node, codes): ``(group_a, group_b, n_groups)``,
    equal group ids for rows of either table with the same node and the same codes; groups
    are numbered in order of first appearance, table ``a`` first."""
    xp = backend.xp
    n_a = codes_a.shape[0]
    dtype = codes_a.dtype if codes_a.dtype.itemsize >= codes_b.dtype.itemsize else codes_b.dtype
    node = xp.concatenate([node_a.astype(xp.int64), node_b.astype(xp.int64)])
    codes = xp.concatenate([codes_a.astype(dtype), codes_b.astype(dtype)])
    cols = [node] + [codes[:, j] for j in range(codes.shape[1])]
    group, rep, _ = groupby.group(xp, cols)
    return group[:n_a], group[n_a:], int(rep.shape[0])


def marginal_counts(backend, codes, count, sizes) -> list[np.ndarray]:
    """Per column ``j`` of ``codes`` (E, q): the summed ``count`` of each code
    ``0..sizes[j]-1``, host int64 arrays (e.g. a frequency set's records per leaf of each QID).
    CPU: one pass over the entries (:func:`groupby.marginal_counts_njit`); array form: a
    weighted ``bincount`` per column (float64: exact for whole numbers below 2^53)."""
    if backend.kernels == "cpu":
        return groupby.marginal_counts_njit(codes, count, sizes)
    if codes.shape[0] == 0:  # CuPy's bincount fails on an empty array before CuPy 14.2
        return [np.zeros(int(size), np.int64) for size in sizes]
    xp = backend.xp
    weights = count.astype(xp.float64)
    return [np.rint(backend.to_host(xp.bincount(codes[:, j].astype(xp.int64), weights=weights,
                                                minlength=int(size)))).astype(np.int64)
            for j, size in enumerate(sizes)]


def loss_sums(backend, size, codes, outlier, ptr, off, share, charge=None, keep=None):
    """Per-node ordered sums of ARX's loss terms; host ``(charged, kept)`` arrays (B, q).

    ``off`` is a host (B, q) array of offsets into ``share``; see :mod:`.segsum`.  ``charge``
    and ``keep`` (B,) host bool, optional: the nodes whose charged sums, and whose kept sums,
    are wanted; every form skips the nodes in neither (NaN there; one pass gives both sums, so
    a node may get both) -- on a large table, the sums of the many classes of nodes not
    anonymous would be most of a search's time on a GPU, which adds each node's terms in order
    on one thread.
    """
    if backend.kernels == "cpu":
        return segsum.loss_sums_njit(size, codes, outlier, ptr, off, share, charge, keep)
    n_nodes, q = off.shape
    if charge is None or keep is None:  # None: every node
        wanted = np.ones(n_nodes, dtype=bool)
    else:
        wanted = np.asarray(charge, dtype=bool).reshape(n_nodes) | \
            np.asarray(keep, dtype=bool).reshape(n_nodes)
    nodes = np.flatnonzero(wanted).astype(np.int64)
    if backend.kernels == "cudasim":
        host = [backend.to_host(a) for a in (size, codes, outlier, ptr, share)]
        if len(nodes) * q * segsum.LOSS_TILE > SIMULATED_THREADS:
            return segsum.loss_sums_njit(host[0], host[1], host[2], host[3], off, host[4],
                                         wanted, wanted)
        charged, kept = np.full(off.shape, np.nan), np.full(off.shape, np.nan)
        return segsum.loss_sums_cuda(host[0], host[1], host[2], host[3], off, host[4],
                                     charged, kept, nodes)
    host = backend.to_host(_loss_sums_launch(backend.xp, size, codes, outlier, ptr, off, share,
                                             nodes))  # charged, kept: one copy back
    return host[0], host[1]


def _loss_sums_launch(xp, size, codes, outlier, ptr, off, share, nodes, wanted=None):
    """Device (2, B, q) charged and kept sums of the nodes ``nodes`` (host int64) -- of
    those among them ``wanted`` (device bool per node) when given -- NaN for the others,
    launched by :func:`segsum.loss_sums_cuda`."""
    sums = xp.full((2,) + off.shape, np.nan)
    device_off, device_nodes = to_device_together(xp, off, nodes)
    if wanted is not None:
        device_nodes = xp.where(wanted[device_nodes], device_nodes, -1)
    segsum.loss_sums_cuda(size, codes, outlier, ptr, device_off, share, sums[0], sums[1],
                          device_nodes)
    return sums


def loss_sums_device(backend, size, codes, outlier, ptr, off, share, wanted=None):
    """:func:`loss_sums` of the nodes ``wanted`` (device bool per node; ``None``: every
    node) left on the device, not waited for: (2, B, q) charged and kept sums, NaN for the
    others.  The classes may run past ``ptr[-1]`` (rows a roll-up left unwritten: not read).
    Under the simulator, :func:`loss_sums` on the host's copies."""
    if backend.kernels == "cuda":
        return _loss_sums_launch(backend.xp, size, codes, outlier, ptr, off, share,
                                 np.arange(off.shape[0], dtype=np.int64), wanted)
    n = int(backend.to_host(ptr)[-1])
    mask = None if wanted is None else backend.to_host(wanted)
    return backend.asarray(np.stack(loss_sums(backend, size[:n], codes[:n], outlier[:n], ptr,
                                              off, share, mask, mask)))


def node_stats_device(backend, size, outlier, ptr):
    """:func:`node_stats` without records in small classes, left on the device, not waited
    for; :func:`segsum.node_stats_on_host` reads its copy.  The classes may run past
    ``ptr[-1]`` (not read).  Under the simulator, :func:`node_stats` on the host's copies."""
    if backend.kernels == "cuda":
        return segsum.node_stats_launch(backend.xp, size, outlier, None, ptr)
    host_ptr = backend.to_host(ptr).astype(np.int64)
    n = int(host_ptr[-1])
    return backend.asarray(segsum.node_stats_on_host(
        node_stats(backend, size[:n], outlier[:n], None, ptr, host_ptr)))


def node_stats(backend, size, outlier, small, ptr, host_ptr):
    """Per node (classes ``ptr[b]:ptr[b+1]``, ``host_ptr`` on the host): records in
    ``outlier`` classes, records in ``small`` classes (0 where ``small`` is ``None``), kept
    (non-outlier) classes and the smallest kept class (0 when none is kept); one host int64
    array (B, 4).  CPU: one pass over the classes (:func:`segsum.node_stats_njit`); GPU: one
    launch, a thread per few consecutive classes (:func:`segsum.node_stats_cuda`); array form
    (large launches under the simulator): exact integer prefix sums and :func:`segment_min`."""
    if backend.kernels == "cpu":
        return segsum.node_stats_njit(size, outlier, small, host_ptr)
    if backend.kernels == "cuda":
        return segsum.node_stats_cuda(backend.xp, size, outlier, small, ptr, backend.to_host)
    if int(host_ptr[-1]) <= SIMULATED_THREADS:
        host = [None if a is None else backend.to_host(a) for a in (size, outlier, small)]
        return segsum.node_stats_cuda(np, host[0], host[1], host[2], host_ptr)
    xp = backend.xp
    n_nodes = host_ptr.shape[0] - 1
    zero = xp.zeros(1, dtype=size.dtype)

    def per_node(values):
        cs = xp.concatenate([xp.zeros(1, dtype=values.dtype), xp.cumsum(values)])
        return backend.to_host(cs[ptr[1:]] - cs[ptr[:-1]]).astype(np.int64)

    out = np.zeros((n_nodes, 4), dtype=np.int64)
    out[:, 0] = per_node(xp.where(outlier, size, zero))
    if small is not None:
        out[:, 1] = per_node(xp.where(small, size, zero))
    out[:, 2] = per_node((~outlier).astype(xp.int64))
    if int(host_ptr[-1]):
        big = int(size.max()) + 1
        smallest = backend.to_host(segment_min(backend, xp.where(outlier, big, size), ptr,
                                               host_ptr))
        out[:, 3] = np.where(smallest == big, 0, smallest)
    return out


def segment_min(backend, values, ptr, host_ptr):
    """Minimum of ``values`` per non-empty segment ``ptr`` (device result)."""
    if backend.kernels == "cpu":
        return np.minimum.reduceat(values, host_ptr[:-1])
    xp = backend.xp
    n_seg = host_ptr.shape[0] - 1
    seg = groupby.segment_ids(xp, ptr, values.shape[0])
    big = int(values.max()) + 1
    return xp.sort(seg * big + values)[ptr[:-1]] - xp.arange(n_seg, dtype=xp.int64) * big


def ordered_sums(backend, values, ptr, init=0.0, abs_prefix=False):
    """Left-to-right sum of each segment ``values[ptr[s]:ptr[s+1]]`` seeded with ``init``
    (``abs_prefix``: the sum of the absolute running sums instead); see :mod:`.histograms`.
    Device arrays in, a device float64 array (one value per segment) out."""
    if backend.kernels == "cpu":
        return histograms.ordered_sums_njit(values, ptr, init, abs_prefix)
    xp = backend.xp
    n_seg = ptr.shape[0] - 1
    if backend.kernels == "cudasim":
        out = np.empty(n_seg, dtype=np.float64)
        histograms.ordered_sums_cuda(backend.to_host(values).astype(np.float64),
                                     backend.to_host(ptr).astype(np.int64), init, abs_prefix,
                                     out)
        return backend.asarray(out)
    out = xp.empty(n_seg, dtype=xp.float64)
    histograms.ordered_sums_cuda(values.astype(xp.float64, copy=False),
                                 ptr.astype(xp.int64, copy=False), init, abs_prefix, out)
    return out


def subset_stats(backend, codes, radix, max_size, weights=None):
    """Groups and sums of squared class sizes of every subset of at most ``max_size``
    columns of a table (for distinction and separation; see :mod:`.subsets`): host int64
    arrays ``(groups, sumsq)`` indexed by mask (bit ``b`` = ``codes[b]``; -1 where not
    measured).  ``codes``: q device columns of codes, ``radix`` (q,) their cardinalities;
    ``weights`` (device, optional): the records each row stands for."""
    if backend.kernels == "cpu":
        n = int(codes[0].shape[0])
        w = np.ones(n, dtype=np.int64) if weights is None else \
            np.asarray(weights, dtype=np.int64)
        return subsets.all_subsets_njit(np.stack(codes).astype(np.int32, copy=False),
                                        np.asarray(radix, dtype=np.int64), int(max_size), w)
    groups, sumsq = subsets.all_subsets_xp(backend.xp, list(codes), [int(r) for r in radix],
                                           int(max_size), weights)
    return backend.to_host(groups), backend.to_host(sumsq)


#: rows at most of an MDAV run through the CUDA form under the simulator (a block's 128
#: threads are Python threads there); larger ones take the CPU form, which chooses the same
SIMULATED_MDAV_ROWS = 256


def column_moments(backend, x, center, power: int) -> np.ndarray:
    """Host (d,) sums of ``(x - center) ** power`` over the rows of ``x`` (n, d), the same
    floats on every backend: fixed chunks of rows summed in order, then the chunks' sums
    (:func:`.mdav.chunk_moments`)."""
    if backend.kernels == "cudasim":  # the CUDA form on host arrays, under the simulator
        return mdav.chunk_moments("cuda", np, backend.to_host(x), center, power).sum(axis=0)
    return mdav.chunk_moments(backend.kernels, backend.xp, x, center, power).sum(axis=0)


def microaggregate_partitions(backend, part_ptr, z, qz, scale: float, k: int,
                              method: str = "mdav", gamma: float = 0.0):
    """MDAV (``method`` "mdav") or V-MDAV ("vmdav", gain factor ``gamma``) groups of the rows
    of each partition ``part_ptr[t]:part_ptr[t+1]`` (host offsets) of ``z`` (n, d), ``qz``
    its fixed-point integers: per row (device int64) the row its group is named by; the same
    groups on every backend (see :mod:`.mdav`, :mod:`.vmdav`).  On a GPU, MDAV runs the
    partitions of at least :data:`.mdav_grid.MDAV_GRID_ROWS` rows per partition on the whole
    grid (:mod:`.mdav_grid`, one after another), the others a block each."""
    part_ptr = np.asarray(part_ptr, dtype=np.int64)
    n = z.shape[0]
    extra = () if method == "mdav" else (float(gamma),)
    cpu_form: Callable[..., None] = mdav.mdav_njit if method == "mdav" else vmdav.vmdav_njit
    if backend.kernels == "cpu" or (backend.kernels == "cudasim" and n > SIMULATED_MDAV_ROWS):
        host = [backend.to_host(a) for a in (z, qz)] if backend.kernels == "cudasim" else \
            [z, qz]
        label = np.full(n, -1, np.int64)
        cpu_form(part_ptr, np.ascontiguousarray(host[0]), np.ascontiguousarray(host[1]),
                 scale, k, *extra, label)
        return label if backend.kernels == "cpu" else backend.asarray(label)
    if backend.kernels == "cudasim":  # the CUDA forms on host arrays, under the simulator
        xp, z, qz = np, backend.to_host(z), backend.to_host(qz)
    else:
        xp, z, qz = backend.xp, backend.xp.ascontiguousarray(z), backend.xp.ascontiguousarray(qz)
    label = xp.full(n, -1, dtype=xp.int64)
    if method == "vmdav":
        vmdav.vmdav_cuda(xp, part_ptr, z, qz, scale, k, float(gamma), label)
        return label if xp is backend.xp else backend.asarray(label)
    grid_rows = mdav_grid.MDAV_GRID_ROWS * (len(part_ptr) - 1) \
        if k <= mdav_grid.MDAV_GRID_MAX_K else n + 1
    mdav.mdav_cuda(xp, part_ptr, z, qz, scale, k, label, max_rows=grid_rows - 1)
    for t in np.flatnonzero(np.diff(part_ptr) >= grid_rows):  # the few large partitions
        mdav_grid.mdav_grid(xp, int(part_ptr[t]), int(part_ptr[t + 1]), z, qz, scale, k, label)
    return label if xp is backend.xp else backend.asarray(label)


def optimal_univariate(backend, v, k: int):
    """Per sorted position (device int64) the first position of its group in the optimal
    grouping of the sorted column ``v`` into runs of ``k`` to ``2k - 1`` values
    (:mod:`.univariate`; a host kernel: on a GPU ``v`` goes to the host and back)."""
    label = np.empty(v.shape[0], np.int64)
    univariate.optimal_groups(np.ascontiguousarray(backend.to_host(v), dtype=np.float64),
                              int(k), label)
    return label if backend.kernels == "cpu" else backend.asarray(label)
