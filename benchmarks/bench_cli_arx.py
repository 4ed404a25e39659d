"""Search time through the CLI, as a user runs it, against ARX on the Adult reference cases.

Per case of ``tests/data/arx_adult.json`` (ARX 3.9.2 on Adult: k-anonymity with the loss,
precision and discernibility metrics, l-diversity and t-closeness) it runs ``gpuppdp
anonymize`` on the bundled Adult extract in a fresh process, ``--repeats`` times after one
warm-up run (which fills Numba's cache after an install or an edit), and reads the search
time from the ``--json`` summary (``timings.search``: the search alone, after reading and
encoding, as ARX's ``anonymize()`` time is after its encoding, and after the process has
loaded the compiled kernels from Numba's cache, as ARX's warm JVM has its classes; that wait
is ``timings["kernel load"]``).  It reports the median, the
ratio to ARX's median ``anonymize()`` time, whether the optimum and checked-node count are
ARX's, and the median and worst ratio over the cases.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_cli_arx.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_cli_arx.py --repeats 5
    python benchmarks/bench_cli_arx.py --only A-8qid --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from _common import (add_common_args, load_arx_cases, machine_info, print_machine, print_table,
                     resolve_backend, write_json)

from gpuppdp import datasets


def _model_args(case: dict) -> list[str]:
    out = []
    for m in case["models"]:
        kind = m["model"]
        at = f"@{m['attribute']}" if "attribute" in m else ""
        if kind == "k-anonymity":
            out += ["--k", str(m["k"])]
        elif kind == "distinct-l-diversity":
            out += ["--l-diversity", f"distinct:{m['l']}{at}"]
        elif kind == "entropy-l-diversity":
            out += ["--l-diversity", f"entropy:{m['l']}{at}"]
        elif kind == "recursive-cl-diversity":
            out += ["--l-diversity", f"recursive:{m['c']},{m['l']}{at}"]
        elif kind == "t-closeness":
            out += ["--t-closeness", f"{m['distance']}:{m['t']}{at}"]
        else:
            raise ValueError(f"unsupported model {m}")
    return out


def case_command(case: dict, out_dir: str, backend: str) -> list[str]:
    """The ``gpuppdp anonymize`` command line of one reference case."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "gpuppdp"), "anonymize",
           datasets.adult_path("adult.csv")]
    for q in case["quasi_identifiers"]:
        cmd += ["--qi", f"{q}={datasets.adult_path(f'adult_hierarchy_{q}.csv')}"]
    if case.get("sensitive"):
        s = case["sensitive"]
        hierarchical = any(m.get("distance") == "hierarchical" for m in case["models"])
        cmd += ["--sensitive", f"{s}={datasets.adult_path(f'adult_hierarchy_{s}.csv')}"
                if hierarchical else s]
    cmd += ["--others", "insensitive", "--suppression", str(case["suppression_limit"]),
            "--metric", {"discernability": "discernibility"}.get(case["metric"], case["metric"]),
            "--search", "flash", "--backend", backend, "--quiet",
            "--output", os.path.join(out_dir, "out.csv"),
            "--json", os.path.join(out_dir, "out.json")] + _model_args(case)
    return cmd


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_cli_arx")
    p.add_argument("--only", default="", help="cases whose id contains this text")
    args = p.parse_args(argv)
    resolved = resolve_backend(args.backend)
    backend = resolved.name if resolved.is_gpu else "cpu"
    info = machine_info(resolved)
    print_machine(info)
    rows, results = [], []
    with tempfile.TemporaryDirectory() as out_dir:
        for case in load_arx_cases():
            if args.only not in case["id"]:
                continue
            cmd = case_command(case, out_dir, backend)
            seconds, summary = [], None
            for run in range(args.repeats + 1):
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(f"{case['id']}: {done.stderr.strip()[-500:]}")
                with open(os.path.join(out_dir, "out.json"), encoding="utf-8") as fh:
                    summary = json.load(fh)
                if run:  # the first run is the warm-up
                    seconds.append(summary["timings"]["search"])
            arx = case["arx"]
            median = statistics.median(seconds)
            ratio = median * 1e3 / arx["anonymize_ms_median"]
            same = (summary["transformation"] == case["expected"]["transformation"]
                    and summary["nodes_evaluated"] == arx["nodes_checked"])
            results.append({"id": case["id"], "search_seconds": seconds,
                            "search_median": median, "arx_ms": arx["anonymize_ms_median"],
                            "ratio": ratio, "nodes": summary["nodes_evaluated"],
                            "arx_nodes": arx["nodes_checked"], "same_as_arx": same})
            rows.append([case["id"], summary["nodes_evaluated"], f"{median * 1e3:.1f}",
                         f"{min(seconds) * 1e3:.1f}", f"{arx['anonymize_ms_median']:.1f}",
                         f"{ratio:.2f}", "yes" if same else "NO"])
            print(f"  {case['id']}: {median * 1e3:.1f} ms, {ratio:.2f}x ARX", file=sys.stderr,
                  flush=True)
    print()
    print_table(["case", "nodes", "search ms (median)", "min", "ARX ms", "ratio", "=ARX"],
                rows)
    ratios = [r["ratio"] for r in results]
    if ratios:
        print(f"\nratio to ARX over {len(ratios)} cases: median {statistics.median(ratios):.2f},"
              f" worst {max(ratios):.2f}")
    write_json(args.json, {"benchmark": "bench_cli_arx", "machine": info,
                           "settings": {"repeats": args.repeats, "warmup_runs": 1,
                                        "backend": backend},
                           "cases": results,
                           "median_ratio": statistics.median(ratios) if ratios else None,
                           "worst_ratio": max(ratios) if ratios else None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
