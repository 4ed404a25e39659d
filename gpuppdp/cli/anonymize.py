"""``gpuppdp demo`` and ``gpuppdp anonymize``: optimal generalization of a table, the release
written to --output and the summary to --json (both or neither, see
:class:`gpuppdp.io.OutputPlan`)."""

from __future__ import annotations

import logging
import time

from .. import datasets
from ..anonymizer import AnonymizationResult, Anonymizer
from ..io import OutputPlan
from .common import (ProgressBar, add_anonymization_options, add_run_options, anonymizer_from_args,
                     format_summary, print_release, release_plan)

__all__ = ["register", "cmd_demo", "cmd_anonymize"]


def _publish(result: AnonymizationResult, plan: OutputPlan) -> None:
    print(format_summary(result))
    with plan.writing() as out:
        out.write_table("--output", result.released)
        out.write_json("--json", result.summary())
    print_release(result, plan)
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")


def cmd_demo(args) -> int:
    bundled = [datasets.adult_path()] + [datasets.adult_path(f"adult_hierarchy_{c}.csv")
                                         for c in datasets.ADULT_QUASI_IDENTIFIERS]
    plan = release_plan(args, bundled).add("--json", args.json)
    data, hierarchies = datasets.adult()
    print(f"Adult extract: {len(data)} rows, quasi-identifiers {', '.join(data.columns)}; "
          "k=5, suppression limit 5 %, loss metric")
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                            metric="loss", search=args.search, backend=args.backend,
                            seed=args.seed)
    _publish(anonymizer.fit(data, progress=ProgressBar("search", not args.quiet)), plan)
    return 0


def cmd_anonymize(args) -> int:
    plan = release_plan(args).add("--json", args.json)
    t0 = time.perf_counter()
    data, anonymizer = anonymizer_from_args(args)
    logging.getLogger("gpuppdp").debug("loaded in %.3f s", time.perf_counter() - t0)
    _publish(anonymizer.fit(data, progress=ProgressBar("search", not args.quiet)), plan)
    return 0


def register(subparsers) -> None:
    """Add the ``demo`` and ``anonymize`` subcommands to an ``argparse`` subparsers object."""
    demo = subparsers.add_parser("demo", help="k=5, 5%% suppression on the bundled Adult extract")
    demo.add_argument("--output", default="adult_k5.released.csv",
                      help="released CSV (default: %(default)s)")
    add_run_options(demo)
    demo.set_defaults(func=cmd_demo, search="flash")

    an = subparsers.add_parser("anonymize", help="optimal generalization of a CSV/Parquet table")
    add_anonymization_options(an)
    an.add_argument("--output", required=True, help="released table (.csv or .parquet)")
    add_run_options(an)
    an.set_defaults(func=cmd_anonymize)
