"""The interface between the engine and the privacy models (ARX's ``PrivacyCriterion``): what
a model needs from the table (:class:`Requirement`), how it judges classes
(:class:`PrivacyModel`) and what the compiled Flash needs to judge it itself
(:class:`CompiledCheck`).  The models (:mod:`gpuppdp.models`) implement it; the engine sees
them only through it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .classes import Classes

__all__ = ["Requirement", "PrivacyModel", "CompiledCheck", "COMPILED_KINDS"]

#: the kinds of :class:`CompiledCheck`: class sizes only, distinct, entropy and recursive
#: (c, l)-diversity, t-closeness with the equal, ordered or hierarchical distance,
#: (alpha, k)-anonymity, beta-likeness, delta-disclosure privacy, the privacy-loss model, k-map,
#: delta-presence, k-anonymity on QID subsets, LKC-privacy with its confidence bound, the
#: average re-identification risk and sample uniqueness
COMPILED_KINDS = ("size", "distinct", "entropy", "recursive", "t-closeness", "alpha-k",
                  "beta-likeness", "delta-disclosure", "privacy-loss", "k-map", "delta-presence",
                  "subsets", "lkc", "average-risk", "sample-uniqueness")


@dataclass(frozen=True)
class CompiledCheck:
    """What the compiled Flash needs to judge a bound model's classes itself: the ``kind`` (of
    :data:`COMPILED_KINDS`), the sensitive ``attribute`` it judges and its parameters:

    * ``distinct``: ``l``;  ``entropy``: ``min_size`` (ceil l) and ``ln_l``;  ``recursive``:
      ``l`` and ``c``;  ``t-closeness``: ``t`` (ordered: ``t (m - 1)``, ARX's test) and
      ``distance`` (0 equal, 1 ordered, 2 hierarchical), the arrays ``shares`` (each
      sensitive value's share of the table) and, hierarchical, ``tree`` (per level its node
      count, child offsets and children) and ``value_counts`` (each value's count, then the
      table's rows), ordered, ``order`` (the codes in the attribute's order);  ``alpha-k``:
      ``alpha`` and ``value`` (the value's code; -1: every value);  ``beta-likeness``:
      ``beta``, ``enhanced`` (0 or 1) and the arrays ``shares`` and ``neg_log_shares``
      (``-ln`` of each share);  ``delta-disclosure``: ``low`` and ``high`` (the ratios
      ``p_E(v) / p(v)`` at and past which a class fails) and ``shares``;  ``privacy-loss``:
      ``epsilon``, ``alpha``, ``prior_sq`` and ``prior_entropy`` (the prior's ``sum q^2``
      and entropy in bits) and the array ``prior`` (each value's prior probability), or with
      the class-conditional prior ``prior_columns`` (the bit mask of the QIDs it is
      conditioned on) instead;
      ``k-map``: ``k``;  ``delta-presence``: ``low`` and ``high``; both with the arrays
      ``population_codes`` and ``population_count`` (the population's frequency set at the
      leaves);  ``subsets``: the array ``subsets`` (the number of QID subsets, then per subset
      its ``k``, its length and its columns);  ``lkc``: ``c`` and the arrays ``subsets`` and
      ``listed`` (1.0 for each sensitive value the confidence bound applies to);
      ``average-risk``: ``t``, ``smallest_size`` (ARX's size threshold of the highest risk;
      0: none) and ``records_at_risk``;
      ``sample-uniqueness``: ``t``;  ``population-uniqueness``: ``t``, ``estimator`` (its code)
      and ``population_size``; the three with the arrays ``star_off`` and ``stars`` (which
      labels are ``*``: :func:`~gpuppdp.engine.search.flash_risk.suppress_by_risk`).
    """

    kind: str
    attribute: str | None = None
    numbers: Mapping[str, float] = field(default_factory=dict)
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)


class Requirement(enum.Flag):
    """What a model needs to judge a class (ARX's ``PrivacyCriterion.getRequirements()``).

    ``COUNTS``: the class sizes only; ``SENSITIVE_HISTOGRAM``: each class's histogram of the
    model's ``sensitive_attribute`` (the encoder carries a sensitive attribute only when some
    model asks for it); ``SENSITIVE_HIERARCHY``: that attribute's generalization hierarchy;
    ``POPULATION``: a population table the input is a sample of; ``RELEASED_CLASSES``: the
    verdict on a class depends on which other classes are released (the evaluator iterates
    such models to a common fixed point, passing the classes suppressed so far);
    ``SIZE_DISTRIBUTION``: the model judges the distribution of the released classes' sizes
    as a whole and suppresses classes until it holds (ARX's ``SampleBasedCriterion``: the
    evaluator calls its ``suppress(classes, outlier, max_suppressed, order_key)`` after every
    other model has chosen its outliers).
    """

    COUNTS = enum.auto()
    SENSITIVE_HISTOGRAM = enum.auto()
    SENSITIVE_HIERARCHY = enum.auto()
    POPULATION = enum.auto()
    RELEASED_CLASSES = enum.auto()
    SIZE_DISTRIBUTION = enum.auto()


class PrivacyModel:
    """Base class of privacy models.

    Attributes
    ----------
    min_class_size : int or None
        Classes smaller than this fail (k for k-anonymity, ceil(l) for l-diversity).
    sensitive_attribute : str or None
        The attribute whose per-class histograms the model needs.
    monotonic_with_generalization, monotonic_with_suppression : bool
        Soundness flags used by the pruning search (Kohlmayer et al. 2012, Flash).
    requires : Requirement
        What the model needs from the table and the evaluator.
    """

    min_class_size: int | None = None
    sensitive_attribute: str | None = None
    monotonic_with_generalization: bool = True
    monotonic_with_suppression: bool = True

    @property
    def requires(self) -> Requirement:
        """:class:`Requirement` flags; a model with a ``sensitive_attribute`` needs its
        histograms.  Models with ``RELEASED_CLASSES`` take ``class_fails(classes,
        suppressed)``."""
        need = Requirement.COUNTS
        if self.sensitive_attribute is not None:
            need |= Requirement.SENSITIVE_HISTOGRAM
        return need

    def bind(self, encoded) -> "PrivacyModel":
        """Precompute what the model needs from the encoded table (the sensitive attribute's
        global distribution, its hierarchy tree, ...); returns ``self``.  Called once per
        table before any :meth:`class_fails` (the default needs nothing)."""
        return self

    def class_fails(self, classes: Classes):
        """Boolean device array, True for classes violating the model (beyond the size test),
        or ``None`` when the size test is all there is."""
        return None

    def describe(self) -> dict:
        raise NotImplementedError

    @classmethod
    def compiled_kind_of(cls, **parameters) -> str | None:
        """The kind of :class:`CompiledCheck` a model of this class built with ``parameters``
        (its constructor's keywords) has, without building it; None: the compiled Flash
        does not judge it.  The default: the class's ``compiled_kind`` where it is a name."""
        kind = getattr(cls, "compiled_kind", None)
        return kind if isinstance(kind, str) else None

    @property
    def compiled_kind(self) -> str | None:
        """The kind of this model's :meth:`compiled_check` (None: the compiled Flash does not
        judge it), known before the model is bound.  The default: ``size`` for a model judged
        by its minimal class size alone."""
        if type(self).class_fails is PrivacyModel.class_fails and \
                self.sensitive_attribute is None and \
                Requirement.RELEASED_CLASSES not in self.requires:
            return "size"
        return None

    def compiled_check(self) -> CompiledCheck | None:
        """What the compiled Flash needs to judge this (bound) model (None: it cannot): the
        default for a model judged by its minimal class size alone."""
        kind = self.compiled_kind
        return None if kind is None else CompiledCheck(kind, self.sensitive_attribute)
