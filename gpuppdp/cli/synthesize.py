"""The ``gpuppdp synthesize`` subcommand: differentially private synthetic data (MST).

::

    gpuppdp synthesize INPUT (--epsilon E --delta D | --rho R) [--columns COL,...]
        [--hierarchy COL=FILE.csv ... [--level COL=LEVEL ...]] [--public-domain]
        [--bins COL=LOWER:UPPER:N ...] [--unknown error|other|drop] [--rows N]
        [--budget-file LEDGER [--budget EPS [--budget-delta D] --new-ledger]]
        [--seed N --insecure-seed] [--backend auto|cpu|gpu] [--evaluate]
        [--json SUMMARY.json] [--html OUT.html] --output SYN.(csv|parquet)

Every column (``--columns``, default all) needs a public domain: a ``--hierarchy`` (at
``--level``), numeric bins with public bounds (``--bins age=17:91:15``: integer bounds give
integer values), or ``--public-domain`` (the values read from INPUT are declared public).
The ledger options are ``dp-histogram``'s: the whole fit is one zCDP spend, checked before the
data is read and appended before any noise is drawn.  ``--evaluate`` (implied by ``--html``)
compares the synthetic table with INPUT (:func:`gpuppdp.dp.synthesis_eval.evaluate_synthetic`)
in the ``--json`` summary and the ``--html`` page: that part reads the data without noise and
is for the data's owner, not for publication.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from .choices import BACKENDS
from .dp import UNKNOWN, _pairs
from .options import encoding_of, table_subcommand

__all__ = ["register", "run_synthesize"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``synthesize`` subcommand to an ``argparse`` subparsers object."""
    p = table_subcommand(
        subparsers, "synthesize", run_synthesize,
        help="write differentially private synthetic data (MST: a tree of noisy 2-way "
             "marginals)",
        description="Fit MST (McKenna, Miklau & Sheldon 2021) to INPUT at (epsilon, delta) "
                    "and write synthetic records to --output.")
    p.add_argument("--epsilon", type=float, default=None, metavar="E",
                   help="privacy parameter (with --delta); the zCDP budget is the largest rho "
                        "whose tight conversion meets (E, D)")
    p.add_argument("--delta", type=float, default=None, metavar="D", help="0 < D < 1")
    p.add_argument("--rho", type=float, default=None, metavar="R",
                   help="zCDP budget instead of --epsilon and --delta")
    p.add_argument("--columns", default=None, metavar="COL[,COL]",
                   help="the columns to synthesize (default: all)")
    p.add_argument("--hierarchy", action="append", default=[], metavar="COL=FILE.csv",
                   help="ARX-style hierarchy file of a column (its public domain); repeatable")
    p.add_argument("--hierarchy-sep", default=";", metavar="SEP",
                   help="delimiter of the hierarchy files (default ;)")
    p.add_argument("--level", action="append", default=[], metavar="COL=LEVEL",
                   help="synthesize a column at this level of its --hierarchy; repeatable")
    p.add_argument("--bins", action="append", default=[], metavar="COL=LOWER:UPPER:N",
                   help="a numeric column cut into N equal-width bins over public bounds; "
                        "repeatable")
    p.add_argument("--public-domain", action="store_true",
                   help="declare public the values (read from INPUT) of the columns without "
                        "--hierarchy or --bins")
    p.add_argument("--unknown", choices=UNKNOWN, default="error",
                   help="rows with a value outside a --hierarchy (or missing): refused after "
                        "the charge (error), synthesized as '(other)', or dropped")
    p.add_argument("--rows", type=int, default=None, metavar="N",
                   help="synthetic records to write (default: the noisy number of records)")
    p.add_argument("--budget-file", default=None, metavar="LEDGER.json",
                   help="the privacy ledger shared by every run (as dp-histogram)")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="total epsilon of a new --budget-file")
    p.add_argument("--budget-delta", type=float, default=None, metavar="D",
                   help="total delta of a new --budget-file (zCDP spends need one)")
    p.add_argument("--new-ledger", action="store_true",
                   help="start --budget-file with --budget if it does not exist")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="reproducible noise for testing: NOT private; needs --insecure-seed")
    p.add_argument("--insecure-seed", action="store_true",
                   help="accept --seed, knowing that the synthetic data is then not private")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where marginals, noise and sampling run (default: GPU when usable)")
    p.add_argument("--evaluate", action="store_true",
                   help="compare the synthetic table with INPUT (in --json and --html)")
    p.add_argument("--output", required=True, metavar="SYN.csv",
                   help="where to write the synthetic table (CSV, or Parquet by suffix)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write the summary as JSON")
    p.add_argument("--html", default=None, metavar="OUT.html",
                   help="write an HTML page of the privacy spent and the evaluation")
    return p


def _bins(items: list[str]) -> dict:
    """``["COL=LOWER:UPPER:N", ...]`` -> ``{COL: (lower, upper, n)}`` (ints where written so)."""
    from ..errors import InputError  # deferred: start-up

    out = {}
    for col, text in _pairs(items, "--bins").items():
        parts = text.split(":")
        try:
            lower, upper = (int(v) if v.strip().lstrip("-").isdigit() else float(v)
                            for v in parts[:2])
            count = int(parts[2])
        except (ValueError, IndexError):
            raise InputError(f"--bins {col}={text}: expected LOWER:UPPER:N (e.g. 17:91:15)") \
                from None
        if len(parts) != 3:
            raise InputError(f"--bins {col}={text}: expected LOWER:UPPER:N (e.g. 17:91:15)")
        out[col] = (lower, upper, count)
    return out


