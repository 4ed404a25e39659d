"""The ``gpuppdp perturb`` subcommand: perturbative masking of named columns, see
:class:`gpuppdp.perturb.Perturbation`, and, with ``--qi``, the generalization of other
quasi-identifiers in the same run (:meth:`gpuppdp.perturb.Perturbation.anonymize`).

::

    gpuppdp perturb INPUT [--microaggregate COL,COL:k=K ...] [--method mdav|vmdav|optimal]
        [--gamma G] [--order COL=V1,V2,...] [--swap COL:P% ...]
        [--noise COL[,COL]:S ...] [--pram COL[=MATRIX.csv] ...] [--top-code COL:V ...]
        [--bottom-code COL:V ...] [--permute COL ... --by COL,COL] [--identifying COL ...]
        [--qi COL=HIERARCHY.csv ... [--k K] [--suppression-limit S] [the other options of
        anonymize] [--html REPORT.html]]
        --output OUT [--json SUMMARY.json] [--seed N] [--backend auto|cpu|gpu]

Without ``--qi``, columns not named are released unchanged (``--identifying`` ones are
dropped) and the options of the generalization are refused.  With ``--qi`` every column has a
role as in ``anonymize`` (the microaggregated ones are quasi-identifiers of their own, the
other perturbed ones insensitive unless given a role).  The table, the JSON summary and the
report are written together at the end (:class:`gpuppdp.io.OutputPlan`).
"""

from __future__ import annotations

import argparse
import os

from .common import add_anonymization_options, check_roles
from .options import Command, add_run_options, add_shared
from .progress import ProgressBar, search_progress
from .run import anonymizer_from_args, format_summary, print_release, run_files, run_summary

__all__ = ["COMMAND", "register", "run_perturb"]


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


def _options(p) -> None:
    """``perturb``'s options."""
    p.add_argument("--microaggregate", action="append", default=[], metavar="COL,COL:k=K",
                   type=_column_number("--microaggregate", "k="),
                   help="microaggregation of these numeric or ordinal columns together, "
                   "groups of at least K records, each record released as its group's mean")
    p.add_argument("--method", choices=("mdav", "vmdav", "optimal"), default="mdav",
                   help="the microaggregation's grouping: MDAV (default), V-MDAV (variable "
                   "group sizes) or the optimal grouping of one column")
    p.add_argument("--gamma", type=float, default=None, metavar="G",
                   help="V-MDAV's gain factor (default 0.2; larger extends groups more)")
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
    add_anonymization_options(p, required=False)  # the generalization of --qi (and roles)
    for action in p._actions:  # --order serves the microaggregation too
        if action.dest == "order":
            action.help = ("the order of an ordinal microaggregated column (aggregated by "
                           "rank, released as its group's median value), or of a sensitive "
                           "attribute for --t-closeness ordered:T")
    p.add_argument("--output", required=True, metavar="OUT",
                   help="the released table (CSV or Parquet by the ending)")
    p.add_argument("--no-measures", action="store_true",
                   help="skip the risk and utility measures of the changed numeric columns "
                   "(record linkage, interval disclosure, IL1s, propensity score, ...)")
    add_shared(p, html="with --qi: also write the HTML report of the release (as 'gpuppdp "
                    "report'), with the perturbation's measures, and its JSON twin (the HTML "
                    "path with the suffix .json)")
    add_run_options(p, json_help="write the summary as JSON")
    add_shared(p, seed="reproducible draws and row permutation, for tests and experiments "
                    "(default: OS entropy)")
    p.set_defaults(usage_error=p.error)


