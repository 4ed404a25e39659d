"""``gpuppdp check``: measure the privacy of a table (see :mod:`gpuppdp.analysis.checker`)."""

from __future__ import annotations

import argparse
import math

from .choices import BACKENDS
from .common import _lkc, read_measured, table_subcommand

__all__ = ["register", "run_check"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to an ``argparse`` subparsers object."""
    p = table_subcommand(
        subparsers, "check", run_check,
        population="population table (same QID columns and representation) for k-map and "
                   "delta-presence",
        json="also write the values as JSON (infinite values as the string \"inf\")",
        help="measure k, l, t, alpha, delta, beta and privacy loss of a table",
        description="Group the rows of INPUT by the --qi columns (values as they are; rows "
                    "whose quasi-identifiers are all '*' are counted as suppressed and left "
                    "out) and print the privacy measures of the table.")
    p.add_argument("--qi", nargs="+", action="extend", required=True, metavar="COL",
                   help="quasi-identifying column(s); repeatable")
    p.add_argument("--sensitive", default=None, metavar="COL",
                   help="the sensitive column (l-diversity, t-closeness, ... need it)")
    p.add_argument("--lkc", default=None, type=_lkc, metavar="L,K,C",
                   help="also measure LKC-privacy for combinations of at most L QIDs (C as "
                   "0.5 or 50%%)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where the classes are measured (default: GPU when usable)")
    return p


def _json_value(value):
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


def run_check(args: argparse.Namespace) -> int:
    """Run ``check``; returns the exit status (0)."""
    from ..analysis.checker import CHECK_KEYS, check, format_report

    qids = [c for c in args.qi if c]
    if not qids:
        raise ValueError("--qi needs at least one column name")
    lkc = None
    if args.lkc is not None:
        *lkc, column = args.lkc
        if column is not None:
            raise ValueError("check --lkc takes no @COLUMN: it uses --sensitive")
    columns = list(dict.fromkeys(qids + ([args.sensitive] if args.sensitive else [])))
    plan, data, population = read_measured(args, columns, qids)
    result = check(data, quasi_identifiers=qids, sensitive=args.sensitive,
                   backend=args.backend, lkc=lkc, population=population)
    print(format_report(result))
    with plan.writing() as out:
        out.write_json("--json", {k: _json_value(result[k]) for k in CHECK_KEYS})
    return 0
