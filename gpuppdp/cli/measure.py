"""What ``check`` and ``risk`` share to measure INPUT: their subcommand's common options
(:func:`measuring_options`), the QIDs of their ``--qi`` options (:func:`measured_qids`), the
values checked against the hierarchies given, INPUT read whole (:func:`read_measured`; into
GPU memory with cuDF, :func:`read_on_device`, where ``--gpu-io`` picks it) or
measured without reading it whole (:func:`measure_streamed`: in chunks, ``--chunk-rows``, or on
a Dask cluster, ``--dask``), both behind :func:`measure_input`.  The library is imported by the
functions, when a command runs."""

from __future__ import annotations

import os

from .generate import whole_number
from .options import add_measured_qi_option, add_measuring_options

__all__ = ["IN_MEMORY_BYTES", "measuring_options", "measure_input", "measure_streamed",
           "dask_refusals", "chunk_rows_for", "measured_qids", "on_device_whole",
           "read_on_device", "read_measured",
           "check_hierarchy_values", "known_labels", "check_known_labels"]


IN_MEMORY_BYTES = 256 * 2 ** 20
"""Inputs up to this size (CSV) or :data:`gpuppdp.io.CHUNK_ROWS` rows (Parquet) are read into
memory at once; larger ones are read in chunks (``--chunk-rows``)."""


def measuring_options(own, *, measured: str, backend: str, backend_help: str):
    """The options of ``check`` or ``risk`` (a table :class:`.options.Command`): ``--qi``, the
    command's ``own(p)`` options, ``--original``/``--perturbed`` and the options of
    :func:`.options.add_measuring_options` (``measured``, ``backend``, ``backend_help``)."""
    def options(p) -> None:
        add_measured_qi_option(p)
        own(p)
        add_original_options(p)
        add_measuring_options(p, measured, backend, backend_help)

    return options


def measure_input(args, qids: list[str], hierarchies: dict[str, str], columns: list[str],
                  streamed, whole, *, streamable: bool = True, extra: tuple = ()):
    """``(plan, result, perturbation)`` of ``check`` or ``risk``: ``streamed(chunks,
    weight_column)`` of INPUT's ``columns`` in chunks or on Dask (:func:`measure_streamed`)
    when ``--dask`` or :func:`chunk_rows_for` say so, and ``streamable`` (nor --population nor
    --perturbed); else ``whole(data, population)`` of INPUT read whole (``columns``, the
    --perturbed ones and ``extra``), its values checked against the hierarchies, with the
    measures of the --perturbed columns (None without)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..backend import get_backend

    perturbed = perturbed_columns(args)
    if on_device_whole(args, streamable and args.population is None and not perturbed):
        plan, data = read_on_device(args, columns, list(hierarchies.values()))
        check_known_labels(data, known_labels(hierarchies, args.hierarchy_sep), hierarchies, 0,
                           get_backend(args.backend))
        return plan, whole(data, None), None
    chunk_rows = chunk_rows_for(args) if streamable and args.population is None \
        and not perturbed else None
    if args.dask or chunk_rows is not None:  # memory follows the classes, not the rows
        return (*measure_streamed(args, columns, hierarchies, chunk_rows, streamed), None)
    plan, data, population = read_measured(
        args, list(dict.fromkeys([*columns, *perturbed, *extra])), qids,
        [*hierarchies.values(), *([args.original] if perturbed else [])])
    check_hierarchy_values(data, hierarchies, args.hierarchy_sep)
    result = whole(data, population)
    perturbation = perturbation_measures_of(args, data, get_backend(args.backend)) \
        if perturbed else None
    return plan, result, perturbation


def measure_streamed(args, columns: list[str], hierarchies: dict[str, str],
                     chunk_rows: int | None, measure):
    """``(plan, measure(chunks, weight_column))`` for a command that measures INPUT without
    reading it whole: its partitions reduced on the Dask cluster (``--dask``) to their distinct
    rows of ``columns`` with counts (:func:`gpuppdp.cluster.partition_counts`,
    ``weight_column=cluster.COUNT_COLUMN``), or its chunks of ``chunk_rows`` rows
    (``weight_column=None``); every chunk's QID values checked against their hierarchies, a
    chunk's rows numbered in the whole table when it holds rows rather than counts."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import OutputPlan, read_chunks
    from .options import encoding_of

    plan = OutputPlan([args.input, *hierarchies.values()]).add("--json", args.json)
    known = known_labels(hierarchies, args.hierarchy_sep)

    def checked(chunks, numbered: bool):
        rows = 0
        for chunk in chunks:
            check_known_labels(chunk, known, hierarchies, row_offset=rows if numbered else None)
            rows += len(chunk)
            yield chunk

    if args.dask:
        # deferred: Dask is optional
        from ..cluster import COUNT_COLUMN, client_for, partition_counts, read_dask

        with client_for(args.dask):
            encoding_of(args, "--dask")
            parts = partition_counts(read_dask(args.input, sep=args.sep, columns=columns),
                                     columns)
            return plan, measure(checked(parts, False), COUNT_COLUMN)
    assert chunk_rows is not None, "without --dask the caller gives a chunk size"
    chunks = read_chunks(args.input, sep=args.sep, columns=columns, rows=chunk_rows,
                         encoding=encoding_of(args))
    return plan, measure(checked(chunks, True), None)