def run_perturb(args: argparse.Namespace) -> int:
    """Run ``perturb``; returns the exit status (0)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..errors import InputError
    from ..io import read_table
    from ..perturb import Perturbation, check_perturbed_roles

    if args.input is None:
        args.usage_error("the following arguments are required: input")
    if args.permute and not args.by:
        raise InputError("--permute needs --by COL,COL (the groups to shuffle within)")
    if args.by and not args.permute:
        raise InputError("--by is for --permute: name the column(s) to shuffle")
    if args.qi:
        check_roles(args)
    else:
        _refuse_generalization_options(args)
    matrix_files = [path for _, path in args.pram if path is not None]
    plan = _output_plan(args, matrix_files)
    matrices = {column: None if path is None else _matrix(read_table(path), path)
                for column, path in args.pram}
    for cols, k in args.microaggregate:
        if not float(k).is_integer():
            raise InputError(f"--microaggregate: k must be a whole number, got {k}")
    if any(column is None for column, _ in args.order):
        raise InputError("--order names its column: --order COLUMN=V1,V2,...")
    # --order of a microaggregated column: its ordinal order; of another, the generalization's
    aggregated = {c for cols, _ in args.microaggregate for c in cols}
    ordinal = dict(o for o in args.order if o[0] in aggregated)
    args.order = [o for o in args.order if o[0] not in aggregated]
    perturbation = Perturbation(
        microaggregate=[(cols, int(k)) for cols, k in args.microaggregate],
        swap={c: p for cols, p in args.swap for c in cols},
        noise={tuple(cols): s for cols, s in args.noise}, noise_method=args.noise_method,
        pram=matrices, pram_retain=args.pram_retain,
        top_code={c: v for cols, v in args.top_code for c in cols},
        bottom_code={c: v for cols, v in args.bottom_code for c in cols},
        permute={c: args.by for c in args.permute}, partition_rows=args.partition_rows,
        aggregate=args.aggregate, microaggregate_method=args.method, gamma=args.gamma,
        order=ordinal, seed=args.seed, backend=args.backend,
        measures=not args.no_measures)
    check_perturbed_roles(perturbation, quasi_identifiers=[name for name, _ in args.qi or []],
                          sensitive=[name for name, _ in args.sensitive],
                          insensitive=args.insensitive, identifying=args.identifying,
                          option="--")
    if args.qi:
        return _perturb_and_generalize(args, plan, perturbation)
    data = read_table(args.input, sep=args.sep, encoding=args.encoding)
    absent = [c for c in args.identifying if c not in data.columns]
    if absent:
        raise InputError(f"--identifying: columns not in the table: {absent}")
    release = perturbation.fit(data)
    released = release.data.drop(columns=args.identifying)
    summary = release.summary()
    summary["dropped_identifying"] = list(args.identifying)
    _print_perturbation(summary)
    print(f"released {len(released):,} records, {released.shape[1]} columns")
    _write(args, plan, released, summary)
    return 0


#: the options of ``perturb`` that apply without --qi (the others configure the generalization)
_PERTURBATION_DESTS = ("input", "qi", "identifying", "sep", "encoding", "backend", "seed",
                       "json", "quiet", "order")


def _refuse_generalization_options(args) -> None:
    """Without --qi: an InputError naming the first option of the generalization given (the
    models, roles, search; --html), which would otherwise be ignored."""
    from ..errors import InputError  # deferred: keeps `gpuppdp --help` fast

    probe = argparse.ArgumentParser(add_help=False)  # the generalization options' defaults
    add_anonymization_options(probe, required=False)
    add_run_options(probe)
    defaults = vars(probe.parse_args([]))
    given = [dest for dest, default in defaults.items()
             if dest not in _PERTURBATION_DESTS and getattr(args, dest) != default]
    given += ["html"] if args.html is not None else []
    if given:
        raise InputError(f"--{given[0].replace('_', '-')} is an option of the generalization "
                         "that follows the perturbation: give the quasi-identifiers to "
                         "generalize (--qi COL=HIERARCHY.csv), or leave it out")


def _output_plan(args, matrix_files: list[str]):
    """The checked outputs (--output, --json, --html and its JSON twin); the inputs are
    INPUT, the PRAM matrices, the hierarchies and --population."""
    from ..io import TABLE_SUFFIXES, OutputPlan  # deferred: keeps `gpuppdp --help` fast

    inputs = [args.input, *matrix_files, *(path for _, path in args.qi or []),
              *(path for _, path in args.sensitive if path), args.population]
    plan = (OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES)
            .add("--json", args.json))
    if args.html is not None:
        plan.add("--html", args.html).add("--html (its JSON twin)",
                                          os.path.splitext(args.html)[0] + ".json")
    return plan


def _perturb_and_generalize(args, plan, perturbation) -> int:
    """``perturb --qi ...``: the perturbation, then the generalization of the perturbed
    table (:meth:`gpuppdp.perturb.Perturbation.anonymize`), its release, summary and
    report."""
    # deferred: keeps `gpuppdp --help` fast
    from ..io import read_table
    from ..report import write_report

    _, anonymizer = anonymizer_from_args(args, read=False)
    data = read_table(args.input, sep=args.sep, encoding=args.encoding)
    outcome = perturbation.anonymize(data, anonymizer, progress=search_progress(args))
    summary = outcome.summary(run_summary(outcome.result, args, plan))
    _print_perturbation(summary)
    print(format_summary(outcome.result))
    checked = outcome.checked
    print(f"checked            independent checker over {', '.join(checked['quasi_identifiers'])}"
          f": k = {checked['k']}, {checked['classes']} classes, models "
          + ("satisfied" if checked["satisfied"] else "NOT satisfied: " + ", ".join(
              m["model"] for m in checked["models"] if not m["holds"])))
    _write(args, plan, outcome.released, summary, lambda out: write_report(
        outcome.result, outcome.perturbation.data, out.path("--html"),
        json_path=out.path("--html (its JSON twin)"), files=run_files(args, plan),
        perturbation=summary["measures"],
        progress=ProgressBar("report", not args.quiet, unit="steps")))
    print_release(outcome.result, plan)
    return 0


def _print_perturbation(summary: dict) -> None:
    """The lines of the perturbation: each method and the measures of the changed columns."""
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


def _write(args, plan, released, summary: dict, report=None) -> None:
    """The release, the summary and (``report(out)``, with --html) the report, written
    together."""
    from ..io import table_delimiter  # deferred: keeps `gpuppdp --help` fast

    with plan.writing() as out:
        out.write_table("--output", released, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary)
        if report is not None and "--html" in plan:
            report(out)
    if "--html" in plan:
        print(f"report             {args.html}")


COMMAND = Command(
    "perturb", run_perturb, _options,
    conflict_handler="resolve",  # --seed: the draws' seed as well
    help="perturb columns: microaggregation, rank swapping, noise, PRAM, top/bottom "
         "coding, permutation (and generalize other QIDs: --qi)",
    description="Release INPUT with the named columns perturbed (each option "
                "repeatable, one method per column; the others unchanged): MDAV "
                "microaggregation, rank swapping, additive or correlated noise, PRAM, "
                "top and bottom coding, and permutation within groups.  With --qi "
                "COL=HIERARCHY.csv and the privacy models of 'anonymize' (--k, ...) the "
                "perturbed table is then generalized in the same run: the optimal "
                "full-domain generalization of the --qi columns, the microaggregated "
                "columns taking part in the classes as quasi-identifiers that are never "
                "generalized; the release is checked over all of them by the independent "
                "checker.")
register = COMMAND.register
