"""``gpuppdp hierarchy build``: a generalization hierarchy of one column of a table, built by
:mod:`gpuppdp.builders` (nested intervals, masked codes, calendar levels or ordered groups) and
written as an ARX hierarchy file (``leaf;level1;...;top``, no header) that ``anonymize --qi
COL=H.csv`` reads.

Registering imports only the standard library; the run loads the library."""

from __future__ import annotations

import csv
from fractions import Fraction

from .options import add_encoding_option, subcommand_group

__all__ = ["register", "cmd_hierarchy_build"]

KINDS = ("--intervals", "--mask", "--dates", "--groups")


def _builder_input(args) -> tuple[str, object]:
    """The one hierarchy kind of the command line: (option, its value)."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    given = [(option, value) for option, value in (
        ("--intervals", args.intervals), ("--mask", args.mask or None),
        ("--dates", args.dates), ("--groups", args.groups)) if value is not None]
    if len(given) != 1:
        named = " and ".join(option for option, _ in given)
        raise InputError(f"give one of {', '.join(KINDS)} (the kind of hierarchy)"
                         + (f"; got {named}" if given else ""))
    option = given[0][0]
    if args.mask_direction is not None and option != "--mask":
        raise InputError("--mask-direction is an option of --mask")
    if args.top is not None and option == "--mask":
        raise InputError("--top is not an option of --mask (its top level masks every "
                         "character)")
    return given[0]


def _widths(text: str) -> list[int | Fraction]:
    """``--intervals W1,W2,...`` -> the widths (the builder checks them)."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    widths = [w.strip() for w in text.split(",")]
    if not all(widths):
        raise InputError(f"--intervals expects widths W1,W2,... (finest first, e.g. 5,10,20), "
                         f"got {text!r}")
    try:  # whole numbers as ints, so that the builder's messages show them as given
        return [int(f) if f.denominator == 1 else f for f in map(Fraction, widths)]
    except ValueError:
        raise InputError(f"--intervals expects numbers W1,W2,... (e.g. 5,10,20), got "
                         f"{text!r}") from None


def _group_rows(path: str, encoding: str) -> list[list[str]]:
    """The rows ``value;group1;group2;...`` of a --groups file (a byte-order mark ignored,
    blank lines skipped)."""
    # deferred: keeps gpuppdp --help fast
    from ..errors import InputError
    from ..io import input_file

    path = input_file(path, "--groups file")
    try:
        with open(path, newline="", encoding=encoding) as fh:
            if fh.read(1) != "\ufeff":
                fh.seek(0)
            rows = [r for r in csv.reader(fh, delimiter=";") if r and any(c.strip() for c in r)]
    except UnicodeDecodeError as exc:
        raise InputError(f"--groups file {path} is not {encoding} text ({exc.reason} at byte "
                         f"{exc.start}); pass its encoding (--encoding)") from None
    if not rows:
        raise InputError(f"--groups file {path} is empty: it needs one line value;group1;... "
                         "per value")
    return rows


def _build(args, option: str, value, values: list):
    """The hierarchy of ``values`` (the column's) of the kind ``option``."""
    # deferred: keeps gpuppdp --help fast
    from ..builders import (date_hierarchy, interval_hierarchy, levels_hierarchy,
                            masking_hierarchy)
    from ..errors import InputError
    from ..validation import format_values

    top = {} if args.top is None else {"top": args.top}
    if option == "--intervals":
        return interval_hierarchy(values, _widths(value), name=args.column, **top)
    if option == "--mask":
        return masking_hierarchy(values, direction=args.mask_direction or "right",
                                 name=args.column)
    if option == "--dates":
        levels = [g.strip() for g in value.split(",")]
        return date_hierarchy(values, levels=levels, format=args.date_format,
                              name=args.column, **top)
    hierarchy = levels_hierarchy(_group_rows(value, args.encoding), name=args.column, **top)
    known = set(hierarchy.leaves.tolist())
    missing = list(dict.fromkeys(str(v) for v in values if str(v) not in known))
    if missing:
        raise InputError(f"--groups {value}: {len(missing)} value(s) of {args.column} have no "
                         f"line: {format_values(missing)}; add a line value;group1;... for "
                         "each")
    return hierarchy


