"""The ``gpuppdp dp-query`` subcommand: one bounded statistic of a CSV/Parquet file.

::

    gpuppdp dp-query INPUT --query count|sum|mean|variance|quantile:Q[,Q...]|median
        [--column COL --lower L --upper U] [--by COL[,COL] [--hierarchy ...] [--level ...]
        [--public-domain] [--unknown error|other|drop]] (--epsilon E [--delta D] | --rho R)
        [--mechanism laplace|gaussian] [--confidence C]
        [--person COL [--max-rows-per-person M]]
        [--budget-file LEDGER [--budget EPS [--budget-delta D] --new-ledger]]
        [--seed N --insecure-seed] [--backend auto|cpu|gpu] [--json OUT.json] [--output OUT.csv]

count, sum, mean and variance are :func:`gpuppdp.dp.queries.dp_query` (each with its
confidence interval; --by releases every cell of the columns' public domains, as
dp-histogram); quantile and median are :func:`gpuppdp.dp.quantiles.dp_quantile` (pure ε, no
--by).  The ledger, --person and --seed work as in ``dp-histogram``.
"""

from __future__ import annotations

import argparse
import warnings

from .choices import QUERY_MECHANISMS
from .dp import (_check_options, add_grouping_options, add_release_options, grouping,
                 open_budget, spent_line, summary, warn_caught)
from .options import Command, add_values, encoding_of, print_budget, print_seed
from .progress import compile_notice

__all__ = ["COMMAND", "register", "run_dp_query"]


def _options(p) -> None:
    """``dp-query``'s options (after INPUT, --sep and --encoding)."""
    p.add_argument("--query", required=True, metavar="QUERY",
                   help="count, sum, mean, variance, median or quantile:Q[,Q...] (levels in "
                        "[0, 1]; several split epsilon equally)")
    p.add_argument("--column", default=None, metavar="COL",
                   help="the numeric column (all queries but count)")
    add_values(p, ("--lower", "L", "declared lower bound of --column (values below are clamped)"),
               ("--upper", "U", "declared upper bound of --column (values above are clamped)"),
               type=float)
    p.add_argument("--by", default=None, metavar="COL[,COL]",
                   help="comma-separated grouping columns with public domains (count, sum, "
                        "mean, variance)")
    add_grouping_options(p)
    p.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="level of the confidence intervals (default 0.95)")
    add_release_options(p, QUERY_MECHANISMS, "laplace",
                        "discrete Laplace (default) or discrete Gaussian noise, on the "
                        "integers for counts and on a 2**-k grid for sums (gaussian needs "
                        "--delta with --epsilon, or --rho)")
    p.add_argument("--output", default=None, metavar="OUT.csv",
                   help="also write the answer as a table (CSV, or Parquet by suffix)")


def _parse_query(text: str) -> tuple[str, list[float] | None]:
    """``(statistic, quantile levels)`` of --query."""
    from ..errors import InputError  # deferred: start-up
    from ..dp.queries import QUERIES  # deferred: start-up

    name, _, levels = text.strip().partition(":")
    if name == "median" and not levels:
        return "quantile", [0.5]
    if name == "quantile" and levels:
        try:
            return "quantile", [float(v) for v in levels.split(",")]
        except ValueError:
            raise InputError(f"--query quantile:Q expects numbers, got {text!r}") from None
    if name in QUERIES and not levels:
        return name, None
    raise InputError(f"--query must be count, sum, mean, variance, median or quantile:Q, "
                     f"got {text!r}")


