"""The ``gpuppdp anatomize`` subcommand: anatomy (Xiao & Tao, VLDB 2006), see
:mod:`gpuppdp.algorithms.anatomy`.

::

    gpuppdp anatomize INPUT --qi COL [COL ...] --sensitive COL --l L --qit QIT.csv --st ST.csv
        [--groups COL] [--seed N] [--sep SEP] [--json OUT.json]

Both tables (and the JSON summary) are written together at the end
(:class:`gpuppdp.io.OutputPlan`); nothing is written on an error.
"""

from __future__ import annotations

import argparse

from .choices import OTHERS
from .options import Command, add_shared, unassigned_error

__all__ = ["COMMAND", "register", "run_anatomize"]


def _columns(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"--qi expects column names, got {text!r}")
    return names


def _options(p) -> None:
    """``anatomize``'s options (after INPUT, --sep and --encoding)."""
    p.add_argument("--qi", nargs="+", action="append", required=True, type=_columns,
                   metavar="COL", help="quasi-identifying column(s); repeatable, space- or "
                   "comma-separated")
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument("--insensitive", action="append", default=[], metavar="COL",
                   help="published unmodified in the QIT beside the QIDs (repeatable)")
    p.add_argument("--others", choices=OTHERS, default="error",
                   help="role of columns given none: error (default: they are listed), "
                   "insensitive (in the QIT) or drop (left out)")
    p.add_argument("--l", type=int, required=True, metavar="L",
                   help="no sensitive value on more than 1/L of a group (L >= 2)")
    p.add_argument("--groups", default=None, metavar="COL",
                   help="take the groups from this column (checked to be l-diverse) instead "
                   "of forming them")
    add_shared(p, seed="seed of the bucket algorithm's choices (default: OS entropy)")
    for option, table in (("--qit", "quasi-identifier"), ("--st", "sensitive")):
        p.add_argument(option, required=True, metavar=f"{option[2:].upper()}.csv",
                       help=f"the {table} table (CSV or Parquet by the ending)")


def run_anatomize(args: argparse.Namespace) -> int:
    """Run ``anatomize``; returns the exit status (0)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..algorithms import Anatomy
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, table_columns, table_delimiter

    qids = [c for group in args.qi for items in group for c in items]
    plan = (OutputPlan([args.input]).add("--qit", args.qit, TABLE_SUFFIXES)
            .add("--st", args.st, TABLE_SUFFIXES).add("--json", args.json))
    given = qids + [args.sensitive] + args.insensitive + ([args.groups] if args.groups else [])
    others = [c for c in table_columns(args.input, sep=args.sep, encoding=args.encoding)
              if c not in given]
    insensitive = args.insensitive + (others if args.others == "insensitive" else [])
    unassigned_error(others, args.others)
    anatomy = Anatomy(qids, sensitive=args.sensitive, l=args.l, seed=args.seed,
                      insensitive=insensitive)
    columns = list(dict.fromkeys(given + insensitive))
    data = read_table(args.input, sep=args.sep, columns=columns, encoding=args.encoding)
    release = anatomy.fit(data, groups=args.groups)
    summary = release.summary()
    print(f"anatomy: {summary['records']} records in {summary['groups']} groups "
          f"({summary['smallest_group']}-{summary['largest_group']} rows), l={args.l}")
    sep = table_delimiter(args.input, args.sep)
    with plan.writing() as out:
        out.write_table("--qit", release.qit, sep=sep)
        out.write_table("--st", release.st, sep=sep)
        out.write_json("--json", summary)
    return 0


COMMAND = Command(
    "anatomize", run_anatomize, _options,
    table=True,
    json="also write the summary as JSON",
    help="anatomy: publish the QIDs and the sensitive values in two l-diverse tables",
    description="Partition the rows of INPUT into l-diverse groups (Xiao & Tao's bucket "
                "algorithm, or the groups of --groups) and write the quasi-identifier "
                "table (QIDs unmodified plus group_id) and the sensitive table (group_id, "
                "sensitive value, count).")
register = COMMAND.register
