"""Throughput of the perturbation methods (``gpuppdp.perturb``): values per second.

Per method, on ``--rows`` values (10 M by default) drawn once on the backend: rank swapping
(p = 5 %), additive noise (one column, 50 %), correlated noise (5 columns, 50 %), PRAM (20
categories, the invariant matrix of their frequencies, retention 0.8), permutation within
groups (10,000 groups) and top coding.  One warm-up, then ``--repeats`` timed runs (median,
min), with the device synchronized.  Issue 34's goals: rank swapping, noise and PRAM at
>= 50 M values/s on a GPU and >= 5 M/s on the CPU.

MDAV microaggregation (k = 5, 5 correlated columns, drawn on the backend), each timed once
after a small warm-up: exact on ``--mdav-rows`` records (goal: 10^5 in <= 5 s on the 2-core
box, 10^6 in <= 5 s on one H100), and in partitions of ``--partition-rows`` on
``--mdav-census-rows`` records (goal: 10^8 in <= 3 min on a GPU), whose information loss on a
10^5-record sample is compared with exact MDAV's on the same sample (goal: within 5 %).
V-MDAV (k = 5, gamma 0.2) exactly on ``--vmdav-rows`` records of the same 5 columns, and the
optimal univariate grouping (k = 5) of ``--optimal-rows`` values of one column, each timed
once after a small warm-up.  ``--mdav-exact-only``: exact MDAV alone, on ``--mdav-rows``
records, after a warm-up on ``--mdav-check-rows`` records whose groups must be the CPU
backend's (exit status 1 otherwise): on a GPU, one partition that large runs on the whole
grid (:mod:`gpuppdp.kernels.mdav_grid`).

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_perturb.json``);
it asserts nothing about time.  Example::

    python benchmarks/bench_perturb.py --backend cpu --rows 1e7 --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _common import (add_common_args, fmt_seconds, machine_info, print_machine, print_table,
                     resolve_backend, row_count, summarize, synchronizer, timed_runs,
                     write_json)

from gpuppdp.perturb import (add_noise, invariant_pram_matrix, microaggregate, permute_within,
                             pram, random_source, rank_swap, top_code)


def mdav_cases(backend, sync, rows: int, census_rows: int, partition_rows: int,
               vmdav_rows: int, optimal_rows: int) -> list:
    """Exact MDAV on ``rows`` records, partitioned MDAV on ``census_rows`` and the two
    information losses on a 10^5-record sample; exact V-MDAV on ``vmdav_rows`` records and
    the optimal grouping of ``optimal_rows`` values of one column."""
    xp = backend.xp
    xp.random.seed(7)
    mix = xp.asarray(np.random.default_rng(7).normal(size=(5, 5)))

    def table(n):
        return xp.random.standard_normal((n, 5)) @ mix

    print("  compiling MDAV, V-MDAV and the optimal grouping", file=sys.stderr, flush=True)
    for method in ("mdav", "vmdav"):  # compile (the block forms)
        microaggregate(table(1_000), 5, method=method, partition_rows=200, backend=backend)
    microaggregate(table(4_000), 5, backend=backend)  # and exact MDAV's grid form on a GPU
    microaggregate(table(1_000)[:, 0], 5, method="optimal", backend=backend)
    out = []
    for name, n, part, method, columns in (
            ("MDAV exact", rows, None, "mdav", 5),
            (f"MDAV in partitions of {partition_rows:,}", census_rows, partition_rows, "mdav",
             5),
            ("V-MDAV exact", vmdav_rows, None, "vmdav", 5),
            ("optimal univariate", optimal_rows, None, "optimal", 1)):
        print(f"  start {name} ({n:,} rows)", file=sys.stderr, flush=True)
        x = table(n)[:, 0] if columns == 1 else table(n)
        sync()
        t0 = time.perf_counter()
        result = microaggregate(x, 5, method=method, partition_rows=part, backend=backend)
        sync()
        seconds = time.perf_counter() - t0
        out.append({**result.summary(), "method": name, "algorithm": method,
                    "columns": columns, "values": columns * n, "rows": n,
                    "seconds": summarize([seconds]),
                    "values_per_second": columns * n / seconds})
        del x, result
    sample = table(100_000)
    exact = microaggregate(sample, 5, backend=backend).information_loss
    parted = microaggregate(sample, 5, partition_rows=partition_rows,
                            backend=backend).information_loss
    out[1]["sample_information_loss"] = {"exact": exact, "partitioned": parted,
                                         "ratio": parted / exact}
    return out


def exact_mdav(backend, sync, rows: int, check_rows: int) -> dict:
    """Exact MDAV (k = 5) on ``rows`` records of 5 correlated columns, timed once after a
    warm-up on ``check_rows`` records whose groups are compared with the CPU backend's."""
    from gpuppdp.backend import cpu_backend

    rng = np.random.default_rng(7)
    mix = rng.normal(size=(5, 5))
    small = rng.standard_normal((check_rows, 5)) @ mix
    got = microaggregate(backend.asarray(small), 5, backend=backend).groups
    want = microaggregate(small, 5, backend=cpu_backend()).groups
    x = backend.asarray(rng.standard_normal((rows, 5)) @ mix)
    sync()
    t0 = time.perf_counter()
    result = microaggregate(x, 5, backend=backend)
    sync()
    seconds = time.perf_counter() - t0
    return {**result.summary(), "method": "MDAV exact", "algorithm": "mdav", "columns": 5,
            "values": 5 * rows, "rows": rows, "seconds": summarize([seconds]),
            "values_per_second": 5 * rows / seconds, "check_rows": check_rows,
            "same_groups_as_cpu": bool(np.array_equal(backend.to_host(got), want))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "bench_perturb")
    p.add_argument("--rows", type=row_count, default=10_000_000)
    p.add_argument("--mdav-rows", type=row_count, default=100_000)
    p.add_argument("--mdav-census-rows", type=row_count, default=1_000_000)
    p.add_argument("--partition-rows", type=row_count, default=20_000)
    p.add_argument("--vmdav-rows", type=row_count, default=100_000)
    p.add_argument("--optimal-rows", type=row_count, default=1_000_000)
    p.add_argument("--mdav-exact-only", action="store_true",
                   help="exact MDAV alone on --mdav-rows records, checked against the CPU")
    p.add_argument("--mdav-check-rows", type=row_count, default=20_000)
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    if args.mdav_exact_only:
        case = exact_mdav(backend, sync, args.mdav_rows, args.mdav_check_rows)
        print_table(["method", "values", "time", "values/s", "same groups as the CPU"],
                    [[f"MDAV exact ({args.mdav_rows:,} x 5, k = 5)", f"{case['values']:,}",
                      fmt_seconds(case["seconds"]["median"]),
                      f"{case['values_per_second'] / 1e6:,.2f} M/s",
                      f"{case['same_groups_as_cpu']} ({args.mdav_check_rows:,} rows)"]])
        write_json(args.json, {"benchmark": "bench_perturb", "machine": info, "repeats": 1,
                               "cases": [case]})
        return 0 if case["same_groups_as_cpu"] else 1
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
    for case in mdav_cases(backend, sync, args.mdav_rows, args.mdav_census_rows,
                           args.partition_rows, args.vmdav_rows, args.optimal_rows):
        results.append(case)
        t = case["seconds"]["median"]
        rows.append([f"{case['method']} ({case['rows']:,} x {case['columns']})",
                     f"{case['values']:,}",
                     fmt_seconds(t), f"{case['values_per_second'] / 1e6:,.1f} M/s"])
        print(f"  done {case['method']}: information loss {case['information_loss']:.5f}",
              file=sys.stderr, flush=True)
    print()
    print_table(["method", "values", "time", "values/s"], rows)
    loss = next(c["sample_information_loss"] for c in results if "sample_information_loss" in c)
    print(f"# information loss on a 10^5-record sample: exact {loss['exact']:.5f}, in "
          f"partitions of {args.partition_rows:,} {loss['partitioned']:.5f} "
          f"({100 * (loss['ratio'] - 1):+.1f} %)")
    write_json(args.json, {"benchmark": "bench_perturb", "machine": info, "rows": n,
                           "repeats": args.repeats, "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
