"""Steering the generalization toward a published distribution (the thesis "seed 004",
section 4.3.2): the lattice node whose released classes publish sensitive distributions nearest
to a target ``x`` -- typically the answer of :func:`gpuppdp.tradeoff.min_utility_loss`.

The distance of a node is the Euclidean distance ``||p_E - x||_2`` between each released class's
sensitive distribution and ``x``, averaged over the released records (every class weighted by
its size; suppressed classes left out), the distance the privacy and utility losses use.  Every
node is evaluated by the engine in batches
(:meth:`gpuppdp.engine.evaluate.LatticeOracle.evaluate_all`); a metric plug-in computes on the
device, per batch, each node's distance, its information loss (the chosen metric) and the
privacy and utility losses of :mod:`gpuppdp.algorithms.negotiation` (no Python loop per node).
The steered node is the nearest among the nodes that meet ``models`` within the suppression
limit (ties: smaller information loss, then lower node id); it is compared with the exhaustive
optimum of the information loss (ties: lower height, then node id, as the exhaustive search).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from ..algorithms._lattice import lattice_evaluator, lattice_hierarchies
from ..algorithms.negotiation import utility_losses
from ..backend import get_backend
from ..core.classes import Classes, segment_max, segment_sum
from ..engine.evaluate import LatticeOracle
from ..engine.lattice import Lattice
from ..engine.metrics import Metric, make_metric
from ..errors import InputError
from ..models import PrivacyLoss
from ..models.distribution import privacy_losses
from ..validation import check_attribute, check_number

__all__ = ["steer", "SteerResult", "STEER_FIGURES"]

#: the per-node figures of :func:`steer`
STEER_FIGURES = ("target_distance", "distribution_privacy_loss_max", "entropy_privacy_loss_max",
                 "distribution_utility_loss_mean", "entropy_utility_loss_mean")


class _SteerFigures(Metric):
    """Wraps the information-loss metric; per batch keeps ``(levels, figures)`` with the
    :data:`STEER_FIGURES` of every node over its released (kept) classes."""

    def __init__(self, metric: Metric, sensitive: str, target: Mapping, prior):
        super().__init__()
        self.inner, self.sensitive, self.target, self.prior = metric, sensitive, target, prior
        self.name = metric.name
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []

    def bind(self, encoded) -> "_SteerFigures":
        super().bind(encoded)
        self.inner = self.inner.bind(encoded)
        self._privacy = PrivacyLoss(self.sensitive, 2.0, 1e12, prior=self.prior).bind(encoded)
        labels = [str(v) for v in self._privacy.labels]
        x = np.array([float(self.target.get(v, 0.0)) for v in labels])
        extra = [float(p) for v, p in self.target.items() if v not in set(labels)]
        self._x = self.backend.asarray(x)
        self._x_sq = float((x ** 2).sum() + sum(p * p for p in extra))
        return self

    def evaluate(self, classes: Classes, outlier, levels: np.ndarray):
        il, lb = self.inner.evaluate(classes, outlier, levels)
        xp = classes.xp
        cl = classes.for_attribute(self.sensitive)
        target, _ = privacy_losses(cl, lambda c, s: self._x[s], self._x_sq, 0.0)
        dist_priv, ent_priv = self._privacy.losses(cl)
        dist_util, ent_util = utility_losses(cl)
        n_nodes = levels.shape[0]
        node = cl.node.astype(xp.int64)
        kept = ~outlier
        weight = cl.size.astype(xp.float64) * kept
        records = xp.maximum(segment_sum(xp, node, weight, n_nodes), 1.0)
        out = [segment_sum(xp, node, target * weight, n_nodes) / records]
        for per_class in (dist_priv, ent_priv):
            out.append(segment_max(xp, node, xp.where(kept, per_class, 0.0), n_nodes))
        for per_class in (dist_util, ent_util):
            out.append(segment_sum(xp, node, per_class * weight, n_nodes) / records)
        figures = np.stack([self.backend.to_host(v).astype(np.float64) for v in out], axis=1)
        self.batches.append((np.asarray(levels, dtype=np.int64).copy(), figures))
        return il, lb


@dataclass
class SteerResult:
    """``nodes``: every lattice node (node-id order): its levels, ``anonymous`` (meets the
    models within the suppression limit), ``information_loss`` (NaN when not anonymous) and the
    :data:`STEER_FIGURES`; ``steered`` and ``optimum``: the rows of the steered node and of the
    exhaustive optimum of the information loss (``None`` when no node is anonymous)."""

    nodes: pd.DataFrame
    quasi_identifiers: list[str]
    steered: dict | None
    optimum: dict | None

    def comparison(self) -> pd.DataFrame:
        """The steered node against the optimum, figure by figure."""
        names = ["information_loss", *STEER_FIGURES]
        return pd.DataFrame({"steered": [None if self.steered is None else self.steered[n]
                                         for n in names],
                             "optimum": [None if self.optimum is None else self.optimum[n]
                                         for n in names]}, index=names)

    def to_dict(self) -> dict:
        return {"quasi_identifiers": self.quasi_identifiers, "steered": self.steered,
                "optimum": self.optimum, "nodes": int(len(self.nodes)),
                "anonymous_nodes": int(self.nodes["anonymous"].sum())}


def _target(target) -> dict:
    """The target as a mapping value -> probability (a :class:`~.optimize.Solution` with
    labels, or a mapping)."""
    if hasattr(target, "x") and hasattr(target, "labels"):
        if target.x is None or target.labels is None:
            raise InputError("target: the solution has no distribution with labels (infeasible, "
                             "or solved without labels=)")
        target = dict(zip(target.labels, map(float, target.x)))
    if not isinstance(target, Mapping) or not target:
        raise InputError(f"target must be a mapping value -> probability, got {target!r}")
    out = {}
    for v, p in target.items():
        out[str(v)] = check_number(f"target[{v!r}]", p, 0.0, 1.0)
    if abs(sum(out.values()) - 1.0) > 1e-6:
        raise InputError(f"target probabilities must sum to 1, they sum to {sum(out.values())!r}")
    return out


def steer(data: pd.DataFrame, quasi_identifiers: Mapping, sensitive: str, target, *,
          models: Sequence = (), metric="loss", suppression_limit: float = 0.0,
          prior: Mapping | None = None, backend="auto") -> SteerResult:
    """The node of the full-domain lattice of ``quasi_identifiers`` (mapping QID -> hierarchy)
    whose released classes publish ``sensitive`` distributions nearest to ``target`` (a
    mapping value -> probability, or a :class:`~gpuppdp.tradeoff.Solution` solved with
    ``labels``), among the nodes meeting ``models`` within ``suppression_limit``; compared with
    the exhaustive optimum of ``metric``.  ``prior``: the privacy losses' prior (default: the
    table's distribution).  See the module docstring."""
    hierarchies = lattice_hierarchies(quasi_identifiers)
    sensitive = check_attribute("sensitive", sensitive, hierarchies)
    target = _target(target)
    suppression_limit = check_number("suppression_limit", suppression_limit, 0.0, 1.0)
    figures = _SteerFigures(make_metric(metric), sensitive, target, prior)
    carrier = [PrivacyLoss(sensitive, 2.0, 1e12)]  # carries the histograms, fails no class
    evaluator = lattice_evaluator(data, hierarchies, sensitive=[sensitive],
                                  models=list(models) + carrier,
                                  suppression_limit=suppression_limit, metric=figures,
                                  backend=get_backend(backend))
    enc = evaluator.encoded
    qids = list(enc.qi_names)
    lattice = Lattice(np.asarray(enc.heights, dtype=np.int64))
    bound = cast(_SteerFigures, evaluator.metric)
    bound.batches.clear()
    stats = LatticeOracle(evaluator, lattice).evaluate_all()
    values = np.full((lattice.size, len(STEER_FIGURES)), np.nan)
    for levels, fig in bound.batches:
        values[levels @ lattice.strides] = fig
    ids = stats.levels @ lattice.strides
    nodes = pd.DataFrame(stats.levels, columns=qids)
    nodes.insert(0, "node", ids)
    nodes["height"] = stats.height
    nodes["anonymous"] = stats.anonymous
    nodes["information_loss"] = stats.information_loss
    for j, name in enumerate(STEER_FIGURES):
        nodes[name] = values[ids, j]
    nodes = nodes.sort_values("node").reset_index(drop=True)
    ok = nodes[nodes["anonymous"].to_numpy()]

    def row(frame: pd.DataFrame, keys: list[str]) -> dict | None:
        if frame.empty:
            return None
        best = frame.sort_values(keys, kind="stable").iloc[0]
        out = {"policy": {q: int(best[q]) for q in qids}, "node": int(best["node"]),
               "height": int(best["height"])}
        out.update({n: float(best[n]) for n in ["information_loss", *STEER_FIGURES]})
        return out

    return SteerResult(nodes, qids, row(ok, ["target_distance", "information_loss", "node"]),
                       row(ok, ["information_loss", "height", "node"]))
