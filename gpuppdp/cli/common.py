"""What the subcommands share: argparse value types, the anonymization options (input, roles,
privacy models, suppression) and the Anonymizer they configure, the progress bar and the
result summary.

Registering the options imports only the standard library (the choices come from
:mod:`.choices`); the functions that run a subcommand import the library when called."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from .choices import BACKENDS, METRICS, OTHERS, PREFERENCES, SEARCHES, SUPPRESSION_MODES

if TYPE_CHECKING:  # the parser needs only the standard library; the library loads in the runs
    from ..anonymizer import AnonymizationResult
    from ..io import OutputPlan

__all__ = ["ProgressBar", "add_anonymization_options", "add_run_options", "table_subcommand",
           "read_measured", "anonymizer_from_args", "release_plan", "format_summary",
           "print_release", "run_files", "run_summary", "search_progress"]


class ProgressBar:
    """Progress on stderr: a bar redrawn in place (``\\r``) when stderr is a terminal, plain
    lines (``search: 40% (48/120 nodes)``, one per tenth at most) when it is a file or a pipe,
    so that logs hold no carriage returns.  ``tty`` forces either form (default: asked of
    stderr at the first update); disabled (``--quiet``), it prints nothing."""

    def __init__(self, label: str, enabled: bool, *, unit: str = "nodes",
                 tty: bool | None = None):
        self.label = label
        self.enabled = enabled
        self.unit = unit
        self.tty = tty
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        if self.tty is None:
            isatty = getattr(sys.stderr, "isatty", None)
            self.tty = bool(isatty and isatty())
        done = min(max(done, 0), total)
        steps = 30 if self.tty else 10
        step = steps * done // total
        if step == self._last:
            return
        self._last = step
        if self.tty:
            sys.stderr.write(f"\r{self.label} [{'#' * step}{'.' * (steps - step)}] "
                             f"{done}/{total} {self.unit}" + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(f"{self.label}: {100 * done // total}% ({done}/{total} "
                             f"{self.unit})\n")
        sys.stderr.flush()


def search_progress(args) -> ProgressBar:
    """The search's progress bar; says first when the kernels are about to be compiled."""
    if not args.quiet:
        from .. import kernels

        if not kernels.compiled():
            print(f"compiling kernels (first run only, about 10 s; ahead-of-time kernels: "
                  f"{kernels.aot.status()}) ...", file=sys.stderr, flush=True)
    return ProgressBar("search", not args.quiet)


def _fraction(text: str) -> float:
    """``0.05`` or ``5%`` -> 0.05."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction like 0.05 or 5%, got {text!r}")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected positive seconds, got {text!r}")
    return value


def _qi_spec(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"quasi-identifier {text!r} needs a hierarchy: --qi COLUMN=HIERARCHY.csv")
    return name, path


def _qi_columns(text: str) -> list[tuple[str, str | None]]:
    """``check``/``risk``: ``COL``, ``COL=HIERARCHY.csv`` (the grammar of ``anonymize``; the
    hierarchy is optional there) or ``COL,COL,...`` -> ``[(name, path or None), ...]``."""
    name, sep, path = text.partition("=")
    if sep:
        if not name.strip() or not path:
            raise argparse.ArgumentTypeError(
                f"--qi expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
        return [(name.strip(), path)]
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"--qi expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return [(c, None) for c in names]


def add_measured_qi_option(p: argparse.ArgumentParser) -> None:
    """``--qi COL[=HIERARCHY.csv]`` of ``check`` and ``risk`` (repeatable; several columns
    may follow one --qi, space- or comma-separated) and ``--hierarchy-sep``."""
    p.add_argument("--qi", nargs="+", action="append", required=True, type=_qi_columns,
                   metavar="COL[=HIERARCHY.csv]",
                   help="quasi-identifying column, optionally with its hierarchy as in "
                   "anonymize (then every value of the column must be a label of the "
                   "hierarchy, at any level); repeatable, and several columns may follow one "
                   "--qi (space- or comma-separated)")
    p.add_argument("--hierarchy-sep", default=";", help="hierarchy CSV delimiter (default ;)")


IN_MEMORY_BYTES = 256 * 2 ** 20
"""Inputs up to this size (CSV) or :data:`gpuppdp.io.CHUNK_ROWS` rows (Parquet) are read into
memory at once; larger ones are read in chunks (``--chunk-rows``)."""


def add_chunk_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--chunk-rows N`` (see :func:`chunk_rows_for`); ``what`` says what it does."""
    p.add_argument("--chunk-rows", default=None, metavar="N",
                   help=f"{what}; default: in memory up to 1,048,576 rows (Parquet) or 256 MiB "
                   "(CSV), in chunks of that many rows above")


