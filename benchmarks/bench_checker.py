"""The privacy checker (``gpuppdp.analysis.checker.check``) against pycanon on Adult scaled to N
rows.

The table: Adult repeated to ``--rows`` N rows with the perturbation of ``bench_scale.py``
(age jitter +-2, 1 % value swaps, ``--seed``), QIDs ``age, sex, race, marital-status,
education``, sensitive attribute ``occupation``.  ``age`` is first generalized to level
``--age-level`` of its hierarchy (default 1: 5-year intervals), as in a released table, so
the classes are not nearly all unique (1 M rows: 4,317 classes; raw ages give 14,754);
``--age-level 0`` keeps the raw ages.  No row is suppressed, so both tools measure the same
rows.  ``--qids`` picks other QIDs (e.g. ``age,sex,race`` with ``--age-level 3``: a table
with k > 1 and l > 1, where the values compared below are not trivial).

gpuppdp: one warm-up call of ``check(...)`` (all measures in one call), then ``--repeats``
timed calls; median and min.

pycanon: with ``--pycanon-python PATH`` (an interpreter of a separate virtual environment
with pycanon installed: it pins NumPy/pandas versions of its own) each pycanon function runs
in its own process (``_pycanon_driver.py``, ``--pycanon-repeats`` calls, no warm-up), on the
same table passed as an ``.npz`` of codes and labels; a measure that runs past
``--pycanon-timeout`` seconds is recorded as "> timeout" (a lower bound, not a time).  The
values are compared with the checker's:

* ``k_anonymity`` = ``k``; ``l_diversity`` = ``distinct_l``; ``alpha_k_anonymity`` =
  ``(alpha, k)``; ``t_closeness`` = ``t_equal`` (pycanon uses the equal ground distance for a
  string attribute); ``basic_beta_likeness`` = ``beta_basic``;
* ``delta_disclosure``: pycanon uses the natural log, the checker ARX's base 2: pycanon's
  value is compared with ``delta_disclosure * ln 2`` (and with the raw value);
* ``entropy_l_diversity``: pycanon returns ``int(exp(H))`` (truncated), compared with
  ``floor(entropy_l)``;
* ``recursive_c_l_diversity``: pycanon's ``(c, l)`` uses its own definition of c
  (``floor(r_min / sum(r[l-1:]) + 1)`` with the counts sorted ascending; NaN when l = 1), not
  comparable with the checker's ``recursive_c`` (largest ``r1 / (r2 + ... + rm)``): only
  ``l`` is compared;
* ``enhanced_beta_likeness``: pycanon takes ``max_v min(max_E beta_E, -ln p_v)``, the checker
  the largest per-class ``max_v`` of ``min``-capped relative distances; compared, and a
  mismatch is listed as a definitional difference.

Speed-up = pycanon's median seconds for one measure / the checker's median for *all*
measures.  Without ``--pycanon-python`` (or when it does not exist) pycanon is skipped with
a message.  ``--profile`` prints the checker's cProfile (top functions) for the largest N.

It prints a table and writes JSON (``--json``, default ``benchmarks/out/bench_checker.json``);
it asserts nothing about time.

Example::

    python benchmarks/bench_checker.py --rows 1e5 --backend cpu \\
        --pycanon-python /work/pycanon-venv/bin/python
    python benchmarks/bench_checker.py --rows 1e6,1e7 --repeats 3 --backend cpu \\
        --pycanon-python /work/pycanon-venv/bin/python --pycanon-measures k_anonymity
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from _common import (add_common_args, fmt_seconds, machine_info, maxrss_bytes, print_machine,
                     print_table, resolve_backend, summarize, synchronizer, timed_runs, write_json)
from bench_scale import scaled_adult

from gpuppdp.analysis.checker import check

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "_pycanon_driver.py")
QIDS = ["age", "sex", "race", "marital-status", "education"]
SENSITIVE = "occupation"
MEASURES = ("k_anonymity", "l_diversity", "entropy_l_diversity", "recursive_c_l_diversity",
            "alpha_k_anonymity", "t_closeness", "basic_beta_likeness",
            "enhanced_beta_likeness", "delta_disclosure")
TOL = 1e-9


def _rows_list(text: str) -> list[int]:
    try:
        values = [int(float(v)) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 1e6,1e7, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"row counts must be positive, got {text!r}")
    return values


def _measures(text: str) -> list[str]:
    names = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in names if v not in MEASURES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown measure(s) {bad}; choose from {MEASURES}")
    return names


def build_table(n_rows: int, seed: int, age_level: int, qids=QIDS) -> pd.DataFrame:
    """The benchmark table: scaled Adult, ``age`` generalized to ``age_level``."""
    data, hierarchies = scaled_adult(n_rows, seed)
    data = data[list(qids) + [SENSITIVE]]
    if age_level and "age" in qids:
        data = data.assign(age=hierarchies["age"].generalize(data["age"].to_numpy(), age_level))
    return data


def write_npz(data: pd.DataFrame, path: str) -> None:
    """Codes and labels of every column (what ``_pycanon_driver.py`` reads)."""
    arrays = {}
    for c in data.columns:
        codes, uniq = pd.factorize(data[c], use_na_sentinel=False)
        arrays[f"codes_{c}"] = codes.astype(np.int32)
        arrays[f"labels_{c}"] = np.array([str(u) for u in uniq], dtype=str)
    np.savez(path, **arrays)


def run_pycanon(python: str, table: str, measure: str, repeats: int, timeout: float,
                qids=QIDS) -> dict:
    cmd = [python, DRIVER, "--table", table, "--qids", ",".join(qids), "--sensitive",
           SENSITIVE, "--measure", measure, "--repeats", str(repeats)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"measure": measure, "timed_out_after_seconds": timeout}
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"measure": measure, "error": proc.stderr.strip().splitlines()[-1:] or
                [f"exit {proc.returncode}"], "process_seconds": wall}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_seconds"] = wall
    return out


def _num(v):
    if isinstance(v, str):  # "nan" / "inf" from the driver
        return float(v)
    return v


def compare(measure: str, theirs, ours: dict) -> tuple[str, str]:
    """``(verdict, detail)``: verdict ``"yes"``, ``"NO"`` or ``"n/c"`` (not comparable)."""
    def close(a, b):
        a, b = float(_num(a)), float(_num(b))
        if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
            return a == b
        return abs(a - b) <= TOL * max(1.0, abs(b))

    if measure == "k_anonymity":
        ok = int(theirs) == ours["k"]
        return ("yes" if ok else "NO"), f"k {theirs} / {ours['k']}"
    if measure == "l_diversity":
        ok = int(theirs) == ours["distinct_l"]
        return ("yes" if ok else "NO"), f"l {theirs} / {ours['distinct_l']}"
    if measure == "entropy_l_diversity":
        mine = math.floor(ours["entropy_l"] + 1e-12)
        ok = int(theirs) == mine
        return ("yes" if ok else "NO"), (f"int(exp H) {theirs} / floor({ours['entropy_l']:.6g})"
                                         f" = {mine}")
    if measure == "recursive_c_l_diversity":
        c, l_ = theirs
        ok = int(l_) == ours["distinct_l"]
        return ("yes" if ok else "NO") + " (l only)", (
            f"pycanon (c, l) = ({c}, {l_}); checker recursive_c {ours['recursive_c']:.6g}, "
            f"l {ours['distinct_l']}; c: other definition")
    if measure == "alpha_k_anonymity":
        alpha, k = theirs
        ok = close(alpha, ours["alpha"]) and int(k) == ours["k"]
        return ("yes" if ok else "NO"), f"(alpha, k) ({alpha:.6g}, {k}) / " \
                                        f"({ours['alpha']:.6g}, {ours['k']})"
    if measure == "delta_disclosure":
        # pycanon takes the natural log; the checker reports ARX's base-2 delta (older
        # checkers: natural log) -- the same value times ln 2 is accepted, and said so
        mine = ours["delta_disclosure"]
        if close(theirs, mine):
            return "yes", f"{float(_num(theirs)):.9g} / {mine:.9g}"
        if close(theirs, mine * math.log(2)):
            return "yes (log2 x ln 2)", (f"{float(_num(theirs)):.9g} / {mine:.9g} x ln 2 = "
                                         f"{mine * math.log(2):.9g}")
        return "NO", f"{float(_num(theirs)):.9g} / {mine:.9g}"
    key = {"t_closeness": "t_equal", "basic_beta_likeness": "beta_basic",
           "enhanced_beta_likeness": "beta_enhanced",
           "delta_disclosure": "delta_disclosure"}[measure]
    ok = close(theirs, ours[key])
    verdict = "yes" if ok else ("differs (definition)" if measure == "enhanced_beta_likeness"
                                else "NO")
    return verdict, f"{float(_num(theirs)):.9g} / {ours[key]:.9g}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p, "bench_checker")
    p.add_argument("--rows", type=_rows_list, default=[100_000],
                   help="comma-separated row counts, e.g. 1e5,1e6,1e7 (default 1e5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--qids", default=",".join(QIDS),
                   help=f"comma-separated quasi-identifiers (default {','.join(QIDS)})")
    p.add_argument("--age-level", type=int, default=1,
                   help="generalization level of age (0 = raw values; default 1)")
    p.add_argument("--pycanon-python", default=None,
                   help="python of a virtual environment with pycanon (default: skip pycanon)")
    p.add_argument("--pycanon-measures", type=_measures, default=list(MEASURES),
                   help="comma-separated pycanon functions to time (default all)")
    p.add_argument("--pycanon-repeats", type=int, default=1,
                   help="timed calls per pycanon measure (default 1; pycanon is slow)")
    p.add_argument("--pycanon-timeout", type=float, default=600.0,
                   help="seconds per pycanon measure before it is stopped (default 600)")
    p.add_argument("--profile", action="store_true",
                   help="print the checker's cProfile for the largest N")
    args = p.parse_args(argv)
    qids = [c.strip() for c in args.qids.split(",") if c.strip()]

    backend = resolve_backend(args.backend)
    sync = synchronizer(backend)
    info = machine_info(backend)
    print_machine(info)
    python = args.pycanon_python
    if python is None:
        print("# pycanon: skipped (no --pycanon-python given)")
    elif not os.path.exists(python):
        print(f"# pycanon: skipped ({python} not found)")
        python = None
    print(f"# QIDs {qids} (age level {args.age_level}), sensitive {SENSITIVE!r}; checker: "
          f"median (min) of {args.repeats} after 1 warm-up; pycanon: median of "
          f"{args.pycanon_repeats} per measure, each in its own process\n")

    rows_out, results, pyc_env = [], [], None
    for n in args.rows:
        t0 = time.perf_counter()
        data = build_table(n, args.seed, args.age_level, qids)
        gen = time.perf_counter() - t0

        def run():
            return check(data, quasi_identifiers=qids, sensitive=SENSITIVE, backend=backend)

        seconds, outs = timed_runs(run, args.repeats, sync)
        ours = outs[-1]
        chk = summarize(seconds)
        case = {"rows": n, "generate_seconds": gen, "checker_seconds": chk,
                "checker_result": ours, "pycanon": {}}
        print(f"  N={n:,}: {ours['classes']:,} classes, k={ours['k']}, checker "
              f"{fmt_seconds(chk['median'])}", file=sys.stderr, flush=True)
        if args.profile and n == max(args.rows):
            prof = cProfile.Profile()
            prof.enable()
            run()
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
            case["profile"] = buf.getvalue()
            print(buf.getvalue())
        rows_out.append([f"{n:,}", "check (all measures)", ours["classes"],
                         f"{fmt_seconds(chk['median'])} ({fmt_seconds(chk['min'])})",
                         None, None, None, None])
        if python is not None:
            with tempfile.TemporaryDirectory() as tmp:
                table = os.path.join(tmp, "table.npz")
                write_npz(data, table)
                for m in args.pycanon_measures:
                    print(f"  N={n:,}: pycanon {m} ...", file=sys.stderr, flush=True)
                    r = run_pycanon(python, table, m, args.pycanon_repeats,
                                    args.pycanon_timeout, qids)
                    case["pycanon"][m] = r
                    if pyc_env is None and "pycanon" in r:
                        pyc_env = {k: r[k] for k in ("pycanon", "numpy", "pandas", "python")}
                    if "seconds" in r:
                        med = float(np.median(r["seconds"]))
                        verdict, detail = compare(m, r["value"], ours)
                        r.update({"median_seconds": med, "speedup": med / chk["median"],
                                  "agrees": verdict, "detail": detail})
                        rows_out.append([f"{n:,}", f"pycanon {m}", None, fmt_seconds(med),
                                         f"{med / chk['median']:,.0f}x", verdict, detail,
                                         None])
                    elif "timed_out_after_seconds" in r:
                        t = r["timed_out_after_seconds"]
                        rows_out.append([f"{n:,}", f"pycanon {m}", None, f"> {t:.0f}s",
                                         f"> {t / chk['median']:,.0f}x", "-",
                                         "stopped (timeout)", None])
                    else:
                        rows_out.append([f"{n:,}", f"pycanon {m}", None, "error", None, "-",
                                         str(r.get("error")), None])
                    print(f"    {rows_out[-1][3]} {rows_out[-1][5]} {rows_out[-1][6]}",
                          file=sys.stderr, flush=True)
        results.append(case)
        data = None  # free the table before the next one is built

    print()
    print_table(["rows", "what", "classes", "seconds", "speed-up", "agrees", "values "
                 "(pycanon / checker)", ""], [r[:7] + [""] for r in rows_out])
    write_json(args.json, {"benchmark": "bench_checker", "machine": info,
                           "pycanon_environment": pyc_env,
                           "settings": {"qids": qids, "sensitive": SENSITIVE,
                                        "age_level": args.age_level, "seed": args.seed,
                                        "repeats": args.repeats,
                                        "pycanon_repeats": args.pycanon_repeats,
                                        "pycanon_timeout": args.pycanon_timeout},
                           "cases": results, "max_rss_bytes": maxrss_bytes()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
