"""The ``gpuppdp dp-histogram`` subcommand: a noisy contingency table from a CSV/Parquet file.

::

    gpuppdp dp-histogram INPUT --by COL[,COL] (--epsilon E [--delta D] | --rho R)
        [--level COL=LEVEL ...]
        [--hierarchy COL=FILE.csv ...] [--hierarchy-sep SEP] [--public-domain]
        [--unknown error|other|drop] [--identifying COL[,COL] ...]
        [--person COL [--max-rows-per-person M]]
        [--budget-file LEDGER [--budget EPS [--budget-delta D] --new-ledger]] [--sep SEP]
        [--seed N --insecure-seed]
        [--mechanism geometric|laplace|gaussian|discrete-gaussian] [--no-clamp]
        [--backend auto|cpu|gpu] [--json OUT.json] --output OUT.csv

A --by column needs a public domain: a --hierarchy, or --public-domain to declare that its set
of values (read from INPUT) is public; columns declared --identifying are refused.  Values
outside a hierarchy are refused after the charge (--unknown error), counted in an "(other)"
cell (--unknown other) or dropped (--unknown drop).  With --person each person keeps at most
--max-rows-per-person rows (a random choice) and epsilon is person-level.  With --budget-file
the release is charged to a hash-chained ledger shared by every run (started with --budget
EPS --new-ledger); the parameters and the budget are checked before the data is read, and the
spend is appended to the ledger (under a lock on the ledger itself, fsync-ed) before any noise
is drawn.  The Gaussian mechanisms (calibrated from --epsilon and --delta, or from --rho) are
charged to the ledger in zCDP (their rho), which needs a ledger with a delta budget
(--budget-delta).  --json writes the release's record (mechanism, sigma, rho, the (epsilon,
delta) of the release) and the ledger's entry and totals.  --seed makes the noise
reproducible, hence NOT private: it is refused without --insecure-seed, and recorded in the
summary and the ledger.

The main CLI calls :func:`register`; bad input raises ``ValueError`` / ``FileNotFoundError``
(one ``gpuppdp: error: ...`` line, exit status 2, printed by the main CLI).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from .choices import MECHANISMS
from .options import (Command, add_ledger_options, add_privacy_target_options, add_seed_options,
                      add_shared, check_ledger_options, encoding_of, epsilon_at, ledger_record,
                      open_ledger, print_budget, print_seed)
from .progress import compile_notice

RECOVERED = "the true counts"
"""What anyone with a release's ``--seed`` recovers exactly."""

__all__ = ["COMMAND", "register", "run_dp_histogram"]


def _options(p) -> None:
    """``dp-histogram``'s options (after INPUT, --sep and --encoding)."""
    p.add_argument("--by", required=True, metavar="COL[,COL]",
                   help="comma-separated grouping columns")
    add_grouping_options(p)
    p.add_argument("--private-keys", action="store_true",
                   help="keys read from INPUT (no public domain needed): only the keys whose "
                        "noisy count reaches a threshold tau are released, (epsilon, delta)-DP "
                        "with --delta the threshold's delta (--mechanism geometric with "
                        "--epsilon, or discrete-gaussian with --rho)")
    p.add_argument("--max-keys-per-person", type=int, default=None, metavar="K",
                   help="with --private-keys and --person: each person counts once in at most "
                        "K keys (default 1)")
    add_release_options(p, MECHANISMS, "geometric",
                        "integer two-sided geometric (default), grid Laplace, grid Gaussian or "
                        "integer discrete Gaussian noise (the Gaussians need --delta with "
                        "--epsilon, or --rho)")
    p.add_argument("--no-clamp", action="store_true",
                   help="keep negative noisy counts instead of clamping them at 0")
    p.add_argument("--output", required=True, metavar="OUT.csv",
                   help="where to write the table (CSV, or Parquet by suffix)")


def add_grouping_options(p) -> None:
    """--level, --hierarchy, --hierarchy-sep, --unknown, --public-domain, --identifying."""
    add_shared(
        p, level="generalization level of a column (needs --hierarchy); repeatable",
        hierarchy="ARX-style hierarchy file of a column (fixes its public domain); repeatable",
        hierarchy_sep="delimiter of the hierarchy files (default ;, as the other commands; "
                      "never guessed)",
        unknown="rows whose value is not in a --hierarchy (or is missing): refused after the "
                "release is charged (error, default), counted in an '(other)' cell that is "
                "always released (other), or dropped without saying how many (drop)",
        public_domain="declare public the sets of values of the --by columns without "
                      "--hierarchy (read from INPUT); without it such columns are refused")
    p.add_argument("--identifying", action="append", default=[], metavar="COL[,COL]",
                   help="columns that identify people (names, IDs): refused in --by; "
                        "repeatable")


