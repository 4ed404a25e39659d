"""``gpuppdp explore``: every node of the generalization lattice measured
(:func:`gpuppdp.explore`), the table of nodes to --output, the frontier page to --html and the
summary to --json; pick a node and release it with ``gpuppdp anonymize ... --transformation
COL=LEVEL,...``."""

from __future__ import annotations

import argparse

from .attack import _positive_int
from .common import _privacy_models, add_anonymization_options, check_roles
from .options import Command, add_shared

__all__ = ["COMMAND", "register", "cmd_explore"]


def _risk_threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"--risk-threshold expects a number in (0, 1], got "
                                         f"{text!r}")
    return value


def cmd_explore(args) -> int:
    """Run ``explore``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..hierarchy import Hierarchy
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table
    from ..tradeoff import PARETO, explore
    from .progress import ProgressBar

    check_roles(args)
    inputs = [args.input, *(path for _, path in args.qi),
              *(path for _, path in args.sensitive if path), args.population]
    plan = (OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES)
            .add("--html", args.html).add("--json", args.json))
    data = read_table(args.input, sep=args.sep, encoding=args.encoding)
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi}
    found = explore(data, quasi_identifiers=hierarchies,
                    sensitive=[name for name, _ in args.sensitive],
                    k=None if args.qid_set else args.k, models=_privacy_models(args, data),
                    suppression_limit=args.suppression, metric=args.metric,
                    risk_threshold=args.risk_threshold, max_nodes=args.max_nodes,
                    backend=args.backend,
                    progress=ProgressBar("explore", not args.quiet))
    s = found.summary()
    optimum = "none anonymous" if s["optimum"] is None else ",".join(
        f"{q}={v}" for q, v in s["optimum"].items())
    part = "" if s["complete"] else f" of {s['lattice_nodes']} (those a heuristic visited)"
    print(f"nodes              {s['nodes']}{part} ({s['anonymous_nodes']} anonymous), measured "
          f"in {s['seconds']:.3f} s")
    for flag, (x, y) in PARETO.items():
        print(f"{'frontier':<19}{s[flag]} Pareto-optimal node(s) of {y} against {x} "
              f"({flag})")
    print(f"optimum            {optimum} ({s['metric']} metric)")
    with plan.writing() as out:
        out.write_table("--output", found.nodes)
        if "--html" in plan:
            with open(out.path("--html"), "w", encoding="utf-8") as fh:
                fh.write(found.to_html())
        out.write_json("--json", {**s, "files": {option.lstrip("-"): plan.path(option)
                                                 for option in ("--output", "--html")
                                                 if option in plan}})
    for option, what in (("--output", "nodes"), ("--html", "frontier"), ("--json", "summary")):
        if option in plan:
            print(f"{what:<19}{plan.path(option)}")
    return 0


def _options(p) -> None:
    """``explore``'s options."""
    add_anonymization_options(p)
    add_shared(p, metric=None)
    p.add_argument("--risk-threshold", type=_risk_threshold, default=0.2, metavar="T",
                   help="records_at_risk: the share of records whose prosecutor risk 1/|E| "
                   "exceeds T (default 0.2)")
    p.add_argument("--max-nodes", type=_positive_int, default=None, metavar="N",
                   help="a lattice of more than N nodes is measured in part: the nodes the "
                   "heuristic search for huge lattices visits within N evaluations (default: "
                   "every node)")
    p.add_argument("--output", default=None, metavar="NODES.parquet|NODES.csv",
                   help="the table of every node (one row per node)")
    add_shared(p, html={"metavar": "FRONTIER.html",
                        "help": "the frontier page (self-contained, no script)"},
               json="the summary: nodes, anonymous nodes, frontier sizes, optimum, seconds",
               backend=None, quiet="no progress bar")


COMMAND = Command(
    "explore", cmd_explore, _options,
    help="measure every lattice node (risk, privacy and utility losses, "
         "information loss) and draw the Pareto frontier",
    description="Evaluate every node of the generalization lattice of INPUT in batches: per node "
                "whether it satisfies the models (failing classes suppressed within the limit), "
                "its classes, suppressed records, information loss, prosecutor risk, records at "
                "risk and the privacy and utility losses on the first --sensitive column; the "
                "Pareto-optimal nodes are marked.  Release a node with gpuppdp anonymize ... "
                "--transformation COL=LEVEL,...")
register = COMMAND.register
