"""The run of ``anonymize``, ``demo`` and ``report``: the Anonymizer the options configure
(:func:`anonymizer_from_args`), the checked outputs (:func:`release_plan`), the summary printed
(:func:`format_summary`, :func:`print_release`) and written as JSON (:func:`run_summary`).  The
library is imported by the functions, when a command runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common import _privacy_models

if TYPE_CHECKING:
    from ..anonymizer import AnonymizationResult
    from ..io import OutputPlan

__all__ = ["anonymizer_from_args", "format_summary", "run_files", "run_summary",
           "release_plan", "print_release"]


def anonymizer_from_args(args, *, read: bool = True) -> tuple:
    """``(data, Anonymizer)`` configured by the options of
    :func:`.common.add_anonymization_options`; with ``read=False`` the table is left on disk
    (``data`` is None) and only the sensitive columns are read when ordered t-closeness needs
    their values' order."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..anonymizer import Anonymizer
    from ..errors import InputError
    from ..hierarchy import Hierarchy
    from ..io import is_cudf_frame, read_table

    data = _read_input(args) if read else None
    values = data if read and not is_cudf_frame(data) else None  # a host table's values
    if values is None and any(distance == "ordered" for distance, _, _ in args.t_closeness):
        values = read_table(args.input, sep=args.sep, encoding=args.encoding,
                            columns=[name for name, _ in args.sensitive])
    hierarchies = {name: Hierarchy.from_csv(path, name=name, sep=args.hierarchy_sep)
                   for name, path in args.qi}
    # anonymize's ARX attribute aggregates (perturb's --microaggregate is MDAV: another dest)
    microaggregation = dict(getattr(args, "attribute_microaggregation", None) or [])
    for column in args.weights or {}:
        if column not in hierarchies and column not in microaggregation:
            raise InputError(f"--weights names {column!r}, which is not a --qi column "
                             f"(they are {', '.join(hierarchies)})")
    anonymizer = Anonymizer(quasi_identifiers=hierarchies,
                            sensitive=[name for name, _ in args.sensitive],
                            insensitive=args.insensitive, identifying=args.identifying,
                            others=args.others, models=_privacy_models(args, values),
                            k=None if args.qid_set else args.k,
                            suppression_limit=args.suppression, metric=args.metric,
                            attribute_weights=args.weights, gs_factor=args.gs_factor,
                            search=args.search, backend=args.backend,
                            suppressed=args.suppressed, seed=args.seed,
                            time_limit=args.time_limit, prefer=args.prefer,
                            microaggregation=microaggregation,
                            types=dict(getattr(args, "types", None) or []))
    return data, anonymizer


def _read_input(args):
    """INPUT in memory: a cuDF frame when ``--gpu-io`` picks cuDF (:func:`on_device`), else
    :func:`gpuppdp.io.read_table`'s pandas frame."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import read_table, table_columns

    if on_device(args, "cudf"):
        import cudf  # deferred: optional, and only a GPU run reads with it

        table_columns(args.input)  # the file's checks: present, readable, names unique
        return cudf.read_parquet(args.input)
    return read_table(args.input, sep=args.sep, encoding=args.encoding)


def read_whole_on_device(args) -> bool:
    """Does ``anonymize`` read a large Parquet INPUT (one it would read in chunks) whole into
    GPU memory?  Yes with ``--gpu-io cudf``, and with ``auto`` when cuDF can
    (:func:`on_device`) and twice the file's uncompressed size fits in the device's free
    memory; never with ``--chunk-rows`` or ``--parquet-dataset``, which ask for chunks."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..backend import get_backend

    if args.chunk_rows is not None or getattr(args, "parquet_dataset", False) or \
            not on_device(args, "cudf"):
        return False
    if args.gpu_io == "cudf":
        return True
    import pyarrow.parquet as pq  # deferred: keeps gpuppdp --help from importing PyArrow

    meta = pq.read_metadata(args.input)
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    free = get_backend(args.backend).free_memory()
    return free is None or 2 * size <= free


#: what to install for each package that reads a table into GPU memory
_GPU_FRAMES = {"cudf": "pip install 'gpuppdp[gpu-frames]'",
               "dask_cudf": "pip install 'gpuppdp[dask-gpu]'"}


def on_device(args, package: str) -> bool:
    """Does ``anonymize --gpu-io`` read INPUT with ``package`` (``cudf`` for a table in
    memory, ``dask_cudf`` with ``--dask``)?  ``--gpu-io cudf`` demands it (an error says what
    is missing), ``auto`` takes it when it can, ``arrow`` never (the host path).  Decided
    once per run and package (kept on ``args``)."""
    decided = vars(args).setdefault("_gpu_io_decided", {})
    if package not in decided:
        decided[package] = _decide_on_device(args, package)
    return decided[package]


def _decide_on_device(args, package: str) -> bool:
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    import importlib

    from ..backend import get_backend
    from ..errors import InputError
    from ..io import PARQUET_SUFFIXES

    choice = getattr(args, "gpu_io", "arrow")
    if choice == "arrow":
        return False
    reasons = []
    if not args.input.lower().endswith(PARQUET_SUFFIXES):
        reasons.append("INPUT is not a Parquet file")
    if getattr(args, "local_recoding", None) is not None or getattr(args, "local_suppression",
                                                                   False):
        reasons.append("--local-recoding and --local-suppression work on the host")
    if getattr(args, "attribute_microaggregation", None):
        reasons.append("--microaggregate works on the host")
    if not reasons and not get_backend(args.backend).is_gpu:
        reasons.append(f"the backend ({args.backend}) is not a GPU")
    if not reasons:
        try:
            importlib.import_module(package)
        except ImportError:
            reasons.append(f"{package} is not installed ({_GPU_FRAMES[package]})")
    if reasons and choice == "cudf":
        raise InputError(f"--gpu-io cudf: {'; '.join(reasons)}")
    return not reasons


def format_summary(result: AnonymizationResult) -> str:
    s = result.summary()
    levels = ", ".join(f"{k}={v}" for k, v in s["transformation"].items())
    lines = [
        f"{'transformation' if s['search'] == 'given' else 'optimum':<19}{levels}",
        f"information loss   {s['information_loss']:.10g} ({s['metric']} metric"
        + ("" if s["information_loss_relative"] is None else
           f"; {s['information_loss_relative']:.2%} of the maximum") + ")",
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
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..report.words import describe_release

    summary = result.summary()
    summary.update(describe_release(result, run_files(args, plan)))
    summary["suppression"] = result.release.suppression
    return summary


def release_plan(args, inputs=None, *, dataset: bool = False) -> OutputPlan:
    """The checked outputs of an anonymization: the released table (``--output``, when
    given; a Parquet dataset folder with ``dataset``); ``inputs`` default to every file the
    options name (table, hierarchies, population, the --original of a perturbed table)."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..io import TABLE_SUFFIXES, OutputPlan

    if inputs is None:
        inputs = [args.input, *(path for _, path in args.qi),
                  *(path for _, path in args.sensitive if path), args.population,
                  getattr(args, "original", None)]
    return OutputPlan(inputs).add("--output", args.output, TABLE_SUFFIXES, dataset=dataset)


def print_release(result: AnonymizationResult, plan: OutputPlan) -> None:
    """The line naming the released table, once written."""
    if "--output" in plan:
        print(f"released table     {plan.path('--output')} "
              f"({result.release.rows_in_release} rows)")
