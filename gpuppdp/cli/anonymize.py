"""``gpuppdp demo`` and ``gpuppdp anonymize``: optimal generalization of a table, the release
written to --output and the summary to --json (both or neither, see
:class:`gpuppdp.io.OutputPlan`).  ``demo`` runs on the bundled Adult extract, or with
``--census ROWS`` on a generated census of that many rows (:mod:`gpuppdp.census`).

``anonymize --algorithm`` picks the scheme: ``full-domain`` (default: the lattice search,
``--search``), ``mondrian`` (:mod:`gpuppdp.algorithms.mondrian`) or ``tds`` (top-down
specialization, :mod:`gpuppdp.algorithms.tds`).  For the latter two a ``--qi COL`` without a
hierarchy is a numeric QID; their releases are checked by the independent checker and
summarized with full-domain's JSON keys where they apply (``transformation`` is null)."""

from __future__ import annotations

import argparse
import logging
import shlex
import time
from typing import TYPE_CHECKING

from ..stops import temporary_folder
from .choices import TDS_GENERALIZATIONS
from .common import _privacy_models, add_anonymization_options, check_roles
from .generate import whole_number
from .measure import chunk_rows_for
from .options import (Command, add_chunk_option, add_dask_option, add_gpu_io_option,
                      add_run_options, add_values, encoding_of)
from .progress import search_progress
from .run import (anonymizer_from_args, format_summary, on_device, print_release,
                  read_whole_on_device, release_plan, run_summary)

if TYPE_CHECKING:  # registering imports only the standard library; the runs load the library
    from ..anonymizer import AnonymizationResult
    from ..io import OutputPlan

__all__ = ["DEMO", "ANONYMIZE", "register", "cmd_demo", "cmd_anonymize", "partition_run",
           "add_algorithm_options"]


def _certainty(result: AnonymizationResult) -> dict:
    """``ncp`` (per QID) and ``gcp`` of an in-memory full-domain release, measured as
    Mondrian's and TDS's (:func:`gpuppdp.algorithms.mondrian.certainty_penalty`; a suppressed value
    costs 1)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..algorithms.mondrian import certainty_penalty, label_costs
    from ..io import is_cudf_frame
    from ..report.words import value_counts

    hierarchies = dict(result.schema.quasi_identifiers)
    table = result.released
    if not is_cudf_frame(table):
        return certainty_penalty(table, table, list(hierarchies), hierarchies=hierarchies)
    # a release on the device: its labels' record counts, from the optimum's classes
    rel = result.release
    marked = rel.suppressed_rows if rel.suppression == "mark" else 0
    ncp = {}
    for (name, level), counts in zip(result.transformation.items(), value_counts(result)[1]):
        h = hierarchies[name]
        costs = label_costs(h, list(h.labels(level)), name)
        ncp[name] = (float(counts @ costs) + marked) / rel.rows_in_release
    return {"ncp": ncp, "gcp": sum(ncp.values()) / len(ncp)}


def _local(result: AnonymizationResult, data, args) -> tuple:
    """``(table, summary keys)`` of ``--local-recoding`` and ``--local-suppression`` after the
    full-domain optimum (``result`` of ``data``); the table is ``result``'s without them."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..algorithms.local_suppression import local_suppression
    from ..analysis.utility import granularity

    table, extra = result.released, {}
    if args.local_recoding is not None:
        recoded = result.local_recoding(data, args.local_recoding, seed=args.seed)
        table, extra["local_recoding"] = recoded.released, recoded.summary()
        print(f"local recoding     {recoded.summary()['iterations']} iteration(s), "
              f"{recoded.suppressed_records} record(s) still suppressed")
    if args.local_suppression:
        qids = list(result.schema.quasi_identifiers)
        cells = local_suppression(table, qids, args.k,
                                  importance=args.importance.split(",") if args.importance
                                  else None)
        table, extra["local_suppression"] = cells.released, cells.summary()
        print(f"local suppression  {cells.summary()['total_cells']} cell(s) suppressed")
    if extra:
        hierarchies = dict(result.schema.quasi_identifiers)
        extra["granularity"] = granularity(table, hierarchies, list(hierarchies))
    return table, extra


def _publish(result: AnonymizationResult, plan: OutputPlan, args, sep: str = ";",
             data=None) -> None:
    print(format_summary(result))
    table, extra = _local(result, data, args) if data is not None else (result.released, {})
    with plan.writing() as out:
        out.write_table("--output", table, sep=sep)
        if "--json" in plan:
            summary = run_summary(result, args, plan)
            summary["algorithm"] = "full-domain"
            summary.update(_certainty(result))
            summary.update(extra)
            out.write_json("--json", summary)
    print_release(result, plan)
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")


