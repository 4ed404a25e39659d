"""Re-identification risk: attribute risks of every QID subset and the risk summary at scale.

Cases (median of ``--repeats`` timed runs after one warm-up):

* ``attributes q=9 (end to end)`` -- distinction and separation of all 511 subsets of the
  9-QID Adult table, from the DataFrame (dictionary encoding included); ARX needs about 2.0 s;
* ``attributes q=9 (encoded)`` -- the same from codes already on the device;
* ``attributes q=8 ...`` -- the 255 subsets of ARX's 8-QID reference set;
* ``summary N rows (encoded)`` -- class sizes, the sample risk summary and population
  uniqueness (Pitman, Zayatz, Dankar) of Adult's 8 QIDs replicated to ``--rows`` rows
  (10 M by default), from codes on the device.

Prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_risk.json``).
It never asserts times.

Example::

    python benchmarks/bench_risk.py --backend cpu
    python benchmarks/bench_risk.py --backend gpu --rows 1e8
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import (add_common_args, adult_qids, fmt_seconds, machine_info, maxrss_bytes,
                     print_machine, print_table, resolve_backend, summarize, synchronizer,
                     timed_runs, write_json)

from gpuppdp.analysis.risk import (attribute_risks, attribute_risks_encoded, class_sizes_encoded,
                                   encode_columns, population_uniqueness, sample_risk_summary)

ARX_ATTRIBUTE_SECONDS = 2.0  # ARX 3.9.2, 9-QID Adult, all subsets (reported by the project)
US_POPULATION = 317_238_626


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "bench_risk")
    p.add_argument("--rows", type=float, default=1e7,
                   help="rows of the replicated table for the summary case (default 1e7)")
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    xp = backend.xp
    info = machine_info(backend)
    print_machine(info)

    cases = []

    def case(name, fn, **extra):
        seconds, outs = timed_runs(fn, args.repeats, sync)
        cases.append({"case": name, "seconds": summarize(seconds), **extra})
        return outs[-1]

    for q in (9, 8):
        data, hierarchies, _ = adult_qids(q)
        qids = list(hierarchies)
        out = case(f"attributes q={q} (end to end)",
                   lambda: attribute_risks(data, qids, backend), subsets=2 ** q - 1,
                   rows=len(data), arx_seconds=ARX_ATTRIBUTE_SECONDS if q == 9 else None)
        assert len(out) == 2 ** q - 1
        codes, cards = encode_columns(data, qids, backend)
        case(f"attributes q={q} (encoded)",
             lambda: attribute_risks_encoded(codes, cards, qids, backend),
             subsets=2 ** q - 1, rows=len(data))

    data, hierarchies, _ = adult_qids(8)
    qids = list(hierarchies)
    codes, cards = encode_columns(data, qids, backend)
    rows = int(args.rows)
    reps = -(-rows // len(data))
    t0 = time.perf_counter()
    big = [xp.tile(c, reps)[:rows] for c in codes]
    sync()
    build = time.perf_counter() - t0

    def summary():
        sizes = class_sizes_encoded(big, cards, backend)
        s = sample_risk_summary(sizes, backend)
        pu = population_uniqueness(sizes, max(US_POPULATION, rows), backend)
        return s, pu

    s, pu = case(f"summary {rows:.3g} rows (encoded)", summary, rows=rows, subsets=None)
    cases[-1]["classes"] = s.equivalence_classes
    cases[-1]["population_uniqueness"] = pu
    cases[-1]["replicate_seconds"] = build

    print_table(["case", "rows", "subsets", "median", "min", "vs ARX"],
                [[c["case"], c["rows"], c.get("subsets"), fmt_seconds(c["seconds"]["median"]),
                  fmt_seconds(c["seconds"]["min"]),
                  (f"{c['arx_seconds'] / c['seconds']['median']:.0f}x"
                   if c.get("arx_seconds") else None)] for c in cases])
    print(f"# summary: {s.equivalence_classes} classes, Pitman {pu['pitman']}, "
          f"Zayatz {pu['zayatz']}, Dankar -> {pu['dankar_choice']}")
    write_json(args.json, {"machine": info, "cases": cases, "max_rss_bytes": maxrss_bytes(),
                           "numpy": np.__version__})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
