"""The ``gpuppdp dp-histogram`` subcommand: a noisy contingency table from a CSV/Parquet file.

::

    gpuppdp dp-histogram INPUT --by COL[,COL] --epsilon E [--level COL=LEVEL ...]
        [--hierarchy COL=FILE.csv ...] [--public-domain] [--identifying COL[,COL] ...]
        [--budget-file LEDGER.json [--budget EPS]] [--sep SEP] [--seed N]
        [--mechanism geometric|laplace] [--no-clamp] [--backend auto|cpu|gpu]
        --output OUT.csv

A --by column needs a public domain: a --hierarchy, or --public-domain to declare that its set
of values (read from INPUT) is public; columns declared --identifying are refused.  With
--budget-file the release is charged to a JSON ledger shared by every run (created with
--budget EPS); a release that would overspend it is refused, and the ledger is updated
(atomically, under a file lock) once the noisy table is computed, before it is written.

The main CLI calls :func:`register`; bad input raises ``ValueError`` / ``FileNotFoundError``
(one ``gpuppdp: error: ...`` line, exit status 2, printed by the main CLI).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from .choices import BACKENDS, MECHANISMS
from .options import table_subcommand

__all__ = ["register", "run_dp_histogram"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``dp-histogram`` subcommand to an ``argparse`` subparsers object."""
    p = table_subcommand(
        subparsers, "dp-histogram", run_dp_histogram,
        help="release a differentially private contingency table (noisy counts)",
        description="Count the rows of INPUT per combination of the --by columns (optionally "
                    "generalized with --hierarchy/--level), add noise for epsilon-differential "
                    "privacy (add/remove-one neighbours) and write every cell to --output.")
    p.add_argument("--by", required=True, metavar="COL[,COL]",
                   help="comma-separated grouping columns")
    p.add_argument("--epsilon", required=True, type=float, metavar="E",
                   help="privacy parameter of the whole table (> 0)")
    p.add_argument("--level", action="append", default=[], metavar="COL=LEVEL",
                   help="generalization level of a column (needs --hierarchy); repeatable")
    p.add_argument("--hierarchy", action="append", default=[], metavar="COL=FILE.csv",
                   help="ARX-style hierarchy file of a column (fixes its public domain); "
                        "repeatable")
    p.add_argument("--public-domain", action="store_true",
                   help="declare public the sets of values of the --by columns without "
                        "--hierarchy (read from INPUT); without it such columns are refused")
    p.add_argument("--identifying", action="append", default=[], metavar="COL[,COL]",
                   help="columns that identify people (names, IDs): refused in --by; "
                        "repeatable")
    p.add_argument("--budget-file", default=None, metavar="LEDGER.json",
                   help="JSON ledger of the privacy budget shared by every run: the release "
                        "is refused if it would overspend it, and recorded in it")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="total epsilon of a new --budget-file (an existing ledger keeps its "
                        "own)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="reproducible noise for testing: NOT private")
    p.add_argument("--mechanism", choices=MECHANISMS, default="geometric",
                   help="integer two-sided geometric (default) or grid Laplace noise")
    p.add_argument("--no-clamp", action="store_true",
                   help="keep negative noisy counts instead of clamping them at 0")
    p.add_argument("--output", required=True, metavar="OUT.csv",
                   help="where to write the table (CSV, or Parquet by suffix)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where counts and noise are computed (default: GPU when usable)")
    return p


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """``["COL=VALUE", ...]`` -> ``{COL: VALUE}``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    out = {}
    for item in items:
        col, eq, val = item.partition("=")
        if not eq or not col.strip() or not val.strip():
            raise InputError(f"{option} expects COL=VALUE, got {item!r}")
        out[col.strip()] = val.strip()
    return out


def run_dp_histogram(args: argparse.Namespace) -> int:
    """Run ``dp-histogram``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..dp.accountant import BudgetAccountant
    from ..dp.randomness import RandomSource
    from ..dp.releases import DataDomainError, dp_histogram
    from ..errors import InputError
    from ..hierarchy import Hierarchy
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, sniff_delimiter, table_delimiter
    from ..validation import format_values

    by = [c.strip() for c in args.by.split(",") if c.strip()]
    if not by:
        raise InputError("--by needs at least one column name")
    levels = {}
    for col, text in _pairs(args.level, "--level").items():
        try:
            levels[col] = int(text)
        except ValueError:
            raise InputError(f"--level {col}={text}: the level must be an integer") from None
    hierarchy_files = _pairs(args.hierarchy, "--hierarchy")
    plan = OutputPlan([args.input, *hierarchy_files.values()]).add("--output", args.output,
                                                                    TABLE_SUFFIXES)
    hierarchies = {}
    for col, path in hierarchy_files.items():
        if not os.path.isfile(path):
            raise FileNotFoundError(f"hierarchy file of {col!r} not found: {path}")
        hierarchies[col] = Hierarchy.from_csv(path, sep=sniff_delimiter(path, default=";"),
                                              name=col)
    for col in list(levels) + list(hierarchies):
        if col not in by:
            raise InputError(f"--level/--hierarchy given for {col!r}, which is not in --by")
    identifying = {c.strip() for item in args.identifying for c in item.split(",") if c.strip()}
    for col in by:
        if col in identifying:
            raise InputError(f"column {col!r} is declared identifying (--identifying): a "
                             "table by it would publish who is in the data; drop it from --by")
    if args.budget is not None and args.budget_file is None:
        raise InputError("--budget needs --budget-file (the ledger it starts)")
    if args.budget_file is not None and os.path.realpath(args.budget_file) in {
            os.path.realpath(args.input), os.path.realpath(args.output)}:
        raise InputError(f"--budget-file {args.budget_file} is the input or the output")
    data = read_table(args.input, columns=by, sep=args.sep)
    ledger = (BudgetAccountant.open_ledger(args.budget_file, epsilon=args.budget)
              if args.budget_file is not None else contextlib.nullcontext())
    with ledger as accountant, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = RandomSource(args.backend, seed=args.seed)
        # charged before any noise is drawn; the ledger is saved when this block succeeds
        try:
            table = dp_histogram(data, by, epsilon=args.epsilon, hierarchies=hierarchies,
                                 levels=levels, public_domain=args.public_domain,
                                 mechanism=args.mechanism, clamp=not args.no_clamp,
                                 random=source, accountant=accountant)
        except DataDomainError as exc:  # the library's hint names its keywords
            raise InputError(
                f"column(s) {format_values(exc.columns)} have no public domain: their set of "
                "values would be read from the data, which differential privacy does not "
                "protect; give each a --hierarchy COL=FILE.csv, or declare the values public "
                "with --public-domain") from None
    for w in caught:  # one line each, in the main CLI's style
        print(f"gpuppdp: warning: {w.message}", file=sys.stderr)
    with plan.writing() as out:
        out.write_table("--output", table, sep=table_delimiter(args.input, args.sep))
    dp = table.attrs["dp"]
    q = dp["queries"]["count"]
    where = ", ".join(f"{c} (level {levels.get(c, 0)})" for c in by)
    print(f"dp-histogram: {dp['cells']} cells over {where} written to {args.output}")
    print(f"epsilon spent: {dp['epsilon']:g} ({dp['neighbouring']} neighbours, "
          f"sensitivity {q['sensitivity']:g}); delta {dp['delta']:.3g}")
    if accountant is not None:
        print(f"budget {args.budget_file}: epsilon {accountant.spent:g} of "
              f"{accountant.total:g} spent, {accountant.remaining:g} remaining")
    print(f"noise: {q['mechanism']}, scale {q['scale']:.6g} (sensitivity/epsilon); "
          f"expected |error| per cell {q['expected_abs_error']:.4g}, std {q['std']:.4g}")
    if dp["post_processing"]:
        print(f"post-processing: {', '.join(dp['post_processing'])}")
    return 0
