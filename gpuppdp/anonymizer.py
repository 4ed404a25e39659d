"""The public API: configure one :class:`Anonymizer`, call :meth:`Anonymizer.fit`.

>>> from gpuppdp import Anonymizer, datasets                                # doctest: +SKIP
>>> data, hierarchies = datasets.adult()                                   # doctest: +SKIP
>>> result = Anonymizer(quasi_identifiers=hierarchies, k=5,
...                     suppression_limit=0.05).fit(data)                  # doctest: +SKIP
>>> result.transformation, result.information_loss                        # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import pandas as pd

from .errors import UserError
from . import kernels
from .backend import Backend, get_backend
from .engine.encoding import EncodedTable, Role, Schema, SchemaError, encode, encode_chunks
from .engine.evaluate import Evaluator, LatticeOracle, NodeStats
from .engine.lattice import Lattice
from .engine.metrics import Metric, make_metric
from .engine.search import PREFERENCES, SEARCHES, SearchResult, make_search
from .engine.transform import (SUPPRESSION_MODES, Release, RowBuckets, release,
                               release_buckets)
from .hierarchy import Hierarchy
from .models import KAnonymity, PrivacyModel, Requirement
from .report import write_report
from .report.words import models_text
from .validation import check_int, check_number, format_values

__all__ = ["Anonymizer", "AnonymizationResult", "NoSolutionError"]


class NoSolutionError(UserError, RuntimeError):
    """No lattice node satisfies the privacy models within the suppression limit."""


def _hierarchy(name: str, value) -> Hierarchy:
    if isinstance(value, Hierarchy):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Hierarchy.from_csv(value, name=name)
    if value is None:
        raise SchemaError(f"quasi-identifier {name!r} has no hierarchy")
    raise SchemaError(f"quasi-identifier {name!r}: expected a Hierarchy or a CSV path, got "
                      f"{type(value).__name__}")


def _spill_folder(output) -> str | None:
    """Where a chunked release keeps its bucket files: the output's folder (the same disk),
    or the system's temporary folder when the output is a device or pipe."""
    path = os.path.realpath(output)
    return os.path.dirname(path) if not os.path.exists(path) or os.path.isfile(path) else None


