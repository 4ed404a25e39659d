"""Privacy budget accounting: a budget (ε, δ) in one neighbouring relation, and its ledger.

A :class:`BudgetAccountant` holds a total budget and the ledger of what was spent from it:
sequential spends (:meth:`BudgetAccountant.spend`) in pure ε, (ε, δ), zCDP (ρ) or RDP (a
curve), and parallel groups over disjoint parts of the data
(:meth:`BudgetAccountant.parallel`).  Each entry records the relation its privacy holds
under and is charged in the budget's relation; what the ledger has spent is the tightest
accounting of all its entries.  The rules -- the charge of an entry of the other relation,
parallel composition, the accountings (basic, advanced, zCDP, RDP) and the minimum over
them -- are :mod:`gpuppdp.dp.composition`'s (:func:`~gpuppdp.dp.composition.charge`,
:func:`~gpuppdp.dp.composition.compose`).

Every spend is atomic: a spend that would exceed the budget raises :class:`BudgetError`
before any noise is drawn, with the amount still available; a parallel group reserves its
cost as it grows (an open group is on the ledger), so spends inside and outside open groups
never together exceed the budget; a closed group refuses further spends.  The accountant is
thread-safe.  Spends are never refunded: once noise is drawn, the information is out.

**Across runs**, :meth:`BudgetAccountant.open_ledger` is the one transaction every spend goes
through: the ledger file (:mod:`gpuppdp.dp.ledger`, append-only and hash-chained) is opened
at its real path, locked (``fcntl.flock`` on the file itself, no lock file), read and
verified; each spend is checked against it and appended and fsync-ed *when it is charged*,
before its noise is drawn (an exception later in the run cannot lose it); the lock is
released when the block ends.  A missing ledger is created only on request
(``create=True``; ``--new-ledger`` on the command line), so a deleted ledger never silently
starts afresh.  :meth:`BudgetAccountant.load` is a read-only snapshot, and
:meth:`BudgetAccountant.save` refuses a stale snapshot (the file changed since it was loaded).
"""

from __future__ import annotations

import math
import numbers
import os
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

import numpy as np

from ..errors import InputError
from ..validation import check_epsilon, check_number, check_positive
from . import ledger as _file
from .accounting import ALPHAS, check_curve
from .composition import (NOTIONS, BudgetError, _group_cost, charge, charge_rdp, charge_zcdp,
                          compose)
from .ledger import LedgerError
from .randomness import NoCopies
from .sensitivity import Neighbouring

__all__ = ["BudgetAccountant", "LedgerError", "Spend", "ParallelGroup", "LEDGER_FORMAT"]

_RELATIVE_SLACK = 1e-9  # float round-off when many spends add up exactly to the budget
LEDGER_FORMAT = _file.LEDGER_FORMAT

_GRIDS: dict[tuple[float, ...], tuple[float, ...]] = {}  # one object per grid of orders


def _rdp_spend(epsilon, curve, orders, delta: float, relation: Neighbouring,
               budget: Neighbouring, **common) -> "Spend":
    """The validated RDP entry (the file's and :meth:`BudgetAccountant.spend`'s): a finite
    curve on ``orders``, and the (ε, δ) the release also satisfies, if any."""
    curve, orders = check_curve(curve, ALPHAS if orders is None else orders)
    if not np.all(np.isfinite(curve)):
        raise InputError("an RDP entry's curve must be finite (leave out the orders where "
                         "it is not)")
    charged_curve, charged_delta = charge_rdp(curve, orders, delta, relation, budget)
    charged_curve = charged_curve.copy()  # not the caller's array, and read-only
    charged_curve.flags.writeable = False
    charged = None
    if epsilon is not None:
        epsilon = check_epsilon("epsilon", epsilon)
        charged = charge(epsilon, delta, relation, budget)[0]
    return Spend(epsilon, composition="sequential",
                 parts=() if epsilon is None else (epsilon,), delta=delta,
                 part_deltas=(delta,), neighbouring=relation.value, charged=charged,
                 charged_delta=charged_delta, notion="rdp",
                 orders=_GRIDS.setdefault(tuple(orders.tolist()), tuple(orders.tolist())),
                 curve=tuple(curve.tolist()),
                 charged_curve=charged_curve, **common)


