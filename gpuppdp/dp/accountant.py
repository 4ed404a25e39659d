"""Privacy budget accounting: sequential and parallel composition, δ, a ledger file.

* **Sequential composition**: releases computed on the same data add up,
  ``(Σ ε_i, Σ δ_i)`` (Dwork & Roth 2014, Theorem 3.16).
* **Parallel composition**: releases computed on *disjoint* parts of the data (histogram
  bins, equivalence classes, any partition fixed independently of the data).  What a group
  costs depends on the neighbouring relation (:class:`~gpuppdp.dp.sensitivity.Neighbouring`):

  - add/remove-one: one person is in at most one part, the group costs ``max ε_i``
    (McSherry 2009, Theorem 4);
  - replace-one: the replaced record can leave one part and enter another, so two parts
    change: the group costs the sum of the two largest ``ε_i`` (and of the two largest
    ``δ_i``).

  The caller vouches for disjointness by spending inside :meth:`BudgetAccountant.parallel`.

Every spend is atomic against the ledger: a spend that would exceed the budget raises
:class:`BudgetError` before any noise is drawn, with the amount still available; a parallel
group reserves its cost on the ledger as it grows (an open group is on the ledger), so spends
inside and outside open groups can never together exceed the budget; a closed group refuses
further spends.  The accountant is thread-safe.  Spends are never refunded: once noise is
drawn, the information is out.

**Across runs**, :meth:`BudgetAccountant.open_ledger` keeps the ledger in a JSON file, locked
against concurrent runs (``fcntl.flock`` on ``PATH.lock``) and replaced atomically (a temporary
file in the same folder, then :func:`os.replace`) only when the caller's block succeeds.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
   Found. Trends Theor. Comput. Sci. 9(3-4), 2014, Theorem 3.16.
.. [2] F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Iterator

from ..errors import InputError
from ..validation import check_epsilon, check_number
from .sensitivity import Neighbouring

try:  # POSIX: advisory locks between processes
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock
    fcntl = None

__all__ = ["BudgetAccountant", "BudgetError", "Spend", "ParallelGroup", "LEDGER_VERSION"]

_RELATIVE_SLACK = 1e-9  # float round-off when many spends add up exactly to the budget
LEDGER_VERSION = 1


class BudgetError(InputError):
    """A spend would exceed the privacy budget (or goes to a closed parallel group)."""


@dataclass(frozen=True)
class Spend:
    """One entry of the ledger.

    Attributes
    ----------
    epsilon : float
        What the entry cost (for a parallel group: the largest part, or the two largest
        under replace-one neighbours).
    label : str
    composition : {"sequential", "parallel"}
    parts : tuple of float
        The ε of each disjoint part (a single value for a sequential spend).
    delta : float
        The entry's δ (composed like ε).
    part_deltas : tuple of float
        The δ of each part.
    neighbouring : str or None
        The neighbouring relation a parallel group was composed under.
    open : bool
        True while a parallel group can still grow (its cost is reserved all the same).
    """

    epsilon: float
    label: str
    composition: str
    parts: tuple[float, ...]
    delta: float = 0.0
    part_deltas: tuple[float, ...] = field(default=())
    neighbouring: str | None = None
    open: bool = False

    def to_json(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "label": self.label,
                "composition": self.composition, "parts": list(self.parts),
                "part_deltas": list(self.part_deltas), "neighbouring": self.neighbouring}

    @classmethod
    def from_json(cls, item) -> "Spend":
        if not isinstance(item, dict):
            raise InputError(f"a ledger entry must be an object, got {item!r}")
        try:
            composition = item["composition"]
            if composition not in ("sequential", "parallel"):
                raise InputError(f"unknown composition {composition!r}")
            return cls(epsilon=check_epsilon("ledger entry epsilon", item["epsilon"]),
                       label=str(item.get("label", "")), composition=composition,
                       parts=tuple(check_epsilon("ledger part epsilon", p)
                                   for p in item.get("parts", [item["epsilon"]])),
                       delta=check_number("ledger entry delta", item.get("delta", 0.0), 0.0, 1.0),
                       part_deltas=tuple(check_number("ledger part delta", d, 0.0, 1.0)
                                         for d in item.get("part_deltas", [])),
                       neighbouring=item.get("neighbouring"))
        except KeyError as exc:
            raise InputError(f"a ledger entry lacks {exc.args[0]!r}: {item!r}") from None


def _group_cost(values, neighbouring: Neighbouring) -> float:
    """Cost of parallel parts: the largest, or the two largest under replace-one."""
    if not values:
        return 0.0
    if neighbouring is Neighbouring.ADD_REMOVE:
        return max(values)
    top = sorted(values, reverse=True)[:2]
    return math.fsum(top)


class BudgetAccountant:
    """A total privacy budget (ε, δ) and what has been spent from it.

    Parameters
    ----------
    epsilon : float
        The total ε budget (finite, > 0).
    delta : float, optional
        The total δ budget in ``[0, 1]``.  None (default): δ is recorded and summed but not
        limited.

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

    def __init__(self, epsilon: float, delta: float | None = None):
        self.total = check_epsilon("budget epsilon", epsilon)
        self.total_delta = None if delta is None else check_number("budget delta", delta, 0.0, 1.0)
        self._ledger: list[Spend] = []
        self._lock = threading.RLock()

    # -- state ------------------------------------------------------------------------------
    @property
    def spent(self) -> float:
        """ε spent so far (sequential composition of the ledger, open groups included)."""
        with self._lock:
            return math.fsum(s.epsilon for s in self._ledger)

    @property
    def spent_delta(self) -> float:
        """δ spent so far."""
        with self._lock:
            return math.fsum(s.delta for s in self._ledger)

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
    def _refuse_if_over(self, epsilon: float, delta: float, label: str,
                        others_eps: float, others_delta: float, what: str) -> None:
        where = f" for {label!r}" if label else ""
        if others_eps + epsilon > self.total * (1.0 + _RELATIVE_SLACK):
            left = max(0.0, self.total - others_eps)
            raise BudgetError(
                f"cannot spend epsilon={what}{where}: the budget is epsilon={self.total:g}, "
                f"{others_eps:g} already spent, only {left:g} remaining")
        if self.total_delta is not None and \
                others_delta + delta > self.total_delta * (1.0 + _RELATIVE_SLACK) + 1e-300:
            left = max(0.0, self.total_delta - others_delta)
            raise BudgetError(
                f"cannot spend delta={delta:g}{where}: the delta budget is "
                f"{self.total_delta:g}, {others_delta:g} already spent, only {left:g} "
                "remaining")

    def check(self, epsilon: float, *, label: str = "", delta: float = 0.0) -> float:
        """Raise :class:`BudgetError` if ``(epsilon, delta)`` cannot be spent now; return
        ``epsilon`` validated.  (Only a snapshot: :meth:`spend` checks again, atomically.)"""
        epsilon = check_epsilon("epsilon", epsilon)
        delta = check_number("delta", delta, 0.0, 1.0)
        with self._lock:
            self._refuse_if_over(epsilon, delta, label, self.spent, self.spent_delta,
                                 f"{epsilon:g}")
        return epsilon

    def spend(self, epsilon: float, *, label: str = "", delta: float = 0.0) -> Spend:
        """Spend ``(epsilon, delta)`` (sequential composition) or raise :class:`BudgetError`;
        the check and the ledger entry are one atomic step."""
        epsilon = check_epsilon("epsilon", epsilon)
        delta = check_number("delta", delta, 0.0, 1.0)
        with self._lock:
            self._refuse_if_over(epsilon, delta, label, self.spent, self.spent_delta,
                                 f"{epsilon:g}")
            entry = Spend(epsilon, label, "sequential", (epsilon,), delta, (delta,))
            self._ledger.append(entry)
            return entry

    @contextmanager
    def parallel(self, label: str = "",
                 neighbouring: Neighbouring | str = Neighbouring.ADD_REMOVE
                 ) -> Iterator["ParallelGroup"]:
        """Spend on disjoint partitions of the data.

        The group costs the largest part under add/remove-one neighbours and the sum of the
        two largest under replace-one (a replaced record leaves one part and enters
        another).  Each ``group.spend(ε_i)`` is checked at once and reserves the group's new
        cost on the ledger in the same atomic step (so an over-budget part fails before its
        noise is drawn, and nothing spent elsewhere meanwhile can overlap it).  Leaving the
        block closes the group -- also when the block raises, since parts released before
        the error have used their budget; a closed group refuses spends.

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
    def to_json(self) -> dict:
        with self._lock:
            if any(s.open for s in self._ledger):
                raise BudgetError("cannot save a ledger while a parallel group is open")
            return {"version": LEDGER_VERSION, "epsilon": self.total,
                    "delta": self.total_delta,
                    "ledger": [s.to_json() for s in self._ledger]}

    @classmethod
    def from_json(cls, data, *, source: str = "ledger") -> "BudgetAccountant":
        if not isinstance(data, dict) or data.get("version") != LEDGER_VERSION:
            raise InputError(f"{source} is not a gpuppdp budget ledger (version "
                             f"{LEDGER_VERSION})")
        try:
            acc = cls(data["epsilon"], data.get("delta"))
            entries = data.get("ledger", [])
            if not isinstance(entries, list):
                raise InputError("'ledger' must be a list")
            acc._ledger = [Spend.from_json(item) for item in entries]
        except (KeyError, ValueError) as exc:
            raise InputError(f"{source} is not a valid budget ledger: {exc}") from None
        if acc.spent > acc.total * (1.0 + _RELATIVE_SLACK):
            raise InputError(f"{source} records more than its budget: "
                             f"{acc.spent:g} > {acc.total:g}")
        return acc

    @classmethod
    def load(cls, path: str | os.PathLike) -> "BudgetAccountant":
        """Read a ledger file (under a shared lock)."""
        path = os.fspath(path)
        with _file_lock(path, shared=True):
            return cls._read(path)

    def save(self, path: str | os.PathLike) -> None:
        """Write the ledger to ``path`` atomically (under the exclusive lock)."""
        path = os.fspath(path)
        with _file_lock(path, shared=False):
            self._write(path)

    @classmethod
    @contextmanager
    def open_ledger(cls, path: str | os.PathLike, *, epsilon: float | None = None,
                    delta: float | None = None) -> Iterator["BudgetAccountant"]:
        """The ledger in ``path`` for one run: locked for the whole block, saved atomically
        when the block succeeds, left untouched when it raises.

        A missing file starts a new ledger with the budget ``epsilon`` (and ``delta``); an
        existing one keeps its own budget, and an ``epsilon`` that differs from it is refused
        (a ledger's budget never changes).

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "ledger.json")
        >>> with BudgetAccountant.open_ledger(path, epsilon=1.0) as acc:
        ...     _ = acc.spend(0.4, label="first release")
        >>> BudgetAccountant.load(path).remaining
        0.6
        """
        path = os.fspath(path)
        with _file_lock(path, shared=False):
            if os.path.exists(path):
                acc = cls._read(path)
                if epsilon is not None and check_epsilon("budget epsilon", epsilon) != acc.total:
                    raise InputError(
                        f"{path} holds a budget of epsilon={acc.total:g}, not {epsilon:g}: a "
                        "ledger's budget cannot change (omit the budget or use a new file)")
                if delta is not None and \
                        check_number("budget delta", delta, 0.0, 1.0) != acc.total_delta:
                    raise InputError(f"{path} holds a delta budget of {acc.total_delta}, "
                                     f"not {delta:g}: a ledger's budget cannot change")
            else:
                if epsilon is None:
                    raise InputError(f"budget file {path} does not exist; give the total "
                                     "budget to start it")
                acc = cls(epsilon, delta)
            yield acc
            acc._write(path)

    @classmethod
    def _read(cls, path: str) -> "BudgetAccountant":
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise FileNotFoundError(f"budget file not found: {path}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"budget file {path} is not valid JSON: {exc}") from None
        return cls.from_json(data, source=f"budget file {path}")

    def _write(self, path: str) -> None:
        text = json.dumps(self.to_json(), indent=2) + "\n"
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                   suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):  # make the rename durable (POSIX)
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (f"BudgetAccountant(total={self.total:g}, spent={self.spent:g}, "
                f"remaining={self.remaining:g})")


@contextmanager
def _file_lock(path: str, *, shared: bool):
    """An advisory lock on ``path + ".lock"`` (never deleted: removing lock files races)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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

    @property
    def epsilon(self) -> float:
        """The group's current cost."""
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
            others = [s for s in acc._ledger if s is not self._entry]
            acc._refuse_if_over(cost, cost_delta, self._label,
                                math.fsum(s.epsilon for s in others),
                                math.fsum(s.delta for s in others),
                                f"{epsilon:g} (the group would cost {cost:g})")
            entry = Spend(cost, self._label, "parallel", tuple(parts), cost_delta,
                          tuple(deltas), self.neighbouring.value, open=True)
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
