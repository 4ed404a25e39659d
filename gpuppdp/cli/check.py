"""``gpuppdp check``: measure the privacy of a table (see :mod:`gpuppdp.analysis.checker`)."""

from __future__ import annotations

import argparse
import json
import math

from ..analysis.checker import CHECK_KEYS, check, format_report
from ..backend import BACKEND_CHOICES
from ..io import read_table
from .common import _lkc

__all__ = ["register", "run_check"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "check",
        help="measure k, l, t, alpha, delta, beta and privacy loss of a table",
        description="Group the rows of INPUT by the --qi columns (values as they are; rows "
                    "whose quasi-identifiers are all '*' are counted as suppressed and left "
                    "out) and print the privacy measures of the table.")
    p.add_argument("input", help="CSV (delimiter sniffed unless --sep) or Parquet file")
    p.add_argument("--qi", nargs="+", action="extend", required=True, metavar="COL",
                   help="quasi-identifying column(s); repeatable")
    p.add_argument("--sensitive", default=None, metavar="COL",
                   help="the sensitive column (l-diversity, t-closeness, ... need it)")
    p.add_argument("--lkc", default=None, type=_lkc, metavar="L,K,C",
                   help="also measure LKC-privacy for combinations of at most L QIDs (C as "
                   "0.5 or 50%%)")
    p.add_argument("--population", default=None, metavar="FILE",
                   help="population table (same QID columns and representation) for k-map "
                   "and delta-presence")
    p.add_argument("--json", default=None, metavar="OUT.json",
                   help="also write the values as JSON (infinite values as the string \"inf\")")
    p.add_argument("--sep", default=None, help="CSV delimiter of INPUT (default: sniffed)")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="auto",
                   help="where the classes are measured (default: GPU when usable)")
    p.set_defaults(func=run_check)
    return p


def _json_value(value):
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


def run_check(args: argparse.Namespace) -> int:
    """Run ``check``; returns the exit status (0)."""
    qids = [c for c in args.qi if c]
    if not qids:
        raise ValueError("--qi needs at least one column name")
    columns = list(dict.fromkeys(qids + ([args.sensitive] if args.sensitive else [])))
    data = read_table(args.input, sep=args.sep, columns=columns)
    lkc = None
    if args.lkc is not None:
        *lkc, column = args.lkc
        if column is not None:
            raise ValueError("check --lkc takes no @COLUMN: it uses --sensitive")
    population = None
    if args.population is not None:
        population = read_table(args.population, sep=args.sep, columns=qids)
    result = check(data, quasi_identifiers=qids, sensitive=args.sensitive,
                   backend=args.backend, lkc=lkc, population=population)
    print(format_report(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({k: _json_value(result[k]) for k in CHECK_KEYS}, fh, indent=2)
            fh.write("\n")
    return 0
