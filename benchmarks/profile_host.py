"""Where the host's time goes in the runs a GPU waits on: a cProfile of one run per case.

A run on a GPU whose device work is small is paced by the host (Python, launches, copies,
synchronizations); its host profile says what to compile or fuse next.  Per case: one warm-up
run, ``--repeats`` timed runs (the device synchronized after each), then one run under
cProfile; reported are the median wall time and the ``--top`` functions by own time (a
synchronization's wait shows as the own time of the call that synchronizes, e.g. ``get``).

Cases (``--cases``, default all):

* ``mondrian`` -- Mondrian on ``--rows`` census rows (k = 5, strict; six QIDs, age numeric);
* ``levels`` -- the level search on 20,000 rows with 9 QIDs of 5 levels (1.95 M nodes; the
  table of ``bench_lattice.py``);
* ``explore`` -- every node's figures on Adult with 8 QIDs, occupation sensitive (the
  ``adult q=8`` case of ``bench_explore.py``).

It prints a table and writes JSON (``--json``); it asserts nothing about time.  Example::

    python benchmarks/profile_host.py --backend gpu --rows 1e7
    python benchmarks/profile_host.py --backend cpu --rows 1e5 --cases levels
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

from _common import (add_common_args, adult_qids, machine_info, print_machine, print_table,
                     resolve_backend, row_count, synchronizer, write_json)
from bench_lattice import synthetic_table

CASES = ("mondrian", "levels", "explore")


def _runner(case: str, backend, rows: int):
    """The case's run, a function of no arguments, and its data prepared."""
    import gpuppdp
    from gpuppdp import Anonymizer, datasets
    from gpuppdp.algorithms import Mondrian

    if case == "mondrian":
        census, h = datasets.census(rows, 1)
        qids = ["age", "zip", "sex", "race", "marital", "education"]
        cat = {c: h[c] for c in qids if c != "age"}
        return lambda: Mondrian(qids, k=5, strict=True, hierarchies=cat,
                                backend=backend).fit(census)
    if case == "levels":
        data, hierarchies = synthetic_table(20_000, 9, 5, 0.35, 0)
        anonymizer = Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                                metric="loss", search="levels", backend=backend, seed=0)
        return lambda: anonymizer.fit(data)
    data, hierarchies, _ = adult_qids(8)
    return lambda: gpuppdp.explore(data, quasi_identifiers=hierarchies,
                                   sensitive=["occupation"], k=5, suppression_limit=0.05,
                                   backend=backend)


def _top(profile: cProfile.Profile, n: int) -> list[dict]:
    """The ``n`` functions of most own time: name, calls, own and cumulative seconds."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    rows = [{"function": f"{file.rsplit('/', 1)[-1]}:{line}({name})", "calls": calls,
             "own_seconds": own, "cumulative_seconds": cumulative}
            for (file, line, name), (_, calls, own, cumulative, _) in stats.items()]
    return sorted(rows, key=lambda r: -r["own_seconds"])[:n]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p, "profile_host")
    p.add_argument("--rows", type=row_count, default=1_000_000,
                   help="census rows of the Mondrian case (default 1e6)")
    p.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    p.add_argument("--top", type=int, default=12, help="functions listed per case (default 12)")
    p.set_defaults(repeats=2)
    args = p.parse_args(argv)
    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    out = []
    for case in args.cases:
        run = _runner(case, backend, args.rows)
        run()
        sync()
        seconds = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            run()
            sync()
            seconds.append(time.perf_counter() - t0)
        profile = cProfile.Profile()
        profile.enable()
        run()
        sync()
        profile.disable()
        top = _top(profile, args.top)
        out.append({"case": case, "seconds": seconds, "median_seconds": statistics.median(seconds),
                    "top": top})
        print(f"\n{case}: {statistics.median(seconds) * 1e3:.1f} ms median of {args.repeats}")
        print_table(["function", "calls", "own ms", "cumulative ms"],
                    [[r["function"], r["calls"], f"{r['own_seconds'] * 1e3:.1f}",
                      f"{r['cumulative_seconds'] * 1e3:.1f}"] for r in top])
    write_json(args.json, {"machine": info, "args": vars(args), "cases": out})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
