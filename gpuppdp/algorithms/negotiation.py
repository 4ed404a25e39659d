"""Negotiating a release between a data owner and a data user: the UBNB-PPDD protocol
(utility-based, negotiation-based privacy-preserving data dissemination; Afifi et al.,
GLOBECOM 2018), on full-domain generalization.

>>> from gpuppdp import datasets                                             # doctest: +SKIP
>>> data, h = datasets.adult()                                               # doctest: +SKIP
>>> neg = Negotiation({c: h[c] for c in ["age", "sex", "race", "education"]},
...                   "salary-class", epsilon=0.6, alpha=0.85, delta_distribution=0.55,
...                   gamma_entropy=0.8,
...                   utility_basis="total", objective="variable",
...                   profit="linear:100,50").fit(data)                      # doctest: +SKIP
>>> neg.offer([["age", "education"], ["sex", "race"]])["policy"]            # doctest: +SKIP
{'sex': 1, 'age': 1, 'race': 1, 'education': 2}
>>> neg.accept()                                                             # doctest: +SKIP

The parties
-----------
* The **data owner** holds the table and fixes a *privacy constraint*, the (epsilon, alpha)
  privacy-loss model of :class:`gpuppdp.models.PrivacyLoss`, and a *utility threshold*
  (delta, gamma: the thesis's delta bounds the distribution utility loss, gamma the entropy
  one).  Each is judged on a ``"class"`` basis (every equivalence class within the
  bound: the largest class value) or a ``"total"`` basis (the release as a whole: the mean over
  its records).
* A **generalization policy** is a node of the full-domain lattice (one hierarchy level per
  QID, no suppression).  ``G`` is the set of policies meeting the privacy constraint; it is
  found by evaluating the *whole* lattice in batches with the engine
  (:meth:`gpuppdp.engine.evaluate.LatticeOracle.evaluate_all`), every figure of every node
  computed on the device in the same pass (:class:`LossFigures`).
* The **data user** states a *utility pattern*: ranked layers of the attributes of interest,
  most important first, e.g. ``[["age", "sex", "race"], ["zip"], ["occupation"]]``.

The losses (per record ``r`` of class ``E``, sensitive value ``s(r)``, ``p_E`` the class's
sensitive distribution, ``q`` the whole table's)
--------------------------------------------------------------------------------------
* privacy: distribution loss ``||p_E - q||_2``, entropy loss ``|H(q) - H(p_E)|`` (bits)
  (``q``: or a given ``prior``), as
  :class:`~gpuppdp.models.PrivacyLoss` and :func:`gpuppdp.analysis.checker.check` compute them;
* utility: what the release blurs of the record's own value, the record being its own
  original class (the definition of the privacy/utility-loss work as issue 14 quotes it: an
  original record shows its value with certainty): distribution loss ``||1_{s(r)} - p_E||_2 =
  sqrt(1 - 2 p_E(s(r)) + sum_v p_E(v)^2)``, entropy loss ``|H(1_{s(r)}) - H(p_E)| = H(p_E)``
  (bits).  A class of two records with two values loses 0.707 and 1.0.  This is the default
  of :func:`gpuppdp.analysis.utility.privacy_utility_losses` (``reference="record"``) too;
  here it is computed per lattice node in the batched evaluation.

A class's utility loss is the mean over its records; a class's privacy loss is its own.
"class" basis: the largest class value; "total" basis: the mean over all records (every class
weighted by its size).

Matching (a choice made here: the paper ranks attributes into layers; how levels of
hierarchies of different heights compare is decided below)
--------------------------------------------------------------------------------------
The *generalization degree* of QID ``i`` under policy ``g`` is ``g_i / height_i`` (0: original
values, 1: fully generalized); a QID whose hierarchy has height 0 cannot be generalized and is
left out of the comparisons.  A policy **matches** a pattern when every attribute of a higher
layer is generalized no more than every attribute of every lower layer:
``max(degree over layer j) <= min(degree over layers j+1, ...)``.  Attributes of one layer
are not ordered among themselves.  QIDs *outside* the pattern (``others``):

* ``"lowest"`` (default): they form an implicit last layer -- the user ranked them below
  everything named, so they are generalized at least as much as any attribute of the pattern;
* ``"top"``: they are released fully generalized (the user does not need them);
* ``"free"``: no constraint.

Promotion and demotion
----------------------
Moving one attribute one step up the ranking is a *promotion*: out of a shared layer into a
new layer of its own just above it, or, when it is alone in its layer, into the layer above.
A *demotion* is the same step down.  When no policy of ``G`` meeting the utility threshold
matches the user's pattern, the owner's :meth:`Negotiation.counter` offer is the pattern
reached by the fewest such moves (up to ``max_moves``) that some such policy matches,
with that policy; when none is reached, the best such policy of ``G`` with no pattern.

Protocols (``objective``)
-------------------------
* ``"flat"`` (flat rate: the user pays one price whatever the release): the owner proposes a
  policy of ``G`` that matches the pattern and meets the utility threshold.  The paper allows
  any; here the owner picks the one that gives away least: smallest privacy loss (distribution,
  then entropy, on the privacy basis), then the most general (greatest height), then the lowest
  node id.  No match: the user may ask for a :meth:`~Negotiation.counter` offer (from ``G``),
  accept or reject it, make a new offer, or :meth:`~Negotiation.terminate`.
* ``"variable"`` (variable rate: the price is ``profit(utility loss)``, a function of the
  release's utility loss -- by default the distribution utility loss on the utility basis --
  e.g. ``linear:MAX,SLOPE`` = ``MAX - SLOPE * loss``): among the same candidates the owner
  proposes the one of greatest profit; ties as in ``"flat"``.
"""