def _check_options(args) -> None:
    """Refusals that depend only on the command line: before the ledger or the data."""
    from ..errors import InputError  # deferred: start-up

    if (args.rho is None) == (args.epsilon is None) or (args.epsilon is None) != (
            args.delta is None):
        raise InputError("give --epsilon and --delta, or --rho")
    if args.seed is not None and not args.insecure_seed:
        raise InputError("--seed makes the noise reproducible by anyone who knows the seed, so "
                         "the synthetic data is NOT private; add --insecure-seed to accept that")
    if args.insecure_seed and args.seed is None:
        raise InputError("--insecure-seed needs --seed")
    if args.budget is not None and args.budget_file is None:
        raise InputError("--budget needs --budget-file (the ledger it starts)")
    if args.budget_delta is not None and args.budget is None:
        raise InputError("--budget-delta needs --budget (the new ledger's total epsilon)")
    if args.new_ledger and (args.budget_file is None or args.budget is None):
        raise InputError("--new-ledger needs --budget-file and --budget")
    if args.rows is not None and args.rows < 0:
        raise InputError(f"--rows must be >= 0, got {args.rows}")


def run_synthesize(args: argparse.Namespace) -> int:
    """Run ``synthesize``; returns the exit status (0)."""
    from ..dp.accountant import BudgetAccountant  # deferred: start-up
    from ..dp.randomness import RandomSource  # deferred: start-up
    from ..dp.synthesis import MSTSynthesizer  # deferred: start-up
    from ..dp.synthesis_eval import evaluate_synthetic  # deferred: start-up
    from ..errors import InputError  # deferred: start-up
    from ..hierarchy import Hierarchy  # deferred: start-up
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, table_delimiter  # deferred
    from ..report.synthesis import synthesis_html  # deferred: start-up

    _check_options(args)
    columns = None if args.columns is None else [
        c.strip() for c in args.columns.split(",") if c.strip()]
    if columns == []:
        raise InputError("--columns needs at least one column name")
    levels = {}
    for col, text in _pairs(args.level, "--level").items():
        try:
            levels[col] = int(text)
        except ValueError:
            raise InputError(f"--level {col}={text}: the level must be an integer") from None
    hierarchy_files = _pairs(args.hierarchy, "--hierarchy")
    bins = _bins(args.bins)
    plan = OutputPlan([args.input, *hierarchy_files.values()]).add("--output", args.output,
                                                                    TABLE_SUFFIXES)
    for option in ("--json", "--html"):
        if getattr(args, option[2:]) is not None:
            plan.add(option, getattr(args, option[2:]))
    if args.budget_file is not None and os.path.realpath(args.budget_file) in {
            os.path.realpath(args.input), os.path.realpath(args.output)}:
        raise InputError(f"--budget-file {args.budget_file} is the input or the output")
    hierarchies = {}
    for col, path in hierarchy_files.items():
        if not os.path.isfile(path):
            raise FileNotFoundError(f"hierarchy file of {col!r} not found: {path}")
        hierarchies[col] = Hierarchy.from_csv(path, sep=args.hierarchy_sep, name=col)
    ledger = (BudgetAccountant.open_ledger(args.budget_file, epsilon=args.budget,
                                           delta=args.budget_delta,
                                           create=args.new_ledger or args.budget is not None)
              if args.budget_file is not None else contextlib.nullcontext())
    with ledger as accountant, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = RandomSource(args.backend, seed=args.seed, insecure=args.insecure_seed)
        synth = MSTSynthesizer(args.epsilon, args.delta, rho=args.rho, columns=columns,
                               hierarchies=hierarchies, levels=levels,
                               public_domain=args.public_domain, bins=bins,
                               unknown=args.unknown, random=source, accountant=accountant)
        data = read_table(args.input, columns=columns, sep=args.sep, encoding=encoding_of(args))
        syn = synth.fit(data).sample(args.rows)
    for w in caught:
        print(f"gpuppdp: warning: {w.message}", file=sys.stderr)
    summary = {"input": args.input, "output": args.output, "rows": len(syn),
               "columns": list(syn.columns), "edges": [list(e) for e in synth.edges],
               "privacy": synth.privacy, "evaluation": None, "ledger": None}
    if accountant is not None:
        eps, delta, how = accountant.composition
        summary["ledger"] = {"file": os.path.realpath(args.budget_file),
                             "entry": accountant.ledger[-1].to_json(),
                             "spent": {"epsilon": eps, "delta": delta, "accounting": how}}
    if args.evaluate or args.html is not None:
        summary["evaluation"] = evaluate_synthetic(data, syn, list(syn.columns), bins=bins,
                                                   backend=source.backend)
    with plan.writing() as out:
        out.write_table("--output", syn, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary)
        if args.html is not None:
            with open(out.path("--html"), "w", encoding="utf-8") as fh:
                fh.write(synthesis_html(summary))
    p = synth.privacy
    print(f"synthesize: {len(syn)} records over {len(syn.columns)} columns written to "
          f"{args.output}")
    at = "" if p["epsilon"] is None else f"; (epsilon, delta) = ({p['epsilon']:.6g}, " \
        f"{p['delta']:.3g})"
    print(f"rho spent (zCDP): {p['rho']:.6g} (support delta {p['delta_trunc']:.3g}){at}")
    print("tree: " + ", ".join(f"{a}-{b}" for a, b in synth.edges))
    if summary["evaluation"] is not None:
        ev = summary["evaluation"]
        two = ev["two_way"]
        print(f"evaluation: mean 1-way TV {ev['one_way']['mean']:.4f}"
              + (f", mean 2-way TV {two['mean']:.4f} (max {two['max']:.4f})" if two else "")
              + "; identical to a real record "
              f"{100 * ev['closest_record']['identical_share']:.1f} %")
    if p["seeded"]:
        print(f"seed: {args.seed} (--insecure-seed: the noise is reproducible, NOT private)")
    return 0
