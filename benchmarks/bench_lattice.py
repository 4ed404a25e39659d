"""Lattices beyond ARX's reach: the optimal search on a synthetic table with many QIDs.

The table (seeded, ``--seed``): ``--rows`` rows (default 20,000) and ``--qids`` columns
(default 9), each with a binary hierarchy of ``--levels`` levels (default 5: 16 leaves, then
8, 4, 2 groups and ``*``), so the lattice has ``levels ** qids`` nodes (5^9 = 1,953,125; 5^10
is nearly 10^7).  Leaves are drawn from a truncated geometric distribution (parameter
``--skew``, default 0.35), so a few values are common and most are rare, and the optimum sits
inside the lattice rather than at its top.  Then ``Anonymizer(...).fit`` with k (``--k``,
default 5), a suppression limit (``--suppression``, default 5 %), metric loss, and each search
of ``--searches`` (default levels): one warm-up run on a small copy of the table (compiles the
kernels), then ``--repeats`` timed runs.  Reported per search, median and min: the search
(``result.search.seconds``), the nodes checked, the optimum and its loss; the searches must
agree on optimum and loss, or the script exits 1.

``--table uniform`` takes instead the table of the CPU engine issue and of the ``manyqid``
check: columns of 100 values drawn uniformly (``numpy.random.default_rng(seed)``, 15 columns
drawn in order, the first ``--qids`` kept), each with the hierarchy value, 5-wide interval,
25-wide, 50-wide, ``*`` (5 levels; ``--levels`` and ``--skew`` do not apply).  On that table,
with its 100,000-node limit raised, ARX 3.9.2 took 9.4 s for 8 QIDs (390,625 nodes, 9,639
checked) and 29.5 s for 9 QIDs (1,953,125 nodes).

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_lattice.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_lattice.py --backend gpu --qids 9 10
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from _common import (add_common_args, fmt_seconds, machine_info, print_machine, print_table,
                     resolve_backend, row_count, summarize, synchronizer, timed_runs,
                     write_json)

from gpuppdp import Anonymizer, Hierarchy


def binary_hierarchy(name: str, levels: int) -> Hierarchy:
    """``2 ** (levels - 1)`` leaves ``v0, v1, ...``; level ``L`` groups ``2 ** L`` neighbours
    (labels ``L<L>:<group>``), the top level is ``*``."""
    leaves = 2 ** (levels - 1)
    codes = np.arange(leaves)
    table = [[f"v{c}" for c in codes]]
    table += [[f"L{lv}:{c >> lv}" for c in codes] for lv in range(1, levels - 1)]
    table.append(["*"] * leaves)
    return Hierarchy(table, name=name)


def synthetic_table(rows: int, qids: int, levels: int, skew: float,
                    seed: int) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """The seeded table and its hierarchies (see the module docstring)."""
    rng = np.random.default_rng(seed)
    leaves = 2 ** (levels - 1)
    p = skew * (1 - skew) ** np.arange(leaves)
    p /= p.sum()
    names = [f"q{i}" for i in range(qids)]
    labels = np.array([f"v{c}" for c in range(leaves)], dtype=object)
    data = pd.DataFrame({n: labels[rng.choice(leaves, size=rows, p=p)] for n in names})
    return data, {n: binary_hierarchy(n, levels) for n in names}


def uniform_table(rows: int, qids: int, seed: int) -> tuple[pd.DataFrame, dict]:
    """The ``manyqid`` table: ``qids`` of 15 uniformly drawn columns of 100 values, each with
    the 5-level interval hierarchy."""
    rng = np.random.default_rng(seed)
    names = [f"a{i}" for i in range(max(qids, 15))]
    drawn = {n: rng.integers(0, 100, rows).astype(str) for n in names}
    hierarchy = Hierarchy.from_rows(
        [[str(v), f"{v // 5 * 5}-{v // 5 * 5 + 4}", f"{v // 25 * 25}-{v // 25 * 25 + 24}",
          f"{v // 50 * 50}-{v // 50 * 50 + 49}", "*"] for v in range(100)])
    return pd.DataFrame({n: drawn[n] for n in names[:qids]}), \
        {n: hierarchy for n in names[:qids]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "bench_lattice")
    p.add_argument("--rows", type=row_count, default=20_000)
    p.add_argument("--qids", type=int, nargs="+", default=[9],
                   help="QID counts, one case each (default 9)")
    p.add_argument("--levels", type=int, default=5, help="levels per hierarchy (default 5)")
    p.add_argument("--skew", type=float, default=0.35)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--suppression", type=float, default=0.05)
    p.add_argument("--searches", nargs="+", default=["levels"],
                   choices=("levels", "flash", "exhaustive"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--table", choices=("skewed", "uniform"), default="skewed",
                   help="skewed binary-hierarchy columns (default), or the manyqid check's")
    p.set_defaults(repeats=3)
    args = p.parse_args(argv)
    if args.levels < 2:
        p.error("--levels must be at least 2")

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    rows, cases, agree = [], [], True
    for q in args.qids:
        data, hierarchies = (uniform_table(args.rows, q, args.seed) if args.table == "uniform"
                             else synthetic_table(args.rows, q, args.levels, args.skew,
                                                  args.seed))
        optima = set()
        for search in args.searches:
            def anonymizer(search=search):
                return Anonymizer(quasi_identifiers=hierarchies, k=args.k,
                                  suppression_limit=args.suppression, metric="loss",
                                  search=search, backend=backend, seed=0)
            anonymizer().fit(data.head(1000))  # compiles the kernels
            sync()
            anon = anonymizer()
            _, fits = timed_runs(lambda: anon.fit(data), args.repeats, sync, warmup=False)
            last = fits[-1]
            search_s = summarize([r.search.seconds for r in fits])
            optima.add((tuple(sorted(last.transformation.items())), last.information_loss))
            cases.append({"qids": q, "levels": args.levels, "rows": args.rows, "k": args.k,
                          "suppression": args.suppression, "search": search,
                          "lattice_size": last.lattice_size,
                          "nodes_evaluated": last.nodes_evaluated,
                          "search_seconds": search_s,
                          "transformation": last.transformation,
                          "information_loss": last.information_loss})
            rows.append([q, f"{last.lattice_size:,}", search, f"{last.nodes_evaluated:,}",
                         f"{fmt_seconds(search_s['median'])} ({fmt_seconds(search_s['min'])})",
                         f"{last.information_loss:.6g}",
                         "".join(str(v) for v in last.transformation.values())])
            print(f"  done q={q} {search}: {fmt_seconds(search_s['median'])}", flush=True)
        agree &= len(optima) == 1
    print()
    print_table(["qids", "lattice", "search", "checked", "search time", "loss", "optimum"],
                rows)
    print(f"\nsearches agree on optimum and loss: {'yes' if agree else 'NO'}")
    write_json(args.json, {"machine": info, "seed": args.seed, "table": args.table,
                           "skew": args.skew,
                           "cases": cases, "searches_agree": agree})
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