def add_release_options(p, mechanisms, default: str, mechanism_help: str) -> None:
    """The privacy target (--epsilon, --delta, --rho), the ledger, --person, --seed,
    --mechanism, --backend and --json of a release."""
    add_privacy_target_options(
        p, epsilon="privacy parameter of the whole release (> 0); required unless --rho",
        delta="with --epsilon, the (epsilon, delta) target of --mechanism gaussian or "
              "discrete-gaussian (0 < D < 1); with --rho, the delta at which the release's "
              "epsilon is reported",
        rho="zCDP target of --mechanism gaussian or discrete-gaussian, instead of --epsilon")
    add_ledger_options(p)
    p.add_argument("--person", default=None, metavar="COL",
                   help="column naming the person each row belongs to: each person keeps at "
                        "most --max-rows-per-person rows (chosen at random) and epsilon is "
                        "person-level")
    p.add_argument("--max-rows-per-person", type=int, default=None, metavar="M",
                   help="contribution bound with --person (default 1): the sensitivity is M")
    add_seed_options(p, RECOVERED)
    p.add_argument("--mechanism", choices=mechanisms, default=default, help=mechanism_help)
    add_shared(p, backend="where counts and noise are computed (default: GPU when usable)",
               json="write the release's record and the ledger's charge as JSON")


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """``["COL=VALUE", ...]`` -> ``{COL: VALUE}``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    out = {}
    for item in items:
        col, eq, val = item.partition("=")
        if not eq or not col.strip() or not val.strip():
            raise InputError(f"{option} expects COL=VALUE, got {item!r}")
        out[col.strip()] = val.strip()
    return out


def _check_options(args) -> None:
    """Refusals that depend only on the command line: before the ledger or the data."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..dp.releases import GAUSSIAN_MECHANISMS  # deferred: start-up

    gaussian = args.mechanism in GAUSSIAN_MECHANISMS
    private = getattr(args, "private_keys", False)
    if getattr(args, "max_keys_per_person", None) is not None and not (private and args.person):
        raise InputError("--max-keys-per-person needs --private-keys and --person")
    if private and (args.delta is None or args.max_rows_per_person is not None):
        raise InputError("--private-keys needs --delta D (the threshold's delta) and bounds "
                         "persons with --max-keys-per-person, not --max-rows-per-person")
    if args.epsilon is None and args.rho is None:
        raise InputError("--epsilon is required (or --rho with --mechanism gaussian or "
                         "discrete-gaussian)")
    if not gaussian and not private and (args.delta is not None or args.rho is not None):
        raise InputError(f"--delta and --rho apply to --mechanism gaussian or "
                         f"discrete-gaussian, not {args.mechanism}")
    if gaussian and not private and args.rho is None and args.delta is None:
        raise InputError(f"--mechanism {args.mechanism} needs --delta D > 0 with --epsilon (or "
                         "--rho R instead)")
    if args.epsilon is not None and args.rho is not None:
        raise InputError("give --epsilon (with --delta) or --rho, not both")
    check_ledger_options(args, "the release", RECOVERED)
    if args.max_rows_per_person is not None and args.person is None:
        raise InputError("--max-rows-per-person needs --person")
    if args.max_rows_per_person is not None and args.max_rows_per_person < 1:
        raise InputError(f"--max-rows-per-person must be >= 1, got {args.max_rows_per_person}")


def levels_and_hierarchies(args) -> tuple[dict[str, int], dict[str, str]]:
    """``({column: level}, {column: hierarchy file})`` of --level and --hierarchy."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    levels = {}
    for col, text in _pairs(args.level, "--level").items():
        try:
            levels[col] = int(text)
        except ValueError:
            raise InputError(f"--level {col}={text}: the level must be an integer") from None
    return levels, _pairs(args.hierarchy, "--hierarchy")


def read_hierarchies(files: dict[str, str], sep: str) -> dict:
    """The hierarchies of :func:`levels_and_hierarchies`'s files, by column."""
    from ..hierarchy import Hierarchy  # deferred: keeps gpuppdp --help fast

    hierarchies = {}
    for col, path in files.items():
        if not os.path.isfile(path):
            raise FileNotFoundError(f"hierarchy file of {col!r} not found: {path}")
        hierarchies[col] = Hierarchy.from_csv(path, sep=sep, name=col)
    return hierarchies


