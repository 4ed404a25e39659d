"""``gpuppdp negotiate``: the UBNB-PPDD negotiation between a data owner and a data user
(:class:`gpuppdp.algorithms.negotiation.Negotiation`).

::

    gpuppdp negotiate INPUT --qi COL=H.csv [--qi ...] --sensitive COL
        --privacy-loss EPS,ALPHA [--basis class|total] [--prior PRIOR.csv]
        [--delta D] [--gamma G]
        [--utility-basis class|total] --pattern "age,sex,race;zip;occupation" [--pattern ...]
        --objective flat|variable [--profit linear:MAX,SLOPE] [--others lowest|top|free]
        [--other-columns error|drop]
        [--accept-counter] --json DEAL.json [--output OUT.csv] [--seed N]

Each ``--pattern`` is one offer of the data user, in order (layers separated by ``;``,
attributes by ``,``, the most important layer first).  The scripted user accepts the owner's
proposal of a policy that matches an offer; when none matches the owner makes a counter-offer,
which the user accepts with ``--accept-counter`` and otherwise rejects, going on with the next
pattern.  After the last pattern without a deal the user terminates.  ``--json`` gets the
settings, every round and the deal; ``--output`` the released table of the deal (the QID
columns and the sensitive column, rows shuffled by ``--seed``).  Outputs are
written together at the end (:class:`gpuppdp.io.OutputPlan`).  ``--delta`` bounds the
distribution utility loss and ``--gamma`` the entropy utility loss, as the thesis names them;
the former ``--utility-loss GAMMA,DELTA`` (distribution, entropy) is accepted with a warning on
stderr for one release.  Exit status 0 with a deal, 1
without one (the JSON is written either way; ``--output`` only with a deal).
"""

from __future__ import annotations

import argparse
import sys

from .common import _numbers
from .options import (SEED_HELP, Command, add_hierarchy_qi_options, add_json_option,
                      add_prior_option, add_shared, bound, qi_names, read_prior, unassigned_error)

__all__ = ["COMMAND", "register", "run_negotiate", "BASES", "OBJECTIVES", "OTHERS"]

# the library's own (gpuppdp.algorithms.negotiation), spelled out so that --help loads no NumPy
BASES = ("class", "total")
OBJECTIVES = ("flat", "variable")
OTHERS = ("lowest", "top", "free")


def _pair(option: str, names: str):
    """Parser of ``A,B``: two finite numbers >= 0 (no ``@COLUMN``)."""
    numbers = _numbers(option, names, 2)

    def parse(text: str) -> tuple[float, float]:
        a, b, column = numbers(text)
        if column is not None or not (0 <= a < float("inf") and 0 <= b < float("inf")):
            raise argparse.ArgumentTypeError(f"{option}: {names} must be finite numbers >= 0, "
                                             f"got {text!r}")
        return a, b

    return parse


def _options(p) -> None:
    """``negotiate``'s options (after INPUT, --sep and --encoding)."""
    add_hierarchy_qi_options(p)
    p.add_argument("--privacy-loss", required=True, metavar="EPS,ALPHA",
                   type=_pair("--privacy-loss", "EPS,ALPHA"),
                   help="the owner's privacy constraint: distribution and entropy (bits) "
                   "privacy-loss bounds")
    add_prior_option(p)
    p.add_argument("--basis", choices=BASES, default="class",
                   help="privacy constraint on every class (default) or on the release's "
                   "mean over records")
    p.add_argument("--delta", type=bound("--delta"), default=None, metavar="D",
                   help="the owner's utility threshold on the distribution utility loss (the "
                   "thesis's delta)")
    p.add_argument("--gamma", type=bound("--gamma"), default=None, metavar="G",
                   help="the owner's utility threshold on the entropy utility loss, bits (the "
                   "thesis's gamma)")
    p.add_argument("--utility-loss", default=None, metavar="DIST,ENT",
                   type=_pair("--utility-loss", "DIST,ENT"),
                   help="deprecated: the distribution and entropy utility-loss bounds; use "
                   "--delta DIST --gamma ENT")
    p.add_argument("--utility-basis", choices=BASES, default=None,
                   help="basis of the utility threshold and of the profit's loss (default: "
                   "--basis)")
    p.add_argument("--pattern", action="append", required=True, metavar="A,B;C;D",
                   help="one offer of the data user: layers of attributes separated by ';', "
                   "most important first (repeatable: the offers in order)")
    p.add_argument("--objective", choices=OBJECTIVES, required=True,
                   help="flat rate (any matching policy; the owner gives the most private) or "
                   "variable rate (the matching policy of greatest profit)")
    p.add_argument("--profit", default=None, metavar="linear:MAX,SLOPE",
                   help="the owner's profit as a function of the utility loss: MAX - SLOPE * "
                   "loss (needed by --objective variable)")
    p.add_argument("--others", choices=OTHERS, default="lowest",
                   help="QIDs outside a pattern: an implicit lowest layer (default), fully "
                   "generalized, or unconstrained")
    p.add_argument("--other-columns", choices=("error", "drop"), default="error",
                   help="columns of INPUT that are neither a --qi nor --sensitive: error "
                   "(default: they are listed) or drop (left out of the release; --others is "
                   "the QIDs outside a pattern)")
    p.add_argument("--max-moves", type=int, default=4, metavar="N",
                   help="most promotions/demotions of a counter-offer pattern (default 4)")
    p.add_argument("--accept-counter", action="store_true",
                   help="the user accepts the owner's counter-offers (default: rejects them "
                   "and goes on with the next --pattern)")
    add_json_option(p, "the settings, rounds and deal", "DEAL.json", required=True)
    p.add_argument("--output", default=None, metavar="OUT.csv",
                   help="write the released table of the deal (CSV or Parquet by the ending)")
    add_shared(p, seed=SEED_HELP, backend=None)