def dask_refusals(args) -> None:
    """``--dask`` with ``--chunk-rows`` or ``--population``: an InputError saying why."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    if args.dask and args.chunk_rows is not None:
        raise InputError("--dask and --chunk-rows: the cluster reads INPUT in its partitions; "
                         "give one of them")
    if args.dask and args.population is not None:
        raise InputError("--dask and --population: the population measures match INPUT's own "
                         "rows, which are read into memory; leave out --dask")


def chunk_rows_for(args) -> int | None:
    """Rows per chunk for a run that reads INPUT in chunks, or None to read it into memory:
    ``--chunk-rows``, else chunks for inputs over 2^20 rows (Parquet) or 256 MiB (CSV)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import CHUNK_ROWS

    if args.chunk_rows is not None:
        return whole_number("--chunk-rows", args.chunk_rows, 1)
    if not os.path.isfile(args.input):
        return None                    # read_table says what is wrong with it
    if args.input.lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq  # deferred: keeps gpuppdp --help from importing PyArrow

        large = pq.read_metadata(args.input).num_rows > CHUNK_ROWS
    else:
        large = os.path.getsize(args.input) > IN_MEMORY_BYTES
    return CHUNK_ROWS if large else None


def measured_qids(args) -> tuple[list[str], dict[str, str]]:
    """The QID names of :func:`.options.add_measured_qi_option` (in order, each once) and their
    hierarchy files (those given)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    names, files = [], {}
    for group in args.qi:
        for items in group:
            for name, path in items:
                if name in names:
                    raise InputError(f"--qi: column given twice: {name}")
                names.append(name)
                if path is not None:
                    files[name] = path
    if not names:
        raise InputError("--qi needs at least one column name")
    return names, files


def on_device_whole(args, allowed: bool) -> bool:
    """Is INPUT read whole into GPU memory with cuDF (``--gpu-io``: :func:`.run.on_device`,
    :func:`.run.read_whole_on_device`)?  Never where the run needs its rows on the host
    (``allowed`` False: --population, --perturbed, the options that need the rows) or reads
    it with Dask; ``--gpu-io cudf`` there is an error."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from .run import read_whole_on_device

    if not allowed or args.dask:
        if args.gpu_io == "cudf":
            raise InputError("--gpu-io cudf: --population, --perturbed, --dask and the "
                             "options that need INPUT's rows read it on the host")
        return False
    return read_whole_on_device(args)


def read_on_device(args, columns: list[str], inputs=()) -> tuple:
    """``(plan, data)``: the checked plan of --json (as :func:`read_measured`) and INPUT's
    ``columns`` read with ``cudf.read_parquet`` into GPU memory."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    import cudf  # deferred: optional, and only a GPU run reads with it

    from ..io import OutputPlan, table_columns

    plan = OutputPlan([args.input, *inputs]).add("--json", args.json)
    table_columns(args.input)  # the file's checks: present, readable, names unique
    return plan, cudf.read_parquet(args.input, columns=columns)


def read_measured(args, columns: list[str], population_columns: list[str],
                  inputs=()) -> tuple:
    """``(plan, data, population)`` of a table :class:`.options.Command` with --population and
    --json: the checked plan of --json (before anything is read; ``inputs`` are further files
    the run reads, such as hierarchies), INPUT's ``columns`` and --population's
    ``population_columns`` (None without --population)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import OutputPlan, read_table

    plan = OutputPlan([args.input, args.population, *inputs]).add("--json", args.json)
    data = read_table(args.input, sep=args.sep, columns=columns, encoding=args.encoding)
    population = None if args.population is None else \
        read_table(args.population, sep=args.sep, columns=population_columns,
                   encoding=args.encoding)
    return plan, data, population


def check_hierarchy_values(data, files: dict[str, str], sep: str = ";") -> None:
    """Each column of ``files`` (QID -> hierarchy CSV) holds only labels of its hierarchy (at
    any level) or ``*``; otherwise an InputError naming the first values that are not and the
    first row holding one."""
    check_known_labels(data, known_labels(files, sep), files, row_offset=0)