def grouping(args, by: list[str], inputs: list[str]):
    """``(levels, hierarchies, plan)`` of the --by columns: --level and --hierarchy read and
    checked, --identifying and --person refused in --by, the output plan over ``inputs``
    and the hierarchy files."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..io import OutputPlan

    levels, hierarchy_files = levels_and_hierarchies(args)
    plan = OutputPlan([*inputs, *hierarchy_files.values()])
    hierarchies = read_hierarchies(hierarchy_files, args.hierarchy_sep)
    for col in list(levels) + list(hierarchies):
        if col not in by:
            raise InputError(f"--level/--hierarchy given for {col!r}, which is not in --by")
    identifying = {c.strip() for item in args.identifying for c in item.split(",") if c.strip()}
    for col in by:
        if col in identifying:
            raise InputError(f"column {col!r} is declared identifying (--identifying): a "
                             "table by it would publish who is in the data; drop it from --by")
    if args.person is not None and args.person in by:
        raise InputError(f"--person {args.person!r} cannot be in --by: a table by it would "
                         "publish who is in the data")
    return levels, hierarchies, plan


def open_budget(args, charge: dict, label: str):
    """The ledger of --budget-file (a context giving the accountant, or None), checked
    against ``charge`` once entered: an exhausted budget is refused before the data is
    read."""
    if args.budget_file is None:
        return contextlib.nullcontext()
    ledger = open_ledger(args)  # the note of a new ledger said now, before the data is read

    @contextlib.contextmanager
    def checked():
        with ledger as accountant:
            accountant.check(**charge, label=label)
            yield accountant

    return checked()


def warn_caught(caught) -> None:
    """The warnings of a release, one line each, in the main CLI's style."""
    for w in caught:
        print(f"gpuppdp: warning: {w.message}", file=sys.stderr)


