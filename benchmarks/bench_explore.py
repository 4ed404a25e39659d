"""Every node measured (:func:`gpuppdp.explore`): the whole lattice's figures.

Cases (median of ``--repeats`` timed runs after one warm-up; ``seconds`` is the evaluation,
encoding excluded, as :attr:`gpuppdp.tradeoff.Exploration.seconds`; ``end to end`` adds the
encoding and the node table):

* ``adult q=8`` -- 8 QIDs (4,320 nodes), occupation sensitive, k=5, 5 % suppression, the loss
  metric: every figure of every node (goal: <= 1 s on the 2-core box, <= 50 ms on an H100);
* ``adult q=8 (evaluator alone)`` -- the same walk without the figures
  (:meth:`~gpuppdp.engine.evaluate.LatticeOracle.evaluate_all` with the sensitive attribute
  carried): what the figures add;
* ``adult q=9`` -- all 9 QIDs (12,960 nodes), no sensitive attribute (occupation is a QID):
  risks and metrics only (goal: <= 3 s on the CPU);
* ``adult q=9, max_nodes 1000`` -- the same lattice measured in part (``max_nodes=1000``):
  the nodes the beam search visits within 1,000 evaluations (what a huge lattice gets);
* ``census N`` -- a generated census of ``--census-rows`` rows (6 QIDs, 2,592 nodes),
  occupation sensitive (27 values; the income column, nearly one value per person, would
  make every node's histograms as large as the table), k=5, 5 % suppression
  (``--census-rows 0`` leaves it out).

Prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_explore.json``).
It never asserts times.

Example::

    python benchmarks/bench_explore.py --backend cpu --repeats 3
    python benchmarks/bench_explore.py --backend gpu --census-rows 1e8
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _common import (add_common_args, adult_qids, fmt_seconds, machine_info, maxrss_bytes,
                     print_machine, print_table, resolve_backend, row_count, summarize,
                     write_json)

import gpuppdp
from gpuppdp import datasets
from gpuppdp.algorithms._lattice import lattice_evaluator
from gpuppdp.census import DEMO_QUASI_IDENTIFIERS
from gpuppdp.engine.evaluate import LatticeOracle
from gpuppdp.engine.lattice import Lattice
from gpuppdp.engine.metrics import make_metric
from gpuppdp.models import DistinctLDiversity, KAnonymity


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "bench_explore")
    p.add_argument("--census-rows", type=lambda text: 0 if text == "0" else row_count(text),
                   default=10 ** 6,
                   help="rows of the census case (default 1e6; 0: no census case)")
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)
    cases = []

    def case(name, run, **extra):
        """``run() -> (seconds, exploration or None)``, once to warm up, then timed."""
        run()
        seconds, totals, found = [], [], None
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            s, found = run()
            totals.append(time.perf_counter() - t0)
            seconds.append(s)
        row = {"case": name, "seconds": summarize(seconds), "end_to_end": summarize(totals),
               **extra}
        if found is not None:
            row.update(nodes=len(found.nodes), anonymous=int(found.nodes["anonymous"].sum()),
                       **{flag: int(found.nodes[flag].sum()) for flag in
                          ("pareto_privacy_utility", "pareto_risk_loss")})
        cases.append(row)
        print(f"  done {name}: {fmt_seconds(row['seconds']['median'])}", file=sys.stderr,
              flush=True)

    def explored(data, hierarchies, sensitive, k, models=(), max_nodes=None):
        def run():
            found = gpuppdp.explore(data, quasi_identifiers=hierarchies, sensitive=sensitive,
                                    k=k, models=models, suppression_limit=0.05,
                                    max_nodes=max_nodes, backend=backend)
            return found.seconds, found
        return run

    data, hierarchies, _ = adult_qids(8)
    case("adult q=8", explored(data, hierarchies, ["occupation"], 5), rows=len(data))

    def evaluator_alone():
        evaluator = lattice_evaluator(data, hierarchies, sensitive=["occupation"],
                                      models=[KAnonymity(5), DistinctLDiversity("occupation", 1)],
                                      suppression_limit=0.05, metric=make_metric("loss"),
                                      backend=backend)
        t0 = time.perf_counter()
        LatticeOracle(evaluator, Lattice(evaluator.encoded.heights)).evaluate_all()
        return time.perf_counter() - t0, None
    case("adult q=8 (evaluator alone)", evaluator_alone, rows=len(data), nodes=4320)

    data9, hierarchies9, _ = adult_qids(9)
    case("adult q=9", explored(data9, hierarchies9, [], 5), rows=len(data9))
    case("adult q=9, max_nodes 1000", explored(data9, hierarchies9, [], 5, max_nodes=1000),
         rows=len(data9))

    if args.census_rows:
        census, h = datasets.census(args.census_rows, 0)
        census = census[list(DEMO_QUASI_IDENTIFIERS) + ["occupation"]]
        case(f"census {args.census_rows:.3g}",
             explored(census, {c: h[c] for c in DEMO_QUASI_IDENTIFIERS}, ["occupation"], 5),
             rows=args.census_rows)

    print_table(["case", "rows", "nodes", "anonymous", "median", "min", "end to end"],
                [[c["case"], c["rows"], c.get("nodes"), c.get("anonymous"),
                  fmt_seconds(c["seconds"]["median"]), fmt_seconds(c["seconds"]["min"]),
                  fmt_seconds(c["end_to_end"]["median"])] for c in cases])
    write_json(args.json, {"machine": info, "cases": cases, "max_rss_bytes": maxrss_bytes(),
                           "numpy": np.__version__})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
