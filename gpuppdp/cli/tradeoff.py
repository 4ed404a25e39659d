"""``gpuppdp tradeoff``: the three optimizations of section 4.3 of the thesis "seed 004" on a
table's sensitive distribution, and the node steered toward their answer
(:mod:`gpuppdp.tradeoff`).

::

    gpuppdp tradeoff INPUT --qi COL=H.csv [--qi ...] --sensitive COL
        [--epsilon E] [--alpha A] [--delta D] [--gamma G] [--prior PRIOR.csv]
        [--reference record|original-class] [--objective distribution|entropy]
        [--k K] [--suppression-limit S] [--metric NAME] [--no-steer] [--json OUT.json]

The class is the whole table: ``x`` is the distribution the release should publish, the
original distribution the table's, the prior the table's (or ``--prior``).  Printed: the
least utility loss within the privacy bounds (``--epsilon`` distribution, ``--alpha`` entropy),
the least privacy loss within the utility bounds (``--delta`` distribution, ``--gamma``
entropy: the thesis's names), whether the region where all four hold is empty, and the node
whose released classes are nearest to the first answer (``--k`` and ``--suppression-limit``
for the nodes allowed) beside the exhaustive optimum of ``--metric``.
"""

from __future__ import annotations

import argparse

from .options import (Command, add_hierarchy_qi_options, add_json_option, add_prior_option,
                      add_shared, bound, qi_names, read_prior)

__all__ = ["COMMAND", "register", "run_tradeoff"]


def _options(p) -> None:
    """``tradeoff``'s options (after INPUT, --sep and --encoding)."""
    add_hierarchy_qi_options(p)
    for flag, what in (("--epsilon", "distribution privacy loss"),
                       ("--alpha", "entropy privacy loss (bits)"),
                       ("--delta", "distribution utility loss (the thesis's delta)"),
                       ("--gamma", "entropy utility loss, bits (the thesis's gamma)")):
        p.add_argument(flag, type=bound(flag), default=None, help=f"bound on the {what}")
    add_prior_option(p)
    p.add_argument("--reference", choices=("record", "original-class"), default="record",
                   help="utility losses against each record's own value (default) or the "
                   "original distribution")
    p.add_argument("--objective", choices=("distribution", "entropy"), default="distribution",
                   help="which loss each problem minimizes (default distribution)")
    p.add_argument("--k", type=int, default=None, help="k-anonymity of the steered node")
    p.add_argument("--suppression-limit", type=float, default=0.0, metavar="S",
                   help="share of records the steered node may suppress (default 0)")
    p.add_argument("--metric", default="loss", help="information loss of the comparison "
                   "(default loss)")
    p.add_argument("--no-steer", action="store_true", help="solve only; evaluate no lattice")
    add_json_option(p, "the answers and the steered node")
    add_shared(p, backend=None)


def _line(name: str, sol) -> str:
    if sol.x is None:
        return f"{name}: {'infeasible' if sol.feasible is False else 'undetermined'}"
    x = ", ".join(f"{v}={p:.4f}" for v, p in zip(sol.labels, sol.x))
    gap = "exact" if sol.gap <= 1e-9 else f"gap <= {sol.gap:.2g}"
    return f"{name}: {sol.value:.6g} ({gap}) at x = [{x}]"


def run_tradeoff(args: argparse.Namespace) -> int:
    """Run ``tradeoff``; returns the exit status."""
    # deferred: keeps `gpuppdp --help` fast
    import numpy as np

    from ..hierarchy import Hierarchy
    from ..io import OutputPlan, read_table
    from ..models import KAnonymity
    from ..tradeoff import Solution, feasible_region, min_privacy_loss, min_utility_loss, steer

    names = qi_names(args)
    plan = OutputPlan([args.input, args.prior, *(p for _, p in args.qi)]).add(
        "--json", args.json, (".json",))
    hierarchies = {n: Hierarchy.from_csv(path, name=n, sep=args.hierarchy_sep)
                   for n, path in args.qi}
    data = read_table(args.input, sep=args.sep, encoding=args.encoding,
                      columns=list(dict.fromkeys(names + [args.sensitive])))
    sens = data[args.sensitive].astype(str)
    labels = sorted(sens.unique())
    table = sens.value_counts().reindex(labels).to_numpy() / len(data)
    prior = None if args.prior is None else read_prior(args.prior)
    a = table if prior is None else np.array([float(prior.get(v, 0.0)) for v in labels])
    kw = {"objective": args.objective, "reference": args.reference, "labels": labels}
    util = min_utility_loss(a, table, args.epsilon, args.alpha, **kw)
    priv = min_privacy_loss(a, table, args.delta, args.gamma, **kw)
    assert isinstance(util, Solution) and isinstance(priv, Solution)  # (one class: 1-D)
    region = feasible_region(a, table, args.epsilon, args.alpha, args.delta, args.gamma,
                             reference=args.reference)
    print(f"tradeoff: {args.sensitive} over {len(data)} records: "
          + ", ".join(f"{v}={p:.4f}" for v, p in zip(labels, table)))
    print(_line("least utility loss", util))
    print(_line("least privacy loss", priv))
    print("feasible region: " + {True: "not empty", False: "empty",
                                 None: "undetermined"}[region.feasible])
    summary = {"labels": labels, "table": [float(v) for v in table],
               "min_utility_loss": util.to_dict(), "min_privacy_loss": priv.to_dict(),
               "feasible_region": {k: v for k, v in region.to_dict().items()
                                   if k != "boundary"}}
    if not args.no_steer and util.x is not None:
        res = steer(data, hierarchies, args.sensitive, util,
                    models=[] if args.k is None else [KAnonymity(args.k)], metric=args.metric,
                    suppression_limit=args.suppression_limit, prior=prior,
                    backend=args.backend)
        summary["steer"] = res.to_dict()
        for who, row in (("steered node", res.steered), ("optimum", res.optimum)):
            if row is None:
                print(f"{who}: none (no node meets the models)")
                continue
            print(f"{who}: " + ", ".join(f"{q}={lv}" for q, lv in row["policy"].items())
                  + f" (distance to x {row['target_distance']:.4f}, information loss "
                  f"{row['information_loss']:.6g})")
    with plan.writing() as out:
        out.write_json("--json", summary)
    return 0


COMMAND = Command(
    "tradeoff", run_tradeoff, _options,
    table=True,
    help="the utility-privacy trade-off: the optimal published distribution and the node "
         "steered toward it",
    description="Solve the three optimizations of the utility-privacy trade-off over the "
                "published distribution of the sensitive attribute and find the lattice "
                "node whose classes publish distributions nearest to the answer.")
register = COMMAND.register
