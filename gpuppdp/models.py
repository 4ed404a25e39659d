"""Privacy models as plug-ins (ARX's ``criteria.PrivacyCriterion`` split).

A model declares what per-class data it needs, the smallest class it tolerates and whether it is
monotonic with generalization and with suppression (the pruning search may only use sound
flags).  It judges all classes of a batch of nodes at once: :meth:`PrivacyModel.class_fails`
returns one verdict per class, on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PrivacyModel", "KAnonymity", "DistinctLDiversity", "Classes"]


@dataclass
class Classes:
    """Equivalence classes of a batch of nodes, in canonical order (device arrays).

    ``size`` (C,) records per class; ``node`` (C,) node index of each class; ``ptr`` (B+1,)
    class offsets per node (``host_ptr`` on the host); ``codes`` (C, q) QID codes at the node's
    levels; ``distinct`` (C,) number of distinct sensitive values (``None`` without a sensitive
    attribute); ``entry_class``/``entry_sens``/``entry_count`` the per-class sensitive
    histograms as (class, value, count) triples.
    """

    xp: object
    size: object
    node: object
    ptr: object
    host_ptr: object
    codes: object
    distinct: object = None
    entry_class: object = None
    entry_sens: object = None
    entry_count: object = None

    def per_node(self, values):
        """Exact per-node totals of a per-class array (integer cumsum, no float rounding)."""
        xp = self.xp
        if self.host_ptr.shape[0] == 2:  # one node
            return xp.reshape(values.sum(), (1,))
        cs = xp.concatenate([xp.zeros(1, dtype=values.dtype), xp.cumsum(values)])
        return cs[self.ptr[1:]] - cs[self.ptr[:-1]]


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
    """

    min_class_size: int | None = None
    sensitive_attribute: str | None = None
    monotonic_with_generalization: bool = True
    monotonic_with_suppression: bool = True

    def class_fails(self, classes: Classes):
        """Boolean device array, True for classes violating the model (beyond the size test),
        or ``None`` when the size test is all there is."""
        return None

    def describe(self) -> dict:
        raise NotImplementedError


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
            isinstance(value, float) and value.is_integer()):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class KAnonymity(PrivacyModel):
    """k-anonymity: every equivalence class holds at least ``k`` records (Sweeney 2002)."""

    def __init__(self, k: int):
        self.k = _check_int("k", k, 1)
        self.min_class_size = self.k

    def describe(self) -> dict:
        return {"model": "k-anonymity", "k": self.k}

    def __repr__(self) -> str:
        return f"KAnonymity(k={self.k})"


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: at least ``l`` distinct sensitive values per class
    (Machanavajjhala et al. 2007)."""

    def __init__(self, attribute: str, l: int):  # noqa: E741 - the literature's name
        if not isinstance(attribute, str) or not attribute:
            raise ValueError(f"attribute must be a column name, got {attribute!r}")
        self.sensitive_attribute = attribute
        self.l = _check_int("l", l, 1)
        self.min_class_size = math.ceil(self.l)

    def class_fails(self, classes: Classes):
        return classes.distinct < self.l

    def describe(self) -> dict:
        return {"model": "distinct-l-diversity", "attribute": self.sensitive_attribute,
                "l": self.l}

    def __repr__(self) -> str:
        return f"DistinctLDiversity({self.sensitive_attribute!r}, l={self.l})"
