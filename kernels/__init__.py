"""Device kernels of gpuppdp, installed as ``gpuppdp.kernels``.

Each kernel exists in up to three forms -- a plain array (``xp``) reference, a Numba ``@njit``
CPU form and a Numba ``@cuda.jit`` form -- and the functions here pick one for a
:class:`gpuppdp.backend.Backend`:

* ``kernels == "cpu"``: Numba CPU forms on NumPy arrays;
* ``kernels == "cuda"``: array forms on CuPy and the CUDA kernels on CuPy arrays;
* ``kernels == "cudasim"``: like ``"cuda"``, the CUDA kernels run under Numba's simulator on
  arrays transferred explicitly to the host and back (the CI stand-in for a GPU).
"""

from __future__ import annotations

import numpy as np

from . import grouping, segsum

__all__ = ["rollup", "classes", "segment_sum"]


def rollup(backend, src_codes, src_sens, src_count, src_first, node_src_start, node_src_stop,
           node_map_off, maps_flat):
    """Roll frequency sets up to a batch of nodes (see :func:`grouping.rollup_xp`)."""
    if backend.kernels == "cpu":
        return grouping.rollup_njit(src_codes, src_sens, src_count, src_first,
                                    np.asarray(node_src_start), np.asarray(node_src_stop),
                                    np.asarray(node_map_off, dtype=np.int64), maps_flat)
    return grouping.rollup_xp(backend.xp, src_codes, src_sens, src_count, src_first,
                              node_src_start, node_src_stop, node_map_off, maps_flat)


def classes(backend, ptr, codes, first):
    """Equivalence classes of rolled-up entries (see :func:`grouping.classes_xp`)."""
    if backend.kernels == "cpu":
        return grouping.classes_njit(ptr, codes, first)
    return grouping.classes_xp(backend.xp, ptr, codes, first)


def segment_sum(backend, values, ptr):
    """Ordered (left-to-right) float64 sums of ``values`` rows per segment ``ptr``."""
    if backend.kernels == "cpu":
        return segsum.segment_sum_njit(values, ptr)
    xp = backend.xp
    shape = (ptr.shape[0] - 1, values.shape[1])
    if backend.kernels == "cudasim":
        out = np.zeros(shape, dtype=np.float64)
        segsum.segment_sum_cuda(np.ascontiguousarray(backend.to_host(values), dtype=np.float64),
                                backend.to_host(ptr).astype(np.int64), out)
        return backend.asarray(out)
    out = xp.zeros(shape, dtype=xp.float64)
    return segsum.segment_sum_cuda(xp.ascontiguousarray(values, dtype=xp.float64),
                                   ptr.astype(xp.int64), out)