def add_dask_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--dask local:N|tcp://HOST:PORT``; ``what`` says what runs on the cluster."""
    p.add_argument("--dask", default=None, metavar="local:N|tcp://HOST:PORT",
                   help=f"{what} on a Dask cluster: a new local cluster of N worker "
                   "processes, or a running scheduler")


def add_measuring_options(p: argparse.ArgumentParser, measured: str) -> None:
    """``--quiet``, ``--chunk-rows`` and ``--dask`` of a command that measures INPUT's
    ``measured`` (its frequency set, its distinct QID combinations)."""
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_chunk_option(p, f"read INPUT N rows at a time and measure {measured} (memory follows "
                     "the classes, not the rows; not with --population)")
    add_dask_option(p, f"reduce INPUT's partitions to {measured}")


def measure_streamed(args, columns: list[str], hierarchies: dict[str, str],
                     chunk_rows: int | None, measure):
    """``(plan, measure(chunks, weight_column))`` for a command that measures INPUT without
    reading it whole: its partitions reduced on the Dask cluster (``--dask``) to their distinct
    rows of ``columns`` with counts (:func:`gpuppdp.cluster.partition_counts`,
    ``weight_column=cluster.COUNT_COLUMN``), or its chunks of ``chunk_rows`` rows
    (``weight_column=None``); every chunk's QID values checked against their hierarchies, a
    chunk's rows numbered in the whole table when it holds rows rather than counts."""
    from ..io import OutputPlan, read_chunks

    plan = OutputPlan([args.input, *hierarchies.values()]).add("--json", args.json)
    known = known_labels(hierarchies, args.hierarchy_sep)

    def checked(chunks, numbered: bool):
        rows = 0
        for chunk in chunks:
            check_known_labels(chunk, known, hierarchies, row_offset=rows if numbered else None)
            rows += len(chunk)
            yield chunk

    if args.dask:
        from ..cluster import COUNT_COLUMN, client_for, partition_counts, read_dask

        with client_for(args.dask):
            parts = partition_counts(read_dask(args.input, sep=args.sep, columns=columns),
                                     columns)
            return plan, measure(checked(parts, False), COUNT_COLUMN)
    chunks = read_chunks(args.input, sep=args.sep, columns=columns, rows=chunk_rows)
    return plan, measure(checked(chunks, True), None)


def dask_refusals(args) -> None:
    """``--dask`` with ``--chunk-rows`` or ``--population``: a ValueError saying why."""
    if args.dask and args.chunk_rows is not None:
        raise ValueError("--dask and --chunk-rows: the cluster reads INPUT in its partitions; "
                         "give one of them")
    if args.dask and args.population is not None:
        raise ValueError("--dask and --population: the population measures match INPUT's own "
                         "rows, which are read into memory; leave out --dask")


def chunk_rows_for(args) -> int | None:
    """Rows per chunk for a run that reads INPUT in chunks, or None to read it into memory:
    ``--chunk-rows``, else chunks for inputs over 2^20 rows (Parquet) or 256 MiB (CSV)."""
    import os

    from ..io import CHUNK_ROWS
    from .generate import whole_number

    if args.chunk_rows is not None:
        return whole_number("--chunk-rows", args.chunk_rows, 1)
    if not os.path.isfile(args.input):
        return None                    # read_table says what is wrong with it
    if args.input.lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        large = pq.read_metadata(args.input).num_rows > CHUNK_ROWS
    else:
        large = os.path.getsize(args.input) > IN_MEMORY_BYTES
    return CHUNK_ROWS if large else None


def measured_qids(args) -> tuple[list[str], dict[str, str]]:
    """The QID names of :func:`add_measured_qi_option` (in order, each once) and their
    hierarchy files (those given)."""
    names, files = [], {}
    for group in args.qi:
        for items in group:
            for name, path in items:
                if name in names:
                    raise ValueError(f"--qi: column given twice: {name}")
                names.append(name)
                if path is not None:
                    files[name] = path
    if not names:
        raise ValueError("--qi needs at least one column name")
    return names, files


