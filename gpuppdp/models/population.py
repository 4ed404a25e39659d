"""Privacy models judged against a population table: k-map and delta-presence.

The table being anonymized is a sample (ARX's *research subset*) of a population table given to
the model.  For every lattice node, the population's frequency set is rolled up to the node's
levels with the engine's own kernel, and each class of the sample is matched with the
population records sharing its generalized QID values.

* :class:`KMap` -- k-map (Sweeney 2002; El Emam & Dankar 2008): every released class matches at
  least ``k`` population records.
* :class:`DeltaPresence` -- delta-presence (Nergiz, Atzori & Clifton 2007): for every released
  class ``E``, ``delta_min <= |sample & E| / |population & E| <= delta_max``.

A population class holding no sample record is not released, so suppression cannot change it
and it is not judged (as in ARX, where such classes add nothing to the suppressed count).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import kernels
from ..core.classes import Classes
from ..core.codes import encode_column
from ..engine.encoding import EncodedTable
from ..errors import InputError, InputTypeError
from ..kernels.groupby import segment_ids
from ..validation import check_int, check_number, format_values, plain_number
from .base import CompiledCheck, PrivacyModel, Requirement

__all__ = ["KMap", "DeltaPresence"]


class _PopulationModel(PrivacyModel):
    """A model comparing each class of the sample with the population (see module docstring).

    ``population`` is a DataFrame holding (at least) the QID columns, with values from the same
    hierarchies; it must contain the sample: no QID combination may occur more often in the
    sample than in the population.
    """

    _encoded = None

    @property
    def requires(self) -> Requirement:
        return super().requires | Requirement.POPULATION

    def __init__(self, population):
        if not isinstance(population, pd.DataFrame):
            raise InputTypeError(f"population must be a pandas DataFrame, got "
                            f"{type(population).__name__}")
        if len(population) == 0:
            raise InputError("population: the table is empty (0 rows)")
        self.population = population

    def bind(self, encoded: EncodedTable) -> "_PopulationModel":
        if encoded is self._encoded:
            return self
        missing = [c for c in encoded.qi_names if c not in self.population.columns]
        if missing:
            raise InputError(f"{type(self).__name__}: the population lacks quasi-identifier "
                             f"column(s) {format_values(missing)}")
        be = encoded.backend
        codes = []
        for name, h in zip(encoded.qi_names, encoded.hierarchies):
            if self.population[name].isna().any():
                raise InputError(f"population column {name!r} has missing values")
            leaf, _ = encode_column(self.population[name], domain=h.leaf_domain,
                                    name=f"population column {name!r}")
            codes.append(be.asarray(leaf))
        population = EncodedTable(be, list(encoded.qi_names), list(encoded.hierarchies), codes,
                                  len(self.population))
        self._bottom = population.frequency_set()
        self._check_contains(encoded)
        self.backend = be
        self._encoded = encoded
        return self

    def _check_contains(self, encoded: EncodedTable) -> None:
        """Refuse a sample with more records of a QID combination than the population."""
        be, xp = encoded.backend, encoded.backend.xp
        sample, pop = encoded.frequency_set(), self._bottom
        group_s, group_p, n_groups = kernels.common_groups(
            be, xp.zeros(sample.codes.shape[0], dtype=xp.int64), sample.codes,
            xp.zeros(pop.codes.shape[0], dtype=xp.int64), pop.codes)
        in_sample = xp.bincount(group_s, weights=sample.count.astype(xp.float64),
                                minlength=n_groups)
        in_population = xp.bincount(group_p, weights=pop.count.astype(xp.float64),
                                    minlength=n_groups)
        over = be.to_host(in_sample > in_population)
        if over.any():
            entries = over[be.to_host(group_s)]
            first_rows = be.to_host(sample.first)[entries]
            at = int(np.argmin(first_rows))
            codes = be.to_host(sample.codes)[entries][at]
            values = {n: h.leaves[int(c)]
                      for n, h, c in zip(encoded.qi_names, encoded.hierarchies, codes)}
            records = int(be.to_host(sample.count)[entries].sum())
            raise InputError(
                f"{type(self).__name__}: the table is not a sample of the population: "
                f"{records} record(s) have QID values that occur more often than in "
                f"the population (first at row {int(first_rows[at])}: {values})")

    def _compiled(self, kind: str, numbers: dict) -> CompiledCheck:
        """The compiled check of ``kind`` with ``numbers`` and the population's frequency set at
        the leaves (the arrays ``population_codes`` and ``population_count``)."""
        if self._encoded is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        be = self.backend
        return CompiledCheck(kind, None, numbers,
                             {"population_codes": be.to_host(self._bottom.codes),
                              "population_count": be.to_host(self._bottom.count)})

    def population_sizes(self, classes: Classes):
        """Device int64 (C,): population records sharing each class's generalized QIDs
        (computed once per batch for models given the same population table)."""
        if self._encoded is None:
            raise RuntimeError(f"{self!r} is not bound to a table: call model.bind(encoded) "
                               "first (the Anonymizer and the Evaluator do)")
        if classes.levels is None:
            raise ValueError(f"{self!r} needs the classes' node levels")
        key = ("population", id(self.population))
        hit = classes._cache.get(key)
        if hit is None:
            hit = classes._cache[key] = self._population_sizes(classes)
        return hit

    def _population_sizes(self, classes: Classes):
        be, xp, enc = self.backend, self.backend.xp, self._encoded
        assert enc is not None  # (population_sizes checked that the model is bound)
        levels = np.asarray(classes.levels, dtype=np.int64)
        n_nodes, q = levels.shape
        maps, off = enc.level_maps()
        pop = self._bottom
        entries = pop.codes.shape[0]
        codes, _, count, _, ptr, _ = kernels.rollup(
            be, pop.codes, pop.sens, pop.count, pop.first, np.zeros(n_nodes, dtype=np.int64),
            np.full(n_nodes, entries, dtype=np.int64), off[np.arange(q)[None, :], 0, levels],
            maps, enc.node_radix(levels))
        node = segment_ids(xp, ptr, codes.shape[0])
        group_c, group_p, n_groups = kernels.common_groups(be, classes.node, classes.codes,
                                                           node, codes)
        per_group = xp.bincount(group_p, weights=count.astype(xp.float64), minlength=n_groups)
        return per_group[group_c].astype(xp.int64)


class KMap(_PopulationModel):
    """k-map (Sweeney 2002; El Emam & Dankar 2008): every released class matches at least
    ``k`` records of the population.  Monotonic with generalization and with suppression
    (merging classes only adds population records)."""

    def __init__(self, k: int, *, population):
        super().__init__(population)
        self.k = check_int("k", k, 1)

    compiled_kind = "k-map"

    def class_fails(self, classes: Classes):
        return self.population_sizes(classes) < self.k

    def compiled_check(self) -> CompiledCheck:
        return self._compiled("k-map", {"k": self.k})

    def describe(self) -> dict:
        return {"model": "k-map", "k": self.k, "population_rows": len(self.population)}

    def __repr__(self) -> str:
        return f"KMap(k={self.k}, population={len(self.population)} rows)"


class DeltaPresence(_PopulationModel):
    """delta-presence (Nergiz, Atzori & Clifton 2007): the probability that a population record
    of a released class is in the sample, ``|sample & E| / |population & E|``, lies in
    ``[delta_min, delta_max]``.  Monotonic with generalization (a merge of classes in the
    interval stays in it), not with suppression (a suppressed class may fail once merged with
    others and take their records with it)."""

    monotonic_with_suppression = False

    def __init__(self, delta_min: float, delta_max: float, *, population):
        super().__init__(population)
        self.delta_min = check_number("delta_min", delta_min, 0.0, 1.0)
        self.delta_max = check_number("delta_max", delta_max, 0.0, 1.0)
        if self.delta_min > self.delta_max:
            raise InputError(f"delta_min must be at most delta_max, got {delta_min!r} > "
                             f"{delta_max!r}")

    def deltas(self, classes: Classes):
        """Device float64 (C,): each class's share of its population records in the sample."""
        xp = classes.xp
        return classes.size.astype(xp.float64) / self.population_sizes(classes).astype(xp.float64)

    compiled_kind = "delta-presence"

    def class_fails(self, classes: Classes):
        delta = self.deltas(classes)
        return (delta < self.delta_min) | (delta > self.delta_max)

    def compiled_check(self) -> CompiledCheck:
        return self._compiled("delta-presence", {"low": self.delta_min, "high": self.delta_max})

    def describe(self) -> dict:
        return {"model": "delta-presence", "delta_min": plain_number(self.delta_min),
                "delta_max": plain_number(self.delta_max), "population_rows": len(self.population)}

    def __repr__(self) -> str:
        return (f"DeltaPresence(delta_min={plain_number(self.delta_min)}, "
                f"delta_max={plain_number(self.delta_max)}, "
                f"population={len(self.population)} rows)")