def cmd_demo(args) -> int:
    """Run ``demo``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from .. import datasets
    from ..anonymizer import Anonymizer
    from ..errors import InputError

    if args.show_command:
        if args.census is not None:
            raise InputError("--show-command prints the Adult demo's command; leave out --census "
                             "(gpuppdp generate census writes the census table)")
        print(demo_command(args))
        return 0
    if args.census is not None:
        return _census_demo(args)
    if args.census_seed is not None:
        raise InputError("--census-seed needs --census ROWS")
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


def demo_command(args) -> str:
    """The ``gpuppdp anonymize`` command line that does what ``demo`` does on the bundled Adult
    extract: its files' absolute paths, every column a quasi-identifier with its hierarchy,
    k=5, suppression limit 5%, the loss metric and the demo's options (shell-quoted)."""
    from .. import datasets  # deferred: keeps gpuppdp --help fast

    words = ["gpuppdp", "anonymize", datasets.adult_path()]
    for column in datasets.ADULT_QUASI_IDENTIFIERS:
        words += ["--qi", f"{column}={datasets.adult_path(f'adult_hierarchy_{column}.csv')}"]
    words += ["--k", "5", "--suppression-limit", "5%", "--metric", "loss",
              "--output", args.output or "adult_k5.released.csv"]
    for option, value, default in (("--search", args.search, "auto"),
                                   ("--backend", args.backend, "auto"),
                                   ("--prefer", args.prefer, "height"),
                                   ("--seed", args.seed, None),
                                   ("--time-limit", args.time_limit, None),
                                   ("--json", args.json, None)):
        if value is not None and value != default:
            words += [option, f"{value:g}" if isinstance(value, float) else str(value)]
    if args.quiet:
        words.append("--quiet")
    return " ".join(shlex.quote(word) for word in words)