@dataclass
class AnonymizationResult:
    """What :meth:`Anonymizer.fit` found.

    ``transformation`` maps each QID (in table order) to its level; ``node`` holds the optimum's
    statistics (classes, suppressed, smallest class, AECS, loss); ``release`` the released table;
    ``timings`` seconds per step (``search`` excludes encoding and release; the CLI adds
    ``kernel load``, its wait for the compiled kernels it loads from Numba's cache while the
    input is read);
    ``evaluated_nodes`` the results of the nodes the search evaluated, in node-id order.
    """

    transformation: dict[str, int]
    information_loss: float
    metric: str
    node: dict
    search: SearchResult
    release: Release
    timings: dict[str, float]
    lattice_size: int
    models: list[dict]
    suppression_limit: float
    _evaluator: Evaluator = field(repr=False)
    _anonymizer: "Anonymizer" = field(repr=False)
    evaluated_nodes: NodeStats | None = field(default=None, repr=False)
    _data: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def released(self) -> pd.DataFrame:
        """The released table (for :meth:`Anonymizer.fit_file`, read it from
        ``release.path``)."""
        if self.release.data is None:
            raise ValueError(f"the release was written to {self.release.path}; read it from "
                             "there (gpuppdp.io.read_table)")
        return self.release.data

    @property
    def equivalence_classes(self) -> int:
        return int(self.node["classes"])

    @property
    def suppressed_records(self) -> int:
        return int(self.node["suppressed"])

    @property
    def nodes_evaluated(self) -> int:
        return self.search.nodes_evaluated

    @property
    def heuristic(self) -> dict:
        """``{"heuristic": False}`` for an optimal search; for a heuristic one also its time
        limit, the best lower bound of the nodes it left unexplored, the gap of the loss to
        it (absolute and relative), why it stopped and, when ``flash`` was switched, why."""
        d = self.search.details
        if not d.get("heuristic"):
            return {"heuristic": False}
        keys = ("time_limit", "stopped", "best_lower_bound", "gap", "relative_gap", "note")
        return {"heuristic": True, **{k: d[k] for k in keys if k in d}}

    def summary(self) -> dict:
        """Machine-readable summary (key names as in ARX's reference results).

        Record counts: ``input_rows`` = ``released_records`` (not suppressed) +
        ``suppressed_records``; ``rows_in_release`` is the number of rows of the released
        table (``input_rows`` when suppressed records are marked with ``*``,
        ``released_records`` when they are dropped), so ``rows_in_release ==
        released_records + suppressed_records`` with ``mark``.  ``released_rows`` is the older
        name of ``released_records``.  ``information_loss_relative`` is the loss as a share of
        the metric's maximum (0: nothing generalized or suppressed, 1: every value at the top
        of its hierarchy or suppressed), ``information_loss_scale`` says so in words.
        """
        n = self.release.input_rows
        if self.metric == "discernibility":  # sum |E|^2 + n per suppressed record <= n^2
            relative = self.information_loss / float(n * n) if n else 0.0
            scale = (f"sum of squared class sizes plus {n} per suppressed record; maximum "
                     f"{n * n} (every record in one class or suppressed)")
        else:
            relative = self.information_loss
            scale = ("share of the maximum: 0 = no value generalized or suppressed, 1 = every "
                     "value at the top of its hierarchy or suppressed")
        return {
            "transformation": dict(self.transformation),
            "information_loss": self.information_loss,
            "information_loss_relative": relative,
            "information_loss_scale": scale,
            "metric": self.metric,
            "rows_in_release": self.release.rows_in_release,
            "released_records": self.release.released_rows,
            "equivalence_classes": self.equivalence_classes,
            "suppressed_records": self.suppressed_records,
            "smallest_class": int(self.node["smallest_class"]),
            "average_class_size": float(self.node["aecs"]),
            "generalization_height": int(self.node["height"]),
            "released_rows": self.release.released_rows,
            "input_rows": self.release.input_rows,
            "nodes_evaluated": self.nodes_evaluated,
            "lattice_size": self.lattice_size,
            "search": self.search.strategy,
            **self.heuristic,
            "models": self.models,
            "suppression_limit": self.suppression_limit,
            "seconds": self.search.seconds,
            "timings": dict(self.timings),
            "backend": self._evaluator.backend.name,
        }

    def _repr_html_(self) -> str:
        from .notebook import result_html  # noqa: PLC0415

        return result_html(self)

    def report(self, path, *, json_path=None, **options):
        """Write the HTML report of this anonymization to ``path`` and its figures as JSON to
        ``json_path`` (default: ``path`` with suffix ``.json``); ``options`` go to
        :func:`gpuppdp.report.build_report`.  Returns the two paths."""
        if self._data is None:
            raise ValueError("this result does not hold its input table; call "
                             "gpuppdp.report.write_report(result, data, path)")
        return write_report(self, self._data, path, json_path=json_path, **options)

    def apply(self, data: pd.DataFrame, *, seed=None) -> Release:
        """Apply the chosen generalization to new data of the same schema; classes of the new
        data that fail the privacy models are suppressed (the count is on the result)."""
        anon = self._anonymizer
        evaluator = anon._evaluator_for(data)
        return release(data, evaluator, list(self.transformation.values()),
                       suppression=anon.suppression, seed=seed)


