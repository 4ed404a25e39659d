"""Top-down specialization (``gpuppdp.algorithms.tds``) on Adult and on the census generator's
data, against Mondrian and the full-domain optimum.

Adult: the bundled extract (30,162 rows), QIDs ``age`` (numeric: TDS splits it at run time;
full-domain uses ARX's age hierarchy) and ``sex, race, marital-status, education,
native-country, workclass`` (ARX's hierarchies), classification target ``salary-class`` (TDS's
InfoGain / (AnonyLoss + 1)) or none (the plain information gain); HDTDS with LKC-privacy
``(L, K, C)`` and sensitive ``occupation``.  Census: ``gpuppdp.datasets.census(--rows,
--seed)``, QIDs ``age`` (numeric) and ``zip, sex, race, marital, education``, no target.

TDS's rounds run on ``--backend`` (on a GPU: ``gpuppdp.algorithms.tds_rounds`` on the device).
Every release is checked by the independent checker (inside ``TDS.fit``); GCP of full-domain and
Mondrian measured by the same function (``certainty_penalty``).  Prints a table and writes
JSON (``--json``, default ``benchmarks/out/bench_tds.json``); asserts nothing about time.
Example::

    python benchmarks/bench_tds.py --rows 1000000 --repeats 1
    python benchmarks/bench_tds.py --backend gpu --rows 1e7 --repeats 2   (the GPU check's step)
"""

from __future__ import annotations

import argparse
import statistics
import time

import pandas as pd
from _common import (add_common_args, machine_info, print_machine, print_table, resolve_backend,
                     timed_runs, write_json)

ADULT_QIDS = ["age", "sex", "race", "marital-status", "education", "native-country",
              "workclass"]
CENSUS_QIDS = ["age", "zip", "sex", "race", "marital", "education"]


def _timed(fn, repeats):
    """``(the last call's result, median seconds)`` of ``repeats`` calls, no warm-up."""
    times, outs = timed_runs(fn, repeats, lambda: None, warmup=False)
    return outs[-1], statistics.median(times)


def _cases(name, data, hierarchies, qids, cases, args, backend, compare):
    from gpuppdp import Anonymizer
    from gpuppdp.algorithms import TDS, Mondrian
    from gpuppdp.algorithms.mondrian import certainty_penalty

    cat = {c: hierarchies[c] for c in qids if c != "age"}
    numeric = data.copy()
    numeric["age"] = pd.to_numeric(numeric["age"])
    rows = []
    for case in cases:
        kw = {key: case[key] for key in ("k", "lkc", "target", "sensitive") if key in case}
        r, seconds = _timed(lambda: TDS(qids, hierarchies=cat, backend=backend, **kw
                                        ).fit(numeric), args.repeats)
        row = {"data": name, "rows": len(data), **{k: v for k, v in kw.items()},
               "seconds": seconds, "specializations": r.specializations,
               "classes": r.partitions, "checked_k": r.checked["k"],
               "lkc_satisfied": r.checked.get("lkc_satisfied"), "gcp": r.gcp, "ncp": r.ncp,
               "mondrian_gcp": None, "mondrian_seconds": None, "full_domain_gcp": None,
               "full_domain_seconds": None}
        if compare and "k" in case:
            m, row["mondrian_seconds"] = _timed(lambda: Mondrian(
                qids, k=case["k"], hierarchies=cat).fit(numeric), 1)
            row["mondrian_gcp"] = m.gcp
            t0 = time.perf_counter()
            full = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in qids},
                              k=case["k"], suppression_limit=0.0, metric="loss",
                              backend=backend, seed=0, others="insensitive").fit(data)
            row["full_domain_seconds"] = time.perf_counter() - t0
            row["full_domain_gcp"] = certainty_penalty(full.released, data, qids,
                                                       hierarchies=hierarchies)["gcp"]
        rows.append(row)
        print(f"  {name} {kw}: {seconds:.2f} s, {r.specializations} specializations, "
              f"GCP {r.gcp:.4f}", flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_tds")
    p.add_argument("--rows", type=float, default=1e6, help="census rows (default 1e6)")
    p.add_argument("--seed", type=int, default=1, help="census seed (default 1)")
    p.set_defaults(repeats=1)
    args = p.parse_args()
    backend = resolve_backend(args.backend)
    info = machine_info(backend)
    print_machine(info)

    from gpuppdp import datasets

    adult, h_adult = datasets.adult()
    rows = _cases("adult", adult, h_adult, ADULT_QIDS, [
        {"k": 5, "target": "salary-class"}, {"k": 10, "target": "salary-class"},
        {"k": 50, "target": "salary-class"}, {"k": 5}, {"k": 50},
        {"lkc": (2, 5, 1.0), "target": "salary-class"},
        {"lkc": (2, 10, 0.5), "sensitive": "occupation", "target": "salary-class"},
    ], args, backend, compare=True)
    if args.rows > 0:
        census, h_census = datasets.census(int(args.rows), args.seed)
        rows += _cases("census", census, h_census, CENSUS_QIDS, [{"k": 5}, {"k": 50}],
                       args, backend, compare=False)

    print()
    fmt = lambda x: "-" if x is None else f"{x:.4f}"  # noqa: E731
    print_table(["data", "rows", "model", "target", "seconds", "specializations", "classes",
                 "GCP", "Mondrian GCP", "full-domain GCP"],
                [[r["data"], r["rows"],
                  f"k={r['k']}" if "k" in r else "LKC=" + ",".join(map(str, r["lkc"])),
                  r.get("target") or "-", f"{r['seconds']:.2f}", r["specializations"],
                  r["classes"], fmt(r["gcp"]), fmt(r["mondrian_gcp"]),
                  fmt(r["full_domain_gcp"])] for r in rows])
    write_json(args.json, {"machine": info, "args": vars(args), "tds": rows})


if __name__ == "__main__":
    main()
