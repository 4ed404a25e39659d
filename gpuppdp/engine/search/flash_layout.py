"""The compiled Flash's layout: the entries of its work and configuration arrays, the rows
and bits of its node properties, its statuses and strategy tags -- shared by its kernels
(:mod:`.flash_kernels`, :mod:`.flash_cache`) and the module that lays the arrays out
(:mod:`.flash_compiled`) -- and a node's level in an attribute."""

from __future__ import annotations

import numpy as np

from ...kernels.nrt import njit_no_refcount
from .. import solution_space
from . import base

# The constants of the compiled code are NumPy integers: Numba types a Python int constant as
# a literal and compiles a helper once per distinct literal argument (seconds each).
_i64 = np.int64
CHECKED, ANON, NOTANON, KANON, NOTKANON, VISITED, SUCC_PRUNED, INSUFF = (
    _i64(b) for b in (solution_space.CHECKED, solution_space.ANON, solution_space.NOTANON,
                      solution_space.KANON, solution_space.NOTKANON, solution_space.VISITED,
                      solution_space.SUCC_PRUNED, solution_space.INSUFF))
TAG_NONE, TAG_PRUNED, TAG_VISITED, TAG_INSUFFICIENT, TAG_VISITED_INSUFFICIENT = (
    _i64(t) for t in (base.TAG_NONE, base.TAG_PRUNED, base.TAG_VISITED, base.TAG_INSUFFICIENT,
                      base.TAG_VISITED_INSUFFICIENT))
# statuses: an OVERFLOW run is repeated, larger; an AMBIGUOUS one without stopping checks
# early; an UNSURE one (a class verdict too close to call: flash_classes.UNSURE_VERDICT) is
# left to the Python traversal
OK, OVERFLOW, AMBIGUOUS, UNSURE = _i64(0), _i64(1), _i64(2), _i64(3)
# entries of the search's integer work array
ARENA_END, CACHED, CHECKED_NODES, CANDIDATES, OPTIMUM, STATUS = (_i64(i) for i in range(6))
ENDS, PTR = 6, 10  # work[6:10]: the roll-up's source start, stop, output start, length;
LIVE_FROM = 12     # work[10:12]: the checked node's class range for the loss sums; work[12]:
                   # the last slot the cache dropped (later slots are cached); work[13]: the
NEXT_SLOT = 13     # next slot; work[14]: the last node rolled up from the bottom set (-1:
FROM_BOTTOM = 14   # none yet)
WORK_SIZE = 15
# entries of its configuration array
(PREDICTIVE, HAS_K, PRUNING, INDEPENDENT_BOUND, UTILITY_FULL, BOTTOM, MIN_SIZE, MAX_SUPPRESSED,
 ROWS, METRIC, SENSITIVE_VALUES, MAX_CLASSES, PACK_BITS) = (_i64(i) for i in range(13))
# rows of the property array: bits set on the node alone, on cones above and below apexes,
# and the check's verdict (0 unchecked, 1 not anonymous, 2 anonymous, 3 not anonymous by a
# check stopped early, whose lower bound is the loss's prior bound)
EXPLICIT, UP, DOWN, VERDICT = (_i64(i) for i in range(4))
# rows of the metric's terms (q columns): each attribute's height (precision's level / height)
# and ARX's weight (divided by the largest), then the generalization and the suppression
# factor of the metric's gs-factor (every column the same; 1 and 1 at ARX's default 0.5)
HEIGHT, WEIGHT, G_FACTOR, S_FACTOR = (_i64(i) for i in range(4))
# the entropy metrics' codes among the metrics' (flash_compiled.METRIC_KINDS), the last ones
ENTROPY, ENTROPY_MONOTONIC, ENTROPY_NORMALIZED = _i64(7), _i64(8), _i64(9)
# the code of a metric computed after the search (KL divergence): a check records no loss and
# no lower bound (NaN), and the search then reads none (:func:`flash_compiled.run`)
DEFERRED = _i64(-1)
STOPPED = _i64(3)
ZERO, ONE = _i64(0), _i64(1)


@njit_no_refcount
def _level(g, lattice, j):
    """Node ``g``'s level in attribute ``j`` (``lattice``: max levels, strides)."""
    return g // lattice[1, j] % (lattice[0, j] + 1)
