"""Run one Python peer of gpuppdp's perturbation methods on a table; run by
``bench_perturb_peers.py`` with the interpreter of the venv that holds the peers
(``--peers-python``), one task per process.

Not a benchmark itself and not imported by gpuppdp.  The table comes as a ``.npy`` file (float64,
(n, d)); every task is timed ``--repeats`` times (no warm-up unless the peer compiles: microagg1d
uses Numba, so it gets one untimed call first) and prints one JSON line: the peer's version, the
seconds of every call and the result.  Group labels go to ``--out`` (an ``.npy`` file).

Tasks:

* ``anonypyx``: ``anonypyx.microaggregation.MDAVGeneric(df, columns).partition(k)`` (its own
  standardization: mean 0, sample standard deviation 1); labels to ``--out``.
* ``microagg1d``: ``microagg1d.univariate_microaggregation(x[:, 0], k, method=--method)``, the
  optimal univariate partition (Hansen and Mukherjee 2003); labels to ``--out``.  (Version 0.4.0's
  default, ``method="auto"``, i.e. "simple" with ``stable=1`` for k <= 21, was seen to return
  partitions above the optimum; "wilber" reached it in every case tried.)
* ``dp_sse``: ``microaggregation.calculate_sse_dynamic(x, k)`` of the PyPI package
  ``microaggregation``: the optimal partition of the rows *in the given order* into consecutive
  groups of ``k..2k-1`` rows; only the SSE comes back (the package returns no groups).
* ``pram``: ``pram.pram(df, m, alpha)`` of the PyPI package ``pram`` on integer-coded columns;
  prints the share of changed cells (it returns strings: compared as integers).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import time

import numpy as np


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", required=True, choices=("anonypyx", "microagg1d", "dp_sse", "pram"))
    p.add_argument("--input", required=True)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--out", default=None)
    p.add_argument("--m", type=float, default=0.8)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--method", default="auto", help="microagg1d's method")
    a = p.parse_args()
    x = np.load(a.input)
    seconds, result = [], {}

    if a.task == "anonypyx":
        import pandas as pd
        from anonypyx.microaggregation import MDAVGeneric

        df = pd.DataFrame(x, columns=[f"c{j}" for j in range(x.shape[1])])
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            clusters = MDAVGeneric(df, list(df.columns)).partition(a.k)
            seconds.append(time.perf_counter() - t0)
        labels = np.full(x.shape[0], -1, np.int64)
        for g, idx in enumerate(clusters):
            labels[np.asarray(idx, dtype=np.int64)] = g
        np.save(a.out, labels)
        dist = "anonypyx"
    elif a.task == "microagg1d":
        from microagg1d import univariate_microaggregation

        v = np.ascontiguousarray(x[:, 0])
        univariate_microaggregation(v[: 4 * a.k], a.k, method=a.method)  # compile, untimed
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            labels = np.asarray(univariate_microaggregation(v, a.k, method=a.method),
                                dtype=np.int64)
            seconds.append(time.perf_counter() - t0)
        np.save(a.out, labels)
        dist = "microagg1d"
        result["method"] = a.method
    elif a.task == "dp_sse":
        from microaggregation import calculate_sse_dynamic

        z = np.ascontiguousarray(x, dtype=np.float64)
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            sse = calculate_sse_dynamic(z, a.k)
            seconds.append(time.perf_counter() - t0)
        result["sse"] = float(sse)
        dist = "microaggregation"
    else:
        import pandas as pd
        import pram as pram_mod

        df = pd.DataFrame(x.astype(np.int64), columns=[f"c{j}" for j in range(x.shape[1])])
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            out = pram_mod.pram(df, m=a.m, alpha=a.alpha)
            seconds.append(time.perf_counter() - t0)
        result["changed_share"] = float((out.astype(np.int64).to_numpy() != df.to_numpy()).mean())
        dist = "pram"
    print(json.dumps({"peer": dist, "version": _version(dist), "seconds": seconds, **result}))


if __name__ == "__main__":
    main()
