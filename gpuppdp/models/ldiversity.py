"""l-diversity in its three forms (Machanavajjhala et al. 2007): distinct, entropy and
recursive (c,l), as ARX's ``DistinctLDiversity``, ``EntropyLDiversity``,
``RecursiveCLDiversity``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..core.classes import Classes
from ..validation import check_int, check_name, check_number, check_positive, plain_number
from .base import LOG_TABLE_MAX, CompiledCheck, PrivacyModel, SensitiveModel, log_table

__all__ = ["DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"]


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: at least ``l`` distinct sensitive values per class
    (Machanavajjhala et al. 2007)."""

    compiled_kind = "distinct"

    def __init__(self, attribute: str, l: int):  # noqa: E741 - the literature's name
        self.sensitive_attribute = check_name("attribute", attribute)
        self.l = check_int("l", l, 1)
        self.min_class_size = math.ceil(self.l)

    def class_fails(self, classes: Classes):
        return classes.distinct < self.l

    def compiled_check(self) -> CompiledCheck:
        return CompiledCheck("distinct", self.sensitive_attribute, {"l": self.l})

    def describe(self) -> dict:
        return {"model": "distinct-l-diversity", "attribute": self.sensitive_attribute,
                "l": self.l}

    def __repr__(self) -> str:
        return f"DistinctLDiversity({self.sensitive_attribute!r}, l={self.l})"


# ---------------------------------------------------------------------------------------
# models on the per-class sensitive histograms


