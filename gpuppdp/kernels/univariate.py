"""Optimal univariate microaggregation (Hansen and Mukherjee 2003, "A polynomial algorithm for
optimal univariate microaggregation", IEEE TKDE 15(4)): the grouping of one sorted column
into runs of ``k`` to ``2k - 1`` consecutive values with the least within-group sum of
squares (SSE), as the shortest path from node 0 to node ``n`` of the graph whose arc
``i -> j`` (``k <= j - i <= 2k - 1``) weighs the SSE of the sorted values ``i..j-1``.

The path is found by dynamic programming in ``O(n k)``: each group's SSE is accumulated
with Welford's update while walking back from ``j``; on a tie the shorter last group wins.
A CPU kernel: on a GPU the sorted column is brought to the host for it (the program is
sequential), and the groups go back.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .aot import ahead_of_time


@njit(cache=True, nogil=True)
def optimal_groups(v, k, label):
    """``label[p]``: the first position of the group of sorted position ``p``, for the
    optimal grouping of the sorted values ``v`` (``len(v) >= k``)."""
    n = v.shape[0]
    cost = np.full(n + 1, np.inf)
    cost[0] = 0.0
    start = np.zeros(n + 1, np.int64)
    for j in range(k, n + 1):
        mean = 0.0
        m2 = 0.0
        for s in range(1, min(2 * k - 1, j) + 1):
            x = v[j - s]
            delta = x - mean
            mean += delta / s
            m2 += delta * (x - mean)
            if s >= k and cost[j - s] + m2 < cost[j]:
                cost[j] = cost[j - s] + m2
                start[j] = j - s
    j = n
    while j > 0:
        i = start[j]
        label[i:j] = i
        j = i


ahead_of_time(optimal_groups, ["none(float64[::1], int64, int64[::1])"])