def run_dp_query(args: argparse.Namespace) -> int:
    """Run ``dp-query``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..dp.quantiles import dp_quantile
    from ..dp.queries import dp_query, query_charge
    from ..dp.randomness import RandomSource
    from ..errors import InputError
    from ..io import TABLE_SUFFIXES, read_table, table_delimiter
    from ..kernels import dp_gaussian, dp_noise

    statistic, levels_q = _parse_query(args.query)
    by = [] if args.by is None else [c.strip() for c in args.by.split(",") if c.strip()]
    levels, hierarchies, plan = grouping(args, by, [args.input])
    if args.output is not None:
        plan.add("--output", args.output, TABLE_SUFFIXES)
    _check_options(args)
    if statistic != "count" and (args.column is None or args.lower is None
                                 or args.upper is None):
        raise InputError(f"--query {args.query} needs --column, --lower and --upper")
    if statistic == "count" and args.column is not None:
        raise InputError("--query count takes no --column (it counts rows)")
    if statistic == "quantile":
        if by or args.mechanism != "laplace":
            raise InputError("a quantile takes neither --by nor --mechanism (the exponential "
                             "mechanism, pure epsilon)")
        charge = {"epsilon": args.epsilon, "delta": 0.0}
    else:
        bounds = {} if statistic == "count" else {"lower": args.lower, "upper": args.upper}
        charge = query_charge(statistic, **bounds, mechanism=args.mechanism,
                              epsilon=args.epsilon, delta=args.delta, rho=args.rho,
                              max_rows_per_person=args.max_rows_per_person or 1)
    if args.json is not None:
        plan.add("--json", args.json)
    label = f"dp_query {args.query}"
    columns = sorted(set(by) | {c for c in (args.column, args.person) if c is not None})
    with open_budget(args, charge, label) as accountant, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = RandomSource(args.backend, seed=args.seed, insecure=args.insecure_seed)
        data = read_table(args.input, columns=columns or None, sep=args.sep,
                          encoding=encoding_of(args))
        compile_notice(args, (dp_noise._noise_task,) + (
            (dp_gaussian._gaussian_task,) if args.mechanism == "gaussian" else ()),
            seconds="about 10 s")
        common = {"random": source, "accountant": accountant, "person": args.person,
                  "max_rows_per_person": args.max_rows_per_person,
                  "confidence": args.confidence}
        if statistic == "quantile":
            table = dp_quantile(data, args.column, list(levels_q or ()), lower=args.lower,
                                upper=args.upper, epsilon=args.epsilon,
                                unknown="drop" if args.unknown == "drop" else "error",
                                **common)
        else:
            table = dp_query(data, statistic, args.column, **bounds, by=by or None,
                             epsilon=args.epsilon, delta=args.delta, rho=args.rho,
                             mechanism=args.mechanism, hierarchies=hierarchies,
                             levels=levels, public_domain=args.public_domain,
                             unknown=args.unknown, **common)
    warn_caught(caught)
    with plan.writing() as out:
        if args.output is not None:
            out.write_table("--output", table, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary(args, table, accountant))
    _print_answer(args, table, accountant)
    return 0


def _print_answer(args, table, accountant) -> None:
    """The answer, its accuracy and what was spent, on stdout."""
    dp = table.attrs["dp"]
    print(table.to_string(index=False))
    print(spent_line(dp))
    conf = dp["confidence"]
    if dp["statistic"] == "quantile":
        for name, q in dp["queries"].items():
            print(f"{name}: with probability {conf['level']:g} at most "
                  f"{q['rank_error']:.4g} values more or fewer than q*n below the value "
                  f"(plus the grid's best; grid step {q['granularity']:g})")
    else:
        print(f"interval: {conf['level']:g} confidence, {conf['method']}; it covers "
              f"{conf['covers']}")
    print_budget(args, accountant)
    if args.person is not None:
        print(f"unit of privacy: {dp['unit']}; epsilon is person-level")
    print_seed(dp["seed"])


COMMAND = Command(
    "dp-query", run_dp_query, _options,
    table=True,
    help="release one differentially private statistic (count, sum, mean, variance, "
         "quantile) with its accuracy",
    description="Answer --query on INPUT (or per cell of --by) with values clamped to "
                "[--lower, --upper], add noise for differential privacy and print the "
                "answer with its confidence interval (or a quantile's rank error).")
register = COMMAND.register