class EntropyLDiversity(SensitiveModel):
    """Entropy l-diversity (Machanavajjhala et al. 2007) as ARX 3.9.2 evaluates it (Shannon
    estimator): a class of ``n`` records passes iff it holds at least ``ceil(l)`` distinct
    sensitive values and ``sum_v f_v ln f_v <= n (ln n - ln l)``, i.e. its entropy is at least
    ``ln l``.  The sum is accumulated in ascending sensitive code, as ARX does, with the same
    double operations, so verdicts at the threshold match ARX's bit for bit.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    compiled_kind = "entropy"

    def __init__(self, attribute: str, l: float):  # noqa: E741 - the literature's name
        super().__init__(attribute)
        self.l = check_number("l", l, 1.0)
        self.min_class_size = math.ceil(self.l)
        self._ln_l = math.log(self.l)

    def compiled_check(self) -> CompiledCheck:
        return CompiledCheck("entropy", self.sensitive_attribute,
                             {"min_size": math.ceil(self.l), "ln_l": self._ln_l})

    def _bind(self, encoded):
        size = min(self.n_rows, LOG_TABLE_MAX)
        self._ln_max = size
        self._ln = self.backend.asarray(log_table(size))

    def _log(self, values):
        """``math.log`` of positive int64 device values, elementwise (device float64)."""
        be, xp = self.backend, self.backend.xp
        if self._ln_max >= self.n_rows:  # every count is at most the number of rows
            return self._ln[values]
        out = self._ln[xp.minimum(values, self._ln_max)]
        big = values > self._ln_max
        if int(big.sum()):
            uniq, inverse = np.unique(be.to_host(values[big]), return_inverse=True)
            logs = np.array([math.log(int(u)) for u in uniq], dtype=np.float64)
            out[big] = be.asarray(logs[inverse.reshape(-1)])
        return out

    def _sum_flogf(self, classes: Classes):
        """Per class ``sum_v f_v ln f_v`` in ascending sensitive code (device float64)."""
        xp = classes.xp
        cls, sens, count, start = classes.sensitive_histogram()
        terms = count.astype(xp.float64) * self._log(count)           # f * ln f
        return kernels.ordered_sums(self.backend, terms, start, 0.0)  # ascending code order

    def class_fails(self, classes: Classes):
        self._require_bound(classes)
        xp = classes.xp
        total = self._sum_flogf(classes)
        n = classes.size.astype(xp.int64)
        threshold = n.astype(xp.float64) * (self._log(n) - self._ln_l)  # n (ln n - ln l)
        return (classes.distinct < self.min_class_size) | (threshold < total)

    def entropies(self, classes: Classes):
        """Shannon entropy (natural log) of every class's sensitive distribution (device
        float64): ``ln n - sum_v f_v ln f_v / n``; a class is entropy l-diverse for every
        ``l <= exp(H)``."""
        self._require_bound(classes)
        xp = classes.xp
        n = classes.size.astype(xp.int64)
        h = self._log(n) - self._sum_flogf(classes) / n.astype(xp.float64)
        return xp.maximum(h, 0.0)

    def describe(self) -> dict:
        return {"model": "entropy-l-diversity", "attribute": self.sensitive_attribute,
                "l": plain_number(self.l), "log": "shannon"}

    def __repr__(self) -> str:
        return f"EntropyLDiversity({self.sensitive_attribute!r}, l={plain_number(self.l)})"


class RecursiveCLDiversity(SensitiveModel):
    """Recursive (c, l)-diversity (Machanavajjhala et al. 2007) as ARX evaluates it: with the
    class's ``d`` value frequencies sorted ascending ``r[0] <= ... <= r[d-1]``, a class passes
    iff ``d >= l`` and ``r[d-1] < c * (r[0] + ... + r[d-l])`` -- the most frequent value is
    rarer than ``c`` times the ``l``-th most frequent and all rarer ones together.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False
    compiled_kind = "recursive"

    def __init__(self, attribute: str, c: float, l: int):  # noqa: E741
        super().__init__(attribute)
        self.c = check_positive("c", c)
        self.l = check_int("l", l, 1)
        self.min_class_size = self.l

    def compiled_check(self) -> CompiledCheck:
        return CompiledCheck("recursive", self.sensitive_attribute, {"l": self.l, "c": self.c})

    @staticmethod
    def _top_low(classes: Classes, l: int):  # noqa: E741
        """``(top, low, enough)`` per class: the largest frequency ``r[d-1]``, the sum
        ``r[0] + ... + r[d-l]`` (exact integers as float64) and ``d >= l``."""
        xp = classes.xp
        # the entries grouped by class, each class's frequencies ascending
        count = classes.entry_count.astype(xp.int64)
        r = count[xp.argsort(classes.entry_class.astype(xp.int64) * (1 << 32) + count)]
        cs = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(r)])
        d = classes.distinct.astype(xp.int64)
        stop = xp.cumsum(d)
        first = stop - d
        enough = d >= l
        last_low = xp.where(enough, first + d - l, first)  # index of r[d-l] in the class
        low = (cs[last_low + 1] - cs[first]).astype(xp.float64)   # r[0] + ... + r[d-l], exact
        top = r[stop - 1].astype(xp.float64)                      # r[d-1]
        return top, low, enough

    def class_fails(self, classes: Classes):
        self._require_bound(classes)
        xp = classes.xp
        if classes.entry_count.shape[0] == 0:
            return xp.zeros(0, dtype=xp.bool_)
        top, low, enough = self._top_low(classes, self.l)
        return ~enough | ~(top < low * self.c)

    def ratios(self, classes: Classes):
        """Per class ``r[d-1] / (r[0] + ... + r[d-l])`` with this model's ``l`` (device
        float64; ``inf`` for classes of fewer than ``l`` values, or when that sum is 0): the
        class is recursive (c, l)-diverse for every ``c`` above it.  With ``l = 2`` this is the
        most frequent value's count over all the others'."""
        self._require_bound(classes)
        xp = classes.xp
        if classes.entry_count.shape[0] == 0:
            return xp.zeros(0, dtype=xp.float64)
        top, low, enough = self._top_low(classes, self.l)
        ok = enough & (low > 0)
        return xp.where(ok, top / xp.maximum(low, 1.0), xp.inf)

    def describe(self) -> dict:
        return {"model": "recursive-cl-diversity", "attribute": self.sensitive_attribute,
                "c": plain_number(self.c), "l": self.l}

    def __repr__(self) -> str:
        return (f"RecursiveCLDiversity({self.sensitive_attribute!r}, c={plain_number(self.c)}, "
                f"l={self.l})")
