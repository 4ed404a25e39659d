"""Local recoding (ARX's ``optimizeIterativeFast``) and local suppression on Adult, against
ARX 3.9.2's references (``tests/data/arx_local_recoding.json``) and against full-domain
generalization and Mondrian.

For every reference case (k-anonymity, the loss metric, a suppression limit, records per
iteration): the full-domain optimum (``Anonymizer.fit``) and its local recoding
(``AnonymizationResult.local_recoding``), one warm-up and ``--repeats`` timed runs each,
median; the suppressed records and ARX's granularity (:func:`gpuppdp.analysis.utility.
granularity`, ARX's ``getGranularity().getArithmeticMean(false)``) beside ARX's, and the
ratio of our local recoding's time to ARX's ``optimizeIterativeFast`` time (and of
fit + local recoding to ARX's anonymize + getOutput + optimizeIterativeFast).  ARX's times
come from the reference file (its runner, one JVM, after warm-up); run them on the same
machine for a fair ratio.  Then, per case, the utility of the other releases of the same
data (``--no-utility`` skips them): the full-domain release, its local recoding,
sdcMicro-style local suppression of the table generalized to the full-domain optimum's
levels (cells suppressed instead of records) and Mondrian on the same hierarchies:
granularity, the global certainty penalty (GCP) and the suppressed records / cells, each
release checked (``check``, or ``check_cells`` with a suppressed cell matching any value).

It prints two tables and writes JSON (``--json``, default
``benchmarks/out/bench_local_recoding.json``); it asserts nothing about time::

    python benchmarks/bench_local_recoding.py --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

from _common import (HERE, add_common_args, machine_info, print_machine, print_table,
                     resolve_backend, timed_runs, write_json)

REFERENCE = os.path.join(HERE, os.pardir, "tests", "data", "arx_local_recoding.json")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_local_recoding")
    p.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    p.add_argument("--no-utility", action="store_true",
                   help="skip the local suppression and Mondrian comparison")
    args = p.parse_args()

    from gpuppdp import Anonymizer, datasets
    from gpuppdp.algorithms import Mondrian
    from gpuppdp.algorithms.local_suppression import local_suppression
    from gpuppdp.algorithms.mondrian import certainty_penalty
    from gpuppdp.analysis.checker import check, check_cells
    from gpuppdp.analysis.utility import granularity

    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)
    data, hierarchies = datasets.adult()
    with open(REFERENCE, encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    wanted = set(filter(None, args.cases.split(",")))
    out, rows, utility_rows = [], [], []
    for case in cases:
        if wanted and case["id"] not in wanted:
            continue
        qids = case["quasi_identifiers"]
        hier = {q: hierarchies[q] for q in qids}
        anonymizer = Anonymizer(quasi_identifiers=hier, k=case["k"], others="insensitive",
                                suppression_limit=case["suppression_limit"], metric="loss",
                                backend=backend, seed=0)
        fit_s, fits = timed_runs(lambda: anonymizer.fit(data), args.repeats, lambda: None)
        result = fits[-1]
        rate = case["records_per_iteration"]
        local_s, locals_ = timed_runs(lambda: result.local_recoding(data, rate, seed=0),
                                      args.repeats, lambda: None)
        lr = locals_[-1]
        ours_g = granularity(lr.released, hier, qids)["granularity"]
        checked = check(lr.released, quasi_identifiers=qids, backend=backend)
        exp, arx = case["expected"], case["arx"]
        arx_local = statistics.median(arx["optimize_iterative_fast_ms"]) / 1e3
        arx_total = arx_local + statistics.median(
            [a + b for a, b in zip(arx["anonymize_ms"], arx["get_output_ms"])]) / 1e3
        # ARX's optimizeIterativeFast changes its output buffer in place: our iterations
        # without the release (its getOutput), then everything against everything
        local = statistics.median([r.timings["search"] for r in locals_])
        total = statistics.median(local_s) + statistics.median(fit_s)
        record = {"id": case["id"], "fit_seconds": fit_s, "local_recoding_seconds": local_s,
                  "local_recoding_search_seconds": [r.timings["search"] for r in locals_],
                  "iterations": lr.summary()["iterations"],
                  "suppressed_records": lr.suppressed_records,
                  "arx_suppressed_records": exp["local_recoding"]["suppressed_records"],
                  "granularity": ours_g, "arx_granularity": exp["local_recoding"]["granularity"],
                  "checked_k": checked["k"], "arx_optimize_seconds": arx_local,
                  "ratio_local": local / arx_local, "ratio_total": total / arx_total}
        rows.append([case["id"], record["iterations"], lr.suppressed_records,
                     record["arx_suppressed_records"], f"{ours_g:.6f}",
                     f"{record['arx_granularity']:.6f}", checked["k"],
                     f"{local * 1e3:.1f}", f"{arx_local * 1e3:.1f}",
                     f"{record['ratio_local']:.2f}", f"{record['ratio_total']:.2f}"])
        if not args.no_utility:
            record["utility"] = _utility(data, hier, qids, case["k"], result, lr, backend,
                                         local_suppression, Mondrian, certainty_penalty,
                                         check, check_cells, granularity, utility_rows,
                                         case["id"])
        out.append(record)
    print()
    print_table(["case", "iter", "supp", "ARX supp", "granularity", "ARX granularity", "k",
                 "local ms", "ARX ms", "ratio", "ratio total"], rows)
    if utility_rows:
        print()
        print_table(["case", "release", "granularity", "GCP", "suppressed records",
                     "suppressed cells", "k"], utility_rows)
    write_json(args.json, {"machine": info, "repeats": args.repeats, "cases": out})
    print(f"\nwrote {args.json}")


def _utility(data, hier, qids, k, result, lr, backend, local_suppression, Mondrian,
             certainty_penalty, check, check_cells, granularity, table, case_id) -> dict:
    """Granularity, GCP, suppressed records and cells of the releases of one case."""
    generalized = data.copy()  # the optimum's levels, no record suppressed
    for q, level in result.transformation.items():
        h = hier[q]
        generalized[q] = h.labels(level)[h.codes(level)[h.leaf_codes(data[q])]]
    ls = local_suppression(generalized, qids, k)
    mondrian = Mondrian(hier, k=k, backend=backend).fit(data)
    releases = {"full-domain": (result.released, result.suppressed_records, 0,
                                check(result.released, quasi_identifiers=qids)["k"]),
                "local recoding": (lr.released, lr.suppressed_records, 0,
                                   check(lr.released, quasi_identifiers=qids)["k"]),
                "local suppression": (ls.released, 0, sum(ls.suppressed_cells.values()),
                                      check_cells(ls.released, quasi_identifiers=qids)["k"]),
                "mondrian": (mondrian.released, 0, 0,
                             check(mondrian.released, quasi_identifiers=qids)["k"])}
    out = {}
    for name, (table_, sup, cells, k_found) in releases.items():
        g = granularity(table_, hier, qids)["granularity"]
        gcp = certainty_penalty(table_, data, qids, hierarchies=hier)["gcp"]
        out[name] = {"granularity": g, "gcp": gcp, "suppressed_records": sup,
                     "suppressed_cells": cells, "k": k_found}
        table.append([case_id, name, f"{g:.4f}", f"{gcp:.4f}", sup, cells, k_found])
    return out


if __name__ == "__main__":
    main()
