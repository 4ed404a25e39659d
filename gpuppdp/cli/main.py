"""Command line: ``gpuppdp demo``, ``gpuppdp anonymize``.

Errors exit with status 2 and one line on stderr (no traceback).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from .. import datasets
from ..anonymizer import Anonymizer, NoSolutionError
from ..backend import BackendError
from ..engine.encoding import SchemaError
from ..hierarchy import HierarchyError
from .check import register as register_check
from .common import (ProgressBar, add_anonymization_options, add_run_options, anonymizer_from_args,
                     print_result)
from .dp import register as register_dp_histogram
from .report import register as register_report
from .risk import register as register_risk

__all__ = ["main"]

USER_ERRORS = (ValueError, TypeError, KeyError, FileNotFoundError, SchemaError, HierarchyError,
               NoSolutionError, BackendError, OSError)


def cmd_demo(args) -> int:
    data, hierarchies = datasets.adult()
    print(f"Adult extract: {len(data)} rows, quasi-identifiers {', '.join(data.columns)}; "
          "k=5, suppression limit 5 %, loss metric")
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                            metric="loss", search=args.search, backend=args.backend,
                            seed=args.seed)
    result = anonymizer.fit(data, progress=ProgressBar("search", not args.quiet))
    print_result(result, args.output, args.json)
    return 0


def cmd_anonymize(args) -> int:
    t0 = time.perf_counter()
    data, anonymizer = anonymizer_from_args(args)
    logging.getLogger("gpuppdp").debug("loaded in %.3f s", time.perf_counter() - t0)
    result = anonymizer.fit(data, progress=ProgressBar("search", not args.quiet))
    print_result(result, args.output, args.json)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuppdp", description="GPU-accelerated privacy-preserving data publishing")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="k=5, 5%% suppression on the bundled Adult extract")
    demo.add_argument("--output", default="adult_k5.released.csv",
                      help="released CSV (default: %(default)s)")
    add_run_options(demo)
    demo.set_defaults(func=cmd_demo, search="flash")

    an = sub.add_parser("anonymize", help="optimal generalization of a CSV/Parquet table")
    add_anonymization_options(an)
    an.add_argument("--output", required=True, help="released table (.csv or .parquet)")
    add_run_options(an)
    an.set_defaults(func=cmd_anonymize)

    register_check(sub)
    register_risk(sub)
    register_report(sub)
    register_dp_histogram(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("GPUPPDP_LOG", "WARNING"),
                        format="%(message)s")
    try:
        return args.func(args)
    except USER_ERRORS as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"gpuppdp: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpuppdp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
