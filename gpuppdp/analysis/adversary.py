"""The adversary's view of a release: posterior beliefs about sensitive values and linkage.

* :func:`posterior_beliefs` -- the Bayes-optimal adversary of Machanavajjhala et al.
  ("l-Diversity: Privacy Beyond k-Anonymity", ICDE 2006 / TKDD 2007, Section 3): for a target
  with QID values ``q`` in the released class ``q*`` and background knowledge ``f`` (a prior
  on the sensitive values, possibly depending on ``q``), the observed belief in ``s`` is

  ``beta(q,s,T*) = n(q*,s) f(s|q)/f(s|q*) / sum_{s' in S} n(q*,s') f(s'|q)/f(s'|q*)``

  with ``n(q*,s)`` the count of ``s`` in the class; for a prior that does not depend on
  ``q`` this is ``n(q*,s)/n(q*)``.  :func:`max_posterior` and :func:`largest_gain` pick out
  the worst (class, value) pair.
* :func:`linkage_check` -- an identified external table joined to the release on the QIDs:
  how many external records have 0, 1, or fewer than ``k`` released candidates.

Values are compared as strings (as released labels are); original QID values are mapped to
the release's level through their :class:`~gpuppdp.hierarchy.Hierarchy` when hierarchies are
given.  Records are grouped on the backend's arrays (``backend="cpu"`` or ``"gpu"``); a prior
table is joined with pandas on the host; no loop over rows or classes.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..core.codes import encode_column
from ..engine.transform import suppressed_rows
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy
from ..kernels import groupby
from ..validation import check_int, column_list
from .qid_classes import _classes_encoded, encode_columns
from .utility import released_levels

__all__ = ["posterior_beliefs", "max_posterior", "largest_gain", "linkage_check"]

_BELIEF_COLUMNS = ["count", "class_size", "prior", "posterior", "gain", "ratio"]


def _check_frame(name: str, data, columns: Sequence[str], *, empty_ok: bool = False):
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"{name} must be a pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InputError(f"{name}: column(s) not in the data: {', '.join(map(repr, missing))}")
    if not empty_ok and len(data) == 0:
        raise InputError(f"{name}: the table is empty (0 rows)")


def _as_str(column: pd.Series) -> np.ndarray:
    """The column's values as strings (object array), converting only the distinct values."""
    codes, labels = encode_column(column, as_str=True)
    return labels[codes]


def _generalized(data: pd.DataFrame, qids, hierarchies, levels) -> pd.DataFrame:
    """The QIDs of original records as the release shows them: their labels at ``levels``
    (values not in a hierarchy raise ``UnknownValuesError``), or as strings without
    hierarchies."""
    if hierarchies is None:
        return pd.DataFrame({q: _as_str(data[q]) for q in qids}, index=data.index)
    out = {}
    for q in qids:
        h = hierarchies[q]
        leaf, _ = encode_column(data[q], domain=h.leaf_domain, name=q)
        out[q] = h.labels(levels[q])[h.codes(levels[q])[leaf]]
    return pd.DataFrame(out, index=data.index)


def _levels(released, qids, hierarchies, levels) -> dict | None:
    if hierarchies is None:
        return None
    missing = [q for q in qids if q not in hierarchies]
    if missing:
        raise InputError(f"hierarchies: no hierarchy for {', '.join(map(repr, missing))}")
    bad = [q for q in qids if not isinstance(hierarchies[q], Hierarchy)]
    if bad:
        raise InputTypeError(f"hierarchies: not a Hierarchy for {', '.join(map(repr, bad))}")
    if levels is None:
        return released_levels(released, hierarchies, qids)
    missing = [q for q in qids if q not in levels]
    if missing:
        raise InputError(f"levels: no level for {', '.join(map(repr, missing))}")
    return {q: int(levels[q]) for q in qids}


# --------------------------------------------------------------------------------------------
# posterior beliefs
# --------------------------------------------------------------------------------------------

def _class_counts(released, qids, sensitive, backend: Backend) -> pd.DataFrame:
    """``n(q*, s)`` for every class and value it holds, with the class size, sorted by the
    labels (grouped on ``backend``)."""
    xp = backend.xp
    labels = pd.DataFrame({c: _as_str(released[c]) for c in [*qids, sensitive]})
    codes, cards = encode_columns(labels, [*qids, sensitive], backend)
    cls, sizes = _classes_encoded(codes[:-1], cards[:-1], backend)
    pair, first, _ = groupby.group(xp, [cls, codes[-1].astype(xp.int64)],
                                   [int(sizes.shape[0]), cards[-1]])
    counts = labels.iloc[backend.to_host(first)].reset_index(drop=True)
    counts["count"] = backend.to_host(xp.bincount(pair)).astype(np.int64)
    counts["class_size"] = backend.to_host(sizes[cls[first]]).astype(np.int64)
    return counts.sort_values([*qids, sensitive], ignore_index=True)


