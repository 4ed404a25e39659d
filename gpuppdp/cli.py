"""Command line: ``gpuppdp demo``, ``gpuppdp anonymize``.

Errors exit with status 2 and one line on stderr (no traceback).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

from . import datasets
from .anonymizer import AnonymizationResult, Anonymizer, NoSolutionError
from .backend import BACKEND_CHOICES, BackendError
from .check_cli import register as register_check
from .dp.cli import register as register_dp_histogram
from .encoding import SchemaError
from .hierarchy import Hierarchy, HierarchyError
from .io import read_table, write_table
from .metrics import METRICS
from .models import (TCLOSENESS_DISTANCES, DistinctLDiversity, EntropyLDiversity,
                     KAnonymityOnSubsets, LKCPrivacy, RecursiveCLDiversity, TCloseness)
from .risk_cli import register as register_risk
from .search import SEARCHES
from .transform import SUPPRESSION_MODES

__all__ = ["main"]

USER_ERRORS = (ValueError, TypeError, KeyError, FileNotFoundError, SchemaError, HierarchyError,
               NoSolutionError, BackendError, OSError)


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.enabled = enabled
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        if filled == self._last and done != total:
            return
        self._last = filled
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{total} nodes")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _fraction(text: str) -> float:
    """``0.05`` or ``5%`` -> 0.05."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction like 0.05 or 5%, got {text!r}")


def _qi_spec(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"quasi-identifier {text!r} needs a hierarchy: --qi COLUMN=HIERARCHY.csv")
    return name, path


def _l_diversity(text: str) -> tuple:
    """``distinct:L`` -> ("distinct", int L); ``entropy:L`` -> ("entropy", float L);
    ``recursive:C,L`` -> ("recursive", float C, int L)."""
    kind, sep, value = text.partition(":")
    usage = ("--l-diversity expects distinct:L, entropy:L or recursive:C,L (e.g. distinct:3, "
             f"entropy:2.5, recursive:3,2), got {text!r}")
    if kind not in ("distinct", "entropy", "recursive") or not sep:
        raise argparse.ArgumentTypeError(usage)
    try:
        if kind == "distinct":
            return kind, int(value)
        if kind == "entropy":
            return kind, float(value)
        c, comma, l = value.partition(",")  # noqa: E741
        if not comma:
            raise ValueError(value)
        return kind, float(c), int(l)
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


def _t_closeness(text: str) -> tuple[str, float]:
    """``equal:T`` / ``ordered:T`` / ``hierarchical:T`` -> (distance, float T)."""
    kind, sep, value = text.partition(":")
    usage = ("--t-closeness expects equal:T, ordered:T or hierarchical:T (e.g. equal:0.2), "
             f"got {text!r}")
    if kind not in TCLOSENESS_DISTANCES or not sep:
        raise argparse.ArgumentTypeError(usage)
    try:
        return kind, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


def _qid_set(text: str) -> list[str]:
    """``COL,COL,...`` -> the list of column names."""
    names = [c.strip() for c in text.split(",")]
    if not text or not all(names):
        raise argparse.ArgumentTypeError(
            f"--qid-set expects comma-separated quasi-identifiers COL,COL,..., got {text!r}")
    return names


def _lkc(text: str) -> tuple[int, int, float]:
    """``L,K,C`` -> (int L, int K, float C); C a fraction (0.5) or percentage (50%)."""
    usage = f"--lkc expects L,K,C (e.g. 2,5,0.6 or 2,5,60%), got {text!r}"
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(usage)
    try:
        c = parts[2].strip()
        return (int(parts[0]), int(parts[1]),
                float(c[:-1]) / 100 if c.endswith("%") else float(c))
    except ValueError:
        raise argparse.ArgumentTypeError(usage)


