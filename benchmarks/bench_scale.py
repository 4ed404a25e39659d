"""Scaling: time to the optimum on Adult replicated, with perturbation, to N rows.

The table: Adult's 30,162 rows repeated cyclically to ``--rows`` N (default 1,000,000; 1e7
works given the memory), then, seeded (``--seed``):

* ``age`` moved by a random offset in ``[-age-jitter, +age-jitter]`` (default 2) and clipped
  to 1..100, the leaves of the age hierarchy, so every value stays in the hierarchy;
* every other column: each value, with probability ``--swap-prob`` (default 0.01), swapped
  with another selected value of the same column (a random permutation of the selected
  positions), so the values stay in the column's domain and the marginals are unchanged.

Then ``Anonymizer(...).fit`` (flash, 8 QIDs = all but ``occupation``, k=5, suppression 5 %,
metric loss by default): one warm-up run (on the same table; ``--warmup small`` warms up on
the original Adult instead, which compiles the kernels at a fraction of the cost), then
``--repeats`` timed runs.  Reported, median and min: encode (encoding + bottom frequency
set), search (``result.search.seconds``), release, total; the nodes evaluated; the peak
resident memory of the process (``ru_maxrss``, a high-water mark: it includes the generated
table and every earlier run; the value after generation is printed as the baseline); on the
GPU also the bytes CuPy's memory pool holds after each run (the pool keeps freed blocks, so
this approximates the device peak).  The optimum is printed too.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_scale.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_scale.py --rows 1000000 --backend cpu
    python benchmarks/bench_scale.py --rows 10000000 --backend gpu --repeats 3
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np
import pandas as pd
from _common import (add_common_args, fmt_bytes, fmt_seconds, machine_info, maxrss_bytes,
                     print_machine, print_table, resolve_backend, row_count, summarize,
                     synchronizer, write_json)

from gpuppdp import Anonymizer, datasets


def scaled_adult(n_rows: int, seed: int, age_jitter: int = 2, swap_prob: float = 0.01
                 ) -> tuple[pd.DataFrame, dict]:
    """Adult repeated to ``n_rows`` rows with seeded perturbation (see the module docstring);
    returns the table (object columns, like :func:`gpuppdp.datasets.adult`) and the
    hierarchies."""
    data, hierarchies = datasets.adult()
    rng = np.random.default_rng(seed)
    idx = np.arange(n_rows, dtype=np.int64) % len(data)
    leaves = hierarchies["age"].leaves
    leaf_ints = np.array([int(v) for v in leaves])
    lo, hi = int(leaf_ints.min()), int(leaf_ints.max())
    # one shared string object per age, so the column costs one pointer per row
    age_label = np.empty(hi + 1, dtype=object)
    age_label[:] = [str(a) for a in range(hi + 1)]
    columns = {}
    for c in data.columns:
        base = data[c].to_numpy(dtype=object)
        if c == "age":
            ages = base.astype(np.int64)[idx]
            ages += rng.integers(-age_jitter, age_jitter + 1, size=n_rows)
            np.clip(ages, lo, hi, out=ages)
            columns[c] = age_label[ages]
            del ages
        else:
            col = base[idx]
            sel = np.flatnonzero(rng.random(n_rows) < swap_prob)
            col[sel] = col[rng.permutation(sel)]
            columns[c] = col
    return pd.DataFrame(columns), hierarchies


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_scale")
    p.add_argument("--rows", type=row_count, default=1_000_000, help="rows N (default 1e6)")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbation and release")
    p.add_argument("--age-jitter", type=int, default=2)
    p.add_argument("--swap-prob", type=float, default=0.01)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--suppression", type=float, default=0.05)
    p.add_argument("--metric", default="loss", choices=("loss", "precision", "discernibility"))
    p.add_argument("--search", default="flash", choices=("flash", "exhaustive", "levels"))
    p.add_argument("--qids", type=int, default=8, choices=(8, 9),
                   help="8 = all columns but occupation (default), 9 = all")
    p.add_argument("--warmup", default="full", choices=("full", "small"),
                   help="warm up on the scaled table (full) or on the original Adult (small)")
    args = p.parse_args(argv)

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    pool = backend.xp.get_default_memory_pool() if backend.name == "cupy" else None

    rss_start = maxrss_bytes()
    t0 = time.perf_counter()
    data, hierarchies = scaled_adult(args.rows, args.seed, args.age_jitter, args.swap_prob)
    gen_seconds = time.perf_counter() - t0
    rss_data = maxrss_bytes()
    print(f"# generated {len(data):,} rows in {fmt_seconds(gen_seconds)}; peak RSS "
          f"{fmt_bytes(rss_start)} at start, {fmt_bytes(rss_data)} after generation")

    if args.qids == 8:
        qids = {c: h for c, h in hierarchies.items() if c != "occupation"}
        insensitive = ["occupation"]
    else:
        qids, insensitive = dict(hierarchies), []

    anon = Anonymizer(quasi_identifiers=qids, insensitive=insensitive, k=args.k,
                      suppression_limit=args.suppression, metric=args.metric,
                      search=args.search, backend=backend, seed=args.seed)
    print(f"# {args.search}, {args.qids} QIDs, k={args.k}, suppression={args.suppression:g}, "
          f"metric={args.metric}, warm-up on the {args.warmup} table, repeats={args.repeats}; "
          f"times: median (min)\n")

    t0 = time.perf_counter()
    if args.warmup == "full":
        anon.fit(data)
    else:
        small, small_h = datasets.adult()
        sq = {c: small_h[c] for c in qids}
        Anonymizer(quasi_identifiers=sq, insensitive=insensitive, k=args.k,
                   suppression_limit=args.suppression, metric=args.metric, search=args.search,
                   backend=backend, seed=args.seed).fit(small)
    sync()
    warmup_seconds = time.perf_counter() - t0
    gc.collect()

    runs = []
    for i in range(args.repeats):
        if pool is not None:
            pool.free_all_blocks()
        sync()
        t0 = time.perf_counter()
        result = anon.fit(data)
        sync()
        wall = time.perf_counter() - t0
        run = {"wall": wall, **{k: float(v) for k, v in result.timings.items()},
               "search_seconds": result.search.seconds,
               "nodes_evaluated": result.nodes_evaluated,
               "maxrss_bytes": maxrss_bytes()}
        if pool is not None:
            run["cupy_pool_total_bytes"] = int(pool.total_bytes())
        runs.append(run)
        if i == args.repeats - 1:
            optimum = result.summary()
        del result
        gc.collect()
        print(f"  run {i + 1}/{args.repeats}: total {fmt_seconds(wall)}", file=sys.stderr,
              flush=True)

    steps = {name: summarize([r[name] for r in runs])
             for name in ("encode", "search", "release", "total")}
    rss_peak = max(r["maxrss_bytes"] for r in runs)
    headers = ["rows", "encode", "search", "release", "total", "nodes", "peak RSS",
               "RSS after gen"]
    row = [f"{args.rows:,}"] + [
        f"{fmt_seconds(steps[n]['median'])} ({fmt_seconds(steps[n]['min'])})"
        for n in ("encode", "search", "release", "total")] + [
        optimum["nodes_evaluated"], fmt_bytes(rss_peak), fmt_bytes(rss_data)]
    if pool is not None:
        headers.append("GPU pool")
        row.append(fmt_bytes(max(r["cupy_pool_total_bytes"] for r in runs)))
    print()
    print_table(headers, [row])
    print(f"\noptimum: {optimum['transformation']}")
    print(f"  information loss {optimum['information_loss']:.6g}, "
          f"{optimum['equivalence_classes']:,} classes, "
          f"{optimum['suppressed_records']:,} suppressed records, smallest class "
          f"{optimum['smallest_class']:,}, lattice {optimum['lattice_size']:,} nodes")

    optimum.pop("timings", None)
    write_json(args.json, {
        "benchmark": "bench_scale", "machine": info,
        "settings": {"rows": args.rows, "seed": args.seed, "age_jitter": args.age_jitter,
                     "swap_prob": args.swap_prob, "k": args.k,
                     "suppression": args.suppression, "metric": args.metric,
                     "search": args.search, "qids": args.qids, "warmup": args.warmup,
                     "repeats": args.repeats, "warmup_runs": 1},
        "generation_seconds": gen_seconds, "warmup_seconds": warmup_seconds,
        "maxrss_bytes": {"start": rss_start, "after_generation": rss_data,
                         "peak": rss_peak},
        "seconds": steps, "runs": runs, "optimum": optimum})
    return 0


if __name__ == "__main__":
    sys.exit(main())