def _census_demo(args) -> int:
    """The demo's job on a generated census: QIDs zip, age, sex, race, marital, education;
    person_id removed, the other columns kept (insensitive)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
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
    # deferred: Dask is optional
    from ..backend import get_backend
    from ..cluster import client_for, read_dask, write_release
    from ..io import PARQUET_SUFFIXES, TABLE_SUFFIXES, OutputPlan, table_delimiter

    encoding_of(args, "--dask")  # the cluster reads UTF-8 (for now)
    inputs = [args.input, *(path for _, path in args.qi)]
    OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES,  # the checks only
                           dataset=args.output.lower().endswith(PARQUET_SUFFIXES))
    plan = OutputPlan(inputs).add("--json", args.json)
    _, anonymizer = anonymizer_from_args(args, read=False)
    gpu_frames = on_device(args, "dask_cudf")  # dask-cuDF partitions: cuDF frames
    with client_for(args.dask, gpu=get_backend(anonymizer.backend).is_gpu):
        result = anonymizer.fit(read_dask(args.input, sep=args.sep, gpu_frames=gpu_frames),
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


ALGORITHMS = ("full-domain", "mondrian", "tds")


def _qi_optional(text: str) -> tuple[str, str | None]:
    """``COL=HIERARCHY.csv`` -> (COL, path); ``COL`` -> (COL, None): a QID without hierarchy
    (numeric, for Mondrian and TDS; full-domain refuses it after parsing)."""
    name, sep, path = text.partition("=")
    if not name or (sep and not path):
        raise argparse.ArgumentTypeError(
            f"--qi expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return name, path or None


def _transformation(text: str) -> dict[str, int]:
    """``COL=LEVEL,COL=LEVEL,...`` -> {COL: LEVEL} (each column once; the columns and levels
    are checked against the hierarchies by :meth:`gpuppdp.Anonymizer.release`)."""
    out: dict[str, int] = {}
    for part in text.split(","):
        name, sep, level = part.strip().partition("=")
        if not name or not sep or not level.strip().isdigit():
            raise argparse.ArgumentTypeError(
                f"--transformation expects COL=LEVEL,COL=LEVEL,... (a level a whole number "
                f">= 0), got {part.strip()!r} in {text!r}")
        if name in out:
            raise argparse.ArgumentTypeError(f"--transformation names {name!r} twice")
        out[name] = int(level)
    return out


def _given_release(args, plan: OutputPlan) -> int:
    """``anonymize --transformation``: the given node released (checked against the models
    by :meth:`gpuppdp.Anonymizer.release`), summarized as a searched release."""
    from ..io import table_delimiter  # deferred: keeps `gpuppdp --help` fast

    refused = [option for option, given in (
        ("--dask", args.dask), ("--chunk-rows", args.chunk_rows is not None),
        ("--parquet-dataset", args.parquet_dataset), ("--search", args.search != "auto"),
        ("--time-limit", args.time_limit is not None)) if given]
    if refused:
        args.usage_error(f"--transformation releases the node it names in memory, without a "
                         f"search: leave out {', '.join(refused)}")
    from ..engine.lattice import node_levels  # deferred: keeps `gpuppdp --help` fast

    data, anonymizer = anonymizer_from_args(args)
    hierarchies = anonymizer.quasi_identifiers
    node_levels(args.transformation, list(hierarchies),
                [h.height for h in hierarchies.values()], "--transformation")
    result = anonymizer.release(data, args.transformation)
    _publish(result, plan, args, table_delimiter(args.input, args.sep, encoding=args.encoding))
    return 0


def cmd_anonymize(args) -> int:
    """Run ``anonymize``; returns the exit status (0)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from .. import kernels
    from ..io import CHUNK_ROWS, table_delimiter

    if args.arx_project is not None:
        return _arx_project_anonymize(args)
    if args.strict:
        args.usage_error("--strict is an option of --arx-project")
    if args.input is None or not args.qi:
        args.usage_error("the following arguments are required: input, --qi (or "
                         "--arx-project FILE.deid)")
    check_roles(args)
    _check_local_options(args)
    if args.algorithm == "full-domain":
        bare = [name for name, path in args.qi if path is None]
        if bare:
            args.usage_error(f"argument --qi: quasi-identifier {bare[0]!r} needs a hierarchy: "
                             "--qi COLUMN=HIERARCHY.csv (a QID without hierarchy is numeric "
                             "for --algorithm mondrian or tds)")
        if args.target is not None:
            args.usage_error("--target is the classification attribute of --algorithm tds")
        if args.generalization is not None:
            args.usage_error("--generalization is an option of --algorithm tds")
    elif args.attribute_microaggregation:
        args.usage_error("--microaggregate is an option of --algorithm full-domain")
    else:
        if args.transformation is not None:
            args.usage_error("--transformation names a node of the full-domain lattice: "
                             "leave it out with --algorithm mondrian or tds")
        return _partition_anonymize(args)
    if args.relaxed:
        args.usage_error("--relaxed is an option of --algorithm mondrian")
    if args.transformation is not None:
        return _given_release(args, release_plan(args).add("--json", args.json))
    if args.dask:
        return _dask_anonymize(args)
    plan = release_plan(args, dataset=args.parquet_dataset).add("--json", args.json)
    t0 = time.perf_counter()
    # while the input is read; joined before the command returns, so that a short run never
    # leaves it loading (the process would wait for it, ignoring Ctrl-C)
    run_kernels, variant = _warm_kernels(args), _wanted_variant(args)
    warm = kernels.warm_up(*run_kernels, wanted=variant)
    chunk_rows = None if read_whole_on_device(args) else chunk_rows_for(args)
    if args.parquet_dataset and chunk_rows is None:  # a dataset is written out of core
        chunk_rows = CHUNK_ROWS
    if chunk_rows is not None:  # Anonymizer.fit_file reads UTF-8 only (for now)
        encoding_of(args, "--chunk-rows (or an input over 256 MiB, read in chunks)")
        if args.local_recoding is not None or args.local_suppression:
            args.usage_error("--local-recoding and --local-suppression need the table in "
                             "memory; this input is read in chunks (over 256 MiB)")
    data, anonymizer = anonymizer_from_args(args, read=chunk_rows is None)
    if chunk_rows is None:
        t1 = time.perf_counter()
        warm.join()  # the kernels in memory before the fit: its timings hold no loading
        t2 = time.perf_counter()
        logging.getLogger("gpuppdp").debug("loaded in %.3f s", t1 - t0)
        result = anonymizer.fit(data, progress=search_progress(args, run_kernels, variant))
        result.timings["kernel load"] = t2 - t1
        _publish(result, plan, args, table_delimiter(args.input, args.sep,
                                                     encoding=args.encoding),
                 data if args.local_recoding is not None or args.local_suppression else None)
        return 0
    with plan.writing() as out:  # the release streams to its temporary file
        result = anonymizer.fit_file(args.input, out.path("--output"), sep=args.sep,
                                     chunk_rows=chunk_rows, dataset=args.parquet_dataset,
                                     progress=search_progress(args, run_kernels, variant))
        print(format_summary(result))
        out.write_json("--json", run_summary(result, args, plan))
    print_release(result, plan)
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")
    warm.join()
    return 0


