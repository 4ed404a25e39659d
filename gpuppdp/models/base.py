"""The models that judge the histogram of one sensitive attribute per class; the base of every
privacy model (ARX's ``PrivacyCriterion``) and its :class:`Requirement` flags are
:mod:`gpuppdp.core.model`'s, re-exported here and from :mod:`gpuppdp.models`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.classes import Classes
from ..core.model import CompiledCheck, PrivacyModel, Requirement
from ..kernels.aot import ahead_of_time
from ..errors import InputError
from ..validation import check_name

__all__ = ["Requirement", "PrivacyModel", "CompiledCheck", "SensitiveModel", "LOG_TABLE_MAX",
           "log_table"]


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


ahead_of_time(log_table, ["float64[::1](int64)"])


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
            raise InputError(f"{self!r}: tables of 2^31 rows or more are not supported "
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