from __future__ import annotations

import math
from typing import Any, cast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..backend import get_backend
from ..core.classes import Classes, entry_shares, segment_max, segment_sum
from ..engine import transform
from ..engine.evaluate import LatticeOracle
from ..engine.lattice import Lattice
from ..engine.metrics import Metric
from ..errors import InputError
from ..analysis.utility import _NOT_GIVEN, utility_thresholds
from ..models import PrivacyLoss
from ..validation import check_attribute, check_number
from ._lattice import lattice_evaluator, lattice_hierarchies

__all__ = ["Negotiation", "LossFigures", "utility_losses", "LinearProfit", "parse_profit",
           "parse_pattern", "FIGURES", "BASES", "OBJECTIVES", "OTHERS"]

BASES = ("class", "total")
OBJECTIVES = ("flat", "variable")
OTHERS = ("lowest", "top", "free")

#: the per-node figures: each loss's largest class value (``_max``) and its mean over the
#: records (``_mean``)
FIGURES = tuple(f"{loss}_{agg}" for loss in (
    "distribution_privacy_loss", "entropy_privacy_loss",
    "distribution_utility_loss", "entropy_utility_loss") for agg in ("max", "mean"))

_AGG = {"class": "max", "total": "mean"}


# ------------------------------------------------------------------------------------------
# the figures of every node, computed by the evaluator in its batches
# ------------------------------------------------------------------------------------------

def utility_losses(classes: Classes):
    """``(distribution, entropy)`` utility loss per class (device float64): the mean over the
    class's records of ``||1_{s(r)} - p_E||_2`` and ``H(p_E)`` (bits), as the module docstring
    defines them."""
    xp = classes.xp
    cls, _, share = entry_shares(classes)
    sq = segment_sum(xp, cls, share * share, classes.n_classes)
    # a record of value v in class E loses sqrt(1 - 2 p_E(v) + sum p_E^2); p_E(v) of the
    # class's records hold v: the class's mean is the share-weighted sum
    per_value = xp.sqrt(xp.maximum(1.0 - 2.0 * share + sq[cls], 0.0))
    return (segment_sum(xp, cls, share * per_value, classes.n_classes),
            xp.abs(classes.entropy_bits()))