class Anonymizer:
    """Optimal full-domain generalization with record suppression (ARX-compatible).

    Parameters
    ----------
    quasi_identifiers : mapping column -> Hierarchy or path of an ARX hierarchy CSV
    sensitive, insensitive, identifying : column names
        Identifying columns are removed from every release.
    others : {"error", "insensitive", "drop"}
        Role of the columns not named anywhere; ``"error"`` (default) refuses them.
    k : int, optional
        Shortcut for ``KAnonymity(k)``.
    models : sequence of PrivacyModel
        Further privacy models (e.g. ``DistinctLDiversity("occupation", 3)``).
    suppression_limit : float in [0, 1]
        Largest share of records that may be suppressed.
    metric : {"loss", "precision", "discernibility"} or Metric
    search : {"auto", "flash", "exhaustive", "levels", "lightning", "beam", "samarati"}
        ``flash`` is ARX's algorithm (same optimum, same tie-break as ARX); ``exhaustive``
        evaluates every node in batches (ties: lower height, then smaller node id);
        ``levels`` evaluates the lattice level by level in batches, skipping the nodes the
        bounds rule out (exhaustive's optimum and tie-break); ``auto`` (default) is
        ``levels`` on a GPU backend, on lattices over 100,000 nodes (ARX's limit for an
        optimal search) and on tables over 2^20 rows with the loss metric and privacy
        monotone under suppression, ``flash`` otherwise
        (:func:`gpuppdp.engine.search.auto_search`);
        ``lightning`` (ARX's best-first heuristic) and ``beam`` (batched top-down beam search)
        are heuristics for lattices too large to walk, run for ``time_limit`` seconds (see
        :mod:`gpuppdp.engine.search.heuristic`).  ``flash`` or ``levels`` on a lattice of more than
        ``OPTIMAL_SEARCH_LIMIT`` (10**7) nodes switches to the heuristic, with a warning.
    time_limit : float, optional
        Seconds a heuristic search may run (default 30).
    prefer : {"height", "precision", "classes", "suppression"}
        With ``search="samarati"``: which k-minimal generalization to release (Samarati's
        preference policies, see :mod:`gpuppdp.engine.search.samarati`).
    backend : {"auto", "cpu", "gpu"} or Backend
    suppression : {"mark", "drop"}
        How suppressed records appear in the release (``*`` in the QIDs, or removed).
    seed : int, optional
        Seed of the release's row permutation (default: OS entropy).
    """

    def __init__(self, *, quasi_identifiers: Mapping[str, Hierarchy | str], sensitive=(),
                 insensitive=(), identifying=(), others: str = "error", k: int | None = None,
                 models: Sequence[PrivacyModel] = (), suppression_limit: float = 0.0,
                 metric: str | Metric = "loss", search: str = "auto",
                 backend: str | Backend = "auto", suppression: str = "mark", seed=None,
                 time_limit: float | None = None, prefer: str = "height"):
        if not isinstance(quasi_identifiers, Mapping) or not quasi_identifiers:
            raise SchemaError("quasi_identifiers must be a non-empty mapping column -> hierarchy")
        hierarchies = {n: _hierarchy(n, h) for n, h in quasi_identifiers.items()}
        for name in ("sensitive", "insensitive", "identifying"):
            value = locals()[name]
            if isinstance(value, str):
                raise TypeError(f"{name} must be a list of column names, got the string {value!r}")
        self.schema = Schema(hierarchies, sensitive, insensitive, identifying, others)
        self.models = ([KAnonymity(k)] if k is not None else []) + list(models)
        if not self.models:
            raise ValueError("no privacy model given: pass k=... and/or models=[...] "
                             "(CLI: --k, --l-diversity, --t-closeness)")
        for m in self.models:
            if not isinstance(m, PrivacyModel):
                raise TypeError(f"models must be PrivacyModel instances, got {m!r}")
        referred = {m.sensitive_attribute for m in self.models
                    if Requirement.SENSITIVE_HISTOGRAM in m.requires}
        undeclared = sorted(referred - set(self.schema.sensitive))
        if undeclared:
            raise SchemaError(f"models refer to {format_values(undeclared)}: declare them "
                              "sensitive (sensitive=[...])")
        #: the sensitive attributes the models refer to, in the schema's order
        self.sensitive_attributes = [c for c in self.schema.sensitive if c in referred]
        self.suppression_limit = check_number("suppression_limit", suppression_limit, 0.0, 1.0)
        self.metric = make_metric(metric)
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
        self.search = search
        if prefer not in PREFERENCES:
            raise ValueError(f"prefer must be one of {PREFERENCES}, got {prefer!r}")
        self.prefer = prefer
        self.time_limit = None if time_limit is None else check_number(
            "time_limit", time_limit, 0.001)
        if suppression not in SUPPRESSION_MODES:
            raise ValueError(f"suppression must be one of {SUPPRESSION_MODES}, got "
                             f"{suppression!r}")
        self.suppression = suppression
        self.backend = get_backend(backend)
        self.seed = seed

    def _encode(self, data: pd.DataFrame) -> EncodedTable:
        return encode(data, self.schema, self.backend, self.sensitive_attributes)

    def _evaluator_for(self, data: pd.DataFrame) -> Evaluator:
        return self._evaluator(self._encode(data))

    def _evaluator(self, enc: EncodedTable) -> Evaluator:
        for m in self.models:
            if m.min_class_size is not None and m.min_class_size > enc.n_rows:
                raise ValueError(f"{m!r} needs classes of {m.min_class_size} records but the "
                                 f"table has only {enc.n_rows} rows")
        return Evaluator(enc, self.models, self.metric, self.suppression_limit)

    def _search(self, evaluator: Evaluator, progress) -> tuple:
        """``(found, lattice, oracle, levels)``: the search's result and the optimum's levels;
        :class:`NoSolutionError` when no node is anonymous."""
        lattice = Lattice(evaluator.encoded.heights)
        oracle = LatticeOracle(evaluator, lattice)
        search = make_search(self.search, evaluator, lattice_size=lattice.size,
                             time_limit=self.time_limit, prefer=self.prefer)
        if getattr(search, "note", None):
            warnings.warn(search.note, stacklevel=3)
        with kernels.reused_scratch():  # the roll-ups' scratch, node after node
            found = search.run(oracle, progress)
        if found.optimum is None:
            raise NoSolutionError(
                f"no transformation satisfies {models_text([m.describe() for m in self.models])}"
                f" with at most "
                f"{self.suppression_limit:.2%} suppressed records ({evaluator.max_suppressed} "
                f"of {evaluator.encoded.n_rows}); allow more suppression or relax the models")
        return found, lattice, oracle, lattice.levels_of([found.optimum])[0]

    def _result(self, evaluator: Evaluator, searched: tuple, rel: Release, times: list,
                data: pd.DataFrame | None) -> AnonymizationResult:
        found, lattice, oracle, levels = searched
        t0, t1, t2, t3 = times
        return AnonymizationResult(
            transformation={n: int(v) for n, v in zip(evaluator.encoded.qi_names, levels)},
            information_loss=float(found.optimum_stats["information_loss"]),
            metric=self.metric.name, node=found.optimum_stats, search=found, release=rel,
            timings={"encode": t1 - t0, "search": t2 - t1, "release": t3 - t2,
                     "total": t3 - t0},
            lattice_size=lattice.size, models=[m.describe() for m in self.models],
            suppression_limit=self.suppression_limit, _evaluator=evaluator, _anonymizer=self,
            evaluated_nodes=found.details.get("all_stats") or oracle.evaluated(), _data=data)

    def fit(self, data: pd.DataFrame, *, progress: Callable[[int, int], None] | None = None
            ) -> AnonymizationResult:
        """Search the optimal node for ``data`` and release it.

        ``data`` is a pandas DataFrame, or a Dask DataFrame (:mod:`gpuppdp.cluster`: the
        partitions are encoded and reduced on the workers, the search runs here, and the
        release is a lazy Dask DataFrame, written with its ``to_parquet``).
        Raises :class:`NoSolutionError` when no node is anonymous.
        """
        from . import cluster  # noqa: PLC0415 - imports Dask only for a Dask frame

        t0 = time.perf_counter()
        on_dask = cluster.is_dask_frame(data)
        if on_dask:
            evaluator = self._evaluator(cluster.encode_dask(data, self.schema, self.backend,
                                                            self.sensitive_attributes))
        else:
            evaluator = self._evaluator_for(data)
        t1 = time.perf_counter()
        searched = self._search(evaluator, progress)
        t2 = time.perf_counter()
        if on_dask:
            rel = cluster.release_dask(data, evaluator, searched[3],
                                       int(searched[0].optimum_stats["suppressed"]),
                                       suppression=self.suppression, seed=self.seed)
        else:
            rel = release(data, evaluator, searched[3], suppression=self.suppression,
                          seed=self.seed)
        return self._result(evaluator, searched, rel, [t0, t1, t2, time.perf_counter()],
                            None if on_dask else data)

    def fit_file(self, path: str | os.PathLike, output: str | os.PathLike, *,
                 sep: str | None = None, output_sep: str | None = None,
                 chunk_rows: int | None = None, dataset: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> AnonymizationResult:
        """Anonymize a CSV or Parquet file of any size out of core and write the release to
        ``output`` (``.csv`` or ``.parquet``; with ``dataset=True``, a Parquet dataset folder
        ending in ``.parquet``, one file per bucket, written by the host threads at once).

        The file is read once, ``chunk_rows`` rows at a time (default
        :data:`gpuppdp.io.CHUNK_ROWS`), identifying columns left out: its QID and sensitive
        columns are encoded chunk by chunk into the bottom frequency set
        (:func:`~gpuppdp.engine.encoding.encode_chunks`), on which the search runs, while
        every kept row goes, QIDs as leaf codes, to a randomly drawn bucket file in
        ``output``'s folder (:class:`~gpuppdp.engine.transform.RowBuckets`); each bucket is
        then generalized, shuffled and written (:func:`~gpuppdp.engine.transform.
        release_buckets`), so the rows come out in a uniformly random order.  Host work runs on
        :func:`~gpuppdp.core.pipeline.host_threads` threads; a seed gives the same release
        whatever their number.  Memory holds a few chunks and the frequency sets, whatever the
        row count.  The optimum, loss and counts are those :meth:`fit` finds on the whole
        table; the release goes to a temporary file renamed onto ``output`` at the end, so a
        failed or interrupted run leaves no partial output.  A CSV release uses ``output_sep``
        (default: the input's delimiter, ``;`` after Parquet).  The result's
        ``release.path`` is ``output``; it holds no table in memory.
        """
        from .io import (  # noqa: PLC0415
            CHUNK_ROWS,
            TABLE_SUFFIXES,
            DatasetWriter,
            OutputPlan,
            TableWriter,
            estimated_rows,
            read_chunks,
            table_columns,
            table_delimiter,
        )

        chunk_rows = check_int("chunk_rows", CHUNK_ROWS if chunk_rows is None else chunk_rows, 1)
        plan = OutputPlan([path]).add("output", output, TABLE_SUFFIXES, dataset=dataset)
        t0 = time.perf_counter()
        columns = table_columns(path, sep=sep)
        roles = self.schema.resolve(columns)
        kept = [c for c in columns if roles[c] not in (None, Role.IDENTIFYING)]
        qi_names = [c for c in columns if roles[c] is Role.QUASI_IDENTIFYING]
        with plan.writing() as out, RowBuckets(
                estimated_rows(path), chunk_rows, qi_names, spill_dir=_spill_folder(output),
                seed=self.seed) as buckets:
            enc = encode_chunks(read_chunks(path, sep=sep, columns=kept, rows=chunk_rows,
                                            lazy=True),
                                columns, self.schema, self.backend, self.sensitive_attributes,
                                tee=buckets.scatter)
            evaluator = self._evaluator(enc)
            t1 = time.perf_counter()
            searched = self._search(evaluator, progress)
            t2 = time.perf_counter()
            with (DatasetWriter(out.path("output")) if dataset else TableWriter(
                    out.path("output"), sep=output_sep or table_delimiter(path, sep))) as writer:
                rel = release_buckets(buckets, evaluator, searched[3], writer.write_prepared,
                                      prepare=writer.prepare, suppression=self.suppression)
        rel.path = os.fspath(output)
        return self._result(evaluator, searched, rel, [t0, t1, t2, time.perf_counter()], None)
