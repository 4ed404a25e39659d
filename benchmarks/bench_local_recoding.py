"""Local recoding (ARX's ``optimizeIterativeFast``) and local suppression on Adult (and on the
census generator's table), against ARX 3.9.2's references (``tests/data/arx_local_recoding.
json``) or a live ARX, and against full-domain generalization and Mondrian.

For every reference case (k-anonymity, the loss metric, a suppression limit, records per
iteration), and with ``--census ROWS`` on ``datasets.census(ROWS, 0)`` with its six demo
quasi-identifiers (k=5, 5 %, 1 % of the records per iteration): the full-domain optimum
(``Anonymizer.fit``) and its local recoding (``AnonymizationResult.local_recoding``), one
warm-up and ``--repeats`` timed runs each, median; the suppressed records and ARX's granularity
(:func:`gpuppdp.analysis.utility.granularity`, ARX's ``getGranularity().getArithmeticMean(
false)``) beside ARX's, and the ratio of our local recoding's time to ARX's
``optimizeIterativeFast`` time (and of fit + local recoding to ARX's anonymize + getOutput +
optimizeIterativeFast).  Without ``--arx-classpath``, ARX's times come from the reference file
(another moment, Adult only).  With ``--arx-classpath CP`` (ARX 3.9.2 and the serve-mode runner
``ArxRunLS``, ``benchmarks/arx/ArxRunLS.java``) one JVM per case stays up beside this process and
the two are timed interleaved: both warm up (ARX ``--arx-warmup`` runs), then ``--rounds`` rounds
of ``--repeats`` ARX runs followed by ``--repeats`` of ours (once the JVM's own threads are
idle); each ratio is the median over the rounds of the ratio of the
round's medians, and each round records the load average.  Then, per case, the utility of the
other releases of the same data (``--no-utility`` skips them): the full-domain release, its
local recoding, sdcMicro-style local suppression of the table generalized to the full-domain
optimum's levels (cells suppressed instead of records) and Mondrian on the same hierarchies:
granularity, the global certainty penalty (GCP) and the suppressed records / cells, each
release checked (``check``, or ``check_cells`` with a suppressed cell matching any value).

It prints two tables and writes JSON (``--json``, default
``benchmarks/out/bench_local_recoding.json``); it asserts nothing about time::

    python benchmarks/bench_local_recoding.py --repeats 3
    python benchmarks/bench_local_recoding.py --repeats 3 --no-utility --census 30000 \\
        --arx-classpath "$(cat /work/arxbuild/CLASSPATH):/work/arxbuild/census"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile

from _common import (ArxServer, HERE, add_common_args, machine_info, print_machine, print_table,
                     resolve_backend, settle, timed_runs, write_json)

REFERENCE = os.path.join(HERE, os.pardir, "tests", "data", "arx_local_recoding.json")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_local_recoding")
    p.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    p.add_argument("--no-utility", action="store_true",
                   help="skip the local suppression and Mondrian comparison")
    p.add_argument("--census", type=int, default=0, metavar="ROWS",
                   help="add a case on datasets.census(ROWS, 0) (needs --arx-classpath)")
    p.add_argument("--arx-classpath", default="",
                   help="time a live ARX (ArxRunLS) interleaved with ours (default: the "
                        "reference file's ARX times)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--arx-warmup", type=int, default=10,
                   help="ARX's untimed warm-up runs per case with --arx-classpath (default 10: "
                        "its JIT goes on shortening the runs for about that many)")
    args = p.parse_args()
    if args.census and not args.arx_classpath:
        p.error("--census needs --arx-classpath (no ARX reference for it)")

    from gpuppdp import Anonymizer
    from gpuppdp.algorithms import Mondrian
    from gpuppdp.algorithms.local_suppression import local_suppression
    from gpuppdp.algorithms.mondrian import certainty_penalty
    from gpuppdp.analysis.checker import check, check_cells
    from gpuppdp.analysis.utility import granularity

    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)
    wanted = set(filter(None, args.cases.split(",")))
    out, rows, utility_rows = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for case in _cases(args.census, folder):
            if wanted and case["id"] not in wanted:
                continue
            data, hier, qids = case["data"], case["hierarchies"], case["quasi_identifiers"]
            anonymizer = Anonymizer(quasi_identifiers=hier, k=case["k"], others="insensitive",
                                    suppression_limit=case["suppression_limit"],
                                    metric="loss", backend=backend, seed=0)
            rate = case["records_per_iteration"]

            def ours(warmup):
                fit_s, fits = timed_runs(lambda: anonymizer.fit(data), args.repeats,
                                         lambda: None, warmup)
                local_s, locals_ = timed_runs(
                    lambda: fits[-1].local_recoding(data, rate, seed=0), args.repeats,
                    lambda: None, warmup)
                return fit_s, fits[-1], local_s, locals_

            if args.arx_classpath:
                rounds, (fit_s, result, local_s, locals_) = _interleaved(
                    case, args.arx_classpath, args.rounds, args.repeats, args.arx_warmup, ours)
                arx_result = rounds[-1]["arx_local_recoding"]
            else:
                fit_s, result, local_s, locals_ = ours(True)
                rounds = [_round(case["arx"], fit_s, local_s, locals_)]
                arx_result = case["expected"]["local_recoding"]
            lr = locals_[-1]
            ours_g = granularity(lr.released, hier, qids)["granularity"]
            checked = check(lr.released, quasi_identifiers=qids, backend=backend)
            ratio_local = statistics.median(r["ratio_local"] for r in rounds)
            ratio_total = statistics.median(r["ratio_total"] for r in rounds)
            arx_ms = statistics.median(r["arx_optimize_seconds"] for r in rounds) * 1e3
            local_ms = statistics.median(r["local_recoding_search_seconds"] for r in rounds) * 1e3
            record = {"id": case["id"], "rows": len(data), "fit_seconds": fit_s,
                      "local_recoding_seconds": local_s,
                      "local_recoding_search_seconds": [r.timings["search"] for r in locals_],
                      "iterations": lr.summary()["iterations"],
                      "suppressed_records": lr.suppressed_records,
                      "arx_suppressed_records": arx_result["suppressed_records"],
                      "granularity": ours_g, "arx_granularity": arx_result["granularity"],
                      "checked_k": checked["k"], "rounds": rounds,
                      "ratio_local": ratio_local, "ratio_total": ratio_total}
            rows.append([case["id"], record["iterations"], lr.suppressed_records,
                         record["arx_suppressed_records"], f"{ours_g:.6f}",
                         f"{record['arx_granularity']:.6f}", checked["k"], f"{local_ms:.1f}",
                         f"{arx_ms:.1f}", f"{ratio_local:.2f}", f"{ratio_total:.2f}",
                         " ".join(f"{r['load_average']:.1f}" for r in rounds
                                  if "load_average" in r) or "-"])
            if not args.no_utility:
                record["utility"] = _utility(data, hier, qids, case["k"], result, lr, backend,
                                             local_suppression, Mondrian, certainty_penalty,
                                             check, check_cells, granularity, utility_rows,
                                             case["id"])
            out.append(record)
    print()
    print_table(["case", "iter", "supp", "ARX supp", "granularity", "ARX granularity", "k",
                 "local ms", "ARX ms", "ratio", "ratio total", "load"], rows)
    if utility_rows:
        print()
        print_table(["case", "release", "granularity", "GCP", "suppressed records",
                     "suppressed cells", "k"], utility_rows)
    write_json(args.json, {"machine": info, "repeats": args.repeats,
                           "rounds": args.rounds if args.arx_classpath else None,
                           "arx": "live, interleaved" if args.arx_classpath else "reference file",
                           "cases": out})


def _cases(census_rows: int, folder: str) -> list[dict]:
    """The reference cases on Adult, then (``census_rows`` > 0) one on the census table, each
    with its table, hierarchies and the ARX runner's data arguments (the census table and its
    hierarchies written to ``folder`` as ARX reads them)."""
    from gpuppdp import datasets
    from gpuppdp.census import DEMO_QUASI_IDENTIFIERS, hierarchy_file

    data, hierarchies = datasets.adult()
    adult_dir = os.path.dirname(datasets.adult_path())
    with open(REFERENCE, encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    for case in cases:
        case.update(data=data, hierarchies={q: hierarchies[q] for q in case["quasi_identifiers"]},
                    arx_data=[f"data={datasets.adult_path()}", f"hierdir={adult_dir}"])
    if census_rows:
        qids = list(DEMO_QUASI_IDENTIFIERS)
        table, hierarchies = datasets.census(census_rows, 0)
        table = table[qids].astype(str)
        table.to_csv(os.path.join(folder, "census.csv"), sep=";", index=False)
        for q in qids:
            hierarchies[q].to_csv(os.path.join(folder, hierarchy_file(q)))
        cases.append({"id": f"census{census_rows}-q6-s5-r1", "quasi_identifiers": qids, "k": 5,
                      "suppression_limit": 0.05, "records_per_iteration": 0.01, "data": table,
                      "hierarchies": {q: hierarchies[q] for q in qids},
                      "arx_data": [f"data={os.path.join(folder, 'census.csv')}",
                                   f"hierdir={folder}", "hierprefix=census_hierarchy_"]})
    return cases


def _round(arx: dict, fit_s, local_s, locals_) -> dict:
    """One round's medians and ratios: ARX's times (ms, as its runner prints them) against
    ours (seconds)."""
    arx_local = statistics.median(arx["optimize_iterative_fast_ms"]) / 1e3
    arx_total = arx_local + statistics.median(
        [a + b for a, b in zip(arx["anonymize_ms"], arx["get_output_ms"])]) / 1e3
    # ARX's optimizeIterativeFast changes its output buffer in place: our iterations
    # without the release (its getOutput), then everything against everything
    local = statistics.median([r.timings["search"] for r in locals_])
    total = statistics.median(local_s) + statistics.median(fit_s)
    return {"arx_optimize_seconds": arx_local, "arx_total_seconds": arx_total,
            "local_recoding_search_seconds": local, "total_seconds": total,
            "ratio_local": local / arx_local, "ratio_total": total / arx_total}


def _interleaved(case, classpath, rounds, repeats, warmup, ours):
    """ARX (one warm JVM running ``ArxRunLS``) and ours, alternating: both warm up (ARX
    ``warmup`` runs, ours one), then per round ``repeats`` ARX runs and ``repeats`` of ours,
    which start once the JVM's own threads are idle (``_common.settle``)."""
    argv = ["java", "-cp", classpath, "ArxRunLS", *case["arx_data"],
            "qids=" + ",".join(case["quasi_identifiers"]), f"k={case['k']}",
            f"supp={case['suppression_limit']}", f"records={case['records_per_iteration']}"]
    with ArxServer(argv, f"ArxRunLS for {case['id']}") as jvm:
        jvm.send(warmup)
        settle(jvm.pid)
        ours(True)
        out = []
        for _ in range(rounds):
            load = os.getloadavg()[0]
            a = jvm.send(repeats)
            settle(jvm.pid)
            fit_s, result, local_s, locals_ = ours(False)
            out.append({**_round(a, fit_s, local_s, locals_), "load_average": load,
                        "arx_ms": {key: a[key] for key in ("anonymize_ms", "get_output_ms",
                                                           "optimize_iterative_fast_ms")},
                        "arx_local_recoding": a["local_recoding"],
                        "arx_full_domain": a["full_domain"]})
        jvm.quit()
    return out, (fit_s, result, local_s, locals_)


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