class LossFigures(Metric):
    """A metric plug-in that computes, for every node of a batch, the privacy and utility
    losses of the module docstring (largest class value and mean over the records of each)
    from the classes the evaluator forms, on the device, and keeps them (host arrays) in
    ``batches``: one ``(levels (B, q), figures (B, 8))`` pair per evaluated batch, figures in
    :data:`FIGURES` order.  Its information loss is the mean distribution utility loss.

    The evaluator binds a shallow copy: ``batches`` is shared with the original.
    """

    name = "negotiation-losses"
    monotonic_with_generalization = False
    monotonic_with_suppression = False

    def __init__(self, sensitive: str, prior: Mapping | None = None):
        super().__init__()
        self.sensitive = sensitive
        self.prior = prior
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []

    def bind(self, encoded) -> "LossFigures":
        super().bind(encoded)
        self._privacy = PrivacyLoss(self.sensitive, 2.0, 1.0, prior=self.prior).bind(encoded)
        return self

    def evaluate(self, classes: Classes, outlier, levels: np.ndarray):
        xp = classes.xp
        cl = classes.for_attribute(self.sensitive)
        dist_priv, ent_priv = self._privacy.losses(cl)
        dist_util, ent_util = utility_losses(cl)
        n_nodes = levels.shape[0]
        node = cl.node.astype(xp.int64)
        size = cl.size.astype(xp.float64)
        out = []
        for per_class in (dist_priv, ent_priv, dist_util, ent_util):
            out.append(segment_max(xp, node, per_class, n_nodes))
            out.append(segment_sum(xp, node, per_class * size, n_nodes) / float(self.n_rows))
        figures = np.stack([self.backend.to_host(v).astype(np.float64) for v in out], axis=1)
        self.batches.append((np.asarray(levels, dtype=np.int64).copy(), figures))
        return figures[:, FIGURES.index("distribution_utility_loss_mean")], np.zeros(n_nodes)


# ------------------------------------------------------------------------------------------
# patterns and profit functions
# ------------------------------------------------------------------------------------------

def parse_pattern(text: str) -> list[list[str]]:
    """``"age,sex,race;zip;occupation"`` -> ``[["age", "sex", "race"], ["zip"],
    ["occupation"]]``: layers separated by ``;``, attributes by ``,``, highest layer first."""
    layers = [[a.strip() for a in part.split(",") if a.strip()] for part in str(text).split(";")]
    layers = [layer for layer in layers if layer]
    if not layers:
        raise InputError(f"a utility pattern needs at least one attribute, got {text!r}")
    return layers


@dataclass(frozen=True)
class LinearProfit:
    """``profit(loss) = maximum - slope * loss`` (the ``linear:MAX,SLOPE`` profit)."""

    maximum: float
    slope: float

    def __call__(self, loss):
        return self.maximum - self.slope * np.asarray(loss, dtype=np.float64)

    def describe(self) -> dict:
        return {"kind": "linear", "max": self.maximum, "slope": self.slope}


def parse_profit(spec) -> Callable:
    """A profit function from ``"linear:MAX,SLOPE"``, a :class:`LinearProfit` or any callable
    of the utility loss (given a NumPy array it may answer element by element)."""
    if callable(spec):
        return spec
    kind, _, rest = str(spec).partition(":")
    if kind.strip().lower() == "linear":
        parts = rest.split(",")
        try:
            if len(parts) != 2:
                raise ValueError(rest)
            maximum, slope = (float(p) for p in parts)
        except ValueError:
            raise InputError(f"profit 'linear:MAX,SLOPE' needs two numbers, got {spec!r}") \
                from None
        if not (math.isfinite(maximum) and math.isfinite(slope)):
            raise InputError(f"profit: MAX and SLOPE must be finite, got {spec!r}")
        return LinearProfit(maximum, slope)
    raise InputError(f"profit must be 'linear:MAX,SLOPE' or a callable, got {spec!r}")


def _canonical(layers) -> tuple:
    return tuple(tuple(sorted(layer)) for layer in layers)


def _moves(layers: list[list[str]]):
    """Every pattern one promotion or demotion away: ``(new layers, move)``."""
    for j, layer in enumerate(layers):
        for a in layer:
            rest = [b for b in layer if b != a]
            for step, kind in ((-1, "promote"), (1, "demote")):
                new = [list(x) for x in layers]
                if rest:  # out of a shared layer, into a new one just above / below
                    new[j] = rest
                    new.insert(j if step < 0 else j + 1, [a])
                    to = j if step < 0 else j + 1
                else:     # alone: into the neighbouring layer
                    if not 0 <= j + step < len(layers):
                        continue
                    new[j + step] = new[j + step] + [a]
                    del new[j]
                    to = j + step if step < 0 else j
                # layers numbered from 0 (highest): from_layer before the move, to_layer after
                yield new, {"attribute": a, "move": kind, "from_layer": j, "to_layer": to}


