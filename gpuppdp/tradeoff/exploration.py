"""Every node of the generalization lattice measured: :func:`explore`.

The whole lattice is evaluated in batches by the engine
(:meth:`gpuppdp.engine.evaluate.LatticeOracle.evaluate_all`), and a metric plug-in
(:class:`NodeFigures`) computes, from the classes of each batch on the device, what a node's
release would show: the release of a node is its classes with those failing a privacy model
suppressed (as the anonymizer releases it), so every figure is taken over the *kept* classes:

* re-identification risk (prosecutor model, El Emam 2013; ARX's ``RiskModelSampleSummary``):
  ``highest_risk`` ``1 / smallest class``, ``average_risk`` ``classes / records``,
  ``records_at_risk`` the share of records whose risk ``1/|E|`` exceeds ``risk_threshold``
  (strictly, as :func:`gpuppdp.analysis.risk.sample_risk_summary`);
* the (epsilon, alpha) privacy losses (distribution ``||p_E - q||_2``, entropy
  ``|H(q) - H(p_E)|`` in bits, ``q`` the released records' distribution unless a ``prior`` is
  given, as :func:`gpuppdp.analysis.checker.check` measures a release) and the utility losses
  of :mod:`gpuppdp.algorithms.negotiation`, each as its largest class value (``_max``, the
  "class" basis) and its mean over the released records (``_mean``, the "total" basis); NaN
  without a sensitive attribute;
* the information loss of the chosen metric and the other cheap ones (``precision``,
  ``discernibility``), NaN for a node that is not anonymous (ARX computes it for anonymous
  nodes only).

A node whose failing classes hold more records than the suppression limit allows is not
``anonymous``; its risk and losses are still those of its classes with the failing ones
suppressed.  The Pareto flags (:func:`gpuppdp.tradeoff.frontier.pareto_mask`) are among the
anonymous nodes.

A lattice of more than ``max_nodes`` nodes is measured in part: the nodes the anonymizer's
heuristic for huge lattices (:data:`~gpuppdp.engine.search.heuristic.AUTO_HEURISTIC`, the beam
search from the top) evaluates within ``max_nodes`` evaluations, each with all its figures;
the table then holds those nodes only, the flags and the optimum are among them, and
``summary()["complete"]`` is False.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from typing import Callable

import numpy as np
import pandas as pd
from numba import njit

from ..algorithms.negotiation import FIGURES
from ..anonymizer import Anonymizer
from ..core.classes import Classes
from ..device_frames import encode_frame
from ..engine.evaluate import LatticeOracle, checked_evaluator
from ..engine.lattice import Lattice, node_levels
from ..engine.metrics import Metric, discernibility, generalization_shares, precision_loss
from ..engine.search.base import smallest_loss
from ..engine.search.heuristic import AUTO_HEURISTIC, make_heuristic
from ..errors import InputError
from ..kernels.aot import ahead_of_time
from ..kernels.groupby import balanced_runs, n_tasks_for, run_tasks
from ..models import KAnonymity, PrivacyLoss
from ..validation import check_int, check_number
from .figures_cuda import node_figures_cuda
from .frontier import PARETO, exploration_html, pareto_mask

__all__ = ["explore", "Exploration", "NodeFigures"]

#: the per-node figures :class:`NodeFigures` computes, in its columns' order
_BATCH = ("kept_squares", "records_at_risk") + FIGURES


class NodeFigures(Metric):
    """A metric plug-in: the information loss and bound of ``metric`` (which it delegates
    to), and, per node of each batch, the squared sizes of the kept classes, the records at
    risk and the :data:`~gpuppdp.algorithms.negotiation.FIGURES` over the kept classes
    (module docstring), kept as host arrays in ``batches``: ``(levels (B, q), figures (B,
    10))``.  The evaluator binds a shallow copy: ``batches`` is shared with the original."""

    def __init__(self, metric: Metric, sensitive: str | None, prior: Mapping | None,
                 risk_threshold: float):
        self.takes_gs_factor, self.takes_weights = metric.takes_gs_factor, metric.takes_weights
        super().__init__(gs_factor=metric.gs_factor, attribute_weights=metric.attribute_weights)
        self.metric = metric
        self.name = metric.name
        self.monotonic_with_generalization = metric.monotonic_with_generalization
        self.monotonic_with_suppression = metric.monotonic_with_suppression
        self.sensitive = sensitive
        self.prior = prior
        self.risk_threshold = risk_threshold
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []

    def bind(self, encoded) -> "NodeFigures":
        super().bind(encoded)
        self.metric = copy.copy(self.metric).bind(encoded)
        self._privacy = None
        # n log2 n of every class size up to the rows (at most 2^16; larger ones computed)
        self._xlogx = np.arange(min(encoded.n_rows, 1 << 16) + 1, dtype=np.float64)
        self._xlogx[1:] *= np.log2(self._xlogx[1:])
        self._scratch = np.empty((4, 0))
        self._xlogx_device = None  # its copy on the device, made at the first GPU batch
        if self.sensitive is not None:
            self._values = len(encoded.sensitive[self.sensitive].labels)
            if self.prior is not None:
                self._privacy = PrivacyLoss(self.sensitive, 2.0, 1.0,
                                            prior=self.prior).bind(encoded)
        return self

    def evaluate(self, classes: Classes, outlier, levels: np.ndarray):
        return self.evaluate_needed(classes, outlier, levels, None)

    def evaluate_needed(self, classes, outlier, levels, needed, bounds=True):
        figures = self._figures(classes, outlier, levels.shape[0])
        self.batches.append((np.asarray(levels, dtype=np.int64).copy(), figures))
        return self.metric.evaluate_needed(classes, outlier, levels, needed, bounds)

    def _figures(self, classes: Classes, outlier, n_nodes: int) -> np.ndarray:
        """(B, 10) host figures of the batch's nodes, in :data:`_BATCH` order: on the CPU
        one pass over each node's classes and histogram entries (:func:`_figures_njit`), on
        a GPU four launches over the batch's classes (:mod:`.figures_cuda`)."""
        cl = classes if self.sensitive is None else classes.for_attribute(self.sensitive)
        given = None if self._privacy is None else (  # the prior, sum q^2 and H(q)
            self._privacy._q, self._privacy._q_sq, self._privacy._h_prior)
        if self.backend.kernels == "cpu":
            with_sens = self.sensitive is not None
            entry_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
            if with_sens:
                entry_ptr[1:] = np.cumsum(cl.per_node(cl.distinct.astype(np.int64)))
            prior, prior_sq, prior_h = (np.zeros(0), 0.0, 0.0) if given is None else (
                np.asarray(given[0], dtype=np.float64), given[1], given[2])

            empty = np.zeros(0, dtype=np.int64)  # without histograms
            entry_class, entry_sens, entry_count = (
                np.ascontiguousarray(getattr(cl, name)) if with_sens else empty
                for name in ("entry_class", "entry_sens", "entry_count"))
            return _figures_njit(
                np.asarray(cl.host_ptr, dtype=np.int64), entry_ptr,
                np.ascontiguousarray(cl.size, dtype=np.int64),
                np.ascontiguousarray(outlier, dtype=np.bool_), entry_class, entry_sens,
                entry_count, self._values if with_sens else 0, prior, float(prior_sq),
                float(prior_h), self.risk_threshold, with_sens, self._xlogx,
                self._scratch_for(cl.size.shape[0]))
        if self._xlogx_device is None:
            self._xlogx_device = self.backend.asarray(self._xlogx)
        return self.backend.to_host(node_figures_cuda(
            self.backend, cl, outlier, n_nodes, self.risk_threshold,
            0 if self.sensitive is None else self._values, self._xlogx_device, *(given or ())))

    def _scratch_for(self, n_classes: int) -> np.ndarray:
        """The (4, >= ``n_classes``) float64 scratch of :func:`_figures_njit`, kept between
        batches (grown when too small): fresh pages for every batch cost a page fault each."""
        if self._scratch.shape[1] < n_classes:
            self._scratch = np.empty((4, max(n_classes, 2 * self._scratch.shape[1])))
        return self._scratch