def _arx_project_anonymize(args) -> int:
    """``anonymize --arx-project FILE.deid``: the project's table, roles, hierarchies, privacy
    models, suppression limit and metric (:func:`gpuppdp.arx_project.read_arx_project`) set on
    ``args`` as their options would, then the run of any other table; each setting gpuppdp
    cannot honour is one warning line on stderr (an error with --strict)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    import os
    import sys

    from ..arx_project import read_arx_project
    from ..errors import InputError
    from ..io import write_table
    from ..models import parse_spec
    from .common import _order_spec

    given = [option for option, value in (
        ("INPUT", args.input), ("--qi", args.qi), ("--sensitive", args.sensitive),
        ("--insensitive", args.insensitive), ("--identifying", args.identifying),
        ("--order", args.order), ("--suppression-limit", args.suppression),
        ("--metric", args.metric != "loss"), ("--weights", args.weights),
        ("--gs-factor", args.gs_factor is not None), ("--population", args.population),
        *((o, getattr(args, name)) for o, name in _PYTHON_SEARCH_OPTIONS)) if value]
    if given:
        args.usage_error(f"--arx-project gives the table, its roles and hierarchies, the "
                         f"privacy models, the suppression limit and the metric; leave out "
                         f"{given[0]}")
    if args.algorithm != "full-domain" or args.dask:
        args.usage_error("--arx-project runs ARX's full-domain generalization in memory; "
                         "leave out --algorithm and --dask")
    project = read_arx_project(args.arx_project)
    if project.unsupported and args.strict:
        raise InputError(f"--strict: {len(project.unsupported)} setting(s) of the ARX project "
                         f"cannot be honoured: {'; '.join(project.unsupported)}")
    for line in project.unsupported:
        print(f"gpuppdp: warning: ARX project setting not honoured: {line}", file=sys.stderr)
    with temporary_folder(prefix="gpuppdp-arx-") as folder:
        args.input = os.path.join(folder, "input.csv")
        write_table(project.data, args.input, sep=";")
        files = {}
        for i, (name, hierarchy) in enumerate(project.hierarchies.items()):
            files[name] = os.path.join(folder, f"hierarchy{i}.csv")
            hierarchy.to_csv(files[name], sep=";")
        args.sep, args.hierarchy_sep, args.encoding = ";", ";", "utf-8"
        args.qi = [(c, files[c]) for c in project.columns("qi")]
        args.sensitive = [(c, files.get(c)) for c in project.columns("sensitive")]
        args.insensitive = project.columns("insensitive")
        args.identifying = project.columns("identifying")
        args.others = "error"
        for option, value in project.models:
            if option == "--k":
                args.k = int(value)
            else:
                getattr(args, option.lstrip("-").replace("-", "_")).append(
                    parse_spec(option, value))
        args.order = [_order_spec(f"{c}={o}") for c, o in project.orders.items()]
        args.suppression, args.metric = project.suppression_limit, project.metric
        args.gs_factor, args.weights = project.gs_factor, project.attribute_weights
        args.arx_project = None
        return cmd_anonymize(args)


def _partition_models(args) -> dict:
    """The privacy model of a Mondrian or TDS run from the options they support: ``k``,
    ``lkc`` (TDS) and ``sensitive``; Mondrian's class-level models are built with the data
    (:func:`_partition_algorithm`)."""
    from ..engine.encoding import SchemaError  # deferred: keeps `gpuppdp --help` fast
    from ..models import KAnonymity, LKCPrivacy

    _refuse_unsupported(args)
    first = args.sensitive[0][0] if args.sensitive else None
    out = {"k": args.k, "lkc": None, "sensitive": first, "models": []}
    if args.k is not None:
        out["models"].append(KAnonymity(args.k))
    if args.algorithm == "mondrian":
        if args.k is None:
            raise SchemaError("--algorithm mondrian needs --k")
        return out  # its class-level models come from _partition_algorithm, with the data
    if len(args.lkc) > 1:
        raise SchemaError("--algorithm tds takes one --lkc")
    if any(values is not None for values in getattr(args, "lkc_values", [])):
        raise SchemaError("--algorithm tds bounds every sensitive value: its --lkc takes no "
                          "@V1,V2,... (full-domain does)")
    if args.k is None and not args.lkc:
        raise SchemaError("--algorithm tds needs --k and/or --lkc L,K,C")
    for L, K, C, column in args.lkc:  # noqa: N806 - the literature's names
        sensitive = column or first
        if C < 1 and sensitive is None:
            raise SchemaError("--lkc with C < 1 needs --sensitive COLUMN")
        out["sensitive"] = sensitive
        out["lkc"] = (L, K, C)
        out["models"].append(LKCPrivacy(L, K, C, attribute=sensitive))
    return out


def _refuse_unsupported(args) -> None:
    """``SchemaError`` naming the options of ``anonymize`` that ``--algorithm mondrian|tds``
    does not take (and those of the other algorithm)."""
    from ..engine.encoding import SchemaError  # deferred: keeps `gpuppdp --help` fast

    if getattr(args, "dask", None) or getattr(args, "chunk_rows", None) is not None:
        raise SchemaError(f"--algorithm {args.algorithm} runs in memory: no --dask or "
                          "--chunk-rows")
    for option, value, algorithm in (("--relaxed", args.relaxed, "mondrian"),
                                     ("--generalization", args.generalization, "tds")):
        if value and args.algorithm != algorithm:
            raise SchemaError(f"{option} is an option of --algorithm {algorithm}")
    if args.target is not None and args.algorithm != "tds":
        raise SchemaError("--target is the classification attribute of --algorithm tds")
    class_level = (("--t-closeness", args.t_closeness), ("--alpha-k", args.alpha_k),
                   ("--delta-disclosure", args.delta_disclosure),
                   ("--beta-likeness", args.beta_likeness), ("--privacy-loss", args.privacy_loss),
                   ("--prior", args.prior), ("--order", args.order))
    unsupported = [option for option, value in (
        ("--qid-set", args.qid_set), ("--k-map", args.k_map),
        ("--delta-presence", args.delta_presence), ("--population", args.population),
        ("--average-risk", args.average_risk),
        ("--population-uniqueness", args.population_uniqueness),
        ("--sample-uniqueness", args.sample_uniqueness))
        if value]
    if args.algorithm == "mondrian":
        unsupported += ["--lkc"] if args.lkc else []
    else:
        unsupported += [option for option, value in class_level if value]
        unsupported += ["--l-diversity"] if args.l_diversity else []
    if args.suppression:
        unsupported.append("--suppression")
    if unsupported:
        raise SchemaError(f"--algorithm {args.algorithm} does not support "
                          f"{', '.join(unsupported)} (full-domain does)")


def _partition_anonymize(args) -> int:
    """``anonymize --algorithm mondrian|tds``: in memory, the release in input order shuffled
    by --seed, checked by the independent checker, summarized as full-domain runs are."""
    from ..io import table_delimiter  # deferred: keeps `gpuppdp --help` fast

    plan = release_plan(args).add("--json", args.json)
    _, _, released, summary = partition_run(args, plan)
    with plan.writing() as out:
        out.write_table("--output", released, sep=table_delimiter(args.input, args.sep))
        out.write_json("--json", summary)
    if "--output" in plan:
        print(f"released table     {plan.path('--output')} ({len(released)} rows)")
    if "--json" in plan:
        print(f"summary            {plan.path('--json')}")
    return 0


def partition_run(args, plan: OutputPlan) -> tuple:
    """Run ``--algorithm mondrian|tds`` as ``anonymize`` and ``report`` do: read the input,
    run the algorithm (its release checked by the independent checker), print the run's
    lines.  Returns ``(data, release, released, summary)``: the input, the
    :class:`~gpuppdp.algorithms.mondrian.MondrianRelease` /
    :class:`~gpuppdp.algorithms.tds.TDSRelease`, the table to publish (rows shuffled by
    --seed) and the JSON summary (its ``files`` name what ``plan`` holds)."""
    import numpy as np  # deferred: keeps `gpuppdp --help` fast

    from ..io import read_table  # deferred: keeps `gpuppdp --help` fast

    model = _partition_models(args)
    t0 = time.perf_counter()
    data = read_table(args.input, sep=args.sep, encoding=args.encoding)
    release = _partition_algorithm(args, model, data).fit(data)
    order = np.random.default_rng(args.seed).permutation(len(release.released))
    released = release.released.iloc[order].reset_index(drop=True)
    summary = _partition_summary(args, plan, model, data, release, released)
    summary["seconds"] = time.perf_counter() - t0
    _print_partition_run(args, model, release, released)
    return data, release, released, summary


def _partition_algorithm(args, model: dict, data):
    """The :class:`~gpuppdp.algorithms.Mondrian` or :class:`~gpuppdp.algorithms.TDS` of the
    command line, with the columns' roles (``data``: the input, for Mondrian's models)."""
    # deferred: keeps `gpuppdp --help` fast
    from ..algorithms import TDS, Mondrian
    from ..engine.encoding import SchemaError
    from ..hierarchy import Hierarchy

    qids = [name for name, _ in args.qi]
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi if path is not None}
    roles = {"identifying": list(args.identifying), "others": args.others,
             "hierarchies": hierarchies}
    if args.algorithm == "tds":
        return TDS(qids, k=model["k"], lkc=model["lkc"], sensitive=model["sensitive"],
                   target=args.target, generalization=args.generalization or "subtree",
                   insensitive=_kept(args, model["sensitive"]), backend=args.backend, **roles)
    models = _privacy_models(args, data)
    attributes = {m.sensitive_attribute for m in models}
    if len(attributes) > 1:
        raise SchemaError(f"--algorithm mondrian: the models refer to "
                          f"{', '.join(sorted(attributes))}; give them one sensitive "
                          "attribute")
    model["sensitive"] = next(iter(attributes), None)
    model["models"] += models
    return Mondrian(qids, k=model["k"], sensitive=model["sensitive"], strict=not args.relaxed,
                    models=models, verify=True, backend=args.backend,
                    insensitive=_kept(args, model["sensitive"]), **roles)


def _kept(args, sensitive: str | None) -> list[str]:
    """The columns released unmodified: --insensitive and the --sensitive ones the algorithm
    does not take as its sensitive attribute."""
    return list(args.insensitive) + [name for name, _ in args.sensitive if name != sensitive]


def _partition_summary(args, plan: OutputPlan, model: dict, data, release, released) -> dict:
    """The JSON summary of a Mondrian or TDS run, with full-domain's keys where they
    apply."""
    import numpy as np  # deferred: keeps `gpuppdp --help` fast

    qids = release.quasi_identifiers
    sensitive = [name for name, _ in args.sensitive]
    hierarchies = {n: str(p) for n, p in args.qi if p is not None}
    classes = len(released.drop_duplicates(subset=qids)) if qids else 1
    measured = release.checked
    summary = {
        "algorithm": args.algorithm, "transformation": None,
        "ncp": release.ncp, "gcp": release.gcp,
        "rows_in_release": int(len(released)), "released_records": int(len(released)),
        "suppressed_records": 0, "input_rows": int(len(data)),
        "equivalence_classes": int(classes),
        "partitions": int(len(np.bincount(release.partition))),
        "smallest_class": int(measured["k"]),
        "average_class_size": float(len(data) / max(classes, 1)),
        "models": [m.describe() for m in model["models"]],
        "suppression": args.suppressed, "seconds": None,
        "details": release.summary(),
        "check": {key: value for key, value in measured.items() if value is not None},
        "input": str(args.input), "output": None,
        "files": {"input": str(args.input), "hierarchies": hierarchies},
        "quasi_identifiers": {q: {"hierarchy": hierarchies.get(q), "numeric": q not in
                                  hierarchies} for q in qids},
        "target": args.target, "sensitive_columns": sensitive,
        "insensitive_columns": [c for c in released.columns
                                if c not in qids and c not in sensitive],
        "identifying_columns": list(args.identifying),
        "dropped_columns": list(release.dropped_columns),
        "removed_columns": list(release.removed_columns),
    }
    for key, option in (("output", "--output"), ("json", "--json"), ("html", "--html")):
        if option in plan:
            summary["files"][key] = str(plan.path(option))
    summary["output"] = summary["files"].get("output")
    return summary


def _print_partition_run(args, model: dict, release, released) -> None:
    """The lines a Mondrian or TDS run prints: the algorithm, NCP, classes, the check."""
    details, measured = release.summary(), release.checked
    classes = len(released.drop_duplicates(subset=release.quasi_identifiers))
    name = "Mondrian" if args.algorithm == "mondrian" else "top-down specialization"
    print(f"algorithm          {name} ({details['algorithm']}), "
          + ", ".join(m.describe()["model"] for m in model["models"]))
    print("ncp                " + ", ".join(f"{q}={v:.4f}" for q, v in release.ncp.items())
          + f"; gcp {release.gcp:.4f}")
    print(f"classes            {classes} (smallest {measured['k']}); {len(released)} records "
          "released, none suppressed")
    if args.algorithm == "tds":
        print(f"specializations    {details['specializations']} "
              f"({details['generalization']} generalization)")
    print(f"checked            independent checker: k = {measured['k']}"
          + ("" if model["lkc"] is None else
             f", LKC satisfied = {measured.get('lkc_satisfied')}"))


def _check_local_options(args) -> None:
    """Usage errors of ``--local-recoding``, ``--local-suppression`` and ``--importance``."""
    local = args.local_recoding is not None or args.local_suppression
    if args.importance and not args.local_suppression:
        args.usage_error("--importance orders the QIDs of --local-suppression")
    if args.local_suppression and args.k is None:
        args.usage_error("--local-suppression needs --k (every record compatible with k)")
    if local and (args.dask or args.parquet_dataset or args.chunk_rows is not None
                  or args.algorithm != "full-domain"):
        args.usage_error("--local-recoding and --local-suppression follow the full-domain "
                         "optimum of a table in memory (not --algorithm mondrian|tds, --dask, "
                         "--parquet-dataset or --chunk-rows)")


def add_local_options(p) -> None:
    """``--local-recoding [RECORDS_PER_ITERATION]``, ``--local-suppression``, ``--importance``."""
    p.add_argument("--local-recoding", nargs="?", type=float, const=0.01, default=None,
                   metavar="RECORDS_PER_ITERATION",
                   help="re-anonymize the suppressed records with their own transformations, "
                   "as ARX's optimizeIterativeFast; each iteration releases at least this "
                   "share of the input's records (default 0.01, as ARX's 100 iterations)")
    p.add_argument("--local-suppression", action="store_true",
                   help="then suppress the fewest QID cells (*, matching any value) so that "
                   "every record is compatible with --k records (sdcMicro's localSuppression)")
    p.add_argument("--importance", default=None, metavar="COL,COL,...",
                   help="--local-suppression's QIDs, most important (suppressed last) first "
                   "(default: fewer distinct values, more important)")


def add_algorithm_options(p) -> None:
    """``--algorithm`` and the options of Mondrian and TDS (``anonymize`` and ``report``)."""

    p.add_argument("--algorithm", choices=ALGORITHMS, default="full-domain",
                   help="full-domain: every value of a QID at one hierarchy level, the "
                   "optimum of --search (default); mondrian: multidimensional partitioning "
                   "(--k, --l-diversity distinct:L); tds: top-down specialization (TDS for "
                   "--k, HDTDS for --lkc; --target).  For mondrian and tds a --qi COL "
                   "without hierarchy is numeric (released as ranges)")
    p.add_argument("--target", default=None, metavar="COL",
                   help="tds: the classification attribute whose information gain scores "
                   "the specializations (default: the information about the QIDs' own "
                   "values)")
    p.add_argument("--relaxed", action="store_true",
                   help="mondrian: relaxed partitioning (default strict)")
    p.add_argument("--generalization", choices=TDS_GENERALIZATIONS, default=None,
                   help="tds: subtree (default: the release is a cut of each hierarchy) or "
                   "sibling (a specialized value may keep some children generalized: those "
                   "are released at the parent's label, their specialized siblings at the "
                   "child's; never more NCP than subtree)")


def _demo_options(p) -> None:
    """``demo``'s options."""
    add_values(p, ("--output", None, "released table, .csv or .parquet (default: "
                   "adult_k5.released.csv, with --census census_k5.released.csv)"),
               ("--census", "ROWS", "run on a generated census of ROWS rows instead (QIDs zip, "
                "age, sex, race, marital, education; see `gpuppdp generate census`)"),
               ("--census-seed", "S", "seed of the --census table (default 0)"))
    p.add_argument("--show-command", action="store_true",
                   help="print the gpuppdp anonymize command that does what the demo does (the "
                   "bundled files' paths, every option) and exit without running it")
    add_run_options(p)


