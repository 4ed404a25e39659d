"""The ``gpuppdp report`` subcommand: anonymize a table and write the HTML report.

::

    gpuppdp report INPUT --qi COL=HIERARCHY.csv ... [--k K] [--sensitive COL]
        [--l-diversity ...] [--t-closeness ...] [the other options of anonymize]
        --html OUT.html [--json OUT.json] [--output RELEASED.csv]
    gpuppdp report INPUT --algorithm mondrian|tds --qi COL[=HIERARCHY.csv] ... --k K
        [--relaxed | --target COL --generalization subtree|sibling] --html OUT.html
    gpuppdp report PERTURBED --qi ... --original ORIGINAL --perturbed COL,COL --html OUT.html

``--algorithm mondrian|tds`` runs the release as ``anonymize`` does (a QID without
hierarchy is numeric) and reports it: the same sections computed on its classes, NCP/GCP
as the loss, how the records were partitioned instead of the lattice
(:mod:`gpuppdp.report.partition`).  ``--original ORIGINAL --perturbed COL,COL`` (as ``check``
and ``risk`` take them) adds a section on INPUT's perturbed columns against the original's
(:mod:`gpuppdp.report.perturbation`).

The main CLI calls :func:`register`; bad input raises ``ValueError`` and friends (one
``gpuppdp: error: ...`` line, exit status 2, printed by the main CLI).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .anonymize import _qi_optional, add_algorithm_options, partition_run
from .common import add_anonymization_options, check_roles
from .measure import (add_original_options, perturbation_line, perturbation_measures_of,
                      perturbed_columns)
from .options import Command, add_run_options
from .progress import ProgressBar, search_progress
from .run import anonymizer_from_args, format_summary, print_release, release_plan, run_files

__all__ = ["COMMAND", "register", "run_report"]


def _options(p) -> None:
    """``report``'s options."""
    add_anonymization_options(p, required=False, qi_type=_qi_optional)
    add_algorithm_options(p)
    p.add_argument("--html", required=True, metavar="OUT.html", help="the HTML report")
    p.add_argument("--compare", nargs=2, default=None, metavar=("A.json", "B.json"),
                   help="instead of a run: two configurations side by side, from the JSON "
                   "of two reports (or of two 'anonymize --json' summaries); no INPUT or --qi")
    p.add_argument("--output", default=None, metavar="RELEASED.csv",
                   help="also write the released table (.csv or .parquet)")
    p.add_argument("--top-classes", type=int, default=50, metavar="N",
                   help="classes in the per-class privacy-loss plot (default 50)")
    p.add_argument("--max-subsets", type=int, default=255, metavar="N",
                   help="QID subsets in the distinction/separation table (default 255)")
    add_original_options(p)
    add_run_options(p, json_help="the report's figures as JSON (default: the HTML path with "
                    "the suffix .json)")