def check_hierarchy_values(data, files: dict[str, str], sep: str = ";") -> None:
    """Each column of ``files`` (QID -> hierarchy CSV) holds only labels of its hierarchy (at
    any level) or ``*``; otherwise a ValueError naming the first values that are not and the
    first row holding one."""
    check_known_labels(data, known_labels(files, sep), files, row_offset=0)


def known_labels(files: dict[str, str], sep: str = ";") -> dict[str, set]:
    """Per QID of ``files`` (QID -> hierarchy CSV): every label of its hierarchy, and ``*``."""
    from ..hierarchy import Hierarchy

    known = {}
    for name, path in files.items():
        h = Hierarchy.from_csv(path, name=name, sep=sep)
        known[name] = {"*"}.union(*(map(str, h.labels(lv)) for lv in range(h.height + 1)))
    return known


def check_known_labels(data, known: dict[str, set], files: dict[str, str],
                       row_offset: int | None = None) -> None:
    """:func:`check_hierarchy_values` with the labels loaded (for a table read in chunks);
    with ``row_offset`` (the number of ``data``'s first row in the whole table) the error also
    names the first row holding a value that is not a label."""
    import numpy as np

    from ..core.codes import encode_column
    from ..validation import format_values

    for name, path in files.items():
        codes, values = encode_column(data[name], as_str=True)  # only distinct values compared
        bad = np.flatnonzero([v not in known[name] for v in values.tolist()])
        if len(bad):
            where = "" if row_offset is None else \
                f" (first at row {row_offset + int(np.flatnonzero(np.isin(codes, bad))[0])})"
            raise ValueError(f"--qi {name}={path}: {len(bad)} value(s) of {name!r} are not "
                             f"labels of the hierarchy{where}: "
                             f"{format_values(values[bad].tolist())}")


def _on_attribute(text: str) -> tuple[str, str | None]:
    """``SPEC@COLUMN`` -> (SPEC, COLUMN); ``SPEC`` -> (SPEC, None): the sensitive attribute a
    model refers to (default: the first ``--sensitive``)."""
    spec, at, column = text.rpartition("@")
    return (spec, column or None) if at else (text, None)


def _numbers(option: str, usage: str, count: int, convert=float):
    """Parser of ``--option A,B,...[@COLUMN]`` -> (A, B, ..., COLUMN or None)."""

    def parse(text: str) -> tuple:
        spec, column = _on_attribute(text)
        parts = spec.split(",")
        try:
            if len(parts) != count:
                raise ValueError(spec)
            values = [c(p) for c, p in zip(convert if isinstance(convert, tuple)
                                           else (convert,) * count, parts)]
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"{option} expects {usage}, got {text!r}")
        return (*values, column)

    return parse


def _model_option(option: str):
    """The parser's type of a model option: :func:`gpuppdp.models.parse_spec`, its error the
    parser's usage error."""

    def parse(text: str):
        from ..models import parse_spec  # deferred: the parser loads the library only here

        try:
            return parse_spec(option, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


_l_diversity = _model_option("--l-diversity")
_t_closeness = _model_option("--t-closeness")
_beta_likeness = _model_option("--beta-likeness")


_ORDER_WORDS = ("auto", "lexical", "numeric")


def _order_spec(text: str) -> tuple[str | None, str | list[str]]:
    """``[COL=]lexical|numeric|auto|v1,v2,...`` -> (COL or None, the word or the values): the
    order of a sensitive attribute for ordered t-closeness."""
    column, sep, spec = text.partition("=")
    if not sep:
        column, spec = None, text
    usage = ("--order expects COLUMN=lexical, COLUMN=numeric or COLUMN=V1,V2,... (every value "
             f"in order), got {text!r}")
    if (sep and not column) or not spec:
        raise argparse.ArgumentTypeError(usage)
    if spec in _ORDER_WORDS:
        return column, spec
    values = spec.split(",")
    if len(values) < 2 or not all(values):
        raise argparse.ArgumentTypeError(usage)
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"--order lists a value twice: {text!r}")
    return column, values


def orders_by_column(args) -> dict:
    """``--order`` as {column: word or values}; an order without COLUMN= is the first
    --sensitive's."""
    from ..engine.encoding import SchemaError

    out = {}
    for column, spec in getattr(args, "order", None) or []:
        if column is None:
            if not args.sensitive:
                raise SchemaError("--order needs --sensitive COLUMN (or --order COLUMN=...)")
            column = args.sensitive if isinstance(args.sensitive, str) \
                else args.sensitive[0][0]
        if column in out:
            raise SchemaError(f"--order is given twice for {column}")
        out[column] = spec
    return out


