"""Models on groups of classes that share their values on subsets of the QIDs:
k-anonymity on several QID sets and LKC-privacy (Mohammed et al. 2009).
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from ..core.classes import Classes
from ..errors import InputError
from ..kernels import groupby
from ..validation import check_int, check_name, check_number, format_values, plain_number
from .base import CompiledCheck, PrivacyModel, Requirement

__all__ = ["KAnonymityOnSubsets", "LKCPrivacy"]


# models on groups of classes: k-anonymity over several QID subsets, LKC-privacy
# ---------------------------------------------------------------------------------------
def _subset_groups(classes: Classes, subsets: Sequence[Sequence[int]]):
    """``(gid, n_groups)``: ``gid`` (S, C) device int64, the group of every class of the batch
    for every subset of QID columns, numbered across all subsets (0..n_groups-1).  Classes
    share a group iff they belong to the same node and carry the same codes on the subset's
    columns (at the node's levels).  A subset is grouped from its prefix (cached) and one more
    column (:func:`gpuppdp.kernels.groupby.group`), so keys never exceed ``C * radix``."""
    xp = classes.xp
    ranked: dict[tuple, tuple] = {(): (classes.node.astype(xp.int64),
                                       int(classes.host_ptr.shape[0]) - 1)}

    def rank(cols: tuple):
        hit = ranked.get(cols)
        if hit is None:
            parent, n_parent = rank(cols[:-1])
            col = classes.codes[:, cols[-1]]
            gid, rep, _ = groupby.group(xp, [parent, col], [n_parent, int(col.max()) + 1],
                                        order="sorted")
            hit = ranked[cols] = (gid, int(rep.shape[0]))
        return hit

    out, offset = [], 0
    for cols in subsets:
        gid, n_groups = rank(tuple(cols))
        out.append(gid + offset)
        offset += n_groups
    return xp.stack(out), offset


def _group_sizes(classes: Classes, gid, n_groups: int, alive):
    """Records of the ``alive`` classes per group (``gid`` (S, C), see
    :func:`_subset_groups`), float64."""
    xp = classes.xp
    weights = xp.where(alive, classes.size, 0).astype(xp.float64)
    return xp.bincount(gid.ravel(), weights=xp.broadcast_to(weights, gid.shape).ravel(),
                       minlength=n_groups)


def _subsets_check(subsets: list[list[int]], k: int) -> CompiledCheck:
    """The compiled check of k-anonymity (``k``) on the QID ``subsets`` (column indices): the
    array ``subsets`` holds their number, then per subset ``k``, its length and its columns."""
    return CompiledCheck("subsets", None, {}, {"subsets": np.array(
        [len(subsets)] + [x for s in subsets for x in (k, len(s), *s)], np.int64)})


class _GroupModel(PrivacyModel):
    """A model judging groups of classes that share their values on subsets of the QIDs.

    A class fails when one of its groups violates the model.  Suppressing failing classes
    shrinks their groups, which can make other groups violate: the verdicts are therefore
    iterated (peeled) until no further class fails, so that the released classes satisfy the
    model among themselves.  ``suppressed`` marks the classes other models suppress: they
    count as gone from the start (the :class:`~gpuppdp.evaluate.Evaluator` iterates all such
    models to a common fixed point).
    """

    min_class_size = None
    @property
    def requires(self) -> Requirement:
        return super().requires | Requirement.RELEASED_CLASSES
    _subsets_idx: list | None = None

    def _resolve(self, encoded) -> list[list[int]]:
        raise NotImplementedError

    def bind(self, encoded):
        self._subsets_idx = self._resolve(encoded)
        self.backend = encoded.backend
        return self

    def _require_bound(self) -> list:
        if self._subsets_idx is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        return self._subsets_idx

    #: subsets are judged in chunks of at most this many (subset, class or entry) pairs
    chunk_pairs = 8_000_000

    def _group_fails(self, classes: Classes, gid, n_groups: int, alive):
        """Per group: does it violate the model, counting only the ``alive`` classes?
        ``gid`` (S, C) holds every class's group for each of S subsets."""
        raise NotImplementedError

    def class_fails(self, classes: Classes, suppressed=None):
        subsets = self._require_bound()
        xp = classes.xp
        n = classes.n_classes
        fails = xp.zeros(n, dtype=xp.bool_) if suppressed is None else suppressed.copy()
        if n == 0:
            return fails
        width = max(n, 0 if classes.entry_class is None else int(classes.entry_class.shape[0]))
        step = max(1, self.chunk_pairs // width)
        chunks = [_subset_groups(classes, subsets[i:i + step])
                  for i in range(0, len(subsets), step)]
        while True:
            alive = ~fails
            new = xp.zeros(n, dtype=xp.bool_)
            for gid, n_groups in chunks:
                new |= self._group_fails(classes, gid, n_groups, alive)[gid].any(axis=0)
            new &= alive
            if not bool(new.any()):
                return fails
            fails |= new


class KAnonymityOnSubsets(_GroupModel):
    """k-anonymity over several QID sets at once: for every given subset ``S`` of the
    quasi-identifiers, the records sharing their (generalized) values on ``S`` number at least
    ``k``.  A class fails when one of its ``S``-groups is smaller than ``k``.

    Monotonic with generalization and with suppression: a group at a more general node is a
    union of groups at the less general one, so the (unique) largest set of classes whose
    groups are all large enough at a node stays valid at every generalization of it.
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = True

    def __init__(self, subsets, k: int):
        self.k = check_int("k", k, 1)
        if isinstance(subsets, str) or not isinstance(subsets, Sequence) or not subsets:
            raise InputError(f"subsets must be a non-empty list of lists of QID names, got "
                             f"{subsets!r}")
        out = []
        for s in subsets:
            if isinstance(s, str) or not isinstance(s, Sequence) or not s or \
                    not all(isinstance(c, str) and c for c in s):
                raise InputError(f"every subset must be a non-empty list of QID names, got {s!r}")
            if len(set(s)) != len(s):
                raise InputError(f"subset {list(s)!r} names a QID twice")
            out.append([str(c) for c in s])
        self.subsets = out

    def _resolve(self, encoded):
        names = list(encoded.qi_names)
        unknown = sorted({c for s in self.subsets for c in s if c not in names})
        if unknown:
            raise InputError(f"{self!r} names column(s) that are not quasi-identifiers: "
                             f"{format_values(unknown)} (quasi-identifiers: "
                             f"{format_values(names)})")
        return [sorted(names.index(c) for c in s) for s in self.subsets]

    compiled_kind = "subsets"

    def _group_fails(self, classes, gid, n_groups, alive):
        return _group_sizes(classes, gid, n_groups, alive) < self.k

    def compiled_check(self) -> CompiledCheck:
        return _subsets_check(self._require_bound(), self.k)

    def describe(self) -> dict:
        return {"model": "k-anonymity-on-subsets", "k": self.k,
                "subsets": [list(s) for s in self.subsets]}

    def __repr__(self) -> str:
        return f"KAnonymityOnSubsets({self.subsets!r}, k={self.k})"


class LKCPrivacy(_GroupModel):
    """LKC-privacy (Mohammed, Fung, Hung & Lee 2009): every combination of the (generalized)
    values of at most ``L`` quasi-identifiers is shared by at least ``K`` records, and within
    each such group the confidence ``count(s) / size`` of every listed sensitive value ``s``
    (``sensitive_values``; all values when ``None``) is at most ``C``.  A class fails when it
    belongs to a violating group.

    ``attribute`` names the sensitive attribute; without one only the ``L``/``K`` part is
    checked (``C`` must then be 1).  Monotonic with generalization (merged groups grow and
    their confidences are weighted averages of their parts'), not with suppression --
    except without the confidence bound (``C = 1``), where it is k-anonymity on every subset
    of at most ``L`` QIDs (see :class:`KAnonymityOnSubsets`).
    """

    monotonic_with_generalization = True
    monotonic_with_suppression = False

    def __init__(self, L: int, K: int, C: float, sensitive_values=None,  # noqa: N803
                 attribute: str | None = None):
        self.L = check_int("L", L, 1)
        self.K = check_int("K", K, 1)
        self.C = check_number("C", C, 0.0, 1.0)
        if attribute is not None:
            check_name("attribute", attribute)
        if attribute is None and self.C < 1.0:
            raise InputError("LKC-privacy with C < 1 needs the sensitive attribute: "
                             "LKCPrivacy(L, K, C, attribute=...)")
        self.sensitive_attribute = attribute
        if sensitive_values is not None:
            if isinstance(sensitive_values, str) or not all(
                    isinstance(v, str) for v in sensitive_values):
                raise InputError(f"sensitive_values must be a list of values (strings), got "
                                 f"{sensitive_values!r}")
            sensitive_values = list(sensitive_values)
        self.sensitive_values = sensitive_values
        if self.C >= 1.0:
            self.monotonic_with_suppression = True

    def _resolve(self, encoded):
        q = len(encoded.qi_names)
        if self.sensitive_attribute is not None:
            labels = [str(v) for v in encoded.sensitive_column(self.sensitive_attribute).labels]
            wanted = labels if self.sensitive_values is None else self.sensitive_values
            mask = np.array([v in wanted for v in labels], dtype=bool)
            self._n_values = len(labels)
            self._listed = encoded.backend.asarray(mask)
        return [list(s) for size in range(1, min(self.L, q) + 1)
                for s in itertools.combinations(range(q), size)]

    @property
    def compiled_kind(self) -> str | None:
        """Without the confidence bound, k-anonymity on every subset of at most ``L`` QIDs
        (``subsets``); with it, ``lkc``."""
        return "subsets" if self.sensitive_attribute is None or self.C >= 1.0 else "lkc"

    def compiled_check(self) -> CompiledCheck | None:
        check = _subsets_check(self._require_bound(), self.K)
        if self.compiled_kind == "subsets":
            return check
        listed = np.asarray(self.backend.to_host(self._listed), dtype=np.float64)
        return CompiledCheck("lkc", self.sensitive_attribute, {"c": self.C},
                             {**check.arrays, "listed": listed})

    def _group_fails(self, classes, gid, n_groups, alive):
        xp = classes.xp
        sizes = _group_sizes(classes, gid, n_groups, alive)
        bad = sizes < self.K
        if self.sensitive_attribute is None or self.C >= 1.0:
            return bad
        if classes.entry_class is None:
            raise ValueError(f"{self!r} needs the per-class histograms of "
                             f"{self.sensitive_attribute!r}, but the classes carry none")
        cls = classes.entry_class.astype(xp.int64)
        sens = classes.entry_sens.astype(xp.int64)
        count = xp.where(alive[cls] & self._listed[sens], classes.entry_count, 0)
        m = self._n_values
        keys = gid[:, cls] * m + sens[None, :]
        weights = xp.broadcast_to(count.astype(xp.float64), keys.shape)
        per = xp.bincount(keys.ravel(), weights=weights.ravel(),
                          minlength=n_groups * m).reshape(n_groups, m)
        conf = per.max(axis=1) / xp.maximum(sizes, 1.0)
        return bad | (conf > self.C)

    def describe(self) -> dict:
        out = {"model": "lkc-privacy", "L": self.L, "K": self.K, "C": plain_number(self.C)}
        if self.sensitive_attribute is not None:
            out["attribute"] = self.sensitive_attribute
        if self.sensitive_values is not None:
            out["sensitive_values"] = list(self.sensitive_values)
        return out

    def __repr__(self) -> str:
        extra = ("" if self.sensitive_attribute is None
                 else f", attribute={self.sensitive_attribute!r}")
        if self.sensitive_values is not None:
            extra += f", sensitive_values={self.sensitive_values!r}"
        return f"LKCPrivacy(L={self.L}, K={self.K}, C={plain_number(self.C)}{extra})"