def run_report(args: argparse.Namespace) -> int:
    """Run ``report``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..io import table_delimiter
    from ..report import write_report

    if args.compare is not None:
        return _run_compare(args)
    if args.input is None or not args.qi:
        raise InputError("report needs INPUT and --qi COL=HIERARCHY.csv (or --compare A.json "
                         "B.json)")
    check_roles(args)

    for option, value in (("--top-classes", args.top_classes),
                          ("--max-subsets", args.max_subsets)):
        if value < 1:
            raise InputError(f"{option} must be at least 1, got {value}")
    json_path = args.json if args.json is not None else os.path.splitext(args.html)[0] + ".json"
    perturbed_columns(args)  # --original and --perturbed checked before any work
    if args.algorithm != "full-domain":
        return _run_partition_report(args, json_path)
    bare = [name for name, path in args.qi if path is None]
    if bare:
        raise InputError(f"--qi {bare[0]} needs a hierarchy: --qi COLUMN=HIERARCHY.csv (a QID "
                         "without hierarchy is numeric for --algorithm mondrian or tds)")
    for option, value in (("--target", args.target), ("--relaxed", args.relaxed),
                          ("--generalization", args.generalization)):
        if value:
            raise InputError(f"{option} is an option of --algorithm "
                             f"{'mondrian' if option == '--relaxed' else 'tds'}")
    plan = release_plan(args).add("--html", args.html).add("--json", json_path)
    data, anonymizer = anonymizer_from_args(args)
    measures = _perturbation(args, data)
    result = anonymizer.fit(data, progress=search_progress(args))
    print(format_summary(result))
    with plan.writing() as out:
        out.write_table("--output", result.released, sep=table_delimiter(args.input, args.sep))
        write_report(result, data, out.path("--html"), json_path=out.path("--json"),
                     max_classes=args.top_classes, max_subsets=args.max_subsets,
                     files=run_files(args, plan), perturbation=measures,
                     progress=ProgressBar("report", not args.quiet, unit="steps"))
    print_release(result, plan)
    print(f"report             {args.html}")
    print(f"report data        {json_path}")
    return 0


def _run_partition_report(args: argparse.Namespace, json_path: str) -> int:
    """``report --algorithm mondrian|tds``: the run of ``anonymize`` and its report."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import table_delimiter
    from ..report import write_report

    plan = release_plan(args).add("--html", args.html).add("--json", json_path)
    data, release, released, summary = partition_run(args, plan)
    measures = _perturbation(args, data)
    with plan.writing() as out:
        out.write_table("--output", released, sep=table_delimiter(args.input, args.sep))
        write_report(release, data, out.path("--html"), json_path=out.path("--json"),
                     summary=summary, released=released, max_classes=args.top_classes,
                     max_subsets=args.max_subsets, files=summary["files"],
                     perturbation=measures,
                     progress=ProgressBar("report", not args.quiet, unit="steps"))
    if "--output" in plan:
        print(f"released table     {plan.path('--output')} ({len(released)} rows)")
    print(f"report             {args.html}")
    print(f"report data        {json_path}")
    return 0


def _perturbation(args: argparse.Namespace, data) -> dict | None:
    """The measures of INPUT's ``--perturbed`` columns (``data``, read) against
    ``--original``'s, printed in one line; None without them."""
    if not perturbed_columns(args):
        return None
    measures = perturbation_measures_of(args, data, args.backend)
    print(perturbation_line(measures))
    return measures


def _run_compare(args: argparse.Namespace) -> int:
    """``report --compare A.json B.json --html OUT.html``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..io import OutputPlan
    from ..report.compare import compare, render_compare_html

    if args.input is not None or args.qi or args.output is not None or \
            args.original is not None:
        raise InputError("report --compare takes no INPUT, --qi or --output (nor --original):"
                         " it reads two JSON files")
    plan = OutputPlan(list(args.compare)).add("--html", args.html)
    figures = compare(*args.compare)
    with plan.writing() as out:
        Path(out.path("--html")).write_text(render_compare_html(figures), encoding="utf-8")
    differ = sum(a != b for _, a, b in figures["rows"]) + \
        sum(a != b for a, b in figures["transformation"].values())
    print(f"comparison         {args.html} ({differ} figure(s) differ)")
    return 0


COMMAND = Command(
    "report", run_report, _options,
    help="anonymize a table and write an HTML report with plots (and JSON)",
    description="Run the anonymization of INPUT as 'anonymize' does and write one "
                "self-contained HTML report (summary, class sizes, risk before and "
                "after, per-class privacy losses, distinction/separation of the QID "
                "subsets, the lattice nodes checked) and its figures as JSON (--json, "
                "default: the HTML path with the suffix .json).  With --algorithm "
                "mondrian|tds the same sections are computed on that release's classes, "
                "with its NCP/GCP and how the records were partitioned instead of the "
                "lattice.  With --original and --perturbed, a section on the perturbed "
                "columns against the original ones (utility and disclosure risk).")
register = COMMAND.register
