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
import warnings

from .dp import _pairs, levels_and_hierarchies, read_hierarchies, warn_caught
from .options import (Command, add_ledger_options, add_privacy_target_options, add_seed_options,
                      add_shared, check_ledger_options, encoding_of, epsilon_at, ledger_record,
                      open_ledger, print_seed)

__all__ = ["COMMAND", "register", "run_synthesize"]


def _options(p) -> None:
    """``synthesize``'s options (after INPUT, --sep and --encoding)."""
    add_privacy_target_options(
        p, epsilon="privacy parameter (with --delta); the zCDP budget is the largest rho whose "
                   "tight conversion meets (E, D)",
        delta="0 < D < 1", rho="zCDP budget instead of --epsilon and --delta")
    p.add_argument("--columns", default=None, metavar="COL[,COL]",
                   help="the columns to synthesize (default: all)")
    add_shared(p, hierarchy="ARX-style hierarchy file of a column (its public domain); repeatable",
               hierarchy_sep="delimiter of the hierarchy files (default ;)",
               level="synthesize a column at this level of its --hierarchy; repeatable")
    p.add_argument("--bins", action="append", default=[], metavar="COL=LOWER:UPPER:N",
                   help="a numeric column cut into N equal-width bins over public bounds; "
                        "repeatable")
    add_shared(p, public_domain="declare public the values (read from INPUT) of the columns "
                             "without --hierarchy or --bins",
               unknown="rows with a value outside a --hierarchy (or missing): refused after the "
                       "charge (error), synthesized as '(other)', or dropped")
    p.add_argument("--rows", type=int, default=None, metavar="N",
                   help="synthetic records to write (default: the noisy number of records)")
    add_ledger_options(p)
    add_seed_options(p)
    add_shared(p, backend="where marginals, noise and sampling run (default: GPU when usable)")
    p.add_argument("--evaluate", action="store_true",
                   help="compare the synthetic table with INPUT (in --json and --html)")
    p.add_argument("--output", required=True, metavar="SYN.csv",
                   help="where to write the synthetic table (CSV, or Parquet by suffix)")
    add_shared(p, json="write the summary as JSON",
               html="write an HTML page of the privacy spent and the evaluation")


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
    check_ledger_options(args, "the synthetic data")
    if args.rows is not None and args.rows < 0:
        raise InputError(f"--rows must be >= 0, got {args.rows}")


def run_synthesize(args: argparse.Namespace) -> int:
    """Run ``synthesize``; returns the exit status (0)."""
    from ..dp.randomness import RandomSource  # deferred: start-up
    from ..dp.synthesis import MSTSynthesizer  # deferred: start-up
    from ..dp.synthesis_eval import evaluate_synthetic  # deferred: start-up
    from ..errors import InputError  # deferred: start-up
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, table_delimiter  # deferred
    from ..report.synthesis import synthesis_html  # deferred: start-up

    _check_options(args)
    columns = None if args.columns is None else [
        c.strip() for c in args.columns.split(",") if c.strip()]
    if columns == []:
        raise InputError("--columns needs at least one column name")
    levels, hierarchy_files = levels_and_hierarchies(args)
    bins = _bins(args.bins)
    plan = OutputPlan([args.input, *hierarchy_files.values()]).add("--output", args.output,
                                                                    TABLE_SUFFIXES)
    for option in ("--json", "--html"):
        if getattr(args, option[2:]) is not None:
            plan.add(option, getattr(args, option[2:]))
    hierarchies = read_hierarchies(hierarchy_files, args.hierarchy_sep)
    with open_ledger(args) as accountant, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = RandomSource(args.backend, seed=args.seed, insecure=args.insecure_seed)
        synth = MSTSynthesizer(args.epsilon, args.delta, rho=args.rho, columns=columns,
                               hierarchies=hierarchies, levels=levels,
                               public_domain=args.public_domain, bins=bins,
                               unknown=args.unknown, random=source, accountant=accountant)
        data = read_table(args.input, columns=columns, sep=args.sep, encoding=encoding_of(args))
        syn = synth.fit(data).sample(args.rows)
    warn_caught(caught)
    summary = {"input": args.input, "output": args.output, "rows": len(syn),
               "columns": list(syn.columns), "edges": [list(e) for e in synth.edges],
               "privacy": synth.privacy, "evaluation": None,
               "ledger": ledger_record(args, accountant)}
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
    print(f"rho spent (zCDP): {p['rho']:.6g} (support delta {p['delta_trunc']:.3g})"
          f"{epsilon_at(p)}")
    print("tree: " + ", ".join(f"{a}-{b}" for a, b in synth.edges))
    if summary["evaluation"] is not None:
        ev = summary["evaluation"]
        two = ev["two_way"]
        print(f"evaluation: mean 1-way TV {ev['one_way']['mean']:.4f}"
              + (f", mean 2-way TV {two['mean']:.4f} (max {two['max']:.4f})" if two else "")
              + "; identical to a real record "
              f"{100 * ev['closest_record']['identical_share']:.1f} %")
    print_seed(args.seed)
    return 0


COMMAND = Command(
    "synthesize", run_synthesize, _options,
    table=True,
    help="write differentially private synthetic data (MST: a tree of noisy 2-way "
         "marginals)",
    description="Fit MST (McKenna, Miklau & Sheldon 2021) to INPUT at (epsilon, delta) "
                "and write synthetic records to --output.")
register = COMMAND.register
