"""The ``gpuppdp perturb`` subcommand: perturbative masking of named columns, see
:class:`gpuppdp.perturb.Perturbation`.

::

    gpuppdp perturb INPUT [--microaggregate COL,COL:k=K ...] [--method mdav|vmdav|optimal]
        [--gamma G] [--order COL=V1,V2,...] [--swap COL:P% ...]
        [--noise COL[,COL]:S ...] [--pram COL[=MATRIX.csv] ...] [--top-code COL:V ...]
        [--bottom-code COL:V ...] [--permute COL ... --by COL,COL] [--identifying COL ...]
        --output OUT [--json SUMMARY.json] [--seed N] [--backend auto|cpu|gpu]

Columns not named are released unchanged (``--identifying`` ones are dropped); the table and
the JSON summary are written together at the end (:class:`gpuppdp.io.OutputPlan`).
"""

from __future__ import annotations

import argparse

from .choices import BACKENDS
from .common import _order_spec
from .options import table_subcommand

__all__ = ["register", "run_perturb"]


def _columns(text: str, option: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{option} expects column names, got {text!r}")
    return names


def _column_number(option: str, prefix: str = "", percent: bool = False):
    """``COL[,COL]:V`` -> (columns, number); ``prefix`` (e.g. ``k=``) may precede V, and a
    trailing ``%`` is allowed with ``percent``."""
    def parse(text: str) -> tuple[list[str], float]:
        head, sep, tail = text.rpartition(":")
        tail = tail.strip()
        if prefix and tail.startswith(prefix):
            tail = tail[len(prefix):]
        if percent and tail.endswith("%"):
            tail = tail[:-1]
        try:
            value = float(tail)
        except ValueError:
            value = None
        if not sep or value is None:
            raise argparse.ArgumentTypeError(
                f"{option} expects COL:{prefix or ''}NUMBER{'%' if percent else ''}, got "
                f"{text!r}")
        return _columns(head, option), value
    return parse


def _pram_spec(text: str) -> tuple[str, str | None]:
    column, _, matrix = text.partition("=")
    if not column.strip():
        raise argparse.ArgumentTypeError(f"--pram expects COL or COL=MATRIX.csv, got {text!r}")
    return column.strip(), matrix.strip() or None


def _matrix(table, path: str):
    """A PRAM matrix file as a DataFrame: the first column names the rows' categories."""
    # deferred: keeps `gpuppdp --help` fast
    import pandas as pd

    from ..errors import InputError

    frame = table.set_index(table.columns[0])
    try:
        return frame.apply(pd.to_numeric)
    except ValueError as e:
        raise InputError(f"--pram matrix {path}: every entry must be a probability ({e})")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``perturb`` subcommand to an ``argparse`` subparsers object."""
    p = table_subcommand(
        subparsers, "perturb", run_perturb, json="also write the summary as JSON",
        help="perturb columns: microaggregation, rank swapping, noise, PRAM, top/bottom "
             "coding, permutation",
        description="Release INPUT with the named columns perturbed (each option "
                    "repeatable, one method per column; the others unchanged): MDAV "
                    "microaggregation, rank swapping, additive or correlated noise, PRAM, "
                    "top and bottom coding, and permutation within groups.")
    p.add_argument("--microaggregate", action="append", default=[], metavar="COL,COL:k=K",
                   type=_column_number("--microaggregate", "k="),
                   help="microaggregation of these numeric or ordinal columns together, "
                   "groups of at least K records, each record released as its group's mean")
    p.add_argument("--method", choices=("mdav", "vmdav", "optimal"), default="mdav",
                   help="the microaggregation's grouping: MDAV (default), V-MDAV (variable "
                   "group sizes) or the optimal grouping of one column")
    p.add_argument("--gamma", type=float, default=None, metavar="G",
                   help="V-MDAV's gain factor (default 0.2; larger extends groups more)")
    p.add_argument("--order", type=_order_spec, action="append", default=[],
                   metavar="COL=V1,V2,...",
                   help="a microaggregated column is ordinal, its values in this order (or "
                   "COL=lexical): aggregated by rank, released as the group's median value")
    p.add_argument("--aggregate", choices=("mean", "median"), default="mean",
                   help="the value a microaggregated group releases (default mean)")
    p.add_argument("--partition-rows", type=int, default=None, metavar="N",
                   help="microaggregate partitions of about N records (sorted by the first "
                   "principal component) instead of the whole table at once")
    p.add_argument("--swap", action="append", default=[], metavar="COL:P%",
                   type=_column_number("--swap", percent=True),
                   help="rank swapping: values exchanged within P %% of the rank range")
    p.add_argument("--noise", action="append", default=[], metavar="COL[,COL]:S",
                   type=_column_number("--noise", percent=True),
                   help="normal noise of S %% of each column's variance (columns listed "
                   "together get correlated noise with --noise-method correlated)")
    p.add_argument("--noise-method", choices=("additive", "correlated"), default="additive")
    p.add_argument("--pram", action="append", default=[], metavar="COL[=MATRIX.csv]",
                   type=_pram_spec,
                   help="PRAM of a categorical column: with the transition matrix of "
                   "MATRIX.csv (first column and header: the categories; rows sum to 1), or "
                   "the invariant matrix keeping a value with probability --pram-retain")
    p.add_argument("--pram-retain", type=float, default=0.8, metavar="R",
                   help="the invariant PRAM matrix's base retention probability (default 0.8)")
    for option, side in (("--top-code", "above"), ("--bottom-code", "below")):
        p.add_argument(option, action="append", default=[], metavar="COL:V",
                       type=_column_number(option),
                       help=f"values {side} V replaced by V")
    p.add_argument("--permute", action="append", default=[], metavar="COL",
                   help="shuffle this column's values within the groups of --by")
    p.add_argument("--by", default=None, metavar="COL,COL",
                   type=lambda t: _columns(t, "--by"), help="the groups of --permute")
    p.add_argument("--identifying", action="append", default=[], metavar="COL",
                   help="identifying column, left out of the release (repeatable)")
    p.add_argument("--output", required=True, metavar="OUT",
                   help="the released table (CSV or Parquet by the ending)")
    p.add_argument("--seed", type=int, default=None,
                   help="reproducible draws, for tests and experiments (default: OS entropy)")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--no-measures", action="store_true",
                   help="skip the risk and utility measures of the changed numeric columns "
                   "(record linkage, interval disclosure, IL1s, propensity score, ...)")
    return p


def run_perturb(args: argparse.Namespace) -> int:
    """Run ``perturb``; returns the exit status (0)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..errors import InputError
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, table_delimiter
    from ..perturb import Perturbation

    if args.permute and not args.by:
        raise InputError("--permute needs --by COL,COL (the groups to shuffle within)")
    if args.by and not args.permute:
        raise InputError("--by is for --permute: name the column(s) to shuffle")
    matrix_files = [path for _, path in args.pram if path is not None]
    plan = (OutputPlan([args.input, *matrix_files]).add("--output", args.output, TABLE_SUFFIXES)
            .add("--json", args.json))
    matrices = {column: None if path is None else _matrix(read_table(path), path)
                for column, path in args.pram}
    for cols, k in args.microaggregate:
        if not float(k).is_integer():
            raise InputError(f"--microaggregate: k must be a whole number, got {k}")
    if any(column is None for column, _ in args.order):
        raise InputError("--order names its column: --order COLUMN=V1,V2,...")
    perturbation = Perturbation(
        microaggregate=[(cols, int(k)) for cols, k in args.microaggregate],
        swap={c: p for cols, p in args.swap for c in cols},
        noise={tuple(cols): s for cols, s in args.noise}, noise_method=args.noise_method,
        pram=matrices, pram_retain=args.pram_retain,
        top_code={c: v for cols, v in args.top_code for c in cols},
        bottom_code={c: v for cols, v in args.bottom_code for c in cols},
        permute={c: args.by for c in args.permute}, partition_rows=args.partition_rows,
        aggregate=args.aggregate, microaggregate_method=args.method, gamma=args.gamma,
        order=dict(args.order), seed=args.seed, backend=args.backend,
        measures=not args.no_measures)
    data = read_table(args.input, sep=args.sep, encoding=args.encoding)
    absent = [c for c in args.identifying if c not in data.columns]
    if absent:
        raise InputError(f"--identifying: columns not in the table: {absent}")
    release = perturbation.fit(data)
    released = release.data.drop(columns=args.identifying)
    summary = release.summary()
    summary["dropped_identifying"] = list(args.identifying)
    for m in summary["methods"]:
        how = f" ({m['algorithm']}, SSE/SST {m['information_loss']:.5f})" \
            if "algorithm" in m else ""
        print(f"{m['method']}{how}: {', '.join(m['columns'])} ({m['seconds']:.2f} s)")
    measures = summary["measures"]
    if measures is not None:
        risk, utility = measures["risk"], measures["utility"]
        print(f"measures of {', '.join(measures['columns'])}: record linkage "
              f"{risk['linkage_rate']:.4f}, interval disclosure "
              f"{risk['interval_disclosure']['records_at_risk']:.4f}, IL1s "
              f"{utility['il1s']:.4f}, propensity score {utility['propensity_score']:.4f}")
    print(f"released {len(released):,} records, {released.shape[1]} columns")
    with plan.writing() as out:
        out.write_table("--output", released, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary)
    return 0
