"""Time to the optimum on Adult: ``Anonymizer(...).fit`` per (QIDs, k, suppression, metric).

Cases: Adult with 8 QIDs (all columns but ``occupation``, kept insensitive) and 9 QIDs,
k in {2, 5, 10, 50}, suppression limit 0 % and 5 %, metrics loss / precision /
discernibility, search ``flash`` (default) or ``exhaustive``.  ``--quick``: 8/9 QIDs x k=5 x
both limits x loss.

Per case it runs ``fit`` once as a warm-up and then ``--repeats`` times, and reports median
and min of

* ``search``: ``result.search.seconds`` -- the lattice search only (no encoding, no release);
* ``total``: ``result.timings["total"]`` -- encode + search + release, as ``fit`` measures it;

plus the nodes evaluated and the optimum.  Where ARX 3.9.2's reference run of the same case
is known (``benchmarks/arx_reference.json``) it prints ARX's median ``anonymize()`` time and
nodes checked, the ratios ours/ARX (search and total), and whether the optimum is ARX's.
ARX's time covers its own encoding and search (its output is built lazily), so it sits
between our ``search`` and ``total``.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_search.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_search.py --quick --backend cpu
    python benchmarks/bench_search.py --backend gpu --repeats 5
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from _common import (add_common_args, adult_qids, arx_key, fmt_seconds, load_arx_reference,
                     machine_info, print_machine, print_table, resolve_backend, summarize,
                     synchronizer, timed_runs, write_json)

from gpuppdp import Anonymizer
from gpuppdp.anonymizer import NoSolutionError

QIDS = (8, 9)
KS = (2, 5, 10, 50)
SUPPRESSIONS = (0.0, 0.05)
METRICS = ("loss", "precision", "discernibility")


def _list(kind):
    def parse(text: str):
        try:
            return [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return parse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_search")
    p.add_argument("--search", default="flash", choices=("flash", "exhaustive", "levels"))
    p.add_argument("--quick", action="store_true",
                   help="only 8/9 QIDs x k=5 x suppression 0 %% and 5 %% x loss")
    p.add_argument("--qids", type=_list(int), default=None, help="subset, e.g. 8 or 8,9")
    p.add_argument("--k", type=_list(int), default=None, help="subset, e.g. 5,10")
    p.add_argument("--suppression", type=_list(float), default=None, help="e.g. 0,0.05")
    p.add_argument("--metrics", type=_list(str), default=None, help="e.g. loss,precision")
    args = p.parse_args(argv)

    qids, ks, sups, metrics = QIDS, KS, SUPPRESSIONS, METRICS
    if args.quick:
        ks, metrics = (5,), ("loss",)
    qids = args.qids or qids
    ks = args.k or ks
    sups = args.suppression if args.suppression is not None else sups
    metrics = args.metrics or metrics

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    arx = load_arx_reference()["cases"]
    datasets = {q: adult_qids(q) for q in qids}
    print(f"# search={args.search}, repeats={args.repeats} after 1 warm-up; "
          f"times: median (min)\n")

    headers = ["qids", "k", "supp", "metric", "nodes", "search", "total", "ARX ms",
               "ARX nodes", "search/ARX", "total/ARX", "=ARX opt", "loss"]
    rows, results = [], []
    for q, k, s, metric in itertools.product(qids, ks, sups, metrics):
        data, hierarchies, insensitive = datasets[q]
        anon = Anonymizer(quasi_identifiers=hierarchies, insensitive=insensitive, k=k,
                          suppression_limit=s, metric=metric, search=args.search,
                          backend=backend, seed=0)
        case = {"qids": q, "k": k, "suppression": s, "metric": metric, "search": args.search}
        t0 = time.perf_counter()
        try:
            _, fits = timed_runs(lambda: anon.fit(data), args.repeats, sync)
        except NoSolutionError as exc:
            case["error"] = str(exc)
            results.append(case)
            rows.append([q, k, f"{s:.0%}", metric, "no solution"] + [None] * 8)
            continue
        wall = time.perf_counter() - t0
        search = summarize([r.search.seconds for r in fits])
        total = summarize([r.timings["total"] for r in fits])
        steps = {name: summarize([r.timings[name] for r in fits])
                 for name in ("encode", "search", "release")}
        last = fits[-1]
        nodes = sorted({r.nodes_evaluated for r in fits})
        case.update({
            "nodes_evaluated": last.nodes_evaluated,
            "lattice_size": last.lattice_size,
            "search_seconds": search,
            "total_seconds": total,
            "fit_steps_seconds": steps,
            "transformation": last.transformation,
            "information_loss": last.information_loss,
            "equivalence_classes": last.equivalence_classes,
            "suppressed_records": last.suppressed_records,
            "bench_wall_seconds": wall,
        })
        if len(nodes) > 1:
            case["nodes_evaluated_varied"] = nodes
        ref = arx.get(arx_key(q, k, s, metric))
        ratio_s = ratio_t = same = None
        if ref is not None:
            ms = ref["anonymize_ms_median"]
            ratio_s = search["median"] * 1e3 / ms
            ratio_t = total["median"] * 1e3 / ms
            same = ref["transformation"] == last.transformation
            case["arx"] = {"anonymize_ms_median": ms, "nodes_checked": ref["nodes_checked"],
                           "search_over_arx": ratio_s, "total_over_arx": ratio_t,
                           "same_optimum": same,
                           "information_loss": ref["information_loss"]}
        results.append(case)
        rows.append([
            q, k, f"{s:.0%}", metric, last.nodes_evaluated,
            f"{fmt_seconds(search['median'])} ({fmt_seconds(search['min'])})",
            f"{fmt_seconds(total['median'])} ({fmt_seconds(total['min'])})",
            None if ref is None else f"{ref['anonymize_ms_median']:.1f}",
            None if ref is None else ref["nodes_checked"],
            None if ratio_s is None else f"{ratio_s:.1f}x",
            None if ratio_t is None else f"{ratio_t:.1f}x",
            None if same is None else ("yes" if same else "NO"),
            f"{last.information_loss:.6g}",
        ])
        print(f"  done q={q} k={k} s={s:g} {metric}: search {fmt_seconds(search['median'])}, "
              f"{last.nodes_evaluated} nodes", file=sys.stderr, flush=True)

    print()
    print_table(headers, rows)
    write_json(args.json, {"benchmark": "bench_search", "machine": info,
                           "settings": {"search": args.search, "repeats": args.repeats,
                                        "warmup_runs": 1, "quick": args.quick},
                           "cases": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
