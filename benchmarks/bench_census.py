"""Census scale end to end: a generated census anonymized from Parquet to Parquet by the CLI.

For every ``--rows`` N: ``gpuppdp generate census --rows N --seed S`` writes the table and its
hierarchies to a temporary folder, then ``gpuppdp anonymize`` runs on it as a user runs it
(QIDs zip, age, sex, race, marital, education; person_id identifying; the other columns
insensitive; k=5, 5 % suppression, loss metric; ``--backend``; extra CLI options with
``--extra``, e.g. ``--extra "--dask local:2"``), in a child process whose peak resident
memory is read from ``getrusage(RUSAGE_CHILDREN)``.  Inputs above 2^20 rows are anonymized
out of core (``Anonymizer.fit_file``).  Reported per N: generation time, end-to-end wall time,
the CLI's encode/search/release split, peak RSS, the nodes checked, classes and suppressed
records, and the optimum.  ``--measure risk check`` also times ``gpuppdp risk`` and
``gpuppdp check`` (the same QIDs, ``--backend``) once on each table, end to end with their
peak RSS.  With ``--runs 2`` every table is anonymized twice: the first run in
a fresh environment compiles the GPU kernels (CuPy and Numba keep them on disk), the second
shows a user's later runs.  ``--host-threads 8 16`` runs once per value with that many host
threads (``GPUPPDP_HOST_THREADS``).  With ``GPUPPDP_LOG=DEBUG`` in the environment, each run
also reports where the encoding's and the release's calling thread spent its time.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_census.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_census.py --rows 1e6 5e6 2e7
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from _common import machine_info, print_machine, print_table, row_count, write_json

QUASI_IDENTIFIERS = ("zip", "age", "sex", "race", "marital", "education")


_WRAP = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
         "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
         "file=sys.stderr); sys.exit(r.returncode)")


def generate(gp: str, rows: int, seed: int, folder: str) -> float:
    """``gpuppdp generate census`` into ``folder``; returns the seconds it took."""
    t0 = time.perf_counter()
    subprocess.run([gp, "generate", "census", "--rows", str(rows), "--seed", str(seed),
                    "--output", folder], check=True, capture_output=True)
    return time.perf_counter() - t0


def _wrapped(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """Run ``cmd`` in a child process: ``(seconds, peak RSS in GiB, stderr)``; exits on a
    failure."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True,
                       env=env)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd[1:2])} failed: {p.stderr.strip()[-500:]}")
    rss_kb = [int(line.split()[1]) for line in p.stderr.splitlines()
              if line.startswith("MAXRSS_KB ")][-1]
    return wall, rss_kb / 2 ** 20, p.stderr


def measure_one(gp: str, command: str, rows: int, backend: str, folder: str) -> dict:
    """One ``gpuppdp risk`` or ``gpuppdp check`` of the census in ``folder`` (values as they
    are, the anonymizer's QIDs), in a child process."""
    js = os.path.join(folder, f"{command}.json")
    cmd = [gp, command, os.path.join(folder, "census.parquet"), "--qi", *QUASI_IDENTIFIERS,
           "--backend", backend, "--quiet", "--json", js]
    wall, rss, _ = _wrapped(cmd)
    report = json.load(open(js))
    classes = report.get("equivalence_classes", report.get("classes"))
    return {"command": command, "rows": rows, "wall_s": wall, "peak_rss_gib": rss,
            "classes": classes}