def cmd_hierarchy_build(args) -> int:
    """Run ``hierarchy build``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help fast
    from ..errors import InputError
    from ..io import OutputPlan, read_table

    option, value = _builder_input(args)
    if len(args.output_sep) != 1:
        raise InputError(f"--output-sep expects one character, got {args.output_sep!r}")
    plan = OutputPlan([args.input] + ([args.groups] if args.groups else [])).add(
        "--output", args.output)
    table = read_table(args.input, sep=args.sep, encoding=args.encoding)
    if args.column not in table.columns:
        raise InputError(f"--column {args.column}: {args.input} has no such column (its "
                         f"columns: {', '.join(map(str, table.columns))})")
    column = table[args.column]
    if column.isna().any():
        raise InputError(f"--column {args.column} has {int(column.isna().sum())} missing "
                         "value(s); a hierarchy's leaves are values (fill them first)")
    hierarchy = _build(args, option, value, column.tolist())
    with plan.writing() as out:
        hierarchy.to_csv(out.path("--output"), sep=args.output_sep)
    print(f"hierarchy of {args.column}: {len(hierarchy.leaves)} leaves, height "
          f"{hierarchy.height}, written to {plan.path('--output')}")
    return 0


#: the kinds given by a value: (flag, metavar, help)
_KIND_OPTIONS = (
    ("--intervals", "W1,W2,...", "numbers in nested intervals [a, a+W), one width per level, "
     "finest first, each a multiple of the one before (e.g. 5,10,20); then --top"),
    ("--dates", "LEVELS", "dates along the calendar, the levels finest first among day, month, "
     "quarter, year, decade, century (e.g. month,year,decade); then --top"),
    ("--date-format", "FMT", "--dates: strftime format of the dates (e.g. %%d/%%m/%%Y; default "
     "inferred)"),
    ("--groups", "GROUPS.csv", "ordered groups: a file of lines value;group1;group2;... (no "
     "header, ';'), one per value, every line the same number of groups; --top is added unless "
     "the last group is one value"),
)


def register(subparsers) -> None:
    """Add ``hierarchy build`` to an ``argparse`` subparsers object."""
    sub = subcommand_group(
        subparsers, "hierarchy", "action",
        help="build a generalization hierarchy (ARX CSV) from a column")
    p = sub.add_parser(
        "build", help="intervals, masking, dates or ordered groups -> an ARX hierarchy file",
        description="Build the hierarchy of one column of INPUT and write it as an ARX "
        "hierarchy file (one line per value: value;level1;...;top, no header) for "
        "anonymize --qi COLUMN=H.csv.  Give one kind: --intervals, --mask, --dates or "
        "--groups.")
    p.add_argument("input", help="CSV (delimiter detected, or --sep) or Parquet file")
    p.add_argument("--column", required=True, metavar="COL",
                   help="the column whose values are the hierarchy's leaves")
    kind = p.add_argument_group("kind of hierarchy (one)")
    kind.add_argument("--mask", action="store_true",
                      help="codes of one length (ZIP codes) masked one more character per "
                      "level: 47677, 4767*, ..., *****")
    kind.add_argument("--mask-direction", choices=("right", "left"), default=None,
                      help="--mask from the end (right, default: 4767*) or the start (*7677)")
    for flag, metavar, text in _KIND_OPTIONS:
        kind.add_argument(flag, default=None, metavar=metavar, help=text)
    p.add_argument("--output", required=True, metavar="H.csv",
                   help="the hierarchy file written (ARX format)")
    p.add_argument("--top", default=None, metavar="T",
                   help="label of the top level (default *)")
    p.add_argument("--sep", default=None, help="CSV delimiter of INPUT (default: detected)")
    p.add_argument("--output-sep", default=";", metavar="C",
                   help="delimiter of the hierarchy file (default ;, as ARX and anonymize "
                   "--hierarchy-sep)")
    add_encoding_option(p, "INPUT and --groups")
    p.set_defaults(func=cmd_hierarchy_build)