def _anonymize_options(an) -> None:
    """``anonymize``'s options."""
    add_anonymization_options(an, required=False, qi_type=_qi_optional)
    an.add_argument("--arx-project", default=None, metavar="FILE.deid",
                    help="run an ARX project file instead of INPUT and its options: its "
                    "table, attribute types, hierarchies, privacy models, suppression limit "
                    "and quality model; each setting gpuppdp cannot honour is a warning")
    an.add_argument("--strict", action="store_true",
                    help="with --arx-project: refuse a project with a setting gpuppdp cannot "
                    "honour instead of warning")
    add_algorithm_options(an)
    an.add_argument("--transformation", type=_transformation, default=None,
                    metavar="COL=LEVEL,...",
                    help="release this node (every --qi named once, e.g. from gpuppdp "
                    "explore's frontier) instead of the searched optimum; it must satisfy "
                    "the models within --suppression-limit, else the run fails")
    add_local_options(an)
    an.add_argument("--output", required=True, help="released table (.csv or .parquet)")
    add_chunk_option(an, "anonymize out of core, reading and releasing N rows at a time "
                     "(memory: a chunk and the frequency sets)")
    an.add_argument("--parquet-dataset", action="store_true",
                    help="write the release as a Parquet dataset: --output is a folder (its "
                    "name ending in .parquet) of one file per bucket of rows, written by "
                    "several threads at once; out of core")
    add_dask_option(an, "encode and release (a .parquet release is then a dataset folder)")
    add_gpu_io_option(an, " and its release written (cudf: released in GPU memory)")
    an.add_argument("--microaggregate", type=_column_value("--microaggregate", ":"),
                    dest="attribute_microaggregation", action="append", default=[],
                    metavar="COL:FUNCTION",
                    help="release COL as one aggregate per class: mean, geomean, median, mode "
                    "or interval (ARX's microaggregation; without --qi COL=... the column joins "
                    "no lattice and the loss metric charges it, with one it is generalized, "
                    "then aggregated); repeatable")
    an.add_argument("--type", type=_column_value("--type", "="), action="append", default=[],
                    metavar="COL=TYPE", dest="types",
                    help="data type of COL (ARX's DataType): integer, decimal, date[:FORMAT] "
                    "(strptime, default %%Y-%%m-%%d), ordered:V1,V2,... or string; untyped "
                    "columns are numbers when every value is one; repeatable")
    add_run_options(an)
    an.set_defaults(usage_error=an.error)


