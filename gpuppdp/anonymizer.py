"""The public API: configure one :class:`Anonymizer`, call :meth:`Anonymizer.fit`.

>>> from gpuppdp import Anonymizer, datasets                                # doctest: +SKIP
>>> data, hierarchies = datasets.adult()                                   # doctest: +SKIP
>>> result = Anonymizer(quasi_identifiers=hierarchies, k=5,
...                     suppression_limit=0.05).fit(data)                  # doctest: +SKIP
>>> result.transformation, result.information_loss                        # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from . import cluster, device_frames, kernels
from .backend import BACKEND_CHOICES, Backend, get_backend
from .engine.chunked_encoding import encode_chunks
from .engine.encoding import (EncodedTable, Role, Schema, SchemaError, check_hierarchy, encode,
                              hierarchy_of)
from .engine.evaluate import (Evaluator, LatticeOracle, NodeStats, check_models, checked_evaluator,
                              referred_sensitive)
from .engine.lattice import Lattice, node_levels
from .engine.metrics import Metric, make_metric
from .engine.microaggregation import check_microaggregation
from .engine.search import PREFERENCES, SEARCHES, SearchResult, make_search
from .engine.transform import SUPPRESSION_MODES, Release, RowBuckets, release, release_buckets
from .errors import InputError, InputTypeError, UserError
from .core.datatypes import check_types
from .hierarchy import Hierarchy
from .io import (CHUNK_ROWS, TABLE_SUFFIXES, DatasetWriter, OutputPlan, TableWriter,
                 estimated_rows, host_frame, is_cudf_frame, jsonable, read_chunks, table_columns,
                 table_delimiter)
from .models import KAnonymity, PrivacyModel
from .notebook import result_html
from .validation import check_int, check_number
from .words import loss_scale, models_text

__all__ = ["Anonymizer", "AnonymizationResult", "NoSolutionError"]


class NoSolutionError(UserError, RuntimeError):
    """No lattice node satisfies the privacy models within the suppression limit."""


def _models(k, models, sensitive) -> list[PrivacyModel]:
    """``KAnonymity(k)`` (when ``k`` is given) and ``models``, checked against the declared
    ``sensitive`` attributes."""
    return check_models(([KAnonymity(k)] if k is not None else []) + list(models), sensitive,
                        " (CLI: --k, --l-diversity, --t-closeness)")


def _same(value, default) -> bool:
    """Is a parameter at its default (empty sequences alike)?"""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return value is default or (type(value) is type(default) and value == default)


def _spill_folder(output) -> str | None:
    """Where a chunked release keeps its bucket files: the output's folder (the same disk),
    or the system's temporary folder when the output is a device or pipe."""
    path = os.path.realpath(output)
    return os.path.dirname(path) if not os.path.exists(path) or os.path.isfile(path) else None


class _Setup(NamedTuple):
    """What a fit works with, made from the anonymizer's parameters when it starts: the
    schema (hierarchies read), the models (``KAnonymity(k)`` first), the metric, the backend
    and the sensitive attributes the models refer to (in the schema's order)."""

    schema: Schema
    models: list
    metric: Metric
    backend: Backend
    sensitive: list[str]

    def evaluator(self, enc: EncodedTable, suppression_limit: float) -> Evaluator:
        """The evaluator of ``enc`` (:func:`~gpuppdp.engine.evaluate.checked_evaluator`)."""
        return checked_evaluator(enc, self.models, self.metric, suppression_limit)


