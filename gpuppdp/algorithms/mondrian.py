"""Mondrian multidimensional k-anonymity (LeFevre, DeWitt & Ramakrishnan, ICDE 2006).

The table is cut recursively, top-down: a partition is cut along the quasi-identifier of
widest normalized range (numeric: ``(max - min) / (global max - global min)``; categorical:
the normalized certainty penalty of the lowest common ancestor of its values), numeric ones at
the median, categorical ones into the children of that ancestor in their hierarchy.  A cut is
allowable when every part holds at least ``k`` records (and ``l`` distinct sensitive values,
Machanavajjhala et al.'s distinct l-diversity, when ``l`` is given); a partition with no
allowable cut on any QID (tried in order of width) is final.

* **strict** (the paper's strict multidimensional partitioning): parts are disjoint; the
  records equal to the median go to the left part, or, when that leaves fewer than ``k`` on
  the right, to the right part (the more balanced of the two allowable cuts is taken);
* **relaxed**: a numeric partition is cut into two halves of its sorted records, so records
  equal to the median may fall on both sides and released ranges may overlap.

All open partitions of a round are cut together with array operations (a segmented sort for
the medians, one group-by for the parts, segment reductions for ranges and ancestors); only
rounds and QIDs are looped over.  The rounds run on a backend (:mod:`gpuppdp.backend`): NumPy,
or CuPy with the codes and partition ids on the GPU, where only a few scalars per round (the
counts that size the next arrays) come back to the host, the segment minima and maxima are
read off one sort (CuPy's ufuncs have no ``minimum.reduceat``) and the release reads the
final classes' ranges, one row per class; the partition is the CPU's, id for id.

Released values: a numeric range ``[lo-hi]`` (one value as
itself), a categorical ancestor's label.  The information loss is the normalized certainty
penalty (NCP, Xu et al., KDD 2006): per record and QID ``(hi - lo) / (max - min)``, or
``(leaves under the label - 1) / (leaves - 1)``; the global certainty penalty (GCP) is their
mean over records and QIDs (Ghinita et al., VLDB 2007).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.checker import check, classes_of_rows, measured_holds, sensitive_table
from ..backend import Backend, get_backend
from ..core.codes import encode_column, smallest_int_dtype
from ..engine.encoding import SchemaError
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy
from ..io import host_frame
from ..kernels import groupby
from ..models import PrivacyModel, Requirement
from ..queries import label_leaves, parse_interval
from ..validation import (check_attribute, check_columns, check_complete, check_int,
                          column_list, format_values)

__all__ = ["Mondrian", "MondrianRelease", "certainty_penalty", "verify_release",
           "removed_columns", "OTHERS"]

#: what a partition release does with the columns given no role (``others=``)
OTHERS = ("insensitive", "drop", "error")


@dataclass
class MondrianRelease:
    """A Mondrian release: ``released`` (the input's rows in their order, QIDs generalized,
    ``removed_columns`` left out: the identifying ones and ``dropped_columns``, those with no
    role under ``others="drop"``), ``partition`` (each row's partition,
    ``0..partitions-1``), the NCP of each QID (``ncp``, mean over records), the GCP
    (``gcp``), the class-level ``models`` it satisfies and ``checked`` (the independent
    checker's measures, when verified).  :func:`gpuppdp.report.write_report` writes its
    report."""

    released: pd.DataFrame
    partition: np.ndarray
    quasi_identifiers: list[str]
    sensitive: str | None
    k: int
    l: int | None
    strict: bool
    ncp: dict[str, float]
    gcp: float
    rounds: int
    seconds: float
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict, repr=False)
    models: list = field(default_factory=list, repr=False)
    removed_columns: list = field(default_factory=list)
    dropped_columns: list = field(default_factory=list)
    checked: dict = field(default_factory=dict, repr=False)

    @property
    def partitions(self) -> int:
        """Number of partitions (equivalence classes before equal labels merge)."""
        return int(self.partition.max()) + 1 if len(self.partition) else 0

    def summary(self) -> dict:
        """The release's figures as JSON-ready values."""
        sizes = np.bincount(self.partition)
        return {"algorithm": "mondrian", "mode": "strict" if self.strict else "relaxed",
                "records": int(len(self.partition)), "k": self.k, "l": self.l,
                "partitions": self.partitions, "smallest_partition": int(sizes.min()),
                "rounds": self.rounds, "ncp": self.ncp, "gcp": self.gcp,
                "seconds": self.seconds}


# --------------------------------------------------------------------------------------
# encoding
# --------------------------------------------------------------------------------------
class _Numeric:
    """A numeric QID: codes are ranks in the sorted distinct values ``values``."""

    def __init__(self, name: str, column: pd.Series):
        nums = pd.to_numeric(column, errors="coerce")
        bad = nums.isna().to_numpy()
        if bad.any():
            raise InputError(f"quasi-identifier {name!r} has no hierarchy, so it must be "
                             f"numeric; {int(bad.sum())} value(s) are not numbers (first at "
                             f"row {int(np.flatnonzero(bad)[0])}: "
                             f"{column.iloc[int(np.flatnonzero(bad)[0])]!r}); give it a "
                             "hierarchy (hierarchies=) to treat it as categorical")
        codes, values = encode_column(nums.to_numpy(float), sort=True)
        self.codes = codes.astype(np.int64)
        self.values = np.asarray(values, dtype=float)
        self.span = float(self.values[-1] - self.values[0])
        self.radix = len(self.values)

    def on(self, backend):
        """This QID with its arrays on ``backend`` (the rounds' copy)."""
        out = copy.copy(self)
        out.codes, out.values = backend.asarray(self.codes), backend.asarray(self.values)
        return out

    def width(self, xp, lo, hi):
        """Normalized range of codes ``lo..hi``."""
        return (self.values[hi] - self.values[lo]) / self.span if self.span > 0 else \
            xp.zeros(lo.shape)

    def label(self, lo: int, hi: int) -> str:
        a, b = _number(self.values[lo]), _number(self.values[hi])
        return a if lo == hi else f"[{a}-{b}]"


class _Categorical:
    """A categorical QID cut along ``hierarchy``: codes are leaf codes; ``table[L, leaf]`` the
    leaf's ancestor at level ``L``; ``penalty[offset[L] + code]`` the NCP of that ancestor."""

    def __init__(self, name: str, column: pd.Series, hierarchy: Hierarchy):
        self.hierarchy = hierarchy
        self.codes = hierarchy.leaf_codes(column, attribute=name).astype(np.int64)
        self.table = np.stack([hierarchy.codes(L) for L in range(hierarchy.height + 1)]
                              ).astype(np.int64)
        d = len(hierarchy.leaves)
        penalty = [(hierarchy.label_row_counts(L) - 1) / (d - 1) if d > 1 else
                   np.zeros(len(hierarchy.labels(L))) for L in range(hierarchy.height + 1)]
        self.penalty = np.concatenate(penalty).astype(float)
        self.offset = np.cumsum([0] + [len(p) for p in penalty])[:-1].astype(np.int64)
        self.radix = d

    def on(self, backend):
        """This QID with its arrays on ``backend`` (the rounds' copy)."""
        out = copy.copy(self)
        for name in ("codes", "table", "penalty", "offset"):
            setattr(out, name, backend.asarray(getattr(self, name)))
        return out


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# --------------------------------------------------------------------------------------
# the rounds, on the backend's arrays (NumPy, or CuPy: nothing but scalars leaves the device)
# --------------------------------------------------------------------------------------
def _segments(xp, keys):
    """Sorted ``keys`` -> (segment of each element, segment offsets)."""
    n = keys.shape[0]
    step = xp.empty(n, dtype=xp.bool_)
    step[:1] = True
    xp.not_equal(keys[1:], keys[:-1], out=step[1:])
    starts = xp.flatnonzero(step)
    ptr = xp.empty(starts.shape[0] + 1, dtype=xp.int64)
    ptr[:-1] = starts
    ptr[-1] = n
    return xp.cumsum(step, dtype=xp.int64) - 1, ptr


def _extremes(xp, values, seg, ptr, radix):
    """The lowest and highest of ``values`` (codes below ``radix``) per segment (``seg``:
    each element's, ``ptr``: the offsets): ``reduceat`` on NumPy; CuPy's ufuncs reduce at
    indices by ``add`` only, so there one sort of the segment-major keys, read at the
    segments' ends."""
    if xp is np:
        return np.minimum.reduceat(values, ptr[:-1]), np.maximum.reduceat(values, ptr[:-1])
    base = xp.arange(ptr.shape[0] - 1, dtype=xp.int64) * radix
    key = xp.sort(seg * radix + values)
    return key[ptr[:-1]] - base, key[ptr[1:] - 1] - base


def _varies(xp, values, ptr):
    """Per segment ``ptr``: do its ``values`` differ?  On the device: are some neighbours in
    it unequal (prefix sums, no sort; on NumPy ``reduceat`` is the faster)."""
    if xp is np:
        return np.minimum.reduceat(values, ptr[:-1]) != np.maximum.reduceat(values, ptr[:-1])
    unequal = xp.zeros(values.shape[0], dtype=xp.int64)  # unequal neighbour pairs up to i
    unequal[1:] = xp.cumsum(values[1:] != values[:-1], dtype=xp.int64)
    return unequal[ptr[1:] - 1] > unequal[ptr[:-1]]


def _ranges(xp, attrs, rows, seg, ptr):
    """Per segment of ``rows`` and QID: its normalized width, and (numeric) the lowest and
    highest code or (categorical) the level and code of the lowest common ancestor."""
    starts = ptr[:-1]
    widths, info = [], []
    for a in attrs:
        c = a.codes[rows]
        if isinstance(a, _Numeric):
            lo, hi = _extremes(xp, c, seg, ptr, a.radix)
            widths.append(a.width(xp, lo, hi))
            info.append((lo, hi))
        else:
            level = xp.zeros(starts.shape[0], dtype=xp.int64)
            for L in range(a.table.shape[0]):  # LCA level = number of levels the codes differ on
                level += _varies(xp, a.table[L][c], ptr)
            node = a.table[level, c[starts]]
            widths.append(a.penalty[a.offset[level] + node])
            info.append((level, node))
    return xp.stack(widths, axis=1), info


def _median_cut(xp, s, c, size, radix, k, strict, bad):
    """Each row's side (0, 1) of its segment's median cut: rows in segments ``s`` (sorted),
    codes ``c`` below ``radix``, ``size`` per segment.  All segments' medians at once: one
    segmented sort by (segment, value), the median by index arithmetic.  Strict: the records
    equal to the median go left, or right when that is the allowable and more balanced cut;
    segments with neither cut allowable are marked in ``bad``.  Relaxed: two halves of the
    sorted rows."""
    key = s * radix + c                          # segmented sort: segment, then value
    order = xp.argsort(key, kind="stable")
    ks = key[order]
    if not strict:
        seg_of = s[order]
        first = xp.searchsorted(ks, seg_of * radix)  # each element's segment start
        side = xp.empty(s.shape[0], dtype=xp.int64)
        side[order] = (xp.arange(ks.shape[0], dtype=xp.int64) - first) >= size[seg_of] // 2
        return side
    step = xp.empty(s.shape[0], dtype=xp.bool_)  # s is sorted: its distinct values
    step[:1] = True
    xp.not_equal(s[1:], s[:-1], out=step[1:])
    segs = s[step]
    base = segs * radix
    start = xp.searchsorted(ks, base)
    median = ks[start + (size[segs] - 1) // 2] - base
    le = xp.searchsorted(ks, base + median, side="right") - start
    lt = xp.searchsorted(ks, base + median, side="left") - start
    nn = size[segs]
    ok_le = (le >= k) & (nn - le >= k)
    ok_lt = (lt >= k) & (nn - lt >= k)
    use_lt = ok_lt & (~ok_le | (xp.abs(2 * lt - nn) < xp.abs(2 * le - nn)))
    threshold = xp.full(size.shape[0], -1, dtype=xp.int64)
    threshold[segs] = xp.where(use_lt, median - 1, median)
    bad[segs[~(ok_le | ok_lt)]] = True
    return c > threshold[s]


def _parts(xp, attrs, info, rows, seg, ptr, dim, cand, k, strict):
    """For the rows of candidate segments (``cand``), each row's part (``child``) under the cut
    of its segment's dimension ``dim`` (``info``: :func:`_ranges`'); segments whose median cut
    leaves a part under ``k`` records come back in ``bad``."""
    size = xp.diff(ptr)
    pos = xp.flatnonzero(cand[seg])
    child = xp.zeros(pos.shape[0], dtype=xp.int64)
    bad = xp.zeros(size.shape[0], dtype=xp.bool_)
    d_row = dim[seg[pos]]
    for j, a in enumerate(attrs):
        at = xp.flatnonzero(d_row == j)
        if not at.shape[0]:
            continue
        s = seg[pos[at]]
        c = a.codes[rows[pos[at]]]
        if isinstance(a, _Categorical):
            level = xp.maximum(info[j][0][s] - 1, 0)
            child[at] = a.table[level, c]
        else:
            child[at] = _median_cut(xp, s, c, size, a.radix, k, strict, bad)
    return pos, child, bad


def _cut(xp, attrs, sens, k, l, strict, part, judge, cut):
    """One attempt of a round: cut the candidate segments (``cut``: rows, seg, ptr, info, dim,
    cand, n_parts), relabel the rows of those whose every part is allowable; returns the
    segments cut and the next free part id."""
    rows, seg, ptr, info, dim, cand, n_parts = cut
    n_seg = ptr.shape[0] - 1
    pos, child, bad = _parts(xp, attrs, info, rows, seg, ptr, dim, cand, k, strict)
    s = seg[pos]
    ids, rep, _ = groupby.group(xp, [s, child], [n_seg, int(child.max()) + 1])
    g_seg = s[rep]
    ok = xp.bincount(ids) >= k
    if l is not None:
        _, prep, _ = groupby.group(xp, [ids, sens[rows[pos]]], [rep.shape[0], l.values])
        ok &= xp.bincount(ids[prep], minlength=rep.shape[0]) >= l.l
    if judge is not None:
        ok &= judge.ok(ids, rows[pos])
    bad[g_seg[~ok]] = True
    good = cand & ~bad
    keep = good[g_seg]
    taken = xp.cumsum(keep, dtype=xp.int64)      # the kept groups' new ids, in order
    moved = good[s]
    part[rows[pos[moved]]] = (n_parts - 1 + taken)[ids[moved]]
    return good, n_parts + int(taken[-1])


@dataclass(frozen=True)
class _Diversity:
    """Distinct l-diversity in the rounds: ``l`` and the number of sensitive codes."""

    l: int
    values: int


def _run(backend, attrs, sens, k, l, strict, part, judge=None):
    """Cut ``part`` (device class ids, changed in place) round by round; returns
    :func:`_classes` of the final partition and the number of rounds."""
    xp = backend.xp
    diversity = None if l is None else _Diversity(l, int(sens.max()) + 1)
    rows = xp.arange(part.shape[0], dtype=xp.int64)
    n_parts, rounds = int(part.max()) + 1, 0
    while rows.shape[0]:
        rounds += 1
        rows = rows[xp.argsort(part[rows], kind="stable")]
        seg, ptr = _segments(xp, part[rows])
        size = xp.diff(ptr)
        widths, info = _ranges(xp, attrs, rows, seg, ptr)
        rank = xp.argsort(-widths, axis=1, kind="stable")
        open_ = size >= 2 * k
        split = xp.zeros(size.shape[0], dtype=xp.bool_)
        for attempt in range(len(attrs)):
            dim = rank[:, attempt]
            cand = open_ & ~split & (widths[xp.arange(size.shape[0]), dim] > 0)
            if not bool(cand.any()):
                break
            good, n_parts = _cut(xp, attrs, sens, k, diversity, strict, part, judge,
                                 (rows, seg, ptr, info, dim, cand, n_parts))
            split |= good
        rows = rows[split[seg]]
    return _classes(backend, attrs, part), rounds


def _classes(backend, attrs, part):
    """The classes of ``part`` (device ids), computed on the device, brought to the host:
    ``(partition, widths, info)``, each row's class (ids ``0..`` in the order of ``part``'s)
    and :func:`_ranges`' per class."""
    xp, host = backend.xp, backend.to_host
    order = xp.argsort(part, kind="stable")
    seg, ptr = _segments(xp, part[order])
    final = xp.empty_like(seg)
    final[order] = seg
    widths, info = _ranges(xp, attrs, order, seg, ptr)
    return host(final), host(widths), [(host(x), host(y)) for x, y in info]


# --------------------------------------------------------------------------------------
# the release
# --------------------------------------------------------------------------------------
def _release(data, qids, attrs, part, widths, info):
    """The released table, the NCP per QID and the GCP of the classes ``part`` (host;
    ``widths``, ``info``: :func:`_classes`').  Labels are made per distinct range, each row
    gets its class's label code in the smallest integer type, and a QID's NCP is the
    class-size-weighted mean of its classes' widths; ``data``'s other columns are shared, not
    copied (copy-on-write)."""
    released = data.copy(deep=False)
    sizes = np.bincount(part, minlength=widths.shape[0])
    ncp = {}
    for j, (name, a, (x, y)) in enumerate(zip(qids, attrs, info)):
        if isinstance(a, _Numeric):
            key, labels_of = x * a.radix + y, lambda u: a.label(u // a.radix, u % a.radix)
        else:
            key = x * (a.radix + 1) + y
            labels_of = lambda u, a=a: str(a.hierarchy.labels(int(u // (a.radix + 1)))
                                           [int(u % (a.radix + 1))])
        uniq, inverse = np.unique(key, return_inverse=True)
        names = [labels_of(int(u)) for u in uniq]
        cats, remap = np.unique(np.array(names, dtype=object), return_inverse=True)
        label_of_class = remap[inverse].astype(smallest_int_dtype(len(cats)))
        released[name] = pd.Categorical.from_codes(label_of_class[part], categories=cats)
        ncp[name] = float(sizes @ widths[:, j]) / len(part)
    gcp = float(np.mean(list(ncp.values())))
    return released, ncp, gcp


def qid_hierarchies(quasi_identifiers, hierarchies: Mapping | None) -> tuple[list, dict]:
    """``(QIDs, {QID: Hierarchy})`` of a partition algorithm, checked: ``quasi_identifiers``
    is a list of names (their hierarchies in ``hierarchies``) or a mapping of each name to
    its Hierarchy or ``None``; a QID without a hierarchy is numeric."""
    if isinstance(quasi_identifiers, Mapping):
        if hierarchies:
            raise InputError("give the hierarchies in quasi_identifiers (a mapping) or in "
                             "hierarchies=, not both")
        hierarchies = {c: h for c, h in quasi_identifiers.items() if h is not None}
    qids = column_list(quasi_identifiers)
    hierarchies = dict(hierarchies or {})
    extra = [c for c in hierarchies if c not in qids]
    if extra:
        raise InputError(f"hierarchies: column(s) that are not quasi-identifiers: "
                         f"{format_values(extra)}")
    for c, h in hierarchies.items():
        if not isinstance(h, Hierarchy):
            raise InputTypeError(f"hierarchies[{c!r}] must be a Hierarchy, got "
                                 f"{type(h).__name__}")
    return qids, hierarchies


def removed_columns(columns: Sequence[str], named: Sequence[str], *,
                    identifying: Sequence[str] = (), others: str = "insensitive"
                    ) -> tuple[list[str], list[str]]:
    """The columns a partition release leaves out: ``(identifying + dropped, dropped)``.

    ``named`` are the columns given a role (QIDs, sensitive, insensitive, target); the rest
    follow ``others`` as in :class:`gpuppdp.engine.encoding.Schema`: ``"error"`` refuses them,
    ``"drop"`` drops them, ``"insensitive"`` (the default here) keeps them."""
    if others not in OTHERS:
        raise InputError(f"others must be one of {', '.join(map(repr, OTHERS))}, got "
                         f"{others!r}")
    identifying = list(identifying)
    roles = list(dict.fromkeys(list(named) + identifying))
    missing = [c for c in roles if c not in columns]
    if missing:
        raise SchemaError(f"column(s) not in the data: {format_values(missing)}; the data has "
                          f"{format_values(list(columns), 12)}")
    unassigned = [c for c in columns if c not in roles]
    if unassigned and others == "error":
        raise SchemaError(
            f"{len(unassigned)} column(s) have no role: {format_values(unassigned, 10)}; "
            "give each a role, or say what to do with the rest (others='insensitive' "
            "or 'drop'; CLI: --others insensitive|drop)")
    dropped = unassigned if others == "drop" else []
    return identifying + dropped, dropped


class _ClassJudge:
    """The verdict of class-level privacy models (t-closeness, l-diversity of any kind,
    (alpha,k), delta-disclosure, beta-likeness, privacy loss ...) on candidate partitions: the
    models are bound to the whole table's ``sensitive`` column (its distribution) and judge
    the partitions' histograms with their own ``class_fails``, on ``backend`` (the rounds')."""

    def __init__(self, models: Sequence, sensitive: str | None, values: pd.Series | None,
                 backend=None):
        self.backend = get_backend("cpu" if backend is None else backend)
        _check_models(models, sensitive)
        if sensitive is not None:
            codes, labels = encode_column(values, as_str=True)
            codes = codes.astype(np.int64)
            self.codes = self.backend.asarray(codes)
            self.n_values = len(labels)
            table = sensitive_table(self.backend, sensitive, codes, labels)
            self.models = [copy.copy(m).bind(table) if getattr(m, "sensitive_attribute", None)
                           else m for m in models]
        else:
            self.codes, self.n_values, self.models = None, 0, list(models)

    def ok(self, group, rows):
        """Per group (``group[i]`` of row ``rows[i]``; arrays of the backend): does every
        model hold on it?"""
        be = self.backend
        sens = None if self.codes is None else self.codes[rows]
        classes = classes_of_rows(be, group, sens, self.n_values)
        ok = be.xp.ones(classes.n_classes, dtype=be.xp.bool_)
        for m in self.models:
            fails = m.class_fails(classes)
            if fails is not None:
                ok &= ~be.asarray(fails).astype(be.xp.bool_)
        return ok


def _check_models(models: Sequence, sensitive: str | None) -> None:
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise InputTypeError(f"models must be PrivacyModel instances, got {m!r}")
        if Requirement.RELEASED_CLASSES in m.requires or Requirement.POPULATION in m.requires:
            raise InputError(f"{m!r} judges the released classes together or against a "
                             "population; Mondrian takes class-level models only")
        attribute = getattr(m, "sensitive_attribute", None)
        if attribute is not None and attribute != sensitive:
            raise InputError(f"{m!r} refers to {attribute!r}; Mondrian's sensitive "
                             f"attribute is {sensitive!r} (sensitive=...)")


class Mondrian:
    """Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan, ICDE 2006).

    ``quasi_identifiers``: column names, or a mapping of each to its Hierarchy or ``None`` (as
    :class:`gpuppdp.Anonymizer` takes them; then no ``hierarchies``).  QIDs with a hierarchy are
    categorical (cut along it, released as the lowest common ancestor's label); the others must
    be numeric (released as ranges ``[lo-hi]``).  Every partition holds at least ``k`` records
    and, with ``l`` (needs ``sensitive``), ``l`` distinct values of ``sensitive`` (distinct
    l-diversity, Machanavajjhala et al., ICDE 2006).  ``strict=False`` gives relaxed
    partitioning.  ``models``: further class-level privacy models of :mod:`gpuppdp.models` on
    ``sensitive`` (t-closeness, entropy or recursive l-diversity, (alpha,k)-anonymity,
    delta-disclosure, beta-likeness, the privacy-loss model), judged on every candidate
    partition with the models' own verdict, against the whole table's distribution.

    ``identifying`` columns are left out of the release, and so are the columns with no role
    when ``others="drop"`` (``"error"`` refuses them; ``"insensitive"``, the default, keeps
    them).  ``verify`` re-measures the release with the independent checker
    (:func:`verify_release`) and raises ``RuntimeError`` if it fails.

    ``backend`` (``"cpu"``, the default; ``"gpu"``, ``"auto"`` or a
    :class:`~gpuppdp.backend.Backend`) runs the rounds: on a GPU the codes stay on the device,
    every open partition's median cut of a round is one segmented sort, and only a few scalars
    per round come back; the models' verdicts are taken there too.  The partition and the
    release are the CPU's, exactly.

    >>> df = pd.DataFrame({"age": [21, 22, 35, 36], "zip": [1, 2, 3, 4]})
    >>> Mondrian(["age", "zip"], k=2).fit(df).released["age"].tolist()
    ['[21-22]', '[21-22]', '[35-36]', '[35-36]']
    """

    def __init__(self, quasi_identifiers: Sequence[str] | Mapping, *, k: int,
                 sensitive: str | None = None, l: int | None = None, strict: bool = True,
                 hierarchies: Mapping[str, Hierarchy] | None = None, models: Sequence = (),
                 insensitive: Sequence[str] = (), identifying: Sequence[str] = (),
                 others: str = "insensitive", verify: bool = False,
                 backend: str | Backend = "cpu"):
        self.quasi_identifiers, self.hierarchies = qid_hierarchies(quasi_identifiers,
                                                                   hierarchies)
        self.k = check_int("k", k, 1)
        self.sensitive = sensitive
        self.l = None if l is None else check_int("l", l, 1)
        if self.l is not None and sensitive is None:
            raise InputError("l needs the sensitive attribute (sensitive=...)")
        check_attribute("sensitive", sensitive, self.quasi_identifiers)
        self.strict = bool(strict)
        self.models = list(models)
        _check_models(self.models, sensitive)
        self.insensitive = column_list(insensitive, "insensitive") if insensitive else []
        self.identifying = column_list(identifying, "identifying") if identifying else []
        self.others = others
        self.verify = bool(verify)
        self.backend = backend

    def __repr__(self) -> str:
        return _repr(self, ("quasi_identifiers", "k", "sensitive", "l", "strict", "hierarchies",
                            "models", "insensitive", "identifying", "others", "verify",
                            "backend"))

    def fit(self, data: pd.DataFrame, *, partition=None) -> MondrianRelease:
        """Partition ``data``; returns a :class:`MondrianRelease`.

        ``partition`` starts the cuts from given classes instead of the whole table: a column
        name, an array of class labels (one per row) or an ``AnonymizationResult`` (the
        classes of its release, e.g. the full-domain optimum).  Each class must already
        satisfy ``k`` (and ``l``); since cuts only narrow ranges and ancestors, the result's
        NCP is then at most that of the starting classes generalized as tightly.  A cuDF
        frame is copied to the host once (the rounds run where ``backend`` says)."""
        t0 = time.perf_counter()
        data = host_frame(data)
        qids, sensitive, k, l = self.quasi_identifiers, self.sensitive, self.k, self.l
        removed, dropped = self._check(data)
        attrs = [_Categorical(c, data[c], self.hierarchies[c]) if c in self.hierarchies
                 else _Numeric(c, data[c]) for c in qids]
        sens = None
        if sensitive is not None:
            sens = encode_column(data[sensitive])[0].astype(np.int64)
            if l is not None and int(sens.max()) + 1 < l:
                raise InputError(f"l={l}: the table has only {int(sens.max()) + 1} distinct "
                                 f"value(s) of {sensitive!r}, so no release is {l}-diverse")
        be = get_backend(self.backend)
        judge = None
        if self.models:
            judge = _ClassJudge(self.models, sensitive, data[sensitive] if sensitive else None,
                                be)
        part = be.asarray(_start(data, partition, qids, k, l, sens))
        if judge is not None and not bool(
                judge.ok(part, be.xp.arange(len(part), dtype=be.xp.int64)).all()):
            raise InputError(f"the starting partition{'s' if partition is not None else ''} "
                             f"fail{'' if partition is not None else 's'} the models "
                             f"{[m.describe() for m in judge.models]}: no release satisfies "
                             "them")
        (part, widths, info), rounds = _run(be, [a.on(be) for a in attrs],
                                            None if sens is None else be.asarray(sens), k, l,
                                            self.strict, part, judge)
        released, ncp, gcp = _release(data, qids, attrs, part, widths, info)
        result = MondrianRelease(released.drop(columns=removed), part, qids, sensitive, k, l,
                                 self.strict, ncp, gcp, rounds, 0.0, self.hierarchies,
                                 models=list(self.models), removed_columns=removed,
                                 dropped_columns=dropped)
        if self.verify:
            result.checked = verify_release(result)
        result.seconds = time.perf_counter() - t0
        return result

    def _check(self, data: pd.DataFrame) -> tuple[list[str], list[str]]:
        """The columns of ``data`` checked against the parameters; returns
        :func:`removed_columns`'s ``(removed, dropped)``."""
        qids = check_columns("quasi_identifiers", data, self.quasi_identifiers)
        sensitive = self.sensitive
        if sensitive is not None:
            check_columns("sensitive", data, [sensitive])
        named = qids + ([sensitive] if sensitive else []) + self.insensitive
        removed = removed_columns(list(data.columns), named, identifying=self.identifying,
                                  others=self.others)
        check_complete(data, qids + ([sensitive] if sensitive else []))
        if len(data) < self.k:
            raise InputError(f"k={self.k} needs at least {self.k} records, the table has "
                             f"{len(data)}")
        return removed


def _repr(obj, names: Sequence[str]) -> str:
    """``Class(name=value, ...)`` of the parameters ``names`` that differ from empty."""
    parts = []
    for name in names:
        value = getattr(obj, name)
        if value is None or (isinstance(value, (list, dict, tuple)) and not value):
            continue
        parts.append(f"{name}={value!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def verify_release(release: MondrianRelease) -> dict:
    """The independent checker's measures of a Mondrian ``release``
    (:func:`gpuppdp.analysis.checker.check`); ``RuntimeError`` when it has suppressed rows,
    a class under ``k``, fewer than ``l`` distinct sensitive values in a class or fails a
    model the checker measures (the others Mondrian judged with their own verdict)."""
    measured = dict(check(release.released, quasi_identifiers=release.quasi_identifiers,
                          sensitive=release.sensitive, backend="cpu"))
    failing = [m.describe() for m in release.models
               if not measured_holds(m.describe(), measured)]
    if release.l is not None and measured["distinct_l"] < release.l:
        failing.append({"model": "distinct-l-diversity", "l": release.l})
    if measured["suppressed_rows"] or measured["k"] < release.k or failing:
        raise RuntimeError(f"the Mondrian release fails the independent checker: "
                           f"{failing or measured}")
    return measured


def _start(data, partition, qids, k, l, sens) -> np.ndarray:
    """The starting partition (class ids ``0..``) of :meth:`Mondrian.fit`, checked."""
    n = len(data)
    if partition is None:
        return np.zeros(n, dtype=np.int64)
    if isinstance(partition, str):
        check_columns("partition", data, [partition])
        labels = data[partition]
    elif hasattr(partition, "release") and hasattr(partition, "released"):
        release = partition.release
        table = partition.released
        if release.source_rows is None or len(table) != n:
            raise InputError("partition: the AnonymizationResult must be of this table, with "
                             "suppressed rows marked (suppression='mark')")
        cls, _, _ = groupby.group(np, [encode_column(table[c])[0].astype(np.int64)
                                       for c in qids], None)
        labels = np.empty(n, dtype=np.int64)
        labels[np.asarray(release.source_rows)] = cls
    else:
        labels = np.asarray(partition).reshape(-1)
        if len(labels) != n:
            raise InputError(f"partition has {len(labels)} labels, the table {n} rows")
    part = encode_column(labels)[0].astype(np.int64)
    size = np.bincount(part)
    small = np.flatnonzero(size < k)
    if len(small):
        raise InputError(f"partition: {len(small)} class(es) have fewer than k={k} records, "
                         f"the first ({int(size[small[0]])} records) at row "
                         f"{int(np.flatnonzero(part == small[0])[0])}")
    if l is not None:
        _, rep, _ = groupby.group(np, [part, sens], None)
        distinct = np.bincount(part[rep], minlength=len(size))
        poor = np.flatnonzero(distinct < l)
        if len(poor):
            raise InputError(f"partition: {len(poor)} class(es) have fewer than l={l} distinct "
                             f"sensitive values, the first at row "
                             f"{int(np.flatnonzero(part == poor[0])[0])}")
    return part


# --------------------------------------------------------------------------------------
# NCP of any release
# --------------------------------------------------------------------------------------
def certainty_penalty(released: pd.DataFrame, original: pd.DataFrame,
                      quasi_identifiers: Sequence[str], *,
                      hierarchies: Mapping[str, Hierarchy] | None = None) -> dict:
    """The normalized certainty penalty of any release (Xu et al., KDD 2006): ``{"ncp": {QID:
    mean over records}, "gcp": mean over records and QIDs}``.

    A QID with a hierarchy in ``hierarchies`` is categorical: a label costs ``(leaves under it
    - 1) / (leaves - 1)`` (``*`` costs 1).  The others are numeric: a released value stands for
    the original values (of ``original``'s column) that it covers -- itself, an interval
    (``[lo-hi]``, ``lo-hi``, ``[lo, hi)``) or ``*`` (all) -- and costs their range over the
    column's range.  The same function measures Mondrian's and full-domain releases.
    """
    qids = check_columns("quasi_identifiers", released, quasi_identifiers, frame="release")
    check_columns("quasi_identifiers", original, qids, frame="original")
    hierarchies = dict(hierarchies or {})
    ncp = {}
    for c in qids:
        codes, labels = encode_column(released[c])
        if c in hierarchies:
            cost = label_costs(hierarchies[c], labels.tolist(), c)
        else:
            values = np.unique(pd.to_numeric(original[c], errors="raise").to_numpy(float))
            span = values[-1] - values[0]
            cost = [_numeric_cost(v, values, span, c) for v in labels.tolist()]
        ncp[c] = float(np.asarray(cost, dtype=float)[codes].mean())
    return {"ncp": ncp, "gcp": float(np.mean(list(ncp.values())))}


def label_costs(h: Hierarchy, labels: Sequence, column: str) -> list[float]:
    """The certainty penalty of each of ``labels`` of hierarchy ``h`` (released column
    ``column``): ``(leaves under it - 1) / (leaves - 1)``, 1 for ``*``."""
    under = label_leaves(h)
    d = len(h.leaves)
    cost = []
    for v in labels:
        if str(v) == "*":
            cost.append(1.0)
        elif str(v) in under:
            cost.append((len(under[str(v)]) - 1) / (d - 1) if d > 1 else 0.0)
        else:
            raise InputError(f"release column {column!r}: {str(v)!r} is not a label of its "
                             "hierarchy")
    return cost


def _numeric_cost(label, values: np.ndarray, span: float, column: str) -> float:
    if span <= 0:
        return 0.0
    text = str(label)
    if text == "*":
        return 1.0
    interval = parse_interval(text)
    if interval is None:
        try:
            float(text)
        except ValueError:
            raise InputError(f"release column {column!r}: {text!r} is neither a number nor an "
                             "interval") from None
        return 0.0
    lo, hi, lo_closed, hi_closed = interval
    inside = values[((values > lo) | (lo_closed & (values == lo)))
                    & ((values < hi) | (hi_closed & (values == hi)))]
    return float((inside[-1] - inside[0]) / span) if len(inside) else 0.0
