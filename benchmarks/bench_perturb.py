"""Throughput of the perturbation methods (``gpuppdp.perturb``): values per second.

Per method, on ``--rows`` values (10 M by default) drawn once on the backend: rank swapping
(p = 5 %), additive noise (one column, 50 %), correlated noise (5 columns, 50 %), PRAM (20
categories, the invariant matrix of their frequencies, retention 0.8), permutation within
groups (10,000 groups) and top coding.  One warm-up, then ``--repeats`` timed runs (median,
min), with the device synchronized.  Issue 34's goals: rank swapping, noise and PRAM at
>= 50 M values/s on a GPU and >= 5 M/s on the CPU.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_perturb.json``);
it asserts nothing about time.  Example::

    python benchmarks/bench_perturb.py --backend cpu --rows 1e7 --repeats 3
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import (add_common_args, fmt_seconds, machine_info, print_machine, print_table,
                     resolve_backend, row_count, summarize, synchronizer, timed_runs,
                     write_json)

from gpuppdp.perturb import (add_noise, invariant_pram_matrix, permute_within, pram,
                             random_source, rank_swap, top_code)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "bench_perturb")
    p.add_argument("--rows", type=row_count, default=10_000_000)
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    n = args.rows
    rng = np.random.default_rng(1)
    income = backend.asarray(rng.lognormal(10, 1, size=n))
    table = backend.asarray(rng.normal(size=(n, 5)) @ rng.normal(size=(5, 5)))
    freq = np.bincount(rng.zipf(1.5, size=n) % 20, minlength=20)
    codes = backend.asarray(np.repeat(np.arange(20, dtype=np.int32), freq)[rng.permutation(n)])
    matrix = invariant_pram_matrix(freq, 0.8)
    groups = backend.asarray(rng.integers(0, 10_000, size=n))
    src = random_source(backend, seed=1)
    cases = [
        ("rank swap, p=5%", n, lambda: rank_swap(income, 5, source=src)),
        ("additive noise, 1 column", n, lambda: add_noise(income, 50, source=src)),
        ("correlated noise, 5 columns", 5 * n,
         lambda: add_noise(table, 50, method="correlated", source=src)),
        ("PRAM, 20 categories", n, lambda: pram(codes, matrix, source=src)),
        ("permutation within 10,000 groups", n, lambda: permute_within(income, groups,
                                                                       source=src)),
        ("top coding", n, lambda: top_code(income, 1e5)),
    ]
    results, rows = [], []
    for name, values, fn in cases:
        seconds, _ = timed_runs(fn, args.repeats, sync)
        t = summarize(seconds)
        results.append({"method": name, "values": values, "seconds": t,
                        "values_per_second": values / t["median"]})
        rows.append([name, f"{values:,}", f"{fmt_seconds(t['median'])} "
                     f"({fmt_seconds(t['min'])})", f"{values / t['median'] / 1e6:,.1f} M/s"])
        print(f"  done {name}", file=sys.stderr, flush=True)
    print()
    print_table(["method", "values", "time", "values/s"], rows)
    write_json(args.json, {"benchmark": "bench_perturb", "machine": info, "rows": n,
                           "repeats": args.repeats, "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
