"""Host work per chunk of an out-of-core run, step by step (one thread).

``Anonymizer.fit_file`` reads a Parquet file one row group at a time; each chunk goes through
host work on the host threads before the ordered thread (the device's, on a GPU) sees it.  This
times each step on one 2^20-row row group of a generated census table (QIDs ``zip, age, sex,
race, marital, education``; every other column kept for the release), as
``encode_chunks`` and ``release_buckets`` call them:

* ``read`` -- the row group as an Arrow table (``LazyChunk.read``);
* ``check`` -- missing values in the QIDs (``check_complete``);
* ``leaf codes`` -- the QIDs' leaf codes (``leaf_codes``, through ``Hierarchy.leaf_domain``);
* ``scatter`` -- the rows to the bucket files of the release (``RowBuckets.scatter``);
* ``chunk set sorted`` / ``chunk set hashed`` -- the chunk's bottom frequency set on the CPU, as
  a sorted run (``kernels.sortedruns.chunk_set``) and hashed (``EncodedTable.bottom_of``);
* ``bucket read`` -- a bucket (about a chunk's rows) read back and shuffled
  (``RowBuckets.read``);
* ``membership`` -- a bucket's rows, at the bottom node, tested against 1 % of them as
  suppressed classes (``KeySet``; at the bottom node the key space is too large for a table
  over it).

It prints a table (median and min of ``--repeats`` calls after a warm-up) and writes JSON; it
asserts nothing about time.  Example::

    python benchmarks/bench_chunk.py --repeats 10
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from _common import (
    default_json,
    fmt_seconds,
    machine_info,
    print_machine,
    print_table,
    summarize,
    write_json,
)

CHUNK_ROWS = 1 << 20
QIDS = ["zip", "age", "sex", "race", "marital", "education"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=10, help="timed calls per step (default 10)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", default=default_json("bench_chunk"))
    args = p.parse_args(argv)

    import pyarrow.parquet as pq

    from gpuppdp.backend import cpu_backend
    from gpuppdp.census import write_census
    from gpuppdp.engine.encoding import EncodedTable, Role, check_complete, leaf_codes
    from gpuppdp.engine.transform import RowBuckets
    from gpuppdp.hierarchy import Hierarchy
    from gpuppdp.kernels import groupby, sortedruns

    info = machine_info(cpu_backend())
    print_machine(info)
    with tempfile.TemporaryDirectory(prefix="bench-chunk-") as folder:
        files = write_census(os.path.join(folder, "census"), 4 * CHUNK_ROWS, args.seed,
                             row_group_rows=CHUNK_ROWS)
        source = pq.ParquetFile(files.table, pre_buffer=False)
        columns = [c for c in source.schema_arrow.names if c != "person_id"]
        hierarchies = [Hierarchy.from_csv(files.hierarchies[c]) for c in QIDS]
        roles = {c: Role.QUASI_IDENTIFYING if c in QIDS else Role.INSENSITIVE for c in columns}
        enc = EncodedTable(cpu_backend(), QIDS, hierarchies, None, 4 * CHUNK_ROWS, roles=roles)
        enc.level_maps()
        radix = enc.node_radix(np.zeros((1, len(QIDS)), np.int64))[0, :-1]

        def read():
            return source.read_row_groups([1], columns=columns)

        table = read()
        codes = np.stack([c.astype(enc.code_dtype)
                          for c in leaf_codes(table, QIDS, hierarchies, 0)], axis=1)
        steps = {
            "read": read,
            "check": lambda: check_complete(table, QIDS, 0),
            "leaf codes": lambda: leaf_codes(table, QIDS, hierarchies, 0),
            "chunk set sorted": lambda: sortedruns.chunk_set(codes, radix, 0),
            "chunk set hashed": lambda: enc.bottom_of(codes, None, 0),
        }
        seconds = {}
        for name, step in steps.items():
            step()  # warm-up (compilation, the domains' positions)
            seconds[name] = [_timed(step) for _ in range(args.repeats)]
        # scatter ``repeats`` chunks into the buckets of a table of that many chunks (buckets
        # of about a chunk each); then read those buckets back
        with RowBuckets(args.repeats * CHUNK_ROWS, CHUNK_ROWS, QIDS, spill_dir=folder,
                        seed=args.seed) as buckets:
            seconds["scatter"] = [_timed(lambda i=i: buckets.scatter(i * CHUNK_ROWS, table,
                                                                     codes))
                                  for i in range(args.repeats)]
            filled = buckets.filled()
            parts = []
            seconds["bucket read"] = []
            for b in filled:
                t0 = time.perf_counter()
                parts.append(buckets.read(b))
                seconds["bucket read"].append(time.perf_counter() - t0)
        failing = codes[np.random.default_rng(args.seed).random(len(codes)) < 0.01]
        failing = failing[np.unique(failing, axis=0, return_index=True)[1]]
        classes = groupby.KeySet(np, failing, radix)
        bucket_codes = np.stack([parts[0][c].to_numpy() for c in QIDS], axis=1)
        classes.contains(bucket_codes)
        seconds["membership"] = [_timed(lambda: classes.contains(bucket_codes))
                                 for _ in range(args.repeats)]

    rows, cases = [], []
    for name, values in seconds.items():
        t = summarize(values)
        rows.append([name, fmt_seconds(t["median"]), fmt_seconds(t["min"]), len(values)])
        cases.append({"step": name, "seconds": t, "rows": CHUNK_ROWS})
    print(f"\none 2^20-row chunk of the census ({len(columns)} kept columns), one thread\n")
    print_table(["step", "median", "min", "calls"], rows)
    print()
    write_json(args.json, {"machine": info, "chunk_rows": CHUNK_ROWS, "cases": cases})
    return 0


def _timed(step) -> float:
    t0 = time.perf_counter()
    step()
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
