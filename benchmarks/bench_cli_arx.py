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

ARX's times come from the reference file (another day, another moment of the machine) unless
``--arx-classpath CP`` is given (ARX 3.9.2 and our serve-mode runner ``ArxRunX``,
``benchmarks/arx/ArxRunX.java``, compiled against it): then one JVM per case stays up beside
this process and the two are timed interleaved -- ARX warms up (``--arx-warmup`` runs) and our
command line runs ``--warmup`` times (once by default), then ``--rounds`` rounds of
``--repeats`` ARX ``anonymize()`` calls followed by ``--repeats`` runs of ours, which start
once the JVM's own threads are idle (``_common.settle``); a case's ratio is the median over
its rounds of the round's median ratio, each round keeping the load average, and "=ARX"
compares with the live ARX's optimum and checked transformations.

With ``--in-process`` our side is timed warm as well: one Python process per case runs the
same command line in process (``gpuppdp.cli.main.main``, as a notebook or a service calls the
library), ``--warmup`` untimed runs first (default: ARX's ``--arx-warmup``), so that both sides
are measured as long-running processes; without it every run of ours is a fresh process, as a
user at a shell runs it.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_cli_arx.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_cli_arx.py --repeats 5
    python benchmarks/bench_cli_arx.py --only A-8qid --repeats 3
    python benchmarks/bench_cli_arx.py --repeats 3 --rounds 3 \\
        --arx-classpath "$(cat /work/arxbuild/CLASSPATH):/work/arxbuild/census"
    python benchmarks/bench_cli_arx.py --repeats 3 --rounds 3 --in-process \\
        --arx-classpath "$(cat /work/arxbuild/CLASSPATH):/work/arxbuild/census"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from _common import (ArxServer, add_common_args, load_arx_cases, machine_info, print_machine,
                     print_table, resolve_backend, settle, write_json)

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


def arx_command(case: dict, classpath: str) -> list[str]:
    """The ``ArxRunX mode=serve`` command line of one reference case (its models, metric and
    suppression limit on the same Adult extract the command line reads)."""
    argv = ["java", "-cp", classpath, "ArxRunX", "mode=serve",
            f"data={datasets.adult_path('adult.csv')}",
            f"hierdir={os.path.dirname(datasets.adult_path('adult.csv'))}",
            "qids=" + ",".join(case["quasi_identifiers"]),
            f"supp={case['suppression_limit']}", f"metric={case['metric']}"]
    if case.get("sensitive"):
        argv.append(f"sensitive={case['sensitive']}")
    k = 0
    for m in case["models"]:
        kind = m["model"]
        if kind == "k-anonymity":
            k = m["k"]
        elif kind == "distinct-l-diversity":
            argv.append(f"ldiv={m['l']}")
        elif kind == "entropy-l-diversity":
            argv += ["ldivtype=entropy", f"ldivl={m['l']}"]
        elif kind == "recursive-cl-diversity":
            argv += ["ldivtype=recursive", f"c={m['c']}", f"ldivl={m['l']}"]
        elif kind == "t-closeness":
            argv += [f"tclose={m['distance']}", f"t={m['t']}"]
            if m["distance"] == "hierarchical":
                argv.append(f"thier={datasets.adult_path(m['hierarchy'])}")
        else:
            raise ValueError(f"unsupported model {m}")
    return argv + [f"k={k}"]


def _ours(cmd: list[str], out_dir: str, case_id: str) -> dict:
    """One run of our command line in a fresh process: its ``--json`` summary."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{case_id}: {done.stderr.strip()[-500:]}")
    with open(os.path.join(out_dir, "out.json"), encoding="utf-8") as fh:
        return json.load(fh)


#: a long-running process that runs the command line (``argv[1:]``) in process once per
#: "run" line on its standard input and answers with the ``--json`` summary, on one line
_SERVE = """
import contextlib, io, json, sys
from gpuppdp.cli.main import main
argv, out_json = sys.argv[1:], sys.argv[sys.argv.index("--json") + 1]
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    if line.strip() != "run":
        break
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    if status:
        raise SystemExit(f"the command line ended with status {status}")
    with open(out_json, encoding="utf-8") as fh:
        print(json.dumps(json.load(fh)), flush=True)
"""


class _Warm:
    """Our command line run warm: one process runs it in process once per :meth:`run`."""

    def __init__(self, cmd: list[str], case_id: str):
        self.case_id = case_id
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVE, *cmd[1:]],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if not json.loads(self.proc.stdout.readline()).get("ready"):
            raise SystemExit(f"{case_id}: the in-process runner did not start")

    def run(self) -> dict:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.case_id}: the in-process runner stopped")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _stored(case: dict, ours, repeats: int, warmup: int) -> dict:
    """Ours (``ours()``) ``repeats`` times after ``warmup`` runs, against the reference
    file's ARX times."""
    for _ in range(warmup):
        ours()
    seconds, summary = [], {}
    for _ in range(repeats):
        summary = ours()
        seconds.append(summary["timings"]["search"])
    arx = case["arx"]
    median = statistics.median(seconds)
    return {"search_seconds": seconds, "search_median": median,
            "arx_ms": arx["anonymize_ms_median"],
            "ratio": median * 1e3 / arx["anonymize_ms_median"],
            "nodes": summary["nodes_evaluated"], "arx_nodes": arx["nodes_checked"],
            "same_as_arx": (summary["transformation"] == case["expected"]["transformation"]
                            and summary["nodes_evaluated"] == arx["nodes_checked"])}


def _live(case: dict, ours, classpath: str, args) -> dict:
    """Ours (``ours()``) and a live ARX (one warm JVM), interleaved: ``args.rounds`` rounds
    of ``args.repeats`` ARX runs and ``args.repeats`` of ours, after the warm-ups."""
    with ArxServer(arx_command(case, classpath), f"ArxRunX for {case['id']}") as jvm:
        for _ in range(args.arx_warmup):
            jvm.send("warm")
        settle(jvm.pid)
        for _ in range(args.warmup):
            summary = ours()
        rounds = []
        for _ in range(args.rounds):
            load = os.getloadavg()[0]
            arx_runs = [jvm.send("run") for _ in range(args.repeats)]
            settle(jvm.pid)
            runs = [ours() for _ in range(args.repeats)]
            summary = runs[-1]
            arx_ms = statistics.median(r["ms"] for r in arx_runs)
            search = statistics.median(o["timings"]["search"] for o in runs)
            rounds.append({"load_average": load, "arx_ms": [r["ms"] for r in arx_runs],
                           "search_seconds": [o["timings"]["search"] for o in runs],
                           "ratio": search * 1e3 / arx_ms, "arx_checked": arx_runs[-1]["checked"]})
        final = jvm.quit()
    seconds = [x for r in rounds for x in r["search_seconds"]]
    arx_all = [x for r in rounds for x in r["arx_ms"]]
    nodes = final["transformations_checked"]
    return {"search_seconds": seconds, "search_median": statistics.median(seconds),
            "arx_ms": statistics.median(arx_all),
            "ratio": statistics.median(r["ratio"] for r in rounds), "rounds": rounds,
            "nodes": summary["nodes_evaluated"], "arx_nodes": nodes,
            "arx_transformation": final["transformation"],
            "same_as_arx": (summary["transformation"] == final["transformation"]
                            and summary["nodes_evaluated"] == nodes)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_cli_arx")
    p.add_argument("--only", default="", help="cases whose id contains this text")
    p.add_argument("--arx-classpath", default=None,
                   help="time a live ARX 3.9.2 (this classpath, with ArxRunX) interleaved "
                        "with ours instead of the reference file's times")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds per case with --arx-classpath (default 3)")
    p.add_argument("--arx-warmup", type=int, default=10,
                   help="ARX's untimed warm-up runs per case with --arx-classpath (default 10: "
                        "its JIT goes on shortening the runs for about that many)")
    p.add_argument("--in-process", action="store_true",
                   help="time ours warm: the command line run in one long-running process per "
                        "case (as the library is called), not a fresh process per run")
    p.add_argument("--warmup", type=int, default=None,
                   help="our untimed runs per case (default: 1, or with --in-process as many "
                        "as --arx-warmup)")
    args = p.parse_args(argv)
    if args.warmup is None:
        args.warmup = args.arx_warmup if args.in_process else 1
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
            warm = _Warm(cmd, case["id"]) if args.in_process else None
            try:
                # one run of ours: in the warm process, else in a fresh one
                ours = warm.run if warm is not None else (
                    lambda: _ours(cmd, out_dir, case["id"]))
                found = (_live(case, ours, args.arx_classpath, args) if args.arx_classpath
                         else _stored(case, ours, args.repeats, args.warmup))
            finally:
                if warm is not None:
                    warm.close()
            results.append({"id": case["id"], **found})
            seconds = found["search_seconds"]
            rows.append([case["id"], found["nodes"], f"{found['search_median'] * 1e3:.1f}",
                         f"{min(seconds) * 1e3:.1f}", f"{found['arx_ms']:.1f}",
                         f"{found['ratio']:.2f}", "yes" if found["same_as_arx"] else "NO"])
            print(f"  {case['id']}: {found['search_median'] * 1e3:.1f} ms, "
                  f"{found['ratio']:.2f}x ARX", file=sys.stderr, flush=True)
    print()
    print_table(["case", "nodes", "search ms (median)", "min",
                 "ARX ms (live)" if args.arx_classpath else "ARX ms", "ratio", "=ARX"], rows)
    ratios = [r["ratio"] for r in results]
    if ratios:
        print(f"\nratio to ARX over {len(ratios)} cases: median {statistics.median(ratios):.2f},"
              f" worst {max(ratios):.2f}")
    write_json(args.json, {"benchmark": "bench_cli_arx", "machine": info,
                           "settings": {"repeats": args.repeats, "warmup_runs": args.warmup,
                                        "ours": ("in process, warm" if args.in_process
                                                 else "a fresh process per run"),
                                        "backend": backend,
                                        "arx": "live" if args.arx_classpath else "reference file",
                                        "rounds": args.rounds if args.arx_classpath else None,
                                        "arx_warmup": (args.arx_warmup if args.arx_classpath
                                                       else None)},
                           "cases": results,
                           "median_ratio": statistics.median(ratios) if ratios else None,
                           "worst_ratio": max(ratios) if ratios else None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
