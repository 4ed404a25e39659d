"""``gpuppdp attack reconstruct``: the database reconstruction attack on published statistics
(:func:`gpuppdp.attacks.reconstruct`); ``gpuppdp attack linkage``: cross-release attacks on two
releases of one population (:func:`gpuppdp.attacks.linkage_attack`).

::

    gpuppdp attack reconstruct STATS.json --output RECORDS.csv [--all-solutions]
        [--max-solutions N] [--truth TRUE.csv] [--time-limit S] [--inconsistent closest|error]
        [--json SUMMARY.json]

RECORDS.csv holds the reconstructed people (with ``--all-solutions`` a ``solution`` column
numbers each table found); the summary says whether the table is the only one consistent with
the statistics.  Outputs are written together at the end (:class:`gpuppdp.io.OutputPlan`).

::

    gpuppdp attack linkage A.csv B.csv --qi COL=HIERARCHY.csv ... [--sensitive COL] [--k K]
        [--mode auto|complementary|temporal] [--link-on COL ...] [--json OUT.json] [--check]

With ``--check`` B is the new release and A the earlier one: exit status 1 and one line on
stderr when B discloses, with A, what neither does alone (:func:`gpuppdp.attacks.check_release`).
"""

from __future__ import annotations

import argparse
import os
import sys

from .options import (_qi_spec, add_encoding_option, add_hierarchy_sep_option, add_json_option,
                      subcommand_group)

__all__ = ["register", "run_reconstruct", "run_linkage"]


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def run_reconstruct(args: argparse.Namespace) -> int:
    """Run ``attack reconstruct``; returns the exit status (0)."""
    # deferred: keeps `gpuppdp --help` fast
    import pandas as pd

    from ..attacks.reconstruct import load_statistics, reconstruct
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table

    if not os.path.isfile(args.stats):
        raise FileNotFoundError(f"statistics file not found: {args.stats}")
    plan = OutputPlan([args.stats, args.truth]).add("--output", args.output, TABLE_SUFFIXES)
    plan.add("--json", args.json, (".json",))
    stats = load_statistics(args.stats)
    truth = None
    if args.truth is not None:
        truth = read_table(args.truth, sep=args.sep, encoding=args.encoding)
        numeric = [n for n, d in stats.get("attributes", {}).items() if isinstance(d, dict)]
        for col in numeric:
            if col in truth.columns:
                truth[col] = pd.to_numeric(truth[col])
    result = reconstruct(stats, all_solutions=args.all_solutions, time_limit=args.time_limit,
                         truth=truth, max_solutions=args.max_solutions,
                         on_inconsistent=args.inconsistent, max_model=args.max_model,
                         max_types=args.max_types)
    if args.all_solutions:
        table = pd.concat([s.assign(solution=i + 1) for i, s in enumerate(result.solutions)],
                          ignore_index=True)
    else:
        table = result.records
    summary = result.summary()
    summary["statistics"] = args.stats
    with plan.writing() as out:
        out.write_table("--output", table, sep=args.sep or ",")
        out.write_json("--json", summary)
    unique = {True: "yes (no other table satisfies the statistics)",
              False: "no (another table satisfies them too)",
              None: "unknown (the time limit stopped the second solve)"}[result.unique]
    closest = {True: "", False: " (no table fits the statistics: the closest one",
               None: " (the time limit stopped the exact solve: the closest table"}
    print(f"reconstruct: {len(result.records)} records written to {args.output}"
          + ("" if result.consistent else
             f"{closest[result.consistent]}, deviation {result.deviation:.4g})"))
    print(f"unique: {unique}")
    if args.all_solutions:
        print(f"solutions: {len(result.solutions)}"
              + ("" if result.complete else " (enumeration stopped: --max-solutions or the "
                                              "time limit)"))
    if result.recovered_exact is not None:
        print(f"recovered: {result.recovered_exact:.1%} of the true records exactly, "
              f"{result.recovered_within_1:.1%} within +-1")
    print(f"solver: HiGHS, {result.solves} solve(s), {result.variables} variables, "
          f"{result.constraints} constraints, {result.seconds:.2f} s")
    return 0