# ------------------------------------------------------------------------------------------
# the negotiation
# ------------------------------------------------------------------------------------------

class Negotiation:
    """A negotiation of one release between the data owner and a data user (see the module
    docstring for the definitions).

    The parameters are the owner's and the protocol's; :meth:`fit` evaluates the owner's
    table and opens the negotiation (:meth:`offer`, :meth:`counter`, :meth:`accept` ...).

    Parameters
    ----------
    quasi_identifiers : mapping QID -> Hierarchy or ARX CSV path
    sensitive : str
        The sensitive column.
    epsilon, alpha : float
        The privacy constraint: distribution and entropy privacy loss (bits) bounds.
    delta_distribution, gamma_entropy : float or None
        The utility threshold, by the thesis's names: delta bounds the distribution utility
        loss, gamma the entropy utility loss (bits) (None: no bound).  The former keywords
        ``gamma=`` (the distribution bound) and ``delta=`` (the entropy bound) are accepted,
        with that meaning and a ``DeprecationWarning``, for one release.
    basis : {"class", "total"}
        Basis of the privacy constraint; ``utility_basis`` that of the utility threshold and
        of the profit's loss (default: ``basis``).
    objective : {"flat", "variable"}
    profit : "linear:MAX,SLOPE" or callable, optional
        The owner's profit as a function of the utility loss (needed by ``"variable"``;
        reported with ``"flat"`` when given).  ``profit_loss`` picks the loss it is a function
        of: ``"distribution"`` (default) or ``"entropy"``.
    others : {"lowest", "top", "free"}
        What matching asks of the QIDs outside a pattern.
    max_moves : int
        Most promotions and demotions a counter-offer pattern may be away from the user's.
    prior : mapping value -> probability, optional
        The prior of the privacy losses (default: the table's distribution), as in
        :class:`~gpuppdp.models.PrivacyLoss`.
    backend : str or Backend

    Attributes
    ----------
    policies : DataFrame (set by :meth:`fit`, as the others)
        Every lattice node (rows in node-id order): its level per QID, ``node``, ``height``,
        the :data:`FIGURES`, ``privacy_ok`` (in ``G``) and ``utility_ok``.
    log : list of dict
        The rounds, in order: ``{"round", "party", "action", ...}``.
    deal : dict or None
        The accepted policy and its figures.
    status : "open", "pending" (a proposal or counter-offer awaits the user), "deal" or
        "terminated".
    """

    def __init__(self, quasi_identifiers: Mapping, sensitive: str, *,
                 epsilon: float, alpha: float, delta_distribution: float | None = None,
                 gamma_entropy: float | None = None, basis: str = "class",
                 utility_basis: str | None = None, objective: str = "flat", profit=None,
                 profit_loss: str = "distribution", others: str = "lowest",
                 max_moves: int = 4, prior: Mapping | None = None, backend="auto",
                 gamma=_NOT_GIVEN, delta=_NOT_GIVEN):
        self.hierarchies = lattice_hierarchies(quasi_identifiers)
        self.sensitive = check_attribute("sensitive", sensitive, self.hierarchies)
        self.epsilon = check_number("epsilon", epsilon, 0.0)
        self.alpha = check_number("alpha", alpha, 0.0)
        delta_distribution, gamma_entropy = utility_thresholds(delta_distribution,
                                                               gamma_entropy, gamma, delta)
        self.delta_distribution = None if delta_distribution is None else check_number(
            "delta_distribution", delta_distribution, 0.0)
        self.gamma_entropy = None if gamma_entropy is None else check_number(
            "gamma_entropy", gamma_entropy, 0.0)
        utility_basis = basis if utility_basis is None else utility_basis
        for name, value, allowed in (("basis", basis, BASES),
                                     ("utility_basis", utility_basis, BASES),
                                     ("objective", objective, OBJECTIVES),
                                     ("others", others, OTHERS),
                                     ("profit_loss", profit_loss, ("distribution", "entropy"))):
            if value not in allowed:
                raise InputError(f"{name} must be one of {allowed}, got {value!r}")
        self.basis, self.utility_basis = basis, utility_basis
        self.objective, self.others, self.profit_loss = objective, others, profit_loss
        self.profit = None if profit is None else parse_profit(profit)
        if objective == "variable" and self.profit is None:
            raise InputError("the variable-rate objective needs a profit function "
                             "(profit='linear:MAX,SLOPE')")
        if isinstance(max_moves, bool) or not isinstance(max_moves, (int, np.integer)) \
                or max_moves < 0:
            raise InputError(f"max_moves must be an integer >= 0, got {max_moves!r}")
        self.max_moves = int(max_moves)
        self.prior = None if prior is None else dict(prior)
        self.backend = get_backend(backend)
        self.data: Any = None      # the table, a DataFrame once fitted
        self.policies: Any = None  # every node's policy and figures, a DataFrame once fitted
        self.log: list[dict] = []
        self.status = "open"
        self.deal: dict | None = None

    def __repr__(self) -> str:
        params = ", ".join(f"{name}={getattr(self, name)!r}" for name in (
            "sensitive", "epsilon", "alpha", "delta_distribution", "gamma_entropy", "basis",
            "utility_basis",
            "objective", "profit", "profit_loss", "others", "max_moves", "prior"))
        return (f"Negotiation(quasi_identifiers={list(self.hierarchies)!r}, {params}, "
                f"backend={self.backend.name!r})")

    def fit(self, data: pd.DataFrame) -> "Negotiation":
        """Evaluate every policy of ``data`` (the QID columns and the sensitive column; others
        are ignored) and open the negotiation; returns the negotiation itself."""
        self.data = data
        figures = LossFigures(self.sensitive, self.prior)
        # the model only carries the sensitive histograms: no class ever fails it (the
        # distribution loss is at most sqrt(2)), so no policy suppresses records
        carrier = PrivacyLoss(self.sensitive, 2.0, 1e12)
        self._evaluator = lattice_evaluator(data, self.hierarchies, sensitive=[self.sensitive],
                                            models=[carrier], suppression_limit=0.0,
                                            metric=figures, backend=self.backend)
        enc = self._evaluator.encoded
        self.quasi_identifiers = list(enc.qi_names)
        self.heights = np.asarray(enc.heights, dtype=np.int64)
        self.lattice = Lattice(self.heights)
        levels, values = self._evaluate_all()
        self.policies = self._policy_table(levels, values)
        self._levels = levels
        with np.errstate(invalid="ignore", divide="ignore"):
            self._degree = np.where(self.heights > 0, levels / np.maximum(self.heights, 1),
                                    np.nan)
        self.log = []
        self.status = "open"
        self.deal = None
        self._pending: dict | None = None
        self._last_offer: list[list[str]] | None = None
        self._last_matched = False
        return self

    def _evaluate_all(self) -> tuple[np.ndarray, np.ndarray]:
        """``(levels, figures)`` of every lattice node, in node-id order: the whole lattice
        evaluated in batches, the :data:`FIGURES` kept by the metric plug-in."""
        figures = cast(LossFigures, self._evaluator.metric)
        figures.batches.clear()
        stats = LatticeOracle(self._evaluator, self.lattice).evaluate_all()
        values = np.full((self.lattice.size, len(FIGURES)), np.nan)
        seen = np.zeros(self.lattice.size, dtype=bool)
        for levels, fig in figures.batches:
            ids = levels @ self.lattice.strides
            values[ids] = fig
            seen[ids] = True
        figures.batches.clear()
        if not seen.all():  # pragma: no cover - the engine evaluates every node
            raise RuntimeError("the lattice evaluation left nodes without figures")
        return stats.levels, values

    def _policy_table(self, levels: np.ndarray, values: np.ndarray) -> pd.DataFrame:
        """:attr:`policies` from the nodes' levels and figures; keeps the losses on the
        privacy and utility bases, the profits and which nodes are acceptable."""
        table = pd.DataFrame(levels, columns=self.quasi_identifiers)
        table.insert(0, "node", np.arange(self.lattice.size, dtype=np.int64))
        table["height"] = levels.sum(axis=1)
        for j, name in enumerate(FIGURES):
            table[name] = values[:, j]
        pb, ub = _AGG[self.basis], _AGG[self.utility_basis]
        self._privacy_dist = values[:, FIGURES.index(f"distribution_privacy_loss_{pb}")]
        self._privacy_ent = values[:, FIGURES.index(f"entropy_privacy_loss_{pb}")]
        self._utility_dist = values[:, FIGURES.index(f"distribution_utility_loss_{ub}")]
        self._utility_ent = values[:, FIGURES.index(f"entropy_utility_loss_{ub}")]
        privacy_ok = (self._privacy_dist <= self.epsilon) & (self._privacy_ent <= self.alpha)
        utility_ok = np.ones(self.lattice.size, dtype=bool)
        if self.delta_distribution is not None:
            utility_ok &= self._utility_dist <= self.delta_distribution
        if self.gamma_entropy is not None:
            utility_ok &= self._utility_ent <= self.gamma_entropy
        table["privacy_ok"] = privacy_ok
        table["utility_ok"] = utility_ok
        self._profit_values: np.ndarray | None = None
        if self.profit is not None:
            self._profit_values = self._profits()
            table["profit"] = self._profit_values
        self._ok = privacy_ok & utility_ok
        return table

    def _profits(self) -> np.ndarray:
        """The profit of every node, from the utility loss ``profit_loss`` names."""
        loss = self._utility_dist if self.profit_loss == "distribution" else self._utility_ent
        profit = self.profit
        assert profit is not None  # (a profit function is given)
        profit_values = profit(loss)
        if np.ndim(profit_values) == 0:  # a scalar function: one call per node
            profit_values = np.fromiter((float(profit(float(u))) for u in loss),
                                        dtype=np.float64, count=len(loss))
        return np.asarray(profit_values, dtype=np.float64).reshape(-1)

    # -- the policy set --------------------------------------------------------------------
    @property
    def G(self) -> pd.DataFrame:  # noqa: N802 - the paper's name
        """The policies meeting the privacy constraint (rows of :attr:`policies`)."""
        self._require_fitted()
        return self.policies[self.policies["privacy_ok"].to_numpy()]

    def _require_fitted(self) -> None:
        if self.policies is None:
            raise RuntimeError("the negotiation has no policies yet: fit(data) first")

    def _check_pattern(self, pattern) -> list[list[str]]:
        self._require_fitted()
        if isinstance(pattern, str):
            pattern = parse_pattern(pattern)
        if not isinstance(pattern, Sequence) or not pattern:
            raise InputError(f"a utility pattern is a non-empty list of layers, got {pattern!r}")
        layers, seen = [], set()
        for layer in pattern:
            if isinstance(layer, str):
                layer = [layer]
            layer = [str(a) for a in layer]
            if not layer:
                raise InputError(f"a utility pattern's layers must be non-empty: {pattern!r}")
            for a in layer:
                if a not in self.quasi_identifiers:
                    raise InputError(f"utility pattern: {a!r} is not a quasi-identifier "
                                     f"({', '.join(self.quasi_identifiers)})")
                if a in seen:
                    raise InputError(f"utility pattern: {a!r} appears twice")
                seen.add(a)
            layers.append(layer)
        return layers

    def matches(self, pattern) -> np.ndarray:
        """Per lattice node (node-id order): does the policy match ``pattern``?"""
        layers = self._check_pattern(pattern)
        index = {q: j for j, q in enumerate(self.quasi_identifiers)}
        named = {a for layer in layers for a in layer}
        outside = [q for q in self.quasi_identifiers if q not in named]
        ok = np.ones(self.lattice.size, dtype=bool)
        if self.others == "lowest" and outside:
            layers = layers + [outside]
        elif self.others == "top":
            for q in outside:
                ok &= self._levels[:, index[q]] == self.heights[index[q]]
        deg = self._degree
        lo = [np.nanmax(np.column_stack([deg[:, index[a]] for a in layer] + [
            np.full(len(deg), -np.inf)]), axis=1) for layer in layers]
        hi = [np.nanmin(np.column_stack([deg[:, index[a]] for a in layer] + [
            np.full(len(deg), np.inf)]), axis=1) for layer in layers]
        below = np.full(self.lattice.size, np.inf)
        for j in range(len(layers) - 1, 0, -1):  # the least degree of layers j.. onwards
            below = np.minimum(below, hi[j])
            ok &= lo[j - 1] <= below
        return ok

    def _best(self, mask: np.ndarray) -> int | None:
        """The owner's choice among the nodes of ``mask`` (see the module docstring)."""
        ids = np.flatnonzero(mask)
        if len(ids) == 0:
            return None
        keys = [ids, -self.policies["height"].to_numpy()[ids], self._privacy_ent[ids],
                self._privacy_dist[ids]]
        if self.objective == "variable":
            assert self._profit_values is not None  # (the variable-rate objective's profits)
            keys.append(-self._profit_values[ids])
        return int(ids[np.lexsort(keys)[0]])

    def _policy(self, node: int) -> dict:
        row = self.policies.iloc[node]
        out = {"policy": {q: int(row[q]) for q in self.quasi_identifiers}, "node": int(node),
               "height": int(row["height"])}
        for name in FIGURES:
            out[name] = float(row[name])
        if self._profit_values is not None:
            out["profit"] = float(self._profit_values[node])
        return out

    def _record(self, party: str, action: str, **fields) -> dict:
        entry = {"round": len(self.log) + 1, "party": party, "action": action, **fields}
        self.log.append(entry)
        return entry

    def _require(self, *states: str, what: str) -> None:
        self._require_fitted()
        if self.status not in states:
            raise RuntimeError(f"cannot {what}: the negotiation is {self.status}")

    # -- the moves -------------------------------------------------------------------------
    def offer(self, pattern) -> dict:
        """The data user offers a utility ``pattern`` (layers, highest first; or the text
        ``"a,b;c"``).  Returns the owner's answer (also logged): ``{"action": "proposal",
        "policy": ..., figures}`` when a policy of ``G`` meeting the utility threshold matches
        the pattern (then :meth:`accept` or :meth:`reject` it), else ``{"action":
        "no-match"}`` (then :meth:`counter`, a new offer, or :meth:`terminate`)."""
        self._require("open", what="offer (accept() or reject() the pending offer first)")
        layers = self._check_pattern(pattern)
        self._record("user", "offer", pattern=[list(x) for x in layers])
        self._last_offer = layers
        node = self._best(self._ok & self.matches(layers))
        self._last_matched = node is not None
        if node is None:
            return self._record("owner", "no-match", pattern=[list(x) for x in layers],
                                matching_policies=int((self.matches(layers)
                                                       & self.policies["privacy_ok"]).sum()))
        answer = self._record("owner", "proposal", pattern=[list(x) for x in layers],
                              **self._policy(node))
        self._pending = answer
        self.status = "pending"
        return answer

    def counter(self) -> dict | None:
        """The owner's counter-offer to the user's last, unmatched offer: the pattern the
        fewest promotions and demotions away (at most ``max_moves``) that a policy of ``G``
        meeting the utility threshold matches, with that policy, the moves and their count;
        when none is reached, the best such policy of ``G`` with ``pattern`` and ``moves``
        ``None``.  ``None`` (and the negotiation terminated) when no policy of ``G`` meets
        the utility threshold."""
        self._require("open", what="counter")
        if self._last_offer is None or self._last_matched:
            raise RuntimeError("counter() answers an offer no policy matched: offer() first")
        if not self._ok.any():
            self._record("owner", "terminate", reason="no policy meets both the privacy "
                         "constraint and the utility threshold")
            self.status = "terminated"
            return None
        found = self._search_counter(self._last_offer)
        if found is None:
            node, layers, moves = self._best(self._ok), None, None
        else:
            node, layers, moves = found
        assert node is not None  # (a node meets both the constraint and the threshold)
        answer = self._record("owner", "counter",
                              pattern=None if layers is None else [list(x) for x in layers],
                              moves=moves, n_moves=None if moves is None else len(moves),
                              **self._policy(node))
        self._pending = answer
        self.status = "pending"
        return answer

    def _search_counter(self, layers):
        """Breadth-first over promotions and demotions: ``(node, layers, moves)`` of the
        nearest patterns some acceptable policy matches (the owner's best among them), or
        ``None`` within ``max_moves``."""
        frontier = [(layers, [])]
        visited = {_canonical(layers)}
        for _ in range(self.max_moves):
            nxt, hits = [], []
            for current, path in frontier:
                for new, move in _moves(current):
                    key = _canonical(new)
                    if key in visited:
                        continue
                    visited.add(key)
                    nxt.append((new, path + [move]))
                    node = self._best(self._ok & self.matches(new))
                    if node is not None:
                        hits.append((node, new, path + [move]))
            if hits:
                best = self._best(np.isin(np.arange(self.lattice.size), [h[0] for h in hits]))
                return min((h for h in hits if h[0] == best), key=lambda h: repr(_canonical(h[1])))
            frontier = nxt
        return None

    def accept(self) -> dict:
        """The data user accepts the pending proposal or counter-offer: the deal."""
        self._require("pending", what="accept (nothing is pending)")
        pending = self._pending
        assert pending is not None  # (checked: one is pending)
        self._record("user", "accept", node=pending["node"])
        deal = {k: v for k, v in pending.items() if k not in ("round", "party", "action")}
        deal["via"] = pending["action"]
        self.deal = deal
        self.status = "deal"
        self._pending = None
        return deal

    def reject(self) -> None:
        """The data user rejects the pending proposal or counter-offer; the user may offer
        again or :meth:`terminate`."""
        self._require("pending", what="reject (nothing is pending)")
        assert self._pending is not None  # (checked: one is pending)
        self._record("user", "reject", node=self._pending["node"])
        self._pending = None
        self._last_offer = None
        self.status = "open"

    def terminate(self, party: str = "user") -> None:
        """End the negotiation without a deal."""
        self._require("open", "pending", what="terminate")
        self._record(party, "terminate")
        self._pending = None
        self.status = "terminated"

    # -- results ---------------------------------------------------------------------------
    def release(self, *, seed=None, suppression: str = "mark"):
        """The released table of the deal (a :class:`~gpuppdp.engine.transform.Release`:
        every record, generalized to the deal's policy, rows permuted by ``seed``; the QID
        columns and the sensitive column, other columns dropped)."""
        if self.deal is None:
            raise RuntimeError("no deal: nothing to release")
        levels = [self.deal["policy"][q] for q in self.quasi_identifiers]
        out = transform.release(self.data, self._evaluator, levels, suppression=suppression,
                                seed=seed)
        cast(LossFigures, self._evaluator.metric).batches.clear()  # the node's figures
        return out

    def summary(self) -> dict:
        """The settings, ``G``'s size, the rounds and the deal (JSON-ready)."""
        self._require_fitted()
        profit = None
        if self.profit is not None:
            profit = self.profit.describe() if hasattr(self.profit, "describe") else \
                repr(self.profit)
        return {
            "protocol": "UBNB-PPDD",
            "objective": self.objective,
            "sensitive": self.sensitive,
            "quasi_identifiers": list(self.quasi_identifiers),
            "privacy_constraint": {"epsilon": self.epsilon, "alpha": self.alpha,
                                   "basis": self.basis, "prior": self.prior},
            "utility_threshold": {"delta_distribution": self.delta_distribution,
                                  "gamma_entropy": self.gamma_entropy,
                                  "basis": self.utility_basis},
            "profit": profit, "profit_loss": self.profit_loss, "others": self.others,
            "lattice_size": int(self.lattice.size),
            "policies_in_G": int(self.policies["privacy_ok"].sum()),
            "policies_acceptable": int(self._ok.sum()),
            "status": self.status,
            "rounds": [dict(r) for r in self.log],
            "deal": None if self.deal is None else dict(self.deal),
        }