def _figures_njit(class_ptr, entry_ptr, size, outlier, entry_class, entry_sens, entry_count,
                  n_values: int, prior, prior_sq: float, prior_h: float, threshold: float,
                  with_sens: bool, xlogx, scratch) -> np.ndarray:
    """:meth:`NodeFigures._figures` on the CPU: per node ``b`` (classes
    ``class_ptr[b]:class_ptr[b+1]``, histogram entries ``entry_ptr[b]:entry_ptr[b+1]``) the
    same figures in two passes over its classes and two (three without ``prior``) over its
    entries; ``prior`` empty: per node the kept records' distribution (else that prior,
    ``sum q^2`` = ``prior_sq``, ``H(q)`` = ``prior_h``); ``xlogx[n]`` = ``n log2 n`` for the
    small counts (a class's entropy ``log2 |E| - sum n log2 n / |E|``: no logarithm per
    entry); the entries of suppressed classes are passed over (most of a fine node's).
    ``scratch`` (4, >= classes) float64, any content: each node zeroes the rows of its kept
    classes before it sums into them.  Runs of nodes are taken by the threads as they come
    free (:func:`~gpuppdp.kernels.groupby.run_tasks`)."""
    n_nodes = class_ptr.shape[0] - 1
    out = np.full((n_nodes, 10), np.nan)
    work = entry_ptr if with_sens else class_ptr
    bounds = balanced_runs(work, n_tasks_for(int(work[-1]), n_nodes))
    run_tasks(_figures_run, len(bounds) - 1, bounds, class_ptr, entry_ptr, size, outlier,
              entry_class, entry_sens, entry_count, n_values, prior, prior_sq, prior_h,
              threshold, with_sens, xlogx, scratch, out)
    return out


