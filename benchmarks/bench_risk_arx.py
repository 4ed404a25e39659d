"""The risk-based models' searches on Adult against a live ARX 3.9.2: the cases of
``tests/data/arx_risk_models.json`` (9 QIDs; average re-identification risk, with and without
ARX's highest-risk and records-at-risk thresholds, sample uniqueness and population
uniqueness (Pitman, Zayatz, SNB, Dankar), alone or with k-anonymity), each timed in ARX
(``benchmarks/arx/ArxRunX.java``, one JVM per case: ``--arx-warmup`` untimed runs, then
``--repeats`` timed ``anonymize()`` calls, median) and here (one warm-up ``fit``, then
``--repeats`` timed, median of ``result.search.seconds``), ARX first, then ours, per case.
Reported: whether our search ran compiled (:mod:`gpuppdp.engine.search.flash_risk`), the
checked nodes of both, both times and their ratio, and whether the optimum, the loss and the
suppressed records are ARX's.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_risk_arx.json``);
it asserts nothing about time::

    python benchmarks/bench_risk_arx.py --repeats 5 \\
        --arx-classpath "$(cat /work/arxbuild/CLASSPATH):CLASSES_OF_ArxRunX"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from _common import (HERE, add_common_args, machine_info, print_machine, print_table,
                     resolve_backend, timed_runs, write_json)

from gpuppdp import Anonymizer, datasets
from gpuppdp.engine.search import flash_compiled

REFERENCE = os.path.join(HERE, os.pardir, "tests", "data", "arx_risk_models.json")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_risk_arx")
    p.add_argument("--arx-classpath", required=True,
                   help="ARX 3.9.2's classes and ArxRunX's (benchmarks/arx/ArxRunX.java)")
    p.add_argument("--arx-warmup", type=int, default=10, help="ARX's untimed runs (10)")
    p.add_argument("--only", default="",
                   help="the cases whose id holds one of these comma-separated parts (all)")
    p.add_argument("--python-flash", action="store_true",
                   help="never the compiled Flash: the Python traversal (before/after)")
    args = p.parse_args()
    sys.path.insert(0, os.path.join(HERE, os.pardir))
    from tests.test_risk_models_arx import models_of  # the reference's own reading of its cases

    if args.python_flash:
        flash_compiled.compiled_flash_supports = lambda *a, **kw: False
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)
    with open(REFERENCE, encoding="utf-8") as fh:
        reference = json.load(fh)
    data, hierarchies = datasets.adult()
    qids = reference["qids"]
    adult_dir = os.path.dirname(datasets.adult_path())
    rows, out = [], []
    for case in reference["cases"]:
        case_args = dict(a.split("=") for a in case["args"].split())
        if args.only and not any(o in case["id"] for o in args.only.split(",")):
            continue
        arx = _arx(args, case, case_args, qids, adult_dir)
        anonymizer = Anonymizer(
            quasi_identifiers={q: hierarchies[q] for q in qids},
            insensitive=[c for c in data.columns if c not in qids],
            models=models_of(case_args), suppression_limit=float(case_args["supp"]),
            metric=case_args["metric"], backend=backend)
        _, fits = timed_runs(lambda: anonymizer.fit(data), args.repeats, lambda: None, True)
        ours = statistics.median(f.search.seconds for f in fits) * 1e3
        fit = fits[-1]
        same = (fit.transformation == case["transformation"]
                and fit.information_loss == case["information_loss"]
                and fit.suppressed_records == case["suppressed_records"])
        record = {"id": case["id"], "compiled": bool(fit.search.details.get("compiled")),
                  "nodes": fit.nodes_evaluated, "arx_nodes": arx["transformations_checked"],
                  "search_ms": ours, "arx_ms": arx["anonymize_ms_median"],
                  "ratio": ours / arx["anonymize_ms_median"], "arx_optimum": same}
        out.append(record)
        rows.append([case["id"], "yes" if record["compiled"] else "no", record["nodes"],
                     record["arx_nodes"], f"{ours:.1f}", f"{record['arx_ms']:.1f}",
                     f"{record['ratio']:.2f}", "yes" if same else "NO"])
    print_table(["case", "compiled", "nodes", "ARX nodes", "search ms", "ARX ms", "ratio",
                 "ARX's optimum"], rows)
    ratios = sorted(r["ratio"] for r in out)
    if ratios:
        print(f"\nratio: median {statistics.median(ratios):.2f}, worst {ratios[-1]:.2f}")
    write_json(args.json, {"machine": info, "repeats": args.repeats,
                           "python_flash": args.python_flash,
                           "arx_warmup": args.arx_warmup, "cases": out})


def _arx(args, case: dict, case_args: dict, qids: list[str], adult_dir: str) -> dict:
    """ARX's run of one case (ArxRunX's batch mode): its JSON line."""
    extra = [f"{key}={case_args[key]}" for key in ("avgrisk", "sampleuniq", "popuniq")
             if key in case_args]
    argv = ["java", "-cp", args.arx_classpath, "ArxRunX",
            f"data={datasets.adult_path()}", f"hierdir={adult_dir}", f"qids={','.join(qids)}",
            f"k={case_args.get('k', 0)}", f"supp={case_args['supp']}",
            f"metric={case_args['metric']}", f"warmup={args.arx_warmup}",
            f"runs={args.repeats}", f"id={case['id']}", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