_qid_set = _model_option("--qid-set")
_lkc = _model_option("--lkc")
_alpha_k = _model_option("--alpha-k")
_privacy_loss = _model_option("--privacy-loss")
_delta_disclosure = _model_option("--delta-disclosure")
_delta_presence = _model_option("--delta-presence")


def _sensitive_spec(text: str) -> tuple[str, str | None]:
    """``COL`` or ``COL=HIERARCHY.csv`` (the hierarchy of hierarchical t-closeness)."""
    name, sep, path = text.partition("=")
    if not name or (sep and not path):
        raise argparse.ArgumentTypeError(
            f"--sensitive expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return name, path or None


def add_anonymization_options(p: argparse.ArgumentParser, required: bool = True,
                              qi_type=None) -> None:
    """The input, roles, privacy models and suppression options shared by ``anonymize`` and
    ``report``; without ``required`` INPUT and --qi are optional to the parser (``report
    --compare`` needs neither; the run checks)."""
    p.add_argument("input", nargs=None if required else "?",
                   help="CSV (delimiter detected, or --sep) or Parquet file")
    p.add_argument("--qi", action="append", type=qi_type or _qi_spec, required=required,
                   metavar="COL=HIERARCHY.csv" if qi_type is None else "COL[=HIERARCHY.csv]",
                   help="quasi-identifier and its ARX hierarchy")
    p.add_argument("--sensitive", action="append", default=[], type=_sensitive_spec,
                   metavar="COL[=HIERARCHY.csv]",
                   help="sensitive attribute; repeatable.  The models below refer to the first "
                   "one unless their value ends in @COLUMN; hierarchical t-closeness needs the "
                   "attribute's hierarchy")
    p.add_argument("--insensitive", action="append", default=[], metavar="COL")
    p.add_argument("--identifying", action="append", default=[], metavar="COL",
                   help="removed from the release")
    p.add_argument("--others", choices=OTHERS, default="error",
                   help="role of columns given none (default: error)")
    models = p.add_argument_group("privacy models (combinable, each repeatable)")
    models.add_argument("--k", type=int, default=None,
                        help="k-anonymity (optional when another model is given)")
    models.add_argument("--l-diversity", type=_l_diversity, action="append", default=[],
                        metavar="distinct:L|entropy:L|recursive:C,L[@COL]")
    models.add_argument("--t-closeness", type=_t_closeness, action="append", default=[],
                        metavar="equal:T|ordered:T|hierarchical:T[@COL]")
    models.add_argument("--order", type=_order_spec, action="append", default=[],
                        metavar="COL=lexical|numeric|V1,V2,...",
                        help="order of a sensitive attribute for --t-closeness ordered:T "
                        "(default, as ARX: numerically when every value is a number, "
                        "otherwise lexically as ARX's string type orders them)")
    models.add_argument("--alpha-k", type=_alpha_k, action="append", default=[],
                        metavar="ALPHA,K[@COL]", help="(alpha,k)-anonymity")
    models.add_argument("--delta-disclosure", type=_delta_disclosure, action="append",
                        default=[], metavar="DELTA[@COL]", help="delta-disclosure privacy")
    models.add_argument("--beta-likeness", type=_beta_likeness, action="append", default=[],
                        metavar="basic:B|enhanced:B[@COL]", help="beta-likeness")
    add_prior_option(models, "of --privacy-loss")
    models.add_argument("--privacy-loss", type=_privacy_loss, action="append", default=[],
                        metavar="EPSILON,ALPHA[@COL]",
                        help="largest distribution loss <= EPSILON and entropy loss (bits) "
                        "<= ALPHA per class, against the table's distribution")
    models.add_argument("--qid-set", type=_qid_set, action="append", default=[],
                        metavar="COL,COL,...",
                        help="k-anonymity (with --k) over this set of quasi-identifiers: with "
                        "--qid-set, --k applies to each given set instead of all QIDs")
    models.add_argument("--lkc", type=_lkc, action="append", default=[], metavar="L,K,C[@COL]",
                        help="LKC-privacy: every combination of at most L QID values is shared "
                        "by >= K records, confidence of each sensitive value <= C")
    models.add_argument("--population", metavar="FILE",
                        help="population table (CSV/Parquet) containing the input, for --k-map "
                        "and --delta-presence")
    models.add_argument("--k-map", type=int, action="append", default=[], metavar="K",
                        help="k-map: every released class matches >= K population records")
    models.add_argument("--delta-presence", type=_delta_presence, action="append", default=[],
                        metavar="DMIN,DMAX", help="delta-presence against --population")
    p.add_argument("--suppression", type=_fraction, default=0.0, metavar="S",
                   help="suppression limit, a fraction (0.05) or percentage (5%%)")
    p.add_argument("--suppressed", choices=SUPPRESSION_MODES, default="mark",
                   help="mark suppressed records with * (default) or drop them")
    p.add_argument("--sep", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--hierarchy-sep", default=";", help="hierarchy CSV delimiter")


#: the model options of the command line and their ``args`` names, in the models' order
_MODEL_OPTIONS = (("--lkc", "lkc"), ("--l-diversity", "l_diversity"),
                  ("--t-closeness", "t_closeness"), ("--alpha-k", "alpha_k"),
                  ("--delta-disclosure", "delta_disclosure"),
                  ("--beta-likeness", "beta_likeness"), ("--privacy-loss", "privacy_loss"),
                  ("--k-map", "k_map"), ("--delta-presence", "delta_presence"))


def _privacy_models(args, data=None) -> list:
    """The privacy models of the command line (:func:`gpuppdp.models.from_spec`; ``--k``
    without ``--qid-set`` is left to the Anonymizer); ``data`` (the input) orders the values
    of ordered t-closeness."""
    # deferred: the library loads in the run, not when the parser is built (fast --help)
    from ..analysis.checker import value_order
    from ..engine.encoding import SchemaError
    from ..hierarchy import Hierarchy
    from ..io import read_table
    from ..models import from_spec, spec_attribute

    names = [name for name, _ in args.sensitive]
    files = dict(args.sensitive)
    population = []
    orders = orders_by_column(args)
    ordered = {spec_attribute("--t-closeness", c, names) for d, _, c in args.t_closeness
               if d == "ordered"}
    for column in orders:
        if column not in ordered:
            raise SchemaError(f"--order {column}=...: no --t-closeness ordered:T uses {column}")

    def population_table():
        if not population:
            population.append(read_table(args.population, sep=args.sep))
        return population[0]

    context = {
        "sensitive": names,
        "hierarchy": lambda name: None if files[name] is None else
        Hierarchy.from_csv(files[name], sep=args.hierarchy_sep),
        "order": None if data is None else
        lambda name: value_order(data[name], orders.get(name, "auto"), attribute=name),
        "prior": read_prior(args.prior) if args.prior else None,
        "population": None if args.population is None else population_table}
    if context["prior"] is not None and not args.privacy_loss:
        raise ValueError("--prior is the prior of --privacy-loss; give --privacy-loss too")
    models = [from_spec("--qid-set", args.qid_set, k=args.k)] if args.qid_set else []
    for option, name in _MODEL_OPTIONS:
        models += [from_spec(option, spec, **context) for spec in getattr(args, name)]
    return models


def add_json_option(p, what: str, metavar: str = "OUT.json", required: bool = False) -> None:
    """``--json OUT.json``: write ``what`` as JSON."""
    p.add_argument("--json", default=None, metavar=metavar, required=required,
                   help=f"write {what} as JSON")


def add_prior_option(p, what: str = "of the privacy losses") -> None:
    """``--prior PRIOR.csv`` (see :func:`read_prior`), the prior ``what`` uses."""
    p.add_argument("--prior", default=None, metavar="PRIOR.csv",
                   help=f"prior distribution of the sensitive values {what}: a CSV of value and "
                   "probability per line (default: the table's own)")


def read_prior(path: str) -> dict:
    """A prior distribution from a CSV file of ``value, probability`` lines (a header line is
    allowed; delimiter detected): ``{value: probability}``, values as strings."""
    import csv

    from ..io import sniff_delimiter

    delimiter = sniff_delimiter(path, ";,\t|", default=",")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [row for row in csv.reader(fh, delimiter=delimiter) if any(f.strip() for f in row)]
    prior = {}
    for number, row in enumerate(rows, 1):
        if len(row) != 2:
            raise ValueError(f"--prior {path}, line {number}: expected value{delimiter}"
                             f"probability, got {len(row)} field(s)")
        try:
            prior[row[0]] = float(row[1])
        except ValueError:
            if number == 1:        # a header line
                continue
            raise ValueError(f"--prior {path}, line {number}: {row[1]!r} is not a "
                             "probability") from None
    if not prior:
        raise ValueError(f"--prior {path} holds no value")
    return prior


def anonymizer_from_args(args, *, read: bool = True) -> tuple:
    """``(data, Anonymizer)`` configured by :func:`add_anonymization_options`' options; with
    ``read=False`` the table is left on disk (``data`` is None) and only the sensitive
    columns are read when ordered t-closeness needs their values' order."""
    from ..anonymizer import Anonymizer
    from ..hierarchy import Hierarchy
    from ..io import read_table

    if read:
        data = values = read_table(args.input, sep=args.sep)
    else:
        data = values = None
        if any(distance == "ordered" for distance, _, _ in args.t_closeness):
            values = read_table(args.input, sep=args.sep,
                                columns=[name for name, _ in args.sensitive])
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi}
    anonymizer = Anonymizer(quasi_identifiers=hierarchies,
                            sensitive=[name for name, _ in args.sensitive],
                            insensitive=args.insensitive, identifying=args.identifying,
                            others=args.others, models=_privacy_models(args, values),
                            k=None if args.qid_set else args.k,
                            suppression_limit=args.suppression, metric=args.metric,
                            search=args.search, backend=args.backend,
                            suppression=args.suppressed, seed=args.seed,
                            time_limit=args.time_limit, prefer=args.prefer)
    return data, anonymizer


def format_summary(result: AnonymizationResult) -> str:
    s = result.summary()
    levels = ", ".join(f"{k}={v}" for k, v in s["transformation"].items())
    lines = [
        f"optimum            {levels}",
        f"information loss   {s['information_loss']:.10g} ({s['metric']} metric; "
        f"{s['information_loss_relative']:.2%} of the maximum)",
        f"classes            {s['equivalence_classes']} (smallest {s['smallest_class']}, "
        f"average {s['average_class_size']:.1f})",
        f"suppressed rows    {s['suppressed_records']} of {s['input_rows']} "
        f"(limit {s['suppression_limit']:.2%}); {s['released_records']} records released "
        + ("unsuppressed, suppressed ones marked *" if result.release.suppression == "mark"
           else "unsuppressed, suppressed ones dropped"),
        f"nodes evaluated    {s['nodes_evaluated']} of {s['lattice_size']} ({s['search']})",
        f"search time        {s['seconds']:.3f} s on {s['backend']} "
        f"(total {s['timings']['total']:.3f} s)",
    ]
    if s["heuristic"]:
        proven = s["stopped"] == "exhausted" and s.get("gap") == 0
        lines.append(f"heuristic result   {s['search']}, " + (
            "optimal: the search ran to the end" if proven else
            f"not proven optimal (stopped: {s['stopped']}): loss {s['gap']:.6g} above the "
            f"best lower bound {s['best_lower_bound']:.6g}"))
        if s.get("note"):
            lines.append(f"                   {s['note']}")
    return "\n".join(lines)


def run_files(args, plan: OutputPlan | None = None) -> dict:
    """The files of an ``anonymize``/``report`` run as given on the command line: ``input``,
    ``hierarchies`` (QID -> path), ``sensitive_hierarchies``, ``population`` and, where
    ``plan`` holds them, ``output`` (--output), ``json`` (--json) and ``html`` (--html)."""
    files = {"input": None if getattr(args, "input", None) is None else str(args.input),
             "hierarchies": {name: str(path) for name, path in getattr(args, "qi", [])},
             "sensitive_hierarchies": {name: str(path) for name, path in
                                       getattr(args, "sensitive", []) if path}}
    if getattr(args, "population", None):
        files["population"] = str(args.population)
    for key, option in (("output", "--output"), ("json", "--json"), ("html", "--html")):
        if plan is not None and option in plan:
            files[key] = str(plan.path(option))
    if getattr(args, "dask", None) and getattr(args, "output", None):  # written by Dask
        files["output"] = str(args.output)
    return {k: v for k, v in files.items() if v}


def run_summary(result: AnonymizationResult, args, plan: OutputPlan | None = None) -> dict:
    """The JSON summary of an ``anonymize`` run: ``result.summary()`` (record counts that add
    up, the loss with its scale, the models) plus what the run read and wrote: ``input``,
    ``output`` and ``files`` (:func:`run_files`), ``quasi_identifiers`` (level, highest level,
    hierarchy file, the most frequent released labels and one value through every level),
    ``removed_columns`` (identifying and dropped), ``identifying_columns``,
    ``dropped_columns``, ``insensitive_columns`` and ``sensitive_columns``; see
    :func:`gpuppdp.report.describe_release`."""
    from ..report.words import describe_release

    summary = result.summary()
    summary.update(describe_release(result, run_files(args, plan)))
    summary["suppression"] = result.release.suppression
    return summary


def release_plan(args, inputs=None, *, dataset: bool = False) -> OutputPlan:
    """The checked outputs of an anonymization: the released table (``--output``, when
    given; a Parquet dataset folder with ``dataset``); ``inputs`` default to every file the
    options name (table, hierarchies, population)."""
    from ..io import TABLE_SUFFIXES, OutputPlan

    if inputs is None:
        inputs = [args.input, *(path for _, path in args.qi),
                  *(path for _, path in args.sensitive if path), args.population]
    return OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES, dataset=dataset)


