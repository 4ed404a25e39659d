"""Risk-based search at census scale: average re-identification risk or population uniqueness
on a generated census.

For every ``--rows`` N the census of :func:`gpuppdp.datasets.census` (what ``gpuppdp generate
census --rows N`` writes; QIDs zip, age, sex, race, marital, education; the other columns
insensitive) is anonymized in memory under ``AverageReidentificationRisk(--t)`` (optionally
with ARX's highest-risk and records-at-risk thresholds, ``--highest`` and ``--records``), or
with ``--model pitman|zayatz|snb|dankar`` under ``PopulationUniqueness(--t, model=...)`` for
the population ``--population`` (an ARX region or a size; default ``usa``), and
``--suppression`` (default 5 %), the loss metric and ``--search`` (default ``auto``).  Per N:
one warm-up fit (it compiles the kernels a fresh process compiles) and ``--repeats`` timed
ones; reported: the nodes checked, the search time (``result.search.seconds``) and the
total (``result.timings["total"]``: encoding, search, release), the optimum, its loss and
suppressed records, and the peak resident memory.  The goal of issue 35 is a risk-based
search at 10^7 rows within 60 s on a 2-core CPU.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_risk_models.json``);
it asserts nothing about time.

Examples::

    python benchmarks/bench_risk_models.py --rows 1e6 1e7 --backend cpu --repeats 1
    python benchmarks/bench_risk_models.py --rows 1e7 --model dankar --t 0.01 --backend cpu
"""

from __future__ import annotations

import argparse
import sys
import time

from _common import (add_common_args, fmt_seconds, machine_info, maxrss_bytes, print_machine,
                     print_table, resolve_backend, row_count, summarize, synchronizer,
                     timed_runs, write_json)

from gpuppdp import Anonymizer, AverageReidentificationRisk, PopulationUniqueness, datasets

QUASI_IDENTIFIERS = ("zip", "age", "sex", "race", "marital", "education")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=row_count, nargs="+", default=[10 ** 6, 10 ** 7])
    p.add_argument("--model", default="average", choices=("average", "pitman", "zayatz", "snb",
                                                           "dankar"),
                   help="average risk, or population uniqueness with this estimator")
    p.add_argument("--t", type=float, default=0.05, help="the model's threshold (0.05)")
    p.add_argument("--population", default="usa",
                   help="population uniqueness: an ARX region or a population size (usa)")
    p.add_argument("--highest", type=float, default=None, help="ARX's highest risk")
    p.add_argument("--records", type=float, default=None, help="ARX's records at risk")
    p.add_argument("--suppression", type=float, default=0.05)
    p.add_argument("--search", default="auto")
    p.add_argument("--seed", type=int, default=0)
    add_common_args(p, "bench_risk_models")
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)
    sync = synchronizer(backend)
    if args.model == "average":
        model = AverageReidentificationRisk(args.t, highest_risk=args.highest,
                                            records_at_risk=args.records)
    elif args.population.replace(".", "").replace("e", "").isdigit():
        model = PopulationUniqueness(args.t, model=args.model,
                                     population_size=float(args.population))
    else:
        model = PopulationUniqueness(args.t, model=args.model, region=args.population)
    rows_out, table = [], []
    for n in args.rows:
        t0 = time.perf_counter()
        data, hierarchies = datasets.census(n, args.seed)
        generated = time.perf_counter() - t0
        anonymizer = Anonymizer(
            quasi_identifiers={q: hierarchies[q] for q in QUASI_IDENTIFIERS},
            insensitive=[c for c in data.columns if c not in QUASI_IDENTIFIERS],
            models=[model], suppression_limit=args.suppression, metric="loss",
            search=args.search, backend=backend)
        seconds, results = timed_runs(lambda: anonymizer.fit(data), args.repeats, sync)
        result = results[-1]
        search = summarize([r.search.seconds for r in results])
        total = summarize([r.timings["total"] for r in results])
        row = {"rows": n, "model": repr(model), "suppression_limit": args.suppression,
               "search": result.search.strategy, "nodes_checked": result.nodes_evaluated,
               "search_seconds": search, "total_seconds": total,
               "fit_wall_seconds": summarize(seconds), "generate_seconds": generated,
               "transformation": result.transformation,
               "information_loss": result.information_loss,
               "suppressed_records": result.suppressed_records,
               "peak_rss_bytes": maxrss_bytes()}
        rows_out.append(row)
        table.append([f"{n:,}", row["search"], row["nodes_checked"],
                      fmt_seconds(search["median"]), fmt_seconds(total["median"]),
                      ",".join(str(v) for v in result.transformation.values()),
                      f"{result.information_loss:.6f}", result.suppressed_records,
                      f"{row['peak_rss_bytes'] / 2 ** 30:.1f}GiB"])
        print(f"rows {n:,}: search {fmt_seconds(search['median'])}, total "
              f"{fmt_seconds(total['median'])}", file=sys.stderr, flush=True)
    print()
    print_table(["rows", "search", "nodes", "search s", "total s", "optimum", "loss",
                 "suppressed", "peak RSS"], table)
    write_json(args.json, {"benchmark": "bench_risk_models", "machine": info,
                           "qids": list(QUASI_IDENTIFIERS), "model": args.model, "t": args.t,
                           "highest_risk": args.highest, "records_at_risk": args.records,
                           "repeats": args.repeats, "results": rows_out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
