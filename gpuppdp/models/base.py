"""The base of every privacy model (ARX's ``PrivacyCriterion``) and of the models that judge
the histogram of one sensitive attribute per class.
"""

from __future__ import annotations

import enum
import math

import numpy as np
from numba import njit

from ..core.classes import Classes
from ..validation import check_name

__all__ = ["Requirement", "PrivacyModel", "SensitiveModel", "LOG_TABLE_MAX", "log_table"]


class Requirement(enum.Flag):
    """What a model needs to judge a class (ARX's ``PrivacyCriterion.getRequirements()``).

    ``COUNTS``: the class sizes only; ``SENSITIVE_HISTOGRAM``: each class's histogram of the
    model's ``sensitive_attribute`` (the encoder carries a sensitive attribute only when some
    model asks for it); ``SENSITIVE_HIERARCHY``: that attribute's generalization hierarchy;
    ``POPULATION``: a population table the input is a sample of; ``RELEASED_CLASSES``: the
    verdict on a class depends on which other classes are released (the evaluator iterates
    such models to a common fixed point, passing the classes suppressed so far).
    """

    COUNTS = enum.auto()
    SENSITIVE_HISTOGRAM = enum.auto()
    SENSITIVE_HIERARCHY = enum.auto()
    POPULATION = enum.auto()
    RELEASED_CLASSES = enum.auto()


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



#: ln(k) for k = 0..LOG_TABLE_MAX is tabulated once (ln 0 is stored as 0 and never used);
#: larger counts (classes of more than ~4M records) are looked up through their unique values.
LOG_TABLE_MAX = 1 << 22


@njit(cache=True)
def log_table(n):
    """``math.log`` (the C library's log, as Python's ``math.log``) of 0..n; entry 0 is 0."""
    out = np.empty(n + 1, dtype=np.float64)
    out[0] = 0.0
    for k in range(1, n + 1):
        out[k] = math.log(k)
    return out


class SensitiveModel(PrivacyModel):
    """A model judging each class's histogram of one sensitive attribute.

    :meth:`bind` records the backend and the table's size; models that need more from the
    table (the global distribution, an order, a tree) extend it.  Evaluating a model that was
    never bound raises a clear error.
    """

    _encoded = None

    def __init__(self, attribute: str):
        self.sensitive_attribute = check_name("attribute", attribute)

    def bind(self, encoded):
        if encoded is self._encoded:
            return self
        column = encoded.sensitive_column(self.sensitive_attribute)
        if encoded.n_rows >= 2 ** 31:
            raise ValueError(f"{self!r}: tables of 2^31 rows or more are not supported "
                             f"({encoded.n_rows} rows)")
        self.backend = encoded.backend
        self.n_rows = int(encoded.n_rows)
        self.n_values = len(column.labels)
        self.labels = column.labels
        self._value_counts = column.counts
        self._bind(encoded)
        self._encoded = encoded
        return self

    def _bind(self, encoded) -> None:
        pass

    def _require_bound(self, classes: Classes) -> None:
        if self._encoded is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        if classes.entry_class is None:
            raise ValueError(f"{self!r} needs the per-class histograms of "
                             f"{self.sensitive_attribute!r}, but the classes carry none")

    def _global_counts(self):
        """Device int64 (m,): count of each sensitive value over all rows of the table."""
        return self._value_counts