def _mapping_prior(prior: Mapping, observed: np.ndarray, sensitive: str) -> dict:
    probs = {str(k): v for k, v in prior.items()}
    values = np.array(list(probs.values()), dtype=np.float64)
    if not np.all(np.isfinite(values)) or (values < 0).any():
        raise InputError("prior: probabilities must be finite and non-negative")
    if not math.isclose(values.sum(), 1.0, abs_tol=1e-9):
        raise InputError(f"prior: probabilities must sum to 1, got {values.sum():.12g}")
    missing = sorted(set(observed.tolist()) - {k for k, p in probs.items() if p > 0})
    if missing:
        raise InputError(f"prior: released {sensitive!r} value(s) without a positive prior "
                         f"probability: {', '.join(map(repr, missing[:5]))}"
                         f"{' ...' if len(missing) > 5 else ''}")
    return probs


def _table_beliefs(counts, prior: pd.DataFrame, qids, sensitive, hierarchies, levels):
    """Beliefs of every target ``q`` of a joint prior table (weights ``f(q, s)``)."""
    _check_frame("prior", prior, [*qids, sensitive, "weight"])
    w = pd.to_numeric(prior["weight"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise InputError("prior: 'weight' must be finite, non-negative numbers, not all 0")
    targets = [f"target_{q}" for q in qids]
    table = _generalized(prior, qids, hierarchies, levels)
    table[targets] = pd.DataFrame({q: _as_str(prior[q]) for q in qids}).to_numpy()
    table[sensitive] = _as_str(prior[sensitive])
    table["weight"] = w
    joint = table.groupby([*qids, *targets, sensitive], sort=False)["weight"].sum().reset_index()
    # f(s|q) = f(q,s)/f(q) and f(s|q*) = f(q*,s)/f(q*)
    joint["prior"] = joint["weight"] / joint.groupby(targets)["weight"].transform("sum")
    gen = joint.groupby([*qids, sensitive], sort=False)["weight"].sum().rename("gen_weight")
    gen = (gen / gen.groupby(level=list(range(len(qids)))).transform("sum")).rename("gen_prior")
    # every target of a released class against every value the class holds
    who = joint[[*qids, *targets]].drop_duplicates()
    rows = who.merge(counts, on=qids, how="inner")
    rows = rows.merge(joint[[*targets, sensitive, "prior"]], on=[*targets, sensitive],
                      how="left").merge(gen.reset_index(), on=[*qids, sensitive], how="left")
    rows["prior"] = rows["prior"].fillna(0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(rows["prior"] > 0, rows["prior"] / rows["gen_prior"], 0.0)
    mass = rows["count"] * ratio
    rows["posterior"] = mass / mass.groupby([rows[t] for t in targets]).transform("sum")
    return rows.drop(columns="gen_prior")[[*qids, *targets, sensitive, "count", "class_size",
                                           "prior", "posterior"]]


def posterior_beliefs(released: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str,
                      prior=None, *, hierarchies: Mapping[str, Hierarchy] | None = None,
                      levels: Mapping[str, int] | None = None,
                      backend: Backend | str = "cpu") -> pd.DataFrame:
    """The Bayes-optimal adversary's belief in each sensitive value of each released class
    (Machanavajjhala et al. 2007, Section 3.1, Theorem 3.1; formula in the module docstring).

    ``prior`` is the adversary's background knowledge ``f``:

    * ``None`` -- the release's overall distribution of ``sensitive``;
    * a mapping value -> probability (summing to 1; every released value positive);
    * a DataFrame with the QID columns (original values), ``sensitive`` and ``weight``: the
      joint distribution ``f(q, s)`` up to a constant (e.g. counts of a population table).
      ``f(s|q)`` and ``f(s|q*)`` follow by normalizing; ``q`` is mapped to its class ``q*``
      through ``hierarchies`` at ``levels`` (default:
      :func:`gpuppdp.analysis.utility.released_levels`) or, without hierarchies, by equal values.

    One row per class and value it holds (``count = n(q*,s) > 0``; values absent from a class
    have posterior 0): the class's QID labels (with a table prior also the target's values as
    ``target_<qid>``; one row per target), ``sensitive``, ``count``, ``class_size``,
    ``prior`` ``f(s|q)``, ``posterior`` ``beta``, ``gain = posterior - prior`` and ``ratio =
    posterior / prior``.  Rows whose QIDs are all ``'*'`` (suppressed) form a class of their
    own: their sensitive values are released too.  A target whose prior gives every value of its
    class probability 0 has posterior NaN.  ``backend`` groups the records (NumPy or CuPy).
    """
    qids = column_list(quasi_identifiers)
    if not isinstance(sensitive, str):
        raise InputTypeError(f"sensitive must be one column name, got {sensitive!r}")
    if sensitive in qids:
        raise InputError(f"sensitive: {sensitive!r} is also a quasi-identifier")
    _check_frame("released", released, [*qids, sensitive])
    counts = _class_counts(released, qids, sensitive, get_backend(backend))
    if prior is None or isinstance(prior, Mapping):
        if prior is None:
            total = counts.groupby(sensitive)["count"].sum()
            probs = (total / total.sum()).to_dict()
        else:
            probs = _mapping_prior(prior, counts[sensitive].to_numpy(), sensitive)
        out = counts
        out["prior"] = out[sensitive].map(probs).astype(np.float64)
        out["posterior"] = out["count"] / out["class_size"]
    elif isinstance(prior, pd.DataFrame):
        out = _table_beliefs(counts, prior, qids, sensitive, hierarchies,
                             _levels(released, qids, hierarchies, levels))
    else:
        raise InputTypeError("prior must be None, a mapping value -> probability or a DataFrame, "
                        f"got {type(prior).__name__}")
    out["gain"] = out["posterior"] - out["prior"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["ratio"] = out["posterior"] / out["prior"]
    return out.reset_index(drop=True)


def _top(beliefs: pd.DataFrame, column: str) -> dict:
    if not isinstance(beliefs, pd.DataFrame) or column not in beliefs.columns:
        raise InputTypeError("beliefs must be the DataFrame of posterior_beliefs")
    if beliefs[column].notna().sum() == 0:
        raise InputError(f"beliefs: no {column} to rank")
    return beliefs.loc[beliefs[column].idxmax()].to_dict()


def max_posterior(beliefs: pd.DataFrame) -> dict:
    """The (class, value) row of :func:`posterior_beliefs` with the highest posterior (1:
    positive disclosure); the first such row on ties."""
    return _top(beliefs, "posterior")


def largest_gain(beliefs: pd.DataFrame) -> dict:
    """The row with the largest ``posterior - prior`` (the adversary's largest gain)."""
    return _top(beliefs, "gain")


# --------------------------------------------------------------------------------------------
# linkage
# --------------------------------------------------------------------------------------------

def linkage_check(released: pd.DataFrame, external: pd.DataFrame,
                  quasi_identifiers: Sequence[str], k: int = 2, *,
                  hierarchies: Mapping[str, Hierarchy] | None = None,
                  levels: Mapping[str, int] | None = None,
                  backend: Backend | str = "cpu") -> dict:
    """Link an identified ``external`` table (original values) to the release on the QIDs.

    An external record's candidates are the released records whose QID labels equal its
    values -- mapped to the release's ``levels`` through ``hierarchies`` when given (levels
    default to :func:`gpuppdp.analysis.utility.released_levels`; a value not in its hierarchy
    raises ``UnknownValuesError`` naming the column and values), else compared as strings (an
    unknown value then simply links to nothing).  Suppressed released records (``'*'`` in
    every QID) are nobody's candidate: they show no QID value to link on (ARX's risk models
    leave them out too), which is the conservative choice -- counting them as everybody's
    candidates would make a release look safer the more it suppresses.

    Returns ``external_records``, ``k``, ``linked_0`` (no candidate), ``linked_1`` (exactly
    one: re-identified), ``linked_below_k`` (``1 <= candidates < k``) and ``candidates``
    (host int64 array, one entry per external row, in its order).  The join is a grouping of
    both tables' rows together on ``backend`` (NumPy or CuPy).
    """
    qids = column_list(quasi_identifiers)
    k = check_int("k", k, 1)
    _check_frame("released", released, qids, empty_ok=True)
    _check_frame("external", external, qids)
    lv = _levels(released, qids, hierarchies, levels)
    be = get_backend(backend)
    xp = be.xp
    shown = released.loc[~suppressed_rows(released, qids), qids]
    classes = pd.DataFrame({q: _as_str(shown[q]) for q in qids})
    keys = _generalized(external, qids, hierarchies, lv).reset_index(drop=True)
    # released rows and external records grouped together: a record's candidates are the
    # released rows in its group
    group, _ = _classes_encoded(*encode_columns(pd.concat([classes, keys], ignore_index=True),
                                                qids, be), be)
    n_shown = len(classes)
    in_release = xp.bincount(group[:n_shown], minlength=int(be.scalar(group.max())) + 1)
    cand = in_release[group[n_shown:]]
    counts = be.to_host(xp.stack([(cand == 0).sum(), (cand == 1).sum(),
                                  ((cand >= 1) & (cand < k)).sum()]))
    return {"external_records": int(cand.shape[0]), "k": int(k), "linked_0": int(counts[0]),
            "linked_1": int(counts[1]), "linked_below_k": int(counts[2]),
            "candidates": be.to_host(cand).astype(np.int64)}
