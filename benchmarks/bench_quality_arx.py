"""Search time against a live ARX on the quality models the compiled search took on: loss and
precision with a gs-factor and attribute weights, AECS, height, monotonic discernibility,
ambiguity (thirty-fourth session), non-uniform entropy, its monotonic and normalized forms
(thirty-fifth), and KL divergence, deferred to the end of the walk (thirty-seventh).

The cases are those of ``tests/data/arx_quality_models.json`` (ARX 3.9.2 on Adult) with no
privacy model besides k-anonymity and the loss or precision metric with a gs-factor or
attribute weights (or both), or the AECS, height, monotonic discernibility, ambiguity or one
of the entropy metrics: the search runs compiled there
(:mod:`gpuppdp.engine.search.flash_compiled`), where it ran the Python traversal before.
The file has ARX's optimum, loss and checked transformations but no times, so ARX runs live:
ARX 3.9.2 and our runner ``ArxRunX`` (``benchmarks/arx/ArxRunX.java``, its ``gs=``,
``weights=`` and ``metric=`` arguments), compiled against it, on the classpath
``--arx-classpath``.

Per case one JVM (``ArxRunX mode=serve``) stays up beside this process.  ARX warms up
(``--arx-warmup`` runs) and ours (``--warmup`` fits, compiled and Python traversal each);
then ``--rounds`` rounds of: ``--repeats`` ARX ``anonymize()`` calls, then (once the JVM's own
threads are idle, ``_common.settle``) ``--repeats`` in-process ``Anonymizer(..., search="flash",
backend="cpu").fit(data)`` with the compiled search, then ``--repeats`` with it switched off
(``flash_compiled.compiled_flash_supports`` patched to say no: the Python traversal).  Ours is
``result.search.seconds`` (the search alone, after encoding); ARX's is its ``search_ms``
(``ARXResult.getTime()``: ``algorithm.traverse()`` alone, whole milliseconds), and for
reference its whole ``anonymize()`` (``ms``, what ``bench_cli_arx.py`` compares).  A case's
ratio ours/ARX is the median over its rounds of the round's ratio of medians (each round
keeps its load average); the overall median and worst are over the cases.  Also reported:
whether the search ran compiled, the checked nodes (ours, ARX's live count) and whether our
optimum and loss (exactly) are the reference's and ARX's live optimum is too.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_quality_arx.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_quality_arx.py --repeats 3 --rounds 3 \\
        --arx-classpath "/tmp/arxrun:$(cat /work/arxbuild/CLASSPATH)"
    python benchmarks/bench_quality_arx.py --only precision --repeats 5 --rounds 2 \\
        --arx-classpath "/tmp/arxrun:$(cat /work/arxbuild/CLASSPATH)"
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys

from _common import (ArxServer, HERE, add_common_args, machine_info, print_machine, print_table,
                     resolve_backend, settle, write_json)

from gpuppdp import Anonymizer, datasets
from gpuppdp.engine.search import flash_compiled

REFERENCE = os.path.join(os.path.dirname(HERE), "tests", "data", "arx_quality_models.json")


#: metrics the compiled search took on in the thirty-fourth to thirty-seventh sessions (with the
#: options they take)
NEWLY_COMPILED = ("aecs", "height", "discernibility-monotonic", "ambiguity", "entropy",
                  "entropy-monotonic", "normalized-entropy", "kl")


def load_cases() -> list[dict]:
    """Loss and precision cases with a gs-factor or attribute weights, and every case of the
    metrics of :data:`NEWLY_COMPILED`; no further model."""
    with open(REFERENCE, encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    return [c for c in cases if c["model"] is None and (
        c["metric"] in NEWLY_COMPILED
        or c["metric"] in ("loss", "precision") and (
            c["gs_factor"] is not None or c["attribute_weights"]))]


def arx_command(case: dict, classpath: str) -> list[str]:
    """``ArxRunX mode=serve`` on the bundled Adult extract with the case's settings."""
    argv = ["java", "-cp", classpath, "ArxRunX", "mode=serve",
            f"data={datasets.adult_path('adult.csv')}",
            f"hierdir={os.path.dirname(datasets.adult_path('adult.csv'))}",
            "qids=" + ",".join(case["quasi_identifiers"]), f"k={case['k']}",
            f"supp={case['suppression_limit']}", f"metric={case['metric']}"]
    if case["gs_factor"] is not None:
        argv.append(f"gs={case['gs_factor']}")
    if case["attribute_weights"]:
        argv.append("weights=" + ",".join(f"{c}:{w}" for c, w in
                                          case["attribute_weights"].items()))
    return argv