def known_labels(files: dict[str, str], sep: str = ";") -> dict[str, set]:
    """Per QID of ``files`` (QID -> hierarchy CSV): every label of its hierarchy, and ``*``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..hierarchy import Hierarchy

    known = {}
    for name, path in files.items():
        h = Hierarchy.from_csv(path, name=name, sep=sep)
        known[name] = {"*"}.union(*(map(str, h.labels(lv)) for lv in range(h.height + 1)))
    return known


def check_known_labels(data, known: dict[str, set], files: dict[str, str],
                       row_offset: int | None = None, backend=None) -> None:
    """:func:`check_hierarchy_values` with the labels loaded (for a table read in chunks);
    with ``row_offset`` (the number of ``data``'s first row in the whole table) the error also
    names the first row holding a value that is not a label.  A cuDF frame is factorized on
    ``backend``'s device (:class:`~gpuppdp.engine.device_columns.Factorized`): only its
    distinct values come to the host."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    import numpy as np

    from ..core.codes import encode_column
    from ..engine.device_columns import Factorized
    from ..errors import InputError
    from ..io import is_cudf_frame
    from ..validation import format_values

    for name, path in files.items():
        if is_cudf_frame(data):
            column = Factorized(data[name], backend)
            values = column.values.astype(str).to_numpy(dtype=object)
        else:
            codes, values = encode_column(data[name], as_str=True)  # distinct values compared
        bad = np.flatnonzero([v not in known[name] for v in values.tolist()])
        if len(bad):
            if row_offset is None:
                first = None
            elif is_cudf_frame(data):
                marked = np.zeros(len(values), bool)
                marked[bad] = True
                first = row_offset + int(np.argmax(column.rows(backend, marked)))
            else:
                first = row_offset + int(np.flatnonzero(np.isin(codes, bad))[0])
            where = "" if first is None else f" (first at row {first})"
            error = InputError(f"--qi {name}={path}: {len(bad)} value(s) of {name!r} are not "
                               f"labels of the hierarchy{where}: "
                               f"{format_values(values[bad].tolist())}")
            error.row = first  # main names the file's line
            raise error


def add_original_options(p) -> None:
    """``--original FILE`` and ``--perturbed COL,COL`` of ``check``, ``risk`` and
    ``report``."""
    p.add_argument("--original", default=None, metavar="FILE",
                   help="the original table of a perturbed INPUT (the same records in the same "
                   "order): adds distance-based record linkage, interval disclosure and the "
                   "information loss of the --perturbed columns")
    p.add_argument("--perturbed", default=None, metavar="COL,COL",
                   type=lambda t: [c.strip() for c in t.split(",") if c.strip()],
                   help="the numeric columns that were perturbed (with --original)")


def perturbed_columns(args) -> list[str]:
    """``--perturbed``'s columns, checked with ``--original`` (none without them): the tables
    are compared record by record in memory, so not with ``--dask`` or ``--chunk-rows``
    (where the command has them)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError

    if (args.original is None) != (args.perturbed is None):
        raise InputError("--original and --perturbed go together: the original table and the "
                         "perturbed columns to compare")
    if args.original is None:
        return []
    if getattr(args, "dask", None) or getattr(args, "chunk_rows", None) is not None:
        raise InputError("--original compares the tables record by record in memory: leave "
                         "out --dask and --chunk-rows")
    return list(args.perturbed)


def perturbation_measures_of(args, released, backend) -> dict:
    """The measures (:func:`gpuppdp.perturb.perturbation_measures`) of the ``--perturbed``
    columns of ``released`` (INPUT, read) against the same columns of ``--original``."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..io import read_table
    from ..perturb import numeric_columns, perturbation_measures

    original = read_table(args.original, sep=args.sep, columns=args.perturbed,
                          encoding=args.encoding)
    if len(released) != len(original):
        raise InputError(f"--original has {len(original)} records, INPUT {len(released)}: "
                         "the same records, in the same order, are compared")
    out = perturbation_measures(numeric_columns(original, args.perturbed, "--original"),
                                numeric_columns(released, args.perturbed, "--perturbed"),
                                backend=backend)
    out["columns"] = list(args.perturbed)
    return out


def perturbation_line(measures: dict) -> str:
    """One line of :func:`perturbation_measures_of`'s figures for a printed report."""
    risk, utility = measures["risk"], measures["utility"]
    return (f"perturbed columns ({', '.join(measures['columns'])}) against the original: "
            f"record linkage {100 * risk['linkage_rate']:.4g} % of {risk['records_linked']} "
            f"records, interval disclosure "
            f"{100 * risk['interval_disclosure']['records_at_risk']:.4g} %; IL1s "
            f"{utility['il1s']:.4g}, propensity score {utility['propensity_score']:.4g}")

