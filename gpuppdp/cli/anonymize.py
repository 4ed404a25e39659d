"""``gpuppdp demo`` and ``gpuppdp anonymize``: optimal generalization of a table, the release
written to --output and the summary to --json (both or neither, see
:class:`gpuppdp.io.OutputPlan`).  ``demo`` runs on the bundled Adult extract, or with
``--census ROWS`` on a generated census of that many rows (:mod:`gpuppdp.census`)."""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING

from .common import (add_anonymization_options, add_chunk_option, add_run_options,
                     anonymizer_from_args, chunk_rows_for, format_summary, print_release,
                     release_plan, run_summary, search_progress)
from .generate import whole_number

if TYPE_CHECKING:  # registering imports only the standard library; the runs load the library
    from ..anonymizer import AnonymizationResult
    from ..io import OutputPlan

__all__ = ["register", "cmd_demo", "cmd_anonymize"]


def _publish(result: AnonymizationResult, plan: OutputPlan, args, sep: str = ";") -> None:
    print(format_summary(result))
    with plan.writing() as out:
        out.write_table("--output", result.released, sep=sep)
        out.write_json("--json", run_summary(result, args, plan))
    print_release(result, plan)
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")


def cmd_demo(args) -> int:
    from .. import datasets
    from ..anonymizer import Anonymizer

    if args.census is not None:
        return _census_demo(args)
    if args.census_seed is not None:
        raise ValueError("--census-seed needs --census ROWS")
    args.output = args.output or "adult_k5.released.csv"
    bundled = [datasets.adult_path()] + [datasets.adult_path(f"adult_hierarchy_{c}.csv")
                                         for c in datasets.ADULT_QUASI_IDENTIFIERS]
    plan = release_plan(args, bundled).add("--json", args.json)
    data, hierarchies = datasets.adult()
    print(f"Adult extract: {len(data)} rows, quasi-identifiers {', '.join(data.columns)}; "
          "k=5, suppression limit 5 %, loss metric")
    anonymizer = Anonymizer(quasi_identifiers=hierarchies, k=5, suppression_limit=0.05,
                            metric="loss", search=args.search, backend=args.backend,
                            seed=args.seed, time_limit=args.time_limit, prefer=args.prefer)
    _publish(anonymizer.fit(data, progress=search_progress(args)), plan, args)
    return 0


def _census_demo(args) -> int:
    """The demo's job on a generated census: QIDs zip, age, sex, race, marital, education;
    person_id removed, the other columns kept (insensitive)."""
    from .. import datasets
    from ..anonymizer import Anonymizer
    from ..census import DEMO_QUASI_IDENTIFIERS

    rows = whole_number("--census", args.census, maximum=10 ** 12)
    seed = whole_number("--census-seed", args.census_seed or "0", 0)
    args.output = args.output or "census_k5.released.csv"
    plan = release_plan(args, []).add("--json", args.json)
    t0 = time.perf_counter()
    data, hierarchies = datasets.census(rows, seed)
    print(f"Census: {rows} rows (seed {seed}, generated in {time.perf_counter() - t0:.2f} s), "
          f"quasi-identifiers {', '.join(DEMO_QUASI_IDENTIFIERS)}; k=5, suppression limit 5 %, "
          "loss metric")
    others = [c for c in data.columns if c not in DEMO_QUASI_IDENTIFIERS and c != "person_id"]
    anonymizer = Anonymizer(quasi_identifiers={c: hierarchies[c] for c in DEMO_QUASI_IDENTIFIERS},
                            identifying=["person_id"], insensitive=others, k=5,
                            suppression_limit=0.05, metric="loss", search=args.search,
                            backend=args.backend, seed=args.seed, time_limit=args.time_limit,
                            prefer=args.prefer)
    _publish(anonymizer.fit(data, progress=search_progress(args)), plan, args)
    return 0


def _dask_anonymize(args) -> int:
    """``anonymize --dask``: encoded and released on a Dask cluster (:mod:`gpuppdp.cluster`);
    a Parquet release is a dataset folder, a CSV release one file."""
    from ..cluster import client_for, read_dask, write_release
    from ..io import TABLE_SUFFIXES, OutputError, OutputPlan, table_delimiter

    inputs = [args.input, *(path for _, path in args.qi)]
    if not os.path.isdir(args.output):
        OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES)  # the checks only
    elif not all(name.endswith(".parquet") for name in os.listdir(args.output)):
        raise OutputError(f"--output {args.output} is a folder that does not hold a Parquet "
                          "dataset; refusing to replace it")
    plan = OutputPlan(inputs).add("--json", args.json)
    _, anonymizer = anonymizer_from_args(args, read=False)
    with client_for(args.dask):
        result = anonymizer.fit(read_dask(args.input, sep=args.sep),
                                progress=search_progress(args))
        print(format_summary(result))
        with plan.writing() as out:
            write_release(result.release, args.output, sep=table_delimiter(args.input, args.sep))
            out.write_json("--json", run_summary(result, args, plan))
    print(f"released table     {args.output} ({result.release.rows_in_release} rows, "
          "written by the Dask workers)")
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")
    return 0


def cmd_anonymize(args) -> int:
    from ..io import table_delimiter

    if args.dask:
        return _dask_anonymize(args)
    plan = release_plan(args).add("--json", args.json)
    t0 = time.perf_counter()
    chunk_rows = chunk_rows_for(args)
    data, anonymizer = anonymizer_from_args(args, read=chunk_rows is None)
    if chunk_rows is None:
        logging.getLogger("gpuppdp").debug("loaded in %.3f s", time.perf_counter() - t0)
        _publish(anonymizer.fit(data, progress=search_progress(args)), plan, args,
                 table_delimiter(args.input, args.sep))
        return 0
    with plan.writing() as out:  # the release streams to its temporary file
        result = anonymizer.fit_file(args.input, out.path("--output"), sep=args.sep,
                                     chunk_rows=chunk_rows, progress=search_progress(args))
        print(format_summary(result))
        out.write_json("--json", run_summary(result, args, plan))
    print_release(result, plan)
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")
    return 0


def register(subparsers) -> None:
    """Add the ``demo`` and ``anonymize`` subcommands to an ``argparse`` subparsers object."""
    demo = subparsers.add_parser("demo", help="k=5, 5%% suppression on the bundled Adult extract "
                                 "(or on a generated census: --census ROWS)")
    demo.add_argument("--output", default=None,
                      help="released table, .csv or .parquet (default: adult_k5.released.csv, "
                      "with --census census_k5.released.csv)")
    demo.add_argument("--census", default=None, metavar="ROWS",
                      help="run on a generated census of ROWS rows instead (QIDs zip, age, sex, "
                      "race, marital, education; see `gpuppdp generate census`)")
    demo.add_argument("--census-seed", default=None, metavar="S",
                      help="seed of the --census table (default 0)")
    add_run_options(demo)
    demo.set_defaults(func=cmd_demo, search="flash")

    an = subparsers.add_parser("anonymize", help="optimal generalization of a CSV/Parquet table")
    add_anonymization_options(an)
    an.add_argument("--output", required=True, help="released table (.csv or .parquet)")
    add_chunk_option(an, "anonymize out of core, reading and releasing N rows at a time "
                     "(memory: a chunk and the frequency sets)")
    an.add_argument("--dask", default=None, metavar="local:N|tcp://HOST:PORT",
                    help="encode and release on a Dask cluster: a new local cluster of N "
                    "worker processes, or a running scheduler (a .parquet release is then a "
                    "dataset folder)")
    add_run_options(an)
    an.set_defaults(func=cmd_anonymize)
