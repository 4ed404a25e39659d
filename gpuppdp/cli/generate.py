"""``gpuppdp generate census``: a synthetic census table of any size, written to a folder as
``census.parquet`` (streamed one row group at a time) and the ARX hierarchies
``census_hierarchy_<column>.csv``, the same for the same seed (see :mod:`gpuppdp.census`)."""

from __future__ import annotations

import os
import time
from decimal import Decimal, InvalidOperation

from .choices import CENSUS_ROW_GROUP_ROWS
from .options import subcommand_group

__all__ = ["register", "cmd_generate_census", "whole_number"]

_MAX_ROWS = 10 ** 12


def whole_number(option: str, text: str, minimum: int = 1, maximum: int = 2 ** 63 - 1) -> int:
    """``text`` as an int in ``[minimum, maximum]``: ``1000000``, ``1_000_000`` and ``1e6``
    are accepted; anything else raises an ``InputError`` naming ``option``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    what = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or value != value.to_integral_value() \
            or value < minimum:
        raise InputError(f"{option} expects {what}, got {text!r}")
    if value > maximum:
        raise InputError(f"{option} is too large: {text} (at most {maximum:,})")
    return int(value)


def cmd_generate_census(args) -> int:
    """Run ``generate census``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from .. import census

    rows = whole_number("--rows", args.rows, maximum=_MAX_ROWS)
    seed = whole_number("--seed", args.seed, 0)
    row_group_rows = whole_number("--row-group-rows", args.row_group_rows, maximum=_MAX_ROWS)
    plan = census.census_plan(args.output)  # the folder created, every output checked
    t0 = time.perf_counter()
    files = census.write_census(args.output, rows, seed, row_group_rows=row_group_rows,
                                plan=plan)
    seconds = time.perf_counter() - t0
    print(f"census table       {files.table} ({rows} rows in {files.row_groups} row "
          f"group{'s' if files.row_groups > 1 else ''}, seed {seed})")
    print(f"hierarchies        {os.path.join(args.output, census.hierarchy_file('<column>'))} "
          f"for {', '.join(files.hierarchies)}")
    print(f"time               {seconds:.2f} s ({rows / seconds:,.0f} rows/s)")
    return 0


def register(subparsers) -> None:
    """Add the ``generate`` subcommand (``generate census``) to an ``argparse`` subparsers
    object."""
    kinds = subcommand_group(
        subparsers, "generate", "dataset", help="write a synthetic data set and its hierarchies",
        description="Write a synthetic data set and the ARX hierarchies of its "
                    "quasi-identifiers.")
    p = kinds.add_parser(
        "census", help="US-census-like people, any number of rows (Parquet)",
        description="Write DIR/census.parquet: ROWS synthetic people with US-census-like "
                    "marginals (person_id, zip, age, sex, race, hispanic, marital, education, "
                    "citizenship, occupation, income), generated and written one row group at "
                    "a time (memory independent of ROWS), the same table for the same seed; "
                    "and DIR/census_hierarchy_<column>.csv, the ARX hierarchy of each "
                    "quasi-identifier.")
    p.add_argument("--rows", required=True, metavar="ROWS",
                   help="number of rows, e.g. 1000000 or 1e6")
    p.add_argument("--seed", default="0", metavar="S",
                   help="whole number >= 0 (default 0); the first rows of a larger table are "
                        "the smaller table of the same seed")
    p.add_argument("--output", required=True, metavar="DIR",
                   help="folder of the files (created if missing); existing files are replaced")
    p.add_argument("--row-group-rows", default=str(CENSUS_ROW_GROUP_ROWS), metavar="N",
                   help="rows per Parquet row group (default %(default)s)")
    p.set_defaults(func=cmd_generate_census)