@dataclass
class AnonymizationResult:
    """What :meth:`Anonymizer.fit` found.

    ``transformation`` maps each QID (in table order) to its level; ``node`` holds the optimum's
    statistics (classes, suppressed, smallest class, AECS, loss); ``release`` the released table;
    ``timings`` seconds per step (``search`` excludes encoding and release; the CLI adds
    ``kernel load``, its wait for the compiled kernels it loads from Numba's cache while the
    input is read); ``evaluated_nodes`` the results of the nodes the search evaluated, in
    node-id order; :attr:`schema` the roles and hierarchies, :attr:`privacy_models` the
    models (``k`` included) the release satisfies.

    A result pickles without its input table (``pickle.dumps(result)``): the encoded table
    stays behind, so an unpickled result can :meth:`apply`, :meth:`summary`, :meth:`to_dict`
    and :meth:`save`, but the report (:func:`gpuppdp.report.write_report`) needs the result
    :meth:`Anonymizer.fit` returned.
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
    _setup: _Setup = field(repr=False)
    _evaluator: Evaluator | None = field(repr=False)
    evaluated_nodes: NodeStats | None = field(default=None, repr=False)

    def __getstate__(self) -> dict:
        """The state without the evaluator (the encoded input table, device arrays)."""
        return {**self.__dict__, "_evaluator": None}

    @property
    def schema(self) -> Schema:
        """The roles of the columns and the hierarchies of the quasi-identifiers."""
        return self._setup.schema

    @property
    def privacy_models(self) -> list[PrivacyModel]:
        """The privacy models the release satisfies (``KAnonymity(k)`` first when ``k`` was
        given)."""
        return list(self._setup.models)

    @property
    def released(self) -> pd.DataFrame:
        """The released table (for :meth:`Anonymizer.fit_file`, read it from
        ``release.path``)."""
        if self.release.data is None:
            raise InputError(f"the release was written to {self.release.path}; read it from "
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
        divisor, scale = loss_scale(self.metric, n)
        return {
            "transformation": dict(self.transformation),
            "information_loss": self.information_loss,
            "information_loss_relative": (None if divisor is None else
                                          self.information_loss / divisor if n else 0.0),
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
            "backend": self._setup.backend.name,
        }

    def to_dict(self) -> dict:
        """Plain JSON values: the :meth:`summary` (the transformation included) and
        ``release``, the release's counts (``input_rows``, ``released_rows``,
        ``suppressed_rows``, ``rows_in_release``), its ``suppressed`` mode and ``path``."""
        rel = self.release
        return jsonable({**self.summary(), "release": {
            "input_rows": rel.input_rows, "released_rows": rel.released_rows,
            "suppressed_rows": rel.suppressed_rows, "rows_in_release": rel.rows_in_release,
            "suppressed": rel.suppression, "path": rel.path}})

    def save(self, path: str | os.PathLike, *, json_path: str | os.PathLike | None = None,
             sep: str = ";") -> tuple[Path, Path]:
        """Write the released table to ``path`` (``.csv`` with ``sep``, or ``.parquet``) and
        :meth:`to_dict` as JSON to ``json_path`` (default: ``path`` with the suffix
        ``.json``); both are checked before writing and replaced together
        (:class:`gpuppdp.io.OutputPlan`).  Returns both paths.  A result of
        :meth:`Anonymizer.fit_file` has no table to save: its release is ``release.path``."""
        table = self.released
        out_path = Path(path)
        json_file = out_path.with_suffix(".json") if json_path is None else Path(json_path)
        plan = OutputPlan().add("path", out_path, TABLE_SUFFIXES).add("json_path", json_file)
        with plan.writing() as out:
            out.write_table("path", table, sep=sep)
            out.write_json("json_path", self.to_dict())
        return out_path, json_file

    def _repr_html_(self) -> str:
        return result_html(self)

    def local_recoding(self, data: pd.DataFrame, records_per_iteration: float = 0.01, *,
                       search: str | None = None, suppressed: str | None = None, seed=None):
        """ARX's iterative local recoding (``optimizeIterativeFast``) of this result's
        suppressed records; ``data`` is the table :meth:`Anonymizer.fit` was given.  See
        :func:`gpuppdp.algorithms.local_recoding.local_recoding`."""
        from .algorithms.local_recoding import local_recoding  # deferred: it imports this
        return local_recoding(self, data, records_per_iteration, search=search,
                              suppressed=suppressed, seed=seed)

    def apply(self, data: pd.DataFrame, *, seed=None) -> pd.DataFrame:
        """Apply the chosen generalization to new data of the same schema; classes of the new
        data that fail the privacy models are suppressed.  Returns the released table; its
        ``attrs`` hold the counts (``input_rows``, ``suppressed_rows``, ``released_rows``)
        and the ``suppressed`` mode."""
        setup = self._setup
        evaluator = setup.evaluator(encode(data, setup.schema, setup.backend, setup.sensitive),
                                    self.suppression_limit)
        rel = release(data, evaluator, list(self.transformation.values()),
                      suppression=self.release.suppression, seed=seed)
        table = rel.data
        assert table is not None  # (a release in memory)
        table.attrs.update(input_rows=rel.input_rows, suppressed_rows=rel.suppressed_rows,
                           released_rows=rel.released_rows, suppressed=rel.suppression)
        return table


_NOT_GIVEN = object()


def _on_backend(data, backend: Backend):
    """``data`` as the backend takes it: a cuDF frame stays on a GPU backend and is copied to
    the host once (``to_pandas``) for the CPU (:mod:`gpuppdp.device_frames`)."""
    return data if backend.is_gpu else host_frame(data)


def _encode(data, setup: "_Setup") -> EncodedTable:
    """A pandas or cuDF table encoded under ``setup``."""
    return device_frames.encode_frame(data, setup.schema, setup.backend, setup.sensitive)


def _release(data, evaluator: Evaluator, levels, suppressed: str, seed) -> Release:
    """The release of node ``levels`` of a pandas or cuDF table (a frame of the same kind)."""
    if is_cudf_frame(data):
        return device_frames.release_cudf(data, evaluator, levels, suppression=suppressed,
                                          seed=seed)
    return release(data, evaluator, levels, suppression=suppressed, seed=seed)


class Anonymizer:
    """Optimal full-domain generalization with record suppression (ARX-compatible).

    As a scikit-learn estimator, the constructor only checks and stores its parameters;
    hierarchy files are read and the backend is chosen by :meth:`fit` (and
    :meth:`fit_file`).

    Parameters
    ----------
    quasi_identifiers : mapping column -> Hierarchy or path of an ARX hierarchy CSV
        The quasi-identifiers in every public function of gpuppdp are a mapping from column
        name to hierarchy (:mod:`gpuppdp.analysis` takes their names, a sequence of str).
    sensitive, insensitive, identifying : sequence of str (column names)
        Identifying columns are removed from every release.  ``sensitive`` is a sequence of
        column names wherever gpuppdp takes it.
    others : {"error", "insensitive", "drop"}
        Role of the columns not named anywhere; ``"error"`` (default) refuses them.
    k : int, optional
        Shortcut for ``KAnonymity(k)``.
    models : sequence of PrivacyModel
        Further privacy models (e.g. ``DistinctLDiversity("occupation", 3)``).
    suppression_limit : float in [0, 1]
        Largest share of records that may be suppressed.
    metric : str or Metric
        A name of :data:`gpuppdp.engine.metrics.METRICS` (``loss``, ``precision``,
        ``discernibility``, ``discernibility-monotonic``, ``aecs``, ``entropy``,
        ``entropy-monotonic``, ``normalized-entropy``, ``height``, ``ambiguity``, ``kl``: ARX's
        quality models) or a :class:`~gpuppdp.engine.metrics.Metric`.
    attribute_weights : mapping QID -> weight >= 0, optional
        ARX's attribute weights (``setAttributeWeight``; 0.5 unless given) for the metrics
        that weigh attributes (loss, precision, entropy, normalized-entropy, height).
    gs_factor : float in [0, 1], optional
        ARX's generalization/suppression factor (default 0.5) for loss, precision, entropy and
        aecs.
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
        :mod:`gpuppdp.engine.search.heuristic`).  ``flash`` or ``levels`` on a lattice of more
        than ``OPTIMAL_SEARCH_LIMIT`` (10**7) nodes switches to the heuristic, with a warning.
    time_limit : float, optional
        Seconds a heuristic search may run (default 30).
    prefer : {"height", "precision", "classes", "suppression"}
        With ``search="samarati"``: which k-minimal generalization to release (Samarati's
        preference policies, see :mod:`gpuppdp.engine.search.samarati`).
    backend : {"auto", "cpu", "gpu"} or Backend
    suppressed : {"mark", "drop"}
        How suppressed records appear in the release (``*`` in the QIDs, or removed; CLI:
        ``--suppressed``).  ``suppression=`` is its former name, accepted with a
        ``FutureWarning`` for one release.
    seed : int, optional
        Seed of the release's row permutation (default: OS entropy).
    microaggregation : mapping column -> {"mean", "geomean", "median", "mode", "interval"}
        ARX's microaggregation inside the generalization (CLI: ``--microaggregate
        COL:FUNCTION``): the column is released as the aggregate of its values in each class.
        A column without a hierarchy joins no lattice and the loss metric charges it (ARX's
        default); one with a hierarchy in ``quasi_identifiers`` is generalized, then
        aggregated (ARX's ``performClustering``).  See :mod:`gpuppdp.engine.microaggregation`.
    types : mapping column -> DataType or text, optional
        Data types (ARX's ``setDataType``; CLI: ``--type COL=TYPE``): ``integer``,
        ``decimal``, ``date[:FORMAT]``, ``ordered:V1,V2,...`` or ``string``
        (:mod:`gpuppdp.core.datatypes`): how a microaggregated column is aggregated, and how
        ordered t-closeness orders a sensitive column (as ARX).  Untyped columns are numbers
        when every value is one.
    """

    def __init__(self, *, quasi_identifiers: Mapping[str, Hierarchy | str], sensitive=(),
                 insensitive=(), identifying=(), others: str = "error", k: int | None = None,
                 models: Sequence[PrivacyModel] = (), suppression_limit: float = 0.0,
                 metric: str | Metric = "loss",
                 attribute_weights: Mapping[str, float] | None = None,
                 gs_factor: float | None = None, search: str = "auto",
                 backend: str | Backend = "auto", suppressed: str = "mark", seed=None,
                 time_limit: float | None = None, prefer: str = "height",
                 microaggregation: Mapping[str, str] | None = None,
                 types: Mapping[str, object] | None = None, suppression=_NOT_GIVEN):
        if suppression is not _NOT_GIVEN:
            warnings.warn("Anonymizer(suppression=...) is renamed suppressed=...; the old "
                          "name goes in the next release", FutureWarning, stacklevel=2)
            suppressed = suppression
        self.quasi_identifiers = quasi_identifiers
        self.sensitive = sensitive
        self.insensitive = insensitive
        self.identifying = identifying
        self.others = others
        self.k = k
        self.models = models
        self.suppression_limit = suppression_limit
        self.metric = metric
        self.attribute_weights = attribute_weights
        self.gs_factor = gs_factor
        self.search = search
        self.backend = backend
        self.suppressed = suppressed
        self.seed = seed
        self.time_limit = time_limit
        self.prefer = prefer
        self.microaggregation = microaggregation
        self.types = types
        self._check_parameters()

    def _check_parameters(self) -> None:
        """The checks that read no file and touch no backend (the rest is in :meth:`_setup`)."""
        qis = self.quasi_identifiers
        if not isinstance(qis, Mapping) or not qis:
            raise SchemaError("quasi_identifiers must be a non-empty mapping column -> hierarchy")
        for name, value in qis.items():
            check_hierarchy(name, value)
        for role in ("sensitive", "insensitive", "identifying"):
            if isinstance(getattr(self, role), str):
                raise InputTypeError(f"{role} must be a list of column names, got the string "
                                     f"{getattr(self, role)!r}")
        _models(self.k, self.models, self.sensitive)
        check_number("suppression_limit", self.suppression_limit, 0.0, 1.0)
        self._metric()
        aggregated = self._aggregations()
        for column in self.attribute_weights or {}:
            if column not in qis and column not in aggregated:
                raise InputError(f"attribute_weights: {column!r} is not a quasi-identifier "
                                 f"(they are {list(qis)})")
        for name, value, choices in (("search", self.search, SEARCHES),
                                     ("prefer", self.prefer, PREFERENCES),
                                     ("suppressed", self.suppressed, SUPPRESSION_MODES)):
            if value not in choices:
                raise InputError(f"{name} must be one of {choices}, got {value!r}")
        if not isinstance(self.backend, Backend) and self.backend not in BACKEND_CHOICES:
            raise InputError(f"backend must be one of {BACKEND_CHOICES}, got {self.backend!r}")
        if self.time_limit is not None:
            check_number("time_limit", self.time_limit, 0.001)

    def _aggregations(self) -> dict:
        """``{column: Aggregation}`` of :attr:`microaggregation`, checked against the metric
        (ARX's precision charges an aggregated attribute in a way not reproduced here)."""
        aggregated = check_microaggregation(self.microaggregation, self.quasi_identifiers,
                                            check_types(self.types))
        if any(not a.clustered for a in aggregated.values()) and \
                self._metric().name in ("precision", "precision-monotonic"):
            raise InputError("microaggregation with the precision metric is not supported "
                             "yet (ARX charges the aggregated attribute there); use the loss "
                             "metric, or give the column a hierarchy")
        return aggregated

    def _metric(self) -> Metric:
        return make_metric(self.metric, gs_factor=self.gs_factor,
                           attribute_weights=self.attribute_weights)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters, by name (scikit-learn's ``get_params``; ``deep`` is
        accepted for its signature: an anonymizer holds no nested estimator)."""
        return {name: getattr(self, name) for name in _DEFAULTS}

    def __repr__(self) -> str:
        """``Anonymizer(...)`` with the parameters that differ from their defaults."""
        changed = [f"{name}={value!r}" for name, value in self.get_params().items()
                   if name not in _DEFAULTS or not _same(value, _DEFAULTS[name])]
        return f"Anonymizer({', '.join(changed)})"

    def _setup(self) -> _Setup:
        """Read the hierarchy files, build the schema, bind the metric and the backend."""
        self._check_parameters()
        hierarchies = {n: hierarchy_of(n, h) for n, h in self.quasi_identifiers.items()}
        schema = Schema(hierarchies, self.sensitive, self.insensitive, self.identifying,
                        self.others, self._aggregations(), check_types(self.types))
        models = _models(self.k, self.models, self.sensitive)
        referred = referred_sensitive(models)
        metric = self._metric()
        # the aggregated attributes the metric charges travel with the sensitive ones
        charged = schema.microaggregated if getattr(metric, "charges_microaggregation",
                                                    False) else []
        return _Setup(schema, models, metric, get_backend(self.backend),
                      [c for c in schema.sensitive if c in referred] + charged)

    def _evaluator_for(self, data: pd.DataFrame) -> Evaluator:
        """The evaluator of ``data`` under this anonymizer's parameters."""
        setup = self._setup()
        return setup.evaluator(encode(data, setup.schema, setup.backend, setup.sensitive),
                               float(self.suppression_limit))

    def _search(self, evaluator: Evaluator, models: list, progress) -> tuple:
        """``(found, lattice, oracle, levels)``: the search's result and the optimum's levels;
        :class:`NoSolutionError` when no node is anonymous."""
        lattice = Lattice.of(evaluator.encoded.heights)
        oracle = LatticeOracle(evaluator, lattice)
        search = make_search(self.search, evaluator, lattice_size=lattice.size,
                             time_limit=self.time_limit, prefer=self.prefer)
        if getattr(search, "note", None):
            warnings.warn(search.note, stacklevel=3)
        with kernels.reused_scratch():  # the roll-ups' scratch, node after node
            found = search.run(oracle, progress)
        if found.optimum is None:
            raise NoSolutionError(
                f"no transformation satisfies {models_text([m.describe() for m in models])}"
                f" with at most "
                f"{float(self.suppression_limit):.2%} suppressed records "
                f"({evaluator.max_suppressed} of {evaluator.encoded.n_rows}); allow more "
                "suppression or relax the models")
        return found, lattice, oracle, lattice.levels_of([found.optimum])[0]

    def _result(self, setup: _Setup, evaluator: Evaluator, searched: tuple, rel: Release,
                times: list) -> AnonymizationResult:
        found, lattice, oracle, levels = searched
        t0, t1, t2, t3 = times
        return AnonymizationResult(
            transformation={n: int(v) for n, v in zip(evaluator.encoded.qi_names, levels)},
            information_loss=float(found.optimum_stats["information_loss"]),
            metric=setup.metric.name, node=found.optimum_stats, search=found, release=rel,
            timings={"encode": t1 - t0, "search": t2 - t1, "release": t3 - t2,
                     "total": t3 - t0},
            lattice_size=lattice.size, models=[m.describe() for m in setup.models],
            suppression_limit=float(self.suppression_limit), _setup=setup,
            _evaluator=evaluator,
            evaluated_nodes=found.details.get("all_stats") or oracle.evaluated())

    def fit(self, data: pd.DataFrame, *, progress: Callable[[int, int], None] | None = None
            ) -> AnonymizationResult:
        """Search the optimal node for ``data`` and release it.

        ``data`` is a pandas DataFrame, a cuDF DataFrame (:mod:`gpuppdp.device_frames`: on a
        GPU backend it is encoded and released on the device, and the release is a cuDF
        DataFrame), or a Dask DataFrame (:mod:`gpuppdp.cluster`: the
        partitions are encoded and reduced on the workers, the search runs here, and the
        release is a lazy Dask DataFrame, written with its ``to_parquet``).
        Raises :class:`NoSolutionError` when no node is anonymous.
        """
        t0 = time.perf_counter()
        setup = self._setup()
        limit = float(self.suppression_limit)
        on_dask = cluster.is_dask_frame(data)
        if on_dask and self.microaggregation:
            raise InputError("microaggregation needs the table in memory (a pandas "
                             "DataFrame), not a Dask DataFrame")
        data = _on_backend(data, setup.backend)
        if on_dask:
            evaluator = setup.evaluator(cluster.encode_dask(data, setup.schema, setup.backend,
                                                            setup.sensitive), limit)
        else:
            evaluator = setup.evaluator(_encode(data, setup), limit)
        t1 = time.perf_counter()
        searched = self._search(evaluator, setup.models, progress)
        t2 = time.perf_counter()
        if on_dask:
            rel = cluster.release_dask(data, evaluator, searched[3],
                                       int(searched[0].optimum_stats["suppressed"]),
                                       suppression=self.suppressed, seed=self.seed)
        else:
            rel = _release(data, evaluator, searched[3], self.suppressed, self.seed)
        return self._result(setup, evaluator, searched, rel, [t0, t1, t2, time.perf_counter()])

    def release(self, data: pd.DataFrame, node) -> AnonymizationResult:
        """Release ``data`` at a node of one's choice (e.g. from the frontier of
        :func:`gpuppdp.explore`) instead of the searched optimum: ``node`` is a mapping QID
        -> level naming every QID once, or a sequence of levels in the table's QID order.
        The node is checked against the models as the search checks one: its failing classes
        are suppressed, and :class:`NoSolutionError` says so when they hold more records than
        the suppression limit allows.  The result is :meth:`fit`'s, its search ``"given"``."""

        t0 = time.perf_counter()
        setup = self._setup()
        data = _on_backend(data, setup.backend)
        evaluator = setup.evaluator(_encode(data, setup), float(self.suppression_limit))
        enc = evaluator.encoded
        levels = node_levels(node, enc.qi_names, enc.heights)
        t1 = time.perf_counter()
        stats, _ = evaluator.evaluate(levels[None, :], evaluator.bottom, np.zeros(1, np.int64))
        row = stats.row(0)
        if not row["anonymous"]:
            given = ", ".join(f"{q}={v}" for q, v in zip(enc.qi_names, levels))
            raise NoSolutionError(
                f"transformation {given} does not satisfy "
                f"{models_text([m.describe() for m in setup.models])} within the suppression "
                f"limit: {row['suppressed']} records would be suppressed, at most "
                f"{evaluator.max_suppressed} of {enc.n_rows} may "
                f"({float(self.suppression_limit):.2%}); allow more suppression or pick "
                "another node")
        lattice = Lattice(enc.heights)
        found = SearchResult(lattice.node_id(levels), row, 1, time.perf_counter() - t1,
                             "given", {"all_stats": stats})
        t2 = time.perf_counter()
        rel = _release(data, evaluator, levels, self.suppressed, self.seed)
        return self._result(setup, evaluator, (found, lattice, None, levels), rel,
                            [t0, t1, t2, time.perf_counter()])

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
        (:func:`~gpuppdp.engine.chunked_encoding.encode_chunks`), on which the search runs, while
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
        chunk_rows = check_int("chunk_rows", CHUNK_ROWS if chunk_rows is None else chunk_rows, 1)
        plan = OutputPlan([path]).add("output", output, TABLE_SUFFIXES, dataset=dataset)
        t0 = time.perf_counter()
        setup = self._setup()
        if self.microaggregation:
            raise InputError("microaggregation needs the table in memory: use fit() (the "
                             "command line reads such a table whole)")
        columns = table_columns(path, sep=sep)
        roles = setup.schema.resolve(columns)
        kept = [c for c in columns if roles[c] not in (None, Role.IDENTIFYING)]
        qi_names = [c for c in columns if roles[c] is Role.QUASI_IDENTIFYING]
        with plan.writing() as out, RowBuckets(
                estimated_rows(path), chunk_rows, qi_names, spill_dir=_spill_folder(output),
                seed=self.seed) as buckets:
            enc = encode_chunks(read_chunks(path, sep=sep, columns=kept, rows=chunk_rows,
                                            lazy=True),
                                columns, setup.schema, setup.backend, setup.sensitive,
                                tee=buckets.scatter)
            evaluator = setup.evaluator(enc, float(self.suppression_limit))
            t1 = time.perf_counter()
            searched = self._search(evaluator, setup.models, progress)
            t2 = time.perf_counter()
            with (DatasetWriter(out.path("output")) if dataset else TableWriter(
                    out.path("output"), sep=output_sep or table_delimiter(path, sep))) as writer:
                rel = release_buckets(buckets, evaluator, searched[3], writer.write_prepared,
                                      prepare=writer.prepare, suppression=self.suppressed)
        rel.path = os.fspath(output)
        return self._result(setup, evaluator, searched, rel, [t0, t1, t2, time.perf_counter()])


#: the constructor's parameters and their defaults (``suppression``, the old name of
#: ``suppressed``, left out)
_DEFAULTS = {name: p.default for name, p in
             inspect.signature(Anonymizer.__init__).parameters.items()
             if p.kind is p.KEYWORD_ONLY and name != "suppression"}
