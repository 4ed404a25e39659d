"""Top-down specialization: TDS (Fung, Wang & Yu, ICDE 2005) for k-anonymity and HDTDS
(Mohammed, Fung, Hung & Lee, KDD 2009) for LKC-privacy.

The release starts from the top cut -- every categorical QID at its hierarchy's root, every
numeric QID (no hierarchy) as one interval -- and is specialized one value at a time: a
categorical value into its children in the hierarchy, a numeric interval into two at its best
binary split.  Each round scores every value of the current cut and performs the *valid*
specialization (the release still satisfies the model) of highest score, until none is valid.
The release is a cut (subtree) generalization: values of one hierarchy may sit at different
depths; with ``generalization="sibling"`` a value may also be released next to some of its
own children (sibling generalization, see :class:`TDS`).

* ``InfoGain(v) = I(R_v) - sum_c |R_c| / |R_v| * I(R_c)``, ``I`` the entropy (bits) of the
  classification ``target`` over the records ``R_v`` generalized to ``v`` and those of each
  child ``c`` (Fung et al.'s definition).  Without a target, the "class" of a record is its
  own original value of the attribute, and the gain is that of the whole table:
  ``|R_v| / |T|`` times the entropy of the split of ``R_v`` into the children (how much the
  release's entropy grows, so that large values go first).
* ``PrivLoss(v)``: the mean over the constrained QID sets ``S`` that contain ``v``'s attribute
  of ``A(S) - A_v(S)``, the drop of the smallest group size on ``S`` (TDS's AnonyLoss for
  k-anonymity: ``S`` = all QIDs; HDTDS: every set of at most ``L`` QIDs).
* score: ``InfoGain(v) / (PrivLoss(v) + 1)`` with a ``target`` (TDS, HDTDS); the plain
  ``InfoGain(v)`` without one.
* a numeric interval splits at the threshold of highest ``InfoGain`` (records ``<= t`` and
  ``> t``), chosen when the interval enters the cut; an interval of one value is final.
* valid: every group on every constrained set ``S`` holds at least ``K`` records (``k``) and,
  for LKC-privacy with ``C < 1``, no listed sensitive value has a confidence above ``C`` in
  any group.  Both only get worse with further specialization, so an invalid value stays so.

Each round is one pass with array operations (:mod:`.tds_rounds`; on a backend's arrays, so on
a GPU with ``backend="gpu"``): the table is first reduced to its distinct
(QID, target, sensitive) rows with weights; then, per attribute and constrained set, one
group-by (:func:`gpuppdp.kernels.groupby.group`) of the rows keyed by (the child each row
would move to, the other attributes' current values) gives the group sizes after every
candidate specialization of that attribute at once (a candidate's rows never share a group
with another candidate's); entropies come from weighted ``bincount`` over (value, class).
Released labels: a hierarchy node's label (the lowest level with that set of leaves), a
numeric interval ``[lo-hi]`` as Mondrian writes it (one value as itself).  Every release is
checked by the independent checker (:func:`gpuppdp.analysis.checker.check`).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence, cast

import numpy as np
import pandas as pd

from ..analysis.checker import check
from ..backend import Array, Backend, cpu_backend, get_backend
from ..core.codes import encode_column
from ..errors import InputError
from ..hierarchy import Hierarchy
from ..io import host_frame
from ..kernels import groupby
from ..validation import (check_attribute, check_columns, check_complete, check_int,
                          check_number, column_list)
from .mondrian import (MondrianRelease, _Numeric, _repr, certainty_penalty,
                       qid_hierarchies, removed_columns)
from .tds_rounds import Constraint, entropy, round_scores, sibling_scores, split_entropy

__all__ = ["TDS", "TDSRelease", "GENERALIZATIONS", "verify_release", "release_table"]

#: the release schemes of :class:`TDS` (``generalization=``)
GENERALIZATIONS = ("subtree", "sibling")


@dataclass
class TDSRelease(MondrianRelease):
    """A top-down specialization release: :class:`~gpuppdp.algorithms.mondrian.MondrianRelease`'s
    fields (``released`` in input row order, ``partition`` the equivalence class of each
    row, ``ncp``/``gcp``; ``k`` is the k of k-anonymity or LKC's K) plus ``cut`` (per QID the
    released values of the final cut, hierarchy labels or intervals), ``lkc``, ``target``,
    ``history`` (one dict per specialization: attribute, value, children, info_gain,
    priv_loss, score, and kind: ``"subtree"`` or ``"sibling"``), ``k_anonymity`` (the k of
    k-anonymity, None without), ``generalization`` (``"subtree"`` or ``"sibling"``) and
    ``checked`` (the independent checker's measures of the release)."""

    cut: dict = field(default_factory=dict)
    lkc: tuple | None = None
    target: str | None = None
    history: list = field(default_factory=list, repr=False)
    k_anonymity: int | None = None
    generalization: str = "subtree"

    @property
    def specializations(self) -> int:
        return len(self.history)

    def summary(self) -> dict:
        """The release's figures as JSON-ready values."""
        sizes = np.bincount(self.partition)
        return {"algorithm": "tds" if self.lkc is None else "hdtds",
                "records": int(len(self.partition)), "k": self.k,
                "lkc": None if self.lkc is None else list(self.lkc),
                "target": self.target, "sensitive": self.sensitive,
                "generalization": self.generalization,
                "partitions": self.partitions, "smallest_partition": int(sizes.min()),
                "specializations": self.specializations,
                "cut": {c: list(v) for c, v in self.cut.items()},
                "ncp": self.ncp, "gcp": self.gcp, "seconds": self.seconds}


# --------------------------------------------------------------------------------------
# the attributes' cuts
# --------------------------------------------------------------------------------------
class _CatCut:
    """A categorical QID's cut on its hierarchy tree, compressed so that every node has a
    distinct set of leaves (a label whose leaves equal its parent's is the same node).
    ``path[leaf, d]`` is the node at depth ``d`` on the leaf's root path (the leaf's own node
    below its depth); ``depth[leaf]`` the depth of the leaf's node in the cut."""

    numeric = False

    def __init__(self, name: str, column: pd.Series, hierarchy: Hierarchy):
        self.name = name
        self.hierarchy = hierarchy
        self.codes = hierarchy.leaf_codes(column, attribute=name).astype(np.int64)
        h, d = hierarchy.height, len(hierarchy.leaves)
        counts = [hierarchy.label_row_counts(L) for L in range(h + 1)]
        ids = np.empty((h + 1, d), dtype=np.int64)     # node id of each leaf per level
        total = sum(len(cn) for cn in counts)
        level_of = np.zeros(total, dtype=np.int64)
        code_of = np.zeros(total, dtype=np.int64)
        ids[h] = 0                                    # one code at the top: node 0
        level_of[0], code_of[0] = h, int(hierarchy.codes(h)[0])
        n_nodes = 1
        for L in range(h - 1, -1, -1):
            codes = np.asarray(hierarchy.codes(L), dtype=np.int64)
            parent = np.asarray(hierarchy.codes(L + 1), dtype=np.int64)
            same = counts[L][codes] == counts[L + 1][parent]     # same leaves as the parent
            fresh = np.unique(codes[~same])
            new_id = np.full(len(counts[L]), -1, dtype=np.int64)
            new_id[fresh] = n_nodes + np.arange(len(fresh))
            n_nodes += len(fresh)
            ids[L] = np.where(same, ids[L + 1], new_id[codes])
            level_of[ids[L]] = L                      # a node's label: its lowest level's
            code_of[ids[L]] = codes
        diff = ids[:-1] != ids[1:]                    # row L: node at L differs from L + 1
        step = np.vstack([np.ones((1, d), dtype=bool), diff[::-1]])   # top level first
        depth_at = np.cumsum(step, axis=0) - 1        # row i: depth of level h - i's node
        rev = ids[::-1]
        self.leaf_depth = depth_at[-1]
        self.path = np.empty((d, int(self.leaf_depth.max()) + 1), dtype=np.int64)
        for i in range(h + 1):
            self.path[np.arange(d), depth_at[i]] = rev[i]
        beyond = np.arange(self.path.shape[1])[None, :] > self.leaf_depth[:, None]
        self.path[beyond] = np.broadcast_to(rev[-1][:, None], self.path.shape)[beyond]
        level_of, code_of = level_of[:n_nodes], code_of[:n_nodes]
        self.level_of = np.asarray(level_of, dtype=np.int64)
        self.code_of = np.asarray(code_of, dtype=np.int64)
        self.n_values = len(level_of)
        self.depth = np.zeros(d, dtype=np.int64)

    def current(self) -> np.ndarray:
        """Per leaf, its node in the cut."""
        return self.path[np.arange(len(self.depth)), self.depth]

    def child(self) -> np.ndarray:
        """Per leaf, the child of its cut node it would move to (its node when a leaf)."""
        return self.path[np.arange(len(self.depth)), np.minimum(self.depth + 1,
                                                                 self.leaf_depth)]

    def rows(self, codes, backend: Backend):
        """(current value, child) per row of leaf ``codes`` (arrays of ``backend``), and per
        value whether it can be specialized (a node that is not a leaf)."""
        cur = backend.asarray(self.current())[codes]
        child = backend.asarray(self.child())[codes]
        open_ = np.zeros(self.n_values, dtype=bool)
        open_[self.current()[self.depth < self.leaf_depth]] = True
        return cur, child, backend.asarray(open_), self.n_values

    def specialize(self, value: int) -> list:
        under = self.current() == value
        self.depth[under] += 1
        return [self.label(int(c)) for c in np.unique(self.current()[under])]

    def specialize_child(self, node: int) -> tuple[str, list]:
        """Sibling generalization: only the leaves under the child ``node`` of a cut value
        move down to it; the value's other leaves stay at the value.  Returns the value's
        label and ``[node's label]``."""
        under = (self.child() == node) & (self.current() != node)
        value = int(self.current()[under][0])
        self.depth[under] += 1
        return self.label(value), [self.label(node)]

    def label(self, node: int) -> str:
        return str(self.hierarchy.labels(int(self.level_of[node]))[int(self.code_of[node])])

    def cut(self) -> list:
        return [self.label(int(v)) for v in np.unique(self.current())]


class _NumCut:
    """A numeric QID's cut: intervals of value ranks ``lo..hi`` (``interval[rank]``), each
    with its best split threshold ``split`` (records of rank ``<= split`` go left)."""

    numeric = True

    def __init__(self, name: str, column: pd.Series, klass: np.ndarray | None = None):
        self.name = name
        self.num = _Numeric(name, column)
        self.codes = self.num.codes
        self.radix = self.num.radix
        self.lo, self.hi = [0], [self.radix - 1]
        self.interval = np.zeros(self.radix, dtype=np.int64)
        if klass is None:        # class: the value itself; its gain is the split's entropy
            klass, n_k = np.zeros(len(self.codes), dtype=np.int64), 1
            self.own = True
        else:
            klass = np.asarray(klass, dtype=np.int64)
            n_k = int(klass.max()) + 1
            self.own = False
        self.counts = np.bincount(self.codes * n_k + klass, minlength=self.radix * n_k
                                  ).reshape(self.radix, n_k).astype(float)
        self.choose_splits()

    def choose_splits(self) -> None:
        """The best threshold of every interval, from the counts of (rank, class)."""
        counts = self.counts
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        cum = np.vstack([np.zeros((1, counts.shape[1])), np.cumsum(counts, axis=0)])
        iv = self.interval                            # interval of each rank (threshold)
        left = cum[1:] - cum[lo[iv]]
        total = cum[hi[iv] + 1] - cum[lo[iv]]
        if self.own:                                  # H(value) - H(value | side) = H(side)
            n = total.sum(axis=1)
            gain = entropy(np, np.stack([left.sum(axis=1), n - left.sum(axis=1)], axis=1))
        else:
            gain = entropy(np, total) - split_entropy(np, left, total - left)
        gain[np.arange(self.radix) >= hi[iv]] = -np.inf  # no right part
        best = np.full(len(lo), -np.inf)
        np.maximum.at(best, iv, gain)
        first = np.flatnonzero(gain == best[iv])
        split = np.full(len(lo), -1, dtype=np.int64)
        split[iv[first][::-1]] = first[::-1]          # the lowest best threshold
        self.split = split

    def rows(self, codes, backend: Backend):
        cur = backend.asarray(self.interval)[codes]
        child = 2 * cur + (codes > backend.asarray(self.split)[cur])
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        return cur, child, backend.asarray(hi > lo), len(lo)

    def specialize(self, value: int) -> list:
        lo, hi, t = self.lo[value], self.hi[value], int(self.split[value])
        self.hi[value] = t
        self.lo.append(t + 1)
        self.hi.append(hi)
        self.interval[t + 1:hi + 1] = len(self.lo) - 1
        self.choose_splits()
        return [self.num.label(lo, t), self.num.label(t + 1, hi)]

    def label(self, value: int) -> str:
        return self.num.label(self.lo[value], self.hi[value])

    def cut(self) -> list:
        order = np.argsort(self.lo)
        return [self.label(int(v)) for v in order]


# --------------------------------------------------------------------------------------
# the algorithm
# --------------------------------------------------------------------------------------
@dataclass
class _Table:
    """A table reduced to its distinct (QID, target, sensitive) rows: ``weights`` (rows
    each stands for), ``codes`` (leaf or rank codes per QID), ``cls`` (target codes) and
    ``sens`` (sensitive codes) of each (arrays of ``backend``), ``n_cls`` target values and
    the sensitive ``labels`` (host)."""

    weights: Array
    codes: list
    cls: Array | None
    n_cls: int
    sens: Array | None
    labels: np.ndarray | None
    backend: Backend


class TDS:
    """Top-down specialization for k-anonymity (``k``, TDS: Fung, Wang & Yu, ICDE 2005) and/or
    LKC-privacy (``lkc=(L, K, C)`` or ``(L, K, C, values)``, HDTDS: Mohammed, Fung, Hung & Lee,
    KDD 2009; ``C < 1`` needs ``sensitive``).

    ``quasi_identifiers`` (names, their hierarchies in ``hierarchies``, or a mapping of each
    to its Hierarchy or ``None``, as :class:`~gpuppdp.algorithms.mondrian.Mondrian` takes
    them) with a hierarchy are specialized along it; the others must be numeric and are
    split at run time by the best binary split.  ``target`` is the classification attribute
    of InfoGain (score ``InfoGain / (PrivLoss + 1)``); without one the score is the
    information gain about the attribute's own values.
    ``verify`` checks the release with :func:`gpuppdp.analysis.checker.check` and raises
    ``RuntimeError`` if it fails.  ``backend`` (``"cpu"``, the default; ``"gpu"``, ``"auto"``
    or a :class:`~gpuppdp.backend.Backend`) runs the rounds
    (:mod:`gpuppdp.algorithms.tds_rounds`): on a GPU the distinct rows stay on the device and
    only each round's per-value scores come back.  ``insensitive``, ``identifying`` and
    ``others``: the other columns' roles, as :class:`~gpuppdp.algorithms.mondrian.Mondrian`
    takes them.

    ``generalization`` is the release's scheme (Fung, Wang & Yu, TKDE 2007, section 2;
    the survey of Fung, Wang, Chen & Yu, ACM Computing Surveys 2010, section 3.1):

    * ``"subtree"`` (default): the release is a cut of each hierarchy -- specializing a
      value moves all its records to its children;
    * ``"sibling"``: a specialized value may keep some children generalized: a value whose
      child is not specialized is released at the parent's label (standing for the
      children not released on their own) while its specialized siblings are released at
      the child level.  The literature defines the scheme, not how TDS should interleave
      the two kinds of step; gpuppdp performs TDS's subtree specializations while one is
      valid, then, when none is, the best valid *sibling* specialization (the records
      under one child ``c`` of a cut value ``v`` move to ``c``, the rest stay at ``v``;
      scored like a subtree specialization of ``v`` into the two parts ``c`` and ``v``),
      and goes back to subtree specializations (of ``c``) when one becomes valid.  The
      first phase is the subtree run itself and every later step only narrows values, so
      the sibling release refines the subtree release: its NCP is never higher.  (NCP
      charges a parent label for all its leaves, as the checker and the query estimator
      read it.)  Numeric intervals split in two either way.  A record may then be
      released at the root of every QID while others are not; it is a released record
      (TDS suppresses nothing), which :func:`verify_release` checks under a label of its
      own because the checker, like ARX, reads rows of ``*`` only as suppressed.

    >>> df = pd.DataFrame({"age": [21, 22, 35, 36], "y": ["a", "a", "b", "b"]})
    >>> TDS(["age"], k=2, target="y").fit(df).released["age"].tolist()
    ['[21-22]', '[21-22]', '[35-36]', '[35-36]']
    """

    def __init__(self, quasi_identifiers: Sequence[str] | Mapping, *, k: int | None = None,
                 lkc: tuple | None = None, sensitive: str | None = None,
                 target: str | None = None, hierarchies: Mapping[str, Hierarchy] | None = None,
                 generalization: str = "subtree", insensitive: Sequence[str] = (),
                 identifying: Sequence[str] = (), others: str = "insensitive",
                 verify: bool = True, backend: str | Backend = "cpu"):
        self.quasi_identifiers, self.hierarchies = qid_hierarchies(quasi_identifiers,
                                                                   hierarchies)
        if generalization not in GENERALIZATIONS:
            raise InputError(f"generalization must be one of {', '.join(GENERALIZATIONS)}, "
                             f"got {generalization!r}")
        if k is None and lkc is None:
            raise InputError("TDS needs a privacy model: k=... and/or lkc=(L, K, C)")
        self.k = None if k is None else check_int("k", k, 1)
        self.lkc = None if lkc is None else _check_lkc(lkc, sensitive)
        self.sensitive = check_attribute("sensitive", sensitive, self.quasi_identifiers)
        self.target = check_attribute("target", target, self.quasi_identifiers)
        self.generalization = generalization
        self.backend = backend
        self.insensitive = column_list(insensitive, "insensitive") if insensitive else []
        self.identifying = column_list(identifying, "identifying") if identifying else []
        self.others = others
        self.verify = bool(verify)

    def __repr__(self) -> str:
        return _repr(self, ("quasi_identifiers", "k", "lkc", "sensitive", "target",
                            "hierarchies", "generalization", "insensitive", "identifying",
                            "others", "verify", "backend"))

    def fit(self, data: pd.DataFrame) -> TDSRelease:
        """Specialize ``data`` from the top cut; returns a :class:`TDSRelease`.  A cuDF frame
        is copied to the host once (the rounds run where ``backend`` says)."""
        t0 = time.perf_counter()
        data = host_frame(data)
        removed, dropped = self._check(data)
        qids = self.quasi_identifiers
        cls = None
        if self.target is not None:
            cls = encode_column(data[self.target])[0].astype(np.int64)
        cuts = [_CatCut(c, data[c], self.hierarchies[c]) if c in self.hierarchies
                else _NumCut(c, data[c], cls) for c in qids]
        table = _distinct_rows(data, cuts, cls, self.sensitive, get_backend(self.backend))
        constraints = self._constraints(table)
        history = _specialize(cuts, table, constraints, scored=self.target is not None,
                              sibling=self.generalization == "sibling", qids=qids)
        released, current = release_table(data, qids, cuts)
        partition = groupby.group(np, current)[0].astype(np.int64)
        cp = certainty_penalty(released, data, qids, hierarchies=self.hierarchies)
        k = self.k if self.k is not None else cast(tuple, self.lkc)[1]  # (k or lkc given)
        result = TDSRelease(released.drop(columns=removed), partition, qids, self.sensitive, k,
                            None, True, cp["ncp"], cp["gcp"], len(history) + 1, 0.0,
                            self.hierarchies, removed_columns=removed, dropped_columns=dropped,
                            cut={name: cut.cut() for name, cut in zip(qids, cuts)},
                            lkc=self.lkc, target=self.target, history=history,
                            k_anonymity=self.k, generalization=self.generalization)
        if self.verify:
            result.checked = verify_release(result)
        result.seconds = time.perf_counter() - t0
        return result

    def _check(self, data: pd.DataFrame) -> tuple[list[str], list[str]]:
        """The columns of ``data`` checked against the parameters; returns
        :func:`~gpuppdp.algorithms.mondrian.removed_columns`'s ``(removed, dropped)``."""
        qids = check_columns("quasi_identifiers", data, self.quasi_identifiers)
        roles = [c for c in (self.sensitive, self.target) if c is not None]
        for role, col in (("sensitive", self.sensitive), ("target", self.target)):
            if col is not None:
                check_columns(role, data, [col])
        removed = removed_columns(list(data.columns), qids + roles + self.insensitive,
                                  identifying=self.identifying, others=self.others)
        check_complete(data, qids + roles)
        smallest = max(self.k or 1, self.lkc[1] if self.lkc else 1)
        if len(data) < smallest:
            raise InputError(f"k={smallest} needs at least {smallest} records, the table has "
                             f"{len(data)}")
        return removed

    def _constraints(self, table: _Table) -> list:
        """The constrained QID sets: all QIDs for ``k``; every set of at most ``L`` QIDs for
        LKC-privacy (with the listed sensitive values when ``C < 1``)."""
        n_qids = len(self.quasi_identifiers)
        constraints = []
        if self.k is not None:
            constraints.append(Constraint(tuple(range(n_qids)), self.k))
        if self.lkc is None:
            return constraints
        L, K, C = self.lkc[:3]                                        # noqa: N806
        values = None if len(self.lkc) == 3 else self.lkc[3]
        listed = None
        if self.sensitive is not None and C < 1.0:
            assert table.labels is not None and table.sens is not None  # (sensitive given)
            xp = table.backend.xp
            listed = table.backend.asarray(np.array(
                [values is None or v in values for v in table.labels], dtype=float))
            top = float(xp.bincount(table.sens, weights=table.weights * listed[table.sens]
                                    ).max() / table.weights.sum())
            if top > C + 1e-12:
                raise InputError(f"lkc: a sensitive value has confidence {top:.4g} > C={C} in "
                                 "the whole table, so no generalization satisfies it")
        for size in range(1, min(L, n_qids) + 1):
            for subset in itertools.combinations(range(n_qids), size):
                constraints.append(Constraint(subset, K, C, listed))
        return constraints


def _check_lkc(lkc, sensitive: str | None) -> tuple:
    """``lkc`` checked: ``(L, K, C)`` or ``(L, K, C, values)`` (values as strings)."""
    if not isinstance(lkc, (tuple, list)) or len(lkc) not in (3, 4):
        raise InputError(f"lkc must be a tuple (L, K, C) or (L, K, C, values), got {lkc!r}")
    L, K = check_int("L", lkc[0], 1), check_int("K", lkc[1], 1)  # noqa: N806
    C = check_number("C", lkc[2], 0.0, 1.0)                       # noqa: N806
    values = None if len(lkc) == 3 else [str(v) for v in lkc[3]]
    if (C < 1.0 or values is not None) and sensitive is None:
        raise InputError("lkc with C < 1 (or sensitive values) needs the sensitive "
                         "attribute (sensitive=...)")
    return (L, K, C) if values is None else (L, K, C, values)


def _distinct_rows(data: pd.DataFrame, cuts, cls, sensitive: str | None,
                   backend: Backend) -> _Table:
    """The table's distinct (QID, target, sensitive) rows, weighted, grouped on ``backend``
    (the rounds' arrays)."""
    cols = [c.codes for c in cuts]
    n_cls = 0 if cls is None else int(cls.max()) + 1
    if cls is not None:
        cols.append(cls)
    labels = None
    if sensitive is not None:
        sens, labels = encode_column(data[sensitive], as_str=True)
        cols.append(sens)
    xp = backend.xp
    cols = [backend.asarray(np.asarray(c, dtype=np.int64)) for c in cols]
    ids, rep, _ = groupby.group(xp, cols)
    rows = [c[rep] for c in cols]
    return _Table(xp.bincount(ids).astype(xp.float64), rows[:len(cuts)],
                  None if cls is None else rows[len(cuts)], n_cls,
                  None if sensitive is None else rows[-1], labels, backend)


def _best(scores, scored: bool, best=None, attrs=None):
    """The valid candidate of highest score (the first on ties) among ``scores``, one
    ``(gain, loss, valid)`` per attribute (``attrs``: their indices, default ``0..``), or
    ``best`` if none beats it: ``(score, attribute, value, gain, loss)``."""
    for j, (gain, loss, valid) in zip(attrs if attrs is not None else itertools.count(),
                                      scores):
        score = gain / (loss + 1.0) if scored else gain
        for v in np.flatnonzero(valid).tolist():
            if best is None or score[v] > best[0] + 1e-12:
                best = (float(score[v]), j, int(v), float(gain[v]), float(loss[v]))
    return best


def _specialize(cuts, table: _Table, constraints, *, scored: bool, sibling: bool,
                qids) -> list:
    """Specialize ``cuts`` in place, round by round, while a specialization is valid (with
    ``sibling``: subtree ones first, then sibling ones); returns the history."""
    history: list = []
    be = table.backend
    xp = be.xp

    def on_host(scores):  # per attribute (gain, loss, valid): one entry per value of its cut
        return [tuple(be.to_host(a) for a in triple) for triple in scores]

    while True:
        state = [c.rows(col, be) for c, col in zip(cuts, table.codes)]
        # rows alike in every value, child, class and sensitive value count as one
        keys = [s[0] for s in state] + [s[1] for s in state] + \
            [c for c in (table.cls, table.sens) if c is not None]
        gid, grep, _ = groupby.group(xp, keys)
        state = [(cur[grep], child[grep], open_, n) for cur, child, open_, n in state]
        weights = xp.bincount(gid, weights=table.weights)
        cls = None if table.cls is None else table.cls[grep]
        sens = None if table.sens is None else table.sens[grep]
        best = _best(on_host(round_scores(xp, state, weights, cls, table.n_cls, sens,
                                          constraints)), scored)
        kind = "subtree"
        if best is None and sibling:
            kind = "sibling"
            cats = [j for j, cut in enumerate(cuts) if not cut.numeric]
            best = _best(on_host([sibling_scores(xp, state, j, weights, cls, table.n_cls,
                                                 sens, constraints) for j in cats]),
                         scored, attrs=cats)
        if best is None:
            return history
        score, j, v, gain, loss = best
        if kind == "subtree":
            value = cuts[j].label(v)
            children = cuts[j].specialize(v)
        else:
            value, children = cuts[j].specialize_child(v)
        history.append({"attribute": qids[j], "value": value, "children": children,
                        "kind": kind, "info_gain": gain, "priv_loss": loss, "score": score})


def release_table(data: pd.DataFrame, qids: Sequence[str], cuts) -> tuple:
    """``data`` with each QID replaced by the label of its value in ``cuts`` (categoricals),
    and the value ids per row."""
    released = data.copy()
    current = []
    for name, cut in zip(qids, cuts):
        cur = cut.rows(cut.codes, cpu_backend())[0]
        current.append(cur)
        uniq, inverse = np.unique(cur, return_inverse=True)
        names = np.array([cut.label(int(u)) for u in uniq], dtype=object)
        cats, remap = np.unique(names, return_inverse=True)
        released[name] = pd.Categorical.from_codes(remap[inverse], categories=pd.Index(cats))
    return released, current


def verify_release(release: TDSRelease) -> dict:
    """The independent checker's measures of ``release`` (:func:`gpuppdp.analysis.checker.check`,
    with ``lkc=`` for LKC-privacy); ``RuntimeError`` when it does not satisfy its models."""
    table = release.released
    qids = release.quasi_identifiers
    if all((table[c].astype(str) == "*").all() for c in qids):
        # the checker reads all-'*' rows as suppressed; the top cut is one class of all rows,
        # whose confidences TDS checked before starting
        return {"records": int(len(table)), "suppressed_rows": 0, "classes": 1,
                "k": int(len(table)), "lkc_satisfied": None if release.lkc is None else True}
    top = np.ones(len(table), dtype=bool)
    for c in qids:
        top &= (table[c].astype(str) == "*").to_numpy()
    if top.any():
        # sibling generalization can release a record at every QID's root while others
        # are not: the checker would read those rows as suppressed (ARX's convention), so
        # it sees them under a label of their own (TDS suppresses nothing)
        table = table.copy()
        first = table[qids[0]].astype(str).to_numpy(dtype=object)
        first[top] = "*(released)"
        table[qids[0]] = first
    measured = dict(check(table, quasi_identifiers=qids, sensitive=release.sensitive,
                          lkc=release.lkc))
    ok = measured["suppressed_rows"] == 0
    if release.k_anonymity is not None:
        ok &= measured["k"] >= release.k_anonymity
    if release.lkc is not None:
        ok &= bool(measured["lkc_satisfied"])
    if not ok:
        raise RuntimeError(f"the TDS release fails the independent checker: {measured}")
    return measured