def run_one(gp: str, rows: int, backend: str, extra: list[str], folder: str,
            host_threads: int | None = None) -> dict:
    """One ``gpuppdp anonymize`` of the census in ``folder``, in a child process (with
    ``GPUPPDP_HOST_THREADS=host_threads`` when given)."""
    cmd = [gp, "anonymize", os.path.join(folder, "census.parquet")]
    for q in QUASI_IDENTIFIERS:
        cmd += ["--qi", f"{q}={os.path.join(folder, f'census_hierarchy_{q}.csv')}"]
    out, js = os.path.join(folder, "out.parquet"), os.path.join(folder, "out.json")
    cmd += ["--identifying", "person_id", "--others", "insensitive", "--k", "5",
            "--suppression", "0.05", "--metric", "loss", "--backend", backend, "--quiet",
            "--output", out, "--json", js, *extra]
    env = dict(os.environ)
    if host_threads is not None:
        env["GPUPPDP_HOST_THREADS"] = str(host_threads)
    wall, rss, stderr = _wrapped(cmd, env)
    # with GPUPPDP_LOG=DEBUG the CLI logs where each pass's calling thread spent its time
    log = [line for line in stderr.splitlines()
           if " on the calling thread: " in line or line.startswith("loaded in")]
    summary = json.load(open(js))
    timings = summary.get("timings", {})
    return {"rows": rows, "host_threads": host_threads, "wall_s": wall,
            "encode_s": timings.get("encode"), "search_s": timings.get("search"),
            "release_s": timings.get("release"), "peak_rss_gib": rss,
            "nodes_evaluated": summary["nodes_evaluated"],
            "classes": summary["equivalence_classes"],
            "suppressed": summary["suppressed_records"],
            "transformation": summary["transformation"],
            "information_loss": summary["information_loss"], "log": log}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=row_count, nargs="+", default=[1_000_000, 5_000_000])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"))
    ap.add_argument("--extra", default="", help="more anonymize options, one string")
    ap.add_argument("--runs", type=int, default=1,
                    help="anonymize each table this many times (the first run fills the "
                         "kernel caches on disk: CuPy's and Numba's compiled kernels)")
    ap.add_argument("--host-threads", type=int, nargs="+", default=None, metavar="N",
                    help="one run per N, with GPUPPDP_HOST_THREADS=N (instead of --runs)")
    ap.add_argument("--measure", nargs="+", default=[], choices=("risk", "check"),
                    help="also time these commands once on each table")
    ap.add_argument("--json", default="benchmarks/out/bench_census.json")
    args = ap.parse_args(argv)
    gp = shutil.which("gpuppdp") or os.path.join(os.path.dirname(sys.executable), "gpuppdp")
    from _common import resolve_backend

    machine = machine_info(resolve_backend(args.backend))
    print_machine(machine)
    results, measured = [], []
    threads = args.host_threads or [None] * args.runs

    def write():
        write_json(args.json, {"benchmark": "census", "machine": machine,
                               "backend": args.backend, "extra": args.extra,
                               "results": results, "measured": measured})

    for rows in args.rows:
        folder = tempfile.mkdtemp(prefix="bench-census-")
        try:
            seconds = generate(gp, rows, args.seed, folder)
            print(f"{rows:,} rows generated in {seconds:.1f} s; anonymizing", file=sys.stderr,
                  flush=True)
            for run, n in enumerate(threads, 1):
                r = run_one(gp, rows, args.backend, shlex.split(args.extra), folder, n)
                results.append({**r, "run": run, "generate_s": seconds})
                write()  # after every run: a run cut short by a time limit keeps the others
                print(f"{rows:,} rows, run {run}{'' if n is None else f' ({n} host threads)'}"
                      f": {r['wall_s']:.1f} s (encode {r['encode_s']:.1f}, search "
                      f"{r['search_s']:.1f}, release {r['release_s']:.1f}), "
                      f"{r['peak_rss_gib']:.2f} GiB", *r["log"], sep="\n  ", file=sys.stderr,
                      flush=True)
            for command in args.measure:
                m = measure_one(gp, command, rows, args.backend, folder)
                measured.append(m)
                write()
                print(f"{rows:,} rows, {command}: {m['wall_s']:.1f} s, "
                      f"{m['peak_rss_gib']:.2f} GiB", file=sys.stderr, flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print_table(["rows", "run", "threads", "generate", "end to end", "encode", "search", "release",
                 "peak RSS", "nodes", "classes", "suppressed", "optimum"],
                [[f"{r['rows']:,}", r["run"], r["host_threads"] or "default",
                  f"{r['generate_s']:.1f} s",
                  f"{r['wall_s']:.1f} s",
                  f"{r['encode_s']:.1f} s", f"{r['search_s']:.1f} s", f"{r['release_s']:.1f} s",
                  f"{r['peak_rss_gib']:.2f} GiB", r["nodes_evaluated"], f"{r['classes']:,}",
                  f"{r['suppressed']:,}",
                  ",".join(str(v) for v in r["transformation"].values())] for r in results])
    if measured:
        print_table(["rows", "command", "end to end", "peak RSS", "classes"],
                    [[f"{m['rows']:,}", m["command"], f"{m['wall_s']:.1f} s",
                      f"{m['peak_rss_gib']:.2f} GiB", m["classes"]] for m in measured])
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