@contextlib.contextmanager
def python_traversal():
    """The compiled Flash switched off: the Python traversal searches."""
    saved = flash_compiled.compiled_flash_supports
    flash_compiled.compiled_flash_supports = lambda *a, **kw: False
    try:
        yield
    finally:
        flash_compiled.compiled_flash_supports = saved


def _ms(fits) -> float:
    return statistics.median(r.search.seconds for r in fits) * 1e3


def run_case(case: dict, data, hierarchies, backend: str, args) -> dict:
    anon = Anonymizer(
        quasi_identifiers={c: hierarchies[c] for c in case["quasi_identifiers"]},
        others="insensitive", k=case["k"], suppression_limit=case["suppression_limit"],
        metric=case["metric"], gs_factor=case["gs_factor"],
        attribute_weights=case["attribute_weights"], search="flash", backend=backend, seed=0)

    def python_fit():
        with python_traversal():
            return anon.fit(data)

    with ArxServer(arx_command(case, args.arx_classpath), f"ArxRunX for {case['id']}") as jvm:
        for _ in range(args.arx_warmup):
            jvm.send("warm")
        settle(jvm.pid)
        for _ in range(args.warmup):
            anon.fit(data)
            python_fit()
        rounds = []
        for _ in range(args.rounds):
            load = os.getloadavg()[0]
            arx_runs = [jvm.send("run") for _ in range(args.repeats)]
            settle(jvm.pid)
            ours = [anon.fit(data) for _ in range(args.repeats)]
            python = [python_fit() for _ in range(args.repeats)]
            arx_search = statistics.median(r["search_ms"] for r in arx_runs)
            arx_total = statistics.median(r["ms"] for r in arx_runs)
            rounds.append({
                "load_average": load,
                "arx_search_ms": [r["search_ms"] for r in arx_runs],
                "arx_anonymize_ms": [r["ms"] for r in arx_runs],
                "arx_checked": arx_runs[-1]["checked"],
                "search_ms": [r.search.seconds * 1e3 for r in ours],
                "python_search_ms": [r.search.seconds * 1e3 for r in python],
                "ratio": _ms(ours) / arx_search if arx_search else None,
                "ratio_anonymize": _ms(ours) / arx_total,
                "python_ratio": _ms(python) / arx_search if arx_search else None})
        final = jvm.quit()
    last, last_py = ours[-1], python[-1]
    exp = case["expected"]

    def same(result) -> bool:
        return (dict(result.transformation) == exp["transformation"]
                and result.information_loss == exp["information_loss"]
                and result.suppressed_records == exp["suppressed_records"])

    def med(key: str) -> float:
        return statistics.median(x for r in rounds for x in r[key])

    def med_ratio(key: str) -> float | None:
        vals = [r[key] for r in rounds if r[key] is not None]
        return statistics.median(vals) if vals else None

    return {"id": case["id"], "metric": case["metric"], "gs_factor": case["gs_factor"],
            "attribute_weights": case["attribute_weights"],
            "suppression_limit": case["suppression_limit"],
            "compiled": bool(last.search.details.get("compiled")),
            "python_compiled": bool(last_py.search.details.get("compiled")),
            "nodes": last.nodes_evaluated, "python_nodes": last_py.nodes_evaluated,
            "arx_nodes": final["transformations_checked"],
            "reference_nodes": case["arx"]["transformations_checked"],
            "transformation": dict(last.transformation),
            "information_loss": last.information_loss,
            "same_as_reference": same(last), "python_same_as_reference": same(last_py),
            "arx_same_as_reference": final["transformation"] == exp["transformation"],
            "search_ms": med("search_ms"), "python_search_ms": med("python_search_ms"),
            "arx_search_ms": med("arx_search_ms"), "arx_anonymize_ms": med("arx_anonymize_ms"),
            "ratio": med_ratio("ratio"), "ratio_anonymize": med_ratio("ratio_anonymize"),
            "python_ratio": med_ratio("python_ratio"), "rounds": rounds}


