"""Models on the relative frequencies of sensitive values in a class: (alpha, k)-anonymity,
delta-disclosure privacy, beta-likeness and the (epsilon, alpha) privacy-loss model.
Each exposes its per-class statistic (one formula, shared with the checker).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.classes import Classes, entry_shares, segment_max, segment_sum
from ..errors import InputError
from ..kernels import groupby
from ..validation import (
    check_int,
    check_number,
    check_positive,
    column_list,
    format_values,
    plain_number,
)
from .base import CompiledCheck, SensitiveModel

__all__ = ["AlphaKAnonymity", "DeltaDisclosurePrivacy", "BetaLikeness", "PrivacyLoss",
           "privacy_losses"]


class _DistributionModel(SensitiveModel):
    """A sensitive-attribute model that compares classes with the table's distribution
    ``p`` (over all rows of the input, before generalization and suppression)."""

    def _bind(self, encoded):
        xp = self.backend.xp
        self._counts = self._global_counts()
        self._p = self._counts.astype(xp.float64) / float(self.n_rows)


class AlphaKAnonymity(SensitiveModel):
    """(alpha, k)-anonymity (Wong, Li, Fu & Wang 2006): every class holds at least ``k``
    records and the relative frequency of every sensitive value in it -- or, with ``value``,
    of that one sensitive value -- is at most ``alpha``.

    Monotonic with generalization (a merged class's frequencies are weighted averages of its
    parts', so never above their largest), not with suppression.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    compiled_kind = "alpha-k"

    def __init__(self, attribute: str, alpha: float, k: int = 1, value: str | None = None):
        super().__init__(attribute)
        self.alpha = check_number("alpha", alpha, 0.0, 1.0)
        self.k = check_int("k", k, 1)
        self.min_class_size = self.k
        if value is not None and not isinstance(value, str):
            raise InputError(f"value must be a sensitive value (a string), got {value!r}")
        self.value = value

    def _bind(self, encoded):
        labels = [str(v) for v in self.labels]
        self._code = labels.index(self.value) if self.value in labels else -1

    def alphas(self, classes: Classes):
        """Per class the largest relative frequency of a sensitive value (of ``value`` when
        given; 0 where it is absent) -- device float64."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = entry_shares(classes)
        if self.value is None:
            return segment_max(xp, cls, share, classes.n_classes)
        return segment_sum(xp, cls, xp.where(sens == self._code, share, 0.0),
                            classes.n_classes)

    def class_fails(self, classes: Classes):
        return self.alphas(classes) > self.alpha

    def compiled_check(self) -> CompiledCheck:
        """``alpha`` and the value's code (-1: every value; one past the codes: a value not in
        the data, whose share is 0)."""
        code = -1 if self.value is None else self._code if self._code >= 0 else self.n_values
        return CompiledCheck("alpha-k", self.sensitive_attribute,
                             {"alpha": self.alpha, "value": code})

    def describe(self) -> dict:
        out = {"model": "alpha-k-anonymity", "attribute": self.sensitive_attribute,
               "alpha": plain_number(self.alpha), "k": self.k}
        if self.value is not None:
            out["value"] = self.value
        return out

    def __repr__(self) -> str:
        extra = "" if self.value is None else f", value={self.value!r}"
        return (f"AlphaKAnonymity({self.sensitive_attribute!r}, alpha={plain_number(self.alpha)}, "
                f"k={self.k}{extra})")


class DeltaDisclosurePrivacy(_DistributionModel):
    """delta-disclosure privacy (Brickell & Shmatikov 2008): for every class and every
    sensitive value ``v`` present in it, ``|log2(p_E(v) / p(v))| < delta`` with ``p`` the whole
    table's distribution.

    The logarithm is to base 2, computed as ``ln(x) / ln 2`` as ARX's ``DDisclosurePrivacy``
    does, so verdicts match ARX's (the paper leaves the base open; a natural-log ``delta``
    is ``delta / ln 2`` here).  Neither monotonic with generalization (a merged class can hold
    a value much rarer than in the part that had it) nor with suppression, as in ARX.
    """

    monotonic_with_generalization = False
    monotonic_with_suppression = False
    min_class_size = None
    compiled_kind = "delta-disclosure"

    def __init__(self, attribute: str, delta: float):
        super().__init__(attribute)
        self.delta = check_positive("delta", delta)

    @staticmethod
    def _log2_ratios(xp, ratio):
        """``|log2(ratio)|`` as ARX computes it, ``|ln(ratio) / ln 2|`` (device float64)."""
        return xp.abs(xp.log(ratio) / math.log(2))

    def deltas(self, classes: Classes):
        """Per class ``max_v |log2(p_E(v) / p(v))|`` over the values present (device float64)."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = entry_shares(classes)
        return segment_max(xp, cls, self._log2_ratios(xp, share / self._p[sens]),
                            classes.n_classes)

    def class_fails(self, classes: Classes):
        return ~(self.deltas(classes) < self.delta)

    def _edge(self, outside: float) -> float:
        """The ratio nearest 1 towards ``outside`` (0 or inf, never reached by a ratio) whose
        ``|log2|`` (:meth:`_log2_ratios`, the backend's logarithm) is not below ``delta``:
        a bisection over the float64 values between, which order as their bit patterns."""
        be = self.backend
        inside, out = (int(b) for b in np.array([1.0, outside]).view(np.int64))
        while abs(out - inside) > 1:
            mid = (inside + out) // 2
            ratio = be.asarray(np.array([mid], np.int64).view(np.float64))
            if be.to_host(self._log2_ratios(be.xp, ratio))[0] < self.delta:
                inside = mid
            else:
                out = mid
        return float(np.array([out], np.int64).view(np.float64)[0])

    def compiled_check(self) -> CompiledCheck:
        """The ratios ``p_E(v) / p(v)`` at and past which the model's ``|log2|`` reaches
        ``delta`` (``low`` below 1, ``high`` above; :meth:`_edge`: a comparison with them
        decides as :meth:`class_fails`, the logarithm being monotonic) and the values'
        shares of the table."""
        return CompiledCheck("delta-disclosure", self.sensitive_attribute,
                             {"low": self._edge(0.0), "high": self._edge(math.inf)},
                             {"shares": self.backend.to_host(self._p)})

    def describe(self) -> dict:
        return {"model": "delta-disclosure", "attribute": self.sensitive_attribute,
                "delta": plain_number(self.delta)}

    def __repr__(self) -> str:
        return (f"DeltaDisclosurePrivacy({self.sensitive_attribute!r}, "
                f"delta={plain_number(self.delta)})")