def run_dp_histogram(args: argparse.Namespace) -> int:
    """Run ``dp-histogram``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..dp.keys import dp_key_counts, key_charge
    from ..dp.randomness import RandomSource  # deferred: start-up
    from ..dp.releases import (  # deferred: start-up
        DataDomainError,
        dp_histogram,
        histogram_charge,
    )
    from ..errors import InputError  # deferred: start-up
    from ..io import TABLE_SUFFIXES, read_table, table_delimiter  # deferred: start-up
    from ..kernels import dp_gaussian, dp_noise  # deferred: start-up
    from ..validation import format_values  # deferred: start-up

    by = [c.strip() for c in args.by.split(",") if c.strip()]
    if not by:
        raise InputError("--by needs at least one column name")
    levels, hierarchies, plan = grouping(args, by, [args.input])
    plan.add("--output", args.output, TABLE_SUFFIXES)
    _check_options(args)
    if args.private_keys:
        if levels or hierarchies or args.public_domain or args.unknown != "error":
            raise InputError("--private-keys reads the keys from INPUT: --level, --hierarchy, "
                             "--public-domain and --unknown do not apply")
        charge = key_charge(args.mechanism, epsilon=args.epsilon, rho=args.rho,
                            delta=args.delta, max_keys_per_person=args.max_keys_per_person or 1)
    else:
        charge = histogram_charge(args.mechanism, epsilon=args.epsilon, delta=args.delta,
                                  rho=args.rho,
                                  max_rows_per_person=args.max_rows_per_person or 1)
    if args.json is not None:
        plan.add("--json", args.json)
    label = f"dp_{'key_counts' if args.private_keys else 'histogram'} by {by}"
    with open_budget(args, charge, label) as accountant, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = RandomSource(args.backend, seed=args.seed, insecure=args.insecure_seed)
        data = read_table(args.input, columns=by + ([args.person] if args.person else []),
                          sep=args.sep, encoding=encoding_of(args))
        compile_notice(args, (dp_noise._noise_task,) + (
            (dp_gaussian._gaussian_task,) if args.mechanism in ("gaussian", "discrete-gaussian")
            else ()),
            seconds="about 10 s")
        # charged (appended to the ledger) before any noise is drawn
        if args.private_keys:
            table = dp_key_counts(data, by, delta=args.delta, epsilon=args.epsilon,
                                  rho=args.rho, mechanism=args.mechanism, person=args.person,
                                  max_keys_per_person=args.max_keys_per_person, random=source,
                                  accountant=accountant)
        else:
            try:
                table = dp_histogram(data, by, epsilon=args.epsilon, delta=args.delta,
                                     rho=args.rho, hierarchies=hierarchies, levels=levels,
                                     public_domain=args.public_domain, unknown=args.unknown,
                                     mechanism=args.mechanism, clamp=not args.no_clamp,
                                     random=source, accountant=accountant, person=args.person,
                                     max_rows_per_person=args.max_rows_per_person)
            except DataDomainError as exc:  # the library's hint names its keywords
                raise InputError(
                    f"column(s) {format_values(exc.columns)} have no public domain: their set "
                    "of values would be read from the data, which differential privacy does "
                    "not protect; give each a --hierarchy COL=FILE.csv, or declare the values "
                    "public with --public-domain") from None
    warn_caught(caught)
    with plan.writing() as out:
        out.write_table("--output", table, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary(args, table, accountant))
    _print_release(args, table, by, levels, hierarchies, accountant)
    return 0


def summary(args, table, accountant) -> dict:
    """The ``--json`` document: the release's record, and the ledger's entry and totals."""
    return {"release": table.attrs["dp"], "ledger": ledger_record(args, accountant)}


def _print_release(args, table, by: list, levels: dict, hierarchies: dict, accountant) -> None:
    """What ``dp-histogram`` released and spent, on stdout."""
    dp = table.attrs["dp"]
    q = dp["queries"]["count"]
    where = ", ".join(f"{c} (level {levels.get(c, 0)})" for c in by)
    if dp.get("tau") is not None:
        print(f"dp-histogram: {dp['cells']} keys of {', '.join(by)} (read from INPUT) with a "
              f"noisy count >= tau = {dp['tau']} written to {args.output}; the threshold's "
              f"delta {dp['threshold_delta']:.3g}, at most {dp['max_keys_per_person']} "
              "key(s) per person")
    else:
        print(f"dp-histogram: {dp['cells']} cells over {where} written to {args.output}")
    print(spent_line(dp, f", sensitivity {q['sensitivity']:g}" if dp["rho"] is None else
                     f", L2 sensitivity {q['sensitivity']:g}; support delta "
                     f"{q['delta_trunc']:.3g}"))
    print_budget(args, accountant)
    if dp["rho"] is None:
        print(f"noise: {q['mechanism']}, scale {q['scale']:.6g} (sensitivity/epsilon); "
              f"expected |error| per cell {q['expected_abs_error']:.4g}, std {q['std']:.4g}")
    else:
        print(f"noise: {q['mechanism']}, sigma {q['sigma']:.6g}; std per cell "
              f"<= {q['std']:.4g}")
    if dp["post_processing"]:
        print(f"post-processing: {', '.join(dp['post_processing'])}")
    if dp.get("clamping"):
        print(f"note: {dp['clamping']}")
    if args.person is not None:
        print(f"unit of privacy: {dp['unit']}; epsilon is person-level (rows beyond the bound "
              "dropped at random; how many is not released)")
    if any(h is not None for h in hierarchies.values()):
        print(f"values outside the hierarchies: {dp['out_of_domain']}")
    print_seed(dp["seed"])


def spent_line(dp: dict, detail: str = "") -> str:
    """The line of what a release spent: epsilon and delta, or rho (zCDP) and the (epsilon,
    delta) it meets; ``detail`` follows the neighbouring relation."""
    if dp["rho"] is None:
        return (f"epsilon spent: {dp['epsilon']:g} ({dp['neighbouring']} neighbours{detail}); "
                f"delta {dp['delta']:.3g}")
    return (f"rho spent (zCDP): {dp['rho']:.6g} ({dp['neighbouring']} neighbours{detail})"
            f"{epsilon_at(dp)}")


COMMAND = Command(
    "dp-histogram", run_dp_histogram, _options,
    table=True,
    help="release a differentially private contingency table (noisy counts)",
    description="Count the rows of INPUT per combination of the --by columns (optionally "
                "generalized with --hierarchy/--level), add noise for epsilon-differential "
                "privacy (add/remove-one neighbours) and write every cell to --output.")
register = COMMAND.register