def _f(x, fmt: str) -> str | None:
    return None if x is None else format(x, fmt)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_quality_arx")
    p.set_defaults(backend="cpu")
    p.add_argument("--arx-classpath", required=True,
                   help="ARX 3.9.2 and the compiled ArxRunX, as one classpath")
    p.add_argument("--only", default="", help="cases whose id contains this text")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per case")
    p.add_argument("--arx-warmup", type=int, default=10,
                   help="ARX's untimed warm-up runs per case (default 10)")
    p.add_argument("--warmup", type=int, default=3,
                   help="our untimed fits per case, of each kind (default 3)")
    args = p.parse_args(argv)
    resolved = resolve_backend(args.backend)
    backend = resolved.name if resolved.is_gpu else "cpu"
    info = machine_info(resolved)
    print_machine(info)
    data, hierarchies = datasets.adult()
    rows, results = [], []
    for case in load_cases():
        if args.only not in case["id"]:
            continue
        r = run_case(case, data, hierarchies, backend, args)
        results.append(r)
        match = (r["same_as_reference"] and r["arx_same_as_reference"]
                 and r["nodes"] == r["arx_nodes"] == r["reference_nodes"])
        rows.append([r["id"], "yes" if r["compiled"] else "NO", r["nodes"], r["arx_nodes"],
                     "yes" if match else "NO", f"{r['search_ms']:.1f}",
                     f"{r['python_search_ms']:.1f}", f"{r['arx_search_ms']:.1f}",
                     f"{r['arx_anonymize_ms']:.1f}", _f(r["ratio"], ".2f"),
                     _f(r["python_ratio"], ".2f")])
        print(f"  {r['id']}: {r['search_ms']:.1f} ms, ARX {r['arx_search_ms']:.1f} ms, "
              f"ratio {_f(r['ratio'], '.2f')}", file=sys.stderr, flush=True)
    print()
    print_table(["case", "compiled", "nodes", "ARX nodes", "=ARX opt/loss/nodes", "ours ms",
                 "Python traversal ms", "ARX search ms", "ARX anonymize ms", "ours/ARX",
                 "Python/ARX"], rows)
    ratios = [r["ratio"] for r in results if r["ratio"] is not None]
    summary = {"median_ratio": statistics.median(ratios) if ratios else None,
               "worst_ratio": max(ratios) if ratios else None}
    if ratios:
        print(f"\nours/ARX search over {len(ratios)} cases: median "
              f"{summary['median_ratio']:.2f}, worst {summary['worst_ratio']:.2f}")
    write_json(args.json, {"benchmark": "bench_quality_arx", "machine": info,
                           "settings": {"repeats": args.repeats, "rounds": args.rounds,
                                        "arx_warmup": args.arx_warmup,
                                        "warmup_runs": args.warmup, "backend": backend,
                                        "ours": "in process, warm; result.search.seconds",
                                        "arx": "live, ArxRunX mode=serve; search_ms"},
                           "cases": results, **summary,
                           "all_match": all(row[4] == "yes" for row in rows)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