def print_release(result: AnonymizationResult, plan: OutputPlan) -> None:
    """The line naming the released table, once written."""
    if "--output" in plan:
        print(f"released table     {plan.path('--output')} "
              f"({result.release.rows_in_release} rows)")


def table_subcommand(subparsers, name: str, run, *, population: str | None = None,
                     json: str | None = None, **texts) -> argparse.ArgumentParser:
    """A subcommand reading one table: INPUT and --sep, with ``population`` (its help) a
    --population FILE and with ``json`` a --json OUT.json option; ``texts`` are ``help`` and
    ``description``.  See :func:`read_measured`."""
    p = subparsers.add_parser(name, **texts)
    p.add_argument("input", help="CSV (delimiter sniffed unless --sep) or Parquet file")
    p.add_argument("--sep", default=None, help="CSV delimiter of INPUT (default: sniffed)")
    if population is not None:
        p.add_argument("--population", default=None, metavar="FILE", help=population)
    if json is not None:
        p.add_argument("--json", default=None, metavar="OUT.json", help=json)
    p.set_defaults(func=run)
    return p


def read_measured(args, columns: list[str], population_columns: list[str],
                  inputs=()) -> tuple:
    """``(plan, data, population)`` of a :func:`table_subcommand` with --population and
    --json: the checked plan of --json (before anything is read; ``inputs`` are further files
    the run reads, such as hierarchies), INPUT's ``columns`` and --population's
    ``population_columns`` (None without --population)."""
    from ..io import OutputPlan, read_table

    plan = OutputPlan([args.input, args.population, *inputs]).add("--json", args.json)
    data = read_table(args.input, sep=args.sep, columns=columns)
    population = None if args.population is None else \
        read_table(args.population, sep=args.sep, columns=population_columns)
    return plan, data, population