class BetaLikeness(_DistributionModel):
    """beta-likeness (Cao & Karras 2012): for every class and every sensitive value with
    ``p_E(v) > p(v)``, the relative gain ``(p_E(v) - p(v)) / p(v)`` is at most ``beta``
    (basic), or at most ``min(beta, -ln p(v))`` (``enhanced=True``).

    Monotonic with generalization (a merged class's ``p_E(v)`` is at most its parts' largest,
    and the bound depends on ``v`` only), not with suppression.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    min_class_size = None
    compiled_kind = "beta-likeness"

    def __init__(self, attribute: str, beta: float, enhanced: bool = False):
        super().__init__(attribute)
        self.beta = check_positive("beta", beta)
        self.enhanced = bool(enhanced)

    def betas(self, classes: Classes):
        """Per class the smallest ``beta`` the class satisfies (device float64; 0 when no
        value is over-represented; enhanced: ``inf`` when some gain exceeds ``-ln p(v)``)."""
        self._require_bound(classes)
        xp = classes.xp
        cls, sens, share = entry_shares(classes)
        p = self._p[sens]
        gain = (share - p) / p
        gain = xp.where(share > p, gain, 0.0)
        if self.enhanced:
            gain = xp.where(gain > -xp.log(p), xp.inf, gain)
        return segment_max(xp, cls, gain, classes.n_classes)

    def class_fails(self, classes: Classes):
        return self.betas(classes) > self.beta

    def compiled_check(self) -> CompiledCheck:
        """``beta``, ``enhanced``, the values' shares of the table and their ``-ln``."""
        be, xp = self.backend, self.backend.xp
        return CompiledCheck("beta-likeness", self.sensitive_attribute,
                             {"beta": self.beta, "enhanced": int(self.enhanced)},
                             {"shares": be.to_host(self._p),
                              "neg_log_shares": be.to_host(-xp.log(self._p))})

    def describe(self) -> dict:
        return {"model": "enhanced-beta-likeness" if self.enhanced else "basic-beta-likeness",
                "attribute": self.sensitive_attribute, "beta": plain_number(self.beta)}

    def __repr__(self) -> str:
        return (f"BetaLikeness({self.sensitive_attribute!r}, beta={plain_number(self.beta)}, "
                f"enhanced={self.enhanced})")