def run_negotiate(args: argparse.Namespace) -> int:
    """Run ``negotiate``; returns the exit status (0: a deal, 1: no deal)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..algorithms import Negotiation
    from ..algorithms.negotiation import parse_pattern
    from ..errors import InputError
    from ..hierarchy import Hierarchy
    from ..io import TABLE_SUFFIXES, OutputPlan, read_table, table_columns, table_delimiter

    names = qi_names(args)
    if args.objective == "variable" and args.profit is None:
        raise InputError("--objective variable needs --profit linear:MAX,SLOPE")
    patterns = [parse_pattern(text) for text in args.pattern]
    inputs = [args.input, args.prior, *(path for _, path in args.qi)]
    plan = (OutputPlan(inputs).add("--json", args.json, (".json",))
            .add("--output", args.output, TABLE_SUFFIXES))
    hierarchies = {n: Hierarchy.from_csv(path, name=n, sep=args.hierarchy_sep)
                   for n, path in args.qi}
    unassigned_error([c for c in table_columns(args.input, sep=args.sep, encoding=args.encoding)
                      if c not in names and c != args.sensitive], args.other_columns,
                     "--other-columns", "drop")
    eps, alpha = args.privacy_loss
    delta, gamma = args.delta, args.gamma
    if args.utility_loss is not None:
        if delta is not None or gamma is not None:
            raise InputError("give --delta/--gamma or the deprecated --utility-loss, not both")
        delta, gamma = args.utility_loss
        print("gpuppdp negotiate: warning: --utility-loss GAMMA,DELTA is deprecated: the "
              "thesis's delta bounds the distribution utility loss and gamma the entropy one; "
              f"use --delta {delta:g} --gamma {gamma:g}", file=sys.stderr)
    neg = Negotiation(hierarchies, args.sensitive, epsilon=eps, alpha=alpha,
                      delta_distribution=delta, gamma_entropy=gamma, basis=args.basis,
                      utility_basis=args.utility_basis,
                      objective=args.objective, profit=args.profit, others=args.others,
                      max_moves=args.max_moves,
                      prior=None if args.prior is None else read_prior(args.prior),
                      backend=args.backend)
    neg.fit(read_table(args.input, sep=args.sep, encoding=args.encoding,
                       columns=list(dict.fromkeys(names + [args.sensitive]))))
    _play(neg, patterns, accept_counter=args.accept_counter)
    summary = neg.summary()
    released = None
    if neg.deal is not None:
        deal = neg.deal
        print(f"negotiate: deal after {len(neg.log)} rounds ({deal['via']}): "
              + ", ".join(f"{q}={lv}" for q, lv in deal["policy"].items()))
        if args.output is not None:
            released = neg.release(seed=args.seed).data
    else:
        print(f"negotiate: no deal after {len(neg.log)} rounds "
              f"({summary['policies_in_G']} of {summary['lattice_size']} policies meet the "
              "privacy constraint)" + ("; no table written to --output" if args.output else ""))
        plan = OutputPlan(inputs).add("--json", args.json, (".json",))
    with plan.writing() as out:
        out.write_json("--json", summary)
        if released is not None:
            out.write_table("--output", released, sep=table_delimiter(args.input, args.sep))
    return 0 if neg.deal is not None else 1


def _play(neg, patterns, *, accept_counter: bool) -> None:
    """The scripted data user: each pattern offered in turn; a proposal accepted, a
    counter-offer accepted with ``accept_counter`` (else rejected); terminated when the
    patterns run out."""
    for pattern in patterns:
        answer = neg.offer(pattern)
        if answer["action"] == "proposal":
            neg.accept()
            break
        counter = neg.counter()
        if counter is None:
            break
        if accept_counter:
            neg.accept()
            break
        neg.reject()
    if neg.status == "open":
        neg.terminate()


COMMAND = Command(
    "negotiate", run_negotiate, _options,
    table=True,
    help="negotiate a generalization policy between data owner and user (UBNB-PPDD)",
    description="Evaluate every generalization policy (lattice node) of INPUT, keep those "
                "meeting the (epsilon, alpha) privacy-loss constraint, and play the data "
                "user's --pattern offers against the owner's flat- or variable-rate "
                "protocol; write the rounds and the deal.")
register = COMMAND.register