@dataclass(frozen=True)
class Spend:
    """One entry of the ledger.

    Attributes
    ----------
    epsilon : float or None
        What the entry cost in its own relation (for a parallel group: the largest part, or
        the two largest under replace-one neighbours); None for a zCDP entry and an RDP
        entry without one.
    label : str
    composition : {"sequential", "parallel"}
    parts : tuple of float
        The ε of each disjoint part (a single value for a sequential spend; none for zCDP).
    delta : float
        The entry's δ (composed like ε; for zCDP, the δ of approximate zCDP).
    part_deltas : tuple of float
        The δ of each part.
    neighbouring : str
        The neighbouring relation the entry's ε (or ρ) holds under.
    open : bool
        True while a parallel group can still grow (its cost is reserved all the same).
    charged, charged_delta : float
        ε (None where ``epsilon`` is) and δ charged to the budget (converted to the budget's
        relation).
    unit : str
        The unit of privacy: ``"row"``, or ``"person (COL, at most M rows)"`` for a release
        that bounded each person's rows (its ε is then person-level).
    seed : int or None
        The seed of a seeded (NOT private) release.
    group : str or None
        Identifies a parallel group across its ledger lines.
    notion : {"pure", "approx", "zcdp", "rdp"}
        The privacy notion (:data:`NOTIONS`); ledgers written before it read as pure
        (δ = 0) or approx.
    rho, charged_rho : float or None
        A zCDP entry's ρ in its own relation and charged to the budget.
    orders, curve : tuple of float
        An RDP entry's orders and its curve on them, in its own relation (empty for other
        notions).
    charged_curve : numpy.ndarray or None
        The curve charged to the budget (read-only; derived from ``curve``, so not compared).
    """

    epsilon: float | None
    label: str
    composition: str
    parts: tuple[float, ...]
    delta: float = 0.0
    part_deltas: tuple[float, ...] = field(default=())
    neighbouring: str = Neighbouring.ADD_REMOVE.value
    open: bool = False
    charged: float | None = None
    charged_delta: float | None = None
    unit: str = "row"
    seed: int | None = None
    group: str | None = None
    notion: str = "approx"
    rho: float | None = None
    charged_rho: float | None = None
    orders: tuple[float, ...] = ()
    curve: tuple[float, ...] = ()
    charged_curve: np.ndarray | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict:
        out = {"epsilon": self.epsilon, "delta": self.delta, "label": self.label,
               "composition": self.composition, "parts": list(self.parts),
               "part_deltas": list(self.part_deltas), "neighbouring": self.neighbouring,
               "charged": self.charged, "charged_delta": self.charged_delta,
               "unit": self.unit, "seed": self.seed, "group": self.group,
               "notion": self.notion, "rho": self.rho, "charged_rho": self.charged_rho}
        if self.notion == "rdp":  # the charged curve is derived again when read
            out.update(orders=list(self.orders), curve=list(self.curve))
        return out

    @classmethod
    def from_json(cls, item, budget: Neighbouring) -> "Spend":
        if not isinstance(item, dict):
            raise InputError(f"a ledger entry must be an object, got {item!r}")
        try:
            composition = item["composition"]
            if composition not in ("sequential", "parallel"):
                raise InputError(f"unknown composition {composition!r}")
            relation = Neighbouring.parse(item["neighbouring"])
            delta = check_number("ledger entry delta", item.get("delta", 0.0), 0.0, 1.0)
            seed = item.get("seed")
            if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
                raise InputError(f"ledger entry seed must be an integer, got {seed!r}")
            notion = item.get("notion", "pure" if delta == 0.0 else "approx")
            meta = dict(label=str(item.get("label", "")), unit=str(item.get("unit", "row")),
                        seed=seed, group=item.get("group"))
            common = dict(meta, composition=composition, delta=delta,
                          neighbouring=relation.value, notion=notion)
            if notion == "zcdp":
                if composition != "sequential":
                    raise InputError("a zCDP ledger entry must be sequential")
                rho = check_positive("ledger entry rho", item["rho"])
                charged_rho, charged_delta = charge_zcdp(rho, delta, relation, budget)
                return cls(epsilon=None, parts=(), part_deltas=(delta,), rho=rho,
                           charged_rho=charged_rho, charged_delta=charged_delta, **common)
            if notion == "rdp":
                if composition != "sequential":
                    raise InputError("an RDP ledger entry must be sequential")
                return _rdp_spend(item.get("epsilon"), item["curve"], item["orders"], delta,
                                  relation, budget, **meta)
            if notion not in NOTIONS:
                raise InputError(f"unknown privacy notion {notion!r} (one of {NOTIONS})")
            epsilon = check_epsilon("ledger entry epsilon", item["epsilon"])
            charged, charged_delta = charge(epsilon, delta, relation, budget)
            return cls(epsilon=epsilon,
                       parts=tuple(check_epsilon("ledger part epsilon", p)
                                   for p in item.get("parts", [epsilon])),
                       part_deltas=tuple(check_number("ledger part delta", d, 0.0, 1.0)
                                         for d in item.get("part_deltas", [])),
                       charged=charged, charged_delta=charged_delta, **common)
        except KeyError as exc:
            raise InputError(f"a ledger entry lacks {exc.args[0]!r}: {item!r}") from None


