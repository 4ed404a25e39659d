"""The census generator (``gpuppdp generate census``): rows per second and peak memory.

For each ``--rows`` N (default 1e6 and 1e7), ``--repeats`` runs, each in a fresh process (so
that its peak resident memory, ``ru_maxrss`` from ``os.wait4``, is its own): the process
imports gpuppdp, builds the generator's fixed tables (ZIP universe, lookup tables,
hierarchies; not timed), then times

* *generate*: ``census.iter_tables(N, seed)`` consumed without writing (the rows as Arrow
  tables, one row group at a time);
* *write*: ``census.write_census(DIR, N, seed)``: the same rows generated again and written
  to ``DIR/census.parquet`` (row groups of 2**20 rows, written by a second thread while the
  next is generated) plus the nine hierarchy files; what ``gpuppdp generate census`` does.

Reported: the median seconds of each, rows/s of *write* (the figure to compare with the
2 M rows/s goal), the peak RSS of the process (largest over the runs; it includes the
interpreter, NumPy, pandas and pyarrow, about 175 MiB, so compare N = 1e6 with 1e7 to see that
memory does not grow with N), the file size and row groups.  It prints a table and writes JSON
(``--json``, default ``benchmarks/out/bench_generate.json``); it asserts nothing about time.

Example::

    python benchmarks/bench_generate.py --rows 1e6 1e7 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from _common import (_positive, default_json, fmt_bytes, fmt_seconds, machine_info,
                     print_machine, print_table, write_json)

_CHILD = r"""
import json, os, sys, time
from gpuppdp import census
rows, seed, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
census._universe(); census._tables(); census.census_hierarchies()
t0 = time.perf_counter()
for _ in census.iter_tables(rows, seed):
    pass
generate = time.perf_counter() - t0
t0 = time.perf_counter()
files = census.write_census(folder, rows, seed)
write = time.perf_counter() - t0
print(json.dumps({"generate_seconds": generate, "write_seconds": write,
                  "row_groups": files.row_groups, "bytes": os.path.getsize(files.table)}))
"""


def _count(text: str) -> int:
    """A row count: ``1000000`` or ``1e6``."""
    try:
        return _positive(str(int(float(text))))
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected a row count like 1e6, got {text!r}")


def run_once(rows: int, seed: int, folder: str) -> dict:
    """One run in a fresh process: its timings and its own peak RSS (bytes)."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(rows), str(seed), folder],
                                stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode:
        raise SystemExit(f"error: the run with {rows} rows failed (status {proc.returncode})")
    result = json.loads(text.strip().splitlines()[-1])
    rss = usage.ru_maxrss
    result["peak_rss_bytes"] = int(rss if sys.platform == "darwin" else rss * 1024)
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=_count, nargs="+", default=[1_000_000, 10_000_000],
                   help="row counts (default: 1e6 1e7)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=_positive, default=3,
                   help="runs per row count, each in its own process (default 3)")
    p.add_argument("--json", default=default_json("bench_generate"),
                   help=f"where to write the results (default {default_json('bench_generate')})")
    args = p.parse_args(argv)

    from gpuppdp.backend import cpu_backend

    info = machine_info(cpu_backend())
    print_machine(info)
    print(f"# median of {args.repeats} runs per row count, each in a fresh process; "
          "peak RSS = largest over the runs\n")
    cases, table = [], []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.rows:
            runs = [run_once(n, args.seed, folder) for _ in range(args.repeats)]
            gen = statistics.median(r["generate_seconds"] for r in runs)
            write = statistics.median(r["write_seconds"] for r in runs)
            rss = max(r["peak_rss_bytes"] for r in runs)
            cases.append({"rows": n, "seed": args.seed, "runs": runs,
                          "generate_seconds_median": gen, "write_seconds_median": write,
                          "write_rows_per_second": n / write, "peak_rss_bytes": rss,
                          "file_bytes": runs[0]["bytes"], "row_groups": runs[0]["row_groups"]})
            table.append([f"{n:,}", fmt_seconds(gen), f"{n / gen:,.0f}", fmt_seconds(write),
                          f"{n / write:,.0f}", fmt_bytes(rss), fmt_bytes(runs[0]["bytes"]),
                          runs[0]["row_groups"]])
            print(f"  N={n:,}: write {fmt_seconds(write)}", file=sys.stderr, flush=True)
    print_table(["rows", "generate", "rows/s", "write", "rows/s", "peak RSS", "file",
                 "row groups"], table)
    write_json(args.json, {"benchmark": "bench_generate", "machine": info, "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
