"""Where :func:`gpuppdp.explore`'s time goes on a census lattice: the evaluator's stages timed.

One run of ``explore`` on a generated census of ``--rows`` rows (the ``census`` case of
``bench_explore.py``: 6 QIDs, 2,592 nodes, occupation sensitive, k=5, 5 % suppression), with
wall and CPU time (``time.process_time``: every thread of the process, so that a run on a shared
box says what it cost) summed per stage -- the roll-up of the frequency sets, the classes, the
models' verdicts, the per-node sums, the figures -- and the frequency-set entries of every node
summed (the work: each node is rolled up from a predecessor's set).  ``--warm-up`` first runs
the same on 10^4 rows (the kernels compiled).  A SHA-1 of the node table (12 significant
digits) tells whether two versions give the same figures.  Never asserts times.

Example::

    python benchmarks/profile_explore.py --rows 1e6
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import time

import numpy as np
from _common import machine_info, maxrss_bytes, resolve_backend, row_count, write_json

import gpuppdp
import gpuppdp.engine.evaluate as evaluate
import gpuppdp.tradeoff.exploration as exploration
from gpuppdp import datasets, kernels
from gpuppdp.census import DEMO_QUASI_IDENTIFIERS

STAGES = ((evaluate.Evaluator, "rollup", "rollup"), (evaluate.Evaluator, "_classes", "classes"),
          (evaluate.Evaluator, "outliers", "verdicts"), (kernels, "node_stats", "node sums"),
          (exploration.NodeFigures, "_figures", "figures"))


def timed_stages(acc: collections.Counter) -> None:
    """Wrap the stages so that each call adds its wall and CPU seconds to ``acc``; the
    evaluator's batches add their nodes' entries."""
    def wrap(owner, name, label):
        inner = getattr(owner, name)

        def timed(*args, **kw):
            c, w = time.process_time(), time.perf_counter()
            try:
                return inner(*args, **kw)
            finally:
                acc[f"{label} cpu"] += time.process_time() - c
                acc[f"{label} wall"] += time.perf_counter() - w
        setattr(owner, name, timed)

    for owner, name, label in STAGES:
        wrap(owner, name, label)
    evaluate_batch = evaluate.Evaluator.evaluate

    def counted(self, *args, **kw):
        stats, fs = evaluate_batch(self, *args, **kw)
        acc["entries"] += int(stats.entries.sum())
        acc["batches"] += 1
        return stats, fs
    evaluate.Evaluator.evaluate = counted


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=row_count, default=10 ** 5)
    p.add_argument("--backend", default="cpu", choices=("auto", "cpu", "gpu"))
    p.add_argument("--warm-up", action="store_true", help="first run 10^4 rows")
    p.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "out",
                                                  "profile_explore.json"))
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    qids = list(DEMO_QUASI_IDENTIFIERS)

    def run(rows):
        census, h = datasets.census(rows, 0)
        return gpuppdp.explore(census[qids + ["occupation"]],
                               quasi_identifiers={c: h[c] for c in qids},
                               sensitive=["occupation"], k=5, suppression_limit=0.05,
                               backend=backend)

    if args.warm_up:
        run(10 ** 4)
    acc: collections.Counter = collections.Counter()
    timed_stages(acc)
    load = os.getloadavg()
    c0, w0 = time.process_time(), time.perf_counter()
    found = run(args.rows)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    digest = hashlib.sha1(found.nodes.to_csv(float_format="%.12g").encode()).hexdigest()
    result = {"rows": args.rows, "nodes": len(found.nodes), "seconds": found.seconds,
              "wall": wall, "cpu": cpu, "stages": dict(sorted(acc.items())),
              "table_sha1": digest, "load_before": load, "load_after": os.getloadavg(),
              "machine": machine_info(backend), "max_rss_bytes": maxrss_bytes(),
              "numpy": np.__version__, "gpuppdp": os.path.dirname(gpuppdp.__file__)}
    print(f"rows {args.rows:,}: explore {found.seconds:.2f} s (wall {wall:.2f} s, cpu "
          f"{cpu:.2f} s), {acc['entries']:,} entries in {acc['batches']} batches")
    for key in sorted(acc):
        if key.endswith(" cpu"):
            label = key[:-4]
            print(f"  {label:10s} cpu {acc[key]:8.2f} s  wall {acc[label + ' wall']:8.2f} s")
    print(f"  table sha1 {digest}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