@njit(cache=True, nogil=True)
def _figures_run(t, bounds, class_ptr, entry_ptr, size, outlier, entry_class, entry_sens,
                 entry_count, n_values, prior, prior_sq, prior_h, threshold, with_sens, xlogx,
                 scratch, out):
    """Nodes ``bounds[t]:bounds[t+1]`` of :func:`_figures_njit`; ``scratch`` rows: per class
    ``sum p^2``, ``sum n log2 n`` then ``H(p_E)`` (bits), ``sum (p^2 - 2 p q)`` and the
    distribution utility loss (each node writes its own classes)."""
    sq, ent, cross, util = scratch[0], scratch[1], scratch[2], scratch[3]
    q = np.zeros(max(n_values, 1))
    n_table = xlogx.shape[0]
    for b in range(bounds[t], bounds[t + 1]):
        kept_sq = 0
        at_risk = 0
        records = 0
        for c in range(class_ptr[b], class_ptr[b + 1]):
            if not outlier[c]:
                s = size[c]
                kept_sq += s * s
                records += s
                if 1.0 / s > threshold:
                    at_risk += s
        out[b, 0] = kept_sq
        out[b, 1] = at_risk
        if not with_sens or records == 0:
            continue
        for c in range(class_ptr[b], class_ptr[b + 1]):
            if not outlier[c]:
                sq[c] = ent[c] = cross[c] = util[c] = 0.0
        if prior.shape[0] == 0:
            q[:] = 0.0
            for e in range(entry_ptr[b], entry_ptr[b + 1]):
                if not outlier[entry_class[e]]:
                    q[entry_sens[e]] += entry_count[e]
            q /= records
            q_sq = 0.0
            h_q = 0.0
            for v in range(n_values):
                q_sq += q[v] * q[v]
                if q[v] > 0:
                    h_q -= q[v] * math.log2(q[v])
        else:
            q[:n_values] = prior
            q_sq = prior_sq
            h_q = prior_h
        for e in range(entry_ptr[b], entry_ptr[b + 1]):
            c = entry_class[e]
            if outlier[c]:  # a suppressed class shows no figure
                continue
            n = entry_count[e]
            p = n / size[c]
            sq[c] += p * p
            cross[c] += p * p - 2.0 * p * q[entry_sens[e]]
            ent[c] += xlogx[n] if n < n_table else n * math.log2(n)
        for c in range(class_ptr[b], class_ptr[b + 1]):
            if outlier[c]:
                continue
            s = size[c]  # one value (n = |E|): exactly 0
            whole = xlogx[s] if s < n_table else s * math.log2(s)
            ent[c] = 0.0 if ent[c] == whole else math.log2(s) - ent[c] / s
        for e in range(entry_ptr[b], entry_ptr[b + 1]):
            c = entry_class[e]
            if outlier[c]:
                continue
            p = entry_count[e] / size[c]
            util[c] += p * math.sqrt(max(1.0 - 2.0 * p + sq[c], 0.0))
        top0 = top1 = top2 = top3 = -np.inf
        sum0 = sum1 = sum2 = sum3 = 0.0
        for c in range(class_ptr[b], class_ptr[b + 1]):
            if outlier[c]:
                continue
            d_priv = math.sqrt(max(q_sq + cross[c], 0.0))
            e_priv = abs(h_q - ent[c])
            top0 = max(top0, d_priv)
            top1 = max(top1, e_priv)
            top2 = max(top2, util[c])
            top3 = max(top3, ent[c])
            sum0 += d_priv * size[c]
            sum1 += e_priv * size[c]
            sum2 += util[c] * size[c]
            sum3 += ent[c] * size[c]
        out[b, 2], out[b, 3] = top0, sum0 / records
        out[b, 4], out[b, 5] = top1, sum1 / records
        out[b, 6], out[b, 7] = top2, sum2 / records
        out[b, 8], out[b, 9] = top3, sum3 / records


