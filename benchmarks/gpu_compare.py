"""CPU and GPU give the same result: optimum, information loss, classes and suppressed rows.

Runs every ARX reference case of ``tests/data/arx_adult.json`` on Adult and one scaled Adult
table (``--rows``, 8 QIDs, k=5, 5 % suppression, loss) on both backends, with Flash and with
the level search (the GPU's default), prints one line per case and writes JSON; exits 1 if any
case differs (or the GPU backend is unavailable).

    python benchmarks/gpu_compare.py --rows 10000000
"""

from __future__ import annotations

import argparse
import sys
import time

from _common import (arx_case_anonymizer, default_json, load_arx_cases, machine_info,
                     print_table, resolve_backend, write_json)
from bench_scale import scaled_adult


def _outcome(result) -> dict:
    return {"transformation": dict(result.transformation),
            "information_loss": result.information_loss,
            "equivalence_classes": result.summary()["equivalence_classes"],
            "suppressed_records": result.suppressed_records,
            "search_seconds": result.search.seconds}


def _compare(name: str, fit_cpu, fit_gpu) -> dict:
    cpu, gpu = _outcome(fit_cpu()), _outcome(fit_gpu())
    same = all(cpu[k] == gpu[k] for k in ("transformation", "information_loss",
                                          "equivalence_classes", "suppressed_records"))
    return {"case": name, "same": same, "cpu": cpu, "gpu": gpu}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=lambda t: int(float(t)), default=10_000_000,
                   help="rows of the scaled Adult table (0: skip it)")
    p.add_argument("--json", default=default_json("gpu_compare"))
    args = p.parse_args(argv)
    cpu, gpu = resolve_backend("cpu"), resolve_backend("gpu")
    from gpuppdp import Anonymizer

    cases = []
    for case in load_arx_cases():
        for search in ("flash", "levels"):
            def fit(backend, case=case, search=search):
                anon, data = arx_case_anonymizer(case, backend, search)
                return anon.fit(data)
            cases.append(_compare(f"{case['id']} {search}", lambda: fit(cpu), lambda: fit(gpu)))
            print(f"{cases[-1]['case']}: {'same' if cases[-1]['same'] else 'DIFFERENT'}",
                  flush=True)
    if args.rows:
        t0 = time.perf_counter()
        data, hierarchies = scaled_adult(args.rows, 0)
        qids = {c: h for c, h in hierarchies.items() if c != "occupation"}

        for search in ("flash", "levels"):
            def fit(backend, search=search):
                return Anonymizer(quasi_identifiers=qids, insensitive=["occupation"], k=5,
                                  suppression_limit=0.05, metric="loss", search=search,
                                  backend=backend, seed=0).fit(data)
            cases.append(_compare(f"scaled Adult {args.rows} rows {search}", lambda: fit(cpu),
                                  lambda: fit(gpu)))
            print(f"{cases[-1]['case']}: {'same' if cases[-1]['same'] else 'DIFFERENT'} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
    print_table(["case", "same", "loss", "CPU search", "GPU search"],
                [[c["case"], c["same"], f"{c['cpu']['information_loss']:.6g}",
                  f"{c['cpu']['search_seconds']:.3f} s", f"{c['gpu']['search_seconds']:.3f} s"]
                 for c in cases])
    write_json(args.json, {"machine": machine_info(gpu), "cases": cases})
    return 0 if all(c["same"] for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