def run_linkage(args: argparse.Namespace) -> int:
    """Run ``attack linkage``; returns the exit status (0, or 1 when ``--check`` refuses)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..attacks.linkage import linkage_attack
    from ..hierarchy import Hierarchy
    from ..io import OutputPlan, read_table

    plan = OutputPlan([args.a, args.b] + [p for _, p in args.qi]).add(
        "--json", args.json, (".json",))
    qids = [name for name, _ in args.qi]
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi}
    a = read_table(args.a, sep=args.sep, encoding=args.encoding)
    b = read_table(args.b, sep=args.sep, encoding=args.encoding)
    link_on = None if not args.link_on else [c for group in args.link_on for c in group]
    report = linkage_attack(a, b, qids, hierarchies, sensitive=args.sensitive, k=args.k,
                            mode=args.mode, link_on=link_on)
    summary = report.summary()
    summary["a"], summary["b"] = args.a, args.b
    with plan.writing() as out:
        out.write_json("--json", summary)
    lk, diff, order = summary["linkage"], summary["difference"], summary["row_order"]
    print(f"linkage: {report.mode} releases, {report.rows_a} and {report.rows_b} rows, linked on "
          f"{', '.join(report.link_on) or 'the QIDs only'}")
    print(f"linked: {lk['below_k']} record(s) below k={report.k} ({lk['newly_below_k']} only "
          f"through the linkage), {lk['sensitive_certain']} with a certain sensitive value "
          f"({lk['newly_certain']} only through the linkage)")
    print(f"difference: {diff['changed_blocks']} class(es) changed, {diff['changed_by_one']} by "
          f"one record, {diff['revealed']} revealing the changed records' value")
    print(f"row order: {'kept' if order['leaked'] else 'not kept'} "
          f"({order['in_order']} of {order['aligned_rows']} rows in order at shift "
          f"{order['shift']}, "
          f"{order['expected_share']:.1%} expected at random)")
    if args.check:
        reasons = report.reasons()
        if reasons:
            print(f"gpuppdp attack linkage: refused: {'; '.join(reasons)}", file=sys.stderr)
            return 1
        print("check: passed")
    return 0


def register(subparsers) -> None:
    """Add the ``attack`` subcommand (``attack reconstruct``, ``attack linkage``) to an
    ``argparse`` subparsers object."""
    kinds = subcommand_group(
        subparsers, "attack", "attack",
        help="run an attack on released data and report what it recovers",
        description="Attacks on released data: what an adversary actually recovers.")
    p = kinds.add_parser(
        "reconstruct", help="rebuild the records behind published statistics (integer "
                            "program, HiGHS)",
        description="Reconstruct the records behind published counts, means and medians "
                    "(Dinur and Nissim 2003; Garfinkel, Abowd and Martindale 2018): STATS.json "
                    "holds attributes, rules, statistics and suppression_threshold (see "
                    "gpuppdp.attacks.reconstruct). Writes the records found and says whether "
                    "they are the only ones consistent with the statistics.")
    p.add_argument("stats", metavar="STATS.json", help="the published statistics")
    p.add_argument("--output", required=True, metavar="RECORDS.csv",
                   help="where to write the reconstructed records (CSV, or Parquet by suffix)")
    p.add_argument("--all-solutions", action="store_true",
                   help="enumerate every consistent table (column 'solution')")
    p.add_argument("--max-solutions", type=_positive_int, default=100, metavar="N",
                   help="stop the enumeration after N tables (default %(default)s)")
    p.add_argument("--truth", default=None, metavar="TRUE.csv",
                   help="the true records: report the share recovered exactly / within +-1")
    p.add_argument("--time-limit", type=_positive_float, default=None, metavar="S",
                   help="seconds per solve (default: none)")
    p.add_argument("--max-model", type=_positive_int, default=1_000_000, metavar="N",
                   help="refuse a program estimated at more than N variables + constraints "
                   "before building it (default %(default)s; memory and time grow with it)")
    p.add_argument("--max-types", type=_positive_int, default=1_000_000, metavar="N",
                   help="refuse attribute domains of more than N combinations (record types; "
                   "default %(default)s)")
    p.add_argument("--inconsistent", choices=("closest", "error"), default="closest",
                   help="statistics no table satisfies (noisy releases): write the closest "
                        "table (default) or fail")
    p.add_argument("--sep", default=None, metavar="SEP",
                   help="delimiter of --truth (default: detected) and of --output "
                        "(default ',')")
    add_encoding_option(p, "--truth")
    add_json_option(p, "the summary", "SUMMARY.json")
    p.set_defaults(func=run_reconstruct)

    p = kinds.add_parser(
        "linkage", help="link two releases of one population (complementary, temporal, row "
                        "order) and report who is exposed",
        description="Cross-release attacks (Sweeney 2002; Wang and Fung 2006): complementary "
                    "releases intersected through a pairing of their rows, the difference "
                    "attack on classes whose counts change, and row-order (unsorted matching) "
                    "leakage. Reports the records with fewer than k candidates or a certain "
                    "sensitive value; --check refuses B against A (exit status 1).")
    p.add_argument("a", metavar="A.csv", help="the earlier (or first) release")
    p.add_argument("b", metavar="B.csv", help="the later (or second) release")
    p.add_argument("--qi", action="append", type=_qi_spec, required=True,
                   metavar="COL=HIERARCHY.csv", help="quasi-identifier and its ARX hierarchy "
                   "(repeatable)")
    p.add_argument("--sensitive", default=None, metavar="COL", help="the sensitive attribute")
    p.add_argument("--k", type=_positive_int, default=2, help="report records with fewer "
                   "candidates (default %(default)s)")
    p.add_argument("--mode", choices=("auto", "complementary", "temporal"), default="auto",
                   help="complementary: the same records; temporal: records added or removed; "
                   "auto (default): complementary when the rows can be paired")
    p.add_argument("--link-on", nargs="+", action="append", default=None, metavar="COL",
                   help="columns the rows are linked on (default: every non-QID column of both)")
    p.add_argument("--check", action="store_true",
                   help="refuse B (exit status 1, one line on stderr) if it discloses, with A, "
                        "what neither does alone")
    add_json_option(p, "the summary")
    p.add_argument("--sep", default=None, metavar="SEP",
                   help="delimiter of the releases (default: detected)")
    add_encoding_option(p, "the releases")
    add_hierarchy_sep_option(p)
    p.set_defaults(func=run_linkage)