# the sensitive codes carried (int32), or none (int64 zeros)
ahead_of_time(_figures_run, [
    "none(int64, int64[::1], int64[::1], int64[::1], int64[::1], boolean[::1], int64[::1], "
    f"{sens}[::1], int64[::1], int64, float64[::1], float64, float64, float64, boolean, "
    "float64[::1], float64[:, ::1], float64[:, ::1])" for sens in ("int32", "int64")])


class Exploration:
    """Every lattice node's figures (:func:`explore`).

    Attributes
    ----------
    nodes : DataFrame
        One row per measured node in node-id order (every node when :attr:`complete`):
        ``node``, one column per QID (its level),
        ``height``, ``anonymous``, ``classes``, ``smallest_class``, ``suppressed_records``,
        ``information_loss`` (the chosen metric), ``precision``, ``discernibility``,
        ``highest_risk``, ``average_risk``, ``records_at_risk``, the eight
        :data:`~gpuppdp.algorithms.negotiation.FIGURES` and the :data:`PARETO` flags.
    optimum : dict or None
        The anonymous node of least information loss (then lowest height, then smallest id,
        as the exhaustive search breaks ties) as ``{QID: level}``; None when none is
        anonymous.
    thresholds : dict
        Column -> value drawn as a line on the frontier (``1/k`` of k-anonymity on
        ``highest_risk``, ``epsilon`` of a privacy-loss model on the distribution privacy
        loss, and those given to :func:`explore`).
    seconds : float
        The evaluation's time (encoding excluded).
    complete : bool
        Whether every node of the lattice was measured (else those a heuristic search
        visited: :func:`explore`'s ``max_nodes``).
    """

    def __init__(self, nodes: pd.DataFrame, quasi_identifiers: list[str], heights: list[int],
                 *, metric: str, sensitive: str | None, models: list[dict],
                 suppression_limit: float, risk_threshold: float, thresholds: dict,
                 seconds: float, optimum: dict | None, complete: bool = True):
        self.nodes = nodes
        self.quasi_identifiers = quasi_identifiers
        self.heights = heights
        self.metric = metric
        self.sensitive = sensitive
        self.models = models
        self.suppression_limit = suppression_limit
        self.risk_threshold = risk_threshold
        self.thresholds = thresholds
        self.seconds = seconds
        self.optimum = optimum
        self.complete = complete

    def __repr__(self) -> str:
        return (f"Exploration({len(self.nodes)} nodes, "
                f"{int(self.nodes['anonymous'].sum())} anonymous, optimum {self.optimum})")

    def node(self, node) -> pd.Series:
        """The row of ``node`` (a mapping QID -> level or a sequence of levels)."""
        return self.nodes.iloc[self._position(node)]

    def _position(self, node) -> int:
        """The row number of ``node`` in :attr:`nodes`; :class:`InputError` when it was not
        measured (a partial walk)."""
        levels = node_levels(node, self.quasi_identifiers, self.heights)
        node_id = int(levels @ Lattice(self.heights).strides)
        ids = self.nodes["node"].to_numpy()
        at = int(np.searchsorted(ids, node_id))
        if at == len(ids) or ids[at] != node_id:
            raise InputError(f"node {node!r} was not measured (the walk was partial: "
                             f"{len(ids)} of {Lattice(self.heights).size} nodes)")
        return at

    def frontier(self, flag: str = "pareto_privacy_utility") -> pd.DataFrame:
        """The Pareto-optimal nodes of ``flag`` (a :data:`PARETO` key), by their x axis."""
        if flag not in PARETO:
            raise InputError(f"flag must be one of {tuple(PARETO)}, got {flag!r}")
        return self.nodes[self.nodes[flag]].sort_values(list(PARETO[flag]), kind="stable")

    def summary(self) -> dict:
        """``nodes`` (measured), ``lattice_nodes``, ``complete``, ``anonymous_nodes``, the
        frontiers' sizes, ``optimum`` and ``seconds`` (JSON values)."""
        return {"nodes": int(len(self.nodes)), "lattice_nodes": Lattice(self.heights).size,
                "complete": self.complete,
                "anonymous_nodes": int(self.nodes["anonymous"].sum()),
                **{flag: int(self.nodes[flag].sum()) for flag in PARETO},
                "optimum": self.optimum, "quasi_identifiers": list(self.quasi_identifiers),
                "sensitive": self.sensitive, "metric": self.metric, "models": self.models,
                "suppression_limit": self.suppression_limit,
                "risk_threshold": self.risk_threshold, "seconds": self.seconds}

    def to_html(self, chosen=None) -> str:
        """The frontier page (self-contained: inline SVG, no script): every node plotted
        privacy loss against utility loss and risk against information loss, the frontiers
        drawn, the thresholds as lines, each node's levels and figures in its hover title;
        ``chosen`` (a node, default the optimum) highlighted."""
        chosen = self.optimum if chosen is None else chosen
        return exploration_html(self, None if chosen is None else self._position(chosen))

    def _repr_html_(self) -> str:
        return self.to_html()

    def save(self, path, *, html=None) -> None:
        """Write :attr:`nodes` to ``path`` (``.parquet`` or ``.csv``) and, with ``html``, the
        frontier page there; both replaced together (:class:`gpuppdp.io.OutputPlan`)."""
        from ..io import TABLE_SUFFIXES, OutputPlan  # deferred: the CLI plans its own

        plan = OutputPlan().add("path", path, TABLE_SUFFIXES).add("html", html)
        with plan.writing() as out:
            out.write_table("path", self.nodes)
            if html is not None:
                with open(out.path("html"), "w", encoding="utf-8") as fh:
                    fh.write(self.to_html())