def _notion(delta: float) -> str:
    return "pure" if delta == 0.0 else "approx"



def _check_seed(seed) -> int | None:
    if seed is not None and (not isinstance(seed, numbers.Integral) or isinstance(seed, bool)):
        raise InputError(f"seed must be an integer or None, got {seed!r}")
    return None if seed is None else int(seed)


class BudgetAccountant(NoCopies):
    """A total privacy budget (ε, δ), kept in one neighbouring relation, and what has been
    spent from it.

    Parameters
    ----------
    epsilon : float
        The total ε budget (finite, > 0).
    delta : float, optional
        The total δ budget in ``[0, 1]``.  None (default): δ is recorded and summed but not
        limited.
    neighbouring : {"add-remove", "replace"}, default "add-remove"
        The relation the budget is kept in; entries of the other relation are converted
        (:mod:`gpuppdp.dp.composition`).

    Examples
    --------
    >>> acc = BudgetAccountant(1.0)
    >>> _ = acc.spend(0.25, label="age histogram")
    >>> with acc.parallel("per-class counts") as group:
    ...     for _ in range(3):
    ...         group.spend(0.5)
    >>> acc.spent, acc.remaining
    (0.75, 0.25)
    """

    _no_copy_reason = ("two copies would each spend the same budget; spend through one "
                       "accountant (or one ledger file, BudgetAccountant.open_ledger)")

    def __init__(self, epsilon: float, delta: float | None = None, *,
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE):
        self.total = check_epsilon("budget epsilon", epsilon)
        self.total_delta = None if delta is None else check_number("budget delta", delta, 0.0, 1.0)
        self.neighbouring = Neighbouring.parse(neighbouring)
        self._ledger: list[Spend] = []
        self._lock = threading.RLock()
        self._sink: Callable[[Spend], None] | None = None  # appends to an open ledger file
        self._origin: tuple[str, str, int] | None = None  # (real path, tip hash, entries)

    # -- state ------------------------------------------------------------------------------
    @property
    def composition(self) -> tuple[float, float, str]:
        """``(ε, δ, accounting)`` of everything charged so far: the tightest accounting
        (:func:`compose`; open groups included)."""
        with self._lock:
            return compose(self._ledger, self.total_delta)

    @property
    def spent(self) -> float:
        """ε charged so far (in the budget's relation; open groups included), by the
        tightest accounting (:attr:`composition`)."""
        return self.composition[0]

    @property
    def spent_delta(self) -> float:
        """δ of that accounting (the sum of the entries' δ, or the whole budget's δ when a
        conversion uses what is left of it)."""
        return self.composition[1]

    @property
    def remaining(self) -> float:
        """ε still available."""
        return max(0.0, self.total - self.spent)

    @property
    def remaining_delta(self) -> float | None:
        """δ still available (None when δ is not limited)."""
        if self.total_delta is None:
            return None
        return max(0.0, self.total_delta - self.spent_delta)

    @property
    def ledger(self) -> tuple[Spend, ...]:
        """Every spend, in order."""
        with self._lock:
            return tuple(self._ledger)

    # -- spending ---------------------------------------------------------------------------
    def _refuse_if_over(self, others: list[Spend], entry: Spend, label: str,
                        what: str) -> None:
        """:class:`BudgetError` unless the ledger ``others`` plus ``entry`` fits the budget."""
        eps, delta, _ = compose(others + [entry], self.total_delta)
        over_delta = self.total_delta is not None and \
            delta > self.total_delta * (1.0 + _RELATIVE_SLACK) + 1e-300
        if eps <= self.total * (1.0 + _RELATIVE_SLACK) and not over_delta:
            return
        where = f" for {label!r}" if label else ""
        before_eps, before_delta, _ = compose(others, self.total_delta)
        if math.isinf(eps) and not over_delta and delta < (self.total_delta or 0.0):
            raise BudgetError(
                f"cannot spend {what}{where}: the ledger's RDP curves would share no order, "
                "so no accounting applies (give the curve on the orders of the other RDP "
                "entries, by default gpuppdp.dp.accounting.ALPHAS)")
        if over_delta or math.isinf(eps):
            left = max(0.0, (self.total_delta or 0.0) - before_delta)
            raise BudgetError(
                f"cannot spend {what}{where}: the delta budget is {self.total_delta:g}, "
                f"{before_delta:g} already spent, only {left:g} remaining")
        left = max(0.0, self.total - before_eps)
        raise BudgetError(
            f"cannot spend {what}{where}: the budget is epsilon={self.total:g}, "
            f"{before_eps:g} already spent, only {left:g} remaining (with it the ledger "
            f"would cost epsilon={eps:g})")

    def _what(self, epsilon: float, charged: float, relation: Neighbouring,
              name: str = "epsilon") -> str:
        if charged == epsilon:
            return f"{name}={epsilon:g}"
        return (f"{name}={epsilon:g} ({relation.value} neighbours, charged {charged:g} to "
                f"this {self.neighbouring.value} budget)")

    def _entry(self, epsilon, rho, delta, neighbouring, label: str, unit: str = "row",
               seed: int | None = None, curve=None, orders=None) -> tuple[Spend, str]:
        """The validated sequential entry of a spend of ε, ρ or an RDP curve, and what it is
        called in a refusal."""
        delta = check_number("delta", delta, 0.0, 1.0)
        relation = self.neighbouring if neighbouring is None else Neighbouring.parse(neighbouring)
        if curve is not None:
            if rho is not None:
                raise InputError(f"give rho or an RDP curve, not both: got rho={rho!r}")
            entry = _rdp_spend(epsilon, curve, orders, delta, relation, self.neighbouring,
                               label=label, unit=str(unit), seed=seed)
            if entry.charged is None and not self.total_delta:
                raise BudgetError(
                    "an RDP spend without an epsilon needs a budget with delta > 0 to convert "
                    f"it to (epsilon, delta); this budget's delta is {self.total_delta}")
            top = max(entry.curve)
            return entry, (f"an RDP curve (largest {top:g}" + (
                ")" if entry.charged is None else f", epsilon={entry.epsilon:g})"))
        if orders is not None:
            raise InputError("orders apply to an RDP curve: give the curve too")
        if (epsilon is None) == (rho is None):
            raise InputError(f"give exactly one of epsilon and rho, got epsilon={epsilon!r}, "
                             f"rho={rho!r}")
        if rho is not None:
            rho = check_positive("rho", rho)
            if not self.total_delta:
                raise BudgetError(
                    f"a zCDP spend (rho={rho:g}) needs a budget with delta > 0 to convert "
                    f"it to (epsilon, delta); this budget's delta is {self.total_delta}")
            charged_rho, charged_delta = charge_zcdp(rho, delta, relation, self.neighbouring)
            entry = Spend(None, label, "sequential", (), delta, (delta,), relation.value,
                          charged_delta=charged_delta, unit=str(unit), seed=seed,
                          notion="zcdp", rho=rho, charged_rho=charged_rho)
            return entry, self._what(rho, charged_rho, relation, "rho")
        epsilon = check_epsilon("epsilon", epsilon)
        charged, charged_delta = charge(epsilon, delta, relation, self.neighbouring)
        entry = Spend(epsilon, label, "sequential", (epsilon,), delta, (delta,),
                      relation.value, charged=charged, charged_delta=charged_delta,
                      unit=str(unit), seed=seed, notion=_notion(delta))
        return entry, self._what(epsilon, charged, relation)

    def check(self, epsilon: float | None = None, *, rho: float | None = None,
              label: str = "", delta: float = 0.0,
              neighbouring: Neighbouring | str | None = None, curve=None,
              orders=None) -> float | None:
        """Raise :class:`BudgetError` if ``(epsilon, delta)`` (or ``(rho, delta)``, zCDP; or
        ``curve``, RDP) cannot be spent now; return ``epsilon`` (or ``rho``) validated (None
        for a curve without an epsilon).  (Only a snapshot: :meth:`spend` checks again,
        atomically.)"""
        entry, what = self._entry(epsilon, rho, delta, neighbouring, label, curve=curve,
                                  orders=orders)
        with self._lock:
            self._refuse_if_over(self._ledger, entry, label, what)
        return entry.rho if entry.rho is not None else entry.epsilon

    def spend(self, epsilon: float | None = None, *, rho: float | None = None,
              label: str = "", delta: float = 0.0,
              neighbouring: Neighbouring | str | None = None, unit: str = "row",
              seed: int | None = None, curve=None, orders=None) -> Spend:
        """Spend ``(epsilon, delta)`` (sequential composition), or ``rho`` of zCDP with the
        ``delta`` of approximate zCDP, or an RDP ``curve`` on ``orders`` (default
        :data:`~gpuppdp.dp.accounting.ALPHAS`) with a ``delta`` of the same kind and the
        ``epsilon`` the release also satisfies, if any; or raise :class:`BudgetError`.  The
        check and the ledger entry (on an open ledger file: the line appended and fsync-ed)
        are one atomic step.

        ``neighbouring`` is the relation ``epsilon`` (``rho``, ``curve``) holds under
        (default: the budget's); ``unit`` the unit of privacy; ``seed`` the seed of a seeded
        release (recorded).  A zCDP spend, and an RDP spend without an ``epsilon``, need a
        budget with δ > 0.

        >>> from gpuppdp.dp.accounting import laplace_curve
        >>> acc = BudgetAccountant(1.0, delta=1e-6)
        >>> for _ in range(100):
        ...     _ = acc.spend(0.01, curve=laplace_curve(0.01), label="a Laplace release")
        >>> round(acc.spent, 4), acc.composition[2]  # basic composition: 1
        (0.4213, 'rdp')
        """
        entry, what = self._entry(epsilon, rho, delta, neighbouring, label, unit,
                                  _check_seed(seed), curve, orders)
        with self._lock:
            self._refuse_if_over(self._ledger, entry, label, what)
            self._record(entry)
            self._ledger.append(entry)
            return entry

    def _record(self, entry: Spend) -> None:
        """Write ``entry`` to the open ledger file, if any (under the lock)."""
        if self._sink is not None:
            self._sink(entry)

    @contextmanager
    def parallel(self, label: str = "",
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE
                 ) -> Iterator["ParallelGroup"]:
        """Spend on disjoint partitions of the data.

        The group costs the largest part under add/remove-one neighbours and the sum of the
        two largest under replace-one (a replaced record leaves one part and enters
        another), charged in the budget's relation.  Each ``group.spend(ε_i)`` is checked at
        once and reserves the group's new cost on the ledger in the same atomic step (so an
        over-budget part fails before its noise is drawn, and nothing spent elsewhere
        meanwhile can overlap it).  Leaving the block closes the group -- also when the block
        raises, since parts released before the error have used their budget; a closed group
        refuses spends.

        Yields
        ------
        ParallelGroup
        """
        group = ParallelGroup(self, label, Neighbouring.parse(neighbouring))
        try:
            yield group
        finally:
            group._close()

    # -- the ledger file ----------------------------------------------------------------------
    def _header(self) -> dict:
        return {"epsilon": self.total, "delta": self.total_delta,
                "neighbouring": self.neighbouring.value}

    @classmethod
    def _from_lines(cls, header: dict, lines: list[dict], source: str) -> "BudgetAccountant":
        try:
            acc = cls(header["epsilon"], header.get("delta"),
                      neighbouring=header.get("neighbouring", "add-remove"))
            entries: list[Spend] = []
            groups: dict[str, int] = {}
            for item in lines:
                entry = Spend.from_json(item, acc.neighbouring)
                if entry.group is not None and entry.group in groups:
                    entries[groups[entry.group]] = entry  # a group's later state
                    continue
                if entry.group is not None:
                    groups[entry.group] = len(entries)
                entries.append(entry)
            acc._ledger = entries
        except (KeyError, ValueError) as exc:
            raise InputError(f"{source} is not a valid budget ledger: {exc}") from None
        if acc.spent > acc.total * (1.0 + _RELATIVE_SLACK):
            raise InputError(f"{source} records more than its budget: "
                             f"{acc.spent:g} > {acc.total:g}")
        return acc

    @classmethod
    def load(cls, path: str | os.PathLike) -> "BudgetAccountant":
        """A read-only snapshot of a ledger file (read under a shared lock, verified).

        Spending on it and then :meth:`save` works only while nobody else has written to the
        file (a stale save is refused); a run should use :meth:`open_ledger`.
        """
        with _file.locked(path, shared=True) as (fd, real):
            acc, tip, count = cls._read_tip(fd, real)
        if acc is None:
            raise InputError(f"budget file {real} is empty: not a budget ledger")
        acc._origin = (real, tip, len(acc._ledger))
        return acc

    @classmethod
    def _read_tip(cls, fd: int, real: str):
        source = f"budget file {real}"
        header, lines = _file.read(fd, source)
        if header is None:
            return None, _file.GENESIS, 0
        acc = cls._from_lines(header, lines, source)
        tip = _tip(header, lines)
        return acc, tip, len(lines)

    def save(self, path: str | os.PathLike) -> None:
        """Write this accountant's new spends to the ledger file ``path``.

        A missing (or empty) file is created with the whole ledger.  An existing file takes
        only an accountant that was :meth:`load`-ed from it and has not gone stale: if the
        file changed since (another run spent), :class:`BudgetError` -- saving would lose
        that run's spends.
        """
        with self._lock, _file.locked(path, create=True) as (fd, real):
            if any(s.open for s in self._ledger):
                raise BudgetError("cannot save a ledger while a parallel group is open")
            acc, tip, _ = self._read_tip(fd, real)
            if acc is None:
                tip = _new_file(fd, real, self._header())
                start = 0
            else:
                if self._origin is None or self._origin[0] != real:
                    raise BudgetError(f"{real} is an existing ledger that this accountant was "
                                      "not loaded from: saving would merge two ledgers")
                if self._origin[1] != tip:
                    raise BudgetError(
                        f"{real} changed since this accountant was loaded (another run spent): "
                        "saving the stale copy would lose those spends; load it again, or "
                        "spend through BudgetAccountant.open_ledger")
                start = self._origin[2]
            for entry in self._ledger[start:]:
                tip = _file.append(fd, entry.to_json(), tip)
            self._origin = (real, tip, len(self._ledger))

    @classmethod
    @contextmanager
    def open_ledger(cls, path: str | os.PathLike, *, epsilon: float | None = None,
                    delta: float | None = None,
                    neighbouring: Neighbouring | str | None = None,
                    create: bool = False) -> Iterator["BudgetAccountant"]:
        """The ledger in ``path`` for one run, as one transaction: locked for the whole
        block, verified, and every spend appended and fsync-ed when it is charged (before
        its noise is drawn, so an exception later in the block does not lose it).

        ``create=True`` starts a missing ledger with the budget ``epsilon`` (``delta``,
        ``neighbouring``); without it a missing ledger is an error (a deleted ledger must
        not silently start afresh).  An existing ledger keeps its own budget: an
        ``epsilon``, ``delta`` or ``neighbouring`` that differs from it is refused.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "ledger.json")
        >>> with BudgetAccountant.open_ledger(path, epsilon=1.0, create=True) as acc:
        ...     _ = acc.spend(0.4, label="first release")
        >>> BudgetAccountant.load(path).remaining
        0.6
        """
        if epsilon is not None:
            epsilon = check_epsilon("budget epsilon", epsilon)
        if delta is not None:
            delta = check_number("budget delta", delta, 0.0, 1.0)
        if neighbouring is not None:
            neighbouring = Neighbouring.parse(neighbouring)
        real = os.path.realpath(os.fspath(path))
        if not os.path.exists(real):
            if not create:
                raise InputError(
                    f"budget file {real} does not exist; to start a new ledger pass "
                    "create=True (--new-ledger) with its total budget (a missing ledger is "
                    "never started implicitly: a deleted ledger must not start afresh)")
            if epsilon is None:
                raise InputError(f"budget file {real} does not exist; give the total budget "
                                 "to start it")
        with _file.locked(real, create=create) as (fd, real):
            acc, tip, _ = cls._read_tip(fd, real)
            if acc is None:
                if not create or epsilon is None:
                    raise InputError(f"budget file {real} is empty: not a budget ledger")
                acc = cls(epsilon, delta, neighbouring=neighbouring or Neighbouring.ADD_REMOVE)
                tip = _new_file(fd, real, acc._header())
            else:
                acc._check_same_budget(real, epsilon, delta, neighbouring)
            state = {"tip": tip}

            def sink(entry: Spend) -> None:
                state["tip"] = _file.append(fd, entry.to_json(), state["tip"])

            acc._sink = sink
            try:
                yield acc
            finally:
                with acc._lock:
                    acc._sink = None
                    acc._origin = (real, state["tip"], len(acc._ledger))

    def _check_same_budget(self, real: str, epsilon, delta, neighbouring) -> None:
        if epsilon is not None and epsilon != self.total:
            raise InputError(
                f"{real} holds a budget of epsilon={self.total:g}, not {epsilon:g}: a "
                "ledger's budget cannot change (omit the budget or use a new file)")
        if delta is not None and delta != self.total_delta:
            raise InputError(f"{real} holds a delta budget of {self.total_delta}, "
                             f"not {delta:g}: a ledger's budget cannot change")
        if neighbouring is not None and neighbouring is not self.neighbouring:
            raise InputError(f"{real} keeps its budget in {self.neighbouring.value} "
                             f"neighbours, not {neighbouring.value}: a ledger's relation "
                             "cannot change (entries of the other relation are converted)")


    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"BudgetAccountant(total={self.total:g}, spent={self.spent:g}, "
                f"remaining={self.remaining:g}, {self.neighbouring.value})")