def _check_prior(prior) -> dict:
    if not isinstance(prior, Mapping) or not prior:
        raise InputError(f"prior must be a non-empty mapping sensitive value -> probability, "
                         f"got {prior!r}")
    out = {}
    for v, pr in prior.items():
        if isinstance(pr, bool) or not isinstance(pr, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(pr)) or not 0.0 <= float(pr) <= 1.0:
            raise InputError(f"prior[{v!r}] must be a probability in [0, 1], got {pr!r}")
        out[str(v)] = float(pr)
    total = math.fsum(out.values())
    if abs(total - 1.0) > 1e-6:
        raise InputError(f"prior probabilities must sum to 1, they sum to {total!r}")
    return out


def privacy_losses(classes: Classes, prior_of, prior_sq, prior_entropy):
    """``(distribution_loss, entropy_loss)`` per class of the (epsilon, alpha) privacy-loss
    model: ``||p_E - q||_2`` and ``|H(q) - H(p_E)|`` (bits) against a prior ``q`` given by
    ``prior_of(cls, sens) -> q(v)`` of each histogram entry (its class and value), ``sum q^2``
    and ``H(q)`` (scalars, or per class: a prior per node)."""
    xp = classes.xp
    cls, sens, share = entry_shares(classes)
    # |p_E - q|^2 = sum_all q^2 + sum_{v in E} (p_E^2 - 2 p_E q)
    sq = prior_sq + segment_sum(xp, cls, share * share - 2.0 * share * prior_of(cls, sens),
                                classes.n_classes)
    return xp.sqrt(xp.maximum(sq, 0.0)), xp.abs(prior_entropy - classes.entropy_bits())