DEMO = Command(
    "demo", cmd_demo, _demo_options,
    help="k=5, suppression limit 5%% (the loss metric) on the bundled Adult extract (or on a "
         "generated census: --census ROWS); --show-command prints it as gpuppdp anonymize ...",
    description="Optimal generalization of the bundled Adult extract (every column a "
                "quasi-identifier with ARX's hierarchy): k=5, suppression limit 5%, the loss "
                "metric; or of a generated census (--census ROWS).  --show-command prints the "
                "same run as a gpuppdp anonymize command line.")
ANONYMIZE = Command(
    "anonymize", cmd_anonymize, _anonymize_options,
    help="optimal generalization of a CSV/Parquet table (or Mondrian, top-down specialization: "
         "--algorithm)")


def register(subparsers) -> None:
    """Add the ``demo`` and ``anonymize`` subcommands to an ``argparse`` subparsers object."""
    DEMO.register(subparsers)
    ANONYMIZE.register(subparsers)


def _column_value(option: str, sep: str):
    """Parser of ``--option COL<sep>VALUE`` -> (COL, VALUE)."""
    def parse(text: str) -> tuple[str, str]:
        column, found, value = text.partition(sep)
        if not found or not column or not value:
            raise argparse.ArgumentTypeError(f"{option} takes COL{sep}VALUE, got {text!r}")
        return column, value
    return parse