def _thresholds(models, given: Mapping | None) -> dict:
    """The lines of the frontier: ``1/k`` of k-anonymity on ``highest_risk``, ``epsilon`` of
    the first privacy-loss model on the distribution privacy loss, then ``given``."""
    out: dict = {}
    ks = [m.k for m in models if isinstance(m, KAnonymity)]
    if ks:
        out["highest_risk"] = 1.0 / max(ks)
    eps = [m.epsilon for m in models if isinstance(m, PrivacyLoss)]
    if eps:
        out["distribution_privacy_loss_max"] = min(eps)
    for name, value in (given or {}).items():
        if name not in {axis for axes in PARETO.values() for axis in axes}:
            raise InputError(f"thresholds: {name!r} is not an axis of the frontier (they are "
                             f"{', '.join(sorted({a for x in PARETO.values() for a in x}))})")
        out[name] = check_number(f"thresholds[{name!r}]", value, 0.0)
    return out


def explore(data: pd.DataFrame, *, quasi_identifiers: Mapping, sensitive: Sequence[str] = (),
            k: int | None = None, models: Sequence = (), suppression_limit: float = 0.0,
            metric="loss", prior: Mapping | None = None, risk_threshold: float = 0.2,
            thresholds: Mapping | None = None, max_nodes: int | None = None, backend="auto",
            progress: Callable[[int, int], None] | None = None) -> Exploration:
    """Measure every node of the generalization lattice of ``data`` (module docstring).

    The parameters are :class:`~gpuppdp.Anonymizer`'s (``quasi_identifiers``, ``sensitive``,
    ``k``, ``models``, ``suppression_limit``, ``metric``, ``backend``); columns with no role
    are ignored.  The privacy and utility losses are measured on the first ``sensitive``
    column (NaN without one), against ``prior`` (a mapping value -> probability; default:
    each node's released records).  ``risk_threshold`` is that of ``records_at_risk``
    (ARX's default highlight, 0.2); ``thresholds`` adds lines to the frontier (a frontier
    axis -> value).  A lattice of more than ``max_nodes`` nodes is measured in part (module
    docstring; default: every node).  ``progress(done, total)`` is called after each batch.
    """
    if max_nodes is not None:
        max_nodes = check_int("max_nodes", max_nodes, 1)
    risk_threshold = check_number("risk_threshold", risk_threshold, 0.0, 1.0)
    if risk_threshold == 0.0:
        raise InputError("risk_threshold must lie in (0, 1], got 0")
    anonymizer = Anonymizer(quasi_identifiers=quasi_identifiers, sensitive=sensitive, k=k,
                            models=models, suppression_limit=suppression_limit,
                            metric=metric, backend=backend, others="drop")
    setup = anonymizer._setup()
    measured = next(iter(setup.schema.sensitive), None)
    lines = _thresholds(setup.models, thresholds)
    t0 = time.perf_counter()
    carried = list(dict.fromkeys(setup.sensitive + ([measured] if measured else [])))
    encoded = encode_frame(data, setup.schema, setup.backend, carried)
    figures = NodeFigures(setup.metric, measured, prior, risk_threshold)
    evaluator = checked_evaluator(encoded, setup.models, figures, float(suppression_limit))
    t1 = time.perf_counter()
    lattice = Lattice(encoded.heights)
    oracle = LatticeOracle(evaluator, lattice)
    complete = max_nodes is None or lattice.size <= max_nodes
    if complete:
        stats = oracle.evaluate_all(progress, bounds=False)  # (no lower bound is shown)
        ids = np.arange(lattice.size, dtype=np.int64)
    else:  # the nodes the heuristic visits (each once: the oracle keeps their results)
        make_heuristic(AUTO_HEURISTIC, evaluator, max_evaluations=max_nodes).run(oracle)
        stats = oracle.evaluated()
        ids = stats.levels @ lattice.strides
        if progress is not None:
            progress(len(ids), len(ids))
    values = np.full((len(ids), len(_BATCH)), np.nan)
    for levels, batch in figures.batches:
        values[np.searchsorted(ids, levels @ lattice.strides)] = batch
    seconds = time.perf_counter() - t1
    nodes = _node_table(stats, ids, values, list(encoded.qi_names), encoded)
    best = smallest_loss(stats, ids, t0, "explore").optimum
    optimum = None if best is None else {
        q: int(v) for q, v in zip(encoded.qi_names, lattice.levels_of([best])[0])}
    return Exploration(nodes, list(encoded.qi_names), [int(h) for h in encoded.heights],
                       metric=setup.metric.name, sensitive=measured,
                       models=[m.describe() for m in setup.models],
                       suppression_limit=float(suppression_limit),
                       risk_threshold=risk_threshold, thresholds=lines,
                       seconds=seconds, optimum=optimum, complete=complete)


