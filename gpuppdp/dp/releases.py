"""Differentially private releases built on the engine's encoding.

Columns are encoded the way the engine encodes quasi-identifiers: hierarchy leaf codes, then
one gather per column to the requested generalization level
(``Hierarchy.codes(level)[leaf_codes]``); the cell of a row is the mixed-radix combination of
its codes, and counts/sums per cell are one ``xp.bincount`` on the device.  Only the noisy
table (one value per cell) comes back to the host, as a :class:`pandas.DataFrame` with the
labels.  What was spent (ε and δ) and how noisy the result is are recorded in
``result.attrs["dp"]``.

**The domain must be public.**  The cells of a table are *every* combination of the columns'
labels at the chosen levels, including empty ones: publishing only the non-empty cells would
reveal which combinations occur.  So the labels must not come from the data: each grouping
column needs a hierarchy (``hierarchies``, e.g. ``Hierarchy.flat(values)``) or an explicit
list of values (``domains``).  A column without one is refused (:class:`DataDomainError`)
unless the caller states that its set of values is public (``public_domain=True`` or a list
of such columns); the release then records ``domain_from_data``.  Otherwise adding one
person with a new value would add an output row with probability 1, which no amount of noise
hides.

**Values outside the domain** (and missing values) never cause a refusal before the budget
is charged.  ``unknown`` chooses what happens to their rows:

* ``"other"``: counted in an extra ``"(other)"`` cell per column, always released (its
  presence does not depend on the data; its noisy count estimates how many there were);
* ``"drop"``: the rows are dropped before counting (a per-row function of public parameters:
  the sensitivity does not change); the release says that rows outside the domain are
  dropped, never how many were;
* ``"error"`` (the default): the release is charged first, then refused with an error that
  names neither the values nor how many rows hold them (:class:`OutOfDomainError`).  The
  refusal is not noisy -- it answers "is any value outside the domain?" exactly -- but each
  answer costs the release's ε, so probing stops when the budget runs out.  Use "other" or
  "drop" for a release that is differentially private in every outcome.

Refusals that depend only on the parameters (a bad ε, an exhausted budget, a column without
a public domain, a seeded source without ``insecure=True``) come before the charge.

**Persons with several rows.**  With ``person=COL`` and ``max_rows_per_person=M``, each
person (value of ``COL``; each row with a missing ``COL`` is a person of its own) keeps at
most ``M`` of their rows, chosen uniformly at random with the CSPRNG
(:class:`~gpuppdp.dp.RandomSource`), before counting, and the sensitivity is scaled by ``M``:
the release's ε is then person-level, and the ledger records it with the unit
``person (COL, at most M rows)``.  The bounding is stable: which rows a person keeps depends
only on that person's rows and on independent random keys, so adding or removing one person
changes the bounded table by at most that person's ``M`` rows and leaves every other
person's choice identically distributed -- the bounded histogram has sensitivity ``M``
(``2M`` under replace-one), and the noise is calibrated to it.  How many rows were dropped
is not released.

**Seeds.**  A seeded :class:`~gpuppdp.dp.RandomSource` makes the noise reproducible by anyone
who knows the seed (the true counts can be recovered exactly), so a release refuses it unless
it was created with ``insecure=True``; the seed is then recorded in ``attrs["dp"]`` and in
the ledger entry.

Post-processing (rounding, clamping at 0, dividing a noisy sum by a noisy count) uses only
the noisy values and public parameters, so it keeps the guarantee (Dwork & Roth 2014,
Proposition 2.1).  Clamping at 0 (the default for counts) biases every small cell upward
and so sums of cells (totals): the release says so in ``attrs["dp"]["post_processing"]``;
``clamp=False`` keeps the unbiased, possibly negative counts.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014: Proposition 2.1 (post-processing),
   Example 3.2 (histogram queries), Theorem 3.16 (composition).
.. [2] F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition over
   disjoint cells).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..hierarchy import Hierarchy
from ..kernels import groupby
from ..validation import check_epsilon, check_int, check_probability
from .accountant import BudgetAccountant
from .cells import (OTHER, UNKNOWN_CHOICES, _MAX_KEY, DataDomainError, OutOfDomainError,
                    _bound_persons, _check_source, _columns, _encode, _out_of_domain, _persons,
                    _public_columns, _unit)
from .gaussian import DiscreteGaussianMechanism, GaussianMechanism
from .mechanisms import GeometricMechanism, LaplaceMechanism
from .randomness import RandomSource, default_source
from .sensitivity import Neighbouring, grouped_sum_sensitivity, histogram_sensitivity
from .summation import exact_grid_sums, exact_sum_mechanism

__all__ = ["DataDomainError", "OutOfDomainError", "ReleaseOptions", "dp_histogram",
           "dp_class_counts", "dp_group_stats", "histogram_charge", "MECHANISMS",
           "GAUSSIAN_MECHANISMS", "DEFAULT_MAX_CELLS", "OTHER", "UNKNOWN_CHOICES"]

MECHANISMS = ("geometric", "laplace", "gaussian", "discrete-gaussian")
#: the mechanisms calibrated from (ε, δ) or ρ and charged in zCDP
GAUSSIAN_MECHANISMS = ("gaussian", "discrete-gaussian")
DEFAULT_MAX_CELLS = 10**7


@dataclass(frozen=True)
class ReleaseOptions:
    """The keywords a release over the cells of public domains takes
    (:func:`dp_group_stats`, :func:`~gpuppdp.dp.queries.dp_query`), each as in
    :func:`dp_histogram`: ``hierarchies``, ``levels``, ``domains``, ``public_domain``,
    ``unknown`` and ``max_cells`` fix the cells, ``neighbouring`` the relation, ``random`` the
    randomness and ``accountant`` where the release is charged.

    >>> ReleaseOptions(unknown="drop").max_cells == DEFAULT_MAX_CELLS
    True
    """

    hierarchies: Mapping[str, Hierarchy] | None = None
    levels: Mapping[str, int] | None = None
    domains: Mapping[str, Sequence] | None = None
    public_domain: bool | str | Sequence[str] = False
    unknown: str = "error"
    neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE
    max_cells: int = DEFAULT_MAX_CELLS
    random: RandomSource | None = None
    accountant: BudgetAccountant | None = None

    def source(self) -> RandomSource:
        """``random`` or the default source, checked (a seeded one needs ``insecure=True``)."""
        source = self.random if self.random is not None else default_source()
        _check_source(source)
        return source

    def cells(self, data: pd.DataFrame, cols: list[str], source: RandomSource, select):
        """The cells of ``cols`` in ``data`` (out-of-domain rows decided after the charge:
        ``deferred``), the rows ``select``-ed."""
        return _encode(data, cols, self.hierarchies, self.levels, self.domains,
                       self.public_domain, self.unknown, source,
                       check_int("max_cells", self.max_cells, 1), deferred=True, select=select)


def _mechanism(name: str, *, epsilon, delta, rho, neighbouring: Neighbouring, m: int):
    """The noise of a histogram's counts (``m`` rows per person at most): geometric or
    Laplace at ε (L1 sensitivity), or a Gaussian (L2 sensitivity ``m``, ``sqrt(2) m`` under
    replace-one) calibrated from ``(epsilon, delta)`` or from ``rho``."""
    if name not in MECHANISMS:
        raise InputError(f"mechanism must be one of {MECHANISMS}, got {name!r}")
    coordinates = _changed_cells(neighbouring) * m
    if name not in GAUSSIAN_MECHANISMS:
        if rho is not None or delta is not None:
            raise InputError(f"rho and delta apply to the mechanisms {GAUSSIAN_MECHANISMS}, "
                             f"not {name!r}: got rho={rho!r}, delta={delta!r}")
        epsilon = check_epsilon("epsilon", epsilon)
        sens = histogram_sensitivity(neighbouring=neighbouring, max_contributions=m)
        if name == "geometric":
            return GeometricMechanism(epsilon=epsilon, sensitivity=sens)
        return LaplaceMechanism(epsilon=epsilon, sensitivity=sens, coordinates=coordinates)
    if rho is None and (epsilon is None or delta is None):
        raise InputError(f"mechanism {name!r} needs delta > 0 with epsilon (or rho instead), "
                         f"got epsilon={epsilon!r}, delta={delta!r}")
    if rho is not None and epsilon is not None:
        raise InputError(f"give epsilon and delta, or rho, not both: got epsilon={epsilon!r}, "
                         f"rho={rho!r}")
    target = {"rho": rho} if rho is not None else {"epsilon": epsilon, "delta": delta}
    l2 = m * (1.0 if neighbouring is Neighbouring.ADD_REMOVE else math.sqrt(2.0))
    cls = GaussianMechanism if name == "gaussian" else DiscreteGaussianMechanism
    return cls(**target, sensitivity=l2, coordinates=coordinates)


def _charge(mech) -> dict:
    """What a release with ``mech`` spends: ``rho`` (zCDP) and the support's δ for a
    Gaussian, else ``epsilon`` and ``delta``."""
    if isinstance(mech, (GaussianMechanism, DiscreteGaussianMechanism)):
        return {"rho": mech.rho, "delta": mech.delta_trunc}
    return {"epsilon": mech.epsilon, "delta": mech.delta}


def _guarantee(mech, delta) -> dict:
    """The release's record of its guarantee: ε and δ (for a Gaussian: its (ε, δ) target, or
    the ε at ``delta`` of one calibrated from ρ, or none), the notion and ρ."""
    charge = _charge(mech)
    if "rho" not in charge:
        return {"epsilon": mech.epsilon, "delta": mech.delta, "rho": None,
                "notion": "pure" if mech.delta == 0.0 else "approx"}
    if mech.epsilon is not None:
        epsilon, delta = mech.epsilon, mech.delta
    elif delta is not None:
        epsilon = mech.epsilon_at(delta)
    else:
        epsilon, delta = None, mech.delta_trunc
    return {"epsilon": epsilon, "delta": delta, "rho": mech.rho, "notion": "zcdp"}


def histogram_charge(mechanism: str = "geometric", *, epsilon: float | None = None,
                     delta: float | None = None, rho: float | None = None,
                     neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                     max_rows_per_person: int = 1) -> dict:
    """What :func:`dp_histogram` with these parameters spends, as keywords of
    :meth:`BudgetAccountant.check <gpuppdp.dp.accountant.BudgetAccountant.check>` (to check
    a budget before reading the data).

    >>> sorted(histogram_charge("discrete-gaussian", rho=0.5))
    ['delta', 'rho']
    """
    return _charge(_mechanism(mechanism, epsilon=epsilon, delta=delta, rho=rho,
                              neighbouring=Neighbouring.parse(neighbouring),
                              m=check_int("max_rows_per_person", max_rows_per_person, 1)))


def _changed_cells(neighbouring: Neighbouring) -> int:
    """Cells of a partition one neighbour changes: 1 (add/remove), 2 (replace)."""
    return 1 if neighbouring is Neighbouring.ADD_REMOVE else 2


def _noisy_counts(counts, mech, source: RandomSource, *, clamp: bool, rounding: bool):
    """Noisy counts (host) and the post-processing applied, from exact device counts."""
    xp = source.backend.xp
    post = []
    if isinstance(mech, (GeometricMechanism, DiscreteGaussianMechanism)):
        noisy = mech.release(counts, random=source)
    else:
        noisy = mech.release(counts.astype(xp.float64), random=source)
        if rounding:
            noisy = xp.rint(noisy).astype(xp.int64)
            post.append("rounded to integers")
    if clamp:
        noisy = xp.maximum(noisy, 0)
        post.append("clamped at 0")
    return source.backend.to_host(noisy), post


CLAMP_NOTE = ("counts clamped at 0: this biases small cells, and totals over cells, upward; "
              "clamp=False (--no-clamp) keeps the unbiased counts")


def _check_accountant(accountant, charge: dict, neighbouring: Neighbouring) -> None:
    """Before anything reads the data: a wrong accountant or an exhausted budget
    (``charge``: ``epsilon`` or ``rho``, and ``delta``)."""
    if accountant is None:
        return
    if not isinstance(accountant, BudgetAccountant):
        raise InputError(f"accountant must be a BudgetAccountant, got "
                         f"{type(accountant).__name__}")
    accountant.check(**charge, neighbouring=neighbouring)


def _spend(accountant: BudgetAccountant | None, charge: dict, label: str, *,
           neighbouring: Neighbouring | None = None, unit: str = "row",
           seed: int | None = None) -> None:
    if accountant is not None:
        if not isinstance(accountant, BudgetAccountant):
            raise InputError(f"accountant must be a BudgetAccountant, got "
                             f"{type(accountant).__name__}")
        accountant.spend(**charge, label=label, neighbouring=neighbouring, unit=unit,
                         seed=seed)


def _record(frame: pd.DataFrame, *, epsilon, delta, neighbouring, queries, post, source, cells,
            from_data, unknown, unit: str = "row", rho: float | None = None,
            notion: str | None = None) -> pd.DataFrame:
    frame.attrs["dp"] = {
        "epsilon": epsilon,
        "delta": delta,
        "rho": rho,
        "notion": notion or ("pure" if delta == 0.0 else "approx"),
        "neighbouring": neighbouring.value,
        "queries": queries,
        "post_processing": post,
        "cells": cells,
        "domain_from_data": from_data,
        "unknown": unknown,
        "randomness": "chacha20 (seeded: NOT private)" if source.seeded else "chacha20",
        "seeded": source.seeded,
        "seed": source.seed,
        "unit": unit,
        "clamping": CLAMP_NOTE if any(p.startswith("clamped at 0") or "clamped at 0" in p
                                      for p in post) else None,
        "out_of_domain": {"error": "a release with any is refused, after its charge",
                          "other": f"counted in the {OTHER!r} cells",
                          "drop": "dropped (how many is not released)"}.get(unknown),
        "backend": source.backend.name,
    }
    return frame


def dp_histogram(data: pd.DataFrame, by: str | Sequence[str], *,
                 epsilon: float | None = None, delta: float | None = None,
                 rho: float | None = None,
                 hierarchies: Mapping[str, Hierarchy] | None = None,
                 levels: Mapping[str, int] | None = None,
                 domains: Mapping[str, Sequence] | None = None,
                 public_domain: bool | str | Sequence[str] = False,
                 unknown: str = "error", mechanism: str = "geometric",
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                 clamp: bool = True, rounding: bool = True,
                 max_cells: int = DEFAULT_MAX_CELLS,
                 random: RandomSource | None = None,
                 accountant: BudgetAccountant | None = None,
                 person: str | None = None,
                 max_rows_per_person: int | None = None) -> pd.DataFrame:
    """A noisy contingency table: counts over any subset of columns, at any level.

    Parameters
    ----------
    data : DataFrame
        The rows.  Without ``person`` each row is one person (the unit of privacy); if a
        person can own several rows, give ``person`` and ``max_rows_per_person``.
    by : str or sequence of str
        Grouping columns (typically quasi-identifiers).
    epsilon : float
        Privacy parameter of the whole table (parallel composition over its disjoint cells;
        a histogram has sensitivity 1, Dwork & Roth 2014, Example 3.2).
    delta : float, optional
        With ``epsilon``, the (ε, δ) target of a Gaussian mechanism; with ``rho``, the δ at
        which the release's ε is recorded.  Only for the Gaussian mechanisms.
    rho : float, optional
        A Gaussian mechanism's zCDP target instead of ``(epsilon, delta)``.
    hierarchies : mapping column -> Hierarchy, optional
        Fix each column's public domain and allow generalization; extra entries are ignored.
    levels : mapping column -> int, optional
        Generalization level per column (0 = original values, the default).
    domains : mapping column -> list of values, optional
        The public set of values of a column without a hierarchy.
    public_domain : bool, str or sequence of str, default False
        Declare that the set of values of these columns (True: every column without a
        hierarchy or domain) is public, so that it may be read from the data.  Without a
        hierarchy, a domain or this declaration a column is refused
        (:class:`DataDomainError`).
    unknown : {"error", "other", "drop"}
        Rows with values outside a column's domain (or missing): refused *after the charge*
        without being named (:class:`OutOfDomainError`), counted in an ``"(other)"`` cell
        (released always), or dropped (the release never says how many).
    mechanism : {"geometric", "laplace", "gaussian", "discrete-gaussian"}
        Integer two-sided geometric noise (default; Ghosh, Roughgarden & Sundararajan, STOC
        2009), grid Laplace noise, grid Gaussian noise
        (:class:`~gpuppdp.dp.gaussian.GaussianMechanism`, rounded like the Laplace) or integer
        discrete Gaussian noise (:class:`~gpuppdp.dp.gaussian.DiscreteGaussianMechanism`).
        The Gaussians (L2 sensitivity ``M``, ``sqrt(2) M`` under replace-one) are charged in
        zCDP (their ρ, with the δ of their support): the accountant needs a δ budget.
    neighbouring : {"add-remove", "replace"}
        Sets the histogram sensitivity: 1 or 2.
    clamp : bool, default True
        Post-process: negative counts become 0.
    rounding : bool, default True
        Post-process Laplace counts to integers (geometric counts already are).
    max_cells : int
        Refuse tables with more cells than this (every cell is released).
    random : RandomSource, optional
        Backend and randomness; default :func:`default_source` (OS entropy, ChaCha20).  A
        seeded source is refused unless created with ``insecure=True``.
    accountant : BudgetAccountant, optional
        Checked before the data is read, charged ``(epsilon, delta)`` (or ``rho``; with
        the neighbouring relation, the unit and any seed) before any noise is drawn.
    person : str, optional
        The column naming the person each row belongs to: each person keeps at most
        ``max_rows_per_person`` rows (a uniformly random choice), the sensitivity is scaled
        by it and ε is person-level (see the module docstring: the bounding is stable).
    max_rows_per_person : int, optional
        ``M`` >= 1 (default 1 with ``person``).

    Returns
    -------
    DataFrame
        One row per cell (all label combinations, row-major in label order) with the ``by``
        columns and ``count``; ``attrs["dp"]`` records ε, δ (ρ and the notion), the
        mechanism, its scale or σ and error per cell, the post-processing.

    Examples
    --------
    >>> import pandas as pd
    >>> from gpuppdp.dp import RandomSource
    >>> h = Hierarchy([["f", "m"], ["*", "*"]], name="sex")
    >>> df = pd.DataFrame({"sex": ["f", "m", "m"]})
    >>> table = dp_histogram(df, "sex", epsilon=1.0, hierarchies={"sex": h},
    ...                      random=RandomSource("cpu"))
    >>> table["sex"].tolist(), table.attrs["dp"]["epsilon"], table.attrs["dp"]["delta"] < 1e-150
    (['f', 'm'], 1.0, True)
    """
    cols = _columns(data, by)
    return _count_release(
        data, cols, epsilon=epsilon, delta=delta, rho=rho, hierarchies=hierarchies,
        levels=levels, domains=domains, public_domain=public_domain, unknown=unknown,
        mechanism=mechanism, neighbouring=neighbouring, clamp=clamp, rounding=rounding,
        max_cells=max_cells, random=random, accountant=accountant, person=person,
        max_rows_per_person=max_rows_per_person, label=f"dp_histogram by {cols}")


def _count_release(data, cols, *, epsilon, hierarchies, levels, domains, public_domain, label,
                   delta=None, rho=None,
                   values_are="leaves", class_list_public=False, unknown="error",
                   mechanism="geometric", neighbouring=Neighbouring.ADD_REMOVE, clamp=True,
                   rounding=True, max_cells=DEFAULT_MAX_CELLS, random=None, accountant=None,
                   person=None, max_rows_per_person=None) -> pd.DataFrame:
    """The counts of :func:`dp_histogram` and :func:`dp_class_counts`: parameter checks and
    the budget first, then the data (out-of-domain rows decided after the charge)."""
    neighbouring = Neighbouring.parse(neighbouring)
    person, m = _persons(data, cols, person, max_rows_per_person)
    mech = _mechanism(mechanism, epsilon=epsilon, delta=delta, rho=rho,
                      neighbouring=neighbouring, m=m)
    charge = _charge(mech)
    if unknown not in UNKNOWN_CHOICES:
        raise InputError(f"unknown must be one of {UNKNOWN_CHOICES}, got {unknown!r}")
    source = random if random is not None else default_source()
    _check_source(source)
    _check_accountant(accountant, charge, neighbouring)
    limit = _MAX_KEY if class_list_public else check_int("max_cells", max_cells, 1)
    select = None if person is None else (
        lambda valid: _bound_persons(data[person], valid, m, source))
    cells = _encode(data, cols, hierarchies, levels, domains, public_domain, unknown, source,
                    limit, values_are=values_are, deferred=True, select=select)
    xp = source.backend.xp
    if class_list_public and cells.key.shape[0]:
        inverse, rep, _ = groupby.group(xp, [cells.key], order="sorted")
        counts = xp.bincount(inverse, minlength=rep.shape[0]).astype(xp.int64)
        rows = source.backend.to_host(cells.key[rep])
    elif class_list_public:  # no row left: no class found
        counts, rows = xp.zeros(0, dtype=xp.int64), np.zeros(0, dtype=np.int64)
    else:
        rows = np.arange(math.prod(cells.radices))
        counts = (xp.bincount(cells.key, minlength=len(rows)).astype(xp.int64)
                  if cells.key.shape[0] else xp.zeros(len(rows), dtype=xp.int64))
    unit = _unit(person, m)
    _spend(accountant, charge, label, neighbouring=neighbouring, unit=unit, seed=source.seed)
    if cells.out_of_domain:  # decided after the charge: probing costs epsilon each time
        what = ", ".join(f"{k}={v:g}" for k, v in charge.items() if k != "delta")
        raise _out_of_domain(cells.out_of_domain, f" (this refusal was charged {what})"
                             if accountant is not None else "")
    noisy, post = _noisy_counts(counts, mech, source, clamp=clamp, rounding=rounding)
    if person is not None:
        post.insert(0, f"at most {m} rows per person ({person!r}), chosen at random")
    frame = cells.frame(rows)
    frame["count"] = noisy
    return _record(frame, **_guarantee(mech, delta), neighbouring=neighbouring,
                   queries={"count": mech.info()}, post=post, source=source,
                   cells=len(frame), from_data=cells.from_data, unknown=unknown, unit=unit)


def dp_class_counts(released: pd.DataFrame, quasi_identifiers: Sequence[str], *,
                    epsilon: float | None = None,
                    hierarchies: Mapping[str, Hierarchy] | None = None,
                    levels: Mapping[str, int] | None = None,
                    domains: Mapping[str, Sequence] | None = None,
                    public_domain: bool | str | Sequence[str] = False,
                    **options) -> pd.DataFrame:
    """Noisy size of every equivalence class of a released (generalized) table.

    The list of classes must not come from the data.  With ``hierarchies`` (and the
    ``levels`` the table was generalized to) or ``domains`` for every quasi-identifier, the
    classes are *all* combinations of the levels' labels, empty ones included: a neighbouring
    table gives the same rows.  Only when the caller declares the class list public
    (``public_domain=True``, e.g. the released table itself is published) are the classes
    the distinct combinations found in ``released``; a column with neither is refused
    (:class:`DataDomainError`).  Each row is in exactly one class: parallel composition,
    histogram sensitivity.

    Parameters
    ----------
    released : DataFrame
        The released table (generalized values).  Suppressed values (``"*"`` below the top
        level) are outside the levels' labels: list them in ``domains`` or pass
        ``unknown="other"``.
    quasi_identifiers : sequence of str
        Its quasi-identifier columns.
    hierarchies, levels, domains, public_domain
        As in :func:`dp_histogram`; the values of ``released`` are labels of the given
        levels (not leaves).
    epsilon, **options
        As in :func:`dp_histogram` (``delta``, ``rho``, ``unknown``, ``mechanism``,
        ``neighbouring``, ``clamp``,
        ``rounding``, ``max_cells``, ``random``, ``accountant``, ``person``,
        ``max_rows_per_person``).

    Returns
    -------
    DataFrame
        One row per class with the ``quasi_identifiers`` columns and ``count``;
        ``attrs["dp"]`` as in :func:`dp_histogram`.
    """
    cols = _columns(released, quasi_identifiers)
    fixed = set(hierarchies or {}) | set(domains or {})
    class_list_public = _public_columns(public_domain, cols) >= set(cols) and not (
        fixed & set(cols))
    # a declared-public class list releases the classes found, not every combination
    return _count_release(
        released, cols, epsilon=epsilon, hierarchies=hierarchies, levels=levels,
        domains=domains, public_domain=public_domain, label=f"dp_class_counts over {cols}",
        values_are="labels", class_list_public=class_list_public, **options)


def _noisy_stats(frame: pd.DataFrame, sums, key, sum_mech, count_mech, source: RandomSource,
                 lower: float, upper: float) -> tuple[dict, list]:
    """Noisy ``sum`` per cell into ``frame`` and, with ``count_mech`` (a mean), the noisy
    ``count`` and the post-processed ``mean``; returns the queries' record and the
    post-processing steps."""
    backend, xp = source.backend, source.backend.xp
    noisy_sum = sum_mech.release(sums, random=source)
    frame["sum"] = backend.to_host(noisy_sum)
    if count_mech is None:
        return {"sum": sum_mech.info()}, []
    counts = xp.bincount(key, minlength=len(frame)).astype(xp.int64)
    noisy_count = xp.maximum(count_mech.release(counts, random=source), 0)
    mean = xp.clip(noisy_sum / xp.maximum(noisy_count, 1), float(lower), float(upper))
    frame.insert(len(frame.columns) - 1, "count", backend.to_host(noisy_count))
    frame["mean"] = backend.to_host(mean)
    return ({"count": count_mech.info(), "sum": sum_mech.info()},
            ["count clamped at 0", "mean = clip(sum / max(count, 1), lower, upper)"])


def _numeric_column(data: pd.DataFrame, value: str) -> np.ndarray:
    """Column ``value`` as float64, NaN where a value is missing or not a number (the caller
    refuses those rows after the charge, or drops them); refused at once only when the column
    is absent (the schema is public); a float64 column is read without a copy (read-only)."""
    if value not in data.columns:
        raise InputError(f"value column {value!r} not in the data")
    column = data[value]
    if column.dtype == np.float64:
        return column.to_numpy()
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)


def dp_group_stats(data: pd.DataFrame, by: str | Sequence[str], value: str, *,
                   epsilon: float, lower: float, upper: float, statistic: str = "mean",
                   count_share: float = 0.5,
                   hierarchies: Mapping[str, Hierarchy] | None = None,
                   levels: Mapping[str, int] | None = None,
                   domains: Mapping[str, Sequence] | None = None,
                   public_domain: bool | str | Sequence[str] = False,
                   unknown: str = "error",
                   neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE,
                   max_cells: int = DEFAULT_MAX_CELLS,
                   random: RandomSource | None = None,
                   accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """Noisy sum or mean of a numeric attribute per group (every cell of the table).

    Values are clipped to ``[lower, upper]`` (declared bounds, public), which bounds the
    sensitivity, and summed exactly (:mod:`gpuppdp.dp.summation`: fixed point, integer sums,
    in any order; more rows than int64 holds: :class:`~.summation.SummationRangeError`, before
    anything is spent).  A sum gets grid Laplace noise.  A mean is post-processed from a
    noisy count (geometric, ``count_share·ε``) and a noisy sum (Laplace, the rest of ε):
    ``clip(sum / max(count, 1), lower, upper)``; the two compose sequentially to ``ε`` (and
    their δ add up).

    Parameters
    ----------
    data, by
        As in :func:`dp_histogram`.
    value : str
        The numeric column (no missing values).
    epsilon : float
        Total privacy parameter.
    lower, upper : float
        Clipping bounds, declared in advance (never computed from the data).
    statistic : {"mean", "sum"}
    count_share : float, default 0.5
        Fraction of ε spent on the counts of a mean, in (0, 1).
    hierarchies, levels, domains, public_domain, unknown, neighbouring, max_cells
        As in :func:`dp_histogram` (:class:`ReleaseOptions`).
    random, accountant
        As in :func:`dp_histogram`.

    Returns
    -------
    DataFrame
        The ``by`` columns and ``sum`` (statistic "sum") or ``count``, ``sum``, ``mean``
        (statistic "mean"); ``attrs["dp"]`` records ε, δ and each query's mechanism and
        error, and ``summation``: the method, its grid and the sensitivity used.

    References
    ----------
    .. [1] Dwork and Roth 2014, Theorem 3.16 and Proposition 2.1.
    """
    epsilon = check_epsilon("epsilon", epsilon)
    opts = ReleaseOptions(hierarchies, levels, domains, public_domain, unknown, neighbouring,
                          max_cells, random, accountant)
    neighbouring = Neighbouring.parse(neighbouring)
    if statistic not in ("mean", "sum"):
        raise InputError(f"statistic must be 'mean' or 'sum', got {statistic!r}")
    sum_sens = grouped_sum_sensitivity(lower=lower, upper=upper, neighbouring=neighbouring)
    if sum_sens == 0:
        raise InputError("lower and upper are both 0: the sum is constant, nothing to release")
    changed = _changed_cells(neighbouring)
    sum_epsilon = epsilon
    if statistic == "mean":
        share = check_probability("count_share", count_share, low=0.0, high=1.0)
        count_mech = GeometricMechanism(
            epsilon=share * epsilon, sensitivity=histogram_sensitivity(neighbouring=neighbouring))
        sum_epsilon = (1.0 - share) * epsilon
    plan, sum_mech = exact_sum_mechanism(sum_epsilon, lower, upper, sum_sens, changed)
    delta = sum_mech.delta + (count_mech.delta if statistic == "mean" else 0.0)
    cols = _columns(data, by)
    values = _numeric_column(data, value)
    not_numbers = np.isnan(values)
    source = opts.source()
    unknown = opts.unknown
    cells = opts.cells(data, cols, source,
                       (lambda valid: valid & ~not_numbers) if unknown == "drop" else None)
    backend, xp = source.backend, source.backend.xp
    n_cells = math.prod(cells.radices)
    kept = values if cells.kept is None else values[cells.kept]
    sums = exact_grid_sums(xp, cells.key, backend.asarray(kept), n_cells,
                           plan)[0]  # or refuse: the bounds and the row count decide
    _spend(opts.accountant, {"epsilon": epsilon, "delta": delta},
           f"dp_group_stats {statistic} of {value!r} by {cols}", neighbouring=neighbouring,
           seed=source.seed)
    if cells.out_of_domain:  # decided after the charge: probing costs epsilon each time
        raise _out_of_domain(cells.out_of_domain)
    if unknown != "drop" and not_numbers.any():  # as well
        raise InputError(f"value column {value!r} holds missing values or values that are not "
                         "numbers (not shown); clean it, or pass unknown='drop' to drop their "
                         "rows")
    frame = cells.frame(np.arange(n_cells))
    queries, post = _noisy_stats(frame, sums, cells.key, sum_mech,
                                 count_mech if statistic == "mean" else None, source,
                                 lower, upper)
    frame = _record(frame, epsilon=epsilon, delta=delta, neighbouring=neighbouring,
                    queries=queries, post=post, source=source, cells=n_cells,
                    from_data=cells.from_data, unknown=unknown)
    frame.attrs["dp"]["summation"] = plan.info(changed)
    return frame