def _sensitive_spec(text: str) -> tuple[str, str | None]:
    """``COL`` or ``COL=HIERARCHY.csv`` (the hierarchy of hierarchical t-closeness)."""
    name, sep, path = text.partition("=")
    if not name or (sep and not path):
        raise argparse.ArgumentTypeError(
            f"--sensitive expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return name, path or None


def _privacy_models(args) -> list:
    """The models of ``--l-diversity`` and ``--t-closeness`` (on the first ``--sensitive``)."""
    models = []
    qid_sets = getattr(args, "qid_set", None) or []
    if qid_sets:
        if args.k is None:
            raise SchemaError("--qid-set needs --k (the k of k-anonymity on each QID set)")
        models.append(KAnonymityOnSubsets(qid_sets, args.k))
    for L, K, C in getattr(args, "lkc", None) or []:  # noqa: N806 - the literature's names
        attribute = args.sensitive[0][0] if args.sensitive else None
        if attribute is None and C < 1:
            raise SchemaError("--lkc with C < 1 needs --sensitive COLUMN")
        models.append(LKCPrivacy(L, K, C, attribute=attribute))
    for option, given in (("--l-diversity", args.l_diversity), ("--t-closeness", args.t_closeness)):
        if given and not args.sensitive:
            raise SchemaError(f"{option} needs --sensitive COLUMN")
    if not args.sensitive:
        return models
    attribute, hierarchy_path = args.sensitive[0]
    for spec in args.l_diversity:
        if spec[0] == "distinct":
            models.append(DistinctLDiversity(attribute, spec[1]))
        elif spec[0] == "entropy":
            models.append(EntropyLDiversity(attribute, spec[1]))
        else:
            models.append(RecursiveCLDiversity(attribute, spec[1], spec[2]))
    for distance, t in args.t_closeness:
        hierarchy = None
        if distance == "hierarchical":
            if hierarchy_path is None:
                raise SchemaError(f"--t-closeness hierarchical:T needs the hierarchy of "
                                  f"{attribute!r}: --sensitive {attribute}=HIERARCHY.csv")
            hierarchy = Hierarchy.from_csv(hierarchy_path, sep=args.hierarchy_sep)
        models.append(TCloseness(attribute, t, distance, hierarchy=hierarchy))
    return models


def format_summary(result: AnonymizationResult) -> str:
    s = result.summary()
    levels = ", ".join(f"{k}={v}" for k, v in s["transformation"].items())
    lines = [
        f"optimum            {levels}",
        f"information loss   {s['information_loss']:.10g} ({s['metric']})",
        f"classes            {s['equivalence_classes']} (smallest {s['smallest_class']}, "
        f"average {s['average_class_size']:.1f})",
        f"suppressed rows    {s['suppressed_records']} of {s['input_rows']} "
        f"(limit {s['suppression_limit']:.2%})",
        f"nodes evaluated    {s['nodes_evaluated']} of {s['lattice_size']} ({s['search']})",
        f"search time        {s['seconds']:.3f} s on {s['backend']} "
        f"(total {s['timings']['total']:.3f} s)",
    ]
    return "\n".join(lines)


def _finish(result: AnonymizationResult, output: str | None, json_path: str | None) -> None:
    print(format_summary(result))
    if output:
        write_table(result.released, output)
        print(f"released table     {output} ({len(result.released)} rows)")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump(result.summary(), fh, indent=2)
        print(f"summary            {json_path}")


def cmd_demo(args) -> int:
    data, hierarchies = datasets.adult()
    print(f"Adult extract: {len(data)} rows, quasi-identifiers {', '.join(data.columns)}; "
          "k=5, suppression limit 5 %, loss metric")
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                            metric="loss", search=args.search, backend=args.backend,
                            seed=args.seed)
    result = anonymizer.fit(data, progress=ProgressBar("search", not args.quiet))
    _finish(result, args.output, args.json)
    return 0