def _tip(header: dict, lines: list[dict]) -> str:
    return (lines[-1] if lines else header)["hash"]


def _new_file(fd: int, real: str, header: dict) -> str:
    """Write the header of a new ledger (and make the new file durable); its hash."""
    line = _file.header_line(header)
    body = {k: v for k, v in line.items() if k not in ("hash", "prev")}
    tip = _file.append(fd, body, _file.GENESIS)
    folder = os.path.dirname(real)
    try:  # the new directory entry (POSIX)
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - platforms without directory fsync
        pass
    return tip


def _position(ledger: list, entry: Spend) -> int:
    """Index of ``entry`` itself (equal entries of other groups do not count)."""
    return next(i for i, s in enumerate(ledger) if s is entry)


class ParallelGroup:
    """The parts of one parallel composition (see :meth:`BudgetAccountant.parallel`)."""

    def __init__(self, accountant: BudgetAccountant, label: str, neighbouring: Neighbouring):
        self._accountant = accountant
        self._label = label
        self.neighbouring = neighbouring
        self.parts: list[float] = []
        self.part_deltas: list[float] = []
        self.closed = False
        self._entry: Spend | None = None  # the group's reservation on the ledger
        self._id = secrets.token_hex(8)

    @property
    def epsilon(self) -> float:
        """The group's current cost (in its own relation)."""
        return _group_cost(self.parts, self.neighbouring)

    def spend(self, epsilon: float, delta: float = 0.0) -> None:
        """Spend ``epsilon`` (and ``delta``) on one more disjoint part, reserving the group's
        new cost on the ledger; :class:`BudgetError` if that would exceed the budget or if
        the group is closed."""
        epsilon = check_epsilon("epsilon", epsilon)
        delta = check_number("delta", delta, 0.0, 1.0)
        acc = self._accountant
        with acc._lock:
            if self.closed:
                what = f" {self._label!r}" if self._label else ""
                raise BudgetError(f"the parallel group{what} is closed: spend in a new "
                                  "group or sequentially")
            parts = self.parts + [epsilon]
            deltas = self.part_deltas + [delta]
            cost = _group_cost(parts, self.neighbouring)
            cost_delta = _group_cost(deltas, self.neighbouring)
            charged, charged_delta = charge(cost, cost_delta, self.neighbouring,
                                            acc.neighbouring)
            entry = Spend(cost, self._label, "parallel", tuple(parts), cost_delta,
                          tuple(deltas), self.neighbouring.value, open=True, charged=charged,
                          charged_delta=charged_delta, group=self._id,
                          notion=_notion(cost_delta))
            acc._refuse_if_over([s for s in acc._ledger if s is not self._entry], entry,
                                self._label,
                                f"epsilon={epsilon:g} (the group would cost {charged:g})")
            acc._record(entry)
            if self._entry is None:
                acc._ledger.append(entry)
            else:
                acc._ledger[_position(acc._ledger, self._entry)] = entry
            self._entry = entry
            self.parts, self.part_deltas = parts, deltas

    def _close(self) -> None:
        acc = self._accountant
        with acc._lock:
            if self.closed:
                return
            self.closed = True
            if self._entry is not None:
                closed = replace(self._entry, open=False)
                acc._ledger[_position(acc._ledger, self._entry)] = closed
                self._entry = closed