def add_run_options(p: argparse.ArgumentParser,
                    json_help: str = "write the summary as JSON") -> None:
    """Metric, search, backend, seed, --json and --quiet."""
    p.add_argument("--metric", choices=METRICS, default="loss")
    p.add_argument("--search", choices=SEARCHES, default="auto",
                   help="auto (default): levels on a GPU, above 100,000 nodes, and on "
                   "tables over 2**20 rows with the loss metric and monotone models; flash "
                   "elsewhere; flash: ARX's algorithm and tie-break (flash and levels switch "
                   "to beam on lattices over 10**7 nodes); "
                   "exhaustive: every node; levels: the lattice level by level in large "
                   "batches, skipping what the bounds rule out (exhaustive's optimum and "
                   "tie-break); lightning (ARX's best-first) and beam (batched top-down beam "
                   "search): heuristics with a time limit; samarati: a k-minimal "
                   "generalization (binary search on the height), see --prefer")
    p.add_argument("--time-limit", type=_positive_seconds, default=None, metavar="SECONDS",
                   help="time budget of a heuristic search (default 30)")
    p.add_argument("--prefer", choices=PREFERENCES, default="height",
                   help="samarati: the k-minimal generalization released -- lowest height "
                   "(default), precision (lowest relative distance), classes (most), "
                   "suppression (least)")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the release's row permutation (default: OS entropy)")
    p.add_argument("--json", metavar="OUT.json", help=json_help)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