def _node_table(stats, ids: np.ndarray, values: np.ndarray, qids: list[str],
                encoded) -> pd.DataFrame:
    """:attr:`Exploration.nodes` from the evaluator's stats and :class:`NodeFigures`'
    figures of nodes ``ids`` (ascending; the rows)."""
    n = encoded.n_rows
    table = pd.DataFrame(stats.levels, columns=qids)
    table.insert(0, "node", np.asarray(ids, dtype=np.int64))
    anonymous = stats.anonymous.astype(bool)
    kept_records = n - stats.suppressed
    with np.errstate(invalid="ignore", divide="ignore"):
        table["height"] = stats.height
        table["anonymous"] = anonymous
        table["classes"] = stats.classes
        table["smallest_class"] = stats.smallest_class
        table["suppressed_records"] = stats.suppressed
        table["information_loss"] = stats.information_loss
        table["precision"] = np.where(anonymous, precision_loss(
            generalization_shares(stats.levels, encoded.heights), stats.suppressed, n), np.nan)
        table["discernibility"] = np.where(anonymous, discernibility(
            values[:, 0].astype(np.int64), stats.suppressed, n), np.nan)
        table["highest_risk"] = np.where(stats.classes > 0, 1.0 / stats.smallest_class, np.nan)
        table["average_risk"] = np.where(stats.classes > 0, stats.classes / kept_records,
                                         np.nan)
        table["records_at_risk"] = np.where(stats.classes > 0, values[:, 1] / kept_records,
                                            np.nan)
    for j, name in enumerate(FIGURES):
        table[name] = values[:, 2 + j]
    for flag, (x, y) in PARETO.items():
        table[flag] = pareto_mask(table[x].to_numpy(), table[y].to_numpy(), anonymous)
    return table