def cmd_anonymize(args) -> int:
    t0 = time.perf_counter()
    data = read_table(args.input, sep=args.sep)
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi}
    models = _privacy_models(args)
    anonymizer = Anonymizer(quasi_identifiers=hierarchies,
                            sensitive=[name for name, _ in args.sensitive],
                            insensitive=args.insensitive, identifying=args.identifying,
                            others=args.others, models=models,
                            k=None if args.qid_set else args.k,
                            suppression_limit=args.suppression, metric=args.metric,
                            search=args.search, backend=args.backend,
                            suppression=args.suppressed, seed=args.seed)
    logging.getLogger("gpuppdp").debug("loaded in %.3f s", time.perf_counter() - t0)
    result = anonymizer.fit(data, progress=ProgressBar("search", not args.quiet))
    _finish(result, args.output, args.json)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metric", choices=sorted(METRICS), default="loss")
    p.add_argument("--search", choices=SEARCHES, default="flash",
                   help="flash: ARX's algorithm and tie-break (default); exhaustive: every node")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the release's row permutation (default: OS entropy)")
    p.add_argument("--json", metavar="SUMMARY.json", help="write the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuppdp", description="GPU-accelerated privacy-preserving data publishing")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="k=5, 5%% suppression on the bundled Adult extract")
    demo.add_argument("--output", default="adult_k5.released.csv",
                      help="released CSV (default: %(default)s)")
    _common(demo)
    demo.set_defaults(func=cmd_demo, search="flash")

    an = sub.add_parser("anonymize", help="optimal generalization of a CSV/Parquet table")
    an.add_argument("input", help="CSV (delimiter detected, or --sep) or Parquet file")
    an.add_argument("--qi", action="append", type=_qi_spec, required=True,
                    metavar="COL=HIERARCHY.csv", help="quasi-identifier and its ARX hierarchy")
    an.add_argument("--sensitive", action="append", default=[], type=_sensitive_spec,
                    metavar="COL[=HIERARCHY.csv]",
                    help="sensitive attribute (the first one is what --l-diversity and "
                    "--t-closeness refer to; hierarchical t-closeness needs its hierarchy)")
    an.add_argument("--insensitive", action="append", default=[], metavar="COL")
    an.add_argument("--identifying", action="append", default=[], metavar="COL",
                    help="removed from the release")
    an.add_argument("--others", choices=("error", "insensitive", "drop"), default="error",
                    help="role of columns given none (default: error)")
    an.add_argument("--l-diversity", type=_l_diversity, action="append", default=[],
                    metavar="distinct:L|entropy:L|recursive:C,L",
                    help="l-diversity of the (first) sensitive attribute; repeatable")
    an.add_argument("--t-closeness", type=_t_closeness, action="append", default=[],
                    metavar="equal:T|ordered:T|hierarchical:T",
                    help="t-closeness of the (first) sensitive attribute; repeatable")
    an.add_argument("--qid-set", type=_qid_set, action="append", default=[],
                    metavar="COL,COL,...",
                    help="k-anonymity (with --k) over this set of quasi-identifiers; repeatable: "
                    "with --qid-set, --k applies to each given set instead of all QIDs")
    an.add_argument("--lkc", type=_lkc, action="append", default=[], metavar="L,K,C",
                    help="LKC-privacy: every combination of at most L QID values is shared by "
                    ">= K records, confidence of each value of the (first) sensitive attribute "
                    "<= C; repeatable")
    an.add_argument("--k", type=int, default=None,
                    help="k-anonymity (optional when another model is given)")
    an.add_argument("--suppression", type=_fraction, default=0.0, metavar="S",
                    help="suppression limit, a fraction (0.05) or percentage (5%%)")
    an.add_argument("--suppressed", choices=SUPPRESSION_MODES, default="mark",
                    help="mark suppressed records with * (default) or drop them")
    an.add_argument("--sep", default=None, help="CSV delimiter (default: detected)")
    an.add_argument("--hierarchy-sep", default=";", help="hierarchy CSV delimiter")
    an.add_argument("--output", required=True, help="released table (.csv or .parquet)")
    _common(an)
    an.set_defaults(func=cmd_anonymize)

    register_check(sub)
    register_risk(sub)
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