class PrivacyLoss(SensitiveModel):
    """The (epsilon, alpha) privacy-loss model: per class the distribution loss is the
    Euclidean distance between the prior distribution of the sensitive attribute (the table's
    distribution, or ``prior``: a mapping value -> probability covering every value of the
    data) and the class's distribution, the entropy loss ``|H(prior) - H(class)|`` in bits.
    A class fails when its distribution loss exceeds ``epsilon`` or its entropy loss
    exceeds ``alpha``.

    ``prior="conditional"`` with ``prior_qids``: the class-conditional prior ``a_{S,[C_q]}``
    of the thesis "seed 004" -- the adversary, who knows a class's values on the public QIDs
    ``prior_qids``, expects of class ``C`` the sensitive distribution among all records of the
    table that share ``C``'s (generalized) values on ``prior_qids`` at the same node, estimated
    from the table before suppression.  With every QID public the prior is the class itself
    (no loss); with none it would be the table's distribution (the default).

    Not monotonic (entropy loss can grow when classes merge): both flags ``False``.
    """

    monotonic_with_generalization = False
    monotonic_with_suppression = False
    min_class_size = None

    compiled_kind = "privacy-loss"

    def __init__(self, attribute: str, epsilon: float, alpha: float, prior=None,
                 prior_qids: Sequence[str] = ()):
        super().__init__(attribute)
        self.epsilon = check_number("epsilon", epsilon, 0.0)
        self.alpha = check_number("alpha", alpha, 0.0)
        if isinstance(prior, str):
            if prior != "conditional":
                raise InputError(f"prior must be None, 'conditional' or a mapping value -> "
                                 f"probability, got {prior!r}")
            self.prior_qids = column_list(prior_qids, "prior_qids")
            self.prior: str | dict | None = prior
        else:
            if len(prior_qids):
                raise InputError(f"prior_qids={list(prior_qids)!r} needs prior='conditional'")
            self.prior_qids = []
            self.prior = None if prior is None else _check_prior(prior)

    def _bind(self, encoded):
        be = self.backend
        labels = [str(v) for v in self.labels]
        if self.prior == "conditional":
            names = list(encoded.qi_names)
            unknown = [q for q in self.prior_qids if q not in names]
            if unknown:
                raise InputError(f"prior_qids: {unknown[0]!r} is not a quasi-identifier (they "
                                 f"are {', '.join(names)})")
            self._prior_columns = [names.index(q) for q in self.prior_qids]
            return
        if self.prior is None:
            counts = be.to_host(self._global_counts()).astype(np.float64)
            q = counts / float(self.n_rows)
            rest = np.zeros(0)
        else:
            missing = [v for v in labels if v not in self.prior or self.prior[v] <= 0]
            if missing:
                raise InputError(f"prior gives no (or zero) probability to value(s) of "
                                 f"{self.sensitive_attribute!r} in the data: "
                                 f"{format_values(missing)}")
            q = np.array([self.prior[v] for v in labels], dtype=np.float64)
            present = set(labels)
            rest = np.array([pr for v, pr in self.prior.items() if v not in present])
        everything = np.concatenate([q, rest])
        nz = everything[everything > 0]
        self._h_prior = float(-(nz * np.log2(nz)).sum())
        self._q_sq = float((everything ** 2).sum())     # sum of q^2 over the whole prior
        self._q = be.asarray(q)

    def losses(self, classes: Classes):
        """``(distribution_loss, entropy_loss)`` per class (device float64 each)."""
        self._require_bound(classes)
        if self.prior == "conditional":
            return self._conditional_losses(classes)
        return privacy_losses(classes, lambda cls, sens: self._q[sens], self._q_sq, self._h_prior)

    def _conditional_losses(self, classes: Classes):
        """The losses against each class's conditional prior: the classes grouped by node and
        their codes on ``prior_qids``, each group's sensitive histogram the sum of its
        classes'."""
        xp = classes.xp
        cls, sens, _ = entry_shares(classes)
        keys = [classes.node.astype(xp.int64)] + [
            classes.codes[:, j].astype(xp.int64) for j in self._prior_columns]
        grp = groupby.group(xp, keys, order="sorted")[0].astype(xp.int64)
        n_groups = int(self.backend.scalar(grp.max())) + 1 if grp.shape[0] else 0
        size = segment_sum(xp, grp, classes.size, n_groups)
        pair, rep, _ = groupby.group(xp, [grp[cls], sens], order="sorted")
        pair = pair.astype(xp.int64)
        n_pairs = int(rep.shape[0])
        g_pair = grp[cls][rep]
        q_pair = segment_sum(xp, pair, classes.entry_count, n_pairs) / size[g_pair]
        q_sq = segment_sum(xp, g_pair, q_pair * q_pair, n_groups)
        h = -segment_sum(xp, g_pair, q_pair * xp.log2(q_pair), n_groups)
        return privacy_losses(classes, lambda c, s: q_pair[pair], q_sq[grp], h[grp])

    def class_fails(self, classes: Classes):
        dist, ent = self.losses(classes)
        return (dist > self.epsilon) | (ent > self.alpha)

    def compiled_check(self) -> CompiledCheck:
        """``epsilon``, ``alpha``, the prior's ``sum q^2`` and entropy ``H(q)`` and each
        value's ``q(v)``; for the conditional prior the bit mask of its QIDs
        (``prior_columns``: the compiled Flash forms each class's prior itself)."""
        if self.prior == "conditional":
            return CompiledCheck("privacy-loss", self.sensitive_attribute,
                                 {"epsilon": self.epsilon, "alpha": self.alpha,
                                  "prior_columns": float(sum(1 << j for j in
                                                             self._prior_columns))})
        return CompiledCheck("privacy-loss", self.sensitive_attribute,
                             {"epsilon": self.epsilon, "alpha": self.alpha,
                              "prior_sq": self._q_sq, "prior_entropy": self._h_prior},
                             {"prior": self.backend.to_host(self._q)})

    def describe(self) -> dict:
        out = {"model": "privacy-loss", "attribute": self.sensitive_attribute,
               "epsilon": plain_number(self.epsilon), "alpha": plain_number(self.alpha)}
        if self.prior == "conditional":
            out["prior"], out["prior_qids"] = "conditional", list(self.prior_qids)
        elif isinstance(self.prior, dict):
            out["prior"] = dict(self.prior)
        return out

    def __repr__(self) -> str:
        extra = f", prior='conditional', prior_qids={self.prior_qids!r}" \
            if self.prior == "conditional" else ""
        return (f"PrivacyLoss({self.sensitive_attribute!r}, epsilon={plain_number(self.epsilon)}, "
                f"alpha={plain_number(self.alpha)}{extra})")


# ---------------------------------------------------------------------------------------