#: the model options and their ``args`` names, as the warm-up reads them
_PYTHON_SEARCH_OPTIONS = (("--k", "k"), ("--qid-set", "qid_set"), ("--lkc", "lkc"),
                          ("--l-diversity", "l_diversity"), ("--t-closeness", "t_closeness"),
                          ("--alpha-k", "alpha_k"), ("--delta-disclosure", "delta_disclosure"),
                          ("--beta-likeness", "beta_likeness"),
                          ("--privacy-loss", "privacy_loss"), ("--k-map", "k_map"),
                          ("--delta-presence", "delta_presence"),
                          ("--average-risk", "average_risk"),
                          ("--population-uniqueness", "population_uniqueness"),
                          ("--sample-uniqueness", "sample_uniqueness"))


def _warm_kernels(args) -> tuple:
    """The kernels the warm-up thread loads ahead: the compiled Flash's for a Flash search of
    the models and metric it judges (:func:`gpuppdp.engine.search.compiled_flash_supports`;
    the table's size and the backend decide the rest), nothing for a Flash search left to the
    Python traversal (its many small kernels loaded in the thread would delay the search,
    which waits for all of them), the batched evaluator's core for the others."""
    # deferred: the library loads in the run, not when the parser is built (fast --help)
    from ..engine.search import compiled_flash_supports, search_kernels
    from ..models import parsed_models

    if args.search not in ("auto", "flash"):
        return search_kernels(False)
    specs = {option: getattr(args, name, None) if name == "k" else getattr(args, name, None)
             or [] for option, name in _PYTHON_SEARCH_OPTIONS}
    sensitive = [name for name, _ in getattr(args, "sensitive", None) or []]
    compiled = compiled_flash_supports(parsed_models(specs, sensitive),
                                       getattr(args, "metric", None))
    return search_kernels(True) if compiled else ()


def _wanted_variant(args):
    """Of the compiled Flash's cached variants, the one this command will run: with classes
    when a model needs the sensitive attribute (l-diversity, t-closeness), else without
    (loading both made the warm-up outlast the input's reading more often)."""
    # deferred: the library loads in the run, not when the parser is built (fast --help)
    from ..engine.search import search_kernels
    from ..engine.search.flash_compiled import forms_classes

    flash = search_kernels(True)[0]
    classes = bool(args.l_diversity or args.t_closeness)

    def wanted(dispatcher, signature) -> bool:
        return dispatcher is not flash or forms_classes(signature) == classes
    return wanted
