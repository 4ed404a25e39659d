"""Mondrian (``gpuppdp.algorithms.mondrian``) and anatomy (``gpuppdp.algorithms.anatomy``) on Adult
and on the census generator's data, against the full-domain optimum.

Adult: the bundled extract (30,162 rows), QIDs ``age`` (numeric: Mondrian cuts it at run
time; full-domain uses ARX's age hierarchy) and ``sex, race, marital-status, education,
native-country, workclass, salary-class`` (categorical, ARX's hierarchies), sensitive
``occupation``.  Census: ``gpuppdp.datasets.census(--rows, --seed)``, QIDs ``age`` (numeric)
and ``zip, sex, race, marital, education`` (the generator's hierarchies), sensitive
``occupation``.

For every (data, k, l): Mondrian strict and relaxed on ``--backend`` (its rounds on the GPU
with ``gpu``; one warm-up, ``--repeats`` timed runs, median), each release checked by the
independent checker (``k``, distinct ``l``); the
full-domain optimum (``Anonymizer``: loss metric, no suppression, timed once) and its NCP
measured by the same function (``certainty_penalty``); the mean relative error of
``--queries`` random count queries (2 columns each, :func:`gpuppdp.queries.workload_error`,
Adult only unless ``--census-queries``).  Anatomy: the bucket algorithm's time per l.
``--mondrian-only`` times Mondrian alone (no full-domain optimum, queries or anatomy).

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_mondrian.json``);
it asserts nothing about time.  Example::

    python benchmarks/bench_mondrian.py --rows 1000000 --repeats 3
    python benchmarks/bench_mondrian.py --backend gpu --rows 1e7 --mondrian-only
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import (add_common_args, machine_info, print_machine, print_table, resolve_backend,
                     timed_runs, write_json)

ADULT_QIDS = ["age", "sex", "race", "marital-status", "education", "native-country",
              "workclass", "salary-class"]
CENSUS_QIDS = ["age", "zip", "sex", "race", "marital", "education"]
NUMERIC = {"age"}


def _cases(name, data, hierarchies, qids, ks, ls, args, backend, queries):
    from gpuppdp import Anonymizer
    from gpuppdp.analysis.checker import check
    from gpuppdp.algorithms import Mondrian
    from gpuppdp.algorithms.mondrian import certainty_penalty
    from gpuppdp.queries import workload_error

    cat = {c: hierarchies[c] for c in qids if c not in NUMERIC}
    rows = []
    for k in ks:
        for l in ls:
            models = []
            if l is not None:
                from gpuppdp.models import DistinctLDiversity
                models = [DistinctLDiversity("occupation", l)]
            full, full_s, full_gcp, full_err = None, None, None, None
            if not args.mondrian_only:
                t0 = time.perf_counter()
                full = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in qids},
                                  sensitive=["occupation"] if l else [], k=k, models=models,
                                  suppression_limit=0.0, metric="loss", backend=backend,
                                  seed=0, others="insensitive").fit(data)
                full_s = time.perf_counter() - t0
                full_gcp = certainty_penalty(full.released, data, qids, hierarchies=cat)["gcp"]
                full_err = workload_error(data, full, queries=queries, seed=1,
                                          columns=qids) if queries else None
            for strict in (True, False):
                run = lambda: Mondrian(qids, k=k, sensitive="occupation" if l else None,
                                       l=l, strict=strict, hierarchies=cat,
                                       backend=backend).fit(data)
                times, outs = timed_runs(run, args.repeats, lambda: None)
                r = outs[-1]
                measured = check(r.released, quasi_identifiers=qids,
                                 sensitive="occupation" if l else None, backend=backend)
                assert measured["k"] >= k and (l is None or measured["distinct_l"] >= l)
                err = workload_error(data, r, queries=queries, seed=1, columns=qids) \
                    if queries else None
                rows.append({"data": name, "rows": len(data), "algorithm": "mondrian",
                             "mode": "strict" if strict else "relaxed", "k": k, "l": l,
                             "seconds": statistics.median(times), "min_seconds": min(times),
                             "partitions": r.partitions, "rounds": r.rounds,
                             "checked_k": measured["k"], "checked_l": measured["distinct_l"],
                             "gcp": r.gcp, "ncp": r.ncp, "query_error": err,
                             "full_domain_gcp": full_gcp, "full_domain_seconds": full_s,
                             "full_domain_transformation": full and full.transformation,
                             "full_domain_query_error": full_err})
                print(f"  {name} k={k} l={l} {'strict' if strict else 'relaxed'}: "
                      f"{statistics.median(times):.3f} s ({r.rounds} rounds), GCP "
                      f"{r.gcp:.4f} (full-domain {_fmt(full_gcp)})", flush=True)
    return rows


def _anatomy(name, data, qids, ls, repeats):
    from gpuppdp.algorithms import Anatomy

    out = []
    for l in ls:
        times, outs = timed_runs(lambda: Anatomy(qids, sensitive="occupation", l=l,
                                                 seed=0).fit(data),
                                 repeats, lambda: None)
        r = outs[-1]
        out.append({"data": name, "rows": len(data), "algorithm": "anatomy", "l": l,
                    "seconds": statistics.median(times), "groups": r.groups})
    return out


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_mondrian")
    p.add_argument("--rows", type=float, default=1e6, help="census rows (default 1e6)")
    p.add_argument("--seed", type=int, default=1, help="census seed (default 1)")
    p.add_argument("--queries", type=int, default=200,
                   help="random count queries per release (default 200; 0: none)")
    p.add_argument("--census-queries", type=int, default=0,
                   help="queries per census release (default 0: none)")
    p.add_argument("--mondrian-only", action="store_true",
                   help="time Mondrian alone: no full-domain optimum, queries or anatomy")
    p.set_defaults(repeats=3)
    args = p.parse_args()
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)

    from gpuppdp import datasets

    adult, h_adult = datasets.adult()
    census, h_census = datasets.census(int(args.rows), args.seed)
    rows = []
    only = args.mondrian_only
    rows += _cases("adult", adult, h_adult, ADULT_QIDS, [5, 10, 50], [None, 3], args,
                   backend, 0 if only else args.queries)
    rows += _cases("census", census, h_census, CENSUS_QIDS, [5, 50], [None, 3], args,
                   backend, 0 if only else args.census_queries)
    anat = [] if only else _anatomy("adult", adult, ADULT_QIDS, [3, 5], args.repeats)
    anat += [] if only else _anatomy("census", census, CENSUS_QIDS, [2, 3], args.repeats)

    print()
    seconds = lambda x: "-" if x is None else f"{x:.2f}"
    print_table(["data", "rows", "mode", "k", "l", "seconds", "partitions", "rounds", "GCP",
                 "full-domain GCP", "full-domain s", "query err", "full-domain err"],
                [[r["data"], r["rows"], r["mode"], r["k"], r["l"] or "-",
                  f"{r['seconds']:.3f}", r["partitions"], r["rounds"], _fmt(r["gcp"]),
                  _fmt(r["full_domain_gcp"]), seconds(r["full_domain_seconds"]),
                  _fmt(r["query_error"]), _fmt(r["full_domain_query_error"])] for r in rows])
    print()
    print_table(["data", "rows", "algorithm", "l", "seconds", "groups"],
                [[r["data"], r["rows"], r["algorithm"], r["l"], f"{r['seconds']:.3f}",
                  r["groups"]] for r in anat])
    write_json(args.json, {"machine": info, "args": vars(args), "mondrian": rows,
                           "anatomy": anat})


if __name__ == "__main__":
    main()
